/*
 * check_evidence.c - evidence files (evidence/evidence.h): rendering one
 * audit record as an in-toto statement, determinism, the consistency
 * check and every way it must fail, signing and the pair written beside
 * each other.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/dispute.h"
#include "evidence/dispute_evidence.h"
#include "evidence/evidence.h"
#include "audit/register.h"
#include "sample/integrity.h"
#include "sample/sample.h"
#include "audit/sample_add.h"
#include "common/sign.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "common/json.h"
#include "data/snapshot.h"
#include "store/store.h"
#include "store/store_debug.h"
#include "tests/unit/scratch.h"
#include "tests/unit/suites.h"

#define GN FIXTURES "/german-credit-numeric.csv"
#define PINS_NUM_LOG FIXTURES "/pins/german-numeric-logistic.yaml"
#define POL_CREDIT FIXTURES "/policy/credit.yaml"
#define KEY FIXTURES "/keys/rba-test-only.key"
#define PUB FIXTURES "/keys/rba-test-only.pub"
#define VERSION "german-numeric-logistic"

static void
setup(void)
{
	scratch_make("evidence");
	ck_assert_int_eq(rba_crypto_init(), 0);
}

static void
teardown(void)
{
	scratch_remove();
}

static int
has(const char *s, const char *t)
{
	return s != NULL && strstr(s, t) != NULL;
}

static struct policy *
load_policy(const char *path)
{
	struct policy *p = NULL;
	struct rba_detail d;

	ck_assert_msg(policy_load(path, &p, &d) == 0, "%s: %s", path, d.reason);
	return p;
}

/* The first n data rows of the numeric German credit file, plus extra
 * text appended to each line (a score column) when given. */
static const char *
cases_file(const char *name, int rows, const char *header_extra,
	   const char *const *row_extra, int nextra)
{
	const char *path = scratch_path(name);
	FILE *in = fopen(GN, "r"), *out = fopen(path, "w");
	char line[4096];
	int i = 0;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while (i <= rows && fgets(line, sizeof(line), in) != NULL) {
		line[strcspn(line, "\r\n")] = 0;
		if (i == 0)
			fprintf(out, "%s%s\n", line, header_extra ? header_extra : "");
		else
			fprintf(out, "%s%s\n", line,
				row_extra ? row_extra[(i - 1) % nextra] : "");
		i++;
	}
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
	return path;
}

static void
add_sample(struct store *s, const char *csv, const char *score_column)
{
	struct sample_add_request rq;
	struct sample_add_result res;
	struct rba_detail d;

	memset(&rq, 0, sizeof(rq));
	rq.version = VERSION;
	rq.path = csv;
	rq.score_column = score_column;
	rba_detail_clear(&d);
	ck_assert_msg(sample_add(s, &rq, &res, &d) == 0, "sample: %s", d.reason);
	sample_add_result_release(&res);
}

/* Audits VERSION; record 0: keep it out of the history. */
static void
run_audit(struct store *s, int record, struct audit_report *r)
{
	struct audit_options o;
	struct rba_detail d;
	int err;

	memset(&o, 0, sizeof(o));
	o.no_record = !record;
	rba_detail_clear(&d);
	err = audit_version(s, VERSION, &o, r, &d);
	ck_assert_msg(err == 0, "audit: %d %s", err, d.reason);
}

/*
 * A store holding the numeric German credit logistic model under the
 * credit policy, a sample of 59 cases scored by its artifact, and one
 * bit-identical audit (history record 1).
 */
static struct store *
new_store(void)
{
	struct store *s = NULL;
	struct store_txn *t;
	struct register_request rq;
	struct register_result res;
	struct pins *p = NULL;
	struct policy *pol = load_policy(POL_CREDIT);
	struct rba_detail d;
	struct rba_digest dg;
	struct audit_report r;

	rba_detail_clear(&d);
	ck_assert_msg(store_init(scratch_store, &d) == 0, "init: %s", d.reason);
	ck_assert_msg(store_open(scratch_store, 0, &s, &d) == 0, "open: %s", d.reason);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_msg(snapshot_add(t, GN, NULL, &dg, NULL, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	ck_assert_int_eq(policy_pins_load(PINS_NUM_LOG, &p, &d), 0);
	memset(&rq, 0, sizeof(rq));
	rq.pins = p;
	rq.policy = pol;
	ck_assert_msg(register_version(s, &rq, &res, &d) == 0, "register: %s",
		      d.reason);
	register_result_release(&res);
	policy_pins_free(p);
	policy_free(pol);
	add_sample(s, cases_file("cases.csv", 59, NULL, NULL, 0), NULL);
	run_audit(s, 1, &r);
	ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
	ck_assert_uint_eq(r.history_id, 1);
	audit_report_release(&r);
	return s;
}

static char *
render(struct store *s, uint64_t id, int inputs, size_t *n,
       struct evidence_summary *sum)
{
	struct rba_buf b;
	struct rba_detail d;
	int err;

	rba_buf_init(&b);
	rba_detail_clear(&d);
	err = evidence_render(s, VERSION, id, inputs, &b, sum, &d);
	ck_assert_msg(err == 0, "render: %d %s", err, d.reason);
	rba_buf_cstr(&b);
	return (char *)rba_buf_steal(&b, n);
}

/* The comment export would sign for sum. */
static const char *
comment_of(const struct evidence_summary *sum)
{
	static char tc[SIGN_TRUSTED_COMMENT_MAX + 1];

	ck_assert_int_eq(evidence_trusted_comment(sum, "evidence.json", tc,
						  sizeof(tc)), 0);
	return tc;
}

/* evidence_check with the reason kept for the caller. */
static int
check(const char *doc, size_t n, const char *tc, struct evidence_summary *sum,
      char reason[384])
{
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	err = evidence_check(doc, n, tc, sum, &d);
	if (reason != NULL)
		snprintf(reason, 384, "%s", d.reason);
	return err;
}

/* doc with the first occurrence of from (after offset start) replaced. */
static char *
edit(const char *doc, const char *from, const char *to, size_t *n)
{
	const char *at = strstr(doc, from);
	size_t fl = strlen(from), tl = strlen(to), dl = strlen(doc);
	char *out;

	ck_assert_msg(at != NULL, "'%s' not in the evidence", from);
	out = malloc(dl - fl + tl + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, doc, (size_t)(at - doc));
	memcpy(out + (at - doc), to, tl);
	memcpy(out + (at - doc) + tl, at + fl, dl - (size_t)(at - doc) - fl + 1);
	*n = dl - fl + tl;
	return out;
}

static struct sign_seckey *
test_key(void)
{
	struct sign_seckey *k = NULL;
	struct rba_detail d;

	ck_assert_msg(sign_seckey_load(KEY, NULL, 0, &k, &d) == 0, "%s", d.reason);
	return k;
}

static int
count_tmp(void)
{
	DIR *dp = opendir(scratch_dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)) != NULL)
		if (strstr(e->d_name, ".tmp-") != NULL)
			n++;
	closedir(dp);
	return n;
}

static uint8_t *
slurp(const char *path, size_t *n)
{
	uint8_t *p = NULL;
	struct rba_detail d;

	ck_assert_msg(rba_file_read(path, 1 << 26, &p, n, &d) == 0, "%s", path);
	return p;
}

/* ---- rendering ------------------------------------------------------------ */

START_TEST(test_render_statement)
{
	struct store *s = new_store();
	struct evidence_summary sum, chk;
	struct rba_json_value v;
	struct rba_detail d;
	char reason[384];
	size_t n, n2;
	char *doc = render(s, 0, 0, &n, &sum), *doc2 = render(s, 1, 0, &n2, NULL);
	const struct rba_json_value *p, *subj;

	/* The same record twice: the same bytes, "latest" being record 1. */
	ck_assert_uint_eq(n, n2);
	ck_assert(memcmp(doc, doc2, n) == 0);
	ck_assert_str_eq(sum.version, VERSION);
	ck_assert_str_eq(sum.verdict, "bit-identical");
	ck_assert_uint_eq(sum.audit_id, 1);
	ck_assert_uint_eq(sum.cases, 59);
	ck_assert(doc[n - 1] == '\n');

	ck_assert_int_eq(rba_json_parse(doc, n, &v, &d), 0);
	ck_assert_str_eq(rba_json_get_str(&v, "_type"), "https://in-toto.io/Statement/v1");
	ck_assert_str_eq(rba_json_get_str(&v, "predicateType"), EVIDENCE_PREDICATE_TYPE);
	subj = rba_json_get(&v, "subject");
	ck_assert(subj != NULL && subj->n == 1);
	ck_assert_str_eq(rba_json_get_str(&subj->items[0], "name"),
			 VERSION ".artifact");
	p = rba_json_get(&v, "predicate");
	ck_assert_str_eq(rba_json_get_str(p, "verdict"), "bit-identical");
	ck_assert(has(rba_json_get_str(p, "guarantee"),
		      "the rebuilt artifact is bit-identical to the pinned one"));
	ck_assert(rba_json_get(p, "inputs_included")->type == RBA_JSON_FALSE);
	ck_assert(has(rba_json_get_str(rba_json_get(p, "pins"), "text"), "version: " VERSION));
	ck_assert(has(rba_json_get_str(rba_json_get(p, "policy"), "text"),
		      "max_score_delta: 0.0005"));
	ck_assert(rba_json_get_str(rba_json_get(rba_json_get(p, "environment"), "current"),
			       "record") != NULL);
	ck_assert(rba_json_get_num(rba_json_get(rba_json_get(p, "policy"), "tolerance"),
			       "max_score_delta", -1) == 0.0005);
	ck_assert_str_eq(rba_json_get_str(rba_json_get(p, "audit"), "store_id"),
			 store_id_hex(s));
	rba_json_release(&v);

	/* It passes its own check, and says what it is. */
	ck_assert_msg(check(doc, n, comment_of(&sum), &chk, reason) == 0, "%s",
		      reason);
	ck_assert_int_eq(chk.is_evidence, 1);
	ck_assert_str_eq(chk.verdict, "bit-identical");
	ck_assert_str_eq(chk.time_text, sum.time_text);
	ck_assert_str_eq(chk.guarantee, sum.guarantee);
	ck_assert(rba_digest_equal(&chk.artifact, &sum.artifact));
	free(doc);
	free(doc2);
	store_close(s);
}
END_TEST

