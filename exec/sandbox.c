/* sandbox.c - a command under bubblewrap, limited, and its work directory. */
#define _GNU_SOURCE /* memfd_create, setgroups */
#include "exec/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/rbatime.h"
#include "common/strv.h"
#include "exec/sandbox_init.h"

/* Ends vector v of n strings with a NULL (not counted in n). */
static int
strv_end(char ***v, size_t n)
{
	char **nv = realloc(*v, (n + 1) * sizeof(char *));

	if (nv == NULL)
		return RBA_E_NOMEM;
	nv[n] = NULL;
	*v = nv;
	return 0;
}

#define BWRAP "/usr/bin/bwrap"
#define INIT_PATH "/run/sandbox-init" /* the first program, inside */
#define INIT_FD_REPORT 3		  /* the descriptors bwrap inherits */
#define INIT_FD_PROGRAM 4
#define MAX_BINDS 8
/* Where, run as root, the binds are seen by the sandbox's user: a tmpfs
 * on /tmp of a mount namespace of the child's own (spawn_child). */
#define BIND_HOME "/tmp"
#define BIND_AT BIND_HOME "/rba-bind-%zu"
/* The processes of the sandbox that are not the command's: bwrap's
 * pid 1 and the first program (RLIMIT_NPROC counts them too). */
#define INIT_OWN_PROCESSES 2

/* The first program's bytes (sandbox_blob.S). */
extern const unsigned char rba_sandbox_init_start[], rba_sandbox_init_end[];

/* Closes every descriptor from lo up (in a child about to exec). */
static void
close_from(int lo)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lo, ~0u, 0) == 0)
		return;
#endif
	for (int fd = lo; fd < 4096; fd++)
		close(fd);
}

/*
 * The user the sandbox runs as: when this process is root, the one
 * REBUILD_AUDIT_SANDBOX_USER names (a user name, or UID:GID), default
 * nobody; otherwise this process's own (drop 0).
 */
struct sandbox_user {
	int drop;
	uid_t uid;
	gid_t gid;
};

static int
sandbox_user_get(struct sandbox_user *u, char *why, size_t n)
{
	const char *name = getenv("REBUILD_AUDIT_SANDBOX_USER");
	unsigned long a, b;
	char tail;

	memset(u, 0, sizeof(*u));
	if (geteuid() != 0)
		return 0;
	if (name == NULL || name[0] == 0)
		name = "nobody";
	if (sscanf(name, "%lu:%lu%c", &a, &b, &tail) == 2) {
		u->uid = (uid_t)a;
		u->gid = (gid_t)b;
	} else {
		struct passwd *pw = getpwnam(name);
		if (pw == NULL) {
			snprintf(why, n, "the sandbox user '%.64s' "
				 "(REBUILD_AUDIT_SANDBOX_USER) does not exist", name);
			return -1;
		}
		u->uid = pw->pw_uid;
		u->gid = pw->pw_gid;
	}
	if (u->uid == 0 || u->gid == 0) {
		snprintf(why, n, "the sandbox user '%.64s' "
			 "(REBUILD_AUDIT_SANDBOX_USER) is root; the code must "
			 "run as an unprivileged user", name);
		return -1;
	}
	u->drop = 1;
	return 0;
}

static int avail_state; /* 0 unknown, 1 yes, -1 no */
static char avail_why[600];
static char bwrap_name[64] = "bubblewrap";

const char *
sandbox_name(void)
{
	return bwrap_name;
}

const char *
sandbox_description(void)
{
	return "bwrap --unshare-all --unshare-user --disable-userns "
	       "--die-with-parent --new-session --cap-drop ALL, started with "
	       "an empty environment (as an unprivileged user when run as "
	       "root); /usr ro, /etc: alternatives and ld.so only; fresh /proc "
	       "and /dev, / and /dev read-only; /tmp, /dev/shm and /out tmpfs of "
	       "the output limit each; code and inputs ro; outputs read back "
	       "as regular files only, after every process has ended; limits: "
	       "wall time (SIGKILL of the group), RLIMIT_AS, RLIMIT_FSIZE, "
	       "RLIMIT_NPROC, output bytes";
}

const char *
sandbox_file_kind_name(enum sandbox_file_kind k)
{
	switch (k) {
	case SANDBOX_FILE_ABSENT: return "absent";
	case SANDBOX_FILE_REGULAR: return "a regular file";
	case SANDBOX_FILE_SYMLINK: return "a symbolic link";
	case SANDBOX_FILE_FIFO: return "a FIFO";
	case SANDBOX_FILE_DIRECTORY: return "a directory";
	case SANDBOX_FILE_DEVICE: return "a device";
	case SANDBOX_FILE_SOCKET: return "a socket";
	case SANDBOX_FILE_TOO_LARGE: return "a file over the output limit";
	default: return "unreadable";
	}
}

