/*
 * pins.c - the pins file (doc/design.md section 5.1): schema, canonical
 * form, config hash.
 */
#include "policy/policy.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
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

/* ---- lists ----------------------------------------------------------- */

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

/* ---- the walker ------------------------------------------------------ */

/*
 * Every section of the file is a table of its keys (struct pkey), and
 * one function, walk_section, walks any section by its table: each key
 * resolved against the table (an unknown or repeated key refused), its
 * value read by its kind into its place in struct pins, then the keys
 * that do not apply to what the section chose refused, the section's
 * own check, its required keys, and its own rules after them.  What is
 * not a table (a list's entries, trainer.params, the cross checks) is
 * a named hook the tables point at.
 */

/* Key nodes the checks across sections look at, by role. */
enum mark { M_NONE = 0, M_LABEL, M_ID, M_NATIVE, M_IMPUTE, M_MODEL, M_ABI,
	    M_MLP_ONLY, M_N };

/* One walk of a document into a record. */
struct walk {
	struct yval *v;
	struct pins *p;
	/* the first key node given (not null) of each role; value ->next */
	const struct ydoc_node *mark[M_N];
	const char *mark_name[M_N];
	/* the entries of the column lists, in listing order */
	const struct ydoc_node *exclude[PINS_MAX_LIST];
	const struct ydoc_node *categorical[PINS_MAX_LIST];
	const struct ydoc_node *native[PINS_MAX_LIST];
};

enum pkind {
	PK_NUM = 1, /* a number in range, a double */
	PK_UINT,    /* an integer in lo..hi, a uint32_t or uint64_t */
	PK_BOOL,    /* true or false, an int */
	PK_ENUM,    /* one of words, stored as the int of values */
	PK_STR,	    /* a string of at most max bytes, a char * */
	PK_DIGEST,  /* a struct rba_digest; the int at has (if any) set */
	PK_ARGV,    /* a command, a char ** with its size_t at count */
	PK_SECTION, /* a mapping walked by its own table */
	PK_HOOK	    /* read by a function of its own */
};

#define PK_REQUIRED 1u /* refused when missing; a null value is read */
#define PK_EXEC 2u     /* required when the trainer is exec */

/* A key that applies only while the int (an enum) at off is value. */
struct pwhen {
	size_t off;
	int value;
	const char *why; /* "applies only to ..." */
};

struct psection;
struct sect;

struct pkey {
	const char *name;
	enum pkind kind;
	size_t off;		  /* the value's place in struct pins */
	unsigned flags;		  /* PK_REQUIRED, PK_EXEC */
	enum mark mark;		  /* kept for the cross checks */
	size_t pos;		  /* offset of a struct pins_pos; 0: none */
	const struct pwhen *only; /* refused (after the walk) unless it holds */
	const struct yrange *range;		  /* PK_NUM */
	uint64_t lo, hi;			  /* PK_UINT */
	size_t width;				  /* PK_UINT: 4 or 8 bytes */
	const char *const *words;		  /* PK_ENUM */
	const int *values;			  /* PK_ENUM */
	size_t nwords;				  /* PK_ENUM */
	size_t max;				  /* PK_STR: bytes */
	size_t count, has;			  /* PK_ARGV, PK_DIGEST */
	const struct psection *section;		  /* PK_SECTION */
	int (*read)(struct walk *, const struct ydoc_node *); /* PK_HOOK */
	/* a rule on the value, once read */
	int (*check)(struct walk *, const struct ydoc_node *);
};

#define PS_NULL_EMPTY 1u   /* a null section is walked as an empty one */
#define PS_NULL_FORGETS 2u /* a null value is as if the key were absent */
#define PS_REQ_AT_KEY 4u   /* a missing key is reported at the section's key */

struct psection {
	const struct pkey *keys;
	size_t nkeys;
	unsigned flags;
	/* before the required keys are looked for, and after */
	int (*check)(struct walk *, const struct sect *);
	int (*post)(struct walk *, const struct sect *);
};

/* A section as walked. */
struct sect {
	const struct psection *s;
	const struct ydoc_node *key, *map; /* map NULL: none or null */
	uint32_t given;			   /* keys read */
	const struct ydoc_node *at[32];	   /* their key nodes */
};

#define AT(f) offsetof(struct pins, f)
#define KEY(n, k) .name = (n), .kind = (k)
#define SECTION(t) .keys = (t), .nkeys = RBA_NKEYS(t)
#define W(f) sizeof(((struct pins *)0)->f)

_Static_assert(sizeof(enum pins_split_order) == sizeof(int) &&
		       sizeof(enum pins_model_kind) == sizeof(int) &&
		       sizeof(enum pins_activation) == sizeof(int) &&
		       sizeof(enum pins_optimizer) == sizeof(int) &&
		       sizeof(enum pins_reduction) == sizeof(int) &&
		       sizeof(enum pins_det_mode) == sizeof(int) &&
		       sizeof(enum pins_trainer_kind) == sizeof(int) &&
		       sizeof(enum pins_format) == sizeof(int),
	       "PK_ENUM stores an int");

static void *
field(struct walk *w, size_t off)
{
	return (char *)w->p + off;
}

static int
field_int(const struct pins *p, size_t off)
{
	int x;

	memcpy(&x, (const char *)p + off, sizeof(x));
	return x;
}

