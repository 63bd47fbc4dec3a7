/*
 * cmd_compare.c - compare: two pins files at the same seeds (or two
 * stored sweeps), the report of doc/design.md section 8: IDENTITY, CORRECTNESS (paired
 * at shared seeds, against the baseline's noise floor), COST, and the
 * hypothesis and success criterion declared, and kept, before the first
 * run starts.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "forensics/forensics.h"
#include "rebuild/runs.h"
#include "cli/commands.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "rebuild/envrec.h"
#include "store/store.h"

#define DEFAULT_SUCCESS "val_loss.median < 0"

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * One comparison: what was declared before the first run, the two
 * sweeps, and once decided the paired statistics and the verdict.  The
 * same document is the record kept under id and what --json prints.
 */
struct cmp {
	char id[RUNS_ID_SIZE];
	char subject[300];
	const char *hyp, *success, *seeds, *base, *cand;
	double alpha;
	int allow;
	int64_t declared_at, decided_at;
	const char *status; /* declared, decided, refused, failed */
	const struct cli_sweep *a, *b;
	int computed;
	int fp_same, v1;
	struct fx_paired pr[FX_NMETRICS];
	struct fx_edit *edits;
	size_t nedits;
	enum fx_verdict verdict;
};

static const char *
same(int eq)
{
	return eq ? "SAME" : "CHANGED";
}

static const char *
finding(const struct fx_paired *pr)
{
	return !pr->resolved ? "NOT RESOLVED"
			     : pr->direction > 0 ? "better" : "worse";
}

static void
json_stat(struct rba_json_pretty *w, const char *key, const struct fx_stat *s,
	  int spread)
{
	rba_json_pretty_open(w, key, '{');
	rba_json_pretty_num(w, "median", s->median);
	rba_json_pretty_num(w, "mean", s->mean);
	rba_json_pretty_num(w, "stdev", s->stdev);
	rba_json_pretty_num(w, "min", s->min);
	rba_json_pretty_num(w, "max", s->max);
	if (spread)
		rba_json_pretty_num(w, "spread", s->spread);
	rba_json_pretty_close(w, '}');
}

