/* ydoc.c - YAML into a small tree, shared scalar rules, canonical writer. */
#include "policy/ydoc.h"

#include <assert.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "common/utf8.h"

/*
 * Numbers are read and written in the C locale whatever setlocale() the
 * process made: a pins file must mean the same thing on every machine.
 * uselocale() switches only the calling thread.
 */
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void
c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t
c_locale_enter(void)
{
	pthread_once(&c_locale_once, c_locale_init);
	if (c_locale == (locale_t)0)
		return (locale_t)0;
	return uselocale(c_locale);
}

static void
c_locale_leave(locale_t old)
{
	if (old != (locale_t)0)
		uselocale(old);
}

/* ---- characters and positions ---------------------------------------- */

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The characters libyaml's reader accepts (YAML 1.1 c-printable). */
static int
yaml_printable(uint32_t c)
{
	return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) ||
	       c == 0x85 || (c >= 0xA0 && c <= 0xD7FF) ||
	       (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

static size_t
bom_len(const uint8_t *p, size_t n)
{
	return n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? 3 : 0;
}

/*
 * Advances over the character at p[i], counting lines and columns the
 * way libyaml's marks do: columns in characters, CR LF as one break, NEL,
 * LS and PS as breaks too.
 */
static size_t
mark_step(const uint8_t *p, size_t n, size_t i, unsigned long *line,
	  unsigned long *col)
{
	size_t len = 1;

	if (p[i] == '\r' || p[i] == '\n') {
		if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n')
			len = 2;
		(*line)++;
		*col = 1;
		return len;
	}
	if (i + 1 < n && p[i] == 0xC2 && p[i + 1] == 0x85) {
		(*line)++;
		*col = 1;
		return 2;
	}
	if (i + 2 < n && p[i] == 0xE2 && p[i + 1] == 0x80 &&
	    (p[i + 2] == 0xA8 || p[i + 2] == 0xA9)) {
		(*line)++;
		*col = 1;
		return 3;
	}
	/* The length its lead byte announces (exact for valid UTF-8). */
	if (p[i] >= 0xF0)
		len = 4;
	else if (p[i] >= 0xE0)
		len = 3;
	else if (p[i] >= 0xC0)
		len = 2;
	if (len > n - i)
		len = n - i;
	(*col)++;
	return len;
}

/* Line and column of byte offset off. */
static void
text_mark(const uint8_t *p, size_t n, size_t off, unsigned long *line,
	  unsigned long *col)
{
	size_t i = bom_len(p, n);

	*line = 1;
	*col = 1;
	while (i < off && i < n)
		i += mark_step(p, n, i, line, col);
}

/*
 * Checks every character before libyaml sees it: libyaml's own reader
 * reports a byte offset, not a line and column, for these errors.
 */
static int
text_scan(const uint8_t *p, size_t n, const char *name, struct rba_detail *d)
{
	unsigned long line = 1, col = 1;
	size_t i = bom_len(p, n), len;
	uint32_t c;

	while (i < n) {
		len = rba_utf8_next(p + i, n - i, &c);
		if (len == 0)
			return rba_fail(d, RBA_E_ENCODING, name, line, col,
					"invalid UTF-8");
		if (!yaml_printable(c))
			return rba_fail(d, RBA_E_SYNTAX, name, line, col,
					"control characters are not allowed");
		i += mark_step(p, n, i, &line, &col);
	}
	return 0;
}

size_t
policy_ydoc_valid_prefix(const void *text, size_t n)
{
	const uint8_t *p = text;
	size_t i = bom_len(p, n), len;
	uint32_t c;

	while (i < n) {
		len = rba_utf8_next(p + i, n - i, &c);
		if (len == 0 || !yaml_printable(c))
			return i;
		i += len;
	}
	return n;
}

/* ---- the tree -------------------------------------------------------- */

struct ybuild {
	yaml_parser_t parser;
	struct ydoc *doc;
	const uint8_t *text;
	size_t n;
	const char *name;
	struct rba_detail *d;
};

static int
yb_fail_mark(struct ybuild *b, int err, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
yb_fail_mark(struct ybuild *b, int err, yaml_mark_t m, const char *fmt, ...)
{
	char reason[sizeof(b->d->reason)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return rba_fail(b->d, err, b->name, (unsigned long)m.line + 1,
			(unsigned long)m.column + 1, "%s", reason);
}

static int
yb_parser_error(struct ybuild *b)
{
	yaml_parser_t *ps = &b->parser;
	const char *problem = ps->problem != NULL ? ps->problem : "invalid YAML";
	unsigned long line, col;

	if (ps->error == YAML_MEMORY_ERROR)
		return rba_fail(b->d, RBA_E_NOMEM, b->name, 0, 0, "out of memory");
	if (ps->error == YAML_READER_ERROR) {
		text_mark(b->text, b->n, ps->problem_offset, &line, &col);
		return rba_fail(b->d, RBA_E_SYNTAX, b->name, line, col, "%s",
				problem);
	}
	return rba_fail(b->d, RBA_E_SYNTAX, b->name,
			(unsigned long)ps->problem_mark.line + 1,
			(unsigned long)ps->problem_mark.column + 1, "%s", problem);
}

static int
yb_next(struct ybuild *b, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&b->parser, ev))
		return yb_parser_error(b);
	return 0;
}

static int
yb_node(struct ybuild *b, yaml_event_t *ev, int depth, struct ydoc_node **out)
{
	yaml_char_t *anchor = NULL, *tag = NULL;
	yaml_mark_t m = ev->start_mark;
	struct ydoc_node *nd, *kid;
	yaml_event_t kev;
	int err, collection = 0;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return yb_fail_mark(b, RBA_E_SYNTAX, m,
				    "anchors and aliases are not allowed");
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		collection = 1;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		collection = 1;
		break;
	default:
		return yb_fail_mark(b, RBA_E_SYNTAX, m, "unexpected YAML event");
	}
	if (anchor != NULL)
		return yb_fail_mark(b, RBA_E_SYNTAX, m,
				    "anchors and aliases are not allowed");
	if (tag != NULL)
		return yb_fail_mark(b, RBA_E_SYNTAX, m, "tags are not allowed");
	if (collection && depth + 1 > YDOC_MAX_DEPTH)
		return yb_fail_mark(b, RBA_E_LIMIT, m,
				    "nesting deeper than %d levels",
				    YDOC_MAX_DEPTH);
	if (b->doc->nnodes >= YDOC_MAX_NODES)
		return yb_fail_mark(b, RBA_E_LIMIT, m, "more than %d YAML nodes",
				    YDOC_MAX_NODES);
	nd = calloc(1, sizeof(*nd));
	if (nd == NULL)
		return rba_fail(b->d, RBA_E_NOMEM, b->name, 0, 0, "out of memory");
	nd->chain = b->doc->all;
	b->doc->all = nd;
	b->doc->nnodes++;
	nd->line = (unsigned long)m.line + 1;
	nd->col = (unsigned long)m.column + 1;
	*out = nd;
	if (!collection) {
		nd->type = YDOC_SCALAR;
		nd->len = ev->data.scalar.length;
		nd->val = malloc(nd->len + 1);
		if (nd->val == NULL)
			return rba_fail(b->d, RBA_E_NOMEM, b->name, 0, 0,
					"out of memory");
		if (nd->len > 0)
			memcpy(nd->val, ev->data.scalar.value, nd->len);
		nd->val[nd->len] = 0;
		nd->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		return 0;
	}
	nd->type = ev->type == YAML_MAPPING_START_EVENT ? YDOC_MAP : YDOC_SEQ;
	for (;;) {
		if ((err = yb_next(b, &kev)) != 0)
			return err;
		if (kev.type == YAML_SEQUENCE_END_EVENT ||
		    kev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&kev);
			return 0;
		}
		err = yb_node(b, &kev, depth + 1, &kid);
		yaml_event_delete(&kev);
		if (err)
			return err;
		if (nd->type == YDOC_MAP && nd->nkids % 2 == 0 &&
		    kid->type != YDOC_SCALAR)
			return rba_fail(b->d, RBA_E_SYNTAX, b->name, kid->line,
					kid->col, "mapping keys must be scalars");
		if (nd->last != NULL)
			nd->last->next = kid;
		else
			nd->kids = kid;
		nd->last = kid;
		nd->nkids++;
	}
}

