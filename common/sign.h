/*
 * sign.h - Ed25519 keys and signatures in minisign's formats (libsodium).
 *
 * Everything written here is read by `minisign` and everything minisign
 * writes for Ed25519 is read here, so an auditor needs no copy of
 * rebuild-audit to check a signed file: `minisign -Vm FILE -p KEY.pub`.
 *
 * Public key file (two lines):
 *   untrusted comment: <text>
 *   base64("Ed" || key id[8] || Ed25519 public key[32])
 *
 * Secret key file (two lines, the second base64 of 158 bytes):
 *   "Ed" || kdf ("Sc" = scrypt, or two zero bytes = unencrypted) || "B2"
 *   || salt[32] || opslimit (u64 LE) || memlimit (u64 LE)
 *   || key id[8] || Ed25519 secret key[64] || checksum[32]
 * where checksum = BLAKE2b-256("Ed" || key id || secret key).  With
 * scrypt, the last 104 bytes (key id, secret key, checksum) are XORed with
 * crypto_pwhash_scryptsalsa208sha256(passphrase, salt, opslimit,
 * memlimit), exactly as minisign does.
 *
 * Signature file (four lines):
 *   untrusted comment: <text>
 *   base64("ED" || key id[8] || Ed25519 signature of BLAKE2b-512(file))
 *   trusted comment: <text>
 *   base64(Ed25519 signature of (the 64-byte signature above || text))
 * Legacy "Ed" signatures (over the raw file) are accepted by
 * sign_file_verify(); sign_file_sign() writes "ED" only, as minisign does
 * by default.
 *
 * Reading is strict: every line ends with "\n" or "\r\n" (the last line
 * may lack it), no other line may follow, comments hold no CR, LF or NUL,
 * base64 is the padded original alphabet in canonical form, and every
 * decoded length is checked.  The untrusted comment is not signed: it may
 * change freely and is never shown as trusted.
 *
 * Secret material lives only in sodium_malloc() memory, which is wiped
 * before it is freed; no secret byte is ever put in a detail reason.
 * Functions here initialise libsodium themselves when needed.
 */
#ifndef RBA_SIGN_H
#define RBA_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/rba.h"

#define SIGN_KEYID_LEN 8
#define SIGN_KEYID_TEXT_LEN 16 /* uppercase hex of the little-endian u64 */
#define SIGN_PUBLICKEY_LEN 32
#define SIGN_SIG_LEN 64

/*
 * Caps, chosen so that whatever is accepted here fits minisign's own
 * buffers (1024-byte comment lines, 8192-byte trusted comment lines,
 * 1024-byte passwords).
 */
#define SIGN_COMMENT_MAX 1003	      /* untrusted comment text, bytes */
#define SIGN_TRUSTED_COMMENT_MAX 8173 /* trusted comment text, bytes */
#define SIGN_PASSPHRASE_MAX 1023      /* passphrase, bytes */
#define SIGN_KEYFILE_MAX 2048	      /* whole public or secret key file */
#define SIGN_SIGFILE_MAX 10240	      /* whole signature file */
#define SIGN_MESSAGE_MAX ((size_t)1 << 30) /* a file read to be verified */

/* A public key: small value type, freely copied. */
struct sign_pubkey {
	uint8_t keyid[SIGN_KEYID_LEN];
	uint8_t pk[SIGN_PUBLICKEY_LEN];
};

/* A secret key, opaque, in sodium_malloc() memory. */
struct sign_seckey;

/*
 * scrypt cost for a passphrase-protected secret key.  NULL wherever one is
 * taken means minisign's own (crypto_pwhash_scryptsalsa208sha256
 * OPSLIMIT_SENSITIVE and MEMLIMIT_SENSITIVE: 33554432 and 1 GiB, about
 * five seconds).  A key file records its cost, so minisign reads a key
 * made with any cost from SIGN_KDF_*_MIN up to those defaults.
 */
struct sign_kdf {
	uint64_t opslimit;
	uint64_t memlimit;
};
#define SIGN_KDF_OPSLIMIT_MIN 32768ULL
#define SIGN_KDF_MEMLIMIT_MIN 16777216ULL
#define SIGN_KDF_OPSLIMIT_DEFAULT 33554432ULL
#define SIGN_KDF_MEMLIMIT_DEFAULT 1073741824ULL

/*
 * Writes the key id as minisign prints it (16 uppercase hex digits of the
 * little-endian u64) and a NUL.
 */
void sign_keyid_format(const uint8_t keyid[SIGN_KEYID_LEN],
		       char out[SIGN_KEYID_TEXT_LEN + 1]);

