/*
 * report_history.c - the page of a store's audit history: every
 * version's audits over time, and the guarantee the history supports
 * per version and for the store, in words an organisation can publish.
 *
 * The guarantee is never stronger than the weakest scheduled audit of
 * its period (bit-identical, then metric-equivalent, then a failure:
 * not-reproducible or not-measured, after which only the audits since
 * the last failure support one), and it names every failure and every
 * gap in the schedule (report.h: REPORT_GAP_FACTOR).  Ad hoc audits
 * (judged by a policy given for the occasion) are drawn but are not the
 * version's audits: they support nothing.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_priv.h"
#include "audit/record.h"
#include "evidence/evidence.h"
#include "policy/policy.h"
#include "common/rbatime.h"
#include "store/store.h"

/* ---- the summary, a pure function of the audits ----------------------- */

static int
verdict_rank(const char *v)
{
	return strcmp(v, "bit-identical") == 0	       ? 0
	       : strcmp(v, "metric-equivalent") == 0 ? 1
	       : strcmp(v, "not-reproducible") == 0  ? 2
						       : 3;
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* By time, then by record id (the chain's order within one second). */
static int
audit_time_cmp(const void *pa, const void *pb)
{
	const struct report_audit *x = pa, *y = pb;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void
say(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void
say(char *out, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(out);
	va_list ap;

	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(out + n, cap - n, fmt, ap);
	va_end(ap);
}

static void duration(double sec, char *out, size_t cap);

static void
day(int64_t t, char out[RBA_TIME_TEXT_MAX])
{
	rba_time_utc(t, out);
}

/* The tolerance the audits a[0..n) were judged by, in words. */
static void
tolerance_words(const struct report_audit *a, size_t n, char *out, size_t cap)
{
	char tn[RBA_JSON_NUM_MAX];
	double loosest = -1;
	size_t distinct = 0;
	int unknown = 0;

	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		if (a[i].declared_at[0] == '\0')
			unknown = 1;
		for (size_t j = 0; j < i; j++)
			if (strcmp(a[j].declared_at, a[i].declared_at) == 0 &&
			    a[j].tolerance == a[i].tolerance)
				seen = 1;
		distinct += !seen;
		if (a[i].tolerance > loosest)
			loosest = a[i].tolerance;
	}
	rba_json_fmt_double(loosest, tn);
	if (distinct == 1 && !unknown)
		say(out, cap, "the tolerance declared on %s (a score within %s)",
		    a[0].declared_at, tn);
	else if (unknown)
		say(out, cap, "the tolerance in force at each audit (%s not "
		    "recorded for some; the loosest a score within %s)",
		    "when it was declared is", tn);
	else {
		say(out, cap, "the tolerance in force at each audit (declared on ");
		for (size_t i = 0, k = 0; i < n; i++) {
			int seen = 0;
			for (size_t j = 0; j < i; j++)
				if (strcmp(a[j].declared_at, a[i].declared_at) == 0 &&
				    a[j].tolerance == a[i].tolerance)
					seen = 1;
			if (!seen)
				say(out, cap, "%s%s", k++ ? ", " : "", a[i].declared_at);
		}
		say(out, cap, "; the loosest a score within %s)", tn);
	}
}

/* The sentence for a run a[0..n) of scheduled audits without failure
 * (n > 0), "over these ..." without a final period. */
static void
run_sentence(const struct report_audit *a, size_t n, const char *what,
	     char *out, size_t cap)
{
	char t0[RBA_TIME_TEXT_MAX], t1[RBA_TIME_TEXT_MAX];
	double flips = 0;
	int all_bit = 1;

	for (size_t i = 0; i < n; i++) {
		flips += a[i].flips;
		all_bit &= verdict_rank(a[i].verdict) == 0;
	}
	day(a[0].time, t0);
	day(a[n - 1].time, t1);
	if (n == 1)
		say(out, cap, "at the one scheduled rebuild%s on %s, ", what, t0);
	else
		say(out, cap, "over these %zu scheduled rebuilds%s between %s and %s, ",
		    n, what, t0, t1);
	if (all_bit) {
		say(out, cap, "every rebuild was bit-identical to its pinned "
		    "artifact: every decision on the audit sample was reproduced "
		    "and every score was the same, bit for bit");
		return;
	}
	if (flips == 0)
		say(out, cap, "every decision on the audit sample was reproduced and "
		    "every score was within ");
	else
		say(out, cap, "every decision on the audit sample%s was reproduced "
		    "but for %.0f flip%s the policy tolerates, and every score was "
		    "within ", n == 1 ? "" : "s", flips, flips == 1 ? "" : "s");
	tolerance_words(a, n, out, cap);
}

/* A duration in words: seconds, hours or days. */
static void
duration(double sec, char *out, size_t cap)
{
	if (sec >= 86400)
		snprintf(out, cap, "%.1f days", sec / 86400);
	else if (sec >= 3600)
		snprintf(out, cap, "%.1f hours", sec / 3600);
	else
		snprintf(out, cap, "%.0f s", sec);
}

/* The sentence of a history with failures: each failure (the first
 * eight), then what the scheduled audits since the last one support. */
static void
failures_sentence(const struct report_audit *a, size_t n, const char *what,
		  size_t last_fail, struct report_summary *s)
{
	char t0[RBA_TIME_TEXT_MAX], t1[RBA_TIME_TEXT_MAX];
	size_t shown = 0;

	day(a[0].time, t0);
	day(a[n - 1].time, t1);
	if (n == 1)
		say(s->guarantee, sizeof(s->guarantee), "at the one scheduled "
		    "rebuild%s on %s the history supports no guarantee: it "
		    "failed (", what, t0);
	else
		say(s->guarantee, sizeof(s->guarantee), "over these %zu scheduled "
		    "rebuilds%s between %s and %s the history supports no "
		    "guarantee: %zu failed (", n, what, t0, t1, s->failures);
	for (size_t i = 0; i < n; i++) {
		char t[RBA_TIME_TEXT_MAX];
		if (verdict_rank(a[i].verdict) < 2)
			continue;
		if (shown == 8) {
			say(s->guarantee, sizeof(s->guarantee), ", and %zu more",
			    s->failures - shown);
			break;
		}
		day(a[i].time, t);
		say(s->guarantee, sizeof(s->guarantee), "%s%s on %s, record %llu%s%s",
		    shown++ ? "; " : "", a[i].verdict, t,
		    (unsigned long long)a[i].id, a[i].version[0] ? ", " : "",
		    a[i].version);
	}
	say(s->guarantee, sizeof(s->guarantee), ")");
	if (last_fail + 1 < n) {
		say(s->guarantee, sizeof(s->guarantee), "; since the last failure, ");
		run_sentence(a + last_fail + 1, n - last_fail - 1, what,
			     s->guarantee, sizeof(s->guarantee));
	} else {
		say(s->guarantee, sizeof(s->guarantee), "; the latest scheduled "
		    "rebuild failed: none since supports one");
	}
	say(s->guarantee, sizeof(s->guarantee), ".");
}

/* The guarantee of the scheduled audits a[0..n) (n > 0), in their order. */
static void
history_sentence(const struct report_audit *a, size_t n, const char *what,
		 struct report_summary *s)
{
	size_t last_fail = SIZE_MAX;

	s->first = a[0].time;
	s->last = a[n - 1].time;
	for (size_t i = 0; i < n; i++)
		if (verdict_rank(a[i].verdict) >= 2) {
			s->failures++;
			last_fail = i;
		}
	if (s->failures == 0) {
		run_sentence(a, n, what, s->guarantee, sizeof(s->guarantee));
		say(s->guarantee, sizeof(s->guarantee), ".");
	} else {
		failures_sentence(a, n, what, last_fail, s);
	}
}

/* The gaps of the schedule, and how overdue the next audit is at NOW. */
static void
schedule_gaps(const struct report_audit *a, size_t n, int64_t now,
	      struct report_summary *s)
{
	double *iv = NULL;

	/* The schedule: a gap is an interval between consecutive scheduled
	 * audits longer than REPORT_GAP_FACTOR times the median interval;
	 * with fewer than two intervals there is no median to judge by. */
	if (n >= 3 && (iv = malloc((n - 1) * sizeof(*iv))) != NULL) {
		double med;
		for (size_t i = 1; i < n; i++)
			iv[i - 1] = (double)(a[i].time - a[i - 1].time);
		qsort(iv, n - 1, sizeof(*iv), dbl_cmp);
		med = (n - 1) % 2 ? iv[(n - 1) / 2]
				  : (iv[(n - 1) / 2 - 1] + iv[(n - 1) / 2]) / 2;
		s->median = med;
		s->has_median = 1;
		for (size_t i = 1; i < n; i++) {
			double g = (double)(a[i].time - a[i - 1].time);
			if (g > REPORT_GAP_FACTOR * med && med > 0) {
				if (s->ngaps < REPORT_MAX_GAPS) {
					s->gap_from[s->ngaps] = a[i - 1].time;
					s->gap_to[s->ngaps] = a[i].time;
				}
				s->ngaps++;
			}
		}
	}
	/* and the time since the last one, when the page says when it was
	 * made */
	if (s->has_median && now > 0 && s->median > 0 &&
	    (double)(now - s->last) > REPORT_GAP_FACTOR * s->median)
		s->overdue = now - s->last;
	free(iv);
}

/* The schedule's gaps and its overdue audit, said after the guarantee. */
static void
schedule_sentence(struct report_summary *s)
{
	char t0[RBA_TIME_TEXT_MAX], t1[RBA_TIME_TEXT_MAX], du[32], md[32];

	duration(s->median, md, sizeof(md));
	say(s->guarantee, sizeof(s->guarantee), " The schedule (a scheduled "
	    "audit every %s at the median) had ", md);
	if (s->ngaps > 0)
		say(s->guarantee, sizeof(s->guarantee), "%zu gap%s:", s->ngaps,
		    s->ngaps == 1 ? "" : "s");
	for (size_t g = 0; g < s->ngaps && g < REPORT_MAX_GAPS; g++) {
		day(s->gap_from[g], t0);
		day(s->gap_to[g], t1);
		duration((double)(s->gap_to[g] - s->gap_from[g]), du, sizeof(du));
		say(s->guarantee, sizeof(s->guarantee), "%s no scheduled audit "
		    "between %s and %s (%s)", g ? ";" : "", t0, t1, du);
	}
	if (s->ngaps > REPORT_MAX_GAPS)
		say(s->guarantee, sizeof(s->guarantee), "; and %zu more",
		    s->ngaps - REPORT_MAX_GAPS);
	if (s->overdue > 0) {
		day(s->last, t0);
		duration((double)s->overdue, du, sizeof(du));
		say(s->guarantee, sizeof(s->guarantee), "%s none since %s (%s "
		    "before this page was made)", s->ngaps ? ", and" : "", t0, du);
	}
	say(s->guarantee, sizeof(s->guarantee), ".");
}

void
report_history_summarize(const struct report_audit *all, size_t nall,
			 const char *what, int64_t now, struct report_summary *s)
{
	struct report_audit *a;
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	a = calloc(nall ? nall : 1, sizeof(*a));
	if (a == NULL) {
		snprintf(s->guarantee, sizeof(s->guarantee), "(out of memory)");
		return;
	}
	for (size_t i = 0; i < nall; i++) {
		if (all[i].ad_hoc) {
			s->ad_hoc++;
			continue;
		}
		a[n++] = all[i];
	}
	/* in the order of their times, not the chain's: records imported
	 * from a fleet's workers may be appended after later ones */
	qsort(a, n, sizeof(*a), audit_time_cmp);
	s->scheduled = n;
	if (n == 0)
		snprintf(s->guarantee, sizeof(s->guarantee),
			 "no scheduled audit%s: the history supports no guarantee", what);
	else
		history_sentence(a, n, what, s);
	schedule_gaps(a, n, now, s);
	if (s->ngaps > 0 || s->overdue > 0)
		schedule_sentence(s);
	if (s->guarantee[0] >= 'a' && s->guarantee[0] <= 'z')
		s->guarantee[0] = (char)(s->guarantee[0] - 'a' + 'A');
	free(a);
}

/* ---- reading the history ------------------------------------------- */

struct hist {
	struct report_audit *a;
	size_t n, cap;
	uint64_t others; /* records of other kinds */
	int err;
	struct rba_detail *d;
};

/*
 * One history record: an audit record (schema rebuild-audit/audit/...,
 * a verdict) becomes a mark, read through audit/record.h's decoder as
 * far as it decodes (the chain was verified before: these are the
 * records the tool wrote); any other record is counted.
 */
static int
hist_cb(void *ctx, const struct store_history_entry *e)
{
	struct hist *h = ctx;
	struct rba_json_value v;
	struct audit_record rec;
	struct report_audit *x;
	struct policy *p = NULL;
	const char *ptext;

	memset(&v, 0, sizeof(v));
	if (rba_json_parse((const char *)e->record, e->len, &v, NULL) != 0) {
		h->others++;
		return 0;
	}
	(void)audit_record_decode(&v, "the audit record", &rec, NULL);
	if (rec.schema == NULL || rec.verdict == NULL ||
	    strncmp(rec.schema, "rebuild-audit/audit/", 20) != 0) {
		h->others++;
		audit_record_release(&rec);
		rba_json_release(&v);
		return 0;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct report_audit *q = realloc(h->a, cap * sizeof(*q));
		if (q == NULL) {
			audit_record_release(&rec);
			rba_json_release(&v);
			return RBA_E_NOMEM;
		}
		h->a = q;
		h->cap = cap;
	}
	x = &h->a[h->n++];
	memset(x, 0, sizeof(*x));
	x->id = e->id;
	x->time = e->time;
	snprintf(x->version, sizeof(x->version), "%s", e->version);
	snprintf(x->verdict, sizeof(x->verdict), "%s", rec.verdict);
	x->ad_hoc = audit_record_ad_hoc(&rec);
	snprintf(x->declared_at, sizeof(x->declared_at), "%s",
		 rec.policy.declared_at ? rec.policy.declared_at : "");
	ptext = rec.policy.text;
	x->tolerance = NAN;
	if (ptext != NULL && policy_parse(ptext, strlen(ptext), "policy", &p, NULL) == 0)
		x->tolerance = p->max_score_delta;
	policy_free(p);
	x->flips = rec.sample.flips == AUDIT_RECORD_INT_NONE ? 0
							     : (double)rec.sample.flips;
	audit_record_release(&rec);
	rba_json_release(&v);
	return 0;
}

/* ---- drawing ---------------------------------------------------------- */

static const char *
verdict_colour(const char *v)
{
	switch (verdict_rank(v)) {
	case 0:
		return "#1a7f37";
	case 1:
		return "#a05a00";
	case 2:
		return "#c00000";
	default:
		return "#555555";
	}
}

/* A mark per verdict: a filled circle, a filled triangle, a bold cross,
 * an open square; ad hoc ones hollow (white inside). */
static void
mark(struct rba_buf *b, const struct report_audit *a, double x, double y)
{
	const char *c = verdict_colour(a->verdict);
	const char *fill = a->ad_hoc ? "#fff" : c;
	char t[RBA_TIME_TEXT_MAX];

	day(a->time, t);
	rba_buf_printf(b, "<g class=\"audit-mark\" data-record=\"%llu\" "
			  "data-verdict=\"", (unsigned long long)a->id);
	html_c(b, a->verdict);
	rba_buf_printf(b, "\" data-ad-hoc=\"%d\"><title>record %llu, ", a->ad_hoc,
		       (unsigned long long)a->id);
	html_c(b, a->verdict);
	rba_buf_printf(b, ", %s%s</title>", t, a->ad_hoc ? ", ad hoc" : "");
	switch (verdict_rank(a->verdict)) {
	case 0:
		rba_buf_printf(b, "<circle cx=\"");
		svg_n(b, x);
		rba_buf_printf(b, "\" cy=\"");
		svg_n(b, y);
		rba_buf_printf(b, "\" r=\"5\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"/>",
			       fill, c);
		break;
	case 1:
		rba_buf_printf(b, "<path d=\"M");
		svg_n(b, x);
		rba_buf_put_u8(b, ' ');
		svg_n(b, y - 6);
		rba_buf_printf(b, " l6 10 l-12 0 z\" fill=\"%s\" stroke=\"%s\" "
				  "stroke-width=\"1.5\"/>", fill, c);
		break;
	case 2:
		rba_buf_printf(b, "<path d=\"M");
		svg_n(b, x - 5);
		rba_buf_put_u8(b, ' ');
		svg_n(b, y - 5);
		rba_buf_printf(b, " l10 10 m0 -10 l-10 10\" stroke=\"%s\" stroke-width=\"%s\"/>",
			       c, a->ad_hoc ? "1.2" : "3");
		break;
	default:
		rba_buf_printf(b, "<rect x=\"");
		svg_n(b, x - 4.5);
		rba_buf_printf(b, "\" y=\"");
		svg_n(b, y - 4.5);
		rba_buf_printf(b, "\" width=\"9\" height=\"9\" fill=\"#fff\" stroke=\"%s\" "
				  "stroke-width=\"1.5\"/>", c);
		break;
	}
	rba_buf_printf(b, "</g>\n");
}

/* The legend: a mark per verdict, drawn plain, at the foot of a figure H high. */
static void
timeline_legend(struct rba_buf *b, double H)
{
	static const char *const v[4] = { "bit-identical", "metric-equivalent",
					  "not-reproducible", "not-measured" };
	double y = H - 14;

	for (int k = 0; k < 4; k++) {
		struct report_audit m;
		memset(&m, 0, sizeof(m));
		snprintf(m.verdict, sizeof(m.verdict), "%s", v[k]);
		rba_buf_printf(b, "<g class=\"legend\">");
		/* the legend's marks are not audits: drawn plain */
		switch (k) {
		case 0:
			rba_buf_printf(b, "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"5\" "
					  "fill=\"%s\"/>", 30.0 + k * 140, y,
				       verdict_colour(v[k]));
			break;
		case 1:
			rba_buf_printf(b, "<path d=\"M%.0f %.0f l6 10 l-12 0 z\" "
					  "fill=\"%s\"/>", 30.0 + k * 140, y - 6,
				       verdict_colour(v[k]));
			break;
		case 2:
			rba_buf_printf(b, "<path d=\"M%.0f %.0f l10 10 m0 -10 l-10 10\" "
					  "stroke=\"%s\" stroke-width=\"3\"/>",
				       25.0 + k * 140, y - 5, verdict_colour(v[k]));
			break;
		default:
			rba_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" "
					  "height=\"9\" fill=\"#fff\" stroke=\"%s\" "
					  "stroke-width=\"1.5\"/>", 25.5 + k * 140,
				       y - 4.5, verdict_colour(v[k]));
			break;
		}
		rba_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"9\">%s"
				  "</text></g>", 40.0 + k * 140, y + 3, v[k]);
	}
}

static void
timeline(struct rba_buf *b, const struct report_audit *a, size_t n,
	 char (*names)[STORE_VERSION_NAME_MAX + 1], size_t nv,
	 const struct report_summary *vs, int64_t now)
{
	const double L = 170, R = 620, T = 30, RH = 26;
	int64_t t0 = a[0].time, t1 = a[0].time;
	double H = T + RH * (double)nv + 60, span;
	char s0[RBA_TIME_TEXT_MAX], s1[RBA_TIME_TEXT_MAX];

	for (size_t i = 0; i < n; i++) {
		if (a[i].time < t0)
			t0 = a[i].time;
		if (a[i].time > t1)
			t1 = a[i].time;
	}
	if (now > t1)
		t1 = now;
	span = t1 > t0 ? (double)(t1 - t0) : 1;
#define TX(t) (L + (double)((t) - t0) / span * (R - L))
	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"timeline\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 ");
	svg_n(b, H);
	rba_buf_printf(b, "\" width=\"640\" height=\"");
	svg_n(b, H);
	rba_buf_printf(b, "\" role=\"img\" aria-label=\"every version's audits over "
			  "time\">\n");
	for (size_t v = 0; v < nv; v++) {
		double y = T + RH * (double)v + RH / 2;

		rba_buf_printf(b, "<text x=\"%.0f\" y=\"", L - 8);
		svg_n(b, y + 3);
		rba_buf_printf(b, "\" text-anchor=\"end\" font-size=\"9\">");
		html_c(b, names[v]);
		rba_buf_printf(b, "</text><line x1=\"%.0f\" x2=\"%.0f\" y1=\"", L, R);
		svg_n(b, y);
		rba_buf_printf(b, "\" y2=\"");
		svg_n(b, y);
		rba_buf_printf(b, "\" stroke=\"#bbb\"/>\n");
		for (size_t g = 0; g < vs[v].ngaps && g < REPORT_MAX_GAPS; g++) {
			rba_buf_printf(b, "<rect class=\"gap\" x=\"");
			svg_n(b, TX(vs[v].gap_from[g]));
			rba_buf_printf(b, "\" y=\"");
			svg_n(b, y - 3);
			rba_buf_printf(b, "\" width=\"");
			svg_n(b, TX(vs[v].gap_to[g]) - TX(vs[v].gap_from[g]));
			rba_buf_printf(b, "\" height=\"6\" fill=\"none\" stroke=\"#000\" "
					  "stroke-dasharray=\"3 2\"/>\n");
		}
		for (size_t i = 0; i < n; i++)
			if (strcmp(a[i].version, names[v]) == 0)
				mark(b, &a[i], TX(a[i].time), y);
	}
	day(t0, s0);
	day(t1, s1);
	rba_buf_printf(b, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"", L, R);
	svg_n(b, T + RH * (double)nv + 4);
	rba_buf_printf(b, "\" y2=\"");
	svg_n(b, T + RH * (double)nv + 4);
	rba_buf_printf(b, "\" stroke=\"#000\"/>");
	rba_buf_printf(b, "<text x=\"%.0f\" y=\"", L);
	svg_n(b, T + RH * (double)nv + 17);
	rba_buf_printf(b, "\" font-size=\"8\" text-anchor=\"start\">%s</text>", s0);
	rba_buf_printf(b, "<text x=\"%.0f\" y=\"", R);
	svg_n(b, T + RH * (double)nv + 17);
	rba_buf_printf(b, "\" font-size=\"8\" text-anchor=\"end\">%s%s</text>\n", s1,
		       now >= t1 ? " (now)" : "");
	timeline_legend(b, H);
	rba_buf_printf(b, "</svg>\n<p class=\"caption\">A row per version, a mark per "
			  "audit at its time: filled circle bit-identical, filled "
			  "triangle metric-equivalent, bold cross not-reproducible, "
			  "open square not-measured; ad hoc audits hollow or thin. "
			  "Dashed boxes are gaps in the schedule: an interval between "
			  "two scheduled audits longer than %.1f times the version's "
			  "median interval.</p>\n</div>\n", REPORT_GAP_FACTOR);
#undef TX
}

