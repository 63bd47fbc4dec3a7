/*
 * explain.h - why a model scored a case as it did (doc/design.md section 7, Reasons):
 * per-column contributions that add up, with a baseline, to the case's
 * margin.  Deterministic, and exact but for Shapley values over the
 * caps below, which are estimated with a stated error bound: double
 * precision from the artifact's float32 parameters and the float32
 * inputs its forward pass sees, every sum in a fixed order.
 *
 * The margin explained, for class cls of the model:
 *   - two classes: the log-odds of cls, z_cls - z_other (networks) or
 *     the forest's margin, negated when cls is class 0 (forests);
 *   - more classes: the class's own margin: z_cls minus the mean of the
 *     logits for networks (the softmax is unchanged by a common shift,
 *     so the centred logit is the one that is well defined), the group
 *     margin of class cls for forests.
 *
 * Methods, by model:
 *   - EXPLAIN_LINEAR (a network without hidden layers, logistic
 *     regression): contribution of column c = sum over its features f of
 *     beta_f (x_f - m_f), beta_f the coefficient of f in the margin, x_f
 *     the model's (standardized) input, m_f its training mean (for a
 *     one-hot level: the level's share of the training rows).  Baseline:
 *     the margin at the training means, intercept + sum beta_f m_f.
 *   - EXPLAIN_TREESHAP (a forest): exact path-dependent TreeSHAP
 *     (Lundberg, Erion and Lee 2018, Algorithm 2) per tree of the
 *     explained group, per feature, in margin space, then summed per
 *     column.  A split's two sides are weighted by their covers' shares,
 *     cover(side) / (cover(left) + cover(right)) (one half each when both
 *     are 0), so the weights sum to one although covers are stored as
 *     float32.  A case goes left exactly when the scorer sends it left
 *     (x < threshold in float32).  Baseline: the base margin plus each
 *     tree's cover-weighted mean leaf value.
 *   - EXPLAIN_SHAPLEY (a network with hidden layers): Shapley values
 *     over the original columns, the value of a coalition S being the
 *     margin of the case with the columns outside S set to the baseline
 *     case (numeric: the training mean; categorical: the training mode,
 *     ties to the first level bytewise).  The first layer's
 *     pre-activation of S is (h(empty) + L[S low]) + H[S high], where L
 *     holds the subset sums of the columns' input blocks over the low
 *     columns (half of them, fewer when the table would pass
 *     EXPLAIN_SHAPLEY_TABLE doubles; a set is the set without its lowest
 *     column plus that column's block) and H[S high] the sum over S's
 *     high columns, highest first; then the rest of the network, in
 *     double, summing only the positive inputs of each layer (a zero
 *     input changes no sum but a zero's sign, which the ReLU drops).
 *     Baseline: v(empty).  The players are the columns whose block is
 *     not zero: a column at its baseline value moves no coalition's
 *     value, contributes 0, and leaving it out changes no other
 *     column's Shapley value.  Two ways, chosen by the number k of
 *     players and the multiply-adds c of one coalition value (first
 *     layer H, each later layer in x out, the margin column):
 *
 *     Exact (accuracy EXPLAIN_EXACT), when k <= EXPLAIN_MAX_SHAPLEY_COLUMNS
 *     and 2^k c <= EXPLAIN_SHAPLEY_WORK: every coalition is visited once,
 *     in reflected Gray code order (S_t = t xor t/2: one column joins or
 *     leaves per step), and nothing of size 2^k is stored.  phi_i =
 *     sum over S holding i of (w(|S| - 1) + w(|S|)) v(S) - sum over all
 *     S of w(|S|) v(S), with w(s) = s! (k - s - 1)! / k! (w(-1) = w(k) =
 *     0), the Shapley sum sum over S without i of w(|S|) (v(S + i) -
 *     v(S)) regrouped by coalition.  The coalitions holding i form runs
 *     of the order, so the first sum is a running total of all
 *     coalitions' terms, taken when i joins and when it leaves: one
 *     update a step, whatever k.  The totals are double-double
 *     (TwoSum) sums.  Error bound: with u = 2^-53, each term w v(S) is
 *     within (2k + 3) u of its value for the computed v(S), and the
 *     sums add below k 2^k u^2 of the total weight more, so |phi_i -
 *     phi_i(computed v)| <= (2k + 4) u sum over S of 3 w |v(S)| <=
 *     3 (2k + 4) u H_k max|v| (H_k the harmonic number: the weights of
 *     each sum add to H_k), under 1e-12 for k = 26 and margins below 30;
 *     the coalition values carry their own forward pass's rounding, as
 *     the directly computed margin does.
 *
 *     Approximate (accuracy EXPLAIN_APPROXIMATE), otherwise: antithetic
 *     permutation sampling.  Pair p draws a permutation of the columns
 *     by a Fisher-Yates shuffle keyed by (options seed, purpose 9,
 *     class), draw p k + j for position j; the columns join the empty
 *     coalition in that order and then in reverse, each marginal
 *     v(S + i) - v(S) going to its column (the first layer from
 *     h(empty) by each joining column's block); y_i is the mean of
 *     column i's two marginals, and contrib[i] the mean of y_i over the
 *     pairs.  Each permutation's marginals add up to v(all) - v(empty),
 *     so efficiency holds as for the exact values, to rounding.  Pairs:
 *     EXPLAIN_SHAPLEY_SAMPLE_WORK / (2 k c), at least
 *     EXPLAIN_SHAPLEY_MIN_PAIRS.
 *     Bound (bound[i]): interval arithmetic through the network gives
 *     R_i, the width of an interval holding v(S + i) - v(S) for every S
 *     without i (hence every y_i), and with n pairs and V_i the sample
 *     variance of y_i, the empirical Bernstein bound (Maurer and Pontil
 *     2009, Theorem 4), two-sided and a union over the k columns:
 *     |contrib[i] - phi_i| <= sqrt(2 V_i l / n) + 7 R_i l / (3 (n - 1)),
 *     l = ln(4 k 2^EXPLAIN_SHAPLEY_DELTA_BITS) rounded up, for every
 *     column at once, with probability at least 1 - 2^-30 over the
 *     keyed draws (as if they were independent and uniform); widened by
 *     a relative 2^-20 and an absolute 2^-30 for the rounding of its
 *     own computation.  The estimate and its bound are the same bits on
 *     every run: the draws are a function of the seed.
 *
 * The check: |baseline + sum of contributions - margin| <= EXPLAIN_TOLERANCE,
 * where margin is computed directly (a forward pass in double, or the
 * leaves the case reaches), not from the contributions.
 */
