/*
 * store_tlog.c - the log: the history's records as the leaves of an
 * RFC 6962 Merkle tree (store.h, "the log"; common/tlog.h the
 * arithmetic), its stored hashes kept in the "tlog" database
 * (store_priv.h lays it out), views of it for roots and proofs, and its
 * check against the records.
 */
#include "store/store_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_KEY "size"
#define SIZE_KEY_LEN 4
#define HASH_VAL_LEN (2 + RBA_DIGEST_LEN)
#define SIZE_VAL_LEN (2 + 8)

struct store_tlog {
	struct store_txn *txn;
	uint64_t kept;	  /* records the database's hashes cover */
	uint64_t size;	  /* records of the history */
	uint64_t base;	  /* tlog_stored_count(kept): the first computed index */
	struct rba_digest *extra; /* stored hashes from base on, computed */
	size_t nextra, cap;
};

/* The log's database in txn: 1 and *dbi when there is one. */
static int
tlog_dbi(struct store_txn *txn, MDB_dbi *dbi)
{
	if (txn->tlog_new) {
		*dbi = txn->tlog_dbi;
		return 1;
	}
	if (txn->s->has_tlog) {
		*dbi = txn->s->tlog_dbi;
		return 1;
	}
	return 0;
}

static int
size_read(struct store_txn *txn, uint64_t *size, struct rba_detail *d)
{
	MDB_dbi dbi;
	MDB_val k = { SIZE_KEY_LEN, (void *)SIZE_KEY }, v;
	struct rba_cursor c;
	int rc;

	*size = 0;
	if (!tlog_dbi(txn, &dbi))
		return 0;
	rc = mdb_get(txn->t, dbi, &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading the log");
	if ((rc = store_rec_open(&v, TAG_TLOG_SIZE, &c, "the log's size", d)) != 0)
		return rc;
	*size = rba_cursor_u64(&c);
	if (!rba_cursor_ok(&c) || c.left != 0)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"the log's size: malformed");
	return 0;
}

static int
hash_get(struct store_txn *txn, MDB_dbi dbi, uint64_t idx,
	 struct rba_digest *out, struct rba_detail *d)
{
	uint8_t key[8];
	MDB_val k = { 8, key }, v;
	int rc;

	store_be64(key, idx);
	rc = mdb_get(txn->t, dbi, &k, &v);
	if (rc == MDB_NOTFOUND)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"the log has no stored hash %llu",
				(unsigned long long)idx);
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading the log");
	if (v.mv_size != HASH_VAL_LEN || ((const uint8_t *)v.mv_data)[0] != TAG_TLOG_HASH ||
	    ((const uint8_t *)v.mv_data)[1] != STORE_FORMAT)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"the log's stored hash %llu is malformed",
				(unsigned long long)idx);
	memcpy(out->b, (const uint8_t *)v.mv_data + 2, RBA_DIGEST_LEN);
	return 0;
}

/* The reader of the database alone. */
static int
db_read(void *ctx, const uint64_t *idx, size_t n, struct rba_digest *out,
	struct rba_detail *d)
{
	struct store_txn *txn = ctx;
	MDB_dbi dbi;
	int rc;

	if (!tlog_dbi(txn, &dbi))
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"the store has no log");
	for (size_t i = 0; i < n; i++)
		if ((rc = hash_get(txn, dbi, idx[i], &out[i], d)) != 0)
			return rc;
	return 0;
}

/* The reader of a view: kept hashes from the database, the rest from
 * what the view computed. */
static int
view_read(void *ctx, const uint64_t *idx, size_t n, struct rba_digest *out,
	  struct rba_detail *d)
{
	struct store_tlog *tl = ctx;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (idx[i] < tl->base) {
			if ((rc = db_read(tl->txn, &idx[i], 1, &out[i], d)) != 0)
				return rc;
		} else if (idx[i] - tl->base < tl->nextra) {
			out[i] = tl->extra[idx[i] - tl->base];
		} else {
			return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
					"the log has no hash %llu",
					(unsigned long long)idx[i]);
		}
	}
	return 0;
}

