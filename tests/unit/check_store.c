/* check_store.c - the store: environment, blobs, versions, samples,
 * history, runs, tampering, map growth, concurrent writers. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "common/rbatime.h"
#include "store/store.h"
#include "store/store_debug.h"
#include "tests/unit/scratch.h"
#include "tests/unit/suites.h"

#define MIB (1u << 20)


static void
setup(void)
{
	scratch_make("store");
	ck_assert_int_eq(rba_crypto_init(), 0);
	unsetenv(STORE_MAPSIZE_ENV);
}

static void
teardown(void)
{
	scratch_remove();
	unsetenv(STORE_MAPSIZE_ENV);
}

/* Deterministic pseudo-random bytes. */
static void
fill_random(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
}

static struct store *
open_new(void)
{
	struct store *s = NULL;
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_msg(store_init(scratch_store, &d) == 0, "init: %s", d.reason);
	ck_assert_msg(store_open(scratch_store, 0, &s, &d) == 0, "open: %s", d.reason);
	return s;
}

static struct store_txn *
begin(struct store *s, int write)
{
	struct store_txn *t = NULL;
	struct rba_detail d;

	ck_assert_msg(store_txn_begin(s, write, 0, &t, &d) == 0, "begin: %s",
		      d.reason);
	return t;
}

static void
commit(struct store_txn *t)
{
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_msg(store_txn_commit(t, &d) == 0, "commit: %s", d.reason);
}

struct collect {
	uint8_t *p;
	size_t n;
	unsigned calls;
};

static int
collect_fn(void *ctx, const uint8_t *p, size_t n)
{
	struct collect *c = ctx;

	c->p = realloc(c->p, c->n + n + 1);
	ck_assert_ptr_nonnull(c->p);
	memcpy(c->p + c->n, p, n);
	c->n += n;
	c->calls++;
	return 0;
}

/* Counts what it is given, keeps nothing. */
static int
discard_fn(void *ctx, const uint8_t *p, size_t n)
{
	struct collect *c = ctx;

	(void)p;
	c->n += n;
	c->calls++;
	return 0;
}

static struct rba_digest
put_blob(struct store *s, int kind, const uint8_t *p, size_t n,
	 const char *name)
{
	struct store_txn *t = begin(s, 1);
	struct rba_digest dg;
	struct rba_detail d;
	int existed = -1;

	ck_assert_msg(store_blob_put(t, kind, p, n, name, "m", 1, &dg, &existed,
				     &d) == 0, "put: %s", d.reason);
	commit(t);
	return dg;
}

static int
has_text(const char *s, const char *what)
{
	return strstr(s, what) != NULL;
}

/* ---- environment ----------------------------------------------------- */

START_TEST(test_init_open)
{
	struct store *s = NULL;
	struct store_txn *t;
	struct rba_detail d;
	char other[400];
	FILE *f;

	rba_detail_clear(&d);
	ck_assert_int_eq(store_open(scratch_store, 0, &s, &d), RBA_E_NOSTORE);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(store_init(scratch_store, &d), 0);
	ck_assert_int_eq(store_init(scratch_store, &d), RBA_E_EXISTS);
	ck_assert(has_text(d.reason, "already exists"));
	ck_assert_int_eq(store_open(scratch_store, 0, &s, &d), 0);
	ck_assert_str_eq(store_path(s), scratch_store);
	ck_assert_uint_eq(strlen(store_id_hex(s)), 32);
	ck_assert_uint_gt(store_last_txnid(s), 0);
	ck_assert(strncmp(store_lmdb_version(), "LMDB ", 5) == 0);
	ck_assert(strlen(store_zstd_version()) > 0);
	store_close(s);
	store_close(NULL);

	/* One write transaction per handle; reads beside it. */
	ck_assert_int_eq(store_open(scratch_store, 0, &s, &d), 0);
	t = begin(s, 1);
	{
		struct store_txn *t2 = NULL, *r = begin(s, 0);
		ck_assert_int_eq(store_txn_begin(s, 1, 0, &t2, &d), RBA_E_USAGE);
		ck_assert_ptr_null(t2);
		store_txn_abort(r);
	}
	commit(t);
	t = begin(s, 1);
	store_txn_abort(t);
	ck_assert_int_eq(store_txn_commit(NULL, &d), RBA_E_USAGE);
	store_close(s);

	/* A second read of the same snapshot: given while nothing was
	 * written since the first began, refused once a write landed (the
	 * blob is in the second only when it is in the first), and never
	 * beside a write. */
	ck_assert_int_eq(store_open(scratch_store, 0, &s, &d), 0);
	{
		static const uint8_t blob[] = "same snapshot";
		struct store_txn *r = begin(s, 0), *r2 = NULL;
		struct store_blob_info bi;
		struct rba_digest dg;
		ck_assert_int_eq(store_txn_begin_same(r, &r2, &d), 0);
		ck_assert_ptr_nonnull(r2);
		store_txn_abort(r2);
		dg = put_blob(s, STORE_BLOB_SNAPSHOT, blob, sizeof(blob), NULL);
		ck_assert_int_eq(store_txn_begin_same(r, &r2, &d), RBA_E_BUSY);
		ck_assert_ptr_null(r2);
		ck_assert_int_eq(store_blob_info(r, &dg, &bi, &d), RBA_E_NOTFOUND);
		store_txn_abort(r);
		r = begin(s, 0);
		ck_assert_int_eq(store_txn_begin_same(r, &r2, &d), 0);
		ck_assert_int_eq(store_blob_info(r2, &dg, &bi, &d), 0);
		store_blob_info_release(&bi);
		store_txn_abort(r2);
		store_txn_abort(r);
		t = begin(s, 1);
		ck_assert_int_eq(store_txn_begin_same(t, &r2, &d), RBA_E_BUSY);
		ck_assert_ptr_null(r2);
		store_txn_abort(t);
	}
	store_close(s);

	/* Read-only: reads work, a write transaction is refused. */
	ck_assert_int_eq(store_open(scratch_store, 1, &s, &d), 0);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), RBA_E_USAGE);
	t = begin(s, 0);
	store_txn_abort(t);
	store_close(s);

	/* A non-empty directory that is no store is refused. */
	snprintf(other, sizeof(other), "%s/other", scratch_dir);
	ck_assert_int_eq(mkdir(other, 0700), 0);
	snprintf(other, sizeof(other), "%s/other/file", scratch_dir);
	f = fopen(other, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(other, sizeof(other), "%s/other", scratch_dir);
	ck_assert_int_eq(store_init(other, &d), ENOTEMPTY);
	ck_assert_int_eq(store_open(other, 0, &s, &d), RBA_E_NOSTORE);
	/* A file is no directory. */
	snprintf(other, sizeof(other), "%s/other/file", scratch_dir);
	ck_assert_int_eq(store_init(other, &d), ENOTDIR);
	/* Missing parents are made; an empty directory is used. */
	snprintf(other, sizeof(other), "%s/a/b/c", scratch_dir);
	ck_assert_int_eq(store_init(other, &d), 0);
	snprintf(other, sizeof(other), "%s/empty", scratch_dir);
	ck_assert_int_eq(mkdir(other, 0700), 0);
	ck_assert_int_eq(store_init(other, &d), 0);
	ck_assert_int_eq(store_open(other, 0, &s, &d), 0);
	store_close(s);
}
END_TEST

START_TEST(test_meta_schema)
{
	/* The schema record's layout is fixed forever: tag, format, u32. */
	static const uint8_t newer[] = { 0x01, 0x01, 99, 0, 0, 0 };
	static const uint8_t badtag[] = { 0x07, 0x01, 1, 0, 0, 0 };
	static const uint8_t shorty[] = { 0x01, 0x01, 1 };
	static const uint8_t current[] = { 0x01, 0x01, 1, 0, 0, 0 };
	struct store *s = open_new();
	struct store_txn *t;
	struct rba_detail d;
	uint8_t *v;
	size_t vn;

	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "meta", "schema", 6, &v, &vn,
					     &d), 0);
	ck_assert_uint_eq(vn, sizeof(current));
	ck_assert_mem_eq(v, current, vn);
	free(v);
	ck_assert_int_eq(store_debug_put_raw(t, "meta", "schema", 6, newer,
					     sizeof(newer), &d), 0);
	commit(t);
	store_close(s);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_open(scratch_store, 0, &s, &d), RBA_E_NEWER);
	ck_assert_ptr_null(s);
	ck_assert(has_text(d.reason, "99"));

	ck_assert_int_eq(store_open(scratch_store, 1, &s, &d), RBA_E_NEWER);
	/* Unreadable meta is corrupt, never a crash. */
	{
		/* Rewrite meta through a fresh store to damage it. */
		struct store *s2;
		char p2[400];
		snprintf(p2, sizeof(p2), "%s/two", scratch_dir);
		ck_assert_int_eq(store_init(p2, &d), 0);
		ck_assert_int_eq(store_open(p2, 0, &s2, &d), 0);
		t = begin(s2, 1);
		ck_assert_int_eq(store_debug_put_raw(t, "meta", "schema", 6,
						     badtag, sizeof(badtag), &d),
				 0);
		commit(t);
		store_close(s2);
		ck_assert_int_eq(store_open(p2, 0, &s2, &d), RBA_E_CORRUPT);
		ck_assert_int_eq(store_init(p2, &d), RBA_E_EXISTS);
	}
	{
		struct store *s3;
		char p3[400];
		snprintf(p3, sizeof(p3), "%s/three", scratch_dir);
		ck_assert_int_eq(store_init(p3, &d), 0);
		ck_assert_int_eq(store_open(p3, 0, &s3, &d), 0);
		t = begin(s3, 1);
		ck_assert_int_eq(store_debug_put_raw(t, "meta", "schema", 6,
						     shorty, sizeof(shorty), &d),
				 0);
		commit(t);
		store_close(s3);
		ck_assert_int_eq(store_open(p3, 0, &s3, &d), RBA_E_CORRUPT);
	}
	{
		struct store *s4;
		char p4[400];
		snprintf(p4, sizeof(p4), "%s/four", scratch_dir);
		ck_assert_int_eq(store_init(p4, &d), 0);
		ck_assert_int_eq(store_open(p4, 0, &s4, &d), 0);
		t = begin(s4, 1);
		ck_assert_int_eq(store_debug_del_raw(t, "meta", "store_id", 8,
						     &d), 0);
		commit(t);
		store_close(s4);
		ck_assert_int_eq(store_open(p4, 0, &s4, &d), RBA_E_CORRUPT);
	}
}
END_TEST

START_TEST(test_mapsize_env)
{
	struct store *s;
	struct rba_detail d;

	setenv(STORE_MAPSIZE_ENV, "12x", 1);
	ck_assert_int_eq(store_init(scratch_store, &d), RBA_E_USAGE);
	setenv(STORE_MAPSIZE_ENV, "1k", 1); /* below 1 MiB */
	ck_assert_int_eq(store_init(scratch_store, &d), RBA_E_USAGE);
	setenv(STORE_MAPSIZE_ENV, "2m", 1);
	ck_assert_int_eq(store_init(scratch_store, &d), 0);
	ck_assert_int_eq(store_open(scratch_store, 0, &s, &d), 0);
	ck_assert_uint_eq(store_debug_map_size(s), 2 * MIB);
	store_close(s);
	setenv(STORE_MAPSIZE_ENV, "-5", 1);
	ck_assert_int_eq(store_open(scratch_store, 0, &s, &d), RBA_E_USAGE);
}
END_TEST

/* ---- blobs ----------------------------------------------------------- */

static void
blob_roundtrip(struct store *s, size_t n, uint64_t seed)
{
	uint8_t *src = calloc(1, n ? n : 1), *loaded;
	struct rba_digest want, got, got2;
	struct store_blob_writer *w;
	struct store_blob_info info;
	struct collect c = { NULL, 0, 0 };
	struct store_txn *t;
	struct rba_detail d;
	size_t step = 7777, ln;
	int existed = -1;

	fill_random(src, n, seed);
	rba_digest_bytes(src, n, &want);
	t = begin(s, 1);
	ck_assert_int_eq(store_blob_writer_new(t, STORE_BLOB_SNAPSHOT, &w, &d),
			 0);
	for (size_t off = 0, k; off < n; off += k) {
		k = n - off < step ? n - off : step;
		ck_assert_int_eq(store_blob_writer_add(w, src + off, k, &d), 0);
		step = step * 3 % 1400009 + 1; /* odd sizes across chunks */
	}
	ck_assert_msg(store_blob_writer_finish(w, "data.csv", "meta", 4, &got,
					       &existed, &d) == 0,
		      "finish: %s", d.reason);
	store_blob_writer_free(w);
	ck_assert(rba_digest_equal(&got, &want));
	ck_assert_int_eq(existed, 0);
	commit(t);

	t = begin(s, 0);
	ck_assert_int_eq(store_blob_info(t, &want, &info, &d), 0);
	ck_assert_uint_eq(info.size, n);
	ck_assert_uint_eq(info.chunks, (n + MIB - 1) / MIB);
	ck_assert_int_eq(info.kind, STORE_BLOB_SNAPSHOT);
	ck_assert_str_eq(info.name, "data.csv");
	ck_assert_uint_eq(info.meta_len, 4);
	ck_assert_mem_eq(info.meta, "meta", 4);
	ck_assert_int_gt(info.added, 0);
	ck_assert(info.stored_size > 0 || n == 0);
	store_blob_info_release(&info);
	ck_assert_msg(store_blob_read(t, &want, collect_fn, &c, &d) == 0,
		      "read: %s", d.reason);
	ck_assert_uint_eq(c.n, n);
	ck_assert_uint_eq(c.calls, (n + MIB - 1) / MIB);
	ck_assert(n == 0 || memcmp(c.p, src, n) == 0);
	ck_assert_int_eq(store_blob_load(t, &want, n, &loaded, &ln, &d), 0);
	ck_assert_uint_eq(ln, n);
	ck_assert(n == 0 || memcmp(loaded, src, n) == 0);
	ck_assert_int_eq(loaded[n], 0);
	free(loaded);
	if (n > 0) {
		ck_assert_int_eq(store_blob_load(t, &want, n - 1, &loaded, &ln,
						 &d), RBA_E_LIMIT);
		ck_assert_ptr_null(loaded);
	}
	store_txn_abort(t);

	/* The whole-buffer form gives the same digest, and dedups. */
	t = begin(s, 1);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_SNAPSHOT, src, n, NULL,
					NULL, 0, &got2, &existed, &d), 0);
	ck_assert(rba_digest_equal(&got2, &want));
	ck_assert_int_eq(existed, 1);
	commit(t);
	free(c.p);
	free(src);
}

