/*
 * declared.h - the tolerance declared before a sample judges it
 * (doc/design.md section 8, "declared before").
 *
 * A policy is declared for a version when it is registered with one,
 * when `policy set` keeps one, and with a sample added under --policy.
 * A policy a sample may need after the version holds another (the one
 * `policy set` replaces, one given to `sample add` with --policy) has
 * its exact text kept in the store as a blob of kind STORE_BLOB_OTHER
 * named DECLARED_POLICY_BLOB (its digest is the policy's); the version's
 * own policy is in its record.  `policy set`
 * appends a DECLARED_RECORD_SCHEMA record to the history:
 *
 *   {"schema": "rebuild-audit/policy-set/v1", "event": "set",
 *    "version": V, "time": UTC, "policy": digest,
 *    "previous": digest | null, "stricter": true | false | null,
 *    "looser_in": text | null}
 *
 * "stricter" says whether the new policy is at least as strict as the
 * previous one in every term (null when there was none), "looser_in"
 * the first term where it is not.
 *
 * The rule an audit applies (declared_judge): the version's policy
 * judges the sample when it is the policy the sample was added under,
 * when it was declared before the sample was added, or when it is at
 * least as strict in every term as the sample's (policy_as_strict).
 * Otherwise the sample's own policy judges it: a policy loosened after
 * the fact judges only samples added after it.  When the sample's
 * policy cannot be read back, the audit cannot check and says so.
 */
#ifndef RBA_DECLARED_H
#define RBA_DECLARED_H

#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "store/store.h"

#define DECLARED_RECORD_SCHEMA "rebuild-audit/policy-set/v1"
#define DECLARED_POLICY_BLOB "policy"

/*
 * Keeps pol's exact text in txn (a write transaction) under its digest;
 * a text kept before is left as it is.  0 or store_blob_put's errors.
 */
int declared_policy_keep(struct store_txn *txn, const struct policy *pol,
			 struct rba_detail *d);

/*
 * The policy of digest, read back from the texts kept in txn (or from
 * v's own policy when it is that one), parsed and checked against the
 * digest.  *out is the caller's (policy_free).  0; RBA_E_NOTFOUND (no
 * text of it is kept: a sample added before texts were kept, under a
 * policy since replaced); the parser's errors; RBA_E_TAMPERED; the
 * store's errors.
 */
int declared_policy_load(struct store_txn *txn, const struct store_version *v,
			 const struct rba_digest *digest, struct policy **out,
			 struct rba_detail *d);

/*
 * When the version's policy (v->policy_digest) was declared: the time
 * of the newest `policy set` record of v with that digest, else (it
 * came with the registration) v->registered_at.  0 or the store's
 * errors.
 */
int declared_policy_time(struct store_txn *txn, const struct store_version *v,
			 int64_t *when, struct rba_detail *d);

/* What judges a sample, and why (declared_judge). */
struct declared_judgement {
	struct policy *pol;   /* the policy that judges (owned) */
	int64_t declared_at;  /* when it was declared for the sample */
	int own;	      /* 1: the sample's own policy, the version's
			       * being looser and set after it */
	char looser_in[160];  /* with own: the term the version's loosens */
};

void declared_judgement_release(struct declared_judgement *j);

/*
 * Applies the rule above to the version v (its policy parsed as vpol,
 * borrowed) and its sample (info).  On success j->pol is a copy of the
 * policy that judges.  0; RBA_E_NOTFOUND when the sample's own policy
 * would judge but no text of it is kept (d says so: the audit cannot
 * check that the tolerance was declared before the sample);
 * declared_policy_load's other errors; RBA_E_NOMEM.
 */
int declared_judge(struct store_txn *txn, const struct store_version *v,
		   const struct policy *vpol,
		   const struct store_sample_info *info,
		   struct declared_judgement *j, struct rba_detail *d);

/* What `policy set` did. */
struct declared_set_result {
	int had_previous;
	struct rba_digest previous;
	int stricter;		 /* with had_previous */
	char looser_in[160];	 /* with !stricter */
	int sample_other_policy; /* the sample's decisions used another */
	struct rba_digest sample_policy;
	/* With sample_other_policy: the new policy is looser than the
	 * sample's in sample_looser_in, so the sample stays judged by its
	 * own (sample_keeps_own); or no text of the sample's is kept
	 * (sample_unknown), so audits cannot judge it. */
	int sample_keeps_own, sample_unknown;
	char sample_looser_in[160];
	uint64_t history_id;
};

/*
 * `policy set`: keeps pol as version's policy in one write transaction
 * on s: its text (declared_policy_keep), the version record, and a
 * DECLARED_RECORD_SCHEMA record in the history at time t.  0;
 * RBA_E_NOTFOUND (no such version; d says so); the store's errors.
 */
int declared_policy_set(struct store *s, const char *version,
			const struct policy *pol, int64_t t,
			struct declared_set_result *out, struct rba_detail *d);

#endif
