/*
 * abi1_block.c - ABI 1's block scorer: abi1_sparse.c's forward pass
 * over a block of cases, its softmax once for the block.
 *
 * What rebuild_sparse_new gives for an ABI 1 network.  Each case's
 * layers are abi1_sparse.c's own code: the frozen template
 * abi1_sparse_tmpl.h is included here unchanged, and its layer and
 * relu_terms bodies run one case after another, each output element the
 * same sequential sum in the same order.  Only the softmax moves: the
 * last layer's logits of BLOCK_ROWS cases are gathered and abi1_softmax
 * (abi1.c) runs once over them, where abi1_sparse.c calls it once per
 * case.  abi1_softmax treats each row by itself (its max, e^(z - max) by
 * the strict kernels' expv, elementwise and the same bits at any
 * position, its sum in class order, the divisions), so a row's
 * probabilities do not depend on the rows beside it: the result is
 * abi1_sparse.c's bit for bit, which the unit tests check on every
 * strict vector path (check_rebuild.c, block scorer tests).
 *
 * One call per case of the function pointer, the expv and the softmax
 * loops was most of the cost of a small network (perf: expv 12 %,
 * abi1_softmax 3 % of an audit of the German MLP).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "train/abi.h"
#include "train/kernel.h"

#define SC_PAD 16	/* floats: the widest vector */
#define BLOCK_ROWS 256	/* cases per softmax */
#define BLOCK_G 4	/* cases a group walks side by side */

struct sp_scratch {
	float *z;     /* widest padded layer */
	float *tx;    /* terms of a hidden layer */
	uint32_t *row;
};

/* The template reads these fields by abi1_sparse.c's names. */
#define abi1_sparse abi1_block

struct abi1_block {
	struct rebuild_sparse head; /* first: rebuild_sparse_* cast */
	const struct kernel_ops *k; /* the strict kernels (softmax) */
	uint32_t nclasses;
	uint32_t nlayers;
	uint32_t sizes[REBUILD_MAX_LAYERS + 1];
	size_t ld[REBUILD_MAX_LAYERS];
	float *w[REBUILD_MAX_LAYERS], *b[REBUILD_MAX_LAYERS];
	struct sp_scratch s;
	float *zc;	/* BLOCK_ROWS x nclasses logits */
	float *mx, *sum; /* BLOCK_ROWS each */
	float *zg;	/* a group's layers: 2 x BLOCK_G x widest */
	uint32_t *iota; /* niota: 0, 1, 2, ... (a layer's rows, all given) */
	size_t niota;
	size_t widest;
	float *xt;	/* sizes[0]: a case's inputs taken from columns */
	/* a block of cases; a lone case goes through the per-case pass */
	void (*block)(const struct abi1_block *sc, struct sp_scratch *s,
		      const float *tx, const uint32_t *row, size_t nt,
		      size_t n, float *zc);
	/* the same, given every input by columns (x[f * ld + i]) */
	void (*cols)(const struct abi1_block *sc, struct sp_scratch *s,
		     const float *x, size_t ld, size_t n, float *zc);
	void (*forward)(const struct abi1_block *sc, struct sp_scratch *s,
			const float *tx, const uint32_t *row, size_t nt,
			float *probs);
};

/*
 * The logits of n cases into zc (n x nclasses): abi1_sparse_tmpl.h's
 * forward without its softmax.  RELU is the template's relu_terms or
 * one that lists the same terms (relu_terms_cmp).
 */
#define BLOCK_BODY(SFX, ATTR, RELU)                                            \
	ATTR static void block_##SFX(const struct abi1_block *sc,              \
				     struct sp_scratch *s, const float *tx0,  \
				     const uint32_t *row0, size_t nt0,        \
				     size_t n, float *zc)                     \
	{                                                                      \
		uint32_t L = sc->nlayers, C = sc->nclasses;                    \
		for (size_t i = 0; i < n; i++) {                               \
			const float *tx = tx0 + i * nt0;                       \
			const uint32_t *row = row0 + i * nt0;                  \
			size_t nt = nt0;                                       \
			for (uint32_t l = 0; l < L; l++) {                     \
				layer_##SFX(sc->b[l], sc->w[l], sc->ld[l], tx, \
					    row, nt, s->z);                    \
				if (l + 1 == L)                                \
					break;                                 \
				nt = RELU(s->z, sc->sizes[l + 1],              \
						      sc->ld[l], s->tx,        \
						      s->row);                 \
				tx = s->tx;                                    \
				row = s->row;                                  \
			}                                                      \
			memcpy(zc + i * C, s->z, C * sizeof(float));           \
		}                                                              \
	}