void
sandbox_result_release(struct sandbox_result *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < SANDBOX_MAX_COLLECT; i++) {
		free(r->files[i].bytes);
		r->files[i].bytes = NULL;
		r->files[i].len = 0;
	}
}

/* Runs argv (no sandbox) with stdout to out (n bytes); exit status or -1. */
static int
run_plain(char *const *argv, char *out, size_t n)
{
	int p[2], st;
	pid_t pid;
	size_t got = 0;
	ssize_t k;

	if (pipe(p) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(p[1], 1);
		dup2(nul, 2);
		close_from(3);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while (n > 0 && (k = read(p[0], out + got, n - 1 - got)) > 0)
		got += (size_t)k;
	if (n > 0)
		out[got] = 0;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_spec(const struct sandbox_spec *s, struct sandbox_result *r,
		    struct rba_buf *capture, struct rba_detail *d);
static void last_line(const char *text, char *out, size_t n);

int
sandbox_available(struct rba_detail *d)
{
	char *ver[] = {BWRAP, "--version", NULL};
	char *cmd[] = {"/usr/bin/true", NULL};
	struct sandbox_spec s;
	struct sandbox_result r;
	struct sandbox_user u;
	char out[128];

	if (avail_state == 0) {
		memset(&s, 0, sizeof(s));
		s.argv = cmd;
		s.argc = 1;
		s.seconds = 60;
		s.memory = UINT64_C(1) << 30;
		s.output = UINT64_C(1) << 20;
		s.processes = 16;
		if (access(BWRAP, X_OK) != 0) {
			snprintf(avail_why, sizeof(avail_why),
				 "%s is not installed (Debian package bubblewrap)",
				 BWRAP);
			avail_state = -1;
		} else if (sandbox_user_get(&u, avail_why, sizeof(avail_why)) != 0) {
			avail_state = -1;
		} else if (run_spec(&s, &r, NULL, NULL) != 0 || !r.exited ||
			   r.status != 0) {
			char line[200];
			last_line(r.err_tail, line, sizeof(line));
			snprintf(avail_why, sizeof(avail_why),
				 "%s cannot make its namespaces here%s%s%s (user "
				 "namespaces disabled, or a container that forbids "
				 "them)", BWRAP, u.drop ? " as the sandbox user" : "",
				 line[0] ? ": " : "", line);
			avail_state = -1;
			sandbox_result_release(&r);
		} else {
			avail_state = 1;
			sandbox_result_release(&r);
			if (run_plain(ver, out, sizeof(out)) == 0) {
				out[strcspn(out, "\n")] = 0;
				out[sizeof(bwrap_name) - 1] = 0;
				memcpy(bwrap_name, out, strlen(out) + 1);
			}
		}
	}
	if (avail_state < 0)
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
				"sandbox unavailable: %s", avail_why);
	return 0;
}

/* Keeps the last SANDBOX_TAIL bytes of a stream. */
struct tail {
	char b[SANDBOX_TAIL];
	size_t n; /* bytes held, at most SANDBOX_TAIL */
};

static void
tail_add(struct tail *t, const char *p, size_t n)
{
	if (n >= SANDBOX_TAIL) {
		memcpy(t->b, p + n - SANDBOX_TAIL, SANDBOX_TAIL);
		t->n = SANDBOX_TAIL;
		return;
	}
	if (t->n + n > SANDBOX_TAIL) {
		size_t drop = t->n + n - SANDBOX_TAIL;
		memmove(t->b, t->b + drop, t->n - drop);
		t->n -= drop;
	}
	memcpy(t->b + t->n, p, n);
	t->n += n;
}

/* Printable text of a tail: other bytes as '?', newlines kept. */
static void
tail_text(const struct tail *t, char *out)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		unsigned char c = (unsigned char)t->b[i];
		out[i] = (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) ? (char)c : '?';
	}
	out[i] = 0;
}

/* Whether argv[0] names a program that the sandbox can run. */
static int
command_found(const struct sandbox_spec *s)
{
	const char *a = s->argv[0];
	char path[4096];
	size_t i;

	if (strchr(a, '/') == NULL) {
		snprintf(path, sizeof(path), "/usr/bin/%s", a);
		return access(path, X_OK) == 0;
	}
	for (i = 0; i < s->nbinds; i++) {
		size_t n = strlen(s->binds[i].dst);
		if (strncmp(a, s->binds[i].dst, n) == 0 && a[n] == '/') {
			snprintf(path, sizeof(path), "%s%s", s->binds[i].src, a + n);
			return access(path, F_OK) == 0;
		}
	}
	if (a[0] != '/') {
		/* relative to the working directory, itself a bind */
		for (i = 0; s->cwd != NULL && i < s->nbinds; i++)
			if (strcmp(s->binds[i].dst, s->cwd) == 0) {
				snprintf(path, sizeof(path), "%s/%s", s->binds[i].src, a);
				return access(path, F_OK) == 0;
			}
		return 0;
	}
	if (strncmp(a, "/usr/", 5) != 0 && strncmp(a, "/bin/", 5) != 0 &&
	    strncmp(a, "/sbin/", 6) != 0)
		return 0;
	return access(a, X_OK) == 0;
}

