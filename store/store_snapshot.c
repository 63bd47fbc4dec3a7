/*
 * store_snapshot.c - read-only copies of a store for cluster workers
 * (store.h, snapshots): made with mdb_env_copy2(MDB_CP_COMPACT), marked
 * with the head they hold, opened without locks and refused when a
 * worker could write to them.
 */
#include "store/store_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"

#define MARKER_MAX 512 /* bytes of a marker file */

static int
path_join(char *out, size_t cap, const char *dir, const char *name,
	  struct rba_detail *d)
{
	int n = snprintf(out, cap, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= cap)
		return rba_fail(d, ENAMETOOLONG, NULL, 0, 0,
				"path too long: '%s'", dir);
	return 0;
}

static void
marker_format(const struct store_snapshot_info *in, char *out, size_t cap)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(&in->head, hex);
	snprintf(out, cap, "%s\nstore_id %s\nhead_id %llu\nhead %s\n",
		 STORE_SNAPSHOT_MAGIC, in->store_id,
		 (unsigned long long)in->head_id, hex);
}

/* The head and id of an open store, in one read transaction. */
static int
read_head(struct store *s, int verify, struct store_snapshot_info *in,
	  struct rba_detail *d)
{
	struct store_txn *txn;
	int err;

	memset(in, 0, sizeof(*in));
	snprintf(in->store_id, sizeof(in->store_id), "%s", store_id_hex(s));
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	err = verify ? store_history_verify(txn, NULL, NULL, d) : 0;
	if (err == 0)
		err = store_history_head(txn, &in->head_id, &in->head, d);
	store_txn_abort(txn);
	return err;
}

static int
fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (fsync(fd) != 0)
		err = errno;
	close(fd);
	return err;
}

int
store_snapshot_make(struct store *s, const char *out,
		    struct store_snapshot_info *info, struct rba_detail *d)
{
	struct store_snapshot_info in;
	struct store *copy = NULL;
	struct stat st;
	char tmp[4096], data[4096 + 32], marker[4096 + 32], text[MARKER_MAX];
	int rc, err, n;

	if (out == NULL || out[0] == 0)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "empty snapshot path");
	if (lstat(out, &st) == 0)
		return rba_fail(d, RBA_E_EXISTS, NULL, 0, 0,
				"'%s' exists: a snapshot is made into a new "
				"directory", out);
	n = snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", out, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return rba_fail(d, ENAMETOOLONG, NULL, 0, 0, "path too long: '%s'",
				out);
	if ((err = path_join(data, sizeof(data), tmp, "data.mdb", d)) != 0 ||
	    (err = path_join(marker, sizeof(marker), tmp, STORE_SNAPSHOT_MARKER,
			     d)) != 0)
		return err;
	if (mkdir(tmp, 0755) != 0)
		return rba_fail(d, errno, NULL, 0, 0, "cannot create '%s': %s", tmp,
				strerror(errno));
	/* A consistent copy from one read transaction, free pages left out. */
	rc = mdb_env_copy2(s->env, tmp, MDB_CP_COMPACT);
	if (rc != 0) {
		err = store_write_fail(d, rc, "copying the store", tmp, 0);
		goto fail;
	}
	if ((err = fsync_path(data)) != 0) {
		rba_fail(d, err, NULL, 0, 0, "cannot sync '%s': %s", data,
			 strerror(err));
		goto fail;
	}
	/* The marker says what the copy holds, read from the copy itself. */
	if ((err = store_open_env(tmp, 1, 1, &copy, d)) != 0)
		goto fail;
	err = read_head(copy, 1, &in, d);
	store_close(copy);
	if (err != 0)
		goto fail;
	marker_format(&in, text, sizeof(text));
	if ((err = rba_file_write_atomic(marker, text, strlen(text), 0444)) != 0) {
		rba_fail(d, err, NULL, 0, 0, "cannot write '%s': %s", marker,
			 strerror(err));
		goto fail;
	}
	if (chmod(data, 0444) != 0 || chmod(marker, 0444) != 0) {
		err = errno;
		rba_fail(d, err, NULL, 0, 0, "cannot make '%s' read-only: %s", tmp,
			 strerror(err));
		goto fail;
	}
	/* Renaming a directory needs write permission on it: read-only
	 * after the rename.  A crash in between leaves a writable
	 * directory, which workers refuse. */
	if (rename(tmp, out) != 0) {
		err = errno;
		rba_fail(d, err, NULL, 0, 0, "cannot rename '%s' to '%s': %s", tmp,
			 out, strerror(err));
		goto fail;
	}
	if (chmod(out, 0555) != 0) {
		err = errno;
		return rba_fail(d, err, NULL, 0, 0, "cannot make '%s' read-only: %s",
				out, strerror(err));
	}
	(void)rba_fsync_parent(out);
	if (info != NULL)
		*info = in;
	return 0;