/* Reads the event that must come next (stream or document boundaries). */
static int
yb_expect(struct ybuild *b, yaml_event_t *ev, yaml_event_type_t t)
{
	int err = yb_next(b, ev);

	if (err)
		return err;
	if (ev->type != t) {
		yaml_mark_t m = ev->start_mark;
		yaml_event_delete(ev);
		return yb_fail_mark(b, RBA_E_SYNTAX, m, "unexpected YAML event");
	}
	return 0;
}

int
policy_ydoc_parse(struct ydoc *doc, const void *text, size_t n,
		  const char *name, struct rba_detail *d)
{
	struct ybuild b;
	yaml_event_t ev;
	unsigned long line, col;
	int err;

	memset(doc, 0, sizeof(*doc));
	if (name == NULL)
		name = "";
	if (n > YDOC_MAX_FILE) {
		text_mark(text, n, YDOC_MAX_FILE, &line, &col);
		return rba_fail(d, RBA_E_LIMIT, name, line, col,
				"file is larger than %u bytes", YDOC_MAX_FILE);
	}
	if ((err = text_scan(text, n, name, d)) != 0)
		return err;
	memset(&b, 0, sizeof(b));
	b.doc = doc;
	b.text = text;
	b.n = n;
	b.name = name;
	b.d = d;
	if (!yaml_parser_initialize(&b.parser))
		return rba_fail(d, RBA_E_NOMEM, name, 0, 0, "out of memory");
	yaml_parser_set_input_string(&b.parser, text, n);
	if ((err = yb_expect(&b, &ev, YAML_STREAM_START_EVENT)) != 0)
		goto out;
	yaml_event_delete(&ev);
	if ((err = yb_next(&b, &ev)) != 0)
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) {
		/* Zero bytes, or only blank lines and comments: say so rather
		 * than "missing required key 'schema'" at 1:1. */
		yaml_event_delete(&ev);
		err = rba_fail(d, RBA_E_SCHEMA, name, 0, 0, "empty file");
		goto out;
	}
	yaml_event_delete(&ev);
	if ((err = yb_next(&b, &ev)) != 0)
		goto out;
	err = yb_node(&b, &ev, 0, &doc->root);
	yaml_event_delete(&ev);
	if (err)
		goto out;
	if ((err = yb_expect(&b, &ev, YAML_DOCUMENT_END_EVENT)) != 0)
		goto out;
	yaml_event_delete(&ev);
	if ((err = yb_next(&b, &ev)) != 0)
		goto out;
	if (ev.type == YAML_DOCUMENT_START_EVENT)
		err = yb_fail_mark(&b, RBA_E_SYNTAX, ev.start_mark,
				   "more than one YAML document");
	yaml_event_delete(&ev);
