/*
 * check_report.c - the report's pages (report/report.h): the guarantee a
 * history supports, never stronger than its weakest scheduled audit, its
 * failures and gaps; the escaping of evidence text; what the renderer
 * refuses.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/report_priv.h"
#include "common/buf.h"
#include "tests/unit/suites.h"

#define DAY 86400

static struct report_audit
aud(uint64_t id, int64_t t, const char *verdict, int ad_hoc, double tol,
    const char *declared)
{
	struct report_audit a;

	memset(&a, 0, sizeof(a));
	a.id = id;
	a.time = t;
	snprintf(a.version, sizeof(a.version), "v");
	snprintf(a.verdict, sizeof(a.verdict), "%s", verdict);
	a.ad_hoc = ad_hoc;
	a.tolerance = tol;
	snprintf(a.declared_at, sizeof(a.declared_at), "%s", declared);
	return a;
}

static int
has(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

START_TEST(test_summary_all_bit_identical)
{
	struct report_audit a[4];
	struct report_summary s;

	for (int i = 0; i < 4; i++)
		a[i] = aud((uint64_t)i + 1, 1000000000 + i * DAY, "bit-identical", 0,
			   0.0005, "2001-09-08T00:00:00Z");
	report_history_summarize(a, 4, " of version v", 0, &s);
	ck_assert_uint_eq(s.scheduled, 4);
	ck_assert_uint_eq(s.failures, 0);
	ck_assert_uint_eq(s.ngaps, 0);
	ck_assert(has(s.guarantee, "Over these 4 scheduled rebuilds of version v "
				   "between 2001-09-09T01:46:40Z and 2001-09-12T01:46:40Z, "
				   "every rebuild was bit-identical"));
	ck_assert(!has(s.guarantee, "tolerance"));
}
END_TEST

START_TEST(test_summary_weakest_decides)
{
	struct report_audit a[3];
	struct report_summary s;

	a[0] = aud(1, 1000000000, "bit-identical", 0, 0.0005, "2001-09-08T00:00:00Z");
	a[1] = aud(2, 1000000000 + DAY, "metric-equivalent", 0, 0.0005,
		   "2001-09-08T00:00:00Z");
	a[2] = aud(3, 1000000000 + 2 * DAY, "bit-identical", 0, 0.0005,
		   "2001-09-08T00:00:00Z");
	report_history_summarize(a, 3, "", 0, &s);
	/* one metric-equivalent audit: no bit-identical claim for the period */
	ck_assert(!has(s.guarantee, "bit-identical"));
	ck_assert(has(s.guarantee, "every decision on the audit sample was "
				   "reproduced and every score was within the "
				   "tolerance declared on 2001-09-08T00:00:00Z (a score "
				   "within 0.0005)."));
	/* two declarations: the loosest tolerance is named */
	a[2] = aud(3, 1000000000 + 2 * DAY, "metric-equivalent", 0, 0.001,
		   "2001-09-10T00:00:00Z");
	report_history_summarize(a, 3, "", 0, &s);
	ck_assert(has(s.guarantee, "declared on 2001-09-08T00:00:00Z, "
				   "2001-09-10T00:00:00Z; the loosest a score within 0.001"));
}
END_TEST

