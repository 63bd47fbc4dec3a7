/* fileio.c - bounded reads, atomic writes and outputs. */
#define _GNU_SOURCE /* renameat2 and RENAME_NOREPLACE, where glibc has them */
#include "fileio.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
set_file(struct rba_detail *d, const char *path)
{
	if (d == NULL)
		return;
	snprintf(d->file, sizeof(d->file), "%s", path);
}

/* n bytes as the largest binary unit that divides them ("512 MiB"),
 * or as bytes. */
static void
fmt_size(uint64_t n, char *out, size_t cap)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	int u = -1;

	while (u < 3 && n >= 1024 && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, cap, "%llu bytes", (unsigned long long)n);
	else
		snprintf(out, cap, "%llu %s", (unsigned long long)n, unit[u]);
}

/*
 * The refusal of a file over its reader's limit: which file, how big
 * when it is a regular file (size; else at least seen), and the limit.
 */
static int
over_limit(struct rba_detail *d, const char *path, uint64_t size, int known,
	   size_t max)
{
	char lim[64];

	fmt_size(max, lim, sizeof(lim));
	if (known)
		return rba_fail(d, RBA_E_LIMIT, path, 0, 0,
				"'%s' has %llu bytes, over the limit of %zu bytes "
				"(%s) for this input",
				path, (unsigned long long)size, max, lim);
	return rba_fail(d, RBA_E_LIMIT, path, 0, 0,
			"'%s' has more than %zu bytes, over the limit (%s) for "
			"this input",
			path, max, lim);
}

int
rba_file_read(const char *path, size_t max, uint8_t **out, size_t *len,
	      struct rba_detail *d)
{
	int fd, err = 0;
	size_t cap = 4096, n = 0;
	uint8_t *p = NULL, *q;
	ssize_t r;

	*out = NULL;
	*len = 0;
	set_file(d, path);
	fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	{
		/* A regular file is read into one buffer of its size (plus
		 * one byte, to see it did not grow), not by doubling. */
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			/* over the limit already: said before anything is read */
			if ((uint64_t)st.st_size > max) {
				err = over_limit(d, path, (uint64_t)st.st_size, 1, max);
				goto out;
			}
			if (st.st_size > 0)
				cap = (size_t)st.st_size + 2;
		}
	}
	p = malloc(cap);
	if (p == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > max + 1) {
				err = over_limit(d, path, 0, 0, max);
				goto out;
			}
			cap *= 2;
			q = realloc(p, cap);
			if (q == NULL) {
				err = RBA_E_NOMEM;
				goto out;
			}
			p = q;
		}
		r = read(fd, p + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			err = over_limit(d, path, 0, 0, max);
			goto out;
		}
	}
	p[n] = 0;
	*out = p;
	*len = n;
	p = NULL;
out:
	free(p);
	if (fd != STDIN_FILENO)
		close(fd);
	return err;
}

void
rba_atomic_init(struct rba_atomic *a)
{
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

int
rba_atomic_open(struct rba_atomic *a, const char *path, int mode)
{
	static unsigned counter;

	rba_atomic_init(a);
	if (strlen(path) >= sizeof(a->path))
		return ENAMETOOLONG;
	snprintf(a->path, sizeof(a->path), "%s", path);
	snprintf(a->tmp, sizeof(a->tmp), "%s.tmp-%ld-%u", path, (long)getpid(),
		 counter++);
	a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     mode);
	if (a->fd < 0) {
		a->tmp[0] = 0;
		return errno;
	}
	return 0;
}

FILE *
rba_atomic_stdio(struct rba_atomic *a)
{
	if (a->fp == NULL && a->fd >= 0)
		a->fp = fdopen(a->fd, "w");
	return a->fp;
}

