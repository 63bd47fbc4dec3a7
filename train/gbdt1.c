/*
 * gbdt1.c - trainer ABI 1, model kind gbdt: histogram gradient boosting
 * on log loss.
 *
 * Frozen like abi1.c (see abi.h): every step below decides artifact
 * bits, and a change that moves one is a new ABI in a new file.
 *
 * Recipe:
 *   1. Bin edges, per feature, from the training rows only: the values
 *      (-0 read as +0) sorted ascending.  With at most max_bins distinct
 *      values the edges are every distinct value but the smallest; with
 *      more, edge k (k = 1 .. max_bins - 1) is the sorted value at
 *      position floor(k n / max_bins), kept when above the smallest
 *      value and above the edge before it.  A row's bin is the number of
 *      edges at or below its value, so bin <= t exactly when the value is
 *      below edge t: the threshold of a split at t is edge t.
 *   2. Margins start at 0 (XGBoost 1.7's base_score 0.5).  Each round:
 *      probabilities by the softmax below from the margins (two classes:
 *      logits 0 and the margin); the rows of the round are those whose
 *      keyed draw (RNG_GBDT_ROWS, round) is below subsample; then one
 *      tree per group (one for two classes, else one per class) on
 *      g = p - [y = class], h = p (1 - p), in float32.
 *   3. g and h are quantized to integers in units of 2^-30 (round half
 *      away from zero) and every histogram sum is an int64 sum, exact in
 *      any order: threads (one feature each, in turn) and the sibling
 *      subtraction (the larger child is its parent minus the smaller)
 *      cannot change a bit.  Sums turn back into doubles only to score
 *      splits.
 *   4. A tree's features are a keyed draw (RNG_GBDT_COLS, tree) of
 *      max(1, floor(colsample nfeatures)) of them.  A node's best split
 *      maximizes gain = GL^2/(HL+lambda) + GR^2/(HR+lambda) -
 *      G^2/(H+lambda) (double) over features in ascending order, then
 *      bins ascending, a later candidate winning only when strictly
 *      greater: the total order (gain, then lower feature, then lower
 *      bin).  Both sides need a row and hessian sums of at least
 *      min_child_weight; the split is made when gain > gamma.
 *   5. Growth is best first: the open leaf of greatest gain (ties: the
 *      one made first) is split, until none can be, or the tree has
 *      max_leaves leaves; no leaf is split below depth max_depth.  With
 *      no leaf cap that is exactly depth-wise growth.
 *   6. A leaf's value is float32(-G / (H + lambda) * learning_rate)
 *      (0 when H + lambda is 0); cover is float32(H).
 *   7. Scoring adds, per group, the leaf values of its trees in tree
 *      order to the base margin in float32, then the softmax: exps of
 *      logit - max with fm_expf, summed in class order, divided.
 *
 * (The progress hook after each round was added later, like abi1.c's
 * after each epoch: it reads the round count and touches no value of
 * the arithmetic, so it moved no bit.)
 *
 * Missing values (added later, for training data with a NaN, which
 * every older build refused: a table without one takes none of the
 * steps below, so no artifact an older build could make moves a bit):
 *   1m. A feature with a NaN among its training rows has its edges from
 *      the rows that have a value (n of step 1 counts those) by step 1
 *      with max(1, min(max_bins, 255) - 1) in place of max_bins, then its
 *      smallest value as one more edge, first (no value is below it, so
 *      a split there parts the missing rows from all the others), and
 *      one more bin, numbered after the bins of values, for its missing
 *      values (the histogram has a cell for it).  A feature without a
 *      NaN is binned as in step 1.
 *   4m. For such a feature each candidate bin is scored twice, XGBoost's
 *      sparsity-aware rule: first with the missing cell on the right
 *      (the gain of step 4), then on the left (GL and HL gain the
 *      missing cell's sums); the left one is taken only when strictly
 *      greater, so a tie, and a node with no missing row, send missing
 *      values right.  The total order is (gain, lower feature, lower
 *      bin, right before left).  The split at the smallest value's edge
 *      with the missing cell on the left is the one that parts the
 *      missing rows from all the others.
 *   6m. The split's node records the side (REBUILD_TREE_DEFAULT_LEFT);
 *      rows with a missing value go that way in the partition, and a
 *      NaN goes that way when scored.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rbatime.h"
#include "train/abi.h"
#include "train/fmath.h"
#include "train/gbdt1.h"
#include "train/kernel.h"
#include "train/pool.h"
#include "train/rng.h"

#define GB_QSCALE 1073741824.0 /* 2^30 */
#define GB_QINV 0x1p-30
/*
 * A feature with at most GB_FEW_BINS bins gets its histogram summed in
 * GB_COPIES copies, row i into copy i % GB_COPIES, then added up: two
 * rows in a row often fall in the same bin of such a feature, and each
 * add would wait for the one before it.  The copies are GB_COPY_STRIDE
 * cells apart (not a multiple of 4 KiB, so their addresses do not
 * alias).  Below GB_COPIES_MIN_ROWS rows zeroing them costs more than
 * the wait.  Integer sums: the copies cannot change a bit.
 */
#define GB_FEW_BINS 64
#define GB_COPIES 4
#define GB_COPY_STRIDE (GB_FEW_BINS + 8)
#define GB_COPIES_MIN_ROWS 256
#define GB_BIN_GROUP 8 /* columns binned per pass over the rows */
/*
 * When every thread's share of a tree's features is at least
 * GB_ROW_FEATS and none is native, the tree's histograms are built a
 * row at a time (hist_rows, on gbin), fetching the cells of the row
 * GB_ROW_AHEAD rows on; otherwise, or with no gbin (more than
 * GB_GBIN_CELLS cells), a feature at a time (hist_feature).
 */
#define GB_ROW_FEATS 4
#define GB_ROW_AHEAD 16
#define GB_TRANSPOSE_ROWS 1024 /* rows a block of bins_rows */
#define GB_GBIN_CELLS 65536	/* cells that gbin's uint16 can number */
/*
 * Native categorical features (step 4c): at most GB_CAT_MAX_LEFT levels
 * sent left by one split, candidates with at least GB_CAT_MIN_DATA rows
 * at the node, the statistic g / (h + GB_CAT_SMOOTH).
 */
#define GB_CAT_MAX_LEFT 64
#define GB_CAT_MIN_DATA 5
#define GB_CAT_SMOOTH 10.0

/* A histogram cell: exact sums of quantized g and h. */
struct gb_cell {
	int64_t g, h;
};

struct gb_split {
	int valid;
	double gain;
	uint32_t feature, bin;
	int dleft; /* missing values go left (step 4m) */
	/* a native feature's split (step 4c): the levels sent left,
	 * ascending, and their exact sums */
	int cat;
	uint32_t ncats;
	int64_t gl, hl;
	uint32_t cats[GB_CAT_MAX_LEFT];
};

/* A node of the tree being grown (creation order). */
struct gb_tnode {
	int leaf;
	uint32_t feature, bin, left, right;
	float value, cover;
	int dleft;
	int cat;		 /* a level set: fcats[cat_at .. + ncats) */
	uint32_t cat_at, ncats;
};

/* A leaf that may still be split. */
struct gb_open {
	uint32_t node;
	size_t start, count;
	uint32_t depth;
	int64_t g, h;
	struct gb_cell *hist; /* NULL: this leaf stays a leaf */
	struct gb_split best;
};

struct gb_job {
	int subtract;
	const uint32_t *rows;
	size_t count;
	struct gb_cell *hist;
	const struct gb_cell *parent, *small;
	int64_t g, h;
	double parent_term;
};

struct gb_run {
	const struct pins *p;
	size_t n, nfeat;
	uint32_t C, K;
	const float *x;
	const uint32_t *y;
	uint8_t *bins;	   /* nfeat x n: column-major, feature f at f * n */
	uint16_t *gbin;	   /* n x nfeat, row-major: cell hoff[f] + bin of
			    * row i's feature f at i * nfeat + f (NULL: more
			    * than GB_GBIN_CELLS cells) */
	uint32_t *nb;	   /* bins of values per feature */
	uint8_t *hasmiss;  /* per feature: a missing cell after the nb (1m) */
	size_t *hoff;	   /* first cell of each feature in a histogram */
	size_t hcells;
	float *edges;
	uint32_t *estart;  /* nfeat + 1 */
	struct gb_cell *gh;	/* per row, this tree: quantized g and h */
	struct gb_cell *ord;	/* the node's g and h in its row order */
	struct gb_cell *copies; /* per thread: GB_COPIES x GB_COPY_STRIDE */
	uint32_t *rowf, *rowo;	/* per thread: nfeat features, their cells */
	int by_rows;		/* this tree's histograms by hist_rows */
	uint32_t *idx, *tmp;
	uint32_t *feats, nsel; /* this tree's features, ascending */
	size_t *soff;	       /* per selected feature: its first cell */
	uint32_t *perm;
	uint8_t *on;		/* per feature: drawn for this tree */
	struct gb_split *fbest; /* per selected feature */
	double lambda, gamma, mcw, lr;
	struct pool *pool;
	struct gb_job job;
	/* free histograms */
	struct gb_cell **hfree;
	size_t nhfree, caphfree;
	/* the tree being grown */
	struct gb_tnode *tn;
	size_t ntn, captn;
	struct gb_open *open;
	size_t nopen, capopen;
	/* the forest so far */
	struct rebuild_tree_node *nodes;
	size_t nnodes, capnodes;
	uint32_t *tstart;
	uint32_t ntrees;
	int oom;
	/* native categorical features (step 1c); nat NULL: none */
	const uint32_t *nat;	/* per feature: its level count, or 0 */
	uint32_t *cbins;	/* per native feature: n level indexes */
	size_t *cboff;		/* per feature: its first in cbins */
	uint32_t maxlev;	/* the most levels of a native feature */
	struct gb_cat_cell *ccell; /* per thread: maxlev cells */
	uint32_t *corder;	/* per thread: 2 maxlev */
	double *cstat;		/* per thread: maxlev */
	uint8_t *cmask;		/* maxlev + 1: the levels sent left */
	uint32_t *fcats;	/* the forest's level sets so far */
	size_t nfcats, capfcats;
	const float *vx;	/* the validation rows (nv x nfeat) */
	uint32_t *vcb;		/* per native feature: nv level indexes */
	size_t *vcboff;		/* per feature: its first in vcb */
};

