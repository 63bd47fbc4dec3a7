/*
 * cli_forensics.c - what sweep, compare, gate, bisect and runs share:
 * finding snapshots, running and keeping sweeps, reading them back, and
 * drawing curves (terminal and SVG).  Declared in commands.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "forensics/forensics.h"
#include "rebuild/runs.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "rebuild/envrec.h"
#include "store/store.h"

int
cli_fx_snapshot(struct cli_ctx *ctx, const struct rba_digest *want,
		char *const *files, size_t nfiles, uint8_t **buf, size_t *n)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	struct rba_detail d;
	struct store_txn *txn = NULL;
	int err;

	rba_digest_format(want, hex);
	for (size_t i = 0; i < nfiles; i++) {
		struct rba_digest got;
		rba_detail_clear(&d);
		if ((err = rba_file_read(files[i], REBUILD_MAX_SNAPSHOT, buf, n,
					 &d)))
			return cli_fail("cannot read snapshot", files[i], err, &d);
		rba_digest_bytes(*buf, *n, &got);
		if (rba_digest_equal(&got, want))
			return 0;
		free(*buf);
		*buf = NULL;
	}
	/* Writable: the runs trained from it are kept in the same store. */
	if (cli_store_open(ctx, 0) ||
	    cli_txn_begin(ctx, 0, 0, "cannot find snapshot", hex, &txn))
		return 2;
	rba_detail_clear(&d);
	err = store_blob_load(txn, want, REBUILD_MAX_SNAPSHOT, buf, n, &d);
	store_txn_abort(txn);
	if (err != 0)
		return cli_fail("cannot load snapshot", hex, err, &d);
	return 0;
}

void
cli_sweep_release(struct cli_sweep *s)
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

static void
sweep_progress(void *c, size_t done, size_t total)
{
	const char *what = c;

	fprintf(stderr, "\r%s: seed %zu/%zu", what, done, total);
	fflush(stderr);
}

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

static void
render_sweep(const struct cli_sweep *s, unsigned jobs, struct rba_buf *b)
{
	char h[RBA_DIGEST_TEXT_LEN + 1];

	rba_buf_printf(b, "{\n  ");
	rba_json_kv_str(b, "schema", "rebuild-audit/sweep/v1", 0);
	rba_buf_printf(b, ",\n  ");
	rba_json_kv_str(b, "version", s->pins->version, 0);
	rba_digest_format(&s->config_hash, h);
	rba_buf_printf(b, ",\n  ");
	rba_json_kv_str(b, "config_hash", h, 0);
	rba_buf_printf(b, ",\n  ");
	rba_json_kv_u64(b, "jobs", jobs, 0);
	rba_buf_printf(b, ",\n  ");
	rba_json_kv_num(b, "wall_seconds", s->wall_seconds, 0);
	rba_buf_printf(b, ",\n  \"seeds\": [");
	for (size_t i = 0; i < s->n; i++)
		rba_buf_printf(b, "%s%" PRIu64, i ? ", " : "", s->seeds[i]);
	rba_buf_printf(b, "],\n  \"runs\": [");
	for (size_t i = 0; i < s->n; i++) {
		rba_buf_printf(b, "%s", i ? ", " : "");
		rba_json_put_str(b, s->ids + i * RUNS_ID_SIZE);
	}
	rba_buf_printf(b, "],\n  ");
	rba_json_kv_str(b, "pins", s->pins_text, 0);
	rba_buf_printf(b, "\n}\n");
}

void
cli_sweep_loss_stat(const struct cli_sweep *s, struct fx_stat *st)
{
	double *x = calloc(s->n ? s->n : 1, sizeof(double));

	for (size_t i = 0; x != NULL && i < s->n; i++)
		x[i] = s->runs[i].eval_loss;
	fx_stat_compute(x, x != NULL ? s->n : 0, st);
	free(x);
}

void
cli_fx_opts_init(struct cli_fx_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->jobs = 1;
}

int
cli_fx_opt(struct cli_ctx *ctx, int argc, char **argv, int *i,
	   struct cli_fx_opts *o)
{
	const char *v;
	int r;

