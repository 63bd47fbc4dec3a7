/*
 * explain.h - why a model scored a case as it did (doc/design.md
 * section 7, Reasons): per-column contributions that add up, with a
 * baseline, to the case's margin.  Deterministic, and exact but for
 * Shapley values over the caps below, which a caller may ask to have
 * estimated with a stated error bound: double precision from the artifact's float32 parameters
 * and the float32 inputs its forward pass sees, every sum in a fixed
 * order.
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
 *     tree's cover-weighted mean leaf value.  An XGBoost forest's sides
 *     are weighted by their covers over the split's own cover, as
 *     XGBoost's TreeSHAP weighs them; a split of the explained group
 *     whose cover is 0 leaves that TreeSHAP undefined (XGBoost's
 *     pred_contribs are NaN), and no value is given for it.
 *   - EXPLAIN_SHAPLEY (a network with hidden layers): Shapley values
 *     over the original columns, the value v(S) of a coalition S being
 *     the margin of the case with the columns outside S set to the
 *     baseline case (numeric: the training mean; categorical: the
 *     training mode, ties to the first level bytewise).  Baseline:
 *     v(empty).  A column's block is what switching it from the
 *     baseline case to the case adds to the first layer's
 *     pre-activations; the players are the columns whose block is not
 *     zero.  A column at its baseline value moves no coalition's value:
 *     it contributes 0, and leaving it out changes no other column's
 *     Shapley value.
 *
 *     A coalition's value: the first layer's pre-activations are
 *     (h(empty) + L[S low]) + H[S high], L the subset sums of the
 *     blocks of the low players (half of them, fewer when the table
 *     would pass EXPLAIN_SHAPLEY_TABLE doubles; a set is the set
 *     without its lowest player plus that player's block), H[S high]
 *     the sum of the high players' blocks in S, highest first; then the
 *     later layers in double, each output the bias plus its positive
 *     inputs' terms in ascending order (a zero input changes no sum but
 *     a zero's sign, which the ReLU drops); the margin is mb + ((s0 +
 *     s1) + (s2 + s3)), s_c the sum in ascending order of the margin
 *     column's terms of the last hidden layer's units j = c mod 4.  The
 *     same bits with or without AVX2, which is used when the CPU has it
 *     (RBA_STRICT_ISA=base forces the plain code).
 *
 *     Two ways, chosen by the number k of players and the multiply-adds
 *     c of one coalition value (first layer H, each later layer in x
 *     out, the margin column: 1088 for the 32-32 network the fixtures'
 *     pins train):
 *
 *     Exact (accuracy EXPLAIN_EXACT), when k <= EXPLAIN_MAX_SHAPLEY_COLUMNS
 *     and 2^k c <= EXPLAIN_SHAPLEY_WORK: every coalition is visited
 *     once, in reflected Gray code order (S_t = t xor t/2: one player
 *     joins or leaves a step), and nothing of size 2^k is stored.  The
 *     Shapley sum phi_i = sum over S without i of w(|S|) (v(S + i) -
 *     v(S)), w(s) = s! (k - s - 1)! / k!, regrouped by coalition, is
 *     phi_i = sum over S holding i of cw(|S|) v(S) - sum over all S of
 *     w(|S|) v(S), cw(s) = w(s - 1) + w(s) (w(-1) = w(k) = 0).  The
 *     coalitions holding i are runs of the order, so the first sum is
 *     a running total of every coalition's term taken when i joins and
 *     when it leaves: one update a step, whatever k.  Weights: w(s) =
 *     (1/k) prod_{j=1..s} j / (k - j) in that order.  The totals are
 *     double-double sums (TwoSum).
 *     Error bound, with u = 2^-53 and v the computed coalition values:
 *     each weight times v is within a relative (2k + 1) u of its exact
 *     product, and the double-double sums lose less than 6 (2^k u)^2
 *     (3 u for k <= 26) of their largest partial sum, so
 *     |contrib[i] - phi_i(v)|
 *     <= (2k + 4) u sum over S of (cw(|S|) + w(|S|)) |v(S)| + u |phi_i|
 *     <= 3 (2k + 4) u H_k max|v| + u |phi_i| (the weights of each of
 *     the three sums over S add to the harmonic number H_k): below
 *     1e-13 max|v| for k <= 26.  The coalition values themselves carry
 *     their forward pass's rounding, as the directly computed margin
 *     does; the check below bounds the two together.
 *
 *     Approximate (accuracy EXPLAIN_APPROXIMATE) otherwise, for a
 *     caller that asks for it (explain_case_opt; explain_case refuses):
 *     antithetic permutation sampling.  Pair p draws a permutation of
 *     the players by a Fisher-Yates shuffle keyed by (options seed,
 *     purpose 9, cls), draw p k + j choosing position j's player (j
 *     from k - 1 down to 1); the players join the empty coalition in that order
 *     and then in reverse, each marginal v(S + i) - v(S) going to its
 *     player (the pre-activations from h(empty) by each joining
 *     player's block); y_i is the mean of player i's two marginals, and
 *     contrib[i] the mean of y_i over the n pairs, a double-double sum
 *     divided by n.  n = EXPLAIN_SHAPLEY_SAMPLE_WORK / c / (2 k), at
 *     least EXPLAIN_SHAPLEY_MIN_PAIRS.  Each permutation's marginals
 *     add up to v(all) - v(empty): efficiency holds as for the exact
 *     values, to rounding (gap).
 *     Bound (bound[i]): interval arithmetic through the network gives
 *     an interval of width R_i holding v(S + i) - v(S) for every S
 *     without i, hence every y_i; with V_i the sample variance of y_i
 *     (Welford), the empirical Bernstein bound (Maurer and Pontil 2009,
 *     Theorem 4), two-sided and a union over the k players:
 *     |contrib[i] - phi_i| <= sqrt(2 V_i l / n) + 7 R_i l / (3 (n - 1))
 *     for every player at once, l = ln(4 k 2^EXPLAIN_SHAPLEY_DELTA_BITS)
 *     rounded up, with probability at least 1 - 2^-30 over the draws
 *     (taken as independent and uniform); widened by a relative 2^-20
 *     and an absolute 2^-30 for the rounding of its own computation
 *     and of the coalition values.  The draws are a function of the
 *     seed: the estimate and its bound are the same bits on every run.
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
#include "model/artifact.h"

#define EXPLAIN_TOLERANCE 1e-6		/* margin units (log-odds) */
/* Exact Shapley values: at most this many players (2^26 coalitions) */
#define EXPLAIN_MAX_SHAPLEY_COLUMNS 26
/* ... and at most this many multiply-adds (2^k c): 2^26 coalitions of
 * the 32-32 network, about 7 s on one core with AVX2 */
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
 * b (fitted for a), exactly: out->accuracy is EXPLAIN_EXACT.  A forest
 * (explain_method_of: EXPLAIN_TREESHAP) reads no baseline, its own being
 * its covers': b may be NULL for it (a caller then need not fit one, a
 * pass over the training data).  0;
 * RBA_E_RANGE (cls out of range, b NULL or not a's for a network, an
 * XGBoost forest with a
 * split of cover 0 in the explained group: d names the file's tree and
 * node, artifact.h xgb_tree and xgb_node); RBA_E_LIMIT (a network
 * with hidden layers over the exact method's caps:
 * EXPLAIN_MAX_SHAPLEY_COLUMNS players or EXPLAIN_SHAPLEY_WORK; d says
 * which); RBA_E_NOMEM.  On error *out is released.
 */
