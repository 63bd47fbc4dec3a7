/*
 * kernel_fma_tmpl.h - ABI 2's kernel bodies (kernel_fma.c), instantiated
 * once per instruction set with KT_SFX (name suffix), KT_ATTR (a target
 * attribute or nothing), KT_VW (floats per vector) and the fused
 * multiply-adds KT_VFMA (vectors of KT_VW), KT_4FMA (vectors of 4) and
 * KT_SFMA (floats), each a * b + c rounded once, and KT_TILE (the
 * rows of the products' wide tiles, two vectors each: 8 where 32 vector
 * registers hold 16 sums, 6 where 16 hold 12, 0 for none) defined.  Not
 * a public header.
 *
 * The loops are kernel_tmpl.h's (ABI 1's, copied, never shared: ABI 1
 * is frozen) with each multiply-accumulate written as one fused
 * multiply-add: y = fma(x[k], w[k][j], y) for k in order, starting from
 * the bias or 0.  Vectors put several j side by side, so the vector
 * width, the tile and the tail that handles an element never change a
 * bit.  The bias sums of back_dw (db) have no product and stay plain
 * additions.  The build has -ffp-contract=off: nothing else is fused.
 */
/* Rows of 4-lane sums per tile in narrow layers (flinear, fdw): 8
 * sums in flight cover the latency of the fused multiply-add. */
#define KT_NROWS 8
/*
 * Whether a tile of KT_TILE rows is taken when left rows remain: while
 * they are at least a tile and not a whole number of 4-row tiles that
 * one tile more would break into single rows (6-row tiles take 32 rows
 * as 4 x 6 + 2 x 4, 8-row tiles as 4 x 8).
 */
#define TILE_MORE(left)                                                        \
	((left) >= KT_TILE &&                                                  \
	 ((left) == KT_TILE || (left) % 4 != 0 || (left) >= KT_TILE + 4))
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
/* A splat that keeps the sign of a zero: x - 0 is x for every x. */
#define BV(s) ((s) - zv)
#define B4(s) ((s) - z4)
#define SEL(m, a, b) ((VF)(((VI)(a) & (m)) | ((VI)(b) & ~(m))))
#define LD(T, p) (*(const T *)(const void *)(p))
#define ST(T, p, v) (*(T *)(void *)(p) = (v))
/* flinear's store: v, or v times the gate at the same place. */
#define PUTG(T, p, v)                                                          \
	do {                                                                   \
		T v_ = (v);                                                    \
		if (g != NULL)                                                 \
			v_ = v_ * LD(T, g + ((p) - y));                        \
		ST(T, p, v_);                                                  \
	} while (0)
#define PUTG1(p, v) (*(p) = g ? (v) * g[(p) - y] : (v))
/* fdw's store: v, or v added to what is there. */
#define PUTA(T, p, v)                                                          \
	do {                                                                   \
		T v_ = (v);                                                    \
		if (acc)                                                       \
			v_ = LD(T, p) + v_;                                    \
		ST(T, p, v_);                                                  \
	} while (0)
#define PUTA1(p, v) (*(p) = acc ? *(p) + (v) : (v))

/*
 * y[r][j] = (b[j] or 0) + sum over k in order of x[r][k] w[k][j], the
 * sum rounded and then, with g, times g[r][j] (g laid out as y): back_dx
 * and the mask of the layer below in one pass, the same two roundings.
 */
