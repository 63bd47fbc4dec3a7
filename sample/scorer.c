/*
 * scorer.c - scoring decoded sample chunks with a model: the mapping
 * from sample columns to the model's inputs.  The arithmetic is the
 * model's ABI's (rebuild_sparse_score, artifact_score).
 */
#include "sample/scorer.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "data/csv_write.h"
#include "exec/exec.h"
#include "train/kernel.h"
#include "train/trainer.h"
#include "model/xgbtree.h"

/* A model input column and where its values come from in the layout. */
struct sc_col {
	const struct encode_column *ec;
	long src;    /* layout column */
	uint32_t f0; /* first feature */
};

typedef int standardize_fn(const float *restrict v, uint32_t n,
			   float mean, float scale, float *restrict x);
static standardize_fn *standardize_pick(void);
typedef int inside_fn(const float *restrict v, uint32_t n, float lo,
		      float hi);
static inside_fn *inside_pick(void);

struct sample_scorer {
	const struct artifact *a;
	standardize_fn *standardize; /* the widest vectors' */
	sample_floats_fn *floats;    /* the same */
	int sparse;
	uint32_t nclasses, nfeat, ncols;
	struct sc_col *cols;
	struct rebuild_sparse *sp; /* the sparse path (NULL: dense) */
	float *xon; /* per feature: (1 - mean) / scale */
	/* per chunk */
	size_t cap_cases, cap_levels;
	float *tx0;	/* ncases x ncols: first-layer multipliers */
	uint32_t *row0; /* ncases x ncols: first-layer weight rows (a
			 * numeric or native column's always its feature:
			 * filled when allocated, see grow) */
	size_t cap_rows; /* cases tx0 and row0 hold */
	float *lvl_x;	/* per column, per dictionary level: value or
			 * multiplier (cap_levels apart) */
	int32_t *lvl_f; /* the same: row, or -1 (bad), -2 (beyond float32) */
	float *raw;	/* fallback: SCORE_BLOCK x nfeat */
	float *xc;	/* the column path: nfeat x SCORE_ROWS inputs, or
			 * NULL (see run_cols) */
	/* the column path of a forest of our own, raw (raw_setup) */
	int raw_tried;
	struct rebuild_sparse *sp_raw; /* NULL: none */
	float *raw_lo, *raw_hi; /* per feature: encode_raw_bounds */
	inside_fn *inside;	/* the widest vectors' */
};

void
sample_scorer_free(struct sample_scorer *sc)
{
	if (sc == NULL)
		return;
	rebuild_sparse_free(sc->sp);
	rebuild_sparse_free(sc->sp_raw);
	free(sc->raw_lo);
	free(sc->raw_hi);
	free(sc->xon);
	free(sc->cols);
	free(sc->tx0);
	free(sc->row0);
	free(sc->lvl_x);
	free(sc->lvl_f);
	free(sc->raw);
	free(sc->xc);
	free(sc);
}

/*
 * The sparse path needs every one-hot feature to standardize to zero
 * when off ((0 - mean) / scale == 0, i.e. mean 0), which is what
 * encode_standardize_fit leaves; anything else is scored densely.  A
 * native column is one term, always given: its level index (nlevels
 * for a level unseen in training) standardized as encode_standardize
 * does, so the forest sees the dense path's input bit for bit.
 */
static int
sparse_ok(const struct artifact *a)
{
	const struct encode_spec *s = &a->spec;
	uint32_t f = 0;

	for (uint32_t c = 0; c < s->ncolumns; c++) {
		const struct encode_column *col = &s->columns[c];
		if (col->kind == ENCODE_NUMERIC) {
			f++;
			continue;
		}
		if (col->kind == ENCODE_NATIVE) {
			f++;
			continue;
		}
		for (uint32_t k = 0; k < col->nlevels; k++, f++)
			if ((0.0f - s->mean[f]) / s->scale[f] != 0.0f)
				return 0;
	}
	return 1;
}

static int
sparse_setup(struct sample_scorer *sc)
{
	const struct encode_spec *s = &sc->a->spec;
	int err;

	/* an XGBoost model's forest follows XGBoost's rules, not an ABI's */
	if (sc->a->model.kind == REBUILD_KIND_GBDT &&
	    sc->a->model.forest.rules != REBUILD_FOREST_OWN)
		err = xgbtree_sparse_new(&sc->a->model, &sc->sp);
	else
		err = rebuild_sparse_new(sc->a->abi, &sc->a->model, &sc->sp);
	if (err != 0)
		return err;
	sc->xon = malloc((s->nfeatures ? s->nfeatures : 1) * sizeof(float));
	if (sc->xon == NULL)
		return RBA_E_NOMEM;
	for (uint32_t f = 0; f < s->nfeatures; f++)
		sc->xon[f] = (1.0f - s->mean[f]) / s->scale[f];
	/* the column path, for a model of numbers alone whose scorer
	 * takes columns (a network or a forest of ABI 1) */
	for (uint32_t c = 0; c < s->ncolumns; c++)
		if (s->columns[c].kind != ENCODE_NUMERIC)
			return 0;
	if (rebuild_sparse_takes_cols(sc->sp) &&
	    (sc->xc = calloc((size_t)(s->nfeatures ? s->nfeatures : 1) *
				     SCORE_ROWS, sizeof(float))) == NULL)
		return RBA_E_NOMEM;
	return 0;
}

