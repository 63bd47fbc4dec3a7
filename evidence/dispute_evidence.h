/*
 * dispute_evidence.h - signed evidence of one answered dispute.
 *
 * The statement an answered dispute is exported as, its trusted comment,
 * and the check `verify` applies to one (the signature is checked by
 * common/sign.h before any of this).
 */
#ifndef RBA_DISPUTE_EVIDENCE_H
#define RBA_DISPUTE_EVIDENCE_H

#include <stddef.h>

#include "audit/dispute.h"
#include "common/buf.h"
#include "common/rba.h"
#include "common/sign.h"

/* v2 (the dispute report v2, audit/dispute.h): the policy's text, the
 * answer's exactness, the reasons' accuracy, bound and count asked for;
 * v1 is still read and checked as far as it can be. */
#define DISPUTE_PREDICATE_TYPE "https://rebuild-audit.dev/dispute-evidence/v2"
#define DISPUTE_PREDICATE_TYPE_V1 "https://rebuild-audit.dev/dispute-evidence/v1"
/* v2 and the policy's reason statements (DISPUTE_SCHEMA_V3): written for
 * an answer under a policy with statements, v2 otherwise. */
#define DISPUTE_PREDICATE_TYPE_V3 "https://rebuild-audit.dev/dispute-evidence/v3"
/* v2 or v3 and the levels unseen in training (DISPUTE_SCHEMA_V4): written
 * for an answer whose reasons name one, v2 or v3 otherwise. */
#define DISPUTE_PREDICATE_TYPE_V4 "https://rebuild-audit.dev/dispute-evidence/v4"
#define DISPUTE_PREDICATE_PREFIX "https://rebuild-audit.dev/dispute-evidence/"
#define DISPUTE_COMMENT_PREFIX "rebuild-audit dispute evidence: "

/*
 * The in-toto Statement v1 of one answered dispute
 * (rebuild-audit-evidence(5), DISPUTE EVIDENCE): subject the artifact
 * that made the decision ("<version>.artifact"), predicateType
 * DISPUTE_PREDICATE_TYPE (_V3, _V4 as dispute_report_format says),
 * predicate the dispute report with the case's inputs
 * (dispute_report_json) plus the history head when answered;
 * fixtures/evidence/dispute-v2.schema.json (-v3, -v4) is its JSON
 * schema, so a member added here goes there too.  Appends to out (allocation failure:
 * rba_buf_status).
 */
void dispute_evidence_render(const struct dispute_report *r, struct rba_buf *out);

/* The trusted comment: "rebuild-audit dispute evidence: version V case C
 * answer stands|escalate" into out.  0 or RBA_E_LIMIT. */
int dispute_evidence_comment(const struct dispute_report *r, char *out,
			     size_t outlen);

/*
 * Checks a dispute evidence file whose signature holds: *is_dispute 0
 * (and 0 returned) when its predicateType is not DISPUTE_PREDICATE_PREFIX
 * and the trusted comment does not claim one.  Else, in order: the
 * statement's shape (v1 or v2, each with its own closed member lists),
 * the subject is the decisions' artifact, the answer line agrees with
 * the decisions and the standing, an answer that stands has its reasons
 * (computed, passing their checks), the reasons add up (baseline +
 * contributions = sum = margin within the stated tolerance, which must
 * be EXPLAIN_TOLERANCE; the score check within DISPUTE_SCORE_TOLERANCE),
 * the principal reasons are contributions, in order and pushing toward
 * the decision; v1: no Shapley values over more players than the exact
 * method takes (such a file holds estimates without a bound); v2: the
 * reasons' accuracy, bound and draws agree with each other, with the
 * answer's exactness and its line, the principal reasons are exactly
 * the ones the contributions and the count asked for give, and the
 * policy's text is the one of its digest and parses; v3: each
 * statement is the policy's; v4: as v2 or v3 (statements exactly when
 * the policy has some) and the unseen levels are contributions' columns
 * and values, in order, once, with counts a forest's paths can give
 * (rebuild-audit-evidence(5)); and the trusted comment names the same
 * version, case and answer (tc NULL: no trusted comment, the statement
 * signed as a whole, as in a DSSE envelope).  0; RBA_E_SCHEMA
 * (d->reason says what disagrees); RBA_E_NEWER (a later version of the
 * predicate); RBA_E_NOMEM.  version, case_id and answer (each may be
 * NULL, 256 bytes) get what it says.
 */
int dispute_evidence_check(const void *p, size_t n, const char *trusted_comment,
			   int *is_dispute, char *version, char *case_id,
			   char *answer, struct rba_detail *d);

/*
 * Checks dispute evidence p (n bytes) that dispute_evidence_check
 * accepted against art (an bytes), the artifact its reasons came from:
 * its digest is the explanation's artifact, it decodes, the case's
 * inputs encode with it, and its levels unseen in training are exactly
 * the ones the evidence names (v4, "unseen": a native column's value
 * none of the artifact's levels), each with the splits and trees its
 * path met, walked again (dispute_unseen_paths); no such level and no
 * "unseen" (v2, v3) agree too.  0; RBA_E_SCHEMA (the evidence and the
 * artifact disagree: d->reason says how); RBA_E_USAGE (art is another
 * artifact); RBA_E_NOTFOUND (the evidence has no reasons, so nothing to
 * check them against); the errors of artifact_decode (d saying what is
 * wrong with the artifact); RBA_E_NOMEM.
 */
int dispute_evidence_check_artifact(const void *p, size_t n, const void *art,
				    size_t an, struct rba_detail *d);

/*
 * What verify could not check in a dispute evidence file that
 * dispute_evidence_check accepted, in words ("the decisions against
 * their scores: ..."), or NULL when it checked everything it describes;
 * artifact_checked: dispute_evidence_check_artifact accepted it too.
 * Static.
 */
const char *dispute_evidence_unchecked(const void *p, size_t n,
				       int artifact_checked);

/*
 * The signed evidence of answered dispute r, put in place: rendered
 * (dispute_evidence_render), checked as verify will check it
 * (dispute_evidence_check: what verify would reject is never signed),
 * signed with key under the trusted comment of dispute_evidence_comment
 * (common/sign.h), and written with its signature to path and
 * path.minisig (evidence_write without force: neither may exist, and
 * on error nothing is left under either name).  key is borrowed.
 * 0; RBA_E_LIMIT (the version and case do not fit in a trusted
 * comment); RBA_E_NOMEM; the errors of dispute_evidence_check,
 * sign_file_sign and evidence_write, d saying what failed.
 */
int dispute_evidence_export(const struct dispute_report *r,
			    const struct sign_seckey *key, const char *path,
			    struct rba_detail *d);

#endif