static int
record_leaf(struct store_txn *txn, uint64_t id, struct rba_digest *leaf,
	    struct rba_detail *d)
{
	struct store_history_entry e;
	int rc = store_history_get(txn, id, &e, d);

	if (rc != 0)
		return rc;
	tlog_leaf_hash(e.record, e.len, leaf);
	store_history_entry_release(&e);
	return 0;
}

static int
extra_add(struct store_tlog *tl, const struct rba_digest *h, size_t n)
{
	if (tl->nextra + n > tl->cap) {
		size_t cap = tl->cap ? tl->cap * 2 : 256;
		struct rba_digest *p;
		while (cap < tl->nextra + n)
			cap *= 2;
		p = realloc(tl->extra, cap * sizeof(*p));
		if (p == NULL)
			return RBA_E_NOMEM;
		tl->extra = p;
		tl->cap = cap;
	}
	memcpy(tl->extra + tl->nextra, h, n * sizeof(*h));
	tl->nextra += n;
	return 0;
}

int
store_tlog_open(struct store_txn *txn, struct store_tlog **out,
		struct rba_detail *d)
{
	struct store_tlog *tl;
	struct rba_digest head, hs[64], leaf;
	size_t nh;
	int rc;

	*out = NULL;
	if ((rc = store_txn_check(txn, d)) != 0)
		return rc;
	tl = calloc(1, sizeof(*tl));
	if (tl == NULL)
		return RBA_E_NOMEM;
	tl->txn = txn;
	if ((rc = size_read(txn, &tl->kept, d)) != 0 ||
	    (rc = store_history_head(txn, &tl->size, &head, d)) != 0)
		goto fail;
	if (tl->kept > tl->size) {
		rc = rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
			      "tampered: the log holds %llu records but the "
			      "history %llu: the history was cut short",
			      (unsigned long long)tl->kept,
			      (unsigned long long)tl->size);
		goto fail;
	}
	tl->base = tlog_stored_count(tl->kept);
	/* What the store does not keep yet, from the records. */
	for (uint64_t i = tl->kept; i < tl->size; i++) {
		if ((rc = record_leaf(txn, i + 1, &leaf, d)) != 0 ||
		    (rc = tlog_stored_hashes(i, &leaf, view_read, tl, hs, &nh, d)) != 0 ||
		    (rc = extra_add(tl, hs, nh)) != 0)
			goto fail;
	}
	*out = tl;
	return 0;
fail:
	store_tlog_close(tl);
	return rc;
}

void
store_tlog_close(struct store_tlog *tl)
{
	if (tl == NULL)
		return;
	free(tl->extra);
	free(tl);
}

uint64_t
store_tlog_size(const struct store_tlog *tl)
{
	return tl->size;
}

uint64_t
store_tlog_kept(const struct store_tlog *tl)
{
	return tl->kept;
}

int
store_tlog_root(struct store_tlog *tl, uint64_t n, struct rba_digest *out,
		struct rba_detail *d)
{
	if (n > tl->size)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"the history holds %llu records, not %llu",
				(unsigned long long)tl->size,
				(unsigned long long)n);
	return tlog_tree_hash(n, view_read, tl, out, d);
}

int
store_tlog_prove_record(struct store_tlog *tl, uint64_t t, uint64_t id,
			struct rba_digest *proof, size_t *np,
			struct rba_detail *d)
{
	struct rba_digest leaf, kept;
	uint64_t idx;
	int rc;

	*np = 0;
	if (id == 0 || id > t || t > tl->size)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"no record %llu in a log of %llu records",
				(unsigned long long)id, (unsigned long long)t);
	idx = tlog_stored_index(0, id - 1);
	if ((rc = record_leaf(tl->txn, id, &leaf, d)) != 0 ||
	    (rc = view_read(tl, &idx, 1, &kept, d)) != 0)
		return rc;
	if (!rba_digest_equal(&leaf, &kept))
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
				"tampered: history record %llu is not the log's "
				"leaf %llu (the record was rewritten)",
				(unsigned long long)id,
				(unsigned long long)id - 1);
	return tlog_prove_record(t, id - 1, view_read, tl, proof, np, d);
}