int
sample_scorer_new(const struct artifact *a, struct sample_scorer **out,
		 struct rba_detail *d)
{
	struct sample_scorer *sc;
	int err;

	*out = NULL;
	if (a->exec_pins == NULL &&
	    !(a->model.kind == REBUILD_KIND_GBDT &&
	      a->model.forest.rules != REBUILD_FOREST_OWN) &&
	    !rebuild_abi_supported(a->abi))
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
				"this build cannot score trainer ABI %u", a->abi);
	sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		return RBA_E_NOMEM;
	sc->a = a;
	sc->standardize = standardize_pick();
	sc->inside = inside_pick();
	sc->floats = sample_floats_pick();
	sc->nclasses = a->spec.nclasses;
	sc->nfeat = a->spec.nfeatures;
	sc->ncols = a->spec.ncolumns;
	sc->cols = calloc(sc->ncols ? sc->ncols : 1, sizeof(*sc->cols));
	if (sc->cols == NULL) {
		sample_scorer_free(sc);
		return RBA_E_NOMEM;
	}
	for (uint32_t c = 0, f = 0; c < sc->ncols; c++) {
		const struct encode_column *ec = &a->spec.columns[c];
		sc->cols[c].ec = ec;
		sc->cols[c].src = -1;
		sc->cols[c].f0 = f;
		f += encode_column_width(ec);
	}
	sc->sparse = a->exec_pins == NULL && sparse_ok(a);
	if (sc->sparse && (err = sparse_setup(sc)) != 0) {
		sample_scorer_free(sc);
		return err;
	}
	*out = sc;
	return 0;
}

int
sample_scorer_is_sparse(const struct sample_scorer *sc)
{
	return sc->sparse;
}

int
sample_scorer_bind(struct sample_scorer *sc, const struct sample_layout *l,
		  struct rba_detail *d)
{
	for (uint32_t c = 0; c < sc->ncols; c++) {
		const char *name = sc->cols[c].ec->name;
		sc->cols[c].src = -1;
		for (uint32_t k = 0; k < l->ncols; k++)
			if (strcmp(l->names[k], name) == 0) {
				sc->cols[c].src = (long)k;
				break;
			}
		if (sc->cols[c].src < 0) {
			rba_detail_key(d, name);
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"the cases lack input column '%s'", name);
		}
	}
	return 0;
}

/*
 * A numeric or native column's term always multiplies its feature's
 * weight row, whichever path makes the term: those rows of row0 are
 * written once, here, for rows cases, and prepare_numbers_fast does
 * not write them again.  (The other paths write the same value.)
 */
static void
fill_rows(struct sample_scorer *sc, size_t rows)
{
	size_t K = sc->ncols;

	for (uint32_t k = 0; k < K; k++) {
		enum encode_kind kind = sc->cols[k].ec->kind;
		if (kind != ENCODE_NUMERIC && kind != ENCODE_NATIVE)
			continue;
		for (size_t i = 0; i < rows; i++)
			sc->row0[i * K + k] = sc->cols[k].f0;
	}
}

static int
grow(struct sample_scorer *sc, const struct sample_chunk *c, size_t rows)
{
	size_t need = rows * (sc->ncols ? sc->ncols : 1);
	size_t levels = 1;

	for (uint32_t k = 0; k < sc->ncols; k++) {
		const struct sample_column *col = &c->cols[sc->cols[k].src];
		if (col->kind == SAMPLE_COL_DICT && col->nlevels > levels)
			levels = col->nlevels;
	}
	if (need > sc->cap_cases) {
		free(sc->tx0);
		free(sc->row0);
		sc->tx0 = malloc(need * sizeof(float));
		sc->row0 = malloc(need * sizeof(uint32_t));
		sc->cap_cases = sc->tx0 && sc->row0 ? need : 0;
		if (sc->cap_cases == 0)
			return RBA_E_NOMEM;
		fill_rows(sc, sc->cap_cases / (sc->ncols ? sc->ncols : 1));
	}
	sc->cap_rows = sc->cap_cases / (sc->ncols ? sc->ncols : 1);
	if (levels > sc->cap_levels) {
		size_t all = levels * (sc->ncols ? sc->ncols : 1);
		free(sc->lvl_x);
		free(sc->lvl_f);
		sc->lvl_x = malloc(all * sizeof(float));
		sc->lvl_f = malloc(all * sizeof(int32_t));
		sc->cap_levels = sc->lvl_x && sc->lvl_f ? levels : 0;
		if (sc->cap_levels == 0)
			return RBA_E_NOMEM;
	}
	return 0;
}