/* The comparison as a rebuild-audit/compare/v2 document (no newline). */
static void
render(const struct cmp *c, struct rba_buf *b)
{
	struct rba_json_pretty w;
	char h[RBA_DIGEST_TEXT_LEN + 1];

	rba_json_pretty_init(&w, b);
	rba_json_pretty_open(&w, NULL, '{');
	rba_json_pretty_str(&w, "schema", "rebuild-audit/compare/v2");
	rba_json_pretty_str(&w, "id", c->id);
	rba_json_pretty_str(&w, "status", c->status);
	rba_json_pretty_num(&w, "declared_at", (double)c->declared_at);
	if (c->decided_at)
		rba_json_pretty_num(&w, "decided_at", (double)c->decided_at);
	else
		rba_json_pretty_str(&w, "decided_at", NULL);
	rba_json_pretty_str(&w, "hypothesis", c->hyp ? c->hyp : "");
	rba_json_pretty_str(&w, "success", c->success);
	rba_json_pretty_num(&w, "alpha", c->alpha);
	rba_json_pretty_str(&w, "seeds", c->seeds);
	rba_json_pretty_str(&w, "base", c->base);
	rba_json_pretty_str(&w, "cand", c->cand);
	rba_json_pretty_str(&w, "base_sweep", c->a ? c->a->id : NULL);
	rba_json_pretty_str(&w, "cand_sweep", c->b ? c->b->id : NULL);
	if (c->computed) {
		const struct cli_sweep *a = c->a, *bb = c->b;
		rba_json_pretty_open(&w, "identity", '{');
		rba_json_pretty_str(&w, "config_hash",
				    same(rba_digest_equal(&a->config_hash,
							  &bb->config_hash)));
		rba_json_pretty_str(&w, "eval_fingerprint",
				    same(c->fp_same && !c->v1));
		rba_digest_format(&a->eval_fingerprint, h);
		rba_json_pretty_str(&w, "base_eval_fingerprint",
				    a->runs[0].has_eval ? h : NULL);
		rba_digest_format(&bb->eval_fingerprint, h);
		rba_json_pretty_str(&w, "cand_eval_fingerprint",
				    bb->runs[0].has_eval ? h : NULL);
		rba_json_pretty_bool(&w, "contract_change_allowed", c->allow);
		rba_json_pretty_str(&w, "environment",
				    same(strcmp(a->environment,
						bb->environment) == 0));
		rba_json_pretty_str(&w, "snapshot",
				    same(rba_digest_equal(&a->snapshot,
							  &bb->snapshot)));
		rba_json_pretty_str(&w, "code_revision",
				    same(strcmp(a->runs[0].code_revision,
						bb->runs[0].code_revision) == 0));
		rba_json_pretty_open(&w, "edits", '[');
		for (size_t i = 0; i < c->nedits; i++) {
			rba_json_pretty_open(&w, NULL, '{');
			rba_json_pretty_str(&w, "path", c->edits[i].path);
			rba_json_pretty_str(&w, "base", c->edits[i].base);
			rba_json_pretty_str(&w, "cand", c->edits[i].cand);
			rba_json_pretty_close(&w, '}');
		}
		rba_json_pretty_close(&w, ']');
		rba_json_pretty_close(&w, '}');
		rba_json_pretty_open(&w, "correctness", '[');
		for (int m = 0; m < FX_NMETRICS; m++) {
			const struct fx_paired *pr = &c->pr[m];
			if (m == FX_EPS || pr->delta.n == 0)
				continue;
			rba_json_pretty_open(&w, NULL, '{');
			rba_json_pretty_str(&w, "metric", fx_metric_name(pr->metric));
			json_stat(&w, "baseline", &pr->base, 1);
			json_stat(&w, "candidate", &pr->cand, 1);
			json_stat(&w, "delta", &pr->delta, 0);
			rba_json_pretty_num(&w, "seeds", (double)a->n);
			rba_json_pretty_num(&w, "worse", pr->worse);
			rba_json_pretty_num(&w, "better", pr->better);
			rba_json_pretty_num(&w, "ties", pr->ties);
			rba_json_pretty_num(&w, "shift", pr->shift);
			rba_json_pretty_num(&w, "p", pr->p);
			rba_json_pretty_num(&w, "unpaired_diff", pr->unpaired_diff);
			rba_json_pretty_num(&w, "unpaired_stdev",
					    pr->unpaired_stdev);
			rba_json_pretty_str(&w, "finding", finding(pr));
			rba_json_pretty_close(&w, '}');
		}
		rba_json_pretty_close(&w, ']');
		rba_json_pretty_open(&w, "cost", '{');
		rba_json_pretty_num(&w, "base_examples_per_second",
				    c->pr[FX_EPS].base.median);
		rba_json_pretty_num(&w, "cand_examples_per_second",
				    c->pr[FX_EPS].cand.median);
		rba_json_pretty_close(&w, '}');
		rba_json_pretty_str(&w, "verdict", fx_verdict_name(c->verdict));
	} else {
		rba_json_pretty_str(&w, "verdict", NULL);
	}
	rba_json_pretty_close(&w, '}');
}

/*
 * Keeps the comparison's document under c->id (a fresh id the first
 * time, taken then with the declaration time).  0, or 2 after a
 * diagnostic.
 */
static int
keep_record(struct cli_ctx *ctx, struct cmp *c)
{
	struct store_txn *txn = NULL;
	struct rba_detail d;
	struct rba_buf b;
	int err = 0;

	rba_detail_clear(&d);
	if (cli_txn_begin(ctx, 1, 1u << 16, "cannot keep comparison",
			  ctx->store_path, &txn))
		return 2;
	if (c->id[0] == 0) {
		c->declared_at = (int64_t)time(NULL);
		err = runs_id_new(txn, c->subject, c->declared_at, c->id, &d);
	}
	rba_buf_init(&b);
	render(c, &b);
	rba_buf_put_u8(&b, '\n');
	if (err == 0)
		err = rba_buf_status(&b);
	if (err == 0)
		err = store_run_put(txn, c->id, b.p, b.len, &d);
	if (err == 0)
		err = store_txn_commit(txn, &d);
	else
		store_txn_abort(txn);
	rba_buf_release(&b);
	if (err != 0)
		return cli_fail("cannot keep comparison",
				c->id[0] ? c->id : c->subject, err, &d);
	return 0;
}

