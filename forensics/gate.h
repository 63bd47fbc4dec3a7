/*
 * gate.h - a regression gate: a threshold on one metric calibrated on a
 * stored baseline sweep, its file, and the one rule by which gate check,
 * gate validate and bisect decide it (doc/design.md section 8).
 *
 * The file, a flat YAML mapping of scalars written by fx_gate_render:
 *   schema: rebuild-audit/gate/v1
 *   metric: val_loss | val_acc | val_auc | train_loss | examples_per_second
 *   direction: lower-is-better | higher-is-better   (the metric's own)
 *   k: K
 *   baseline_median: X
 *   baseline_spread: X
 *   threshold: X        # median + K x spread (minus for higher-is-better)
 *   seeds: N            # the calibration sweep's seeds
 *   sweep: RUN_ID
 *   version: V
 *   config_hash: sha256:...
 *   eval_fingerprint: sha256:...
 * Numbers in the shortest round-trip form.  The reader takes exactly
 * these keys, once each, in any order; '#' comments and blank lines.
 *
 * The rule.  A gate decides a target: the runs of a pins file at the
 * seeds given (by default its own seed), a stored sweep, or a stored run
 * (one seed).  Its value is the median over the target's seeds of the
 * gate's metric (fx_metric_of), a seed whose metric is not a finite
 * number counting as the worst value (+inf when lower is better, -inf
 * when higher is better).  The target passes when the value is finite
 * and value <= threshold (lower-is-better) or value >= threshold
 * (higher-is-better).  gate check decides its target so; bisect decides
 * each evaluation (a sweep of the edited pins at the seeds given) so;
 * gate validate decides each held-out seed alone so, and counts those
 * that fail as false alarms.  gate calibrate takes the same statistic of
 * the baseline: threshold = its median + K x its spread (max - min over
 * its seeds; minus for higher-is-better), so with K >= 1 every baseline
 * seed alone, and every median of baseline seeds, passes.  The median,
 * not each seed, because a gate checked at more seeds must not alarm
 * more often on a healthy model: one unlucky seed of twenty is the noise
 * floor, not a regression.
 *
 * Metrics a run record cannot give are refused, never measured as
 * another: val_auc is defined for two classes only (train/evaluate.h).
 */
#ifndef RBA_FX_GATE_H
#define RBA_FX_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "forensics/forensics.h"
#include "forensics/sweep.h"
#include "rebuild/runrec.h"
#include "store/store.h"

#define FX_GATE_SCHEMA "rebuild-audit/gate/v1"
#define FX_GATE_MAX_LINE 512 /* bytes of a line of a gate file, newline excluded */

struct fx_gate {
	enum fx_metric metric;
	double k, median, spread, threshold;
	uint64_t seeds;
	char sweep[STORE_RUN_ID_MAX + 1];
	char version[PINS_MAX_NAME + 1];
	struct rba_digest config_hash, eval_fingerprint;
	/* Where the metric was read (fx_gate_parse; empty and 0 otherwise),
	 * for a diagnostic that names the key. */
	char file[512];
	unsigned long metric_line, metric_col;
};

/* Appends the gate file of g to out (errors stay in out). */
void fx_gate_render(const struct fx_gate *g, struct rba_buf *out);
/*
 * Writes the gate file of g to path under the output rule of
 * common/fileio.h (rba_file_write_output, mode 0644 less the umask):
 * a new file put in place atomically; an existing regular file only
 * with RBA_OUTPUT_FORCE in flags; never a symbolic link; a character
 * device or a FIFO written as it is; "-" refused (RBA_E_USAGE: the
 * caller's standard output carries its report).  0, RBA_E_NOMEM,
 * RBA_E_EXISTS, RBA_E_USAGE, EISDIR or another errno, with d (NULL
 * allowed) naming path and the reason; path untouched on error.
 */
