/*
 * treewalk.c - complete trees walked a vector of cases at a time
 * (treewalk.h): the same steps as a scalar walk, lane by lane.
 */
#include "train/treewalk.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/rbatime.h"
#include "train/kernel.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define TW_V16 (TW_BLOCK / 16)
#define TW_V8 (TW_BLOCK / 8)
_Static_assert(TW_BLOCK % 16 == 0 && TW_V8 % 5 == 0,
	       "a block is whole vectors of 16, and of 8 five at a time");

#define V16_LD(p) _mm512_loadu_si512((const void *)(p))
#define V16_SET(u) _mm512_set1_epi32((int)(u))
#define V16_SEL(m, a, b) _mm512_mask_blend_epi32(m, a, b) /* m: b */
#define V16_BELOW(key, in) _mm512_cmplt_epi32_mask(key, in)
/* c = 2c + r */
#define V16_STEP(c, r) _mm512_mask_add_epi32(_mm512_add_epi32(c, c), r,     \
					     _mm512_add_epi32(c, c), V16_SET(1))

#define TW_INLINE static inline __attribute__((always_inline))

/* A lane vector's first three steps (inputs x of its lanes): its
 * positions at depth 3. */
__attribute__((target("avx512f"))) TW_INLINE __m512i
v16_top(const uint32_t *k, const uint32_t *o, __m512i kA, const uint32_t *x)
{
	__mmask16 r0, r1, r2;
	__m512i in, at;

	/* the root; position 2 + r0; position 4 + 2 r0 + r1 */
	r0 = V16_BELOW(V16_SET(k[1]), V16_LD(x + o[1]));
	r1 = V16_BELOW(V16_SEL(r0, V16_SET(k[2]), V16_SET(k[3])),
		       V16_SEL(r0, V16_LD(x + o[2]), V16_LD(x + o[3])));
	in = V16_SEL(r1, V16_SEL(r0, V16_LD(x + o[4]), V16_LD(x + o[6])),
		     V16_SEL(r0, V16_LD(x + o[5]), V16_LD(x + o[7])));
	at = _mm512_mask_add_epi32(V16_SET(4), r0, V16_SET(4), V16_SET(2));
	at = _mm512_mask_add_epi32(at, r1, at, V16_SET(1));
	r2 = V16_BELOW(_mm512_permutexvar_epi32(at, kA), in);
	return V16_STEP(at, r2);
}

/* A step below: positions c, 32 apart at most, in k0:k1 and o0:o1. */
__attribute__((target("avx512f"))) TW_INLINE __m512i
v16_deep(__m512i c, __m512i k0, __m512i k1, __m512i o0, __m512i o1,
	 const uint32_t *x)
{
	const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7,
					      6, 5, 4, 3, 2, 1, 0);
	__m512i key = _mm512_permutex2var_epi32(k0, c, k1);
	__m512i off = _mm512_permutex2var_epi32(o0, c, o1);
	__m512i in = _mm512_i32gather_epi32(_mm512_add_epi32(off, iota), x, 4);

	return V16_STEP(c, V16_BELOW(key, in));
}

/* Lane vector c's leaves (c & 63: bit 5 picks the half) added to its
 * margins m, K apart. */
__attribute__((target("avx512f"))) TW_INLINE void
v16_add(__m512i c, __m512 lA, __m512 lB, __m512 lC, __m512 lD, float *m,
	size_t K)
{
	__m512 lo = _mm512_permutex2var_ps(lA, c, lB);
	__m512 hi = _mm512_permutex2var_ps(lC, c, lD);
	__m512 leaf = _mm512_mask_blend_ps(
		_mm512_test_epi32_mask(c, V16_SET(32)), lo, hi);

	if (K == 1) {
		_mm512_storeu_ps(m, _mm512_add_ps(_mm512_loadu_ps(m), leaf));
	} else {
		float l[16];
		_mm512_storeu_ps(l, leaf);
		for (size_t j = 0; j < 16; j++)
			m[j * K] += l[j];
	}
}