/*
 * Parses a public key file's text (len bytes, need not be NUL-terminated).
 * Returns 0; RBA_E_SYNTAX (line structure, prefix, base64), RBA_E_SCHEMA
 * (the text is a secret key file: "this is a secret key, not a public
 * key ...", with no line), RBA_E_CORRUPT (another wrong decoded length),
 * RBA_E_UNSUPPORTED (not "Ed") or RBA_E_LIMIT
 * (over SIGN_KEYFILE_MAX or a comment over SIGN_COMMENT_MAX).  d gets the
 * line and a reason.
 */
int sign_pubkey_parse(const void *text, size_t len, struct sign_pubkey *out,
		      struct rba_detail *d);

/*
 * Reads and parses a public key file.  The errors of sign_pubkey_parse(),
 * or an errno from reading (ENOENT, EACCES, ...); d->file is path.
 */
int sign_pubkey_load(const char *path, struct sign_pubkey *out,
		     struct rba_detail *d);

/*
 * Appends a public key file's text to out.  comment NULL means
 * "rebuild-audit public key <KEYID>".  Returns 0, RBA_E_RANGE (comment
 * holds CR, LF or NUL), RBA_E_LIMIT (comment over SIGN_COMMENT_MAX) or
 * RBA_E_NOMEM.
 */
int sign_pubkey_format(const struct sign_pubkey *pub, const char *comment,
		       struct rba_buf *out, struct rba_detail *d);

/*
 * A fresh key pair with a random key id.  *out is owned by the caller
 * (sign_seckey_free()).  Returns 0, RBA_E_CRYPTO or RBA_E_NOMEM.
 */
int sign_seckey_generate(struct sign_seckey **out);

/* Wipes and frees k (NULL allowed). */
void sign_seckey_free(struct sign_seckey *k);

/* The public half of k (key id and public key). */
void sign_seckey_pubkey(const struct sign_seckey *k, struct sign_pubkey *out);

/*
 * Parses a secret key file's text.  pass (passlen bytes, no NUL needed)
 * is required for a passphrase-protected key and ignored for an
 * unencrypted one.  The key is checked: its checksum (an all-zero checksum
 * is accepted for an unencrypted key, as `minisign -G -W` writes one) and
 * its embedded public half against the one its seed derives.
 * Returns 0 and *out (caller frees with sign_seckey_free()); the errors of
 * sign_pubkey_parse() for the text, where RBA_E_SCHEMA says the text is a
 * public key file ("this is a public key, not a secret key ...", with no
 * line); RBA_E_USAGE (protected key and no
 * passphrase, or a wrong passphrase: the checksum does not match after
 * decryption); RBA_E_CORRUPT (checksum or key inconsistent on an
 * unencrypted key, KDF cost below SIGN_KDF_*_MIN); RBA_E_LIMIT (KDF cost
 * above the defaults); RBA_E_UNSUPPORTED (unknown signature, KDF or
 * checksum algorithm); RBA_E_NOMEM (secure memory or key derivation).
 * No byte of the text or the key appears in d.
 */
int sign_seckey_parse(const void *text, size_t len, const char *pass,
		      size_t passlen, struct sign_seckey **out,
		      struct rba_detail *d);

/*
 * Reads (into secure memory, never the heap) and parses a secret key
 * file.  The errors of sign_seckey_parse(), or an errno; d->file is path.
 */
int sign_seckey_load(const char *path, const char *pass, size_t passlen,
		     struct sign_seckey **out, struct rba_detail *d);

/*
 * Reads a passphrase file: one line, its "\n" or "\r\n" optional, nothing
 * after it, no NUL or CR inside, not empty, at most SIGN_PASSPHRASE_MAX
 * bytes: the same bytes minisign takes when that line is typed at its
 * prompt.  *out is NUL-terminated sodium_malloc() memory (free with
 * sign_passphrase_free()); *len excludes the NUL.  Returns 0, RBA_E_SYNTAX,
 * RBA_E_LIMIT, RBA_E_NOMEM or an errno; d->file is path.
 */
int sign_passphrase_read(const char *path, char **out, size_t *len,
			 struct rba_detail *d);

/* Wipes and frees a passphrase from sign_passphrase_read() (NULL ok). */
void sign_passphrase_free(char *p);

