/*
 * kernel_fma.c - ABI 2's strict kernels: ABI 1's fixed-order sums with
 * every multiply-accumulate of a dot product fused (kernel.h,
 * kernel_fma).
 *
 * A fused multiply-add is one correctly rounded operation, so it gives
 * the same bits on any machine that computes it correctly: the FMA
 * instructions of x86-64 (AVX2 with FMA, AVX-512) and of arm64, or, on an
 * x86-64 CPU without them, kernel_fmaf_soft, built from IEEE double
 * operations.  The build keeps -ffp-contract=off: only the fmas written
 * here are fused.  RBA_STRICT_ISA=base forces the path without FMA
 * instructions on x86-64, which is how the tests prove the paths agree.
 */
#include "train/kernel.h"

#include <stdlib.h>
#include <string.h>

#include "train/rng.h"

float
kernel_fmaf_soft(float a, float b, float c)
{
	/* The product of two floats is exact in double (48 <= 53 bits) and
	 * within its range; s = RN(p + c) and err = (p + c) - s exactly
	 * (TwoSum).  Rounding p + c to odd in double (53 >= 24 + 2 bits)
	 * and then to float rounds it once, correctly. */
	double p = (double)a * (double)b, cd = c;
	double s = p + cd, bb = s - p;
	double err = (p - (s - bb)) + (cd - bb);
	uint64_t bits;

	if (!(s - s == 0.0) || err == 0.0)
		return (float)s; /* inf, NaN or exact */
	memcpy(&bits, &s, sizeof(bits));
	if ((bits & 1) == 0)
		/* s is even: the odd neighbour on err's side (s is not 0:
		 * a sum of such doubles that rounds to 0 is exact). */
		bits = (err > 0.0) == (s > 0.0) ? bits + 1 : bits - 1;
	memcpy(&s, &bits, sizeof(s));
	return (float)s;
}

uint32_t
kernel_drop16(uint64_t key, uint32_t u)
{
	uint32_t h = rng_bits32(key, u / 32 * 16 + u % 16);

	return u % 32 < 16 ? (h & 0xFFFFu) : (h >> 16);
}

#define INLINE static inline __attribute__((always_inline))

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_FMA_X86 1
#include <immintrin.h>
#endif

/* The baseline path: the soft fma on x86-64 (no FMA instruction to
 * assume), the FMA instruction elsewhere (arm64 always has one: GCC and
 * Clang compile __builtin_fmaf to fmadd there). */
#ifdef KERNEL_FMA_X86
#define BASE_SFMA(a, b, c) kernel_fmaf_soft((a), (b), (c))
#else
#define BASE_SFMA(a, b, c) __builtin_fmaf((a), (b), (c))
#endif
typedef float fma_base_v4 __attribute__((vector_size(16), aligned(4),
					   may_alias));
INLINE fma_base_v4
base_v4fma(fma_base_v4 a, fma_base_v4 b, fma_base_v4 c)
{
	for (int i = 0; i < 4; i++)
		c[i] = BASE_SFMA(a[i], b[i], c[i]);
	return c;
}

#define KT_SFX base
#define KT_ATTR
#define KT_VW 4
#define KT_TILE 0
#define KT_VFMA(a, b, c) ((__typeof__(c))base_v4fma((fma_base_v4)(a), \
						    (fma_base_v4)(b), \
						    (fma_base_v4)(c)))
#define KT_4FMA KT_VFMA
#define KT_SFMA BASE_SFMA
#include "train/kernel_fma_tmpl.h"
#undef KT_SFX
#undef KT_ATTR
#undef KT_VW
#undef KT_VFMA
#undef KT_4FMA
#undef KT_SFMA
#undef KT_TILE

#ifdef KERNEL_FMA_X86
#define KT_4FMA(a, b, c)                                                       \
	((__typeof__(c))_mm_fmadd_ps((__m128)(a), (__m128)(b), (__m128)(c)))
