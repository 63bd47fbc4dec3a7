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

/* The edits, for the lines of the search; json: the document under
 * --json, NULL for text. */
struct told {
	const struct fx_edit *edits;
	size_t n;
	struct rba_buf *json;
	size_t nsteps, shortest;
	unsigned prefix_evals;
};

/* Under --json: the edits as members of the document. */
static void
edits_json(struct rba_buf *b, const struct fx_edit *edits, size_t n)
{
	rba_buf_printf(b, "{\"edits\": [");
	for (size_t i = 0; i < n; i++) {
		rba_buf_printf(b, "%s{", i ? ", " : "");
		rba_json_kv_str(b, "path", edits[i].path, 1);
		rba_json_kv_str(b, "base", edits[i].base, 1);
		rba_json_kv_str(b, "cand", edits[i].cand, 0);
		rba_buf_printf(b, "}");
	}
	rba_buf_printf(b, "], \"steps\": [");
}

/* Under --json: one evaluation in "steps". */
static void
step_json(struct told *t, const struct fx_bisect_step *s)
{
	static const char *const kinds[] = { "all", "prefix", "confirm" };
	struct rba_buf *b = t->json;

	rba_buf_printf(b, "%s{", t->nsteps++ ? ", " : "");
	rba_json_kv_u64(b, "eval", s->eval, 1);
	rba_json_kv_str(b, "kind", s->kind == FX_BISECT_ALL ? kinds[0] :
			s->kind == FX_BISECT_PREFIX ? kinds[1] : kinds[2], 1);
	rba_json_kv_u64(b, "prefix", s->kind == FX_BISECT_ALL ? t->n : s->k, 1);
	rba_json_kv_str(b, "edit", s->kind == FX_BISECT_ALL ? NULL :
			t->edits[s->last].path, 1);
	rba_json_kv_bool(b, "valid", s->valid, 1);
	if (!s->valid)
		rba_json_kv_str(b, "reason", s->reason, 1);
	rba_json_kv_str(b, "metric", fx_metric_name(s->value.metric), 1);
	rba_json_kv_num(b, "value", s->value.value, 1);
	rba_json_kv_bool(b, "pass", s->valid && s->value.pass, 0);
	rba_buf_printf(b, "}");
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

/* The search, told as it goes (under --json, into json); the exit
 * status of bisect. */
static int
run_search(struct cli_ctx *ctx, const struct bargs *a, const struct pins *pa,
	   const struct fx_gate *g, const struct fx_edit *edits, size_t n,
	   const uint64_t *seeds, size_t nseeds, struct rba_buf *json)
{
	struct told t = { edits, n, json, 0, 0, 0 };
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
		if (res.passes) {
			/* the first evaluation passed: no prefix search */
			rba_buf_printf(json, "], \"result\": \"passes\"}\n");
			return 1;
		}
		c = &edits[res.culprit];
		rba_buf_printf(json, "], \"shortest_failing_prefix\": %zu, "
			       "\"prefix_evaluations\": %u, \"result\": \"culprit\", "
			       "\"culprit\": {", t.shortest, t.prefix_evals);
		rba_json_kv_str(json, "path", c->path, 1);
		rba_json_kv_str(json, "base", c->base, 1);
		rba_json_kv_str(json, "cand", c->cand, 1);
		rba_json_kv_bool(json, "confirmed", res.confirmed, 0);
		rba_buf_printf(json, "}, \"evaluations\": %u}\n",
			       res.prefix_evals + 1);
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
		if (ctx->json)
			printf("{\"edits\": [], \"result\": \"no-edits\"}\n");
		else
			printf("no edits: the two pins files are the same model\n");
		status = 1;
		goto done;
	}
	if (ctx->json) {
		struct rba_buf b;

		rba_buf_init(&b);
		edits_json(&b, edits, nedits);
		status = run_search(ctx, &a, pa, &g, edits, nedits, seeds,
				    nseeds, &b);
		/* a document only for an answer (0 or 1); after a failure
		 * the diagnostic is the output */
		if (status != 2 && rba_buf_status(&b) != 0)
			status = cli_fail("cannot bisect", a.cand, RBA_E_NOMEM, NULL);
		else if (status != 2)
			fwrite(b.p, 1, b.len, stdout);
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
