/* json.c - the JSON writer (compact or pretty) and reader. */
#include "common/json.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numfmt.h"

size_t
rba_json_fmt_double(double v, char out[RBA_JSON_NUM_MAX])
{
	int n = 0;

	if (isnan(v))
		return (size_t)snprintf(out, 32, "nan");
	if (isinf(v))
		return (size_t)snprintf(out, 32, v < 0 ? "-inf" : "inf");
	/* Integers print exactly with %.0f; -0 keeps its sign for round trip. */
	/* (an integer below 2^53 has at most 16 digits: %.17g prints it
	 * as %.0f does; rba_fmt_g gives printf's bytes, numfmt.h) */
	if (v == floor(v) && fabs(v) < 9007199254740992.0 &&
	    !(v == 0 && signbit(v)))
		return rba_fmt_g(v, 17, out);
	for (int prec = 15; prec <= 17; prec++) {
		n = (int)rba_fmt_g(v, prec, out);
		if (prec == 17 || strtod(out, NULL) == v)
			break;
	}
	return (size_t)n;
}

/*
 * The escape for byte c, or NULL when c is copied as it is: what RFC 8259
 * requires and nothing more (see json.h).  u has room for "\\u00XX".
 */
static const char *
escape(unsigned char c, char u[7])
{
	static const char hex[] = "0123456789abcdef";

	if (c >= 0x20 && c != '"' && c != '\\')
		return NULL;
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	default:
		memcpy(u, "\\u00", 4);
		u[4] = hex[c >> 4];
		u[5] = hex[c & 15];
		u[6] = 0;
		return u;
	}
}

void
rba_json_put_strn(struct rba_buf *b, const char *s, size_t n)
{
	size_t start = 0;

	assert(s != NULL || n == 0);
	rba_buf_put_u8(b, '"');
	for (size_t i = 0; i < n; i++) {
		char u[7];
		const char *esc = escape((unsigned char)s[i], u);
		if (esc == NULL)
			continue;
		rba_buf_put(b, s + start, i - start);
		start = i + 1;
		rba_buf_put(b, esc, strlen(esc));
	}
	rba_buf_put(b, s + start, n - start);
	rba_buf_put_u8(b, '"');
}

void
rba_json_put_str(struct rba_buf *b, const char *s)
{
	rba_json_put_strn(b, s, strlen(s));
}

void
rba_json_put_num(struct rba_buf *b, double v)
{
	char t[RBA_JSON_NUM_MAX];
	size_t n;

	if (!isfinite(v)) {
		rba_buf_put(b, "null", 4);
		return;
	}
	n = rba_json_fmt_double(v, t);
	rba_buf_put(b, t, n);
}

void
rba_json_put_key(struct rba_buf *b, const char *key)
{
	rba_json_put_str(b, key);
	rba_buf_put(b, ": ", 2);
}

/* ---- reading ---------------------------------------------------------- */

struct jp {
	const char *p;
	size_t n, i;
	struct rba_detail *d;
	unsigned flags; /* RBA_JSON_* of rba_json_parse_flags */
};

static int
jp_fail(struct jp *j, int err, const char *why)
{
	return rba_fail(j->d, err, NULL, 1, j->i + 1, "%s", why);
}

/*
 * Object keys seen so far, for refusing one given twice.  An object of
 * at most JP_LINEAR_KEYS members (every object of an XGBoost model, of
 * a record this tool writes) is searched member by member; past that
 * an open-addressing table of member indexes + 1 takes over, so that
 * an object of a million keys costs a million probes, not their square.
 */
#define JP_LINEAR_KEYS 16

struct jp_keys {
	uint32_t *slot; /* member index + 1; 0 empty */
	size_t nslot;	/* power of two, at least twice the members */
};

static uint64_t
jp_key_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

/* Puts member i of v (its key not yet in the table) in t's slots. */
static void
jp_keys_put(struct jp_keys *t, const struct rba_json_value *v, size_t i)
{
	size_t m = t->nslot - 1, at = (size_t)jp_key_hash(v->keys[i]) & m;

	while (t->slot[at] != 0)
		at = (at + 1) & m;
	t->slot[at] = (uint32_t)(i + 1);
}

