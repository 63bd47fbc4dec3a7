/*
 * cmd_compare.c - compare: two pins files at the same seeds (or two
 * stored sweeps), the report of DESIGN 8: IDENTITY, CORRECTNESS (paired
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

#include "audit/forensics.h"
#include "audit/runs.h"
#include "cli/commands.h"
#include "common/json.h"
#include "rebuild/envrec.h"
#include "store/store.h"

#define MAX_SNAPS 8
#define DEFAULT_SUCCESS "val_loss.median < 0"

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Keeps the compare record (declared or decided) under id. */
static int
keep_record(struct cli_ctx *ctx, char id[AUDIT_RUN_ID_SIZE],
	    const char *subject, const char *hyp, const char *success,
	    double alpha, const char *seeds, const char *base,
	    const char *cand, const char *status, const char *bsw,
	    const char *csw, const char *verdict)
{
	struct store_txn *txn = NULL;
	struct rba_detail d;
	struct rba_buf b;
	int err = 0;

	rba_detail_clear(&d);
	if (cli_txn_begin(ctx, 1, 1u << 16, "cannot keep comparison",
			  ctx->store_path, &txn))
		return 2;
	if (id[0] == 0)
		err = audit_run_id_new(txn, subject, (int64_t)time(NULL), id, &d);
	rba_buf_init(&b);
	rba_buf_printf(&b, "{\n  ");
	rba_json_kv_str(&b, "schema", "rebuild-audit/compare/v1", 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "status", status, 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_u64(&b, "declared_at", (uint64_t)time(NULL), 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "hypothesis", hyp ? hyp : "", 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "success", success, 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_num(&b, "alpha", alpha, 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "seeds", seeds ? seeds : "", 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "base", base, 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "cand", cand, 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "base_sweep", bsw ? bsw : "", 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "cand_sweep", csw ? csw : "", 0);
	rba_buf_printf(&b, ",\n  ");
	rba_json_kv_str(&b, "verdict", verdict ? verdict : "", 0);
	rba_buf_printf(&b, "\n}\n");
	if (err == 0)
		err = rba_buf_status(&b);
	if (err == 0)
		err = store_run_put(txn, id, b.p, b.len, &d);
	if (err == 0)
		err = store_txn_commit(txn, &d);
	else
		store_txn_abort(txn);
	rba_buf_release(&b);
	if (err != 0)
		return cli_fail("cannot keep comparison", id, err, &d);
	return 0;
}

static const char *
same(int eq)
{
	return eq ? "SAME" : "CHANGED";
}

static void
metric_line(const struct fx_paired *pr, size_t n)
{
	const char *what = !pr->resolved
				   ? "NOT RESOLVED"
				   : pr->direction > 0 ? "better" : "worse";
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
	printf("    finding    %s\n", what);
}

/* The report; returns the exit status. */
static int
report(struct cli_ctx *ctx, const struct cli_sweep *a, const struct cli_sweep *b,
       int allow, const char *hyp, const char *success,
       const struct fx_expr *ex, double alpha, const char *declared_id,
       enum fx_verdict *verdict)
{
	char h1[RBA_DIGEST_TEXT_LEN + 1], h2[RBA_DIGEST_TEXT_LEN + 1];
	struct fx_paired pr[FX_NMETRICS];
	struct fx_edit *edits = NULL;
	size_t nedits = 0, n = a->n;
	struct rba_detail d;
	int fp_same = rba_digest_equal(&a->eval_fingerprint, &b->eval_fingerprint);
	int v1 = !a->runs[0].has_eval || !b->runs[0].has_eval;

	for (size_t i = 0; i < n; i++)
		if (a->seeds[i] != b->seeds[i]) {
			rba_detail_clear(&d);
			rba_fail(&d, RBA_E_USAGE, NULL, 0, 0,
				 "the two sweeps are not at the same seeds: "
				 "nothing to pair");
			return cli_fail("cannot compare", b->id, RBA_E_USAGE, &d);
		}
	if ((!fp_same || v1) && !allow) {
		rba_detail_clear(&d);
		rba_fail(&d, RBA_E_USAGE, NULL, 0, 0,
			 "the evaluation contract changed (eval fingerprint "
			 "%s); give --allow-contract-change to compare anyway",
			 v1 ? "unknown" : "differs");
		return cli_fail("refusing to compare", b->id, RBA_E_USAGE, &d);
	}
	printf("compare %s -> %s at %zu paired seeds (%" PRIu64 "..%" PRIu64 ")\n",
	       a->pins->version, b->pins->version, n, a->seeds[0],
	       a->seeds[n - 1]);
	printf("sweeps %s, %s\n\nIDENTITY\n", a->id, b->id);
	printf("  config hash       %s\n",
	       same(rba_digest_equal(&a->config_hash, &b->config_hash)));
	rba_digest_format(&a->eval_fingerprint, h1);
	rba_digest_format(&b->eval_fingerprint, h2);
	printf("  eval fingerprint  %s%s\n", same(fp_same && !v1),
	       fp_same && !v1 ? ""
			      : "  (metrics under two contracts: "
				"--allow-contract-change)");
	printf("  environment       %s\n",
	       same(strcmp(a->environment, b->environment) == 0));
	printf("  snapshot          %s\n",
	       same(rba_digest_equal(&a->snapshot, &b->snapshot)));
	printf("  code revision     %s\n",
	       same(strcmp(a->runs[0].code_revision, b->runs[0].code_revision) ==
		    0));
	rba_detail_clear(&d);
	if (fx_edits(a->pins, b->pins, &edits, &nedits, &d) == 0) {
		for (size_t i = 0; i < nedits; i++)
			printf("  pins %-14s %s -> %s\n", edits[i].path,
			       edits[i].base, edits[i].cand);
		free(edits);
	}
	printf("\nCORRECTNESS (candidate - baseline at each seed; a finding "
	       "needs |median delta| > baseline spread and sign test p <= %g)\n",
	       alpha);
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
		fx_paired_compute((enum fx_metric)m, x, y, n, alpha, &pr[m]);
		free(x);
		free(y);
		if (m != FX_EPS && pr[m].delta.n > 0)
			metric_line(&pr[m], n);
	}
	printf("\nCOST\n  examples/s        baseline %.4g, candidate %.4g "
	       "(medians)\n",
	       pr[FX_EPS].base.median, pr[FX_EPS].cand.median);
	*verdict = fx_verdict_decide(ex, pr);
	printf("\nDECLARED BEFORE THE RUN (%s)\n", declared_id);
	printf("  hypothesis        %s\n", hyp && hyp[0] ? hyp : "(none)");
	printf("  success           %s\n", success);
	printf("  result            %s\n", fx_verdict_name(*verdict));
	(void)ctx;
	return *verdict == FX_MET ? 0 : 1;
}

int
cmd_compare(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *args[2] = { NULL, NULL }, *seeds_s = NULL, *hyp = NULL;
	const char *success = DEFAULT_SUCCESS, *plot = NULL, *v;
	char *snaps[MAX_SNAPS], id[AUDIT_RUN_ID_SIZE] = "", subject[300];
	size_t nsnaps = 0, nargs = 0, nseeds = 0;
	uint64_t *seeds = NULL, jobs = 1;
	double alpha = FX_ALPHA_DEFAULT;
	int allow = 0, r, status = 2;
	struct fx_expr *ex = NULL;
	struct rba_detail d;
	struct cli_sweep a, b;
	struct pins *pa = NULL, *pb = NULL;
	enum fx_verdict verdict = FX_NOT_RESOLVED;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--seeds", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--seeds needs A-B");
			seeds_s = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--hypothesis", &v)) != 0) {
			if (r < 0 || strlen(v) > FX_MAX_HYPOTHESIS)
				return cli_usage(ctx, "--hypothesis needs a text");
			hyp = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--success", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--success needs an expression");
			success = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--alpha", &v)) != 0) {
			char *e;
			alpha = r < 0 ? -1 : strtod(v, &e);
			if (r < 0 || *e != 0 || !(alpha > 0 && alpha < 1))
				return cli_usage(ctx, "--alpha is between 0 and 1");
		} else if ((r = cli_opt_value(argc, argv, &i, "-j", &v)) != 0) {
			if (r < 0 || cli_parse_u64(v, FX_MAX_JOBS, &jobs) || !jobs)
				return cli_usage(ctx, "-j is 1 to %u", FX_MAX_JOBS);
		} else if ((r = cli_opt_value(argc, argv, &i, "--snapshot", &v)) != 0) {
			if (r < 0 || nsnaps == MAX_SNAPS)
				return cli_usage(ctx, "--snapshot needs a file");
			snaps[nsnaps++] = (char *)v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--plot", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--plot needs a file");
			plot = v;
		} else if (strcmp(argv[i], "--allow-contract-change") == 0) {
			allow = 1;
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
	rba_detail_clear(&d);
	if ((r = fx_expr_parse(success, &ex, &d)) != 0)
		return cli_fail("invalid success expression", success, r, &d);
	if (is_file(args[0]) || is_file(args[1])) {
		if (seeds_s == NULL) {
			fx_expr_free(ex);
			return cli_usage(ctx, "comparing pins needs --seeds");
		}
		if (fx_seeds_parse(seeds_s, &seeds, &nseeds, &d)) {
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
		snprintf(subject, sizeof(subject), "compare/%s..%s",
			 pa->version, pb->version);
		/* The declaration is kept before the first run starts. */
		if ((status = keep_record(ctx, id, subject, hyp, success, alpha,
					  seeds_s, args[0], args[1],
					  "declared", NULL, NULL, NULL)))
			goto done;
		if (!ctx->quiet)
			fprintf(stderr, "rebuild-audit: declared '%s' before "
					"the first run\n", id);
		if ((status = cli_sweep_run(ctx, pa, seeds, nseeds,
					    (unsigned)jobs, snaps, nsnaps,
					    "baseline", &a)) ||
		    (status = cli_sweep_run(ctx, pb, seeds, nseeds,
					    (unsigned)jobs, snaps, nsnaps,
					    "candidate", &b)))
			goto done;
	} else {
		struct store_txn *txn = NULL;
		if (seeds_s != NULL) {
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
		snprintf(subject, sizeof(subject), "compare/%s..%s",
			 a.pins->version, b.pins->version);
		if (a.n != b.n) {
			rba_fail(&d, RBA_E_USAGE, NULL, 0, 0,
				 "the sweeps have %zu and %zu seeds", a.n, b.n);
			status = cli_fail("cannot compare", args[1], RBA_E_USAGE, &d);
			goto done;
		}
		if ((status = keep_record(ctx, id, subject, hyp, success, alpha,
					  NULL, args[0], args[1], "declared",
					  a.id, b.id, NULL)))
			goto done;
	}
	status = report(ctx, &a, &b, allow, hyp, success, ex, alpha, id,
			&verdict);
	if (status == 2)
		goto done;
	if (plot != NULL && (r = cli_plot_svg(plot, &a, &b)) != 0) {
		status = cli_fail("cannot write plot", plot, r, NULL);
		goto done;
	}
	if ((r = keep_record(ctx, id, subject, hyp, success, alpha, seeds_s,
			     args[0], args[1], "decided", a.id, b.id,
			     fx_verdict_name(verdict))))
		status = r;
done:
	cli_sweep_release(&a);
	cli_sweep_release(&b);
	policy_pins_free(pa);
	policy_pins_free(pb);
	free(seeds);
	fx_expr_free(ex);
	return status;
}
