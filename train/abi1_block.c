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

#define SC_ALIGN 64
#define SC_PAD 16	/* floats: the widest vector */
#define BLOCK_ROWS 256	/* cases per softmax */

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
	/* a block of cases; a lone case goes through the per-case pass */
	void (*block)(const struct abi1_block *sc, struct sp_scratch *s,
		      const float *tx, const uint32_t *row, size_t nt,
		      size_t n, float *zc);
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

#define ST_SFX base
#define ST_ATTR
#define ST_VW 4
#include "train/abi1_sparse_tmpl.h"
#undef ST_SFX
#undef ST_ATTR
#undef ST_VW
BLOCK_BODY(base, , relu_terms_base)

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
#endif

#undef abi1_sparse

/* The same choice, and the same override, as abi1_sparse.c. */
static void
pick_block(struct abi1_block *sc)
{
	const char *want = getenv("RBA_STRICT_ISA");

	sc->block = block_base;
	sc->forward = forward_base;
	if (want != NULL && strcmp(want, "base") == 0)
		return;
#ifdef SCORE_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    (want == NULL || strcmp(want, "avx2") != 0)) {
		sc->block = block_avx512;
		sc->forward = forward_avx512;
		return;
	}
	if (__builtin_cpu_supports("avx2")) {
		sc->block = block_avx2;
		sc->forward = forward_avx2;
	}
#endif
}

static void *
sc_alloc(size_t n)
{
	size_t sz = (n ? n : 1) + SC_ALIGN - 1;

	return aligned_alloc(SC_ALIGN, sz - sz % SC_ALIGN);
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
	free(sc);
}

static void
block_score(struct rebuild_sparse *sp, const float *tx, const uint32_t *row,
	    size_t nterms, size_t ncases, float *probs)
{
	struct abi1_block *sc = (struct abi1_block *)sp;
	uint32_t C = sc->nclasses;

	for (size_t i = 0; i < ncases; i++)
		/* Terms in ascending rows: the order of ABI 1's sums. */
		for (size_t t = 1; t < nterms; t++)
			assert(row[i * nterms + t - 1] < row[i * nterms + t]);
	if (ncases == 1) {
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
		sc->w[l] = sc_alloc(in * ld * sizeof(float));
		sc->b[l] = sc_alloc(ld * sizeof(float));
		if (sc->w[l] == NULL || sc->b[l] == NULL)
			return RBA_E_NOMEM;
		memset(sc->w[l], 0, in * ld * sizeof(float));
		memset(sc->b[l], 0, ld * sizeof(float));
		for (size_t i = 0; i < in; i++)
			memcpy(sc->w[l] + i * ld, m->w[l] + i * out,
			       out * sizeof(float));
		memcpy(sc->b[l], m->b[l], out * sizeof(float));
	}
	sc->s.z = sc_alloc(widest * sizeof(float));
	sc->s.tx = malloc(widest * sizeof(float));
	sc->s.row = malloc(widest * sizeof(uint32_t));
	sc->zc = malloc((size_t)BLOCK_ROWS * sc->nclasses * sizeof(float));
	sc->mx = malloc(BLOCK_ROWS * sizeof(float));
	sc->sum = malloc(BLOCK_ROWS * sizeof(float));
	if (sc->s.z == NULL || sc->s.tx == NULL || sc->s.row == NULL ||
	    sc->zc == NULL || sc->mx == NULL || sc->sum == NULL)
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
