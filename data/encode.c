/* encode.c - feature encoding, split and standardization. */
#include "data/encode.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strv.h"
#include "train/rng.h"
#include "train/trainer.h"

void
encode_spec_release(struct encode_spec *s)
{
	if (s == NULL)
		return;
	free(s->label);
	rba_strv_free(s->classes, s->nclasses);
	for (uint32_t i = 0; s->columns != NULL && i < s->ncolumns; i++) {
		free(s->columns[i].name);
		rba_strv_free(s->columns[i].levels, s->columns[i].nlevels);
	}
	free(s->columns);
	free(s->mean);
	free(s->scale);
	rba_strv_free(s->missing, s->nmissing);
	free(s->impute);
	memset(s, 0, sizeof(*s));
}

struct csv_missing
encode_missing(const struct encode_spec *s)
{
	struct csv_missing m = {s->nmissing, (const char *const *)s->missing};

	return m;
}

int
encode_is_missing(const struct encode_spec *s, const char *v)
{
	struct csv_missing m = encode_missing(s);

	return csv_is_missing(&m, v, strlen(v));
}

void
encode_data_release(struct encode_data *d)
{
	if (d == NULL)
		return;
	free(d->x);
	free(d->y);
	memset(d, 0, sizeof(*d));
}

void
encode_feature_name(const struct encode_spec *s, uint32_t f,
		    struct rba_buf *out)
{
	for (uint32_t c = 0; c < s->ncolumns; c++) {
		const struct encode_column *col = &s->columns[c];
		if (col->kind != ENCODE_CATEGORICAL) {
			if (f == 0) {
				rba_buf_printf(out, "%s", col->name);
				return;
			}
			f--;
		} else {
			if (f < col->nlevels) {
				rba_buf_printf(out, "%s=%s", col->name,
					       col->levels[f]);
				return;
			}
			f -= col->nlevels;
		}
	}
}

/* A distinct text (n bytes at s) and its place in the first-seen order. */
struct dist_item {
	const char *s;
	size_t n;
	uint32_t id;
};

static int
cmp_item(const void *a, const void *b)
{
	const struct dist_item *x = a, *y = b;
	/* memcmp compares as unsigned char, then the shorter first:
	 * strcmp's bytewise order (a text holds no NUL) */
	int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);

	return c != 0 ? c : (x->n > y->n) - (x->n < y->n);
}

static uint32_t
text_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/*
 * The distinct texts of column c in first-seen order (by a hash table
 * that doubles as they come): it[0 .. *k) with it[j].id = j, and each
 * row's text's place among them in id[r].  0 or RBA_E_NOMEM.
 */
static int
distinct_ids(const struct csv_table *t, size_t c, struct dist_item **itp,
	     size_t *k, uint32_t *id)
{
	size_t cap = 1024, nd = 0, capit = 256;
	uint32_t *slot = malloc(cap * sizeof(uint32_t)), *hv = NULL;
	struct dist_item *it = malloc(capit * sizeof(*it));

	hv = malloc(capit * sizeof(uint32_t));
	*itp = NULL;
	if (slot == NULL || it == NULL || hv == NULL)
		goto nomem;
	memset(slot, 0xff, cap * sizeof(uint32_t));
	for (size_t r = 0; r < t->nrows; r++) {
		size_t vn;
		const char *v = csv_table_cell(t, r, c, &vn);
		uint32_t h = text_hash(v, vn);
		size_t i = h & (cap - 1);
		while (slot[i] != UINT32_MAX &&
		       (hv[slot[i]] != h || it[slot[i]].n != vn ||
			memcmp(it[slot[i]].s, v, vn) != 0))
			i = (i + 1) & (cap - 1);
		if (slot[i] == UINT32_MAX) {
			if (nd == capit) {
				struct dist_item *ni;
				uint32_t *nh;
				capit *= 2;
				ni = realloc(it, capit * sizeof(*it));
				if (ni != NULL)
					it = ni;
				nh = realloc(hv, capit * sizeof(uint32_t));
				if (nh != NULL)
					hv = nh;
				if (ni == NULL || nh == NULL)
					goto nomem;
			}
			it[nd].s = v;
			it[nd].n = vn;
			it[nd].id = (uint32_t)nd;
			hv[nd] = h;
			slot[i] = (uint32_t)nd++;
			if (2 * nd > cap) {
				/* at most half full: rehash into twice */
				uint32_t *ns = malloc(2 * cap * sizeof(uint32_t));
				if (ns == NULL)
					goto nomem;
				cap *= 2;
				memset(ns, 0xff, cap * sizeof(uint32_t));
				for (size_t j = 0; j < nd; j++) {
					size_t q = hv[j] & (cap - 1);
					while (ns[q] != UINT32_MAX)
						q = (q + 1) & (cap - 1);
					ns[q] = (uint32_t)j;
				}
				free(slot);
				slot = ns;
				id[r] = (uint32_t)(nd - 1);
				continue;
			}
		}
		id[r] = slot[i];
	}
	free(slot);
	free(hv);
	*itp = it;
	*k = nd;
	return 0;
nomem:
	free(slot);
	free(hv);
	free(it);
	return RBA_E_NOMEM;
}

