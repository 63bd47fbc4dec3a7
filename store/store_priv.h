/*
 * store_priv.h - what the files of store/ share and nobody else sees:
 * the handle structs, the record tags and layouts, and the helpers for
 * LMDB errors, sealed records and compressed chunks.
 *
 * Every value starts with a type tag and a format-version byte.  Layouts
 * (little-endian; lstr = u32 length then bytes; seal = SHA-256 of all the
 * bytes before it):
 *
 * meta (keys are ASCII names), never sealed so that any later tool can
 * read the schema:
 *   "schema"       01 01 u32 schema                (layout fixed forever)
 *   "store_id"     02 01 id[16]
 *   "created"      03 01 i64 time
 *   "history_head" 04 01 u64 last id, digest[32]
 *   "meta_seal"    05 01 SHA-256(schema, store_id, created values)
 *   "mapsize"      06 01 u64 the map size at the last commit (what LMDB
 *                  writes into its meta page; rewritten when it changes)
 *                  (stores made before it have none)
 * blobs:
 *   digest[32]                    -> 10 01 digest[32] u8 kind u64 size
 *                                    u32 chunks u64 stored i64 added
 *                                    lstr name lstr meta seal
 *   digest[32] u32be chunk        -> chunk record, tag 11, aux 0
 *   ff "tmp" u64be serial u32be n -> chunk record of a blob being written
 *                                    (never committed)
 * versions:
 *   name                          -> 20 02 lstr name i64 registered
 *                                    lstr pins lstr env artifact[32]
 *                                    snapshot[32] u8 has_policy
 *                                    lstr policy policy_digest[32]
 *                                    lstr meta seal
 *                                    (format 02: the caller's meta kept
 *                                    with the version, possibly empty;
 *                                    format 01, as written before, ends
 *                                    at policy_digest and is still read
 *                                    and written: store_version.has_meta)
 * samples (all keys of a version share the prefix u8 len, version):
 *   prefix 00                     -> 30 01 lstr version u64 cases
 *                                    u32 chunks u64 size u64 stored
 *                                    digest[32] chunk_list[32]
 *                                    u8 has_policy policy[32] i64 added
 *                                    lstr columns seal
 *   prefix 01 u32be chunk         -> chunk record, tag 31, aux = cases
 *   prefix 02 case id             -> 32 01 u32 chunk  (the case index)
 *   prefix 03                     -> 33 01 then digest[32] of each chunk,
 *                                    in chunk order (the chunk list;
 *                                    unsealed: its bytes after 33 01 hash
 *                                    to chunk_list in the sealed record
 *                                    at prefix 00)
 * history (unsealed: digest is the record's chain digest, store.h):
 *   u64be id                      -> 40 01 i64 time prev[32] digest[32]
 *                                    lstr version lstr record
 * runs:
 *   id                            -> 50 01 lstr id lstr record seal
 * tlog (the log: an RFC 6962 Merkle tree over the history's records,
 * store_tlog.c; a database stores made before it lack until their
 * first history append, which the named databases above do not count):
 *   u64be stored index            -> 60 01 hash[32]  (common/tlog.h:
 *                                    the leaf hash or the hash of a
 *                                    complete subtree, at
 *                                    tlog_stored_index(level, k))
 *   "size"                        -> 61 01 u64 records the stored
 *                                    hashes cover (a prefix of the
 *                                    history; the rest are added by the
 *                                    next append)
 *
 * A chunk record: its tag (11 or 31), format 02, sha256(plaintext)[32],
 * u32 plaintext size, u32 aux, then one zstd frame (content size and
 * checksum in its header), then the seal: SHA-256 of every byte before
 * it.  A decoder may accept bytes that are not the ones written and
 * still give the same plaintext; the seal makes any change to the stored
 * record visible.  Format 01 chunks (written before the seal) end with
 * the frame.
 *
 * chunk_list in a sample record is SHA-256 over the chunks' digests in
 * order, which the chunk list record (prefix 03) holds, so one chunk can
 * be checked against the sealed record with one more read and without
 * the others' frames.
 */
#ifndef RBA_STORE_PRIV_H
#define RBA_STORE_PRIV_H

