/* store.c - the LMDB environment, transactions, map growth, meta. */
#include "store/store_priv.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "common/rbatime.h"

const char *const store_db_names[DB_COUNT] = {
	"meta", "blobs", "versions", "samples", "history", "runs",
};

#define MAPSIZE_DEFAULT ((uint64_t)256 << 20)
#define MAPSIZE_MIN ((uint64_t)1 << 20)
#define MAPSIZE_MAX ((uint64_t)1 << 40)
/* Room for the named databases plus a spare, for later schemas. */
#define STORE_MAXDBS 16
#define ENV_FLAGS MDB_NOTLS
/* Attempts at a write begin that keeps finding the map too small or
 * resized by another process. */
#define BEGIN_TRIES 16
/* A file system with less room than this after a short write is full
 * (LMDB writes in pages and runs of pages: a short one used the rest). */
#define STORE_FULL_ROOM ((uint64_t)1 << 20)

/* ---- errors ---------------------------------------------------------- */

int
store_mdb_fail(struct rba_detail *d, int rc, const char *what)
{
	int err;

	switch (rc) {
	case MDB_MAP_FULL:
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"%s: the store's map is full (retry with a "
				"larger size hint)", what);
	case MDB_TXN_FULL:
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"%s: transaction too large: %s", what,
				mdb_strerror(rc));
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:
	case MDB_INVALID:
	case MDB_INCOMPATIBLE:
		err = RBA_E_CORRUPT;
		break;
	case MDB_VERSION_MISMATCH:
		err = RBA_E_UNSUPPORTED;
		break;
	case MDB_READERS_FULL:
		err = RBA_E_BUSY;
		break;
	default:
		err = rc > 0 ? rc : RBA_E_STORE;
		break;
	}
	return rba_fail(d, err, NULL, 0, 0, "%s: %s", what, mdb_strerror(rc));
}

/* Free bytes at path, for this process (root may use the reserve). */
static int
room_left(const char *path, uint64_t *bytes)
{
	struct statvfs v;

	if (statvfs(path, &v) != 0)
		return -1;
	*bytes = (uint64_t)(geteuid() == 0 ? v.f_bfree : v.f_bavail) * v.f_frsize;
	return 0;
}

int
store_write_fail(struct rba_detail *d, int rc, const char *what,
		 const char *path, int store)
{
	uint64_t room;

	if (rc <= 0)
		return store_mdb_fail(d, rc, what);
	/* LMDB says EIO when pwrite wrote less than asked, which is what a
	 * file system does as it fills up. */
	if (rc == EIO && room_left(path, &room) == 0 && room < STORE_FULL_ROOM)
		rc = ENOSPC;
	return rba_fail(d, rc, NULL, 0, 0, "writing %s'%s': %s",
			store ? "the store " : "", path, rba_strerror(rc));
}

/* store_write_fail at the directory of env. */
static int
env_write_fail(MDB_env *env, struct rba_detail *d, int rc, const char *what)
{
	const char *path = NULL;

	if (mdb_env_get_path(env, &path) != 0 || path == NULL)
		return store_mdb_fail(d, rc, what);
	return store_write_fail(d, rc, what, path, 1);
}

int
store_txn_fail(struct store_txn *txn, struct rba_detail *d, int err)
{
	if (txn->err == 0) {
		txn->err = err;
		snprintf(txn->why, sizeof(txn->why), "%s",
			 d != NULL ? d->reason : rba_strerror(err));
	}
	return err;
}

int
store_txn_check(struct store_txn *txn, struct rba_detail *d)
{
	if (txn == NULL)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "no transaction");
	if (txn->err == 0)
		return 0;
	return rba_fail(d, txn->err, NULL, 0, 0,
			"the transaction failed earlier: %s", txn->why);
}

int
store_txn_writable(struct store_txn *txn, struct rba_detail *d)
{
	int rc = store_txn_check(txn, d);

	if (rc != 0)
		return rc;
	if (!txn->write)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"a write needs a write transaction");
	return 0;
}

void
store_txn_link(struct store_txn *txn, struct store_wlink *l)
{
	l->txn = txn;
	l->next = txn->writers;
	txn->writers = l;
}

