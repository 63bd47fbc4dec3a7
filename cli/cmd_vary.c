/*
 * cmd_vary.c - vary: rebuild under one controlled change at a time and
 * say which factor changes the artifact (audit/vary.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/vary.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"

static const char *
state_text(const struct vary_run *r)
{
	switch (r->state) {
	case VARY_SAME: return "same";
	case VARY_CHANGES: return "changes the artifact";
	case VARY_FAILS: return "the rebuild fails";
	default: return "not tried";
	}
}

static void
print_report(const struct vary_report *r, int quiet)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	size_t changed = 0, tried = 0;

	for (size_t i = 0; i < r->nruns; i++) {
		changed += r->runs[i].state == VARY_CHANGES || r->runs[i].state == VARY_FAILS;
		tried += r->runs[i].state != VARY_NOT_TRIED;
	}
	if (quiet && changed == 0)
		return;
	fputs("vary ", stdout);
	cli_fput_data(stdout, r->version, strlen(r->version));
	if (changed == 0)
		printf(": no factor changes the artifact (%zu tried, exit 0)\n", tried);
	else
		printf(": %zu of %zu factors change the artifact (exit 1)\n", changed, tried);
	rba_digest_format(&r->control, hex);
	printf("%-18s %s (%s)\n", "control", hex,
	       rba_digest_equal(&r->control, &r->pinned) ? "the pinned artifact"
							 : "not the pinned artifact");
	for (size_t i = 0; i < r->nruns; i++) {
		const struct vary_run *f = &r->runs[i];
		printf("%-18s %s", f->factor, state_text(f));
		if (f->state == VARY_CHANGES && f->scored) {
			printf(": %llu flip%s, largest score difference %.9g",
			       (unsigned long long)f->flips, f->flips == 1 ? "" : "s",
			       f->max_delta);
			if (f->max_delta > 0) {
				fputs(" (case '", stdout);
				cli_fput_data(stdout, f->max_delta_case, strlen(f->max_delta_case));
				fputs("')", stdout);
			}
			printf(" on %llu cases", (unsigned long long)r->cases);
		}
		fputs("\n    ", stdout);
		cli_fput_data(stdout, f->detail, strlen(f->detail));
		fputc('\n', stdout);
	}
	if (r->why_not_scored[0] && changed > 0) {
		fputs("not scored: ", stdout);
		cli_fput_data(stdout, r->why_not_scored, strlen(r->why_not_scored));
		fputc('\n', stdout);
	}
	printf("%-18s %s\n", "recorded", r->run_id);
}

int
cmd_vary(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *version = NULL, *factors = NULL, *val;
	struct vary_report r;
	struct rba_detail d;
	unsigned jobs = 1;
	int err, k;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if ((k = cli_opt_value(argc, argv, &i, "--factors", &val)) != 0) {
			if (k < 0)
				return cli_usage(ctx, "--factors needs a list");
			factors = val;
		} else if ((k = cli_opt_value(argc, argv, &i, "-j", &val)) != 0) {
			char *end;
			unsigned long j;
			if (k < 0)
				return cli_usage(ctx, "-j needs a number");
			j = strtoul(val, &end, 10);
			if (*end || end == val || j < 1 || j > 64)
				return cli_usage(ctx, "-j takes 1 to 64, not '%s'", val);
			jobs = (unsigned)j;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (version == NULL) {
			version = argv[i];
		} else {
			return cli_usage(ctx, "one version at a time");
		}
	}
	if (version == NULL)
		return cli_usage(ctx, "which version?");
	if (cli_store_open(ctx, 0) != 0)
		return 2;
	rba_detail_clear(&d);
	err = vary_version(ctx->store, version, factors, jobs, &r, &d);
	if (err)
		return cli_fail("cannot vary", version, err, &d);
	if (ctx->json) {
		struct rba_buf b;
		rba_buf_init(&b);
		vary_report_json(&r, &b);
		if (cli_json_print(&b) != 0) {
			vary_report_release(&r);
			return 2;
		}
	} else {
		print_report(&r, ctx->quiet);
	}
	k = vary_report_changed(&r);
	vary_report_release(&r);
	return k;
}
