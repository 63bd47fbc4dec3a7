/*
 * gbdt1_sparse.c - the sparse scorer of ABI 1's trees: the forward pass
 * of gbdt1.c, GB_SCORE_BLOCK cases at a time, fed only the non-zero
 * inputs of each case.
 *
 * The result is bit for bit gbdt1.c's forward pass (the unit tests hold
 * it to that): the same leaves, added in the same order, then the same
 * softmax.  Unlike gbdt1.c this file is not frozen: how the leaves are
 * found may change as long as every leaf and every sum stays the same.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "train/abi.h"
#include "train/fmath.h"
#include "train/gbdt1.h"
#include "train/kernel.h"
#include "train/treewalk.h"

#define GB_SCORE_BLOCK TW_BLOCK /* cases walked side by side (80) */

/* ---- sparse scoring -------------------------------------------------- */

/*
 * The scorer's copies of the trees, walked GB_SCORE_BLOCK cases side by
 * side without a branch.  A tree of depth D <= GB_FULL_DEPTH is laid
 * out complete: the root is position 1, position p has children 2p and
 * 2p + 1, and a leaf above depth D is repeated into both subtrees below
 * it (its comparisons are then made but cannot matter), so a walk is D
 * steps of p = 2p + right, ending on one of the leaf positions 2^D ..
 * 2^(D+1) - 1.  A deeper tree
 * keeps its nodes, a leaf pointing at itself, and walks its depth in
 * steps too.  Every real comparison decides as the one gb_walk makes
 * on the same floats, so the leaf, and every bit after it, is the same.
 *
 * The block's inputs are feature-major (feature f of case j at f *
 * GB_SCORE_BLOCK + j) and held as order keys (gb_key): x < thr exactly
 * when key(x) < key(thr), so a complete tree's node is one 8-byte word,
 * the key just below its threshold's (gb_key_below: the input goes right
 * exactly when its key is above that) over its feature's offset f *
 * GB_SCORE_BLOCK, and a step is one load of the node, one of the input
 * and an integer compare whose carry is the step's bit.  The cases of a
 * block walk a tree GB_SCORE_LANES at a time, each lane's position in a
 * register, so the lanes' loads overlap; the root, the same for every
 * lane, is read once.  Each case still adds its trees' values in tree
 * order.
 *
 * A split that sends missing values left reads a copy of its feature's
 * inputs, a row of the block after the features, in which a missing
 * input's key (UINT32_MAX, never below a threshold) is 0 (always
 * below one) and every other key is the same: the step is unchanged.
 */
#define GB_FULL_DEPTH 8
#define GB_SCORE_LANES 10

/* (gb_key_below(threshold) << 32) | feature * GB_SCORE_BLOCK */
typedef uint64_t gb_fnode;

struct gb_snode {
	uint32_t key; /* of the threshold */
	uint32_t off; /* feature * GB_SCORE_BLOCK */
	uint32_t kid[2]; /* left, right */
};

/*
 * The order key of a float: the unsigned order of keys is the order of
 * the floats, -0 and +0 are one key (GB_KEY_ZERO), and NaN, which no
 * comparison finds below a threshold, is UINT32_MAX as an input and 0 as
 * a threshold (so an input is never below it): in every case key(x) <
 * key(thr) exactly when x < thr.
 */
#define GB_KEY_ZERO 0x80000000u

static uint32_t
gb_key(float v, int threshold)
{
	uint32_t u = fm_float_bits(v + 0.0f); /* -0 is +0 */

	if (v != v)
		return threshold ? 0 : UINT32_MAX;
	return u ^ ((0u - (u >> 31)) | 0x80000000u);
}

/*
 * A block's input keys: k[i] = gb_key(v[i], 0) for i < n, and, for the
 * vector walks (gb_keys_both), kv[i] = k[i] ^ TW_SIGN (tw_block_keys) in
 * the same pass; compiled for each strict path (integer operations: the
 * same keys at any width).
 */
typedef void gb_keys_fn(const float *restrict v, size_t n,
			uint32_t *restrict k, uint32_t *restrict kv);

typedef float gb_vf8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef uint32_t gb_vu8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t gb_vi8 __attribute__((vector_size(32), aligned(4), may_alias));

static inline __attribute__((always_inline)) void
keys_body(const float *restrict v, size_t n, uint32_t *restrict k,
	  uint32_t *restrict kv, int both)
{
	const gb_vu8 top = (gb_vu8){ 0 } + 0x80000000u;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		gb_vf8 f = GB_LD(gb_vf8, v + i) + 0.0f; /* -0 is +0 */
		gb_vu8 u = (gb_vu8)f, key;
		key = u ^ ((gb_vu8)((gb_vi8)u >> 31) | top);
		key |= (gb_vu8)(f != f); /* a NaN: UINT32_MAX */
		*(gb_vu8 *)(void *)(k + i) = key;
		if (both)
			*(gb_vu8 *)(void *)(kv + i) = key ^ TW_SIGN;
	}
	for (; i < n; i++) {
		k[i] = gb_key(v[i], 0);
		if (both)
			kv[i] = k[i] ^ TW_SIGN;
	}
}

