/* artifact.c - canonical artifact bytes: writer and hardened reader. */
#include "model/artifact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "model/xgbtree.h"

#define NO_POSITIVE 0xFFFFFFFFu

void
artifact_release(struct artifact *a)
{
	if (a == NULL)
		return;
	encode_spec_release(&a->spec);
	rebuild_model_release(&a->model);
	free(a->xgb_tree);
	free(a->xgb_node);
	memset(a, 0, sizeof(*a));
}

static int
spec_features(const struct encode_spec *s, size_t *nf)
{
	size_t n = 0;

	for (uint32_t c = 0; c < s->ncolumns; c++)
		n += encode_column_width(&s->columns[c]);
	*nf = n;
	return n == s->nfeatures;
}

/* Label, classes, positive class, columns, means and scales. */
static void
put_spec(const struct encode_spec *s, size_t nf, struct rba_buf *out)
{
	rba_buf_put_str(out, s->label);
	rba_buf_put_u32(out, s->nclasses);
	for (uint32_t c = 0; c < s->nclasses; c++)
		rba_buf_put_str(out, s->classes[c]);
	rba_buf_put_u32(out, s->positive == ENCODE_NO_POSITIVE ? NO_POSITIVE
							       : s->positive);
	rba_buf_put_u32(out, s->ncolumns);
	for (uint32_t c = 0; c < s->ncolumns; c++) {
		const struct encode_column *col = &s->columns[c];
		rba_buf_put_str(out, col->name);
		rba_buf_put_u8(out, (uint8_t)col->kind);
		if (col->kind == ENCODE_NUMERIC)
			continue;
		rba_buf_put_u32(out, col->nlevels);
		for (uint32_t i = 0; i < col->nlevels; i++)
			rba_buf_put_str(out, col->levels[i]);
	}
	for (size_t f = 0; f < nf; f++)
		rba_buf_put_f32(out, s->mean[f]);
	for (size_t f = 0; f < nf; f++)
		rba_buf_put_f32(out, s->scale[f]);
}

/* Whether spec s holds exactly the default tokens of a forest: "". */
static int
tokens_default(const struct encode_spec *s)
{
	return s->nmissing == 1 && s->missing[0][0] == 0;
}

/* Format 3's missing-value section (rebuild-audit-artifact(5)). */
static void
put_missing(const struct encode_spec *s, size_t nf, struct rba_buf *out)
{
	rba_buf_put_u32(out, s->nmissing);
	for (uint32_t i = 0; i < s->nmissing; i++)
		rba_buf_put_str(out, s->missing[i]);
	rba_buf_put_u8(out, s->impute != NULL ? ARTIFACT_IMPUTE_VALUES
					      : ARTIFACT_IMPUTE_NONE);
	for (size_t f = 0; s->impute != NULL && f < nf; f++)
		rba_buf_put_f32(out, s->impute[f]);
}

/*
 * Whether every categorical split of f is on a native feature of spec s
 * (nf features) with its level set canonical: 0, RBA_E_RANGE or
 * RBA_E_NOMEM.
 */
static int
check_cat_splits(const struct encode_spec *s, const struct rebuild_forest *f,
		 size_t nf)
{
	uint32_t *nat = NULL; /* per feature: a native column's levels, or 0 */

	if ((nat = calloc(nf ? nf : 1, sizeof(uint32_t))) == NULL)
		return RBA_E_NOMEM;
	for (uint32_t c = 0, j = 0; c < s->ncolumns; c++) {
		if (s->columns[c].kind == ENCODE_NATIVE)
			nat[j] = s->columns[c].nlevels;
		j += encode_column_width(&s->columns[c]);
	}
	/* every categorical split on a native feature, its set canonical */
	for (size_t i = 0; i < f->tree_start[f->ntrees]; i++) {
		const struct rebuild_tree_node *q = &f->nodes[i];
		if (q->feature == REBUILD_TREE_LEAF ||
		    !(q->flags & REBUILD_TREE_CATEGORICAL))
			continue;
		if (q->feature >= nf || nat[q->feature] == 0 || q->ncats == 0 ||
		    q->ncats > nat[q->feature] ||
		    (q->flags & REBUILD_TREE_DEFAULT_LEFT)) {
			free(nat);
			return RBA_E_RANGE;
		}
		for (uint32_t k = 0; k < q->ncats; k++)
			if (q->cats[k] >= nat[q->feature] ||
			    (k > 0 && q->cats[k] <= q->cats[k - 1])) {
				free(nat);
				return RBA_E_RANGE;
			}
	}
	free(nat);
	return 0;
}

/* Tree t of f: its node count, then its nodes in order (a split's right
 * child local to the tree).  0, or RBA_E_RANGE for a node out of that
 * order. */
