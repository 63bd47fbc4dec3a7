/* store_blob.c - content-addressed blobs: writer, info, resolve, reads. */
#include "store/store_priv.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store_blob_writer {
	struct store_wlink link; /* link.txn: the transaction, or NULL */
	int kind;
	int state; /* OPEN, FINISHED or FAILED */
	uint64_t serial;
	uint8_t *buf; /* the chunk being filled */
	size_t fill;
	struct store_zc zc;
	struct rba_hasher whole;
	uint64_t size;
	uint64_t stored;
	uint32_t chunks; /* temporary chunks written */
	struct store_hashjob hj;
};

enum { W_OPEN, W_FINISHED, W_FAILED };

static void
digest_key_text(const struct rba_digest *dg, struct rba_detail *d)
{
	char text[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(dg, text);
	rba_detail_key(d, text);
}

static void
tmp_key(uint64_t serial, uint32_t chunk, uint8_t key[BLOB_TMP_KEY_LEN])
{
	key[0] = 0xff;
	memcpy(key + 1, "tmp", 3);
	store_be64(key + 4, serial);
	store_be32(key + 12, chunk);
}

/* ---- info records ------------------------------------------------------ */

static void
info_encode(struct rba_buf *b, const struct store_blob_info *info)
{
	store_rec_start(b, TAG_BLOB_INFO);
	rba_buf_put(b, info->digest.b, RBA_DIGEST_LEN);
	rba_buf_put_u8(b, (uint8_t)info->kind);
	rba_buf_put_u64(b, info->size);
	rba_buf_put_u32(b, info->chunks);
	rba_buf_put_u64(b, info->stored_size);
	rba_buf_put_u64(b, (uint64_t)info->added);
	rba_buf_put_str(b, info->name != NULL ? info->name : "");
	rba_buf_put_lstr(b, info->meta, info->meta_len);
	store_rec_seal(b);
}

static int
info_decode(const MDB_val *v, const struct rba_digest *key,
	    struct store_blob_info *info, struct rba_detail *d)
{
	struct rba_cursor c;
	const uint8_t *dg, *meta;
	size_t meta_len;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = store_rec_open_sealed(v, TAG_BLOB_INFO, &c, "blob record", d);
	if (rc != 0)
		goto fail;
	dg = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	info->kind = rba_cursor_u8(&c);
	info->size = rba_cursor_u64(&c);
	info->chunks = rba_cursor_u32(&c);
	info->stored_size = rba_cursor_u64(&c);
	info->added = (int64_t)rba_cursor_u64(&c);
	info->name = store_cursor_cstr(&c, STORE_BLOB_NAME_MAX);
	meta = (const uint8_t *)rba_cursor_lstr(&c, STORE_BLOB_META_MAX,
						&meta_len);
	if (!rba_cursor_ok(&c) || c.left != 0 ||
	    memcmp(dg, key->b, RBA_DIGEST_LEN) != 0 ||
	    info->kind < STORE_BLOB_SNAPSHOT || info->kind > STORE_BLOB_OTHER) {
		rc = rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
			      "blob record: malformed");
		goto fail;
	}
	if (meta_len > 0) {
		info->meta = malloc(meta_len);
		if (info->meta == NULL) {
			rc = RBA_E_NOMEM;
			goto fail;
		}
		memcpy(info->meta, meta, meta_len);
		info->meta_len = meta_len;
	}
	info->digest = *key;
	return 0;
fail:
	digest_key_text(key, d);
	store_blob_info_release(info);
	return rc;
}

void
store_blob_info_release(struct store_blob_info *info)
{
	if (info == NULL)
		return;
	free(info->name);
	free(info->meta);
	memset(info, 0, sizeof(*info));
}

static int
info_put(struct store_txn *txn, const struct store_blob_info *info,
	 struct rba_detail *d)
{
	struct rba_buf b;
	int rc;

	rba_buf_init(&b);
	info_encode(&b, info);
	rc = rba_buf_status(&b);
	if (rc == 0)
		rc = store_put(txn, DB_BLOBS, info->digest.b, BLOB_KEY_LEN, b.p,
			       b.len, 0, "storing a blob record", d);
	else
		rc = store_txn_fail(txn, d, rc);
	rba_buf_release(&b);
	return rc;
}

