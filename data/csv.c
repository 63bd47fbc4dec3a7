/*
 * csv.c - RFC 4180 reader.
 *
 * The reader finds a whole record in its buffer before splitting it, so
 * quoted fields can be unescaped in place: a record is never parsed
 * twice, and its bytes stay put until the next call.  The common case
 * (a data record without a quote, in bytes already known to be ASCII
 * without a NUL, each block read checked once) is one pass over the
 * record 16 bytes at a time (fast_record); any other record takes the
 * general steps (next_record, record_check, split_plain or
 * split_quoted), which give every diagnostic.  Numbers: a field of one
 * or two digits is read directly, up to 8 digits with a sign and a
 * point as one word (swar_field), up to 19 significant digits in a
 * byte loop (fast_field), the rest by strtod; all give strtod's double,
 * bit for bit, and the unit tests hold each path to it.
 */
#include "csv.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/buf.h"
#include "common/fileio.h"
#include "common/utf8.h"

#define CSV_BLOCK (256u << 10)
#define PINS_TOKEN_LENS 66 /* token lengths told apart: 0..64, longer */

struct csv_reader {
	int fd;		/* -1 for memory input */
	int own_fd;
	char *name;
	uint8_t *buf;	/* owned for files; for memory, the caller's bytes */
	size_t cap;
	size_t start;	/* unconsumed data: [start, end) */
	size_t end;
	int eof;
	int err;	/* sticky */
	struct rba_detail errd;
	unsigned long line;	/* line of the next record */
	unsigned long rec_line; /* line of the last record returned */
	uint64_t consumed;
	int first;	/* BOM check pending */
	uint64_t records; /* records returned so far */
	csv_tap_fn tap;
	void *tap_ctx;
	struct csv_field *fields;
	size_t fields_cap;
	int rec_quoted; /* the last record returned held a quote */
	size_t clean_end; /* file input without SSE2: buf[start,
			   * clean_end) is known ASCII without a NUL (each
			   * block read is checked once, while all before
			   * it was); with SSE2 0, fast_record looks */
};

/* A carriage return not followed by a line feed, outside quotes, in the
 * header record: what a file with CR-only line ends gives (csv.h). */
#define CSV_BARE_CR "a carriage return not followed by a line feed: CR-only " \
		    "line ends are not read (convert them to LF or CRLF)"

#ifndef __SSE2__
/*
 * Whether n bytes are all ASCII and none is NUL (eight at a time): then
 * no record of them needs its UTF-8 or its NUL bytes checked.
 */
static int
ascii_clean(const uint8_t *p, size_t n)
{
	const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
	uint64_t acc = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		/* a high bit, or a zero byte (w - lo borrows into its high bit) */
		acc |= w | ((w - lo) & ~w);
		if ((i & 4095) == 0 && (acc & hi) != 0)
			return 0;
	}
	if ((acc & hi) != 0)
		return 0;
	for (; i < n; i++)
		if (p[i] == 0 || p[i] >= 0x80)
			return 0;
	return 1;
}
#endif

static int
reader_new(const char *name, struct csv_reader **out)
{
	struct csv_reader *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return RBA_E_NOMEM;
	r->name = strdup(name);
	r->fields_cap = 64;
	r->fields = malloc(r->fields_cap * sizeof(*r->fields));
	if (r->name == NULL || r->fields == NULL) {
		free(r->name);
		free(r->fields);
		free(r);
		return RBA_E_NOMEM;
	}
	r->fd = -1;
	r->line = 1;
	r->first = 1;
	*out = r;
	return 0;
}

int
csv_reader_open(const char *path, const char *name, struct csv_reader **out,
		struct rba_detail *d)
{
	struct csv_reader *r;
	int fd, err;

	*out = NULL;
	if (name == NULL)
		name = path;
	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
			return rba_fail(d, err, name, 0, 0, "%s", strerror(err));
		}
	}
	err = reader_new(name, &r);
	if (err == 0) {
		r->cap = CSV_BLOCK * 2;
		r->buf = malloc(r->cap);
		if (r->buf == NULL) {
			csv_reader_free(r);
			err = RBA_E_NOMEM;
		}
	}
	if (err) {
		if (fd != STDIN_FILENO)
			close(fd);
		return rba_fail(d, err, name, 0, 0, "%s", rba_strerror(err));
	}
	r->fd = fd;
	r->own_fd = fd != STDIN_FILENO;
	*out = r;
	return 0;
}

int
csv_reader_open_fd(int fd, const char *name, struct csv_reader **out)
{
	struct csv_reader *r;
	int err = reader_new(name, &r);

	if (err)
		return err;
	r->cap = CSV_BLOCK * 2;
	r->buf = malloc(r->cap);
	if (r->buf == NULL) {
		csv_reader_free(r);
		return RBA_E_NOMEM;
	}
	r->fd = fd;
	*out = r;
	return 0;
}

int
csv_reader_open_mem(const void *p, size_t n, const char *name,
		    struct csv_reader **out)
{
	struct csv_reader *r;
	int err = reader_new(name, &r);

	if (err)
		return err;
	r->buf = (uint8_t *)p; /* read-only use until a quoted field */
	r->cap = n;
	r->end = n;
	r->eof = 1;
	*out = r;
	return 0;
}

void
csv_reader_set_tap(struct csv_reader *r, csv_tap_fn fn, void *ctx)
{
	r->tap = fn;
	r->tap_ctx = ctx;
}

void
csv_reader_free(struct csv_reader *r)
{
	if (r == NULL)
		return;
	if (r->fd != -1) /* files and copied memory own their buffer */
		free(r->buf);
	if (r->own_fd)
		close(r->fd);
	free(r->name);
	free(r->fields);
	free(r);
}

unsigned long
csv_reader_line(const struct csv_reader *r)
{
	return r->rec_line;
}

uint64_t
csv_reader_bytes(const struct csv_reader *r)
{
	return r->consumed;
}

const char *
csv_reader_name(const struct csv_reader *r)
{
	return r->name;
}

static int fail(struct csv_reader *r, struct rba_detail *d, int err,
		unsigned long line, unsigned long col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Records a sticky error: later calls return the same one. */
static int
fail(struct csv_reader *r, struct rba_detail *d, int err, unsigned long line,
     unsigned long col, const char *fmt, ...)
{
	va_list ap;

	r->err = err;
	rba_detail_clear(&r->errd);
	rba_fail(&r->errd, err, r->name, line, col, NULL);
	va_start(ap, fmt);
	vsnprintf(r->errd.reason, sizeof(r->errd.reason), fmt, ap);
	va_end(ap);
	if (d != NULL)
		*d = r->errd;
	return err;
}

/* Reads one more block; returns 0, or errno.  Sets eof at end. */
static int
fill(struct csv_reader *r)
{
	ssize_t n;

	if (r->fd < 0) {
		r->eof = 1;
		return 0;
	}
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->clean_end = r->clean_end > r->start ? r->clean_end - r->start : 0;
		r->start = 0;
	}
	if (r->cap - r->end < CSV_BLOCK) {
		size_t cap = r->cap * 2;
		uint8_t *p = realloc(r->buf, cap);
		if (p == NULL)
			return RBA_E_NOMEM;
		r->buf = p;
		r->cap = cap;
	}
	do
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno;
	if (n == 0) {
		r->eof = 1;
		return 0;
	}
	if (r->tap != NULL) {
		int err = r->tap(r->tap_ctx, r->buf + r->end, (size_t)n);
		if (err)
			return err;
	}
#ifndef __SSE2__
	/* (with SSE2 fast_record looks at every byte it takes itself, and
	 * the general steps check theirs) */
	if (r->clean_end == r->end && ascii_clean(r->buf + r->end, (size_t)n))
		r->clean_end = r->end + (size_t)n;
#endif
	r->end += (size_t)n;
	return 0;
}

