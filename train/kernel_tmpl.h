/*
 * kernel_tmpl.h - the strict kernel bodies, instantiated by
 * kernel_strict.c once per instruction set with KT_SFX (name suffix),
 * KT_ATTR (a target attribute or nothing) and KT_VW (floats per vector)
 * defined.  Not a public header.
 *
 * Vectors are GCC/Clang vector types: an operation on them is the same
 * IEEE operation on every lane, so a vector of sums is exactly the
 * scalar sums side by side.  Each output element is accumulated in
 * reduced-index order on every path below (wide tiles, 4-lane tiles and
 * scalar tails alike), so which path handles an element never matters.
 */
#define KT_CAT2(a, b) a##_##b
#define KT_CAT(a, b) KT_CAT2(a, b)
#define KT(name) KT_CAT(name, KT_SFX)

typedef float KT(vf) __attribute__((vector_size(KT_VW * 4), aligned(4),
				     may_alias));
typedef float KT(v4) __attribute__((vector_size(16), aligned(4), may_alias));

typedef int32_t KT(vi) __attribute__((vector_size(KT_VW * 4)));
typedef uint32_t KT(vu) __attribute__((vector_size(KT_VW * 4)));

#define VF KT(vf)
#define V4 KT(v4)
#define VI KT(vi)
#define VU KT(vu)
#define SPF(s) (zf + (s))		/* a float splat */
#define SPI(s) (zi + (int32_t)(s))	/* an int splat */
#define SEL(m, a, b) ((VF)(((VI)(a) & (m)) | ((VI)(b) & ~(m))))
#define SELI(m, a, b) (((a) & (m)) | ((b) & ~(m)))
#define LD(T, p) (*(const T *)(const void *)(p))
#define ST(T, p, v) (*(T *)(void *)(p) = (v))

/* y[r][j] = (b[j] or 0) + sum over k in order of x[r][k] w[k][j]. */
KT_ATTR static void
KT(linear)(const float *restrict x, size_t rows, size_t in,
	   const float *restrict w, const float *restrict b, size_t out,
	   float *restrict y)
{
	const VF zv = { 0 };
	const V4 z4 = { 0 };
	size_t r = 0, j, k;

	for (; r + 4 <= rows; r += 4) {
		const float *x0 = x + r * in, *x1 = x0 + in, *x2 = x1 + in,
			    *x3 = x2 + in;
		float *y0 = y + r * out, *y1 = y0 + out, *y2 = y1 + out,
		      *y3 = y2 + out;
		for (j = 0; j + 2 * KT_VW <= out; j += 2 * KT_VW) {
			VF bA = b ? LD(VF, b + j) : zv;
			VF bB = b ? LD(VF, b + j + KT_VW) : zv;
			VF a0 = bA, a1 = bA, a2 = bA, a3 = bA;
			VF c0 = bB, c1 = bB, c2 = bB, c3 = bB;
			for (k = 0; k < in; k++) {
				VF wA = LD(VF, w + k * out + j);
				VF wB = LD(VF, w + k * out + j + KT_VW);
				a0 = a0 + x0[k] * wA;
				c0 = c0 + x0[k] * wB;
				a1 = a1 + x1[k] * wA;
				c1 = c1 + x1[k] * wB;
				a2 = a2 + x2[k] * wA;
				c2 = c2 + x2[k] * wB;
				a3 = a3 + x3[k] * wA;
				c3 = c3 + x3[k] * wB;
			}
			ST(VF, y0 + j, a0);
			ST(VF, y0 + j + KT_VW, c0);
			ST(VF, y1 + j, a1);
			ST(VF, y1 + j + KT_VW, c1);
			ST(VF, y2 + j, a2);
			ST(VF, y2 + j + KT_VW, c2);
			ST(VF, y3 + j, a3);
			ST(VF, y3 + j + KT_VW, c3);
		}
		for (; j + KT_VW <= out; j += KT_VW) {
			VF bA = b ? LD(VF, b + j) : zv;
			VF a0 = bA, a1 = bA, a2 = bA, a3 = bA;
			for (k = 0; k < in; k++) {
				VF wA = LD(VF, w + k * out + j);
				a0 = a0 + x0[k] * wA;
				a1 = a1 + x1[k] * wA;
				a2 = a2 + x2[k] * wA;
				a3 = a3 + x3[k] * wA;
			}
			ST(VF, y0 + j, a0);
			ST(VF, y1 + j, a1);
			ST(VF, y2 + j, a2);
			ST(VF, y3 + j, a3);
		}
		for (; j + 4 <= out; j += 4) {
			V4 bA = b ? LD(V4, b + j) : z4;
			V4 a0 = bA, a1 = bA, a2 = bA, a3 = bA;
			for (k = 0; k < in; k++) {
				V4 wA = LD(V4, w + k * out + j);
				a0 = a0 + x0[k] * wA;
				a1 = a1 + x1[k] * wA;
				a2 = a2 + x2[k] * wA;
				a3 = a3 + x3[k] * wA;
			}
			ST(V4, y0 + j, a0);
			ST(V4, y1 + j, a1);
			ST(V4, y2 + j, a2);
			ST(V4, y3 + j, a3);
		}
		for (; j < out; j++) {
			float bj = b ? b[j] : 0.0f;
			float a0 = bj, a1 = bj, a2 = bj, a3 = bj;
			for (k = 0; k < in; k++) {
				float wv = w[k * out + j];
				a0 = a0 + x0[k] * wv;
				a1 = a1 + x1[k] * wv;
				a2 = a2 + x2[k] * wv;
				a3 = a3 + x3[k] * wv;
			}
			y0[j] = a0;
			y1[j] = a1;
			y2[j] = a2;
			y3[j] = a3;
		}
	}
	for (; r < rows; r++) {
		const float *xr = x + r * in;
		float *yr = y + r * out;
		for (j = 0; j + KT_VW <= out; j += KT_VW) {
			VF a0 = b ? LD(VF, b + j) : zv;
			for (k = 0; k < in; k++)
				a0 = a0 + xr[k] * LD(VF, w + k * out + j);
			ST(VF, yr + j, a0);
		}
		for (; j + 4 <= out; j += 4) {
			V4 a0 = b ? LD(V4, b + j) : z4;
			for (k = 0; k < in; k++)
				a0 = a0 + xr[k] * LD(V4, w + k * out + j);
			ST(V4, yr + j, a0);
		}
		for (; j < out; j++) {
			float a0 = b ? b[j] : 0.0f;
			for (k = 0; k < in; k++)
				a0 = a0 + xr[k] * w[k * out + j];
			yr[j] = a0;
		}
	}
}

