/* store_chunk.c - compressed chunk records shared by blobs and samples. */
#include "store/store_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Level 1: snapshots are mostly CSV text, where higher levels gain a few
 * percent of size for half the speed, and adding a snapshot is bounded
 * by compression plus two SHA-256 passes.
 */
#define STORE_ZSTD_LEVEL 1
/* Frames never need a window above the chunk size. */
#define STORE_WINDOW_LOG 20
_Static_assert(STORE_CHUNK_MAX == 1u << STORE_WINDOW_LOG,
	       "window log must cover a chunk");

int
store_zc_init(struct store_zc *z, struct rba_detail *d)
{
	size_t rc;

	memset(z, 0, sizeof(*z));
	z->cap = CHUNK_HDR + ZSTD_compressBound(STORE_CHUNK_MAX) + SEAL_LEN;
	z->out = malloc(z->cap);
	z->cctx = ZSTD_createCCtx();
	if (z->out == NULL || z->cctx == NULL) {
		store_zc_release(z);
		return RBA_E_NOMEM;
	}
	rc = ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel,
				    STORE_ZSTD_LEVEL);
	if (!ZSTD_isError(rc))
		rc = ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(rc))
		rc = ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1);
	if (ZSTD_isError(rc)) {
		store_zc_release(z);
		return rba_fail(d, RBA_E_COMPRESS, NULL, 0, 0, "zstd: %s",
				ZSTD_getErrorName(rc));
	}
	return 0;
}

void
store_zc_release(struct store_zc *z)
{
	if (z == NULL)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z->out);
	memset(z, 0, sizeof(*z));
}

int
store_chunk_encode(struct store_zc *z, uint8_t tag, const uint8_t *p,
		   size_t n, uint32_t aux, struct rba_digest *digest,
		   size_t *len, struct rba_detail *d)
{
	size_t zn;

	if (n == 0 || n > STORE_CHUNK_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"chunk of %zu bytes", n);
	rba_digest_bytes(p, n, digest);
	z->out[0] = tag;
	z->out[1] = STORE_CHUNK_FORMAT;
	memcpy(z->out + 2, digest->b, RBA_DIGEST_LEN);
	rba_put_u32le(z->out + 2 + RBA_DIGEST_LEN, (uint32_t)n);
	rba_put_u32le(z->out + 6 + RBA_DIGEST_LEN, aux);
	/* compress2 knows n, so the frame header carries the content size. */
	zn = ZSTD_compress2(z->cctx, z->out + CHUNK_HDR,
			    z->cap - CHUNK_HDR - SEAL_LEN, p, n);
	if (ZSTD_isError(zn))
		return rba_fail(d, RBA_E_COMPRESS, NULL, 0, 0, "zstd: %s",
				ZSTD_getErrorName(zn));
	{
		struct rba_digest seal;
		rba_digest_bytes(z->out, CHUNK_HDR + zn, &seal);
		memcpy(z->out + CHUNK_HDR + zn, seal.b, SEAL_LEN);
	}
	*len = CHUNK_HDR + zn + SEAL_LEN;
	return 0;
}

int
store_chunk_split_unsealed(const MDB_val *v, uint8_t tag,
			   struct store_chunk *c)
{
	const uint8_t *p = v->mv_data;
	size_t seal = 0;

	if (v->mv_size <= CHUNK_HDR || p[0] != tag)
		return -1;
	if (p[1] == STORE_CHUNK_FORMAT) {
		seal = SEAL_LEN;
		if (v->mv_size <= CHUNK_HDR + seal)
			return -1;
	} else if (p[1] != STORE_FORMAT) {
		return -1;
	}
	c->digest = p + 2;
	c->size = rba_get_u32le(p + 2 + RBA_DIGEST_LEN);
	c->aux = rba_get_u32le(p + 6 + RBA_DIGEST_LEN);
	c->frame = p + CHUNK_HDR;
	c->frame_len = v->mv_size - CHUNK_HDR - seal;
	c->rec = p;
	c->rec_len = v->mv_size;
	c->sealed = seal != 0;
	return 0;
}

int
store_chunk_seal_ok(const struct store_chunk *c)
{
	struct rba_digest got;

	if (!c->sealed)
		return 1;
	rba_digest_bytes(c->rec, c->rec_len - SEAL_LEN, &got);
	return memcmp(got.b, c->rec + c->rec_len - SEAL_LEN, SEAL_LEN) == 0;
}

