/*
 * sweep.h - a sweep: one pins file trained at many seeds, each run and
 * the sweep itself kept in the store as run records (rebuild/runs.h),
 * and read back; the noise floor every later comparison is read
 * against (doc/design.md section 8).
 *
 * Records.  Each seed's run is rebuild_runrec_render()'s text with
 * that seed, under the id "sweep/<version>/s<seed>@<t>"; the sweep is
 * kept under "sweep/<version>@<t>" (runs_id_new: t the unix time it was
 * kept, made unique), as this text exactly:
 *
 *   {
 *     "schema": "rebuild-audit/sweep/v1",
 *     "version": <pins version>,
 *     "config_hash": <config hash of the pins with train.seed 0>,
 *     "jobs": <threads that trained>,
 *     "wall_seconds": <of the training>,
 *     "seeds": [<seed>, ...],
 *     "runs": [<run id of each seed, in seed order>, ...],
 *     "pins": <the canonical pins text>
 *   }
 *
 * followed by one newline.  Every run and the sweep are written in one
 * write transaction: a sweep is kept whole or not at all.
 */
#ifndef RBA_FX_SWEEP_H
#define RBA_FX_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "common/digest.h"
#include "forensics/forensics.h"
#include "rebuild/runs.h"
#include "rebuild/runrec.h"
#include "store/store.h"

#define FX_SWEEP_SCHEMA "rebuild-audit/sweep/v1"

/*
 * A sweep, kept (fx_sweep_run) or read back (fx_sweep_load).  Every
 * pointer is owned; fx_sweep_release frees them.  runs[i] is the record
 * of seeds[i], kept under ids + i * RUNS_ID_SIZE.
 */
struct fx_sweep {
	char id[RUNS_ID_SIZE];
	struct pins *pins; /* with the seed of the file */
	char *pins_text;   /* canonical */
	size_t n;
	uint64_t *seeds;
	char *ids; /* n ids of RUNS_ID_SIZE bytes */
	struct rebuild_runrec *runs;
	struct rba_digest config_hash; /* of pins with train.seed 0 */
	struct rba_digest eval_fingerprint, snapshot; /* of runs[0], pins */
	char environment[RBA_DIGEST_TEXT_LEN + 1];    /* of runs[0] */
	double wall_seconds;
};
/* Frees what s owns and zeroes it; NULL allowed, twice allowed. */
void fx_sweep_release(struct fx_sweep *s);

/* What a sweep trains, all borrowed for the call. */
struct fx_sweep_plan {
	const uint64_t *seeds; /* 1..FX_MAX_SEEDS, distinct */
	size_t n;
	unsigned jobs;	     /* 1..FX_MAX_JOBS */
	char *const *snaps;  /* files to find the snapshot in first */
	size_t nsnaps;
};

/*
 * The snapshot of digest want: the bytes of the first of files that
 * hash to it, else the store's blob (st->get is called only then).
 * *buf is malloc'd, the caller's.  0; otherwise the error of the step
 * in f: FX_STEP_SNAPSHOT_READ (a file that cannot be read, subject the
 * file: rba_file_read's errors), FX_STEP_STORE, FX_STEP_SNAPSHOT_FIND
 * (the read transaction: store_txn_begin's errors, subject the digest
 * text), FX_STEP_SNAPSHOT_LOAD (store_blob_load's errors: RBA_E_NOTFOUND
 * when the store has no such snapshot).
 */
int fx_snapshot_load(const struct fx_store *st, const struct rba_digest *want,
		     char *const *files, size_t nfiles, uint8_t **buf,
		     size_t *n, struct fx_fault *f);

/*
 * Trains p at each seed of plan from its snapshot (fx_snapshot_load),
 * progress (NULL allowed) hearing of each seed under label, then keeps
 * every run record and the sweep record in one write transaction of the
 * store (st->get is called after the training, or before it when the
 * snapshot is the store's) and fills out.  p is borrowed for the call.
 * 0; otherwise out is released and f says where: FX_STEP_SWEEP
 * (RBA_E_NOMEM, subject the version), fx_snapshot_load's steps,
 * FX_STEP_TRAIN (rebuild_prepare's or the trainer's errors; subject the
 * version, or "<version> seed <n>" for a seed's training, and d->file
 * may name the snapshot), FX_STEP_STORE, FX_STEP_KEEP_RUNS (the
 * transaction: runs_id_new's and store_run_put's errors, RBA_E_NOMEM;
 * subject empty: the store).
 */
int fx_sweep_run(const struct fx_store *st, const struct pins *p,
		 const struct fx_sweep_plan *plan,
		 const struct fx_progress *progress, const char *label,
		 struct fx_sweep *out, struct fx_fault *f);

/*
 * Reads the sweep record id and the record of each of its runs in txn
 * into out.  0; otherwise out is released and f says where:
 * FX_STEP_READ_RUN (store_run_get's errors for id itself), or
 * FX_STEP_READ_SWEEP with RBA_E_USAGE (not a sweep record),
 * RBA_E_CORRUPT (a malformed sweep record), the errors of
 * policy_pins_parse (its pins), store_run_get and rebuild_runrec_parse
 * (a run's record; d->key names it), RBA_E_NOMEM.  The subject is id.
 */
int fx_sweep_load(struct store_txn *txn, const char *id, struct fx_sweep *out,
		  struct fx_fault *f);

/*
 * The statistics of metric m over the sweep's runs (fx_stat_compute:
 * its finite values; NaN everywhere without memory).
 */
void fx_sweep_stat(const struct fx_sweep *s, enum fx_metric m,
		   struct fx_stat *out);

#endif