out:
	yaml_parser_delete(&b.parser);
	if (err)
		policy_ydoc_release(doc);
	return err;
}

void
policy_ydoc_release(struct ydoc *doc)
{
	struct ydoc_node *nd, *next;

	if (doc == NULL)
		return;
	for (nd = doc->all; nd != NULL; nd = next) {
		next = nd->chain;
		free(nd->val);
		free(nd);
	}
	memset(doc, 0, sizeof(*doc));
}

int
policy_ydoc_node_is_null(const struct ydoc_node *n)
{
	if (n == NULL || n->type != YDOC_SCALAR || !n->plain)
		return 0;
	return n->len == 0 || strcmp(n->val, "~") == 0 ||
	       strcmp(n->val, "null") == 0 || strcmp(n->val, "Null") == 0 ||
	       strcmp(n->val, "NULL") == 0;
}

int
policy_ydoc_node_is(const struct ydoc_node *n, const char *s)
{
	return n != NULL && n->type == YDOC_SCALAR && n->len == strlen(s) &&
	       memcmp(n->val, s, n->len) == 0;
}

/* ---- validation helpers ---------------------------------------------- */

/*
 * User text quoted in a reason: at most 64 bytes, control characters
 * shown as '?', so a diagnostic line stays one line and safe for a
 * terminal.
 */
static void
safe_text(char *out, size_t outsz, const char *s, size_t n)
{
	size_t i, o = 0, max = n > 64 ? 64 : n;

	for (i = 0; i < max && o + 4 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];
		out[o++] = c < 0x20 || c == 0x7F ? '?' : (char)c;
	}
	if (max < n && o + 4 < outsz) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = 0;
}

