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
#include "rebuild/trainer.h"

#define REBUILD_MAX_SNAPSHOT (1u << 30) /* bytes of a training snapshot */

struct rebuild_result {
	uint32_t abi;		  /* the ABI that trained */
	uint8_t *artifact;	  /* canonical bytes, malloc'd */
	size_t artifact_len;
	struct rba_digest digest; /* SHA-256 of the artifact bytes */
	struct rebuild_report report;
	size_t ntrain, nval;
	uint32_t nfeatures, nclasses;
};

void rebuild_result_release(struct rebuild_result *r);

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

#endif
