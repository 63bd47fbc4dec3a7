/*
 * sandbox_init.c - the first program of every sandbox (sandbox.h): a
 * program of its own, not part of the library, built once and carried
 * inside the tool (exec/sandbox_blob.S), then handed to bwrap as a
 * read-only file.  Plain C and libc only.
 *
 * bwrap runs it with an empty environment as
 *
 *     init -r FD -p NPROC -m AS -f FSIZE -u UMASK [-d DIR] [-a 0|1]
 *          [-E 0|1] [-c SRC -t DST]... [-e NAME=VALUE]... [-o NAME]...
 *          -- COMMAND [ARG]...
 *
 * It copies each -c directory tree into its -t directory (a tmpfs of
 * the sandbox's), creating every directory's entries in the reverse of
 * the order readdir gives them (vary's file-order: on a tmpfs readdir
 * then lists them the other way round), then forks COMMAND with the
 * limits set (RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC, no core), the
 * umask UMASK, address space randomization off with -a 1, and the
 * environment of the -e options only (in reverse order with -E 1),
 * waits for it, kills every process left in the sandbox's PID namespace
 * and reaps them (it is their subreaper), and only then looks at DIR
 * (default /out): each -o NAME opened without following a link and
 * without blocking,
 * its kind told by fstat, a regular file's bytes read.  What it found
 * goes to descriptor FD, which nothing else in the sandbox holds (the
 * command is started without it and this process is not dumpable, so
 * neither ptrace nor /proc/PID/fd reaches it), in this layout, integers
 * little-endian:
 *
 *     "RBASBX1\n"
 *     u32 how   1 exited, 2 killed by a signal, 3 could not be started
 *     u32 code  the exit status, the signal, or the errno of execve
 *     u32 n     the number of -o names, then for each, in order:
 *         u32 kind   SANDBOX_INIT_* below
 *         u64 len    bytes that follow (regular files only, else 0)
 *         len bytes
 *     "END\n"
 *
 * The tool reads that as it reads anything from the sandbox: bounded,
 * checked, never trusted to be what it says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/sandbox_init.h"

#define MAX_NAMES 8
#define MAX_VARS 64
#define MAX_COPIES 4

static void
die(const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "rebuild-audit sandbox: %s: %s\n",
			 what, strerror(errno));

	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	_exit(125);
}

static int out_fd = -1;

static void
put(const void *p, size_t n)
{
	const char *s = p;

	while (n > 0) {
		ssize_t k = write(out_fd, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			die("writing the report");
		s += k;
		n -= (size_t)k;
	}
}

static void
put_u32(uint32_t v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8),
			      (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
	put(b, 4);
}

static void
put_u64(uint64_t v)
{
	put_u32((uint32_t)v);
	put_u32((uint32_t)(v >> 32));
}

static uint64_t
num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != 0) {
		errno = EINVAL;
		die("a bad number on the command line");
	}
	return (uint64_t)v;
}

static void
limit(int what, uint64_t v)
{
	struct rlimit rl;

	rl.rlim_cur = rl.rlim_max = (rlim_t)v;
	if (setrlimit(what, &rl) != 0)
		die("setrlimit");
}

/* In the child: the limits, then the command (never returns). */
static void
start(char **argv, char **envp, uint64_t nproc, uint64_t as, uint64_t fsize,
      unsigned mask, int no_aslr, int report[2])
{
	static const char *const dirs[] = {"/usr/bin/", "/bin/"};
	sigset_t none;
	int e = ENOENT;

	close(report[0]);
	close(out_fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	limit(RLIMIT_CORE, 0);
	limit(RLIMIT_AS, as);
	limit(RLIMIT_FSIZE, fsize);
	limit(RLIMIT_NPROC, nproc);
	umask((mode_t)mask);
	if (no_aslr && personality(ADDR_NO_RANDOMIZE) < 0)
		die("personality");
	if (strchr(argv[0], '/') != NULL) {
		execve(argv[0], argv, envp);
		e = errno;
	} else {
		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s%s", dirs[i], argv[0]);
			execve(path, argv, envp);
			if (errno != ENOENT)
				e = errno;
		}
	}
	(void)!write(report[1], &e, sizeof(e));
	_exit(127);
}

