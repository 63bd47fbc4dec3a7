/*
 * store_meta.c - LMDB's own bookkeeping, checked: the two meta pages and
 * the page count.  LMDB trusts them: a damaged transaction id makes it
 * open the previous commit (a silent rollback), a damaged last page
 * number makes the next write overwrite live pages.  Both are caught
 * here, at every open, by what LMDB itself keeps consistent:
 *  - each meta page has its page number, the meta flag, no fixed map
 *    address, a map size that is a multiple of the page size, covers the
 *    pages in use and is the one this tool recorded at its last commit;
 *  - the two meta pages hold consecutive transaction ids, the newer one
 *    being the snapshot a read transaction sees;
 *  - every page up to the last one in use is a meta page, a page of a
 *    database or a free page (LMDB's mdb_audit, in its debug builds).
 * Layouts are LMDB 0.9's (lmdb.h's MDB_meta, MDB_db; 64-bit pgno_t).
 */
#include "store/store_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u
#define P_META_FLAG 0x08u
#define PAGE_HDR 16 /* pgno, pad, flags, lower/upper */
#define META_OFF PAGE_HDR
/* Offsets inside MDB_meta. */
#define M_MAGIC 0
#define M_VERSION 4
#define M_ADDRESS 8
#define M_MAPSIZE 16
#define M_DBS 24   /* two MDB_db of DB_SIZE bytes */
#define DB_SIZE 48 /* pad4 flags2 depth2 branch8 leaf8 overflow8 entries8 root8 */
#define M_LAST_PG (M_DBS + 2 * DB_SIZE)
#define M_TXNID (M_LAST_PG + 8)
#define CHECK_TRIES 8

struct raw_meta {
	uint64_t pgno, mapsize, address, last_pg, txnid;
	uint32_t magic, version;
	uint16_t flags;
	uint64_t free_pages; /* the free database's own pages */
};

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void
raw_decode(const uint8_t *p, struct raw_meta *m)
{
	const uint8_t *mm = p + META_OFF, *fdb = mm + M_DBS;

	m->pgno = get64(p);
	m->flags = (uint16_t)(p[10] | p[11] << 8);
	m->magic = rba_get_u32le(mm + M_MAGIC);
	m->version = rba_get_u32le(mm + M_VERSION);
	m->address = get64(mm + M_ADDRESS);
	m->mapsize = get64(mm + M_MAPSIZE);
	m->free_pages = get64(fdb + 8) + get64(fdb + 16) + get64(fdb + 24);
	m->last_pg = get64(mm + M_LAST_PG);
	m->txnid = get64(mm + M_TXNID);
}

/* Reads both meta pages of the data file. */
static int
raw_read(struct store *s, size_t psize, struct raw_meta m[2],
	 struct rba_detail *d)
{
	char path[4096 + 16];
	uint8_t *buf = malloc(2 * psize);
	ssize_t n;
	int fd;

	if (buf == NULL)
		return RBA_E_NOMEM;
	snprintf(path, sizeof(path), "%s/data.mdb", s->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(buf);
		return rba_fail(d, e, NULL, 0, 0, "reading the meta pages: %s",
				strerror(e));
	}
	n = pread(fd, buf, 2 * psize, 0);
	close(fd);
	if (n != (ssize_t)(2 * psize)) {
		free(buf);
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"damaged: the data file is shorter than its two "
				"meta pages");
	}
	raw_decode(buf, &m[0]);
	raw_decode(buf + psize, &m[1]);
	free(buf);
	return 0;
}

/* The pages the snapshot of t accounts for: databases and free pages. */
static int
pages_in_use(MDB_txn *t, uint64_t free_db_pages, uint64_t *out,
	     struct rba_detail *d)
{
	MDB_cursor *cur;
	MDB_val k, v;
	MDB_stat ms;
	MDB_dbi main_dbi;
	uint64_t n = 2 + free_db_pages; /* the meta pages, the free db */
	int rc;

	rc = mdb_dbi_open(t, NULL, 0, &main_dbi);
	if (rc == 0)
		rc = mdb_stat(t, main_dbi, &ms);
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading the main database");
	n += ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages;
	/* Each named database: its MDB_db record in the main database. */
	rc = mdb_cursor_open(t, main_dbi, &cur);
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading the main database");
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
		const uint8_t *db = v.mv_data;
		if (v.mv_size != DB_SIZE) {
			mdb_cursor_close(cur);
			return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
					"damaged: the main database holds a "
					"record that is no database");
		}
		n += get64(db + 8) + get64(db + 16) + get64(db + 24);
	}
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return store_mdb_fail(d, rc, "reading the main database");
	/* The free pages: each free-list record is a list whose first word
	 * is its length (LMDB's IDL). */
	rc = mdb_cursor_open(t, 0 /* FREE_DBI */, &cur);
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading the free list");
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
		uint64_t cnt;
		if (v.mv_size < 8) {
			mdb_cursor_close(cur);
			return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
					"damaged: a free-list record is malformed");
		}
		cnt = get64(v.mv_data);
		if (cnt > (v.mv_size - 8) / 8) {
			mdb_cursor_close(cur);
			return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
					"damaged: a free-list record is malformed");
		}
		n += cnt;
	}
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return store_mdb_fail(d, rc, "reading the free list");
	*out = n;
	return 0;
}

