/*
 * cmd_bisect.c - bisect: which of the edits between two pins files makes
 * the gate fail.  The edits are the fields that differ, in canonical
 * order (forensics/forensics.h, fx_edits); prefix k is BASE with the first k
 * edits applied.  Prefix 0 is assumed to pass and prefix n is evaluated
 * first; then a binary search finds the shortest failing prefix, whose
 * last edit is then applied alone to BASE to confirm it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/forensics.h"
#include "cli/commands.h"


struct bctx {
	struct cli_ctx *ctx;
	const struct fx_gate *g;
	const struct pins *base;
	const struct fx_edit *edits;
	size_t n;
	const uint64_t *seeds;
	size_t nseeds;
	const struct cli_fx_opts *o;
	unsigned evals;
};

/* 1 pass, 0 fail, -1 could not run (diagnosed). */
static int
evaluate(struct bctx *b, const unsigned char *pick, const char *label,
	 double *median)
{
	struct pins *p = NULL;
	struct rba_detail d;
	struct cli_sweep sw;
	struct fx_stat st;

	rba_detail_clear(&d);
	if (fx_edits_apply(b->base, b->edits, b->n, pick, &p, &d)) {
		printf("  %s: the edits do not make a valid pins file: %s\n",
		       label, d.reason);
		return 0;
	}
	if (cli_sweep_run(b->ctx, p, b->seeds, b->nseeds, (unsigned)b->o->jobs,
			  b->o->snaps, b->o->nsnaps, label, &sw)) {
		policy_pins_free(p);
		return -1;
	}
	policy_pins_free(p);
	cli_sweep_loss_stat(&sw, &st);
	cli_sweep_release(&sw);
	*median = st.median;
	return fx_gate_pass(b->g, st.median);
}

int
cmd_bisect(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *args[2] = { NULL, NULL }, *gate = NULL, *v;
	size_t nargs = 0, nseeds = 0, nedits = 0;
	uint64_t *seeds = NULL;
	struct cli_fx_opts o;
	struct pins *pa = NULL, *pb = NULL;
	struct fx_edit *edits = NULL;
	struct fx_gate g;
	struct rba_detail d;
	unsigned char *pick = NULL;
	int r, status = 2;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	cli_fx_opts_init(&o);
	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--gate", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--gate needs a file");
			gate = v;
		} else if ((r = cli_fx_opt(ctx, argc, argv, &i, &o)) != 0) {
			if (r != 1)
				return r;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (nargs < 2) {
			args[nargs++] = argv[i];
		} else {
			return cli_usage(ctx, "BASE and CAND, please");
		}
	}
	if (nargs != 2 || gate == NULL)
		return cli_usage(ctx, "needs BASE, CAND and --gate GATE.yaml");
	if (cli_gate_load(gate, &g))
		return 2;
	rba_detail_clear(&d);
	if ((r = policy_pins_load(args[0], &pa, &d)))
		return cli_fail("invalid pins", args[0], r, &d);
	if ((r = policy_pins_load(args[1], &pb, &d))) {
		status = cli_fail("invalid pins", args[1], r, &d);
		goto done;
	}
	if (o.seeds == NULL) {
		if ((seeds = malloc(sizeof(uint64_t))) == NULL) {
			status = cli_fail("cannot bisect", args[1], RBA_E_NOMEM, NULL);
			goto done;
		}
		seeds[0] = pa->train.seed;
		nseeds = 1;
	} else if (fx_seeds_parse(o.seeds, &seeds, &nseeds, &d)) {
		status = cli_usage(ctx, "--seeds: %s", d.reason);
		goto done;
	}
	if ((r = fx_edits(pa, pb, &edits, &nedits, &d))) {
		status = cli_fail("cannot bisect", args[1], r, &d);
		goto done;
	}
	if (nedits == 0) {
		printf("no edits: the two pins files are the same model\n");
		status = 1;
		goto done;
	}
	printf("%zu edits, in canonical order:\n", nedits);
	for (size_t i = 0; i < nedits; i++)
		printf("  %zu. %s: %s -> %s\n", i + 1, edits[i].path,
		       edits[i].base, edits[i].cand);
	if ((pick = calloc(nedits, 1)) == NULL) {
		status = cli_fail("cannot bisect", args[1], RBA_E_NOMEM, NULL);
		goto done;
	}
	{
		struct bctx b = { ctx, &g, pa, edits, nedits, seeds, nseeds,
				  &o, 0 };
		size_t lo = 0, hi = nedits; /* lo passes, hi fails */
		double med;
		char label[64];
		int res, alone, warn = 0;

		memset(pick, 1, nedits);
		res = evaluate(&b, pick, "prefix", &med);
		b.evals++;
		if (res < 0)
			goto done;
		printf("step %u: prefix %zu/%zu (all edits): val_loss %.6g: %s\n",
		       b.evals, nedits, nedits, med, res ? "pass" : "FAIL");
		if (res) {
			printf("the candidate passes the gate: nothing to bisect\n");
			status = 1;
			goto done;
		}
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			for (size_t i = 0; i < nedits; i++)
				pick[i] = i < mid;
			snprintf(label, sizeof(label), "prefix %zu", mid);
			res = evaluate(&b, pick, label, &med);
			b.evals++;
			if (res < 0)
				goto done;
			printf("step %u: prefix %zu/%zu (through %s): val_loss "
			       "%.6g: %s\n",
			       b.evals, mid, nedits, edits[mid - 1].path, med,
			       res ? "pass" : "FAIL");
			if (res)
				lo = mid;
			else
				hi = mid;
		}
		printf("shortest failing prefix: %zu edits, after %u prefix "
		       "evaluations\n",
		       hi, b.evals);
		memset(pick, 0, nedits);
		pick[hi - 1] = 1;
		alone = evaluate(&b, pick, "alone", &med);
		if (alone < 0)
			goto done;
		printf("confirm: %s alone on the baseline: val_loss %.6g: %s\n",
		       edits[hi - 1].path, med, alone ? "pass" : "FAIL");
		if (alone) {
			warn = 1;
			printf("warning: the edit alone passes: the prefixes are "
			       "not monotone (an interaction between edits)\n");
		}
		printf("culprit: %s (%s -> %s)%s; %u evaluations in all\n",
		       edits[hi - 1].path, edits[hi - 1].base,
		       edits[hi - 1].cand, warn ? ", not confirmed alone" : "",
		       b.evals + 1);
		status = warn ? 1 : 0;
	}
done:
	free(pick);
	free(edits);
	free(seeds);
	policy_pins_free(pa);
	policy_pins_free(pb);
	return status;
}
