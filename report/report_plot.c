/*
 * report_plot.c - the audit page's pictures: the scatter of rebuilt
 * minus stored score against the stored score, and |delta| against the
 * tolerance.
 *
 * They draw what the evidence states and nothing else: audit evidence
 * of the first formats lists each flipped case with both its scores,
 * and of the other cases only counts and the largest |delta|, so the
 * scatter marks the listed cases and says in its caption what it cannot
 * place; format 3 states every case, and every case is drawn.  A
 * picture's size does not grow with the sample: cases whose marks would
 * overlap are drawn as grey cells, darker as they hold more cases, so a
 * page of a million cases prints as fast as one of a thousand; each
 * flipped and near-threshold case keeps its own mark (up to
 * REPORT_MARKS_MAX of each), drawn over the band edges and the cells.
 * Shapes carry the meaning (a ringed cross for a flipped case, a filled
 * diamond for one near an edge, a solid line for a band edge, a grey
 * strip for the near-threshold margin, dashes for the tolerance) so that
 * a black and white print reads the same.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_view.h"

double
view_delta(double rebuilt, double stored)
{
	return rebuilt - (double)(float)stored;
}

/* ---- drawing helpers -------------------------------------------------- */

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

/* A label of the page's own text (escaped all the same). */
static double
label(struct rba_buf *b, double x, double y, const char *anchor, double size,
      const char *s, double xmin, double xmax, double *right)
{
	return svg_label(b, x, y, anchor, size, s, strlen(s), xmin, xmax, NULL, 0, right);
}

/* A flipped case: a cross in a ring (readable without colour). */
static void
mark_flip(struct rba_buf *b, double x, double y)
{
	rba_buf_printf(b, "<circle cx=\"");
	svg_n(b, x);
	rba_buf_printf(b, "\" cy=\"");
	svg_n(b, y);
	rba_buf_printf(b, "\" r=\"6\" fill=\"#fff\" stroke=\"#b00000\" "
			  "stroke-width=\"1.5\"/><path d=\"M");
	svg_n(b, x - 4);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y - 4);
	rba_buf_printf(b, " L");
	svg_n(b, x + 4);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y + 4);
	rba_buf_printf(b, " M");
	svg_n(b, x - 4);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y + 4);
	rba_buf_printf(b, " L");
	svg_n(b, x + 4);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y - 4);
	rba_buf_printf(b, "\" stroke=\"#000\" stroke-width=\"2\"/>");
}

/* A case near an edge: a filled diamond with a white rim, so that it
 * shows on a band edge or a dark cell. */
static void
mark_near(struct rba_buf *b, double x, double y)
{
	rba_buf_printf(b, "<path d=\"M");
	svg_n(b, x);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y - 4.5);
	rba_buf_printf(b, " l4.5 4.5 l-4.5 4.5 l-4.5 -4.5 z\" fill=\"#000\" "
			  "stroke=\"#fff\" stroke-width=\"0.8\"/>");
}

static void
mark_case(struct rba_buf *b, double x, double y)
{
	rba_buf_printf(b, "<circle cx=\"");
	svg_n(b, x);
	rba_buf_printf(b, "\" cy=\"");
	svg_n(b, y);
	rba_buf_printf(b, "\" r=\"2.2\" fill=\"none\" stroke=\"#000\" "
			  "stroke-width=\"0.7\"/>");
}

/* The opening of a mark's group with its case and scores (a tooltip on
 * screen; not printed). */
static void
mark_open(struct rba_buf *b, const char *cls, const struct rba_json_value *id,
	  double s, double rb)
{
	rba_buf_printf(b, "<g class=\"%s\" data-case=\"", cls);
	html_sv(b, id);
	rba_buf_printf(b, "\"><title>case ");
	html_sv(b, id);
	rba_buf_printf(b, ": stored ");
	html_num(b, s);
	rba_buf_printf(b, ", rebuilt ");
	html_num(b, rb);
	rba_buf_printf(b, "</title>");
}

/* ---- the scatter ----------------------------------------------------- */

#define SC_W 640.0
#define SC_H 324.0
#define SC_L 66.0 /* plot area */
#define SC_R 560.0
#define SC_T 32.0
#define SC_B 250.0
#define CELL_W 5.0 /* a density cell */
#define CELL_H 4.0
#define SC_COLS 99 /* ceil((SC_R - SC_L) / CELL_W) */
#define SC_ROWS 55 /* ceil((SC_B - SC_T) / CELL_H) */
#define DENSITY_LEVELS 5

/* Grey of a cell of n > 1 cases: one level per power of ten. */
static const char *const density_grey[DENSITY_LEVELS] = {
	"#c4c4c4", "#999999", "#6e6e6e", "#404040", "#111111",
};

static int
density_level(size_t n)
{
	int k = 0;

	while (n >= 10 && k < DENSITY_LEVELS - 1) {
		n /= 10;
		k++;
	}
	return k;
}