#include <lmdb.h>
#include <pthread.h>
#include <stdint.h>
#include <zstd.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "store/store.h"

#define STORE_FORMAT 1 /* format-version byte of every record */
/* ... but chunk records, which since format 2 end with a seal over the
 * whole record (the frame's bytes too, not only what they decode to);
 * format 1 chunks (no seal) are still read. */
#define STORE_CHUNK_FORMAT 2
/* ... and version records, which since format 2 keep the caller's meta
 * (format 1 records, without it, are still read and written). */
#define STORE_VERSION_FORMAT 2

enum store_tag {
	TAG_META_SCHEMA = 0x01,
	TAG_META_ID = 0x02,
	TAG_META_CREATED = 0x03,
	TAG_META_HEAD = 0x04,
	TAG_META_SEAL = 0x05,
	TAG_META_MAPSIZE = 0x06,
	TAG_BLOB_INFO = 0x10,
	TAG_BLOB_CHUNK = 0x11,
	TAG_VERSION = 0x20,
	TAG_SAMPLE_INFO = 0x30,
	TAG_SAMPLE_CHUNK = 0x31,
	TAG_SAMPLE_CASE = 0x32,
	TAG_SAMPLE_LIST = 0x33,
	TAG_SAMPLE_DEAD = 0x34,
	TAG_HISTORY = 0x40,
	TAG_RUN = 0x50,
	TAG_TLOG_HASH = 0x60,
	TAG_TLOG_SIZE = 0x61,
};

enum store_db {
	DB_META,
	DB_BLOBS,
	DB_VERSIONS,
	DB_SAMPLES,
	DB_HISTORY,
	DB_RUNS,
	DB_COUNT
};

extern const char *const store_db_names[DB_COUNT];

#define STORE_ID_LEN 16
#define CHUNK_HDR (2 + RBA_DIGEST_LEN + 4 + 4)
#define SEAL_LEN RBA_DIGEST_LEN
#define BLOB_KEY_LEN RBA_DIGEST_LEN
#define BLOB_CHUNK_KEY_LEN (RBA_DIGEST_LEN + 4)
#define BLOB_TMP_KEY_LEN (4 + 8 + 4)
#define SAMPLE_KEY_MAX (1 + STORE_VERSION_NAME_MAX + 1 + 4 + 1 + STORE_CASE_ID_MAX)

/*
 * Keys of the samples database, after the version's length byte and
 * name: SK_INFO, the sample record; then the records of a generation of
 * the sample: generation 0 as SK_CHUNK + chunk, SK_CASE + id and
 * SK_LIST, any other g as SK_GEN + g + the same (g big-endian).  The
 * sample record names its generation; SK_DEAD + g marks the records of
 * g as no sample's (a write that did not finish, a sample replaced), to
 * be deleted (store_sample_clear).  SK_LIST: every chunk's digest in
 * order, so one chunk is checked against the sealed sample record with
 * one read.
 */
enum sample_key_kind {
	SK_INFO = 0,
	SK_CHUNK = 1,
	SK_CASE = 2,
	SK_LIST = 3,
	SK_GEN = 0x10,
	SK_DEAD = 0x20
};

struct store {
	MDB_env *env;
	MDB_dbi dbi[DB_COUNT];
	int read_only;
	int ntxn;	/* open transactions of this handle */
	int writing;	/* one of them is a write transaction */
	uint64_t slack; /* free map room a write transaction starts with */
	char path[4096];
	char id_hex[2 * STORE_ID_LEN + 1];
	uintptr_t map_lo, map_hi; /* where the data file is mapped, once known */
	int wlock_fd;	/* STORE_WRITE_LOCK, once opened (wlock_open) */
	int wlock_open;
	int wlocked;	/* this handle holds it */
	/* The log's database (store_tlog.c), once it exists: stores made
	 * before it have none until their first history append. */
	MDB_dbi tlog_dbi;
	int has_tlog;
};

/* Writers hang off their transaction so abort can detach them. */
struct store_wlink {
	struct store_wlink *next;
	struct store_txn *txn; /* NULL once the transaction ended */
};

