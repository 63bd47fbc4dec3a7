/*
 * fmath.c - exp, log and cosine from +, -, *, / and sqrt.
 *
 * Classic range reductions (Cody-Waite for exp, fdlibm's for log) with
 * short polynomials evaluated by Horner's rule.  Integer rounding uses
 * explicit casts, never rintf/lrintf, whose result depends on the
 * rounding mode.
 */
#include "train/fmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Rounds half away from zero; |x| must fit an int. */
static int
round_to_int(float x)
{
	return (int)(x < 0.0f ? x - 0.5f : x + 0.5f);
}

float
fm_expf(float x)
{
	return fm_expf_inline(x);
}

float
fm_logf(float x)
{
	return fm_logf_inline(x);
}

float
fm_cos2pif(float t)
{
	float f, a, z, p;
	int q;

	if (!(t > -0x1p20f && t < 0x1p20f))
		return fm_bits_float(0x7fc00000u);
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
