/*
 * json.h - the one JSON writer and reader of rebuild-audit: audit and
 * dispute reports, history records, run records, evidence files, and the
 * records this tool reads back (the history listing, dispute, verify).
 *
 * Writing
 *   Into a struct rba_buf (buf.h), whose sticky error the caller checks
 *   once at the end with rba_buf_status(); the writers themselves cannot
 *   fail.  One writer, struct rba_json_w, which writes the separators
 *   itself, in one of two layouts chosen when it is initialized:
 *   - compact (rba_json_w_init): members separated by ", ", ": " after
 *     a key, no white space elsewhere (history, run and sweep records,
 *     --json documents, the statements of dispute and variation
 *     evidence);
 *   - pretty (rba_json_w_init_pretty): two-space indentation, one member
 *     per line, ": " after a key, "," at the end of a line, empty
 *     containers as {} and [] (the layout of rebuild-audit-evidence(5),
 *     whose files are signed: it never changes).
 *   Below it, rba_json_put_* append one value or key with no separator.
 *   Strings are escaped as RFC 8259 requires and no more: '"' and '\\'
 *   get a backslash, LF, CR and TAB become \n, \r and \t, every other
 *   byte below 0x20 becomes \u00XX (lower-case hex).  Every other byte,
 *   DEL and bytes 0x80..0xFF included, is copied as it is: the writer does
 *   not validate UTF-8, so invalid UTF-8 in gives invalid UTF-8 out.
 *   Callers hand in valid UTF-8 (utf8.h checks it) and, except through
 *   rba_json_put_strn and rba_json_w_strn, no NUL.
 *   Numbers are written as rba_json_fmt_double gives them; a NaN or an
 *   infinity is written as null.
 *
 * Reading
 *   rba_json_parse: one RFC 8259 value, nesting up to RBA_JSON_MAX_DEPTH,
 *   text up to RBA_JSON_MAX_TEXT bytes; \u escapes (with surrogate pairs)
 *   become UTF-8, a lone surrogate is an error.  The reader does not
 *   validate the UTF-8 of the text itself: callers that need it call
 *   rba_utf8_valid() first.  A key given twice in one object (compared
 *   as rba_json_get compares them, up to a NUL) is an error at its
 *   opening quote: RFC 8259 leaves its value to the reader, XGBoost
 *   takes the last, and no reader here may see one value where another
 *   sees another.
 *   Members are looked up by key (rba_json_get), by dotted path
 *   (rba_json_path), or read through the path reader, struct
 *   rba_json_rd: typed reads that stop at the first member missing or
 *   of the wrong type and name its path ("predicate: 'results.flips' is
 *   missing, not a number"), as evidence (evidence_read.c) and the
 *   report pages (report_html.c) read what they are given.
 *
 * Lifetimes
 *   Every pointer the reader hands out (a value's str, keys, items, and
 *   what rba_json_get, rba_json_get_str, rba_json_path and
 *   rba_json_rd_at return) points into the tree of the root passed to
 *   rba_json_parse, and stays valid until that root is given to
 *   rba_json_release.  No function here keeps a pointer to a caller's
 *   text or buffer after it returns, but the two structs: a writer
 *   borrows its buffer, a path reader its root, what and detail, until
 *   their last call.
 */
#ifndef RBA_JSON_H
#define RBA_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"

#define RBA_JSON_MAX_DEPTH 32
#define RBA_JSON_MAX_TEXT (64u << 20)
/* Room for any text rba_json_fmt_double writes, NUL included. */
#define RBA_JSON_NUM_MAX 32

/*
 * The shortest decimal text that reads back (strtod) as v, as printf's
 * %.15g, %.16g or %.17g gives it (the first of them that round-trips);
 * integral values below 2^53 in magnitude as plain integers ("1049", not
 * "1049.0" or "1.049e+03"); -0 as "-0".  Writes a NUL-terminated text
 * into out and returns its length.  For NaN and infinities: "nan",
 * "inf", "-inf" (not JSON: rba_json_put_num writes null for them).
 * printf and strtod use the locale's decimal point: the tool never
 * calls setlocale(LC_NUMERIC), so it is '.'.
 */
size_t rba_json_fmt_double(double v, char out[RBA_JSON_NUM_MAX]);

/* Appends s (NUL-terminated, not NULL) quoted and escaped. */
void rba_json_put_str(struct rba_buf *b, const char *s);
/* Appends the n bytes at s quoted and escaped; a NUL becomes \u0000. */
void rba_json_put_strn(struct rba_buf *b, const char *s, size_t n);
/* Appends v as rba_json_fmt_double gives it, or null when not finite. */
void rba_json_put_num(struct rba_buf *b, double v);
/* Appends "key": (the key quoted and escaped, a colon and a space). */
void rba_json_put_key(struct rba_buf *b, const char *key);

