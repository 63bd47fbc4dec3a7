/*
 * report_dispute.c - the page of dispute evidence: the answer in one
 * sentence as its title; a summary box (the answer, marked so that
 * "stands" and "escalate" differ in black and white, the standing it
 * rests on, the case's scores, who signed, when); the principal
 * reasons; the case's score on the band scale with the edges; the
 * reasons as a waterfall from the baseline to the case's log-odds with
 * the check that they add up; which artifact decided and which audit
 * record the answer relies on; the case's inputs (the model's apart
 * from the other columns of the stored case); the digests and exact
 * values the page shortened.
 *
 * Bars that push the log-odds up are filled, bars that push it down are
 * open, so a black and white print keeps the direction; each bar is
 * labelled with its column, value and contribution as the evidence
 * states them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_priv.h"
#include "audit/dispute.h"
#include "policy/policy.h"

#define MAX_EDGES 64
#define WF_ROWS 40 /* contributions drawn one by one; the rest summed */

static void
svg_line(struct rba_buf *b, double x1, double y1, double x2, double y2,
	 const char *attrs)
{
	rba_buf_printf(b, "<line x1=\"");
	svg_n(b, x1);
	rba_buf_printf(b, "\" y1=\"");
	svg_n(b, y1);
	rba_buf_printf(b, "\" x2=\"");
	svg_n(b, x2);
	rba_buf_printf(b, "\" y2=\"");
	svg_n(b, y2);
	rba_buf_printf(b, "\" %s/>", attrs);
}

static double
label(struct rba_buf *b, double x, double y, const char *anchor, double size,
      const char *s, double xmin, double xmax, double *right)
{
	return svg_label(b, x, y, anchor, size, s, strlen(s), xmin, xmax, NULL, 0, right);
}

/* ---- the band scale -------------------------------------------------- */

static void
band_scale(struct rd *r, struct rba_buf *b, const double *edges, int nedges,
	   const char **names, double stored, double rebuilt, double edge)
{
	const double W = 640, L = 40, R = 600, Y = 30, H = 26;
	double right[2] = { -1e9, -1e9 };
	char t[96], n1[REPORT_FIG_MAX];
#define BX(s) (L + fmin(fmax((s), 0), 1) * (R - L))

	rba_buf_printf(b, "<svg id=\"bandscale\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 110\" "
			  "width=\"640\" height=\"110\" role=\"img\" aria-label=\"the "
			  "case's score on the band scale\">\n");
	for (int i = 0; i <= nedges; i++) {
		double lo = i == 0 ? 0 : edges[i - 1];
		double hi = i == nedges ? 1 : edges[i];

		rba_buf_printf(b, "<rect x=\"");
		svg_n(b, BX(lo));
		rba_buf_printf(b, "\" y=\"%.0f\" width=\"", Y);
		svg_n(b, BX(hi) - BX(lo));
		rba_buf_printf(b, "\" height=\"%.0f\" fill=\"%s\" stroke=\"#000\"/>", H,
			       i % 2 ? "#d8d8d8" : "#f4f4f4");
		if (names != NULL && names[i] != NULL &&
		    svg_text_width(names[i], strlen(names[i]), 10) + 4 < BX(hi) - BX(lo))
			svg_label(b, (BX(lo) + BX(hi)) / 2, Y + 17, "middle", 10, names[i],
				  strlen(names[i]), BX(lo), BX(hi), NULL, 0, NULL);
	}
	for (int k = 1; k < 10; k++)
		svg_line(b, BX(k / 10.0), Y + H, BX(k / 10.0), Y + H + 3, "stroke=\"#000\"");
	label(b, L, Y + H + 13, "middle", 9, "0", 0, W, &right[0]);
	for (int i = 0; i < nedges; i++) {
		double x = BX(edges[i]), w;
		int row;

		rba_buf_printf(b, "<line class=\"band-edge\" data-edge=\"");
		html_num(b, edges[i]);
		rba_buf_printf(b, "\" x1=\"");
		svg_n(b, x);
		rba_buf_printf(b, "\" y1=\"%.0f\" x2=\"", Y - 4);
		svg_n(b, x);
		rba_buf_printf(b, "\" y2=\"%.0f\" stroke=\"#000\" stroke-width=\"2\"/>",
			       Y + H + 4);
		num_fig(edges[i], n1);
		notes_exact(&r->notes, "predicate.dispute.policy_text: a band edge", edges[i], n1);
		w = svg_text_width(n1, strlen(n1), 9);
		row = x - w / 2 > right[0] + 3 ? 0 : x - w / 2 > right[1] + 3 ? 1 : -1;
		if (row >= 0)
			label(b, x, Y + H + 13 + 10 * row, "middle", 9, n1, 0, W, &right[row]);
	}
	if (BX(1) - 4 > right[0] + 3)
		label(b, R, Y + H + 13, "middle", 9, "1", 0, W, NULL);
	if (isfinite(stored)) {
		rba_buf_printf(b, "<path class=\"stored-score\" d=\"M");
		svg_n(b, BX(stored));
		rba_buf_printf(b, " %.0f l-6 -10 l12 0 z\" fill=\"#000\"/>", Y - 1);
		num_fig_side(stored, edge, n1);
		snprintf(t, sizeof(t), "stored %s", n1);
		label(b, BX(stored), Y - 15, "middle", 10, t, 0, W, NULL);
	}
	if (isfinite(rebuilt)) {
		rba_buf_printf(b, "<path class=\"rebuilt-score\" d=\"M");
		svg_n(b, BX(rebuilt));
		rba_buf_printf(b, " %.0f l-6 10 l12 0 z\" fill=\"#fff\" stroke=\"#000\" "
				  "stroke-width=\"1.5\"/>", Y + H + 26);
		num_fig_side(rebuilt, edge, n1);
		snprintf(t, sizeof(t), "rebuilt %s", n1);
		label(b, BX(rebuilt), Y + H + 50, "middle", 10, t, 0, W, NULL);
	}
	rba_buf_printf(b, "</svg>\n");
#undef BX
}