/* Histogram cells of feature f: bins (and the missing one), or a native
 * feature's levels' sums then their row counts. */
static inline uint32_t
gb_cells(const struct gb_run *r, uint32_t f)
{
	if (r->nat != NULL && r->nat[f] > 0)
		return 2 * (r->nat[f] + 1); /* the levels, and L for none */
	return r->nb[f] + r->hasmiss[f];
}

/*
 * The softmax of a case's K margins (K 1: logits 0 and mg[0]): p gets C
 * probabilities; the return value is log-sum-exp minus the logit of y
 * (the loss) when y < C.
 */
float
gbdt1_softmax(const float *mg, uint32_t K, uint32_t C, uint32_t y, float *p)
{
	float mx, s = 0.0f, zy = 0.0f;

	if (K == 1) {
		/* Logits 0 and z1: one of the two exps is e^0, exactly 1. */
		float z1 = mg[0];
		mx = z1 > 0.0f ? z1 : 0.0f;
		p[0] = z1 > 0.0f ? fm_expf_inline(0.0f - z1) : 1.0f;
		p[1] = z1 > 0.0f ? 1.0f : fm_expf_inline(z1);
		zy = y == 1 ? z1 : 0.0f;
	} else {
		mx = mg[0];
		for (uint32_t c = 1; c < C; c++)
			if (mg[c] > mx)
				mx = mg[c];
		for (uint32_t c = 0; c < C; c++)
			p[c] = fm_expf_inline(mg[c] - mx);
		if (y < C)
			zy = mg[y];
	}
	for (uint32_t c = 0; c < C; c++)
		s += p[c];
	for (uint32_t c = 0; c < C; c++)
		p[c] = p[c] / s;
	if (y >= C)
		return 0.0f;
	return (fm_logf(s) + mx) - zy;
}

/*
 * gbdt1_softmax of n cases of two classes (K 1), bit for bit: p gets n x 2
 * probabilities; t is n floats of scratch, and with y (not NULL) holds
 * the n losses on return.  The one exp that is not e^0 (of 0 - z1 or of
 * z1) and the log run through the strict kernels' expv and logv, a
 * vector at a time with the bits of fm_expf and fm_logf; the selects and
 * divisions run GB_VW cases a step in GCC vector types (selects as bit
 * masks, the same IEEE operation on each lane), the tail case by case.
 */

void
gbdt1_softmax2(const struct kernel_ops *k, const float *mg, size_t n,
	    const uint32_t *y, float *p, float *t)
{
	const gb_vf zf = { 0 }, one = zf + 1.0f;
	const gb_vi zi = { 0 };
	size_t i;

	for (i = 0; i + GB_VW <= n; i += GB_VW) {
		gb_vf z = GB_LD(gb_vf, mg + i);
		*(gb_vf *)(void *)(t + i) = GB_SEL(z > zf, zf - z, z);
	}
	for (; i < n; i++) {
		float z1 = mg[i], nz = 0.0f - z1;
		t[i] = z1 > 0.0f ? nz : z1;
	}
	k->expv(t, t, n);
	for (i = 0; i + GB_VW <= n; i += GB_VW) {
		gb_vf z = GB_LD(gb_vf, mg + i), e = GB_LD(gb_vf, t + i);
		gb_vi pos = z > zf;
		gb_vf p0 = GB_SEL(pos, e, one), p1 = GB_SEL(pos, one, e);
		gb_vf sum = (zf + p0) + p1, q0 = p0 / sum, q1 = p1 / sum;
		for (int l = 0; l < GB_VW; l++) {
			p[2 * (i + l)] = q0[l];
			p[2 * (i + l) + 1] = q1[l];
		}
		*(gb_vf *)(void *)(t + i) = sum;
	}
	for (; i < n; i++) {
		float z1 = mg[i], e = t[i];
		float p0 = z1 > 0.0f ? e : 1.0f, p1 = z1 > 0.0f ? 1.0f : e;
		float sum = (0.0f + p0) + p1;
		p[2 * i] = p0 / sum;
		p[2 * i + 1] = p1 / sum;
		t[i] = sum;
	}
	if (y == NULL)
		return;
	k->logv(t, t, n);
	for (i = 0; i + GB_VW <= n; i += GB_VW) {
		gb_vf z = GB_LD(gb_vf, mg + i), l = GB_LD(gb_vf, t + i);
		gb_vi yv = GB_LD(gb_vi, y + i);
		gb_vf mx = GB_SEL(z > zf, z, zf), zy = GB_SEL(yv == zi + 1, z, zf);
		*(gb_vf *)(void *)(t + i) = (l + mx) - zy;
	}
	for (; i < n; i++) {
		float z1 = mg[i], mx = z1 > 0.0f ? z1 : 0.0f;
		t[i] = (t[i] + mx) - (y[i] == 1 ? z1 : 0.0f);
	}
}

/* The leaf of tree t (root at node root) that x reaches.  (x < threshold
 * as ever; a NaN, never below it, goes the split's missing side, right
 * in every forest an older build made.)  A level set's side comes from
 * the bit tables cb of the forest when given (gbdt1_catbits_left, the
 * side rebuild_tree_cat_left gives: they came later and moved no bit). */
static uint32_t
gb_walk(const struct rebuild_tree_node *nodes, uint32_t root, const float *x,
	const struct gb_catbits *cb)
{
	uint32_t i = root;

	while (nodes[i].feature != REBUILD_TREE_LEAF) {
		const struct rebuild_tree_node *q = &nodes[i];
		int left = cb != NULL && (q->flags & REBUILD_TREE_CATEGORICAL)
				   ? gbdt1_catbits_left(cb, i, x[q->feature])
				   : rebuild_tree_goes_left(q, x[q->feature]);
		i = left ? q->left : q->right;
	}
	return i;
}

static int
gb_forward(const struct rebuild_model *m, const float *x, size_t n,
	   const uint32_t *y, float *probs, float *loss)
{
	const struct rebuild_forest *f = &m->forest;
	uint32_t K = f->ngroups, C = f->nclasses;
	float *mg = malloc(K * sizeof(float));
	struct gb_catbits *cb = NULL;

	if (mg == NULL || gbdt1_catbits_new(f, &cb) != 0) {
		free(mg);
		return RBA_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const float *xi = x + i * f->nfeatures;
		float l;
		memcpy(mg, f->base, K * sizeof(float));
		for (uint32_t t = 0; t < f->ntrees; t++)
			mg[t % K] += f->nodes[gb_walk(f->nodes, f->tree_start[t], xi,
						      cb)]
					     .value;
		l = gbdt1_softmax(mg, K, C, y != NULL ? y[i] : C, probs + i * C);
		if (loss != NULL && y != NULL)
			loss[i] = l;
	}
	gbdt1_catbits_free(cb);
	free(mg);
	return 0;
}

/* ---- growth ---------------------------------------------------------- */

static void *
gb_grow(void *p, size_t *cap, size_t need, size_t size, int *oom)
{
	void *np;
	size_t c;

	if (need <= *cap)
		return p;
	c = *cap ? *cap * 2 : 64;
	while (c < need)
		c *= 2;
	np = realloc(p, c * size);
	if (np == NULL) {
		*oom = 1;
		return p;
	}
	*cap = c;
	return np;
}

static struct gb_cell *
hist_get(struct gb_run *r)
{
	if (r->nhfree > 0)
		return r->hfree[--r->nhfree];
	return malloc(r->hcells * sizeof(struct gb_cell));
}

static void
hist_put(struct gb_run *r, struct gb_cell *h)
{
	if (h == NULL)
		return;
	r->hfree = gb_grow(r->hfree, &r->caphfree, r->nhfree + 1,
			   sizeof(*r->hfree), &r->oom);
	if (r->oom) {
		free(h);
		return;
	}
	r->hfree[r->nhfree++] = h;
}

static int64_t
quantize(float v)
{
	double q = (double)v * GB_QSCALE;

	return (int64_t)(q + (q < 0.0 ? -0.5 : 0.5));
}

/*
 * One scan of feature f's edges with (mg, mh), the missing cell's sums,
 * added to the left side (0, 0: the missing rows on the right, or none),
 * keeping a split only when its gain is strictly greater than the best
 * so far, of either side (dleft says which).  The sums are integers, so
 * adding a zero missing cell changes no bit.  An empty side scores
 * exactly 0 (or is skipped when lambda is 0), never above gamma: no row
 * count is needed.
 */
static void
feature_scan(const struct gb_run *r, uint32_t f, const struct gb_cell *c,
	     const struct gb_job *j, int64_t mg, int64_t mh, int dleft,
	     struct gb_split *out)
{
	int64_t gl = mg, hl = mh;

	for (uint32_t t = 0; t + 1 < r->nb[f]; t++) {
		double HL, HR, GL, GR, dl, dr, gain;
		gl += c[t].g;
		hl += c[t].h;
		HL = (double)hl * GB_QINV;
		HR = (double)(j->h - hl) * GB_QINV;
		if (HL < r->mcw || HR < r->mcw)
			continue;
		dl = HL + r->lambda;
		dr = HR + r->lambda;
		if (!(dl > 0.0) || !(dr > 0.0))
			continue;
		GL = (double)gl * GB_QINV;
		GR = (double)(j->g - gl) * GB_QINV;
		gain = (GL * GL / dl + GR * GR / dr) - j->parent_term;
		if (!out->valid || gain > out->gain) {
			out->valid = 1;
			out->gain = gain;
			out->bin = t;
			out->dleft = dleft;
		}
	}
}