/* Doubles t's slots (or makes the first) for v's n members. */
static int
jp_keys_grow(struct jp_keys *t, const struct rba_json_value *v)
{
	size_t want = t->nslot ? t->nslot * 2 : 4 * JP_LINEAR_KEYS;
	uint32_t *s;

	while (want < 2 * v->n)
		want *= 2;
	if (v->n >= UINT32_MAX || (s = calloc(want, sizeof(*s))) == NULL)
		return RBA_E_NOMEM;
	free(t->slot);
	t->slot = s;
	t->nslot = want;
	for (size_t i = 0; i + 1 < v->n; i++)
		jp_keys_put(t, v, i);
	return 0;
}

/*
 * Whether the last member's key of object v (n members) is the key of
 * an earlier one; keys are compared as the getters compare them, up to
 * their first NUL.  0 (new: recorded), 1 (given twice), RBA_E_NOMEM.
 */
static int
jp_keys_seen(struct jp_keys *t, const struct rba_json_value *v)
{
	const char *key = v->keys[v->n - 1];
	size_t m, at;
	int err;

	if (v->n <= JP_LINEAR_KEYS) {
		for (size_t i = 0; i + 1 < v->n; i++)
			if (strcmp(v->keys[i], key) == 0)
				return 1;
		return 0;
	}
	if (2 * v->n > t->nslot && (err = jp_keys_grow(t, v)) != 0)
		return err;
	m = t->nslot - 1;
	for (at = (size_t)jp_key_hash(key) & m; t->slot[at] != 0; at = (at + 1) & m)
		if (strcmp(v->keys[t->slot[at] - 1], key) == 0)
			return 1;
	t->slot[at] = (uint32_t)v->n;
	return 0;
}

/*
 * The refusal of a key given twice, at the byte offset `at` of its
 * opening quote: the key as text, a byte below 0x20, DEL, a quote or a
 * backslash as \xHH, cut at 64 bytes; d->key the same text.
 */
static int
jp_fail_twice(struct jp *j, const char *key, size_t at)
{
	char shown[64 * 4 + 4];
	size_t o = 0, k;

	for (k = 0; key[k] != 0 && k < 64; k++) {
		unsigned char c = (unsigned char)key[k];
		if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\')
			o += (size_t)snprintf(shown + o, sizeof(shown) - o,
					      "\\x%02x", c);
		else
			shown[o++] = (char)c;
	}
	if (key[k] != 0)
		o += (size_t)snprintf(shown + o, sizeof(shown) - o, "...");
	shown[o] = 0;
	rba_detail_key(j->d, shown);
	return rba_fail(j->d, RBA_E_SYNTAX, NULL, 1, at + 1,
			"duplicate key '%s'", shown);
}

static void
jp_ws(struct jp *j)
{
	while (j->i < j->n && (j->p[j->i] == ' ' || j->p[j->i] == '\t' ||
			       j->p[j->i] == '\n' || j->p[j->i] == '\r'))
		j->i++;
}

static int
hex4(struct jp *j, uint32_t *out)
{
	uint32_t v = 0;

	if (j->n - j->i < 4)
		return jp_fail(j, RBA_E_SYNTAX, "short \\u escape");
	for (int k = 0; k < 4; k++) {
		char c = j->p[j->i++];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return jp_fail(j, RBA_E_SYNTAX, "bad \\u escape");
	}
	*out = v;
	return 0;
}

static void
put_utf8(struct rba_buf *b, uint32_t cp)
{
	if (cp < 0x80) {
		rba_buf_put_u8(b, (uint8_t)cp);
	} else if (cp < 0x800) {
		rba_buf_put_u8(b, (uint8_t)(0xc0 | (cp >> 6)));
		rba_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		rba_buf_put_u8(b, (uint8_t)(0xe0 | (cp >> 12)));
		rba_buf_put_u8(b, (uint8_t)(0x80 | ((cp >> 6) & 0x3f)));
		rba_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3f)));
	} else {
		rba_buf_put_u8(b, (uint8_t)(0xf0 | (cp >> 18)));
		rba_buf_put_u8(b, (uint8_t)(0x80 | ((cp >> 12) & 0x3f)));
		rba_buf_put_u8(b, (uint8_t)(0x80 | ((cp >> 6) & 0x3f)));
		rba_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3f)));
	}
}

