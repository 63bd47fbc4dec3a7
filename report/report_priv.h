/*
 * report_priv.h - what the report's files share; not a public header.
 *
 *   report_html.c     escaping, numbers, the page frame (CSP, CSS, the
 *                     print footer and banner), the member reader, SVG
 *                     helpers, the notes (exact values, digests),
 *                     report_evidence_html
 *   report_audit.c    the page of audit evidence (report_view.h: what it
 *                     shares with report_plot.c, its pictures)
 *   report_dispute.c  the page of dispute evidence
 *   report_vary.c     the page of a variation report
 *   report_history.c  the page of a store's history
 */
#ifndef RBA_REPORT_PRIV_H
#define RBA_REPORT_PRIV_H

#include <stddef.h>

#include "report/report.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/rba.h"

/* ---- the member reader ---------------------------------------------------
 * The page reads the statement through common/json.h's path reader
 * (struct rba_json_rd, rd.json below).  Members are named by dotted
 * paths from the statement's root ("predicate.results.flips").  A
 * required member that is missing or of the wrong type fails the reader:
 * the first such path and what was wanted are kept, later reads return
 * NULL or 0 and the page is refused (RBA_E_SCHEMA, "member 'PATH'
 * missing or not WANT") at the end.  rd_want is the page's shorthand for
 * a want and its null rule. */
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

/* ---- the notes ------------------------------------------------------------
 * What the page shortens it keeps for its last two sections: every
 * digest it shows shortened ("sha256:7d896d8fb777..." with a mark D1),
 * in full; every number it rounds (to REPORT_FIG_DIGITS significant
 * digits), exactly as the evidence states it, named by its member; and
 * the exact scores of the cases its tables list. */
struct report_exact {
	char what[128]; /* the member, or what the page computed */
	double v;
};
struct report_case_exact {
	const struct rba_json_value *id;
	double stored, rebuilt;
};
struct report_notes {
	char (*dg)[RBA_DIGEST_TEXT_LEN + 1];
	size_t ndg, capdg;
	struct report_exact *ex;
	size_t nex, capex;
	struct report_case_exact *cs;
	size_t ncs, capcs;
	int nomem; /* a note could not be kept: the page fails RBA_E_NOMEM */
};

void report_notes_release(struct report_notes *n);

struct rd {
	struct rba_json_rd json; /* the reader; json.err: a member failed */
	struct report_notes notes; /* the page's, kept as it is drawn */
};

