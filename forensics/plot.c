/*
 * plot.c - the SVG of one or two sweeps (plot.h).
 */
#include "forensics/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/fileio.h"

static void
svg_polyline(struct rba_buf *b, const double *v, uint32_t n, double x0,
	     double w, double y0, double h, double lo, double hi,
	     const char *color, double width)
{
	rba_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" "
			  "stroke-width=\"%.1f\" points=\"",
		       color, width);
	for (uint32_t e = 0; e < n; e++) {
		double x = x0 + (n > 1 ? w * e / (n - 1) : w / 2);
		double y = y0 + h - (isfinite(v[e]) ? (v[e] - lo) / (hi - lo) : 0) * h;
		rba_buf_printf(b, "%s%.2f,%.2f", e ? " " : "", x, y);
	}
	rba_buf_printf(b, "\"/>\n");
}

/* The geometry: the page, the curves' panel, the deltas' panel. */
static const double W = 720, H = 520, X0 = 60, PW = 620, Y0 = 40, PH = 250;
static const double DY0 = 340, DH = 130;

/* The range of every finite validation loss of both sweeps. */
static void
loss_range(const struct fx_sweep *base, const struct fx_sweep *cand,
	   double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (int s = 0; s < 2; s++) {
		const struct fx_sweep *sw = s ? cand : base;
		for (size_t i = 0; sw && i < sw->n; i++)
			for (uint32_t e = 0; e < sw->runs[i].epochs; e++) {
				double x = sw->runs[i].curve[e].val_loss;
				if (isfinite(x)) {
					*lo = x < *lo ? x : *lo;
					*hi = x > *hi ? x : *hi;
				}
			}
	}
	if (!(*hi > *lo))
		*hi = *lo + 1.0;
}

/* The baseline band: min..max over its seeds at each of E epochs. */
static void
plot_band(struct rba_buf *b, const struct fx_sweep *base, uint32_t E,
	  double lo, double hi, double *bl, double *bh)
{
	for (uint32_t e = 0; e < E; e++) {
		bl[e] = INFINITY;
		bh[e] = -INFINITY;
		for (size_t i = 0; i < base->n; i++)
			if (e < base->runs[i].epochs) {
				double x = base->runs[i].curve[e].val_loss;
				bl[e] = x < bl[e] ? x : bl[e];
				bh[e] = x > bh[e] ? x : bh[e];
			}
	}
	rba_buf_printf(b, "<polygon fill=\"#1f77b4\" fill-opacity=\"0.15\" "
			  "stroke=\"none\" points=\"");
	for (uint32_t e = 0; e < E; e++)
		rba_buf_printf(b, "%.2f,%.2f ",
			       X0 + (E > 1 ? PW * e / (E - 1) : PW / 2),
			       Y0 + PH - (bh[e] - lo) / (hi - lo) * PH);
	for (uint32_t e = E; e-- > 0;)
		rba_buf_printf(b, "%.2f,%.2f ",
			       X0 + (E > 1 ? PW * e / (E - 1) : PW / 2),
			       Y0 + PH - (bl[e] - lo) / (hi - lo) * PH);
	rba_buf_printf(b, "\"/>\n");
}

/* Every seed's curve, base blue and cand red, then the panel's frame. */
static void
plot_curves(struct rba_buf *b, const struct fx_sweep *base,
	    const struct fx_sweep *cand, uint32_t E, double lo, double hi,
	    double *v)
{
	for (int s = 0; s < 2; s++) {
		const struct fx_sweep *sw = s ? cand : base;
		for (size_t i = 0; sw && i < sw->n; i++) {
			const struct rebuild_runrec *r = &sw->runs[i];
			for (uint32_t e = 0; e < r->epochs && e < E; e++)
				v[e] = r->curve[e].val_loss;
			svg_polyline(b, v, r->epochs < E ? r->epochs : E, X0,
				     PW, Y0, PH, lo, hi,
				     s ? "#d62728" : "#1f77b4", 1.2);
		}
	}
	rba_buf_printf(b,
		       "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
		       "fill=\"none\" stroke=\"black\"/>\n"
		       "<text x=\"4\" y=\"%.0f\" font-family=\"sans-serif\" "
		       "font-size=\"11\">%.4g</text>\n"
		       "<text x=\"4\" y=\"%.0f\" font-family=\"sans-serif\" "
		       "font-size=\"11\">%.4g</text>\n",
		       X0, Y0, PW, PH, Y0 + 10, hi, Y0 + PH, lo);
}

