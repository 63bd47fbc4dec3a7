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
 * never a partial one.  Temporary names are "<path>.tmp-<pid>-<n>", in
 * the directory of path (so the rename stays on one file system).
 *
 * Life of a struct rba_atomic (caller-owned, usually on the stack):
 *   RBA_ATOMIC_INIT or rba_atomic_init: the idle state (no descriptor,
 *       no temporary), in which rba_atomic_abort does nothing.  A struct
 *       zeroed with memset is NOT idle (fd 0 is standard input): use the
 *       initializer wherever a struct may reach rba_atomic_abort before
 *       rba_atomic_open.
 *   rba_atomic_open: creates the temporary with
 *       O_CREAT|O_EXCL|O_NOFOLLOW and mode, from which the process umask
 *       clears bits as open(2) does (0644 under umask 022 stays 0644;
 *       0600 for secrets).  The final file keeps the temporary's mode: a
 *       file replaced by commit does not keep its old mode or owner.
 *       On failure the struct is idle again.
 *   rba_atomic_write, or rba_atomic_stdio and stdio calls: the bytes.
 *   rba_atomic_commit or rba_atomic_abort, exactly one of them: both
 *       close the descriptor, and the stream if rba_atomic_stdio made
 *       one.  The stream is the struct's: the caller never fclose()s it,
 *       and it is invalid after commit or abort.  Both leave the struct
 *       idle, so a later abort is harmless.
 */
struct rba_atomic {
	char path[4096];
	char tmp[4096 + 32];
	int fd;	  /* the temporary, or -1 when idle */
	FILE *fp; /* set by rba_atomic_stdio(), closed by commit or abort */
};

#define RBA_ATOMIC_INIT { .fd = -1 }

/* Puts a into the idle state (same as RBA_ATOMIC_INIT). */
void rba_atomic_init(struct rba_atomic *a);
/*
 * Creates the temporary for path (under 4096 bytes) with mode (see
 * above).  0; ENAMETOOLONG; an errno of open(2) (EEXIST: a temporary of
 * that name exists, ENOENT: no such directory, EACCES, ...).  a need not
 * be initialized; whatever it held is forgotten (not closed).
 */
int rba_atomic_open(struct rba_atomic *a, const char *path, int mode);
/*
 * A stdio stream on the temporary (the same stream on every call), or
 * NULL with errno set.  Owned by a (see above).
 */
FILE *rba_atomic_stdio(struct rba_atomic *a);
/*
 * Writes all n bytes (through the stream once rba_atomic_stdio made
 * one, so that the two never interleave out of order); 0 or errno.  On
 * error the temporary stays: abort it.
 */
int rba_atomic_write(struct rba_atomic *a, const void *p, size_t n);
/*
 * Flushes the stream, fsyncs and closes the temporary, renames it over
 * path, and fsyncs the directory.  0 or errno; on error the temporary is
 * removed and path is untouched (except when only the last fsync of the
 * directory failed: the new file is then in place).  a is idle after.
 */
int rba_atomic_commit(struct rba_atomic *a);
/*
 * Closes and removes the temporary.  Safe on an idle struct: after
 * RBA_ATOMIC_INIT, a failed open, commit, or abort.
 */
void rba_atomic_abort(struct rba_atomic *a);
/*
 * Removes stale temporaries "<path>.tmp-<pid>-*" whose pid is not alive.
 * Best effort; returns how many were removed.
 */
int rba_atomic_sweep(const char *path);

/*
 * Writes a whole buffer to path atomically (open, write, commit) with
 * mode as rba_atomic_open takes it.  0 or errno; path is untouched on
 * error.
 */
int rba_file_write_atomic(const char *path, const void *p, size_t n, int mode);

/* fsyncs the directory containing path.  0 or errno. */
int rba_fsync_parent(const char *path);

#endif