int
store_blob_info(struct store_txn *txn, const struct rba_digest *digest,
		struct store_blob_info *info, struct rba_detail *d)
{
	MDB_val v;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = store_txn_check(txn, d);
	if (rc != 0)
		return rc;
	rc = store_get(txn, DB_BLOBS, digest->b, BLOB_KEY_LEN, &v, d);
	if (rc == RBA_E_NOTFOUND) {
		char text[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(digest, text);
		rba_detail_key(d, text);
		return rba_fail(d, rc, NULL, 0, 0, "no blob %s in the store",
				text);
	}
	if (rc != 0)
		return rc;
	return info_decode(&v, digest, info, d);
}

/* ---- the writer ------------------------------------------------------ */

static int
writer_live(struct store_blob_writer *w, struct rba_detail *d)
{
	if (w == NULL || w->link.txn == NULL)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"the blob writer's transaction has ended");
	if (w->state != W_OPEN)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				w->state == W_FINISHED ? "the blob is finished"
						       : "the blob writer failed");
	return store_txn_check(w->link.txn, d);
}

int
store_blob_writer_new(struct store_txn *txn, int kind,
		      struct store_blob_writer **out, struct rba_detail *d)
{
	struct store_blob_writer *w;
	int rc;

	*out = NULL;
	rc = store_txn_writable(txn, d);
	if (rc != 0)
		return rc;
	if (kind < STORE_BLOB_SNAPSHOT || kind > STORE_BLOB_OTHER)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"unknown blob kind %d", kind);
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return RBA_E_NOMEM;
	w->buf = malloc(STORE_CHUNK_MAX);
	rc = w->buf == NULL ? RBA_E_NOMEM : store_zc_init(&w->zc, d);
	if (rc != 0) {
		free(w->buf);
		free(w);
		return rc;
	}
	w->kind = kind;
	w->serial = txn->serial++;
	store_hashjob_init(&w->hj);
	rba_hasher_init(&w->whole);
	store_txn_link(txn, &w->link);
	*out = w;
	return 0;
}

static int
writer_flush(struct store_blob_writer *w, const uint8_t *p, size_t n,
	     struct rba_detail *d)
{
	struct store_txn *txn = w->link.txn;
	struct rba_digest cd;
	uint8_t key[BLOB_TMP_KEY_LEN];
	size_t len;
	int rc;

	if (w->chunks == UINT32_MAX) {
		rc = rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
			      "blob has too many chunks");
		goto fail;
	}
	/* The whole-blob hash runs beside the chunk's hash and compression. */
	store_hashjob_start(&w->hj, &w->whole, p, n);
	rc = store_chunk_encode(&w->zc, TAG_BLOB_CHUNK, p, n, 0, &cd, &len, d);
	store_hashjob_wait(&w->hj);
	if (rc != 0)
		goto fail;
	tmp_key(w->serial, w->chunks, key);
	rc = store_put(txn, DB_BLOBS, key, sizeof(key), w->zc.out, len, 0,
		       "storing a blob chunk", d);
	if (rc != 0)
		goto fail;
	w->chunks++;
	w->size += n;
	w->stored += len;
	return 0;
fail:
	w->state = W_FAILED;
	return store_txn_fail(txn, d, rc);
}

int
store_blob_writer_add(struct store_blob_writer *w, const void *p, size_t n,
		      struct rba_detail *d)
{
	const uint8_t *s = p;
	size_t take;
	int rc = writer_live(w, d);

	if (rc != 0)
		return rc;
	while (n > 0) {
		if (w->fill == 0 && n >= STORE_CHUNK_MAX) {
			/* A whole chunk in the caller's memory: no copy. */
			rc = writer_flush(w, s, STORE_CHUNK_MAX, d);
			if (rc != 0)
				return rc;
			s += STORE_CHUNK_MAX;
			n -= STORE_CHUNK_MAX;
			continue;
		}
		take = STORE_CHUNK_MAX - w->fill;
		if (take > n)
			take = n;
		memcpy(w->buf + w->fill, s, take);
		w->fill += take;
		s += take;
		n -= take;
		if (w->fill == STORE_CHUNK_MAX) {
			rc = writer_flush(w, w->buf, w->fill, d);
			if (rc != 0)
				return rc;
			w->fill = 0;
		}
	}
	return 0;
}