int
store_tlog_prove_tree(struct store_tlog *tl, uint64_t t, uint64_t n,
		      struct rba_digest *proof, size_t *np,
		      struct rba_detail *d)
{
	*np = 0;
	if (n < 1 || n > t || t > tl->size)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"no consistency proof from %llu to %llu records "
				"in a log of %llu", (unsigned long long)n,
				(unsigned long long)t,
				(unsigned long long)tl->size);
	return tlog_prove_tree(t, n, view_read, tl, proof, np, d);
}

/* ---- appending ------------------------------------------------------- */

static int
hashes_put(struct store_txn *txn, MDB_dbi dbi, uint64_t first,
	   const struct rba_digest *h, size_t n, struct rba_detail *d)
{
	uint8_t key[8], val[HASH_VAL_LEN];
	MDB_val k = { 8, key }, v = { HASH_VAL_LEN, val };
	int rc;

	val[0] = TAG_TLOG_HASH;
	val[1] = STORE_FORMAT;
	for (size_t i = 0; i < n; i++) {
		store_be64(key, first + i);
		memcpy(val + 2, h[i].b, RBA_DIGEST_LEN);
		rc = mdb_put(txn->t, dbi, &k, &v, 0);
		if (rc != 0)
			return store_txn_fail(txn, d,
					      store_mdb_fail(d, rc, "adding to the log"));
	}
	return 0;
}

static int
size_put(struct store_txn *txn, MDB_dbi dbi, uint64_t size,
	 struct rba_detail *d)
{
	uint8_t val[SIZE_VAL_LEN];
	MDB_val k = { SIZE_KEY_LEN, (void *)SIZE_KEY }, v = { SIZE_VAL_LEN, val };
	int rc;

	val[0] = TAG_TLOG_SIZE;
	val[1] = STORE_FORMAT;
	rba_put_u64le(val + 2, size);
	rc = mdb_put(txn->t, dbi, &k, &v, 0);
	if (rc != 0)
		return store_txn_fail(txn, d,
				      store_mdb_fail(d, rc, "adding to the log"));
	return 0;
}

/* Adds leaf record index i (0-based) with leaf hash leaf. */
static int
leaf_add(struct store_txn *txn, MDB_dbi dbi, uint64_t i,
	 const struct rba_digest *leaf, struct rba_detail *d)
{
	struct rba_digest hs[64];
	size_t nh;
	int rc = tlog_stored_hashes(i, leaf, db_read, txn, hs, &nh, d);

	if (rc == 0)
		rc = hashes_put(txn, dbi, tlog_stored_index(0, i), hs, nh, d);
	return rc;
}

int
store_tlog_append(struct store_txn *txn, uint64_t id, const void *rec,
		  size_t n, struct rba_detail *d)
{
	struct rba_digest leaf;
	uint64_t kept, stop;
	MDB_dbi dbi;
	int rc;

	if (!tlog_dbi(txn, &dbi)) {
		rc = mdb_dbi_open(txn->t, STORE_TLOG_DB, MDB_CREATE, &dbi);
		if (rc != 0)
			return store_txn_fail(txn, d,
					      store_mdb_fail(d, rc, "creating the log"));
		txn->tlog_dbi = dbi;
		txn->tlog_new = 1;
	}
	if ((rc = size_read(txn, &kept, d)) != 0)
		return store_txn_fail(txn, d, rc);
	if (kept >= id)
		return store_txn_fail(txn, d,
				      rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
					       "tampered: the log holds %llu "
					       "records but the history %llu: "
					       "the history was cut short",
					       (unsigned long long)kept,
					       (unsigned long long)id - 1));
	/* Records an older tool appended, or all of a store made before
	 * the log: a bounded part per append, so that no one write grows
	 * past the room it was given. */
	stop = id - 1 - kept > STORE_TLOG_CATCHUP ? kept + STORE_TLOG_CATCHUP
						  : id - 1;
	for (; kept < stop; kept++) {
		if ((rc = record_leaf(txn, kept + 1, &leaf, d)) != 0 ||
		    (rc = leaf_add(txn, dbi, kept, &leaf, d)) != 0)
			return store_txn_fail(txn, d, rc);
	}
	if (kept == id - 1) {
		tlog_leaf_hash(rec, n, &leaf);
		if ((rc = leaf_add(txn, dbi, kept, &leaf, d)) != 0)
			return store_txn_fail(txn, d, rc);
		kept++;
	}
	return size_put(txn, dbi, kept, d);
}