START_TEST(test_blob_sizes)
{
	struct store *s = open_new();

	blob_roundtrip(s, 0, 1);
	blob_roundtrip(s, 1, 2);
	blob_roundtrip(s, MIB, 3);
	blob_roundtrip(s, MIB + 1, 4);
	blob_roundtrip(s, 3 * MIB + MIB / 2, 5);
	store_close(s);
}
END_TEST

START_TEST(test_blob_dedup)
{
	struct store *s = open_new();
	uint8_t src[5000];
	struct store_blob_info info;
	struct rba_digest a, b;
	struct store_txn *t;
	struct rba_detail d;
	uint64_t entries, txnid;
	int existed = -1;

	fill_random(src, sizeof(src), 9);
	a = put_blob(s, STORE_BLOB_SNAPSHOT, src, sizeof(src), "first");
	t = begin(s, 0);
	entries = store_debug_entries(t, "blobs");
	store_txn_abort(t);
	ck_assert_uint_eq(entries, 2); /* info and one chunk */

	/* Same bytes, as another kind and without a name: stored once, the
	 * kind and the name stay. */
	t = begin(s, 1);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_ARTIFACT, src,
					sizeof(src), "", NULL, 0, &b, &existed,
					&d), 0);
	ck_assert_int_eq(existed, 1);
	ck_assert(rba_digest_equal(&a, &b));
	commit(t);
	t = begin(s, 0);
	ck_assert_uint_eq(store_debug_entries(t, "blobs"), entries);
	ck_assert_int_eq(store_blob_info(t, &a, &info, &d), 0);
	ck_assert_str_eq(info.name, "first");
	ck_assert_int_eq(info.kind, STORE_BLOB_SNAPSHOT);
	ck_assert_mem_eq(info.meta, "m", 1);
	store_blob_info_release(&info);
	store_txn_abort(t);

	/* A new name and meta replace the old ones. */
	t = begin(s, 1);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_SNAPSHOT, src,
					sizeof(src), "second", "xy", 2, &b,
					&existed, &d), 0);
	ck_assert_int_eq(existed, 1);
	commit(t);
	t = begin(s, 0);
	ck_assert_int_eq(store_blob_info(t, &a, &info, &d), 0);
	ck_assert_str_eq(info.name, "second");
	ck_assert_uint_eq(info.meta_len, 2);
	store_blob_info_release(&info);
	ck_assert_uint_eq(store_debug_entries(t, "blobs"), entries);
	store_txn_abort(t);

	/* Twice in one transaction. */
	txnid = store_last_txnid(s);
	t = begin(s, 1);
	fill_random(src, sizeof(src), 10);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_OTHER, src, sizeof(src),
					NULL, NULL, 0, &a, &existed, &d), 0);
	ck_assert_int_eq(existed, 0);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_OTHER, src, sizeof(src),
					NULL, NULL, 0, &b, &existed, &d), 0);
	ck_assert_int_eq(existed, 1);
	commit(t);
	ck_assert_uint_eq(store_last_txnid(s), txnid + 1);
	t = begin(s, 0);
	ck_assert_uint_eq(store_debug_entries(t, "blobs"), entries + 2);
	store_txn_abort(t);

	/* Caps and bad arguments. */
	{
		char *longname = malloc(STORE_BLOB_NAME_MAX + 2);
		memset(longname, 'n', STORE_BLOB_NAME_MAX + 1);
		longname[STORE_BLOB_NAME_MAX + 1] = 0;
		t = begin(s, 1);
		ck_assert_int_eq(store_blob_put(t, STORE_BLOB_OTHER, src, 10,
						longname, NULL, 0, &a, NULL, &d),
				 RBA_E_LIMIT);
		ck_assert_int_eq(store_blob_put(t, 9, src, 10, NULL, NULL, 0,
						&a, NULL, &d), RBA_E_USAGE);
		/* Neither failed the transaction: it commits. */
		commit(t);
		free(longname);
		t = begin(s, 0);
		ck_assert_int_eq(store_blob_put(t, STORE_BLOB_OTHER, src, 10,
						NULL, NULL, 0, &a, NULL, &d),
				 RBA_E_USAGE);
		store_txn_abort(t);
	}
	store_close(s);
}
END_TEST

struct list_acc {
	struct rba_digest seen[16];
	int kinds[16];
	int n;
	int stop_at;
};

static int
list_fn(void *ctx, const struct store_blob_info *info)
{
	struct list_acc *a = ctx;

	if (a->n == a->stop_at)
		return 4242;
	a->seen[a->n] = info->digest;
	a->kinds[a->n] = info->kind;
	a->n++;
	return 0;
}

START_TEST(test_blob_resolve_list)
{
	struct store *s = open_new();
	uint8_t x[16], y[16], z[16];
	struct rba_digest dx, dy, dz, out;
	struct list_acc acc;
	struct store_txn *t;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1], pre[80];
	uint32_t i, j, found = 0;

	/* Two contents whose digests share 4 hex digits. */
	static uint16_t seen_at[65536];
	memset(seen_at, 0xff, sizeof(seen_at));
	for (i = 0; !found && i < 60000; i++) {
		struct rba_digest dg;
		memset(x, 0, sizeof(x));
		memcpy(x, &i, sizeof(i));
		rba_digest_bytes(x, sizeof(x), &dg);
		uint16_t p4 = (uint16_t)(dg.b[0] << 8 | dg.b[1]);
		if (seen_at[p4] != 0xffff) {
			j = seen_at[p4];
			memset(y, 0, sizeof(y));
			memcpy(y, &j, sizeof(j));
			found = 1;
		} else {
			seen_at[p4] = (uint16_t)i;
		}
	}
	ck_assert(found);
	memset(z, 0xee, sizeof(z));
	dx = put_blob(s, STORE_BLOB_SNAPSHOT, x, sizeof(x), "x");
	dy = put_blob(s, STORE_BLOB_SNAPSHOT, y, sizeof(y), "y");
	dz = put_blob(s, STORE_BLOB_ARTIFACT, z, sizeof(z), "z");
	ck_assert_mem_eq(dx.b, dy.b, 2);

	t = begin(s, 0);
	rba_digest_format(&dx, hex);
	/* Full digest, with and without "sha256:". */
	ck_assert_int_eq(store_blob_resolve(t, hex, STORE_BLOB_ANY, &out, &d),
			 0);
	ck_assert(rba_digest_equal(&out, &dx));
	ck_assert_int_eq(store_blob_resolve(t, hex + 7, STORE_BLOB_SNAPSHOT,
					    &out, &d), 0);
	ck_assert(rba_digest_equal(&out, &dx));
	/* The shared 4 digits are ambiguous. */
	snprintf(pre, sizeof(pre), "%.4s", hex + 7);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_blob_resolve(t, pre, STORE_BLOB_ANY, &out, &d),
			 RBA_E_EXISTS);
	ck_assert(has_text(d.reason, "ambiguous"));
	/* Enough digits to tell them apart. */
	for (i = 5; i <= 64; i++) {
		snprintf(pre, sizeof(pre), "%.*s", (int)i, hex + 7);
		if (store_blob_resolve(t, pre, STORE_BLOB_ANY, &out, &d) == 0)
			break;
	}
	ck_assert_uint_le(i, 64);
	ck_assert(rba_digest_equal(&out, &dx));
	/* The artifact by a short prefix, and not as a snapshot. */
	rba_digest_format(&dz, hex);
	snprintf(pre, sizeof(pre), "sha256:%.6s", hex + 7);
	ck_assert_int_eq(store_blob_resolve(t, pre, STORE_BLOB_ARTIFACT, &out,
					    &d), 0);
	ck_assert(rba_digest_equal(&out, &dz));
	ck_assert_int_eq(store_blob_resolve(t, pre, STORE_BLOB_SNAPSHOT, &out,
					    &d), RBA_E_NOTFOUND);
	/* Malformed prefixes. */
	ck_assert_int_eq(store_blob_resolve(t, "abc", 0, &out, &d),
			 RBA_E_SYNTAX);
	ck_assert_int_eq(store_blob_resolve(t, "ABCD", 0, &out, &d),
			 RBA_E_SYNTAX);
	ck_assert_int_eq(store_blob_resolve(t, "zzzz", 0, &out, &d),
			 RBA_E_SYNTAX);
	/* A prefix nothing starts with. */
	for (i = 0; i < 16; i++) {
		snprintf(pre, sizeof(pre), "%x%x%x%x%x", i, i, i, i, i);
		if (store_blob_resolve(t, pre, 0, &out, &d) == RBA_E_NOTFOUND)
			break;
	}
	ck_assert_uint_lt(i, 16);

	/* Listing: sorted by digest, filtered by kind. */
	memset(&acc, 0, sizeof(acc));
	acc.stop_at = -1;
	ck_assert_int_eq(store_blob_list(t, STORE_BLOB_ANY, list_fn, &acc, &d),
			 0);
	ck_assert_int_eq(acc.n, 3);
	for (int k = 1; k < acc.n; k++)
		ck_assert(memcmp(acc.seen[k - 1].b, acc.seen[k].b, 32) < 0);
	memset(&acc, 0, sizeof(acc));
	acc.stop_at = -1;
	ck_assert_int_eq(store_blob_list(t, STORE_BLOB_ARTIFACT, list_fn, &acc,
					 &d), 0);
	ck_assert_int_eq(acc.n, 1);
	ck_assert(rba_digest_equal(&acc.seen[0], &dz));
	memset(&acc, 0, sizeof(acc));
	acc.stop_at = 1;
	ck_assert_int_eq(store_blob_list(t, STORE_BLOB_ANY, list_fn, &acc, &d),
			 4242);
	ck_assert_int_eq(acc.n, 1);
	/* Unknown digests. */
	memset(out.b, 0x5a, sizeof(out.b));
	ck_assert_int_eq(store_blob_info(t, &out, &(struct store_blob_info){0},
					 &d), RBA_E_NOTFOUND);
	ck_assert_int_eq(store_blob_read(t, &out, discard_fn,
					 &(struct collect){ 0 }, &d),
			 RBA_E_NOTFOUND);
	(void)dy;
	store_txn_abort(t);
	store_close(s);
}
END_TEST

/* Stores a blob of n random bytes; returns its digest and copy. */
static uint8_t *
stored_random(struct store *s, size_t n, struct rba_digest *dg)
{
	uint8_t *src = malloc(n);

	fill_random(src, n, n);
	*dg = put_blob(s, STORE_BLOB_SNAPSHOT, src, n, "r");
	return src;
}

/* Replaces byte off of the value under key with its complement. */
static void
flip_byte(struct store *s, const char *db, const uint8_t *key, size_t klen,
	  size_t off)
{
	struct store_txn *t = begin(s, 1);
	struct rba_detail d;
	uint8_t *v;
	size_t vn;

	ck_assert_int_eq(store_debug_get_raw(t, db, key, klen, &v, &vn, &d), 0);
	ck_assert_uint_lt(off, vn);
	v[off] ^= 0xff;
	/* Past the seal, to the checks behind it (test_chunk_seal tests
	 * the seal itself). */
	store_debug_chunk_reseal(v, vn);
	ck_assert_int_eq(store_debug_put_raw(t, db, key, klen, v, vn, &d), 0);
	free(v);
	commit(t);
}

/* A chunk record is sealed whole: a changed byte is seen even where the
 * frame would decode to the same plaintext. */
START_TEST(test_chunk_seal)
{
	struct store *s = open_new();
	size_t n = 5000, klen, vn;
	struct rba_digest dg;
	uint8_t *src = stored_random(s, n, &dg), key[STORE_DEBUG_KEY_MAX], *v;
	struct collect c = { NULL, 0, 0 };
	struct store_txn *t;
	struct rba_detail d;

	store_debug_blob_chunk_key(&dg, 0, key, &klen);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "blobs", key, klen, &v, &vn, &d),
			 0);
	for (size_t off = 0; off < vn; off += 97) {
		v[off] ^= 0x01;
		ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v, vn,
						     &d), 0);
		rba_detail_clear(&d);
		ck_assert_int_eq(store_blob_read(t, &dg, collect_fn, &c, &d),
				 RBA_E_TAMPERED);
		ck_assert_uint_eq(c.calls, 0);
		v[off] ^= 0x01;
	}
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v, vn, &d),
			 0);
	ck_assert_int_eq(store_blob_read(t, &dg, collect_fn, &c, &d), 0);
	ck_assert_uint_eq(c.n, n);
	store_txn_abort(t);
	free(c.p);
	free(v);
	free(src);
	store_close(s);
}
END_TEST

START_TEST(test_blob_tamper_frame)
{
	struct store *s = open_new();
	size_t n = 3 * MIB + MIB / 2, klen;
	struct rba_digest dg;
	uint8_t *src = stored_random(s, n, &dg), key[STORE_DEBUG_KEY_MAX], *p;
	struct collect c = { NULL, 0, 0 };
	struct store_txn *t;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	store_debug_blob_chunk_key(&dg, 2, key, &klen);
	/* A byte in the middle of chunk 2's frame. */
	flip_byte(s, "blobs", key, klen, STORE_DEBUG_CHUNK_FRAME_OFF + 300000);
	t = begin(s, 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_blob_read(t, &dg, collect_fn, &c, &d),
			 RBA_E_TAMPERED);
	rba_digest_format(&dg, hex);
	ck_assert_msg(has_text(d.reason, "tampered: blob sha256:") &&
			      has_text(d.reason, "chunk 2"),
		      "reason: %s", d.reason);
	ck_assert_str_eq(d.key, hex);
	/* Only the two verified chunks before it reached the callback. */
	ck_assert_uint_eq(c.n, 2 * MIB);
	ck_assert_uint_eq(c.calls, 2);
	ck_assert_mem_eq(c.p, src, 2 * MIB);
	ck_assert_int_eq(store_blob_load(t, &dg, n, &p, &klen, &d),
			 RBA_E_TAMPERED);
	ck_assert_ptr_null(p);
	store_txn_abort(t);
	free(c.p);
	free(src);
	store_close(s);
}
END_TEST

START_TEST(test_blob_tamper_digest)
{
	struct store *s = open_new();
	size_t n = MIB + 10, klen;
	struct rba_digest dg;
	uint8_t *src = stored_random(s, n, &dg), key[STORE_DEBUG_KEY_MAX];
	struct collect c = { NULL, 0, 0 };
	struct store_txn *t;
	struct rba_detail d;

	store_debug_blob_chunk_key(&dg, 0, key, &klen);
	flip_byte(s, "blobs", key, klen, STORE_DEBUG_CHUNK_DIGEST_OFF + 5);
	t = begin(s, 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_blob_read(t, &dg, collect_fn, &c, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "chunk 0 does not match its recorded "
					 "digest"), "reason: %s", d.reason);
	ck_assert_uint_eq(c.calls, 0);
	store_txn_abort(t);
	free(src);
	store_close(s);
}
END_TEST