/* Deletes the writer's temporary chunks. */
static int
drop_tmp(struct store_blob_writer *w, struct rba_detail *d)
{
	uint8_t key[BLOB_TMP_KEY_LEN];
	int rc;

	for (uint32_t i = 0; i < w->chunks; i++) {
		tmp_key(w->serial, i, key);
		rc = store_del(w->link.txn, DB_BLOBS, key, sizeof(key),
			       "removing a temporary chunk", d);
		if (rc != 0 && rc != RBA_E_NOTFOUND)
			return rc;
	}
	w->chunks = 0;
	return 0;
}

/* Moves the temporary chunks under their final keys. */
static int
rename_tmp(struct store_blob_writer *w, const struct rba_digest *dg,
	   struct rba_detail *d)
{
	struct store_txn *txn = w->link.txn;
	uint8_t tkey[BLOB_TMP_KEY_LEN], fkey[BLOB_CHUNK_KEY_LEN];
	MDB_val v;
	size_t len;
	int rc;

	for (uint32_t i = 0; i < w->chunks; i++) {
		tmp_key(w->serial, i, tkey);
		rc = store_get(txn, DB_BLOBS, tkey, sizeof(tkey), &v, d);
		if (rc == RBA_E_NOTFOUND)
			rc = rba_fail(d, RBA_E_STORE, NULL, 0, 0,
				      "a temporary chunk vanished");
		if (rc == 0 && v.mv_size > w->zc.cap)
			rc = rba_fail(d, RBA_E_STORE, NULL, 0, 0,
				      "a temporary chunk grew");
		if (rc != 0)
			return store_txn_fail(txn, d, rc);
		/* Copied out and deleted before the put, which can then
		 * reuse the pages (and LMDB the memory) just freed. */
		len = v.mv_size;
		memcpy(w->zc.out, v.mv_data, len);
		rc = store_del(txn, DB_BLOBS, tkey, sizeof(tkey),
			       "removing a temporary chunk", d);
		store_blob_chunk_key(dg, i, fkey);
		if (rc == 0)
			rc = store_put(txn, DB_BLOBS, fkey, sizeof(fkey),
				       w->zc.out, len, 0, "storing a blob chunk",
				       d);
		if (rc != 0)
			return store_txn_fail(txn, d, rc);
	}
	return 0;
}

int
store_blob_writer_finish(struct store_blob_writer *w, const char *name,
			 const void *meta, size_t meta_len,
			 struct rba_digest *digest, int *existed,
			 struct rba_detail *d)
{
	struct store_blob_info info, old;
	struct rba_digest dg;
	size_t nlen = name != NULL ? strlen(name) : 0;
	int rc = writer_live(w, d);

	if (rc != 0)
		return rc;
	if (nlen > STORE_BLOB_NAME_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"blob name is %zu bytes, more than %u", nlen,
				STORE_BLOB_NAME_MAX);
	if (meta_len > 0 && meta == NULL)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "no blob meta bytes");
	if (meta_len > STORE_BLOB_META_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"blob meta is %zu bytes, more than %u",
				meta_len, STORE_BLOB_META_MAX);
	if (w->fill > 0) {
		rc = writer_flush(w, w->buf, w->fill, d);
		if (rc != 0)
			return rc;
		w->fill = 0;
	}
	rba_hasher_final(&w->whole, &dg);
	w->state = W_FAILED; /* until it succeeds */
	rc = store_blob_info(w->link.txn, &dg, &old, d);
	if (rc == 0) {
		/* Stored already: keep the old chunks, drop the new ones. */
		rc = drop_tmp(w, d);
		if (rc == 0 && (nlen > 0 || meta_len > 0)) {
			if (nlen > 0) {
				free(old.name);
				old.name = (char *)name;
			}
			if (meta_len > 0) {
				free(old.meta);
				old.meta = (uint8_t *)meta;
				old.meta_len = meta_len;
			}
			rc = info_put(w->link.txn, &old, d);
			if (nlen > 0)
				old.name = NULL;
			if (meta_len > 0)
				old.meta = NULL;
		}
		store_blob_info_release(&old);
		if (rc != 0)
			return store_txn_fail(w->link.txn, d, rc);
		if (existed != NULL)
			*existed = 1;
	} else if (rc == RBA_E_NOTFOUND) {
		rba_detail_clear(d);
		rc = rename_tmp(w, &dg, d);
		if (rc != 0)
			return rc;
		memset(&info, 0, sizeof(info));
		info.digest = dg;
		info.kind = w->kind;
		info.size = w->size;
		info.chunks = w->chunks;
		info.stored_size = w->stored;
		info.added = store_now();
		info.name = (char *)(name != NULL ? name : "");
		info.meta = (uint8_t *)meta;
		info.meta_len = meta_len;
		rc = info_put(w->link.txn, &info, d);
		if (rc != 0)
			return rc;
		w->chunks = 0;
		if (existed != NULL)
			*existed = 0;
	} else {
		/* The old record is unreadable: nothing is written over it,
		 * and free drops the new chunks. */
		return rc;
	}
	w->state = W_FINISHED;
	if (digest != NULL)
		*digest = dg;
	return 0;
}

