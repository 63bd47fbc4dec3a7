/*
 * ydoc.h - internal to policy/ (not a public header): a YAML file read
 * with libyaml into a small tree, the scalar rules shared by pins and
 * policy files, and the writer of their canonical text.
 *
 * Reading (policy_ydoc_parse) enforces every structural cap before any
 * schema is looked at: file size, UTF-8 and YAML's character set, YAML
 * syntax, a single document, no anchors, aliases or tags, nesting depth
 * and node count.  Validation then walks the tree with a struct yval that
 * carries the file name, the caller's detail and the key path being
 * checked ("train.lr", "decision.bands[1].below").
 */
#ifndef RBA_POLICY_YDOC_H
#define RBA_POLICY_YDOC_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"

/*
 * The reader's caps.  policy.h publishes them as POLICY_MAX_FILE,
 * POLICY_MAX_DEPTH and POLICY_MAX_NODES (policy.c pins them equal), so
 * that this lower layer does not include the header of its user.
 */
#define YDOC_MAX_FILE (1u << 20) /* bytes in a YAML file */
#define YDOC_MAX_DEPTH 8	 /* nesting */
#define YDOC_MAX_NODES 4096	 /* scalars, lists, maps */

enum ydoc_type { YDOC_SCALAR = 1, YDOC_SEQ, YDOC_MAP };

struct ydoc_node {
	enum ydoc_type type;
	unsigned long line, col; /* 1-based, where the node starts */
	char *val;		 /* scalar text, NUL-terminated (may hold NULs) */
	size_t len;
	int plain;		 /* plain style: only plain scalars can be null */
	struct ydoc_node *kids;	 /* children; a map's alternate key, value */
	struct ydoc_node *last;
	struct ydoc_node *next;	 /* next sibling */
	size_t nkids;
	struct ydoc_node *chain; /* every node of the document, for freeing */
};

struct ydoc {
	struct ydoc_node *root; /* never NULL after a successful parse */
	struct ydoc_node *all;
	size_t nnodes;
};

/*
 * Reads text (n bytes; text[n] need not be readable) into doc.  0, or
 * RBA_E_LIMIT (size, depth, node count), RBA_E_ENCODING (invalid UTF-8),
 * RBA_E_SYNTAX (YAML syntax, control characters, anchors, aliases, tags,
 * several documents, non-scalar keys), RBA_E_SCHEMA "empty file" (no
 * document at all: zero bytes, or only blank lines and comments; d gets
 * the name and no position), RBA_E_NOMEM; d gets name:line:col.
 * doc is released on error; on success the caller releases it.
 */
int policy_ydoc_parse(struct ydoc *doc, const void *text, size_t n,
		      const char *name, struct rba_detail *d);
void policy_ydoc_release(struct ydoc *doc);

/*
 * Offset of the first byte that stops a libyaml read of text: invalid
 * UTF-8 or a character YAML forbids (n when there is none).
 */
size_t policy_ydoc_valid_prefix(const void *text, size_t n);

/* 1 for a plain null scalar: empty, ~, null, Null, NULL. */
int policy_ydoc_node_is_null(const struct ydoc_node *n);
/* 1 for a scalar whose text is exactly s (any quoting style). */
int policy_ydoc_node_is(const struct ydoc_node *n, const char *s);

/* Each key node of a mapping (its value is k->next). */
#define YDOC_EACH_KEY(k, map)                                              \
	for ((k) = (map) != NULL ? (map)->kids : NULL;                     \
	     (k) != NULL && (k)->next != NULL; (k) = (k)->next->next)

/* Validation context. */
struct yval {
	const char *name;
	struct rba_detail *d;
	char path[128];
};

/*
 * Records an error at node at (1:1 when NULL) with the current path as
 * d->key and a reason that is formatted with printf rules.  Returns err.
 */