static int
put_tree(const struct rebuild_forest *f, uint32_t t, struct rba_buf *out)
{
	uint32_t n0 = f->tree_start[t], n1 = f->tree_start[t + 1];

	rba_buf_put_u32(out, n1 - n0);
	for (uint32_t i = n0; i < n1; i++) {
		const struct rebuild_tree_node *q = &f->nodes[i];
		if (q->feature == REBUILD_TREE_LEAF) {
			rba_buf_put_u8(out, ARTIFACT_TREE_LEAF);
			rba_buf_put_f32(out, q->value);
			rba_buf_put_f32(out, q->cover);
			continue;
		}
		if (q->left != i + 1 || q->right <= i + 1 || q->right >= n1)
			return RBA_E_RANGE;
		if (q->flags & REBUILD_TREE_CATEGORICAL) {
			rba_buf_put_u8(out, ARTIFACT_TREE_SPLIT_CAT);
			rba_buf_put_u32(out, q->feature);
			rba_buf_put_u32(out, q->ncats);
			for (uint32_t k = 0; k < q->ncats; k++)
				rba_buf_put_u32(out, q->cats[k]);
			rba_buf_put_u32(out, q->right - n0);
			rba_buf_put_f32(out, q->cover);
			continue;
		}
		rba_buf_put_u8(out, q->flags & REBUILD_TREE_DEFAULT_LEFT
					    ? ARTIFACT_TREE_SPLIT_LEFT
					    : ARTIFACT_TREE_SPLIT);
		rba_buf_put_u32(out, q->feature);
		rba_buf_put_u32(out, q->bin);
		rba_buf_put_u32(out, q->right - n0);
		rba_buf_put_f32(out, q->cover);
	}
	return 0;
}

/* Format 2: a forest (rebuild-audit-artifact(5), TREES); 3 with the
 * missing-value section when the forest uses it. */
static int
encode_trees(const struct artifact *a, size_t nf, struct rba_buf *out)
{
	const struct encode_spec *s = &a->spec;
	const struct rebuild_forest *f = &a->model.forest;
	int fmt3 = s->nmissing > 0 && !tokens_default(s), fmt4 = 0;
	int err;

	if (f->nfeatures != nf || f->nclasses != s->nclasses ||
	    f->ngroups != (f->nclasses == 2 ? 1 : f->nclasses) ||
	    f->ntrees < 1 || f->ntrees % f->ngroups != 0 || s->impute != NULL)
		return RBA_E_RANGE;
	for (size_t i = 0; i < f->tree_start[f->ntrees] && !fmt3; i++)
		fmt3 = f->nodes[i].feature != REBUILD_TREE_LEAF &&
		       (f->nodes[i].flags & REBUILD_TREE_DEFAULT_LEFT);
	/* A forest of format 2 takes the empty field as missing (its
	 * decoder gives the default); none at all needs format 3. */
	if (s->nmissing == 0)
		fmt3 = 1;
	for (uint32_t c = 0; c < s->ncolumns; c++)
		fmt4 |= s->columns[c].kind == ENCODE_NATIVE;
	if ((err = check_cat_splits(s, f, nf)) != 0)
		return err;
	rba_buf_put(out, ARTIFACT_MAGIC, 8);
	rba_buf_put_u32(out, fmt4   ? ARTIFACT_FORMAT_NATIVE
			     : fmt3 ? ARTIFACT_FORMAT_MISSING
				    : ARTIFACT_FORMAT_TREES);
	rba_buf_put_u32(out, a->abi);
	rba_buf_put_u8(out, ARTIFACT_KIND_TREES);
	rba_buf_put_u8(out, ARTIFACT_OBJ_LOGLOSS);
	rba_buf_put_u32(out, f->nfeatures);
	rba_buf_put_u32(out, f->nclasses);
	put_spec(s, nf, out);
	if (fmt3 || fmt4)
		put_missing(s, nf, out);
	for (uint32_t g = 0; g < f->ngroups; g++)
		rba_buf_put_f32(out, f->base[g]);
	for (uint32_t j = 0; j < f->nfeatures; j++) {
		uint32_t e0 = f->edge_start[j], e1 = f->edge_start[j + 1];
		rba_buf_put_u32(out, e1 - e0);
		for (uint32_t e = e0; e < e1; e++)
			rba_buf_put_f32(out, f->edges[e]);
	}
	rba_buf_put_u32(out, f->ntrees);
	for (uint32_t t = 0; t < f->ntrees; t++)
		if ((err = put_tree(f, t, out)) != 0)
			return err;
	return rba_buf_status(out);
}

int
artifact_encode(const struct artifact *a, struct rba_buf *out)
{
	const struct encode_spec *s = &a->spec;
	const struct rebuild_model *m = &a->model;
	size_t nf;

	if (!spec_features(s, &nf))
		return RBA_E_RANGE;
	/* a forest by XGBoost's rules has its own file (model/xgboost.h):
	 * our format has no field for its rules */
	if (m->kind == REBUILD_KIND_GBDT && m->forest.rules != REBUILD_FOREST_OWN)
		return RBA_E_UNSUPPORTED;
	if (m->kind == REBUILD_KIND_GBDT)
		return encode_trees(a, nf, out);
	if (m->nlayers < 1 ||
	    m->nlayers > REBUILD_MAX_LAYERS || m->sizes[0] != nf ||
	    m->sizes[m->nlayers] != s->nclasses)
		return RBA_E_RANGE;
	/* A network takes missing values only with an imputation. */
	if ((s->impute != NULL) != (s->nmissing > 0))
		return RBA_E_RANGE;
	rba_buf_put(out, ARTIFACT_MAGIC, 8);
	rba_buf_put_u32(out, s->impute != NULL ? ARTIFACT_FORMAT_MISSING
					       : ARTIFACT_FORMAT_MLP);
	rba_buf_put_u32(out, a->abi);
	rba_buf_put_u8(out, ARTIFACT_KIND_MLP);
	rba_buf_put_u8(out, ARTIFACT_ACT_RELU);
	rba_buf_put_u32(out, m->nlayers);
	for (uint32_t l = 0; l <= m->nlayers; l++)
		rba_buf_put_u32(out, m->sizes[l]);
	put_spec(s, nf, out);
	if (s->impute != NULL)
		put_missing(s, nf, out);
	for (uint32_t l = 0; l < m->nlayers; l++) {
		size_t in = m->sizes[l], o = m->sizes[l + 1];
		/* Stored [out][in]: row j holds output unit j's weights. */
		for (size_t j = 0; j < o; j++)
			for (size_t k = 0; k < in; k++)
				rba_buf_put_f32(out, m->w[l][k * o + j]);
		for (size_t j = 0; j < o; j++)
			rba_buf_put_f32(out, m->b[l][j]);
	}
	return rba_buf_status(out);
}

