/*
 * check_rebuild.c - the deterministic trainer: keyed RNG, exp/log,
 * kernels, gradients, optimizers, thread invariance, encoding, split,
 * synthetic task, environment records, run records (train/, data/,
 * rebuild/; the sandbox is check_exec.c's).
 */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "policy/policy.h"
#include "data/csv.h"
#include "data/encode.h"
#include "train/envrec.h"
#include "train/evaluate.h"
#include "train/fmath.h"
#include "train/kernel.h"
#include "train/rng.h"
#include "rebuild/runrec.h"
#include "data/synth.h"
#include "train/trainer.h"
#include "train/abi.h"
#include "tests/unit/suites.h"

static uint32_t
fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* Distance in ulps between two finite floats of the same sign. */
static long
ulps(float a, float b)
{
	int32_t ia = (int32_t)fbits(a), ib = (int32_t)fbits(b);

	if (ia < 0)
		ia = (int32_t)0x80000000 - ia;
	if (ib < 0)
		ib = (int32_t)0x80000000 - ib;
	return labs((long)ia - (long)ib);
}

START_TEST(test_rng_pure)
{
	uint64_t k1 = rng_key(7, RNG_INIT, 0, 0), k2 = rng_key(7, RNG_INIT, 0, 0);
	uint64_t k3 = rng_key(7, RNG_SHUFFLE, 0, 0), k4 = rng_key(8, RNG_INIT, 0, 0);
	uint64_t k5 = rng_key(7, RNG_INIT, 1, 0), k6 = rng_key(7, RNG_INIT, 0, 1);
	double mean = 0, corr = 0;
	int n = 20000, hist[10] = { 0 };

	ck_assert_uint_eq(k1, k2);
	ck_assert_uint_ne(k1, k3);
	ck_assert_uint_ne(k1, k4);
	ck_assert_uint_ne(k1, k5);
	ck_assert_uint_ne(k1, k6);
	ck_assert_uint_ne(k5, k6);
	/* Same (key, index): same number, in any order of calls. */
	uint64_t a = rng_u64(k1, 12345);
	(void)rng_u64(k1, 1);
	(void)rng_u64(k3, 12345);
	ck_assert_uint_eq(a, rng_u64(k1, 12345));
	ck_assert_uint_ne(rng_u64(k1, 0), rng_u64(k1, 1));
	/* Known answer: the stream is part of the trainer ABI. */
	ck_assert_uint_eq(rng_mix64(0), 0xE220A8397B1DCDAFull);
	for (int i = 0; i < n; i++) {
		float u = rng_uniformf(k1, (uint64_t)i);
		float v = rng_uniformf(k3, (uint64_t)i);
		ck_assert(u >= 0.0f && u < 1.0f);
		/* 24-bit granularity: u * 2^24 is an integer. */
		ck_assert(u * 16777216.0f == (float)(uint32_t)(u * 16777216.0f));
		mean += u;
		corr += (u - 0.5) * (v - 0.5);
		hist[(int)(u * 10)]++;
		ck_assert_uint_lt(rng_below(k1, (uint64_t)i, 7), 7);
		double d = rng_uniform(k1, (uint64_t)i);
		ck_assert(d >= 0.0 && d < 1.0);
	}
	mean /= n;
	corr /= n;
	ck_assert_msg(fabs(mean - 0.5) < 0.01, "mean %g", mean);
	/* Distinct purposes are uncorrelated (|r| well under 0.05). */
	ck_assert_msg(fabs(corr / (1.0 / 12)) < 0.05, "corr %g", corr * 12);
	for (int b = 0; b < 10; b++)
		ck_assert_msg(abs(hist[b] - n / 10) < n / 50, "bin %d: %d", b,
			      hist[b]);
	/* rng_bits32: pure and keyed. */
	ck_assert_uint_eq(rng_bits32(k1, 5), rng_bits32(k1, 5));
	ck_assert_uint_ne(rng_bits32(k1, 5), rng_bits32(k3, 5));
}
END_TEST

START_TEST(test_rng_normal)
{
	uint64_t k = rng_key(0, RNG_SYNTH, 0, 0);
	double s = 0, ss = 0;
	int n = 40000;

	for (int i = 0; i < n; i++) {
		float z = rng_normalf(k, (uint64_t)i);
		ck_assert(isfinite(z));
		ck_assert(fabsf(z) < 6.0f);
		s += z;
		ss += (double)z * z;
	}
	ck_assert_msg(fabs(s / n) < 0.02, "mean %g", s / n);
	ck_assert_msg(fabs(ss / n - 1.0) < 0.03, "var %g", ss / n);
}
END_TEST

START_TEST(test_exp_log_accuracy)
{
	long worst_e = 0, worst_l = 0;

	for (int i = 0; i <= 200000; i++) {
		float x = -87.0f + (float)i * (175.0f / 200000.0f);
		float got = fm_expf(x), want = expf(x);
		long u = ulps(got, want);
		if (u > worst_e)
			worst_e = u;
	}
	ck_assert_msg(worst_e <= 2, "exp: %ld ulp", worst_e);
	for (int i = 1; i <= 200000; i++) {
		/* Spans 2^-126 .. 2^127 geometrically, plus values near 1. */
		float x = ldexpf(1.0f + (float)(i % 1000) / 1000.0f,
				 -126 + (i * 253) / 200000);
		float y = 0.5f + (float)i / 100000.0f;
		long u1 = ulps(fm_logf(x), logf(x));
		long u2 = fabsf(logf(y)) > 1e-3f ? ulps(fm_logf(y), logf(y)) : 0;
		if (u1 > worst_l)
			worst_l = u1;
		if (u2 > worst_l)
			worst_l = u2;
		ck_assert(fabsf(fm_logf(y) - logf(y)) <= 2e-7f);
	}
	ck_assert_msg(worst_l <= 2, "log: %ld ulp", worst_l);
	/* Subnormal inputs. */
	ck_assert(ulps(fm_logf(1e-40f), logf(1e-40f)) <= 2);
	for (int i = 0; i < 4096; i++) {
		float t = (float)i / 4096.0f;
		ck_assert_msg(fabs(fm_cos2pif(t) - cos(2 * M_PI * t)) < 3e-7,
			      "cos2pi(%g)", t);
	}
}
END_TEST

START_TEST(test_exp_log_special)
{
	ck_assert(fm_expf(0.0f) == 1.0f);
	ck_assert(fm_expf(-0.0f) == 1.0f);
	ck_assert(isinf(fm_expf(89.0f)) && fm_expf(89.0f) > 0);
	ck_assert(isinf(fm_expf(INFINITY)));
	ck_assert(fm_expf(-INFINITY) == 0.0f);
	ck_assert(fm_expf(-200.0f) == 0.0f);
	ck_assert(isnan(fm_expf(NAN)));
	ck_assert(fm_expf(-100.0f) > 0.0f); /* subnormal, not flushed */
	ck_assert(fm_expf(88.5f) < INFINITY);
	ck_assert(fm_logf(1.0f) == 0.0f);
	ck_assert(fm_logf(2.0f) == logf(2.0f));
	ck_assert(isinf(fm_logf(0.0f)) && fm_logf(0.0f) < 0);
	ck_assert(isinf(fm_logf(-0.0f)) && fm_logf(-0.0f) < 0);
	ck_assert(isnan(fm_logf(-1.0f)));
	ck_assert(isnan(fm_logf(NAN)));
	ck_assert(isinf(fm_logf(INFINITY)) && fm_logf(INFINITY) > 0);
	ck_assert(fm_cos2pif(0.0f) == 1.0f);
	ck_assert(fm_cos2pif(0.5f) == -1.0f);
	ck_assert(fm_cos2pif(1.0f) == 1.0f);
	ck_assert(fabsf(fm_cos2pif(0.25f)) < 1e-7f);
	ck_assert(isnan(fm_cos2pif(1e30f)));
	ck_assert(fm_sqrtf(4.0f) == 2.0f);
}
END_TEST

/* The vectorized exp/log of every strict path equal the scalar ones. */
START_TEST(test_vector_exp_log)
{
	static const char *const isas[] = { "base", "avx2", "avx512" };
	static const float special[] = {
		0.0f, -0.0f, 1.0f, -1.0f, 88.72283935546875f, 88.7229f, 89.0f,
		-103.97f, -103.98f, -103.99f, -104.0f, -150.0f, 1e-45f, 1e-40f,
		1.17549435e-38f, 3.4e38f, -3.4e38f, 0.5f, 2.0f, 1.41421356f,
		1.41421354f, 0.70710678f, 127.5f, -87.5f, -126.5f,
	};
	size_t n = 4099;
	float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4);
	uint64_t k = rng_key(5, 99, 0, 0);

	for (size_t i = 0; i < n; i++) {
		uint32_t u = (uint32_t)rng_u64(k, i);
		float f;
		memcpy(&f, &u, 4); /* any bit pattern, NaN and inf included */
		x[i] = i < sizeof(special) / sizeof(special[0]) ? special[i]
			: i % 3 == 0 ? f
			: (rng_uniformf(k, i) - 0.5f) * 250.0f;
	}
	x[40] = INFINITY;
	x[41] = -INFINITY;
	x[42] = NAN;
	for (int a = 0; a < 3; a++) {
		setenv("RBA_STRICT_ISA", isas[a], 1);
		const struct kernel_ops *ops = kernel_strict();
		ops->expv(x, y, n);
		for (size_t i = 0; i < n; i++) {
			float want = fm_expf(x[i]);
			ck_assert_msg(fbits(y[i]) == fbits(want) ||
					      (isnan(y[i]) && isnan(want)),
				      "%s exp(%a): %a, scalar %a", isas[a],
				      (double)x[i], (double)y[i], (double)want);
		}
		/* in place, as the trainer calls it */
		memcpy(z, x, n * 4);
		ops->logv(z, z, n);
		for (size_t i = 0; i < n; i++) {
			float want = fm_logf(x[i]);
			ck_assert_msg(fbits(z[i]) == fbits(want) ||
					      (isnan(z[i]) && isnan(want)),
				      "%s log(%a): %a, scalar %a", isas[a],
				      (double)x[i], (double)z[i], (double)want);
		}
	}
	unsetenv("RBA_STRICT_ISA");
	free(x);
	free(y);
	free(z);
}
END_TEST

/* The activation (ReLU, dropout masks) of every path against its rule. */
START_TEST(test_activation)
{
	static const char *const isas[] = { "base", "avx2", "avx512" };
	size_t n = 1037;
	float *z = malloc(n * 4), *h = malloc(n * 4), *g = malloc(n * 4);
	uint64_t key = rng_key(3, RNG_DROPOUT, 17, 1);
	uint32_t t = (uint32_t)(0.3 * 16777216.0);
	float scale = 1.0f / (1.0f - 0.3f);
	size_t kept = 0;

	for (size_t i = 0; i < n; i++)
		z[i] = i % 11 == 0 ? 0.0f : rng_uniformf(key, i) - 0.5f;
	for (int a = 0; a < 3; a++) {
		setenv("RBA_STRICT_ISA", isas[a], 1);
		const struct kernel_ops *ops = kernel_strict();
		ops->activate(z, h, g, n, key, 1000, t, scale);
		kept = 0;
		for (size_t i = 0; i < n; i++) {
			int keep = (rng_bits32(key, 1000 + (uint32_t)i) >> 8) >= t;
			int on = z[i] > 0.0f && keep;
			ck_assert_msg(g[i] == (on ? scale : 0.0f), "%s g[%zu]", isas[a], i);
			ck_assert_msg(fbits(h[i]) == fbits(on ? z[i] * scale : 0.0f),
				      "%s h[%zu]", isas[a], i);
			kept += keep;
		}
		/* about 70% kept */
		ck_assert_msg(kept > 650 && kept < 800, "kept %zu", kept);
		ops->activate(z, h, g, n, key, 0, 0, scale);
		for (size_t i = 0; i < n; i++) {
			ck_assert(g[i] == (z[i] > 0.0f ? 1.0f : 0.0f));
			ck_assert(fbits(h[i]) == fbits(z[i] > 0.0f ? z[i] : 0.0f));
		}
	}
	unsetenv("RBA_STRICT_ISA");
	free(z);
	free(h);
	free(g);
}
END_TEST

static void
fill(float *p, size_t n, uint64_t seed)
{
	uint64_t k = rng_key(seed, 99, 0, 0);

	for (size_t i = 0; i < n; i++)
		p[i] = rng_uniformf(k, i) * 2.0f - 1.0f;
}

/* The documented order, written the plain way. */
static void
seq_linear(const float *x, size_t rows, size_t in, const float *w,
	   const float *b, size_t out, float *y)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < out; j++) {
			float s = b ? b[j] : 0.0f;
			for (size_t k = 0; k < in; k++)
				s = s + x[r * in + k] * w[k * out + j];
			y[r * out + j] = s;
		}
}

