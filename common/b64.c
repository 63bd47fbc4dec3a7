/* b64.c - strict base64 of the original alphabet (common/b64.h). */
#include "common/b64.h"

#include "common/rba.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
rba_b64_encode(const void *p, size_t n, char *out)
{
	const uint8_t *b = p;
	size_t o = 0, i;

	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = alphabet[(v >> 6) & 63];
		out[o++] = alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)b[i] << 16;
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8;
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = alphabet[(v >> 6) & 63];
		out[o++] = '=';
	}
	out[o] = 0;
}

void
rba_b64_put(struct rba_buf *out, const void *p, size_t n)
{
	size_t len = RBA_B64_LEN(n);

	if (rba_buf_reserve(out, len + 1) != 0)
		return;
	rba_b64_encode(p, n, (char *)out->p + out->len);
	out->len += len;
}

static int
value_of(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int
rba_b64_decode(const char *s, size_t len, uint8_t *out, size_t cap,
	       size_t *outlen)
{
	size_t pad = 0, n, o = 0;

	*outlen = 0;
	if (len % 4 != 0)
		return RBA_E_SYNTAX;
	if (len > 0 && s[len - 1] == '=')
		pad = len > 1 && s[len - 2] == '=' ? 2 : 1;
	n = len / 4 * 3 - pad;
	if (n > cap)
		return RBA_E_SYNTAX;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		uint32_t w;
		int last = i + 4 == len;

		for (int j = 0; j < 4; j++) {
			v[j] = value_of((unsigned char)s[i + j]);
			if (v[j] < 0 && !(last && s[i + j] == '=' &&
					  j >= 4 - (int)pad))
				return RBA_E_SYNTAX;
		}
		w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12;
		if (!last || pad < 2)
			w |= (uint32_t)v[2] << 6;
		if (!last || pad < 1)
			w |= (uint32_t)v[3];
		/* Canonical: the bits the padding leaves over are zero. */
		if (last && pad == 2 && (v[1] & 15) != 0)
			return RBA_E_SYNTAX;
		if (last && pad == 1 && (v[2] & 3) != 0)
			return RBA_E_SYNTAX;
		out[o++] = (uint8_t)(w >> 16);
		if (!last || pad < 2)
			out[o++] = (uint8_t)(w >> 8);
		if (!last || pad < 1)
			out[o++] = (uint8_t)w;
	}
	*outlen = o;
	return 0;
}
