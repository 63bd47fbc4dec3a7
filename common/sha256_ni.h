/*
 * sha256_ni.h - SHA-256 compression with the x86 SHA extensions, for
 * digest.c only.  Elsewhere (another CPU or architecture) the functions
 * exist but report no support, and digest.c uses libsodium.
 */
#ifndef RBA_SHA256_NI_H
#define RBA_SHA256_NI_H

#include <stddef.h>
#include <stdint.h>

/* 1 when this CPU has SHA-NI (and SSE4.1, SSSE3). */
int sha256_ni_available(void);

/* Compresses nblocks 64-byte blocks into state (h0..h7, host order). */
void sha256_ni_blocks(uint32_t state[8], const uint8_t *data, size_t nblocks);
/* sha256_ni_blocks of nblocks at da into sa and of nblocks at db into
 * sb, the two interleaved (faster than one after the other). */
void sha256_ni_blocks2(uint32_t sa[8], const uint8_t *da, uint32_t sb[8],
		       const uint8_t *db, size_t nblocks);

#endif