KT_ATTR static void
KT(flinear)(const float *restrict x, size_t rows, size_t in,
	   const float *restrict w, const float *restrict b, size_t out,
	   const float *restrict g, float *restrict y)
{
	const VF zv = { 0 };
	const V4 z4 = { 0 };
	size_t r = 0, j, k;

#if KT_TILE
	/* KT_TILE rows at a time when the columns are whole pairs of
	 * vectors: the same sums, more of them in flight (TILE_MORE says
	 * when to take another). */
	for (; out % (2 * KT_VW) == 0 && TILE_MORE(rows - r); r += KT_TILE)
		for (j = 0; j < out; j += 2 * KT_VW) {
			VF a[KT_TILE], c[KT_TILE];
#pragma GCC unroll 8
			for (int q = 0; q < KT_TILE; q++) {
				a[q] = b ? LD(VF, b + j) : zv;
				c[q] = b ? LD(VF, b + j + KT_VW) : zv;
			}
			for (k = 0; k < in; k++) {
				VF wA = LD(VF, w + k * out + j);
				VF wB = LD(VF, w + k * out + j + KT_VW);
#pragma GCC unroll 8
				for (int q = 0; q < KT_TILE; q++) {
					VF xv = BV(x[(r + q) * in + k]);
					a[q] = KT_VFMA(xv, wA, a[q]);
					c[q] = KT_VFMA(xv, wB, c[q]);
				}
			}
#pragma GCC unroll 8
			for (int q = 0; q < KT_TILE; q++) {
				PUTG(VF, y + (r + q) * out + j, a[q]);
				PUTG(VF, y + (r + q) * out + j + KT_VW, c[q]);
			}
		}
#endif
	/* Narrow layers (the output layer's few classes): KT_NROWS rows
	 * of 4-lane sums at a time, not 4, so that the additions of one
	 * sum, which wait for each other, overlap with those of the
	 * others. */
	for (; out % 4 == 0 && out < KT_VW && r + KT_NROWS <= rows;
	     r += KT_NROWS)
		for (j = 0; j < out; j += 4) {
			V4 a[KT_NROWS];
#pragma GCC unroll 16
			for (int q = 0; q < KT_NROWS; q++)
				a[q] = b ? LD(V4, b + j) : z4;
			for (k = 0; k < in; k++) {
				V4 wA = LD(V4, w + k * out + j);
#pragma GCC unroll 16
				for (int q = 0; q < KT_NROWS; q++)
					a[q] = KT_4FMA(B4(x[(r + q) * in + k]), wA, a[q]);
			}
#pragma GCC unroll 16
			for (int q = 0; q < KT_NROWS; q++)
				PUTG(V4, y + (r + q) * out + j, a[q]);
		}
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
				a0 = KT_VFMA(BV(x0[k]), wA, a0);
				c0 = KT_VFMA(BV(x0[k]), wB, c0);
				a1 = KT_VFMA(BV(x1[k]), wA, a1);
				c1 = KT_VFMA(BV(x1[k]), wB, c1);
				a2 = KT_VFMA(BV(x2[k]), wA, a2);
				c2 = KT_VFMA(BV(x2[k]), wB, c2);
				a3 = KT_VFMA(BV(x3[k]), wA, a3);
				c3 = KT_VFMA(BV(x3[k]), wB, c3);
			}
			PUTG(VF, y0 + j, a0);
			PUTG(VF, y0 + j + KT_VW, c0);
			PUTG(VF, y1 + j, a1);
			PUTG(VF, y1 + j + KT_VW, c1);
			PUTG(VF, y2 + j, a2);
			PUTG(VF, y2 + j + KT_VW, c2);
			PUTG(VF, y3 + j, a3);
			PUTG(VF, y3 + j + KT_VW, c3);
		}
		for (; j + KT_VW <= out; j += KT_VW) {
			VF bA = b ? LD(VF, b + j) : zv;
			VF a0 = bA, a1 = bA, a2 = bA, a3 = bA;
			for (k = 0; k < in; k++) {
				VF wA = LD(VF, w + k * out + j);
				a0 = KT_VFMA(BV(x0[k]), wA, a0);
				a1 = KT_VFMA(BV(x1[k]), wA, a1);
				a2 = KT_VFMA(BV(x2[k]), wA, a2);
				a3 = KT_VFMA(BV(x3[k]), wA, a3);
			}
			PUTG(VF, y0 + j, a0);
			PUTG(VF, y1 + j, a1);
			PUTG(VF, y2 + j, a2);
			PUTG(VF, y3 + j, a3);
		}
		for (; j + 4 <= out; j += 4) {
			V4 bA = b ? LD(V4, b + j) : z4;
			V4 a0 = bA, a1 = bA, a2 = bA, a3 = bA;
			for (k = 0; k < in; k++) {
				V4 wA = LD(V4, w + k * out + j);
				a0 = KT_4FMA(B4(x0[k]), wA, a0);
				a1 = KT_4FMA(B4(x1[k]), wA, a1);
				a2 = KT_4FMA(B4(x2[k]), wA, a2);
				a3 = KT_4FMA(B4(x3[k]), wA, a3);
			}
			PUTG(V4, y0 + j, a0);
			PUTG(V4, y1 + j, a1);
			PUTG(V4, y2 + j, a2);
			PUTG(V4, y3 + j, a3);
		}
		for (; j < out; j++) {
			float bj = b ? b[j] : 0.0f;
			float a0 = bj, a1 = bj, a2 = bj, a3 = bj;
			for (k = 0; k < in; k++) {
				float wv = w[k * out + j];
				a0 = KT_SFMA(x0[k], wv, a0);
				a1 = KT_SFMA(x1[k], wv, a1);
				a2 = KT_SFMA(x2[k], wv, a2);
				a3 = KT_SFMA(x3[k], wv, a3);
			}
			PUTG1(y0 + j, a0);
			PUTG1(y1 + j, a1);
			PUTG1(y2 + j, a2);
			PUTG1(y3 + j, a3);
		}
	}
	for (; r < rows; r++) {
		const float *xr = x + r * in;
		float *yr = y + r * out;
		for (j = 0; j + KT_VW <= out; j += KT_VW) {
			VF a0 = b ? LD(VF, b + j) : zv;
			for (k = 0; k < in; k++)
				a0 = KT_VFMA(BV(xr[k]), LD(VF, w + k * out + j), a0);
			PUTG(VF, yr + j, a0);
		}
		for (; j + 4 <= out; j += 4) {
			V4 a0 = b ? LD(V4, b + j) : z4;
			for (k = 0; k < in; k++)
				a0 = KT_4FMA(B4(xr[k]), LD(V4, w + k * out + j), a0);
			PUTG(V4, yr + j, a0);
		}
		for (; j < out; j++) {
			float a0 = b ? b[j] : 0.0f;
			for (k = 0; k < in; k++)
				a0 = KT_SFMA(xr[k], w[k * out + j], a0);
			PUTG1(yr + j, a0);
		}
	}
}

