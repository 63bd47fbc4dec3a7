/*
 * sample.c - the stored sample format: the layout record, the chunk
 * codec, looking one case up, walking and exporting.  Adding a CSV of
 * past cases is sample_add.c.
 */
#include "sample/sample.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/json.h"
#include "data/csv_write.h"
#include "sample/sample_mem.h"
#include "train/kernel.h"
#include "common/fileio.h"
#include "common/strv.h"

/* ---- small helpers ---------------------------------------------------- */

int
sample_mem_ensure(void *pp, size_t *cap, size_t n, size_t sz)
{
	void **p = pp;
	size_t nc;
	void *q;

	if (n <= *cap)
		return 0;
	nc = *cap ? *cap : 16;
	while (nc < n)
		nc *= 2;
	if (nc > SIZE_MAX / sz)
		return RBA_E_NOMEM;
	q = realloc(*p, nc * sz);
	if (q == NULL)
		return RBA_E_NOMEM;
	*p = q;
	*cap = nc;
	return 0;
}

/* ---- the layout record ------------------------------------------------ */

void
sample_layout_release(struct sample_layout *l)
{
	if (l == NULL)
		return;
	free(l->source);
	free(l->score_column);
	free(l->decision_column);
	free(l->id_column);
	rba_strv_free(l->classes, l->nclasses);
	rba_strv_free(l->names, l->ncols);
	memset(l, 0, sizeof(*l));
	l->id_col = l->score_col = l->decision_col = -1;
}

static void
put_escaped(struct rba_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\') {
			rba_buf_put(b, "\\\\", 2);
		} else if (*p == '\n') {
			rba_buf_put(b, "\\n", 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			char e[4] = { '\\', 'x', hex[*p >> 4], hex[*p & 15] };
			rba_buf_put(b, e, 4);
		} else {
			rba_buf_put_u8(b, *p);
		}
	}
}

static void
put_line(struct rba_buf *b, const char *key, const char *value)
{
	rba_buf_printf(b, "%s=", key);
	put_escaped(b, value);
	rba_buf_put_u8(b, '\n');
}

void
sample_layout_format(const struct sample_layout *l, struct rba_buf *out)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	rba_buf_printf(out, "%s\n", l->has_score_precision ? SAMPLE_LAYOUT_SCHEMA_V3
				  : l->has_source_digest  ? SAMPLE_LAYOUT_SCHEMA
							  : SAMPLE_LAYOUT_SCHEMA_V1);
	put_line(out, "source", l->source ? l->source : "");
	if (l->has_source_digest) {
		rba_digest_format(&l->source_digest, hex);
		put_line(out, "source_digest", hex);
	}
	put_line(out, "scores",
		 l->scored_by == SAMPLE_SCORED_COLUMN ? "column" : "model");
	rba_digest_format(&l->artifact, hex);
	put_line(out, "artifact", hex);
	if (l->score_column)
		put_line(out, "score_column", l->score_column);
	if (l->decision_column)
		put_line(out, "decision_column", l->decision_column);
	if (l->has_score_precision) {
		char t[RBA_JSON_NUM_MAX];
		rba_json_fmt_double(l->score_precision, t);
		put_line(out, "score_precision", t);
	}
	if (l->id_column)
		put_line(out, "id_column", l->id_column);
	if (l->positive == UINT32_MAX)
		put_line(out, "positive", "none");
	else
		rba_buf_printf(out, "positive=%u\n", l->positive);
	rba_buf_printf(out, "classes=%u\n", l->nclasses);
	for (uint32_t i = 0; i < l->nclasses; i++)
		put_line(out, "class", l->classes[i]);
	rba_buf_printf(out, "columns=%u\n", l->ncols);
	for (uint32_t i = 0; i < l->ncols; i++)
		put_line(out, "column", l->names[i]);
}

struct lp {
	const char *p, *end;
	unsigned long line;
	struct rba_detail *d;
	char key[32];
	char *value; /* malloc'd, unescaped */
};

static int
lp_fail(struct lp *s, const char *why)
{
	return rba_fail(s->d, RBA_E_CORRUPT, NULL, s->line, 0,
			"sample layout: %s", why);
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The next "key=value" line; 1 when there is one, 0 at the end. */
static int
lp_next(struct lp *s, int *err)
{
	const char *nl, *eq, *q;
	struct rba_buf b;
	size_t k;

	*err = 0;
	free(s->value);
	s->value = NULL;
	if (s->p >= s->end)
		return 0;
	s->line++;
	nl = memchr(s->p, '\n', (size_t)(s->end - s->p));
	if (nl == NULL) {
		*err = lp_fail(s, "missing final newline");
		return 0;
	}
	eq = memchr(s->p, '=', (size_t)(nl - s->p));
	if (eq == NULL || eq == s->p || (size_t)(eq - s->p) >= sizeof(s->key)) {
		*err = lp_fail(s, "a line is not key=value");
		return 0;
	}
	k = (size_t)(eq - s->p);
	memcpy(s->key, s->p, k);
	s->key[k] = 0;
	rba_buf_init(&b);
	for (q = eq + 1; q < nl; q++) {
		if (*q != '\\') {
			if ((unsigned char)*q < 0x20) {
				rba_buf_release(&b);
				*err = lp_fail(s, "control character");
				return 0;
			}
			rba_buf_put_u8(&b, (uint8_t)*q);
			continue;
		}
		if (q + 1 < nl && q[1] == '\\') {
			rba_buf_put_u8(&b, '\\');
			q++;
		} else if (q + 1 < nl && q[1] == 'n') {
			rba_buf_put_u8(&b, '\n');
			q++;
		} else if (q + 3 < nl && q[1] == 'x' && hexval(q[2]) >= 0 &&
			   hexval(q[3]) >= 0 && (hexval(q[2]) * 16 + hexval(q[3])) != 0) {
			rba_buf_put_u8(&b, (uint8_t)(hexval(q[2]) * 16 + hexval(q[3])));
			q += 3;
		} else {
			rba_buf_release(&b);
			*err = lp_fail(s, "bad escape");
			return 0;
		}
	}
	rba_buf_cstr(&b);
	if (rba_buf_status(&b) != 0) {
		rba_buf_release(&b);
		*err = RBA_E_NOMEM;
		return 0;
	}
	s->value = (char *)rba_buf_steal(&b, &k);
	s->p = nl + 1;
	return 1;
}

/* Reads the next line, which must have key; takes its value. */
static int
lp_want(struct lp *s, const char *key, int optional, char **out)
{
	const char *save = s->p;
	unsigned long line = s->line;
	int err;

	*out = NULL;
	if (!lp_next(s, &err)) {
		if (err)
			return err;
		if (optional)
			return 0;
		return lp_fail(s, "ends early");
	}
	if (strcmp(s->key, key) != 0) {
		if (optional) {
			s->p = save;
			s->line = line;
			return 0;
		}
		char why[96];
		snprintf(why, sizeof(why), "expected '%s', found '%s'", key, s->key);
		return lp_fail(s, why);
	}
	*out = s->value;
	s->value = NULL;
	return 0;
}

static int
lp_count(struct lp *s, const char *key, uint32_t max, uint32_t *out)
{
	char *v, *end;
	unsigned long n;
	int err = lp_want(s, key, 0, &v);

	if (err)
		return err;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end || errno || n > max) {
		free(v);
		return lp_fail(s, "bad count");
	}
	free(v);
	*out = (uint32_t)n;
	return 0;
}