static int
add(char ***v, size_t *n, const char *s)
{
	char *c = strdup(s);

	if (c == NULL || rba_strv_add(v, n, c) != 0) {
		free(c);
		return RBA_E_NOMEM;
	}
	return 0;
}

#define REORDER_SRC "/run/sandbox-src" /* reorder_files: the binds' place */

/* Bytes of the tree at dir (its files, and a page for each entry). */
static uint64_t
tree_bytes(int dir, unsigned depth)
{
	DIR *d = depth < 256 ? fdopendir(dir) : NULL;
	struct dirent *e;
	uint64_t n = 0;

	if (d == NULL) {
		close(dir);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		n += 4096 + (S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY |
							       O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				n += tree_bytes(sub, depth + 1);
		}
	}
	closedir(d);
	return n;
}

/* The size of the tmpfs a reordered copy of path goes to. */
static uint64_t
reorder_size(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return (fd >= 0 ? tree_bytes(fd, 0) : 0) * 2 + (UINT64_C(1) << 20);
}

/* Adds "--opt" and its value (a number) to v. */
static int
add_num(char ***v, size_t *n, const char *opt, uint64_t x)
{
	char t[32];
	int err;

	snprintf(t, sizeof(t), "%llu", (unsigned long long)x);
	if ((err = add(v, n, opt)) != 0)
		return err;
	return add(v, n, t);
}

/* Adds "--opt NAME=VALUE" to v. */
static int
add_var(char ***v, size_t *n, const char *name, const char *value)
{
	char *t = rba_strdupf("%s=%s", name, value);
	int err;

	if (t == NULL)
		return RBA_E_NOMEM;
	if ((err = add(v, n, "-e")) == 0 && rba_strv_add(v, n, t) == 0)
		return 0;
	if (err == 0)
		err = RBA_E_NOMEM;
	free(t);
	return err;
}

/*
 * The sandbox's own file system on the bwrap command line: the fixed
 * options, the host name, a tmpfs for each scratch place, and /bin and
 * its kin as the host has them (links or read-only binds).
 */
static int
argv_host(const struct sandbox_spec *s, char ***out, size_t *n)
{
	static const char *const fixed[] = {
		BWRAP, "--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--clearenv",
		"--ro-bind", "/usr", "/usr", "--ro-bind-try",
		"/etc/alternatives", "/etc/alternatives", "--ro-bind-try",
		"/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try",
		"/etc/ld.so.conf", "/etc/ld.so.conf", "--ro-bind-try",
		"/etc/ld.so.conf.d", "/etc/ld.so.conf.d", "--proc", "/proc",
		"--dev", "/dev"};
	const char *scratch[] = {"/dev/shm", "/tmp", s->out_dir ? s->out_dir : "/out"};
	static const char *const links[] = {"/bin", "/sbin", "/lib", "/lib32",
					    "/lib64", "/libx32"};
	struct stat st;
	char target[256];
	size_t i;
	int err = 0;

	for (i = 0; err == 0 && i < sizeof(fixed) / sizeof(fixed[0]); i++)
		err = add(out, n, fixed[i]);
	if (err == 0)
		err = add(out, n, "--hostname");
	if (err == 0)
		err = add(out, n, s->hostname != NULL ? s->hostname : "sandbox");
	/* Nothing the code writes outlives the sandbox or exceeds the
	 * output limit: each scratch place is a tmpfs of that size. */
	for (i = 0; err == 0 && i < sizeof(scratch) / sizeof(scratch[0]); i++) {
		err = add_num(out, n, "--size", s->output);
		if (err == 0)
			err = add(out, n, "--tmpfs");
		if (err == 0)
			err = add(out, n, scratch[i]);
	}
	for (i = 0; err == 0 && i < sizeof(links) / sizeof(links[0]); i++) {
		ssize_t k;
		if (lstat(links[i], &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode) &&
		    (k = readlink(links[i], target, sizeof(target) - 1)) > 0) {
			target[k] = 0;
			err = add(out, n, "--symlink");
			if (err == 0)
				err = add(out, n, target);
			if (err == 0)
				err = add(out, n, links[i]);
		} else if (S_ISDIR(st.st_mode)) {
			err = add(out, n, "--ro-bind");
			if (err == 0)
				err = add(out, n, links[i]);
			if (err == 0)
				err = add(out, n, links[i]);
		}
	}
	return err;
}

