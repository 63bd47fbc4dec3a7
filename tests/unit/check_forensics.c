/*
 * check_forensics.c - the instruments below the command line
 * (forensics/): seeds, statistics, the exact sign test, the noise floor,
 * success expressions, the gate file and its rule, and edits.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "forensics/forensics.h"
#include "forensics/gate.h"
#include "tests/unit/suites.h"

/* ---- seeds ----------------------------------------------------------- */

START_TEST(test_seeds_parse)
{
	struct rba_detail d;
	uint64_t *s = NULL;
	size_t n = 0;

	ck_assert_int_eq(fx_seeds_parse("0-3", &s, &n, &d), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(s[0], 0);
	ck_assert_uint_eq(s[3], 3);
	free(s);
	ck_assert_int_eq(fx_seeds_parse("7,2,10-11", &s, &n, &d), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(s[0], 7);
	ck_assert_uint_eq(s[1], 2);
	ck_assert_uint_eq(s[3], 11);
	free(s);
	ck_assert_int_eq(fx_seeds_parse("3-1", &s, &n, &d), RBA_E_USAGE);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(fx_seeds_parse("1,1", &s, &n, &d), RBA_E_USAGE);
	ck_assert_str_eq(d.reason, "seed 1 given twice");
	ck_assert_int_eq(fx_seeds_parse("", &s, &n, &d), RBA_E_USAGE);
	ck_assert_int_eq(fx_seeds_parse("1,", &s, &n, &d), RBA_E_USAGE);
	ck_assert_int_eq(fx_seeds_parse("x", &s, &n, &d), RBA_E_USAGE);
	ck_assert_int_eq(fx_seeds_parse("0-4095", &s, &n, &d), 0);
	ck_assert_uint_eq(n, FX_MAX_SEEDS);
	free(s);
	ck_assert_int_eq(fx_seeds_parse("0-4096", &s, &n, &d), RBA_E_USAGE);
	ck_assert_str_eq(d.reason, "more than 4096 seeds");
}
END_TEST

/* ---- statistics ------------------------------------------------------ */

START_TEST(test_stat_odd_even)
{
	const double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };
	const double holes[] = { 1, NAN, 3, INFINITY, -INFINITY };
	struct fx_stat st;

	fx_stat_compute(odd, 3, &st);
	ck_assert_uint_eq(st.n, 3);
	ck_assert_double_eq(st.median, 2);
	ck_assert_double_eq(st.mean, 2);
	ck_assert_double_eq(st.stdev, 1);
	ck_assert_double_eq(st.min, 1);
	ck_assert_double_eq(st.max, 3);
	ck_assert_double_eq(st.spread, 2);
	fx_stat_compute(even, 4, &st);
	ck_assert_uint_eq(st.n, 4);
	ck_assert_double_eq(st.median, 2.5);
	ck_assert_double_eq(st.mean, 2.5);
	ck_assert_double_eq_tol(st.stdev, sqrt(5.0 / 3.0), 1e-15);
	ck_assert_double_eq(st.spread, 3);
	/* Only the finite values count. */
	fx_stat_compute(holes, 5, &st);
	ck_assert_uint_eq(st.n, 2);
	ck_assert_double_eq(st.median, 2);
	ck_assert_double_eq(st.spread, 2);
	fx_stat_compute(odd, 1, &st);
	ck_assert_double_eq(st.median, 3);
	ck_assert_double_eq(st.stdev, 0);
	ck_assert_double_eq(st.spread, 0);
	fx_stat_compute(odd, 0, &st);
	ck_assert_uint_eq(st.n, 0);
	ck_assert(isnan(st.median) && isnan(st.spread) && isnan(st.stdev));
}
END_TEST

/* ---- the sign test ----------------------------------------------------- */

START_TEST(test_sign_test_binomial)
{
	/* 2 P[X <= min(a, b)], X ~ Binomial(a + b, 1/2), exactly. */
	ck_assert_double_eq(fx_sign_test(0, 0), 1.0);
	ck_assert_double_eq(fx_sign_test(0, 1), 1.0);
	ck_assert_double_eq(fx_sign_test(6, 0), 2.0 / 64);	  /* 0.03125 */
	ck_assert_double_eq(fx_sign_test(0, 6), 2.0 / 64);
	ck_assert_double_eq(fx_sign_test(5, 0), 2.0 / 32);	  /* 0.0625 */
	ck_assert_double_eq(fx_sign_test(10, 0), 2.0 / 1024);
	ck_assert_double_eq(fx_sign_test(1, 9), 22.0 / 1024);	  /* 1 + 10 */
	ck_assert_double_eq(fx_sign_test(9, 1), 22.0 / 1024);
	ck_assert_double_eq(fx_sign_test(2, 10), 158.0 / 4096); /* 1+12+66 */
	ck_assert_double_eq(fx_sign_test(3, 5), 186.0 / 256);	  /* 1+8+28+56 */
	ck_assert_double_eq(fx_sign_test(5, 5), 1.0);		  /* capped */
	ck_assert_double_eq(fx_sign_test(4, 5), 1.0);
	/* C(20, k) for k <= 5: 1 20 190 1140 4845 15504. */
	ck_assert_double_eq(fx_sign_test(5, 15), 2.0 * 21700 / 1048576);
	/* Far tails stay exact: 2 x 2^-1000. */
	ck_assert_double_eq(fx_sign_test(0, 1000), ldexp(1.0, -999));
}
END_TEST

/* ---- the noise floor --------------------------------------------------- */

/* Paired val_loss of base and base + delta at six seeds. */
static void
pair_shifted(double delta, size_t n, double alpha, struct fx_paired *pr)
{
	const double base[6] = { 1.0, 1.25, 1.5, 1.0, 1.25, 1.5 };
	double cand[6];

	for (size_t i = 0; i < n; i++)
		cand[i] = base[i] + delta;
	fx_paired_compute(FX_VAL_LOSS, base, cand, n, alpha, pr);
}

START_TEST(test_noise_floor_boundary)
{
	struct fx_paired pr;

	/* |median delta| == spread (0.5): inside the noise floor. */
	pair_shifted(0.5, 6, 0.05, &pr);
	ck_assert_double_eq(pr.base.spread, 0.5);
	ck_assert_double_eq(pr.delta.median, 0.5);
	ck_assert_uint_eq(pr.worse, 6);
	ck_assert_double_eq(pr.p, 0.03125);
	ck_assert_double_eq(pr.shift, 1.0);
	ck_assert_int_eq(pr.resolved, 0);
	ck_assert_str_eq(fx_paired_finding(&pr), "NOT RESOLVED");
	/* Just above it: resolved, and worse (a higher loss). */
	pair_shifted(0.5 + 1.0 / 128, 6, 0.05, &pr);
	ck_assert_int_eq(pr.resolved, 1);
	ck_assert_int_eq(pr.direction, -1);
	ck_assert_str_eq(fx_paired_finding(&pr), "worse");
	pair_shifted(-(0.5 + 1.0 / 128), 6, 0.05, &pr);
	ck_assert_int_eq(pr.resolved, 1);
	ck_assert_uint_eq(pr.better, 6);
	ck_assert_str_eq(fx_paired_finding(&pr), "better");
	/* Far outside, but five seeds cannot reach p <= 0.05 ... */
	pair_shifted(10, 5, 0.05, &pr);
	ck_assert_double_eq(pr.p, 0.0625);
	ck_assert_int_eq(pr.resolved, 0);
	/* ... and do at alpha 0.1. */
	pair_shifted(10, 5, 0.1, &pr);
	ck_assert_int_eq(pr.resolved, 1);
}
END_TEST

START_TEST(test_noise_floor_zero_spread_and_direction)
{
	const double same[4] = { 0.5, 0.5, 0.5, 0.5 };
	const double up[4] = { 0.625, 0.625, 0.625, 0.625 };
	const double base[6] = { 0.5, 0.5, 0.5, 0.5, 0.5, 0.5 };
	const double acc[6] = { 0.75, 0.75, 0.75, 0.75, 0.75, 0.75 };
	struct fx_paired pr;

	/* No change at all: ties, never a finding. */
	fx_paired_compute(FX_VAL_LOSS, same, same, 4, 0.05, &pr);
	ck_assert_uint_eq(pr.ties, 4);
	ck_assert_double_eq(pr.shift, 0);
	ck_assert_int_eq(pr.resolved, 0);
	/* A zero spread asks for any non-zero median (p still rules). */
	fx_paired_compute(FX_VAL_LOSS, same, up, 4, 0.05, &pr);
	ck_assert(isinf(pr.shift) && pr.shift > 0);
	ck_assert_double_eq(pr.p, 0.125);
	ck_assert_int_eq(pr.resolved, 0);
	fx_paired_compute(FX_VAL_LOSS, base, acc, 6, 0.05, &pr);
	ck_assert_int_eq(pr.resolved, 1);
	ck_assert_int_eq(pr.direction, -1);
	/* The same rise in accuracy is better. */
	fx_paired_compute(FX_VAL_ACC, base, acc, 6, 0.05, &pr);
	ck_assert_uint_eq(pr.better, 6);
	ck_assert_uint_eq(pr.worse, 0);
	ck_assert_int_eq(pr.direction, 1);
}
END_TEST

START_TEST(test_metrics)
{
	enum fx_metric m;

	for (int i = 0; i < FX_NMETRICS; i++) {
		const char *name = fx_metric_name((enum fx_metric)i);
		ck_assert_int_eq(fx_metric_parse(name, strlen(name), &m), 0);
		ck_assert_int_eq(m, i);
	}
	ck_assert_int_eq(fx_metric_parse("val_los", 7, &m), -1);
	ck_assert_int_eq(fx_metric_parse("val_lossx", 9, &m), -1);
	ck_assert_int_eq(fx_metric_parse("", 0, &m), -1);
	ck_assert_int_eq(fx_metric_higher_better(FX_VAL_LOSS), 0);
	ck_assert_int_eq(fx_metric_higher_better(FX_TRAIN_LOSS), 0);
	ck_assert_int_eq(fx_metric_higher_better(FX_VAL_ACC), 1);
	ck_assert_int_eq(fx_metric_higher_better(FX_VAL_AUC), 1);
	ck_assert_int_eq(fx_metric_higher_better(FX_EPS), 1);
}
END_TEST

/* ---- success expressions ----------------------------------------------- */

/* Paired results where every metric's median delta is md and counts are
 * worse/better, resolved as given. */
static void
paired(struct fx_paired *pr, double md, unsigned worse, unsigned better,
       int resolved)
{
	memset(pr, 0, FX_NMETRICS * sizeof(*pr));
	for (int m = 0; m < FX_NMETRICS; m++) {
		pr[m].metric = (enum fx_metric)m;
		pr[m].delta.median = pr[m].delta.mean = md;
		pr[m].delta.min = pr[m].delta.max = md;
		pr[m].worse = worse;
		pr[m].better = better;
		pr[m].shift = 2;
		pr[m].p = 0.01;
		pr[m].resolved = resolved;
	}
}

static int
eval_text(const char *text, const struct fx_paired *pr)
{
	struct rba_detail d;
	struct fx_expr *e = NULL;
	int v;

	rba_detail_clear(&d);
	ck_assert_msg(fx_expr_parse(text, &e, &d) == 0, "'%s': %lu %s", text,
		      d.col, d.reason);
	v = fx_expr_eval(e, pr);
	fx_expr_free(e);
	return v;
}

START_TEST(test_expr_valid)
{
	struct fx_paired pr[FX_NMETRICS];
	struct rba_detail d;
	struct fx_expr *e = NULL;

	paired(pr, -0.01, 1, 5, 1);
	ck_assert_int_eq(eval_text("val_loss.median < 0", pr), 1);
	ck_assert_int_eq(eval_text("val_loss.median<-0.005 and worse <= 2", pr), 1);
	ck_assert_int_eq(eval_text("val_loss.median < -0.05", pr), 0);
	ck_assert_int_eq(eval_text("worse > 1 or better >= 5", pr), 1);
	ck_assert_int_eq(eval_text("not (p > 0.05)", pr), 1);
	ck_assert_int_eq(eval_text("not not worse == 1", pr), 1);
	ck_assert_int_eq(eval_text("val_acc.shift >= 2 and val_acc.p != 0.5", pr), 1);
	ck_assert_int_eq(eval_text("\tval_loss.worse < 2 ", pr), 1);
	/* and binds tighter than or. */
	ck_assert_int_eq(eval_text("worse == 1 or worse == 9 and better == 9", pr), 1);
	ck_assert_int_eq(eval_text("(worse == 1 or worse == 9) and better == 9", pr), 0);
	ck_assert_int_eq(fx_expr_parse("val_acc.min > 0 or train_loss.max < 1", &e,
				       &d), 0);
	ck_assert_uint_eq(fx_expr_metrics(e),
			  (1u << FX_VAL_ACC) | (1u << FX_TRAIN_LOSS));
	ck_assert_int_eq(fx_verdict_decide(e, pr), FX_MET);
	pr[FX_TRAIN_LOSS].resolved = 0;
	ck_assert_int_eq(fx_verdict_decide(e, pr), FX_NOT_RESOLVED);
	pr[FX_TRAIN_LOSS].resolved = 1;
	pr[FX_VAL_ACC].delta.min = -1;
	pr[FX_TRAIN_LOSS].delta.max = 2;
	ck_assert_int_eq(fx_verdict_decide(e, pr), FX_NOT_MET);
	ck_assert_str_eq(fx_verdict_name(FX_NOT_MET), "NOT MET");
	fx_expr_free(e);
	/* A bare count reads val_loss. */
	ck_assert_int_eq(fx_expr_parse("worse < 3", &e, &d), 0);
	ck_assert_uint_eq(fx_expr_metrics(e), 1u << FX_VAL_LOSS);
	fx_expr_free(e);
}
END_TEST

static void
expect_syntax(const char *text, int err, unsigned long col, const char *reason)
{
	struct rba_detail d;
	struct fx_expr *e = (struct fx_expr *)&d;

	rba_detail_clear(&d);
	ck_assert_int_eq(fx_expr_parse(text, &e, &d), err);
	ck_assert_ptr_null(e);
	ck_assert_msg(d.col == col, "'%s': col %lu, want %lu", text, d.col, col);
	ck_assert_msg(strcmp(d.reason, reason) == 0, "'%s': '%s'", text,
		      d.reason);
}

START_TEST(test_expr_invalid)
{
	char big[FX_MAX_EXPR + 2];

	expect_syntax("", RBA_E_SYNTAX, 1,
		      "expected a metric.statistic, worse, better, shift or p");
	expect_syntax("val_loss.median <", RBA_E_SYNTAX, 18, "expected a number");
	expect_syntax("val_loss median < 0", RBA_E_SYNTAX, 9,
		      "expected '.' and a statistic after the metric");
	expect_syntax("val_loss.mode < 0", RBA_E_SYNTAX, 10,
		      "expected a metric.statistic, worse, better, shift or p");
	expect_syntax("val_f1.median < 0", RBA_E_SYNTAX, 1,
		      "expected a metric.statistic, worse, better, shift or p");
	expect_syntax("median < 0", RBA_E_SYNTAX, 1,
		      "expected a metric.statistic, worse, better, shift or p");
	expect_syntax("worse = 2", RBA_E_SYNTAX, 7,
		      "expected <, <=, >, >=, == or !=");
	expect_syntax("worse < x", RBA_E_SYNTAX, 9, "expected a number");
	expect_syntax("worse < 1e999", RBA_E_SYNTAX, 9, "expected a finite number");
	expect_syntax("(worse < 2", RBA_E_SYNTAX, 11, "expected ')'");
	expect_syntax("worse < 2 xor p < 1", RBA_E_SYNTAX, 11,
		      "expected 'and', 'or' or the end");
	expect_syntax("worse < 2 and", RBA_E_SYNTAX, 14,
		      "expected a metric.statistic, worse, better, shift or p");
	expect_syntax("not", RBA_E_SYNTAX, 4,
		      "expected a metric.statistic, worse, better, shift or p");
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, "worse < 1", 9);
	expect_syntax(big, RBA_E_LIMIT, 0, "more than 1024 bytes");
	big[FX_MAX_EXPR] = 0; /* exactly FX_MAX_EXPR bytes is allowed */
	{
		struct rba_detail d;
		struct fx_expr *e = NULL;
		ck_assert_int_eq(fx_expr_parse(big, &e, &d), 0);
		fx_expr_free(e);
	}
}
END_TEST