static void
check_ops(const struct kernel_ops *k, const char *isa)
{
	static const size_t dims[] = { 1, 3, 4, 5, 8, 15, 16, 17, 31, 32, 33, 37 };
	float *x = malloc(64 * 64 * 4), *w = malloc(64 * 64 * 4);
	float *b = malloc(64 * 4), *y = malloc(64 * 64 * 4);
	float *yr = malloc(64 * 64 * 4), *wt = malloc(64 * 64 * 4);
	float *db = malloc(64 * 4), *dbr = malloc(64 * 4);

	for (size_t ri = 0; ri < 12; ri += 2)
		for (size_t ii = 0; ii < 12; ii++)
			for (size_t oi = 0; oi < 12; oi++) {
				size_t rows = dims[ri], in = dims[ii], out = dims[oi];
				fill(x, rows * in, rows + 10 * in);
				fill(w, in * out, in + 100 * out);
				fill(b, out, out);
				/* linear, bit for bit against the order */
				k->linear(x, rows, in, w, b, out, y);
				seq_linear(x, rows, in, w, b, out, yr);
				ck_assert_msg(memcmp(y, yr, rows * out * 4) == 0,
					      "%s linear %zux%zux%zu", isa, rows,
					      in, out);
				/* and close to the double reference */
				kernel_ref_linear(x, rows, in, w, b, out, yr);
				for (size_t i = 0; i < rows * out; i++)
					ck_assert(fabsf(y[i] - yr[i]) < 1e-4f);
				/* back_dx: dy (rows x out) times W^T */
				for (size_t kk = 0; kk < in; kk++)
					for (size_t j = 0; j < out; j++)
						wt[j * in + kk] = w[kk * out + j];
				fill(y, rows * out, 5);
				k->back_dx(y, rows, out, w, wt, in, x);
				seq_linear(y, rows, out, wt, NULL, in, yr);
				ck_assert_msg(memcmp(x, yr, rows * in * 4) == 0,
					      "%s back_dx %zux%zux%zu", isa,
					      rows, in, out);
				/* back_dw: sums over rows in order */
				fill(x, rows * in, 6);
				k->back_dw(x, y, rows, in, out, w, db);
				for (size_t kk = 0; kk < in; kk++)
					for (size_t j = 0; j < out; j++) {
						float s = 0.0f;
						for (size_t r = 0; r < rows; r++)
							s = s + x[r * in + kk] *
									y[r * out + j];
						ck_assert_msg(fbits(s) ==
								      fbits(w[kk * out + j]),
							      "%s back_dw", isa);
					}
				for (size_t j = 0; j < out; j++) {
					float s = 0.0f;
					for (size_t r = 0; r < rows; r++)
						s = s + y[r * out + j];
					dbr[j] = s;
				}
				ck_assert(memcmp(db, dbr, out * 4) == 0);
			}
	free(x);
	free(w);
	free(b);
	free(y);
	free(yr);
	free(wt);
	free(db);
	free(dbr);
}

START_TEST(test_kernels_order)
{
	static const char *const isas[] = { "base", "avx2", "avx512" };

	for (int i = 0; i < 3; i++) {
		setenv("RBA_STRICT_ISA", isas[i], 1);
		check_ops(kernel_strict(), kernel_strict_isa());
	}
	unsetenv("RBA_STRICT_ISA");
}
END_TEST

/* The same bits, or two NaNs (C leaves a NaN's sign and payload to the
 * compiler, which may swap the operands of a sum). */
static int
same_or_nans(float a, float b)
{
	return memcmp(&a, &b, sizeof(a)) == 0 || (isnan(a) && isnan(b));
}

/* One AdamW step of one element in plain float operations, in the
 * kernel's order (kernel.h): the bits every path must give. */
static void __attribute__((noinline))
adamw_ref(float *w, float g, float *m, float *v, const struct kernel_adamw *k)
{
	volatile float mi = k->b1 * *m + k->omb1 * g;
	volatile float vi = k->b2 * *v + (k->omb2 * g) * g;
	volatile float den = sqrtf(vi) / k->bc2sqrt + k->eps;
	volatile float q = mi / den;

	*m = mi;
	*v = vi;
	*w = *w * k->decay - k->step_size * q;
}

/*
 * AdamW near and in the subnormal range, where the vector paths step
 * lanes in double (adamw_lane_exact) and keep their float vectors for
 * operands clear of it: every path gives the plain float step's bits,
 * for operands at and around the bounds (2^-35, 2^35, 2^-70, 2^70),
 * subnormal, zero, huge, infinite and NaN, with tame constants and
 * with others (a step size of 1e-9, eps 0, b1 0).
 */
START_TEST(test_adamw_subnormal)
{
	static const char *const isas[] = { "base", "avx2", "avx512" };
	const float pool[] = {
		0.0f, 1e-45f, 1e-40f, 1e-38f, 0x1p-126f, 1e-30f, 1e-20f,
		0x1p-35f, 0x1.fffffep-36f, 0x1p-70f, 0x1.fffffep-71f, 1e-5f,
		0.3f, 1.0f, 1e10f, 0x1p35f, 0x1.000002p35f, 0x1p70f,
		0x1.000002p70f, 1e20f, 1e38f, INFINITY, NAN,
	};
	const size_t np = sizeof(pool) / sizeof(pool[0]), n = 37;
	struct kernel_adamw ks[4];
	uint64_t r = 0x2545f4914f6cdd1dULL;

	for (int c = 0; c < 4; c++) {
		ks[c].b1 = 0.9f;
		ks[c].omb1 = 1.0f - ks[c].b1;
		ks[c].b2 = 0.999f;
		ks[c].omb2 = 1.0f - ks[c].b2;
		ks[c].decay = 1.0f - 0.02f * 0.003f;
		ks[c].step_size = (float)(0.02 / (1.0 - 0.9));
		ks[c].bc2sqrt = (float)sqrt(1.0 - 0.999);
		ks[c].eps = 1e-8f;
	}
	ks[1].step_size = 1e-9f; /* not tame: every vector as it comes */
	ks[2].eps = 0.0f;
	ks[3].b1 = 0.0f;
	ks[3].omb1 = 1.0f;
	for (int i = 0; i < 3; i++) {
		setenv("RBA_STRICT_ISA", isas[i], 1);
		const struct kernel_ops *k = kernel_strict();
		for (int round = 0; round < 3000; round++) {
			const struct kernel_adamw *kp = &ks[round % 4];
			float w[37], g[37], m[37], v[37], w2[37], m2[37], v2[37];
			for (size_t j = 0; j < n; j++) {
				float x[4];
				for (int q = 0; q < 4; q++) {
					r ^= r << 13;
					r ^= r >> 7;
					r ^= r << 17;
					/* mostly ordinary values, so that
					 * whole vectors stay clear */
					x[q] = (r >> 40) % 4 ? 0.001f * (float)((r >> 8) % 1000 + 1)
							     : pool[(r >> 16) % np];
					if ((r >> 32) & 1)
						x[q] = -x[q];
				}
				g[j] = x[0];
				m[j] = x[1];
				v[j] = fabsf(x[2]);
				w[j] = x[3];
			}
			memcpy(w2, w, sizeof(w));
			memcpy(m2, m, sizeof(m));
			memcpy(v2, v, sizeof(v));
			k->adamw(w, g, m, v, n, kp);
			for (size_t j = 0; j < n; j++)
				adamw_ref(&w2[j], g[j], &m2[j], &v2[j], kp);
			for (size_t j = 0; j < n; j++)
				ck_assert_msg(same_or_nans(m[j], m2[j]) &&
						      same_or_nans(v[j], v2[j]) &&
						      same_or_nans(w[j], w2[j]),
					      "%s round %d lane %zu", isas[i],
					      round, j);
		}
	}
	unsetenv("RBA_STRICT_ISA");
}
END_TEST

START_TEST(test_optimizer_steps)
{
	const struct kernel_ops *k = kernel_strict();
	struct kernel_adamw a;
	struct kernel_sgd s = { 0.0f, 0.9f, 0.1f };
	float w[19], g[19], m[19], v[19], buf[19];

	/* First AdamW step moves each weight by about lr * sign(g). */
	for (int i = 0; i < 19; i++) {
		w[i] = 1.0f;
		g[i] = i % 2 ? 0.5f : -2.0f;
		m[i] = v[i] = 0.0f;
	}
	a.b1 = 0.9f;
	a.omb1 = 1.0f - a.b1;
	a.b2 = 0.999f;
	a.omb2 = 1.0f - a.b2;
	a.decay = 1.0f;
	a.step_size = (float)(0.1 / (1.0 - 0.9));
	a.bc2sqrt = (float)sqrt(1.0 - 0.999);
	a.eps = 1e-8f;
	k->adamw(w, g, m, v, 19, &a);
	for (int i = 0; i < 19; i++) {
		ck_assert(fabsf(w[i] - (i % 2 ? 0.9f : 1.1f)) < 1e-5f);
		ck_assert(fabsf(m[i] - 0.1f * g[i]) < 1e-7f);
	}
	/* Decoupled decay: w (1 - lr wd) before the step, whatever g. */
	for (int i = 0; i < 19; i++) {
		w[i] = 1.0f;
		m[i] = v[i] = 0.0f;
	}
	a.decay = 1.0f - 0.1f * 0.5f;
	k->adamw(w, g, m, v, 19, &a);
	ck_assert(fabsf(w[1] - 0.85f) < 1e-5f);
	ck_assert(fabsf(w[0] - 1.05f) < 1e-5f);
	/* SGD with momentum: 1 -> 0.95 -> 0.855 for g = 0.5. */
	for (int i = 0; i < 19; i++) {
		w[i] = 1.0f;
		g[i] = 0.5f;
		buf[i] = 0.0f;
	}
	k->sgd(w, g, buf, 19, &s);
	ck_assert(w[18] == 1.0f - 0.1f * 0.5f);
	k->sgd(w, g, buf, 19, &s);
	ck_assert(fabsf(w[18] - 0.855f) < 1e-6f);
	ck_assert(fabsf(buf[0] - 0.95f) < 1e-6f);
	/* Coupled weight decay in SGD: g' = g + wd w. */
	w[0] = 2.0f;
	g[0] = 0.0f;
	buf[0] = 0.0f;
	s.wd = 0.5f;
	s.momentum = 0.0f;
	k->sgd(w, g, buf, 1, &s);
	ck_assert(w[0] == 2.0f - 0.1f * 1.0f);
}
END_TEST

/* Mean cross-entropy in double, straight from the definition. */
static double
ref_loss(const struct rebuild_model *m, const float *x, const uint32_t *y,
	 size_t n)
{
	double total = 0, a[64], z[64];

	for (size_t r = 0; r < n; r++) {
		size_t in = m->sizes[0];
		for (size_t k = 0; k < in; k++)
			a[k] = x[r * in + k];
		for (uint32_t l = 0; l < m->nlayers; l++) {
			size_t o = m->sizes[l + 1];
			in = m->sizes[l];
			for (size_t j = 0; j < o; j++) {
				double s = m->b[l][j];
				for (size_t k = 0; k < in; k++)
					s += a[k] * m->w[l][k * o + j];
				z[j] = l + 1 < m->nlayers && s < 0 ? 0 : s;
			}
			memcpy(a, z, o * sizeof(double));
		}
		double mx = a[0], se = 0;
		for (uint32_t c = 1; c < m->sizes[m->nlayers]; c++)
			mx = a[c] > mx ? a[c] : mx;
		for (uint32_t c = 0; c < m->sizes[m->nlayers]; c++)
			se += exp(a[c] - mx);
		total += log(se) + mx - a[y[r]];
	}
	return total / (double)n;
}