	if ((r = cli_opt_value(argc, argv, i, "--seeds", &v)) != 0) {
		if (r < 0)
			return cli_usage(ctx, "--seeds needs A-B");
		o->seeds = v;
	} else if ((r = cli_opt_value(argc, argv, i, "-j", &v)) != 0) {
		if (r < 0 || cli_parse_u64(v, FX_MAX_JOBS, &o->jobs) || !o->jobs)
			return cli_usage(ctx, "-j is 1 to %u", FX_MAX_JOBS);
	} else if ((r = cli_opt_value(argc, argv, i, "--snapshot", &v)) != 0) {
		if (r < 0 || o->nsnaps == CLI_FX_MAX_SNAPS)
			return cli_usage(ctx, "--snapshot needs a file");
		o->snaps[o->nsnaps++] = (char *)v;
	} else {
		return 0;
	}
	return 1;
}

int
cli_sweep_run(struct cli_ctx *ctx, const struct pins *p, const uint64_t *seeds,
	      size_t n, unsigned jobs, char *const *snaps, size_t nsnaps,
	      const char *label, struct cli_sweep *out)
{
	struct rba_detail d;
	struct rebuild_prepared *prep = NULL;
	struct fx_seed_run *runs = NULL;
	struct fx_progress prog = { sweep_progress, (void *)label };
	struct store_txn *txn = NULL;
	struct rba_buf env, b;
	struct rba_digest envd;
	char env_hex[RBA_DIGEST_TEXT_LEN + 1], subject[256];
	uint8_t *snap = NULL;
	size_t snap_n = 0;
	double t0 = rba_time_mono();
	int64_t now;
	int err, status = 2;

	memset(out, 0, sizeof(*out));
	rba_buf_init(&env);
	rba_buf_init(&b);
	rba_detail_clear(&d);
	out->pins = policy_pins_dup(p);
	out->seeds = malloc(n * sizeof(uint64_t));
	out->ids = calloc(n, RUNS_ID_SIZE);
	out->runs = calloc(n, sizeof(*out->runs));
	runs = calloc(n, sizeof(*runs));
	if (out->pins == NULL || out->seeds == NULL || out->ids == NULL ||
	    out->runs == NULL || runs == NULL) {
		status = cli_fail("cannot sweep", p->version, RBA_E_NOMEM, NULL);
		goto done;
	}
	memcpy(out->seeds, seeds, n * sizeof(uint64_t));
	out->n = n;
	if ((status = cli_fx_snapshot(ctx, &p->snapshot, snaps, nsnaps, &snap,
				      &snap_n)) != 0)
		goto done;
	status = 2;
	if ((err = rebuild_prepare(p, snap, snap_n, p->version, &prep, &d))) {
		status = cli_fail("cannot train", d.file[0] ? d.file : p->version,
				  err, &d);
		goto done;
	}
	err = fx_sweep_train(p, prep, seeds, n, jobs,
			     ctx->progress ? &prog : NULL, runs);
	if (ctx->progress)
		fputs("\r\033[K", stderr);
	if (err != 0) {
		for (size_t i = 0; i < n; i++)
			if (runs[i].err) {
				char sub[64];
				snprintf(sub, sizeof(sub), "%s seed %" PRIu64,
					 p->version, runs[i].seed);
				status = cli_fail("cannot train", sub,
						  runs[i].err, &runs[i].d);
				break;
			}
		goto done;
	}
	out->wall_seconds = rba_time_mono() - t0;
	if (envrec_capture(p->determinism.mode, p->determinism.threads, &env)) {
		status = cli_fail("cannot sweep", p->version, RBA_E_NOMEM, NULL);
		goto done;
	}
	envrec_digest((const char *)env.p, env.len, &envd);
	rba_digest_format(&envd, env_hex);
	hash_noseed(p, &out->config_hash);
	{
		struct rba_buf t;
		rba_buf_init(&t);
		policy_pins_canonical(p, &t);
		out->pins_text = (char *)rba_buf_steal(&t, NULL);
		rba_buf_release(&t);
	}
	if (cli_txn_begin(ctx, 1, 1u << 20, "cannot keep runs", ctx->store_path,
			  &txn)) {
		status = 2;
		goto done;
	}
	now = (int64_t)time(NULL);
	for (size_t i = 0; i < n; i++) {
		char *id = out->ids + i * RUNS_ID_SIZE;
		/* The record names the seed it trained. */
		snprintf(subject, sizeof(subject), "sweep/%s/s%" PRIu64,
			 p->version, seeds[i]);
		if ((err = runs_id_new(txn, subject, now, id, &d)) != 0)
			break;
		{
			/* rebuild_runrec_render writes the pins' seed; the
			 * sweep's runs carry their own. */
			struct pins *q = policy_pins_dup(p);
			b.len = 0;
			if (q == NULL) {
				err = RBA_E_NOMEM;
				break;
			}
			q->train.seed = seeds[i];
			rebuild_runrec_render(q, &runs[i].res, env_hex,
					      runs[i].wall_seconds, &b);
			policy_pins_free(q);
		}
		if ((err = rba_buf_status(&b)) ||
		    (err = store_run_put(txn, id, b.p, b.len, &d)) ||
		    (err = rebuild_runrec_parse(b.p, b.len, &out->runs[i], &d)))
			break;
	}
	if (err == 0) {
		snprintf(subject, sizeof(subject), "sweep/%s", p->version);
		err = runs_id_new(txn, subject, now, out->id, &d);
	}
	if (err == 0) {
		b.len = 0;
		render_sweep(out, jobs, &b);
		err = rba_buf_status(&b);
		if (err == 0)
			err = store_run_put(txn, out->id, b.p, b.len, &d);
	}
	if (err == 0)
		err = store_txn_commit(txn, &d);
	else
		store_txn_abort(txn);
	txn = NULL;
	if (err != 0) {
		status = cli_fail("cannot keep runs", ctx->store_path, err, &d);
		goto done;
	}
	out->eval_fingerprint = out->runs[0].eval_fingerprint;
	out->snapshot = p->snapshot;
	snprintf(out->environment, sizeof(out->environment), "%s", env_hex);
	status = 0;
done:
	if (status != 0)
		cli_sweep_release(out);
	fx_runs_release(runs, runs ? n : 0);
	free(runs);
	rebuild_prepared_free(prep);
	free(snap);
	rba_buf_release(&env);
	rba_buf_release(&b);
	return status;
}