/* Line and column of offset off within a record starting at line `line`. */
static void
locate(const uint8_t *rec, size_t off, unsigned long line, unsigned long *l,
       unsigned long *c)
{
	unsigned long col = 1;

	for (size_t i = 0; i < off; i++) {
		if (rec[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	*l = line;
	*c = col;
}

/*
 * Finds the end of the record at buf[start].  Returns the offset of its
 * terminating newline (relative to start), or the data length at EOF
 * (quote-balanced), or (size_t)-1 when more data is needed.
 * *quoted says whether the record has any quote at all.
 */
static size_t
record_end(const uint8_t *p, size_t n, int eof, int *quoted, int *open_quote)
{
	const uint8_t *nl = memchr(p, '\n', n);
	size_t lim = nl ? (size_t)(nl - p) : n;
	*open_quote = 0;
	if (memchr(p, '"', lim) == NULL) {
		*quoted = 0;
		if (nl)
			return lim;
		return eof ? n : (size_t)-1;
	}
	*quoted = 1;
	/* A quote opens a quoted field only at a field's start; elsewhere it
	 * is stray, reported by the splitter, and must not hide a newline. */
	enum { START, UNQ, Q, AFTER } st = START;
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = p[i];
		switch (st) {
		case START:
		case UNQ:
		case AFTER:
			if (ch == '\n')
				return i;
			if (ch == ',')
				st = START;
			else if (ch == '"' && st == START)
				st = Q;
			else if (ch == '"' && st == AFTER)
				st = Q;
			else
				st = UNQ;
			break;
		case Q:
			if (ch == '"')
				st = AFTER;
			break;
		}
	}
	if (!eof)
		return (size_t)-1;
	*open_quote = st == Q;
	return n;
}

static int
push_field(struct csv_reader *r, size_t *nf, const char *p, size_t n,
	   unsigned long line, unsigned long col)
{
	if (*nf == r->fields_cap) {
		size_t cap = r->fields_cap * 2;
		struct csv_field *f = realloc(r->fields, cap * sizeof(*f));
		if (f == NULL)
			return RBA_E_NOMEM;
		r->fields = f;
		r->fields_cap = cap;
	}
	r->fields[*nf].p = p;
	r->fields[*nf].n = n;
	r->fields[*nf].col = col;
	r->fields[*nf].line = line;
	(*nf)++;
	return 0;
}

/*
 * Reads until the buffer holds one whole record (a BOM at the start of
 * the input skipped): *len gets the bytes buffered, *reclen the record's
 * length and *quoted whether it holds a quote.  At the end of the input
 * *len is 0 with r->eof set.  0, or the sticky error.
 */
static int
next_record(struct csv_reader *r, struct rba_detail *d, size_t *len,
	    size_t *reclen, int *quoted)
{
	int open_quote, err;

	for (;;) {
		if (r->first && (r->end - r->start >= 3 || r->eof)) {
			r->first = 0;
			if (r->end - r->start >= 3 &&
			    memcmp(r->buf + r->start, "\xef\xbb\xbf", 3) == 0) {
				r->start += 3;
				r->consumed += 3;
			}
		}
		*len = r->end - r->start;
		if (!r->first) {
			*reclen = record_end(r->buf + r->start, *len, r->eof,
					     quoted, &open_quote);
			if (*reclen != (size_t)-1)
				break;
		}
		if (*len > CSV_MAX_LINE)
			return fail(r, d, RBA_E_LIMIT, r->line, 1,
				    "record longer than %u bytes", CSV_MAX_LINE);
		if (r->fd < 0)
			r->eof = 1;
		err = fill(r);
		if (err)
			return fail(r, d, err, r->line, 0, "%s", rba_strerror(err));
	}
	(void)open_quote; /* the splitter reports it, at the quote */
	return 0;
}

/*
 * The record of reclen bytes at r->start made ready to split: copied
 * when it is borrowed memory with a quote to unescape in place, then
 * checked for UTF-8 and NUL bytes.  0, or the sticky error.
 */
static int
record_check(struct csv_reader *r, struct rba_detail *d, size_t reclen,
	     int quoted)
{
	const uint8_t *rec;
	size_t bad;
	unsigned long l, c;

	if (r->fd == -1 && quoted) {
		/* Memory input is borrowed: copy before unescaping in place. */
		uint8_t *copy = malloc(r->end);
		if (copy == NULL)
			return fail(r, d, RBA_E_NOMEM, r->line, 0, "%s",
				    "out of memory");
		memcpy(copy, r->buf, r->end);
		r->buf = copy;
		r->fd = -2; /* owned buffer, no descriptor */
	}
	rec = r->buf + r->start;
	if (r->fd >= 0 && r->start + reclen <= r->clean_end)
		return 0; /* read as ASCII without a NUL (fill) */
	if (!rba_utf8_valid(rec, reclen, &bad)) {
		locate(rec, bad, r->line, &l, &c);
		return fail(r, d, RBA_E_ENCODING, l, c, "%s", "invalid UTF-8");
	}
	/* A NUL would cut the field short wherever it is kept as a C
	 * string (the table's cells and header names, a sample's texts):
	 * two names that differ only after it would become one. */
	{
		const uint8_t *z = memchr(rec, 0, reclen);
		if (z != NULL) {
			locate(rec, (size_t)(z - rec), r->line, &l, &c);
			return fail(r, d, RBA_E_ENCODING, l, c, "%s", "NUL byte");
		}
	}
	return 0;
}

/*
 * The commas among the 8 bytes at p as a mask, bit k for byte k: each
 * byte XOR ',' is zero exactly at a comma (the exact zero-byte test, no
 * borrow from a neighbour), and the high bits are gathered by one
 * multiplication (the products land on distinct bits, so nothing
 * carries into the top byte).
 */
static inline unsigned
comma_mask8(const uint8_t *p)
{
	const uint64_t h7 = 0x7f7f7f7f7f7f7f7full;
	uint64_t w, t;

	memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	w ^= 0x2c2c2c2c2c2c2c2cull;
	t = ~(((w & h7) + h7) | w | h7); /* 0x80 where w's byte is 0 */
	return (unsigned)(((t >> 7) * 0x0102040810204080ull) >> 56);
}

/* One field [s, e) of a plain record into r->fields.  0, or the sticky
 * error. */
static inline int
plain_field(struct csv_reader *r, struct rba_detail *d, const uint8_t *rec,
	    size_t s, size_t e, size_t *nf)
{
	if (*nf < r->fields_cap) {
		struct csv_field *f = &r->fields[(*nf)++];
		f->p = (const char *)rec + s;
		f->n = e - s;
		f->col = (unsigned long)s + 1;
		f->line = r->rec_line;
	} else if (push_field(r, nf, (const char *)rec + s, e - s,
			      r->rec_line, (unsigned long)s + 1) != 0) {
		return fail(r, d, RBA_E_NOMEM, r->rec_line, 0, "%s",
			    "out of memory");
	}
	if (*nf > CSV_MAX_FIELDS)
		return fail(r, d, RBA_E_LIMIT, r->rec_line, (unsigned long)s + 1,
			    "more than %u fields in a record", CSV_MAX_FIELDS);
	return 0;
}

/*
 * The commas among the 16 bytes at p as a mask, bit k for byte k: one
 * comparison of a vector where there are vectors (SSE2 is part of
 * x86-64), else two words of comma_mask8.
 */
static inline unsigned
comma_mask16(const uint8_t *p)
{
#ifdef __SSE2__
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);

	v = _mm_cmpeq_epi8(v, _mm_set1_epi8(','));
	return (unsigned)_mm_movemask_epi8(v);
#else
	return comma_mask8(p) | comma_mask8(p + 8) << 8;
#endif
}

/*
 * split_plain's loop for a record of fewer than CSV_MAX_FIELDS bytes
 * (so of at most as many fields) with room for them in r->fields: no
 * check per field.  The fields of rec[0, stop) into r->fields; their
 * count.
 */
static size_t
split_plain_short(struct csv_reader *r, const uint8_t *rec, size_t stop)
{
	struct csv_field *f = r->fields;
	unsigned long line = r->rec_line;
	size_t s = 0, i = 0, nf = 0;

#define PUT_FIELD(e)                                                           \
	do {                                                                   \
		f[nf].p = (const char *)rec + s;                               \
		f[nf].n = (e) - s;                                             \
		f[nf].col = (unsigned long)s + 1;                              \
		f[nf].line = line;                                             \
		nf++;                                                          \
		s = (e) + 1;                                                   \
	} while (0)
	for (; i + 16 <= stop; i += 16)
		for (unsigned m = comma_mask16(rec + i); m != 0; m &= m - 1)
			PUT_FIELD(i + (size_t)__builtin_ctz(m));
	for (; i < stop; i++)
		if (rec[i] == ',')
			PUT_FIELD(i);
	PUT_FIELD(stop);
#undef PUT_FIELD
	return nf;
}

/*
 * Splits a record without a quote into r->fields (*nf of them).  A
 * trailing CR before the newline is dropped.  A field is the bytes up to
 * the next comma and its column is its offset + 1: the commas of sixteen
 * or eight bytes at a time come as a mask, each field ended at the next
 * of its bits.  0, or the sticky error.
 */
static int
split_plain(struct csv_reader *r, struct rba_detail *d, uint8_t *rec,
	    size_t reclen, size_t *nfp)
{
	size_t stop = reclen, s = 0, i = 0, nf = 0;
	int err;

	if (stop > 0 && rec[stop - 1] == '\r')
		stop--;
	if (r->records == 0) {
		const uint8_t *cr = memchr(rec, '\r', stop);
		if (cr != NULL)
			return fail(r, d, RBA_E_SYNTAX, r->rec_line,
				    (unsigned long)(cr - rec) + 1, "%s", CSV_BARE_CR);
	}
	if (stop < CSV_MAX_FIELDS) {
		/* room for a field per byte and one: at most the cap's */
		if (stop >= r->fields_cap) {
			size_t cap = stop + 1 > 2 * r->fields_cap
					     ? stop + 1 : 2 * r->fields_cap;
			struct csv_field *nf2 = realloc(r->fields,
							cap * sizeof(*nf2));
			if (nf2 == NULL)
				return fail(r, d, RBA_E_NOMEM, r->rec_line, 0,
					    "%s", "out of memory");
			r->fields = nf2;
			r->fields_cap = cap;
		}
		*nfp = split_plain_short(r, rec, stop);
		return 0;
	}
	for (; i + 8 <= stop; i += 8) {
		for (unsigned m = comma_mask8(rec + i); m != 0; m &= m - 1) {
			size_t e = i + (size_t)__builtin_ctz(m);
			if ((err = plain_field(r, d, rec, s, e, &nf)) != 0)
				return err;
			s = e + 1;
		}
	}
	for (; i < stop; i++) {
		if (rec[i] == ',') {
			if ((err = plain_field(r, d, rec, s, i, &nf)) != 0)
				return err;
			s = i + 1;
		}
	}
	if ((err = plain_field(r, d, rec, s, stop, &nf)) != 0)
		return err;
	*nfp = nf;
	return 0;
}

/*
 * Splits a record holding a quote into r->fields (*nf of them), quoted
 * fields unescaped in place, each field at its own line and column.
 * 0, or the sticky error.
 */
static int
split_quoted(struct csv_reader *r, struct rba_detail *d, uint8_t *rec,
	     size_t reclen, size_t *nfp)
{
	size_t i = 0, stop = reclen, nf = 0;
	unsigned long line = r->rec_line, col = 1, l, c;
	int err;

	if (stop > 0 && rec[stop - 1] == '\r')
		stop--;
	for (;;) {
		unsigned long fcol = col, fline = line;
		if (i < stop && rec[i] == '"') {
			/* Unescape in place, from the opening quote on. */
			size_t q = i, w = i;
			i++;
			col++;
			for (;;) {
				if (i >= stop) {
					locate(rec, q, r->rec_line, &l, &c);
					return fail(r, d, RBA_E_SYNTAX, l, c, "%s",
						    "unterminated quoted field");
				}
				if (rec[i] == '"') {
					i++;
					col++;
					if (i < stop && rec[i] == '"') {
						rec[w++] = '"';
						i++;
						col++;
						continue;
					}
					break;
				}
				if (rec[i] == '\n') {
					line++;
					col = 1;
				} else {
					col++;
				}
				rec[w++] = rec[i++];
			}
			if (i < stop && rec[i] != ',')
				return fail(r, d, RBA_E_SYNTAX, line, col, "%s",
					    "unexpected character after closing quote");
			err = push_field(r, &nf, (const char *)rec + q, w - q,
					 fline, fcol);
		} else {
			size_t s = i, e = i;
			const uint8_t *qp;
			/* Fields are short: a plain loop beats memchr. */
			while (e < stop && rec[e] != ',')
				e++;
			qp = memchr(rec + s, '"', e - s);
			if (qp != NULL)
				return fail(r, d, RBA_E_SYNTAX, line,
					    col + (unsigned long)(qp - (rec + s)),
					    "%s", "stray double quote in unquoted field");
			if (r->records == 0) {
				const uint8_t *cr = memchr(rec + s, '\r', e - s);
				if (cr != NULL)
					return fail(r, d, RBA_E_SYNTAX, line,
						    col + (unsigned long)(cr - (rec + s)),
						    "%s", CSV_BARE_CR);
			}
			err = push_field(r, &nf, (const char *)rec + s, e - s,
					 fline, fcol);
			col += (unsigned long)(e - s);
			i = e;
		}
		if (err)
			return fail(r, d, err, r->rec_line, 0, "%s", "out of memory");
		if (nf > CSV_MAX_FIELDS)
			return fail(r, d, RBA_E_LIMIT, line, fcol,
				    "more than %u fields in a record", CSV_MAX_FIELDS);
		if (i >= stop)
			break;
		i++; /* the comma */
		col++;
	}
	*nfp = nf;
	return 0;
}

#ifdef __SSE2__
/*
 * The common record in one pass over its bytes, 16 at a time: commas,
 * the newline and any quote, NUL or byte over 127 found by comparisons
 * of one vector, the fields stored as split_plain_short stores them.
 * Taken only for a data record (the header has its own CR rule) that
 * ends with a newline within the bytes held, holds no quote, is ASCII
 * without a NUL (what record_check would find otherwise) and has fewer
 * fields than r->fields holds; 0 for anything else, nothing changed,
 * and csv_reader_next's steps take it.  Its count of fields otherwise,
 * the reader moved past it.
 */
static size_t
fast_record(struct csv_reader *r)
{
	const uint8_t *rec = r->buf + r->start;
	size_t avail = r->end - r->start, i = 0, s = 0, nf = 0, stop;
	size_t cap = r->fields_cap < CSV_MAX_FIELDS ? r->fields_cap
						    : CSV_MAX_FIELDS;
	struct csv_field *f = r->fields;
	unsigned long line = r->line;
	const __m128i comma = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n'),
		      quote = _mm_set1_epi8('"');

	if (r->first || r->records == 0)
		return 0;
	for (;; i += 16) {
		__m128i v;
		unsigned mc, mn, mq;
		if (i + 16 > avail || i >= CSV_MAX_LINE)
			return 0;
		v = _mm_loadu_si128((const __m128i *)(const void *)(rec + i));
		mc = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma));
		mn = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl));
		/* a quote, a NUL or a byte over 127: the general steps */
		mq = (unsigned)_mm_movemask_epi8(_mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(v, quote),
				     _mm_cmpeq_epi8(v, _mm_setzero_si128())),
			v));
		if (mn != 0) { /* only what comes before the newline */
			unsigned before = (mn & -mn) - 1;
			mc &= before;
			mq &= before;
		}
		/* (room for 16 more fields and the last: no count of mc's
		 * bits, which is a call on x86-64 without POPCNT) */
		if (mq != 0 || nf + 17 > cap)
			return 0;
		for (; mc != 0; mc &= mc - 1) {
			size_t e = i + (size_t)__builtin_ctz(mc);
			f[nf].p = (const char *)rec + s;
			f[nf].n = e - s;
			f[nf].col = (unsigned long)s + 1;
			f[nf].line = line;
			nf++;
			s = e + 1;
		}
		if (mn != 0) {
			stop = i + (size_t)__builtin_ctz(mn);
			break;
		}
	}
	/* over the length cap (the general steps say so) */
	if (stop > CSV_MAX_LINE)
		return 0;
	f[nf].p = (const char *)rec + s;
	f[nf].n = stop - s - (stop > s && rec[stop - 1] == '\r');
	f[nf].col = (unsigned long)s + 1;
	f[nf].line = line;
	nf++;
	r->rec_line = line;
	r->line++;
	r->start += stop + 1;
	r->consumed += stop + 1;
	r->records++;
	return nf;
}
#endif

