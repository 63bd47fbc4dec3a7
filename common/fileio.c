/* fileio.c - bounded reads and atomic writes. */
#define _POSIX_C_SOURCE 200809L
#include "fileio.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
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
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    (uint64_t)st.st_size <= max)
			cap = (size_t)st.st_size + 2;
	}
	p = malloc(cap);
	if (p == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > max + 1) {
				err = RBA_E_LIMIT;
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
			err = RBA_E_LIMIT;
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

int
rba_atomic_commit(struct rba_atomic *a)
{
	int err = 0;

	assert(a->fd >= 0 && a->tmp[0] != 0);
	if (a->fp != NULL) {
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
