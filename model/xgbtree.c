/*
 * xgbtree.c - XGBoost 1.7's prediction rules on a forest, XT_BLOCK cases
 * at a time.
 *
 * How the leaves are found (not what they add up to): the block's inputs
 * are held feature-major as order keys (xt_key), so x < thr is an
 * integer compare, key(x) < key(thr); a NaN input has the largest key,
 * never below a threshold.  A tree of depth D <= XT_FULL_DEPTH is laid
 * out complete (root at position 1, children of p at 2p and 2p + 1, a
 * leaf above depth D repeated into both subtrees below it), one 8-byte
 * word a split: the key just below its threshold's and the offset of the
 * input row it reads.  A step is then c = 2c + (below < key).  A split
 * that sends missing values left reads its feature's left copy, a row
 * after the features where a NaN's key (the largest, never below a
 * threshold) is 0 (never above one) and every other key is the same.
 * Deeper trees walk their own nodes the same way, a leaf pointing at
 * itself; trees of depth 1 .. TW_MAXDEPTH are walked by vectors where
 * the CPU has them (train/treewalk.h).  Every case adds its trees'
 * leaves in tree order, as XGBoost does.
 */
#include "model/xgbtree.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/treewalk.h"

#define XT_BLOCK TW_BLOCK  /* cases walked side by side (80) */
#define XT_FULL_DEPTH 10 /* deeper trees walk their nodes */
#define XT_KEY_NAN UINT32_MAX
#define XT_LANES 8	   /* cases a walk holds in registers */

struct xt_node {
	uint32_t below, off;
	uint32_t kid[2];
};

struct xgbtree {
	uint32_t nfeat, K, ntrees;
	uint32_t nx;	/* input rows: nfeat, then the left copies */
	uint32_t *lrow; /* per feature: its left copy's row, or UINT32_MAX */
	float *base;
	struct tw_shape *tree;
	uint64_t *fnode; /* below << 32 | offset */
	float *fval;
	struct xt_node *nodes;
	float *value;
	uint32_t *x;   /* nx x XT_BLOCK keys */
	float *mg;     /* XT_BLOCK x K */
	uint32_t *cur; /* XT_BLOCK positions */
	struct tw_vec vec; /* the vector walks (vec.walk NULL: none) */
};

/* Unsigned order of keys = order of floats; -0 and +0 one key; NaN last. */
static inline uint32_t
xt_key(float v)
{
	uint32_t u;

	if (v != v)
		return XT_KEY_NAN;
	v += 0.0f; /* -0 is +0 */
	memcpy(&u, &v, sizeof(u));
	return u ^ ((0u - (u >> 31)) | 0x80000000u);
}

/* A finite threshold's key minus one: key(x) > it exactly when
 * !(x < thr), a NaN x included. */
static uint32_t
xt_below(float thr)
{
	return xt_key(thr) - 1; /* finite: its key is >= key(-max) > 0 */
}

void
xgbtree_free(struct xgbtree *s)
{
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
	free(s->cur);
	tw_vec_free(&s->vec);
	free(s);
}

/* The input row split q reads: its feature's, or its left copy. */
static uint32_t
xt_row(const struct xgbtree *s, const struct rebuild_tree_node *q)
{
	return q->flags & REBUILD_TREE_DEFAULT_LEFT ? s->lrow[q->feature]
						    : q->feature;
}

/* Fills complete position p (at level, of depth d) from node i. */
static void
fill_full(struct xgbtree *s, const struct tw_shape *tr,
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
		leaf ? 0
		     : (uint64_t)xt_below(q->threshold) << 32 |
			       (uint64_t)xt_row(s, q) * XT_BLOCK;
	fill_full(s, tr, nodes, leaf ? i : q->left, 2 * p, level + 1);
	fill_full(s, tr, nodes, leaf ? i : q->right, 2 * p + 1, level + 1);
}