int
csv_reader_next(struct csv_reader *r, const struct csv_field **fields,
		size_t *nout, struct rba_detail *d)
{
	size_t len, reclen, nf = 0;
	int quoted = 0, err;
	uint8_t *rec;

	*fields = NULL;
	*nout = 0;
	if (r->err) {
		if (d != NULL)
			*d = r->errd;
		return r->err;
	}
#ifdef __SSE2__
	if ((nf = fast_record(r)) != 0) {
		r->rec_quoted = 0;
		*fields = r->fields;
		*nout = nf;
		return 1;
	}
#endif
	if ((err = next_record(r, d, &len, &reclen, &quoted)) != 0)
		return err;
	if (len == 0 && r->eof)
		return 0;
	if (reclen > CSV_MAX_LINE)
		return fail(r, d, RBA_E_LIMIT, r->line, 1,
			    "record longer than %u bytes", CSV_MAX_LINE);
	if ((err = record_check(r, d, reclen, quoted)) != 0)
		return err;
	rec = r->buf + r->start;
	r->rec_line = r->line;
	/* (a record without a quote ends at its first newline) */
	for (size_t i = 0; quoted && i < reclen; i++)
		if (rec[i] == '\n')
			r->line++;
	r->line++;
	err = quoted ? split_quoted(r, d, rec, reclen, &nf)
		     : split_plain(r, d, rec, reclen, &nf);
	if (err != 0)
		return err;
	r->start += reclen < len ? reclen + 1 : reclen;
	r->consumed += reclen < len ? reclen + 1 : reclen;
	r->records++;
	r->rec_quoted = quoted;
	*fields = r->fields;
	*nout = nf;
	return 1;
}

