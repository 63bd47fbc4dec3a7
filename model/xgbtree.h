/*
 * xgbtree.h - scoring a forest by XGBoost 1.7's rules (a forest whose
 * rules are REBUILD_FOREST_XGB_*, trainer.h; model/xgboost.h loads
 * one from XGBoost's JSON model file).
 *
 * The rules, as XGBoost 1.7's CPU predictor applies them
 * (src/predictor/cpu_predictor.cc, predict_fn.h, src/common/math.h):
 *  - a case's margin of group g starts at base[g], a float32 (XGBoost's
 *    base margin: ProbToMargin(base_score), computed in float by the
 *    loader), and gains, in float32, the leaf value of every tree of the
 *    group in tree order;
 *  - at a split the case goes left when its input x is below the
 *    threshold (x < threshold, float32 against float32), right
 *    otherwise, and a NaN input (a missing value) goes left when the
 *    node has REBUILD_TREE_DEFAULT_LEFT, right when not;
 *  - REBUILD_FOREST_XGB_SIGMOID: the probability of class 1 is
 *    common::Sigmoid(margin): 1 / (expf(min(-m, 88.7)) + 1 + 1e-16),
 *    each step in float; class 0 gets 1 - that (XGBoost reports only
 *    class 1's);
 *  - REBUILD_FOREST_XGB_SOFTMAX: common::Softmax: the largest margin by
 *    fmaxf, e_k = expf(m_k - max) in float, their sum in double in class
 *    order, p_k = e_k / (float)sum.
 * The margins are XGBoost's (output_margin=True) bit for bit: from the
 * base margin on, only float + and order keys are used, the same on
 * every machine (the base margin's logf is the C library's, as
 * XGBoost's is, and exact for the default base_score 0.5).  The
 * probabilities call the C library's expf as XGBoost does, so they
 * equal XGBoost's where the C library is the same and stay within an
 * ulp or so elsewhere (glibc's expf is correctly rounded in practice).
 *
 * Inputs are float32 rows, NaN for a missing value.  A forest of
 * REBUILD_FOREST_OWN is not for these functions (asserted).
 */
#ifndef RBA_XGBTREE_H
#define RBA_XGBTREE_H

#include <stddef.h>
#include <stdint.h>

#include "train/abi.h"
#include "train/trainer.h"

/* A forest laid out for scoring blocks of cases (a copy: f may go). */
struct xgbtree;

/* 0, or RBA_E_NOMEM; *out is NULL on error. */
int xgbtree_new(const struct rebuild_forest *f, struct xgbtree **out);
/* NULL allowed. */
void xgbtree_free(struct xgbtree *s);

/*
 * Margins of n cases, case i's nfeatures inputs at x + i * stride
 * (stride >= nfeatures): margins gets n x ngroups floats.  Cannot fail.
 * One thread at a time per scorer (it holds scratch memory).
 */
void xgbtree_margins(struct xgbtree *s, const float *x, size_t stride,
		     size_t n, float *margins);

/* Probabilities of the n cases whose margins (n x ngroups) are given:
 * probs gets n x nclasses, by the forest's rules. */
void xgbtree_transform(const struct rebuild_forest *f, const float *margins,
		       size_t n, float *probs);

/*
 * Probabilities of n rows (x: n x nfeatures): margins, then the
 * transform.  0 or RBA_E_NOMEM.
 */
int xgbtree_probs(const struct rebuild_forest *f, const float *x, size_t n,
		  float *probs);

/*
 * The sparse scorer interface (trainer.h rebuild_sparse_score) for such
 * a forest: every input not listed is zero, a listed NaN is missing.
 * 0 or RBA_E_NOMEM.
 */
int xgbtree_sparse_new(const struct rebuild_model *m,
		       struct rebuild_sparse **out);

#endif
