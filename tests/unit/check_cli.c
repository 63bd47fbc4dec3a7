/*
 * check_cli.c - the helpers every handler shares (cli/cli_common.c):
 * option values, number parsing, report formats, JSON strings and
 * documents (cli_json_print and the writer's helpers), policy loading
 * and the -h scan.  The handlers themselves are run by the CLI
 * tests (tests/cli/).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "policy/policy.h"
#include "tests/unit/suites.h"

/*
 * Sends stream (stdout or stderr) to a new temporary file named in
 * path[32].  Each test runs in its own forked process, so the stream is
 * not restored.
 */
static void
capture(FILE *stream, char path[32])
{
	int fd;

	snprintf(path, 32, "/tmp/rba-cli-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_ptr_nonnull(freopen(path, "w", stream));
}

/* Flushes stream and returns what the capture file holds (static). */
static const char *
captured(FILE *stream, const char *path)
{
	static char text[1024];
	size_t n;
	FILE *f;

	ck_assert_int_eq(fflush(stream), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	remove(path);
	return text;
}

/* Runs cli_opt_value on argv[*i] of a NULL-terminated argv. */
static int
opt(char **argv, int *i, const char *name, const char **val)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	return cli_opt_value(argc, argv, i, name, val);
}

START_TEST(test_opt_value_forms)
{
	char *sep[] = { "cmd", "--policy", "p.yaml", "rest", NULL };
	char *eq[] = { "cmd", "--policy=p.yaml", NULL };
	char *eq_empty[] = { "cmd", "--policy=", NULL };
	char *shrt[] = { "cmd", "-k", "key", NULL };
	char *glued[] = { "cmd", "-kkey", NULL };
	const char *v = NULL;
	int i;

	i = 1;
	ck_assert_int_eq(opt(sep, &i, "--policy", &v), 1);
	ck_assert_str_eq(v, "p.yaml");
	ck_assert_int_eq(i, 2); /* past the value: the loop's i++ moves on */
	i = 1;
	ck_assert_int_eq(opt(eq, &i, "--policy", &v), 1);
	ck_assert_str_eq(v, "p.yaml");
	ck_assert_int_eq(i, 1);
	i = 1;
	ck_assert_int_eq(opt(eq_empty, &i, "--policy", &v), 1);
	ck_assert_str_eq(v, "");
	i = 1;
	ck_assert_int_eq(opt(shrt, &i, "-k", &v), 1);
	ck_assert_str_eq(v, "key");
	ck_assert_int_eq(i, 2);
	i = 1;
	ck_assert_int_eq(opt(glued, &i, "-k", &v), 1);
	ck_assert_str_eq(v, "key");
	ck_assert_int_eq(i, 1);
}
END_TEST

START_TEST(test_opt_value_other_and_missing)
{
	char *longer[] = { "cmd", "--policyx", "v", NULL };
	char *other[] = { "cmd", "--pins", "v", NULL };
	char *bare[] = { "cmd", "policy", "v", NULL };
	char *last[] = { "cmd", "--policy", NULL };
	char *last_short[] = { "cmd", "-k", NULL };
	const char *v = "unset";
	int i;

	i = 1;
	ck_assert_int_eq(opt(longer, &i, "--policy", &v), 0);
	ck_assert_int_eq(opt(other, &i, "--policy", &v), 0);
	ck_assert_int_eq(opt(bare, &i, "--policy", &v), 0);
	ck_assert_int_eq(i, 1);
	ck_assert_str_eq(v, "unset");
	ck_assert_int_eq(opt(last, &i, "--policy", &v), -1);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(opt(last_short, &i, "-k", &v), -1);
	ck_assert_str_eq(v, "unset");
}
END_TEST

START_TEST(test_parse_u64)
{
	uint64_t u = 7;

	ck_assert_int_eq(cli_parse_u64("0", 10, &u), 0);
	ck_assert_uint_eq(u, 0);
	ck_assert_int_eq(cli_parse_u64("42", 42, &u), 0);
	ck_assert_uint_eq(u, 42);
	ck_assert_int_eq(cli_parse_u64("18446744073709551615", UINT64_MAX, &u), 0);
	ck_assert_uint_eq(u, UINT64_MAX);
	u = 7;
	ck_assert_int_eq(cli_parse_u64("43", 42, &u), -1);
	ck_assert_int_eq(cli_parse_u64("18446744073709551616", UINT64_MAX, &u), -1);
	ck_assert_int_eq(cli_parse_u64("", 10, &u), -1);
	ck_assert_int_eq(cli_parse_u64("-1", 10, &u), -1);
	ck_assert_int_eq(cli_parse_u64("+1", 10, &u), -1);
	ck_assert_int_eq(cli_parse_u64(" 1", 10, &u), -1);
	ck_assert_int_eq(cli_parse_u64("1 ", 10, &u), -1);
	ck_assert_int_eq(cli_parse_u64("1x", 10, &u), -1);
	ck_assert_int_eq(cli_parse_u64("0x1", 10, &u), -1);
	ck_assert_uint_eq(u, 7);
}
END_TEST

START_TEST(test_fmt_size)
{
	char out[32];

	cli_fmt_size(0, out);
	ck_assert_str_eq(out, "0 B");
	cli_fmt_size(10239, out);
	ck_assert_str_eq(out, "10239 B");
	cli_fmt_size(10240, out);
	ck_assert_str_eq(out, "10.0 KiB");
	cli_fmt_size(10485760, out);
	ck_assert_str_eq(out, "10.0 MiB");
	cli_fmt_size(10737418240ull, out);
	ck_assert_str_eq(out, "10240.0 MiB");

	cli_fmt_size_short(812, out);
	ck_assert_str_eq(out, "812B");
	cli_fmt_size_short(10240, out);
	ck_assert_str_eq(out, "10.0K");
	cli_fmt_size_short(10485760, out);
	ck_assert_str_eq(out, "10.0M");
	cli_fmt_size_short(10737418240ull, out);
	ck_assert_str_eq(out, "10.0G");
	cli_fmt_size_short(UINT64_MAX, out);
	ck_assert_str_eq(out, "17179869184.0G");
}
END_TEST

START_TEST(test_fmt_g6_and_time)
{
	char out[32];

	ck_assert_str_eq(cli_fmt_g6(0.1234567, out), "0.123457");
	ck_assert_str_eq(cli_fmt_g6(1e-9, out), "1e-09");
	ck_assert_str_eq(cli_fmt_g6(-2.0, out), "-2");
	rba_time_utc(0, out);
	ck_assert_str_eq(out, "1970-01-01T00:00:00Z");
	rba_time_utc(1795939200, out);
	ck_assert_str_eq(out, "2026-11-29T08:00:00Z");
}
END_TEST

START_TEST(test_digest_short)
{
	struct rba_digest dg;
	char out[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_bytes("", 0, &dg);
	ck_assert_str_eq(cli_digest_short(&dg, 0, out), "sha256:e3b0c44298fc1c14");
	ck_assert_str_eq(cli_digest_short(&dg, 1, out),
			 "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

START_TEST(test_json_str)
{
	struct rba_buf b;

	rba_buf_init(&b);
	rba_json_put_str(&b, "a\"b\\c\n\r\t\x01\x1f\x7f\xc3\xa9");
	rba_json_put_str(&b, "");
	ck_assert_str_eq(rba_buf_cstr(&b),
			 "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u001f\x7f\xc3\xa9\"\"\"");
	rba_buf_release(&b);
}
END_TEST

/* A document through the compact writer, then on stdout with its
 * newline; the buffer is released. */
START_TEST(test_json_print)
{
	struct rba_buf b;
	struct rba_json_w w;
	char path[32];

	rba_buf_init(&b);
	rba_json_w_init(&w, &b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "a", "x\"y");
	rba_json_w_str(&w, "b", NULL);
	rba_json_w_close(&w, '}');
	capture(stdout, path);
	ck_assert_int_eq(cli_json_print(&b), 0);
	ck_assert_ptr_null(b.p);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(captured(stdout, path), "{\"a\": \"x\\\"y\", \"b\": null}\n");
}
END_TEST

/* A buffer that could not hold the document: nothing on stdout, 2 and
 * one diagnostic. */
START_TEST(test_json_print_nomem)
{
	struct rba_buf b;
	char out[32], err[32];

	rba_buf_init(&b);
	rba_buf_put(&b, "{}", 2);
	b.oom = 1;
	capture(stdout, out);
	capture(stderr, err);
	ck_assert_int_eq(cli_json_print(&b), 2);
	ck_assert_str_eq(captured(stdout, out), "");
	ck_assert_str_eq(captured(stderr, err),
			 "rebuild-audit: cannot write 'stdout': out of memory\n");
}
END_TEST

/* A listing one item a line, and members laid out on lines of their
 * own: the separator is the caller's, each writer writes none, and the
 * brackets' writer writes none when it closes. */
START_TEST(test_json_w_sep)
{
	struct rba_buf b;
	struct rba_json_w list, w;

	rba_buf_init(&b);
	rba_json_w_init(&list, &b);
	rba_json_w_open(&list, NULL, '[');
	for (size_t i = 0; i < 3; i++) {
		cli_json_w_sep(&w, &b, i ? ",\n " : "");
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_u64(&w, "id", i);
		rba_json_w_bool(&w, "odd", i % 2);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&list, ']');
	cli_json_w_sep(&w, &b, "\n  ");
	rba_json_w_bool(&w, "clean", 1);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	ck_assert_str_eq(rba_buf_cstr(&b),
			 "[{\"id\": 0, \"odd\": false},\n {\"id\": 1, \"odd\": true},\n"
			 " {\"id\": 2, \"odd\": false}]\n  \"clean\": true");
	rba_buf_release(&b);
}
END_TEST

/* A number in a fixed format, as a member and as an item. */
START_TEST(test_json_w_fmt)
{
	struct rba_buf b;
	struct rba_json_w w;

	rba_buf_init(&b);
	rba_json_w_init(&w, &b);
	rba_json_w_open(&w, NULL, '{');
	cli_json_w_fmt(&w, "cost", "%.17g", 0.1);
	rba_json_w_open(&w, "load", '[');
	cli_json_w_fmt(&w, NULL, "%.17g", 2.5);
	cli_json_w_fmt(&w, NULL, "%.17g", 0.0);
	rba_json_w_close(&w, ']');
	rba_json_w_close(&w, '}');
	ck_assert_int_eq(rba_buf_status(&b), 0);
	ck_assert_str_eq(rba_buf_cstr(&b),
			 "{\"cost\": 0.10000000000000001, \"load\": [2.5, 0]}");
	rba_buf_release(&b);
}
END_TEST

START_TEST(test_policy_load)
{
	struct policy *pol = (struct policy *)&pol;
	char path[32];

	ck_assert_int_eq(cli_policy_load(NULL, &pol), 0);
	ck_assert_ptr_null(pol);
	ck_assert_int_eq(cli_policy_load(FIXTURES "/policy/credit.yaml", &pol), 0);
	ck_assert_ptr_nonnull(pol);
	policy_free(pol);

	/* A bad file: 2, nothing returned, and one diagnostic on stderr. */
	capture(stderr, path);
	ck_assert_int_eq(cli_policy_load(FIXTURES "/invalid/policy-alias.yaml", &pol), 2);
	ck_assert_ptr_null(pol);
	ck_assert_str_eq(captured(stderr, path),
			 "rebuild-audit: invalid policy '" FIXTURES
			 "/invalid/policy-alias.yaml:4:7': anchors and "
			 "aliases are not allowed\n");
}
END_TEST

START_TEST(test_wants_help)
{
	static const struct cli_command row = { "demo", NULL, "demo FILE\ndemo --all",
						"a row for the test" };
	struct cli_ctx ctx;
	char *plain[] = { "demo", "a", "-x", NULL };
	char *help[] = { "demo", "a", "-h", NULL };
	char *longhelp[] = { "demo", "--help", NULL };
	char *after[] = { "demo", "--", "-h", NULL };
	char path[32];

	memset(&ctx, 0, sizeof(ctx));
	ctx.cmd = &row;
	capture(stdout, path);
	ck_assert_int_eq(cli_wants_help(&ctx, 3, plain), 0);
	ck_assert_int_eq(cli_wants_help(&ctx, 3, after), 0);
	ck_assert_int_eq(cli_wants_help(&ctx, 3, help), 1);
	ck_assert_int_eq(cli_wants_help(&ctx, 2, longhelp), 1);
	ck_assert_str_eq(captured(stdout, path),
			 "usage: rebuild-audit demo FILE\n"
			 "       rebuild-audit demo --all\n"
			 "a row for the test\n"
			 "usage: rebuild-audit demo FILE\n"
			 "       rebuild-audit demo --all\n"
			 "a row for the test\n");
}
END_TEST

Suite *
suite_cli(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("common");

	tcase_add_test(tc, test_opt_value_forms);
	tcase_add_test(tc, test_opt_value_other_and_missing);
	tcase_add_test(tc, test_parse_u64);
	tcase_add_test(tc, test_fmt_size);
	tcase_add_test(tc, test_fmt_g6_and_time);
	tcase_add_test(tc, test_digest_short);
	tcase_add_test(tc, test_json_str);
	tcase_add_test(tc, test_json_print);
	tcase_add_test(tc, test_json_print_nomem);
	tcase_add_test(tc, test_json_w_sep);
	tcase_add_test(tc, test_json_w_fmt);
	tcase_add_test(tc, test_policy_load);
	tcase_add_test(tc, test_wants_help);
	suite_add_tcase(s, tc);
	return s;
}
