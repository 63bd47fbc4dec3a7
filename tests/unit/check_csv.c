/* check_csv.c - the CSV reader, validator and table loader. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/csv.h"
#include "tests/unit/suites.h"

/* Validates text; returns the status and fills d. */
static int
validate(const char *text, struct csv_summary *s, struct rba_detail *d)
{
	struct csv_reader *r;
	int err;

	rba_detail_clear(d);
	ck_assert_int_eq(csv_reader_open_mem(text, strlen(text), "t.csv", &r), 0);
	err = csv_validate(r, s, d);
	csv_reader_free(r);
	return err;
}

static void
expect_error(const char *text, int err, unsigned long line, unsigned long col,
	     const char *reason_part)
{
	struct csv_summary s;
	struct rba_detail d;

	ck_assert_int_eq(validate(text, &s, &d), err);
	ck_assert_str_eq(d.file, "t.csv");
	ck_assert_uint_eq(d.line, line);
	ck_assert_uint_eq(d.col, col);
	ck_assert_msg(strstr(d.reason, reason_part) != NULL, "reason '%s' lacks '%s'",
		      d.reason, reason_part);
}

START_TEST(test_quotes_crlf_bom)
{
	struct csv_reader *r;
	const struct csv_field *f;
	size_t n;
	struct rba_detail d;
	const char *text = "\xef\xbb\xbf" "a,b,c\r\n\"x,1\",\"he said \"\"hi\"\"\",\"two\nlines\"\r\n,,\n";

	ck_assert_int_eq(csv_reader_open_mem(text, strlen(text), "t.csv", &r), 0);
	ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
	ck_assert_uint_eq(n, 3);
	ck_assert(f[0].n == 1 && f[0].p[0] == 'a'); /* BOM skipped */
	ck_assert(f[2].n == 1 && f[2].p[0] == 'c'); /* CR dropped */
	ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
	ck_assert_uint_eq(csv_reader_line(r), 2);
	ck_assert_uint_eq(n, 3);
	ck_assert(f[0].n == 3 && memcmp(f[0].p, "x,1", 3) == 0);
	ck_assert(f[1].n == 12 && memcmp(f[1].p, "he said \"hi\"", 12) == 0);
	ck_assert(f[2].n == 9 && memcmp(f[2].p, "two\nlines", 9) == 0);
	ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
	ck_assert_uint_eq(csv_reader_line(r), 4); /* the quoted newline counted */
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(f[1].n, 0);
	ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 0);
	csv_reader_free(r);
}
END_TEST

START_TEST(test_types_inferred)
{
	struct csv_summary s;
	struct rba_detail d;

	ck_assert_int_eq(validate("n,t,m,e\n1,A11,2,\n-2.5e3,A12,x,\n", &s, &d), 0);
	ck_assert_uint_eq(s.ncols, 4);
	ck_assert_uint_eq(s.nrows, 2);
	ck_assert_int_eq(s.types[0], CSV_NUMERIC);
	ck_assert_int_eq(s.types[1], CSV_TEXT);
	ck_assert_int_eq(s.types[2], CSV_TEXT); /* mixed: text */
	ck_assert_int_eq(s.types[3], CSV_TEXT); /* all empty: text */
	ck_assert_str_eq(s.names[1], "t");
	csv_summary_release(&s);
	/* no final newline */
	ck_assert_int_eq(validate("a\n1", &s, &d), 0);
	ck_assert_uint_eq(s.nrows, 1);
	csv_summary_release(&s);
}
END_TEST

/*
 * The table loader (one pass, its own number path) against the streaming
 * checker and csv_parse_number on random small tables: the same error at
 * the same place, or the same column types, cell texts and numbers (the
 * float32 of csv_parse_number's double, NaN for a token).
 */
START_TEST(test_table_matches_checker)
{
	static const char *const pool[] = {
		"1", "-0", "0", "0.5", "1e3", "12345678901234567890", ".5", "5.",
		"+3", "abc", "", "NA", "\"q,x\"", "\"7\"", "1e39", "nan", "\xc3\xa9",
		"0.000000000000000000001", "3.4028235e38", "99999999999999999",
		"123456789012345", "1234567890123456", "-7.25", "00012", "1.2.3",
		"-", ".", "4\r", "\"a\"\"b\"", "2E-5", "9007199254740993",
		"0.1234567890123456789", "x\"y"};
	static const char *const tok[] = {"", "NA"};
	const struct csv_missing m = {2, tok};
	const size_t npool = sizeof(pool) / sizeof(pool[0]);
	uint64_t st = 0x9e3779b97f4a7c15ull;
	char buf[4096];

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = 0, ncols, nrows;
		struct csv_table *t = NULL;
		struct csv_summary sum;
		struct rba_detail d1, d2;
		struct csv_reader *r;
		int e1, e2, withm;
#define NEXT() (st ^= st << 13, st ^= st >> 7, st ^= st << 17, st)
		ncols = 1 + NEXT() % 4;
		nrows = NEXT() % 6;
		withm = (int)(NEXT() % 2);
		for (size_t c = 0; c < ncols; c++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%sc%zu",
						c ? "," : "", c);
		buf[len++] = '\n';
		for (size_t rr = 0; rr < nrows; rr++) {
			size_t nc = NEXT() % 16 == 0 ? ncols + 1 : ncols;
			for (size_t c = 0; c < nc; c++)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
							c ? "," : "",
							pool[NEXT() % npool]);
			buf[len++] = '\n';
		}
		buf[len] = 0;
		rba_detail_clear(&d1);
		rba_detail_clear(&d2);
		ck_assert_int_eq(csv_reader_open_mem(buf, len, "t.csv", &r), 0);
		e1 = csv_validate_missing(r, withm ? &m : NULL, &sum, &d1);
		csv_reader_free(r);
		e2 = csv_table_load_mem_missing(buf, len, "t.csv", withm ? &m : NULL, &t,
						&d2);
		ck_assert_msg(e1 == e2, "iter %d: %d vs %d (%s | %s)\n%s", iter, e1, e2,
			      d1.reason, d2.reason, buf);
		if (e1 != 0) {
			ck_assert_str_eq(d1.reason, d2.reason);
			ck_assert_uint_eq(d1.line, d2.line);
			ck_assert_uint_eq(d1.col, d2.col);
			continue;
		}
		ck_assert_uint_eq(sum.ncols, t->ncols);
		ck_assert_uint_eq(sum.nrows, t->nrows);
		/* the fields as the reader gives them */
		ck_assert_int_eq(csv_reader_open_mem(buf, len, "t.csv", &r), 0);
		{
			const struct csv_field *f;
			size_t n, row = 0;
			ck_assert_int_eq(csv_reader_next(r, &f, &n, &d1), 1);
			while (csv_reader_next(r, &f, &n, &d1) == 1) {
				for (size_t c = 0; c < n; c++) {
					size_t cn;
					const char *cell = csv_table_cell(t, row, c, &cn);
					double v;
					ck_assert_uint_eq(cn, f[c].n);
					ck_assert(memcmp(cell, f[c].p, f[c].n) == 0);
					if (sum.types[c] != CSV_NUMERIC)
						continue;
					ck_assert_int_eq(t->types[c], CSV_NUMERIC);
					if (withm && csv_is_missing(&m, f[c].p, f[c].n)) {
						ck_assert(isnan(t->num[row * n + c]));
						continue;
					}
					ck_assert_int_eq(csv_parse_number(f[c].p, f[c].n, &v), 0);
					ck_assert_msg(memcmp(&(float){(float)v},
							     &t->num[row * n + c], 4) == 0,
						      "'%s': %.9g vs %.9g", cell, (float)v,
						      t->num[row * n + c]);
				}
				row++;
			}
		}
		csv_reader_free(r);
		for (size_t c = 0; c < t->ncols; c++)
			ck_assert_int_eq(sum.types[c], t->types[c]);
		csv_summary_release(&sum);
		csv_table_free(t);