void
store_blob_writer_free(struct store_blob_writer *w)
{
	if (w == NULL)
		return;
	if (w->link.txn != NULL && w->link.txn->err == 0 && w->chunks > 0) {
		struct rba_detail d;
		drop_tmp(w, &d); /* a failure fails the transaction */
	}
	store_txn_unlink(&w->link);
	store_hashjob_release(&w->hj);
	store_zc_release(&w->zc);
	free(w->buf);
	free(w);
}

int
store_blob_put(struct store_txn *txn, int kind, const void *p, size_t n,
	       const char *name, const void *meta, size_t meta_len,
	       struct rba_digest *digest, int *existed, struct rba_detail *d)
{
	struct store_blob_writer *w;
	int rc = store_blob_writer_new(txn, kind, &w, d);

	if (rc != 0)
		return rc;
	rc = store_blob_writer_add(w, p, n, d);
	if (rc == 0)
		rc = store_blob_writer_finish(w, name, meta, meta_len, digest,
					      existed, d);
	store_blob_writer_free(w);
	return rc;
}

/* ---- walking the info records ---------------------------------------- */

/* The smallest 32-byte key after dg; 0 when dg is the last one. */
static int
digest_next(const uint8_t *dg, uint8_t out[BLOB_KEY_LEN])
{
	memcpy(out, dg, BLOB_KEY_LEN);
	for (int i = BLOB_KEY_LEN - 1; i >= 0; i--) {
		if (++out[i] != 0)
			return 1;
	}
	return 0;
}

/*
 * Calls fn for each info record from key from (32 bytes) on, jumping over
 * chunk keys.  fn returns 0 and sets *stop to end the walk early, or
 * returns a value that ends it and is returned.
 */
static int
walk_infos(struct store_txn *txn, const uint8_t *from,
	   int (*fn)(void *arg, const MDB_val *k, const MDB_val *v, int *stop),
	   void *arg, struct rba_detail *d)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t seek[BLOB_KEY_LEN];
	int rc = 0, mrc, stop = 0;

	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_BLOBS), &cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading blobs");
	memcpy(seek, from, BLOB_KEY_LEN);
	k.mv_data = seek;
	k.mv_size = BLOB_KEY_LEN;
	mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	while (mrc == 0) {
		if (k.mv_size < BLOB_KEY_LEN) { /* a temporary key */
			mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
			continue;
		}
		if (k.mv_size == BLOB_KEY_LEN) {
			rc = fn(arg, &k, &v, &stop);
			if (rc != 0 || stop)
				break;
		}
		if (!digest_next(k.mv_data, seek))
			break;
		k.mv_data = seek;
		k.mv_size = BLOB_KEY_LEN;
		mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	}
	mdb_cursor_close(cur);
	if (rc != 0 || stop)
		return rc;
	if (mrc != 0 && mrc != MDB_NOTFOUND)
		return store_mdb_fail(d, mrc, "reading blobs");
	return 0;
}

struct resolve_ctx {
	const char *hex;
	size_t nhex;
	int kind;
	int found;
	struct rba_digest first, second;
	struct rba_detail *d;
};

static int
resolve_fn(void *arg, const MDB_val *k, const MDB_val *v, int *stop)
{
	static const char hexd[] = "0123456789abcdef";
	struct resolve_ctx *r = arg;
	const uint8_t *p = k->mv_data;
	struct store_blob_info info;
	struct rba_digest dg;
	int rc;

	for (size_t i = 0; i < r->nhex; i++) {
		int nib = i % 2 == 0 ? p[i / 2] >> 4 : p[i / 2] & 15;
		if (hexd[nib] != r->hex[i]) {
			*stop = 1; /* past the prefix's range */
			return 0;
		}
	}
	memcpy(dg.b, p, RBA_DIGEST_LEN);
	if (r->kind != STORE_BLOB_ANY) {
		rc = info_decode(v, &dg, &info, r->d);
		if (rc != 0)
			return rc;
		rc = info.kind;
		store_blob_info_release(&info);
		if (rc != r->kind)
			return 0;
	}
	if (r->found++ == 0) {
		r->first = dg;
		return 0;
	}
	r->second = dg;
	*stop = 1;
	return 0;
}

