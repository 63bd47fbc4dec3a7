/*
 * b64.h - base64 in the padded original alphabet (RFC 4648 section 4),
 * as Go's encoding/base64.StdEncoding writes it: the form of signed
 * notes, checkpoints and Merkle proofs (common/note.h, common/tlog.h).
 *
 * Decoding is strict: only the alphabet, padding to a multiple of four
 * characters, and canonical form (the unused bits of the last character
 * zero), so that one byte string has exactly one accepted text.
 */
#ifndef RBA_B64_H
#define RBA_B64_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* Characters base64 of n bytes takes. */
#define RBA_B64_LEN(n) (((n) + 2) / 3 * 4)

/* Appends base64 of p[0..n) (no newline) to out; errors stay in out. */
void rba_b64_put(struct rba_buf *out, const void *p, size_t n);

/*
 * Writes base64 of p[0..n) and a NUL into out, which has room for
 * RBA_B64_LEN(n) + 1 bytes.
 */
void rba_b64_encode(const void *p, size_t n, char *out);

/*
 * Decodes s[0..len) into out (cap bytes); *outlen gets the bytes
 * written.  0, or RBA_E_SYNTAX when s is not canonical padded base64 or
 * decodes to more than cap bytes.
 */
int rba_b64_decode(const char *s, size_t len, uint8_t *out, size_t cap,
		   size_t *outlen);

#endif