static double
sc_x(double s)
{
	if (!(s >= 0))
		s = 0;
	if (s > 1)
		s = 1;
	return SC_L + s * (SC_R - SC_L);
}

static double
sc_y(double dl, double ymax)
{
	double y = (SC_T + SC_B) / 2 - dl / ymax * (SC_B - SC_T) / 2;

	if (!isfinite(y))
		y = (SC_T + SC_B) / 2;
	return y < SC_T ? SC_T : y > SC_B ? SC_B : y;
}

/* What the scatter drew, for its caption. */
struct sc_count {
	size_t flip_marks, near_marks, singles, binned, cells;
	size_t flip_binned, near_binned;
};

static double
scatter_ymax(struct rd *r, const struct audit_view *a)
{
	double ymax = fmax(a->tol, fabs(a->max_delta));
	size_t nf = a->flipped != NULL ? a->flipped->n : 0;

	for (size_t i = 0; i < nf; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		double dl = view_delta(rd_num(r, f, "rebuilt_score"),
				       rd_num(r, f, "stored_score"));
		if (isfinite(dl))
			ymax = fmax(ymax, fabs(dl));
	}
	for (size_t i = 0; i < a->npts; i++) {
		double dl = view_delta(a->pts[i].r, a->pts[i].s);
		if (isfinite(dl))
			ymax = fmax(ymax, fabs(dl));
	}
	if (!(ymax > 0) || !isfinite(ymax))
		ymax = 1e-3;
	return ymax * 1.15;
}

/* The axes: ticks of the stored score below, of the delta at the left,
 * the titles. */
static void
scatter_axes(struct rba_buf *b, double ymax)
{
	char t[REPORT_FIG_MAX];
	double first, step = nice_step(-ymax, ymax, 4, &first);

	for (int k = 0; k <= 10; k++) {
		double x = sc_x(k / 10.0);
		svg_line(b, x, SC_B, x, SC_B + 4, "stroke=\"#000\"");
		num_fig(k / 10.0, t);
		label(b, x, SC_B + 14, "middle", 9, t, 0, SC_W, NULL);
	}
	for (int k = 0; step > 0 && k < 40; k++) {
		double v = first + k * step, y;
		if (v > ymax)
			break;
		if (fabs(v) < step * 1e-9)
			v = 0;
		y = sc_y(v, ymax);
		svg_line(b, SC_L - 4, y, SC_L, y, "stroke=\"#000\"");
		if (v != 0)
			svg_line(b, SC_L, y, SC_R, y, "stroke=\"#e2e2e2\" stroke-width=\"0.6\"");
		num_fig(v, t);
		label(b, SC_L - 6, y + 3, "end", 9, t, 0, SC_L - 6, NULL);
	}
	label(b, (SC_L + SC_R) / 2, SC_B + 28, "middle", 10, "stored score", 0, SC_W, NULL);
	rba_buf_printf(b, "<text x=\"12\" y=\"%.0f\" font-size=\"10\" "
			  "text-anchor=\"middle\" transform=\"rotate(-90 12 %.0f)\">"
			  "rebuilt - stored</text>\n",
		       (SC_T + SC_B) / 2, (SC_T + SC_B) / 2);
}

/* The band edges with their values above the plot (a second row when
 * two would touch), the bands' names where they fit, and the strips of
 * the near-threshold margin over the edges. */
static void
scatter_edges(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	double right[2] = { -1e9, -1e9 };
	char t[REPORT_FIG_MAX];

	for (int i = 0; i < a->nedges; i++) {
		double x = sc_x(a->edges[i]);

		rba_buf_printf(b, "<line class=\"band-edge\" data-edge=\"");
		html_num(b, a->edges[i]);
		rba_buf_printf(b, "\" x1=\"");
		svg_n(b, x);
		rba_buf_printf(b, "\" y1=\"%.0f\" x2=\"", SC_T);
		svg_n(b, x);
		rba_buf_printf(b, "\" y2=\"%.0f\" stroke=\"#000\" stroke-width=\"1.4\"/>",
			       SC_B);
		num_fig(a->edges[i], t);
		notes_exact(&r->notes, "predicate.policy.text: a band edge", a->edges[i], t);
		{
			double w = svg_text_width(t, strlen(t), 9);
			int row = x - w / 2 > right[0] + 3 ? 0 : x - w / 2 > right[1] + 3 ? 1 : -1;
			if (row >= 0)
				label(b, x, row ? SC_T - 15 : SC_T - 4, "middle", 9, t, 0, SC_W,
				      &right[row]);
		}
		rba_buf_put_u8(b, '\n');
	}
	for (int i = 0; i <= a->nedges && a->nedges > 0; i++) {
		double lo = sc_x(i == 0 ? 0 : a->edges[i - 1]);
		double hi = sc_x(i == a->nedges ? 1 : a->edges[i]);
		const char *nm = a->band_names[i];

		if (nm != NULL && svg_text_width(nm, strlen(nm), 9) + 6 < hi - lo)
			svg_label(b, (lo + hi) / 2, SC_B - 5, "middle", 9, nm, strlen(nm),
				  lo + 2, hi - 2, "halo", 0, NULL);
	}
	/* the strips over the edge lines, at least 6 units wide, so that a
	 * margin narrower than a line still shows beside it */
	for (int i = 0; i < a->nedges; i++) {
		double x0 = sc_x(a->edges[i] - a->margin);
		double x1 = sc_x(a->edges[i] + a->margin);
		double w = x1 - x0;

		if (!(w >= 6)) {
			x0 = sc_x(a->edges[i]) - 3;
			w = 6;
		}
		rba_buf_printf(b, "<rect class=\"near-margin\" x=\"");
		svg_n(b, x0);
		rba_buf_printf(b, "\" y=\"%.0f\" width=\"", SC_T);
		svg_n(b, w);
		rba_buf_printf(b, "\" height=\"%.0f\" fill=\"#808080\" fill-opacity=\"0.4\"/>\n",
			       SC_B - SC_T);
	}
}

