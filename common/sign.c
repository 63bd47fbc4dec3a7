/*
 * sign.c - minisign-compatible Ed25519 keys and signatures.
 *
 * The byte layouts are minisign's (see sign.h); offsets below are written
 * out rather than taken from a C struct so that nothing depends on struct
 * layout.
 */
#include "common/sign.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"

#define COMMENT_PREFIX "untrusted comment: "
#define TRUSTED_PREFIX "trusted comment: "
#define COMMENT_PREFIX_LEN (sizeof(COMMENT_PREFIX) - 1)
#define TRUSTED_PREFIX_LEN (sizeof(TRUSTED_PREFIX) - 1)

/* Public key: "Ed" || key id || public key. */
#define PK_BLOB_LEN (2 + SIGN_KEYID_LEN + SIGN_PUBLICKEY_LEN) /* 42 */

/* Signature line: algorithm || key id || signature. */
#define SIG_BLOB_LEN (2 + SIGN_KEYID_LEN + SIGN_SIG_LEN) /* 74 */

/* Secret key blob, minisign's SeckeyStruct field by field. */
#define SK_ED25519_LEN 64
#define SK_CHK_LEN 32
#define SK_OFF_SIGALG 0
#define SK_OFF_KDFALG 2
#define SK_OFF_CHKALG 4
#define SK_OFF_SALT 6
#define SK_SALT_LEN 32
#define SK_OFF_OPS 38
#define SK_OFF_MEM 46
#define SK_OFF_KEYNUM 54 /* key id, secret key, checksum: the XORed part */
#define SK_OFF_SK (SK_OFF_KEYNUM + SIGN_KEYID_LEN)
#define SK_OFF_CHK (SK_OFF_SK + SK_ED25519_LEN)
#define SK_KEYNUM_LEN (SIGN_KEYID_LEN + SK_ED25519_LEN + SK_CHK_LEN) /* 104 */
#define SK_BLOB_LEN (SK_OFF_KEYNUM + SK_KEYNUM_LEN)		      /* 158 */

/* Text of one secret key file: comment line + base64 line, with room. */
#define SK_TEXT_CAP 512

#define PREHASH_LEN 64 /* BLAKE2b-512, as minisign's prehashed mode */

_Static_assert(SK_BLOB_LEN == 158, "minisign secret key is 158 bytes");
_Static_assert(SK_SALT_LEN == crypto_pwhash_scryptsalsa208sha256_SALTBYTES,
	       "scrypt salt size");
_Static_assert(SK_ED25519_LEN == crypto_sign_SECRETKEYBYTES, "ed25519 sk");
_Static_assert(SIGN_PUBLICKEY_LEN == crypto_sign_PUBLICKEYBYTES, "ed25519 pk");
_Static_assert(SIGN_SIG_LEN == crypto_sign_BYTES, "ed25519 signature");
_Static_assert(SK_CHK_LEN == crypto_generichash_BYTES, "blake2b-256");
_Static_assert(PREHASH_LEN == crypto_generichash_BYTES_MAX, "blake2b-512");
_Static_assert(SIGN_KDF_OPSLIMIT_MIN ==
		       crypto_pwhash_scryptsalsa208sha256_OPSLIMIT_MIN,
	       "scrypt opslimit min");
_Static_assert(SIGN_KDF_MEMLIMIT_MIN ==
		       crypto_pwhash_scryptsalsa208sha256_MEMLIMIT_MIN,
	       "scrypt memlimit min");
_Static_assert(SIGN_KDF_OPSLIMIT_DEFAULT ==
		       crypto_pwhash_scryptsalsa208sha256_OPSLIMIT_SENSITIVE,
	       "scrypt opslimit default");
_Static_assert(SIGN_KDF_MEMLIMIT_DEFAULT ==
		       crypto_pwhash_scryptsalsa208sha256_MEMLIMIT_SENSITIVE,
	       "scrypt memlimit default");

struct sign_seckey {
	uint8_t keyid[SIGN_KEYID_LEN];
	uint8_t sk[SK_ED25519_LEN];
};

/* One line of a key or signature file, borrowed from the text. */
struct line {
	const char *p;
	size_t n; /* without "\n" or "\r\n" */
};

static int
crypto_ready(void)
{
	/* sodium_init() is idempotent and cheap after the first call. */
	return sodium_init() < 0 ? RBA_E_CRYPTO : 0;
}

void
sign_keyid_format(const uint8_t keyid[SIGN_KEYID_LEN],
		  char out[SIGN_KEYID_TEXT_LEN + 1])
{
	snprintf(out, SIGN_KEYID_TEXT_LEN + 1, "%016" PRIX64,
		 rba_get_u64le(keyid));
}

/*
 * Splits text into exactly `want` lines.  Each line ends with "\n" or
 * "\r\n"; the last may end at the end of the text; nothing may follow it.
 * A NUL or a CR anywhere else is refused: minisign would silently cut the
 * line there, so accepting it would let two readers disagree.
 */
static int
lines_split(const void *text, size_t len, struct line *lines, size_t want,
	    struct rba_detail *d)
{
	const char *p = text, *end = p + len;
	size_t i, k;