void
store_txn_unlink(struct store_wlink *l)
{
	struct store_wlink **pp;

	if (l->txn == NULL)
		return;
	for (pp = &l->txn->writers; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	l->txn = NULL;
	l->next = NULL;
}

MDB_dbi
store_dbi(struct store_txn *txn, enum store_db db)
{
	return txn->s->dbi[db];
}

int
store_put(struct store_txn *txn, enum store_db db, const void *k,
	  size_t klen, const void *v, size_t vlen, unsigned flags,
	  const char *what, struct rba_detail *d)
{
	MDB_val key = { klen, (void *)k }, val = { vlen, (void *)v };
	int rc = mdb_put(txn->t, store_dbi(txn, db), &key, &val, flags);

	if (rc == 0)
		return 0;
	if (rc == MDB_KEYEXIST && (flags & MDB_NOOVERWRITE))
		return RBA_E_EXISTS; /* the caller decides what that means */
	return store_txn_fail(txn, d, store_mdb_fail(d, rc, what));
}

int
store_get(struct store_txn *txn, enum store_db db, const void *k,
	  size_t klen, MDB_val *v, struct rba_detail *d)
{
	MDB_val key = { klen, (void *)k };
	int rc = mdb_get(txn->t, store_dbi(txn, db), &key, v);

	if (rc == 0)
		return 0;
	if (rc == MDB_NOTFOUND)
		return RBA_E_NOTFOUND;
	return store_mdb_fail(d, rc, "reading the store");
}

int
store_del(struct store_txn *txn, enum store_db db, const void *k,
	  size_t klen, const char *what, struct rba_detail *d)
{
	MDB_val key = { klen, (void *)k };
	int rc = mdb_del(txn->t, store_dbi(txn, db), &key, NULL);

	if (rc == 0)
		return 0;
	if (rc == MDB_NOTFOUND)
		return RBA_E_NOTFOUND;
	return store_txn_fail(txn, d, store_mdb_fail(d, rc, what));
}

/* ---- records --------------------------------------------------------- */

void
store_rec_start(struct rba_buf *b, uint8_t tag)
{
	rba_buf_put_u8(b, tag);
	rba_buf_put_u8(b, STORE_FORMAT);
}

void
store_rec_seal(struct rba_buf *b)
{
	struct rba_digest seal;

	if (rba_buf_status(b) != 0)
		return;
	rba_digest_bytes(b->p, b->len, &seal);
	rba_buf_put(b, seal.b, SEAL_LEN);
}

static int
rec_head_format(const MDB_val *v, uint8_t tag, size_t extra,
		uint8_t max_format, const char *what, struct rba_detail *d)
{
	const uint8_t *p = v->mv_data;

	if (v->mv_size < 2 + extra)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"%s: record too short (%zu bytes)", what,
				v->mv_size);
	if (p[0] != tag)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"%s: unknown record type 0x%02x", what, p[0]);
	if (p[1] < STORE_FORMAT || p[1] > max_format)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"%s: unknown record format %u", what, p[1]);
	return 0;
}

static int
rec_head(const MDB_val *v, uint8_t tag, size_t extra, const char *what,
	 struct rba_detail *d)
{
	return rec_head_format(v, tag, extra, STORE_FORMAT, what, d);
}

int
store_rec_open_sealed_format(const MDB_val *v, uint8_t tag,
			     uint8_t max_format, uint8_t *format,
			     struct rba_cursor *c, const char *what,
			     struct rba_detail *d)
{
	struct rba_digest want, got;
	int rc = rec_head_format(v, tag, SEAL_LEN, max_format, what, d);

	if (rc != 0)
		return rc;
	if (format != NULL)
		*format = ((const uint8_t *)v->mv_data)[1];
	rba_digest_bytes(v->mv_data, v->mv_size - SEAL_LEN, &got);
	memcpy(want.b, (const uint8_t *)v->mv_data + v->mv_size - SEAL_LEN,
	       SEAL_LEN);
	if (!rba_digest_equal(&want, &got))
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
				"tampered: %s does not match its seal", what);
	rba_cursor_init(c, (const uint8_t *)v->mv_data + 2,
			v->mv_size - 2 - SEAL_LEN);
	return 0;
}

int
store_rec_open_sealed(const MDB_val *v, uint8_t tag, struct rba_cursor *c,
		      const char *what, struct rba_detail *d)
{
	return store_rec_open_sealed_format(v, tag, STORE_FORMAT, NULL, c,
					    what, d);
}

int
store_rec_open(const MDB_val *v, uint8_t tag, struct rba_cursor *c,
	       const char *what, struct rba_detail *d)
{
	int rc = rec_head(v, tag, 0, what, d);

	if (rc != 0)
		return rc;
	rba_cursor_init(c, (const uint8_t *)v->mv_data + 2, v->mv_size - 2);
	return 0;
}

char *
store_cursor_cstr(struct rba_cursor *c, size_t max)
{
	size_t n;
	const char *s = rba_cursor_lstr(c, max, &n);
	char *r;

	if (s == NULL)
		return NULL;
	if (memchr(s, 0, n) != NULL) { /* would cut the C string short */
		c->bad = 1;
		return NULL;
	}
	r = malloc(n + 1);
	if (r == NULL) {
		c->bad = 1;
		return NULL;
	}
	memcpy(r, s, n);
	r[n] = 0;
	return r;
}

int
store_name_check(const char *name, size_t max, const char *what,
		 struct rba_detail *d)
{
	size_t n;

	if (name == NULL || name[0] == 0)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "empty %s", what);
	n = strlen(name);
	if (n > max) {
		rba_detail_key(d, name);
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"%s is %zu bytes, more than %zu", what, n, max);
	}
	return 0;
}

int64_t
store_now(void)
{
	return (int64_t)time(NULL);
}

void
store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void
store_be64(uint8_t *p, uint64_t v)
{
	store_be32(p, (uint32_t)(v >> 32));
	store_be32(p + 4, (uint32_t)v);
}

uint32_t
store_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

uint64_t
store_get_be64(const uint8_t *p)
{
	return (uint64_t)store_get_be32(p) << 32 | store_get_be32(p + 4);
}

/* ---- map size -------------------------------------------------------- */

/* The initial map size: STORE_MAPSIZE_ENV or the default. */
static int
mapsize_setting(uint64_t *out, struct rba_detail *d)
{
	const char *s = getenv(STORE_MAPSIZE_ENV);
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	*out = MAPSIZE_DEFAULT;
	if (s == NULL || s[0] == 0)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno != 0 || s[0] == '-')
		goto bad;
	switch (*end) {
	case 'k': case 'K': mul = 1024; end++; break;
	case 'm': case 'M': mul = 1024 * 1024; end++; break;
	case 'g': case 'G': mul = 1024 * 1024 * 1024; end++; break;
	case 0: break;
	default: goto bad;
	}
	if (*end != 0 || v > MAPSIZE_MAX / mul)
		goto bad;
	v *= mul;
	if (v < MAPSIZE_MIN || v > MAPSIZE_MAX)
		goto bad;
	*out = v;
	return 0;