/* The zero line and the tolerance, its value at the right of the plot
 * (one label for both lines when they are too close for two). */
static void
scatter_tolerance(struct rd *r, const struct audit_view *a, struct rba_buf *b,
		  double ymax)
{
	char n1[REPORT_FIG_MAX], t[REPORT_FIG_MAX + 8];
	double yp, ym;

	svg_line(b, SC_L, sc_y(0, ymax), SC_R, sc_y(0, ymax),
		 "stroke=\"#555\" stroke-width=\"0.8\"");
	if (!(a->tol > 0) || !(a->tol < ymax))
		return;
	yp = sc_y(a->tol, ymax);
	ym = sc_y(-a->tol, ymax);
	svg_line(b, SC_L, yp, SC_R, yp,
		 "class=\"tolerance\" stroke=\"#000\" stroke-dasharray=\"6 3\"");
	svg_line(b, SC_L, ym, SC_R, ym,
		 "class=\"tolerance\" stroke=\"#000\" stroke-dasharray=\"6 3\"");
	num_fig(a->tol, n1);
	notes_exact(&r->notes, "predicate.policy.tolerance.max_score_delta", a->tol, n1);
	if (ym - yp >= 22) {
		snprintf(t, sizeof(t), "+%s", n1);
		label(b, SC_R + 4, yp + 3, "start", 9, t, SC_R + 2, SC_W, NULL);
		snprintf(t, sizeof(t), "\xe2\x88\x92%s", n1);
		label(b, SC_R + 4, ym + 3, "start", 9, t, SC_R + 2, SC_W, NULL);
	} else {
		snprintf(t, sizeof(t), "\xc2\xb1%s", n1);
		label(b, SC_R + 4, (yp + ym) / 2 + 3, "start", 9, t, SC_R + 2, SC_W, NULL);
	}
}

/*
 * Every case of format 3 that does not get a mark of its own, in cells
 * of CELL_W by CELL_H: a cell of one case is that case's open circle at
 * its place, a cell of more a grey rectangle by its count's power of
 * ten (a run of cells of one grey along a row is one rectangle).
 */
static int
scatter_cells(const struct audit_view *a, const unsigned char *own,
	      struct rba_buf *b, double ymax, struct sc_count *c)
{
	size_t *cnt = calloc((size_t)SC_COLS * SC_ROWS, sizeof(*cnt));
	size_t *one = calloc((size_t)SC_COLS * SC_ROWS, sizeof(*one));