/*
 * n bytes at p into h, and c's seal checked (1 when it holds or c has
 * none), the two hashes side by side (rba_hasher_update2).
 */
static int
hash_and_seal(struct rba_hasher *h, const void *p, size_t n,
	      const struct store_chunk *c)
{
	struct rba_hasher sh;
	struct rba_digest got;

	if (c == NULL || !c->sealed) {
		rba_hasher_update(h, p, n);
		return 1;
	}
	rba_hasher_init(&sh);
	rba_hasher_update2(h, p, n, &sh, c->rec, c->rec_len - SEAL_LEN);
	rba_hasher_final(&sh, &got);
	return memcmp(got.b, c->rec + c->rec_len - SEAL_LEN, SEAL_LEN) == 0;
}

int
store_chunk_split(const MDB_val *v, uint8_t tag, struct store_chunk *c)
{
	if (store_chunk_split_unsealed(v, tag, c) != 0 || !store_chunk_seal_ok(c))
		return -1;
	return 0;
}

ZSTD_DCtx *
store_dctx_new(void)
{
	ZSTD_DCtx *z = ZSTD_createDCtx();

	if (z == NULL)
		return NULL;
	/* A forged frame cannot make the decoder reserve a larger window. */
	if (ZSTD_isError(ZSTD_DCtx_setParameter(z, ZSTD_d_windowLogMax,
						STORE_WINDOW_LOG))) {
		ZSTD_freeDCtx(z);
		return NULL;
	}
	return z;
}

int
store_chunk_decompress(ZSTD_DCtx *dctx, const struct store_chunk *c,
		       uint8_t *out, char *why, size_t whylen)
{
	unsigned long long declared;
	size_t n;

	if (c->size == 0 || c->size > STORE_CHUNK_MAX) {
		snprintf(why, whylen, "records a size of %u bytes", c->size);
		return RBA_E_TAMPERED;
	}
	/* Checked before anything is decompressed or allocated. */
	declared = ZSTD_getFrameContentSize(c->frame, c->frame_len);
	if (declared == ZSTD_CONTENTSIZE_ERROR) {
		snprintf(why, whylen, "is not a zstd frame");
		return RBA_E_TAMPERED;
	}
	if (declared == ZSTD_CONTENTSIZE_UNKNOWN) {
		snprintf(why, whylen, "has a frame without a content size");
		return RBA_E_TAMPERED;
	}
	if (declared > STORE_CHUNK_MAX) {
		snprintf(why, whylen,
			 "has a frame that declares %llu bytes, more than the "
			 "%u-byte chunk limit", declared, STORE_CHUNK_MAX);
		return RBA_E_TAMPERED;
	}
	if (declared != c->size) {
		snprintf(why, whylen,
			 "has a frame of %llu bytes where %u are recorded",
			 declared, c->size);
		return RBA_E_TAMPERED;
	}
	n = ZSTD_findFrameCompressedSize(c->frame, c->frame_len);
	if (ZSTD_isError(n) || n != c->frame_len) {
		snprintf(why, whylen, "is not exactly one zstd frame");
		return RBA_E_TAMPERED;
	}
	n = ZSTD_decompressDCtx(dctx, out, c->size, c->frame, c->frame_len);
	if (ZSTD_isError(n)) {
		snprintf(why, whylen, "does not decompress: %s",
			 ZSTD_getErrorName(n));
		return RBA_E_TAMPERED;
	}
	if (n != c->size) {
		snprintf(why, whylen, "decompresses to %zu bytes, not %u", n,
			 c->size);
		return RBA_E_TAMPERED;
	}
	return 0;
}

int
store_chunk_inflate(ZSTD_DCtx *dctx, const struct store_chunk *c,
		    uint8_t *out, struct store_hashjob *j,
		    struct rba_hasher *whole, char *why, size_t whylen)
{
	struct rba_digest want, got;
	size_t n = c->size;
	int rc = store_chunk_decompress(dctx, c, out, why, whylen);

	if (rc != 0)
		return rc;
	/* The whole-content hash runs beside this chunk's own; a mismatch
	 * below makes the caller drop both. */
	if (whole != NULL)
		store_hashjob_start(j, whole, out, n);
	rba_digest_bytes(out, n, &got);
	if (whole != NULL)
		store_hashjob_wait(j);
	memcpy(want.b, c->digest, RBA_DIGEST_LEN);
	if (!rba_digest_equal(&want, &got)) {
		snprintf(why, whylen, "does not match its recorded digest");
		return RBA_E_TAMPERED;
	}
	return 0;
}

