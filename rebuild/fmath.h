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
