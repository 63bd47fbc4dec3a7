/*
 * killafter.c - runs a command and kills it with SIGKILL after a delay,
 * for the kill -9 loop (tests/crash.sh).  Plain C, no project code.
 *
 *   killafter USEC LOCKFILE cmd [args...]
 *
 * Starts cmd (its standard streams on /dev/null), waits USEC microseconds (negative: forever) and sends
 * SIGKILL, then prints one line:
 *   exit N USEC       cmd ended by itself with status N after USEC
 *   killed in-txn     the kill landed inside an LMDB write transaction
 *   killed            the kill landed outside one
 * A kill lands inside a write transaction when LMDB's writer mutex in
 * LOCKFILE (the store's lock.mdb) is still owned by the dead process:
 * the mutex is a process-shared robust pthread mutex at offset 64 of the
 * lock file (MDB_txninfo: the cache-line padded txbody, then the write
 * mutex), and glibc keeps the owner's thread id at offset 8 inside it.
 * The next process to take it recovers it (EOWNERDEAD).  Exit status 0,
 * or 2 when the command cannot be run.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WMUTEX_OWNER_OFFSET (64 + 8)

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The thread id owning the writer mutex, 0 when free, -1 unknown. */
static long
writer_owner(const char *lockfile)
{
	int32_t owner;
	int fd = open(lockfile, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &owner, sizeof(owner), WMUTEX_OWNER_OFFSET);
	close(fd);
	return n == sizeof(owner) ? owner : -1;
}

int
main(int argc, char **argv)
{
	long long delay, t0, t1;
	struct timespec ts;
	pid_t pid, w;
	int st;

	if (argc < 4) {
		fprintf(stderr, "usage: killafter USEC LOCKFILE cmd [args...]\n");
		return 2;
	}
	delay = strtoll(argv[1], NULL, 10);
	t0 = now_us();
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	if (delay >= 0) {
		ts.tv_sec = delay / 1000000;
		ts.tv_nsec = (delay % 1000000) * 1000;
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		/* Still running?  Kill it there. */
		w = waitpid(pid, &st, WNOHANG);
		if (w == 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
				long owner = writer_owner(argv[2]);
				printf("killed%s\n", owner > 0 ? " in-txn" : "");
				return 0;
			}
		}
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	t1 = now_us();
	if (WIFSIGNALED(st))
		printf("signal %d %lld\n", WTERMSIG(st), t1 - t0);
	else
		printf("exit %d %lld\n", WEXITSTATUS(st), t1 - t0);
	return 0;
}
