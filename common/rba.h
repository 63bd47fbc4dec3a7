/*
 * rba.h - status codes, error detail and the small value types shared by
 * every module of rebuild-audit.
 *
 * Status codes: 0 is success; a negative RBA_E_* value is one of the
 * codes below; a positive value is an errno.  rba_strerror() turns any of
 * them into text.  Published codes are never renumbered.
 */
#ifndef RBA_H
#define RBA_H

#include <stddef.h>
#include <stdint.h>

#define RBA_TOOL_NAME "rebuild-audit"
#define RBA_TOOL_VERSION "0.1.0"

enum rba_err {
	RBA_OK = 0,
	RBA_E_NOMEM = -1,	/* out of memory */
	RBA_E_IO = -2,		/* short read or write, unexpected EOF */
	RBA_E_SYNTAX = -3,	/* input is not well-formed (CSV, YAML) */
	RBA_E_SCHEMA = -4,	/* well-formed but not what was expected */
	RBA_E_RANGE = -5,	/* a value is out of its allowed range */
	RBA_E_LIMIT = -6,	/* an input cap was exceeded */
	RBA_E_NOTFOUND = -7,	/* no such snapshot, version, case, ... */
	RBA_E_EXISTS = -8,	/* already exists */
	RBA_E_CORRUPT = -9,	/* stored data cannot be decoded */
	RBA_E_TAMPERED = -10,	/* stored data does not match its digest */
	RBA_E_NEWER = -11,	/* written by a newer schema than this tool */
	RBA_E_UNSUPPORTED = -12, /* a format or ABI this build lacks */
	RBA_E_STORE = -13,	/* the database failed (see detail) */
	RBA_E_COMPRESS = -14,	/* compression or decompression failed */
	RBA_E_USAGE = -15,	/* bad arguments */
	RBA_E_CRYPTO = -16,	/* a cryptographic operation failed */
	RBA_E_NUMERIC = -17,	/* training diverged (NaN or Inf) */
	RBA_E_NOSTORE = -18,	/* no store at that path */
	RBA_E_BUSY = -19,	/* the store is in use */
	RBA_E_BADSIG = -20,	/* a signature does not verify */
	RBA_E_ENCODING = -21,	/* invalid UTF-8 */
};

/*
 * Where an error happened.  Filled by the callee when it returns an error
 * and the caller passed a non-NULL detail; the cli turns it into one
 * diagnostic line.  line and col are 1-based; 0 means unknown.
 */
struct rba_detail {
	char file[512];	  /* input file, or empty */
	unsigned long line;
	unsigned long col;
	char key[128];	  /* a YAML key, column name, case id, ... */
	char reason[384]; /* lower case, no trailing period */
};

/*
 * Text for any status code: RBA_E_*, errno or 0.  Never NULL.  The
 * errnos of disks and files read in lower case ("no space left on
 * device"), the rest as strerror(3) gives them.
 */
const char *rba_strerror(int err);

/* Clears d (NULL allowed). */
void rba_detail_clear(struct rba_detail *d);

/*
 * Records an error at FILE:LINE:COL with a printf-style reason.  d may be
 * NULL.  Returns err so callers can write `return rba_fail(...)`.
 */
int rba_fail(struct rba_detail *d, int err, const char *file,
	     unsigned long line, unsigned long col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Sets d->key (NULL allowed for d). */
void rba_detail_key(struct rba_detail *d, const char *key);

/* A borrowed byte range. */
struct rba_bytes {
	const uint8_t *p;
	size_t n;
};

#endif