	if (cnt == NULL || one == NULL) {
		free(cnt);
		free(one);
		return RBA_E_NOMEM;
	}
	for (size_t i = 0; i < a->npts; i++) {
		const struct pt *q = &a->pts[i];
		int cx, cy;

		if (own[i])
			continue;
		cx = (int)((sc_x(q->s) - SC_L) / CELL_W);
		cy = (int)((sc_y(view_delta(q->r, q->s), ymax) - SC_T) / CELL_H);
		cx = cx < 0 ? 0 : cx >= SC_COLS ? SC_COLS - 1 : cx;
		cy = cy < 0 ? 0 : cy >= SC_ROWS ? SC_ROWS - 1 : cy;
		if (cnt[cy * SC_COLS + cx]++ == 0)
			one[cy * SC_COLS + cx] = i;
		c->flip_binned += q->flip != 0;
		c->near_binned += q->near && !q->flip;
	}
	for (int y = 0; y < SC_ROWS; y++) {
		for (int x = 0; x < SC_COLS;) {
			size_t n = cnt[y * SC_COLS + x], sum = 0;
			int lvl, x0 = x;

			if (n == 0) {
				x++;
				continue;
			}
			if (n == 1) {
				const struct pt *q = &a->pts[one[y * SC_COLS + x]];
				mark_open(b, "case-mark", q->id, q->s, q->r);
				mark_case(b, sc_x(q->s), sc_y(view_delta(q->r, q->s), ymax));
				rba_buf_printf(b, "</g>\n");
				c->singles++;
				x++;
				continue;
			}
			lvl = density_level(n);
			while (x < SC_COLS && cnt[y * SC_COLS + x] > 1 &&
			       density_level(cnt[y * SC_COLS + x]) == lvl) {
				sum += cnt[y * SC_COLS + x];
				c->cells++;
				x++;
			}
			rba_buf_printf(b, "<rect class=\"case-bin\" data-count=\"%zu\" x=\"", sum);
			svg_n(b, SC_L + x0 * CELL_W);
			rba_buf_printf(b, "\" y=\"");
			svg_n(b, SC_T + y * CELL_H);
			rba_buf_printf(b, "\" width=\"");
			svg_n(b, fmin((x - x0) * CELL_W, SC_R - SC_L - x0 * CELL_W));
			rba_buf_printf(b, "\" height=\"");
			svg_n(b, fmin(CELL_H, SC_B - SC_T - y * CELL_H));
			rba_buf_printf(b, "\" fill=\"%s\"/>\n", density_grey[lvl]);
			c->binned += sum;
		}
	}
	free(cnt);
	free(one);
	return 0;
}

static void
scatter_legend(const struct audit_view *a, struct rba_buf *b, char *margin_text)
{
	double y1 = SC_H - 26, y2 = SC_H - 9, x;

	mark_flip(b, SC_L + 6, y1 - 3);
	label(b, SC_L + 16, y1, "start", 9, "flipped case", 0, SC_W, &x);
	svg_line(b, x + 14, y1 - 9, x + 14, y1 + 3, "stroke=\"#000\" stroke-width=\"1.4\"");
	label(b, x + 20, y1, "start", 9, "band edge", 0, SC_W, &x);
	rba_buf_printf(b, "<rect x=\"");
	svg_n(b, x + 12);
	rba_buf_printf(b, "\" y=\"%.0f\" width=\"10\" height=\"10\" fill=\"#808080\" "
			  "fill-opacity=\"0.4\"/>", y1 - 9);
	label(b, x + 26, y1, "start", 9, margin_text, 0, SC_W, &x);
	svg_line(b, x + 12, y1 - 3, x + 34, y1 - 3, "stroke=\"#000\" stroke-dasharray=\"6 3\"");
	label(b, x + 38, y1, "start", 9, "tolerance", 0, SC_W, NULL);
	if (a->case_arr == NULL)
		return;
	mark_case(b, SC_L + 6, y2 - 3);
	label(b, SC_L + 16, y2, "start", 9, "a case", 0, SC_W, &x);
	mark_near(b, x + 14, y2 - 3);
	label(b, x + 22, y2, "start", 9, "near an edge", 0, SC_W, &x);
	x += 16;
	for (int k = 0; k < DENSITY_LEVELS - 1; k++) {
		static const char *const what[DENSITY_LEVELS - 1] = {
			"2-9", "10-99", "100-999", "1000+",
		};
		rba_buf_printf(b, "<rect x=\"");
		svg_n(b, x);
		rba_buf_printf(b, "\" y=\"%.0f\" width=\"10\" height=\"8\" fill=\"%s\"/>",
			       y2 - 8, density_grey[k == DENSITY_LEVELS - 2 ? k + 1 : k]);
		label(b, x + 13, y2, "start", 9, what[k], 0, SC_W, &x);
		x += 8;
	}
	label(b, x, y2, "start", 9, "cases in a cell", 0, SC_W, NULL);
}