int
cli_sweep_load(struct cli_ctx *ctx, struct store_txn *txn, const char *id,
	       struct cli_sweep *out)
{
	struct rba_detail d;
	struct rba_json_value root;
	const struct rba_json_value *seeds, *runs;
	const char *schema, *pt;
	uint8_t *p = NULL;
	size_t n = 0;
	int err;

	(void)ctx;
	memset(out, 0, sizeof(*out));
	memset(&root, 0, sizeof(root));
	rba_detail_clear(&d);
	if ((err = store_run_get(txn, id, &p, &n, &d)))
		return cli_fail("cannot read run", id, err, &d);
	err = rba_json_parse((const char *)p, n, &root, &d);
	free(p);
	schema = err ? NULL : rba_json_get_str(&root, "schema");
	if (schema == NULL || strcmp(schema, "rebuild-audit/sweep/v1") != 0) {
		rba_json_release(&root);
		rba_fail(&d, RBA_E_USAGE, NULL, 0, 0, "not a sweep");
		return cli_fail("cannot read sweep", id, RBA_E_USAGE, &d);
	}
	seeds = rba_json_get(&root, "seeds");
	runs = rba_json_get(&root, "runs");
	pt = rba_json_get_str(&root, "pins");
	if (seeds == NULL || runs == NULL || pt == NULL ||
	    seeds->type != RBA_JSON_ARRAY || runs->type != RBA_JSON_ARRAY ||
	    seeds->n != runs->n || seeds->n == 0) {
		rba_json_release(&root);
		rba_fail(&d, RBA_E_CORRUPT, NULL, 0, 0, "malformed sweep record");
		return cli_fail("cannot read sweep", id, RBA_E_CORRUPT, &d);
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
		cli_sweep_release(out);
		return cli_fail("cannot read sweep", id, RBA_E_NOMEM, NULL);
	}
	err = policy_pins_parse(out->pins_text, strlen(out->pins_text), id,
				&out->pins, &d);
	for (size_t i = 0; err == 0 && i < out->n; i++) {
		char *rid = out->ids + i * RUNS_ID_SIZE;
		out->seeds[i] = (uint64_t)seeds->items[i].num;
		snprintf(rid, RUNS_ID_SIZE, "%s",
			 runs->items[i].str ? runs->items[i].str : "");
		err = store_run_get(txn, rid, &p, &n, &d);
		if (err == 0)
			err = rebuild_runrec_parse(p, n, &out->runs[i], &d);
		free(p);
		p = NULL;
		if (err)
			rba_detail_key(&d, rid);
	}
	rba_json_release(&root);
	if (err != 0) {
		cli_sweep_release(out);
		return cli_fail("cannot read sweep", id, err, &d);
	}
	hash_noseed(out->pins, &out->config_hash);
	out->eval_fingerprint = out->runs[0].eval_fingerprint;
	out->snapshot = out->pins->snapshot;
	snprintf(out->environment, sizeof(out->environment), "%s",
		 out->runs[0].environment);
	return 0;
}

