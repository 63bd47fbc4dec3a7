/* digest.c - SHA-256: the SHA extensions when present, else libsodium. */
#include "digest.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rba.h"
#include "seam.h"
#include "sha256_ni.h"

/*
 * Two engines behind one interface: the SHA extensions when the CPU has
 * them (several times faster, and every snapshot add and verified read
 * hashes each byte), else libsodium.  A hasher records which engine
 * started it, so it always finishes with the same one.  The test seam
 * sha256_portable (common/seam.h) forces libsodium (tests compare the
 * two).
 */
struct ni_state {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t buf[64];
	uint32_t used;
};

#define ENGINE_BYTE 120 /* where a hasher keeps its engine tag */
#define ENGINE_SODIUM 0x5a
#define ENGINE_NI 0xa5

_Static_assert(sizeof(crypto_hash_sha256_state) <= ENGINE_BYTE,
	       "rba_hasher too small for libsodium's state");
_Static_assert(sizeof(struct ni_state) <= ENGINE_BYTE,
	       "rba_hasher too small for the SHA-NI state");
_Static_assert(ENGINE_BYTE < sizeof(((struct rba_hasher *)0)->state),
	       "rba_hasher has no room for its engine tag");

static int use_ni = -1; /* -1: not decided yet */

static int
ni_wanted(void)
{
	if (use_ni < 0) {
		use_ni = sha256_ni_available() && !rba_seams.sha256_portable;
	}
	return use_ni;
}

int
rba_crypto_init(void)
{
	(void)ni_wanted();
	return sodium_init() < 0 ? RBA_E_CRYPTO : 0;
}

const char *
rba_sha256_engine(void)
{
	return ni_wanted() ? "sha-ni" : "libsodium";
}

