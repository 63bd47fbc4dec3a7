/*
 * flips.c - the byte-flip sweep (make check-flips; a sample of it in
 * make check through tests/cli/t-flips.sh).
 *
 *   flips RBA STORE VERSION CASE [-n COUNT] [-s SEED] [-b BITS] [-j JOBS]
 *
 * STORE is a store directory, left untouched: each flip is made in a
 * scratch copy of its data.mdb, rewritten from memory before every run.
 * For each offset (all of them, or COUNT drawn without repeats from
 * SEED) and each bit in BITS (e.g. "07": bits 0 and 7) it flips the bit
 * and runs `mdb_dump -a` (a flip that changes what it prints, or makes
 * it fail, is live), then `store check`, `-q audit --all` and
 * `-q dispute VERSION CASE`.  A live flip must make store check exit
 * non-zero and audit not exit 0; no command may die by a signal.  Prints
 * the counts and every miss and crash; exits 1 when there is any.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *rba, *version, *case_id;
static uint8_t *pristine;
static size_t psize;
static char *base_dump;
static size_t base_len;

static int
read_all(int fd, char **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap);
	ssize_t r;

	if (p == NULL)
		return -1;
	while ((r = read(fd, p + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap) {
			char *q = realloc(p, cap *= 2);
			if (q == NULL) {
				free(p);
				return -1;
			}
			p = q;
		}
	}
	*out = p;
	*len = n;
	return r < 0 ? -1 : 0;
}

/* Runs argv in dir; returns the wait status.  With out, stdout is
 * captured into *out (malloc'd). */