/*
 * Pairs the sweeps and decides.  0; 2 after a diagnostic when they
 * cannot be paired or the evaluation contract changed unallowed.
 */
static int
decide(struct cmp *c, const struct fx_expr *ex)
{
	const struct cli_sweep *a = c->a, *b = c->b;
	size_t n = a->n;
	struct rba_detail d;

	rba_detail_clear(&d);
	for (size_t i = 0; i < n; i++)
		if (a->seeds[i] != b->seeds[i]) {
			rba_fail(&d, RBA_E_USAGE, NULL, 0, 0,
				 "the two sweeps are not at the same seeds: "
				 "nothing to pair");
			return cli_fail("cannot compare", b->id, RBA_E_USAGE, &d);
		}
	c->fp_same = rba_digest_equal(&a->eval_fingerprint, &b->eval_fingerprint);
	c->v1 = !a->runs[0].has_eval || !b->runs[0].has_eval;
	if ((!c->fp_same || c->v1) && !c->allow) {
		rba_fail(&d, RBA_E_USAGE, NULL, 0, 0,
			 "the evaluation contract changed (eval fingerprint "
			 "%s); give --allow-contract-change to compare anyway",
			 c->v1 ? "unknown" : "differs");
		return cli_fail("refusing to compare", b->id, RBA_E_USAGE, &d);
	}
	if (fx_edits(a->pins, b->pins, &c->edits, &c->nedits, &d) != 0)
		c->nedits = 0;
	for (int m = 0; m < FX_NMETRICS; m++) {
		double *x = calloc(n, sizeof(double)), *y = calloc(n, sizeof(double));
		if (x == NULL || y == NULL) {
			free(x);
			free(y);
			return cli_fail("cannot compare", b->id, RBA_E_NOMEM, NULL);
		}
		for (size_t i = 0; i < n; i++) {
			x[i] = fx_metric_of(&a->runs[i], (enum fx_metric)m);
			y[i] = fx_metric_of(&b->runs[i], (enum fx_metric)m);
		}
		fx_paired_compute((enum fx_metric)m, x, y, n, c->alpha, &c->pr[m]);
		free(x);
		free(y);
	}
	c->verdict = fx_verdict_decide(ex, c->pr);
	c->computed = 1;
	c->status = "decided";
	c->decided_at = (int64_t)time(NULL);
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
	printf("    finding    %s\n", finding(pr));
}

