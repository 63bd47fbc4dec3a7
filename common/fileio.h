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
 * bytes fails with RBA_E_LIMIT, a regular file before anything is read,
 * and d->reason names the file, its size when known and the limit
 * ("'m.json' has 629145600 bytes, over the limit of 536870912 bytes
 * (512 MiB) for this input").  Returns 0, RBA_E_LIMIT, RBA_E_NOMEM or an
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

/*
 * Renames from to to unless to exists, never replacing a file:
 * renameat2's RENAME_NOREPLACE, else link(2) and unlink(2) of from,
 * else, on a file system with neither, a last look and a rename.  0,
 * EEXIST or an errno; from is gone on success.
 */
int rba_rename_new(const char *from, const char *to);

/*
 * Input read whole before a command waits on anything: fd (standard
 * input, or a file opened by name) when it is not a regular file (a
 * pipe, a FIFO, a terminal, a socket) is copied to its end into an
 * unlinked temporary file in $TMPDIR (/tmp when unset), so that whoever
 * is slow to send it holds nobody else back (the store's write lock is
 * taken only after).  *out is the temporary, at its start, the caller's
 * to close; or -1 when fd is a regular file, to be read as it is (*size
 * then its size).  *size: the bytes.  0; RBA_E_LIMIT over max bytes; an
 * errno reading fd (d->file name) or writing the temporary (ENOSPC: d's
 * reason names the directory).  fd is read, never closed.
 */
#define RBA_SPOOL_MAX ((uint64_t)64 << 30) /* 64 GiB */
/*
 * The one temporary file of the tool: an unlinked file in $TMPDIR (/tmp
 * when unset or empty), named rebuild-audit-WHAT.XXXXXX while it has a
 * name, not inherited by programs the tool runs.  *fd gets it, open for
 * reading and writing.  0 or an errno, d's reason naming the directory.
 */
int rba_tmpfile(const char *what, int *fd, struct rba_detail *d);
/* $TMPDIR, or /tmp when unset or empty: where temporary files go. */
const char *rba_tmpdir(void);
int rba_input_spool(int fd, const char *name, uint64_t max, int *out,
		    uint64_t *size, struct rba_detail *d);
/*
 * rba_input_spool of path ("-": standard input).  A path that does not
 * open is left to the reader that opens it later, which says why: 0 with
 * *out -1.
 */
int rba_input_spool_path(const char *path, uint64_t max, int *out,
			 uint64_t *size, struct rba_detail *d);

/*
 * An output a user names (OUT, -o FILE, --record FILE): the one rule for
 * every file written at a path the command line gave.  By what the path
 * is (lstat) when rba_output_open looks:
 *
 *   nothing: written to a temporary beside it (struct rba_atomic) and put
 *       in place at commit by a rename that refuses an existing name
 *       (renameat2 RENAME_NOREPLACE; link and unlink where a file system
 *       lacks it), so a file that appears meanwhile is never replaced:
 *       commit fails with RBA_E_EXISTS and leaves it as it is.
 *   a regular file: RBA_E_EXISTS ("exists (use --force to replace it)"),
 *       unless flags has RBA_OUTPUT_FORCE: then replaced at commit by a
 *       rename, provided the name still holds a regular file (or none).
 *   a character device or a FIFO, or a symbolic link to one (/dev/stdout):
 *       opened without O_CREAT or O_TRUNC and written directly, never
 *       renamed over, --force or not; /dev/full gives ENOSPC.  Nothing
 *       written can be taken back: write only what was verified
 *       (rba_output_direct says which kind o is).
 *   "-": the stream dash, written directly and flushed (not closed) at
 *       commit; with dash NULL, "-" is refused with RBA_E_USAGE (the
 *       caller's standard output carries its report).  A failed commit
 *       or an abort drops what is still buffered in dash and clears its
 *       error, so that the failure is reported once (by the caller, from
 *       d), not again when the caller flushes its standard output.
 *   anything else, --force or not: RBA_E_EXISTS for a symbolic link to
 *       anything else (never replaced by a file, never written through),
 *       a block device or a socket; EISDIR for a directory.
 *
 * Every failure of open, write and commit fills d (NULL allowed): d->file
 * the path, d->reason the text a diagnostic prints after it ("exists
 * (use --force to replace it)", "no space left on device", ...), line 0.
 * Life of a struct rba_output (caller-owned, usually on the stack):
 * RBA_OUTPUT_INIT (idle; abort does nothing), rba_output_open, writes,
 * then exactly one of rba_output_commit and rba_output_abort, after
 * which it is idle again.  A failed open leaves it idle.
 */
enum {
	RBA_OUTPUT_FORCE = 1, /* --force: an existing regular file is replaced */
};

struct rba_output {
	struct rba_atomic a; /* the temporary, when there is one */
	char path[4096];
	int fd;		     /* direct: the device or FIFO, or -1 */
	FILE *fp;	     /* direct: dash, or a stream on fd; NULL */
	int kind;	     /* 0 idle, 1 temporary, 2 device or FIFO, 3 dash */
	int flags;	     /* RBA_OUTPUT_* */
	int err;	     /* the first write error, sticky; 0 */
};

#define RBA_OUTPUT_INIT { .a = RBA_ATOMIC_INIT, .fd = -1 }

/*
 * Opens path as an output under the rule above (mode as rba_atomic_open
 * takes it, for a new file; flags RBA_OUTPUT_*; dash the stream "-"
 * means, or NULL).  0; RBA_E_EXISTS; RBA_E_USAGE ("-" without dash, an
 * empty path); EISDIR; ENAMETOOLONG; an errno of open(2) (ENOENT: no such
 * directory, EACCES, ...).  A FIFO blocks until a reader opens it, as a
 * shell's redirection does.
 */
int rba_output_open(struct rba_output *o, const char *path, int mode,
		    int flags, FILE *dash, struct rba_detail *d);
/*
 * The rule for an output that can only be a file put in place by a
 * rename (a pair such as evidence and its signature), without opening
 * anything: 0 when nothing is at path, or a regular file and flags has
 * RBA_OUTPUT_FORCE; otherwise what rba_output_open would refuse, with
 * the same d (RBA_E_EXISTS "exists (use --force to replace it)", "is a
 * symbolic link ...", EISDIR "is a directory"), and RBA_E_EXISTS for a
 * character device or a FIFO too ("is a device or a FIFO (this output is
 * a file)"), which such an output never writes to.  An errno of lstat
 * other than ENOENT.  Check again just before the rename (the path may
 * change meanwhile), and place a new file with link(2), which refuses
 * an existing name.
 */
int rba_output_check(const char *path, int flags, struct rba_detail *d);
/* 1 when o writes straight to its target (a device, a FIFO, dash). */
int rba_output_direct(const struct rba_output *o);
/*
 * A stdio stream on the output (the same on every call), or NULL with
 * errno set.  Owned by o: never fclose() it.
 */
FILE *rba_output_stdio(struct rba_output *o);
/*
 * Writes all n bytes (through the stream once rba_output_stdio made one).
 * 0 or an errno, which also stays in o->err (commit returns it).
 */
int rba_output_write(struct rba_output *o, const void *p, size_t n);
/* rba_output_write with the signature of a store read callback (ctx o). */
int rba_output_sink(void *o, const uint8_t *p, size_t n);
/*
 * Finishes the output: the first write error, if any, fails it (and
 * aborts); else flush, and for a temporary fsync, close, the rename of
 * the rule and the directory's fsync.  0; RBA_E_EXISTS (a file appeared
 * at the path meanwhile, or something not a regular file replaced it:
 * left as it is); an errno (ENOSPC, EIO, EPIPE, ...).  On error the
 * temporary is removed.  d as above.  o is idle after.
 */
int rba_output_commit(struct rba_output *o, struct rba_detail *d);
/* Closes, removes the temporary; dash is left open.  Safe when idle. */
void rba_output_abort(struct rba_output *o);
/*
 * The whole of p written to path under the rule (open, write, commit).
 * 0 or an error of those three, with d filled.
 */
int rba_file_write_output(const char *path, const void *p, size_t n,
			  int mode, int flags, FILE *dash,
			  struct rba_detail *d);

#endif