static long
find_level(const struct encode_column *ec, const char *s)
{
	size_t lo = 0, hi = ec->nlevels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(ec->levels[mid], s);
		if (r == 0)
			return (long)mid;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int
bad_value(const struct sample_chunk *c, uint32_t col, uint32_t i,
	  const struct encode_column *ec, uint32_t *bad_case,
	  struct rba_detail *d)
{
	char tmp[32];
	const char *v = sample_chunk_text(c, col, i, tmp);

	if (bad_case != NULL)
		*bad_case = i;
	rba_detail_key(d, ec->name);
	if (ec->kind == ENCODE_NUMERIC)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"case '%.64s': column '%s' needs a number, not "
				"'%.64s'", c->ids[i], ec->name, v);
	return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
			"case '%.64s': unknown level '%.64s' of categorical "
			"column '%s'", c->ids[i], v, ec->name);
}

/* A value of feature f the model's standardization takes beyond float32
 * (encode_standardize_check): a case the model cannot take, as
 * bad_value. */
static int
bad_range(const struct sample_scorer *sc, const struct sample_chunk *c,
	  uint32_t col, uint32_t i, uint32_t f, uint32_t *bad_case,
	  struct rba_detail *d)
{
	char tmp[32];
	const char *v = sample_chunk_text(c, col, i, tmp);
	struct rba_detail e;
	double num = 0;

	if (bad_case != NULL)
		*bad_case = i;
	(void)csv_parse_number(v, strlen(v), &num);
	rba_detail_clear(&e);
	(void)encode_standardize_check(&sc->a->spec, f, (float)num, v, NULL, 0,
				       0, &e);
	rba_detail_key(d, e.key);
	return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "case '%.64s': %s",
			c->ids[i], e.reason);
}

/*
 * Whether text t of numeric feature f is a missing value of the model
 * (one of its tokens): then *raw gets what the model takes in its
 * place, the imputation or NaN (trees).
 */
static int
missing_raw(const struct encode_spec *spec, uint32_t f, const char *t,
	    float *raw)
{
	if (spec->nmissing == 0 || !encode_is_missing(spec, t))
		return 0;
	*raw = spec->impute != NULL ? spec->impute[f] : NAN;
	return 1;
}

/*
 * The term of native column ec (feature f) for text t: its level index,
 * nlevels for a level unseen in training (encode_values' rule, as the
 * dense path reads it), standardized as encode_standardize does.
 */
static float
native_x(const struct encode_spec *spec, const struct encode_column *ec,
	 uint32_t f, const char *t)
{
	long lv = find_level(ec, t);
	float raw = lv < 0 ? (float)ec->nlevels : (float)lv;

	return (raw - spec->mean[f]) / spec->scale[f];
}

/*
 * Model column k's terms of cases i0 to i1 - 1 (at most SCORE_ROWS)
 * from a number column, when every value is a number the model takes:
 * the same standardization as prepare_numbers, in loops of a constant
 * trip count the compiler vectorizes (IEEE operations lane by lane: the
 * same bits).  0 when a value is missing or standardizes beyond
 * float32: prepare_numbers then does the block, one case at a time.
 */
#define NUM_LANES 16

/*
 * x[i] = (v[i] - mean) / scale for i < n; 1 when every x[i] is
 * finite.  IEEE operations lane by lane: the same bits at any vector
 * width, so the widest the CPU has is taken, the strict kernels' choice
 * (RBA_STRICT_ISA narrows it, for tests).
 */
static inline __attribute__((always_inline)) int
standardize_body(const float *restrict v, uint32_t n, float mean,
		 float scale, float *restrict x)
{
	uint32_t i = 0;
	int ok = 1;

	for (; i + NUM_LANES <= n; i += NUM_LANES) {
		int good = 1;
		for (uint32_t j = i; j < i + NUM_LANES; j++) {
			x[j] = (v[j] - mean) / scale;
			good &= fabsf(x[j]) <= FLT_MAX; /* not NaN, not inf */
		}
		ok &= good;
	}
	for (; i < n; i++) {
		x[i] = (v[i] - mean) / scale;
		ok &= fabsf(x[i]) <= FLT_MAX;
	}
	return ok;
}

#define STANDARDIZE(SFX, ATTR)                                                 \
	ATTR static int standardize_##SFX(const float *restrict v,             \
					  uint32_t n, float mean, float scale, \
					  float *restrict x)                   \
	{                                                                      \
		return standardize_body(v, n, mean, scale, x);                 \
	}
