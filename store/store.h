/*
 * store.h - the rebuild-audit store (doc/design.md section 6): one LMDB
 * environment in a directory holding content-addressed zstd blobs
 * (snapshots, artifacts), model versions, audit samples, the hash-chained
 * audit history and run records.  This module is the only one that sees
 * LMDB or zstd; everyone else sees the handles and value structs below.
 *
 * Conventions shared by every function here:
 *  - Status: 0, a negative RBA_E_* code or a positive errno (ENOSPC,
 *    EACCES, ... from the file system).  LMDB failures that are not an
 *    errno are RBA_E_STORE with LMDB's message in d->reason.  On error the
 *    caller-owned d (NULL allowed) gets a lower-case reason and, where one
 *    applies, d->key (a digest in text form, a version name, a case id).
 *  - Stored data that cannot be decoded (unknown type tag or format
 *    version, a length past the end) is RBA_E_CORRUPT; stored data that
 *    does not match its digest is RBA_E_TAMPERED and its reason starts
 *    with "tampered: " and names the record (digest or version, chunk).
 *    Blob, version, sample and run records carry a SHA-256 seal over
 *    their bytes, history records their chain digest, so an edited record
 *    is RBA_E_TAMPERED too.
 *  - Every read of blob or sample content is verified against its
 *    SHA-256 before a byte reaches the caller.
 *  - A struct store and its transactions are used by one thread at a
 *    time.  Several processes may use one store at once: readers never
 *    wait, and a writer waits for the one before it (the store's write
 *    lock, then LMDB's: see store_wait_set).
 *  - Callbacks return 0 to go on; any other value stops the walk and is
 *    returned unchanged by the function that called them.
 *  - Sizes: every name and text has a cap below; exceeding it is
 *    RBA_E_LIMIT.
 */
#ifndef RBA_STORE_H
#define RBA_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"
#include "common/tlog.h"

#define STORE_SCHEMA 1		       /* schema version this tool writes */
#define STORE_CHUNK_MAX (1u << 20)     /* plaintext bytes per zstd frame */
#define STORE_VERSION_NAME_MAX 128     /* bytes in a version name */
#define STORE_CASE_ID_MAX 256	       /* bytes in a case id */
#define STORE_BLOB_NAME_MAX 1024       /* bytes in a blob name */
#define STORE_BLOB_META_MAX (1u << 20) /* bytes of a blob's caller meta */
#define STORE_TEXT_MAX (1u << 20)      /* pins, environment, policy, columns */
#define STORE_RECORD_MAX (16u << 20)   /* a history record or run record */
#define STORE_RUN_ID_MAX 160	       /* bytes in a run id: a version name, "@", a time */
#define STORE_VERSION_META_MAX (1u << 16) /* bytes of a version's caller meta */

/*
 * Environment variable read by store_init and store_open, for tests: the
 * initial map size of a new store in bytes (a k, m or g suffix multiplies
 * by 1024, 1024^2, 1024^3; at least 1 MiB, at most 1 TiB), default
 * 256 MiB.  A quarter of it is the free room every write transaction
 * starts with (64 MiB by default).  A malformed value is RBA_E_USAGE.
 */
#define STORE_MAPSIZE_ENV "REBUILD_AUDIT_MAPSIZE"

struct store;
struct store_txn;
struct store_blob_writer;
struct store_sample_writer;

/* ---- the environment ------------------------------------------------ */

/*
 * Creates a store at path: the directory (mode 0700; missing parents
 * 0755) and, in one write transaction, the named databases meta, blobs,
 * versions, samples, history and runs with the schema version and a
 * random 16-byte store id (the creation time follows in two small
 * transactions of its own).  An existing empty directory is used.
 * Returns 0; RBA_E_EXISTS when path already holds a store (or another
 * LMDB environment); ENOTEMPTY when it is a non-empty directory without
 * a store; ENOTDIR, EACCES, ENOSPC, ... from the file system;
 * RBA_E_STORE; RBA_E_USAGE (bad STORE_MAPSIZE_ENV).
 */
int store_init(const char *path, struct rba_detail *d);

/*
 * Opens the store at path, read-only or for writing, clears the reader
 * slots of dead processes (mdb_reader_check) and checks the schema.
 * *out is set on success; the caller closes it with store_close().
 * Returns 0; RBA_E_NOSTORE when path holds no store (or an unfinished
 * one); RBA_E_NEWER when its schema is newer than STORE_SCHEMA;
 * RBA_E_CORRUPT when meta is unreadable or a named database is missing;
 * RBA_E_UNSUPPORTED for an LMDB file of another LMDB format; RBA_E_BUSY
 * when every reader slot is taken; RBA_E_USAGE (bad STORE_MAPSIZE_ENV);
 * RBA_E_STORE; an errno (EACCES, ...).
 */
int store_open(const char *path, int read_only, struct store **out,
	       struct rba_detail *d);

/*
 * Closes the environment.  s may be NULL.  Every transaction of s must
 * have been committed or aborted.
 */
void store_close(struct store *s);

/* The path given to store_open, borrowed until store_close. */
const char *store_path(const struct store *s);

/*
 * One writer at a time, and none waits without a word.  A write
 * transaction first takes the store's write lock, the file
 * STORE_WRITE_LOCK in the store's directory (flock(2), exclusive, held
 * until the commit or abort; the holder writes its pid in it as decimal
 * text), and only then LMDB's own.  While another process holds it,
 * store_txn_begin waits, trying again every 10 to 100 ms, at most the
 * seconds set here; past them it fails with RBA_E_BUSY, its reason
 * "gave up after N s waiting for the store's write lock (held by pid P)"
 * (the part in parentheses when the holder is known and alive).  Once
 * it has waited STORE_WAIT_NOTICE_MS it calls hook(ctx, w), once: the
 * library never prints, the caller says what it likes.  A writer that
 * does not take the file (an LMDB tool such as mdb_load on the same
 * environment) is waited for by LMDB itself, silently; a file system
 * without flock(2) leaves LMDB's lock alone in charge, as before.
 *
 * store_wait_set sets, for the whole process, how write transactions
 * begun from then on wait: seconds (0: not at all, RBA_E_BUSY at once),
 * hook (NULL: none) and its ctx (borrowed as long as it is set).  Call it
 * from one thread, before transactions begin.  Default:
 * STORE_WAIT_DEFAULT seconds, no hook.
 */
