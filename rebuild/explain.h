/*
 * explain.h - why a model scored a case as it did (doc/design.md section 7, Reasons):
 * per-column contributions that add up, with a baseline, to the case's
 * margin.  Exact and deterministic: double precision from the
 * artifact's float32 parameters and the float32 inputs its forward pass
 * sees, every sum in a fixed order.
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
 *   - EXPLAIN_SHAPLEY (a network with hidden layers): exact Shapley
 *     values over the original columns, the value of a coalition S being
 *     the margin of the case with the columns outside S set to the
 *     baseline case (numeric: the training mean; categorical: the
 *     training mode, ties to the first level bytewise).  All 2^k
 *     coalitions of the k columns are evaluated: the first layer's
 *     pre-activation of S is h(empty) + L[S low] + H[S high], where L and
 *     H are the subset sums of the columns' input blocks over the low and
 *     high halves of the columns (each built once, a column added to the
 *     subset without it), then the rest of the network; phi_j =
 *     sum over S without j of |S|! (k - |S| - 1)! / k! (v(S + j) - v(S)),
 *     S in ascending order.  Baseline: v(empty).  At most
 *     EXPLAIN_MAX_SHAPLEY_COLUMNS columns.
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
#define EXPLAIN_MAX_SHAPLEY_COLUMNS 22	/* 2^22 coalition values, 32 MiB */

enum explain_method {
	EXPLAIN_LINEAR = 1,
	EXPLAIN_TREESHAP = 2,
	EXPLAIN_SHAPLEY = 3,
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
};

void explain_result_release(struct explain_result *r);

/* "linear", "treeshap", "shapley" ("" when unknown).  Static. */
const char *explain_method_name(int method);

/* The method for a's model. */
int explain_method_of(const struct artifact *a);

/*
 * Explains class cls (< nclasses) of the case given as raw features
 * (nfeatures, as encode_values makes them) under model a with baseline
 * b (fitted for a).  0; RBA_E_RANGE (cls out of range, b not a's);
 * RBA_E_LIMIT (a network with hidden layers and over
 * EXPLAIN_MAX_SHAPLEY_COLUMNS columns: d says so); RBA_E_NOMEM.  On
 * error *out is released.
 */
int explain_case(const struct artifact *a, const struct explain_baseline *b,
		 const float *raw, uint32_t cls, struct explain_result *out,
		 struct rba_detail *d);

#endif