static void
summary_rows(struct rba_buf *b, const struct report_summary *s)
{
	rba_buf_printf(b, "<p class=\"guarantee\">");
	html_c(b, s->guarantee);
	rba_buf_printf(b, "</p>\n<p>%zu scheduled audit%s, %zu failed, %zu ad hoc "
			  "(not the version's audits: they support nothing).",
		       s->scheduled, s->scheduled == 1 ? "" : "s", s->failures, s->ad_hoc);
	if (!s->has_median)
		rba_buf_printf(b, " Schedule: fewer than three scheduled audits, no "
				  "median interval to judge gaps by.");
	else {
		char md[32];
		duration(s->median, md, sizeof(md));
		rba_buf_printf(b, " Schedule: median interval %s; <b class=\"gaps\" "
				  "data-gaps=\"%zu\">%zu gap%s</b>%s.", md, s->ngaps,
			       s->ngaps, s->ngaps == 1 ? "" : "s",
			       s->overdue > 0 ? ", and overdue" : "");
	}
	rba_buf_printf(b, "</p>\n");
}

/*
 * The summary of each version's audits in history order (VS, as NAMES
 * lists them) and of all of them (ALL).
 */
static int
summarize_versions(const struct hist *h, char (*names)[STORE_VERSION_NAME_MAX + 1],
		   size_t nv, int64_t now, struct report_summary *vs,
		   struct report_summary *all)
{
	/* per version, its audits in history order */
	for (size_t v = 0; v < nv; v++) {
		struct report_audit *va = calloc(h->n, sizeof(*va));
		size_t k = 0;
		char what[STORE_VERSION_NAME_MAX + 32];
		if (va == NULL)
			return RBA_E_NOMEM;
		for (size_t i = 0; i < h->n; i++)
			if (strcmp(h->a[i].version, names[v]) == 0)
				va[k++] = h->a[i];
		snprintf(what, sizeof(what), " of version %s", names[v]);
		report_history_summarize(va, k, what, now, &vs[v]);
		free(va);
	}
	{
		char what[64];
		snprintf(what, sizeof(what), " of %zu version%s", nv, nv == 1 ? "" : "s");
		report_history_summarize(h->a, h->n, what, now, all);
	}
	return 0;
}

