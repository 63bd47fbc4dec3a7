/*
 * digest.h - SHA-256 digests (libsodium) and their text form.
 *
 * Text form everywhere: "sha256:" then 64 lowercase hex digits.
 */
#ifndef RBA_DIGEST_H
#define RBA_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define RBA_DIGEST_LEN 32
#define RBA_DIGEST_TEXT_LEN 71 /* "sha256:" + 64, no NUL */

struct rba_digest {
	uint8_t b[RBA_DIGEST_LEN];
};

/* Streaming hasher: an opaque state big enough for libsodium's. */
struct rba_hasher {
	_Alignas(16) uint8_t state[128];
};

/* Must be called once before anything else here; 0 or RBA_E_CRYPTO. */
int rba_crypto_init(void);

void rba_hasher_init(struct rba_hasher *h);
void rba_hasher_update(struct rba_hasher *h, const void *p, size_t n);
/*
 * rba_hasher_update(a, pa, na) and rba_hasher_update(b, pb, nb), the
 * two messages' blocks hashed side by side where the engine gains by it
 * (SHA-NI: about 1.45x the speed of one after the other).
 */
void rba_hasher_update2(struct rba_hasher *a, const void *pa, size_t na,
			struct rba_hasher *b, const void *pb, size_t nb);
void rba_hasher_final(struct rba_hasher *h, struct rba_digest *out);

void rba_digest_bytes(const void *p, size_t n, struct rba_digest *out);

/* Writes the text form and a NUL into out[RBA_DIGEST_TEXT_LEN + 1]. */
void rba_digest_format(const struct rba_digest *d,
		       char out[RBA_DIGEST_TEXT_LEN + 1]);

/*
 * Parses "sha256:<64 lowercase hex>" (exactly, no surrounding space).
 * 0 or RBA_E_SYNTAX.
 */
int rba_digest_parse(const char *s, struct rba_digest *out);

/*
 * Parses a digest or an unambiguous lowercase hex prefix of one, with or
 * without "sha256:".  Fills prefix[] with the hex digits and *nhex with
 * their count (at least 4).  0 or RBA_E_SYNTAX.
 */
int rba_digest_parse_prefix(const char *s, char prefix[65], size_t *nhex);

/* Constant-time equality: 1 if equal. */
int rba_digest_equal(const struct rba_digest *a, const struct rba_digest *b);

/* The SHA-256 engine in use: "sha-ni" or "libsodium". */
const char *rba_sha256_engine(void);

/* Runtime version of libsodium. */
const char *rba_sodium_version(void);

/* Wipes n bytes so the compiler cannot elide it. */
void rba_wipe(void *p, size_t n);

#endif