/* ---- curves --------------------------------------------------------- */

void
cli_curve_print(FILE *f, const struct rebuild_runrec *r)
{
	enum { H = 12 };
	double lo = INFINITY, hi = -INFINITY;
	uint32_t E = r->epochs;

	for (uint32_t e = 0; e < E; e++) {
		double v[2] = { r->curve[e].train_loss, r->curve[e].val_loss };
		for (int k = 0; k < 2; k++)
			if (isfinite(v[k])) {
				lo = v[k] < lo ? v[k] : lo;
				hi = v[k] > hi ? v[k] : hi;
			}
	}
	if (E == 0 || !(hi >= lo))
		return;
	if (hi == lo)
		hi = lo + 1e-9;
	fprintf(f, "loss by epoch (t train, v validation, * both)\n");
	for (int row = 0; row < H; row++) {
		double top = hi - (hi - lo) * row / H;
		double bot = hi - (hi - lo) * (row + 1) / H;
		char label[32];
		snprintf(label, sizeof(label), "%9.4f", (top + bot) / 2);
		fprintf(f, "%s |", label);
		for (uint32_t e = 0; e < E; e++) {
			double t = r->curve[e].train_loss, v = r->curve[e].val_loss;
			int it = t <= top && (t > bot || (row == H - 1 && t >= bot));
			int iv = v <= top && (v > bot || (row == H - 1 && v >= bot));
			fputs(it && iv ? " *" : it ? " t" : iv ? " v" : "  ", f);
		}
		fputc('\n', f);
	}
	fprintf(f, "          +");
	for (uint32_t e = 0; e < E; e++)
		fputs("--", f);
	fprintf(f, "\n           epochs 1..%u; val_acc %.4f at the end\n", E,
		r->curve[E - 1].val_acc);
}

/* ---- SVG ------------------------------------------------------------ */

static void
svg_polyline(struct rba_buf *b, const double *v, uint32_t n, double x0,
	     double w, double y0, double h, double lo, double hi,
	     const char *color, double width)
{
	rba_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" "
			  "stroke-width=\"%.1f\" points=\"",
		       color, width);
	for (uint32_t e = 0; e < n; e++) {
		double x = x0 + (n > 1 ? w * e / (n - 1) : w / 2);
		double y = y0 + h - (isfinite(v[e]) ? (v[e] - lo) / (hi - lo) : 0) * h;
		rba_buf_printf(b, "%s%.2f,%.2f", e ? " " : "", x, y);
	}
	rba_buf_printf(b, "\"/>\n");
}