START_TEST(test_render_refusals)
{
	struct store *s = new_store();
	struct rba_buf b;
	struct rba_detail d;
	struct audit_report r;
	struct store_txn *t;

	rba_buf_init(&b);
	/* No such record, no record of that version. */
	ck_assert_int_eq(evidence_render(s, VERSION, 99, 0, &b, NULL, &d),
			 RBA_E_NOTFOUND);
	ck_assert(has(d.reason, "no audit record 99"));
	ck_assert_int_eq(evidence_render(s, "other", 0, 0, &b, NULL, &d),
			 RBA_E_NOTFOUND);
	ck_assert(has(d.reason, "run 'rebuild-audit audit other' first"));
	ck_assert_int_eq(evidence_render(s, "other", 1, 0, &b, NULL, &d),
			 RBA_E_SCHEMA);
	ck_assert(has(d.reason, "is of version 'german-numeric-logistic'"));

	/* A record that did not measure attests nothing. */
	memset(&r, 0, sizeof(r));
	r.version = strdup(VERSION);
	r.time = 1700000000;
	r.verdict = AUDIT_NOT_MEASURED;
	r.exit_status = 2;
	r.reasons = calloc(1, sizeof(char *));
	r.reasons[0] = strdup("tampered: the stored artifact does not match");
	r.nreasons = 1;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	ck_assert_uint_eq(r.history_id, 2);
	audit_report_release(&r);
	ck_assert_int_eq(evidence_render(s, VERSION, 0, 0, &b, NULL, &d),
			 RBA_E_SCHEMA);
	ck_assert_msg(has(d.reason, "did not measure (not-measured: tampered"), "%s",
		      d.reason);
	/* ... but the measured record before it still exports. */
	rba_detail_clear(&d);
	ck_assert_int_eq(evidence_render(s, VERSION, 1, 0, &b, NULL, &d), 0);
	ck_assert_uint_eq(b.len > 0, 1);

	/* A damaged history is not exported from. */
	{
		uint8_t key[8], *val = NULL;
		size_t vlen = 0;

		store_debug_history_key(1, key);
		ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
		ck_assert_int_eq(store_debug_get_raw(t, "history", key, 8, &val,
						     &vlen, &d), 0);
		val[vlen - 3] ^= 1;
		ck_assert_int_eq(store_debug_put_raw(t, "history", key, 8, val, vlen,
						     &d), 0);
		ck_assert_int_eq(store_txn_commit(t, &d), 0);
		free(val);
	}
	b.len = 0;
	ck_assert_int_eq(evidence_render(s, VERSION, 1, 0, &b, NULL, &d),
			 RBA_E_TAMPERED);
	rba_buf_release(&b);
	store_close(s);
}
END_TEST

/* A metric-equivalent record, as an audit with a nearby rebuild writes
 * it; consistent, and the guarantee the tolerance gives. */
START_TEST(test_metric_equivalent)
{
	struct store *s = new_store();
	struct audit_report r;
	struct evidence_summary sum;
	struct rba_detail d;
	char reason[384];
	size_t n;
	char *doc;

	run_audit(s, 0, &r);
	r.verdict = AUDIT_METRIC_EQUIVALENT;
	r.artifact_rebuilt.b[0] ^= 0x55;
	r.max_delta = 0.0001;
	r.near_cases = 0;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_str_eq(sum.verdict, "metric-equivalent");
	ck_assert_msg(has(sum.guarantee, "a rebuild of version " VERSION " from its "
				     "pins reproduces every decision on the audit "
				     "sample of 59 cases and every score within "
				     "0.0005"), "%s", sum.guarantee);
	ck_assert_msg(check(doc, n, comment_of(&sum), NULL, reason) == 0, "%s",
		      reason);
	free(doc);

	/* Near-threshold cases under require_bits: not metric-equivalent. */
	r.near_cases = 3;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "3 audit cases sit near a band edge"), "%s",
		      reason);
	free(doc);

	/* Over the score tolerance, with no reason. */
	r.near_cases = 0;
	r.max_delta = 0.01;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "maximum score delta of 0.01, over the "
			  "tolerance of 0.0005"), "%s", reason);
	free(doc);

	/* Bit-identical with a different rebuilt digest. */
	r.verdict = AUDIT_BIT_IDENTICAL;
	r.max_delta = 0;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "verdict bit-identical, but the rebuilt artifact"),
		      "%s", reason);
	free(doc);
	audit_report_release(&r);
	store_close(s);
}
END_TEST

/* Appends bytes p (n) as a history record of VERSION at time t. */
static uint64_t
append_raw(struct store *s, int64_t t, const char *p, size_t n)
{
	struct store_txn *txn;
	struct rba_detail d;
	uint64_t id = 0;

	rba_detail_clear(&d);
	ck_assert_int_eq(store_txn_begin(s, 1, n, &txn, &d), 0);
	ck_assert_msg(store_history_append(txn, VERSION, t, p, n, &id, NULL, &d) == 0,
		      "%s", d.reason);
	ck_assert_int_eq(store_txn_commit(txn, &d), 0);
	return id;
}

/* The value of "key" inside predicate.artifact of doc, or "". */
static const char *
artifact_field(const char *doc, size_t n, const char *key)
{
	static char out[128];
	struct rba_json_value v;
	struct rba_detail d;
	const struct rba_json_value *a;

	out[0] = 0;
	ck_assert_int_eq(rba_json_parse(doc, n, &v, &d), 0);
	a = rba_json_get(rba_json_get(rba_json_get(&v, "predicate"), "artifact"), key);
	ck_assert_ptr_nonnull(a);
	snprintf(out, sizeof(out), "%s",
		 a->type == RBA_JSON_STRING ? a->str
		 : a->type == RBA_JSON_TRUE ? "true"
		 : a->type == RBA_JSON_FALSE ? "false" : "null");
	rba_json_release(&v);
	return out;
}

/*
 * The artifact that made the sample's stored decisions (replaced since
 * by register --replace): bit-identical only when it is the rebuilt
 * one; metric-equivalent, or not-reproducible, naming it, when the
 * rebuild is the pinned artifact and it is not.
 */
START_TEST(test_decisions_artifact)
{
	struct store *s = new_store();
	struct audit_report r;
	struct evidence_summary sum;
	struct rba_detail d;
	char reason[384], maker[RBA_DIGEST_TEXT_LEN + 1];
	char pinned[RBA_DIGEST_TEXT_LEN + 1];
	size_t n, n2;
	char *doc, *bad;

	/* Record 1: all three the same, and the evidence says so. */
	doc = render(s, 1, 0, &n, &sum);
	ck_assert_str_eq(artifact_field(doc, n, "decisions_by_rebuilt"), "true");
	ck_assert_str_eq(artifact_field(doc, n, "decisions"),
			 artifact_field(doc, n, "rebuilt"));
	ck_assert_msg(has(sum.guarantee, "the artifact that made the stored "
			  "decisions of the audit sample"), "%s", sum.guarantee);
	free(doc);

	run_audit(s, 0, &r);
	ck_assert_int_eq(r.has_decisions, 1);
	r.artifact_decisions.b[0] ^= 0x55; /* another artifact decided */
	rba_digest_format(&r.artifact_decisions, maker);
	rba_digest_format(&r.artifact_pinned, pinned);

	/* Bit-identical although another artifact made the decisions. */
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_str_eq(artifact_field(doc, n, "decisions"), maker);
	ck_assert_str_eq(artifact_field(doc, n, "decisions_by_rebuilt"), "false");
	ck_assert_str_eq(artifact_field(doc, n, "bit_identical"), "true");
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "verdict bit-identical, but the sample's stored "
			  "decisions were made by artifact") && has(reason, maker),
		      "%s", reason);
	free(doc);

	/* Metric-equivalent: the rebuild is the pinned artifact, judged on
	 * scores against the decisions of the other. */
	r.verdict = AUDIT_METRIC_EQUIVALENT;
	r.max_delta = 0.0001;
	r.near_cases = 0;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_msg(check(doc, n, comment_of(&sum), NULL, reason) == 0, "%s",
		      reason);
	ck_assert_msg(has(sum.guarantee, "the stored decisions of the audit sample "
			  "were made by artifact") && has(sum.guarantee, maker) &&
			      has(sum.guarantee, pinned) &&
			      has(sum.guarantee, "every score within 0.0005, not bit "
					  "for bit"),
		      "%s", sum.guarantee);
	ck_assert(!has(sum.guarantee, "for any input"));

	/* The predicate's copy of that artifact is checked against the
	 * record: every mention of it outside the record changed. */
	{
		char other[RBA_DIGEST_TEXT_LEN + 1], *rec, *at;
		snprintf(other, sizeof(other), "%s", maker);
		other[7] = other[7] == '0' ? '1' : '0';
		bad = strdup(doc);
		ck_assert_ptr_nonnull(bad);
		rec = strstr(bad, "\n    \"record\": ");
		ck_assert_ptr_nonnull(rec);
		while ((at = strstr(bad, maker)) != NULL && at < rec)
			memcpy(at, other, RBA_DIGEST_TEXT_LEN);
		ck_assert_int_eq(check(bad, n, NULL, NULL, reason), RBA_E_SCHEMA);
		ck_assert_msg(has(reason, "predicate.artifact.decisions") &&
				      has(reason, "is not the embedded audit record's"),
			      "%s", reason);
		free(bad);
	}
	/* ... and decisions_by_rebuilt against the digests. */
	bad = edit(doc, "\"decisions_by_rebuilt\": false", "\"decisions_by_rebuilt\": true",
		   &n2);
	ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "decisions_by_rebuilt is true"), "%s", reason);
	free(bad);
	free(doc);

	/* ... with near-threshold cases under require_bits: refused. */
	r.near_cases = 2;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "2 audit cases sit near a band edge"), "%s", reason);
	free(doc);

	/* Not-reproducible for that reason: consistent, and it says who
	 * decided. */
	r.verdict = AUDIT_NOT_REPRODUCIBLE;
	r.exit_status = 1;
	ck_assert_uint_eq(r.nreasons, 0);
	free(r.reasons);
	r.reasons = calloc(1, sizeof(char *));
	r.reasons[0] = strdup("near-threshold rule: 2 audit cases lie within the "
			      "margin");
	r.nreasons = 1;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_msg(check(doc, n, comment_of(&sum), NULL, reason) == 0, "%s",
		      reason);
	ck_assert_msg(has(sum.guarantee, "none: a rebuild of version " VERSION
			  " from its pins is bit-identical to the pinned artifact") &&
			      has(sum.guarantee, "but the stored decisions of its "
					  "audit sample were made by artifact") &&
			      has(sum.guarantee, maker),
		      "%s", sum.guarantee);
	free(doc);

	/* Metric-equivalent with all three the same is bit-identical. */
	free(r.reasons[0]);
	r.nreasons = 0;
	r.exit_status = 0;
	r.near_cases = 0;
	r.verdict = AUDIT_METRIC_EQUIVALENT;
	r.artifact_decisions = r.artifact_rebuilt;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "verdict metric-equivalent, but the rebuilt "
			  "artifact is the pinned one (bit-identical) and made the "
			  "sample's stored decisions"), "%s", reason);
	free(doc);
	audit_report_release(&r);
	store_close(s);
}
END_TEST

