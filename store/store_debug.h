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
void store_debug_blob_chunk_key(const struct rba_digest *digest,
				uint32_t chunk, uint8_t key[STORE_DEBUG_KEY_MAX],
				size_t *klen);

/* The key of chunk number chunk of version's sample (in "samples"). */
void store_debug_sample_chunk_key(const char *version, uint32_t chunk,
				  uint8_t key[STORE_DEBUG_KEY_MAX],
				  size_t *klen);

/* The key of the sample record of version (in "samples"). */
void store_debug_sample_info_key(const char *version,
				 uint8_t key[STORE_DEBUG_KEY_MAX],
				 size_t *klen);
/* The key of a sample's chunk-digest list record. */
void store_debug_sample_list_key(const char *version,
				 uint8_t key[STORE_DEBUG_KEY_MAX], size_t *klen);

/* The key of history record id (in "history"). */
void store_debug_history_key(uint64_t id, uint8_t key[8]);

/* The current size of s's memory map in bytes. */
uint64_t store_debug_map_size(struct store *s);

/* Number of entries in database dbname (0 on error). */
uint64_t store_debug_entries(struct store_txn *txn, const char *dbname);

#endif