#undef NEXT
	}
}
END_TEST

/* 1 when cell (row, col) of t is the text want. */
static int
cell_is(const struct csv_table *t, size_t row, size_t col, const char *want)
{
	size_t n;
	const char *p = csv_table_cell(t, row, col, &n);

	return n == strlen(want) && memcmp(p, want, n) == 0;
}

/*
 * A table's texts, read in place or from the copy of a row with a
 * quote, are the reader's fields: one cell at a time and a row at a
 * time, before and after quoted rows (the reader then reads a copy of
 * the input), with CRLF ends, a CR kept inside a field, a BOM, and a
 * quoted comma in a table of one column.
 */
START_TEST(test_table_texts)
{
	static const char *const in[] = {
		"a,b,c\r\n1,x y,2\r\n\"q,1\",\"he said \"\"hi\"\"\",3\n"
		"4,\"\",5\n6,z\rw,7\n8,,9",
		"\xef\xbb\xbf" "a,b,c\n1,x y,2\n\"q,1\",\"he said \"\"hi\"\"\",3\r\n"
		"4,\"\",5\r\n6,z\rw,7\r\n8,,9\r\n",
	};
	static const char *const want[][3] = {
		{"1", "x y", "2"}, {"q,1", "he said \"hi\"", "3"}, {"4", "", "5"},
		{"6", "z\rw", "7"}, {"8", "", "9"},
	};
	static const char one[] = "h\n\"a,b\"\nc\n\"\"\nd";
	struct csv_table *t;
	struct rba_detail d;

	for (size_t k = 0; k < sizeof(in) / sizeof(in[0]); k++) {
		ck_assert_int_eq(csv_table_load_mem(in[k], strlen(in[k]), "t.csv",
						    &t, &d), 0);
		ck_assert_uint_eq(t->nrows, 5);
		for (size_t r = 0; r < 5; r++) {
			const char *p[3];
			size_t n[3];
			csv_table_row(t, r, p, n);
			for (size_t c = 0; c < 3; c++) {
				ck_assert_msg(cell_is(t, r, c, want[r][c]),
					      "input %zu, cell %zu,%zu", k, r, c);
				ck_assert(n[c] == strlen(want[r][c]) &&
					  memcmp(p[c], want[r][c], n[c]) == 0);
			}
		}
		csv_table_free(t);
	}
	ck_assert_int_eq(csv_table_load_mem(one, strlen(one), "o.csv", &t, &d), 0);
	ck_assert_uint_eq(t->nrows, 4);
	ck_assert(cell_is(t, 0, 0, "a,b"));
	ck_assert(cell_is(t, 1, 0, "c"));
	ck_assert(cell_is(t, 2, 0, ""));
	ck_assert(cell_is(t, 3, 0, "d"));
	csv_table_free(t);
}
END_TEST

/* Missing-value tokens: a numeric column with them reads NaN there. */
START_TEST(test_missing_tokens)
{
	static const char *const tok[] = {"", "NA"};
	const struct csv_missing m = {2, tok};
	const char *in = "a,b,c\n1,x,NA\n,y,2\n3,,4\n";
	struct csv_table *t;
	struct rba_detail d;

	ck_assert_int_eq(csv_table_load_mem_missing(in, strlen(in), "m.csv", &m, &t,
						    &d), 0);
	ck_assert_int_eq(t->types[0], CSV_NUMERIC);
	ck_assert_int_eq(t->types[1], CSV_TEXT); /* text keeps "" as a level */
	ck_assert_int_eq(t->types[2], CSV_NUMERIC);
	ck_assert(isnan(t->num[1 * 3 + 0]));
	ck_assert(isnan(t->num[0 * 3 + 2]));
	ck_assert(t->num[2 * 3 + 2] == 4.0);
	ck_assert(cell_is(t, 0, 2, "NA"));
	csv_table_free(t);
	/* without tokens: as before */
	ck_assert_int_eq(csv_table_load_mem(in, strlen(in), "m.csv", &t, &d),
			 RBA_E_SCHEMA);
	ck_assert_int_eq(csv_is_missing(&m, "NA", 2), 1);
	ck_assert_int_eq(csv_is_missing(&m, "N", 1), 0);
	ck_assert_int_eq(csv_is_missing(NULL, "", 0), 0);
}
END_TEST

