/*
 * compare.c - the record and the decision of a comparison (compare.h).
 */
#include "forensics/compare.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"

void
fx_compare_init(struct fx_compare *c)
{
	memset(c, 0, sizeof(*c));
	c->success = FX_SUCCESS_DEFAULT;
	c->alpha = FX_ALPHA_DEFAULT;
	c->status = "declared";
}

void
fx_compare_release(struct fx_compare *c)
{
	if (c == NULL)
		return;
	free(c->edits);
	c->edits = NULL;
	c->nedits = 0;
}

/* ---- the record ------------------------------------------------------ */

static const char *
same(int eq)
{
	return eq ? "SAME" : "CHANGED";
}

static void
json_stat(struct rba_json_w *w, const char *key, const struct fx_stat *s,
	  int spread)
{
	rba_json_w_open(w, key, '{');
	rba_json_w_num(w, "median", s->median);
	rba_json_w_num(w, "mean", s->mean);
	rba_json_w_num(w, "stdev", s->stdev);
	rba_json_w_num(w, "min", s->min);
	rba_json_w_num(w, "max", s->max);
	if (spread)
		rba_json_w_num(w, "spread", s->spread);
	rba_json_w_close(w, '}');
}

static void
render_identity(struct rba_json_w *w, const struct fx_compare *c)
{
	const struct fx_sweep *a = c->a, *b = c->b;
	char h[RBA_DIGEST_TEXT_LEN + 1];

	rba_json_w_open(w, "identity", '{');
	rba_json_w_str(w, "config_hash",
		       same(rba_digest_equal(&a->config_hash,
					     &b->config_hash)));
	rba_json_w_str(w, "eval_fingerprint", same(c->fp_same && !c->v1));
	rba_digest_format(&a->eval_fingerprint, h);
	rba_json_w_str(w, "base_eval_fingerprint",
		       a->runs[0].has_eval ? h : NULL);
	rba_digest_format(&b->eval_fingerprint, h);
	rba_json_w_str(w, "cand_eval_fingerprint",
		       b->runs[0].has_eval ? h : NULL);
	rba_json_w_bool(w, "contract_change_allowed", c->allow);
	rba_json_w_str(w, "environment",
		       same(strcmp(a->environment, b->environment) == 0));
	rba_json_w_str(w, "snapshot",
		       same(rba_digest_equal(&a->snapshot, &b->snapshot)));
	rba_json_w_str(w, "code_revision",
		       same(strcmp(a->runs[0].code_revision,
				   b->runs[0].code_revision) == 0));
	rba_json_w_open(w, "edits", '[');
	for (size_t i = 0; i < c->nedits; i++) {
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "path", c->edits[i].path);
		rba_json_w_str(w, "base", c->edits[i].base);
		rba_json_w_str(w, "cand", c->edits[i].cand);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
	rba_json_w_close(w, '}');
}

static void
render_correctness(struct rba_json_w *w, const struct fx_compare *c)
{
	rba_json_w_open(w, "correctness", '[');
	for (int m = 0; m < FX_NMETRICS; m++) {
		const struct fx_paired *pr = &c->pr[m];
		if (m == FX_EPS || pr->delta.n == 0)
			continue;
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "metric", fx_metric_name(pr->metric));
		json_stat(w, "baseline", &pr->base, 1);
		json_stat(w, "candidate", &pr->cand, 1);
		json_stat(w, "delta", &pr->delta, 0);
		rba_json_w_num(w, "seeds", (double)c->a->n);
		rba_json_w_num(w, "worse", pr->worse);
		rba_json_w_num(w, "better", pr->better);
		rba_json_w_num(w, "ties", pr->ties);
		rba_json_w_num(w, "shift", pr->shift);
		rba_json_w_num(w, "p", pr->p);
		rba_json_w_num(w, "unpaired_diff", pr->unpaired_diff);
		rba_json_w_num(w, "unpaired_stdev", pr->unpaired_stdev);
		rba_json_w_str(w, "finding", fx_paired_finding(pr));
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
}

void
fx_compare_render(const struct fx_compare *c, struct rba_buf *b)
{
	struct rba_json_w w;

	rba_json_w_init_pretty(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "schema", "rebuild-audit/compare/v2");
	rba_json_w_str(&w, "id", c->id);
	rba_json_w_str(&w, "status", c->status);
	rba_json_w_num(&w, "declared_at", (double)c->declared_at);
	if (c->decided_at)
		rba_json_w_num(&w, "decided_at", (double)c->decided_at);
	else
		rba_json_w_str(&w, "decided_at", NULL);
	rba_json_w_str(&w, "hypothesis", c->hyp ? c->hyp : "");
	rba_json_w_str(&w, "success", c->success);
	rba_json_w_num(&w, "alpha", c->alpha);
	rba_json_w_str(&w, "seeds", c->seeds);
	rba_json_w_str(&w, "base", c->base);
	rba_json_w_str(&w, "cand", c->cand);
	rba_json_w_str(&w, "base_sweep", c->a ? c->a->id : NULL);
	rba_json_w_str(&w, "cand_sweep", c->b ? c->b->id : NULL);
	if (c->computed) {
		render_identity(&w, c);
		render_correctness(&w, c);
		rba_json_w_open(&w, "cost", '{');
		rba_json_w_num(&w, "base_examples_per_second",
			       c->pr[FX_EPS].base.median);
		rba_json_w_num(&w, "cand_examples_per_second",
			       c->pr[FX_EPS].cand.median);
		rba_json_w_close(&w, '}');
		rba_json_w_str(&w, "verdict", fx_verdict_name(c->verdict));
	} else {
		rba_json_w_str(&w, "verdict", NULL);
	}
	rba_json_w_close(&w, '}');
}

