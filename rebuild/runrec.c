/*
 * runrec.c - the run record (runrec.h).  Moved from cli/cmd_train.c,
 * whose %.17g numbers became common/json.h's shortest round-trip form.
 */
#include "rebuild/runrec.h"

#include "exec/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/digest.h"
#include "common/fileio.h"
#include "common/json.h"
#include "train/envrec.h"

/* Literal layout text (rba_buf_put_str would length-prefix it). */
static void
put_text(struct rba_buf *b, const char *s)
{
	rba_buf_put(b, s, strlen(s));
}

/*
 * run/v2's own layout: one top-level member a line ("{\n  ", ",\n  ",
 * "\n}\n"), each value in the compact layout.  Neither of
 * common/json.h's writers lays a record out so; its members are written
 * here, each value by the compact writer as an outermost value.
 */
struct lines {
	struct rba_buf *b;
	int n;			/* members so far */
	struct rba_json_w w;	/* the value of the member being written */
};

/* The next member's line and key; write its value with the result. */
static struct rba_json_w *
line(struct lines *l, const char *key)
{
	put_text(l->b, l->n++ ? ",\n  " : "{\n  ");
	rba_json_put_key(l->b, key);
	rba_json_w_init(&l->w, l->b);
	return &l->w;
}

/* The four metrics of an epoch, in one line's object. */
static void
put_epoch(struct rba_json_w *w, const struct rebuild_epoch *ep)
{
	rba_json_w_num(w, "train_loss", ep->train_loss);
	rba_json_w_num(w, "val_loss", ep->val_loss);
	rba_json_w_num(w, "val_acc", ep->val_acc);
	rba_json_w_num(w, "val_auc", ep->val_auc);
}

/* The curves: one epoch's object a line, under the record's lines. */
static void
put_curves(struct lines *l, const struct rebuild_report *r)
{
	struct rba_json_w w;

	rba_buf_put_u8(l->b, '[');
	for (uint32_t e = 0; e < r->epochs; e++) {
		put_text(l->b, e ? ",\n    " : "\n    ");
		rba_json_w_init(&w, l->b);
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_u64(&w, "epoch", e + 1);
		put_epoch(&w, &r->curve[e]);
		rba_json_w_close(&w, '}');
	}
	put_text(l->b, "\n  ]");
}

/* The evaluation's contract and measures. */
static void
put_eval(struct rba_json_w *w, const struct rebuild_result *res)
{
	rba_json_w_open(w, NULL, '{');
	if (res->contract.subset_rows)
		rba_json_w_u64(w, "subset", res->contract.subset_rows);
	else
		rba_json_w_str(w, "subset", "all");
	rba_json_w_str(w, "reduction", res->contract.sum ? "sum" : "mean");
	rba_json_w_str(w, "dropout", res->contract.dropout ? "on" : "off");
	rba_json_w_num(w, "input_scale", res->contract.input_scale);
	rba_json_w_u64(w, "rows", res->eval.rows);
	rba_json_w_num(w, "loss", res->eval.loss);
	rba_json_w_num(w, "acc", res->eval.acc);
	rba_json_w_num(w, "auc", res->eval.auc);
	rba_json_w_close(w, '}');
}

void
rebuild_runrec_render(const struct pins *p, const struct rebuild_result *res,
		      const char *env_hex, double wall_seconds,
		      struct rba_buf *b)
{
	const struct rebuild_report *r = &res->report;
	struct lines l = { b, 0, { 0 } };
	struct rba_json_w *w;
	struct rba_digest cfg;