/* ---- the waterfall --------------------------------------------------- */

struct wf_row {
	const struct rba_json_value *col, *val, *stmt;
	double c;
	int rank; /* 1.. for a principal reason, else 0 */
};

static int
wf_cmp(const void *pa, const void *pb)
{
	const struct wf_row *a = pa, *b = pb;
	double x = fabs(a->c), y = fabs(b->c);

	return x > y ? -1 : x < y ? 1 : 0;
}

/* "column = value" of a row, cut to fit left of the bars. */
static void
wf_name(struct rba_buf *b, const struct wf_row *w, double y, double right)
{
	struct rba_buf t;

	rba_buf_init(&t);
	if (w->rank)
		rba_buf_printf(&t, "%d. ", w->rank);
	if (w->col != NULL)
		rba_buf_put(&t, w->col->str, w->col->len);
	rba_buf_printf(&t, " = ");
	if (w->val != NULL && w->val->type == RBA_JSON_STRING)
		rba_buf_put(&t, w->val->str, w->val->len);
	else
		rba_buf_printf(&t, "null");
	svg_label(b, right, y, "end", 9, (const char *)t.p, t.len, 4, right, NULL,
		  w->rank != 0, NULL);
	rba_buf_release(&t);
}

/* The waterfall's frame and its log-odds range, shared by its steps. */
struct wf_frame {
	double W, LBL, L, R, TOP, RH;	/* width; the names' right edge; the
					 * bars' left and right; top; row */
	double lo, hi;			/* the log-odds range drawn */
};

#define WX(v) (f->L + ((v) - f->lo) / (f->hi - f->lo) * (f->R - f->L))

/*
 * The log-odds axis at AXIS: ticks, a light line at each, zero dashed;
 * a tick's value only where it does not touch the one before.
 */
static void
wf_axis(const struct wf_frame *f, struct rba_buf *b, double axis)
{
	double first, step, last;
	char n1[REPORT_FIG_MAX];

	step = nice_step(f->lo, f->hi, 6, &first);
	last = -1e9;
	for (int k = 0; step > 0 && k < 40; k++) {
		double v = first + k * step, right;
		if (v > f->hi)
			break;
		if (fabs(v) < step * 1e-9)
			v = 0;
		svg_line(b, WX(v), f->TOP - 4, WX(v), axis,
			 v == 0 ? "stroke=\"#777\" stroke-dasharray=\"2 2\""
				: "stroke=\"#e2e2e2\" stroke-width=\"0.6\"");
		svg_line(b, WX(v), axis, WX(v), axis + 4, "stroke=\"#000\"");
		num_fig(v, n1);
		if (WX(v) - svg_text_width(n1, strlen(n1), 9) / 2 > last + 4) {
			label(b, WX(v), axis + 14, "middle", 9, n1, f->L - 20,
			      f->R + 20, &right);
			last = right;
		}
	}
	svg_line(b, f->L, axis, f->R, axis, "stroke=\"#000\"");
}

/* The baseline, the first bar. */
static void
wf_baseline(struct rd *r, const struct wf_frame *f, struct rba_buf *b,
	    double baseline)
{
	char n1[REPORT_FIG_MAX];

	rba_buf_printf(b, "<rect class=\"wf-baseline\" x=\"");
	svg_n(b, fmin(WX(0), WX(baseline)));
	rba_buf_printf(b, "\" y=\"%.0f\" width=\"", f->TOP);
	svg_n(b, fmax(fabs(WX(baseline) - WX(0)), 1));
	rba_buf_printf(b, "\" height=\"%.0f\" fill=\"#888\" stroke=\"#000\"/>",
		       f->RH - 4);
	label(b, f->LBL, f->TOP + 9, "end", 9, "baseline", 4, f->LBL, NULL);
	num_fig(baseline, n1);
	notes_exact(&r->notes, "predicate.dispute.explanation.baseline", baseline, n1);
	label(b, f->R + 6, f->TOP + 9, "start", 9, n1, f->R + 2, f->W - 2, NULL);
}

/* A bar per row shown, from the baseline on, and one for the rest summed. */
static void
wf_bars(struct rd *r, const struct wf_frame *f, struct rba_buf *b,
	const struct wf_row *rows, size_t nrows, size_t shown, double rest,
	double baseline)
{
	double cum = baseline;
	char n1[REPORT_FIG_MAX], t[160], what[200];

	for (size_t i = 0; i <= shown; i++) {
		int summed = i == shown;
		double c = summed ? rest : rows[i].c;
		double y = f->TOP + f->RH * (double)(i + 1);
		double x0 = WX(cum), x1 = WX(cum + c);

		if (summed && nrows == shown)
			break;
		rba_buf_printf(b, "<g class=\"wf-bar%s\">", !summed && rows[i].rank
							       ? " principal" : "");
		rba_buf_printf(b, "<rect x=\"");
		svg_n(b, fmin(x0, x1));
		rba_buf_printf(b, "\" y=\"");
		svg_n(b, y);
		rba_buf_printf(b, "\" width=\"");
		svg_n(b, fmax(fabs(x1 - x0), 1));
		rba_buf_printf(b, "\" height=\"%.0f\" fill=\"%s\" stroke=\"#000\"/>",
			       f->RH - 4, c >= 0 ? "#333" : "#fff");
		if (summed) {
			snprintf(t, sizeof(t), "%zu other column%s (sum)", nrows - shown,
				 nrows - shown == 1 ? "" : "s");
			label(b, f->LBL, y + 9, "end", 9, t, 4, f->LBL, NULL);
		} else
			wf_name(b, &rows[i], y + 9, f->LBL);
		num_fig(c, n1);
		snprintf(t, sizeof(t), "%s%s", c >= 0 ? "+" : "", n1);
		if (!summed) {
			snprintf(what, sizeof(what),
				 "predicate.dispute.explanation.contributions: %.*s",
				 rows[i].col != NULL ? (int)(rows[i].col->len > 100 ? 100
										 : rows[i].col->len)
						     : 0,
				 rows[i].col != NULL ? rows[i].col->str : "");
			notes_exact(&r->notes, what, c, n1);
		}
		label(b, f->R + 6, y + 9, "start", 9, t, f->R + 2, f->W - 2, NULL);
		rba_buf_printf(b, "</g>\n");
		cum += c;
	}
}