int
store_blob_resolve(struct store_txn *txn, const char *prefix, int kind,
		   struct rba_digest *out, struct rba_detail *d)
{
	struct resolve_ctx r;
	char hex[65], a[RBA_DIGEST_TEXT_LEN + 1], b[RBA_DIGEST_TEXT_LEN + 1];
	uint8_t from[BLOB_KEY_LEN];
	size_t nhex;
	int rc;

	rc = store_txn_check(txn, d);
	if (rc != 0)
		return rc;
	if (prefix == NULL || rba_digest_parse_prefix(prefix, hex, &nhex) != 0) {
		rba_detail_key(d, prefix != NULL ? prefix : "");
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"'%s' is not a digest or a prefix of at least 4 "
				"lowercase hex digits", prefix ? prefix : "");
	}
	memset(from, 0, sizeof(from));
	for (size_t i = 0; i < nhex; i++) {
		int c = hex[i], nib = c <= '9' ? c - '0' : c - 'a' + 10;
		from[i / 2] |= (uint8_t)(i % 2 == 0 ? nib << 4 : nib);
	}
	memset(&r, 0, sizeof(r));
	r.hex = hex;
	r.nhex = nhex;
	r.kind = kind;
	r.d = d;
	rc = walk_infos(txn, from, resolve_fn, &r, d);
	if (rc != 0)
		return rc;
	rba_detail_key(d, prefix);
	if (r.found == 0)
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"no blob matches '%s'", prefix);
	if (r.found > 1) {
		rba_digest_format(&r.first, a);
		rba_digest_format(&r.second, b);
		return rba_fail(d, RBA_E_EXISTS, NULL, 0, 0,
				"'%s' is ambiguous: %s and %s match", prefix, a,
				b);
	}
	rba_detail_clear(d);
	*out = r.first;
	return 0;
}

struct list_ctx {
	int kind;
	int (*cb)(void *ctx, const struct store_blob_info *info);
	void *ctx;
	struct rba_detail *d;
};

static int
list_fn(void *arg, const MDB_val *k, const MDB_val *v, int *stop)
{
	struct list_ctx *l = arg;
	struct store_blob_info info;
	struct rba_digest dg;
	int rc;

	memcpy(dg.b, k->mv_data, RBA_DIGEST_LEN);
	rc = info_decode(v, &dg, &info, l->d);
	if (rc != 0)
		return rc;
	if (l->kind == STORE_BLOB_ANY || info.kind == l->kind)
		rc = l->cb(l->ctx, &info);
	store_blob_info_release(&info);
	(void)stop;
	return rc;
}

int
store_blob_list(struct store_txn *txn, int kind,
		int (*cb)(void *ctx, const struct store_blob_info *info),
		void *ctx, struct rba_detail *d)
{
	struct list_ctx l = { kind, cb, ctx, d };
	uint8_t from[BLOB_KEY_LEN] = { 0 };
	int rc = store_txn_check(txn, d);

	if (rc != 0)
		return rc;
	return walk_infos(txn, from, list_fn, &l, d);
}

/* ---- reading --------------------------------------------------------- */

static int
tampered(struct rba_detail *d, const struct rba_digest *dg, const char *fmt,
	 ...) __attribute__((format(printf, 3, 4)));

static int
tampered(struct rba_detail *d, const struct rba_digest *dg, const char *fmt,
	 ...)
{
	char text[RBA_DIGEST_TEXT_LEN + 1], what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	rba_digest_format(dg, text);
	rba_detail_key(d, text);
	return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0, "tampered: blob %s %s",
			text, what);
}

int
store_blob_read(struct store_txn *txn, const struct rba_digest *digest,
		int (*cb)(void *ctx, const uint8_t *p, size_t n), void *ctx,
		struct rba_detail *d)
{
	struct store_blob_info info;
	struct store_chunk c;
	struct store_hashjob hj;
	struct rba_hasher h;
	struct rba_digest got;
	ZSTD_DCtx *dctx = NULL;
	uint8_t *out = NULL, key[BLOB_CHUNK_KEY_LEN];
	uint64_t want_chunks, left;
	uint32_t want;
	char why[200];
	MDB_val v;
	int rc;

