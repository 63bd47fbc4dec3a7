/*
 * utf8.h - the one UTF-8 validator (RFC 3629), for CSV snapshots, YAML
 * pins and policies, and evidence files.
 *
 * Valid UTF-8 here is exactly RFC 3629's: no overlong forms (C0, C1,
 * E0 80..9F, F0 80..8F), no surrogates (U+D800..U+DFFF, ED A0..BF), nothing
 * above U+10FFFF (F4 90.., F5..FF), no continuation byte without a lead,
 * no sequence cut short by the end of the input.  NUL is a valid
 * character: callers that refuse it say so themselves.
 */
#ifndef RBA_UTF8_H
#define RBA_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the character at p[0] of the n > 0 bytes at p into *cp and
 * returns its length (1 to 4), or 0 when the bytes there do not start a
 * valid character (*cp is then untouched).
 */
size_t rba_utf8_next(const uint8_t *p, size_t n, uint32_t *cp);

/*
 * 1 when all n bytes at p are valid UTF-8 (n 0 is valid).  Otherwise 0,
 * with *bad_at (NULL allowed) the offset of the first byte of the first
 * invalid or truncated sequence.
 */
int rba_utf8_valid(const void *p, size_t n, size_t *bad_at);

#endif