START_TEST(test_blob_tamper_structure)
{
	struct store *s = open_new();
	size_t n = 2 * MIB + 5, klen, vn;
	struct rba_digest dg;
	uint8_t *src = stored_random(s, n, &dg), key[STORE_DEBUG_KEY_MAX], *v;
	struct store_blob_info info;
	struct store_txn *t;
	struct rba_detail d;

	/* A missing chunk. */
	t = begin(s, 1);
	store_debug_blob_chunk_key(&dg, 1, key, &klen);
	ck_assert_int_eq(store_debug_get_raw(t, "blobs", key, klen, &v, &vn, &d),
			 0);
	ck_assert_int_eq(store_debug_del_raw(t, "blobs", key, klen, &d), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_blob_read(t, &dg, discard_fn,
					 &(struct collect){ 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "chunk 1 of 3 is missing"), "%s",
		      d.reason);
	/* Chunk 1 put where chunk 2 belongs (wrong size for its place). */
	store_debug_blob_chunk_key(&dg, 1, key, &klen);
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v, vn, &d),
			 0);
	{
		uint8_t *v2;
		size_t vn2, k2len;
		uint8_t k2[STORE_DEBUG_KEY_MAX];
		store_debug_blob_chunk_key(&dg, 2, k2, &k2len);
		ck_assert_int_eq(store_debug_get_raw(t, "blobs", k2, k2len, &v2,
						     &vn2, &d), 0);
		ck_assert_int_eq(store_debug_put_raw(t, "blobs", k2, k2len, v, vn,
						     &d), 0);
		ck_assert_int_eq(store_blob_read(t, &dg, discard_fn,
					 &(struct collect){ 0 }, &d),
				 RBA_E_TAMPERED);
		ck_assert_msg(has_text(d.reason, "chunk 2 records"), "%s",
			      d.reason);
		ck_assert_int_eq(store_debug_put_raw(t, "blobs", k2, k2len, v2,
						     vn2, &d), 0);
		free(v2);
	}
	/* Restored: reads again. */
	ck_assert_int_eq(store_blob_read(t, &dg, discard_fn,
					 &(struct collect){ 0 }, &d), 0);
	/* Chunks 0 and 1 swapped: each matches its own digest, the whole
	 * content does not. */
	{
		uint8_t k0[STORE_DEBUG_KEY_MAX], k1[STORE_DEBUG_KEY_MAX];
		uint8_t *v0, *v1;
		size_t k0len, k1len, n0, n1;
		struct collect c = { NULL, 0, 0 };
		store_debug_blob_chunk_key(&dg, 0, k0, &k0len);
		store_debug_blob_chunk_key(&dg, 1, k1, &k1len);
		ck_assert_int_eq(store_debug_get_raw(t, "blobs", k0, k0len, &v0,
						     &n0, &d), 0);
		ck_assert_int_eq(store_debug_get_raw(t, "blobs", k1, k1len, &v1,
						     &n1, &d), 0);
		ck_assert_int_eq(store_debug_put_raw(t, "blobs", k0, k0len, v1,
						     n1, &d), 0);
		ck_assert_int_eq(store_debug_put_raw(t, "blobs", k1, k1len, v0,
						     n0, &d), 0);
		ck_assert_int_eq(store_blob_read(t, &dg, discard_fn, &c, &d),
				 RBA_E_TAMPERED);
		ck_assert_msg(has_text(d.reason, "content does not match its "
						 "digest"), "%s", d.reason);
		ck_assert_uint_eq(c.calls, 3); /* each chunk was verified */
		ck_assert_int_eq(store_debug_put_raw(t, "blobs", k0, k0len, v0,
						     n0, &d), 0);
		ck_assert_int_eq(store_debug_put_raw(t, "blobs", k1, k1len, v1,
						     n1, &d), 0);
		free(v0);
		free(v1);
	}
	/* An extra chunk. */
	store_debug_blob_chunk_key(&dg, 3, key, &klen);
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v, vn, &d),
			 0);
	ck_assert_int_eq(store_blob_read(t, &dg, discard_fn,
					 &(struct collect){ 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert(has_text(d.reason, "extra chunk 3"));
	ck_assert_int_eq(store_debug_del_raw(t, "blobs", key, klen, &d), 0);
	/* A short chunk record and an unknown chunk tag. */
	store_debug_blob_chunk_key(&dg, 0, key, &klen);
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v, 10, &d),
			 0);
	ck_assert_int_eq(store_blob_read(t, &dg, discard_fn,
					 &(struct collect){ 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert(has_text(d.reason, "chunk 0 is malformed"));
	v[0] = 0x77;
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v, vn, &d),
			 0);
	ck_assert_int_eq(store_blob_read(t, &dg, discard_fn,
					 &(struct collect){ 0 }, &d),
			 RBA_E_TAMPERED);
	free(v);
	/* The info record: a flipped byte breaks its seal, a short one or
	 * an unknown tag is corrupt. */
	ck_assert_int_eq(store_debug_get_raw(t, "blobs", dg.b, 32, &v, &vn, &d),
			 0);
	v[20] ^= 1;
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", dg.b, 32, v, vn, &d),
			 0);
	ck_assert_int_eq(store_blob_info(t, &dg, &info, &d), RBA_E_TAMPERED);
	ck_assert_int_eq(store_blob_read(t, &dg, discard_fn,
					 &(struct collect){ 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", dg.b, 32, v, 1, &d),
			 0);
	ck_assert_int_eq(store_blob_info(t, &dg, &info, &d), RBA_E_CORRUPT);
	v[0] = 0x99;
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", dg.b, 32, v, vn, &d),
			 0);
	ck_assert_int_eq(store_blob_info(t, &dg, &info, &d), RBA_E_CORRUPT);
	ck_assert_int_eq(store_blob_list(t, 0, list_fn,
					 &(struct list_acc){.stop_at = -1}, &d),
			 RBA_E_CORRUPT);
	free(v);
	store_txn_abort(t);
	free(src);
	store_close(s);
}
END_TEST

/* The address space in use, from /proc/self/statm. */
static uint64_t
vm_bytes(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

START_TEST(test_blob_forged_frame)
{
	/* A zstd frame header declaring 2 GiB of content (single segment,
	 * 4-byte content size 0x80000000) and one empty raw last block. */
	static const uint8_t big[] = { 0x28, 0xb5, 0x2f, 0xfd, 0xa0,
				       0x00, 0x00, 0x00, 0x80, 0x01,
				       0x00, 0x00 };
	/* A frame without a content size (window descriptor instead). */
	static const uint8_t unknown[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00,
					   0x00, 0x01, 0x00, 0x00 };
	struct store *s = open_new();
	size_t n = 100, klen, vn;
	struct rba_digest dg;
	uint8_t *src = stored_random(s, n, &dg), key[STORE_DEBUG_KEY_MAX], *v;
	struct collect c = { NULL, 0, 0 };
	struct store_txn *t;
	struct rba_detail d;
	struct rlimit rl;

	store_debug_blob_chunk_key(&dg, 0, key, &klen);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "blobs", key, klen, &v, &vn, &d),
			 0);
	v = realloc(v, STORE_DEBUG_CHUNK_FRAME_OFF + sizeof(big));
	/* Forged frames in records of the unsealed format, whose reader
	 * has only the frame checks. */
	v[1] = STORE_DEBUG_CHUNK_FORMAT_UNSEALED;
	memcpy(v + STORE_DEBUG_CHUNK_FRAME_OFF, big, sizeof(big));
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v,
					     STORE_DEBUG_CHUNK_FRAME_OFF +
						     sizeof(big), &d), 0);
	commit(t);
#ifndef __SANITIZE_ADDRESS__
	/* With 256 MiB of address space to spare, a reader that believed
	 * the header could not get its 2 GiB: it would fail another way. */
	rl.rlim_cur = rl.rlim_max = vm_bytes() + 256 * (uint64_t)MIB;
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
#else
	(void)rl;
	(void)vm_bytes;
#endif
	t = begin(s, 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_blob_read(t, &dg, collect_fn, &c, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "declares 2147483648 bytes"), "%s",
		      d.reason);
	ck_assert_uint_eq(c.calls, 0);
	store_txn_abort(t);

	t = begin(s, 1);
	memcpy(v + STORE_DEBUG_CHUNK_FRAME_OFF, unknown, sizeof(unknown));
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v,
					     STORE_DEBUG_CHUNK_FRAME_OFF +
						     sizeof(unknown), &d), 0);
	ck_assert_int_eq(store_blob_read(t, &dg, collect_fn, &c, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "without a content size"), "%s",
		      d.reason);
	/* A record whose own size field claims 2 GiB. */
	rba_put_u32le(v + 2 + 32, 0x80000000u);
	ck_assert_int_eq(store_debug_put_raw(t, "blobs", key, klen, v,
					     STORE_DEBUG_CHUNK_FRAME_OFF +
						     sizeof(unknown), &d), 0);
	ck_assert_int_eq(store_blob_read(t, &dg, collect_fn, &c, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(c.calls, 0);
	store_txn_abort(t);
	free(v);
	free(src);
	store_close(s);
}
END_TEST

/* ---- transactions ---------------------------------------------------- */

START_TEST(test_txn_abort)
{
	struct store *s = open_new();
	uint8_t src[3000];
	struct store_blob_writer *w;
	struct store_sample_writer *sw;
	struct rba_digest dg;
	struct store_txn *t;
	struct rba_detail d;
	uint64_t txnid;
	uint64_t entries;

	fill_random(src, sizeof(src), 77);
	txnid = store_last_txnid(s);
	t = begin(s, 1);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_OTHER, src, sizeof(src),
					NULL, NULL, 0, &dg, NULL, &d), 0);
	ck_assert_int_eq(store_history_append(t, "v", 1, "x", 1, NULL, NULL,
					      &d), 0);
	store_txn_abort(t);
	store_txn_abort(NULL);
	ck_assert_uint_eq(store_last_txnid(s), txnid);
	t = begin(s, 0);
	ck_assert_int_eq(store_blob_info(t, &dg, &(struct store_blob_info){0},
					 &d), RBA_E_NOTFOUND);
	ck_assert_uint_eq(store_debug_entries(t, "history"), 0);
	store_txn_abort(t);

	/* A writer left open makes commit abort. */
	t = begin(s, 1);
	ck_assert_int_eq(store_blob_writer_new(t, STORE_BLOB_OTHER, &w, &d), 0);
	ck_assert_int_eq(store_blob_writer_add(w, src, sizeof(src), &d), 0);
	ck_assert_int_eq(store_txn_commit(t, &d), RBA_E_USAGE);
	/* Inert after its transaction ended. */
	ck_assert_int_eq(store_blob_writer_add(w, src, 1, &d), RBA_E_USAGE);
	store_blob_writer_free(w);
	ck_assert_uint_eq(store_last_txnid(s), txnid);

	/* A writer freed unfinished leaves nothing behind. */
	{
		uint8_t *big = calloc(1, MIB + 10);
		t = begin(s, 1);
		entries = store_debug_entries(t, "blobs");
		ck_assert_int_eq(store_blob_writer_new(t, STORE_BLOB_OTHER, &w,
						       &d), 0);
		ck_assert_int_eq(store_blob_writer_add(w, big, MIB + 10, &d), 0);
		ck_assert_uint_eq(store_debug_entries(t, "blobs"), entries + 1);
		store_blob_writer_free(w);
		ck_assert_uint_eq(store_debug_entries(t, "blobs"), entries);
		commit(t);
		free(big);
	}

	/* An unfinished sample writer fails its transaction. */
	{
		struct store_version v = { 0 };
		t = begin(s, 1);
		ck_assert_int_eq(store_blob_put(t, STORE_BLOB_ARTIFACT, "a", 1,
						NULL, NULL, 0, &v.artifact,
						NULL, &d), 0);
		v.snapshot = v.artifact;
		v.name = "v1";
		v.pins_text = "p";
		v.env_text = "e";
		ck_assert_int_eq(store_version_put(t, &v, 0, &d), 0);
		commit(t);
		txnid = store_last_txnid(s);
		t = begin(s, 1);
		ck_assert_int_eq(store_sample_begin(t, "v1", "c", NULL, &sw, &d),
				 0);
		store_sample_writer_free(sw);
		ck_assert_int_eq(store_txn_commit(t, &d), RBA_E_USAGE);
		ck_assert(has_text(d.reason, "unfinished"));
		ck_assert_uint_eq(store_last_txnid(s), txnid);
	}
	store_close(s);
}
END_TEST

/* ---- versions -------------------------------------------------------- */

struct vlist {
	char names[8][32];
	int has_policy[8];
	int has_sample[8];
	int n;
};

static int
vlist_fn(void *ctx, const struct store_version *v)
{
	struct vlist *l = ctx;

	snprintf(l->names[l->n], sizeof(l->names[0]), "%s", v->name);
	l->has_policy[l->n] = v->has_policy;
	l->has_sample[l->n] = v->has_sample;
	l->n++;
	return 0;
}

static void
add_version(struct store *s, const char *name, struct rba_digest *art,
	    struct rba_digest *snap)
{
	struct store_version v = { 0 };
	struct store_txn *t = begin(s, 1);
	struct rba_detail d;
	char text[64];

	snprintf(text, sizeof(text), "artifact of %s", name);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_ARTIFACT, text,
					strlen(text), NULL, NULL, 0, art, NULL,
					&d), 0);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_SNAPSHOT, "a,b\n1,2\n", 8,
					"snap", NULL, 0, snap, NULL, &d), 0);
	v.name = (char *)name;
	v.pins_text = "schema: rebuild-audit/pins/v1\n";
	v.env_text = "cpu=x\nlmdb=y\n";
	v.registered_at = 1700000000;
	v.artifact = *art;
	v.snapshot = *snap;
	ck_assert_msg(store_version_put(t, &v, 0, &d) == 0, "%s", d.reason);
	commit(t);
}