int
rba_atomic_write(struct rba_atomic *a, const void *p, size_t n)
{
	const uint8_t *b = p;

	assert(a->fd >= 0);
	if (a->fp != NULL)
		return fwrite(p, 1, n, a->fp) == n ? 0 : (errno ? errno : EIO);
	while (n > 0) {
		ssize_t w = write(a->fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int
rba_fsync_parent(const char *path)
{
	char tmp[4096];
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s", path);
	fd = open(dirname(tmp), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fsync(fd) != 0 && errno != EINVAL)
		err = errno;
	close(fd);
	return err;
}

/* Flushes, fsyncs and closes the temporary; 0 or errno.  Not renamed. */
static int
atomic_close(struct rba_atomic *a)
{
	int err = 0;

	assert(a->fd >= 0 && a->tmp[0] != 0);
	if (a->fp != NULL) {
		errno = 0;
		if (fflush(a->fp) != 0 || ferror(a->fp))
			err = errno ? errno : EIO;
	}
	if (!err && fsync(a->fd) != 0)
		err = errno;
	if (a->fp != NULL) {
		if (fclose(a->fp) != 0 && !err)
			err = errno;
		a->fp = NULL;
	} else if (close(a->fd) != 0 && !err) {
		err = errno;
	}
	a->fd = -1;
	return err;
}

int
rba_atomic_commit(struct rba_atomic *a)
{
	int err = atomic_close(a);

	if (!err && rename(a->tmp, a->path) != 0)
		err = errno;
	if (err) {
		unlink(a->tmp);
		a->tmp[0] = 0;
		return err;
	}
	a->tmp[0] = 0;
	return rba_fsync_parent(a->path);
}

void
rba_atomic_abort(struct rba_atomic *a)
{
	if (a->fp != NULL)
		fclose(a->fp);
	else if (a->fd >= 0)
		close(a->fd);
	a->fp = NULL;
	a->fd = -1;
	if (a->tmp[0])
		unlink(a->tmp);
	a->tmp[0] = 0;
}

int
rba_atomic_sweep(const char *path)
{
	char dir[4096], base[4096], prefix[4200], full[8400];
	const char *dname;
	DIR *dp;
	struct dirent *e;
	size_t plen;
	int removed = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	snprintf(prefix, sizeof(prefix), "%s.tmp-", basename(base));
	plen = strlen(prefix);
	/* dirname may return a static "." instead of editing dir */
	dname = dirname(dir);
	dp = opendir(dname);
	if (dp == NULL)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		char *end;
		long pid;

		if (strncmp(e->d_name, prefix, plen) != 0)
			continue;
		pid = strtol(e->d_name + plen, &end, 10);
		if (end == e->d_name + plen || *end != '-')
			continue;
		if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) == 0)
			continue; /* a live writer owns it */
		snprintf(full, sizeof(full), "%s/%s", dname, e->d_name);
		if (unlink(full) == 0)
			removed++;
	}
	closedir(dp);
	return removed;
}

int
rba_file_write_atomic(const char *path, const void *p, size_t n, int mode)
{
	struct rba_atomic a;
	int err = rba_atomic_open(&a, path, mode);

	if (err)
		return err;
	err = rba_atomic_write(&a, p, n);
	if (err) {
		rba_atomic_abort(&a);
		return err;
	}
	return rba_atomic_commit(&a);
}

/* ---- outputs --------------------------------------------------------------- */

enum { OUT_IDLE, OUT_TEMP, OUT_DIRECT, OUT_DASH };

/*
 * Records err for path in d with reason, or the text of err, lower case
 * as every diagnostic is ("No space left on device" from strerror).
 */
static int
out_fail(struct rba_detail *d, const char *path, int err, const char *reason)
{
	char r[sizeof(d->reason)];

	if (d == NULL)
		return err;
	snprintf(r, sizeof(r), "%s", reason != NULL ? reason : rba_strerror(err));
	if (r[0] >= 'A' && r[0] <= 'Z' && r[1] >= 'a' && r[1] <= 'z')
		r[0] = (char)(r[0] - 'A' + 'a');
	return rba_fail(d, err, path, 0, 0, "%s", r);
}

/*
 * Why what lstat found at a path is no place for an output (a regular
 * file: only without force).  0 when it may be used.
 */
static int
out_refusal(const struct stat *st, int force, const char **reason)
{
	*reason = NULL;
	if (S_ISREG(st->st_mode)) {
		if (force)
			return 0;
		*reason = "exists (use --force to replace it)";
		return RBA_E_EXISTS;
	}
	if (S_ISDIR(st->st_mode)) {
		*reason = "is a directory";
		return EISDIR;
	}
	if (S_ISLNK(st->st_mode))
		*reason = "is a symbolic link (an output never replaces one "
			  "or writes through it, --force or not)";
	else if (S_ISBLK(st->st_mode))
		*reason = "is a block device (not an output, --force or not)";
	else if (S_ISSOCK(st->st_mode))
		*reason = "is a socket (not an output, --force or not)";
	else
		*reason = "is not a regular file (not an output, --force or not)";
	return RBA_E_EXISTS;
}