/* Decoder state: the cursor and where the file started. */
struct dec {
	struct rba_cursor c;
	const uint8_t *base;
	struct rba_detail *d;
};

static int
bad(struct dec *x, const char *what)
{
	size_t off = (size_t)(x->c.p - x->base);

	return rba_fail(x->d, RBA_E_CORRUPT, NULL, 0, off + 1, "%s at byte %zu",
			what, off);
}

/* A length-prefixed string: at most ENCODE_MAX_TEXT bytes, no NUL. */
static char *
dec_str(struct dec *x, const char *what, int *err)
{
	size_t n;
	const char *s;
	char *r;

	if (x->c.left < 4) {
		*err = bad(x, "truncated");
		return NULL;
	}
	s = rba_cursor_lstr(&x->c, ENCODE_MAX_TEXT, &n);
	if (s == NULL) {
		*err = bad(x, what);
		return NULL;
	}
	if (memchr(s, 0, n) != NULL) {
		*err = bad(x, "a string holds a NUL byte");
		return NULL;
	}
	r = malloc(n + 1);
	if (r == NULL) {
		*err = RBA_E_NOMEM;
		return NULL;
	}
	memcpy(r, s, n);
	r[n] = 0;
	return r;
}

/* A count that must be in [lo, hi] and leave min_each bytes per item. */
static int
dec_count(struct dec *x, uint32_t lo, uint32_t hi, size_t min_each,
	  const char *what, uint32_t *out)
{
	uint32_t v;

	if (x->c.left < 4)
		return bad(x, "truncated");
	v = rba_cursor_u32(&x->c);
	if (v < lo || v > hi || (size_t)v * min_each > x->c.left) {
		x->c.p -= 4;
		x->c.left += 4;
		return rba_fail(x->d, RBA_E_CORRUPT, NULL, 0,
				(size_t)(x->c.p - x->base) + 1,
				"%s %u out of range at byte %zu", what, v,
				(size_t)(x->c.p - x->base));
	}
	*out = v;
	return 0;
}

static int
dec_strv(struct dec *x, uint32_t n, char ***out, const char *what)
{
	char **v = calloc(n ? n : 1, sizeof(*v));
	int err = 0;

	*out = v;
	if (v == NULL)
		return RBA_E_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		v[i] = dec_str(x, what, &err);
		if (v[i] == NULL)
			return err;
		/* The canonical order is strictly ascending bytewise. */
		if (i > 0 && strcmp(v[i - 1], v[i]) >= 0)
			return bad(x, "values out of canonical order");
	}
	return 0;
}

static int
dec_floats(struct dec *x, float *dst, size_t n, int positive)
{
	for (size_t i = 0; i < n; i++) {
		float v = rba_cursor_f32(&x->c);
		if (!isfinite(v) || (positive && !(v > 0.0f))) {
			x->c.p -= 4;
			x->c.left += 4;
			return bad(x, positive ? "a scale is not a positive number"
					       : "a value is not finite");
		}
		dst[i] = v;
	}
	return 0;
}

/*
 * Label through scales, for a model of nfeat features and nclasses
 * classes; "where" names what fixed those counts in messages ("the
 * output layer" / "the first layer", or "the header").
 */
