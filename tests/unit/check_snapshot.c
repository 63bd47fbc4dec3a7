/* check_snapshot.c - snapshots: add, resolve, list, export, load. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "data/snapshot.h"
#include "store/store.h"
#include "store/store_debug.h"
#include "tests/unit/suites.h"

static char dir[64];
static char path[128];
static struct store *st;

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/rba-snap-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/st", dir);
	ck_assert_int_eq(store_init(path, NULL), 0);
	ck_assert_int_eq(store_open(path, 0, &st, NULL), 0);
}

static void
teardown(void)
{
	char cmd[200];

	store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Adds file in its own transaction; returns the status. */
static int
add(const char *file, const char *name, struct rba_digest *dg, int *existed,
    struct rba_detail *d)
{
	struct store_txn *txn;
	int err;

	rba_detail_clear(d);
	ck_assert_int_eq(store_txn_begin(st, 1, 0, &txn, NULL), 0);
	err = snapshot_add(txn, file, name, dg, existed, d);
	if (err) {
		store_txn_abort(txn);
		return err;
	}
	return store_txn_commit(txn, d);
}

static int
count_one(void *ctx, const struct snapshot_info *info)
{
	(void)info;
	(*(int *)ctx)++;
	return 0;
}

START_TEST(test_add_show_export)
{
	struct rba_digest dg, want;
	struct rba_detail d;
	struct snapshot_info info;
	struct store_txn *txn;
	uint8_t *orig, *copy, *loaded;
	size_t n, cn, ln;
	char out[160];
	int existed = -1, count = 0;

	ck_assert_int_eq(add(FIXTURES "/german-credit.csv", NULL, &dg, &existed, &d), 0);
	ck_assert_int_eq(existed, 0);
	ck_assert_int_eq(rba_file_read(FIXTURES "/german-credit.csv", 1u << 20, &orig, &n, NULL), 0);
	rba_digest_bytes(orig, n, &want);
	ck_assert(rba_digest_equal(&dg, &want));
	/* the same bytes again: stored once, new name kept */
	ck_assert_int_eq(add(FIXTURES "/german-credit.csv", "gc", &dg, &existed, &d), 0);
	ck_assert_int_eq(existed, 1);

	ck_assert_int_eq(store_txn_begin(st, 0, 0, &txn, NULL), 0);
	ck_assert_int_eq(snapshot_resolve(txn, "9a5fb325", &info, &d), 0);
	ck_assert_str_eq(info.blob.name, "gc");
	ck_assert_uint_eq(info.rows, 1000);
	ck_assert_uint_eq(info.ncols, 22);
	ck_assert_str_eq(info.names[1], "checking_status");
	ck_assert_int_eq(info.types[1], CSV_TEXT);
	ck_assert_int_eq(info.types[2], CSV_NUMERIC);
	ck_assert_uint_eq(info.blob.size, n);
	snapshot_info_release(&info);
	ck_assert_int_eq(snapshot_list(txn, count_one, &count, &d), 0);
	ck_assert_int_eq(count, 1);
	snprintf(out, sizeof(out), "%s/copy.csv", dir);
	ck_assert_int_eq(snapshot_export(txn, &dg, out, NULL, &d), 0);
	ck_assert_int_eq(rba_file_read(out, 1u << 20, &copy, &cn, NULL), 0);
	ck_assert_uint_eq(cn, n);
	ck_assert(memcmp(copy, orig, n) == 0);
	ck_assert_int_eq(snapshot_load(txn, &dg, &loaded, &ln, &d), 0);
	ck_assert_uint_eq(ln, n);
	ck_assert(memcmp(loaded, orig, n) == 0);
	store_txn_abort(txn);
	free(orig);
	free(copy);
	free(loaded);
}
END_TEST

