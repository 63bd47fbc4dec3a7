/*
 * store_debug.h - raw access to the store's databases, for unit tests
 * only: production code never includes this.  A test uses it to damage a
 * stored record (flip a byte of a chunk, forge a frame, write a newer
 * schema) and check that the readers of store.h notice.
 */
#ifndef RBA_STORE_DEBUG_H
#define RBA_STORE_DEBUG_H

#include <stddef.h>
#include <stdint.h>

#include "common/digest.h"
#include "common/rba.h"
#include "store/store.h"

#define STORE_DEBUG_KEY_MAX 511 /* LMDB's default key size limit */

/*
 * Byte offsets inside a chunk record (blob or sample): the SHA-256 of the
 * plaintext, then the zstd frame.
 */
#define STORE_DEBUG_CHUNK_DIGEST_OFF 2
#define STORE_DEBUG_CHUNK_FRAME_OFF (2 + 32 + 4 + 4)

/*
 * Puts val under key in the named database dbname ("meta", "blobs",
 * "versions", "samples", "history", "runs") of write transaction txn,
 * replacing what was there.  0; RBA_E_USAGE (unknown name, read
 * transaction); RBA_E_STORE.
 */
int store_debug_put_raw(struct store_txn *txn, const char *dbname,
			const void *key, size_t klen, const void *val,
			size_t vlen, struct rba_detail *d);

/*
 * Copies the value under key into a malloc'd buffer *val (caller frees).
 * 0; RBA_E_NOTFOUND; RBA_E_USAGE; RBA_E_NOMEM; RBA_E_STORE.
 */
int store_debug_get_raw(struct store_txn *txn, const char *dbname,
			const void *key, size_t klen, uint8_t **val,
			size_t *vlen, struct rba_detail *d);

/* Deletes key.  0; RBA_E_NOTFOUND; RBA_E_USAGE; RBA_E_STORE. */
int store_debug_del_raw(struct store_txn *txn, const char *dbname,
			const void *key, size_t klen, struct rba_detail *d);

/* The key of chunk number chunk of a blob (in "blobs"). */
/*
 * Recomputes the seal at the end of a chunk record of n bytes (format 2;
 * others are left alone), as a forger who edits a chunk would: so tests
 * reach the checks behind the seal (frame header, plaintext digest).
 */
void store_debug_chunk_reseal(uint8_t *v, size_t n);
/* A chunk record's format byte of the records written before the seal
 * (no seal at the end), for tests of that reader. */
#define STORE_DEBUG_CHUNK_FORMAT_UNSEALED 1
void store_debug_blob_chunk_key(const struct rba_digest *digest,
				uint32_t chunk, uint8_t key[STORE_DEBUG_KEY_MAX],
				size_t *klen);

/* The keys below name records of generation gen of a sample (0 for a
 * version's first sample; a replacement is written at 1, then at 0
 * again: store_sample_info's generation). */

/* The key of chunk number chunk of version's sample (in "samples"). */
void store_debug_sample_chunk_key(const char *version, uint32_t gen,
				  uint32_t chunk,
				  uint8_t key[STORE_DEBUG_KEY_MAX],
				  size_t *klen);

/* The key of the sample record of version (in "samples"). */
void store_debug_sample_info_key(const char *version,
				 uint8_t key[STORE_DEBUG_KEY_MAX],
				 size_t *klen);
/* The key of case_id's case-index entry in version's sample; returns its
 * length. */
size_t store_debug_sample_case_key(const char *version, uint32_t gen,
				   const char *case_id,
				   uint8_t key[STORE_DEBUG_KEY_MAX]);
/* The key of a sample's chunk-digest list record. */
void store_debug_sample_list_key(const char *version, uint32_t gen,
				 uint8_t key[STORE_DEBUG_KEY_MAX], size_t *klen);

/* The key of history record id (in "history"). */
void store_debug_history_key(uint64_t id, uint8_t key[8]);

/*
 * Deletes the log's database ("tlog") in write transaction txn, as in a
 * store made before the log: commit it and open the store again.  0;
 * RBA_E_NOTFOUND (none); RBA_E_USAGE; RBA_E_STORE.
 */
int store_debug_tlog_drop(struct store_txn *txn, struct rba_detail *d);

/* The current size of s's memory map in bytes. */
uint64_t store_debug_map_size(struct store *s);

/* Number of entries in database dbname (0 on error). */
uint64_t store_debug_entries(struct store_txn *txn, const char *dbname);

#endif