	policy_pins_config_hash(p, &cfg);
	rba_json_w_str(line(&l, "schema"), NULL, "rebuild-audit/run/v2");
	rba_json_w_str(line(&l, "version"), NULL, p->version);
	rba_json_w_digest(line(&l, "config_hash"), NULL, &cfg, 1);
	rba_json_w_digest(line(&l, "eval_fingerprint"), NULL,
			  &res->eval.fingerprint, 1);
	rba_json_w_digest(line(&l, "snapshot"), NULL, &p->snapshot, 1);
	rba_json_w_str(line(&l, "environment"), NULL, env_hex);
	/* an exec version's code is its pinned commit, not this tool (a
	 * sweep's records of exec pins are of this schema too) */
	rba_json_w_str(line(&l, "code_revision"), NULL,
		       rebuild_trainer_kind(p)->code_revision(p));
	rba_json_w_u64(line(&l, "trainer_abi"), NULL, res->abi);
	rba_json_w_u64(line(&l, "seed"), NULL, p->train.seed);
	rba_json_w_str(line(&l, "mode"), NULL,
		       p->determinism.mode == PINS_DET_FAST ? "fast" : "strict");
	rba_json_w_u64(line(&l, "threads"), NULL, p->determinism.threads);
	rba_json_w_digest(line(&l, "artifact"), NULL, &res->digest, 1);
	w = line(&l, "examples");
	rba_json_w_open(w, NULL, '{');
	rba_json_w_u64(w, "train", res->ntrain);
	rba_json_w_u64(w, "validation", res->nval);
	rba_json_w_u64(w, "features", res->nfeatures);
	rba_json_w_u64(w, "classes", res->nclasses);
	rba_json_w_close(w, '}');
	line(&l, "curves");
	put_curves(&l, r);
	w = line(&l, "final");
	rba_json_w_open(w, NULL, '{');
	put_epoch(w, &r->final);
	rba_json_w_close(w, '}');
	put_eval(line(&l, "eval"), res);
	rba_json_w_num(line(&l, "examples_per_second"), NULL,
		       r->examples_per_second);
	rba_json_w_num(line(&l, "train_seconds"), NULL, r->train_seconds);
	rba_json_w_num(line(&l, "wall_seconds"), NULL, wall_seconds);
	put_text(b, "\n}\n");
}

int
rebuild_runrec_write(const char *path, const struct pins *p,
		     const struct rebuild_result *res, const char *env_hex,
		     double wall_seconds)
{
	struct rba_buf b;
	int err;

	rba_buf_init(&b);
	rebuild_runrec_render(p, res, env_hex, wall_seconds, &b);
	if ((err = rba_buf_status(&b)) == 0)
		err = rba_file_write_atomic(path, b.p, b.len, 0644);
	rba_buf_release(&b);
	return err;
}

/* A member that must be a number or null (NaN); 0 or -1 when neither. */
static int
get_metric(const struct rba_json_value *obj, const char *key, double *out)
{
	const struct rba_json_value *v = rba_json_get(obj, key);

	if (v != NULL && v->type == RBA_JSON_NUMBER) {
		*out = v->num;
		return 0;
	}
	if (v != NULL && v->type == RBA_JSON_NULL) {
		*out = NAN;
		return 0;
	}
	return -1;
}

/* A member that must be an integer in 0..max. */
static int
get_count(const struct rba_json_value *obj, const char *key, uint64_t max,
	  uint64_t *out)
{
	const struct rba_json_value *v = rba_json_get(obj, key);

	if (v == NULL || v->type != RBA_JSON_NUMBER || !(v->num >= 0) ||
	    v->num > (double)max || v->num != floor(v->num))
		return -1;
	*out = (uint64_t)v->num;
	return 0;
}