/* The case's log-odds, the last bar, at Y. */
static void
wf_total(struct rd *r, const struct wf_frame *f, struct rba_buf *b, double total,
	 double y)
{
	char n1[REPORT_FIG_MAX];

	rba_buf_printf(b, "<rect class=\"wf-total\" x=\"");
	svg_n(b, fmin(WX(0), WX(total)));
	rba_buf_printf(b, "\" y=\"");
	svg_n(b, y);
	rba_buf_printf(b, "\" width=\"");
	svg_n(b, fmax(fabs(WX(total) - WX(0)), 1));
	rba_buf_printf(b, "\" height=\"%.0f\" fill=\"#888\" stroke=\"#000\" "
			  "stroke-width=\"2\"/>", f->RH - 4);
	label(b, f->LBL, y + 9, "end", 9, "the case", 4, f->LBL, NULL);
	num_fig(total, n1);
	notes_exact(&r->notes, "predicate.dispute.explanation.margin", total, n1);
	label(b, f->R + 6, y + 9, "start", 9, n1, f->R + 2, f->W - 2, NULL);
}

static void
waterfall(struct rd *r, struct rba_buf *b, const struct wf_row *rows, size_t nrows,
	  double baseline, double total, const char *space)
{
	struct wf_frame fr = { .W = 640, .LBL = 196, .L = 206, .R = 540, .TOP = 12,
			       .RH = 15 }, *f = &fr;
	size_t shown = nrows > WF_ROWS ? WF_ROWS : nrows;
	double rest = 0, cum;
	double H, axis;

	f->lo = fmin(0, baseline);
	f->hi = fmax(0, baseline);
	for (size_t i = shown; i < nrows; i++)
		rest += rows[i].c;
	cum = baseline;
	for (size_t i = 0; i < nrows; i++) {
		cum += rows[i].c;
		f->lo = fmin(f->lo, cum);
		f->hi = fmax(f->hi, cum);
	}
	f->lo = fmin(f->lo, total);
	f->hi = fmax(f->hi, total);
	if (!(f->hi > f->lo))
		f->hi = f->lo + 1;
	{
		double pad = (f->hi - f->lo) * 0.04;
		f->lo -= pad;
		f->hi += pad;
	}
	axis = f->TOP + f->RH * (double)(shown + 2 + (nrows > shown)) + 6;
	H = axis + 34;
	rba_buf_printf(b, "<svg id=\"waterfall\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 ");
	svg_n(b, H);
	rba_buf_printf(b, "\" width=\"640\" height=\"");
	svg_n(b, H);
	rba_buf_printf(b, "\" role=\"img\" aria-label=\"the reasons from the "
			  "baseline to the case's log-odds\">\n");
	wf_axis(f, b, axis);
	wf_baseline(r, f, b, baseline);
	wf_bars(r, f, b, rows, nrows, shown, rest, baseline);
	wf_total(r, f, b, total,
		 f->TOP + f->RH * (double)(shown + 1 + (nrows > shown)) + 3);
	svg_label(b, (f->L + f->R) / 2, axis + 28, "middle", 10, space,
		  strlen(space), 0, f->W, NULL, 0, NULL);
	rba_buf_printf(b, "</svg>\n");
#undef WX
}

/* ---- the page -------------------------------------------------------- */

static void
row2(struct rd *r, struct rba_buf *b, const char *name, const struct rba_json_value *v,
     int mono)
{
	rba_buf_printf(b, "<tr><th>%s</th><td%s>", name, mono ? " class=\"mono\"" : "");
	html_sv_dg(&r->notes, b, v);
	rba_buf_printf(b, "</td></tr>\n");
}

static void
list_strings(struct rd *r, struct rba_buf *b, const char *name, const char *path,
	     const struct rba_json_value *l)
{
	if (l == NULL || l->n == 0)
		return;
	rba_buf_printf(b, "<p><b>%s:</b></p>\n<ul>\n", name);
	for (size_t i = 0; i < l->n; i++) {
		char where[80];
		snprintf(where, sizeof(where), "%s[%zu]", path, i);
		rba_buf_printf(b, "<li>");
		html_sv_prose(&r->notes, b, &l->items[i], where);
		rba_buf_printf(b, "</li>\n");
	}
	rba_buf_printf(b, "</ul>\n");
}

/* Whether v is a whole number from 0 to 2^53 (what JSON states a count as). */
static int
is_count(double v)
{
	return v >= 0 && v <= 9007199254740992.0 && v == floor(v);
}

/*
 * The levels unseen in training (v4): each one's column, value and where
 * it went on the case's path, in the words of the text answer
 * (dispute_unseen_where).
 */