/*
 * A record written before audits named the artifact that made the
 * decisions (no digests.artifact_decisions key): still exported and
 * verified, with decisions null, and the guarantee says what it could
 * not check.
 */
START_TEST(test_older_record)
{
	struct store *s = new_store();
	struct audit_report r;
	struct evidence_summary sum;
	struct rba_buf b;
	char reason[384];
	const char *key = "\"artifact_decisions\": ";
	char *at;
	size_t n, kl = strlen(key) + RBA_DIGEST_TEXT_LEN + 2 + 2;
	uint64_t id;
	char *doc;

	run_audit(s, 0, &r);
	rba_buf_init(&b);
	audit_report_json(&r, &b);
	rba_buf_cstr(&b);
	at = strstr((char *)b.p, key);
	ck_assert_ptr_nonnull(at);
	/* "artifact_decisions": "sha256:<64>", -- gone */
	ck_assert(at[kl - 2] == ',' && at[kl - 1] == ' ');
	memmove(at, at + kl, b.len - (size_t)(at - (char *)b.p) - kl + 1);
	b.len -= kl;
	ck_assert(strstr((char *)b.p, "artifact_decisions") == NULL);
	id = append_raw(s, r.time, (const char *)b.p, b.len);

	doc = render(s, id, 0, &n, &sum);
	ck_assert_str_eq(sum.verdict, "bit-identical");
	ck_assert_str_eq(artifact_field(doc, n, "decisions"), "null");
	ck_assert_str_eq(artifact_field(doc, n, "decisions_by_rebuilt"), "false");
	ck_assert_msg(check(doc, n, comment_of(&sum), NULL, reason) == 0, "%s",
		      reason);
	ck_assert(has(sum.guarantee, "for any input"));
	ck_assert(!has(sum.guarantee, "made the stored decisions"));
	ck_assert(has(doc, "the audit record does not name the artifact that made "
			   "them"));
	free(doc);

	/* Metric-equivalent with the rebuild the pinned artifact, and no
	 * other artifact named: nothing excuses the lost bits. */
	at = strstr((char *)b.p, "\"verdict\": \"bit-identical\"");
	ck_assert_ptr_nonnull(at);
	{
		struct rba_buf m;
		rba_buf_init(&m);
		rba_buf_put(&m, b.p, (size_t)(at - (char *)b.p));
		rba_buf_put(&m, "\"verdict\": \"metric-equivalent\"", 30);
		rba_buf_put(&m, at + 26, b.len - (size_t)(at - (char *)b.p) - 26);
		id = append_raw(s, r.time, (const char *)m.p, m.len);
		rba_buf_release(&m);
	}
	doc = render(s, id, 0, &n, &sum);
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "verdict metric-equivalent, but the rebuilt "
			  "artifact is the pinned one (bit-identical)"), "%s", reason);
	free(doc);
	rba_buf_release(&b);
	audit_report_release(&r);
	store_close(s);
}
END_TEST

/*
 * The history head at export: in every file, never older than the
 * record; "latest" passes over register records, and a register record
 * is not exported.
 */
START_TEST(test_history_head)
{
	struct store *s = new_store();
	struct audit_report r;
	struct evidence_summary sum, chk;
	struct store_txn *txn;
	struct rba_digest head;
	struct rba_buf b;
	struct rba_detail d;
	char reason[384], hex[RBA_DIGEST_TEXT_LEN + 1];
	size_t n, n2;
	uint64_t hid, reg;
	char *doc, *bad;
	static const char regrec[] =
		"{\"schema\": \"rebuild-audit/register/v1\", \"event\": \"replace\", "
		"\"version\": \"" VERSION "\"}";

	/* The record itself is the head. */
	doc = render(s, 1, 0, &n, &sum);
	ck_assert_uint_eq(sum.head_id, 1);
	ck_assert(has(doc, "\"history\": {\n      \"head\": {\n        \"id\": 1,"));
	ck_assert_msg(check(doc, n, NULL, &chk, reason) == 0, "%s", reason);
	ck_assert_uint_eq(chk.head_id, 1);
	/* ... so its digest must be the record's chain digest. */
	rba_digest_format(&sum.head, hex);
	hex[10] = hex[10] == '0' ? '1' : '0';
	{
		char *at;
		bad = strdup(doc);
		at = strstr(strstr(bad, "\"history\": {"), "\"digest\": \"") +
		     strlen("\"digest\": \"");
		memcpy(at, hex, RBA_DIGEST_TEXT_LEN);
		ck_assert_int_eq(check(bad, n, NULL, NULL, reason), RBA_E_SCHEMA);
		ck_assert_msg(has(reason, "the audit record itself, but its digest"),
			      "%s", reason);
		free(bad);
	}
	free(doc);

	/* A later audit and a register record: the head moves on, the
	 * record exported stays; "latest" is the newest audit. */
	run_audit(s, 1, &r);
	ck_assert_uint_eq(r.history_id, 2);
	audit_report_release(&r);
	reg = append_raw(s, 1700000000, regrec, sizeof(regrec) - 1);
	ck_assert_uint_eq(reg, 3);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &txn, &d), 0);
	ck_assert_int_eq(store_history_head(txn, &hid, &head, &d), 0);
	store_txn_abort(txn);
	ck_assert_uint_eq(hid, 3);

	doc = render(s, 0, 0, &n, &sum);
	ck_assert_uint_eq(sum.audit_id, 2);
	ck_assert_uint_eq(sum.head_id, 3);
	ck_assert(rba_digest_equal(&sum.head, &head));
	ck_assert_msg(check(doc, n, comment_of(&sum), &chk, reason) == 0, "%s",
		      reason);
	ck_assert_uint_eq(chk.head_id, 3);
	ck_assert(rba_digest_equal(&chk.head, &head));
	/* A head older than the record cannot be. */
	bad = edit(doc, "\"head\": {\n        \"id\": 3,", "\"head\": {\n        \"id\": 1,",
		   &n2);
	ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "predicate.history.head.id 1 is below the audit "
			  "record's id 2"), "%s", reason);
	free(bad);
	free(doc);
	doc = render(s, 1, 0, &n, &sum);
	ck_assert_uint_eq(sum.head_id, 3);
	ck_assert_msg(check(doc, n, NULL, NULL, reason) == 0, "%s", reason);
	free(doc);

	/* A register record by id: refused, saying what it is. */
	rba_buf_init(&b);
	ck_assert_int_eq(evidence_render(s, VERSION, reg, 0, &b, NULL, &d),
			 RBA_E_SCHEMA);
	ck_assert_msg(has(d.reason, "history record 3 is a register record "
			  "('replace') of version '" VERSION "', not an audit"),
		      "%s", d.reason);
	ck_assert_uint_eq(b.len, 0);
	rba_buf_release(&b);
	store_close(s);
}
END_TEST

/* Scores from a column that the model does not give: flips, listed with
 * their inputs on request, and refused once the sample is replaced. */
START_TEST(test_flips_and_inputs)
{
	static const char *const scores[] = { ",0.1", ",0.9", ",0.4" };
	struct store *s = new_store();
	struct audit_report r;
	struct evidence_summary sum;
	struct rba_buf b;
	struct rba_detail d;
	struct rba_json_value v;
	char reason[384];
	size_t n;
	char *doc;
	const struct rba_json_value *fl, *in;

	add_sample(s, cases_file("scored.csv", 40, ",score", scores, 3), "score");
	run_audit(s, 1, &r);
	ck_assert_int_eq(r.verdict, AUDIT_NOT_REPRODUCIBLE);
	ck_assert(r.flips > 0);

	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_str_eq(sum.verdict, "not-reproducible");
	ck_assert(has(sum.guarantee, "none: a rebuild of version"));
	ck_assert(has(sum.guarantee, "is bit-identical to the pinned artifact"));
	ck_assert_msg(check(doc, n, comment_of(&sum), NULL, reason) == 0, "%s",
		      reason);
	ck_assert(strstr(doc, "\"inputs\"") == NULL);
	free(doc);

	doc = render(s, r.history_id, 1, &n, &sum);
	ck_assert_msg(check(doc, n, comment_of(&sum), NULL, reason) == 0, "%s",
		      reason);
	ck_assert_int_eq(rba_json_parse(doc, n, &v, &d), 0);
	fl = rba_json_get(rba_json_get(rba_json_get(&v, "predicate"), "results"), "flipped_cases");
	ck_assert(fl != NULL && fl->n == r.flips);
	in = rba_json_get(&fl->items[0], "inputs");
	ck_assert(in != NULL && in->type == RBA_JSON_OBJECT && in->n == 27);
	ck_assert_str_eq(in->keys[0], "id");
	ck_assert_str_eq(in->items[0].str, rba_json_get_str(&fl->items[0], "id"));
	ck_assert_str_eq(in->keys[26], "score");
	ck_assert(rba_json_get(rba_json_get(&v, "predicate"), "inputs_included")->type ==
		  RBA_JSON_TRUE);
	rba_json_release(&v);

	/* An input edited in the file: the record cannot tell, the signature
	 * does; a case without inputs when they are included is caught. */
	{
		size_t n2;
		char *bad = edit(doc, "\"inputs\": {\n", "\"inputs\": {}, \"x\": {\n", &n2);
		ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
		free(bad);
	}
	free(doc);

	/* The sample replaced since the audit: its inputs are not the ones
	 * the audit scored. */
	add_sample(s, cases_file("other.csv", 30, ",score", scores, 3), "score");
	rba_buf_init(&b);
	ck_assert_int_eq(evidence_render(s, VERSION, r.history_id, 1, &b, NULL, &d),
			 RBA_E_SCHEMA);
	ck_assert_msg(has(d.reason, "changed since audit"), "%s", d.reason);
	/* Without inputs the record still exports. */
	ck_assert_int_eq(evidence_render(s, VERSION, r.history_id, 0, &b, NULL, &d),
			 0);
	rba_buf_release(&b);
	audit_report_release(&r);
	store_close(s);
}
END_TEST

/*
 * The sample claim (doc/design.md section 8.2): the rebuild is the
 * pinned artifact and made the stored decisions, but stored scores are
 * not its bits beyond the logging precision declared with the sample.
 * That is metric-equivalent, said in words, and never bit-identical.
 */