int
xgbtree_new(const struct rebuild_forest *f, struct xgbtree **out)
{
	struct xgbtree *s;
	size_t nn = f->tree_start[f->ntrees], nfull, nval;

	assert(f->rules != REBUILD_FOREST_OWN);
	assert(f->nfeatures <= REBUILD_MAX_WIDTH);
	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return RBA_E_NOMEM;
	s->nfeat = f->nfeatures;
	s->K = f->ngroups;
	s->ntrees = f->ntrees;
	s->base = malloc(s->K * sizeof(float));
	s->tree = calloc(s->ntrees, sizeof(*s->tree));
	s->nodes = malloc(nn * sizeof(*s->nodes));
	s->value = malloc(nn * sizeof(float));
	s->lrow = malloc((s->nfeat ? s->nfeat : 1) * sizeof(uint32_t));
	if (s->lrow == NULL)
		goto nomem;
	s->nx = tw_left_rows(f, s->lrow);
	/* keys 0 until written: every case of a block walks */
	s->x = calloc((size_t)XT_BLOCK * s->nx, sizeof(uint32_t));
	s->mg = malloc((size_t)XT_BLOCK * s->K * sizeof(float));
	s->cur = malloc(XT_BLOCK * sizeof(uint32_t));
	if (s->base == NULL || s->tree == NULL || s->nodes == NULL ||
	    s->value == NULL || s->x == NULL || s->mg == NULL || s->cur == NULL)
		goto nomem;
	memcpy(s->base, f->base, s->K * sizeof(float));
	tw_shapes(f, XT_FULL_DEPTH, s->tree, &nfull, &nval);
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
		struct xt_node *o = &s->nodes[i];
		if (q->feature == REBUILD_TREE_LEAF) {
			o->below = 0;
			o->off = 0;
			o->kid[0] = o->kid[1] = (uint32_t)i;
		} else {
			o->below = xt_below(q->threshold);
			o->off = xt_row(s, q) * XT_BLOCK;
			o->kid[0] = q->left;
			o->kid[1] = q->right;
		}
		s->value[i] = q->value;
	}
	*out = s;
	return 0;
nomem:
	xgbtree_free(s);
	return RBA_E_NOMEM;
}

/*
 * The left copies of the block's nb cases: a feature's keys, with a
 * NaN's (XT_KEY_NAN, above every threshold's key below) made 0 (below
 * every one).
 */
static void
xt_left_copies(struct xgbtree *s, size_t nb)
{
	for (uint32_t f = 0; f < s->nfeat; f++) {
		const uint32_t *k = s->x + (size_t)f * XT_BLOCK;
		uint32_t *l;
		if (s->lrow[f] == UINT32_MAX)
			continue;
		l = s->x + (size_t)s->lrow[f] * XT_BLOCK;
		for (size_t j = 0; j < nb; j++)
			l[j] = k[j] == XT_KEY_NAN ? 0 : k[j];
	}
}

/*
 * The block's nb cases (keys in s->x, left copies made) through every
 * tree, their margins into s->mg.
 */
static void
xt_block(struct xgbtree *s, size_t nb)
{
	const uint32_t *xs = s->x;
	uint32_t *cur = s->cur;
	float *mg = s->mg;
	uint32_t K = s->K;
	/* the vector walks read their own keys, and add to every case's
	 * margin */
	size_t nm = s->vec.walk != NULL ? XT_BLOCK : nb;

	if (s->vec.walk != NULL)
		tw_block_keys(xs, (size_t)s->nx * XT_BLOCK, s->vec.xv);
	for (size_t j = 0; j < nm; j++)
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
			const uint64_t *fn = s->fnode + tr->at;
			const float *fv = s->fval + tr->vat;
			size_t j = 0;
			/* XT_LANES cases at a time, each one's position in a
			 * register, so that their loads overlap */
			for (; j + XT_LANES <= nb; j += XT_LANES) {
				size_t c[XT_LANES];
				for (int l = 0; l < XT_LANES; l++)
					c[l] = 1;
				for (uint32_t step = 0; step < d; step++)
					for (int l = 0; l < XT_LANES; l++) {
						uint64_t q = fn[c[l]];
						uint32_t below = (uint32_t)(q >> 32);
						uint32_t k = xs[(uint32_t)q + j + (size_t)l];
						c[l] = 2 * c[l] + (below < k);
					}
				for (int l = 0; l < XT_LANES; l++)
					mg[(j + (size_t)l) * K + g] += fv[c[l]];
			}
			for (; j < nb; j++) {
				size_t c = 1;
				for (uint32_t step = 0; step < d; step++) {
					uint64_t q = fn[c];
					uint32_t below = (uint32_t)(q >> 32);
					uint32_t k = xs[(uint32_t)q + j];
					c = 2 * c + (below < k);
				}
				mg[j * K + g] += fv[c];
			}
			continue;
		}
		for (size_t j = 0; j < nb; j++)
			cur[j] = (uint32_t)tr->at;
		for (uint32_t step = 0; step < d; step++)
			for (size_t j = 0; j < nb; j++) {
				const struct xt_node *q = s->nodes + cur[j];
				cur[j] = q->kid[q->below < xs[q->off + j]];
			}
		for (size_t j = 0; j < nb; j++)
			mg[j * K + g] += s->value[cur[j]];
	}
}

void
xgbtree_margins(struct xgbtree *s, const float *x, size_t stride, size_t n,
		float *margins)
{
	uint32_t nf = s->nfeat, K = s->K;

	for (size_t c0 = 0; c0 < n; c0 += XT_BLOCK) {
		size_t nb = n - c0 < XT_BLOCK ? n - c0 : XT_BLOCK;
		for (size_t j = 0; j < nb; j++) {
			const float *row = x + (c0 + j) * stride;
			for (uint32_t f = 0; f < nf; f++)
				s->x[(size_t)f * XT_BLOCK + j] = xt_key(row[f]);
		}
		xt_left_copies(s, nb);
		xt_block(s, nb);
		memcpy(margins + c0 * K, s->mg, nb * K * sizeof(float));
	}
}

