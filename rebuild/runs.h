/*
 * runs.h - run records kept in the store (doc/design.md section 6,
 * `runs`): the id scheme, and keeping and reading the record of a
 * training.
 *
 * A run id is "<subject>@<unix seconds>": what the run made, an '@', and
 * the time it was kept, in decimal.  `register` keeps the run record of
 * the training it did under "<version>@<registered_at>" (the version's
 * registration time, store_version.registered_at), so the version finds
 * its run without a link in the version record, and each registration of
 * a version keeps its own run.  Version names have no '@', so the id
 * reads back unambiguously; two registrations of one version within the
 * same second share an id and the later run replaces the earlier one
 * (the version then is the later one too).  Other commands that keep runs
 * use the same shape with their own subject (runs_id_new below).
 *
 * The record of a training is its trainer kind's run_record: for the
 * builtin trainer rebuild_runrec_render()'s text, schema
 * "rebuild-audit/run/v2" (rebuild/runrec.h), exactly what `train
 * --record` writes, for an exec one run-exec/v1; runs_summary_get reads v1 records too (kept before
 * the evaluation contract).  The runs database also holds the records of
 * sweeps and comparisons (their own schemas), stored with store_run_put
 * under ids of this shape.
 */
#ifndef RBA_RUNS_H
#define RBA_RUNS_H

#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "rebuild/rebuild.h"
#include "rebuild/runrec.h"
#include "store/store.h"

/* Room for any run id and its NUL. */
#define RUNS_ID_SIZE (STORE_RUN_ID_MAX + 1)
_Static_assert(STORE_VERSION_NAME_MAX + 1 + 20 <= STORE_RUN_ID_MAX,
	       "a version name, '@' and any int64 fit in a run id");

/* The run id of the training registered for version at registered_at. */
void runs_id_register(const char *version, int64_t registered_at,
			   char out[RUNS_ID_SIZE]);

/*
 * Renders the run record of a training of kind (its run_record: res for
 * the builtin trainer, run for an exec one; trained from the completed
 * pins p, environment digest env, wall_seconds of wall time) and stores
 * it under id in the write transaction txn.  0, or store_run_put's
 * errors and RBA_E_NOMEM.
 */
int runs_put(struct store_txn *txn, const char *id, const struct pins *p,
	     const struct trainer_kind *kind, const struct rebuild_result *res,
	     const struct exec_run *run, const struct rba_digest *env,
	     double wall_seconds, struct rba_detail *d);

/*
 * Reads the run record id and its summary.  0; RBA_E_NOTFOUND (no such
 * run: a version registered with --artifact, or before run records were
 * kept); store_run_get's RBA_E_TAMPERED and RBA_E_CORRUPT; the errors of
 * rebuild_runrec_summary_parse; RBA_E_NOMEM.  d->key is id on error.
 */
int runs_summary_get(struct store_txn *txn, const char *id,
			  struct rebuild_runrec_summary *out,
			  struct rba_detail *d);

/*
 * A fresh id "<subject>@<t>" for a run kept at unix time t; when that id
 * is taken in txn, "<subject>@<t>.<k>" with the least k >= 1 that is
 * free, so runs kept within one second never replace each other.
 * Subjects of the forensic commands: "train/<version>/s<seed>",
 * "sweep/<version>" and "sweep/<version>/s<seed>", "compare/<base>..<cand>".
 * 0, RBA_E_LIMIT (the id would be over STORE_RUN_ID_MAX), store_run_get's
 * errors.
 */
int runs_id_new(struct store_txn *txn, const char *subject, int64_t t,
		     char out[RUNS_ID_SIZE], struct rba_detail *d);

/*
 * Keeps the run record of res in store st in a transaction of its own,
 * under a fresh id (runs_id_new) for subject at unix time t, written
 * into id.  0, or the errors of store_txn_begin, runs_id_new, runs_put
 * and store_txn_commit; nothing is kept on error and id is empty.
 */
int runs_keep(struct store *st, const char *subject, int64_t t,
	      const struct pins *p, const struct rebuild_result *res,
	      const struct rba_digest *env, double wall_seconds,
	      char id[RUNS_ID_SIZE], struct rba_detail *d);

#endif