#define STORE_WRITE_LOCK "write.lock"
#define STORE_WAIT_DEFAULT 600 /* seconds: a cron job outwaits another */
#define STORE_WAIT_NOTICE_MS 500
struct store_wait {
	const char *path; /* the store, as given to store_open */
	long holder;	  /* pid of the holder; 0 when not known */
	double waited;	  /* seconds waited so far */
	double limit;	  /* seconds it waits at most */
};
typedef void (*store_wait_hook)(void *ctx, const struct store_wait *w);
void store_wait_set(double seconds, store_wait_hook hook, void *ctx);

/* The store id as 32 lowercase hex digits, borrowed until store_close. */
const char *store_id_hex(const struct store *s);

/*
 * The id of the last committed write transaction (as mdb_stat -e shows
 * it).  Unchanged across a command means the command wrote nothing.
 */
uint64_t store_last_txnid(struct store *s);

/* Runtime library versions, static strings: mdb_version() and
 * ZSTD_versionString(). */
const char *store_lmdb_version(void);
const char *store_zstd_version(void);

/* ---- transactions --------------------------------------------------- */

/*
 * Begins a transaction; *out is set on success.  Every command does all
 * its writes in one write transaction, so a crash or kill leaves the
 * store as before or as after the command (a long sample is written in
 * steps that each leave that so: store_sample_begin).  A write begin waits while
 * another process writes, as store_wait_set says, and holds the store's
 * write lock until the commit or abort.  write on a store opened
 * read-only, or while a
 * write transaction of s is open, is RBA_E_USAGE (read transactions may
 * be open beside a write one).
 *
 * Map growth: LMDB can only grow its memory map while no transaction of
 * this handle is open, so a write begin makes sure the map has room for
 * (used + 2 * size_hint + a quarter of the initial map size) and grows
 * it first.  size_hint is the number of bytes the transaction is about
 * to store (e.g. a snapshot's file size; 0 when small); it is ignored
 * for reads and when another transaction of s is open.  A put that still
 * finds the map full returns RBA_E_LIMIT with a reason saying the map is
 * full: the caller aborts and may retry with a larger size_hint.
 *
 * Returns 0; RBA_E_USAGE; RBA_E_BUSY (reader slots; or, for a write,
 * another writer past the wait); RBA_E_STORE; an errno (ENOMEM when the
 * map cannot grow).
 */
int store_txn_begin(struct store *s, int write, uint64_t size_hint,
		    struct store_txn **out, struct rba_detail *d);

/*
 * A second read transaction on txn's store that sees exactly what txn
 * (a read) sees: the same snapshot, checked by its id.  It may be used
 * by another thread (one at a time) while this one uses txn; begin and
 * abort it on txn's thread.  Returns 0; RBA_E_BUSY when txn writes or a
 * write landed since txn began (the caller reads through txn instead);
 * store_txn_begin's errors.
 */
int store_txn_begin_same(struct store_txn *txn, struct store_txn **out,
			 struct rba_detail *d);

/*
 * Commits and frees txn (NULL is RBA_E_USAGE); txn is freed whatever the
 * result.  Errors found before anything was written (bad arguments, a
 * cap, RBA_E_NOTFOUND, RBA_E_EXISTS of a put without replace) leave a
 * write transaction usable.  An error while writing (RBA_E_LIMIT for a
 * full map, RBA_E_STORE, RBA_E_COMPRESS, an errno, and the cases the
 * functions below say "fail the transaction") fails it: later calls
 * return that first error and commit aborts and returns it too.  A blob
 * or sample writer not yet freed makes commit abort with RBA_E_USAGE.
 * Returns 0, the earlier error, RBA_E_USAGE, RBA_E_LIMIT (map full),
 * RBA_E_STORE or an errno (ENOSPC, EIO).
 */
int store_txn_commit(struct store_txn *txn, struct rba_detail *d);

/*
 * Aborts and frees txn; NULL is allowed.  Nothing it wrote remains.
 * Writers still open become inert: free them afterwards as usual.
 */
void store_txn_abort(struct store_txn *txn);

/* ---- blobs ---------------------------------------------------------- */

enum store_blob_kind {
	STORE_BLOB_ANY = 0, /* only as a filter */
	STORE_BLOB_SNAPSHOT = 1,
	STORE_BLOB_ARTIFACT = 2,
	STORE_BLOB_OTHER = 3,
};

/*
 * What the store knows of one blob.  name and meta are owned by the
 * struct (store_blob_info_release); name is "" when none and meta NULL
 * when meta_len is 0.
 */
struct store_blob_info {
	struct rba_digest digest; /* SHA-256 of the content */
	int kind;		  /* enum store_blob_kind */
	uint64_t size;		  /* content bytes */
	uint32_t chunks;	  /* ceil(size / STORE_CHUNK_MAX) */
	uint64_t stored_size;	  /* compressed bytes in the store */
	int64_t added;		  /* unix seconds of the first add */
	char *name;
	uint8_t *meta; /* opaque caller bytes (e.g. rows, columns, types) */
	size_t meta_len;
};

/* Frees what info owns and zeroes it; NULL allowed. */
void store_blob_info_release(struct store_blob_info *info);

/*
 * Streaming blob writer inside write transaction txn.  Content is cut
 * into chunks of STORE_CHUNK_MAX bytes, each compressed as one zstd frame
 * (content size and checksum in the frame) and stored with the SHA-256 of
 * its plaintext.  The writer's own memory is a few MiB whatever the blob
 * size; LMDB keeps the pages a write transaction dirties in memory until
 * commit, which adds about the blob's compressed size.  Chunks live under
 * temporary keys until finish moves them under the digest.
 * kind is STORE_BLOB_SNAPSHOT, _ARTIFACT or _OTHER (else RBA_E_USAGE).
 * Returns 0, RBA_E_USAGE (read transaction), RBA_E_NOMEM, or the error
 * that failed txn earlier.  The writer belongs to txn: finish or free it
 * before store_txn_commit.
 */