/*
 * dw[k][j] = 0 + sum over r in order of x[r][k] dy[r][j];
 * db[j] = 0 + sum over r in order of dy[r][j].  With acc, each sum is
 * added to what dw and db hold (dw = dw + sum, rounded once): the
 * reduction of block gradients (kernel add) in the same pass.
 */
KT_ATTR static void
KT(fdw)(const float *restrict x, const float *restrict dy, size_t rows,
       size_t in, size_t out, int acc, float *restrict dw,
       float *restrict db)
{
	const VF zv = { 0 };
	const V4 z4 = { 0 };
	size_t k = 0, j, r;

#if KT_TILE
	/* KT_TILE rows of dw at a time (see flinear). */
	for (; out % (2 * KT_VW) == 0 && TILE_MORE(in - k); k += KT_TILE)
		for (j = 0; j < out; j += 2 * KT_VW) {
			VF a[KT_TILE], c[KT_TILE];
#pragma GCC unroll 8
			for (int q = 0; q < KT_TILE; q++)
				a[q] = c[q] = zv;
			for (r = 0; r < rows; r++) {
				VF dA = LD(VF, dy + r * out + j);
				VF dB = LD(VF, dy + r * out + j + KT_VW);
#pragma GCC unroll 8
				for (int q = 0; q < KT_TILE; q++) {
					VF xv = BV(x[r * in + k + q]);
					a[q] = KT_VFMA(xv, dA, a[q]);
					c[q] = KT_VFMA(xv, dB, c[q]);
				}
			}
#pragma GCC unroll 8
			for (int q = 0; q < KT_TILE; q++) {
				PUTA(VF, dw + (k + q) * out + j, a[q]);
				PUTA(VF, dw + (k + q) * out + j + KT_VW, c[q]);
			}
		}
#endif
	/* Narrow layers: KT_NROWS rows of dw of 4-lane sums at a time
	 * (see flinear). */
	for (; out % 4 == 0 && out < KT_VW && k + KT_NROWS <= in;
	     k += KT_NROWS)
		for (j = 0; j < out; j += 4) {
			V4 a[KT_NROWS];
#pragma GCC unroll 16
			for (int q = 0; q < KT_NROWS; q++)
				a[q] = z4;
			for (r = 0; r < rows; r++) {
				V4 dA = LD(V4, dy + r * out + j);
#pragma GCC unroll 16
				for (int q = 0; q < KT_NROWS; q++)
					a[q] = KT_4FMA(B4(x[r * in + k + q]), dA, a[q]);
			}
#pragma GCC unroll 16
			for (int q = 0; q < KT_NROWS; q++)
				PUTA(V4, dw + (k + q) * out + j, a[q]);
		}
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
				a0 = KT_VFMA(BV(xr[0]), dA, a0);
				c0 = KT_VFMA(BV(xr[0]), dB, c0);
				a1 = KT_VFMA(BV(xr[1]), dA, a1);
				c1 = KT_VFMA(BV(xr[1]), dB, c1);
				a2 = KT_VFMA(BV(xr[2]), dA, a2);
				c2 = KT_VFMA(BV(xr[2]), dB, c2);
				a3 = KT_VFMA(BV(xr[3]), dA, a3);
				c3 = KT_VFMA(BV(xr[3]), dB, c3);
			}
			PUTA(VF, d0 + j, a0);
			PUTA(VF, d0 + j + KT_VW, c0);
			PUTA(VF, d1 + j, a1);
			PUTA(VF, d1 + j + KT_VW, c1);
			PUTA(VF, d2 + j, a2);
			PUTA(VF, d2 + j + KT_VW, c2);
			PUTA(VF, d3 + j, a3);
			PUTA(VF, d3 + j + KT_VW, c3);
		}
		for (; j + KT_VW <= out; j += KT_VW) {
			VF a0 = zv, a1 = zv, a2 = zv, a3 = zv;
			for (r = 0; r < rows; r++) {
				const float *xr = x + r * in + k;
				VF dA = LD(VF, dy + r * out + j);
				a0 = KT_VFMA(BV(xr[0]), dA, a0);
				a1 = KT_VFMA(BV(xr[1]), dA, a1);
				a2 = KT_VFMA(BV(xr[2]), dA, a2);
				a3 = KT_VFMA(BV(xr[3]), dA, a3);
			}
			PUTA(VF, d0 + j, a0);
			PUTA(VF, d1 + j, a1);
			PUTA(VF, d2 + j, a2);
			PUTA(VF, d3 + j, a3);
		}
		for (; j + 4 <= out; j += 4) {
			V4 a0 = z4, a1 = z4, a2 = z4, a3 = z4;
			for (r = 0; r < rows; r++) {
				const float *xr = x + r * in + k;
				V4 dA = LD(V4, dy + r * out + j);
				a0 = KT_4FMA(B4(xr[0]), dA, a0);
				a1 = KT_4FMA(B4(xr[1]), dA, a1);
				a2 = KT_4FMA(B4(xr[2]), dA, a2);
				a3 = KT_4FMA(B4(xr[3]), dA, a3);
			}
			PUTA(V4, d0 + j, a0);
			PUTA(V4, d1 + j, a1);
			PUTA(V4, d2 + j, a2);
			PUTA(V4, d3 + j, a3);
		}
		for (; j < out; j++) {
			float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
			for (r = 0; r < rows; r++) {
				const float *xr = x + r * in + k;
				float dv = dy[r * out + j];
				a0 = KT_SFMA(xr[0], dv, a0);
				a1 = KT_SFMA(xr[1], dv, a1);
				a2 = KT_SFMA(xr[2], dv, a2);
				a3 = KT_SFMA(xr[3], dv, a3);
			}
			PUTA1(d0 + j, a0);
			PUTA1(d1 + j, a1);
			PUTA1(d2 + j, a2);
			PUTA1(d3 + j, a3);
		}
	}
	for (; k < in; k++) {
		float *dk = dw + k * out;
		for (j = 0; j + KT_VW <= out; j += KT_VW) {
			VF a0 = zv;
			for (r = 0; r < rows; r++)
				a0 = KT_VFMA(BV(x[r * in + k]), LD(VF, dy + r * out + j), a0);
			PUTA(VF, dk + j, a0);
		}
		for (; j + 4 <= out; j += 4) {
			V4 a0 = z4;
			for (r = 0; r < rows; r++)
				a0 = KT_4FMA(B4(x[r * in + k]), LD(V4, dy + r * out + j), a0);
			PUTA(V4, dk + j, a0);
		}
		for (; j < out; j++) {
			float a0 = 0.0f;
			for (r = 0; r < rows; r++)
				a0 = KT_SFMA(x[r * in + k], dy[r * out + j], a0);
			PUTA1(dk + j, a0);
		}
	}
	for (j = 0; j + KT_VW <= out; j += KT_VW) {
		VF a0 = zv;
		for (r = 0; r < rows; r++)
			a0 = a0 + LD(VF, dy + r * out + j);
		PUTA(VF, db + j, a0);
	}
	for (; j + 4 <= out; j += 4) {
		V4 a0 = z4;
		for (r = 0; r < rows; r++)
			a0 = a0 + LD(V4, dy + r * out + j);
		PUTA(V4, db + j, a0);
	}
	for (; j < out; j++) {
		float a0 = 0.0f;
		for (r = 0; r < rows; r++)
			a0 = a0 + dy[r * out + j];
		PUTA1(db + j, a0);
	}
}