KERNEL_ISA_EACH(STANDARDIZE)

static standardize_fn *
standardize_pick(void)
{
	return KERNEL_ISA_PICK(standardize);
}

/* 1 when lo <= v[i] <= hi for every i < n (a NaN is not): the lanes'
 * verdicts anded in vectors, the vectors' lanes at the end */
typedef float sc_vf __attribute__((vector_size(32)));
typedef int32_t sc_vi __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) int
inside_body(const float *restrict v, uint32_t n, float lo, float hi)
{
	const sc_vf l = { lo, lo, lo, lo, lo, lo, lo, lo };
	const sc_vf h = { hi, hi, hi, hi, hi, hi, hi, hi };
	sc_vi a = (sc_vi){ 0 } - 1, b = a;
	uint32_t i = 0;
	int ok = 1;

	for (; i + 16 <= n; i += 16) {
		sc_vf x, y;
		memcpy(&x, v + i, sizeof(x));
		memcpy(&y, v + i + 8, sizeof(y));
		a &= (x >= l) & (x <= h);
		b &= (y >= l) & (y <= h);
	}
	a &= b;
	for (uint32_t j = 0; j < 8; j++)
		ok &= a[j] != 0;
	for (; i < n; i++)
		ok &= (v[i] >= lo) & (v[i] <= hi);
	return ok;
}

#define INSIDE(SFX, ATTR)                                                      \
	ATTR static int inside_##SFX(const float *restrict v, uint32_t n,      \
				     float lo, float hi)                       \
	{                                                                      \
		return inside_body(v, n, lo, hi);                              \
	}
KERNEL_ISA_EACH(INSIDE)

static inside_fn *
inside_pick(void)
{
	return KERNEL_ISA_PICK(inside);
}

/* Model column k's n (at most SCORE_ROWS) values from case i0 on,
 * converted and standardized into x: 1 when every one is finite. */
static int
numbers_fast(struct sample_scorer *sc, const struct sample_chunk *c,
	     uint32_t k, uint32_t i0, uint32_t n, float *x)
{
	const struct encode_spec *spec = &sc->a->spec;
	const struct sc_col *mc = &sc->cols[k];
	float v[SCORE_ROWS];

	assert(n <= SCORE_ROWS);
	sc->floats(&c->cols[mc->src], i0, n, v);
	return sc->standardize(v, n, spec->mean[mc->f0], spec->scale[mc->f0],
			       x);
}

static int
prepare_numbers_fast(struct sample_scorer *sc, const struct sample_chunk *c,
		     uint32_t k, uint32_t i0, uint32_t i1)
{
	uint32_t n = i1 - i0;
	float *tx = sc->tx0 + k;
	size_t K = sc->ncols;
	float x[SCORE_ROWS];

	if (!numbers_fast(sc, c, k, i0, n, x))
		return 0;
	/* row[i * K] is f already (fill_rows) */
	for (uint32_t i = 0; i < n; i++)
		tx[(size_t)i * K] = x[i];
	return 1;
}

/* Model column k's inputs of cases i0 to i1 - 1 from a number column of
 * the chunk, stride apart from tx (and their rows, where row is not
 * NULL): each value standardized, a missing one's text a token. */
static int
numbers_into(struct sample_scorer *sc, const struct sample_chunk *c,
	     uint32_t k, uint32_t i0, uint32_t i1, float *tx, size_t stride,
	     uint32_t *row, uint32_t *bad_case, struct rba_detail *d)
{
	const struct encode_spec *spec = &sc->a->spec;
	const struct sc_col *mc = &sc->cols[k];
	const struct encode_column *ec = mc->ec;
	const struct sample_column *col = &c->cols[mc->src];
	uint32_t src = (uint32_t)mc->src, f = mc->f0;
	float mean = spec->mean[f], scale = spec->scale[f];
	char tmp[32];

	for (uint32_t i = i0; i < i1; i++) {
		float rv = (float)sample_column_num(col, i);
		size_t at = (size_t)(i - i0) * stride;
		if (rv != rv) {
			/* a missing value: its text is a token */
			const char *t = sample_chunk_text(c, src, i, tmp);
			if (!missing_raw(spec, f, t, &rv))
				return bad_value(c, src, i, ec, bad_case, d);
		}
		tx[at] = (rv - mean) / scale;
		if (!isfinite(tx[at]) && rv == rv)
			return bad_range(sc, c, src, i, f, bad_case, d);
		if (row != NULL)
			row[at] = f;
	}
	return 0;
}