int
rebuild_runrec_summary_parse(const void *text, size_t n,
			     struct rebuild_runrec_summary *out,
			     struct rba_detail *d)
{
	static const char tag[] = "rebuild-audit/run/v";
	struct rba_json_value root;
	const struct rba_json_value *ex, *fin, *curves;
	const char *schema, *bad = NULL;
	uint64_t abi = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = rba_json_parse(text, n, &root, d)) != 0) {
		if (err == RBA_E_NOMEM)
			return err;
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"run record: not JSON");
	}
	schema = rba_json_get_str(&root, "schema");
	if (schema != NULL && strcmp(schema, RUNREC_EXEC_SCHEMA) == 0) {
		/* An exec training: its artifact, no curves or metrics. */
		err = rba_json_get_str(&root, "artifact") == NULL ||
		      rba_digest_parse(rba_json_get_str(&root, "artifact"),
				       &out->artifact) != 0;
		out->val_loss = out->val_acc = out->val_auc = NAN;
		out->examples_per_second = NAN;
		out->train_seconds = rba_json_get_num(&root, "seconds", NAN);
		rba_json_release(&root);
		if (err)
			return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
					"run record: 'artifact' is missing or "
					"malformed");
		return 0;
	}
	if (schema == NULL || strncmp(schema, tag, sizeof(tag) - 1) != 0) {
		rba_json_release(&root);
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"not a run record (no schema %s1)", tag);
	}
	if (strcmp(schema + sizeof(tag) - 1, "1") != 0 &&
	    strcmp(schema + sizeof(tag) - 1, "2") != 0) {
		/* the message before the release: schema is root's */
		err = rba_fail(d, RBA_E_NEWER, NULL, 0, 0,
			       "run record of a newer format ('%s')", schema);
		rba_json_release(&root);
		return err;
	}
	ex = rba_json_get(&root, "examples");
	fin = rba_json_get(&root, "final");
	curves = rba_json_get(&root, "curves");
	if (rba_json_get_str(&root, "artifact") == NULL ||
	    rba_digest_parse(rba_json_get_str(&root, "artifact"),
			     &out->artifact) != 0)
		bad = "artifact";
	else if (get_count(&root, "trainer_abi", UINT32_MAX, &abi) != 0)
		bad = "trainer_abi";
	else if (curves == NULL || curves->type != RBA_JSON_ARRAY ||
		 curves->n > UINT32_MAX)
		bad = "curves";
	else if (ex == NULL || ex->type != RBA_JSON_OBJECT ||
		 get_count(ex, "train", UINT64_MAX, &out->ntrain) != 0 ||
		 get_count(ex, "validation", UINT64_MAX, &out->nval) != 0)
		bad = "examples";
	else if (fin == NULL || fin->type != RBA_JSON_OBJECT ||
		 get_metric(fin, "val_loss", &out->val_loss) != 0 ||
		 get_metric(fin, "val_acc", &out->val_acc) != 0 ||
		 get_metric(fin, "val_auc", &out->val_auc) != 0)
		bad = "final";
	else if (get_metric(&root, "examples_per_second",
			    &out->examples_per_second) != 0)
		bad = "examples_per_second";
	else if (get_metric(&root, "train_seconds", &out->train_seconds) != 0)
		bad = "train_seconds";
	if (bad == NULL) {
		out->trainer_abi = (uint32_t)abi;
		out->epochs = (uint32_t)curves->n;
	}
	rba_json_release(&root);
	if (bad != NULL)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"run record: '%s' is missing or malformed", bad);
	return 0;
}

void
rebuild_runrec_release(struct rebuild_runrec *r)
{
	if (r == NULL)
		return;
	free(r->version);
	free(r->environment);
	free(r->code_revision);
	free(r->contract);
	free(r->curve);
	memset(r, 0, sizeof(*r));
}

static int
get_digest(const struct rba_json_value *o, const char *key,
	   struct rba_digest *out)
{
	const char *s = rba_json_get_str(o, key);

	return s != NULL && rba_digest_parse(s, out) == 0 ? 0 : -1;
}

static int
dup_str(const struct rba_json_value *o, const char *key, char **out)
{
	const char *s = rba_json_get_str(o, key);

	if (s == NULL)
		return -1;
	return (*out = strdup(s)) == NULL ? -2 : 0;
}

static int
get_epoch(const struct rba_json_value *o, struct rebuild_epoch *ep)
{
	if (o == NULL || o->type != RBA_JSON_OBJECT)
		return -1;
	if (get_metric(o, "train_loss", &ep->train_loss) ||
	    get_metric(o, "val_loss", &ep->val_loss) ||
	    get_metric(o, "val_acc", &ep->val_acc) ||
	    get_metric(o, "val_auc", &ep->val_auc))
		return -1;
	return 0;
}

/*
 * The record's own fields, its class count and final epoch (threads
 * into *threads): NULL, or the name of the first one missing or
 * malformed ("" when out of memory).
 */
static const char *
runrec_fields(const struct rba_json_value *root, struct rebuild_runrec *out,
	      uint64_t *threads)
{
	const struct rba_json_value *ex = rba_json_get(root, "examples");
	int r;

	if ((r = dup_str(root, "version", &out->version)) != 0)
		return r == -2 ? "" : "version";
	if ((r = dup_str(root, "environment", &out->environment)) != 0)
		return r == -2 ? "" : "environment";
	if ((r = dup_str(root, "code_revision", &out->code_revision)) != 0)
		return r == -2 ? "" : "code_revision";
	if (get_digest(root, "config_hash", &out->config_hash))
		return "config_hash";
	if (get_digest(root, "snapshot", &out->snapshot))
		return "snapshot";
	if (get_count(root, "seed", UINT64_MAX, &out->seed))
		return "seed";
	if (get_count(root, "threads", UINT32_MAX, threads))
		return "threads";
	if (get_count(ex, "classes", UINT32_MAX, &out->eval_rows))
		return "examples";
	if (get_epoch(rba_json_get(root, "final"), &out->final))
		return "final";
	if (get_metric(root, "wall_seconds", &out->wall_seconds))
		return "wall_seconds";
	return NULL;
}

