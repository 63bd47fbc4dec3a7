/*
 * report_dispute.c - the page of dispute evidence: the answer in one
 * sentence as its title, the case's score on the band scale with the
 * edges, the reasons as a waterfall from the baseline to the case's
 * log-odds with the check that they add up, which artifact decided and
 * which audit record the answer relies on.
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
svg_txt(struct rba_buf *b, double x, double y, const char *anchor,
	const char *size, const char *cls, const struct rba_json_value *sv,
	const char *s)
{
	rba_buf_printf(b, "<text x=\"");
	svg_n(b, x);
	rba_buf_printf(b, "\" y=\"");
	svg_n(b, y);
	rba_buf_printf(b, "\" text-anchor=\"%s\" font-size=\"%s\"%s%s%s>", anchor,
		       size, cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	if (sv != NULL)
		html_sv(b, sv);
	if (s != NULL)
		html_c(b, s);
	rba_buf_printf(b, "</text>");
}

/* ---- the band scale -------------------------------------------------- */

static void
band_scale(struct rba_buf *b, const double *edges, int nedges,
	   const char **names, double stored, double rebuilt)
{
	const double L = 40, R = 600, Y = 40, H = 26;
	char t[96], n1[RBA_JSON_NUM_MAX];
#define BX(s) (L + fmin(fmax((s), 0), 1) * (R - L))

	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"bandscale\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 120\" "
			  "width=\"640\" height=\"120\" role=\"img\" aria-label=\"the "
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
		if (names != NULL && names[i] != NULL)
			svg_txt(b, (BX(lo) + BX(hi)) / 2, Y + 17, "middle", "10", NULL,
				NULL, names[i]);
	}
	for (int i = 0; i < nedges; i++) {
		rba_buf_printf(b, "<line class=\"band-edge\" data-edge=\"");
		html_num(b, edges[i]);
		rba_buf_printf(b, "\" x1=\"");
		svg_n(b, BX(edges[i]));
		rba_buf_printf(b, "\" y1=\"%.0f\" x2=\"", Y - 4);
		svg_n(b, BX(edges[i]));
		rba_buf_printf(b, "\" y2=\"%.0f\" stroke=\"#000\" stroke-width=\"2\"/>",
			       Y + H + 4);
		rba_json_fmt_double(edges[i], n1);
		svg_txt(b, BX(edges[i]), Y + H + 16, "middle", "9", NULL, NULL, n1);
	}
	svg_txt(b, L, Y + H + 16, "middle", "9", NULL, NULL, "0");
	svg_txt(b, R, Y + H + 16, "middle", "9", NULL, NULL, "1");
	if (isfinite(stored)) {
		rba_buf_printf(b, "<path class=\"stored-score\" d=\"M");
		svg_n(b, BX(stored));
		rba_buf_printf(b, " %.0f l-6 -10 l12 0 z\" fill=\"#000\"/>", Y - 1);
		rba_json_fmt_double(stored, n1);
		snprintf(t, sizeof(t), "stored %s", n1);
		svg_txt(b, BX(stored), Y - 14, "middle", "10", NULL, NULL, t);
	}
	if (isfinite(rebuilt)) {
		rba_buf_printf(b, "<path class=\"rebuilt-score\" d=\"M");
		svg_n(b, BX(rebuilt));
		rba_buf_printf(b, " %.0f l-6 10 l12 0 z\" fill=\"#fff\" stroke=\"#000\" "
				  "stroke-width=\"1.5\"/>", Y + H + 20);
		rba_json_fmt_double(rebuilt, n1);
		snprintf(t, sizeof(t), "rebuilt %s", n1);
		svg_txt(b, BX(rebuilt), Y + H + 44, "middle", "10", NULL, NULL, t);
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

static void
waterfall(struct rba_buf *b, const struct wf_row *rows, size_t nrows,
	  double baseline, double total, const char *space)
{
	const double LBL = 200, L = 210, R = 500, TOP = 24, RH = 17;
	size_t shown = nrows > WF_ROWS ? WF_ROWS : nrows;
	double rest = 0, lo = fmin(0, baseline), hi = fmax(0, baseline), cum;
	double H;
	char n1[RBA_JSON_NUM_MAX], t[160];

	for (size_t i = shown; i < nrows; i++)
		rest += rows[i].c;
	cum = baseline;
	for (size_t i = 0; i < nrows; i++) {
		cum += rows[i].c;
		lo = fmin(lo, cum);
		hi = fmax(hi, cum);
	}
	lo = fmin(lo, total);
	hi = fmax(hi, total);
	if (!(hi > lo)) {
		hi = lo + 1;
	}
	{
		double pad = (hi - lo) * 0.04;
		lo -= pad;
		hi += pad;
	}
#define WX(v) (L + ((v) - lo) / (hi - lo) * (R - L))
	H = TOP + RH * (double)(shown + 3 + (nrows > shown)) + 30;
	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"waterfall\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 ");
	svg_n(b, H);
	rba_buf_printf(b, "\" width=\"640\" height=\"");
	svg_n(b, H);
	rba_buf_printf(b, "\" role=\"img\" aria-label=\"the reasons from the "
			  "baseline to the case's log-odds\">\n");
	/* zero */
	rba_buf_printf(b, "<line x1=\"");
	svg_n(b, WX(0));
	rba_buf_printf(b, "\" y1=\"%.0f\" x2=\"", TOP - 6);
	svg_n(b, WX(0));
	rba_buf_printf(b, "\" y2=\"");
	svg_n(b, H - 26);
	rba_buf_printf(b, "\" stroke=\"#777\" stroke-dasharray=\"2 2\"/>");
	svg_txt(b, WX(0), TOP - 10, "middle", "9", NULL, NULL, "0");
	/* the baseline */
	{
		double y = TOP;
		rba_buf_printf(b, "<rect class=\"wf-baseline\" x=\"");
		svg_n(b, fmin(WX(0), WX(baseline)));
		rba_buf_printf(b, "\" y=\"");
		svg_n(b, y);
		rba_buf_printf(b, "\" width=\"");
		svg_n(b, fmax(fabs(WX(baseline) - WX(0)), 1));
		rba_buf_printf(b, "\" height=\"%.0f\" fill=\"#888\" stroke=\"#000\"/>",
			       RH - 5);
		svg_txt(b, LBL, y + 10, "end", "9", NULL, NULL, "baseline");
		rba_json_fmt_double(baseline, n1);
		svg_txt(b, R + 4, y + 10, "start", "9", NULL, NULL, n1);
	}
	cum = baseline;
	for (size_t i = 0; i <= shown; i++) {
		int summed = i == shown;
		double c = summed ? rest : rows[i].c;
		double y = TOP + RH * (double)(i + 1);
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
			       RH - 5, c >= 0 ? "#333" : "#fff");
		if (summed) {
			snprintf(t, sizeof(t), "%zu other columns (sum)", nrows - shown);
			svg_txt(b, LBL, y + 10, "end", "9", NULL, NULL, t);
		} else {
			rba_buf_printf(b, "<text x=\"%.0f\" y=\"", LBL);
			svg_n(b, y + 10);
			rba_buf_printf(b, "\" text-anchor=\"end\" font-size=\"9\"%s>",
				       rows[i].rank ? " font-weight=\"bold\"" : "");
			if (rows[i].rank)
				rba_buf_printf(b, "%d. ", rows[i].rank);
			html_sv(b, rows[i].col);
			rba_buf_printf(b, " = ");
			html_sv(b, rows[i].val);
			rba_buf_printf(b, "</text>");
		}
		rba_json_fmt_double(c, n1);
		snprintf(t, sizeof(t), "%s%s", c >= 0 ? "+" : "", n1);
		svg_txt(b, R + 4, y + 10, "start", "9", NULL, NULL, t);
		rba_buf_printf(b, "</g>\n");
		cum += c;
	}
	/* the case's log-odds */
	{
		double y = TOP + RH * (double)(shown + 1 + (nrows > shown)) + 4;
		rba_buf_printf(b, "<rect class=\"wf-total\" x=\"");
		svg_n(b, fmin(WX(0), WX(total)));
		rba_buf_printf(b, "\" y=\"");
		svg_n(b, y);
		rba_buf_printf(b, "\" width=\"");
		svg_n(b, fmax(fabs(WX(total) - WX(0)), 1));
		rba_buf_printf(b, "\" height=\"%.0f\" fill=\"#888\" stroke=\"#000\" "
				  "stroke-width=\"2\"/>", RH - 5);
		svg_txt(b, LBL, y + 10, "end", "9", NULL, NULL, "the case");
		rba_json_fmt_double(total, n1);
		svg_txt(b, R + 4, y + 10, "start", "9", NULL, NULL, n1);
		svg_txt(b, (L + R) / 2, H - 8, "middle", "10", NULL, NULL, space);
	}
	rba_buf_printf(b, "</svg>\n");