static int
section_unseen(struct rd *r, const struct rba_json_value *x, struct rba_buf *b)
{
	const struct rba_json_value *un = rd_at(r, x, "unseen", RD_ARR, 0);

	if (un == NULL || r->json.err)
		return 0;
	rba_buf_printf(b, "<h2>Levels unseen in training</h2>\n<p>The case has "
			  "a value that the model has no level for in a native "
			  "categorical column: it scores without error, and a "
			  "split on that column sends it right, the side the "
			  "artifact's format gives such a level.</p>\n");
	table_open(b, "unseen", "column|value|where it went");
	for (size_t i = 0; i < un->n; i++) {
		const struct rba_json_value *u = &un->items[i];
		const struct rba_json_value *col = rd_str(r, u, "column");
		const struct rba_json_value *val = rd_at(r, u, "value", RD_STR, 1);
		double splits = rd_num(r, u, "splits"), trees = rd_num(r, u, "trees");
		double ft = rd_num(r, u, "forest_trees");
		char *where;

		rd_at(r, u, "went", RD_STRN, 1);
		if (r->json.err)
			return 0;
		rba_buf_printf(b, "<tr class=\"unseen-level\"><td class=\"mono\">");
		html_sv(b, col);
		rba_buf_printf(b, "</td><td class=\"mono\">");
		html_sv(b, val);
		rba_buf_printf(b, "</td><td>a level not seen in training; ");
		if (is_count(splits) && is_count(trees) && is_count(ft)) {
			/* (verify holds them to one forest's paths) */
			where = dispute_unseen_where(col->str, (uint64_t)splits,
						     (uint64_t)trees, (uint64_t)ft);
			if (where == NULL)
				return RBA_E_NOMEM;
			html_c(b, where);
			free(where);
		} else {
			/* an unverified page: the numbers as they stand */
			rba_buf_printf(b, "counts that are not counts: splits ");
			html_fig(b, splits);
			rba_buf_printf(b, ", trees ");
			html_fig(b, trees);
			rba_buf_printf(b, " of ");
			html_fig(b, ft);
		}
		rba_buf_printf(b, "</td></tr>\n");
	}
	table_close(b);
	return 0;
}

/* The principal reasons, as an adverse-action notice gives them. */
static void
section_principal(struct rd *r, const struct rba_json_value *x, struct rba_buf *b)
{
	const struct rba_json_value *pr = rd_at(r, x, "principal_reasons", RD_ARR, 1);
	const struct rba_json_value *miss = rd_at(r, x, "statements_missing", RD_NUM, 0);

	if (pr == NULL)
		return;
	rba_buf_printf(b, "<h2>Principal reasons</h2>\n");
	if (miss == NULL)
		rba_buf_printf(b, "<p>The policy of this evidence has no reason "
				  "statements: each reason is named by its "
				  "column.</p>\n");
	else if (miss->num > 0) {
		rba_buf_printf(b, "<p class=\"warning\" id=\"statements-missing\">"
				  "<b>Warning:</b> ");
		html_count(b, miss->num);
		rba_buf_printf(b, " principal reason%s without a statement in the "
				  "policy: the column's name stands in for it.</p>\n",
			       miss->num == 1 ? "" : "s");
	}
	table_open(b, "principal", "rank|column|value|statement|contribution");
	for (size_t j = 0; j < pr->n; j++) {
		const struct rba_json_value *p = &pr->items[j];
		const struct rba_json_value *stmt = rd_opt_str(p, "statement", r);
		const struct rba_json_value *col = rd_str(r, p, "column");
		char what[200];

		rba_buf_printf(b, "<tr class=\"principal-reason\"><td class=\"n\">");
		html_fig(b, rd_num(r, p, "rank"));
		rba_buf_printf(b, "</td><td class=\"mono\">");
		html_sv(b, col);
		rba_buf_printf(b, "</td><td class=\"mono\">");
		html_sv(b, rd_at(r, p, "value", RD_STRN, 1));
		rba_buf_printf(b, "</td><td class=\"statement\">");
		if (stmt != NULL)
			html_sv(b, stmt);
		else {
			rba_buf_printf(b, "(no statement: the column name) ");
			html_sv(b, col);
		}
		rba_buf_printf(b, "</td><td class=\"n\">");
		snprintf(what, sizeof(what),
			 "predicate.dispute.explanation.principal_reasons[%zu].contribution", j);
		html_val(&r->notes, b, what, rd_num(r, p, "contribution"));
		rba_buf_printf(b, "</td></tr>\n");
	}
	table_close(b);
}

static int
section_reasons(struct rd *r, const struct rba_json_value *x, struct rba_buf *b,
		struct rba_detail *d)
{
	const struct rba_json_value *contr = rd_at(r, x, "contributions", RD_ARR, 1);
	const struct rba_json_value *pr = rd_at(r, x, "principal_reasons", RD_ARR, 1);
	const struct rba_json_value *space = rd_str(r, x, "space");
	double baseline = rd_num(r, x, "baseline"), margin = rd_num(r, x, "margin");
	double sum = rd_num(r, x, "sum"), tol = rd_num(r, x, "tolerance");
	int sum_ok = rd_bool(r, x, "sum_ok");
	struct wf_row *rows;
	double added = baseline;
	size_t nrows;