START_TEST(test_versions)
{
	struct store *s = open_new();
	struct rba_digest art, snap, pol, missing;
	struct store_version v = { 0 }, got;
	struct store_txn *t;
	struct rba_detail d;
	struct vlist l;
	uint8_t *raw;
	size_t rn;

	add_version(s, "credit-b", &art, &snap);
	add_version(s, "credit-a", &art, &snap);
	t = begin(s, 0);
	ck_assert_int_eq(store_version_get(t, "credit-b", &got, &d), 0);
	ck_assert_str_eq(got.name, "credit-b");
	ck_assert_str_eq(got.pins_text, "schema: rebuild-audit/pins/v1\n");
	ck_assert_str_eq(got.env_text, "cpu=x\nlmdb=y\n");
	ck_assert_int_eq(got.registered_at, 1700000000);
	ck_assert(rba_digest_equal(&got.snapshot, &snap));
	ck_assert_int_eq(got.has_policy, 0);
	ck_assert_ptr_null(got.policy_text);
	ck_assert_int_eq(got.has_sample, 0);
	store_version_release(&got);
	store_version_release(NULL);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(store_version_list(t, vlist_fn, &l, &d), 0);
	ck_assert_int_eq(l.n, 2);
	ck_assert_str_eq(l.names[0], "credit-a");
	ck_assert_str_eq(l.names[1], "credit-b");
	ck_assert_int_eq(store_version_get(t, "nope", &got, &d),
			 RBA_E_NOTFOUND);
	ck_assert_str_eq(d.key, "nope");
	store_txn_abort(t);

	t = begin(s, 1);
	/* Existing name, without and with replace. */
	ck_assert_int_eq(store_version_get(t, "credit-a", &got, &d), 0);
	free(got.pins_text);
	got.pins_text = strdup("changed\n");
	ck_assert_int_eq(store_version_put(t, &got, 0, &d), RBA_E_EXISTS);
	ck_assert_int_eq(store_version_put(t, &got, 1, &d), 0);
	/* Blobs must exist. */
	v = got;
	v.name = "credit-c";
	memset(missing.b, 0x42, 32);
	v.artifact = missing;
	rba_detail_clear(&d);
	ck_assert_int_eq(store_version_put(t, &v, 0, &d), RBA_E_NOTFOUND);
	ck_assert(has_text(d.reason, "artifact"));
	v.artifact = got.artifact;
	v.snapshot = missing;
	ck_assert_int_eq(store_version_put(t, &v, 0, &d), RBA_E_NOTFOUND);
	ck_assert(has_text(d.reason, "snapshot"));
	v.name = "";
	ck_assert_int_eq(store_version_put(t, &v, 0, &d), RBA_E_USAGE);
	{
		char longname[STORE_VERSION_NAME_MAX + 2];
		memset(longname, 'v', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = 0;
		v.name = longname;
		v.snapshot = got.snapshot;
		ck_assert_int_eq(store_version_put(t, &v, 0, &d), RBA_E_LIMIT);
	}
	v.name = "credit-c";
	v.pins_text = NULL;
	ck_assert_int_eq(store_version_put(t, &v, 0, &d), RBA_E_USAGE);
	store_version_release(&got);
	/* Policy set and removed. */
	rba_digest_bytes("policy", 6, &pol);
	ck_assert_int_eq(store_version_set_policy(t, "credit-b", "bands: []\n",
						  &pol, &d), 0);
	ck_assert_int_eq(store_version_set_policy(t, "nope", "x", &pol, &d),
			 RBA_E_NOTFOUND);
	ck_assert_int_eq(store_version_set_policy(t, "credit-b", "x", NULL, &d),
			 RBA_E_USAGE);
	commit(t);

	t = begin(s, 1);
	ck_assert_int_eq(store_version_get(t, "credit-a", &got, &d), 0);
	ck_assert_str_eq(got.pins_text, "changed\n");
	store_version_release(&got);
	ck_assert_int_eq(store_version_get(t, "credit-b", &got, &d), 0);
	ck_assert_int_eq(got.has_policy, 1);
	ck_assert_str_eq(got.policy_text, "bands: []\n");
	ck_assert(rba_digest_equal(&got.policy_digest, &pol));
	ck_assert_str_eq(got.pins_text, "schema: rebuild-audit/pins/v1\n");
	store_version_release(&got);
	ck_assert_int_eq(store_version_set_policy(t, "credit-b", NULL, NULL, &d),
			 0);
	ck_assert_int_eq(store_version_get(t, "credit-b", &got, &d), 0);
	ck_assert_int_eq(got.has_policy, 0);
	store_version_release(&got);

	/* A flipped byte breaks the seal; a bad tag is corrupt. */
	ck_assert_int_eq(store_debug_get_raw(t, "versions", "credit-a", 8, &raw,
					     &rn, &d), 0);
	raw[rn / 2] ^= 0x20;
	ck_assert_int_eq(store_debug_put_raw(t, "versions", "credit-a", 8, raw,
					     rn, &d), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_version_get(t, "credit-a", &got, &d),
			 RBA_E_TAMPERED);
	ck_assert(has_text(d.reason, "tampered"));
	ck_assert_int_eq(store_version_list(t, vlist_fn, &l, &d),
			 RBA_E_TAMPERED);
	raw[rn / 2] ^= 0x20;
	raw[0] = 0x21;
	ck_assert_int_eq(store_debug_put_raw(t, "versions", "credit-a", 8, raw,
					     rn, &d), 0);
	ck_assert_int_eq(store_version_get(t, "credit-a", &got, &d),
			 RBA_E_CORRUPT);
	/* A record stored under another version's name. */
	raw[0] = 0x20;
	ck_assert_int_eq(store_debug_put_raw(t, "versions", "credit-x", 8, raw,
					     rn, &d), 0);
	ck_assert_int_eq(store_version_get(t, "credit-x", &got, &d),
			 RBA_E_CORRUPT);
	free(raw);
	store_txn_abort(t);
	store_close(s);
}
END_TEST

/* A version's meta: kept in a record of the second format; a record of
 * the first (as earlier tools wrote it) read, edited and written back as
 * it was. */
START_TEST(test_version_meta)
{
	struct store *s = open_new();
	struct rba_digest art, snap, pol;
	struct store_version got;
	struct store_txn *t;
	struct rba_detail d;
	uint8_t *raw, *raw2;
	size_t rn, rn2;
	static const uint8_t meta[] = { 'A', 1, 0, 0xff, 7 };
	char *oldname;

	add_version(s, "old", &art, &snap);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "versions", "old", 3, &raw, &rn,
					     &d), 0);
	ck_assert_uint_eq(raw[0], 0x20);
	ck_assert_uint_eq(raw[1], 1); /* no meta: the first format */
	ck_assert_int_eq(store_version_get(t, "old", &got, &d), 0);
	ck_assert_int_eq(got.has_meta, 0);
	ck_assert_ptr_null(got.meta);
	/* put of what get gave: the same bytes */
	ck_assert_int_eq(store_version_put(t, &got, 1, &d), 0);
	ck_assert_int_eq(store_debug_get_raw(t, "versions", "old", 3, &raw2,
					     &rn2, &d), 0);
	ck_assert(rn2 == rn && memcmp(raw, raw2, rn) == 0);
	free(raw2);
	/* policy set keeps the first format */
	rba_digest_bytes("policy", 6, &pol);
	ck_assert_int_eq(store_version_set_policy(t, "old", "bands: []\n", &pol,
						  &d), 0);
	ck_assert_int_eq(store_debug_get_raw(t, "versions", "old", 3, &raw2,
					     &rn2, &d), 0);
	ck_assert_uint_eq(raw2[1], 1);
	free(raw2);
	/* the second format: meta kept, empty or not (got's own name is
	 * put back before it is released) */
	oldname = got.name;
	got.name = "new";
	got.has_meta = 1;
	got.meta = (uint8_t *)meta;
	got.meta_len = sizeof(meta);
	ck_assert_int_eq(store_version_put(t, &got, 0, &d), 0);
	got.name = "empty";
	got.meta = NULL;
	got.meta_len = 0;
	ck_assert_int_eq(store_version_put(t, &got, 0, &d), 0);
	got.name = "bad";
	got.meta_len = 3;
	ck_assert_int_eq(store_version_put(t, &got, 0, &d), RBA_E_USAGE);
	got.meta = (uint8_t *)meta;
	got.meta_len = STORE_VERSION_META_MAX + 1;
	ck_assert_int_eq(store_version_put(t, &got, 0, &d), RBA_E_LIMIT);
	got.name = oldname;
	got.meta = NULL;
	store_version_release(&got);
	commit(t);

	t = begin(s, 1);
	ck_assert_int_eq(store_version_get(t, "new", &got, &d), 0);
	ck_assert_int_eq(got.has_meta, 1);
	ck_assert_uint_eq(got.meta_len, sizeof(meta));
	ck_assert(memcmp(got.meta, meta, sizeof(meta)) == 0);
	store_version_release(&got);
	ck_assert_int_eq(store_version_set_policy(t, "new", "bands: []\n", &pol,
						  &d), 0);
	ck_assert_int_eq(store_version_get(t, "new", &got, &d), 0);
	ck_assert(got.has_policy && got.has_meta && got.meta_len == sizeof(meta) &&
		  memcmp(got.meta, meta, sizeof(meta)) == 0);
	store_version_release(&got);
	ck_assert_int_eq(store_version_get(t, "empty", &got, &d), 0);
	ck_assert(got.has_meta == 1 && got.meta_len == 0 && got.meta == NULL);
	store_version_release(&got);
	ck_assert_int_eq(store_version_get(t, "bad", &got, &d), RBA_E_NOTFOUND);
	/* the second format's record: format byte 2, sealed like the first */
	ck_assert_int_eq(store_debug_get_raw(t, "versions", "new", 3, &raw2, &rn2,
					     &d), 0);
	ck_assert_uint_eq(raw2[1], 2);
	raw2[rn2 - 33] ^= 1; /* the last meta byte */
	ck_assert_int_eq(store_debug_put_raw(t, "versions", "new", 3, raw2, rn2,
					     &d), 0);
	ck_assert_int_eq(store_version_get(t, "new", &got, &d), RBA_E_TAMPERED);
	raw2[rn2 - 33] ^= 1;
	raw2[1] = 3; /* a later format */
	ck_assert_int_eq(store_debug_put_raw(t, "versions", "new", 3, raw2, rn2,
					     &d), 0);
	ck_assert_int_eq(store_version_get(t, "new", &got, &d), RBA_E_CORRUPT);
	raw2[1] = 1; /* the first format's byte on the second's layout */
	ck_assert_int_eq(store_debug_put_raw(t, "versions", "new", 3, raw2, rn2,
					     &d), 0);
	ck_assert_int_eq(store_version_get(t, "new", &got, &d), RBA_E_TAMPERED);
	free(raw2);
	free(raw);
	store_txn_abort(t);
	store_close(s);
}
END_TEST

/* ---- samples --------------------------------------------------------- */

struct sread {
	uint8_t buf[4096];
	size_t n;
	uint32_t next;
};

static int
sread_fn(void *ctx, uint32_t chunk_no, const uint8_t *p, size_t n)
{
	struct sread *r = ctx;

	ck_assert_uint_eq(chunk_no, r->next);
	r->next++;
	ck_assert_uint_le(r->n + n, sizeof(r->buf));
	memcpy(r->buf + r->n, p, n);
	r->n += n;
	return 0;
}

static void
write_sample(struct store *s, const char *version, const char *const *chunks,
	     size_t nchunks, struct rba_digest *dg)
{
	struct store_sample_writer *w;
	struct store_txn *t = begin(s, 1);
	struct rba_detail d;
	struct rba_digest pol;

	rba_digest_bytes("pol", 3, &pol);
	/* The columns text is set again once the chunks are in: the record
	 * carries the last one. */
	ck_assert_int_eq(store_sample_begin(t, version, "pending", &pol, &w, &d), 0);
	for (size_t i = 0; i < nchunks; i++) {
		/* Each chunk: its case ids are the lines' first fields. */
		const char *ids[8];
		char copy[256], *save, *line;
		size_t k = 0;
		snprintf(copy, sizeof(copy), "%s", chunks[i]);
		for (line = strtok_r(copy, "\n", &save); line != NULL;
		     line = strtok_r(NULL, "\n", &save)) {
			*strchr(line, ',') = 0;
			ids[k++] = line;
		}
		ck_assert_msg(store_sample_add_chunk(w, chunks[i],
						     strlen(chunks[i]), ids, k,
						     &d) == 0, "%s", d.reason);
	}
	ck_assert_int_eq(store_sample_set_columns(w, "id,x,score,decision", &d), 0);
	ck_assert_int_eq(store_sample_finish(w, dg, &d), 0);
	ck_assert_int_eq(store_sample_finish(w, dg, &d), RBA_E_USAGE);
	ck_assert_int_eq(store_sample_set_columns(w, "late", &d), RBA_E_USAGE);
	store_sample_writer_free(w);
	commit(t);
}

/* store_check: the test's chunks are CSV lines whose first field is the
 * case id. */
static int
csv_cases(void *ctx, const char *version, const char *columns,
	  uint32_t chunk_no, const uint8_t *p, size_t n, store_case_fn each,
	  void *ectx, struct rba_detail *d)
{
	char copy[256], *save, *line;
	int rc;

	(void)ctx;
	(void)version;
	(void)columns;
	(void)chunk_no;
	(void)d;
	snprintf(copy, sizeof(copy), "%.*s", (int)n, (const char *)p);
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		*strchr(line, ',') = 0;
		if ((rc = each(ectx, line)) != 0)
			return rc;
	}
	return 0;
}

struct findings {
	unsigned n;
	char db[16], key[64], reason[256];
};

static int
on_finding(void *ctx, const struct store_finding *f)
{
	struct findings *fs = ctx;

	if (fs->n++ == 0) {
		snprintf(fs->db, sizeof(fs->db), "%s", f->db);
		snprintf(fs->key, sizeof(fs->key), "%s", f->key);
		snprintf(fs->reason, sizeof(fs->reason), "%s", f->reason);
	}
	return 0;
}

static void
run_check(struct store *s, struct findings *fs, struct store_check_stats *st)
{
	struct store_check_hooks h = { csv_cases, on_finding, fs };
	struct store_txn *t = begin(s, 0);
	struct rba_detail d;

	memset(fs, 0, sizeof(*fs));
	ck_assert_int_eq(store_check(t, &h, st, &d), 0);
	store_txn_abort(t);
}

/* Writes cases id prefix "c" + number, 8192 to a chunk, as nchunks
 * chunks, into version's sample; finishes and commits when finish. */
