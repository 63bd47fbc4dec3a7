/*
 * check_common.c - errors, buffers, cursors, digests, atomic files, JSON,
 * string vectors, UTF-8, UTC text and the monotonic clock.
 */
#include <check.h>
#include <sodium.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/numfmt.h"
#include "common/rba.h"
#include "common/rbatime.h"
#include "common/sha1.h"
#include "common/strv.h"
#include "common/utf8.h"
#include "tests/unit/suites.h"

START_TEST(test_strerror_all)
{
	for (int e = RBA_E_ENCODING; e <= 0; e++) {
		ck_assert_ptr_nonnull(rba_strerror(e));
		ck_assert_str_ne(rba_strerror(e), "unknown error");
	}
	ck_assert_str_eq(rba_strerror(-9999), "unknown error");
	/* a disk's errnos in a diagnostic's lower case, others as strerror */
	ck_assert_str_eq(rba_strerror(ENOSPC), "no space left on device");
	ck_assert_str_eq(rba_strerror(EIO), "input/output error");
	ck_assert_str_eq(rba_strerror(ENOENT), "no such file or directory");
	ck_assert_str_eq(rba_strerror(ETIMEDOUT), strerror(ETIMEDOUT));
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
	rba_detail_clear(&d);
	ck_assert_int_eq(rba_file_read(path, 9, &p, &n, &d), RBA_E_LIMIT);
	ck_assert_ptr_null(p);
	/* which file, its size and the limit */
	{
		char want[400];
		snprintf(want, sizeof(want),
			 "'%s' has 10 bytes, over the limit of 9 bytes (9 bytes) "
			 "for this input", path);
		ck_assert_str_eq(d.reason, want);
		ck_assert_str_eq(d.file, path);
	}
	/* a limit in binary units: a sparse file of 2 MiB + 1 over 2 MiB */
	ck_assert_int_eq(truncate(path, (2 << 20) + 1), 0);
	ck_assert_int_eq(rba_file_read(path, 2 << 20, &p, &n, &d), RBA_E_LIMIT);
	ck_assert(strstr(d.reason, "has 2097153 bytes, over the limit of 2097152 "
				   "bytes (2 MiB) for this input") != NULL);
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

/*
 * Two messages hashed side by side are each hashed as alone: every
 * pair of lengths around the block size, after partial blocks of every
 * length in either hasher, and long messages of unequal lengths.
 */
START_TEST(test_digest_two_at_once)
{
	static uint8_t x[3 << 12], y[3 << 12];
	static const size_t lens[] = {0, 1, 55, 63, 64, 65, 127, 128, 129,
				      200, 1000, 4096, 5000, sizeof(x)};
	const size_t nl = sizeof(lens) / sizeof(lens[0]);
	struct rba_hasher a, b, a1, b1;
	struct rba_digest da, db, ea, eb;

	for (size_t i = 0; i < sizeof(x); i++) {
		x[i] = (uint8_t)(i * 131 + (i >> 7));
		y[i] = (uint8_t)(i * 29 + 7 + (i >> 9));
	}
	for (size_t pa = 0; pa < 70; pa += 3)
		for (size_t pb = 0; pb < 70; pb += 5)
			for (size_t i = 0; i < nl; i++)
				for (size_t j = 0; j < nl; j++) {
					size_t na = lens[i] > sizeof(x) - pa ? sizeof(x) - pa : lens[i];
					size_t nb = lens[j] > sizeof(y) - pb ? sizeof(y) - pb : lens[j];
					rba_hasher_init(&a);
					rba_hasher_init(&b);
					rba_hasher_update(&a, x, pa);
					rba_hasher_update(&b, y, pb);
					a1 = a;
					b1 = b;
					rba_hasher_update2(&a, x + pa, na, &b, y + pb, nb);
					rba_hasher_update(&a1, x + pa, na);
					rba_hasher_update(&b1, y + pb, nb);
					/* and after: the state goes on as alone */
					rba_hasher_update2(&a, y, 100, &b, x, 3);
					rba_hasher_update(&a1, y, 100);
					rba_hasher_update(&b1, x, 3);
					rba_hasher_final(&a, &da);
					rba_hasher_final(&b, &db);
					rba_hasher_final(&a1, &ea);
					rba_hasher_final(&b1, &eb);
					ck_assert_msg(rba_digest_equal(&da, &ea) &&
						      rba_digest_equal(&db, &eb),
						      "prefixes %zu %zu, lengths %zu %zu",
						      pa, pb, na, nb);
				}
}
END_TEST

/* A string as the compact writer escapes it, NUL-terminated. */
static void
escaped(const char *s, size_t n, char *out, size_t cap)
{
	struct rba_buf b;

	rba_buf_init(&b);
	rba_json_put_strn(&b, s, n);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	ck_assert_uint_lt(b.len, cap);
	memcpy(out, b.p, b.len);
	out[b.len] = 0;
	rba_buf_release(&b);
}

/*
 * Escaping: exactly what RFC 8259 requires.  Every byte below 0x20, the
 * quote and the backslash are escaped (the five short forms, else
 * \u00xx in lower case); DEL, bytes 0x80..0xff and invalid UTF-8 pass
 * through unchanged.  The stream writer gives the same bytes.
 */
START_TEST(test_json_escape)
{
	char got[64], want[64], raw[2] = { 0, 0 };

	for (int c = 0; c < 256; c++) {
		raw[0] = (char)c;
		escaped(raw, 1, got, sizeof(got));
		switch (c) {
		case '"': snprintf(want, sizeof(want), "\"\\\"\""); break;
		case '\\': snprintf(want, sizeof(want), "\"\\\\\""); break;
		case '\n': snprintf(want, sizeof(want), "\"\\n\""); break;
		case '\r': snprintf(want, sizeof(want), "\"\\r\""); break;
		case '\t': snprintf(want, sizeof(want), "\"\\t\""); break;
		default:
			if (c < 0x20)
				snprintf(want, sizeof(want), "\"\\u%04x\"", c);
			else
				snprintf(want, sizeof(want), "\"%c\"", c);
		}
		ck_assert_msg(strcmp(got, want) == 0, "byte 0x%02x: %s", c, got);
	}
	/* NUL inside a counted string, and runs between escapes kept whole */
	escaped("a\0b\x1f" "c\x7f", 6, got, sizeof(got));
	ck_assert_str_eq(got, "\"a\\u0000b\\u001fc\x7f\"");
	/* invalid UTF-8 (a lone continuation, an overlong NUL, a cut 3-byte
	 * sequence) is not the writer's business: bytes pass unchanged */
	escaped("\x80\xc0\x80\xe2\x82", 5, got, sizeof(got));
	ck_assert_str_eq(got, "\"\x80\xc0\x80\xe2\x82\"");
	escaped("", 0, got, sizeof(got));
	ck_assert_str_eq(got, "\"\"");
}
END_TEST

/*
 * Numbers: the shortest of %.15g/%.16g/%.17g that reads back, integers
 * below 2^53 plainly, -0 kept, non-finite null; the stream writer agrees.
 */
START_TEST(test_json_numbers)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.0, "0" }, { -0.0, "-0" }, { 1.0, "1" }, { 1049.0, "1049" },
		{ 0.1, "0.1" }, { 0.30000000000000004, "0.30000000000000004" },
		{ 1.0 / 3.0, "0.3333333333333333" }, { 1e-5, "1e-05" },
		{ 9007199254740991.0, "9007199254740991" },
		{ 9007199254740992.0, "9007199254740992" }, /* 2^53: %.16g */
		{ 1e300, "1e+300" }, { -2.5, "-2.5" }, { 0.5, "0.5" },
		{ 5e-324, "4.94065645841247e-324" }, /* reads back as 5e-324 */
	};
	static const double back[] = {
		0.0, -0.0, 1.0, -1.0, 0.1, 0.3, 1.0 / 3.0, 1e300, -2.5e-300,
		4.9e-324, 123456789.0, 9007199254740993.0, 0.30000000000000004,
		1.1920928955078125e-07,
	};
	struct rba_buf b;
	char t[RBA_JSON_NUM_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rba_buf nb;

		rba_json_fmt_double(cases[i].v, t);
		ck_assert_msg(strcmp(t, cases[i].text) == 0, "%s for %s", t,
			      cases[i].text);
		ck_assert(strtod(t, NULL) == cases[i].v);
		rba_buf_init(&nb);
		rba_json_put_num(&nb, cases[i].v);
		ck_assert_str_eq(rba_buf_cstr(&nb), t);
		rba_buf_release(&nb);
	}
	/* Every double reads back bit for bit. */
	for (size_t i = 0; i < sizeof(back) / sizeof(back[0]); i++) {
		double r;

		rba_json_fmt_double(back[i], t);
		r = strtod(t, NULL);
		ck_assert_msg(memcmp(&r, &back[i], sizeof(r)) == 0,
			      "%s does not read back as %.17g", t, back[i]);
	}
	/* %.17g, the old run-record form, is longer where it need not be */
	snprintf(t, sizeof(t), "%.17g", 0.1);
	ck_assert_str_eq(t, "0.10000000000000001");
	rba_json_fmt_double(NAN, t);
	ck_assert_str_eq(t, "nan");
	rba_json_fmt_double(-INFINITY, t);
	ck_assert_str_eq(t, "-inf");
	rba_buf_init(&b);
	rba_json_put_num(&b, NAN);
	rba_buf_put_u8(&b, ' ');
	rba_json_put_num(&b, INFINITY);
	ck_assert_str_eq(rba_buf_cstr(&b), "null null");
	rba_buf_release(&b);
}
END_TEST