/* A version's section: its summary and a row per audit. */
static void
version_section(struct rba_buf *out, const struct hist *h, const char *name,
		const struct report_summary *vs)
{
	rba_buf_printf(out, "<h2>Version ");
	html_c(out, name);
	rba_buf_printf(out, "</h2>\n<div class=\"version\" data-version=\"");
	html_c(out, name);
	rba_buf_printf(out, "\">\n");
	summary_rows(out, vs);
	table_open(out, NULL, "record|time|verdict|flips|tolerance|declared|ad hoc");
	for (size_t i = 0; i < h->n; i++) {
		char t[RBA_TIME_TEXT_MAX];
		if (strcmp(h->a[i].version, name) != 0)
			continue;
		day(h->a[i].time, t);
		rba_buf_printf(out, "<tr><td class=\"n\">%llu</td><td>%s</td><td>",
			       (unsigned long long)h->a[i].id, t);
		html_c(out, h->a[i].verdict);
		rba_buf_printf(out, "</td><td class=\"n\">%.0f</td><td class=\"n\">",
			       h->a[i].flips);
		html_fig(out, h->a[i].tolerance);
		rba_buf_printf(out, "</td><td>");
		html_c(out, h->a[i].declared_at[0] ? h->a[i].declared_at : "not recorded");
		rba_buf_printf(out, "</td><td>%s</td></tr>\n", h->a[i].ad_hoc ? "yes" : "no");
	}
	table_close(out);
	rba_buf_printf(out, "</div>\n");
}