#define GB_KEYS(SFX, ATTR)                                                     \
	ATTR static void gb_keys_##SFX(const float *restrict v, size_t n,      \
				       uint32_t *restrict k,                   \
				       uint32_t *restrict kv)                  \
	{                                                                      \
		(void)kv;                                                      \
		keys_body(v, n, k, NULL, 0);                                   \
	}                                                                      \
	ATTR static void gb_keys_both_##SFX(const float *restrict v, size_t n, \
					    uint32_t *restrict k,              \
					    uint32_t *restrict kv)             \
	{                                                                      \
		keys_body(v, n, k, kv, 1);                                     \
	}
KERNEL_ISA_EACH(GB_KEYS)

/*
 * The key one below a threshold's: an input key is above it exactly when
 * it is not below the threshold's.  Input keys are never below
 * gb_key(-inf) = 0x007fffff, so a NaN threshold (key 0, nothing below
 * it) stays 0 and every input is above it.
 */
static uint32_t
gb_key_below(float thr)
{
	uint32_t k = gb_key(thr, 1);

	return k == 0 ? 0 : k - 1;
}

struct gb_sparse {
	struct rebuild_sparse head; /* first: rebuild_sparse_* cast */
	uint32_t nfeat, C, K, ntrees;
	uint32_t nx;	/* input rows of x: nfeat, then the left copies */
	uint32_t *lrow; /* per feature: its left copy's row, or UINT32_MAX */
	const struct kernel_ops *ks;
	float *base;
	struct tw_shape *tree;
	gb_fnode *fnode;
	float *fval;
	struct gb_snode *nodes;
	float *value;
	uint32_t *x; /* nx x GB_SCORE_BLOCK keys, GB_KEY_ZERO between cases */
	float *mg; /* GB_SCORE_BLOCK x K */
	float *t;  /* GB_SCORE_BLOCK: gbdt1_softmax2's scratch */
	uint32_t *rows; /* GB_SCORE_BLOCK x nterms (nterms <= nfeat) */
	uint32_t *keys; /* the same: the terms' keys */
	struct tw_vec vec; /* the vector walks (vec.walk NULL: none) */
	gb_keys_fn *make_keys, *make_keys_both; /* the strict path's */
};

static void
gb_sparse_free(struct rebuild_sparse *sp)
{
	struct gb_sparse *s = (struct gb_sparse *)sp;

	if (s == NULL)
		return;
	free(s->base);
	free(s->lrow);
	free(s->tree);
	free(s->fnode);
	free(s->fval);
	free(s->nodes);
	free(s->value);
	free(s->x);
	free(s->mg);
	free(s->t);
	free(s->rows);
	free(s->keys);
	tw_vec_free(&s->vec);
	free(s);
}

/*
 * One step of lane j at position c of a complete tree fn_ (input keys x
 * of the lane group, all the block's inputs xall): c = 2c + (below < x),
 * right exactly when !(x < thr), as gb_walk goes.  GB_RSTEP is the
 * root's step, its key kr and its feature's inputs xr read once.  On
 * x86-64 the compare's carry is added by adc, one instruction where a
 * compiler makes three, and two registers a step leave room for
 * GB_SCORE_LANES positions.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GB_FSTEP(c, j)                                                         \
	do {                                                                   \
		uint64_t q_ = fn_[c], o_;                                      \
		__asm__("movl %k[q], %k[o]\n\t"                                 \
			"shrq $32, %[q]\n\t"                                    \
			"cmpl %c[jj]*4(%[xx],%[o],4), %k[q]\n\t"                 \
			"adcq %[cc], %[cc]"                                    \
			: [cc] "+r"(c), [q] "+r"(q_), [o] "=&r"(o_)            \
			: [xx] "r"(x), [jj] "i"(j), "m"(*xall)                 \
			: "cc");                                               \
	} while (0)
#define GB_RSTEP(c, j)                                                         \
	__asm__("cmpl %1, %2\n\tadcq %0, %0"                                   \
		: "+r"(c)                                                      \
		: "m"(xr[j]), "r"(kr)                                          \
		: "cc")
#else
#define GB_FSTEP(c, j)                                                         \
	do {                                                                   \
		gb_fnode q_ = fn_[c];                                          \
		(void)xall;                                                    \
		(c) = 2 * (c) +                                                \
		      ((uint32_t)(q_ >> 32) < x[(size_t)(uint32_t)q_ + (j)]);   \
	} while (0)
#define GB_RSTEP(c, j) ((c) = 2 * (c) + (kr < xr[j]))
#endif

/*
 * Lanes c0 .. c9 from the root of complete tree fn of depth d >= 1 to
 * its leaf positions (inputs x of the lane group, all the block's xall).
 */