bad:
	return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
			"%s='%s': not a size between 1m and 1024g",
			STORE_MAPSIZE_ENV, s);
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---- environment ----------------------------------------------------- */

static int
env_create(MDB_env **out, uint64_t mapsize, struct rba_detail *d)
{
	MDB_env *env;
	int rc = mdb_env_create(&env);

	if (rc != 0)
		return store_mdb_fail(d, rc, "creating the environment");
	rc = mdb_env_set_maxdbs(env, STORE_MAXDBS);
	if (rc == 0 && mapsize != 0)
		rc = mdb_env_set_mapsize(env, (size_t)mapsize);
	if (rc != 0) {
		mdb_env_close(env);
		return store_mdb_fail(d, rc, "configuring the environment");
	}
	*out = env;
	return 0;
}

/* mkdir -p: parents 0755, the last component mode. */
static int
make_dirs(const char *path, mode_t mode)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(tmp))
		return ENAMETOOLONG;
	memcpy(tmp, path, n + 1);
	while (n > 1 && tmp[n - 1] == '/') /* "st/" makes st with mode */
		tmp[--n] = 0;
	for (char *p = tmp + 1; *p != 0; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return errno;
	return 0;
}

/* 0 when dir is empty or only has LMDB files; ENOTEMPTY; an errno. */
static int
dir_state(const char *path, int *has_data)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	int other = 0;

	*has_data = 0;
	if (dir == NULL)
		return errno;
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (strcmp(e->d_name, "data.mdb") == 0)
			*has_data = 1;
		else if (strcmp(e->d_name, "lock.mdb") != 0 &&
			 strcmp(e->d_name, STORE_WRITE_LOCK) != 0)
			other = 1;
	}
	closedir(dir);
	return other && !*has_data ? ENOTEMPTY : 0;
}

static int
meta_put(MDB_txn *t, MDB_dbi dbi, const char *key, const struct rba_buf *b)
{
	MDB_val k = { strlen(key), (void *)key }, v = { b->len, b->p };

	if (rba_buf_status(b) != 0)
		return ENOMEM;
	return mdb_put(t, dbi, &k, &v, 0);
}

/* Creates the named databases and the meta records in t. */
static int
init_records(MDB_txn *t, struct rba_detail *d)
{
	MDB_dbi dbi[DB_COUNT];
	uint8_t id[STORE_ID_LEN];
	struct rba_buf b;
	int rc;

	for (int i = 0; i < DB_COUNT; i++) {
		rc = mdb_dbi_open(t, store_db_names[i], MDB_CREATE, &dbi[i]);
		if (rc != 0)
			return store_mdb_fail(d, rc, "creating a database");
	}
	if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
		return rba_fail(d, errno ? errno : EIO, NULL, 0, 0,
				"getrandom: %s", strerror(errno));
	rba_buf_init(&b);
	store_rec_start(&b, TAG_META_SCHEMA);
	rba_buf_put_u32(&b, STORE_SCHEMA);
	rc = meta_put(t, dbi[DB_META], "schema", &b);
	b.len = 0;
	store_rec_start(&b, TAG_META_ID);
	rba_buf_put(&b, id, sizeof(id));
	if (rc == 0)
		rc = meta_put(t, dbi[DB_META], "store_id", &b);
	rba_buf_release(&b);
	if (rc != 0)
		return store_mdb_fail(d, rc, "writing meta");
	return 0;
}

/*
 * The seal of the meta records that never change (schema, store id,
 * creation time): SHA-256 over their values in that order.  Meta is
 * otherwise unsealed so that any later tool can read the schema.
 */
int
store_meta_seal(MDB_txn *t, MDB_dbi meta, struct rba_digest *out)
{
	static const char *const keys[] = {"schema", "store_id", "created"};
	struct rba_hasher h;
	MDB_val k, v;
	int rc;

	rba_hasher_init(&h);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		k.mv_data = (void *)keys[i];
		k.mv_size = strlen(keys[i]);
		rc = mdb_get(t, meta, &k, &v);
		if (rc != 0)
			return rc;
		rba_hasher_update(&h, v.mv_data, v.mv_size);
	}
	rba_hasher_final(&h, out);
	return 0;
}

/* Writes the meta seal record ("meta_seal": tag, format, digest). */
static int
meta_seal_put(MDB_txn *t, MDB_dbi meta, struct rba_buf *b)
{
	struct rba_digest dg;
	int rc = store_meta_seal(t, meta, &dg);

	if (rc != 0)
		return rc;
	b->len = 0;
	store_rec_start(b, TAG_META_SEAL);
	rba_buf_put(b, dg.b, RBA_DIGEST_LEN);
	return meta_put(t, meta, "meta_seal", b);
}

/*
 * Writes the creation time in a transaction of its own.  Called twice
 * after the first: their copy-on-write frees pages, so the first real
 * command finds a usable free list (LMDB reuses pages freed by a
 * transaction only two transactions later).  LMDB returns the memory
 * and pages of records deleted in a transaction (a blob's temporary
 * chunks) to that transaction only when it has such a list; without it
 * the first snapshot added to a new store would hold twice its
 * compressed size in memory until commit.
 */