/* The report of doc/design.md section 8, from a decided comparison. */
static void
report(const struct cmp *c)
{
	const struct cli_sweep *a = c->a, *b = c->b;
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

int
cmd_compare(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *args[2] = { NULL, NULL }, *plot = NULL, *v;
	size_t nargs = 0, nseeds = 0;
	uint64_t *seeds = NULL;
	struct cli_fx_opts o;
	int r, status = 2, declared = 0;
	struct fx_expr *ex = NULL;
	struct rba_detail d;
	struct cli_sweep a, b;
	struct pins *pa = NULL, *pb = NULL;
	struct cmp c;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	c.success = DEFAULT_SUCCESS;
	c.alpha = FX_ALPHA_DEFAULT;
	c.status = "declared";
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	cli_fx_opts_init(&o);
	for (int i = 1; i < argc; i++) {
		if ((r = cli_fx_opt(ctx, argc, argv, &i, &o)) != 0) {
			if (r != 1)
				return r;
		} else if ((r = cli_opt_value(argc, argv, &i, "--hypothesis", &v)) != 0) {
			if (r < 0 || strlen(v) > FX_MAX_HYPOTHESIS)
				return cli_usage(ctx, "--hypothesis needs a text");
			c.hyp = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--success", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--success needs an expression");
			c.success = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--alpha", &v)) != 0) {
			char *e;
			c.alpha = r < 0 ? -1 : strtod(v, &e);
			if (r < 0 || *e != 0 || !(c.alpha > 0 && c.alpha < 1))
				return cli_usage(ctx, "--alpha is between 0 and 1");
		} else if ((r = cli_opt_value(argc, argv, &i, "--plot", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--plot needs a file");
			plot = v;
		} else if (strcmp(argv[i], "--allow-contract-change") == 0) {
			c.allow = 1;
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
	c.base = args[0];
	c.cand = args[1];
	c.seeds = o.seeds;
	rba_detail_clear(&d);
	if ((r = fx_expr_parse(c.success, &ex, &d)) != 0)
		return cli_fail("invalid success expression", c.success, r, &d);
	if (is_file(args[0]) || is_file(args[1])) {
		if (o.seeds == NULL) {
			fx_expr_free(ex);
			return cli_usage(ctx, "comparing pins needs --seeds");
		}
		if (fx_seeds_parse(o.seeds, &seeds, &nseeds, &d)) {
			fx_expr_free(ex);
			return cli_usage(ctx, "--seeds: %s", d.reason);
		}
		if ((r = policy_pins_load(args[0], &pa, &d)) != 0) {
			status = cli_fail("invalid pins", args[0], r, &d);
			goto done;
		}
		if ((r = policy_pins_load(args[1], &pb, &d)) != 0) {
			status = cli_fail("invalid pins", args[1], r, &d);
			goto done;
		}
		snprintf(c.subject, sizeof(c.subject), "compare/%s..%s",
			 pa->version, pb->version);
		/* The declaration is kept before the first run starts. */
		if ((status = keep_record(ctx, &c)))
			goto done;
		declared = 1;
		if (!ctx->quiet)
			fprintf(stderr, "rebuild-audit: declared '%s' before "
					"the first run\n", c.id);
		if ((status = cli_sweep_run(ctx, pa, seeds, nseeds,
					    (unsigned)o.jobs, o.snaps, o.nsnaps,
					    "baseline", &a)))
			goto done;
		c.a = &a;
		if ((status = cli_sweep_run(ctx, pb, seeds, nseeds,
					    (unsigned)o.jobs, o.snaps, o.nsnaps,
					    "candidate", &b)))
			goto done;
		c.b = &b;
	} else {
		struct store_txn *txn = NULL;
		if (o.seeds != NULL) {
			fx_expr_free(ex);
			return cli_usage(ctx, "stored sweeps keep their seeds");
		}
		/* Writable: the comparison's record is kept afterwards. */
		if (cli_store_open(ctx, 0) ||
		    cli_txn_begin(ctx, 0, 0, "cannot compare", args[0], &txn))
			goto done;
		status = cli_sweep_load(ctx, txn, args[0], &a);
		if (status == 0)
			status = cli_sweep_load(ctx, txn, args[1], &b);
		store_txn_abort(txn);
		if (status)
			goto done;
		c.a = &a;
		c.b = &b;
		snprintf(c.subject, sizeof(c.subject), "compare/%s..%s",
			 a.pins->version, b.pins->version);
		if (a.n != b.n) {
			rba_fail(&d, RBA_E_USAGE, NULL, 0, 0,
				 "the sweeps have %zu and %zu seeds", a.n, b.n);
			status = cli_fail("cannot compare", args[1], RBA_E_USAGE, &d);
			goto done;
		}
		if ((status = keep_record(ctx, &c)))
			goto done;
		declared = 1;
	}
	if ((status = decide(&c, ex)) != 0) {
		c.status = "refused";
		goto done;
	}
	if (plot != NULL && (r = cli_plot_svg(plot, &a, &b)) != 0) {
		status = cli_fail("cannot write plot", plot, r, NULL);
		goto done;
	}
	/* Decided and kept before anything is reported. */
	if ((status = keep_record(ctx, &c)) != 0) {
		declared = 0;
		goto done;
	}
	if (ctx->json) {
		struct rba_buf jb;
		rba_buf_init(&jb);
		render(&c, &jb);
		rba_buf_put_u8(&jb, '\n');
		if (rba_buf_status(&jb) == 0)
			fwrite(jb.p, 1, jb.len, stdout);
		else
			status = cli_fail("cannot compare", c.id, RBA_E_NOMEM, NULL);
		rba_buf_release(&jb);
		if (status)
			goto done;
	} else {
		report(&c);
	}
	status = c.verdict == FX_MET ? 0 : 1;
done:
	/* A declaration that could not be decided says so, not "declared". */
	if (status == 2 && declared && !c.computed) {
		if (strcmp(c.status, "refused") != 0)
			c.status = "failed";
		(void)keep_record(ctx, &c);
	}
	free(c.edits);
	cli_sweep_release(&a);
	cli_sweep_release(&b);
	policy_pins_free(pa);
	policy_pins_free(pb);
	free(seeds);
	fx_expr_free(ex);
	return status;
}