/* The map size this tool recorded at its last commit, or 0. */
static uint64_t
recorded_mapsize(MDB_txn *t, MDB_dbi meta)
{
	MDB_val k = { 7, "mapsize" }, v;
	const uint8_t *p;

	if (mdb_get(t, meta, &k, &v) != 0 || v.mv_size != 10)
		return 0;
	p = v.mv_data;
	if (p[0] != TAG_META_MAPSIZE || p[1] != STORE_FORMAT)
		return 0;
	return get64(p + 2);
}

int
store_mapsize_record(MDB_txn *t, MDB_dbi meta, MDB_env *env)
{
	MDB_envinfo info;
	uint8_t rec[10];
	MDB_val k = { 7, "mapsize" }, v = { sizeof(rec), rec };
	uint64_t size;
	int rc = mdb_env_info(env, &info);

	if (rc != 0)
		return rc;
	size = (uint64_t)info.me_mapsize;
	rec[0] = TAG_META_MAPSIZE;
	rec[1] = STORE_FORMAT;
	for (int i = 0; i < 8; i++)
		rec[2 + i] = (uint8_t)(size >> (8 * i));
	if (mdb_get(t, meta, &k, &v) == 0 && v.mv_size == sizeof(rec) &&
	    memcmp(v.mv_data, rec, sizeof(rec)) == 0)
		return 0;
	v.mv_data = rec;
	v.mv_size = sizeof(rec);
	return mdb_put(t, meta, &k, &v, 0);
}

/* One try: 0, RBA_E_BUSY when a writer raced the reads, or damage. */
static int
check_once(struct store *s, struct rba_detail *d)
{
	struct raw_meta m[2];
	MDB_txn *t = NULL;
	MDB_stat es;
	uint64_t txnid, in_use = 0, rec;
	size_t psize;
	int rc, cur;

	rc = mdb_env_stat(s->env, &es);
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading the environment");
	psize = es.ms_psize;
	rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &t);
	if (rc != 0)
		return store_mdb_fail(d, rc, "beginning a transaction");
	txnid = (uint64_t)mdb_txn_id(t);
	rc = raw_read(s, psize, m, d);
	if (rc != 0)
		goto out;
	for (int i = 0; i < 2; i++) {
		if (m[i].pgno != (uint64_t)i || !(m[i].flags & P_META_FLAG) ||
		    m[i].magic != LMDB_MAGIC || m[i].version != LMDB_DATA_VERSION ||
		    m[i].address != 0 || m[i].mapsize % psize != 0 ||
		    m[i].mapsize < (m[i].last_pg + 1) * psize) {
			rc = rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				      "damaged: LMDB meta page %d is malformed", i);
			goto out;
		}
	}
	cur = m[0].txnid == txnid ? 0 : m[1].txnid == txnid ? 1 : -1;
	if (cur < 0 || m[1 - cur].txnid + 1 != txnid) {
		/* A writer may have committed since the transaction began;
		 * a second try tells that from damage. */
		rc = RBA_E_BUSY;
		goto out;
	}
	if ((rec = recorded_mapsize(t, s->dbi[DB_META])) != 0 &&
	    rec != m[cur].mapsize) {
		rc = rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
			      "damaged: LMDB's meta page records a map size of "
			      "%llu bytes where the last commit set %llu",
			      (unsigned long long)m[cur].mapsize,
			      (unsigned long long)rec);
		goto out;
	}
	rc = pages_in_use(t, m[cur].free_pages, &in_use, d);
	if (rc == 0 && in_use != m[cur].last_pg + 1)
		rc = rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
			      "damaged: LMDB's meta page says %llu pages are in "
			      "use, its databases and free list account for %llu",
			      (unsigned long long)(m[cur].last_pg + 1),
			      (unsigned long long)in_use);
out:
	mdb_txn_abort(t);
	return rc;
}

int
store_lmdb_check(struct store *s, struct rba_detail *d)
{
	int rc = RBA_E_BUSY;

	for (int i = 0; i < CHECK_TRIES && rc == RBA_E_BUSY; i++) {
		rba_detail_clear(d);
		rc = check_once(s, d);
		if (rc == RBA_E_BUSY && i + 1 < CHECK_TRIES)
			usleep(1000u << (i < 6 ? i : 6));
	}
	if (rc == RBA_E_BUSY)
		rc = rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
			      "damaged: LMDB's two meta pages do not hold "
			      "consecutive transactions (a damaged transaction "
			      "id opens an older commit)");
	return rc;
}