/*
 * What a failed output left in the caller's stream is dropped and its
 * error cleared: the failure is said once, by whoever reports it, not
 * again when the caller's standard output is flushed at exit.
 */
static void
dash_drop(FILE *f)
{
	__fpurge(f);
	clearerr(f);
}

void
rba_output_abort(struct rba_output *o)
{
	rba_atomic_abort(&o->a);
	if (o->kind == OUT_DIRECT) {
		if (o->fp != NULL)
			fclose(o->fp);
		else if (o->fd >= 0)
			close(o->fd);
	} else if (o->kind == OUT_DASH && o->fp != NULL) {
		dash_drop(o->fp);
	}
	o->fp = NULL;
	o->fd = -1;
	o->kind = OUT_IDLE;
	o->err = 0;
}

/* A device or a FIFO: opened as it is (never created, never truncated). */
static int
out_direct(struct rba_output *o, int follow, struct rba_detail *d)
{
	struct stat st;
	const char *reason;

	o->fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (o->fd < 0) {
		int err = errno;
		if (err != ELOOP)
			return out_fail(d, o->path, err, NULL);
		st.st_mode = S_IFLNK; /* it became one since lstat looked */
		out_refusal(&st, 0, &reason);
		return out_fail(d, o->path, RBA_E_EXISTS, reason);
	}
	o->kind = OUT_DIRECT;
	/* It may have changed since lstat looked: what was opened counts. */
	if (fstat(o->fd, &st) != 0) {
		int err = errno;
		rba_output_abort(o);
		return out_fail(d, o->path, err, NULL);
	}
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		int err = out_refusal(&st, 0, &reason);
		rba_output_abort(o);
		return out_fail(d, o->path, err ? err : RBA_E_EXISTS, reason);
	}
	return 0;
}

int
rba_output_open(struct rba_output *o, const char *path, int mode, int flags,
		FILE *dash, struct rba_detail *d)
{
	struct stat st, target;
	const char *reason;
	int err;

	rba_atomic_init(&o->a);
	o->path[0] = 0;
	o->fd = -1;
	o->fp = NULL;
	o->kind = OUT_IDLE;
	o->flags = flags;
	o->err = 0;
	if (path[0] == '\0')
		return out_fail(d, path, RBA_E_USAGE, "empty file name");
	if (strlen(path) >= sizeof(o->path))
		return out_fail(d, path, ENAMETOOLONG, NULL);
	snprintf(o->path, sizeof(o->path), "%s", path);
	if (strcmp(path, "-") == 0) {
		if (dash == NULL)
			return out_fail(d, path, RBA_E_USAGE,
					"standard output carries the report "
					"here: name a file");
		o->fp = dash;
		o->kind = OUT_DASH;
		return 0;
	}
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT)
			return out_fail(d, path, errno, NULL);
	} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		return out_direct(o, 0, d);
	} else if (S_ISLNK(st.st_mode) && stat(path, &target) == 0 &&
		   (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode))) {
		return out_direct(o, 1, d); /* /dev/stdout, /dev/fd/N */
	} else if ((err = out_refusal(&st, flags & RBA_OUTPUT_FORCE, &reason)) != 0) {
		return out_fail(d, path, err, reason);
	}
	rba_atomic_sweep(path);
	if ((err = rba_atomic_open(&o->a, path, mode)) != 0)
		return out_fail(d, path, err, NULL);
	o->kind = OUT_TEMP;
	return 0;
}

int
rba_output_check(const char *path, int flags, struct rba_detail *d)
{
	struct stat st;
	const char *reason;
	int err;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : out_fail(d, path, errno, NULL);
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return out_fail(d, path, RBA_E_EXISTS,
				"is a device or a FIFO (this output is a file)");
	if ((err = out_refusal(&st, flags & RBA_OUTPUT_FORCE, &reason)) != 0)
		return out_fail(d, path, err, reason);
	return 0;
}

