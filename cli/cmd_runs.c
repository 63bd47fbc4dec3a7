/*
 * cmd_runs.c - runs list/show: the run records a store keeps (training
 * runs of train, register and sweeps; sweep and compare records).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "forensics/plot.h"
#include "forensics/records.h"
#include "forensics/sweep.h"
#include "rebuild/runrec.h"
#include "store/store.h"

static int
list_one(void *c, const struct fx_record_entry *e)
{
	const char *ver = e->version ? e->version : "?";

	(void)c;
	switch (e->kind) {
	case FX_RECORD_UNREADABLE:
		printf("%-48s ?\n", e->id);
		break;
	case FX_RECORD_RUN:
		printf("%-48s run    %s seed %.0f val_loss %.6g\n", e->id, ver,
		       e->seed, e->val_loss);
		break;
	case FX_RECORD_SWEEP:
		printf("%-48s sweep  %s %zu seeds\n", e->id, ver, e->seeds);
		break;
	case FX_RECORD_COMPARE:
		printf("%-48s compare %s\n", e->id, e->state);
		break;
	default:
		printf("%-48s %s\n", e->id, e->schema);
		break;
	}
	return 0;
}

/*
 * The same list as one JSON document: {"runs": [{"id", "kind",
 * "schema", "version", and by kind "seed", "val_loss", "seeds" or
 * "state"}, ...]}, built in full before it is printed.
 */
static int
list_one_json(void *c, const struct fx_record_entry *e)
{
	static const char *const kinds[] = { "unreadable", "run", "sweep",
					     "compare", "other" };
	struct rba_json_w *w = c; /* in the open "runs" */

	rba_json_w_open(w, NULL, '{');
	rba_json_w_str(w, "id", e->id);
	rba_json_w_str(w, "kind", (size_t)e->kind < sizeof(kinds) / sizeof(kinds[0])
					  ? kinds[e->kind] : "other");
	rba_json_w_str(w, "schema",
		       e->kind == FX_RECORD_UNREADABLE ? NULL : e->schema);
	rba_json_w_str(w, "version", e->version);
	switch (e->kind) {
	case FX_RECORD_RUN:
		rba_json_w_num(w, "seed", e->seed);
		rba_json_w_num(w, "val_loss", e->val_loss);
		break;
	case FX_RECORD_SWEEP:
		rba_json_w_u64(w, "seeds", e->seeds);
		break;
	case FX_RECORD_COMPARE:
		rba_json_w_str(w, "state", e->state);
		break;
	default:
		break;
	}
	rba_json_w_close(w, '}');
	return 0;
}

static const char *
or_none(const char *s)
{
	return s != NULL && s[0] ? s : "(none)";
}

static void
print_time(const char *label, double t)
{
	char when[RBA_TIME_TEXT_MAX];

	if (t < 0)
		return;
	rba_time_utc((int64_t)t, when);
	printf("  %-17s %s\n", label, when);
}

/* A compare record in words: what was declared, when, and the result. */
static int
compare_show(const char *id, const uint8_t *p, size_t n)
{
	struct fx_compare_summary s;
	struct rba_detail d;

	rba_detail_clear(&d);
	if (fx_compare_summary_parse(p, n, &s, &d) != 0) {
		fx_compare_summary_release(&s);
		return cli_fail("cannot show run", id, RBA_E_CORRUPT, &d);
	}
	printf("compare %s\n", id);
	printf("  status            %s\n", or_none(s.status));
	print_time("declared at", s.declared_at);
	print_time("decided at", s.decided_at);
	printf("  base              %s\n  candidate         %s\n",
	       or_none(s.base), or_none(s.cand));
	printf("  hypothesis        %s\n  success           %s\n",
	       or_none(s.hypothesis), or_none(s.success));
	for (size_t i = 0; i < s.nmetrics; i++)
		printf("  %-17s %s (delta median %+.4g, p = %.4g)\n",
		       or_none(s.metrics[i].metric),
		       or_none(s.metrics[i].finding), s.metrics[i].delta_median,
		       s.metrics[i].p);
	printf("  result            %s\n", or_none(s.verdict));
	fx_compare_summary_release(&s);
	return 0;
}

static int
runs_list(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *version = NULL, *v;
	struct store_txn *txn = NULL;
	struct rba_detail d;
	int r, err;

	for (int i = 2; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--version", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--version needs a name");
			version = v;
		} else {
			return cli_usage(ctx, "unknown argument '%s'", argv[i]);
		}
	}
	if (cli_txn_begin(ctx, 0, 0, "cannot list runs", ctx->store_path, &txn))
		return 2;
	rba_detail_clear(&d);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;

		cli_json_begin(&w, &b);
		rba_json_w_open(&w, "runs", '[');
		err = fx_records_list(txn, version, list_one_json, &w, &d);
		store_txn_abort(txn);
		rba_json_w_close(&w, ']');
		rba_json_w_close(&w, '}');
		if (err == 0 && rba_buf_status(&b) != 0)
			err = RBA_E_NOMEM;
		if (err == 0)
			return cli_json_print(&b);
		rba_buf_release(&b);
	} else {
		err = fx_records_list(txn, version, list_one, NULL, &d);
		store_txn_abort(txn);
	}
	if (err != 0)
		return cli_fail("cannot list runs", ctx->store_path, err, &d);
	return 0;
}

