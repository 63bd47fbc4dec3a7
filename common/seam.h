/*
 * seam.h - the places where a test may step into the library.
 *
 * As git keeps its test helpers in t/helper, the library reads no test
 * variable from the environment: the release binary leaves every seam
 * empty (zero), and only the test binary build/rebuild-audit-test,
 * linked with tests/helper/seams.c, fills them from its environment
 * before main runs.  The unit runner sets them directly.
 */
#ifndef RBA_SEAM_H
#define RBA_SEAM_H

struct rba_seams {
	/*
	 * audit: with a path here, an audit that has its verdict creates
	 * PATH.held and waits (at most two minutes) for PATH to appear
	 * before it records, so that a test can change the store between
	 * the two deterministically.
	 */
	const char *hold_record;
	/*
	 * evidence export: pause this many milliseconds (1 to 1000; 0:
	 * none) between the steps of writing the signed pair, so that a
	 * test can kill the export between two of them.
	 */
	long evidence_pause_ms;
	/* SHA-256 through libsodium even where the CPU has SHA extensions. */
	int sha256_portable;
	/*
	 * store_sample_stream_indexed (an audit's pass): the case index
	 * walked after the stream, on the stream's own read, as when a
	 * write lands between the two reads (the walk beside the stream is
	 * then refused).
	 */
	int walk_after;
};

/* Zero in the release binary. */
extern struct rba_seams rba_seams;

#endif
