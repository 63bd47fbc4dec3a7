/*
 * rebuild.h - training from pins and snapshot bytes to artifact bytes:
 * the one call `train`, `register` and `audit` make.
 *
 * Steps: check the snapshot against the pinned digest, read it as CSV,
 * encode it (encode.h), split it, standardize from the training split,
 * train with the requested trainer ABI (trainer.h), and write the
 * canonical artifact (artifact.h).  In strict mode the artifact bytes
 * depend only on the snapshot bytes, the pins' data/model/train
 * sections and the ABI.
 */
#ifndef RBA_REBUILD_H
#define RBA_REBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "train/evaluate.h"
#include "train/trainer.h"
#include "exec/kind.h"


/* struct rebuild_result, the result of one training, is train/evaluate.h's:
 * the trainer kinds (exec/kind.h) fill it, below this folder. */

/*
 * The trainer kinds (exec/kind.h, doc/design.md 7.1): this tool's own
 * trainer (rebuild/trainers.c; the ABI registry of train/trainer.h) and
 * the exec one (exec_trainer_kind, exec/kind.c).
 */
extern const struct trainer_kind rebuild_builtin_kind;

/* The entry of the trainer p names (trainer.kind; builtin when the pins
 * have no trainer: block), looked up once by each use case, which then
 * calls through it.  Never NULL; static. */
const struct trainer_kind *rebuild_trainer_kind(const struct pins *p);

/*
 * Trains from the snapshot bytes (name is used in error details) with
 * trainer ABI abi (0: p->trainer_abi when set, else the current ABI).
 * Errors: RBA_E_TAMPERED (the bytes do not hash to p->snapshot),
 * everything csv_table_load_mem, encode_fit and rebuild_train return,
 * RBA_E_RANGE (fewer than two rows), RBA_E_NOMEM; d says what and where.
 * progress (NULL allowed) hears of each epoch (rebuild_train).
 */
int rebuild_from_snapshot(const struct pins *p, uint32_t abi,
			  const void *snapshot, size_t n, const char *name,
			  const struct rebuild_progress *progress,
			  struct rebuild_result *out, struct rba_detail *d);

/*
 * The steps of rebuild_from_snapshot before training, done once for many
 * trainings of one snapshot under one data: section (a sweep's seeds, a
 * comparison's sides): check the digest, read, encode, split,
 * standardize.  Depends on p->snapshot and p->data only.  Errors as
 * rebuild_from_snapshot's before training.  *out is owned by the caller
 * (rebuild_prepared_free); it holds no pointer into snapshot.
 */
struct rebuild_prepared;
int rebuild_prepare(const struct pins *p, const void *snapshot, size_t n,
		    const char *name, struct rebuild_prepared **out,
		    struct rba_detail *d);
/* NULL allowed. */
void rebuild_prepared_free(struct rebuild_prepared *prep);

/*
 * An exec trainer's pins (exec/exec.h) train by their command at
 * p->train.seed with p->determinism.threads: an xgboost-json artifact
 * measured by this tool on prep's validation rows (eval from
 * rebuild_evaluate_probs), an opaque one by the {metrics} file the
 * command wrote (val_loss required); res has no curves, abi 0 and the
 * command's artifact bytes.  A {metrics} file that is not a flat JSON
 * object of names to finite numbers is RBA_E_SCHEMA naming the key.
 *
 * Trains from prep as rebuild_from_snapshot does; p must have the data:
 * section and snapshot prep was made with (its train: section and model
 * may differ).  Reads prep only: several threads may train from one
 * prep at once.  Errors as rebuild_from_snapshot's training errors, and
 * rebuild_evaluate's (the contract of p->eval).
 */
int rebuild_from_prepared(const struct pins *p, uint32_t abi,
			  const struct rebuild_prepared *prep,
			  const struct rebuild_progress *progress,
			  struct rebuild_result *out, struct rba_detail *d);

/*
 * Evaluates the artifact bytes (a, n) on prep's validation part under
 * c: the artifact's own standardization over prep's encoded rows.  With
 * exec pins the bytes are XGBoost JSON scored natively, or refused
 * (RBA_E_UNSUPPORTED) for format opaque.
 * RBA_E_SCHEMA when the artifact is another kind of model than the pins
 * p describe (trees against a network, another layout of hidden
 * layers) or its features or classes are not those of prep's encoding;
 * artifact_decode's and rebuild_evaluate's errors.
 */
int rebuild_evaluate_artifact(const struct pins *p,
			      const struct rebuild_prepared *prep,
			      const void *a, size_t n,
			      const struct rebuild_contract *c,
			      struct rebuild_evaluation *out,
			      struct rba_detail *d);

#endif