/* The value node of mark m, or NULL. */
static const struct ydoc_node *
mark_value(const struct walk *w, enum mark m)
{
	return w->mark[m] != NULL ? w->mark[m]->next : NULL;
}

/* The key node of key name in a walked section, or NULL. */
static const struct ydoc_node *
sect_at(const struct sect *st, const char *name)
{
	for (size_t i = 0; i < st->s->nkeys; i++)
		if (strcmp(st->s->keys[i].name, name) == 0)
			return st->at[i];
	return NULL;
}

static int walk_section(struct walk *w, const struct psection *s,
			const struct ydoc_node *key,
			const struct ydoc_node *map);

/* The value after key node k, by the kind of its key e. */
static int
walk_value(struct walk *w, const struct pkey *e, const struct ydoc_node *k)
{
	const struct ydoc_node *val = k->next;
	void *dst = field(w, e->off);
	uint64_t x;
	uint32_t x32;
	int err, i, has;

	switch (e->kind) {
	case PK_NUM:
		err = policy_yval_get_num(w->v, val, e->range, dst);
		break;
	case PK_UINT:
		err = policy_yval_get_uint(w->v, val, e->lo, e->hi, &x);
		x32 = (uint32_t)x;
		assert(e->width == sizeof(x) || e->width == sizeof(x32));
		if (err == 0)
			memcpy(dst, e->width == sizeof(x) ? (void *)&x : &x32,
			       e->width);
		break;
	case PK_BOOL:
		err = policy_yval_get_bool(w->v, val, dst);
		break;
	case PK_ENUM:
		err = policy_yval_get_enum(w->v, val, e->words, e->nwords, &i);
		if (err == 0)
			memcpy(dst, &e->values[i], sizeof(int));
		break;
	case PK_STR:
		err = policy_yval_get_str(w->v, val, e->max, dst);
		break;
	case PK_DIGEST:
		err = policy_yval_get_digest(w->v, val, dst);
		has = err == 0;
		if (e->has != 0)
			memcpy(field(w, e->has), &has, sizeof(has));
		break;
	case PK_ARGV:
		err = get_argv(w->v, val, dst, field(w, e->count));
		break;
	case PK_SECTION:
		err = walk_section(w, e->section, k, val);
		break;
	default:
		err = e->read(w, val);
		break;
	}
	if (e->pos != 0)
		node_pos(val, field(w, e->pos));
	if (err == 0 && e->check != NULL)
		err = e->check(w, val);
	return err;
}

/* "missing required key" for the first key of mask st has not read. */
static int
walk_required(struct walk *w, const struct sect *st, uint32_t mask)
{
	const struct psection *s = st->s;
	size_t i, old;

	for (i = 0; i < s->nkeys; i++) {
		if (!(mask & BIT(i)) || (st->given & BIT(i)))
			continue;
		old = policy_yval_path_key(w->v, s->keys[i].name);
		policy_yval_fail(w->v, RBA_E_SCHEMA,
				 s->flags & PS_REQ_AT_KEY ? st->key : st->map,
				 "missing required key '%s'", w->v->path);
		policy_yval_path_restore(w->v, old);
		return RBA_E_SCHEMA;
	}
	return 0;
}

/* The rules of a section once its keys are read. */
static int
walk_finish(struct walk *w, const struct sect *st)
{
	const struct psection *s = st->s;
	uint32_t required = 0;
	size_t i;
	int err;

	/* A key of what the section did not choose is refused rather than
	 * carried: it would change the config hash and not the model. */
	for (i = 0; i < s->nkeys; i++) {
		const struct pwhen *c = s->keys[i].only;
		if (st->at[i] == NULL || c == NULL ||
		    field_int(w->p, c->off) == c->value)
			continue;
		return fail_at_key(w->v, RBA_E_SCHEMA, st->at[i],
				   s->keys[i].name, c->why);
	}
	if (s->check != NULL && (err = s->check(w, st)) != 0)
		return err;
	for (i = 0; i < s->nkeys; i++)
		if (s->keys[i].flags & PK_REQUIRED)
			required |= BIT(i);
	if ((err = walk_required(w, st, required)) != 0)
		return err;
	return s->post != NULL ? s->post(w, st) : 0;
}

/*
 * Walks section s, the value map of key node key (both may be NULL: the
 * document, or a section absent or null).
 */
static int
walk_section(struct walk *w, const struct psection *s,
	     const struct ydoc_node *key, const struct ydoc_node *map)
{
	const char *names[32];
	const struct ydoc_node *k;
	struct sect st;
	uint32_t seen = 0;
	size_t i, old;
	int err;

	assert(s->nkeys <= 32);
	memset(&st, 0, sizeof(st));
	if (map != NULL && policy_ydoc_node_is_null(map)) {
		if (!(s->flags & PS_NULL_EMPTY))
			return 0;
		map = NULL;
	} else if (map != NULL && (err = policy_yval_map(w->v, map)) != 0) {
		return err;
	}
	st.s = s;
	st.key = key;
	st.map = map;
	for (i = 0; i < s->nkeys; i++)
		names[i] = s->keys[i].name;
	YDOC_EACH_KEY(k, map)
	{
		const struct pkey *e;
		if ((err = policy_yval_key(w->v, k, names, s->nkeys, &seen,
					   &i)) != 0)
			return err;
		e = &s->keys[i];
		if (policy_ydoc_node_is_null(k->next) &&
		    !(e->flags & PK_REQUIRED)) {
			if (s->flags & PS_NULL_FORGETS)
				seen &= ~BIT(i);
			continue;
		}
		st.given |= BIT(i);
		st.at[i] = k;
		if (e->mark != M_NONE && w->mark[e->mark] == NULL) {
			w->mark[e->mark] = k;
			w->mark_name[e->mark] = e->name;
		}
		old = policy_yval_path_key(w->v, e->name);
		err = walk_value(w, e, k);
		policy_yval_path_restore(w->v, old);
		if (err)
			return err;
	}
	return walk_finish(w, &st);
}

