/*
 * report_view.h - the audit page's reading of its evidence, shared by
 * report_audit.c (the page, its summary and tables) and report_plot.c
 * (its pictures); not a public header.
 */
#ifndef RBA_REPORT_VIEW_H
#define RBA_REPORT_VIEW_H

#include <stddef.h>

#include "report/report_priv.h"

#define VIEW_MAX_EDGES 64

/* One case of format 3 as drawn. */
struct pt {
	const struct rba_json_value *id, *sdec;
	double s, r;
	double sm, edge; /* the stored score's distance to the nearest edge */
	const char *rdec;
	int flip, near, weak;
	int sband, rband; /* band of the stored and rebuilt decision; -1 other */
};

/* What the page needs of the evidence, read once. */
struct audit_view {
	const struct rba_json_value *version, *verdict, *time, *flipped;
	/* format 3: every case, and what the page computes of each under
	 * the policy (the flip and near-threshold marks) */
	const struct rba_json_value *case_arr;
	struct pt *pts;
	size_t npts, nflip_pts, nnear_pts, nweak_pts;
	double id, cases, flips, max_delta, tol, tol_flips, margin, near, weak;
	double listed;
	double edges[VIEW_MAX_EDGES];
	const char *band_names[VIEW_MAX_EDGES + 1];
	int nedges, argmax;
	/* An ad hoc audit (judged by a policy given for it, not the one
	 * declared for the version): every sentence of the page says so. */
	int ad_hoc;
	struct policy *pol;
};

/*
 * The score change of a case as the audit measures it: the rebuilt score
 * minus the stored one at binary32, the model's precision (a logged
 * number rounded to its nearest float first: doc/design.md 8.2).
 */
double view_delta(double rebuilt, double stored);

/*
 * The pictures (report_plot.c).  view_scatter: rebuilt minus stored
 * score against the stored score, with its caption; every case of
 * format 3 drawn, one by one where marks would not overlap and as
 * density (grey cells by count) where they would, every flipped and
 * near-threshold case one by one up to REPORT_MARKS_MAX of each.
 * view_delta_picture: |delta| against the tolerance (a histogram of
 * every case in format 3), with its caption.
 */
void view_scatter(struct rd *r, const struct audit_view *a, struct rba_buf *b);
void view_delta_picture(struct rd *r, const struct audit_view *a,
			const struct rba_json_value *mcase, struct rba_buf *b);

#endif