#define GB_WALK(fn, d)                                                         \
	do {                                                                   \
		const uint32_t *xr = x + (uint32_t)(fn)[1];                    \
		uint32_t kr = (uint32_t)((fn)[1] >> 32);                       \
		c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = c8 = c9 = 1;           \
		GB_RSTEP(c0, 0);                                               \
		GB_RSTEP(c1, 1);                                               \
		GB_RSTEP(c2, 2);                                               \
		GB_RSTEP(c3, 3);                                               \
		GB_RSTEP(c4, 4);                                               \
		GB_RSTEP(c5, 5);                                               \
		GB_RSTEP(c6, 6);                                               \
		GB_RSTEP(c7, 7);                                               \
		GB_RSTEP(c8, 8);                                               \
		GB_RSTEP(c9, 9);                                               \
		for (uint32_t step = 1; step < (d); step++) {                  \
			const gb_fnode *fn_ = (fn);                            \
			GB_FSTEP(c0, 0);                                       \
			GB_FSTEP(c1, 1);                                       \
			GB_FSTEP(c2, 2);                                       \
			GB_FSTEP(c3, 3);                                       \
			GB_FSTEP(c4, 4);                                       \
			GB_FSTEP(c5, 5);                                       \
			GB_FSTEP(c6, 6);                                       \
			GB_FSTEP(c7, 7);                                       \
			GB_FSTEP(c8, 8);                                       \
			GB_FSTEP(c9, 9);                                       \
		}                                                              \
	} while (0)

/* Each lane's margin m0 .. m9 gains its leaf of a tree whose leaf at
 * position c is fv[c]. */
#define GB_ADD(fv)                                                             \
	do {                                                                   \
		m0 += (fv)[c0];                                                \
		m1 += (fv)[c1];                                                \
		m2 += (fv)[c2];                                                \
		m3 += (fv)[c3];                                                \
		m4 += (fv)[c4];                                                \
		m5 += (fv)[c5];                                                \
		m6 += (fv)[c6];                                                \
		m7 += (fv)[c7];                                                \
		m8 += (fv)[c8];                                                \
		m9 += (fv)[c9];                                                \
	} while (0)

/*
 * Lanes j0 .. j0 + GB_SCORE_LANES - 1 of the block through complete tree
 * fn of depth d >= 1 whose leaf at position c is fv[c], then, when fn2 is
 * not NULL, through fn2 (depth d2 >= 1, leaves fv2): lane l's margin
 * mg[l * K] gains its leaves in that order, held in a register between.
 */
static inline __attribute__((always_inline)) void
gb_walk_lanes(const gb_fnode *fn, uint32_t d, const float *fv,
	      const gb_fnode *fn2, uint32_t d2, const float *fv2,
	      const uint32_t *xs, size_t j0, float *mg, size_t K)
{
	const uint32_t *x = xs + j0;
	const uint32_t(*xall)[2 * REBUILD_MAX_WIDTH * GB_SCORE_BLOCK] =
		(const void *)xs;
	size_t c0, c1, c2, c3, c4, c5, c6, c7, c8, c9;
	float m0 = mg[0 * K], m1 = mg[1 * K], m2 = mg[2 * K], m3 = mg[3 * K];
	float m4 = mg[4 * K], m5 = mg[5 * K], m6 = mg[6 * K], m7 = mg[7 * K];
	float m8 = mg[8 * K], m9 = mg[9 * K];

	GB_WALK(fn, d);
	GB_ADD(fv);
	if (fn2 != NULL) {
		GB_WALK(fn2, d2);
		GB_ADD(fv2);
	}
	mg[0 * K] = m0;
	mg[1 * K] = m1;
	mg[2 * K] = m2;
	mg[3 * K] = m3;
	mg[4 * K] = m4;
	mg[5 * K] = m5;
	mg[6 * K] = m6;
	mg[7 * K] = m7;
	mg[8 * K] = m8;
	mg[9 * K] = m9;
}

_Static_assert(GB_SCORE_LANES == 10, "gb_walk_lanes walks 10 lanes");
_Static_assert(GB_SCORE_BLOCK % GB_SCORE_LANES == 0,
	       "a block is whole lane groups");

