/* store_debug.c - raw database access for unit tests (store_debug.h). */
#include "store/store_debug.h"

#include <stdlib.h>
#include <string.h>

#include "store/store_priv.h"

_Static_assert(STORE_DEBUG_CHUNK_FRAME_OFF == CHUNK_HDR,
	       "chunk layout and store_debug.h disagree");
_Static_assert(SAMPLE_KEY_MAX <= STORE_DEBUG_KEY_MAX, "sample keys too long");

static int
db_index(const char *dbname, struct rba_detail *d)
{
	for (int i = 0; i < DB_COUNT; i++)
		if (dbname != NULL && strcmp(dbname, store_db_names[i]) == 0)
			return i;
	return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "no database '%s'",
			dbname ? dbname : "");
}

int
store_debug_put_raw(struct store_txn *txn, const char *dbname,
		    const void *key, size_t klen, const void *val, size_t vlen,
		    struct rba_detail *d)
{
	int db = db_index(dbname, d);
	int rc = db < 0 ? db : store_txn_writable(txn, d);

	if (rc != 0)
		return rc;
	return store_put(txn, (enum store_db)db, key, klen, val, vlen, 0,
			 "raw put", d);
}

int
store_debug_get_raw(struct store_txn *txn, const char *dbname,
		    const void *key, size_t klen, uint8_t **val, size_t *vlen,
		    struct rba_detail *d)
{
	int db = db_index(dbname, d);
	int rc = db < 0 ? db : store_txn_check(txn, d);
	MDB_val v;

	*val = NULL;
	*vlen = 0;
	if (rc == 0)
		rc = store_get(txn, (enum store_db)db, key, klen, &v, d);
	if (rc != 0)
		return rc;
	*val = malloc(v.mv_size + 1);
	if (*val == NULL)
		return RBA_E_NOMEM;
	memcpy(*val, v.mv_data, v.mv_size);
	*vlen = v.mv_size;
	return 0;
}

int
store_debug_del_raw(struct store_txn *txn, const char *dbname,
		    const void *key, size_t klen, struct rba_detail *d)
{
	int db = db_index(dbname, d);
	int rc = db < 0 ? db : store_txn_writable(txn, d);

	if (rc != 0)
		return rc;
	return store_del(txn, (enum store_db)db, key, klen, "raw delete", d);
}

void
store_debug_chunk_reseal(uint8_t *v, size_t n)
{
	struct rba_digest seal;

	if (n <= CHUNK_HDR + SEAL_LEN ||
	    (v[0] != TAG_BLOB_CHUNK && v[0] != TAG_SAMPLE_CHUNK) ||
	    v[1] != STORE_CHUNK_FORMAT)
		return;
	rba_digest_bytes(v, n - SEAL_LEN, &seal);
	memcpy(v + n - SEAL_LEN, seal.b, SEAL_LEN);
}

void
store_debug_blob_chunk_key(const struct rba_digest *digest, uint32_t chunk,
			   uint8_t key[STORE_DEBUG_KEY_MAX], size_t *klen)
{
	store_blob_chunk_key(digest, chunk, key);
	*klen = BLOB_CHUNK_KEY_LEN;
}

void
store_debug_sample_chunk_key(const char *version, uint32_t gen, uint32_t chunk,
			     uint8_t key[STORE_DEBUG_KEY_MAX], size_t *klen)
{
	*klen = store_sample_key(version, gen, SK_CHUNK, chunk, NULL, key);
}

void
store_debug_sample_info_key(const char *version,
			    uint8_t key[STORE_DEBUG_KEY_MAX], size_t *klen)
{
	*klen = store_sample_key(version, 0, SK_INFO, 0, NULL, key);
}

size_t
store_debug_sample_case_key(const char *version, uint32_t gen,
			    const char *case_id,
			    uint8_t key[STORE_DEBUG_KEY_MAX])
{
	return store_sample_key(version, gen, SK_CASE, 0, case_id, key);
}

void
store_debug_sample_list_key(const char *version, uint32_t gen,
			    uint8_t key[STORE_DEBUG_KEY_MAX], size_t *klen)
{
	*klen = store_sample_key(version, gen, SK_LIST, 0, NULL, key);
}

void
store_debug_history_key(uint64_t id, uint8_t key[8])
{
	store_be64(key, id);
}

uint64_t
store_debug_map_size(struct store *s)
{
	MDB_envinfo info;

	if (mdb_env_info(s->env, &info) != 0)
		return 0;
	return info.me_mapsize;
}

uint64_t
store_debug_entries(struct store_txn *txn, const char *dbname)
{
	MDB_stat st;
	int db = db_index(dbname, NULL);

	if (db < 0 || mdb_stat(txn->t, store_dbi(txn, (enum store_db)db), &st))
		return 0;
	return st.ms_entries;
}

int
store_debug_tlog_drop(struct store_txn *txn, struct rba_detail *d)
{
	MDB_dbi dbi;
	int rc = store_txn_writable(txn, d);

	if (rc != 0)
		return rc;
	if (txn->tlog_new)
		dbi = txn->tlog_dbi;
	else if (txn->s->has_tlog)
		dbi = txn->s->tlog_dbi;
	else
		return RBA_E_NOTFOUND;
	rc = mdb_drop(txn->t, dbi, 1);
	if (rc != 0)
		return store_txn_fail(txn, d, store_mdb_fail(d, rc, "dropping the log"));
	txn->tlog_new = 0;
	txn->s->has_tlog = 0;
	return 0;
}