struct store_txn {
	struct store *s;
	MDB_txn *t;
	int write;
	int err;	  /* first error that failed the transaction */
	char why[384];	  /* its reason */
	uint64_t serial;  /* for temporary blob keys */
	struct store_wlink *writers;
	MDB_dbi tlog_dbi; /* the log's database, created by this write */
	int tlog_new;	  /* ... and not yet the store's (until commit) */
};

/* A view of a decoded chunk record (pointers into the LMDB value). */
struct store_chunk {
	const uint8_t *digest;
	uint32_t size;
	uint32_t aux;
	const uint8_t *frame;
	size_t frame_len;
	/* The whole record and whether it ends in a seal (format 2); the
	 * seal is checked by store_chunk_split, or later by
	 * store_chunk_seal_ok when split with store_chunk_split_unsealed. */
	const uint8_t *rec;
	size_t rec_len;
	int sealed;
};

/*
 * A helper thread that feeds a hasher with bytes the caller is reading
 * too, so the two SHA-256 passes over content (per chunk and whole) run
 * side by side.  Without a thread (small inputs, or pthread_create
 * failing) the work is done inline; the results are the same.
 */
struct store_hashjob {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int spawned; /* the thread exists (read by the caller only) */
	int state;   /* HJ_IDLE, HJ_BUSY or HJ_QUIT, under mu */
	struct rba_hasher *h;
	const uint8_t *p;
	size_t n;
	const struct store_chunk *seal; /* a record whose seal to check */
	int seal_bad; /* set when one did not hold; read after a wait */
};

/*
 * A helper thread that decompresses chunk records in turn and then
 * hashes each one's plaintext into a running hasher and checks the
 * record's seal (store_sample_stream): the caller submits chunk i + 1
 * as soon as chunk i is out, and uses chunk i while the helper hashes
 * it and decompresses the next.  One job may wait beside the one in
 * hand.
 */
struct store_inflate_job {
	const struct store_chunk *c;
	uint8_t *out;		/* c->size bytes */
	int state;		/* IJ_QUEUED, IJ_OUT (rc set), IJ_DONE */
	int rc;
	char why[200];
};

struct store_inflater {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	ZSTD_DCtx *dctx;
	struct rba_hasher *whole;
	struct store_inflate_job *pending, *cur;
	int quit;
	int seal_bad; /* a record's seal did not hold; read after a drain */
	/* work for the waits (store_inflater_start) */
	int (*idle)(void *ctx, int waiter);
	void *idle_ctx;
	int idle_done;
};

/* A compressor for chunk records. */
struct store_zc {
	ZSTD_CCtx *cctx;
	uint8_t *out;
	size_t cap;
};

/* ---- errors and transactions (store.c) ---- */

/*
 * store_open with one more choice: nolock opens the environment with
 * MDB_NOLOCK (no lock file is made or used; for a read-only snapshot that
 * nobody writes, store_snapshot.c).  Same errors as store_open.
 */
int store_open_env(const char *path, int read_only, int nolock,
		   struct store **out, struct rba_detail *d);

/*
 * Maps an LMDB status to an rba code and fills d: MDB_MAP_FULL is
 * RBA_E_LIMIT, a positive errno stays, corruption is RBA_E_CORRUPT,
 * the rest RBA_E_STORE.  what says what was being done.
 */
int store_mdb_fail(struct rba_detail *d, int rc, const char *what);
/*
 * store_mdb_fail for what LMDB wrote to the disk at path (the store's
 * directory, or a copy's): an errno rc is said with the place, "writing
 * the store '<path>': <reason>" ("writing '<path>'" when store is 0),
 * and LMDB's EIO for a short write is ENOSPC when the file system at path
 * has no room left, as a disk that filled up.  Any other rc as
 * store_mdb_fail(d, rc, what).  Returns the status.
 */
int store_write_fail(struct rba_detail *d, int rc, const char *what,
		     const char *path, int store);