static int
init_created(MDB_env *env, struct rba_detail *d)
{
	MDB_txn *t;
	MDB_dbi meta;
	struct rba_buf b;
	int rc = mdb_txn_begin(env, NULL, 0, &t);

	if (rc != 0)
		return store_mdb_fail(d, rc, "beginning a transaction");
	rba_buf_init(&b);
	store_rec_start(&b, TAG_META_CREATED);
	rba_buf_put_u64(&b, (uint64_t)store_now());
	rc = mdb_dbi_open(t, "meta", 0, &meta);
	if (rc == 0)
		rc = meta_put(t, meta, "created", &b);
	if (rc == 0)
		rc = meta_seal_put(t, meta, &b);
	rba_buf_release(&b);
	if (rc != 0) {
		mdb_txn_abort(t);
		return store_mdb_fail(d, rc, "writing meta");
	}
	rc = mdb_txn_commit(t);
	if (rc != 0)
		return env_write_fail(env, d, rc, "committing the new store");
	return 0;
}

/* Does the main database of t have any entry (a named database)? */
static int
main_db_empty(MDB_txn *t, int *empty, struct rba_detail *d)
{
	MDB_dbi main_dbi;
	MDB_stat st;
	int rc = mdb_dbi_open(t, NULL, 0, &main_dbi);

	if (rc == 0)
		rc = mdb_stat(t, main_dbi, &st);
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading the main database");
	*empty = st.ms_entries == 0;
	return 0;
}

int
store_init(const char *path, struct rba_detail *d)
{
	MDB_env *env = NULL;
	MDB_txn *t = NULL;
	MDB_dbi meta;
	uint64_t mapsize;
	int rc, has_data, empty;

	if (path == NULL || path[0] == 0)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "empty store path");
	if (strlen(path) >= sizeof(((struct store *)0)->path))
		return rba_fail(d, ENAMETOOLONG, path, 0, 0,
				"store path too long");
	rc = rba_crypto_init();
	if (rc == 0)
		rc = mapsize_setting(&mapsize, d);
	if (rc != 0)
		return rc;
	rc = make_dirs(path, 0700);
	if (rc != 0)
		return rba_fail(d, rc, NULL, 0, 0, "creating '%s': %s", path,
				strerror(rc));
	rc = dir_state(path, &has_data);
	if (rc != 0)
		return rba_fail(d, rc, NULL, 0, 0,
				rc == ENOTEMPTY ? "'%s' is a directory that is "
						  "not empty and holds no store"
						: "reading '%s': %s",
				path, strerror(rc));
	rc = env_create(&env, mapsize, d);
	if (rc != 0)
		return rc;
	rc = mdb_env_open(env, path, ENV_FLAGS, 0600);
	if (rc != 0) {
		rc = store_mdb_fail(d, rc, "opening the environment");
		goto out;
	}
	rc = mdb_txn_begin(env, NULL, 0, &t);
	if (rc != 0) {
		rc = store_mdb_fail(d, rc, "beginning a transaction");
		goto out;
	}
	/* Checked under the write lock, so two inits at once cannot both
	 * succeed; a data file left by an init that never committed is
	 * empty and is initialized now. */
	rc = main_db_empty(t, &empty, d);
	if (rc != 0)
		goto out;
	if (!empty) {
		rc = mdb_dbi_open(t, "meta", 0, &meta);
		rc = rba_fail(d, RBA_E_EXISTS, NULL, 0, 0,
			      rc == 0 ? "a store already exists at '%s'"
				      : "'%s' holds an lmdb environment that is "
					"not a store",
			      path);
		goto out;
	}
	rc = init_records(t, d);
	if (rc != 0)
		goto out;
	rc = mdb_txn_commit(t);
	t = NULL;
	if (rc != 0)
		rc = env_write_fail(env, d, rc, "committing the new store");
	else
		rc = init_created(env, d);
	if (rc == 0)
		rc = init_created(env, d);
out:
	if (t != NULL)
		mdb_txn_abort(t);
	mdb_env_close(env);
	return rc;
}

/*
 * Every meta record known, of its size and tag, and the records that
 * never change matching the meta seal (stores made before the seal have
 * none): a damaged meta is refused at open, by every command, since no
 * later check reads it.
 */
int
store_meta_known(const MDB_val *k, const MDB_val *v)
{
	static const struct {
		const char *name;
		uint8_t tag;
		size_t body;
	} known[] = {
		{"created", TAG_META_CREATED, 8},
		{"history_head", TAG_META_HEAD, 8 + RBA_DIGEST_LEN},
		{"mapsize", TAG_META_MAPSIZE, 8},
		{"meta_seal", TAG_META_SEAL, RBA_DIGEST_LEN},
		{"schema", TAG_META_SCHEMA, 4},
		{"store_id", TAG_META_ID, STORE_ID_LEN},
	};
	const uint8_t *p = v->mv_data;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strlen(known[i].name) != k->mv_size ||
		    memcmp(known[i].name, k->mv_data, k->mv_size) != 0)
			continue;
		if (v->mv_size != 2 + known[i].body || p[0] != known[i].tag ||
		    p[1] != STORE_FORMAT)
			return -1;
		return known[i].tag;
	}
	return 0;
}