void
store_blob_chunk_key(const struct rba_digest *digest, uint32_t chunk,
		     uint8_t key[BLOB_CHUNK_KEY_LEN])
{
	memcpy(key, digest->b, RBA_DIGEST_LEN);
	store_be32(key + RBA_DIGEST_LEN, chunk);
}

size_t
store_sample_key(const char *version, uint32_t gen, enum sample_key_kind kind,
		 uint32_t chunk, const char *case_id,
		 uint8_t key[SAMPLE_KEY_MAX])
{
	size_t vn = strlen(version), n = 0;

	key[n++] = (uint8_t)vn;
	memcpy(key + n, version, vn);
	n += vn;
	if (kind == SK_DEAD || (gen != 0 && kind != SK_INFO)) {
		key[n++] = kind == SK_DEAD ? SK_DEAD : SK_GEN;
		store_be32(key + n, gen);
		n += 4;
		if (kind == SK_DEAD)
			return n;
	}
	key[n++] = (uint8_t)kind;
	if (kind == SK_CHUNK) {
		store_be32(key + n, chunk);
		n += 4;
	} else if (kind == SK_CASE) {
		size_t cn = strlen(case_id);
		memcpy(key + n, case_id, cn);
		n += cn;
	}
	return n;
}

int
store_sample_gen_prefixes(const char *version, uint32_t gen,
			  uint8_t key[3][SAMPLE_KEY_MAX], size_t len[3])
{
	static const enum sample_key_kind kinds[3] = { SK_CHUNK, SK_CASE,
						       SK_LIST };

	if (gen != 0) {
		/* The generation's records share SK_GEN + g. */
		len[0] = store_sample_key(version, gen, SK_LIST, 0, NULL,
					  key[0]) - 1;
		return 1;
	}
	for (int i = 0; i < 3; i++)
		len[i] = store_sample_key(version, 0, kinds[i], 0, "", key[i]);
	/* SK_CHUNK's key carries a chunk number: the prefix stops before. */
	len[0] -= 4;
	return 3;
}

/* ---- the hash helper ------------------------------------------------- */

/* Below this a thread hand-off costs more than it saves. */
#define HASHJOB_MIN (64u << 10)

enum { HJ_IDLE, HJ_BUSY, HJ_QUIT };

