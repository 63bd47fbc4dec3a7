/*
 * encode.h - from a CSV snapshot and pins to the trainer's matrices, and
 * the same preprocessing for cases scored later.
 *
 * Columns: the label column gives the classes (cell text, distinct
 * values sorted bytewise); the id column and data.exclude are dropped;
 * every other column is an input, in file order.  A column listed in
 * data.categorical is one-hot encoded with one feature per level (cell
 * text, distinct values of the whole snapshot sorted bytewise, feature
 * name "column=level"); any other input must be numeric and is one
 * feature named after the column.
 *
 * Standardization (data.standardize): for each numeric feature, mean and
 * standard deviation (population, divided by n) over the training split
 * only, summed in double in row order, stored as float32; a constant
 * column gets scale 1.  One-hot features keep mean 0 and scale 1.  The
 * model sees (float(x) - mean) / scale computed in float32.  A finite
 * float32 can still go beyond float32 there (3.4e38 in a column whose
 * scale is below 1): such a value is refused where inputs are encoded,
 * for training (encode_fit) and for scoring (encode_values,
 * encode_values_at, encode_table), never turned into inf and then a NaN
 * or a made-up score.  A scorer that standardizes by itself asks
 * encode_standardize_check of each value.
 *
 * Missing values (rebuild-audit-pins(5), data.missing): nmissing field
 * texts of a numeric column mean a missing value, read as NaN; 0 tokens
 * (a network without an imputation): a missing value is refused, as
 * before the tokens existed.  Trees take NaN as it is (each split sends
 * it the way it learned); a network with an imputation gets impute[f]
 * (the raw value, before standardization) in its place.  A text in a
 * categorical column is a level, whatever it says.
 * An XGBoost model (model/xgboost.h) has the tokens "", "NA", "NaN"
 * and "nan" of its own.
 *
 * Unknown categorical level in a case being scored: an error naming the
 * column and the level (RBA_E_SCHEMA), never a silent all-zero encoding:
 * a level the model never saw means the case does not belong to the
 * data the model was trained on, and an audit must say so.
 */
#ifndef RBA_ENCODE_H
#define RBA_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/rba.h"
#include "policy/policy.h"
#include "data/csv.h"

#define ENCODE_NO_POSITIVE UINT32_MAX
#define ENCODE_MAX_TEXT 1024 /* bytes in a column name, level or class */

/*
 * ENCODE_NATIVE (data.native, trees only): a categorical column kept as
 * one feature holding its level's index (0 .. nlevels - 1, in the
 * levels' bytewise order, as a float: exact below 2^24); a level the
 * spec does not hold (unseen in the snapshot) is the index nlevels,
 * which no split's level set holds, so it goes right at every
 * categorical split (REBUILD_TREE_CATEGORICAL) and scores without an
 * error.  Mean 0 and scale 1, like a one-hot feature.  At most
 * ENCODE_MAX_NATIVE_LEVELS levels.
 */
enum encode_kind { ENCODE_NUMERIC = 1, ENCODE_CATEGORICAL = 2,
		   ENCODE_NATIVE = 3 };
#define ENCODE_MAX_NATIVE_LEVELS (1u << 20)

struct encode_column {
	char *name;
	enum encode_kind kind;
	uint32_t nlevels; /* categorical: >= 1, sorted bytewise, distinct */
	char **levels;
};

/* The model's view of its inputs (everything is kept in the artifact). */
struct encode_spec {
	char *label;
	uint32_t nclasses; /* >= 2 */
	char **classes;	   /* sorted bytewise, distinct */
	uint32_t positive; /* class index, or ENCODE_NO_POSITIVE */
	uint32_t ncolumns;
	struct encode_column *columns;
	uint32_t nfeatures; /* numeric columns + categorical levels */
	float *mean;	    /* nfeatures */
	float *scale;	    /* nfeatures, finite and > 0 */
	uint32_t nmissing;  /* missing-value tokens, sorted bytewise, distinct */
	char **missing;
	float *impute;	    /* nfeatures raw values for NaN, or NULL */
};