static void
write_big(struct store *s, const char *version, const char *tag,
	  unsigned nchunks, int finish)
{
	static char ids[8192][16];
	const char *idp[8192];
	struct store_sample_writer *w;
	struct store_txn *t = begin(s, 1);
	struct rba_detail d;
	char body[64];

	ck_assert_msg(store_sample_begin(t, version, "big", NULL, &w, &d) == 0,
		      "%s", d.reason);
	for (unsigned c = 0; c < nchunks; c++) {
		for (unsigned i = 0; i < 8192; i++) {
			snprintf(ids[i], sizeof(ids[i]), "c%06u", c * 8192 + i);
			idp[i] = ids[i];
		}
		snprintf(body, sizeof(body), "%s chunk %u", tag, c);
		ck_assert_msg(store_sample_add_chunk(w, body, strlen(body), idp,
						     8192, &d) == 0, "%s",
			      d.reason);
	}
	if (!finish) {
		/* What a failure or a kill after the first step leaves. */
		store_sample_writer_free(w);
		store_txn_abort(t);
		return;
	}
	ck_assert_int_eq(store_sample_finish(w, NULL, &d), 0);
	store_sample_writer_free(w);
	commit(t);
}

static void
check_clean(struct store *s, struct store_check_stats *st)
{
	struct store_check_hooks h = { NULL, on_finding, NULL };
	struct findings fs;
	struct store_txn *t = begin(s, 0);
	struct rba_detail d;

	memset(&fs, 0, sizeof(fs));
	h.ctx = &fs;
	ck_assert_int_eq(store_check(t, &h, st, &d), 0);
	store_txn_abort(t);
	ck_assert_msg(fs.n == 0, "%s %s: %s", fs.db, fs.key, fs.reason);
}

static uint32_t
sample_gen(struct store *s, const char *version, uint64_t *cases)
{
	struct store_sample_info info;
	struct store_txn *t = begin(s, 0);
	struct rba_detail d;
	uint32_t g;

	ck_assert_int_eq(store_sample_info(t, version, &info, &d), 0);
	g = info.generation;
	*cases = info.cases;
	store_sample_info_release(&info);
	store_txn_abort(t);
	return g;
}

/* A sample over one step long: written in steps, beside the one it
 * replaces; whatever a failure leaves is marked dead and cleared. */
START_TEST(test_sample_steps)
{
	static const char *const small[] = { "c1,0.5,0.12,approve\n" };
	uint8_t mk[8] = { 2, 'v', '1', 0x20, 0, 0, 0, 0 }, *mark, *v;
	uint8_t gk[14] = { 2, 'v', '1', 0x10, 0, 0, 0, 7, 1, 0, 0, 0, 0 };
	struct store *s = open_new();
	struct rba_digest art, snap, dg;
	struct store_check_stats st;
	struct store_txn *t;
	struct rba_detail d;
	struct findings fs;
	uint64_t cleared, cases;
	uint32_t chunk_no;
	size_t markn, vn, klen;
	uint8_t key[STORE_DEBUG_KEY_MAX];
	struct store_sample_writer *w;

	add_version(s, "v1", &art, &snap);
	/* Nine chunks of 8192: a step is committed after the eighth, then
	 * the write fails.  The first eight are marked dead, no sample. */
	write_big(s, "v1", "a", 9, 0);
	check_clean(s, &st);
	ck_assert_uint_eq(st.samples, 0);
	ck_assert_uint_eq(st.dead_marks, 1);
	ck_assert_uint_eq(st.dead_records, 8 * 8192 + 8);
	/* Keep the mark's bytes for the forgery below. */
	t = begin(s, 0);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", mk, sizeof(mk), &mark,
					     &markn, &d), 0);
	store_txn_abort(t);
	ck_assert_int_eq(store_sample_clear(s, NULL, &cleared, &d), 0);
	ck_assert_uint_eq(cleared, 8 * 8192 + 8);
	check_clean(s, &st);
	ck_assert_uint_eq(st.dead_marks, 0);
	t = begin(s, 0);
	ck_assert_uint_eq(store_debug_entries(t, "samples"), 0);
	store_txn_abort(t);

	/* The whole sample, then a small one replacing it: generation 1
	 * beside 0, the old one too big for the last step, so marked. */
	write_big(s, "v1", "a", 9, 1);
	ck_assert_uint_eq(sample_gen(s, "v1", &cases), 0);
	ck_assert_uint_eq(cases, 9 * 8192);
	check_clean(s, &st);
	ck_assert_uint_eq(st.index_entries, 9 * 8192);
	write_sample(s, "v1", small, 1, &dg);
	ck_assert_uint_eq(sample_gen(s, "v1", &cases), 1);
	ck_assert_uint_eq(cases, 1);
	check_clean(s, &st);
	ck_assert_uint_eq(st.samples, 1);
	ck_assert_uint_eq(st.index_entries, 1);
	ck_assert_uint_eq(st.dead_marks, 1);
	ck_assert_uint_eq(st.dead_records, 9 * 8192 + 9 + 1);
	t = begin(s, 0);
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "c000007", &chunk_no,
						 &d), RBA_E_NOTFOUND);
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "c1", &chunk_no, &d), 0);
	store_txn_abort(t);
	ck_assert_int_eq(store_sample_clear(s, "v1", &cleared, &d), 0);
	ck_assert_uint_eq(cleared, 9 * 8192 + 9 + 1);
	check_clean(s, &st);
	ck_assert_uint_eq(st.dead_marks, 0);
	/* A small one replacing a small one: back to generation 0, the old
	 * deleted in the last step. */
	write_sample(s, "v1", small, 1, &dg);
	ck_assert_uint_eq(sample_gen(s, "v1", &cases), 0);
	check_clean(s, &st);
	ck_assert_uint_eq(st.dead_marks, 0);
	t = begin(s, 0);
	ck_assert_uint_eq(store_debug_entries(t, "samples"), 4);
	store_txn_abort(t);

	/* A mark naming the sample's own generation is damage: check says
	 * so and clear refuses to delete the sample. */
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_put_raw(t, "samples", mk, sizeof(mk), mark,
					     markn, &d), 0);
	commit(t);
	run_check(s, &fs, &st);
	ck_assert_uint_eq(fs.n, 1);
	ck_assert_msg(strstr(fs.reason, "marked dead") != NULL, "%s", fs.reason);
	ck_assert_int_eq(store_sample_clear(s, "v1", &cleared, &d), RBA_E_TAMPERED);
	/* Clearing for every version skips it, and deletes nothing. */
	ck_assert_int_eq(store_sample_clear(s, NULL, &cleared, &d), 0);
	ck_assert_uint_eq(cleared, 0);
	ck_assert_uint_eq(sample_gen(s, "v1", &cases), 0);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_del_raw(t, "samples", mk, sizeof(mk), &d), 0);
	commit(t);
	/* Records of a generation neither the record nor a mark names. */
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_put_raw(t, "samples", gk, 13, "x", 1, &d), 0);
	commit(t);
	run_check(s, &fs, &st);
	ck_assert_uint_eq(fs.n, 1);
	ck_assert_msg(strstr(fs.reason, "generation 7") != NULL, "%s", fs.reason);
	/* A forged mark for it makes it debris, cleared like any. */
	mk[7] = 7;
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_put_raw(t, "samples", mk, sizeof(mk), mark,
					     markn, &d), 0);
	commit(t);
	check_clean(s, &st);
	ck_assert_uint_eq(st.dead_marks, 1);
	ck_assert_int_eq(store_sample_clear(s, "v1", &cleared, &d), 0);
	ck_assert_uint_eq(cleared, 1);
	t = begin(s, 0);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", gk, 13, &v, &vn, &d),
			 RBA_E_NOTFOUND);
	store_txn_abort(t);

	/* Unmarked records where the replacement would go (generation 1):
	 * the writer refuses to begin rather than mix them in. */
	gk[7] = 1;
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_put_raw(t, "samples", gk, 13, "x", 1, &d), 0);
	commit(t);
	t = begin(s, 1);
	ck_assert_int_eq(store_sample_begin(t, "v1", "", NULL, &w, &d),
			 RBA_E_CORRUPT);
	ck_assert_msg(strstr(d.reason, "still stored (generation 1)") != NULL,
		      "%s", d.reason);
	ck_assert_int_eq(store_debug_del_raw(t, "samples", gk, 13, &d), 0);
	commit(t);
	/* A damaged sample record: its replacement deletes it whole, in
	 * the writer's transaction, and is written at generation 0. */
	t = begin(s, 1);
	store_debug_sample_info_key("v1", key, &klen);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", key, klen, &v, &vn,
					     &d), 0);
	v[vn - 1] ^= 1;
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, v, vn, &d),
			 0);
	free(v);
	commit(t);
	run_check(s, &fs, &st);
	ck_assert_uint_eq(fs.n, 1);
	write_sample(s, "v1", small, 1, &dg);
	ck_assert_uint_eq(sample_gen(s, "v1", &cases), 0);
	check_clean(s, &st);
	ck_assert_uint_eq(st.samples, 1);
	free(mark);
	store_close(s);
}
END_TEST

START_TEST(test_store_check)
{
	static const char *const chunks[] = {
		"c1,0.5,0.12,approve\nc2,0.1,0.91,decline\n",
		"c3,0.7,0.40,refer\n",
	};
	struct store *s = open_new();
	struct rba_digest art, snap, dg;
	struct store_check_stats st;
	struct findings fs;
	struct store_txn *t;
	struct rba_detail d;
	uint8_t key[STORE_DEBUG_KEY_MAX], *v;
	size_t klen, vn;

	add_version(s, "v1", &art, &snap);
	write_sample(s, "v1", chunks, 2, &dg);
	t = begin(s, 1);
	ck_assert_int_eq(store_history_append(t, "v1", 1, "{}", 2, NULL, NULL,
					      &d), 0);
	commit(t);
	run_check(s, &fs, &st);
	ck_assert_msg(fs.n == 0, "%s %s: %s", fs.db, fs.key, fs.reason);
	ck_assert_uint_eq(st.versions, 1);
	ck_assert_uint_eq(st.blobs, 2);
	ck_assert_uint_eq(st.samples, 1);
	ck_assert_uint_eq(st.sample_chunks, 2);
	ck_assert_uint_eq(st.cases, 3);
	ck_assert_uint_eq(st.index_entries, 3);
	ck_assert_uint_eq(st.history, 1);
	ck_assert_uint_eq(st.findings, 0);

	/* An index entry pointing at the wrong chunk. */
	t = begin(s, 1);
	klen = store_debug_sample_case_key("v1", 0, "c3", key);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", key, klen, &v, &vn,
					     &d), 0);
	v[2] ^= 1;
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, v, vn, &d),
			 0);
	commit(t);
	run_check(s, &fs, &st);
	ck_assert_uint_ge(fs.n, 1);
	ck_assert_str_eq(fs.db, "samples");
	ck_assert_str_eq(fs.key, "v1/c3");
	ck_assert_msg(strstr(fs.reason, "case index") != NULL, "%s", fs.reason);
	t = begin(s, 1);
	v[2] ^= 1;
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, v, vn, &d),
			 0);
	free(v);
	/* An extra index entry: the count no longer agrees. */
	klen = store_debug_sample_case_key("v1", 0, "c9", key);
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen,
					     "\x32\x01\0\0\0\0", 6, &d), 0);
	commit(t);
	run_check(s, &fs, &st);
	ck_assert_uint_ge(fs.n, 1);
	ck_assert_msg(strstr(fs.reason, "3 cases") != NULL, "%s", fs.reason);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_del_raw(t, "samples", key, klen, &d), 0);
	/* A version naming a missing artifact. */
	store_debug_blob_chunk_key(&art, 0, key, &klen);
	ck_assert_int_eq(store_debug_del_raw(t, "blobs", key, klen, &d), 0);
	ck_assert_int_eq(store_debug_del_raw(t, "blobs", art.b, 32, &d), 0);
	commit(t);
	run_check(s, &fs, &st);
	ck_assert_uint_eq(fs.n, 1);
	ck_assert_str_eq(fs.db, "versions");
	ck_assert_str_eq(fs.key, "v1");
	ck_assert_msg(strstr(fs.reason, "not in the store") != NULL, "%s",
		      fs.reason);
	store_close(s);
}
END_TEST

/* A sread callback that refuses chunk 1, as a decoder refuses bytes. */
static int
sread_refuse1(void *ctx, uint32_t chunk_no, const uint8_t *p, size_t n)
{
	if (chunk_no == 1)
		return RBA_E_SYNTAX;
	return sread_fn(ctx, chunk_no, p, n);
}

/*
 * store_sample_stream hashes the content once: a chunk whose frame is
 * sound but whose plaintext is another's reaches the callback, and the
 * call still fails naming that chunk, as store_sample_read does before
 * the callback; a callback's error on such a chunk gives way to the
 * tampering; on an intact sample the callback's error is its own.
 */