/* Kills everything of the namespace but pid 1 and this process, and
 * reaps what comes to this subreaper until nothing is left. */
static void
clear_namespace(pid_t child)
{
	/* kill(-1) reaches every process this one may signal: in the
	 * sandbox's own PID namespace (this is pid 2 under bwrap's pid 1)
	 * that is the sandbox; anywhere else only the command's group. */
	if (getpid() > 2) {
		kill(-child, SIGKILL);
		while (waitpid(-1, NULL, 0) >= 0 || errno == EINTR)
			;
		return;
	}
	for (;;) {
		int st;
		pid_t w;
		kill(-1, SIGKILL);
		w = waitpid(-1, &st, 0);
		if (w < 0 && errno == ECHILD)
			return;
	}
}

static uint32_t
kind_of(mode_t m)
{
	if (S_ISREG(m))
		return SANDBOX_INIT_REGULAR;
	if (S_ISLNK(m))
		return SANDBOX_INIT_SYMLINK;
	if (S_ISFIFO(m))
		return SANDBOX_INIT_FIFO;
	if (S_ISDIR(m))
		return SANDBOX_INIT_DIRECTORY;
	if (S_ISCHR(m) || S_ISBLK(m))
		return SANDBOX_INIT_DEVICE;
	if (S_ISSOCK(m))
		return SANDBOX_INIT_SOCKET;
	return SANDBOX_INIT_UNREADABLE;
}

/* One -o name: its kind, and a regular file's bytes, to the report. */
static void
collect(int dir, const char *name, uint64_t *budget)
{
	struct stat st;
	char buf[65536];
	uint64_t left;
	int fd;

	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		uint32_t k = SANDBOX_INIT_UNREADABLE;
		if (errno == ENOENT)
			k = SANDBOX_INIT_ABSENT;
		else if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			k = kind_of(st.st_mode);
		put_u32(k);
		put_u64(0);
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		put_u32(fstat(fd, &st) != 0 ? SANDBOX_INIT_UNREADABLE : kind_of(st.st_mode));
		put_u64(0);
		close(fd);
		return;
	}
	if ((uint64_t)st.st_size > *budget) {
		put_u32(SANDBOX_INIT_TOO_LARGE);
		put_u64(0);
		close(fd);
		return;
	}
	/* Nothing else runs now, so the size stays what fstat said; the
	 * file is read whole before its kind is written all the same, so
	 * that one that reads short is reported unreadable, not cut. */
	left = (uint64_t)st.st_size;
	{
		char *all = malloc(left ? (size_t)left : 1);
		uint64_t got = 0;
		if (all == NULL) {
			put_u32(SANDBOX_INIT_TOO_LARGE);
			put_u64(0);
			close(fd);
			return;
		}
		while (got < left) {
			size_t want = left - got > sizeof(buf) ? sizeof(buf) : (size_t)(left - got);
			ssize_t k = read(fd, all + got, want);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			got += (uint64_t)k;
		}
		if (got != left) {
			put_u32(SANDBOX_INIT_UNREADABLE);
			put_u64(0);
		} else {
			put_u32(SANDBOX_INIT_REGULAR);
			put_u64(left);
			put(all, (size_t)left);
			*budget -= left;
		}
		free(all);
	}
	close(fd);
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/*
 * Copies the tree at src (a directory fd) into dst (one), each
 * directory's entries created in the reverse of the order readdir gave
 * them (sorted names when readdir's order is already sorted, so the
 * order is another one either way).
 */