/* ---- the gate file ----------------------------------------------------- */

static void
sample_gate(struct fx_gate *g)
{
	memset(g, 0, sizeof(*g));
	g->metric = FX_VAL_LOSS;
	g->k = 1;
	g->median = 0.984616843551397;
	g->spread = 0.0326792395710946;
	g->threshold = g->median + g->spread;
	g->seeds = 12;
	snprintf(g->sweep, sizeof(g->sweep), "sweep/synth-chapter@1796118774");
	snprintf(g->version, sizeof(g->version), "synth-chapter");
	rba_digest_bytes((const uint8_t *)"a", 1, &g->config_hash);
	rba_digest_bytes((const uint8_t *)"b", 1, &g->eval_fingerprint);
}

/* The gate file of g as text (malloc'd). */
static char *
gate_text(const struct fx_gate *g)
{
	struct rba_buf b;
	char *t;

	rba_buf_init(&b);
	fx_gate_render(g, &b);
	rba_buf_put_u8(&b, 0);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	t = (char *)rba_buf_steal(&b, NULL);
	rba_buf_release(&b);
	return t;
}

/* text with its line starting "key:" replaced by repl (NULL: dropped). */
static char *
with_line(const char *text, const char *key, const char *repl)
{
	size_t kl = strlen(key), n = strlen(text);
	char *out = malloc(n + (repl ? strlen(repl) : 0) + 2), *o = out;
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			if (repl != NULL)
				o += sprintf(o, "%s\n", repl);
		} else {
			memcpy(o, p, len);
			o += len;
		}
		p += len;
	}
	*o = 0;
	return out;
}