/* Fails txn with err (keeps the first) and fills d. */
int store_txn_fail(struct store_txn *txn, struct rba_detail *d, int err);
/* The first error of a failed txn (copied into d), or 0. */
int store_txn_check(struct store_txn *txn, struct rba_detail *d);
/* 0 or RBA_E_USAGE for a read transaction; also store_txn_check. */
int store_txn_writable(struct store_txn *txn, struct rba_detail *d);
void store_txn_link(struct store_txn *txn, struct store_wlink *l);
void store_txn_unlink(struct store_wlink *l);
MDB_dbi store_dbi(struct store_txn *txn, enum store_db db);

/* mdb_put that fails txn on error (with what in the reason). */
int store_put(struct store_txn *txn, enum store_db db, const void *k,
	      size_t klen, const void *v, size_t vlen, unsigned flags,
	      const char *what, struct rba_detail *d);
/* mdb_get: 0, RBA_E_NOTFOUND (d untouched) or an error (d filled). */
int store_get(struct store_txn *txn, enum store_db db, const void *k,
	      size_t klen, MDB_val *v, struct rba_detail *d);
/* mdb_del: 0, RBA_E_NOTFOUND, or fails txn. */
int store_del(struct store_txn *txn, enum store_db db, const void *k,
	      size_t klen, const char *what, struct rba_detail *d);

/* ---- records (store.c) ---- */

/* Starts a record: tag and format byte. */
void store_rec_start(struct rba_buf *b, uint8_t tag);
/* Appends the seal over everything in b. */
void store_rec_seal(struct rba_buf *b);
/*
 * Checks a sealed record's tag, format and seal and points c at the body
 * (between the format byte and the seal).  0, RBA_E_CORRUPT or
 * RBA_E_TAMPERED; d gets "<what>: ..." on error.
 */
int store_rec_open_sealed(const MDB_val *v, uint8_t tag,
			  struct rba_cursor *c, const char *what,
			  struct rba_detail *d);
/*
 * store_rec_open_sealed for a record whose format byte may be any of
 * 1..max_format: *format gets it.
 */
int store_rec_open_sealed_format(const MDB_val *v, uint8_t tag,
				 uint8_t max_format, uint8_t *format,
				 struct rba_cursor *c, const char *what,
				 struct rba_detail *d);
/* Same for an unsealed record. */
int store_rec_open(const MDB_val *v, uint8_t tag, struct rba_cursor *c,
		   const char *what, struct rba_detail *d);
/* Copies an lstr from c into a malloc'd C string (NULL on failure). */
char *store_cursor_cstr(struct rba_cursor *c, size_t max);
/* Checks a name: non-empty, <= max bytes.  0 or RBA_E_USAGE/LIMIT. */
int store_name_check(const char *name, size_t max, const char *what,
		     struct rba_detail *d);
int64_t store_now(void);
/* A meta record's tag when k, v is a known meta record of its size, -1
 * when known but malformed, 0 when unknown. */
int store_meta_known(const MDB_val *k, const MDB_val *v);
/* The digest the "meta_seal" record holds, computed from t: 0 or an
 * LMDB status. */
int store_meta_seal(MDB_txn *t, MDB_dbi meta, struct rba_digest *out);

/* ---- LMDB's bookkeeping (store_meta.c) ---- */

/* Records env's map size in meta (in write transaction t): an LMDB
 * status. */
int store_mapsize_record(MDB_txn *t, MDB_dbi meta, MDB_env *env);
/*
 * Checks LMDB's meta pages and page count against what LMDB keeps
 * consistent (store_meta.c); called by store_open.  0; RBA_E_CORRUPT
 * ("damaged: ..."); RBA_E_NOMEM; an errno; RBA_E_STORE.
 */
int store_lmdb_check(struct store *s, struct rba_detail *d);

/* ---- chunks (store_chunk.c) ---- */

int store_zc_init(struct store_zc *z, struct rba_detail *d);
void store_zc_release(struct store_zc *z);
/*
 * Builds a chunk record of n (1..STORE_CHUNK_MAX) plaintext bytes into
 * z->out, *len its size; *digest gets the plaintext's SHA-256.
 */
int store_chunk_encode(struct store_zc *z, uint8_t tag, const uint8_t *p,
		       size_t n, uint32_t aux, struct rba_digest *digest,
		       size_t *len, struct rba_detail *d);