/* ---- data ------------------------------------------------------------ */

static int
read_exclude(struct walk *w, const struct ydoc_node *n)
{
	return get_names(w->v, n, &w->p->data.exclude, &w->p->data.nexclude,
			 w->exclude);
}

static int
read_categorical(struct walk *w, const struct ydoc_node *n)
{
	return get_names(w->v, n, &w->p->data.categorical,
			 &w->p->data.ncategorical, w->categorical);
}

static int
read_native(struct walk *w, const struct ydoc_node *n)
{
	return get_names(w->v, n, &w->p->data.native, &w->p->data.nnative,
			 w->native);
}

/*
 * data.missing: a list of field texts (the empty one written ""), each
 * at most PINS_MAX_TOKEN bytes, none twice (refused at the repeat).
 */
static int
read_missing(struct walk *w, const struct ydoc_node *n)
{
	struct yval *v = w->v;
	struct pins *p = w->p;
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
read_impute(struct walk *w, const struct ydoc_node *n)
{
	static const struct yrange any = {-3.4e38, 3.4e38, 0, 0};
	struct pins *p = w->p;

	node_pos(n, &p->src.impute);
	if (policy_ydoc_node_is(n, "mean")) {
		p->data.impute = PINS_IMPUTE_MEAN;
		return 0;
	}
	if (n->type != YDOC_SCALAR || policy_ydoc_node_is_null(n) ||
	    !(n->val[0] == '-' || n->val[0] == '+' || n->val[0] == '.' ||
	      (n->val[0] >= '0' && n->val[0] <= '9')))
		return policy_yval_fail(w->v, RBA_E_SCHEMA, n,
					"'%s' must be mean or a number",
					w->v->path);
	p->data.impute = PINS_IMPUTE_CONST;
	return policy_yval_get_num(w->v, n, &any, &p->data.impute_value);
}

/* Label, id, excluded and categorical columns are four disjoint sets. */
static int
data_cross_check(struct walk *w)
{
	struct yval *v = w->v;
	struct pins *p = w->p;
	size_t i, j, old;
	int err = 0;

	if (p->data.id != NULL && strcmp(p->data.id, p->data.label) == 0)
		return fail_at_key(v, RBA_E_SCHEMA, mark_value(w, M_ID), "id",
				   "must differ from 'data.label'");
	for (i = 0; i < p->data.nexclude && err == 0; i++) {
		old = policy_yval_path_key(v, "exclude");
		policy_yval_path_index(v, i);
		if (strcmp(p->data.exclude[i], p->data.label) == 0)
			err = policy_yval_fail(v, RBA_E_SCHEMA, w->exclude[i],
					       "'%s' names the label column",
					       v->path);
		else if (p->data.id != NULL &&
			 strcmp(p->data.exclude[i], p->data.id) == 0)
			err = policy_yval_fail(
				v, RBA_E_SCHEMA, w->exclude[i],
				"'%s' names the id column, which is never a feature",
				v->path);
		policy_yval_path_restore(v, old);
	}
	for (i = 0; i < p->data.ncategorical && err == 0; i++) {
		old = policy_yval_path_key(v, "categorical");
		policy_yval_path_index(v, i);
		if (strcmp(p->data.categorical[i], p->data.label) == 0)
			err = policy_yval_fail(v, RBA_E_SCHEMA, w->categorical[i],
					       "'%s' names the label column",
					       v->path);
		else if (p->data.id != NULL &&
			 strcmp(p->data.categorical[i], p->data.id) == 0)
			err = policy_yval_fail(v, RBA_E_SCHEMA, w->categorical[i],
					       "'%s' names the id column", v->path);
		for (j = 0; err == 0 && j < p->data.nexclude; j++)
			if (strcmp(p->data.categorical[i], p->data.exclude[j]) == 0)
				err = policy_yval_fail(
					v, RBA_E_SCHEMA, w->categorical[i],
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
		err = policy_yval_fail(v, RBA_E_SCHEMA, w->native[i],
				       "'%s' names a column not in "
				       "'data.categorical'", v->path);
		policy_yval_path_restore(v, old);
	}
	return err;
}

/* After the data block's keys: the cross check, then one order. */
static int
data_post(struct walk *w, const struct sect *st)
{
	struct pins *p = w->p;
	int err;

	if ((err = data_cross_check(w)) != 0)
		return err;
	/* Listing order carries no meaning: one record, one text, one hash. */
	if (p->data.nexclude > 1)
		qsort(p->data.exclude, p->data.nexclude, sizeof(char *), cmp_str);
	if (p->data.ncategorical > 1)
		qsort(p->data.categorical, p->data.ncategorical, sizeof(char *),
		      cmp_str);
	if (p->data.label != NULL)
		node_pos(mark_value(w, M_LABEL), &p->src.label);
	node_pos(mark_value(w, M_ID), &p->src.id);
	names_pos(p->data.exclude, p->data.nexclude, w->exclude,
		  p->src.exclude);
	names_pos(p->data.categorical, p->data.ncategorical, w->categorical,
		  p->src.categorical);
	if (p->data.nnative > 1)
		qsort(p->data.native, p->data.nnative, sizeof(char *), cmp_str);
	names_pos(p->data.native, p->data.nnative, w->native, p->src.native);
	node_pos(w->mark[M_NATIVE], &p->src.native_key);
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

static const char *const split_words[] = {"random", "tail"};
static const int split_values[] = {PINS_SPLIT_RANDOM, PINS_SPLIT_TAIL};
static const struct yrange range_frac = {0, 1, 1, 1};

static const struct pkey split_keys[] = {
	{KEY("validation", PK_NUM), .off = AT(data.split_validation),
	 .range = &range_frac},
	{KEY("order", PK_ENUM), .off = AT(data.split_order),
	 .words = split_words, .values = split_values, .nwords = 2},
	{KEY("seed", PK_UINT), .off = AT(data.split_seed), .lo = 0,
	 .hi = UINT64_MAX, .width = W(data.split_seed)},
};
static const struct psection split_section = {SECTION(split_keys)};

static const struct pkey data_keys[] = {
	{KEY("label", PK_STR), .off = AT(data.label), .flags = PK_REQUIRED,
	 .mark = M_LABEL, .max = POLICY_MAX_STRING},
	{KEY("positive", PK_STR), .off = AT(data.positive),
	 .max = POLICY_MAX_STRING, .pos = AT(src.positive)},
	{KEY("id", PK_STR), .off = AT(data.id), .mark = M_ID,
	 .max = POLICY_MAX_STRING},
	{KEY("exclude", PK_HOOK), .read = read_exclude},
	{KEY("categorical", PK_HOOK), .read = read_categorical},
	{KEY("standardize", PK_BOOL), .off = AT(data.standardize)},
	{KEY("split", PK_SECTION), .section = &split_section},
	{KEY("missing", PK_HOOK), .read = read_missing},
	{KEY("impute", PK_HOOK), .mark = M_IMPUTE, .read = read_impute},
	{KEY("native", PK_HOOK), .mark = M_NATIVE, .read = read_native},
};
/* A null data block is an empty one: its label is then missing. */
static const struct psection data_section = {SECTION(data_keys), .flags = PS_NULL_EMPTY | PS_REQ_AT_KEY,
	.post = data_post};

/* ---- model, train, eval, determinism ---------------------------------- */

static int
read_hidden(struct walk *w, const struct ydoc_node *n)
{
	struct yval *v = w->v;
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
		w->p->model.hidden[i] = (uint32_t)units;
	}
	w->p->model.nhidden = i;
	return 0;
}

/* model.max_leaves: 1 is no tree. */
static int
check_max_leaves(struct walk *w, const struct ydoc_node *n)
{
	if (w->p->model.gbdt.max_leaves != 1)
		return 0;
	return policy_yval_fail(w->v, RBA_E_RANGE, n,
				"'%s' must be 0 (no cap) or an integer "
				"from 2 to %d",
				w->v->path, PINS_MAX_LEAVES);
}

static const struct yrange range_unit = {0, 1, 0, 1};	 /* [0, 1) */
static const struct yrange range_rate = {0, 1, 1, 0};	 /* (0, 1] */
static const struct yrange range_nonneg = {0, INFINITY, 0, 0};
static const struct yrange range_positive = {0, INFINITY, 1, 0};

/*
 * Keys of the other model kind are refused rather than carried: they
 * would change the config hash without changing the model.
 */
static const struct pwhen when_mlp = {AT(model.kind), PINS_MODEL_MLP,
				      "applies only to model kind mlp"};
static const struct pwhen when_gbdt = {AT(model.kind), PINS_MODEL_GBDT,
				       "applies only to model kind gbdt"};
static const char *const model_words[] = {"mlp", "gbdt"};
static const int model_values[] = {PINS_MODEL_MLP, PINS_MODEL_GBDT};
static const char *const act_words[] = {"relu"};
static const int act_values[] = {PINS_ACT_RELU};

#define GBDT_UINT(n, f, l, h)                                              \
	{KEY(n, PK_UINT), .off = AT(model.gbdt.f), .only = &when_gbdt,      \
	 .lo = (l), .hi = (h), .width = W(model.gbdt.f)}
#define GBDT_NUM(n, f, r)                                                  \
	{KEY(n, PK_NUM), .off = AT(model.gbdt.f), .only = &when_gbdt,       \
	 .range = (r)}

static const struct pkey model_keys[] = {
	{KEY("kind", PK_ENUM), .off = AT(model.kind), .words = model_words,
	 .values = model_values, .nwords = 2},
	{KEY("hidden", PK_HOOK), .only = &when_mlp, .read = read_hidden},
	{KEY("activation", PK_ENUM), .off = AT(model.activation),
	 .only = &when_mlp, .words = act_words, .values = act_values,
	 .nwords = 1},
	{KEY("dropout", PK_NUM), .off = AT(model.dropout), .only = &when_mlp,
	 .range = &range_unit},
	GBDT_UINT("trees", trees, 1, PINS_MAX_TREES),
	GBDT_UINT("max_depth", max_depth, 1, PINS_MAX_DEPTH),
	{KEY("max_leaves", PK_UINT), .off = AT(model.gbdt.max_leaves),
	 .only = &when_gbdt, .lo = 0, .hi = PINS_MAX_LEAVES,
	 .width = W(model.gbdt.max_leaves), .check = check_max_leaves},
	GBDT_NUM("learning_rate", learning_rate, &range_rate),
	GBDT_NUM("min_child_weight", min_child_weight, &range_nonneg),
	GBDT_NUM("lambda", lambda, &range_nonneg),
	GBDT_NUM("gamma", gamma, &range_nonneg),
	GBDT_UINT("max_bins", max_bins, 2, PINS_MAX_BINS),
	GBDT_NUM("subsample", subsample, &range_rate),
	GBDT_NUM("colsample", colsample, &range_rate),
};
static const struct psection model_section = {SECTION(model_keys)};

static int
read_betas(struct walk *w, const struct ydoc_node *n)
{
	struct yval *v = w->v;
	const struct ydoc_node *kid;
	size_t i = 0, old;
	int err;

	if (n->type != YDOC_SEQ || n->nkids != 2)
		return policy_yval_fail(v, RBA_E_SCHEMA, n,
					"'%s' must be a list of 2 numbers", v->path);
	for (kid = n->kids; kid != NULL; kid = kid->next, i++) {
		old = policy_yval_path_index(v, i);
		err = policy_yval_get_num(v, kid, &range_unit,
					  &w->p->train.betas[i]);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

/* SGD's weight decay defaults to none. */
static int
train_post(struct walk *w, const struct sect *st)
{
	if (w->p->train.optimizer == PINS_OPT_SGD &&
	    sect_at(st, "weight_decay") == NULL)
		w->p->train.weight_decay = 0;
	return 0;
}

/*
 * A key the chosen optimizer ignores is refused rather than carried: it
 * would change the config hash without changing the model.  Every key
 * but seed is marked M_MLP_ONLY, for the root to refuse with model kind
 * gbdt and with an exec trainer.
 */
static const struct pwhen when_adamw = {AT(train.optimizer), PINS_OPT_ADAMW,
					"applies only to optimizer adamw"};
static const struct pwhen when_sgd = {AT(train.optimizer), PINS_OPT_SGD,
				      "applies only to optimizer sgd"};
static const char *const opt_words[] = {"adamw", "sgd"};
static const int opt_values[] = {PINS_OPT_ADAMW, PINS_OPT_SGD};

static const struct pkey train_keys[] = {
	{KEY("seed", PK_UINT), .off = AT(train.seed), .lo = 0, .hi = UINT64_MAX,
	 .width = W(train.seed)},
	{KEY("epochs", PK_UINT), .off = AT(train.epochs), .mark = M_MLP_ONLY,
	 .lo = 1, .hi = PINS_MAX_EPOCHS, .width = W(train.epochs)},
	{KEY("batch_size", PK_UINT), .off = AT(train.batch_size),
	 .mark = M_MLP_ONLY, .lo = 1, .hi = PINS_MAX_BATCH,
	 .width = W(train.batch_size)},
	{KEY("optimizer", PK_ENUM), .off = AT(train.optimizer),
	 .mark = M_MLP_ONLY, .words = opt_words, .values = opt_values,
	 .nwords = 2},
	{KEY("lr", PK_NUM), .off = AT(train.lr), .mark = M_MLP_ONLY,
	 .range = &range_positive},
	{KEY("weight_decay", PK_NUM), .off = AT(train.weight_decay),
	 .mark = M_MLP_ONLY, .range = &range_nonneg},
	{KEY("betas", PK_HOOK), .mark = M_MLP_ONLY, .only = &when_adamw,
	 .read = read_betas},
	{KEY("eps", PK_NUM), .off = AT(train.eps), .mark = M_MLP_ONLY,
	 .only = &when_adamw, .range = &range_positive},
	{KEY("momentum", PK_NUM), .off = AT(train.momentum), .mark = M_MLP_ONLY,
	 .only = &when_sgd, .range = &range_unit},
};
static const struct psection train_section = {SECTION(train_keys),
					      .post = train_post};

/* eval.subset: all, validation, or a count of rows (a plain integer). */
static int
read_subset(struct walk *w, const struct ydoc_node *n)
{
	static const char *const subsets[] = {"all", "validation"};
	struct pins *p = w->p;
	int err, e;

	if (n->type == YDOC_SCALAR && n->plain && n->len > 0 &&
	    n->val[0] >= '0' && n->val[0] <= '9') {
		err = policy_yval_get_uint(w->v, n, 1, PINS_MAX_EVAL_ROWS,
					   &p->eval.subset_rows);
		p->eval.subset = PINS_SUBSET_ROWS;
		return err;
	}
	err = policy_yval_get_enum(w->v, n, subsets, 2, &e);
	p->eval.subset = e == 0 ? PINS_SUBSET_ALL : PINS_SUBSET_VALIDATION;
	p->eval.subset_rows = 0;
	return err;
}

static const char *const red_words[] = {"mean", "sum"};
static const int red_values[] = {PINS_RED_MEAN, PINS_RED_SUM};
static const char *const off_words[] = {"off", "on"};
static const int off_values[] = {0, 1};

static const struct pkey eval_keys[] = {
	{KEY("subset", PK_HOOK), .read = read_subset},
	{KEY("reduction", PK_ENUM), .off = AT(eval.reduction),
	 .words = red_words, .values = red_values, .nwords = 2},
	{KEY("dropout", PK_ENUM), .off = AT(eval.dropout), .words = off_words,
	 .values = off_values, .nwords = 2},
	{KEY("input_scale", PK_NUM), .off = AT(eval.input_scale),
	 .range = &range_positive},
};
static const struct psection eval_section = {SECTION(eval_keys)};

static const char *const mode_words[] = {"strict", "fast"};
static const int mode_values[] = {PINS_DET_STRICT, PINS_DET_FAST};

static const struct pkey det_keys[] = {
	{KEY("mode", PK_ENUM), .off = AT(determinism.mode), .words = mode_words,
	 .values = mode_values, .nwords = 2},
	{KEY("threads", PK_UINT), .off = AT(determinism.threads), .lo = 1,
	 .hi = PINS_MAX_THREADS, .width = W(determinism.threads)},
};
static const struct psection det_section = {SECTION(det_keys)};

/* ---- trainer ---------------------------------------------------------- */

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
read_params(struct walk *w, const struct ydoc_node *map)
{
	struct yval *v = w->v;
	struct pins *p = w->p;
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
read_variables(struct walk *w, const struct ydoc_node *map)
{
	struct yval *v = w->v;
	struct pins *p = w->p;
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


/* trainer.environment.packages: Debian package names. */
static int
read_packages(struct walk *w, const struct ydoc_node *n)
{
	const struct ydoc_node *nodes[PINS_MAX_LIST];
	struct pins_trainer *t = &w->p->trainer;
	size_t j;
	int err;

	err = get_names(w->v, n, &t->packages, &t->npackages, nodes);
	for (j = 0; err == 0 && j < t->npackages; j++)
		if (!deb_name_ok(t->packages[j])) {
			policy_yval_path_index(w->v, j);
			err = policy_yval_fail(w->v, RBA_E_SCHEMA, nodes[j],
					       "'%s' is not a Debian package name",
					       w->v->path);
		}
	if (err == 0 && t->npackages > 1)
		qsort(t->packages, t->npackages, sizeof(char *), cmp_str);
	return err;
}

/* trainer.environment.pass: names passed through, none also set. */
static int
read_pass(struct walk *w, const struct ydoc_node *n)
{
	const struct ydoc_node *nodes[PINS_MAX_LIST];
	struct pins_trainer *t = &w->p->trainer;
	size_t j, m;
	int err;

	err = get_names(w->v, n, &t->pass, &t->npass, nodes);
	for (j = 0; err == 0 && j < t->npass; j++) {
		/* each refusal says what is wrong with the name */
		const char *why = NULL;
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
			policy_yval_path_index(w->v, j);
			err = policy_yval_fail(w->v, RBA_E_SCHEMA, nodes[j],
					       "'%s' is '%.64s', %s",
					       w->v->path, t->pass[j], why);
		}
	}
	if (err == 0 && t->npass > 1)
		qsort(t->pass, t->npass, sizeof(char *), cmp_str);
	return err;
}

/* Each variable is one field of the environment record, named in lower
 * case: no two names may meet there (in either order of the keys). */
static int
env_post(struct walk *w, const struct sect *st)
{
	struct pins_trainer *t = &w->p->trainer;
	size_t i, j;

	for (i = 0; i < t->nvars + t->npass; i++)
		for (j = i + 1; j < t->nvars + t->npass; j++) {
			const char *a = i < t->nvars ? t->var_names[i] : t->pass[i - t->nvars];
			const char *b = j < t->nvars ? t->var_names[j] : t->pass[j - t->nvars];
			if (strcasecmp(a, b) == 0)
				return policy_yval_fail(w->v, RBA_E_SCHEMA, st->map,
							"'%s' names variable '%s' "
							"twice ('%s', ignoring case, "
							"in variables or pass)",
							w->v->path, a, b);
		}
	return 0;
}

static const struct pkey env_keys[] = {
	{KEY("packages", PK_HOOK), .read = read_packages},
	{KEY("variables", PK_HOOK), .read = read_variables},
	{KEY("probe", PK_ARGV), .off = AT(trainer.probe),
	 .count = AT(trainer.nprobe)},
	{KEY("pass", PK_HOOK), .read = read_pass},
};
static const struct psection env_section = {SECTION(env_keys),
					    .post = env_post};

#define LIMIT(n, f, l, h)                                                  \
	{KEY(n, PK_UINT), .off = AT(trainer.f), .lo = (l), .hi = (h),       \
	 .width = W(trainer.f)}
static const struct pkey limits_keys[] = {
	LIMIT("seconds", seconds, 1, 7 * 86400),
	LIMIT("memory", memory, UINT64_C(1) << 24, UINT64_C(1) << 40),
	LIMIT("output", output, 1024, UINT64_C(1) << 36),
	LIMIT("processes", processes, 1, 65536),
};
static const struct psection limits_section = {SECTION(limits_keys)};

static const struct pkey score_keys[] = {
	{KEY("command", PK_ARGV), .off = AT(trainer.score), .flags = PK_REQUIRED,
	 .count = AT(trainer.nscore)},
};
static const struct psection score_section = {SECTION(score_keys)};

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

static int
check_revision(struct walk *w, const struct ydoc_node *n)
{
	const char *rev = w->p->trainer.revision;

	if (full_commit(rev))
		return 0;
	return policy_yval_fail(w->v, RBA_E_SCHEMA, n,
				"'%s' must be a full commit id of 40 "
				"lowercase hex digits, not '%s' (a branch "
				"name or a short hash can move: pin what "
				"'git rev-parse %s' prints)",
				w->v->path, rev, rev);
}

/* The artifact file name: one path component, no dot files. */
static int
check_artifact(struct walk *w, const struct ydoc_node *n)
{
	const char *s = w->p->trainer.artifact;

	if (s[0] != '.' && strchr(s, '/') == NULL &&
	    strlen(s) <= PINS_MAX_ARTIFACT_NAME)
		return 0;
	return policy_yval_fail(w->v, RBA_E_SCHEMA, n,
				"'%s' must be a file name (no '/', not "
				"starting with '.', at most %d bytes)",
				w->v->path, PINS_MAX_ARTIFACT_NAME);
}

/* An exec trainer names its code, its command and what it writes. */
static int
trainer_check(struct walk *w, const struct sect *st)
{
	uint32_t need = 0;
	size_t i;

	if (!policy_pins_is_exec(w->p))
		return 0;
	for (i = 0; i < st->s->nkeys; i++)
		if (st->s->keys[i].flags & PK_EXEC)
			need |= BIT(i);
	return walk_required(w, st, need);
}

static const struct pwhen when_exec = {AT(trainer.kind), PINS_TRAINER_EXEC,
				       "applies only to trainer kind exec"};
static const char *const trainer_words[] = {"builtin", "exec"};
static const int trainer_values[] = {PINS_TRAINER_BUILTIN, PINS_TRAINER_EXEC};
static const char *const format_words[] = {"xgboost-json", "opaque"};
static const int format_values[] = {PINS_FORMAT_XGBOOST_JSON,
				    PINS_FORMAT_OPAQUE};

static const struct pkey trainer_keys[] = {
	{KEY("kind", PK_ENUM), .off = AT(trainer.kind), .flags = PK_EXEC,
	 .words = trainer_words, .values = trainer_values, .nwords = 2},
	{KEY("repository", PK_STR), .off = AT(trainer.repository),
	 .flags = PK_EXEC, .pos = AT(src.repository), .only = &when_exec,
	 .max = PINS_MAX_ARG},
	{KEY("revision", PK_STR), .off = AT(trainer.revision), .flags = PK_EXEC,
	 .pos = AT(src.revision), .only = &when_exec, .max = POLICY_MAX_STRING,
	 .check = check_revision},
	{KEY("command", PK_ARGV), .off = AT(trainer.command), .flags = PK_EXEC,
	 .pos = AT(src.command), .only = &when_exec,
	 .count = AT(trainer.ncommand)},
	{KEY("artifact", PK_STR), .off = AT(trainer.artifact), .flags = PK_EXEC,
	 .only = &when_exec, .max = POLICY_MAX_STRING, .check = check_artifact},
	{KEY("format", PK_ENUM), .off = AT(trainer.format), .flags = PK_EXEC,
	 .only = &when_exec, .words = format_words, .values = format_values,
	 .nwords = 2},
	{KEY("params", PK_HOOK), .only = &when_exec, .read = read_params},
	{KEY("environment", PK_SECTION), .only = &when_exec,
	 .section = &env_section},
	{KEY("limits", PK_SECTION), .only = &when_exec,
	 .section = &limits_section},
	{KEY("score", PK_SECTION), .only = &when_exec,
	 .section = &score_section},
};
/* A trainer key written null is as if absent (and may then be given). */
static const struct psection trainer_section = {SECTION(trainer_keys),
	.flags = PS_NULL_FORGETS | PS_REQ_AT_KEY,
	.check = trainer_check};

int
policy_pins_is_exec(const struct pins *p)
{
	return p->trainer.kind == PINS_TRAINER_EXEC;
}

/* ---- the whole record ------------------------------------------------ */

static int
read_schema(struct walk *w, const struct ydoc_node *n)
{
	return policy_yval_schema(w->v, n, PINS_SCHEMA);
}

static int
read_version(struct walk *w, const struct ydoc_node *n)
{
	int err;

	err = policy_yval_get_str(w->v, n, PINS_MAX_NAME, &w->p->version);
	if ((err != 0 && err != RBA_E_NOMEM) ||
	    (err == 0 && !policy_name_valid(w->p->version)))
		err = policy_yval_fail(
			w->v, RBA_E_SCHEMA, n,
			"'%s' must be a name of 1-%d characters "
			"[A-Za-z0-9._-] not starting with '.' or '-'",
			w->v->path, PINS_MAX_NAME);
	return err;
}

/*
 * An exec trainer's pins: the user's code has its own model and
 * hyperparameters (trainer.params); this tool's would change the config
 * hash without changing the model.  code_revision, if given, is the
 * pinned commit.
 */
static int
root_exec_check(struct walk *w)
{
	struct yval *v = w->v;
	const struct pins *p = w->p;
	size_t old;
	int err;

	if (w->mark[M_MODEL] != NULL)
		return fail_at_key(v, RBA_E_SCHEMA, w->mark[M_MODEL], "model",
				   "applies only to trainer kind builtin "
				   "(an exec trainer takes trainer.params)");
	if (w->mark[M_ABI] != NULL)
		return fail_at_key(v, RBA_E_SCHEMA, w->mark[M_ABI], "trainer_abi",
				   "applies only to trainer kind builtin");
	if (w->mark[M_MLP_ONLY] != NULL) {
		old = policy_yval_path_key(v, "train");
		err = fail_at_key(v, RBA_E_SCHEMA, w->mark[M_MLP_ONLY],
				  w->mark_name[M_MLP_ONLY],
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

/* A data key's refusal, at its key node k. */
static int
fail_data_key(struct walk *w, const struct ydoc_node *k, const char *key,
	      const char *why)
{
	size_t old = policy_yval_path_key(w->v, "data");
	int err = fail_at_key(w->v, RBA_E_SCHEMA, k, key, why);

	policy_yval_path_restore(w->v, old);
	return err;
}

/* What the model kind allows of train and data: an optimizer's keys,
 * an imputation and native columns. */
static int
root_kind_check(struct walk *w)
{
	const struct pins *p = w->p;
	const struct ydoc_node *impute_at = w->mark[M_IMPUTE];
	const struct ydoc_node *native_at = w->mark[M_NATIVE];
	size_t old;
	int err;

	/* Trees are trained by boosting rounds, not epochs of an optimizer. */
	if (p->model.kind == PINS_MODEL_GBDT && w->mark[M_MLP_ONLY] != NULL) {
		old = policy_yval_path_key(w->v, "train");
		err = fail_at_key(w->v, RBA_E_SCHEMA, w->mark[M_MLP_ONLY],
				  w->mark_name[M_MLP_ONLY],
				  "applies only to model kind mlp");
		policy_yval_path_restore(w->v, old);
		return err;
	}
	if (impute_at != NULL && p->data.missing_declared &&
	    p->data.nmissing == 0)
		return fail_data_key(w, impute_at, "impute",
				     "has nothing to fill: 'data.missing' is []");
	/* Level sets are splits of trees. */
	if (native_at != NULL && p->data.nnative > 0 &&
	    (p->model.kind != PINS_MODEL_GBDT ||
	     p->trainer.kind == PINS_TRAINER_EXEC))
		return fail_data_key(w, native_at, "native",
				     p->model.kind != PINS_MODEL_GBDT
					     ? "applies only to model kind gbdt (a "
					       "network takes a categorical column "
					       "one-hot)"
					     : "applies only to this tool's own "
					       "trees, not to trainer kind exec");
	/* Trees take a missing value down the side each split learned. */
	if (p->model.kind == PINS_MODEL_GBDT && impute_at != NULL)
		return fail_data_key(w, impute_at, "impute",
				     "applies only to model kind mlp (trees learn "
				     "where a missing value goes)");
	return 0;
}

/* The checks across sections, before the document's required keys. */
static int
root_check(struct walk *w, const struct sect *st)
{
	int err;

	if (policy_pins_is_exec(w->p) && (err = root_exec_check(w)) != 0)
		return err;
	return root_kind_check(w);
}

static const struct pkey root_keys[] = {
	{KEY("schema", PK_HOOK), .flags = PK_REQUIRED, .read = read_schema},
	{KEY("version", PK_HOOK), .flags = PK_REQUIRED, .read = read_version},
	{KEY("snapshot", PK_DIGEST), .off = AT(snapshot), .flags = PK_REQUIRED},
	{KEY("code_revision", PK_STR), .off = AT(code_revision),
	 .max = POLICY_MAX_STRING, .pos = AT(src.code_revision)},
	{KEY("trainer_abi", PK_UINT), .off = AT(trainer_abi), .mark = M_ABI,
	 .lo = 1, .hi = UINT32_MAX, .width = W(trainer_abi)},
	{KEY("environment", PK_DIGEST), .off = AT(environment),
	 .pos = AT(src.environment), .has = AT(has_environment)},
	{KEY("artifact", PK_DIGEST), .off = AT(artifact),
	 .has = AT(has_artifact)},
	{KEY("data", PK_SECTION), .flags = PK_REQUIRED,
	 .section = &data_section},
	{KEY("model", PK_SECTION), .mark = M_MODEL, .section = &model_section},
	{KEY("train", PK_SECTION), .section = &train_section},
	{KEY("eval", PK_SECTION), .section = &eval_section},
	{KEY("determinism", PK_SECTION), .section = &det_section},
	{KEY("trainer", PK_SECTION), .section = &trainer_section},
};
static const struct psection root_section = {SECTION(root_keys),
					     .check = root_check};

/* The document: a mapping (or nothing at all, every key then missing). */
static int
pins_root(struct yval *v, const struct ydoc_node *root, struct pins *p)
{
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.v = v;
	w.p = p;
	if (root != NULL && policy_ydoc_node_is_null(root))
		root = NULL;
	if (root != NULL && root->type != YDOC_MAP)
		return policy_yval_fail(v, RBA_E_SCHEMA, root,
					"the document must be a mapping");
	return walk_section(&w, &root_section, NULL, root);
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
