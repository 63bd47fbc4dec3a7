/*
 * fuzz_chunk.c - a stored sample chunk: the store's chunk record (tag,
 * digest, size, one zstd frame, seal; store/store_priv.h) and the sample
 * chunk inside it (sample/sample.h, sample_chunk_decode).
 *
 * The first byte chooses: bit 0 set, the rest is a zstd frame, which the
 * harness wraps in a chunk record as the store writes one (digest of what
 * the frame decodes to, its size, the seal) so that the record checks do
 * not stop every input before the frame decoder and the chunk decoder;
 * bit 0 clear, the rest is the raw chunk.  Bits 1-6 give the id column
 * (0: none).  The column and score counts are the chunk's own, as a
 * layout that matches it would give them, even past the layout's caps
 * (bit 7 set: one more column, which the decoder must refuse).
 *
 * Whatever decodes is read cell by cell, re-encoded, and must decode
 * again to a chunk that encodes to the same bytes; decoded as stored
 * (sample_chunk_decode_stored), it must be refused or taken alike, with
 * the same numbers.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "sample/sample.h"
#include "common/buf.h"
#include "common/digest.h"
#include "store/store_priv.h"
#include "tests/fuzz/fuzz.h"

static uint8_t *plain; /* STORE_CHUNK_MAX bytes */

/* The numbers of chunk s, decoded as stored, are c's: each value, and
 * each value's float as a block converts it. */
static void
stored_agrees(const struct sample_chunk *c, const struct sample_chunk *s)
{
	sample_floats_fn *fl = sample_floats_pick();
	float *f = malloc((c->ncases ? c->ncases : 1) * sizeof(float));

	if (f == NULL)
		return;
	for (uint32_t k = 0; k < c->ncols; k++) {
		if (c->cols[k].kind != SAMPLE_COL_NUMBER)
			continue;
		fl(&s->cols[k], 0, c->ncases, f);
		for (uint32_t i = 0; i < c->ncases; i++) {
			double a = c->cols[k].num[i];
			double v = sample_column_num(&s->cols[k], i);
			float w = (float)a;
			if (memcmp(&a, &v, sizeof(a)) != 0 ||
			    (memcmp(&w, &f[i], sizeof(w)) != 0 &&
			     !(w != w && f[i] != f[i])))
				fuzz_fail("column %u case %u: as stored %a and "
					  "%a, decoded %a", k, i, v,
					  (double)f[i], a);
		}
	}
	free(f);
}

static void
decode(const uint8_t *p, size_t n, int sel)
{
	struct rba_detail d;
	struct sample_chunk c, c2, s;
	struct rba_buf a, b;
	const char **ids;
	uint32_t ncols = 0, nscores = 0, ncases, idx;
	long id_col;
	char tmp[32];
	int rc;

	if (n >= 14) {
		ncols = rba_get_u32le(p + 6);
		nscores = rba_get_u32le(p + 10);
	}
	if (sel & 0x80)
		ncols++;
	id_col = ((sel >> 1) & 0x3f) - 1;
	if (id_col >= (long)ncols)
		id_col = -1;

	ids = calloc(SAMPLE_CHUNK_CASES, sizeof(*ids));
	if (ids != NULL && sample_chunk_ids(p, n, ids, &ncases, &d) == 0 &&
	    ncases > 0) {
		struct sample_chunk one;
		sample_chunk_init(&one);
		char *id = strdup(ids[ncases - 1]);
		if (id != NULL)
			(void)sample_chunk_decode_case(p, n, ncols, nscores, id_col,
						       id, &one, &idx, &d);
		free(id);
		sample_chunk_release(&one);
	}
	free(ids);

	sample_chunk_init(&c);
	sample_chunk_init(&s);
	rc = sample_chunk_decode(p, n, ncols, nscores, id_col, &c, &d);
	if ((sample_chunk_decode_stored(p, n, ncols, nscores, id_col, &s,
					&d) == 0) != (rc == 0))
		fuzz_fail("the decode as stored and the decode disagree");
	if (rc != 0) {
		sample_chunk_release(&c);
		sample_chunk_release(&s);
		return;
	}
	stored_agrees(&c, &s);
	sample_chunk_release(&s);
	for (uint32_t col = 0; col < c.ncols; col++)
		for (uint32_t i = 0; i < c.ncases; i++)
			(void)strlen(sample_chunk_text(&c, col, i, tmp));
	if (c.ncases > 0 && sample_chunk_find(&c, c.ids[0]) < 0)
		fuzz_fail("case '%s' not found in its own chunk", c.ids[0]);
	rba_buf_init(&a);
	rba_buf_init(&b);
	sample_chunk_encode(&c, &a);
	if (rba_buf_status(&a) == 0) {
		sample_chunk_init(&c2);
		if (sample_chunk_decode(a.p, a.len, ncols, nscores, id_col,
					&c2, &d) != 0)
			fuzz_fail("a re-encoded chunk does not decode: %s",
				  d.reason);
		sample_chunk_encode(&c2, &b);
		if (rba_buf_status(&b) == 0 &&
		    (a.len != b.len || memcmp(a.p, b.p, a.len) != 0))
			fuzz_fail("encode is not a fixed point");
		sample_chunk_release(&c2);
	}
	rba_buf_release(&a);
	rba_buf_release(&b);
	sample_chunk_release(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (!(data[0] & 1)) {
		decode(data + 1, size - 1, data[0]);
		return 0;
	}

	const uint8_t *frame = data + 1;
	size_t flen = size - 1, n, rlen;
	uint8_t *rec;
	struct rba_digest dg;
	struct store_chunk c;
	MDB_val v;
	ZSTD_DCtx *dctx;
	char why[256];

	if (flen == 0) /* no frame: no record (split wants one byte) */
		return 0;
	if (plain == NULL && (plain = malloc(STORE_CHUNK_MAX)) == NULL)
		return 0;
	if ((dctx = store_dctx_new()) == NULL)
		return 0;
	/* The plaintext's digest and size, as the writer recorded them. */
	n = ZSTD_decompressDCtx(dctx, plain, STORE_CHUNK_MAX, frame, flen);
	if (ZSTD_isError(n))
		n = 0;
	rba_digest_bytes(plain, n, &dg);
	rlen = CHUNK_HDR + flen + SEAL_LEN;
	if ((rec = malloc(rlen)) == NULL) {
		ZSTD_freeDCtx(dctx);
		return 0;
	}
	rec[0] = TAG_SAMPLE_CHUNK;
	rec[1] = STORE_CHUNK_FORMAT;
	memcpy(rec + 2, dg.b, RBA_DIGEST_LEN);
	rba_put_u32le(rec + 2 + RBA_DIGEST_LEN, (uint32_t)n);
	rba_put_u32le(rec + 6 + RBA_DIGEST_LEN, 1);
	memcpy(rec + CHUNK_HDR, frame, flen);
	rba_digest_bytes(rec, rlen - SEAL_LEN, &dg);
	memcpy(rec + rlen - SEAL_LEN, dg.b, SEAL_LEN);

	v.mv_data = rec;
	v.mv_size = rlen;
	if (store_chunk_split(&v, TAG_SAMPLE_CHUNK, &c) != 0)
		fuzz_fail("a sealed record does not split");
	memset(plain, 0, STORE_CHUNK_MAX);
	if (store_chunk_inflate(dctx, &c, plain, NULL, NULL, why,
				sizeof(why)) == 0)
		decode(plain, c.size, data[0]);
	free(rec);
	ZSTD_freeDCtx(dctx);
	return 0;
}