static int
decode_spec(struct dec *x, struct encode_spec *s, uint32_t nfeat,
	    uint32_t nclasses, const char *out_where, const char *in_where,
	    int fmt)
{
	char why[96];
	uint32_t pos, nf = 0;
	uint8_t kind;
	int err = 0;

	if ((s->label = dec_str(x, "label name", &err)) == NULL)
		return err;
	if ((err = dec_count(x, 2, REBUILD_MAX_CLASSES, 4, "class count",
			     &s->nclasses)))
		return err;
	if (s->nclasses != nclasses) {
		s->nclasses = 0; /* no class array exists yet to release */
		snprintf(why, sizeof(why), "class count differs from %s",
			 out_where);
		return bad(x, why);
	}
	if ((err = dec_strv(x, s->nclasses, &s->classes, "class label")))
		return err;
	if (x->c.left < 4)
		return bad(x, "truncated");
	pos = rba_cursor_u32(&x->c);
	if (pos != NO_POSITIVE && pos >= s->nclasses)
		return bad(x, "positive class out of range");
	s->positive = pos == NO_POSITIVE ? ENCODE_NO_POSITIVE : pos;
	if ((err = dec_count(x, 1, REBUILD_MAX_WIDTH, 5, "column count",
			     &s->ncolumns)))
		return err;
	s->columns = calloc(s->ncolumns, sizeof(*s->columns));
	if (s->columns == NULL) {
		s->ncolumns = 0;
		return RBA_E_NOMEM;
	}
	for (uint32_t c = 0; c < s->ncolumns; c++) {
		struct encode_column *col = &s->columns[c];
		if ((col->name = dec_str(x, "column name", &err)) == NULL)
			return err;
		for (uint32_t e = 0; e < c; e++)
			if (strcmp(s->columns[e].name, col->name) == 0)
				return bad(x, "duplicate column name");
		if (x->c.left < 1)
			return bad(x, "truncated");
		kind = rba_cursor_u8(&x->c);
		if (kind == ENCODE_NUMERIC) {
			col->kind = ENCODE_NUMERIC;
			nf++;
		} else if (kind == ENCODE_CATEGORICAL) {
			col->kind = ENCODE_CATEGORICAL;
			if ((err = dec_count(x, 1, REBUILD_MAX_WIDTH, 4,
					     "level count", &col->nlevels)))
				return err;
			if ((err = dec_strv(x, col->nlevels, &col->levels,
					    "level")))
				return err;
			nf += col->nlevels;
		} else if (kind == ENCODE_NATIVE && fmt == ARTIFACT_FORMAT_NATIVE) {
			col->kind = ENCODE_NATIVE;
			if ((err = dec_count(x, 1, ENCODE_MAX_NATIVE_LEVELS, 4,
					     "level count", &col->nlevels)))
				return err;
			if ((err = dec_strv(x, col->nlevels, &col->levels,
					    "level")))
				return err;
			nf++;
		} else {
			x->c.p -= 1;
			x->c.left += 1;
			return bad(x, "unknown column kind");
		}
		if (nf > nfeat) {
			snprintf(why, sizeof(why), "more features than %s",
				 in_where);
			return bad(x, why);
		}
	}
	if (nf != nfeat) {
		snprintf(why, sizeof(why), "feature count differs from %s",
			 in_where);
		return bad(x, why);
	}
	s->nfeatures = nf;
	if (x->c.left < (size_t)nf * 8)
		return bad(x, "truncated standardization");
	s->mean = malloc((size_t)nf * sizeof(float));
	s->scale = malloc((size_t)nf * sizeof(float));
	if (s->mean == NULL || s->scale == NULL)
		return RBA_E_NOMEM;
	if ((err = dec_floats(x, s->mean, nf, 0)) ||
	    (err = dec_floats(x, s->scale, nf, 1)))
		return err;
	return 0;
}

/*
 * Format 3's missing-value section into s; a network's must hold an
 * imputation and tokens, a forest's no imputation.  For formats 1 and 2
 * the defaults: a network no token, a forest the empty field.
 */
static int
decode_missing(struct dec *x, struct encode_spec *s, int fmt, int trees)
{
	uint8_t imp;
	int err;

	if (fmt != ARTIFACT_FORMAT_MISSING && fmt != ARTIFACT_FORMAT_NATIVE) {
		s->missing = calloc(2, sizeof(char *));
		if (s->missing == NULL)
			return RBA_E_NOMEM;
		if (trees) {
			if ((s->missing[0] = strdup("")) == NULL)
				return RBA_E_NOMEM;
			s->nmissing = 1;
		}
		return 0;
	}
	if ((err = dec_count(x, 0, 64, 4, "missing token count", &s->nmissing)))
		return err;
	if ((err = dec_strv(x, s->nmissing, &s->missing, "missing token")))
		return err;
	if (x->c.left < 1)
		return bad(x, "truncated");
	imp = rba_cursor_u8(&x->c);
	if (imp != ARTIFACT_IMPUTE_NONE && imp != ARTIFACT_IMPUTE_VALUES) {
		x->c.p -= 1;
		x->c.left += 1;
		return bad(x, "unknown imputation kind");
	}
	if (trees && imp != ARTIFACT_IMPUTE_NONE) {
		x->c.p -= 1;
		x->c.left += 1;
		return bad(x, "a forest holds an imputation");
	}
	if (!trees && (imp != ARTIFACT_IMPUTE_VALUES || s->nmissing == 0)) {
		x->c.p -= 1;
		x->c.left += 1;
		return bad(x, "a network of format 3 lacks its imputation or "
			      "its tokens");
	}
	if (imp == ARTIFACT_IMPUTE_VALUES) {
		if (x->c.left < (size_t)s->nfeatures * 4)
			return bad(x, "truncated imputation");
		if ((s->impute = malloc((size_t)s->nfeatures * sizeof(float))) ==
		    NULL)
			return RBA_E_NOMEM;
		if ((err = dec_floats(x, s->impute, s->nfeatures, 0)))
			return err;
	}
	return 0;
}

