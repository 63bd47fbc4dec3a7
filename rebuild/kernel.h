/*
 * kernel.h - the dense kernels of the trainer, strict and fast.
 *
 * Layouts are row-major and contiguous: a block of `rows` examples is a
 * rows x in matrix; a layer's weights are W[in][out] (the forward layout)
 * with the transposed copy WT[out][in] kept beside it for the backward
 * pass; biases are b[out].
 *
 * Strict kernels fix the accumulation order of every output element:
 *   linear:  y[r][j] = ((b[j] + x[r][0] w[0][j]) + x[r][1] w[1][j]) + ...
 *   back_dx: dx[r][k] = ((0 + dy[r][0] wt[0][k]) + dy[r][1] wt[1][k]) + ...
 *   back_dw: dw[k][j] = ((0 + x[0][k] dy[0][j]) + x[1][k] dy[1][j]) + ...
 *            db[j]    = ((0 + dy[0][j]) + dy[1][j]) + ...
 * i.e. one sequential sum per element over the reduced index.  The loops
 * vectorize across the element index (j or k), never across the sum, so
 * SIMD width, unrolling and the compiler cannot change a bit.
 *
 * Fast kernels compute the same quantities with OpenBLAS sgemm, whose
 * order depends on the BLAS core and thread count.
 */
#ifndef RBA_KERNEL_H
#define RBA_KERNEL_H

#include <stddef.h>

struct kernel_ops {
	const char *name; /* "strict" or "fast" */
	void (*linear)(const float *x, size_t rows, size_t in, const float *w,
		       const float *b, size_t out, float *y);
	void (*back_dx)(const float *dy, size_t rows, size_t out,
			const float *w, const float *wt, size_t in, float *dx);
	/* Overwrites dw (in x out) and db (out) with this block's sums. */
	void (*back_dw)(const float *x, const float *dy, size_t rows,
			size_t in, size_t out, float *dw, float *db);
};

/* The strict kernels (pure C, fixed order). */
const struct kernel_ops *kernel_strict(void);

/*
 * The fast kernels; sets OpenBLAS's thread count to threads (>= 1).
 * Defined in kernel_fast.c, the only file that includes cblas.h.
 */
const struct kernel_ops *kernel_fast(unsigned threads);

/*
 * OpenBLAS's build configuration, the core it selected at run time and
 * its current thread count (for the environment record).  Strings are
 * static, never NULL.
 */
const char *kernel_blas_config(void);
const char *kernel_blas_corename(void);
int kernel_blas_threads(void);

/* Naive double-precision references (tests only). */
void kernel_ref_linear(const float *x, size_t rows, size_t in, const float *w,
		       const float *b, size_t out, float *y);

#endif