static int
check_meta_records(struct store *s, MDB_txn *t, struct rba_detail *d)
{
	MDB_cursor *cur;
	MDB_val k, v;
	struct rba_digest want;
	int rc, has_seal = 0;

	rc = mdb_cursor_open(t, s->dbi[DB_META], &cur);
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading meta");
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		int tag = store_meta_known(&k, &v);
		if (tag <= 0) {
			char name[2 * 32 + 3];
			size_t o = 0;
			for (size_t j = 0; j < k.mv_size && o + 5 < sizeof(name); j++) {
				uint8_t c = ((const uint8_t *)k.mv_data)[j];
				if (c >= 0x20 && c < 0x7f)
					name[o++] = (char)c;
				else
					o += (size_t)snprintf(name + o, sizeof(name) - o,
							      "\\x%02x", c);
			}
			name[o] = 0;
			mdb_cursor_close(cur);
			rba_detail_key(d, name);
			return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
					"damaged: the meta database holds %s "
					"record '%s'",
					tag == 0 ? "an unknown" : "a malformed", name);
		}
		if (tag == TAG_META_SEAL) {
			has_seal = 1;
			memcpy(want.b, (const uint8_t *)v.mv_data + 2, RBA_DIGEST_LEN);
		}
	}
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return store_mdb_fail(d, rc, "reading meta");
	if (has_seal) {
		struct rba_digest got;
		rc = store_meta_seal(t, s->dbi[DB_META], &got);
		if (rc != 0 || !rba_digest_equal(&got, &want))
			return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
					"tampered: the schema, store id or "
					"creation time does not match the meta "
					"seal");
	}
	return 0;
}

/* Reads and checks the meta records; fills s->id_hex. */
static int
check_meta(struct store *s, MDB_txn *t, struct rba_detail *d)
{
	MDB_val k, v;
	struct rba_cursor c;
	uint32_t schema;
	const uint8_t *id;
	int rc;

	k.mv_data = "schema";
	k.mv_size = 6;
	rc = mdb_get(t, s->dbi[DB_META], &k, &v);
	if (rc == MDB_NOTFOUND)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"meta has no schema version");
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading meta");
	rc = store_rec_open(&v, TAG_META_SCHEMA, &c, "meta schema", d);
	if (rc != 0)
		return rc;
	schema = rba_cursor_u32(&c);
	if (!rba_cursor_ok(&c) || c.left != 0 || schema == 0)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"meta schema: malformed record");
	if (schema > STORE_SCHEMA)
		return rba_fail(d, RBA_E_NEWER, NULL, 0, 0,
				"store schema %u is newer than this tool's (%u)",
				schema, STORE_SCHEMA);
	k.mv_data = "store_id";
	k.mv_size = 8;
	rc = mdb_get(t, s->dbi[DB_META], &k, &v);
	if (rc == MDB_NOTFOUND)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"meta has no store id");
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading meta");
	rc = store_rec_open(&v, TAG_META_ID, &c, "meta store id", d);
	if (rc != 0)
		return rc;
	id = rba_cursor_bytes(&c, STORE_ID_LEN);
	if (id == NULL || c.left != 0)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"meta store id: malformed record");
	for (int i = 0; i < STORE_ID_LEN; i++)
		snprintf(s->id_hex + 2 * i, 3, "%02x", id[i]);
	return check_meta_records(s, t, d);
}

/* Opens the named databases and checks meta in one read transaction. */
static int
open_dbs(struct store *s, struct rba_detail *d)
{
	MDB_txn *t;
	int rc, empty;

	rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &t);
	if (rc != 0)
		return store_mdb_fail(d, rc, "beginning a transaction");
	rc = mdb_dbi_open(t, "meta", 0, &s->dbi[DB_META]);
	if (rc == MDB_NOTFOUND) {
		rc = main_db_empty(t, &empty, d);
		if (rc == 0)
			rc = empty ? rba_fail(d, RBA_E_NOSTORE, NULL, 0, 0,
					      "the store at '%s' was never "
					      "initialized", s->path)
				   : rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
					      "'%s' has no meta database",
					      s->path);
		goto fail;
	}
	if (rc != 0) {
		rc = store_mdb_fail(d, rc, "opening database 'meta'");
		goto fail;
	}
	rc = check_meta(s, t, d);
	if (rc != 0)
		goto fail;
	for (int i = 1; i < DB_COUNT; i++) {
		rc = mdb_dbi_open(t, store_db_names[i], 0, &s->dbi[i]);
		if (rc == MDB_NOTFOUND) {
			rc = rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				      "the store has no '%s' database",
				      store_db_names[i]);
			goto fail;
		}
		if (rc != 0) {
			rc = store_mdb_fail(d, rc, "opening a database");
			goto fail;
		}
	}
	/* The log's database is optional: stores made before it have none
	 * until their first append (store_tlog.c). */
	rc = mdb_dbi_open(t, STORE_TLOG_DB, 0, &s->tlog_dbi);
	if (rc == 0) {
		s->has_tlog = 1;
	} else if (rc != MDB_NOTFOUND) {
		rc = store_mdb_fail(d, rc, "opening a database");
		goto fail;
	}
	/* A read transaction must commit for its database handles to stay
	 * open. */
	rc = mdb_txn_commit(t);
	if (rc != 0)
		return store_mdb_fail(d, rc, "opening the databases");
	return 0;
fail:
	mdb_txn_abort(t);
	return rc;
}

int
store_open(const char *path, int read_only, struct store **out,
	   struct rba_detail *d)
{
	return store_open_env(path, read_only, 0, out, d);
}

int
store_open_env(const char *path, int read_only, int nolock,
	       struct store **out, struct rba_detail *d)
{
	struct store *s;
	struct stat st;
	char data[4096 + 16];
	uint64_t mapsize;
	int rc, dead;