int
csv_is_nonfinite_word(const char *p, size_t n)
{
	if (n > 0 && (p[0] == '+' || p[0] == '-')) {
		p++;
		n--;
	}
	if (n == 3)
		return ((p[0] | 0x20) == 'n' && (p[1] | 0x20) == 'a' &&
			(p[2] | 0x20) == 'n') ||
		       ((p[0] | 0x20) == 'i' && (p[1] | 0x20) == 'n' &&
			(p[2] | 0x20) == 'f');
	if (n == 8) {
		static const char word[] = "infinity";
		for (size_t i = 0; i < 8; i++)
			if ((p[i] | 0x20) != word[i])
				return 0;
		return 1;
	}
	return 0;
}

/*
 * Below this magnitude a double rounds to a finite float32; from it on
 * (FLT_MAX plus half its ulp, where round-to-nearest-even goes to 2^128)
 * to infinity.  Models read their inputs as float32, so a number there is
 * refused as NaN and Inf are.
 */
#define CSV_F32_OVERFLOW 0x1.ffffffp127

/*
 * Checks number syntax without converting.  Returns 0 with *surely_finite
 * set when the value is certainly finite as a float32 (no exponent, at
 * most 38 integer digits: below 1e38), RBA_E_SYNTAX or RBA_E_RANGE.
 */
static int
number_syntax(const char *p, size_t n, int *surely_finite)
{
	size_t i = 0, digits = 0, intdigits;

	if (n == 0)
		return RBA_E_SYNTAX;
	if (p[i] == '+' || p[i] == '-')
		i++;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++, digits++;
	intdigits = digits;
	if (i < n && p[i] == '.') {
		i++;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++, digits++;
	}
	if (digits == 0)
		return csv_is_nonfinite_word(p, n) ? RBA_E_RANGE : RBA_E_SYNTAX;
	*surely_finite = intdigits <= 38;
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		size_t ed = 0;
		*surely_finite = 0;
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++, ed++;
		if (ed == 0)
			return RBA_E_SYNTAX;
	}
	return i == n ? 0 : RBA_E_SYNTAX;
}

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
/* The powers of ten that are exact doubles (10^22 is the last), shared by
 * fast_decimal and fast_field. */
static const double pow10_exact[23] = {
	1e0,  1e1,  1e2,  1e3,	1e4,  1e5,  1e6,  1e7,	1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};
#endif

/*
 * The fast path of csv_parse_number for text already checked against its
 * syntax.  A decimal significand m of at most 19 digits with m <= 2^53,
 * scaled by 10^e with |e| <= 22, is one IEEE multiplication or division
 * of two exact doubles (every such m is a double, and so is every power
 * of ten up to 1e22), so the result is the correctly rounded value,
 * which is what strtod returns: the same bits.  This needs double
 * arithmetic done in double (FLT_EVAL_METHOD 0, as on every SSE2 and
 * AArch64 build); elsewhere, and for any other number, 0 sends the
 * caller to strtod.  1 with *out set.
 */
static int
fast_decimal(const char *p, size_t n, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	uint64_t m = 0;
	long e10 = 0, ex = 0;
	unsigned digits = 0;
	size_t i = 0;
	int neg = 0, eneg = 0;
	double v;

	if (p[i] == '+' || p[i] == '-')
		neg = p[i++] == '-';
	for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
		if (m == 0 && p[i] == '0')
			continue; /* a leading zero */
		if (++digits > 19)
			return 0;
		m = m * 10 + (uint64_t)(p[i] - '0');
	}
	if (i < n && p[i] == '.')
		for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
			e10--;
			if (m == 0 && p[i] == '0')
				continue;
			if (++digits > 19)
				return 0;
			m = m * 10 + (uint64_t)(p[i] - '0');
		}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			eneg = p[i++] == '-';
		for (; i < n; i++) {
			ex = ex * 10 + (p[i] - '0');
			if (ex > 100000)
				return 0;
		}
	}
	if (m == 0) {
		*out = neg ? -0.0 : 0.0;
		return 1;
	}
	e10 += eneg ? -ex : ex;
	if (m > ((uint64_t)1 << 53) || e10 < -22 || e10 > 22)
		return 0;
	v = (double)m;
	v = e10 >= 0 ? v * pow10_exact[e10] : v / pow10_exact[-e10];
	*out = neg ? -v : v;
	return 1;
#else
	(void)p;
	(void)n;
	(void)out;
	return 0;
#endif
}

int
csv_parse_number(const char *p, size_t n, double *out)
{
	char tmp[128], *end;
	size_t i = 0, digits = 0;

	if (csv_is_nonfinite_word(p, n))
		return RBA_E_RANGE;
	if (n == 0 || n >= sizeof(tmp))
		return RBA_E_SYNTAX;
	if (p[i] == '+' || p[i] == '-')
		i++;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++, digits++;
	if (i < n && p[i] == '.') {
		i++;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++, digits++;
	}
	if (digits == 0)
		return RBA_E_SYNTAX;
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		size_t ed = 0;
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++, ed++;
		if (ed == 0)
			return RBA_E_SYNTAX;
	}
	if (i != n)
		return RBA_E_SYNTAX;
	if (!fast_decimal(p, n, out)) {
		/* The syntax above has no locale-dependent part, and this
		 * process never calls setlocale(LC_NUMERIC), so strtod reads
		 * '.' as the decimal point. */
		memcpy(tmp, p, n);
		tmp[n] = 0;
		errno = 0;
		*out = strtod(tmp, &end);
	}
	/* Infinity from an overflowing double too. */
	if (*out >= CSV_F32_OVERFLOW || *out <= -CSV_F32_OVERFLOW)
		return RBA_E_RANGE;
	return 0;
}

int
csv_is_missing(const struct csv_missing *m, const char *p, size_t n)
{
	if (m == NULL)
		return 0;
	for (size_t i = 0; i < m->n; i++)
		if (strlen(m->tok[i]) == n && memcmp(m->tok[i], p, n) == 0)
			return 1;
	return 0;
}

/* What has been seen of one column, for type inference. */
struct colstate {
	uint64_t numbers, texts, missing;
	unsigned long empty_line, empty_col; /* first empty field */
};

/* The line field f starts on (a record's line for fields the reader did
 * not place). */
static unsigned long
at(const struct csv_field *f, unsigned long line)
{
	return f->line ? f->line : line;
}

static inline __attribute__((always_inline)) int
fast_field(const char *p, size_t n, double *out);
static inline __attribute__((always_inline)) int
fast_field_at(const char *p, size_t n, const char *limit, double *out);
static inline uint64_t load_le64(const char *p);
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
static inline __attribute__((always_inline)) int
swar_field(const char *p, size_t n, double *out);
static inline uint64_t digit_bytes8(uint64_t w);
static inline uint64_t swar_digits(uint64_t w, unsigned k);
#endif

/* Whether a field starting with byte b may be a number or a nan/inf word. */
static int
col_may_be_number(uint8_t b)
{
	return (unsigned)(b - '0') <= 9 || b == '+' || b == '-' || b == '.' ||
	       (b | 0x20) == 'n' || (b | 0x20) == 'i';
}

/*
 * Counts field f in its column's state.  When num is not NULL and the
 * field is a number whose value was parsed on the way (a plain decimal),
 * *num gets csv_parse_number's value and *has 1; else *has is 0.
 */
static int
col_see(struct colstate *cs, const struct csv_field *f, unsigned long line,
	const char *file, const char *colname, const struct csv_missing *m,
	double *num, uint8_t *has, struct rba_detail *d)
{
	double v = HUGE_VAL; /* stays so for a nan or inf word */
	int err, finite = 0;

	line = at(f, line);

	if (m != NULL && m->n > 0 && csv_is_missing(m, f->p, f->n)) {
		cs->missing++;
		return 0;
	}
	if (f->n == 0) {
		if (cs->empty_line == 0) {
			cs->empty_line = line;
			cs->empty_col = f->col;
		}
		return 0;
	}
	/* Text at its first byte: number_syntax finds no digit before it,
	 * and only a sign, a point, a digit, or the n or i of nan and inf
	 * may start what is not plain text. */
	if (!col_may_be_number((uint8_t)f->p[0])) {
		cs->texts++;
		return 0;
	}
	if (fast_field(f->p, f->n, &v)) { /* a plain decimal, finite */
		cs->numbers++;
		if (num != NULL) {
			*num = v;
			*has = 1;
		}
		return 0;
	}
	err = number_syntax(f->p, f->n, &finite);
	if (err == 0 && !finite)
		err = csv_parse_number(f->p, f->n, &v);
	if (err == 0) {
		cs->numbers++;
		return 0;
	}
	if (err == RBA_E_RANGE) {
		char shown[40];
		size_t k = f->n < 32 ? f->n : 32;
		memcpy(shown, f->p, k);
		shown[k] = 0;
		if (isfinite(v))
			rba_fail(d, RBA_E_RANGE, file, line, f->col,
				 "number '%s' in column '%s' overflows float32",
				 shown, colname);
		else
			rba_fail(d, RBA_E_RANGE, file, line, f->col,
				 "non-finite number '%s' in column '%s'", shown,
				 colname);
		return RBA_E_RANGE;
	}
	cs->texts++;
	return 0;
}

