/*
 * encode_fields.c - encode_values_at for fields read in place
 * (encode.h: encode_plan, encode_fields_at).
 *
 * `score` reads a case file of millions of rows: copying each row's
 * values into C strings, measuring them again and finding a level by
 * binary search over strcmp cost more than scoring the case.  Here a
 * value is the reader's (pointer, length), a level is found in an
 * open-addressing table built once, and each step is encode_one's, in
 * its order, so the features and the first error are the same.
 */
#include "data/encode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A level in the table: its first 8 bytes (zero-padded) and length
 * kept beside its index, so that a short level is one comparison. */
struct plan_slot {
	uint64_t head;
	uint32_t len;
	uint32_t lv1; /* level index + 1, 0 empty */
};

struct plan_col {
	uint32_t f0;	        /* the column's first feature */
	uint32_t mask;	        /* table slots - 1 (categorical, native) */
	uint32_t shift;	        /* 64 - log2(slots): a hash's top bits */
	float easy;	        /* numeric: |x| <= easy standardizes to a
				 * finite value, no division needed to know */
	struct plan_slot *slot;
};

struct encode_plan {
	const struct encode_spec *spec;
	struct plan_col *col; /* ncolumns */
	size_t *toklen;	      /* nmissing token lengths */
	int numeric;	      /* every column numeric, no missing token:
			       * column c is feature c */
};