/* The features column col takes: 1, or its levels when one-hot. */
static inline uint32_t
encode_column_width(const struct encode_column *col)
{
	return col->kind == ENCODE_CATEGORICAL ? col->nlevels : 1;
}

/*
 * The index of level text v of column col (ENCODE_CATEGORICAL or
 * ENCODE_NATIVE): its place among the levels, or -1 when it is none.
 */
long encode_level_index(const struct encode_column *col, const char *v);

/* The spec's tokens as a csv_missing (borrowing s). */
struct csv_missing encode_missing(const struct encode_spec *s);
/* Whether the text v of a numeric column is one of s's tokens. */
int encode_is_missing(const struct encode_spec *s, const char *v);

void encode_spec_release(struct encode_spec *s);

/* Appends feature f's name: "column" (numeric or native) or
 * "column=level" (one-hot). */
void encode_feature_name(const struct encode_spec *s, uint32_t f,
			 struct rba_buf *out);

/* A snapshot encoded but not standardized: x is n x nfeatures. */
struct encode_data {
	size_t n;
	float *x;
	uint32_t *y;
};

void encode_data_release(struct encode_data *d);

/*
 * Builds the spec (mean 0, scale 1) and the raw matrices from table t
 * under p->data.  Errors (d gets FILE:LINE:COL or the key):
 * RBA_E_SCHEMA (a column named in the pins is missing or named twice, a
 * non-numeric input column that is not declared categorical, a positive
 * class that does not occur, fewer than two classes), RBA_E_LIMIT (over
 * REBUILD_MAX_WIDTH features, REBUILD_MAX_CLASSES classes,
 * ENCODE_MAX_TEXT bytes, REBUILD_MAX_EXAMPLES rows), RBA_E_NOMEM; and
 * RBA_E_SCHEMA, as encode_standardize_check at the row's FILE:LINE, for a
 * value that the standardization of p's split (the one rebuild_prepare
 * fits next; data.standardize) takes beyond float32.
 */
int encode_fit(const struct pins *p, const struct csv_table *t,
	       struct encode_spec *spec, struct encode_data *data,
	       struct rba_detail *d);
/*
 * encode_fit that uses t's numbers up as it goes: every
 * ENCODE_RELEASE_ROWS rows the numbers of the rows before are given
 * back (csv_table_num_release), so a large table's numbers and the
 * encoded rows are not held whole at once, and on return none of t's
 * numbers may be read (its texts may).  The same results and errors.
 */
int encode_fit_consume(const struct pins *p, struct csv_table *t,
		       struct encode_spec *spec, struct encode_data *data,
		       struct rba_detail *d);
#define ENCODE_RELEASE_ROWS 65536

/* The fewest rows either side of a validation split may hold. */
#define ENCODE_MIN_SPLIT_ROWS 3

/*
 * The split of n rows by p->data: validation count round(n v); order
 * random: the first nval entries of a Fisher-Yates permutation keyed by
 * (split seed, RNG_SPLIT) validate; order tail: the last nval rows
 * validate.  Both index lists come back ascending (malloc'd).  0,
 * RBA_E_RANGE (either side would hold fewer than ENCODE_MIN_SPLIT_ROWS
 * rows: a metric of a handful of rows decides nothing) or RBA_E_NOMEM.
 */
int encode_split(const struct pins *p, size_t n, size_t **train,
		 size_t *ntrain, size_t **val, size_t *nval);

/*
 * Fills spec->mean and spec->scale from the rows idx[0..nidx) of data
 * (when enabled; otherwise leaves 0 and 1).
 */
void encode_standardize_fit(struct encode_spec *spec,
			    const struct encode_data *data, const size_t *idx,
			    size_t nidx, int enabled);
/*
 * data.impute: fills spec->impute (mean: the mean over the rows
 * idx[0..nidx) that have a value, summed in double in row order, stored
 * as float32, 0 for a column with none; or the constant) and puts it in
 * place of every NaN of data.  Nothing when p declares no imputation.
 * 0 or RBA_E_NOMEM.
 */
int encode_impute_fit(const struct pins *p, struct encode_spec *spec,
		      struct encode_data *data, const size_t *idx,
		      size_t nidx);

