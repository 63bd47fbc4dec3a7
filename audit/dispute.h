/*
 * dispute.h - answering a disputed decision (DESIGN 8): one case of a
 * version, rebuilt and scored again, with the version's standing.
 */
#ifndef RBA_DISPUTE_H
#define RBA_DISPUTE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "store/store.h"

enum dispute_answer { DISPUTE_STANDS = 0, DISPUTE_ESCALATE = 1 };

struct dispute_report {
	char *version, *case_id;
	int answer;	 /* enum dispute_answer (when measured) */
	char *answer_line; /* "the disputed decline stands", "escalate: ..." */
	char **reasons;	 /* the escalation reasons */
	size_t nreasons;
	/* the case */
	uint32_t ncols;
	char **names, **values; /* its inputs, exact text */
	int scored_by;
	double stored_score, rebuilt_score;
	uint32_t nclasses;
	char **classes;
	double *stored_probs;  /* nstored (scored by the model), or NULL */
	uint32_t nstored;
	double *rebuilt_probs; /* nclasses, or NULL (not scored) */
	char *stored_decision, *rebuilt_decision;
	double margin, rebuilt_margin, edge; /* edge NaN when none */
	/* the version */
	int verdict;	 /* what the version's standing rests on */
	char *verdict_basis; /* "rebuilt artifact is bit-identical", "audit
			      * record 12 of <time>", ... */
	int has_audit;
	uint64_t audit_id;
	struct rba_digest artifact_pinned, artifact_rebuilt, policy_digest,
		sample_digest;
	/* The artifact that made the stored decisions (the version's when
	 * the sample was added). */
	struct rba_digest artifact_decisions;
	/* The stored decision is not what the policy in force gives the
	 * stored score (a warning, NULL when they agree). */
	char *contradiction;
	int has_sample_policy;
	struct rba_digest sample_policy;
	double t_verify, t_rebuild, t_lookup, t_total;
};

void dispute_report_release(struct dispute_report *r);

/*
 * Answers a disputed decision on case_id of version: reads the one
 * chunk holding the case, rebuilds the version (verifying artifact and
 * snapshot first), scores the case with the rebuilt model and decides
 * it under the policy in force.  The version's standing: bit-identical
 * when the rebuilt digest is the pinned one; otherwise the newest audit
 * record of this version for the same rebuilt artifact, policy and
 * sample, if any; without one, bit-identical only when the rebuilt
 * artifact is also the one that made the sample's stored decisions.  The answer stands when the version reproduces and
 * the case's rebuilt decision is its stored one; otherwise it escalates
 * with every reason.  0 with r filled; errors as audit_version
 * (RBA_E_NOTFOUND also for an unknown case, d->key the id).
 */
int audit_dispute(struct store *s, const char *version, const char *case_id,
		  const struct policy *override, struct dispute_report *r,
		  struct rba_detail *d);

/*
 * The JSON of a dispute report (rebuild-audit-report(5), DISPUTES);
 * with_inputs adds the case's inputs.
 */
void dispute_report_json(const struct dispute_report *r, int with_inputs,
			 struct rba_buf *out);

#endif
