/* buf.c - growable buffers and little-endian encoding. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
rba_buf_init(struct rba_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void
rba_buf_release(struct rba_buf *b)
{
	if (b == NULL)
		return;
	free(b->p);
	memset(b, 0, sizeof(*b));
}

int
rba_buf_reserve(struct rba_buf *b, size_t n)
{
	size_t need, cap;
	uint8_t *p;

	if (b->oom)
		return RBA_E_NOMEM;
	if (n > SIZE_MAX - b->len - 1)
		goto fail;
	need = b->len + n + 1; /* room for rba_buf_cstr's NUL */
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->p, cap);
	if (p == NULL)
		goto fail;
	b->p = p;
	b->cap = cap;
	return 0;
fail:
	b->oom = 1;
	return RBA_E_NOMEM;
}

void
rba_buf_put(struct rba_buf *b, const void *p, size_t n)
{
	if (n == 0 || rba_buf_reserve(b, n) != 0)
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void
rba_buf_put_u8(struct rba_buf *b, uint8_t v)
{
	rba_buf_put(b, &v, 1);
}

void
rba_buf_put_u16(struct rba_buf *b, uint16_t v)
{
	uint8_t t[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	rba_buf_put(b, t, 2);
}

void
rba_buf_put_u32(struct rba_buf *b, uint32_t v)
{
	uint8_t t[4];
	rba_put_u32le(t, v);
	rba_buf_put(b, t, 4);
}

void
rba_buf_put_u64(struct rba_buf *b, uint64_t v)
{
	uint8_t t[8];
	rba_put_u64le(t, v);
	rba_buf_put(b, t, 8);
}

void
rba_buf_put_f32(struct rba_buf *b, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	rba_buf_put_u32(b, u);
}

void
rba_buf_put_f64(struct rba_buf *b, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	rba_buf_put_u64(b, u);
}

void
rba_buf_put_str(struct rba_buf *b, const char *s)
{
	rba_buf_put_lstr(b, s, strlen(s));
}

void
rba_buf_put_lstr(struct rba_buf *b, const void *p, size_t n)
{
	if (n > UINT32_MAX) {
		b->oom = 1;
		return;
	}
	rba_buf_put_u32(b, (uint32_t)n);
	rba_buf_put(b, p, n);
}

void
rba_buf_printf(struct rba_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = 1;
		return;
	}
	if (rba_buf_reserve(b, (size_t)n + 1) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

const char *
rba_buf_cstr(struct rba_buf *b)
{
	if (rba_buf_reserve(b, 0) != 0)
		return "";
	b->p[b->len] = 0;
	return (const char *)b->p;
}

int
rba_buf_status(const struct rba_buf *b)
{
	return b->oom ? RBA_E_NOMEM : 0;
}

uint8_t *
rba_buf_steal(struct rba_buf *b, size_t *len)
{
	uint8_t *p;

	rba_buf_cstr(b);
	p = b->p;
	if (len)
		*len = b->len;
	rba_buf_init(b);
	return p;
}

void
rba_put_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

void
rba_put_u64le(uint8_t *p, uint64_t v)
{
	rba_put_u32le(p, (uint32_t)v);
	rba_put_u32le(p + 4, (uint32_t)(v >> 32));
}

void
rba_cursor_init(struct rba_cursor *c, const void *p, size_t n)
{
	c->p = p;
	c->left = n;
	c->bad = 0;
}

const uint8_t *
rba_cursor_bytes(struct rba_cursor *c, size_t n)
{
	const uint8_t *p;

	if (c->bad || n > c->left) {
		c->bad = 1;
		return NULL;
	}
	p = c->p;
	c->p += n;
	c->left -= n;
	return p;
}

uint8_t
rba_cursor_u8(struct rba_cursor *c)
{
	const uint8_t *p = rba_cursor_bytes(c, 1);
	return p ? p[0] : 0;
}

uint16_t
rba_cursor_u16(struct rba_cursor *c)
{
	const uint8_t *p = rba_cursor_bytes(c, 2);
	return p ? (uint16_t)(p[0] | p[1] << 8) : 0;
}

uint32_t
rba_cursor_u32(struct rba_cursor *c)
{
	const uint8_t *p = rba_cursor_bytes(c, 4);
	return p ? rba_get_u32le(p) : 0;
}

uint64_t
rba_cursor_u64(struct rba_cursor *c)
{
	const uint8_t *p = rba_cursor_bytes(c, 8);
	return p ? rba_get_u64le(p) : 0;
}

float
rba_cursor_f32(struct rba_cursor *c)
{
	uint32_t u = rba_cursor_u32(c);
	float f;
	memcpy(&f, &u, 4);
	return f;
}

double
rba_cursor_f64(struct rba_cursor *c)
{
	uint64_t u = rba_cursor_u64(c);
	double f;
	memcpy(&f, &u, 8);
	return f;
}

const char *
rba_cursor_lstr(struct rba_cursor *c, size_t max, size_t *n)
{
	uint32_t len = rba_cursor_u32(c);

	*n = 0;
	if (c->bad || len > max) {
		c->bad = 1;
		return NULL;
	}
	*n = len;
	return (const char *)rba_cursor_bytes(c, len);
}

char *
rba_cursor_strdup(struct rba_cursor *c, size_t max)
{
	size_t n;
	const char *s = rba_cursor_lstr(c, max, &n);
	char *d;

	if (s == NULL)
		return NULL;
	d = malloc(n + 1);
	if (d == NULL) {
		c->bad = 1;
		return NULL;
	}
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

int
rba_cursor_ok(const struct rba_cursor *c)
{
	return !c->bad;
}