/* The member at path below v (v NULL: the root), or NULL:
 * rba_json_rd_at with want's type and null rule, quietly unless
 * required (a missing or mistyped member fails the reader). */
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
 * NaN "null", as the evidence writes it (for attributes; the page's
 * text shows html_val's form). */
void html_num(struct rba_buf *b, double v);
/* A count (a number the evidence states as an integer): the integer,
 * else (an unverified file) as html_fig. */
void html_count(struct rba_buf *b, double v);

/* ---- numbers as the page shows them --------------------------------------
 * About six significant digits: REPORT_FIG_DIGITS, in %g's form; an
 * integer below 1e15 whole.  A number shown beside a reference it is
 * compared with (a score beside a band edge, a delta beside the
 * tolerance) gets up to REPORT_FIG_DIGITS_MAX digits so that it is on
 * the reference's side it is on, never equal to it when it is not. */
#define REPORT_FIG_DIGITS 6
#define REPORT_FIG_DIGITS_MAX 8
#define REPORT_FIG_MAX 40
void num_fig(double v, char out[REPORT_FIG_MAX]);
void num_fig_side(double v, double ref, char out[REPORT_FIG_MAX]);
/* v as num_fig gives it (ticks, bins: numbers of the page's own). */
void html_fig(struct rba_buf *b, double v);
/* v as num_fig gives it, and, when that is not v's shortest form, v
 * kept in the exact-values table under what (the evidence member, or
 * what the page computed).  html_val_side: as num_fig_side with ref. */
void html_val(struct report_notes *n, struct rba_buf *b, const char *what,
	      double v);
void html_val_side(struct report_notes *n, struct rba_buf *b, const char *what,
		   double v, double ref);
/* Keeps v under what for the exact-values table when shown as text
 * (shown); for text made elsewhere (titles, SVG labels). */
void notes_exact(struct report_notes *n, const char *what, double v,
		 const char *shown);
/* Keeps a listed case's exact scores for the table of them. */
void notes_case(struct report_notes *n, const struct rba_json_value *id,
		double stored, double rebuilt);

/* ---- digests and prose -------------------------------------------------- */

/* Whether the n bytes at s are a digest, "sha256:" and 64 hex digits. */
int is_digest(const char *s, size_t n);
/* The n bytes at s: a digest shortened ("sha256:" and 12 hex digits,
 * an ellipsis, the mark of its row in the table of digests), anything
 * else as html_text. */
void html_dg(struct report_notes *n, struct rba_buf *b, const char *s, size_t len);
/* A parsed string value as html_dg (NULL or not a string: "null"). */
void html_sv_dg(struct report_notes *n, struct rba_buf *b,
		const struct rba_json_value *v);
/* A sentence from the evidence (a guarantee, a reason): escaped as
 * html_text, each digest in it shortened as html_dg, and each number
 * written with more than REPORT_FIG_DIGITS_MAX significant digits
 * shown as num_fig gives it, its value kept in the exact-values table
 * under "in <where>: <the figure shown>". */
void html_prose(struct report_notes *n, struct rba_buf *b, const char *s,
		size_t len, const char *where);
void html_sv_prose(struct report_notes *n, struct rba_buf *b,
		   const struct rba_json_value *v, const char *where);
/* The last sections: the digests in full, the exact values. */
void html_notes_sections(struct report_notes *n, struct rba_buf *b);

/* Opens the page: doctype, head (CSP, title, CSS with the print rules:
 * the footer of src in the bottom margin boxes, the kind of page in the
 * top ones, so that a browser prints no header or footer of its own),
 * body, the banner when not verified.  title is the page's title in
 * plain text (escaped). */
void html_page_open(struct rba_buf *b, const struct report_source *src,
		    const char *kind_name, const char *title);
/* The screen footer and the end of the page. */
void html_page_close(struct rba_buf *b, const struct report_source *src);

/* ---- SVG --------------------------------------------------------------- */

/* A coordinate or length in SVG user units, two decimals. */
void svg_n(struct rba_buf *b, double v);
/* The width of text s (n bytes of UTF-8) at font size size, a little
 * over what DejaVu Sans needs (0.64 em a character, its digits'
 * width). */
double svg_text_width(const char *s, size_t n, double size);
/*
 * A label: text s (n bytes, escaped) at font size size, anchored at x
 * as anchor says ("start", "middle", "end"), moved so that it lies
 * between xmin and xmax; cut with an ellipsis when even then it does
 * not fit.  cls: a class or NULL; bold: font-weight bold.  Returns the
 * left edge it took (its right edge in *right, may be NULL).
 */
double svg_label(struct rba_buf *b, double x, double y, const char *anchor,
		 double size, const char *s, size_t n, double xmin, double xmax,
		 const char *cls, int bold, double *right);
/* Nice ticks for [lo, hi]: about want steps of 1, 2 or 5 times a power
 * of ten; the step, and the first tick (*first, at or above lo). */
double nice_step(double lo, double hi, int want, double *first);

/* ---- tables ------------------------------------------------------------ */

/* Opens a table with a header row that repeats on every printed page
 * (thead), its headers |-separated in cols ("case|stored score"), and
 * its body; id: the table's id or NULL.  table_close closes both. */
void table_open(struct rba_buf *b, const char *id, const char *cols);
void table_close(struct rba_buf *b);

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
