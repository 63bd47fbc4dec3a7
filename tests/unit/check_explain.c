/*
 * check_explain.c - Shapley values of networks (model/explain.h) on
 * random networks: the Gray code enumeration against a brute-force
 * reference, efficiency and the time at the cap, and the estimate above
 * the cap against the exact values, within its bound.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/rbatime.h"
#include "model/artifact.h"
#include "model/explain.h"
#include "train/rng.h"
#include "tests/unit/suites.h"

/* The trainer's hidden layers in the fixtures' pins (hidden: [32, 32]). */
static const uint32_t trainer_hidden[] = { 32, 32 };

/*
 * A random network over k columns (column 1 categorical with three
 * levels when k > 2, the others numeric), standardization mean 0.1,
 * scale 2, hidden layers hid[0 .. nhid), C classes; weights uniform in
 * +-1.5/sqrt(fan_in), biases in +-0.5, keyed by seed.  The case and the
 * baseline are random too.  Everything lives in the test struct.
 */
struct rnet {
	struct artifact a;
	struct encode_column *cols;
	char **classes;
	struct explain_baseline b;
	float *raw;
};

static char *levels[] = { "a", "b", "c" };
static char *class_names[] = { "c0", "c1", "c2", "c3" };

static void
rnet_make(struct rnet *t, uint32_t k, const uint32_t *hid, uint32_t nhid,
	  uint32_t C, uint64_t seed)
{
	uint32_t sizes[REBUILD_MAX_LAYERS + 1], nf = 0;
	uint64_t key = rng_key(seed, 100, 0, 0);
	uint64_t draw = 0;

	memset(t, 0, sizeof(*t));
	ck_assert_uint_le(C, 4);
	t->cols = calloc(k, sizeof(*t->cols));
	for (uint32_t c = 0; c < k; c++) {
		if (c == 1 && k > 2) {
			t->cols[c] = (struct encode_column){ "cat", ENCODE_CATEGORICAL, 3,
							     levels };
			nf += 3;
		} else {
			t->cols[c] = (struct encode_column){ "num", ENCODE_NUMERIC, 0, NULL };
			nf += 1;
		}
	}
	t->a.abi = 1;
	t->a.spec.label = "class";
	t->a.spec.nclasses = C;
	t->a.spec.classes = class_names;
	t->a.spec.positive = C == 2 ? 1 : ENCODE_NO_POSITIVE;
	t->a.spec.ncolumns = k;
	t->a.spec.columns = t->cols;
	t->a.spec.nfeatures = nf;
	t->a.spec.mean = malloc(nf * sizeof(float));
	t->a.spec.scale = malloc(nf * sizeof(float));
	for (uint32_t f = 0; f < nf; f++) {
		t->a.spec.mean[f] = 0.1f;
		t->a.spec.scale[f] = 2.0f;
	}
	sizes[0] = nf;
	for (uint32_t l = 0; l < nhid; l++)
		sizes[l + 1] = hid[l];
	sizes[nhid + 1] = C;
	ck_assert_int_eq(rebuild_model_alloc(&t->a.model, nhid + 1, sizes), 0);
	for (uint32_t l = 0; l <= nhid; l++) {
		float r = 1.5f / sqrtf((float)sizes[l]);
		for (size_t i = 0; i < (size_t)sizes[l] * sizes[l + 1]; i++)
			t->a.model.w[l][i] = r * (2.0f * rng_uniformf(key, draw++) - 1.0f);
		for (uint32_t j = 0; j < sizes[l + 1]; j++)
			t->a.model.b[l][j] = 0.5f * (2.0f * rng_uniformf(key, draw++) - 1.0f);
	}
	/* the case: numbers around 0, a level; the baseline: means, modes */
	t->raw = calloc(nf, sizeof(float));
	t->b.nfeatures = nf;
	t->b.ncolumns = k;
	t->b.ntrain = 100;
	t->b.feat_mean = calloc(nf, sizeof(double));
	t->b.col_mean = calloc(k, sizeof(double));
	t->b.col_mode = calloc(k, sizeof(uint32_t));
	for (uint32_t c = 0, f = 0; c < k; c++) {
		if (t->cols[c].kind == ENCODE_CATEGORICAL) {
			t->raw[f + 2] = 1.0f;
			t->b.col_mode[c] = 0;
			t->b.col_mean[c] = NAN;
			f += 3;
		} else {
			t->raw[f] = 2.0f * rng_normalf(key, draw++);
			t->b.col_mean[c] = (double)(0.5f * rng_normalf(key, draw++));
			f += 1;
		}
	}
}

