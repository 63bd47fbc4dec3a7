/*
 * buf.h - growable byte buffers and the canonical little-endian encoding.
 *
 * Writers append to a struct rba_buf; every stored or signed record is
 * built with these helpers, never by copying a struct.  Readers walk a
 * struct rba_cursor, which checks every length against what remains: a
 * get past the end sets cur->bad and returns zero/NULL, so a decoder can
 * read a whole record and test rba_cursor_ok() once at the end.
 */
#ifndef RBA_BUF_H
#define RBA_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "rba.h"

struct rba_buf {
	uint8_t *p;
	size_t len;
	size_t cap;
	int oom; /* set once an append failed; later appends are no-ops */
};

void rba_buf_init(struct rba_buf *b);
void rba_buf_release(struct rba_buf *b);
/* Makes room for n more bytes.  0 or RBA_E_NOMEM. */
int rba_buf_reserve(struct rba_buf *b, size_t n);
void rba_buf_put(struct rba_buf *b, const void *p, size_t n);
void rba_buf_put_u8(struct rba_buf *b, uint8_t v);
void rba_buf_put_u16(struct rba_buf *b, uint16_t v);
void rba_buf_put_u32(struct rba_buf *b, uint32_t v);
void rba_buf_put_u64(struct rba_buf *b, uint64_t v);
void rba_buf_put_f32(struct rba_buf *b, float v);
void rba_buf_put_f64(struct rba_buf *b, double v);
/* u32 length, then the bytes (no terminator). */
void rba_buf_put_str(struct rba_buf *b, const char *s);
void rba_buf_put_lstr(struct rba_buf *b, const void *p, size_t n);
/* Appends formatted text (no terminator kept in len). */
void rba_buf_printf(struct rba_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends a NUL without counting it, so b->p is a C string. */
const char *rba_buf_cstr(struct rba_buf *b);
/* 0, or RBA_E_NOMEM if any append failed. */
int rba_buf_status(const struct rba_buf *b);
/* Hands the memory to the caller (free()) and resets b. */
uint8_t *rba_buf_steal(struct rba_buf *b, size_t *len);

void rba_put_u32le(uint8_t *p, uint32_t v);
void rba_put_u64le(uint8_t *p, uint64_t v);
/* (inline: a compiler makes each one load on a little-endian machine) */
static inline uint32_t
rba_get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t
rba_get_u64le(const uint8_t *p)
{
	return (uint64_t)rba_get_u32le(p) | (uint64_t)rba_get_u32le(p + 4) << 32;
}

struct rba_cursor {
	const uint8_t *p;
	size_t left;
	int bad;
};

void rba_cursor_init(struct rba_cursor *c, const void *p, size_t n);
uint8_t rba_cursor_u8(struct rba_cursor *c);
uint16_t rba_cursor_u16(struct rba_cursor *c);
uint32_t rba_cursor_u32(struct rba_cursor *c);
uint64_t rba_cursor_u64(struct rba_cursor *c);
float rba_cursor_f32(struct rba_cursor *c);
double rba_cursor_f64(struct rba_cursor *c);
/* n raw bytes, borrowed from the underlying memory; NULL when short. */
const uint8_t *rba_cursor_bytes(struct rba_cursor *c, size_t n);
/*
 * A u32-length-prefixed string, borrowed (not NUL-terminated); *n gets
 * its length.  A length above max, or past the end, marks c bad.
 */
const char *rba_cursor_lstr(struct rba_cursor *c, size_t max, size_t *n);
/* Copies a length-prefixed string into a malloc'd C string (or NULL). */
char *rba_cursor_strdup(struct rba_cursor *c, size_t max);
/* 1 while nothing has been read past the end. */
int rba_cursor_ok(const struct rba_cursor *c);

#endif
