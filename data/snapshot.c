/* snapshot.c - parse, hash, compress and store CSV snapshots in one pass. */
#include "data/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"

#define META_TAG 'S'
#define META_VERSION 1

void
snapshot_info_release(struct snapshot_info *info)
{
	if (info == NULL)
		return;
	store_blob_info_release(&info->blob);
	for (size_t i = 0; info->names && i < info->ncols; i++)
		free(info->names[i]);
	free(info->names);
	free(info->types);
	memset(info, 0, sizeof(*info));
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/*
 * The parse runs in a second thread, fed through a pipe, while this
 * thread reads, hashes, compresses and stores the same bytes: the two
 * halves cost about the same, so a snapshot goes in at the speed of the
 * slower one instead of their sum.
 */
struct parser {
	int fd;		/* read end of the pipe */
	const char *name;
	struct csv_summary sum;
	struct rba_detail d;
	int err;
	atomic_int failed;
};

static void *
parse_main(void *arg)
{
	struct parser *ps = arg;
	struct csv_reader *r = NULL;
	char sink[65536];

	ps->err = csv_reader_open_fd(ps->fd, ps->name, &r);
	/* The empty field is the default missing value (pins data.missing):
	 * a snapshot with one in a numeric column is stored; which fields
	 * are missing is the pins' to say when it is trained on. */
	if (ps->err == 0) {
		static const char *const empty[] = {""};
		static const struct csv_missing dflt = {1, empty};
		ps->err = csv_validate_missing(r, &dflt, &ps->sum, &ps->d);
	}
	csv_reader_free(r);
	if (ps->err) {
		atomic_store(&ps->failed, 1);
		/* Drain so the writer never blocks on a full pipe. */
		while (read(ps->fd, sink, sizeof(sink)) > 0)
			;
	}
	return NULL;
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Reads path (or in, when it is not -1: path's bytes already open)
 * through the blob writer and the pipe; 0 or an error in d.
 */
static int
feed(const char *path, int in, struct store_blob_writer *w, int pipe_w,
     atomic_int *failed, struct rba_detail *d)
{
	uint8_t *buf = malloc(STORE_CHUNK_MAX);
	int fd, err = 0;
	ssize_t n;

	if (buf == NULL)
		return RBA_E_NOMEM;
	fd = in >= 0 ? in
	     : strcmp(path, "-") == 0 ? STDIN_FILENO
				      : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		free(buf);
		return rba_fail(d, err, path, 0, 0, "%s", strerror(err));
	}
	while (!atomic_load(failed)) {
		n = read(fd, buf, STORE_CHUNK_MAX);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			rba_fail(d, err, path, 0, 0, "%s", strerror(err));
			break;
		}
		if (n == 0)
			break;
		err = store_blob_writer_add(w, buf, (size_t)n, d);
		if (err == 0)
			err = write_all(pipe_w, buf, (size_t)n);
		if (err)
			break;
	}
	if (fd != STDIN_FILENO && fd != in)
		close(fd);
	free(buf);
	return err;
}

/* snapshot_add of path's bytes from in (-1: open path). */
static int
add_from(struct store_txn *txn, const char *path, int in, const char *name,
	 struct rba_digest *digest, int *existed, struct rba_detail *d);

int
snapshot_add(struct store_txn *txn, const char *path, const char *name,
	     struct rba_digest *digest, int *existed, struct rba_detail *d)
{
	return add_from(txn, path, -1, name, digest, existed, d);
}

static int
add_from(struct store_txn *txn, const char *path, int in, const char *name,
	 struct rba_digest *digest, int *existed, struct rba_detail *d)
{
	struct store_blob_writer *w = NULL;
	struct parser ps;
	struct rba_buf meta;
	pthread_t th;
	int err, pfd[2], perr, started = 0;

	memset(&ps, 0, sizeof(ps));
	rba_buf_init(&meta);
	if (in < 0 && access(path, R_OK) != 0 && strcmp(path, "-") != 0) {
		err = errno;
		return rba_fail(d, err, path, 0, 0, "%s", strerror(err));
	}
	err = store_blob_writer_new(txn, STORE_BLOB_SNAPSHOT, &w, d);
	if (err)
		return err;
	if (pipe(pfd) != 0) {
		err = errno;
		store_blob_writer_free(w);
		return rba_fail(d, err, path, 0, 0, "%s", strerror(err));
	}
#ifdef F_SETPIPE_SZ
	/* Fewer, larger hand-overs between the threads (best effort). */
	(void)fcntl(pfd[1], F_SETPIPE_SZ, (int)STORE_CHUNK_MAX);
#endif
	ps.fd = pfd[0];
	ps.name = path;
	atomic_init(&ps.failed, 0);
	if ((perr = pthread_create(&th, NULL, parse_main, &ps)) == 0)
		started = 1;
	if (started)
		err = feed(path, in, w, pfd[1], &ps.failed, d);
	else
		err = perr;
	close(pfd[1]); /* EOF for the parser */
	if (started)
		pthread_join(th, NULL);
	close(pfd[0]);
	/*
	 * feed() returns 0 when it stopped because the parser failed; any
	 * other error is its own (the store, a read), and the parser's
	 * complaint about the input cut short is then beside the point.
	 * Otherwise a parse error names the file, line and column.
	 */
	if (err == 0 && ps.err) {
		err = ps.err;
		if (d != NULL)
			*d = ps.d;
	}
	if (err)
		goto out;
	rba_buf_put_u8(&meta, META_TAG);
	rba_buf_put_u8(&meta, META_VERSION);
	rba_buf_put_u64(&meta, ps.sum.nrows);
	rba_buf_put_u32(&meta, (uint32_t)ps.sum.ncols);
	for (size_t i = 0; i < ps.sum.ncols; i++) {
		rba_buf_put_str(&meta, ps.sum.names[i]);
		rba_buf_put_u8(&meta, (uint8_t)ps.sum.types[i]);
	}
	if ((err = rba_buf_status(&meta)) != 0)
		goto out;
	if (name == NULL)
		name = strcmp(path, "-") == 0 ? "" : base_name(path);
	err = store_blob_writer_finish(w, name, meta.p, meta.len, digest, existed, d);
out:
	store_blob_writer_free(w);
	csv_summary_release(&ps.sum);
	rba_buf_release(&meta);
	return err;
}

/* Decodes the meta record of a snapshot blob into info. */
static int
meta_decode(struct snapshot_info *info, struct rba_detail *d)
{
	struct rba_cursor c;
	char dg[RBA_DIGEST_TEXT_LEN + 1];
	uint32_t ncols;

	rba_digest_format(&info->blob.digest, dg);
	if (info->blob.kind != STORE_BLOB_SNAPSHOT) {
		rba_detail_key(d, dg);
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"%s is not a snapshot", dg);
	}
	rba_cursor_init(&c, info->blob.meta, info->blob.meta_len);
	if (rba_cursor_u8(&c) != META_TAG || rba_cursor_u8(&c) != META_VERSION)
		goto corrupt;
	info->rows = rba_cursor_u64(&c);
	ncols = rba_cursor_u32(&c);
	if (!rba_cursor_ok(&c) || ncols == 0 || ncols > CSV_MAX_FIELDS)
		goto corrupt;
	info->names = calloc(ncols, sizeof(*info->names));
	info->types = calloc(ncols, sizeof(*info->types));
	if (info->names == NULL || info->types == NULL)
		return RBA_E_NOMEM;
	info->ncols = ncols;
	for (uint32_t i = 0; i < ncols; i++) {
		info->names[i] = rba_cursor_strdup(&c, CSV_MAX_NAME);
		info->types[i] = (enum csv_coltype)rba_cursor_u8(&c);
		if (!rba_cursor_ok(&c) || (info->types[i] != CSV_NUMERIC &&
					   info->types[i] != CSV_TEXT))
			goto corrupt;
	}
	if (c.left != 0)
		goto corrupt;
	return 0;
corrupt:
	rba_detail_key(d, dg);
	return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
			"malformed snapshot record of %s", dg);
}