START_TEST(test_summary_failure_and_since)
{
	struct report_audit a[5];
	struct report_summary s;

	a[0] = aud(1, 1000000000, "bit-identical", 0, 0.0005, "2001-09-08T00:00:00Z");
	a[1] = aud(2, 1000000000 + DAY, "not-reproducible", 0, 0.0005,
		   "2001-09-08T00:00:00Z");
	a[2] = aud(3, 1000000000 + 2 * DAY, "not-measured", 0, 0.0005,
		   "2001-09-08T00:00:00Z");
	a[3] = aud(4, 1000000000 + 3 * DAY, "bit-identical", 0, 0.0005,
		   "2001-09-08T00:00:00Z");
	/* ad hoc: drawn, never counted for or against */
	a[4] = aud(5, 1000000000 + 3 * DAY + 60, "not-reproducible", 1, 0.0005,
		   "2001-09-08T00:00:00Z");
	report_history_summarize(a, 5, "", 0, &s);
	ck_assert_uint_eq(s.scheduled, 4);
	ck_assert_uint_eq(s.ad_hoc, 1);
	ck_assert_uint_eq(s.failures, 2);
	ck_assert(has(s.guarantee, "the history supports no guarantee: 2 failed "
				   "(not-reproducible on 2001-09-10T01:46:40Z, record 2"));
	ck_assert(has(s.guarantee, "not-measured on 2001-09-11T01:46:40Z, record 3"));
	ck_assert(has(s.guarantee, "since the last failure, at the one scheduled "
				   "rebuild on 2001-09-12T01:46:40Z, every rebuild was "
				   "bit-identical"));
	/* the latest failed: nothing since */
	report_history_summarize(a, 3, "", 0, &s);
	ck_assert(has(s.guarantee, "the latest scheduled rebuild failed"));
	/* only ad hoc */
	report_history_summarize(a + 4, 1, "", 0, &s);
	ck_assert(has(s.guarantee, "No scheduled audit: the history supports no "
				   "guarantee"));
}
END_TEST

START_TEST(test_summary_gaps)
{
	struct report_audit a[6];
	struct report_summary s;
	int64_t t = 1000000000;
	int64_t at[6] = { 0, DAY, 2 * DAY, 3 * DAY, 7 * DAY, 8 * DAY };

	for (int i = 0; i < 6; i++)
		a[i] = aud((uint64_t)i + 1, t + at[i], "bit-identical", 0, 0.0005,
			   "2001-09-08T00:00:00Z");
	report_history_summarize(a, 6, "", 0, &s);
	ck_assert(s.has_median);
	ck_assert(s.median == DAY);
	ck_assert_uint_eq(s.ngaps, 1);
	ck_assert_int_eq(s.gap_from[0], t + 3 * DAY);
	ck_assert_int_eq(s.gap_to[0], t + 7 * DAY);
	ck_assert(has(s.guarantee, "1 gap: no scheduled audit between "
				   "2001-09-12T01:46:40Z and 2001-09-16T01:46:40Z (4.0 days)"));
	/* exactly 1.5 medians is not a gap; a little more is */
	at[4] = 3 * DAY + DAY * 3 / 2;
	at[5] = at[4] + DAY;
	for (int i = 0; i < 6; i++)
		a[i].time = t + at[i];
	report_history_summarize(a, 6, "", 0, &s);
	ck_assert_uint_eq(s.ngaps, 0);
	/* overdue by now */
	report_history_summarize(a, 6, "", t + at[5] + 2 * DAY, &s);
	ck_assert(s.overdue == 2 * DAY);
	ck_assert(has(s.guarantee, "none since"));
	report_history_summarize(a, 6, "", t + at[5] + DAY, &s);
	ck_assert(s.overdue == 0);
	/* two audits: no median to judge by */
	report_history_summarize(a, 2, "", t + 100 * DAY, &s);
	ck_assert(!s.has_median);
	ck_assert(!has(s.guarantee, "gap"));
}
END_TEST

/* Audits appended out of time order (a fleet's import): the period runs
 * from the earliest to the latest, and "since the last failure" means
 * since the latest one in time. */
START_TEST(test_summary_time_order)
{
	struct report_audit a[4];
	struct report_summary s;

	/* chain order 1..4, times day 3, 1, 2, 0 */
	a[0] = aud(1, 1000000000 + 3 * DAY, "bit-identical", 0, 0.0005, "2001-09-08T00:00:00Z");
	a[1] = aud(2, 1000000000 + 1 * DAY, "not-reproducible", 0, 0.0005,
		   "2001-09-08T00:00:00Z");
	a[2] = aud(3, 1000000000 + 2 * DAY, "bit-identical", 0, 0.0005, "2001-09-08T00:00:00Z");
	a[3] = aud(4, 1000000000, "bit-identical", 0, 0.0005, "2001-09-08T00:00:00Z");
	report_history_summarize(a, 4, "", 0, &s);
	ck_assert_int_eq(s.first, 1000000000);
	ck_assert_int_eq(s.last, 1000000000 + 3 * DAY);
	ck_assert(has(s.guarantee, "Over these 4 scheduled rebuilds between "
				   "2001-09-09T01:46:40Z and 2001-09-12T01:46:40Z the "
				   "history supports no guarantee: 1 failed"));
	ck_assert(has(s.guarantee, "since the last failure, over these 2 scheduled "
				   "rebuilds between 2001-09-11T01:46:40Z and "
				   "2001-09-12T01:46:40Z, every rebuild was bit-identical"));
	/* a gap is judged between audits next to each other in time */
	ck_assert_uint_eq(s.ngaps, 0);
}
END_TEST

