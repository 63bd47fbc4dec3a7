/*
 * fleet_prune.c - removing old runs (snapshots and their records) from
 * a shared directory (fleet/fleet.h).
 */
#include "fleet/fleet.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"

/* Whether dir/name is a directory (never through a symbolic link). */
static int
is_dir(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* The marker's mtime of snapshot dfd/rel, or -1 when it is none. */
static int64_t
marker_time(int dfd, const char *rel)
{
	char p[FLEET_PATH_MAX + 64];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", rel, STORE_SNAPSHOT_MARKER);
	if (fstatat(dfd, p, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
		return -1;
	return (int64_t)st.st_mtime;
}

/* Records not imported: .json files at the top of path. */
static size_t
unimported(const char *path)
{
	DIR *dp = opendir(path);
	struct dirent *e;
	size_t n = 0;

	if (dp == NULL)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] != '.' && l > 5 &&
		    strcmp(e->d_name + l - 5, FLEET_RECORD_SUFFIX) == 0)
			n++;
	}
	closedir(dp);
	return n;
}

/*
 * Removes name (relative to dfd) and everything under it, never
 * following a symbolic link.  A directory is given u+rwx first (the
 * owner may; a snapshot is read-only).  0, or an errno with the path
 * that failed in fail (cap bytes; where it is, relative to top).
 */
static int
remove_tree(int dfd, const char *name, const char *where, char *fail,
	    size_t cap)
{
	struct stat st;
	struct dirent *e;
	DIR *dp;
	int fd, err = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		err = errno;
		goto failed;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dfd, name, 0) != 0) {
			err = errno;
			goto failed;
		}
		return 0;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0)
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		goto failed;
	}
	if ((st.st_mode & 0700) != 0700 && fchmod(fd, (st.st_mode & 07777) | 0700) != 0) {
		err = errno;
		close(fd);
		goto failed;
	}
	if ((dp = fdopendir(fd)) == NULL) {
		err = errno;
		close(fd);
		goto failed;
	}
	while (err == 0 && (e = readdir(dp)) != NULL) {
		char sub[FLEET_PATH_MAX + 600];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", where, e->d_name);
		err = remove_tree(dirfd(dp), e->d_name, sub, fail, cap);
	}
	closedir(dp);
	if (err != 0)
		return err;
	if (unlinkat(dfd, name, AT_REMOVEDIR) != 0) {
		err = errno;
		goto failed;
	}
	return 0;
failed:
	snprintf(fail, cap, "%s", where);
	return err;
}

/* dir's lock names this run ("run=PATH", its last component). */
static int
locked_by(const char *dir, const char *name)
{
	char p[FLEET_PATH_MAX + 64], line[FLEET_PATH_MAX + 64];
	int hit = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/%s", dir, FLEET_LOCK_DIR, FLEET_LOCK_OWNER);
	if ((f = fopen(p, "r")) == NULL)
		return 0;
	while (!hit && fgets(line, sizeof(line), f) != NULL) {
		size_t l = strlen(line);
		const char *run, *base;
		if (l && line[l - 1] == '\n')
			line[--l] = 0;
		if (strncmp(line, "run=", 4) != 0)
			continue;
		run = line + 4;
		while (l > 4 && line[l - 1] == '/')
			line[--l] = 0;
		base = strrchr(run, '/');
		base = base ? base + 1 : run;
		hit = strcmp(base, name) == 0;
	}
	fclose(f);
	return hit;
}

static int
cmp_run(const void *va, const void *vb)
{
	const struct fleet_prune_run *a = va, *b = vb;

	if (a->made != b->made)
		return a->made < b->made ? -1 : 1;
	return strcmp(a->path, b->path);
}

static int
run_add(struct fleet_prune *p, size_t *cap, const char *dir, const char *name,
	const char *records, int64_t made)
{
	struct fleet_prune_run *r;

	if (p->n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct fleet_prune_run *nv = realloc(p->runs, c * sizeof(*nv));
		if (nv == NULL)
			return RBA_E_NOMEM;
		p->runs = nv;
		*cap = c;
	}
	r = &p->runs[p->n];
	memset(r, 0, sizeof(*r));
	r->made = made;
	if ((r->path = malloc(strlen(dir) + strlen(name) + 2)) == NULL)
		return RBA_E_NOMEM;
	sprintf(r->path, "%s/%s", dir, name);
	if (records != NULL) {
		if ((r->records = malloc(strlen(dir) + strlen(records) + 2)) == NULL) {
			free(r->path);
			return RBA_E_NOMEM;
		}
		sprintf(r->records, "%s/%s", dir, records);
	}
	p->n++;
	return 0;
}

