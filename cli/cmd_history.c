/*
 * cmd_history.c - history: past audits, newest first; --verify checks the
 * hash chain.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "cli/commands.h"
#include "store/store.h"

struct hist {
	struct cli_ctx *ctx;
	size_t n;
};

static int
hist_one(void *vctx, const struct store_history_entry *e)
{
	struct hist *h = vctx;
	struct rba_json_value root;
	char when[32], prev[RBA_DIGEST_TEXT_LEN + 1], dg[RBA_DIGEST_TEXT_LEN + 1];
	int parsed = rba_json_parse((const char *)e->record, e->len, &root, NULL) == 0;

	rba_time_utc(e->time, when);
	if (h->ctx->json) {
		rba_digest_format(&e->prev, prev);
		rba_digest_format(&e->digest, dg);
		printf("%s{\"id\": %llu, \"time\": \"%s\", \"version\": ",
		       h->n ? ",\n " : "", (unsigned long long)e->id, when);
		rba_json_fput_str(stdout, e->version);
		printf(", \"prev\": \"%s\", \"digest\": \"%s\", \"record\": ", prev, dg);
		if (parsed) {
			fwrite(e->record, 1, e->len, stdout);
		} else {
			/* Not this tool's JSON: shown as text, never as JSON. */
			char *t = strndup((const char *)e->record, e->len);
			rba_json_fput_str(stdout, t ? t : "");
			free(t);
		}
		fputc('}', stdout);
	} else {
		const struct rba_json_value *s = parsed ? rba_json_get(&root, "sample") : NULL;
		const char *v = parsed ? rba_json_get_str(&root, "verdict") : NULL;
		char n1[32];
		if (h->n == 0)
			printf("%-6s %-20s  %-24s %-18s %8s %8s  %s\n", "ID", "TIME",
			       "VERSION", "VERDICT", "CASES", "FLIPS", "MAX DELTA");
		double cases = rba_json_get_num(s, "cases", NAN);
		double flips = rba_json_get_num(s, "flips", NAN);
		double delta = rba_json_get_num(s, "max_score_delta", NAN);
		int measured = v != NULL && strcmp(v, "not-measured") != 0;
		char c1[32] = "-", c2[32] = "-";
		if (measured && isfinite(cases))
			snprintf(c1, sizeof(c1), "%.0f", cases);
		if (measured && isfinite(flips))
			snprintf(c2, sizeof(c2), "%.0f", flips);
		printf("%-6llu %-20s  %-24s %-18s %8s %8s  %s\n",
		       (unsigned long long)e->id, when, e->version, v ? v : "?", c1, c2,
		       measured && isfinite(delta) ? cli_fmt_g6(delta, n1) : "-");
	}
	if (parsed)
		rba_json_release(&root);
	h->n++;
	return 0;
}

int
cmd_history(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verify", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct store_txn *txn;
	struct rba_detail d;
	struct hist h = { ctx, 0 };
	const char *version = NULL;
	int c, verify = 0, err;

	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'v': verify = 1; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (argc - optind > 1 || (verify && argc - optind == 1))
		return cli_usage(ctx, verify ? "--verify checks the whole history: no VERSION"
					     : "history takes at most one VERSION");
	if (argc - optind == 1)
		version = argv[optind];
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot read history", ctx->store_path,
				 &txn)) != 0)
		return err;
	rba_detail_clear(&d);
	if (verify) {
		uint64_t bad = 0, count = 0;
		err = store_history_verify(txn, &bad, &count, &d);
		store_txn_abort(txn);
		if (err == RBA_E_TAMPERED) {
			if (ctx->json) {
				printf("{\"intact\": false, \"records\": %llu, "
				       "\"first_bad\": %llu, \"reason\": ",
				       (unsigned long long)count, (unsigned long long)bad);
				rba_json_fput_str(stdout, d.reason);
				fputs("}\n", stdout);
			} else {
				printf("history broken at record %llu: %s\n",
				       (unsigned long long)bad, d.reason);
			}
			return 1;
		}
		if (err)
			return cli_fail("cannot verify history", ctx->store_path, err, &d);
		if (ctx->json)
			printf("{\"intact\": true, \"records\": %llu, \"first_bad\": null}\n",
			       (unsigned long long)count);
		else if (!ctx->quiet)
			printf("history intact: %llu record%s\n", (unsigned long long)count,
			       count == 1 ? "" : "s");
		return 0;
	}
	if (ctx->json)
		fputc('[', stdout);
	err = store_history_list(txn, version, 1, hist_one, &h, &d);
	store_txn_abort(txn);
	if (ctx->json)
		fputs("]\n", stdout);
	if (err)
		return cli_fail("cannot read history", version ? version : ctx->store_path,
				err, &d);
	if (h.n == 0 && !ctx->json && !ctx->quiet)
		printf("no audits recorded%s%s\n", version ? " for " : "",
		       version ? version : "");
	return 0;
}
