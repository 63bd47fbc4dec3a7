/*
 * cmd_gate.c - gate calibrate/validate/check: a regression threshold
 * calibrated on a stored baseline sweep (median + K x spread), its false
 * alarms on held-out healthy seeds, and a check of pins or a stored run
 * or sweep, each decided by the one rule of forensics/gate.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "common/fileio.h"
#include "forensics/forensics.h"
#include "forensics/gate.h"
#include "forensics/sweep.h"
#include "store/store.h"

int
cli_gate_load(const char *path, struct fx_gate *g)
{
	struct rba_detail d;
	uint8_t *t = NULL;
	size_t n = 0;
	int err;

	rba_detail_clear(&d);
	if ((err = rba_file_read(path, 1u << 16, &t, &n, &d)))
		return cli_fail("cannot read gate", path, err, &d);
	err = fx_gate_parse((const char *)t, n, path, g, &d);
	free(t);
	if (err)
		return cli_fail("invalid gate", path, err, &d);
	return 0;
}

/* The comparison a value passing (or failing) g makes with its threshold. */
static const char *
gate_op(const struct fx_gate *g, int pass)
{
	int hb = fx_metric_higher_better(g->metric);

	return pass ? (hb ? ">=" : "<=") : (hb ? "<" : ">");
}

static int
calibrate(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *sweep = NULL, *out = NULL, *v;
	double k = NAN;
	struct store_txn *txn = NULL;
	struct fx_sweep sw;
	struct fx_gate g;
	struct fx_fault f;
	struct rba_detail d;
	int r, err, force = 0;

	for (int i = 2; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--k", &v)) != 0) {
			char *e;
			k = r < 0 ? NAN : strtod(v, &e);
			if (r < 0 || *e != 0 || !(k >= 0 && k < 1e6))
				return cli_usage(ctx, "--k is a number >= 0");
		} else if ((r = cli_opt_value(argc, argv, &i, "-o", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "-o needs a file");
			out = v;
		} else if (strcmp(argv[i], "--force") == 0) {
			force = 1;
		} else if (argv[i][0] == '-') {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (sweep == NULL) {
			sweep = argv[i];
		} else {
			return cli_usage(ctx, "one sweep, please");
		}
	}
	if (sweep == NULL || out == NULL || k != k)
		return cli_usage(ctx, "needs SWEEP, --k K and -o GATE.yaml");
	if (cli_txn_begin(ctx, 0, 0, "cannot calibrate", sweep, &txn))
		return 2;
	err = cli_sweep_load(ctx, txn, sweep, &sw);
	store_txn_abort(txn);
	if (err)
		return 2;
	err = fx_gate_calibrate(&sw, FX_VAL_LOSS, k, &g, &f);
	fx_sweep_release(&sw);
	if (err)
		return cli_fx_fail(ctx, &f, err);
	rba_detail_clear(&d);
	if ((err = fx_gate_write(out, &g, force ? RBA_OUTPUT_FORCE : 0, &d)) != 0)
		return cli_fail("cannot write gate", out, err, &d);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "gate", out);
		rba_json_w_str(&w, "metric", fx_metric_name(g.metric));
		rba_json_w_str(&w, "op", gate_op(&g, 1));
		rba_json_w_num(&w, "threshold", g.threshold);
		rba_json_w_num(&w, "median", g.median);
		rba_json_w_num(&w, "k", g.k);
		rba_json_w_num(&w, "spread", g.spread);
		rba_json_w_u64(&w, "seeds", g.seeds);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	}
	printf("gate %s: %s %s %.6g (median %.6g %c %g x spread %.4g, "
	       "%" PRIu64 " seeds)\n",
	       out, fx_metric_name(g.metric), gate_op(&g, 1), g.threshold,
	       g.median, fx_metric_higher_better(g.metric) ? '-' : '+', g.k,
	       g.spread, g.seeds);
	return 0;
}

/* Common options of validate and check. */
struct gopts {
	const char *gate, *target;
	struct cli_fx_opts fx; /* --seeds, -j, --snapshot */
	uint64_t max_alarms;
	int has_max, allow;
};