#ifndef RBA_EXPLAIN_H
#define RBA_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/rba.h"
#include "policy/policy.h"
#include "rebuild/artifact.h"

#define EXPLAIN_TOLERANCE 1e-6		/* margin units (log-odds) */
/* Exact Shapley values: at most this many columns (2^26 coalitions) */
#define EXPLAIN_MAX_SHAPLEY_COLUMNS 26
/* ... and at most this many multiply-adds (2^k c): about 2^26
 * coalitions of the trainer's 32-32 network, seconds on one core */
#define EXPLAIN_SHAPLEY_WORK ((uint64_t)1 << 37)
/* Estimates: multiply-adds of the permutations, a quarter of that */
#define EXPLAIN_SHAPLEY_SAMPLE_WORK ((uint64_t)1 << 35)
#define EXPLAIN_SHAPLEY_TABLE ((uint64_t)1 << 21) /* doubles: 16 MiB */
#define EXPLAIN_SHAPLEY_MIN_PAIRS 64	/* else RBA_E_LIMIT */
#define EXPLAIN_SHAPLEY_DELTA_BITS 30	/* the bounds fail w.p. <= 2^-30 */

enum explain_method {
	EXPLAIN_LINEAR = 1,
	EXPLAIN_TREESHAP = 2,
	EXPLAIN_SHAPLEY = 3,
};

/* Whether the contributions are the method's values or estimates. */
enum explain_accuracy {
	EXPLAIN_EXACT = 1,	 /* to rounding (linear, treeshap, shapley) */
	EXPLAIN_APPROXIMATE = 2, /* shapley over the caps: see bound */
};

/*
 * What the baseline is made of, from the training part of the snapshot
 * the model was trained on (the artifact does not keep it).
 */