int
snapshot_info_get(struct store_txn *txn, const struct rba_digest *digest,
		  struct snapshot_info *out, struct rba_detail *d)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = store_blob_info(txn, digest, &out->blob, d);
	if (err == 0)
		err = meta_decode(out, d);
	if (err)
		snapshot_info_release(out);
	return err;
}

int
snapshot_resolve(struct store_txn *txn, const char *prefix,
		 struct snapshot_info *out, struct rba_detail *d)
{
	struct rba_digest dg;
	int err;

	memset(out, 0, sizeof(*out));
	err = store_blob_resolve(txn, prefix, STORE_BLOB_SNAPSHOT, &dg, d);
	if (err)
		return err;
	return snapshot_info_get(txn, &dg, out, d);
}

struct list_ctx {
	int (*cb)(void *ctx, const struct snapshot_info *info);
	void *ctx;
	struct rba_detail *d;
};

static int
list_one(void *vctx, const struct store_blob_info *b)
{
	struct list_ctx *lc = vctx;
	struct snapshot_info info;
	int err;

	memset(&info, 0, sizeof(info));
	info.blob = *b; /* borrowed: detach before release */
	err = meta_decode(&info, lc->d);
	if (err == 0)
		err = lc->cb(lc->ctx, &info);
	memset(&info.blob, 0, sizeof(info.blob));
	snapshot_info_release(&info);
	return err;
}

