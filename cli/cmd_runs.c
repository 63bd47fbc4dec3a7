/*
 * cmd_runs.c - runs list/show: the run records a store keeps (training
 * runs of train, register and sweeps; sweep and compare records).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/forensics.h"
#include "cli/commands.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "rebuild/runrec.h"
#include "store/store.h"

struct list_ctx {
	const char *version;
	size_t shown;
};

static int
list_one(void *c, const char *id, const uint8_t *p, size_t n)
{
	struct list_ctx *lc = c;
	struct rba_json_value root;
	const char *schema, *ver;

	if (rba_json_parse((const char *)p, n, &root, NULL) != 0) {
		printf("%-48s ?\n", id);
		return 0;
	}
	schema = rba_json_get_str(&root, "schema");
	ver = rba_json_get_str(&root, "version");
	if (schema == NULL)
		schema = "?";
	if (lc->version != NULL && (ver == NULL || strcmp(ver, lc->version))) {
		rba_json_release(&root);
		return 0;
	}
	lc->shown++;
	if (strncmp(schema, "rebuild-audit/run/", 18) == 0) {
		const struct rba_json_value *ev = rba_json_get(&root, "eval");
		const struct rba_json_value *fin = rba_json_get(&root, "final");
		double loss = ev ? rba_json_get_num(ev, "loss", 0)
				 : rba_json_get_num(fin, "val_loss", 0);
		printf("%-48s run    %s seed %.0f val_loss %.6g\n", id,
		       ver ? ver : "?", rba_json_get_num(&root, "seed", 0), loss);
	} else if (strcmp(schema, "rebuild-audit/sweep/v1") == 0) {
		const struct rba_json_value *s = rba_json_get(&root, "seeds");
		printf("%-48s sweep  %s %zu seeds\n", id, ver ? ver : "?",
		       s ? s->n : 0);
	} else if (strncmp(schema, "rebuild-audit/compare/", 22) == 0) {
		const char *vd = rba_json_get_str(&root, "verdict");
		const char *st = rba_json_get_str(&root, "status");
		printf("%-48s compare %s\n", id,
		       vd && vd[0] ? vd
				   : st && strcmp(st, "declared") ? st : "(declared)");
	} else {
		printf("%-48s %s\n", id, schema);
	}
	rba_json_release(&root);
	return 0;
}

static const char *
or_none(const char *s)
{
	return s != NULL && s[0] ? s : "(none)";
}

/* A compare record in words: what was declared, when, and the result. */
static int
compare_show(const char *id, const uint8_t *p, size_t n)
{
	struct rba_json_value root;
	struct rba_detail d;
	const struct rba_json_value *cor;
	char when[RBA_TIME_TEXT_MAX];
	double t;

	rba_detail_clear(&d);
	if (rba_json_parse((const char *)p, n, &root, &d) != 0)
		return cli_fail("cannot show run", id, RBA_E_CORRUPT, &d);
	printf("compare %s\n", id);
	printf("  status            %s\n", or_none(rba_json_get_str(&root, "status")));
	t = rba_json_get_num(&root, "declared_at", -1);
	if (t >= 0) {
		rba_time_utc((int64_t)t, when);
		printf("  declared at       %s\n", when);
	}
	t = rba_json_get_num(&root, "decided_at", -1);
	if (t >= 0) {
		rba_time_utc((int64_t)t, when);
		printf("  decided at        %s\n", when);
	}
	printf("  base              %s\n  candidate         %s\n",
	       or_none(rba_json_get_str(&root, "base")),
	       or_none(rba_json_get_str(&root, "cand")));
	printf("  hypothesis        %s\n  success           %s\n",
	       or_none(rba_json_get_str(&root, "hypothesis")),
	       or_none(rba_json_get_str(&root, "success")));
	cor = rba_json_get(&root, "correctness");
	for (size_t i = 0; cor != NULL && cor->type == RBA_JSON_ARRAY &&
			   i < cor->n; i++) {
		const struct rba_json_value *m = &cor->items[i];
		printf("  %-17s %s (delta median %+.4g, p = %.4g)\n",
		       or_none(rba_json_get_str(m, "metric")),
		       or_none(rba_json_get_str(m, "finding")),
		       rba_json_get_num(rba_json_get(m, "delta"), "median", NAN),
		       rba_json_get_num(m, "p", NAN));
	}
	printf("  result            %s\n",
	       or_none(rba_json_get_str(&root, "verdict")));
	rba_json_release(&root);
	return 0;
}