START_TEST(test_sample_claim)
{
	struct store *s = new_store();
	struct audit_report r;
	struct evidence_summary sum;
	struct rba_detail d;
	char reason[384], pinned[RBA_DIGEST_TEXT_LEN + 1];
	size_t n, n2;
	char *doc, *bad;

	run_audit(s, 0, &r);
	ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
	rba_digest_format(&r.artifact_pinned, pinned);
	r.verdict = AUDIT_METRIC_EQUIVALENT;
	r.scores_off = 3;
	r.scores_off_case = strdup("7");
	r.has_score_precision = 1;
	r.score_precision = 0.0001;
	r.max_delta = 0.0003;
	r.near_cases = 0;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_msg(check(doc, n, comment_of(&sum), NULL, reason) == 0, "%s",
		      reason);
	ck_assert(has(doc, "\"predicateType\": \"https://rebuild-audit.dev/"
			   "audit-evidence/v2\""));
	ck_assert(has(doc, "\n      \"score_precision\": 0.0001\n"));
	ck_assert(has(doc, "\n      \"scores_off_precision\": 3,\n"));
	ck_assert(has(doc, "\n      \"scores_off_case\": \"7\",\n"));
	ck_assert_msg(has(sum.guarantee, "a rebuild of version " VERSION " from its "
			  "pins gives the pinned artifact") &&
			      has(sum.guarantee, pinned) &&
			      has(sum.guarantee, "bit for bit, but 3 stored scores of "
					  "the audit sample are not its") &&
			      has(sum.guarantee, "0.0001") &&
			      has(sum.guarantee, "production did not run it bit for "
					  "bit on those cases") &&
			      has(sum.guarantee, "every score within 0.0005"),
		      "%s", sum.guarantee);
	/* The count edited in the predicate: it is the record's, and with
	 * none off the verdict would have to be bit-identical. */
	bad = edit(doc, "\"scores_off_precision\": 3,", "\"scores_off_precision\": 0,",
		   &n2);
	ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "verdict metric-equivalent, but the rebuilt "
			  "artifact is the pinned one"), "%s", reason);
	free(bad);
	bad = edit(doc, "\"scores_off_precision\": 3,", "\"scores_off_precision\": 4,",
		   &n2);
	ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
	free(bad);
	free(doc);

	/* Bit-identical with stored scores off: refused. */
	r.verdict = AUDIT_BIT_IDENTICAL;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "verdict bit-identical, but 3 stored scores of the "
			  "audit sample are not the pinned artifact's"), "%s", reason);
	free(doc);

	/* Bit-identical with none off: its guarantee says the stored scores
	 * are the pinned artifact's within the declared precision. */
	r.scores_off = 0;
	free(r.scores_off_case);
	r.scores_off_case = NULL;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_msg(check(doc, n, NULL, NULL, reason) == 0, "%s", reason);
	ck_assert_msg(has(sum.guarantee, "every stored score of the audit sample is "
			  "the pinned artifact's within the logging precision 0.0001 "
			  "declared with the sample"), "%s", sum.guarantee);
	free(doc);

	/* Near-threshold cases under require_bits: not metric-equivalent. */
	r.verdict = AUDIT_METRIC_EQUIVALENT;
	r.scores_off = 3;
	r.scores_off_case = strdup("7");
	r.near_cases = 2;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_int_eq(check(doc, n, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "2 audit cases sit near a band edge"), "%s", reason);
	free(doc);

	/* Not-reproducible for that reason: consistent, and it says why. */
	r.verdict = AUDIT_NOT_REPRODUCIBLE;
	r.exit_status = 1;
	free(r.reasons);
	r.reasons = calloc(1, sizeof(char *));
	r.reasons[0] = strdup("near-threshold rule: 2 audit cases lie within 0.001 "
			      "of a band edge");
	r.nreasons = 1;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	doc = render(s, r.history_id, 0, &n, &sum);
	ck_assert_msg(check(doc, n, comment_of(&sum), NULL, reason) == 0, "%s",
		      reason);
	ck_assert_msg(has(sum.guarantee, "none: a rebuild of version " VERSION) &&
			      has(sum.guarantee, "3 stored scores of the audit sample "
					  "are not its"), "%s", sum.guarantee);
	free(doc);
	audit_report_release(&r);
	store_close(s);
}
END_TEST

/* The first occurrence of key's line in doc, as its text up to the
 * newline (static). */
static const char *
line_of(const char *doc, const char *key)
{
	static char out[512];
	const char *at = strstr(doc, key), *nl;

	ck_assert_msg(at != NULL, "'%s' not in the evidence", key);
	nl = strchr(at, '\n');
	snprintf(out, sizeof(out), "%.*s", (int)(nl - at), at);
	return out;
}

/*
 * Declared before (doc/design.md sections 8.2 and 10): "latest" passes
 * over an ad hoc record, which is exported by id saying so; the policy
 * that judged is named with when it was declared; the version's earlier
 * audits since then are listed, so that a failure one audit earlier
 * does not vanish behind the latest.
 */
START_TEST(test_declared_and_earlier)
{
	struct store *s = new_store();
	struct policy *tolerant = load_policy(FIXTURES "/policy/audit-tolerant.yaml");
	struct audit_options o;
	struct audit_report r;
	struct evidence_summary sum, chk;
	struct rba_detail d;
	char reason[384];
	size_t n, n2;
	uint64_t adhoc, failed;
	char *doc, *bad;

	/* 2: ad hoc, a yes that exits 2. */
	memset(&o, 0, sizeof(o));
	o.policy = tolerant;
	rba_detail_clear(&d);
	ck_assert_int_eq(audit_version(s, VERSION, &o, &r, &d), 0);
	ck_assert_int_eq(r.ad_hoc, 1);
	ck_assert_int_eq(r.exit_status, 2);
	adhoc = r.history_id;
	ck_assert_uint_eq(adhoc, 2);
	audit_report_release(&r);

	/* "latest" is the version's audit, not the ad hoc one. */
	doc = render(s, 0, 0, &n, &sum);
	ck_assert_uint_eq(sum.audit_id, 1);
	ck_assert_int_eq(sum.ad_hoc, 0);
	ck_assert(has(doc, "\n      \"judged_by\": \"version\",\n"));
	ck_assert(has(doc, "\n      \"ad_hoc\": false,\n"));
	ck_assert(has(doc, "\n      \"earlier_audits\": []\n"));
	free(doc);

	/* By id it is exported, and says ad hoc where it counts. */
	doc = render(s, adhoc, 0, &n, &sum);
	ck_assert_msg(check(doc, n, comment_of(&sum), &chk, reason) == 0, "%s",
		      reason);
	ck_assert_int_eq(chk.ad_hoc, 1);
	ck_assert(has(doc, "\n      \"judged_by\": \"option\",\n"));
	ck_assert(has(doc, "\n      \"declared_at\": null,\n"));
	ck_assert(has(doc, "\n      \"ad_hoc\": true,\n"));
	ck_assert(has(doc, "\n      \"earlier_since\": null,\n"));
	ck_assert_msg(has(sum.guarantee, "ad hoc, not the version's audit: judged "
			  "by policy sha256:") &&
			      has(sum.guarantee, "given for this audit instead of the "
					  "one declared for the version"),
		      "%s", sum.guarantee);
	ck_assert(has(line_of(doc, "\"not_guaranteed\""), "this audit was ad hoc"));
	/* ad hoc taken back in the predicate: the record says otherwise */
	bad = edit(doc, "\"ad_hoc\": true,", "\"ad_hoc\": false,", &n2);
	ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
	free(bad);
	/* its exit status made 0: a yes under an ad hoc policy exits 2 */
	bad = edit(doc, "\"exit_status\": 2", "\"exit_status\": 0", &n2);
	ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "exit status 0, but the audit was ad hoc"), "%s",
		      reason);
	free(bad);
	free(doc);

	/* 3: a failure of the version's own audit, then 4: a yes. */
	run_audit(s, 0, &r);
	r.verdict = AUDIT_NOT_REPRODUCIBLE;
	r.exit_status = 1;
	free(r.reasons);
	r.reasons = calloc(1, sizeof(char *));
	r.reasons[0] = strdup("2 decision flips on the audit sample");
	r.nreasons = 1;
	r.flips = 2;
	ck_assert_int_eq(audit_record_append(s, &r, &d), 0);
	failed = r.history_id;
	audit_report_release(&r);
	run_audit(s, 1, &r);
	ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
	audit_report_release(&r);

	doc = render(s, 0, 0, &n, &sum);
	ck_assert_uint_eq(sum.audit_id, failed + 1);
	ck_assert_msg(check(doc, n, comment_of(&sum), &chk, reason) == 0, "%s",
		      reason);
	ck_assert_uint_eq(chk.earlier, 3);
	ck_assert_uint_eq(chk.earlier_failed, 1);
	ck_assert(has(doc, "\"verdict\": \"not-reproducible\",\n          "
			   "\"exit_status\": 1,"));
	ck_assert_msg(has(line_of(doc, "\"not_guaranteed\""), "1 of the 3 earlier "
			  "audits of version " VERSION), "%s",
		      line_of(doc, "\"not_guaranteed\""));
	{
		/* since the policy was declared: the record's declared_at */
		char since[96];
		snprintf(since, sizeof(since), "\"earlier_since\"%s",
			 line_of(doc, "\"declared_at\"") + strlen("\"declared_at\""));
		ck_assert_msg(has(doc, since), "%s", since);
		ck_assert(!has(since, "null"));
	}
	/* The list in order, before the record, with the exit status each
	 * verdict gives. */
	bad = edit(doc, "\"exit_status\": 1,", "\"exit_status\": 0,", &n2);
	ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "predicate.history.earlier_audits[2]"), "%s", reason);
	free(bad);
	{
		char from[32], to[32];
		snprintf(from, sizeof(from), "\"id\": %llu,\n          \"time\"",
			 (unsigned long long)failed);
		snprintf(to, sizeof(to), "\"id\": %llu,\n          \"time\"",
			 (unsigned long long)failed + 1);
		bad = edit(doc, from, to, &n2);
		ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
		ck_assert_msg(has(reason, "not before the audit record"), "%s", reason);
		free(bad);
		snprintf(to, sizeof(to), "\"id\": 1,\n          \"time\"");
		bad = edit(doc, from, to, &n2);
		ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
		ck_assert_msg(has(reason, "not in history order"), "%s", reason);
		free(bad);
	}
	bad = edit(doc, "\"earlier_since\": \"", "\"earlier_since\": \"1", &n2);
	ck_assert_int_eq(check(bad, n2, NULL, NULL, reason), RBA_E_SCHEMA);
	free(bad);
	free(doc);
	policy_free(tolerant);
	store_close(s);
}
END_TEST

/* What store check reported: the findings of the history database. */
struct findings {
	int n;
	char key[8][32], reason[8][400];
};

static int
collect_finding(void *ctx, const char *db, const char *key, int err,
		const char *reason)
{
	struct findings *f = ctx;

	(void)err;
	if (strcmp(db, "history") == 0 && f->n < 8) {
		snprintf(f->key[f->n], sizeof(f->key[0]), "%s", key);
		snprintf(f->reason[f->n], sizeof(f->reason[0]), "%s", reason);
		f->n++;
	}
	return 0;
}