/* ---- checking -------------------------------------------------------- */

/*
 * Recomputes the hashes of records 1..upto from the records and compares
 * each with the stored one; the stored hashes a computation reads were
 * all compared before, so reading them is reading the records'.
 */
static int
recompute(struct store_txn *txn, uint64_t upto, uint64_t *bad,
	  uint64_t *hashes, struct rba_detail *d)
{
	struct rba_digest leaf, hs[64], kept;
	MDB_dbi dbi;
	size_t nh;
	int rc;

	*bad = 0;
	if (upto > 0 && !tlog_dbi(txn, &dbi))
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0, "the store has no log");
	for (uint64_t i = 0; i < upto; i++) {
		uint64_t at = tlog_stored_index(0, i);
		if ((rc = record_leaf(txn, i + 1, &leaf, d)) != 0) {
			*bad = i + 1;
			return rc;
		}
		if ((rc = tlog_stored_hashes(i, &leaf, db_read, txn, hs, &nh, d)) != 0)
			return rc;
		for (size_t j = 0; j < nh; j++) {
			if ((rc = hash_get(txn, dbi, at + j, &kept, d)) != 0)
				return rc;
			if (hashes != NULL)
				(*hashes)++;
			if (!rba_digest_equal(&kept, &hs[j])) {
				*bad = i + 1;
				return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
						"tampered: history record %llu is "
						"not what the log holds (%s %llu "
						"differs): the record was "
						"rewritten",
						(unsigned long long)i + 1,
						j == 0 ? "its leaf hash" : "stored hash",
						(unsigned long long)(at + j));
			}
		}
	}
	return 0;
}

int
store_tlog_verify(struct store_txn *txn, uint64_t *bad, struct rba_detail *d)
{
	uint64_t kept, size, b = 0;
	struct rba_digest head;
	int rc;

	if (bad != NULL)
		*bad = 0;
	if ((rc = store_txn_check(txn, d)) != 0 ||
	    (rc = size_read(txn, &kept, d)) != 0 ||
	    (rc = store_history_head(txn, &size, &head, d)) != 0)
		return rc;
	if (kept > size) {
		if (bad != NULL)
			*bad = size + 1;
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
				"tampered: the log holds %llu records but the "
				"history %llu: the history was cut short",
				(unsigned long long)kept,
				(unsigned long long)size);
	}
	{
		/* Every stored hash of the size and the size record, and
		 * nothing else (store check names what is wrong). */
		MDB_dbi dbi;
		MDB_stat ms;
		if (tlog_dbi(txn, &dbi)) {
			if ((rc = mdb_stat(txn->t, dbi, &ms)) != 0)
				return store_mdb_fail(d, rc, "reading the log");
			if (ms.ms_entries != tlog_stored_count(kept) + (ms.ms_entries > 0))
				return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
						"the log holds %llu entries, not the %llu "
						"hashes of its %llu records and its size",
						(unsigned long long)ms.ms_entries,
						(unsigned long long)tlog_stored_count(kept),
						(unsigned long long)kept);
		}
	}
	rc = recompute(txn, kept, &b, NULL, d);
	if (bad != NULL)
		*bad = b;
	return rc;
}