	for (i = 0; i < want; i++) {
		const char *nl;

		if (p == end)
			return rba_fail(d, RBA_E_SYNTAX, NULL, i + 1, 0,
					"missing (%zu lines expected)", want);
		nl = memchr(p, '\n', (size_t)(end - p));
		lines[i].p = p;
		lines[i].n = (size_t)((nl != NULL ? nl : end) - p);
		/* "\r\n" ends a line too; a lone "\r" is refused below. */
		if (nl != NULL && lines[i].n > 0 && p[lines[i].n - 1] == '\r')
			lines[i].n--;
		for (k = 0; k < lines[i].n; k++) {
			if (p[k] == '\0')
				return rba_fail(d, RBA_E_SYNTAX, NULL, i + 1,
						k + 1, "NUL byte");
			if (p[k] == '\r')
				return rba_fail(d, RBA_E_SYNTAX, NULL, i + 1,
						k + 1,
						"carriage return inside a line");
		}
		if (nl == NULL) {
			p = end;
			if (i + 1 < want)
				return rba_fail(d, RBA_E_SYNTAX, NULL, i + 2, 0,
						"missing (%zu lines expected)",
						want);
		} else {
			p = nl + 1;
		}
	}
	if (p != end)
		return rba_fail(d, RBA_E_SYNTAX, NULL, want + 1, 1,
				"unexpected content after line %zu", want);
	return 0;
}

/* Checks "untrusted comment: <text>" and the text's cap. */
static int
comment_line_check(const struct line *l, size_t lineno,
		   struct rba_detail *d)
{
	if (l->n < COMMENT_PREFIX_LEN ||
	    memcmp(l->p, COMMENT_PREFIX, COMMENT_PREFIX_LEN) != 0)
		return rba_fail(d, RBA_E_SYNTAX, NULL, lineno, 1,
				"does not start with \"" COMMENT_PREFIX "\"");
	if (l->n - COMMENT_PREFIX_LEN > SIGN_COMMENT_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, lineno, 1,
				"untrusted comment longer than %d bytes",
				SIGN_COMMENT_MAX);
	return 0;
}

static int
b64_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/*
 * Decodes one base64 line (original alphabet, padded) into exactly want
 * bytes.  Malformed base64 is a syntax error; well-formed base64 of the
 * wrong size is corrupt data.  The character check comes first so that
 * libsodium only ever sees well-formed input of the expected size, and
 * then rejects non-canonical padding bits itself.
 */
static int
b64_line_decode(const struct line *l, size_t lineno, uint8_t *out, size_t want,
		struct rba_detail *d)
{
	size_t i, pad = 0, got, bin_len = 0;

	if (l->n == 0 || l->n % 4 != 0)
		goto bad;
	for (i = 0; i < l->n; i++) {
		if (b64_char((unsigned char)l->p[i])) {
			if (pad > 0)
				goto bad;
		} else if (l->p[i] == '=' && i + 2 >= l->n) {
			pad++;
		} else {
			goto bad;
		}
	}
	got = l->n / 4 * 3 - pad;
	if (got != want)
		return rba_fail(d, RBA_E_CORRUPT, NULL, lineno, 1,
				"base64 decodes to %zu bytes, expected %zu", got,
				want);
	if (sodium_base642bin(out, want, l->p, l->n, NULL, &bin_len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    bin_len != want)
		goto bad;
	return 0;
bad:
	return rba_fail(d, RBA_E_SYNTAX, NULL, lineno, 1, "not valid base64");
}

/*
 * The size a well-formed base64 line would decode to (0 when its length
 * is not a multiple of four): enough to tell a public key file from a
 * secret one before decoding, so that giving one for the other is named
 * as such rather than as a wrong byte count.
 */
static size_t
b64_line_size(const struct line *l)
{
	size_t pad = 0;

	if (l->n == 0 || l->n % 4 != 0)
		return 0;
	while (pad < 2 && l->p[l->n - 1 - pad] == '=')
		pad++;
	return l->n / 4 * 3 - pad;
}

/* A comment we write must fit on one line and under its cap. */
static int
comment_text_check(const char *c, size_t max, const char *what,
		   struct rba_detail *d)
{
	size_t n = strlen(c);

	if (strpbrk(c, "\r\n") != NULL)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"%s holds a line break", what);
	if (n > max)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"%s is longer than %zu bytes", what, max);
	return 0;
}

/* Appends base64 of p[0..n) and a newline. */
static int
b64_put(struct rba_buf *out, const uint8_t *p, size_t n)
{
	size_t elen = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	char *s;

	if (rba_buf_reserve(out, elen + 1) != 0)
		return RBA_E_NOMEM;
	s = (char *)out->p + out->len;
	sodium_bin2base64(s, elen, p, n, sodium_base64_VARIANT_ORIGINAL);
	out->len += elen - 1;
	rba_buf_put_u8(out, '\n');
	return rba_buf_status(out);
}

int
sign_pubkey_parse(const void *text, size_t len, struct sign_pubkey *out,
		  struct rba_detail *d)
{
	struct line l[2];
	uint8_t blob[PK_BLOB_LEN];
	int err;

