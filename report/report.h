/*
 * report.h - evidence a person can read: one self-contained HTML page
 * (inline CSS and SVG, no script, a Content-Security-Policy that allows
 * no request to any host) drawn from a signed evidence file, audit or
 * dispute evidence (evidence/evidence.h, evidence/dispute_evidence.h).
 * The page layout and what each picture shows are described for readers
 * in rebuild-audit(1), report; doc/design.md section 5.11 says why.
 *
 * Every number on the page is one the evidence states (written in
 * rba_json_fmt_double's shortest form, as the evidence writes it) or a
 * sum, difference or count of such numbers named as one; nothing comes
 * from a store.  Every string from the evidence is escaped for HTML: the
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
};

/* The kinds of evidence report_evidence_html draws. */
enum report_kind {
	REPORT_KIND_NONE = 0,
	REPORT_KIND_AUDIT,   /* audit-evidence/v1, v2 */
	REPORT_KIND_DISPUTE, /* dispute-evidence/v1, v2 */
};

/* Caps of the renderer, each refused with RBA_E_LIMIT beyond. */
#define REPORT_MAX_CASES 100000   /* flipped cases drawn */
#define REPORT_MAX_REASONS 4096   /* contributions of a dispute drawn */

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

#endif
