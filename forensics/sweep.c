/*
 * sweep.c - training a sweep, keeping and reading its records
 * (sweep.h).
 */
#include "forensics/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "train/envrec.h"
#include "exec/exec.h"
#include "data/snapshot.h"

void
fx_sweep_release(struct fx_sweep *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; s->runs != NULL && i < s->n; i++)
		rebuild_runrec_release(&s->runs[i]);
	free(s->runs);
	free(s->seeds);
	free(s->ids);
	free(s->pins_text);
	policy_pins_free(s->pins);
	memset(s, 0, sizeof(*s));
}

/* ---- the snapshot ---------------------------------------------------- */

int
fx_snapshot_load(const struct fx_store *st, const struct rba_digest *want,
		 char *const *files, size_t nfiles, uint8_t **buf, size_t *n,
		 struct fx_fault *f)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	struct store_txn *txn = NULL;
	struct store *s = NULL;
	int err;

	rba_digest_format(want, hex);
	for (size_t i = 0; i < nfiles; i++) {
		struct rba_digest got;
		rba_detail_clear(&f->d);
		if ((err = rba_file_read(files[i], SNAPSHOT_MAX_LOAD, buf, n,
					 &f->d)))
			return fx_fail(f, err, FX_STEP_SNAPSHOT_READ, files[i],
				       NULL);
		rba_digest_bytes(*buf, *n, &got);
		if (rba_digest_equal(&got, want))
			return 0;
		free(*buf);
		*buf = NULL;
	}
	if (st->get(st->ctx, &s) != 0)
		return fx_fail(f, RBA_E_STORE, FX_STEP_STORE, NULL, NULL);
	rba_detail_clear(&f->d);
	if ((err = store_txn_begin(s, 0, 0, &txn, &f->d)))
		return fx_fail(f, err, FX_STEP_SNAPSHOT_FIND, hex, NULL);
	err = store_blob_load(txn, want, SNAPSHOT_MAX_LOAD, buf, n, &f->d);
	store_txn_abort(txn);
	if (err != 0)
		return fx_fail(f, err, FX_STEP_SNAPSHOT_LOAD, hex, NULL);
	return 0;
}

/* ---- training -------------------------------------------------------- */

/* The config hash of p with its seed set to 0: a sweep's identity. */
static void
hash_noseed(const struct pins *p, struct rba_digest *out)
{
	struct pins *q = policy_pins_dup(p);

	if (q == NULL) {
		policy_pins_config_hash(p, out);
		return;
	}
	q->train.seed = 0;
	policy_pins_config_hash(q, out);
	policy_pins_free(q);
}

/* What a sweep holds between its training and its keeping. */
struct trained {
	struct fx_seed_run *runs; /* n */
	char env_hex[RBA_DIGEST_TEXT_LEN + 1];
	unsigned jobs;
};

/* Step 1: out's arrays, and the results of the training. */
static int
sweep_alloc(const struct pins *p, const struct fx_sweep_plan *plan,
	    struct fx_sweep *out, struct trained *t, struct fx_fault *f)
{
	size_t n = plan->n;

	out->pins = policy_pins_dup(p);
	out->seeds = malloc(n * sizeof(uint64_t));
	out->ids = calloc(n, RUNS_ID_SIZE);
	out->runs = calloc(n, sizeof(*out->runs));
	t->runs = calloc(n, sizeof(*t->runs));
	if (out->pins == NULL || out->seeds == NULL || out->ids == NULL ||
	    out->runs == NULL || t->runs == NULL)
		return fx_fail(f, RBA_E_NOMEM, FX_STEP_SWEEP, p->version, NULL);
	memcpy(out->seeds, plan->seeds, n * sizeof(uint64_t));
	out->n = n;
	return 0;
}

/* Step 2: the snapshot, then every seed. */
static int
sweep_train(const struct fx_store *st, const struct pins *p,
	    const struct fx_sweep_plan *plan,
	    const struct fx_progress *progress, const char *label,
	    struct trained *t, struct fx_fault *f)
{
	struct rebuild_prepared *prep = NULL;
	uint8_t *snap = NULL;
	size_t snap_n = 0;
	int err;

