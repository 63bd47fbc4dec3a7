/*
 * cmd_bisect.c - bisect: which of the edits between two pins files makes
 * the gate fail.  The search is forensics/bisect.h's; this prints the
 * edits, each evaluation as it is made, and the culprit.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "forensics/bisect.h"
#include "forensics/forensics.h"
#include "forensics/gate.h"

/* The arguments of bisect. */
struct bargs {
	const char *base, *cand, *gate;
	struct cli_fx_opts o;
};

static int
parse_args(struct cli_ctx *ctx, int argc, char **argv, struct bargs *a)
{
	const char *args[2] = { NULL, NULL }, *v;
	size_t nargs = 0;
	int r;

	memset(a, 0, sizeof(*a));
	cli_fx_opts_init(&a->o);
	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--gate", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--gate needs a file");
			a->gate = v;
		} else if ((r = cli_fx_opt(ctx, argc, argv, &i, &a->o)) != 0) {
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
	if (nargs != 2 || a->gate == NULL)
		return cli_usage(ctx, "needs BASE, CAND and --gate GATE.yaml");
	a->base = args[0];
	a->cand = args[1];
	return -1;
}

/* The seeds of --seeds, or the base's own seed.  0, or 2 after a
 * diagnostic. */
static int
bisect_seeds(struct cli_ctx *ctx, const struct bargs *a, const struct pins *pa,
	     uint64_t **seeds, size_t *n)
{
	struct rba_detail d;

	rba_detail_clear(&d);
	if (a->o.seeds != NULL) {
		if (fx_seeds_parse(a->o.seeds, seeds, n, &d))
			return cli_usage(ctx, "--seeds: %s", d.reason);
		return 0;
	}
	if ((*seeds = malloc(sizeof(uint64_t))) == NULL)
		return cli_fail("cannot bisect", a->cand, RBA_E_NOMEM, NULL);
	(*seeds)[0] = pa->train.seed;
	*n = 1;
	return 0;
}

/* The edits, for the lines of the search; json: the writer of the
 * document under --json (its "steps" open), NULL for text. */
struct told {
	const struct fx_edit *edits;
	size_t n;
	struct rba_json_w *json;
	size_t shortest;
	unsigned prefix_evals;
};

/* One edit's members, in w's open object. */
static void
edit_json(struct rba_json_w *w, const struct fx_edit *e)
{
	rba_json_w_str(w, "path", e->path);
	rba_json_w_str(w, "base", e->base);
	rba_json_w_str(w, "cand", e->cand);
}