/*
 * Generates a key pair and writes PREFIX.key and PREFIX.pub.
 *
 * The secret key is unencrypted when pass is NULL, else protected by
 * scrypt with cost kdf (NULL: minisign's default).  comment is the public
 * key's untrusted comment (NULL: the default of sign_pubkey_format()); the
 * secret key's is "rebuild-audit secret key <KEYID>".
 *
 * Both files are first written to temporaries beside them (the secret one
 * created O_EXCL|O_NOFOLLOW, mode exactly 0600; the public one 0644 less
 * the umask), synced, then hard-linked to their names, which fails rather
 * than replace anything; the directory is synced.  On any error neither
 * file is left behind; a crash between the two links can at worst leave
 * PREFIX.key alone (`minisign -R` recreates the public key from it).
 * Stale temporaries of a killed run are removed first.  *pub (may be
 * NULL) gets the public key.
 *
 * Returns 0; RBA_E_EXISTS (PREFIX.key or PREFIX.pub exists, even as a
 * dangling link; nothing written); RBA_E_USAGE (empty passphrase, or kdf
 * outside SIGN_KDF_*_MIN..DEFAULT); RBA_E_RANGE / RBA_E_LIMIT (comment);
 * ENAMETOOLONG; RBA_E_NOMEM; RBA_E_CRYPTO; or an errno from the file
 * system.  d->file names the file concerned.
 */
int sign_keygen_write(const char *prefix, const char *pass, size_t passlen,
		      const char *comment, const struct sign_kdf *kdf,
		      struct sign_pubkey *pub, struct rba_detail *d);

/*
 * Signs msg[0..n) the way `minisign -S` does (prehashed "ED") and appends
 * the four-line signature file text to out.  comment is the untrusted
 * comment (NULL: "signature from rebuild-audit secret key <KEYID>");
 * trusted_comment is signed (not NULL, may be empty).  The same key, file
 * and comments always give the same bytes (Ed25519 is deterministic).
 * Returns 0, RBA_E_RANGE (a comment holds CR, LF or NUL), RBA_E_LIMIT (a
 * comment over its cap), RBA_E_CRYPTO or RBA_E_NOMEM.
 */
int sign_file_sign(const struct sign_seckey *k, const void *msg, size_t n,
		   const char *comment, const char *trusted_comment,
		   struct rba_buf *out, struct rba_detail *d);

/*
 * Ed25519 over msg[0..n) itself, no prehash and no comment: the
 * signature of a signed note's text (common/note.h), which the same key
 * pair makes as minisign's.  sign_raw_sign: 0, RBA_E_CRYPTO.
 * sign_raw_verify: 0 when sig is pk's signature of msg, RBA_E_BADSIG
 * when not, RBA_E_CRYPTO.
 */
int sign_raw_sign(const struct sign_seckey *k, const void *msg, size_t n,
		  uint8_t sig[SIGN_SIG_LEN]);
int sign_raw_verify(const uint8_t pk[SIGN_PUBLICKEY_LEN], const void *msg,
		    size_t n, const uint8_t sig[SIGN_SIG_LEN]);

/* Which check failed when sign_file_verify() returns RBA_E_BADSIG. */
enum sign_failure {
	SIGN_FAILED_NONE = 0,
	SIGN_FAILED_KEYID,     /* signed by another key */
	SIGN_FAILED_SIGNATURE, /* the file's signature does not verify */
	SIGN_FAILED_COMMENT,   /* the trusted comment's signature does not */
};

/* What sign_file_verify() learnt; caller-owned. */
struct sign_check {
	enum sign_failure failed;
	int legacy;			/* 1: "Ed" over the raw file */
	uint8_t keyid[SIGN_KEYID_LEN];	/* from the signature, once parsed */
	/* Set only when the result is 0; empty otherwise. */
	char trusted_comment[SIGN_TRUSTED_COMMENT_MAX + 1];
};

/*
 * Verifies the signature file text sig[0..siglen) over msg[0..n) with
 * pub: key ids, then the file's signature, then the trusted comment's.
 * Returns 0 (valid; out->trusted_comment set); RBA_E_BADSIG (out->failed
 * and d->reason say which check failed); for a signature file that does
 * not parse: RBA_E_SYNTAX (line structure, prefixes, base64, CR, LF or
 * NUL misplaced), RBA_E_CORRUPT (wrong decoded length), RBA_E_UNSUPPORTED
 * (algorithm neither "ED" nor "Ed") or RBA_E_LIMIT (over
 * SIGN_SIGFILE_MAX or a comment cap).  d->line is the signature file line
 * at fault.  out may be NULL.
 */
int sign_file_verify(const struct sign_pubkey *pub, const void *msg,
		     size_t n, const void *sig, size_t siglen,
		     struct sign_check *out, struct rba_detail *d);

#endif
