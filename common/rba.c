/* rba.c - status codes and error detail. */
#include "rba.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * The errnos a disk or a file gives, in the lower case of every
 * diagnostic, so that a reason reads the same inside a longer one
 * ("writing the store 'st': no space left on device").
 */
static const char *
errno_text(int err)
{
	switch (err) {
	case ENOSPC: return "no space left on device";
	case EDQUOT: return "disk quota exceeded";
	case EIO: return "input/output error";
	case EROFS: return "read-only file system";
	case EFBIG: return "file too large";
	case ENOENT: return "no such file or directory";
	case EACCES: return "permission denied";
	case EPERM: return "operation not permitted";
	case EEXIST: return "file exists";
	case EISDIR: return "is a directory";
	case ENOTDIR: return "not a directory";
	case ENAMETOOLONG: return "file name too long";
	case EPIPE: return "broken pipe";
	case ENOMEM: return "out of memory";
	}
	return strerror(err);
}

const char *
rba_strerror(int err)
{
	if (err > 0)
		return errno_text(err);
	switch ((enum rba_err)err) {
	case RBA_OK: return "success";
	case RBA_E_NOMEM: return "out of memory";
	case RBA_E_IO: return "input/output error";
	case RBA_E_SYNTAX: return "syntax error";
	case RBA_E_SCHEMA: return "invalid content";
	case RBA_E_RANGE: return "value out of range";
	case RBA_E_LIMIT: return "input exceeds a size limit";
	case RBA_E_NOTFOUND: return "not found";
	case RBA_E_EXISTS: return "already exists";
	case RBA_E_CORRUPT: return "corrupt data";
	case RBA_E_TAMPERED: return "tampered: content does not match its digest";
	case RBA_E_NEWER: return "written by a newer version of rebuild-audit";
	case RBA_E_UNSUPPORTED: return "not supported by this build";
	case RBA_E_STORE: return "database error";
	case RBA_E_COMPRESS: return "compression error";
	case RBA_E_USAGE: return "usage error";
	case RBA_E_CRYPTO: return "cryptographic library failure";
	case RBA_E_NUMERIC: return "training diverged (non-finite value)";
	case RBA_E_NOSTORE: return "no store here (run 'rebuild-audit init')";
	case RBA_E_BUSY: return "store is busy";
	case RBA_E_BADSIG: return "signature does not verify";
	case RBA_E_ENCODING: return "invalid UTF-8";
	}
	return "unknown error";
}

void
rba_detail_clear(struct rba_detail *d)
{
	if (d != NULL)
		memset(d, 0, sizeof(*d));
}

int
rba_fail(struct rba_detail *d, int err, const char *file, unsigned long line,
	 unsigned long col, const char *fmt, ...)
{
	va_list ap;

	if (d == NULL)
		return err;
	if (file != NULL)
		snprintf(d->file, sizeof(d->file), "%s", file);
	d->line = line;
	d->col = col;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
		va_end(ap);
	}
	return err;
}

void
rba_detail_key(struct rba_detail *d, const char *key)
{
	if (d != NULL)
		snprintf(d->key, sizeof(d->key), "%s", key);
}