/* A string after its opening quote, into a malloc'd C string. */
static int
jp_string(struct jp *j, char **out, size_t *len)
{
	struct rba_buf b;
	int err = 0;

	rba_buf_init(&b);
	for (;;) {
		unsigned char c;
		if (j->i >= j->n) {
			err = jp_fail(j, RBA_E_SYNTAX, "unterminated string");
			break;
		}
		c = (unsigned char)j->p[j->i++];
		if (c == '"')
			break;
		if (c < 0x20) {
			j->i--;
			err = jp_fail(j, RBA_E_SYNTAX, "control character in a string");
			break;
		}
		if (c != '\\') {
			rba_buf_put_u8(&b, c);
			continue;
		}
		if (j->i >= j->n) {
			err = jp_fail(j, RBA_E_SYNTAX, "unterminated string");
			break;
		}
		c = (unsigned char)j->p[j->i++];
		switch (c) {
		case '"': case '\\': case '/': rba_buf_put_u8(&b, c); break;
		case 'b': rba_buf_put_u8(&b, '\b'); break;
		case 'f': rba_buf_put_u8(&b, '\f'); break;
		case 'n': rba_buf_put_u8(&b, '\n'); break;
		case 'r': rba_buf_put_u8(&b, '\r'); break;
		case 't': rba_buf_put_u8(&b, '\t'); break;
		case 'u': {
			uint32_t cp, lo;
			if ((err = hex4(j, &cp)) != 0)
				break;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (j->n - j->i < 2 || j->p[j->i] != '\\' ||
				    j->p[j->i + 1] != 'u') {
					err = jp_fail(j, RBA_E_SYNTAX, "lone surrogate");
					break;
				}
				j->i += 2;
				if ((err = hex4(j, &lo)) != 0)
					break;
				if (lo < 0xdc00 || lo >= 0xe000) {
					err = jp_fail(j, RBA_E_SYNTAX, "lone surrogate");
					break;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				err = jp_fail(j, RBA_E_SYNTAX, "lone surrogate");
				break;
			}
			put_utf8(&b, cp);
			break;
		}
		default:
			err = jp_fail(j, RBA_E_SYNTAX, "bad escape in a string");
		}
		if (err)
			break;
	}
	if (err == 0 && (err = rba_buf_status(&b)) == 0) {
		rba_buf_cstr(&b);
		if ((err = rba_buf_status(&b)) == 0) {
			*len = b.len;
			*out = (char *)rba_buf_steal(&b, len);
			if (*out == NULL) {
				/* An empty buffer was never allocated. */
				*out = calloc(1, 1);
				if (*out == NULL)
					err = RBA_E_NOMEM;
			}
		}
	}
	rba_buf_release(&b);
	return err;
}

static int jp_value(struct jp *j, struct rba_json_value *v, int depth);