/*
 * Distinct values of column c, sorted bytewise (malloc'd copies), and
 * rows[r] each row's value's place among them (find_level of its text).
 * Only the distinct texts are sorted (once every row's text was, then
 * the repeats dropped, then each row looked up: the same levels in the
 * same order, the same places).
 */
static int
distinct_sorted(const struct csv_table *t, size_t c, char ***out, uint32_t *n,
		uint32_t cap, uint32_t *rows, struct rba_detail *d)
{
	struct dist_item *it;
	uint32_t *rank;
	char **res;
	size_t k = 0;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = distinct_ids(t, c, &it, &k, rows)) != 0)
		return err;
	if (k > cap) {
		free(it);
		rba_detail_key(d, t->names[c]);
		return rba_fail(d, RBA_E_LIMIT, t->file, 0, 0,
				"column '%s' has %zu distinct values, over the "
				"limit of %u",
				t->names[c], k, cap);
	}
	qsort(it, k, sizeof(*it), cmp_item);
	res = calloc(k ? k : 1, sizeof(*res));
	rank = malloc((k ? k : 1) * sizeof(uint32_t));
	if (res == NULL || rank == NULL) {
		free(it);
		free(res);
		free(rank);
		return RBA_E_NOMEM;
	}
	for (size_t i = 0; i < k; i++) {
		if (it[i].n > ENCODE_MAX_TEXT) {
			free(it);
			free(rank);
			rba_strv_free(res, k);
			rba_detail_key(d, t->names[c]);
			return rba_fail(d, RBA_E_LIMIT, t->file, 0, 0,
					"a value of column '%s' is longer than "
					"%u bytes",
					t->names[c], ENCODE_MAX_TEXT);
		}
		res[i] = malloc(it[i].n + 1);
		if (res[i] != NULL) {
			memcpy(res[i], it[i].s, it[i].n);
			res[i][it[i].n] = '\0';
		}
		if (res[i] == NULL) {
			free(it);
			free(rank);
			rba_strv_free(res, k);
			return RBA_E_NOMEM;
		}
		rank[it[i].id] = (uint32_t)i;
	}
	for (size_t r = 0; r < t->nrows; r++)
		rows[r] = rank[rows[r]];
	free(it);
	free(rank);
	*out = res;
	*n = (uint32_t)k;
	return 0;
}