int explain_case(const struct artifact *a, const struct explain_baseline *b,
		 const float *raw, uint32_t cls, struct explain_result *out,
		 struct rba_detail *d);

/*
 * The Shapley method's settings; explain_case uses the defaults (a
 * zeroed struct).  A caller that reports estimates as such sets
 * approximate; tests narrow the caps.
 */
struct explain_options {
	int approximate; /* 1: over the caps, estimate (the caller reports
			  * accuracy and bound); 0: RBA_E_LIMIT there */
	uint32_t max_exact_columns; /* 0: EXPLAIN_MAX_SHAPLEY_COLUMNS, never more */
	uint64_t work;	      /* exact: 0: EXPLAIN_SHAPLEY_WORK */
	uint64_t sample_work; /* estimate: 0: EXPLAIN_SHAPLEY_SAMPLE_WORK */
	uint64_t seed;	      /* of the permutations; 0 by default */
};

/*
 * explain_case with options o (NULL: the defaults, explain_case's),
 * which only Shapley values use.  With o->approximate, a network over
 * the exact method's caps is estimated (out->accuracy
 * EXPLAIN_APPROXIMATE, out->bound): a caller reporting the
 * contributions must then say they are estimates and give the bound.
 * Errors as explain_case, but RBA_E_LIMIT with o->approximate only for
 * a network so wide that not even EXPLAIN_SHAPLEY_MIN_PAIRS permutation
 * pairs fit in the estimate's work; RBA_E_RANGE for max_exact_columns
 * over EXPLAIN_MAX_SHAPLEY_COLUMNS (a network with hidden layers).
 */
int explain_case_opt(const struct artifact *a, const struct explain_baseline *b,
		     const float *raw, uint32_t cls, const struct explain_options *o,
		     struct explain_result *out, struct rba_detail *d);

#endif
