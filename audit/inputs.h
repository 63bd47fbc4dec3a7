/*
 * inputs.h - the verified inputs of a rebuild, what audit.c, dispute.c
 * and sample_add.c share: loading a version with everything between its
 * pins and its artifact, verified, and rebuilding it.  (Not the store's
 * history chain.)  Not a public header: other modules use audit.h.
 */
#ifndef RBA_AUDIT_INPUTS_H
#define RBA_AUDIT_INPUTS_H

#include "audit/register.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "model/artifact.h"
#include "exec/exec.h"
#include "rebuild/rebuild.h"
#include "store/store.h"

struct audit_inputs {
	const char *name;
	struct store_version v;
	struct pins *pins;
	struct policy *pol;
	int pol_from_version;
	uint8_t *abytes; /* the stored artifact, verified */
	size_t an;
	struct artifact stored;
	uint8_t *snap; /* the snapshot, verified */
	size_t sn;
	/* The version's provenance (register_provenance_get); without it,
	 * prov_foreign 1 when the store holds a record of the artifact's
	 * training that is another registration's, not this version's. */
	int has_prov, prov_foreign;
	struct register_provenance prov;
	struct rebuild_result rb;
	struct artifact rebuilt;
	int rebuilt_ok;
	int identical; /* rebuilt digest == pinned digest */
	double t_verify, t_rebuild;
	const char *error_what; /* static: what failed, for not-measured */
	/* The version's trainer kind (rebuild/rebuild.h); for an exec
	 * version stored and rebuilt are its external form
	 * (exec_artifact_open) and xrun what the rebuild ran. */
	const struct trainer_kind *kind;
	struct exec_run xrun;
	char reg_tree[41]; /* the tree the registration's run exported ("" unknown) */
};

void audit_inputs_release(struct audit_inputs *c);

/*
 * The policy in force for version v: a copy of override when given,
 * else the version's kept policy, parsed from its text and checked
 * against its kept digest.  *from_version says which.  The caller frees
 * *out (policy_free).  0; RBA_E_SCHEMA (the version has no policy and
 * none was given: the reason says how to give one); RBA_E_TAMPERED (the
 * kept text does not hash to the kept digest); the policy parser's
 * errors; RBA_E_NOMEM.
 */
int audit_inputs_policy_in_force(const struct store_version *v,
				 const struct policy *override,
				 struct policy **out, int *from_version,
				 struct rba_detail *d);

/*
 * Steps 1 and 2 of audit_version (audit.h) in txn: version, pins,
 * policy in force, stored artifact and snapshot verified and decoded,
 * provenance.
 * Errors as audit_version; c->error_what names the failing part
 * ("version", "pins", "policy", "artifact", "snapshot").
 */
int audit_inputs_load(struct store_txn *txn, const char *version,
		      const struct policy *override, struct audit_inputs *c,
		      struct rba_detail *d);

/* Step 4 and 5: rebuild with the pinned ABI, compare, decode. */
int audit_inputs_rebuild(struct audit_inputs *c, struct rba_detail *d);


#endif