/* Terms in ascending rows, the order of ABI 1's sums (an assertion). */
static inline int
rows_ascending(const uint32_t *r, size_t nt)
{
	for (size_t t = 1; t < nt; t++)
		if (r[t - 1] >= r[t])
			return 0;
	return 1;
}

/* Case i's inputs of a block by columns (x[f * ld + i]) as its terms,
 * every input in order: in sc->xt. */
static const float *
case_terms(const struct abi1_block *sc, const float *x, size_t ld, size_t i)
{
	for (size_t f = 0; f < sc->sizes[0]; f++)
		sc->xt[f] = x[f * ld + i];
	return sc->xt;
}

/*
 * BLOCK_G cases side by side.  One case's layer is a chain of dependent
 * additions per output vector (the bias, then each term in order), so
 * a lone case waits on the adder's latency at every term; BLOCK_G
 * cases keep BLOCK_G chains in flight, each still its own case's sum in
 * its own order.
 *
 * The first layer adds each case's terms as the per-case pass does
 * (every case of a block has nt terms).  A hidden layer adds every unit
 * of the layer before, not only those above zero: those are +0 (ReLU),
 * and adding +0 w (a zero) to a partial sum changes at most the sign of
 * a zero sum, which nothing after can see (ReLU maps both zeros to +0,
 * and the softmax takes e^(z - max), 1 for either): this is ABI 1's own
 * dense sum (abi1.c adds every x[i] w[i][j]), and the probabilities are
 * the per-case pass's bit for bit (test_block_scorer holds the two to
 * that on every strict vector path).
 */