	if (r->json.err)
		return 0;
	if (contr->n > REPORT_MAX_REASONS || pr->n > REPORT_MAX_REASONS) {
		snprintf(d->reason, sizeof(d->reason), "more than %d contributions",
			 REPORT_MAX_REASONS);
		return RBA_E_LIMIT;
	}
	nrows = contr->n;
	rows = calloc(nrows ? nrows : 1, sizeof(*rows));
	if (rows == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < nrows; i++) {
		const struct rba_json_value *c = &contr->items[i];
		rows[i].col = rd_str(r, c, "column");
		rows[i].val = rd_at(r, c, "value", RD_STRN, 1);
		rows[i].c = rd_num(r, c, "contribution");
		rows[i].stmt = rd_opt_str(c, "statement", r);
		if (isfinite(rows[i].c))
			added += rows[i].c;
		for (size_t j = 0; j < pr->n && rows[i].col != NULL; j++) {
			const struct rba_json_value *pc =
				rd_at(r, &pr->items[j], "column", RD_STR, 1);
			if (pc != NULL && pc->len == rows[i].col->len &&
			    memcmp(pc->str, rows[i].col->str, pc->len) == 0)
				rows[i].rank = (int)(j + 1);
		}
	}
	if (r->json.err) {
		free(rows);
		return 0;
	}
	qsort(rows, nrows, sizeof(*rows), wf_cmp);
	/* the heading, what the bars mean, the picture and the add-up check
	 * are kept on one page */
	rba_buf_printf(b, "<div class=\"fig\"><h2>How the reasons add up</h2>\n<p>");
	html_sv(b, rd_str(r, x, "method"));
	rba_buf_printf(b, " reasons (");
	html_sv(b, rd_at(r, x, "accuracy", RD_STR, 0));
	rba_buf_printf(b, "), in ");
	html_sv(b, space);
	rba_buf_printf(b, ", from ");
	html_sv_prose(&r->notes, b, rd_str(r, x, "source"),
		      "predicate.dispute.explanation.source");
	rba_buf_printf(b, " (");
	html_sv_dg(&r->notes, b, rd_str(r, x, "artifact"));
	rba_buf_printf(b, "). Bars from the baseline to the case, largest "
			  "first; filled bars push the log-odds up, open bars push "
			  "it down; principal reasons in bold with their rank.</p>\n");
	waterfall(r, b, rows, nrows, baseline, margin, space->str);
	rba_buf_printf(b, "<p class=\"caption\" id=\"addup\">Add-up check: baseline ");
	html_val(&r->notes, b, "predicate.dispute.explanation.baseline", baseline);
	rba_buf_printf(b, " + %zu contribution%s = ", nrows, nrows == 1 ? "" : "s");
	html_val(&r->notes, b, "predicate.dispute.explanation.sum", sum);
	rba_buf_printf(b, " (the evidence's sum), the case's log-odds ");
	html_val(&r->notes, b, "predicate.dispute.explanation.margin", margin);
	rba_buf_printf(b, ": %s within the tolerance ", sum_ok ? "agrees" : "DOES NOT AGREE");
	html_val(&r->notes, b, "predicate.dispute.explanation.tolerance", tol);
	rba_buf_printf(b, ". Adding the contributions listed here to the "
			  "baseline in this page's order gives ");
	html_val(&r->notes, b, "the contributions added to the baseline in this "
			       "page's order (computed)", added);
	rba_buf_printf(b, ", %s.</p>\n</div>\n",
		       isfinite(added) && isfinite(sum) && isfinite(tol) &&
				       fabs(added - sum) <= tol
			       ? "the same within that tolerance"
			       : "NOT the sum the evidence states");
	free(rows);
	return section_unseen(r, x, b);
}

static void
title_text(const struct rba_json_value *line, const struct rba_json_value *cs,
	   const struct rba_json_value *ver, struct rba_buf *t)
{
	rba_buf_printf(t, "Case ");
	rba_buf_put(t, cs->str, cs->len);
	rba_buf_printf(t, " of version ");
	rba_buf_put(t, ver->str, ver->len);
	rba_buf_printf(t, ": ");
	rba_buf_put(t, line->str, line->len);
}

/*
 * The statements of the file that contradict one another, as the audit
 * page finds them: an answer that stands on a verdict that supports
 * none, or on decisions that differ, or whose line says otherwise.
 * Only an --unverified page can show one.
 */
static int
dispute_disagreements(struct rd *r, const struct rba_json_value *q,
		      char out[][320], int cap)
{
	const struct rba_json_value *ans = rd_str(r, q, "answer");
	const struct rba_json_value *line = rd_str(r, q, "answer_line");
	const struct rba_json_value *v = rd_str(r, q, "standing.verdict");
	const struct rba_json_value *sd = rd_str(r, q, "stored.decision");
	const struct rba_json_value *rb = rd_at(r, q, "rebuilt.decision", RD_STRN, 0);
	int stands, n = 0;

	if (ans == NULL || line == NULL || v == NULL || sd == NULL)
		return 0;
	stands = strcmp(ans->str, "stands") == 0;
	if (stands && strcmp(v->str, "bit-identical") != 0 &&
	    strcmp(v->str, "metric-equivalent") != 0 && n < cap)
		snprintf(out[n++], 320, "the answer stands, but it rests on a "
			 "version whose verdict is %.64s", v->str);
	if (stands && rb != NULL && rb->type == RBA_JSON_STRING &&
	    strcmp(sd->str, rb->str) != 0 && n < cap)
		snprintf(out[n++], 320, "the answer stands, but the stored decision "
			 "%.64s is not the rebuilt decision %.64s", sd->str, rb->str);
	if (stands != (strstr(line->str, "stands") != NULL &&
		       strncmp(line->str, "escalate", 8) != 0) && n < cap)
		snprintf(out[n++], 320, "the answer is %.32s, but its line reads "
			 "otherwise", ans->str);
	if (strcmp(ans->str, "stands") != 0 && strcmp(ans->str, "escalate") != 0 && n < cap)
		snprintf(out[n++], 320, "the answer '%.32s' is none that a dispute gives",
			 ans->str);
	return n;
}

