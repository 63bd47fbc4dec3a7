/*
 * artdiff.c - where two artifacts differ (artdiff.h).
 */
#include "model/artdiff.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

uint64_t
artdiff_ulps(float a, float b)
{
	uint32_t ua, ub;
	int64_t ia, ib;

	memcpy(&ua, &a, 4);
	memcpy(&ub, &b, 4);
	if (ua == ub)
		return 0;
	/* sign-magnitude to a line of integers: -0 just below +0 */
	ia = (ua & 0x80000000u) ? -(int64_t)(ua & 0x7fffffffu) - 1 : (int64_t)ua;
	ib = (ub & 0x80000000u) ? -(int64_t)(ub & 0x7fffffffu) - 1 : (int64_t)ub;
	return (uint64_t)(ia > ib ? ia - ib : ib - ia);
}

enum artdiff_kind
artdiff_kind(const struct artifact *a)
{
	if (a->model.kind != REBUILD_KIND_GBDT)
		return ARTDIFF_NETWORK;
	return a->model.forest.rules == REBUILD_FOREST_OWN ? ARTDIFF_FOREST
							   : ARTDIFF_XGBOOST;
}

const char *
artdiff_kind_words(enum artdiff_kind k)
{
	switch (k) {
	case ARTDIFF_NETWORK:
		return "a network";
	case ARTDIFF_FOREST:
		return "a forest";
	case ARTDIFF_XGBOOST:
		break;
	}
	return "an XGBoost model";
}

static void
tensor(struct artdiff *o, const char *name, uint32_t rows, uint32_t cols,
       const float *a, const float *b)
{
	struct artdiff_tensor *t;
	size_t n = (size_t)rows * cols;

	if (o->ntensors == ARTDIFF_MAX_TENSORS)
		return;
	t = &o->t[o->ntensors++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->rows = rows;
	t->cols = cols;
	t->count = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t u = artdiff_ulps(a[i], b[i]);
		double ab = fabs((double)a[i] - (double)b[i]);

		if (u == 0)
			continue;
		if (t->differ++ == 0)
			t->first = i;
		if (u > t->max_ulps) {
			t->max_ulps = u;
			t->max_at = i;
		}
		if (ab > t->max_abs)
			t->max_abs = ab;
	}
	if (t->differ > 0)
		o->ntensors_differ++;
}

/* The inputs and classes: the first difference in words, or "". */
static void
spec_diff(const struct encode_spec *a, const struct encode_spec *b, char *out,
	  size_t cap)
{
	out[0] = '\0';
	if (strcmp(a->label, b->label) != 0) {
		snprintf(out, cap, "label '%s' against '%s'", a->label, b->label);
		return;
	}
	if (a->nclasses != b->nclasses) {
		snprintf(out, cap, "%u classes against %u", a->nclasses, b->nclasses);
		return;
	}
	for (uint32_t k = 0; k < a->nclasses; k++)
		if (strcmp(a->classes[k], b->classes[k]) != 0) {
			snprintf(out, cap, "class %u '%s' against '%s'", k + 1,
				 a->classes[k], b->classes[k]);
			return;
		}
	if (a->positive != b->positive) {
		snprintf(out, cap, "another positive class");
		return;
	}
	if (a->ncolumns != b->ncolumns) {
		snprintf(out, cap, "%u input columns against %u", a->ncolumns,
			 b->ncolumns);
		return;
	}
	for (uint32_t k = 0; k < a->ncolumns; k++) {
		const struct encode_column *x = &a->columns[k], *y = &b->columns[k];
		if (strcmp(x->name, y->name) != 0 || x->kind != y->kind ||
		    x->nlevels != y->nlevels) {
			snprintf(out, cap, "input column %u: '%s' against '%s'%s", k + 1,
				 x->name, y->name,
				 strcmp(x->name, y->name) == 0 ? " (kind or levels)" : "");
			return;
		}
		for (uint32_t l = 0; l < x->nlevels; l++)
			if (strcmp(x->levels[l], y->levels[l]) != 0) {
				snprintf(out, cap, "column '%s' level %u: '%s' against '%s'",
					 x->name, l + 1, x->levels[l], y->levels[l]);
				return;
			}
	}
	if (a->nfeatures != b->nfeatures)
		snprintf(out, cap, "%u features against %u", a->nfeatures, b->nfeatures);
}

/*
 * What differs between nodes x and y of two trees, in what (cap bytes),
 * or what left empty: the kind of node, then a split's feature (a
 * name for XGBoost's), kind, level set, threshold and side of the
 * missing values, a leaf's value, then the cover.
 */
