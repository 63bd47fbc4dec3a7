/*
 * bench_run.c - the time and peak memory of one command, to the
 * microsecond where /usr/bin/time gives hundredths:
 *
 *   bench_run OUT COMMAND [ARG...]
 *
 * Runs COMMAND with bench_run's standard streams and writes to OUT one
 * line "wall=S cpu=C user=U sys=Y maxrss_kib=K": wall-clock seconds
 * (CLOCK_MONOTONIC, from before the fork to after the wait), CPU seconds
 * (user + system of the command and what it waited for, from
 * getrusage's RUSAGE_CHILDREN) and its peak resident set in KiB.  A
 * score of 1,000,000 cases takes about 0.3 s: hundredths would round
 * its rate by 3 %.  Exit status: the command's (128 + N when signal N
 * ended it), or 2 with a diagnostic when it could not be run or OUT
 * not written.  OUT must not exist: bench_run never replaces a file (a
 * forgotten OUT would otherwise make the command's own program the file
 * written), and refuses one before running anything.  A benchmark tool:
 * `make bench` passes it to the scripts as RBA_BENCH_RUN.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct rusage ru;
	double t0, wall;
	pid_t pid;
	int st, code, fd;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_run OUT COMMAND [ARG...]\n");
		return 2;
	}
	if (access(argv[1], F_OK) == 0) {
		fprintf(stderr, "bench_run: %s: exists; not replaced\n",
			argv[1]);
		return 2;
	}
	t0 = now();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench_run: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bench_run: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "bench_run: waitpid: %s\n", strerror(errno));
			return 2;
		}
	wall = now() - t0;
	if (getrusage(RUSAGE_CHILDREN, &ru) != 0) {
		fprintf(stderr, "bench_run: getrusage: %s\n", strerror(errno));
		return 2;
	}
	/* created only now, and only if still absent */
	fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (f == NULL) {
		fprintf(stderr, "bench_run: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	fprintf(f, "wall=%.6f cpu=%.6f user=%.6f sys=%.6f maxrss_kib=%ld\n",
		wall, seconds(ru.ru_utime) + seconds(ru.ru_stime),
		seconds(ru.ru_utime), seconds(ru.ru_stime), ru.ru_maxrss);
	if (fclose(f) != 0) {
		fprintf(stderr, "bench_run: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return code;
}
