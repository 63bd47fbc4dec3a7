/*
 * kernel_strict.c - fixed-order kernels for strict mode.
 *
 * Every output element is one sequential sum over the reduced index (see
 * kernel.h).  The tiles below keep a 4 x 16 block of sums in registers
 * and walk the reduced index once, which the compiler vectorizes across
 * the 16 independent columns: the additions into any one element still
 * happen one after another in index order, so the bits do not depend on
 * the vector width.  The same bodies are compiled for the baseline ISA
 * and, on x86-64, for AVX2 and AVX-512 (chosen at run time); contraction
 * into FMA is off for the whole build (-ffp-contract=off), so the three
 * give identical results.
 */
#include "rebuild/kernel.h"

#include <string.h>

#define TR 4  /* rows of a tile */
#define TJ 16 /* columns of a tile */

#define INLINE static inline __attribute__((always_inline))

/* y = (b or 0) + x w, rows x in times in x out. */
INLINE void
linear_body(const float *restrict x, size_t rows, size_t in,
	    const float *restrict w, const float *restrict b, size_t out,
	    float *restrict y)
{
	size_t r = 0, j, k, q, t;

	for (; r + TR <= rows; r += TR) {
		const float *x0 = x + r * in;
		for (j = 0; j + TJ <= out; j += TJ) {
			float a[TR][TJ];
			for (q = 0; q < TR; q++)
				for (t = 0; t < TJ; t++)
					a[q][t] = b ? b[j + t] : 0.0f;
			for (k = 0; k < in; k++) {
				const float *wk = w + k * out + j;
				for (q = 0; q < TR; q++) {
					float xv = x0[q * in + k];
					for (t = 0; t < TJ; t++)
						a[q][t] += xv * wk[t];
				}
			}
			for (q = 0; q < TR; q++)
				memcpy(y + (r + q) * out + j, a[q], sizeof(a[q]));
		}
		for (; j < out; j++) {
			float a[TR];
			for (q = 0; q < TR; q++)
				a[q] = b ? b[j] : 0.0f;
			for (k = 0; k < in; k++) {
				float wv = w[k * out + j];
				for (q = 0; q < TR; q++)
					a[q] += x0[q * in + k] * wv;
			}
			for (q = 0; q < TR; q++)
				y[(r + q) * out + j] = a[q];
		}
	}
	for (; r < rows; r++) {
		float *yr = y + r * out;
		for (j = 0; j < out; j++)
			yr[j] = b ? b[j] : 0.0f;
		for (k = 0; k < in; k++) {
			float xv = x[r * in + k];
			const float *wk = w + k * out;
			for (j = 0; j < out; j++)
				yr[j] += xv * wk[j];
		}
	}
}

/* dw = x^T dy (sums over rows in order), db = column sums of dy. */
INLINE void
dw_body(const float *restrict x, const float *restrict dy, size_t rows,
	size_t in, size_t out, float *restrict dw, float *restrict db)
{
	size_t k = 0, j, r, q, t;

	for (; k + TR <= in; k += TR) {
		for (j = 0; j + TJ <= out; j += TJ) {
			float a[TR][TJ];
			memset(a, 0, sizeof(a));
			for (r = 0; r < rows; r++) {
				const float *dr = dy + r * out + j;
				const float *xr = x + r * in + k;
				for (q = 0; q < TR; q++) {
					float xv = xr[q];
					for (t = 0; t < TJ; t++)
						a[q][t] += xv * dr[t];
				}
			}
			for (q = 0; q < TR; q++)
				memcpy(dw + (k + q) * out + j, a[q], sizeof(a[q]));
		}
		for (; j < out; j++) {
			float a[TR] = { 0 };
			for (r = 0; r < rows; r++) {
				float dv = dy[r * out + j];
				for (q = 0; q < TR; q++)
					a[q] += x[r * in + k + q] * dv;
			}
			for (q = 0; q < TR; q++)
				dw[(k + q) * out + j] = a[q];
		}
	}
	for (; k < in; k++) {
		float *dk = dw + k * out;
		for (j = 0; j < out; j++)
			dk[j] = 0.0f;
		for (r = 0; r < rows; r++) {
			float xv = x[r * in + k];
			const float *dr = dy + r * out;
			for (j = 0; j < out; j++)
				dk[j] += xv * dr[j];
		}
	}
	for (j = 0; j < out; j++)
		db[j] = 0.0f;
	for (r = 0; r < rows; r++)
		for (j = 0; j < out; j++)
			db[j] += dy[r * out + j];
}

#define DEFINE_KERNELS(sfx, attr)                                              \
	attr static void strict_linear_##sfx(const float *x, size_t rows,      \
					     size_t in, const float *w,        \
					     const float *b, size_t out,       \
					     float *y)                         \
	{                                                                      \
		linear_body(x, rows, in, w, b, out, y);                        \
	}                                                                      \
	attr static void strict_back_dx_##sfx(const float *dy, size_t rows,    \
					      size_t out, const float *w,      \
					      const float *wt, size_t in,      \
					      float *dx)                       \
	{                                                                      \
		(void)w;                                                       \
		linear_body(dy, rows, out, wt, NULL, in, dx);                  \
	}                                                                      \
	attr static void strict_back_dw_##sfx(const float *x, const float *dy, \
					      size_t rows, size_t in,          \
					      size_t out, float *dw,           \
					      float *db)                       \
	{                                                                      \
		dw_body(x, dy, rows, in, out, dw, db);                         \
	}                                                                      \
	static const struct kernel_ops strict_ops_##sfx = {                    \
		"strict", strict_linear_##sfx, strict_back_dx_##sfx,           \
		strict_back_dw_##sfx,                                          \
	};

DEFINE_KERNELS(base, )

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_X86 1
DEFINE_KERNELS(avx2, __attribute__((target("avx2"))))
DEFINE_KERNELS(avx512, __attribute__((target("avx512f"))))
#endif

const struct kernel_ops *
kernel_strict(void)
{
#ifdef KERNEL_X86
	/* The choice only changes speed: the bodies are the same sums. */
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return &strict_ops_avx512;
	if (__builtin_cpu_supports("avx2"))
		return &strict_ops_avx2;
#endif
	return &strict_ops_base;
}

void
kernel_ref_linear(const float *x, size_t rows, size_t in, const float *w,
		  const float *b, size_t out, float *y)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < out; j++) {
			double s = b ? b[j] : 0.0;
			for (size_t k = 0; k < in; k++)
				s += (double)x[r * in + k] * w[k * out + j];
			y[r * out + j] = (float)s;
		}
}