static void
expect_gate_error(const char *text, int err, unsigned long line,
		  unsigned long col, const char *reason)
{
	struct rba_detail d;
	struct fx_gate g;

	rba_detail_clear(&d);
	ck_assert_int_eq(fx_gate_parse(text, strlen(text), "g.yaml", &g, &d), err);
	ck_assert_str_eq(d.file, "g.yaml");
	ck_assert_msg(d.line == line && d.col == col, "%lu:%lu, want %lu:%lu (%s)",
		      d.line, d.col, line, col, d.reason);
	ck_assert_str_eq(d.reason, reason);
}

START_TEST(test_gate_round_trip)
{
	struct fx_gate g, h;
	struct rba_detail d;
	char *t = NULL, *u;

	sample_gate(&g);
	t = gate_text(&g);
	ck_assert_int_eq(fx_gate_parse(t, strlen(t), "g.yaml", &h, &d), 0);
	ck_assert_int_eq(h.metric, FX_VAL_LOSS);
	ck_assert_double_eq(h.k, g.k);
	ck_assert_double_eq(h.median, g.median);
	ck_assert_double_eq(h.spread, g.spread);
	ck_assert_double_eq(h.threshold, g.threshold);
	ck_assert_uint_eq(h.seeds, 12);
	ck_assert_str_eq(h.sweep, g.sweep);
	ck_assert_str_eq(h.version, g.version);
	ck_assert(rba_digest_equal(&h.config_hash, &g.config_hash));
	ck_assert(rba_digest_equal(&h.eval_fingerprint, &g.eval_fingerprint));
	ck_assert_str_eq(h.file, "g.yaml");
	ck_assert_uint_eq(h.metric_line, 3);
	ck_assert_uint_eq(h.metric_col, 9);
	/* Any order, comments, blank lines, CRLF, quotes, no last newline. */
	u = with_line(t, "metric", NULL);
	{
		char *v = malloc(strlen(u) + 64);
		size_t n;
		sprintf(v, "\n# first\nmetric: \"val_loss\"\r\n%s", u);
		n = strlen(v);
		v[n - 1] = 0; /* the last newline */
		ck_assert_int_eq(fx_gate_parse(v, n - 1, "g.yaml", &h, &d), 0);
		ck_assert_uint_eq(h.metric_line, 3);
		ck_assert_str_eq(h.version, g.version);
		free(v);
	}
	free(u);
	free(t);
	/* A higher-is-better gate renders its own direction. */
	g.metric = FX_VAL_ACC;
	t = gate_text(&g);
	ck_assert_ptr_nonnull(strstr(t, "direction: higher-is-better\n"));
	ck_assert_ptr_nonnull(strstr(t, "median - k x"));
	ck_assert_int_eq(fx_gate_parse(t, strlen(t), "g.yaml", &h, &d), 0);
	ck_assert_int_eq(h.metric, FX_VAL_ACC);
	free(t);
}
END_TEST