int
rba_output_direct(const struct rba_output *o)
{
	return o->kind == OUT_DIRECT || o->kind == OUT_DASH;
}

FILE *
rba_output_stdio(struct rba_output *o)
{
	if (o->kind == OUT_TEMP)
		return rba_atomic_stdio(&o->a);
	if (o->kind == OUT_DIRECT && o->fp == NULL && o->fd >= 0)
		o->fp = fdopen(o->fd, "w");
	if (o->fp == NULL && o->kind == OUT_IDLE)
		errno = EBADF;
	return o->fp;
}

int
rba_output_write(struct rba_output *o, const void *p, size_t n)
{
	const uint8_t *b = p;
	int err = 0;

	assert(o->kind != OUT_IDLE);
	if (o->err)
		return o->err;
	if (o->kind == OUT_TEMP) {
		err = rba_atomic_write(&o->a, p, n);
	} else if (o->fp != NULL) {
		errno = 0;
		if (fwrite(p, 1, n, o->fp) != n)
			err = errno ? errno : EIO;
	} else {
		while (n > 0) {
			ssize_t w = write(o->fd, b, n);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				err = errno;
				break;
			}
			b += w;
			n -= (size_t)w;
		}
	}
	o->err = err;
	return err;
}

int
rba_output_sink(void *o, const uint8_t *p, size_t n)
{
	return rba_output_write(o, p, n);
}

/*
 * Renames tmp to path unless path exists: renameat2's RENAME_NOREPLACE,
 * else link(2), which refuses an existing name too (the temporary's name
 * goes after), else, on a file system with neither, a last look and a
 * rename.  0, EEXIST or an errno; tmp is gone on success.
 */
int
rba_rename_new(const char *tmp, const char *path)
{
	struct stat st;

#ifdef RENAME_NOREPLACE
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP &&
	    errno != EOPNOTSUPP)
		return errno;
#endif
	if (link(tmp, path) == 0) {
		unlink(tmp);
		return 0;
	}
	if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP &&
	    errno != ENOSYS)
		return errno;
	if (lstat(path, &st) == 0)
		return EEXIST;
	return rename(tmp, path) == 0 ? 0 : errno;
}

/* The temporary of o into place by the rule; 0, or err with d filled. */
static int
out_place(struct rba_output *o, struct rba_detail *d)
{
	struct stat st;
	const char *reason;
	int err;

	if ((o->flags & RBA_OUTPUT_FORCE) && lstat(o->path, &st) == 0) {
		/* Only a regular file is replaced, whatever came there since. */
		if ((err = out_refusal(&st, 1, &reason)) != 0)
			return out_fail(d, o->path, err, reason);
		if (rename(o->a.tmp, o->path) != 0)
			return out_fail(d, o->path, errno, NULL);
		return 0;
	}
	err = rba_rename_new(o->a.tmp, o->path);
	if (err == EEXIST) {
		if (lstat(o->path, &st) != 0 || out_refusal(&st, 0, &reason) == 0)
			reason = "exists (use --force to replace it)";
		return out_fail(d, o->path, RBA_E_EXISTS, reason);
	}
	return err ? out_fail(d, o->path, err, NULL) : 0;
}

int
rba_output_commit(struct rba_output *o, struct rba_detail *d)
{
	int err = o->err;

	assert(o->kind != OUT_IDLE);
	if (err) {
		out_fail(d, o->path, err, NULL);
		rba_output_abort(o);
		return err;
	}
	switch (o->kind) {
	case OUT_TEMP:
		if ((err = atomic_close(&o->a)) != 0)
			out_fail(d, o->path, err, NULL);
		else
			err = out_place(o, d);
		if (err == 0) {
			o->a.tmp[0] = 0; /* its name is the output's now */
			if ((err = rba_fsync_parent(o->path)) != 0)
				out_fail(d, o->path, err, NULL);
		}
		break;
	case OUT_DIRECT:
		/* Nothing to sync on a device or a FIFO; every write counts. */
		if (o->fp != NULL) {
			errno = 0;
			if (fflush(o->fp) != 0 || ferror(o->fp))
				err = errno ? errno : EIO;
			if (fclose(o->fp) != 0 && !err)
				err = errno ? errno : EIO;
		} else if (close(o->fd) != 0) {
			err = errno;
		}
		o->fp = NULL;
		o->fd = -1;
		if (err)
			out_fail(d, o->path, err, NULL);
		break;
	case OUT_DASH:
		errno = 0;
		if (fflush(o->fp) != 0 || ferror(o->fp)) {
			err = out_fail(d, o->path, errno ? errno : EIO, NULL);
			dash_drop(o->fp);
		}
		o->fp = NULL;
		break;
	}
	o->kind = OUT_IDLE;
	rba_atomic_abort(&o->a); /* the temporary, when it is still there */
	return err;
}