	store_hashjob_init(&hj);
	rc = store_blob_info(txn, digest, &info, d);
	if (rc != 0)
		return rc;
	want_chunks = info.size == 0 ? 0
				     : (info.size - 1) / STORE_CHUNK_MAX + 1;
	if (info.chunks != want_chunks) {
		rc = tampered(d, digest, "records %u chunks for %llu bytes",
			      info.chunks, (unsigned long long)info.size);
		goto out;
	}
	dctx = store_dctx_new();
	out = malloc(STORE_CHUNK_MAX);
	if (dctx == NULL || out == NULL) {
		rc = RBA_E_NOMEM;
		goto out;
	}
	rba_hasher_init(&h);
	left = info.size;
	for (uint32_t i = 0; i < info.chunks; i++) {
		want = left > STORE_CHUNK_MAX ? STORE_CHUNK_MAX : (uint32_t)left;
		store_blob_chunk_key(digest, i, key);
		rc = store_get(txn, DB_BLOBS, key, sizeof(key), &v, d);
		if (rc == RBA_E_NOTFOUND)
			rc = tampered(d, digest, "chunk %u of %u is missing", i,
				      info.chunks);
		if (rc != 0)
			goto out;
		if (store_chunk_split(&v, TAG_BLOB_CHUNK, &c) != 0 ||
		    c.aux != 0) {
			rc = tampered(d, digest, "chunk %u is malformed", i);
			goto out;
		}
		if (c.size != want) {
			rc = tampered(d, digest,
				      "chunk %u records %u bytes where %u are "
				      "expected", i, c.size, want);
			goto out;
		}
		rc = store_chunk_inflate(dctx, &c, out, &hj, &h, why,
					 sizeof(why));
		if (rc != 0) {
			rc = tampered(d, digest, "chunk %u %s", i, why);
			goto out;
		}
		left -= c.size;
		store_map_forget(txn, c.frame, c.frame_len);
		rc = cb(ctx, out, c.size);
		if (rc != 0)
			goto out;
	}
	store_blob_chunk_key(digest, info.chunks, key);
	rc = store_get(txn, DB_BLOBS, key, sizeof(key), &v, d);
	if (rc == 0) {
		rc = tampered(d, digest, "has an extra chunk %u", info.chunks);
		goto out;
	}
	if (rc != RBA_E_NOTFOUND)
		goto out;
	rba_hasher_final(&h, &got);
	rc = rba_digest_equal(&got, digest)
		     ? 0
		     : tampered(d, digest, "content does not match its digest");
out:
	store_hashjob_release(&hj);
	store_blob_info_release(&info);
	ZSTD_freeDCtx(dctx);
	free(out);
	return rc;
}

struct load_ctx {
	uint8_t *p;
	size_t n, cap;
};

static int
load_fn(void *arg, const uint8_t *p, size_t n)
{
	struct load_ctx *l = arg;

	if (n > l->cap - l->n)
		return RBA_E_TAMPERED; /* cannot happen: sizes were checked */
	memcpy(l->p + l->n, p, n);
	l->n += n;
	return 0;
}

int
store_blob_load(struct store_txn *txn, const struct rba_digest *digest,
		size_t max, uint8_t **p, size_t *n, struct rba_detail *d)
{
	struct store_blob_info info;
	struct load_ctx l = { NULL, 0, 0 };
	int rc;

	*p = NULL;
	*n = 0;
	rc = store_blob_info(txn, digest, &info, d);
	if (rc != 0)
		return rc;
	if (info.size > max || info.size >= SIZE_MAX) {
		digest_key_text(digest, d);
		rc = rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
			      "blob is %llu bytes, more than %zu",
			      (unsigned long long)info.size, max);
		store_blob_info_release(&info);
		return rc;
	}
	l.cap = (size_t)info.size;
	store_blob_info_release(&info);
	l.p = malloc(l.cap + 1);
	if (l.p == NULL)
		return RBA_E_NOMEM;
	rc = store_blob_read(txn, digest, load_fn, &l, d);
	if (rc == 0 && l.n != l.cap)
		rc = tampered(d, digest, "changed size while read");
	if (rc != 0) {
		free(l.p);
		return rc;
	}
	l.p[l.n] = 0;
	*p = l.p;
	*n = l.n;
	return 0;
}
