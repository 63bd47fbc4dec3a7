/* utf8.c - RFC 3629 UTF-8 decoding and validation; escaping for show. */
#include "common/utf8.h"

#include <assert.h>
#include <string.h>

size_t
rba_utf8_next(const uint8_t *p, size_t n, uint32_t *cp)
{
	uint32_t c, min;
	size_t len;

	assert(p != NULL && n > 0);
	c = p[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		c &= 0x1F;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		c &= 0x0F;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

int
rba_utf8_valid(const void *text, size_t n, size_t *bad_at)
{
	const uint8_t *p = text;
	size_t i = 0, len;
	uint32_t cp;

	while (i < n) {
		/* Snapshots are mostly ASCII: skip it eight bytes at a time. */
		if (n - i >= 8) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if ((w & 0x8080808080808080ull) == 0) {
				i += 8;
				continue;
			}
		}
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((len = rba_utf8_next(p + i, n - i, &cp)) == 0) {
			if (bad_at != NULL)
				*bad_at = i;
			return 0;
		}
		i += len;
	}
	return 1;
}

/* Code points shown as their bytes: C1 controls and the controls that
 * reorder or break a line as it is drawn. */
static int
hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t
rba_utf8_escape(const void *s, size_t n, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = s;
	size_t len = 0, written = 0, i = 0;
	int full = cap == 0; /* a piece did not fit: nothing more is written */

	assert(out != NULL || cap == 0);
	while (i < n) {
		char piece[16];
		size_t k = 0, used;
		uint32_t cp = 0;
		size_t clen = p[i] < 0x80 ? 1 : rba_utf8_next(p + i, n - i, &cp);

		if (p[i] == '\\' || p[i] == '\r' || p[i] == '\n' || p[i] == '\t') {
			piece[k++] = '\\';
			piece[k++] = p[i] == '\\' ? '\\' : p[i] == '\r' ? 'r'
				   : p[i] == '\n' ? 'n' : 't';
			used = 1;
		} else if (p[i] < 0x20 || p[i] == 0x7f || clen == 0 ||
			   (p[i] >= 0x80 && hidden(cp))) {
			/* an invalid byte alone, or each byte of a hidden
			 * character */
			used = clen == 0 ? 1 : clen;
			for (size_t j = 0; j < used; j++) {
				piece[k++] = '\\';
				piece[k++] = 'x';
				piece[k++] = hex[p[i + j] >> 4];
				piece[k++] = hex[p[i + j] & 15];
			}
		} else {
			used = clen;
			memcpy(piece, p + i, used);
			k = used;
		}
		if (!full && written + k < cap) {
			memcpy(out + written, piece, k);
			written += k;
		} else {
			full = 1;
		}
		len += k;
		i += used;
	}
	if (cap > 0)
		out[written] = 0;
	return len;
}
