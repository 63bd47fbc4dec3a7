/*
 * policy.c - the policy file (doc/design.md section 5.2), the decision
 * rule, and what pins and policy files share: reading a file, telling
 * them apart.
 */
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "policy/ydoc.h"

_Static_assert(POLICY_MAX_FILE == YDOC_MAX_FILE, "the YAML reader's caps");
_Static_assert(POLICY_MAX_DEPTH == YDOC_MAX_DEPTH, "the YAML reader's caps");
_Static_assert(POLICY_MAX_NODES == YDOC_MAX_NODES, "the YAML reader's caps");

#define BIT(i) (UINT32_C(1) << (i))

int
policy_file_read(const char *path, uint8_t **out, size_t *len,
		 struct rba_detail *d)
{
	const size_t cap = (size_t)POLICY_MAX_FILE + 1;
	uint8_t *p;
	size_t n = 0;
	ssize_t r;
	int fd, err = 0;

	*out = NULL;
	*len = 0;
	if (d != NULL)
		snprintf(d->file, sizeof(d->file), "%s", path);
	fd = strcmp(path, "-") == 0 ? STDIN_FILENO
				    : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	/* One more byte than the cap: enough to tell the file is too big. */
	p = malloc(cap + 1);
	if (p == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	while (n < cap) {
		r = read(fd, p + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	p[n] = 0;
	*out = p;
	*len = n;
	p = NULL;
out:
	free(p);
	if (fd != STDIN_FILENO)
		close(fd);
	return err;
}

/* ---- validation ------------------------------------------------------ */

static int
policy_band(struct yval *v, const struct ydoc_node *n, size_t i, size_t nbands,
	    struct policy *p)
{
	static const char *const keys[] = {"below", "decision"};
	static const struct yrange r = {0, 1, 1, 0};
	struct policy_band *b = &p->bands[i];
	const struct ydoc_node *k, *below = NULL;
	uint32_t seen = 0;
	size_t j, old;
	int err;

	if (n->type != YDOC_MAP)
		return policy_yval_fail(v, RBA_E_SCHEMA, n, "'%s' must be a mapping",
					v->path);
	YDOC_EACH_KEY(k, n)
	{
		if ((err = policy_yval_key(v, k, keys, RBA_NKEYS(keys), &seen, &j)) != 0)
			return err;
		old = policy_yval_path_key(v, keys[j]);
		if (j == 0) {
			if (!policy_ydoc_node_is_null(k->next)) {
				below = k;
				err = policy_yval_get_num(v, k->next, &r, &b->below);
				b->has_below = err == 0;
			}
		} else {
			err = policy_yval_get_str(v, k->next, POLICY_MAX_STRING,
						  &b->decision);
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	if ((err = policy_yval_required(v, n, keys, 2, seen, BIT(1))) != 0)
		return err;
	if (i + 1 < nbands && !b->has_below)
		return policy_yval_required(v, n, keys, 2, 0, BIT(0));
	if (i + 1 == nbands && b->has_below) {
		old = policy_yval_path_key(v, "below");
		err = policy_yval_fail(v, RBA_E_SCHEMA, below,
				       "'%s' is not allowed: the last band takes "
				       "every higher score",
				       v->path);
		policy_yval_path_restore(v, old);
		return err;
	}
	if (i > 0 && b->has_below && !(b->below > p->bands[i - 1].below)) {
		old = policy_yval_path_key(v, "below");
		err = policy_yval_fail(v, RBA_E_RANGE, below->next,
				       "'%s' must be greater than "
				       "'decision.bands[%zu].below'",
				       v->path, i - 1);
		policy_yval_path_restore(v, old);
		return err;
	}
	return 0;
}

static int
policy_bands(struct yval *v, const struct ydoc_node *n, struct policy *p)
{
	const struct ydoc_node *kid;
	size_t i = 0, old;
	int err;

	if ((err = policy_yval_seq(v, n)) != 0)
		return err;
	if (n->nkids == 0)
		return policy_yval_fail(v, RBA_E_SCHEMA, n,
					"'%s' must have at least one band", v->path);
	if (n->nkids > POLICY_MAX_BANDS)
		return policy_yval_fail(v, RBA_E_LIMIT, n,
					"'%s' has more than %d bands", v->path,
					POLICY_MAX_BANDS);
	for (kid = n->kids; kid != NULL; kid = kid->next, i++) {
		p->nbands = i + 1; /* so policy_free sees every decision */
		old = policy_yval_path_index(v, i);
		err = policy_band(v, kid, i, n->nkids, p);
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

static int
policy_decision(struct yval *v, const struct ydoc_node *key,
		const struct ydoc_node *map, struct policy *p)
{
	static const char *const keys[] = {"bands", "rule"};
	static const char *const rules[] = {"argmax"};
	const struct ydoc_node *k;
	uint32_t seen = 0;
	size_t i, old;
	int err, e;

	if (policy_ydoc_node_is_null(map))
		map = NULL;
	else if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, RBA_NKEYS(keys), &seen, &i)) != 0)
			return err;
		if (seen == (BIT(0) | BIT(1)))
			return policy_yval_fail(v, RBA_E_SCHEMA, k,
						"'%s' must have either 'bands' or "
						"'rule', not both",
						v->path);
		old = policy_yval_path_key(v, keys[i]);
		if (i == 0) {
			err = policy_bands(v, k->next, p);
		} else {
			err = policy_yval_get_enum(v, k->next, rules, 1, &e);
			p->argmax = err == 0;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	if (seen == 0)
		return policy_yval_required(v, key, keys, 2, 0, BIT(0));
	return 0;
}

/* A mapping of optional numbers and flags: tolerance, near_threshold, evidence. */
enum field_kind { F_NUM, F_UINT, F_BOOL };
struct field {
	const char *name;
	enum field_kind kind;
	void *dst;
};

static int
policy_fields(struct yval *v, const struct ydoc_node *map,
	      const struct field *f, size_t nf)
{
	static const struct yrange nonneg = {0, INFINITY, 0, 0};
	const char *keys[4];
	const struct ydoc_node *k;
	uint32_t seen = 0;
	size_t i, old;
	int err;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	for (i = 0; i < nf; i++)
		keys[i] = f[i].name;
	YDOC_EACH_KEY(k, map)
	{
		if ((err = policy_yval_key(v, k, keys, nf, &seen, &i)) != 0)
			return err;
		if (policy_ydoc_node_is_null(k->next))
			continue;
		old = policy_yval_path_key(v, keys[i]);
		switch (f[i].kind) {
		case F_NUM:
			err = policy_yval_get_num(v, k->next, &nonneg, f[i].dst);
			break;
		case F_UINT:
			err = policy_yval_get_uint(v, k->next, 0, UINT64_MAX,
						   f[i].dst);
			break;
		case F_BOOL:
			err = policy_yval_get_bool(v, k->next, f[i].dst);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return 0;
}

/* One statement's text at the current path: a string of one line. */
static int
statement_text(struct yval *v, const struct ydoc_node *n, char **out)
{
	int err;

	*out = NULL; /* policy_yval_get_str frees what *out held */
	if (n->type != YDOC_SCALAR || policy_ydoc_node_is_null(n))
		return policy_yval_fail(v, RBA_E_SCHEMA, n, "'%s' must be a "
					"statement: one line of text", v->path);
	if ((err = policy_yval_get_str(v, n, POLICY_STATEMENT_MAX, out)) != 0)
		return err;
	if ((*out)[0] == '\0' || strlen(*out) != n->len ||
	    strpbrk(*out, "\n\r\t") != NULL) {
		free(*out);
		*out = NULL;
		return policy_yval_fail(v, RBA_E_SCHEMA, n, "'%s' must be a "
					"statement: one line of text", v->path);
	}
	return 0;
}

static int
statement_add(struct yval *v, const struct ydoc_node *at, struct policy *p,
	      const char *column, const char *level, char *text)
{
	struct policy_statement *q;

	for (size_t i = 0; i < p->nstatements; i++)
		if (strcmp(p->statements[i].column, column) == 0 &&
		    ((level == NULL && p->statements[i].level == NULL) ||
		     (level != NULL && p->statements[i].level != NULL &&
		      strcmp(p->statements[i].level, level) == 0))) {
			free(text);
			return policy_yval_fail(v, RBA_E_SCHEMA, at, "'%s' is given "
						"twice", v->path);
		}
	if (p->nstatements == POLICY_MAX_STATEMENTS) {
		free(text);
		return policy_yval_fail(v, RBA_E_LIMIT, at, "more than %d statements",
					POLICY_MAX_STATEMENTS);
	}
	q = realloc(p->statements, (p->nstatements + 1) * sizeof(*q));
	if (q == NULL) {
		free(text);
		return policy_yval_fail(v, RBA_E_NOMEM, at, "out of memory");
	}
	p->statements = q;
	q = &p->statements[p->nstatements];
	q->column = strdup(column);
	q->level = level != NULL ? strdup(level) : NULL;
	q->text = text;
	if (q->column == NULL || (level != NULL && q->level == NULL)) {
		free(q->column);
		free(q->level);
		free(text);
		return policy_yval_fail(v, RBA_E_NOMEM, at, "out of memory");
	}
	p->nstatements++;
	return 0;
}

/*
 * statements: a mapping of input column to its statement, or to a
 * mapping of level to statement ("*": any other level).
 */
static int
policy_statements(struct yval *v, const struct ydoc_node *map, struct policy *p)
{
	const struct ydoc_node *k, *l;
	int err;

	if (policy_ydoc_node_is_null(map))
		return 0;
	if ((err = policy_yval_map(v, map)) != 0)
		return err;
	YDOC_EACH_KEY(k, map)
	{
		size_t old;
		char *text = NULL;

		if (k->len == 0 || k->len > POLICY_MAX_STRING || strlen(k->val) != k->len)
			return policy_yval_fail(v, RBA_E_SCHEMA, k, "'%s' has a column "
						"name that is empty, has a NUL or is over "
						"%d bytes", v->path, POLICY_MAX_STRING);
		old = policy_yval_path_key(v, k->val);
		if (k->next->type == YDOC_MAP) {
			YDOC_EACH_KEY(l, k->next)
			{
				size_t o2;
				int any = policy_ydoc_node_is(l, "*");

				if (l->len == 0 || l->len > POLICY_MAX_STRING ||
				    strlen(l->val) != l->len)
					return policy_yval_fail(v, RBA_E_SCHEMA, l, "'%s' has "
								"a level that is empty, has "
								"a NUL or is over %d bytes",
								v->path, POLICY_MAX_STRING);
				o2 = policy_yval_path_key(v, l->val);
				err = statement_text(v, l->next, &text);
				if (err == 0)
					err = statement_add(v, l, p, k->val,
							    any ? NULL : l->val, text);
				policy_yval_path_restore(v, o2);
				if (err)
					return err;
			}
			if (k->next->nkids == 0)
				return policy_yval_fail(v, RBA_E_SCHEMA, k->next, "'%s' "
							"has no statement", v->path);
		} else {
			err = statement_text(v, k->next, &text);
			if (err == 0)
				err = statement_add(v, k, p, k->val, NULL, text);
			if (err)
				return err;
		}
		policy_yval_path_restore(v, old);
	}
	return 0;
}

static int
policy_root(struct yval *v, const struct ydoc_node *root, struct policy *p)
{
	static const char *const keys[] = {"schema", "decision", "tolerance",
					   "near_threshold", "evidence", "statements"};
	enum { SCHEMA, DECISION, TOLERANCE, NEAR, EVIDENCE, STATEMENTS, N };
	const struct field tolerance[] = {
		{"max_score_delta", F_NUM, &p->max_score_delta},
		{"max_flips", F_UINT, &p->max_flips},
	};
	const struct field near[] = {
		{"margin", F_NUM, &p->near_margin},
		{"require_bits", F_BOOL, &p->near_require_bits},
	};
	const struct field evidence[] = {
		{"min_near_cases", F_UINT, &p->min_near_cases},
	};
	const struct ydoc_node *map = NULL, *k;
	uint32_t seen = 0;
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
		old = policy_yval_path_key(v, keys[i]);
		switch (i) {
		case SCHEMA:
			err = policy_yval_schema(v, k->next, POLICY_SCHEMA);
			break;
		case DECISION:
			err = policy_decision(v, k, k->next, p);
			break;
		case TOLERANCE:
			err = policy_fields(v, k->next, tolerance, 2);
			break;
		case NEAR:
			err = policy_fields(v, k->next, near, 2);
			break;
		case STATEMENTS:
			err = policy_statements(v, k->next, p);
			break;
		default:
			err = policy_fields(v, k->next, evidence, 1);
			break;
		}
		policy_yval_path_restore(v, old);
		if (err)
			return err;
	}
	return policy_yval_required(v, map, keys, N, seen,
				    BIT(SCHEMA) | BIT(DECISION));
}

int
policy_parse(const void *text, size_t n, const char *name,
	     struct policy **out, struct rba_detail *d)
{
	struct rba_detail scratch;
	struct ydoc doc;
	struct yval v;
	struct policy *p;
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
	if (p == NULL || (p->text = malloc(n + 1)) == NULL) {
		free(p);
		policy_ydoc_release(&doc);
		return rba_fail(d, RBA_E_NOMEM, name, 0, 0, "out of memory");
	}
	memcpy(p->text, text, n);
	p->text[n] = 0;
	p->text_len = n;
	rba_digest_bytes(text, n, &p->digest);
	memset(&v, 0, sizeof(v));
	v.name = name;
	v.d = d;
	err = policy_root(&v, doc.root, p);
	policy_ydoc_release(&doc);
	if (err) {
		policy_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int
policy_load(const char *path, struct policy **out, struct rba_detail *d)
{
	uint8_t *text;
	size_t n;
	int err;

	*out = NULL;
	rba_detail_clear(d);
	if ((err = policy_file_read(path, &text, &n, d)) != 0)
		return err;
	err = policy_parse(text, n, path, out, d);
	free(text);
	return err;
}

void
policy_free(struct policy *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nbands; i++)
		free(p->bands[i].decision);
	for (i = 0; i < p->nstatements; i++) {
		free(p->statements[i].column);
		free(p->statements[i].level);
		free(p->statements[i].text);
	}
	free(p->statements);
	free(p->text);
	free(p);
}

void
policy_canonical(const struct policy *p, struct rba_buf *out)
{
	struct ysink s = {out, NULL};
	size_t i;

	policy_ysink_text(&s, "schema: " POLICY_SCHEMA "\ndecision:\n");
	if (p->argmax) {
		policy_ysink_text(&s, "  rule: argmax\n");
	} else {
		policy_ysink_text(&s, "  bands:\n");
		for (i = 0; i < p->nbands; i++) {
			policy_ysink_text(&s, "    - ");
			if (p->bands[i].has_below) {
				policy_ysink_text(&s, "below: ");
				policy_ysink_num(&s, p->bands[i].below);
				policy_ysink_text(&s, "\n      ");
			}
			policy_ysink_text(&s, "decision: ");
			policy_ysink_str(&s, p->bands[i].decision);
			policy_ysink_text(&s, "\n");
		}
	}
	policy_ysink_text(&s, "tolerance:\n  max_score_delta: ");
	policy_ysink_num(&s, p->max_score_delta);
	policy_ysink_printf(&s, "\n  max_flips: %" PRIu64 "\nnear_threshold:\n  margin: ",
			    p->max_flips);
	policy_ysink_num(&s, p->near_margin);
	policy_ysink_printf(&s,
			    "\n  require_bits: %s\nevidence:\n  min_near_cases: %" PRIu64
			    "\n",
			    p->near_require_bits ? "true" : "false",
			    p->min_near_cases);
	/* Only when the file has some, so that a policy without statements
	 * keeps the canonical text it always had. */
	if (p->nstatements > 0)
		policy_ysink_text(&s, "statements:\n");
	for (i = 0; i < p->nstatements; i++) {
		const struct policy_statement *q = &p->statements[i];
		int first = 1, grouped = 0;

		for (size_t j = 0; j < i; j++)
			if (strcmp(p->statements[j].column, q->column) == 0)
				first = 0;
		if (!first)
			continue;
		for (size_t j = 0; j < p->nstatements; j++)
			if (strcmp(p->statements[j].column, q->column) == 0 &&
			    p->statements[j].level != NULL)
				grouped = 1;
		policy_ysink_text(&s, "  ");
		policy_ysink_str(&s, q->column);
		if (!grouped) {
			policy_ysink_text(&s, ": ");
			policy_ysink_str(&s, q->text);
			policy_ysink_text(&s, "\n");
			continue;
		}
		policy_ysink_text(&s, ":\n");
		for (size_t j = i; j < p->nstatements; j++) {
			const struct policy_statement *r = &p->statements[j];
			if (strcmp(r->column, q->column) != 0)
				continue;
			policy_ysink_text(&s, "    ");
			policy_ysink_str(&s, r->level != NULL ? r->level : "*");
			policy_ysink_text(&s, ": ");
			policy_ysink_str(&s, r->text);
			policy_ysink_text(&s, "\n");
		}
	}
}

const char *
policy_statement(const struct policy *p, const char *column, const char *value)
{
	const char *any = NULL;

	for (size_t i = 0; p != NULL && i < p->nstatements; i++) {
		const struct policy_statement *q = &p->statements[i];
		if (strcmp(q->column, column) != 0)
			continue;
		if (q->level == NULL)
			any = q->text;
		else if (value != NULL && strcmp(q->level, value) == 0)
			return q->text;
	}
	return any;
}

/* ---- the decision rule ----------------------------------------------- */

const char *
policy_decide(const struct policy *p, double score, double *edge_dist)
{
	long b = policy_decide_band(p, score, edge_dist);

	return b < 0 ? NULL : p->bands[b].decision;
}

double
policy_nearest_edge(const struct policy *p, double score)
{
	double best = INFINITY, edge = NAN;

	if (p->argmax)
		return NAN;
	for (size_t i = 0; i < p->nbands; i++) {
		if (!p->bands[i].has_below)
			continue;
		if (fabs(score - p->bands[i].below) < best) {
			best = fabs(score - p->bands[i].below);
			edge = p->bands[i].below;
		}
	}
	return edge;
}

size_t
policy_decide_argmax(const struct policy *p, const double *probs, size_t n,
		     double *edge_dist)
{
	size_t i, top = 0;
	double second = -INFINITY;

	(void)p;
	if (edge_dist != NULL)
		*edge_dist = INFINITY;
	if (n == 0)
		return SIZE_MAX;
	for (i = 0; i < n; i++)
		if (isnan(probs[i]))
			return SIZE_MAX;
	for (i = 1; i < n; i++) {
		if (probs[i] > probs[top]) {
			second = probs[top];
			top = i;
		} else if (probs[i] > second) {
			second = probs[i];
		}
	}
	if (edge_dist != NULL && n > 1)
		*edge_dist = (probs[top] - second) / 2;
	return top;
}

/* ---- telling files apart --------------------------------------------- */

static enum policy_file_kind
kind_of(const yaml_event_t *ev)
{
	static const char pins[] = "rebuild-audit/pins/";
	static const char pol[] = "rebuild-audit/policy/";
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;

	if (n > sizeof(pins) - 1 && memcmp(s, pins, sizeof(pins) - 1) == 0)
		return POLICY_KIND_PINS;
	if (n > sizeof(pol) - 1 && memcmp(s, pol, sizeof(pol) - 1) == 0)
		return POLICY_KIND_POLICY;
	return POLICY_KIND_UNKNOWN;
}

int
policy_file_kind(const void *text, size_t n, enum policy_file_kind *kind)
{
	yaml_parser_t ps;
	yaml_event_t ev;
	int level = 0, key_turn = 1, is_schema = 0, done = 0;
	size_t events = 0;

	*kind = POLICY_KIND_UNKNOWN;
	if (n > POLICY_MAX_FILE)
		n = POLICY_MAX_FILE;
	/* Only the part libyaml can read: the schema key may come before a bad byte. */
	n = policy_ydoc_valid_prefix(text, n);
	if (!yaml_parser_initialize(&ps))
		return RBA_E_NOMEM;
	yaml_parser_set_input_string(&ps, text, n);
	while (!done && yaml_parser_parse(&ps, &ev)) {
		int node_done = 0, scalar = 0;

		if (++events > 2 * POLICY_MAX_NODES)
			done = 1;
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			if (level == 0)
				done = 1;
			node_done = level == 1;
			scalar = ev.type == YAML_SCALAR_EVENT;
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (level == 0 && ev.type != YAML_MAPPING_START_EVENT)
				done = 1;
			level++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			level--;
			node_done = level == 1;
			done = level == 0;
			break;
		case YAML_DOCUMENT_END_EVENT:
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		if (node_done && !done) {
			if (key_turn) {
				is_schema = scalar &&
					    ev.data.scalar.length == 6 &&
					    memcmp(ev.data.scalar.value, "schema",
						   6) == 0;
			} else if (is_schema) {
				if (scalar)
					*kind = kind_of(&ev);
				done = 1;
			}
			key_turn = !key_turn;
		}
		yaml_event_delete(&ev);
	}
	if (ps.error == YAML_MEMORY_ERROR) {
		yaml_parser_delete(&ps);
		return RBA_E_NOMEM;
	}
	yaml_parser_delete(&ps);
	return 0;
}

int
policy_yaml_check(const void *text, size_t n, const char *name,
		  struct rba_detail *d)
{
	struct ydoc doc;
	int err;

	rba_detail_clear(d);
	err = policy_ydoc_parse(&doc, text, n, name, d);
	if (err == 0)
		policy_ydoc_release(&doc);
	return err;
}

const char *
policy_yaml_version(void)
{
	return yaml_get_version_string();
}

int
policy_as_strict(const struct policy *a, const struct policy *b, char *why,
		 size_t cap)
{
	const char *term = NULL;
	char buf[160];

	buf[0] = 0;
	if (a->argmax != b->argmax || a->nbands != b->nbands) {
		term = "the decision rule";
	} else {
		for (size_t i = 0; i < a->nbands && term == NULL; i++)
			if (a->bands[i].below != b->bands[i].below ||
			    strcmp(a->bands[i].decision, b->bands[i].decision) != 0) {
				snprintf(buf, sizeof(buf), "decision band %zu", i + 1);
				term = buf;
			}
	}
	if (term == NULL && a->max_score_delta > b->max_score_delta)
		term = "tolerance.max_score_delta";
	else if (term == NULL && a->max_flips > b->max_flips)
		term = "tolerance.max_flips";
	else if (term == NULL && a->near_margin < b->near_margin)
		term = "near_threshold.margin";
	else if (term == NULL && b->near_require_bits && !a->near_require_bits)
		term = "near_threshold.require_bits";
	else if (term == NULL && a->min_near_cases < b->min_near_cases)
		term = "evidence.min_near_cases";
	if (term == NULL)
		return 1;
	if (why != NULL && cap > 0)
		snprintf(why, cap, "%s", term);
	return 0;
}