int store_blob_writer_new(struct store_txn *txn, int kind,
			  struct store_blob_writer **out,
			  struct rba_detail *d);

/*
 * Appends n bytes.  0; RBA_E_LIMIT (map full); RBA_E_COMPRESS;
 * RBA_E_STORE; an errno.  Any error fails the writer and txn.
 */
int store_blob_writer_add(struct store_blob_writer *w, const void *p,
			  size_t n, struct rba_detail *d);

/*
 * Ends the blob: *digest gets the SHA-256 of all bytes added.  If that
 * blob was already stored, the new chunks are dropped and *existed is 1
 * (adding the same bytes twice stores them once): its kind and added
 * time stay, its name is replaced when name is non-empty, its meta when
 * meta_len > 0.  Otherwise the blob is stored with name (NULL or "" for
 * none) and meta, and *existed is 0.  existed may be NULL.  The writer
 * must still be freed.  Returns 0; RBA_E_LIMIT (a name or meta over its
 * cap, or map full); RBA_E_USAGE (finished twice or failed); RBA_E_STORE;
 * an errno.
 */
int store_blob_writer_finish(struct store_blob_writer *w, const char *name,
			     const void *meta, size_t meta_len,
			     struct rba_digest *digest, int *existed,
			     struct rba_detail *d);

/*
 * Frees w; NULL allowed.  An unfinished writer's chunks are removed from
 * its transaction, which stays usable.
 */
void store_blob_writer_free(struct store_blob_writer *w);

/* Writer new + add + finish + free for a whole buffer.  Same errors. */
int store_blob_put(struct store_txn *txn, int kind, const void *p, size_t n,
		   const char *name, const void *meta, size_t meta_len,
		   struct rba_digest *digest, int *existed,
		   struct rba_detail *d);

/*
 * The info record of a blob; release it with store_blob_info_release.
 * 0, RBA_E_NOTFOUND, RBA_E_CORRUPT, RBA_E_TAMPERED (the record does not
 * match its seal), RBA_E_NOMEM, RBA_E_STORE.
 */
int store_blob_info(struct store_txn *txn, const struct rba_digest *digest,
		    struct store_blob_info *info, struct rba_detail *d);

/*
 * Resolves a digest or a hex prefix of at least 4 digits, with or
 * without "sha256:", to the one stored blob of that kind
 * (STORE_BLOB_ANY for any) it starts.  Returns 0; RBA_E_SYNTAX (not a
 * prefix); RBA_E_NOTFOUND; RBA_E_EXISTS when the prefix is ambiguous (d
 * says "ambiguous" and names two matches); RBA_E_CORRUPT; RBA_E_STORE.
 */
int store_blob_resolve(struct store_txn *txn, const char *prefix, int kind,
		       struct rba_digest *out, struct rba_detail *d);

/*
 * Calls cb for each blob of kind (STORE_BLOB_ANY for all), sorted by
 * digest.  info is borrowed for the call.  0, the callback's value,
 * RBA_E_CORRUPT, RBA_E_TAMPERED, RBA_E_NOMEM, RBA_E_STORE.
 */
int store_blob_list(struct store_txn *txn, int kind,
		    int (*cb)(void *ctx, const struct store_blob_info *info),
		    void *ctx, struct rba_detail *d);

/*
 * Streams a blob's content to cb chunk by chunk (n <= STORE_CHUNK_MAX,
 * p borrowed for the call).  Each chunk is decompressed into a bounded
 * buffer (a frame that declares more than STORE_CHUNK_MAX bytes, or no
 * size, is rejected before any allocation) and checked against its
 * SHA-256 before cb sees it; the whole content is checked against digest
 * at the end.  So cb may have received earlier, verified chunks when the
 * read fails: write to a temporary file and rename only on 0.
 * Returns 0; the callback's value; RBA_E_NOTFOUND; RBA_E_TAMPERED (a
 * missing, extra or malformed chunk, a size or count that disagrees with
 * the info record, a bad frame, a digest mismatch: d->reason names the
 * digest and the chunk, d->key the digest); RBA_E_CORRUPT (info record);
 * RBA_E_NOMEM; RBA_E_STORE.
 */
int store_blob_read(struct store_txn *txn, const struct rba_digest *digest,
		    int (*cb)(void *ctx, const uint8_t *p, size_t n),
		    void *ctx, struct rba_detail *d);

/*
 * Reads a whole blob of at most max bytes, verified as store_blob_read
 * does, into a malloc'd buffer *p (NUL-terminated, the NUL not counted in
 * *n) that the caller frees.  RBA_E_LIMIT when the blob is larger than
 * max; otherwise the errors of store_blob_read.
 */
int store_blob_load(struct store_txn *txn, const struct rba_digest *digest,
		    size_t max, uint8_t **p, size_t *n, struct rba_detail *d);

/* ---- samples -------------------------------------------------------- */

/* A version's audit sample, as recorded when it was stored. */
struct store_sample_info {
	uint64_t cases;
	uint32_t chunks;
	uint64_t size;		   /* raw chunk bytes in all */
	uint64_t stored_size;	   /* compressed */
	struct rba_digest digest;  /* SHA-256 of the raw chunks in order */
	int has_policy;
	struct rba_digest policy_digest; /* the policy its decisions used */
	int64_t added;		   /* unix seconds */
	char *columns;		   /* owned: store_sample_info_release */
	uint32_t generation;	   /* which generation of records holds it */
};

/* Frees what info owns and zeroes it; NULL allowed. */
void store_sample_info_release(struct store_sample_info *info);

/* ---- versions ------------------------------------------------------- */

/*
 * A model version.  Filled by store_version_get/list with owned strings
 * (store_version_release); given to store_version_put by the caller
 * (nothing taken over).
 */