static int
gate_opts(struct cli_ctx *ctx, int argc, char **argv, struct gopts *o)
{
	const char *v;
	int r;

	memset(o, 0, sizeof(*o));
	cli_fx_opts_init(&o->fx);
	for (int i = 2; i < argc; i++) {
		if ((r = cli_fx_opt(ctx, argc, argv, &i, &o->fx)) != 0) {
			if (r != 1)
				return r;
		} else if ((r = cli_opt_value(argc, argv, &i, "--max-false-alarms", &v)) != 0) {
			if (r < 0 || cli_parse_u64(v, FX_MAX_SEEDS, &o->max_alarms))
				return cli_usage(ctx, "--max-false-alarms needs a count");
			o->has_max = 1;
		} else if (strcmp(argv[i], "--allow-contract-change") == 0) {
			o->allow = 1;
		} else if (argv[i][0] == '-') {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (o->gate == NULL) {
			o->gate = argv[i];
		} else if (o->target == NULL) {
			o->target = argv[i];
		} else {
			return cli_usage(ctx, "too many arguments");
		}
	}
	if (o->gate == NULL || o->target == NULL)
		return cli_usage(ctx, "needs GATE.yaml and PINS or RUN");
	return -1;
}

/*
 * The seeds' values of a trained target as the member "seeds" of w's
 * open object, each with whether it passed unless pass is NULL (gate
 * check); nothing without a sweep.
 */
static void
seeds_json(struct rba_json_w *w, const struct fx_gate *g,
	   const struct fx_sweep *sw, const unsigned char *pass)
{
	if (sw == NULL)
		return;
	rba_json_w_open(w, "seeds", '[');
	for (size_t i = 0; i < sw->n; i++) {
		rba_json_w_open(w, NULL, '{');
		rba_json_w_u64(w, "seed", sw->seeds[i]);
		rba_json_w_num(w, "value", fx_metric_of(&sw->runs[i], g->metric));
		if (pass != NULL)
			rba_json_w_bool(w, "pass", pass[i]);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
}

/* The decision line of gate check: exit 0 pass, 1 fail.  Under --json
 * one document: the seeds' values (sw, when trained), the value, the
 * threshold and "pass". */
static int
print_decision(struct cli_ctx *ctx, const char *target,
	       const struct fx_gate *g, const struct fx_gate_value *v,
	       const struct fx_sweep *sw)
{
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "target", target);
		seeds_json(&w, g, sw, NULL);
		rba_json_w_str(&w, "metric", fx_metric_name(v->metric));
		rba_json_w_num(&w, "value", v->value);
		rba_json_w_u64(&w, "n", v->n);
		rba_json_w_str(&w, "op", gate_op(g, v->pass));
		rba_json_w_num(&w, "threshold", g->threshold);
		rba_json_w_str(&w, "direction", fx_gate_direction(g));
		rba_json_w_bool(&w, "pass", v->pass);
		rba_json_w_close(&w, '}');
		if (cli_json_print(&b) != 0)
			return 2;
	} else if (v->n == 1)
		printf("%s: %s %.6g %s threshold %.6g (%s): %s\n", target,
		       fx_metric_name(v->metric), v->value, gate_op(g, v->pass),
		       g->threshold, fx_gate_direction(g),
		       v->pass ? "PASS" : "FAIL");
	else
		printf("%s: %s median %.6g at %zu seeds %s threshold %.6g "
		       "(%s): %s\n",
		       target, fx_metric_name(v->metric), v->value, v->n,
		       gate_op(g, v->pass), g->threshold, fx_gate_direction(g),
		       v->pass ? "PASS" : "FAIL");
	return v->pass ? 0 : 1;
}

/* gate check of a stored run or sweep. */
static int
check_stored(struct cli_ctx *ctx, const struct gopts *o,
	     const struct fx_gate *g)
{
	struct store_txn *txn = NULL;
	struct fx_gate_value v;
	struct fx_fault f;
	int err;

	if (cli_txn_begin(ctx, 0, 0, "cannot check", o->target, &txn))
		return 2;
	err = fx_gate_check_stored(txn, g, o->target, o->allow, &v, &f);
	store_txn_abort(txn);
	if (err)
		return cli_fx_fail(ctx, &f, err);
	return print_decision(ctx, o->target, g, &v, NULL);
}

/* The pins of o->target trained at its seeds (default: the pins' own). */
static int
train_target(struct cli_ctx *ctx, const struct gopts *o, struct fx_sweep *sw)
{
	struct rba_detail d;
	struct pins *p = NULL;
	uint64_t *seeds = NULL;
	size_t nseeds = 0;
	int r;

	rba_detail_clear(&d);
	if ((r = policy_pins_load(o->target, &p, &d)))
		return cli_fail("invalid pins", o->target, r, &d);
	if (o->fx.seeds == NULL) {
		if ((seeds = malloc(sizeof(uint64_t))) != NULL)
			seeds[0] = p->train.seed;
		nseeds = 1;
	} else if (fx_seeds_parse(o->fx.seeds, &seeds, &nseeds, &d)) {
		policy_pins_free(p);
		return cli_usage(ctx, "--seeds: %s", d.reason);
	}
	if (seeds == NULL)
		r = cli_fail("cannot check", o->target, RBA_E_NOMEM, NULL);
	else
		r = cli_sweep_run(ctx, p, seeds, nseeds, &o->fx, "gate", sw);
	policy_pins_free(p);
	free(seeds);
	return r;
}