int
cli_plot_svg(const char *path, const struct cli_sweep *base,
	     const struct cli_sweep *cand)
{
	const double W = 720, H = 520, X0 = 60, PW = 620, Y0 = 40, PH = 250;
	const double DY0 = 340, DH = 130;
	struct rba_buf b;
	double lo = INFINITY, hi = -INFINITY;
	uint32_t E = base->runs[0].epochs;
	double *v, *bl, *bh;
	int err;

	rba_buf_init(&b);
	v = calloc(E ? E : 1, sizeof(double));
	bl = calloc(E ? E : 1, sizeof(double));
	bh = calloc(E ? E : 1, sizeof(double));
	if (v == NULL || bl == NULL || bh == NULL) {
		free(v), free(bl), free(bh);
		return RBA_E_NOMEM;
	}
	for (int s = 0; s < 2; s++) {
		const struct cli_sweep *sw = s ? cand : base;
		for (size_t i = 0; sw && i < sw->n; i++)
			for (uint32_t e = 0; e < sw->runs[i].epochs; e++) {
				double x = sw->runs[i].curve[e].val_loss;
				if (isfinite(x)) {
					lo = x < lo ? x : lo;
					hi = x > hi ? x : hi;
				}
			}
	}
	if (!(hi > lo))
		hi = lo + 1.0;
	rba_buf_printf(&b,
		       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		       "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
		       "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		       "<text x=\"%.0f\" y=\"24\" font-family=\"sans-serif\" "
		       "font-size=\"14\">validation loss by epoch: each seed; "
		       "band: baseline min..max</text>\n",
		       W, H, W, H, X0);
	/* The baseline band: min..max over its seeds at each epoch. */
	for (uint32_t e = 0; e < E; e++) {
		bl[e] = INFINITY;
		bh[e] = -INFINITY;
		for (size_t i = 0; i < base->n; i++)
			if (e < base->runs[i].epochs) {
				double x = base->runs[i].curve[e].val_loss;
				bl[e] = x < bl[e] ? x : bl[e];
				bh[e] = x > bh[e] ? x : bh[e];
			}
	}
	rba_buf_printf(&b, "<polygon fill=\"#1f77b4\" fill-opacity=\"0.15\" "
			   "stroke=\"none\" points=\"");
	for (uint32_t e = 0; e < E; e++)
		rba_buf_printf(&b, "%.2f,%.2f ",
			       X0 + (E > 1 ? PW * e / (E - 1) : PW / 2),
			       Y0 + PH - (bh[e] - lo) / (hi - lo) * PH);
	for (uint32_t e = E; e-- > 0;)
		rba_buf_printf(&b, "%.2f,%.2f ",
			       X0 + (E > 1 ? PW * e / (E - 1) : PW / 2),
			       Y0 + PH - (bl[e] - lo) / (hi - lo) * PH);
	rba_buf_printf(&b, "\"/>\n");
	for (int s = 0; s < 2; s++) {
		const struct cli_sweep *sw = s ? cand : base;
		for (size_t i = 0; sw && i < sw->n; i++) {
			const struct rebuild_runrec *r = &sw->runs[i];
			for (uint32_t e = 0; e < r->epochs && e < E; e++)
				v[e] = r->curve[e].val_loss;
			svg_polyline(&b, v, r->epochs < E ? r->epochs : E, X0,
				     PW, Y0, PH, lo, hi,
				     s ? "#d62728" : "#1f77b4", 1.2);
		}
	}
	rba_buf_printf(&b,
		       "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
		       "fill=\"none\" stroke=\"black\"/>\n"
		       "<text x=\"4\" y=\"%.0f\" font-family=\"sans-serif\" "
		       "font-size=\"11\">%.4g</text>\n"
		       "<text x=\"4\" y=\"%.0f\" font-family=\"sans-serif\" "
		       "font-size=\"11\">%.4g</text>\n",
		       X0, Y0, PW, PH, Y0 + 10, hi, Y0 + PH, lo);
	if (cand != NULL && cand->n == base->n) {
		double dmax = 0;
		for (size_t i = 0; i < base->n; i++) {
			double dd = fabs(cand->runs[i].eval_loss -
					 base->runs[i].eval_loss);
			dmax = isfinite(dd) && dd > dmax ? dd : dmax;
		}
		if (dmax == 0)
			dmax = 1;
		rba_buf_printf(&b,
			       "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" "
			       "font-size=\"14\">paired deltas of val_loss "
			       "(candidate - baseline) by seed; red: worse</text>\n"
			       "<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" y2=\"%.2f\" "
			       "stroke=\"black\"/>\n",
			       X0, DY0 - 10, X0, DY0 + DH / 2, X0 + PW,
			       DY0 + DH / 2);
		for (size_t i = 0; i < base->n; i++) {
			double dd = cand->runs[i].eval_loss - base->runs[i].eval_loss;
			double bw = PW / (double)base->n;
			double hgt = isfinite(dd) ? fabs(dd) / dmax * DH / 2 : 0;
			rba_buf_printf(&b,
				       "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
				       "height=\"%.2f\" fill=\"%s\"/>\n",
				       X0 + bw * i + bw * 0.15,
				       dd > 0 ? DY0 + DH / 2 - hgt : DY0 + DH / 2,
				       bw * 0.7, hgt, dd > 0 ? "#d62728" : "#2ca02c");
		}
	}
	rba_buf_printf(&b, "</svg>\n");
	free(v);
	free(bl);
	free(bh);
	err = rba_buf_status(&b);
	if (err == 0)
		err = rba_file_write_atomic(path, b.p, b.len, 0644);
	rba_buf_release(&b);
	return err;
}