START_TEST(test_invalid_file_stores_nothing)
{
	char bad[160];
	FILE *f;
	struct rba_digest dg;
	struct rba_detail d;
	uint64_t before = store_last_txnid(st);
	int count = 0;
	struct store_txn *txn;

	snprintf(bad, sizeof(bad), "%s/bad.csv", dir);
	f = fopen(bad, "w");
	fputs("a,b\n1,2\n3,4,5\n", f);
	fclose(f);
	ck_assert_int_eq(add(bad, NULL, &dg, NULL, &d), RBA_E_SCHEMA);
	ck_assert_str_eq(d.file, bad);
	ck_assert_uint_eq(d.line, 3);
	ck_assert_uint_eq(d.col, 5);
	ck_assert_uint_eq(store_last_txnid(st), before);
	ck_assert_int_eq(add("/nonexistent/x.csv", NULL, &dg, NULL, &d), ENOENT);
	ck_assert_int_eq(store_txn_begin(st, 0, 0, &txn, NULL), 0);
	ck_assert_int_eq(snapshot_list(txn, count_one, &count, &d), 0);
	store_txn_abort(txn);
	ck_assert_int_eq(count, 0);
}
END_TEST

START_TEST(test_not_a_snapshot_and_bad_meta)
{
	struct store_txn *txn;
	struct rba_digest art, odd;
	struct rba_detail d;
	struct snapshot_info info;
	const uint8_t meta[] = { 'S', 1, 5, 0 }; /* truncated */

	ck_assert_int_eq(store_txn_begin(st, 1, 0, &txn, NULL), 0);
	ck_assert_int_eq(store_blob_put(txn, STORE_BLOB_ARTIFACT, "model", 5, "m",
					NULL, 0, &art, NULL, NULL), 0);
	ck_assert_int_eq(store_blob_put(txn, STORE_BLOB_SNAPSHOT, "a\n1\n", 4, "x",
					meta, sizeof(meta), &odd, NULL, NULL), 0);
	ck_assert_int_eq(store_txn_commit(txn, NULL), 0);
	ck_assert_int_eq(store_txn_begin(st, 0, 0, &txn, NULL), 0);
	ck_assert_int_eq(snapshot_info_get(txn, &art, &info, &d), RBA_E_NOTFOUND);
	ck_assert_int_eq(snapshot_info_get(txn, &odd, &info, &d), RBA_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(d.reason, "malformed snapshot record"));
	store_txn_abort(txn);
}
END_TEST

START_TEST(test_tampered_export_writes_nothing)
{
	struct rba_digest dg;
	struct rba_detail d;
	struct store_txn *txn;
	uint8_t key[STORE_DEBUG_KEY_MAX], *val;
	size_t klen, vlen;
	char out[160];
	struct stat sb;

	ck_assert_int_eq(add(FIXTURES "/german-credit-numeric.csv", NULL, &dg, NULL, &d), 0);
	store_debug_blob_chunk_key(&dg, 0, key, &klen);
	ck_assert_int_eq(store_txn_begin(st, 1, 0, &txn, NULL), 0);
	ck_assert_int_eq(store_debug_get_raw(txn, "blobs", key, klen, &val, &vlen, NULL), 0);
	val[vlen / 2] ^= 0x01;
	ck_assert_int_eq(store_debug_put_raw(txn, "blobs", key, klen, val, vlen, NULL), 0);
	ck_assert_int_eq(store_txn_commit(txn, NULL), 0);
	free(val);
	snprintf(out, sizeof(out), "%s/out.csv", dir);
	ck_assert_int_eq(store_txn_begin(st, 0, 0, &txn, NULL), 0);
	ck_assert_int_eq(snapshot_export(txn, &dg, out, NULL, &d), RBA_E_TAMPERED);
	ck_assert_int_eq(stat(out, &sb), -1);
	store_txn_abort(txn);
}
END_TEST

Suite *
suite_snapshot(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_add_show_export);
	tcase_add_test(tc, test_invalid_file_stores_nothing);
	tcase_add_test(tc, test_not_a_snapshot_and_bad_meta);
	tcase_add_test(tc, test_tampered_export_writes_nothing);
	suite_add_tcase(s, tc);
	return s;
}