/*
 * The block's inputs (nb cases of nterms terms from case c0 of tx and
 * row) as keys in x, case j at column j of each input row, and in the
 * left copies' rows.  The numbers are copied first: a store whose
 * address waits on a load from far away holds up the loads behind it,
 * and the fill would go at memory's pace.
 */
static inline __attribute__((always_inline)) void
gb_block_fill(struct gb_sparse *s, const float *tx, const uint32_t *row,
	      size_t nterms, size_t c0, size_t nb)
{
	uint32_t *xs = s->x;

	memcpy(s->rows, row + c0 * nterms, nb * nterms * sizeof(uint32_t));
	s->make_keys(tx + c0 * nterms, nb * nterms, s->keys, NULL);
	for (size_t j = 0; j < nb; j++) {
		const uint32_t *r = s->rows + j * nterms;
		const uint32_t *kj = s->keys + j * nterms;
		for (size_t k = 0; k < nterms; k++)
			xs[(size_t)r[k] * GB_SCORE_BLOCK + j] = kj[k];
	}
	/* the left copies: a missing input (key UINT32_MAX, above
	 * every threshold) is 0 there, below every one */
	if (s->nx > s->nfeat)
		for (size_t j = 0; j < nb; j++) {
			const uint32_t *r = s->rows + j * nterms;
			const uint32_t *kj = s->keys + j * nterms;
			for (size_t k = 0; k < nterms; k++) {
				uint32_t lr = s->lrow[r[k]];
				if (lr != UINT32_MAX)
					xs[(size_t)lr * GB_SCORE_BLOCK + j] =
						kj[k] == UINT32_MAX ? 0 : kj[k];
			}
		}
}

/*
 * The block's margins (nb cases, nl lanes in whole lane groups): the
 * bases, then every tree's leaf in tree order, full trees by lanes
 * (two a visit with one margin each), the others a level at a time.
 */
static inline __attribute__((always_inline)) void
gb_block_trees(struct gb_sparse *s, size_t nb, size_t nl, int keyed)
{
	uint32_t K = s->K;
	const uint32_t *xs = s->x;
	float *mg = s->mg;
	uint32_t cur[GB_SCORE_BLOCK];

	/* the vector walks read their own keys (made with xs's where
	 * keyed), and add to every lane's margin */
	if (s->vec.walk != NULL) {
		if (!keyed)
			tw_block_keys(xs, (size_t)s->nx * GB_SCORE_BLOCK,
				      s->vec.xv);
		nl = GB_SCORE_BLOCK;
	}
	for (size_t j = 0; j < nl; j++)
		memcpy(mg + j * K, s->base, K * sizeof(float));
	for (uint32_t t = 0; t < s->ntrees; t++) {
		const struct tw_shape *tr = &s->tree[t];
		uint32_t d = tr->depth, g = t % K;
		if (tr->vdepth > 0) {
			s->vec.walk(&s->vec.tree[tr->vt], tr->vdepth,
				    s->vec.xv, mg + g, K);
			continue;
		}
		if (tr->full) {
			const float *fv = s->fval + tr->vat;
			if (d == 0) {
				for (size_t j = 0; j < nb; j++)
					mg[j * K + g] += fv[1];
				continue;
			}
			if (K == 1 && t + 1 < s->ntrees && tr[1].full &&
			    tr[1].depth > 0 && tr[1].vdepth == 0) {
				/* two trees a visit of the lanes, their
				 * margins at constant offsets */
				const float *fv2 = s->fval + tr[1].vat;
				for (size_t j = 0; j < nl; j += GB_SCORE_LANES)
					gb_walk_lanes(s->fnode + tr->at, d, fv,
						      s->fnode + tr[1].at,
						      tr[1].depth, fv2, xs, j,
						      mg + j, 1);
				t++;
			} else if (K == 1) { /* margins at constant offsets */
				for (size_t j = 0; j < nl; j += GB_SCORE_LANES)
					gb_walk_lanes(s->fnode + tr->at, d, fv,
						      NULL, 0, NULL, xs, j,
						      mg + j, 1);
			} else {
				for (size_t j = 0; j < nl; j += GB_SCORE_LANES)
					gb_walk_lanes(s->fnode + tr->at, d, fv,
						      NULL, 0, NULL, xs, j,
						      mg + j * K + g, K);
			}
			continue;
		}
		for (size_t j = 0; j < nb; j++)
			cur[j] = (uint32_t)tr->at;
		for (uint32_t step = 0; step < d; step++)
			for (size_t j = 0; j < nb; j++) {
				const struct gb_snode *q = s->nodes + cur[j];
				cur[j] = q->kid[xs[q->off + j] >= q->key];
			}
		for (size_t j = 0; j < nb; j++)
			mg[j * K + g] += s->value[cur[j]];
	}
}

