/*
 * kernel_fast.c - fast-mode kernels on OpenBLAS sgemm.  The only file of
 * the tree that includes cblas.h.
 */
#include "rebuild/kernel.h"

#include <cblas.h>
#include <string.h>

static void
fast_linear(const float *x, size_t rows, size_t in, const float *w,
	    const float *b, size_t out, float *y)
{
	for (size_t r = 0; r < rows; r++)
		memcpy(y + r * out, b, out * sizeof(float));
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows,
		    (int)out, (int)in, 1.0f, x, (int)in, w, (int)out, 1.0f, y,
		    (int)out);
}

static void
fast_back_dx(const float *dy, size_t rows, size_t out, const float *w,
	     const float *wt, size_t in, float *dx)
{
	(void)wt;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows,
		    (int)in, (int)out, 1.0f, dy, (int)out, w, (int)out, 0.0f,
		    dx, (int)in);
}

static void
fast_back_dw(const float *x, const float *dy, size_t rows, size_t in,
	     size_t out, float *dw, float *db)
{
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)in,
		    (int)out, (int)rows, 1.0f, x, (int)in, dy, (int)out, 0.0f,
		    dw, (int)out);
	memset(db, 0, out * sizeof(float));
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < out; j++)
			db[j] += dy[r * out + j];
}

static struct kernel_ops fast_ops;

const struct kernel_ops *
kernel_fast(unsigned threads)
{
	const struct kernel_ops *s = kernel_strict();

	/* The elementwise updates are not BLAS work: share strict's. */
	fast_ops.name = "fast";
	fast_ops.linear = fast_linear;
	fast_ops.back_dx = fast_back_dx;
	fast_ops.back_dw = fast_back_dw;
	fast_ops.adamw = s->adamw;
	fast_ops.sgd = s->sgd;
	fast_ops.add = s->add;
	fast_ops.activate = s->activate;
	fast_ops.mul = s->mul;
	fast_ops.expv = s->expv;
	fast_ops.logv = s->logv;
	openblas_set_num_threads(threads < 1 ? 1 : (int)threads);
	return &fast_ops;
}

const char *
kernel_blas_config(void)
{
	const char *s = openblas_get_config();

	return s ? s : "unknown";
}

const char *
kernel_blas_corename(void)
{
	const char *s = openblas_get_corename();

	return s ? s : "unknown";
}

int
kernel_blas_threads(void)
{
	return openblas_get_num_threads();
}
