/*
 * xgboost.c - the hardened reader of XGBoost JSON models (xgboost.h),
 * in steps: the learner's header (version, booster, objective, model
 * parameters), the feature names, each tree's arrays checked and walked
 * into preorder, the bin edges, the encoding spec.
 */
#include "model/xgboost.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/strv.h"
#include "common/utf8.h"
#include "model/xgbtree.h"

#define XL_PATH 128 /* = sizeof(struct rba_detail.key) */

/* The texts of a missing value in a case's field (xgboost.h). */
static const char *const xl_missing[] = { "", "NA", "NaN", "nan" };

struct xl {
	const char *name;
	struct rba_detail *d;
	/* the header */
	uint32_t rules, nclasses, ngroups, nfeat;
	float base_score, base;
	char **feat; /* nfeat names */
	const struct rba_json_value *trees; /* the array */
	const struct rba_json_value *info;  /* tree_info */
	/* a tree's arrays while it is read */
	const struct rba_json_value *lc, *rc, *si, *sc, *dl, *sh;
	uint8_t *seen;
	uint32_t tree; /* its index in the file */
	/* the file's places of the forest's trees and nodes (artifact.h:
	 * xgb_tree, xgb_node), handed to the artifact at the end */
	uint32_t *tree_id, *node_id;
};