static int
decode_mlp(struct dec *x, struct artifact *a, int fmt)
{
	struct encode_spec *s = &a->spec;
	struct rebuild_model *m = &a->model;
	uint32_t nl, sizes[REBUILD_MAX_LAYERS + 1];
	size_t need;
	int err = 0;

	if ((err = dec_count(x, 1, REBUILD_MAX_LAYERS, 4, "layer count", &nl)))
		return err;
	if (x->c.left < 4 * ((size_t)nl + 1))
		return bad(x, "truncated layer sizes");
	need = 0;
	for (uint32_t l = 0; l <= nl; l++) {
		sizes[l] = rba_cursor_u32(&x->c);
		if (sizes[l] < 1 || sizes[l] > REBUILD_MAX_WIDTH) {
			x->c.p -= 4;
			x->c.left += 4;
			return bad(x, "layer size out of range");
		}
		if (l > 0)
			need += (size_t)sizes[l - 1] * sizes[l] + sizes[l];
	}
	if (sizes[nl] < 2 || sizes[nl] > REBUILD_MAX_CLASSES)
		return bad(x, "class count out of range");
	/* Everything left must at least hold the floats: check before
	 * allocating anything sized by the header. */
	need += 2 * (size_t)sizes[0];
	if (need > REBUILD_MAX_PARAMS || need * 4 > x->c.left)
		return bad(x, "truncated: the layer sizes need more bytes than remain");
	if ((err = decode_spec(x, s, sizes[0], sizes[nl], "the output layer",
			       "the first layer", (int)fmt)) ||
	    (err = decode_missing(x, s, (int)fmt, 0)))
		return err;
	need -= 2 * (size_t)sizes[0];
	if (x->c.left < need * 4)
		return bad(x, "truncated weights");
	if ((err = rebuild_model_alloc(m, nl, sizes)))
		return err == RBA_E_RANGE ? bad(x, "layer sizes over the caps")
					  : err;
	for (uint32_t l = 0; l < nl; l++) {
		size_t in = sizes[l], o = sizes[l + 1];
		for (size_t j = 0; j < o; j++)
			for (size_t k = 0; k < in; k++) {
				float v = rba_cursor_f32(&x->c);
				if (!isfinite(v)) {
					x->c.p -= 4;
					x->c.left += 4;
					return bad(x, "a weight is not finite");
				}
				m->w[l][k * o + j] = v;
			}
		if ((err = dec_floats(x, m->b[l], o, 0)))
			return err;
	}
	if (!rba_cursor_ok(&x->c))
		return bad(x, "truncated");
	if (x->c.left != 0)
		return bad(x, "trailing bytes after the last layer");
	return 0;
}

/*
 * The subtree of tree node i (of n, at depth): a leaf ends at i + 1; a
 * split's left child is i + 1 and its right child must be where the
 * left subtree ends.  Returns the end, or 0 when the shape is wrong
 * (*why says how).  Indexes only grow, so there is no cycle.
 */
static uint32_t
tree_check(const struct rebuild_tree_node *t, uint32_t i, uint32_t n,
	   uint32_t depth, const char **why)
{
	uint32_t end;

	if (i >= n) {
		*why = "a split has a child past the end of its tree";
		return 0;
	}
	if (t[i].feature == REBUILD_TREE_LEAF)
		return i + 1;
	if (depth >= REBUILD_GBDT_MAX_DEPTH) {
		*why = "a tree is deeper than the cap";
		return 0;
	}
	if ((end = tree_check(t, i + 1, n, depth + 1, why)) == 0)
		return 0;
	if (t[i].right != end) {
		*why = "a right child is not where the left subtree ends";
		return 0;
	}
	return tree_check(t, end, n, depth + 1, why);
}

/* The level sets read so far (format 4): u32 level indexes. */
struct dec_cats {
	const uint32_t *nat; /* per feature: a native column's levels, or 0 */
	uint32_t *v;
	size_t n, cap;
};

/*
 * A categorical split's feature and level set (format 4) into q: the
 * set's offset in c->v is kept in q->bin until the forest holds them.
 */
static int
decode_cat_split(struct dec *x, struct rebuild_tree_node *q,
		 const struct rebuild_forest *f, struct dec_cats *c)
{
	uint32_t L, k;

	if (x->c.left < 8)
		return bad(x, "truncated tree");
	q->feature = rba_cursor_u32(&x->c);
	if (q->feature >= f->nfeatures || c->nat[q->feature] == 0) {
		x->c.p -= 4;
		x->c.left += 4;
		return bad(x, "a categorical split names a feature that is "
			      "not a native categorical column");
	}
	L = c->nat[q->feature];
	k = rba_cursor_u32(&x->c);
	/* at least one level, at most the column's, within the bytes left
	 * (the levels, the right child and the cover) */
	if (k == 0 || k > L || (size_t)k > (x->c.left - 8) / 4 ||
	    x->c.left < 8) {
		x->c.p -= 4;
		x->c.left += 4;
		return bad(x, "a categorical split's level count is 0, over "
			      "its column's level count or past the end");
	}
	if (c->n + k > c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 1024;
		uint32_t *tmp;
		while (nc < c->n + k)
			nc *= 2;
		if ((tmp = realloc(c->v, nc * sizeof(uint32_t))) == NULL)
			return RBA_E_NOMEM;
		c->v = tmp;
		c->cap = nc;
	}
	for (uint32_t i = 0; i < k; i++) {
		uint32_t lv = rba_cursor_u32(&x->c);
		if (lv >= L || (i > 0 && lv <= c->v[c->n + i - 1])) {
			x->c.p -= 4;
			x->c.left += 4;
			return bad(x, lv >= L ? "a categorical split's level "
						"index is out of range"
					      : "a categorical split's levels "
						"are not strictly ascending");
		}
		c->v[c->n + i] = lv;
	}
	q->flags = REBUILD_TREE_CATEGORICAL;
	q->ncats = k;
	q->bin = (uint32_t)c->n;
	c->n += k;
	q->right = rba_cursor_u32(&x->c);
	q->cover = rba_cursor_f32(&x->c);
	return 0;
}