/* The runs of dir into p (unsorted). */
static int
runs_scan(const char *dir, int dfd, struct fleet_prune *p, struct rba_detail *d)
{
	struct dirent *e;
	size_t cap = 0;
	DIR *dp;
	int fd, err = 0;

	if ((fd = dup(dfd)) < 0 || (dp = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return rba_fail(d, errno, dir, 0, 0, "cannot read the directory");
	}
	while (err == 0 && (e = readdir(dp)) != NULL) {
		char sub[FLEET_PATH_MAX + 64], rec[FLEET_PATH_MAX + 64];
		const char *records = NULL;
		int64_t t;
		if (e->d_name[0] == '.' || strcmp(e->d_name, FLEET_LOCK_DIR) == 0 ||
		    strlen(e->d_name) > FLEET_PATH_MAX || !is_dir(dfd, e->d_name))
			continue;
		if ((t = marker_time(dfd, e->d_name)) >= 0) {
			/* A bare snapshot, and its records sibling. */
			if (strncmp(e->d_name, "snapshot-", 9) == 0) {
				snprintf(rec, sizeof(rec), "records-%s", e->d_name + 9);
				if (is_dir(dfd, rec))
					records = rec;
			}
		} else {
			snprintf(sub, sizeof(sub), "%s/%s", e->d_name, FLEET_RUN_SNAPSHOT);
			if (!is_dir(dfd, sub) || (t = marker_time(dfd, sub)) < 0)
				continue;
			snprintf(rec, sizeof(rec), "%s/%s", e->d_name, FLEET_RUN_RECORDS);
			if (is_dir(dfd, rec))
				records = rec;
		}
		err = run_add(p, &cap, dir, e->d_name, records, t);
	}
	closedir(dp);
	return err;
}

int
fleet_prune_runs(const char *dir, unsigned keep, int dry_run,
		 struct fleet_prune *out, struct rba_detail *d)
{
	int dfd, err;

	memset(out, 0, sizeof(*out));
	if (strlen(dir) > FLEET_PATH_MAX)
		return rba_fail(d, ENAMETOOLONG, dir, 0, 0, "path too long");
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return rba_fail(d, errno, dir, 0, 0, "cannot read the directory");
	if ((err = runs_scan(dir, dfd, out, d)) != 0)
		goto out;
	if (out->n > 1)
		qsort(out->runs, out->n, sizeof(*out->runs), cmp_run);
	for (size_t i = 0; i < out->n; i++) {
		struct fleet_prune_run *r = &out->runs[i];
		const char *name = r->path + strlen(dir) + 1;
		if (i + keep >= out->n) {
			r->fate = FLEET_PRUNE_NEWEST;
			continue;
		}
		if (locked_by(dir, name)) {
			r->fate = FLEET_PRUNE_LOCKED;
			continue;
		}
		if (r->records != NULL && (r->unimported = unimported(r->records)) > 0) {
			r->fate = FLEET_PRUNE_UNIMPORTED;
			continue;
		}
		r->fate = FLEET_PRUNE_REMOVED;
		if (dry_run)
			continue;
		/* The records first: a snapshot left alone is still a run. */
		if (r->records != NULL &&
		    strncmp(r->records, r->path, strlen(r->path)) != 0) {
			const char *rn = r->records + strlen(dir) + 1;
			r->err = remove_tree(dfd, rn, r->records, r->fail_path,
					     sizeof(r->fail_path));
		}
		if (r->err == 0)
			r->err = remove_tree(dfd, name, r->path, r->fail_path,
					     sizeof(r->fail_path));
		if (r->err != 0)
			r->fate = FLEET_PRUNE_FAILED;
		else
			out->removed++;
	}
	if (!dry_run)
		(void)fsync(dfd);
out:
	close(dfd);
	return err;
}

void
fleet_prune_release(struct fleet_prune *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->runs[i].path);
		free(p->runs[i].records);
	}
	free(p->runs);
	memset(p, 0, sizeof(*p));
}
