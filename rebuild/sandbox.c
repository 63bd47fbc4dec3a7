/* sandbox.c - a command under bubblewrap, limited, and its work directory. */
#include "rebuild/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/rbatime.h"
#include "common/strv.h"

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
#define PRLIMIT "/usr/bin/prlimit" /* util-linux, essential in Debian */

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

static int avail_state; /* 0 unknown, 1 yes, -1 no */
static char avail_why[200];
static char bwrap_name[64] = "bubblewrap";

const char *
sandbox_name(void)
{
	return bwrap_name;
}

const char *
sandbox_description(void)
{
	return "bwrap --unshare-all --die-with-parent --new-session "
	       "--cap-drop ALL --clearenv; /usr ro, /etc: alternatives and "
	       "ld.so only; fresh /proc /dev /tmp (tmpfs of the output limit); "
	       "code and inputs ro, one "
	       "output directory rw; limits: wall time (SIGKILL of the "
	       "group), RLIMIT_AS, RLIMIT_FSIZE, output bytes";
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

int
sandbox_available(struct rba_detail *d)
{
	char *probe[] = {BWRAP, "--unshare-all", "--die-with-parent",
			 "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin",
			 "/bin", "--symlink", "usr/lib", "/lib", "--symlink",
			 "usr/lib64", "/lib64", "--proc", "/proc", "--dev",
			 "/dev", "/usr/bin/true", NULL};
	char *ver[] = {BWRAP, "--version", NULL};
	char out[128];

	if (avail_state == 0) {
		if (access(PRLIMIT, X_OK) != 0) {
			snprintf(avail_why, sizeof(avail_why),
				 "%s is not installed (Debian package util-linux)",
				 PRLIMIT);
			avail_state = -1;
		} else if (access(BWRAP, X_OK) != 0) {
			snprintf(avail_why, sizeof(avail_why),
				 "%s is not installed (Debian package bubblewrap)",
				 BWRAP);
			avail_state = -1;
		} else if (run_plain(probe, out, sizeof(out)) != 0) {
			snprintf(avail_why, sizeof(avail_why),
				 "%s cannot make its namespaces here (user "
				 "namespaces disabled, or a container that forbids "
				 "them)", BWRAP);
			avail_state = -1;
		} else {
			avail_state = 1;
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

/* The bwrap command line of s. */
static int
bwrap_argv(const struct sandbox_spec *s, char ***out, size_t *n)
{
	static const char *const fixed[] = {
		BWRAP, "--unshare-all", "--die-with-parent", "--new-session",
		"--cap-drop", "ALL", "--hostname", "sandbox", "--clearenv",
		"--ro-bind", "/usr", "/usr", "--ro-bind-try",
		"/etc/alternatives", "/etc/alternatives", "--ro-bind-try",
		"/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try",
		"/etc/ld.so.conf", "/etc/ld.so.conf", "--ro-bind-try",
		"/etc/ld.so.conf.d", "/etc/ld.so.conf.d", "--proc", "/proc",
		"--dev", "/dev",
		"--setenv", "LANG", "C.UTF-8", "--setenv", "TZ", "UTC",
		"--setenv", "PYTHONHASHSEED", "0", "--setenv", "HOME", "/tmp",
		"--setenv", "PATH", "/usr/bin:/bin"};
	static const char *const links[] = {"/bin", "/sbin", "/lib", "/lib32",
					    "/lib64", "/libx32"};
	struct stat st;
	char target[256], as[48], fsize[48];
	size_t i;
	int err = 0;

	*out = NULL;
	*n = 0;
	snprintf(as, sizeof(as), "--as=%llu", (unsigned long long)s->memory);
	snprintf(fsize, sizeof(fsize), "--fsize=%llu", (unsigned long long)s->output);
	err = add(out, n, PRLIMIT);
	if (err == 0)
		err = add(out, n, as);
	if (err == 0)
		err = add(out, n, fsize);
	if (err == 0)
		err = add(out, n, "--core=0");
	if (err == 0)
		err = add(out, n, "--");
	for (i = 0; err == 0 && i < sizeof(fixed) / sizeof(fixed[0]); i++)
		err = add(out, n, fixed[i]);
	/* /tmp is memory: it holds at most the output limit. */
	if (err == 0)
		err = add(out, n, "--size");
	if (err == 0)
		err = add(out, n, fsize + 8);
	if (err == 0)
		err = add(out, n, "--tmpfs");
	if (err == 0)
		err = add(out, n, "/tmp");
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
	for (i = 0; err == 0 && i < s->nbinds; i++) {
		err = add(out, n, s->binds[i].writable ? "--bind" : "--ro-bind");
		if (err == 0)
			err = add(out, n, s->binds[i].src);
		if (err == 0)
			err = add(out, n, s->binds[i].dst);
	}
	for (i = 0; err == 0 && i < s->nvars; i++) {
		err = add(out, n, "--setenv");
		if (err == 0)
			err = add(out, n, s->var_names[i]);
		if (err == 0)
			err = add(out, n, s->var_values[i]);
	}
	if (err == 0 && s->cwd != NULL) {
		err = add(out, n, "--chdir");
		if (err == 0)
			err = add(out, n, s->cwd);
	}
	if (err == 0)
		err = add(out, n, "--");
	for (i = 0; err == 0 && i < s->argc; i++)
		err = add(out, n, s->argv[i]);
	if (err == 0 && strv_end(out, *n) != 0)
		err = RBA_E_NOMEM;
	if (err) {
		rba_strv_free(*out, *n);
		*out = NULL;
	}
	return err;
}

int
sandbox_run(const struct sandbox_spec *s, struct sandbox_result *r,
	    struct rba_buf *capture, struct rba_detail *d)
{
	struct tail to, te;
	struct rba_hasher ho, he;
	char **argv = NULL, buf[65536];
	size_t argc = 0;
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, st = 0, err, open_fds = 2;
	pid_t pid, parent = getpid();
	double t0, deadline;

	memset(r, 0, sizeof(*r));
	if ((err = sandbox_available(d)) != 0)
		return err;
	if (!command_found(s))
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"command not found in the sandbox: %s", s->argv[0]);
	if ((err = bwrap_argv(s, &argv, &argc)) != 0)
		return err;
	if (pipe(po) != 0 || pipe(pe) != 0) {
		err = errno;
		goto fail;
	}
	fcntl(po[0], F_SETFD, FD_CLOEXEC);
	fcntl(pe[0], F_SETFD, FD_CLOEXEC);
	t0 = rba_time_mono();
	deadline = t0 + (double)s->seconds;
	pid = fork();
	if (pid < 0) {
		err = errno;
		goto fail;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls between fork and exec; the
		 * limits are set by prlimit(1) in a fresh process image, so
		 * that no page of this copy of the tool faults under them. */
		int nul = open("/dev/null", O_RDONLY);
		static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE,
					   SIGILL, SIGPIPE, SIGINT, SIGTERM,
					   SIGHUP};
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(126);
		dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close_from(3);
		execv(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid); /* either side may win the race */
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	memset(&to, 0, sizeof(to));
	memset(&te, 0, sizeof(te));
	rba_hasher_init(&ho);
	rba_hasher_init(&he);
	while (open_fds > 0) {
		struct pollfd fds[2];
		double left = deadline - rba_time_mono();
		int nf = 0, k;
		if (left <= 0) {
			r->timed_out = 1;
			break;
		}
		if (po[0] >= 0) {
			fds[nf].fd = po[0];
			fds[nf++].events = POLLIN;
		}
		if (pe[0] >= 0) {
			fds[nf].fd = pe[0];
			fds[nf++].events = POLLIN;
		}
		k = poll(fds, (nfds_t)nf, left > 1000 ? 1000000 : (int)(left * 1000) + 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			continue;
		for (int i = 0; i < nf; i++) {
			int is_out = fds[i].fd == po[0];
			ssize_t got;
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(fds[i].fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(fds[i].fd);
				if (is_out)
					po[0] = -1;
				else
					pe[0] = -1;
				open_fds--;
				continue;
			}
			if (is_out) {
				r->out_bytes += (uint64_t)got;
				rba_hasher_update(&ho, buf, (size_t)got);
				tail_add(&to, buf, (size_t)got);
				if (capture != NULL && r->out_bytes <= s->output)
					rba_buf_put(capture, buf, (size_t)got);
			} else {
				r->err_bytes += (uint64_t)got;
				rba_hasher_update(&he, buf, (size_t)got);
				tail_add(&te, buf, (size_t)got);
			}
			if (r->out_bytes + r->err_bytes > s->output)
				r->output_exceeded = 1;
		}
		if (r->output_exceeded)
			break;
	}
	if (r->timed_out || r->output_exceeded) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* Anything of the group left (a sandbox outlives bwrap only until
	 * its PDEATHSIG lands). */
	kill(-pid, SIGKILL);
	r->seconds = rba_time_mono() - t0;
	if (WIFEXITED(st)) {
		r->exited = 1;
		r->status = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		r->signaled = 1;
		r->sig = WTERMSIG(st);
	}
	rba_hasher_final(&ho, &r->out_digest);
	rba_hasher_final(&he, &r->err_digest);
	tail_text(&to, r->out_tail);
	tail_text(&te, r->err_tail);
	err = 0;
fail:
	if (po[0] >= 0)
		close(po[0]);
	if (po[1] >= 0)
		close(po[1]);
	if (pe[0] >= 0)
		close(pe[0]);
	if (pe[1] >= 0)
		close(pe[1]);
	rba_strv_free(argv, argc + 1);
	if (err > 0)
		return rba_fail(d, err, NULL, 0, 0, "cannot start the sandbox: %s",
				strerror(err));
	return err;
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