/* The hook `store check` plugs in (cli/cmd_store.c does the same). */
static int
history_hook(void *ctx, const struct store_history_entry *e,
	     struct rba_detail *d)
{
	(void)ctx;
	return evidence_history_record_check(e, d);
}

static struct findings
store_findings(struct store *s, int with_hook)
{
	struct findings f;
	struct audit_check_sink sink;
	struct audit_check_stats st;
	struct store_txn *txn;
	struct rba_detail d;

	memset(&f, 0, sizeof(f));
	memset(&sink, 0, sizeof(sink));
	sink.finding = collect_finding;
	sink.history_record = with_hook ? history_hook : NULL;
	sink.ctx = &f;
	rba_detail_clear(&d);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &txn, &d), 0);
	ck_assert_msg(sample_store_check(txn, &sink, &st, &d) == 0, "%s", d.reason);
	store_txn_abort(txn);
	return f;
}

/*
 * A history holding an audit record that contradicts itself (one an
 * older tool took in) is not clean: store check applies the rules
 * export applies to every audit record, and passes over other kinds.
 */
START_TEST(test_store_check_records)
{
	struct store *s = new_store();
	struct audit_report r;
	struct rba_detail d;
	struct findings f;
	struct rba_buf b;
	static const char regrec[] =
		"{\"schema\": \"rebuild-audit/register/v1\", \"event\": \"replace\", "
		"\"version\": \"" VERSION "\"}";

	append_raw(s, 1700000000, regrec, sizeof(regrec) - 1);
	f = store_findings(s, 1);
	ck_assert_msg(f.n == 0, "%s", f.reason[0]);

	/* bit-identical with 7 flips and another rebuilt artifact */
	run_audit(s, 0, &r);
	r.flips = 7;
	r.artifact_rebuilt.b[0] ^= 0x55;
	rba_buf_init(&b);
	audit_report_json(&r, &b);
	ck_assert_uint_eq(append_raw(s, r.time, (const char *)b.p, b.len), 3);
	ck_assert_int_eq(evidence_record_check(b.p, b.len, &d), RBA_E_SCHEMA);
	ck_assert_msg(has(d.reason, "verdict bit-identical, but the rebuilt "
			  "artifact"), "%s", d.reason);
	rba_buf_release(&b);
	audit_report_release(&r);

	/* the store's own walk does not read what a record says ... */
	f = store_findings(s, 0);
	ck_assert_int_eq(f.n, 0);
	/* ... the hook does */
	f = store_findings(s, 1);
	ck_assert_int_eq(f.n, 1);
	ck_assert_str_eq(f.key[0], "3");
	ck_assert_msg(has(f.reason[0], "audit record 3 of version '" VERSION "' is "
			  "inconsistent: verdict bit-identical, but the rebuilt "
			  "artifact"), "%s", f.reason[0]);
	store_close(s);
}
END_TEST

/* ---- the check ------------------------------------------------------------ */

START_TEST(test_check_not_evidence)
{
	struct evidence_summary sum;
	char reason[384];
	const char *tc = "rebuild-audit evidence: version v verdict bit-identical "
			 "audit 1 at 2026-01-01T00:00:00Z file e.json";
	static const char *const others[] = {
		"hello\n", "{\"a\": 1}\n", "[1, 2]",
		"{\"_type\": \"https://in-toto.io/Statement/v1\", \"predicateType\": "
		"\"https://slsa.dev/provenance/v1\", \"subject\": [], \"predicate\": {}}",
		"\xff\xfe not text",
	};

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		/* Only the signature vouches for it... */
		ck_assert_int_eq(check(others[i], strlen(others[i]), "anything", &sum,
				       NULL), 0);
		ck_assert_int_eq(sum.is_evidence, 0);
		/* ... unless its trusted comment says it is evidence. */
		ck_assert_int_eq(check(others[i], strlen(others[i]), tc, &sum, reason),
				 RBA_E_SCHEMA);
		ck_assert_msg(has(reason, "the trusted comment claims evidence"), "%s",
			      reason);
	}
	/* Naming this predicate makes it evidence, and then it must be a
	 * statement. */
	{
		const char *st = "{\"_type\": \"https://in-toto.io/Statement/v0.1\", "
				 "\"predicateType\": \"" EVIDENCE_PREDICATE_TYPE "\"}";
		ck_assert_int_eq(check(st, strlen(st), NULL, NULL, reason),
				 RBA_E_SCHEMA);
		ck_assert(has(reason, "_type is not https://in-toto.io/Statement/v1"));
	}
	/* A later version of this predicate cannot be checked here. */
	{
		const char *v5 = "{\"_type\": \"https://in-toto.io/Statement/v1\", "
				 "\"predicateType\": "
				 "\"https://rebuild-audit.dev/audit-evidence/v5\"}";
		ck_assert_int_eq(check(v5, strlen(v5), NULL, NULL, reason), RBA_E_NEWER);
		ck_assert(has(reason, "audit-evidence/v5"));
	}
}
END_TEST

