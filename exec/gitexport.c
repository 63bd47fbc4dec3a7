/* gitexport.c - a commit's tree written out from its objects, nothing else. */
#define _GNU_SOURCE /* dirfd helpers, O_NOFOLLOW, pipe2 */
#include "exec/gitexport.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/rbatime.h"
#include "common/sha1.h"

#define GIT_PATH "/usr/bin/git"

/* A program started with pipes, waited for within a deadline. */
struct child {
	pid_t pid;
	int in, out, err; /* our ends; -1 when closed */
	double deadline;
	char errline[300];
	size_t errlen;
	int errdone; /* the first line is complete */
	uint8_t buf[65536];
	size_t at, len; /* unread bytes of buf: [at, len) */
	int timed_out;
};

static void
child_close_fds(struct child *c)
{
	if (c->in >= 0)
		close(c->in);
	if (c->out >= 0)
		close(c->out);
	if (c->err >= 0)
		close(c->err);
	c->in = c->out = c->err = -1;
}

/* 0 or an errno; want_in gives the child a pipe for stdin. */
static int
child_start(struct child *c, char *const *argv, char *const *env, int want_in,
	    double deadline)
{
	int pi[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1}, err;

	memset(c, 0, sizeof(*c));
	c->in = c->out = c->err = -1;
	c->pid = -1;
	c->deadline = deadline;
	if ((want_in && pipe2(pi, O_CLOEXEC) != 0) || pipe2(po, O_CLOEXEC) != 0 ||
	    pipe2(pe, O_CLOEXEC) != 0)
		goto fail;
	c->pid = fork();
	if (c->pid < 0)
		goto fail;
	if (c->pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(want_in ? pi[0] : nul, 0) < 0 ||
		    dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
#ifdef SYS_close_range
		syscall(SYS_close_range, 3u, ~0u, 0);
#endif
		signal(SIGPIPE, SIG_DFL);
		setpgid(0, 0);
		if (env != NULL)
			execve(argv[0], argv, env);
		else
			execv(argv[0], argv);
		_exit(127);
	}
	setpgid(c->pid, c->pid);
	if (want_in) {
		close(pi[0]);
		c->in = pi[1];
	}
	close(po[1]);
	close(pe[1]);
	c->out = po[0];
	c->err = pe[0];
	fcntl(c->out, F_SETFL, O_NONBLOCK);
	fcntl(c->err, F_SETFL, O_NONBLOCK);
	if (c->in >= 0)
		fcntl(c->in, F_SETFL, O_NONBLOCK);
	return 0;
fail:
	err = errno;
	for (int i = 0; i < 2; i++) {
		if (pi[i] >= 0)
			close(pi[i]);
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	return err ? err : EIO;
}

/* Keeps the first line of stderr; the rest is read and dropped. */
static void
child_take_err(struct child *c)
{
	char b[4096];
	ssize_t k;

	while ((k = read(c->err, b, sizeof(b))) > 0) {
		for (ssize_t i = 0; i < k && !c->errdone; i++) {
			if (b[i] == '\n') {
				if (c->errlen > 0)
					c->errdone = 1;
				continue;
			}
			if (c->errlen + 1 < sizeof(c->errline))
				c->errline[c->errlen++] = (b[i] >= 0x20 && b[i] < 0x7f) ? b[i] : '?';
		}
		c->errline[c->errlen] = 0;
	}
	if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
		close(c->err);
		c->err = -1;
	}
}

/*
 * Waits until stdout has bytes (1), is at its end (0), or the deadline
 * passed (-1), reading stderr as it comes; with want_write, returns 2
 * as soon as stdin can take bytes.
 */
static int
child_wait(struct child *c, int want_write)
{
	for (;;) {
		struct pollfd f[3];
		int n = 0, k, io = -1, ie = -1, iw = -1;
		double left = c->deadline - rba_time_mono();
		if (left <= 0) {
			c->timed_out = 1;
			return -1;
		}
		if (c->out >= 0) {
			f[n].fd = c->out;
			f[n].events = POLLIN;
			io = n++;
		}
		if (c->err >= 0) {
			f[n].fd = c->err;
			f[n].events = POLLIN;
			ie = n++;
		}
		if (want_write && c->in >= 0) {
			f[n].fd = c->in;
			f[n].events = POLLOUT;
			iw = n++;
		}
		if (n == 0)
			return 0;
		k = poll(f, (nfds_t)n, left > 1000 ? 1000000 : (int)(left * 1000) + 1);
		if (k <= 0)
			continue;
		if (ie >= 0 && f[ie].revents)
			child_take_err(c);
		if (iw >= 0 && f[iw].revents)
			return 2;
		if (io >= 0 && f[io].revents)
			return 1;
		if (c->out < 0)
			return 0;
	}
}