long
sample_names_find(char *const *names, uint32_t n, const char *s)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (long)i;
	return -1;
}

/*
 * The layout's first line: the current tag, or v1's (*v1 set) or v3's
 * (*v3 set); *body gets the line after it.  0, RBA_E_NEWER for a tag of
 * a later version or RBA_E_CORRUPT.
 */
static int
lp_tag(const char *text, size_t n, const char **body, int *v1, int *v3,
       struct rba_detail *d)
{
	const char *nl = memchr(text, '\n', n);
	size_t tl = strlen(SAMPLE_LAYOUT_SCHEMA);

	/* Both tags have the same length: "rebuild-audit/sample/v" and one
	 * digit. */
	_Static_assert(sizeof(SAMPLE_LAYOUT_SCHEMA) == sizeof(SAMPLE_LAYOUT_SCHEMA_V1) &&
			       sizeof(SAMPLE_LAYOUT_SCHEMA) == sizeof(SAMPLE_LAYOUT_SCHEMA_V3),
		       "layout tags differ only in their version digit");
	if (nl != NULL && (size_t)(nl - text) == tl &&
	    memcmp(text, SAMPLE_LAYOUT_SCHEMA_V1, tl) == 0) {
		*v1 = 1;
	} else if (nl != NULL && (size_t)(nl - text) == tl &&
		   memcmp(text, SAMPLE_LAYOUT_SCHEMA_V3, tl) == 0) {
		*v3 = 1;
	} else if (nl == NULL || (size_t)(nl - text) != tl ||
		   memcmp(text, SAMPLE_LAYOUT_SCHEMA, tl) != 0) {
		if (nl != NULL && (size_t)(nl - text) > tl - 1 &&
		    memcmp(text, SAMPLE_LAYOUT_SCHEMA, tl - 1) == 0)
			return rba_fail(d, RBA_E_NEWER, NULL, 1, 0,
					"sample layout of a newer format");
		return rba_fail(d, RBA_E_CORRUPT, NULL, 1, 0,
				"sample layout: not %s", SAMPLE_LAYOUT_SCHEMA);
	}
	*body = nl + 1;
	return 0;
}

/* source, then source_digest (none in a v1 layout, required after). */
static int
lp_source(struct lp *s, struct sample_layout *out, int v1)
{
	char *v = NULL;
	int err;

	if ((err = lp_want(s, "source", 0, &out->source)) != 0)
		return err;
	/* Optional to the line reader so that each version's rule gets its
	 * own message. */
	if ((err = lp_want(s, "source_digest", 1, &v)) != 0)
		return err;
	if (v1 && v != NULL) {
		err = lp_fail(s, "source_digest in a v1 layout");
	} else if (!v1 && v == NULL) {
		s->line++;
		err = lp_fail(s, "missing source_digest");
	} else if (v != NULL) {
		if (rba_digest_parse(v, &out->source_digest) != 0)
			err = lp_fail(s, "bad source digest");
		else
			out->has_source_digest = 1;
	}
	free(v);
	return err;
}

/* scores, artifact, score_column, decision_column and score_precision
 * (in a v3 layout only, and there required). */
static int
lp_scoring(struct lp *s, struct sample_layout *out, int v3)
{
	char *v = NULL;
	int err;

	if ((err = lp_want(s, "scores", 0, &v)) != 0)
		goto out;
	if (strcmp(v, "model") == 0)
		out->scored_by = SAMPLE_SCORED_MODEL;
	else if (strcmp(v, "column") == 0)
		out->scored_by = SAMPLE_SCORED_COLUMN;
	else {
		err = lp_fail(s, "scores must be model or column");
		goto out;
	}
	free(v);
	if ((err = lp_want(s, "artifact", 0, &v)) != 0)
		goto out;
	if (rba_digest_parse(v, &out->artifact) != 0) {
		err = lp_fail(s, "bad artifact digest");
		goto out;
	}
	free(v);
	v = NULL;
	if ((err = lp_want(s, "score_column", 1, &out->score_column)) != 0 ||
	    (err = lp_want(s, "decision_column", 1, &out->decision_column)) != 0)
		goto out;
	if ((err = lp_want(s, "score_precision", 1, &v)) != 0)
		goto out;
	if ((v != NULL) != v3) {
		err = lp_fail(s, v3 ? "missing score_precision"
				    : "score_precision before layout v3");
		goto out;
	}
	if (v != NULL) {
		char *end;
		errno = 0;
		out->score_precision = strtod(v, &end);
		if (*v < '0' || *v > '9' || *end || errno ||
		    !(out->score_precision <= SAMPLE_MAX_SCORE_PRECISION) ||
		    out->score_column == NULL) {
			err = lp_fail(s, "bad score precision");
			goto out;
		}
		out->has_score_precision = 1;
	}
out:
	free(v);
	return err;
}

/* id_column and positive, and whether the columns agree with scores. */
static int
lp_positive(struct lp *s, struct sample_layout *out)
{
	char *v = NULL;
	int err;

	if ((err = lp_want(s, "id_column", 1, &out->id_column)) != 0 ||
	    (err = lp_want(s, "positive", 0, &v)) != 0)
		goto out;
	if ((out->scored_by == SAMPLE_SCORED_COLUMN) != (out->score_column != NULL) ||
	    (out->decision_column != NULL && out->score_column == NULL)) {
		err = lp_fail(s, "score and decision columns disagree with scores");
		goto out;
	}
	if (strcmp(v, "none") == 0) {
		out->positive = UINT32_MAX;
	} else {
		char *end;
		unsigned long pv;
		errno = 0;
		pv = strtoul(v, &end, 10);
		if (*v < '0' || *v > '9' || *end || errno || pv >= SAMPLE_MAX_SCORES) {
			err = lp_fail(s, "bad positive class");
			goto out;
		}
		out->positive = (uint32_t)pv;
	}
out:
	free(v);
	return err;
}

/* The classes and the columns, each counted first, then the end. */
static int
lp_names(struct lp *s, struct sample_layout *out)
{
	int err;

	if ((err = lp_count(s, "classes", SAMPLE_MAX_SCORES, &out->nclasses)) != 0)
		return err;
	if (out->nclasses < 2 ||
	    (out->positive != UINT32_MAX && out->positive >= out->nclasses))
		return lp_fail(s, "bad class count");
	out->classes = calloc(out->nclasses, sizeof(char *));
	if (out->classes == NULL)
		return RBA_E_NOMEM;
	for (uint32_t i = 0; i < out->nclasses; i++)
		if ((err = lp_want(s, "class", 0, &out->classes[i])) != 0)
			return err;
	if ((err = lp_count(s, "columns", SAMPLE_MAX_COLUMNS, &out->ncols)) != 0)
		return err;
	if (out->ncols == 0)
		return lp_fail(s, "no columns");
	out->names = calloc(out->ncols, sizeof(char *));
	if (out->names == NULL)
		return RBA_E_NOMEM;
	for (uint32_t i = 0; i < out->ncols; i++)
		if ((err = lp_want(s, "column", 0, &out->names[i])) != 0)
			return err;
	if (s->p != s->end) {
		s->line++;
		return lp_fail(s, "trailing lines");
	}
	return 0;
}