/* The paired deltas of val_loss by seed (as many seeds on each side). */
static void
plot_deltas(struct rba_buf *b, const struct fx_sweep *base,
	    const struct fx_sweep *cand)
{
	double dmax = 0;

	for (size_t i = 0; i < base->n; i++) {
		double dd = fabs(cand->runs[i].eval_loss - base->runs[i].eval_loss);
		dmax = isfinite(dd) && dd > dmax ? dd : dmax;
	}
	if (dmax == 0)
		dmax = 1;
	rba_buf_printf(b,
		       "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" "
		       "font-size=\"14\">paired deltas of val_loss "
		       "(candidate - baseline) by seed; red: worse</text>\n"
		       "<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" y2=\"%.2f\" "
		       "stroke=\"black\"/>\n",
		       X0, DY0 - 10, X0, DY0 + DH / 2, X0 + PW, DY0 + DH / 2);
	for (size_t i = 0; i < base->n; i++) {
		double dd = cand->runs[i].eval_loss - base->runs[i].eval_loss;
		double bw = PW / (double)base->n;
		double hgt = isfinite(dd) ? fabs(dd) / dmax * DH / 2 : 0;
		rba_buf_printf(b,
			       "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			       "height=\"%.2f\" fill=\"%s\"/>\n",
			       X0 + bw * i + bw * 0.15,
			       dd > 0 ? DY0 + DH / 2 - hgt : DY0 + DH / 2,
			       bw * 0.7, hgt, dd > 0 ? "#d62728" : "#2ca02c");
	}
}

int
fx_plot_write(const char *path, const struct fx_sweep *base,
	      const struct fx_sweep *cand, int flags, struct rba_detail *d)
{
	uint32_t E = base->runs[0].epochs;
	double lo, hi, *v, *bl, *bh;
	struct rba_buf b;
	int err;

	v = calloc(E ? E : 1, sizeof(double));
	bl = calloc(E ? E : 1, sizeof(double));
	bh = calloc(E ? E : 1, sizeof(double));
	if (v == NULL || bl == NULL || bh == NULL) {
		free(v), free(bl), free(bh);
		return RBA_E_NOMEM;
	}
	rba_buf_init(&b);
	loss_range(base, cand, &lo, &hi);
	rba_buf_printf(&b,
		       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		       "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
		       "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		       "<text x=\"%.0f\" y=\"24\" font-family=\"sans-serif\" "
		       "font-size=\"14\">validation loss by epoch: each seed; "
		       "band: baseline min..max</text>\n",
		       W, H, W, H, X0);
	plot_band(&b, base, E, lo, hi, bl, bh);
	plot_curves(&b, base, cand, E, lo, hi, v);
	if (cand != NULL && cand->n == base->n)
		plot_deltas(&b, base, cand);
	rba_buf_printf(&b, "</svg>\n");
	free(v);
	free(bl);
	free(bh);
	err = rba_buf_status(&b);
	if (err == 0)
		err = rba_file_write_output(path, b.p, b.len, 0644, flags, NULL, d);
	rba_buf_release(&b);
	return err;
}

int
fx_plot_check(const char *path, int flags, struct rba_detail *d)
{
	struct stat st;

	if (strcmp(path, "-") == 0)
		return rba_fail(d, RBA_E_USAGE, path, 0, 0, "standard output "
				"carries the report here: name a file");
	/* A device or a FIFO is opened by the write alone: opening a FIFO
	 * now would wait for its reader before the work began. */
	if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		return 0;
	return rba_output_check(path, flags, d);
}
