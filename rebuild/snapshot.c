/* snapshot.c - parse, hash, compress and store CSV snapshots in one pass. */
#include "snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int
tap_to_blob(void *ctx, const uint8_t *p, size_t n)
{
	return store_blob_writer_add(ctx, p, n, NULL);
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int
snapshot_add(struct store_txn *txn, const char *path, const char *name,
	     struct rba_digest *digest, int *existed, struct rba_detail *d)
{
	struct store_blob_writer *w = NULL;
	struct csv_reader *r = NULL;
	struct csv_summary sum;
	struct rba_buf meta;
	int err;

	memset(&sum, 0, sizeof(sum));
	rba_buf_init(&meta);
	err = csv_reader_open(path, NULL, &r, d);
	if (err)
		return err;
	err = store_blob_writer_new(txn, STORE_BLOB_SNAPSHOT, &w, d);
	if (err)
		goto out;
	/* Every byte read is hashed and stored as it is parsed. */
	csv_reader_set_tap(r, tap_to_blob, w);
	err = csv_validate(r, &sum, d);
	if (err) {
		if (err != RBA_E_NOMEM && d != NULL && d->file[0] == 0)
			snprintf(d->file, sizeof(d->file), "%s", path);
		goto out;
	}
	rba_buf_put_u8(&meta, META_TAG);
	rba_buf_put_u8(&meta, META_VERSION);
	rba_buf_put_u64(&meta, sum.nrows);
	rba_buf_put_u32(&meta, (uint32_t)sum.ncols);
	for (size_t i = 0; i < sum.ncols; i++) {
		rba_buf_put_str(&meta, sum.names[i]);
		rba_buf_put_u8(&meta, (uint8_t)sum.types[i]);
	}
	if ((err = rba_buf_status(&meta)) != 0)
		goto out;
	if (name == NULL)
		name = strcmp(path, "-") == 0 ? "" : base_name(path);
	err = store_blob_writer_finish(w, name, meta.p, meta.len, digest, existed, d);
out:
	store_blob_writer_free(w);
	csv_reader_free(r);
	csv_summary_release(&sum);
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
write_chunk(void *ctx, const uint8_t *p, size_t n)
{
	return rba_atomic_write(ctx, p, n);
}

static int
discard_chunk(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	return 0;
}

static int
stdout_chunk(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	return fwrite(p, 1, n, stdout) == n ? 0 : (errno ? errno : EIO);
}

int
snapshot_export(struct store_txn *txn, const struct rba_digest *digest,
		const char *out_path, struct rba_detail *d)
{
	struct rba_atomic a;
	int err;

	if (strcmp(out_path, "-") == 0) {
		err = store_blob_read(txn, digest, discard_chunk, NULL, d);
		if (err == 0)
			err = store_blob_read(txn, digest, stdout_chunk, NULL, d);
		return err;
	}
	rba_atomic_sweep(out_path);
	err = rba_atomic_open(&a, out_path, 0644);
	if (err)
		return rba_fail(d, err, out_path, 0, 0, "%s", strerror(err));
	err = store_blob_read(txn, digest, write_chunk, &a, d);
	if (err) {
		rba_atomic_abort(&a);
		return err;
	}
	err = rba_atomic_commit(&a);
	if (err)
		return rba_fail(d, err, out_path, 0, 0, "%s", strerror(err));
	return 0;
}

int
snapshot_load(struct store_txn *txn, const struct rba_digest *digest,
	      uint8_t **p, size_t *n, struct rba_detail *d)
{
	return store_blob_load(txn, digest, SNAPSHOT_MAX_LOAD, p, n, d);
}