/* The id, score and decision columns found among the names. */
static int
lp_find_columns(struct lp *s, struct sample_layout *out)
{
	if (out->id_column &&
	    (out->id_col = sample_names_find(out->names, out->ncols, out->id_column)) < 0)
		return lp_fail(s, "the id column is not in the header");
	if (out->score_column &&
	    (out->score_col = sample_names_find(out->names, out->ncols,
						out->score_column)) < 0)
		return lp_fail(s, "the score column is not in the header");
	if (out->decision_column &&
	    (out->decision_col = sample_names_find(out->names, out->ncols,
						   out->decision_column)) < 0)
		return lp_fail(s, "the decision column is not in the header");
	return 0;
}

int
sample_layout_parse(const char *text, size_t n, struct sample_layout *out,
		    struct rba_detail *d)
{
	struct lp s = { text, text + n, 1, d, "", NULL };
	int err, v1 = 0, v3 = 0;

	memset(out, 0, sizeof(*out));
	out->id_col = out->score_col = out->decision_col = -1;
	if ((err = lp_tag(text, n, &s.p, &v1, &v3, d)) != 0)
		return err;
	if ((err = lp_source(&s, out, v1)) != 0 ||
	    (err = lp_scoring(&s, out, v3)) != 0 ||
	    (err = lp_positive(&s, out)) != 0 ||
	    (err = lp_names(&s, out)) != 0 ||
	    (err = lp_find_columns(&s, out)) != 0) {
		free(s.value);
		sample_layout_release(out);
		return err;
	}
	out->nscores = out->scored_by == SAMPLE_SCORED_MODEL ? out->nclasses : 1;
	free(s.value);
	return 0;
}

/* ---- chunks ----------------------------------------------------------- */

void
sample_chunk_init(struct sample_chunk *c)
{
	memset(c, 0, sizeof(*c));
}

void
sample_chunk_release(struct sample_chunk *c)
{
	struct sample_chunk_mem *m;

	if (c == NULL)
		return;
	m = c->mem;
	if (m != NULL) {
		for (size_t i = 0; i < m->cap_cols; i++) {
			free(m->cm[i].num);
			free(m->cm[i].exc_case);
			free(m->cm[i].exc_text);
			free(m->cm[i].levels);
			free(m->cm[i].codes);
		}
		free(m->cm);
		free(m->cols);
		free(m->ids);
		free(m->scores);
		free(m->decisions);
		free(m->dcodes);
		free(m->dcodes32);
		free(m);
	}
	memset(c, 0, sizeof(*c));
}

int
sample_chunk_reserve(struct sample_chunk *c, uint32_t ncases, uint32_t ncols,
	      uint32_t nscores)
{
	struct sample_chunk_mem *m = c->mem;
	size_t old;

	if (m == NULL) {
		m = c->mem = calloc(1, sizeof(*m));
		if (m == NULL)
			return RBA_E_NOMEM;
	}
	if (sample_mem_ensure(&m->ids, &m->cap_ids, ncases, sizeof(*m->ids)) ||
	    sample_mem_ensure(&m->scores, &m->cap_scores, (size_t)ncases * nscores,
		   sizeof(*m->scores)) ||
	    sample_mem_ensure(&m->dcodes, &m->cap_dcodes, ncases, sizeof(*m->dcodes)))
		return RBA_E_NOMEM;
	if (ncols > m->cap_cols) {
		struct sample_column *cols = realloc(m->cols, ncols * sizeof(*cols));
		if (cols == NULL)
			return RBA_E_NOMEM;
		m->cols = cols;
		struct sample_colmem *cm = realloc(m->cm, ncols * sizeof(*cm));
		if (cm == NULL)
			return RBA_E_NOMEM;
		m->cm = cm;
		old = m->cap_cols;
		memset(m->cm + old, 0, (ncols - old) * sizeof(*cm));
		m->cap_cols = ncols;
	}
	if (ncols > 0) /* m->cols is NULL until a column is reserved */
		memset(m->cols, 0, ncols * sizeof(*m->cols));
	c->ncases = ncases;
	c->ncols = ncols;
	c->nscores = nscores;
	c->ids = m->ids;
	c->scores = m->scores;
	c->decision_codes = m->dcodes;
	c->cols = m->cols;
	return 0;
}

struct dec {
	struct rba_cursor c;
	const uint8_t *base;
	struct rba_detail *d;
	int fmt; /* the chunk's format */
	int stored; /* numbers left in the chunk's bytes */
};

/* "sample chunk: <what>[ <how>]" at the current byte offset. */
static int
dec_fail(struct dec *x, const char *what, const char *how)
{
	size_t off = x->c.bad ? 0 : (size_t)(x->c.p - x->base);

	return rba_fail(x->d, RBA_E_CORRUPT, NULL, 0, off + 1,
			"sample chunk: %s%s%s", what, how ? " " : "",
			how ? how : "");
}

/*
 * Walks a u32-length block of n NUL-terminated strings, each between
 * minlen and maxlen bytes, exactly filling the block.  out (NULL: only
 * check) gets the n pointers.  *block (may be NULL) gets the block.
 */