START_TEST(test_gradient_check)
{
	uint32_t sizes[] = { 5, 7, 6, 3 };
	struct rebuild_model m, g;
	struct rebuild_set set;
	float x[45 * 5];
	uint32_t y[45];
	double loss;
	int checked = 0;

	ck_assert_int_eq(rebuild_model_alloc(&m, 3, sizes), 0);
	for (uint32_t l = 0; l < 3; l++) {
		fill(m.w[l], (size_t)sizes[l] * sizes[l + 1], 10 + l);
		fill(m.b[l], sizes[l + 1], 20 + l);
	}
	fill(x, sizeof(x) / 4, 3);
	for (int i = 0; i < 45; i++)
		y[i] = (uint32_t)(i * 7 % 3);
	set = (struct rebuild_set){ 45, x, y, NULL };
	ck_assert_int_eq(rebuild_gradient(0, &m, &set, &g, &loss),
			 RBA_E_UNSUPPORTED);
	ck_assert_int_eq(rebuild_gradient(1, &m, &set, &g, &loss), 0);
	ck_assert(fabs(loss - ref_loss(&m, x, y, 45)) < 1e-5);
	for (uint32_t l = 0; l < 3; l++) {
		size_t nw = (size_t)sizes[l] * sizes[l + 1];
		for (size_t i = 0; i < nw + sizes[l + 1]; i++) {
			float *p = i < nw ? &m.w[l][i] : &m.b[l][i - nw];
			float an = i < nw ? g.w[l][i] : g.b[l][i - nw];
			float save = *p, h = 1e-3f;
			*p = save + h;
			double up = ref_loss(&m, x, y, 45);
			*p = save - h;
			double dn = ref_loss(&m, x, y, 45);
			*p = save;
			double num = (up - dn) / (2.0 * (double)h);
			ck_assert_msg(fabs(num - an) < 2e-3 + 2e-2 * fabs(num),
				      "layer %u param %zu: numeric %g analytic %g",
				      l, i, num, (double)an);
			checked++;
		}
	}
	ck_assert_int_gt(checked, 100);
	rebuild_model_release(&g);
	rebuild_model_release(&m);
}
END_TEST

static void
small_pins(struct pins *p)
{
	memset(p, 0, sizeof(*p));
	p->model.nhidden = 2;
	p->model.hidden[0] = 16;
	p->model.hidden[1] = 8;
	p->model.dropout = 0.3;
	p->train.epochs = 3;
	p->train.batch_size = 50; /* blocks of 32 + 18 */
	p->train.optimizer = PINS_OPT_ADAMW;
	p->train.lr = 0.02;
	p->train.weight_decay = 0.003;
	p->train.betas[0] = 0.9;
	p->train.betas[1] = 0.999;
	p->train.eps = 1e-8;
	p->determinism.mode = PINS_DET_STRICT;
	p->determinism.threads = 1;
}

static void
synth_set(size_t n, uint32_t feat, float **x, uint32_t **y)
{
	struct synth_params sp;

	synth_params_default(&sp);
	sp.rows = n;
	sp.features = feat;
	sp.classes = 3;
	*x = malloc(n * feat * sizeof(float));
	*y = malloc(n * sizeof(uint32_t));
	synth_generate(&sp, *x, *y);
}

static int
models_equal(const struct rebuild_model *a, const struct rebuild_model *b)
{
	if (a->nlayers != b->nlayers)
		return 0;
	for (uint32_t l = 0; l < a->nlayers; l++) {
		size_t nw = (size_t)a->sizes[l] * a->sizes[l + 1];
		if (memcmp(a->w[l], b->w[l], nw * 4) ||
		    memcmp(a->b[l], b->b[l], a->sizes[l + 1] * 4))
			return 0;
	}
	return 1;
}

/* The progress hook: each epoch once, in order, with the total. */
struct epochs_seen {
	uint32_t next, total;
	int bad;
};

static void
epoch_seen(void *ctx, uint32_t done, uint32_t total)
{
	struct epochs_seen *e = ctx;

	if (done != e->next + 1 || (e->total != 0 && total != e->total))
		e->bad = 1;
	e->next = done;
	e->total = total;
}

/*
 * ABI 2 (train/abi2.c, train/kernel_fma.c).  The soft fma, the base
 * path on x86-64, against the C library's fmaf (correctly rounded by
 * definition), on random operands of every exponent range and on the
 * edges: signed zeros, infinities, NaN, subnormals, exact ties.
 */
static int
fma_same(float a, float b)
{
	return (a != a && b != b) || fbits(a) == fbits(b);
}

static float
fma_operand(uint64_t u)
{
	static const float edge[] = { 0.0f, -0.0f, 1.0f, -1.0f, 0x1p-149f,
				      -0x1p-149f, 0x1p-126f, 0x1.fffffep127f,
				      __builtin_inff(), -__builtin_inff(),
				      __builtin_nanf(""), 0x1.000002p0f,
				      0x1.fffffep-1f, 3.0f };
	uint32_t bits = (uint32_t)u;
	float f;

	switch ((u >> 32) % 4) {
	case 0: /* anything, NaN and infinities included */
		memcpy(&f, &bits, 4);
		return f;
	case 1: /* near 1: products and sums that cancel and tie */
		return (1.0f + (float)(bits >> 9) * 0x1p-23f) *
		       ((u >> 40) & 1 ? -1.0f : 1.0f);
	case 2: /* the subnormal range */
		bits = (bits & 0x807fffffu) | (((u >> 40) % 3) << 23);
		memcpy(&f, &bits, 4);
		return f;
	default:
		return edge[(u >> 40) % (sizeof(edge) / sizeof(edge[0]))];
	}
}

START_TEST(test_fma_soft)
{
	uint64_t k = rng_key(7, 97, 0, 0);

	for (uint64_t i = 0; i < 3000000; i++) {
		float a = fma_operand(rng_u64(k, 3 * i));
		float b = fma_operand(rng_u64(k, 3 * i + 1));
		float c = fma_operand(rng_u64(k, 3 * i + 2));
		float want = fmaf(a, b, c), got = kernel_fmaf_soft(a, b, c);
		ck_assert_msg(fma_same(got, want), "fma(%a, %a, %a): %a, libm %a",
			      (double)a, (double)b, (double)c, (double)got,
			      (double)want);
	}
	/* a tie: 1 + 2^-24 rounds to even, 1 + 3 * 2^-24 up */
	ck_assert(kernel_fmaf_soft(0x1p-24f, 1.0f, 1.0f) == 1.0f);
	ck_assert(kernel_fmaf_soft(0x1p-24f, 3.0f, 1.0f) == 0x1.000004p0f);
	/* the one rounding: (1 + 2^-23)^2 - 1 keeps its 2^-46 */
	ck_assert(kernel_fmaf_soft(0x1.000002p0f, 0x1.000002p0f, -1.0f) ==
		  0x1p-22f + 0x1p-46f);
	/* double rounding: (1 + 2^-18)(1 - 2^-18) 2^-24 + (1 + 2^-23) lies
	 * 2^-60 below a float tie; rounded to double first it would be the
	 * tie and go to even, up */
	ck_assert(kernel_fmaf_soft(0x1.00004p0f, 0x1.ffff8p-25f, 0x1.000002p0f) ==
		  0x1.000002p0f);
	ck_assert(kernel_fmaf_soft(-0x1.00004p0f, 0x1.ffff8p-25f, -0x1.000002p0f) ==
		  -0x1.000002p0f);
	ck_assert((float)((double)0x1.00004p0f * 0x1.ffff8p-25f + 0x1.000002p0f) ==
		  0x1.000004p0f); /* the trap the test is for */
	ck_assert(fbits(kernel_fmaf_soft(-0.0f, 1.0f, -0.0f)) == fbits(-0.0f));
	ck_assert(fbits(kernel_fmaf_soft(0.0f, 1.0f, -0.0f)) == fbits(0.0f));
}
END_TEST

/* abi_zalloc64: on a 64-byte line, zeroed to the end of its last line,
 * at least one byte for none, and NULL (not a short block) when the
 * size overflows. */
START_TEST(test_zalloc64)
{
	static const size_t counts[] = { 0, 1, 3, 16, 17, 1000 };

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		size_t n = counts[i] * sizeof(float), lines = (n + 63) / 64;
		unsigned char *p = abi_zalloc64(counts[i], sizeof(float));
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % 64, 0);
		for (size_t b = 0; b < (lines ? lines : 1) * 64; b++)
			ck_assert_uint_eq(p[b], 0);
		free(p);
	}
	ck_assert_ptr_null(abi_zalloc64(SIZE_MAX / 2, 4));
	ck_assert_ptr_null(abi_zalloc64(SIZE_MAX - 10, 1));
	ck_assert_ptr_null(abi_zalloc64((SIZE_MAX - 63) / 8 + 1, 8));
}
END_TEST

/* The documented ABI 2 order, written the plain way with libm's fmaf. */
static void
fma_ref_linear(const float *x, size_t rows, size_t in, const float *w,
	       const float *b, size_t out, float *y)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < out; j++) {
			float s = b ? b[j] : 0.0f;
			for (size_t k = 0; k < in; k++)
				s = fmaf(x[r * in + k], w[k * out + j], s);
			y[r * out + j] = s;
		}
}

static void
fma_check_shape(const struct kernel_ops *ops, const char *isa, size_t rows,
		size_t in, size_t out, uint64_t seed)
{
	float *x = malloc(rows * in * 4), *w = malloc(in * out * 4),
	      *wt = malloc(in * out * 4), *b = malloc(out * 4),
	      *y = malloc(rows * out * 4), *want = malloc(rows * out * 4),
	      *dx = malloc(rows * in * 4), *wdx = malloc(rows * in * 4),
	      *dw = malloc(in * out * 4), *wdw = malloc(in * out * 4),
	      *xt = malloc(rows * in * 4), *db = malloc(out * 4);

	fill(x, rows * in, seed);
	fill(w, in * out, seed + 1);
	fill(b, out, seed + 2);
	x[0] = -0.0f;
	for (size_t k = 0; k < in; k++)
		for (size_t j = 0; j < out; j++)
			wt[j * in + k] = w[k * out + j];
	ops->linear(x, rows, in, w, b, out, y);
	fma_ref_linear(x, rows, in, w, b, out, want);
	for (size_t i = 0; i < rows * out; i++)
		ck_assert_msg(fbits(y[i]) == fbits(want[i]), "%s linear %zux%zux%zu [%zu]",
			      isa, rows, in, out, i);
	/* back_dx: dy (rows x out) times wt, from 0 */
	ops->back_dx(y, rows, out, w, wt, in, dx);
	fma_ref_linear(y, rows, out, wt, NULL, in, wdx);
	for (size_t i = 0; i < rows * in; i++)
		ck_assert_msg(fbits(dx[i]) == fbits(wdx[i]), "%s back_dx [%zu]", isa, i);
	/* back_dw: x^T dy in row order, db plain sums */
	ops->back_dw(x, y, rows, in, out, dw, db);
	for (size_t r = 0; r < rows; r++)
		for (size_t k = 0; k < in; k++)
			xt[k * rows + r] = x[r * in + k];
	fma_ref_linear(xt, in, rows, y, NULL, out, wdw);
	for (size_t i = 0; i < in * out; i++)
		ck_assert_msg(fbits(dw[i]) == fbits(wdw[i]), "%s back_dw [%zu]", isa, i);
	for (size_t j = 0; j < out; j++) {
		float s = 0.0f;
		for (size_t r = 0; r < rows; r++)
			s = s + y[r * out + j];
		ck_assert_msg(fbits(db[j]) == fbits(s), "%s db [%zu]", isa, j);
	}
	/* back_dx_mul: back_dx's sums, each rounded, times the gate; the
	 * gate holds 0, -0, the keep scale and 1 */
	for (size_t i = 0; i < rows * in; i++)
		xt[i] = (float[]){ 0.0f, 1.0f / 0.7f, -0.0f, 1.0f }[i % 4];
	ops->back_dx_mul(y, rows, out, wt, in, xt, dx);
	for (size_t i = 0; i < rows * in; i++)
		ck_assert_msg(fbits(dx[i]) == fbits(wdx[i] * xt[i]),
			      "%s back_dx_mul [%zu]", isa, i);
	/* back_dw_add: back_dw's sums added to what dw and db held */
	fill(dw, in * out, seed + 3);
	fill(want, out, seed + 4);
	memcpy(db, want, out * 4);
	memcpy(wt, dw, in * out * 4);
	ops->back_dw_add(x, y, rows, in, out, dw, db);
	for (size_t i = 0; i < in * out; i++)
		ck_assert_msg(fbits(dw[i]) == fbits(wt[i] + wdw[i]),
			      "%s back_dw_add [%zu]", isa, i);
	for (size_t j = 0; j < out; j++) {
		float s = 0.0f;
		for (size_t r = 0; r < rows; r++)
			s = s + y[r * out + j];
		ck_assert_msg(fbits(db[j]) == fbits(want[j] + s),
			      "%s back_dw_add db [%zu]", isa, j);
	}
	free(x), free(w), free(wt), free(b), free(y), free(want);
	free(dx), free(wdx), free(dw), free(wdw), free(xt), free(db);
}

/* Every ABI 2 path of this CPU (base: the soft fma on x86-64) gives the
 * documented fmas bit for bit, on shapes that reach every tile and tail. */
