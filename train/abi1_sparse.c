/*
 * abi1_sparse.c - ABI 1's sparse scorer: the eval-mode forward pass of
 * abi1.c fed only the non-zero inputs of each case.
 *
 * The result is bit for bit what abi1.c's forward gives for the dense
 * rows (the unit tests hold it to that).  It gets there faster: the
 * first layer adds only the weight rows of the inputs that are not
 * zero and each hidden layer only those of units that are not zero.
 * That is exact: ABI 1's linear layers add x[i] w[i][j] one after
 * another in i order, and adding the zero product of a zero input to a
 * non-zero partial sum leaves it unchanged (at most the sign of a zero
 * sum differs, which no later operation can see: ReLU maps both to +0,
 * and e^(+0) = e^(-0)).  The softmax is abi1.c's own.
 *
 * Frozen with abi1.c (see abi.h).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "train/abi.h"
#include "train/kernel.h"

#define SC_PAD 16 /* floats: the widest vector */

struct sp_scratch {
	float *z;     /* widest padded layer */
	float *tx;    /* terms of a hidden layer */
	uint32_t *row;
};

struct abi1_sparse {
	struct rebuild_sparse head; /* first: rebuild_sparse_* cast */
	const struct kernel_ops *k; /* the strict kernels (softmax) */
	uint32_t nclasses;
	/* padded copies of the weights */
	uint32_t nlayers;
	uint32_t sizes[REBUILD_MAX_LAYERS + 1];
	size_t ld[REBUILD_MAX_LAYERS];
	float *w[REBUILD_MAX_LAYERS], *b[REBUILD_MAX_LAYERS];
	struct sp_scratch s;
	void (*forward)(const struct abi1_sparse *sc, struct sp_scratch *s,
			const float *tx, const uint32_t *row, size_t nt,
			float *probs);
};

#define ST_SFX base
#define ST_ATTR
#define ST_VW 4
#include "train/abi1_sparse_tmpl.h"
#undef ST_SFX
#undef ST_ATTR
#undef ST_VW

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SCORE_X86 1
#define ST_SFX avx2
#define ST_ATTR __attribute__((target("avx2")))
#define ST_VW 8
#include "train/abi1_sparse_tmpl.h"
#undef ST_SFX
#undef ST_ATTR
#undef ST_VW
#define ST_SFX avx512
#define ST_ATTR __attribute__((target("avx512f")))
#define ST_VW 16
#include "train/abi1_sparse_tmpl.h"
#undef ST_SFX
#undef ST_ATTR
#undef ST_VW
#endif

/* The same choice, and the same override, as the strict kernels. */
static void
pick_forward(struct abi1_sparse *sc)
{
	const char *want = getenv("RBA_STRICT_ISA");

	sc->forward = forward_base;
	if (want != NULL && strcmp(want, "base") == 0)
		return;
#ifdef SCORE_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    (want == NULL || strcmp(want, "avx2") != 0)) {
		sc->forward = forward_avx512;
		return;
	}
	if (__builtin_cpu_supports("avx2"))
		sc->forward = forward_avx2;
#endif
}

static size_t
pad(size_t n)
{
	return (n + SC_PAD - 1) / SC_PAD * SC_PAD;
}

static void
sparse_free(struct rebuild_sparse *sp)
{
	struct abi1_sparse *sc = (struct abi1_sparse *)sp;

	if (sc == NULL)
		return;
	for (uint32_t l = 0; l < REBUILD_MAX_LAYERS; l++) {
		free(sc->w[l]);
		free(sc->b[l]);
	}
	free(sc->s.z);
	free(sc->s.tx);
	free(sc->s.row);
	free(sc);
}

static void
sparse_score(struct rebuild_sparse *sp, const float *tx, const uint32_t *row,
	     size_t nterms, size_t ncases, float *probs)
{
	struct abi1_sparse *sc = (struct abi1_sparse *)sp;

	for (size_t i = 0; i < ncases; i++) {
		/* Terms in ascending rows: the order of ABI 1's sums. */
		for (size_t t = 1; t < nterms; t++)
			assert(row[i * nterms + t - 1] < row[i * nterms + t]);
		sc->forward(sc, &sc->s, tx + i * nterms, row + i * nterms,
			    nterms, probs + i * sc->nclasses);
	}
}

static int
sparse_setup(struct abi1_sparse *sc, const struct rebuild_model *m)
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
	if (sc->s.z == NULL || sc->s.tx == NULL || sc->s.row == NULL)
		return RBA_E_NOMEM;
	pick_forward(sc);
	return 0;
}

int
abi1_sparse_new(const struct rebuild_model *m, struct rebuild_sparse **out)
{
	struct abi1_sparse *sc;
	int err;

	*out = NULL;
	sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		return RBA_E_NOMEM;
	sc->head.score = sparse_score;
	sc->head.free = sparse_free;
	sc->k = kernel_strict();
	sc->nclasses = m->sizes[m->nlayers];
	if ((err = sparse_setup(sc, m)) != 0) {
		sparse_free(&sc->head);
		return err;
	}
	*out = &sc->head;
	return 0;
}
