/*
 * numfmt.c - %.Pg without printf (numfmt.h).
 *
 * A finite double is M x 2^E with M < 2^53.  With E >= 0 it is the
 * integer M << E; with E < 0 (trailing zero bits of M removed first) it
 * is M x 5^-E / 10^-E, an integer over a power of ten.  When that
 * integer fits in 128 bits its decimal digits are the value's exact
 * digits, and rounding them to P digits, ties to even, is what glibc's
 * printf does in the default rounding mode.  The layout rules are C's:
 * %e when the exponent X of the rounded value is below -4 or at least
 * P, else %f with P - 1 - X decimals; trailing zeros and a bare point
 * removed.
 */
#include "numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

#define TEN19 10000000000000000000ull

/* 5^k for k = 0..55 (5^56 needs more than 128 bits): high, low halves */
static const uint64_t pow5[56][2] = {
	{0x0000000000000000ull, 0x0000000000000001ull}, /* 5^0 */
	{0x0000000000000000ull, 0x0000000000000005ull}, /* 5^1 */
	{0x0000000000000000ull, 0x0000000000000019ull}, /* 5^2 */
	{0x0000000000000000ull, 0x000000000000007dull}, /* 5^3 */
	{0x0000000000000000ull, 0x0000000000000271ull}, /* 5^4 */
	{0x0000000000000000ull, 0x0000000000000c35ull}, /* 5^5 */
	{0x0000000000000000ull, 0x0000000000003d09ull}, /* 5^6 */
	{0x0000000000000000ull, 0x000000000001312dull}, /* 5^7 */
	{0x0000000000000000ull, 0x000000000005f5e1ull}, /* 5^8 */
	{0x0000000000000000ull, 0x00000000001dcd65ull}, /* 5^9 */
	{0x0000000000000000ull, 0x00000000009502f9ull}, /* 5^10 */
	{0x0000000000000000ull, 0x0000000002e90eddull}, /* 5^11 */
	{0x0000000000000000ull, 0x000000000e8d4a51ull}, /* 5^12 */
	{0x0000000000000000ull, 0x0000000048c27395ull}, /* 5^13 */
	{0x0000000000000000ull, 0x000000016bcc41e9ull}, /* 5^14 */
	{0x0000000000000000ull, 0x000000071afd498dull}, /* 5^15 */
	{0x0000000000000000ull, 0x0000002386f26fc1ull}, /* 5^16 */
	{0x0000000000000000ull, 0x000000b1a2bc2ec5ull}, /* 5^17 */
	{0x0000000000000000ull, 0x000003782dace9d9ull}, /* 5^18 */
	{0x0000000000000000ull, 0x00001158e460913dull}, /* 5^19 */
	{0x0000000000000000ull, 0x000056bc75e2d631ull}, /* 5^20 */
	{0x0000000000000000ull, 0x0001b1ae4d6e2ef5ull}, /* 5^21 */
	{0x0000000000000000ull, 0x000878678326eac9ull}, /* 5^22 */
	{0x0000000000000000ull, 0x002a5a058fc295edull}, /* 5^23 */
	{0x0000000000000000ull, 0x00d3c21bcecceda1ull}, /* 5^24 */
	{0x0000000000000000ull, 0x0422ca8b0a00a425ull}, /* 5^25 */
	{0x0000000000000000ull, 0x14adf4b7320334b9ull}, /* 5^26 */
	{0x0000000000000000ull, 0x6765c793fa10079dull}, /* 5^27 */
	{0x0000000000000002ull, 0x04fce5e3e2502611ull}, /* 5^28 */
	{0x000000000000000aull, 0x18f07d736b90be55ull}, /* 5^29 */
	{0x0000000000000032ull, 0x7cb2734119d3b7a9ull}, /* 5^30 */
	{0x00000000000000fcull, 0x6f7c40458122964dull}, /* 5^31 */
	{0x00000000000004eeull, 0x2d6d415b85acef81ull}, /* 5^32 */
	{0x00000000000018a6ull, 0xe32246c99c60ad85ull}, /* 5^33 */
	{0x0000000000007b42ull, 0x6fab61f00de36399ull}, /* 5^34 */
	{0x000000000002684cull, 0x2e58e9b04570f1fdull}, /* 5^35 */
	{0x00000000000c097cull, 0xe7bc90715b34b9f1ull}, /* 5^36 */
	{0x00000000003c2f70ull, 0x86aed236c807a1b5ull}, /* 5^37 */
	{0x00000000012ced32ull, 0xa16a1b11e8262889ull}, /* 5^38 */
	{0x0000000005e0a1fdull, 0x2712875988becaadull}, /* 5^39 */
	{0x000000001d6329f1ull, 0xc35ca4bfabb9f561ull}, /* 5^40 */
	{0x0000000092efd1b8ull, 0xd0cf37be5aa1cae5ull}, /* 5^41 */
	{0x00000002deaf189cull, 0x140c16b7c528f679ull}, /* 5^42 */
	{0x0000000e596b7b0cull, 0x643c7196d9ccd05dull}, /* 5^43 */
	{0x00000047bf19673dull, 0xf52e37f2410011d1ull}, /* 5^44 */
	{0x00000166bb7f0435ull, 0xc9e717bb45005915ull}, /* 5^45 */
	{0x00000701a97b150cull, 0xf18376a85901bd69ull}, /* 5^46 */
	{0x000023084f676940ull, 0xb7915149bd08b30dull}, /* 5^47 */
	{0x0000af298d050e43ull, 0x95d69670b12b7f41ull}, /* 5^48 */
	{0x00036bcfc1194751ull, 0xed30f03375d97c45ull}, /* 5^49 */
	{0x00111b0ec57e6499ull, 0xa1f4b1014d3f6d59ull}, /* 5^50 */
	{0x00558749db77f700ull, 0x29c77506823d22bdull}, /* 5^51 */
	{0x01aba4714957d300ull, 0xd0e549208b31adb1ull}, /* 5^52 */
	{0x085a36366eb71f04ull, 0x147a6da2b7f86475ull}, /* 5^53 */
	{0x29c30f1029939b14ull, 0x6664242d97d9f649ull}, /* 5^54 */
	{0xd0cf4b50cfe20765ull, 0xfff4b4e3f741cf6dull}, /* 5^55 */
};