/*
 * dw[k][j] = 0 + sum over r in order of x[r][k] dy[r][j];
 * db[j] = 0 + sum over r in order of dy[r][j].
 */
KT_ATTR static void
KT(dw)(const float *restrict x, const float *restrict dy, size_t rows,
       size_t in, size_t out, float *restrict dw, float *restrict db)
{
	const VF zv = { 0 };
	const V4 z4 = { 0 };
	size_t k = 0, j, r;

	for (; k + 4 <= in; k += 4) {
		float *d0 = dw + k * out, *d1 = d0 + out, *d2 = d1 + out,
		      *d3 = d2 + out;
		for (j = 0; j + 2 * KT_VW <= out; j += 2 * KT_VW) {
			VF a0 = zv, a1 = zv, a2 = zv, a3 = zv;
			VF c0 = zv, c1 = zv, c2 = zv, c3 = zv;
			for (r = 0; r < rows; r++) {
				const float *xr = x + r * in + k;
				VF dA = LD(VF, dy + r * out + j);
				VF dB = LD(VF, dy + r * out + j + KT_VW);
				a0 = a0 + xr[0] * dA;
				c0 = c0 + xr[0] * dB;
				a1 = a1 + xr[1] * dA;
				c1 = c1 + xr[1] * dB;
				a2 = a2 + xr[2] * dA;
				c2 = c2 + xr[2] * dB;
				a3 = a3 + xr[3] * dA;
				c3 = c3 + xr[3] * dB;
			}
			ST(VF, d0 + j, a0);
			ST(VF, d0 + j + KT_VW, c0);
			ST(VF, d1 + j, a1);
			ST(VF, d1 + j + KT_VW, c1);
			ST(VF, d2 + j, a2);
			ST(VF, d2 + j + KT_VW, c2);
			ST(VF, d3 + j, a3);
			ST(VF, d3 + j + KT_VW, c3);
		}
		for (; j + KT_VW <= out; j += KT_VW) {
			VF a0 = zv, a1 = zv, a2 = zv, a3 = zv;
			for (r = 0; r < rows; r++) {
				const float *xr = x + r * in + k;
				VF dA = LD(VF, dy + r * out + j);
				a0 = a0 + xr[0] * dA;
				a1 = a1 + xr[1] * dA;
				a2 = a2 + xr[2] * dA;
				a3 = a3 + xr[3] * dA;
			}
			ST(VF, d0 + j, a0);
			ST(VF, d1 + j, a1);
			ST(VF, d2 + j, a2);
			ST(VF, d3 + j, a3);
		}
		for (; j + 4 <= out; j += 4) {
			V4 a0 = z4, a1 = z4, a2 = z4, a3 = z4;
			for (r = 0; r < rows; r++) {
				const float *xr = x + r * in + k;
				V4 dA = LD(V4, dy + r * out + j);
				a0 = a0 + xr[0] * dA;
				a1 = a1 + xr[1] * dA;
				a2 = a2 + xr[2] * dA;
				a3 = a3 + xr[3] * dA;
			}
			ST(V4, d0 + j, a0);
			ST(V4, d1 + j, a1);
			ST(V4, d2 + j, a2);
			ST(V4, d3 + j, a3);
		}
		for (; j < out; j++) {
			float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
			for (r = 0; r < rows; r++) {
				const float *xr = x + r * in + k;
				float dv = dy[r * out + j];
				a0 = a0 + xr[0] * dv;
				a1 = a1 + xr[1] * dv;
				a2 = a2 + xr[2] * dv;
				a3 = a3 + xr[3] * dv;
			}
			d0[j] = a0;
			d1[j] = a1;
			d2[j] = a2;
			d3[j] = a3;
		}
	}
	for (; k < in; k++) {
		float *dk = dw + k * out;
		for (j = 0; j + KT_VW <= out; j += KT_VW) {
			VF a0 = zv;
			for (r = 0; r < rows; r++)
				a0 = a0 + x[r * in + k] * LD(VF, dy + r * out + j);
			ST(VF, dk + j, a0);
		}
		for (; j + 4 <= out; j += 4) {
			V4 a0 = z4;
			for (r = 0; r < rows; r++)
				a0 = a0 + x[r * in + k] * LD(V4, dy + r * out + j);
			ST(V4, dk + j, a0);
		}
		for (; j < out; j++) {
			float a0 = 0.0f;
			for (r = 0; r < rows; r++)
				a0 = a0 + x[r * in + k] * dy[r * out + j];
			dk[j] = a0;
		}
	}
	for (j = 0; j + KT_VW <= out; j += KT_VW) {
		VF a0 = zv;
		for (r = 0; r < rows; r++)
			a0 = a0 + LD(VF, dy + r * out + j);
		ST(VF, db + j, a0);
	}
	for (; j + 4 <= out; j += 4) {
		V4 a0 = z4;
		for (r = 0; r < rows; r++)
			a0 = a0 + LD(V4, dy + r * out + j);
		ST(V4, db + j, a0);
	}
	for (; j < out; j++) {
		float a0 = 0.0f;
		for (r = 0; r < rows; r++)
			a0 = a0 + dy[r * out + j];
		db[j] = a0;
	}
}

