/*
 * xgboost.h - XGBoost models as artifacts: the JSON model file of
 * XGBoost 1.7 and later (Booster.save_model("m.json")) read into a
 * struct artifact whose forest follows XGBoost's rules (model/xgbtree.h),
 * so artifact_score, the sample's scorer and the exact TreeSHAP of
 * model/explain.h work on it as on our own forests.  The file's
 * SHA-256 is the model's identity, as for our artifacts; such an
 * artifact is never re-encoded (artifact_encode refuses it).
 *
 * The subset read (anything else is refused by name, RBA_E_UNSUPPORTED):
 * learner.gradient_booster.name "gbtree" (not dart, not gblinear);
 * learner.objective.name binary:logistic, reg:logistic (one margin, the
 * probability of class "1") or multi:softprob (num_class margins, classes
 * "0" .. "K-1", zero-padded to one width when K > 10 so that their
 * bytewise order is their number's); numeric splits only (split_type 0,
 * no categories, no feature_types "c"); scalar leaves (size_leaf_vector
 * 0); learner_model_param.num_target 1.  version: 1.7 or later, below 3.
 *
 * Mapping: tree t's node i is a split when left_children[i] != -1: on
 * feature split_indices[i] at threshold split_conditions[i], NaN to the
 * left when default_left[i]; a leaf's value is split_conditions[i];
 * covers are sum_hessian (TreeSHAP's weights).  Trees are kept in
 * canonical preorder, and grouped so that tree t adds to group t % K
 * (tree_info gives each tree's group; within a group the order is
 * XGBoost's, so every sum is the same).  base[g] is XGBoost's base
 * margin: -logf(1 / base_score - 1) in float for the logistic
 * objectives (the C library's logf, as XGBoost calls it), base_score
 * itself for multi:softprob.  Inputs: one
 * numeric column per learner.feature_names entry, by name; a file
 * without feature names has XGBoost's own default names f0 .. fN-1.
 * A case's field that is empty, NA, NaN or nan is a missing value
 * (encode.h, nmissing): NaN, sent each split's default way.  A threshold
 * -0 is kept as +0 (the same comparisons).  The file's index of each
 * tree and of each node is kept beside the forest (artifact.h,
 * xgb_tree and xgb_node) for messages.
 *
 * Hardening: every count is checked against the caps below and against
 * the arrays that hold it before anything is allocated; every index is
 * in range; each node is reached once from its tree's root (no cycle, no
 * shared node; nodes no path reaches, XGBoost's deleted ones, are
 * ignored); depth at most XGBOOST_MAX_DEPTH; every number finite as a
 * float32 and every integer integral.  A bad file is RBA_E_SCHEMA (or
 * RBA_E_SYNTAX for JSON that does not parse, d at FILE:LINE:COL, or
 * RBA_E_LIMIT over a cap) with d->key the JSON path of the offending
 * value ("$.learner.gradient_booster.model.trees[3].left_children[7]")
 * and d->reason starting with that path.
 */
#ifndef RBA_XGBOOST_H
#define RBA_XGBOOST_H

#include <stddef.h>
#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"
#include "model/artifact.h"

#define XGBOOST_MAX_BYTES (64u << 20)	/* = RBA_JSON_MAX_TEXT */
#define XGBOOST_MAX_DEPTH 32		/* levels below a root */
#define XGBOOST_MAX_TREE_NODES (1u << 22) /* nodes in one tree */

/* 1 when the bytes look like a JSON model (the first byte that is not
 * white space is '{'), 0 when not (our artifacts start "RBAMODEL"). */
int xgboost_is_json(const void *p, size_t n);

/*
 * Reads the n bytes of an XGBoost JSON model into *out (release it with
 * artifact_release).  name is the file named in errors (d->file).  0;
 * RBA_E_SYNTAX, RBA_E_SCHEMA, RBA_E_LIMIT, RBA_E_UNSUPPORTED as above;
 * RBA_E_NOMEM.  On error *out is released.
 */
int xgboost_decode(const void *p, size_t n, const char *name,
		   struct artifact *out, struct rba_detail *d);

/*
 * Decodes the n bytes of a model of either kind, ours (artifact_decode)
 * or an XGBoost JSON model (xgboost_decode, name in its errors), told
 * apart by xgboost_is_json.  Errors as those two.
 */
int xgboost_artifact_decode(const void *p, size_t n, const char *name,
			    struct artifact *out, struct rba_detail *d);

/*
 * Reads a model file of either kind, ours (artifact_load) or an XGBoost
 * JSON model (xgboost_decode), told apart by xgboost_is_json.  *digest
 * (may be NULL) gets the SHA-256 of the file's bytes.  Errors as those
 * two, plus RBA_E_LIMIT and errno for the read; d->file is the path.
 */
int xgboost_artifact_load(const char *path, struct artifact *out,
			  struct rba_digest *digest, struct rba_detail *d);

/* 1 when a is an XGBoost model (its forest follows XGBoost's rules). */
int xgboost_artifact_is(const struct artifact *a);

/*
 * XGBoost's margins (output_margin=True) of n cases given as raw
 * features (n x nfeatures, as encode_table makes them, NaN missing):
 * margins gets n x ngroups floats.  0, RBA_E_UNSUPPORTED (not an
 * XGBoost model) or RBA_E_NOMEM.
 */
int xgboost_margins(const struct artifact *a, const float *raw, size_t n,
		    float *margins);

#endif