int
snapshot_list(struct store_txn *txn,
	      int (*cb)(void *ctx, const struct snapshot_info *info), void *ctx,
	      struct rba_detail *d)
{
	struct list_ctx lc = { cb, ctx, d };

	return store_blob_list(txn, STORE_BLOB_SNAPSHOT, list_one, &lc, d);
}

static int
discard_chunk(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	return 0;
}

int
snapshot_export_output(struct store_txn *txn, const struct rba_digest *digest,
		       struct rba_output *out, struct rba_detail *d)
{
	int err = 0;

	/* What goes straight out cannot be taken back: verify it all
	 * first.  A temporary is renamed into place only after the read,
	 * which verifies each chunk before handing it over, succeeded. */
	if (rba_output_direct(out))
		err = store_blob_read(txn, digest, discard_chunk, NULL, d);
	if (err == 0 && rba_output_stdio(out) == NULL)
		err = errno ? errno : RBA_E_NOMEM;
	if (err == 0)
		err = store_blob_read(txn, digest, rba_output_sink, out, d);
	if (err != 0 && out->err != 0)
		err = rba_fail(d, out->err, out->path, 0, 0, "%s",
			       rba_strerror(out->err));
	return err;
}

int
snapshot_export(struct store_txn *txn, const struct rba_digest *digest,
		const char *out_path, FILE *dash, struct rba_detail *d)
{
	struct rba_output o = RBA_OUTPUT_INIT;
	int err = rba_output_open(&o, out_path, 0644, RBA_OUTPUT_FORCE, dash, d);

	if (err)
		return err;
	if ((err = snapshot_export_output(txn, digest, &o, d)) != 0) {
		rba_output_abort(&o);
		return err;
	}
	return rba_output_commit(&o, d);
}

int
snapshot_load(struct store_txn *txn, const struct rba_digest *digest,
	      uint8_t **p, size_t *n, struct rba_detail *d)
{
	return store_blob_load(txn, digest, SNAPSHOT_MAX_LOAD, p, n, d);
}

int
snapshot_add_store(struct store *st, const char *path, const char *name,
		   struct rba_digest *digest, int *existed,
		   struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct stat sb;
	uint64_t hint = 0, spooled = 0;
	int dash = strcmp(path, "-") == 0, err = 0, spool = -1;

	/* Input that is not a file (standard input, a pipe, a FIFO) is read
	 * whole first: whoever sends it slowly must not hold the store's
	 * write lock, and every other writer, meanwhile.  Spooled, it has a
	 * size and can be read again. */
	if ((err = rba_input_spool_path(path, RBA_SPOOL_MAX, &spool, &spooled,
					d)) != 0)
		return err;
	if (spool >= 0) {
		hint = spooled;
		dash = 0;
	} else if (!dash && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		hint = (uint64_t)sb.st_size;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		rba_detail_clear(d);
		if (spool >= 0 && lseek(spool, 0, SEEK_SET) != 0) {
			err = rba_fail(d, errno, path, 0, 0, "%s", rba_strerror(errno));
			break;
		}
		if ((err = store_txn_begin(st, 1, hint, &txn, d)) != 0)
			break;
		err = add_from(txn, path, spool, name, digest, existed, d);
		if (err == 0)
			err = store_txn_commit(txn, d);
		else
			store_txn_abort(txn);
		txn = NULL;
		if (err != RBA_E_LIMIT || dash || d->line != 0)
			break;
		hint = hint * 2 + (256u << 20);
	}
	if (err == RBA_E_LIMIT && d->line == 0 && dash)
		snprintf(d->reason, sizeof(d->reason), "%s",
			 "the store's map is full: give the file by name, so the "
			 "map can grow to its size before the write");
	if (spool >= 0)
		close(spool);
	return err;
}
