/*
 * check_report.c - the report's pages (report/report.h): the guarantee a
 * history supports, never stronger than its weakest scheduled audit, its
 * failures and gaps; the escaping of evidence text; what the renderer
 * refuses; the pages of real evidence files and of a store's history.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/report_priv.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "store/store.h"
#include "tests/unit/scratch.h"
#include "tests/unit/suites.h"

#define EV_V1 FIXTURES "/evidence/v1"
#define KEYID "7734D3625FDFAA32"

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

/* ---- pages of evidence files ------------------------------------------ */

/* The bytes of a fixture file, NUL-terminated; the caller frees. */
static char *
fixture(const char *path, size_t *n)
{
	uint8_t *p = NULL;

	ck_assert_msg(rba_file_read(path, 1u << 24, &p, n, NULL) == 0, "%s", path);
	p = realloc(p, *n + 1);
	ck_assert_ptr_nonnull(p);
	p[*n] = 0;
	return (char *)p;
}

/* A source as cli/cmd_report.c fills it for a verified file. */
static struct report_source
verified_source(const char *file)
{
	struct report_source src;

	memset(&src, 0, sizeof(src));
	src.verified = 1;
	snprintf(src.key_id, sizeof(src.key_id), KEYID);
	snprintf(src.digest, sizeof(src.digest), "sha256:%064d", 7);
	src.file = file;
	return src;
}

/* The page of text (n bytes), which must draw: its NUL-terminated HTML. */
static char *
page_of(const char *text, size_t n, const struct report_source *src,
	enum report_kind want)
{
	struct rba_buf b;
	struct rba_detail d;
	enum report_kind kind;
	char *page;
	int err;

	rba_buf_init(&b);
	rba_detail_clear(&d);
	err = report_evidence_html(text, n, src, &b, &kind, &d);
	ck_assert_msg(err == 0, "%d %s: %s", err, d.key, d.reason);
	ck_assert_int_eq(kind, want);
	page = (char *)rba_buf_steal(&b, NULL);
	ck_assert_ptr_nonnull(page);
	rba_buf_release(&b);
	return page;
}

/*
 * What a page of verified audit evidence states is what the file says:
 * the verdict, the version, the counts, the pinned artifact (shortened,
 * then in full in the notes), the key and the file's digest; no banner.
 * The same file unverified carries the banner with its reason.
 */
START_TEST(test_page_facts)
{
	struct report_source src = verified_source("v1-bit-identical.json");
	size_t n;
	char *text = fixture(EV_V1 "/v1-bit-identical.json", &n);
	char *page = page_of(text, n, &src, REPORT_KIND_AUDIT);

	ck_assert(has(page, "<b id=\"verdict\">bit-identical</b>"));
	ck_assert(has(page, ", exit status 0"));
	ck_assert(has(page, "rebuilding version german-numeric-logistic from "
			    "its pins gives"));
	ck_assert(has(page, "<td>59 cases, 0 flipped (the policy tolerates 0)"));
	ck_assert(has(page, "against the declared tolerance 0.0005"));
	ck_assert(has(page, "sha256:dd267c3f31f8&#8230;<sup class=\"fn\">D1"));
	ck_assert(has(page, "sha256:dd267c3f31f8ef02cfc981f5ff0b21179ced5cbe681"
			    "73010876c1b3cec5b9ed9"));
	ck_assert(has(page, "key <span class=\"mono\" id=\"keyid\">" KEYID
			    "</span>, signature verified"));
	ck_assert(has(page, "audit record 1 ran at 2026-12-01T10:18:16Z"));
	ck_assert(has(page, "sha256:000000000000&#8230;"));
	ck_assert(has(page, "https://rebuild-audit.dev/audit-evidence/v1"));
	ck_assert(!has(page, "class=\"banner\""));
	ck_assert(!has(page, "<script"));
	free(page);

	src.verified = 0;
	src.not_verified = "signature: <forged>";
	page = page_of(text, n, &src, REPORT_KIND_AUDIT);
	ck_assert(has(page, "class=\"banner\""));
	ck_assert(has(page, "signature: &lt;forged&gt;"));
	ck_assert(!has(page, "signature verified"));
	free(page);
	free(text);
}
END_TEST

/*
 * A flipped case is drawn with its scores and decisions; a dispute's page
 * names what was disputed.
 */
START_TEST(test_page_flips_and_dispute)
{
	struct report_source src = verified_source("v1-not-reproducible.json");
	size_t n;
	char *text = fixture(EV_V1 "/v1-not-reproducible.json", &n);
	char *page = page_of(text, n, &src, REPORT_KIND_AUDIT);

	ck_assert(has(page, "not-reproducible"));
	ck_assert(has(page, "31 flipped"));
	ck_assert(has(page, "approve"));
	ck_assert(has(page, "decline"));
	free(page);
	free(text);

	src.file = "dispute-v4.json";
	text = fixture(FIXTURES "/evidence/dispute-v4.json", &n);
	page = page_of(text, n, &src, REPORT_KIND_DISPUTE);
	ck_assert(!has(page, "class=\"banner\""));
	ck_assert(has(page, "id=\"keyid\">" KEYID "</span>"));
	free(page);
	free(text);
}
END_TEST