/*
 * AdamW (kernel.h), a vector at a time, then a scalar tail.  With tame
 * constants (adamw_tame: each 0 or of magnitude 2^-20 .. 2^20), a lane
 * whose g is 0 or at least 2^-52 in magnitude and whose m, v and w are
 * each 0 or at least 2^-100 meets no subnormal operand or result in the
 * products, the square root and the quotient before m / den (the
 * smallest: (omb2 g) g >= 2^-20 2^-104 = 2^-124); m / den and
 * step_size (m / den) are held clear of the range by their exponents.
 * The vector steps every such lane in float, with no assist; the others
 * are given zeros in the vector (which make no subnormal) and stepped
 * after it, each by adamw_lane_exact, with the same bits.  The tail too.
 */
#define KT_IN(a, lo) (((a) == 0) | ((a) >= (lo)))
/* mi 0, or normal with mi / den and step_size (mi / den) at least
 * 2^-126: |q| > 2^(em - ed - 1), em and ed the biased exponents (den is
 * 0 or normal: tame constants, eps >= 0) */
#define KT_QOK(ok, mi, den)                                                    \
	do {                                                                   \
		VI ma = (VI)(mi) & abs;                                        \
		ok = (ma == 0) | ((ma >= zi + 0x00800000) &                    \
				  ((ma >> 23) - ((VI)(den) >> 23) >= qmin));   \
	} while (0)