/* Fills c->buf with more of stdout: 1 bytes came, 0 end, -1 deadline. */
static int
child_fill(struct child *c)
{
	if (c->at > 0) {
		memmove(c->buf, c->buf + c->at, c->len - c->at);
		c->len -= c->at;
		c->at = 0;
	}
	for (;;) {
		ssize_t k;
		int w;
		if (c->out < 0)
			return 0;
		k = read(c->out, c->buf + c->len, sizeof(c->buf) - c->len);
		if (k > 0) {
			c->len += (size_t)k;
			return 1;
		}
		if (k == 0) {
			close(c->out);
			c->out = -1;
			return 0;
		}
		if (errno != EAGAIN && errno != EINTR) {
			close(c->out);
			c->out = -1;
			return 0;
		}
		if ((w = child_wait(c, 0)) < 0)
			return -1;
	}
}

/* Writes all of p to stdin: 0, or -1 (deadline or a closed pipe). */
static int
child_write(struct child *c, const void *p, size_t n)
{
	const char *s = p;

	while (n > 0) {
		ssize_t k = write(c->in, s, n);
		if (k > 0) {
			s += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (child_wait(c, 1) < 0)
			return -1;
	}
	return 0;
}

/* Kills (when still running, or always with force) and reaps: the
 * status as git_tool_run returns it. */
static int
child_finish(struct child *c, int force)
{
	int st = 0;

	if (c->in >= 0) {
		close(c->in);
		c->in = -1;
	}
	/* the rest of stderr, for the reason */
	while (!force && !c->timed_out && (c->out >= 0 || c->err >= 0)) {
		if (c->out >= 0) {
			c->at = c->len = 0;
			if (child_fill(c) < 0)
				break;
			c->at = c->len = 0;
			continue;
		}
		if (child_wait(c, 0) < 0)
			break;
	}
	if (force || c->timed_out) {
		kill(-c->pid, SIGKILL);
		kill(c->pid, SIGKILL);
	}
	child_close_fds(c);
	if (c->pid > 0)
		while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
			;
	c->pid = -1;
	if (c->timed_out)
		return -2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int
git_tool_run(char *const *argv, char *const *env, char *out, size_t max,
	     char *errline, size_t errn, double deadline)
{
	struct child c;
	size_t got = 0;
	int r;

	if (errline != NULL && errn > 0)
		errline[0] = 0;
	if (child_start(&c, argv, env, 0, deadline) != 0)
		return -1;
	for (;;) {
		r = child_fill(&c);
		if (r <= 0)
			break;
		for (size_t i = c.at; i < c.len; i++)
			if (out != NULL && got + 1 < max)
				out[got++] = (char)c.buf[i];
		c.at = c.len;
	}
	if (out != NULL && max > 0)
		out[got] = 0;
	r = child_finish(&c, r < 0);
	if (errline != NULL && errn > 0)
		snprintf(errline, errn, "%s", c.errline);
	return r;
}

/* ---- the export ------------------------------------------------------ */

struct exporter {
	const struct git_export_request *rq;
	struct child cat;
	struct git_export_result *res;
	struct rba_detail *d;
	/* The object being read, hashed as git names it: SHA-1 of
	 * "TYPE SIZE\0" and its bytes.  git cat-file does not check that a
	 * stored object hashes to its name; the export does (cat_check). */
	struct rba_sha1 h;
};

/* The one diagnostic of a git that stopped answering. */
static int
git_failed(struct exporter *x, const char *what)
{
	if (x->cat.timed_out)
		return rba_fail(x->d, RBA_E_LIMIT, NULL, 0, 0,
				"exporting commit %s of repository %s took longer "
				"than the time limit (limits.seconds)",
				x->rq->commit, x->rq->repository);
	child_take_err(&x->cat);
	return rba_fail(x->d, RBA_E_IO, NULL, 0, 0,
			"git cat-file failed on %s of commit %s%s%s", what,
			x->rq->commit, x->cat.errline[0] ? ": " : "", x->cat.errline);
}

/* Reads one header line of cat-file into line (n bytes): 0 or -1. */
static int
cat_line(struct exporter *x, char *line, size_t n)
{
	size_t k = 0;

	for (;;) {
		while (x->cat.at < x->cat.len) {
			char ch = (char)x->cat.buf[x->cat.at++];
			if (ch == '\n') {
				line[k] = 0;
				return 0;
			}
			if (k + 1 >= n)
				return -1;
			line[k++] = ch;
		}
		if (child_fill(&x->cat) <= 0)
			return -1;
	}
}

/* Passes the next n bytes of cat-file's output to sink (fd >= 0: written
 * there; mem != NULL: copied), then the newline after them. */
static int
cat_body(struct exporter *x, uint64_t n, int fd, uint8_t *mem)
{
	uint64_t done = 0;

	while (done < n) {
		size_t avail, take;
		if (x->cat.at == x->cat.len && child_fill(&x->cat) <= 0)
			return -1;
		avail = x->cat.len - x->cat.at;
		take = (uint64_t)avail > n - done ? (size_t)(n - done) : avail;
		if (mem != NULL)
			memcpy(mem + done, x->cat.buf + x->cat.at, take);
		if (fd >= 0) {
			size_t w = 0;
			while (w < take) {
				ssize_t k = write(fd, x->cat.buf + x->cat.at + w, take - w);
				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0)
					return errno ? errno : EIO;
				w += (size_t)k;
			}
		}
		rba_sha1_update(&x->h, x->cat.buf + x->cat.at, take);
		x->cat.at += take;
		done += take;
	}
	if (x->cat.at == x->cat.len && child_fill(&x->cat) <= 0)
		return -1;
	if (x->cat.buf[x->cat.at++] != '\n')
		return -1;
	return 0;
}

static void
hex_of(const uint8_t *b, size_t n, char *out)
{
	static const char h[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = h[b[i] >> 4];
		out[2 * i + 1] = h[b[i] & 15];
	}
	out[2 * n] = 0;
}

/* A name or path of a tree as the terminal may show it: bytes outside
 * printable ASCII as '?', at most 96 of them. */
static const char *
shown(const char *p, size_t n, char out[100])
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < 96; i++) {
		unsigned char c = (unsigned char)p[i];
		out[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[k] = 0;
	return out;
}

/*
 * Asks for object id: its type must be want ("commit", "tree", "blob");
 * *size its size.  0; RBA_E_NOTFOUND (missing, or another type: d says),
 * or git_failed's.
 */
static int
cat_ask(struct exporter *x, const char *id, const char *want, uint64_t *size,
	const char *what)
{
	char req[48], line[160], type[16], got[48];
	unsigned long long sz;

	snprintf(req, sizeof(req), "%s\n", id);
	if (child_write(&x->cat, req, strlen(req)) != 0 ||
	    cat_line(x, line, sizeof(line)) != 0)
		return git_failed(x, what);
	if (sscanf(line, "%47s %15s %llu", got, type, &sz) == 3 &&
	    strcmp(got, id) == 0) {
		char head[48];
		int hn = snprintf(head, sizeof(head), "%s %llu", type, sz);
		rba_sha1_init(&x->h);
		rba_sha1_update(&x->h, head, (size_t)hn + 1); /* with its NUL */
		if (strcmp(type, want) != 0) {
			uint8_t *skip = NULL;
			if (cat_body(x, sz, -1, skip) != 0)
				return git_failed(x, what);
			return rba_fail(x->d, RBA_E_NOTFOUND, NULL, 0, 0,
					"%s %s of repository %s is a %s, not a %s",
					what, id, x->rq->repository, type, want);
		}
		*size = (uint64_t)sz;
		return 0;
	}
	if (strstr(line, " missing") != NULL)
		return rba_fail(x->d, RBA_E_NOTFOUND, NULL, 0, 0,
				"%s %s is not in repository %s", what, id,
				x->rq->repository);
	return git_failed(x, what);
}

/*
 * After an object's bytes: they hash to the name it was asked by, or the
 * repository's object store was changed behind its names (a loose
 * object rewritten in place, a pack edited), and the tree written out
 * would not be the commit's.  0 or RBA_E_TAMPERED.
 */
static int
cat_check(struct exporter *x, const char *id, const char *what)
{
	uint8_t md[RBA_SHA1_BYTES];
	char hex[2 * RBA_SHA1_BYTES + 1];

	rba_sha1_final(&x->h, md);
	hex_of(md, sizeof(md), hex);
	if (strcmp(hex, id) == 0)
		return 0;
	return rba_fail(x->d, RBA_E_TAMPERED, NULL, 0, 0,
			"%s %s of commit %s in repository %s does not hash to its "
			"name (its bytes hash to %s): the repository's objects were "
			"changed", what, id, x->rq->commit, x->rq->repository, hex);
}

/* An object of at most GIT_EXPORT_MAX_OBJECT bytes, read whole. */
static int
cat_object(struct exporter *x, const char *id, const char *want, uint8_t **out,
	   size_t *n, const char *what)
{
	uint64_t sz;
	int err;

	*out = NULL;
	if ((err = cat_ask(x, id, want, &sz, what)) != 0)
		return err;
	if (sz > GIT_EXPORT_MAX_OBJECT)
		return rba_fail(x->d, RBA_E_LIMIT, NULL, 0, 0,
				"%s %s of commit %s is %llu bytes, over the limit of "
				"%llu", what, id, x->rq->commit, (unsigned long long)sz,
				(unsigned long long)GIT_EXPORT_MAX_OBJECT);
	if ((*out = malloc(sz ? (size_t)sz : 1)) == NULL)
		return RBA_E_NOMEM;
	if (cat_body(x, sz, -1, *out) != 0) {
		free(*out);
		*out = NULL;
		return git_failed(x, what);
	}
	if ((err = cat_check(x, id, what)) != 0) {
		free(*out);
		*out = NULL;
		return err;
	}
	*n = (size_t)sz;
	return 0;
}

/* The tree and the committer's time of a raw commit object. */
static int
commit_parse(struct exporter *x, const uint8_t *p, size_t n)
{
	const char *s = (const char *)p, *end = s + n;
	int have_tree = 0;

	while (s < end && *s != '\n') {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl != NULL ? (size_t)(nl - s) : (size_t)(end - s);
		if (len == 45 && memcmp(s, "tree ", 5) == 0 && !have_tree) {
			int ok = 1;
			for (int i = 5; i < 45; i++)
				ok &= (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');
			if (ok) {
				memcpy(x->res->tree, s + 5, 40);
				x->res->tree[40] = 0;
				have_tree = 1;
			}
		} else if (len > 10 && memcmp(s, "committer ", 10) == 0) {
			/* "committer NAME <EMAIL> SECONDS ZONE" */
			const char *gt = NULL;
			for (const char *q = s; q < s + len; q++)
				if (*q == '>')
					gt = q;
			if (gt != NULL) {
				char num[32];
				size_t k = 0;
				const char *q = gt + 1;
				while (q < s + len && *q == ' ')
					q++;
				while (q < s + len && *q >= '0' && *q <= '9' && k + 1 < sizeof(num))
					num[k++] = *q++;
				num[k] = 0;
				if (k > 0)
					x->res->time = strtoll(num, NULL, 10);
			}
		}
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	if (!have_tree)
		return rba_fail(x->d, RBA_E_IO, NULL, 0, 0,
				"commit %s of repository %s names no tree",
				x->rq->commit, x->rq->repository);
	return 0;
}

/* Whether a tree entry's name is one git would check out here. */
static int
name_ok(const char *name, size_t n)
{
	if (n == 0 || n > NAME_MAX || memchr(name, '/', n) != NULL)
		return 0;
	if ((n == 1 && name[0] == '.') || (n == 2 && memcmp(name, "..", 2) == 0))
		return 0;
	if (n == 4 && strncasecmp(name, ".git", 4) == 0)
		return 0;
	return 1;
}

static void
times_of(const struct exporter *x, struct timespec ts[2])
{
	ts[0].tv_sec = ts[1].tv_sec = (time_t)x->res->time;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
}

/* Every entry gets the committer's time, as git archive gives it. */
static void
set_time_fd(const struct exporter *x, int fd)
{
	struct timespec ts[2];

	times_of(x, ts);
	futimens(fd, ts);
}

static void
set_time_at(const struct exporter *x, int dirfd, const char *name)
{
	struct timespec ts[2];

	times_of(x, ts);
	utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

static int export_tree(struct exporter *x, const char *id, int dirfd,
		       unsigned depth, const char *path);

/* One blob entry: a file of mode (0644, 0755) or a link (mode 0). */
static int
export_blob(struct exporter *x, const char *id, int dirfd, const char *name,
	    mode_t mode, const char *path)
{
	uint64_t sz;
	int fd, err;

	if ((err = cat_ask(x, id, "blob", &sz, "blob")) != 0)
		return err;
	x->res->bytes += sz;
	if (x->res->bytes > GIT_EXPORT_MAX_BYTES)
		return rba_fail(x->d, RBA_E_LIMIT, NULL, 0, 0,
				"commit %s holds more than %llu bytes of files",
				x->rq->commit, (unsigned long long)GIT_EXPORT_MAX_BYTES);
	if (mode == 0) {
		char target[PATH_MAX], sp[100];
		if (sz >= sizeof(target)) {
			return rba_fail(x->d, RBA_E_SCHEMA, NULL, 0, 0,
					"commit %s: the symbolic link '%s' is too long",
					x->rq->commit, shown(path, strlen(path), sp));
		}
		if (cat_body(x, sz, -1, (uint8_t *)target) != 0)
			return git_failed(x, "blob");
		if ((err = cat_check(x, id, "blob")) != 0)
			return err;
		target[sz] = 0;
		if (strlen(target) != sz || sz == 0)
			return rba_fail(x->d, RBA_E_SCHEMA, NULL, 0, 0,
					"commit %s: the symbolic link '%s' is not a "
					"path", x->rq->commit, shown(path, strlen(path), sp));
		if (symlinkat(target, dirfd, name) != 0)
			goto write_failed;
		set_time_at(x, dirfd, name);
		return 0;
	}
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		goto write_failed;
	err = cat_body(x, sz, fd, NULL);
	if (err == 0 && (err = cat_check(x, id, "blob")) != 0) {
		close(fd);
		return err;
	}
	if (err == 0 && fchmod(fd, mode) != 0)
		err = errno;
	if (err == 0)
		set_time_fd(x, fd);
	close(fd);
	if (err < 0)
		return git_failed(x, "blob");
	if (err > 0) {
		char sp[100];
		return rba_fail(x->d, err, NULL, 0, 0, "writing %s of commit %s: %s",
				shown(path, strlen(path), sp), x->rq->commit,
				strerror(err));
	}
	return 0;
write_failed:
	err = errno;
	{
		char sp[100];
		shown(path, strlen(path), sp);
		if (err == EEXIST)
			return rba_fail(x->d, RBA_E_SCHEMA, NULL, 0, 0,
					"commit %s: its tree holds '%s' twice",
					x->rq->commit, sp);
		return rba_fail(x->d, err, NULL, 0, 0, "writing %s of commit %s: %s",
				sp, x->rq->commit, strerror(err));
	}
}

/* One directory entry (a tree, or an empty one for a submodule). */
static int
export_dir(struct exporter *x, const char *id, int dirfd, const char *name,
	   unsigned depth, const char *path, int submodule)
{
	char sp[100];
	int fd, err;

	shown(path, strlen(path), sp);
	if (depth >= GIT_EXPORT_MAX_DEPTH)
		return rba_fail(x->d, RBA_E_LIMIT, NULL, 0, 0,
				"commit %s: directories deeper than %d at '%s'",
				x->rq->commit, GIT_EXPORT_MAX_DEPTH, sp);
	if (mkdirat(dirfd, name, 0700) != 0) {
		err = errno;
		if (err == EEXIST)
			return rba_fail(x->d, RBA_E_SCHEMA, NULL, 0, 0,
					"commit %s: its tree holds '%s' twice",
					x->rq->commit, sp);
		return rba_fail(x->d, err, NULL, 0, 0, "writing %s of commit %s: %s",
				sp, x->rq->commit, strerror(err));
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rba_fail(x->d, errno, NULL, 0, 0, "opening %s: %s", sp,
				strerror(errno));
	err = submodule ? 0 : export_tree(x, id, fd, depth + 1, path);
	if (err == 0 && fchmod(fd, 0755) != 0)
		err = rba_fail(x->d, errno, NULL, 0, 0, "chmod %s: %s", sp,
			       strerror(errno));
	if (err == 0)
		set_time_fd(x, fd);
	close(fd);
	return err;
}

static int
export_tree(struct exporter *x, const char *id, int dirfd, unsigned depth,
	    const char *path)
{
	uint8_t *t = NULL;
	size_t n = 0, at = 0;
	int err;

	if ((err = cat_object(x, id, "tree", &t, &n, "tree")) != 0)
		return err;
	while (err == 0 && at < n) {
		const uint8_t *sp = memchr(t + at, ' ', n - at), *nul;
		char mode[8], name[NAME_MAX + 1], sub[41], child[PATH_MAX];
		size_t ml, nl;
		if (sp == NULL || (ml = (size_t)(sp - (t + at))) == 0 || ml >= sizeof(mode) ||
		    (nul = memchr(sp + 1, 0, n - (size_t)(sp + 1 - t))) == NULL ||
		    (size_t)(t + n - (nul + 1)) < 20) {
			err = rba_fail(x->d, RBA_E_IO, NULL, 0, 0,
				       "tree %s of commit %s is malformed", id,
				       x->rq->commit);
			break;
		}
		memcpy(mode, t + at, ml);
		mode[ml] = 0;
		nl = (size_t)(nul - (sp + 1));
		if (!name_ok((const char *)sp + 1, nl)) {
			char a[100], b[100];
			err = rba_fail(x->d, RBA_E_SCHEMA, NULL, 0, 0,
				       "commit %s: its tree has an entry git would "
				       "not check out ('%s' in '%s')",
				       x->rq->commit, shown((const char *)sp + 1, nl, a),
				       path[0] ? shown(path, strlen(path), b) : "/");
			break;
		}
		memcpy(name, sp + 1, nl);
		name[nl] = 0;
		hex_of(nul + 1, 20, sub);
		at = (size_t)(nul + 1 - t) + 20;
		snprintf(child, sizeof(child), "%s%s%s", path, path[0] ? "/" : "", name);
		if (++x->res->entries > GIT_EXPORT_MAX_ENTRIES) {
			err = rba_fail(x->d, RBA_E_LIMIT, NULL, 0, 0,
				       "commit %s holds more than %d entries",
				       x->rq->commit, GIT_EXPORT_MAX_ENTRIES);
			break;
		}
		if (strcmp(mode, "40000") == 0)
			err = export_dir(x, sub, dirfd, name, depth, child, 0);
		else if (strcmp(mode, "160000") == 0)
			err = export_dir(x, sub, dirfd, name, depth, child, 1);
		else if (strcmp(mode, "120000") == 0)
			err = export_blob(x, sub, dirfd, name, 0, child);
		else if (strcmp(mode, "100644") == 0 || strcmp(mode, "100755") == 0 ||
			 strcmp(mode, "100664") == 0)
			err = export_blob(x, sub, dirfd, name,
					  strcmp(mode, "100755") == 0 ? 0755 : 0644, child);
		else {
			char a[100], b[100];
			err = rba_fail(x->d, RBA_E_SCHEMA, NULL, 0, 0,
				       "commit %s: '%s' has the mode %s, which git "
				       "does not check out", x->rq->commit,
				       shown(child, strlen(child), a),
				       shown(mode, strlen(mode), b));
		}
	}
	free(t);
	return err;
}

/*
 * A small regular file of the repository (.git, commondir) into out (n
 * bytes), its last newline cut: 0, or -1 when it is not there, not a
 * regular file or larger.  Never blocks (a FIFO is not read).
 */
static int
small_file(const char *path, char *out, size_t n)
{
	struct stat st;
	ssize_t k;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size >= n) {
		close(fd);
		return -1;
	}
	k = read(fd, out, n - 1);
	close(fd);
	if (k < 0)
		return -1;
	out[k] = 0;
	while (k > 0 && (out[k - 1] == '\n' || out[k - 1] == '\r'))
		out[--k] = 0;
	return 0;
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* base/rel, or rel when it is absolute, into out (n bytes). */
static int
join(char *out, size_t n, const char *base, const char *rel)
{
	int k = rel[0] == '/' ? snprintf(out, n, "%s", rel)
			      : snprintf(out, n, "%s/%s", base, rel);

	return k < 0 || (size_t)k >= n ? -1 : 0;
}

/*
 * git's rule of ownership (setup.c, ensure_valid_ownership): the
 * repository is safe when its work tree, its .git file and its git
 * directory belong to the user running git (SUDO_UID's when that is
 * root), or when the system's or the operator's global configuration
 * lists it under safe.directory ('*' for any; an empty value forgets
 * the ones before).  Those two files are read by `git config` outside
 * any repository; the repository's own configuration is never read.
 */
static int
owner_ok(const char *path)
{
	struct stat st;
	uid_t me = geteuid();
	const char *sudo = getenv("SUDO_UID");

	if (me == 0 && sudo != NULL && sudo[0] >= '0' && sudo[0] <= '9')
		me = (uid_t)strtoul(sudo, NULL, 10);
	return lstat(path, &st) == 0 && st.st_uid == me;
}

static int
safe_directory_listed(const char *path, double deadline)
{
	char out[65536], home[PATH_MAX + 8], why[200];
	const char *h = getenv("HOME");
	char *argv[] = {GIT_PATH, "-C", "/", "config", "--get-all", "safe.directory", NULL};
	int safe = 0;

	snprintf(home, sizeof(home), "HOME=%s", h != NULL && h[0] == '/' ? h : "/nonexistent");
	{
		char *env[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", home,
			       "GIT_CEILING_DIRECTORIES=/", NULL};
		if (git_tool_run(argv, env, out, sizeof(out), why, sizeof(why),
				 deadline) < 0)
			return 0;
	}
	for (char *line = strtok(out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char v[PATH_MAX + 8];
		if (line[0] == 0) {
			safe = 0;
			continue;
		}
		if (strcmp(line, "*") == 0) {
			safe = 1;
			continue;
		}
		if (strncmp(line, "~/", 2) == 0 && h != NULL)
			snprintf(v, sizeof(v), "%s/%s", h, line + 2);
		else
			snprintf(v, sizeof(v), "%s", line);
		if (strcmp(v, path) == 0)
			safe = 1;
	}
	return safe;
}

/*
 * Where the repository keeps its objects (objects, n bytes), found as
 * git finds them (a .git directory, a .git file naming one, a bare
 * repository; a commondir file), without running git in it.
 */
static int
objects_dir(const struct git_export_request *rq, char *objects, size_t n,
	    struct rba_detail *d)
{
	char abs[PATH_MAX], dotgit[PATH_MAX + 8], gitdir[PATH_MAX + 8];
	char common[PATH_MAX + 8], text[PATH_MAX + 16], probe[PATH_MAX + 32];
	const char *worktree = abs, *gitfile = NULL;
	struct stat st;

	if (access(GIT_PATH, X_OK) != 0)
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
				"cannot run git (Debian package git)");
	if (realpath(rq->repository, abs) == NULL || !is_dir(abs))
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"repository %s is not a directory git can read",
				rq->repository);
	snprintf(dotgit, sizeof(dotgit), "%s/.git", abs);
	if (lstat(dotgit, &st) == 0 && is_dir(dotgit)) {
		snprintf(gitdir, sizeof(gitdir), "%s", dotgit);
	} else if (lstat(dotgit, &st) == 0) {
		if (small_file(dotgit, text, sizeof(text)) != 0 ||
		    strncmp(text, "gitdir: ", 8) != 0 ||
		    join(gitdir, sizeof(gitdir), abs, text + 8) != 0 || !is_dir(gitdir))
			return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
					"repository %s: its .git is neither a "
					"directory nor a file naming one",
					rq->repository);
		gitfile = dotgit;
	} else {
		snprintf(probe, sizeof(probe), "%s/objects", abs);
		snprintf(text, sizeof(text), "%s/HEAD", abs);
		if (!is_dir(probe) || lstat(text, &st) != 0)
			return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
					"repository %s is not a git repository "
					"(no .git, and not a bare repository)",
					rq->repository);
		snprintf(gitdir, sizeof(gitdir), "%s", abs);
		worktree = NULL;
	}
	if (!((gitfile == NULL || owner_ok(gitfile)) &&
	      (worktree == NULL || owner_ok(worktree)) && owner_ok(gitdir)) &&
	    !safe_directory_listed(worktree != NULL ? worktree : gitdir, rq->deadline))
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"git refuses repository %s: detected dubious "
				"ownership in repository at '%s' (it is not owned by "
				"the user running rebuild-audit; see git config "
				"safe.directory)",
				rq->repository, worktree != NULL ? worktree : gitdir);
	snprintf(probe, sizeof(probe), "%s/commondir", gitdir);
	if (small_file(probe, text, sizeof(text)) == 0) {
		if (join(common, sizeof(common), gitdir, text) != 0)
			return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
					"repository %s: its commondir is too long",
					rq->repository);
	} else {
		snprintf(common, sizeof(common), "%s", gitdir);
	}
	if ((size_t)snprintf(objects, n, "%s/objects", common) >= n || !is_dir(objects))
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"repository %s has no object directory", rq->repository);
	return 0;
}