static long
find_level(char *const *levels, uint32_t n, const char *s)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(levels[mid], s);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int
in_list(char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

/*
 * A column named in the pins must exist.  The error is the pins' (the
 * snapshot is what it is): it points at where the pins name the column
 * when the record was parsed from a file, else at the snapshot's header.
 */
static int
need_column(const struct pins *p, const struct csv_table *t, const char *name,
	    const char *key, const struct pins_pos *at, long *col,
	    struct rba_detail *d)
{
	*col = csv_table_col(t, name);
	if (*col >= 0)
		return 0;
	rba_detail_key(d, key);
	if (p->src.file != NULL && at->line > 0)
		return rba_fail(d, RBA_E_SCHEMA, p->src.file, at->line, at->col,
				"%s names column '%s', which the snapshot '%s' "
				"does not have",
				key, name, t->file);
	return rba_fail(d, RBA_E_SCHEMA, t->file, 1, 0,
			"%s names column '%s', which the snapshot does not have",
			key, name);
}

static int
check_pins_columns(const struct pins *p, const struct csv_table *t,
		   long *label_col, struct rba_detail *d)
{
	long c;
	int err;

	if ((err = need_column(p, t, p->data.label, "data.label",
			       &p->src.label, label_col, d)))
		return err;
	if (p->data.id != NULL &&
	    (err = need_column(p, t, p->data.id, "data.id", &p->src.id, &c, d)))
		return err;
	for (size_t i = 0; i < p->data.nexclude; i++)
		if ((err = need_column(p, t, p->data.exclude[i], "data.exclude",
				       &p->src.exclude[i], &c, d)))
			return err;
	for (size_t i = 0; i < p->data.ncategorical; i++) {
		const char *n = p->data.categorical[i];
		if ((err = need_column(p, t, n, "data.categorical",
				       &p->src.categorical[i], &c, d)))
			return err;
		if (strcmp(n, p->data.label) == 0 ||
		    (p->data.id && strcmp(n, p->data.id) == 0) ||
		    in_list(p->data.exclude, p->data.nexclude, n)) {
			/* The parser refuses this; a record built by hand
			 * is checked here. */
			rba_detail_key(d, "data.categorical");
			return rba_fail(d, RBA_E_SCHEMA, t->file, 1, 0,
					"column '%s' is declared categorical "
					"but is also the label, the id or "
					"excluded",
					n);
		}
	}
	if ((p->data.id && strcmp(p->data.id, p->data.label) == 0) ||
	    in_list(p->data.exclude, p->data.nexclude, p->data.label)) {
		rba_detail_key(d, "data.label");
		return rba_fail(d, RBA_E_SCHEMA, t->file, 1, 0,
				"the label column '%s' is also the id or "
				"excluded",
				p->data.label);
	}
	return 0;
}

/* First row whose cell in column c is not a number (for the message). */
static size_t
first_non_numeric(const struct csv_table *t, size_t c)
{
	for (size_t r = 0; r < t->nrows; r++) {
		size_t n;
		const char *s = csv_table_cell(t, r, c, &n);
		double v;
		if (csv_parse_number(s, n, &v) != 0)
			return r;
	}
	return 0;
}

/* The column of numeric feature f (NULL when f is one-hot). */
static const struct encode_column *
feature_column(const struct encode_spec *s, uint32_t f)
{
	for (uint32_t c = 0; c < s->ncolumns; c++) {
		const struct encode_column *col = &s->columns[c];
		uint32_t w = encode_column_width(col);
		if (f < w)
			return col->kind == ENCODE_NUMERIC ? col : NULL;
		f -= w;
	}
	return NULL;
}

/* 1 when v standardizes to a finite float32 or stays missing (NaN):
 * encode_standardize's expression, so the same float32 result. */
static int
standardize_takes(const struct encode_spec *spec, uint32_t f, float v)
{
	return v != v || isfinite((v - spec->mean[f]) / spec->scale[f]);
}

int
encode_standardize_check(const struct encode_spec *spec, uint32_t f, float v,
			 const char *text, const char *file,
			 unsigned long line, unsigned long col,
			 struct rba_detail *d)
{
	const struct encode_column *c;
	char num[32];

	if (standardize_takes(spec, f, v))
		return 0;
	c = feature_column(spec, f);
	if (text == NULL) {
		snprintf(num, sizeof(num), "%.9g", (double)v);
		text = num;
	}
	rba_detail_key(d, c != NULL ? c->name : "");
	return rba_fail(d, RBA_E_SCHEMA, file, line, col,
			"column '%s': value '%.64s' is beyond what the model's "
			"standardization can take",
			c != NULL ? c->name : "", text);
}

/*
 * Training data the standardization would take beyond float32 (a huge
 * value in a column of small spread: inf, then NaN weights or a NaN
 * validation loss) is refused here, before any training, at the row's
 * line.  The split and the statistics are those rebuild_prepare takes
 * next (encode_split, encode_standardize_fit over the training rows), so
 * this only asks; the spec is left as encode_fit leaves it (mean 0,
 * scale 1).  A split encode_split refuses is the caller's to report.
 */
static int
fit_range_check(const struct pins *p, const struct csv_table *t,
		struct encode_spec *spec, const struct encode_data *data,
		const size_t *src, struct rba_detail *d)
{
	size_t *tr = NULL, *va = NULL, ntr = 0, nva = 0, nf = spec->nfeatures;
	int err = 0;

	if (!p->data.standardize)
		return 0; /* raw inputs: finite float32 as read */
	if ((err = encode_split(p, data->n, &tr, &ntr, &va, &nva)) != 0)
		return err == RBA_E_NOMEM ? err : 0;
	encode_standardize_fit(spec, data, tr, ntr, 1);
	for (size_t r = 0; r < data->n && err == 0; r++) {
		const float *xr = data->x + r * nf;
		uint32_t f = 0;
		for (uint32_t c = 0; c < spec->ncolumns && err == 0; c++) {
			if (spec->columns[c].kind != ENCODE_NUMERIC) {
				f += encode_column_width(&spec->columns[c]);
				continue;
			}
			if (!standardize_takes(spec, f, xr[f])) {
				/* the text as the message shows it (64 bytes) */
				char shown[65];
				size_t n;
				const char *cell = csv_table_cell(t, r, src[c], &n);
				n = n < sizeof(shown) - 1 ? n : sizeof(shown) - 1;
				memcpy(shown, cell, n);
				shown[n] = '\0';
				err = encode_standardize_check(spec, f, xr[f], shown,
							       t->file, t->lines[r],
							       0, d);
			}
			f++;
		}
	}
	for (size_t f = 0; f < nf; f++) {
		spec->mean[f] = 0.0f;
		spec->scale[f] = 1.0f;
	}
	free(tr);
	free(va);
	return err;
}

static void
lvrow_free(uint32_t **lvrow, size_t n)
{
	if (lvrow == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(lvrow[i]);
	free(lvrow);
}

/*
 * Whether pins p's model takes no missing value: this tool's network
 * without data.impute.  An exec trainer's model is the user's (its
 * model: section unused), and takes the pins' tokens as its trainer
 * reads them.  This asks the pins which trainer they name rather than
 * calling through the trainer kinds (rebuild_trainer_kind) because
 * data/ sits below the table (doc/design.md 7.1).
 */
static int
takes_no_missing(const struct pins *p)
{
	return p->model.kind == PINS_MODEL_MLP && !policy_pins_is_exec(p) &&
	       p->data.impute == PINS_IMPUTE_NONE;
}

/* The spec's missing-value tokens: the pins' (none for a network
 * without an imputation).  0 or RBA_E_NOMEM. */
static int
fit_missing_tokens(const struct pins *p, struct encode_spec *spec)
{
	size_t nt;
	const char *const *tk = pins_missing_tokens(p, &nt);

	/* A network without an imputation takes no missing value:
	 * its spec keeps no token, so scoring refuses one too. */
	if (takes_no_missing(p))
		nt = 0;
	spec->missing = calloc(nt + 1, sizeof(char *));
	if (spec->missing == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < nt; i++) {
		if ((spec->missing[i] = strdup(tk[i])) == NULL)
			return RBA_E_NOMEM;
		spec->nmissing++;
	}
	return 0;
}

/* The classes of label column label_col (data->y: each row's) and the
 * positive class the pins name.  0 or an error, said in d. */
static int
fit_classes(const struct pins *p, const struct csv_table *t, long label_col,
	    struct encode_spec *spec, struct encode_data *data,
	    struct rba_detail *d)
{
	int err;

	err = distinct_sorted(t, (size_t)label_col, &spec->classes,
			      &spec->nclasses, REBUILD_MAX_CLASSES, data->y, d);
	if (err != 0)
		return err;
	if (spec->nclasses < 2) {
		rba_detail_key(d, "data.label");
		return rba_fail(d, RBA_E_SCHEMA, t->file, 0, 0,
				"the label column '%s' has only one class",
				p->data.label);
	}
	if (p->data.positive != NULL) {
		long pi = find_level(spec->classes, spec->nclasses,
				     p->data.positive);
		if (pi < 0) {
			/* Said where the pins name it; the snapshot is named
			 * in the reason. */
			rba_detail_key(d, "data.positive");
			return rba_fail(d, RBA_E_SCHEMA,
					p->src.file ? p->src.file : t->file,
					p->src.file ? p->src.positive.line : 0,
					p->src.file ? p->src.positive.col : 0,
					"positive class '%s' does not occur in "
					"column '%s' of the snapshot",
					p->data.positive, p->data.label);
		}
		spec->positive = (uint32_t)pi;
	}
	return 0;
}

/*
 * The spec's input columns: every column but the label, the id and the
 * exclusions, each with its kind and levels; src[c] gets input column
 * c's column in t, lvrow[c] a categorical column's rows' levels, *nfp
 * the feature count.  0 or an error, said in d.
 */
static int
fit_columns(const struct pins *p, const struct csv_table *t, long label_col,
	    struct encode_spec *spec, size_t *src, uint32_t **lvrow,
	    size_t *nfp, struct rba_detail *d)
{
	size_t nf = 0;
	int err;

	for (size_t c = 0; c < t->ncols; c++) {
		const char *name = t->names[c];
		struct encode_column *col = &spec->columns[spec->ncolumns];
		if ((long)c == label_col ||
		    (p->data.id && strcmp(name, p->data.id) == 0) ||
		    in_list(p->data.exclude, p->data.nexclude, name))
			continue;
		if (strlen(name) > ENCODE_MAX_TEXT)
			return rba_fail(d, RBA_E_LIMIT, t->file, 1, 0,
					"a column name is longer than %u bytes",
					ENCODE_MAX_TEXT);
		col->name = strdup(name);
		if (col->name == NULL)
			return RBA_E_NOMEM;
		src[spec->ncolumns++] = c;
		if (in_list(p->data.categorical, p->data.ncategorical, name)) {
			lvrow[spec->ncolumns - 1] =
				malloc((t->nrows ? t->nrows : 1) * sizeof(uint32_t));
			if (lvrow[spec->ncolumns - 1] == NULL)
				return RBA_E_NOMEM;
		}
		if (in_list(p->data.categorical, p->data.ncategorical, name) &&
		    pins_is_native(p, name)) {
			col->kind = ENCODE_NATIVE;
			err = distinct_sorted(t, c, &col->levels, &col->nlevels,
					      ENCODE_MAX_NATIVE_LEVELS,
					      lvrow[spec->ncolumns - 1], d);
			if (err != 0)
				return err;
			nf++;
		} else if (in_list(p->data.categorical, p->data.ncategorical,
				   name)) {
			col->kind = ENCODE_CATEGORICAL;
			err = distinct_sorted(t, c, &col->levels, &col->nlevels,
					      REBUILD_MAX_WIDTH,
					      lvrow[spec->ncolumns - 1], d);
			if (err != 0)
				return err;
			nf += col->nlevels;
		} else {
			col->kind = ENCODE_NUMERIC;
			if (t->types[c] != CSV_NUMERIC) {
				size_t r = first_non_numeric(t, c), cn;
				const char *cell = csv_table_cell(t, r, c, &cn);
				rba_detail_key(d, name);
				return rba_fail(d, RBA_E_SCHEMA, t->file,
						t->lines[r], 0,
						"column '%s' is not numeric "
						"('%.*s'): declare it categorical "
						"or exclude it",
						name, (int)cn, cell);
			}
			nf++;
		}
		if (nf > REBUILD_MAX_WIDTH)
			return rba_fail(d, RBA_E_LIMIT, t->file, 0, 0,
					"more than %u features",
					REBUILD_MAX_WIDTH);
	}
	if (nf == 0)
		return rba_fail(d, RBA_E_SCHEMA, t->file, 1, 0,
				"no input columns left after the label, id "
				"and exclusions");
	*nfp = nf;
	return 0;
}

/*
 * The encoded rows (data->x, nf features each: a number as read, a
 * native column's level index, one-hot levels) with the spec's mean 0
 * and scale 1.  0 or an error, said in d.
 */
static int
fit_rows(const struct pins *p, const struct csv_table *t, size_t nf,
	 struct encode_spec *spec, struct encode_data *data,
	 const size_t *src, uint32_t *const *lvrow, struct csv_table *consume,
	 struct rba_detail *d)
{
	size_t f;

	spec->nfeatures = (uint32_t)nf;
	spec->mean = calloc(nf, sizeof(float));
	spec->scale = malloc(nf * sizeof(float));
	data->n = t->nrows;
	data->x = calloc(t->nrows * nf, sizeof(float));
	if (spec->mean == NULL || spec->scale == NULL || data->x == NULL)
		return RBA_E_NOMEM;
	for (f = 0; f < nf; f++)
		spec->scale[f] = 1.0f;
	for (size_t r = 0; r < t->nrows; r++) {
		float *xr = data->x + r * nf;
		/* the numbers read so far go as x's rows come (x's pages
		 * are touched as they are written): the two are never
		 * held whole at once */
		if (consume != NULL && r % ENCODE_RELEASE_ROWS == 0)
			csv_table_num_release(consume, r);
		/* (data->y[r]: the label's level, from distinct_sorted) */
		f = 0;
		for (uint32_t c = 0; c < spec->ncolumns; c++) {
			const struct encode_column *col = &spec->columns[c];
			if (col->kind == ENCODE_NUMERIC) {
				float v = t->num[r * t->ncols + src[c]];
				if (v != v && takes_no_missing(p)) {
					size_t cn;
					const char *cell = csv_table_cell(
						t, r, src[c], &cn);
					rba_detail_key(d, col->name);
					return rba_fail(
						d, RBA_E_SCHEMA, t->file, t->lines[r], 0,
						"column '%s' has a missing value "
						"('%.*s') and a network takes none "
						"unless data.impute is declared "
						"(mean or a number)",
						col->name, (int)cn, cell);
				}
				xr[f++] = v;
				continue;
			}
			long lv = (long)lvrow[c][r]; /* find_level of its text */
			if (col->kind == ENCODE_NATIVE) {
				xr[f++] = (float)lv;
				continue;
			}
			xr[f + (size_t)lv] = 1.0f;
			f += col->nlevels;
		}
	}
	return 0;
}

static int
fit(const struct pins *p, const struct csv_table *t, struct csv_table *consume,
    struct encode_spec *spec, struct encode_data *data, struct rba_detail *d)
{
	long label_col;
	size_t *src = NULL, nf = 0;
	uint32_t **lvrow = NULL; /* per categorical column: its rows' levels */
	int err;

	memset(spec, 0, sizeof(*spec));
	memset(data, 0, sizeof(*data));
	spec->positive = ENCODE_NO_POSITIVE;
	if ((err = check_pins_columns(p, t, &label_col, d)))
		return err;
	if (t->nrows > REBUILD_MAX_EXAMPLES)
		return rba_fail(d, RBA_E_LIMIT, t->file, 0, 0,
				"%zu rows, over the limit of %u", t->nrows,
				REBUILD_MAX_EXAMPLES);
	if ((err = fit_missing_tokens(p, spec)) != 0)
		goto fail;
	spec->label = strdup(p->data.label);
	spec->columns = calloc(t->ncols, sizeof(*spec->columns));
	src = calloc(t->ncols, sizeof(*src));
	lvrow = calloc(t->ncols, sizeof(*lvrow));
	data->y = malloc((t->nrows ? t->nrows : 1) * sizeof(uint32_t));
	if (spec->label == NULL || spec->columns == NULL || src == NULL ||
	    lvrow == NULL || data->y == NULL) {
		err = RBA_E_NOMEM;
		goto fail;
	}
	if ((err = fit_classes(p, t, label_col, spec, data, d)) != 0 ||
	    (err = fit_columns(p, t, label_col, spec, src, lvrow, &nf, d)) != 0 ||
	    (err = fit_rows(p, t, nf, spec, data, src, lvrow, consume, d)) != 0 ||
	    (err = fit_range_check(p, t, spec, data, src, d)) != 0)
		goto fail;
	free(src);
	lvrow_free(lvrow, t->ncols);
	return 0;
fail:
	free(src);
	lvrow_free(lvrow, t->ncols);
	encode_spec_release(spec);
	encode_data_release(data);
	return err == RBA_E_NOMEM && d != NULL && d->reason[0] == 0
		       ? rba_fail(d, err, t->file, 0, 0, "out of memory")
		       : err;
}

int
encode_fit(const struct pins *p, const struct csv_table *t,
	   struct encode_spec *spec, struct encode_data *data,
	   struct rba_detail *d)
{
	return fit(p, t, NULL, spec, data, d);
}

int
encode_fit_consume(const struct pins *p, struct csv_table *t,
		   struct encode_spec *spec, struct encode_data *data,
		   struct rba_detail *d)
{
	int err = fit(p, t, t, spec, data, d);

	/* every number is read, whatever the outcome */
	csv_table_num_release(t, t->nrows);
	return err;
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int
encode_split(const struct pins *p, size_t n, size_t **train, size_t *ntrain,
	     size_t **val, size_t *nval)
{
	size_t nv, *perm, *tr, *va;

	*train = *val = NULL;
	*ntrain = *nval = 0;
	nv = (size_t)((double)n * p->data.split_validation + 0.5);
	if (nv < ENCODE_MIN_SPLIT_ROWS || nv > n ||
	    n - nv < ENCODE_MIN_SPLIT_ROWS)
		return RBA_E_RANGE;
	perm = malloc(n * sizeof(*perm));
	tr = malloc((n - nv) * sizeof(*tr));
	va = malloc(nv * sizeof(*va));
	if (perm == NULL || tr == NULL || va == NULL) {
		free(perm);
		free(tr);
		free(va);
		return RBA_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	if (p->data.split_order == PINS_SPLIT_TAIL) {
		memcpy(tr, perm, (n - nv) * sizeof(*tr));
		memcpy(va, perm + (n - nv), nv * sizeof(*va));
	} else {
		uint64_t key = rng_key(p->data.split_seed, RNG_SPLIT, 0, 0);
		for (size_t i = n; i-- > 1;) {
			size_t j = (size_t)rng_below(key, i, i + 1);
			size_t t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		memcpy(va, perm, nv * sizeof(*va));
		memcpy(tr, perm + nv, (n - nv) * sizeof(*tr));
		qsort(va, nv, sizeof(*va), cmp_size);
		qsort(tr, n - nv, sizeof(*tr), cmp_size);
	}
	free(perm);
	*train = tr;
	*ntrain = n - nv;
	*val = va;
	*nval = nv;
	return 0;
}

void
encode_standardize_fit(struct encode_spec *spec, const struct encode_data *data,
		       const size_t *idx, size_t nidx, int enabled)
{
	size_t nf = spec->nfeatures, f = 0;

	for (size_t i = 0; i < nf; i++) {
		spec->mean[i] = 0.0f;
		spec->scale[i] = 1.0f;
	}
	if (!enabled || nidx == 0)
		return;
	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		const struct encode_column *col = &spec->columns[c];
		double sum = 0.0, ss = 0.0, mean, sd;
		if (col->kind != ENCODE_NUMERIC) {
			f += encode_column_width(col);
			continue;
		}
		/* Double sums in row order: fixed, and exact enough that the
		 * float32 results do not depend on rounding luck.  Missing
		 * values (NaN: trees) are left out of both sums and counts. */
		size_t cnt = 0;
		for (size_t i = 0; i < nidx; i++) {
			float xv = data->x[idx[i] * nf + f];
			if (xv != xv)
				continue;
			sum += (double)xv;
			cnt++;
		}
		if (cnt == 0) {
			f++;
			continue;
		}
		mean = sum / (double)cnt;
		for (size_t i = 0; i < nidx; i++) {
			float xv = data->x[idx[i] * nf + f];
			double dv;
			if (xv != xv)
				continue;
			dv = (double)xv - mean;
			ss += dv * dv;
		}
		sd = sqrt(ss / (double)cnt);
		spec->mean[f] = (float)mean;
		spec->scale[f] = (float)sd > 0.0f && isfinite((float)sd)
					 ? (float)sd
					 : 1.0f;
		f++;
	}
}

int
encode_impute_fit(const struct pins *p, struct encode_spec *spec,
		  struct encode_data *data, const size_t *idx, size_t nidx)
{
	size_t nf = spec->nfeatures, f = 0;

	if (p->data.impute == PINS_IMPUTE_NONE)
		return 0;
	free(spec->impute);
	if ((spec->impute = calloc(nf, sizeof(float))) == NULL)
		return RBA_E_NOMEM;
	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		const struct encode_column *col = &spec->columns[c];
		double sum = 0.0;
		size_t cnt = 0;
		float v;
		if (col->kind != ENCODE_NUMERIC) {
			f += encode_column_width(col);
			continue;
		}
		if (p->data.impute == PINS_IMPUTE_CONST) {
			v = (float)p->data.impute_value;
		} else {
			for (size_t i = 0; i < nidx; i++) {
				float xv = data->x[idx[i] * nf + f];
				if (xv != xv)
					continue;
				sum += (double)xv;
				cnt++;
			}
			v = cnt ? (float)(sum / (double)cnt) : 0.0f;
		}
		spec->impute[f] = v;
		for (size_t r = 0; r < data->n; r++)
			if (data->x[r * nf + f] != data->x[r * nf + f])
				data->x[r * nf + f] = v;
		f++;
	}
	return 0;
}

void
encode_standardize(const struct encode_spec *spec, const float *raw, size_t n,
		   float *out)
{
	size_t nf = spec->nfeatures;
	const float *mean = spec->mean, *scale = spec->scale;

	/* Eight at a time through a local array (out may be raw, so the
	 * compiler would not vectorize the plain loop): the same IEEE
	 * subtraction and division of each element, the same bits. */
	for (size_t r = 0; r < n; r++) {
		const float *x = raw + r * nf;
		float *o = out + r * nf, t[8];
		size_t f = 0;
		for (; f + 8 <= nf; f += 8) {
			memcpy(t, x + f, sizeof(t));
			for (int j = 0; j < 8; j++)
				t[j] = (t[j] - mean[f + j]) / scale[f + j];
			memcpy(o + f, t, sizeof(t));
		}
		for (; f < nf; f++)
			o[f] = (x[f] - mean[f]) / scale[f];
	}
}

/*
 * Floats in order: ord_of(a) < ord_of(b) exactly when a < b, or a is -0
 * and b +0; float_of undoes it.
 */
static uint32_t
ord_of(float v)
{
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static float
float_of(uint32_t o)
{
	uint32_t u = o & 0x80000000u ? o & 0x7fffffffu : ~o;
	float v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

/* Whether the standardization of the float of order o is at least t
 * (above t where strict). */
static int
at_least(float mean, float scale, float t, int strict, uint32_t o)
{
	float x = (float_of(o) - mean) / scale;

	return strict ? x > t : x >= t;
}

/*
 * The least finite v, in float order, whose standardization x (as
 * encode_standardize computes it) is at least t (above t where strict),
 * as ord_of gives it; ord_of(+inf) where none is (+inf's x is +inf,
 * above every t that is not NaN).  x(v) is monotone in v (see
 * encode.h), so the floats split into those below and those at or
 * above: the search keeps every float below lo below and hi above,
 * narrows that around hint (where the edge usually is) by steps that
 * double, then halves.  (x of -0 and of +0 compare equal, so the edge is
 * never between them.)
 */
static uint32_t
least_at(float mean, float scale, float t, int strict, float hint)
{
	uint32_t lo = ord_of(-FLT_MAX), hi = ord_of(INFINITY), h = ord_of(hint);
	uint64_t step;

	h = h < lo ? lo : h > hi ? hi : h;
	if (at_least(mean, scale, t, strict, h)) {
		hi = h;
		for (step = 1; hi - lo > step; step *= 2) {
			uint32_t m = hi - (uint32_t)step;
			if (!at_least(mean, scale, t, strict, m)) {
				lo = m + 1;
				break;
			}
			hi = m;
		}
	} else {
		lo = h + 1;
		for (step = 1; hi - lo > step; step *= 2) {
			uint32_t m = lo + (uint32_t)step;
			if (at_least(mean, scale, t, strict, m)) {
				hi = m;
				break;
			}
			lo = m + 1;
		}
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (at_least(mean, scale, t, strict, mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Where the raw value of standardized value t about is. */
static float
raw_guess(float mean, float scale, float t)
{
	return (float)((double)t * (double)scale + (double)mean);
}

static int
raw_ok(const struct encode_spec *spec, uint32_t f)
{
	float m = spec->mean[f], s = spec->scale[f];

	return isfinite(m) && isfinite(s) && s > 0.0f;
}

int
encode_raw_bounds(const struct encode_spec *spec, uint32_t f, float *lo,
		  float *hi)
{
	float m = spec->mean[f], s = spec->scale[f];
	uint32_t a, b;

	if (!raw_ok(spec, f))
		return -1;
	a = least_at(m, s, -FLT_MAX, 0, raw_guess(m, s, -FLT_MAX));
	b = least_at(m, s, FLT_MAX, 1, raw_guess(m, s, FLT_MAX));
	if (a >= b) /* (a is ord_of(-FLT_MAX) or more: b - 1 cannot wrap) */
		return -1;
	*lo = float_of(a);
	*hi = float_of(b - 1);
	return 0;
}

float
encode_raw_threshold(const struct encode_spec *spec, uint32_t f, float t)
{
	assert(raw_ok(spec, f));
	if (t != t)
		return t; /* nothing is below it, raw or standardized */
	return float_of(least_at(spec->mean[f], spec->scale[f], t, 0,
				 raw_guess(spec->mean[f], spec->scale[f], t)));
}

static int
encode_one(const struct encode_spec *spec, const char *const *values,
	   const unsigned long *cols, float *x, const char *file,
	   unsigned long line, struct rba_detail *d)
{
	size_t f = 0;

	memset(x, 0, spec->nfeatures * sizeof(float));
	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		const struct encode_column *col = &spec->columns[c];
		const char *v = values[c];
		if (col->kind == ENCODE_NUMERIC) {
			double num;
			int err;
			if (spec->nmissing > 0 && encode_is_missing(spec, v)) {
				x[f] = spec->impute != NULL ? spec->impute[f] : NAN;
				f++;
				continue;
			}
			err = csv_parse_number(v, strlen(v), &num);
			if (err != 0) {
				rba_detail_key(d, col->name);
				return rba_fail(d, RBA_E_SCHEMA, file, line, 0,
						"column '%s' needs a number, "
						"not '%.64s'",
						col->name, v);
			}
			x[f] = (float)num;
			if ((err = encode_standardize_check(
				     spec, (uint32_t)f, x[f], v, file, line,
				     cols != NULL ? cols[c] : 0, d)) != 0)
				return err;
			f++;
			continue;
		}
		long lv = find_level(col->levels, col->nlevels, v);
		if (col->kind == ENCODE_NATIVE) {
			/* an unseen level: nlevels, in no level set */
			x[f++] = lv < 0 ? (float)col->nlevels : (float)lv;
			continue;
		}
		if (lv < 0) {
			rba_detail_key(d, col->name);
			return rba_fail(d, RBA_E_SCHEMA, file, line, 0,
					"unknown level '%.64s' of categorical "
					"column '%s'",
					v, col->name);
		}
		x[f + (size_t)lv] = 1.0f;
		f += col->nlevels;
	}
	return 0;
}

long
encode_level_index(const struct encode_column *col, const char *v)
{
	return find_level(col->levels, col->nlevels, v);
}

int
encode_values(const struct encode_spec *spec, const char *const *values,
	      float *x, struct rba_detail *d)
{
	return encode_one(spec, values, NULL, x, NULL, 0, d);
}

int
encode_values_at(const struct encode_spec *spec, const char *const *values,
		 const char *file, unsigned long line,
		 const unsigned long *cols, float *x, struct rba_detail *d)
{
	return encode_one(spec, values, cols, x, file, line, d);
}

/*
 * Row r of t, whose spec columns are all numeric and numeric in t, into
 * x from t's numbers: 1, or 0 (x partly written) when the row holds a
 * missing value or one standardize_takes refuses.
 */
static int
numbers_row(const struct encode_spec *spec, const struct csv_table *t,
	    size_t r, const size_t *src, float *x)
{
	const float *num = t->num + r * t->ncols;
	int ok = 1;

	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		float v = num[src[c]];
		x[c] = v;
		ok &= v == v && standardize_takes(spec, c, v);
	}
	return ok;
}

int
encode_table(const struct encode_spec *spec, const struct csv_table *t,
	     float *x, struct rba_detail *d)
{
	size_t *src, *cn, nc = t->ncols ? t->ncols : 1;
	const char **vals, **cp;
	char *text = NULL;
	size_t tcap = 0;
	int err = 0, numeric;

	src = malloc((spec->ncolumns ? spec->ncolumns : 1) * sizeof(*src));
	vals = malloc((spec->ncolumns ? spec->ncolumns : 1) * sizeof(*vals));
	cp = malloc(nc * sizeof(*cp));
	cn = malloc(nc * sizeof(*cn));
	if (src == NULL || vals == NULL || cp == NULL || cn == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		long col = csv_table_col(t, spec->columns[c].name);
		if (col < 0) {
			rba_detail_key(d, spec->columns[c].name);
			err = rba_fail(d, RBA_E_SCHEMA, t->file, 1, 0,
				       "the cases lack input column '%s'",
				       spec->columns[c].name);
			goto out;
		}
		src[c] = (size_t)col;
	}
	/* Numbers alone (every column numeric, and numeric in t): each
	 * row from t's numbers, which are csv_parse_number's values as
	 * float32, as encode_one makes them; a row with a missing value
	 * or a value the standardization cannot take goes encode_one's way
	 * below, for its imputed value or its error. */
	numeric = t->nrows > 0;
	for (uint32_t c = 0; c < spec->ncolumns; c++)
		numeric &= spec->columns[c].kind == ENCODE_NUMERIC &&
			   t->types[src[c]] == CSV_NUMERIC;
	for (size_t r = 0; r < t->nrows; r++) {
		size_t need = 0, at = 0;
		if (numeric && numbers_row(spec, t, r, src, x + r * spec->nfeatures))
			continue;
		/* the row's texts, each NUL-terminated, as encode_one takes */
		csv_table_row(t, r, cp, cn);
		for (uint32_t c = 0; c < spec->ncolumns; c++)
			need += cn[src[c]] + 1;
		if (need > tcap) {
			char *nt = realloc(text, need);
			if (nt == NULL) {
				err = RBA_E_NOMEM;
				goto out;
			}
			text = nt;
			tcap = need;
		}
		for (uint32_t c = 0; c < spec->ncolumns; c++) {
			memcpy(text + at, cp[src[c]], cn[src[c]]);
			text[at + cn[src[c]]] = '\0';
			vals[c] = text + at;
			at += cn[src[c]] + 1;
		}
		err = encode_one(spec, vals, NULL, x + r * spec->nfeatures,
				 t->file, t->lines[r], d);
		if (err != 0)
			goto out;
	}
out:
	free(src);
	free(vals);
	free(cp);
	free(cn);
	free(text);
	return err;
}