static int
xl_fail(struct xl *l, int err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
xl_fail(struct xl *l, int err, const char *path, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rba_detail_key(l->d, path);
	return rba_fail(l->d, err, NULL, 0, 0, "%s: %s", path, msg);
}

/* Appends the NUL-terminated s to out (XL_PATH bytes), cut to fit. */
static void
xl_cat(char *out, const char *s)
{
	size_t n = strlen(out), k = strlen(s);

	if (k > XL_PATH - 1 - n)
		k = XL_PATH - 1 - n;
	memcpy(out + n, s, k);
	out[n + k] = 0;
}

/* path + "." + key, or path + "[i]" (key NULL). */
static void
xl_path(char out[XL_PATH], const char *path, const char *key, long i)
{
	char num[32];

	out[0] = 0;
	xl_cat(out, path);
	if (key != NULL) {
		xl_cat(out, ".");
		xl_cat(out, key);
		return;
	}
	snprintf(num, sizeof(num), "[%ld]", i);
	xl_cat(out, num);
}

/* path + "." + key + "[i]" */
static void
xl_path_at(char out[XL_PATH], const char *path, const char *key, long i)
{
	char num[32];

	xl_path(out, path, key, 0);
	snprintf(num, sizeof(num), "[%ld]", i);
	xl_cat(out, num);
}

/* Member key of object v (at path) of type t; *out NULL when absent and
 * optional.  0 or RBA_E_SCHEMA. */
static int
xl_get(struct xl *l, const struct rba_json_value *v, const char *path,
       const char *key, enum rba_json_type t, int optional,
       const struct rba_json_value **out)
{
	static const char *const names[] = { "null", "false", "true", "a number",
					     "a string", "an array", "an object" };
	const struct rba_json_value *m = rba_json_get(v, key);
	char p[XL_PATH];

	*out = NULL;
	xl_path(p, path, key, 0);
	if (m == NULL) {
		if (optional)
			return 0;
		return xl_fail(l, RBA_E_SCHEMA, p, "missing");
	}
	if (m->type != t && !(t == RBA_JSON_TRUE && m->type == RBA_JSON_FALSE))
		return xl_fail(l, RBA_E_SCHEMA, p, "must be %s", names[t]);
	*out = m;
	return 0;
}

/* A decimal integer in a string (XGBoost's parameters), 0 .. max. */
static int
xl_str_uint(struct xl *l, const struct rba_json_value *obj, const char *path,
	    const char *key, int optional, uint32_t def, uint64_t max,
	    uint32_t *out)
{
	const struct rba_json_value *v;
	char p[XL_PATH];
	uint64_t x = 0;
	int err;

	*out = def;
	if ((err = xl_get(l, obj, path, key, RBA_JSON_STRING, optional, &v)) != 0 ||
	    v == NULL)
		return err;
	xl_path(p, path, key, 0);
	if (v->len == 0 || v->len > 10)
		return xl_fail(l, RBA_E_SCHEMA, p, "'%.32s' is not a count", v->str);
	for (size_t i = 0; i < v->len; i++) {
		if (v->str[i] < '0' || v->str[i] > '9')
			return xl_fail(l, RBA_E_SCHEMA, p, "'%.32s' is not a count",
				       v->str);
		x = x * 10 + (uint64_t)(v->str[i] - '0');
	}
	if (x > max)
		return xl_fail(l, RBA_E_LIMIT, p, "%llu is over %llu",
			       (unsigned long long)x, (unsigned long long)max);
	*out = (uint32_t)x;
	return 0;
}

/* Item i of array a (at path) as an integer in lo .. hi. */
static int
xl_int(struct xl *l, const struct rba_json_value *a, const char *path,
       size_t i, long lo, long hi, const char *what, long *out)
{
	const struct rba_json_value *v = &a->items[i];
	char p[XL_PATH];

	if (v->type != RBA_JSON_NUMBER || v->num != floor(v->num) ||
	    !(v->num >= -2147483648.0 && v->num <= 4294967295.0)) {
		xl_path(p, path, NULL, (long)i);
		return xl_fail(l, RBA_E_SCHEMA, p, "must be an integer");
	}
	if (v->num < (double)lo || v->num > (double)hi) {
		xl_path(p, path, NULL, (long)i);
		return xl_fail(l, RBA_E_SCHEMA, p, "%s %.0f out of range", what,
			       v->num);
	}
	*out = (long)v->num;
	return 0;
}

/* Item i of array a as a finite float32. */
static int
xl_float(struct xl *l, const struct rba_json_value *a, const char *path,
	 size_t i, float *out)
{
	const struct rba_json_value *v = &a->items[i];
	char p[XL_PATH];

	if (v->type != RBA_JSON_NUMBER || !isfinite(v->numf)) {
		xl_path(p, path, NULL, (long)i);
		return xl_fail(l, RBA_E_SCHEMA, p, "must be a finite float32");
	}
	*out = v->numf;
	return 0;
}

/* ---- the header ---- */

static int
xl_version(struct xl *l, const struct rba_json_value *root)
{
	const struct rba_json_value *v;
	long maj, min;
	int err;

	if ((err = xl_get(l, root, "$", "version", RBA_JSON_ARRAY, 0, &v)) != 0)
		return err;
	if (v->n < 2)
		return xl_fail(l, RBA_E_SCHEMA, "$.version",
			       "needs a major and a minor number");
	if ((err = xl_int(l, v, "$.version", 0, 0, 1000, "version", &maj)) != 0 ||
	    (err = xl_int(l, v, "$.version", 1, 0, 1000, "version", &min)) != 0)
		return err;
	if (maj < 1 || (maj == 1 && min < 7) || maj > 2)
		return xl_fail(l, RBA_E_UNSUPPORTED, "$.version",
			       "XGBoost %ld.%ld models are not supported "
			       "(1.7 or later, before 3)", maj, min);
	return 0;
}

static int
xl_objective(struct xl *l, const struct rba_json_value *learner)
{
	const struct rba_json_value *o, *name, *gb, *gbname;
	int err;

	if ((err = xl_get(l, learner, "$.learner", "objective", RBA_JSON_OBJECT,
			  0, &o)) != 0 ||
	    (err = xl_get(l, o, "$.learner.objective", "name", RBA_JSON_STRING,
			  0, &name)) != 0 ||
	    (err = xl_get(l, learner, "$.learner", "gradient_booster",
			  RBA_JSON_OBJECT, 0, &gb)) != 0 ||
	    (err = xl_get(l, gb, "$.learner.gradient_booster", "name",
			  RBA_JSON_STRING, 0, &gbname)) != 0)
		return err;
	if (strcmp(gbname->str, "gbtree") != 0)
		return xl_fail(l, RBA_E_UNSUPPORTED, "$.learner.gradient_booster.name",
			       "booster '%.64s' is not supported (gbtree only)",
			       gbname->str);
	if (strcmp(name->str, "binary:logistic") == 0 ||
	    strcmp(name->str, "reg:logistic") == 0)
		l->rules = REBUILD_FOREST_XGB_SIGMOID;
	else if (strcmp(name->str, "multi:softprob") == 0)
		l->rules = REBUILD_FOREST_XGB_SOFTMAX;
	else
		return xl_fail(l, RBA_E_UNSUPPORTED, "$.learner.objective.name",
			       "objective '%.64s' is not supported "
			       "(binary:logistic, reg:logistic, multi:softprob)",
			       name->str);
	return 0;
}

/* base_score: a float in a string, as XGBoost writes it ("5E-1"; XGBoost
 * 2 may bracket it: "[5E-1]"). */
static int
xl_base_score(struct xl *l, const struct rba_json_value *mp)
{
	const char *p = "$.learner.learner_model_param.base_score";
	const struct rba_json_value *v;
	char tmp[64], *end;
	size_t n;
	int err;

	if ((err = xl_get(l, mp, "$.learner.learner_model_param", "base_score",
			  RBA_JSON_STRING, 0, &v)) != 0)
		return err;
	const char *t = v->str;
	n = v->len;
	if (n >= 2 && t[0] == '[' && t[n - 1] == ']')
		t++, n -= 2;
	if (n == 0 || n >= sizeof(tmp))
		return xl_fail(l, RBA_E_SCHEMA, p, "'%.32s' is not a number", v->str);
	memcpy(tmp, t, n);
	tmp[n] = 0;
	if (strspn(tmp, "0123456789+-.eE") != n)
		return xl_fail(l, RBA_E_SCHEMA, p, "'%.32s' is not a number", v->str);
	l->base_score = strtof(tmp, &end);
	if (end != tmp + n || !isfinite(l->base_score))
		return xl_fail(l, RBA_E_SCHEMA, p, "'%.32s' is not a number", v->str);
	if (l->rules == REBUILD_FOREST_XGB_SIGMOID) {
		/* LogisticRegression::ProbToMargin, in float */
		if (!(l->base_score > 0.0f && l->base_score < 1.0f))
			return xl_fail(l, RBA_E_SCHEMA, p,
				       "base_score %.9g is not in (0, 1), as the "
				       "logistic objective needs", (double)l->base_score);
		l->base = -logf(1.0f / l->base_score - 1.0f);
	} else {
		l->base = l->base_score; /* ObjFunction::ProbToMargin */
	}
	return 0;
}

static int
xl_model_param(struct xl *l, const struct rba_json_value *learner)
{
	const char *path = "$.learner.learner_model_param";
	const struct rba_json_value *mp;
	uint32_t ncls, ntarget;
	int err;

	if ((err = xl_get(l, learner, "$.learner", "learner_model_param",
			  RBA_JSON_OBJECT, 0, &mp)) != 0 ||
	    (err = xl_base_score(l, mp)) != 0 ||
	    (err = xl_str_uint(l, mp, path, "num_class", 0, 0,
			       REBUILD_MAX_CLASSES, &ncls)) != 0 ||
	    (err = xl_str_uint(l, mp, path, "num_feature", 0, 0,
			       REBUILD_MAX_WIDTH, &l->nfeat)) != 0 ||
	    (err = xl_str_uint(l, mp, path, "num_target", 1, 1, 1u << 20,
			       &ntarget)) != 0)
		return err;
	if (ntarget != 1)
		return xl_fail(l, RBA_E_UNSUPPORTED, "$.learner.learner_model_param.num_target",
			       "multi-target models are not supported");
	if (l->nfeat == 0)
		return xl_fail(l, RBA_E_SCHEMA, "$.learner.learner_model_param.num_feature",
			       "a model needs at least one feature");
	if (l->rules == REBUILD_FOREST_XGB_SIGMOID) {
		if (ncls > 1)
			return xl_fail(l, RBA_E_SCHEMA,
				       "$.learner.learner_model_param.num_class",
				       "%u classes for a logistic objective", ncls);
		l->nclasses = 2;
		l->ngroups = 1;
	} else {
		if (ncls < 2)
			return xl_fail(l, RBA_E_SCHEMA,
				       "$.learner.learner_model_param.num_class",
				       "multi:softprob needs 2 or more classes, not %u",
				       ncls);
		l->nclasses = l->ngroups = ncls;
	}
	return 0;
}

/* feature_names (f0 .. fN-1 when empty or absent) and feature_types. */
static int
xl_features(struct xl *l, const struct rba_json_value *learner)
{
	const struct rba_json_value *names, *types;
	char p[XL_PATH];
	int err;

	if ((err = xl_get(l, learner, "$.learner", "feature_names", RBA_JSON_ARRAY,
			  1, &names)) != 0 ||
	    (err = xl_get(l, learner, "$.learner", "feature_types", RBA_JSON_ARRAY,
			  1, &types)) != 0)
		return err;
	for (size_t i = 0; types != NULL && i < types->n; i++) {
		const struct rba_json_value *t = &types->items[i];
		xl_path(p, "$.learner.feature_types", NULL, (long)i);
		if (t->type != RBA_JSON_STRING)
			return xl_fail(l, RBA_E_SCHEMA, p, "must be a string");
		if (strcmp(t->str, "c") == 0)
			return xl_fail(l, RBA_E_UNSUPPORTED, p,
				       "categorical features are not supported");
	}
	if (names != NULL && names->n != 0 && names->n != l->nfeat)
		return xl_fail(l, RBA_E_SCHEMA, "$.learner.feature_names",
			       "%zu names for %u features", names->n, l->nfeat);
	if ((l->feat = calloc(l->nfeat, sizeof(char *))) == NULL)
		return RBA_E_NOMEM;
	for (uint32_t f = 0; f < l->nfeat; f++) {
		if (names == NULL || names->n == 0) {
			l->feat[f] = rba_strdupf("f%u", f);
		} else {
			const struct rba_json_value *v = &names->items[f];
			xl_path(p, "$.learner.feature_names", NULL, (long)f);
			if (v->type != RBA_JSON_STRING || v->len == 0 ||
			    v->len > ENCODE_MAX_TEXT || strlen(v->str) != v->len ||
			    !rba_utf8_valid(v->str, v->len, NULL))
				return xl_fail(l, RBA_E_SCHEMA, p,
					       "must be a name (UTF-8, 1 to %u bytes)",
					       ENCODE_MAX_TEXT);
			for (uint32_t g = 0; g < f; g++)
				if (strcmp(l->feat[g], v->str) == 0)
					return xl_fail(l, RBA_E_SCHEMA, p,
						       "feature '%.64s' is named twice",
						       v->str);
			l->feat[f] = strdup(v->str);
		}
		if (l->feat[f] == NULL)
			return RBA_E_NOMEM;
	}
	return 0;
}

static int
xl_trees_head(struct xl *l, const struct rba_json_value *learner)
{
	const char *mpath = "$.learner.gradient_booster.model";
	const struct rba_json_value *gb, *model, *gp;
	uint32_t ntrees, leafvec;
	long g;
	int err;

	gb = rba_json_get(learner, "gradient_booster");
	if ((err = xl_get(l, gb, "$.learner.gradient_booster", "model",
			  RBA_JSON_OBJECT, 0, &model)) != 0 ||
	    (err = xl_get(l, model, mpath, "gbtree_model_param", RBA_JSON_OBJECT,
			  0, &gp)) != 0 ||
	    (err = xl_str_uint(l, gp, "$.learner.gradient_booster.model.gbtree_model_param",
			       "num_trees", 0, 0, REBUILD_GBDT_MAX_TREES, &ntrees)) != 0 ||
	    (err = xl_str_uint(l, gp, "$.learner.gradient_booster.model.gbtree_model_param",
			       "size_leaf_vector", 1, 0, 1u << 20, &leafvec)) != 0 ||
	    (err = xl_get(l, model, mpath, "trees", RBA_JSON_ARRAY, 0, &l->trees)) != 0 ||
	    (err = xl_get(l, model, mpath, "tree_info", RBA_JSON_ARRAY, 0, &l->info)) != 0)
		return err;
	if (leafvec != 0)
		return xl_fail(l, RBA_E_UNSUPPORTED,
			       "$.learner.gradient_booster.model.gbtree_model_param.size_leaf_vector",
			       "vector leaves are not supported");
	if (l->trees->n != ntrees)
		return xl_fail(l, RBA_E_SCHEMA, "$.learner.gradient_booster.model.trees",
			       "%zu trees, num_trees says %u", l->trees->n, ntrees);
	if (ntrees == 0)
		return xl_fail(l, RBA_E_SCHEMA, "$.learner.gradient_booster.model.trees",
			       "a model needs at least one tree");
	if (l->info->n != ntrees)
		return xl_fail(l, RBA_E_SCHEMA, "$.learner.gradient_booster.model.tree_info",
			       "%zu entries for %u trees", l->info->n, ntrees);
	for (uint32_t t = 0; t < ntrees; t++)
		if ((err = xl_int(l, l->info, "$.learner.gradient_booster.model.tree_info",
				  t, 0, (long)l->ngroups - 1, "group", &g)) != 0)
			return err;
	return 0;
}

/* ---- the trees ---- */

/* Tree t's arrays, each of num_nodes entries; *nn gets that. */
static int
xl_tree_arrays(struct xl *l, uint32_t t, uint32_t *nn)
{
	const struct rba_json_value *tv = &l->trees->items[t], *tp, *a;
	char path[XL_PATH], p[XL_PATH];
	static const char *const must[] = { "left_children", "right_children",
					    "split_indices", "split_conditions",
					    "default_left", "sum_hessian" };
	const struct rba_json_value **dst[] = { &l->lc, &l->rc, &l->si,
						&l->sc, &l->dl, &l->sh };
	static const char *const empty[] = { "categories", "categories_nodes" };
	int err;

	xl_path(path, "$.learner.gradient_booster.model.trees", NULL, (long)t);
	if (tv->type != RBA_JSON_OBJECT)
		return xl_fail(l, RBA_E_SCHEMA, path, "must be an object");
	xl_path(p, path, "tree_param", 0);
	if ((err = xl_get(l, tv, path, "tree_param", RBA_JSON_OBJECT, 0, &tp)) != 0 ||
	    (err = xl_str_uint(l, tp, p, "num_nodes", 0, 0, XGBOOST_MAX_TREE_NODES,
			       nn)) != 0)
		return err;
	if (*nn == 0)
		return xl_fail(l, RBA_E_SCHEMA, p, "a tree needs at least one node");
	for (size_t k = 0; k < sizeof(must) / sizeof(must[0]); k++) {
		if ((err = xl_get(l, tv, path, must[k], RBA_JSON_ARRAY, 0, dst[k])) != 0)
			return err;
		if ((*dst[k])->n != *nn) {
			xl_path(p, path, must[k], 0);
			return xl_fail(l, RBA_E_SCHEMA, p, "%zu entries for %u nodes",
				       (*dst[k])->n, *nn);
		}
	}
	if ((err = xl_get(l, tv, path, "split_type", RBA_JSON_ARRAY, 1, &a)) != 0)
		return err;
	for (size_t i = 0; a != NULL && i < a->n; i++) {
		long st;
		xl_path(p, path, "split_type", 0);
		if ((err = xl_int(l, a, p, i, 0, 1, "split type", &st)) != 0)
			return err;
		if (st != 0) {
			char q[XL_PATH];
			xl_path(q, p, NULL, (long)i);
			return xl_fail(l, RBA_E_UNSUPPORTED, q,
				       "categorical splits are not supported");
		}
	}
	for (size_t k = 0; k < 2; k++) {
		if ((err = xl_get(l, tv, path, empty[k], RBA_JSON_ARRAY, 1, &a)) != 0)
			return err;
		if (a != NULL && a->n != 0) {
			xl_path(p, path, empty[k], 0);
			return xl_fail(l, RBA_E_UNSUPPORTED, p,
				       "categorical splits are not supported");
		}
	}
	return 0;
}

/*
 * Node i of the file's tree (reached from the entry at via[vi] of its
 * parent; via NULL for the root) at depth into nodes[*pos], its subtree
 * after it in preorder.
 */
static int
xl_walk(struct xl *l, uint32_t nn, long i, const char *via, long vi,
	uint32_t depth, struct rebuild_tree_node *nodes, uint32_t *pos)
{
	char tp[XL_PATH], p[XL_PATH];
	struct rebuild_tree_node *q;
	uint32_t me;
	long lc, rc, f, dl;
	float v = 0.0f, cover = 0.0f;
	int err;

	xl_path(tp, "$.learner.gradient_booster.model.trees", NULL, (long)l->tree);
	if (l->seen[i]) {
		xl_path_at(p, tp, via, vi);
		return xl_fail(l, RBA_E_SCHEMA, p,
			       "node %ld is reached twice (a cycle or a shared node)",
			       i);
	}
	if (depth > XGBOOST_MAX_DEPTH)
		return xl_fail(l, RBA_E_LIMIT, tp, "deeper than %u levels",
			       XGBOOST_MAX_DEPTH);
	l->seen[i] = 1;
	me = (*pos)++;
	q = &nodes[me];
	l->node_id[me] = (uint32_t)i;
	xl_path(p, tp, "left_children", 0);
	if ((err = xl_int(l, l->lc, p, (size_t)i, -1, (long)nn - 1,
			  "child index", &lc)) != 0)
		return err;
	xl_path(p, tp, "right_children", 0);
	if ((err = xl_int(l, l->rc, p, (size_t)i, -1, (long)nn - 1,
			  "child index", &rc)) != 0)
		return err;
	xl_path(p, tp, "split_conditions", 0);
	if ((err = xl_float(l, l->sc, p, (size_t)i, &v)) != 0)
		return err;
	xl_path(p, tp, "sum_hessian", 0);
	if ((err = xl_float(l, l->sh, p, (size_t)i, &cover)) != 0)
		return err;
	if (cover < 0.0f) {
		xl_path_at(p, tp, "sum_hessian", i);
		return xl_fail(l, RBA_E_SCHEMA, p, "a cover below zero");
	}
	q->cover = cover;
	if ((lc < 0) != (rc < 0)) {
		xl_path_at(p, tp, lc < 0 ? "left_children" : "right_children", i);
		return xl_fail(l, RBA_E_SCHEMA, p,
			       "a node with one child (-1 is a leaf's two)");
	}
	if (lc < 0) {
		q->feature = REBUILD_TREE_LEAF;
		q->value = v;
		return 0;
	}
	xl_path(p, tp, "split_indices", 0);
	if ((err = xl_int(l, l->si, p, (size_t)i, 0, (long)l->nfeat - 1,
			  "feature index", &f)) != 0)
		return err;
	xl_path(p, tp, "default_left", 0);
	if ((err = xl_int(l, l->dl, p, (size_t)i, 0, 1, "flag", &dl)) != 0)
		return err;
	q->feature = (uint32_t)f;
	q->threshold = v + 0.0f; /* -0 is +0: the same comparisons */
	q->flags = dl ? REBUILD_TREE_DEFAULT_LEFT : 0;
	q->left = me + 1;
	if ((err = xl_walk(l, nn, lc, "left_children", i, depth + 1, nodes, pos)) != 0)
		return err;
	nodes[me].right = *pos;
	return xl_walk(l, nn, rc, "right_children", i, depth + 1, nodes, pos);
}

/* Bin edges: each feature's distinct thresholds, ascending; bins. */
static int
cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static int
xl_edges(struct rebuild_forest *fo, size_t nn)
{
	size_t ne = 0, k = 0;
	uint32_t *cnt = calloc(fo->nfeatures + 1, sizeof(uint32_t));
	float *e;

	if (cnt == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < nn; i++)
		if (fo->nodes[i].feature != REBUILD_TREE_LEAF)
			cnt[fo->nodes[i].feature]++, ne++;
	free(fo->edges);
	if ((fo->edges = e = malloc((ne ? ne : 1) * sizeof(float))) == NULL) {
		free(cnt);
		return RBA_E_NOMEM;
	}
	/* each feature's thresholds in its own run, sorted, deduplicated */
	for (uint32_t f = 0, at = 0; f < fo->nfeatures; f++) {
		uint32_t c = cnt[f];
		cnt[f] = at;
		at += c;
	}
	for (size_t i = 0; i < nn; i++) {
		const struct rebuild_tree_node *q = &fo->nodes[i];
		if (q->feature != REBUILD_TREE_LEAF)
			e[cnt[q->feature]++] = q->threshold;
	}
	for (uint32_t f = 0, at = 0; f < fo->nfeatures; f++) {
		uint32_t end = cnt[f], u = 0;
		qsort(e + at, end - at, sizeof(float), cmp_float);
		fo->edge_start[f] = (uint32_t)k;
		for (uint32_t j = at; j < end; j++)
			if (u == 0 || e[j] != e[k - 1])
				e[k++] = e[j], u++;
		at = end;
	}
	fo->edge_start[fo->nfeatures] = (uint32_t)k;
	for (size_t i = 0; i < nn; i++) {
		struct rebuild_tree_node *q = &fo->nodes[i];
		uint32_t lo, hi;
		if (q->feature == REBUILD_TREE_LEAF)
			continue;
		lo = fo->edge_start[q->feature];
		hi = fo->edge_start[q->feature + 1];
		while (lo + 1 < hi) { /* the edge equal to the threshold */
			uint32_t mid = lo + (hi - lo) / 2;
			if (e[mid] <= q->threshold)
				lo = mid;
			else
				hi = mid;
		}
		q->bin = lo - fo->edge_start[q->feature];
	}
	free(cnt);
	return 0;
}

/* The forest: trees grouped so that tree t adds to group t % K. */
static int
xl_forest(struct xl *l, struct rebuild_model *m)
{
	struct rebuild_forest *fo = &m->forest;
	uint32_t T = (uint32_t)l->trees->n, K = l->ngroups, pos = 0, maxnn = 0;
	uint32_t *order = NULL, *nth = NULL;
	size_t total = 0;
	int err = RBA_E_NOMEM;

	/* the counts first: each tree's arrays and its node count */
	for (uint32_t t = 0; t < T; t++) {
		uint32_t nn;
		if ((err = xl_tree_arrays(l, t, &nn)) != 0)
			return err;
		total += nn;
		maxnn = nn > maxnn ? nn : maxnn;
	}
	if (total > REBUILD_GBDT_MAX_NODES)
		return xl_fail(l, RBA_E_LIMIT, "$.learner.gradient_booster.model.trees",
			       "%zu nodes in all, over %u", total,
			       REBUILD_GBDT_MAX_NODES);
	order = malloc(T * sizeof(uint32_t));
	nth = calloc(K, sizeof(uint32_t));
	if (order == NULL || nth == NULL)
		goto out;
	/* group g's j-th tree goes to position j * K + g */
	for (uint32_t t = 0; t < T; t++) {
		uint32_t g = (uint32_t)l->info->items[t].num;
		size_t at = (size_t)nth[g]++ * K + g;
		if (at >= T) {
			err = xl_fail(l, RBA_E_UNSUPPORTED,
				      "$.learner.gradient_booster.model.tree_info",
				      "the classes do not have one tree each a round");
			goto out;
		}
		order[at] = t;
	}
	memset(m, 0, sizeof(*m));
	m->kind = REBUILD_KIND_GBDT;
	m->nlayers = 1;
	m->sizes[0] = l->nfeat;
	m->sizes[1] = l->nclasses;
	fo->nfeatures = l->nfeat;
	fo->nclasses = l->nclasses;
	fo->ngroups = K;
	fo->rules = l->rules;
	fo->ntrees = T;
	fo->base = malloc(K * sizeof(float));
	fo->edge_start = calloc((size_t)l->nfeat + 1, sizeof(uint32_t));
	fo->tree_start = calloc((size_t)T + 1, sizeof(uint32_t));
	fo->nodes = calloc(total, sizeof(*fo->nodes));
	l->seen = malloc(maxnn);
	l->tree_id = malloc(T * sizeof(uint32_t));
	l->node_id = malloc(total * sizeof(uint32_t));
	if (fo->base == NULL || fo->edge_start == NULL || fo->tree_start == NULL ||
	    fo->nodes == NULL || l->seen == NULL || l->tree_id == NULL ||
	    l->node_id == NULL)
		goto out;
	for (uint32_t g = 0; g < K; g++)
		fo->base[g] = l->base;
	for (uint32_t t = 0; t < T; t++) {
		uint32_t nn;
		l->tree = l->tree_id[t] = order[t];
		(void)xl_tree_arrays(l, l->tree, &nn); /* checked above */
		memset(l->seen, 0, nn);
		fo->tree_start[t] = pos;
		if ((err = xl_walk(l, nn, 0, NULL, 0, 0, fo->nodes, &pos)) != 0)
			goto out;
	}
	fo->tree_start[T] = pos;
	err = xl_edges(fo, pos);
out:
	free(order);
	free(nth);
	return err;
}

/* ---- the spec ---- */

static int
xl_spec(struct xl *l, struct encode_spec *s)
{
	uint32_t C = l->nclasses, w = 1;

	for (uint32_t c = C - 1; c >= 10; c /= 10)
		w++;
	s->label = strdup("label");
	s->nclasses = C;
	s->classes = calloc(C, sizeof(char *));
	s->positive = l->rules == REBUILD_FOREST_XGB_SIGMOID ? 1 : ENCODE_NO_POSITIVE;
	s->ncolumns = l->nfeat;
	s->columns = calloc(l->nfeat, sizeof(*s->columns));
	s->nfeatures = l->nfeat;
	s->mean = calloc(l->nfeat, sizeof(float));
	s->scale = malloc(l->nfeat * sizeof(float));
	s->missing = calloc(4, sizeof(char *));
	if (s->label == NULL || s->classes == NULL || s->columns == NULL ||
	    s->mean == NULL || s->scale == NULL || s->missing == NULL)
		return RBA_E_NOMEM;
	for (uint32_t c = 0; c < C; c++)
		if ((s->classes[c] = rba_strdupf("%0*u", (int)w, c)) == NULL)
			return RBA_E_NOMEM;
	for (uint32_t f = 0; f < l->nfeat; f++) {
		s->columns[f].name = l->feat[f];
		l->feat[f] = NULL;
		s->columns[f].kind = ENCODE_NUMERIC;
		s->scale[f] = 1.0f;
	}
	for (uint32_t k = 0; k < 4; k++) {
		if ((s->missing[k] = strdup(xl_missing[k])) == NULL)
			return RBA_E_NOMEM;
		s->nmissing = k + 1;
	}
	return 0;
}

/* A JSON error's byte offset (d->col - 1) as FILE:LINE:COL. */
static void
xl_place(const char *p, size_t n, const char *name, struct rba_detail *d)
{
	size_t off, line = 1, col = 1;

	if (d == NULL)
		return;
	off = d->col > 0 ? d->col - 1 : 0;
	for (size_t i = 0; i < off && i < n; i++) {
		if (p[i] == '\n')
			line++, col = 1;
		else
			col++;
	}
	snprintf(d->file, sizeof(d->file), "%s", name);
	d->line = line;
	d->col = col;
}

int
xgboost_decode(const void *p, size_t n, const char *name,
	       struct artifact *out, struct rba_detail *d)
{
	struct rba_json_value root;
	const struct rba_json_value *learner;
	struct xl l;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&l, 0, sizeof(l));
	l.name = name;
	l.d = d;
	if (n > XGBOOST_MAX_BYTES)
		return rba_fail(d, RBA_E_LIMIT, name, 0, 0,
				"'%s' has %zu bytes, over the limit of %u bytes "
				"(%u MiB) for an XGBoost model",
				name, n, XGBOOST_MAX_BYTES, XGBOOST_MAX_BYTES >> 20);
	/* XGBoost writes NaN and infinities as words: read, so that the
	 * value is refused by its path (a categorical split's NaN
	 * condition after its feature's type "c") */
	if ((err = rba_json_parse_flags(p, n, RBA_JSON_NONFINITE, &root, d)) != 0) {
		xl_place(p, n, name, d);
		return err;
	}
	if (root.type != RBA_JSON_OBJECT) {
		err = xl_fail(&l, RBA_E_SCHEMA, "$", "must be an object");
		goto out;
	}
	if ((err = xl_version(&l, &root)) != 0 ||
	    (err = xl_get(&l, &root, "$", "learner", RBA_JSON_OBJECT, 0,
			  &learner)) != 0 ||
	    (err = xl_objective(&l, learner)) != 0 ||
	    (err = xl_model_param(&l, learner)) != 0 ||
	    (err = xl_features(&l, learner)) != 0 ||
	    (err = xl_trees_head(&l, learner)) != 0 ||
	    (err = xl_forest(&l, &out->model)) != 0 ||
	    (err = xl_spec(&l, &out->spec)) != 0)
		goto out;
	out->abi = 0; /* not our trainer's: the forest's rules are XGBoost's */
	out->xgb_tree = l.tree_id;
	out->xgb_node = l.node_id;
	l.tree_id = l.node_id = NULL;
out:
	if (l.feat != NULL)
		rba_strv_free(l.feat, l.nfeat);
	free(l.seen);
	free(l.tree_id);
	free(l.node_id);
	rba_json_release(&root);
	if (err != 0) {
		if (err == RBA_E_NOMEM)
			rba_fail(d, err, NULL, 0, 0, "%s", "out of memory");
		if (d != NULL)
			snprintf(d->file, sizeof(d->file), "%s", name);
		artifact_release(out);
	}
	return err;
}

