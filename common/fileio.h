/*
 * fileio.h - bounded file reads and atomic file writes.
 */
#ifndef RBA_FILEIO_H
#define RBA_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rba.h"

/*
 * Reads all of path (or standard input for "-") into a malloc'd buffer,
 * NUL-terminated (the NUL is not counted in *len).  A file larger than max
 * bytes fails with RBA_E_LIMIT.  Returns 0, RBA_E_LIMIT, RBA_E_NOMEM or an
 * errno; d gets the file name.
 */
int rba_file_read(const char *path, size_t max, uint8_t **out, size_t *len,
		  struct rba_detail *d);

/*
 * An output file written beside its final name and renamed into place
 * only on commit: a crash or kill leaves either no file or the old file,
 * never a partial one.  Temporary names are "<path>.tmp-<pid>-<n>".
 */
struct rba_atomic {
	char path[4096];
	char tmp[4096 + 32];
	int fd;
	FILE *fp; /* set by rba_atomic_stdio() */
};

/* Creates the temporary file (mode), 0 or errno. */
int rba_atomic_open(struct rba_atomic *a, const char *path, int mode);
/* A stdio stream on the temporary file, or NULL (errno set). */
FILE *rba_atomic_stdio(struct rba_atomic *a);
/* Writes all n bytes; 0 or errno. */
int rba_atomic_write(struct rba_atomic *a, const void *p, size_t n);
/*
 * fsync, close, rename over path, fsync the directory.  0 or errno; on
 * error the temporary is removed.
 */
int rba_atomic_commit(struct rba_atomic *a);
/* Closes and removes the temporary (safe after commit, safe twice). */
void rba_atomic_abort(struct rba_atomic *a);
/*
 * Removes stale temporaries "<path>.tmp-<pid>-*" whose pid is not alive.
 * Best effort; returns how many were removed.
 */
int rba_atomic_sweep(const char *path);

/* Writes a whole buffer to path atomically.  0 or errno. */
int rba_file_write_atomic(const char *path, const void *p, size_t n, int mode);

/* fsyncs the directory containing path.  0 or errno. */
int rba_fsync_parent(const char *path);

#endif