_Static_assert(TW_V16 == 5, "tw_walk_avx512 walks five vectors");

__attribute__((target("avx512f"))) static void
tw_walk_avx512(const struct tw_tree *v, uint32_t vd, const uint32_t *xs,
		float *mg, size_t K)
{
	const uint32_t *k = v->key, *o = v->off;
	const __m512i kA = V16_LD(k), kB = V16_LD(k + 16), oA = V16_LD(o),
		      oB = V16_LD(o + 16);
	const __m512 lA = _mm512_loadu_ps(v->leaf),
		     lB = _mm512_loadu_ps(v->leaf + 16),
		     lC = _mm512_loadu_ps(v->leaf + 32),
		     lD = _mm512_loadu_ps(v->leaf + 48);
	__m512i c0, c1, c2, c3, c4;

	c0 = v16_top(k, o, kA, xs);
	c1 = v16_top(k, o, kA, xs + 16);
	c2 = v16_top(k, o, kA, xs + 32);
	c3 = v16_top(k, o, kA, xs + 48);
	c4 = v16_top(k, o, kA, xs + 64);
	/* positions 8 .. 31 in kA:kB, 32 .. 63 in kC:kD */
	for (uint32_t step = 3; step < vd && step < 5; step++) {
		c0 = v16_deep(c0, kA, kB, oA, oB, xs);
		c1 = v16_deep(c1, kA, kB, oA, oB, xs + 16);
		c2 = v16_deep(c2, kA, kB, oA, oB, xs + 32);
		c3 = v16_deep(c3, kA, kB, oA, oB, xs + 48);
		c4 = v16_deep(c4, kA, kB, oA, oB, xs + 64);
	}
	if (vd > 5) {
		const __m512i kC = V16_LD(k + 32), kD = V16_LD(k + 48),
			      oC = V16_LD(o + 32), oD = V16_LD(o + 48);
		c0 = v16_deep(c0, kC, kD, oC, oD, xs);
		c1 = v16_deep(c1, kC, kD, oC, oD, xs + 16);
		c2 = v16_deep(c2, kC, kD, oC, oD, xs + 32);
		c3 = v16_deep(c3, kC, kD, oC, oD, xs + 48);
		c4 = v16_deep(c4, kC, kD, oC, oD, xs + 64);
	}
	v16_add(c0, lA, lB, lC, lD, mg, K);
	v16_add(c1, lA, lB, lC, lD, mg + 16 * K, K);
	v16_add(c2, lA, lB, lC, lD, mg + 32 * K, K);
	v16_add(c3, lA, lB, lC, lD, mg + 48 * K, K);
	v16_add(c4, lA, lB, lC, lD, mg + 64 * K, K);
}

#define V8_LD(p) _mm256_loadu_si256((const void *)(p))
#define V8_SET(u) _mm256_set1_epi32((int)(u))
/* per lane b where m's sign bit is set, else a */
#define V8_SEL(m, a, b)                                                        \
	_mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(a),           \
					     _mm256_castsi256_ps(b),           \
					     _mm256_castsi256_ps(m)))
#define V8_PERM(t, c) _mm256_permutevar8x32_epi32(V8_LD(t), c)

/* all ones where key < in (walk keys: signed) */
#define v8_below(key, in) _mm256_cmpgt_epi32(in, key)

/* t[c] for positions c of 16 .. 31 (bit 3 picks the half) */
__attribute__((target("avx2"))) static inline __m256i
v8_at16(const uint32_t *t, __m256i c)
{
	return V8_SEL(_mm256_slli_epi32(c, 28), V8_PERM(t + 16, c),
		      V8_PERM(t + 24, c));
}

/* t[c] for positions c of 32 .. 63 (bits 3 and 4 pick the quarter) */
__attribute__((target("avx2"))) static inline __m256i
v8_at32(const uint32_t *t, __m256i c)
{
	__m256i b3 = _mm256_slli_epi32(c, 28);

	return V8_SEL(_mm256_slli_epi32(c, 27),
		      V8_SEL(b3, V8_PERM(t + 32, c), V8_PERM(t + 40, c)),
		      V8_SEL(b3, V8_PERM(t + 48, c), V8_PERM(t + 56, c)));
}

