/*
 * json.h - the JSON of audit reports and history records: writing into a
 * struct rba_buf, and a small reader for records this tool wrote (the
 * history listing and dispute read past audits back).
 *
 * Writing: strings are escaped per RFC 8259 (", \, control characters);
 * the caller hands in valid UTF-8.  Numbers are written in the shortest
 * form that reads back as the same double; a non-finite number is null.
 *
 * Reading: RFC 8259 values, nesting up to JSON_MAX_DEPTH, text up to
 * JSON_MAX_TEXT bytes; \u escapes (with surrogate pairs) become UTF-8.
 * Duplicate object keys are kept; json_get returns the first.
 */
#ifndef RBA_JSON_H
#define RBA_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"

#define JSON_MAX_DEPTH 32
#define JSON_MAX_TEXT (64u << 20)

/*
 * The shortest decimal text that reads back (strtod) as v, as printf's
 * %.15g, %.16g or %.17g gives it (the first of them that round-trips);
 * integral values below 2^53 in magnitude as plain integers.  Writes a
 * NUL-terminated text into out and returns its length.  For NaN and
 * infinities: "nan", "inf", "-inf".
 */
size_t json_fmt_double(double v, char out[32]);

/* Appends s (NUL-terminated) quoted and escaped. */
void json_put_str(struct rba_buf *b, const char *s);
/* Appends n bytes of s quoted and escaped. */
void json_put_strn(struct rba_buf *b, const char *s, size_t n);
/*
 * "key": value pairs, each followed by ", " when comma is set: a string
 * (NULL: null), a number, an unsigned integer, a boolean, a digest in
 * text form (null unless has), a list of n numbers (NULL: null).
 */
void json_kv_str(struct rba_buf *b, const char *key, const char *v, int comma);
void json_kv_num(struct rba_buf *b, const char *key, double v, int comma);
void json_kv_u64(struct rba_buf *b, const char *key, uint64_t v, int comma);
void json_kv_bool(struct rba_buf *b, const char *key, int v, int comma);
void json_kv_digest(struct rba_buf *b, const char *key,
		    const struct rba_digest *dg, int has, int comma);
void json_kv_nums(struct rba_buf *b, const char *key, const double *v,
		  uint32_t n, int comma);

/* Appends v as json_fmt_double gives it, or null when not finite. */
void json_put_num(struct rba_buf *b, double v);
/* Appends "key": (quoted key, colon and a space). */
void json_put_key(struct rba_buf *b, const char *key);

enum json_type {
	JSON_NULL = 0,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

/*
 * A parsed value; owned by the root (json_release).  Strings are
 * NUL-terminated (len does not count the NUL; a string holding a NUL
 * keeps it inside len).  Arrays have n items; objects n items with
 * keys[i] naming items[i].
 */
struct json_value {
	enum json_type type;
	double num;
	char *str;
	size_t len;
	size_t n;
	struct json_value *items;
	char **keys;
};

/*
 * Parses n bytes (one value, optional surrounding white space) into
 * *out.  0; RBA_E_SYNTAX (d->col the byte offset + 1 and a reason);
 * RBA_E_LIMIT (text over JSON_MAX_TEXT, nesting over JSON_MAX_DEPTH);
 * RBA_E_NOMEM.  On error *out is released.
 */
int json_parse(const char *text, size_t n, struct json_value *out,
	       struct rba_detail *d);
/* Frees everything v owns and zeroes it; NULL allowed. */
void json_release(struct json_value *v);

/* The member key of object v, or NULL (also when v is not an object). */
const struct json_value *json_get(const struct json_value *v,
				  const char *key);
/* The member's string, or NULL when absent or not a string. */
const char *json_get_str(const struct json_value *v, const char *key);
/* The member's number, or def when absent or not a number. */
double json_get_num(const struct json_value *v, const char *key, double def);

#endif