struct explain_baseline {
	uint32_t nfeatures, ncolumns;
	size_t ntrain;
	double *feat_mean; /* nfeatures: training mean of the model's input */
	double *col_mean;  /* ncolumns: numeric: mean of the raw values */
	uint32_t *col_mode; /* ncolumns: categorical: the most frequent level */
};

void explain_baseline_release(struct explain_baseline *b);

/*
 * Fits the baseline of artifact a from the snapshot bytes its pins p
 * name (the bytes are not checked against p here: the caller verified
 * them): the rows of the training part by p's split, the raw values
 * encoded with a's spec, standardized as a's forward pass does; means
 * summed in double in row order.  0; csv_table_load_mem's and
 * encode_table's errors; RBA_E_RANGE (fewer than two rows); RBA_E_NOMEM.
 */
int explain_baseline_fit(const struct pins *p, const struct artifact *a,
			 const void *snapshot, size_t n, const char *name,
			 struct explain_baseline *out, struct rba_detail *d);

struct explain_result {
	int method;	 /* enum explain_method */
	uint32_t cls;	 /* the class whose margin is explained */
	uint32_t ncolumns;
	double *contrib; /* ncolumns, in the spec's column order */
	double baseline;
	double margin;	 /* the case's margin, computed directly */
	double sum;	 /* baseline + contributions, in column order */
	int accuracy;	 /* enum explain_accuracy */
	/*
	 * ncolumns.  Approximate: |contrib[c] - exact value| <= bound[c]
	 * for every c at once, with probability at least
	 * 1 - 2^-EXPLAIN_SHAPLEY_DELTA_BITS over the keyed draws.  Exact:
	 * all 0 (the rounding bound is the method's, above).
	 */
	double *bound;
	double max_bound; /* the largest bound[c]; 0 when exact */
	uint64_t samples; /* approximate: antithetic pairs drawn; else 0 */
	uint32_t players; /* shapley: the columns not at their baseline
			   * value (the others contribute 0); else ncolumns */
	double gap;	  /* |sum - margin|, the efficiency gap: rounding
			   * only, for every method and accuracy */
};

void explain_result_release(struct explain_result *r);

/* "linear", "treeshap", "shapley" ("" when unknown).  Static. */
const char *explain_method_name(int method);

/* "exact", "approximate" ("" when unknown).  Static. */
const char *explain_accuracy_name(int accuracy);

/* The method for a's model. */
int explain_method_of(const struct artifact *a);

/*
 * Explains class cls (< nclasses) of the case given as raw features
 * (nfeatures, as encode_values makes them) under model a with baseline
 * b (fitted for a).  out->accuracy says whether the contributions are
 * exact or estimates with their bounds: a caller reporting them must
 * say which, and the bound.  0; RBA_E_RANGE (cls out of range, b not
 * a's); RBA_E_LIMIT (a network with hidden layers so wide that not even
 * EXPLAIN_SHAPLEY_MIN_PAIRS permutation pairs fit in the work cap: d
 * says so); RBA_E_NOMEM.  On error *out is released.
 */
int explain_case(const struct artifact *a, const struct explain_baseline *b,
		 const float *raw, uint32_t cls, struct explain_result *out,
		 struct rba_detail *d);

/*
 * The Shapley method's settings; explain_case uses the defaults (a
 * zeroed struct).  Tests and benchmarks narrow them.
 */
struct explain_options {
	uint32_t max_exact_columns; /* 0: EXPLAIN_MAX_SHAPLEY_COLUMNS, never more */
	uint64_t work;	      /* exact: 0: EXPLAIN_SHAPLEY_WORK */
	uint64_t sample_work; /* estimate: 0: EXPLAIN_SHAPLEY_SAMPLE_WORK */
	uint64_t seed;	      /* of the permutations; 0 by default */
};

/*
 * explain_case with options o (NULL: the defaults).  Errors as
 * explain_case, and RBA_E_RANGE for max_exact_columns over
 * EXPLAIN_MAX_SHAPLEY_COLUMNS.
 */
int explain_case_opt(const struct artifact *a, const struct explain_baseline *b,
		     const float *raw, uint32_t cls, const struct explain_options *o,
		     struct explain_result *out, struct rba_detail *d);

#endif
