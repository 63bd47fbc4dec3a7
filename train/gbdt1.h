/*
 * gbdt1.h - what ABI 1's trees share between their trainer (gbdt1.c)
 * and their sparse scorer (gbdt1_sparse.c); private to the two.
 *
 * Frozen with gbdt1.c (see abi.h): the softmax below decides the bits of
 * every probability either file computes.
 */
#ifndef RBA_GBDT1_H
#define RBA_GBDT1_H

#include <stddef.h>
#include <stdint.h>

#include "train/abi.h"
#include "train/kernel.h"

/* GCC vector types, GB_VW floats or ints, unaligned loads, bit selects. */
#define GB_VW 4
typedef float gb_vf __attribute__((vector_size(16), aligned(4), may_alias));
typedef int32_t gb_vi __attribute__((vector_size(16), aligned(4), may_alias));
#define GB_SEL(m, a, b) ((gb_vf)(((gb_vi)(a) & (m)) | ((gb_vi)(b) & ~(m))))
#define GB_LD(T, p) (*(const T *)(const void *)(p))

/*
 * The softmax of a case's K margins (K 1: logits 0 and mg[0]): p gets C
 * probabilities; the return value is log-sum-exp minus the logit of y
 * (the loss) when y < C.
 */
float gbdt1_softmax(const float *mg, uint32_t K, uint32_t C, uint32_t y,
		    float *p);

/*
 * gbdt1_softmax of n cases of two classes (K 1), bit for bit: p gets
 * n x 2 probabilities; t is n floats of scratch, and with y (not NULL)
 * holds the n losses on return.
 */
void gbdt1_softmax2(const struct kernel_ops *k, const float *mg, size_t n,
		    const uint32_t *y, float *p, float *t);

/*
 * The level sets of a forest's categorical splits as bit tables, for
 * walks that look levels up case after case (gbdt1_sparse.c; not
 * frozen: it finds the side, the side is rebuild_tree_cat_left's).  Per
 * native feature, one row of bits per level up to its splits' largest
 * left level, one bit per split on the feature; a level past the table
 * is in no set.  One case's walk reads the one row of its level.
 */
struct gb_catref {
	const uint64_t *w; /* the split's word in level 0's row */
	uint64_t bit;
	uint32_t stride;   /* words a level row */
	uint32_t lim;      /* the levels with a row */
};

struct gb_catbits {
	struct gb_catref *ref; /* per node of the forest (splits on sets) */
	uint64_t *words;
};

/*
 * The tables of forest f: 0 with *out set, or with *out NULL when f has
 * no categorical split, a set that is not strictly ascending, or tables
 * over GB_CATBITS_MAX_WORDS (the walk then asks rebuild_tree_cat_left);
 * RBA_E_NOMEM.  The tables hold no pointer into f.
 */
#define GB_CATBITS_MAX_WORDS ((size_t)1 << 21) /* 16 MiB */
int gbdt1_catbits_new(const struct rebuild_forest *f, struct gb_catbits **out);
/* NULL allowed. */
void gbdt1_catbits_free(struct gb_catbits *cb);

/* rebuild_tree_cat_left(&nodes[i], v) for split i of cb's forest. */
static inline int
gbdt1_catbits_left(const struct gb_catbits *cb, uint32_t i, float v)
{
	const struct gb_catref *r = &cb->ref[i];
	uint32_t k;

	/* (a NaN fails the first test) */
	if (!(v >= 0.0f && v < (float)REBUILD_TREE_MAX_LEVEL))
		return 0;
	k = (uint32_t)v;
	if ((float)k != v || k >= r->lim)
		return 0;
	return (r->w[(size_t)k * r->stride] & r->bit) != 0;
}

/* The sparse scorer of a forest (gbdt1_sparse.c), abi_gbdt_impl's. */
int gbdt1_sparse_new(const struct rebuild_model *m,
		     struct rebuild_sparse **out);

/*
 * The partition of a native categorical feature's levels at one node
 * (gbdt1_cat.c; the LightGBM/XGBoost partition method, documented in
 * rebuild-audit-pins(5), data.native):
 *   1. The candidates are the levels with at least min_data rows at the
 *      node (and at least one).  The others, and every level with no
 *      row (a level unseen in training among them), stay on the right.
 *   2. The candidates are sorted by the statistic g / (h + smooth)
 *      (double, from the exact integer sums in units of 2^-30), ties by
 *      ascending level index: a total order, the same on every machine.
 *   3. Prefixes of that order (from its low end, then from its high
 *      end), of 1 .. min(max_left, candidates - 1 + (others exist))
 *      levels, go left; the rest go right.  The gain is gbdt1.c's step
 *      4 with the same lambda, min_child_weight and parent term; a later
 *      candidate wins only when strictly greater (the order: gain, low
 *      end before high end, shorter prefix first).
 * Cells: the exact sums of quantized g and h and the row count of each
 * level.
 */
struct gb_cat_cell {
	int64_t g, h;
	uint64_t n;
};

struct gb_cat_params {
	double lambda, mcw, smooth;
	uint32_t max_left; /* >= 1 */
	uint64_t min_data; /* >= 1 */
};

struct gb_cat_split {
	int valid;
	double gain;
	uint32_t nleft; /* levels sent left, ascending in left[] */
	int64_t gl, hl; /* their sums */
};

/*
 * The best partition of L levels with cells c at a node of sums (g, h)
 * and parent term pt.  order is 2 L entries of scratch, stat L doubles;
 * left gets the chosen levels (room for max_left), ascending.
 */
void gbdt1_cat_best(const struct gb_cat_cell *c, uint32_t L, int64_t g,
		    int64_t h, double pt, const struct gb_cat_params *p,
		    uint32_t *order, double *stat, uint32_t *left,
		    struct gb_cat_split *out);

#endif