static int
runs_list(struct cli_ctx *ctx, int argc, char **argv)
{
	struct list_ctx lc = { NULL, 0 };
	struct store_txn *txn = NULL;
	struct rba_detail d;
	const char *v;
	int r, err;

	for (int i = 2; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--version", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--version needs a name");
			lc.version = v;
		} else {
			return cli_usage(ctx, "unknown argument '%s'", argv[i]);
		}
	}
	if (cli_txn_begin(ctx, 0, 0, "cannot list runs", ctx->store_path, &txn))
		return 2;
	rba_detail_clear(&d);
	err = store_run_list(txn, list_one, &lc, &d);
	store_txn_abort(txn);
	if (err != 0)
		return cli_fail("cannot list runs", ctx->store_path, err, &d);
	return 0;
}

static int
runs_show(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *id = NULL, *plot = NULL, *v;
	int curve = 0, r, err, status = 0;
	struct store_txn *txn = NULL;
	struct rba_detail d;
	struct rebuild_runrec rr;
	uint8_t *p = NULL;
	size_t n = 0;

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			ctx->json = 1;
		else if (strcmp(argv[i], "--curve") == 0)
			curve = 1;
		else if ((r = cli_opt_value(argc, argv, &i, "--plot", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--plot needs a file");
			plot = v;
		} else if (argv[i][0] == '-')
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		else if (id == NULL)
			id = argv[i];
		else
			return cli_usage(ctx, "one run id, please");
	}
	if (id == NULL)
		return cli_usage(ctx, "needs a run id");
	if (cli_txn_begin(ctx, 0, 0, "cannot show run", id, &txn))
		return 2;
	rba_detail_clear(&d);
	if ((err = store_run_get(txn, id, &p, &n, &d)) != 0) {
		store_txn_abort(txn);
		return cli_fail("cannot show run", id, err, &d);
	}
	if (ctx->json) {
		fwrite(p, 1, n, stdout);
	} else if (strstr((const char *)p, "\"rebuild-audit/compare/") != NULL) {
		status = compare_show(id, p, n);
	} else if (strstr((const char *)p, "\"rebuild-audit/sweep/v1\"") != NULL) {
		struct cli_sweep sw;
		if ((status = cli_sweep_load(ctx, txn, id, &sw)) == 0) {
			printf("sweep %s: %s at %zu seeds\n", id, sw.pins->version,
			       sw.n);
			for (size_t i = 0; i < sw.n; i++)
				printf("  seed %-6" PRIu64 " %s val_loss %.6g "
				       "val_acc %.4g\n",
				       sw.seeds[i], sw.ids + i * 161,
				       sw.runs[i].eval_loss, sw.runs[i].eval_acc);
			if (plot && (err = cli_plot_svg(plot, &sw, NULL)))
				status = cli_fail("cannot write plot", plot, err,
						  NULL);
			cli_sweep_release(&sw);
		}
	} else if ((err = rebuild_runrec_parse(p, n, &rr, &d)) == 0) {
		char h[RBA_DIGEST_TEXT_LEN + 1];
		printf("run %s\n", id);
		printf("  version           %s\n  seed              %" PRIu64 "\n",
		       rr.version, rr.seed);
		rba_digest_format(&rr.config_hash, h);
		printf("  config hash       %s\n", h);
		rba_digest_format(&rr.eval_fingerprint, h);
		printf("  eval fingerprint  %s\n",
		       rr.has_eval ? h : "(none: a v1 record)");
		printf("  eval contract     %s\n",
		       rr.contract ? rr.contract : "(canonical)");
		rba_digest_format(&rr.snapshot, h);
		printf("  snapshot          %s\n  environment       %s\n"
		       "  code revision     %s\n",
		       h, rr.environment, rr.code_revision);
		printf("  val_loss          %.6g\n  val_acc           %.6g\n",
		       rr.eval_loss, rr.eval_acc);
		if (rr.eval_auc == rr.eval_auc)
			printf("  val_auc           %.6g\n", rr.eval_auc);
		printf("  train_loss        %.6g\n  examples/s        %.4g\n"
		       "  wall              %.3f s\n",
		       rr.final.train_loss, rr.examples_per_second,
		       rr.wall_seconds);
		if (curve)
			cli_curve_print(stdout, &rr);
		rebuild_runrec_release(&rr);
	} else if (err == RBA_E_CORRUPT && !curve) {
		fwrite(p, 1, n, stdout);
	} else {
		status = cli_fail("cannot show run", id, err, &d);
	}
	free(p);
	store_txn_abort(txn);
	return status;
}

int
cmd_runs(struct cli_ctx *ctx, int argc, char **argv)
{
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if (argc < 2)
		return cli_usage(ctx, "needs list or show");
	if (strcmp(argv[1], "list") == 0)
		return runs_list(ctx, argc, argv);
	if (strcmp(argv[1], "show") == 0)
		return runs_show(ctx, argc, argv);
	return cli_usage(ctx, "unknown subcommand '%s'", argv[1]);
}