static int
dec_strings(struct dec *x, uint32_t n, const char **out, size_t minlen,
	    size_t maxlen, const char *what, const char **block)
{
	uint32_t nbytes = rba_cursor_u32(&x->c);
	const uint8_t *p = rba_cursor_bytes(&x->c, nbytes);
	size_t at = 0;
	uint32_t i = 0;

	if (p == NULL)
		return dec_fail(x, what, "past the end");
	if (block != NULL)
		*block = (const char *)p;
	/* the NULs found eight bytes at a time (each string is short: a
	 * call a string would cost more than the search), the tail by byte */
	for (size_t w = 0; i < n; w += 8) {
		uint64_t v, zeros;
		if (w >= nbytes)
			return dec_fail(x, "too few", what);
		if (nbytes - w >= 8) {
			v = rba_get_u64le(p + w);
			/* the high bit of each byte that is 0, exactly */
			zeros = ~(((v & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) |
				  v) & 0x8080808080808080ull;
		} else {
			zeros = 0;
			for (size_t b = 0; w + b < nbytes; b++)
				if (p[w + b] == 0)
					zeros |= 0x80ull << (8 * b);
		}
		for (; zeros != 0 && i < n; zeros &= zeros - 1, i++) {
			size_t z = w + (size_t)__builtin_ctzll(zeros) / 8;
			size_t len = z - at;
			if (len < minlen || len > maxlen)
				return dec_fail(x, "bad length of", what);
			if (out != NULL)
				out[i] = (const char *)(p + at);
			at = z + 1;
		}
	}
	if (at != nbytes)
		return dec_fail(x, "extra bytes in", what);
	return 0;
}

/* The k-th string of a block dec_strings has checked. */
static const char *
nth_string(const char *block, uint32_t k)
{
	while (k-- > 0)
		block += strlen(block) + 1;
	return block;
}

/*
 * Numbers: a u8 representation, then n values of it.  Every value reads
 * back as exactly the double that was stored.
 */
enum num_repr { REPR_I8 = 1, REPR_I16 = 2, REPR_I32 = 3, REPR_F32 = 4,
		REPR_F64 = 5 };

static const size_t repr_size[] = { 0, 1, 2, 4, 4, 8 };

/* rba_get_u32le and rba_get_u64le inline: one load each. */
static inline uint32_t
num_le32(const uint8_t *p)
{
	uint32_t u;

	memcpy(&u, p, sizeof(u));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	u = __builtin_bswap32(u);
#endif
	return u;
}

static inline uint64_t
num_le64(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

static inline double
num_at(const uint8_t *p, uint8_t r, size_t i)
{
	uint32_t u;
	uint64_t w;
	float f;
	double v;

	switch (r) {
	case REPR_I8: return (int8_t)p[i];
	case REPR_I16: return (int16_t)(uint16_t)(p[2 * i] | (p[2 * i + 1] << 8));
	case REPR_I32: return (int32_t)num_le32(p + 4 * i);
	case REPR_F32:
		u = num_le32(p + 4 * i);
		memcpy(&f, &u, sizeof(f));
		return f;
	default:
		w = num_le64(p + 8 * i);
		memcpy(&v, &w, sizeof(v));
		return v;
	}
}

/* out[i] = num_at(p, r, from + i) for i below cnt, the representation
 * chosen once rather than per value. */
static inline __attribute__((always_inline)) void
nums_copy_body(const uint8_t *p, uint8_t r, size_t from, size_t cnt,
	       double *out)
{
	switch (r) {
	case REPR_I8:
		for (size_t i = 0; i < cnt; i++)
			out[i] = num_at(p, REPR_I8, from + i);
		break;
	case REPR_I16:
		for (size_t i = 0; i < cnt; i++)
			out[i] = num_at(p, REPR_I16, from + i);
		break;
	case REPR_I32:
		for (size_t i = 0; i < cnt; i++)
			out[i] = num_at(p, REPR_I32, from + i);
		break;
	case REPR_F32:
		for (size_t i = 0; i < cnt; i++)
			out[i] = num_at(p, REPR_F32, from + i);
		break;
	default:
		for (size_t i = 0; i < cnt; i++)
			out[i] = num_at(p, r, from + i);
		break;
	}
}

/* The conversions to double are exact: the widest vectors the CPU has
 * give the same values (the strict kernels' choice; RBA_STRICT_ISA
 * narrows it, for tests). */
typedef void nums_copy_fn(const uint8_t *p, uint8_t r, size_t from,
			  size_t cnt, double *out);
#define NUMS_COPY(SFX, ATTR)                                                   \
	ATTR static void nums_copy_##SFX(const uint8_t *p, uint8_t r,          \
					 size_t from, size_t cnt, double *out) \
	{                                                                      \
		nums_copy_body(p, r, from, cnt, out);                          \
	}
KERNEL_ISA_EACH(NUMS_COPY)

static void
nums_copy(const uint8_t *p, uint8_t r, size_t from, size_t cnt, double *out)
{
	/* chosen once; threads that race here store the same pointer */
	static nums_copy_fn *fn;
	nums_copy_fn *f = __atomic_load_n(&fn, __ATOMIC_RELAXED);

	if (f == NULL) {
		f = KERNEL_ISA_PICK(nums_copy);
		__atomic_store_n(&fn, f, __ATOMIC_RELAXED);
	}
	f(p, r, from, cnt, out);
}

#define FLOATS_LANES 16

/* out[i] = CONV(from + i) for i below cnt, in loops of a constant trip
 * count that the compiler vectorizes. */
#define FLOATS_LOOP(CONV)                                                      \
	do {                                                                   \
		size_t i_ = 0;                                                 \
		for (; i_ + FLOATS_LANES <= cnt; i_ += FLOATS_LANES)           \
			for (size_t j_ = i_; j_ < i_ + FLOATS_LANES; j_++)     \
				out[j_] = CONV(from + j_);                     \
		for (; i_ < cnt; i_++)                                         \
			out[i_] = CONV(from + i_);                             \
	} while (0)

#define FROM_F64(i) ((float)num[i])
#define FROM_I8(i) ((float)(int8_t)p[i])
#define FROM_I16(i) ((float)(int16_t)(uint16_t)(p[2 * (i)] | p[2 * (i) + 1] << 8))
#define FROM_I32(i) ((float)(int32_t)num_le32(p + 4 * (i)))
#define FROM_F32(i) ((float)num_at(p, REPR_F32, i))
#define FROM_REPR_F64(i) ((float)num_at(p, REPR_F64, i))

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
typedef int32_t fl_vi __attribute__((vector_size(32)));
typedef float fl_vf __attribute__((vector_size(32)));
typedef double fl_vd __attribute__((vector_size(64)));

/* FLOATS_LOOP for values stored little-endian as T (int32_t, float,
 * double), eight to a vector: the compiler leaves the byte loads of
 * num_le32 and num_le64 unvectorized.  __builtin_convertvector rounds
 * each lane as the scalar conversion does. */
#define FLOATS_WIDE(T, VT, CONV)                                               \
	do {                                                                   \
		size_t i_ = 0;                                                 \
		for (; i_ + 8 <= cnt; i_ += 8) {                               \
			VT w_;                                                 \
			fl_vf f_;                                              \
			memcpy(&w_, p + sizeof(T) * (from + i_), sizeof(w_)); \
			f_ = __builtin_convertvector(w_, fl_vf);               \
			memcpy(out + i_, &f_, sizeof(f_));                     \
		}                                                              \
		for (; i_ < cnt; i_++)                                         \
			out[i_] = CONV(from + i_);                             \
	} while (0)
#else
#define FLOATS_WIDE(T, VT, CONV) FLOATS_LOOP(CONV)
#endif

/*
 * out[i] = (float)num_at(p, r, from + i) for i below cnt, or (float)
 * num[from + i] where p is NULL.  An integer goes to float in one
 * rounding, of its exact value, as by way of the double it reads as
 * (every int32 is exactly a double): the same float.
 */
static inline __attribute__((always_inline)) void
floats_body(const double *restrict num, const uint8_t *restrict p, uint8_t r,
	    size_t from, size_t cnt, float *restrict out)
{
	if (p == NULL)
		FLOATS_LOOP(FROM_F64);
	else if (r == REPR_I8)
		FLOATS_LOOP(FROM_I8);
	else if (r == REPR_I16)
		FLOATS_LOOP(FROM_I16);
	else if (r == REPR_I32)
		FLOATS_WIDE(int32_t, fl_vi, FROM_I32);
	else if (r == REPR_F32)
		FLOATS_WIDE(float, fl_vf, FROM_F32);
	else
		FLOATS_WIDE(double, fl_vd, FROM_REPR_F64);
}

#define FLOATS(SFX, ATTR)                                                      \
	ATTR static void floats_##SFX(const struct sample_column *col,         \
				      uint32_t from, uint32_t cnt,             \
				      float *restrict out)                     \
	{                                                                      \
		floats_body(col->num, col->num != NULL ? NULL : col->raw,      \
			    col->repr, from, cnt, out);                        \
	}
KERNEL_ISA_EACH(FLOATS)

sample_floats_fn *
sample_floats_pick(void)
{
	return KERNEL_ISA_PICK(floats);
}

double
sample_column_num(const struct sample_column *col, uint32_t i)
{
	return col->num != NULL ? col->num[i] : num_at(col->raw, col->repr, i);
}

/*
 * n numbers, checked: floating values all finite (integers always are),
 * but for NaN where nan_ok; *nans (when not NULL) says whether one is
 * there.  *p gets the first value's bytes and *r their representation.
 */
static int
dec_numbers_at(struct dec *x, size_t n, const char *what, int nan_ok,
	       int *nans, const uint8_t **p, uint8_t *r)
{
	int any = 0;

	*r = rba_cursor_u8(&x->c);
	if (!rba_cursor_ok(&x->c) || *r < REPR_I8 || *r > REPR_F64)
		return dec_fail(x, "bad number representation of", what);
	*p = rba_cursor_bytes(&x->c, n * repr_size[*r]);
	if (*p == NULL)
		return dec_fail(x, what, "past the end");
	if (*r >= REPR_F32)
		for (size_t i = 0; i < n; i++) {
			double v = num_at(*p, *r, i);
			if (!isfinite(v) && !(nan_ok && v != v))
				return dec_fail(x, what, "hold a number that is not finite");
			any |= v != v;
		}
	if (nans != NULL)
		*nans = any;
	return 0;
}