START_TEST(test_check_edits)
{
	struct store *s = new_store();
	struct evidence_summary sum;
	char reason[384];
	size_t n, n2;
	char *doc = render(s, 0, 0, &n, &sum), *bad;
	const char *tc = comment_of(&sum);
	static const struct {
		const char *from, *to;
		int err;
		const char *says;
	} cases[] = {
		{ "\"verdict\": \"bit-identical\"", "\"verdict\": \"metric-equivalent\"",
		  RBA_E_SCHEMA, "verdict metric-equivalent, but the rebuilt artifact is "
				"the pinned one" },
		{ "\"verdict\": \"bit-identical\"", "\"verdict\": \"not-reproducible\"",
		  RBA_E_SCHEMA, "verdict not-reproducible without a reason" },
		{ "\"verdict\": \"bit-identical\"", "\"verdict\": \"not-measured\"",
		  RBA_E_SCHEMA, "verdict 'not-measured' is not" },
		{ "epochs: 30", "epochs: 31", RBA_E_TAMPERED,
		  "the pins text does not hash to predicate.pins.digest" },
		{ "max_flips: 0}", "max_flips: 9}", RBA_E_TAMPERED,
		  "the policy text does not hash to predicate.policy.digest" },
		{ "\"flips\": 0,", "\"flips\": 1,", RBA_E_SCHEMA,
		  "verdict bit-identical with 1 decision flips, over the tolerance of 0" },
		{ "\"max_flips\": 0", "\"max_flips\": 1", RBA_E_SCHEMA,
		  "tolerance or near-threshold rule stated in predicate.policy" },
		{ "for any input", "for any inputs", RBA_E_SCHEMA,
		  "predicate.guarantee is not the guarantee of verdict bit-identical" },
		{ "\"bit_identical\": true", "\"bit_identical\": false", RBA_E_SCHEMA,
		  "predicate.artifact.bit_identical is false" },
		{ "\"subject\": [\n    {\n      \"name\": \"german",
		  "\"subject\": [\n    {\n      \"name\": \"berman", RBA_E_SCHEMA,
		  "subject name 'berman-numeric-logistic.artifact'" },
		{ "\\\"flips\\\": 0", "\\\"flips\\\": 1", RBA_E_TAMPERED,
		  "the embedded audit record does not hash" },
		{ "\"validation_accuracy\": 0.", "\"validation_accuracy\": 1.", RBA_E_SCHEMA,
		  "does not agree with its embedded audit record at line" },
		{ "\"chain_digest\": \"sha256:", "\"chain_digest\": \"sha256:0", RBA_E_SCHEMA,
		  "'audit.chain_digest' is not a sha256: digest" },
		{ "\"id\": 1,", "\"id\": 2,", RBA_E_TAMPERED,
		  "do not give predicate.audit.chain_digest" },
		{ "{\n  \"_type\"", "{ \n  \"_type\"", RBA_E_SCHEMA,
		  "not in the canonical form of rebuild-audit-evidence(5) at line 1" },
		{ "\"warnings\": [],", "\"warnings\": [],\n    \"extra\": 1,", RBA_E_SCHEMA,
		  "not in the canonical form" },
		{ "    \"verdict\": ", "    \"verdict\": \"x\",\n    \"verdict\": ",
		  RBA_E_SCHEMA, "duplicate key 'verdict'" },
		{ "\"reasons\": [],", "\"reasons\": 0,", RBA_E_SCHEMA,
		  "predicate: 'reasons' is of another type, not an array" },
		/* the path reader's words (common/json.h): named from the
		 * subject, the predicate, an item by its index, a key */
		{ "\"name\": \"german", "\"nam\": \"german", RBA_E_SCHEMA,
		  "evidence: 'name' is missing, not a string" },
		{ "\"rebuilt\": \"sha256:", "\"rebuilt\": 7, \"x\": \"", RBA_E_SCHEMA,
		  "predicate: 'artifact.rebuilt' is of another type, not a string "
		  "or null" },
		{ "\"diff\": []", "\"diff\": [7]", RBA_E_SCHEMA,
		  "predicate: 'environment.diff[0]' is not an object" },
		{ "\"diff\": []", "\"diff\": [{\"key\": 1}]", RBA_E_SCHEMA,
		  "predicate: 'environment.diff[0].key' is of another type, not a "
		  "string" },
		{ "\"libc\": \"", "\"libc\": 7, \"x\": \"", RBA_E_SCHEMA,
		  "predicate: 'tool.libraries.libc' is not a string or null" },
		{ "\"warnings\": [],", "\"warnings\": [\"a\", 2],", RBA_E_SCHEMA,
		  "predicate: 'warnings[1]' is not a string" },
		{ "\"flips\": 0,", "\"flips\": 0.5,", RBA_E_SCHEMA,
		  "predicate: 'results.flips' is not a whole number from 0 to 2^53" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err;
		bad = edit(doc, cases[i].from, cases[i].to, &n2);
		err = check(bad, n2, tc, NULL, reason);
		ck_assert_msg(err == cases[i].err && has(reason, cases[i].says),
			      "edit %zu (%s): %d '%s'", i, cases[i].to, err, reason);
		free(bad);
	}

	/* The pins edited and their digest recomputed: the pins no longer
	 * give the config hash stated beside them. */
	{
		struct rba_json_value v;
		struct rba_detail d;
		struct rba_digest dg;
		char hex[RBA_DIGEST_TEXT_LEN + 1], *at;
		const char *t;

		bad = edit(doc, "epochs: 30", "epochs: 31", &n2);
		ck_assert_int_eq(rba_json_parse(bad, n2, &v, &d), 0);
		t = rba_json_get_str(rba_json_get(rba_json_get(&v, "predicate"), "pins"), "text");
		rba_digest_bytes(t, strlen(t), &dg);
		rba_json_release(&v);
		rba_digest_format(&dg, hex);
		at = strstr(strstr(bad, "\"pins\": {"), "\"digest\": \"") +
		     strlen("\"digest\": \"");
		memcpy(at, hex, RBA_DIGEST_TEXT_LEN);
		ck_assert_int_eq(check(bad, n2, tc, NULL, reason), RBA_E_SCHEMA);
		ck_assert_msg(has(reason, "the pins' config hash is not"), "%s", reason);
		free(bad);
	}

	/* A trusted comment that names other evidence. */
	ck_assert_int_eq(check(doc, n, "rebuild-audit evidence: version other "
				       "verdict bit-identical audit 1 at x file e",
			       NULL, reason), RBA_E_SCHEMA);
	ck_assert(has(reason, "the trusted comment does not name this evidence"));
	ck_assert_int_eq(check(doc, n, "a comment of someone else", NULL, reason), 0);
	free(doc);
	store_close(s);
}
END_TEST

/*
 * Every byte of the statement matters: a change anywhere (but in the
 * lines no digest covers: the store id and the exporting tool, which
 * only the signature vouches for) fails the check.
 */
START_TEST(test_check_every_byte)
{
	struct store *s = new_store();
	struct evidence_summary sum;
	size_t n, skip_a, skip_b, ex_a, ex_b, missed = 0, tried = 0;
	char *doc = render(s, 0, 0, &n, &sum);
	const char *tc = comment_of(&sum);
	char first[64] = "";

	skip_a = (size_t)(strstr(doc, "\"store_id\"") - doc);
	skip_b = (size_t)(strchr(doc + skip_a, '\n') - doc);
	ex_a = (size_t)(strstr(doc, "\"exported_by\"") - doc);
	ex_b = (size_t)(strstr(doc + ex_a, "}") - doc);
	for (size_t i = 0; i < n; i += (i < 4000 ? 3 : 17)) {
		char save = doc[i];
		if ((i >= skip_a && i < skip_b) || (i >= ex_a && i < ex_b))
			continue;
		doc[i] = (char)(save ^ (save == ' ' ? 0x01 : 0x20));
		tried++;
		if (check(doc, n, tc, NULL, NULL) == 0) {
			if (missed++ == 0)
				snprintf(first, sizeof(first), "%zu '%.20s'", i,
					 doc + (i > 10 ? i - 10 : 0));
		}
		doc[i] = save;
	}
	ck_assert_msg(missed == 0, "%zu of %zu changes passed, first at %s", missed,
		      tried, first);
	ck_assert(tried > 1000);
	ck_assert_int_eq(check(doc, n, tc, NULL, NULL), 0);
	free(doc);
	store_close(s);
}
END_TEST

/* ---- signing and writing ------------------------------------------------- */

START_TEST(test_export_pair)
{
	struct store *s = new_store();
	struct sign_seckey *k = test_key();
	struct sign_pubkey pub;
	struct sign_check chk;
	struct evidence_request rq;
	struct evidence_result res, res2;
	struct rba_detail d;
	struct stat st;
	const char *file = scratch_path("evidence.json"), *sigf = scratch_path("evidence.json.minisig");
	uint8_t *doc, *sig, *doc2, *sig2;
	size_t n, sn, n2, sn2;
	char stale[600];
	pid_t dead;

	ck_assert_int_eq(sign_pubkey_load(PUB, &pub, &d), 0);
	memset(&rq, 0, sizeof(rq));
	rq.version = VERSION;
	rq.key = k;
	rq.path = file;

	/* A temporary of a killed export: removed by the next one. */
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(stale, sizeof(stale), "%s.tmp-%ld-0", file, (long)dead);
	ck_assert_int_eq(rba_file_write_atomic(stale, "{\"torn", 6, 0644), 0);
	snprintf(stale, sizeof(stale), "%s.minisig.tmp-%ld-3", file, (long)dead);
	ck_assert_int_eq(rba_file_write_atomic(stale, "untrusted", 9, 0644), 0);
	ck_assert_int_eq(count_tmp(), 2);

	rba_detail_clear(&d);
	ck_assert_msg(evidence_export(s, &rq, &res, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(count_tmp(), 0);
	ck_assert(has(res.trusted_comment,
		      "rebuild-audit evidence: version " VERSION " verdict "
		      "bit-identical audit 1 at "));
	ck_assert(has(res.trusted_comment, "Z file evidence.json"));
	doc = slurp(file, &n);
	sig = slurp(sigf, &sn);
	ck_assert_uint_eq(n, res.size);
	ck_assert_int_eq(sign_file_verify(&pub, doc, n, sig, sn, &chk, &d), 0);
	ck_assert_str_eq(chk.trusted_comment, res.trusted_comment);
	ck_assert_int_eq(stat(file, &st), 0);
	ck_assert_int_eq(st.st_mode & 022, 0);

	/* Not replaced without force, whichever of the two exists. */
	ck_assert_int_eq(evidence_export(s, &rq, &res2, &d), RBA_E_EXISTS);
	ck_assert_str_eq(d.file, file);
	ck_assert(has(d.reason, "already exists"));
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(evidence_export(s, &rq, &res2, &d), RBA_E_EXISTS);
	ck_assert_str_eq(d.file, sigf);
	ck_assert(access(file, F_OK) != 0);
	ck_assert_int_eq(count_tmp(), 0);

	/* With force: the same bytes again (Ed25519 is deterministic). */
	rq.force = 1;
	ck_assert_int_eq(evidence_export(s, &rq, &res2, &d), 0);
	doc2 = slurp(file, &n2);
	sig2 = slurp(sigf, &sn2);
	ck_assert(n == n2 && memcmp(doc, doc2, n) == 0);
	ck_assert(sn == sn2 && memcmp(sig, sig2, sn) == 0);
	ck_assert_int_eq(count_tmp(), 0);
	free(doc2);
	free(sig2);

	/* A missing directory or a directory in the way: nothing written. */
	rq.path = scratch_path("no/such/dir/e.json");
	ck_assert_int_eq(evidence_export(s, &rq, &res2, &d), ENOENT);
	ck_assert_int_eq(mkdir(scratch_path("adir"), 0755), 0);
	rq.path = scratch_path("adir");
	ck_assert_int_eq(evidence_export(s, &rq, &res2, &d), EISDIR);
	ck_assert(access(scratch_path("adir.minisig"), F_OK) != 0);

	free(doc);
	free(sig);
	sign_seckey_free(k);
	store_close(s);
}
END_TEST

START_TEST(test_signature_every_byte)
{
	struct store *s = new_store();
	struct sign_seckey *k = test_key();
	struct sign_pubkey pub;
	struct evidence_summary sum;
	struct rba_buf sig;
	struct rba_detail d;
	size_t n, missed = 0;
	char *doc = render(s, 0, 0, &n, &sum);

	ck_assert_int_eq(sign_pubkey_load(PUB, &pub, &d), 0);
	rba_buf_init(&sig);
	ck_assert_int_eq(sign_file_sign(k, doc, n, NULL, comment_of(&sum), &sig, &d),
			 0);
	ck_assert_int_eq(sign_file_verify(&pub, doc, n, sig.p, sig.len, NULL, &d), 0);
	for (size_t i = 0; i < n; i++) {
		doc[i] ^= 0x01;
		if (sign_file_verify(&pub, doc, n, sig.p, sig.len, NULL, &d) !=
		    RBA_E_BADSIG)
			missed++;
		doc[i] ^= 0x01;
	}
	ck_assert_uint_eq(missed, 0);
	rba_buf_release(&sig);
	free(doc);
	sign_seckey_free(k);
	store_close(s);
}
END_TEST

START_TEST(test_write_pair)
{
	const char *file = scratch_path("e.json"), *sigf = scratch_path("e.json.minisig");
	struct rba_detail d;
	uint8_t *p;
	size_t n;

	rba_detail_clear(&d);
	ck_assert_int_eq(evidence_write(file, "one\n", 4, "sig-one\n", 8, 0, &d), 0);
	ck_assert_int_eq(evidence_write(file, "two\n", 4, "sig-two\n", 8, 0, &d),
			 RBA_E_EXISTS);
	p = slurp(file, &n);
	ck_assert(n == 4 && memcmp(p, "one\n", 4) == 0);
	free(p);
	ck_assert_int_eq(evidence_write(file, "two\n", 4, "sig-two\n", 8, 1, &d), 0);
	p = slurp(file, &n);
	ck_assert(n == 4 && memcmp(p, "two\n", 4) == 0);
	free(p);
	p = slurp(sigf, &n);
	ck_assert(n == 8 && memcmp(p, "sig-two\n", 8) == 0);
	free(p);
	ck_assert_int_eq(count_tmp(), 0);

	/* A dangling link in the way is an existing name, not followed. */
	ck_assert_int_eq(symlink(scratch_path("nowhere"), scratch_path("l.json")), 0);
	ck_assert_int_eq(evidence_write(scratch_path("l.json"), "x", 1, "y", 1, 0, &d),
			 RBA_E_EXISTS);
	ck_assert(access(scratch_path("nowhere"), F_OK) != 0);
	ck_assert_int_eq(evidence_write("", "x", 1, "y", 1, 0, &d), ENOENT);
	ck_assert_int_eq(count_tmp(), 0);
}
END_TEST

START_TEST(test_trusted_comment)
{
	struct evidence_summary sum;
	char tc[SIGN_TRUSTED_COMMENT_MAX + 1], small[40];

	memset(&sum, 0, sizeof(sum));
	strcpy(sum.version, "credit-2026-11");
	strcpy(sum.verdict, "bit-identical");
	sum.audit_id = 3;
	strcpy(sum.time_text, "2026-11-29T08:00:00Z");
	ck_assert_int_eq(evidence_trusted_comment(&sum, "out/dir/evidence.json", tc,
						  sizeof(tc)), 0);
	ck_assert_str_eq(tc, "rebuild-audit evidence: version credit-2026-11 verdict "
			     "bit-identical audit 3 at 2026-11-29T08:00:00Z file "
			     "evidence.json");
	ck_assert_int_eq(evidence_trusted_comment(&sum, "a\nb\x7f.json", tc,
						  sizeof(tc)), 0);
	ck_assert(has(tc, "file a?b?.json"));
	ck_assert_int_eq(evidence_trusted_comment(&sum, "e.json", small,
						  sizeof(small)), RBA_E_LIMIT);
}
END_TEST

/* ---- evidence_verify: what a signed file is, and whether it holds ------- */

/* buf signed by k under trusted comment tc; the signature file's bytes. */
static char *
sign_bytes(const struct sign_seckey *k, const void *buf, size_t n,
	   const char *tc, size_t *sn)
{
	struct rba_buf sig;
	struct rba_detail d;

	rba_buf_init(&sig);
	rba_detail_clear(&d);
	ck_assert_msg(sign_file_sign(k, buf, n, NULL, tc, &sig, &d) == 0, "%s",
		      d.reason);
	return (char *)rba_buf_steal(&sig, sn);
}

/* evidence_verify of doc and sig with the test key, answered (0). */
static void
verify_ok(const void *doc, size_t n, const void *sig, size_t sn,
	  struct evidence_verification *v)
{
	struct sign_pubkey pub;
	struct rba_detail d;
	int err;

	ck_assert_int_eq(sign_pubkey_load(PUB, &pub, &d), 0);
	rba_detail_clear(&d);
	err = evidence_verify(&pub, doc, n, sig, sn, "the.minisig", v, &d);
	ck_assert_msg(err == 0, "verify: %d %s", err, d.reason);
}

START_TEST(test_verify_audit_evidence)
{
	struct store *s = new_store();
	struct sign_seckey *k = test_key(), *other = NULL;
	struct evidence_request rq;
	struct evidence_result res;
	struct evidence_verification *v = malloc(sizeof(*v));
	struct rba_detail d;
	uint8_t *doc, *sig;
	char *bad, *bsig;
	size_t n, sn, bn, bsn;

	ck_assert_ptr_nonnull(v);
	memset(&rq, 0, sizeof(rq));
	rq.version = VERSION;
	rq.key = k;
	rq.path = scratch_path("evidence.json");
	rba_detail_clear(&d);
	ck_assert_msg(evidence_export(s, &rq, &res, &d) == 0, "%s", d.reason);
	doc = slurp(scratch_path("evidence.json"), &n);
	sig = slurp(scratch_path("evidence.json.minisig"), &sn);

	/* Audit evidence that holds. */
	verify_ok(doc, n, sig, sn, v);
	ck_assert_int_eq(v->valid, 1);
	ck_assert_int_eq(v->signature_ok, 1);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_AUDIT);
	ck_assert_str_eq(v->audit.version, VERSION);
	ck_assert_str_eq(v->audit.verdict, "bit-identical");
	ck_assert_uint_eq(v->audit.audit_id, 1);
	ck_assert_str_eq(v->sig.trusted_comment, res.trusted_comment);

	/* One byte changed: the signature no longer holds. */
	doc[n / 2] ^= 1;
	verify_ok(doc, n, sig, sn, v);
	ck_assert_int_eq(v->valid, 0);
	ck_assert_int_eq(v->signature_ok, 0);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_UNKNOWN);
	ck_assert_str_eq(v->failed, "signature");
	doc[n / 2] ^= 1;

	/* A count changed and signed again: the contents do not hold. */
	bad = edit((const char *)doc, "\"cases\": 59", "\"cases\": 58", &bn);
	bsig = sign_bytes(k, bad, bn, res.trusted_comment, &bsn);
	verify_ok(bad, bn, bsig, bsn, v);
	ck_assert_int_eq(v->valid, 0);
	ck_assert_int_eq(v->signature_ok, 1);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_AUDIT);
	ck_assert_str_eq(v->failed, "contents");
	ck_assert(v->reason[0] != 0);
	free(bad);
	free(bsig);

	/* Signed by another key. */
	ck_assert_int_eq(sign_seckey_generate(&other), 0);
	bsig = sign_bytes(other, doc, n, res.trusted_comment, &bsn);
	verify_ok(doc, n, bsig, bsn, v);
	ck_assert_int_eq(v->valid, 0);
	ck_assert_str_eq(v->failed, "key id");
	free(bsig);

	/* A signature file that does not parse, named in the reason. */
	verify_ok(doc, n, "not a signature\n", 16, v);
	ck_assert_int_eq(v->valid, 0);
	ck_assert_str_eq(v->failed, "malformed signature");
	ck_assert(has(v->reason, "malformed signature 'the.minisig'"));

	/* A signed file that is no evidence: only its signature counts. */
	bsig = sign_bytes(k, "hello\n", 6, "a note", &bsn);
	verify_ok("hello\n", 6, bsig, bsn, v);
	ck_assert_int_eq(v->valid, 1);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_SIGNED);
	free(bsig);

	/* ... unless its trusted comment claims evidence. */
	bsig = sign_bytes(k, "hello\n", 6, EVIDENCE_COMMENT_PREFIX "version x", &bsn);
	verify_ok("hello\n", 6, bsig, bsn, v);
	ck_assert_int_eq(v->valid, 0);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_AUDIT);
	ck_assert_str_eq(v->failed, "contents");
	free(bsig);

	free(doc);
	free(sig);
	free(v);
	sign_seckey_free(other);
	sign_seckey_free(k);
	store_close(s);
}
END_TEST