static void
rnet_free(struct rnet *t)
{
	rebuild_model_release(&t->a.model);
	free(t->a.spec.mean);
	free(t->a.spec.scale);
	free(t->cols);
	free(t->raw);
	explain_baseline_release(&t->b);
}

/* The explained margin of class cls for standardized input x: a plain
 * forward pass in double, every input summed. */
static double
ref_margin(const struct rebuild_model *m, const float *x, uint32_t cls)
{
	double cur[64], nxt[64], mean = 0.0;
	uint32_t C = m->sizes[m->nlayers];

	ck_assert_uint_le(m->sizes[0], 64);
	for (uint32_t f = 0; f < m->sizes[0]; f++)
		cur[f] = x[f];
	for (uint32_t l = 0; l < m->nlayers; l++) {
		uint32_t ni = m->sizes[l], no = m->sizes[l + 1];
		ck_assert_uint_le(no, 64);
		for (uint32_t j = 0; j < no; j++) {
			double acc = m->b[l][j];
			for (uint32_t i = 0; i < ni; i++)
				acc += cur[i] * (double)m->w[l][(size_t)i * no + j];
			nxt[j] = l + 1 < m->nlayers && acc < 0.0 ? 0.0 : acc;
		}
		memcpy(cur, nxt, no * sizeof(double));
	}
	if (C == 2)
		return cur[cls] - cur[1 - cls];
	for (uint32_t c = 0; c < C; c++)
		mean += cur[c];
	return cur[cls] - mean / C;
}

/*
 * Shapley values by the definition: v(S) for every coalition from a
 * forward pass of the case's columns in S and the baseline's outside,
 * phi_j = sum over S without j of |S|! (k - |S| - 1)! / k! (v(S + j) -
 * v(S)), in long double.
 */
static void
ref_shapley(const struct rnet *t, uint32_t cls, double *phi, double *base)
{
	const struct encode_spec *s = &t->a.spec;
	uint32_t k = s->ncolumns, nf = s->nfeatures, f0[32];
	size_t nS = (size_t)1 << k;
	float *xb = calloc(nf, sizeof(float)), *xc = calloc(nf, sizeof(float));
	float *xs = calloc(nf, sizeof(float));
	double *v = malloc(nS * sizeof(double));
	long double fact[33];

	ck_assert_uint_le(k, 20);
	for (uint32_t c = 0, f = 0; c < k; c++) {
		f0[c] = f;
		if (s->columns[c].kind == ENCODE_NUMERIC)
			xb[f++] = (float)t->b.col_mean[c];
		else {
			xb[f + t->b.col_mode[c]] = 1.0f;
			f += s->columns[c].nlevels;
		}
	}
	f0[k] = nf;
	encode_standardize(s, xb, 1, xb);
	encode_standardize(s, t->raw, 1, xc);
	for (size_t S = 0; S < nS; S++) {
		for (uint32_t c = 0; c < k; c++)
			for (uint32_t f = f0[c]; f < f0[c + 1]; f++)
				xs[f] = (S >> c & 1) ? xc[f] : xb[f];
		v[S] = ref_margin(&t->a.model, xs, cls);
	}
	fact[0] = 1;
	for (uint32_t i = 1; i <= k; i++)
		fact[i] = fact[i - 1] * i;
	for (uint32_t j = 0; j < k; j++) {
		long double acc = 0;
		for (size_t S = 0; S < nS; S++) {
			unsigned sz = (unsigned)__builtin_popcountll(S);
			if (S >> j & 1)
				continue;
			acc += fact[sz] * fact[k - sz - 1] / fact[k] *
			       ((long double)v[S | (size_t)1 << j] - v[S]);
		}
		phi[j] = (double)acc;
	}
	*base = v[0];
	free(xb);
	free(xc);
	free(xs);
	free(v);
}