/*
 * The spec's binds, read-only (mapped: each at BIND_AT), then the first
 * program's place, the remounts and the working directory, up to the
 * "--" before the first program.
 */
static int
argv_binds(const struct sandbox_spec *s, int mapped, char ***out, size_t *n)
{
	size_t i;
	int err = 0;

	for (i = 0; err == 0 && i < s->nbinds; i++) {
		/* Nothing of the host is writable (a writable bind is
		 * refused by run_spec).  mapped: the bind is at BIND_AT. */
		char at[64], *src_at = NULL;
		snprintf(at, sizeof(at), BIND_AT, i);
		err = add(out, n, "--ro-bind");
		if (err == 0)
			err = add(out, n, mapped ? at : s->binds[i].src);
		/* reorder_files: the bind is the first program's source, and
		 * a tmpfs at its place receives the copy */
		if (err == 0 && s->reorder_files) {
			src_at = rba_strdupf(REORDER_SRC "%s", s->binds[i].dst);
			err = src_at == NULL ? RBA_E_NOMEM : add(out, n, src_at);
			if (err == 0)
				err = add_num(out, n, "--size", reorder_size(s->binds[i].src));
			if (err == 0)
				err = add(out, n, "--tmpfs");
		}
		if (err == 0)
			err = add(out, n, s->binds[i].dst);
		free(src_at);
	}
	if (err == 0)
		err = add(out, n, "--perms");
	if (err == 0)
		err = add(out, n, "0555");
	if (err == 0)
		err = add_num(out, n, "--ro-bind-data", INIT_FD_PROGRAM);
	if (err == 0)
		err = add(out, n, INIT_PATH);
	if (err == 0)
		err = add(out, n, "--remount-ro");
	if (err == 0)
		err = add(out, n, "/dev");
	if (err == 0)
		err = add(out, n, "--remount-ro");
	if (err == 0)
		err = add(out, n, "/");
	if (err == 0 && s->cwd != NULL) {
		err = add(out, n, "--chdir");
		if (err == 0)
			err = add(out, n, s->cwd);
	}
	if (err == 0)
		err = add(out, n, "--");
	return err;
}

/* The first program and its limits, its output directory and the copies
 * reorder_files asks of it. */
static int
argv_init(const struct sandbox_spec *s, char ***out, size_t *n)
{
	size_t i;
	int err;

	err = add(out, n, INIT_PATH);
	if (err == 0)
		err = add_num(out, n, "-r", INIT_FD_REPORT);
	if (err == 0)
		err = add_num(out, n, "-p", s->processes + INIT_OWN_PROCESSES);
	if (err == 0)
		err = add_num(out, n, "-m", s->memory);
	if (err == 0)
		err = add_num(out, n, "-f", s->output);
	if (err == 0)
		err = add_num(out, n, "-u", s->umask_group_write ? 002 : 022);
	if (err == 0 && s->no_aslr)
		err = add_num(out, n, "-a", 1);
	if (err == 0 && s->reverse_env)
		err = add_num(out, n, "-E", 1);
	if (err == 0 && s->out_dir != NULL) {
		err = add(out, n, "-d");
		if (err == 0)
			err = add(out, n, s->out_dir);
	}
	for (i = 0; err == 0 && s->reorder_files && i < s->nbinds; i++) {
		char *src_at = rba_strdupf(REORDER_SRC "%s", s->binds[i].dst);
		err = src_at == NULL ? RBA_E_NOMEM : add(out, n, "-c");
		if (err == 0)
			err = add(out, n, src_at);
		if (err == 0)
			err = add(out, n, "-t");
		if (err == 0)
			err = add(out, n, s->binds[i].dst);
		free(src_at);
	}
	return err;
}

/* The environment (the base variables, each as the spec overrides it,
 * then the spec's others) and the names to collect. */
static int
argv_env(const struct sandbox_spec *s, char ***out, size_t *n)
{
	static const char *const base_env[][2] = {
		{"LANG", "C.UTF-8"}, {"TZ", "UTC"}, {"PYTHONHASHSEED", "0"},
		{"HOME", "/tmp"}, {"PATH", "/usr/bin:/bin"}};
	size_t i;
	int err = 0;

	for (i = 0; err == 0 && i < sizeof(base_env) / sizeof(base_env[0]); i++) {
		const char *v = base_env[i][1];
		for (size_t j = 0; j < s->nvars; j++)
			if (strcmp(s->var_names[j], base_env[i][0]) == 0)
				v = s->var_values[j];
		err = add_var(out, n, base_env[i][0], v);
	}
	for (i = 0; err == 0 && i < s->nvars; i++) {
		int base = 0;
		for (size_t j = 0; j < sizeof(base_env) / sizeof(base_env[0]); j++)
			base |= strcmp(s->var_names[i], base_env[j][0]) == 0;
		if (!base)
			err = add_var(out, n, s->var_names[i], s->var_values[i]);
	}
	for (i = 0; err == 0 && i < s->ncollect; i++) {
		err = add(out, n, "-o");
		if (err == 0)
			err = add(out, n, s->collect[i]);
	}
	return err;
}

