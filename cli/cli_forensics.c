/*
 * cli_forensics.c - what sweep, compare, gate, bisect and runs share on
 * the command line: their options, the store they keep records in, the
 * diagnostic of a failed use case, training progress, and curves drawn
 * in the terminal.  Declared in commands.h; the use cases themselves
 * are in forensics/.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "forensics/forensics.h"
#include "forensics/sweep.h"
#include "store/store.h"

/* What failed, by step: the first words of the diagnostic. */
static const char *const step_what[FX_NSTEPS] = {
	[FX_STEP_STORE] = "cannot open store",
	[FX_STEP_SWEEP] = "cannot sweep",
	[FX_STEP_SNAPSHOT_READ] = "cannot read snapshot",
	[FX_STEP_SNAPSHOT_FIND] = "cannot find snapshot",
	[FX_STEP_SNAPSHOT_LOAD] = "cannot load snapshot",
	[FX_STEP_TRAIN] = "cannot train",
	[FX_STEP_KEEP_RUNS] = "cannot keep runs",
	[FX_STEP_READ_RUN] = "cannot read run",
	[FX_STEP_READ_SWEEP] = "cannot read sweep",
	[FX_STEP_COMPARE] = "cannot compare",
	[FX_STEP_COMPARE_REFUSE] = "refusing to compare",
	[FX_STEP_KEEP_COMPARISON] = "cannot keep comparison",
	[FX_STEP_GATE_REFUSE] = "refusing to gate",
	[FX_STEP_GATE_CHECK] = "cannot check",
	[FX_STEP_GATE_MEASURE] = "cannot gate",
	[FX_STEP_BISECT] = "cannot bisect",
};

int
cli_fx_fail(struct cli_ctx *ctx, const struct fx_fault *f, int err)
{
	/* The store's own failure was told when it was opened. */
	if (f->step == FX_STEP_STORE)
		return 2;
	return cli_fail(step_what[f->step],
			f->subject[0] ? f->subject : ctx->store_path, err, &f->d);
}

/* Writable: the runs trained from a snapshot are kept in the same store. */
static int
store_get(void *c, struct store **st)
{
	struct cli_ctx *ctx = c;

	if (cli_store_open(ctx, 0) != 0)
		return 2;
	*st = ctx->store;
	return 0;
}

void
cli_fx_store(struct cli_ctx *ctx, struct fx_store *out)
{
	out->get = store_get;
	out->ctx = ctx;
}

/* The progress line of a training at seeds, erased after its last seed. */
static void
seed_progress(void *c, const char *label, size_t done, size_t total)
{
	(void)c;
	fprintf(stderr, "\r%s: seed %zu/%zu", label, done, total);
	if (done == total)
		fputs("\r\033[K", stderr);
	fflush(stderr);
}

const struct fx_progress *
cli_fx_progress(struct cli_ctx *ctx)
{
	static const struct fx_progress p = { seed_progress, NULL };

	return ctx->progress ? &p : NULL;
}

int
cli_fx_snapshot(struct cli_ctx *ctx, const struct rba_digest *want,
		char *const *files, size_t nfiles, uint8_t **buf, size_t *n)
{
	struct fx_store st;
	struct fx_fault f;
	int err;

	cli_fx_store(ctx, &st);
	fx_fault_clear(&f);
	if ((err = fx_snapshot_load(&st, want, files, nfiles, buf, n, &f)))
		return cli_fx_fail(ctx, &f, err);
	return 0;
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

void
cli_fx_plan(const struct cli_fx_opts *o, const uint64_t *seeds, size_t n,
	    struct fx_sweep_plan *out)
{
	out->seeds = seeds;
	out->n = n;
	out->jobs = (unsigned)o->jobs;
	out->snaps = o->snaps;
	out->nsnaps = o->nsnaps;
}

int
cli_sweep_run(struct cli_ctx *ctx, const struct pins *p, const uint64_t *seeds,
	      size_t n, const struct cli_fx_opts *o, const char *label,
	      struct fx_sweep *out)
{
	struct fx_sweep_plan plan;
	struct fx_store st;
	struct fx_fault f;
	int err;

	cli_fx_plan(o, seeds, n, &plan);
	cli_fx_store(ctx, &st);
	err = fx_sweep_run(&st, p, &plan, cli_fx_progress(ctx), label, out, &f);
	return err ? cli_fx_fail(ctx, &f, err) : 0;
}

int
cli_sweep_load(struct cli_ctx *ctx, struct store_txn *txn, const char *id,
	       struct fx_sweep *out)
{
	struct fx_fault f;
	int err;

	if ((err = fx_sweep_load(txn, id, out, &f)) != 0)
		return cli_fx_fail(ctx, &f, err);
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