int
policy_yval_fail(struct yval *v, int err, const struct ydoc_node *at,
		 const char *fmt, ...)
{
	char reason[sizeof(v->d->reason)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	rba_fail(v->d, err, v->name, at != NULL ? at->line : 1,
		 at != NULL ? at->col : 1, "%s", reason);
	rba_detail_key(v->d, v->path);
	return err;
}

size_t
policy_yval_path_key(struct yval *v, const char *key)
{
	size_t old = strlen(v->path);

	snprintf(v->path + old, sizeof(v->path) - old, "%s%s",
		 old > 0 ? "." : "", key);
	return old;
}

size_t
policy_yval_path_index(struct yval *v, size_t i)
{
	size_t old = strlen(v->path);

	snprintf(v->path + old, sizeof(v->path) - old, "[%zu]", i);
	return old;
}

void
policy_yval_path_restore(struct yval *v, size_t old)
{
	if (old < sizeof(v->path))
		v->path[old] = 0;
}

int
policy_yval_key(struct yval *v, const struct ydoc_node *k,
		const char *const *keys, size_t nkeys, uint32_t *seen, size_t *idx)
{
	char text[72];
	size_t i, old;
	int err;

	for (i = 0; i < nkeys; i++)
		if (policy_ydoc_node_is(k, keys[i]))
			break;
	if (i == nkeys) {
		safe_text(text, sizeof(text), k->val, k->len);
		old = policy_yval_path_key(v, text);
		err = policy_yval_fail(v, RBA_E_SCHEMA, k, "unknown key '%s'",
				       v->path);
		policy_yval_path_restore(v, old);
		return err;
	}
	old = policy_yval_path_key(v, keys[i]);
	if (*seen & (UINT32_C(1) << i)) {
		err = policy_yval_fail(v, RBA_E_SCHEMA, k, "duplicate key '%s'",
				       v->path);
		policy_yval_path_restore(v, old);
		return err;
	}
	policy_yval_path_restore(v, old);
	*seen |= UINT32_C(1) << i;
	*idx = i;
	return 0;
}

int
policy_yval_required(struct yval *v, const struct ydoc_node *at,
		     const char *const *keys, size_t nkeys, uint32_t seen,
		     uint32_t required)
{
	size_t i, old;
	int err;

	for (i = 0; i < nkeys; i++) {
		if (!(required & (UINT32_C(1) << i)) ||
		    (seen & (UINT32_C(1) << i)))
			continue;
		old = policy_yval_path_key(v, keys[i]);
		err = policy_yval_fail(v, RBA_E_SCHEMA, at,
				       "missing required key '%s'", v->path);
		policy_yval_path_restore(v, old);
		return err;
	}
	return 0;
}

int
policy_yval_map(struct yval *v, const struct ydoc_node *n)
{
	if (n->type == YDOC_MAP)
		return 0;
	return policy_yval_fail(v, RBA_E_SCHEMA, n, "'%s' must be a mapping",
				v->path);
}

int
policy_yval_seq(struct yval *v, const struct ydoc_node *n)
{
	if (n->type == YDOC_SEQ)
		return 0;
	return policy_yval_fail(v, RBA_E_SCHEMA, n, "'%s' must be a list", v->path);
}

int
policy_yval_get_str(struct yval *v, const struct ydoc_node *n, size_t max,
		    char **out)
{
	char *s;

	if (n->type != YDOC_SCALAR || policy_ydoc_node_is_null(n) || n->len == 0)
		return policy_yval_fail(v, RBA_E_SCHEMA, n,
					"'%s' must be a non-empty string", v->path);
	if (memchr(n->val, 0, n->len) != NULL)
		return policy_yval_fail(v, RBA_E_SCHEMA, n,
					"'%s' must not contain a NUL character",
					v->path);
	if (n->len > max)
		return policy_yval_fail(v, RBA_E_LIMIT, n,
					"'%s' is longer than %zu bytes", v->path, max);
	s = strdup(n->val);
	if (s == NULL)
		return policy_yval_fail(v, RBA_E_NOMEM, n, "out of memory");
	free(*out);
	*out = s;
	return 0;
}

int
policy_yval_get_bool(struct yval *v, const struct ydoc_node *n, int *out)
{
	if (policy_ydoc_node_is(n, "true"))
		*out = 1;
	else if (policy_ydoc_node_is(n, "false"))
		*out = 0;
	else
		return policy_yval_fail(v, RBA_E_SCHEMA, n,
					"'%s' must be true or false", v->path);
	return 0;
}

int
policy_yval_get_uint(struct yval *v, const struct ydoc_node *n, uint64_t lo,
		     uint64_t hi, uint64_t *out)
{
	uint64_t x = 0;
	int err = RBA_E_SCHEMA;

	if (n->type == YDOC_SCALAR && !policy_ydoc_node_is_null(n)) {
		err = policy_scalar_uint_parse(n->val, n->len, &x);
		if (err == 0 && (x < lo || x > hi))
			err = RBA_E_RANGE;
		if (err == RBA_E_SYNTAX)
			err = RBA_E_SCHEMA;
	}
	if (err)
		return policy_yval_fail(v, err, n,
					"'%s' must be an integer from %llu to %llu",
					v->path, (unsigned long long)lo,
					(unsigned long long)hi);
	*out = x;
	return 0;
}

/* "a number greater than 0", "a number in [0, 1)", ... */
static void
range_text(const struct yrange *r, char *out, size_t n)
{
	char lo[40], hi[40];

	policy_scalar_num_format(r->lo, lo);
	policy_scalar_num_format(r->hi, hi);
	/* Bounds are written as people write them: 0, 1, 0.5. */
	if (strcmp(lo + strlen(lo) - 2, ".0") == 0)
		lo[strlen(lo) - 2] = 0;
	if (strcmp(hi + strlen(hi) - 2, ".0") == 0)
		hi[strlen(hi) - 2] = 0;
	if (isinf(r->lo) && isinf(r->hi))
		snprintf(out, n, "a finite number");
	else if (isinf(r->hi))
		snprintf(out, n, "a number greater than %s%s",
			 r->lo_open ? "" : "or equal to ", lo);
	else if (isinf(r->lo))
		snprintf(out, n, "a number less than %s%s",
			 r->hi_open ? "" : "or equal to ", hi);
	else
		snprintf(out, n, "a number in %c%s, %s%c", r->lo_open ? '(' : '[',
			 lo, hi, r->hi_open ? ')' : ']');
}

static int
in_range(const struct yrange *r, double x)
{
	if (r->lo_open ? !(x > r->lo) : !(x >= r->lo))
		return 0;
	if (r->hi_open ? !(x < r->hi) : !(x <= r->hi))
		return 0;
	return 1;
}

static int
num_fail(struct yval *v, int err, const struct ydoc_node *n,
	 const struct yrange *r)
{
	char what[96];

	range_text(r, what, sizeof(what));
	return policy_yval_fail(v, err, n, "'%s' must be %s", v->path, what);
}

int
policy_yval_range_fail(struct yval *v, const struct ydoc_node *n,
		       const struct yrange *r)
{
	return num_fail(v, RBA_E_RANGE, n, r);
}

int
policy_yval_get_num(struct yval *v, const struct ydoc_node *n,
		    const struct yrange *r, double *out)
{
	double x = 0;
	int err = RBA_E_SCHEMA;

	if (n->type == YDOC_SCALAR && !policy_ydoc_node_is_null(n)) {
		err = policy_scalar_num_parse(n->val, n->len, &x);
		if (err == RBA_E_SYNTAX)
			err = RBA_E_SCHEMA;
		if (err == 0 && !in_range(r, x))
			err = RBA_E_RANGE;
	}
	if (err)
		return num_fail(v, err, n, r);
	*out = x;
	return 0;
}

int
policy_yval_schema(struct yval *v, const struct ydoc_node *n, const char *want)
{
	size_t stem = strlen(want), i;

	while (stem > 0 && is_digit(want[stem - 1]))
		stem--;
	if (policy_ydoc_node_is(n, want))
		return 0;
	/* The same kind at a later version: say so rather than "must be". */
	if (n->type == YDOC_SCALAR && n->len > stem && n->len - stem < 10 &&
	    memcmp(n->val, want, stem) == 0 && n->val[stem] != '0') {
		for (i = stem; i < n->len && is_digit(n->val[i]); i++)
			;
		if (i == n->len && strtoul(n->val + stem, NULL, 10) >
					   strtoul(want + stem, NULL, 10))
			return policy_yval_fail(
				v, RBA_E_NEWER, n,
				"'%s' %s is newer than this tool reads (%s)",
				v->path, n->val, want);
	}
	return policy_yval_fail(v, RBA_E_SCHEMA, n, "'%s' must be %s", v->path,
				want);
}

int
policy_yval_get_enum(struct yval *v, const struct ydoc_node *n,
		     const char *const *names, size_t nnames, int *out)
{
	char list[160];
	size_t i, o = 0;

	for (i = 0; i < nnames; i++) {
		if (policy_ydoc_node_is(n, names[i])) {
			*out = (int)i;
			return 0;
		}
	}
	list[0] = 0;
	for (i = 0; i < nnames && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s",
				      i == 0 ? "" : i + 1 == nnames ? " or " : ", ",
				      names[i]);
	return policy_yval_fail(v, RBA_E_SCHEMA, n, "'%s' must be %s", v->path,
				list);
}

int
policy_yval_get_digest(struct yval *v, const struct ydoc_node *n,
		       struct rba_digest *out)
{
	if (n->type != YDOC_SCALAR || n->len != RBA_DIGEST_TEXT_LEN ||
	    rba_digest_parse(n->val, out) != 0)
		return policy_yval_fail(
			v, RBA_E_SCHEMA, n,
			"'%s' must be a digest sha256:<64 lowercase hex digits>",
			v->path);
	return 0;
}

/* ---- numbers --------------------------------------------------------- */

/* nan, inf, infinity, .nan, .inf in any case with an optional sign. */
static int
nonfinite_word(const char *s, size_t n)
{
	size_t i = 0;

	if (n > 0 && (s[0] == '+' || s[0] == '-'))
		i++;
	if (i < n && s[i] == '.')
		i++;
	n -= i;
	s += i;
	return (n == 3 && (strncasecmp(s, "nan", 3) == 0 ||
			   strncasecmp(s, "inf", 3) == 0)) ||
	       (n == 8 && strncasecmp(s, "infinity", 8) == 0);
}

int
policy_scalar_num_parse(const char *s, size_t n, double *out)
{
	size_t i = 0, start, intd, fracd = 0, expd = 0;
	char buf[128], *end;
	locale_t old;
	double x;

	if (nonfinite_word(s, n))
		return RBA_E_RANGE;
	if (n == 0 || n >= sizeof(buf))
		return RBA_E_SYNTAX;
	if (s[i] == '+' || s[i] == '-')
		i++;
	start = i;
	while (i < n && is_digit(s[i]))
		i++;
	intd = i - start;
	if (intd > 1 && s[start] == '0')
		return RBA_E_SYNTAX;
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && is_digit(s[i])) {
			i++;
			fracd++;
		}
	}
	if (intd == 0 && fracd == 0)
		return RBA_E_SYNTAX;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		while (i < n && is_digit(s[i])) {
			i++;
			expd++;
		}
		if (expd == 0)
			return RBA_E_SYNTAX;
	}
	if (i != n)
		return RBA_E_SYNTAX;
	memcpy(buf, s, n);
	buf[n] = 0;
	old = c_locale_enter();
	errno = 0;
	x = strtod(buf, &end);
	c_locale_leave(old);
	if (end != buf + n)
		return RBA_E_SYNTAX;
	if (isinf(x) || isnan(x))
		return RBA_E_RANGE;
	*out = x == 0 ? 0.0 : x; /* -0 reads as 0: one value, one text */
	return 0;
}

