/*
 * forensics.h - the instruments of doc/design.md section 8 below the command line:
 * sweeps over seeds, their statistics, paired comparison with an exact
 * sign test and the noise floor, the declared success expression, the
 * calibrated gate file and the order of a bisection's edits.
 *
 * Metrics.  Every run contributes five numbers, each with a direction:
 *   val_loss   the eval-contract loss ("eval"."loss")      lower is better
 *   val_acc    the eval-contract accuracy                  higher is better
 *   val_auc    the eval-contract AUC (two classes; NaN)    higher is better
 *   train_loss the last epoch's training loss              lower is better
 *   examples_per_second                                    higher is better
 * The first is the primary metric.
 *
 * Noise floor.  A paired comparison of metric M (deltas cand - base per
 * shared seed) is RESOLVED only when both hold:
 *   (a) |median paired delta| > the baseline sweep's spread of M
 *       (max - min over its seeds): a shift inside the seed-to-seed
 *       range of the baseline is not a finding, however consistent;
 *   (b) the exact two-sided sign test over the non-zero deltas gives
 *       p <= alpha (declared; default 0.05).
 * Otherwise it is NOT RESOLVED, and reports say neither better nor
 * worse.  With a zero spread (every baseline seed the same) (a) asks for
 * any non-zero median.
 */
#ifndef RBA_FORENSICS_H
#define RBA_FORENSICS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "rebuild/rebuild.h"
#include "rebuild/runrec.h"
#include "store/store.h"

#define FX_MAX_SEEDS 4096    /* seeds in one sweep */
#define FX_MAX_JOBS 64	     /* -j */
#define FX_MAX_EXPR 1024     /* bytes of a --success expression */
#define FX_MAX_HYPOTHESIS 4096
#define FX_ALPHA_DEFAULT 0.05

enum fx_metric {
	FX_VAL_LOSS = 0,
	FX_VAL_ACC,
	FX_VAL_AUC,
	FX_TRAIN_LOSS,
	FX_EPS,
	FX_NMETRICS
};
/* "val_loss", ...; static. */
const char *fx_metric_name(enum fx_metric m);
/* 1 when a higher value is better. */
int fx_metric_higher_better(enum fx_metric m);
/* The metric of a run record. */
double fx_metric_of(const struct rebuild_runrec *r, enum fx_metric m);

/* ---- seeds ---------------------------------------------------------- */

/*
 * Parses "A-B" or "A" or "A,B,C" (each A <= B, at most FX_MAX_SEEDS in
 * all, no repeats) into a malloc'd ascending... in the order given.
 * 0 or RBA_E_USAGE (d->reason says why) or RBA_E_NOMEM.
 */
int fx_seeds_parse(const char *s, uint64_t **seeds, size_t *n,
		   struct rba_detail *d);

/* ---- sweeps --------------------------------------------------------- */

struct fx_seed_run {
	uint64_t seed;
	struct rebuild_result res; /* owned */
	double wall_seconds;
	int err;
	struct rba_detail d;
};

/* Progress: called with a lock held, from any worker thread. */
struct fx_progress {
	void (*done)(void *ctx, size_t done, size_t total);
	void *ctx;
};

/*
 * Trains p at each seed (p->train.seed replaced) from prep with jobs
 * threads (1..FX_MAX_JOBS; each training is the same whatever the
 * number of jobs: a seed's run depends on the pins and the seed only).
 * out has n entries, in seed order, filled here; release with
 * fx_runs_release.  0 when every seed trained; otherwise the first
 * failing seed's error (its entry has err and d).
 */
int fx_sweep_train(const struct pins *p, const struct rebuild_prepared *prep,
		   const uint64_t *seeds, size_t n, unsigned jobs,
		   const struct fx_progress *progress, struct fx_seed_run *out);
void fx_runs_release(struct fx_seed_run *runs, size_t n);

/* ---- statistics ----------------------------------------------------- */

struct fx_stat {
	size_t n; /* finite values */
	double median, mean, stdev, min, max, spread; /* spread = max - min */
};
/* Over the finite values of v (NaN everywhere when there are none). */
void fx_stat_compute(const double *v, size_t n, struct fx_stat *out);

/* Exact two-sided sign test: p = min(1, 2 P[X <= min(a, b)]), X ~
 * Binomial(a + b, 1/2); 1 when a + b is 0. */
double fx_sign_test(unsigned a, unsigned b);