static int
col_finish(const struct colstate *cs, const char *file, const char *colname,
	   enum csv_coltype *type, struct rba_detail *d)
{
	if (cs->numbers > 0 && cs->texts == 0) {
		if (cs->empty_line != 0)
			return rba_fail(d, RBA_E_SCHEMA, file, cs->empty_line,
					cs->empty_col,
					"empty field in numeric column '%s'", colname);
		*type = CSV_NUMERIC;
	} else {
		*type = CSV_TEXT;
	}
	return 0;
}

/* Checks the header: names non-empty, at most CSV_MAX_NAME, unique. */
static int
header_check(const struct csv_field *f, size_t n, const char *file,
	     unsigned long line, struct rba_detail *d)
{
	for (size_t i = 0; i < n; i++) {
		if (f[i].n == 0)
			return rba_fail(d, RBA_E_SCHEMA, file, at(&f[i], line), f[i].col,
					"empty column name (column %zu)", i + 1);
		if (f[i].n > CSV_MAX_NAME)
			return rba_fail(d, RBA_E_LIMIT, file, at(&f[i], line), f[i].col,
					"column name longer than %u bytes",
					CSV_MAX_NAME);
		for (size_t j = 0; j < i; j++)
			if (f[j].n == f[i].n && memcmp(f[j].p, f[i].p, f[i].n) == 0)
				return rba_fail(d, RBA_E_SCHEMA, file, at(&f[i], line),
						f[i].col,
						"duplicate column name '%.*s'",
						(int)f[i].n, f[i].p);
	}
	return 0;
}

static int
ragged(const char *file, unsigned long line, const struct csv_field *f,
       size_t n, size_t want, struct rba_detail *d)
{
	unsigned long col = n > want ? f[want].col : f[n - 1].col + (unsigned long)f[n - 1].n;
	line = at(n > want ? &f[want] : &f[n - 1], line);
	return rba_fail(d, RBA_E_SCHEMA, file, line, col,
			"ragged row: %zu field%s, header has %zu", n,
			n == 1 ? "" : "s", want);
}

static char **
names_dup(const struct csv_field *f, size_t n)
{
	char **names = calloc(n ? n : 1, sizeof(*names));

	if (names == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		names[i] = malloc(f[i].n + 1);
		if (names[i] == NULL) {
			for (size_t j = 0; j < i; j++)
				free(names[j]);
			free(names);
			return NULL;
		}
		memcpy(names[i], f[i].p, f[i].n);
		names[i][f[i].n] = 0;
	}
	return names;
}

/* A copy of n NUL-terminated names, or NULL. */
static char **
names_dup_cstr(char *const *src, size_t n)
{
	char **names = calloc(n ? n : 1, sizeof(*names));

	if (names == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if ((names[i] = strdup(src[i])) == NULL) {
			for (size_t j = 0; j < i; j++)
				free(names[j]);
			free(names);
			return NULL;
		}
	}
	return names;
}

/* ---- the rules of csv_table, a record at a time ---- */

struct csv_checker {
	struct csv_reader *r; /* borrowed */
	const char *file;     /* the reader's name */
	size_t ncols;
	char **names;
	struct colstate *cs;
	double *val;  /* ncols: the last row's numbers parsed on the way */
	uint8_t *has; /* ncols: 1 where val holds one */
	enum csv_coltype *types;
	uint64_t nrows;
	int done;
	const struct csv_missing *missing; /* borrowed; NULL: none */
	/* no missing token is a number the quick steps read: a field they
	 * read is a number, never a token */
	int quick_ok;
};

static int token_is_quick(const char *tok);

void
csv_checker_set_missing(struct csv_checker *c, const struct csv_missing *m)
{
	c->missing = m;
	c->quick_ok = 1;
	for (size_t i = 0; m != NULL && i < m->n; i++)
		if (token_is_quick(m->tok[i]))
			c->quick_ok = 0;
}

void
csv_checker_free(struct csv_checker *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; c->names && i < c->ncols; i++)
		free(c->names[i]);
	free(c->names);
	free(c->cs);
	free(c->val);
	free(c->has);
	free(c->types);
	free(c);
}

int
csv_checker_start(struct csv_reader *r, struct csv_checker **out,
		  struct rba_detail *d)
{
	const struct csv_field *f;
	struct csv_checker *c;
	size_t n;
	int rc, err;
	const char *file = csv_reader_name(r);

	*out = NULL;
	rc = csv_reader_next(r, &f, &n, d);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return rba_fail(d, RBA_E_SCHEMA, file, 1, 1, "%s",
				"empty file (no header row)");
	err = header_check(f, n, file, csv_reader_line(r), d);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return rba_fail(d, RBA_E_NOMEM, file, 0, 0, "%s", "out of memory");
	c->r = r;
	c->file = file;
	c->quick_ok = 1;
	c->ncols = n;
	c->names = names_dup(f, n);
	c->cs = calloc(n ? n : 1, sizeof(*c->cs));
	c->types = calloc(n ? n : 1, sizeof(*c->types));
	c->val = calloc(n ? n : 1, sizeof(*c->val));
	c->has = calloc(n ? n : 1, sizeof(*c->has));
	if (c->names == NULL || c->cs == NULL || c->types == NULL ||
	    c->val == NULL || c->has == NULL) {
		c->ncols = c->names ? n : 0;
		csv_checker_free(c);
		return rba_fail(d, RBA_E_NOMEM, file, 0, 0, "%s", "out of memory");
	}
	*out = c;
	return 0;
}

/*
 * The commonest numbers of a table, read in the fewest steps: one or
 * two digits, or a minus and a digit (codes, counts, flags, ages), then
 * swar_field when room says the 8 bytes after a sign are held.  1 with
 * *v (what fast_field gives, bit for bit); 0 for anything else.
 */
static inline __attribute__((always_inline)) int
quick_number(const char *p, size_t len, int room, double *v)
{
	if (len - 1 < 2) {
		unsigned d0 = (unsigned)(p[0] - '0');
		unsigned d1 = (unsigned)(p[len - 1] - '0');
		if (len == 1 && d0 <= 9) {
			*v = (double)d0;
			return 1;
		}
		if (len == 2 && d1 <= 9 && (d0 <= 9 || p[0] == '-')) {
			*v = d0 <= 9 ? (double)(d0 * 10 + d1) : -(double)d1;
			return 1;
		}
	}
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	if (room && len - 3 < 6) {
		/* 3 to 8 digits, no sign, no point: swar_field's steps
		 * without them (an integer below 10^8, exact) */
		uint64_t w = load_le64(p), keep = ~0ull >> (64 - 8 * len);
		if ((~digit_bytes8(w) & keep & 0x8080808080808080ull) == 0) {
			*v = (double)swar_digits(w, (unsigned)len);
			return 1;
		}
	}
	if (room && len - 1 < 9 && swar_field(p, len, v))
		return 1;
#else
	(void)room;
#endif
	return 0;
}

/* Whether the quick steps of check_row read token tok as a number. */
static int
token_is_quick(const char *tok)
{
	char b[48] = { 0 }; /* room for the 8-byte loads past its end */
	size_t n = strlen(tok);
	double v;

	if (n == 0 || !col_may_be_number((uint8_t)tok[0]))
		return 0;
	if (n > 32)
		return 1; /* (not looked at: taken as one) */
	memcpy(b, tok, n);
	return quick_number(b, n, 1, &v) || fast_field(b, n, &v);
}

/*
 * One data record's n fields seen by their columns: a plain number is
 * parsed and counted here (the value kept in val, has 1), text known by
 * its first byte counted (without missing tokens: with them a text may
 * be one); the rest goes to col_see.  0, or col_see's error.
 */