static void
section_summary(struct rd *r, const struct report_source *src,
		const struct rba_json_value *p, const struct rba_json_value *q,
		struct rba_buf *b)
{
	const struct rba_json_value *ans = rd_str(r, q, "answer");
	const struct rba_json_value *std = rd_at(r, q, "standing", RD_OBJ, 1);
	const struct rba_json_value *rdec = rd_at(r, q, "rebuilt.decision", RD_STRN, 1);
	double stored = rd_num(r, q, "stored.score"), rebuilt = rd_num(r, q, "rebuilt.score");
	double edge = rd_num(r, q, "edge");
	int stands = ans != NULL && strcmp(ans->str, "stands") == 0;
	char dis[4][320];
	int nd = dispute_disagreements(r, q, dis, 4);

	rba_buf_printf(b, "<div class=\"summary\" id=\"summary\"><table class=\"kv\">"
			  "<tbody>\n<tr><th>Answer</th><td><span class=\"%s\" "
			  "id=\"answer\">%s</span> ",
		       stands ? "ok" : "no", stands ? "&#10003; STANDS" : "&#9888; ESCALATE");
	html_sv_prose(&r->notes, b, rd_str(r, q, "answer_line"),
		      "predicate.dispute.answer_line");
	rba_buf_printf(b, "</td></tr>\n<tr><th>Standing</th><td id=\"standing\">");
	if (stands) {
		rba_buf_printf(b, "the decision of case <b>");
		html_sv(b, rd_str(r, q, "case"));
		rba_buf_printf(b, "</b> stands on version ");
		html_sv(b, rd_str(r, q, "version"));
		rba_buf_printf(b, " being <b>");
		html_sv(b, rd_str(r, std, "verdict"));
		rba_buf_printf(b, "</b>, as ");
		html_sv_prose(&r->notes, b, rd_str(r, std, "basis"),
			      "predicate.dispute.standing.basis");
		rba_buf_printf(b, " says");
	} else {
		rba_buf_printf(b, "the decision of case <b>");
		html_sv(b, rd_str(r, q, "case"));
		rba_buf_printf(b, "</b> does not stand on this evidence: version ");
		html_sv(b, rd_str(r, q, "version"));
		rba_buf_printf(b, " is ");
		html_sv(b, rd_str(r, std, "verdict"));
		rba_buf_printf(b, ", ");
		html_sv_prose(&r->notes, b, rd_str(r, std, "basis"),
			      "predicate.dispute.standing.basis");
	}
	rba_buf_printf(b, "</td></tr>\n<tr><th>The case</th><td>stored score ");
	html_val_side(&r->notes, b, "predicate.dispute.stored.score", stored, edge);
	rba_buf_printf(b, " (decision ");
	html_sv(b, rd_str(r, q, "stored.decision"));
	rba_buf_printf(b, "), scored again ");
	html_val_side(&r->notes, b, "predicate.dispute.rebuilt.score", rebuilt, edge);
	rba_buf_printf(b, " (decision ");
	html_sv(b, rdec);
	rba_buf_printf(b, "); the nearest band edge ");
	html_val(&r->notes, b, "predicate.dispute.edge", edge);
	rba_buf_printf(b, ", at a margin of ");
	html_val(&r->notes, b, "predicate.dispute.margin", rd_num(r, q, "margin"));
	rba_buf_printf(b, "</td></tr>\n<tr><th>Signed by</th><td>key <span "
			  "class=\"mono\" id=\"keyid\">");
	html_c(b, src->key_id[0] ? src->key_id : "unknown");
	rba_buf_printf(b, "</span>, %s</td></tr>\n<tr><th>When</th><td>answered at "
			  "history head record ",
		       src->verified ? "signature verified"
				     : "<b>NOT VERIFIED</b>: nothing on this page "
				       "is vouched for by a key");
	html_fig(b, rd_num(r, p, "history.id"));
	rba_buf_printf(b, ", ");
	html_sv_dg(&r->notes, b, rd_str(r, p, "history.digest"));
	rba_buf_printf(b, "; the audit it relies on: ");
	html_sv_prose(&r->notes, b, rd_str(r, std, "basis"),
		      "predicate.dispute.standing.basis");
	rba_buf_printf(b, " (the file states no time of its own)</td></tr>\n"
			  "<tr><th>Evidence</th><td><span class=\"mono\">");
	html_c(b, src->file);
	rba_buf_printf(b, "</span>, <span id=\"digest\">");
	html_dg(&r->notes, b, src->digest, strlen(src->digest));
	rba_buf_printf(b, "</span>, <span class=\"mono\">");
	html_sv(b, rd_str(r, NULL, "predicateType"));
	rba_buf_printf(b, "</span></td></tr>\n</tbody></table>\n");
	if (nd > 0) {
		rba_buf_printf(b, "<div class=\"disagree\" id=\"disagree\">The file "
				  "contradicts itself, so its answer cannot be taken "
				  "as stated:<ul>\n");
		for (int i = 0; i < nd; i++) {
			rba_buf_printf(b, "<li>");
			html_c(b, dis[i]);
			rba_buf_printf(b, ": the two disagree</li>\n");
		}
		rba_buf_printf(b, "</ul></div>\n");
	}
	rba_buf_printf(b, "<p class=\"caption\">Numbers are shown to about %d "
			  "significant digits and digests by their first hex digits "
			  "with a mark (D1, D2, ...); each is in full at the end of "
			  "the page.</p>\n</div>\n",
		       REPORT_FIG_DIGITS);
}