START_TEST(test_gate_every_key)
{
	static const char *const keys[] = {
		"schema", "metric", "direction", "k", "baseline_median",
		"baseline_spread", "threshold", "seeds", "sweep", "version",
		"config_hash", "eval_fingerprint"
	};
	struct fx_gate g;
	char *t, *u, want[128], *twice;

	sample_gate(&g);
	t = gate_text(&g);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		u = with_line(t, keys[i], NULL);
		snprintf(want, sizeof(want), "key '%s' is missing", keys[i]);
		expect_gate_error(u, RBA_E_SCHEMA, 0, 0, want);
		free(u);
	}
	/* Each key once. */
	twice = malloc(strlen(t) + 16);
	sprintf(twice, "%sk: 2\n", t);
	expect_gate_error(twice, RBA_E_SCHEMA, 14, 1, "key 'k' given twice");
	free(twice);
	u = with_line(t, "k", "kk: 1");
	expect_gate_error(u, RBA_E_SCHEMA, 5, 1, "unknown key 'kk'");
	free(u);
	u = with_line(t, "k", "k:1");
	expect_gate_error(u, RBA_E_SCHEMA, 5, 1, "expected 'key: value'");
	free(u);
	free(t);
}
END_TEST

START_TEST(test_gate_bad_values)
{
	struct fx_gate g;
	char *t, *u, line[700];
	static const char *const nums[] = { "k", "baseline_median",
					    "baseline_spread", "threshold" };
	static const char *const bad[] = { "abc", "nan", "1e999", "1x", "" };

	sample_gate(&g);
	t = gate_text(&g);
	for (size_t i = 0; i < 4; i++)
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			char want[64];
			unsigned long line_no = 5 + (unsigned long)i;
			snprintf(line, sizeof(line), "%s: %s", nums[i], bad[j]);
			snprintf(want, sizeof(want), "'%s' is not a finite number",
				 nums[i]);
			u = with_line(t, nums[i], line);
			expect_gate_error(u, RBA_E_SCHEMA, line_no,
					  strlen(nums[i]) + 3, want);
			free(u);
		}
	u = with_line(t, "seeds", "seeds: -1");
	expect_gate_error(u, RBA_E_SCHEMA, 9, 8, "seeds is a count");
	free(u);
	u = with_line(t, "seeds", "seeds: 1.5");
	expect_gate_error(u, RBA_E_SCHEMA, 9, 8, "seeds is a count");
	free(u);
	/* A version is a version name, quoted or not. */
	u = with_line(t, "version", "version: \"\"x\"\"");
	expect_gate_error(u, RBA_E_SCHEMA, 11, 11, "'version' is not a version name");
	free(u);
	u = with_line(t, "version", "version: a b");
	expect_gate_error(u, RBA_E_SCHEMA, 11, 10, "'version' is not a version name");
	free(u);
	u = with_line(t, "version", "version: \"synth-chapter\"");
	{
		struct rba_detail d;
		struct fx_gate h;
		ck_assert_int_eq(fx_gate_parse(u, strlen(u), "g.yaml", &h, &d), 0);
		ck_assert_str_eq(h.version, "synth-chapter");
	}
	free(u);
	u = with_line(t, "config_hash", "config_hash: sha256:00");
	expect_gate_error(u, RBA_E_SCHEMA, 12, 14, "'config_hash' is not a digest");
	free(u);
	u = with_line(t, "eval_fingerprint", "eval_fingerprint: x");
	expect_gate_error(u, RBA_E_SCHEMA, 13, 19,
			  "'eval_fingerprint' is not a digest");
	free(u);
	u = with_line(t, "schema", "schema: rebuild-audit/gate/v2");
	expect_gate_error(u, RBA_E_NEWER, 2, 9,
			  "a gate of a newer format ('rebuild-audit/gate/v2')");
	free(u);
	u = with_line(t, "schema", "schema: rebuild-audit/pins/v1");
	expect_gate_error(u, RBA_E_SCHEMA, 2, 9,
			  "not a gate (schema rebuild-audit/gate/v1)");
	free(u);
	/* Unknown metrics, and a direction that is not the metric's. */
	u = with_line(t, "metric", "metric: val_f1");
	expect_gate_error(u, RBA_E_SCHEMA, 3, 9, "unknown metric 'val_f1'");
	free(u);
	u = with_line(t, "metric", "metric: VAL_LOSS");
	expect_gate_error(u, RBA_E_SCHEMA, 3, 9, "unknown metric 'VAL_LOSS'");
	free(u);
	u = with_line(t, "metric", "metric: val_acc");
	expect_gate_error(u, RBA_E_SCHEMA, 0, 0,
			  "direction 'lower-is-better' is not the metric's");
	free(u);
	u = with_line(t, "direction", "direction: sideways");
	expect_gate_error(u, RBA_E_SCHEMA, 0, 0,
			  "direction 'sideways' is not the metric's");
	free(u);
	/* A line over FX_GATE_MAX_LINE bytes. */
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	memcpy(line, "sweep: ", 7);
	u = with_line(t, "sweep", line);
	expect_gate_error(u, RBA_E_SCHEMA, 10, 1, "line too long");
	free(u);
	free(t);
}
END_TEST