static const char two_digits[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* r's n lowest decimal digits (leading zeros kept) ending before end. */
static void
u64_digits_back(uint64_t r, int n, char *end)
{
	for (; n >= 2; n -= 2) {
		memcpy(end - 2, two_digits + 2 * (r % 100), 2);
		end -= 2;
		r /= 100;
	}
	if (n == 1)
		end[-1] = (char)('0' + r % 10);
}

/* The decimal digits of u (> 0), most significant first; their count. */
static int
u128_digits(u128 u, char *dig)
{
	uint64_t part[3], top;
	int np = 0, n = 0, w = 0;

	while (u >= TEN19) { /* 19 digits at a time, lowest first */
		u128 q = u / TEN19;
		part[np++] = (uint64_t)(u - q * TEN19);
		u = q;
	}
	top = (uint64_t)u;
	for (uint64_t t = top; t != 0; t /= 10)
		w++;
	u64_digits_back(top, w, dig + w);
	n = w;
	while (np > 0) {
		n += 19;
		u64_digits_back(part[--np], 19, dig + n);
	}
	return n;
}

int
rba_fmt_digits(double v, char dig[40], int *nd, int *x10)
{
	uint64_t bits, m;
	int e, k = 0, n;
	u128 u;

	memcpy(&bits, &v, 8);
	e = (int)((bits >> 52) & 0x7ff);
	m = bits & ((1ull << 52) - 1);
	if (e == 0x7ff || (e == 0 && m == 0))
		return 0;
	if (e == 0)
		e = 1;
	else
		m |= 1ull << 52;
	e -= 1075; /* v = m x 2^e */
	if (e >= 0) {
		if (e > 127 - 53)
			return 0;
		u = (u128)m << e;
	} else {
		int tz = __builtin_ctzll(m);
		if (tz > -e)
			tz = -e;
		m >>= tz;
		e += tz;
		k = -e; /* v = m x 5^k / 10^k */
		if (k > 55 || __builtin_mul_overflow(
				      (u128)m,
				      ((u128)pow5[k][0] << 64) | pow5[k][1], &u))
			return 0;
	}
	n = u128_digits(u, dig);
	*nd = n;
	*x10 = n - 1 - k;
	return 1;
}

/* The digits dig[0..nd) rounded to p (< nd), ties to even: 1 on a carry
 * out of the first digit (dig then "1000..."). */
static int
round_digits(char *dig, int nd, int p)
{
	int up;

	if (dig[p] > '5') {
		up = 1;
	} else if (dig[p] < '5') {
		up = 0;
	} else {
		up = (dig[p - 1] - '0') & 1;
		for (int i = p + 1; i < nd && !up; i++)
			up = dig[i] != '0';
	}
	if (!up)
		return 0;
	for (int i = p - 1; i >= 0; i--) {
		if (dig[i] != '9') {
			dig[i]++;
			return 0;
		}
		dig[i] = '0';
	}
	dig[0] = '1';
	return 1;
}

static const uint64_t pow10_u64[19] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
	10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
	100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull,
};

/*
 * floor(v x 10^s) for v = m x 2^e (m < 2^53) and 0 <= s <= 27, with
 * *rem 0, 1, 2 or 3 as the rest is none, below a half, a half or above:
 * m x 5^s is below 2^117 and the power of two a shift.  0 when the
 * integer would not fit in 64 bits.
 */