/* Which artifact decided, and what the answer relies on. */
static void
section_provenance(struct rd *r, const struct rba_json_value *q, struct rba_buf *b)
{
	const struct rba_json_value *std = rd_at(r, q, "standing", RD_OBJ, 1);
	const struct rba_json_value *rec = rd_at(r, std, "audit_record", RD_NUMN, 1);
	const struct rba_json_value *art = rd_str(r, q, "scoring.artifact");
	const struct rba_json_value *why = rd_at(r, q, "scoring.retrain_reason", RD_STRN, 1);
	const struct rba_json_value *by = rd_at(r, q, "stored.scored_by", RD_STR, 0);
	int column = by != NULL && strcmp(by->str, "column") == 0;

	rba_buf_printf(b, "<h2>What decided and what the answer relies on</h2>\n"
			  "<table id=\"provenance\" class=\"kv\"><tbody>\n");
	row2(r, b, "scored by", art, 0);
	row2(r, b, column ? "artifact of the version when the sample was added "
			    "(its scores came from a column: production's log)"
			  : "artifact that decided",
	     rd_str(r, q, "digests.artifact_decisions"), 1);
	row2(r, b, "pinned artifact", rd_str(r, q, "digests.artifact_pinned"), 1);
	row2(r, b, "rebuilt artifact", rd_at(r, q, "digests.artifact_rebuilt", RD_STRN, 1), 1);
	rba_buf_printf(b, "<tr><th>audit record relied on</th><td id=\"record\">");
	if (rec != NULL && rec->type == RBA_JSON_NUMBER) {
		rba_buf_printf(b, "record ");
		html_fig(b, rec->num);
		rba_buf_printf(b, " (");
		html_sv_prose(&r->notes, b, rd_str(r, std, "basis"),
			      "predicate.dispute.standing.basis");
		rba_buf_printf(b, ")");
	} else
		rba_buf_printf(b, "none");
	rba_buf_printf(b, "</td></tr>\n<tr><th>retrained</th><td id=\"retrain\">");
	if (art != NULL && strcmp(art->str, "rebuilt") == 0) {
		rba_buf_printf(b, "yes: ");
		if (why != NULL && why->type == RBA_JSON_STRING)
			html_sv_prose(&r->notes, b, why, "predicate.dispute.scoring.retrain_reason");
		else
			rba_buf_printf(b, "asked for (--rebuild)");
	} else {
		rba_buf_printf(b, "no: the stored artifact, verified, answered");
		if (rec != NULL && rec->type == RBA_JSON_NUMBER)
			rba_buf_printf(b, " on the proof of the audit record above");
		if (why != NULL && why->type == RBA_JSON_STRING) {
			rba_buf_printf(b, " (the file also states a reason to retrain: ");
			html_sv_prose(&r->notes, b, why, "predicate.dispute.scoring.retrain_reason");
			rba_buf_printf(b, ")");
		}
	}
	rba_buf_printf(b, "</td></tr>\n");
	row2(r, b, "policy", rd_str(r, q, "digests.policy"), 1);
	row2(r, b, "sample", rd_at(r, q, "digests.sample", RD_STRN, 1), 1);
	rba_buf_printf(b, "</tbody></table>\n");
}

/* Whether column name (n bytes) is one the reasons name: an input of
 * the model. */
static int
is_input(const struct rba_json_value *contr, const char *name)
{
	for (size_t i = 0; contr != NULL && i < contr->n; i++) {
		const struct rba_json_value *c = rba_json_get(&contr->items[i], "column");
		if (c != NULL && c->type == RBA_JSON_STRING && strcmp(c->str, name) == 0)
			return 1;
	}
	return 0;
}

/*
 * The case's inputs, as stored.  When the reasons name the model's input
 * columns, the other columns of the stored case (its id, the outcome
 * label, columns the pins exclude) are listed apart: they are in the
 * sample, not inputs of the decision.
 */
static void
section_inputs(struct rd *r, const struct rba_json_value *q,
	       const struct rba_json_value *x, struct rba_buf *b)
{
	const struct rba_json_value *in = rd_at(r, q, "inputs", RD_OBJ, 0);
	const struct rba_json_value *un = NULL, *contr = NULL;
	size_t others = 0;

	if (in == NULL || in->n == 0)
		return;
	if (x != NULL && x->type == RBA_JSON_OBJECT) {
		un = rd_at(r, x, "unseen", RD_ARR, 0);
		if (rd_bool(r, x, "ok"))
			contr = rd_at(r, x, "contributions", RD_ARR, 0);
	}
	for (size_t i = 0; contr != NULL && i < in->n; i++)
		others += !is_input(contr, in->keys[i]);
	rba_buf_printf(b, "<h2>The case's inputs</h2>\n");
	if (contr == NULL)
		rba_buf_printf(b, "<p>The columns of the stored case as submitted "
				  "(without reasons the page cannot tell the model's "
				  "inputs from the case's other columns):</p>\n");
	table_open(b, "inputs", "column|value");
	for (size_t i = 0; i < in->n; i++) {
		int unseen = 0;

		if (contr != NULL && !is_input(contr, in->keys[i]))
			continue;
		for (size_t j = 0; un != NULL && j < un->n; j++) {
			const struct rba_json_value *c = rba_json_get(&un->items[j], "column");
			unseen |= c != NULL && c->type == RBA_JSON_STRING &&
				  strcmp(c->str, in->keys[i]) == 0;
		}
		rba_buf_printf(b, "<tr><td class=\"mono\">");
		html_c(b, in->keys[i]);
		rba_buf_printf(b, "</td><td class=\"mono\">");
		html_sv(b, &in->items[i]);
		if (unseen)
			rba_buf_printf(b, " (a level not seen in training)");
		rba_buf_printf(b, "</td></tr>\n");
	}
	table_close(b);
	if (others == 0)
		return;
	rba_buf_printf(b, "<p>The other column%s of the stored case, not an input "
			  "of the model (the case's id, the outcome label, a column "
			  "the pins exclude):</p>\n",
		       others == 1 ? "" : "s");
	table_open(b, "other-columns", "column|value");
	for (size_t i = 0; i < in->n; i++) {
		if (is_input(contr, in->keys[i]))
			continue;
		rba_buf_printf(b, "<tr><td class=\"mono\">");
		html_c(b, in->keys[i]);
		rba_buf_printf(b, "</td><td class=\"mono\">");
		html_sv(b, &in->items[i]);
		rba_buf_printf(b, "</td></tr>\n");
	}
	table_close(b);
}