START_TEST(test_fma_kernels)
{
	static const size_t shapes[][3] = {
		{ 32, 32, 32 }, { 32, 32, 4 }, { 37, 13, 70 }, { 5, 1, 3 },
		{ 1, 40, 49 }, { 18, 7, 16 }, { 33, 64, 8 }, { 22, 45, 48 },
		{ 19, 21, 12 },
	};
	const char *isas[3];
	size_t nisa = kernel_fma_isas(isas);

	for (size_t a = 0; a < nisa; a++) {
		struct kernel_ops ops;
		ck_assert_int_eq(kernel_fma_path(isas[a], &ops), 0);
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
			fma_check_shape(&ops, isas[a], shapes[s][0], shapes[s][1],
					shapes[s][2], 40 + s);
	}
	ck_assert_int_eq(kernel_fma_path("sse9", &(struct kernel_ops){ 0 }), -1);
#if defined(__x86_64__)
	ck_assert_str_eq(isas[0], "base");
	setenv("RBA_STRICT_ISA", "base", 1);
	ck_assert_str_eq(kernel_fma_isa(), "base");
	unsetenv("RBA_STRICT_ISA");
#endif
}
END_TEST

/* ABI 2's dropout: kernel_drop16's draws on every path, whatever the
 * alignment of the first unit to its chunk of 32. */
START_TEST(test_fma_activate)
{
	static const uint32_t bases[] = { 0, 64, 1000, 31 };
	size_t n = 1037;
	float *z = malloc(n * 4), *h = malloc(n * 4), *g = malloc(n * 4);
	uint64_t key = rng_key(3, RNG_DROPOUT, 17, 1);
	uint32_t t = (uint32_t)(0.3 * 65536.0);
	float scale = 1.0f / (1.0f - 0.3f);
	const char *isas[3];
	size_t nisa = kernel_fma_isas(isas), kept;

	/* the chunk's order: unit 32c + l the low half of word 16c + l,
	 * unit 32c + 16 + l its high half */
	ck_assert_uint_eq(kernel_drop16(key, 69), rng_bits32(key, 37) & 0xFFFFu);
	ck_assert_uint_eq(kernel_drop16(key, 85), rng_bits32(key, 37) >> 16);
	for (size_t i = 0; i < n; i++)
		z[i] = i % 11 == 0 ? 0.0f : rng_uniformf(key, i) - 0.5f;
	for (size_t a = 0; a < nisa; a++) {
		struct kernel_ops ops;
		ck_assert_int_eq(kernel_fma_path(isas[a], &ops), 0);
		for (size_t bi = 0; bi < sizeof(bases) / sizeof(bases[0]); bi++) {
			uint32_t base = bases[bi];
			ops.activate(z, h, g, n, key, base, t, scale);
			kept = 0;
			for (size_t i = 0; i < n; i++) {
				int keep = kernel_drop16(key, base + (uint32_t)i) >= t;
				int on = z[i] > 0.0f && keep;
				ck_assert_msg(g[i] == (on ? scale : 0.0f), "%s g[%zu]",
					      isas[a], i);
				ck_assert_msg(fbits(h[i]) ==
						      fbits(on ? z[i] * scale : 0.0f),
					      "%s h[%zu]", isas[a], i);
				kept += keep;
			}
			ck_assert_msg(kept > 650 && kept < 800, "kept %zu", kept);
		}
		ops.activate(z, h, g, n, key, 0, 0, scale);
		for (size_t i = 0; i < n; i++) {
			ck_assert(g[i] == (z[i] > 0.0f ? 1.0f : 0.0f));
			ck_assert(fbits(h[i]) == fbits(z[i] > 0.0f ? z[i] : 0.0f));
		}
	}
	free(z);
	free(h);
	free(g);
}
END_TEST

/* Training under ABI 2: one model on every path (base without FMA
 * instructions on x86-64) and thread count, another than ABI 1's; its
 * sparse scorer gives its dense forward's bits. */
START_TEST(test_abi2_train)
{
	static const char *const paths[] = { "base", "avx2", "" };
	struct pins p;
	struct rebuild_model m1, m2, mp;
	struct rebuild_set tr, va;
	struct rba_detail d;
	struct rebuild_sparse *sp;
	float *x, *dense, *sparse, *tx;
	uint32_t *y, *row;

	synth_set(400, 10, &x, &y);
	tr = (struct rebuild_set){ 333, x, y, NULL };
	va = (struct rebuild_set){ 67, x + 333 * 10, y + 333, NULL };
	small_pins(&p);
	ck_assert_int_eq(rebuild_train(&p, 1, 10, 3, 0, &tr, &va, &m1, NULL, NULL, &d), 0);
	ck_assert_int_eq(rebuild_train(&p, 2, 10, 3, 0, &tr, &va, &m2, NULL, NULL, &d), 0);
	ck_assert(!models_equal(&m1, &m2));
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		setenv("RBA_STRICT_ISA", paths[i], 1);
		p.determinism.threads = (unsigned)i + 1;
		ck_assert_int_eq(rebuild_train(&p, 2, 10, 3, 0, &tr, &va, &mp, NULL,
					       NULL, &d), 0);
		ck_assert_msg(models_equal(&m2, &mp), "path '%s'", paths[i]);
		rebuild_model_release(&mp);
	}
	unsetenv("RBA_STRICT_ISA");
	/* the sparse scorer: every case's non-zero inputs as terms (all 10,
	 * zeros included, is what the interface asks: rows ascending) */
	dense = malloc(400 * 3 * 4);
	sparse = malloc(400 * 3 * 4);
	tx = malloc(400 * 10 * 4);
	row = malloc(400 * 10 * 4);
	for (size_t i = 0; i < 400; i++)
		for (uint32_t t = 0; t < 10; t++) {
			tx[i * 10 + t] = i % 5 == 0 && t % 3 == 0 ? 0.0f : x[i * 10 + t];
			row[i * 10 + t] = t;
		}
	ck_assert_int_eq(rebuild_predict(2, &m2, tx, 400, dense), 0);
	ck_assert_int_eq(rebuild_sparse_new(2, &m2, &sp), 0);
	rebuild_sparse_score(sp, tx, row, 10, 400, sparse);
	rebuild_sparse_free(sp);
	ck_assert(memcmp(dense, sparse, 400 * 3 * 4) == 0);
	free(dense), free(sparse), free(tx), free(row);
	rebuild_model_release(&m1);
	rebuild_model_release(&m2);
	free(x);
	free(y);
}
END_TEST

START_TEST(test_threads_invariant)
{
	struct pins p;
	struct rebuild_model m[4];
	struct rebuild_report rep;
	struct rebuild_set tr, va;
	struct rba_detail d;
	float *x;
	uint32_t *y;

	synth_set(400, 10, &x, &y);
	tr = (struct rebuild_set){ 333, x, y, NULL };
	va = (struct rebuild_set){ 67, x + 333 * 10, y + 333, NULL };
	small_pins(&p);
	for (unsigned t = 1; t <= 3; t++) {
		struct epochs_seen seen = { 0, 0, 0 };
		struct rebuild_progress prog = { epoch_seen, &seen };

		p.determinism.threads = t;
		/* A hook on some runs only: the models must still agree. */
		ck_assert_int_eq(rebuild_train(&p, 1, 10, 3, 0, &tr, &va,
					       &m[t - 1], &rep,
					       t == 2 ? &prog : NULL, &d),
				 0);
		if (t == 2)
			ck_assert(!seen.bad && seen.next == 3 && seen.total == 3);
		ck_assert(isfinite(rep.final.val_loss));
		ck_assert(isnan(rep.final.val_auc)); /* three classes */
		ck_assert_uint_eq(rep.epochs, 3);
		rebuild_report_release(&rep);
	}
	ck_assert(models_equal(&m[0], &m[1]));
	ck_assert(models_equal(&m[0], &m[2]));
	/* Another seed is another model; the same seed the same one. */
	p.train.seed = 1;
	p.determinism.threads = 1;
	ck_assert_int_eq(rebuild_train(&p, 0, 10, 3, 0, &tr, &va, &m[3], NULL, NULL, &d), 0);
	ck_assert(!models_equal(&m[0], &m[3]));
	/* Every vector path gives the same bits. */
	rebuild_model_release(&m[1]);
	rebuild_model_release(&m[2]);
	p.train.seed = 0;
	setenv("RBA_STRICT_ISA", "base", 1);
	ck_assert_int_eq(rebuild_train(&p, 1, 10, 3, 0, &tr, &va, &m[1], NULL, NULL, &d), 0);
	unsetenv("RBA_STRICT_ISA");
	ck_assert(models_equal(&m[0], &m[1]));
	/* SGD trains too, to other weights. */
	p.train.optimizer = PINS_OPT_SGD;
	p.train.momentum = 0.9;
	ck_assert_int_eq(rebuild_train(&p, 1, 10, 3, 0, &tr, &va, &m[2], NULL, NULL, &d), 0);
	ck_assert(!models_equal(&m[0], &m[2]));
	for (int i = 0; i < 4; i++)
		rebuild_model_release(&m[i]);
	free(x);
	free(y);
}
END_TEST

START_TEST(test_train_errors)
{
	struct pins p;
	struct rebuild_model m;
	struct rebuild_set tr, va;
	struct rba_detail d;
	float x[20] = { 0 };
	uint32_t y[10] = { 0, 1, 0, 1, 0, 1, 0, 1, 0, 5 };

	small_pins(&p);
	tr = (struct rebuild_set){ 9, x, y, NULL };
	va = (struct rebuild_set){ 0, x, y, NULL };
	rba_detail_clear(&d);
	ck_assert_int_eq(rebuild_train(&p, 3, 2, 2, 1, &tr, &va, &m, NULL, NULL, &d),
			 RBA_E_UNSUPPORTED);
	ck_assert(strstr(d.reason, "ABI 3") != NULL);
	ck_assert(strstr(d.reason, "1 to 2") != NULL);
	ck_assert(!rebuild_abi_supported(0) && rebuild_abi_supported(1) &&
		  rebuild_abi_supported(2) && !rebuild_abi_supported(3));
	/* ABI 2 exists, ABI 1 stays the default */
	ck_assert_uint_eq(rebuild_abi_current(), 1);
	ck_assert_uint_eq(rebuild_abi_max(), 2);
	ck_assert_int_eq(rebuild_train(&p, 1, 2, 1, 0, &tr, &va, &m, NULL, NULL, &d),
			 RBA_E_RANGE);
	tr.n = 10; /* label 5 out of range */
	ck_assert_int_eq(rebuild_train(&p, 1, 2, 2, 1, &tr, &va, &m, NULL, NULL, &d),
			 RBA_E_RANGE);
	tr.n = 0;
	ck_assert_int_eq(rebuild_train(&p, 1, 2, 2, 1, &tr, &va, &m, NULL, NULL, &d),
			 RBA_E_RANGE);
	/* Divergence is reported, not hidden. */
	float big[40];
	uint32_t yy[20];
	for (int i = 0; i < 20; i++) {
		big[2 * i] = i % 2 ? 3e38f : -3e38f;
		big[2 * i + 1] = 1.0f;
		yy[i] = (uint32_t)(i % 2);
	}
	tr = (struct rebuild_set){ 20, big, yy, NULL };
	p.train.lr = 1e30;
	ck_assert_int_eq(rebuild_train(&p, 1, 2, 2, 1, &tr, &va, &m, NULL, NULL, &d),
			 RBA_E_NUMERIC);
}
END_TEST

START_TEST(test_auc)
{
	float s[] = { 0.1f, 0.4f, 0.35f, 0.8f };
	uint8_t p[] = { 0, 0, 1, 1 };
	float t[] = { 0.5f, 0.5f, 0.5f, 0.5f };
	double auc;

	ck_assert_int_eq(rebuild_auc(s, p, 4, &auc), 0);
	ck_assert(fabs(auc - 0.75) < 1e-12);
	ck_assert_int_eq(rebuild_auc(t, p, 4, &auc), 0);
	ck_assert(fabs(auc - 0.5) < 1e-12);
	p[2] = p[3] = 0;
	ck_assert_int_eq(rebuild_auc(s, p, 4, &auc), 0);
	ck_assert(isnan(auc));
}
END_TEST

static const char small_csv[] =
	"id,colour,size,note,class\n"
	"1,b,1.5,x,yes\n"
	"2,B,2.5,y,no\n"
	"3,a,3.5,x,yes\n"
	"4,\xc3\xa9,4.5,y,no\n"
	"5,10,5.5,x,yes\n"
	"6,9,6.5,y,no\n"
	"7,b,7.5,x,yes\n"
	"8,a,8.5,y,no\n";

static void
pins_for_small(struct pins *p, char **cat, char **excl)
{
	small_pins(p);
	p->data.label = "class";
	p->data.positive = "yes";
	p->data.id = "id";
	cat[0] = "colour";
	p->data.categorical = cat;
	p->data.ncategorical = 1;
	excl[0] = "note";
	p->data.exclude = excl;
	p->data.nexclude = 1;
	p->data.standardize = 1;
	p->data.split_validation = 0.25;
	p->data.split_order = PINS_SPLIT_RANDOM;
}