/* The best split of one feature from its cells (total order: bin, then
 * missing right before missing left). */
static void
feature_best(const struct gb_run *r, uint32_t f, const struct gb_cell *c,
	     const struct gb_job *j, struct gb_split *out)
{
	out->valid = 0;
	out->gain = 0.0;
	out->feature = f;
	out->bin = 0;
	out->dleft = 0;
	out->cat = 0;
	out->ncats = 0;
	feature_scan(r, f, c, j, 0, 0, 0, out);
	/* Step 4m: the missing cell on the left, after every right. */
	if (r->hasmiss[f] && (c[r->nb[f]].g != 0 || c[r->nb[f]].h != 0))
		feature_scan(r, f, c, j, c[r->nb[f]].g, c[r->nb[f]].h, 1, out);
}

/*
 * Adds ord[i] into cells h[k] + col[rows[i]] for every row i, row i into
 * copy i % 4, four rows a step with four separate adds (the four copies
 * may be one histogram: each add reads the cell afresh).
 */
static inline void
hist_add(const uint8_t *col, const uint32_t *rows, const struct gb_cell *ord,
	 size_t count, struct gb_cell *h0, struct gb_cell *h1,
	 struct gb_cell *h2, struct gb_cell *h3)
{
	size_t i = 0;

	for (; i + 4 <= count; i += 4) {
		struct gb_cell *e0 = h0 + col[rows[i]];
		struct gb_cell *e1 = h1 + col[rows[i + 1]];
		struct gb_cell *e2 = h2 + col[rows[i + 2]];
		struct gb_cell *e3 = h3 + col[rows[i + 3]];
		e0->g += ord[i].g;
		e0->h += ord[i].h;
		e1->g += ord[i + 1].g;
		e1->h += ord[i + 1].h;
		e2->g += ord[i + 2].g;
		e2->h += ord[i + 2].h;
		e3->g += ord[i + 3].g;
		e3->h += ord[i + 3].h;
	}
	for (; i < count; i++) {
		struct gb_cell *e = h0 + col[rows[i]];
		e->g += ord[i].g;
		e->h += ord[i].h;
	}
}

/*
 * One feature's cells over the node's rows: out[bin] gets the sums of
 * ord[i] over the rows i whose bin is bin.  A feature of few bins is
 * summed in four copies added up at the end, so back-to-back rows of
 * one bin do not wait on each other's stores; exact integer sums, so
 * the copies change no bit.
 */
static void
hist_feature(const uint8_t *col, uint32_t nb, const uint32_t *rows,
	     const struct gb_cell *ord, size_t count, struct gb_cell *out,
	     struct gb_cell *copies)
{
	if (nb <= GB_FEW_BINS && count >= GB_COPIES_MIN_ROWS) {
		struct gb_cell *h0 = copies, *h1 = copies + GB_COPY_STRIDE;
		struct gb_cell *h2 = copies + 2 * GB_COPY_STRIDE;
		struct gb_cell *h3 = copies + 3 * GB_COPY_STRIDE;
		for (int c = 0; c < GB_COPIES; c++)
			memset(copies + c * GB_COPY_STRIDE, 0,
			       nb * sizeof(struct gb_cell));
		hist_add(col, rows, ord, count, h0, h1, h2, h3);
		for (uint32_t b = 0; b < nb; b++) {
			out[b].g = h0[b].g + h1[b].g + h2[b].g + h3[b].g;
			out[b].h = h0[b].h + h1[b].h + h2[b].h + h3[b].h;
		}
		return;
	}
	memset(out, 0, nb * sizeof(struct gb_cell));
	hist_add(col, rows, ord, count, out, out, out, out);
}

/*
 * The cells of m features at once over the node's rows, a row at a
 * time: row rows[i]'s cell of feature fs[k] (gbin) gets gh[rows[i]];
 * with fs NULL the features are 0 .. m - 1, all of them.  A row's cells
 * are side by side (gbin row-major), so a row costs a cache line or two
 * for every feature, not one a feature, and its g and h are read once
 * (no ord gathered first); the adds of a row go to different cells and
 * do not wait on each other.  The same integer sums as hist_feature's,
 * in another order: no bit moves.
 */
static void
hist_rows(const uint16_t *gbin, size_t nf, const uint32_t *fs, uint32_t m,
	  const uint32_t *rows, const struct gb_cell *gh, size_t count,
	  struct gb_cell *h)
{
	size_t i = 0;

	if (fs == NULL) {
		/* two rows a step: their adds interleave */
		for (; i + 2 <= count; i += 2) {
			const uint16_t *b0 = gbin + (size_t)rows[i] * nf;
			const uint16_t *b1 = gbin + (size_t)rows[i + 1] * nf;
			struct gb_cell c0 = gh[rows[i]], c1 = gh[rows[i + 1]];
			if (i + GB_ROW_AHEAD + 1 < count) {
				__builtin_prefetch(gbin + (size_t)rows[i + GB_ROW_AHEAD] * nf);
				__builtin_prefetch(gbin + (size_t)rows[i + GB_ROW_AHEAD + 1] * nf);
				__builtin_prefetch(gh + rows[i + GB_ROW_AHEAD]);
				__builtin_prefetch(gh + rows[i + GB_ROW_AHEAD + 1]);
			}
			for (uint32_t k = 0; k < m; k++) {
				struct gb_cell *e0 = h + b0[k];
				e0->g += c0.g;
				e0->h += c0.h;
				struct gb_cell *e1 = h + b1[k];
				e1->g += c1.g;
				e1->h += c1.h;
			}
		}
		for (; i < count; i++) {
			const uint16_t *b = gbin + (size_t)rows[i] * nf;
			struct gb_cell c = gh[rows[i]];
			for (uint32_t k = 0; k < m; k++) {
				struct gb_cell *e = h + b[k];
				e->g += c.g;
				e->h += c.h;
			}
		}
		return;
	}
	for (; i < count; i++) {
		const uint16_t *b = gbin + (size_t)rows[i] * nf;
		struct gb_cell c = gh[rows[i]];
		if (i + GB_ROW_AHEAD < count) {
			__builtin_prefetch(gbin + (size_t)rows[i + GB_ROW_AHEAD] * nf);
			__builtin_prefetch(gh + rows[i + GB_ROW_AHEAD]);
		}
		for (uint32_t k = 0; k < m; k++) {
			struct gb_cell *e = h + b[fs[k]];
			e->g += c.g;
			e->h += c.h;
		}
	}
}

/*
 * Step 1c/4c: a native feature's cells over the node's rows: out[lv]
 * the sums of the rows of level lv, out[L + lv].g their count (exact
 * integers, so the parent-minus-sibling shortcut holds for both); L is
 * the feature's level count plus one, the last one for a value that is
 * no level (none in training data: encode_fit gives each row its level).
 */
static void
hist_native(const uint32_t *col, uint32_t L, const uint32_t *rows,
	    const struct gb_cell *ord, size_t count, struct gb_cell *out)
{
	memset(out, 0, 2 * (size_t)L * sizeof(struct gb_cell));
	for (size_t i = 0; i < count; i++) {
		uint32_t lv = col[rows[i]];
		out[lv].g += ord[i].g;
		out[lv].h += ord[i].h;
		out[L + lv].g++;
	}
}

/* Step 4c: the best level set of native feature f (gbdt1_cat_best). */
static void
native_best(const struct gb_run *r, uint32_t f, const struct gb_cell *c,
	    const struct gb_job *j, unsigned tid, struct gb_split *out)
{
	uint32_t L = r->nat[f];
	struct gb_cat_cell *cc = r->ccell + (size_t)tid * r->maxlev;
	struct gb_cat_params cp;
	struct gb_cat_split cs;

	cp.lambda = r->lambda;
	cp.mcw = r->mcw;
	cp.smooth = GB_CAT_SMOOTH;
	cp.max_left = GB_CAT_MAX_LEFT;
	cp.min_data = GB_CAT_MIN_DATA;
	for (uint32_t k = 0; k < L; k++) {
		cc[k].g = c[k].g;
		cc[k].h = c[k].h;
		cc[k].n = (uint64_t)c[L + 1 + k].g;
	}
	gbdt1_cat_best(cc, L, j->g, j->h, j->parent_term, &cp,
		       r->corder + (size_t)tid * 2 * r->maxlev,
		       r->cstat + (size_t)tid * r->maxlev, out->cats, &cs);
	out->valid = cs.valid;
	out->gain = cs.gain;
	out->feature = f;
	out->bin = 0;
	out->dleft = 0;
	out->cat = 1;
	out->ncats = cs.nleft;
	out->gl = cs.gl;
	out->hl = cs.hl;
}

/*
 * The histogram job: thread tid takes selected features tid, tid +
 * nthreads, ...; each feature's cells are exact integer sums, so who
 * computes them does not matter.  A built histogram goes down the
 * node's rows once for all the thread's features (by_rows: hist_rows on
 * the row-major cell numbers), or else feature by feature (the bins
 * column-major, the rows' g and h gathered into ord in the node's order
 * by open_evaluate).
 */