START_TEST(test_errors_located)
{
	expect_error("a,b\n1,2\n3\n", RBA_E_SCHEMA, 3, 2, "ragged row");
	expect_error("a,b\n1,2,3\n", RBA_E_SCHEMA, 2, 5, "ragged row");
	expect_error("a,b\n1,NaN\n", RBA_E_RANGE, 2, 3, "non-finite number 'NaN'");
	expect_error("a,b\n1,-inf\n", RBA_E_RANGE, 2, 3, "non-finite");
	expect_error("a,b\n1,1e999\n", RBA_E_RANGE, 2, 3, "non-finite");
	/* Finite as a double, infinite as the float32 a model reads. */
	expect_error("a,b\n1,1e39\n", RBA_E_RANGE, 2, 3,
		     "number '1e39' in column 'b' overflows float32");
	expect_error("a,b\n1,-1e39\n", RBA_E_RANGE, 2, 3, "overflows float32");
	expect_error("a,b\n1,2\n3.5e38,4\n", RBA_E_RANGE, 3, 1,
		     "number '3.5e38' in column 'a' overflows float32");
	expect_error("a,b\n1,340282366920938463463374607431768211456000\n",
		     RBA_E_RANGE, 2, 3, "overflows float32");
	expect_error("a,b\n1,2\n,3\n", RBA_E_SCHEMA, 3, 1, "empty field in numeric column 'a'");
	expect_error("a,b\n1,\"x\n", RBA_E_SYNTAX, 2, 3, "unterminated quoted field");
	expect_error("a,b\n1,x\"y\n", RBA_E_SYNTAX, 2, 4, "stray double quote");
	expect_error("a,b\n1,\"x\"y\n", RBA_E_SYNTAX, 2, 6, "after closing quote");
	expect_error("a,a\n1,2\n", RBA_E_SCHEMA, 1, 3, "duplicate column name 'a'");
	expect_error("a,,c\n1,2,3\n", RBA_E_SCHEMA, 1, 3, "empty column name");
	expect_error("a,b\n1,\xff\n", RBA_E_ENCODING, 2, 3, "invalid UTF-8");
	expect_error("a,b\n1,\xc0\xaf\n", RBA_E_ENCODING, 2, 3, "invalid UTF-8");
	expect_error("a,b\n1,\xed\xa0\x80\n", RBA_E_ENCODING, 2, 3, "invalid UTF-8");
	expect_error("a,b\n", RBA_E_SCHEMA, 2, 1, "no data rows");
	expect_error("", RBA_E_SCHEMA, 1, 1, "empty file");
	/* CR-only line ends: the whole file one record, refused at the
	 * first bare CR of the header by what it is */
	expect_error("a,b,c\r1,2,3\r4,2,6\r", RBA_E_SYNTAX, 1, 6,
		     "a carriage return not followed by a line feed");
	expect_error("\"a\",b\r1,2\r", RBA_E_SYNTAX, 1, 6, "CR-only line ends");
	expect_error("a,b\rc\n1,2\n", RBA_E_SYNTAX, 1, 4, "CR-only line ends");
	/* a field after a quoted line break: its own line and column */
	expect_error("a,\"b\nc\",\"b\nc\"\n1,2,3\n", RBA_E_SCHEMA, 2, 4,
		     "duplicate column name 'b\nc'");
	expect_error("a,b\n\"x\ny\",1e39\n", RBA_E_RANGE, 3, 4, "overflows float32");
}
END_TEST

/* A CR inside quotes is text; CRLF ends lines; a bare CR in a data field
 * stays in it, as stored snapshots always read. */
START_TEST(test_cr_kept)
{
	struct csv_summary s;
	struct rba_detail d;

	ck_assert_int_eq(validate("\"a\rb\",c\r\n1,2\r\n", &s, &d), 0);
	ck_assert_str_eq(s.names[0], "a\rb");
	ck_assert_str_eq(s.names[1], "c");
	ck_assert_uint_eq(s.nrows, 1);
	csv_summary_release(&s);
	ck_assert_int_eq(validate("a,b\nx\ry,2\n", &s, &d), 0);
	ck_assert_uint_eq(s.nrows, 1);
	csv_summary_release(&s);
}
END_TEST

START_TEST(test_valid_utf8_kept)
{
	struct csv_summary s;
	struct rba_detail d;

	ck_assert_int_eq(validate("name,v\nJürgen €,1\n\xf0\x9f\x98\x80,2\n", &s, &d), 0);
	csv_summary_release(&s);
}
END_TEST

START_TEST(test_limits)
{
	size_t big = CSV_MAX_LINE + 10;
	char *text = malloc(big + 8);
	struct csv_summary s;
	struct rba_detail d;

	memcpy(text, "a\n", 2);
	memset(text + 2, 'x', big);
	text[big + 2] = 0;
	ck_assert_int_eq(validate(text, &s, &d), RBA_E_LIMIT);
	ck_assert_uint_eq(d.line, 2);
	/* too many fields */
	memset(text, ',', CSV_MAX_FIELDS + 5);
	text[CSV_MAX_FIELDS + 5] = 0;
	ck_assert_int_eq(validate(text, &s, &d), RBA_E_LIMIT);
	free(text);
}
END_TEST

START_TEST(test_numbers)
{
	double v;

	ck_assert_int_eq(csv_parse_number("12", 2, &v), 0);
	ck_assert(v == 12.0);
	ck_assert_int_eq(csv_parse_number("-0.5", 4, &v), 0);
	ck_assert(v == -0.5);
	ck_assert_int_eq(csv_parse_number(".5e-1", 5, &v), 0);
	ck_assert(v == 0.05);
	ck_assert_int_eq(csv_parse_number("1.", 2, &v), 0);
	ck_assert_int_eq(csv_parse_number("0x10", 4, &v), RBA_E_SYNTAX);
	ck_assert_int_eq(csv_parse_number(" 1", 2, &v), RBA_E_SYNTAX);
	ck_assert_int_eq(csv_parse_number("1e", 2, &v), RBA_E_SYNTAX);
	ck_assert_int_eq(csv_parse_number("1,5", 3, &v), RBA_E_SYNTAX);
	ck_assert_int_eq(csv_parse_number("Infinity", 8, &v), RBA_E_RANGE);
	ck_assert_int_eq(csv_parse_number("+nan", 4, &v), RBA_E_RANGE);
	ck_assert_int_eq(csv_parse_number("", 0, &v), RBA_E_SYNTAX);
	ck_assert(!csv_is_nonfinite_word("info", 4));
	/* zeros keep their sign; the fast path's edges */
	ck_assert_int_eq(csv_parse_number("-0.000", 6, &v), 0);
	ck_assert(v == 0.0 && signbit(v));
	ck_assert_int_eq(csv_parse_number("0e999999999999", 14, &v), 0);
	ck_assert(v == 0.0 && !signbit(v));
	ck_assert_int_eq(csv_parse_number("9007199254740993", 16, &v), 0);
	ck_assert(v == 9007199254740992.0);
	ck_assert_int_eq(csv_parse_number("1e23", 4, &v), 0);
	ck_assert(v == 1e23);
	ck_assert_int_eq(csv_parse_number("1e400", 5, &v), RBA_E_RANGE);
	/* The float32 edge: FLT_MAX and what rounds to it are numbers; from
	 * halfway to 2^128 on, float32 rounds to infinity. */
	ck_assert_int_eq(csv_parse_number("3.4028234663852886e38", 21, &v), 0);
	ck_assert_int_eq(csv_parse_number("-3.4028235e38", 13, &v), 0);
	ck_assert_int_eq(csv_parse_number("3.4028235677973366e38", 21, &v),
			 RBA_E_RANGE);
	ck_assert_int_eq(csv_parse_number("3.4028236e38", 12, &v), RBA_E_RANGE);
	ck_assert_int_eq(csv_parse_number("1e39", 4, &v), RBA_E_RANGE);
	ck_assert_int_eq(csv_parse_number("-1e39", 5, &v), RBA_E_RANGE);
	ck_assert_int_eq(csv_parse_number("1e-50", 5, &v), 0);
}
END_TEST