/*
 * encode_fit_consume gives encode_fit's spec and rows bit for bit on a
 * table large enough for its numbers to be a mapping (gives them back
 * as it goes: the first rows' numbers read as zeros after, their texts
 * stay), with blanks, and on a small one (nothing given back).
 */
START_TEST(test_encode_fit_consume)
{
	static const size_t sizes[] = { 200000, 7 };

	for (size_t k = 0; k < 2; k++) {
		size_t rows = sizes[k];
		struct rba_buf csv;
		struct csv_table *a, *b;
		struct csv_missing m;
		struct pins p;
		struct encode_spec sa, sb;
		struct encode_data da, db;
		struct rba_detail d;

		rba_buf_init(&csv);
		rba_buf_printf(&csv, "id,u,v,w,z,class\n");
		for (size_t i = 0; i < rows; i++)
			rba_buf_printf(&csv, "%zu,%zu.5,%s,%zu,-%zu,%s\n", i + 1,
				       i % 977, i % 10 == 3 ? "" : "2.25",
				       (i * 7919) % 100003, i % 13,
				       (i * 31) % 7 < 3 ? "yes" : "no");
		ck_assert_int_eq(rba_buf_status(&csv), 0);
		small_pins(&p);
		p.model.kind = PINS_MODEL_GBDT;
		p.data.label = "class";
		p.data.positive = "yes";
		p.data.id = "id";
		p.data.split_validation = 0.25;
		m.tok = pins_missing_tokens(&p, &m.n);
		ck_assert_int_eq(csv_table_load_mem_missing(csv.p, csv.len, "c.csv",
							    &m, &a, &d), 0);
		ck_assert_int_eq(csv_table_load_mem_missing(csv.p, csv.len, "c.csv",
							    &m, &b, &d), 0);
		ck_assert_int_eq(encode_fit(&p, a, &sa, &da, &d), 0);
		ck_assert_int_eq(encode_fit_consume(&p, b, &sb, &db, &d), 0);
		ck_assert_uint_eq(sa.nfeatures, 4);
		ck_assert_uint_eq(sb.nfeatures, 4);
		ck_assert_uint_eq(da.n, rows);
		ck_assert_uint_eq(db.n, rows);
		ck_assert(memcmp(da.x, db.x, rows * 4 * sizeof(float)) == 0);
		ck_assert(memcmp(da.y, db.y, rows * sizeof(uint32_t)) == 0);
		ck_assert(da.x[3 * 4 + 1] != da.x[3 * 4 + 1]); /* the blank: NaN */
		{
			size_t cn;
			const char *cell = csv_table_cell(b, 1, 1, &cn);
			ck_assert(cn == 3 && memcmp(cell, "1.5", 3) == 0);
		}
		ck_assert(a->num[1 * a->ncols + 1] == 1.5f);
#ifdef __linux__
		/* a mapping's numbers went back; a small table's stay */
		ck_assert(b->num[1 * b->ncols + 1] == (k == 0 ? 0.0f : 1.5f));
#endif
		encode_spec_release(&sa);
		encode_spec_release(&sb);
		encode_data_release(&da);
		encode_data_release(&db);
		csv_table_free(a);
		csv_table_free(b);
		rba_buf_release(&csv);
	}
}
END_TEST

START_TEST(test_encoder)
{
	struct csv_table *t;
	struct pins p;
	struct encode_spec s;
	struct encode_data data;
	struct rba_detail d;
	struct rba_buf name;
	char *cat[1], *excl[1];
	static const char *const levels[] = { "10", "9", "B", "a", "b", "\xc3\xa9" };

	ck_assert_int_eq(csv_table_load_mem(small_csv, strlen(small_csv), "s.csv",
					    &t, &d),
			 0);
	pins_for_small(&p, cat, excl);
	ck_assert_int_eq(encode_fit(&p, t, &s, &data, &d), 0);
	ck_assert_uint_eq(s.nclasses, 2);
	ck_assert_str_eq(s.classes[0], "no");
	ck_assert_str_eq(s.classes[1], "yes");
	ck_assert_uint_eq(s.positive, 1);
	ck_assert_uint_eq(s.ncolumns, 2);
	ck_assert_str_eq(s.columns[0].name, "colour");
	ck_assert_uint_eq(s.columns[0].nlevels, 6);
	for (int i = 0; i < 6; i++) /* bytewise order */
		ck_assert_str_eq(s.columns[0].levels[i], levels[i]);
	ck_assert_uint_eq(s.nfeatures, 7);
	rba_buf_init(&name);
	encode_feature_name(&s, 3, &name);
	ck_assert_str_eq(rba_buf_cstr(&name), "colour=a");
	rba_buf_release(&name);
	/* row 4 is colour=é, size 4.5, class no */
	ck_assert(data.x[3 * 7 + 5] == 1.0f && data.x[3 * 7 + 6] == 4.5f);
	ck_assert_uint_eq(data.y[3], 0);
	/* standardization from chosen rows: numeric only */
	size_t idx[] = { 0, 1, 2, 3 };
	encode_standardize_fit(&s, &data, idx, 4, 1);
	ck_assert(s.mean[6] == 3.0f);
	ck_assert(fabsf(s.scale[6] - (float)sqrt(1.25)) == 0.0f);
	ck_assert(s.mean[0] == 0.0f && s.scale[0] == 1.0f);
	/* encoding a case: known level, unknown level, bad number */
	const char *ok[] = { "9", "2" };
	const char *unknown[] = { "c", "2" };
	const char *nan_[] = { "a", "two" };
	float x[7];
	ck_assert_int_eq(encode_values(&s, ok, x, &d), 0);
	ck_assert(x[1] == 1.0f && x[6] == 2.0f && x[0] == 0.0f);
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_values(&s, unknown, x, &d), RBA_E_SCHEMA);
	ck_assert(strstr(d.reason, "unknown level 'c'") != NULL);
	ck_assert_str_eq(d.key, "colour");
	ck_assert_int_eq(encode_values(&s, nan_, x, &d), RBA_E_SCHEMA);
	/* the table path finds columns by name and reports the line */
	static const char cases[] = "size,colour\n1,a\n2,zz\n";
	struct csv_table *ct;
	float cx[14];
	ck_assert_int_eq(csv_table_load_mem(cases, strlen(cases), "c.csv", &ct, &d), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_table(&s, ct, cx, &d), RBA_E_SCHEMA);
	ck_assert_uint_eq(d.line, 3);
	csv_table_free(ct);
	encode_spec_release(&s);
	encode_data_release(&data);

	/* errors: undeclared text column, missing column, bad positive */
	p.data.nexclude = 0;
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_fit(&p, t, &s, &data, &d), RBA_E_SCHEMA);
	ck_assert(strstr(d.reason, "'note' is not numeric") != NULL);
	ck_assert_uint_eq(d.line, 2);
	p.data.nexclude = 1;
	excl[0] = "missing";
	ck_assert_int_eq(encode_fit(&p, t, &s, &data, &d), RBA_E_SCHEMA);
	ck_assert(strstr(d.reason, "'missing'") != NULL);
	excl[0] = "note";
	p.data.positive = "maybe";
	ck_assert_int_eq(encode_fit(&p, t, &s, &data, &d), RBA_E_SCHEMA);
	p.data.positive = NULL;
	p.data.label = "id"; /* label is also the id */
	ck_assert_int_eq(encode_fit(&p, t, &s, &data, &d), RBA_E_SCHEMA);
	csv_table_free(t);
}
END_TEST

/* the float n places after v in float order (n may be negative) */
static float
float_step(float v, int n)
{
	uint32_t u, o;

	memcpy(&u, &v, sizeof(u));
	o = u & 0x80000000u ? ~u : u | 0x80000000u;
	o += (uint32_t)n;
	u = o & 0x80000000u ? o & 0x7fffffffu : ~o;
	memcpy(&v, &u, sizeof(v));
	return v;
}

/*
 * encode_raw_threshold and encode_raw_bounds against encode_standardize
 * itself: for standardizations of every kind (identity, wide, narrow,
 * huge mean, subnormal scale) and thresholds at, near and far from the
 * values, every raw value within the bounds goes below t' exactly when
 * its standardized value goes below t, the bounds are the edges of the
 * finite, and a scale that is not positive and finite is refused.
 */
START_TEST(test_encode_raw_thresholds)
{
	static const float ms[][2] = {
		{ 0.0f, 1.0f },	     { 3.5f, 0.001f },	  { -2.25f, 7.5f },
		{ 12345.678f, 0.37f }, { -1e30f, 1e-5f },  { 1e-40f, 1e-38f },
		{ 0.0f, 1e-45f },    { 5e37f, 3e-3f },	  { -0.0f, 3.0f },
		{ 0.1f, 1e20f },
	};
	struct encode_spec s;
	uint64_t st = 20261205;
	float mean, scale, lo, hi;
	long checked = 0;

	memset(&s, 0, sizeof(s));
	s.nfeatures = 1;
	s.mean = &mean;
	s.scale = &scale;
	for (size_t c = 0; c < sizeof(ms) / sizeof(ms[0]); c++) {
		float ts[64], vs[96];
		size_t nt = 0, nv = 0;
		mean = ms[c][0];
		scale = ms[c][1];
		ck_assert_int_eq(encode_raw_bounds(&s, 0, &lo, &hi), 0);
		ck_assert(lo <= hi);
		/* the edges of the finite */
		float xl, xh, xo;
		encode_standardize(&s, &lo, 1, &xl);
		encode_standardize(&s, &hi, 1, &xh);
		ck_assert(isfinite(xl) && isfinite(xh));
		if (lo > -FLT_MAX) {
			float b = float_step(lo, -1);
			encode_standardize(&s, &b, 1, &xo);
			ck_assert(!isfinite(xo));
		}
		if (hi < FLT_MAX) {
			float b = float_step(hi, 1);
			encode_standardize(&s, &b, 1, &xo);
			ck_assert(!isfinite(xo));
		}
		/* thresholds: special ones, and the x of values about */
		ts[nt++] = 0.0f;
		ts[nt++] = -0.0f;
		ts[nt++] = INFINITY;
		ts[nt++] = -INFINITY;
		ts[nt++] = NAN;
		ts[nt++] = FLT_MAX;
		ts[nt++] = -FLT_MAX;
		ts[nt++] = xl;
		ts[nt++] = xh;
		while (nt < 64) {
			uint32_t r = (uint32_t)(rng_mix64(st++) >> 32);
			float v = lo + (hi - lo) * ((float)(r >> 8) / 16777216.0f), x;
			if (!isfinite(v))
				v = (float)(r % 2001) - 1000.0f;
			encode_standardize(&s, &v, 1, &x);
			ts[nt++] = float_step(x, (int)(r % 5) - 2);
		}
		for (size_t i = 0; i < nt; i++) {
			float t = ts[i], tr = encode_raw_threshold(&s, 0, t);
			if (t != t) {
				ck_assert(tr != tr);
				continue;
			}
			/* the values: around t', the bounds, zeros, random */
			nv = 0;
			for (int k = -3; k <= 3; k++)
				if (isfinite(tr))
					vs[nv++] = float_step(tr, k);
			vs[nv++] = lo;
			vs[nv++] = hi;
			vs[nv++] = 0.0f;
			vs[nv++] = -0.0f;
			vs[nv++] = mean;
			while (nv < 96) {
				uint32_t r = (uint32_t)(rng_mix64(st++) >> 32);
				uint32_t u = r & 0x7f7fffffu; /* finite */
				float v;
				memcpy(&v, &u, sizeof(v));
				vs[nv++] = (r & 1) ? v : (float)(r % 4001) / 8.0f - 250.0f;
			}
			for (size_t j = 0; j < nv; j++) {
				float v = vs[j], x;
				if (!(v >= lo && v <= hi))
					continue;
				encode_standardize(&s, &v, 1, &x);
				ck_assert_msg((v < tr) == (x < t),
					      "mean %g scale %g t %a: v %a (x %a) "
					      "against t' %a", (double)mean,
					      (double)scale, (double)t,
					      (double)v, (double)x, (double)tr);
				checked++;
			}
		}
	}
	ck_assert_int_gt(checked, 10000);
	/* refused: a scale not above 0, or not finite; a mean not finite */
	mean = 0.0f;
	scale = 0.0f;
	ck_assert_int_eq(encode_raw_bounds(&s, 0, &lo, &hi), -1);
	scale = -1.0f;
	ck_assert_int_eq(encode_raw_bounds(&s, 0, &lo, &hi), -1);
	scale = INFINITY;
	ck_assert_int_eq(encode_raw_bounds(&s, 0, &lo, &hi), -1);
	scale = 1.0f;
	mean = NAN;
	ck_assert_int_eq(encode_raw_bounds(&s, 0, &lo, &hi), -1);
}
END_TEST

