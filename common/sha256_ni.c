/*
 * sha256_ni.c - the SHA-256 block function on the SHA extensions.
 *
 * The state lives in two registers as the instructions want it: ABEF and
 * CDGH.  Each group of four rounds adds four message words and their
 * constants; message words past the sixteenth come from SHA256MSG1 (the
 * sigma0 part plus W[t-16]), an add of W[t-7] and SHA256MSG2 (sigma1).
 */
#include "sha256_ni.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

int
sha256_ni_available(void)
{
	unsigned a, b, c, d;

	/* cpuid directly: not every compiler's __builtin_cpu_supports
	 * knows "sha".  Leaf 1: SSSE3 (ECX 9), SSE4.1 (ECX 19); leaf 7:
	 * SHA (EBX 29). */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) ||
	    !(c & (1u << 19)))
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b >> 29) & 1;
}

/* The state words as the instructions hold them (ABEF, CDGH), and back. */
#define NI_LOAD(state, s0, s1)                                                 \
	do {                                                                   \
		__m128i t_ = _mm_loadu_si128((const __m128i *)&(state)[0]);    \
		s1 = _mm_loadu_si128((const __m128i *)&(state)[4]);            \
		t_ = _mm_shuffle_epi32(t_, 0xb1);      /* CDAB */              \
		s1 = _mm_shuffle_epi32(s1, 0x1b);      /* EFGH */              \
		s0 = _mm_alignr_epi8(t_, s1, 8);       /* ABEF */              \
		s1 = _mm_blend_epi16(s1, t_, 0xf0);    /* CDGH */              \
	} while (0)
#define NI_STORE(state, s0, s1)                                                \
	do {                                                                   \
		__m128i t_ = _mm_shuffle_epi32(s0, 0x1b); /* FEBA */           \
		s1 = _mm_shuffle_epi32(s1, 0xb1);	   /* DCHG */           \
		s0 = _mm_blend_epi16(t_, s1, 0xf0);	   /* DCBA */           \
		s1 = _mm_alignr_epi8(s1, t_, 8);	   /* HGFE */           \
		_mm_storeu_si128((__m128i *)&(state)[0], s0);                  \
		_mm_storeu_si128((__m128i *)&(state)[4], s1);                  \
	} while (0)
/* Rounds 4i to 4i + 3 of one message: its words w[i] loaded (i < 4) or
 * made from the ones before (SHA256MSG1, an add of W[t-7], SHA256MSG2). */
#define NI_ROUNDS(w, i, data, s0, s1)                                          \
	do {                                                                   \
		__m128i m_;                                                    \
		if ((i) < 4) {                                                 \
			w[i] = _mm_shuffle_epi8(                               \
				_mm_loadu_si128((const __m128i *)((data) + 16 * (i))), \
				bswap);                                        \
		} else {                                                       \
			m_ = _mm_sha256msg1_epu32(w[(i) - 4], w[(i) - 3]);     \
			m_ = _mm_add_epi32(m_, _mm_alignr_epi8(w[(i) - 1],     \
							       w[(i) - 2], 4));\
			w[i] = _mm_sha256msg2_epu32(m_, w[(i) - 1]);           \
		}                                                              \
		m_ = _mm_add_epi32(w[i],                                       \
				   _mm_loadu_si128((const __m128i *)&K[4 * (i)])); \
		s1 = _mm_sha256rnds2_epu32(s1, s0, m_);                        \
		m_ = _mm_shuffle_epi32(m_, 0x0e);                              \
		s0 = _mm_sha256rnds2_epu32(s0, s1, m_);                        \
	} while (0)

__attribute__((target("sha,sse4.1,ssse3"))) void
sha256_ni_blocks(uint32_t state[8], const uint8_t *data, size_t nblocks)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll,
					     0x0405060700010203ll);
	__m128i s0, s1, w[16];

	NI_LOAD(state, s0, s1);
	for (; nblocks > 0; nblocks--, data += 64) {
		__m128i abef = s0, cdgh = s1;
		for (int i = 0; i < 16; i++)
			NI_ROUNDS(w, i, data, s0, s1);
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
	}
	NI_STORE(state, s0, s1);
}

/*
 * Two independent messages a block each at a time, their rounds side by
 * side: each round instruction waits on the one before it in its own
 * message only, so a core whose round unit takes a new instruction
 * before the last one's result is out works on both at once.  Each
 * state ends as sha256_ni_blocks would leave it.
 */
__attribute__((target("sha,sse4.1,ssse3"))) void
sha256_ni_blocks2(uint32_t sa[8], const uint8_t *da, uint32_t sb[8],
		  const uint8_t *db, size_t nblocks)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll,
					     0x0405060700010203ll);
	__m128i a0, a1, b0, b1, wa[16], wb[16];

	NI_LOAD(sa, a0, a1);
	NI_LOAD(sb, b0, b1);
	for (; nblocks > 0; nblocks--, da += 64, db += 64) {
		__m128i ea = a0, fa = a1, eb = b0, fb = b1;
		for (int i = 0; i < 16; i++) {
			NI_ROUNDS(wa, i, da, a0, a1);
			NI_ROUNDS(wb, i, db, b0, b1);
		}
		a0 = _mm_add_epi32(a0, ea);
		a1 = _mm_add_epi32(a1, fa);
		b0 = _mm_add_epi32(b0, eb);
		b1 = _mm_add_epi32(b1, fb);
	}
	NI_STORE(sa, a0, a1);
	NI_STORE(sb, b0, b1);
}

#else

int
sha256_ni_available(void)
{
	return 0;
}

void
sha256_ni_blocks(uint32_t state[8], const uint8_t *data, size_t nblocks)
{
	(void)state;
	(void)data;
	(void)nblocks;
}

void
sha256_ni_blocks2(uint32_t sa[8], const uint8_t *da, uint32_t sb[8],
		  const uint8_t *db, size_t nblocks)
{
	(void)sa;
	(void)da;
	(void)sb;
	(void)db;
	(void)nblocks;
}

#endif