int
xgboost_is_json(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i = 0;

	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	return i < n && b[i] == '{';
}

int
xgboost_artifact_decode(const void *p, size_t n, const char *name,
			struct artifact *out, struct rba_detail *d)
{
	if (!xgboost_is_json(p, n))
		return artifact_decode(p, n, out, d);
	return xgboost_decode(p, n, name, out, d);
}

int
xgboost_artifact_load(const char *path, struct artifact *out,
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
	err = xgboost_artifact_decode(buf, n, path, out, d);
	if (err != 0 && d != NULL)
		snprintf(d->file, sizeof(d->file), "%s", path);
	free(buf);
	return err;
}

int
xgboost_artifact_is(const struct artifact *a)
{
	return a->model.kind == REBUILD_KIND_GBDT &&
	       a->model.forest.rules != REBUILD_FOREST_OWN;
}

int
xgboost_margins(const struct artifact *a, const float *raw, size_t n,
		float *margins)
{
	struct xgbtree *s;
	int err;

	if (!xgboost_artifact_is(a))
		return RBA_E_UNSUPPORTED;
	if (n == 0)
		return 0;
	if ((err = xgbtree_new(&a->model.forest, &s)) != 0)
		return err;
	/* mean 0 and scale 1: the raw features are the model's inputs */
	xgbtree_margins(s, raw, a->spec.nfeatures, n, margins);
	xgbtree_free(s);
	return 0;
}