/* The tool's own empty repository under scratch (path into out). */
static int
shadow_make(const char *scratch, char *out, size_t n, struct rba_detail *d)
{
	static const char config[] = "[core]\n\trepositoryformatversion = 0\n"
				     "\tbare = true\n";
	static const char head[] = "ref: refs/heads/none\n";
	char p[PATH_MAX + 64];
	int fd;

	snprintf(out, n, "%s/shadow.git", scratch);
	if (mkdir(out, 0700) != 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/objects", out);
	if (mkdir(p, 0700) != 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/refs", out);
	if (mkdir(p, 0700) != 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/HEAD", out);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 ||
	    write(fd, head, sizeof(head) - 1) != (ssize_t)(sizeof(head) - 1) ||
	    close(fd) != 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/config", out);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 ||
	    write(fd, config, sizeof(config) - 1) != (ssize_t)(sizeof(config) - 1) ||
	    close(fd) != 0)
		goto fail;
	return 0;
fail:
	return rba_fail(d, errno, NULL, 0, 0, "cannot make %s: %s", out,
			strerror(errno));
}

int
git_export(const struct git_export_request *rq, struct git_export_result *out,
	   struct rba_detail *d)
{
	char objects[PATH_MAX + 16], shadow[PATH_MAX], alt[PATH_MAX + 64];
	char gitdir[PATH_MAX + 16], home[PATH_MAX + 8];
	struct exporter x;
	uint8_t *commit = NULL;
	size_t cn = 0;
	int err, dst, st;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	x.rq = rq;
	x.res = out;
	x.d = d;
	x.cat.pid = -1;
	x.cat.in = x.cat.out = x.cat.err = -1;
	if ((err = objects_dir(rq, objects, sizeof(objects), d)) != 0)
		return err;
	if ((err = shadow_make(rq->scratch, shadow, sizeof(shadow), d)) != 0)
		return err;
	snprintf(alt, sizeof(alt), "GIT_ALTERNATE_OBJECT_DIRECTORIES=%s", objects);
	snprintf(gitdir, sizeof(gitdir), "--git-dir=%s", shadow);
	snprintf(home, sizeof(home), "HOME=%s", rq->scratch);
	{
		/* No configuration but the tool's own repository's, which is
		 * empty: no system or global file, no attributes, no refs,
		 * no replace objects, nothing fetched. */
		char *env[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", home,
			       "XDG_CONFIG_HOME=/nonexistent",
			       "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			       "GIT_ATTR_NOSYSTEM=1", "GIT_NO_REPLACE_OBJECTS=1",
			       "GIT_NO_LAZY_FETCH=1", "GIT_TERMINAL_PROMPT=0",
			       "GIT_OPTIONAL_LOCKS=0", alt, NULL};
		char *argv[] = {GIT_PATH, gitdir, "cat-file", "--batch", NULL};
		if ((err = child_start(&x.cat, argv, env, 1, rq->deadline)) != 0)
			return rba_fail(d, err, NULL, 0, 0, "cannot run git: %s",
					strerror(err));
	}
	err = cat_object(&x, rq->commit, "commit", &commit, &cn, "commit");
	if (err == 0)
		err = commit_parse(&x, commit, cn);
	free(commit);
	if (err == 0) {
		dst = open(rq->dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dst < 0) {
			err = rba_fail(d, errno, NULL, 0, 0, "opening %s: %s", rq->dst,
				       strerror(errno));
		} else {
			err = export_tree(&x, out->tree, dst, 0, "");
			if (err == 0)
				set_time_fd(&x, dst);
			close(dst);
		}
	}
	st = child_finish(&x.cat, err != 0);
	if (err == 0 && st != 0)
		err = rba_fail(d, st == -2 ? RBA_E_LIMIT : RBA_E_IO, NULL, 0, 0,
			       "git cat-file of commit %s ended with status %d%s%s",
			       rq->commit, st, x.cat.errline[0] ? ": " : "",
			       x.cat.errline);
	return err;
}
