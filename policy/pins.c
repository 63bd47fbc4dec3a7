/*
 * pins.c - the pins file (doc/design.md section 5.1): schema, canonical
 * form, config hash.
 */
#include "policy/policy.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/ydoc.h"
#include "common/strv.h"

#define BIT(i) (UINT32_C(1) << (i))

/* Defaults of everything a file may leave out (rebuild-audit-pins(5)). */
static void
pins_defaults(struct pins *p)
{
	p->data.standardize = 1;
	p->data.split_validation = 0.25;
	p->data.split_order = PINS_SPLIT_RANDOM;
	p->data.split_seed = 0;
	p->model.nhidden = 0;
	p->model.activation = PINS_ACT_RELU;
	p->model.dropout = 0;
	p->model.kind = PINS_MODEL_MLP;
	p->model.gbdt.trees = 100;
	p->model.gbdt.max_depth = 6;
	p->model.gbdt.max_leaves = 0;
	p->model.gbdt.learning_rate = 0.3;
	p->model.gbdt.min_child_weight = 1;
	p->model.gbdt.lambda = 1;
	p->model.gbdt.gamma = 0;
	p->model.gbdt.max_bins = 256;
	p->model.gbdt.subsample = 1;
	p->model.gbdt.colsample = 1;
	p->train.seed = 0;
	p->train.epochs = 20;
	p->train.batch_size = 128;
	p->train.optimizer = PINS_OPT_ADAMW;
	p->train.lr = 0.001;
	p->train.weight_decay = 0.01;
	p->train.betas[0] = 0.9;
	p->train.betas[1] = 0.999;
	p->train.eps = 1e-8;
	p->train.momentum = 0;
	p->eval.subset = PINS_SUBSET_ALL;
	p->eval.reduction = PINS_RED_MEAN;
	p->eval.dropout = 0;
	p->eval.input_scale = 1.0;
	p->determinism.mode = PINS_DET_STRICT;
	p->determinism.threads = 1;
}