static void
node_diff(const struct rebuild_tree_node *x, const struct rebuild_tree_node *y,
	  const struct encode_spec *sa, const struct encode_spec *sb,
	  int xgboost, char *what, size_t cap)
{
	int la = x->feature == REBUILD_TREE_LEAF;
	int lb = y->feature == REBUILD_TREE_LEAF;

	if (la != lb)
		snprintf(what, cap, "a %s against a %s",
			 la ? "leaf" : "split", lb ? "leaf" : "split");
	else if (!la && x->feature != y->feature && xgboost)
		/* an XGBoost feature is its column, named */
		snprintf(what, cap, "split on feature '%s' against "
			 "'%s'", sa->columns[x->feature].name,
			 sb->columns[y->feature].name);
	else if (!la && x->feature != y->feature)
		snprintf(what, cap, "split on feature %u against "
			 "feature %u", x->feature + 1, y->feature + 1);
	else if (!la && ((x->flags ^ y->flags) &
			 REBUILD_TREE_CATEGORICAL) != 0)
		snprintf(what, cap, "a %s split against a %s split",
			 x->flags & REBUILD_TREE_CATEGORICAL
				 ? "categorical" : "threshold",
			 y->flags & REBUILD_TREE_CATEGORICAL
				 ? "categorical" : "threshold");
	else if (!la && (x->ncats != y->ncats ||
			 (x->ncats > 0 &&
			  memcmp(x->cats, y->cats,
				 x->ncats * sizeof(uint32_t)) != 0)))
		snprintf(what, cap, "a level set of %u levels "
			 "against another of %u", x->ncats, y->ncats);
	else if (!la && artdiff_ulps(x->threshold, y->threshold) != 0)
		snprintf(what, cap, "threshold %.9g against %.9g",
			 (double)x->threshold, (double)y->threshold);
	else if (!la && (x->flags & REBUILD_TREE_DEFAULT_LEFT) !=
			    (y->flags & REBUILD_TREE_DEFAULT_LEFT))
		snprintf(what, cap, "missing values go %s "
			 "against %s",
			 (x->flags & REBUILD_TREE_DEFAULT_LEFT) ? "left"
								   : "right",
			 (y->flags & REBUILD_TREE_DEFAULT_LEFT) ? "left"
								   : "right");
	else if (la && artdiff_ulps(x->value, y->value) != 0)
		snprintf(what, cap, "leaf value %.9g against %.9g "
			 "(%llu ulps)", (double)x->value,
			 (double)y->value,
			 (unsigned long long)artdiff_ulps(x->value,
							  y->value));
	else if (artdiff_ulps(x->cover, y->cover) != 0)
		snprintf(what, cap, "cover %.9g against %.9g",
			 (double)x->cover, (double)y->cover);
}

static void
forest_diff(const struct rebuild_forest *a, const struct rebuild_forest *b,
	    const struct encode_spec *sa, const struct encode_spec *sb,
	    struct artdiff *o)
{
	uint32_t nt = a->ntrees < b->ntrees ? a->ntrees : b->ntrees;

	o->ntrees_a = a->ntrees;
	o->ntrees_b = b->ntrees;
	o->first_tree = -1;
	if (a->ngroups == b->ngroups)
		tensor(o, "base margins", 1, a->ngroups, a->base, b->base);
	else if (o->spec[0] == '\0')
		snprintf(o->spec, sizeof(o->spec), "%u margin groups against %u",
			 a->ngroups, b->ngroups);
	/* An XGBoost model's bin edges are derived from its thresholds
	 * (model/xgboost.h), not part of the file: the trees say it. */
	if (a->rules != REBUILD_FOREST_OWN)
		;
	else if (a->nfeatures == b->nfeatures &&
	    memcmp(a->edge_start, b->edge_start,
		   (a->nfeatures + 1) * sizeof(*a->edge_start)) == 0)
		tensor(o, "bin edges", 1, a->edge_start[a->nfeatures], a->edges, b->edges);
	else if (o->spec[0] == '\0')
		snprintf(o->spec, sizeof(o->spec), "the bin edges have other counts");
	for (uint32_t t = 0; t < nt; t++) {
		uint32_t na = a->tree_start[t + 1] - a->tree_start[t];
		uint32_t nb = b->tree_start[t + 1] - b->tree_start[t];
		const struct rebuild_tree_node *x = a->nodes + a->tree_start[t];
		const struct rebuild_tree_node *y = b->nodes + b->tree_start[t];
		uint32_t n = na < nb ? na : nb;
		int same = na == nb;
		uint32_t at = n;
		char what[200] = "";

		for (uint32_t i = 0; i < n && what[0] == '\0'; i++) {
			node_diff(&x[i], &y[i], sa, sb, o->xgboost, what,
				  sizeof(what));
			if (what[0] != '\0')
				at = i;
		}
		if (what[0] == '\0' && na != nb)
			snprintf(what, sizeof(what), "%u nodes against %u", na, nb);
		same = same && what[0] == '\0';
		if (same) {
			o->trees_same++;
		} else if (o->first_tree < 0) {
			o->first_tree = t;
			o->first_node = at;
			snprintf(o->tree_what, sizeof(o->tree_what), "%s", what);
		}
	}
	if (o->first_tree < 0 && a->ntrees != b->ntrees) {
		o->first_tree = nt;
		o->first_node = 0;
		snprintf(o->tree_what, sizeof(o->tree_what), "%u trees against %u",
			 a->ntrees, b->ntrees);
	}
}