KT_ATTR static void
KT(adamw)(float *restrict w, const float *restrict g, float *restrict m,
	  float *restrict v, size_t n, const struct kernel_adamw *kp)
{
	const float b1 = kp->b1, omb1 = kp->omb1, b2 = kp->b2, omb2 = kp->omb2;
	const float decay = kp->decay, step = kp->step_size;
	const float bc2 = kp->bc2sqrt, eps = kp->eps;
	const int tame = adamw_tame(kp);
	const VF zf = { 0 };
	const VI zi = { 0 }, abs = zi + 0x7fffffff;
	/* magnitudes as bits: 2^-52, 2^-100; step_size's exponent */
	const int32_t lo_g = (127 - 52) << 23, lo_x = (127 - 100) << 23;
	int32_t estep, qmin;
	size_t i = 0;

	memcpy(&estep, &step, sizeof(estep));
	estep = ((estep >> 23) & 0xff) - 127;
	/* em - ed >= -125 for q, and >= -125 - estep for step_size q */
	qmin = estep < 0 ? -125 - estep : -125;
	for (; i + KT_VW <= n; i += KT_VW) {
		VF gi = LD(VF, g + i), m0 = LD(VF, m + i), v0 = LD(VF, v + i);
		VF w0 = LD(VF, w + i), mi, vi, den;
		VI safe, ok;

		if (!tame) {
			mi = b1 * m0 + omb1 * gi;
			vi = b2 * v0 + (omb2 * gi) * gi;
			den = KT_VSQRT(vi) / bc2 + eps;
			ST(VF, m + i, mi);
			ST(VF, v + i, vi);
			ST(VF, w + i, w0 * decay - step * (mi / den));
			continue;
		}
		safe = KT_IN((VI)gi & abs, lo_g) & KT_IN((VI)m0 & abs, lo_x) &
		       KT_IN((VI)v0 & abs, lo_x) & KT_IN((VI)w0 & abs, lo_x);
		if (KT_ALL(safe)) { /* as a rule */
			mi = b1 * m0 + omb1 * gi;
			vi = b2 * v0 + (omb2 * gi) * gi;
			den = KT_VSQRT(vi) / bc2 + eps;
			KT_QOK(ok, mi, den);
			if (KT_ALL(ok)) {
				ST(VF, m + i, mi);
				ST(VF, v + i, vi);
				ST(VF, w + i, w0 * decay - step * (mi / den));
				continue;
			}
		}
		mi = b1 * SEL(safe, m0, zf) + omb1 * SEL(safe, gi, zf);
		vi = b2 * SEL(safe, v0, zf) +
		     (omb2 * SEL(safe, gi, zf)) * SEL(safe, gi, zf);
		den = KT_VSQRT(vi) / bc2 + eps;
		KT_QOK(ok, mi, den);
		safe &= ok;
		ST(VF, m + i, mi);
		ST(VF, v + i, vi);
		ST(VF, w + i, SEL(safe, w0, zf) * decay -
				      step * (SEL(ok, mi, zf) / SEL(ok, den, zf + 1.0f)));
		for (int l = 0; l < KT_VW; l++) {
			float wl = w0[l], ml = m0[l], vl = v0[l];
			if (safe[l])
				continue;
			adamw_lane_exact(&wl, gi[l], &ml, &vl, kp);
			w[i + l] = wl;
			m[i + l] = ml;
			v[i + l] = vl;
		}
	}
	for (; i < n; i++)
		adamw_lane_exact(w + i, g[i], m + i, v + i, kp);
}
#undef KT_IN
#undef KT_QOK


/*
 * fm_expf_inline and fm_logf_inline (fmath.h) a vector at a time: the
 * same operations in the same order on every lane, selects written as
 * bit masks, so each lane is bit-identical to the scalar function (the
 * unit tests compare them).
 */
KT_ATTR static void
KT(expv)(const float *x, float *y, size_t n)
{
	const VF zf = { 0 };
	const VI zi = { 0 };
	size_t i = 0;

	for (; i + KT_VW <= n; i += KT_VW) {
		VF xv = LD(VF, x + i);
		VF xc = SEL(xv > SPF(89.0f), SPF(89.0f), xv);
		xc = SEL(xv >= SPF(-104.0f), xc, SPF(-104.0f));
		VF v = xc * FM_LOG2E;
		VF h = SEL(v < zf, SPF(-0.5f), SPF(0.5f));
		VI k = __builtin_convertvector(v + h, VI);
		VF kf = __builtin_convertvector(k, VF);
		VF r = xc - kf * FM_LN2_HI;
		VI hi = k > SPI(127), lo = k < SPI(-126);
		VI k1 = SELI(hi, k - 1, SELI(lo, k + 100, k));
		VF f2 = SEL(hi, SPF(2.0f), SEL(lo, SPF(0x1p-100f), SPF(1.0f)));
		VF p;

		r = r - kf * FM_LN2_LO;
		p = SPF(1.0f / 5040.0f);
		p = 1.0f / 720.0f + r * p;
		p = 1.0f / 120.0f + r * p;
		p = 1.0f / 24.0f + r * p;
		p = 1.0f / 6.0f + r * p;
		p = 0.5f + r * p;
		p = 1.0f + r * p;
		p = 1.0f + r * p;
		p = (p * (VF)((k1 + 127) << 23)) * f2;
		p = SEL(xv < SPF(-103.98f), zf, p);
		p = SEL(xv > SPF(88.72283935546875f), SPF(__builtin_inff()), p);
		p = SEL(xv != xv, xv, p);
		ST(VF, y + i, p);
	}
	for (; i < n; i++)
		y[i] = fm_expf_inline(x[i]);
}

