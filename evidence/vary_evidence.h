/*
 * vary_evidence.h - a variation report (audit/vary.h) as signed
 * evidence: the statement, its trusted comment, its export and the
 * offline check `verify` makes (rebuild-audit-evidence(5), VARIATION
 * EVIDENCE).
 *
 * The statement (in-toto Statement v1):
 *   _type          https://in-toto.io/Statement/v1
 *   subject        [{name "<version>.artifact", digest {sha256 the pinned
 *                  artifact}}]
 *   predicateType  VARY_PREDICATE_TYPE
 *   predicate      {"run": the run record's id, "report": the kept
 *                  report (VARY_SCHEMA) as it is stored}
 * The trusted comment: "rebuild-audit vary evidence: version V factors
 * N changed K" (N the runs, K those whose state is changes or fails).
 */
#ifndef RBA_VARY_EVIDENCE_H
#define RBA_VARY_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "common/rba.h"
#include "common/sign.h"
#include "store/store.h"

#define VARY_PREDICATE_TYPE "https://rebuild-audit.dev/vary-evidence/v1"
#define VARY_PREDICATE_PREFIX "https://rebuild-audit.dev/vary-evidence/"
#define VARY_COMMENT_PREFIX "rebuild-audit vary evidence: "
#define VARY_EVIDENCE_LIST_MAX 512 /* bytes of the changed factors' names */

/* What a variation evidence file says, once it holds. */
struct vary_evidence_summary {
	char version[STORE_VERSION_NAME_MAX + 1];
	char run[STORE_RUN_ID_MAX + 1];
	char time[40];
	uint64_t factors, changed, cases;
	int control_pinned;
	char changed_list[VARY_EVIDENCE_LIST_MAX]; /* "timezone, hostname" */
};

/*
 * Signs the variation report run_id (NULL: the newest "vary/<version>@"
 * run of version) in store st and writes it with its signature to path
 * and path.minisig (evidence_write: with force an existing pair is
 * replaced, never a link), after checking it as verify will.  out
 * (may be NULL) gets what it says.  0; RBA_E_NOTFOUND (no such report,
 * or none for version: the reason says to run vary); the errors of
 * vary_evidence_check, sign_file_sign and evidence_write.
 */
int vary_evidence_export(struct store *st, const char *version,
			 const char *run_id, const struct sign_seckey *key,
			 const char *path, int force,
			 struct vary_evidence_summary *out, struct rba_detail *d);

/*
 * Checks a file whose signature holds: *is_vary 0 (and 0 returned) when
 * its predicateType is not VARY_PREDICATE_PREFIX and the trusted
 * comment does not claim one.  Else the statement's closed shape, the
 * subject is the report's pinned artifact, every factor's state agrees
 * with its digests (same: the control's; changes: another; fails and
 * not-tried: none), the control's "pinned" with the digests, effects
 * only for a changed artifact (flips at most the sample's cases, a
 * score difference in [0, 1]), and the trusted comment names the same
 * version and counts (tc NULL: no trusted comment, the statement signed
 * as a whole, as in a DSSE envelope).  0 (*out filled); RBA_E_SCHEMA (d->reason says
 * what disagrees); RBA_E_NEWER (a later version); RBA_E_NOMEM.
 */
int vary_evidence_check(const void *p, size_t n, const char *trusted_comment,
			int *is_vary, struct vary_evidence_summary *out,
			struct rba_detail *d);

#endif