/* Gray code enumeration against the definition, n = 6 .. 10 columns. */
START_TEST(test_exact_matches_definition)
{
	static const uint32_t h1[] = { 8 }, h3[] = { 16, 12, 8 };
	struct {
		const uint32_t *hid;
		uint32_t nhid, C;
	} shapes[] = {
		{ h1, 1, 2 },
		{ trainer_hidden, 2, 2 },
		{ h3, 3, 3 },
	};
	double worst = 0.0;

	for (uint32_t k = 6; k <= 10; k++)
		for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++) {
			struct rnet t;
			struct explain_result r;
			struct rba_detail d;
			double phi[32], base;
			uint32_t cls = k % shapes[sh].C;

			rnet_make(&t, k, shapes[sh].hid, shapes[sh].nhid, shapes[sh].C,
				  k * 10 + sh);
			rba_detail_clear(&d);
			ck_assert_int_eq(explain_case(&t.a, &t.b, t.raw, cls, &r, &d), 0);
			ck_assert_int_eq(r.method, EXPLAIN_SHAPLEY);
			ck_assert_int_eq(r.accuracy, EXPLAIN_EXACT);
			ck_assert(r.max_bound == 0.0 && r.samples == 0);
			ref_shapley(&t, cls, phi, &base);
			ck_assert_msg(fabs(r.baseline - base) <= 1e-12 * (1.0 + fabs(base)),
				      "baseline %.17g vs %.17g", r.baseline, base);
			for (uint32_t c = 0; c < k; c++) {
				double e = fabs(r.contrib[c] - phi[c]);
				ck_assert(r.bound[c] == 0.0);
				ck_assert_msg(e <= 1e-6 * fabs(phi[c]) + 1e-12,
					      "k %u shape %zu column %u: %.17g vs %.17g", k,
					      sh, c, r.contrib[c], phi[c]);
				if (phi[c] != 0.0 && e / fabs(phi[c]) > worst)
					worst = e / fabs(phi[c]);
			}
			ck_assert(r.gap <= EXPLAIN_TOLERANCE);
			explain_result_release(&r);
			rnet_free(&t);
		}
	fprintf(stderr, "explain: Gray code vs definition, 6..10 columns: largest "
		"relative difference %.3g\n", worst);
}
END_TEST

/* Efficiency at the cap: 26 columns, the trainer's 32-32 network. */
START_TEST(test_exact_at_cap)
{
	struct rnet t;
	struct explain_result r;
	struct rba_detail d;
	double t0;
	clock_t c0;

	rnet_make(&t, EXPLAIN_MAX_SHAPLEY_COLUMNS, trainer_hidden, 2, 2, 26);
	rba_detail_clear(&d);
	t0 = rba_time_mono();
	c0 = clock();
	ck_assert_msg(explain_case(&t.a, &t.b, t.raw, 1, &r, &d) == 0, "%s", d.reason);
	fprintf(stderr, "explain: exact Shapley values, %u columns, 32-32 network: "
		"%.2f s (%.2f s of CPU), |sum - margin| %.3g\n",
		EXPLAIN_MAX_SHAPLEY_COLUMNS, rba_time_mono() - t0,
		(double)(clock() - c0) / CLOCKS_PER_SEC, r.gap);
	ck_assert_int_eq(r.accuracy, EXPLAIN_EXACT);
	ck_assert_msg(r.gap <= EXPLAIN_TOLERANCE, "%.17g vs %.17g", r.sum, r.margin);
	ck_assert(fabs(r.sum - r.margin) == r.gap);
	explain_result_release(&r);
	rnet_free(&t);
}
END_TEST

/*
 * The estimate at 20 columns, forced by a cap of 19: within its bound of
 * the exact values, adding up, the same bits twice.
 */
START_TEST(test_estimate_within_bound)
{
	struct rnet t;
	struct explain_result ex, ap, ap2;
	struct explain_options o = { .approximate = 1, .max_exact_columns = 19,
				      .sample_work = (uint64_t)1 << 32, .seed = 7 };
	struct rba_detail d;
	double worst = 0.0, t0;

	rnet_make(&t, 20, trainer_hidden, 2, 2, 20);
	rba_detail_clear(&d);
	ck_assert_int_eq(explain_case(&t.a, &t.b, t.raw, 1, &ex, &d), 0);
	ck_assert_int_eq(ex.accuracy, EXPLAIN_EXACT);
	t0 = rba_time_mono();
	ck_assert_msg(explain_case_opt(&t.a, &t.b, t.raw, 1, &o, &ap, &d) == 0, "%s",
		      d.reason);
	t0 = rba_time_mono() - t0;
	ck_assert_int_eq(ap.method, EXPLAIN_SHAPLEY);
	ck_assert_int_eq(ap.accuracy, EXPLAIN_APPROXIMATE);
	ck_assert_str_eq(explain_accuracy_name(ap.accuracy), "approximate");
	ck_assert(ap.samples >= EXPLAIN_SHAPLEY_MIN_PAIRS);
	ck_assert(ap.gap <= EXPLAIN_TOLERANCE);
	ck_assert(ap.baseline == ex.baseline);
	for (uint32_t c = 0; c < 20; c++) {
		double e = fabs(ap.contrib[c] - ex.contrib[c]);
		ck_assert(ap.bound[c] > 0.0 && ap.bound[c] <= ap.max_bound);
		ck_assert_msg(e <= ap.bound[c],
			      "column %u: %.17g vs exact %.17g, bound %.3g", c,
			      ap.contrib[c], ex.contrib[c], ap.bound[c]);
		if (e / ap.bound[c] > worst)
			worst = e / ap.bound[c];
	}
	fprintf(stderr, "explain: estimate over 20 columns, %llu pairs, %.2f s: largest "
		"bound %.3g, largest error %.3g of its bound\n",
		(unsigned long long)ap.samples, t0, ap.max_bound, worst);
	/* the same bits again; another seed, other bits */
	ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 1, &o, &ap2, &d), 0);
	ck_assert(memcmp(ap.contrib, ap2.contrib, 20 * sizeof(double)) == 0);
	ck_assert(memcmp(ap.bound, ap2.bound, 20 * sizeof(double)) == 0);
	explain_result_release(&ap2);
	o.seed = 8;
	ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 1, &o, &ap2, &d), 0);
	ck_assert(memcmp(ap.contrib, ap2.contrib, 20 * sizeof(double)) != 0);
	explain_result_release(&ap2);
	explain_result_release(&ap);
	explain_result_release(&ex);
	rnet_free(&t);
}
END_TEST