/* Replaces the string value at path of v with s (a tree from the parser,
 * whose strings are malloc'd). */
static void
set_str(struct rba_json_value *v, const char *path, const char *s)
{
	struct rba_json_value *m = (struct rba_json_value *)rba_json_path(v, path);

	ck_assert_msg(m != NULL && m->type == RBA_JSON_STRING, "%s", path);
	free(m->str);
	m->str = strdup(s);
	ck_assert_ptr_nonnull(m->str);
	m->len = strlen(s);
}

/*
 * Hostile strings in evidence stay text: markup, an attribute's quote,
 * an entity, a terminal escape and a right-to-left override in the
 * version, the guarantee and what is not guaranteed, and markup in the
 * file's name, are shown escaped, never applied.
 */
START_TEST(test_page_hostile)
{
	static const char evil[] =
		"<script>alert(1)</script><img src=x onerror=\"y\">&amp;'"
		"\x1b[2J\xe2\x80\xae";
	struct report_source src = verified_source("<b>name</b>");
	struct rba_json_value v;
	struct rba_json_w w;
	struct rba_buf b;
	size_t n;
	char *text = fixture(EV_V1 "/v1-bit-identical.json", &n), *page;

	ck_assert_int_eq(rba_json_parse(text, n, &v, NULL), 0);
	set_str(&v, "predicate.guarantee", evil);
	set_str(&v, "predicate.not_guaranteed", evil);
	set_str(&v, "predicate.version", evil);
	rba_buf_init(&b);
	rba_json_w_init_pretty(&w, &b);
	rba_json_w_value(&w, NULL, &v);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	page = page_of((const char *)b.p, b.len, &src, REPORT_KIND_AUDIT);
	ck_assert(!has(page, "<script"));
	ck_assert(!has(page, "<img"));
	ck_assert(!has(page, "\x1b"));
	ck_assert(!has(page, "\xe2\x80\xae"));
	ck_assert(!has(page, "<b>name"));
	ck_assert(has(page, "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x "
			    "onerror=&quot;y&quot;&gt;&amp;amp;&#39;\\x1b[2J"
			    "\\u{202E}"));
	ck_assert(has(page, "&lt;b&gt;name&lt;/b&gt;"));
	free(page);
	rba_buf_release(&b);
	rba_json_release(&v);
	free(text);
}
END_TEST

/* The first line of text with from replaced by to (which must be there). */
static char *
edited(const char *text, const char *from, const char *to, size_t *n)
{
	const char *at = strstr(text, from);
	char *out;

	ck_assert_msg(at != NULL, "%s", from);
	*n = strlen(text) - strlen(from) + strlen(to);
	out = malloc(*n + 1);
	ck_assert_ptr_nonnull(out);
	snprintf(out, *n + 1, "%.*s%s%s", (int)(at - text), text, to,
		 at + strlen(from));
	return out;
}

/* Refused: the page names the first member missing or mistyped, by its
 * path from the statement's root, an item's by its index. */
static void
refused(const char *text, size_t n, const char *key, const char *reason)
{
	struct report_source src = verified_source("x.json");
	struct rba_buf b;
	struct rba_detail d;

	rba_buf_init(&b);
	ck_assert_int_eq(report_evidence_html(text, n, &src, &b, NULL, &d),
			 RBA_E_SCHEMA);
	ck_assert_str_eq(d.key, key);
	ck_assert_str_eq(d.reason, reason);
	rba_buf_release(&b);
}

START_TEST(test_page_missing_member)
{
	size_t n, m;
	char *text = fixture(EV_V1 "/v1-bit-identical.json", &n), *x;

	x = edited(text, "\"flips\": ", "\"flipz\": ", &m);
	refused(x, m, "predicate.results.flips", "member 'predicate.results."
		"flips' missing or not a number or null");
	free(x);
	x = edited(text, "\"verdict\": \"bit-identical\"", "\"verdict\": 1", &m);
	refused(x, m, "predicate.verdict",
		"member 'predicate.verdict' missing or not a string");
	free(x);
	free(text);

	text = fixture(EV_V1 "/v1-not-reproducible.json", &n);
	x = edited(text, "\"stored_score\": 0.1,", "\"stored_score\": \"0.1\",",
		   &m);
	refused(x, m, "predicate.results.flipped_cases[0].stored_score",
		"member 'predicate.results.flipped_cases[0].stored_score' "
		"missing or not a number or null");
	free(x);
	x = edited(text, "\"id\": \"4\",", "\"id\": 4,", &m);
	refused(x, m, "predicate.results.flipped_cases[0].id",
		"member 'predicate.results.flipped_cases[0].id' missing or "
		"not a string");
	free(x);
	free(text);
}
END_TEST

/* ---- the history page ------------------------------------------------- */

static void
history_setup(void)
{
	scratch_make("report");
}

static void
history_teardown(void)
{
	scratch_remove();
}