START_TEST(test_json_roundtrip)
{
	struct rba_buf b;
	struct rba_json_value v;
	struct rba_detail d;
	const char nasty[] = "a\"b\\c\nd\te\x01 \xc3\xa9";

	rba_buf_init(&b);
	rba_buf_put_u8(&b, '{');
	rba_json_put_key(&b, "s");
	rba_json_put_str(&b, nasty);
	rba_buf_put(&b, ", ", 2);
	rba_json_put_key(&b, "n");
	rba_json_put_num(&b, 0.1);
	rba_buf_put(&b, ", ", 2);
	rba_json_put_key(&b, "inf");
	rba_json_put_num(&b, INFINITY);
	rba_buf_printf(&b, "%s", ", \"a\": [1, true, null, {\"x\": \"\\ud83d\\ude00\"}]}");
	ck_assert_int_eq(rba_buf_status(&b), 0);
	rba_detail_clear(&d);
	ck_assert_msg(rba_json_parse((const char *)b.p, b.len, &v, &d) == 0, "%s", d.reason);
	ck_assert_str_eq(rba_json_get_str(&v, "s"), nasty);
	ck_assert(rba_json_get_num(&v, "n", 0) == 0.1);
	ck_assert_int_eq(rba_json_get(&v, "inf")->type, RBA_JSON_NULL);
	ck_assert_int_eq(rba_json_get(&v, "a")->n, 4);
	ck_assert_str_eq(rba_json_get_str(&rba_json_get(&v, "a")->items[3], "x"), "\xf0\x9f\x98\x80");
	ck_assert_ptr_null(rba_json_get(&v, "missing"));
	rba_json_release(&v);
	rba_buf_release(&b);
}
END_TEST

START_TEST(test_json_bad)
{
	const char *bad[] = { "", "{", "[1,]", "{\"a\" 1}", "\"\\ud800\"",
			      "\"\\udc00\"", "\"a\nb\"", "01", "1.", "-", "[1] x",
			      "tru", "\"\\q\"", "{1: 2}", "\"\\u12g4\"" };
	struct rba_json_value v;
	struct rba_detail d;
	char deep[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rba_detail_clear(&d);
		ck_assert_msg(rba_json_parse(bad[i], strlen(bad[i]), &v, &d) == RBA_E_SYNTAX,
			      "'%s' accepted", bad[i]);
		ck_assert(d.reason[0] != 0);
	}
	memset(deep, '[', 40);
	memset(deep + 40, ']', 40);
	ck_assert_int_eq(rba_json_parse(deep, 80, &v, &d), RBA_E_LIMIT);
}
END_TEST

/* A key given twice in one object is refused at its opening quote, in a
 * small object and in one past the linear search; the same key in two
 * objects is not a duplicate. */
START_TEST(test_json_duplicate)
{
	static const struct {
		const char *text;
		unsigned long col;
		const char *key;
	} bad[] = {
		{ "{\"a\": 1, \"a\": 2}", 10, "a" },
		{ "{\"a\": {\"b\": 1, \"c\": 2, \"b\": 3}}", 24, "b" },
		{ "[{\"x\": 1}, {\"y\": [], \"y\": null}]", 22, "y" },
		{ "{\"\\u0041\": 1, \"A\": 2}", 15, "A" },
		{ "{\"a\\u0000b\": 1, \"a\\u0000c\": 2}", 17, "a" },
		{ "{\"\\u001b[2J\": 1, \"\\u001b[2J\": 2}", 18, "\\x1b[2J" },
	};
	struct rba_json_value v;
	struct rba_detail d;
	struct rba_buf b;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rba_detail_clear(&d);
		ck_assert_msg(rba_json_parse(bad[i].text, strlen(bad[i].text), &v,
					     &d) == RBA_E_SYNTAX,
			      "'%s' accepted", bad[i].text);
		ck_assert_uint_eq(d.col, bad[i].col);
		ck_assert_str_eq(d.key, bad[i].key);
		ck_assert(strncmp(d.reason, "duplicate key '", 15) == 0);
		ck_assert_ptr_null(v.items);
	}
	{
		static const char two[] = "[{\"a\": 1}, {\"a\": 2}]";
		ck_assert_int_eq(rba_json_parse(two, strlen(two), &v, &d), 0);
	}
	rba_json_release(&v);
	/* past the linear search: 5000 distinct keys, then one again */
	for (int twice = 0; twice < 2; twice++) {
		rba_buf_init(&b);
		rba_buf_put_u8(&b, '{');
		for (int k = 0; k < 5000; k++)
			rba_buf_printf(&b, "%s\"k%d\": %d", k ? ", " : "", k, k);
		if (twice)
			rba_buf_printf(&b, ", \"k4321\": 0");
		rba_buf_put_u8(&b, '}');
		ck_assert_int_eq(rba_buf_status(&b), 0);
		rba_detail_clear(&d);
		ck_assert_int_eq(rba_json_parse((const char *)b.p, b.len, &v, &d),
				 twice ? RBA_E_SYNTAX : 0);
		if (twice) {
			ck_assert_str_eq(d.reason, "duplicate key 'k4321'");
			ck_assert_uint_eq(d.col, b.len - 10); /* its quote */
		} else {
			ck_assert_uint_eq(v.n, 5000);
			ck_assert(rba_json_get_num(&v, "k4999", -1) == 4999);
			rba_json_release(&v);
		}
		rba_buf_release(&b);
	}
}
END_TEST