/*
 * The writer: a struct that knows how deep it is and whether the
 * container it is in has a member yet, so that it writes the separators
 * itself.  Initialize with rba_json_w_init (the compact layout) or
 * rba_json_w_init_pretty (the pretty layout; see Writing above), then
 * write values; every value but the outermost is a member (key not NULL)
 * of an open object or an item (key NULL) of an open array.  Containers
 * close in the reverse order they opened, with the matching character;
 * at most RBA_JSON_W_DEPTH are open at once (a parsed value, at most
 * RBA_JSON_MAX_DEPTH deep, fits under RBA_JSON_W_DEPTH -
 * RBA_JSON_MAX_DEPTH - 1 levels of the caller's).  These are asserted.
 * No trailing newline is written.  w borrows b until the last call;
 * errors stay in b (rba_buf_status).
 */
#define RBA_JSON_W_DEPTH 64

struct rba_json_value;

struct rba_json_w {
	struct rba_buf *b;
	int depth;
	int pretty; /* nonzero: the pretty layout */
	int inline_depth; /* nonzero: the depth of an inline container */
	unsigned char first[RBA_JSON_W_DEPTH + 1];
};

/* The compact layout. */
void rba_json_w_init(struct rba_json_w *w, struct rba_buf *b);
/* The pretty layout (rebuild-audit-evidence(5)). */
void rba_json_w_init_pretty(struct rba_json_w *w, struct rba_buf *b);
/* Opens an object (c '{') or an array (c '['). */
void rba_json_w_open(struct rba_json_w *w, const char *key, char c);
/*
 * Opens a container whose contents, up to its close, are written in the
 * compact layout on one line whatever w's layout (a sweep record keeps
 * its lists of seeds and runs so inside its pretty object).  One at a
 * time (asserted); containers opened inside it are compact too.
 */
void rba_json_w_open_inline(struct rba_json_w *w, const char *key, char c);
/* Closes the innermost container with c ('}' or ']'). */
void rba_json_w_close(struct rba_json_w *w, char c);
/* A NUL-terminated string; s NULL: null. */
void rba_json_w_str(struct rba_json_w *w, const char *key, const char *s);
/* The n bytes at s as a string (a NUL becomes \u0000); s NULL: null. */
void rba_json_w_strn(struct rba_json_w *w, const char *key, const char *s,
		     size_t n);
/* A number (not finite: null). */
void rba_json_w_num(struct rba_json_w *w, const char *key, double v);
/* An unsigned integer in decimal. */
void rba_json_w_u64(struct rba_json_w *w, const char *key, uint64_t v);
/* true (v nonzero) or false. */
void rba_json_w_bool(struct rba_json_w *w, const char *key, int v);
/* A digest in its "sha256:<hex>" text; null unless has. */
void rba_json_w_digest(struct rba_json_w *w, const char *key,
		       const struct rba_digest *dg, int has);
/* n bytes of JSON text the caller made, copied as they are (in the
 * pretty layout too: the caller's text keeps its own white space). */
void rba_json_w_raw(struct rba_json_w *w, const char *key, const char *text,
		    size_t n);
/* Any parsed value (rba_json_parse, or a tree built by hand), its
 * containers in w's layout; a number as its num. */
void rba_json_w_value(struct rba_json_w *w, const char *key,
		      const struct rba_json_value *v);

enum rba_json_type {
	RBA_JSON_NULL = 0,
	RBA_JSON_FALSE,
	RBA_JSON_TRUE,
	RBA_JSON_NUMBER,
	RBA_JSON_STRING,
	RBA_JSON_ARRAY,
	RBA_JSON_OBJECT,
};

/*
 * A parsed value, owned by its root (rba_json_release).  A number has
 * num (strtod of its text) and numf (strtof of the same text: the
 * float32 nearest the decimal, rounded once, as readers of float32
 * model files need; 0 in a tree built by hand).  Strings are
 * NUL-terminated (len does not count the NUL; a string holding a NUL
 * keeps it inside len).  Arrays have n items; objects n items with
 * keys[i] (NUL-terminated) naming items[i].  keys is NULL for arrays.
 * A tree built by hand (not by rba_json_parse) may be released by
 * rba_json_release when every pointer in it came from malloc.
 */
struct rba_json_value {
	enum rba_json_type type;
	double num;
	float numf;
	char *str;
	size_t len;
	size_t n;
	struct rba_json_value *items;
	char **keys;
};

/*
 * Parses the n bytes at text (one value with optional white space around
 * it; text need not be NUL-terminated and is not kept) into *out.
 * Returns 0; RBA_E_SYNTAX (d->col the byte offset + 1 and a reason; a
 * duplicate key: "duplicate key 'K'", d->key K with a byte below 0x20,
 * DEL, a quote or a backslash as \xHH, cut at 64 bytes);
 * RBA_E_LIMIT (text over RBA_JSON_MAX_TEXT, nesting over
 * RBA_JSON_MAX_DEPTH, a number over 63 characters); RBA_E_NOMEM.  On
 * error *out is released (all zero).  d may be NULL.
 */
