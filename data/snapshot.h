/*
 * snapshot.h - training data kept by digest (doc/design.md sections 5.5, 6).
 *
 * A snapshot is the exact bytes of a CSV file, stored as a content-
 * addressed blob.  It is parsed before it is stored (a malformed file is
 * refused and nothing is written), in the same single pass that hashes
 * and compresses it, so memory does not grow with the file.  What the
 * parse found (rows, column names, inferred types) is kept beside the
 * bytes as the blob's meta record:
 *   u8 'S', u8 1, u64 rows, u32 ncols, ncols x (u32 len, name, u8 type)
 */
#ifndef RBA_SNAPSHOT_H
#define RBA_SNAPSHOT_H

#include <stdint.h>
#include <stdio.h>

#include "common/digest.h"
#include "common/rba.h"
#include "data/csv.h"
#include "store/store.h"

/* Bytes of a snapshot a rebuild loads whole, from the store or a file:
 * the one cap for register, audit, train, sweep, compare and gate. */
#define SNAPSHOT_MAX_LOAD (2ull << 30)

struct snapshot_info {
	struct store_blob_info blob; /* digest, size, stored size, name, added */
	uint64_t rows;
	size_t ncols;
	char **names;		 /* ncols */
	enum csv_coltype *types; /* ncols */
};

/* Frees what info owns; NULL allowed. */
void snapshot_info_release(struct snapshot_info *info);

/*
 * Parses and stores the file at path ("-" for standard input) in write
 * transaction txn, under name (NULL: the file's base name).  *digest gets
 * its SHA-256, *existed (may be NULL) whether the same bytes were already
 * stored.  Errors: the CSV errors of csv_validate (d: FILE:LINE:COL), an
 * errno opening or reading, and the store's errors (RBA_E_LIMIT when the
 * map is full).  On error the caller aborts txn: nothing is stored.
 */
int snapshot_add(struct store_txn *txn, const char *path, const char *name,
		 struct rba_digest *digest, int *existed,
		 struct rba_detail *d);

/*
 * snapshot_add in a write transaction of its own on st, committed.  An
 * input that is not a regular file (standard input from a pipe, a FIFO)
 * is first read whole into a temporary file (rba_input_spool), before
 * the store's write lock is taken, so a slow sender holds back no other
 * writer.  The map is grown to the file's size before the write begins;
 * a file that outgrows that (it grew while read) is tried again, twice
 * at most, with more room.  Standard input that is a regular file is
 * read once, as it is: a full map is then RBA_E_LIMIT with a reason that
 * says to name the file.  Errors as snapshot_add, rba_input_spool's, and
 * store_txn_begin's and store_txn_commit's; nothing is stored on error.
 */
int snapshot_add_store(struct store *st, const char *path, const char *name,
		       struct rba_digest *digest, int *existed,
		       struct rba_detail *d);

/*
 * The snapshot a digest or unique hex prefix names.  RBA_E_NOTFOUND when
 * none (or the blob is not a snapshot), RBA_E_EXISTS when ambiguous,
 * RBA_E_CORRUPT when its meta record is malformed, and the store's errors.
 */
int snapshot_resolve(struct store_txn *txn, const char *prefix,
		     struct snapshot_info *out, struct rba_detail *d);
int snapshot_info_get(struct store_txn *txn, const struct rba_digest *digest,
		      struct snapshot_info *out, struct rba_detail *d);

/* Calls cb for each snapshot, sorted by digest; info borrowed. */
int snapshot_list(struct store_txn *txn,
		  int (*cb)(void *ctx, const struct snapshot_info *info),
		  void *ctx, struct rba_detail *d);

/*
 * Writes the snapshot's exact bytes to out, an output the caller opened
 * (common/fileio.h) and commits or aborts after: to its temporary, put in
 * place only by the commit, so on RBA_E_TAMPERED no output file appears;
 * or, when out is direct (a device, a FIFO, "-"), only after a first
 * pass has verified the whole content.  0; RBA_E_NOTFOUND;
 * RBA_E_TAMPERED; the store's errors; out's write error (out->err set,
 * d naming out's path).
 */
struct rba_output;
int snapshot_export_output(struct store_txn *txn,
			   const struct rba_digest *digest,
			   struct rba_output *out, struct rba_detail *d);
/*
 * snapshot_export_output to out_path opened with RBA_OUTPUT_FORCE ("-"
 * is dash; NULL: refused), then committed: an existing regular file is
 * replaced, never a symbolic link, a device or a FIFO (written as they
 * are).  Its errors, and those of rba_output_open and rba_output_commit.
 */
int snapshot_export(struct store_txn *txn, const struct rba_digest *digest,
		    const char *out_path, FILE *dash, struct rba_detail *d);

/*
 * Loads the whole snapshot, verified, into malloc'd memory (caller frees;
 * NUL-terminated), for training.  RBA_E_LIMIT over SNAPSHOT_MAX_LOAD.
 */
int snapshot_load(struct store_txn *txn, const struct rba_digest *digest,
		  uint8_t **p, size_t *n, struct rba_detail *d);

#endif
