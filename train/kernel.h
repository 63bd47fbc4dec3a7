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
#include <stdint.h>

/*
 * One AdamW step per element, in this order (PyTorch's):
 *   m = b1 m + omb1 g;  v = b2 v + (omb2 g) g;  w = w decay;
 *   w = w - step_size (m / (sqrt(v) / bc2sqrt + eps))
 * with decay = 1 - lr wd, step_size = lr / (1 - b1^t) and
 * bc2sqrt = sqrt(1 - b2^t) computed once per step by the caller.
 */
struct kernel_adamw {
	float b1, omb1, b2, omb2, decay, step_size, bc2sqrt, eps;
};

/*
 * One SGD step per element: g' = g + wd w; buf = momentum buf + g';
 * w = w - lr buf.
 */
struct kernel_sgd {
	float wd, momentum, lr;
};

struct kernel_ops {
	const char *name; /* "strict" or "fast" */
	void (*linear)(const float *x, size_t rows, size_t in, const float *w,
		       const float *b, size_t out, float *y);
	void (*back_dx)(const float *dy, size_t rows, size_t out,
			const float *w, const float *wt, size_t in, float *dx);
	/* Overwrites dw (in x out) and db (out) with this block's sums. */
	void (*back_dw)(const float *x, const float *dy, size_t rows,
			size_t in, size_t out, float *dw, float *db);
	/* Elementwise updates (the same in both modes). */
	void (*adamw)(float *w, const float *g, float *m, float *v, size_t n,
		      const struct kernel_adamw *k);
	void (*sgd)(float *w, const float *g, float *buf, size_t n,
		    const struct kernel_sgd *k);
	/* acc[i] += x[i] (the reduction of block gradients). */
	void (*add)(float *acc, const float *x, size_t n);
	/*
	 * Hidden activation of n pre-activations z: g = dh/dz and h = z g
	 * (0 where g is 0).  Without dropout (t == 0) g is 1 where z > 0;
	 * with dropout, unit i is kept when rng_bits32(key, base + i) >> 8
	 * is at least t, and a kept positive unit has g = scale.
	 */
	void (*activate)(const float *z, float *h, float *g, size_t n,
			 uint64_t key, uint32_t base, uint32_t t, float scale);
	/* a[i] = a[i] * g[i] */
	void (*mul)(float *a, const float *g, size_t n);
	/* y[i] = fm_expf(x[i]), y[i] = fm_logf(x[i]) (y may equal x). */
	void (*expv)(const float *x, float *y, size_t n);
	void (*logv)(const float *x, float *y, size_t n);
	/*
	 * Two passes in one, where a path has them (NULL elsewhere): the
	 * same bits as the pair they replace.
	 *   back_dx_mul: back_dx, then dx[i] = dx[i] * g[i] (mul)
	 *   back_dw_add: back_dw's sums added into dw and db (add)
	 */
	void (*back_dx_mul)(const float *dy, size_t rows, size_t out,
			    const float *wt, size_t in, const float *g,
			    float *dx);
	void (*back_dw_add)(const float *x, const float *dy, size_t rows,
			    size_t in, size_t out, float *dw, float *db);
};

/*
 * The strict kernels (pure C, fixed order), for the widest vector path
 * this CPU has.  The environment variable RBA_STRICT_ISA (base, avx2,
 * avx512) forces a narrower path, for tests: every path gives the same
 * bits.
 */
const struct kernel_ops *kernel_strict(void);
/* Name of the path kernel_strict() picks: "base", "avx2" or "avx512". */
const char *kernel_strict_isa(void);
/* The same as a number: 0 base, 1 avx2, 2 avx512. */
unsigned kernel_strict_level(void);

/*
 * A loop outside the kernels that is exact lane by lane (the same bits
 * at any vector width) compiled once per strict path and run on the one
 * kernel_strict() picks, so that RBA_STRICT_ISA reaches it too:
 * KERNEL_ISA_EACH(DEF) expands DEF(SFX, ATTR) for base (and, on x86-64,
 * avx2 and avx512), each defining NAME_##SFX; KERNEL_ISA_PICK(NAME) is
 * the one to call.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_ISA_EACH(DEF)                                                   \
	DEF(base, )                                                            \
	DEF(avx2, __attribute__((target("avx2"))))                             \
	DEF(avx512, __attribute__((target("avx512f"))))
#define KERNEL_ISA_PICK(NAME)                                                  \
	(((__typeof__(&NAME##_base)[]){ NAME##_base, NAME##_avx2,              \
					NAME##_avx512 })[kernel_strict_level()])
#else
#define KERNEL_ISA_EACH(DEF) DEF(base, )
#define KERNEL_ISA_PICK(NAME) (NAME##_base)
#endif
/* The paths this CPU has, narrowest first, into names (at most 3): their
 * count.  Each is a value RBA_STRICT_ISA takes. */
size_t kernel_strict_isas(const char *names[3]);

/*
 * ABI 2's strict kernels (kernel_fma.c): ABI 1's, with every
 * multiply-accumulate of a dot product one fused multiply-add, rounded
 * once, in the same order:
 *   linear:  y[r][j] = fma(x[r][in-1], w[in-1][j], ... fma(x[r][0],
 *            w[0][j], b[j]))   (0 for b when b is NULL)
 *   back_dx: the same over dy and wt, from 0
 *   back_dw: dw[k][j] = fma(x[rows-1][k], dy[rows-1][j], ... fma(x[0][k],
 *            dy[0][j], 0)); db[j] plain additions, as in ABI 1
 * and dropout's draws made 32 at a time (activate): unit u of the batch
 * (u = base + i) draws kernel_drop16(key, u) and is kept when that is at
 * least t (16-bit threshold); a kept positive unit has g = scale.  The
 * elementwise kernels (adamw, sgd, add, mul, expv, logv) are ABI 1's;
 * back_dx_mul and back_dw_add are filled.
 * kernel_fma fills *out for the widest path this CPU has (RBA_STRICT_ISA
 * narrows it, as for kernel_strict); every path gives the same bits.
 */
void kernel_fma(struct kernel_ops *out);
/* The ABI 2 path named isa ("base", "avx2", "avx512") into *out: 0, or
 * -1 when this CPU does not have it.  For tests. */
int kernel_fma_path(const char *isa, struct kernel_ops *out);
/* The paths this CPU has for ABI 2, narrowest first: their count.  avx2
 * and avx512 need the FMA instructions; base uses none on x86-64. */
size_t kernel_fma_isas(const char *names[3]);
/* The name of the path kernel_fma picks. */
const char *kernel_fma_isa(void);
/* a * b + c rounded once to float (round to nearest even), from IEEE
 * double operations only: what base computes on x86-64. */
float kernel_fmaf_soft(float a, float b, float c);
/* ABI 2's dropout draw of unit u (16 bits): with h_l = rng_bits32(key,
 * 16 (u / 32) + l), the low half of h_(u mod 16) when u mod 32 < 16, else
 * its high half. */
uint32_t kernel_drop16(uint64_t key, uint32_t u);

/*
 * The fast kernels; sets OpenBLAS's thread count to threads (>= 1).
 * Defined in kernel_fast.c, the only file that includes cblas.h.  NULL
 * when OpenBLAS cannot be loaded (kernel_blas_unavailable says why).
 */
const struct kernel_ops *kernel_fast(unsigned threads);
/* NULL when OpenBLAS is loaded (or loads now), else why it cannot be. */
const char *kernel_blas_unavailable(void);

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