/* All nall keys of x zero keys, GB_VW a store. */
static inline __attribute__((always_inline)) void
gb_x_zero(struct gb_sparse *s, size_t nall)
{
	const gb_vi zkey = { INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN };

	_Static_assert(GB_VW == 4 && GB_SCORE_BLOCK % GB_VW == 0,
		       "zkey is GB_VW zero keys; x is whole vectors");
	_Static_assert(GB_KEY_ZERO == 0x80000000u, "zkey is GB_KEY_ZERO");
	for (size_t i = 0; i < nall; i += GB_VW)
		*(gb_vi *)(void *)(s->x + i) = zkey;
}

/* x back to zero keys after a block of nb cases: all of its nall keys
 * when that is the fewer stores, else the ones written. */
static inline __attribute__((always_inline)) void
gb_block_clear(struct gb_sparse *s, size_t nterms, size_t nb, size_t nall)
{
	uint32_t *xs = s->x;

	if (nall <= GB_VW * nb * nterms)
		gb_x_zero(s, nall);
	else
		for (size_t j = 0; j < nb; j++) {
			const uint32_t *r = s->rows + j * nterms;
			for (size_t k = 0; k < nterms; k++) {
				uint32_t lr = s->lrow[r[k]];
				xs[(size_t)r[k] * GB_SCORE_BLOCK + j] =
					GB_KEY_ZERO;
				if (lr != UINT32_MAX)
					xs[(size_t)lr * GB_SCORE_BLOCK + j] =
						GB_KEY_ZERO;
			}
		}
}

/* The probabilities of the block's nb cases from their margins. */
static void
gb_block_probs(struct gb_sparse *s, size_t nb, float *probs)
{
	uint32_t K = s->K;

	if (K == 1)
		gbdt1_softmax2(s->ks, s->mg, nb, NULL, probs, s->t);
	else
		for (size_t j = 0; j < nb; j++)
			gbdt1_softmax(s->mg + j * K, K, s->C, s->C,
				      probs + j * s->C);
}

/* Whole lane groups: the spare lanes of the last one walk any inputs
 * (zero keys, or the last block's), and their margins are not read. */
static size_t
gb_lanes(size_t nb)
{
	return (nb + GB_SCORE_LANES - 1) / GB_SCORE_LANES * GB_SCORE_LANES;
}

static void
gb_sparse_score(struct rebuild_sparse *sp, const float *tx, const uint32_t *row,
		size_t nterms, size_t ncases, float *probs)
{
	struct gb_sparse *s = (struct gb_sparse *)sp;
	const size_t nall = (size_t)s->nx * GB_SCORE_BLOCK; /* keys in x */

	for (size_t c0 = 0; c0 < ncases; c0 += GB_SCORE_BLOCK) {
		size_t nb = ncases - c0 < GB_SCORE_BLOCK ? ncases - c0
							  : GB_SCORE_BLOCK;
		gb_block_fill(s, tx, row, nterms, c0, nb);
		gb_block_trees(s, nb, gb_lanes(nb), 0);
		gb_block_probs(s, nb, probs + c0 * s->C);
		gb_block_clear(s, nterms, nb, nall);
	}
}

/*
 * Cases given every input by columns (rebuild_sparse_score_cols): each
 * input row of a block is its column's keys, made in one pass, and its
 * left copy from them; no term is listed, nor scattered.  A zero input
 * has GB_KEY_ZERO, the key of an input not listed, so the walks see
 * what gb_sparse_score's see.  x is left all zero keys, as
 * gb_sparse_score expects it.
 */
static void
gb_sparse_score_cols(struct rebuild_sparse *sp, const float *x, size_t ld,
		     size_t ncases, float *probs)
{
	struct gb_sparse *s = (struct gb_sparse *)sp;
	uint32_t *xs = s->x;
	const size_t nall = (size_t)s->nx * GB_SCORE_BLOCK;
	uint32_t *xv = s->vec.walk != NULL ? s->vec.xv : NULL;

	for (size_t c0 = 0; c0 < ncases; c0 += GB_SCORE_BLOCK) {
		size_t nb = ncases - c0 < GB_SCORE_BLOCK ? ncases - c0
							  : GB_SCORE_BLOCK;
		for (uint32_t f = 0; f < s->nfeat; f++) {
			size_t at = (size_t)f * GB_SCORE_BLOCK;
			uint32_t *kf = xs + at;
			uint32_t lr = s->lrow[f];
			if (xv != NULL)
				s->make_keys_both(x + (size_t)f * ld + c0, nb,
						  kf, xv + at);
			else
				s->make_keys(x + (size_t)f * ld + c0, nb, kf,
					     NULL);
			/* the left copy: a missing input (key UINT32_MAX,
			 * above every threshold) is 0 there, below every
			 * one */
			if (lr == UINT32_MAX)
				continue;
			at = (size_t)lr * GB_SCORE_BLOCK;
			for (size_t j = 0; j < nb; j++) {
				uint32_t k = kf[j] == UINT32_MAX ? 0 : kf[j];
				xs[at + j] = k;
				if (xv != NULL)
					xv[at + j] = k ^ TW_SIGN;
			}
		}
		gb_block_trees(s, nb, gb_lanes(nb), xv != NULL);
		gb_block_probs(s, nb, probs + c0 * s->C);
	}
	gb_x_zero(s, nall);
}

