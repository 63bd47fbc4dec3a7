/*
 * sha1.h - SHA-1 (FIPS 180-4), for one purpose only: checking that an
 * object git hands over hashes to the name it was asked by, as git's
 * own object ids are SHA-1 of "TYPE SIZE\0" and the content.  Not for
 * anything the tool signs or stores: those are SHA-256 (digest.h).
 */
#ifndef RBA_SHA1_H
#define RBA_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define RBA_SHA1_BYTES 20

struct rba_sha1 {
	uint32_t h[5];
	uint64_t len; /* bytes hashed so far */
	uint8_t block[64];
	size_t fill;
};

void rba_sha1_init(struct rba_sha1 *s);
void rba_sha1_update(struct rba_sha1 *s, const void *p, size_t n);
void rba_sha1_final(struct rba_sha1 *s, uint8_t out[RBA_SHA1_BYTES]);

#endif
