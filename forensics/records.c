/*
 * records.c - telling the run records of a store apart and summing
 * them up (records.h).
 */
#include "forensics/records.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum fx_record_kind
fx_record_kind_of(const char *p)
{
	if (strstr(p, "\"rebuild-audit/compare/") != NULL)
		return FX_RECORD_COMPARE;
	if (strstr(p, "\"rebuild-audit/sweep/v1\"") != NULL)
		return FX_RECORD_SWEEP;
	return FX_RECORD_RUN;
}

struct list_ctx {
	const char *version;
	int (*cb)(void *ctx, const struct fx_record_entry *e);
	void *ctx;
};

/* The entry of a parsed record whose schema is schema. */
static void
entry_of(const struct rba_json_value *root, const char *schema,
	 struct fx_record_entry *e)
{
	if (strncmp(schema, "rebuild-audit/run/", 18) == 0) {
		const struct rba_json_value *ev = rba_json_get(root, "eval");
		const struct rba_json_value *fin = rba_json_get(root, "final");
		e->kind = FX_RECORD_RUN;
		e->val_loss = ev ? rba_json_get_num(ev, "loss", 0)
				 : rba_json_get_num(fin, "val_loss", 0);
		e->seed = rba_json_get_num(root, "seed", 0);
	} else if (strcmp(schema, "rebuild-audit/sweep/v1") == 0) {
		const struct rba_json_value *s = rba_json_get(root, "seeds");
		e->kind = FX_RECORD_SWEEP;
		e->seeds = s ? s->n : 0;
	} else if (strncmp(schema, "rebuild-audit/compare/", 22) == 0) {
		const char *vd = rba_json_get_str(root, "verdict");
		const char *st = rba_json_get_str(root, "status");
		e->kind = FX_RECORD_COMPARE;
		e->state = vd && vd[0] ? vd
			   : st && strcmp(st, "declared") ? st : "(declared)";
	} else {
		e->kind = FX_RECORD_OTHER;
	}
}

static int
list_one(void *c, const char *id, const uint8_t *p, size_t n)
{
	struct list_ctx *lc = c;
	struct rba_json_value root;
	struct fx_record_entry e;
	const char *schema;
	int r;

	memset(&e, 0, sizeof(e));
	e.id = id;
	if (rba_json_parse((const char *)p, n, &root, NULL) != 0) {
		e.kind = FX_RECORD_UNREADABLE;
		return lc->cb(lc->ctx, &e);
	}
	schema = rba_json_get_str(&root, "schema");
	e.version = rba_json_get_str(&root, "version");
	e.schema = schema ? schema : "?";
	if (lc->version != NULL &&
	    (e.version == NULL || strcmp(e.version, lc->version))) {
		rba_json_release(&root);
		return 0;
	}
	entry_of(&root, e.schema, &e);
	r = lc->cb(lc->ctx, &e);
	rba_json_release(&root);
	return r;
}

int
fx_records_list(struct store_txn *txn, const char *version,
		int (*cb)(void *ctx, const struct fx_record_entry *e),
		void *ctx, struct rba_detail *d)
{
	struct list_ctx lc = { version, cb, ctx };

	return store_run_list(txn, list_one, &lc, d);
}

int
fx_compare_summary_parse(const void *text, size_t n,
			 struct fx_compare_summary *out, struct rba_detail *d)
{
	struct rba_json_value *root = &out->root;
	const struct rba_json_value *cor;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = rba_json_parse(text, n, root, d)) != 0)
		return err;
	out->status = rba_json_get_str(root, "status");
	out->base = rba_json_get_str(root, "base");
	out->cand = rba_json_get_str(root, "cand");
	out->hypothesis = rba_json_get_str(root, "hypothesis");
	out->success = rba_json_get_str(root, "success");
	out->verdict = rba_json_get_str(root, "verdict");
	out->declared_at = rba_json_get_num(root, "declared_at", -1);
	out->decided_at = rba_json_get_num(root, "decided_at", -1);
	cor = rba_json_get(root, "correctness");
	if (cor == NULL || cor->type != RBA_JSON_ARRAY || cor->n == 0)
		return 0;
	if ((out->metrics = calloc(cor->n, sizeof(*out->metrics))) == NULL)
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	for (size_t i = 0; i < cor->n; i++) {
		const struct rba_json_value *m = &cor->items[i];
		struct fx_compare_metric *o = &out->metrics[i];
		o->metric = rba_json_get_str(m, "metric");
		o->finding = rba_json_get_str(m, "finding");
		o->delta_median = rba_json_get_num(rba_json_get(m, "delta"),
						   "median", NAN);
		o->p = rba_json_get_num(m, "p", NAN);
	}
	out->nmetrics = cor->n;
	return 0;
}

void
fx_compare_summary_release(struct fx_compare_summary *s)
{
	if (s == NULL)
		return;
	free(s->metrics);
	rba_json_release(&s->root);
	memset(s, 0, sizeof(*s));
}
