/*
 * kernel_fast.c - fast-mode kernels on OpenBLAS sgemm.  The only file of
 * the tree that includes cblas.h.
 *
 * OpenBLAS is loaded when first needed, not linked: a threaded OpenBLAS
 * starts its worker threads as it loads, and they would spin in every
 * command, strict ones included, which never call BLAS.  Loading it here
 * lets OPENBLAS_NUM_THREADS be set first: one thread unless the user set
 * it, raised to the pinned count by kernel_fast().
 */
#include "train/kernel.h"

#include <cblas.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLAS_SONAME "libopenblas.so.0"

static struct {
	int tried;
	void *h;
	__typeof__(cblas_sgemm) *sgemm;
	__typeof__(openblas_set_num_threads) *set_num_threads;
	__typeof__(openblas_get_num_threads) *get_num_threads;
	__typeof__(openblas_get_config) *get_config;
	__typeof__(openblas_get_corename) *get_corename;
	char why[256];
} blas;

/* 1 when OpenBLAS is loaded (loading it the first time), else 0. */
static int
blas_load(void)
{
	if (blas.tried)
		return blas.h != NULL;
	blas.tried = 1;
	(void)setenv("OPENBLAS_NUM_THREADS", "1", 0);
	blas.h = dlopen(BLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (blas.h == NULL) {
		snprintf(blas.why, sizeof(blas.why), "unavailable: %s", dlerror());
		return 0;
	}
	/* POSIX's way from a data pointer to a function pointer. */
	*(void **)&blas.sgemm = dlsym(blas.h, "cblas_sgemm");
	*(void **)&blas.set_num_threads = dlsym(blas.h, "openblas_set_num_threads");
	*(void **)&blas.get_num_threads = dlsym(blas.h, "openblas_get_num_threads");
	*(void **)&blas.get_config = dlsym(blas.h, "openblas_get_config");
	*(void **)&blas.get_corename = dlsym(blas.h, "openblas_get_corename");
	if (blas.sgemm == NULL || blas.set_num_threads == NULL ||
	    blas.get_num_threads == NULL || blas.get_config == NULL ||
	    blas.get_corename == NULL) {
		snprintf(blas.why, sizeof(blas.why),
			 "unavailable: %s lacks OpenBLAS's functions", BLAS_SONAME);
		dlclose(blas.h);
		blas.h = NULL;
		return 0;
	}
	return 1;
}

const char *
kernel_blas_unavailable(void)
{
	return blas_load() ? NULL : blas.why;
}

static void
fast_linear(const float *x, size_t rows, size_t in, const float *w,
	    const float *b, size_t out, float *y)
{
	for (size_t r = 0; r < rows; r++)
		memcpy(y + r * out, b, out * sizeof(float));
	blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows,
		    (int)out, (int)in, 1.0f, x, (int)in, w, (int)out, 1.0f, y,
		    (int)out);
}

static void
fast_back_dx(const float *dy, size_t rows, size_t out, const float *w,
	     const float *wt, size_t in, float *dx)
{
	(void)wt;
	blas.sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows,
		    (int)in, (int)out, 1.0f, dy, (int)out, w, (int)out, 0.0f,
		    dx, (int)in);
}

static void
fast_back_dw(const float *x, const float *dy, size_t rows, size_t in,
	     size_t out, float *dw, float *db)
{
	blas.sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)in,
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

	if (!blas_load())
		return NULL;
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
	blas.set_num_threads(threads < 1 ? 1 : (int)threads);
	return &fast_ops;
}

const char *
kernel_blas_config(void)
{
	const char *s;

	if (!blas_load())
		return blas.why;
	s = blas.get_config();
	return s ? s : "unknown";
}

const char *
kernel_blas_corename(void)
{
	const char *s;

	if (!blas_load())
		return blas.why;
	s = blas.get_corename();
	return s ? s : "unknown";
}

int
kernel_blas_threads(void)
{
	return blas_load() ? blas.get_num_threads() : 0;
}