/*
 * Every number is strtod's, bit for bit: the fast path (a significand
 * below 2^53 scaled by up to 1e22) and the rest, over random texts of
 * every shape the syntax allows, and the numbers printed with %.9g and
 * %.17g that real files hold.
 */
static int
same_as_strtod(const char *t)
{
	double a, b;
	char *end;
	int err = csv_parse_number(t, strlen(t), &a);

	b = strtod(t, &end);
	if (*end != 0)
		return 0;
	/* Beyond float32 (half an ulp over FLT_MAX and on): refused. */
	if (fabs(b) >= 0x1.ffffffp127)
		return err == RBA_E_RANGE;
	return err == 0 && memcmp(&a, &b, sizeof(a)) == 0;
}

START_TEST(test_numbers_exact)
{
	uint64_t x = 0x9E3779B97F4A7C15u;
	char t[96];

	for (int k = 0; k < 300000; k++) {
		size_t n = 0;
		unsigned id, fd;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (x & 1)
			t[n++] = (x & 2) ? '-' : '+';
		id = (unsigned)(x >> 8) % 21;
		fd = (unsigned)(x >> 16) % 21;
		if (id + fd == 0)
			id = 1;
		for (unsigned i = 0; i < id; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			t[n++] = (char)('0' + (i == 0 && (x & 4) ? 0 : x % 10));
		}
		if (fd || (x & 8)) {
			t[n++] = '.';
			for (unsigned i = 0; i < fd; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				t[n++] = (char)('0' + x % 10);
			}
		}
		if (x & 16) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			n += (size_t)snprintf(t + n, sizeof(t) - n, "e%s%d",
					      (x & 1) ? "-" : (x & 2) ? "+" : "",
					      (int)((x >> 4) % 40));
		}
		t[n] = 0;
		ck_assert_msg(same_as_strtod(t), "'%s' differs from strtod", t);
	}
	for (int k = 0; k < 200000; k++) {
		double v;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			continue;
		snprintf(t, sizeof(t), "%.17g", v);
		ck_assert_msg(same_as_strtod(t), "'%s' differs from strtod", t);
		snprintf(t, sizeof(t), "%.9g", (double)(float)((double)(x >> 11) /
								  9007199254740992.0 * 8 - 4));
		ck_assert_msg(same_as_strtod(t), "'%s' differs from strtod", t);
	}
}
END_TEST

START_TEST(test_table_german)
{
	struct csv_table *t;
	struct rba_detail d;
	long c;

	ck_assert_int_eq(csv_table_load(FIXTURES "/german-credit.csv", &t, &d), 0);
	ck_assert_uint_eq(t->nrows, 1000);
	ck_assert_uint_eq(t->ncols, 22);
	c = csv_table_col(t, "checking_status");
	ck_assert_int_eq(c, 1);
	ck_assert_int_eq(t->types[c], CSV_TEXT);
	ck_assert(cell_is(t, 0, (size_t)c, "A11"));
	c = csv_table_col(t, "credit_amount");
	ck_assert_int_eq(t->types[c], CSV_NUMERIC);
	ck_assert(t->num[0 * t->ncols + (size_t)c] == 1169.0);
	ck_assert_uint_eq(t->lines[999], 1001);
	ck_assert_int_eq(csv_table_col(t, "nope"), -1);
	csv_table_free(t);
}
END_TEST

START_TEST(test_table_errors)
{
	struct csv_table *t;
	struct rba_detail d;
	const char *text = "a,b\n1,2\n3,\"x\n";

	ck_assert_int_eq(csv_table_load_mem(text, strlen(text), "m.csv", &t, &d),
			 RBA_E_SYNTAX);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(d.file, "m.csv");
	ck_assert_uint_eq(d.line, 3);
	ck_assert_int_eq(csv_table_load("/nonexistent/x.csv", &t, &d), ENOENT);
	csv_table_free(NULL);
}
END_TEST

static int
tap_count(void *ctx, const uint8_t *p, size_t n)
{
	(void)p;
	*(size_t *)ctx += n;
	return 0;
}

START_TEST(test_stream_file_tap)
{
	char path[] = "/tmp/rba-csv-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct csv_reader *r;
	struct csv_summary s;
	struct rba_detail d;
	size_t tapped = 0;
	long size;

	/* big enough to cross several read blocks, records straddling them */
	fputs("id,x,label\n", f);
	for (int i = 0; i < 60000; i++)
		fprintf(f, "%d,%d.25,\"L%d\"\n", i, i * 7, i % 3);
	size = ftell(f);
	fclose(f);
	ck_assert_int_eq(csv_reader_open(path, "big.csv", &r, &d), 0);
	csv_reader_set_tap(r, tap_count, &tapped);
	ck_assert_int_eq(csv_validate(r, &s, &d), 0);
	ck_assert_uint_eq(s.nrows, 60000);
	ck_assert_int_eq(s.types[1], CSV_NUMERIC);
	ck_assert_int_eq(s.types[2], CSV_TEXT);
	ck_assert_uint_eq(tapped, (size_t)size);
	ck_assert_uint_eq(csv_reader_bytes(r), (uint64_t)size);
	csv_summary_release(&s);
	csv_reader_free(r);
	unlink(path);
}
END_TEST