/* Model column k's terms of cases i0 to i1 - 1 from a number column. */
static int
prepare_numbers(struct sample_scorer *sc, const struct sample_chunk *c,
		uint32_t k, uint32_t i0, uint32_t i1, uint32_t *bad_case,
		struct rba_detail *d)
{
	return numbers_into(sc, c, k, i0, i1, sc->tx0 + k, sc->ncols,
			    sc->row0 + k, bad_case, d);
}

/* Model column k's dictionary levels, each resolved once a chunk into
 * its table (lvl_f: its feature, -1 not a value, -2 beyond float32;
 * lvl_x: its term). */
static void
resolve_dict(struct sample_scorer *sc, const struct sample_chunk *c, uint32_t k)
{
	const struct encode_spec *spec = &sc->a->spec;
	const struct sc_col *mc = &sc->cols[k];
	const struct encode_column *ec = mc->ec;
	const struct sample_column *col = &c->cols[mc->src];
	uint32_t f = mc->f0;
	float *lvl_x = sc->lvl_x + k * sc->cap_levels;
	int32_t *lvl_f = sc->lvl_f + k * sc->cap_levels;

	for (uint32_t v = 0; v < col->nlevels; v++) {
		if (ec->kind == ENCODE_NUMERIC) {
			double num;
			float rv;
			const char *t = col->levels[v];
			if (missing_raw(spec, f, t, &rv)) {
				lvl_f[v] = (int32_t)f;
				lvl_x[v] = (rv - spec->mean[f]) / spec->scale[f];
				continue;
			}
			lvl_f[v] = csv_parse_number(t, strlen(t), &num)
					   ? -1 : (int32_t)f;
			lvl_x[v] = ((float)num - spec->mean[f]) / spec->scale[f];
			if (lvl_f[v] >= 0 && !isfinite(lvl_x[v]))
				lvl_f[v] = -2; /* beyond float32 */
		} else if (ec->kind == ENCODE_NATIVE) {
			lvl_f[v] = (int32_t)f;
			lvl_x[v] = native_x(spec, ec, f, col->levels[v]);
		} else {
			long lv = find_level(ec, col->levels[v]);
			lvl_f[v] = lv < 0 ? -1 : (int32_t)(f + (uint32_t)lv);
			lvl_x[v] = lv < 0 ? 0.0f : sc->xon[f + (uint32_t)lv];
		}
	}
}

/* Model column k's terms of cases i0 to i1 - 1 from a dictionary column:
 * each case's code looked up in the column's table (resolve_dict). */
static int
prepare_dict(struct sample_scorer *sc, const struct sample_chunk *c,
	     uint32_t k, uint32_t i0, uint32_t i1, uint32_t *bad_case,
	     struct rba_detail *d)
{
	const struct sc_col *mc = &sc->cols[k];
	const struct sample_column *col = &c->cols[mc->src];
	const uint32_t *codes = col->codes;
	uint32_t src = (uint32_t)mc->src, f = mc->f0;
	const float *lvl_x = sc->lvl_x + k * sc->cap_levels;
	const int32_t *lvl_f = sc->lvl_f + k * sc->cap_levels;
	float *tx = sc->tx0 + k;
	uint32_t *row = sc->row0 + k;
	size_t K = sc->ncols;

	for (uint32_t i = i0; i < i1; i++) {
		uint32_t code = codes[i];
		int32_t lf = lvl_f[code];
		size_t at = (size_t)(i - i0) * K;
		if (lf == -2)
			return bad_range(sc, c, src, i, f, bad_case, d);
		if (lf < 0)
			return bad_value(c, src, i, mc->ec, bad_case, d);
		tx[at] = lvl_x[code];
		row[at] = (uint32_t)lf;
	}
	return 0;
}

/* Model column k's terms of cases i0 to i1 - 1 from each case's text
 * (rare: a numeric-looking categorical, or ids). */
static int
prepare_texts(struct sample_scorer *sc, const struct sample_chunk *c,
	      uint32_t k, uint32_t i0, uint32_t i1, uint32_t *bad_case,
	      struct rba_detail *d)
{
	const struct encode_spec *spec = &sc->a->spec;
	const struct sc_col *mc = &sc->cols[k];
	const struct encode_column *ec = mc->ec;
	uint32_t src = (uint32_t)mc->src, f = mc->f0;
	float *tx = sc->tx0 + k;
	uint32_t *row = sc->row0 + k;
	size_t K = sc->ncols;
	char tmp[32];