START_TEST(test_verify_dispute_evidence)
{
	struct store *s = new_store();
	struct sign_seckey *k = test_key();
	struct dispute_report r;
	struct evidence_verification *v = malloc(sizeof(*v));
	struct rba_detail d;
	const char *file = scratch_path("dispute.json");
	char tc[SIGN_TRUSTED_COMMENT_MAX + 1];
	uint8_t *doc, *sig;
	char *bad, *bsig;
	size_t n, sn, bn, bsn;

	ck_assert_ptr_nonnull(v);
	rba_detail_clear(&d);
	ck_assert_msg(audit_dispute(s, VERSION, "1", NULL, NULL, &r, &d) == 0,
		      "dispute: %s", d.reason);
	ck_assert_msg(dispute_evidence_export(&r, k, file, &d) == 0, "export: %s",
		      d.reason);
	ck_assert_int_eq(count_tmp(), 0);
	/* Never over an existing pair. */
	ck_assert_int_eq(dispute_evidence_export(&r, k, file, &d), RBA_E_EXISTS);
	doc = slurp(file, &n);
	sig = slurp(scratch_path("dispute.json.minisig"), &sn);

	/* Dispute evidence that holds, and what it says. */
	verify_ok(doc, n, sig, sn, v);
	ck_assert_int_eq(v->valid, 1);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_DISPUTE);
	ck_assert_str_eq(v->dispute_version, VERSION);
	ck_assert_str_eq(v->dispute_case, "1");
	ck_assert_str_eq(v->dispute_answer, r.answer_line);
	ck_assert(has(v->sig.trusted_comment, DISPUTE_COMMENT_PREFIX));

	/* Its answer line changed and signed again: not consistent. */
	ck_assert_int_eq(dispute_evidence_comment(&r, tc, sizeof(tc)), 0);
	bad = edit((const char *)doc, r.answer_line, "the disputed nothing stands",
		   &bn);
	bsig = sign_bytes(k, bad, bn, tc, &bsn);
	verify_ok(bad, bn, bsig, bsn, v);
	ck_assert_int_eq(v->valid, 0);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_DISPUTE);
	ck_assert_str_eq(v->failed, "contents");
	free(bad);
	free(bsig);

	/* A file whose trusted comment claims dispute evidence it is not. */
	bsig = sign_bytes(k, "{}\n", 3, tc, &bsn);
	verify_ok("{}\n", 3, bsig, bsn, v);
	ck_assert_int_eq(v->valid, 0);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_DISPUTE);
	free(bsig);

	free(doc);
	free(sig);
	free(v);
	dispute_report_release(&r);
	sign_seckey_free(k);
	store_close(s);
}
END_TEST

/* ---- dispute evidence: what it claims is what was checked --------------- */

#define DISPUTE_V1 FIXTURES "/evidence/dispute-v1.json"

/* The dispute evidence at path with n edits (from[i] -> to[i], each the
 * first occurrence), signed again by the test key under its own trusted
 * comment (the signature holds); verify's answer in v. */
static void
dispute_edited(const char *path, const char *const *from,
	       const char *const *to, size_t n, struct evidence_verification *v)
{
	struct sign_seckey *k = test_key();
	char sigpath[600], tc[SIGN_TRUSTED_COMMENT_MAX + 1], *doc, *bad, *bsig;
	const char *t;
	uint8_t *sig;
	size_t dn, sn, bn, bsn;

	doc = (char *)slurp(path, &dn);
	for (size_t i = 0; i < n; i++) {
		bad = edit(doc, from[i], to[i], &bn);
		free(doc);
		doc = bad;
	}
	bn = strlen(doc);
	snprintf(sigpath, sizeof(sigpath), "%s.minisig", path);
	sig = slurp(sigpath, &sn);
	t = strstr((const char *)sig, "trusted comment: ");
	ck_assert_ptr_nonnull(t);
	t += strlen("trusted comment: ");
	snprintf(tc, sizeof(tc), "%.*s", (int)strcspn(t, "\n"), t);
	free(sig);
	bsig = sign_bytes(k, doc, bn, tc, &bsn);
	verify_ok(doc, bn, bsig, bsn, v);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_DISPUTE);
	free(bsig);
	free(doc);
	sign_seckey_free(k);
}

START_TEST(test_dispute_stands_without_reasons)
{
	struct evidence_verification *v = malloc(sizeof(*v));
	uint8_t *doc, *sig;
	size_t n, sn;

	ck_assert_ptr_nonnull(v);
	/* The first format's file verifies as it did. */
	doc = slurp(DISPUTE_V1, &n);
	sig = slurp(DISPUTE_V1 ".minisig", &sn);
	verify_ok(doc, n, sig, sn, v);
	ck_assert_msg(v->valid, "%s", v->reason);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_DISPUTE);
	ck_assert_str_eq(v->dispute_answer, "the disputed decline stands");
	/* Its reasons said not computed, the answer left standing: no. */
	{
		const char *from[] = { "\"explanation\": {\"ok\": true, \"error\": null" };
		const char *to[] = { "\"explanation\": {\"ok\": false, \"error\": "
				     "\"not computed\"" };
		dispute_edited(DISPUTE_V1, from, to, 1, v);
	}
	ck_assert_int_eq(v->valid, 0);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_DISPUTE);
	ck_assert_msg(has(v->reason, "the answer 'stands' has no reasons: the "
			  "principal reasons could not be computed (not computed)"),
		      "%s", v->reason);
	free(doc);
	free(sig);
	free(v);
}
END_TEST


/* ---- dispute evidence v4: a level unseen in training ------------------ */

#define DISPUTE_V4 FIXTURES "/evidence/dispute-v4.json"

/* DISPUTE_V4 with one edit, signed again: verify's reason, or "" when
 * it holds. */
static void
v4_edited(const char *from, const char *to, const char *want)
{
	struct evidence_verification *v = malloc(sizeof(*v));

	ck_assert_ptr_nonnull(v);
	dispute_edited(DISPUTE_V4, &from, &to, 1, v);
	if (want == NULL)
		ck_assert_msg(v->valid, "%s -> %s: %s", from, to, v->reason);
	else
		ck_assert_msg(!v->valid && has(v->reason, want), "%s -> %s: %s", from,
			      to, v->valid ? "valid" : v->reason);
	free(v);
}