#define GROUP_BODY(SFX, ATTR, VW)                                              \
	typedef float gvf_##SFX __attribute__((vector_size((VW) * 4),         \
						aligned(4), may_alias));       \
	typedef int32_t gvi_##SFX __attribute__((vector_size((VW) * 4),       \
						 aligned(4), may_alias));      \
	/* Layer out = b + terms x W of four cases: case g's nt terms at   \
	 * tx + g * txs, ts apart, their rows at row + g * rs (rs 0: the   \
	 * four share rows, and each weight vector is loaded once for      \
	 * them), its outputs at out + g * outs. */                        \
	static inline __attribute__((always_inline)) ATTR void                 \
	glayer_##SFX(const float *restrict b, const float *restrict W,         \
		     size_t ld, size_t lim, const float *tx, size_t txs,       \
		     size_t ts, const uint32_t *row, size_t rs, size_t nt,     \
		     float *out, size_t outs)                                  \
	{                                                                      \
		size_t j = 0;                                                  \
		for (; j + 2 * (VW) <= lim; j += 2 * (VW)) {                   \
			GINIT2(SFX, VW);                                        \
			for (size_t t = 0; t < nt; t++) {                      \
				GSTEP2(SFX, a00, a01, 0, VW);                   \
				GSTEP2(SFX, a10, a11, 1, VW);                   \
				GSTEP2(SFX, a20, a21, 2, VW);                   \
				GSTEP2(SFX, a30, a31, 3, VW);                   \
			}                                                      \
			GSTORE2(SFX, VW, out, out + outs, out + 2 * outs,       \
				out + 3 * outs);                               \
		}                                                              \
		for (; j < lim; j += (VW)) {                                   \
			GINIT1(SFX);                                            \
			for (size_t t = 0; t < nt; t++) {                      \
				GSTEP1(SFX, a0, 0);                             \
				GSTEP1(SFX, a1, 1);                             \
				GSTEP1(SFX, a2, 2);                             \
				GSTEP1(SFX, a3, 3);                             \
			}                                                      \
			GSTORE1(SFX);                                           \
		}                                                              \
	}                                                                      \
	/* glayer_##SFX with each case's own rows, and with shared ones */     \
	__attribute__((noinline)) ATTR static void                             \
	glayer_rows_##SFX(const float *restrict b, const float *restrict W,    \
			  size_t ld, size_t lim, const float *tx,              \
			  const uint32_t *row, size_t nt, float *out,          \
			  size_t outs)                                         \
	{                                                                      \
		glayer_##SFX(b, W, ld, lim, tx, nt, 1, row, nt, nt, out, outs);\
	}                                                                      \
	__attribute__((noinline)) ATTR static void                             \
	glayer_shared_##SFX(const float *restrict b, const float *restrict W,  \
			    size_t ld, size_t lim, const float *tx,            \
			    size_t txs, size_t ts, const uint32_t *row,        \
			    size_t nt, float *out, size_t outs)                \
	{                                                                      \
		glayer_##SFX(b, W, ld, lim, tx, txs, ts, row, 0, nt, out,      \
			     outs);                                            \
	}                                                                      \
	/* The logits of BLOCK_G cases: case g's nt0 terms at tx0 + g *    \
	 * xs0, ts0 apart; their rows at row0 + g * rs0 (rs0 0: shared) */  \
	ATTR static void group_##SFX(const struct abi1_block *sc,              \
				     const float *tx0, size_t xs0, size_t ts0, \
				     const uint32_t *row0, size_t rs0,         \
				     size_t nt0, float *zc)                    \
	{                                                                      \
		/* a layer's inputs: case g's nt terms at x + g * xs, ts      \
		 * apart; their rows at r (shared) or r + g * rs0 (the first  \
		 * layer's own); its outputs at z + g * zs */                 \
		const float *x = tx0;                                          \
		const uint32_t *r = row0;                                      \
		size_t nt = nt0, xs = xs0, ts = ts0, zs = sc->widest;          \
		uint32_t L = sc->nlayers, C = sc->nclasses;                    \
		float *z = sc->zg;                                             \
		int shared = 1;                                                \
		assert(rows_ascending(row0, nt0));                             \
		for (int g = 1; rs0 != 0 && g < BLOCK_G; g++)                  \
			shared &= memcmp(row0, row0 + g * rs0, nt0 * 4) == 0;  \
		for (int g = 1; !shared && g < BLOCK_G; g++)                   \
			assert(rows_ascending(row0 + g * rs0, nt0));           \
		for (uint32_t l = 0;; l++) {                                   \
			/* the units' vectors: none of the padding alone */    \
			size_t ld = sc->ld[l],                                 \
			       lim = (sc->sizes[l + 1] + (VW) - 1) / (VW) * (VW); \
			z = sc->zg + (l & 1) * BLOCK_G * zs;                   \
			if (l == 0 && !shared) /* (rows of its own: ts 1) */   \
				glayer_rows_##SFX(sc->b[l], sc->w[l], ld, lim, \
						  x, r, nt, z, zs);            \
			else                                                   \
				glayer_shared_##SFX(sc->b[l], sc->w[l], ld,    \
						    lim, x, xs, ts, r, nt, z,  \
						    zs);                       \
			if (l + 1 == L)                                        \
				break;                                         \
			for (int g = 0; g < BLOCK_G; g++)                      \
				for (size_t j = 0; j < lim; j += (VW)) {       \
					float *zj = z + g * zs + j;            \
					gvf_##SFX v = GLD(SFX, zj);             \
					gvi_##SFX on = v > (gvf_##SFX){ 0 };    \
					GST(SFX, zj,                            \
					    (gvf_##SFX)((gvi_##SFX)v & on));   \
				}                                              \
			x = z;                                                 \
			xs = zs;                                               \
			ts = 1;                                                \
			r = sc->iota;                                          \
			nt = sc->sizes[l + 1];                                 \
		}                                                              \
		for (int g = 0; g < BLOCK_G; g++)                              \
			memcpy(zc + g * C, z + g * zs, C * sizeof(float));     \
	}                                                                      \
	/* block_##SFX by groups, the ragged tail a case at a time */          \
	ATTR static void groups_##SFX(const struct abi1_block *sc,             \
				      struct sp_scratch *s, const float *tx0,  \
				      const uint32_t *row0, size_t nt0,        \
				      size_t n, float *zc)                     \
	{                                                                      \
		size_t i = 0;                                                  \
		for (; i + BLOCK_G <= n; i += BLOCK_G)                         \
			group_##SFX(sc, tx0 + i * nt0, nt0, 1, row0 + i * nt0, \
				    nt0, nt0, zc + i * sc->nclasses);          \
		for (size_t k = i; k < n; k++)                                 \
			assert(rows_ascending(row0 + k * nt0, nt0));           \
		if (i < n)                                                     \
			block_##SFX(sc, s, tx0 + i * nt0, row0 + i * nt0, nt0, \
				    n - i, zc + i * sc->nclasses);             \
	}                                                                      \
	/* groups_##SFX of cases given every input by columns: each group's \
	 * first layer reads them in place (the terms of a case ld apart,  \
	 * the four cases side by side), a tail case from a copy as terms */ \
	ATTR static void cols_##SFX(const struct abi1_block *sc,               \
				    struct sp_scratch *s, const float *x,      \
				    size_t ld, size_t n, float *zc)            \
	{                                                                      \
		size_t i = 0, nt = sc->sizes[0];                               \
		for (; i + BLOCK_G <= n; i += BLOCK_G)                         \
			group_##SFX(sc, x + i, 1, ld, sc->iota, 0, nt,         \
				    zc + i * sc->nclasses);                    \
		for (; i < n; i++)                                             \
			block_##SFX(sc, s, case_terms(sc, x, ld, i), sc->iota, \
				    nt, 1, zc + i * sc->nclasses);             \
	}