int rba_json_parse(const char *text, size_t n, struct rba_json_value *out,
		   struct rba_detail *d);
/*
 * rba_json_parse with flags: RBA_JSON_NONFINITE takes XGBoost's words
 * for the numbers JSON has not, NaN, Infinity and -Infinity, where a
 * value may stand (num and numf that number), so that its model files
 * parse and their reader can refuse such a value by its path.  Other
 * bits are ignored.  Errors as rba_json_parse.
 */
#define RBA_JSON_NONFINITE 1u
int rba_json_parse_flags(const char *text, size_t n, unsigned flags,
			 struct rba_json_value *out, struct rba_detail *d);

/* Frees everything v owns and zeroes *v; NULL allowed, twice allowed. */
void rba_json_release(struct rba_json_value *v);

/*
 * The first member key of object v, or NULL (also when v is NULL or not
 * an object).  Borrowed from v's root (see Lifetimes).
 */
const struct rba_json_value *rba_json_get(const struct rba_json_value *v,
					  const char *key);
/* The member's string, or NULL when absent or not a string.  Borrowed. */
const char *rba_json_get_str(const struct rba_json_value *v, const char *key);
/* The member's number, or def when absent or not a number. */
double rba_json_get_num(const struct rba_json_value *v, const char *key,
			double def);

/*
 * Reading members by path.  A path names a member below a value by the
 * keys that lead to it joined with dots ("results.flipped_cases"), each
 * key compared as rba_json_get compares it; a key holding a dot cannot
 * be named.  An empty path names the value itself.
 *
 * rba_json_path: the member at path below v, or NULL (v NULL, a key
 * missing, a value on the way not an object).  Borrowed from v's root.
 */
const struct rba_json_value *rba_json_path(const struct rba_json_value *v,
					   const char *path);

/*
 * The path reader: typed reads of the members of one tree that stop at
 * the first member missing or of the wrong type, and name it by its path
 * from the tree's root, as the readers of evidence and records say it.
 * Initialize with rba_json_rd_init, read with rba_json_rd_at, check
 * r->err once at the end.  The first failure keeps:
 *   err   RBA_E_SCHEMA (or the code given to rba_json_rd_fail);
 *   path  the member's path from root ("predicate.results.flips", an
 *         item as "results.cases[3]"; "" for a failure at no member);
 *   want  what it was to be ("a string", "a number or null", ...; "" for
 *         a failure of the caller's);
 *   d     when not NULL, cleared and given the reason, "WHAT: 'PATH' is
 *         missing, not a string" (or "is of another type, not a number
 *         or null"; "WHAT: " only when what is not NULL), d->key empty.
 * Later reads return NULL (but RBA_JSON_QUIET ones, which look).  r
 * borrows root, what and d until its last use.
 */
enum rba_json_want {
	RBA_JSON_WANT_ANY = 0, /* any value: "a value" */
	RBA_JSON_WANT_STR,     /* "a string" */
	RBA_JSON_WANT_NUM,     /* "a number" */
	RBA_JSON_WANT_BOOL,    /* true or false: "true or false" */
	RBA_JSON_WANT_ARR,     /* "an array" */
	RBA_JSON_WANT_OBJ,     /* "an object" */
};

/* rba_json_rd_at's flags. */
#define RBA_JSON_NULL_OK 1u  /* null is taken too (and returned): "... or null" */
#define RBA_JSON_OPTIONAL 2u /* a missing member is no failure */
#define RBA_JSON_QUIET 4u    /* nothing is a failure; looks after one too */

#define RBA_JSON_PATH_MAX 256

struct rba_json_rd {
	const struct rba_json_value *root;
	const char *what;
	struct rba_detail *d;
	int err;
	char path[RBA_JSON_PATH_MAX];
	const char *want;
};

/* r reads the tree of root; what names it in d's reason (NULL: none). */
void rba_json_rd_init(struct rba_json_rd *r, const struct rba_json_value *root,
		      const char *what, struct rba_detail *d);
/*
 * The member at path below v (v NULL: r->root) when it is what want and
 * flags take, else NULL; a member that is missing or of another type is
 * r's failure unless flags say otherwise.  NULL once r failed (unless
 * RBA_JSON_QUIET).  Borrowed from the tree.
 */
const struct rba_json_value *rba_json_rd_at(struct rba_json_rd *r,
					    const struct rba_json_value *v,
					    const char *path,
					    enum rba_json_want want,
					    unsigned flags);
/*
 * Fails r (when it has not failed yet) with err and the caller's reason:
 * d's reason "WHAT: 'PATH' REASON", PATH the path of path below v (path
 * NULL or "": v's own), or "WHAT: REASON" when v is NULL.  Returns r->err.
 */
int rba_json_rd_fail(struct rba_json_rd *r, int err,
		     const struct rba_json_value *v, const char *path,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The text of want ("a string"; with RBA_JSON_NULL_OK "a string or null"). */
const char *rba_json_want_name(enum rba_json_want want, unsigned flags);

#endif