	memset(out, 0, sizeof(*out));
	if (len > SIGN_KEYFILE_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"larger than %d bytes", SIGN_KEYFILE_MAX);
	if ((err = crypto_ready()) != 0)
		return err;
	if ((err = lines_split(text, len, l, 2, d)) != 0 ||
	    (err = comment_line_check(&l[0], 1, d)) != 0)
		return err;
	if (b64_line_size(&l[1]) == SK_BLOB_LEN)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"this is a secret key, not a public key "
				"(give the .pub file)");
	if ((err = b64_line_decode(&l[1], 2, blob, sizeof(blob), d)) != 0)
		return err;
	if (memcmp(blob, "Ed", 2) != 0)
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 2, 1,
				"not an Ed25519 key (algorithm is not \"Ed\")");
	memcpy(out->keyid, blob + 2, SIGN_KEYID_LEN);
	memcpy(out->pk, blob + 2 + SIGN_KEYID_LEN, SIGN_PUBLICKEY_LEN);
	return 0;
}

int
sign_pubkey_load(const char *path, struct sign_pubkey *out,
		 struct rba_detail *d)
{
	uint8_t *text = NULL;
	size_t len = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = rba_file_read(path, SIGN_KEYFILE_MAX, &text, &len, d);
	if (err == RBA_E_LIMIT)
		return rba_fail(d, err, path, 0, 0,
				"larger than %d bytes",
				SIGN_KEYFILE_MAX);
	if (err != 0)
		return rba_fail(d, err, path, 0, 0, "%s", rba_strerror(err));
	err = sign_pubkey_parse(text, len, out, d);
	free(text);
	return err;
}

int
sign_pubkey_format(const struct sign_pubkey *pub, const char *comment,
		   struct rba_buf *out, struct rba_detail *d)
{
	char id[SIGN_KEYID_TEXT_LEN + 1];
	uint8_t blob[PK_BLOB_LEN];
	int err;

	if ((err = crypto_ready()) != 0)
		return err;
	sign_keyid_format(pub->keyid, id);
	if (comment != NULL &&
	    (err = comment_text_check(comment, SIGN_COMMENT_MAX,
				      "public key comment", d)) != 0)
		return err;
	memcpy(blob, "Ed", 2);
	memcpy(blob + 2, pub->keyid, SIGN_KEYID_LEN);
	memcpy(blob + 2 + SIGN_KEYID_LEN, pub->pk, SIGN_PUBLICKEY_LEN);
	if (comment != NULL)
		rba_buf_printf(out, COMMENT_PREFIX "%s\n", comment);
	else
		rba_buf_printf(out, COMMENT_PREFIX "rebuild-audit public key %s\n",
			       id);
	if (rba_buf_status(out) != 0)
		return RBA_E_NOMEM;
	return b64_put(out, blob, sizeof(blob));
}

int
sign_seckey_generate(struct sign_seckey **out)
{
	uint8_t pk[SIGN_PUBLICKEY_LEN];
	struct sign_seckey *k;
	int err;

	*out = NULL;
	if ((err = crypto_ready()) != 0)
		return err;
	k = sodium_malloc(sizeof(*k));
	if (k == NULL)
		return RBA_E_NOMEM;
	randombytes_buf(k->keyid, sizeof(k->keyid));
	if (crypto_sign_keypair(pk, k->sk) != 0) {
		sign_seckey_free(k);
		return RBA_E_CRYPTO;
	}
	*out = k;
	return 0;
}

void
sign_seckey_free(struct sign_seckey *k)
{
	if (k == NULL)
		return;
	sodium_memzero(k, sizeof(*k));
	sodium_free(k);
}

void
sign_seckey_pubkey(const struct sign_seckey *k, struct sign_pubkey *out)
{
	memcpy(out->keyid, k->keyid, SIGN_KEYID_LEN);
	crypto_sign_ed25519_sk_to_pk(out->pk, k->sk);
}

/* minisign's checksum: BLAKE2b-256("Ed" || key id || secret key). */
static void
seckey_checksum(const uint8_t *blob, uint8_t chk[SK_CHK_LEN])
{
	crypto_generichash_state hs;

	crypto_generichash_init(&hs, NULL, 0, SK_CHK_LEN);
	crypto_generichash_update(&hs, blob + SK_OFF_SIGALG, 2);
	crypto_generichash_update(&hs, blob + SK_OFF_KEYNUM, SIGN_KEYID_LEN);
	crypto_generichash_update(&hs, blob + SK_OFF_SK, SK_ED25519_LEN);
	crypto_generichash_final(&hs, chk, SK_CHK_LEN);
	sodium_memzero(&hs, sizeof(hs));
}

/* XORs the key id, secret key and checksum with the scrypt stream. */
static int
seckey_xor_kdf(uint8_t *blob, const char *pass, size_t passlen)
{
	uint8_t *stream = sodium_malloc(SK_KEYNUM_LEN);
	size_t i;

	if (stream == NULL)
		return RBA_E_NOMEM;
	if (crypto_pwhash_scryptsalsa208sha256(
		    stream, SK_KEYNUM_LEN, pass, passlen, blob + SK_OFF_SALT,
		    rba_get_u64le(blob + SK_OFF_OPS),
		    (size_t)rba_get_u64le(blob + SK_OFF_MEM)) != 0) {
		sodium_free(stream);
		return RBA_E_NOMEM; /* scrypt fails only for want of memory */
	}
	for (i = 0; i < SK_KEYNUM_LEN; i++)
		blob[SK_OFF_KEYNUM + i] ^= stream[i];
	sodium_memzero(stream, SK_KEYNUM_LEN);
	sodium_free(stream);
	return 0;
}

/*
 * The secret key's own consistency: its second half must be the public
 * key its seed derives, so a damaged key is caught here and not as a
 * string of signatures nobody can verify.
 */
