/* rng.c - keyed counter-based streams. */
#include "train/rng.h"

#include "train/fmath.h"

uint64_t
rng_mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint64_t
rng_key(uint64_t seed, uint32_t purpose, uint64_t a, uint64_t b)
{
	/* Each field passes through a full mix before the next is folded
	 * in, so (seed, purpose, a, b) tuples differing anywhere give
	 * unrelated keys. */
	uint64_t k = rng_mix64(seed ^ 0x52454255494C4421ull);

	k = rng_mix64(k ^ purpose);
	k = rng_mix64(k ^ a);
	return rng_mix64(k ^ b);
}

uint64_t
rng_u64(uint64_t key, uint64_t index)
{
	return rng_mix64(key ^ rng_mix64(index ^ 0xD1B54A32D192ED03ull));
}

float
rng_uniformf(uint64_t key, uint64_t index)
{
	/* 24 bits fit a float's significand: the conversion and the scaling
	 * by a power of two are exact. */
	return (float)(uint32_t)(rng_u64(key, index) >> 40) * 0x1p-24f;
}

double
rng_uniform(uint64_t key, uint64_t index)
{
	return (double)(rng_u64(key, index) >> 11) * 0x1p-53;
}

uint64_t
rng_below(uint64_t key, uint64_t index, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_u64(key, index) * n;

	return (uint64_t)(m >> 64);
}

float
rng_normalf(uint64_t key, uint64_t index)
{
	uint64_t w = rng_u64(key, index);
	/* u1 in (0, 1] so the log is finite; u2 in [0, 1). */
	float u1 = (float)(uint32_t)((w >> 40) + 1) * 0x1p-24f;
	float u2 = (float)(uint32_t)((w >> 16) & 0xFFFFFFu) * 0x1p-24f;
	float r = -2.0f * fm_logf(u1);

	return fm_sqrtf(r) * fm_cos2pif(u2);
}