/* Under --json: the document opened, its edits, and "steps" opened. */
static void
edits_json(struct rba_json_w *w, const struct fx_edit *edits, size_t n)
{
	rba_json_w_open(w, NULL, '{');
	rba_json_w_open(w, "edits", '[');
	for (size_t i = 0; i < n; i++) {
		rba_json_w_open(w, NULL, '{');
		edit_json(w, &edits[i]);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
	rba_json_w_open(w, "steps", '[');
}

/* Under --json: one evaluation in "steps". */
static void
step_json(struct told *t, const struct fx_bisect_step *s)
{
	static const char *const kinds[] = { "all", "prefix", "confirm" };
	struct rba_json_w *w = t->json;

	rba_json_w_open(w, NULL, '{');
	rba_json_w_u64(w, "eval", s->eval);
	rba_json_w_str(w, "kind", s->kind == FX_BISECT_ALL ? kinds[0] :
		       s->kind == FX_BISECT_PREFIX ? kinds[1] : kinds[2]);
	rba_json_w_u64(w, "prefix", s->kind == FX_BISECT_ALL ? t->n : s->k);
	rba_json_w_str(w, "edit", s->kind == FX_BISECT_ALL ? NULL :
		       t->edits[s->last].path);
	rba_json_w_bool(w, "valid", s->valid);
	if (!s->valid)
		rba_json_w_str(w, "reason", s->reason);
	rba_json_w_str(w, "metric", fx_metric_name(s->value.metric));
	rba_json_w_num(w, "value", s->value.value);
	rba_json_w_bool(w, "pass", s->valid && s->value.pass);
	rba_json_w_close(w, '}');
}

/* Each evaluation as the search makes it. */
static void
print_step(void *c, const struct fx_bisect_step *s)
{
	struct told *t = c;
	const char *res = s->valid && s->value.pass ? "pass" : "FAIL";
	const char *metric = fx_metric_name(s->value.metric);

	if (t->json != NULL) {
		step_json(t, s);
		return;
	}
	if (!s->valid)
		printf("  %s: the edits do not make a valid pins file: %s\n",
		       s->label, s->reason);
	if (s->kind == FX_BISECT_ALL)
		printf("step %u: prefix %zu/%zu (all edits): %s %.6g: %s\n",
		       s->eval, s->k, s->k, metric, s->value.value, res);
	else if (s->kind == FX_BISECT_PREFIX)
		printf("step %u: prefix %zu/%zu (through %s): %s %.6g: %s\n",
		       s->eval, s->k, t->n, t->edits[s->last].path, metric,
		       s->value.value, res);
	else
		printf("confirm: %s alone on the baseline: %s %.6g: %s\n",
		       t->edits[s->last].path, metric, s->value.value, res);
}

static void
print_found(void *c, size_t shortest, unsigned prefix_evals)
{
	struct told *t = c;

	if (t->json != NULL) {
		t->shortest = shortest;
		t->prefix_evals = prefix_evals;
		return;
	}
	printf("shortest failing prefix: %zu edits, after %u prefix "
	       "evaluations\n",
	       shortest, prefix_evals);
}

/* The search, told as it goes (under --json, through json, whose
 * "steps" are open); the exit status of bisect. */
static int
run_search(struct cli_ctx *ctx, const struct bargs *a, const struct pins *pa,
	   const struct fx_gate *g, const struct fx_edit *edits, size_t n,
	   const uint64_t *seeds, size_t nseeds, struct rba_json_w *json)
{
	struct told t = { edits, n, json, 0, 0 };
	struct fx_bisect_plan plan;
	struct fx_bisect_hooks hooks = { print_step, print_found, &t,
					 cli_fx_progress(ctx) };
	struct fx_bisect_result res;
	struct fx_store st;
	struct fx_fault f;
	const struct fx_edit *c;
	int err;

	memset(&plan, 0, sizeof(plan));
	plan.cand = a->cand;
	plan.base = pa;
	plan.edits = edits;
	plan.n = n;
	plan.gate = g;
	cli_fx_plan(&a->o, seeds, nseeds, &plan.sweep);
	cli_fx_store(ctx, &st);
	if ((err = fx_bisect_run(&st, &plan, &hooks, &res, &f)) != 0)
		return cli_fx_fail(ctx, &f, err);
	if (json != NULL) {
		rba_json_w_close(json, ']');
		if (res.passes) {
			/* the first evaluation passed: no prefix search */
			rba_json_w_str(json, "result", "passes");
			rba_json_w_close(json, '}');
			return 1;
		}
		c = &edits[res.culprit];
		rba_json_w_u64(json, "shortest_failing_prefix", t.shortest);
		rba_json_w_u64(json, "prefix_evaluations", t.prefix_evals);
		rba_json_w_str(json, "result", "culprit");
		rba_json_w_open(json, "culprit", '{');
		edit_json(json, c);
		rba_json_w_bool(json, "confirmed", res.confirmed);
		rba_json_w_close(json, '}');
		rba_json_w_u64(json, "evaluations", (unsigned)(res.prefix_evals + 1));
		rba_json_w_close(json, '}');
		return res.confirmed ? 0 : 1;
	}
	if (res.passes) {
		printf("the candidate passes the gate: nothing to bisect\n");
		return 1;
	}
	c = &edits[res.culprit];
	if (!res.confirmed)
		printf("warning: the edit alone passes: the prefixes are "
		       "not monotone (an interaction between edits)\n");
	printf("culprit: %s (%s -> %s)%s; %u evaluations in all\n", c->path,
	       c->base, c->cand, res.confirmed ? "" : ", not confirmed alone",
	       res.prefix_evals + 1);
	return res.confirmed ? 0 : 1;
}

int
cmd_bisect(struct cli_ctx *ctx, int argc, char **argv)
{
	struct bargs a;
	struct pins *pa = NULL, *pb = NULL;
	struct fx_edit *edits = NULL;
	size_t nseeds = 0, nedits = 0;
	uint64_t *seeds = NULL;
	struct fx_gate g;
	struct rba_detail d;
	int r, status = 2;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if ((r = parse_args(ctx, argc, argv, &a)) >= 0)
		return r;
	if (cli_gate_load(a.gate, &g))
		return 2;
	rba_detail_clear(&d);
	if ((r = policy_pins_load(a.base, &pa, &d)))
		return cli_fail("invalid pins", a.base, r, &d);
	if ((r = policy_pins_load(a.cand, &pb, &d))) {
		status = cli_fail("invalid pins", a.cand, r, &d);
		goto done;
	}
	if ((status = bisect_seeds(ctx, &a, pa, &seeds, &nseeds)) != 0)
		goto done;
	status = 2;
	if ((r = fx_edits(pa, pb, &edits, &nedits, &d))) {
		status = cli_fail("cannot bisect", a.cand, r, &d);
		goto done;
	}
	if (nedits == 0) {
		status = 1;
		if (ctx->json) {
			struct rba_buf b;
			struct rba_json_w w;
			cli_json_begin(&w, &b);
			rba_json_w_open(&w, "edits", '[');
			rba_json_w_close(&w, ']');
			rba_json_w_str(&w, "result", "no-edits");
			rba_json_w_close(&w, '}');
			if (cli_json_print(&b) != 0)
				status = 2;
		} else {
			printf("no edits: the two pins files are the same model\n");
		}
		goto done;
	}
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;

		rba_buf_init(&b);
		rba_json_w_init(&w, &b);
		edits_json(&w, edits, nedits);
		status = run_search(ctx, &a, pa, &g, edits, nedits, seeds,
				    nseeds, &w);
		/* a document only for an answer (0 or 1); after a failure
		 * the diagnostic is the output */
		if (status != 2 && rba_buf_status(&b) != 0)
			status = cli_fail("cannot bisect", a.cand, RBA_E_NOMEM, NULL);
		else if (status != 2 && cli_json_print(&b) != 0)
			status = 2;
		rba_buf_release(&b);
		goto done;
	}
	printf("%zu edits, in canonical order:\n", nedits);
	for (size_t i = 0; i < nedits; i++)
		printf("  %zu. %s: %s -> %s\n", i + 1, edits[i].path,
		       edits[i].base, edits[i].cand);
	status = run_search(ctx, &a, pa, &g, edits, nedits, seeds, nseeds, NULL);
done:
	free(edits);
	free(seeds);
	policy_pins_free(pa);
	policy_pins_free(pb);
	return status;
}