/* One scheduled audit that failed: said in the singular. */
START_TEST(test_summary_one_failed)
{
	struct report_audit a[1];
	struct report_summary s;

	a[0] = aud(7, 1000000000, "not-reproducible", 0, 0.0005, "2001-09-08T00:00:00Z");
	report_history_summarize(a, 1, " of version v", 0, &s);
	ck_assert(has(s.guarantee, "At the one scheduled rebuild of version v on "
				   "2001-09-09T01:46:40Z the history supports no "
				   "guarantee: it failed (not-reproducible on "
				   "2001-09-09T01:46:40Z, record 7, v)"));
	ck_assert(!has(s.guarantee, "these 1 "));
}
END_TEST

/* About six significant digits, and never on the wrong side of the
 * edge or tolerance a number is shown beside. */
START_TEST(test_figures)
{
	char t[REPORT_FIG_MAX];

	num_fig(0.4993883967399597, t);
	ck_assert_str_eq(t, "0.499388");
	num_fig(5.378127098082386e-05, t);
	ck_assert_str_eq(t, "5.37813e-05");
	num_fig(2.6250000000000004e-05, t);
	ck_assert_str_eq(t, "2.625e-05");
	num_fig(1000000, t);
	ck_assert_str_eq(t, "1000000");
	num_fig(0.0005, t);
	ck_assert_str_eq(t, "0.0005");
	num_fig(NAN, t);
	ck_assert_str_eq(t, "null");
	/* the floats either side of the edge 0.3 */
	num_fig_side(0.2999999821186066, 0.3, t);
	ck_assert_str_eq(t, "0.29999998");
	num_fig_side(0.30000001192092896, 0.3, t);
	ck_assert_str_eq(t, "0.30000001");
	num_fig_side(0.3, 0.3, t);
	ck_assert_str_eq(t, "0.3");
	num_fig_side(0.29999, 0.3, t);
	ck_assert_str_eq(t, "0.29999");
	/* closer than eight digits tell: the side is marked */
	num_fig_side(0.3 - 1e-12, 0.3, t);
	ck_assert_str_eq(t, "0.3\xe2\x88\x92");
	num_fig_side(0.0005000001, 0.0005, t);
	ck_assert_str_eq(t, "0.0005000001");
}
END_TEST

/* A sentence of the evidence: its long numbers rounded and kept in the
 * exact values, its digests shortened and kept in full, the rest as
 * it is, escaped. */