	*out = NULL;
	if (path == NULL || path[0] == 0)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "empty store path");
	if (strlen(path) >= sizeof(s->path))
		return rba_fail(d, ENAMETOOLONG, NULL, 0, 0,
				"store path too long");
	rc = rba_crypto_init();
	if (rc == 0)
		rc = mapsize_setting(&mapsize, d);
	if (rc != 0)
		return rc;
	snprintf(data, sizeof(data), "%s/data.mdb", path);
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    stat(data, &st) != 0)
		return rba_fail(d, RBA_E_NOSTORE, NULL, 0, 0,
				"no store at '%s'", path);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return RBA_E_NOMEM;
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->read_only = read_only != 0;
	s->slack = mapsize / 4;
	/* No map size before open: LMDB then takes the one recorded in the
	 * file, which another process may have grown. */
	rc = env_create(&s->env, 0, d);
	if (rc != 0) {
		free(s);
		return rc;
	}
	/* Without locks (a snapshot on shared storage, read by many
	 * workers) there is no reader table to clear. */
	rc = mdb_env_open(s->env, path, ENV_FLAGS | (s->read_only ? MDB_RDONLY : 0) |
					   (nolock ? MDB_NOLOCK : 0),
			  0600);
	if (rc != 0) {
		rc = store_mdb_fail(d, rc, "opening the store");
		goto fail;
	}
	rc = nolock ? 0 : mdb_reader_check(s->env, &dead);
	if (rc != 0) {
		rc = store_mdb_fail(d, rc, "checking stale readers");
		goto fail;
	}
	rc = open_dbs(s, d);
	if (rc == 0)
		rc = store_lmdb_check(s, d);
	if (rc != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	mdb_env_close(s->env);
	free(s);
	return rc;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	assert(s->ntxn == 0);
	mdb_env_close(s->env);
	if (s->wlock_open)
		close(s->wlock_fd);
	free(s);
}

/* ---- the write lock ---------------------------------------------------- */

static double wait_limit = STORE_WAIT_DEFAULT;
static store_wait_hook wait_hook;
static void *wait_ctx;

void
store_wait_set(double seconds, store_wait_hook hook, void *ctx)
{
	wait_limit = seconds > 0 ? seconds : 0;
	wait_hook = hook;
	wait_ctx = ctx;
}

/* The pid in the lock file when it is another live process; else 0. */
static long
lock_holder(int fd)
{
	char b[24];
	ssize_t n = pread(fd, b, sizeof(b) - 1, 0);
	char *end;
	long pid;

	if (n <= 0)
		return 0;
	b[n] = 0;
	pid = strtol(b, &end, 10);
	if (end == b || (*end != '\n' && *end != 0) || pid <= 0 ||
	    pid == (long)getpid())
		return 0;
	if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
		return 0; /* a pid left by an earlier holder */
	return pid;
}

static void
nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Takes the store's write lock, waiting as store_wait_set says.  0 (also
 * when there is no lock file to take: LMDB's lock alone), or RBA_E_BUSY
 * past the wait.
 */
static int
write_lock_take(struct store *s, struct rba_detail *d)
{
	char path[sizeof(s->path) + sizeof(STORE_WRITE_LOCK) + 1], pid[24];
	double t0 = 0, waited;
	long step = 10;
	int noticed = 0, n;

	if (!s->wlock_open) {
		snprintf(path, sizeof(path), "%s/%s", s->path, STORE_WRITE_LOCK);
		s->wlock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				   0600);
		if (s->wlock_fd < 0)
			return 0; /* a read-only directory: LMDB will say */
		s->wlock_open = 1;
	}
	for (;;) {
		if (flock(s->wlock_fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return 0; /* no flock(2) here */
		if (t0 == 0)
			t0 = rba_time_mono();
		waited = rba_time_mono() - t0;
		if (waited >= wait_limit) {
			long h = lock_holder(s->wlock_fd);
			char held[40] = "";
			if (h > 0)
				snprintf(held, sizeof(held), " (held by pid %ld)", h);
			return rba_fail(d, RBA_E_BUSY, NULL, 0, 0,
					"gave up after %g s waiting for the "
					"store's write lock%s",
					wait_limit, held);
		}
		if (!noticed && waited * 1000 >= STORE_WAIT_NOTICE_MS) {
			struct store_wait w = { s->path, lock_holder(s->wlock_fd),
						waited, wait_limit };
			noticed = 1;
			if (wait_hook != NULL)
				wait_hook(wait_ctx, &w);
		}
		nap_ms(step);
		if (step < 100)
			step *= 2;
	}
	s->wlocked = 1;
	/* Who holds it, for whoever comes to wait (best effort). */
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(s->wlock_fd, 0) == 0 && pwrite(s->wlock_fd, pid, (size_t)n, 0) < 0)
		errno = 0;
	return 0;
}

static void
write_lock_release(struct store *s)
{
	if (s->wlocked) {
		flock(s->wlock_fd, LOCK_UN);
		s->wlocked = 0;
	}
}

const char *
store_path(const struct store *s)
{
	return s->path;
}

const char *
store_id_hex(const struct store *s)
{
	return s->id_hex;
}

uint64_t
store_last_txnid(struct store *s)
{
	MDB_envinfo info;

	if (mdb_env_info(s->env, &info) != 0)
		return 0;
	return (uint64_t)info.me_last_txnid;
}

const char *
store_lmdb_version(void)
{
	return mdb_version(NULL, NULL, NULL);
}

const char *
store_zstd_version(void)
{
	return ZSTD_versionString();
}

/* ---- transactions ---------------------------------------------------- */

/*
 * Another process grew the map past ours: adopt the size recorded in the
 * file.  Possible only with no transaction of this handle open.
 */
static int
adopt_mapsize(struct store *s, struct rba_detail *d)
{
	int rc;

	if (s->ntxn != 0)
		return rba_fail(d, RBA_E_BUSY, NULL, 0, 0,
				"the store's map was grown by another process "
				"while a transaction of this one is open");
	rc = mdb_env_set_mapsize(s->env, 0);
	if (rc != 0)
		return store_mdb_fail(d, rc, "growing the map");
	return 0;
}