static void
hist_job(void *ctx, unsigned tid, unsigned nthreads)
{
	struct gb_run *r = ctx;
	const struct gb_job *j = &r->job;

	if (j->subtract) {
		for (uint32_t s = tid; s < r->nsel; s += nthreads) {
			size_t o = r->soff[s];
			uint32_t nb = gb_cells(r, r->feats[s]);
			for (uint32_t b = 0; b < nb; b++) {
				j->hist[o + b].g = j->parent[o + b].g - j->small[o + b].g;
				j->hist[o + b].h = j->parent[o + b].h - j->small[o + b].h;
			}
		}
	} else {
		struct gb_cell *copies =
			r->copies + (size_t)tid * GB_COPIES * GB_COPY_STRIDE;
		uint32_t *fs = r->rowf + (size_t)tid * r->nfeat;
		uint32_t *co = r->rowo + (size_t)tid * r->nfeat, m = 0;
		for (uint32_t s = tid; s < r->nsel; s += nthreads) {
			uint32_t f = r->feats[s];
			if (r->nat != NULL && r->nat[f] > 0) {
				hist_native(r->cbins + r->cboff[f], r->nat[f] + 1,
					    j->rows, r->ord, j->count,
					    j->hist + r->soff[s]);
				continue;
			}
			fs[m] = f;
			co[m++] = (uint32_t)r->soff[s];
		}
		if (r->by_rows) {
			assert(m >= GB_ROW_FEATS);
			for (uint32_t k = 0; k < m; k++)
				memset(j->hist + co[k], 0,
				       gb_cells(r, fs[k]) * sizeof(struct gb_cell));
			hist_rows(r->gbin, r->nfeat, m == r->nfeat ? NULL : fs, m,
				  j->rows, r->gh, j->count, j->hist);
		} else {
			for (uint32_t k = 0; k < m; k++)
				hist_feature(r->bins + (size_t)fs[k] * r->n,
					     gb_cells(r, fs[k]), j->rows,
					     r->ord, j->count, j->hist + co[k],
					     copies);
		}
	}
	for (uint32_t s = tid; s < r->nsel; s += nthreads) {
		uint32_t f = r->feats[s];
		if (r->nat != NULL && r->nat[f] > 0)
			native_best(r, f, j->hist + r->soff[s], j, tid,
				    &r->fbest[s]);
		else if (r->nb[f] > 1)
			feature_best(r, f, j->hist + r->soff[s], j, &r->fbest[s]);
		else
			r->fbest[s].valid = 0;
	}
}

static double
parent_term(const struct gb_run *r, int64_t g, int64_t h)
{
	double G = (double)g * GB_QINV, d = (double)h * GB_QINV + r->lambda;

	return d > 0.0 ? G * G / d : 0.0;
}

/* Fills o->hist (built from rows, or parent - small) and o->best. */
static void
open_evaluate(struct gb_run *r, struct gb_open *o, const struct gb_cell *parent,
	      const struct gb_cell *small)
{
	struct gb_job *j = &r->job;

	j->subtract = parent != NULL;
	j->rows = r->idx + o->start;
	j->count = o->count;
	j->hist = o->hist;
	j->parent = parent;
	j->small = small;
	j->g = o->g;
	j->h = o->h;
	j->parent_term = parent_term(r, o->g, o->h);
	if (!j->subtract && !r->by_rows)
		for (size_t i = 0; i < o->count; i++) {
			if (i + GB_ROW_AHEAD < o->count)
				__builtin_prefetch(r->gh + j->rows[i + GB_ROW_AHEAD]);
			r->ord[i] = r->gh[j->rows[i]];
		}
	/* Small nodes are not worth waking threads for (same bits anyway). */
	if (o->count * r->nsel < 65536 && !j->subtract)
		hist_job(r, 0, 1);
	else if (j->subtract && r->nsel < 64)
		hist_job(r, 0, 1);
	else
		pool_run(r->pool, hist_job, r);
	o->best.valid = 0;
	for (uint32_t s = 0; s < r->nsel; s++) {
		const struct gb_split *c = &r->fbest[s];
		if (c->valid && (!o->best.valid || c->gain > o->best.gain))
			o->best = *c;
	}
	if (o->best.valid && !(o->best.gain > r->gamma))
		o->best.valid = 0;
}

static uint32_t
tnode_new(struct gb_run *r, int64_t g, int64_t h)
{
	struct gb_tnode *t;
	double G = (double)g * GB_QINV, H = (double)h * GB_QINV;
	double d = H + r->lambda;

	r->tn = gb_grow(r->tn, &r->captn, r->ntn + 1, sizeof(*r->tn), &r->oom);
	if (r->oom)
		return 0;
	t = &r->tn[r->ntn];
	memset(t, 0, sizeof(*t));
	t->leaf = 1;
	t->value = d > 0.0 ? (float)(-(G / d) * r->lr) : 0.0f;
	t->cover = (float)H;
	return (uint32_t)r->ntn++;
}

static void
sums(const struct gb_run *r, size_t start, size_t count, int64_t *g, int64_t *h)
{
	int64_t sg = 0, sh = 0;

	for (size_t i = start; i < start + count; i++) {
		sg += r->gh[r->idx[i]].g;
		sh += r->gh[r->idx[i]].h;
	}
	*g = sg;
	*h = sh;
}

/* A leaf at depth may still split when depth < max_depth and rows >= 2. */
static int
open_push(struct gb_run *r, uint32_t node, size_t start, size_t count,
	  uint32_t depth, int64_t g, int64_t h, int wants_hist)
{
	struct gb_open *o;

	r->open = gb_grow(r->open, &r->capopen, r->nopen + 1, sizeof(*r->open),
			  &r->oom);
	if (r->oom)
		return RBA_E_NOMEM;
	o = &r->open[r->nopen++];
	memset(o, 0, sizeof(*o));
	o->node = node;
	o->start = start;
	o->count = count;
	o->depth = depth;
	o->g = g;
	o->h = h;
	if (wants_hist) {
		o->hist = hist_get(r);
		if (o->hist == NULL)
			return RBA_E_NOMEM;
	}
	return 0;
}

/*
 * The stable partition of open leaf par's rows by its best split:
 * both sides keep ascending row order; returns the left side's count.
 * Each row is written to both sides and only one count moves: no
 * branch to mispredict (rows[nl] is at or before rows[i], already read).
 */
static size_t
split_partition(struct gb_run *r, const struct gb_open *par)
{
	const uint8_t *col = r->bins + (size_t)par->best.feature * r->n;
	uint32_t *rows = r->idx + par->start;
	size_t nl = 0, nr = 0;

	if (par->best.cat) {
		/* step 4c: the rows whose level is in the set go left */
		const uint32_t *cb = r->cbins + r->cboff[par->best.feature];
		for (uint32_t i = 0; i < par->best.ncats; i++)
			r->cmask[par->best.cats[i]] = 1;
		for (size_t i = 0; i < par->count; i++) {
			uint32_t row = rows[i];
			size_t left = r->cmask[cb[row]];
			rows[nl] = row;
			r->tmp[nr] = row;
			nl += left;
			nr += 1 - left;
		}
		for (uint32_t i = 0; i < par->best.ncats; i++)
			r->cmask[par->best.cats[i]] = 0;
	} else if (!par->best.dleft) {
		for (size_t i = 0; i < par->count; i++) {
			uint32_t row = rows[i];
			size_t left = col[row] <= par->best.bin;
			rows[nl] = row;
			r->tmp[nr] = row;
			nl += left;
			nr += 1 - left;
		}
	} else {
		/* step 6m: the missing bin (nb) goes left too */
		uint32_t mb = r->nb[par->best.feature];
		for (size_t i = 0; i < par->count; i++) {
			uint32_t row = rows[i];
			size_t left = col[row] <= par->best.bin || col[row] == mb;
			rows[nl] = row;
			r->tmp[nr] = row;
			nl += left;
			nr += 1 - left;
		}
	}
	memcpy(rows + nl, r->tmp, nr * sizeof(uint32_t));
	return nl;
}

/* The left side's sums of open leaf par's best split: the split
 * feature's cells up to the split bin in the parent's histogram (the
 * same integers), a level set's own, the missing bin's when it goes
 * left. */
static void
split_left_sums(const struct gb_run *r, const struct gb_open *par,
		int64_t *glp, int64_t *hlp)
{
	int64_t gl = 0, hl = 0;

	for (uint32_t b = 0; !par->best.cat && b <= par->best.bin; b++) {
		gl += par->hist[r->hoff[par->best.feature] + b].g;
		hl += par->hist[r->hoff[par->best.feature] + b].h;
	}
	if (par->best.cat) {
		gl = par->best.gl;
		hl = par->best.hl;
	}
	if (par->best.dleft) {
		uint32_t mb = r->nb[par->best.feature];
		gl += par->hist[r->hoff[par->best.feature] + mb].g;
		hl += par->hist[r->hoff[par->best.feature] + mb].h;
	}
	*glp = gl;
	*hlp = hl;
}

/* Open leaf par's node made its best split, with children ln and rn
 * (a level set appended to the forest's).  0 or RBA_E_NOMEM. */
static int
split_node_set(struct gb_run *r, const struct gb_open *par, uint32_t ln,
	       uint32_t rn)
{
	struct gb_tnode *t;

	if (par->best.cat) {
		r->fcats = gb_grow(r->fcats, &r->capfcats,
				   r->nfcats + par->best.ncats, sizeof(uint32_t),
				   &r->oom);
		if (r->oom)
			return RBA_E_NOMEM;
		memcpy(r->fcats + r->nfcats, par->best.cats,
		       par->best.ncats * sizeof(uint32_t));
		r->tn[par->node].cat = 1;
		r->tn[par->node].cat_at = (uint32_t)r->nfcats;
		r->tn[par->node].ncats = par->best.ncats;
		r->nfcats += par->best.ncats;
	}
	t = &r->tn[par->node];
	t->leaf = 0;
	t->feature = par->best.feature;
	t->bin = par->best.bin;
	t->dleft = par->best.dleft;
	t->left = ln;
	t->right = rn;
	t->value = 0.0f;
	return 0;
}