/* XGBoost's NaN, Infinity and -Infinity: numbers with RBA_JSON_NONFINITE,
 * refused without it; no other spelling. */
START_TEST(test_json_nonfinite)
{
	static const char text[] = "[NaN, Infinity, -Infinity, -1]";
	static const char *const bad[] = { "nan", "-NaN", "Inf", "-Inf", "+Infinity",
					   "NaNa", "Infinit" };
	struct rba_json_value v;
	struct rba_detail d;

	ck_assert_int_eq(rba_json_parse(text, strlen(text), &v, &d), RBA_E_SYNTAX);
	ck_assert_str_eq(d.reason, "unexpected character");
	ck_assert_uint_eq(d.col, 2);
	ck_assert_int_eq(rba_json_parse_flags(text, strlen(text), RBA_JSON_NONFINITE,
					      &v, &d), 0);
	ck_assert_uint_eq(v.n, 4);
	for (size_t i = 0; i < 4; i++)
		ck_assert_int_eq(v.items[i].type, RBA_JSON_NUMBER);
	ck_assert(isnan(v.items[0].num) && isnan(v.items[0].numf));
	ck_assert(v.items[1].num == INFINITY && v.items[1].numf == INFINITY);
	ck_assert(v.items[2].num == -INFINITY && v.items[2].numf == -INFINITY);
	ck_assert(v.items[3].num == -1);
	rba_json_release(&v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(rba_json_parse_flags(bad[i], strlen(bad[i]),
						   RBA_JSON_NONFINITE, &v, &d) != 0,
			      "'%s' accepted", bad[i]);
}
END_TEST

/*
 * The compact writer writes the separators itself: every member shape,
 * empty containers, nesting, raw text.
 */
START_TEST(test_json_w)
{
	struct rba_buf b;
	struct rba_json_w w;
	struct rba_digest dg;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	char want[320];

	memset(&dg, 0xab, sizeof(dg));
	rba_digest_format(&dg, hex);
	rba_buf_init(&b);
	rba_json_w_init(&w, &b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "s", "x");
	rba_json_w_str(&w, "null", NULL);
	rba_json_w_num(&w, "n", 0.25);
	rba_json_w_num(&w, "nan", NAN);
	rba_json_w_u64(&w, "u", UINT64_MAX);
	rba_json_w_bool(&w, "t", 7);
	rba_json_w_bool(&w, "f", 0);
	rba_json_w_digest(&w, "d", &dg, 1);
	rba_json_w_digest(&w, "nd", &dg, 0);
	rba_json_w_open(&w, "e", '[');
	rba_json_w_close(&w, ']');
	rba_json_w_open(&w, "a", '[');
	rba_json_w_str(&w, NULL, "i");
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_close(&w, '}');
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_u64(&w, "k", 1);
	rba_json_w_u64(&w, "l", 2);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, ']');
	rba_json_w_raw(&w, "raw", "[\"c\", 1]", 8);
	rba_json_w_close(&w, '}');
	snprintf(want, sizeof(want),
		 "{\"s\": \"x\", \"null\": null, \"n\": 0.25, \"nan\": null, "
		 "\"u\": 18446744073709551615, \"t\": true, \"f\": false, "
		 "\"d\": \"%s\", \"nd\": null, \"e\": [], "
		 "\"a\": [\"i\", {}, {\"k\": 1, \"l\": 2}], \"raw\": [\"c\", 1]}",
		 hex);
	ck_assert_str_eq(rba_buf_cstr(&b), want);
	ck_assert_int_eq(w.depth, 0);
	rba_buf_release(&b);
}
END_TEST

/*
 * The pretty writer: the evidence layout, and a parsed value written
 * back in it gives the same text (what evidence_check relies on).
 */
START_TEST(test_json_pretty)
{
	static const char want[] =
		"{\n"
		"  \"a\": [],\n"
		"  \"o\": {},\n"
		"  \"l\": [\n"
		"    1,\n"
		"    \"t\\n\",\n"
		"    null,\n"
		"    {\n"
		"      \"k\": true,\n"
		"      \"f\": false\n"
		"    }\n"
		"  ],\n"
		"  \"x\": 0.1\n"
		"}";
	struct rba_json_w w;
	struct rba_json_value v;
	struct rba_buf b, again;

	rba_buf_init(&b);
	rba_json_w_init_pretty(&w, &b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_open(&w, "a", '[');
	rba_json_w_close(&w, ']');
	rba_json_w_open(&w, "o", '{');
	rba_json_w_close(&w, '}');
	rba_json_w_open(&w, "l", '[');
	rba_json_w_num(&w, NULL, 1);
	rba_json_w_strn(&w, NULL, "t\nZ", 2);
	rba_json_w_str(&w, NULL, NULL);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_bool(&w, "k", 1);
	rba_json_w_bool(&w, "f", 0);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, ']');
	rba_json_w_num(&w, "x", 0.1);
	rba_json_w_close(&w, '}');
	ck_assert_int_eq(w.depth, 0);
	ck_assert_str_eq(rba_buf_cstr(&b), want);

	ck_assert_int_eq(rba_json_parse(want, strlen(want), &v, NULL), 0);
	rba_buf_init(&again);
	rba_json_w_init_pretty(&w, &again);
	rba_json_w_value(&w, NULL, &v);
	ck_assert_str_eq(rba_buf_cstr(&again), want);
	rba_json_release(&v);
	rba_json_release(&v); /* twice is allowed */
	rba_buf_release(&again);
	rba_buf_release(&b);
}
END_TEST

/* Opening deeper than RBA_JSON_W_DEPTH is a broken invariant. */
START_TEST(test_json_pretty_depth)
{
	struct rba_json_w w;
	struct rba_buf b;

	rba_buf_init(&b);
	rba_json_w_init_pretty(&w, &b);
	for (int i = 0; i <= RBA_JSON_W_DEPTH; i++)
		rba_json_w_open(&w, NULL, '[');
}
END_TEST