static int
check_row(struct csv_checker *c, const struct csv_field *f, size_t n,
	  unsigned long line, struct rba_detail *d)
{
	/* the end of the bytes held: swar_field may read up to it */
	const char *limit = (const char *)c->r->buf + c->r->end;
	struct colstate *cs = c->cs;
	double *val = c->val;
	uint8_t *has = c->has;
	int plain = c->missing == NULL || c->missing->n == 0, err;
	int quick = plain || c->quick_ok;
	/* fields lie in order in the record: when 16 bytes after the last
	 * are held, any field's 9 bytes are (no test per field) */
	int room = n > 0 && limit - (f[n - 1].p + f[n - 1].n) >= 16;

	for (size_t i = 0; i < n; i++) {
		const char *p = f[i].p;
		size_t len = f[i].n;
		/* col_see's first answers, without the call: text known
		 * by its first byte (a level, a name) before any number is
		 * tried, then the quick forms, then the byte loop (swar
		 * first where room did not vouch for the bytes) */
		if (quick && len > 0) {
			if (!col_may_be_number((uint8_t)p[0])) {
				if (plain) {
					cs[i].texts++;
					has[i] = 0;
					continue;
				}
			} else if (quick_number(p, len, room, &val[i]) ||
				   (room ? fast_field(p, len, &val[i])
					 : fast_field_at(p, len, limit, &val[i]))) {
				cs[i].numbers++;
				has[i] = 1;
				continue;
			}
		}
		has[i] = 0;
		err = col_see(&cs[i], &f[i], line, c->file, c->names[i],
			      c->missing, &val[i], &has[i], d);
		if (err)
			return err;
	}
	return 0;
}

int
csv_checker_next(struct csv_checker *c, const struct csv_field **fields,
		 size_t *n, struct rba_detail *d)
{
	int rc, err;

	assert(!c->done);
	rc = csv_reader_next(c->r, fields, n, d);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		unsigned long line = csv_reader_line(c->r);
		if (*n != c->ncols)
			return ragged(c->file, line, *fields, *n, c->ncols, d);
		if ((err = check_row(c, *fields, *n, line, d)) != 0)
			return err;
		c->nrows++;
		return 1;
	}
	if (c->nrows == 0)
		return rba_fail(d, RBA_E_SCHEMA, c->file, 2, 1, "%s",
				"no data rows after the header");
	for (size_t i = 0; i < c->ncols; i++) {
		err = col_finish(&c->cs[i], c->file, c->names[i], &c->types[i], d);
		if (err)
			return err;
	}
	c->done = 1;
	return 0;
}

const double *
csv_checker_numbers(const struct csv_checker *c, const uint8_t **has)
{
	*has = c->has;
	return c->val;
}

size_t
csv_checker_ncols(const struct csv_checker *c)
{
	return c->ncols;
}

const char *
csv_checker_name(const struct csv_checker *c, size_t i)
{
	assert(i < c->ncols);
	return c->names[i];
}

uint64_t
csv_checker_rows(const struct csv_checker *c)
{
	return c->nrows;
}

const enum csv_coltype *
csv_checker_types(const struct csv_checker *c)
{
	assert(c->done);
	return c->types;
}

void
csv_summary_release(struct csv_summary *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; s->names && i < s->ncols; i++)
		free(s->names[i]);
	free(s->names);
	free(s->types);
	memset(s, 0, sizeof(*s));
}

int
csv_validate(struct csv_reader *r, struct csv_summary *out,
	     struct rba_detail *d)
{
	return csv_validate_missing(r, NULL, out, d);
}

int
csv_validate_missing(struct csv_reader *r, const struct csv_missing *m,
		     struct csv_summary *out, struct rba_detail *d)
{
	const struct csv_field *f;
	struct csv_checker *c;
	size_t n;
	int rc, err;

	memset(out, 0, sizeof(*out));
	if ((err = csv_checker_start(r, &c, d)) != 0)
		return err;
	csv_checker_set_missing(c, m);
	while ((rc = csv_checker_next(c, &f, &n, d)) == 1)
		;
	if (rc < 0) {
		csv_checker_free(c);
		return rc;
	}
	out->ncols = c->ncols;
	out->nrows = c->nrows;
	out->names = c->names;
	out->types = c->types;
	c->names = NULL;
	c->types = NULL;
	csv_checker_free(c);
	return 0;
}

/* ---- whole tables ---- */

/* The 8 bytes at p as a little-endian word (byte 0 the lowest). */
static inline uint64_t
load_le64(const char *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}


#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define SWAR_ZEROS 0x3030303030303030ull /* eight '0' */

/*
 * 0x80 in each byte of w that is an ASCII digit, 0 in every other.  The
 * high bit is set aside first, so that no sum carries into a neighbour.
 */
static inline uint64_t
digit_bytes8(uint64_t w)
{
	const uint64_t h = 0x8080808080808080ull;
	uint64_t w7 = w & ~h;

	/* >= '0' sets the high bit of w7 + 0x50, > '9' that of w7 + 0x46 */
	return (w7 + 0x5050505050505050ull) & ~(w7 + 0x4646464646464646ull) &
	       ~w & h;
}

/*
 * The value of the k (1..8) digits in w's low k bytes, byte 0 the most
 * significant (all checked to be digits): the digits' values moved to
 * the top (zeros before them are leading zeros) and summed in three
 * multiplications (simdjson's parse_eight_digits).  The bytes above k
 * may be anything: no borrow reaches down into the digits.
 */
static inline uint64_t
swar_digits(uint64_t w, unsigned k)
{
	w = (w - SWAR_ZEROS) << (64 - 8 * k);
	w = w * 10 + (w >> 8);
	w = ((w & 0x000000ff000000ffull) * (100 + (1000000ull << 32)) +
	     ((w >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32))) >>
	    32;
	return (uint32_t)w;
}

/*
 * fast_field's short case as word operations: an optional sign, then 1
 * to 8 bytes of digits with at most one point (at least one digit),
 * read as one word: the caller vouches that the 8 bytes after the sign
 * are readable (bytes past the field are masked off, never looked at).
 * The value is fast_field's, computed the same way (at most 8 digits,
 * so m < 10^8 is exact and one division by an exact power of ten rounds
 * correctly): 1 with *out set; 0 for anything else, which takes the
 * byte loop.
 */
static inline __attribute__((always_inline)) int
swar_field(const char *p, size_t n, double *out)
{
	int neg = p[0] == '-';
	size_t i = neg || p[0] == '+';
	unsigned k = (unsigned)(n - i), frac = 0;
	uint64_t w, keep, bad, m, bits;
	double v;

	if (k - 1 > 7) /* k == 0 wraps */
		return 0;
	keep = ~0ull >> (64 - 8 * k); /* k's low bytes */
	w = load_le64(p + i);
	bad = ~digit_bytes8(w) & keep & 0x8080808080808080ull;
	if (bad != 0) {
		/* one point, with a digit: taken out, the digits after it
		 * moved down a byte */
		unsigned at = (unsigned)__builtin_ctzll(bad) / 8;
		if ((bad & (bad - 1)) != 0 || k == 1 ||
		    (uint8_t)(w >> (8 * at)) != '.')
			return 0; /* two points, the point alone, text */
		w = (w & ~(~0ull << (8 * at))) |
		    ((w >> (8 * at)) >> 8) << (8 * at);
		k--;
		frac = k - at;
	}
	m = swar_digits(w, k);
	/* No branch on the value (0 with its sign flipped is the -0 of
	 * "-0"); one on a point, which a column keeps from row to row, so
	 * that an integer does not wait for a division */
	v = (double)m;
	if (frac != 0)
		v = v / pow10_exact[frac];
	memcpy(&bits, &v, 8);
	bits ^= (uint64_t)neg << 63;
	memcpy(out, &bits, 8);
	return 1;
}
#endif

/*
 * fast_field, with swar_field first when the 8 bytes after a sign are
 * below limit (the end of the bytes the reader holds; NULL: never).
 */
static inline __attribute__((always_inline)) int
fast_field_at(const char *p, size_t n, const char *limit, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	if (n > 0 && n <= 9 && limit != NULL && limit - p >= 9 &&
	    swar_field(p, n, out))
		return 1;
#else
	(void)limit;
#endif
	return fast_field(p, n, out);
}

/*
 * The common number of a table cell in one pass, syntax and value at
 * once: an optional sign, digits with an optional point, at most 19
 * significant digits, m <= 2^53 and at most 22 decimals: fast_decimal's
 * exact case (the value is csv_parse_number's, bit for bit).  1 with
 * *out set; 0 for anything else, which takes the general path.
 */