static int
seckey_consistent(const uint8_t *sk)
{
	uint8_t *tmp = sodium_malloc(crypto_sign_SEEDBYTES + SK_ED25519_LEN);
	uint8_t pk[SIGN_PUBLICKEY_LEN];
	int ok;

	if (tmp == NULL)
		return RBA_E_NOMEM;
	crypto_sign_ed25519_sk_to_seed(tmp, sk);
	ok = crypto_sign_seed_keypair(pk, tmp + crypto_sign_SEEDBYTES, tmp) == 0 &&
	     sodium_memcmp(tmp + crypto_sign_SEEDBYTES, sk, SK_ED25519_LEN) == 0;
	sodium_memzero(tmp, crypto_sign_SEEDBYTES + SK_ED25519_LEN);
	sodium_free(tmp);
	return ok ? 0 : RBA_E_CORRUPT;
}

static int
kdf_check(uint64_t ops, uint64_t mem, int err_low, int err_high,
	  struct rba_detail *d)
{
	if (ops < SIGN_KDF_OPSLIMIT_MIN || mem < SIGN_KDF_MEMLIMIT_MIN)
		return rba_fail(d, err_low, NULL, 0, 0,
				"scrypt cost below the minimum (opslimit %" PRIu64
				", memlimit %" PRIu64 ")",
				ops, mem);
	if (ops > SIGN_KDF_OPSLIMIT_DEFAULT || mem > SIGN_KDF_MEMLIMIT_DEFAULT)
		return rba_fail(d, err_high, NULL, 0, 0,
				"scrypt cost above minisign's (opslimit %" PRIu64
				", memlimit %" PRIu64 ")",
				ops, mem);
	return 0;
}

int
sign_seckey_parse(const void *text, size_t len, const char *pass,
		  size_t passlen, struct sign_seckey **out,
		  struct rba_detail *d)
{
	uint8_t chk[SK_CHK_LEN];
	struct sign_seckey *k = NULL;
	struct line l[2];
	uint8_t *blob;
	int err, encrypted;

	*out = NULL;
	if (len > SIGN_KEYFILE_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"larger than %d bytes", SIGN_KEYFILE_MAX);
	if ((err = crypto_ready()) != 0)
		return err;
	if ((err = lines_split(text, len, l, 2, d)) != 0 ||
	    (err = comment_line_check(&l[0], 1, d)) != 0)
		return err;
	if (b64_line_size(&l[1]) == PK_BLOB_LEN)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"this is a public key, not a secret key "
				"(give the .key file)");
	blob = sodium_malloc(SK_BLOB_LEN);
	if (blob == NULL)
		return RBA_E_NOMEM;
	if ((err = b64_line_decode(&l[1], 2, blob, SK_BLOB_LEN, d)) != 0)
		goto out;
	if (memcmp(blob + SK_OFF_SIGALG, "Ed", 2) != 0) {
		err = rba_fail(d, RBA_E_UNSUPPORTED, NULL, 2, 1,
			       "not an Ed25519 key (algorithm is not \"Ed\")");
		goto out;
	}
	if (memcmp(blob + SK_OFF_CHKALG, "B2", 2) != 0) {
		err = rba_fail(d, RBA_E_UNSUPPORTED, NULL, 2, 1,
			       "checksum algorithm is not BLAKE2b (\"B2\")");
		goto out;
	}
	if (memcmp(blob + SK_OFF_KDFALG, "Sc", 2) == 0) {
		encrypted = 1;
	} else if (blob[SK_OFF_KDFALG] == 0 && blob[SK_OFF_KDFALG + 1] == 0) {
		encrypted = 0;
	} else {
		err = rba_fail(d, RBA_E_UNSUPPORTED, NULL, 2, 1,
			       "key derivation is neither scrypt (\"Sc\") nor none");
		goto out;
	}
	if (encrypted) {
		if (pass == NULL) {
			err = rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				       "secret key is passphrase-protected and no passphrase was given");
			goto out;
		}
		err = kdf_check(rba_get_u64le(blob + SK_OFF_OPS),
				rba_get_u64le(blob + SK_OFF_MEM), RBA_E_CORRUPT,
				RBA_E_LIMIT, d);
		if (err != 0)
			goto out;
		if ((err = seckey_xor_kdf(blob, pass, passlen)) != 0) {
			rba_fail(d, err, NULL, 0, 0,
				 "key derivation failed (out of memory)");
			goto out;
		}
		seckey_checksum(blob, chk);
		if (sodium_memcmp(chk, blob + SK_OFF_CHK, SK_CHK_LEN) != 0) {
			err = rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				       "wrong passphrase for this secret key (or the key file is damaged)");
			goto out;
		}
	} else if (!sodium_is_zero(blob + SK_OFF_CHK, SK_CHK_LEN)) {
		/* minisign -W leaves the checksum zero; ours is filled in. */
		seckey_checksum(blob, chk);
		if (sodium_memcmp(chk, blob + SK_OFF_CHK, SK_CHK_LEN) != 0) {
			err = rba_fail(d, RBA_E_CORRUPT, NULL, 2, 1,
				       "secret key checksum does not match");
			goto out;
		}
	}
	if ((err = seckey_consistent(blob + SK_OFF_SK)) != 0) {
		rba_fail(d, err, NULL, 2, 1,
			 "secret key damaged: its public half does not match its seed");
		goto out;
	}
	k = sodium_malloc(sizeof(*k));
	if (k == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	memcpy(k->keyid, blob + SK_OFF_KEYNUM, SIGN_KEYID_LEN);
	memcpy(k->sk, blob + SK_OFF_SK, SK_ED25519_LEN);
	*out = k;
out:
	sodium_memzero(chk, sizeof(chk));
	sodium_memzero(blob, SK_BLOB_LEN);
	sodium_free(blob);
	return err;
}