/*
 * The checker, a record at a time, stops on the error the whole-table
 * load gives, at the same place, and otherwise returns every record and
 * the same column types.
 */
START_TEST(test_checker_as_table)
{
	static const char *const texts[] = {
		"a,b\n1,x\n2,y\n",
		"a,b\n1,2\n3\n",
		"a,b\n1,2\n3,4,5\n",
		"a,b\n,2\n3,4\n1,nan\n",
		"a,b\n,2\n3,4\n",
		"a,b\n,2\nx,4\n",
		"a,b\n",
		"",
		"a,a\n1,2\n",
		"a,,c\n1,2,3\n",
		"a,b\n1,2\n3,\"x\n",
		"a,b\n1,\xff\n",
		"a,b\n1,2\n3,1e39\n",
		"a,b\n1,x\n99999999999999999999999999999999999999999,y\n",
	};

	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		const char *text = texts[k];
		struct csv_table *t;
		struct csv_reader *r;
		struct csv_checker *c = NULL;
		const struct csv_field *f;
		struct rba_detail dt, dc;
		size_t n;
		uint64_t rows = 0;
		int et, ec, rc = 0;

		rba_detail_clear(&dt);
		rba_detail_clear(&dc);
		et = csv_table_load_mem(text, strlen(text), "t.csv", &t, &dt);
		ck_assert_int_eq(csv_reader_open_mem(text, strlen(text), "t.csv", &r), 0);
		ec = csv_checker_start(r, &c, &dc);
		if (ec == 0) {
			while ((rc = csv_checker_next(c, &f, &n, &dc)) == 1)
				rows++;
			ec = rc;
		}
		ck_assert_msg(et == ec, "text %zu: table %d, checker %d", k, et, ec);
		ck_assert_str_eq(dt.reason, dc.reason);
		ck_assert_str_eq(dt.file, dc.file);
		ck_assert_uint_eq(dt.line, dc.line);
		ck_assert_uint_eq(dt.col, dc.col);
		if (et == 0) {
			ck_assert_uint_eq(rows, t->nrows);
			ck_assert_uint_eq(csv_checker_rows(c), t->nrows);
			ck_assert_uint_eq(csv_checker_ncols(c), t->ncols);
			for (size_t i = 0; i < t->ncols; i++) {
				ck_assert_str_eq(csv_checker_name(c, i), t->names[i]);
				ck_assert_int_eq(csv_checker_types(c)[i], t->types[i]);
			}
		}
		csv_checker_free(c);
		csv_reader_free(r);
		csv_table_free(t);
	}
}
END_TEST

/*
 * Records of every width around the eight-byte words the plain splitter
 * reads: each field where it is, at its column, and the checker's
 * numbers those of csv_parse_number.
 */
START_TEST(test_plain_split_widths)
{
	char rec[512];
	uint64_t x = 0x9E3779B97F4A7C15u;

	for (int k = 0; k < 20000; k++) {
		struct csv_reader *r;
		struct csv_checker *c;
		const struct csv_field *f;
		const uint8_t *has;
		const double *num;
		struct rba_detail d;
		size_t n, len = 0, nf = 1 + (size_t)(k % 13), want_at[16],
			  want_n[16];
		len += (size_t)snprintf(rec, sizeof(rec), "a0");
		for (size_t i = 1; i < nf; i++)
			len += (size_t)snprintf(rec + len, sizeof(rec) - len,
						",a%zu", i);
		rec[len++] = '\n';
		for (size_t i = 0; i < nf; i++) {
			size_t w;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			w = (size_t)(x % 19);
			if (i > 0)
				rec[len++] = ',';
			want_at[i] = len;
			want_n[i] = w;
			for (size_t j = 0; j < w; j++)
				rec[len++] = (x >> 60) % 3 == 0 ? (char)('a' + j % 26)
								: (char)('0' + (x >> j) % 10);
		}
		if (k & 1)
			rec[len++] = '\r';
		rec[len++] = '\n';
		rba_detail_clear(&d);
		ck_assert_int_eq(csv_reader_open_mem(rec, len, "w", &r), 0);
		ck_assert_int_eq(csv_checker_start(r, &c, &d), 0);
		ck_assert_int_eq(csv_checker_next(c, &f, &n, &d) < 0 ? 0 : 1, 1);
		if (n == nf) {
			size_t line0 = (size_t)(strchr(rec, '\n') - rec) + 1;
			num = csv_checker_numbers(c, &has);
			for (size_t i = 0; i < nf; i++) {
				double v;
				ck_assert_uint_eq(f[i].n, want_n[i]);
				ck_assert_ptr_eq(f[i].p, rec + want_at[i]);
				ck_assert_uint_eq(f[i].col, want_at[i] - line0 + 1);
				if (has[i]) {
					ck_assert_int_eq(csv_parse_number(f[i].p, f[i].n, &v), 0);
					ck_assert(memcmp(&v, &num[i], sizeof(v)) == 0);
				}
			}
		}
		csv_checker_free(c);
		csv_reader_free(r);
	}
}
END_TEST

/*
 * The checker with missing tokens: a field that is a token is never a
 * parsed number (has 0), whether the token reads as a number the quick
 * steps take ("4", "-999", "12345678", "1.5") or not ("", "NA", "nan"),
 * and every other number is parsed as without tokens.
 */
START_TEST(test_checker_number_tokens)
{
	static const char *const toks[][3] = {
		{ "", "NA", "nan" }, { "4", "", "NA" }, { "-999", "", "x" },
		{ "12345678", "", "x" }, { "1.5", "", "x" },
	};
	static const char *const fields[] = {
		"4", "-999", "12345678", "1.5", "NA", "5", "-998",
		"12345679", "1.25", "7",
	};
	char rec[256];

	for (size_t k = 0; k < sizeof(toks) / sizeof(toks[0]); k++) {
		struct csv_missing m = { 3, toks[k] };
		struct csv_reader *r;
		struct csv_checker *c;
		const struct csv_field *f;
		const uint8_t *has;
		const double *num;
		struct rba_detail d;
		size_t n, len = 0, nf = sizeof(fields) / sizeof(fields[0]);

		for (size_t i = 0; i < nf; i++)
			len += (size_t)snprintf(rec + len, sizeof(rec) - len,
						"%sc%zu", i ? "," : "", i);
		rec[len++] = '\n';
		for (size_t i = 0; i < nf; i++)
			len += (size_t)snprintf(rec + len, sizeof(rec) - len,
						"%s%s", i ? "," : "", fields[i]);
		rec[len++] = '\n';
		rba_detail_clear(&d);
		ck_assert_int_eq(csv_reader_open_mem(rec, len, "t", &r), 0);
		ck_assert_int_eq(csv_checker_start(r, &c, &d), 0);
		csv_checker_set_missing(c, &m);
		ck_assert_int_eq(csv_checker_next(c, &f, &n, &d), 1);
		num = csv_checker_numbers(c, &has);
		for (size_t i = 0; i < nf; i++) {
			double v;
			int tok = csv_is_missing(&m, f[i].p, f[i].n);
			int number = csv_parse_number(f[i].p, f[i].n, &v) == 0;
			if (tok)
				ck_assert_msg(!has[i], "tokens %zu: '%s' is a token, "
					      "read as a number", k, fields[i]);
			else if (number)
				ck_assert_msg(has[i] && memcmp(&v, &num[i], sizeof(v)) == 0,
					      "tokens %zu: '%s' not read as %a", k,
					      fields[i], v);
		}
		csv_checker_free(c);
		csv_reader_free(r);
	}
}
END_TEST