/*
 * Format 2's evaluation: its fingerprint, its measures and the contract
 * as text: NULL, "eval" when missing or malformed, "" when out of
 * memory.
 */
static const char *
runrec_eval(const struct rba_json_value *root, struct rebuild_runrec *out)
{
	const struct rba_json_value *ev = rba_json_get(root, "eval");
	const struct rba_json_value *sub = rba_json_get(ev, "subset");
	const char *red = rba_json_get_str(ev, "reduction");
	const char *dro = rba_json_get_str(ev, "dropout");
	double scale = NAN;
	char sbuf[32], txt[160], num[RBA_JSON_NUM_MAX];

	if (get_digest(root, "eval_fingerprint", &out->eval_fingerprint) ||
	    ev == NULL || ev->type != RBA_JSON_OBJECT || sub == NULL ||
	    red == NULL || dro == NULL ||
	    get_metric(ev, "input_scale", &scale) ||
	    get_count(ev, "rows", UINT64_MAX, &out->eval_rows) ||
	    get_metric(ev, "loss", &out->eval_loss) ||
	    get_metric(ev, "acc", &out->eval_acc) ||
	    get_metric(ev, "auc", &out->eval_auc))
		return "eval";
	if (sub->type == RBA_JSON_STRING)
		snprintf(sbuf, sizeof(sbuf), "%s", sub->str);
	else
		snprintf(sbuf, sizeof(sbuf), "%.0f", sub->num);
	rba_json_fmt_double(scale, num);
	snprintf(txt, sizeof(txt),
		 "subset %s, reduction %s, dropout %s, "
		 "input_scale %s",
		 sbuf, red, dro, num);
	out->has_eval = 1;
	if ((out->contract = strdup(txt)) == NULL)
		return "";
	return NULL;
}

int
rebuild_runrec_parse(const void *text, size_t n, struct rebuild_runrec *out,
		     struct rba_detail *d)
{
	struct rebuild_runrec_summary sm;
	struct rba_json_value root;
	const struct rba_json_value *curves;
	const char *bad = NULL, *schema;
	uint64_t u = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = rebuild_runrec_summary_parse(text, n, &sm, d)) != 0)
		return err;
	if ((err = rba_json_parse(text, n, &root, d)) != 0)
		return err == RBA_E_NOMEM ? err
					  : rba_fail(d, RBA_E_CORRUPT, NULL, 0,
						     0, "run record: not JSON");
	schema = rba_json_get_str(&root, "schema");
	out->format = strcmp(schema, "rebuild-audit/run/v2") == 0 ? 2 : 1;
	out->artifact = sm.artifact;
	out->trainer_abi = sm.trainer_abi;
	out->ntrain = sm.ntrain;
	out->nval = sm.nval;
	out->examples_per_second = sm.examples_per_second;
	out->train_seconds = sm.train_seconds;
	curves = rba_json_get(&root, "curves");
	bad = runrec_fields(&root, out, &u);
	if (bad == NULL) {
		const char *mode = rba_json_get_str(&root, "mode");
		out->threads = (uint32_t)u;
		out->nclasses = (uint32_t)out->eval_rows;
		out->fast = mode != NULL && strcmp(mode, "fast") == 0;
		out->epochs = sm.epochs;
		out->curve = calloc(sm.epochs ? sm.epochs : 1,
				    sizeof(*out->curve));
		if (out->curve == NULL)
			bad = "";
		for (uint32_t e = 0; bad == NULL && e < sm.epochs; e++)
			if (get_epoch(&curves->items[e], &out->curve[e]))
				bad = "curves";
	}
	if (bad == NULL && out->format == 2) {
		bad = runrec_eval(&root, out);
	} else if (bad == NULL) {
		out->eval_rows = out->nval;
		out->eval_loss = out->final.val_loss;
		out->eval_acc = out->final.val_acc;
		out->eval_auc = out->final.val_auc;
	}
	rba_json_release(&root);
	if (bad != NULL) {
		rebuild_runrec_release(out);
		if (bad[0] == 0)
			return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0,
					"out of memory");
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"run record: '%s' is missing or malformed", bad);
	}
	return 0;
}