static inline __attribute__((always_inline)) int
fast_field(const char *p, size_t n, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	uint64_t m = 0;
	unsigned digits = 0, any = 0;
	long e10 = 0;
	size_t i = 0;
	int neg = 0;
	double v;

	if (n == 0 || n > 40)
		return 0;
	if (p[0] == '-' || p[0] == '+')
		neg = p[i++] == '-';
	if (n - i <= 16) {
		/* at most 15 digits: m < 10^15 < 2^53, no count needed */
		size_t dot = 0;
		for (; i < n; i++) {
			unsigned dg = (unsigned)(p[i] - '0');
			if (dg <= 9) {
				m = m * 10 + dg;
				any++;
			} else if (p[i] == '.' && dot == 0) {
				dot = i + 1;
			} else {
				return 0;
			}
		}
		if (any == 0 || any > 15)
			return 0;
		if (m == 0) {
			*out = neg ? -0.0 : 0.0;
			return 1;
		}
		v = (double)m;
		if (dot != 0 && n > dot)
			v = v / pow10_exact[n - dot];
		*out = neg ? -v : v;
		return 1;
	}
	for (; i < n && (unsigned)(p[i] - '0') <= 9; i++) {
		any++;
		if (m == 0 && p[i] == '0')
			continue;
		if (++digits > 19)
			return 0;
		m = m * 10 + (uint64_t)(p[i] - '0');
	}
	if (i < n && p[i] == '.')
		for (i++; i < n && (unsigned)(p[i] - '0') <= 9; i++) {
			any++;
			e10--;
			if (m == 0 && p[i] == '0')
				continue;
			if (++digits > 19)
				return 0;
			m = m * 10 + (uint64_t)(p[i] - '0');
		}
	if (i != n || any == 0)
		return 0;
	if (m == 0) {
		*out = neg ? -0.0 : 0.0;
		return 1;
	}
	if (m > ((uint64_t)1 << 53) || e10 < -22)
		return 0;
	v = (double)m;
	if (e10 < 0)
		v = v / pow10_exact[-e10];
	*out = neg ? -v : v;
	return 1;
#else
	(void)p;
	(void)n;
	(void)out;
	return 0;
#endif
}

/*
 * Grows *p (of *cap bytes, *mapped saying how it is held) to hold need
 * bytes.  A large array (CSV_BIG bytes and more) is a private mapping,
 * reserved once from the first row's length (pages never touched cost
 * nothing).  It no longer asks for transparent huge pages: where the
 * kernel compacts memory for them at the fault (defrag "madvise", the
 * default), a loaded machine spent two to three times the system time
 * on them that it spends clearing 4 KiB pages (bench_csv: 1.8 to 2.9 s
 * against 0.9 s of system time for four loads of the 210 MB table).
 */
#define CSV_BIG (4u << 20)

static int
grow_bytes(void **p, size_t *cap, uint8_t *mapped, size_t need)
{
	size_t c = *cap ? *cap : 4096;
	void *np;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
#ifdef __linux__
	if (c >= CSV_BIG) {
		np = mmap(NULL, c, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (np == MAP_FAILED)
			return RBA_E_NOMEM;
		if (*cap > 0)
			memcpy(np, *p, *cap);
		if (*mapped)
			munmap(*p, *cap);
		else
			free(*p);
		*p = np;
		*cap = c;
		*mapped = 1;
		return 0;
	}
#endif
	if ((np = realloc(*p, c)) == NULL)
		return RBA_E_NOMEM;
	*p = np;
	*cap = c;
	return 0;
}

static void
free_bytes(void *p, size_t cap, uint8_t mapped)
{
#ifdef __linux__
	if (mapped) {
		munmap(p, cap);
		return;
	}
#endif
	(void)cap;
	(void)mapped;
	free(p);
}

/* grow_bytes for table array k (0 rowat, 1 num, 2 lines, 3 arena,
 * 4 rowlen). */
#define TGROW(t, k, ptr, n, size)                                              \
	((n) * (size) <= (t)->cap[k]                                           \
		 ? 0                                                           \
		 : grow_bytes((void **)&(ptr), &(t)->cap[k], &(t)->mapped[k],  \
			      (n) * (size)))

/*
 * Table array k's mapping faulted in CSV_FAULT bytes ahead of the need
 * of used bytes: one madvise(MADV_POPULATE_WRITE) for thousands of
 * pages, where each page faulted by its first write took the fault's
 * entry, locks and accounting on its own (most of the system time of a
 * million-row load).  The pages are the same zeroed pages; where the
 * kernel has no such advice (before Linux 5.14), the writes fault them
 * as before.
 */
#define CSV_FAULT (8u << 20)

static void
fault_ahead(struct csv_table *t, int k, void *base, size_t used)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
	size_t to;

	/* (a mapping grown since holds the old one's bytes, copied: its
	 * pages up to the old size are in) */
	if (!t->mapped[k] || used <= t->faulted[k])
		return;
	to = used + CSV_FAULT < t->cap[k] ? (used + CSV_FAULT) & ~(size_t)4095
					  : t->cap[k];
	if (madvise((char *)base + t->faulted[k], to - t->faulted[k],
		    MADV_POPULATE_WRITE) != 0)
		to = t->cap[k]; /* not here: let writes fault */
	t->faulted[k] = to;
#else
	(void)t;
	(void)k;
	(void)base;
	(void)used;
#endif
}

/*
 * Room in t for the rows to come, n fields each, after ncells cells,
 * and for copy more bytes of arena: grown and faulted in for a run of
 * rows (about 65,536 cells) at once, *ready_rows and *ready_cells
 * saying how far; before the first row, room for the rows size_hint
 * suggests from the first one's rec bytes.  0, or -1 out of memory.
 */
static int
row_reserve(struct csv_table *t, size_t n, size_t rec, size_t ncells,
	    size_t copy, size_t size_hint, size_t *ready_rows,
	    size_t *ready_cells)
{
	size_t rows = t->nrows + 65536 / (n + 1) + 1;
	size_t cells = ncells + (rows - t->nrows) * n;

	if (t->nrows == 0 && size_hint > 0) {
		/* rows to come, from the first one's length: reserved
		 * once (pages never touched cost no memory) */
		size_t est = size_hint / (rec + 1) * 5 / 4 + 16;
		if (TGROW(t, 0, t->rowat, est, sizeof(uint64_t)) ||
		    TGROW(t, 1, t->num, est * n, sizeof(float)) ||
		    TGROW(t, 2, t->lines, est, sizeof(unsigned long)) ||
		    TGROW(t, 4, t->rowlen, est, sizeof(uint32_t)))
			return -1;
	}
	if (TGROW(t, 0, t->rowat, rows, sizeof(uint64_t)) ||
	    TGROW(t, 1, t->num, cells, sizeof(float)) ||
	    TGROW(t, 2, t->lines, rows, sizeof(unsigned long)) ||
	    TGROW(t, 3, t->arena, t->arena_len + copy, 1) ||
	    TGROW(t, 4, t->rowlen, rows, sizeof(uint32_t)))
		return -1;
	fault_ahead(t, 0, t->rowat, rows * sizeof(uint64_t));
	fault_ahead(t, 1, t->num, cells * sizeof(float));
	fault_ahead(t, 2, t->lines, rows * sizeof(unsigned long));
	fault_ahead(t, 3, t->arena, t->arena_len + copy);
	fault_ahead(t, 4, t->rowlen, rows * sizeof(uint32_t));
	*ready_rows = rows;
	*ready_cells = cells;
	return 0;
}

/*
 * Where row t->nrows's texts are: its n fields (span bytes from the
 * first's start to the last's end) read in place when they lie side by
 * side in the input, one comma apart (no quote moved them; base: the
 * reader's buffer, whose offsets are the input's); else copied into the
 * arena, NUL-separated.
 */
static void
row_texts(struct csv_table *t, const struct csv_field *f, size_t n,
	  size_t span, const uint8_t *base, int in_place)
{
	if (in_place) {
		t->rowat[t->nrows] = (uint64_t)((const uint8_t *)f[0].p - base);
	} else {
		size_t at = t->arena_len;
		t->rowat[t->nrows] = CSV_ROW_COPY | (uint64_t)at;
		for (size_t i = 0; i < n; i++) {
			memcpy(t->arena + at, f[i].p, f[i].n);
			t->arena[at + f[i].n] = 0;
			at += f[i].n + 1;
		}
		t->arena_len = at;
	}
	t->rowlen[t->nrows] = (uint32_t)span;
}

/*
 * The row's numbers from cell ncells on (a missing token NaN, text 0),
 * each field seen by its column's checker (csv_checker's rules) unless
 * it is a plain number.  toklen: the lengths of m's tokens; file: the
 * input's name for the diagnostics.  0, or the checker's error.
 */