static const uint32_t sha256_iv[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

void
rba_hasher_init(struct rba_hasher *h)
{
	if (ni_wanted()) {
		struct ni_state *st = (struct ni_state *)h->state;
		memcpy(st->h, sha256_iv, sizeof(sha256_iv));
		st->bytes = 0;
		st->used = 0;
		h->state[ENGINE_BYTE] = ENGINE_NI;
	} else {
		crypto_hash_sha256_init((crypto_hash_sha256_state *)h->state);
		h->state[ENGINE_BYTE] = ENGINE_SODIUM;
	}
}

/* Tops up st's partial block from *p (moved on): the block goes in
 * when it fills, else *n ends at 0. */
static void
ni_fill(struct ni_state *st, const uint8_t **p, size_t *n)
{
	size_t take;

	if (st->used == 0)
		return;
	take = 64 - st->used < *n ? 64 - st->used : *n;
	memcpy(st->buf + st->used, *p, take);
	st->used += (uint32_t)take;
	st->bytes += take;
	*p += take;
	*n -= take;
	if (st->used == 64) {
		sha256_ni_blocks(st->h, st->buf, 1);
		st->used = 0;
	}
}

/* n bytes at b into st: its partial block, whole blocks, the rest kept. */
static void
ni_update(struct ni_state *st, const uint8_t *b, size_t n)
{
	ni_fill(st, &b, &n);
	if (n >= 64) {
		sha256_ni_blocks(st->h, b, n / 64);
		st->bytes += n & ~(size_t)63;
		b += n & ~(size_t)63;
		n &= 63;
	}
	memcpy(st->buf + st->used, b, n);
	st->used += (uint32_t)n;
	st->bytes += n;
}

void
rba_hasher_update(struct rba_hasher *h, const void *p, size_t n)
{
	if (h->state[ENGINE_BYTE] != ENGINE_NI) {
		crypto_hash_sha256_update((crypto_hash_sha256_state *)h->state, p, n);
		return;
	}
	ni_update((struct ni_state *)h->state, p, n);
}

void
rba_hasher_update2(struct rba_hasher *a, const void *pa, size_t na,
		   struct rba_hasher *b, const void *pb, size_t nb)
{
	struct ni_state *sa = (struct ni_state *)a->state;
	struct ni_state *sb = (struct ni_state *)b->state;
	const uint8_t *xa = pa, *xb = pb;
	size_t k;

	if (a->state[ENGINE_BYTE] != ENGINE_NI ||
	    b->state[ENGINE_BYTE] != ENGINE_NI) {
		rba_hasher_update(a, pa, na);
		rba_hasher_update(b, pb, nb);
		return;
	}
	/* each partial block first; then the whole blocks the two have
	 * in common side by side (none when a partial block is still
	 * open: its input is used up) */
	ni_fill(sa, &xa, &na);
	ni_fill(sb, &xb, &nb);
	k = (na < nb ? na : nb) / 64;
	if (k > 0) {
		sha256_ni_blocks2(sa->h, xa, sb->h, xb, k);
		sa->bytes += 64 * k;
		sb->bytes += 64 * k;
		xa += 64 * k;
		xb += 64 * k;
		na -= 64 * k;
		nb -= 64 * k;
	}
	ni_update(sa, xa, na);
	ni_update(sb, xb, nb);
}

void
rba_hasher_final(struct rba_hasher *h, struct rba_digest *out)
{
	struct ni_state *st = (struct ni_state *)h->state;
	uint64_t bits;

	if (h->state[ENGINE_BYTE] != ENGINE_NI) {
		crypto_hash_sha256_final((crypto_hash_sha256_state *)h->state, out->b);
		sodium_memzero(h->state, sizeof(h->state));
		return;
	}
	bits = st->bytes * 8;
	st->buf[st->used++] = 0x80;
	if (st->used > 56) {
		memset(st->buf + st->used, 0, 64 - st->used);
		sha256_ni_blocks(st->h, st->buf, 1);
		st->used = 0;
	}
	memset(st->buf + st->used, 0, 56 - st->used);
	for (int i = 0; i < 8; i++)
		st->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_ni_blocks(st->h, st->buf, 1);
	for (int i = 0; i < 8; i++) {
		out->b[4 * i] = (uint8_t)(st->h[i] >> 24);
		out->b[4 * i + 1] = (uint8_t)(st->h[i] >> 16);
		out->b[4 * i + 2] = (uint8_t)(st->h[i] >> 8);
		out->b[4 * i + 3] = (uint8_t)st->h[i];
	}
	sodium_memzero(h->state, sizeof(h->state));
}

void
rba_digest_bytes(const void *p, size_t n, struct rba_digest *out)
{
	struct rba_hasher h;

	rba_hasher_init(&h);
	rba_hasher_update(&h, p, n);
	rba_hasher_final(&h, out);
}

void
rba_digest_format(const struct rba_digest *d, char out[RBA_DIGEST_TEXT_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	memcpy(out, "sha256:", 7);
	for (i = 0; i < RBA_DIGEST_LEN; i++) {
		out[7 + 2 * i] = hex[d->b[i] >> 4];
		out[8 + 2 * i] = hex[d->b[i] & 15];
	}
	out[RBA_DIGEST_TEXT_LEN] = 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
rba_digest_parse(const char *s, struct rba_digest *out)
{
	size_t i;

	if (strncmp(s, "sha256:", 7) != 0 || strlen(s) != RBA_DIGEST_TEXT_LEN)
		return RBA_E_SYNTAX;
	for (i = 0; i < RBA_DIGEST_LEN; i++) {
		int hi = hexval((unsigned char)s[7 + 2 * i]);
		int lo = hexval((unsigned char)s[8 + 2 * i]);
		if (hi < 0 || lo < 0)
			return RBA_E_SYNTAX;
		out->b[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int
rba_digest_parse_prefix(const char *s, char prefix[65], size_t *nhex)
{
	size_t n;

	if (strncmp(s, "sha256:", 7) == 0)
		s += 7;
	n = strlen(s);
	if (n < 4 || n > 64)
		return RBA_E_SYNTAX;
	for (size_t i = 0; i < n; i++)
		if (hexval((unsigned char)s[i]) < 0)
			return RBA_E_SYNTAX;
	memcpy(prefix, s, n);
	prefix[n] = 0;
	*nhex = n;
	return 0;
}

int
rba_digest_equal(const struct rba_digest *a, const struct rba_digest *b)
{
	return sodium_memcmp(a->b, b->b, RBA_DIGEST_LEN) == 0;
}

const char *
rba_sodium_version(void)
{
	return sodium_version_string();
}

void
rba_wipe(void *p, size_t n)
{
	sodium_memzero(p, n);
}