static void
scatter_caption(struct rd *r, const struct audit_view *a, const struct sc_count *c,
		struct rba_buf *b)
{
	rba_buf_printf(b, "<p class=\"caption\">Rebuilt minus stored score against "
			  "the stored score. ");
	if (a->argmax)
		rba_buf_printf(b, "The policy decides by argmax: it has no band "
				  "edges. ");
	else {
		rba_buf_printf(b, "Solid lines are the policy's %d band edge%s, the "
				  "grey strips over them the near-threshold margin of ",
			       a->nedges, a->nedges == 1 ? "" : "s");
		html_val(&r->notes, b, "predicate.policy.near_threshold.margin", a->margin);
		rba_buf_printf(b, " on each side (drawn at least 6 units wide). ");
	}
	rba_buf_printf(b, "Dashed lines are the tolerance &#177;");
	html_val(&r->notes, b, "predicate.policy.tolerance.max_score_delta", a->tol);
	if (a->case_arr != NULL) {
		rba_buf_printf(b, ". Every one of the evidence's ");
		html_count(b, a->cases);
		rba_buf_printf(b, " case%s is drawn: a ringed cross when the policy "
				  "decides its rebuilt score otherwise than its stored "
				  "decision (%zu flipped), a filled diamond when its "
				  "stored score lies within the margin of an edge (%zu), "
				  "each with a mark of its own",
			       a->cases == 1 ? "" : "s", a->nflip_pts, a->nnear_pts);
		if (c->flip_binned + c->near_binned > 0)
			rba_buf_printf(b, " up to %d of each (the other %zu flipped and "
					  "%zu near-threshold cases are in the grey "
					  "cells)",
				       REPORT_MARKS_MAX, c->flip_binned, c->near_binned);
		rba_buf_printf(b, "; of the others, %zu %s drawn as an open circle "
				  "and %zu, whose marks would overlap, as grey cells "
				  "(%zu of them, of %.0f by %.0f units), darker as they "
				  "hold more cases.</p>\n",
			       c->singles, c->singles == 1 ? "is" : "are", c->binned,
			       c->cells, CELL_W, CELL_H);
		return;
	}
	rba_buf_printf(b, ". The evidence lists ");
	html_count(b, a->listed);
	rba_buf_printf(b, " of its ");
	html_count(b, a->flips);
	rba_buf_printf(b, " flipped case%s, each marked with a ringed cross at its "
			  "two scores",
		       a->flips == 1 ? "" : "s");
	if (c->flip_marks < (a->flipped != NULL ? a->flipped->n : 0))
		rba_buf_printf(b, " (the first %zu)", c->flip_marks);
	rba_buf_printf(b, "; of the other cases it states only counts and the "
			  "largest |delta|, ");
	html_val_side(&r->notes, b, "predicate.results.max_score_delta", a->max_delta,
		      a->tol);
	rba_buf_printf(b, ", so they are not drawn one by one%s.</p>\n",
		       a->max_delta == 0 ? " (that largest |delta| is 0: every "
					   "case lies on the zero line)" : "");
}

void
view_scatter(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	char t[160], n1[REPORT_FIG_MAX];
	double ymax = scatter_ymax(r, a);
	size_t nf = a->flipped != NULL ? a->flipped->n : 0;
	unsigned char *own = calloc(a->npts ? a->npts : 1, 1);
	struct sc_count c;

	memset(&c, 0, sizeof(c));
	if (own == NULL) {
		r->notes.nomem = 1;
		return;
	}
	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"scatter\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
			  "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"rebuilt "
			  "minus stored score against stored score\">\n",
		       SC_W, SC_H, SC_W, SC_H);
	rba_buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
			  "fill=\"#fff\" stroke=\"#000\"/>\n",
		       SC_L, SC_T, SC_R - SC_L, SC_B - SC_T);
	scatter_axes(b, ymax);
	/* which cases get a mark of their own: flipped ones first, then
	 * near-threshold ones, up to REPORT_MARKS_MAX of each */
	for (size_t i = 0; i < a->npts; i++) {
		const struct pt *q = &a->pts[i];
		if (q->flip && c.flip_marks < REPORT_MARKS_MAX) {
			own[i] = 1;
			c.flip_marks++;
		} else if (q->near && !q->flip && c.near_marks < REPORT_MARKS_MAX) {
			own[i] = 2;
			c.near_marks++;
		}
	}
	if (a->npts > 0 && scatter_cells(a, own, b, ymax, &c) != 0)
		r->notes.nomem = 1;
	scatter_edges(r, a, b);
	scatter_tolerance(r, a, b, ymax);
	if (a->max_delta == 0 && nf == 0 && a->case_arr == NULL) {
		num_fig(a->cases, n1);
		snprintf(t, sizeof(t), "all %s cases: rebuilt - stored = 0", n1);
		label(b, (SC_L + SC_R) / 2, sc_y(0, ymax) - 6, "middle", 10, t, SC_L, SC_R,
		      NULL);
	}
	for (int pass = 2; pass >= 1; pass--)
		for (size_t i = 0; i < a->npts; i++) {
			const struct pt *q = &a->pts[i];
			double x = sc_x(q->s), y = sc_y(view_delta(q->r, q->s), ymax);

			if (own[i] != pass)
				continue;
			mark_open(b, pass == 1 ? "flip-mark" : "near-mark", q->id, q->s, q->r);
			if (pass == 1)
				mark_flip(b, x, y);
			else
				mark_near(b, x, y);
			rba_buf_printf(b, "</g>\n");
		}
	/* the flipped cases listed (formats 1 and 2) */
	for (size_t i = 0; i < nf && a->case_arr == NULL && i < REPORT_MARKS_MAX; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		double s = rd_num(r, f, "stored_score"), rs = rd_num(r, f, "rebuilt_score");

		mark_open(b, "flip-mark", rd_str(r, f, "id"), s, rs);
		mark_flip(b, sc_x(s), sc_y(view_delta(rs, s), ymax));
		rba_buf_printf(b, "</g>\n");
		c.flip_marks++;
	}
	num_fig(a->margin, n1);
	snprintf(t, sizeof(t), "near-threshold margin (%s)", n1);
	scatter_legend(a, b, t);
	rba_buf_printf(b, "</svg>\n");
	scatter_caption(r, a, &c, b);
	rba_buf_printf(b, "</div>\n");
	free(own);
}