#define GLD(SFX, p) (*(const gvf_##SFX *)(const void *)(p))
/* Four cases' two accumulators of columns j .. j + 2 VW - 1, from the
 * bias; then stored to each case's outputs o0 .. o3. */
#define GINIT2(SFX, VW)                                                        \
	gvf_##SFX a00 = GLD(SFX, b + j), a01 = GLD(SFX, b + j + (VW));         \
	gvf_##SFX a10 = a00, a11 = a01, a20 = a00, a21 = a01, a30 = a00,       \
		  a31 = a01
/* The same for one vector of columns, stored outs apart from out. */
#define GINIT1(SFX) gvf_##SFX a0 = GLD(SFX, b + j), a1 = a0, a2 = a0, a3 = a0
#define GSTORE1(SFX)                                                           \
	do {                                                                   \
		GST(SFX, out + j, a0);                                         \
		GST(SFX, out + outs + j, a1);                                  \
		GST(SFX, out + 2 * outs + j, a2);                              \
		GST(SFX, out + 3 * outs + j, a3);                              \
	} while (0)
#define GSTORE2(SFX, VW, o0, o1, o2, o3)                                       \
	do {                                                                   \
		GST(SFX, (o0) + j, a00);                                       \
		GST(SFX, (o0) + j + (VW), a01);                                \
		GST(SFX, (o1) + j, a10);                                       \
		GST(SFX, (o1) + j + (VW), a11);                                \
		GST(SFX, (o2) + j, a20);                                       \
		GST(SFX, (o2) + j + (VW), a21);                                \
		GST(SFX, (o3) + j, a30);                                       \
		GST(SFX, (o3) + j + (VW), a31);                                \
	} while (0)
#define GST(SFX, p, v) (*(gvf_##SFX *)(void *)(p) = (v))
/* acc += x w, one IEEE multiply and one add (-ffp-contract=off) */
/* Case g's accumulators gain term t, x w (one IEEE multiply and one
 * add: -ffp-contract=off); with rs 0 the four cases' weight loads are
 * one load. */
#define GSTEP1(SFX, a, g)                                                      \
	do {                                                                   \
		gvf_##SFX x_ = tx[(g) * txs + t * ts] - (gvf_##SFX){ 0 };      \
		a = a + x_ * GLD(SFX, W + (size_t)row[(g) * rs + t] * ld + j);  \
	} while (0)
#define GSTEP2(SFX, a, a2, g, VW)                                              \
	do {                                                                   \
		const float *w_ = W + (size_t)row[(g) * rs + t] * ld + j;      \
		gvf_##SFX x_ = tx[(g) * txs + t * ts] - (gvf_##SFX){ 0 };      \
		a = a + x_ * GLD(SFX, w_);                                     \
		a2 = a2 + x_ * GLD(SFX, w_ + (VW));                            \
	} while (0)
_Static_assert(BLOCK_G == 4, "glayer walks 4 cases");