static int
run(const char *dir, char *const argv[], char **out, size_t *len)
{
	int pfd[2] = {-1, -1}, st;
	pid_t pid;

	if (out != NULL && pipe(pfd) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (chdir(dir) != 0)
			_exit(127);
		dup2(null, 0);
		dup2(out != NULL ? pfd[1] : null, 1);
		dup2(null, 2);
		if (out != NULL) {
			close(pfd[0]);
			close(pfd[1]);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out != NULL) {
		close(pfd[1]);
		if (read_all(pfd[0], out, len) != 0)
			*len = 0;
		close(pfd[0]);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

static int
write_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < n) {
		ssize_t w = write(fd, p + off, n - off);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	return close(fd);
}

/* "exit N" or "signal N" of a wait status, into buf. */
static const char *
status_text(int st, char *buf, size_t cap)
{
	if (WIFSIGNALED(st))
		snprintf(buf, cap, "signal %d", WTERMSIG(st));
	else
		snprintf(buf, cap, "exit %d", WEXITSTATUS(st));
	return buf;
}

/* One flip: a line "OFF BIT live|dead CHECK AUDIT DISPUTE" on f. */
static void
one(const char *dir, size_t off, int bit, FILE *f)
{
	char path[4300], *dump = NULL;
	size_t dlen = 0;
	int live, s[3];
	char *dumpv[] = {"mdb_dump", "-a", "st", NULL};
	char *checkv[] = {(char *)rba, "-S", "st", "store", "check", NULL};
	char *auditv[] = {(char *)rba, "-S", "st", "-q", "audit", "--all",
			  NULL};
	char *dispv[] = {(char *)rba, "-S", "st", "-q", "dispute",
			 (char *)version, (char *)case_id, NULL};

	pristine[off] ^= (uint8_t)(1u << bit);
	snprintf(path, sizeof(path), "%s/st/data.mdb", dir);
	if (write_file(path, pristine, psize) != 0) {
		perror("flips: write");
		exit(2);
	}
	pristine[off] ^= (uint8_t)(1u << bit);
	snprintf(path, sizeof(path), "%s/st/lock.mdb", dir);
	unlink(path);
	int ds = run(dir, dumpv, &dump, &dlen);
	live = !(WIFEXITED(ds) && WEXITSTATUS(ds) == 0 && dlen == base_len &&
		 memcmp(dump, base_dump, dlen) == 0);
	free(dump);
	s[0] = run(dir, checkv, NULL, NULL);
	s[1] = run(dir, auditv, NULL, NULL);
	s[2] = run(dir, dispv, NULL, NULL);
	fprintf(f, "%zu %d %s %d %d %d\n", off, bit, live ? "live" : "dead",
		s[0], s[1], s[2]);
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	const char *bits = "07", *store;
	size_t count = 0, noff, *offs;
	unsigned long seed = 1;
	int jobs = 2, opt;
	/* tmpfs when there is one: every flipped store is rewritten and
	 * every audit commits (fsync) into it. */
	char tmpl[64], path[4200];
	char *dumpv[] = {"mdb_dump", "-a", "st", NULL};

	while ((opt = getopt(argc, argv, "n:s:b:j:")) != -1) {
		switch (opt) {
		case 'n': count = strtoull(optarg, NULL, 10); break;
		case 's': seed = strtoul(optarg, NULL, 10); break;
		case 'b': bits = optarg; break;
		case 'j': jobs = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
		default: return 2;
		}
	}
	if (argc - optind != 4) {
		fprintf(stderr, "usage: flips RBA STORE VERSION CASE [-n COUNT] "
				"[-s SEED] [-b BITS] [-j JOBS]\n");
		return 2;
	}
	rba = argv[optind];
	store = argv[optind + 1];
	version = argv[optind + 2];
	case_id = argv[optind + 3];
	snprintf(path, sizeof(path), "%s/data.mdb", store);
	{
		int fd = open(path, O_RDONLY);
		char *p;
		if (fd < 0 || read_all(fd, &p, &psize) != 0) {
			perror(path);
			return 2;
		}
		close(fd);
		pristine = (uint8_t *)p;
	}
	{
		struct stat sb;
		snprintf(tmpl, sizeof(tmpl), "%s/rba-flips.XXXXXX",
			 stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) &&
				 access("/dev/shm", W_OK) == 0
			 ? "/dev/shm" : "/tmp");
	}
	if (mkdtemp(tmpl) == NULL)
		return 2;
	/* The reference dump, from a pristine copy in the same layout. */
	snprintf(path, sizeof(path), "%s/st", tmpl);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/st/data.mdb", tmpl);
	if (write_file(path, pristine, psize) != 0)
		return 2;
	if (run(tmpl, dumpv, &base_dump, &base_len) != 0) {
		fprintf(stderr, "flips: mdb_dump of the pristine store failed\n");
		return 2;
	}
	/* The offsets: all, or count of them drawn without repeats. */
	noff = count > 0 && count < psize ? count : psize;
	offs = malloc(psize * sizeof(*offs));
	if (offs == NULL)
		return 2;
	/* All offsets in a strided order (an odd stride is a permutation
	 * of a size that is a multiple of the page size), so that a run cut
	 * short has still sampled the whole file evenly. */
	for (size_t i = 0; i < psize; i++)
		offs[i] = (size_t)(((uint64_t)i * 40503u) % psize);
	if (noff < psize) {
		srand48((long)seed);
		for (size_t i = 0; i < noff; i++) {
			size_t j = i + (size_t)(drand48() * (double)(psize - i));
			size_t t = offs[i];
			offs[i] = offs[j];
			offs[j] = t;
		}
		qsort(offs, noff, sizeof(*offs), cmp_size);
	}
	/* Workers: each its own scratch store and result file. */
	for (int w = 0; w < jobs; w++) {
		pid_t pid = fork();
		if (pid == 0) {
			char dir[96], res[160]; /* under tmpl, a short name */
			FILE *f;
			snprintf(dir, sizeof(dir), "%s/w%d", tmpl, w);
			mkdir(dir, 0700);
			snprintf(res, sizeof(res), "%s/st", dir);
			mkdir(res, 0700);
			snprintf(res, sizeof(res), "%s/results", dir);
			f = fopen(res, "w");
			if (f == NULL)
				_exit(2);
			for (size_t i = (size_t)w; i < noff; i += (size_t)jobs)
				for (const char *b = bits; *b; b++)
					one(dir, offs[i], *b - '0', f);
			_exit(fclose(f) == 0 ? 0 : 2);
		}
	}
	for (int w = 0; w < jobs; w++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "flips: a worker failed\n");
			return 2;
		}
	}
	/* The tally. */
	unsigned long flips = 0, live = 0, detected = 0, missed = 0,
		      crashes = 0, dead_check = 0;
	for (int w = 0; w < jobs; w++) {
		char res[4300], l[256], a[32], b[32], c[32];
		FILE *f;
		snprintf(res, sizeof(res), "%s/w%d/results", tmpl, w);
		f = fopen(res, "r");
		if (f == NULL)
			return 2;
		while (fgets(l, sizeof(l), f) != NULL) {
			size_t off;
			int bit, s[3];
			char kind[8];
			if (sscanf(l, "%zu %d %7s %d %d %d", &off, &bit, kind,
				   &s[0], &s[1], &s[2]) != 6)
				continue;
			flips++;
			int crash = WIFSIGNALED(s[0]) || WIFSIGNALED(s[1]) ||
				    WIFSIGNALED(s[2]);
			if (crash) {
				crashes++;
				printf("crash: offset %zu bit %d (%s): store check "
				       "%s, audit %s, dispute %s\n", off, bit, kind,
				       status_text(s[0], a, 32),
				       status_text(s[1], b, 32),
				       status_text(s[2], c, 32));
			}
			if (strcmp(kind, "live") != 0) {
				if (s[0] != 0)
					dead_check++;
				continue;
			}
			live++;
			if (s[0] != 0 && s[1] != 0 && !crash) {
				detected++;
			} else if (!crash) {
				missed++;
				printf("missed: offset %zu bit %d: store check %s, "
				       "audit %s, dispute %s\n", off, bit,
				       status_text(s[0], a, 32),
				       status_text(s[1], b, 32),
				       status_text(s[2], c, 32));
			}
		}
		fclose(f);
	}
	printf("flips: %lu flips of %zu offsets x %zu bits in a %zu-byte "
	       "data.mdb: %lu live, %lu detected, %lu missed, %lu crashes "
	       "(%lu dead flips where store check also said no)\n",
	       flips, noff, strlen(bits), psize, live, detected, missed,
	       crashes, dead_check);
	{
		char *rmv[] = {"rm", "-rf", tmpl, NULL};
		run("/", rmv, NULL, NULL);
	}
	return missed || crashes ? 1 : 0;
}
