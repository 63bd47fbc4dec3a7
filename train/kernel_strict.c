/*
 * kernel_strict.c - fixed-order kernels for strict mode.
 *
 * Every output element is one sequential sum over the reduced index (see
 * kernel.h).  The matrix bodies (kernel_tmpl.h) keep a tile of 4 rows x 2
 * vectors of sums in registers and walk the reduced index once: the
 * additions into any one element still happen one after another in index
 * order, so the bits do not depend on the vector width.  The same bodies
 * are compiled for the baseline ISA and, on x86-64, for AVX2 and AVX-512
 * (chosen at run time); contraction into FMA is off for the whole build
 * (-ffp-contract=off), so the three give identical results.
 */
#include "train/kernel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/fmath.h"
#include "train/rng.h"

#define TJ 16 /* elementwise chunk */

#define INLINE static inline __attribute__((always_inline))

/*
 * Elementwise loops run in chunks of TJ with a constant trip count, which
 * compilers vectorize even under their cheapest cost models (gcc -O2),
 * and a scalar tail doing the same operations.
 */
#define CHUNKED(i, n, STMT)                                                    \
	do {                                                                   \
		size_t i##_0 = 0;                                              \
		for (; i##_0 + TJ <= (n); i##_0 += TJ)                         \
			for (size_t i = i##_0; i < i##_0 + TJ; i++) {          \
				STMT;                                          \
			}                                                      \
		for (size_t i = i##_0; i < (n); i++) {                         \
			STMT;                                                  \
		}                                                              \
	} while (0)

INLINE void
sgd_body(float *restrict w, const float *restrict g, float *restrict buf,
	 size_t n, const struct kernel_sgd *k)
{
	const float wd = k->wd, mom = k->momentum, lr = k->lr;

	CHUNKED(i, n, {
		float gi = g[i] + wd * w[i];
		float bi = mom * buf[i] + gi;
		buf[i] = bi;
		w[i] = w[i] - lr * bi;
	});
}

INLINE void
add_body(float *restrict acc, const float *restrict x, size_t n)
{
	CHUNKED(i, n, acc[i] += x[i]);
}

INLINE void
mul_body(float *restrict a, const float *restrict g, size_t n)
{
	CHUNKED(i, n, a[i] = a[i] * g[i]);
}

#define DEFINE_KERNELS(sfx, attr)                                              \
	attr static void strict_linear_##sfx(const float *x, size_t rows,      \
					     size_t in, const float *w,        \
					     const float *b, size_t out,       \
					     float *y)                         \
	{                                                                      \
		linear_##sfx(x, rows, in, w, b, out, y);                       \
	}                                                                      \
	attr static void strict_back_dx_##sfx(const float *dy, size_t rows,    \
					      size_t out, const float *w,      \
					      const float *wt, size_t in,      \
					      float *dx)                       \
	{                                                                      \
		(void)w;                                                       \
		linear_##sfx(dy, rows, out, wt, NULL, in, dx);                 \
	}                                                                      \
	attr static void strict_back_dw_##sfx(const float *x, const float *dy, \
					      size_t rows, size_t in,          \
					      size_t out, float *dw,           \
					      float *db)                       \
	{                                                                      \
		dw_##sfx(x, dy, rows, in, out, dw, db);                        \
	}                                                                      \
	attr static void strict_sgd_##sfx(float *w, const float *g,            \
					  float *buf, size_t n,                \
					  const struct kernel_sgd *k)          \
	{                                                                      \
		sgd_body(w, g, buf, n, k);                                     \
	}                                                                      \
	attr static void strict_add_##sfx(float *acc, const float *x,          \
					  size_t n)                            \
	{                                                                      \
		add_body(acc, x, n);                                           \
	}                                                                      \
	attr static void strict_mul_##sfx(float *a, const float *g, size_t n)  \
	{                                                                      \
		mul_body(a, g, n);                                             \
	}                                                                      \
	static const struct kernel_ops strict_ops_##sfx = {                    \
		"strict",	     strict_linear_##sfx, strict_back_dx_##sfx,  \
		strict_back_dw_##sfx, adamw_##sfx,  strict_sgd_##sfx,     \
		strict_add_##sfx,     activate_##sfx,	     strict_mul_##sfx,   \
		expv_##sfx,	     logv_##sfx,	  NULL,                 \
		NULL,                                                          \
	};

/*
 * AdamW near the subnormal range.  x86 takes a microcode assist, about
 * a hundred cycles, for each multiply, divide or square root with
 * a subnormal operand or result (unless the FTZ and DAZ modes, which
 * change results, are on); a long training whose gradients fade into
 * that range spent nearly a third of its time in those assists.  So
 * adamw (kernel_tmpl.h) runs its float vectors only on operands whose
 * every product, quotient and root stays clear of the range, and steps
 * the other lanes with adamw_lane_exact.
 *
 * adamw_lane_exact computes each float operation of the step in double
 * and rounds the result to float at once.  The double result of a sum,
 * product, quotient or square root of floats is close enough (53 bits
 * against 24) that rounding it to float gives the float operation's own
 * result, subnormal or not (the argument by which float arithmetic is
 * emulated in double), and a double never meets the subnormal range
 * here, nor does a conversion to or from float take an assist: the same
 * bits as the float step, at no assist.
 */
static inline double
adamw_hide(double x)
{
	/* a double the compiler cannot see is a float's: else it narrows
	 * (float)((double)a * b) back to the float operation a * b */
#if defined(__GNUC__) && defined(__x86_64__)
	__asm__("" : "+x"(x));
#elif defined(__GNUC__) && defined(__aarch64__)
	__asm__("" : "+w"(x));
#else
	volatile double h = x;
	x = h;
#endif
	return x;
}