	for (uint32_t i = i0; i < i1; i++) {
		const char *t = sample_chunk_text(c, src, i, tmp);
		size_t at = (size_t)(i - i0) * K;
		if (ec->kind == ENCODE_NUMERIC) {
			double num;
			float rv;
			if (missing_raw(spec, f, t, &rv)) {
				tx[at] = (rv - spec->mean[f]) / spec->scale[f];
				row[at] = f;
				continue;
			}
			if (csv_parse_number(t, strlen(t), &num))
				return bad_value(c, src, i, ec, bad_case, d);
			tx[at] = ((float)num - spec->mean[f]) / spec->scale[f];
			if (!isfinite(tx[at]))
				return bad_range(sc, c, src, i, f, bad_case, d);
			row[at] = f;
		} else if (ec->kind == ENCODE_NATIVE) {
			tx[at] = native_x(spec, ec, f, t);
			row[at] = f;
		} else {
			long lv = find_level(ec, t);
			if (lv < 0)
				return bad_value(c, src, i, ec, bad_case, d);
			tx[at] = sc->xon[f + (uint32_t)lv];
			row[at] = f + (uint32_t)lv;
		}
	}
	return 0;
}

/*
 * Fills the first-layer terms of cases i0 to i1 - 1, column by column:
 * for case i and model column k, tx0[(i - i0) * ncols + k] multiplies
 * weight row row0[(i - i0) * ncols + k].  Numeric: the standardized
 * value and the column's feature; categorical: the one-hot multiplier
 * and the level's feature; native: the level index and the column's
 * feature.  Dictionary columns are resolved first (resolve_dict).  Over
 * a whole chunk, the first error is the first bad case of the first
 * column that has one.
 */
static int
prepare(struct sample_scorer *sc, const struct sample_chunk *c, uint32_t i0,
	uint32_t i1, uint32_t *bad_case, struct rba_detail *d)
{
	for (uint32_t k = 0; k < sc->ncols; k++) {
		const struct sc_col *mc = &sc->cols[k];
		const struct sample_column *col = &c->cols[mc->src];
		int err;

		if (mc->ec->kind == ENCODE_NUMERIC &&
		    col->kind == SAMPLE_COL_NUMBER)
			err = i1 - i0 <= SCORE_ROWS &&
					      prepare_numbers_fast(sc, c, k, i0, i1)
				      ? 0
				      : prepare_numbers(sc, c, k, i0, i1,
							bad_case, d);
		else if (col->kind == SAMPLE_COL_DICT)
			err = prepare_dict(sc, c, k, i0, i1, bad_case, d);
		else
			err = prepare_texts(sc, c, k, i0, i1, bad_case, d);
		if (err != 0)
			return err;
	}
	return 0;
}

/*
 * The reference path: the raw feature rows encode_values would make,
 * scored by artifact_score a block at a time.
 */
static int
run_dense(struct sample_scorer *sc, const struct sample_chunk *c,
	  float *probs, uint32_t *bad_case, struct rba_detail *d)
{
	const struct encode_spec *spec = &sc->a->spec;
	size_t nf = sc->nfeat;
	char tmp[32];
	int err;

	if (sc->raw == NULL) {
		sc->raw = malloc(SCORE_BLOCK * (nf ? nf : 1) * sizeof(float));
		if (sc->raw == NULL)
			return RBA_E_NOMEM;
	}
	for (uint32_t r0 = 0; r0 < c->ncases; r0 += SCORE_BLOCK) {
		uint32_t n = c->ncases - r0 < SCORE_BLOCK ? c->ncases - r0 : SCORE_BLOCK;
		memset(sc->raw, 0, (size_t)n * nf * sizeof(float));
		for (uint32_t i = 0; i < n; i++) {
			float *x = sc->raw + (size_t)i * nf;
			for (uint32_t k = 0; k < sc->ncols; k++) {
				const struct sc_col *mc = &sc->cols[k];
				const struct encode_column *ec = mc->ec;
				uint32_t src = (uint32_t)mc->src;
				const char *t = sample_chunk_text(c, src, r0 + i, tmp);
				if (ec->kind == ENCODE_NUMERIC) {
					double num;
					if (missing_raw(spec, mc->f0, t, &x[mc->f0]))
						continue;
					if (csv_parse_number(t, strlen(t), &num))
						return bad_value(c, src, r0 + i, ec,
								 bad_case, d);
					x[mc->f0] = (float)num;
					if (encode_standardize_check(
						    spec, mc->f0, x[mc->f0], t, NULL,
						    0, 0, NULL) != 0)
						return bad_range(sc, c, src, r0 + i,
								 mc->f0, bad_case, d);
				} else if (ec->kind == ENCODE_NATIVE) {
					/* encode_values' rule: an unseen level
					 * is the index nlevels */
					long lv = find_level(ec, t);
					x[mc->f0] = lv < 0 ? (float)ec->nlevels
							   : (float)lv;
				} else {
					long lv = find_level(ec, t);
					if (lv < 0)
						return bad_value(c, src, r0 + i, ec,
								 bad_case, d);
					x[mc->f0 + (uint32_t)lv] = 1.0f;
				}
			}
		}
		err = artifact_score(sc->a, sc->raw, n,
				     probs + (size_t)r0 * spec->nclasses);
		if (err)
			return err;
	}
	return 0;
}