/*
 * The input row a split reads: its feature's, or, for a split that sends
 * missing values left, its feature's left copy, where a missing input is
 * below every threshold (the key comparison then decides as
 * rebuild_tree_goes_left: every other input has the same key there).
 */
static uint32_t
gb_row(const struct gb_sparse *s, const struct rebuild_tree_node *q)
{
	if (q->flags & REBUILD_TREE_DEFAULT_LEFT)
		return s->lrow[q->feature];
	return q->feature;
}

/* Fills complete position p (at level, of depth d) from node i. */
static void
fill_full(struct gb_sparse *s, const struct tw_shape *tr,
	  const struct rebuild_tree_node *nodes, uint32_t i, size_t p,
	  uint32_t level)
{
	const struct rebuild_tree_node *q = &nodes[i];
	int leaf = q->feature == REBUILD_TREE_LEAF;

	if (level == tr->depth) {
		s->fval[tr->vat + p] = q->value;
		return;
	}
	s->fnode[tr->at + p] =
		leaf ? (uint64_t)GB_KEY_ZERO << 32
		     : (uint64_t)gb_key_below(q->threshold) << 32 |
			       gb_row(s, q) * GB_SCORE_BLOCK;
	fill_full(s, tr, nodes, leaf ? i : q->left, 2 * p, level + 1);
	fill_full(s, tr, nodes, leaf ? i : q->right, 2 * p + 1, level + 1);
}

/* ---- level sets as bit tables ----------------------------------------- */

void
gbdt1_catbits_free(struct gb_catbits *cb)
{
	if (cb == NULL)
		return;
	free(cb->ref);
	free(cb->words);
	free(cb);
}

int
gbdt1_catbits_new(const struct rebuild_forest *f, struct gb_catbits **out)
{
	size_t nn = f->ntrees ? f->tree_start[f->ntrees] : 0, total = 0;
	uint32_t nf = f->nfeatures;
	/* per feature: its splits, the levels of its rows, its first word */
	uint32_t *cnt = calloc(nf ? nf : 1, sizeof(uint32_t));
	uint32_t *lim = calloc(nf ? nf : 1, sizeof(uint32_t));
	size_t *off = calloc(nf ? nf : 1, sizeof(size_t));
	uint32_t *col = malloc((nn ? nn : 1) * sizeof(uint32_t));
	struct gb_catbits *cb = NULL;
	int err = RBA_E_NOMEM, any = 0;

	*out = NULL;
	if (cnt == NULL || lim == NULL || off == NULL || col == NULL)
		goto done;
	for (size_t i = 0; i < nn; i++) {
		const struct rebuild_tree_node *q = &f->nodes[i];
		if (q->feature == REBUILD_TREE_LEAF ||
		    !(q->flags & REBUILD_TREE_CATEGORICAL))
			continue;
		/* a set the binary search of rebuild_tree_cat_left would
		 * read otherwise than as a set: no tables */
		for (uint32_t k = 1; k < q->ncats; k++)
			if (q->cats[k] <= q->cats[k - 1]) {
				err = 0;
				goto done;
			}
		any = 1;
		col[i] = cnt[q->feature]++;
		for (uint32_t k = q->ncats; k > 0; k--)
			/* levels from 2^24 on are never matched */
			if (q->cats[k - 1] < REBUILD_TREE_MAX_LEVEL) {
				if (q->cats[k - 1] + 1 > lim[q->feature])
					lim[q->feature] = q->cats[k - 1] + 1;
				break;
			}
	}
	if (!any) {
		err = 0;
		goto done;
	}
	for (uint32_t j = 0; j < nf; j++) {
		off[j] = total;
		total += (size_t)lim[j] * ((cnt[j] + 63) / 64);
		if (total > GB_CATBITS_MAX_WORDS) {
			err = 0;
			goto done;
		}
	}
	if ((cb = calloc(1, sizeof(*cb))) == NULL ||
	    (cb->ref = calloc(nn, sizeof(*cb->ref))) == NULL ||
	    (cb->words = calloc(total ? total : 1, sizeof(uint64_t))) == NULL)
		goto done;
	for (size_t i = 0; i < nn; i++) {
		const struct rebuild_tree_node *q = &f->nodes[i];
		struct gb_catref *r = &cb->ref[i];
		uint32_t j = q->feature;
		if (j == REBUILD_TREE_LEAF || !(q->flags & REBUILD_TREE_CATEGORICAL))
			continue;
		r->stride = (cnt[j] + 63) / 64;
		r->lim = lim[j];
		r->bit = (uint64_t)1 << (col[i] % 64);
		r->w = cb->words + off[j] + col[i] / 64;
		for (uint32_t k = 0; k < q->ncats; k++)
			if (q->cats[k] < lim[j])
				cb->words[off[j] + (size_t)q->cats[k] * r->stride +
					  col[i] / 64] |= r->bit;
	}
	*out = cb;
	cb = NULL;
	err = 0;
done:
	gbdt1_catbits_free(cb);
	free(cnt);
	free(lim);
	free(off);
	free(col);
	return err;
}