START_TEST(test_prose)
{
	static const char dg[] =
		"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct report_notes n;
	struct rba_buf b;
	char text[512];

	memset(&n, 0, sizeof(n));
	rba_buf_init(&b);
	snprintf(text, sizeof(text), "maximum score delta 0.020000487565994263 exceeds "
		 "the tolerance 0.0005 (case '58198'), %s; glibc 2.36, x1.23456789012, "
		 "id 123456789012 <b>", dg);
	html_prose(&n, &b, text, strlen(text), "predicate.reasons[1]");
	ck_assert(has(rba_buf_cstr(&b), "maximum score delta 0.0200005 exceeds the "
					"tolerance 0.0005 (case &#39;58198&#39;), "
					"<span class=\"dg\">sha256:0123456789ab&#8230;"
					"<sup class=\"fn\">D1</sup></span>; glibc 2.36, "
					"x1.23456789012, id 123456789012 &lt;b&gt;"));
	ck_assert_uint_eq(n.nex, 1);
	ck_assert_str_eq(n.ex[0].what, "in predicate.reasons[1]: 0.0200005");
	ck_assert(n.ex[0].v == 0.020000487565994263);
	ck_assert_uint_eq(n.ndg, 1);
	ck_assert_str_eq(n.dg[0], dg);
	/* the same digest again: the same mark; a shown exact number: no row */
	html_dg(&n, &b, dg, strlen(dg));
	html_val(&n, &b, "tolerance", 0.0005);
	ck_assert_uint_eq(n.ndg, 1);
	ck_assert_uint_eq(n.nex, 1);
	html_val(&n, &b, "score", 0.4993883967399597);
	ck_assert_uint_eq(n.nex, 2);
	/* the last sections hold them in full */
	rba_buf_release(&b);
	rba_buf_init(&b);
	html_notes_sections(&n, &b);
	ck_assert(has(rba_buf_cstr(&b), dg));
	ck_assert(has(rba_buf_cstr(&b), "<td class=\"mono\">0.4993883967399597</td>"));
	ck_assert(has(rba_buf_cstr(&b), "<thead>"));
	rba_buf_release(&b);
	report_notes_release(&n);
}
END_TEST

/* Evidence text never becomes markup. */
START_TEST(test_escaping)
{
	static const char st[] =
		"{\"_type\": \"https://in-toto.io/Statement/v1\", \"predicateType\": "
		"\"https://rebuild-audit.dev/dispute-evidence/v2\", \"predicate\": {}}";
	struct report_source src;
	struct rba_buf b;
	struct rba_detail d;
	enum report_kind kind;

	memset(&src, 0, sizeof(src));
	src.file = "<script>x</script>\"'&\x1b[2K\xe2\x80\xae";
	snprintf(src.digest, sizeof(src.digest), "sha256:00");
	rba_buf_init(&b);
	/* a dispute without its members: refused, naming the path */
	ck_assert_int_eq(report_evidence_html(st, strlen(st), &src, &b, &kind, &d),
			 RBA_E_SCHEMA);
	ck_assert_int_eq(kind, REPORT_KIND_DISPUTE);
	ck_assert_str_eq(d.key, "predicate.dispute");
	rba_buf_release(&b);
	/* not JSON, not a statement, an unknown predicate */
	rba_buf_init(&b);
	ck_assert_int_eq(report_evidence_html("{", 1, &src, &b, NULL, &d), RBA_E_SYNTAX);
	ck_assert_int_eq(report_evidence_html("[]", 2, &src, &b, NULL, &d), RBA_E_SCHEMA);
	{
		static const char v9[] =
			"{\"_type\": \"https://in-toto.io/Statement/v1\", \"predicateType\": "
			"\"https://rebuild-audit.dev/audit-evidence/v9\"}";
		ck_assert_int_eq(report_evidence_html(v9, strlen(v9), &src, &b, NULL, &d),
				 RBA_E_NEWER);
	}
	rba_buf_release(&b);
	/* the escaping itself: markup characters as entities, controls,
	 * invalid UTF-8 and bidirectional controls shown as text */
	rba_buf_init(&b);
	html_text(&b, "<b a=\"1\">'&\x1b[2K\xff\xe2\x80\xae\xc3\xa9\0z", 23);
	ck_assert_str_eq(rba_buf_cstr(&b), "&lt;b a=&quot;1&quot;&gt;&#39;&amp;\\x1b[2K"
					   "\\xff\\u{202E}\xc3\xa9\\x00z");
	rba_buf_release(&b);
}
END_TEST

Suite *
suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_test(tc, test_summary_all_bit_identical);
	tcase_add_test(tc, test_summary_weakest_decides);
	tcase_add_test(tc, test_summary_failure_and_since);
	tcase_add_test(tc, test_summary_gaps);
	tcase_add_test(tc, test_summary_time_order);
	tcase_add_test(tc, test_summary_one_failed);
	tcase_add_test(tc, test_figures);
	tcase_add_test(tc, test_prose);
	tcase_add_test(tc, test_escaping);
	suite_add_tcase(s, tc);
	return s;
}