int
artdiff_compare(const struct artifact *a, const struct artifact *b,
		struct artdiff *o, struct rba_detail *d)
{
	const struct rebuild_model *ma = &a->model, *mb = &b->model;

	memset(o, 0, sizeof(*o));
	o->first_tree = -1;
	if (artdiff_kind(a) != artdiff_kind(b))
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "artifacts of two kinds: "
				"%s and %s", artdiff_kind_words(artdiff_kind(a)),
				artdiff_kind_words(artdiff_kind(b)));
	o->kind = ma->kind;
	o->xgboost = artdiff_kind(a) == ARTDIFF_XGBOOST;
	spec_diff(&a->spec, &b->spec, o->spec, sizeof(o->spec));
	if (a->abi != b->abi && o->spec[0] == '\0')
		snprintf(o->spec, sizeof(o->spec), "trainer ABI %u against %u", a->abi,
			 b->abi);
	if (o->xgboost && ma->forest.rules != mb->forest.rules && o->spec[0] == '\0')
		snprintf(o->spec, sizeof(o->spec), "objective %s against %s",
			 ma->forest.rules == REBUILD_FOREST_XGB_SOFTMAX ? "softmax"
									 : "sigmoid",
			 mb->forest.rules == REBUILD_FOREST_XGB_SOFTMAX ? "softmax"
									 : "sigmoid");
	/* (an XGBoost model has no standardization: 0 and 1, not in the file) */
	if (!o->xgboost && a->spec.nfeatures == b->spec.nfeatures) {
		tensor(o, "standardization mean", 1, a->spec.nfeatures, a->spec.mean,
		       b->spec.mean);
		tensor(o, "standardization scale", 1, a->spec.nfeatures, a->spec.scale,
		       b->spec.scale);
	}
	if (ma->kind == REBUILD_KIND_GBDT) {
		forest_diff(&ma->forest, &mb->forest, &a->spec, &b->spec, o);
		o->same = o->spec[0] == '\0' && o->ntensors_differ == 0 &&
			  o->first_tree < 0;
		return 0;
	}
	if (ma->nlayers != mb->nlayers ||
	    memcmp(ma->sizes, mb->sizes, (ma->nlayers + 1) * sizeof(ma->sizes[0])) != 0) {
		if (o->spec[0] == '\0') {
			char sa[128] = "", sb[128] = "";
			for (uint32_t l = 0; l <= ma->nlayers; l++)
				snprintf(sa + strlen(sa), sizeof(sa) - strlen(sa), "%s%u",
					 l ? "-" : "", ma->sizes[l]);
			for (uint32_t l = 0; l <= mb->nlayers; l++)
				snprintf(sb + strlen(sb), sizeof(sb) - strlen(sb), "%s%u",
					 l ? "-" : "", mb->sizes[l]);
			/* 12 + 2 x 115 + 9 bytes: the sizes cut, never the words. */
			snprintf(o->spec, sizeof(o->spec), "layer sizes %.115s against %.115s", sa, sb);
		}
	} else {
		for (uint32_t l = 0; l < ma->nlayers; l++) {
			char nm[48];
			snprintf(nm, sizeof(nm), "layer %u weights", l + 1);
			tensor(o, nm, ma->sizes[l], ma->sizes[l + 1], ma->w[l], mb->w[l]);
			snprintf(nm, sizeof(nm), "layer %u bias", l + 1);
			tensor(o, nm, 1, ma->sizes[l + 1], ma->b[l], mb->b[l]);
		}
	}
	o->same = o->spec[0] == '\0' && o->ntensors_differ == 0;
	return 0;
}