static int
row_numbers(struct csv_table *t, struct csv_checker *c,
	    const struct csv_field *f, size_t n, size_t ncells,
	    unsigned long line, const char *file, const struct csv_missing *m,
	    const uint8_t *toklen, struct rba_detail *d)
{
	const char *limit = (const char *)c->r->buf + c->r->end;
	int room = n > 0 && limit - (f[n - 1].p + f[n - 1].n) >= 16, err;
	float *num = t->num + ncells;
	struct colstate *cs = c->cs;

	for (size_t i = 0; i < n; i++) {
		const struct csv_field *fi = &f[i];
		double v, w = 0.0; /* v never leaves a register; w is the
				    * general parse's */
		int tok = toklen[fi->n < PINS_TOKEN_LENS ? fi->n
							 : PINS_TOKEN_LENS - 1] &&
			  csv_is_missing(m, fi->p, fi->n);
		if (!tok && fi->n > 0 && col_may_be_number((uint8_t)fi->p[0]) &&
		    (quick_number(fi->p, fi->n, room, &v) ||
		     (room ? fast_field(fi->p, fi->n, &v)
			   : fast_field_at(fi->p, fi->n, limit, &v)))) {
			cs[i].numbers++;
			num[i] = (float)v;
			continue;
		}
		err = col_see(&cs[i], fi, line, file, c->names[i], m, NULL,
			      NULL, d);
		if (err)
			return err;
		if (tok)
			w = NAN;
		else if (csv_parse_number(fi->p, fi->n, &w) != 0)
			w = 0.0;
		num[i] = (float)w;
	}
	return 0;
}

/*
 * The whole table in one pass over the n bytes at src, read by r (a
 * memory reader of them): each record checked by the rules of
 * csv_checker (the same errors at the same places), its numbers parsed
 * once, its texts left where they are (row_texts).  Memory: a float32
 * per cell, a line, an offset and a length per row, and the rows with a
 * quote.
 */
static int
table_from_reader(struct csv_reader *r, const char *src, size_t size_hint,
		  const struct csv_missing *m, struct csv_table **out,
		  struct rba_detail *d)
{
	const struct csv_field *f;
	struct csv_table *t;
	struct csv_checker *c = NULL;
	size_t n, ncells = 0, ready_rows = 0, ready_cells = 0;
	int rc, err = 0;
	uint8_t toklen[PINS_TOKEN_LENS] = {0};
	const char *file = csv_reader_name(r);

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return rba_fail(d, RBA_E_NOMEM, file, 0, 0, "%s", "out of memory");
	t->src = src;
	for (size_t i = 0; m != NULL && i < m->n; i++) {
		size_t l = strlen(m->tok[i]);
		toklen[l < PINS_TOKEN_LENS ? l : PINS_TOKEN_LENS - 1] = 1;
	}
	t->file = strdup(file);
	if ((err = csv_checker_start(r, &c, d)) != 0)
		goto out;
	csv_checker_set_missing(c, m);
	t->ncols = c->ncols;
	t->names = names_dup_cstr(c->names, c->ncols);
	t->types = calloc(t->ncols ? t->ncols : 1, sizeof(*t->types));
	if (t->file == NULL || t->names == NULL || t->types == NULL)
		goto nomem;
	while ((rc = csv_reader_next(r, &f, &n, d)) == 1) {
		unsigned long line = csv_reader_line(r);
		size_t span, rec;
		int in_place = !r->rec_quoted;
		if (n != t->ncols) {
			err = ragged(file, line, f, n, t->ncols, d);
			goto out;
		}
		/* the bytes of its fields with a NUL each: in place, the
		 * span and its commas */
		span = (size_t)(f[n - 1].p + f[n - 1].n - f[0].p);
		rec = span + 1;
		if (!in_place) {
			rec = 0;
			for (size_t i = 0; i < n; i++)
				rec += f[i].n + 1;
		}
		if ((t->nrows >= ready_rows || ncells + n > ready_cells ||
		     !in_place) &&
		    row_reserve(t, n, rec, ncells, in_place ? 0 : rec, size_hint,
				&ready_rows, &ready_cells) != 0)
			goto nomem;
		row_texts(t, f, n, in_place ? span : rec - 1, r->buf, in_place);
		if ((err = row_numbers(t, c, f, n, ncells, line, file, m,
				       toklen, d)) != 0)
			goto out;
		ncells += n;
		t->lines[t->nrows++] = line;
	}
	if (rc < 0) {
		err = rc;
		goto out;
	}
	if (t->nrows == 0) {
		err = rba_fail(d, RBA_E_SCHEMA, file, 2, 1, "%s",
			       "no data rows after the header");
		goto out;
	}
	for (size_t i = 0; i < t->ncols; i++)
		if ((err = col_finish(&c->cs[i], file, c->names[i], &t->types[i], d)))
			goto out;
	/* a number parsed in a column that turned out text means nothing */
	*out = t;
	t = NULL;
	goto out;
nomem:
	err = rba_fail(d, RBA_E_NOMEM, file, 0, 0, "%s", "out of memory");
out:
	csv_checker_free(c);
	csv_table_free(t);
	return err;
}

void
csv_table_num_release(struct csv_table *t, size_t rows)
{
#ifdef __linux__
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a, b;

	if (t == NULL || !t->mapped[1] || t->num == NULL || pg <= 0)
		return;
	if (rows > t->nrows)
		rows = t->nrows;
	/* whole pages only (the kernel would round a length up), from the
	 * mapping's start (page-aligned) */
	a = (uintptr_t)t->num;
	b = (a + rows * t->ncols * sizeof(float)) & ~((uintptr_t)pg - 1);
	if (b > a)
		(void)madvise(t->num, b - a, MADV_DONTNEED);
#else
	(void)t;
	(void)rows;
#endif
}

int
csv_table_load(const char *path, struct csv_table **out, struct rba_detail *d)
{
	uint8_t *p;
	size_t n;
	int err;

	*out = NULL;
	if ((err = rba_file_read(path, SIZE_MAX, &p, &n, d)) != 0)
		return err;
	if ((err = csv_table_load_mem(p, n, path, out, d)) != 0) {
		free(p);
		return err;
	}
	(*out)->own = p;
	return 0;
}

int
csv_table_load_mem(const void *p, size_t n, const char *name,
		   struct csv_table **out, struct rba_detail *d)
{
	return csv_table_load_mem_missing(p, n, name, NULL, out, d);
}

int
csv_table_load_mem_missing(const void *p, size_t n, const char *name,
			   const struct csv_missing *m, struct csv_table **out,
			   struct rba_detail *d)
{
	struct csv_reader *r;
	int err = csv_reader_open_mem(p, n, name, &r);

	if (err)
		return rba_fail(d, err, name, 0, 0, "%s", rba_strerror(err));
	err = table_from_reader(r, p, n, m, out, d);
	csv_reader_free(r);
	return err;
}

long
csv_table_col(const struct csv_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->names[i], name) == 0)
			return (long)i;
	return -1;
}

/* Row row's texts: *len bytes at the pointer returned, fields split by
 * *sep. */
static const char *
row_span(const struct csv_table *t, size_t row, size_t *len, char *sep)
{
	uint64_t at = t->rowat[row];

	*len = t->rowlen[row];
	*sep = at & CSV_ROW_COPY ? '\0' : ',';
	return at & CSV_ROW_COPY ? t->arena + (at & ~CSV_ROW_COPY)
				 : t->src + at;
}

const char *
csv_table_cell(const struct csv_table *t, size_t row, size_t col, size_t *n)
{
	size_t len;
	char sep;
	const char *p = row_span(t, row, &len, &sep), *end = p + len, *q;

	for (; col > 0; p++)
		col -= *p == sep;
	q = memchr(p, sep, (size_t)(end - p));
	*n = (size_t)((q != NULL ? q : end) - p);
	return p;
}

void
csv_table_row(const struct csv_table *t, size_t row, const char **p, size_t *n)
{
	size_t len, k = 0;
	char sep;
	const char *s = row_span(t, row, &len, &sep), *end = s + len;

	for (const char *q = s; q < end; q++)
		if (*q == sep) {
			p[k] = s;
			n[k++] = (size_t)(q - s);
			s = q + 1;
		}
	p[k] = s;
	n[k] = (size_t)(end - s);
}

void
csv_table_free(struct csv_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; t->names && i < t->ncols; i++)
		free(t->names[i]);
	free(t->names);
	free(t->types);
	free_bytes(t->rowat, t->cap[0], t->mapped[0]);
	free_bytes(t->rowlen, t->cap[4], t->mapped[4]);
	free(t->own);
	free_bytes(t->num, t->cap[1], t->mapped[1]);
	free_bytes(t->lines, t->cap[2], t->mapped[2]);
	free(t->file);
	free_bytes(t->arena, t->cap[3], t->mapped[3]);
	free(t);
}
