/*
 * report.h - evidence a person can read: one self-contained HTML page
 * (inline CSS and SVG, no script, a Content-Security-Policy that allows
 * no request to any host) drawn from a signed evidence file, audit or
 * dispute evidence (evidence/evidence.h, evidence/dispute_evidence.h).
 * The page layout and what each picture shows are described for readers
 * in rebuild-audit(1), report; doc/design.md section 5.12 says why.
 *
 * (report_history_html draws a store's history instead, for the cron
 * user's morning page: that page is not evidence and says so.)
 *
 * Every number on the page is one the evidence states or a sum,
 * difference or count of such numbers named as one; nothing comes from
 * a store.  The page shows about six significant digits (report_priv.h,
 * REPORT_FIG_DIGITS), and each number it rounds, in the shortest form
 * that gives it back, in a table of exact values at its end; digests
 * are shortened, each in full in a table of digests.  Every string from the evidence is escaped for HTML: the
 * five markup characters as entities, and control characters, invalid
 * UTF-8 and bidirectional controls shown as visible \xHH or \u{HHHH}
 * text, so that no byte of the evidence can add markup, a request or a
 * reordering of the text around it.
 *
 * The renderer verifies nothing itself: the caller verifies the file
 * first (evidence_verify) and says what it found in struct
 * report_source.  A page of a file that was not verified carries a red
 * banner on every printed page and at the top of the screen page.
 */
#ifndef RBA_REPORT_H
#define RBA_REPORT_H

#include <stddef.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "common/sign.h"
#include "store/store.h"

struct evidence_log_summary;

/* What the caller established about the file before rendering it. */
struct report_source {
	int verified; /* 1: evidence_verify said the file holds */
	/* When not verified: why, one line ("signature: ..."), shown in the
	 * banner; NULL: "the signature was not checked". */
	const char *not_verified;
	/* The signing key's id, uppercase hex, "" when not known. */
	char key_id[SIGN_KEYID_TEXT_LEN + 1];
	/* SHA-256 of the file's bytes, "sha256:<hex>". */
	char digest[RBA_DIGEST_TEXT_LEN + 1];
	const char *file; /* the file's name as given, for the page */
	/* 1: a page made from a store (report_history_html), not from a
	 * file: the footer names the history head (digest) instead. */
	int from_store;
	/* A verified format 4 file: what verify found of its log (which
	 * signers it verified, the proof); NULL otherwise. */
	const struct evidence_log_summary *log;
};

/* The kinds of evidence report_evidence_html draws. */
enum report_kind {
	REPORT_KIND_NONE = 0,
	REPORT_KIND_AUDIT,   /* audit-evidence/v1 to v4 */
	REPORT_KIND_DISPUTE, /* dispute-evidence/v1 to v4 */
	REPORT_KIND_VARY,    /* vary-evidence/v1 */
};

/* Caps of the renderer, refused with RBA_E_LIMIT beyond. */
#define REPORT_MAX_REASONS 4096   /* contributions of a dispute drawn */
/* What a page shows of a sample, whatever its size (evidence of any
 * number of cases is drawn: EVIDENCE_MAX_BYTES bounds it): the flipped
 * and the near-threshold cases with a mark of their own in the scatter,
 * up to REPORT_MARKS_MAX of each (the others as density); the rows of
 * each table of cases, up to REPORT_ROWS_MAX (the others counted, and
 * in the signed file). */
#define REPORT_MARKS_MAX 2000
#define REPORT_ROWS_MAX 200

/*
 * Appends to out the HTML page of the evidence statement at msg (n
 * bytes: the evidence file), as src describes it, and sets *kind (may
 * be NULL) to what it drew.
 *
 * Returns 0; RBA_E_SYNTAX (not JSON: d->col the byte offset + 1);
 * RBA_E_SCHEMA (JSON that is not rebuild-audit evidence of a kind and
 * version this renderer knows, or a member it draws missing or of the
 * wrong type: d->key the JSON path, d->reason what is wrong);
 * RBA_E_LIMIT (over EVIDENCE_MAX_BYTES, nested too deeply, or over a
 * cap above); RBA_E_NOMEM.  On error out may hold part of a page: the
 * caller discards it.
 */
int report_evidence_html(const void *msg, size_t n,
			 const struct report_source *src, struct rba_buf *out,
			 enum report_kind *kind, struct rba_detail *d);

/* ---- the history of a store -------------------------------------------- */

/* A gap in a version's schedule: an interval between two consecutive
 * scheduled (not ad hoc) audits longer than this many times the median
 * of its intervals (judged only with three audits or more). */
#define REPORT_GAP_FACTOR 1.5
#define REPORT_MAX_GAPS 32 /* gaps listed one by one; the rest counted */
#define REPORT_GUARANTEE_MAX 4096

/* One audit record of the history, as the history page reads it. */
struct report_audit {
	uint64_t id;
	int64_t time;
	char version[STORE_VERSION_NAME_MAX + 1];
	char verdict[24];
	int ad_hoc;
	char declared_at[32]; /* "" when the record does not say */
	double tolerance;     /* the judging policy's max_score_delta; NaN */
	double flips;
};

/* What a run of audits supports. */
struct report_summary {
	size_t scheduled, ad_hoc, failures, ngaps;
	int64_t first, last;	/* the earliest and latest scheduled audit */
	int has_median;
	double median;		/* seconds between scheduled audits */
	int64_t gap_from[REPORT_MAX_GAPS], gap_to[REPORT_MAX_GAPS];
	int64_t overdue; /* seconds since the last, when a gap by now; 0 */
	char guarantee[REPORT_GUARANTEE_MAX]; /* the sentence, with its period */
};

/*
 * The guarantee audits a[0..n) (in any order: they are taken in the
 * order of their times, the chain's within one second, so that records
 * appended out of time order, as a fleet's import can, neither shorten
 * the period nor move a failure) support, in words, with their failures
 * and gaps: the scheduled ones (ad hoc ones counted apart) between the
 * earliest and the latest; every one bit-identical, or
 * every decision reproduced and every score within the tolerance
 * declared on DATE (the weakest verdict of the period decides); with a
 * failure (not-reproducible, not-measured, or any other verdict), no
 * guarantee for the period, the failures named, and the guarantee of
 * the audits since the last failure; then every gap in the schedule,
 * and, when now (0: not known) is more than REPORT_GAP_FACTOR median
 * intervals after the last scheduled audit, that none came since.
 * what (" of version V") goes after "scheduled rebuilds".  Never fails
 * (out of memory: a sentence saying so).
 */
void report_history_summarize(const struct report_audit *a, size_t n,
			      const char *what, int64_t now,
			      struct report_summary *s);

/*
 * Appends the HTML page of store s's audit history (every audit record,
 * a row per version, a mark per audit; the guarantee per version and
 * for the store), read in one read transaction after the whole chain is
 * verified.  now: the time the page says it was made.  0; RBA_E_TAMPERED
 * and the store's errors (store_history_verify); RBA_E_NOMEM.
 */
struct store;
int report_history_html(struct store *s, int64_t now, struct rba_buf *out,
			struct rba_detail *d);

#endif