/*
 * Reads a small file into secure memory: secret key files and passphrase
 * files must never pass through the ordinary heap.  *out has cap + 1
 * bytes and a NUL after the contents.  RBA_E_LIMIT when over cap.
 */
static int
secret_file_read(const char *path, size_t cap, char **out, size_t *len)
{
	char *p;
	size_t n = 0;
	ssize_t r;
	int fd, err = 0;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno;
	p = sodium_malloc(cap + 2);
	if (p == NULL) {
		close(fd);
		return RBA_E_NOMEM;
	}
	for (;;) {
		r = read(fd, p + n, cap + 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > cap) {
			err = RBA_E_LIMIT;
			break;
		}
	}
	close(fd);
	if (err != 0) {
		sodium_memzero(p, cap + 2);
		sodium_free(p);
		return err;
	}
	p[n] = 0;
	*out = p;
	*len = n;
	return 0;
}

int
sign_seckey_load(const char *path, const char *pass, size_t passlen,
		 struct sign_seckey **out, struct rba_detail *d)
{
	char *text;
	size_t len;
	int err;

	*out = NULL;
	if ((err = crypto_ready()) != 0)
		return err;
	err = secret_file_read(path, SIGN_KEYFILE_MAX, &text, &len);
	if (err == RBA_E_LIMIT)
		return rba_fail(d, err, path, 0, 0,
				"larger than %d bytes",
				SIGN_KEYFILE_MAX);
	if (err != 0)
		return rba_fail(d, err, path, 0, 0, "%s", rba_strerror(err));
	if (d != NULL)
		snprintf(d->file, sizeof(d->file), "%s", path);
	err = sign_seckey_parse(text, len, pass, passlen, out, d);
	sodium_memzero(text, len);
	sodium_free(text);
	return err;
}

int
sign_passphrase_read(const char *path, char **out, size_t *len,
		     struct rba_detail *d)
{
	/* Room for the longest passphrase and its "\r\n". */
	const size_t cap = SIGN_PASSPHRASE_MAX + 2;
	char *p, *nl;
	size_t n, line;
	int err;

	*out = NULL;
	*len = 0;
	if ((err = crypto_ready()) != 0)
		return err;
	err = secret_file_read(path, cap, &p, &n);
	if (err == RBA_E_LIMIT)
		return rba_fail(d, err, path, 0, 0,
				"passphrase longer than %d bytes",
				SIGN_PASSPHRASE_MAX);
	if (err != 0)
		return rba_fail(d, err, path, 0, 0, "%s", rba_strerror(err));
	nl = memchr(p, '\n', n);
	line = nl != NULL ? (size_t)(nl - p) : n;
	if (nl != NULL && line + 1 != n) {
		err = rba_fail(d, RBA_E_SYNTAX, path, 2, 1,
			       "passphrase file has more than one line");
		goto bad;
	}
	if (nl != NULL && line > 0 && p[line - 1] == '\r')
		line--;
	if (memchr(p, '\0', line) != NULL || memchr(p, '\r', line) != NULL) {
		err = rba_fail(d, RBA_E_SYNTAX, path, 1, 0,
			       "passphrase holds a NUL byte or a carriage return");
		goto bad;
	}
	if (line == 0) {
		err = rba_fail(d, RBA_E_SYNTAX, path, 1, 0, "passphrase is empty");
		goto bad;
	}
	if (line > SIGN_PASSPHRASE_MAX) {
		err = rba_fail(d, RBA_E_LIMIT, path, 1, 0,
			       "passphrase longer than %d bytes",
			       SIGN_PASSPHRASE_MAX);
		goto bad;
	}
	sodium_memzero(p + line, n - line);
	*out = p;
	*len = line;
	return 0;
bad:
	sodium_memzero(p, n);
	sodium_free(p);
	return err;
}

void
sign_passphrase_free(char *p)
{
	if (p == NULL)
		return;
	sodium_memzero(p, strlen(p));
	sodium_free(p);
}

/*
 * Builds the secret key file's text in secure memory.  With pass, the
 * key is encrypted with scrypt (cost kdf) as minisign's encrypt_key()
 * does: checksum over the plain key, then XOR of the key id, key and
 * checksum.  Without, the KDF fields stay zero like `minisign -G -W`
 * writes them, but the checksum is filled in so damage is detectable.
 */