/* Twelve rows of a column of small spread (sd 0.497 over the first
 * nine, the training rows of a tail split of 0.25); the row at line
 * big_line holds big (NULL: none).  The text, in *b, is the caller's to
 * release after the table. */
static struct csv_table *
spread_table(unsigned long big_line, const char *big, struct rba_buf *b)
{
	struct csv_table *t = NULL;
	struct rba_detail d;

	rba_buf_init(b);
	rba_buf_printf(b, "id,size,class\n");
	for (unsigned long r = 1; r <= 12; r++)
		rba_buf_printf(b, "%lu,%s,%s\n", r,
			       r + 1 == big_line ? big : r % 2 ? "1" : "2",
			       r % 2 ? "yes" : "no");
	ck_assert_int_eq(rba_buf_status(b), 0);
	ck_assert_int_eq(csv_table_load_mem(b->p, b->len, "w.csv", &t, &d), 0);
	return t;
}

/*
 * small_pins for spread_table (label class, id id, standardized, a tail
 * split of a quarter), the table in *t (its text in tb) and its spec
 * and data fitted.
 */
static void
spread_fit(struct pins *p, struct csv_table **t, struct rba_buf *tb,
	   struct encode_spec *s, struct encode_data *data)
{
	struct rba_detail d;

	small_pins(p);
	p->data.label = "class";
	p->data.id = "id";
	p->data.standardize = 1;
	p->data.split_validation = 0.25;
	p->data.split_order = PINS_SPLIT_TAIL;
	*t = spread_table(0, NULL, tb);
	ck_assert_int_eq(encode_fit(p, *t, s, data, &d), 0);
}

/* What spread_fit and encode_split made, released. */
static void
spread_release(size_t *tr, size_t *va, struct encode_spec *s,
	       struct encode_data *data, struct csv_table *t, struct rba_buf *tb)
{
	free(tr);
	free(va);
	encode_spec_release(s);
	encode_data_release(data);
	csv_table_free(t);
	rba_buf_release(tb);
}

/*
 * encode_table of a table of numbers alone takes each row from the
 * table's numbers: encode_values's features bit for bit (-0, tiny, large
 * and negative values), a missing value imputed as encode_values imputes
 * it, and a value the standardization cannot take refused at its line.
 */
START_TEST(test_encode_table_numbers)
{
	static char na[] = "NA";
	static char *tok[] = { na };
	static const char *const toks[] = { "NA" };
	static const char *const vals[] = { "1.5", "-0", "NA", "1e-30",
					    "123456789", "-7.25e3" };
	static const char cases[] = "size,id\n1.5,1\n-0,2\nNA,3\n1e-30,4\n"
				    "123456789,5\n-7.25e3,6\n";
	static const char bad[] = "size\n1\nNA\n3.4e38\n";
	const struct csv_missing m = { 1, toks };
	struct csv_table *t, *ct;
	struct pins p;
	struct encode_spec s;
	struct encode_data data;
	struct rba_detail d;
	struct rba_buf tb;
	size_t *tr, *va, ntr, nva;
	float cx[6], x, imp = -2.5f;

	spread_fit(&p, &t, &tb, &s, &data);
	ck_assert_int_eq(encode_split(&p, data.n, &tr, &ntr, &va, &nva), 0);
	encode_standardize_fit(&s, &data, tr, ntr, 1);
	ck_assert_uint_eq(s.ncolumns, 1);
	s.nmissing = 1;
	s.missing = tok;
	s.impute = &imp;
	ck_assert_int_eq(csv_table_load_mem_missing(cases, strlen(cases), "c.csv",
						    &m, &ct, &d), 0);
	ck_assert_int_eq(encode_table(&s, ct, cx, &d), 0);
	for (size_t r = 0; r < 6; r++) {
		ck_assert_int_eq(encode_values(&s, &vals[r], &x, &d), 0);
		ck_assert_msg(memcmp(&cx[r], &x, sizeof(x)) == 0,
			      "row %zu: %a, encode_values %a", r, (double)cx[r],
			      (double)x);
	}
	ck_assert(cx[2] == imp);
	ck_assert(signbit(cx[1]));
	csv_table_free(ct);
	/* the refused value after a missing one: its line, as before */
	ck_assert_int_eq(csv_table_load_mem_missing(bad, strlen(bad), "c.csv", &m,
						    &ct, &d), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_table(&s, ct, cx, &d), RBA_E_SCHEMA);
	ck_assert_uint_eq(d.line, 4);
	ck_assert_str_eq(d.key, "size");
	csv_table_free(ct);
	s.nmissing = 0;
	s.missing = NULL;
	s.impute = NULL;
	spread_release(tr, va, &s, &data, t, &tb);
}
END_TEST

/*
 * A finite float32 the standardization takes beyond float32 (3.4e38 in
 * a column of scale 0.497) is refused where a case is encoded for scoring,
 * with the column and the place, and in training data where the split's
 * standardization would take it there; what standardizes to a finite
 * value is taken as before.
 */
START_TEST(test_encode_range)
{
	static const char why[] = "column 'size': value '3.4e38' is beyond what "
				  "the model's standardization can take";
	struct csv_table *t;
	struct pins p;
	struct encode_spec s;
	struct encode_data data;
	struct rba_detail d;
	size_t *tr, *va, ntr, nva;
	float x[1];
	const char *big[] = { "3.4e38" }, *fine[] = { "3.4e30" };
	const unsigned long cols[] = { 5 };
	struct rba_buf tb;

	spread_fit(&p, &t, &tb, &s, &data);
	ck_assert(s.mean[0] == 0.0f && s.scale[0] == 1.0f); /* as documented */
	ck_assert_int_eq(encode_split(&p, data.n, &tr, &ntr, &va, &nva), 0);
	encode_standardize_fit(&s, &data, tr, ntr, 1);
	ck_assert(s.scale[0] > 0.4f && s.scale[0] < 0.5f);
	/* scoring: refused, with the column, and where when told */
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_values(&s, big, x, &d), RBA_E_SCHEMA);
	ck_assert_str_eq(d.reason, why);
	ck_assert_str_eq(d.key, "size");
	ck_assert_uint_eq(d.line, 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_values_at(&s, big, "c.csv", 7, cols, x, &d),
			 RBA_E_SCHEMA);
	ck_assert_str_eq(d.file, "c.csv");
	ck_assert_uint_eq(d.line, 7);
	ck_assert_uint_eq(d.col, 5);
	ck_assert_str_eq(d.reason, why);
	ck_assert_int_eq(encode_values_at(&s, fine, "c.csv", 7, cols, x, &d), 0);
	ck_assert(x[0] == 3.4e30f);
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_standardize_check(&s, 0, 3.4e38f, NULL, NULL, 0,
						  0, &d),
			 RBA_E_SCHEMA);
	ck_assert_str_eq(d.reason, "column 'size': value '3.39999995e+38' is "
				   "beyond what the model's standardization "
				   "can take");
	ck_assert_int_eq(encode_standardize_check(&s, 0, -3.4e38f, NULL, NULL, 0,
						  0, NULL),
			 RBA_E_SCHEMA);
	ck_assert_int_eq(encode_standardize_check(&s, 0, 1e38f, NULL, NULL, 0,
						  0, NULL),
			 0);
	/* the whole-table path: the line */
	static const char cases[] = "size\n1\n3.4e38\n";
	struct csv_table *ct;
	float cx[2];
	ck_assert_int_eq(csv_table_load_mem(cases, strlen(cases), "c.csv", &ct, &d), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_table(&s, ct, cx, &d), RBA_E_SCHEMA);
	ck_assert_uint_eq(d.line, 3);
	ck_assert_str_eq(d.reason, why);
	csv_table_free(ct);
	/* unstandardized, every finite float32 is taken */
	s.mean[0] = 0.0f;
	s.scale[0] = 1.0f;
	ck_assert_int_eq(encode_values(&s, big, x, &d), 0);
	spread_release(tr, va, &s, &data, t, &tb);

	/* training: 3.4e38 in a validation row (line 12), scaled by the
	 * training rows' 0.497: refused at its line, nothing kept */
	t = spread_table(12, "3.4e38", &tb);
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_fit(&p, t, &s, &data, &d), RBA_E_SCHEMA);
	ck_assert_str_eq(d.file, "w.csv");
	ck_assert_uint_eq(d.line, 12);
	ck_assert_str_eq(d.reason, why);
	ck_assert_str_eq(d.key, "size");
	ck_assert_ptr_null(s.mean);
	ck_assert_ptr_null(data.x);
	p.data.standardize = 0; /* raw inputs: finite as read */
	ck_assert_int_eq(encode_fit(&p, t, &s, &data, &d), 0);
	encode_spec_release(&s);
	encode_data_release(&data);
	csv_table_free(t);
	rba_buf_release(&tb);
	/* in a training row it widens its own scale: taken */
	p.data.standardize = 1;
	t = spread_table(3, "3.4e38", &tb);
	ck_assert_int_eq(encode_fit(&p, t, &s, &data, &d), 0);
	encode_spec_release(&s);
	encode_data_release(&data);
	csv_table_free(t);
	rba_buf_release(&tb);
}
END_TEST

START_TEST(test_split)
{
	struct pins p;
	size_t *tr, *va, ntr, nva, *tr2, *va2, ntr2, nva2;
	char *cat[1], *excl[1];

	pins_for_small(&p, cat, excl);
	p.data.split_seed = 3;
	ck_assert_int_eq(encode_split(&p, 1000, &tr, &ntr, &va, &nva), 0);
	ck_assert_uint_eq(nva, 250);
	ck_assert_uint_eq(ntr, 750);
	ck_assert_int_eq(encode_split(&p, 1000, &tr2, &ntr2, &va2, &nva2), 0);
	ck_assert(memcmp(va, va2, nva * sizeof(size_t)) == 0);
	ck_assert(memcmp(tr, tr2, ntr * sizeof(size_t)) == 0);
	/* ascending, disjoint, complete */
	char *seen = calloc(1000, 1);
	for (size_t i = 0; i < nva; i++) {
		ck_assert(i == 0 || va[i] > va[i - 1]);
		seen[va[i]]++;
	}
	for (size_t i = 0; i < ntr; i++) {
		ck_assert(i == 0 || tr[i] > tr[i - 1]);
		seen[tr[i]]++;
	}
	for (size_t i = 0; i < 1000; i++)
		ck_assert_int_eq(seen[i], 1);
	free(seen);
	free(tr2);
	free(va2);
	p.data.split_seed = 4;
	ck_assert_int_eq(encode_split(&p, 1000, &tr2, &ntr2, &va2, &nva2), 0);
	ck_assert(memcmp(va, va2, nva * sizeof(size_t)) != 0);
	free(tr);
	free(va);
	free(tr2);
	free(va2);
	p.data.split_order = PINS_SPLIT_TAIL;
	p.data.split_validation = 0.3;
	ck_assert_int_eq(encode_split(&p, 10, &tr, &ntr, &va, &nva), 0);
	ck_assert_uint_eq(nva, 3);
	ck_assert_uint_eq(va[0], 7);
	ck_assert_uint_eq(tr[6], 6);
	free(tr);
	free(va);
	/* Either side holds at least ENCODE_MIN_SPLIT_ROWS rows, or the
	 * split is refused (it was clamped to one row). */
	p.data.split_validation = 0.01;
	ck_assert_int_eq(encode_split(&p, 2, &tr, &ntr, &va, &nva), RBA_E_RANGE);
	ck_assert_int_eq(encode_split(&p, 100, &tr, &ntr, &va, &nva), RBA_E_RANGE);
	ck_assert_int_eq(encode_split(&p, 300, &tr, &ntr, &va, &nva), 0);
	ck_assert_uint_eq(nva, ENCODE_MIN_SPLIT_ROWS);
	free(tr);
	free(va);
	p.data.split_validation = 0.5;
	ck_assert_int_eq(encode_split(&p, 2 * ENCODE_MIN_SPLIT_ROWS, &tr, &ntr, &va,
				      &nva), 0);
	ck_assert_uint_eq(ntr, ENCODE_MIN_SPLIT_ROWS);
	free(tr);
	free(va);
	ck_assert_int_eq(encode_split(&p, 2 * ENCODE_MIN_SPLIT_ROWS - 1, &tr, &ntr,
				      &va, &nva), RBA_E_RANGE);
	p.data.split_validation = 0.99;
	ck_assert_int_eq(encode_split(&p, 100, &tr, &ntr, &va, &nva), RBA_E_RANGE);
	ck_assert_int_eq(encode_split(&p, 1, &tr, &ntr, &va, &nva), RBA_E_RANGE);
}
END_TEST