/*
 * n numbers; values [from, from + cnt) go to out[0..cnt).  Checked as
 * dec_numbers_at checks them.
 */
static int
dec_numbers_nan(struct dec *x, size_t n, double *out, size_t from, size_t cnt,
		const char *what, int nan_ok, int *nans)
{
	const uint8_t *p;
	uint8_t r;
	int err = dec_numbers_at(x, n, what, nan_ok, nans, &p, &r);

	if (err == 0)
		nums_copy(p, r, from, cnt, out);
	return err;
}

static int
dec_numbers(struct dec *x, size_t n, double *out, size_t from, size_t cnt,
	    const char *what)
{
	return dec_numbers_nan(x, n, out, from, cnt, what, 0, NULL);
}

/*
 * n codes of a u8 width (one of widths), each below limit; code [from,
 * from + cnt) to out[0..cnt).
 */
static int
dec_codes(struct dec *x, size_t n, uint32_t limit, int max_width,
	  uint32_t *out, size_t from, size_t cnt, const char *what)
{
	uint8_t width = rba_cursor_u8(&x->c);
	const uint8_t *b;

	if (!rba_cursor_ok(&x->c) || (width != 1 && width != 2 && width != 4) ||
	    width > max_width)
		return dec_fail(x, "bad code width of", what);
	b = rba_cursor_bytes(&x->c, n * width);
	if (b == NULL)
		return dec_fail(x, what, "past the end");
	for (size_t i = 0; i < n; i++) {
		uint32_t v = width == 1 ? b[i]
			     : width == 2 ? (uint32_t)(b[2 * i] | (b[2 * i + 1] << 8))
					  : rba_get_u32le(b + 4 * i);
		if (v >= limit)
			return dec_fail(x, what, "hold a code out of range");
		if (i >= from && i - from < cnt)
			out[i - from] = v;
	}
	return 0;
}

/*
 * Starts x on the n bytes at p and reads the chunk's header: tag, format,
 * a case count of 1 to SAMPLE_CHUNK_CASES, and the column and score
 * counts.  0, or dec_fail's error.
 */
static int
dec_header(struct dec *x, const uint8_t *p, size_t n, struct rba_detail *d,
	   uint32_t *ncases, uint32_t *ncols, uint32_t *nscores)
{
	x->base = p;
	x->d = d;
	rba_cursor_init(&x->c, p, n);
	if (rba_cursor_u8(&x->c) != SAMPLE_CHUNK_TAG)
		return dec_fail(x, "bad type tag", NULL);
	x->fmt = rba_cursor_u8(&x->c);
	if (x->fmt != SAMPLE_CHUNK_FORMAT && x->fmt != SAMPLE_CHUNK_FORMAT_MISSING)
		return dec_fail(x, "unknown format version", NULL);
	*ncases = rba_cursor_u32(&x->c);
	*ncols = rba_cursor_u32(&x->c);
	*nscores = rba_cursor_u32(&x->c);
	if (!rba_cursor_ok(&x->c) || *ncases == 0 ||
	    *ncases > SAMPLE_CHUNK_CASES)
		return dec_fail(x, "bad case count", NULL);
	return 0;
}

/* What chunk_decode keeps of a chunk's ncases cases: every one, or with
 * only_id the one at index at (keep 1). */
struct dec_pick {
	uint32_t ncases, at, keep;
	const char *only_id;
};

/* The case ids, or with only_id the index of that one (pk->at). */
static int
dec_case_ids(struct dec *x, struct sample_chunk_mem *m, struct dec_pick *pk,
	     struct rba_detail *d)
{
	const char *block = NULL;
	uint32_t ncases = pk->ncases, at;
	int err;

	if (pk->only_id == NULL)
		return dec_strings(x, ncases, m->ids, 1, STORE_CASE_ID_MAX,
				   "case ids", NULL);
	if ((err = dec_strings(x, ncases, NULL, 1, STORE_CASE_ID_MAX,
			       "case ids", &block)))
		return err;
	for (at = 0; at < ncases; at++, block += strlen(block) + 1)
		if (strcmp(block, pk->only_id) == 0)
			break;
	if (at == ncases) {
		rba_detail_key(d, pk->only_id);
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"no case '%s' in this chunk", pk->only_id);
	}
	m->ids[0] = block;
	pk->at = at;
	return 0;
}

/* The decisions and each case's decision code. */
static int
dec_decisions(struct dec *x, const struct dec_pick *pk,
	      struct sample_chunk *out)
{
	struct sample_chunk_mem *m = out->mem;
	const char *only_id = pk->only_id, *block = NULL;
	uint32_t ncases = pk->ncases, ndec, code[1], *codes = code;
	int err;

	ndec = rba_cursor_u32(&x->c);
	if (!rba_cursor_ok(&x->c) || ndec == 0 || ndec > SAMPLE_MAX_DECISIONS ||
	    ndec > ncases)
		return dec_fail(x, "bad decision count", NULL);
	if (sample_mem_ensure(&m->decisions, &m->cap_dec, ndec, sizeof(*m->decisions)))
		return RBA_E_NOMEM;
	if ((err = dec_strings(x, ndec, only_id ? NULL : m->decisions, 0, SIZE_MAX,
			       "decisions", &block)))
		return err;
	if (only_id == NULL) {
		if (sample_mem_ensure(&m->dcodes32, &m->cap_dcodes32, ncases,
				      sizeof(uint32_t)))
			return RBA_E_NOMEM;
		codes = m->dcodes32;
	}
	if ((err = dec_codes(x, ncases, ndec, 2, codes, pk->at, pk->keep,
			     "decision codes")))
		return err;
	for (uint32_t i = 0; i < pk->keep; i++)
		m->dcodes[i] = (uint16_t)(only_id ? 0 : codes[i]);
	if (only_id != NULL)
		m->decisions[0] = nth_string(block, code[0]);
	out->ndecisions = only_id ? 1 : ndec;
	out->decisions = m->decisions;
	return 0;
}

/* A number column: the numbers, then the exception texts (each NaN kept
 * has one).  Where the chunk is read as stored (x->stored), the numbers
 * stay in its bytes. */
static int
dec_number_column(struct dec *x, const struct dec_pick *pk,
		  struct sample_column *col, struct sample_colmem *cm)
{
	const char *only_id = pk->only_id;
	uint32_t ncases = pk->ncases, at = pk->at, keep = pk->keep;
	uint32_t nexc, prev = 0, kept = 0;
	const uint8_t *p;
	uint8_t r;
	int err, nans;

