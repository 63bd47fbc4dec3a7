/*
 * chain.h - what audit.c and dispute.c share: loading a version with
 * everything between its pins and its artifact, verified, and rebuilding
 * it.  Not a public header: other modules use audit.h.
 */
#ifndef RBA_CHAIN_H
#define RBA_CHAIN_H

#include "audit/audit.h"
#include "audit/register.h"
#include "common/rbatime.h"
#include "rebuild/artifact.h"
#include "rebuild/rebuild.h"

struct chain {
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
	int has_prov;
	struct register_provenance prov;
	struct rebuild_result rb;
	struct artifact rebuilt;
	int rebuilt_ok;
	int identical; /* rebuilt digest == pinned digest */
	double t_verify, t_rebuild;
	const char *error_what; /* static: what failed, for not-measured */
};

void chain_release(struct chain *c);

/*
 * Steps 1 and 2 of audit.h in txn: version, pins, policy in force,
 * stored artifact and snapshot verified and decoded, provenance.
 * Errors as audit_version; c->error_what names the failing part
 * ("version", "pins", "policy", "artifact", "snapshot").
 */
int chain_load(struct store_txn *txn, const char *version,
	       const struct policy *override, struct chain *c,
	       struct rba_detail *d);

/* Step 4 and 5: rebuild with the pinned ABI, compare, decode. */
int chain_rebuild(struct chain *c, struct rba_detail *d);

/*
 * The nearest band edge to score under p (NaN for argmax or when no
 * band has a below).
 */
double chain_nearest_edge(const struct policy *p, double score);

#endif