/* Splits a chunk record; 0 or -1 when it is malformed. */
int store_chunk_split(const MDB_val *v, uint8_t tag, struct store_chunk *c);
/*
 * store_chunk_split without checking the seal (everything else is
 * checked); store_chunk_seal_ok checks it later: 1 when it holds or the
 * record has none.
 */
int store_chunk_split_unsealed(const MDB_val *v, uint8_t tag,
			       struct store_chunk *c);
int store_chunk_seal_ok(const struct store_chunk *c);
/*
 * Decompresses a split chunk into out (room for STORE_CHUNK_MAX bytes)
 * after checking the frame's declared size, and checks the plaintext's
 * SHA-256.  With whole non-NULL the plaintext is also fed to whole (on
 * helper j) once decompressed.  0, or RBA_E_TAMPERED with the problem
 * written into why.
 */
int store_chunk_inflate(ZSTD_DCtx *dctx, const struct store_chunk *c,
			uint8_t *out, struct store_hashjob *j,
			struct rba_hasher *whole, char *why, size_t whylen);
/*
 * store_chunk_inflate without the plaintext's SHA-256: the frame checks
 * and the decompression only, for a reader that hashes the whole
 * content once and checks each chunk only when that fails
 * (store_sample_stream).
 */
int store_chunk_decompress(ZSTD_DCtx *dctx, const struct store_chunk *c,
			   uint8_t *out, char *why, size_t whylen);
ZSTD_DCtx *store_dctx_new(void);

/*
 * Called after a long sequential read has used the value [p, p + n) read
 * in txn: unmaps the pages of the read-only file map so the read does not
 * keep every page it touched resident (they come back from the page
 * cache if read again).  In a write transaction, whose values may be its
 * own dirty copies, it does nothing.
 */
void store_map_forget(struct store_txn *txn, const void *p, size_t n);

/*
 * store_map_forget for a stream of values, one call per value: adds n to
 * *used and forgets (then zeroes *used) only once STORE_FORGET_BYTES have
 * been used since.  A drop costs a walk of the map's page tables and, on
 * every other CPU running one of this process's threads, a TLB flush:
 * done after each of a sample's chunks, it was 4 % of an audit's pass.
 */
#define STORE_FORGET_BYTES (4u << 20)
void store_map_forget_used(struct store_txn *txn, size_t *used,
			   const void *p, size_t n);

void store_hashjob_init(struct store_hashjob *j);
/* Starts rba_hasher_update(h, p, n); p must stay unchanged until wait. */
void store_hashjob_start(struct store_hashjob *j, struct rba_hasher *h,
			 const uint8_t *p, size_t n);
/*
 * The same, and then store_chunk_seal_ok(seal) (seal and its record
 * unchanged until wait): a seal that does not hold sets j->seal_bad,
 * which stays set; the caller reads it after store_hashjob_wait.
 */
void store_hashjob_start_sealed(struct store_hashjob *j, struct rba_hasher *h,
				const uint8_t *p, size_t n,
				const struct store_chunk *seal);
/* Waits for the job started last (no-op when none). */
void store_hashjob_wait(struct store_hashjob *j);
/* Stops the thread; j may be reused after store_hashjob_init. */
void store_hashjob_release(struct store_hashjob *j);

/*
 * Starts f's thread, which hashes into whole.  0, or -1 (no thread: the
 * caller decompresses and hashes itself).  idle (NULL: none) is work
 * for the waits, one short step a call: the thread calls
 * idle(idle_ctx, 0) while no job is queued (a job queued meanwhile
 * waits for the step to end), and store_inflater_wait_out calls
 * idle(idle_ctx, 1) while its job is not out.  idle returns 1 when a
 * step was made and more is left, 2 (to a waiter only) when the other
 * thread holds the work (the waiter then sleeps), and 0 when nothing is
 * left (it is not called again).  What is left when the stream ends is
 * the caller's, after store_inflater_stop.
 */
int store_inflater_start(struct store_inflater *f, struct rba_hasher *whole,
			 int (*idle)(void *ctx, int waiter), void *idle_ctx);