static int
scaled_floor(uint64_t m, int e, int s, uint64_t *q, int *rem)
{
	u128 prod = (u128)m * pow5[s][1];
	int sh = -(e + s);

	if (sh <= 0) { /* an integer: exact, no rest */
		if (-sh >= 64 || (prod >> (64 + sh)) != 0)
			return 0;
		*q = (uint64_t)(prod << -sh);
		*rem = 0;
		return 1;
	}
	if (sh >= 128 || (prod >> sh) >> 64 != 0)
		return 0;
	*q = (uint64_t)(prod >> sh);
	{
		u128 r = prod & (((u128)1 << sh) - 1);
		u128 half = (u128)1 << (sh - 1);
		*rem = r == 0 ? 0 : r < half ? 1 : r == half ? 2 : 3;
	}
	return 1;
}

/*
 * The digits of v (finite, not zero) already rounded to p (1..17)
 * significant digits, ties to even, without the value's whole
 * expansion: D = v x 10^(p - 1 - X) rounded, X the decimal exponent,
 * found from the binary one and corrected by the integer's size.  The
 * same digits and exponent as rba_fmt_digits and round_digits give.
 * 0 (take that path) unless 0 <= p - 1 - X <= 27, where 5^(p - 1 - X)
 * is a 64-bit word (every float32 of magnitude 1e-18 to 1e17 at
 * precision 9).
 */
static int
fmt_round_fast(double v, int p, char *dig, int *nd, int *x10)
{
	uint64_t bits, m, q;
	int e, x, rem;

	memcpy(&bits, &v, 8);
	e = (int)((bits >> 52) & 0x7ff);
	m = bits & ((1ull << 52) - 1);
	if (e == 0 || e == 0x7ff)
		return 0; /* subnormal, inf, nan: the other path */
	m |= 1ull << 52;
	e -= 1075; /* v = m x 2^e, 2^(e + 52) <= v < 2^(e + 53) */
	/* floor(log10 v) is within one of x: 1233 / 4096 is log10(2) to
	 * 1e-5, and the loop below corrects x by the integer's size (an
	 * arithmetic shift, as every compiler this builds with does) */
	x = ((e + 52) * 1233) >> 12;
	for (int tries = 0;; tries++) {
		int s = p - 1 - x;
		if (tries == 3 || s < 0 || s > 27 ||
		    !scaled_floor(m, e, s, &q, &rem))
			return 0;
		if (q >= pow10_u64[p]) {
			x++;
			continue;
		}
		if (q < pow10_u64[p - 1]) {
			x--;
			continue;
		}
		break;
	}
	if (rem == 3 || (rem == 2 && (q & 1)))
		q++;
	if (q == pow10_u64[p]) {
		q = pow10_u64[p - 1];
		x++;
	}
	u64_digits_back(q, p, dig + p);
	*nd = p;
	*x10 = x;
	return 1;
}

size_t
rba_fmt_g(double v, int prec, char out[RBA_FMT_G_MAX])
{
	char dig[40];
	int nd, x, p = prec < 1 ? 1 : prec;
	size_t o = 0;

	if (v == 0) {
		if (signbit(v))
			out[o++] = '-';
		out[o++] = '0';
		out[o] = 0;
		return o;
	}
	if (prec > 17)
		return (size_t)snprintf(out, RBA_FMT_G_MAX, "%.*g", prec, v);
	if (!fmt_round_fast(v, p, dig, &nd, &x)) {
		if (!rba_fmt_digits(v, dig, &nd, &x))
			return (size_t)snprintf(out, RBA_FMT_G_MAX, "%.*g",
						prec, v);
		if (nd > p) {
			x += round_digits(dig, nd, p);
			nd = p;
		}
	}
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	if (v < 0)
		out[o++] = '-';
	if (x < -4 || x >= p) {
		out[o++] = dig[0];
		if (nd > 1) {
			out[o++] = '.';
			memcpy(out + o, dig + 1, (size_t)nd - 1);
			o += (size_t)nd - 1;
		}
		out[o++] = 'e';
		out[o++] = x < 0 ? '-' : '+';
		x = x < 0 ? -x : x;
		if (x >= 100)
			out[o++] = (char)('0' + x / 100);
		out[o++] = (char)('0' + x / 10 % 10);
		out[o++] = (char)('0' + x % 10);
	} else if (x < 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (int i = -1; i > x; i--)
			out[o++] = '0';
		memcpy(out + o, dig, (size_t)nd);
		o += (size_t)nd;
	} else {
		for (int i = 0; i <= x; i++)
			out[o++] = i < nd ? dig[i] : '0';
		if (nd > x + 1) {
			out[o++] = '.';
			memcpy(out + o, dig + x + 1, (size_t)(nd - x - 1));
			o += (size_t)(nd - x - 1);
		}
	}
	out[o] = 0;
	return o;
}
