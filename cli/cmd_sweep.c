/*
 * cmd_sweep.c - sweep: train one pins file at many seeds, keep every run
 * and a sweep record, print each metric's median, stdev, min, max and
 * spread: the noise floor every later comparison is read against.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/fileio.h"
#include "common/json.h"
#include "forensics/forensics.h"
#include "forensics/plot.h"
#include "forensics/sweep.h"

/* sweep --json: 0, or 2 after a diagnostic. */
static int
print_stats_json(const struct fx_sweep *s)
{
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "sweep", s->id);
	rba_json_w_str(&w, "version", s->pins->version);
	rba_json_w_u64(&w, "seeds", s->n);
	rba_json_w_num(&w, "wall_seconds", s->wall_seconds);
	rba_json_w_open(&w, "metrics", '{');
	for (int m = 0; m < FX_NMETRICS; m++) {
		struct fx_stat st;
		fx_sweep_stat(s, (enum fx_metric)m, &st);
		rba_json_w_open(&w, fx_metric_name((enum fx_metric)m), '{');
		rba_json_w_num(&w, "median", st.median);
		rba_json_w_num(&w, "stdev", st.stdev);
		rba_json_w_num(&w, "min", st.min);
		rba_json_w_num(&w, "max", st.max);
		rba_json_w_num(&w, "spread", st.spread);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, '}');
	rba_json_w_open(&w, "runs", '[');
	for (size_t i = 0; i < s->n; i++) {
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_u64(&w, "seed", s->seeds[i]);
		rba_json_w_str(&w, "id", s->ids + i * RUNS_ID_SIZE);
		rba_json_w_num(&w, "val_loss", s->runs[i].eval_loss);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, ']');
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/* The sweep's statistics: 0, or 2 after a diagnostic. */
static int
print_stats(const struct fx_sweep *s, int json)
{
	if (json)
		return print_stats_json(s);
	printf("sweep %s: %s at %zu seeds (%" PRIu64 "..%" PRIu64 ") in %.3f s\n",
	       s->id, s->pins->version, s->n, s->seeds[0], s->seeds[s->n - 1],
	       s->wall_seconds);
	printf("%-20s %10s %10s %10s %10s %10s\n", "metric", "median", "stdev",
	       "min", "max", "spread");
	for (int m = 0; m < FX_NMETRICS; m++) {
		struct fx_stat st;
		fx_sweep_stat(s, (enum fx_metric)m, &st);
		if (st.n > 0)
			printf("%-20s %10.6g %10.4g %10.6g %10.6g %10.4g\n",
			       fx_metric_name((enum fx_metric)m), st.median,
			       st.stdev, st.min, st.max, st.spread);
	}
	return 0;
}

int
cmd_sweep(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *pins_path = NULL, *plot = NULL, *v;
	size_t nseeds = 0;
	uint64_t *seeds = NULL;
	struct cli_fx_opts o;
	struct pins *p = NULL;
	struct rba_detail d;
	struct fx_sweep sw;
	int r, status, force = 0;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	cli_fx_opts_init(&o);
	for (int i = 1; i < argc; i++) {
		if ((r = cli_fx_opt(ctx, argc, argv, &i, &o)) != 0) {
			if (r != 1)
				return r;
		} else if ((r = cli_opt_value(argc, argv, &i, "--plot", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--plot needs a file");
			plot = v;
		} else if (strcmp(argv[i], "--force") == 0) {
			force = 1;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (pins_path == NULL) {
			pins_path = argv[i];
		} else {
			return cli_usage(ctx, "one pins file, please");
		}
	}
	if (pins_path == NULL || o.seeds == NULL)
		return cli_usage(ctx, "needs a pins file and --seeds");
	rba_detail_clear(&d);
	if (fx_seeds_parse(o.seeds, &seeds, &nseeds, &d))
		return cli_usage(ctx, "--seeds: %s", d.reason);
	/* The plot's path is asked before the training, not refused after. */
	if (plot != NULL &&
	    (r = fx_plot_check(plot, force ? RBA_OUTPUT_FORCE : 0, &d)) != 0) {
		free(seeds);
		return cli_fail("cannot write plot", plot, r, &d);
	}
	if ((r = policy_pins_load(pins_path, &p, &d)) != 0) {
		free(seeds);
		return cli_fail("invalid pins", pins_path, r, &d);
	}
	status = cli_sweep_run(ctx, p, seeds, nseeds, &o, "sweep", &sw);
	if (status == 0) {
		status = print_stats(&sw, ctx->json);
		rba_detail_clear(&d);
		if (plot != NULL &&
		    (r = fx_plot_write(plot, &sw, NULL,
				       force ? RBA_OUTPUT_FORCE : 0, &d)) != 0)
			status = cli_fail("cannot write plot", plot, r, &d);
		fx_sweep_release(&sw);
	}
	free(seeds);
	policy_pins_free(p);
	return status;
}