/*
 * One writer, two layouts: a parsed value written back compact, a string
 * with a NUL, raw text and an inline list inside a pretty object (a sweep
 * record's shape), and the pretty layout again after the inline list.
 */
START_TEST(test_json_w_layouts)
{
	static const char compact[] =
		"{\"a\": [1, \"t\\u0000\", null, {}, []], \"o\": {\"k\": true}}";
	static const char mixed[] =
		"{\n"
		"  \"seeds\": [0, 1, 2],\n"
		"  \"none\": [],\n"
		"  \"o\": {\n"
		"    \"in\": [{\"k\": 1}, [\"x\"]],\n"
		"    \"raw\": [1,2]\n"
		"  },\n"
		"  \"s\": \"a\\u0000b\"\n"
		"}";
	struct rba_json_w w;
	struct rba_json_value v;
	struct rba_buf b;

	ck_assert_int_eq(rba_json_parse(compact, strlen(compact), &v, NULL), 0);
	rba_buf_init(&b);
	rba_json_w_init(&w, &b);
	rba_json_w_value(&w, NULL, &v);
	ck_assert_str_eq(rba_buf_cstr(&b), compact);
	rba_json_release(&v);
	rba_buf_release(&b);

	rba_buf_init(&b);
	rba_json_w_init_pretty(&w, &b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_open_inline(&w, "seeds", '[');
	for (uint64_t i = 0; i < 3; i++)
		rba_json_w_u64(&w, NULL, i);
	rba_json_w_close(&w, ']');
	rba_json_w_open_inline(&w, "none", '[');
	rba_json_w_close(&w, ']');
	rba_json_w_open(&w, "o", '{');
	rba_json_w_open_inline(&w, "in", '[');
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_u64(&w, "k", 1);
	rba_json_w_close(&w, '}');
	rba_json_w_open(&w, NULL, '[');
	rba_json_w_str(&w, NULL, "x");
	rba_json_w_close(&w, ']');
	rba_json_w_close(&w, ']');
	rba_json_w_raw(&w, "raw", "[1,2]", 5);
	rba_json_w_close(&w, '}');
	rba_json_w_strn(&w, "s", "a\0b", 3);
	rba_json_w_close(&w, '}');
	ck_assert_str_eq(rba_buf_cstr(&b), mixed);
	ck_assert_int_eq(w.depth, 0);
	ck_assert_int_eq(w.inline_depth, 0);
	rba_buf_release(&b);
}
END_TEST

/* A second inline container inside the first is a broken invariant. */
START_TEST(test_json_w_inline_twice)
{
	struct rba_json_w w;
	struct rba_buf b;

	rba_buf_init(&b);
	rba_json_w_init_pretty(&w, &b);
	rba_json_w_open_inline(&w, NULL, '[');
	rba_json_w_open_inline(&w, NULL, '[');
}
END_TEST

/*
 * The path reader: lookups by dotted path, what each want and flag
 * takes, the first failure named by its path from the root (an item's
 * as [i]), with and without what, and nothing after it but quiet reads.
 */
START_TEST(test_json_path_reader)
{
	static const char text[] =
		"{\"p\": {\"a\": {\"s\": \"x\", \"n\": 2, \"z\": null, \"t\": true},"
		" \"l\": [{\"id\": \"c1\"}, {\"id\": 7}], \"k.d\": 1}}";
	struct rba_json_value v;
	struct rba_json_rd r;
	struct rba_detail d;
	const struct rba_json_value *p, *l, *m;

	ck_assert_int_eq(rba_json_parse(text, strlen(text), &v, NULL), 0);
	p = rba_json_path(&v, "p");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_eq(rba_json_path(&v, ""), &v);
	ck_assert_str_eq(rba_json_path(&v, "p.a.s")->str, "x");
	ck_assert_ptr_null(rba_json_path(&v, "p.a.s.x")); /* not an object */
	ck_assert_ptr_null(rba_json_path(&v, "p.a.q"));
	ck_assert_ptr_null(rba_json_path(&v, "p.k")); /* "k.d" is one key */
	ck_assert_ptr_null(rba_json_path(NULL, "p"));
	ck_assert_ptr_null(rba_json_path(&v, "p..a")); /* an empty key */

	rba_json_rd_init(&r, p, "predicate", &d);
	ck_assert_str_eq(rba_json_rd_at(&r, NULL, "a.s", RBA_JSON_WANT_STR, 0)->str,
			 "x");
	m = rba_json_rd_at(&r, p, "a.z", RBA_JSON_WANT_NUM, RBA_JSON_NULL_OK);
	ck_assert(m != NULL && m->type == RBA_JSON_NULL);
	ck_assert_ptr_nonnull(rba_json_rd_at(&r, p, "a.t", RBA_JSON_WANT_BOOL, 0));
	ck_assert_ptr_nonnull(rba_json_rd_at(&r, p, "a", RBA_JSON_WANT_ANY, 0));
	ck_assert_ptr_null(rba_json_rd_at(&r, p, "a.q", RBA_JSON_WANT_STR,
					  RBA_JSON_OPTIONAL));
	ck_assert_ptr_null(rba_json_rd_at(&r, p, "a.n", RBA_JSON_WANT_STR,
					  RBA_JSON_QUIET));
	ck_assert_int_eq(r.err, 0);

	/* an item's member, named from the root */
	l = rba_json_rd_at(&r, p, "l", RBA_JSON_WANT_ARR, 0);
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_nonnull(rba_json_rd_at(&r, &l->items[0], "id",
					     RBA_JSON_WANT_STR, 0));
	ck_assert_ptr_null(rba_json_rd_at(&r, &l->items[1], "id",
					  RBA_JSON_WANT_STR, RBA_JSON_NULL_OK));
	ck_assert_int_eq(r.err, RBA_E_SCHEMA);
	ck_assert_str_eq(r.path, "l[1].id");
	ck_assert_str_eq(r.want, "a string or null");
	ck_assert_str_eq(d.reason, "predicate: 'l[1].id' is of another type, "
				   "not a string or null");
	ck_assert_str_eq(d.key, "");
	/* the first failure stays; later reads give NULL, quiet ones look */
	ck_assert_ptr_null(rba_json_rd_at(&r, p, "a.s", RBA_JSON_WANT_STR, 0));
	ck_assert_ptr_null(rba_json_rd_at(&r, p, "a.q", RBA_JSON_WANT_STR, 0));
	ck_assert_ptr_nonnull(rba_json_rd_at(&r, p, "a.s", RBA_JSON_WANT_STR,
					     RBA_JSON_QUIET));
	ck_assert_int_eq(rba_json_rd_fail(&r, RBA_E_NOMEM, NULL, NULL, "x"),
			 RBA_E_SCHEMA);
	ck_assert_str_eq(r.path, "l[1].id");

	/* missing, without what, d NULL allowed */
	rba_json_rd_init(&r, &v, NULL, &d);
	ck_assert_ptr_null(rba_json_rd_at(&r, p, "a.q", RBA_JSON_WANT_NUM, 0));
	ck_assert_str_eq(d.reason, "'p.a.q' is missing, not a number");
	rba_json_rd_init(&r, &v, NULL, NULL);
	ck_assert_ptr_null(rba_json_rd_at(&r, NULL, "p.a.s", RBA_JSON_WANT_OBJ, 0));
	ck_assert_str_eq(r.path, "p.a.s");
	ck_assert_str_eq(r.want, "an object");

	/* the caller's own failures: at a member, at a value, at none */
	rba_json_rd_init(&r, p, "predicate", &d);
	ck_assert_int_eq(rba_json_rd_fail(&r, RBA_E_SCHEMA, &l->items[1], NULL,
					  "is not %s", "right"),
			 RBA_E_SCHEMA);
	ck_assert_str_eq(d.reason, "predicate: 'l[1]' is not right");
	ck_assert_str_eq(r.want, "");
	rba_json_rd_init(&r, p, "predicate", &d);
	rba_json_rd_fail(&r, RBA_E_SCHEMA, p, "a.s", "is wrong");
	ck_assert_str_eq(d.reason, "predicate: 'a.s' is wrong");
	rba_json_rd_init(&r, p, "predicate", &d);
	ck_assert_int_eq(rba_json_rd_fail(&r, RBA_E_NOMEM, NULL, NULL,
					  "out of memory"),
			 RBA_E_NOMEM);
	ck_assert_str_eq(d.reason, "predicate: out of memory");
	ck_assert_str_eq(r.path, "");
	rba_json_release(&v);
}
END_TEST

/* Reader lifetimes: everything borrowed lives until the root's release. */
START_TEST(test_json_reader)
{
	char text[] = "{\"k\": \"v\\u00e9\", \"m\": 2, \"n\": -1.5e3, "
		      "\"a\": [\"\\ud83d\\ude00\"]}";
	struct rba_json_value v;
	struct rba_detail d;
	const char *k;

	ck_assert_int_eq(rba_json_parse(text, strlen(text), &v, &d), 0);
	/* the caller's text is not kept */
	k = rba_json_get_str(&v, "k");
	memset(text, 'x', sizeof(text) - 1);
	ck_assert_str_eq(k, "v\xc3\xa9");
	ck_assert(rba_json_get_num(&v, "n", 0) == -1500);
	ck_assert(rba_json_get_num(&v, "k", 7) == 7); /* "k" is a string */
	ck_assert(rba_json_get_num(&v, "m", 7) == 2);
	ck_assert_str_eq(rba_json_get(&v, "a")->items[0].str,
			 "\xf0\x9f\x98\x80");
	ck_assert_ptr_null(rba_json_get(NULL, "k"));
	ck_assert_ptr_null(rba_json_get(rba_json_get(&v, "a"), "k"));
	rba_json_release(&v);
	ck_assert_ptr_null(v.items);
	ck_assert_int_eq(rba_json_parse("\"\\udc00\"", 8, &v, &d), RBA_E_SYNTAX);
	ck_assert_int_eq(v.type, RBA_JSON_NULL);
}
END_TEST

static int
valid(const char *s, size_t n, size_t *bad)
{
	return rba_utf8_valid(s, n, bad);
}

/*
 * UTF-8 (RFC 3629): overlong forms, surrogates, values above U+10FFFF,
 * stray continuations and sequences cut short are refused at the first
 * byte of the bad sequence; the longest valid forms are accepted.
 */
START_TEST(test_strv)
{
	char big[2000], **v = NULL, *s;
	size_t n = 0;

	/* No length cap: a formatted string longer than any stack buffer. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	s = rba_strdupf("<%s>%d", big, 7);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), sizeof(big) - 1 + 3);
	ck_assert_str_eq(s + sizeof(big), ">7");
	ck_assert_int_eq(rba_strv_add(&v, &n, s), 0);
	ck_assert_int_eq(rba_strv_add(&v, &n, rba_strdupf("%s", "b")), 0);
	ck_assert_int_eq(rba_strv_add(&v, &n, NULL), RBA_E_NOMEM);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[1], "b");
	rba_strv_free(v, n);
	rba_strv_free(NULL, 3);
}
END_TEST

START_TEST(test_utf8)
{
	static const struct {
		const char *s;
		size_t n;
		long bad; /* -1: valid */
	} cases[] = {
		{ "", 0, -1 },
		{ "plain ascii, longer than eight bytes", 36, -1 },
		{ "a\0b", 3, -1 },
		{ "\xc2\x80", 2, -1 },		   /* U+0080 */
		{ "\xdf\xbf", 2, -1 },		   /* U+07FF */
		{ "\xe0\xa0\x80", 3, -1 },	   /* U+0800 */
		{ "\xed\x9f\xbf", 3, -1 },	   /* U+D7FF */
		{ "\xee\x80\x80", 3, -1 },	   /* U+E000 */
		{ "\xef\xbf\xbf", 3, -1 },	   /* U+FFFF */
		{ "\xf0\x90\x80\x80", 4, -1 },	   /* U+10000 */
		{ "\xf4\x8f\xbf\xbf", 4, -1 },	   /* U+10FFFF */
		{ "\xc0\x80", 2, 0 },		   /* overlong NUL */
		{ "\xc1\xbf", 2, 0 },		   /* overlong U+007F */
		{ "\xe0\x9f\xbf", 3, 0 },	   /* overlong U+07FF */
		{ "\xf0\x8f\xbf\xbf", 4, 0 },	   /* overlong U+FFFF */
		{ "\xed\xa0\x80", 3, 0 },	   /* U+D800 */
		{ "\xed\xbf\xbf", 3, 0 },	   /* U+DFFF */
		{ "\xf4\x90\x80\x80", 4, 0 },	   /* U+110000 */
		{ "\xf5\x80\x80\x80", 4, 0 },
		{ "\xff", 1, 0 },
		{ "ab\x80", 3, 2 },		   /* stray continuation */
		{ "abc\xe2\x82", 5, 3 },	   /* cut short */
		{ "abcdefgh\xf0\x9f\x98", 11, 8 }, /* cut short after ASCII */
		{ "\xe2\x82\x41", 3, 0 },	   /* not a continuation */
		{ "\xe2\x82\xac\xe2\x82", 5, 3 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t bad = 12345;
		int ok = valid(cases[i].s, cases[i].n, &bad);
		ck_assert_msg(ok == (cases[i].bad < 0), "case %zu", i);
		if (!ok)
			ck_assert_msg(bad == (size_t)cases[i].bad,
				      "case %zu: bad at %zu", i, bad);
		else
			ck_assert_uint_eq(bad, 12345);
	}
	ck_assert_int_eq(rba_utf8_valid("\xff", 1, NULL), 0);
	{
		uint32_t cp = 0;
		ck_assert_uint_eq(rba_utf8_next((const uint8_t *)"\xe2\x82\xac", 3, &cp),
				  3);
		ck_assert_uint_eq(cp, 0x20ac);
		ck_assert_uint_eq(rba_utf8_next((const uint8_t *)"\xe2\x82\xac", 2, &cp),
				  0);
		ck_assert_uint_eq(rba_utf8_next((const uint8_t *)"\xf4\x8f\xbf\xbf",
						4, &cp), 4);
		ck_assert_uint_eq(cp, 0x10ffff);
	}
}
END_TEST

/* The escaping rule: what reaches a terminal from data. */
static void
expect_escape(const char *in, size_t n, const char *want)
{
	char out[256];
	size_t len = rba_utf8_escape(in, n, out, sizeof(out));

	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert_uint_eq(rba_utf8_escape(in, n, NULL, 0), len);
	ck_assert_uint_le(len, 4 * n);
}

START_TEST(test_utf8_escape)
{
	char out[8];

	expect_escape("plain name", 10, "plain name");
	expect_escape("Stra\xc3\x9f" "e \xe2\x82\xac", 11, "Stra\xc3\x9f" "e \xe2\x82\xac");
	expect_escape("\033[31mred", 8, "\\x1b[31mred");
	expect_escape("\xe2\x80\xae" "evil", 7, "\\xe2\\x80\\xaeevil");
	expect_escape("a\rb\nc\td\\e", 9, "a\\rb\\nc\\td\\\\e");
	expect_escape("x\0y", 3, "x\\x00y");
	expect_escape("\x7f", 1, "\\x7f");
	expect_escape("\xc2\x9b", 2, "\\xc2\\x9b");	   /* C1 CSI */
	expect_escape("\x9b", 1, "\\x9b");		   /* a lone CSI byte */
	expect_escape("\xe2\x81\xa6", 3, "\\xe2\\x81\\xa6"); /* U+2066 */
	expect_escape("\xe2\x80\xa8", 3, "\\xe2\\x80\\xa8"); /* U+2028 */
	expect_escape("\xe2\x82", 2, "\\xe2\\x82");	   /* cut short */
	/* cut before an escape that does not fit, and NUL-terminated */
	ck_assert_uint_eq(rba_utf8_escape("ab\033c", 4, out, 5), 7);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(rba_utf8_escape("abcdefghij", 10, out, sizeof(out)), 10);
	ck_assert_str_eq(out, "abcdefg");
}
END_TEST

/* UTC text: the epoch, before it, leap days, the year 2038 and after. */
START_TEST(test_time_utc)
{
	static const struct {
		int64_t t;
		const char *text;
	} cases[] = {
		{ 0, "1970-01-01T00:00:00Z" },
		{ -1, "1969-12-31T23:59:59Z" },
		{ -86400LL * 365, "1969-01-01T00:00:00Z" },
		{ 951782400, "2000-02-29T00:00:00Z" },
		{ 1700000000, "2023-11-14T22:13:20Z" },
		{ 2147483647, "2038-01-19T03:14:07Z" },
		{ 2147483648LL, "2038-01-19T03:14:08Z" },
		{ 253402300799LL, "9999-12-31T23:59:59Z" },
		{ -62135596800LL, "1-01-01T00:00:00Z" },
	};
	char t[RBA_TIME_TEXT_MAX];
	int64_t back;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = rba_time_utc(cases[i].t, t);
		ck_assert_str_eq(t, cases[i].text);
		ck_assert_uint_eq(n, strlen(t));
		if (n == 20) {
			ck_assert_int_eq(rba_time_parse_utc(t, n, &back), 0);
			ck_assert_int_eq(back, cases[i].t);
		} else {
			ck_assert_int_eq(rba_time_parse_utc(t, n, &back), -1);
		}
	}
	/* beyond what the C library breaks down */
	rba_time_utc(INT64_MAX, t);
	ck_assert_str_eq(t, "invalid");
	/* only the canonical text of a time parses */
	ck_assert_int_eq(rba_time_parse_utc("2023-02-29T00:00:00Z", 20, &back), -1);
	ck_assert_int_eq(rba_time_parse_utc("2023-01-01T24:00:00Z", 20, &back), -1);
	ck_assert_int_eq(rba_time_parse_utc("2023-01-01 00:00:00Z", 20, &back), -1);
	ck_assert_int_eq(rba_time_parse_utc("2023-01-01T00:00:00+", 20, &back), -1);
	ck_assert_int_eq(rba_time_parse_utc("2023-01-01T00:00:00Z", 19, &back), -1);
	ck_assert_int_eq(rba_time_parse_utc(NULL, 20, &back), -1);
	/* not NUL-terminated is fine */
	ck_assert_int_eq(rba_time_parse_utc("2023-11-14T22:13:20Zjunk", 20, &back), 0);
	ck_assert_int_eq(back, 1700000000);
}
END_TEST