struct store_version {
	char *name;		/* 1..STORE_VERSION_NAME_MAX bytes */
	char *pins_text;	/* the pins, canonical YAML */
	char *env_text;		/* the environment record at registration */
	int64_t registered_at;	/* unix seconds */
	struct rba_digest artifact;
	struct rba_digest snapshot;
	int has_policy;
	char *policy_text;	/* NULL unless has_policy */
	struct rba_digest policy_digest;
	/*
	 * The caller's bytes kept with the version (its provenance:
	 * audit/register.h), at most STORE_VERSION_META_MAX.  has_meta 1:
	 * the record keeps meta, meta_len bytes at meta (meta_len 0, meta
	 * NULL: kept, and empty); put writes such a record in the second
	 * format.  has_meta 0: a record of the first format, written before
	 * versions kept meta, which says nothing either way; put writes one
	 * (byte for byte what earlier tools wrote) and ignores meta, so a
	 * get, an edit and a put keep what the record was.  Owned by get and
	 * list (store_version_release), borrowed by put.
	 */
	int has_meta;
	uint8_t *meta;
	size_t meta_len;
	/*
	 * Filled by get/list from the samples database; ignored by put.  A
	 * sample record that cannot be read does not fail get or list:
	 * has_sample is 0 and sample_err its error (RBA_E_TAMPERED or
	 * RBA_E_CORRUPT), so one damaged sample does not hide its version.
	 */
	int has_sample;
	int sample_err;
	struct store_sample_info sample;
};

/* Frees what v owns and zeroes it; NULL allowed. */
void store_version_release(struct store_version *v);

/*
 * Stores v under v->name.  The artifact and the snapshot must be stored
 * blobs (RBA_E_NOTFOUND names the missing one, d->key its digest).  An
 * existing version is RBA_E_EXISTS unless replace is set; replacing
 * keeps the version's sample (store_sample_delete removes it) and
 * replaces its meta with v's.  Returns 0; RBA_E_USAGE (read
 * transaction, NULL field, meta_len > 0 with meta NULL); RBA_E_LIMIT (a
 * name, text or meta over its cap, or map full); RBA_E_NOTFOUND;
 * RBA_E_EXISTS; RBA_E_CORRUPT; RBA_E_STORE; an errno.
 */
int store_version_put(struct store_txn *txn, const struct store_version *v,
		      int replace, struct rba_detail *d);

/*
 * Loads version name into *v (release it with store_version_release).
 * 0; RBA_E_NOTFOUND; RBA_E_CORRUPT; RBA_E_TAMPERED (the record does not
 * match its seal); RBA_E_NOMEM; RBA_E_STORE.
 */
int store_version_get(struct store_txn *txn, const char *name,
		      struct store_version *v, struct rba_detail *d);

/*
 * Calls cb for every version, sorted by name (bytewise); v is borrowed
 * for the call.  0, the callback's value, or the errors of get.
 */
int store_version_list(struct store_txn *txn,
		       int (*cb)(void *ctx, const struct store_version *v),
		       void *ctx, struct rba_detail *d);

/*
 * Calls cb with the name of every version, sorted, without reading the
 * records, so that one damaged record does not hide the others: each
 * name can then be read with store_version_get.  valid is 0 for a key
 * that is no version name (empty, too long, a NUL byte): name is then a
 * printable form of it (bytes outside ASCII as \xHH).  name is
 * borrowed for the call.  0, the callback's value, RBA_E_CORRUPT,
 * RBA_E_STORE.
 */
int store_version_names(struct store_txn *txn,
			int (*cb)(void *ctx, const char *name, int valid),
			void *ctx, struct rba_detail *d);

/*
 * Keeps the policy version name is decided under: its text and its
 * digest (computed by the caller).  policy_text NULL removes it.  The
 * rest of the record (its meta, and its format) stays as it was.
 * 0; RBA_E_NOTFOUND; RBA_E_USAGE; RBA_E_LIMIT; RBA_E_CORRUPT;
 * RBA_E_TAMPERED; RBA_E_STORE; an errno.
 */
int store_version_set_policy(struct store_txn *txn, const char *name,
			     const char *policy_text,
			     const struct rba_digest *policy_digest,
			     struct rba_detail *d);

/* ---- sample writers and readers ------------------------------------- */

/*
 * Starts the audit sample of an existing version in write transaction
 * txn, to replace any sample it had when store_sample_finish is called.
 * columns is the caller's description of the chunk rows (<=
 * STORE_TEXT_MAX bytes); policy_digest (NULL for none) names the policy
 * the stored decisions were made under.  The raw chunk format is the
 * caller's.
 *
 * A sample is written beside the one it replaces, as the other of two
 * generations of records, and marked dead until finish: every 65,536
 * cases store_sample_add_chunk commits what txn holds so far and goes on
 * in a new LMDB transaction under the same write lock, so LMDB's dirty
 * pages stay a few MiB whatever the sample's size.  Readers see the old
 * sample (or none) until the commit after finish, which names the new
 * generation and deletes the old one (when it is over 65,536 cases,
 * marks it dead instead).  Whatever a failure, abort or crash leaves of
 * an unfinished sample is marked dead: store check counts it apart, and
 * store_sample_clear deletes it.  So the caller must write nothing else
 * into txn that it would not keep if the sample failed.
 * Returns 0; RBA_E_NOTFOUND (no such version); RBA_E_USAGE; RBA_E_LIMIT;
 * RBA_E_NOMEM; RBA_E_STORE; RBA_E_CORRUPT (records of an earlier sample
 * not cleared).  Finish or free the writer before commit.
 */
int store_sample_begin(struct store_txn *txn, const char *version,
		       const char *columns,
		       const struct rba_digest *policy_digest,
		       struct store_sample_writer **out,
		       struct rba_detail *d);

/*
 * Replaces the columns text given to store_sample_begin, for what the
 * caller learns only while writing (a digest of its input): the record
 * store_sample_finish writes carries the last text set.  Nothing is
 * written to the transaction.  Returns 0; RBA_E_USAGE (finished or
 * failed writer, transaction ended); RBA_E_LIMIT (over STORE_TEXT_MAX:
 * the writer stays usable with its previous text); RBA_E_NOMEM.
 */
int store_sample_set_columns(struct store_sample_writer *w, const char *columns,
			     struct rba_detail *d);

