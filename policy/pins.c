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
#include <strings.h>

#include "policy/ydoc.h"
#include "common/json.h"
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
	p->trainer.kind = PINS_TRAINER_BUILTIN;
	p->trainer.seconds = PINS_DEFAULT_SECONDS;
	p->trainer.memory = PINS_DEFAULT_MEMORY;
	p->trainer.output = PINS_DEFAULT_OUTPUT;
	p->trainer.processes = PINS_DEFAULT_PROCESSES;
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
	const struct ydoc_node *native[PINS_MAX_LIST];
	const struct ydoc_node *native_key;
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
	for (i = 0; i < p->data.nnative && err == 0; i++) {
		int found = 0;
		for (j = 0; j < p->data.ncategorical; j++)
			found |= strcmp(p->data.native[i], p->data.categorical[j]) == 0;
		if (found)
			continue;
		old = policy_yval_path_key(v, "native");
		policy_yval_path_index(v, i);
		err = policy_yval_fail(v, RBA_E_SCHEMA, dn->native[i],
				       "'%s' names a column not in "
				       "'data.categorical'", v->path);
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
		if ((err = policy_yval_key(v, k, keys, RBA_NKEYS(keys), &seen, &i)) != 0)
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
	  const struct ydoc_node **impute_at,
	  const struct ydoc_node **native_at)
{
	static const char *const keys[] = {"label", "positive", "id",
					   "exclude", "categorical",
					   "standardize", "split", "missing",
					   "impute", "native"};
	enum { LABEL, POSITIVE, ID, EXCLUDE, CATEGORICAL, STANDARDIZE, SPLIT,
	       MISSING, IMPUTE, NATIVE, N };
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
		case NATIVE:
			err = get_names(v, k->next, &p->data.native,
					&p->data.nnative, dn.native);
			dn.native_key = k;
			*native_at = k;
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
	if (p->data.nnative > 1)
		qsort(p->data.native, p->data.nnative, sizeof(char *), cmp_str);
	names_pos(p->data.native, p->data.nnative, dn.native, p->src.native);
	node_pos(dn.native_key, &p->src.native_key);
	return 0;
}