static void *
hashjob_main(void *arg)
{
	struct store_hashjob *j = arg;
	int bad;

	pthread_mutex_lock(&j->mu);
	for (;;) {
		while (j->state == HJ_IDLE)
			pthread_cond_wait(&j->cv, &j->mu);
		if (j->state == HJ_QUIT)
			break;
		pthread_mutex_unlock(&j->mu);
		bad = !hash_and_seal(j->h, j->p, j->n, j->seal);
		pthread_mutex_lock(&j->mu);
		j->seal_bad |= bad;
		j->state = HJ_IDLE;
		pthread_cond_broadcast(&j->cv);
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

void
store_hashjob_init(struct store_hashjob *j)
{
	memset(j, 0, sizeof(*j));
}

static int
hashjob_spawn(struct store_hashjob *j)
{
	if (pthread_mutex_init(&j->mu, NULL) != 0)
		return -1;
	if (pthread_cond_init(&j->cv, NULL) != 0) {
		pthread_mutex_destroy(&j->mu);
		return -1;
	}
	j->state = HJ_IDLE;
	if (pthread_create(&j->th, NULL, hashjob_main, j) != 0) {
		pthread_cond_destroy(&j->cv);
		pthread_mutex_destroy(&j->mu);
		return -1;
	}
	j->spawned = 1;
	return 0;
}

void
store_hashjob_start_sealed(struct store_hashjob *j, struct rba_hasher *h,
			   const uint8_t *p, size_t n,
			   const struct store_chunk *seal)
{
	if (!j->spawned && (n < HASHJOB_MIN || hashjob_spawn(j) != 0)) {
		if (!hash_and_seal(h, p, n, seal))
			j->seal_bad = 1;
		return;
	}
	pthread_mutex_lock(&j->mu);
	while (j->state == HJ_BUSY)
		pthread_cond_wait(&j->cv, &j->mu);
	j->h = h;
	j->p = p;
	j->n = n;
	j->seal = seal;
	j->state = HJ_BUSY;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

void
store_hashjob_start(struct store_hashjob *j, struct rba_hasher *h,
		    const uint8_t *p, size_t n)
{
	store_hashjob_start_sealed(j, h, p, n, NULL);
}

void
store_hashjob_wait(struct store_hashjob *j)
{
	if (!j->spawned)
		return;
	pthread_mutex_lock(&j->mu);
	while (j->state == HJ_BUSY)
		pthread_cond_wait(&j->cv, &j->mu);
	pthread_mutex_unlock(&j->mu);
}

void
store_hashjob_release(struct store_hashjob *j)
{
	if (j == NULL || !j->spawned)
		return;
	pthread_mutex_lock(&j->mu);
	while (j->state == HJ_BUSY)
		pthread_cond_wait(&j->cv, &j->mu);
	j->state = HJ_QUIT;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	pthread_join(j->th, NULL);
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	j->spawned = 0;
}

/* ---- the inflater (store_sample_stream) ----------------------------- */

enum { IJ_QUEUED, IJ_OUT, IJ_DONE };

static void *
inflater_main(void *arg)
{
	struct store_inflater *f = arg;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		struct store_inflate_job *j;
		int rc, bad = 0;
		while (f->pending == NULL && !f->quit) {
			int more;
			if (f->idle == NULL || f->idle_done) {
				pthread_cond_wait(&f->cv, &f->mu);
				continue;
			}
			pthread_mutex_unlock(&f->mu);
			more = f->idle(f->idle_ctx, 0);
			pthread_mutex_lock(&f->mu);
			if (more <= 0)
				f->idle_done = 1;
		}
		if (f->quit)
			break;
		j = f->pending;
		f->pending = NULL;
		f->cur = j;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
		rc = store_chunk_decompress(f->dctx, j->c, j->out, j->why,
					    sizeof(j->why));
		pthread_mutex_lock(&f->mu);
		j->rc = rc;
		j->state = IJ_OUT;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
		/* the caller reads the plaintext beside this: both only read */
		if (rc == 0)
			bad = !hash_and_seal(f->whole, j->out, j->c->size, j->c);
		pthread_mutex_lock(&f->mu);
		f->seal_bad |= bad;
		j->state = IJ_DONE;
		f->cur = NULL;
		pthread_cond_broadcast(&f->cv);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

int
store_inflater_start(struct store_inflater *f, struct rba_hasher *whole,
		     int (*idle)(void *ctx, int waiter), void *idle_ctx)
{
	memset(f, 0, sizeof(*f));
	f->whole = whole;
	f->idle = idle;
	f->idle_ctx = idle_ctx;
	if ((f->dctx = store_dctx_new()) == NULL)
		return -1;
	if (pthread_mutex_init(&f->mu, NULL) != 0)
		goto no_mutex;
	if (pthread_cond_init(&f->cv, NULL) != 0)
		goto no_cond;
	if (pthread_create(&f->th, NULL, inflater_main, f) != 0)
		goto no_thread;
	return 0;
no_thread:
	pthread_cond_destroy(&f->cv);
no_cond:
	pthread_mutex_destroy(&f->mu);
no_mutex:
	ZSTD_freeDCtx(f->dctx);
	f->dctx = NULL;
	return -1;
}

void
store_inflater_submit(struct store_inflater *f, struct store_inflate_job *j)
{
	j->state = IJ_QUEUED;
	j->rc = 0;
	j->why[0] = 0;
	pthread_mutex_lock(&f->mu);
	while (f->pending != NULL)
		pthread_cond_wait(&f->cv, &f->mu);
	f->pending = j;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

int
store_inflater_wait_out(struct store_inflater *f, struct store_inflate_job *j)
{
	int rc;

	pthread_mutex_lock(&f->mu);
	while (j->state == IJ_QUEUED) {
		int more = 2;
		if (f->idle != NULL && !f->idle_done) {
			pthread_mutex_unlock(&f->mu);
			more = f->idle(f->idle_ctx, 1);
			pthread_mutex_lock(&f->mu);
			if (more <= 0)
				f->idle_done = 1;
		}
		if (more != 1 && j->state == IJ_QUEUED)
			pthread_cond_wait(&f->cv, &f->mu);
	}
	rc = j->rc;
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void
store_inflater_drain(struct store_inflater *f)
{
	pthread_mutex_lock(&f->mu);
	while (f->pending != NULL || f->cur != NULL)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
}

void
store_inflater_stop(struct store_inflater *f)
{
	if (f->dctx == NULL)
		return;
	pthread_mutex_lock(&f->mu);
	f->pending = NULL; /* queued, not taken: dropped */
	f->quit = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->th, NULL);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	ZSTD_freeDCtx(f->dctx);
	f->dctx = NULL;
}