/*
 * Over the cap: refused by explain_case, estimated for a caller that
 * asks, unless no sample fits.
 */
START_TEST(test_over_cap)
{
	struct rnet t;
	struct explain_result r;
	struct explain_options o = { .approximate = 1, .sample_work = (uint64_t)1 << 28 };
	struct rba_detail d;

	rnet_make(&t, EXPLAIN_MAX_SHAPLEY_COLUMNS + 1, trainer_hidden, 2, 2, 27);
	rba_detail_clear(&d);
	ck_assert_int_eq(explain_case(&t.a, &t.b, t.raw, 0, &r, &d), RBA_E_LIMIT);
	ck_assert_str_eq(d.reason,
			 "exact Shapley values over 27 columns exceed the cap of 26");
	ck_assert_ptr_null(r.contrib);
	ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 0, &o, &r, &d), 0);
	ck_assert_int_eq(r.accuracy, EXPLAIN_APPROXIMATE);
	ck_assert(r.gap <= EXPLAIN_TOLERANCE);
	ck_assert(r.max_bound > 0.0 && isfinite(r.max_bound));
	explain_result_release(&r);
	/* a work cap below EXPLAIN_SHAPLEY_MIN_PAIRS pairs */
	o.sample_work = 1000;
	ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 0, &o, &r, &d), RBA_E_LIMIT);
	ck_assert_ptr_null(r.contrib);
	ck_assert_ptr_nonnull(strstr(d.reason, "exceeds the work cap"));
	/* a cap over the exact method's */
	o.sample_work = 0;
	o.max_exact_columns = EXPLAIN_MAX_SHAPLEY_COLUMNS + 1;
	ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 0, &o, &r, &d), RBA_E_RANGE);
	/* a network without a baseline (only a forest may have none) */
	ck_assert_int_eq(explain_case(&t.a, NULL, t.raw, 0, &r, &d), RBA_E_RANGE);
	ck_assert_str_eq(d.reason, "the baseline is not the model's");
	ck_assert_ptr_null(r.contrib);
	rnet_free(&t);
}
END_TEST

/* A network whose 2^k coalitions pass the work cap is estimated. */
START_TEST(test_work_cap)
{
	static const uint32_t wide[] = { 64, 64 };
	struct rnet t;
	struct explain_result r;
	struct explain_options o = { .approximate = 1, .work = (uint64_t)1 << 24,
				      .sample_work = (uint64_t)1 << 24 };
	struct rba_detail d;

	/* 12 columns: 4096 coalitions of 64 + 4096 + 64 multiply-adds pass
	 * 2^24 */
	rnet_make(&t, 12, wide, 2, 2, 12);
	rba_detail_clear(&d);
	o.approximate = 0;
	ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 1, &o, &r, &d), RBA_E_LIMIT);
	ck_assert_str_eq(d.reason, "exact Shapley values over 12 columns of a network "
			 "of 4224 multiply-adds exceed the work cap");
	o.approximate = 1;
	ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 1, &o, &r, &d), 0);
	ck_assert_int_eq(r.accuracy, EXPLAIN_APPROXIMATE);
	ck_assert_uint_eq(r.samples, ((uint64_t)1 << 24) / (64 + 4096 + 64) / 24);
	explain_result_release(&r);
	o.work = (uint64_t)1 << 25;
	ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 1, &o, &r, &d), 0);
	ck_assert_int_eq(r.accuracy, EXPLAIN_EXACT);
	explain_result_release(&r);
	rnet_free(&t);
}
END_TEST