KT_ATTR static void
KT(logv)(const float *x, float *y, size_t n)
{
	const VF zf = { 0 };
	const VI zi = { 0 };
	size_t i = 0;

	for (; i + KT_VW <= n; i += KT_VW) {
		VF xv = LD(VF, x + i);
		VI ix = (VI)xv;
		VI sub = (VI)((VU)ix < (VU)(zi + 0x00800000));
		VF xs = SEL(sub, xv * 0x1p25f, xv);
		VI is = (VI)xs;
		VI e = ((is >> 23) & 0xff) - 127 - (sub & 25);
		VF m = (VF)((is & 0x007fffff) | 0x3f800000);
		VI big = m > SPF(1.41421356f);
		VF f, s, z, R, hfsq, dk, res;

		m = SEL(big, m * 0.5f, m);
		e = e + (big & 1);
		f = m - 1.0f;
		s = f / (2.0f + f);
		z = s * s;
		R = SPF(0.18181818181f);
		R = 0.22222222222f + z * R;
		R = 0.28571428571f + z * R;
		R = 0.40000000000f + z * R;
		R = 0.66666666666f + z * R;
		R = z * R;
		hfsq = 0.5f * f * f;
		dk = __builtin_convertvector(e, VF);
		res = dk * FM_LN2_HI - ((hfsq - (s * (hfsq + R) + dk * FM_LN2_LO)) - f);
		res = SEL(ix == SPI(0x7f800000), xv, res);
		res = SEL(xv == zf, SPF(-__builtin_inff()), res);
		res = SEL(xv < zf, SPF(__builtin_nanf("")), res);
		res = SEL(xv != xv, xv, res);
		ST(VF, y + i, res);
	}
	for (; i < n; i++)
		y[i] = fm_logf_inline(x[i]);
}

/*
 * Hidden activation (kernel.h), with rng_bits32 (rng.h) computed a vector
 * of indices at a time: the same 32-bit integer operations per lane.
 */
KT_ATTR static void
KT(activate)(const float *restrict z, float *restrict h, float *restrict g,
	     size_t n, uint64_t key, uint32_t base, uint32_t t, float scale)
{
	const VF zf = { 0 };
	const VI zi = { 0 };
	VU lane;
	size_t i = 0;

	for (int l = 0; l < KT_VW; l++)
		lane[l] = (uint32_t)l;
	for (; i + KT_VW <= n; i += KT_VW) {
		VF zv = LD(VF, z + i);
		VI on = zv > zf;
		if (t != 0) {
			VU x = (lane + (base + (uint32_t)i)) * 0x9E3779B1u;
			x ^= (uint32_t)key;
			x ^= x >> 16;
			x *= 0x85EBCA6Bu;
			x ^= x >> 13;
			x *= 0xC2B2AE35u;
			x ^= x >> 16;
			x += (uint32_t)(key >> 32);
			x ^= x >> 15;
			x *= 0x2C1B3C6Du;
			x ^= x >> 12;
			x *= 0x297A2D39u;
			x ^= x >> 15;
			on &= (VI)((x >> 8) >= (VU)(zi + (int32_t)t));
			ST(VF, g + i, SEL(on, SPF(scale), zf));
			ST(VF, h + i, SEL(on, zv * scale, zf));
		} else {
			ST(VF, g + i, SEL(on, SPF(1.0f), zf));
			ST(VF, h + i, SEL(on, zv, zf));
		}
	}
	for (; i < n; i++) {
		int on = z[i] > 0.0f;
		if (t != 0)
			on &= (rng_bits32(key, base + (uint32_t)i) >> 8) >= t;
		g[i] = on ? (t != 0 ? scale : 1.0f) : 0.0f;
		h[i] = on ? (t != 0 ? z[i] * scale : z[i]) : 0.0f;
	}
}

#undef SPF
#undef SPI
#undef SEL
#undef SELI
#undef VI
#undef VU
#undef VF
#undef V4
#undef LD
#undef ST
#undef KT
#undef KT_CAT
#undef KT_CAT2
