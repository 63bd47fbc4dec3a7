/*
 * integrity.h - `store check`, the store's fsck seen from the audit
 * layer: store_check (store.h) with the sample chunk layout plugged in,
 * so every case id of every chunk is looked up in the case index, plus
 * the checks of each version's pins and policy texts, and, through the
 * sink, what a layer above this one reads in each history record (the
 * consistency of an audit record: evidence_history_record_check).
 */
#ifndef RBA_INTEGRITY_H
#define RBA_INTEGRITY_H

#include "common/rba.h"
#include "store/store.h"

/* Where findings go: one call each; a nonzero return stops the check. */
struct audit_check_sink {
	int (*finding)(void *ctx, const char *db, const char *key, int err,
		       const char *reason);
	/*
	 * May be NULL.  Called for each history record (e borrowed for the
	 * call) once the history walked: 0 when the record holds, or an
	 * RBA_E_* code with d->reason, reported as a finding of database
	 * "history" under the record's id (RBA_E_NOMEM stops the check).
	 */
	int (*history_record)(void *ctx, const struct store_history_entry *e,
			      struct rba_detail *d);
	void *ctx;
};

struct audit_check_stats {
	struct store_check_stats store; /* what the walk covered */
	uint64_t findings;		/* all findings, the store's too */
};

/*
 * Checks the whole store in read transaction txn, reporting each piece
 * of damage to sink (strings borrowed for the call).  *st gets the
 * counts.  Returns 0 when the check ran to its end, whatever it found
 * (st->findings); the sink's value; RBA_E_NOMEM or the store's errors
 * when it could not check.
 */
int sample_store_check(struct store_txn *txn,
		      const struct audit_check_sink *sink,
		      struct audit_check_stats *st, struct rba_detail *d);

#endif
