/*
 * sample.c - audit samples: the layout record, the chunk format, adding
 * a CSV of past cases, looking one case up, walking and exporting.
 */
#include "audit/sample.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/score.h"
#include "common/fileio.h"
#include "common/json.h"
#include "rebuild/artifact.h"

/* ---- small helpers ---------------------------------------------------- */

/* Makes *p hold at least n elements of size sz; 0 or RBA_E_NOMEM. */
static int
ensure(void *pp, size_t *cap, size_t n, size_t sz)
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

static void
free_strv(char **v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
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
	free_strv(l->classes, l->nclasses);
	free_strv(l->names, l->ncols);
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

	rba_buf_printf(out, "%s\n", SAMPLE_LAYOUT_SCHEMA);
	put_line(out, "source", l->source ? l->source : "");
	put_line(out, "scores",
		 l->scored_by == SAMPLE_SCORED_COLUMN ? "column" : "model");
	rba_digest_format(&l->artifact, hex);
	put_line(out, "artifact", hex);
	if (l->score_column)
		put_line(out, "score_column", l->score_column);
	if (l->decision_column)
		put_line(out, "decision_column", l->decision_column);
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

static long
name_index(char *const *names, uint32_t n, const char *s)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (long)i;
	return -1;
}

int
sample_layout_parse(const char *text, size_t n, struct sample_layout *out,
		    struct rba_detail *d)
{
	struct lp s = { text, text + n, 1, d, "", NULL };
	const char *nl = memchr(text, '\n', n);
	size_t tl = strlen(SAMPLE_LAYOUT_SCHEMA);
	char *v = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	out->id_col = out->score_col = out->decision_col = -1;
	if (nl == NULL || (size_t)(nl - text) != tl ||
	    memcmp(text, SAMPLE_LAYOUT_SCHEMA, tl) != 0) {
		if (nl != NULL && (size_t)(nl - text) > tl - 1 &&
		    memcmp(text, SAMPLE_LAYOUT_SCHEMA, tl - 1) == 0)
			return rba_fail(d, RBA_E_NEWER, NULL, 1, 0,
					"sample layout of a newer format");
		return rba_fail(d, RBA_E_CORRUPT, NULL, 1, 0,
				"sample layout: not %s", SAMPLE_LAYOUT_SCHEMA);
	}
	s.p = nl + 1;
	if ((err = lp_want(&s, "source", 0, &out->source)) != 0)
		goto fail;
	if ((err = lp_want(&s, "scores", 0, &v)) != 0)
		goto fail;
	if (strcmp(v, "model") == 0)
		out->scored_by = SAMPLE_SCORED_MODEL;
	else if (strcmp(v, "column") == 0)
		out->scored_by = SAMPLE_SCORED_COLUMN;
	else {
		err = lp_fail(&s, "scores must be model or column");
		goto fail;
	}
	free(v);
	if ((err = lp_want(&s, "artifact", 0, &v)) != 0)
		goto fail;
	if (rba_digest_parse(v, &out->artifact) != 0) {
		err = lp_fail(&s, "bad artifact digest");
		goto fail;
	}
	free(v);
	v = NULL;
	if ((err = lp_want(&s, "score_column", 1, &out->score_column)) != 0 ||
	    (err = lp_want(&s, "decision_column", 1, &out->decision_column)) != 0 ||
	    (err = lp_want(&s, "id_column", 1, &out->id_column)) != 0 ||
	    (err = lp_want(&s, "positive", 0, &v)) != 0)
		goto fail;
	if ((out->scored_by == SAMPLE_SCORED_COLUMN) != (out->score_column != NULL) ||
	    (out->decision_column != NULL && out->score_column == NULL)) {
		err = lp_fail(&s, "score and decision columns disagree with scores");
		goto fail;
	}
	if (strcmp(v, "none") == 0) {
		out->positive = UINT32_MAX;
	} else {
		char *end;
		unsigned long pv;
		errno = 0;
		pv = strtoul(v, &end, 10);
		if (*v < '0' || *v > '9' || *end || errno || pv >= SAMPLE_MAX_SCORES) {
			err = lp_fail(&s, "bad positive class");
			goto fail;
		}
		out->positive = (uint32_t)pv;
	}
	free(v);
	v = NULL;
	if ((err = lp_count(&s, "classes", SAMPLE_MAX_SCORES, &out->nclasses)) != 0)
		goto fail;
	if (out->nclasses < 2 ||
	    (out->positive != UINT32_MAX && out->positive >= out->nclasses)) {
		err = lp_fail(&s, "bad class count");
		goto fail;
	}
	out->classes = calloc(out->nclasses, sizeof(char *));
	if (out->classes == NULL) {
		err = RBA_E_NOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < out->nclasses; i++)
		if ((err = lp_want(&s, "class", 0, &out->classes[i])) != 0)
			goto fail;
	if ((err = lp_count(&s, "columns", SAMPLE_MAX_COLUMNS, &out->ncols)) != 0)
		goto fail;
	if (out->ncols == 0) {
		err = lp_fail(&s, "no columns");
		goto fail;
	}
	out->names = calloc(out->ncols, sizeof(char *));
	if (out->names == NULL) {
		err = RBA_E_NOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < out->ncols; i++)
		if ((err = lp_want(&s, "column", 0, &out->names[i])) != 0)
			goto fail;
	if (s.p != s.end) {
		s.line++;
		err = lp_fail(&s, "trailing lines");
		goto fail;
	}
	if (out->id_column &&
	    (out->id_col = name_index(out->names, out->ncols, out->id_column)) < 0)
		err = lp_fail(&s, "the id column is not in the header");
	else if (out->score_column &&
		 (out->score_col = name_index(out->names, out->ncols,
					      out->score_column)) < 0)
		err = lp_fail(&s, "the score column is not in the header");
	else if (out->decision_column &&
		 (out->decision_col = name_index(out->names, out->ncols,
						 out->decision_column)) < 0)
		err = lp_fail(&s, "the decision column is not in the header");
	if (err)
		goto fail;
	out->nscores = out->scored_by == SAMPLE_SCORED_MODEL ? out->nclasses : 1;
	free(s.value);
	return 0;
fail:
	free(v);
	free(s.value);
	sample_layout_release(out);
	return err;
}

/* ---- chunks ----------------------------------------------------------- */

struct colmem {
	double *num;
	size_t cap_num;
	uint32_t *exc_case;
	const char **exc_text;
	size_t cap_exc;
	const char **levels;
	size_t cap_levels;
	uint32_t *codes;
	size_t cap_codes;
};

struct sample_chunk_mem {
	const char **ids;
	size_t cap_ids;
	double *scores;
	size_t cap_scores;
	const char **decisions;
	size_t cap_dec;
	uint16_t *dcodes;
	size_t cap_dcodes;
	uint32_t *dcodes32; /* decoding scratch */
	size_t cap_dcodes32;
	struct sample_column *cols;
	struct colmem *cm;
	size_t cap_cols;
};

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