/* A lane vector's first three steps (inputs x of its lanes). */
__attribute__((target("avx2"))) TW_INLINE __m256i
v8_top(const uint32_t *k, const uint32_t *o, const uint32_t *x)
{
	__m256i r0, r1, r2, in, at;

	r0 = v8_below(V8_SET(k[1]), V8_LD(x + o[1]));
	r1 = v8_below(V8_SEL(r0, V8_SET(k[2]), V8_SET(k[3])),
		      V8_SEL(r0, V8_LD(x + o[2]), V8_LD(x + o[3])));
	in = V8_SEL(r1, V8_SEL(r0, V8_LD(x + o[4]), V8_LD(x + o[6])),
		    V8_SEL(r0, V8_LD(x + o[5]), V8_LD(x + o[7])));
	/* r is -1 where right: 4 + 2 r0 + r1 */
	at = _mm256_sub_epi32(_mm256_sub_epi32(V8_SET(4), _mm256_add_epi32(r0, r0)),
			      r1);
	r2 = v8_below(V8_PERM(k, at), in);
	return _mm256_sub_epi32(_mm256_add_epi32(at, at), r2);
}

/* A step below at depth 3, 4 or 5 (level). */
__attribute__((target("avx2"))) TW_INLINE __m256i
v8_deep(__m256i c, uint32_t level, const uint32_t *k, const uint32_t *o,
	const uint32_t *x)
{
	const __m256i iota = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
	__m256i key, off, in;

	if (level == 3) { /* positions 8 .. 15 */
		key = V8_PERM(k + 8, c);
		off = V8_PERM(o + 8, c);
	} else if (level == 4) {
		key = v8_at16(k, c);
		off = v8_at16(o, c);
	} else {
		key = v8_at32(k, c);
		off = v8_at32(o, c);
	}
	in = _mm256_i32gather_epi32((const int *)x, _mm256_add_epi32(off, iota), 4);
	return _mm256_sub_epi32(_mm256_add_epi32(c, c), v8_below(key, in));
}

/*
 * The step at depth 5 (positions 32 .. 63) with the keys and rows by
 * gathers of the tree's (key, row) pairs instead of permutes and
 * selects: lanes 0, 1, 4, 5 of c index the first gather, 2, 3, 6, 7
 * the second, so that the in-lane shuffles that part keys from rows
 * leave them in lane order.  pair[0] is position 32's, so the gathers
 * index from 32 pairs before it (still inside the tree: its leaves).
 */
_Static_assert(offsetof(struct tw_tree, pair) >= 32 * sizeof(uint64_t),
	       "v8_pairs5's base, 32 pairs before pair[0], is inside the tree");

__attribute__((target("avx2"))) TW_INLINE __m256i
v8_pairs5(__m256i c, const struct tw_tree *v, const uint32_t *x)
{
	const __m256i iota = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
	const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
	const long long *base =
		(const long long *)(const void *)((const char *)v +
						  offsetof(struct tw_tree, pair) -
						  32 * sizeof(uint64_t));
	__m256i cc = _mm256_permutevar8x32_epi32(c, order);
	__m256 a = _mm256_castsi256_ps(
		_mm256_i32gather_epi64(base, _mm256_castsi256_si128(cc), 8));
	__m256 b = _mm256_castsi256_ps(
		_mm256_i32gather_epi64(base, _mm256_extracti128_si256(cc, 1), 8));
	__m256i key = _mm256_castps_si256(_mm256_shuffle_ps(a, b, 0x88));
	__m256i off = _mm256_castps_si256(_mm256_shuffle_ps(a, b, 0xDD));
	__m256i in = _mm256_i32gather_epi32((const int *)x,
					    _mm256_add_epi32(off, iota), 4);

	return _mm256_sub_epi32(_mm256_add_epi32(c, c), v8_below(key, in));
}

