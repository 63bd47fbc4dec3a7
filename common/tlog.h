/*
 * tlog.h - the Merkle tree of a transparency log, RFC 6962 (and RFC
 * 9162 section 2.1) as Go's golang.org/x/mod/sumdb/tlog computes it:
 * the same hashes, the same stored-hash layout and the same proofs, so
 * that either side verifies what the other proves.
 *
 *   leaf hash      SHA-256(0x00 || record)
 *   interior hash  SHA-256(0x01 || left || right)
 *   the tree of n records (n >= 1): the leaf hash when n = 1, else the
 *   interior hash of the tree of the first k records and the tree of
 *   the other n - k, k the largest power of two below n; the tree of
 *   no record hashes to 32 zero bytes.
 *
 * Stored hashes.  A log keeps, as each record n (0-based) is appended,
 * its leaf hash and the hash of every complete subtree that record
 * completes (tlog_stored_hashes): the hash of level L and index k (the
 * subtree of the 2^L records from k * 2^L) is kept at the stored index
 * tlog_stored_index(L, k), a dense order in which each record appends
 * its hashes after those of the records before it (Crosby and Wallach,
 * "Efficient Data Structures for Tamper-Evident Logging", 3.3).  Every
 * tree hash and proof below reads at most a few times log2(n) of them
 * through a tlog_reader, so a proof costs O(log n) reads whatever the
 * log's size.
 *
 * Proofs are lists of at most TLOG_PROOF_MAX hashes in RFC 6962 order:
 * the inclusion proof ("audit path") of record n in the tree of size t,
 * and the consistency proof that the tree of size t holds the tree of
 * size n as a prefix.
 */
#ifndef RBA_TLOG_H
#define RBA_TLOG_H

#include <stddef.h>
#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"

/* Hashes in any proof of a tree of at most 2^63 records. */
#define TLOG_PROOF_MAX 128
/* Stored hashes one tree hash or proof reads, at most. */
#define TLOG_READ_MAX 256

/*
 * Reads the stored hashes of idx[0..n) (in increasing order) into
 * out[0..n).  Returns 0 or an error (with d filled), which the caller
 * returns unchanged.
 */
typedef int (*tlog_reader)(void *ctx, const uint64_t *idx, size_t n,
			   struct rba_digest *out, struct rba_detail *d);

/* SHA-256(0x00 || rec[0..n)). */
void tlog_leaf_hash(const void *rec, size_t n, struct rba_digest *out);

/* SHA-256(0x01 || l || r). */
void tlog_node_hash(const struct rba_digest *l, const struct rba_digest *r,
		    struct rba_digest *out);

/* The stored index of the hash of level and index k (Go's
 * StoredHashIndex). */
uint64_t tlog_stored_index(int level, uint64_t k);

/* The inverse: level and k of a stored index (SplitStoredHashIndex). */
void tlog_split_index(uint64_t index, int *level, uint64_t *k);

/* The number of stored hashes of a log of n records (StoredHashCount). */
uint64_t tlog_stored_count(uint64_t n);

/*
 * The hashes record n (0-based) adds when it is appended, with leaf hash
 * leaf, into out (room for 64 hashes); *nout their count (1 + the
 * trailing one bits of n).  They go at stored indexes
 * tlog_stored_index(0, n) onward, in order.  Reads the stored hashes of
 * the subtrees the record completes.  0 or the reader's error.
 */
int tlog_stored_hashes(uint64_t n, const struct rba_digest *leaf,
		       tlog_reader r, void *ctx, struct rba_digest out[64],
		       size_t *nout, struct rba_detail *d);

/* The root of the tree of the first n records.  0 or the reader's
 * error. */
int tlog_tree_hash(uint64_t n, tlog_reader r, void *ctx,
		   struct rba_digest *out, struct rba_detail *d);

/*
 * The inclusion proof of record n in the tree of size t (n < t) into
 * proof[0..*np).  0; RBA_E_RANGE (n >= t); the reader's error.
 */
int tlog_prove_record(uint64_t t, uint64_t n, tlog_reader r, void *ctx,
		      struct rba_digest proof[TLOG_PROOF_MAX], size_t *np,
		      struct rba_detail *d);

/*
 * The consistency proof that the tree of size t holds the tree of size
 * n (1 <= n <= t) as a prefix, into proof[0..*np).  0; RBA_E_RANGE; the
 * reader's error.
 */
int tlog_prove_tree(uint64_t t, uint64_t n, tlog_reader r, void *ctx,
		    struct rba_digest proof[TLOG_PROOF_MAX], size_t *np,
		    struct rba_detail *d);

/*
 * Whether p[0..np) proves that the tree of size t with root th has
 * record n with leaf hash h (Go's CheckRecord).  0 when it does;
 * RBA_E_BADSIG when it does not; RBA_E_RANGE when n >= t.
 */
int tlog_check_record(const struct rba_digest *p, size_t np, uint64_t t,
		      const struct rba_digest *th, uint64_t n,
		      const struct rba_digest *h);

/*
 * Whether p[0..np) proves that the tree of size t with root th holds
 * the tree of size n with root h as a prefix (Go's CheckTree).  0 when
 * it does; RBA_E_BADSIG when not; RBA_E_RANGE unless 1 <= n <= t.
 */
int tlog_check_tree(const struct rba_digest *p, size_t np, uint64_t t,
		    const struct rba_digest *th, uint64_t n,
		    const struct rba_digest *h);

#endif