START_TEST(test_sample_stream)
{
	static const char *const chunks[] = {
		"c1,0.5,0.12,approve\nc2,0.1,0.91,decline\n",
		"c3,0.7,0.40,refer\n",
		"c4,0.2,0.33,refer\nc5,0.9,0.77,decline\nc6,0.0,0.01,approve\n",
	};
	struct store *s = open_new();
	struct rba_digest dg, art, snap;
	struct rba_detail d;
	struct store_txn *t;
	struct sread r;
	uint8_t key[STORE_DEBUG_KEY_MAX], *v, plain[64], frame[256];
	size_t klen, vn, pn, fn;

	add_version(s, "v", &art, &snap);
	write_sample(s, "v", chunks, 3, &dg);
	t = begin(s, 0);
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(store_sample_stream(t, "v", sread_fn, &r, &d), 0);
	ck_assert_uint_eq(r.next, 3);
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(store_sample_stream(t, "v", sread_refuse1, &r, &d),
			 RBA_E_SYNTAX);
	store_txn_abort(t);

	/* Chunk 1's plaintext changed by one byte, in a sound frame. */
	store_debug_sample_chunk_key("v", 0, 1, key, &klen);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", key, klen, &v, &vn,
					     &d), 0);
	/* the record: header, frame, then a 32-byte seal */
	pn = ZSTD_decompress(plain, sizeof(plain),
			     v + STORE_DEBUG_CHUNK_FRAME_OFF,
			     vn - STORE_DEBUG_CHUNK_FRAME_OFF - 32);
	ck_assert(!ZSTD_isError(pn));
	ck_assert_uint_eq(pn, strlen(chunks[1]));
	plain[3] = '8'; /* c3,0.8,... */
	fn = ZSTD_compress(frame, sizeof(frame), plain, pn, 3);
	ck_assert(!ZSTD_isError(fn));
	v = realloc(v, STORE_DEBUG_CHUNK_FRAME_OFF + fn + 32);
	ck_assert_ptr_nonnull(v);
	memcpy(v + STORE_DEBUG_CHUNK_FRAME_OFF, frame, fn);
	vn = STORE_DEBUG_CHUNK_FRAME_OFF + fn + 32;
	store_debug_chunk_reseal(v, vn);
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, v, vn,
					     &d), 0);
	free(v);
	commit(t);

	t = begin(s, 0);
	memset(&r, 0, sizeof(r));
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_read(t, "v", sread_fn, &r, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(r.next, 1); /* stopped before chunk 1 */
	ck_assert_msg(has_text(d.reason, "chunk 1 does not match its recorded "
			       "digest"), "%s", d.reason);
	memset(&r, 0, sizeof(r));
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_stream(t, "v", sread_fn, &r, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(r.next, 3); /* every chunk, then the digest */
	ck_assert_msg(has_text(d.reason, "chunk 1 does not match its recorded "
			       "digest"), "%s", d.reason);
	memset(&r, 0, sizeof(r));
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_stream(t, "v", sread_refuse1, &r, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "chunk 1 does not match"), "%s",
		      d.reason);
	store_txn_abort(t);

	/* Another sample whose chunk 2's seal alone is wrong: its plaintext
	 * is right, and the stream, which checks seals beside the scoring,
	 * still refuses it in store_sample_read's words. */
	add_version(s, "w", &art, &snap);
	write_sample(s, "w", chunks, 3, &dg);
	store_debug_sample_chunk_key("w", 0, 2, key, &klen);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", key, klen, &v, &vn,
					     &d), 0);
	v[vn - 1] ^= 0x01;
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, v, vn,
					     &d), 0);
	free(v);
	commit(t);
	t = begin(s, 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_read(t, "w", sread_fn,
					   &(struct sread){ .n = 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "chunk 2 is malformed"), "%s", d.reason);
	memset(&r, 0, sizeof(r));
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_stream(t, "w", sread_fn, &r, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(r.next, 3);
	ck_assert_msg(has_text(d.reason, "chunk 2 is malformed"), "%s", d.reason);
	store_txn_abort(t);

	/* A byte of chunk 1's frame changed, the seal left as it was: the
	 * frame no longer decompresses, and the stream, which meets that
	 * before it has checked the seal, names the chunk as
	 * store_sample_read does (its seal). */
	add_version(s, "x", &art, &snap);
	write_sample(s, "x", chunks, 3, &dg);
	store_debug_sample_chunk_key("x", 0, 1, key, &klen);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", key, klen, &v, &vn,
					     &d), 0);
	v[STORE_DEBUG_CHUNK_FRAME_OFF + 3] ^= 0xff;
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, v, vn,
					     &d), 0);
	free(v);
	commit(t);
	t = begin(s, 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_read(t, "x", sread_fn,
					   &(struct sread){ .n = 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "chunk 1 is malformed"), "%s", d.reason);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_stream(t, "x", sread_fn,
					     &(struct sread){ .n = 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "chunk 1 is malformed"), "%s", d.reason);
	store_txn_abort(t);
	store_close(s);
}
END_TEST