int fx_gate_write(const char *path, const struct fx_gate *g, int flags,
		  struct rba_detail *d);

/*
 * Reads the n bytes at text, a gate file called name (for d->file and
 * g->file), into g.  0; RBA_E_NEWER (a later rebuild-audit/gate/vN);
 * RBA_E_SCHEMA for anything else: a line over FX_GATE_MAX_LINE bytes, a
 * line that is not "key: value", an unknown key, a key given twice, not
 * this schema, an unknown metric, a number that is not finite, a seeds
 * value that is not a count, a version that is not a version name
 * (policy_name_valid), a value that is not a digest (each with d->line,
 * d->col and d->reason), a key missing, a direction that is not the
 * metric's (d->line 0).
 */
int fx_gate_parse(const char *text, size_t n, const char *name,
		  struct fx_gate *g, struct rba_detail *d);

/* 1 when value is finite and on the passing side of g's threshold. */
int fx_gate_pass(const struct fx_gate *g, double value);
/* "lower-is-better" or "higher-is-better", the direction of g's metric. */
const char *fx_gate_direction(const struct fx_gate *g);

/*
 * The gate of metric m calibrated on the sweep s with K = k (>= 0):
 * baseline median and spread of fx_sweep_stat, the threshold of the
 * rule above, the sweep's seeds, id, version, config hash and eval
 * fingerprint.  0; RBA_E_UNSUPPORTED when s's runs cannot give m (f at
 * FX_STEP_GATE_MEASURE, subject s's id).
 */
int fx_gate_calibrate(const struct fx_sweep *s, enum fx_metric m, double k,
		      struct fx_gate *out, struct fx_fault *f);

/*
 * 0 when fp, the eval fingerprint of target's runs, is the gate's or
 * allow is set; RBA_E_USAGE (f at FX_STEP_GATE_REFUSE, subject target)
 * otherwise.
 */
int fx_gate_contract(const struct fx_gate *g, const struct rba_digest *fp,
		     int allow, const char *target, struct fx_fault *f);

/* A gate's decision on a target, by the rule above. */
struct fx_gate_value {
	enum fx_metric metric;
	double value; /* the median of the metric over the seeds */
	size_t n;     /* seeds */
	int pass;
};

/*
 * Decides g on the n >= 1 run records runs (borrowed), the target
 * called target.  0; RBA_E_UNSUPPORTED when the runs cannot give g's
 * metric (f at FX_STEP_GATE_MEASURE: d->file, d->line and d->col where
 * the gate file names the metric, d->key "metric", subject g->file),
 * RBA_E_NOMEM (the same step).
 */
int fx_gate_decide(const struct fx_gate *g, const struct rebuild_runrec *runs,
		   size_t n, const char *target, struct fx_gate_value *out,
		   struct fx_fault *f);

/*
 * gate validate: each of the n runs decided alone; pass[i] (n entries,
 * the caller's) is 1 when run i passes, *alarms counts those that fail.
 * 0, or fx_gate_decide's errors.
 */
int fx_gate_validate(const struct fx_gate *g, const struct rebuild_runrec *runs,
		     size_t n, const char *target, unsigned char *pass,
		     size_t *alarms, struct fx_fault *f);
/* The false alarms gate validate allows at n seeds by default: 5% of
 * n, rounded down. */
uint64_t fx_gate_alarms_allowed(size_t n);

/*
 * gate check of the stored run or sweep id in txn, its eval fingerprint
 * held to the gate's unless allow.  0 with out filled; otherwise f says
 * where: FX_STEP_GATE_CHECK (store_run_get's errors for id, or
 * rebuild_runrec_parse's for a run), fx_sweep_load's steps,
 * fx_gate_contract's and fx_gate_decide's.
 */
int fx_gate_check_stored(struct store_txn *txn, const struct fx_gate *g,
			 const char *id, int allow, struct fx_gate_value *out,
			 struct fx_fault *f);

#endif