fail:
	unlink(marker);
	unlink(data);
	{
		char lock[4096 + 32];
		if (path_join(lock, sizeof(lock), tmp, "lock.mdb", NULL) == 0)
			unlink(lock);
	}
	rmdir(tmp);
	return err;
}

static int
marker_parse(const char *text, struct store_snapshot_info *in)
{
	char hex[128];
	unsigned long long id;
	int used = 0;

	memset(in, 0, sizeof(*in));
	if (strncmp(text, STORE_SNAPSHOT_MAGIC "\n", strlen(STORE_SNAPSHOT_MAGIC) + 1))
		return -1;
	text += strlen(STORE_SNAPSHOT_MAGIC) + 1;
	if (sscanf(text, "store_id %32[0-9a-f]\nhead_id %llu\nhead %71s\n%n",
		   in->store_id, &id, hex, &used) != 3 || used == 0 ||
	    text[used] != 0 || strlen(in->store_id) != 32 ||
	    rba_digest_parse(hex, &in->head) != 0)
		return -1;
	in->head_id = id;
	return 0;
}

/* A write permission bit, or write access granted to this process. */
static int
writable(const char *path, struct stat *st)
{
	if (st->st_mode & 0222)
		return 1;
	return geteuid() != 0 && access(path, W_OK) == 0;
}

int
store_snapshot_open(const char *path, struct store **out,
		    struct store_snapshot_info *info, struct rba_detail *d)
{
	struct store_snapshot_info want, got;
	struct stat st;
	char data[4096 + 32], marker[4096 + 32];
	uint8_t *text = NULL;
	size_t len;
	int err;

	*out = NULL;
	if (path == NULL || path[0] == 0)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "empty store path");
	if ((err = path_join(data, sizeof(data), path, "data.mdb", d)) != 0 ||
	    (err = path_join(marker, sizeof(marker), path, STORE_SNAPSHOT_MARKER,
			     d)) != 0)
		return err;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return rba_fail(d, RBA_E_NOSTORE, NULL, 0, 0, "no store at '%s'", path);
	if (lstat(marker, &st) != 0 || !S_ISREG(st.st_mode))
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"not a snapshot made by 'rebuild-audit store "
				"snapshot' (no %s file): workers read only "
				"snapshots, never the store itself",
				STORE_SNAPSHOT_MARKER);
	if (rba_file_read(marker, MARKER_MAX, &text, &len, NULL) != 0 ||
	    strlen((const char *)text) != len ||
	    marker_parse((const char *)text, &want) != 0) {
		free(text);
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"not a snapshot: '%s' is not a snapshot marker",
				marker);
	}
	free(text);
	{
		const char *files[3] = { path, data, marker };
		for (int i = 0; i < 3; i++) {
			if (stat(files[i], &st) != 0)
				return rba_fail(d, RBA_E_NOSTORE, NULL, 0, 0,
						"no store at '%s'", path);
			if (writable(files[i], &st))
				return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
						"a worker could write to '%s': "
						"a snapshot is read-only (chmod "
						"a-w, as 'store snapshot' leaves "
						"it)", files[i]);
		}
	}
	if ((err = store_open_env(path, 1, 1, out, d)) != 0)
		return err;
	if ((err = read_head(*out, 0, &got, d)) != 0)
		goto fail;
	if (strcmp(got.store_id, want.store_id) != 0) {
		err = rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
			       "tampered: the snapshot holds store %s but its "
			       "marker says %s", got.store_id, want.store_id);
		goto fail;
	}
	if (got.head_id != want.head_id ||
	    !rba_digest_equal(&got.head, &want.head)) {
		char a[RBA_DIGEST_TEXT_LEN + 1], b[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&got.head, a);
		rba_digest_format(&want.head, b);
		err = rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
			       "tampered: the snapshot's history head is record "
			       "%llu %s but its marker says record %llu %s",
			       (unsigned long long)got.head_id, a,
			       (unsigned long long)want.head_id, b);
		goto fail;
	}
	if (info != NULL)
		*info = want;
	return 0;
fail:
	store_close(*out);
	*out = NULL;
	return err;
}