/* gate validate of a trained sweep: its false alarms, seed by seed. */
static int
validate(struct cli_ctx *ctx, const struct gopts *o, const struct fx_gate *g,
	 const struct fx_sweep *sw)
{
	unsigned char *pass = calloc(sw->n, 1);
	struct fx_fault f;
	size_t alarms = 0;
	uint64_t max;
	int err;

	if (pass == NULL)
		return cli_fail("cannot check", o->target, RBA_E_NOMEM, NULL);
	if ((err = fx_gate_validate(g, sw->runs, sw->n, o->target, pass,
				    &alarms, &f))) {
		free(pass);
		return cli_fx_fail(ctx, &f, err);
	}
	max = o->has_max ? o->max_alarms : fx_gate_alarms_allowed(sw->n);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "target", o->target);
		seeds_json(&w, g, sw, pass);
		free(pass);
		rba_json_w_u64(&w, "false_alarms", alarms);
		rba_json_w_u64(&w, "allowed", max);
		rba_json_w_str(&w, "metric", fx_metric_name(g->metric));
		rba_json_w_str(&w, "op", gate_op(g, 1));
		rba_json_w_num(&w, "threshold", g->threshold);
		rba_json_w_bool(&w, "pass", alarms <= max);
		rba_json_w_close(&w, '}');
		if (cli_json_print(&b) != 0)
			return 2;
		return alarms <= max ? 0 : 1;
	}
	for (size_t i = 0; i < sw->n; i++)
		printf("  seed %-6" PRIu64 " %s %.6g %s\n", sw->seeds[i],
		       fx_metric_name(g->metric),
		       fx_metric_of(&sw->runs[i], g->metric),
		       pass[i] ? "pass" : "FAIL");
	free(pass);
	printf("false alarms %zu/%zu on healthy seeds (allowed %" PRIu64
	       "); gate %s %s %.6g\n",
	       alarms, sw->n, max, fx_metric_name(g->metric), gate_op(g, 1),
	       g->threshold);
	return alarms <= max ? 0 : 1;
}

/* gate check of a trained sweep: each seed's value, then the decision. */
static int
check_trained(struct cli_ctx *ctx, const struct gopts *o,
	      const struct fx_gate *g, const struct fx_sweep *sw)
{
	struct fx_gate_value v;
	struct fx_fault f;
	int err;

	if ((err = fx_gate_decide(g, sw->runs, sw->n, o->target, &v, &f)))
		return cli_fx_fail(ctx, &f, err);
	for (size_t i = 0; !ctx->json && i < sw->n; i++)
		printf("  seed %-6" PRIu64 " %s %.6g\n", sw->seeds[i],
		       fx_metric_name(g->metric),
		       fx_metric_of(&sw->runs[i], g->metric));
	return print_decision(ctx, o->target, g, &v, sw);
}

static int
validate_or_check(struct cli_ctx *ctx, int argc, char **argv, int validating)
{
	struct gopts o;
	struct fx_gate g;
	struct fx_sweep sw;
	struct fx_fault f;
	struct stat st;
	int r;

	if ((r = gate_opts(ctx, argc, argv, &o)) >= 0)
		return r;
	if (cli_gate_load(o.gate, &g))
		return 2;
	if (stat(o.target, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (validating)
			return cli_usage(ctx, "validate trains pins: give PINS");
		return check_stored(ctx, &o, &g);
	}
	if ((r = train_target(ctx, &o, &sw)) != 0)
		return r;
	if ((r = fx_gate_contract(&g, &sw.eval_fingerprint, o.allow, o.target,
				  &f)) != 0)
		r = cli_fx_fail(ctx, &f, r);
	else if (validating)
		r = validate(ctx, &o, &g, &sw);
	else
		r = check_trained(ctx, &o, &g, &sw);
	fx_sweep_release(&sw);
	return r;
}

int
cmd_gate(struct cli_ctx *ctx, int argc, char **argv)
{
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if (argc < 2)
		return cli_usage(ctx, "needs calibrate, validate or check");
	if (strcmp(argv[1], "calibrate") == 0)
		return calibrate(ctx, argc, argv);
	if (strcmp(argv[1], "validate") == 0)
		return validate_or_check(ctx, argc, argv, 1);
	if (strcmp(argv[1], "check") == 0)
		return validate_or_check(ctx, argc, argv, 0);
	return cli_usage(ctx, "unknown subcommand '%s'", argv[1]);
}