/*
 * An exec artifact: the chunk's cases as CSV (the model's input columns
 * in its order, each cell the exact text the sample holds), scored by
 * the pins' score command (exec/exec.h).
 */
static int
run_exec(struct sample_scorer *sc, const struct sample_chunk *c, float *probs,
	 struct rba_detail *d)
{
	const struct artifact *a = sc->a;
	struct rba_buf b;
	char tmp[32];
	int err;

	rba_buf_init(&b);
	for (uint32_t k = 0; k < sc->ncols; k++) {
		if (k > 0)
			rba_buf_put_u8(&b, ',');
		csv_cell_buf(&b, sc->cols[k].ec->name, strlen(sc->cols[k].ec->name));
	}
	rba_buf_put_u8(&b, '\n');
	for (uint32_t i = 0; i < c->ncases; i++) {
		for (uint32_t k = 0; k < sc->ncols; k++) {
			const char *t = sample_chunk_text(c, (uint32_t)sc->cols[k].src,
							  i, tmp);

			if (k > 0)
				rba_buf_put_u8(&b, ',');
			csv_cell_buf(&b, t, strlen(t));
		}
		rba_buf_put_u8(&b, '\n');
	}
	if ((err = rba_buf_status(&b)) == 0)
		err = exec_score(a->exec_pins, a->exec_bytes, a->exec_len, b.p,
				 b.len, c->ncases, sc->nclasses, a->spec.positive,
				 probs, d);
	rba_buf_release(&b);
	return err;
}

/*
 * The sparse path a block of SCORE_ROWS cases at a time, so that a
 * block's terms stay in cache between prepare and the scorer (the
 * scorer's result is per case, whatever the blocks).  A block with a
 * case the model cannot take sends the whole chunk through prepare
 * column by column, so that the error reported is the one a
 * chunk-at-a-time pass finds: the first bad case of the first column
 * that has one.
 */
static int
run_terms(struct sample_scorer *sc, const struct sample_chunk *c,
	  float *probs, uint32_t *bad_case, struct rba_detail *d)
{
	size_t K = sc->ncols;
	int err;

	if ((err = grow(sc, c, SCORE_ROWS)) != 0)
		return err;
	for (uint32_t k = 0; k < sc->ncols; k++)
		if (c->cols[sc->cols[k].src].kind == SAMPLE_COL_DICT)
			resolve_dict(sc, c, k);
	for (uint32_t i0 = 0; i0 < c->ncases; i0 += SCORE_ROWS) {
		uint32_t n = c->ncases - i0 < SCORE_ROWS ? c->ncases - i0
							 : SCORE_ROWS;
		if (prepare(sc, c, i0, i0 + n, NULL, NULL) != 0) {
			if ((err = grow(sc, c, c->ncases)) != 0)
				return err;
			err = prepare(sc, c, 0, c->ncases, bad_case, d);
			assert(err != 0);
			return err;
		}
		rebuild_sparse_score(sc->sp, sc->tx0, sc->row0, K, n,
				     probs + (size_t)i0 * sc->nclasses);
	}
	return 0;
}

/*
 * The raw column path: a forest of our own whose inputs are all numbers
 * splits x < t on x = (v - mean) / scale, which is the split v < t' on
 * the raw value v (encode_raw_threshold), for every v whose x is finite.
 * A copy of the forest with those thresholds (sp_raw) reads the raw
 * values, converted as numbers_fast converts them, without the
 * division: every case goes to the same leaves, so the scores are the
 * same bits.  A block with a value outside its feature's bounds
 * (encode_raw_bounds: where x is not finite, or missing) is made and
 * scored as before.  Set up at the first column chunk of at least two
 * blocks, and left off (sp_raw NULL) for anything else, or where out of
 * memory.
 */
static void
raw_setup(struct sample_scorer *sc)
{
	const struct artifact *a = sc->a;
	const struct encode_spec *spec = &a->spec;
	const struct rebuild_forest *f = &a->model.forest;
	struct rebuild_tree_node *nodes = NULL;
	struct rebuild_model m;
	size_t nn;
	uint32_t nf = spec->nfeatures;

	sc->raw_tried = 1;
	if (a->model.kind != REBUILD_KIND_GBDT ||
	    f->rules != REBUILD_FOREST_OWN || rebuild_forest_has_cats(f) ||
	    f->nfeatures != nf || nf == 0 || sc->ncols != nf)
		return;
	sc->raw_lo = malloc(nf * sizeof(float));
	sc->raw_hi = malloc(nf * sizeof(float));
	if (sc->raw_lo == NULL || sc->raw_hi == NULL)
		return;
	for (uint32_t k = 0; k < nf; k++)
		if (encode_raw_bounds(spec, k, &sc->raw_lo[k],
				      &sc->raw_hi[k]) != 0)
			return;
	nn = f->tree_start[f->ntrees];
	if ((nodes = malloc((nn ? nn : 1) * sizeof(*nodes))) == NULL)
		return;
	memcpy(nodes, f->nodes, nn * sizeof(*nodes));
	for (size_t i = 0; i < nn; i++)
		if (nodes[i].feature != REBUILD_TREE_LEAF)
			nodes[i].threshold = encode_raw_threshold(
				spec, nodes[i].feature, nodes[i].threshold);
	/* rebuild_sparse_new copies what it needs: nodes may go after */
	m = a->model;
	m.forest.nodes = nodes;
	if (rebuild_sparse_new(a->abi, &m, &sc->sp_raw) != 0 ||
	    !rebuild_sparse_takes_cols(sc->sp_raw)) {
		rebuild_sparse_free(sc->sp_raw);
		sc->sp_raw = NULL;
	}
	free(nodes);
}