/*
 * The bwrap command line of s: the sandbox (sandbox.h), then the first
 * program with the limits, the environment and the names to collect,
 * then the command.  mapped: the binds as spawn_child maps them.
 */
static int
bwrap_argv(const struct sandbox_spec *s, int mapped, char ***out, size_t *n)
{
	int err;

	*out = NULL;
	*n = 0;
	err = argv_host(s, out, n);
	if (err == 0)
		err = argv_binds(s, mapped, out, n);
	if (err == 0)
		err = argv_init(s, out, n);
	if (err == 0)
		err = argv_env(s, out, n);
	if (err == 0)
		err = add(out, n, "--");
	for (size_t i = 0; err == 0 && i < s->argc; i++)
		err = add(out, n, s->argv[i]);
	if (err == 0 && strv_end(out, *n) != 0)
		err = RBA_E_NOMEM;
	if (err) {
		rba_strv_free(*out, *n);
		*out = NULL;
	}
	return err;
}

/* A memory file holding the first program, at offset 0; -1 on error. */
static int
init_program_fd(void)
{
	const unsigned char *p = rba_sandbox_init_start;
	size_t n = (size_t)(rba_sandbox_init_end - rba_sandbox_init_start);
	int fd = memfd_create("rba-sandbox-init", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			close(fd);
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The first program's report (sandbox_init.c's layout) into r: 0, or -1
 * when it is not one (cut short, another length, another count).
 */
static int
report_parse(const struct sandbox_spec *s, const uint8_t *p, size_t n,
	     struct sandbox_result *r)
{
	struct rba_cursor c;
	uint32_t how, code, count;
	const uint8_t *m;

	rba_cursor_init(&c, p, n);
	m = rba_cursor_bytes(&c, 8);
	how = rba_cursor_u32(&c);
	code = rba_cursor_u32(&c);
	count = rba_cursor_u32(&c);
	if (!rba_cursor_ok(&c) || memcmp(m, SANDBOX_INIT_MAGIC, 8) != 0 ||
	    count != s->ncollect)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t kind = rba_cursor_u32(&c);
		uint64_t len = rba_cursor_u64(&c);
		const uint8_t *b;
		if (!rba_cursor_ok(&c) || kind > SANDBOX_INIT_TOO_LARGE ||
		    (kind != SANDBOX_INIT_REGULAR && len != 0) || len > s->output)
			return -1;
		b = rba_cursor_bytes(&c, (size_t)len);
		if (!rba_cursor_ok(&c))
			return -1;
		r->files[i].kind = (enum sandbox_file_kind)kind;
		if (kind == SANDBOX_INIT_REGULAR) {
			r->files[i].bytes = malloc(len ? (size_t)len : 1);
			if (r->files[i].bytes == NULL)
				return -1;
			memcpy(r->files[i].bytes, b, (size_t)len);
			r->files[i].len = (size_t)len;
		}
	}
	m = rba_cursor_bytes(&c, 4);
	if (!rba_cursor_ok(&c) || memcmp(m, "END\n", 4) != 0 || c.left != 0)
		return -1;
	switch (how) {
	case SANDBOX_INIT_EXITED:
		r->exited = 1;
		r->status = (int)(code & 0xff);
		break;
	case SANDBOX_INIT_SIGNALED:
		r->signaled = 1;
		r->sig = (int)(code & 0x7f);
		break;
	case SANDBOX_INIT_NOT_STARTED:
		r->not_started = 1;
		r->status = (int)(code & 0xffff);
		break;
	default:
		return -1;
	}
	return 0;
}

/*
 * Run as root, in the child before it becomes the sandbox's user: a
 * mount namespace of its own in which each bind's directory is also at
 * BIND_AT, on a fresh tmpfs, so that the unprivileged user reaches it
 * without any right on the path above it ($TMPDIR may be 0700).  0, or
 * -1 where the kernel gives no mount namespace (bwrap then gets the
 * paths themselves).  Only system calls: this runs between fork and
 * exec.
 */