	if ((err = dec_numbers_at(x, ncases, "numbers",
				  x->fmt == SAMPLE_CHUNK_FORMAT_MISSING, &nans,
				  &p, &r)))
		return err;
	col->raw = p + (size_t)at * repr_size[r];
	col->repr = r;
	col->num = NULL;
	if (!x->stored) {
		if (sample_mem_ensure(&cm->num, &cm->cap_num, keep, sizeof(double)))
			return RBA_E_NOMEM;
		nums_copy(p, r, at, keep, cm->num);
		col->num = cm->num;
	}
	nexc = rba_cursor_u32(&x->c);
	if (!rba_cursor_ok(&x->c) || nexc > ncases)
		return dec_fail(x, "bad exception count", NULL);
	if (sample_mem_ensure(&cm->exc_case, &cm->cap_exc, nexc ? nexc : 1,
			      sizeof(uint32_t)))
		return RBA_E_NOMEM;
	const char **et = realloc(cm->exc_text, cm->cap_exc * sizeof(char *));
	if (et == NULL)
		return RBA_E_NOMEM;
	cm->exc_text = et;
	for (uint32_t e = 0; e < nexc; e++) {
		uint32_t ci = rba_cursor_u32(&x->c);
		const uint8_t *z;
		if (!rba_cursor_ok(&x->c) || ci >= ncases ||
		    (e > 0 && ci <= prev))
			return dec_fail(x, "bad exception case", NULL);
		z = memchr(x->c.p, 0, x->c.left);
		if (z == NULL)
			return dec_fail(x, "exception text past the end", NULL);
		if (only_id == NULL || ci == at) {
			cm->exc_case[kept] = only_id ? 0 : ci;
			cm->exc_text[kept++] = (const char *)x->c.p;
		}
		rba_cursor_bytes(&x->c, (size_t)(z - x->c.p) + 1);
		prev = ci;
	}
	col->nexc = kept;
	col->exc_case = cm->exc_case;
	col->exc_text = cm->exc_text;
	/* a missing value keeps its text: each NaN has one (none is kept
	 * where the column holds none) */
	for (uint32_t i = 0, e = 0; nans && i < keep; i++) {
		double v = sample_column_num(col, i);
		if (v == v)
			continue;
		while (e < kept && col->exc_case[e] < i)
			e++;
		if (e == kept || col->exc_case[e] != i)
			return dec_fail(x, "a missing number", "has no text");
	}
	return 0;
}

/* A dictionary column: its levels, then each case's level code. */
static int
dec_dict_column(struct dec *x, const struct dec_pick *pk,
		struct sample_column *col, struct sample_colmem *cm)
{
	const char *only_id = pk->only_id, *block = NULL;
	uint32_t nl = rba_cursor_u32(&x->c);
	int err;

	if (!rba_cursor_ok(&x->c) || nl == 0 || nl > pk->ncases)
		return dec_fail(x, "bad level count", NULL);
	if (sample_mem_ensure(&cm->levels, &cm->cap_levels, only_id ? 1 : nl,
			      sizeof(char *)) ||
	    sample_mem_ensure(&cm->codes, &cm->cap_codes, pk->keep,
			      sizeof(uint32_t)))
		return RBA_E_NOMEM;
	if ((err = dec_strings(x, nl, only_id ? NULL : cm->levels, 0,
			       SIZE_MAX, "levels", &block)))
		return err;
	if ((err = dec_codes(x, pk->ncases, nl, 4, cm->codes, pk->at, pk->keep,
			     "level codes")))
		return err;
	if (only_id != NULL) {
		cm->levels[0] = nth_string(block, cm->codes[0]);
		cm->codes[0] = 0;
		nl = 1;
	}
	col->nlevels = nl;
	col->levels = cm->levels;
	col->codes = cm->codes;
	return 0;
}

/*
 * The decoder of both entry points: every byte of the chunk is checked
 * either way; with only_id, just that case is kept (a one-case chunk:
 * ncases 1, each dictionary reduced to the case's entry).
 */
static int
chunk_decode(const uint8_t *p, size_t n, uint32_t ncols, uint32_t nscores,
	     long id_col, const char *only_id, int stored,
	     struct sample_chunk *out, uint32_t *index, struct rba_detail *d)
{
	struct dec x;
	struct sample_chunk_mem *m;
	struct dec_pick pk;
	uint32_t ncases, k, ns;
	int err;

	if ((err = dec_header(&x, p, n, d, &ncases, &k, &ns)) != 0)
		return err;
	x.stored = stored;
	if (k != ncols || ns != nscores)
		return dec_fail(&x, "column or score count",
				"disagrees with the layout");
	/* Before anything is reserved: within the caps, and no more cases
	 * and scores than the bytes left can hold (an id takes two bytes
	 * at least, a score one). */
	if (ncols > SAMPLE_MAX_COLUMNS || nscores > SAMPLE_MAX_SCORES ||
	    (uint64_t)ncases * (2 + (uint64_t)nscores) > x.c.left)
		return dec_fail(&x, "column or score count",
				"is more than the chunk can hold");
	pk.ncases = ncases;
	pk.at = 0;
	pk.keep = only_id ? 1 : ncases;
	pk.only_id = only_id;
	if ((err = sample_chunk_reserve(out, pk.keep, ncols, nscores)) != 0)
		return err;
	m = out->mem;
	if ((err = dec_case_ids(&x, m, &pk, d)) != 0)
		return err;
	if (index != NULL)
		*index = pk.at;
	if ((err = dec_numbers(&x, (size_t)ncases * nscores, m->scores,
			       (size_t)pk.at * nscores, (size_t)pk.keep * nscores,
			       "scores")) ||
	    (err = dec_decisions(&x, &pk, out)))
		return err;
	for (k = 0; k < ncols; k++) {
		struct sample_column *col = &m->cols[k];
		uint8_t kind = rba_cursor_u8(&x.c);
		col->kind = kind;
		if (kind == SAMPLE_COL_IDS) {
			if ((long)k != id_col)
				return dec_fail(&x, "case ids in a column",
						"that is not the id column");
			continue;
		}
		if (kind == SAMPLE_COL_NUMBER)
			err = dec_number_column(&x, &pk, col, &m->cm[k]);
		else if (kind == SAMPLE_COL_DICT)
			err = dec_dict_column(&x, &pk, col, &m->cm[k]);
		else
			return dec_fail(&x, "unknown column kind", NULL);
		if (err != 0)
			return err;
	}
	if (!rba_cursor_ok(&x.c))
		return dec_fail(&x, "truncated", NULL);
	if (x.c.left != 0)
		return dec_fail(&x, "bytes after the last column", NULL);
	return 0;
}

int
sample_chunk_decode(const uint8_t *p, size_t n, uint32_t ncols,
		    uint32_t nscores, long id_col, struct sample_chunk *out,
		    struct rba_detail *d)
{
	return chunk_decode(p, n, ncols, nscores, id_col, NULL, 0, out, NULL, d);
}

int
sample_chunk_decode_stored(const uint8_t *p, size_t n, uint32_t ncols,
			   uint32_t nscores, long id_col,
			   struct sample_chunk *out, struct rba_detail *d)
{
	return chunk_decode(p, n, ncols, nscores, id_col, NULL, 1, out, NULL, d);
}

int
sample_chunk_ids(const uint8_t *p, size_t n, const char **ids,
		 uint32_t *ncases, struct rba_detail *d)
{
	struct dec x;
	uint32_t count, k, ns;
	int err;

	*ncases = 0;
	if ((err = dec_header(&x, p, n, d, &count, &k, &ns)) != 0)
		return err;
	*ncases = count;
	return dec_strings(&x, count, ids, 1, STORE_CASE_ID_MAX, "case ids", NULL);
}

int
sample_chunk_decode_case(const uint8_t *p, size_t n, uint32_t ncols,
			 uint32_t nscores, long id_col, const char *case_id,
			 struct sample_chunk *out, uint32_t *index,
			 struct rba_detail *d)
{
	return chunk_decode(p, n, ncols, nscores, id_col, case_id, 0, out, index,
			    d);
}