int
report_history_html(struct store *s, int64_t now, struct rba_buf *out,
		    struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct hist h;
	char (*names)[STORE_VERSION_NAME_MAX + 1] = NULL;
	struct report_summary *vs = NULL, all;
	struct report_source src;
	struct report_notes notes;
	uint64_t bad = 0, head_id = 0;
	struct rba_digest head;
	char nowt[RBA_TIME_TEXT_MAX], title[160];
	size_t nv = 0;
	int err;

	memset(&h, 0, sizeof(h));
	memset(&notes, 0, sizeof(notes));
	h.d = d;
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = store_history_verify(txn, &bad, NULL, d)) != 0)
		goto out;
	if ((err = store_history_head(txn, &head_id, &head, d)) != 0)
		goto out;
	if ((err = store_history_list(txn, NULL, 0, hist_cb, &h, d)) != 0)
		goto out;
	names = calloc(h.n ? h.n : 1, sizeof(*names));
	vs = calloc(h.n ? h.n : 1, sizeof(*vs));
	if (names == NULL || vs == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < h.n; i++) {
		size_t v = 0;
		while (v < nv && strcmp(names[v], h.a[i].version) != 0)
			v++;
		if (v == nv)
			snprintf(names[nv++], sizeof(names[0]), "%s", h.a[i].version);
	}
	if ((err = summarize_versions(&h, names, nv, now, vs, &all)) != 0)
		goto out;
	/* The page: made from the store, not from signed evidence. */
	memset(&src, 0, sizeof(src));
	src.verified = 1;
	src.from_store = 1;
	rba_digest_format(&head, src.digest);
	src.file = "the store's history";
	rba_time_utc(now, nowt);
	snprintf(title, sizeof(title), "Audit history of the store: %zu version%s, "
		 "%zu audit%s", nv, nv == 1 ? "" : "s", h.n, h.n == 1 ? "" : "s");
	html_page_open(out, &src, "a store's history", title);
	rba_buf_printf(out, "<h1 id=\"title\">");
	html_c(out, title);
	rba_buf_printf(out, "</h1>\n<div class=\"meta\">Made at %s from store <span "
			  "class=\"mono\">%s</span>, whose history chain was verified "
			  "up to its head, record %llu, <span class=\"mono\">",
		       nowt, store_id_hex(s), (unsigned long long)head_id);
	html_dg(&notes, out, src.digest, strlen(src.digest));
	rba_buf_printf(out, "</span> (the footer's digest on every printed page). "
			  "Not signed evidence: export an audit to sign it. %llu "
			  "record%s of other kinds (register, policy set) not shown."
			  "</div>\n",
		       (unsigned long long)h.others, h.others == 1 ? "" : "s");
	rba_buf_printf(out, "<h2>The guarantee the history supports</h2>\n");
	summary_rows(out, &all);
	if (h.n > 0) {
		rba_buf_printf(out, "<h2>Audits over time</h2>\n");
		timeline(out, h.a, h.n, names, nv, vs, now);
	}
	for (size_t v = 0; v < nv; v++) {
		version_section(out, &h, names[v], &vs[v]);
	}
	html_notes_sections(&notes, out);
	html_page_close(out, &src);
	err = notes.nomem ? RBA_E_NOMEM : rba_buf_status(out);
out:
	report_notes_release(&notes);
	free(names);
	free(vs);
	free(h.a);
	store_txn_abort(txn);
	return err;
}