	if ((err = fx_snapshot_load(st, &p->snapshot, plan->snaps,
				    plan->nsnaps, &snap, &snap_n, f)))
		return err;
	rba_detail_clear(&f->d);
	err = rebuild_prepare(p, snap, snap_n, p->version, &prep, &f->d);
	free(snap);
	if (err != 0)
		return fx_fail(f, err, FX_STEP_TRAIN,
			       f->d.file[0] ? f->d.file : p->version, NULL);
	err = fx_seeds_train(p, prep, plan->seeds, plan->n, plan->jobs,
			     progress, label, t->runs);
	rebuild_prepared_free(prep);
	for (size_t i = 0; err != 0 && i < plan->n; i++)
		if (t->runs[i].err) {
			char sub[64];
			snprintf(sub, sizeof(sub), "%s seed %" PRIu64,
				 p->version, t->runs[i].seed);
			f->d = t->runs[i].d;
			return fx_fail(f, t->runs[i].err, FX_STEP_TRAIN, sub,
				       NULL);
		}
	return err;
}

/* Step 3: what the records say besides the runs. */
static int
sweep_describe(const struct pins *p, struct fx_sweep *out, struct trained *t,
	       struct fx_fault *f)
{
	const struct trainer_kind *k = rebuild_trainer_kind(p);
	struct rba_digest envd;
	struct rba_buf env, text;
	int err;

	rba_buf_init(&env);
	/* An exec version's environment is its own record (exec.h), whose
	 * probe runs in the sandbox: its failure is one of training. */
	rba_detail_clear(&f->d);
	if ((err = k->envrec(p, &env, &f->d)) != 0) {
		rba_buf_release(&env);
		return fx_fail(f, err, k->sandboxed ? FX_STEP_TRAIN : FX_STEP_SWEEP,
			       p->version, NULL);
	}
	envrec_digest((const char *)env.p, env.len, &envd);
	rba_buf_release(&env);
	rba_digest_format(&envd, t->env_hex);
	hash_noseed(p, &out->config_hash);
	rba_buf_init(&text);
	policy_pins_canonical(p, &text);
	out->pins_text = (char *)rba_buf_steal(&text, NULL);
	rba_buf_release(&text);
	return 0;
}

static void
render_sweep(const struct fx_sweep *s, unsigned jobs, struct rba_buf *b)
{
	struct rba_json_w w;

	rba_json_w_init_pretty(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "schema", FX_SWEEP_SCHEMA);
	rba_json_w_str(&w, "version", s->pins->version);
	rba_json_w_digest(&w, "config_hash", &s->config_hash, 1);
	rba_json_w_u64(&w, "jobs", jobs);
	rba_json_w_num(&w, "wall_seconds", s->wall_seconds);
	rba_json_w_open_inline(&w, "seeds", '[');
	for (size_t i = 0; i < s->n; i++)
		rba_json_w_u64(&w, NULL, s->seeds[i]);
	rba_json_w_close(&w, ']');
	rba_json_w_open_inline(&w, "runs", '[');
	for (size_t i = 0; i < s->n; i++)
		rba_json_w_str(&w, NULL, s->ids + i * RUNS_ID_SIZE);
	rba_json_w_close(&w, ']');
	rba_json_w_str(&w, "pins", s->pins_text);
	rba_json_w_close(&w, '}');
	rba_buf_put_u8(b, '\n');
}

/*
 * Keeps the run record of seed i under a fresh id, and reads it back
 * into out->runs[i] (what fx_sweep_load would give).
 */
static int
keep_run(struct store_txn *txn, const struct pins *p, struct fx_sweep *out,
	 const struct trained *t, size_t i, int64_t now, struct rba_buf *b,
	 struct rba_detail *d)
{
	char subject[256];
	char *id = out->ids + i * RUNS_ID_SIZE;
	struct pins *q;
	int err;

