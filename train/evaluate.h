/*
 * evaluate.h - the evaluation contract and its fingerprint
 * (doc/design.md section 8).
 *
 * A metric means something only together with how it was measured: which
 * rows, which reduction, whether dropout was active, how the inputs were
 * scaled.  The pins' eval: section declares that contract; the rows it
 * covers are the validation part of the pins' split (its first
 * subset_rows rows in split order when eval.subset is a number).  The
 * eval fingerprint is the SHA-256 of this text, LF-terminated lines:
 *
 *   rebuild-audit/eval/v1
 *   reduction=mean|sum
 *   dropout=off|on
 *   input_scale=<shortest round-trip number, as common/json.h writes it>
 *   rows=<rows evaluated>
 *   indices=<SHA-256 hex of the evaluated row numbers, each a
 *            little-endian uint64, in split order>
 *
 * The snapshot's bytes are not in it (the snapshot digest says that), so
 * relabelling validation rows keeps the fingerprint while any change to
 * which rows are evaluated, or how, moves it.
 *
 * The evaluation runs beside training, after it, on the trained model:
 * it never changes a bit of the artifact.  Under the canonical contract
 * (all rows, mean, dropout off, input_scale 1) it is rebuild_eval on the
 * validation set, so its loss, accuracy and AUC equal the trainer's last
 * epoch exactly.  Otherwise: inputs (standardized) are multiplied by
 * input_scale; dropout on masks each hidden unit of each row with the
 * model's rate (keep with probability 1 - rate, kept units scaled by
 * 1 / (1 - rate)), masks keyed by (train.seed, RNG_EVAL_DROPOUT, layer)
 * and the row's place in the evaluated set; reduction sum reports the
 * summed cross-entropy (the mean times the rows) instead of the mean.
 */
#ifndef RBA_EVALUATE_H
#define RBA_EVALUATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "train/trainer.h"

struct rebuild_contract {
	uint64_t subset_rows; /* 0: every validation row */
	int sum;	      /* reduction sum (else mean) */
	int dropout;	      /* dropout active at evaluation */
	double input_scale;   /* > 0 */
	double dropout_rate;  /* the model's (pins model.dropout) */
	uint64_t seed;	      /* pins train.seed: the masks' key */
};

/* The evaluation of one model under one contract. */
struct rebuild_evaluation {
	struct rba_digest fingerprint;
	uint64_t rows; /* rows evaluated */
	double loss;   /* mean (or summed) cross-entropy */
	double acc;
	double auc; /* two classes only; NaN otherwise */
};

/* What one training gives: the artifact and how the training went
 * (rebuild/rebuild.h, exec/kind.h). */
struct rebuild_result {
	uint32_t abi;		  /* the ABI that trained */
	uint8_t *artifact;	  /* canonical bytes, malloc'd */
	size_t artifact_len;
	struct rba_digest digest; /* SHA-256 of the artifact bytes */
	struct rebuild_report report;
	size_t ntrain, nval;
	uint32_t nfeatures, nclasses;
	/* The pins' evaluation contract and the model's metrics under it
	 * (evaluate.h), computed after training. */
	struct rebuild_contract contract;
	struct rebuild_evaluation eval;
};

void rebuild_result_release(struct rebuild_result *r);

/* The contract p declares (its eval: section and what it needs). */
void rebuild_contract_from_pins(const struct pins *p,
				struct rebuild_contract *c);
/* 1 when c is the canonical contract: all rows, mean, off, scale 1. */
int rebuild_contract_canonical(const struct rebuild_contract *c);
/* The contract's eval: text for reports, e.g. "subset all, reduction
 * mean, dropout off, input_scale 1" into out (at most n bytes). */
void rebuild_contract_describe(const struct rebuild_contract *c, char *out,
			       size_t n);

/*
 * Evaluates model m (trained with abi) on val, the standardized
 * validation set whose row numbers in the snapshot are idx[0..val->n),
 * under c; positive as for rebuild_eval.  0, RBA_E_UNSUPPORTED (dropout
 * on with a forest, or an unknown abi), RBA_E_RANGE (a row subset
 * larger than the validation part: d says so) or RBA_E_NOMEM.
 */
int rebuild_evaluate(uint32_t abi, const struct rebuild_model *m,
		     const struct rebuild_set *val, const size_t *idx,
		     uint32_t positive, const struct rebuild_contract *c,
		     struct rebuild_evaluation *out, struct rba_detail *d);

/*
 * The metrics of an exec version's native model (exec/exec.h) from
 * its class probabilities: probs is nval x nclasses for the validation
 * rows (labels y, row numbers idx, in split order), evaluated under c
 * as rebuild_evaluate does (same fingerprint, the same subset and
 * reduction); a row's loss is -log of its true class's probability
 * (floored at 1e-30), its prediction the most probable class (the
 * first on a tie).  RBA_E_UNSUPPORTED for a contract with dropout on or
 * an input_scale other than 1 (the model is not ours to rescale),
 * RBA_E_RANGE, RBA_E_NOMEM.
 */
int rebuild_evaluate_probs(const float *probs, uint32_t nclasses,
			   const uint32_t *y, size_t nval, const size_t *idx,
			   uint32_t positive, const struct rebuild_contract *c,
			   struct rebuild_evaluation *out, struct rba_detail *d);

#endif