/*
 * The word-at-a-time number path (swar_field) and the byte loop behind
 * it, through the checker and the table, bit for bit strtod's (and, in
 * the table, (float) of strtod's): fields of every short width with a
 * sign, one point or two, leading zeros, -0, blanks, text, exponents
 * and 9 to 25 digits, in records read from memory that ends exactly
 * where the text does (a field within eight bytes of the end takes the
 * byte loop), quoted and CRLF records among them.
 */
static const char *const edge_numbers[] = {
	"0", "-0", "+0", "-0.0", "0.", ".0", "-.0", "0.000", "00000000",
	"-00000000", "99999999", "-99999999", "+99999999", "9999999.9",
	".9999999", "-.9999999", ".00000001", "1.", ".1", "12345678",
	"123456789", "-123456789", "1234567.8", "1.2345678", "0.1", "0.2",
	"0.3", "-1", "+1", "7", "07", "007", "0.5", "2.5e1", "1e5", "1E-5",
	"1234567890123456789", "12345678901234567890", "9007199254740993",
	"9007199254740992", "9007199254740991.5", "0.30000000000000004",
	"4.9e-324", "2.2250738585072011e-308", "2.2250738585072014e-308",
	"1e-45", "1.4e-45", "7e-46", "1.17549435e-38", "3.4028234e38",
	"-3.4028234e38", "1e23", "8.589973e9", "0.0000000000000000000001",
	"123456789012345678901234.5", "1.0000000000000000000000001",
};

/* Whether t (n bytes) is a number csv_parse_number's syntax takes,
 * with strtod's value in *v. */