/* ---- the gate's rule --------------------------------------------------- */

START_TEST(test_gate_pass_direction)
{
	struct fx_gate g;

	sample_gate(&g);
	g.threshold = 1;
	ck_assert_int_eq(fx_gate_pass(&g, 1), 1);
	ck_assert_int_eq(fx_gate_pass(&g, 0.5), 1);
	ck_assert_int_eq(fx_gate_pass(&g, 1.0000001), 0);
	ck_assert_int_eq(fx_gate_pass(&g, NAN), 0);
	ck_assert_int_eq(fx_gate_pass(&g, -INFINITY), 0);
	ck_assert_str_eq(fx_gate_direction(&g), "lower-is-better");
	g.metric = FX_VAL_ACC;
	g.threshold = 0.5;
	ck_assert_int_eq(fx_gate_pass(&g, 0.5), 1);
	ck_assert_int_eq(fx_gate_pass(&g, 0.9), 1);
	ck_assert_int_eq(fx_gate_pass(&g, 0.4999), 0);
	ck_assert_int_eq(fx_gate_pass(&g, INFINITY), 0);
	ck_assert_str_eq(fx_gate_direction(&g), "higher-is-better");
}
END_TEST

static void
runs_of(struct rebuild_runrec *r, const double *loss, const double *acc,
	size_t n, uint32_t classes)
{
	memset(r, 0, n * sizeof(*r));
	for (size_t i = 0; i < n; i++) {
		r[i].eval_loss = loss[i];
		r[i].eval_acc = acc[i];
		r[i].eval_auc = classes == 2 ? acc[i] : NAN;
		r[i].nclasses = classes;
	}
}