/*
 * The band scale's caption: the stored and the rebuilt score, their
 * decisions, the nearest edge and the margin; ALL_EDGES 0 for v1 evidence,
 * which states only the nearest edge.
 */
static void
band_caption(struct rd *r, const struct rba_json_value *q, struct rba_buf *b,
	     double stored, double rebuilt, double edge, int all_edges)
{
	rba_buf_printf(b, "<p class=\"caption\">The filled triangle is the "
			  "stored score ");
	html_val_side(&r->notes, b, "predicate.dispute.stored.score", stored, edge);
	rba_buf_printf(b, " (decision ");
	html_sv(b, rd_str(r, q, "stored.decision"));
	rba_buf_printf(b, "), the open one the score again ");
	html_val_side(&r->notes, b, "predicate.dispute.rebuilt.score", rebuilt, edge);
	rba_buf_printf(b, " (decision ");
	html_sv(b, rd_at(r, q, "rebuilt.decision", RD_STRN, 1));
	rba_buf_printf(b, "); the nearest band edge is ");
	html_val(&r->notes, b, "predicate.dispute.edge", edge);
	rba_buf_printf(b, ", at a margin of ");
	html_val(&r->notes, b, "predicate.dispute.margin", rd_num(r, q, "margin"));
	rba_buf_printf(b, "%s.</p>\n",
		       !all_edges ? " (this evidence, v1, states only "
				    "the nearest edge)" : "");
}

int
report_dispute_page(struct rd *r, const struct report_source *src,
		    struct rba_buf *b, struct rba_detail *d)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *q = rd_at(r, p, "dispute", RD_OBJ, 1);
	const struct rba_json_value *line = rd_str(r, q, "answer_line");
	const struct rba_json_value *cs = rd_str(r, q, "case");
	const struct rba_json_value *ver = rd_str(r, q, "version");
	const struct rba_json_value *x = rd_at(r, q, "explanation", RD_OBJ, 1);
	const struct rba_json_value *ptext = rd_at(r, q, "policy_text", RD_STR, 0);
	double stored = rd_num(r, q, "stored.score");
	double rebuilt = rd_num(r, q, "rebuilt.score");
	double edge = rd_num(r, q, "edge");
	double edges[MAX_EDGES];
	const char *names[MAX_EDGES + 1] = { NULL };
	struct policy *pol = NULL;
	struct rba_buf title;
	int nedges = 0, argmax = 0, err = 0, ok;

	rd_at(r, q, "standing", RD_OBJ, 1);
	rd_at(r, q, "standing.audit_record", RD_NUMN, 1);
	if (r->json.err)
		return 0;
	if (ptext != NULL) {
		nedges = report_policy_edges(ptext->str, ptext->len, edges, MAX_EDGES,
					     names, &argmax, &pol);
		if (nedges < 0) {
			snprintf(d->key, sizeof(d->key), "predicate.dispute.policy_text");
			snprintf(d->reason, sizeof(d->reason),
				 "the policy text in the evidence does not parse");
			return RBA_E_SCHEMA;
		}
	} else if (isfinite(edge)) {
		edges[0] = edge; /* v1: only the nearest edge is stated */
		nedges = 1;
	}
	rba_buf_init(&title);
	title_text(line, cs, ver, &title);
	html_page_open(b, src, "dispute evidence", rba_buf_cstr(&title));
	rba_buf_printf(b, "<h1 id=\"title\">");
	html_text(b, (const char *)title.p, title.len);
	rba_buf_printf(b, "</h1>\n");
	rba_buf_release(&title);
	section_summary(r, src, p, q, b);
	list_strings(r, b, "Reasons", "predicate.dispute.reasons",
		     rd_at(r, q, "reasons", RD_ARR, 1));
	list_strings(r, b, "Warnings", "predicate.dispute.warnings",
		     rd_at(r, q, "warnings", RD_ARR, 1));
	ok = x != NULL && x->type == RBA_JSON_OBJECT && rd_bool(r, x, "ok");
	if (ok)
		section_principal(r, x, b);

	rba_buf_printf(b, "<div class=\"fig\"><h2>The score on the band scale</h2>\n");
	if (argmax)
		rba_buf_printf(b, "<p>The policy decides by argmax over the classes: "
				  "it has no band scale.</p>\n");
	else {
		band_scale(r, b, edges, nedges, ptext != NULL ? names : NULL, stored,
			   rebuilt, edge);
		band_caption(r, q, b, stored, rebuilt, edge, ptext != NULL);
	}
	rba_buf_printf(b, "</div>\n");

	if (ok)
		err = section_reasons(r, x, b, d);
	else {
		/* (an exec version scored by its score command: the
		 * evidence's error says that no reasons exist for its
		 * format; nothing is drawn in their place) */
		rba_buf_printf(b, "<h2>Reasons</h2>\n<p id=\"no-reasons\">No reasons "
				  "are available for this decision, and none are "
				  "drawn: ");
		html_sv(b, rd_at(r, x, "error", RD_STRN, 0));
		rba_buf_printf(b, ".</p>\n");
	}
	if (err != 0)
		goto out;
	section_provenance(r, q, b);
	section_inputs(r, q, x, b);
	html_notes_sections(&r->notes, b);
	html_page_close(b, src);
	if (r->notes.nomem)
		err = RBA_E_NOMEM;
out:
	policy_free(pol);
	return err;
}