/* Splits open leaf k: partition, two children, their histograms. */
static int
open_split(struct gb_run *r, size_t k)
{
	struct gb_open par = r->open[k];
	size_t nl, nr;
	int64_t gl, hl, gr, hr;
	uint32_t ln, rn, depth = par.depth + 1;
	int deeper = depth < r->p->model.gbdt.max_depth;
	int err;

	r->open[k] = r->open[--r->nopen];
	nl = split_partition(r, &par);
	nr = par.count - nl;
	assert(par.hist != NULL);
	split_left_sums(r, &par, &gl, &hl);
	gr = par.g - gl;
	hr = par.h - hl;
	ln = tnode_new(r, gl, hl);
	rn = tnode_new(r, gr, hr);
	if (r->oom || split_node_set(r, &par, ln, rn) != 0) {
		hist_put(r, par.hist);
		return RBA_E_NOMEM;
	}
	if ((err = open_push(r, ln, par.start, nl, depth, gl, hl, deeper)) ||
	    (err = open_push(r, rn, par.start + nl, nr, depth, gr, hr, deeper))) {
		hist_put(r, par.hist);
		return err;
	}
	if (deeper) {
		struct gb_open *L = &r->open[r->nopen - 2];
		struct gb_open *R = &r->open[r->nopen - 1];
		struct gb_open *sm = L->count <= R->count ? L : R;
		struct gb_open *big = sm == L ? R : L;
		open_evaluate(r, sm, NULL, NULL);
		open_evaluate(r, big, par.hist, sm->hist);
		for (int s = 0; s < 2; s++) {
			struct gb_open *o = s ? R : L;
			if (!o->best.valid) {
				hist_put(r, o->hist);
				o->hist = NULL;
			}
		}
	}
	hist_put(r, par.hist);
	return r->oom ? RBA_E_NOMEM : 0;
}

/* Appends tree node i and its subtree to the forest in preorder. */
static uint32_t
emit_preorder(struct gb_run *r, uint32_t i)
{
	const struct gb_tnode *t = &r->tn[i];
	uint32_t at, child;
	struct rebuild_tree_node *o;

	r->nodes = gb_grow(r->nodes, &r->capnodes, r->nnodes + 1,
			   sizeof(*r->nodes), &r->oom);
	if (r->oom)
		return 0;
	at = (uint32_t)r->nnodes++;
	o = &r->nodes[at];
	memset(o, 0, sizeof(*o));
	o->cover = t->cover;
	if (t->leaf) {
		o->feature = REBUILD_TREE_LEAF;
		o->value = t->value;
		return at;
	}
	o->feature = t->feature;
	o->bin = t->bin;
	o->flags = t->dleft ? REBUILD_TREE_DEFAULT_LEFT : 0;
	if (t->cat) {
		/* step 4c: bin holds the set's place in fcats until the
		 * forest is done (gb_cat_pointers) */
		o->flags = REBUILD_TREE_CATEGORICAL;
		o->bin = t->cat_at;
		o->ncats = t->ncats;
		o->threshold = 0.0f;
	} else {
		o->threshold = r->edges[r->estart[t->feature] + t->bin];
	}
	/* (the calls may move r->nodes: assign after each returns) */
	child = emit_preorder(r, t->left);
	r->nodes[at].left = child;
	child = emit_preorder(r, t->right);
	r->nodes[at].right = child;
	return at;
}

static void
select_features(struct gb_run *r, uint32_t tree)
{
	uint32_t nf = (uint32_t)r->nfeat, k;
	double cs = r->p->model.gbdt.colsample;
	uint64_t key;

	for (uint32_t i = 0; i < nf; i++)
		r->perm[i] = i;
	if (cs >= 1.0) {
		memcpy(r->feats, r->perm, nf * sizeof(uint32_t));
		r->nsel = nf;
		for (uint32_t s = 0; s < r->nsel; s++)
			r->soff[s] = r->hoff[r->feats[s]];
		return;
	}
	k = (uint32_t)(cs * (double)nf);
	if (k < 1)
		k = 1;
	key = rng_key(r->p->train.seed, RNG_GBDT_COLS, tree, 0);
	for (uint32_t i = 0; i < k; i++) {
		uint32_t j = i + (uint32_t)rng_below(key, i, nf - i);
		uint32_t t = r->perm[i];
		r->perm[i] = r->perm[j];
		r->perm[j] = t;
	}
	/* ascending: the order of the tie rule */
	memset(r->on, 0, nf);
	for (uint32_t i = 0; i < k; i++)
		r->on[r->perm[i]] = 1;
	r->nsel = 0;
	for (uint32_t f = 0; f < nf; f++)
		if (r->on[f])
			r->feats[r->nsel++] = f;
	for (uint32_t s = 0; s < r->nsel; s++)
		r->soff[s] = r->hoff[r->feats[s]];
}

/*
 * Grows one tree on rows idx[0..nrows) and appends it to the forest;
 * adds each sampled row's leaf value to its margin mg[row * K + k] (the
 * leaf its partition ended in: the one a walk of its x reaches).
 */
static int
grow_tree(struct gb_run *r, size_t nrows, uint32_t tree, float *mg,
	  uint32_t k)
{
	uint32_t root;
	int64_t g, h;
	uint32_t leaves = 1, cap = r->p->model.gbdt.max_leaves;
	int err;

	select_features(r, tree);
	/* every thread's share of the features by rows, or none's (no
	 * native one: hist_native reads ord) */
	r->by_rows = r->gbin != NULL && r->nat == NULL &&
		     r->nsel / pool_threads(r->pool) >= GB_ROW_FEATS;
	r->ntn = 0;
	r->nopen = 0;
	sums(r, 0, nrows, &g, &h);
	root = tnode_new(r, g, h);
	if (r->oom)
		return RBA_E_NOMEM;
	if ((err = open_push(r, root, 0, nrows, 0, g, h,
			     r->p->model.gbdt.max_depth > 0)))
		return err;
	open_evaluate(r, &r->open[0], NULL, NULL);
	if (!r->open[0].best.valid) {
		hist_put(r, r->open[0].hist);
		r->open[0].hist = NULL;
	}
	for (;;) {
		size_t pick = r->nopen;
		for (size_t q = 0; q < r->nopen; q++) {
			const struct gb_open *o = &r->open[q];
			if (!o->best.valid)
				continue;
			/* greatest gain; ties: the node made first */
			if (pick == r->nopen || o->best.gain > r->open[pick].best.gain ||
			    (o->best.gain == r->open[pick].best.gain &&
			     o->node < r->open[pick].node))
				pick = q;
		}
		if (pick == r->nopen || (cap != 0 && leaves >= cap))
			break;
		if ((err = open_split(r, pick)))
			return err;
		leaves++;
	}
	for (size_t o = 0; o < r->nopen; o++) {
		const struct gb_open *lf = &r->open[o];
		float v = r->tn[lf->node].value;
		for (size_t i = lf->start; i < lf->start + lf->count; i++)
			mg[(size_t)r->idx[i] * r->K + k] += v;
		hist_put(r, lf->hist);
	}
	r->nopen = 0;
	r->tstart = realloc(r->tstart, ((size_t)tree + 2) * sizeof(uint32_t));
	if (r->tstart == NULL) {
		r->oom = 1;
		return RBA_E_NOMEM;
	}
	r->tstart[tree] = (uint32_t)r->nnodes;
	emit_preorder(r, root);
	if (r->oom)
		return RBA_E_NOMEM;
	if (r->nnodes > REBUILD_GBDT_MAX_NODES)
		return RBA_E_RANGE;
	r->tstart[tree + 1] = (uint32_t)r->nnodes;
	r->ntrees = tree + 1;
	return 0;
}

/* ---- bins ------------------------------------------------------------ */


/*
 * Sorts n floats (no NaN, no -0) ascending by their order keys, four
 * passes of a byte each through tmp: the one ascending order of the
 * values, as qsort with cmp_float gives it (the sort came later than
 * step 1 and moved no bit: a sorted array is the same whatever sorted
 * it).
 */
static void
sort_floats(float *v, size_t n, uint32_t *tmp)
{
	uint32_t *a = tmp, *b = tmp + n;
	size_t cnt[256];

	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		a[i] = u ^ ((u >> 31) ? 0xffffffffu : 0x80000000u);
	}
	for (int pass = 0; pass < 4; pass++) {
		unsigned sh = 8u * (unsigned)pass;
		size_t sum = 0;
		uint32_t *t;
		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < n; i++)
			cnt[(a[i] >> sh) & 255]++;
		for (int c = 0; c < 256; c++) {
			size_t m = cnt[c];
			cnt[c] = sum;
			sum += m;
		}
		for (size_t i = 0; i < n; i++)
			b[cnt[(a[i] >> sh) & 255]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	/* four passes: the sorted keys are back in tmp */
	for (size_t i = 0; i < n; i++) {
		uint32_t u = a[i] ^ ((a[i] >> 31) ? 0x80000000u : 0xffffffffu);
		memcpy(&v[i], &u, 4);
	}
}

/* Step 1c for native feature f (its values col): no edges (ne so far),
 * one bin; the rows' level indexes (a value that is no index: L, which
 * no set holds). */
static void
bins_native(struct gb_run *r, size_t f, const float *col, size_t ne)
{
	uint32_t L = r->nat[f], *cb = r->cbins + r->cboff[f];

	for (size_t i = 0; i < r->n; i++) {
		float xv = col[i];
		cb[i] = xv >= 0.0f && xv < (float)L &&
				(float)(uint32_t)xv == xv
			? (uint32_t)xv : L;
		r->bins[f * r->n + i] = 0;
	}
	r->estart[f + 1] = (uint32_t)ne;
	r->nb[f] = 1;
	r->hoff[f + 1] = r->hoff[f] + gb_cells(r, (uint32_t)f);
}

/*
 * Steps 1 and 1m for feature f (its values col): its edges appended to
 * the ne so far, its bin count and histogram cells; returns the new
 * edge count.  v (n floats) and vt are sort_floats' space.
 */
