/* check_common.c - errors, buffers, cursors, digests, atomic files. */
#include <check.h>
#include <sodium.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "common/rba.h"
#include "tests/unit/suites.h"

START_TEST(test_strerror_all)
{
	for (int e = RBA_E_ENCODING; e <= 0; e++) {
		ck_assert_ptr_nonnull(rba_strerror(e));
		ck_assert_str_ne(rba_strerror(e), "unknown error");
	}
	ck_assert_str_eq(rba_strerror(-9999), "unknown error");
	ck_assert_str_eq(rba_strerror(ENOENT), strerror(ENOENT));
}
END_TEST

START_TEST(test_fail_detail)
{
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_int_eq(rba_fail(&d, RBA_E_SYNTAX, "f.csv", 3, 7, "bad %s", "x"),
			 RBA_E_SYNTAX);
	ck_assert_str_eq(d.file, "f.csv");
	ck_assert_uint_eq(d.line, 3);
	ck_assert_uint_eq(d.col, 7);
	ck_assert_str_eq(d.reason, "bad x");
	ck_assert_int_eq(rba_fail(NULL, RBA_E_IO, "f", 1, 1, "x"), RBA_E_IO);
}
END_TEST

START_TEST(test_buf_le_roundtrip)
{
	struct rba_buf b;
	struct rba_cursor c;
	size_t n;
	const char *s;

	rba_buf_init(&b);
	rba_buf_put_u8(&b, 0xab);
	rba_buf_put_u16(&b, 0x1234);
	rba_buf_put_u32(&b, 0xdeadbeef);
	rba_buf_put_u64(&b, 0x0102030405060708ull);
	rba_buf_put_f32(&b, -1.5f);
	rba_buf_put_f64(&b, 0.1);
	rba_buf_put_str(&b, "hello");
	ck_assert_int_eq(rba_buf_status(&b), 0);
	/* little-endian on every host */
	ck_assert_uint_eq(b.p[1], 0x34);
	ck_assert_uint_eq(b.p[3], 0xef);
	ck_assert_uint_eq(b.p[7], 0x08);
	rba_cursor_init(&c, b.p, b.len);
	ck_assert_uint_eq(rba_cursor_u8(&c), 0xab);
	ck_assert_uint_eq(rba_cursor_u16(&c), 0x1234);
	ck_assert_uint_eq(rba_cursor_u32(&c), 0xdeadbeef);
	ck_assert(rba_cursor_u64(&c) == 0x0102030405060708ull);
	ck_assert(rba_cursor_f32(&c) == -1.5f);
	ck_assert(rba_cursor_f64(&c) == 0.1);
	s = rba_cursor_lstr(&c, 100, &n);
	ck_assert_uint_eq(n, 5);
	ck_assert(memcmp(s, "hello", 5) == 0);
	ck_assert(rba_cursor_ok(&c));
	ck_assert_uint_eq(c.left, 0);
	rba_cursor_u8(&c);
	ck_assert(!rba_cursor_ok(&c));
	rba_buf_release(&b);
}
END_TEST

START_TEST(test_cursor_bounds)
{
	uint8_t rec[8] = { 200, 0, 0, 0, 'a', 'b', 'c', 'd' };
	struct rba_cursor c;
	size_t n;

	/* a length prefix larger than what remains */
	rba_cursor_init(&c, rec, sizeof(rec));
	ck_assert_ptr_null(rba_cursor_lstr(&c, 1000, &n));
	ck_assert(!rba_cursor_ok(&c));
	/* a length above the caller's cap */
	rec[0] = 4;
	rba_cursor_init(&c, rec, sizeof(rec));
	ck_assert_ptr_null(rba_cursor_lstr(&c, 3, &n));
	ck_assert(!rba_cursor_ok(&c));
	rba_cursor_init(&c, rec, sizeof(rec));
	ck_assert_ptr_nonnull(rba_cursor_lstr(&c, 4, &n));
	ck_assert(rba_cursor_ok(&c));
	/* truncated integers */
	rba_cursor_init(&c, rec, 3);
	ck_assert_uint_eq(rba_cursor_u32(&c), 0);
	ck_assert(!rba_cursor_ok(&c));
}
END_TEST

