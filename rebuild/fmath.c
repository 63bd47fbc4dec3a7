/*
 * fmath.c - exp, log and cosine from +, -, *, / and sqrt.
 *
 * Classic range reductions (Cody-Waite for exp, fdlibm's for log) with
 * short polynomials evaluated by Horner's rule.  Integer rounding uses
 * explicit casts, never rintf/lrintf, whose result depends on the
 * rounding mode.
 */
#include "rebuild/fmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static float
bits_to_float(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint32_t
float_to_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/* 2^k for -126 <= k <= 127, built from its bits. */
static float
pow2i(int k)
{
	return bits_to_float((uint32_t)(k + 127) << 23);
}

/* Rounds half away from zero; |x| must fit an int. */
static int
round_to_int(float x)
{
	return (int)(x < 0.0f ? x - 0.5f : x + 0.5f);
}

#define LN2_HI 6.9314575195e-01f /* 0x3f317200: k * LN2_HI is exact */
#define LN2_LO 1.4286067653e-06f /* 0x35bfbe8e */
#define LOG2E 1.44269502163e+00f

float
fm_expf(float x)
{
	float r, p;
	int k;

	if (x != x)
		return x;
	if (x > 88.72283935546875f)
		return bits_to_float(0x7f800000u);
	if (x < -103.98f)
		return 0.0f;
	k = round_to_int(x * LOG2E);
	r = x - (float)k * LN2_HI;
	r = r - (float)k * LN2_LO;
	/* Taylor to degree 7 on |r| <= 0.35: truncation below 2^-27. */
	p = 1.0f / 5040.0f;
	p = 1.0f / 720.0f + r * p;
	p = 1.0f / 120.0f + r * p;
	p = 1.0f / 24.0f + r * p;
	p = 1.0f / 6.0f + r * p;
	p = 0.5f + r * p;
	p = 1.0f + r * p;
	p = 1.0f + r * p;
	if (k > 127)
		return p * pow2i(k - 1) * 2.0f;
	if (k < -126)
		return p * pow2i(k + 100) * 0x1p-100f;
	return p * pow2i(k);
}

/* 2/3, 2/5, 2/7, 2/9, 2/11: log(1+f) = 2 atanh(s), s = f / (2 + f). */
#define LG1 0.66666666666f
#define LG2 0.40000000000f
#define LG3 0.28571428571f
#define LG4 0.22222222222f
#define LG5 0.18181818181f

float
fm_logf(float x)
{
	uint32_t ix = float_to_bits(x);
	float m, f, s, z, R, hfsq, dk;
	int e = 0;

	if (x != x)
		return x;
	if (x < 0.0f)
		return bits_to_float(0x7fc00000u);
	if (x == 0.0f)
		return bits_to_float(0xff800000u);
	if (ix == 0x7f800000u)
		return x;
	if (ix < 0x00800000u) { /* subnormal: scale into the normal range */
		x *= 0x1p25f;
		ix = float_to_bits(x);
		e = -25;
	}
	e += (int)((ix >> 23) & 0xff) - 127;
	m = bits_to_float((ix & 0x007fffffu) | 0x3f800000u);
	if (m > 1.41421356f) {
		m *= 0.5f;
		e += 1;
	}
	f = m - 1.0f; /* exact (Sterbenz) */
	s = f / (2.0f + f);
	z = s * s;
	R = LG5;
	R = LG4 + z * R;
	R = LG3 + z * R;
	R = LG2 + z * R;
	R = LG1 + z * R;
	R = z * R;
	hfsq = 0.5f * f * f;
	dk = (float)e;
	return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f);
}

float
fm_cos2pif(float t)
{
	float f, a, z, p;
	int q;

	if (!(t > -0x1p20f && t < 0x1p20f))
		return bits_to_float(0x7fc00000u);
	/* 4t is exact; f = 4t - q is exact (Sterbenz) and in [-1/2, 1/2]. */
	q = round_to_int(4.0f * t);
	f = 4.0f * t - (float)q;
	a = f * 1.57079632679f;
	z = a * a;
	if ((q & 1) == 0) { /* +-cos(a) */
		p = -1.0f / 3628800.0f;
		p = 1.0f / 40320.0f + z * p;
		p = -1.0f / 720.0f + z * p;
		p = 1.0f / 24.0f + z * p;
		p = -0.5f + z * p;
		p = 1.0f + z * p;
		return (q & 2) ? -p : p;
	}
	/* q = 1: cos(pi/2 + a) = -sin(a); q = 3: sin(a). */
	p = 1.0f / 362880.0f;
	p = -1.0f / 5040.0f + z * p;
	p = 1.0f / 120.0f + z * p;
	p = -1.0f / 6.0f + z * p;
	p = a + a * z * p;
	return (q & 2) ? p : -p;
}

float
fm_sqrtf(float x)
{
	return sqrtf(x);
}