/*
 * A forest with a categorical split (REBUILD_TREE_CATEGORICAL) is not
 * laid out by keys: a level set is no comparison of order keys.  Its
 * scorer puts each case's terms into a dense row of zeros and walks the
 * scorer's copy of the trees, a level set's side from the bit tables
 * (gbdt1_catbits_left, or rebuild_tree_cat_left without them), adding
 * the leaves per group in tree order, then gbdt1_softmax: gbdt1.c's
 * forward pass, step by step, so the same bits.
 */
struct gb_cat_sparse {
	struct rebuild_sparse head; /* first: rebuild_sparse_* cast */
	uint32_t nfeat, C, K, ntrees;
	float *base;
	uint32_t *tstart;
	struct rebuild_tree_node *nodes;
	uint32_t *cats;
	struct gb_catbits *cb; /* NULL: rebuild_tree_cat_left */
	float *row; /* nfeat */
	float *mg;  /* K */
};

static void
gb_cat_free(struct rebuild_sparse *sp)
{
	struct gb_cat_sparse *s = (struct gb_cat_sparse *)sp;

	if (s == NULL)
		return;
	free(s->base);
	free(s->tstart);
	free(s->nodes);
	free(s->cats);
	gbdt1_catbits_free(s->cb);
	free(s->row);
	free(s->mg);
	free(s);
}

static void
gb_cat_score(struct rebuild_sparse *sp, const float *tx, const uint32_t *row,
	     size_t nterms, size_t ncases, float *probs)
{
	struct gb_cat_sparse *s = (struct gb_cat_sparse *)sp;
	const struct rebuild_tree_node *nodes = s->nodes;
	const struct gb_catbits *cb = s->cb;

	for (size_t c = 0; c < ncases; c++) {
		const float *v = tx + c * nterms;
		const uint32_t *r = row + c * nterms;
		for (size_t k = 0; k < nterms; k++)
			s->row[r[k]] = v[k];
		memcpy(s->mg, s->base, s->K * sizeof(float));
		for (uint32_t t = 0; t < s->ntrees; t++) {
			uint32_t i = s->tstart[t];
			while (nodes[i].feature != REBUILD_TREE_LEAF) {
				const struct rebuild_tree_node *q = &nodes[i];
				float x = s->row[q->feature];
				int left = cb != NULL &&
						   (q->flags & REBUILD_TREE_CATEGORICAL)
					? gbdt1_catbits_left(cb, i, x)
					: rebuild_tree_goes_left(q, x);
				i = left ? q->left : q->right;
			}
			s->mg[t % s->K] += nodes[i].value;
		}
		gbdt1_softmax(s->mg, s->K, s->C, s->C, probs + c * s->C);
		for (size_t k = 0; k < nterms; k++)
			s->row[r[k]] = 0.0f;
	}
}

static int
gb_cat_new(const struct rebuild_forest *f, struct rebuild_sparse **out)
{
	size_t nn = f->tree_start[f->ntrees];
	struct gb_cat_sparse *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return RBA_E_NOMEM;
	s->head.score = gb_cat_score;
	s->head.free = gb_cat_free;
	s->nfeat = f->nfeatures;
	s->C = f->nclasses;
	s->K = f->ngroups;
	s->ntrees = f->ntrees;
	s->base = malloc(s->K * sizeof(float));
	s->tstart = malloc(((size_t)s->ntrees + 1) * sizeof(uint32_t));
	s->nodes = malloc(nn * sizeof(*s->nodes));
	s->cats = malloc((f->ncats ? f->ncats : 1) * sizeof(uint32_t));
	s->row = calloc(s->nfeat ? s->nfeat : 1, sizeof(float));
	s->mg = malloc(s->K * sizeof(float));
	if (s->base == NULL || s->tstart == NULL || s->nodes == NULL ||
	    s->cats == NULL || s->row == NULL || s->mg == NULL ||
	    gbdt1_catbits_new(f, &s->cb) != 0) {
		gb_cat_free(&s->head);
		return RBA_E_NOMEM;
	}
	memcpy(s->base, f->base, s->K * sizeof(float));
	memcpy(s->tstart, f->tree_start, ((size_t)s->ntrees + 1) * sizeof(uint32_t));
	memcpy(s->nodes, f->nodes, nn * sizeof(*s->nodes));
	if (f->ncats > 0)
		memcpy(s->cats, f->cats, f->ncats * sizeof(uint32_t));
	/* the copy's level sets point into the copy's cats */
	for (size_t i = 0; i < nn; i++)
		if (s->nodes[i].ncats > 0)
			s->nodes[i].cats = s->cats + (f->nodes[i].cats - f->cats);
	*out = &s->head;
	return 0;
}