/* The monotonic clock never goes back and moves across a sleep. */
START_TEST(test_time_mono)
{
	double t0 = rba_time_mono(), prev = t0, now;
	struct timespec ms = { 0, 2000000 };

	for (int i = 0; i < 100000; i++) {
		now = rba_time_mono();
		ck_assert(now >= prev);
		prev = now;
	}
	nanosleep(&ms, NULL);
	now = rba_time_mono();
	ck_assert(now - t0 >= 0.002);
	ck_assert(now - t0 < 60);
}
END_TEST

/* The bytes of a small file as a string ("" when unreadable). */
static const char *
slurp(const char *path, char *out, size_t cap)
{
	uint8_t *p;
	size_t n;

	out[0] = 0;
	if (rba_file_read(path, cap - 1, &p, &n, NULL) == 0) {
		memcpy(out, p, n + 1);
		free(p);
	}
	return out;
}

/* Entries of dir, . and .. aside: no temporary left behind. */
static int
dir_entries(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

/*
 * The output rule: a new name is created and never replaces a file that
 * appeared meanwhile; a regular file only with RBA_OUTPUT_FORCE; never a
 * symbolic link or a directory; a FIFO, a device and "-" written as they
 * are, a full device failing with ENOSPC.
 */
START_TEST(test_output_rule)
{
	char dir[] = "/tmp/rba-output-XXXXXX";
	char p[300], q[300], t[64];
	struct rba_output o = RBA_OUTPUT_INIT;
	struct rba_detail d;
	struct stat st;
	FILE *dash;
	int rd;

	rba_output_abort(&o); /* idle: nothing */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* a new name */
	snprintf(p, sizeof(p), "%s/new", dir);
	ck_assert_int_eq(rba_file_write_output(p, "one", 3, 0644, 0, NULL, &d), 0);
	ck_assert_str_eq(slurp(p, t, sizeof(t)), "one");
	/* an existing file: refused, untouched, unless forced */
	rba_detail_clear(&d);
	ck_assert_int_eq(rba_file_write_output(p, "two", 3, 0644, 0, NULL, &d),
			 RBA_E_EXISTS);
	ck_assert_str_eq(d.file, p);
	ck_assert_str_eq(d.reason, "exists (use --force to replace it)");
	ck_assert_str_eq(slurp(p, t, sizeof(t)), "one");
	ck_assert_int_eq(rba_file_write_output(p, "two", 3, 0644, RBA_OUTPUT_FORCE,
					       NULL, &d), 0);
	ck_assert_str_eq(slurp(p, t, sizeof(t)), "two");
	ck_assert_int_eq(dir_entries(dir), 1);
	/* a file that appears between the look and the commit stays */
	snprintf(q, sizeof(q), "%s/race", dir);
	ck_assert_int_eq(rba_output_open(&o, q, 0644, 0, NULL, &d), 0);
	ck_assert(!rba_output_direct(&o));
	ck_assert_int_eq(rba_output_write(&o, "mine", 4), 0);
	ck_assert_int_eq(rba_file_write_atomic(q, "theirs", 6, 0644), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(rba_output_commit(&o, &d), RBA_E_EXISTS);
	ck_assert_str_eq(d.reason, "exists (use --force to replace it)");
	ck_assert_str_eq(slurp(q, t, sizeof(t)), "theirs");
	ck_assert_int_eq(dir_entries(dir), 2);
	rba_output_abort(&o); /* idle after commit */
	/* a symbolic link, to a file or to nothing: never, even forced */
	snprintf(q, sizeof(q), "%s/link", dir);
	ck_assert_int_eq(symlink(p, q), 0);
	for (int force = 0; force <= RBA_OUTPUT_FORCE; force += RBA_OUTPUT_FORCE) {
		rba_detail_clear(&d);
		ck_assert_int_eq(rba_file_write_output(q, "x", 1, 0644, force, NULL, &d),
				 RBA_E_EXISTS);
		ck_assert_msg(strstr(d.reason, "symbolic link") != NULL, "%s", d.reason);
	}
	ck_assert_int_eq(lstat(q, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_str_eq(slurp(p, t, sizeof(t)), "two");
	unlink(q);
	ck_assert_int_eq(symlink("/nonexistent-target", q), 0);
	ck_assert_int_eq(rba_file_write_output(q, "x", 1, 0644, RBA_OUTPUT_FORCE,
					       NULL, &d), RBA_E_EXISTS);
	unlink(q);
	/* a directory */
	ck_assert_int_eq(rba_file_write_output(dir, "x", 1, 0644, RBA_OUTPUT_FORCE,
					       NULL, &d), EISDIR);
	ck_assert_str_eq(d.reason, "is a directory");
	/* a FIFO, and a symbolic link to it: written as they are */
	snprintf(q, sizeof(q), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(q, 0600), 0);
	rd = open(q, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	ck_assert_int_eq(rba_output_open(&o, q, 0644, 0, NULL, &d), 0);
	ck_assert(rba_output_direct(&o));
	ck_assert_int_eq(rba_output_write(&o, "fi", 2), 0);
	ck_assert_int_eq(rba_output_commit(&o, &d), 0);
	snprintf(p, sizeof(p), "%s/fifo-link", dir);
	ck_assert_int_eq(symlink(q, p), 0);
	ck_assert_int_eq(rba_file_write_output(p, "fo", 2, 0644, RBA_OUTPUT_FORCE,
					       NULL, &d), 0);
	ck_assert_int_eq(read(rd, t, sizeof(t)), 4);
	ck_assert(memcmp(t, "fifo", 4) == 0);
	close(rd);
	ck_assert_int_eq(lstat(q, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	/* devices: made here when root may (never /dev itself, which a root
	 * process could replace), else the real ones, which it cannot */
	{
		char null_[300], full[300];
		int made = 0;
		snprintf(null_, sizeof(null_), "%s/null", dir);
		snprintf(full, sizeof(full), "%s/full", dir);
		if (mknod(null_, S_IFCHR | 0666, makedev(1, 3)) == 0 &&
		    mknod(full, S_IFCHR | 0666, makedev(1, 7)) == 0)
			made = 1;
		else if (geteuid() != 0)
			snprintf(null_, sizeof(null_), "/dev/null"),
				snprintf(full, sizeof(full), "/dev/full");
		if (made || geteuid() != 0) {
			ck_assert_int_eq(rba_file_write_output(null_, "x", 1, 0644, 0,
							       NULL, &d), 0);
			rba_detail_clear(&d);
			ck_assert_int_eq(rba_file_write_output(full, "x", 1, 0644,
							       RBA_OUTPUT_FORCE, NULL, &d),
					 ENOSPC);
			ck_assert_str_eq(d.file, full);
			ck_assert_str_eq(d.reason, "no space left on device");
			/* through a stream the error shows at the commit */
			ck_assert_int_eq(rba_output_open(&o, full, 0644, 0, NULL, &d), 0);
			ck_assert_int_eq(fputs("x", rba_output_stdio(&o)) >= 0, 1);
			ck_assert_int_eq(rba_output_commit(&o, &d), ENOSPC);
			ck_assert_int_eq(stat(null_, &st), 0);
			ck_assert(S_ISCHR(st.st_mode));
			ck_assert_int_eq(stat(full, &st), 0);
			ck_assert(S_ISCHR(st.st_mode));
			if (made)
				unlink(null_), unlink(full);
		}
	}
	/* the check alone, for outputs that are only ever files */
	snprintf(q, sizeof(q), "%s/check", dir);
	ck_assert_int_eq(rba_output_check(q, 0, &d), 0);
	ck_assert_int_eq(rba_file_write_atomic(q, "x", 1, 0644), 0);
	ck_assert_int_eq(rba_output_check(q, 0, &d), RBA_E_EXISTS);
	ck_assert_str_eq(d.reason, "exists (use --force to replace it)");
	ck_assert_int_eq(rba_output_check(q, RBA_OUTPUT_FORCE, &d), 0);
	unlink(q);
	ck_assert_int_eq(symlink("x", q), 0);
	ck_assert_int_eq(rba_output_check(q, RBA_OUTPUT_FORCE, &d), RBA_E_EXISTS);
	ck_assert_msg(strstr(d.reason, "symbolic link") != NULL, "%s", d.reason);
	unlink(q);
	snprintf(q, sizeof(q), "%s/fifo", dir);
	ck_assert_int_eq(rba_output_check(q, RBA_OUTPUT_FORCE, &d), RBA_E_EXISTS);
	ck_assert_str_eq(d.reason, "is a device or a FIFO (this output is a file)");
	ck_assert_int_eq(rba_output_check(dir, RBA_OUTPUT_FORCE, &d), EISDIR);
	/* "-": the caller's stream, or refused without one */
	ck_assert_int_eq(rba_file_write_output("-", "x", 1, 0644, 0, NULL, &d),
			 RBA_E_USAGE);
	dash = tmpfile();
	ck_assert_ptr_nonnull(dash);
	ck_assert_int_eq(rba_file_write_output("-", "dash", 4, 0644, 0, dash, &d), 0);
	rewind(dash);
	ck_assert_ptr_nonnull(fgets(t, sizeof(t), dash));
	ck_assert_str_eq(t, "dash");
	fclose(dash);
	/* no such directory */
	snprintf(q, sizeof(q), "%s/none/x", dir);
	ck_assert_int_eq(rba_file_write_output(q, "x", 1, 0644, 0, NULL, &d), ENOENT);
	snprintf(q, sizeof(q), "%s/race", dir);
	unlink(q);
	snprintf(q, sizeof(q), "%s/new", dir);
	unlink(q);
	unlink(p);
	snprintf(q, sizeof(q), "%s/fifo", dir);
	unlink(q);
	ck_assert_int_eq(dir_entries(dir), 0);
	rmdir(dir);
}
END_TEST

/* RBA_ATOMIC_INIT is idle: abort does nothing, twice. */
START_TEST(test_atomic_init)
{
	struct rba_atomic a = RBA_ATOMIC_INIT, b;

	ck_assert_int_eq(a.fd, -1);
	rba_atomic_abort(&a);
	rba_atomic_abort(&a);
	memset(&b, 0x5a, sizeof(b));
	rba_atomic_init(&b);
	ck_assert_int_eq(b.fd, -1);
	ck_assert_ptr_null(b.fp);
	ck_assert_int_eq(b.tmp[0], 0);
	rba_atomic_abort(&b);
	/* a failed open leaves it idle */
	ck_assert_int_eq(rba_atomic_open(&b, "/nonexistent-dir/x", 0644), ENOENT);
	ck_assert_int_eq(b.fd, -1);
	rba_atomic_abort(&b);
}
END_TEST

/* SHA-1: the FIPS 180 examples, fed whole and split at every byte, and
 * a git blob id (what exec/gitexport.c checks each object against). */
static void
sha1_hex(const void *p, size_t n, size_t split, char out[41])
{
	struct rba_sha1 h;
	uint8_t md[RBA_SHA1_BYTES];

	rba_sha1_init(&h);
	rba_sha1_update(&h, p, split);
	rba_sha1_update(&h, (const uint8_t *)p + split, n - split);
	rba_sha1_final(&h, md);
	for (int i = 0; i < RBA_SHA1_BYTES; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

START_TEST(test_sha1)
{
	static const struct { const char *in, *want; } v[] = {
		{ "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
		{ "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
		  "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "a49b2446a02c645bf419f995b67091253a04a259" },
	};
	static const char blob[] = "blob 9\0print(1)\n";
	char hex[41];
	char *a;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (size_t k = 0; k <= strlen(v[i].in); k++) {
			sha1_hex(v[i].in, strlen(v[i].in), k, hex);
			ck_assert_str_eq(hex, v[i].want);
		}
	sha1_hex(blob, sizeof(blob) - 1, 7, hex);
	ck_assert_str_eq(hex, "b917a726c93f902e43291d9009d6488385133b67");
	ck_assert_ptr_nonnull(a = malloc(1000000));
	memset(a, 'a', 1000000);
	sha1_hex(a, 1000000, 333333, hex);
	ck_assert_str_eq(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	free(a);
}
END_TEST

/* rba_fmt_g against snprintf: floats (what score prints), doubles, ties,
 * and the edges of %g's two layouts. */
static void
fmt_g_same(double v, int prec)
{
	char a[RBA_FMT_G_MAX], b[64];

	rba_fmt_g(v, prec, a);
	snprintf(b, sizeof(b), "%.*g", prec, v);
	ck_assert_msg(strcmp(a, b) == 0, "%a at %d: '%s', printf '%s'", v,
		      prec, a, b);
}

START_TEST(test_fmt_g)
{
	static const double edge[] = {
		0.0, -0.0, 1, -1, 0.5, 1e-5, 1e-4, 9.9999999e-5, 123456789,
		1234567890, 999999999.5, 0.1, 1e300, -1e-300, 5e-324, 2.5,
		0.125, 1e21, 1e22, 1e23, 9007199254740993.0, 4.35, 99999.95,
		0.000123456789, 1.0 / 3, FLT_MAX, FLT_MIN, DBL_MAX, INFINITY,
		-INFINITY, NAN,
	};
	uint64_t x = 0x2545F4914F6CDD1Du;

	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		for (int p = 1; p <= 17; p++)
			fmt_g_same(edge[i], p);
	for (int k = 0; k < 300000; k++) {
		uint32_t u;
		float f;
		double d;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		u = (uint32_t)x;
		memcpy(&f, &u, 4);
		memcpy(&d, &x, 8);
		fmt_g_same((double)f, 9);
		fmt_g_same((double)(float)((double)(x >> 40) / 16777216.0), 9);
		fmt_g_same(d, 17);
		fmt_g_same((double)(x % 100000000000u) / (double)(1u << (x % 20)),
			   1 + (int)(x >> 59) % 17);
		if (k % 8 == 0)
			for (int p = 15; p <= 17; p++)
				fmt_g_same((double)f, p);
	}
	/* Short dyadic values, where a digit 5 followed by nothing makes
	 * ties at some precision: rounded to even by the scaled integer
	 * (fmt_round_fast) as by the whole expansion. */
	for (int j = 0; j <= 40; j += 1 + j / 8)
		for (uint32_t m = 1; m < 4096; m += 2)
			for (int p = 1; p <= 17; p += 1 + (m & 1) * (j & 1))
				fmt_g_same(ldexp((double)m, -j), p);
	/* every float32 of one binade of scores near 0.05, at %.9g */
	for (uint32_t u = 0x3d400000u; u < 0x3d800000u; u += 37) {
		float f;
		memcpy(&f, &u, 4);
		fmt_g_same((double)f, 9);
	}
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
	tcase_add_test(tc, test_digest_two_at_once);
	tcase_add_test(tc, test_file_read_limit);
	tcase_add_test(tc, test_atomic_write);
	tcase_add_test(tc, test_atomic_init);
	tcase_add_test(tc, test_output_rule);
	tcase_add_test(tc, test_json_escape);
	tcase_add_test(tc, test_json_numbers);
	tcase_add_test(tc, test_json_w);
	tcase_add_test(tc, test_json_pretty);
	tcase_add_test_raise_signal(tc, test_json_pretty_depth, SIGABRT);
	tcase_add_test(tc, test_json_w_layouts);
	tcase_add_test_raise_signal(tc, test_json_w_inline_twice, SIGABRT);
	tcase_add_test(tc, test_json_path_reader);
	tcase_add_test(tc, test_json_reader);
	tcase_add_test(tc, test_json_roundtrip);
	tcase_add_test(tc, test_json_bad);
	tcase_add_test(tc, test_json_duplicate);
	tcase_add_test(tc, test_json_nonfinite);
	tcase_add_test(tc, test_strv);
	tcase_add_test(tc, test_utf8);
	tcase_add_test(tc, test_utf8_escape);
	tcase_add_test(tc, test_time_utc);
	tcase_add_test(tc, test_time_mono);
	tcase_add_test(tc, test_sha1);
	tcase_add_test(tc, test_fmt_g);
	suite_add_tcase(s, tc);
	return s;
}
