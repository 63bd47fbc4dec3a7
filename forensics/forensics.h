/*
 * forensics.h - the instruments of doc/design.md section 8 below the
 * command line: metrics, seeds and training at seeds, their statistics,
 * paired comparison with an exact sign test and the noise floor, the
 * declared success expression (expr.c), the edits between two pins files
 * (edits.c), and what every use case shares: the store it is given and
 * how it says where it failed.  The use cases, each with its header:
 * sweep.h (a sweep and its records), compare.h (a comparison, its record
 * and decision), gate.h (a gate file and its rule), bisect.h (the search
 * for the edit that fails a gate), records.h (the run records as `runs`
 * tells them), plot.h (the SVG of sweeps).  Nothing here prints.
 *
 * Metrics.  Every run contributes five numbers, each with a direction:
 *   val_loss   the eval-contract loss ("eval"."loss")      lower is better
 *   val_acc    the eval-contract accuracy                  higher is better
 *   val_auc    the eval-contract AUC (two classes; NaN)    higher is better
 *   train_loss the last epoch's training loss              lower is better
 *   examples_per_second                                    higher is better
 * The first is the primary metric.  An exec version (exec/exec.h) has
 * them from the tool's evaluation of an XGBoost JSON artifact, or from
 * the {metrics} file of an opaque one (rebuild.c, exec_from_prepared);
 * its examples_per_second is training rows over the command's time.
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
/* The metric named by the n bytes at name: 0, or -1 when none is. */
int fx_metric_parse(const char *name, size_t n, enum fx_metric *out);
/* 1 when a higher value is better. */
int fx_metric_higher_better(enum fx_metric m);
/* The value of metric m in a run record (NaN when the record has none). */
double fx_metric_of(const struct rebuild_runrec *r, enum fx_metric m);

/* ---- seeds ---------------------------------------------------------- */

/*
 * Parses "A-B" or "A" or a comma list of those (each A <= B, at most
 * FX_MAX_SEEDS seeds in all, none twice) into *seeds, malloc'd, the
 * caller's, in the order given (a range ascending).  0; RBA_E_USAGE
 * (d->reason says why: not that shape, too many seeds, a seed twice);
 * RBA_E_NOMEM.  *seeds is NULL and *n 0 on error.
 */
int fx_seeds_parse(const char *s, uint64_t **seeds, size_t *n,
		   struct rba_detail *d);

/* ---- training at seeds ---------------------------------------------- */

struct fx_seed_run {
	uint64_t seed;
	struct rebuild_result res; /* owned */
	double wall_seconds;
	int err;
	struct rba_detail d;
};

/*
 * Progress of a training at seeds: done is called after each seed
 * (whether it trained or failed) with the label its caller gave, the
 * seeds done and their total; the last call has done == total.  Called
 * with a lock held, from any worker thread; ctx is the caller's.
 */
struct fx_progress {
	void (*done)(void *ctx, const char *label, size_t done, size_t total);
	void *ctx;
};

/*
 * Trains p at each seed (p->train.seed replaced) from prep with jobs
 * threads (1..FX_MAX_JOBS; each training is the same whatever the
 * number of jobs: a seed's run depends on the pins and the seed only).
 * out has n entries, in seed order, filled here; release with
 * fx_seed_runs_release.  progress (NULL allowed) hears of each seed
 * under label.  0 when every seed trained; otherwise the first failing
 * seed's error (its entry has err and d).
 */
int fx_seeds_train(const struct pins *p, const struct rebuild_prepared *prep,
		   const uint64_t *seeds, size_t n, unsigned jobs,
		   const struct fx_progress *progress, const char *label,
		   struct fx_seed_run *out);
/* Releases the n results of runs (NULL allowed), not the array. */
void fx_seed_runs_release(struct fx_seed_run *runs, size_t n);

/* ---- the store and failures of a use case --------------------------- */

/*
 * The store a use case keeps its records in, opened when first needed,
 * so that one which finds everything in files never opens it.  get sets
 * *st and returns 0, or returns nonzero when the store cannot be had;
 * the use case then fails at FX_STEP_STORE and whoever provides get
 * reports why.
 */