/* The first (at most) 8 bytes of p, zero-padded, byte i at bits 8i. */
static inline uint64_t
text_head(const char *p, size_t n)
{
	const uint8_t *b = (const uint8_t *)p;
	uint32_t lo, hi;
	uint64_t w;

	if (n >= 8) {
		memcpy(&w, b, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		return w;
	}
	if (n >= 4) { /* two loads that overlap in the middle */
		memcpy(&lo, b, 4);
		memcpy(&hi, b + n - 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		lo = __builtin_bswap32(lo);
		hi = __builtin_bswap32(hi);
#endif
		return (uint64_t)lo | (uint64_t)hi << (8 * (n - 4));
	}
	if (n == 0)
		return 0;
	return (uint64_t)b[0] | (uint64_t)b[n / 2] << (8 * (n / 2)) |
	       (uint64_t)b[n - 1] << (8 * (n - 1));
}

/* A multiplicative hash: its top bits (shift) are the well mixed ones. */
static inline uint32_t
text_hash(uint64_t head, const char *p, size_t n, uint32_t shift)
{
	uint64_t h = head ^ (uint64_t)n << 56;

	for (size_t i = 8; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	return (uint32_t)((h * 0x9e3779b97f4a7c15ull) >> shift);
}

static int
plan_levels(const struct encode_column *c, struct plan_col *pc)
{
	uint32_t size = 4, bits = 2;

	while (size < 2 * (uint64_t)c->nlevels) {
		size *= 2;
		bits++;
	}
	pc->mask = size - 1;
	pc->shift = 64 - bits;
	pc->slot = calloc(size, sizeof(*pc->slot));
	if (pc->slot == NULL)
		return RBA_E_NOMEM;
	for (uint32_t l = 0; l < c->nlevels; l++) {
		size_t n = strlen(c->levels[l]); /* <= ENCODE_MAX_TEXT */
		uint64_t head = text_head(c->levels[l], n);
		uint32_t h = text_hash(head, c->levels[l], n, pc->shift);
		while (pc->slot[h].lv1 != 0)
			h = (h + 1) & pc->mask;
		pc->slot[h].head = head;
		pc->slot[h].len = (uint32_t)n;
		pc->slot[h].lv1 = l + 1;
	}
	return 0;
}

/*
 * The bound under which feature f's value surely standardizes to a
 * finite float: with |mean| <= 2^100 and scale >= 2^-20, |x| <= 2^100
 * gives |x - mean| <= 2^101 and a quotient of at most 2^121, below
 * FLT_MAX whatever the rounding.  -1 (no value under it) otherwise.
 */
static float
plan_easy(const struct encode_spec *spec, uint32_t f)
{
	float m = spec->mean[f], sc = spec->scale[f];

	if (fabsf(m) <= 0x1p100f && sc >= 0x1p-20f && sc <= 0x1p100f)
		return 0x1p100f;
	return -1.0f;
}

int
encode_plan_new(const struct encode_spec *spec, struct encode_plan **out)
{
	struct encode_plan *p = calloc(1, sizeof(*p));
	uint32_t f = 0;

	*out = NULL;
	if (p == NULL)
		return RBA_E_NOMEM;
	p->spec = spec;
	p->col = calloc(spec->ncolumns ? spec->ncolumns : 1, sizeof(*p->col));
	p->toklen = calloc(spec->nmissing ? spec->nmissing : 1,
			   sizeof(*p->toklen));
	if (p->col == NULL || p->toklen == NULL)
		goto nomem;
	for (uint32_t t = 0; t < spec->nmissing; t++)
		p->toklen[t] = strlen(spec->missing[t]);
	/* every column a number, and no missing token one: a field parsed
	 * as a number is then never a token */
	p->numeric = spec->nfeatures == spec->ncolumns;
	for (uint32_t t = 0; t < spec->nmissing; t++) {
		double v;
		if (csv_parse_number(spec->missing[t], p->toklen[t], &v) == 0)
			p->numeric = 0;
	}
	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		const struct encode_column *col = &spec->columns[c];
		p->col[c].f0 = f;
		p->col[c].easy = plan_easy(spec, f);
		f += encode_column_width(col);
		if (col->kind != ENCODE_NUMERIC)
			p->numeric = 0;
		if (col->kind != ENCODE_NUMERIC &&
		    plan_levels(col, &p->col[c]) != 0)
			goto nomem;
	}
	*out = p;
	return 0;
nomem:
	encode_plan_free(p);
	return RBA_E_NOMEM;
}

void
encode_plan_free(struct encode_plan *p)
{
	if (p == NULL)
		return;
	for (uint32_t c = 0; p->col != NULL && c < p->spec->ncolumns; c++) {
		free(p->col[c].slot);
	}
	free(p->col);
	free(p->toklen);
	free(p);
}

/* The level index of the n bytes at v in column c, or -1. */
static long
plan_level(const struct encode_column *col, const struct plan_col *pc,
	   const char *v, size_t n)
{
	uint64_t head = text_head(v, n);
	uint32_t h = text_hash(head, v, n, pc->shift);

	for (; pc->slot[h].lv1 != 0; h = (h + 1) & pc->mask) {
		const struct plan_slot *sl = &pc->slot[h];
		if (sl->head == head && sl->len == n &&
		    (n <= 8 ||
		     memcmp(col->levels[sl->lv1 - 1] + 8, v + 8, n - 8) == 0))
			return (long)sl->lv1 - 1;
	}
	return -1;
}

static int
plan_missing(const struct encode_plan *p, const char *v, size_t n)
{
	for (uint32_t t = 0; t < p->spec->nmissing; t++)
		if (p->toklen[t] == n && memcmp(p->spec->missing[t], v, n) == 0)
			return 1;
	return 0;
}

/* Numeric column c's value (field fi) into x[f]: encode_one's steps. */
static int
plan_number(const struct encode_plan *p, uint32_t c,
	    const struct csv_field *fi, const double *parsed, float *x,
	    const char *file, unsigned long line, struct rba_detail *d)
{
	const struct encode_spec *spec = p->spec;
	const struct encode_column *col = &spec->columns[c];
	uint32_t f = p->col[c].f0;
	char shown[72];
	double num;
	size_t k = fi->n < 64 ? fi->n : 64;

	if (spec->nmissing > 0 && plan_missing(p, fi->p, fi->n)) {
		x[f] = spec->impute != NULL ? spec->impute[f] : NAN;
		return 0;
	}
	if (parsed != NULL && fabsf((float)*parsed) <= p->col[c].easy) {
		x[f] = (float)*parsed; /* finite once standardized */
		return 0;
	}
	if (parsed != NULL)
		num = *parsed;
	else if (csv_parse_number(fi->p, fi->n, &num) != 0) {
		rba_detail_key(d, col->name);
		return rba_fail(d, RBA_E_SCHEMA, file, line, 0,
				"column '%s' needs a number, not '%.*s'",
				col->name, (int)k, fi->p);
	}
	x[f] = (float)num;
	/* encode_standardize_check's test, inline: the message only when
	 * it fails (it shows at most 64 bytes of the text) */
	if (x[f] != x[f] || isfinite((x[f] - spec->mean[f]) / spec->scale[f]))
		return 0;
	memcpy(shown, fi->p, k);
	shown[k] = 0;
	return encode_standardize_check(spec, f, x[f], shown, file, line,
					fi->col, d);
}

/*
 * encode_fields_at of a plan whose columns are all numbers: each value
 * the checker parsed, surely finite once standardized, stored as it is;
 * any other through plan_number's steps.  Every feature is written.
 */
static int
fields_numeric(const struct encode_plan *p, const struct csv_field *f,
	       const size_t *src, const double *num, const uint8_t *has,
	       const char *file, unsigned long line, float *x,
	       struct rba_detail *d)
{
	const struct plan_col *pc = p->col;
	uint32_t nc = p->spec->ncolumns;
	unsigned ok = 1;
	int err;

	/* every value stored and one test for the row, no branch a column
	 * (a value not parsed, or not surely finite, is done again below
	 * as plan_number does it; the checker's numbers of fields it did
	 * not parse are an earlier row's or 0, finite either way) */
	for (uint32_t c = 0; c < nc; c++) {
		size_t s = src[c];
		float v = (float)num[s];
		x[c] = v;
		ok &= has[s] & (fabsf(v) <= pc[c].easy);
	}
	if (ok)
		return 0;
	for (uint32_t c = 0; c < nc; c++) {
		size_t s = src[c];
		if (has[s] && fabsf((float)num[s]) <= pc[c].easy)
			continue;
		err = plan_number(p, c, &f[s], has[s] ? &num[s] : NULL, x,
				  file, line, d);
		if (err != 0)
			return err;
	}
	return 0;
}

int
encode_fields_at(const struct encode_plan *p, const struct csv_field *f,
		 const size_t *src, const double *num, const uint8_t *has,
		 const char *file, unsigned long line, float *x,
		 struct rba_detail *d)
{
	const struct encode_spec *spec = p->spec;
	int err;

	if (p->numeric && has != NULL)
		return fields_numeric(p, f, src, num, has, file, line, x, d);
	memset(x, 0, spec->nfeatures * sizeof(float));
	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		const struct encode_column *col = &spec->columns[c];
		const struct csv_field *fi = &f[src[c]];
		uint32_t f0 = p->col[c].f0;
		long lv;
		if (col->kind == ENCODE_NUMERIC) {
			const double *v = has != NULL && has[src[c]]
						  ? &num[src[c]]
						  : NULL;
			if ((err = plan_number(p, c, fi, v, x, file, line,
					       d)) != 0)
				return err;
			continue;
		}
		lv = plan_level(col, &p->col[c], fi->p, fi->n);
		if (col->kind == ENCODE_NATIVE) {
			/* an unseen level: nlevels, in no level set */
			x[f0] = lv < 0 ? (float)col->nlevels : (float)lv;
			continue;
		}
		if (lv < 0) {
			rba_detail_key(d, col->name);
			return rba_fail(d, RBA_E_SCHEMA, file, line, 0,
					"unknown level '%.*s' of categorical "
					"column '%s'",
					(int)(fi->n < 64 ? fi->n : 64), fi->p,
					col->name);
		}
		x[f0 + (size_t)lv] = 1.0f;
	}
	return 0;
}