#define ADAMW_F(x) adamw_hide((double)(float)(x))
static void
adamw_lane_exact(float *w, float g, float *m, float *v,
		 const struct kernel_adamw *k)
{
	double gi = adamw_hide(g);
	double mi = ADAMW_F(ADAMW_F((double)k->b1 * adamw_hide(*m)) +
			    ADAMW_F((double)k->omb1 * gi));
	double vi = ADAMW_F(ADAMW_F((double)k->b2 * adamw_hide(*v)) +
			    ADAMW_F(ADAMW_F((double)k->omb2 * gi) * gi));
	double den = ADAMW_F(ADAMW_F(ADAMW_F(__builtin_sqrt(vi)) / k->bc2sqrt) +
			     k->eps);

	*m = (float)mi;
	*v = (float)vi;
	*w = (float)(ADAMW_F(adamw_hide(*w) * k->decay) -
		     ADAMW_F(k->step_size * ADAMW_F(mi / den)));
}

/*
 * Whether k's constants let the vectors' operands be bounded (see
 * adamw in kernel_tmpl.h): b1, omb1, b2, omb2, bc2sqrt, decay and
 * step_size each 0 or of magnitude 2^-20 .. 2^20, eps 0 or normal,
 * positive and at most 2^20.  Else every vector is stepped as it comes.
 */
static int
adamw_tame(const struct kernel_adamw *k)
{
	const float c[7] = { k->b1,   k->omb1,	k->b2,	      k->omb2,
			     k->bc2sqrt, k->decay, k->step_size };

	for (int i = 0; i < 7; i++) {
		float a = fabsf(c[i]);
		if (a != 0.0f && !(a >= 0x1p-20f && a <= 0x1p20f))
			return 0;
	}
	return k->eps == 0.0f || (k->eps >= 0x1p-126f && k->eps <= 0x1p20f);
}

/*
 * Vector square roots (IEEE, correctly rounded: the same bits as the
 * scalar sqrt lane by lane).  GCC vector types convert to and from the
 * intrinsic types of the same size.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KT_VSQRT(v) ((__typeof__(v))_mm_sqrt_ps((__m128)(v)))
/* every lane of mask m set (lanes all ones or zero) */
#define KT_ALL(m) (_mm_movemask_ps((__m128)(m)) == 0xf)
#else
#define KT_VSQRT(v) kernel_vsqrt4(v)
typedef float kernel_v4 __attribute__((vector_size(16)));
static inline kernel_v4
kernel_vsqrt4(kernel_v4 v)
{
	for (int i = 0; i < 4; i++)
		v[i] = __builtin_sqrtf(v[i]);
	return v;
}
#define KT_ALL(m) (((m)[0] & (m)[1] & (m)[2] & (m)[3]) != 0)
#endif
#define KT_SFX base
#define KT_ATTR
#define KT_VW 4
#include "train/kernel_tmpl.h"
#undef KT_SFX
#undef KT_ATTR
#undef KT_VW
#undef KT_VSQRT
#undef KT_ALL
DEFINE_KERNELS(base, )

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_X86 1
#define KT_VSQRT(v) ((__typeof__(v))_mm256_sqrt_ps((__m256)(v)))
#define KT_ALL(m) (_mm256_movemask_ps((__m256)(m)) == 0xff)
#define KT_SFX avx2
#define KT_ATTR __attribute__((target("avx2")))
#define KT_VW 8
#include "train/kernel_tmpl.h"
#undef KT_SFX
#undef KT_ATTR
#undef KT_VW
DEFINE_KERNELS(avx2, __attribute__((target("avx2"))))
#undef KT_VSQRT
#undef KT_ALL
#define KT_VSQRT(v) ((__typeof__(v))_mm512_sqrt_ps((__m512)(v)))
#define KT_ALL(m)                                                              \
	(_mm512_cmpneq_epi32_mask((__m512i)(m), _mm512_setzero_si512()) ==     \
	 0xffff)
#define KT_SFX avx512
#define KT_ATTR __attribute__((target("avx512f")))
#define KT_VW 16
#include "train/kernel_tmpl.h"
#undef KT_SFX
#undef KT_ATTR
#undef KT_VW
DEFINE_KERNELS(avx512, __attribute__((target("avx512f"))))
#undef KT_VSQRT
#undef KT_ALL
#endif

static const struct kernel_ops *
pick(const char **name)
{
	const char *want = getenv("RBA_STRICT_ISA");

	*name = "base";
	if (want != NULL && strcmp(want, "base") == 0)
		return &strict_ops_base;
#ifdef KERNEL_X86
	/* The choice only changes speed: the bodies are the same sums. */
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    (want == NULL || strcmp(want, "avx2") != 0)) {
		*name = "avx512";
		return &strict_ops_avx512;
	}
	if (__builtin_cpu_supports("avx2")) {
		*name = "avx2";
		return &strict_ops_avx2;
	}
#endif
	return &strict_ops_base;
}

const struct kernel_ops *
kernel_strict(void)
{
	const char *name;

	return pick(&name);
}

size_t
kernel_strict_isas(const char *names[3])
{
	size_t n = 0;

	names[n++] = "base";
#ifdef KERNEL_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		names[n++] = "avx2";
	if (__builtin_cpu_supports("avx512f"))
		names[n++] = "avx512";
#endif
	return n;
}

const char *
kernel_strict_isa(void)
{
	const char *name;

	pick(&name);
	return name;
}

unsigned
kernel_strict_level(void)
{
	const char *name;
	const struct kernel_ops *k = pick(&name);

#ifdef KERNEL_X86
	return k == &strict_ops_avx512 ? 2 : k == &strict_ops_avx2 ? 1 : 0;
#else
	(void)k;
	return 0;
#endif
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