/*
 * Adds one chunk of 1..STORE_CHUNK_MAX raw bytes holding the cases
 * case_ids[0..ncases) (each 1..STORE_CASE_ID_MAX bytes): the chunk is
 * compressed as one zstd frame with the SHA-256 of its bytes, and each
 * case id is indexed to its chunk number.  A case id already in this
 * sample is RBA_E_EXISTS with d->key the id.  Returns 0; RBA_E_USAGE
 * (empty chunk, NULL id); RBA_E_LIMIT (sizes, map full); RBA_E_EXISTS;
 * RBA_E_COMPRESS; RBA_E_STORE; an errno.  An error after the checks of
 * the arguments fails the writer and its transaction.
 */
int store_sample_add_chunk(struct store_sample_writer *w, const void *p,
			   size_t n, const char *const *case_ids,
			   size_t ncases, struct rba_detail *d);

/*
 * Writes the sample's record: case count, chunk count, the sample digest
 * (SHA-256 over the raw chunks in order, also put in *digest, which may
 * be NULL), columns, policy digest and the time.  0; RBA_E_USAGE
 * (finished twice, or failed); RBA_E_LIMIT; RBA_E_STORE; an errno.
 */
int store_sample_finish(struct store_sample_writer *w,
			struct rba_digest *digest, struct rba_detail *d);

/*
 * Frees w; NULL allowed.  Freeing an unfinished writer whose
 * transaction is live fails the transaction (the new sample is partial):
 * it can then only be aborted.  Steps already committed stay marked
 * dead until store_sample_clear.
 */
void store_sample_writer_free(struct store_sample_writer *w);

/*
 * Deletes the records of dead sample generations (unfinished writes,
 * replaced samples) of version, or of every version when version is
 * NULL, in write transactions of its own committed every 65,536
 * records; *cleared gets how many records went.  A crash leaves the rest
 * marked for the next call.  Call with no transaction of s open.
 * 0; RBA_E_TAMPERED (a mark names the generation version's sample
 * record holds; with version NULL such a version is skipped);
 * RBA_E_BUSY; RBA_E_STORE; an errno.
 */
int store_sample_clear(struct store *s, const char *version,
		       uint64_t *cleared, struct rba_detail *d);

/*
 * The sample record of version (release with store_sample_info_release).
 * 0; RBA_E_NOTFOUND (no sample); RBA_E_CORRUPT; RBA_E_TAMPERED;
 * RBA_E_NOMEM; RBA_E_STORE.
 */
int store_sample_info(struct store_txn *txn, const char *version,
		      struct store_sample_info *info, struct rba_detail *d);

/*
 * Streams the sample's raw chunks, in order, each verified against its
 * SHA-256 before cb sees it (p borrowed for the call); at the end the
 * chunk and case counts, the size and the sample digest are checked.
 * Returns 0; the callback's value; RBA_E_NOTFOUND; RBA_E_TAMPERED
 * (d->reason names the version and the chunk); RBA_E_CORRUPT;
 * RBA_E_NOMEM; RBA_E_STORE.
 */
int store_sample_read(struct store_txn *txn, const char *version,
		      int (*cb)(void *ctx, uint32_t chunk_no, const uint8_t *p,
				size_t n),
		      void *ctx, struct rba_detail *d);

/*
 * store_sample_read at one SHA-256 pass over the content instead of two:
 * each chunk is decompressed and its frame checked, then handed to cb
 * before its own digest is; the content is hashed once as a whole.
 * When that digest fails, or cb returns an error, the chunks read so
 * far are read again one by one and the first that does not match its
 * digest is reported as store_sample_read reports it (RBA_E_TAMPERED
 * naming the chunk), before any other error.  So cb may see bytes that
 * are not the stored ones, but no call returns 0 unless every byte cb
 * saw was: for a reader that decides nothing until the call returns
 * (the audit's pass) and checks what it is handed as any input.  A
 * helper thread decompresses each chunk, then hashes it and its
 * record's seal side by side while cb has it and the next chunk's
 * record is read.
 * Same returns as store_sample_read.
 */
int store_sample_stream(struct store_txn *txn, const char *version,
			int (*cb)(void *ctx, uint32_t chunk_no,
				  const uint8_t *p, size_t n),
			void *ctx, struct rba_detail *d);

/*
 * store_sample_stream, and the sum of version's case index as
 * store_sample_index_sum makes it (into sum), from the same snapshot,
 * on a read of its own beside the stream: in the waits of the stream's
 * two threads (the helper's for a chunk to decompress, the caller's for
 * a chunk to come out), or, own_thread, on a thread of its own.  What
 * is left when the chunks are done (all of it, when a write landed
 * between the two reads, or the test seam walk_after says) is walked
 * after them, on txn.  The stream's
 * error first (sum then zero), else the walk's, as
 * store_sample_index_sum returns it.
 */
struct store_index_sum;
int store_sample_stream_indexed(struct store_txn *txn, const char *version,
				int (*cb)(void *ctx, uint32_t chunk_no,
					  const uint8_t *p, size_t n),
				void *ctx, int own_thread,
				struct store_index_sum *sum,
				struct rba_detail *d);

/*
 * The chunk number holding case_id in version's sample.  0;
 * RBA_E_NOTFOUND (no sample, or no such case: d->key the case id);
 * RBA_E_CORRUPT; RBA_E_STORE.
 */
int store_sample_case_chunk(struct store_txn *txn, const char *version,
			    const char *case_id, uint32_t *chunk_no,
			    struct rba_detail *d);

/*
 * Loads one raw chunk into a malloc'd buffer *p (caller frees; *n its
 * size) without decompressing the others.  The chunk is checked against
 * its SHA-256, and the list of all chunk digests against the one in the
 * sample record.  0; RBA_E_NOTFOUND (no sample, chunk_no out of range);
 * RBA_E_TAMPERED; RBA_E_CORRUPT; RBA_E_NOMEM; RBA_E_STORE.
 */
int store_sample_chunk_load(struct store_txn *txn, const char *version,
			    uint32_t chunk_no, uint8_t **p, size_t *n,
			    struct rba_detail *d);

/*
 * Removes version's sample (record, chunks, case index).  0;
 * RBA_E_NOTFOUND (none); RBA_E_USAGE; RBA_E_STORE; an errno.
 */
