/*
 * dsse.h - DSSE envelopes (Dead Simple Signing Envelope, v1.0), signed
 * with the Ed25519 key of a minisign key pair (common/sign.h).
 *
 * The signature is Ed25519 over the pre-authentication encoding
 *
 *   PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 *
 * where LEN is the byte length in ASCII decimal without leading zeros
 * and SP one space (0x20); type is the payloadType's UTF-8 bytes, body
 * the payload's bytes.  The envelope, as dsse_envelope_sign writes it:
 *
 *   {"payloadType": TYPE, "payload": BASE64(body),
 *    "signatures": [{"keyid": KEYID, "sig": BASE64(signature)}]}
 *
 * on one line ending in LF, KEYID the key id as minisign prints it (16
 * uppercase hex digits), BASE64 the standard padded alphabet.
 *
 * Reading (dsse_envelope_parse) follows the spec's parsing rules:
 * payload, payloadType, signatures and every signature's sig are
 * required, keyid is optional (absent is empty), other members are
 * ignored; base64 in the standard or the URL-safe alphabet, padded or
 * not.  A keyid is a hint, never a reason to accept: dsse_envelope_verify
 * accepts a signature only when Ed25519 verifies it over PAE.
 */
#ifndef RBA_DSSE_H
#define RBA_DSSE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/rba.h"
#include "common/sign.h"

/* The payloadType of an in-toto statement. */
#define DSSE_TYPE_INTOTO "application/vnd.in-toto+json"
/* Caps of what is read: signatures in one envelope, keyid bytes, and the
 * payloadType's bytes. */
#define DSSE_SIGS_MAX 16
#define DSSE_KEYID_MAX 256
#define DSSE_TYPE_MAX 256

/* Appends PAE(type, body[0..n)) to out; errors stay in out. */
void dsse_pae(struct rba_buf *out, const char *type, const void *body, size_t n);

/*
 * Appends the envelope of body[0..n) under type, signed by k, to out
 * (one line, LF-terminated).  0; RBA_E_CRYPTO; RBA_E_NOMEM.
 */
int dsse_envelope_sign(const struct sign_seckey *k, const char *type,
		       const void *body, size_t n, struct rba_buf *out,
		       struct rba_detail *d);

/* 1 when p[0..n) is a JSON object with a payloadType member (an
 * envelope, well formed or not), 0 otherwise. */
int dsse_is_envelope(const void *p, size_t n);

/* One signature as read. */
struct dsse_sig {
	char keyid[DSSE_KEYID_MAX + 1]; /* "" when absent */
	uint8_t sig[SIGN_SIG_LEN];
	int sig_ok;			/* sig decoded to SIGN_SIG_LEN bytes */
};

/* An envelope as read; release with dsse_envelope_release. */
struct dsse_envelope {
	char type[DSSE_TYPE_MAX + 1];
	uint8_t *payload; /* malloc'd */
	size_t n;
	struct dsse_sig sigs[DSSE_SIGS_MAX];
	size_t nsigs;
};

/*
 * Reads the envelope p[0..n) into *out.  0; RBA_E_SYNTAX (not JSON, a
 * required member missing or of the wrong type, base64 that does not
 * decode, no signature: d->reason says which, one line); RBA_E_LIMIT
 * (more than DSSE_SIGS_MAX signatures, a keyid or payloadType over its
 * cap); RBA_E_NOMEM.  A sig that decodes to another length than
 * SIGN_SIG_LEN is kept with sig_ok 0 (it verifies nothing).  After an
 * error out holds nothing to release, but releasing it is allowed.
 */
int dsse_envelope_parse(const void *p, size_t n, struct dsse_envelope *out,
			struct rba_detail *d);

/* Frees what dsse_envelope_parse filled and zeroes e (NULL ok). */
void dsse_envelope_release(struct dsse_envelope *e);

/*
 * The first signature of e that pk verifies over PAE(e->type,
 * e->payload): its index in *which.  Signatures whose keyid is neither
 * empty nor keyid (when keyid is not NULL: the key id text of pk's
 * pair) are not tried.  0; RBA_E_BADSIG (*tried: how many were tried,
 * 0 when every keyid names another key); RBA_E_NOMEM; RBA_E_CRYPTO.
 */
int dsse_envelope_verify(const struct dsse_envelope *e,
			 const uint8_t pk[SIGN_PUBLICKEY_LEN], const char *keyid,
			 size_t *which, size_t *tried);

#endif