/* A sweep record: its runs, one line each, and the SVG when asked. */
static int
sweep_show(struct cli_ctx *ctx, struct store_txn *txn, const char *id,
	   const char *plot, int force)
{
	struct fx_sweep sw;
	struct rba_detail d;
	int err, status;

	if ((status = cli_sweep_load(ctx, txn, id, &sw)) != 0)
		return status;
	printf("sweep %s: %s at %zu seeds\n", id, sw.pins->version, sw.n);
	for (size_t i = 0; i < sw.n; i++)
		printf("  seed %-6" PRIu64 " %s val_loss %.6g val_acc %.4g\n",
		       sw.seeds[i], sw.ids + i * RUNS_ID_SIZE,
		       sw.runs[i].eval_loss, sw.runs[i].eval_acc);
	rba_detail_clear(&d);
	if (plot && (err = fx_plot_write(plot, &sw, NULL,
					 force ? RBA_OUTPUT_FORCE : 0, &d)))
		status = cli_fail("cannot write plot", plot, err, &d);
	fx_sweep_release(&sw);
	return status;
}

/* A training run's record, and its curves when asked. */
static void
run_show(const char *id, const struct rebuild_runrec *rr, int curve)
{
	char h[RBA_DIGEST_TEXT_LEN + 1];

	printf("run %s\n", id);
	printf("  version           %s\n  seed              %" PRIu64 "\n",
	       rr->version, rr->seed);
	rba_digest_format(&rr->config_hash, h);
	printf("  config hash       %s\n", h);
	rba_digest_format(&rr->eval_fingerprint, h);
	printf("  eval fingerprint  %s\n",
	       rr->has_eval ? h : "(none: a v1 record)");
	printf("  eval contract     %s\n",
	       rr->contract ? rr->contract : "(canonical)");
	rba_digest_format(&rr->snapshot, h);
	printf("  snapshot          %s\n  environment       %s\n"
	       "  code revision     %s\n",
	       h, rr->environment, rr->code_revision);
	printf("  val_loss          %.6g\n  val_acc           %.6g\n",
	       rr->eval_loss, rr->eval_acc);
	if (rr->eval_auc == rr->eval_auc)
		printf("  val_auc           %.6g\n", rr->eval_auc);
	printf("  train_loss        %.6g\n  examples/s        %.4g\n"
	       "  wall              %.3f s\n",
	       rr->final.train_loss, rr->examples_per_second,
	       rr->wall_seconds);
	if (curve)
		cli_curve_print(stdout, rr);
}

static void
put_data(const char *s)
{
	if (s == NULL)
		s = "-";
	cli_fput_data(stdout, s, strlen(s));
}

/*
 * The record of an exec training (rebuild/runrec.h, run-exec/v1) as
 * text: 0 when it was one and was printed, -1 otherwise.
 */
static int
exec_run_show(const char *id, const uint8_t *p, size_t n)
{
	struct rba_json_value v;
	const struct rba_json_value *t, *cmd, *m;
	const char *schema;
	char x[32];

	if (rba_json_parse((const char *)p, n, &v, NULL) != 0)
		return -1;
	schema = rba_json_get_str(&v, "schema");
	t = rba_json_get(&v, "trainer");
	cmd = t != NULL ? rba_json_get(t, "command") : NULL;
	if (schema == NULL || strcmp(schema, RUNREC_EXEC_SCHEMA) != 0 || t == NULL ||
	    cmd == NULL || cmd->type != RBA_JSON_ARRAY) {
		rba_json_release(&v);
		return -1;
	}
	printf("run           %s\n", id);
	printf("version       ");
	put_data(rba_json_get_str(&v, "version"));
	printf("\ntrainer       exec, ");
	put_data(rba_json_get_str(t, "repository"));
	printf(" at commit ");
	put_data(rba_json_get_str(t, "commit"));
	printf(" (tree ");
	put_data(rba_json_get_str(t, "tree"));
	printf(")\ncommand      ");
	for (size_t i = 0; i < cmd->n; i++)
		if (cmd->items[i].type == RBA_JSON_STRING) {
			fputc(' ', stdout);
			put_data(cmd->items[i].str);
		}
	printf("\nsandbox       ");
	put_data(rba_json_get_str(t, "sandbox"));
	printf("\nartifact      ");
	put_data(rba_json_get_str(&v, "artifact"));
	printf("\nexit status   %.0f after %s s\n", rba_json_get_num(&v, "exit_status", NAN),
	       cli_fmt_g6(rba_json_get_num(&v, "seconds", NAN), x));
	m = rba_json_get(&v, "metrics");
	if (m != NULL && m->type == RBA_JSON_OBJECT)
		for (size_t i = 0; i < m->n; i++)
			if (m->items[i].type == RBA_JSON_NUMBER) {
				printf("metric        ");
				put_data(m->keys[i]);
				printf(" %s\n", cli_fmt_g6(m->items[i].num, x));
			}
	rba_json_release(&v);
	return 0;
}

static int
runs_show(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *id = NULL, *plot = NULL, *v;
	int curve = 0, force = 0, r, err, status = 0;
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
		} else if (strcmp(argv[i], "--force") == 0)
			force = 1;
		else if (argv[i][0] == '-')
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
	} else if (fx_record_kind_of((const char *)p) == FX_RECORD_COMPARE) {
		status = compare_show(id, p, n);
	} else if (fx_record_kind_of((const char *)p) == FX_RECORD_SWEEP) {
		status = sweep_show(ctx, txn, id, plot, force);
	} else if (exec_run_show(id, p, n) == 0) {
		/* an exec training's record, printed */
	} else if ((err = rebuild_runrec_parse(p, n, &rr, &d)) == 0) {
		run_show(id, &rr, curve);
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