/*
 * Does the map have room for what t is about to write?  Sets *grow to the
 * map size wanted, or 0.
 */
static int
room_check(struct store *s, uint64_t hint, uint64_t *grow,
	   struct rba_detail *d)
{
	MDB_envinfo info;
	MDB_stat st;
	uint64_t used, need, size;
	int rc;

	*grow = 0;
	rc = mdb_env_info(s->env, &info);
	if (rc == 0)
		rc = mdb_env_stat(s->env, &st);
	if (rc != 0)
		return store_mdb_fail(d, rc, "reading the map size");
	used = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
	need = sat_add(sat_add(used, hint > UINT64_MAX / 2 ? UINT64_MAX
							   : 2 * hint),
		       s->slack);
	size = info.me_mapsize;
	if (size >= need)
		return 0;
	/* Grow by half at least, so a store written by many small
	 * commands does not remap at every one. */
	size = sat_add(size, size / 2);
	if (size < need)
		size = need;
	size = sat_add(size, ((uint64_t)1 << 20) - 1) & ~(((uint64_t)1 << 20) - 1);
	if (size > SIZE_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"the store's map cannot grow to %llu bytes",
				(unsigned long long)size);
	*grow = size;
	return 0;
}

static int
begin_write(struct store *s, uint64_t hint, MDB_txn **out,
	    struct rba_detail *d)
{
	MDB_txn *t;
	uint64_t grow;
	int rc;

	if ((rc = write_lock_take(s, d)) != 0)
		return rc;
	for (int tries = 0; tries < BEGIN_TRIES; tries++) {
		rc = mdb_txn_begin(s->env, NULL, 0, &t);
		if (rc == MDB_MAP_RESIZED) {
			rc = adopt_mapsize(s, d);
			if (rc != 0)
				break;
			continue;
		}
		if (rc != 0) {
			rc = store_mdb_fail(d, rc, "beginning a write");
			break;
		}
		/* Measured under the write lock, so nobody adds pages
		 * between the check and our writes. */
		rc = room_check(s, hint, &grow, d);
		if (rc != 0) {
			mdb_txn_abort(t);
			break;
		}
		if (grow == 0 || s->ntxn != 0) {
			*out = t;
			return 0;
		}
		mdb_txn_abort(t);
		rc = mdb_env_set_mapsize(s->env, (size_t)grow);
		if (rc != 0) {
			rc = store_mdb_fail(d, rc, "growing the map");
			break;
		}
		rc = RBA_E_BUSY;
	}
	if (rc == 0 || rc == RBA_E_BUSY) /* out of tries */
		rc = rba_fail(d, RBA_E_BUSY, NULL, 0, 0,
			      "could not make room in the store's map");
	write_lock_release(s);
	return rc;
}

static int
begin_read(struct store *s, MDB_txn **out, struct rba_detail *d)
{
	int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, out);

	if (rc == MDB_MAP_RESIZED) {
		rc = adopt_mapsize(s, d);
		if (rc != 0)
			return rc;
		rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, out);
	}
	if (rc != 0)
		return store_mdb_fail(d, rc, "beginning a read");
	return 0;
}

int
store_txn_begin(struct store *s, int write, uint64_t size_hint,
		struct store_txn **out, struct rba_detail *d)
{
	struct store_txn *txn;
	MDB_txn *t = NULL;
	int rc;

	*out = NULL;
	if (write && s->read_only)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"the store was opened read-only");
	/* LMDB's write lock is not recursive: a second write transaction
	 * of this process would wait for itself forever. */
	if (write && s->writing)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"a write transaction is already open");
	txn = calloc(1, sizeof(*txn));
	if (txn == NULL)
		return RBA_E_NOMEM;
	if (write) {
		rc = begin_write(s, size_hint, &t, d);
	} else {
		rc = begin_read(s, &t, d);
	}
	if (rc != 0) {
		free(txn);
		return rc;
	}
	txn->s = s;
	txn->t = t;
	txn->write = write != 0;
	s->writing |= txn->write;
	s->ntxn++;
	*out = txn;
	return 0;
}

int
store_txn_begin_same(struct store_txn *txn, struct store_txn **out,
		     struct rba_detail *d)
{
	int rc;

	*out = NULL;
	if (txn->write)
		return RBA_E_BUSY;
	rc = store_txn_begin(txn->s, 0, 0, out, d);
	if (rc != 0)
		return rc;
	if (mdb_txn_id((*out)->t) != mdb_txn_id(txn->t)) {
		/* a write landed between the two */
		store_txn_abort(*out);
		*out = NULL;
		return RBA_E_BUSY;
	}
	return 0;
}

static void
txn_end(struct store_txn *txn)
{
	struct store_wlink *l, *next;

	for (l = txn->writers; l != NULL; l = next) {
		next = l->next;
		l->txn = NULL;
		l->next = NULL;
	}
	if (txn->write) {
		txn->s->writing = 0;
		write_lock_release(txn->s);
	}
	txn->s->ntxn--;
	free(txn);
}