START_TEST(test_samples)
{
	static const char *const chunks[] = {
		"c1,0.5,0.12,approve\nc2,0.1,0.91,decline\n",
		"c3,0.7,0.40,refer\n",
		"c4,0.2,0.33,refer\nc5,0.9,0.77,decline\nc6,0.0,0.01,approve\n",
	};
	struct store *s = open_new();
	struct rba_digest art, snap, dg, want, pol;
	struct store_sample_info info;
	struct store_version v;
	struct store_sample_writer *w;
	struct store_txn *t;
	struct rba_detail d;
	struct sread r;
	struct rba_hasher h;
	uint32_t chunk;
	uint8_t *p, key[STORE_DEBUG_KEY_MAX];
	size_t n, klen;
	uint64_t txnid;

	add_version(s, "v1", &art, &snap);
	add_version(s, "v2", &art, &snap);
	write_sample(s, "v1", chunks, 3, &dg);
	rba_hasher_init(&h);
	for (int i = 0; i < 3; i++)
		rba_hasher_update(&h, chunks[i], strlen(chunks[i]));
	rba_hasher_final(&h, &want);
	ck_assert(rba_digest_equal(&dg, &want));
	rba_digest_bytes("pol", 3, &pol);

	t = begin(s, 0);
	ck_assert_int_eq(store_sample_info(t, "v1", &info, &d), 0);
	ck_assert_uint_eq(info.cases, 6);
	ck_assert_uint_eq(info.chunks, 3);
	ck_assert(rba_digest_equal(&info.digest, &want));
	ck_assert_int_eq(info.has_policy, 1);
	ck_assert(rba_digest_equal(&info.policy_digest, &pol));
	ck_assert_str_eq(info.columns, "id,x,score,decision");
	ck_assert_uint_eq(info.size, strlen(chunks[0]) + strlen(chunks[1]) +
					     strlen(chunks[2]));
	store_sample_info_release(&info);
	ck_assert_int_eq(store_sample_info(t, "v2", &info, &d), RBA_E_NOTFOUND);
	ck_assert_int_eq(store_version_get(t, "v1", &v, &d), 0);
	ck_assert_int_eq(v.has_sample, 1);
	ck_assert_int_eq(v.sample_err, 0);
	ck_assert_uint_eq(v.sample.cases, 6);
	store_version_release(&v);
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(store_sample_read(t, "v1", sread_fn, &r, &d), 0);
	ck_assert_uint_eq(r.next, 3);
	{
		char all[512];
		snprintf(all, sizeof(all), "%s%s%s", chunks[0], chunks[1],
			 chunks[2]);
		ck_assert_uint_eq(r.n, strlen(all));
		ck_assert_mem_eq(r.buf, all, r.n);
	}
	/* One case without the others. */
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "c5", &chunk, &d), 0);
	ck_assert_uint_eq(chunk, 2);
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "c3", &chunk, &d), 0);
	ck_assert_uint_eq(chunk, 1);
	ck_assert_int_eq(store_sample_chunk_load(t, "v1", chunk, &p, &n, &d), 0);
	ck_assert_uint_eq(n, strlen(chunks[1]));
	ck_assert_str_eq((char *)p, chunks[1]);
	free(p);
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "c9", &chunk, &d),
			 RBA_E_NOTFOUND);
	ck_assert_str_eq(d.key, "c9");
	ck_assert_int_eq(store_sample_chunk_load(t, "v1", 3, &p, &n, &d),
			 RBA_E_NOTFOUND);
	ck_assert_int_eq(store_sample_case_chunk(t, "v2", "c1", &chunk, &d),
			 RBA_E_NOTFOUND);
	store_txn_abort(t);

	/* No sample for a version that does not exist; bad chunks. */
	t = begin(s, 1);
	ck_assert_int_eq(store_sample_begin(t, "nope", "", NULL, &w, &d),
			 RBA_E_NOTFOUND);
	ck_assert_int_eq(store_sample_begin(t, "v2", NULL, NULL, &w, &d), 0);
	ck_assert_int_eq(store_sample_add_chunk(w, "x", 0, NULL, 0, &d),
			 RBA_E_USAGE);
	{
		uint8_t *big = calloc(1, STORE_CHUNK_MAX + 1);
		ck_assert_int_eq(store_sample_add_chunk(w, big,
							STORE_CHUNK_MAX + 1,
							NULL, 0, &d),
				 RBA_E_LIMIT);
		free(big);
	}
	{
		const char *empty_id[] = { "" };
		ck_assert_int_eq(store_sample_add_chunk(w, "x", 1, empty_id, 1,
							&d), RBA_E_USAGE);
	}
	/* A duplicate case id fails the writer and the transaction. */
	{
		const char *ids[] = { "a", "b", "a" };
		rba_detail_clear(&d);
		ck_assert_int_eq(store_sample_add_chunk(w, "abc", 3, ids, 3, &d),
				 RBA_E_EXISTS);
		ck_assert_str_eq(d.key, "a");
		ck_assert(has_text(d.reason, "twice"));
		ck_assert_int_eq(store_sample_finish(w, NULL, &d), RBA_E_USAGE);
	}
	store_sample_writer_free(w);
	txnid = store_last_txnid(s);
	ck_assert_int_eq(store_txn_commit(t, &d), RBA_E_EXISTS);
	ck_assert_uint_eq(store_last_txnid(s), txnid);

	/* Replacing a sample removes the old one's cases. */
	{
		static const char *const again[] = { "z1,1,0.5,refer\n" };
		write_sample(s, "v1", again, 1, &dg);
	}
	t = begin(s, 0);
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "c1", &chunk, &d),
			 RBA_E_NOTFOUND);
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "z1", &chunk, &d), 0);
	ck_assert_uint_eq(chunk, 0);
	ck_assert_int_eq(store_sample_info(t, "v1", &info, &d), 0);
	ck_assert_uint_eq(info.cases, 1);
	ck_assert_uint_eq(info.generation, 1);
	store_sample_info_release(&info);
	/* info, one chunk, one case, the chunk list */
	ck_assert_uint_eq(store_debug_entries(t, "samples"), 4);
	store_txn_abort(t);
	/* A chunk list that disagrees with the record is tampering. */
	{
		uint8_t lk[STORE_DEBUG_KEY_MAX], *lv, *cp;
		size_t lklen, lvlen, cn;

		/* The replacement is generation 1. */
		store_debug_sample_list_key("v1", 1, lk, &lklen);
		t = begin(s, 1);
		ck_assert_int_eq(store_debug_get_raw(t, "samples", lk, lklen, &lv,
						     &lvlen, &d), 0);
		lv[lvlen - 1] ^= 0x40;
		ck_assert_int_eq(store_debug_put_raw(t, "samples", lk, lklen, lv,
						     lvlen, &d), 0);
		ck_assert_int_eq(store_sample_chunk_load(t, "v1", 0, &cp, &cn, &d),
				 RBA_E_TAMPERED);
		ck_assert(has_text(d.reason, "chunk digests do not match"));
		ck_assert_int_eq(store_debug_del_raw(t, "samples", lk, lklen, &d), 0);
		ck_assert_int_eq(store_sample_chunk_load(t, "v1", 0, &cp, &cn, &d),
				 RBA_E_TAMPERED);
		ck_assert(has_text(d.reason, "no chunk list"));
		store_txn_abort(t);
		free(lv);
	}
	/* And an aborted replacement keeps the old one, which stays the
	 * sample while the new one is written beside it. */
	t = begin(s, 1);
	ck_assert_int_eq(store_sample_begin(t, "v1", "", NULL, &w, &d), 0);
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "z1", &chunk, &d), 0);
	store_sample_writer_free(w);
	store_txn_abort(t);
	t = begin(s, 1);
	ck_assert_int_eq(store_sample_case_chunk(t, "v1", "z1", &chunk, &d), 0);
	ck_assert_int_eq(store_sample_delete(t, "v1", &d), 0);
	ck_assert_int_eq(store_sample_delete(t, "v1", &d), RBA_E_NOTFOUND);
	ck_assert_int_eq(store_sample_info(t, "v1", &info, &d), RBA_E_NOTFOUND);
	store_txn_abort(t);

	/* Tampering with a chunk frame, then with a recorded digest. */
	write_sample(s, "v2", chunks, 3, &dg);
	store_debug_sample_chunk_key("v2", 0, 1, key, &klen);
	flip_byte(s, "samples", key, klen, STORE_DEBUG_CHUNK_FRAME_OFF + 3);
	t = begin(s, 0);
	memset(&r, 0, sizeof(r));
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_read(t, "v2", sread_fn, &r, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "version 'v2' chunk 1"), "%s",
		      d.reason);
	ck_assert_uint_eq(r.next, 1); /* chunk 0 only */
	ck_assert_int_eq(store_sample_chunk_load(t, "v2", 1, &p, &n, &d),
			 RBA_E_TAMPERED);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(store_sample_chunk_load(t, "v2", 0, &p, &n, &d), 0);
	free(p);
	store_txn_abort(t);
	flip_byte(s, "samples", key, klen, STORE_DEBUG_CHUNK_FRAME_OFF + 3);
	flip_byte(s, "samples", key, klen, STORE_DEBUG_CHUNK_DIGEST_OFF);
	t = begin(s, 0);
	/* Chunk 0 is intact and matches the sealed list: it loads.  Chunk
	 * 1's recorded digest no longer matches the list. */
	ck_assert_int_eq(store_sample_chunk_load(t, "v2", 0, &p, &n, &d), 0);
	free(p);
	ck_assert_int_eq(store_sample_chunk_load(t, "v2", 1, &p, &n, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "chunk 1"), "%s", d.reason);
	ck_assert_int_eq(store_sample_read(t, "v2", sread_fn,
					   &(struct sread){ .n = 0 }, &d),
			 RBA_E_TAMPERED);
	store_txn_abort(t);
	flip_byte(s, "samples", key, klen, STORE_DEBUG_CHUNK_DIGEST_OFF);
	/* A deleted chunk, and a forged sample record. */
	t = begin(s, 1);
	ck_assert_int_eq(store_sample_read(t, "v2", sread_fn,
					   &(struct sread){ .n = 0 }, &d), 0);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", key, klen, &p, &n,
					     &d), 0);
	ck_assert_int_eq(store_debug_del_raw(t, "samples", key, klen, &d), 0);
	ck_assert_int_eq(store_sample_read(t, "v2", sread_fn,
					   &(struct sread){ .n = 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert(has_text(d.reason, "chunk 1 of 3 is missing"));
	/* the stream, whose helper decompresses chunk 0 while chunk 1's
	 * record is looked for, says the same */
	rba_detail_clear(&d);
	ck_assert_int_eq(store_sample_stream(t, "v2", sread_fn,
					     &(struct sread){ .n = 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert_msg(has_text(d.reason, "chunk 1 of 3 is missing"), "%s",
		      d.reason);
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, p, n, &d),
			 0);
	free(p);
	store_debug_sample_info_key("v2", key, &klen);
	ck_assert_int_eq(store_debug_get_raw(t, "samples", key, klen, &p, &n,
					     &d), 0);
	p[10] ^= 1;
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, p, n, &d),
			 0);
	ck_assert_int_eq(store_sample_info(t, "v2", &info, &d), RBA_E_TAMPERED);
	/* The version still loads, and says its sample is damaged. */
	ck_assert_int_eq(store_version_get(t, "v2", &v, &d), 0);
	ck_assert_int_eq(v.has_sample, 0);
	ck_assert_int_eq(v.sample_err, RBA_E_TAMPERED);
	store_version_release(&v);
	ck_assert_int_eq(store_debug_put_raw(t, "samples", key, klen, p, 5, &d),
			 0);
	ck_assert_int_eq(store_sample_info(t, "v2", &info, &d), RBA_E_CORRUPT);
	free(p);
	store_txn_abort(t);
	store_close(s);
}
END_TEST

/* ---- history --------------------------------------------------------- */

struct hlist {
	uint64_t ids[8];
	int n;
};

static int
hlist_fn(void *ctx, const struct store_history_entry *e)
{
	struct hlist *l = ctx;

	l->ids[l->n++] = e->id;
	return 0;
}

START_TEST(test_history)
{
	struct store *s = open_new();
	struct store_history_entry e;
	struct rba_digest c1, c2, c3, want, zero;
	struct store_txn *t;
	struct rba_detail d;
	struct hlist l;
	struct rba_buf b;
	uint64_t id, bad, count;
	uint8_t key[8], *raw;
	size_t rn;

	t = begin(s, 1);
	ck_assert_int_eq(store_history_verify(t, &bad, &count, &d), 0);
	ck_assert_uint_eq(count, 0);
	ck_assert_int_eq(store_history_append(t, "v1", 100, "{\"a\":1}", 7, &id,
					      &c1, &d), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(store_history_append(t, "v2", 200, "{\"b\":2}", 7, &id,
					      &c2, &d), 0);
	ck_assert_uint_eq(id, 2);
	commit(t);
	t = begin(s, 1);
	ck_assert_int_eq(store_history_append(t, "v1", 300, "{\"c\":3}", 7, &id,
					      &c3, &d), 0);
	ck_assert_uint_eq(id, 3);
	ck_assert_int_eq(store_history_append(t, "", 300, "x", 1, &id, &c3, &d),
			 RBA_E_USAGE);
	commit(t);

	/* The first digest, as documented in store.h. */
	memset(&zero, 0, sizeof(zero));
	rba_buf_init(&b);
	rba_buf_put(&b, zero.b, 32);
	rba_buf_put_u64(&b, 1);
	rba_buf_put_u64(&b, 100);
	rba_buf_put_str(&b, "v1");
	rba_buf_put_lstr(&b, "{\"a\":1}", 7);
	rba_digest_bytes(b.p, b.len, &want);
	rba_buf_release(&b);
	ck_assert(rba_digest_equal(&want, &c1));

	t = begin(s, 0);
	ck_assert_int_eq(store_history_get(t, 2, &e, &d), 0);
	ck_assert_uint_eq(e.id, 2);
	ck_assert_int_eq(e.time, 200);
	ck_assert_str_eq(e.version, "v2");
	ck_assert(rba_digest_equal(&e.prev, &c1));
	ck_assert(rba_digest_equal(&e.digest, &c2));
	ck_assert_uint_eq(e.len, 7);
	ck_assert_str_eq((char *)e.record, "{\"b\":2}");
	store_history_entry_release(&e);
	ck_assert_int_eq(store_history_get(t, 9, &e, &d), RBA_E_NOTFOUND);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(store_history_list(t, NULL, 1, hlist_fn, &l, &d), 0);
	ck_assert_int_eq(l.n, 3);
	ck_assert_uint_eq(l.ids[0], 3);
	ck_assert_uint_eq(l.ids[2], 1);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(store_history_list(t, "v1", 0, hlist_fn, &l, &d), 0);
	ck_assert_int_eq(l.n, 2);
	ck_assert_uint_eq(l.ids[0], 1);
	ck_assert_uint_eq(l.ids[1], 3);
	ck_assert_int_eq(store_history_verify(t, &bad, &count, &d), 0);
	ck_assert_uint_eq(count, 3);
	store_txn_abort(t);

	/* A record edited in place. */
	store_debug_history_key(2, key);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "history", key, 8, &raw, &rn, &d),
			 0);
	raw[rn - 2] ^= 1;
	ck_assert_int_eq(store_debug_put_raw(t, "history", key, 8, raw, rn, &d),
			 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_history_verify(t, &bad, &count, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(bad, 2);
	ck_assert(has_text(d.reason, "history record 2"));
	ck_assert_int_eq(store_history_list(t, NULL, 1, hlist_fn,
					    &(struct hlist){ .n = 0 }, &d),
			 RBA_E_TAMPERED);
	ck_assert_int_eq(store_history_get(t, 2, &e, &d), RBA_E_TAMPERED);
	store_txn_abort(t);

	/* Record 2 rewritten with a digest that matches its new content:
	 * record 3 no longer links to it. */
	t = begin(s, 1);
	{
		struct rba_digest forged;
		const char *rec = "{\"b\":3}";
		rba_buf_init(&b);
		rba_buf_put(&b, c1.b, 32);
		rba_buf_put_u64(&b, 2);
		rba_buf_put_u64(&b, 200);
		rba_buf_put_str(&b, "v2");
		rba_buf_put_lstr(&b, rec, 7);
		rba_digest_bytes(b.p, b.len, &forged);
		rba_buf_release(&b);
		/* tag, format, time, prev, digest, version, record */
		rba_buf_init(&b);
		rba_buf_put_u8(&b, 0x40);
		rba_buf_put_u8(&b, 1);
		rba_buf_put_u64(&b, 200);
		rba_buf_put(&b, c1.b, 32);
		rba_buf_put(&b, forged.b, 32);
		rba_buf_put_str(&b, "v2");
		rba_buf_put_lstr(&b, rec, 7);
		ck_assert_int_eq(store_debug_put_raw(t, "history", key, 8, b.p,
						     b.len, &d), 0);
		rba_buf_release(&b);
	}
	ck_assert_int_eq(store_history_get(t, 2, &e, &d), 0);
	ck_assert_str_eq((char *)e.record, "{\"b\":3}");
	store_history_entry_release(&e);
	ck_assert_int_eq(store_history_verify(t, &bad, &count, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(bad, 3);
	store_txn_abort(t);
	free(raw);

	/* The last record removed: the head notices. */
	t = begin(s, 1);
	store_debug_history_key(3, key);
	ck_assert_int_eq(store_debug_del_raw(t, "history", key, 8, &d), 0);
	ck_assert_int_eq(store_history_verify(t, &bad, &count, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(bad, 3);
	store_txn_abort(t);
	/* A middle record removed. */
	t = begin(s, 1);
	store_debug_history_key(2, key);
	ck_assert_int_eq(store_debug_del_raw(t, "history", key, 8, &d), 0);
	ck_assert_int_eq(store_history_verify(t, &bad, &count, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(bad, 2);
	store_txn_abort(t);
	/* A record of unknown type. */
	t = begin(s, 1);
	store_debug_history_key(1, key);
	ck_assert_int_eq(store_debug_put_raw(t, "history", key, 8, "\x41\x01",
					     2, &d), 0);
	ck_assert_int_eq(store_history_verify(t, &bad, &count, &d),
			 RBA_E_TAMPERED);
	ck_assert_uint_eq(bad, 1);
	ck_assert_int_eq(store_history_get(t, 1, &e, &d), RBA_E_CORRUPT);
	store_txn_abort(t);
	store_close(s);
}
END_TEST

/* ---- runs ------------------------------------------------------------ */

struct rlist {
	char ids[4][16];
	int n;
};

static int
rlist_fn(void *ctx, const char *id, const uint8_t *p, size_t n)
{
	struct rlist *l = ctx;

	(void)p;
	(void)n;
	snprintf(l->ids[l->n++], sizeof(l->ids[0]), "%s", id);
	return 0;
}

START_TEST(test_runs)
{
	struct store *s = open_new();
	struct store_txn *t;
	struct rba_detail d;
	struct rlist l;
	uint8_t *p;
	size_t n;

	t = begin(s, 1);
	ck_assert_int_eq(store_run_put(t, "run-b", "{\"x\":1}", 7, &d), 0);
	ck_assert_int_eq(store_run_put(t, "run-a", "{}", 2, &d), 0);
	ck_assert_int_eq(store_run_put(t, "run-a", "{\"y\":2}", 7, &d), 0);
	ck_assert_int_eq(store_run_put(t, "", "{}", 2, &d), RBA_E_USAGE);
	commit(t);
	t = begin(s, 0);
	ck_assert_int_eq(store_run_get(t, "run-a", &p, &n, &d), 0);
	ck_assert_uint_eq(n, 7);
	ck_assert_str_eq((char *)p, "{\"y\":2}");
	free(p);
	ck_assert_int_eq(store_run_get(t, "run-z", &p, &n, &d), RBA_E_NOTFOUND);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(store_run_list(t, rlist_fn, &l, &d), 0);
	ck_assert_int_eq(l.n, 2);
	ck_assert_str_eq(l.ids[0], "run-a");
	ck_assert_str_eq(l.ids[1], "run-b");
	store_txn_abort(t);
	t = begin(s, 1);
	ck_assert_int_eq(store_debug_get_raw(t, "runs", "run-b", 5, &p, &n, &d),
			 0);
	p[n - 40] ^= 1;
	ck_assert_int_eq(store_debug_put_raw(t, "runs", "run-b", 5, p, n, &d), 0);
	free(p);
	ck_assert_int_eq(store_run_get(t, "run-b", &p, &n, &d), RBA_E_TAMPERED);
	ck_assert_int_eq(store_run_list(t, rlist_fn, &l, &d), RBA_E_TAMPERED);
	store_txn_abort(t);
	store_close(s);
}
END_TEST

/* ---- map growth ------------------------------------------------------ */

START_TEST(test_map_growth)
{
	struct store *s;
	struct store_txn *t;
	struct rba_detail d;
	struct rba_digest dg[4];
	size_t n = 3 * MIB;
	uint8_t *src = malloc(n);
	uint64_t size0, size1;
	int rc;

	setenv(STORE_MAPSIZE_ENV, "1m", 1);
	s = open_new();
	size0 = store_debug_map_size(s);
	ck_assert_uint_eq(size0, MIB);
	fill_random(src, n, 1234);
	/* Without a hint the map is too small: a clear, retryable error. */
	t = begin(s, 1);
	rba_detail_clear(&d);
	rc = store_blob_put(t, STORE_BLOB_OTHER, src, n, NULL, NULL, 0, &dg[0],
			    NULL, &d);
	ck_assert_int_eq(rc, RBA_E_LIMIT);
	ck_assert_msg(has_text(d.reason, "map is full"), "%s", d.reason);
	ck_assert_int_eq(store_txn_commit(t, &d), RBA_E_LIMIT);
	/* With the hint it fits. */
	ck_assert_int_eq(store_txn_begin(s, 1, n, &t, &d), 0);
	ck_assert_uint_ge(store_debug_map_size(s), 2 * n);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_OTHER, src, n, NULL, NULL,
					0, &dg[0], NULL, &d), 0);
	commit(t);
	size1 = store_debug_map_size(s);
	/* More blobs, each in a transaction with its hint: the map keeps
	 * growing. */
	for (int i = 1; i < 4; i++) {
		fill_random(src, n, 1234 + (uint64_t)i);
		ck_assert_int_eq(store_txn_begin(s, 1, n, &t, &d), 0);
		ck_assert_int_eq(store_blob_put(t, STORE_BLOB_OTHER, src, n,
						NULL, NULL, 0, &dg[i], NULL,
						&d), 0);
		commit(t);
	}
	ck_assert_uint_gt(store_debug_map_size(s), size1);
	store_close(s);
	/* Reopened: everything reads back. */
	ck_assert_int_eq(store_open(scratch_store, 1, &s, &d), 0);
	t = begin(s, 0);
	for (int i = 0; i < 4; i++) {
		struct collect c = { NULL, 0, 0 };
		ck_assert_int_eq(store_blob_read(t, &dg[i], collect_fn, &c, &d),
				 0);
		ck_assert_uint_eq(c.n, n);
		free(c.p);
	}
	store_txn_abort(t);
	store_close(s);
	free(src);
}
END_TEST

/* ---- two processes --------------------------------------------------- */

/*
 * Child: opens the store, waits for its turn, writes a blob of n bytes
 * (hint n) and a history record, commits.  Exit status 0 on success.
 */
static void
writer_child(int ready_fd, int wait_fd, int signal_fd, uint64_t seed,
	     size_t n, unsigned hold_ms)
{
	struct store *s;
	struct store_txn *t;
	struct rba_detail d;
	uint8_t *src = malloc(n);
	char c = 0;
	int rc;

	rc = store_open(scratch_store, 0, &s, &d);
	if (rc != 0)
		_exit(10);
	if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1)
		_exit(16);
	if (wait_fd >= 0 && read(wait_fd, &c, 1) != 1)
		_exit(11);
	rc = store_txn_begin(s, 1, n, &t, &d);
	if (rc != 0) {
		fprintf(stderr, "child begin: %s\n", d.reason);
		_exit(12);
	}
	if (signal_fd >= 0 && write(signal_fd, "x", 1) != 1)
		_exit(13);
	fill_random(src, n, seed);
	rc = store_blob_put(t, STORE_BLOB_OTHER, src, n, NULL, NULL, 0,
			    &(struct rba_digest){ { 0 } }, NULL, &d);
	if (rc == 0)
		rc = store_history_append(t, "v", (int64_t)seed, "{}", 2, NULL,
					  NULL, &d);
	if (rc != 0) {
		fprintf(stderr, "child put: %s\n", d.reason);
		_exit(14);
	}
	usleep(hold_ms * 1000);
	if (store_txn_commit(t, &d) != 0) {
		fprintf(stderr, "child commit: %s\n", d.reason);
		_exit(15);
	}
	store_close(s);
	free(src);
	_exit(0);
}

START_TEST(test_two_writers)
{
	struct store *s;
	struct store_txn *t;
	struct rba_detail d;
	int go_a[2], a_began[2], b_ready[2], status;
	char c;
	pid_t a, b;
	uint8_t *src;
	struct rba_digest da, db;
	size_t na = 3 * MIB, nb = 200000;
	uint64_t count, bad;

	setenv(STORE_MAPSIZE_ENV, "2m", 1);
	s = open_new();
	store_close(s);
	ck_assert_int_eq(pipe(go_a), 0);
	ck_assert_int_eq(pipe(a_began), 0);
	ck_assert_int_eq(pipe(b_ready), 0);
	/* A grows the map and holds the write lock for a while; B opened
	 * the store before that (with the small map), begins its write while
	 * A holds the lock, waits, then finds the map grown under it. */
	a = fork();
	ck_assert_int_ge(a, 0);
	if (a == 0)
		writer_child(-1, go_a[0], a_began[1], 1, na, 300);
	b = fork();
	ck_assert_int_ge(b, 0);
	if (b == 0)
		writer_child(b_ready[1], a_began[0], -1, 2, nb, 0);
	ck_assert_int_eq(read(b_ready[0], &c, 1), 1);
	ck_assert_int_eq(write(go_a[1], "g", 1), 1);
	ck_assert_int_eq(waitpid(a, &status, 0), a);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "writer a: status %d", status);
	ck_assert_int_eq(waitpid(b, &status, 0), b);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "writer b: status %d", status);

	ck_assert_int_eq(store_open(scratch_store, 1, &s, &d), 0);
	t = begin(s, 0);
	src = malloc(na);
	fill_random(src, na, 1);
	rba_digest_bytes(src, na, &da);
	fill_random(src, nb, 2);
	rba_digest_bytes(src, nb, &db);
	free(src);
	ck_assert_int_eq(store_blob_read(t, &da, discard_fn,
					 &(struct collect){ 0 }, &d), 0);
	ck_assert_int_eq(store_blob_read(t, &db, discard_fn,
					 &(struct collect){ 0 }, &d), 0);
	ck_assert_int_eq(store_history_verify(t, &bad, &count, &d), 0);
	ck_assert_uint_eq(count, 2);
	store_txn_abort(t);
	store_close(s);
}
END_TEST

struct waits {
	int calls;
	struct store_wait w;
};

static void
wait_count(void *ctx, const struct store_wait *w)
{
	struct waits *c = ctx;

	c->calls++;
	c->w = *w;
}

/*
 * The write lock: while another open file holds STORE_WRITE_LOCK, a
 * write begin waits its limit, calls the hook once naming the holder
 * the file names, and fails with RBA_E_BUSY; readers never wait; once
 * the lock is free a writer takes it and writes its pid for the next.
 */
START_TEST(test_write_lock_wait)
{
	struct store *s = open_new();
	struct store_txn *t = NULL;
	struct waits c = { 0 };
	struct rba_detail d;
	char want[400], pid[24];
	double t0;
	int fd;

	snprintf(want, sizeof(want), "%s/%s", scratch_store, STORE_WRITE_LOCK);
	fd = open(want, O_RDWR | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	snprintf(pid, sizeof(pid), "%ld\n", (long)getppid());
	ck_assert_int_eq(pwrite(fd, pid, strlen(pid), 0), (ssize_t)strlen(pid));
	store_wait_set(1.0, wait_count, &c);
	t0 = rba_time_mono();
	rba_detail_clear(&d);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), RBA_E_BUSY);
	ck_assert(rba_time_mono() - t0 >= 1.0);
	snprintf(want, sizeof(want), "gave up after 1 s waiting for the store's "
		 "write lock (held by pid %ld)", (long)getppid());
	ck_assert_str_eq(d.reason, want);
	ck_assert_int_eq(c.calls, 1);
	ck_assert_int_eq(c.w.holder, (long)getppid());
	ck_assert_str_eq(c.w.path, scratch_store);
	ck_assert(c.w.waited * 1000 >= STORE_WAIT_NOTICE_MS && c.w.limit == 1.0);
	/* no wait at all, and no word */
	store_wait_set(0, wait_count, &c);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), RBA_E_BUSY);
	ck_assert_int_eq(c.calls, 1);
	/* readers never wait */
	t = begin(s, 0);
	store_txn_abort(t);
	/* free: taken, with this process's pid in the file */
	ck_assert_int_eq(flock(fd, LOCK_UN), 0);
	t = begin(s, 1);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
	ck_assert_int_eq(errno, EWOULDBLOCK);
	snprintf(want, sizeof(want), "%ld\n", (long)getpid());
	memset(pid, 0, sizeof(pid));
	ck_assert_int_gt(pread(fd, pid, sizeof(pid) - 1, 0), 0);
	ck_assert_str_eq(pid, want);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0); /* released */
	close(fd);
	store_wait_set(STORE_WAIT_DEFAULT, NULL, NULL);
	store_close(s);
}
END_TEST