/* out[i] = (raw[i] - mean) / scale for n rows (out may equal raw). */
void encode_standardize(const struct encode_spec *spec, const float *raw,
			size_t n, float *out);

/*
 * Standardization seen from a forest's splits.  With a finite mean and
 * a finite scale above 0, x(v) = (v - mean) / scale as
 * encode_standardize computes it never decreases as v grows (an IEEE
 * subtraction and a division by a positive number each round
 * monotonically), so a split "x < t" is a split on the raw value.
 *
 * encode_raw_bounds: the least and the greatest finite raw value of
 * numeric feature f whose x is finite, into *lo and *hi (every finite v
 * between them has a finite x; no other v has); -1, with nothing
 * written, where f's mean or scale is not as above.
 *
 * encode_raw_threshold (only where encode_raw_bounds gives 0): the raw
 * t' of split threshold t, such that for every v from lo to hi, v < t'
 * exactly when x(v) < t.  It is the least finite v whose x is at least
 * t (+inf where none is); a NaN threshold, below which nothing is,
 * stays NaN.
 */
int encode_raw_bounds(const struct encode_spec *spec, uint32_t f, float *lo,
		      float *hi);
float encode_raw_threshold(const struct encode_spec *spec, uint32_t f,
			   float t);

/*
 * Whether raw value v of numeric feature f (< nfeatures) standardizes, as
 * encode_standardize computes it, to a finite float32.  0; else
 * RBA_E_SCHEMA (the model cannot take the case, as it cannot take an
 * unknown level) with d (NULL allowed) at file:line:col (NULL or 0 where
 * the caller has none), d->key the column and the reason "column 'X':
 * value 'TEXT' is beyond what the model's standardization can take"
 * (TEXT: the value as the input spells it, or v in %.9g when text is
 * NULL).
 */
int encode_standardize_check(const struct encode_spec *spec, uint32_t f,
			     float v, const char *text, const char *file,
			     unsigned long line, unsigned long col,
			     struct rba_detail *d);

/*
 * Encodes the cases of table t (columns found by name; others ignored)
 * into raw features: x is t->nrows x nfeatures.  RBA_E_SCHEMA for a
 * missing column, a non-numeric value in a numeric column, an unknown
 * level or a value the standardization takes beyond float32
 * (encode_standardize_check).  d gets FILE:LINE and the column in
 * d->key.
 */
int encode_table(const struct encode_spec *spec, const struct csv_table *t,
		 float *x, struct rba_detail *d);

/*
 * Encodes one case given as text values, one per spec column in spec
 * order (values[i] for spec->columns[i]).  Errors as encode_table,
 * without a place.
 */
int encode_values(const struct encode_spec *spec, const char *const *values,
		  float *x, struct rba_detail *d);
/*
 * encode_values for a case read at file:line, values[i] starting at
 * byte column cols[i] (NULL: none): a value the standardization cannot
 * take is refused at FILE:LINE:COL, the other errors at FILE:LINE.
 */
int encode_values_at(const struct encode_spec *spec,
		     const char *const *values, const char *file,
		     unsigned long line, const unsigned long *cols, float *x,
		     struct rba_detail *d);

/*
 * A spec made ready to encode fields read in place (`score`): each
 * categorical column's levels in a hash table, each missing token's
 * length.  Borrows spec, which must outlive it.  encode_plan_new: 0 or
 * RBA_E_NOMEM; encode_plan_free accepts NULL.
 */
struct encode_plan;
int encode_plan_new(const struct encode_spec *spec, struct encode_plan **out);
void encode_plan_free(struct encode_plan *p);
/*
 * encode_values_at of the case whose value of spec column c is field
 * f[src[c]] (read in place: no copy, no NUL), at file:line, each value's
 * column its field's: the same features, the same errors with the same
 * details.  num and has (NULL: none), indexed as f, give numbers already
 * parsed (csv_checker_numbers): where has[i] is 1, num[i] is taken as
 * csv_parse_number's value of f[i].
 */
int encode_fields_at(const struct encode_plan *p, const struct csv_field *f,
		     const size_t *src, const double *num, const uint8_t *has,
		     const char *file, unsigned long line, float *x,
		     struct rba_detail *d);

#endif