int
policy_scalar_uint_parse(const char *s, size_t n, uint64_t *out)
{
	size_t i = 0, start;
	uint64_t x = 0;
	int neg = 0, over = 0;

	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i++;
	}
	start = i;
	for (; i < n && is_digit(s[i]); i++) {
		unsigned dgt = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - dgt) / 10)
			over = 1;
		else
			x = x * 10 + dgt;
	}
	if (i == start || i != n || (i - start > 1 && s[start] == '0'))
		return RBA_E_SYNTAX;
	if (over || (neg && x != 0))
		return RBA_E_RANGE;
	*out = x;
	return 0;
}

void
policy_scalar_num_format(double v, char out[40])
{
	char tmp[32], *e;
	locale_t old;
	int prec, ex, n;

	if (isnan(v)) {
		strcpy(out, ".nan");
		return;
	}
	if (isinf(v)) {
		strcpy(out, v < 0 ? "-.inf" : ".inf");
		return;
	}
	if (v == 0)
		v = 0.0;
	old = c_locale_enter();
	for (prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	c_locale_leave(old);
	e = strchr(tmp, 'e');
	if (e != NULL)
		*e = 0;
	n = snprintf(out, 40, "%.24s%s", tmp, strchr(tmp, '.') ? "" : ".0");
	if (e != NULL) {
		ex = atoi(e + 1);
		snprintf(out + n, 40 - (size_t)n, "e%c%d", ex < 0 ? '-' : '+',
			 ex < 0 ? -ex : ex);
	}
}

/* ---- the canonical writer -------------------------------------------- */

void
policy_ysink_put(struct ysink *s, const char *p, size_t n)
{
	if (s->buf != NULL)
		rba_buf_put(s->buf, p, n);
	if (s->h != NULL)
		rba_hasher_update(s->h, p, n);
}

void
policy_ysink_text(struct ysink *s, const char *str)
{
	policy_ysink_put(s, str, strlen(str));
}

void
policy_ysink_printf(struct ysink *s, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Only short fixed texts go through here; strings use ysink_str. */
	assert(n >= 0 && (size_t)n < sizeof(line));
	if (n > 0)
		policy_ysink_put(s, line,
				 (size_t)n < sizeof(line) ? (size_t)n
							  : sizeof(line) - 1);
}

void
policy_ysink_num(struct ysink *s, double v)
{
	char t[40];

	policy_scalar_num_format(v, t);
	policy_ysink_text(s, t);
}

/*
 * Plain only when every YAML reader takes the text as this same string:
 * it starts with a letter or '_', holds only [A-Za-z0-9_./-], and is not
 * a word YAML 1.1 reads as a boolean or null.
 */
static int
plain_ok(const char *str)
{
	static const char *const words[] = {"y", "n", "yes", "no", "on",
					    "off", "true", "false", "null"};
	const char *c;
	size_t i;

	if (!((str[0] >= 'A' && str[0] <= 'Z') ||
	      (str[0] >= 'a' && str[0] <= 'z') || str[0] == '_'))
		return 0;
	for (c = str; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' ||
		      *c == '/' || *c == '-'))
			return 0;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(str, words[i]) == 0)
			return 0;
	return 1;
}