static size_t
bins_edges(struct gb_run *r, size_t f, const float *col, float *v,
	   uint32_t *vt, size_t ne)
{
	size_t d = 0, e0 = ne, n = 0; /* n: the rows with a value */
	uint32_t B = r->p->model.gbdt.max_bins;

	for (size_t i = 0; i < r->n; i++) {
		float xv = col[i];
		if (xv != xv)
			continue; /* step 1m */
		v[n++] = xv + 0.0f; /* -0 is +0 */
	}
	if (n < r->n) {
		/* step 1m: one bin fewer for the values, the smallest
		 * one's edge, and the missing bin after them */
		r->hasmiss[f] = 1;
		B = (B > 255 ? 255 : B) - 1;
		if (B < 1)
			B = 1;
	}
	sort_floats(v, n, vt);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || v[i] > v[i - 1])
			d++;
	if (d <= B) {
		for (size_t i = 1; i < n; i++)
			if (v[i] > v[i - 1])
				r->edges[ne++] = v[i];
	} else {
		for (uint64_t k = 1; k < B; k++) {
			float c = v[(size_t)(k * (uint64_t)n / B)];
			if (c > v[0] && (ne == e0 || c > r->edges[ne - 1]))
				r->edges[ne++] = c;
		}
	}
	if (r->hasmiss[f] && n > 0) {
		/* the smallest value is an edge too: splitting there
		 * parts the missing rows from every other */
		memmove(r->edges + e0 + 1, r->edges + e0,
			(ne - e0) * sizeof(float));
		r->edges[e0] = v[0];
		ne++;
	}
	r->estart[f + 1] = (uint32_t)ne;
	r->nb[f] = (uint32_t)(ne - e0) + 1;
	r->hoff[f + 1] = r->hoff[f] + r->nb[f] + r->hasmiss[f];
	return ne;
}

/* Each row's bin of feature f (its values col; edges e0 .. ne): the
 * number of edges at or below its value, the missing bin nb for none. */
static void
bins_assign(struct gb_run *r, size_t f, const float *col, size_t e0,
	    size_t ne)
{
	for (size_t i = 0; i < r->n; i++) {
		float x = col[i];
		/* the number of edges at or below x, without a branch
		 * (the search came later: the same count, no bit moved) */
		const float *e = r->edges + e0, *base = e;
		size_t len = ne - e0;
		if (x != x) {
			r->bins[f * r->n + i] = (uint8_t)r->nb[f];
			continue;
		}
		if (len == 0) {
			r->bins[f * r->n + i] = 0;
			continue;
		}
		while (len > 1) {
			size_t half = len / 2;
			base = base[half] <= x ? base + half : base;
			len -= half;
		}
		r->bins[f * r->n + i] = (uint8_t)((size_t)(base - e) + (*base <= x));
	}
}

/* The row-major cell numbers (gbin) of the column-major bins, a block
 * of rows at a time (the block's columns stay in cache); none when the
 * histogram has more than GB_GBIN_CELLS cells.  0 or RBA_E_NOMEM. */
static int
bins_rows(struct gb_run *r)
{
	size_t n = r->n, nf = r->nfeat;

	if (r->hcells > GB_GBIN_CELLS || n == 0)
		return 0;
	if ((r->gbin = malloc(n * nf * sizeof(uint16_t))) == NULL)
		return RBA_E_NOMEM;
	for (size_t i0 = 0; i0 < n; i0 += GB_TRANSPOSE_ROWS) {
		size_t i1 = i0 + GB_TRANSPOSE_ROWS < n ? i0 + GB_TRANSPOSE_ROWS : n;
		for (size_t f = 0; f < nf; f++) {
			const uint8_t *c = r->bins + f * n;
			uint16_t o = (uint16_t)r->hoff[f];
			for (size_t i = i0; i < i1; i++)
				r->gbin[i * nf + f] = (uint16_t)(o + c[i]);
		}
	}
	return 0;
}

/* Step 1 of the recipe: edges and the column-major bin matrix (the
 * partition reads one feature of many rows), then its row-major cell
 * numbers (bins_rows: the histograms of a node read a row's cells side
 * by side, not one cache line a feature; they came later and moved no
 * bit). */
static int
make_bins(struct gb_run *r)
{
	size_t nf = r->nfeat, ne = 0;
	uint32_t B0 = r->p->model.gbdt.max_bins;
	float *v = malloc(r->n * sizeof(float));
	uint32_t *vt = malloc(2 * r->n * sizeof(uint32_t) + sizeof(uint32_t));
	/* GB_BIN_GROUP columns copied out of the row-major rows in one pass */
	float *cols = malloc(GB_BIN_GROUP * r->n * sizeof(float) + sizeof(float));

	r->estart = calloc(nf + 1, sizeof(uint32_t));
	r->edges = malloc(nf * (B0 - 1) * sizeof(float) + sizeof(float));
	r->nb = calloc(nf, sizeof(uint32_t));
	r->hasmiss = calloc(nf ? nf : 1, 1);
	r->hoff = calloc(nf + 1, sizeof(size_t));
	r->bins = malloc(nf * r->n);
	if (v == NULL || vt == NULL || cols == NULL || r->estart == NULL ||
	    r->edges == NULL || r->nb == NULL || r->hasmiss == NULL ||
	    r->hoff == NULL || r->bins == NULL) {
		free(v);
		free(vt);
		free(cols);
		return RBA_E_NOMEM;
	}
	for (size_t f = 0; f < nf; f++) {
		size_t e0 = ne;
		const float *col = cols + (f % GB_BIN_GROUP) * r->n;
		if (f % GB_BIN_GROUP == 0) {
			size_t g = nf - f < GB_BIN_GROUP ? nf - f : GB_BIN_GROUP;
			for (size_t i = 0; i < r->n; i++)
				for (size_t k = 0; k < g; k++)
					cols[k * r->n + i] = r->x[i * nf + f + k];
		}
		if (r->nat != NULL && r->nat[f] > 0) {
			bins_native(r, f, col, ne);
			continue;
		}
		ne = bins_edges(r, f, col, v, vt, ne);
		bins_assign(r, f, col, e0, ne);
	}
	r->hcells = r->hoff[nf];
	assert(r->hcells < UINT32_MAX); /* rowo holds cell numbers */
	free(v);
	free(vt);
	free(cols);
	return bins_rows(r);
}

/* ---- training -------------------------------------------------------- */

static void
run_free(struct gb_run *r)
{
	free(r->bins);
	free(r->gbin);
	free(r->nb);
	free(r->hasmiss);
	free(r->hoff);
	free(r->edges);
	free(r->estart);
	free(r->gh);
	free(r->ord);
	free(r->copies);
	free(r->rowf);
	free(r->rowo);
	free(r->idx);
	free(r->tmp);
	free(r->feats);
	free(r->soff);
	free(r->perm);
	free(r->on);
	free(r->fbest);
	for (size_t i = 0; i < r->nhfree; i++)
		free(r->hfree[i]);
	free(r->hfree);
	free(r->tn);
	free(r->open);
	free(r->nodes);
	free(r->tstart);
	free(r->cbins);
	free(r->cboff);
	free(r->ccell);
	free(r->corder);
	free(r->cstat);
	free(r->cmask);
	free(r->fcats);
	free(r->vcb);
	free(r->vcboff);
	pool_free(r->pool);
}

/* Step 4c: each categorical split's set pointer into fcats (its place
 * kept in bin), after fcats may have moved. */
static void
gb_cat_pointers(struct gb_run *r)
{
	for (size_t i = 0; i < r->nnodes; i++)
		if (r->nodes[i].feature != REBUILD_TREE_LEAF &&
		    (r->nodes[i].flags & REBUILD_TREE_CATEGORICAL))
			r->nodes[i].cats = r->fcats + r->nodes[i].bin;
}

/* Step 1c's buffers, for a set with a native feature. */
static int
gb_cat_setup(struct gb_run *r, const uint32_t *nat)
{
	size_t nf = r->nfeat, nnat = 0;
	unsigned th = pool_threads(r->pool);

	r->nat = nat;
	if (nat == NULL)
		return 0;
	r->cboff = calloc(nf, sizeof(size_t));
	if (r->cboff == NULL)
		return RBA_E_NOMEM;
	for (size_t f = 0; f < nf; f++)
		if (nat[f] > 0) {
			r->cboff[f] = nnat * r->n;
			nnat++;
			if (nat[f] > r->maxlev)
				r->maxlev = nat[f];
		}
	if (nnat == 0) {
		r->nat = NULL;
		return 0;
	}
	r->maxlev++; /* the level for none */
	r->cbins = malloc(nnat * r->n * sizeof(uint32_t));
	r->ccell = malloc((size_t)th * r->maxlev * sizeof(*r->ccell));
	r->corder = malloc((size_t)th * 2 * r->maxlev * sizeof(uint32_t));
	r->cstat = malloc((size_t)th * r->maxlev * sizeof(double));
	r->cmask = calloc((size_t)r->maxlev + 1, 1);
	if (r->cbins == NULL || r->ccell == NULL || r->corder == NULL ||
	    r->cstat == NULL || r->cmask == NULL)
		return RBA_E_NOMEM;
	return 0;
}

/*
 * Adds a tree's leaf values to the margins of n rows (group k of K),
 * skipping the rows marked in skip (may be NULL).
 */
static void
add_tree(const struct rebuild_tree_node *nodes, uint32_t root, const float *x,
	 size_t n, size_t nf, float *mg, uint32_t K, uint32_t k,
	 const uint8_t *skip)
{
	for (size_t i = 0; i < n; i++)
		if (skip == NULL || !skip[i])
			mg[i * K + k] += nodes[gb_walk(nodes, root, x + i * nf, NULL)]
						 .value;
}

/*
 * The validation rows binned as the training rows are (step 1's edges):
 * vb[f * nv + i].  A value's bin is the number of edges at or below it,
 * so it is below edge t exactly when its bin is at most t, and a tree
 * walked on the bins reaches the leaf gb_walk reaches on the values.  A
 * missing value takes its feature's missing bin (1m), or 255 for a
 * feature without one: above every split's bin (at most nb - 2 <= 254),
 * so it goes right, as a NaN does at a split of flags 0.
 */
static int
bin_rows(const struct gb_run *r, const float *x, size_t nv, uint8_t **out)
{
	size_t nf = r->nfeat;
	uint8_t *vb = malloc(nf * nv > 0 ? nf * nv : 1);

	*out = vb;
	if (vb == NULL)
		return RBA_E_NOMEM;
	for (size_t f = 0; f < nf; f++) {
		size_t e0 = r->estart[f], ne = r->estart[f + 1];
		uint8_t miss = r->hasmiss[f] ? (uint8_t)r->nb[f] : 255;
		for (size_t i = 0; i < nv; i++) {
			float v = x[i * nf + f];
			size_t lo = e0, hi = ne;
			if (v != v) {
				vb[f * nv + i] = miss;
				continue;
			}
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (r->edges[mid] <= v)
					lo = mid + 1;
				else
					hi = mid;
			}
			vb[f * nv + i] = (uint8_t)(lo - e0);
		}
	}
	return 0;
}