/* One tree of at most n nodes into t (local child indexes). */
static int
decode_tree(struct dec *x, const struct rebuild_forest *f,
	    struct rebuild_tree_node *t, uint32_t n, int fmt,
	    struct dec_cats *cats)
{
	const char *why = NULL;
	const uint8_t *at = x->c.p;

	for (uint32_t i = 0; i < n; i++) {
		struct rebuild_tree_node *q = &t[i];
		uint8_t type;
		memset(q, 0, sizeof(*q));
		if (x->c.left < 9)
			return bad(x, "truncated tree");
		type = rba_cursor_u8(&x->c);
		if (type == ARTIFACT_TREE_LEAF) {
			q->feature = REBUILD_TREE_LEAF;
			q->value = rba_cursor_f32(&x->c);
			q->cover = rba_cursor_f32(&x->c);
			if (!isfinite(q->value)) {
				x->c.p -= 8;
				x->c.left += 8;
				return bad(x, "a leaf value is not finite");
			}
		} else if (type == ARTIFACT_TREE_SPLIT ||
			   (type == ARTIFACT_TREE_SPLIT_LEFT &&
			    (fmt == ARTIFACT_FORMAT_MISSING ||
			     fmt == ARTIFACT_FORMAT_NATIVE))) {
			uint32_t e;
			if (type == ARTIFACT_TREE_SPLIT_LEFT)
				q->flags = REBUILD_TREE_DEFAULT_LEFT;
			if (x->c.left < 16)
				return bad(x, "truncated tree");
			q->feature = rba_cursor_u32(&x->c);
			q->bin = rba_cursor_u32(&x->c);
			q->right = rba_cursor_u32(&x->c);
			q->cover = rba_cursor_f32(&x->c);
			q->left = i + 1;
			if (q->feature >= f->nfeatures) {
				x->c.p -= 16;
				x->c.left += 16;
				return bad(x, "a split names a feature out of range");
			}
			e = f->edge_start[q->feature + 1] - f->edge_start[q->feature];
			if (q->bin >= e) {
				x->c.p -= 12;
				x->c.left += 12;
				return bad(x, "a split names a bin edge out of range");
			}
			q->threshold = f->edges[f->edge_start[q->feature] + q->bin];
		} else if (type == ARTIFACT_TREE_SPLIT_CAT &&
			   fmt == ARTIFACT_FORMAT_NATIVE) {
			int err = decode_cat_split(x, q, f, cats);
			if (err != 0)
				return err;
			q->left = i + 1;
		} else {
			x->c.p -= 1;
			x->c.left += 1;
			return bad(x, "unknown tree node type");
		}
		if (!isfinite(q->cover) || q->cover < 0.0f) {
			x->c.p -= 4;
			x->c.left += 4;
			return bad(x, "a cover is not a finite number >= 0");
		}
	}
	if (tree_check(t, 0, n, 0, &why) != n) {
		if (why == NULL)
			why = "a tree has nodes outside its root's subtree";
		return rba_fail(x->d, RBA_E_CORRUPT, NULL, 0,
				(size_t)(at - x->base) + 1, "%s at byte %zu",
				why, (size_t)(at - x->base));
	}
	return 0;
}

/* decode_trees' forest as it is read, before it moves into the model. */
struct dec_forest {
	uint32_t nfeat, C, K, T;
	float *base;			/* K margins' bases */
	uint32_t *estart;		/* nfeat + 1 */
	float *edges;
	size_t nedges;
	uint32_t *tstart;		/* T + 1 */
	struct rebuild_tree_node *nodes;
	size_t nnodes, cap;
	struct dec_cats cats;
	uint32_t *nat;			/* per feature: native levels, or 0 */
};

static void
dec_forest_release(struct dec_forest *df)
{
	free(df->base);
	free(df->estart);
	free(df->edges);
	free(df->tstart);
	free(df->nodes);
	free(df->nat);
	free(df->cats.v);
}

/* Per feature of spec s, a native column's level count or 0 (df->nat,
 * seen by the categorical splits through df->cats). */
static int
dec_native_levels(const struct encode_spec *s, struct dec_forest *df)
{
	if ((df->nat = calloc(df->nfeat, sizeof(uint32_t))) == NULL)
		return RBA_E_NOMEM;
	for (uint32_t c = 0, j = 0; c < s->ncolumns; c++) {
		if (s->columns[c].kind == ENCODE_NATIVE)
			df->nat[j] = s->columns[c].nlevels;
		j += encode_column_width(&s->columns[c]);
	}
	df->cats.nat = df->nat;
	return 0;
}

/* Each feature's bin edges, finite and strictly ascending. */
static int
dec_edges(struct dec *x, struct dec_forest *df)
{
	int err;

	df->estart = calloc((size_t)df->nfeat + 1, sizeof(uint32_t));
	df->edges = malloc((size_t)df->nfeat * (REBUILD_GBDT_MAX_BINS - 1) *
			   sizeof(float));
	if (df->estart == NULL || df->edges == NULL)
		return RBA_E_NOMEM;
	for (uint32_t j = 0; j < df->nfeat; j++) {
		uint32_t ne;
		if ((err = dec_count(x, 0, REBUILD_GBDT_MAX_BINS - 1, 4,
				     "bin edge count", &ne)))
			return err;
		for (uint32_t e = 0; e < ne; e++) {
			float v = rba_cursor_f32(&x->c);
			if (!isfinite(v) ||
			    (e > 0 && !(v > df->edges[df->nedges - 1]))) {
				x->c.p -= 4;
				x->c.left += 4;
				return bad(x, "bin edges are not finite "
					      "and strictly ascending");
			}
			df->edges[df->nedges++] = v;
		}
		df->estart[j + 1] = (uint32_t)df->nedges;
	}
	return 0;
}