int
policy_name_valid(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > PINS_MAX_NAME || name[0] == '.' || name[0] == '-')
		return 0;
	for (i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* "'<path>.<key>' <rest>" at node at. */
static int
fail_at_key(struct yval *v, int err, const struct ydoc_node *at,
	    const char *key, const char *rest)
{
	size_t old = policy_yval_path_key(v, key);

	err = policy_yval_fail(v, err, at, "'%s' %s", v->path, rest);
	policy_yval_path_restore(v, old);
	return err;
}

/* ---- data ------------------------------------------------------------ */

struct data_nodes {
	const struct ydoc_node *label;
	const struct ydoc_node *id;
	const struct ydoc_node *exclude[PINS_MAX_LIST];
	const struct ydoc_node *categorical[PINS_MAX_LIST];
};

/* A list of column names: non-empty strings, none repeated. */
static int
get_names(struct yval *v, const struct ydoc_node *n, char ***out,
	  size_t *count, const struct ydoc_node **nodes)
{
	const struct ydoc_node *kid;
	size_t i = 0, j, old;
	char **a;
	int err;

	if ((err = policy_yval_seq(v, n)) != 0)
		return err;
	if (n->nkids > PINS_MAX_LIST)
		return policy_yval_fail(v, RBA_E_LIMIT, n,
					"'%s' has more than %d entries", v->path,
					PINS_MAX_LIST);
	a = calloc(n->nkids + 1, sizeof(*a));
	if (a == NULL)
		return policy_yval_fail(v, RBA_E_NOMEM, n, "out of memory");
	*out = a;
	*count = n->nkids; /* every slot is freed with the record on error */
	for (kid = n->kids; kid != NULL; kid = kid->next, i++) {
		old = policy_yval_path_index(v, i);
		err = policy_yval_get_str(v, kid, POLICY_MAX_STRING, &a[i]);
		for (j = 0; err == 0 && j < i; j++)
			if (strcmp(a[i], a[j]) == 0)
				err = policy_yval_fail(v, RBA_E_SCHEMA, kid,
						       "'%s' repeats '%s'", v->path,
						       a[j]);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
		nodes[i] = kid;
	}
	return 0;
}

static void
node_pos(const struct ydoc_node *n, struct pins_pos *out)
{
	if (n != NULL) {
		out->line = n->line;
		out->col = n->col;
	}
}

/*
 * The position of each name of a sorted list, from the nodes in listing
 * order (names are unique, and there are at most PINS_MAX_LIST).
 */
static void
names_pos(char *const *names, size_t n, const struct ydoc_node *const *nodes,
	  struct pins_pos *out)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (nodes[j] != NULL &&
			    policy_ydoc_node_is(nodes[j], names[i])) {
				node_pos(nodes[j], &out[i]);
				break;
			}
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Label, id, excluded and categorical columns are four disjoint sets. */
static int
data_cross_check(struct yval *v, struct pins *p, const struct data_nodes *dn)
{
	size_t i, j, old;
	int err = 0;

	if (p->data.id != NULL && strcmp(p->data.id, p->data.label) == 0)
		return fail_at_key(v, RBA_E_SCHEMA, dn->id, "id",
				   "must differ from 'data.label'");
	for (i = 0; i < p->data.nexclude && err == 0; i++) {
		old = policy_yval_path_key(v, "exclude");
		policy_yval_path_index(v, i);
		if (strcmp(p->data.exclude[i], p->data.label) == 0)
			err = policy_yval_fail(v, RBA_E_SCHEMA, dn->exclude[i],
					       "'%s' names the label column",
					       v->path);
		else if (p->data.id != NULL &&
			 strcmp(p->data.exclude[i], p->data.id) == 0)
			err = policy_yval_fail(
				v, RBA_E_SCHEMA, dn->exclude[i],
				"'%s' names the id column, which is never a feature",
				v->path);
		policy_yval_path_restore(v, old);
	}
	for (i = 0; i < p->data.ncategorical && err == 0; i++) {
		old = policy_yval_path_key(v, "categorical");
		policy_yval_path_index(v, i);
		if (strcmp(p->data.categorical[i], p->data.label) == 0)
			err = policy_yval_fail(v, RBA_E_SCHEMA, dn->categorical[i],
					       "'%s' names the label column",
					       v->path);
		else if (p->data.id != NULL &&
			 strcmp(p->data.categorical[i], p->data.id) == 0)
			err = policy_yval_fail(v, RBA_E_SCHEMA, dn->categorical[i],
					       "'%s' names the id column", v->path);
		for (j = 0; err == 0 && j < p->data.nexclude; j++)
			if (strcmp(p->data.categorical[i], p->data.exclude[j]) == 0)
				err = policy_yval_fail(
					v, RBA_E_SCHEMA, dn->categorical[i],
					"'%s' names a column in 'data.exclude'",
					v->path);
		policy_yval_path_restore(v, old);
	}
	return err;
}

/*
 * data.missing: a list of field texts (the empty one written ""), each
 * at most PINS_MAX_TOKEN bytes, none twice (refused at the repeat).
 */
static int
get_tokens(struct yval *v, const struct ydoc_node *n, struct pins *p)
{
	const struct ydoc_node *kid;
	size_t i = 0, old;
	char **a;
	int err = 0;

	if ((err = policy_yval_seq(v, n)) != 0)
		return err;
	if (n->nkids > PINS_MAX_MISSING)
		return policy_yval_fail(v, RBA_E_LIMIT, n,
					"'%s' has more than %d entries", v->path,
					PINS_MAX_MISSING);
	a = calloc(n->nkids + 1, sizeof(*a));
	if (a == NULL)
		return policy_yval_fail(v, RBA_E_NOMEM, n, "out of memory");
	rba_strv_free(p->data.missing, p->data.nmissing);
	p->data.missing = a;
	p->data.nmissing = n->nkids;
	p->data.missing_declared = 1;
	for (kid = n->kids; kid != NULL && err == 0; kid = kid->next, i++) {
		old = policy_yval_path_index(v, i);
		if (kid->type != YDOC_SCALAR || policy_ydoc_node_is_null(kid))
			err = policy_yval_fail(v, RBA_E_SCHEMA, kid,
					       "'%s' must be a string (the empty "
					       "field is written \"\")",
					       v->path);
		else if (memchr(kid->val, 0, kid->len) != NULL ||
			 memchr(kid->val, '\n', kid->len) != NULL ||
			 memchr(kid->val, ',', kid->len) != NULL ||
			 memchr(kid->val, '"', kid->len) != NULL)
			err = policy_yval_fail(v, RBA_E_SCHEMA, kid,
					       "'%s' must not hold a NUL, a newline, "
					       "a comma or a quote",
					       v->path);
		else if (kid->len > PINS_MAX_TOKEN)
			err = policy_yval_fail(v, RBA_E_LIMIT, kid,
					       "'%s' is longer than %d bytes",
					       v->path, PINS_MAX_TOKEN);
		else if ((a[i] = strdup(kid->val)) == NULL)
			err = policy_yval_fail(v, RBA_E_NOMEM, kid,
					       "out of memory");
		for (size_t j = 0; err == 0 && j < i; j++)
			if (strcmp(a[i], a[j]) == 0)
				err = policy_yval_fail(v, RBA_E_SCHEMA, kid,
						       "'%s' declares the missing "
						       "token \"%s\" twice",
						       v->path, a[j]);
		policy_yval_path_restore(v, old);
	}
	for (; i < p->data.nmissing; i++)
		if (a[i] == NULL && (a[i] = strdup("")) == NULL)
			err = err ? err : RBA_E_NOMEM;
	if (err == 0 && p->data.nmissing > 1)
		qsort(a, p->data.nmissing, sizeof(char *), cmp_str);
	return err;
}

const char *const *
pins_missing_tokens(const struct pins *p, size_t *n)
{
	static const char *const dflt[] = {""};

	if (!p->data.missing_declared) {
		*n = 1;
		return dflt;
	}
	*n = p->data.nmissing;
	return (const char *const *)p->data.missing;
}

/* data.impute: mean, or a finite number. */
static int
get_impute(struct yval *v, const struct ydoc_node *n, struct pins *p)
{
	static const struct yrange any = {-3.4e38, 3.4e38, 0, 0};

	node_pos(n, &p->src.impute);
	if (policy_ydoc_node_is(n, "mean")) {
		p->data.impute = PINS_IMPUTE_MEAN;
		return 0;
	}
	if (n->type != YDOC_SCALAR || policy_ydoc_node_is_null(n) ||
	    !(n->val[0] == '-' || n->val[0] == '+' || n->val[0] == '.' ||
	      (n->val[0] >= '0' && n->val[0] <= '9')))
		return policy_yval_fail(v, RBA_E_SCHEMA, n,
					"'%s' must be mean or a number", v->path);
	p->data.impute = PINS_IMPUTE_CONST;
	return policy_yval_get_num(v, n, &any, &p->data.impute_value);
}

static int
pins_split(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	static const char *const keys[] = {"validation", "order", "seed"};
	static const char *const orders[] = {"random", "tail"};
	static const struct yrange frac = {0, 1, 1, 1};
	const struct ydoc_node *k;
	uint32_t seen = 0;
	size_t i, old;
	int err, e;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, 3, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		old = policy_yval_path_key(v, keys[i]);
		switch (i) {
		case 0:
			err = policy_yval_get_num(v, k->next, &frac,
						  &p->data.split_validation);
			break;
		case 1:
			err = policy_yval_get_enum(v, k->next, orders, 2, &e);
			p->data.split_order = e == 0 ? PINS_SPLIT_RANDOM
						     : PINS_SPLIT_TAIL;
			break;
		default:
			err = policy_yval_get_uint(v, k->next, 0, UINT64_MAX,
						   &p->data.split_seed);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

static int
pins_data(struct yval *v, const struct ydoc_node *key,
	  const struct ydoc_node *map, struct pins *p,
	  const struct ydoc_node **impute_at)
{
	static const char *const keys[] = {"label", "positive", "id",
					   "exclude", "categorical",
					   "standardize", "split", "missing",
					   "impute"};
	enum { LABEL, POSITIVE, ID, EXCLUDE, CATEGORICAL, STANDARDIZE, SPLIT,
	       MISSING, IMPUTE, N };
	struct data_nodes dn;
	const struct ydoc_node *k;
	uint32_t seen = 0;
	size_t i, old;
	int err;

	memset(&dn, 0, sizeof(dn));
	if (policy_ydoc_node_is_null(map))
		map = NULL;
	else if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, N, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next) && i != LABEL)
			continue;
		old = policy_yval_path_key(v, keys[i]);
		switch (i) {
		case LABEL:
			err = policy_yval_get_str(v, k->next, POLICY_MAX_STRING,
						  &p->data.label);
			dn.label = k->next;
			break;
		case POSITIVE:
			err = policy_yval_get_str(v, k->next, POLICY_MAX_STRING,
						  &p->data.positive);
			node_pos(k->next, &p->src.positive);
			break;
		case ID:
			err = policy_yval_get_str(v, k->next, POLICY_MAX_STRING,
						  &p->data.id);
			dn.id = k->next;
			break;
		case EXCLUDE:
			err = get_names(v, k->next, &p->data.exclude,
					&p->data.nexclude, dn.exclude);
			break;
		case CATEGORICAL:
			err = get_names(v, k->next, &p->data.categorical,
					&p->data.ncategorical, dn.categorical);
			break;
		case STANDARDIZE:
			err = policy_yval_get_bool(v, k->next, &p->data.standardize);
			break;
		case MISSING:
			err = get_tokens(v, k->next, p);
			break;
		case IMPUTE:
			err = get_impute(v, k->next, p);
			*impute_at = k;
			break;
		default:
			err = pins_split(v, k->next, p);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	if ((err = policy_yval_required(v, key, keys, N, seen, BIT(LABEL))) != 0)
		return err;
	if ((err = data_cross_check(v, p, &dn)) != 0)
		return err;
	/* Listing order carries no meaning: one record, one text, one hash. */
	if (p->data.nexclude > 1)
		qsort(p->data.exclude, p->data.nexclude, sizeof(char *), cmp_str);
	if (p->data.ncategorical > 1)
		qsort(p->data.categorical, p->data.ncategorical, sizeof(char *),
		      cmp_str);
	if (p->data.label != NULL)
		node_pos(dn.label, &p->src.label);
	node_pos(dn.id, &p->src.id);
	names_pos(p->data.exclude, p->data.nexclude, dn.exclude,
		  p->src.exclude);
	names_pos(p->data.categorical, p->data.ncategorical, dn.categorical,
		  p->src.categorical);
	return 0;
}

/* ---- model, train, eval, determinism ---------------------------------- */

static int
pins_hidden(struct yval *v, const struct ydoc_node *n, struct pins *p)
{
	const struct ydoc_node *kid;
	uint64_t units;
	size_t i = 0, old;
	int err;

	if ((err = policy_yval_seq(v, n)) != 0)
		return err;
	if (n->nkids > PINS_MAX_LAYERS)
		return policy_yval_fail(v, RBA_E_LIMIT, n,
					"'%s' has more than %d layers", v->path,
					PINS_MAX_LAYERS);
	for (kid = n->kids; kid != NULL; kid = kid->next, i++) {
		old = policy_yval_path_index(v, i);
		err = policy_yval_get_uint(v, kid, 1, PINS_MAX_UNITS, &units);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
		p->model.hidden[i] = (uint32_t)units;
	}
	p->model.nhidden = i;
	return 0;
}

/*
 * The model block.  Keys of the other model kind are refused rather than
 * carried: they would change the config hash without changing the model.
 */
static int
pins_model(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	static const char *const keys[] = {
		"kind", "hidden", "activation", "dropout", "trees", "max_depth",
		"max_leaves", "learning_rate", "min_child_weight", "lambda",
		"gamma", "max_bins", "subsample", "colsample"};
	enum { KIND, HIDDEN, ACT, DROPOUT, TREES, DEPTH, LEAVES, LR, MCW,
	       LAMBDA, GAMMA, BINS, SUBSAMPLE, COLSAMPLE, N };
	static const char *const kinds[] = {"mlp", "gbdt"};
	static const char *const acts[] = {"relu"};
	static const struct yrange unit = {0, 1, 0, 1};
	static const struct yrange rate = {0, 1, 1, 0};
	static const struct yrange nonneg = {0, INFINITY, 0, 0};
	const struct ydoc_node *k, *at[N] = {0};
	uint32_t seen = 0;
	uint64_t x;
	size_t i, old;
	int err, e;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, N, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		at[i] = k;
		old = policy_yval_path_key(v, keys[i]);
		switch (i) {
		case KIND:
			err = policy_yval_get_enum(v, k->next, kinds, 2, &e);
			p->model.kind = e == 1 ? PINS_MODEL_GBDT : PINS_MODEL_MLP;
			break;
		case HIDDEN:
			err = pins_hidden(v, k->next, p);
			break;
		case ACT:
			err = policy_yval_get_enum(v, k->next, acts, 1, &e);
			p->model.activation = PINS_ACT_RELU;
			break;
		case DROPOUT:
			err = policy_yval_get_num(v, k->next, &unit, &p->model.dropout);
			break;
		case TREES:
			err = policy_yval_get_uint(v, k->next, 1, PINS_MAX_TREES, &x);
			p->model.gbdt.trees = (uint32_t)x;
			break;
		case DEPTH:
			err = policy_yval_get_uint(v, k->next, 1, PINS_MAX_DEPTH, &x);
			p->model.gbdt.max_depth = (uint32_t)x;
			break;
		case LEAVES:
			err = policy_yval_get_uint(v, k->next, 0, PINS_MAX_LEAVES, &x);
			if (err == 0 && x == 1)
				err = policy_yval_fail(
					v, RBA_E_RANGE, k->next,
					"'%s' must be 0 (no cap) or an integer "
					"from 2 to %d",
					v->path, PINS_MAX_LEAVES);
			p->model.gbdt.max_leaves = (uint32_t)x;
			break;
		case LR:
			err = policy_yval_get_num(v, k->next, &rate,
						  &p->model.gbdt.learning_rate);
			break;
		case MCW:
			err = policy_yval_get_num(v, k->next, &nonneg,
						  &p->model.gbdt.min_child_weight);
			break;
		case LAMBDA:
			err = policy_yval_get_num(v, k->next, &nonneg,
						  &p->model.gbdt.lambda);
			break;
		case GAMMA:
			err = policy_yval_get_num(v, k->next, &nonneg,
						  &p->model.gbdt.gamma);
			break;
		case BINS:
			err = policy_yval_get_uint(v, k->next, 2, PINS_MAX_BINS, &x);
			p->model.gbdt.max_bins = (uint32_t)x;
			break;
		case SUBSAMPLE:
			err = policy_yval_get_num(v, k->next, &rate,
						  &p->model.gbdt.subsample);
			break;
		default:
			err = policy_yval_get_num(v, k->next, &rate,
						  &p->model.gbdt.colsample);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	for (i = HIDDEN; i < N; i++) {
		int mlp_key = i <= DROPOUT;
		if (at[i] == NULL || mlp_key == (p->model.kind == PINS_MODEL_MLP))
			continue;
		return fail_at_key(v, RBA_E_SCHEMA, at[i], keys[i],
				   mlp_key ? "applies only to model kind mlp"
					   : "applies only to model kind gbdt");
	}
	return 0;
}

static int
pins_betas(struct yval *v, const struct ydoc_node *n, struct pins *p)
{
	static const struct yrange unit = {0, 1, 0, 1};
	const struct ydoc_node *kid;
	size_t i = 0, old;
	int err;

	if (n->type != YDOC_SEQ || n->nkids != 2)
		return policy_yval_fail(v, RBA_E_SCHEMA, n,
					"'%s' must be a list of 2 numbers", v->path);
	for (kid = n->kids; kid != NULL; kid = kid->next, i++) {
		old = policy_yval_path_index(v, i);
		err = policy_yval_get_num(v, kid, &unit, &p->train.betas[i]);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The train block.  *mlp_only gets the first key given that only an MLP
 * uses (all but seed) and *mlp_name its name, for pins_root to refuse
 * with model kind gbdt.
 */
static int
pins_train(struct yval *v, const struct ydoc_node *map, struct pins *p,
	   const struct ydoc_node **mlp_only, const char **mlp_name)
{
	static const char *const keys[] = {"seed", "epochs", "batch_size",
					   "optimizer", "lr", "weight_decay",
					   "betas", "eps", "momentum"};
	enum { SEED, EPOCHS, BATCH, OPTIMIZER, LR, WD, BETAS, EPS, MOMENTUM, N };
	static const char *const opts[] = {"adamw", "sgd"};
	static const struct yrange positive = {0, INFINITY, 1, 0};
	static const struct yrange nonneg = {0, INFINITY, 0, 0};
	static const struct yrange unit = {0, 1, 0, 1};
	const struct ydoc_node *k, *at[N] = {0};
	uint32_t seen = 0;
	uint64_t x;
	size_t i, old;
	int err, e;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, N, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		at[i] = k;
		if (i != SEED && *mlp_only == NULL) {
			*mlp_only = k;
			*mlp_name = keys[i];
		}
		old = policy_yval_path_key(v, keys[i]);
		switch (i) {
		case SEED:
			err = policy_yval_get_uint(v, k->next, 0, UINT64_MAX,
						   &p->train.seed);
			break;
		case EPOCHS:
			err = policy_yval_get_uint(v, k->next, 1, PINS_MAX_EPOCHS, &x);
			p->train.epochs = (uint32_t)x;
			break;
		case BATCH:
			err = policy_yval_get_uint(v, k->next, 1, PINS_MAX_BATCH, &x);
			p->train.batch_size = (uint32_t)x;
			break;
		case OPTIMIZER:
			err = policy_yval_get_enum(v, k->next, opts, 2, &e);
			p->train.optimizer = e == 0 ? PINS_OPT_ADAMW : PINS_OPT_SGD;
			break;
		case LR:
			err = policy_yval_get_num(v, k->next, &positive, &p->train.lr);
			break;
		case WD:
			err = policy_yval_get_num(v, k->next, &nonneg,
						  &p->train.weight_decay);
			break;
		case BETAS:
			err = pins_betas(v, k->next, p);
			break;
		case EPS:
			err = policy_yval_get_num(v, k->next, &positive, &p->train.eps);
			break;
		default:
			err = policy_yval_get_num(v, k->next, &unit,
						  &p->train.momentum);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	/*
	 * A key the chosen optimizer ignores is refused rather than carried:
	 * it would change the config hash without changing the model.
	 */
	if (p->train.optimizer == PINS_OPT_SGD) {
		if (at[BETAS] != NULL)
			return fail_at_key(v, RBA_E_SCHEMA, at[BETAS], "betas",
					   "applies only to optimizer adamw");
		if (at[EPS] != NULL)
			return fail_at_key(v, RBA_E_SCHEMA, at[EPS], "eps",
					   "applies only to optimizer adamw");
		if (at[WD] == NULL)
			p->train.weight_decay = 0;
	} else if (at[MOMENTUM] != NULL) {
		return fail_at_key(v, RBA_E_SCHEMA, at[MOMENTUM], "momentum",
				   "applies only to optimizer sgd");
	}
	return 0;
}

static int
pins_eval(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	static const char *const keys[] = {"subset", "reduction", "dropout",
					   "input_scale"};
	static const char *const subsets[] = {"all", "validation"};
	static const char *const reds[] = {"mean", "sum"};
	static const char *const offs[] = {"off", "on"};
	static const struct yrange positive = {0, INFINITY, 1, 0};
	const struct ydoc_node *k;
	uint32_t seen = 0;
	size_t i, old;
	int err, e;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, 4, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		old = policy_yval_path_key(v, keys[i]);
		switch (i) {
		case 0:
			if (k->next->type == YDOC_SCALAR && k->next->plain &&
			    k->next->len > 0 && k->next->val[0] >= '0' &&
			    k->next->val[0] <= '9') {
				err = policy_yval_get_uint(v, k->next, 1,
							   PINS_MAX_EVAL_ROWS,
							   &p->eval.subset_rows);
				p->eval.subset = PINS_SUBSET_ROWS;
				break;
			}
			err = policy_yval_get_enum(v, k->next, subsets, 2, &e);
			p->eval.subset = e == 0 ? PINS_SUBSET_ALL
						: PINS_SUBSET_VALIDATION;
			p->eval.subset_rows = 0;
			break;
		case 1:
			err = policy_yval_get_enum(v, k->next, reds, 2, &e);
			p->eval.reduction = e == 0 ? PINS_RED_MEAN : PINS_RED_SUM;
			break;
		case 2:
			err = policy_yval_get_enum(v, k->next, offs, 2, &e);
			p->eval.dropout = e == 1;
			break;
		default:
			err = policy_yval_get_num(v, k->next, &positive,
						  &p->eval.input_scale);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

static int
pins_determinism(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	static const char *const keys[] = {"mode", "threads"};
	static const char *const modes[] = {"strict", "fast"};
	const struct ydoc_node *k;
	uint32_t seen = 0;
	uint64_t x;
	size_t i, old;
	int err, e;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, 2, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		old = policy_yval_path_key(v, keys[i]);
		if (i == 0) {
			err = policy_yval_get_enum(v, k->next, modes, 2, &e);
			p->determinism.mode = e == 0 ? PINS_DET_STRICT
						     : PINS_DET_FAST;
		} else {
			err = policy_yval_get_uint(v, k->next, 1, PINS_MAX_THREADS, &x);
			p->determinism.threads = (uint32_t)x;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the whole record ------------------------------------------------ */

static int
pins_root(struct yval *v, const struct ydoc_node *root, struct pins *p)
{
	static const char *const keys[] = {
		"schema", "version", "snapshot", "code_revision",
		"trainer_abi", "environment", "artifact", "data",
		"model", "train", "eval", "determinism"};
	enum { SCHEMA, VERSION, SNAPSHOT, CODE, ABI, ENV, ARTIFACT, DATA,
	       MODEL, TRAIN, EVAL, DET, N };
	const uint32_t required =
		BIT(SCHEMA) | BIT(VERSION) | BIT(SNAPSHOT) | BIT(DATA);
	const struct ydoc_node *map = NULL, *k, *mlp_only = NULL;
	const struct ydoc_node *impute_at = NULL;
	const char *mlp_name = NULL;
	uint32_t seen = 0;
	uint64_t x;
	size_t i, old;
	int err;

	if (root != NULL && !policy_ydoc_node_is_null(root)) {
		if (root->type != YDOC_MAP)
			return policy_yval_fail(v, RBA_E_SCHEMA, root,
						"the document must be a mapping");
		map = root;
	}
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, N, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next) && !(required & BIT(i)))
			continue;
		old = policy_yval_path_key(v, keys[i]);
		switch (i) {
		case SCHEMA:
			err = policy_yval_schema(v, k->next, PINS_SCHEMA);
			break;
		case VERSION:
			err = policy_yval_get_str(v, k->next, PINS_MAX_NAME,
						  &p->version);
			if ((err != 0 && err != RBA_E_NOMEM) ||
			    (err == 0 && !policy_name_valid(p->version)))
				err = policy_yval_fail(
					v, RBA_E_SCHEMA, k->next,
					"'%s' must be a name of 1-%d characters "
					"[A-Za-z0-9._-] not starting with '.' or '-'",
					v->path, PINS_MAX_NAME);
			break;
		case SNAPSHOT:
			err = policy_yval_get_digest(v, k->next, &p->snapshot);
			break;
		case CODE:
			err = policy_yval_get_str(v, k->next, POLICY_MAX_STRING,
						  &p->code_revision);
			node_pos(k->next, &p->src.code_revision);
			break;
		case ABI:
			err = policy_yval_get_uint(v, k->next, 1, UINT32_MAX, &x);
			p->trainer_abi = (uint32_t)x;
			break;
		case ENV:
			err = policy_yval_get_digest(v, k->next, &p->environment);
			p->has_environment = err == 0;
			node_pos(k->next, &p->src.environment);
			break;
		case ARTIFACT:
			err = policy_yval_get_digest(v, k->next, &p->artifact);
			p->has_artifact = err == 0;
			break;
		case DATA:
			err = pins_data(v, k, k->next, p, &impute_at);
			break;
		case MODEL:
			err = pins_model(v, k->next, p);
			break;
		case TRAIN:
			err = pins_train(v, k->next, p, &mlp_only, &mlp_name);
			break;
		case EVAL:
			err = pins_eval(v, k->next, p);
			break;
		default:
			err = pins_determinism(v, k->next, p);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	/* Trees are trained by boosting rounds, not epochs of an optimizer. */
	if (p->model.kind == PINS_MODEL_GBDT && mlp_only != NULL) {
		old = policy_yval_path_key(v, "train");
		err = fail_at_key(v, RBA_E_SCHEMA, mlp_only, mlp_name,
				  "applies only to model kind mlp");
		policy_yval_path_restore(v, old);
		return err;
	}
	if (impute_at != NULL && p->data.missing_declared &&
	    p->data.nmissing == 0) {
		old = policy_yval_path_key(v, "data");
		err = fail_at_key(v, RBA_E_SCHEMA, impute_at, "impute",
				  "has nothing to fill: 'data.missing' is []");
		policy_yval_path_restore(v, old);
		return err;
	}
	/* Trees take a missing value down the side each split learned. */
	if (p->model.kind == PINS_MODEL_GBDT && impute_at != NULL) {
		old = policy_yval_path_key(v, "data");
		err = fail_at_key(v, RBA_E_SCHEMA, impute_at, "impute",
				  "applies only to model kind mlp (trees learn "
				  "where a missing value goes)");
		policy_yval_path_restore(v, old);
		return err;
	}
	return policy_yval_required(v, map, keys, N, seen, required);
}

int
policy_pins_parse(const void *text, size_t n, const char *name,
		  struct pins **out, struct rba_detail *d)
{
	struct rba_detail scratch;
	struct ydoc doc;
	struct yval v;
	struct pins *p;
	int err;

	*out = NULL;
	if (d == NULL)
		d = &scratch;
	rba_detail_clear(d);
	if (name == NULL)
		name = "";
	if ((err = policy_ydoc_parse(&doc, text, n, name, d)) != 0)
		return err;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		policy_ydoc_release(&doc);
		return rba_fail(d, RBA_E_NOMEM, name, 0, 0, "out of memory");
	}
	pins_defaults(p);
	memset(&v, 0, sizeof(v));
	v.name = name;
	v.d = d;
	err = pins_root(&v, doc.root, p);
	if (err == 0 && (p->src.file = strdup(name)) == NULL)
		err = rba_fail(d, RBA_E_NOMEM, name, 0, 0, "out of memory");
	policy_ydoc_release(&doc);
	if (err) {
		policy_pins_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int
policy_pins_load(const char *path, struct pins **out, struct rba_detail *d)
{
	uint8_t *text;
	size_t n;
	int err;

	*out = NULL;
	rba_detail_clear(d);
	if ((err = policy_file_read(path, &text, &n, d)) != 0)
		return err;
	err = policy_pins_parse(text, n, path, out, d);
	free(text);
	return err;
}

void
policy_pins_free(struct pins *p)
{
	if (p == NULL)
		return;
	free(p->version);
	free(p->code_revision);
	free(p->data.label);
	free(p->data.positive);
	free(p->data.id);
	rba_strv_free(p->data.exclude, p->data.nexclude);
	rba_strv_free(p->data.categorical, p->data.ncategorical);
	rba_strv_free(p->data.missing, p->data.nmissing);
	free(p->src.file);
	free(p);
}

static int
dup_str(char **dst, const char *src)
{
	if (src == NULL) {
		*dst = NULL;
		return 0;
	}
	*dst = strdup(src);
	return *dst == NULL ? RBA_E_NOMEM : 0;
}

static int
dup_list(char ***dst, char *const *src, size_t n)
{
	size_t i;

	*dst = NULL;
	if (src == NULL)
		return 0;
	*dst = calloc(n + 1, sizeof(char *));
	if (*dst == NULL)
		return RBA_E_NOMEM;
	for (i = 0; i < n; i++)
		if (dup_str(&(*dst)[i], src[i]) != 0)
			return RBA_E_NOMEM;
	return 0;
}

struct pins *
policy_pins_dup(const struct pins *p)
{
	struct pins *c = malloc(sizeof(*c));
	int err = 0;

	if (c == NULL)
		return NULL;
	*c = *p;
	c->version = c->code_revision = c->data.label = NULL;
	c->data.positive = c->data.id = NULL;
	c->data.exclude = c->data.categorical = c->data.missing = NULL;
	c->src.file = NULL;
	err |= dup_str(&c->version, p->version);
	err |= dup_str(&c->src.file, p->src.file);
	err |= dup_str(&c->code_revision, p->code_revision);
	err |= dup_str(&c->data.label, p->data.label);
	err |= dup_str(&c->data.positive, p->data.positive);
	err |= dup_str(&c->data.id, p->data.id);
	err |= dup_list(&c->data.exclude, p->data.exclude, p->data.nexclude);
	err |= dup_list(&c->data.categorical, p->data.categorical,
			p->data.ncategorical);
	err |= dup_list(&c->data.missing, p->data.missing, p->data.nmissing);
	if (err) {
		policy_pins_free(c);
		return NULL;
	}
	return c;
}

/* ---- canonical text -------------------------------------------------- */

static void
emit_digest(struct ysink *s, const char *key, int has,
	    const struct rba_digest *dg)
{
	char t[RBA_DIGEST_TEXT_LEN + 1];

	policy_ysink_printf(s, "%s: ", key);
	if (has) {
		rba_digest_format(dg, t);
		policy_ysink_text(s, t);
	} else {
		policy_ysink_text(s, "null");
	}
	policy_ysink_text(s, "\n");
}

static void
emit_head(struct ysink *s, const struct pins *p)
{
	policy_ysink_text(s, "schema: " PINS_SCHEMA "\nversion: ");
	policy_ysink_str(s, p->version);
	policy_ysink_text(s, "\n");
	emit_digest(s, "snapshot", 1, &p->snapshot);
	policy_ysink_text(s, "code_revision: ");
	policy_ysink_opt_str(s, p->code_revision);
	policy_ysink_text(s, "\n");
	if (p->trainer_abi > 0)
		policy_ysink_printf(s, "trainer_abi: %" PRIu32 "\n",
				    p->trainer_abi);
	else
		policy_ysink_text(s, "trainer_abi: null\n");
	emit_digest(s, "environment", p->has_environment, &p->environment);
	emit_digest(s, "artifact", p->has_artifact, &p->artifact);
}

static void
emit_data(struct ysink *s, const struct pins *p)
{
	policy_ysink_text(s, "data:\n  label: ");
	policy_ysink_str(s, p->data.label);
	policy_ysink_text(s, "\n  positive: ");
	policy_ysink_opt_str(s, p->data.positive);
	policy_ysink_text(s, "\n  id: ");
	policy_ysink_opt_str(s, p->data.id);
	policy_ysink_text(s, "\n  exclude:");
	policy_ysink_str_list(s, "    ", p->data.exclude, p->data.nexclude);
	policy_ysink_text(s, "  categorical:");
	policy_ysink_str_list(s, "    ", p->data.categorical,
			      p->data.ncategorical);
	/* Written only when not the default, so that every pins record
	 * made before the keys existed keeps its text and config hash. */
	if (p->data.missing_declared &&
	    !(p->data.nmissing == 1 && p->data.missing[0][0] == 0)) {
		policy_ysink_text(s, "  missing:");
		if (p->data.nmissing == 0) {
			policy_ysink_text(s, " []\n");
		} else {
			policy_ysink_text(s, "\n");
			for (size_t i = 0; i < p->data.nmissing; i++) {
				policy_ysink_text(s, "    - ");
				if (p->data.missing[i][0] == 0)
					policy_ysink_text(s, "\"\"");
				else
					policy_ysink_str(s, p->data.missing[i]);
				policy_ysink_text(s, "\n");
			}
		}
	}
	if (p->data.impute == PINS_IMPUTE_MEAN) {
		policy_ysink_text(s, "  impute: mean\n");
	} else if (p->data.impute == PINS_IMPUTE_CONST) {
		policy_ysink_text(s, "  impute: ");
		policy_ysink_num(s, p->data.impute_value);
		policy_ysink_text(s, "\n");
	}
	policy_ysink_printf(s, "  standardize: %s\n  split:\n    validation: ",
			    p->data.standardize ? "true" : "false");
	policy_ysink_num(s, p->data.split_validation);
	policy_ysink_printf(s, "\n    order: %s\n    seed: %" PRIu64 "\n",
			    p->data.split_order == PINS_SPLIT_TAIL ? "tail"
								   : "random",
			    p->data.split_seed);
}

static void
emit_gbdt(struct ysink *s, const struct pins *p)
{
	policy_ysink_printf(s,
			    "model:\n  kind: gbdt\n  trees: %" PRIu32
			    "\n  max_depth: %" PRIu32 "\n  max_leaves: %" PRIu32
			    "\n  learning_rate: ",
			    p->model.gbdt.trees, p->model.gbdt.max_depth,
			    p->model.gbdt.max_leaves);
	policy_ysink_num(s, p->model.gbdt.learning_rate);
	policy_ysink_text(s, "\n  min_child_weight: ");
	policy_ysink_num(s, p->model.gbdt.min_child_weight);
	policy_ysink_text(s, "\n  lambda: ");
	policy_ysink_num(s, p->model.gbdt.lambda);
	policy_ysink_text(s, "\n  gamma: ");
	policy_ysink_num(s, p->model.gbdt.gamma);
	policy_ysink_printf(s, "\n  max_bins: %" PRIu32 "\n  subsample: ",
			    p->model.gbdt.max_bins);
	policy_ysink_num(s, p->model.gbdt.subsample);
	policy_ysink_text(s, "\n  colsample: ");
	policy_ysink_num(s, p->model.gbdt.colsample);
	policy_ysink_text(s, "\n");
}

static void
emit_model(struct ysink *s, const struct pins *p)
{
	size_t i;

	if (p->model.kind == PINS_MODEL_GBDT) {
		emit_gbdt(s, p);
		return;
	}
	policy_ysink_text(s, "model:\n  kind: mlp\n  hidden: [");
	for (i = 0; i < p->model.nhidden; i++)
		policy_ysink_printf(s, "%s%" PRIu32, i > 0 ? ", " : "",
				    p->model.hidden[i]);
	policy_ysink_text(s, "]\n  activation: relu\n  dropout: ");
	policy_ysink_num(s, p->model.dropout);
	policy_ysink_text(s, "\n");
}

static void
emit_train(struct ysink *s, const struct pins *p)
{
	int adamw = p->train.optimizer != PINS_OPT_SGD;

	if (p->model.kind == PINS_MODEL_GBDT) {
		policy_ysink_printf(s, "train:\n  seed: %" PRIu64 "\n",
				    p->train.seed);
		return;
	}
	policy_ysink_printf(s,
			    "train:\n  seed: %" PRIu64 "\n  epochs: %" PRIu32
			    "\n  batch_size: %" PRIu32 "\n  optimizer: %s\n  lr: ",
			    p->train.seed, p->train.epochs, p->train.batch_size,
			    adamw ? "adamw" : "sgd");
	policy_ysink_num(s, p->train.lr);
	policy_ysink_text(s, "\n  weight_decay: ");
	policy_ysink_num(s, p->train.weight_decay);
	if (adamw) {
		policy_ysink_text(s, "\n  betas: [");
		policy_ysink_num(s, p->train.betas[0]);
		policy_ysink_text(s, ", ");
		policy_ysink_num(s, p->train.betas[1]);
		policy_ysink_text(s, "]\n  eps: ");
		policy_ysink_num(s, p->train.eps);
	} else {
		policy_ysink_text(s, "\n  momentum: ");
		policy_ysink_num(s, p->train.momentum);
	}
	policy_ysink_text(s, "\n");
}

static void
emit_eval(struct ysink *s, const struct pins *p)
{
	if (p->eval.subset == PINS_SUBSET_ROWS)
		policy_ysink_printf(s, "eval:\n  subset: %" PRIu64 "\n",
				    p->eval.subset_rows);
	else
		policy_ysink_printf(s, "eval:\n  subset: %s\n",
				    p->eval.subset == PINS_SUBSET_VALIDATION
					    ? "validation"
					    : "all");
	policy_ysink_printf(s, "  reduction: %s\n  dropout: %s\n  input_scale: ",
			    p->eval.reduction == PINS_RED_SUM ? "sum" : "mean",
			    p->eval.dropout ? "on" : "off");
	policy_ysink_num(s, p->eval.input_scale);
	policy_ysink_text(s, "\n");
}

static void
emit_determinism(struct ysink *s, const struct pins *p)
{
	policy_ysink_printf(s, "determinism:\n  mode: %s\n  threads: %" PRIu32 "\n",
			    p->determinism.mode == PINS_DET_FAST ? "fast"
								 : "strict",
			    p->determinism.threads);
}

void
policy_pins_canonical(const struct pins *p, struct rba_buf *out)
{
	struct ysink s = {out, NULL};

	emit_head(&s, p);
	emit_data(&s, p);
	emit_model(&s, p);
	emit_train(&s, p);
	emit_eval(&s, p);
	emit_determinism(&s, p);
}

void
policy_pins_config_hash(const struct pins *p, struct rba_digest *out)
{
	struct rba_hasher h;
	struct ysink s = {NULL, &h};

	rba_hasher_init(&h);
	emit_data(&s, p);
	emit_model(&s, p);
	emit_train(&s, p);
	emit_determinism(&s, p);
	rba_hasher_final(&h, out);
}
