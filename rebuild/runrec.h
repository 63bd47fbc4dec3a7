/*
 * runrec.h - the run record of a training run (`train --record FILE`):
 * what was trained from what, where, and how it went, as JSON.
 *
 * The text this tool writes, schema "rebuild-audit/run/v2", with this
 * layout exactly (the keys always present and in this order; <d> a
 * digest text "sha256:<64 hex>", numbers as common/json.h writes them:
 * the shortest text that reads back as the same double, null when not
 * finite):
 *
 *   {
 *     "schema": "rebuild-audit/run/v2",
 *     "version": <pins version>,
 *     "config_hash": <d>,
 *     "eval_fingerprint": <d>,
 *     "snapshot": <d>,
 *     "environment": <environment record digest text, as given>,
 *     "code_revision": <envrec_code_revision(); an exec version's
 *                       trainer.revision>,
 *     "trainer_abi": <ABI that trained>,
 *     "seed": <pins train.seed>,
 *     "mode": "strict" | "fast",
 *     "threads": <pins determinism.threads>,
 *     "artifact": <d>,
 *     "examples": {"train": N, "validation": N, "features": N, "classes": N},
 *     "curves": [
 *       {"epoch": 1, "train_loss": x, "val_loss": x, "val_acc": x, "val_auc": x},
 *       ...
 *     ],
 *     "final": {"train_loss": x, "val_loss": x, "val_acc": x, "val_auc": x},
 *     "eval": {"subset": "all" | N, "reduction": "mean" | "sum",
 *              "dropout": "off" | "on", "input_scale": x, "rows": N,
 *              "loss": x, "acc": x, "auc": x},
 *     "examples_per_second": x,
 *     "train_seconds": x,
 *     "wall_seconds": x
 *   }
 *
 * followed by one newline.  ("curves": [] has its closing bracket on the
 * next line after "[", as above with no entries.)  The record holds
 * timings, so two runs give different records: it is for people and
 * dashboards, not for digests.
 *
 * "final" is the trainer's last epoch (the canonical contract: every
 * validation row, mean, dropout off, inputs as encoded); "eval" is the
 * model under the pins' eval: contract (train/evaluate.h), whose
 * fingerprint is "eval_fingerprint".  Under the canonical contract the
 * two agree exactly.
 *
 * Reading: records of schema "rebuild-audit/run/v1", written before the
 * evaluation contract, have the same layout without "eval_fingerprint"
 * and "eval"; both parsers below take v1 and v2 and refuse a later
 * version as newer.  Only v2 is written.
 */
#ifndef RBA_RUNREC_H
#define RBA_RUNREC_H

#include "common/buf.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "rebuild/rebuild.h"

/*
 * Appends the run record of res, trained from pins p, to out.  env_hex
 * is the environment record's digest text (envrec_digest, formatted),
 * wall_seconds the run's wall time.  All pointers are borrowed for the
 * call.  Errors stay in out (rba_buf_status).
 */
void rebuild_runrec_render(const struct pins *p,
			   const struct rebuild_result *res,
			   const char *env_hex, double wall_seconds,
			   struct rba_buf *out);

/*
 * Renders the record and writes it to path atomically, mode 0644 (less
 * the umask): a kill leaves the old file or none (common/fileio.h).
 * 0, RBA_E_NOMEM or an errno (path untouched on error).
 */
int rebuild_runrec_write(const char *path, const struct pins *p,
			 const struct rebuild_result *res, const char *env_hex,
			 double wall_seconds);

/*
 * The run record of an exec training (exec/kind.c, the exec trainer's
 * run_record), schema
 * "rebuild-audit/run-exec/v1": version, config_hash, snapshot,
 * environment, trainer {kind, repository, commit, tree, command (the
 * argv as run), format, sandbox}, seed, threads, artifact, exit_status,
 * seconds, stdout and stderr {bytes, sha256, tail (the last
 * SANDBOX_TAIL bytes, other than printable ASCII as '?')}, metrics (the
 * object the command wrote to {metrics}, or null), wall_seconds.  The
 * summary parser reads its artifact (no curves, metrics NaN).
 */
#define RUNREC_EXEC_SCHEMA EXEC_RUNREC_SCHEMA

/*
 * What a report prints of a run record: the run's outcome without its
 * curves.  Numbers that the record has as null are NaN.
 */
struct rebuild_runrec_summary {
	struct rba_digest artifact;
	uint32_t trainer_abi;
	uint32_t epochs;	   /* entries in "curves" */
	uint64_t ntrain, nval;	   /* "examples" */
	double val_loss, val_acc, val_auc; /* "final" */
	double examples_per_second;
	double train_seconds;
};

/*
 * Reads the summary of a run record's text (n bytes, as rendered above).
 * 0; RBA_E_NEWER (a "rebuild-audit/run/vN" later than v2); RBA_E_CORRUPT
 * (not JSON, not a run record, a member missing or of the wrong type:
 * d->reason names it); RBA_E_NOMEM.
 */
int rebuild_runrec_summary_parse(const void *text, size_t n,
				 struct rebuild_runrec_summary *out,
				 struct rba_detail *d);

/*
 * A whole run record, as read back (v1 or v2).  Strings malloc'd, owned
 * (rebuild_runrec_release).  A v1 record has has_eval 0, and its eval
 * metrics are the final ones.
 */
struct rebuild_runrec {
	uint32_t format; /* 1 or 2 */
	char *version, *environment, *code_revision, *contract;
	struct rba_digest config_hash, snapshot, artifact, eval_fingerprint;
	int has_eval;
	uint64_t seed, ntrain, nval, eval_rows;
	uint32_t trainer_abi, threads, nclasses;
	int fast;
	uint32_t epochs;
	struct rebuild_epoch *curve; /* epochs entries */
	struct rebuild_epoch final;
	double eval_loss, eval_acc, eval_auc;
	double examples_per_second, train_seconds, wall_seconds;
};

/*
 * Parses a run record's text.  0; RBA_E_NEWER; RBA_E_CORRUPT (d->reason
 * names the member); RBA_E_NOMEM.  On error *out is released.
 */
int rebuild_runrec_parse(const void *text, size_t n, struct rebuild_runrec *out,
			 struct rba_detail *d);
/* NULL allowed. */
void rebuild_runrec_release(struct rebuild_runrec *r);

#endif