void
policy_ysink_str(struct ysink *s, const char *str)
{
	const uint8_t *p = (const uint8_t *)str;
	size_t n = strlen(str), i = 0, len;
	char esc[16];
	uint32_t c;

	if (plain_ok(str)) {
		policy_ysink_put(s, str, n);
		return;
	}
	policy_ysink_put(s, "\"", 1);
	while (i < n) {
		len = rba_utf8_next(p + i, n - i, &c);
		if (len == 0) {
			/* Not text; cannot be written back exactly. */
			snprintf(esc, sizeof(esc), "\\x%02X", p[i]);
			policy_ysink_text(s, esc);
			i++;
			continue;
		}
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			policy_ysink_put(s, esc, 2);
		} else if (c == '\n') {
			policy_ysink_put(s, "\\n", 2);
		} else if (c == '\t') {
			policy_ysink_put(s, "\\t", 2);
		} else if (c == '\r') {
			policy_ysink_put(s, "\\r", 2);
		} else if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) {
			snprintf(esc, sizeof(esc), "\\x%02X", (unsigned)c);
			policy_ysink_text(s, esc);
		} else if (c == 0x2028 || c == 0x2029 || c == 0xFEFF ||
			   c == 0xFFFE || c == 0xFFFF) {
			/* Line breaks to a YAML reader, or not printable. */
			snprintf(esc, sizeof(esc), "\\u%04X", (unsigned)c);
			policy_ysink_text(s, esc);
		} else {
			policy_ysink_put(s, str + i, len);
		}
		i += len;
	}
	policy_ysink_put(s, "\"", 1);
}

void
policy_ysink_opt_str(struct ysink *s, const char *str)
{
	if (str == NULL)
		policy_ysink_text(s, "null");
	else
		policy_ysink_str(s, str);
}

void
policy_ysink_str_list(struct ysink *s, const char *indent, char *const *v,
		      size_t n)
{
	size_t i;

	if (n == 0) {
		policy_ysink_text(s, " []\n");
		return;
	}
	policy_ysink_text(s, "\n");
	for (i = 0; i < n; i++) {
		policy_ysink_text(s, indent);
		policy_ysink_text(s, "- ");
		policy_ysink_str(s, v[i]);
		policy_ysink_text(s, "\n");
	}
}