/* Cases i0 .. i0 + n - 1 of every column, raw, into xc: 1 when every
 * value is within its feature's bounds. */
static int
raw_block(struct sample_scorer *sc, const struct sample_chunk *c,
	  uint32_t i0, uint32_t n)
{
	for (uint32_t k = 0; k < sc->ncols; k++) {
		uint32_t f = sc->cols[k].f0;
		float *xf = sc->xc + (size_t)f * SCORE_ROWS;
		sc->floats(&c->cols[sc->cols[k].src], i0, n, xf);
		if (!sc->inside(xf, n, sc->raw_lo[f], sc->raw_hi[f]))
			return 0;
	}
	return 1;
}

/*
 * The column path: a model of numbers alone, scored by a scorer that
 * takes its inputs by columns (rebuild_sparse_takes_cols), and a chunk
 * whose columns for it are all number columns.  A block's values of
 * each column are converted and standardized straight into its
 * feature's row of xc, as prepare_numbers_fast makes each term, and the
 * scorer reads the rows as they are: the same inputs, the same scores,
 * without a term listed (a forest of our own reads them raw, where it
 * can: raw_setup).  A block of a column with a missing value is
 * made value by value, as prepare_numbers makes it; a case the model
 * cannot take sends the chunk down the terms' path from its start,
 * whose first error is then the one reported.
 */
static int
run_cols(struct sample_scorer *sc, const struct sample_chunk *c, float *probs,
	 uint32_t *bad_case, struct rba_detail *d)
{
	/* a chunk of less than two blocks (a dispute's one case) is scored
	 * as it is: the raw forest would cost more to make than it saves */
	if (!sc->raw_tried && c->ncases >= 2 * SCORE_ROWS)
		raw_setup(sc);
	for (uint32_t i0 = 0; i0 < c->ncases; i0 += SCORE_ROWS) {
		uint32_t n = c->ncases - i0 < SCORE_ROWS ? c->ncases - i0
							 : SCORE_ROWS;
		if (sc->sp_raw != NULL && raw_block(sc, c, i0, n)) {
			rebuild_sparse_score_cols(sc->sp_raw, sc->xc,
						  SCORE_ROWS, n,
						  probs + (size_t)i0 *
								  sc->nclasses);
			continue;
		}
		for (uint32_t k = 0; k < sc->ncols; k++) {
			float *xf = sc->xc + (size_t)sc->cols[k].f0 * SCORE_ROWS;
			if (!numbers_fast(sc, c, k, i0, n, xf) &&
			    numbers_into(sc, c, k, i0, i0 + n, xf, 1, NULL, NULL,
					 NULL) != 0)
				return run_terms(sc, c, probs, bad_case, d);
		}
		rebuild_sparse_score_cols(sc->sp, sc->xc, SCORE_ROWS, n,
					  probs + (size_t)i0 * sc->nclasses);
	}
	return 0;
}

static int
run_sparse(struct sample_scorer *sc, const struct sample_chunk *c,
	   float *probs, uint32_t *bad_case, struct rba_detail *d)
{
	if (sc->xc != NULL) {
		uint32_t k = 0;
		while (k < sc->ncols &&
		       c->cols[sc->cols[k].src].kind == SAMPLE_COL_NUMBER)
			k++;
		if (k == sc->ncols)
			return run_cols(sc, c, probs, bad_case, d);
	}
	return run_terms(sc, c, probs, bad_case, d);
}

int
sample_scorer_run(struct sample_scorer *sc, const struct sample_chunk *c,
		 float *probs, uint32_t *bad_case, struct rba_detail *d)
{
	if (c->ncases == 0)
		return 0;
	if (sc->a->exec_pins != NULL)
		return run_exec(sc, c, probs, d);
	if (!sc->sparse)
		return run_dense(sc, c, probs, bad_case, d);
	return run_sparse(sc, c, probs, bad_case, d);
}