int
fx_compare_keep(struct store *st, struct fx_compare *c, struct fx_fault *f)
{
	struct store_txn *txn = NULL;
	struct rba_buf b;
	int err = 0;

	fx_fault_clear(f);
	if ((err = store_txn_begin(st, 1, 1u << 16, &txn, &f->d)))
		return fx_fail(f, err, FX_STEP_KEEP_COMPARISON, NULL, NULL);
	if (c->id[0] == 0) {
		c->declared_at = (int64_t)time(NULL);
		err = runs_id_new(txn, c->subject, c->declared_at, c->id, &f->d);
	}
	rba_buf_init(&b);
	fx_compare_render(c, &b);
	rba_buf_put_u8(&b, '\n');
	if (err == 0)
		err = rba_buf_status(&b);
	if (err == 0)
		err = store_run_put(txn, c->id, b.p, b.len, &f->d);
	if (err == 0)
		err = store_txn_commit(txn, &f->d);
	else
		store_txn_abort(txn);
	rba_buf_release(&b);
	if (err != 0)
		return fx_fail(f, err, FX_STEP_KEEP_COMPARISON,
			       c->id[0] ? c->id : c->subject, NULL);
	return 0;
}

/* ---- the decision ---------------------------------------------------- */

int
fx_compare_sizes(const struct fx_compare *c, struct fx_fault *f)
{
	if (c->a->n == c->b->n)
		return 0;
	fx_fault_clear(f);
	return fx_fail(f, RBA_E_USAGE, FX_STEP_COMPARE, c->cand,
		       "the sweeps have %zu and %zu seeds", c->a->n, c->b->n);
}

/* The paired statistics of every metric. */
static int
pair_metrics(struct fx_compare *c)
{
	const struct fx_sweep *a = c->a, *b = c->b;
	size_t n = a->n;

	for (int m = 0; m < FX_NMETRICS; m++) {
		double *x = calloc(n, sizeof(double)), *y = calloc(n, sizeof(double));
		if (x == NULL || y == NULL) {
			free(x);
			free(y);
			return RBA_E_NOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			x[i] = fx_metric_of(&a->runs[i], (enum fx_metric)m);
			y[i] = fx_metric_of(&b->runs[i], (enum fx_metric)m);
		}
		fx_paired_compute((enum fx_metric)m, x, y, n, c->alpha, &c->pr[m]);
		free(x);
		free(y);
	}
	return 0;
}

int
fx_compare_decide(struct fx_compare *c, const struct fx_expr *ex,
		  struct fx_fault *f)
{
	const struct fx_sweep *a = c->a, *b = c->b;
	struct rba_detail d;

	fx_fault_clear(f);
	for (size_t i = 0; i < a->n; i++)
		if (a->seeds[i] != b->seeds[i])
			return fx_fail(f, RBA_E_USAGE, FX_STEP_COMPARE, b->id,
				       "the two sweeps are not at the same "
				       "seeds: nothing to pair");
	c->fp_same = rba_digest_equal(&a->eval_fingerprint, &b->eval_fingerprint);
	c->v1 = !a->runs[0].has_eval || !b->runs[0].has_eval;
	if ((!c->fp_same || c->v1) && !c->allow)
		return fx_fail(f, RBA_E_USAGE, FX_STEP_COMPARE_REFUSE, b->id,
			       "the evaluation contract changed (eval "
			       "fingerprint %s); give --allow-contract-change "
			       "to compare anyway",
			       c->v1 ? "unknown" : "differs");
	/* Pins of two model kinds have no field-by-field edits: none are
	 * listed, and the comparison stands. */
	rba_detail_clear(&d);
	if (fx_edits(a->pins, b->pins, &c->edits, &c->nedits, &d) != 0)
		c->nedits = 0;
	if (pair_metrics(c) != 0)
		return fx_fail(f, RBA_E_NOMEM, FX_STEP_COMPARE, b->id, NULL);
	c->verdict = fx_verdict_decide(ex, c->pr);
	c->computed = 1;
	c->status = "decided";
	c->decided_at = (int64_t)time(NULL);
	return 0;
}