/* ---- |delta| --------------------------------------------------------- */

#define HIST_MAX_BINS 48

/* The histogram's frame, its bins and its count axis, shared by its steps. */
struct hist {
	double W, L, R, T, B, H;	/* width; plot left, right, top, bottom; height */
	size_t bins[HIST_MAX_BINS], nb;	/* the counts, and how many bins */
	size_t top;			/* the largest count */
	size_t zero;			/* the cases exactly 0 */
	double w, xr;			/* the bins' width; the |delta| axis' end */
	double step, ytop;		/* the count axis' step and top */
};

#define HX(v) (h->L + (v) / h->xr * (h->R - h->L))
#define HY(c) (h->B - (c) / h->ytop * (h->B - h->T))

/*
 * The bins: a round width from 0 to a little over the largest of
 * |delta| and the tolerance, at most HIST_MAX_BINS; the count axis.
 */
static void
hist_fill(struct hist *h, const struct audit_view *a)
{
	double xmax = fmax(a->tol, fabs(a->max_delta)), first;

	for (size_t i = 0; i < a->npts; i++) {
		double dl = fabs(view_delta(a->pts[i].r, a->pts[i].s));
		if (isfinite(dl))
			xmax = fmax(xmax, dl);
	}
	if (!(xmax > 0) || !isfinite(xmax))
		xmax = 1e-3;
	h->w = nice_step(0, xmax, 20, &first);
	if (!(h->w > 0) || !(xmax / h->w < HIST_MAX_BINS * 4))
		h->w = xmax; /* (a span too small for a step: one bin) */
	h->nb = (size_t)floor(xmax / h->w) + 1;
	while (h->nb > HIST_MAX_BINS) {
		h->w *= 2;
		h->nb = (size_t)floor(xmax / h->w) + 1;
	}
	h->xr = (double)h->nb * h->w;
	for (size_t i = 0; i < a->npts; i++) {
		double dl = fabs(view_delta(a->pts[i].r, a->pts[i].s));
		size_t k;
		if (!isfinite(dl))
			continue;
		h->zero += dl == 0;
		k = (size_t)(dl / h->w);
		h->bins[k >= h->nb ? h->nb - 1 : k]++;
	}
	for (size_t k = 0; k < h->nb; k++)
		if (h->bins[k] > h->top)
			h->top = h->bins[k];
	h->step = nice_step(0, (double)h->top, 4, &first);
	h->ytop = h->step > 0 ? ceil((double)h->top / h->step) * h->step
			      : (double)h->top;
	if (!(h->ytop >= (double)h->top))
		h->ytop = (double)h->top;
}

/* The frame: the count axis, the bars, the |delta| axis. */
static void
hist_axes(const struct hist *h, struct rba_buf *b)
{
	double first;
	char n1[REPORT_FIG_MAX];

	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"delta\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
			  "width=\"%.0f\" height=\"%.0f\" role=\"img\" "
			  "aria-label=\"the distribution of |delta| against the "
			  "tolerance\">\n", h->W, h->H, h->W, h->H);
	/* the count axis */
	for (int k = 0; h->step > 0 && k <= 20; k++) {
		double v = k * h->step;
		if (v > h->ytop + h->step * 1e-9)
			break;
		svg_line(b, h->L - 4, HY(v), h->L, HY(v), "stroke=\"#000\"");
		if (k > 0)
			svg_line(b, h->L, HY(v), h->R, HY(v),
				 "stroke=\"#e2e2e2\" stroke-width=\"0.6\"");
		num_fig(v, n1);
		label(b, h->L - 6, HY(v) + 3, "end", 9, n1, 0, h->L - 6, NULL);
	}
	svg_line(b, h->L, h->T, h->L, h->B, "stroke=\"#000\"");
	for (size_t k = 0; k < h->nb; k++) {
		double x = HX((double)k * h->w), bw = (h->R - h->L) / (double)h->nb;
		double y = HY((double)h->bins[k]);

		rba_buf_printf(b, "<rect class=\"bin\" data-count=\"%zu\" x=\"", h->bins[k]);
		svg_n(b, x + 1);
		rba_buf_printf(b, "\" y=\"");
		svg_n(b, y);
		rba_buf_printf(b, "\" width=\"");
		svg_n(b, bw - 2);
		rba_buf_printf(b, "\" height=\"");
		svg_n(b, h->B - y);
		rba_buf_printf(b, "\" fill=\"#888\" stroke=\"#000\" stroke-width=\"0.6\"/>");
	}
	svg_line(b, h->L, h->B, h->R, h->B, "stroke=\"#000\"");
	{
		double xs = nice_step(0, h->xr, 5, &first);
		for (int k = 0; xs > 0 && k <= 20; k++) {
			double v = k * xs;
			if (v > h->xr * (1 + 1e-9))
				break;
			svg_line(b, HX(v), h->B, HX(v), h->B + 4, "stroke=\"#000\"");
			num_fig(v, n1);
			label(b, HX(v), h->B + 14, "middle", 9, n1, 0, h->W, NULL);
		}
	}
	label(b, (h->L + h->R) / 2, h->B + 30, "middle", 10,
	      "|rebuilt - stored| (score); cases per bin at the left", 0, h->W, NULL);
}

