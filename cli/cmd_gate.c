/*
 * cmd_gate.c - gate calibrate/validate/check: a regression threshold
 * calibrated on a stored baseline sweep (median + K x spread), its false
 * alarms on held-out healthy seeds, and a check of pins or a stored run.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "forensics/forensics.h"
#include "cli/commands.h"
#include "common/fileio.h"
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

static int
calibrate(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *sweep = NULL, *out = NULL, *v;
	double k = NAN;
	struct store_txn *txn = NULL;
	struct cli_sweep sw;
	struct fx_gate g;
	struct fx_stat st;
	struct rba_buf b;
	int r, err;

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
	memset(&g, 0, sizeof(g));
	g.metric = FX_VAL_LOSS;
	cli_sweep_loss_stat(&sw, &st);
	g.k = k;
	g.median = st.median;
	g.spread = st.spread;
	g.threshold = st.median + k * st.spread;
	g.seeds = sw.n;
	snprintf(g.sweep, sizeof(g.sweep), "%s", sw.id);
	snprintf(g.version, sizeof(g.version), "%s", sw.pins->version);
	g.config_hash = sw.config_hash;
	g.eval_fingerprint = sw.eval_fingerprint;
	cli_sweep_release(&sw);
	rba_buf_init(&b);
	fx_gate_render(&g, &b);
	err = rba_buf_status(&b);
	if (err == 0)
		err = rba_file_write_atomic(out, b.p, b.len, 0644);
	rba_buf_release(&b);
	if (err)
		return cli_fail("cannot write gate", out, err, NULL);
	printf("gate %s: val_loss <= %.6g (median %.6g + %g x spread %.4g, "
	       "%" PRIu64 " seeds)\n",
	       out, g.threshold, g.median, g.k, g.spread, g.seeds);
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

static int
contract_ok(const struct fx_gate *g, const struct rba_digest *fp, int allow,
	    const char *what)
{
	struct rba_detail d;

	if (rba_digest_equal(&g->eval_fingerprint, fp) || allow)
		return 0;
	rba_detail_clear(&d);
	rba_fail(&d, RBA_E_USAGE, NULL, 0, 0,
		 "its eval fingerprint is not the gate's; give "
		 "--allow-contract-change to check anyway");
	return cli_fail("refusing to gate", what, RBA_E_USAGE, &d);
}

static int
validate_or_check(struct cli_ctx *ctx, int argc, char **argv, int validate)
{
	struct gopts o;
	struct fx_gate g;
	struct rba_detail d;
	struct pins *p = NULL;
	struct cli_sweep sw;
	uint64_t *seeds = NULL;
	size_t nseeds = 0, fails = 0;
	struct stat st;
	int r;

	if ((r = gate_opts(ctx, argc, argv, &o)) >= 0)
		return r;
	if (cli_gate_load(o.gate, &g))
		return 2;
	rba_detail_clear(&d);
	if (stat(o.target, &st) != 0 || !S_ISREG(st.st_mode)) {
		/* A stored run or sweep. */
		struct store_txn *txn = NULL;
		struct rebuild_runrec rr;
		uint8_t *t = NULL;
		size_t n = 0;
		double val;
		if (validate)
			return cli_usage(ctx, "validate trains pins: give PINS");
		if (cli_txn_begin(ctx, 0, 0, "cannot check", o.target, &txn))
			return 2;
		if ((r = store_run_get(txn, o.target, &t, &n, &d))) {
			store_txn_abort(txn);
			return cli_fail("cannot check", o.target, r, &d);
		}
		if (strstr((const char *)t, "\"rebuild-audit/sweep/v1\"")) {
			struct fx_stat s;
			free(t);
			r = cli_sweep_load(ctx, txn, o.target, &sw);
			store_txn_abort(txn);
			if (r)
				return 2;
			if (contract_ok(&g, &sw.eval_fingerprint, o.allow, o.target)) {
				cli_sweep_release(&sw);
				return 2;
			}
			cli_sweep_loss_stat(&sw, &s);
			cli_sweep_release(&sw);
			val = s.median;
		} else {
			r = rebuild_runrec_parse(t, n, &rr, &d);
			free(t);
			store_txn_abort(txn);
			if (r)
				return cli_fail("cannot check", o.target, r, &d);
			if (contract_ok(&g, &rr.eval_fingerprint, o.allow, o.target)) {
				rebuild_runrec_release(&rr);
				return 2;
			}
			val = rr.eval_loss;
			rebuild_runrec_release(&rr);
		}
		printf("%s: val_loss %.6g %s threshold %.6g: %s\n", o.target, val,
		       fx_gate_pass(&g, val) ? "<=" : ">", g.threshold,
		       fx_gate_pass(&g, val) ? "PASS" : "FAIL");
		return fx_gate_pass(&g, val) ? 0 : 1;
	}
	if ((r = policy_pins_load(o.target, &p, &d)))
		return cli_fail("invalid pins", o.target, r, &d);
	if (o.fx.seeds == NULL) {
		seeds = malloc(sizeof(uint64_t));
		if (seeds)
			seeds[0] = p->train.seed;
		nseeds = 1;
	} else if (fx_seeds_parse(o.fx.seeds, &seeds, &nseeds, &d)) {
		policy_pins_free(p);
		return cli_usage(ctx, "--seeds: %s", d.reason);
	}
	if (seeds == NULL || cli_sweep_run(ctx, p, seeds, nseeds, (unsigned)o.fx.jobs,
					   o.fx.snaps, o.fx.nsnaps, "gate", &sw)) {
		policy_pins_free(p);
		free(seeds);
		return 2;
	}
	policy_pins_free(p);
	free(seeds);
	if (contract_ok(&g, &sw.eval_fingerprint, o.allow, o.target)) {
		cli_sweep_release(&sw);
		return 2;
	}
	for (size_t i = 0; i < sw.n; i++) {
		int pass = fx_gate_pass(&g, sw.runs[i].eval_loss);
		fails += !pass;
		printf("  seed %-6" PRIu64 " val_loss %.6g %s\n", sw.seeds[i],
		       sw.runs[i].eval_loss, pass ? "pass" : "FAIL");
	}
	if (validate) {
		uint64_t max = o.has_max ? o.max_alarms : (uint64_t)(sw.n * 0.05);
		printf("false alarms %zu/%zu on healthy seeds (allowed %" PRIu64
		       "); gate val_loss <= %.6g\n",
		       fails, sw.n, max, g.threshold);
		cli_sweep_release(&sw);
		return fails <= max ? 0 : 1;
	}
	printf("%s: %zu/%zu seeds over threshold %.6g: %s\n", o.target, fails,
	       sw.n, g.threshold, fails ? "FAIL" : "PASS");
	cli_sweep_release(&sw);
	return fails ? 1 : 0;
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