START_TEST(test_dispute_v4_unseen)
{
	struct evidence_verification *v = malloc(sizeof(*v));
	uint8_t *doc, *sig;
	size_t n, sn;

	ck_assert_ptr_nonnull(v);
	doc = slurp(DISPUTE_V4, &n);
	sig = slurp(DISPUTE_V4 ".minisig", &sn);
	verify_ok(doc, n, sig, sn, v);
	ck_assert_msg(v->valid, "%s", v->reason);
	ck_assert_int_eq(v->kind, EVIDENCE_KIND_DISPUTE);
	ck_assert_str_eq(v->dispute_answer, "the disputed decline stands");
	/* offline, the artifact's levels and trees are not in the file */
	ck_assert(has(dispute_evidence_unchecked(doc, n, 0),
		      "none of the artifact's levels"));
	ck_assert_ptr_null(dispute_evidence_unchecked(doc, n, 1));
	ck_assert(has((const char *)doc, "\"unseen\": [{\"column\": \"purpose\", "
		      "\"value\": \"A499\", \"went\": \"right\", \"splits\": "));

	/* what the file shows is held to itself */
	v4_edited("\"went\": \"right\"", "\"went\": null",
		  "met splits on its path but did not go right");
	v4_edited("\"went\": \"right\"", "\"went\": \"left\"",
		  "met splits on its path but did not go right");
	v4_edited("\"forest_trees\": 100", "\"forest_trees\": 0",
		  "is not counts of splits and trees of one forest");
	v4_edited("\"forest_trees\": 100", "\"forest_trees\": 1",
		  "which no forest's paths give");
	v4_edited("\"value\": \"A499\", \"went\"", "\"value\": \"A49\", \"went\"",
		  "the unseen level 'A49' of 'purpose' is not the case's value");
	v4_edited("{\"column\": \"purpose\", \"value\": \"A499\", \"went\"",
		  "{\"column\": \"nope\", \"value\": \"A499\", \"went\"",
		  "the unseen level of 'nope' is not a contribution's column");
	v4_edited("\"unseen\": [{", "\"unseen\": [], \"x\": [{",
		  "'predicate.dispute.explanation' has a member missing");
	v4_edited("\"principal_reasons\": [", "\"statements_missing\": 0, "
		  "\"principal_reasons\": [",
		  "a principal reason has a member missing");
	v4_edited("\"splits\": ", "\"splits\": 1.5, \"s\": ",
		  "an unseen level's entry has a member missing");
	v4_edited("dispute-evidence/v4", "dispute-evidence/v3",
		  "'predicate.dispute.explanation' has a member missing");
	v4_edited("rebuild-audit/dispute/v4", "rebuild-audit/dispute/v2",
		  "the dispute's schema is not the predicate type's");
	v4_edited("\"method\": \"treeshap\"", "\"method\": \"linear\"",
		  "not TreeSHAP's");
	free(doc);
	free(sig);
	free(v);
}
END_TEST

START_TEST(test_dispute_contradictions)
{
	struct store *s = new_store();
	struct sign_seckey *k = test_key();
	struct dispute_report r;
	struct evidence_verification *v = malloc(sizeof(*v));
	struct rba_detail d;
	const char *file = scratch_path("dispute.json");
	char sd[128], rd[128], od[128], ss[64], sl[256], ol[256], want[512];
	const char *other, *moved;

	ck_assert_ptr_nonnull(v);
	rba_detail_clear(&d);
	ck_assert_msg(audit_dispute(s, VERSION, "1", NULL, NULL, &r, &d) == 0,
		      "dispute: %s", d.reason);
	ck_assert_int_eq(r.answer, DISPUTE_STANDS);
	ck_assert_msg(dispute_evidence_export(&r, k, file, &d) == 0, "export: %s",
		      d.reason);
	other = strcmp(r.stored_decision, "approve") != 0 ? "approve" : "decline";
	moved = strcmp(r.stored_decision, "decline") != 0 ? "0.99" : "0.01";
	rba_json_fmt_double(r.stored_score, ss);

	/* Both decisions changed, the score left, the line to match. */
	snprintf(sd, sizeof(sd), "\"decision\": \"%s\", \"scored_by\"", r.stored_decision);
	snprintf(od, sizeof(od), "\"decision\": \"%s\", \"scored_by\"", other);
	snprintf(rd, sizeof(rd), "\"decision\": \"%s\"}, \"classes\"", r.stored_decision);
	snprintf(want, sizeof(want), "\"decision\": \"%s\"}, \"classes\"", other);
	snprintf(sl, sizeof(sl), "\"%s\"", r.answer_line);
	snprintf(ol, sizeof(ol), "\"the disputed %s stands\"", other);
	{
		const char *from[] = { sd, rd, sl }, *to[] = { od, want, ol };
		dispute_edited(file, from, to, 3, v);
	}
	ck_assert_int_eq(v->valid, 0);
	snprintf(want, sizeof(want), "the stored decision '%s' is not the policy's "
		 "for the stored score %s ('%s'), and no warning says so", other, ss,
		 r.stored_decision);
	ck_assert_msg(has(v->reason, want), "%s", v->reason);

	/* The stored score changed. */
	snprintf(sd, sizeof(sd), "\"stored\": {\"score\": %s,", ss);
	snprintf(od, sizeof(od), "\"stored\": {\"score\": %s,", moved);
	{
		const char *from[] = { sd }, *to[] = { od };
		dispute_edited(file, from, to, 1, v);
	}
	ck_assert_int_eq(v->valid, 0);
	snprintf(want, sizeof(want), "is not the policy's for the stored score %s",
		 moved);
	ck_assert_msg(has(v->reason, want), "%s", v->reason);

	/* An input changed, the reasons quoting the old value. */
	{
		const char *from[] = { "\"inputs\": {\"id\": \"1\", \"a1\": \"" };
		const char *to[] = { "\"inputs\": {\"id\": \"1\", \"a1\": \"9" };
		dispute_edited(file, from, to, 1, v);
	}
	ck_assert_int_eq(v->valid, 0);
	ck_assert_msg(has(v->reason, "quotes a value the case's input does not "
			  "have (a1 is '9"), "%s", v->reason);

	free(v);
	dispute_report_release(&r);
	sign_seckey_free(k);
	store_close(s);
}
END_TEST

START_TEST(test_dispute_bound_text)
{
	static const double b[] = { 0.25, 1.3e-5, 0.0031415, 0.00996, 0.1, 2e-7 };
	static const char *const t[] = { "0.25", "1.3e-05", "0.0032", "0.01",
					 "0.11", "2e-07" };
	char out[32];

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		dispute_bound_text(b[i], out);
		ck_assert_str_eq(out, t[i]);
		/* never less than the bound */
		ck_assert(strtod(out, NULL) >= b[i]);
	}
}
END_TEST
/* Format 3: every case, checked against the counts it gives. */
START_TEST(test_render_cases)
{
	struct store *s = new_store();
	struct evidence_summary sum;
	char reason[384];
	size_t n, n2;
	char *doc = render(s, 1, EVIDENCE_RENDER_CASES, &n, &sum), *bad;
	struct rba_json_value v;
	const struct rba_json_value *cs;

	ck_assert_int_eq(sum.format, 3);
	ck_assert(has(doc, "\"predicateType\": \"" EVIDENCE_PREDICATE_TYPE_V3 "\""));
	ck_assert_int_eq(rba_json_parse(doc, n, &v, NULL), 0);
	cs = rba_json_get(rba_json_get(rba_json_get(&v, "predicate"), "results"), "cases");
	ck_assert_ptr_nonnull(cs);
	ck_assert_uint_eq(cs->n, 59);
	/* bit-identical: every rebuilt score is its stored score */
	for (size_t i = 0; i < cs->n; i++)
		ck_assert(rba_json_get_num(&cs->items[i], "stored_score", -1) ==
			  rba_json_get_num(&cs->items[i], "rebuilt_score", -2));
	rba_json_release(&v);
	ck_assert_int_eq(check(doc, n, comment_of(&sum), NULL, reason), 0);
	/* a case's rebuilt score moved: the largest delta is not stated */
	{
		/* the first case's rebuilt score, whatever its digits, as 0.999 */
		const char *at = strstr(strstr(doc, "\"cases\": ["), "\"rebuilt_score\": ");
		const char *end = strchr(at, ',');
		char from[128];
		ck_assert(end != NULL && (size_t)(end - at) < sizeof(from));
		memcpy(from, at, (size_t)(end - at));
		from[end - at] = '\0';
		bad = edit(doc, from, "\"rebuilt_score\": 0.999", &n2);
	}
	ck_assert_int_eq(check(bad, n2, comment_of(&sum), NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "results.cases give"), "%s", reason);
	free(bad);
	/* a case's stored decision changed: a flip the counts do not have */
	bad = edit(doc, "\"stored_decision\": \"approve\"\n", "\"stored_decision\": \"decline\"\n", &n2);
	ck_assert_int_eq(check(bad, n2, comment_of(&sum), NULL, reason), RBA_E_SCHEMA);
	ck_assert_msg(has(reason, "flipped decisions"), "%s", reason);
	free(bad);
	free(doc);
	store_close(s);
}
END_TEST

Suite *
suite_evidence(void)
{
	Suite *s = suite_create("evidence");
	TCase *tc = tcase_create("evidence");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_render_statement);
	tcase_add_test(tc, test_render_cases);
	tcase_add_test(tc, test_render_refusals);
	tcase_add_test(tc, test_metric_equivalent);
	tcase_add_test(tc, test_decisions_artifact);
	tcase_add_test(tc, test_older_record);
	tcase_add_test(tc, test_history_head);
	tcase_add_test(tc, test_flips_and_inputs);
	tcase_add_test(tc, test_sample_claim);
	tcase_add_test(tc, test_declared_and_earlier);
	tcase_add_test(tc, test_store_check_records);
	tcase_add_test(tc, test_check_not_evidence);
	tcase_add_test(tc, test_check_edits);
	tcase_add_test(tc, test_check_every_byte);
	tcase_add_test(tc, test_export_pair);
	tcase_add_test(tc, test_signature_every_byte);
	tcase_add_test(tc, test_write_pair);
	tcase_add_test(tc, test_trusted_comment);
	tcase_add_test(tc, test_verify_audit_evidence);
	tcase_add_test(tc, test_verify_dispute_evidence);
	tcase_add_test(tc, test_dispute_stands_without_reasons);
	tcase_add_test(tc, test_dispute_v4_unseen);
	tcase_add_test(tc, test_dispute_contradictions);
	tcase_add_test(tc, test_dispute_bound_text);
	suite_add_tcase(s, tc);
	return s;
}