/* Columns at their baseline value: 0 exactly, and the others' values
 * unchanged by leaving them out. */
START_TEST(test_null_players)
{
	struct rnet t;
	struct explain_result r;
	struct rba_detail d;
	double phi[32], base;

	rnet_make(&t, 10, trainer_hidden, 2, 2, 5);
	/* column 1 (categorical) at its mode, columns 4 and 8 at their means */
	t.raw[1] = 1.0f;
	t.raw[3] = 0.0f;
	t.raw[4 + 2] = (float)t.b.col_mean[4];
	t.raw[8 + 2] = (float)t.b.col_mean[8];
	rba_detail_clear(&d);
	ck_assert_int_eq(explain_case(&t.a, &t.b, t.raw, 1, &r, &d), 0);
	ck_assert_int_eq(r.accuracy, EXPLAIN_EXACT);
	ck_assert_uint_eq(r.players, 7);
	ck_assert(r.contrib[1] == 0.0 && r.contrib[4] == 0.0 && r.contrib[8] == 0.0);
	ref_shapley(&t, 1, phi, &base);
	for (uint32_t c = 0; c < 10; c++)
		ck_assert_msg(fabs(r.contrib[c] - phi[c]) <= 1e-6 * fabs(phi[c]) + 1e-12,
			      "column %u: %.17g vs %.17g", c, r.contrib[c], phi[c]);
	ck_assert(r.gap <= EXPLAIN_TOLERANCE);
	explain_result_release(&r);
	rnet_free(&t);
	/* 28 columns, 4 at the baseline: 24 players, exact */
	rnet_make(&t, 28, trainer_hidden, 2, 2, 28);
	for (uint32_t c = 20; c < 24; c++)
		t.raw[c + 2] = (float)t.b.col_mean[c];
	ck_assert_int_eq(explain_case(&t.a, &t.b, t.raw, 1, &r, &d), 0);
	ck_assert_int_eq(r.accuracy, EXPLAIN_EXACT);
	ck_assert_uint_eq(r.players, 24);
	ck_assert(r.gap <= EXPLAIN_TOLERANCE);
	explain_result_release(&r);
	rnet_free(&t);
}
END_TEST

/* The plain and the AVX2 coalition values: the same bits. */
START_TEST(test_isa_same_bits)
{
	struct rnet t;
	struct explain_result r[2], s[2];
	struct explain_options o = { .approximate = 1, .sample_work = (uint64_t)1 << 26,
				      .seed = 3 };
	struct rba_detail d;
	static const uint32_t h3[] = { 40, 37, 9 };
	size_t nb;

	rba_detail_clear(&d);
	for (int shape = 0; shape < 2; shape++) {
		if (shape == 0)
			rnet_make(&t, 14, trainer_hidden, 2, 2, 14);
		else
			rnet_make(&t, 13, h3, 3, 3, 13);
		for (int i = 0; i < 2; i++) {
			if (i == 0)
				setenv("RBA_STRICT_ISA", "base", 1);
			else
				unsetenv("RBA_STRICT_ISA");
			o.max_exact_columns = 0;
			ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 1, &o,
							  &r[i], &d), 0);
			o.max_exact_columns = 12;
			ck_assert_int_eq(explain_case_opt(&t.a, &t.b, t.raw, 1, &o,
							  &s[i], &d), 0);
		}
		ck_assert_int_eq(r[0].accuracy, EXPLAIN_EXACT);
		ck_assert_int_eq(s[0].accuracy, EXPLAIN_APPROXIMATE);
		nb = r[0].ncolumns * sizeof(double);
		ck_assert(memcmp(r[0].contrib, r[1].contrib, nb) == 0);
		ck_assert(r[0].baseline == r[1].baseline);
		ck_assert(memcmp(s[0].contrib, s[1].contrib, nb) == 0);
		ck_assert(memcmp(s[0].bound, s[1].bound, nb) == 0);
		for (int i = 0; i < 2; i++) {
			explain_result_release(&r[i]);
			explain_result_release(&s[i]);
		}
		rnet_free(&t);
	}
}
END_TEST

Suite *
suite_explain(void)
{
	Suite *s = suite_create("explain");
	TCase *tc = tcase_create("shapley");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_exact_matches_definition);
	tcase_add_test(tc, test_exact_at_cap);
	tcase_add_test(tc, test_estimate_within_bound);
	tcase_add_test(tc, test_over_cap);
	tcase_add_test(tc, test_work_cap);
	tcase_add_test(tc, test_null_players);
	tcase_add_test(tc, test_isa_same_bits);
	suite_add_tcase(s, tc);
	return s;
}