int
pins_is_native(const struct pins *p, const char *name)
{
	for (size_t i = 0; i < p->data.nnative; i++)
		if (strcmp(p->data.native[i], name) == 0)
			return 1;
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

/* The model block's keys, in the order of enum model_key. */
static const char *const model_keys[] = {
	"kind", "hidden", "activation", "dropout", "trees", "max_depth",
	"max_leaves", "learning_rate", "min_child_weight", "lambda",
	"gamma", "max_bins", "subsample", "colsample"};
enum model_key { MK_KIND, MK_HIDDEN, MK_ACT, MK_DROPOUT, MK_TREES, MK_DEPTH,
		 MK_LEAVES, MK_LR, MK_MCW, MK_LAMBDA, MK_GAMMA, MK_BINS,
		 MK_SUBSAMPLE, MK_COLSAMPLE, MK_N };

/* The value of model key i (its node k, the value k->next) into p. */
static int
model_value(struct yval *v, size_t i, const struct ydoc_node *k,
	    struct pins *p)
{
	static const char *const kinds[] = {"mlp", "gbdt"};
	static const char *const acts[] = {"relu"};
	static const struct yrange unit = {0, 1, 0, 1};
	static const struct yrange rate = {0, 1, 1, 0};
	static const struct yrange nonneg = {0, INFINITY, 0, 0};
	uint64_t x;
	int err, e;

	switch (i) {
	case MK_KIND:
		err = policy_yval_get_enum(v, k->next, kinds, 2, &e);
		p->model.kind = e == 1 ? PINS_MODEL_GBDT : PINS_MODEL_MLP;
		break;
	case MK_HIDDEN:
		err = pins_hidden(v, k->next, p);
		break;
	case MK_ACT:
		err = policy_yval_get_enum(v, k->next, acts, 1, &e);
		p->model.activation = PINS_ACT_RELU;
		break;
	case MK_DROPOUT:
		err = policy_yval_get_num(v, k->next, &unit, &p->model.dropout);
		break;
	case MK_TREES:
		err = policy_yval_get_uint(v, k->next, 1, PINS_MAX_TREES, &x);
		p->model.gbdt.trees = (uint32_t)x;
		break;
	case MK_DEPTH:
		err = policy_yval_get_uint(v, k->next, 1, PINS_MAX_DEPTH, &x);
		p->model.gbdt.max_depth = (uint32_t)x;
		break;
	case MK_LEAVES:
		err = policy_yval_get_uint(v, k->next, 0, PINS_MAX_LEAVES, &x);
		if (err == 0 && x == 1)
			err = policy_yval_fail(
				v, RBA_E_RANGE, k->next,
				"'%s' must be 0 (no cap) or an integer "
				"from 2 to %d",
				v->path, PINS_MAX_LEAVES);
		p->model.gbdt.max_leaves = (uint32_t)x;
		break;
	case MK_LR:
		err = policy_yval_get_num(v, k->next, &rate,
					  &p->model.gbdt.learning_rate);
		break;
	case MK_MCW:
		err = policy_yval_get_num(v, k->next, &nonneg,
					  &p->model.gbdt.min_child_weight);
		break;
	case MK_LAMBDA:
		err = policy_yval_get_num(v, k->next, &nonneg,
					  &p->model.gbdt.lambda);
		break;
	case MK_GAMMA:
		err = policy_yval_get_num(v, k->next, &nonneg,
					  &p->model.gbdt.gamma);
		break;
	case MK_BINS:
		err = policy_yval_get_uint(v, k->next, 2, PINS_MAX_BINS, &x);
		p->model.gbdt.max_bins = (uint32_t)x;
		break;
	case MK_SUBSAMPLE:
		err = policy_yval_get_num(v, k->next, &rate,
					  &p->model.gbdt.subsample);
		break;
	default:
		err = policy_yval_get_num(v, k->next, &rate,
					  &p->model.gbdt.colsample);
		break;
	}
	return err;
}

/*
 * The model block.  Keys of the other model kind are refused rather than
 * carried: they would change the config hash without changing the model.
 */
static int
pins_model(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	const struct ydoc_node *k, *at[MK_N] = {0};
	uint32_t seen = 0;
	size_t i, old;
	int err;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, model_keys, MK_N, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		at[i] = k;
		old = policy_yval_path_key(v, model_keys[i]);
		err = model_value(v, i, k, p);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	for (i = MK_HIDDEN; i < MK_N; i++) {
		int mlp_key = i <= MK_DROPOUT;
		if (at[i] == NULL || mlp_key == (p->model.kind == PINS_MODEL_MLP))
			continue;
		return fail_at_key(v, RBA_E_SCHEMA, at[i], model_keys[i],
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
		if ((err = policy_yval_key(v, k, keys, RBA_NKEYS(keys), &seen, &i)) != 0)
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
		if ((err = policy_yval_key(v, k, keys, RBA_NKEYS(keys), &seen, &i)) != 0)
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


/* ---- trainer ---------------------------------------------------------- */

/* A command: a non-empty list of non-empty strings. */
static int
get_argv(struct yval *v, const struct ydoc_node *n, char ***out, size_t *count)
{
	const struct ydoc_node *kid;
	size_t i = 0, old;
	char **a;
	int err;

	if ((err = policy_yval_seq(v, n)) != 0)
		return err;
	if (n->nkids == 0)
		return policy_yval_fail(v, RBA_E_SCHEMA, n,
					"'%s' must name a program", v->path);
	if (n->nkids > PINS_MAX_ARGV)
		return policy_yval_fail(v, RBA_E_LIMIT, n,
					"'%s' has more than %d entries", v->path,
					PINS_MAX_ARGV);
	a = calloc(n->nkids + 1, sizeof(*a));
	if (a == NULL)
		return policy_yval_fail(v, RBA_E_NOMEM, n, "out of memory");
	rba_strv_free(*out, *count);
	*out = a;
	*count = n->nkids;
	for (kid = n->kids; kid != NULL; kid = kid->next, i++) {
		old = policy_yval_path_index(v, i);
		err = policy_yval_get_str(v, kid, PINS_MAX_ARG, &a[i]);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

static int
cmp_param(const void *a, const void *b)
{
	return strcmp(((const struct pins_param *)a)->key,
		      ((const struct pins_param *)b)->key);
}

/* A plain scalar of [-]digits without a leading zero. */
static int
is_int_text(const struct ydoc_node *n)
{
	size_t i = n->val[0] == '-' ? 1 : 0;

	if (!n->plain || n->len <= i || n->len - i > 18)
		return 0;
	if (n->val[i] == '0' && n->len - i > 1)
		return 0;
	for (; i < n->len; i++)
		if (n->val[i] < '0' || n->val[i] > '9')
			return 0;
	return !(n->val[0] == '-' && n->len == 2 && n->val[1] == '0');
}

/*
 * trainer.params: a mapping of names to scalars.  A plain integer stays
 * an integer, another plain number a number, plain true or false a
 * boolean; anything else (and any quoted scalar) is a string.
 */
static int
pins_params(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	const struct ydoc_node *k;
	struct pins_trainer *t = &p->trainer;
	const struct ydoc_node *at[PINS_MAX_PARAMS];
	size_t i = 0, j, old;
	int err;

	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	if (map->nkids / 2 > PINS_MAX_PARAMS)
		return policy_yval_fail(v, RBA_E_LIMIT, map,
					"'%s' has more than %d entries", v->path,
					PINS_MAX_PARAMS);
	t->params = calloc(map->nkids / 2 + 1, sizeof(*t->params));
	if (t->params == NULL)
		return policy_yval_fail(v, RBA_E_NOMEM, map, "out of memory");
	YDOC_EACH_KEY(k, map)
	{
		struct pins_param *q = &t->params[i];
		const struct ydoc_node *val = k->next;
		if (k->len == 0 || k->len > POLICY_MAX_STRING ||
		    memchr(k->val, 0, k->len) != NULL)
			return policy_yval_fail(v, RBA_E_SCHEMA, k,
						"'%s' has a key that is empty or "
						"longer than %d bytes",
						v->path, POLICY_MAX_STRING);
		for (j = 0; j < i; j++)
			if (strcmp(t->params[j].key, k->val) == 0)
				return policy_yval_fail(v, RBA_E_SCHEMA, k,
							"'%s' repeats key '%s'",
							v->path, k->val);
		if ((q->key = strdup(k->val)) == NULL)
			return policy_yval_fail(v, RBA_E_NOMEM, k, "out of memory");
		t->nparams = ++i;
		at[i - 1] = k;
		old = policy_yval_path_key(v, q->key);
		if (val->type != YDOC_SCALAR || policy_ydoc_node_is_null(val)) {
			err = policy_yval_fail(v, RBA_E_SCHEMA, val,
					       "'%s' must be a number, a boolean "
					       "or a string", v->path);
		} else if (is_int_text(val)) {
			q->type = PINS_PARAM_INT;
			err = policy_yval_get_str(v, val, 32, &q->text);
		} else if (val->plain &&
			   (policy_ydoc_node_is(val, "true") ||
			    policy_ydoc_node_is(val, "false"))) {
			q->type = PINS_PARAM_BOOL;
			q->b = policy_ydoc_node_is(val, "true");
		} else if (val->plain &&
			   policy_scalar_num_parse(val->val, val->len, &q->num) == 0) {
			q->type = PINS_PARAM_NUM;
		} else {
			q->type = PINS_PARAM_STR;
			err = policy_yval_get_str(v, val, PINS_MAX_ARG, &q->text);
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	qsort(t->params, t->nparams, sizeof(*t->params), cmp_param);
	for (i = 0; i < t->nparams; i++)
		for (j = 0; j < t->nparams; j++)
			if (policy_ydoc_node_is(at[j], t->params[i].key))
				node_pos(at[j]->next, &p->src.params[i]);
	return 0;
}

/* 1 for a Debian package name: [a-z0-9][a-z0-9+.-]+. */
static int
deb_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n < 2 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '+' || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

/* 1 for an environment variable name: [A-Za-z_][A-Za-z0-9_]*. */
static int
var_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* The variables the sandbox sets itself (exec/sandbox.h). */
static int
var_reserved(const char *s)
{
	static const char *const fixed[] = {"LANG", "TZ", "PYTHONHASHSEED",
					    "HOME", "PATH"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (strcmp(s, fixed[i]) == 0)
			return 1;
	return 0;
}

static int
pins_variables(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	struct pins_trainer *t = &p->trainer;
	const struct ydoc_node *k;
	size_t i = 0, j, old;
	int err;

	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	if (map->nkids / 2 > PINS_MAX_VARS)
		return policy_yval_fail(v, RBA_E_LIMIT, map,
					"'%s' has more than %d entries", v->path,
					PINS_MAX_VARS);
	t->var_names = calloc(map->nkids / 2 + 1, sizeof(char *));
	t->var_values = calloc(map->nkids / 2 + 1, sizeof(char *));
	if (t->var_names == NULL || t->var_values == NULL)
		return policy_yval_fail(v, RBA_E_NOMEM, map, "out of memory");
	YDOC_EACH_KEY(k, map)
	{
		if (!var_name_ok(k->val) || k->len > POLICY_MAX_STRING)
			return policy_yval_fail(v, RBA_E_SCHEMA, k,
						"'%s' has '%s', which is not a "
						"variable name ([A-Za-z_][A-Za-z0-9_]*)",
						v->path, k->val);
		if (var_reserved(k->val))
			return policy_yval_fail(v, RBA_E_SCHEMA, k,
						"'%s' sets '%s', which the sandbox "
						"sets itself", v->path, k->val);
		for (j = 0; j < i; j++)
			if (strcmp(t->var_names[j], k->val) == 0)
				return policy_yval_fail(v, RBA_E_SCHEMA, k,
							"'%s' repeats '%s'", v->path,
							k->val);
		if ((t->var_names[i] = strdup(k->val)) == NULL)
			return policy_yval_fail(v, RBA_E_NOMEM, k, "out of memory");
		t->nvars = ++i;
		old = policy_yval_path_key(v, k->val);
		if (k->next->type == YDOC_SCALAR && k->next->len == 0 &&
		    !k->next->plain)
			err = (t->var_values[i - 1] = strdup("")) == NULL
				      ? RBA_E_NOMEM : 0;
		else
			err = policy_yval_get_str(v, k->next, PINS_MAX_ARG,
						  &t->var_values[i - 1]);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	/* Sorted by name, the values with them. */
	for (i = 1; i < t->nvars; i++)
		for (j = i; j > 0 && strcmp(t->var_names[j - 1], t->var_names[j]) > 0; j--) {
			char *x = t->var_names[j];
			t->var_names[j] = t->var_names[j - 1];
			t->var_names[j - 1] = x;
			x = t->var_values[j];
			t->var_values[j] = t->var_values[j - 1];
			t->var_values[j - 1] = x;
		}
	return 0;
}

static int
pins_trainer_env(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	static const char *const keys[] = {"packages", "variables", "probe",
					   "pass"};
	const struct ydoc_node *k, *nodes[PINS_MAX_LIST];
	struct pins_trainer *t = &p->trainer;
	uint32_t seen = 0;
	size_t i, j, old;
	int err;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, RBA_NKEYS(keys), &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		old = policy_yval_path_key(v, keys[i]);
		if (i == 3) {
			err = get_names(v, k->next, &t->pass, &t->npass, nodes);
			for (j = 0; err == 0 && j < t->npass; j++) {
				/* each refusal says what is wrong with the name */
				const char *why = NULL;
				size_t m;
				if (!var_name_ok(t->pass[j]))
					why = "which is not a variable name "
					      "([A-Za-z_][A-Za-z0-9_]*)";
				else if (var_reserved(t->pass[j]))
					why = "which the sandbox sets itself";
				for (m = 0; why == NULL && m < t->nvars; m++)
					if (strcmp(t->var_names[m], t->pass[j]) == 0)
						why = "which 'variables' sets: a variable "
						      "is set or passed, not both";
				if (why != NULL) {
					policy_yval_path_index(v, j);
					err = policy_yval_fail(v, RBA_E_SCHEMA, nodes[j],
							       "'%s' is '%.64s', %s",
							       v->path, t->pass[j], why);
				}
			}
			if (err == 0 && t->npass > 1)
				qsort(t->pass, t->npass, sizeof(char *), cmp_str);
		} else if (i == 0) {
			err = get_names(v, k->next, &t->packages, &t->npackages, nodes);
			for (j = 0; err == 0 && j < t->npackages; j++)
				if (!deb_name_ok(t->packages[j])) {
					policy_yval_path_index(v, j);
					err = policy_yval_fail(
						v, RBA_E_SCHEMA, nodes[j],
						"'%s' is not a Debian package name",
						v->path);
				}
			if (err == 0 && t->npackages > 1)
				qsort(t->packages, t->npackages, sizeof(char *),
				      cmp_str);
		} else if (i == 1) {
			err = pins_variables(v, k->next, p);
		} else {
			err = get_argv(v, k->next, &t->probe, &t->nprobe);
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	/* Each variable is one field of the environment record, named in
	 * lower case: no two names may meet there (in either order of the
	 * keys). */
	for (i = 0; i < t->nvars + t->npass; i++)
		for (j = i + 1; j < t->nvars + t->npass; j++) {
			const char *a = i < t->nvars ? t->var_names[i] : t->pass[i - t->nvars];
			const char *b = j < t->nvars ? t->var_names[j] : t->pass[j - t->nvars];
			if (strcasecmp(a, b) == 0)
				return policy_yval_fail(v, RBA_E_SCHEMA, map,
							"'%s' names variable '%s' "
							"twice ('%s', ignoring case, "
							"in variables or pass)",
							v->path, a, b);
		}
	return 0;
}

static int
pins_trainer_limits(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	static const char *const keys[] = {"seconds", "memory", "output",
					   "processes"};
	static const uint64_t lo[] = {1, UINT64_C(1) << 24, 1024, 1};
	static const uint64_t hi[] = {7 * 86400, UINT64_C(1) << 40,
				      UINT64_C(1) << 36, 65536};
	uint64_t *dst[4];
	const struct ydoc_node *k;
	uint32_t seen = 0;
	size_t i, old;
	int err;

	dst[0] = &p->trainer.seconds;
	dst[1] = &p->trainer.memory;
	dst[2] = &p->trainer.output;
	dst[3] = &p->trainer.processes;
	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, RBA_NKEYS(keys), &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		old = policy_yval_path_key(v, keys[i]);
		err = policy_yval_get_uint(v, k->next, lo[i], hi[i], dst[i]);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

static int
pins_trainer_score(struct yval *v, const struct ydoc_node *map, struct pins *p)
{
	static const char *const keys[] = {"command"};
	const struct ydoc_node *k;
	uint32_t seen = 0;
	size_t i, old;
	int err;

	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, RBA_NKEYS(keys), &seen, &i)) != 0)
			return err;
		old = policy_yval_path_key(v, keys[i]);
		err = get_argv(v, k->next, &p->trainer.score, &p->trainer.nscore);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return policy_yval_required(v, map, keys, 1, seen, 1);
}

/* 1 for exactly 40 lowercase hex digits. */
static int
full_commit(const char *s)
{
	size_t i;

	for (i = 0; s[i] != 0; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == 40;
}

/* The artifact file name: one path component, no dot files. */
static int
file_name_ok(const char *s)
{
	return s[0] != '.' && strchr(s, '/') == NULL && strlen(s) <= PINS_MAX_ARTIFACT_NAME;
}

static int
pins_trainer(struct yval *v, const struct ydoc_node *key,
	     const struct ydoc_node *map, struct pins *p)
{
	static const char *const keys[] = {
		"kind", "repository", "revision", "command", "artifact",
		"format", "params", "environment", "limits", "score"};
	enum { KIND, REPO, REV, CMD, ART, FMT, PARAMS, ENVB, LIMITS, SCORE, N };
	static const char *const kinds[] = {"builtin", "exec"};
	static const char *const formats[] = {"xgboost-json", "opaque"};
	struct pins_trainer *t = &p->trainer;
	const struct ydoc_node *k, *at[N] = {0};
	uint32_t seen = 0;
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
		if (policy_ydoc_node_is_null(k->next)) {
			seen &= ~BIT(i);
			continue;
		}
		at[i] = k;
		old = policy_yval_path_key(v, keys[i]);
		switch (i) {
		case KIND:
			err = policy_yval_get_enum(v, k->next, kinds, 2, &e);
			t->kind = e == 1 ? PINS_TRAINER_EXEC : PINS_TRAINER_BUILTIN;
			break;
		case REPO:
			err = policy_yval_get_str(v, k->next, PINS_MAX_ARG,
						  &t->repository);
			node_pos(k->next, &p->src.repository);
			break;
		case REV:
			err = policy_yval_get_str(v, k->next, POLICY_MAX_STRING,
						  &t->revision);
			node_pos(k->next, &p->src.revision);
			if (err == 0 && !full_commit(t->revision))
				err = policy_yval_fail(
					v, RBA_E_SCHEMA, k->next,
					"'%s' must be a full commit id of 40 "
					"lowercase hex digits, not '%s' (a branch "
					"name or a short hash can move: pin what "
					"'git rev-parse %s' prints)",
					v->path, t->revision, t->revision);
			break;
		case CMD:
			err = get_argv(v, k->next, &t->command, &t->ncommand);
			node_pos(k->next, &p->src.command);
			break;
		case ART:
			err = policy_yval_get_str(v, k->next, POLICY_MAX_STRING,
						  &t->artifact);
			if (err == 0 && !file_name_ok(t->artifact))
				err = policy_yval_fail(
					v, RBA_E_SCHEMA, k->next,
					"'%s' must be a file name (no '/', not "
					"starting with '.', at most %d bytes)",
					v->path, PINS_MAX_ARTIFACT_NAME);
			break;
		case FMT:
			err = policy_yval_get_enum(v, k->next, formats, 2, &e);
			t->format = e == 0 ? PINS_FORMAT_XGBOOST_JSON
					   : PINS_FORMAT_OPAQUE;
			break;
		case PARAMS:
			err = pins_params(v, k->next, p);
			break;
		case ENVB:
			err = pins_trainer_env(v, k->next, p);
			break;
		case LIMITS:
			err = pins_trainer_limits(v, k->next, p);
			break;
		default:
			err = pins_trainer_score(v, k->next, p);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	if (t->kind == PINS_TRAINER_BUILTIN) {
		for (i = REPO; i < N; i++)
			if (at[i] != NULL)
				return fail_at_key(v, RBA_E_SCHEMA, at[i], keys[i],
						   "applies only to trainer kind exec");
		return 0;
	}
	return policy_yval_required(v, key, keys, N, seen,
				    BIT(KIND) | BIT(REPO) | BIT(REV) | BIT(CMD) |
					    BIT(ART) | BIT(FMT));
}

int
policy_pins_is_exec(const struct pins *p)
{
	return p->trainer.kind == PINS_TRAINER_EXEC;
}

/* ---- the whole record ------------------------------------------------ */

/* The document's keys, in the order of enum root_key. */
static const char *const root_keys[] = {
	"schema", "version", "snapshot", "code_revision",
	"trainer_abi", "environment", "artifact", "data",
	"model", "train", "eval", "determinism", "trainer"};
enum root_key { RK_SCHEMA, RK_VERSION, RK_SNAPSHOT, RK_CODE, RK_ABI, RK_ENV,
		RK_ARTIFACT, RK_DATA, RK_MODEL, RK_TRAIN, RK_EVAL, RK_DET,
		RK_TRAINER, RK_N };

/* Where the document names what the checks across sections refuse. */
struct root_at {
	const struct ydoc_node *model_key, *abi_key, *mlp_only;
	const struct ydoc_node *impute_at, *native_at;
	const char *mlp_name;
};

/* The value of document key i (its node k, the value k->next) into p;
 * at gets where the cross checks look. */
static int
root_value(struct yval *v, size_t i, const struct ydoc_node *k,
	   struct pins *p, struct root_at *at)
{
	uint64_t x;
	int err;

	switch (i) {
	case RK_SCHEMA:
		err = policy_yval_schema(v, k->next, PINS_SCHEMA);
		break;
	case RK_VERSION:
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
	case RK_SNAPSHOT:
		err = policy_yval_get_digest(v, k->next, &p->snapshot);
		break;
	case RK_CODE:
		err = policy_yval_get_str(v, k->next, POLICY_MAX_STRING,
					  &p->code_revision);
		node_pos(k->next, &p->src.code_revision);
		break;
	case RK_ABI:
		err = policy_yval_get_uint(v, k->next, 1, UINT32_MAX, &x);
		p->trainer_abi = (uint32_t)x;
		at->abi_key = k;
		break;
	case RK_ENV:
		err = policy_yval_get_digest(v, k->next, &p->environment);
		p->has_environment = err == 0;
		node_pos(k->next, &p->src.environment);
		break;
	case RK_ARTIFACT:
		err = policy_yval_get_digest(v, k->next, &p->artifact);
		p->has_artifact = err == 0;
		break;
	case RK_DATA:
		err = pins_data(v, k, k->next, p, &at->impute_at,
				&at->native_at);
		break;
	case RK_MODEL:
		err = pins_model(v, k->next, p);
		at->model_key = k;
		break;
	case RK_TRAINER:
		err = pins_trainer(v, k, k->next, p);
		break;
	case RK_TRAIN:
		err = pins_train(v, k->next, p, &at->mlp_only, &at->mlp_name);
		break;
	case RK_EVAL:
		err = pins_eval(v, k->next, p);
		break;
	default:
		err = pins_determinism(v, k->next, p);
		break;
	}
	return err;
}

/*
 * An exec trainer's pins: the user's code has its own model and
 * hyperparameters (trainer.params); this tool's would change the config
 * hash without changing the model.  code_revision, if given, is the
 * pinned commit.
 */
static int
root_exec_check(struct yval *v, const struct pins *p, const struct root_at *at)
{
	size_t old;
	int err;

	if (at->model_key != NULL)
		return fail_at_key(v, RBA_E_SCHEMA, at->model_key, "model",
				   "applies only to trainer kind builtin "
				   "(an exec trainer takes trainer.params)");
	if (at->abi_key != NULL)
		return fail_at_key(v, RBA_E_SCHEMA, at->abi_key, "trainer_abi",
				   "applies only to trainer kind builtin");
	if (at->mlp_only != NULL) {
		old = policy_yval_path_key(v, "train");
		err = fail_at_key(v, RBA_E_SCHEMA, at->mlp_only, at->mlp_name,
				  "applies only to trainer kind builtin "
				  "(an exec trainer takes trainer.params)");
		policy_yval_path_restore(v, old);
		return err;
	}
	if (p->code_revision != NULL &&
	    strcmp(p->code_revision, p->trainer.revision) != 0)
		return rba_detail_key(v->d, "code_revision"),
		       rba_fail(v->d, RBA_E_SCHEMA, v->name,
				p->src.code_revision.line,
				p->src.code_revision.col,
				"'code_revision' must be the commit "
				"'trainer.revision' pins (%s)",
				p->trainer.revision);
	return 0;
}

/* What the model kind allows of train and data: an optimizer's keys,
 * an imputation and native columns. */
static int
root_kind_check(struct yval *v, const struct pins *p, const struct root_at *at)
{
	size_t old;
	int err;

	/* Trees are trained by boosting rounds, not epochs of an optimizer. */
	if (p->model.kind == PINS_MODEL_GBDT && at->mlp_only != NULL) {
		old = policy_yval_path_key(v, "train");
		err = fail_at_key(v, RBA_E_SCHEMA, at->mlp_only, at->mlp_name,
				  "applies only to model kind mlp");
		policy_yval_path_restore(v, old);
		return err;
	}
	if (at->impute_at != NULL && p->data.missing_declared &&
	    p->data.nmissing == 0) {
		old = policy_yval_path_key(v, "data");
		err = fail_at_key(v, RBA_E_SCHEMA, at->impute_at, "impute",
				  "has nothing to fill: 'data.missing' is []");
		policy_yval_path_restore(v, old);
		return err;
	}
	/* Level sets are splits of trees. */
	if (at->native_at != NULL && p->data.nnative > 0 &&
	    (p->model.kind != PINS_MODEL_GBDT ||
	     p->trainer.kind == PINS_TRAINER_EXEC)) {
		old = policy_yval_path_key(v, "data");
		err = fail_at_key(v, RBA_E_SCHEMA, at->native_at, "native",
				  p->model.kind != PINS_MODEL_GBDT
					  ? "applies only to model kind gbdt (a "
					    "network takes a categorical column "
					    "one-hot)"
					  : "applies only to this tool's own "
					    "trees, not to trainer kind exec");
		policy_yval_path_restore(v, old);
		return err;
	}
	/* Trees take a missing value down the side each split learned. */
	if (p->model.kind == PINS_MODEL_GBDT && at->impute_at != NULL) {
		old = policy_yval_path_key(v, "data");
		err = fail_at_key(v, RBA_E_SCHEMA, at->impute_at, "impute",
				  "applies only to model kind mlp (trees learn "
				  "where a missing value goes)");
		policy_yval_path_restore(v, old);
		return err;
	}
	return 0;
}

static int
pins_root(struct yval *v, const struct ydoc_node *root, struct pins *p)
{
	const uint32_t required = BIT(RK_SCHEMA) | BIT(RK_VERSION) |
				  BIT(RK_SNAPSHOT) | BIT(RK_DATA);
	const struct ydoc_node *map = NULL, *k;
	struct root_at at;
	uint32_t seen = 0;
	size_t i, old;
	int err;

	memset(&at, 0, sizeof(at));
	if (root != NULL && !policy_ydoc_node_is_null(root)) {
		if (root->type != YDOC_MAP)
			return policy_yval_fail(v, RBA_E_SCHEMA, root,
						"the document must be a mapping");
		map = root;
	}
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, root_keys, RK_N, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next) && !(required & BIT(i)))
			continue;
		old = policy_yval_path_key(v, root_keys[i]);
		err = root_value(v, i, k, p, &at);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	if (policy_pins_is_exec(p) && (err = root_exec_check(v, p, &at)) != 0)
		return err;
	if ((err = root_kind_check(v, p, &at)) != 0)
		return err;
	return policy_yval_required(v, map, root_keys, RK_N, seen, required);
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

static void
trainer_free(struct pins_trainer *t)
{
	size_t i;

	free(t->repository);
	free(t->revision);
	free(t->artifact);
	rba_strv_free(t->command, t->ncommand);
	rba_strv_free(t->packages, t->npackages);
	rba_strv_free(t->var_names, t->nvars);
	rba_strv_free(t->var_values, t->nvars);
	rba_strv_free(t->probe, t->nprobe);
	rba_strv_free(t->pass, t->npass);
	rba_strv_free(t->score, t->nscore);
	for (i = 0; t->params != NULL && i < t->nparams; i++) {
		free(t->params[i].key);
		free(t->params[i].text);
	}
	free(t->params);
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
	rba_strv_free(p->data.native, p->data.nnative);
	rba_strv_free(p->data.missing, p->data.nmissing);
	free(p->src.file);
	trainer_free(&p->trainer);
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

static int
trainer_dup(struct pins_trainer *c, const struct pins_trainer *t)
{
	int err = 0;
	size_t i;

	*c = *t;
	c->repository = c->revision = c->artifact = NULL;
	c->command = c->packages = c->var_names = c->var_values = NULL;
	c->probe = c->score = c->pass = NULL;
	err |= dup_list(&c->pass, t->pass, t->npass);
	c->params = NULL;
	err |= dup_str(&c->repository, t->repository);
	err |= dup_str(&c->revision, t->revision);
	err |= dup_str(&c->artifact, t->artifact);
	err |= dup_list(&c->command, t->command, t->ncommand);
	err |= dup_list(&c->packages, t->packages, t->npackages);
	err |= dup_list(&c->var_names, t->var_names, t->nvars);
	err |= dup_list(&c->var_values, t->var_values, t->nvars);
	err |= dup_list(&c->probe, t->probe, t->nprobe);
	err |= dup_list(&c->score, t->score, t->nscore);
	if (t->params != NULL) {
		c->params = calloc(t->nparams + 1, sizeof(*c->params));
		if (c->params == NULL)
			return RBA_E_NOMEM;
		for (i = 0; i < t->nparams; i++) {
			c->params[i] = t->params[i];
			c->params[i].key = c->params[i].text = NULL;
			err |= dup_str(&c->params[i].key, t->params[i].key);
			err |= dup_str(&c->params[i].text, t->params[i].text);
		}
	}
	return err ? RBA_E_NOMEM : 0;
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
	c->data.native = NULL;
	c->src.file = NULL;
	memset(&c->trainer, 0, sizeof(c->trainer));
	err |= dup_str(&c->version, p->version);
	err |= dup_str(&c->src.file, p->src.file);
	err |= dup_str(&c->code_revision, p->code_revision);
	err |= dup_str(&c->data.label, p->data.label);
	err |= dup_str(&c->data.positive, p->data.positive);
	err |= dup_str(&c->data.id, p->data.id);
	err |= dup_list(&c->data.exclude, p->data.exclude, p->data.nexclude);
	err |= dup_list(&c->data.categorical, p->data.categorical,
			p->data.ncategorical);
	err |= dup_list(&c->data.native, p->data.native, p->data.nnative);
	err |= trainer_dup(&c->trainer, &p->trainer);
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
	/* Written only when given: every record made before the key existed
	 * keeps its text and config hash. */
	if (p->data.nnative > 0) {
		policy_ysink_text(s, "  native:");
		policy_ysink_str_list(s, "    ", p->data.native, p->data.nnative);
	}
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

	if (p->trainer.kind == PINS_TRAINER_EXEC)
		return; /* the user's code has its own (trainer.params) */
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

	if (p->model.kind == PINS_MODEL_GBDT ||
	    p->trainer.kind == PINS_TRAINER_EXEC) {
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

static void
emit_argv(struct ysink *s, const char *key, const char *indent,
	  char *const *v, size_t n)
{
	size_t i;

	policy_ysink_printf(s, "%s%s: [", indent, key);
	for (i = 0; i < n; i++) {
		if (i > 0)
			policy_ysink_text(s, ", ");
		policy_ysink_str(s, v[i]);
	}
	policy_ysink_text(s, "]\n");
}

/*
 * The trainer block, written only for an exec trainer, so that every
 * builtin record keeps its text and its hashes.
 */
static void
emit_trainer(struct ysink *s, const struct pins *p)
{
	const struct pins_trainer *t = &p->trainer;
	size_t i;

	if (t->kind != PINS_TRAINER_EXEC)
		return;
	policy_ysink_text(s, "trainer:\n  kind: exec\n  repository: ");
	policy_ysink_str(s, t->repository);
	policy_ysink_text(s, "\n  revision: ");
	policy_ysink_text(s, t->revision);
	policy_ysink_text(s, "\n");
	emit_argv(s, "command", "  ", t->command, t->ncommand);
	policy_ysink_text(s, "  artifact: ");
	policy_ysink_str(s, t->artifact);
	policy_ysink_printf(s, "\n  format: %s\n  params:",
			    t->format == PINS_FORMAT_XGBOOST_JSON ? "xgboost-json"
								  : "opaque");
	policy_ysink_text(s, t->nparams == 0 ? " {}\n" : "\n");
	for (i = 0; i < t->nparams; i++) {
		const struct pins_param *q = &t->params[i];
		policy_ysink_text(s, "    ");
		policy_ysink_str(s, q->key);
		policy_ysink_text(s, ": ");
		switch (q->type) {
		case PINS_PARAM_INT:
			policy_ysink_text(s, q->text);
			break;
		case PINS_PARAM_NUM:
			policy_ysink_num(s, q->num);
			break;
		case PINS_PARAM_BOOL:
			policy_ysink_text(s, q->b ? "true" : "false");
			break;
		default:
			policy_ysink_str(s, q->text);
			break;
		}
		policy_ysink_text(s, "\n");
	}
	policy_ysink_text(s, "  environment:\n    packages:");
	policy_ysink_str_list(s, "      ", t->packages, t->npackages);
	policy_ysink_text(s, t->nvars == 0 ? "    variables: {}\n"
					   : "    variables:\n");
	for (i = 0; i < t->nvars; i++) {
		policy_ysink_printf(s, "      %s: ", t->var_names[i]);
		policy_ysink_str(s, t->var_values[i]);
		policy_ysink_text(s, "\n");
	}
	policy_ysink_text(s, "    pass:");
	policy_ysink_str_list(s, "      ", t->pass, t->npass);
	if (t->probe != NULL)
		emit_argv(s, "probe", "    ", t->probe, t->nprobe);
	else
		policy_ysink_text(s, "    probe: null\n");
	policy_ysink_printf(s,
			    "  limits:\n    seconds: %" PRIu64 "\n    memory: %" PRIu64
			    "\n    output: %" PRIu64 "\n",
			    t->seconds, t->memory, t->output);
	/* written only when not the default: the texts and config hashes
	 * of pins from before the key are unchanged */
	if (t->processes != PINS_DEFAULT_PROCESSES)
		policy_ysink_printf(s, "    processes: %" PRIu64 "\n", t->processes);
	if (t->score != NULL) {
		policy_ysink_text(s, "  score:\n");
		emit_argv(s, "command", "    ", t->score, t->nscore);
	} else {
		policy_ysink_text(s, "  score: null\n");
	}
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
	emit_trainer(&s, p);
}

void
policy_pins_params_json(const struct pins *p, struct rba_buf *out)
{
	const struct pins_trainer *t = &p->trainer;
	size_t i;

	rba_buf_put_u8(out, '{');
	for (i = 0; i < t->nparams; i++) {
		const struct pins_param *q = &t->params[i];
		if (i > 0)
			rba_buf_put_u8(out, ',');
		rba_json_put_str(out, q->key);
		rba_buf_put_u8(out, ':');
		switch (q->type) {
		case PINS_PARAM_INT:
			rba_buf_put(out, q->text, strlen(q->text));
			break;
		case PINS_PARAM_NUM:
			rba_json_put_num(out, q->num);
			break;
		case PINS_PARAM_BOOL:
			rba_buf_put(out, q->b ? "true" : "false", q->b ? 4 : 5);
			break;
		default:
			rba_json_put_str(out, q->text);
			break;
		}
	}
	rba_buf_put(out, "}\n", 2);
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
	emit_trainer(&s, p);
	rba_hasher_final(&h, out);
}
