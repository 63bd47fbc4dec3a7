/*
 * register.h - keeping a model version: train it from its pins (or take
 * an artifact built elsewhere), fill the pins and store the version, its
 * artifact, its environment record and its policy in one transaction.
 *
 * Provenance: a version whose artifact this tool trained for it keeps a
 * record of what made it, as the version record's meta (store.h,
 * store_version.meta):
 *   u8 'A', u8 1, config hash[32], snapshot digest[32], u32 trainer ABI,
 *   environment digest[32], u32 len + code revision
 * An audit compares it with the version's pins to say which link changed
 * (config, ABI, environment, code).  It belongs to the version, not to
 * the artifact's bytes: two versions that train the same bytes (pins
 * that differ in determinism.threads, exec commits that build the same
 * file) keep one each, and a version registered with --artifact has
 * none (empty meta), whoever trained those bytes, unless it replaces
 * itself with the artifact it had trained (register --replace of the
 * same bytes keeps its record).  Stores written before versions kept
 * meta (version records of the first format) have the same record as
 * the artifact blob's meta, which each training of those bytes replaced:
 * register_provenance_get says when it is the version's.
 */
#ifndef RBA_REGISTER_H
#define RBA_REGISTER_H

/* The history record register --replace appends (rebuild-audit-report(5),
 * REGISTER RECORDS). */
#define REGISTER_RECORD_SCHEMA "rebuild-audit/register/v1"

#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"
#include "exec/exec.h"
#include "rebuild/runs.h"
#include "policy/policy.h"
#include "rebuild/rebuild.h"
#include "store/store.h"

struct register_request {
	const struct pins *pins;     /* as loaded; not modified */
	const char *artifact_path;   /* NULL: train from the pins */
	const struct policy *policy; /* NULL: none */
	int replace;		     /* replace an existing version */
	/* NULL, or hears of each training epoch (rebuild_train). */
	const struct rebuild_progress *progress;
};

struct register_result {
	struct pins *pins;	   /* the completed pins (owned) */
	char *pins_text;	   /* their canonical text (owned) */
	struct rba_digest artifact;
	struct rba_digest config;  /* policy_pins_config_hash */
	int trained;		   /* 1: trained here; 0: --artifact */
	struct rebuild_result rebuild; /* when trained: metrics, sizes */
	/* --replace of an existing version: */
	int replaced;
	struct rba_digest old_artifact; /* the artifact it held */
	int had_sample;		/* it has a sample (kept, from before) */
	/* With had_sample: the artifact that made the sample's stored
	 * decisions (its layout's), which after two replaces is not
	 * old_artifact; has_sample_artifact 0 when the layout is unreadable. */
	int has_sample_artifact;
	struct rba_digest sample_artifact;
	int policy_kept;	/* its policy was kept (no --policy) */
	char *kept_policy_text;	/* owned */
	char run_id[RUNS_ID_SIZE]; /* when trained: its run record */
	/* The pins' trainer kind (rebuild/rebuild.h); when it is
	 * sandboxed, the run (exec/exec.h): commit, tree, command, sandbox
	 * result, its artifact bytes moved to rebuild.artifact. */
	const struct trainer_kind *kind;
	struct exec_run exec;
};

void register_result_release(struct register_result *r);

/*
 * Registers rq->pins in store s.  The snapshot must be in the store
 * (RBA_E_NOTFOUND, d->key its digest).  When training, the pins' trainer
 * ABI is used if set (else the current one), and an artifact digest
 * already in the pins must equal the trained one (RBA_E_SCHEMA: the pins
 * say another artifact; register it with --artifact).  With an artifact
 * file, it must decode (artifact_decode's errors) and match an artifact
 * digest already in the pins.  A code_revision or environment the pins
 * declare is kept, never replaced: training with a declared one that is
 * not this build's or this machine's is RBA_E_SCHEMA (d at the key),
 * and an artifact file keeps what its pins declare, so that an audit
 * here names what differs.  Fills trainer_abi, artifact, and the
 * code_revision and environment the pins leave out, then stores artifact
 * blob, version (with its provenance when trained) and, when trained, the
 * training's run record (runs.h: id "<version>@<registered_at>", in
 * out->run_id) in one write transaction.  With replace, an existing
 * version keeps its policy unless rq->policy is given, keeps its sample
 * (whose decisions were made by the old artifact), keeps its provenance
 * when an artifact file is the artifact it had trained, and the same
 * transaction appends a
 * REGISTER_RECORD_SCHEMA record to the history naming the old and the
 * new artifact (out->replaced and the fields after it say what was
 * replaced).  Errors: the
 * store's, rebuild_from_snapshot's, RBA_E_EXISTS (version exists and
 * !replace), RBA_E_NOMEM.
 */
int register_version(struct store *s, const struct register_request *rq,
		     struct register_result *out, struct rba_detail *d);

/* What made an artifact, when this tool trained it. */
struct register_provenance {
	struct rba_digest config;
	struct rba_digest snapshot;
	uint32_t trainer_abi;
	struct rba_digest environment;
	char code_revision[256];
};

/*
 * The provenance of version v (as store_version_get gave it, in txn),
 * whose pins p parses: a record of the second format gives its own
 * meta.  A record of the first format gives the artifact blob's meta
 * only when that is this version's training as its record tells it:
 * config hash (of p), snapshot, trainer ABI, environment and code
 * revision all the ones its pins hold (register filled them from the
 * training that wrote the meta); any other is a record of another
 * registration of those bytes (another version's, or this one's before
 * a replace) and is not taken, *foreign 1.  *foreign (may be NULL) is 0
 * otherwise.  0; RBA_E_NOTFOUND when the version has none (registered
 * from a file, or *foreign); RBA_E_CORRUPT when the record is
 * malformed; the store's errors.
 */
int register_provenance_get(struct store_txn *txn,
			    const struct store_version *v,
			    const struct pins *p,
			    struct register_provenance *out, int *foreign,
			    struct rba_detail *d);

#endif