static int
strtod_n(const char *t, size_t n, double *v)
{
	char buf[128], *end;
	size_t i = 0, dg = 0;

	if (n == 0 || n >= sizeof(buf))
		return 0;
	memcpy(buf, t, n);
	buf[n] = 0;
	if (buf[i] == '-' || buf[i] == '+')
		i++;
	for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		dg++;
	if (i < n && buf[i] == '.')
		for (i++; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
			dg++;
	if (dg == 0)
		return 0;
	if (i < n && (buf[i] == 'e' || buf[i] == 'E')) {
		size_t ed = 0;
		i++;
		if (i < n && (buf[i] == '-' || buf[i] == '+'))
			i++;
		for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
			ed++;
		if (ed == 0)
			return 0;
	}
	if (i != n) /* not hex, nor anything else strtod takes */
		return 0;
	*v = strtod(buf, &end);
	return *end == 0;
}

/* A random short field into t: digits, a sign, points, sometimes text
 * or nothing.  Its length. */
static size_t
random_field(uint64_t *x, char *t)
{
	size_t n = 0, w;

	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	if (*x % 23 == 0)
		return 0; /* blank */
	if (*x % 29 == 0) {
		const char *e = edge_numbers[(*x >> 8) % (sizeof(edge_numbers) /
							  sizeof(*edge_numbers))];
		memcpy(t, e, strlen(e));
		return strlen(e);
	}
	if ((*x >> 5) % 4 == 0)
		t[n++] = (*x >> 7) & 1 ? '-' : '+';
	w = (size_t)((*x >> 9) % 12);
	for (size_t i = 0; i < w; i++) {
		*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
		t[n++] = *x % 11 == 0 ? '.' : *x % 97 == 0 ? 'x' : (char)('0' + (*x >> 3) % 10);
	}
	return n;
}

/*
 * Checks every field of every record of text (len bytes, held in a
 * buffer of exactly that size) through the checker: a number it
 * parsed is strtod's, and every number of a plain syntax it parsed.
 * Returns the records seen.
 */
static size_t
check_numbers_mem(const char *text, size_t len)
{
	char *exact = malloc(len);
	struct csv_reader *r;
	struct csv_checker *c;
	const struct csv_field *f;
	struct rba_detail d;
	size_t n, rows = 0;
	int rc;

	ck_assert_ptr_nonnull(exact);
	memcpy(exact, text, len);
	rba_detail_clear(&d);
	ck_assert_int_eq(csv_reader_open_mem(exact, len, "n.csv", &r), 0);
	ck_assert_int_eq(csv_checker_start(r, &c, &d), 0);
	while ((rc = csv_checker_next(c, &f, &n, &d)) == 1) {
		const uint8_t *has;
		const double *num = csv_checker_numbers(c, &has);
		for (size_t i = 0; i < n; i++) {
			double v;
			int plain = strtod_n(f[i].p, f[i].n, &v);
			if (!has[i])
				continue;
			ck_assert_msg(plain && memcmp(&v, &num[i], sizeof(v)) == 0,
				      "'%.*s' read as %a, strtod %a", (int)f[i].n,
				      f[i].p, num[i], v);
		}
		rows++;
	}
	ck_assert_msg(rc == 0 || rc == RBA_E_RANGE || rc == RBA_E_SCHEMA,
		      "rc %d: %s", rc, d.reason);
	csv_checker_free(c);
	csv_reader_free(r);
	free(exact);
	return rows;
}

START_TEST(test_swar_numbers_checker)
{
	static char text[1 << 16];
	uint64_t x = 0x2545F4914F6CDD1Du;

	for (int k = 0; k < 3000; k++) {
		size_t len = 0, cols = 1 + (size_t)(k % 9), rows = 1 + (size_t)(k % 7);
		for (size_t i = 0; i < cols; i++)
			len += (size_t)sprintf(text + len, i ? ",c%zu" : "c%zu", i);
		text[len++] = '\n';
		for (size_t r = 0; r < rows; r++) {
			int quoted = (k + (int)r) % 5 == 0, crlf = (k + (int)r) % 3 == 0;
			for (size_t i = 0; i < cols; i++) {
				if (i > 0)
					text[len++] = ',';
				if (quoted && i == 0)
					text[len++] = '"';
				len += random_field(&x, text + len);
				if (quoted && i == 0)
					text[len++] = '"';
			}
			if (crlf)
				text[len++] = '\r';
			if (r + 1 < rows || (k & 1))
				text[len++] = '\n';
		}
		check_numbers_mem(text, len);
	}
	/* each edge number alone at the end, and followed by others */
	for (size_t e = 0; e < sizeof(edge_numbers) / sizeof(*edge_numbers); e++) {
		size_t len = (size_t)sprintf(text, "a,b\n%s,%s\n%s,1\n1,%s",
					     edge_numbers[e], edge_numbers[e],
					     edge_numbers[e], edge_numbers[e]);
		ck_assert_uint_eq(check_numbers_mem(text, len), 3);
	}
}
END_TEST

/*
 * The table's float32 numbers over the same kind of fields: (float) of
 * strtod's double, NaN for a blank (the missing token), in columns of
 * numbers only.
 */
START_TEST(test_swar_numbers_table)
{
	static const char *const empty[] = {""};
	const struct csv_missing m = {1, empty};
	static char text[1 << 16];
	uint64_t x = 0x9E3779B97F4A7C15u;

	for (int k = 0; k < 2000; k++) {
		struct csv_table *t;
		struct rba_detail d;
		size_t len = 0, cols = 1 + (size_t)(k % 6), rows = 2 + (size_t)(k % 9);
		char *exact;
		int err;
		for (size_t i = 0; i < cols; i++)
			len += (size_t)sprintf(text + len, i ? ",c%zu" : "c%zu", i);
		text[len++] = '\n';
		for (size_t r = 0; r < rows; r++) {
			for (size_t i = 0; i < cols; i++) {
				char fld[64];
				size_t n;
				double v;
				do
					n = random_field(&x, fld);
				while (n > 0 && !strtod_n(fld, n, &v));
				if (i > 0)
					text[len++] = ',';
				memcpy(text + len, fld, n);
				len += n;
			}
			text[len++] = '\n';
		}
		exact = malloc(len);
		memcpy(exact, text, len);
		rba_detail_clear(&d);
		err = csv_table_load_mem_missing(exact, len, "t.csv", &m, &t, &d);
		if (err == RBA_E_RANGE) { /* an edge number beyond float32 */
			free(exact);
			continue;
		}
		ck_assert_msg(err == 0, "%s", d.reason);
		for (size_t r = 0; r < t->nrows; r++)
			for (size_t i = 0; i < t->ncols; i++) {
				size_t cn;
				const char *cell = csv_table_cell(t, r, i, &cn);
				float got = t->num[r * t->ncols + i], want;
				double v;
				if (t->types[i] != CSV_NUMERIC)
					continue;
				if (cn == 0) {
					ck_assert(isnan(got));
					continue;
				}
				ck_assert(strtod_n(cell, cn, &v));
				want = (float)v;
				ck_assert_msg(memcmp(&got, &want, sizeof(got)) == 0,
					      "'%.*s' as %a, want %a", (int)cn, cell,
					      (double)got, (double)want);
			}
		csv_table_free(t);
		free(exact);
	}
}
END_TEST

/*
 * A file read in blocks: numbers of every width cross the reader's
 * block boundaries (CRLF records among them), and each is strtod's
 * through the checker and in the table.
 */
START_TEST(test_swar_numbers_file_blocks)
{
	char path[] = "/tmp/rba-csvn-XXXXXX";
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w");
	struct csv_reader *r;
	struct csv_checker *c;
	struct csv_table *t;
	const struct csv_field *f;
	struct rba_detail d;
	uint64_t x = 0xD1B54A32D192ED03u;
	size_t n, rows = 0;
	int rc;

	fputs("a,b,c,d\n", fp);
	for (int i = 0; i < 120000; i++) {
		for (int j = 0; j < 4; j++) {
			char fld[64];
			size_t k;
			double v;
			do
				k = random_field(&x, fld);
			while (k == 0 || !strtod_n(fld, k, &v) || fabs(v) > 1e38);
			fld[k] = 0;
			fprintf(fp, j ? ",%s" : "%s", fld);
		}
		fputs(i % 3 ? "\n" : "\r\n", fp);
	}
	fclose(fp);
	rba_detail_clear(&d);
	ck_assert_int_eq(csv_reader_open(path, NULL, &r, &d), 0);
	ck_assert_int_eq(csv_checker_start(r, &c, &d), 0);
	while ((rc = csv_checker_next(c, &f, &n, &d)) == 1) {
		const uint8_t *has;
		const double *num = csv_checker_numbers(c, &has);
		for (size_t i = 0; i < n; i++) {
			double v;
			ck_assert(strtod_n(f[i].p, f[i].n, &v));
			ck_assert_msg(!has[i] || memcmp(&v, &num[i], sizeof(v)) == 0,
				      "'%.*s' at line %lu", (int)f[i].n, f[i].p,
				      csv_reader_line(r));
		}
		rows++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(rows, 120000);
	csv_checker_free(c);
	csv_reader_free(r);
	ck_assert_int_eq(csv_table_load(path, &t, &d), 0);
	for (size_t i = 0; i < t->nrows * t->ncols; i++) {
		size_t cn;
		const char *cell = csv_table_cell(t, i / t->ncols, i % t->ncols, &cn);
		double v;
		float want;
		ck_assert(strtod_n(cell, cn, &v));
		want = (float)v;
		ck_assert_msg(memcmp(&t->num[i], &want, sizeof(want)) == 0,
			      "'%.*s' (cell %zu) as %a, want %a", (int)cn, cell, i,
			      (double)t->num[i], (double)want);
	}
	csv_table_free(t);
	unlink(path);
}
END_TEST

/*
 * fast_record (one pass, 16 bytes at a time) gives way to the general
 * steps on every record it does not take, and their diagnostics stand:
 * long records with a NUL, invalid UTF-8, a stray quote, a quoted
 * field, a bare CR, valid UTF-8, many fields, at every offset.
 */
START_TEST(test_fast_record_gives_way)
{
	static const char *const bad[] = {"\xff", "\xc0\xaf", "", "x\"y"};
	static const int err[] = {RBA_E_ENCODING, RBA_E_ENCODING,
				  RBA_E_ENCODING, RBA_E_SYNTAX};
	char text[512];

	for (size_t b = 0; b < 4; b++)
		for (size_t at = 0; at < 40; at++) {
			struct csv_summary sm;
			struct rba_detail d;
			struct csv_reader *r;
			size_t len = (size_t)sprintf(text, "a,b,c\n1,2,3\n"), k;
			for (k = 0; k < at; k++)
				text[len++] = (char)('0' + k % 10);
			if (b == 2)
				text[len++] = 0;
			else
				len += (size_t)sprintf(text + len, "%s", bad[b]);
			len += (size_t)sprintf(text + len,
					       ",22222222222222222,33333333333333333\n"
					       "4,5,6\n");
			rba_detail_clear(&d);
			ck_assert_int_eq(csv_reader_open_mem(text, len, "t.csv", &r), 0);
			ck_assert_int_eq(csv_validate(r, &sm, &d), err[b]);
			ck_assert_uint_eq(d.line, 3);
			ck_assert_uint_eq(d.col, b == 3 ? at + 2 : at + 1);
			csv_reader_free(r);
		}
	/* valid UTF-8, a bare CR, a quoted field: read as before */
	{
		const char *t = "name,x\n"
				"caf\xc3\xa9 au lait tr\xc3\xa8s chaud,1.5\n"
				"plain text without quotes at all\rx,2\n"
				"\"quoted, with a comma and \"\"quotes\"\"\",3\n"
				"last line long enough for the vector path,4\n";
		struct csv_reader *r;
		const struct csv_field *f;
		struct rba_detail d;
		size_t n;
		ck_assert_int_eq(csv_reader_open_mem(t, strlen(t), "u.csv", &r), 0);
		ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
		ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
		ck_assert_uint_eq(f[0].n, strlen("caf\xc3\xa9 au lait tr\xc3\xa8s chaud"));
		ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
		ck_assert_uint_eq(f[0].n, strlen("plain text without quotes at all\rx"));
		ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
		ck_assert_uint_eq(f[0].n, strlen("quoted, with a comma and \"quotes\""));
		ck_assert_uint_eq(f[1].col, 39);
		ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
		ck_assert_uint_eq(n, 2);
		ck_assert_uint_eq(f[1].n, 1);
		ck_assert_uint_eq(csv_reader_line(r), 5);
		ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 0);
		csv_reader_free(r);
	}
	/* a record just over the length cap, ending in the middle of a
	 * vector with more bytes after it: refused as before; at the cap
	 * it is read */
	for (size_t over = 0; over < 18; over++) {
		size_t rl = CSV_MAX_LINE - 1 + over, len = 0;
		char *big = malloc(rl + 64);
		struct csv_summary sm;
		struct rba_detail d;
		struct csv_reader *r;
		len += (size_t)sprintf(big, "a\n1\n");
		memset(big + len, '7', rl);
		len += rl;
		len += (size_t)sprintf(big + len, "\n2\n3333333333333333333333\n");
		ck_assert_int_eq(csv_reader_open_mem(big, len, "l.csv", &r), 0);
		rba_detail_clear(&d);
		ck_assert_int_eq(csv_validate(r, &sm, &d),
				 rl > CSV_MAX_LINE ? RBA_E_LIMIT : 0);
		if (rl > CSV_MAX_LINE) {
			ck_assert_uint_eq(d.line, 3);
			ck_assert_uint_eq(d.col, 1);
		} else {
			csv_summary_release(&sm);
		}
		csv_reader_free(r);
		free(big);
	}
	/* records of 1 to 300 fields, the field array growing under them */
	for (size_t nf = 1; nf <= 300; nf += 7) {
		struct csv_reader *r;
		const struct csv_field *f;
		struct rba_detail d;
		size_t n;
		{
			char *big = malloc(nf * 8 * 4 + 64);
			size_t bl = 0;
			for (int row = 0; row < 4; row++) {
				for (size_t i = 0; i < nf; i++)
					bl += (size_t)sprintf(big + bl, i ? ",%zu" : "%zu",
							      i * 37 + (size_t)row);
				big[bl++] = row == 2 ? '\r' : '\n';
				if (row == 2)
					big[bl++] = '\n';
			}
			ck_assert_int_eq(csv_reader_open_mem(big, bl, "w.csv", &r), 0);
			for (int row = 0; row < 4; row++) {
				ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 1);
				ck_assert_uint_eq(n, nf);
				for (size_t i = 0; i < nf; i++) {
					char want[32];
					sprintf(want, "%zu", i * 37 + (size_t)row);
					ck_assert_uint_eq(f[i].n, strlen(want));
					ck_assert(memcmp(f[i].p, want, f[i].n) == 0);
					ck_assert_uint_eq(f[i].line, (unsigned long)row + 1);
				}
			}
			ck_assert_int_eq(csv_reader_next(r, &f, &n, &d), 0);
			csv_reader_free(r);
			free(big);
		}
	}
}
END_TEST

Suite *
suite_csv(void)
{
	Suite *s = suite_create("csv");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_quotes_crlf_bom);
	tcase_add_test(tc, test_types_inferred);
	tcase_add_test(tc, test_errors_located);
	tcase_add_test(tc, test_cr_kept);
	tcase_add_test(tc, test_missing_tokens);
	tcase_add_test(tc, test_table_texts);
	tcase_add_test(tc, test_table_matches_checker);
	tcase_add_test(tc, test_valid_utf8_kept);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_numbers_exact);
	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_table_german);
	tcase_add_test(tc, test_table_errors);
	tcase_add_test(tc, test_stream_file_tap);
	tcase_add_test(tc, test_checker_as_table);
	tcase_add_test(tc, test_plain_split_widths);
	tcase_add_test(tc, test_checker_number_tokens);
	tcase_add_test(tc, test_swar_numbers_checker);
	tcase_add_test(tc, test_swar_numbers_table);
	tcase_add_test(tc, test_swar_numbers_file_blocks);
	tcase_add_test(tc, test_fast_record_gives_way);
	suite_add_tcase(s, tc);
	return s;
}