/*
 * ABI 2's hidden activation (kernel.h, kernel_fma_activate): ReLU with
 * dropout whose draws are made 32 at a time.  Chunk c of the batch's
 * units, units 32c to 32c + 31, takes the 16 words
 * h_l = rng_bits32(key, 16c + l), l = 0..15: unit 32c + l draws the low
 * 16 bits of h_l and unit 32c + 16 + l the high 16 bits.  A unit is kept
 * when its draw is at least t.  The order is the chunk's, not the
 * vector's: every path, and the scalar draw kernel_drop16, give the same
 * draw to the same unit.
 */
KT_ATTR static void
KT(factivate)(const float *restrict z, float *restrict h, float *restrict g,
	      size_t n, uint64_t key, uint32_t base, uint32_t t, float scale)
{
	const VF zf = { 0 };
	const VU zu = { 0 };
	VU lane, lanec, tv = zu + t;
	/* The draws of up to 8 chunks, made before any is used: the hashes
	 * of different chunks do not wait for each other, so the multiplies
	 * of one overlap with those of the next instead of adding up. */
	uint32_t hw[8 * 16] __attribute__((aligned(64)));
	size_t i = 0;

	for (int l = 0; l < KT_VW; l++)
		lane[l] = (uint32_t)l;
	lanec = lane * 0x9E3779B1u;
	if (t == 0) {
		for (; i + KT_VW <= n; i += KT_VW) {
			VF zv = LD(VF, z + i);
			VI on = zv > zf;
			ST(VF, g + i, SEL(on, zf + 1.0f, zf));
			ST(VF, h + i, SEL(on, zv, zf));
		}
	}
	while (t != 0 && i < n) {
		uint32_t u = base + (uint32_t)i;
		size_t chunks = (n - i) / 32;
		if (u % 32 != 0 || chunks == 0) {
			int on = z[i] > 0.0f && kernel_drop16(key, u) >= t;
			g[i] = on ? scale : 0.0f;
			h[i] = on ? z[i] * scale : 0.0f;
			i++;
			continue;
		}
		if (chunks > 8)
			chunks = 8;
		for (uint32_t v = 0; v < chunks * 16; v += KT_VW) {
			/* (lane + i) C = lane C + i C modulo 2^32: the
			 * first product without a vector multiply */
			VU x = lanec + (u / 32 * 16 + v) * 0x9E3779B1u;
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
			ST(VU, hw + v, x);
		}
		for (size_t c = 0; c < chunks; c++, i += 32)
			for (uint32_t v = 0; v < 16; v += KT_VW) {
				VU x = LD(VU, hw + c * 16 + v);
				for (uint32_t half = 0; half < 2; half++) {
					size_t at = i + half * 16 + v;
					VU d = half ? x >> 16 : x & 0xFFFFu;
					VF zv = LD(VF, z + at);
					VI on = (zv > zf) & (VI)(d >= tv);
					ST(VF, g + at, SEL(on, zf + scale, zf));
					ST(VF, h + at, SEL(on, zv * scale, zf));
				}
			}
	}
	for (; i < n; i++) {
		int on = z[i] > 0.0f;
		g[i] = on ? 1.0f : 0.0f;
		h[i] = on ? z[i] : 0.0f;
	}
}

#undef BV
#undef B4
#undef SEL
#undef VI
#undef VU
#undef VF
#undef V4
#undef LD
#undef ST
#undef PUTG
#undef PUTG1
#undef PUTA
#undef PUTA1
#undef KT
#undef KT_CAT
#undef KT_CAT2
#undef KT_NROWS
#undef TILE_MORE