static void
copy_tree(int src, int dst, unsigned depth)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, sorted = 1;

	if (depth > 256 || (d = fdopendir(dup(src))) == NULL) {
		errno = ELOOP;
		die("copying a tree");
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(char *));
			if (nn == NULL)
				die("copying a tree");
			names = nn;
		}
		if ((names[n] = strdup(e->d_name)) == NULL)
			die("copying a tree");
		if (n > 0 && strcmp(names[n - 1], names[n]) > 0)
			sorted = 0;
		n++;
	}
	closedir(d);
	if (sorted) /* ascending as read: create them descending */
		qsort(names, n, sizeof(char *), cmp_name);
	for (size_t k = n; k-- > 0;) {
		const char *nm = sorted ? names[n - 1 - k] : names[k];
		struct stat st;
		if (fstatat(src, nm, &st, AT_SYMLINK_NOFOLLOW) != 0)
			die("copying a tree");
		if (S_ISDIR(st.st_mode)) {
			int a, b;
			if (mkdirat(dst, nm, 0700) != 0 ||
			    (a = openat(src, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
			    (b = openat(dst, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
				die("copying a tree");
			copy_tree(a, b, depth + 1);
			fchmod(b, st.st_mode & 07777);
			close(a);
			close(b);
		} else if (S_ISLNK(st.st_mode)) {
			char t[4096];
			ssize_t k2 = readlinkat(src, nm, t, sizeof(t) - 1);
			if (k2 < 0)
				die("copying a tree");
			t[k2] = 0;
			if (symlinkat(t, dst, nm) != 0)
				die("copying a tree");
		} else if (S_ISREG(st.st_mode)) {
			char buf[65536];
			ssize_t k2;
			int a = openat(src, nm, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			int b = openat(dst, nm, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (a < 0 || b < 0)
				die("copying a tree");
			while ((k2 = read(a, buf, sizeof(buf))) > 0) {
				const char *q = buf;
				while (k2 > 0) {
					ssize_t w = write(b, q, (size_t)k2);
					if (w <= 0)
						die("copying a tree");
					q += w;
					k2 -= w;
				}
			}
			fchmod(b, st.st_mode & 07777);
			futimens(b, (struct timespec[2]){st.st_atim, st.st_mtim});
			close(a);
			close(b);
		}
		free(names[sorted ? n - 1 - k : k]);
	}
	free(names);
}

static void
copy_into(const char *from, const char *to)
{
	int a = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int b = open(to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (a < 0 || b < 0)
		die("copying a tree");
	copy_tree(a, b, 0);
	close(a);
	close(b);
}

/* The command line's options (the header's synopsis). */
struct opts {
	char *envp[MAX_VARS + 1];
	const char *names[MAX_NAMES], *outdir;
	const char *from[MAX_COPIES], *to[MAX_COPIES];
	size_t nvars, nnames, nfrom, nto;
	uint64_t nproc, as, fsize, mask;
	int no_aslr, reverse;
};

/* Reads the options into o (out_fd from -r); returns the index of the
 * "--" before the command.  Dies on a bad one. */
static int
parse_options(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->outdir = "/out";
	o->mask = 022;
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
		const char *op = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (v == NULL || op[0] != '-' || op[1] == 0 || op[2] != 0) {
			errno = EINVAL;
			die("a bad option");
		}
		switch (op[1]) {
		case 'r': out_fd = (int)num(v); break;
		case 'p': o->nproc = num(v); break;
		case 'm': o->as = num(v); break;
		case 'f': o->fsize = num(v); break;
		case 'e':
			if (o->nvars == MAX_VARS || strchr(v, '=') == NULL) {
				errno = E2BIG;
				die("too many variables");
			}
			o->envp[o->nvars++] = (char *)v;
			break;
		case 'u': o->mask = num(v) & 0777; break;
		case 'a': o->no_aslr = num(v) != 0; break;
		case 'E': o->reverse = num(v) != 0; break;
		case 'd': o->outdir = v; break;
		case 'c':
		case 't':
			if ((op[1] == 'c' ? o->nfrom : o->nto) == MAX_COPIES) {
				errno = E2BIG;
				die("too many copies");
			}
			if (op[1] == 'c')
				o->from[o->nfrom++] = v;
			else
				o->to[o->nto++] = v;
			break;
		case 'o':
			if (o->nnames == MAX_NAMES || strchr(v, '/') != NULL) {
				errno = E2BIG;
				die("a bad output name");
			}
			o->names[o->nnames++] = v;
			break;
		default:
			errno = EINVAL;
			die("an unknown option");
		}
	}
	o->envp[o->nvars] = NULL;
	if (o->reverse)
		for (size_t a = 0, b = o->nvars; a + 1 < b; a++, b--) {
			char *t = o->envp[a];
			o->envp[a] = o->envp[b - 1];
			o->envp[b - 1] = t;
		}
	return i;
}

/* This process closed to the sandbox: not dumpable, the subreaper,
 * deaf to job-control signals, no descriptor but 0, 1, 2 and out_fd. */
static void
seal_self(void)
{
	/* No process of the sandbox may read this one's memory or
	 * descriptors; orphans come here to be reaped. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	fcntl(out_fd, F_SETFD, FD_CLOEXEC);
	/* The only descriptors the command gets are 0, 1 and 2. */
#ifdef SYS_close_range
	if (out_fd > 3)
		syscall(SYS_close_range, 3u, (unsigned)out_fd - 1, 0);
	syscall(SYS_close_range, (unsigned)out_fd + 1, ~0u, 0);
#endif
}

/* The report: how the command ended (pid's wait w and status st, or e,
 * the errno of its start), then each name collected from the output
 * directory within the file size budget. */
static void
put_report(const struct opts *o, pid_t pid, pid_t w, int st, int e)
{
	uint64_t budget;

	put(SANDBOX_INIT_MAGIC, 8);
	if (e != 0) {
		put_u32(SANDBOX_INIT_NOT_STARTED);
		put_u32((uint32_t)e);
	} else if (w == pid && WIFEXITED(st)) {
		put_u32(SANDBOX_INIT_EXITED);
		put_u32((uint32_t)WEXITSTATUS(st));
	} else {
		put_u32(SANDBOX_INIT_SIGNALED);
		put_u32(w == pid && WIFSIGNALED(st) ? (uint32_t)WTERMSIG(st) : SIGKILL);
	}
	put_u32((uint32_t)o->nnames);
	budget = o->fsize;
	{
		int dir = o->nnames ? open(o->outdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		for (size_t n = 0; n < o->nnames; n++) {
			if (dir < 0) {
				put_u32(SANDBOX_INIT_UNREADABLE);
				put_u64(0);
				continue;
			}
			collect(dir, o->names[n], &budget);
		}
	}
	put("END\n", 4);
}

int
main(int argc, char **argv)
{
	struct opts o;
	int i, st, report[2], e = 0;
	ssize_t k;
	pid_t pid, w;

	i = parse_options(argc, argv, &o);
	if (o.nfrom != o.nto) {
		errno = EINVAL;
		die("a copy without its target");
	}
	if (i + 1 >= argc || out_fd < 3) {
		errno = EINVAL;
		die("no command");
	}
	seal_self();
	for (size_t c = 0; c < o.nfrom; c++)
		copy_into(o.from[c], o.to[c]);
	if (pipe2(report, O_CLOEXEC) != 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		start(argv + i + 1, o.envp, o.nproc, o.as, o.fsize,
		      (unsigned)o.mask, o.no_aslr, report);
	close(report[1]);
	while ((k = read(report[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	if (k != (ssize_t)sizeof(e))
		e = 0;
	close(report[0]);
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	clear_namespace(pid);
	put_report(&o, pid, w, st, e);
	return 0;
}