/*
 * The step at depth 3 with no gather: positions 8 .. 15 read eight
 * rows, loaded whole, and each lane selects its node's by the three low
 * bits of its position.
 */
__attribute__((target("avx2"))) TW_INLINE __m256i
v8_rows3(__m256i c, const uint32_t *k, const uint32_t *o, const uint32_t *x)
{
	__m256i b0 = _mm256_slli_epi32(c, 31), b1 = _mm256_slli_epi32(c, 30),
		b2 = _mm256_slli_epi32(c, 29);
	__m256i x01 = V8_SEL(b0, V8_LD(x + o[8]), V8_LD(x + o[9]));
	__m256i x23 = V8_SEL(b0, V8_LD(x + o[10]), V8_LD(x + o[11]));
	__m256i x45 = V8_SEL(b0, V8_LD(x + o[12]), V8_LD(x + o[13]));
	__m256i x67 = V8_SEL(b0, V8_LD(x + o[14]), V8_LD(x + o[15]));
	__m256i in = V8_SEL(b2, V8_SEL(b1, x01, x23), V8_SEL(b1, x45, x67));

	return _mm256_sub_epi32(_mm256_add_epi32(c, c),
				v8_below(V8_PERM(k + 8, c), in));
}

/* per lane b where m's sign bit is set, else a (floats) */
#define V8_SELF(m, a, b) _mm256_blendv_ps(a, b, _mm256_castsi256_ps(m))
#define V8_PERMF(t, c) _mm256_permutevar8x32_ps(_mm256_loadu_ps(t), c)

/* The leaves of positions c (c & 63) with no gather: eight permutes of
 * the 64 leaves, and bits 3, 4 and 5 of c select among them. */
__attribute__((target("avx2"))) TW_INLINE __m256
v8_leaves(const float *l, __m256i c)
{
	__m256i b3 = _mm256_slli_epi32(c, 28), b4 = _mm256_slli_epi32(c, 27),
		b5 = _mm256_slli_epi32(c, 26);
	__m256 q0 = V8_SELF(b3, V8_PERMF(l, c), V8_PERMF(l + 8, c));
	__m256 q1 = V8_SELF(b3, V8_PERMF(l + 16, c), V8_PERMF(l + 24, c));
	__m256 q2 = V8_SELF(b3, V8_PERMF(l + 32, c), V8_PERMF(l + 40, c));
	__m256 q3 = V8_SELF(b3, V8_PERMF(l + 48, c), V8_PERMF(l + 56, c));

	return V8_SELF(b5, V8_SELF(b4, q0, q1), V8_SELF(b4, q2, q3));
}

/* Lane vector c's leaves (by a gather, or by v8_leaves when perm) added
 * to its margins m, K apart. */
__attribute__((target("avx2"))) TW_INLINE void
v8_add(__m256i c, const float *leaves, int perm, float *m, size_t K)
{
	__m256 leaf = perm ? v8_leaves(leaves, c)
			   : _mm256_i32gather_ps(leaves,
						 _mm256_and_si256(c, V8_SET(63)), 4);

	if (K == 1) {
		_mm256_storeu_ps(m, _mm256_add_ps(_mm256_loadu_ps(m), leaf));
	} else {
		float l[8];
		_mm256_storeu_ps(l, leaf);
		for (size_t j = 0; j < 8; j++)
			m[j * K] += l[j];
	}
}

/* Every lane vector of the block down tree v, side by side. */
#define V8_TEN(EXPR)                                                           \
	do {                                                                   \
		c0 = EXPR(c0, 0);                                              \
		c1 = EXPR(c1, 1);                                              \
		c2 = EXPR(c2, 2);                                              \
		c3 = EXPR(c3, 3);                                              \
		c4 = EXPR(c4, 4);                                              \
		c5 = EXPR(c5, 5);                                              \
		c6 = EXPR(c6, 6);                                              \
		c7 = EXPR(c7, 7);                                              \
		c8 = EXPR(c8, 8);                                              \
		c9 = EXPR(c9, 9);                                              \
	} while (0)