START_TEST(test_gate_decide_median)
{
	const double loss[4] = { 0.9, 1.2, 0.95, 1.0 };
	const double acc[4] = { 0.7, 0.4, 0.65, 0.6 };
	struct rebuild_runrec r[4];
	struct fx_gate_value v;
	struct fx_fault f;
	struct fx_gate g;
	unsigned char pass[4];
	size_t alarms;

	sample_gate(&g);
	runs_of(r, loss, acc, 4, 4);
	/* The median of four, not each seed: 0.975 passes 1.0 though one
	 * seed (1.2) is over it. */
	g.threshold = 1.0;
	ck_assert_int_eq(fx_gate_decide(&g, r, 4, "t", &v, &f), 0);
	ck_assert_int_eq(v.metric, FX_VAL_LOSS);
	ck_assert_uint_eq(v.n, 4);
	ck_assert_double_eq_tol(v.value, 0.975, 1e-15);
	ck_assert_int_eq(v.pass, 1);
	g.threshold = 0.97;
	ck_assert_int_eq(fx_gate_decide(&g, r, 4, "t", &v, &f), 0);
	ck_assert_int_eq(v.pass, 0);
	/* validate decides each seed alone. */
	g.threshold = 1.0;
	ck_assert_int_eq(fx_gate_validate(&g, r, 4, "t", pass, &alarms, &f), 0);
	ck_assert_uint_eq(alarms, 1);
	ck_assert_int_eq(pass[1], 0);
	ck_assert_int_eq(pass[3], 1);
	/* The metric the file names, in its direction: accuracy. */
	g.metric = FX_VAL_ACC;
	g.threshold = 0.6;
	ck_assert_int_eq(fx_gate_decide(&g, r, 4, "t", &v, &f), 0);
	ck_assert_int_eq(v.metric, FX_VAL_ACC);
	ck_assert_double_eq_tol(v.value, 0.625, 1e-15);
	ck_assert_int_eq(v.pass, 1);
	g.threshold = 0.9;
	ck_assert_int_eq(fx_gate_decide(&g, r, 4, "t", &v, &f), 0);
	ck_assert_int_eq(v.pass, 0);
	/* One seed alone is its own median. */
	g.threshold = 0.5;
	ck_assert_int_eq(fx_gate_decide(&g, &r[1], 1, "t", &v, &f), 0);
	ck_assert_double_eq(v.value, 0.4);
	ck_assert_int_eq(v.pass, 0);
}
END_TEST