/* The tree count and every tree, its nodes' children made indexes into
 * the forest's nodes. */
static int
dec_tree_list(struct dec *x, struct dec_forest *df, int fmt)
{
	/* the forest so far, for decode_tree's edge checks */
	struct rebuild_forest view;
	struct rebuild_tree_node *tmp;
	int err;

	if ((err = dec_count(x, df->K, REBUILD_GBDT_MAX_TREES, 13,
			     "tree count", &df->T)))
		return err;
	if (df->T % df->K != 0)
		return bad(x, "the tree count is not a multiple of the "
			      "classes' margins");
	df->tstart = calloc((size_t)df->T + 1, sizeof(uint32_t));
	if (df->tstart == NULL)
		return RBA_E_NOMEM;
	memset(&view, 0, sizeof(view));
	view.nfeatures = df->nfeat;
	view.edge_start = df->estart;
	view.edges = df->edges;
	for (uint32_t t = 0; t < df->T; t++) {
		size_t nnodes = df->nnodes;
		uint32_t n = 0;
		if ((err = dec_count(x, 1, ARTIFACT_MAX_TREE_NODES,
				     9, "tree node count", &n)))
			return err;
		if (nnodes + n > REBUILD_GBDT_MAX_NODES)
			return bad(x, "more tree nodes than the cap");
		if (nnodes + n > df->cap) {
			size_t nc = df->cap ? df->cap * 2 : 1024;
			while (nc < nnodes + n)
				nc *= 2;
			tmp = realloc(df->nodes, nc * sizeof(*df->nodes));
			if (tmp == NULL)
				return RBA_E_NOMEM;
			df->nodes = tmp;
			df->cap = nc;
		}
		if ((err = decode_tree(x, &view, df->nodes + nnodes, n,
				       fmt, &df->cats)))
			return err;
		for (uint32_t i = 0; i < n; i++)
			if (df->nodes[nnodes + i].feature != REBUILD_TREE_LEAF) {
				df->nodes[nnodes + i].left += (uint32_t)nnodes;
				df->nodes[nnodes + i].right += (uint32_t)nnodes;
			}
		df->nnodes = nnodes + n;
		df->tstart[t + 1] = (uint32_t)df->nnodes;
	}
	return 0;
}

/* The forest read, at the end of the bytes, moved into m (the level
 * sets too, each split's offset kept in bin made its pointer). */
static int
dec_forest_move(struct dec *x, struct dec_forest *df, struct rebuild_model *m)
{
	struct rebuild_forest *f;
	int err;

	if (!rba_cursor_ok(&x->c))
		return bad(x, "truncated");
	if (x->c.left != 0)
		return bad(x, "trailing bytes after the last tree");
	if ((err = rebuild_forest_alloc(m, df->nfeat, df->C, df->nedges, df->T,
					df->nnodes))) {
		if (err == RBA_E_RANGE)
			err = bad(x, "the forest is over the caps");
		return err;
	}
	f = &m->forest;
	memcpy(f->base, df->base, (size_t)df->K * sizeof(float));
	memcpy(f->edge_start, df->estart,
	       ((size_t)df->nfeat + 1) * sizeof(uint32_t));
	memcpy(f->edges, df->edges, df->nedges * sizeof(float));
	memcpy(f->tree_start, df->tstart, ((size_t)df->T + 1) * sizeof(uint32_t));
	memcpy(f->nodes, df->nodes, df->nnodes * sizeof(*df->nodes));
	if (df->cats.n > 0) {
		/* the level sets move into the forest; each split's
		 * offset (kept in bin) becomes its pointer */
		f->cats = df->cats.v;
		f->ncats = df->cats.n;
		df->cats.v = NULL;
		for (size_t i = 0; i < df->nnodes; i++)
			if (f->nodes[i].flags & REBUILD_TREE_CATEGORICAL) {
				f->nodes[i].cats = f->cats + f->nodes[i].bin;
				f->nodes[i].bin = 0;
			}
	}
	return 0;
}