#define ST_SFX base
#define ST_ATTR
#define ST_VW 4
#include "train/abi1_sparse_tmpl.h"
#undef ST_SFX
#undef ST_ATTR
#undef ST_VW
BLOCK_BODY(base, , relu_terms_base)
GROUP_BODY(base, , 4)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SCORE_X86 1
#define ST_SFX avx2
#define ST_ATTR __attribute__((target("avx2")))
#define ST_VW 8
#include "train/abi1_sparse_tmpl.h"
#undef ST_SFX
#undef ST_ATTR
#undef ST_VW
BLOCK_BODY(avx2, __attribute__((target("avx2"))), relu_terms_avx2)
GROUP_BODY(avx2, __attribute__((target("avx2"))), 8)
#define ST_SFX avx512
#define ST_ATTR __attribute__((target("avx512f")))
#define ST_VW 16
#include "train/abi1_sparse_tmpl.h"
#undef ST_SFX
#undef ST_ATTR
#undef ST_VW
#include <immintrin.h>

/*
 * The hidden terms relu_terms_avx512 lists, found 16 units at a time by
 * a compare and a compress: each unit whose z is above zero (not NaN),
 * in ascending order, its z unchanged.  z is not zeroed: nothing reads
 * it before the next layer overwrites it.  tx and row hold ld entries,
 * so a whole vector stored at k (k <= j) fits.
 */
__attribute__((target("avx512f"))) static size_t
relu_terms_cmp(float *restrict z, size_t n, size_t ld, float *restrict tx,
	       uint32_t *restrict row)
{
	const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7,
					      6, 5, 4, 3, 2, 1, 0);
	size_t k = 0;

	assert(n <= ld && ld % 16 == 0);
	for (size_t j = 0; j < n; j += 16) {
		__m512 v = _mm512_load_ps(z + j);
		__mmask16 m = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(),
						 _CMP_GT_OQ);
		__m512i idx = _mm512_add_epi32(iota, _mm512_set1_epi32((int)j));
		if (n - j < 16)
			m &= (__mmask16)((1u << (n - j)) - 1);
		_mm512_storeu_ps(tx + k, _mm512_maskz_compress_ps(m, v));
		_mm512_storeu_si512(row + k, _mm512_maskz_compress_epi32(m, idx));
		k += (size_t)__builtin_popcount(m);
	}
	return k;
}

BLOCK_BODY(avx512, __attribute__((target("avx512f"))), relu_terms_cmp)
GROUP_BODY(avx512, __attribute__((target("avx512f"))), 16)
#endif

#undef abi1_sparse

/* The same choice, and the same override, as abi1_sparse.c. */
static void
pick_block(struct abi1_block *sc)
{
	const char *want = getenv("RBA_STRICT_ISA");

	sc->block = groups_base;
	sc->cols = cols_base;
	sc->forward = forward_base;
	if (want != NULL && strcmp(want, "base") == 0)
		return;
#ifdef SCORE_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    (want == NULL || strcmp(want, "avx2") != 0)) {
		sc->block = groups_avx512;
		sc->cols = cols_avx512;
		sc->forward = forward_avx512;
		return;
	}
	if (__builtin_cpu_supports("avx2")) {
		sc->block = groups_avx2;
		sc->cols = cols_avx2;
		sc->forward = forward_avx2;
	}
#endif
}

static size_t
pad(size_t n)
{
	return (n + SC_PAD - 1) / SC_PAD * SC_PAD;
}

static void
block_free(struct rebuild_sparse *sp)
{
	struct abi1_block *sc = (struct abi1_block *)sp;

	if (sc == NULL)
		return;
	for (uint32_t l = 0; l < REBUILD_MAX_LAYERS; l++) {
		free(sc->w[l]);
		free(sc->b[l]);
	}
	free(sc->s.z);
	free(sc->s.tx);
	free(sc->s.row);
	free(sc->zc);
	free(sc->mx);
	free(sc->sum);
	free(sc->zg);
	free(sc->iota);
	free(sc->xt);
	free(sc);
}

static void
block_score(struct rebuild_sparse *sp, const float *tx, const uint32_t *row,
	    size_t nterms, size_t ncases, float *probs)
{
	struct abi1_block *sc = (struct abi1_block *)sp;
	uint32_t C = sc->nclasses;

	/* (a block's groups check their rows as they compare them) */
	if (ncases == 1) {
		assert(rows_ascending(row, nterms));
		sc->forward(sc, &sc->s, tx, row, nterms, probs);
		return;
	}
	for (size_t i0 = 0; i0 < ncases; i0 += BLOCK_ROWS) {
		size_t n = ncases - i0 < BLOCK_ROWS ? ncases - i0 : BLOCK_ROWS;
		sc->block(sc, &sc->s, tx + i0 * nterms, row + i0 * nterms,
			  nterms, n, sc->zc);
		abi1_softmax(sc->k, sc->zc, n, C, probs + i0 * C, sc->mx,
			     sc->sum);
	}
}