static int
map_binds(const struct sandbox_spec *s)
{
	int fd[MAX_BINDS];
	char at[64], src[64];

	if (unshare(CLONE_NEWNS) != 0)
		return -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		_exit(126);
	/* opened in this namespace (a bind's source must be in it), before
	 * the tmpfs hides what lies under BIND_HOME */
	for (size_t i = 0; i < s->nbinds; i++)
		if ((fd[i] = open(s->binds[i].src, O_PATH | O_DIRECTORY | O_NOFOLLOW |
							   O_CLOEXEC)) < 0)
			_exit(126);
	if (mount("rba-binds", BIND_HOME, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=65536") != 0)
		_exit(126);
	for (size_t i = 0; i < s->nbinds; i++) {
		snprintf(at, sizeof(at), BIND_AT, i);
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fd[i]);
		if (mkdir(at, 0755) != 0 || mount(src, at, NULL, MS_BIND, NULL) != 0)
			_exit(126);
		close(fd[i]);
	}
	return 0;
}

/* In the child of fork: the sandbox user, the descriptors, bwrap. */
static void
spawn_child(const struct sandbox_spec *s, char **direct, char **mapped,
	    const struct sandbox_user *u, pid_t parent, int po, int pe, int pr,
	    int prog)
{
	static char *const no_env[] = {NULL};
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL,
				   SIGPIPE, SIGINT, SIGTERM, SIGHUP};
	int nul = open("/dev/null", O_RDONLY);
	char **argv = direct;

	/* Only async-signal-safe calls between fork and exec. */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	setpgid(0, 0);
	if (u->drop && s->nbinds > 0 && map_binds(s) == 0)
		argv = mapped;
	if (u->drop && (setgroups(0, NULL) != 0 || setgid(u->gid) != 0 ||
			setuid(u->uid) != 0 || getuid() != u->uid))
		_exit(126);
	/* after the change of user, which clears it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	if (nul < 0 || dup2(nul, 0) < 0 || dup2(po, 1) < 0 || dup2(pe, 2) < 0 ||
	    dup2(pr, INIT_FD_REPORT) < 0 || dup2(prog, INIT_FD_PROGRAM) < 0)
		_exit(126);
	close_from(INIT_FD_PROGRAM + 1);
	/* No variable of this tool's reaches any process of the sandbox,
	 * bwrap's own included (its /proc/PID/environ is readable there). */
	execve(argv[0], argv, no_env);
	_exit(127);
}

/* A pipe whose ends are not inherited; 0 or errno. */
static int
pipe_cloexec(int p[2])
{
	if (pipe(p) != 0)
		return errno;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

/* The readers of one run: stdout, stderr and the report. */
struct streams {
	int fd[3];
	struct tail to, te;
	struct rba_hasher ho, he;
	struct rba_buf report;
	uint64_t report_max;
};

/* Reads what is there on the fds of st until all close or time is up. */
static void
read_streams(const struct sandbox_spec *s, struct streams *st, double deadline,
	     struct sandbox_result *r, struct rba_buf *capture)
{
	char buf[65536];

	while (st->fd[0] >= 0 || st->fd[1] >= 0 || st->fd[2] >= 0) {
		struct pollfd fds[3];
		int which[3], nf = 0, k;
		double left = deadline - rba_time_mono();
		if (left <= 0) {
			r->timed_out = 1;
			return;
		}
		for (int i = 0; i < 3; i++)
			if (st->fd[i] >= 0) {
				fds[nf].fd = st->fd[i];
				fds[nf].events = POLLIN;
				which[nf++] = i;
			}
		k = poll(fds, (nfds_t)nf, left > 1000 ? 1000000 : (int)(left * 1000) + 1);
		if (k <= 0)
			continue;
		for (int j = 0; j < nf; j++) {
			int i = which[j];
			ssize_t got;
			if (!(fds[j].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(st->fd[i], buf, sizeof(buf));
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				close(st->fd[i]);
				st->fd[i] = -1;
				continue;
			}
			if (i == 0) {
				r->out_bytes += (uint64_t)got;
				rba_hasher_update(&st->ho, buf, (size_t)got);
				tail_add(&st->to, buf, (size_t)got);
				if (capture != NULL && r->out_bytes <= s->output)
					rba_buf_put(capture, buf, (size_t)got);
			} else if (i == 1) {
				r->err_bytes += (uint64_t)got;
				rba_hasher_update(&st->he, buf, (size_t)got);
				tail_add(&st->te, buf, (size_t)got);
			} else if (st->report.len + (uint64_t)got > st->report_max) {
				r->output_exceeded = 1;
				return;
			} else {
				rba_buf_put(&st->report, buf, (size_t)got);
			}
			if (r->out_bytes + r->err_bytes > s->output) {
				r->output_exceeded = 1;
				return;
			}
		}
	}
}

/* Whether spec s is one the sandbox runs: within the caps, no bind
 * writable.  0 or an error, said in d. */
static int
spec_check(const struct sandbox_spec *s, struct rba_detail *d)
{
	if (s->ncollect > SANDBOX_MAX_COLLECT || s->nbinds > MAX_BINDS)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"too many binds or files for the sandbox");
	for (size_t i = 0; i < s->nbinds; i++)
		if (s->binds[i].writable)
			return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
					"a writable bind of %s: nothing of the "
					"host is writable in the sandbox",
					s->binds[i].src);
	return 0;
}