static void
put_cstrs(struct rba_buf *b, const char *const *s, uint32_t n)
{
	size_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		total += strlen(s[i]) + 1;
	rba_buf_put_u32(b, (uint32_t)total);
	for (uint32_t i = 0; i < n; i++)
		rba_buf_put(b, s[i], strlen(s[i]) + 1);
}

/* The narrowest representation that holds every value exactly. */
static int
num_repr(const double *v, size_t n)
{
	double lo = 0, hi = 0;
	int integral = 1, f32 = 1;

	for (size_t i = 0; i < n; i++) {
		if (v[i] != v[i]) { /* a missing value: a float, any width */
			integral = 0;
			continue;
		}
		if (integral && (v[i] != floor(v[i]) || (v[i] == 0 && signbit(v[i])) ||
				 fabs(v[i]) > 2147483647.0))
			integral = 0;
		if (f32 && (double)(float)v[i] != v[i])
			f32 = 0;
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (integral && lo >= -128 && hi <= 127)
		return REPR_I8;
	if (integral && lo >= -32768 && hi <= 32767)
		return REPR_I16;
	if (integral && lo >= -2147483648.0 && hi <= 2147483647.0)
		return REPR_I32;
	return f32 ? REPR_F32 : REPR_F64;
}

static void
put_numbers(struct rba_buf *b, const double *v, size_t n)
{
	int r = num_repr(v, n);
	uint8_t *p;

	rba_buf_put_u8(b, (uint8_t)r);
	if (rba_buf_reserve(b, n * repr_size[r]) != 0)
		return;
	p = b->p + b->len;
	for (size_t i = 0; i < n; i++) {
		float f;
		uint32_t u;
		uint64_t w;
		switch (r) {
		case REPR_I8: p[i] = (uint8_t)(int8_t)v[i]; break;
		case REPR_I16: {
			uint16_t h = (uint16_t)(int16_t)v[i];
			p[2 * i] = (uint8_t)h;
			p[2 * i + 1] = (uint8_t)(h >> 8);
			break;
		}
		case REPR_I32:
			rba_put_u32le(p + 4 * i, (uint32_t)(int32_t)v[i]);
			break;
		case REPR_F32:
			f = (float)v[i];
			memcpy(&u, &f, sizeof(u));
			rba_put_u32le(p + 4 * i, u);
			break;
		default:
			memcpy(&w, &v[i], sizeof(w));
			rba_put_u64le(p + 8 * i, w);
		}
	}
	b->len += n * repr_size[r];
}

void
sample_chunk_encode(const struct sample_chunk *c, struct rba_buf *out)
{
	int nan = 0;

	for (uint32_t k = 0; k < c->ncols && !nan; k++)
		if (c->cols[k].kind == SAMPLE_COL_NUMBER) {
			/* not a chunk decoded as stored */
			assert(c->cols[k].num != NULL);
			for (uint32_t i = 0; i < c->ncases && !nan; i++)
				nan = c->cols[k].num[i] != c->cols[k].num[i];
		}
	rba_buf_put_u8(out, SAMPLE_CHUNK_TAG);
	rba_buf_put_u8(out, nan ? SAMPLE_CHUNK_FORMAT_MISSING : SAMPLE_CHUNK_FORMAT);
	rba_buf_put_u32(out, c->ncases);
	rba_buf_put_u32(out, c->ncols);
	rba_buf_put_u32(out, c->nscores);
	put_cstrs(out, c->ids, c->ncases);
	put_numbers(out, c->scores, (size_t)c->ncases * c->nscores);
	rba_buf_put_u32(out, c->ndecisions);
	put_cstrs(out, c->decisions, c->ndecisions);
	rba_buf_put_u8(out, c->ndecisions <= 256 ? 1 : 2);
	for (uint32_t i = 0; i < c->ncases; i++) {
		if (c->ndecisions <= 256)
			rba_buf_put_u8(out, (uint8_t)c->decision_codes[i]);
		else
			rba_buf_put_u16(out, c->decision_codes[i]);
	}
	for (uint32_t k = 0; k < c->ncols; k++) {
		const struct sample_column *col = &c->cols[k];
		rba_buf_put_u8(out, (uint8_t)col->kind);
		if (col->kind == SAMPLE_COL_NUMBER) {
			put_numbers(out, col->num, c->ncases);
			rba_buf_put_u32(out, col->nexc);
			for (uint32_t e = 0; e < col->nexc; e++) {
				rba_buf_put_u32(out, col->exc_case[e]);
				rba_buf_put(out, col->exc_text[e],
					    strlen(col->exc_text[e]) + 1);
			}
		} else if (col->kind == SAMPLE_COL_DICT) {
			uint8_t width = col->nlevels <= 256 ? 1
					: col->nlevels <= 65536 ? 2 : 4;
			rba_buf_put_u32(out, col->nlevels);
			put_cstrs(out, col->levels, col->nlevels);
			rba_buf_put_u8(out, width);
			for (uint32_t i = 0; i < c->ncases; i++) {
				if (width == 1)
					rba_buf_put_u8(out, (uint8_t)col->codes[i]);
				else if (width == 2)
					rba_buf_put_u16(out, (uint16_t)col->codes[i]);
				else
					rba_buf_put_u32(out, col->codes[i]);
			}
		}
	}
}

const char *
sample_chunk_text(const struct sample_chunk *c, uint32_t col, uint32_t i,
		  char tmp[32])
{
	const struct sample_column *sc = &c->cols[col];
	size_t lo = 0, hi;

	if (sc->kind == SAMPLE_COL_IDS)
		return c->ids[i];
	if (sc->kind == SAMPLE_COL_DICT)
		return sc->levels[sc->codes[i]];
	hi = sc->nexc;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sc->exc_case[mid] == i)
			return sc->exc_text[mid];
		if (sc->exc_case[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	rba_json_fmt_double(sample_column_num(sc, i), tmp);
	return tmp;
}

long
sample_chunk_find(const struct sample_chunk *c, const char *id)
{
	for (uint32_t i = 0; i < c->ncases; i++)
		if (strcmp(c->ids[i], id) == 0)
			return (long)i;
	return -1;
}

/* ---- reading ---------------------------------------------------------- */

int
sample_layout_load(struct store_txn *txn, const char *version,
		   struct store_sample_info *info, struct sample_layout *layout,
		   struct rba_detail *d)
{
	int err;

	memset(layout, 0, sizeof(*layout));
	layout->id_col = layout->score_col = layout->decision_col = -1;
	err = store_sample_info(txn, version, info, d);
	if (err)
		return err;
	err = sample_layout_parse(info->columns ? info->columns : "",
				  info->columns ? strlen(info->columns) : 0,
				  layout, d);
	if (err)
		store_sample_info_release(info);
	return err;
}

/* Looks for one case id in every chunk, for a lookup that found none. */
struct scan {
	const char *id;
	const char **ids; /* SAMPLE_CHUNK_CASES */
	int64_t found;	  /* its chunk, or -1 */
};

#define SCAN_FOUND 0x53434e46 /* not a status code: stops the read */

static int
scan_chunk(void *ctx, uint32_t chunk_no, const uint8_t *p, size_t n)
{
	struct scan *s = ctx;
	uint32_t count;
	struct rba_detail d;

	if (sample_chunk_ids(p, n, s->ids, &count, &d) != 0)
		return 0; /* a malformed chunk is the audit's finding */
	for (uint32_t i = 0; i < count; i++)
		if (strcmp(s->ids[i], s->id) == 0) {
			s->found = chunk_no;
			return SCAN_FOUND;
		}
	return 0;
}

/*
 * The index has no entry for case_id: is it really not in the sample,
 * or is the index damaged?  Only the sealed chunks can say, so they are
 * read (and verified) until the case turns up.  A case that is in no
 * chunk is absent; one that is, is a damaged index.
 */
static int
case_absent(struct store_txn *txn, const char *version, const char *case_id,
	    struct rba_detail *d)
{
	struct scan s = { case_id, NULL, -1 };
	int err;

	s.ids = calloc(SAMPLE_CHUNK_CASES, sizeof(*s.ids));
	if (s.ids == NULL)
		return RBA_E_NOMEM;
	err = store_sample_read(txn, version, scan_chunk, &s, d);
	free(s.ids);
	if (err == SCAN_FOUND) {
		rba_detail_key(d, case_id);
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
				"tampered: the case index of version '%s' is "
				"damaged: case '%s' is in chunk %lld but the index "
				"does not find it (run 'rebuild-audit store check')",
				version, case_id, (long long)s.found);
	}
	if (err)
		return err;
	rba_detail_key(d, case_id);
	return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
			"no case '%s' in the sample of version '%s'", case_id,
			version);
}