int
gbdt1_sparse_new(const struct rebuild_model *m, struct rebuild_sparse **out)
{
	const struct rebuild_forest *f = &m->forest;
	struct gb_sparse *s;
	size_t nn = f->tree_start[f->ntrees], nfull, nval;

	*out = NULL;
	/* the steps' asm reads inputs within REBUILD_MAX_WIDTH features */
	assert(f->nfeatures <= REBUILD_MAX_WIDTH);
	if (rebuild_forest_has_cats(f))
		return gb_cat_new(f, out);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return RBA_E_NOMEM;
	s->head.score = gb_sparse_score;
	s->head.score_cols = gb_sparse_score_cols;
	s->head.free = gb_sparse_free;
	s->nfeat = f->nfeatures;
	s->C = f->nclasses;
	s->K = f->ngroups;
	s->ntrees = f->ntrees;
	s->ks = kernel_strict();
	s->make_keys = KERNEL_ISA_PICK(gb_keys);
	s->make_keys_both = KERNEL_ISA_PICK(gb_keys_both);
	s->base = malloc(s->K * sizeof(float));
	s->tree = calloc(s->ntrees, sizeof(*s->tree));
	s->nodes = malloc(nn * sizeof(*s->nodes));
	s->value = malloc(nn * sizeof(float));
	s->lrow = malloc((s->nfeat ? s->nfeat : 1) * sizeof(uint32_t));
	if (s->lrow == NULL)
		goto nomem;
	s->nx = tw_left_rows(f, s->lrow);
	s->x = malloc((size_t)GB_SCORE_BLOCK * s->nx * sizeof(uint32_t));
	s->mg = malloc((size_t)GB_SCORE_BLOCK * s->K * sizeof(float));
	s->t = malloc(GB_SCORE_BLOCK * sizeof(float));
	s->rows = malloc((size_t)GB_SCORE_BLOCK * s->nfeat * sizeof(uint32_t));
	s->keys = malloc((size_t)GB_SCORE_BLOCK * s->nfeat * sizeof(uint32_t));
	if (s->base == NULL || s->tree == NULL || s->nodes == NULL ||
	    s->value == NULL || s->x == NULL || s->mg == NULL || s->t == NULL ||
	    s->rows == NULL || s->keys == NULL)
		goto nomem;
	memcpy(s->base, f->base, s->K * sizeof(float));
	gb_x_zero(s, (size_t)GB_SCORE_BLOCK * s->nx);
	tw_shapes(f, GB_FULL_DEPTH, s->tree, &nfull, &nval);
	s->fnode = malloc((nfull ? nfull : 1) * sizeof(*s->fnode));
	s->fval = malloc(nval * sizeof(float));
	if (s->fnode == NULL || s->fval == NULL)
		goto nomem;
	for (uint32_t t = 0; t < f->ntrees; t++)
		if (s->tree[t].full)
			fill_full(s, &s->tree[t], f->nodes, f->tree_start[t], 1, 0);
	if (tw_vectors(s->tree, s->ntrees, s->fnode, s->fval, s->nx,
		       &s->vec) != 0)
		goto nomem;
	for (size_t i = 0; i < nn; i++) {
		const struct rebuild_tree_node *q = &f->nodes[i];
		struct gb_snode *o = &s->nodes[i];
		if (q->feature == REBUILD_TREE_LEAF) {
			o->key = GB_KEY_ZERO;
			o->off = 0;
			o->kid[0] = o->kid[1] = (uint32_t)i;
		} else {
			o->key = gb_key(q->threshold, 1);
			o->off = gb_row(s, q) * GB_SCORE_BLOCK;
			o->kid[0] = q->left;
			o->kid[1] = q->right;
		}
		s->value[i] = q->value;
	}
	*out = &s->head;
	return 0;
nomem:
	gb_sparse_free(&s->head);
	return RBA_E_NOMEM;
}