START_TEST(test_synth)
{
	struct synth_params sp;
	struct rba_buf a, b;
	struct rba_detail d;
	float *x;
	uint32_t *y;
	int counts[4] = { 0 };

	synth_params_default(&sp);
	sp.rows = 500;
	x = malloc(500 * 32 * sizeof(float));
	y = malloc(500 * sizeof(uint32_t));
	synth_generate(&sp, x, y);
	for (int i = 0; i < 500; i++) {
		ck_assert_uint_lt(y[i], 4);
		counts[y[i]]++;
	}
	for (int c = 0; c < 4; c++)
		ck_assert_int_gt(counts[c], 60);
	rba_buf_init(&a);
	rba_buf_init(&b);
	ck_assert_int_eq(synth_csv(&sp, &a, &d), 0);
	ck_assert_int_eq(synth_csv(&sp, &b, &d), 0);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert(memcmp(a.p, b.p, a.len) == 0);
	/* %.9g round-trips every float exactly */
	const char *s = rba_buf_cstr(&a);
	s = strchr(s, '\n') + 1;
	for (int f = 0; f < 32; f++) {
		char *end;
		float v = strtof(s, &end);
		ck_assert(fbits(v) == fbits(x[f]));
		s = end + 1;
	}
	ck_assert(strncmp(rba_buf_cstr(&a), "x1,x2,", 6) == 0);
	/* noise 0 and 1 give other labels; seeds differ */
	uint32_t *y2 = malloc(500 * sizeof(uint32_t));
	sp.noise = 0.0;
	synth_generate(&sp, x, y2);
	int diff = 0;
	for (int i = 0; i < 500; i++)
		diff += y[i] != y2[i];
	/* about 30% x 3/4 of the labels were replaced by other classes */
	ck_assert_msg(diff > 70 && diff < 160, "%d labels differ", diff);
	sp.rows = 0;
	rba_detail_clear(&d);
	ck_assert_int_eq(synth_check(&sp, &d), RBA_E_RANGE);
	ck_assert_str_eq(d.key, "rows");
	sp.rows = 10;
	sp.noise = 1.5;
	ck_assert_int_eq(synth_check(&sp, &d), RBA_E_RANGE);
	sp.noise = 0.3;
	sp.classes = 1;
	ck_assert_int_eq(synth_check(&sp, &d), RBA_E_RANGE);
	rba_buf_release(&a);
	rba_buf_release(&b);
	free(x);
	free(y);
	free(y2);
}
END_TEST