static int
decode_trees(struct dec *x, struct artifact *a, int fmt)
{
	struct encode_spec *s = &a->spec;
	struct dec_forest df;
	int err = 0;

	memset(&df, 0, sizeof(df));
	if ((err = dec_count(x, 1, REBUILD_MAX_WIDTH, 0, "feature count",
			     &df.nfeat)) ||
	    (err = dec_count(x, 2, REBUILD_MAX_CLASSES, 0, "class count",
			     &df.C)))
		return err;
	df.K = df.C == 2 ? 1 : df.C;
	/* the standardization, the bases and the edge counts must fit */
	if (((size_t)df.nfeat * 12 + (size_t)df.K * 4 + 4) > x->c.left)
		return bad(x, "truncated: the feature count needs more bytes "
			      "than remain");
	if ((err = decode_spec(x, s, df.nfeat, df.C, "the header",
			       "the header", fmt)) ||
	    (err = decode_missing(x, s, fmt, 1)) ||
	    (err = dec_native_levels(s, &df)))
		goto out;
	if (x->c.left < (size_t)df.K * 4) {
		err = bad(x, "truncated");
		goto out;
	}
	if ((df.base = malloc((size_t)df.K * sizeof(float))) == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	if ((err = dec_floats(x, df.base, df.K, 0)) == 0 &&
	    (err = dec_edges(x, &df)) == 0 &&
	    (err = dec_tree_list(x, &df, fmt)) == 0)
		err = dec_forest_move(x, &df, &a->model);
out:
	dec_forest_release(&df);
	return err;
}

static int
decode_body(struct dec *x, struct artifact *a)
{
	uint32_t fmt;
	uint8_t kind, act;

	if (x->c.left < 8 || memcmp(x->c.p, ARTIFACT_MAGIC, 8) != 0)
		return bad(x, "not an artifact (bad magic)");
	rba_cursor_bytes(&x->c, 8);
	if (x->c.left < 4 + 4 + 1 + 1 + 4)
		return bad(x, "truncated header");
	fmt = rba_cursor_u32(&x->c);
	if (fmt == 0)
		return bad(x, "format version 0");
	if (fmt > ARTIFACT_FORMAT)
		return rba_fail(x->d, RBA_E_UNSUPPORTED, NULL, 0, 9,
				"artifact format %u is newer than this tool "
				"(it reads %u)",
				fmt, ARTIFACT_FORMAT);
	a->abi = rba_cursor_u32(&x->c);
	if (!rebuild_abi_supported(a->abi))
		return rba_fail(x->d, RBA_E_UNSUPPORTED, NULL, 0, 13,
				"trainer ABI %u is not known to this build",
				a->abi);
	kind = rba_cursor_u8(&x->c);
	act = rba_cursor_u8(&x->c);
	/* Each format holds one model kind: networks 1, forests 2. */
	if ((fmt == ARTIFACT_FORMAT_MLP || fmt == ARTIFACT_FORMAT_MISSING) &&
	    kind == ARTIFACT_KIND_MLP && act == ARTIFACT_ACT_RELU)
		return decode_mlp(x, a, (int)fmt);
	if ((fmt == ARTIFACT_FORMAT_TREES || fmt == ARTIFACT_FORMAT_MISSING ||
	     fmt == ARTIFACT_FORMAT_NATIVE) &&
	    kind == ARTIFACT_KIND_TREES && act == ARTIFACT_OBJ_LOGLOSS)
		return decode_trees(x, a, (int)fmt);
	x->c.p -= 2;
	x->c.left += 2;
	return bad(x, "unknown model kind or activation for the format");
}

int
artifact_decode(const void *p, size_t n, struct artifact *out,
		struct rba_detail *d)
{
	struct dec x;
	int err;

	memset(out, 0, sizeof(*out));
	rba_cursor_init(&x.c, p, n);
	x.base = p;
	x.d = d;
	err = decode_body(&x, out);
	if (err != 0) {
		if (err == RBA_E_NOMEM)
			rba_fail(d, err, NULL, 0, 0, "out of memory");
		artifact_release(out);
	}
	return err;
}

int
artifact_load(const char *path, struct artifact *out,
	      struct rba_digest *digest, struct rba_detail *d)
{
	uint8_t *buf = NULL;
	size_t n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = rba_file_read(path, ARTIFACT_MAX_BYTES, &buf, &n, d);
	if (err != 0)
		return err;
	if (digest != NULL)
		rba_digest_bytes(buf, n, digest);
	err = artifact_decode(buf, n, out, d);
	if (err != 0 && d != NULL)
		snprintf(d->file, sizeof(d->file), "%s", path);
	free(buf);
	return err;
}

/*
 * Trees score through the sparse scorer, every input a term: the same
 * bits as the node walk of rebuild_predict (the tests hold the two
 * together), several times faster.
 */
static int
score_trees(const struct artifact *a, const float *x, size_t n, float *probs)
{
	size_t nf = a->spec.nfeatures;
	struct rebuild_sparse *sp;
	uint32_t *row;
	int err;

	if ((row = malloc(n * nf * sizeof(uint32_t))) == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t f = 0; f < nf; f++)
			row[i * nf + f] = (uint32_t)f;
	if ((err = rebuild_sparse_new(a->abi, &a->model, &sp)) == 0) {
		rebuild_sparse_score(sp, x, row, nf, n, probs);
		rebuild_sparse_free(sp);
	}
	free(row);
	return err;
}

int
artifact_score(const struct artifact *a, const float *raw, size_t n,
	       float *probs)
{
	size_t nf = a->spec.nfeatures;
	float *x;
	int err;

	if (n == 0)
		return 0;
	x = malloc(n * nf * sizeof(float));
	if (x == NULL)
		return RBA_E_NOMEM;
	encode_standardize(&a->spec, raw, n, x);
	if (a->model.kind == REBUILD_KIND_GBDT &&
	    a->model.forest.rules != REBUILD_FOREST_OWN)
		err = xgbtree_probs(&a->model.forest, x, n, probs);
	else if (a->model.kind == REBUILD_KIND_GBDT)
		err = score_trees(a, x, n, probs);
	else
		err = rebuild_predict(a->abi, &a->model, x, n, probs);
	free(x);
	return err;
}