	/* The record names the seed it trained. */
	snprintf(subject, sizeof(subject), "sweep/%s/s%" PRIu64, p->version,
		 out->seeds[i]);
	if ((err = runs_id_new(txn, subject, now, id, d)) != 0)
		return err;
	/* rebuild_runrec_render writes the pins' seed; the sweep's runs
	 * carry their own. */
	if ((q = policy_pins_dup(p)) == NULL)
		return RBA_E_NOMEM;
	q->train.seed = out->seeds[i];
	b->len = 0;
	rebuild_runrec_render(q, &t->runs[i].res, t->env_hex,
			      t->runs[i].wall_seconds, b);
	policy_pins_free(q);
	if ((err = rba_buf_status(b)) ||
	    (err = store_run_put(txn, id, b->p, b->len, d)))
		return err;
	return rebuild_runrec_parse(b->p, b->len, &out->runs[i], d);
}

/* Step 4: every run and the sweep, in one write transaction. */
static int
sweep_keep(const struct fx_store *st, const struct pins *p,
	   struct fx_sweep *out, const struct trained *t, struct fx_fault *f)
{
	char subject[256];
	struct store_txn *txn = NULL;
	struct store *s = NULL;
	struct rba_buf b;
	int64_t now;
	int err = 0;

	if (st->get(st->ctx, &s) != 0)
		return fx_fail(f, RBA_E_STORE, FX_STEP_STORE, NULL, NULL);
	rba_detail_clear(&f->d);
	if ((err = store_txn_begin(s, 1, 1u << 20, &txn, &f->d)))
		return fx_fail(f, err, FX_STEP_KEEP_RUNS, NULL, NULL);
	rba_buf_init(&b);
	now = (int64_t)time(NULL);
	for (size_t i = 0; err == 0 && i < out->n; i++)
		err = keep_run(txn, p, out, t, i, now, &b, &f->d);
	if (err == 0) {
		snprintf(subject, sizeof(subject), "sweep/%s", p->version);
		err = runs_id_new(txn, subject, now, out->id, &f->d);
	}
	if (err == 0) {
		b.len = 0;
		render_sweep(out, t->jobs, &b);
		err = rba_buf_status(&b);
		if (err == 0)
			err = store_run_put(txn, out->id, b.p, b.len, &f->d);
	}
	rba_buf_release(&b);
	if (err == 0)
		err = store_txn_commit(txn, &f->d);
	else
		store_txn_abort(txn);
	if (err != 0)
		return fx_fail(f, err, FX_STEP_KEEP_RUNS, NULL, NULL);
	out->eval_fingerprint = out->runs[0].eval_fingerprint;
	out->snapshot = p->snapshot;
	snprintf(out->environment, sizeof(out->environment), "%s", t->env_hex);
	return 0;
}

int
fx_sweep_run(const struct fx_store *st, const struct pins *p,
	     const struct fx_sweep_plan *plan,
	     const struct fx_progress *progress, const char *label,
	     struct fx_sweep *out, struct fx_fault *f)
{
	struct trained t;
	double t0 = rba_time_mono();
	int err;

	memset(out, 0, sizeof(*out));
	memset(&t, 0, sizeof(t));
	t.jobs = plan->jobs;
	fx_fault_clear(f);
	if ((err = sweep_alloc(p, plan, out, &t, f)) == 0 &&
	    (err = sweep_train(st, p, plan, progress, label, &t, f)) == 0) {
		out->wall_seconds = rba_time_mono() - t0;
		if ((err = sweep_describe(p, out, &t, f)) == 0)
			err = sweep_keep(st, p, out, &t, f);
	}
	if (err != 0)
		fx_sweep_release(out);
	fx_seed_runs_release(t.runs, t.runs ? plan->n : 0);
	free(t.runs);
	return err;
}

/* ---- reading back ---------------------------------------------------- */

/* The run records a sweep record names, into out (its arrays made). */
static int
load_runs(struct store_txn *txn, const struct rba_json_value *seeds,
	  const struct rba_json_value *runs, struct fx_sweep *out,
	  struct rba_detail *d)
{
	uint8_t *p = NULL;
	size_t n = 0;
	int err = 0;