/* Makes room for ncases x ncols in c's storage. */
static int
chunk_reserve(struct sample_chunk *c, uint32_t ncases, uint32_t ncols,
	      uint32_t nscores)
{
	struct sample_chunk_mem *m = c->mem;
	size_t old;

	if (m == NULL) {
		m = c->mem = calloc(1, sizeof(*m));
		if (m == NULL)
			return RBA_E_NOMEM;
	}
	if (ensure(&m->ids, &m->cap_ids, ncases, sizeof(*m->ids)) ||
	    ensure(&m->scores, &m->cap_scores, (size_t)ncases * nscores,
		   sizeof(*m->scores)) ||
	    ensure(&m->dcodes, &m->cap_dcodes, ncases, sizeof(*m->dcodes)))
		return RBA_E_NOMEM;
	if (ncols > m->cap_cols) {
		struct sample_column *cols = realloc(m->cols, ncols * sizeof(*cols));
		if (cols == NULL)
			return RBA_E_NOMEM;
		m->cols = cols;
		struct colmem *cm = realloc(m->cm, ncols * sizeof(*cm));
		if (cm == NULL)
			return RBA_E_NOMEM;
		m->cm = cm;
		old = m->cap_cols;
		memset(m->cm + old, 0, (ncols - old) * sizeof(*cm));
		m->cap_cols = ncols;
	}
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

	if (p == NULL)
		return dec_fail(x, what, "past the end");
	if (block != NULL)
		*block = (const char *)p;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *z = memchr(p + at, 0, nbytes - at);
		size_t len;
		if (z == NULL)
			return dec_fail(x, "too few", what);
		len = (size_t)(z - (p + at));
		if (len < minlen || len > maxlen)
			return dec_fail(x, "bad length of", what);
		if (out != NULL)
			out[i] = (const char *)(p + at);
		at += len + 1;
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

static double
num_at(const uint8_t *p, uint8_t r, size_t i)
{
	uint32_t u;
	uint64_t w;
	float f;
	double v;

	switch (r) {
	case REPR_I8: return (int8_t)p[i];
	case REPR_I16: return (int16_t)(uint16_t)(p[2 * i] | (p[2 * i + 1] << 8));
	case REPR_I32: return (int32_t)rba_get_u32le(p + 4 * i);
	case REPR_F32:
		u = rba_get_u32le(p + 4 * i);
		memcpy(&f, &u, sizeof(f));
		return f;
	default:
		w = rba_get_u64le(p + 8 * i);
		memcpy(&v, &w, sizeof(v));
		return v;
	}
}

/*
 * n numbers; values [from, from + cnt) go to out[0..cnt).  Floating
 * values are all checked finite (integers always are).
 */
static int
dec_numbers(struct dec *x, size_t n, double *out, size_t from, size_t cnt,
	    const char *what)
{
	uint8_t r = rba_cursor_u8(&x->c);
	const uint8_t *p;

	if (!rba_cursor_ok(&x->c) || r < REPR_I8 || r > REPR_F64)
		return dec_fail(x, "bad number representation of", what);
	p = rba_cursor_bytes(&x->c, n * repr_size[r]);
	if (p == NULL)
		return dec_fail(x, what, "past the end");
	if (r >= REPR_F32)
		for (size_t i = 0; i < n; i++)
			if (!isfinite(num_at(p, r, i)))
				return dec_fail(x, what, "hold a number that is not finite");
	for (size_t i = 0; i < cnt; i++)
		out[i] = num_at(p, r, from + i);
	return 0;
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
 * The decoder of both entry points: every byte of the chunk is checked
 * either way; with only_id, just that case is kept (a one-case chunk:
 * ncases 1, each dictionary reduced to the case's entry).
 */
static int
chunk_decode(const uint8_t *p, size_t n, uint32_t ncols, uint32_t nscores,
	     long id_col, const char *only_id, struct sample_chunk *out,
	     uint32_t *index, struct rba_detail *d)
{
	struct dec x;
	struct sample_chunk_mem *m;
	const char *block;
	uint32_t ncases, k, ns, ndec, keep, at = 0;
	int err;

	x.base = p;
	x.d = d;
	rba_cursor_init(&x.c, p, n);
	if (rba_cursor_u8(&x.c) != SAMPLE_CHUNK_TAG)
		return dec_fail(&x, "bad type tag", NULL);
	if (rba_cursor_u8(&x.c) != SAMPLE_CHUNK_FORMAT)
		return dec_fail(&x, "unknown format version", NULL);
	ncases = rba_cursor_u32(&x.c);
	k = rba_cursor_u32(&x.c);
	ns = rba_cursor_u32(&x.c);
	if (!rba_cursor_ok(&x.c) || ncases == 0 || ncases > SAMPLE_CHUNK_CASES)
		return dec_fail(&x, "bad case count", NULL);
	if (k != ncols || ns != nscores)
		return dec_fail(&x, "column or score count",
				"disagrees with the layout");
	keep = only_id ? 1 : ncases;
	if ((err = chunk_reserve(out, keep, ncols, nscores)) != 0)
		return err;
	m = out->mem;
	if (only_id == NULL) {
		if ((err = dec_strings(&x, ncases, m->ids, 1, STORE_CASE_ID_MAX,
				       "case ids", NULL)))
			return err;
	} else {
		if ((err = dec_strings(&x, ncases, NULL, 1, STORE_CASE_ID_MAX,
				       "case ids", &block)))
			return err;
		for (at = 0; at < ncases; at++, block += strlen(block) + 1)
			if (strcmp(block, only_id) == 0)
				break;
		if (at == ncases) {
			rba_detail_key(d, only_id);
			return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
					"no case '%s' in this chunk", only_id);
		}
		m->ids[0] = block;
	}
	if (index != NULL)
		*index = at;
	if ((err = dec_numbers(&x, (size_t)ncases * nscores, m->scores,
			       (size_t)at * nscores, (size_t)keep * nscores, "scores")))
		return err;
	ndec = rba_cursor_u32(&x.c);
	if (!rba_cursor_ok(&x.c) || ndec == 0 || ndec > SAMPLE_MAX_DECISIONS ||
	    ndec > ncases)
		return dec_fail(&x, "bad decision count", NULL);
	if (ensure(&m->decisions, &m->cap_dec, ndec, sizeof(*m->decisions)))
		return RBA_E_NOMEM;
	if ((err = dec_strings(&x, ndec, only_id ? NULL : m->decisions, 0, SIZE_MAX,
			       "decisions", &block)))
		return err;
	{
		uint32_t code[1], *codes = code;
		if (only_id == NULL) {
			if (ensure(&m->dcodes32, &m->cap_dcodes32, ncases, sizeof(uint32_t)))
				return RBA_E_NOMEM;
			codes = m->dcodes32;
		}
		if ((err = dec_codes(&x, ncases, ndec, 2, codes, at, keep, "decision codes")))
			return err;
		for (uint32_t i = 0; i < keep; i++)
			m->dcodes[i] = (uint16_t)(only_id ? 0 : codes[i]);
		if (only_id != NULL)
			m->decisions[0] = nth_string(block, code[0]);
	}
	out->ndecisions = only_id ? 1 : ndec;
	out->decisions = m->decisions;
	for (k = 0; k < ncols; k++) {
		struct sample_column *col = &m->cols[k];
		struct colmem *cm = &m->cm[k];
		uint8_t kind = rba_cursor_u8(&x.c);
		col->kind = kind;
		if (kind == SAMPLE_COL_IDS) {
			if ((long)k != id_col)
				return dec_fail(&x, "case ids in a column",
						"that is not the id column");
			continue;
		}
		if (kind == SAMPLE_COL_NUMBER) {
			uint32_t nexc, prev = 0, kept = 0;
			if (ensure(&cm->num, &cm->cap_num, keep, sizeof(double)))
				return RBA_E_NOMEM;
			if ((err = dec_numbers(&x, ncases, cm->num, at, keep, "numbers")))
				return err;
			col->num = cm->num;
			nexc = rba_cursor_u32(&x.c);
			if (!rba_cursor_ok(&x.c) || nexc > ncases)
				return dec_fail(&x, "bad exception count", NULL);
			if (ensure(&cm->exc_case, &cm->cap_exc, nexc ? nexc : 1,
				   sizeof(uint32_t)))
				return RBA_E_NOMEM;
			const char **et = realloc(cm->exc_text, cm->cap_exc * sizeof(char *));
			if (et == NULL)
				return RBA_E_NOMEM;
			cm->exc_text = et;
			for (uint32_t e = 0; e < nexc; e++) {
				uint32_t ci = rba_cursor_u32(&x.c);
				const uint8_t *z;
				if (!rba_cursor_ok(&x.c) || ci >= ncases ||
				    (e > 0 && ci <= prev))
					return dec_fail(&x, "bad exception case", NULL);
				z = memchr(x.c.p, 0, x.c.left);
				if (z == NULL)
					return dec_fail(&x, "exception text past the end", NULL);
				if (only_id == NULL || ci == at) {
					cm->exc_case[kept] = only_id ? 0 : ci;
					cm->exc_text[kept++] = (const char *)x.c.p;
				}
				rba_cursor_bytes(&x.c, (size_t)(z - x.c.p) + 1);
				prev = ci;
			}
			col->nexc = kept;
			col->exc_case = cm->exc_case;
			col->exc_text = cm->exc_text;
			continue;
		}
		if (kind == SAMPLE_COL_DICT) {
			uint32_t nl = rba_cursor_u32(&x.c);
			if (!rba_cursor_ok(&x.c) || nl == 0 || nl > ncases)
				return dec_fail(&x, "bad level count", NULL);
			if (ensure(&cm->levels, &cm->cap_levels, only_id ? 1 : nl,
				   sizeof(char *)) ||
			    ensure(&cm->codes, &cm->cap_codes, keep, sizeof(uint32_t)))
				return RBA_E_NOMEM;
			if ((err = dec_strings(&x, nl, only_id ? NULL : cm->levels, 0,
					       SIZE_MAX, "levels", &block)))
				return err;
			if ((err = dec_codes(&x, ncases, nl, 4, cm->codes, at, keep,
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
			continue;
		}
		return dec_fail(&x, "unknown column kind", NULL);
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
	return chunk_decode(p, n, ncols, nscores, id_col, NULL, out, NULL, d);
}

int
sample_chunk_decode_case(const uint8_t *p, size_t n, uint32_t ncols,
			 uint32_t nscores, long id_col, const char *case_id,
			 struct sample_chunk *out, uint32_t *index,
			 struct rba_detail *d)
{
	return chunk_decode(p, n, ncols, nscores, id_col, case_id, out, index, d);
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
	rba_buf_put_u8(out, SAMPLE_CHUNK_TAG);
	rba_buf_put_u8(out, SAMPLE_CHUNK_FORMAT);
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
	rba_json_fmt_double(sc->num[i], tmp);
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

/* ---- a string dictionary for building chunks ---------------------------- */

struct dict {
	uint32_t *slot; /* code + 1, 0 empty */
	size_t nslot;	/* power of two */
	const char **str;
	size_t cap_str;
	uint32_t n;
};

static uint64_t
hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static int
dict_reset(struct dict *t, size_t expect)
{
	size_t want = 16;

	while (want < expect * 2)
		want *= 2;
	if (want > t->nslot) {
		free(t->slot);
		t->slot = malloc(want * sizeof(*t->slot));
		if (t->slot == NULL) {
			t->nslot = 0;
			return RBA_E_NOMEM;
		}
		t->nslot = want;
	}
	memset(t->slot, 0, t->nslot * sizeof(*t->slot));
	t->n = 0;
	return 0;
}

/* The code of s (borrowed, must outlive the dictionary's use). */
static int
dict_code(struct dict *t, const char *s, uint32_t *code)
{
	size_t mask = t->nslot - 1, i = (size_t)hash_str(s) & mask;

	while (t->slot[i] != 0) {
		if (strcmp(t->str[t->slot[i] - 1], s) == 0) {
			*code = t->slot[i] - 1;
			return 0;
		}
		i = (i + 1) & mask;
	}
	if (ensure(&t->str, &t->cap_str, (size_t)t->n + 1, sizeof(char *)))
		return RBA_E_NOMEM;
	t->str[t->n] = s;
	t->slot[i] = t->n + 1;
	*code = t->n++;
	return 0;
}

static void
dict_release(struct dict *t)
{
	free(t->slot);
	free(t->str);
	memset(t, 0, sizeof(*t));
}

/* ---- sample add ------------------------------------------------------- */

/*
 * The distinct texts of one column in the pending chunk, as arena
 * offsets: a text already seen costs its chunk nothing but a code.
 */
struct seen {
	uint32_t *slot; /* arena offset + 1, 0 empty */
	size_t nslot, n;
};

static uint64_t
hash_mem(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* The slot of p[0..n) in t: occupied when seen, empty otherwise. */
static size_t
seen_slot(const struct seen *t, const struct rba_buf *arena, const char *p,
	  size_t n)
{
	size_t mask = t->nslot - 1, i = (size_t)hash_mem(p, n) & mask;

	while (t->slot[i] != 0) {
		const char *s = (const char *)arena->p + t->slot[i] - 1;
		if (memcmp(s, p, n) == 0 && s[n] == 0)
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

static int
seen_has(const struct seen *t, const struct rba_buf *arena, const char *p,
	 size_t n)
{
	return t->nslot != 0 && t->slot[seen_slot(t, arena, p, n)] != 0;
}

static int
seen_add(struct seen *t, const struct rba_buf *arena, uint32_t off, size_t n)
{
	const char *p = (const char *)arena->p + off;
	size_t i;

	if (2 * (t->n + 1) > t->nslot) {
		size_t nn = t->nslot ? 2 * t->nslot : 64;
		struct seen u = { calloc(nn, sizeof(uint32_t)), nn, 0 };
		if (u.slot == NULL)
			return RBA_E_NOMEM;
		for (size_t j = 0; j < t->nslot; j++) {
			if (t->slot[j] == 0)
				continue;
			const char *q = (const char *)arena->p + t->slot[j] - 1;
			u.slot[seen_slot(&u, arena, q, strlen(q))] = t->slot[j];
			u.n++;
		}
		free(t->slot);
		*t = u;
	}
	i = seen_slot(t, arena, p, n);
	if (t->slot[i] == 0) {
		t->slot[i] = off + 1;
		t->n++;
	}
	return 0;
}

static void
seen_clear(struct seen *t)
{
	if (t->nslot)
		memset(t->slot, 0, t->nslot * sizeof(uint32_t));
	t->n = 0;
}

enum col_mode { MODE_AUTO = 0, MODE_NUM, MODE_DICT, MODE_IDS };

struct builder {
	const struct sample_layout *l;
	const char *file;
	uint8_t *mode; /* enum col_mode per column */
	uint32_t ncols;
	/* rows of the pending chunk */
	uint32_t n;
	size_t cap_rows;
	struct rba_buf arena; /* every text, NUL-terminated */
	uint32_t *off;	      /* n x (ncols + 1): fields, then the id */
	double *num;	      /* n x ncols */
	uint8_t *flag;	      /* n x ncols: bit 0 parsed, bit 1 text differs */
	unsigned long *line;  /* n */
	size_t bound;	      /* upper bound of the encoded chunk */
	size_t fixed;	      /* bytes of the chunk outside the cases */
	size_t per_case;      /* score bytes and decision code per case */
	size_t maxdec;	      /* longest decision text and its NUL */
	struct seen *seen;    /* per column: the texts of this chunk */
	double *rnum;	      /* the row being read: numbers and flags */
	uint8_t *rflag;
	/* the chunk being encoded */
	struct sample_chunk chunk;
	struct dict dict;
	float *probs;
	size_t cap_probs;
	struct rba_buf raw;
};

static void
builder_release(struct builder *b)
{
	for (uint32_t k = 0; b->seen != NULL && k < b->ncols; k++)
		free(b->seen[k].slot);
	free(b->seen);
	free(b->rnum);
	free(b->rflag);
	free(b->mode);
	rba_buf_release(&b->arena);
	free(b->off);
	free(b->num);
	free(b->flag);
	free(b->line);
	sample_chunk_release(&b->chunk);
	dict_release(&b->dict);
	free(b->probs);
	rba_buf_release(&b->raw);
}

static int
builder_reserve_rows(struct builder *b)
{
	size_t want, K = b->ncols;

	if (b->n < b->cap_rows)
		return 0;
	want = b->cap_rows ? b->cap_rows * 2 : 256;
	if (want > SAMPLE_CHUNK_CASES)
		want = SAMPLE_CHUNK_CASES;
	uint32_t *off = realloc(b->off, want * (K + 1) * sizeof(*off));
	if (off == NULL)
		return RBA_E_NOMEM;
	b->off = off;
	double *num = realloc(b->num, want * K * sizeof(*num));
	if (num == NULL)
		return RBA_E_NOMEM;
	b->num = num;
	uint8_t *flag = realloc(b->flag, want * K);
	if (flag == NULL)
		return RBA_E_NOMEM;
	b->flag = flag;
	unsigned long *line = realloc(b->line, want * sizeof(*line));
	if (line == NULL)
		return RBA_E_NOMEM;
	b->line = line;
	b->cap_rows = want;
	return 0;
}

/* The arena offset of a copy of n bytes of p, NUL-terminated. */
static int
arena_put(struct builder *b, const char *p, size_t n, uint32_t *off)
{
	if (b->arena.len + n + 1 > UINT32_MAX)
		return RBA_E_LIMIT;
	*off = (uint32_t)b->arena.len;
	rba_buf_put(&b->arena, p, n);
	rba_buf_put_u8(&b->arena, 0);
	return rba_buf_status(&b->arena);
}

static const char *
btext(const struct builder *b, uint32_t row, uint32_t k)
{
	return (const char *)b->arena.p + b->off[(size_t)row * (b->ncols + 1) + k];
}

/*
 * Builds the decoded view of the pending rows (ids and columns; scores
 * and decisions come later).
 */
static int
builder_view(struct builder *b)
{
	struct sample_chunk *c = &b->chunk;
	struct sample_chunk_mem *m;
	uint32_t K = b->ncols, n = b->n;
	int err;

	if ((err = chunk_reserve(c, n, K, b->l->nscores)) != 0)
		return err;
	m = c->mem;
	for (uint32_t i = 0; i < n; i++)
		m->ids[i] = btext(b, i, K);
	for (uint32_t k = 0; k < K; k++) {
		struct sample_column *col = &m->cols[k];
		struct colmem *cm = &m->cm[k];
		int numeric = b->mode[k] == MODE_NUM;
		if (b->mode[k] == MODE_IDS) {
			col->kind = SAMPLE_COL_IDS;
			continue;
		}
		if (b->mode[k] == MODE_AUTO) {
			numeric = 1;
			for (uint32_t i = 0; i < n && numeric; i++)
				numeric = b->flag[(size_t)i * K + k] & 1;
		}
		if (numeric) {
			uint32_t nexc = 0;
			col->kind = SAMPLE_COL_NUMBER;
			if (ensure(&cm->num, &cm->cap_num, n, sizeof(double)))
				return RBA_E_NOMEM;
			for (uint32_t i = 0; i < n; i++) {
				cm->num[i] = b->num[(size_t)i * K + k];
				nexc += (b->flag[(size_t)i * K + k] & 2) != 0;
			}
			if (ensure(&cm->exc_case, &cm->cap_exc, nexc ? nexc : 1,
				   sizeof(uint32_t)))
				return RBA_E_NOMEM;
			const char **et = realloc(cm->exc_text, cm->cap_exc * sizeof(char *));
			if (et == NULL)
				return RBA_E_NOMEM;
			cm->exc_text = et;
			nexc = 0;
			for (uint32_t i = 0; i < n; i++)
				if (b->flag[(size_t)i * K + k] & 2) {
					cm->exc_case[nexc] = i;
					cm->exc_text[nexc++] = btext(b, i, k);
				}
			col->num = cm->num;
			col->nexc = nexc;
			col->exc_case = cm->exc_case;
			col->exc_text = cm->exc_text;
			continue;
		}
		col->kind = SAMPLE_COL_DICT;
		if (ensure(&cm->codes, &cm->cap_codes, n, sizeof(uint32_t)) ||
		    dict_reset(&b->dict, n))
			return RBA_E_NOMEM;
		for (uint32_t i = 0; i < n; i++)
			if ((err = dict_code(&b->dict, btext(b, i, k), &cm->codes[i])))
				return err;
		if (ensure(&cm->levels, &cm->cap_levels, b->dict.n, sizeof(char *)))
			return RBA_E_NOMEM;
		memcpy(cm->levels, b->dict.str, b->dict.n * sizeof(char *));
		col->nlevels = b->dict.n;
		col->levels = cm->levels;
		col->codes = cm->codes;
	}
	return 0;
}

struct add_state {
	const struct sample_add_request *rq;
	const struct policy *pol;
	const struct artifact *art;
	struct audit_scorer *sc;
	struct sample_layout layout;
	struct builder b;
	struct store_sample_writer *w;
	struct sample_add_result *res;
	uint64_t cases;
	char **cnames; /* decision names over the whole sample */
	uint64_t *ccounts;
	size_t cap_counts;
	uint32_t ncounts;
};

static int
count_decision(struct add_state *st, const char *name)
{
	for (uint32_t i = 0; i < st->ncounts; i++)
		if (strcmp(st->cnames[i], name) == 0) {
			st->ccounts[i]++;
			return 0;
		}
	/* Decision names beyond a few hundred are not summarized. */
	if (st->ncounts >= 256)
		return 0;
	if (ensure(&st->cnames, &st->cap_counts, (size_t)st->ncounts + 1,
		   sizeof(char *)))
		return RBA_E_NOMEM;
	uint64_t *cc = realloc(st->ccounts, st->cap_counts * sizeof(uint64_t));
	if (cc == NULL)
		return RBA_E_NOMEM;
	st->ccounts = cc;
	st->cnames[st->ncounts] = strdup(name);
	if (st->cnames[st->ncounts] == NULL)
		return RBA_E_NOMEM;
	st->ccounts[st->ncounts++] = 1;
	return 0;
}

static int
at_case(struct add_state *st, uint32_t i, struct rba_detail *d)
{
	if (d != NULL) {
		snprintf(d->file, sizeof(d->file), "%s", st->b.file);
		d->line = st->b.line[i];
		d->col = 0;
	}
	return 0;
}

/* Scores, decides, encodes and stores the pending rows. */
static int
flush_chunk(struct add_state *st, struct rba_detail *d)
{
	struct builder *b = &st->b;
	const struct sample_layout *l = &st->layout;
	struct sample_chunk *c = &b->chunk;
	struct sample_chunk_mem *m;
	uint32_t n = b->n, C = l->nclasses, bad = 0;
	double *scores;
	double pv[SAMPLE_MAX_SCORES];
	int err;

	if (n == 0)
		return 0;
	if ((err = builder_view(b)) != 0)
		return err;
	m = c->mem;
	if (ensure(&b->probs, &b->cap_probs, (size_t)n * C, sizeof(float)))
		return RBA_E_NOMEM;
	err = audit_scorer_run(st->sc, c, b->probs, &bad, d);
	if (err) {
		if (err == RBA_E_SCHEMA)
			at_case(st, bad, d);
		return err;
	}
	scores = m->scores;
	if (dict_reset(&b->dict, 64))
		return RBA_E_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const char *dec;
		uint32_t code;
		if (l->scored_by == SAMPLE_SCORED_MODEL) {
			for (uint32_t k = 0; k < C; k++)
				scores[(size_t)i * C + k] = b->probs[(size_t)i * C + k];
		} else {
			scores[i] = b->num[(size_t)i * b->ncols + (size_t)l->score_col];
		}
		if (l->decision_col >= 0) {
			dec = btext(b, i, (uint32_t)l->decision_col);
		} else if (st->pol->argmax) {
			for (uint32_t k = 0; k < C; k++)
				pv[k] = scores[(size_t)i * C + k];
			size_t top = policy_decide_argmax(st->pol, pv, C, NULL);
			dec = top < C ? l->classes[top] : NULL;
		} else {
			double s = l->scored_by == SAMPLE_SCORED_MODEL
					   ? scores[(size_t)i * C + l->positive]
					   : scores[i];
			dec = policy_decide(st->pol, s, NULL);
		}
		if (dec == NULL) {
			at_case(st, i, d);
			return rba_fail(d, RBA_E_SCHEMA, b->file, b->line[i], 0,
					"case '%.64s' has no decision under the policy",
					c->ids[i]);
		}
		if ((err = dict_code(&b->dict, dec, &code)) != 0)
			return err;
		if (code >= SAMPLE_MAX_DECISIONS)
			return rba_fail(d, RBA_E_LIMIT, b->file, b->line[i], 0,
					"more than %u distinct decisions in a chunk",
					SAMPLE_MAX_DECISIONS);
		m->dcodes[i] = (uint16_t)code;
		if ((err = count_decision(st, dec)) != 0)
			return err;
	}
	if (ensure(&m->decisions, &m->cap_dec, b->dict.n, sizeof(char *)))
		return RBA_E_NOMEM;
	memcpy(m->decisions, b->dict.str, b->dict.n * sizeof(char *));
	c->ndecisions = b->dict.n;
	c->decisions = m->decisions;
	b->raw.len = 0;
	sample_chunk_encode(c, &b->raw);
	if ((err = rba_buf_status(&b->raw)) != 0)
		return err;
	/* The bound makes this impossible; a broken bound must not store. */
	if (b->raw.len > STORE_CHUNK_MAX)
		return rba_fail(d, RBA_E_LIMIT, b->file, b->line[0], 0,
				"a sample chunk came out at %zu bytes", b->raw.len);
	err = store_sample_add_chunk(st->w, b->raw.p, b->raw.len,
				     (const char *const *)m->ids, n, d);
	if (err) {
		if (err == RBA_E_EXISTS && d != NULL) {
			/* The second use of the id is the one refused. */
			for (uint32_t i = n; i-- > 0;)
				if (strcmp(m->ids[i], d->key) == 0) {
					at_case(st, i, d);
					break;
				}
		}
		return err;
	}
	st->cases += n;
	b->n = 0;
	b->arena.len = 0;
	b->bound = b->fixed;
	for (uint32_t k = 0; k < b->ncols; k++)
		seen_clear(&b->seen[k]);
	if (st->rq->progress != NULL)
		st->rq->progress(st->rq->progress_ctx, st->cases);
	return 0;
}

static int
header_check(const struct csv_field *f, size_t n, const char *file,
	     struct rba_detail *d)
{
	for (size_t i = 0; i < n; i++) {
		if (f[i].n == 0)
			return rba_fail(d, RBA_E_SCHEMA, file, 1, f[i].col,
					"empty column name");
		if (memchr(f[i].p, 0, f[i].n) != NULL)
			return rba_fail(d, RBA_E_SCHEMA, file, 1, f[i].col,
					"a column name holds a NUL byte");
		for (size_t j = 0; j < i; j++)
			if (f[j].n == f[i].n && memcmp(f[j].p, f[i].p, f[i].n) == 0)
				return rba_fail(d, RBA_E_SCHEMA, file, 1, f[i].col,
						"column '%.*s' appears twice",
						(int)(f[i].n > 64 ? 64 : f[i].n), f[i].p);
	}
	return 0;
}

/* The layout from the header and the request. */
static int
layout_from_header(struct add_state *st, const struct csv_field *f, size_t n,
		   const struct pins *pins, const char *file,
		   struct rba_detail *d)
{
	struct sample_layout *l = &st->layout;
	const struct sample_add_request *rq = st->rq;
	const struct encode_spec *spec = &st->art->spec;
	const char *base = strrchr(rq->path, '/');

	l->id_col = l->score_col = l->decision_col = -1;
	l->source = strdup(strcmp(rq->path, "-") == 0 ? "stdin"
				  : base ? base + 1 : rq->path);
	l->ncols = (uint32_t)n;
	l->names = calloc(n, sizeof(char *));
	l->nclasses = spec->nclasses;
	l->classes = calloc(spec->nclasses, sizeof(char *));
	if (l->source == NULL || l->names == NULL || l->classes == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		if ((l->names[i] = strndup(f[i].p, f[i].n)) == NULL)
			return RBA_E_NOMEM;
	for (uint32_t i = 0; i < spec->nclasses; i++)
		if ((l->classes[i] = strdup(spec->classes[i])) == NULL)
			return RBA_E_NOMEM;
	l->positive = spec->positive == ENCODE_NO_POSITIVE ? UINT32_MAX
							    : spec->positive;
	l->scored_by = rq->score_column ? SAMPLE_SCORED_COLUMN : SAMPLE_SCORED_MODEL;
	l->nscores = rq->score_column ? 1 : spec->nclasses;
	if (rq->id_column != NULL) {
		l->id_col = name_index(l->names, l->ncols, rq->id_column);
		if (l->id_col < 0) {
			rba_detail_key(d, rq->id_column);
			return rba_fail(d, RBA_E_SCHEMA, file, 1, 0,
					"no id column '%s' in the header",
					rq->id_column);
		}
	} else if (pins != NULL && pins->data.id != NULL) {
		l->id_col = name_index(l->names, l->ncols, pins->data.id);
	}
	if (l->id_col >= 0 &&
	    (l->id_column = strdup(l->names[l->id_col])) == NULL)
		return RBA_E_NOMEM;
	if (rq->score_column != NULL) {
		l->score_col = name_index(l->names, l->ncols, rq->score_column);
		if (l->score_col < 0 || l->score_col == l->id_col) {
			rba_detail_key(d, rq->score_column);
			return rba_fail(d, RBA_E_SCHEMA, file, 1, 0,
					"no score column '%s' in the header",
					rq->score_column);
		}
		if ((l->score_column = strdup(rq->score_column)) == NULL)
			return RBA_E_NOMEM;
	}
	if (rq->decision_column != NULL) {
		l->decision_col = name_index(l->names, l->ncols, rq->decision_column);
		if (l->decision_col < 0 || l->decision_col == l->id_col ||
		    l->decision_col == l->score_col) {
			rba_detail_key(d, rq->decision_column);
			return rba_fail(d, RBA_E_SCHEMA, file, 1, 0,
					"no decision column '%s' in the header",
					rq->decision_column);
		}
		if ((l->decision_column = strdup(rq->decision_column)) == NULL)
			return RBA_E_NOMEM;
	}
	return 0;
}

static int
builder_setup(struct add_state *st, const char *file)
{
	struct builder *b = &st->b;
	const struct sample_layout *l = &st->layout;
	const struct encode_spec *spec = &st->art->spec;

	b->l = l;
	b->file = file;
	b->ncols = l->ncols;
	b->mode = calloc(l->ncols, 1);
	b->seen = calloc(l->ncols, sizeof(*b->seen));
	b->rnum = calloc(l->ncols, sizeof(double));
	b->rflag = calloc(l->ncols, 1);
	if (b->mode == NULL || b->seen == NULL || b->rnum == NULL || b->rflag == NULL)
		return RBA_E_NOMEM;
	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		long k = name_index(l->names, l->ncols, spec->columns[c].name);
		if (k >= 0)
			b->mode[k] = spec->columns[c].kind == ENCODE_NUMERIC
					     ? MODE_NUM : MODE_DICT;
	}
	if (l->score_col >= 0)
		b->mode[l->score_col] = MODE_NUM;
	if (l->decision_col >= 0)
		b->mode[l->decision_col] = MODE_DICT;
	if (l->id_col >= 0)
		b->mode[l->id_col] = MODE_IDS;
	b->maxdec = 0;
	if (st->pol->argmax) {
		for (uint32_t i = 0; i < l->nclasses; i++)
			if (strlen(l->classes[i]) > b->maxdec)
				b->maxdec = strlen(l->classes[i]);
	} else {
		for (size_t i = 0; i < st->pol->nbands; i++)
			if (strlen(st->pol->bands[i].decision) > b->maxdec)
				b->maxdec = strlen(st->pol->bands[i].decision);
	}
	/* Header, ids and decision blocks' lengths, per column kind, width,
	 * level and exception counts. */
	b->fixed = 32 + (size_t)l->ncols * 16;
	b->per_case = 8 * (size_t)l->nscores + 2;
	b->maxdec += 1;
	b->bound = b->fixed;
	return 0;
}

/* Takes one CSV record into the pending chunk (flushing first if full). */
static int
add_row(struct add_state *st, const struct csv_field *f, size_t n,
	unsigned long line, uint64_t rowno, struct rba_detail *d)
{
	struct builder *b = &st->b;
	const struct sample_layout *l = &st->layout;
	uint32_t K = b->ncols, r;
	size_t cost, fresh;
	char idbuf[24], fmt[32];
	const char *id;
	size_t idlen;
	int err;

	if (n != K)
		return rba_fail(d, RBA_E_SCHEMA, b->file, line, 0,
				"%zu fields where the header has %u", n, K);
	if (l->id_col >= 0) {
		id = f[l->id_col].p;
		idlen = f[l->id_col].n;
	} else {
		idlen = (size_t)snprintf(idbuf, sizeof(idbuf), "%llu",
					 (unsigned long long)rowno);
		id = idbuf;
	}
	if (idlen == 0 || idlen > STORE_CASE_ID_MAX)
		return rba_fail(d, idlen ? RBA_E_LIMIT : RBA_E_SCHEMA, b->file,
				line, l->id_col >= 0 ? f[l->id_col].col : 0,
				idlen ? "case id longer than %d bytes"
				      : "empty case id (limit %d bytes)",
				STORE_CASE_ID_MAX);
	/*
	 * An upper bound of what the case adds to its chunk, per field:
	 * a number 8 bytes and its text when that is not rba_json_fmt_double's;
	 * a dictionary entry a code of at most 2 bytes and, the first time
	 * in the chunk, the text; a column that may turn out either way
	 * the larger.  "fresh" assumes every text new (after a flush).
	 */
	cost = fresh = b->per_case + idlen + 1 + b->maxdec;
	for (uint32_t k = 0; k < K; k++) {
		uint8_t mode = b->mode[k];
		size_t num = 0, dict, dict_new = 2 + f[k].n + 1;
		double v = 0;
		if (memchr(f[k].p, 0, f[k].n) != NULL)
			return rba_fail(d, RBA_E_SCHEMA, b->file, line, f[k].col,
					"a field holds a NUL byte");
		b->rflag[k] = 0;
		b->rnum[k] = 0;
		if ((long)k == l->decision_col && f[k].n + 1 > b->maxdec) {
			cost += f[k].n + 1;
			fresh += f[k].n + 1;
		}
		if (mode == MODE_IDS)
			continue;
		if (mode != MODE_DICT) {
			err = csv_parse_number(f[k].p, f[k].n, &v);
			if (err != 0 && mode == MODE_NUM) {
				rba_detail_key(d, l->names[k]);
				return rba_fail(d, RBA_E_SCHEMA, b->file, line,
						f[k].col,
						"column '%s' needs a number, not '%.*s'",
						l->names[k],
						(int)(f[k].n > 64 ? 64 : f[k].n),
						f[k].p);
			}
			if (err == 0) {
				b->rnum[k] = v;
				b->rflag[k] = 1;
				if (rba_json_fmt_double(v, fmt) != f[k].n ||
				    memcmp(fmt, f[k].p, f[k].n) != 0)
					b->rflag[k] |= 2;
				num = 8 + (b->rflag[k] & 2 ? 4 + f[k].n + 1 : 0);
			}
		}
		if (mode == MODE_NUM) {
			cost += num;
			fresh += num;
			continue;
		}
		dict = seen_has(&b->seen[k], &b->arena, f[k].p, f[k].n) ? 2 : dict_new;
		cost += dict > num ? dict : num;
		fresh += dict_new > num ? dict_new : num;
	}
	if (fresh + b->fixed > STORE_CHUNK_MAX)
		return rba_fail(d, RBA_E_LIMIT, b->file, line, 0,
				"a case of %zu bytes is too large for a sample chunk",
				fresh);
	if (b->n == SAMPLE_CHUNK_CASES || b->bound + cost > STORE_CHUNK_MAX) {
		if ((err = flush_chunk(st, d)) != 0)
			return err;
		cost = fresh;
	}
	if ((err = builder_reserve_rows(b)) != 0)
		return err;
	r = b->n;
	for (uint32_t k = 0; k < K; k++) {
		size_t at = (size_t)r * K + k;
		uint32_t off;
		if ((err = arena_put(b, f[k].p, f[k].n, &off)))
			return rba_fail(d, err, b->file, line, f[k].col,
					"%s", rba_strerror(err));
		b->off[(size_t)r * (K + 1) + k] = off;
		b->flag[at] = b->rflag[k];
		b->num[at] = b->rnum[k];
		if (b->mode[k] != MODE_NUM && b->mode[k] != MODE_IDS &&
		    (err = seen_add(&b->seen[k], &b->arena, off, f[k].n)) != 0)
			return err;
	}
	if ((err = arena_put(b, id, idlen, &b->off[(size_t)r * (K + 1) + K])))
		return err;
	b->line[r] = line;
	b->n++;
	b->bound += cost;
	return 0;
}

void
sample_add_result_release(struct sample_add_result *r)
{
	if (r == NULL)
		return;
	free_strv(r->decisions, r->ndecisions);
	free(r->decision_counts);
	memset(r, 0, sizeof(*r));
}

static int
check_request(const struct sample_add_request *rq, const struct policy *pol,
	      const struct artifact *art, struct rba_detail *d)
{
	if (rq->decision_column != NULL && rq->score_column == NULL)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"a decision column needs a score column");
	if (!pol->argmax && art->spec.positive == ENCODE_NO_POSITIVE)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"the policy decides by score bands, but the model "
				"has no positive class (use an argmax policy)");
	if (rq->score_column != NULL &&
	    (pol->argmax || art->spec.positive == ENCODE_NO_POSITIVE))
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"stored scores from a column need a binary model "
				"and a policy with score bands");
	return 0;
}

int
sample_add(struct store *s, const struct sample_add_request *rq,
	   struct sample_add_result *out, struct rba_detail *d)
{
	struct add_state st;
	struct store_version v;
	struct store_txn *txn = NULL;
	struct policy *pol = NULL;
	struct pins *pins = NULL;
	struct artifact art;
	struct csv_reader *r = NULL;
	const struct csv_field *f;
	struct rba_buf lt;
	struct stat sb;
	uint8_t *abytes = NULL;
	size_t an, nf;
	uint64_t hint = 0, rowno = 0;
	int err, from_version = 0, rc;

	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	memset(&v, 0, sizeof(v));
	memset(&art, 0, sizeof(art));
	rba_buf_init(&lt);
	st.rq = rq;
	st.res = out;
	st.layout.id_col = st.layout.score_col = st.layout.decision_col = -1;
	if (strcmp(rq->path, "-") != 0 && stat(rq->path, &sb) == 0)
		hint = (uint64_t)sb.st_size;
	if ((err = store_txn_begin(s, 1, hint, &txn, d)) != 0)
		goto out;
	if ((err = store_version_get(txn, rq->version, &v, d)) != 0)
		goto out;
	if ((err = audit_policy_in_force(&v, rq->policy, &pol, &from_version, d)))
		goto out;
	st.pol = pol;
	if ((err = policy_pins_parse(v.pins_text, strlen(v.pins_text),
				     "stored pins", &pins, d)) != 0)
		goto out;
	/* Scored with the stored artifact, which store_blob_load verified
	 * against its digest. */
	if ((err = store_blob_load(txn, &v.artifact, ARTIFACT_MAX_BYTES, &abytes,
				   &an, d)) != 0)
		goto out;
	if ((err = artifact_decode(abytes, an, &art, d)) != 0)
		goto out;
	st.art = &art;
	if ((err = check_request(rq, pol, &art, d)) != 0)
		goto out;
	if ((err = audit_scorer_new(&art, &st.sc, d)) != 0)
		goto out;
	if ((err = csv_reader_open(rq->path, NULL, &r, d)) != 0)
		goto out;
	rc = csv_reader_next(r, &f, &nf, d);
	if (rc <= 0) {
		err = rc < 0 ? rc : rba_fail(d, RBA_E_SCHEMA, csv_reader_name(r),
					     1, 0, "no header");
		goto out;
	}
	if ((err = header_check(f, nf, csv_reader_name(r), d)) != 0 ||
	    (err = layout_from_header(&st, f, nf, pins, csv_reader_name(r), d)) != 0)
		goto out;
	st.layout.artifact = v.artifact;
	if ((err = audit_scorer_bind(st.sc, &st.layout, d)) != 0) {
		if (d != NULL) {
			snprintf(d->file, sizeof(d->file), "%s", csv_reader_name(r));
			d->line = 1;
		}
		goto out;
	}
	if ((err = builder_setup(&st, csv_reader_name(r))) != 0)
		goto out;
	sample_layout_format(&st.layout, &lt);
	if ((err = rba_buf_status(&lt)) != 0)
		goto out;
	if ((err = store_sample_begin(txn, rq->version, rba_buf_cstr(&lt),
				      &pol->digest, &st.w, d)) != 0)
		goto out;
	while ((rc = csv_reader_next(r, &f, &nf, d)) == 1) {
		if ((err = add_row(&st, f, nf, csv_reader_line(r), ++rowno, d)) != 0)
			goto out;
	}
	if (rc < 0) {
		err = rc;
		goto out;
	}
	if ((err = flush_chunk(&st, d)) != 0)
		goto out;
	if (st.cases == 0) {
		err = rba_fail(d, RBA_E_SCHEMA, csv_reader_name(r), 1, 0,
			       "no cases after the header");
		goto out;
	}
	if ((err = store_sample_finish(st.w, &out->digest, d)) != 0)
		goto out;
	store_sample_writer_free(st.w);
	st.w = NULL;
	err = store_txn_commit(txn, d);
	txn = NULL;
	if (err)
		goto out;
	out->cases = st.cases;
	out->policy_digest = pol->digest;
	out->policy_from_version = from_version;
	out->artifact = v.artifact;
	out->ndecisions = st.ncounts;
	out->decisions = st.cnames;
	out->decision_counts = st.ccounts;
	st.cnames = NULL;
	st.ccounts = NULL;
	{
		struct store_txn *rt;
		struct store_sample_info info;
		if (store_txn_begin(s, 0, 0, &rt, NULL) == 0) {
			if (store_sample_info(rt, rq->version, &info, NULL) == 0) {
				out->chunks = info.chunks;
				out->size = info.size;
				out->stored_size = info.stored_size;
				store_sample_info_release(&info);
			}
			store_txn_abort(rt);
		}
	}
out:
	store_sample_writer_free(st.w);
	store_txn_abort(txn);
	csv_reader_free(r);
	audit_scorer_free(st.sc);
	builder_release(&st.b);
	sample_layout_release(&st.layout);
	free_strv(st.cnames, st.ncounts);
	free(st.ccounts);
	artifact_release(&art);
	free(abytes);
	policy_pins_free(pins);
	policy_free(pol);
	store_version_release(&v);
	rba_buf_release(&lt);
	return err;
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
	if (err == RBA_E_NOTFOUND) {
		rba_detail_key(d, case_id);
		return rba_fail(d, err, NULL, 0, 0,
				"no case '%s' in the sample of version '%s'",
				case_id, version);
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
			       "tampered: the case index of version '%s' names "
			       "chunk %u for case '%s', which it does not hold",
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

static void
csv_put_field(struct rba_buf *b, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		rba_buf_put(b, s, strlen(s));
		return;
	}
	rba_buf_put_u8(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			rba_buf_put_u8(b, '"');
		rba_buf_put_u8(b, (uint8_t)*s);
	}
	rba_buf_put_u8(b, '"');
}

struct exporter {
	FILE *f;
	int write;
	uint64_t cases;
	struct rba_buf line;
};

static int
export_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct exporter *x = ctx;
	char tmp[32];

	(void)chunk_no;
	x->cases += c->ncases;
	if (!x->write)
		return 0;
	for (uint32_t i = 0; i < c->ncases; i++) {
		x->line.len = 0;
		for (uint32_t k = 0; k < c->ncols; k++) {
			if (k)
				rba_buf_put_u8(&x->line, ',');
			csv_put_field(&x->line, sample_chunk_text(c, k, i, tmp));
		}
		rba_buf_put_u8(&x->line, '\n');
		if (rba_buf_status(&x->line) != 0)
			return RBA_E_NOMEM;
		if (fwrite(x->line.p, 1, x->line.len, x->f) != x->line.len)
			return errno ? errno : EIO;
	}
	return 0;
}

static int
export_header(FILE *f, const struct sample_layout *l)
{
	struct rba_buf b;
	int err;

	rba_buf_init(&b);
	for (uint32_t k = 0; k < l->ncols; k++) {
		if (k)
			rba_buf_put_u8(&b, ',');
		csv_put_field(&b, l->names[k]);
	}
	rba_buf_put_u8(&b, '\n');
	err = rba_buf_status(&b);
	if (err == 0 && fwrite(b.p, 1, b.len, f) != b.len)
		err = errno ? errno : EIO;
	rba_buf_release(&b);
	return err;
}

int
sample_export(struct store_txn *txn, const char *version, const char *out_path,
	      FILE *dash, uint64_t *cases, struct rba_detail *d)
{
	struct store_sample_info info;
	struct sample_layout l;
	struct exporter x;
	struct rba_atomic a;
	int err, to_stdout = strcmp(out_path, "-") == 0;

	memset(&x, 0, sizeof(x));
	memset(&a, 0, sizeof(a));
	a.fd = -1;
	rba_buf_init(&x.line);
	if ((err = sample_layout_load(txn, version, &info, &l, d)) != 0)
		return err;
	if (to_stdout) {
		/* Verify everything before the first byte goes out. */
		err = sample_walk(txn, version, &l, export_chunk, &x, d);
		x.f = dash;
	} else {
		err = rba_atomic_open(&a, out_path, 0644);
		if (err == 0 && (x.f = rba_atomic_stdio(&a)) == NULL)
			err = errno ? errno : EIO;
		if (err)
			err = rba_fail(d, err, out_path, 0, 0, "%s", strerror(err));
	}
	if (err == 0) {
		x.write = 1;
		x.cases = 0;
		err = export_header(x.f, &l);
	}
	if (err == 0)
		err = sample_walk(txn, version, &l, export_chunk, &x, d);
	if (err == 0 && fflush(x.f) != 0)
		err = errno ? errno : EIO;
	if (!to_stdout) {
		if (err == 0) {
			err = rba_atomic_commit(&a);
			if (err)
				rba_fail(d, err, out_path, 0, 0, "%s", strerror(err));
		} else {
			rba_atomic_abort(&a);
		}
	}
	if (err == 0 && cases != NULL)
		*cases = x.cases;
	rba_buf_release(&x.line);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	return err;
}