#define V8_TOP(c, g) v8_top(k, o, xs + 8 * (g))
#define V8_DEEP(c, g) v8_deep(c, level, k, o, xs + 8 * (g))
#define V8_ROWS3(c, g) v8_rows3(c, k, o, xs + 8 * (g))
#define V8_PAIRS5(c, g) v8_pairs5(c, v, xs + 8 * (g))

_Static_assert(TW_V8 == 10, "tw_walk_avx2 walks ten vectors");

/*
 * The AVX2 walk, its ways fixed at each caller: rows3, the step at depth
 * 3 by v8_rows3; perm, the leaves by v8_leaves; pairs5, the step at
 * depth 5 by v8_pairs5.  Each way takes the same steps and adds the same
 * leaves.
 */
__attribute__((target("avx2"))) TW_INLINE void
v8_walk(const struct tw_tree *v, uint32_t vd, const uint32_t *xs, float *mg,
	size_t K, int rows3, int perm, int pairs5)
{
	const uint32_t *k = v->key, *o = v->off;
	__m256i c0, c1, c2, c3, c4, c5, c6, c7, c8, c9;

	V8_TEN(V8_TOP);
	for (uint32_t level = 3; level < vd; level++) {
		if (level == 3 && rows3)
			V8_TEN(V8_ROWS3);
		else if (level == 5 && pairs5)
			V8_TEN(V8_PAIRS5);
		else
			V8_TEN(V8_DEEP);
	}
	v8_add(c0, v->leaf, perm, mg, K);
	v8_add(c1, v->leaf, perm, mg + 8 * K, K);
	v8_add(c2, v->leaf, perm, mg + 16 * K, K);
	v8_add(c3, v->leaf, perm, mg + 24 * K, K);
	v8_add(c4, v->leaf, perm, mg + 32 * K, K);
	v8_add(c5, v->leaf, perm, mg + 40 * K, K);
	v8_add(c6, v->leaf, perm, mg + 48 * K, K);
	v8_add(c7, v->leaf, perm, mg + 56 * K, K);
	v8_add(c8, v->leaf, perm, mg + 64 * K, K);
	v8_add(c9, v->leaf, perm, mg + 72 * K, K);
}

#define V8_WAY(name, rows3, perm, pairs5)                                      \
	__attribute__((target("avx2"))) static void name(                      \
		const struct tw_tree *v, uint32_t vd, const uint32_t *xs,      \
		float *mg, size_t K)                                           \
	{                                                                      \
		v8_walk(v, vd, xs, mg, K, rows3, perm, pairs5);                \
	}
V8_WAY(tw_walk_avx2, 0, 0, 0)
V8_WAY(tw_walk_avx2_leaves, 0, 1, 0)
V8_WAY(tw_walk_avx2_rows, 1, 0, 0)
V8_WAY(tw_walk_avx2_select, 1, 1, 0)
V8_WAY(tw_walk_avx2_pairs, 0, 0, 1)

size_t
tw_ways(tw_walk_fn *ways[TW_MAXWAYS], const char *names[TW_MAXWAYS])
{
	switch (kernel_strict_level()) {
	case 1:
		ways[0] = tw_walk_avx2;
		ways[1] = tw_walk_avx2_leaves;
		ways[2] = tw_walk_avx2_rows;
		ways[3] = tw_walk_avx2_select;
		ways[4] = tw_walk_avx2_pairs;
		names[0] = "gather";
		names[1] = "leaves";
		names[2] = "rows";
		names[3] = "select";
		names[4] = "pairs";
		return 5;
	case 2:
		ways[0] = tw_walk_avx512;
		names[0] = "gather";
		return 1;
	default:
		return 0;
	}
}
#else
size_t
tw_ways(tw_walk_fn *ways[TW_MAXWAYS], const char *names[TW_MAXWAYS])
{
	(void)ways;
	(void)names;
	return 0;
}
#endif

