/*
 * rng.h - keyed, counter-based random numbers (doc/design.md section 7).
 *
 * Every random number is a pure function of (seed, purpose, sub-keys,
 * index): there is no generator state anywhere.  A caller derives a key
 * once with rng_key() and then draws number `index` of that stream with
 * the functions below, in any order, from any thread.  Moving a line of
 * code therefore cannot change which numbers reach which purpose.
 *
 * The mixing functions and the float conversions are part of the trainer
 * ABI: changing any of them moves bits of artifacts and of `snapshot
 * synth` output and needs a new ABI (and a new synth generation).
 */
#ifndef RBA_RNG_H
#define RBA_RNG_H

#include <stdint.h>

/* Purposes (stable numbers: they are mixed into keys). */
enum rng_purpose {
	RNG_SPLIT = 1,	 /* a: 0, b: 0 - train/validation split */
	RNG_INIT = 2,	 /* a: layer, b: 0 weights, 1 biases */
	RNG_SHUFFLE = 3, /* a: epoch */
	RNG_DROPOUT = 4, /* a: global step, b: layer */
	RNG_SYNTH = 5,	 /* a: 0 inputs, 1 rule, 2 noise pick, 3 noise class */
	RNG_GBDT_ROWS = 6, /* a: boosting round - row subsample */
	RNG_GBDT_COLS = 7, /* a: tree - column subsample */
	RNG_EVAL_DROPOUT = 8, /* a: layer - dropout at evaluation (eval.dropout on) */
	RNG_EXPLAIN = 9, /* a: class - permutations of estimated Shapley values */
};

/* SplitMix64's finalizer: a bijection of 64-bit words. */
uint64_t rng_mix64(uint64_t z);

/* The key of one stream. */
uint64_t rng_key(uint64_t seed, uint32_t purpose, uint64_t a, uint64_t b);

/* Number index of the stream: 64 uniformly distributed bits. */
uint64_t rng_u64(uint64_t key, uint64_t index);

/* Uniform in [0, 1) with 24 random bits: k * 2^-24, exact. */
float rng_uniformf(uint64_t key, uint64_t index);

/* Uniform in [0, 1) with 53 random bits: k * 2^-53, exact. */
double rng_uniform(uint64_t key, uint64_t index);

/*
 * Uniform integer in [0, n), n >= 1, by the multiply-high method (bias
 * below n / 2^64, no rejection loop, so one index is one draw).
 */
uint64_t rng_below(uint64_t key, uint64_t index, uint64_t n);

/*
 * A standard normal float by Box-Muller from draw index (both uniforms
 * come from one 64-bit word), using only +, -, *, /, sqrt and the tool's
 * own log and cosine (train/fmath.h): the same float everywhere.
 */
float rng_normalf(uint64_t key, uint64_t index);

/*
 * Cheap 32 bits for bulk use (dropout masks): two 32-bit mixing rounds of
 * (key, index).  Inlined so mask loops vectorize.
 */
static inline uint32_t
rng_bits32(uint64_t key, uint32_t index)
{
	uint32_t h = (index * 0x9E3779B1u) ^ (uint32_t)key;

	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	h *= 0xC2B2AE35u;
	h ^= h >> 16;
	h += (uint32_t)(key >> 32);
	h ^= h >> 15;
	h *= 0x2C1B3C6Du;
	h ^= h >> 12;
	h *= 0x297A2D39u;
	h ^= h >> 15;
	return h;
}

#endif