int policy_yval_fail(struct yval *v, int err, const struct ydoc_node *at,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Appends ".key" (or "key" at the top) to the path; returns the old length. */
size_t policy_yval_path_key(struct yval *v, const char *key);
/* Appends "[i]"; returns the old length. */
size_t policy_yval_path_index(struct yval *v, size_t i);
void policy_yval_path_restore(struct yval *v, size_t old);

/* The number of entries of a key table, to give policy_yval_key: a
 * count written by hand once read past a table of three. */
#define RBA_NKEYS(keys) (sizeof(keys) / sizeof((keys)[0]))

/*
 * Resolves mapping key k against keys[0..nkeys) (nkeys <= 32): *idx gets
 * its index.  RBA_E_SCHEMA for an unknown key or one already in *seen
 * (updated), with the key's position.
 */
int policy_yval_key(struct yval *v, const struct ydoc_node *k,
		    const char *const *keys, size_t nkeys, uint32_t *seen,
		    size_t *idx);
/*
 * Checks that every key whose bit is in required is in seen; otherwise
 * "missing required key 'path.key'" at node at.
 */
int policy_yval_required(struct yval *v, const struct ydoc_node *at,
			 const char *const *keys, size_t nkeys, uint32_t seen,
			 uint32_t required);

/* "'path' must be a mapping" unless n is one (null is the caller's case). */
int policy_yval_map(struct yval *v, const struct ydoc_node *n);
/* "'path' must be a list" unless n is one. */
int policy_yval_seq(struct yval *v, const struct ydoc_node *n);

/*
 * Scalar getters for the value at the current path.  Each returns 0,
 * RBA_E_SCHEMA (wrong type), RBA_E_RANGE (right type, out of range) or
 * RBA_E_LIMIT (a string over max bytes), with the reason naming the path.
 */
int policy_yval_get_str(struct yval *v, const struct ydoc_node *n, size_t max,
			char **out);
int policy_yval_get_bool(struct yval *v, const struct ydoc_node *n, int *out);
int policy_yval_get_uint(struct yval *v, const struct ydoc_node *n, uint64_t lo,
			 uint64_t hi, uint64_t *out);
/* Range of a number: lo/hi may be infinite; *_open excludes the bound. */
struct yrange {
	double lo, hi;
	int lo_open, hi_open;
};
int policy_yval_get_num(struct yval *v, const struct ydoc_node *n,
			const struct yrange *r, double *out);
int policy_yval_range_fail(struct yval *v, const struct ydoc_node *n,
			   const struct yrange *r);
/*
 * The schema: key's value must be want ("rebuild-audit/pins/v1");
 * RBA_E_NEWER for a later version of the same kind, else RBA_E_SCHEMA.
 */
int policy_yval_schema(struct yval *v, const struct ydoc_node *n, const char *want);
/* One of names[0..nnames): *out gets the index. */
int policy_yval_get_enum(struct yval *v, const struct ydoc_node *n,
			 const char *const *names, size_t nnames, int *out);
int policy_yval_get_digest(struct yval *v, const struct ydoc_node *n,
			   struct rba_digest *out);

/*
 * Number text, C locale whatever the process locale:
 * [-+]? (digits (. digits?)? | . digits) ([eE] [-+]? digits)?, no leading
 * zero before another digit.  0 with *out (never -0), RBA_E_SYNTAX when
 * the text is not such a number, RBA_E_RANGE for overflow or a spelled
 * nan/inf.
 */
int policy_scalar_num_parse(const char *s, size_t n, double *out);
/* [-+]?digits without leading zeros: 0, RBA_E_SYNTAX, RBA_E_RANGE (negative, overflow). */
int policy_scalar_uint_parse(const char *s, size_t n, uint64_t *out);
/*
 * The shortest of %.15g, %.16g, %.17g that reads back as v, with a point
 * in the mantissa and an unpadded signed exponent: 1.0, 0.25, 1.0e-8.
 */
void policy_scalar_num_format(double v, char out[40]);

/* Canonical text goes to a buffer or straight into a hasher. */
struct ysink {
	struct rba_buf *buf;
	struct rba_hasher *h;
};
void policy_ysink_put(struct ysink *s, const char *p, size_t n);
void policy_ysink_text(struct ysink *s, const char *str);
void policy_ysink_printf(struct ysink *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void policy_ysink_num(struct ysink *s, double v);
/* A string, plain when that reads back as the same text, else quoted. */
void policy_ysink_str(struct ysink *s, const char *str);
/* A string or null. */
void policy_ysink_opt_str(struct ysink *s, const char *str);
/*
 * The value of a list of strings after "key:": " []" when empty, else a
 * block list, one "indent- item" line each.  Ends the line.
 */
void policy_ysink_str_list(struct ysink *s, const char *indent,
			   char *const *v, size_t n);

#endif