static int
seckey_text_build(const struct sign_seckey *k, const char *pass,
		  size_t passlen, const struct sign_kdf *kdf, char **out,
		  size_t *len)
{
	const size_t elen =
		sodium_base64_ENCODED_LEN(SK_BLOB_LEN, sodium_base64_VARIANT_ORIGINAL);
	char id[SIGN_KEYID_TEXT_LEN + 1];
	uint8_t *blob;
	char *text;
	int n, err = 0;

	*out = NULL;
	*len = 0;
	blob = sodium_malloc(SK_BLOB_LEN);
	text = sodium_malloc(SK_TEXT_CAP);
	if (blob == NULL || text == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	memset(blob, 0, SK_BLOB_LEN);
	memcpy(blob + SK_OFF_SIGALG, "Ed", 2);
	memcpy(blob + SK_OFF_CHKALG, "B2", 2);
	memcpy(blob + SK_OFF_KEYNUM, k->keyid, SIGN_KEYID_LEN);
	memcpy(blob + SK_OFF_SK, k->sk, SK_ED25519_LEN);
	if (pass != NULL) {
		memcpy(blob + SK_OFF_KDFALG, "Sc", 2);
		randombytes_buf(blob + SK_OFF_SALT, SK_SALT_LEN);
		rba_put_u64le(blob + SK_OFF_OPS, kdf->opslimit);
		rba_put_u64le(blob + SK_OFF_MEM, kdf->memlimit);
	}
	seckey_checksum(blob, blob + SK_OFF_CHK);
	if (pass != NULL && (err = seckey_xor_kdf(blob, pass, passlen)) != 0)
		goto out;
	sign_keyid_format(k->keyid, id);
	n = snprintf(text, SK_TEXT_CAP, COMMENT_PREFIX "rebuild-audit secret key %s\n",
		     id);
	assert(n > 0 && (size_t)n + elen + 1 <= SK_TEXT_CAP);
	sodium_bin2base64(text + n, elen, blob, SK_BLOB_LEN,
			  sodium_base64_VARIANT_ORIGINAL);
	*len = (size_t)n + elen - 1;
	text[(*len)++] = '\n';
	*out = text;
	text = NULL;
out:
	if (blob != NULL) {
		sodium_memzero(blob, SK_BLOB_LEN);
		sodium_free(blob);
	}
	if (text != NULL) {
		sodium_memzero(text, SK_TEXT_CAP);
		sodium_free(text);
	}
	return err;
}

/* Any directory entry at path, even a dangling symbolic link. */
static int
path_taken(const char *path, struct rba_detail *d)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return rba_fail(d, RBA_E_EXISTS, path, 0, 0,
				"already exists (keygen never overwrites a key)");
	if (errno != ENOENT)
		return rba_fail(d, errno, path, 0, 0, "%s", strerror(errno));
	return 0;
}

/*
 * Writes n bytes to a fresh temporary beside path and syncs it.  The
 * caller links it into place, so an existing file is never replaced.
 */
static int
temp_write(struct rba_atomic *a, const char *path, int mode, const void *p,
	   size_t n, struct rba_detail *d)
{
	int err = rba_atomic_open(a, path, mode);

	if (err != 0)
		return rba_fail(d, err, path, 0, 0, "%s", strerror(err));
	/* Exactly `mode`, whatever the umask. */
	if (fchmod(a->fd, (mode_t)mode) != 0 ||
	    (err = rba_atomic_write(a, p, n)) != 0 || fsync(a->fd) != 0) {
		if (err == 0)
			err = errno;
		rba_atomic_abort(a);
		return rba_fail(d, err, path, 0, 0, "%s", strerror(err));
	}
	return 0;
}

/* A passphrase of passlen bytes and the scrypt limits kdf keygen is to
 * use with it: 0, or RBA_E_USAGE or RBA_E_LIMIT, said in d. */
static int
keygen_pass_check(size_t passlen, const struct sign_kdf *kdf,
		  struct rba_detail *d)
{
	if (passlen == 0)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"passphrase is empty");
	if (passlen > SIGN_PASSPHRASE_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"passphrase longer than %d bytes",
				SIGN_PASSPHRASE_MAX);
	return kdf_check(kdf->opslimit, kdf->memlimit, RBA_E_USAGE,
			 RBA_E_USAGE, d);
}

#define KEYGEN_PATH_MAX 4096 /* the size of keygen's two paths */

/*
 * PREFIX.key and PREFIX.pub into keypath and pubpath (KEYGEN_PATH_MAX
 * bytes each),
 * the temporaries of a killed keygen swept, neither path taken: 0, or
 * ENAMETOOLONG or path_taken's error, said in d.
 */
static int
keygen_paths(const char *prefix, char *keypath, char *pubpath,
	     struct rba_detail *d)
{
	int err;

	if ((size_t)snprintf(keypath, KEYGEN_PATH_MAX, "%s.key", prefix) >=
		    KEYGEN_PATH_MAX ||
	    (size_t)snprintf(pubpath, KEYGEN_PATH_MAX, "%s.pub", prefix) >=
		    KEYGEN_PATH_MAX)
		return rba_fail(d, ENAMETOOLONG, prefix, 0, 0, "%s",
				strerror(ENAMETOOLONG));
	/* A killed keygen leaves only temporaries; clear them first. */
	rba_atomic_sweep(keypath);
	rba_atomic_sweep(pubpath);
	if ((err = path_taken(keypath, d)) != 0 ||
	    (err = path_taken(pubpath, d)) != 0)
		return err;
	return 0;
}

/* The written temporary tmp linked to path, never over a file there:
 * 0, or RBA_E_EXISTS or errno, said in d. */
static int
keygen_link(const char *tmp, const char *path, struct rba_detail *d)
{
	int err;

	if (link(tmp, path) == 0)
		return 0;
	err = errno == EEXIST ? RBA_E_EXISTS : errno;
	rba_fail(d, err, path, 0, 0, "%s",
		 err == RBA_E_EXISTS ? "already exists (keygen never overwrites a key)"
				     : strerror(err));
	return err;
}