static int
jp_push(struct rba_json_value *v, size_t *cap, int with_key)
{
	if (v->n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 4;
	struct rba_json_value *it = realloc(v->items, nc * sizeof(*it));
	if (it == NULL)
		return RBA_E_NOMEM;
	v->items = it;
	if (with_key) {
		char **k = realloc(v->keys, nc * sizeof(*k));
		if (k == NULL)
			return RBA_E_NOMEM;
		v->keys = k;
	}
	*cap = nc;
	return 0;
}

static int
jp_container(struct jp *j, struct rba_json_value *v, int depth, int object)
{
	struct jp_keys seen = { NULL, 0 };
	size_t cap = 0;
	int err;

	v->type = object ? RBA_JSON_OBJECT : RBA_JSON_ARRAY;
	jp_ws(j);
	if (j->i < j->n && j->p[j->i] == (object ? '}' : ']')) {
		j->i++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		size_t klen, kat = 0;
		jp_ws(j);
		if (object) {
			if (j->i >= j->n || j->p[j->i] != '"') {
				err = jp_fail(j, RBA_E_SYNTAX, "expected a key");
				break;
			}
			kat = j->i++;
			if ((err = jp_string(j, &key, &klen)) != 0)
				break;
			jp_ws(j);
			if (j->i >= j->n || j->p[j->i] != ':') {
				free(key);
				err = jp_fail(j, RBA_E_SYNTAX, "expected ':'");
				break;
			}
			j->i++;
		}
		if ((err = jp_push(v, &cap, object)) != 0) {
			free(key);
			break;
		}
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		if (object)
			v->keys[v->n] = key;
		v->n++;
		/* RFC 8259 leaves a repeated name to the reader: XGBoost
		 * takes the last, a getter here the first, so a file with
		 * one means two things, and is refused. */
		if (object && (err = jp_keys_seen(&seen, v)) != 0) {
			if (err == 1)
				err = jp_fail_twice(j, key, kat);
			break;
		}
		if ((err = jp_value(j, &v->items[v->n - 1], depth + 1)) != 0)
			break;
		jp_ws(j);
		if (j->i < j->n && j->p[j->i] == ',') {
			j->i++;
			continue;
		}
		if (j->i < j->n && j->p[j->i] == (object ? '}' : ']')) {
			j->i++;
			err = 0;
			break;
		}
		err = jp_fail(j, RBA_E_SYNTAX,
			      object ? "expected ',' or '}'" : "expected ',' or ']'");
		break;
	}
	free(seen.slot);
	return err;
}

static int
jp_number(struct jp *j, struct rba_json_value *v)
{
	size_t s = j->i, digits = 0;
	char tmp[64];

	if (j->i < j->n && j->p[j->i] == '-')
		j->i++;
	if (j->i < j->n && j->p[j->i] == '0') {
		j->i++;
		digits = 1;
	} else {
		while (j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9')
			j->i++, digits++;
	}
	if (digits == 0)
		return jp_fail(j, RBA_E_SYNTAX, "unexpected character");
	if (j->i < j->n && j->p[j->i] == '.') {
		j->i++;
		digits = 0;
		while (j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9')
			j->i++, digits++;
		if (digits == 0)
			return jp_fail(j, RBA_E_SYNTAX, "digits expected after '.'");
	}
	if (j->i < j->n && (j->p[j->i] == 'e' || j->p[j->i] == 'E')) {
		j->i++;
		if (j->i < j->n && (j->p[j->i] == '+' || j->p[j->i] == '-'))
			j->i++;
		digits = 0;
		while (j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9')
			j->i++, digits++;
		if (digits == 0)
			return jp_fail(j, RBA_E_SYNTAX, "digits expected in exponent");
	}
	if (j->i - s >= sizeof(tmp))
		return jp_fail(j, RBA_E_LIMIT, "number too long");
	memcpy(tmp, j->p + s, j->i - s);
	tmp[j->i - s] = 0;
	v->type = RBA_JSON_NUMBER;
	v->num = strtod(tmp, NULL);
	v->numf = strtof(tmp, NULL);
	return 0;
}

static int
jp_word(struct jp *j, const char *w)
{
	size_t n = strlen(w);

	if (j->n - j->i < n || memcmp(j->p + j->i, w, n) != 0)
		return jp_fail(j, RBA_E_SYNTAX, "unexpected character");
	j->i += n;
	return 0;
}

/*
 * XGBoost's words for the numbers JSON has not (RBA_JSON_NONFINITE):
 * NaN, Infinity, -Infinity.  1 when one is at j's place (consumed, v
 * that number), else 0.
 */
static int
jp_nonfinite(struct jp *j, struct rba_json_value *v)
{
	static const struct {
		const char *w;
		size_t n;
		int sign; /* 0: NaN */
	} words[] = { { "NaN", 3, 0 }, { "Infinity", 8, 1 }, { "-Infinity", 9, -1 } };
	char c = j->p[j->i];

	if (!(j->flags & RBA_JSON_NONFINITE) || (c != 'N' && c != 'I' && c != '-'))
		return 0;
	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
		size_t n = words[k].n;
		if (j->n - j->i < n || memcmp(j->p + j->i, words[k].w, n) != 0)
			continue;
		j->i += n;
		v->type = RBA_JSON_NUMBER;
		v->num = words[k].sign == 0 ? (double)NAN
					    : words[k].sign * (double)INFINITY;
		v->numf = (float)v->num;
		return 1;
	}
	return 0;
}

static int
jp_value(struct jp *j, struct rba_json_value *v, int depth)
{
	if (depth > RBA_JSON_MAX_DEPTH)
		return jp_fail(j, RBA_E_LIMIT, "nesting too deep");
	jp_ws(j);
	if (j->i >= j->n)
		return jp_fail(j, RBA_E_SYNTAX, "unexpected end");
	if (jp_nonfinite(j, v))
		return 0;
	switch (j->p[j->i]) {
	case '{':
		j->i++;
		return jp_container(j, v, depth, 1);
	case '[':
		j->i++;
		return jp_container(j, v, depth, 0);
	case '"':
		j->i++;
		v->type = RBA_JSON_STRING;
		return jp_string(j, &v->str, &v->len);
	case 't':
		v->type = RBA_JSON_TRUE;
		return jp_word(j, "true");
	case 'f':
		v->type = RBA_JSON_FALSE;
		return jp_word(j, "false");
	case 'n':
		v->type = RBA_JSON_NULL;
		return jp_word(j, "null");
	default:
		return jp_number(j, v);
	}
}

int
rba_json_parse(const char *text, size_t n, struct rba_json_value *out,
	   struct rba_detail *d)
{
	return rba_json_parse_flags(text, n, 0, out, d);
}

int
rba_json_parse_flags(const char *text, size_t n, unsigned flags,
		     struct rba_json_value *out, struct rba_detail *d)
{
	struct jp j = { text, n, 0, d, flags };
	int err;

	memset(out, 0, sizeof(*out));
	if (n > RBA_JSON_MAX_TEXT)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"json text over %u bytes", RBA_JSON_MAX_TEXT);
	err = jp_value(&j, out, 0);
	if (err == 0) {
		jp_ws(&j);
		if (j.i != j.n)
			err = jp_fail(&j, RBA_E_SYNTAX, "trailing characters");
	}
	if (err)
		rba_json_release(out);
	return err;
}

void
rba_json_release(struct rba_json_value *v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < v->n; i++) {
		rba_json_release(&v->items[i]);
		if (v->keys != NULL)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

const struct rba_json_value *
rba_json_get(const struct rba_json_value *v, const char *key)
{
	if (v == NULL || v->type != RBA_JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->items[i];
	return NULL;
}

const char *
rba_json_get_str(const struct rba_json_value *v, const char *key)
{
	const struct rba_json_value *m = rba_json_get(v, key);

	return m != NULL && m->type == RBA_JSON_STRING ? m->str : NULL;
}

double
rba_json_get_num(const struct rba_json_value *v, const char *key, double def)
{
	const struct rba_json_value *m = rba_json_get(v, key);

	return m != NULL && m->type == RBA_JSON_NUMBER ? m->num : def;
}

/* ---- reading by path ------------------------------------------------------ */

const struct rba_json_value *
rba_json_path(const struct rba_json_value *v, const char *path)
{
	while (v != NULL && *path) {
		const char *dot = strchr(path, '.');
		size_t k = dot != NULL ? (size_t)(dot - path) : strlen(path);
		const struct rba_json_value *o = v;

		v = NULL;
		if (o->type == RBA_JSON_OBJECT)
			for (size_t i = 0; i < o->n; i++)
				if (strncmp(o->keys[i], path, k) == 0 &&
				    o->keys[i][k] == '\0') {
					v = &o->items[i];
					break;
				}
		path += k + (dot != NULL);
	}
	return v;
}

void
rba_json_rd_init(struct rba_json_rd *r, const struct rba_json_value *root,
		 const char *what, struct rba_detail *d)
{
	memset(r, 0, sizeof(*r));
	r->root = root;
	r->what = what;
	r->d = d;
	r->want = "";
}

const char *
rba_json_want_name(enum rba_json_want want, unsigned flags)
{
	static const char *const names[][2] = {
		{ "a value", "a value or null" },
		{ "a string", "a string or null" },
		{ "a number", "a number or null" },
		{ "true or false", "true, false or null" },
		{ "an array", "an array or null" },
		{ "an object", "an object or null" },
	};

	return names[want][(flags & RBA_JSON_NULL_OK) != 0];
}

static int
want_ok(const struct rba_json_value *v, enum rba_json_want want,
	unsigned flags)
{
	if (v->type == RBA_JSON_NULL && (flags & RBA_JSON_NULL_OK))
		return 1;
	switch (want) {
	case RBA_JSON_WANT_ANY: return 1;
	case RBA_JSON_WANT_STR: return v->type == RBA_JSON_STRING;
	case RBA_JSON_WANT_NUM: return v->type == RBA_JSON_NUMBER;
	case RBA_JSON_WANT_BOOL:
		return v->type == RBA_JSON_TRUE || v->type == RBA_JSON_FALSE;
	case RBA_JSON_WANT_ARR: return v->type == RBA_JSON_ARRAY;
	case RBA_JSON_WANT_OBJ: return v->type == RBA_JSON_OBJECT;
	}
	return 0;
}

/*
 * The path of node want below v ("predicate.results.flipped_cases[3]"),
 * appended to out (cap bytes, cut there), found by walking the tree:
 * only for a diagnostic.  1 when found.
 */
static int
path_of(const struct rba_json_value *v, const struct rba_json_value *want,
	char *out, size_t cap, int depth)
{
	size_t len = strlen(out);

	if (v == want)
		return 1;
	if (depth > RBA_JSON_MAX_DEPTH ||
	    (v->type != RBA_JSON_OBJECT && v->type != RBA_JSON_ARRAY))
		return 0;
	for (size_t i = 0; i < v->n; i++) {
		if (v->type == RBA_JSON_OBJECT)
			snprintf(out + len, cap - len, "%s%s", len ? "." : "",
				 v->keys[i]);
		else
			snprintf(out + len, cap - len, "[%zu]", i);
		if (path_of(&v->items[i], want, out, cap, depth + 1))
			return 1;
		out[len] = '\0';
	}
	return 0;
}

/* r->path: path below v, named from r->root (v's own path cut at 95
 * bytes, as the report has always cut it). */
static void
rd_path(struct rba_json_rd *r, const struct rba_json_value *v,
	const char *path)
{
	char at[96] = "";

	if (v != NULL && v != r->root && r->root != NULL)
		path_of(r->root, v, at, sizeof(at), 0);
	if (path == NULL)
		path = "";
	snprintf(r->path, sizeof(r->path), "%s%s%s", at,
		 at[0] && path[0] ? "." : "", path);
}

/* The first failure's reason in r->d: "WHAT: " and msg. */
static void
rd_reason(struct rba_json_rd *r, const char *msg)
{
	if (r->d == NULL)
		return;
	rba_detail_clear(r->d);
	if (r->what != NULL)
		rba_fail(r->d, r->err, NULL, 0, 0, "%s: %s", r->what, msg);
	else
		rba_fail(r->d, r->err, NULL, 0, 0, "%s", msg);
}

const struct rba_json_value *
rba_json_rd_at(struct rba_json_rd *r, const struct rba_json_value *v,
	       const char *path, enum rba_json_want want, unsigned flags)
{
	const struct rba_json_value *m;
	char msg[RBA_JSON_PATH_MAX + 64];

	if (r->err && !(flags & RBA_JSON_QUIET))
		return NULL;
	if (v == NULL)
		v = r->root;
	m = rba_json_path(v, path);
	if (m != NULL && want_ok(m, want, flags))
		return m;
	if ((flags & RBA_JSON_QUIET) || r->err ||
	    (m == NULL && (flags & RBA_JSON_OPTIONAL)))
		return NULL;
	r->err = RBA_E_SCHEMA;
	rd_path(r, v, path);
	r->want = rba_json_want_name(want, flags);
	snprintf(msg, sizeof(msg), "'%s' is %s, not %s", r->path,
		 m == NULL ? "missing" : "of another type", r->want);
	rd_reason(r, msg);
	return NULL;
}

int
rba_json_rd_fail(struct rba_json_rd *r, int err,
		 const struct rba_json_value *v, const char *path,
		 const char *fmt, ...)
{
	char why[320], msg[RBA_JSON_PATH_MAX + 330];
	va_list ap;

	if (r->err)
		return r->err;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	r->err = err;
	r->want = "";
	if (v != NULL) {
		rd_path(r, v, path);
		snprintf(msg, sizeof(msg), "'%s' %s", r->path, why);
	} else {
		r->path[0] = '\0';
		snprintf(msg, sizeof(msg), "%s", why);
	}
	rd_reason(r, msg);
	return r->err;
}

/* ---- the writer ---------------------------------------------------------- */

void
rba_json_w_init(struct rba_json_w *w, struct rba_buf *b)
{
	memset(w, 0, sizeof(*w));
	w->b = b;
}

void
rba_json_w_init_pretty(struct rba_json_w *w, struct rba_buf *b)
{
	rba_json_w_init(w, b);
	w->pretty = 1;
}

/* A new line and the indentation of the current depth (pretty only). */
static void
w_newline(struct rba_json_w *w)
{
	rba_buf_put_u8(w->b, '\n');
	for (int i = 0; i < w->depth; i++)
		rba_buf_put(w->b, "  ", 2);
}

/* Whether what is written next at the current depth is pretty: not
 * inside an inline container. */
static int
w_pretty(const struct rba_json_w *w)
{
	return w->pretty && (w->inline_depth == 0 || w->depth < w->inline_depth);
}

/*
 * The separator before any member but the first (", " compact; ","
 * and a new line pretty, which starts the first on a line too), and the
 * key: members of objects have keys, items of arrays and the root not.
 */
static void
w_item(struct rba_json_w *w, const char *key)
{
	int pretty = w_pretty(w);

	if (w->depth > 0) {
		if (!w->first[w->depth])
			rba_buf_put(w->b, pretty ? "," : ", ", pretty ? 1 : 2);
		w->first[w->depth] = 0;
		if (pretty)
			w_newline(w);
	}
	if (key != NULL)
		rba_json_put_key(w->b, key);
}

void
rba_json_w_open(struct rba_json_w *w, const char *key, char c)
{
	assert(c == '{' || c == '[');
	assert(w->depth < RBA_JSON_W_DEPTH);
	w_item(w, key);
	rba_buf_put_u8(w->b, (uint8_t)c);
	w->depth++;
	w->first[w->depth] = 1;
}

void
rba_json_w_open_inline(struct rba_json_w *w, const char *key, char c)
{
	assert(w->inline_depth == 0);
	rba_json_w_open(w, key, c);
	w->inline_depth = w->depth;
}

void
rba_json_w_close(struct rba_json_w *w, char c)
{
	int empty, pretty;

	assert(c == '}' || c == ']');
	assert(w->depth > 0);
	pretty = w_pretty(w);
	if (w->depth == w->inline_depth)
		w->inline_depth = 0;
	empty = w->first[w->depth];
	w->depth--;
	/* pretty: the closing character on a line of its own, unless the
	 * container is empty ({} and []) */
	if (pretty && !empty)
		w_newline(w);
	rba_buf_put_u8(w->b, (uint8_t)c);
}

void
rba_json_w_strn(struct rba_json_w *w, const char *key, const char *s,
		size_t n)
{
	w_item(w, key);
	if (s == NULL)
		rba_buf_put(w->b, "null", 4);
	else
		rba_json_put_strn(w->b, s, n);
}

void
rba_json_w_str(struct rba_json_w *w, const char *key, const char *s)
{
	rba_json_w_strn(w, key, s, s != NULL ? strlen(s) : 0);
}

void
rba_json_w_num(struct rba_json_w *w, const char *key, double v)
{
	w_item(w, key);
	rba_json_put_num(w->b, v);
}

void
rba_json_w_u64(struct rba_json_w *w, const char *key, uint64_t v)
{
	w_item(w, key);
	rba_buf_printf(w->b, "%llu", (unsigned long long)v);
}

void
rba_json_w_bool(struct rba_json_w *w, const char *key, int v)
{
	w_item(w, key);
	if (v)
		rba_buf_put(w->b, "true", 4);
	else
		rba_buf_put(w->b, "false", 5);
}

void
rba_json_w_digest(struct rba_json_w *w, const char *key,
		  const struct rba_digest *dg, int has)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	if (has)
		rba_digest_format(dg, hex);
	rba_json_w_str(w, key, has ? hex : NULL);
}

void
rba_json_w_raw(struct rba_json_w *w, const char *key, const char *text,
	       size_t n)
{
	w_item(w, key);
	rba_buf_put(w->b, text, n);
}

void
rba_json_w_value(struct rba_json_w *w, const char *key,
		 const struct rba_json_value *v)
{
	switch (v->type) {
	case RBA_JSON_NULL: rba_json_w_str(w, key, NULL); break;
	case RBA_JSON_FALSE: rba_json_w_bool(w, key, 0); break;
	case RBA_JSON_TRUE: rba_json_w_bool(w, key, 1); break;
	case RBA_JSON_NUMBER: rba_json_w_num(w, key, v->num); break;
	case RBA_JSON_STRING: rba_json_w_strn(w, key, v->str, v->len); break;
	case RBA_JSON_ARRAY:
	case RBA_JSON_OBJECT:
		rba_json_w_open(w, key, v->type == RBA_JSON_ARRAY ? '[' : '{');
		for (size_t i = 0; i < v->n; i++)
			rba_json_w_value(w, v->type == RBA_JSON_OBJECT ? v->keys[i]
								       : NULL,
					 &v->items[i]);
		rba_json_w_close(w, v->type == RBA_JSON_ARRAY ? ']' : '}');
		break;
	}
}