/* The tolerance, dashed, labelled on the side where its label fits. */
static void
hist_tolerance(const struct hist *h, const struct audit_view *a,
	       struct rba_buf *b)
{
	char t[120], n1[REPORT_FIG_MAX];

	if (a->tol <= h->xr) {
		double x = HX(a->tol), right;
		rba_buf_printf(b, "<g class=\"tolerance-line\">");
		svg_line(b, x, h->T - 10, x, h->B + 4,
			 "stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"");
		num_fig(a->tol, n1);
		snprintf(t, sizeof(t), "tolerance %s", n1);
		/* right of the line, or left of it when it would not fit */
		if (x + 4 + svg_text_width(t, strlen(t), 9) <= h->W)
			label(b, x + 4, h->T - 14, "start", 9, t, 0, h->W, &right);
		else
			label(b, x - 4, h->T - 14, "end", 9, t, 0, h->W, &right);
		rba_buf_printf(b, "</g>\n");
	}
}

/* The counts over the bars, where they fit: how many did not. */
static size_t
hist_counts(const struct hist *h, struct rba_buf *b)
{
	size_t omitted = 0;
	char t[120];

	for (size_t k = 0; k < h->nb; k++) {
		double x = HX((double)k * h->w), bw = (h->R - h->L) / (double)h->nb;
		double y = HY((double)h->bins[k]);

		if (h->bins[k] == 0)
			continue;
		snprintf(t, sizeof(t), "%zu", h->bins[k]);
		if (svg_text_width(t, strlen(t), 7) <= bw - 1)
			svg_label(b, x + bw / 2, y - 2, "middle", 7, t, strlen(t), x, x + bw,
				  "halo", 0, NULL);
		else
			omitted++;
	}
	return omitted;
}

#undef HX
#undef HY

/* The caption, and the table of the bins too narrow for their count. */
static void
hist_caption(struct rd *r, const struct audit_view *a, const struct hist *h,
	     size_t omitted, struct rba_buf *b)
{
	rba_buf_printf(b, "<p class=\"caption\">|delta| of every one of the ");
	html_count(b, a->cases);
	rba_buf_printf(b, " case%s in %zu bin%s of width ", a->cases == 1 ? "" : "s",
		       h->nb, h->nb == 1 ? "" : "s");
	html_fig(b, h->w);
	rba_buf_printf(b, ", the first from 0 (%zu case%s exactly 0); the dashed line "
			  "is the %s tolerance ", h->zero, h->zero == 1 ? "" : "s",
		       a->ad_hoc ? "ad hoc" : "declared");
	html_val(&r->notes, b, "predicate.policy.tolerance.max_score_delta", a->tol);
	rba_buf_printf(b, "; the largest |delta| is ");
	html_val_side(&r->notes, b, "predicate.results.max_score_delta", a->max_delta,
		      a->tol);
	rba_buf_printf(b, ".%s</p>\n</div>\n",
		       omitted ? " Bins too narrow for their count are in the "
				 "table below." : "");
	if (omitted == 0)
		return;
	table_open(b, "delta-bins", "|delta| from|below|cases");
	for (size_t k = 0; k < h->nb; k++) {
		if (h->bins[k] == 0)
			continue;
		rba_buf_printf(b, "<tr><td class=\"n\">");
		html_fig(b, (double)k * h->w);
		rba_buf_printf(b, "</td><td class=\"n\">");
		if (k + 1 == h->nb)
			rba_buf_printf(b, "and above");
		else
			html_fig(b, (double)(k + 1) * h->w);
		rba_buf_printf(b, "</td><td class=\"n\">%zu</td></tr>\n", h->bins[k]);
	}
	table_close(b);
}

/* Format 3: the histogram of every case's |delta|, in bins of a round
 * width from 0 to a little over the largest of |delta| and the
 * tolerance, with a count axis; the bins too narrow for their count
 * are listed in a table below it. */
static void
histogram(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	struct hist h = { .W = 640, .L = 66, .R = 600, .T = 34, .B = 140, .H = 184,
			  .top = 1 };
	size_t omitted;

	hist_fill(&h, a);
	hist_axes(&h, b);
	hist_tolerance(&h, a, b);
	omitted = hist_counts(&h, b);
	rba_buf_printf(b, "</svg>\n");
	hist_caption(r, a, &h, omitted, b);
}

void
view_delta_picture(struct rd *r, const struct audit_view *a,
		   const struct rba_json_value *mcase, struct rba_buf *b)
{
	const double W = 640, L = 66, R = 600, Y = 50;
	double xmax = fmax(a->tol, fabs(a->max_delta)), first, xs;
	size_t nf = a->flipped != NULL ? a->flipped->n : 0;
	char t[200], n1[REPORT_FIG_MAX];

	if (a->case_arr != NULL) {
		histogram(r, a, b);
		return;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		double dl = fabs(view_delta(rd_num(r, f, "rebuilt_score"),
					    rd_num(r, f, "stored_score")));
		if (isfinite(dl))
			xmax = fmax(xmax, dl);
	}
	if (!(xmax > 0) || !isfinite(xmax))
		xmax = 1e-3;
	xmax *= 1.15;
#define DX(v) (L + fmin(fabs(v), xmax) / xmax * (R - L))
	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"delta\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 116\" "
			  "width=\"640\" height=\"116\" role=\"img\" "
			  "aria-label=\"|delta| against the tolerance\">\n");
	svg_line(b, L, Y, R, Y, "stroke=\"#000\"");
	xs = nice_step(0, xmax, 5, &first);
	for (int k = 0; xs > 0 && k <= 20; k++) {
		double v = k * xs;
		if (v > xmax)
			break;
		svg_line(b, DX(v), Y, DX(v), Y + 4, "stroke=\"#000\"");
		num_fig(v, n1);
		label(b, DX(v), Y + 14, "middle", 9, n1, 0, W, NULL);
	}
	label(b, (L + R) / 2, Y + 30, "middle", 10, "|rebuilt - stored| (score)", 0, W,
	      NULL);
	/* the tolerance */
	rba_buf_printf(b, "<g class=\"tolerance-line\">");
	svg_line(b, DX(a->tol), 14, DX(a->tol), Y + 4,
		 "stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"");
	num_fig(a->tol, n1);
	notes_exact(&r->notes, "predicate.policy.tolerance.max_score_delta", a->tol, n1);
	snprintf(t, sizeof(t), "tolerance %s", n1);
	label(b, DX(a->tol), 10, "middle", 9, t, 0, W, NULL);
	rba_buf_printf(b, "</g>\n");
	/* every case lies at or left of the largest |delta| */
	rba_buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"", L, Y - 6);
	svg_n(b, fmax(DX(a->max_delta) - L, 1.5));
	rba_buf_printf(b, "\" height=\"6\" fill=\"#555\"/>");
	rba_buf_printf(b, "<path class=\"max-delta\" d=\"M");
	svg_n(b, DX(a->max_delta));
	rba_buf_printf(b, " %.0f l5 8 l-5 8 l-5 -8 z\" fill=\"#000\"/>", Y + 36);
	num_fig_side(a->max_delta, a->tol, n1);
	notes_exact(&r->notes, "predicate.results.max_score_delta", a->max_delta, n1);
	snprintf(t, sizeof(t), "largest %s", n1);
	label(b, DX(a->max_delta), Y + 62, "middle", 9, t, 0, W, NULL);
	for (size_t i = 0; i < nf && i < REPORT_MARKS_MAX; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		double dl = view_delta(rd_num(r, f, "rebuilt_score"),
				       rd_num(r, f, "stored_score"));
		rba_buf_printf(b, "<g class=\"flip-delta\">");
		mark_flip(b, DX(dl), Y - 14);
		rba_buf_printf(b, "</g>");
	}
	rba_buf_printf(b, "</svg>\n");
#undef DX
	rba_buf_printf(b, "<p class=\"caption\">The distribution of |delta| as "
			  "far as the evidence states it: every one of the ");
	html_count(b, a->cases);
	rba_buf_printf(b, " case%s lies in the dark bar, from 0 to the largest "
			  "|delta| ", a->cases == 1 ? "" : "s");
	html_val_side(&r->notes, b, "predicate.results.max_score_delta", a->max_delta,
		      a->tol);
	rba_buf_printf(b, " (case ");
	html_sv(b, mcase);
	rba_buf_printf(b, ", the diamond); the dashed line is the %s "
			  "tolerance ", a->ad_hoc ? "ad hoc" : "declared");
	html_val(&r->notes, b, "predicate.policy.tolerance.max_score_delta", a->tol);
	rba_buf_printf(b, "; ringed crosses are the listed flipped cases.</p>\n"
			  "</div>\n");
}