int
sign_keygen_write(const char *prefix, const char *pass, size_t passlen,
		  const char *comment, const struct sign_kdf *kdf,
		  struct sign_pubkey *pub, struct rba_detail *d)
{
	static const struct sign_kdf kdf_default = {
		SIGN_KDF_OPSLIMIT_DEFAULT, SIGN_KDF_MEMLIMIT_DEFAULT
	};
	char keypath[KEYGEN_PATH_MAX], pubpath[KEYGEN_PATH_MAX];
	struct rba_atomic ka, pa;
	struct sign_seckey *k = NULL;
	struct sign_pubkey pk;
	struct rba_buf pubtext;
	char *sktext = NULL;
	size_t sklen = 0;
	int err, key_linked = 0;

	ka.fd = pa.fd = -1;
	ka.tmp[0] = pa.tmp[0] = 0;
	ka.fp = pa.fp = NULL;
	rba_buf_init(&pubtext);
	if ((err = crypto_ready()) != 0)
		return err;
	if (kdf == NULL)
		kdf = &kdf_default;
	if ((pass != NULL &&
	     (err = keygen_pass_check(passlen, kdf, d)) != 0) ||
	    (err = keygen_paths(prefix, keypath, pubpath, d)) != 0)
		return err;

	if ((err = sign_seckey_generate(&k)) != 0)
		goto out;
	sign_seckey_pubkey(k, &pk);
	if ((err = sign_pubkey_format(&pk, comment, &pubtext, d)) != 0)
		goto out;
	if ((err = seckey_text_build(k, pass, passlen, kdf, &sktext, &sklen)) != 0) {
		rba_fail(d, err, keypath, 0, 0, "%s",
			 pass != NULL && err == RBA_E_NOMEM
				 ? "out of memory for the scrypt key derivation"
				 : rba_strerror(err));
		goto out;
	}
	if ((err = temp_write(&ka, keypath, 0600, sktext, sklen, d)) != 0 ||
	    (err = temp_write(&pa, pubpath, 0644, pubtext.p, pubtext.len, d)) != 0)
		goto out;
	if ((err = keygen_link(ka.tmp, keypath, d)) != 0)
		goto out;
	key_linked = 1;
	if ((err = keygen_link(pa.tmp, pubpath, d)) != 0)
		goto out;
	key_linked = 0;
	rba_atomic_abort(&ka);
	rba_atomic_abort(&pa);
	if ((err = rba_fsync_parent(pubpath)) != 0) {
		rba_fail(d, err, pubpath, 0, 0, "%s", strerror(err));
		goto out;
	}
	if (pub != NULL)
		*pub = pk;
out:
	if (key_linked)
		unlink(keypath);
	rba_atomic_abort(&ka);
	rba_atomic_abort(&pa);
	if (sktext != NULL) {
		sodium_memzero(sktext, sklen);
		sodium_free(sktext);
	}
	sign_seckey_free(k);
	rba_buf_release(&pubtext);
	return err;
}

int
sign_file_sign(const struct sign_seckey *k, const void *msg, size_t n,
	       const char *comment, const char *trusted_comment,
	       struct rba_buf *out, struct rba_detail *d)
{
	static const uint8_t empty[1];
	uint8_t hash[PREHASH_LEN], blob[SIG_BLOB_LEN], global[SIGN_SIG_LEN];
	char id[SIGN_KEYID_TEXT_LEN + 1];
	uint8_t *signed_comment;
	size_t tlen;
	int err;

	assert(k != NULL && trusted_comment != NULL);
	if ((err = crypto_ready()) != 0)
		return err;
	if ((comment != NULL &&
	     (err = comment_text_check(comment, SIGN_COMMENT_MAX,
				       "untrusted comment", d)) != 0) ||
	    (err = comment_text_check(trusted_comment, SIGN_TRUSTED_COMMENT_MAX,
				      "trusted comment", d)) != 0)
		return err;
	tlen = strlen(trusted_comment);
	crypto_generichash(hash, sizeof(hash), n > 0 ? msg : empty, n, NULL, 0);
	memcpy(blob, "ED", 2);
	memcpy(blob + 2, k->keyid, SIGN_KEYID_LEN);
	if (crypto_sign_detached(blob + 2 + SIGN_KEYID_LEN, NULL, hash,
				 sizeof(hash), k->sk) != 0)
		return RBA_E_CRYPTO;
	/* The global signature binds the trusted comment to this signature. */
	signed_comment = malloc(SIGN_SIG_LEN + tlen);
	if (signed_comment == NULL)
		return RBA_E_NOMEM;
	memcpy(signed_comment, blob + 2 + SIGN_KEYID_LEN, SIGN_SIG_LEN);
	memcpy(signed_comment + SIGN_SIG_LEN, trusted_comment, tlen);
	err = crypto_sign_detached(global, NULL, signed_comment,
				   SIGN_SIG_LEN + tlen, k->sk) != 0
		      ? RBA_E_CRYPTO
		      : 0;
	free(signed_comment);
	if (err != 0)
		return err;
	sign_keyid_format(k->keyid, id);
	if (comment != NULL)
		rba_buf_printf(out, COMMENT_PREFIX "%s\n", comment);
	else
		rba_buf_printf(out,
			       COMMENT_PREFIX "signature from rebuild-audit secret key %s\n",
			       id);
	if ((err = b64_put(out, blob, sizeof(blob))) != 0)
		return err;
	rba_buf_printf(out, TRUSTED_PREFIX "%s\n", trusted_comment);
	return b64_put(out, global, sizeof(global));
}