/* XGBoost 1.7's common::Sigmoid, step by step in float. */
static float
xt_sigmoid(float x)
{
	const float eps = 1e-16f;
	float t = -x;

	t = 88.7f < t ? 88.7f : t; /* std::min(-x, 88.7f) */
	return 1.0f / (expf(t) + 1.0f + eps);
}

/* XGBoost 1.7's common::Softmax of K margins into p. */
static void
xt_softmax(const float *m, uint32_t K, float *p)
{
	float wmax = m[0];
	double wsum = 0.0;

	for (uint32_t k = 1; k < K; k++)
		wmax = fmaxf(m[k], wmax);
	for (uint32_t k = 0; k < K; k++) {
		p[k] = expf(m[k] - wmax);
		wsum += p[k];
	}
	for (uint32_t k = 0; k < K; k++)
		p[k] /= (float)wsum;
}

void
xgbtree_transform(const struct rebuild_forest *f, const float *margins,
		  size_t n, float *probs)
{
	uint32_t K = f->ngroups, C = f->nclasses;

	assert(f->rules == REBUILD_FOREST_XGB_SIGMOID ||
	       f->rules == REBUILD_FOREST_XGB_SOFTMAX);
	for (size_t i = 0; i < n; i++) {
		if (f->rules == REBUILD_FOREST_XGB_SIGMOID) {
			float p1 = xt_sigmoid(margins[i]);
			probs[i * 2] = 1.0f - p1;
			probs[i * 2 + 1] = p1;
		} else {
			assert(K == C);
			xt_softmax(margins + i * K, K, probs + i * C);
		}
	}
}

int
xgbtree_probs(const struct rebuild_forest *f, const float *x, size_t n,
	      float *probs)
{
	struct xgbtree *s;
	float *mg;
	int err;

	if (n == 0)
		return 0;
	if ((err = xgbtree_new(f, &s)) != 0)
		return err;
	if ((mg = malloc(n * f->ngroups * sizeof(float))) == NULL) {
		xgbtree_free(s);
		return RBA_E_NOMEM;
	}
	xgbtree_margins(s, x, f->nfeatures, n, mg);
	xgbtree_transform(f, mg, n, probs);
	free(mg);
	xgbtree_free(s);
	return 0;
}

/* ---- the sparse scorer interface ---- */

struct xt_sparse {
	struct rebuild_sparse head; /* first: rebuild_sparse_* cast */
	struct xgbtree *s;
	struct rebuild_forest f; /* rules, groups, classes only */
	uint32_t zero;		 /* xt_key(0) */
};

static void
xt_sparse_free(struct rebuild_sparse *sp)
{
	struct xt_sparse *x = (struct xt_sparse *)sp;

	if (x == NULL)
		return;
	xgbtree_free(x->s);
	free(x);
}

static void
xt_sparse_score(struct rebuild_sparse *sp, const float *tx,
		const uint32_t *row, size_t nterms, size_t ncases, float *probs)
{
	struct xt_sparse *x = (struct xt_sparse *)sp;
	struct xgbtree *s = x->s;
	size_t nall = (size_t)s->nfeat * XT_BLOCK;

	for (size_t c0 = 0; c0 < ncases; c0 += XT_BLOCK) {
		size_t nb = ncases - c0 < XT_BLOCK ? ncases - c0 : XT_BLOCK;
		for (size_t i = 0; i < nall; i++)
			s->x[i] = x->zero;
		for (size_t j = 0; j < nb; j++)
			for (size_t k = 0; k < nterms; k++) {
				size_t t = (c0 + j) * nterms + k;
				s->x[(size_t)row[t] * XT_BLOCK + j] = xt_key(tx[t]);
			}
		xt_left_copies(s, nb);
		xt_block(s, nb);
		xgbtree_transform(&x->f, s->mg, nb, probs + c0 * x->f.nclasses);
	}
}

int
xgbtree_sparse_new(const struct rebuild_model *m, struct rebuild_sparse **out)
{
	struct xt_sparse *x;
	int err;

	*out = NULL;
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return RBA_E_NOMEM;
	x->head.score = xt_sparse_score;
	x->head.free = xt_sparse_free;
	x->f.rules = m->forest.rules;
	x->f.ngroups = m->forest.ngroups;
	x->f.nclasses = m->forest.nclasses;
	x->zero = xt_key(0.0f);
	if ((err = xgbtree_new(&m->forest, &x->s)) != 0) {
		free(x);
		return err;
	}
	*out = &x->head;
	return 0;
}