/*
 * Step 4c on the validation rows: per native feature (L levels), each
 * row's level index, or L for a value that is no index below L (an
 * unseen level, a number that is no level): the index of step 1c's
 * rule, which no set holds (the trainer's sets hold levels below L), so
 * a row goes left exactly when rebuild_tree_cat_left says so.
 */
static int
val_levels(struct gb_run *r, const float *x, size_t nv)
{
	size_t nf = r->nfeat, nnat = 0;

	if (r->nat == NULL)
		return 0;
	r->vcboff = calloc(nf, sizeof(size_t));
	if (r->vcboff == NULL)
		return RBA_E_NOMEM;
	for (size_t f = 0; f < nf; f++)
		if (r->nat[f] > 0)
			r->vcboff[f] = nv * nnat++;
	r->vcb = malloc((nv * nnat > 0 ? nv * nnat : 1) * sizeof(uint32_t));
	if (r->vcb == NULL)
		return RBA_E_NOMEM;
	for (size_t f = 0; f < nf; f++) {
		uint32_t L = r->nat[f], *cb = r->vcb + r->vcboff[f];
		if (L == 0)
			continue;
		for (size_t i = 0; i < nv; i++) {
			float xv = x[i * nf + f];
			cb[i] = xv >= 0.0f && xv < (float)L &&
					(float)(uint32_t)xv == xv
				? (uint32_t)xv : L;
		}
	}
	return 0;
}

/*
 * add_tree for binned rows: the rows idx[0..count) of node i (forest
 * nodes) partitioned down the tree on their bins (vb, nv rows a
 * column), each leaf's value added to its rows' margins (group k of K).
 * Each row gets its one leaf, as a walk gives it: the same sums.
 */
static void
add_tree_binned(const struct gb_run *r, const struct rebuild_tree_node *nodes,
		uint32_t i, const uint8_t *vb, size_t nv, uint32_t *idx,
		uint32_t *tmp, size_t count, float *mg, uint32_t K, uint32_t k)
{
	const struct rebuild_tree_node *q = &nodes[i];
	size_t nl = 0, nr = 0;
	const uint8_t *col;
	uint32_t bin, mb;
	int dleft;

	if (q->feature == REBUILD_TREE_LEAF) {
		for (size_t j = 0; j < count; j++)
			mg[(size_t)idx[j] * K + k] += q->value;
		return;
	}
	if (q->flags & REBUILD_TREE_CATEGORICAL) {
		/* step 4c: the level sets read the rows' values, as level
		 * indexes (val_levels) against the set's mask: the side
		 * rebuild_tree_cat_left gives (the mask came later and moved
		 * no bit) */
		const uint32_t *cb = r->vcb + r->vcboff[q->feature];
		for (uint32_t c = 0; c < q->ncats; c++) {
			assert(q->cats[c] < r->nat[q->feature]);
			r->cmask[q->cats[c]] = 1;
		}
		for (size_t j = 0; j < count; j++) {
			uint32_t row = idx[j];
			size_t left = r->cmask[cb[row]];
			idx[nl] = row;
			tmp[nr] = row;
			nl += left;
			nr += 1 - left;
		}
		for (uint32_t c = 0; c < q->ncats; c++)
			r->cmask[q->cats[c]] = 0;
		memcpy(idx + nl, tmp, nr * sizeof(uint32_t));
		add_tree_binned(r, nodes, q->left, vb, nv, idx, tmp, nl, mg, K, k);
		add_tree_binned(r, nodes, q->right, vb, nv, idx + nl, tmp, nr, mg,
				K, k);
		return;
	}
	col = vb + (size_t)q->feature * nv;
	bin = q->bin;
	dleft = (q->flags & REBUILD_TREE_DEFAULT_LEFT) != 0;
	mb = dleft ? r->nb[q->feature] : 256; /* no bin is 256 */
	for (size_t j = 0; j < count; j++) {
		uint32_t row = idx[j], b = col[row];
		size_t left = b <= bin || b == mb;
		idx[nl] = row;
		tmp[nr] = row;
		nl += left;
		nr += 1 - left;
	}
	memcpy(idx + nl, tmp, nr * sizeof(uint32_t));
	add_tree_binned(r, nodes, q->left, vb, nv, idx, tmp, nl, mg, K, k);
	add_tree_binned(r, nodes, q->right, vb, nv, idx + nl, tmp, nr, mg, K, k);
}

/* Loss, accuracy and AUC of a set from its probabilities (rebuild_eval). */
static int
set_metrics(const float *probs, const float *loss, const uint32_t *y,
	    size_t n, uint32_t C, uint32_t positive, float *score,
	    uint8_t *pos, double *mean_loss, double *acc, double *auc)
{
	double sum = 0, hits = 0;

	*mean_loss = *acc = *auc = NAN;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const float *p = probs + i * C;
		uint32_t best = 0;
		for (uint32_t c = 1; c < C; c++)
			if (p[c] > p[best])
				best = c;
		sum += loss[i];
		hits += best == y[i];
	}
	*mean_loss = sum / (double)n;
	*acc = hits / (double)n;
	if (C == 2 && positive < 2) {
		for (size_t i = 0; i < n; i++) {
			score[i] = probs[i * C + positive];
			pos[i] = y[i] == positive;
		}
		return rebuild_auc(score, pos, n, auc);
	}
	return 0;
}

static int
gb_fail(struct gb_run *r, struct rba_detail *d, int err)
{
	run_free(r);
	if (err == RBA_E_RANGE)
		return rba_fail(d, err, NULL, 0, 0,
				"the forest has more than %u nodes",
				REBUILD_GBDT_MAX_NODES);
	if (err == RBA_E_NOMEM)
		return rba_fail(d, err, NULL, 0, 0, "out of memory");
	return rba_fail(d, err, NULL, 0, 0, "cannot set up training");
}

/* gb_train's buffers beside the run: margins, probabilities and losses
 * of the training and validation rows, the round's rows, the validation
 * rows' bins and walk order, and what set_metrics sorts. */
struct gb_bufs {
	float *mg, *vmg, *pr, *vpr, *ls, *vls, *score;
	uint8_t *pos, *insample, *vb;
	uint32_t *vidx, *vtmp;
};

static void
gb_bufs_free(struct gb_bufs *b)
{
	free(b->mg);
	free(b->vmg);
	free(b->pr);
	free(b->vpr);
	free(b->ls);
	free(b->vls);
	free(b->score);
	free(b->pos);
	free(b->insample);
	free(b->vb);
	free(b->vidx);
	free(b->vtmp);
}

/* The run's settings from the pins and the training set (before any
 * allocation). */
static void
gb_run_init(struct gb_run *r, const struct pins *p, size_t nfeat,
	    uint32_t C, uint32_t K, const struct rebuild_set *train)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->n = train->n;
	r->nfeat = nfeat;
	r->C = C;
	r->K = K;
	r->x = train->x;
	r->y = train->y;
	r->lambda = p->model.gbdt.lambda;
	r->gamma = p->model.gbdt.gamma;
	r->mcw = p->model.gbdt.min_child_weight;
	r->lr = p->model.gbdt.learning_rate;
}

/* The run's per-row and per-feature work arrays and the buffers of b
 * (but b->vb, from bin_rows): 0 or RBA_E_NOMEM. */
static int
gb_alloc(struct gb_run *r, struct gb_bufs *b, size_t nv)
{
	size_t n = r->n, nfeat = r->nfeat;
	uint32_t K = r->K, C = r->C;

	b->vidx = malloc((nv ? nv : 1) * sizeof(uint32_t));
	b->vtmp = malloc((nv ? nv : 1) * sizeof(uint32_t));
	r->gh = malloc(n * sizeof(struct gb_cell));
	r->ord = malloc(n * sizeof(struct gb_cell));
	r->copies = malloc((size_t)pool_threads(r->pool) * GB_COPIES *
			   GB_COPY_STRIDE * sizeof(struct gb_cell));
	r->rowf = malloc((size_t)pool_threads(r->pool) * nfeat * sizeof(uint32_t));
	r->rowo = malloc((size_t)pool_threads(r->pool) * nfeat * sizeof(uint32_t));
	r->idx = malloc(n * sizeof(uint32_t));
	r->tmp = malloc(n * sizeof(uint32_t));
	r->feats = malloc(nfeat * sizeof(uint32_t));
	r->soff = malloc(nfeat * sizeof(size_t));
	r->perm = malloc(nfeat * sizeof(uint32_t));
	r->on = malloc(nfeat);
	r->fbest = malloc(nfeat * sizeof(struct gb_split));
	b->mg = calloc(n * K, sizeof(float));
	b->vmg = calloc((nv ? nv : 1) * K, sizeof(float));
	b->pr = malloc(n * C * sizeof(float));
	b->vpr = malloc((nv ? nv : 1) * C * sizeof(float));
	b->ls = malloc(n * sizeof(float));
	b->vls = malloc((nv ? nv : 1) * sizeof(float));
	b->score = malloc((nv ? nv : 1) * sizeof(float));
	b->pos = malloc(nv ? nv : 1);
	b->insample = malloc(n);
	if (b->insample == NULL || b->vidx == NULL || b->vtmp == NULL ||
	    r->gh == NULL || r->ord == NULL || r->copies == NULL ||
	    r->rowf == NULL || r->rowo == NULL ||
	    r->idx == NULL || r->tmp == NULL || r->feats == NULL ||
	    r->soff == NULL || r->perm == NULL || r->on == NULL ||
	    r->fbest == NULL || b->mg == NULL || b->vmg == NULL ||
	    b->pr == NULL || b->vpr == NULL || b->ls == NULL ||
	    b->vls == NULL || b->score == NULL || b->pos == NULL)
		return RBA_E_NOMEM;
	return 0;
}