int store_sample_delete(struct store_txn *txn, const char *version,
			struct rba_detail *d);

/* ---- history -------------------------------------------------------- */

/*
 * One audit record.  The chain: record id (1, 2, 3, ... in the order
 * appended, across all versions) stores prev, the digest of record
 * id - 1 (32 zero bytes for the first), and its own digest
 *   SHA-256( prev[32] || u64le(id) || i64le(time)
 *            || u32le(len(version)) || version
 *            || u32le(len(record)) || record )
 * The store also keeps the last id and digest (the head) in meta, so a
 * removed last record is noticed too.
 */
struct store_history_entry {
	uint64_t id;
	int64_t time; /* unix seconds, as given to append */
	char version[STORE_VERSION_NAME_MAX + 1];
	struct rba_digest prev;
	struct rba_digest digest;
	uint8_t *record; /* the caller's bytes (e.g. JSON) */
	size_t len;
};

/*
 * The chain digest above of one record, into *out: what
 * store_history_append stores and store_history_verify checks, exported
 * so that a record held outside the store (an evidence file) can be
 * checked against its chain digest offline.  version is vlen bytes (no
 * NUL needed), the record n bytes; both at most UINT32_MAX bytes
 * (asserted).  Pure: no transaction, cannot fail.
 */
void store_history_digest(const struct rba_digest *prev, uint64_t id,
			  int64_t time, const char *version, size_t vlen,
			  const void *rec, size_t n, struct rba_digest *out);

/*
 * Appends a record for version (1..STORE_VERSION_NAME_MAX bytes; it need
 * not be a stored version) at time, of n <= STORE_RECORD_MAX bytes.  *id
 * and *chain get the new record's id and digest (either may be NULL).
 * 0; RBA_E_USAGE; RBA_E_LIMIT; RBA_E_CORRUPT (the last record cannot be
 * read); RBA_E_STORE; an errno.
 */
int store_history_append(struct store_txn *txn, const char *version,
			 int64_t time, const void *rec, size_t n,
			 uint64_t *id, struct rba_digest *chain,
			 struct rba_detail *d);

/*
 * Calls cb for the records of version (NULL: all), oldest first or
 * newest first.  e and e->record are borrowed for the call.  Each
 * record's own digest is checked (not the links: store_history_verify).
 * 0, the callback's value, RBA_E_CORRUPT, RBA_E_TAMPERED, RBA_E_STORE.
 */
int store_history_list(struct store_txn *txn, const char *version,
		       int newest_first,
		       int (*cb)(void *ctx,
				 const struct store_history_entry *e),
		       void *ctx, struct rba_detail *d);

/*
 * Record id into *e, its record copied into malloc'd memory owned by e
 * (store_history_entry_release).  0; RBA_E_NOTFOUND; RBA_E_CORRUPT;
 * RBA_E_TAMPERED (own digest); RBA_E_NOMEM; RBA_E_STORE.
 */
int store_history_get(struct store_txn *txn, uint64_t id,
		      struct store_history_entry *e, struct rba_detail *d);

/* Frees e->record and zeroes e; NULL allowed. */
void store_history_entry_release(struct store_history_entry *e);

/*
 * Walks the whole chain oldest first: ids 1, 2, ... without a gap, each
 * record decodable, its own digest right, its prev equal to the digest
 * before it, and the head in meta equal to the last record.  *count (may
 * be NULL) gets the number of records held, also when the chain is
 * broken.  Returns 0 when intact, or
 * RBA_E_TAMPERED with *first_bad_id (may be NULL) the first record that
 * breaks it (for a missing tail, the id the head names) and d->reason
 * saying how; RBA_E_STORE.
 */
int store_history_verify(struct store_txn *txn, uint64_t *first_bad_id,
			 uint64_t *count, struct rba_detail *d);

/* ---- the log: a Merkle tree over the history -------------------------- */

/*
 * The history is also a transparency log (doc/design.md section 6.7,
 * rebuild-audit-evidence(5)): history record id is leaf id - 1 of an
 * RFC 6962 Merkle tree (common/tlog.h) whose leaf hash is
 * SHA-256(0x00 || record), the record's bytes exactly as stored (the
 * caller's bytes of store_history_append, what e->record holds).  Every
 * append adds its leaf, and the hashes of the subtrees it completes, in
 * its own transaction, so a root or a proof costs O(log N) reads.  A
 * store made before the log gets it from its history: its first append
 * adds the records before it too (STORE_TLOG_CATCHUP at a time), and
 * until then a view computes what is not kept from the records.
 *
 * A view (struct store_tlog) is the log of the history as txn sees it:
 * its size is the history's record count.  It borrows txn: close it
 * before the transaction ends.
 */
struct store_tlog;

/*
 * Opens the view of txn's history.  0; RBA_E_TAMPERED (the log covers
 * more records than the history holds: the history was cut short, or
 * the head rewritten; d says so); RBA_E_CORRUPT; the errors of
 * store_history_get for a record the log does not cover yet;
 * RBA_E_NOMEM; RBA_E_STORE.
 */
int store_tlog_open(struct store_txn *txn, struct store_tlog **out,
		    struct rba_detail *d);

/* Closes a view; NULL allowed. */
void store_tlog_close(struct store_tlog *tl);

/* The log's size: the history's records. */
uint64_t store_tlog_size(const struct store_tlog *tl);

/* How many of them the store keeps hashes for (the rest are computed). */
uint64_t store_tlog_kept(const struct store_tlog *tl);

/*
 * The root of the tree of the first n records (n <= size; the zero
 * digest for 0).  0; RBA_E_RANGE; RBA_E_CORRUPT (a stored hash cannot
 * be read); RBA_E_STORE.
 */
int store_tlog_root(struct store_tlog *tl, uint64_t n, struct rba_digest *out,
		    struct rba_detail *d);

/*
 * The inclusion proof of history record id (leaf id - 1) in the tree of
 * the first t records (id <= t <= size), into proof[0..*np) (room for
 * TLOG_PROOF_MAX).  The record is read and its leaf hash checked against
 * the one the log keeps.  0; RBA_E_RANGE; RBA_E_TAMPERED (the record is
 * not the log's leaf: rewritten); RBA_E_CORRUPT; RBA_E_STORE.
 */
