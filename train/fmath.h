/*
 * fmath.h - the trainer's own elementary functions.
 *
 * Built only from IEEE-754 single-precision +, -, *, / and sqrt (all
 * correctly rounded), integer operations and explicit conversions, in a
 * fixed order.  No libm call is made in the arithmetic path, so the
 * results are the same bits on every machine, libc, compiler and
 * optimization level (the build uses -ffp-contract=off and no
 * fast-math).  These functions are part of the trainer ABI: changing a
 * coefficient or an evaluation order moves bits of artifacts.
 *
 * Accuracy (checked against libm by the unit tests): within 2 ulp over
 * the normal range.
 */
#ifndef RBA_FMATH_H
#define RBA_FMATH_H

#include <stdint.h>
#include <string.h>

/*
 * The bodies, inline and branch-free (selects, not jumps), so loops over
 * arrays vectorize; fm_expf and fm_logf are these same bodies, so a
 * vectorized loop gives exactly the scalar results.
 */
#define FM_LN2_HI 6.9314575195e-01f /* 0x3f317200: k * FM_LN2_HI is exact */
#define FM_LN2_LO 1.4286067653e-06f /* 0x35bfbe8e */
#define FM_LOG2E 1.44269502163e+00f

static inline float
fm_bits_float(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline uint32_t
fm_float_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline __attribute__((always_inline)) float
fm_expf_inline(float x)
{
	/* Clamped so the conversion to int is defined; NaN clamps too and
	 * is passed through by the final select. */
	float xc = !(x >= -104.0f) ? -104.0f : (x > 89.0f ? 89.0f : x);
	float v = xc * FM_LOG2E;
	/* Round half away from zero: the cast truncates. */
	int32_t k = (int32_t)(v + (v < 0.0f ? -0.5f : 0.5f));
	float kf = (float)k;
	float r = xc - kf * FM_LN2_HI;
	float p;
	/* Two factors so 2^k stays representable for k = 128 and k < -126:
	 * (p 2^(k-1)) 2, (p 2^(k+100)) 2^-100, or (p 2^k) 1. */
	int32_t k1 = k > 127 ? k - 1 : (k < -126 ? k + 100 : k);
	float f2 = k > 127 ? 2.0f : (k < -126 ? 0x1p-100f : 1.0f);

	r = r - kf * FM_LN2_LO;
	/* Taylor to degree 7 on |r| <= 0.35: truncation below 2^-27. */
	p = 1.0f / 5040.0f;
	p = 1.0f / 720.0f + r * p;
	p = 1.0f / 120.0f + r * p;
	p = 1.0f / 24.0f + r * p;
	p = 1.0f / 6.0f + r * p;
	p = 0.5f + r * p;
	p = 1.0f + r * p;
	p = 1.0f + r * p;
	p = (p * fm_bits_float((uint32_t)(k1 + 127) << 23)) * f2;
	p = x < -103.98f ? 0.0f : p;
	p = x > 88.72283935546875f ? fm_bits_float(0x7f800000u) : p;
	return x != x ? x : p;
}

/* 2/3, 2/5, 2/7, 2/9, 2/11: log(1+f) = 2 atanh(s), s = f / (2 + f). */
static inline __attribute__((always_inline)) float
fm_logf_inline(float x)
{
	uint32_t ix = fm_float_bits(x);
	int sub = ix < 0x00800000u; /* subnormal (or zero): scale up */
	float xs = sub ? x * 0x1p25f : x;
	uint32_t is = fm_float_bits(xs);
	int32_t e = (int32_t)((is >> 23) & 0xff) - 127 - (sub ? 25 : 0);
	float m = fm_bits_float((is & 0x007fffffu) | 0x3f800000u);
	int big = m > 1.41421356f;
	float f, s, z, R, hfsq, dk, res;

	m = big ? m * 0.5f : m;
	e = big ? e + 1 : e;
	f = m - 1.0f; /* exact (Sterbenz) */
	s = f / (2.0f + f);
	z = s * s;
	R = 0.18181818181f;
	R = 0.22222222222f + z * R;
	R = 0.28571428571f + z * R;
	R = 0.40000000000f + z * R;
	R = 0.66666666666f + z * R;
	R = z * R;
	hfsq = 0.5f * f * f;
	dk = (float)e;
	res = dk * FM_LN2_HI - ((hfsq - (s * (hfsq + R) + dk * FM_LN2_LO)) - f);
	res = ix == 0x7f800000u ? x : res;
	res = x == 0.0f ? fm_bits_float(0xff800000u) : res;
	res = x < 0.0f ? fm_bits_float(0x7fc00000u) : res;
	return x != x ? x : res;
}

/*
 * e^x.  NaN gives NaN, x > 88.7228 gives +inf, x < -103.98 gives +0;
 * results in the subnormal range are deterministic (two scalings).
 */
float fm_expf(float x);

/* Natural logarithm.  log(0) = -inf, log(x < 0) = NaN, log(inf) = inf. */
float fm_logf(float x);

/* cos(2 pi t) for |t| < 2^20 (NaN outside). */
float fm_cos2pif(float t);

/* IEEE square root (correctly rounded, so identical everywhere). */
float fm_sqrtf(float x);

#endif