tw_walk_fn *
tw_walk_pick(void)
{
	tw_walk_fn *ways[TW_MAXWAYS];
	const char *names[TW_MAXWAYS];

	return tw_ways(ways, names) > 0 ? ways[0] : NULL;
}

/*
 * The seconds the fastest of 3 rounds took to walk a block through
 * TW_PLAN_WALKS of the trees of tr (ntrees shapes) that v holds, from
 * the first on (again from the first when there are fewer): the same
 * work however large the forest.
 */
#define TW_PLAN_WALKS 128
static double
time_way(tw_walk_fn *walk, const struct tw_vec *v, const struct tw_shape *tr,
	 uint32_t ntrees, float *mg)
{
	double best = HUGE_VAL;

	for (int round = 0; round < 3; round++) {
		double t0 = rba_time_mono(), dt;
		size_t walks = 0;
		while (walks < TW_PLAN_WALKS)
			for (uint32_t t = 0; t < ntrees && walks < TW_PLAN_WALKS; t++)
				if (tr[t].vdepth > 0) {
					walk(&v->tree[tr[t].vt], tr[t].vdepth,
					     v->xv, mg, 1);
					walks++;
				}
		dt = rba_time_mono() - t0;
		if (dt < best)
			best = dt;
	}
	return best;
}

/*
 * The way the trees v holds (of shapes tr, ntrees of them, at least one
 * walked by vectors) are walked: the one RBA_TREE_WALK names, else,
 * where the path has more than one, the fastest on these very trees,
 * each timed in turn on a block of keys spread as inputs are.  The ways
 * add the same leaves; they differ in which of the CPU's units they
 * load, and which is fastest depends on the CPU: it is measured, not
 * guessed.  v->xv has room for a block of nx rows (left as scratch).
 */
static tw_walk_fn *
plan(struct tw_vec *v, const struct tw_shape *tr, uint32_t ntrees, uint32_t nx)
{
	tw_walk_fn *ways[TW_MAXWAYS];
	const char *names[TW_MAXWAYS], *want = getenv("RBA_TREE_WALK");
	double t[TW_MAXWAYS];
	size_t nw = tw_ways(ways, names), best = 0;
	float mg[TW_BLOCK] = { 0 };
	uint64_t r = 0x9e3779b97f4a7c15u;

	for (size_t w = 0; want != NULL && w < nw; w++)
		if (strcmp(want, names[w]) == 0)
			return ways[w];
	if (nw <= 1)
		return nw == 1 ? ways[0] : NULL;
	for (size_t i = 0; i < (size_t)TW_BLOCK * nx; i++) {
		r ^= r << 13; /* xorshift64: any keys, the lanes apart */
		r ^= r >> 7;
		r ^= r << 17;
		v->xv[i] = (uint32_t)(r >> 32);
	}
	/*
	 * Three passes over the ways, the first not counted, each starting
	 * one way further on.  Walks timed first come out faster than the
	 * same walks a moment later: when they counted, the way timed
	 * first won by about 8 % whichever it was, more than the ways
	 * differ, and the audit then ran 4 % slower than it could.
	 */
	for (size_t w = 0; w < nw; w++)
		t[w] = HUGE_VAL;
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < nw; i++) {
			size_t w = (i + (size_t)pass) % nw;
			double dt = time_way(ways[w], v, tr, ntrees, mg);
			if (pass > 0 && dt < t[w])
				t[w] = dt;
		}
	for (size_t w = 1; w < nw; w++)
		if (t[w] < t[best])
			best = w;
	return ways[best];
}