/*
 * Round rd's trees (step 2): the rows of the round, then per group k
 * the gradients from the probabilities, the tree, and its leaves added
 * to the training rows it did not see and to the validation rows.
 */
static int
gb_round_trees(struct gb_run *r, struct gb_bufs *b, uint32_t rd,
	       const struct rebuild_set *train, size_t nv)
{
	size_t n = r->n;
	uint32_t K = r->K, C = r->C;
	double sub = r->p->model.gbdt.subsample;
	uint64_t rkey = rng_key(r->p->train.seed, RNG_GBDT_ROWS, rd, 0);
	size_t nrows = 0;
	uint32_t first = r->ntrees;
	int err;

	for (size_t i = 0; i < n; i++) {
		b->insample[i] = sub >= 1.0 || rng_uniform(rkey, i) < sub;
		if (b->insample[i])
			r->idx[nrows++] = (uint32_t)i;
	}
	for (uint32_t k = 0; k < K; k++) {
		uint32_t cls = K == 1 ? 1 : k;
		for (size_t i = 0; i < n; i++) {
			float pk = b->pr[i * C + cls];
			float g = pk - (train->y[i] == cls ? 1.0f : 0.0f);
			float h = pk * (1.0f - pk);
			r->gh[i].g = quantize(g);
			r->gh[i].h = quantize(h);
		}
		/* grow_tree reorders idx within nodes; restore it. */
		if (k > 0) {
			nrows = 0;
			for (size_t i = 0; i < n; i++)
				if (b->insample[i])
					r->idx[nrows++] = (uint32_t)i;
		}
		/* Margins of group k only change by group k's trees, in
		 * tree order, as scoring adds them. */
		if ((err = grow_tree(r, nrows, rd * K + k, b->mg, k)) != 0)
			return err;
		if (r->nat != NULL)
			gb_cat_pointers(r);
		if (nrows < n)
			add_tree(r->nodes, r->tstart[first + k], train->x, n,
				 r->nfeat, b->mg, K, k, b->insample);
		for (size_t i = 0; i < nv; i++)
			b->vidx[i] = (uint32_t)i;
		add_tree_binned(r, r->nodes, r->tstart[first + k], b->vb, nv,
				b->vidx, b->vtmp, nv, b->vmg, K, k);
	}
	return 0;
}

/*
 * The probabilities after round rd (of rounds) and its curve point when
 * rep is not NULL; *tlp gets the training loss summed (0 before the last
 * round with two classes).  0 or set_metrics' error.
 */
static int
gb_round_losses(const struct gb_run *r, struct gb_bufs *b,
		const struct kernel_ops *ks, uint32_t rd, uint32_t rounds,
		const struct rebuild_set *train, const struct rebuild_set *val,
		uint32_t positive, struct rebuild_report *rep, double *tlp)
{
	size_t n = r->n, nv = val->n;
	uint32_t K = r->K, C = r->C;
	double tl = 0.0;
	int last;

	/* The training loss (a log per row) and the AUC (a sort) are
	 * taken at the last round only: per round they would cost more
	 * than the trees.  Validation loss and accuracy every round. */
	last = rd + 1 == rounds;
	if (K == 1) {
		/* (a loss of 0 for each row before the last round) */
		gbdt1_softmax2(ks, b->mg, n, last ? train->y : NULL, b->pr,
			       b->ls);
		for (size_t i = 0; last && i < n; i++)
			tl += b->ls[i];
	} else {
		for (size_t i = 0; i < n; i++) {
			b->ls[i] = gbdt1_softmax(b->mg + i * K, K, C,
					      last ? train->y[i] : C,
					      b->pr + i * C);
			tl += b->ls[i];
		}
	}
	if (rep != NULL) {
		struct rebuild_epoch *ep = &rep->curve[rd];
		int err;
		if (K == 1)
			gbdt1_softmax2(ks, b->vmg, nv, val->y, b->vpr, b->vls);
		else for (size_t i = 0; i < nv; i++)
			b->vls[i] = gbdt1_softmax(b->vmg + i * K, K, C,
					       val->y[i], b->vpr + i * C);
		err = set_metrics(b->vpr, b->vls, val->y, nv, C,
				  last ? positive : C, b->score, b->pos,
				  &ep->val_loss, &ep->val_acc, &ep->val_auc);
		if (err != 0)
			return err;
		ep->train_loss = last ? tl / (double)n : NAN;
	}
	*tlp = tl;
	return 0;
}

/* The run's edges and forest moved into out (step 4c: the level sets
 * too, each split's bin turned into its set's pointer). */
static int
gb_forest_out(struct gb_run *r, struct rebuild_model *out)
{
	size_t nfeat = r->nfeat;
	int err;

	if ((err = rebuild_forest_alloc(out, (uint32_t)nfeat, r->C,
					r->estart[nfeat], r->ntrees, r->nnodes)))
		return err;
	memcpy(out->forest.edge_start, r->estart, (nfeat + 1) * sizeof(uint32_t));
	memcpy(out->forest.edges, r->edges, r->estart[nfeat] * sizeof(float));
	memcpy(out->forest.tree_start, r->tstart,
	       ((size_t)r->ntrees + 1) * sizeof(uint32_t));
	memcpy(out->forest.nodes, r->nodes, r->nnodes * sizeof(*r->nodes));
	if (r->nfcats > 0) {
		/* step 4c: the level sets move into the forest */
		out->forest.cats = r->fcats;
		out->forest.ncats = r->nfcats;
		r->fcats = NULL;
		for (size_t i = 0; i < r->nnodes; i++) {
			struct rebuild_tree_node *q = &out->forest.nodes[i];
			if (q->feature != REBUILD_TREE_LEAF &&
			    (q->flags & REBUILD_TREE_CATEGORICAL)) {
				q->cats = out->forest.cats + q->bin;
				q->bin = 0;
			}
		}
	}
	return 0;
}

/* The report's totals after rounds rounds over n rows from t0 on. */
static void
gb_report_done(struct rebuild_report *rep, uint32_t rounds, size_t n,
	       double t0)
{
	rep->epochs = rounds;
	rep->final = rep->curve[rounds - 1];
	rep->examples = (uint64_t)n * rounds;
	rep->train_seconds = rba_time_mono() - t0;
	rep->examples_per_second =
		rep->train_seconds > 0
			? (double)rep->examples / rep->train_seconds
			: 0.0;
	rep->kernels = "strict";
}

static int
gb_train(const struct pins *p, size_t nfeat, uint32_t nclasses,
	 uint32_t positive, const struct rebuild_set *train,
	 const struct rebuild_set *val, struct rebuild_model *out,
	 struct rebuild_report *rep, const struct rebuild_progress *progress,
	 struct rba_detail *d)
{
	struct gb_run r;
	struct gb_bufs b;
	size_t n = train->n, nv = val->n;
	uint32_t K = nclasses == 2 ? 1 : nclasses, C = nclasses;
	uint32_t rounds = p->model.gbdt.trees;
	unsigned threads = p->determinism.threads ? p->determinism.threads : 1;
	const struct kernel_ops *ks = kernel_strict();
	double t0;
	int err;

	memset(&b, 0, sizeof(b));
	gb_run_init(&r, p, nfeat, C, K, train);
	if ((err = pool_new(threads, &r.pool)) != 0)
		return gb_fail(&r, d, err);
	/* The training time counts the bin edges too, as a library's
	 * timing of its training counts its own sketch. */
	t0 = rba_time_mono();
	r.vx = val->x;
	if ((err = gb_cat_setup(&r, train->native)) != 0 ||
	    (err = make_bins(&r)) != 0)
		return gb_fail(&r, d, err);
	if ((err = bin_rows(&r, val->x, nv, &b.vb)) != 0 ||
	    (err = val_levels(&r, val->x, nv)) != 0 ||
	    (err = gb_alloc(&r, &b, nv)) != 0)
		goto fail;
	if (rep != NULL) {
		rep->curve = calloc(rounds, sizeof(*rep->curve));
		if (rep->curve == NULL) {
			err = RBA_E_NOMEM;
			goto fail;
		}
	}
	/* Base margins 0: both margin arrays start there (calloc). */
	if (K == 1)
		gbdt1_softmax2(ks, b.mg, n, NULL, b.pr, b.ls);
	else
		for (size_t i = 0; i < n; i++)
			gbdt1_softmax(b.mg + i * K, K, C, C, b.pr + i * C);
	for (uint32_t rd = 0; rd < rounds; rd++) {
		double tl;
		if ((err = gb_round_trees(&r, &b, rd, train, nv)) != 0 ||
		    (err = gb_round_losses(&r, &b, ks, rd, rounds, train, val,
					   positive, rep, &tl)) != 0)
			goto fail;
		if (!isfinite(tl)) {
			run_free(&r);
			err = rba_fail(d, RBA_E_NUMERIC, NULL, 0, 0,
				       "training diverged in round %u", rd + 1);
			goto out;
		}
		if (progress != NULL && progress->epoch != NULL)
			progress->epoch(progress->ctx, rd + 1, rounds);
	}
	if ((err = gb_forest_out(&r, out)) != 0)
		goto fail;
	if (rep != NULL)
		gb_report_done(rep, rounds, n, t0);
	run_free(&r);
	err = 0;
	goto out;
fail:
	err = gb_fail(&r, d, err);
out:
	if (err != 0 && rep != NULL) {
		free(rep->curve);
		rep->curve = NULL;
	}
	gb_bufs_free(&b);
	return err;
}

const struct abi_gbdt_impl gbdt1_impl = {
	"histogram gradient boosting on log loss, exact integer gradient "
	"sums, own exp/log, keyed SplitMix64 streams",
	gb_train,
	gb_forward,
	gbdt1_sparse_new,
};