int
store_tlog_check(struct store_txn *txn,
		 int (*finding)(void *ctx, const char *key, int err,
				const char *reason),
		 void *ctx, uint64_t *kept_out, uint64_t *hashes,
		 struct rba_detail *d)
{
	struct rba_detail hd;
	struct rba_digest head;
	MDB_cursor *cur;
	MDB_stat ms;
	MDB_val k, v;
	MDB_dbi dbi;
	uint64_t kept = 0, size = 0, walked = 0, bad = 0;
	char key[32], why[512];
	int rc, mrc;

	*kept_out = 0;
	*hashes = 0;
	if (!tlog_dbi(txn, &dbi))
		return 0; /* a store made before the log, never appended to */
	rba_detail_clear(&hd);
	rc = size_read(txn, &kept, &hd);
	if (rc == RBA_E_CORRUPT)
		return finding(ctx, SIZE_KEY, rc, hd.reason);
	if (rc != 0)
		return rc;
	if ((rc = store_history_head(txn, &size, &head, d)) != 0)
		return rc;
	*kept_out = kept;
	mrc = mdb_stat(txn->t, dbi, &ms);
	if (mrc == 0)
		mrc = mdb_cursor_open(txn->t, dbi, &cur);
	if (mrc != 0)
		return finding(ctx, "", RBA_E_CORRUPT, mdb_strerror(mrc));
	rc = 0;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0 && rc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		walked++;
		if (k.mv_size == SIZE_KEY_LEN && memcmp(k.mv_data, SIZE_KEY, SIZE_KEY_LEN) == 0)
			continue;
		if (k.mv_size != 8) {
			rc = finding(ctx, "", RBA_E_CORRUPT,
				     "a key that is no stored hash index");
			continue;
		}
		snprintf(key, sizeof(key), "%llu",
			 (unsigned long long)store_get_be64(k.mv_data));
		if (v.mv_size != HASH_VAL_LEN || ((const uint8_t *)v.mv_data)[0] != TAG_TLOG_HASH ||
		    ((const uint8_t *)v.mv_data)[1] != STORE_FORMAT)
			rc = finding(ctx, key, RBA_E_CORRUPT, "a malformed stored hash");
		else if (store_get_be64(k.mv_data) >= tlog_stored_count(kept))
			rc = finding(ctx, key, RBA_E_CORRUPT,
				     "a stored hash past the log's size");
	}
	mdb_cursor_close(cur);
	if (rc != 0)
		return rc;
	if (mrc != MDB_NOTFOUND)
		return finding(ctx, "", RBA_E_CORRUPT, mdb_strerror(mrc));
	if (walked != ms.ms_entries) {
		snprintf(why, sizeof(why), "LMDB counts %llu entries but %llu were walked",
			 (unsigned long long)ms.ms_entries, (unsigned long long)walked);
		return finding(ctx, "", RBA_E_CORRUPT, why);
	}
	if (kept > size) {
		snprintf(why, sizeof(why), "tampered: the log holds %llu records but "
			 "the history %llu: the history was cut short",
			 (unsigned long long)kept, (unsigned long long)size);
		return finding(ctx, SIZE_KEY, RBA_E_TAMPERED, why);
	}
	if (walked != tlog_stored_count(kept) + (kept > 0 || walked > 0 ? 1 : 0)) {
		snprintf(why, sizeof(why), "%llu entries, not the %llu hashes of %llu "
			 "records and the size", (unsigned long long)walked,
			 (unsigned long long)tlog_stored_count(kept),
			 (unsigned long long)kept);
		return finding(ctx, "", RBA_E_CORRUPT, why);
	}
	rba_detail_clear(&hd);
	rc = recompute(txn, kept, &bad, hashes, &hd);
	if (rc == RBA_E_NOMEM || rc == RBA_E_STORE)
		return rba_fail(d, rc, NULL, 0, 0, "%s", hd.reason);
	if (rc != 0) {
		snprintf(key, sizeof(key), "%llu", (unsigned long long)bad);
		return finding(ctx, bad ? key : "", rc, hd.reason);
	}
	return 0;
}