#undef WX
}

/* ---- the page -------------------------------------------------------- */

static void
row2(struct rba_buf *b, const char *name, const struct rba_json_value *v,
     int mono)
{
	rba_buf_printf(b, "<tr><th>%s</th><td%s>", name, mono ? " class=\"mono\"" : "");
	html_sv(b, v);
	rba_buf_printf(b, "</td></tr>\n");
}

static void
list_strings(struct rba_buf *b, const char *name, const struct rba_json_value *l)
{
	if (l == NULL || l->n == 0)
		return;
	rba_buf_printf(b, "<p><b>%s:</b></p>\n<ul>\n", name);
	for (size_t i = 0; i < l->n; i++) {
		rba_buf_printf(b, "<li>");
		html_sv(b, &l->items[i]);
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

	if (un == NULL || r->bad)
		return 0;
	rba_buf_printf(b, "<h2>Levels unseen in training</h2>\n<p>The case has "
			  "a value that the model has no level for in a native "
			  "categorical column: it scores without error, and a "
			  "split on that column sends it right, the side the "
			  "artifact's format gives such a level.</p>\n"
			  "<table id=\"unseen\"><tr><th>column</th><th>value</th>"
			  "<th>where it went</th></tr>\n");
	for (size_t i = 0; i < un->n; i++) {
		const struct rba_json_value *u = &un->items[i];
		const struct rba_json_value *col = rd_str(r, u, "column");
		const struct rba_json_value *val = rd_at(r, u, "value", RD_STR, 1);
		double splits = rd_num(r, u, "splits"), trees = rd_num(r, u, "trees");
		double ft = rd_num(r, u, "forest_trees");
		char *where;

		rd_at(r, u, "went", RD_STRN, 1);
		if (r->bad)
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
			html_num(b, splits);
			rba_buf_printf(b, ", trees ");
			html_num(b, trees);
			rba_buf_printf(b, " of ");
			html_num(b, ft);
		}
		rba_buf_printf(b, "</td></tr>\n");
	}
	rba_buf_printf(b, "</table>\n");
	return 0;
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

	if (r->bad)
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
	if (r->bad) {
		free(rows);
		return 0;
	}
	qsort(rows, nrows, sizeof(*rows), wf_cmp);
	rba_buf_printf(b, "<h2>Reasons</h2>\n<p>");
	html_sv(b, rd_str(r, x, "method"));
	rba_buf_printf(b, " reasons (");
	html_sv(b, rd_at(r, x, "accuracy", RD_STR, 0));
	rba_buf_printf(b, "), in ");
	html_sv(b, space);
	rba_buf_printf(b, ", from ");
	html_sv(b, rd_str(r, x, "source"));
	rba_buf_printf(b, " (<span class=\"mono\">");
	html_sv(b, rd_str(r, x, "artifact"));
	rba_buf_printf(b, "</span>). Bars from the baseline to the case, largest "
			  "first; filled bars push the log-odds up, open bars push "
			  "it down; principal reasons in bold with their rank.</p>\n");
	waterfall(b, rows, nrows, baseline, margin, space->str);
	rba_buf_printf(b, "<p class=\"caption\" id=\"addup\">Add-up check: baseline ");
	html_num(b, baseline);
	rba_buf_printf(b, " + %zu contributions = ", nrows);
	html_num(b, sum);
	rba_buf_printf(b, " (the evidence's sum), the case's log-odds ");
	html_num(b, margin);
	rba_buf_printf(b, ": %s within the tolerance ", sum_ok ? "agrees" : "DOES NOT AGREE");
	html_num(b, tol);
	rba_buf_printf(b, ". Adding the contributions listed here to the "
			  "baseline in this page's order gives ");
	html_num(b, added);
	rba_buf_printf(b, ", %s.</p>\n</div>\n",
		       isfinite(added) && isfinite(sum) && isfinite(tol) &&
				       fabs(added - sum) <= tol
			       ? "the same within that tolerance"
			       : "NOT the sum the evidence states");
	/* the principal reasons */
	rba_buf_printf(b, "<h2>Principal reasons</h2>\n");
	{
		const struct rba_json_value *miss =
			rd_at(r, x, "statements_missing", RD_NUM, 0);
		if (miss == NULL)
			rba_buf_printf(b, "<p>The policy of this evidence has no reason "
					  "statements: each reason is named by its "
					  "column.</p>\n");
		else if (miss->num > 0) {
			rba_buf_printf(b, "<p class=\"warning\" id=\"statements-missing\">"
					  "<b>Warning:</b> ");
			html_num(b, miss->num);
			rba_buf_printf(b, " principal reason%s without a statement in the "
					  "policy: the column's name stands in for it.</p>\n",
				       miss->num == 1 ? "" : "s");
		}
	}
	rba_buf_printf(b, "<table id=\"principal\"><tr>"
			  "<th>rank</th><th>column</th><th>value</th>"
			  "<th>statement</th><th>contribution</th></tr>\n");
	for (size_t j = 0; j < pr->n; j++) {
		const struct rba_json_value *p = &pr->items[j];
		const struct rba_json_value *stmt = rd_opt_str(p, "statement", r);
		const struct rba_json_value *col = rd_str(r, p, "column");

		rba_buf_printf(b, "<tr class=\"principal-reason\"><td class=\"n\">");
		html_num(b, rd_num(r, p, "rank"));
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
		html_num(b, rd_num(r, p, "contribution"));
		rba_buf_printf(b, "</td></tr>\n");
	}
	rba_buf_printf(b, "</table>\n");
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
	const struct rba_json_value *std = rd_at(r, q, "standing", RD_OBJ, 1);
	const struct rba_json_value *rec = rd_at(r, std, "audit_record", RD_NUMN, 1);
	double stored = rd_num(r, q, "stored.score");
	double rebuilt = rd_num(r, q, "rebuilt.score");
	double edge = rd_num(r, q, "edge");
	double edges[MAX_EDGES];
	const char *names[MAX_EDGES + 1] = { NULL };
	struct policy *pol = NULL;
	struct rba_buf title;
	int nedges = 0, argmax = 0, err = 0;

	if (r->bad)
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
	rba_buf_printf(b, "<div class=\"meta\">Dispute evidence <span class=\"mono\">");
	html_c(b, src->file);
	rba_buf_printf(b, "</span>, <span class=\"mono\" id=\"digest\">");
	html_c(b, src->digest);
	rba_buf_printf(b, "</span>, %s key <span class=\"mono\" id=\"keyid\">",
		       src->verified ? "signature verified with" : "NOT VERIFIED;");
	html_c(b, src->key_id[0] ? src->key_id : "unknown");
	rba_buf_printf(b, "</span>. Predicate <span class=\"mono\">");
	html_sv(b, rd_str(r, NULL, "predicateType"));
	rba_buf_printf(b, "</span>; history head when answered: record ");
	html_num(b, rd_num(r, p, "history.id"));
	rba_buf_printf(b, ", <span class=\"mono\">");
	html_sv(b, rd_str(r, p, "history.digest"));
	rba_buf_printf(b, "</span>.</div>\n");

	/* the standing in one sentence */
	{
		const struct rba_json_value *ans = rd_str(r, q, "answer");
		int stands = ans != NULL && strcmp(ans->str, "stands") == 0;

		rba_buf_printf(b, "<p class=\"verdict\" id=\"standing\">Standing: ");
		if (stands) {
			rba_buf_printf(b, "the decision of case <b>");
			html_sv(b, cs);
			rba_buf_printf(b, "</b> stands on version ");
			html_sv(b, ver);
			rba_buf_printf(b, " being <b>");
			html_sv(b, rd_str(r, std, "verdict"));
			rba_buf_printf(b, "</b>, as ");
			html_sv(b, rd_str(r, std, "basis"));
			rba_buf_printf(b, " says.</p>\n");
		} else {
			rba_buf_printf(b, "the decision of case <b>");
			html_sv(b, cs);
			rba_buf_printf(b, "</b> does not stand on this evidence: <b>");
			html_sv(b, line);
			rba_buf_printf(b, "</b> (version ");
			html_sv(b, ver);
			rba_buf_printf(b, ": ");
			html_sv(b, rd_str(r, std, "verdict"));
			rba_buf_printf(b, ", ");
			html_sv(b, rd_str(r, std, "basis"));
			rba_buf_printf(b, ").</p>\n");
		}
	}
	list_strings(b, "Reasons", rd_at(r, q, "reasons", RD_ARR, 1));
	list_strings(b, "Warnings", rd_at(r, q, "warnings", RD_ARR, 1));

	rba_buf_printf(b, "<h2>The score on the band scale</h2>\n");
	if (argmax)
		rba_buf_printf(b, "<p>The policy decides by argmax over the classes: "
				  "it has no band scale.</p>\n");
	else {
		band_scale(b, edges, nedges, ptext != NULL ? names : NULL, stored,
			   rebuilt);
		rba_buf_printf(b, "<p class=\"caption\">The filled triangle is the "
				  "stored score ");
		html_num(b, stored);
		rba_buf_printf(b, " (decision ");
		html_sv(b, rd_str(r, q, "stored.decision"));
		rba_buf_printf(b, "), the open one the score again ");
		html_num(b, rebuilt);
		rba_buf_printf(b, " (decision ");
		html_sv(b, rd_at(r, q, "rebuilt.decision", RD_STRN, 1));
		rba_buf_printf(b, "); the nearest band edge is ");
		html_num(b, edge);
		rba_buf_printf(b, ", at a margin of ");
		html_num(b, rd_num(r, q, "margin"));
		rba_buf_printf(b, "%s.</p>\n</div>\n",
			       ptext == NULL ? " (this evidence, v1, states only "
					       "the nearest edge)" : "");
	}

	if (x != NULL && x->type == RBA_JSON_OBJECT && rd_bool(r, x, "ok"))
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

	rba_buf_printf(b, "<h2>What decided and what the answer relies on</h2>\n"
			  "<table id=\"provenance\">\n");
	row2(b, "scored by", rd_str(r, q, "scoring.artifact"), 0);
	row2(b, "artifact that decided", rd_str(r, q, "digests.artifact_decisions"), 1);
	row2(b, "pinned artifact", rd_str(r, q, "digests.artifact_pinned"), 1);
	row2(b, "rebuilt artifact", rd_at(r, q, "digests.artifact_rebuilt", RD_STRN, 1), 1);
	rba_buf_printf(b, "<tr><th>audit record relied on</th><td id=\"record\">");
	if (rec != NULL && rec->type == RBA_JSON_NUMBER) {
		rba_buf_printf(b, "record ");
		html_num(b, rec->num);
		rba_buf_printf(b, " (");
		html_sv(b, rd_str(r, std, "basis"));
		rba_buf_printf(b, ")");
	} else
		rba_buf_printf(b, "none");
	rba_buf_printf(b, "</td></tr>\n");
	row2(b, "retrain reason", rd_at(r, q, "scoring.retrain_reason", RD_STRN, 1), 0);
	row2(b, "policy", rd_str(r, q, "digests.policy"), 1);
	row2(b, "sample", rd_at(r, q, "digests.sample", RD_STRN, 1), 1);
	rba_buf_printf(b, "</table>\n");
	/* the case's inputs, as stored */
	{
		const struct rba_json_value *in = rd_at(r, q, "inputs", RD_OBJ, 0);
		if (in != NULL && in->n > 0) {
			rba_buf_printf(b, "<h2>The case's inputs</h2>\n<table id=\"inputs\">"
					  "<tr><th>column</th><th>value</th></tr>\n");
			const struct rba_json_value *un =
				x != NULL && x->type == RBA_JSON_OBJECT
					? rd_at(r, x, "unseen", RD_ARR, 0) : NULL;
			for (size_t i = 0; i < in->n; i++) {
				int unseen = 0;
				for (size_t j = 0; un != NULL && j < un->n; j++) {
					const struct rba_json_value *c =
						rba_json_get(&un->items[j], "column");
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
			rba_buf_printf(b, "</table>\n");
		}
	}
	html_page_close(b, src);
out:
	policy_free(pol);
	return err;
}