struct fx_store {
	int (*get)(void *ctx, struct store **st);
	void *ctx;
};

/*
 * What a use case was doing when it failed, for its caller's one
 * diagnostic: the step, its subject (a file, a digest text, a version,
 * "<version> seed <n>", a run id; empty when the subject is the store
 * itself) and the detail (reason, file, line, column, key).
 */
enum fx_step {
	FX_STEP_STORE = 0,	/* the store could not be had (fx_store) */
	FX_STEP_SWEEP,		/* out of memory before or after training */
	FX_STEP_SNAPSHOT_READ,	/* a --snapshot file */
	FX_STEP_SNAPSHOT_FIND,	/* the read transaction for the snapshot */
	FX_STEP_SNAPSHOT_LOAD,	/* the snapshot blob */
	FX_STEP_TRAIN,		/* preparing or training a seed */
	FX_STEP_KEEP_RUNS,	/* the write transaction of a sweep */
	FX_STEP_READ_RUN,	/* the record a sweep id names */
	FX_STEP_READ_SWEEP,	/* a sweep record or one of its runs */
	FX_STEP_COMPARE,	/* sweeps that cannot be paired */
	FX_STEP_COMPARE_REFUSE, /* the evaluation contract changed */
	FX_STEP_KEEP_COMPARISON, /* the comparison's record */
	FX_STEP_GATE_REFUSE,	/* not the gate's evaluation contract */
	FX_STEP_GATE_CHECK,	/* a stored run to check */
	FX_STEP_GATE_MEASURE,	/* a gate metric the records cannot give */
	FX_STEP_BISECT,		/* out of memory in a bisection */
	FX_NSTEPS
};
#define FX_SUBJECT_MAX 300
struct fx_fault {
	enum fx_step step;
	char subject[FX_SUBJECT_MAX];
	struct rba_detail d;
};
/* Clears f (NULL allowed). */
void fx_fault_clear(struct fx_fault *f);
/*
 * Records a failure at step on subject (NULL: the store) and returns
 * err, so that `return fx_fail(f, ...)` reads as one step.  fmt NULL
 * keeps f->d as the failing call filled it; otherwise f->d is cleared
 * and its reason set from fmt.
 */
int fx_fail(struct fx_fault *f, int err, enum fx_step step,
	    const char *subject, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

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
 * alpha: worse, better and ties count the finite deltas by m's
 * direction, the rest is as the members say.  Fills out; without
 * memory its delta statistics are NaN and it is not resolved.
 */
void fx_paired_compute(enum fx_metric m, const double *base,
		       const double *cand, size_t n, double alpha,
		       struct fx_paired *out);
/* "NOT RESOLVED", or when resolved "better" or "worse"; static. */
const char *fx_paired_finding(const struct fx_paired *pr);

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
/*
 * Parses text (NUL-terminated) into *out, a tree the caller frees with
 * fx_expr_free.  0; RBA_E_LIMIT (text over FX_MAX_EXPR bytes);
 * RBA_E_SYNTAX (d->col the byte offset + 1 where the grammar breaks,
 * d->reason what it expected there); RBA_E_NOMEM.  *out is NULL on
 * error.
 */
int fx_expr_parse(const char *text, struct fx_expr **out,
		  struct rba_detail *d);
/* NULL allowed. */
void fx_expr_free(struct fx_expr *e);
/* Metrics the expression reads (bit i for enum fx_metric i). */
unsigned fx_expr_metrics(const struct fx_expr *e);
/* The value of e (1 or 0) over paired results: pr has FX_NMETRICS
 * entries, indexed by metric. */
int fx_expr_eval(const struct fx_expr *e, const struct fx_paired *pr);

enum fx_verdict { FX_MET = 0, FX_NOT_MET = 1, FX_NOT_RESOLVED = 2 };
/*
 * NOT RESOLVED when a metric the expression reads is not resolved;
 * otherwise MET or NOT MET by its value.
 */
enum fx_verdict fx_verdict_decide(const struct fx_expr *e,
				  const struct fx_paired *pr);
const char *fx_verdict_name(enum fx_verdict v); /* "MET", ... */

/* ---- edits ---------------------------------------------------------- */

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