START_TEST(test_digest_known)
{
	struct rba_digest dg, back;
	struct rba_hasher h;
	char text[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_bytes("abc", 3, &dg);
	rba_digest_format(&dg, text);
	ck_assert_str_eq(text, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	rba_hasher_init(&h);
	rba_hasher_update(&h, "a", 1);
	rba_hasher_update(&h, "bc", 2);
	rba_hasher_final(&h, &back);
	ck_assert(rba_digest_equal(&dg, &back));
	ck_assert_int_eq(rba_digest_parse(text, &back), 0);
	ck_assert(rba_digest_equal(&dg, &back));
	back.b[31] ^= 1;
	ck_assert(!rba_digest_equal(&dg, &back));
}
END_TEST

START_TEST(test_digest_parse_errors)
{
	struct rba_digest dg;
	char pre[65];
	size_t n;

	ck_assert_int_eq(rba_digest_parse("sha256:abc", &dg), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_digest_parse("sha1:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", &dg), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_digest_parse("sha256:BA7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", &dg), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_digest_parse("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad ", &dg), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_digest_parse_prefix("sha256:ba78", pre, &n), 0);
	ck_assert_str_eq(pre, "ba78");
	ck_assert_int_eq(rba_digest_parse_prefix("ba7", pre, &n), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_digest_parse_prefix("ba7z", pre, &n), RBA_E_SYNTAX);
}
END_TEST

START_TEST(test_file_read_limit)
{
	char path[] = "/tmp/rba-common-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *p;
	size_t n;
	struct rba_detail d;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "0123456789", 10), 10);
	close(fd);
	ck_assert_int_eq(rba_file_read(path, 10, &p, &n, &d), 0);
	ck_assert_uint_eq(n, 10);
	ck_assert_str_eq((char *)p, "0123456789");
	free(p);
	ck_assert_int_eq(rba_file_read(path, 9, &p, &n, &d), RBA_E_LIMIT);
	ck_assert_ptr_null(p);
	unlink(path);
	ck_assert_int_eq(rba_file_read(path, 9, &p, &n, &d), ENOENT);
	ck_assert_str_eq(d.file, path);
}
END_TEST

START_TEST(test_atomic_write)
{
	char dir[] = "/tmp/rba-atomic-XXXXXX";
	char path[256], stale[300];
	struct rba_atomic a;
	struct stat st;
	uint8_t *p;
	size_t n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out", dir);
	ck_assert_int_eq(rba_file_write_atomic(path, "old", 3, 0644), 0);
	/* an aborted write leaves the old file and no temporary */
	ck_assert_int_eq(rba_atomic_open(&a, path, 0600), 0);
	ck_assert_int_eq(rba_atomic_write(&a, "partial", 7), 0);
	rba_atomic_abort(&a);
	ck_assert_int_eq(rba_file_read(path, 100, &p, &n, NULL), 0);
	ck_assert_str_eq((char *)p, "old");
	free(p);
	ck_assert_int_eq(stat(a.tmp[0] ? a.tmp : "/nonexistent", &st), -1);
	/* commit replaces it, with the requested mode */
	ck_assert_int_eq(rba_atomic_open(&a, path, 0600), 0);
	ck_assert_int_eq(rba_atomic_write(&a, "new", 3), 0);
	ck_assert_int_eq(rba_atomic_commit(&a), 0);
	ck_assert_int_eq(rba_file_read(path, 100, &p, &n, NULL), 0);
	ck_assert_str_eq((char *)p, "new");
	free(p);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* a stale temporary of a dead process is swept, a live one kept */
	snprintf(stale, sizeof(stale), "%s.tmp-999999999-0", path);
	ck_assert_int_eq(rba_file_write_atomic(stale, "x", 1, 0600), 0);
	ck_assert_int_eq(rba_atomic_sweep(path), 1);
	ck_assert_int_eq(stat(stale, &st), -1);
	/* a bare file name sweeps the current directory */
	ck_assert_int_eq(rba_file_write_atomic(stale, "x", 1, 0600), 0);
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(rba_atomic_sweep("out"), 1);
	ck_assert_int_eq(stat(stale, &st), -1);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* The SHA extensions engine against libsodium's, every split of every
 * length up to a few blocks, and a big buffer in odd pieces. */
START_TEST(test_digest_engines_agree)
{
	uint8_t buf[1 << 16];
	struct rba_digest a, b;
	struct rba_hasher h;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 7));
	for (size_t n = 0; n <= 300; n++) {
		crypto_hash_sha256(a.b, buf, n);
		rba_digest_bytes(buf, n, &b);
		ck_assert_msg(rba_digest_equal(&a, &b), "length %zu", n);
		for (size_t cut = 0; cut <= n; cut += 7) {
			rba_hasher_init(&h);
			rba_hasher_update(&h, buf, cut);
			rba_hasher_update(&h, buf + cut, n - cut);
			rba_hasher_final(&h, &b);
			ck_assert_msg(rba_digest_equal(&a, &b), "length %zu cut %zu", n, cut);
		}
	}
	crypto_hash_sha256(a.b, buf, sizeof(buf));
	rba_hasher_init(&h);
	for (size_t off = 0, step = 1; off < sizeof(buf); off += step, step = step * 3 % 1000 + 1)
		rba_hasher_update(&h, buf + off, off + step > sizeof(buf) ? sizeof(buf) - off : step);
	rba_hasher_final(&h, &b);
	ck_assert(rba_digest_equal(&a, &b));
	ck_assert(strcmp(rba_sha256_engine(), "sha-ni") == 0 ||
		  strcmp(rba_sha256_engine(), "libsodium") == 0);
}
END_TEST

Suite *
suite_common(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_strerror_all);
	tcase_add_test(tc, test_fail_detail);
	tcase_add_test(tc, test_buf_le_roundtrip);
	tcase_add_test(tc, test_cursor_bounds);
	tcase_add_test(tc, test_digest_known);
	tcase_add_test(tc, test_digest_parse_errors);
	tcase_add_test(tc, test_digest_engines_agree);
	tcase_add_test(tc, test_file_read_limit);
	tcase_add_test(tc, test_atomic_write);
	suite_add_tcase(s, tc);
	return s;
}