/*
 * Reads the streams of child pid until they close or time is up (then,
 * or past the output limit, its group is killed) and waits for it;
 * returns its wait status.  Anything of its group left is killed.
 */
static int
watch_child(const struct sandbox_spec *s, struct streams *st, pid_t pid,
	    double deadline, struct sandbox_result *r, struct rba_buf *capture)
{
	int status = 0;

	rba_hasher_init(&st->ho);
	rba_hasher_init(&st->he);
	read_streams(s, st, deadline, r, capture);
	if (r->timed_out || r->output_exceeded) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* Anything of the group left (a sandbox outlives bwrap only until
	 * its PDEATHSIG lands). */
	kill(-pid, SIGKILL);
	return status;
}

/*
 * r from what the run left: the first program's report (bwrap's status
 * when there is none), the digests and tails of stdout and stderr.
 * 0 or RBA_E_NOMEM.
 */
static int
run_result(const struct sandbox_spec *s, struct streams *st, int status,
	   struct sandbox_result *r)
{
	if (!r->timed_out && !r->output_exceeded) {
		if (rba_buf_status(&st->report) != 0)
			return RBA_E_NOMEM;
		if (report_parse(s, st->report.p, st->report.len, r) != 0) {
			/* bwrap failed before the first program reported,
			 * or something killed it: no answer from inside */
			sandbox_result_release(r);
			r->exited = r->signaled = r->not_started = 0;
			r->sandbox_failed = 1;
			r->status = WIFEXITED(status) ? WEXITSTATUS(status)
						      : 128 + WTERMSIG(status);
		}
	}
	rba_hasher_final(&st->ho, &r->out_digest);
	rba_hasher_final(&st->he, &r->err_digest);
	tail_text(&st->to, r->out_tail);
	tail_text(&st->te, r->err_tail);
	return 0;
}

/* sandbox_run without the availability check (sandbox_available's). */
static int
run_spec(const struct sandbox_spec *s, struct sandbox_result *r,
	 struct rba_buf *capture, struct rba_detail *d)
{
	struct streams st;
	struct sandbox_user u;
	char **argv = NULL, why[200];
	size_t argc = 0;
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, pr[2] = {-1, -1}, prog = -1;
	char **margv = NULL;
	size_t margc = 0;
	int status = 0, err;
	pid_t pid, parent = getpid();
	double t0, deadline;

	memset(r, 0, sizeof(*r));
	memset(&st, 0, sizeof(st));
	st.fd[0] = st.fd[1] = st.fd[2] = -1;

	rba_buf_init(&st.report);
	if ((err = spec_check(s, d)) != 0)
		return err;
	if (sandbox_user_get(&u, why, sizeof(why)) != 0)
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
				"sandbox unavailable: %s", why);
	if ((err = bwrap_argv(s, 0, &argv, &argc)) != 0)
		return err;
	if ((err = bwrap_argv(s, 1, &margv, &margc)) != 0) {
		rba_strv_free(argv, argc + 1);
		return err;
	}
	st.report_max = 64 + 12 * (uint64_t)s->ncollect + s->output;
	if ((err = pipe_cloexec(po)) != 0 || (err = pipe_cloexec(pe)) != 0 ||
	    (err = pipe_cloexec(pr)) != 0)
		goto fail;
	if ((prog = init_program_fd()) < 0) {
		err = errno ? errno : EIO;
		goto fail;
	}

	t0 = rba_time_mono();
	deadline = t0 + (double)s->seconds;
	pid = fork();
	if (pid < 0) {
		err = errno;
		goto fail;
	}
	if (pid == 0)
		spawn_child(s, argv, margv, &u, parent, po[1], pe[1], pr[1], prog);
	setpgid(pid, pid); /* either side may win the race */
	close(po[1]);
	close(pe[1]);
	close(pr[1]);
	close(prog);
	po[1] = pe[1] = pr[1] = prog = -1;
	st.fd[0] = po[0];
	st.fd[1] = pe[0];
	st.fd[2] = pr[0];
	po[0] = pe[0] = pr[0] = -1;
	status = watch_child(s, &st, pid, deadline, r, capture);
	r->seconds = rba_time_mono() - t0;
	err = run_result(s, &st, status, r);
	goto done;