START_TEST(test_envrec)
{
	struct rba_buf s, f;
	struct envrec rs, rf, bad;
	struct envrec_delta *dl;
	struct rba_detail d;
	size_t n;

	rba_buf_init(&s);
	rba_buf_init(&f);
	ck_assert_int_eq(envrec_capture(PINS_DET_STRICT, 1, &s), 0);
	ck_assert_int_eq(envrec_capture(PINS_DET_FAST, 2, &f), 0);
	ck_assert_int_eq(envrec_parse((char *)s.p, s.len, &rs, &d), 0);
	ck_assert_int_eq(envrec_parse((char *)f.p, f.len, &rf, &d), 0);
	ck_assert_str_eq(envrec_get(&rs, "determinism.mode"), "strict");
	ck_assert_str_eq(envrec_get(&rs, "openblas.threads"), "unused");
	ck_assert_str_eq(envrec_get(&rs, "tool.version"), RBA_TOOL_VERSION);
	ck_assert_str_eq(envrec_get(&rs, "abi.trainer"), "1");
	ck_assert_ptr_nonnull(envrec_get(&rs, "lib.libsodium"));
	ck_assert_ptr_nonnull(envrec_get(&rs, "cpu.model"));
	ck_assert_ptr_null(envrec_get(&rs, "nope"));
	/* fast mode differs exactly where it should */
	ck_assert_int_eq(envrec_diff(&rs, &rf, &dl, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(dl[0].key, "determinism.mode");
	ck_assert_str_eq(dl[1].key, "determinism.threads");
	ck_assert_str_eq(dl[2].key, "openblas.threads");
	ck_assert_str_eq(dl[2].new_value, "2");
	ck_assert_int_eq(dl[0].change, ENVREC_CHANGED);
	free(dl);
	/* added and removed keys */
	static const char a[] = "a.x=1\nb.y=2\nc.z=3\n", b[] = "b.y=2\nc.z=4\nd.w=5\n";
	struct envrec ra, rb;
	ck_assert_int_eq(envrec_parse(a, strlen(a), &ra, &d), 0);
	ck_assert_int_eq(envrec_parse(b, strlen(b), &rb, &d), 0);
	ck_assert_int_eq(envrec_diff(&ra, &rb, &dl, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(dl[0].change, ENVREC_REMOVED);
	ck_assert_str_eq(dl[1].old_value, "3");
	ck_assert_int_eq(dl[2].change, ENVREC_ADDED);
	free(dl);
	envrec_release(&ra);
	envrec_release(&rb);
	/* malformed records */
	ck_assert_int_eq(envrec_parse("b=1\na=2\n", 8, &bad, &d), RBA_E_SYNTAX);
	ck_assert_int_eq(envrec_parse("a=1\na=2\n", 8, &bad, &d), RBA_E_SYNTAX);
	ck_assert_int_eq(envrec_parse("novalue\n", 8, &bad, &d), RBA_E_SYNTAX);
	ck_assert_int_eq(envrec_parse("A=1\n", 4, &bad, &d), RBA_E_SYNTAX);
	ck_assert_int_eq(envrec_parse("a=1", 3, &bad, &d), RBA_E_SYNTAX);
	envrec_release(&rs);
	envrec_release(&rf);
	rba_buf_release(&s);
	rba_buf_release(&f);
}
END_TEST

/*
 * The run record: the layout cli/cmd_train.c wrote, key for key and line
 * for line, with numbers in the shortest round-trip form (0.1, not
 * 0.10000000000000001), non-finite ones null; and written atomically.
 */
START_TEST(test_runrec)
{
	static const char pins_text[] =
		"schema: rebuild-audit/pins/v1\n"
		"version: run-1.q\n"
		"snapshot: sha256:9a5fb32561e18f48dbbe9b109aa7e02b59539569fa95226708a4b5b3be86dee0\n"
		"data:\n  label: class\n"
		"train:\n  seed: 42\n";
	struct rebuild_epoch curve[2] = {
		{ 0.5, 0.25, 0.75, NAN },
		{ 0.1, 0.2, 1.0 / 3.0, 1e-5 },
	};
	struct rebuild_result res;
	struct pins *p = NULL;
	struct rba_detail d;
	struct rba_digest cfg;
	struct rba_buf b;
	struct rba_json_value v;
	char cfg_hex[RBA_DIGEST_TEXT_LEN + 1], art_hex[RBA_DIGEST_TEXT_LEN + 1];
	char want[4096], dir[] = "/tmp/rba-runrec-XXXXXX", path[256];
	uint8_t *back;
	size_t n;

	rba_detail_clear(&d);
	ck_assert_msg(policy_pins_parse(pins_text, strlen(pins_text), "t.yaml",
					&p, &d) == 0, "%s", d.reason);
	memset(&res, 0, sizeof(res));
	res.abi = 1;
	for (int i = 0; i < RBA_DIGEST_LEN; i++)
		res.digest.b[i] = (uint8_t)(i * 7);
	res.ntrain = 800;
	res.nval = 200;
	res.nfeatures = 61;
	res.nclasses = 2;
	res.report.epochs = 2;
	res.report.curve = curve;
	res.report.final = curve[1];
	res.report.examples_per_second = 123456.5;
	res.report.train_seconds = 0.30000000000000004;
	res.contract.input_scale = 1.0;
	res.eval.rows = 200;
	res.eval.loss = 0.2;
	res.eval.acc = 1.0 / 3.0;
	res.eval.auc = 1e-5;
	policy_pins_config_hash(p, &cfg);
	rba_digest_format(&cfg, cfg_hex);
	rba_digest_format(&res.digest, art_hex);
	snprintf(want, sizeof(want),
		 "{\n"
		 "  \"schema\": \"rebuild-audit/run/v2\",\n"
		 "  \"version\": \"run-1.q\",\n"
		 "  \"config_hash\": \"%s\",\n"
		 "  \"eval_fingerprint\": \"sha256:0000000000000000000000000000000000000000000000000000000000000000\",\n"
		 "  \"snapshot\": \"sha256:9a5fb32561e18f48dbbe9b109aa7e02b59539569fa95226708a4b5b3be86dee0\",\n"
		 "  \"environment\": \"sha256:env\",\n"
		 "  \"code_revision\": \"%s\",\n"
		 "  \"trainer_abi\": 1,\n"
		 "  \"seed\": 42,\n"
		 "  \"mode\": \"strict\",\n"
		 "  \"threads\": 1,\n"
		 "  \"artifact\": \"%s\",\n"
		 "  \"examples\": {\"train\": 800, \"validation\": 200, \"features\": 61, \"classes\": 2},\n"
		 "  \"curves\": [\n"
		 "    {\"epoch\": 1, \"train_loss\": 0.5, \"val_loss\": 0.25, \"val_acc\": 0.75, \"val_auc\": null},\n"
		 "    {\"epoch\": 2, \"train_loss\": 0.1, \"val_loss\": 0.2, \"val_acc\": 0.3333333333333333, \"val_auc\": 1e-05}\n"
		 "  ],\n"
		 "  \"final\": {\"train_loss\": 0.1, \"val_loss\": 0.2, \"val_acc\": 0.3333333333333333, \"val_auc\": 1e-05},\n"
		 "  \"eval\": {\"subset\": \"all\", \"reduction\": \"mean\", \"dropout\": \"off\", \"input_scale\": 1, \"rows\": 200, \"loss\": 0.2, \"acc\": 0.3333333333333333, \"auc\": 1e-05},\n"
		 "  \"examples_per_second\": 123456.5,\n"
		 "  \"train_seconds\": 0.30000000000000004,\n"
		 "  \"wall_seconds\": null\n"
		 "}\n",
		 cfg_hex, envrec_code_revision(), art_hex);
	rba_buf_init(&b);
	rebuild_runrec_render(p, &res, "sha256:env", INFINITY, &b);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	ck_assert_str_eq(rba_buf_cstr(&b), want);
	/* It is JSON, and its numbers read back exactly. */
	ck_assert_int_eq(rba_json_parse((const char *)b.p, b.len, &v, NULL), 0);
	ck_assert(rba_json_get_num(rba_json_get(&v, "final"), "val_acc", 0) ==
		  1.0 / 3.0);
	ck_assert(rba_json_get_num(&v, "train_seconds", 0) == 0.30000000000000004);
	ck_assert_str_eq(rba_json_get_str(&v, "version"), "run-1.q");
	rba_json_release(&v);
	/* Its summary reads back; a later format is newer, others corrupt. */
	{
		struct rebuild_runrec_summary sm;
		char *t = strdup(rba_buf_cstr(&b));

		ck_assert_int_eq(rebuild_runrec_summary_parse(b.p, b.len, &sm, &d), 0);
		ck_assert_uint_eq(sm.epochs, 2);
		ck_assert_uint_eq(sm.ntrain, 800);
		ck_assert_uint_eq(sm.nval, 200);
		ck_assert_uint_eq(sm.trainer_abi, 1);
		ck_assert(sm.val_acc == 1.0 / 3.0 && sm.val_loss == 0.2 && sm.val_auc == 1e-5);
		ck_assert(sm.examples_per_second == 123456.5);
		ck_assert(rba_digest_equal(&sm.artifact, &res.digest));
		memcpy(strstr(t, "run/v2"), "run/v3", 6);
		ck_assert_int_eq(rebuild_runrec_summary_parse(t, strlen(t), &sm, &d), RBA_E_NEWER);
		memcpy(strstr(t, "run/v3"), "run/v1", 6);
		memcpy(strstr(t, "\"final\""), "\"fina_\"", 7);
		ck_assert_int_eq(rebuild_runrec_summary_parse(t, strlen(t), &sm, &d), RBA_E_CORRUPT);
		ck_assert_str_eq(d.reason, "run record: 'final' is missing or malformed");
		ck_assert_int_eq(rebuild_runrec_summary_parse("{", 1, &sm, &d), RBA_E_CORRUPT);
		ck_assert_int_eq(rebuild_runrec_summary_parse("{}", 2, &sm, &d), RBA_E_CORRUPT);
		free(t);
	}

	/* Written in place, the same bytes; a missing directory is an errno. */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run.json", dir);
	ck_assert_int_eq(rebuild_runrec_write(path, p, &res, "sha256:env",
					      INFINITY), 0);
	ck_assert_int_eq(rba_file_read(path, 1 << 20, &back, &n, NULL), 0);
	ck_assert_uint_eq(n, b.len);
	ck_assert(memcmp(back, b.p, n) == 0);
	free(back);
	unlink(path);
	rmdir(dir);
	ck_assert_int_eq(rebuild_runrec_write(path, p, &res, "sha256:env", 1.0),
			 ENOENT);
	rba_buf_release(&b);
	policy_pins_free(p);
}
END_TEST



/* The metrics of an exec version's native model from its probabilities
 * (rebuild_evaluate_probs): loss, accuracy, AUC by hand; the subset,
 * the sum and the refusals of the contract. */
START_TEST(test_evaluate_probs)
{
	const float probs[] = { 0.2f, 0.8f, 0.6f, 0.4f, 0.7f, 0.3f, 0.9f, 0.1f };
	const uint32_t y[] = { 1, 0, 1, 0 };
	const size_t idx[] = { 10, 11, 12, 13 };
	struct rebuild_contract c = { 0, 0, 0, 1.0, 0.0, 7 };
	struct rebuild_evaluation e, e2;
	struct rba_detail d;
	double want = -(log((double)0.8f) + log((double)0.6f) +
			log((double)0.3f) + log((double)0.9f)) / 4;

	rba_detail_clear(&d);
	ck_assert_int_eq(rebuild_evaluate_probs(probs, 2, y, 4, idx, 1, &c, &e, &d), 0);
	ck_assert_uint_eq(e.rows, 4);
	ck_assert(fabs(e.loss - want) < 1e-12);
	ck_assert(e.acc == 0.75);
	ck_assert(e.auc == 0.75);
	/* the sum: the mean times the rows */
	c.sum = 1;
	ck_assert_int_eq(rebuild_evaluate_probs(probs, 2, y, 4, idx, 1, &c, &e2, &d), 0);
	ck_assert(fabs(e2.loss - 4 * want) < 1e-12);
	ck_assert(!rba_digest_equal(&e.fingerprint, &e2.fingerprint));
	/* a subset: its first rows, another fingerprint */
	c.sum = 0;
	c.subset_rows = 2;
	ck_assert_int_eq(rebuild_evaluate_probs(probs, 2, y, 4, idx, 1, &c, &e2, &d), 0);
	ck_assert_uint_eq(e2.rows, 2);
	ck_assert(e2.acc == 1.0);
	ck_assert(!rba_digest_equal(&e.fingerprint, &e2.fingerprint));
	c.subset_rows = 5;
	ck_assert_int_eq(rebuild_evaluate_probs(probs, 2, y, 4, idx, 1, &c, &e2, &d),
			 RBA_E_RANGE);
	ck_assert_str_eq(d.key, "eval.subset");
	/* the model is not ours to rescale or drop out */
	c.subset_rows = 0;
	c.input_scale = 2.0;
	rba_detail_clear(&d);
	ck_assert_int_eq(rebuild_evaluate_probs(probs, 2, y, 4, idx, 1, &c, &e2, &d),
			 RBA_E_UNSUPPORTED);
	ck_assert_str_eq(d.key, "eval.input_scale");
	c.input_scale = 1.0;
	c.dropout = 1;
	ck_assert_int_eq(rebuild_evaluate_probs(probs, 2, y, 4, idx, 1, &c, &e2, &d),
			 RBA_E_UNSUPPORTED);
	ck_assert_str_eq(d.key, "eval.dropout");
	/* three classes: no AUC */
	{
		const float p3[] = { 0.1f, 0.2f, 0.7f, 0.5f, 0.3f, 0.2f };
		const uint32_t y3[] = { 2, 1 };
		c.dropout = 0;
		ck_assert_int_eq(rebuild_evaluate_probs(p3, 3, y3, 2, idx, 2, &c, &e2, &d), 0);
		ck_assert(e2.acc == 0.5);
		ck_assert(isnan(e2.auc));
	}
}
END_TEST

/* The trainer kinds (exec/kind.h): the lookup from the pins, every
 * operation present, and each factor line the list it stands for. */
START_TEST(test_trainer_kinds)
{
	static const struct trainer_kind *const kinds[] = {
		&rebuild_builtin_kind, &exec_trainer_kind};
	struct pins p;
	char line[512];

	memset(&p, 0, sizeof(p));
	ck_assert_ptr_eq(rebuild_trainer_kind(&p), &rebuild_builtin_kind);
	p.trainer.kind = PINS_TRAINER_EXEC;
	p.trainer.revision = (char *)"0123456789abcdef0123456789abcdef01234567";
	ck_assert_ptr_eq(rebuild_trainer_kind(&p), &exec_trainer_kind);
	ck_assert_str_eq(exec_trainer_kind.code_revision(&p), p.trainer.revision);
	ck_assert_str_eq(rebuild_builtin_kind.code_revision(&p),
			 envrec_code_revision());
	ck_assert_ptr_null(rebuild_builtin_kind.record_trainer);
	ck_assert_str_eq(exec_trainer_kind.record_trainer, "exec");
	ck_assert_uint_eq(exec_trainer_kind.max_jobs, 1);
	for (size_t k = 0; k < 2; k++) {
		const struct trainer_kind *t = kinds[k];
		line[0] = 0;
		for (size_t i = 0; i < t->nfactors; i++) {
			if (i)
				strcat(line, ", ");
			strcat(line, t->factors[i]);
		}
		ck_assert_str_eq(line, t->factors_text);
		ck_assert(t->code_revision && t->envrec && t->train &&
			  t->abi_check && t->stored_decode && t->stored_open &&
			  t->artifact_open && t->given_abi && t->run_record &&
			  t->show);
	}
}
END_TEST

/*
 * ABI 1's block scorer (abi1_block.c, what rebuild_sparse_new gives for
 * a network) against the per-case sparse scorer (abi1_sparse.c) it
 * replaces, bit for bit, on every strict vector path this CPU has:
 * logistic, MLP and a three-class network with a dead hidden unit,
 * terms holding NaN, +-0, +-inf, subnormals and values near the float
 * limit, blocks of 1 case to several softmax blocks and a ragged tail,
 * groups of cases whose terms share their rows and groups whose terms
 * do not, and every input given by columns, those not listed zero
 * (same_or_nan: a NaN's bits aside).
 */
/*
 * The same float, bit for bit, or NaN for NaN: the sign and payload of a
 * NaN made from two NaNs are the operand order's, which IEEE 754 leaves
 * open and a compiler picks per addition (+ commutes in C); every
 * number that is not NaN must be the same bits.
 */
static int
same_or_nan(float a, float b)
{
	if (a != a || b != b)
		return a != a && b != b;
	return memcmp(&a, &b, sizeof(a)) == 0;
}

static void
block_agrees(uint32_t nlayers, const uint32_t *sizes, uint64_t seed)
{
	static const size_t counts[] = { 1, 2, 255, 256, 257, 1031 };
	static const float edge[] = {
		NAN, -NAN, 0.0f, -0.0f, INFINITY, -INFINITY, 0x1p-149f,
		-0x1p-149f, 3.0e38f, -3.0e38f, 1.0f, -1.0f, 0.5f, 1e-20f,
	};
	const char *isas[3];
	size_t nisa = kernel_strict_isas(isas), nedge = sizeof(edge) / 4;
	uint32_t nin = sizes[0], C = sizes[nlayers], nt = nin < 7 ? nin : 7;
	struct rebuild_model m;
	uint64_t k = rng_key(seed, 98, 0, 0);

	ck_assert_int_eq(rebuild_model_alloc(&m, nlayers, sizes), 0);
	for (uint32_t l = 0; l < nlayers; l++) {
		fill(m.w[l], (size_t)sizes[l] * sizes[l + 1], seed + l);
		fill(m.b[l], sizes[l + 1], seed + 20 + l);
	}
	if (nlayers > 1)
		m.b[0][1] = -1e6f; /* a unit that is never on */
	for (size_t a = 0; a < nisa; a++) {
		struct rebuild_sparse *blk, *sp;
		setenv("RBA_STRICT_ISA", isas[a], 1);
		ck_assert_int_eq(abi1_block_new(&m, &blk), 0);
		ck_assert_int_eq(abi1_sparse_new(&m, &sp), 0);
		for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
			size_t n = counts[ci];
			float *tx = malloc(n * nt * 4), *want = malloc(n * C * 4),
			      *got = malloc(n * C * 4);
			uint32_t *row = malloc(n * nt * 4);
			for (size_t i = 0; i < n; i++) {
				/* runs of 8 cases alike (their groups share
				 * rows), runs of 8 each its own */
				uint32_t r = (uint32_t)(rng_u64(k, i & 8 ? i : i | 7) %
							(nin - nt + 1));
				for (uint32_t t = 0; t < nt; t++) {
					uint64_t u = rng_u64(k, 1000000 + i * nt + t);
					row[i * nt + t] = r + t; /* ascending */
					tx[i * nt + t] =
						i % 3 == 0 ? edge[u % nedge]
							   : rng_uniformf(k, u) * 8.0f - 4.0f;
				}
			}
			rebuild_sparse_score(sp, tx, row, nt, n, want);
			rebuild_sparse_score(blk, tx, row, nt, n, got);
			for (size_t q = 0; q < n * C; q++)
				ck_assert_msg(same_or_nan(want[q], got[q]),
					      "%s: %zu cases: case %zu class %zu: "
					      "%a, not %a", isas[a], n, q / C,
					      q % C, got[q], want[q]);
			{
				/* every input by columns (rows n + 5 apart),
				 * the ones not listed zero */
				size_t ld = n + 5;
				float *xc = calloc(nin * ld, 4);
				ck_assert(rebuild_sparse_takes_cols(blk));
				for (size_t i = 0; i < n; i++)
					for (uint32_t t = 0; t < nt; t++)
						xc[row[i * nt + t] * ld + i] = tx[i * nt + t];
				for (size_t i = n; i < ld; i++)
					xc[i] = 7.0f; /* not read */
				memset(got, 0xff, n * C * 4);
				rebuild_sparse_score_cols(blk, xc, ld, n, got);
				for (size_t q = 0; q < n * C; q++)
					ck_assert_msg(same_or_nan(want[q], got[q]),
						      "%s: %zu cases by columns: case "
						      "%zu class %zu: %a, not %a",
						      isas[a], n, q / C, q % C, got[q],
						      want[q]);
				free(xc);
			}
			free(tx);
			free(want);
			free(got);
			free(row);
		}
		rebuild_sparse_free(blk);
		rebuild_sparse_free(sp);
	}
	unsetenv("RBA_STRICT_ISA");
	rebuild_model_release(&m);
}

START_TEST(test_block_scorer)
{
	static const uint32_t logistic[] = { 61, 2 };
	static const uint32_t mlp[] = { 61, 32, 32, 2 };
	static const uint32_t three[] = { 12, 40, 3 };
	static const uint32_t all[] = { 5, 16, 17, 2 }; /* every input a term */

	block_agrees(1, logistic, 31);
	block_agrees(3, mlp, 41);
	block_agrees(2, three, 51);
	block_agrees(3, all, 61);
}
END_TEST

Suite *
suite_rebuild(void)
{
	Suite *s = suite_create("rebuild");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rng_pure);
	tcase_add_test(tc, test_zalloc64);
	tcase_add_test(tc, test_block_scorer);
	tcase_add_test(tc, test_rng_normal);
	tcase_add_test(tc, test_exp_log_accuracy);
	tcase_add_test(tc, test_exp_log_special);
	tcase_add_test(tc, test_kernels_order);
	tcase_add_test(tc, test_vector_exp_log);
	tcase_add_test(tc, test_activation);
	tcase_add_test(tc, test_optimizer_steps);
	tcase_add_test(tc, test_adamw_subnormal);
	tcase_add_test(tc, test_gradient_check);
	tcase_add_test(tc, test_threads_invariant);
	tcase_add_test(tc, test_fma_soft);
	tcase_add_test(tc, test_fma_kernels);
	tcase_add_test(tc, test_fma_activate);
	tcase_add_test(tc, test_abi2_train);
	tcase_add_test(tc, test_train_errors);
	tcase_add_test(tc, test_auc);
	tcase_add_test(tc, test_evaluate_probs);
	tcase_add_test(tc, test_encoder);
	tcase_add_test(tc, test_encode_raw_thresholds);
	tcase_add_test(tc, test_encode_fit_consume);
	tcase_add_test(tc, test_encode_range);
	tcase_add_test(tc, test_encode_table_numbers);
	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_synth);
	tcase_add_test(tc, test_envrec);
	tcase_add_test(tc, test_runrec);
	tcase_add_test(tc, test_trainer_kinds);
	suite_add_tcase(s, tc);
	return s;
}