uint32_t
tw_tree_fill(struct tw_tree *v, uint32_t d, const uint64_t *fnode,
	     const float *fval)
{
	uint32_t vd = d < 3 ? 3 : d;

	memset(v, 0, sizeof(*v));
	for (size_t p = 1; p < ((size_t)1 << d); p++) {
		v->key[p] = (uint32_t)(fnode[p] >> 32) ^ TW_SIGN;
		v->off[p] = (uint32_t)fnode[p];
	}
	for (size_t p = 32; p < 64; p++)
		v->pair[p - 32] = (uint64_t)v->off[p] << 32 | v->key[p];
	/* (positions under a leaf above vd: any key, row 0, either way the
	 * leaf) a position of depth vd gets the leaf of its ancestor at d */
	for (size_t c = (size_t)1 << vd; c < ((size_t)2 << vd); c++)
		v->leaf[c & 63] = fval[c >> (vd - d)];
	return vd;
}

void
tw_block_keys(const uint32_t *restrict xs, size_t n, uint32_t *restrict xv)
{
	size_t i = 0;

	/* in loops of a constant trip count, which the compiler vectorizes */
	for (; i + 16 <= n; i += 16)
		for (size_t j = i; j < i + 16; j++)
			xv[j] = xs[j] ^ TW_SIGN;
	for (; i < n; i++)
		xv[i] = xs[i] ^ TW_SIGN;
}

void
tw_shapes(const struct rebuild_forest *f, uint32_t full,
	  struct tw_shape *tr, size_t *nfull, size_t *nval)
{
	*nfull = 0;
	*nval = (size_t)1 << full;
	for (uint32_t t = 0; t < f->ntrees; t++, tr++) {
		tr->depth = rebuild_tree_depth(f->nodes, f->tree_start[t]);
		tr->full = tr->depth <= full;
		tr->vdepth = 0;
		tr->vt = 0;
		if (tr->full) {
			tr->at = *nfull;
			tr->vat = *nval - ((size_t)1 << tr->depth);
			*nfull += (size_t)1 << tr->depth; /* slot 0 unused */
			*nval += (size_t)1 << tr->depth;
		} else {
			tr->at = f->tree_start[t];
		}
	}
}

int
tw_vectors(struct tw_shape *tr, uint32_t ntrees, const uint64_t *fnode,
	   const float *fval, uint32_t nx, struct tw_vec *v)
{
	size_t n = 0;

	memset(v, 0, sizeof(*v));
	if (tw_walk_pick() == NULL)
		return 0;
	for (uint32_t t = 0; t < ntrees; t++)
		if (tr[t].full && tr[t].depth >= 1 && tr[t].depth <= TW_MAXDEPTH)
			tr[t].vt = n++;
	if (n == 0)
		return 0;
	v->tree = aligned_alloc(64, n * sizeof(struct tw_tree));
	v->xv = calloc((size_t)TW_BLOCK * (nx ? nx : 1), sizeof(uint32_t));
	if (v->tree == NULL || v->xv == NULL) {
		tw_vec_free(v);
		return RBA_E_NOMEM;
	}
	for (uint32_t t = 0; t < ntrees; t++)
		if (tr[t].full && tr[t].depth >= 1 && tr[t].depth <= TW_MAXDEPTH)
			tr[t].vdepth = tw_tree_fill(&v->tree[tr[t].vt], tr[t].depth,
						    fnode + tr[t].at,
						    fval + tr[t].vat);
	v->walk = plan(v, tr, ntrees, nx ? nx : 1);
	return 0;
}

void
tw_vec_free(struct tw_vec *v)
{
	free(v->tree);
	free(v->xv);
	memset(v, 0, sizeof(*v));
}

uint32_t
tw_left_rows(const struct rebuild_forest *f, uint32_t *lrow)
{
	size_t nn = f->ntrees ? f->tree_start[f->ntrees] : 0;
	uint32_t nx = f->nfeatures;

	for (uint32_t j = 0; j < f->nfeatures; j++)
		lrow[j] = UINT32_MAX;
	for (size_t i = 0; i < nn; i++) {
		const struct rebuild_tree_node *q = &f->nodes[i];
		if (q->feature != REBUILD_TREE_LEAF &&
		    (q->flags & REBUILD_TREE_DEFAULT_LEFT) &&
		    lrow[q->feature] == UINT32_MAX)
			lrow[q->feature] = nx++;
	}
	return nx;
}
