/*
 * numfmt.h - printf's %.Pg of a double, the same bytes, faster.
 *
 * rba_fmt_g writes what snprintf(out, RBA_FMT_G_MAX, "%.*g", prec, v)
 * writes in the C locale (glibc's digits: the exact value rounded to
 * prec significant digits, ties to even), without the locale and the
 * multiple-precision machinery: the double's exact value is an integer
 * over a power of ten that fits in 128 bits for every float32 of
 * magnitude 2^-20 and more and for most doubles, and its digits are
 * rounded in integers.  Any other value (NaN, infinities, a double
 * whose exact value needs more than 128 bits) goes to snprintf, so
 * the result is snprintf's in every case.  Plain C, no project
 * knowledge.
 */
#ifndef RBA_NUMFMT_H
#define RBA_NUMFMT_H

#include <stddef.h>

#define RBA_FMT_G_MAX 32 /* bytes out needs for prec <= 17, with its NUL */

/*
 * Writes v as "%.*g" with precision prec (1..17) and a NUL into out;
 * returns the length without the NUL.
 */
size_t rba_fmt_g(double v, int prec, char out[RBA_FMT_G_MAX]);

/*
 * The exact digits of v (finite, not zero) when they fit the fast path:
 * *nd (at most 39) decimal digits into dig (no NUL), the value being
 * 0.DIG x 10^(*x10 + 1), i.e. DIG[0] is the digit of 10^*x10.  1, or 0
 * when v takes the slow path.
 */
int rba_fmt_digits(double v, char dig[40], int *nd, int *x10);

#endif