START_TEST(test_gate_decide_worst_and_refused)
{
	const double loss[3] = { 0.9, NAN, NAN };
	const double acc[3] = { 0.7, NAN, 0.8 };
	struct rebuild_runrec r[3];
	struct fx_gate_value v;
	struct fx_fault f;
	struct fx_gate g;

	sample_gate(&g);
	runs_of(r, loss, acc, 3, 4);
	/* A seed without a finite value is the worst: two of three fail. */
	g.threshold = 10;
	ck_assert_int_eq(fx_gate_decide(&g, r, 3, "t", &v, &f), 0);
	ck_assert(isinf(v.value) && v.value > 0);
	ck_assert_int_eq(v.pass, 0);
	g.metric = FX_VAL_ACC;
	g.threshold = 0;
	ck_assert_int_eq(fx_gate_decide(&g, r, 3, "t", &v, &f), 0);
	ck_assert_double_eq(v.value, 0.7);
	ck_assert_int_eq(v.pass, 1);
	/* val_auc of four classes is refused at the gate file's key. */
	g.metric = FX_VAL_AUC;
	snprintf(g.file, sizeof(g.file), "auc.yaml");
	g.metric_line = 3;
	g.metric_col = 9;
	ck_assert_int_eq(fx_gate_decide(&g, r, 3, "run", &v, &f),
			 RBA_E_UNSUPPORTED);
	ck_assert_int_eq(f.step, FX_STEP_GATE_MEASURE);
	ck_assert_str_eq(f.subject, "auc.yaml");
	ck_assert_str_eq(f.d.file, "auc.yaml");
	ck_assert_uint_eq(f.d.line, 3);
	ck_assert_uint_eq(f.d.col, 9);
	ck_assert_str_eq(f.d.key, "metric");
	ck_assert_str_eq(f.d.reason,
			 "key 'metric': val_auc needs two classes and 'run' has 4");
	/* ... and measured for two. */
	runs_of(r, loss, acc, 3, 2);
	g.threshold = 0.75;
	ck_assert_int_eq(fx_gate_decide(&g, r, 3, "run", &v, &f), 0);
	ck_assert_double_eq(v.value, 0.7);
	ck_assert_int_eq(v.pass, 0);
}
END_TEST

START_TEST(test_gate_alarms_allowed)
{
	ck_assert_uint_eq(fx_gate_alarms_allowed(0), 0);
	ck_assert_uint_eq(fx_gate_alarms_allowed(19), 0);
	ck_assert_uint_eq(fx_gate_alarms_allowed(20), 1);
	ck_assert_uint_eq(fx_gate_alarms_allowed(100), 5);
}
END_TEST

/* ---- edits ------------------------------------------------------------- */