int
store_txn_commit(struct store_txn *txn, struct rba_detail *d)
{
	struct store *s;
	int rc;

	if (txn == NULL)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "no transaction");
	if (txn->err != 0) {
		rc = store_txn_check(txn, d);
		store_txn_abort(txn);
		return rc;
	}
	if (txn->writers != NULL) {
		store_txn_abort(txn);
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"a writer is still open in the transaction");
	}
	/* What LMDB is about to write into its meta page, kept where a
	 * damaged meta page can be compared with it. */
	rc = txn->write ? store_mapsize_record(txn->t, txn->s->dbi[DB_META],
					      txn->s->env)
			: 0;
	if (rc != 0) {
		store_txn_abort(txn);
		return store_mdb_fail(d, rc, "committing");
	}
	s = txn->s;
	rc = mdb_txn_commit(txn->t);
	if (rc == 0 && txn->tlog_new) {
		/* The handle of a database this write created is the
		 * store's from its commit on. */
		s->tlog_dbi = txn->tlog_dbi;
		s->has_tlog = 1;
	}
	txn_end(txn);
	if (rc != 0)
		return store_write_fail(d, rc, "committing", s->path, 1);
	return 0;
}

static int map_bounds(struct store *s, uintptr_t p, uintptr_t *lo,
		      uintptr_t *hi);

/*
 * Drops this process's view of the data file's pages: what a long write
 * read of the b-trees (and the kernel mapped around each fault) would
 * otherwise stay resident, as file pages, for the rest of the write.
 * The map is found by a value of meta; when that page is one t dirtied
 * (its own copy, not in the map) nothing is dropped.
 */
static void
map_drop(struct store *s, MDB_txn *t)
{
	MDB_val k = { 6, (void *)"schema" }, v;
	uintptr_t lo, hi;

	if (mdb_get(t, s->dbi[DB_META], &k, &v) != 0 ||
	    map_bounds(s, (uintptr_t)v.mv_data, &lo, &hi) != 0)
		return;
	(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void
store_txn_map_drop(struct store_txn *txn)
{
	map_drop(txn->s, txn->t);
}

int
store_txn_checkpoint(struct store_txn *txn, struct rba_detail *d)
{
	int rc = store_txn_writable(txn, d);

	if (rc != 0)
		return rc;
	rc = store_mapsize_record(txn->t, txn->s->dbi[DB_META], txn->s->env);
	if (rc != 0)
		return store_txn_fail(txn, d,
				      store_mdb_fail(d, rc, "committing a step"));
	/* mdb_txn_commit frees the transaction whatever it returns. */
	rc = mdb_txn_commit(txn->t);
	txn->t = NULL;
	if (rc != 0) {
		rc = store_write_fail(d, rc, "committing a step", txn->s->path, 1);
		return store_txn_fail(txn, d, rc);
	}
	if (txn->tlog_new) {
		txn->s->tlog_dbi = txn->tlog_dbi;
		txn->s->has_tlog = 1;
		txn->tlog_new = 0;
	}
	/* The write lock is still ours: nobody wrote in between, so the
	 * map is as this handle left it. */
	rc = mdb_txn_begin(txn->s->env, NULL, 0, &txn->t);
	if (rc != 0) {
		txn->t = NULL;
		return store_txn_fail(txn, d,
				      store_mdb_fail(d, rc, "beginning a step"));
	}
	map_drop(txn->s, txn->t);
	return 0;
}

void
store_txn_abort(struct store_txn *txn)
{
	if (txn == NULL)
		return;
	mdb_txn_abort(txn->t);
	txn_end(txn);
}

/*
 * The bounds of the mapping of this store's data file that holds p, read
 * from /proc/self/maps (LMDB does not say where it mapped the file).
 * Cached until p falls outside them, as after the map grew.  0 when
 * found.
 */
static int
map_bounds(struct store *s, uintptr_t p, uintptr_t *lo, uintptr_t *hi)
{
	char line[4608];
	FILE *f;
	int found = 0;

	/* The bounds, once known, are kept for the store; two threads
	 * reading one snapshot (store_txn_begin_same) may both find them
	 * (the same two values): atomic loads and stores, lo before hi. */
	uintptr_t mlo, mhi = __atomic_load_n(&s->map_hi, __ATOMIC_ACQUIRE);

	mlo = __atomic_load_n(&s->map_lo, __ATOMIC_RELAXED);
	if (mhi != 0 && p >= mlo && p < mhi) {
		*lo = mlo;
		*hi = mhi;
		return 0;
	}
	f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return -1;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		unsigned long a, b;
		const char *name = strchr(line, '/');
		size_t nl;

		if (sscanf(line, "%lx-%lx", &a, &b) != 2 || p < a || p >= b ||
		    name == NULL)
			continue;
		nl = strcspn(name, "\n");
		if (nl >= 9 && memcmp(name + nl - 9, "/data.mdb", 9) == 0) {
			__atomic_store_n(&s->map_lo, (uintptr_t)a, __ATOMIC_RELAXED);
			__atomic_store_n(&s->map_hi, (uintptr_t)b, __ATOMIC_RELEASE);
			*lo = a;
			*hi = b;
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

void
store_map_forget(struct store_txn *txn, const void *p, size_t n)
{
	uintptr_t lo, hi;

	/* A read transaction's values point into the map; a write
	 * transaction's may be its own dirty copies: leave those alone. */
	if (txn->write || n == 0)
		return;
	if (map_bounds(txn->s, (uintptr_t)p, &lo, &hi) != 0)
		return;
	/*
	 * The whole map, not just the value's pages: every lookup also
	 * faults in b-tree pages elsewhere in the file, and the kernel maps
	 * up to 64 KiB around each fault.  Unmapping costs a walk of the
	 * few page-table entries present; what is needed again comes back
	 * from the page cache as a minor fault.
	 */
	(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void
store_map_forget_used(struct store_txn *txn, size_t *used, const void *p,
		      size_t n)
{
	*used += n;
	if (*used < STORE_FORGET_BYTES)
		return;
	*used = 0;
	store_map_forget(txn, p, n);
}
