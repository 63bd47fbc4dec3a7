/* digest.c - SHA-256 through libsodium. */
#include "digest.h"

#include <sodium.h>
#include <string.h>

#include "rba.h"

_Static_assert(sizeof(crypto_hash_sha256_state) <=
		       sizeof(((struct rba_hasher *)0)->state),
	       "rba_hasher too small for libsodium's state");

int
rba_crypto_init(void)
{
	return sodium_init() < 0 ? RBA_E_CRYPTO : 0;
}

void
rba_hasher_init(struct rba_hasher *h)
{
	crypto_hash_sha256_init((crypto_hash_sha256_state *)h->state);
}

void
rba_hasher_update(struct rba_hasher *h, const void *p, size_t n)
{
	crypto_hash_sha256_update((crypto_hash_sha256_state *)h->state, p, n);
}

void
rba_hasher_final(struct rba_hasher *h, struct rba_digest *out)
{
	crypto_hash_sha256_final((crypto_hash_sha256_state *)h->state, out->b);
	sodium_memzero(h->state, sizeof(h->state));
}

void
rba_digest_bytes(const void *p, size_t n, struct rba_digest *out)
{
	crypto_hash_sha256(out->b, p, n);
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