/*
 * block_score of cases given every input by columns: the terms a
 * number model's cases list, every input in order, read in place.  A
 * lone case goes through the per-case pass, as there.
 */
static void
block_score_cols(struct rebuild_sparse *sp, const float *x, size_t ld,
		 size_t ncases, float *probs)
{
	struct abi1_block *sc = (struct abi1_block *)sp;
	uint32_t C = sc->nclasses;

	if (ncases == 1) {
		sc->forward(sc, &sc->s, case_terms(sc, x, ld, 0), sc->iota,
			    sc->sizes[0], probs);
		return;
	}
	for (size_t i0 = 0; i0 < ncases; i0 += BLOCK_ROWS) {
		size_t n = ncases - i0 < BLOCK_ROWS ? ncases - i0 : BLOCK_ROWS;
		sc->cols(sc, &sc->s, x + i0, ld, n, sc->zc);
		abi1_softmax(sc->k, sc->zc, n, C, probs + i0 * C, sc->mx,
			     sc->sum);
	}
}

/* abi1_sparse.c's padded copies of the weights, and the block's scratch. */
static int
block_setup(struct abi1_block *sc, const struct rebuild_model *m)
{
	size_t widest = 0;

	sc->nlayers = m->nlayers;
	memcpy(sc->sizes, m->sizes, sizeof(sc->sizes));
	for (uint32_t l = 0; l < m->nlayers; l++) {
		size_t in = m->sizes[l], out = m->sizes[l + 1], ld = pad(out);
		sc->ld[l] = ld;
		if (ld > widest)
			widest = ld;
		sc->w[l] = abi_zalloc64(in * ld, sizeof(float));
		sc->b[l] = abi_zalloc64(ld, sizeof(float));
		if (sc->w[l] == NULL || sc->b[l] == NULL)
			return RBA_E_NOMEM;
		/* the padding columns stay the zeros abi_zalloc64 gives */
		for (size_t i = 0; i < in; i++)
			memcpy(sc->w[l] + i * ld, m->w[l] + i * out,
			       out * sizeof(float));
		memcpy(sc->b[l], m->b[l], out * sizeof(float));
	}
	sc->s.z = abi_zalloc64(widest, sizeof(float));
	sc->s.tx = malloc(widest * sizeof(float));
	sc->s.row = malloc(widest * sizeof(uint32_t));
	sc->widest = widest;
	sc->zg = abi_zalloc64(2 * BLOCK_G * widest, sizeof(float));
	/* a hidden layer's rows, and the inputs' of a case by columns */
	sc->niota = widest > m->sizes[0] ? widest : m->sizes[0];
	sc->iota = malloc((sc->niota ? sc->niota : 1) * sizeof(uint32_t));
	if (sc->iota != NULL)
		for (size_t i = 0; i < sc->niota; i++)
			sc->iota[i] = (uint32_t)i;
	sc->xt = malloc((m->sizes[0] ? m->sizes[0] : 1) * sizeof(float));
	sc->zc = malloc((size_t)BLOCK_ROWS * sc->nclasses * sizeof(float));
	sc->mx = malloc(BLOCK_ROWS * sizeof(float));
	sc->sum = malloc(BLOCK_ROWS * sizeof(float));
	if (sc->s.z == NULL || sc->s.tx == NULL || sc->s.row == NULL ||
	    sc->zc == NULL || sc->mx == NULL || sc->sum == NULL ||
	    sc->zg == NULL || sc->iota == NULL || sc->xt == NULL)
		return RBA_E_NOMEM;
	pick_block(sc);
	return 0;
}

int
abi1_block_new(const struct rebuild_model *m, struct rebuild_sparse **out)
{
	struct abi1_block *sc;
	int err;

	*out = NULL;
	sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		return RBA_E_NOMEM;
	sc->head.score = block_score;
	sc->head.score_cols = block_score_cols;
	sc->head.free = block_free;
	sc->k = kernel_strict();
	sc->nclasses = m->sizes[m->nlayers];
	if ((err = block_setup(sc, m)) != 0) {
		block_free(&sc->head);
		return err;
	}
	*out = &sc->head;
	return 0;
}