struct fx_paired {
	enum fx_metric metric;
	struct fx_stat base, cand, delta; /* delta: cand - base per seed */
	unsigned worse, better, ties;
	double shift;	/* median delta / baseline spread (inf/NaN when 0) */
	double p;	/* sign test */
	double unpaired_diff;  /* cand median - base median */
	double unpaired_stdev; /* sqrt(var base + var cand) */
	int resolved;	/* the noise-floor rule above */
	int direction;	/* when resolved: +1 better, -1 worse */
};
/*
 * Pairs base[i] with cand[i] (n seeds, same order) for metric m under
 * alpha.  Fills out.
 */
void fx_paired_compute(enum fx_metric m, const double *base,
		       const double *cand, size_t n, double alpha,
		       struct fx_paired *out);

/* ---- success expressions -------------------------------------------- */

/*
 * Grammar (words and numbers separated by blanks where ambiguous):
 *   expr  := conj { "or" conj }
 *   conj  := unary { "and" unary }
 *   unary := "not" unary | "(" expr ")" | cmp
 *   cmp   := term op NUMBER
 *   op    := "<" | "<=" | ">" | ">=" | "==" | "!="
 *   term  := METRIC "." STAT | COUNT
 *   STAT  := median | mean | stdev | min | max | worse | better | shift | p
 *   COUNT := worse | better | p | shift   (of val_loss)
 * METRIC is a metric name; STAT median..max are of the paired deltas
 * (cand - base); worse/better count seeds; shift is the median delta in
 * baseline spreads; p the sign test.  Example:
 *   val_loss.median < -0.005 and worse <= 2
 */
struct fx_expr;
/* 0 or RBA_E_SYNTAX (d->col the byte offset + 1, d->reason); NOMEM. */
int fx_expr_parse(const char *text, struct fx_expr **out,
		  struct rba_detail *d);
void fx_expr_free(struct fx_expr *e);
/* Metrics the expression reads (bit i for enum fx_metric i). */
unsigned fx_expr_metrics(const struct fx_expr *e);
/* The value of e over paired results (FX_NMETRICS entries). */
int fx_expr_eval(const struct fx_expr *e, const struct fx_paired *pr);

enum fx_verdict { FX_MET = 0, FX_NOT_MET = 1, FX_NOT_RESOLVED = 2 };
/*
 * NOT RESOLVED when a metric the expression reads is not resolved;
 * otherwise MET or NOT MET by its value.
 */
enum fx_verdict fx_verdict_decide(const struct fx_expr *e,
				  const struct fx_paired *pr);
const char *fx_verdict_name(enum fx_verdict v); /* "MET", ... */

/* ---- gate ----------------------------------------------------------- */

/*
 * A gate file, a flat YAML mapping of scalars written by fx_gate_render:
 *   schema: rebuild-audit/gate/v1
 *   metric: val_loss
 *   direction: lower-is-better | higher-is-better
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
 */
struct fx_gate {
	enum fx_metric metric;
	double k, median, spread, threshold;
	uint64_t seeds;
	char sweep[STORE_RUN_ID_MAX + 1];
	char version[PINS_MAX_NAME + 1];
	struct rba_digest config_hash, eval_fingerprint;
};
void fx_gate_render(const struct fx_gate *g, struct rba_buf *out);
/* 0; RBA_E_SCHEMA (d->line, d->reason); RBA_E_NEWER. */
int fx_gate_parse(const char *text, size_t n, const char *name,
		  struct fx_gate *out, struct rba_detail *d);
/* 1 when value passes the gate. */
int fx_gate_pass(const struct fx_gate *g, double value);

/* ---- bisection ------------------------------------------------------ */

/*
 * The edits from base to cand: the leaf lines of their canonical texts
 * (rebuild-audit-pins(5)) that differ, in canonical order (schema order:
 * snapshot, data, model, train, eval, determinism; the fields register
 * fills and version are not edits).  Each edit is a path ("train.lr")
 * with both values' text.  0, RBA_E_SCHEMA (the two texts have
 * different shapes: a model kind changed), RBA_E_NOMEM.
 */
struct fx_edit {
	char path[96];
	char base[256], cand[256];
};
int fx_edits(const struct pins *base, const struct pins *cand,
	     struct fx_edit **edits, size_t *n, struct rba_detail *d);
/*
 * Base with the edits whose bit is set in pick (an array of n flags)
 * applied: a new pins record (policy_pins_free).  0 or the parser's
 * error when the combination is invalid (d says where).
 */
int fx_edits_apply(const struct pins *base, const struct fx_edit *edits,
		   size_t n, const unsigned char *pick, struct pins **out,
		   struct rba_detail *d);

#endif