/* The synthetic chapter's pins with each (from, to) replaced once. */
static struct pins *
pins_edited(const char *const *from, const char *const *to, size_t n)
{
	struct rba_detail d;
	struct pins *p = NULL;
	uint8_t *text = NULL;
	size_t len = 0;
	struct rba_buf b;

	rba_detail_clear(&d);
	ck_assert_int_eq(rba_file_read(FIXTURES "/pins/synth-chapter.yaml",
				       1u << 20, &text, &len, &d), 0);
	rba_buf_init(&b);
	rba_buf_put(&b, text, len);
	rba_buf_put_u8(&b, 0);
	free(text);
	for (size_t i = 0; i < n; i++) {
		char *s = (char *)b.p, *at = strstr(s, from[i]);
		struct rba_buf c;
		ck_assert_msg(at != NULL, "no '%s'", from[i]);
		rba_buf_init(&c);
		rba_buf_put(&c, s, (size_t)(at - s));
		rba_buf_printf(&c, "%s%s", to[i], at + strlen(from[i]));
		rba_buf_put_u8(&c, 0);
		rba_buf_release(&b);
		b = c;
	}
	ck_assert_int_eq(policy_pins_parse(b.p, strlen((char *)b.p), "t.yaml", &p,
					   &d), 0);
	rba_buf_release(&b);
	return p;
}

static void
assert_same_config(const struct pins *a, const struct pins *b)
{
	struct rba_digest x, y;

	policy_pins_config_hash(a, &x);
	policy_pins_config_hash(b, &y);
	ck_assert(rba_digest_equal(&x, &y));
}

START_TEST(test_edits_apply)
{
	static const char *const from[] = { "lr: 0.02,", "weight_decay: 0.003,",
					    "version: synth-chapter" };
	static const char *const to[] = { "lr: 0.2,", "weight_decay: 0.004,",
					  "version: synth-two" };
	struct pins *base = pins_edited(NULL, NULL, 0);
	struct pins *cand = pins_edited(from, to, 3);
	struct pins *wd = pins_edited(&from[1], &to[1], 1);
	struct pins *out = NULL;
	struct fx_edit *e = NULL;
	struct rba_detail d;
	unsigned char pick[2];
	size_t n = 0;

	/* Two edits, in canonical order; the version is not one. */
	ck_assert_int_eq(fx_edits(base, cand, &e, &n, &d), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(e[0].path, "train.lr");
	ck_assert_str_eq(e[0].base, "0.02");
	ck_assert_str_eq(e[0].cand, "0.2");
	ck_assert_str_eq(e[1].path, "train.weight_decay");
	/* Both: the candidate's config; none: the base's; the second alone. */
	pick[0] = pick[1] = 1;
	ck_assert_int_eq(fx_edits_apply(base, e, n, pick, &out, &d), 0);
	assert_same_config(out, cand);
	ck_assert_double_eq(out->train.lr, 0.2);
	policy_pins_free(out);
	pick[0] = pick[1] = 0;
	ck_assert_int_eq(fx_edits_apply(base, e, n, pick, &out, &d), 0);
	assert_same_config(out, base);
	policy_pins_free(out);
	pick[1] = 1;
	ck_assert_int_eq(fx_edits_apply(base, e, n, pick, &out, &d), 0);
	assert_same_config(out, wd);
	ck_assert_double_eq(out->train.lr, 0.02);
	policy_pins_free(out);
	/* An edit that makes invalid pins says so. */
	snprintf(e[0].cand, sizeof(e[0].cand), "banana");
	pick[0] = 1;
	rba_detail_clear(&d);
	ck_assert_int_ne(fx_edits_apply(base, e, n, pick, &out, &d), 0);
	ck_assert_ptr_null(out);
	ck_assert(d.reason[0] != 0);
	free(e);
	/* The same pins: no edits. */
	ck_assert_int_eq(fx_edits(base, base, &e, &n, &d), 0);
	ck_assert_uint_eq(n, 0);
	free(e);
	policy_pins_free(base);
	policy_pins_free(cand);
	policy_pins_free(wd);
}
END_TEST

Suite *
suite_forensics(void)
{
	Suite *s = suite_create("forensics");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_seeds_parse);
	tcase_add_test(tc, test_stat_odd_even);
	tcase_add_test(tc, test_sign_test_binomial);
	tcase_add_test(tc, test_noise_floor_boundary);
	tcase_add_test(tc, test_noise_floor_zero_spread_and_direction);
	tcase_add_test(tc, test_metrics);
	tcase_add_test(tc, test_expr_valid);
	tcase_add_test(tc, test_expr_invalid);
	tcase_add_test(tc, test_gate_round_trip);
	tcase_add_test(tc, test_gate_every_key);
	tcase_add_test(tc, test_gate_bad_values);
	tcase_add_test(tc, test_gate_pass_direction);
	tcase_add_test(tc, test_gate_decide_median);
	tcase_add_test(tc, test_gate_decide_worst_and_refused);
	tcase_add_test(tc, test_gate_alarms_allowed);
	tcase_add_test(tc, test_edits_apply);
	suite_add_tcase(s, tc);
	return s;
}