int store_tlog_prove_record(struct store_tlog *tl, uint64_t t, uint64_t id,
			    struct rba_digest *proof, size_t *np,
			    struct rba_detail *d);

/*
 * The consistency proof from the tree of the first n records to that of
 * the first t (1 <= n <= t <= size).  0; RBA_E_RANGE; RBA_E_CORRUPT;
 * RBA_E_STORE.
 */
int store_tlog_prove_tree(struct store_tlog *tl, uint64_t t, uint64_t n,
			  struct rba_digest *proof, size_t *np,
			  struct rba_detail *d);

/*
 * Recomputes the log from the history's records, every one read: the
 * hashes the store keeps must be the records', so that a record
 * rewritten in place (its chain digest and head recomputed, or not) is
 * found, and the log holding exactly those hashes and its size.  *bad
 * (may be NULL) gets the id of the first record whose hashes differ (0
 * when none).  0 when they agree; RBA_E_TAMPERED (d names the record, or
 * says the log covers more records than the history holds);
 * RBA_E_CORRUPT (a stored hash missing or malformed, an entry too many
 * or too few); the errors of store_history_get; RBA_E_STORE.
 */
int store_tlog_verify(struct store_txn *txn, uint64_t *bad,
		      struct rba_detail *d);

/* ---- runs ----------------------------------------------------------- */

/*
 * Stores the run record bytes (opaque, e.g. JSON, <= STORE_RECORD_MAX)
 * under id (1..STORE_RUN_ID_MAX bytes), replacing a record of that id.
 * 0; RBA_E_USAGE; RBA_E_LIMIT; RBA_E_STORE; an errno.
 */
int store_run_put(struct store_txn *txn, const char *id, const void *p,
		  size_t n, struct rba_detail *d);

/*
 * The run record id in a malloc'd buffer (NUL-terminated, not counted
 * in *n), which the caller frees.  0; RBA_E_NOTFOUND; RBA_E_CORRUPT;
 * RBA_E_TAMPERED; RBA_E_NOMEM; RBA_E_STORE.
 */
int store_run_get(struct store_txn *txn, const char *id, uint8_t **p,
		  size_t *n, struct rba_detail *d);

/*
 * Calls cb for every run record, sorted by id; id, p borrowed for the
 * call.  0, the callback's value, RBA_E_CORRUPT, RBA_E_TAMPERED,
 * RBA_E_NOMEM, RBA_E_STORE.
 */
int store_run_list(struct store_txn *txn,
		   int (*cb)(void *ctx, const char *id, const uint8_t *p,
			     size_t n),
		   void *ctx, struct rba_detail *d);

/* ---- checking ------------------------------------------------------- */

/*
 * One piece of damage found by store_check.  Every string is borrowed
 * for the callback.  db names the database ("meta", "blobs", "versions",
 * "samples", "history", "runs", or "lmdb" for the environment itself);
 * key names the record in text (a digest, a version name, "version/case
 * id", a history id) or is "" for a database as a whole.
 */
struct store_finding {
	const char *db;
	const char *key;
	int err; /* RBA_E_TAMPERED, RBA_E_CORRUPT, RBA_E_NOTFOUND (a record
		  * another one names is missing) */
	const char *reason;
};

/* What store_check walked, to say what a clean result covers. */
struct store_check_stats {
	uint64_t meta;		/* meta records */
	uint64_t blobs;		/* blob records, each read whole */
	uint64_t blob_chunks;
	uint64_t versions;
	uint64_t samples;	/* sample records, each read whole */
	uint64_t sample_chunks;
	uint64_t cases;		/* case ids checked against the index */
	uint64_t index_entries;
	uint64_t dead_marks;	/* sample generations marked dead, */
	uint64_t dead_records;	/* and their records, not yet cleared */
	uint64_t history;	/* chained history records */
	uint64_t runs;
	uint64_t tlog_kept;	/* history records the log keeps hashes for */
	uint64_t tlog_hashes;	/* and the stored hashes, each recomputed */
	uint64_t pages;		/* LMDB pages of the databases (mdb_stat) */
	uint64_t findings;
};

/* Calls each(ectx, id) for a case id; a nonzero return stops the caller. */
typedef int (*store_case_fn)(void *ectx, const char *id);

struct store_check_hooks {
	/*
	 * Lists the case ids held by raw chunk chunk_no of version's sample
	 * (p, n borrowed for the call, verified against the sealed sample
	 * record; columns is the record's column text), calling each for
	 * every id.  Returns 0, each's value, or an error with d filled
	 * when the chunk cannot be decoded (reported as a finding).  NULL:
	 * the index is then checked for its count and shape only.
	 */
	int (*chunk_cases)(void *ctx, const char *version, const char *columns,
			   uint32_t chunk_no, const uint8_t *p, size_t n,
			   store_case_fn each, void *ectx,
			   struct rba_detail *d);
	/* Receives every finding; a nonzero return stops the check. */
	int (*finding)(void *ctx, const struct store_finding *f);
	void *ctx;
};

/*
 * The store's fsck, inside read transaction txn: walks every record of
 * every database and checks what the store can know by itself.
 *  - meta: the schema, id, creation and head records and their seal;
 *  - blobs: every record's seal and key, every chunk's frame and digest,
 *    each blob's whole digest, no stray or leftover chunk;
 *  - versions: seals and keys, the artifact and snapshot they name are
 *    stored blobs of that kind;
 *  - samples: every sample read whole as store_sample_read does, its
 *    version stored, every case id of every chunk (through the hook)
 *    indexed to that chunk with a lookup from the root, and the index
 *    holding exactly the sample's case count;
 *  - history: the hash chain and head (store_history_verify), each
 *    record naming a stored version;
 *  - runs: seals and keys;
 *  - lmdb: each database's entry count as LMDB records it agrees with
 *    the walk.
 * It cannot see a rollback of the whole store to an older consistent
 * state (compare the history head with one kept outside), nor damage
 * LMDB's walk never reaches (free pages).  st (may be NULL) gets the
 * counts.  Returns 0 when the walk finished, whatever it found (see
 * st->findings); the finding callback's value; RBA_E_NOMEM or
 * RBA_E_STORE when it could not check.
 */