int
rba_file_write_output(const char *path, const void *p, size_t n, int mode,
		      int flags, FILE *dash, struct rba_detail *d)
{
	struct rba_output o = RBA_OUTPUT_INIT;
	int err = rba_output_open(&o, path, mode, flags, dash, d);

	if (err)
		return err;
	if ((err = rba_output_write(&o, p, n)) != 0) {
		out_fail(d, path, err, NULL);
		rba_output_abort(&o);
		return err;
	}
	return rba_output_commit(&o, d);
}

/* ---- temporary files ------------------------------------------------------ */

const char *
rba_tmpdir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir == NULL || *dir == '\0' ? "/tmp" : dir;
}

int
rba_tmpfile(const char *what, int *fd, struct rba_detail *d)
{
	const char *dir = rba_tmpdir();
	char path[4096];
	int err;

	*fd = -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/rebuild-audit-%s.XXXXXX", dir,
			     what) >= sizeof(path))
		return rba_fail(d, ENAMETOOLONG, NULL, 0, 0,
				"cannot create a temporary file in '%s': %s", dir,
				rba_strerror(ENAMETOOLONG));
	if ((*fd = mkstemp(path)) < 0) {
		err = errno;
		return rba_fail(d, err, NULL, 0, 0,
				"cannot create a temporary file in '%s': %s", dir,
				rba_strerror(err));
	}
	unlink(path);
	(void)fcntl(*fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

/* ---- input spooled before a lock ------------------------------------------ */

int
rba_input_spool(int fd, const char *name, uint64_t max, int *out,
		uint64_t *size, struct rba_detail *d)
{
	const char *dir = rba_tmpdir();
	uint8_t *buf = NULL;
	struct stat st;
	uint64_t total = 0;
	int tmp = -1, err = 0;

	*out = -1;
	*size = 0;
	if (fstat(fd, &st) != 0)
		return out_fail(d, name, errno, NULL);
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	if ((err = rba_tmpfile("input", &tmp, d)) != 0)
		return err;
	if ((buf = malloc(1u << 20)) == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, 1u << 20);
		const uint8_t *p = buf;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = out_fail(d, name, errno, NULL);
			goto out;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (total > max) {
			err = rba_fail(d, RBA_E_LIMIT, name, 0, 0,
				       "input over %llu bytes",
				       (unsigned long long)max);
			goto out;
		}
		while (n > 0) {
			ssize_t w = write(tmp, p, (size_t)n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				err = errno;
				rba_fail(d, err, NULL, 0, 0,
					 "writing a temporary file in '%s': %s", dir,
					 rba_strerror(err));
				goto out;
			}
			p += w;
			n -= w;
		}
	}
	if (lseek(tmp, 0, SEEK_SET) != 0) {
		err = errno;
		rba_fail(d, err, NULL, 0, 0, "a temporary file in '%s': %s", dir,
			 rba_strerror(err));
	}
out:
	free(buf);
	if (err) {
		close(tmp);
		return err;
	}
	*out = tmp;
	*size = total;
	return 0;
}

int
rba_input_spool_path(const char *path, uint64_t max, int *out, uint64_t *size,
		     struct rba_detail *d)
{
	int in = strcmp(path, "-") == 0 ? STDIN_FILENO
					: open(path, O_RDONLY | O_CLOEXEC);
	int err;

	*out = -1;
	*size = 0;
	if (in < 0)
		return 0;
	err = rba_input_spool(in, path, max, out, size, d);
	if (in != STDIN_FILENO)
		close(in);
	return err;
}
