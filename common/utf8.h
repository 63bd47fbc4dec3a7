/*
 * utf8.h - the one UTF-8 validator (RFC 3629), for CSV snapshots, YAML
 * pins and policies, and evidence files; and the one rule that makes
 * text from data safe to show (rba_utf8_escape).
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

/*
 * The n bytes at s, text that came from data (a file, the store, a
 * signed statement, a file name), as they may be shown: no byte of the
 * result can move a terminal's cursor, start a line, reorder what is
 * drawn or drive the terminal.  Backslash becomes \\, CR, LF and TAB
 * \r, \n and \t, every other C0 byte and DEL \xHH, and \xHH too each
 * byte of a C1 control (U+0080..U+009F, CSI among them), of a
 * bidirectional or line separator control (U+200E, U+200F,
 * U+2028..U+202E, U+2066..U+2069) and of invalid UTF-8 (a lone 0x9B is
 * CSI to an 8-bit terminal).  Other text is copied.
 *
 * As snprintf: writes at most cap bytes into out (out may be NULL with
 * cap 0), NUL-terminated when cap > 0 and cut before an escape that
 * does not fit whole, and returns the length of the whole result, which
 * is at most 4 * n.
 */
size_t rba_utf8_escape(const void *s, size_t n, char *out, size_t cap);

#endif