int
sample_case_load(struct store_txn *txn, const char *version,
		 const struct sample_layout *layout, const char *case_id,
		 uint8_t **raw, struct sample_chunk *c, uint32_t *index,
		 struct rba_detail *d)
{
	uint32_t chunk_no, pos;
	size_t n;
	int err;

	*raw = NULL;
	err = store_sample_case_chunk(txn, version, case_id, &chunk_no, d);
	if (err == RBA_E_NOTFOUND)
		return case_absent(txn, version, case_id, d);
	if (err == RBA_E_CORRUPT) {
		/* An entry that does not decode: the index, not the case. */
		rba_detail_key(d, case_id);
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
				"tampered: the case index of version '%s' is "
				"damaged: the entry of case '%s' is malformed "
				"(run 'rebuild-audit store check')", version,
				case_id);
	}
	if (err)
		return err;
	err = store_sample_chunk_load(txn, version, chunk_no, raw, &n, d);
	if (err == 0)
		err = sample_chunk_decode_case(*raw, n, layout->ncols, layout->nscores,
					       layout->id_col, case_id, c, &pos, d);
	if (err == 0) {
		*index = 0;
		return 0;
	}
	if (err == RBA_E_NOTFOUND)
		/* The index names a chunk without the case: not as stored. */
		err = rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
			       "tampered: the case index of version '%s' is "
			       "damaged: it names chunk %u for case '%s', which "
			       "does not hold it (run 'rebuild-audit store check')",
			       version, chunk_no, case_id);
	free(*raw);
	*raw = NULL;
	return err;
}

struct walk {
	const struct sample_layout *l;
	struct sample_chunk c;
	int (*cb)(void *ctx, uint32_t chunk_no, const struct sample_chunk *c);
	void *ctx;
	struct rba_detail *d;
	int err; /* a decode error (the callback's own value passes as is) */
};

static int
walk_one(void *ctx, uint32_t chunk_no, const uint8_t *p, size_t n)
{
	struct walk *w = ctx;
	int err = sample_chunk_decode(p, n, w->l->ncols, w->l->nscores,
				      w->l->id_col, &w->c, w->d);

	if (err) {
		w->err = err;
		return err;
	}
	return w->cb(w->ctx, chunk_no, &w->c);
}

int
sample_walk(struct store_txn *txn, const char *version,
	    const struct sample_layout *layout,
	    int (*cb)(void *ctx, uint32_t chunk_no, const struct sample_chunk *c),
	    void *ctx, struct rba_detail *d)
{
	struct walk w;
	int err;

	memset(&w, 0, sizeof(w));
	w.l = layout;
	w.cb = cb;
	w.ctx = ctx;
	w.d = d;
	sample_chunk_init(&w.c);
	err = store_sample_read(txn, version, walk_one, &w, d);
	sample_chunk_release(&w.c);
	return err;
}

struct exporter {
	struct rba_output *out;
	int write;
	uint64_t cases;
	struct rba_buf line;
};

static int
export_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct exporter *x = ctx;
	char tmp[32];
	int err;

	(void)chunk_no;
	x->cases += c->ncases;
	if (!x->write)
		return 0;
	for (uint32_t i = 0; i < c->ncases; i++) {
		x->line.len = 0;
		for (uint32_t k = 0; k < c->ncols; k++) {
			const char *t = sample_chunk_text(c, k, i, tmp);

			if (k)
				rba_buf_put_u8(&x->line, ',');
			csv_cell_buf(&x->line, t, strlen(t));
		}
		rba_buf_put_u8(&x->line, '\n');
		if (rba_buf_status(&x->line) != 0)
			return RBA_E_NOMEM;
		if ((err = rba_output_write(x->out, x->line.p, x->line.len)) != 0)
			return err;
	}
	return 0;
}

static int
export_header(struct rba_output *out, const struct sample_layout *l)
{
	struct rba_buf b;
	int err;

	rba_buf_init(&b);
	for (uint32_t k = 0; k < l->ncols; k++) {
		if (k)
			rba_buf_put_u8(&b, ',');
		csv_cell_buf(&b, l->names[k], strlen(l->names[k]));
	}
	rba_buf_put_u8(&b, '\n');
	err = rba_buf_status(&b);
	if (err == 0)
		err = rba_output_write(out, b.p, b.len);
	rba_buf_release(&b);
	return err;
}

int
sample_export_output(struct store_txn *txn, const char *version,
		     struct rba_output *out, uint64_t *cases,
		     struct rba_detail *d)
{
	struct store_sample_info info;
	struct sample_layout l;
	struct exporter x;
	int err = 0;

	memset(&x, 0, sizeof(x));
	x.out = out;
	rba_buf_init(&x.line);
	if ((err = sample_layout_load(txn, version, &info, &l, d)) != 0)
		return err;
	/* What goes straight out cannot be taken back: verify everything
	 * before the first byte goes.  A temporary is put in place only by
	 * the caller's commit. */
	if (rba_output_direct(out))
		err = sample_walk(txn, version, &l, export_chunk, &x, d);
	/* Buffered: rba_output_write goes through the stream. */
	if (err == 0 && rba_output_stdio(out) == NULL)
		err = errno ? errno : RBA_E_NOMEM;
	if (err == 0) {
		x.write = 1;
		x.cases = 0;
		err = export_header(out, &l);
	}
	if (err == 0)
		err = sample_walk(txn, version, &l, export_chunk, &x, d);
	if (err != 0 && out->err != 0)
		err = rba_fail(d, out->err, out->path, 0, 0, "%s",
			       rba_strerror(out->err));
	if (err == 0 && cases != NULL)
		*cases = x.cases;
	rba_buf_release(&x.line);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	return err;
}

int
sample_export(struct store_txn *txn, const char *version, const char *out_path,
	      FILE *dash, uint64_t *cases, struct rba_detail *d)
{
	struct rba_output o = RBA_OUTPUT_INIT;
	int err = rba_output_open(&o, out_path, 0644, RBA_OUTPUT_FORCE, dash, d);

	if (err)
		return err;
	if ((err = sample_export_output(txn, version, &o, cases, d)) != 0) {
		rba_output_abort(&o);
		return err;
	}
	return rba_output_commit(&o, d);
}