int
sign_raw_sign(const struct sign_seckey *k, const void *msg, size_t n,
	      uint8_t sig[SIGN_SIG_LEN])
{
	static const uint8_t empty[1];

	assert(k != NULL);
	if (crypto_ready() != 0 ||
	    crypto_sign_detached(sig, NULL, n > 0 ? msg : empty, n, k->sk) != 0)
		return RBA_E_CRYPTO;
	return 0;
}

int
sign_raw_verify(const uint8_t pk[SIGN_PUBLICKEY_LEN], const void *msg,
		size_t n, const uint8_t sig[SIGN_SIG_LEN])
{
	static const uint8_t empty[1];

	if (crypto_ready() != 0)
		return RBA_E_CRYPTO;
	return crypto_sign_verify_detached(sig, n > 0 ? msg : empty, n, pk) == 0
		       ? 0
		       : RBA_E_BADSIG;
}

int
sign_file_verify(const struct sign_pubkey *pub, const void *msg, size_t n,
		 const void *sig, size_t siglen, struct sign_check *out,
		 struct rba_detail *d)
{
	static const uint8_t empty[1];
	struct sign_check local;
	uint8_t blob[SIG_BLOB_LEN], global[SIGN_SIG_LEN], hash[PREHASH_LEN];
	char have[SIGN_KEYID_TEXT_LEN + 1], want[SIGN_KEYID_TEXT_LEN + 1];
	const uint8_t *signed_msg;
	uint8_t *signed_comment;
	size_t signed_len, tlen;
	struct line l[4];
	int err;

	if (out == NULL)
		out = &local;
	memset(out, 0, sizeof(*out));
	if (siglen > SIGN_SIGFILE_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"larger than %d bytes", SIGN_SIGFILE_MAX);
	if ((err = crypto_ready()) != 0)
		return err;
	if ((err = lines_split(sig, siglen, l, 4, d)) != 0 ||
	    (err = comment_line_check(&l[0], 1, d)) != 0 ||
	    (err = b64_line_decode(&l[1], 2, blob, sizeof(blob), d)) != 0)
		return err;
	if (memcmp(blob, "ED", 2) == 0) {
		out->legacy = 0;
	} else if (memcmp(blob, "Ed", 2) == 0) {
		out->legacy = 1;
	} else {
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 2, 1,
				"signature algorithm is neither \"ED\" nor \"Ed\"");
	}
	memcpy(out->keyid, blob + 2, SIGN_KEYID_LEN);
	if (l[2].n < TRUSTED_PREFIX_LEN ||
	    memcmp(l[2].p, TRUSTED_PREFIX, TRUSTED_PREFIX_LEN) != 0)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 3, 1,
				"does not start with \"" TRUSTED_PREFIX "\"");
	tlen = l[2].n - TRUSTED_PREFIX_LEN;
	if (tlen > SIGN_TRUSTED_COMMENT_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 3, 1,
				"trusted comment longer than %d bytes",
				SIGN_TRUSTED_COMMENT_MAX);
	if ((err = b64_line_decode(&l[3], 4, global, sizeof(global), d)) != 0)
		return err;

	if (memcmp(out->keyid, pub->keyid, SIGN_KEYID_LEN) != 0) {
		out->failed = SIGN_FAILED_KEYID;
		sign_keyid_format(out->keyid, have);
		sign_keyid_format(pub->keyid, want);
		return rba_fail(d, RBA_E_BADSIG, NULL, 0, 0,
				"signed by key %s, not by key %s of the public key",
				have, want);
	}
	if (out->legacy) {
		signed_msg = n > 0 ? msg : empty;
		signed_len = n;
	} else {
		crypto_generichash(hash, sizeof(hash), n > 0 ? msg : empty, n,
				   NULL, 0);
		signed_msg = hash;
		signed_len = sizeof(hash);
	}
	if (crypto_sign_verify_detached(blob + 2 + SIGN_KEYID_LEN, signed_msg,
					signed_len, pub->pk) != 0) {
		out->failed = SIGN_FAILED_SIGNATURE;
		return rba_fail(d, RBA_E_BADSIG, NULL, 0, 0,
				"signature does not match the file");
	}
	signed_comment = malloc(SIGN_SIG_LEN + tlen);
	if (signed_comment == NULL)
		return RBA_E_NOMEM;
	memcpy(signed_comment, blob + 2 + SIGN_KEYID_LEN, SIGN_SIG_LEN);
	memcpy(signed_comment + SIGN_SIG_LEN, l[2].p + TRUSTED_PREFIX_LEN, tlen);
	err = crypto_sign_verify_detached(global, signed_comment,
					  SIGN_SIG_LEN + tlen, pub->pk);
	free(signed_comment);
	if (err != 0) {
		out->failed = SIGN_FAILED_COMMENT;
		return rba_fail(d, RBA_E_BADSIG, NULL, 0, 0,
				"trusted comment signature does not verify");
	}
	memcpy(out->trusted_comment, l[2].p + TRUSTED_PREFIX_LEN, tlen);
	out->trusted_comment[tlen] = 0;
	return 0;
}
