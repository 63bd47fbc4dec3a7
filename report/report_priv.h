/*
 * report_priv.h - what the report's files share; not a public header.
 *
 *   report_html.c     escaping, numbers, the page frame (CSP, CSS, the
 *                     print footer and banner), the member reader, SVG
 *                     helpers, report_evidence_html
 *   report_audit.c    the page of audit evidence
 *   report_dispute.c  the page of dispute evidence
 *   report_vary.c     the page of a variation report
 */
#ifndef RBA_REPORT_PRIV_H
#define RBA_REPORT_PRIV_H

#include <stddef.h>

#include "report/report.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/rba.h"

/* ---- the member reader ---------------------------------------------------
 * Members are named by dotted paths from the statement's root
 * ("predicate.results.flips").  A required member that is missing or of
 * the wrong type makes the reader bad: the first such path and what was
 * wanted are kept, later reads return NULL or 0 and the page is refused
 * (RBA_E_SCHEMA) at the end. */
enum rd_want {
	RD_ANY = 0,
	RD_STR,
	RD_NUM,	 /* a number */
	RD_NUMN, /* a number or null (NaN) */
	RD_BOOL,
	RD_ARR,
	RD_OBJ,
	RD_STRN, /* a string or null */
};

struct rd {
	const struct rba_json_value *root;
	int bad;
	char path[128];
	const char *want;
};

/* The member at path below v (v NULL: the root), or NULL.  required:
 * a missing or mistyped member makes r bad. */
const struct rba_json_value *rd_at(struct rd *r, const struct rba_json_value *v,
				   const char *path, enum rd_want want,
				   int required);
/* Required shortcuts: the string (NUL-terminated; "" once bad), the
 * number (NaN for null or once bad), the boolean (0 once bad). */
const struct rba_json_value *rd_str(struct rd *r, const struct rba_json_value *v,
				    const char *path);
double rd_num(struct rd *r, const struct rba_json_value *v, const char *path);
int rd_bool(struct rd *r, const struct rba_json_value *v, const char *path);
/* An optional string member: NULL when absent, null or not a string. */
const struct rba_json_value *rd_opt_str(const struct rba_json_value *v,
					const char *path, struct rd *r);

/* ---- HTML -------------------------------------------------------------- */

/* The n bytes at s as HTML text (the escaping of report.h). */
void html_text(struct rba_buf *b, const char *s, size_t n);
/* A parsed string value (NULL, or not a string: "null"). */
void html_sv(struct rba_buf *b, const struct rba_json_value *v);
/* A NUL-terminated C string of this tool's own, escaped all the same. */
void html_c(struct rba_buf *b, const char *s);
/* v in the shortest form that gives it back (rba_json_fmt_double);
 * NaN "null", as the evidence writes it. */
void html_num(struct rba_buf *b, double v);
/* A count (a number the evidence states as an integer). */
void html_count(struct rba_buf *b, double v);

/* Opens the page: doctype, head (CSP, title, CSS with the print rules
 * and footer of src), body, the banner when not verified and the
 * header block.  title is the page's title in plain text (escaped). */
void html_page_open(struct rba_buf *b, const struct report_source *src,
		    const char *kind_name, const char *title);
/* The screen footer and the end of the page. */
void html_page_close(struct rba_buf *b, const struct report_source *src);

/* ---- SVG --------------------------------------------------------------- */

/* A coordinate or length in SVG user units, two decimals. */
void svg_n(struct rba_buf *b, double v);

/* ---- pages ------------------------------------------------------------- */

int report_audit_page(struct rd *r, const struct report_source *src,
		      struct rba_buf *b, struct rba_detail *d);
int report_dispute_page(struct rd *r, const struct report_source *src,
			struct rba_buf *b, struct rba_detail *d);
/* The transparency log section of a format 4 audit page (report_log.c):
 * nothing for a file without predicate.log. */
void report_log_section(struct rd *r, const struct report_source *src,
			struct rba_buf *b);

/* The band edges of a policy text (sorted ascending, at most cap), or
 * -1 when the text does not parse, with *argmax set for an argmax
 * policy (no edges).  Band names go to names[i] (the band below edge
 * i, the last one the band above every edge; cap + 1 entries, each
 * borrowed from *pol_out, which the caller frees with policy_free). */
struct policy;
int report_policy_edges(const char *text, size_t n, double *edges, size_t cap,
			const char **names, int *argmax, struct policy **pol_out);

/* The page of a variation report (report_vary.c). */
int report_vary_page(struct rd *r, const struct report_source *src,
		     struct rba_buf *b, struct rba_detail *d);

#endif