/* Queues j (waiting while another is queued and not yet taken). */
void store_inflater_submit(struct store_inflater *f, struct store_inflate_job *j);
/* Waits until j is decompressed: its error (0; RBA_E_TAMPERED, j->why
 * saying why), as store_chunk_decompress gives it. */
int store_inflater_wait_out(struct store_inflater *f, struct store_inflate_job *j);
/* Waits until every job submitted is hashed (or failed). */
void store_inflater_drain(struct store_inflater *f);
/* Drops a job queued and not taken, waits for the one in hand, stops. */
void store_inflater_stop(struct store_inflater *f);

/*
 * Commits what write transaction txn holds so far and goes on in a new
 * LMDB transaction, still holding the store's write lock: a long write
 * in steps, so LMDB's dirty pages stay bounded.  What a crash between
 * two steps leaves must make sense on its own (the sample writer marks
 * its records dead until the last step names them).  0; any error
 * fails txn (it can then only be aborted).
 */
int store_txn_checkpoint(struct store_txn *txn, struct rba_detail *d);
/*
 * Drops this process's view of the data file's pages (what reads
 * faulted in, and the kernel mapped around each fault) in a write
 * transaction: safe at any time, the pages come back from the page
 * cache as they are; its dirty pages are its own memory, not the map.
 */
void store_txn_map_drop(struct store_txn *txn);

/* ---- the log (store_tlog.c) ---- */

/* The name of the log's database. */
#define STORE_TLOG_DB "tlog"

/*
 * Adds history record id (rec, n bytes), just put in write transaction
 * txn, to the log: first the records before it the log does not cover
 * yet (a store made before the log, or appended to by an older tool), at
 * most STORE_TLOG_CATCHUP of them per call, then its own hashes when the
 * log then reaches it.  Creates the database when the store has none.
 * 0; RBA_E_TAMPERED (the log covers more records than the history holds
 * before id: the history was cut short); RBA_E_CORRUPT; the errors of a
 * put (they fail txn).
 */
#define STORE_TLOG_CATCHUP 100000
int store_tlog_append(struct store_txn *txn, uint64_t id, const void *rec,
		      size_t n, struct rba_detail *d);

/*
 * The check of the log for store_check: every key and value of the
 * database well formed, the size no more than the history's records,
 * every stored hash recomputed from the history's records (in order,
 * stopping at the first that differs) and the entry count exactly the
 * hashes of that size.  Each problem goes to finding(ctx, key, err,
 * reason), whose nonzero return stops the check and is returned.
 * *kept gets the size, *hashes the hashes checked.  0; the callback's
 * value; RBA_E_NOMEM; RBA_E_STORE.
 */
int store_tlog_check(struct store_txn *txn,
		     int (*finding)(void *ctx, const char *key, int err,
				    const char *reason),
		     void *ctx, uint64_t *kept, uint64_t *hashes,
		     struct rba_detail *d);

/* The reason of a valid dead mark's value (1 unfinished, 2 replaced),
 * or -1. */
int store_sample_dead_mark_check(const MDB_val *v);

/* ---- keys ---- */

void store_blob_chunk_key(const struct rba_digest *digest, uint32_t chunk,
			  uint8_t key[BLOB_CHUNK_KEY_LEN]);
/*
 * Sample key of a checked version name (and case id) in generation gen
 * (ignored for SK_INFO; for SK_DEAD the mark of gen); returns its length.
 */
size_t store_sample_key(const char *version, uint32_t gen,
			enum sample_key_kind kind, uint32_t chunk,
			const char *case_id, uint8_t key[SAMPLE_KEY_MAX]);
/*
 * The key prefixes that hold every record of generation gen of version's
 * sample (generation 0: three, one per kind; others one); returns how
 * many.  key[i] holds prefix i, len[i] its length.
 */
int store_sample_gen_prefixes(const char *version, uint32_t gen,
			      uint8_t key[3][SAMPLE_KEY_MAX], size_t len[3]);
void store_be32(uint8_t *p, uint32_t v);
void store_be64(uint8_t *p, uint64_t v);
uint32_t store_get_be32(const uint8_t *p);
uint64_t store_get_be64(const uint8_t *p);

#endif