/* Replaces the one occurrence of from in b's text by to. */
static void
replace_once(struct rba_buf *b, const char *from, const char *to)
{
	const char *t = rba_buf_cstr(b), *at = strstr(t, from);
	struct rba_buf o;

	ck_assert_msg(at != NULL, "%s", from);
	rba_buf_init(&o);
	rba_buf_put(&o, t, (size_t)(at - t));
	rba_buf_put(&o, to, strlen(to));
	rba_buf_put(&o, at + strlen(from), strlen(at + strlen(from)));
	ck_assert_int_eq(rba_buf_status(&o), 0);
	rba_buf_release(b);
	*b = o;
}

/*
 * Appends an audit record of version at day (UTC days since 2026-01-01):
 * a whole record as the tool writes it (fixtures/evidence/
 * audit-record-v1.json, a bit-identical audit of version gbdt), with its
 * version, verdict, ad hoc mark and flips changed.
 */
static void
append_audit(struct store *s, const char *version, int day,
	     const char *verdict, int ad_hoc)
{
	struct store_txn *txn;
	struct rba_detail d;
	struct rba_buf b;
	char *tmpl, repl[256];
	size_t n;

	tmpl = fixture(FIXTURES "/evidence/audit-record-v1.json", &n);
	rba_buf_init(&b);
	rba_buf_put(&b, tmpl, n);
	free(tmpl);
	snprintf(repl, sizeof(repl), "\"version\": \"%s\"", version);
	replace_once(&b, "\"version\": \"gbdt\"", repl);
	snprintf(repl, sizeof(repl), "\"verdict\": \"%s\"", verdict);
	replace_once(&b, "\"verdict\": \"bit-identical\"", repl);
	replace_once(&b, "\"ad_hoc\": false", ad_hoc ? "\"ad_hoc\": true"
						    : "\"ad_hoc\": false");
	replace_once(&b, "\"declared_at\": \"2026-03-01T12:00:00Z\"",
		     "\"declared_at\": \"2026-01-01T00:00:00Z\"");
	replace_once(&b, "\"flips\": 0,",
		     strcmp(verdict, "bit-identical") == 0 ? "\"flips\": 0,"
							  : "\"flips\": 3,");
	ck_assert_int_eq(store_txn_begin(s, 1, b.len, &txn, &d), 0);
	ck_assert_msg(store_history_append(txn, version,
					   1767225600 + (int64_t)day * DAY,
					   rba_buf_cstr(&b), b.len, NULL, NULL,
					   &d) == 0, "%s", d.reason);
	ck_assert_int_eq(store_txn_commit(txn, &d), 0);
	rba_buf_release(&b);
}

/*
 * The history page of a store: the guarantee per version (four weekly
 * scheduled audits; an ad hoc one apart), a failure named, a version name
 * with markup escaped, and a store with no audit said so.
 */
START_TEST(test_history_page)
{
	struct store *s = NULL;
	struct rba_detail d;
	struct rba_buf b;
	const char *page;

	ck_assert_msg(store_init(scratch_store, &d) == 0, "%s", d.reason);
	ck_assert_msg(store_open(scratch_store, 0, &s, &d) == 0, "%s", d.reason);
	rba_buf_init(&b);
	ck_assert_msg(report_history_html(s, 1767225600 + 2 * DAY, &b, &d) == 0,
		      "%s", d.reason);
	ck_assert(has(rba_buf_cstr(&b), "Audit history of the store: 0 versions, "
					"0 audits"));
	ck_assert(has(rba_buf_cstr(&b), "the history supports no guarantee"));
	rba_buf_release(&b);

	for (int i = 0; i < 4; i++)
		append_audit(s, "alpha", 7 * i, "bit-identical", 0);
	append_audit(s, "alpha", 10, "not-measured", 1);
	append_audit(s, "<i>beta</i>", 1, "bit-identical", 0);
	append_audit(s, "<i>beta</i>", 8, "not-reproducible", 0);
	rba_buf_init(&b);
	ck_assert_msg(report_history_html(s, 1767225600 + 22 * DAY, &b, &d) == 0,
		      "%s", d.reason);
	page = rba_buf_cstr(&b);
	ck_assert(has(page, "Over these 4 scheduled rebuilds of version alpha "
			    "between 2026-01-01T00:00:00Z and 2026-01-22T00:00:00Z, "
			    "every rebuild was bit-identical"));
	ck_assert(has(page, "&lt;i&gt;beta&lt;/i&gt;"));
	ck_assert(!has(page, "<i>beta"));
	ck_assert(has(page, "not-reproducible"));
	ck_assert(!has(page, "<script"));
	rba_buf_release(&b);
	store_close(s);
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
	tcase_add_test(tc, test_page_facts);
	tcase_add_test(tc, test_page_flips_and_dispute);
	tcase_add_test(tc, test_page_hostile);
	tcase_add_test(tc, test_page_missing_member);
	suite_add_tcase(s, tc);
	tc = tcase_create("history");
	tcase_add_checked_fixture(tc, history_setup, history_teardown);
	tcase_add_test(tc, test_history_page);
	suite_add_tcase(s, tc);
	return s;
}
