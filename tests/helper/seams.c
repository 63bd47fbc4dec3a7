/*
 * seams.c - fills the library's test seams (common/seam.h) from the
 * environment, before main runs.  Linked into build/rebuild-audit-test
 * only: the release binary has no test variable.
 *
 *   REBUILD_AUDIT_TEST_HOLD_RECORD=PATH   audit waits for PATH before
 *                                         it records (PATH.held first)
 *   REBUILD_AUDIT_TEST_EVIDENCE_PAUSE_MS=N export pauses N ms (1-1000)
 *                                         between the steps of a write
 *   REBUILD_AUDIT_TEST_SHA256=portable    SHA-256 through libsodium
 *   REBUILD_AUDIT_TEST_WALK=after         audit walks the case index
 *                                         after the pass, not beside it
 */
#include <stdlib.h>
#include <string.h>

#include "common/seam.h"

static void fill(void) __attribute__((constructor));

static void
fill(void)
{
	const char *v;
	char *end;
	long ms;

	v = getenv("REBUILD_AUDIT_TEST_HOLD_RECORD");
	if (v != NULL && *v != '\0')
		rba_seams.hold_record = v;
	v = getenv("REBUILD_AUDIT_TEST_EVIDENCE_PAUSE_MS");
	if (v != NULL && *v != '\0') {
		ms = strtol(v, &end, 10);
		if (*end == '\0' && ms >= 1 && ms <= 1000)
			rba_seams.evidence_pause_ms = ms;
	}
	v = getenv("REBUILD_AUDIT_TEST_SHA256");
	rba_seams.sha256_portable = v != NULL && strcmp(v, "portable") == 0;
	v = getenv("REBUILD_AUDIT_TEST_WALK");
	rba_seams.walk_after = v != NULL && strcmp(v, "after") == 0;
}