fail:
	if (err > 0)
		err = rba_fail(d, err, NULL, 0, 0, "cannot start the sandbox: %s",
			       strerror(err));
done:
	for (int i = 0; i < 3; i++)
		if (st.fd[i] >= 0)
			close(st.fd[i]);
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
		if (pr[i] >= 0)
			close(pr[i]);
	}
	if (prog >= 0)
		close(prog);
	rba_buf_release(&st.report);
	rba_strv_free(argv, argc + 1);
	rba_strv_free(margv, margc + 1);
	return err;
}

int
sandbox_run(const struct sandbox_spec *s, struct sandbox_result *r,
	    struct rba_buf *capture, struct rba_detail *d)
{
	int err;

	memset(r, 0, sizeof(*r));
	if ((err = sandbox_available(d)) != 0)
		return err;
	if (!command_found(s))
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"command not found in the sandbox: %s", s->argv[0]);
	return run_spec(s, r, capture, d);
}

/* The last non-empty line of text (into out, n bytes). */
static void
last_line(const char *text, char *out, size_t n)
{
	size_t len = strlen(text), end, start;

	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	end = len;
	start = end;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	snprintf(out, n, "%.*s", (int)(end - start), text + start);
}

void
sandbox_failure(const struct sandbox_spec *s, const struct sandbox_result *r,
		char *buf, size_t n)
{
	char line[300];

	last_line(r->err_tail, line, sizeof(line));
	if (r->timed_out)
		snprintf(buf, n, "killed at the time limit of %llu s (limits.seconds)",
			 (unsigned long long)s->seconds);
	else if (r->output_exceeded)
		snprintf(buf, n, "killed past the output limit of %llu bytes "
				 "(limits.output)",
			 (unsigned long long)s->output);
	else if (r->sandbox_failed)
		snprintf(buf, n, "did not run: the sandbox failed (status %d)%s%s",
			 r->status, line[0] ? ": " : "", line);
	else if (r->not_started)
		snprintf(buf, n, "could not be started: %s", strerror(r->status));
	else if (r->signaled && r->sig == SIGXFSZ)
		snprintf(buf, n, "killed writing a file over the output limit of "
				 "%llu bytes (limits.output)",
			 (unsigned long long)s->output);
	else if (r->signaled)
		snprintf(buf, n, "killed by signal %d%s%s", r->sig,
			 line[0] ? ": " : "", line);
	else if (r->exited && r->status == 0)
		snprintf(buf, n, "exited with status 0");
	else if (line[0])
		snprintf(buf, n, "exited with status %d: %s", r->status, line);
	else
		snprintf(buf, n, "exited with status %d, printing nothing on stderr",
			 r->status);
}

int
sandbox_dir_make(struct sandbox_dir *w, struct rba_detail *d)
{
	static const char script[] =
		"trap '' INT TERM HUP; cat >/dev/null; i=0; "
		"while [ -e \"$1\" ] && [ $i -lt 200 ]; do "
		"chmod -R u+rwx -- \"$1\" 2>/dev/null; rm -rf -- \"$1\" 2>/dev/null; "
		"[ -e \"$1\" ] && sleep 0.05; i=$((i+1)); done";
	const char *base = getenv("TMPDIR");
	int p[2], err;
	pid_t pid;

	w->fd = -1;
	w->pid = -1;
	if (base == NULL || base[0] != '/')
		base = "/tmp";
	snprintf(w->path, sizeof(w->path), "%s/rba-exec-XXXXXX", base);
	if (mkdtemp(w->path) == NULL) {
		err = errno;
		return rba_fail(d, err, NULL, 0, 0,
				"cannot make a work directory under %s: %s", base,
				strerror(err));
	}
	if (pipe(p) != 0) {
		err = errno;
		rmdir(w->path);
		return rba_fail(d, err, NULL, 0, 0, "pipe: %s", strerror(err));
	}
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(p[0]);
		close(p[1]);
		rmdir(w->path);
		return rba_fail(d, err, NULL, 0, 0, "fork: %s", strerror(err));
	}
	if (pid == 0) {
		char *argv[] = {"/bin/sh", "-c", (char *)script, "rba-exec-reaper",
				w->path, NULL};
		int nul = open("/dev/null", O_RDWR);
		setsid(); /* a terminal's ^C to the group is not for it */
		dup2(p[0], 0);
		dup2(nul, 1);
		dup2(nul, 2);
		close_from(3);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	w->fd = p[1];
	w->pid = pid;
	return 0;
}

void
sandbox_dir_remove(struct sandbox_dir *w)
{
	int st;

	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->pid > 0)
		while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
			;
	w->pid = -1;
}