	for (size_t i = 0; err == 0 && i < out->n; i++) {
		char *rid = out->ids + i * RUNS_ID_SIZE;
		out->seeds[i] = (uint64_t)seeds->items[i].num;
		snprintf(rid, RUNS_ID_SIZE, "%s",
			 runs->items[i].str ? runs->items[i].str : "");
		err = store_run_get(txn, rid, &p, &n, d);
		if (err == 0)
			err = rebuild_runrec_parse(p, n, &out->runs[i], d);
		free(p);
		p = NULL;
		if (err)
			rba_detail_key(d, rid);
	}
	return err;
}

/* The sweep record id, parsed into root; 0 or the failing step's error. */
static int
get_record(struct store_txn *txn, const char *id, struct rba_json_value *root,
	   struct fx_fault *f)
{
	const char *schema;
	uint8_t *p = NULL;
	size_t n = 0;
	int err;

	if ((err = store_run_get(txn, id, &p, &n, &f->d)))
		return fx_fail(f, err, FX_STEP_READ_RUN, id, NULL);
	err = rba_json_parse((const char *)p, n, root, &f->d);
	free(p);
	schema = err ? NULL : rba_json_get_str(root, "schema");
	if (schema == NULL || strcmp(schema, FX_SWEEP_SCHEMA) != 0)
		return fx_fail(f, RBA_E_USAGE, FX_STEP_READ_SWEEP, id,
			       "not a sweep");
	return 0;
}

int
fx_sweep_load(struct store_txn *txn, const char *id, struct fx_sweep *out,
	      struct fx_fault *f)
{
	struct rba_json_value root;
	const struct rba_json_value *seeds, *runs;
	const char *pt;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&root, 0, sizeof(root));
	fx_fault_clear(f);
	if ((err = get_record(txn, id, &root, f)) != 0) {
		rba_json_release(&root);
		return err;
	}
	seeds = rba_json_get(&root, "seeds");
	runs = rba_json_get(&root, "runs");
	pt = rba_json_get_str(&root, "pins");
	if (seeds == NULL || runs == NULL || pt == NULL ||
	    seeds->type != RBA_JSON_ARRAY || runs->type != RBA_JSON_ARRAY ||
	    seeds->n != runs->n || seeds->n == 0) {
		rba_json_release(&root);
		return fx_fail(f, RBA_E_CORRUPT, FX_STEP_READ_SWEEP, id,
			       "malformed sweep record");
	}
	snprintf(out->id, sizeof(out->id), "%s", id);
	out->n = seeds->n;
	out->seeds = calloc(out->n, sizeof(uint64_t));
	out->ids = calloc(out->n, RUNS_ID_SIZE);
	out->runs = calloc(out->n, sizeof(*out->runs));
	out->pins_text = strdup(pt);
	out->wall_seconds = rba_json_get_num(&root, "wall_seconds", NAN);
	if (out->seeds == NULL || out->ids == NULL || out->runs == NULL ||
	    out->pins_text == NULL) {
		rba_json_release(&root);
		fx_sweep_release(out);
		rba_detail_clear(&f->d);
		return fx_fail(f, RBA_E_NOMEM, FX_STEP_READ_SWEEP, id, NULL);
	}
	err = policy_pins_parse(out->pins_text, strlen(out->pins_text), id,
				&out->pins, &f->d);
	if (err == 0)
		err = load_runs(txn, seeds, runs, out, &f->d);
	rba_json_release(&root);
	if (err != 0) {
		fx_sweep_release(out);
		return fx_fail(f, err, FX_STEP_READ_SWEEP, id, NULL);
	}
	hash_noseed(out->pins, &out->config_hash);
	out->eval_fingerprint = out->runs[0].eval_fingerprint;
	out->snapshot = out->pins->snapshot;
	snprintf(out->environment, sizeof(out->environment), "%s",
		 out->runs[0].environment);
	return 0;
}

void
fx_sweep_stat(const struct fx_sweep *s, enum fx_metric m, struct fx_stat *out)
{
	double *x = calloc(s->n ? s->n : 1, sizeof(double));

	for (size_t i = 0; x != NULL && i < s->n; i++)
		x[i] = fx_metric_of(&s->runs[i], m);
	fx_stat_compute(x, x != NULL ? s->n : 0, out);
	free(x);
}