/*
 * The index sum: ids of 1 to 40 bytes added a chunk at a time
 * (store_index_sum_add_ids) sum as added one by one; and one byte of
 * an id, its length or its chunk changed changes the sum.
 */
START_TEST(test_index_sum_ids)
{
	char text[200][48];
	const char *ids[200];
	struct store_index_sum one, many, other;

	memset(&one, 0, sizeof(one));
	memset(&many, 0, sizeof(many));
	for (uint32_t i = 0; i < 200; i++) {
		size_t len = 1 + i % 40;
		for (size_t j = 0; j < len; j++)
			text[i][j] = (char)('a' + (i * 7 + j * 13) % 26);
		text[i][len] = 0;
		ids[i] = text[i];
		store_index_sum_add(&one, ids[i], len, i / 64);
	}
	for (uint32_t c = 0; c < 4; c++) {
		uint32_t n = c < 3 ? 64 : 200 - 3 * 64;
		store_index_sum_add_ids(&many, ids + c * 64, n, c);
	}
	ck_assert(one.n == 200 && many.n == 200);
	ck_assert(one.a == many.a && one.b == many.b);
	/* the same ids packed one after another, as a decoded chunk's:
	 * store_index_sum_add_packed's lengths from the pointers */
	{
		char block[200 * 41];
		const char *packed[200];
		struct store_index_sum p;
		size_t at = 0;
		memset(&p, 0, sizeof(p));
		for (uint32_t i = 0; i < 200; i++) {
			size_t len = strlen(text[i]);
			memcpy(block + at, text[i], len + 1);
			packed[i] = block + at;
			at += len + 1;
		}
		for (uint32_t c = 0; c < 4; c++)
			store_index_sum_add_packed(&p, packed + c * 64,
						   c < 3 ? 64 : 200 - 3 * 64, c);
		ck_assert(p.n == 200 && p.a == one.a && p.b == one.b);
	}
	for (uint32_t i = 0; i < 200; i += 17) {
		size_t len = strlen(text[i]);
		/* a byte, the length, the chunk */
		for (int w = 0; w < 3; w++) {
			if (w == 1 && len == 1)
				continue; /* no shorter id */
			memset(&other, 0, sizeof(other));
			if (w == 0)
				text[i][len / 2] ^= 1;
			else if (w == 1)
				text[i][len - 1] = 0;
			for (uint32_t c = 0; c < 4; c++)
				store_index_sum_add_ids(&other, ids + c * 64,
							c < 3 ? 64 : 200 - 3 * 64,
							c + (w == 2 && c == i / 64));
			ck_assert_msg(other.a != one.a && other.b != one.b,
				      "id %u change %d", i, w);
			if (w == 0)
				text[i][len / 2] ^= 1;
			else if (w == 1)
				text[i][len - 1] = (char)('a' + (i * 7 + (len - 1) * 13) % 26);
		}
	}
}
END_TEST

/*
 * A sample of nchunks chunks of per cases each, case "k<i>" in chunk
 * i / per, every chunk's text its lines "k<i>,<i>".
 */
static void
write_big_sample(struct store *s, const char *version, uint32_t nchunks,
		 uint32_t per)
{
	struct store_sample_writer *w;
	struct store_txn *t = begin(s, 1);
	struct rba_detail d;
	struct rba_digest pol, dg;
	char *text = malloc((size_t)per * 32), (*idt)[16] = malloc((size_t)per * 16);
	const char **ids = malloc(per * sizeof(*ids));

	ck_assert(text != NULL && idt != NULL && ids != NULL);
	rba_digest_bytes("pol", 3, &pol);
	ck_assert_int_eq(store_sample_begin(t, version, "pending", &pol, &w, &d), 0);
	for (uint32_t c = 0; c < nchunks; c++) {
		size_t n = 0;
		for (uint32_t j = 0; j < per; j++) {
			uint32_t i = c * per + j;
			snprintf(idt[j], sizeof(idt[j]), "k%u", i);
			ids[j] = idt[j];
			n += (size_t)sprintf(text + n, "k%u,%u\n", i, i);
		}
		ck_assert_msg(store_sample_add_chunk(w, text, n, ids, per, &d) == 0,
			      "%s", d.reason);
	}
	ck_assert_int_eq(store_sample_set_columns(w, "id,x", &d), 0);
	ck_assert_int_eq(store_sample_finish(w, &dg, &d), 0);
	store_sample_writer_free(w);
	commit(t);
	free(text);
	free(idt);
	free(ids);
}

/* A stream callback that counts chunks, sleeping us microseconds in
 * each (a slow scorer: the helper then walks in its waits). */
struct scount {
	uint32_t next;
	unsigned us;
	uint32_t refuse; /* a chunk number to refuse, or UINT32_MAX */
};

static int
scount_fn(void *ctx, uint32_t chunk_no, const uint8_t *p, size_t n)
{
	struct scount *r = ctx;

	(void)p;
	(void)n;
	ck_assert_uint_eq(chunk_no, r->next);
	r->next++;
	if (r->us > 0)
		usleep(r->us);
	return chunk_no == r->refuse ? RBA_E_SYNTAX : 0;
}

/*
 * store_sample_stream_indexed sums the case index as
 * store_sample_index_sum does, whichever thread walks it: in the waits
 * (a slow callback leaves them to the helper, a quick one to the
 * caller's wait for a chunk), on a thread of its own, or after the
 * stream when a write landed between the two reads or the sample is one
 * chunk.  The stream's error comes first; a damaged entry is the walk's.
 */
START_TEST(test_sample_stream_indexed)
{
	struct store *s = open_new();
	struct rba_digest art, snap;
	struct store_index_sum want, got;
	struct store_txn *t;
	struct rba_detail d;
	struct scount r;
	uint8_t key[STORE_DEBUG_KEY_MAX], *v;
	size_t klen, vn;

	add_version(s, "v", &art, &snap);
	write_big_sample(s, "v", 6, 900); /* the walk: 11 steps of 512 */
	add_version(s, "one", &art, &snap);
	write_big_sample(s, "one", 1, 700);
	t = begin(s, 0);
	ck_assert_int_eq(store_sample_index_sum(t, "v", &want, &d), 0);
	ck_assert(want.n == 5400);
	for (int own = 0; own < 2; own++)
		for (unsigned us = 0; us <= 3000; us += 3000) {
			r = (struct scount){ .us = us, .refuse = UINT32_MAX };
			memset(&got, 0xa5, sizeof(got));
			ck_assert_msg(store_sample_stream_indexed(t, "v", scount_fn,
								  &r, own, &got,
								  &d) == 0,
				      "%s", d.reason);
			ck_assert_uint_eq(r.next, 6);
			ck_assert_msg(got.n == want.n && got.a == want.a &&
					      got.b == want.b,
				      "own %d us %u", own, us);
		}
	/* the callback's error: the walk is not finished, the sum zero */
	r = (struct scount){ .refuse = 2 };
	ck_assert_int_eq(store_sample_stream_indexed(t, "v", scount_fn, &r, 0,
						     &got, &d), RBA_E_SYNTAX);
	ck_assert(got.n == 0 && got.a == 0 && got.b == 0);
	/* one chunk: no helper, the walk after the chunk */
	ck_assert_int_eq(store_sample_index_sum(t, "one", &want, &d), 0);
	r = (struct scount){ .refuse = UINT32_MAX };
	ck_assert_int_eq(store_sample_stream_indexed(t, "one", scount_fn, &r, 0,
						     &got, &d), 0);
	ck_assert(got.n == 700 && got.a == want.a && got.b == want.b);
	/* a write lands after t began: the walk cannot have a read of the
	 * same snapshot, and follows the stream on t's */
	{
		struct store_txn *w = begin(s, 1);
		ck_assert_int_eq(store_history_append(w, "v", 1, "{}", 2, NULL,
						      NULL, &d), 0);
		commit(w);
	}
	ck_assert_int_eq(store_sample_index_sum(t, "v", &want, &d), 0);
	for (int own = 0; own < 2; own++) {
		r = (struct scount){ .refuse = UINT32_MAX };
		ck_assert_int_eq(store_sample_stream_indexed(t, "v", scount_fn,
							     &r, own, &got, &d),
				 0);
		ck_assert(got.n == want.n && got.a == want.a && got.b == want.b);
	}
	store_txn_abort(t);

	/* Case k4000's chunk number changed: every way sums what the walk
	 * of store_sample_index_sum sums (and the audit compares it with
	 * the chunks'); made out of range, every way fails as it fails. */
	{
		struct store_index_sum before = want;
		klen = store_debug_sample_case_key("v", 0, "k4000", key);
		for (int bad = 0; bad < 2; bad++) {
			t = begin(s, 1);
			ck_assert_int_eq(store_debug_get_raw(t, "samples", key,
							     klen, &v, &vn, &d),
					 0);
			ck_assert_uint_eq(vn, 6);
			v[bad ? 5 : 2] ^= 1; /* chunk 4 -> 5, or 4 + 2^24 */
			ck_assert_int_eq(store_debug_put_raw(t, "samples", key,
							     klen, v, vn, &d),
					 0);
			free(v);
			commit(t);
			t = begin(s, 0);
			ck_assert_int_eq(store_sample_index_sum(t, "v", &want, &d),
					 bad ? RBA_E_TAMPERED : 0);
			ck_assert(bad || (want.n == before.n && want.a != before.a));
			for (int own = 0; own < 2; own++)
				for (unsigned us = 0; us <= 3000; us += 3000) {
					r = (struct scount){ .us = us,
							     .refuse = UINT32_MAX };
					rba_detail_clear(&d);
					ck_assert_int_eq(
						store_sample_stream_indexed(
							t, "v", scount_fn, &r, own,
							&got, &d),
						bad ? RBA_E_TAMPERED : 0);
					ck_assert_uint_eq(r.next, 6);
					if (bad)
						ck_assert_msg(has_text(d.reason,
								       "malformed"),
							      "%s", d.reason);
					else
						ck_assert(got.n == want.n &&
							  got.a == want.a &&
							  got.b == want.b);
				}
			store_txn_abort(t);
		}
	}
	store_close(s);
}
END_TEST

Suite *
suite_store(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_init_open);
	tcase_add_test(tc, test_meta_schema);
	tcase_add_test(tc, test_mapsize_env);
	tcase_add_test(tc, test_blob_sizes);
	tcase_add_test(tc, test_blob_dedup);
	tcase_add_test(tc, test_blob_resolve_list);
	tcase_add_test(tc, test_chunk_seal);
	tcase_add_test(tc, test_store_check);
	tcase_add_test(tc, test_sample_stream_indexed);
	tcase_add_test(tc, test_blob_tamper_frame);
	tcase_add_test(tc, test_blob_tamper_digest);
	tcase_add_test(tc, test_blob_tamper_structure);
	tcase_add_test(tc, test_blob_forged_frame);
	tcase_add_test(tc, test_txn_abort);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_version_meta);
	tcase_add_test(tc, test_samples);
	tcase_add_test(tc, test_sample_stream);
	tcase_add_test(tc, test_history);
	tcase_add_test(tc, test_sample_steps);
	tcase_add_test(tc, test_runs);
	tcase_add_test(tc, test_map_growth);
	tcase_add_test(tc, test_two_writers);
	tcase_add_test(tc, test_write_lock_wait);
	tcase_add_test(tc, test_index_sum_ids);
	suite_add_tcase(s, tc);
	return s;
}