int store_check(struct store_txn *txn, const struct store_check_hooks *h,
		struct store_check_stats *st, struct rba_detail *d);

/*
 * Checks the case index of version's sample against the case ids of its
 * chunk chunk_no: each of ids[0..n) must be indexed, looked up from the
 * root, to that chunk.  0; RBA_E_TAMPERED ("the case index of version
 * 'V' is damaged: ...", d->key the case id); RBA_E_NOTFOUND (no sample);
 * RBA_E_CORRUPT; RBA_E_STORE.
 */
int store_sample_index_check(struct store_txn *txn, const char *version,
			     uint32_t chunk_no, const char *const *ids,
			     size_t n, struct rba_detail *d);

/*
 * An order-independent sum over (case id, chunk number) pairs: the sum
 * of the chunks' case ids equals the sum of the index's entries exactly
 * when they hold the same pairs (with overwhelming probability: two
 * 64-bit mixes of each pair, added).  A check against damage, not a
 * seal against a forger (who could recompute any unkeyed digest).
 */
struct store_index_sum {
	uint64_t n;	/* pairs added */
	uint64_t a, b;	/* the sums */
};

/* Adds the pairs summed in from to to (the sum does not depend on the
 * order the pairs come in). */
void store_index_sum_merge(struct store_index_sum *to,
			   const struct store_index_sum *from);

/* Adds the pair (id, its len bytes; chunk) to s. */
void store_index_sum_add(struct store_index_sum *s, const char *id,
			 size_t len, uint32_t chunk);

/* Adds the n pairs (ids[i], chunk), each id a C string, to s. */
void store_index_sum_add_ids(struct store_index_sum *s,
			     const char *const *ids, uint32_t n,
			     uint32_t chunk);
/*
 * The same for ids packed one after another, each followed by its NUL
 * (ids[i + 1] is ids[i] + strlen(ids[i]) + 1), as a decoded chunk's are
 * (struct sample_chunk): an id's length is the distance to the next, so
 * no id is scanned for its end but the last.
 */
void store_index_sum_add_packed(struct store_index_sum *s,
				const char *const *ids, uint32_t n,
				uint32_t chunk);

/*
 * The sum of the case index of version's sample, walked in key order,
 * for an audit to compare with the sum of the case ids its chunks hold.
 * Every entry must decode and name a chunk of the sample, and the number
 * of entries must be the sample's case count.  The first and the last
 * entry of every leaf page are also looked up from the root, so damaged
 * branch pages (which a walk does not read) are seen.  Pages are dropped
 * from memory behind the walk (read transactions).  0; RBA_E_TAMPERED;
 * RBA_E_NOTFOUND (no sample); RBA_E_CORRUPT; RBA_E_STORE.
 */
int store_sample_index_sum(struct store_txn *txn, const char *version,
			   struct store_index_sum *out, struct rba_detail *d);


/*
 * The head of the history chain: the last record's id and digest, from
 * meta (id 0 and a zero digest for an empty history).  0; RBA_E_CORRUPT;
 * RBA_E_STORE.
 */
int store_history_head(struct store_txn *txn, uint64_t *id,
		       struct rba_digest *digest, struct rba_detail *d);

/* ---- snapshots for cluster workers ---------------------------------- */

/*
 * A snapshot is a directory holding a compact, consistent copy of a
 * store's data.mdb (as `mdb_copy -c` makes it) and, beside it, the
 * marker file STORE_SNAPSHOT_MARKER (mode 0444), four lines:
 *   rebuild-audit snapshot v1
 *   store_id <32 lowercase hex digits>
 *   head_id <decimal id of the last history record, 0 when none>
 *   head sha256:<64 hex digits: that record's chain digest, zeros if none>
 * data.mdb and the marker are mode 0444 and the directory 0555: a
 * snapshot is read by workers, never written.
 */
#define STORE_SNAPSHOT_MARKER "rebuild-audit-snapshot"
#define STORE_SNAPSHOT_MAGIC "rebuild-audit snapshot v1"

struct store_snapshot_info {
	char store_id[2 * 16 + 1]; /* lowercase hex */
	uint64_t head_id;
	struct rba_digest head;
};

/*
 * Makes the snapshot directory out (which must not exist) from store s:
 * the copy is written into "<out>.tmp-<pid>", opened without locks to
 * read its own head and verify its history chain (so the marker says
 * what the copy holds, whatever was committed to s meanwhile), the
 * marker written, data.mdb synced, everything made read-only, and the
 * directory renamed to out.  *info (may be NULL) gets what the marker
 * says.  No transaction of s may be open.  On error nothing is left at
 * out and the temporary is removed.  Returns 0; RBA_E_EXISTS (out
 * exists); RBA_E_TAMPERED (the copy's history chain is broken: d says
 * how); RBA_E_STORE; ENAMETOOLONG; an errno (ENOSPC, EACCES, ...).
 */
int store_snapshot_make(struct store *s, const char *out,
			struct store_snapshot_info *info, struct rba_detail *d);

/*
 * Opens snapshot path read-only and without locks (MDB_RDONLY |
 * MDB_NOLOCK) for a worker.  Refused, before LMDB is opened, when it is
 * not a snapshot made by store_snapshot_make (no marker, or a marker
 * that does not parse: RBA_E_USAGE) or when the worker could write to it
 * by mistake: the directory, data.mdb or the marker has a write
 * permission bit, or (for a process that is not root) access(2) grants
 * this process write access (RBA_E_USAGE, d->reason says which file and
 * how to fix it).  Once open, the store's id and history head must be
 * the marker's (RBA_E_TAMPERED otherwise).  *out is set on success (close
 * it with store_close); *info (may be NULL) gets the marker's values.
 * Also the errors of store_open.
 */
int store_snapshot_open(const char *path, struct store **out,
			struct store_snapshot_info *info,
			struct rba_detail *d);

#endif
