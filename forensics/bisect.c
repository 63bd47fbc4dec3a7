/*
 * bisect.c - the bisection search over the edits (bisect.h).
 */
#include "forensics/bisect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct search {
	const struct fx_store *st;
	const struct fx_bisect_plan *plan;
	const struct fx_bisect_hooks *hooks;
	unsigned char *pick; /* plan->n flags */
	unsigned evals;
	struct fx_fault *f;
};

/*
 * Evaluates the base with the edits s->pick selects, as step kind with
 * k edits applied, the last at index last; tells the hooks.  0 with
 * *pass set, or the error of the evaluation (s->f says where).
 */
static int
evaluate(struct search *s, enum fx_bisect_kind kind, size_t k, size_t last,
	 int *pass)
{
	const struct fx_bisect_plan *pl = s->plan;
	struct fx_bisect_step step;
	struct rba_detail d;
	struct pins *p = NULL;
	struct fx_sweep sw;
	char label[64];
	int err;

	memset(&step, 0, sizeof(step));
	if (kind == FX_BISECT_PREFIX)
		snprintf(label, sizeof(label), "prefix %zu", k);
	else
		snprintf(label, sizeof(label), "%s",
			 kind == FX_BISECT_ALL ? "prefix" : "alone");
	step.kind = kind;
	step.eval = s->evals + 1;
	step.k = k;
	step.last = last;
	step.label = label;
	step.value.metric = pl->gate->metric;
	step.value.value = NAN;
	rba_detail_clear(&d);
	if (fx_edits_apply(pl->base, pl->edits, pl->n, s->pick, &p, &d)) {
		step.reason = d.reason;
	} else {
		err = fx_sweep_run(s->st, p, &pl->sweep, s->hooks->progress,
				   label, &sw, s->f);
		policy_pins_free(p);
		if (err != 0)
			return err;
		err = fx_gate_decide(pl->gate, sw.runs, sw.n, sw.id, &step.value,
				     s->f);
		fx_sweep_release(&sw);
		if (err != 0)
			return err;
		step.valid = 1;
	}
	*pass = step.valid && step.value.pass;
	if (s->hooks->step != NULL)
		s->hooks->step(s->hooks->ctx, &step);
	return 0;
}

/* The binary search between lo (passes) and hi (fails). */
static int
search_prefixes(struct search *s, size_t *hi_out)
{
	size_t lo = 0, hi = s->plan->n;
	int pass, err;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		for (size_t i = 0; i < s->plan->n; i++)
			s->pick[i] = i < mid;
		if ((err = evaluate(s, FX_BISECT_PREFIX, mid, mid - 1, &pass)))
			return err;
		s->evals++;
		if (pass)
			lo = mid;
		else
			hi = mid;
	}
	*hi_out = hi;
	return 0;
}

int
fx_bisect_run(const struct fx_store *st, const struct fx_bisect_plan *plan,
	      const struct fx_bisect_hooks *hooks, struct fx_bisect_result *out,
	      struct fx_fault *f)
{
	static const struct fx_bisect_hooks none = { NULL, NULL, NULL, NULL };
	struct search s = { st, plan, hooks ? hooks : &none, NULL, 0, f };
	size_t n = plan->n, hi = n;
	int pass, err;

	memset(out, 0, sizeof(*out));
	fx_fault_clear(f);
	if ((s.pick = calloc(n ? n : 1, 1)) == NULL)
		return fx_fail(f, RBA_E_NOMEM, FX_STEP_BISECT, plan->cand, NULL);
	memset(s.pick, 1, n);
	if ((err = evaluate(&s, FX_BISECT_ALL, n, n - 1, &pass)))
		goto done;
	s.evals++;
	if (pass) {
		out->passes = 1;
		out->prefix_evals = s.evals;
		goto done;
	}
	if ((err = search_prefixes(&s, &hi)))
		goto done;
	out->shortest = hi;
	out->culprit = hi - 1;
	out->prefix_evals = s.evals;
	if (s.hooks->found != NULL)
		s.hooks->found(s.hooks->ctx, hi, s.evals);
	memset(s.pick, 0, n);
	s.pick[hi - 1] = 1;
	if ((err = evaluate(&s, FX_BISECT_ALONE, 1, hi - 1, &pass)))
		goto done;
	out->confirmed = !pass;
done:
	free(s.pick);
	return err;
}