#define KT_SFMA(a, b, c) __builtin_fmaf((a), (b), (c))
#define KT_SFX avx2
#define KT_ATTR __attribute__((target("avx2,fma")))
#define KT_VW 8
#define KT_TILE 6
#define KT_VFMA(a, b, c)                                                       \
	((__typeof__(c))_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#include "train/kernel_fma_tmpl.h"
#undef KT_SFX
#undef KT_ATTR
#undef KT_VW
#undef KT_VFMA
#undef KT_TILE
#define KT_SFX avx512
#define KT_ATTR __attribute__((target("avx512f,fma")))
#define KT_VW 16
#define KT_TILE 8
#define KT_VFMA(a, b, c)                                                       \
	((__typeof__(c))_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#include "train/kernel_fma_tmpl.h"
#undef KT_SFX
#undef KT_ATTR
#undef KT_VW
#undef KT_VFMA
#undef KT_4FMA
#undef KT_SFMA
#undef KT_TILE
#endif

#define DEFINE_FMA_OPS(sfx, attr)                                              \
	attr static void fma_linear_##sfx(const float *x, size_t rows,        \
					  size_t in, const float *w,          \
					  const float *b, size_t out,         \
					  float *y)                           \
	{                                                                      \
		flinear_##sfx(x, rows, in, w, b, out, NULL, y);                \
	}                                                                      \
	attr static void fma_back_dx_##sfx(const float *dy, size_t rows,      \
					   size_t out, const float *w,        \
					   const float *wt, size_t in,        \
					   float *dx)                         \
	{                                                                      \
		(void)w;                                                       \
		flinear_##sfx(dy, rows, out, wt, NULL, in, NULL, dx);          \
	}                                                                      \
	attr static void fma_back_dx_mul_##sfx(const float *dy, size_t rows,  \
					       size_t out, const float *wt,   \
					       size_t in, const float *g,     \
					       float *dx)                     \
	{                                                                      \
		flinear_##sfx(dy, rows, out, wt, NULL, in, g, dx);             \
	}                                                                      \
	attr static void fma_back_dw_##sfx(const float *x, const float *dy,   \
					   size_t rows, size_t in, size_t out,\
					   float *dw, float *db)              \
	{                                                                      \
		fdw_##sfx(x, dy, rows, in, out, 0, dw, db);                    \
	}                                                                      \
	attr static void fma_back_dw_add_##sfx(const float *x,                 \
					       const float *dy, size_t rows,  \
					       size_t in, size_t out,         \
					       float *dw, float *db)          \
	{                                                                      \
		fdw_##sfx(x, dy, rows, in, out, 1, dw, db);                    \
	}                                                                      \
	static void fma_fill_##sfx(struct kernel_ops *k)                       \
	{                                                                      \
		k->linear = fma_linear_##sfx;                                  \
		k->back_dx = fma_back_dx_##sfx;                                \
		k->back_dw = fma_back_dw_##sfx;                                \
		k->back_dx_mul = fma_back_dx_mul_##sfx;                        \
		k->back_dw_add = fma_back_dw_add_##sfx;                        \
		k->activate = factivate_##sfx;                                 \
	}

DEFINE_FMA_OPS(base, )
#ifdef KERNEL_FMA_X86
DEFINE_FMA_OPS(avx2, __attribute__((target("avx2,fma"))))
DEFINE_FMA_OPS(avx512, __attribute__((target("avx512f,fma"))))
#endif

size_t
kernel_fma_isas(const char *names[3])
{
	size_t n = 0;

	names[n++] = "base";
#ifdef KERNEL_FMA_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		names[n++] = "avx2";
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
		names[n++] = "avx512";
#endif
	return n;
}

int
kernel_fma_path(const char *isa, struct kernel_ops *out)
{
	const char *names[3];
	size_t n = kernel_fma_isas(names), i;

	for (i = 0; i < n && strcmp(names[i], isa) != 0; i++)
		;
	if (i == n)
		return -1;
	/* The elementwise kernels are ABI 1's: the same in every path. */
	*out = *kernel_strict();
	if (strcmp(isa, "base") == 0)
		fma_fill_base(out);
#ifdef KERNEL_FMA_X86
	else if (strcmp(isa, "avx2") == 0)
		fma_fill_avx2(out);
	else
		fma_fill_avx512(out);
#endif
	return 0;
}

const char *
kernel_fma_isa(void)
{
	const char *names[3], *want = getenv("RBA_STRICT_ISA");
	size_t n = kernel_fma_isas(names);

	/* As kernel_strict: the widest, or the one asked for if this CPU
	 * has it (avx2 also when avx512 is asked for and missing). */
	if (want != NULL && strcmp(want, "base") == 0)
		return "base";
	if (want != NULL && strcmp(want, "avx2") == 0 && n > 1)
		return names[1];
	return names[n - 1];
}

void
kernel_fma(struct kernel_ops *out)
{
	int err = kernel_fma_path(kernel_fma_isa(), out);

	(void)err; /* the path comes from kernel_fma_isas */
}
