/*
 * cmd_compare.c - compare: two pins files at the same seeds (or two
 * stored sweeps), the report of doc/design.md section 8: IDENTITY,
 * CORRECTNESS (paired at shared seeds, against the baseline's noise
 * floor), COST, and the hypothesis and success criterion declared, and
 * kept, before the first run starts.  The record and the decision are
 * forensics/compare.h's; this runs the steps in order and prints.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "forensics/compare.h"
#include "forensics/forensics.h"
#include "forensics/plot.h"
#include "forensics/sweep.h"
#include "store/store.h"

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A comparison on the command line: its options, sweeps and record. */
struct run {
	struct fx_compare c;
	struct cli_fx_opts o;
	const char *plot;
	int plot_flags; /* RBA_OUTPUT_FORCE with --force */
	struct fx_expr *ex;
	struct fx_sweep a, b;
	struct pins *pa, *pb;
	uint64_t *seeds;
	size_t nseeds;
	int declared; /* its record is kept */
};

static int
parse_args(struct cli_ctx *ctx, int argc, char **argv, struct run *u)
{
	const char *args[2] = { NULL, NULL }, *v;
	size_t nargs = 0;
	int r;

	cli_fx_opts_init(&u->o);
	for (int i = 1; i < argc; i++) {
		if ((r = cli_fx_opt(ctx, argc, argv, &i, &u->o)) != 0) {
			if (r != 1)
				return r;
		} else if ((r = cli_opt_value(argc, argv, &i, "--hypothesis", &v)) != 0) {
			if (r < 0 || strlen(v) > FX_MAX_HYPOTHESIS)
				return cli_usage(ctx, "--hypothesis needs a text");
			u->c.hyp = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--success", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--success needs an expression");
			u->c.success = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--alpha", &v)) != 0) {
			char *e;
			u->c.alpha = r < 0 ? -1 : strtod(v, &e);
			if (r < 0 || *e != 0 || !(u->c.alpha > 0 && u->c.alpha < 1))
				return cli_usage(ctx, "--alpha is between 0 and 1");
		} else if ((r = cli_opt_value(argc, argv, &i, "--plot", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--plot needs a file");
			u->plot = v;
		} else if (strcmp(argv[i], "--force") == 0) {
			u->plot_flags = RBA_OUTPUT_FORCE;
		} else if (strcmp(argv[i], "--allow-contract-change") == 0) {
			u->c.allow = 1;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (nargs < 2) {
			args[nargs++] = argv[i];
		} else {
			return cli_usage(ctx, "two things to compare, please");
		}
	}
	if (nargs != 2)
		return cli_usage(ctx, "needs BASE and CAND");
	u->c.base = args[0];
	u->c.cand = args[1];
	u->c.seeds = u->o.seeds;
	return -1;
}

/* Keeps the comparison's record.  0, or 2 after a diagnostic. */
static int
keep(struct cli_ctx *ctx, struct run *u)
{
	struct fx_fault f;
	int err;

	if (cli_store_open(ctx, 0) != 0)
		return 2;
	if ((err = fx_compare_keep(ctx->store, &u->c, &f)) != 0)
		return cli_fx_fail(ctx, &f, err);
	return 0;
}

/* Two pins files: declared and kept before the first run, then both
 * trained at the seeds. */
static int
sweep_pins(struct cli_ctx *ctx, struct run *u)
{
	struct rba_detail d;
	int r;

	rba_detail_clear(&d);
	if (u->o.seeds == NULL)
		return cli_usage(ctx, "comparing pins needs --seeds");
	if (fx_seeds_parse(u->o.seeds, &u->seeds, &u->nseeds, &d))
		return cli_usage(ctx, "--seeds: %s", d.reason);
	if ((r = policy_pins_load(u->c.base, &u->pa, &d)) != 0)
		return cli_fail("invalid pins", u->c.base, r, &d);
	if ((r = policy_pins_load(u->c.cand, &u->pb, &d)) != 0)
		return cli_fail("invalid pins", u->c.cand, r, &d);
	snprintf(u->c.subject, sizeof(u->c.subject), "compare/%s..%s",
		 u->pa->version, u->pb->version);
	if ((r = keep(ctx, u)) != 0)
		return r;
	u->declared = 1;
	if (!ctx->quiet)
		fprintf(stderr, "rebuild-audit: declared '%s' before the first "
				"run\n",
			u->c.id);
	if ((r = cli_sweep_run(ctx, u->pa, u->seeds, u->nseeds, &u->o,
			       "baseline", &u->a)) != 0)
		return r;
	u->c.a = &u->a;
	if ((r = cli_sweep_run(ctx, u->pb, u->seeds, u->nseeds, &u->o,
			       "candidate", &u->b)) != 0)
		return r;
	u->c.b = &u->b;
	return 0;
}

/* Two stored sweeps: read, held to the same size, then declared. */
static int
load_sweeps(struct cli_ctx *ctx, struct run *u)
{
	struct store_txn *txn = NULL;
	struct fx_fault f;
	int r;

	if (u->o.seeds != NULL)
		return cli_usage(ctx, "stored sweeps keep their seeds");
	/* Writable: the comparison's record is kept afterwards. */
	if (cli_store_open(ctx, 0) ||
	    cli_txn_begin(ctx, 0, 0, "cannot compare", u->c.base, &txn))
		return 2;
	r = cli_sweep_load(ctx, txn, u->c.base, &u->a);
	if (r == 0)
		r = cli_sweep_load(ctx, txn, u->c.cand, &u->b);
	store_txn_abort(txn);
	if (r != 0)
		return r;
	u->c.a = &u->a;
	u->c.b = &u->b;
	snprintf(u->c.subject, sizeof(u->c.subject), "compare/%s..%s",
		 u->a.pins->version, u->b.pins->version);
	if ((r = fx_compare_sizes(&u->c, &f)) != 0)
		return cli_fx_fail(ctx, &f, r);
	if ((r = keep(ctx, u)) != 0)
		return r;
	u->declared = 1;
	return 0;
}

static void
metric_line(const struct fx_paired *pr, size_t n)
{
	printf("  %s\n", fx_metric_name(pr->metric));
	printf("    baseline   median %.6g [%.6g..%.6g]  stdev %.4g  spread %.4g\n",
	       pr->base.median, pr->base.min, pr->base.max, pr->base.stdev,
	       pr->base.spread);
	printf("    candidate  median %.6g [%.6g..%.6g]  stdev %.4g\n",
	       pr->cand.median, pr->cand.min, pr->cand.max, pr->cand.stdev);
	printf("    paired     delta median %+.4g mean %+.4g stdev %.4g; "
	       "worse at %u/%zu seeds, better at %u/%zu\n",
	       pr->delta.median, pr->delta.mean, pr->delta.stdev, pr->worse, n,
	       pr->better, n);
	printf("    shift      %+.3g baseline spreads; sign test p = %.4g\n",
	       pr->shift, pr->p);
	printf("    unpaired   median difference %+.4g, stdev %.4g\n",
	       pr->unpaired_diff, pr->unpaired_stdev);
	printf("    finding    %s\n", fx_paired_finding(pr));
}

static const char *
same(int eq)
{
	return eq ? "SAME" : "CHANGED";
}

/* The report of doc/design.md section 8, from a decided comparison. */
static void
report(const struct fx_compare *c)
{
	const struct fx_sweep *a = c->a, *b = c->b;
	size_t n = a->n;
	char when[32];

	printf("compare %s -> %s at %zu paired seeds (%" PRIu64 "..%" PRIu64 ")\n",
	       a->pins->version, b->pins->version, n, a->seeds[0],
	       a->seeds[n - 1]);
	printf("sweeps %s, %s\n\nIDENTITY\n", a->id, b->id);
	printf("  config hash       %s\n",
	       same(rba_digest_equal(&a->config_hash, &b->config_hash)));
	printf("  eval fingerprint  %s%s\n", same(c->fp_same && !c->v1),
	       c->fp_same && !c->v1 ? ""
				    : "  (metrics under two contracts: "
				      "--allow-contract-change)");
	printf("  environment       %s\n",
	       same(strcmp(a->environment, b->environment) == 0));
	printf("  snapshot          %s\n",
	       same(rba_digest_equal(&a->snapshot, &b->snapshot)));
	printf("  code revision     %s\n",
	       same(strcmp(a->runs[0].code_revision, b->runs[0].code_revision) ==
		    0));
	for (size_t i = 0; i < c->nedits; i++)
		printf("  pins %-14s %s -> %s\n", c->edits[i].path,
		       c->edits[i].base, c->edits[i].cand);
	printf("\nCORRECTNESS (candidate - baseline at each seed; a finding "
	       "needs |median delta| > baseline spread and sign test p <= %g)\n",
	       c->alpha);
	for (int m = 0; m < FX_NMETRICS; m++)
		if (m != FX_EPS && c->pr[m].delta.n > 0)
			metric_line(&c->pr[m], n);
	printf("\nCOST\n  examples/s        baseline %.4g, candidate %.4g "
	       "(medians)\n",
	       c->pr[FX_EPS].base.median, c->pr[FX_EPS].cand.median);
	rba_time_utc(c->declared_at, when);
	printf("\nDECLARED BEFORE THE RUN (%s, %s)\n", c->id, when);
	printf("  hypothesis        %s\n", c->hyp && c->hyp[0] ? c->hyp : "(none)");
	printf("  success           %s\n", c->success);
	printf("  result            %s\n", fx_verdict_name(c->verdict));
}

/* Decided, plotted and kept, then told: the exit status of compare. */
static int
decide_and_report(struct cli_ctx *ctx, struct run *u)
{
	struct fx_fault f;
	struct rba_detail d;
	struct rba_buf jb;
	int r, status = 0;

	if ((r = fx_compare_decide(&u->c, u->ex, &f)) != 0) {
		u->c.status = "refused";
		return cli_fx_fail(ctx, &f, r);
	}
	rba_detail_clear(&d);
	if (u->plot != NULL &&
	    (r = fx_plot_write(u->plot, &u->a, &u->b, u->plot_flags, &d)) != 0)
		return cli_fail("cannot write plot", u->plot, r, &d);
	/* Decided and kept before anything is reported. */
	if ((r = keep(ctx, u)) != 0) {
		u->declared = 0;
		return r;
	}
	if (!ctx->json) {
		report(&u->c);
		return u->c.verdict == FX_MET ? 0 : 1;
	}
	rba_buf_init(&jb);
	fx_compare_render(&u->c, &jb);
	if (rba_buf_status(&jb) != 0)
		status = cli_fail("cannot compare", u->c.id, RBA_E_NOMEM, NULL);
	else
		status = cli_json_print(&jb);
	rba_buf_release(&jb);
	if (status != 0)
		return status;
	return u->c.verdict == FX_MET ? 0 : 1;
}

int
cmd_compare(struct cli_ctx *ctx, int argc, char **argv)
{
	struct rba_detail d;
	struct run u;
	int r, status;

	memset(&u, 0, sizeof(u));
	fx_compare_init(&u.c);
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if ((r = parse_args(ctx, argc, argv, &u)) >= 0)
		return r;
	rba_detail_clear(&d);
	if ((r = fx_expr_parse(u.c.success, &u.ex, &d)) != 0)
		return cli_fail("invalid success expression", u.c.success, r, &d);
	/* The plot's path is asked before anything is declared or trained. */
	if (u.plot != NULL &&
	    (r = fx_plot_check(u.plot, u.plot_flags, &d)) != 0) {
		fx_expr_free(u.ex);
		return cli_fail("cannot write plot", u.plot, r, &d);
	}
	if (is_file(u.c.base) || is_file(u.c.cand))
		status = sweep_pins(ctx, &u);
	else
		status = load_sweeps(ctx, &u);
	if (status == 0)
		status = decide_and_report(ctx, &u);
	/* A declaration that could not be decided says so, not "declared". */
	if (status == 2 && u.declared && !u.c.computed) {
		if (strcmp(u.c.status, "refused") != 0)
			u.c.status = "failed";
		(void)keep(ctx, &u);
	}
	fx_compare_release(&u.c);
	fx_sweep_release(&u.a);
	fx_sweep_release(&u.b);
	policy_pins_free(u.pa);
	policy_pins_free(u.pb);
	free(u.seeds);
	fx_expr_free(u.ex);
	return status;
}
