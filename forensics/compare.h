/*
 * compare.h - a comparison of two sweeps at the same seeds
 * (doc/design.md section 8): what was declared before the first run
 * (hypothesis, success expression, alpha), the pairing and its decision,
 * and the record that keeps both.
 *
 * The record, kept under "compare/<base version>..<cand version>@<t>"
 * (runs_id_new; t the time of the declaration, declared_at), is the JSON
 * document of fx_compare_render, schema "rebuild-audit/compare/v2",
 * followed by one newline.  It is kept three times at most, under the
 * same id: when declared (status "declared", before any run), when
 * decided (status "decided", with identity, correctness, cost and
 * verdict), or, when it could not be decided, with status "refused"
 * (the sweeps cannot be compared) or "failed" (anything else).  Its
 * members, in this order:
 *   schema, id, status, declared_at, decided_at (null until decided),
 *   hypothesis, success, alpha, seeds (as given, or null for stored
 *   sweeps), base, cand (as given), base_sweep, cand_sweep (null until
 *   known), and once decided:
 *   identity {config_hash, eval_fingerprint (SAME or CHANGED),
 *     base_eval_fingerprint, cand_eval_fingerprint (null for a v1 run),
 *     contract_change_allowed, environment, snapshot, code_revision,
 *     edits [{path, base, cand}]},
 *   correctness [{metric, baseline, candidate (median, mean, stdev, min,
 *     max, spread), delta (median, mean, stdev, min, max), seeds, worse,
 *     better, ties, shift, p, unpaired_diff, unpaired_stdev, finding}]
 *     (every metric with paired values but examples_per_second),
 *   cost {base_examples_per_second, cand_examples_per_second} (medians),
 *   verdict (fx_verdict_name; null until decided).
 */
#ifndef RBA_FX_COMPARE_H
#define RBA_FX_COMPARE_H

#include <stdint.h>

#include "common/buf.h"
#include "forensics/forensics.h"
#include "forensics/sweep.h"
#include "rebuild/runs.h"
#include "store/store.h"

#define FX_SUCCESS_DEFAULT "val_loss.median < 0"

/*
 * One comparison.  The strings and the sweeps are borrowed from the
 * caller for the comparison's life; edits is owned (fx_compare_release).
 */
struct fx_compare {
	char id[RUNS_ID_SIZE];	/* empty until first kept */
	char subject[300];	/* "compare/<base>..<cand>", the id's subject */
	const char *hyp, *success, *seeds, *base, *cand;
	double alpha;
	int allow;		/* --allow-contract-change */
	int64_t declared_at, decided_at;
	const char *status;	/* declared, decided, refused, failed */
	const struct fx_sweep *a, *b;
	int computed;		/* decided: what follows is filled */
	int fp_same, v1;
	struct fx_paired pr[FX_NMETRICS];
	struct fx_edit *edits;
	size_t nedits;
	enum fx_verdict verdict;
};

/* Zeroes c: success FX_SUCCESS_DEFAULT, alpha FX_ALPHA_DEFAULT, status
 * "declared". */
void fx_compare_init(struct fx_compare *c);
/* Frees what c owns; c stays initialized.  NULL allowed. */
void fx_compare_release(struct fx_compare *c);

/* Appends the record of c, the document above, without its newline. */
void fx_compare_render(const struct fx_compare *c, struct rba_buf *out);

/*
 * Keeps the record of c in one write transaction of st, under c->id;
 * the first time, takes a fresh id and sets declared_at to now.  0;
 * otherwise f at FX_STEP_KEEP_COMPARISON with store_txn_begin's errors
 * (subject empty: the store), or runs_id_new's, store_run_put's,
 * store_txn_commit's and RBA_E_NOMEM (subject the id, or the subject
 * before there is one).
 */
int fx_compare_keep(struct store *st, struct fx_compare *c, struct fx_fault *f);

/*
 * 0 when c->a and c->b have as many seeds; RBA_E_USAGE otherwise (f at
 * FX_STEP_COMPARE, subject c->cand).  Stored sweeps are held to it
 * before their comparison is declared.
 */
int fx_compare_sizes(const struct fx_compare *c, struct fx_fault *f);

/*
 * Pairs c->a and c->b (as many seeds each) and decides ex: the edits,
 * the paired statistics of every metric, the verdict; status
 * "decided", decided_at now.  0; otherwise f, subject c->b's id:
 * FX_STEP_COMPARE with RBA_E_USAGE (not the same seeds) or RBA_E_NOMEM,
 * FX_STEP_COMPARE_REFUSE with RBA_E_USAGE (the eval fingerprints differ
 * or one is unknown, and c->allow is not set).
 */
int fx_compare_decide(struct fx_compare *c, const struct fx_expr *ex,
		      struct fx_fault *f);

#endif
