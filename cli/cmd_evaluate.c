/*
 * cmd_evaluate.c - evaluate: a model's metrics under an evaluation
 * contract (the pins' eval: section, overridden by options) and that
 * contract's fingerprint (rebuild/evaluate.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/fileio.h"
#include "common/json.h"
#include "rebuild/rebuild.h"


int
cmd_evaluate(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *target = NULL, *pins_path = NULL, *v;
	char *snaps[CLI_FX_MAX_SNAPS];
	size_t nsnaps = 0, snap_n = 0, art_n = 0;
	struct pins *p = NULL;
	struct rba_detail d;
	struct rebuild_contract c;
	struct rebuild_evaluation ev;
	struct rebuild_prepared *prep = NULL;
	struct rebuild_result res;
	uint8_t *snap = NULL, *art = NULL;
	int r, err, status = 2;
	const char *o_subset = NULL, *o_red = NULL, *o_drop = NULL, *o_scale = NULL;

	memset(&res, 0, sizeof(res));
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--pins", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--pins needs a file");
			pins_path = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--snapshot", &v)) != 0) {
			if (r < 0 || nsnaps == CLI_FX_MAX_SNAPS)
				return cli_usage(ctx, "--snapshot needs a file");
			snaps[nsnaps++] = (char *)v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--subset", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--subset needs N or all");
			o_subset = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--reduction", &v)) != 0) {
			if (r < 0 || (strcmp(v, "mean") && strcmp(v, "sum")))
				return cli_usage(ctx, "--reduction is mean or sum");
			o_red = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--dropout", &v)) != 0) {
			if (r < 0 || (strcmp(v, "on") && strcmp(v, "off")))
				return cli_usage(ctx, "--dropout is on or off");
			o_drop = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--input-scale", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--input-scale needs a number");
			o_scale = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (target == NULL) {
			target = argv[i];
		} else {
			return cli_usage(ctx, "one pins file or artifact, please");
		}
	}
	if (target == NULL)
		return cli_usage(ctx, "needs PINS or ARTIFACT");
	rba_detail_clear(&d);
	/* An artifact is binary: it is never a valid pins file. */
	if ((err = rba_file_read(target, 1u << 30, &art, &art_n, &d)) != 0)
		return cli_fail("cannot read", target, err, &d);
	if (memchr(art, 0, art_n) == NULL) {
		free(art);
		art = NULL;
		pins_path = target;
	} else if (pins_path == NULL) {
		free(art);
		return cli_usage(ctx, "an artifact needs --pins PINS");
	}
	if ((err = policy_pins_load(pins_path, &p, &d)) != 0) {
		status = cli_fail("invalid pins", pins_path, err, &d);
		goto done;
	}
	if (o_subset != NULL) {
		uint64_t rows;
		if (strcmp(o_subset, "all") == 0) {
			p->eval.subset = PINS_SUBSET_ALL;
		} else if (cli_parse_u64(o_subset, PINS_MAX_EVAL_ROWS, &rows) ||
			   rows == 0) {
			status = cli_usage(ctx, "--subset is all or 1 to %u",
					   PINS_MAX_EVAL_ROWS);
			goto done;
		} else {
			p->eval.subset = PINS_SUBSET_ROWS;
			p->eval.subset_rows = rows;
		}
	}
	if (o_red != NULL)
		p->eval.reduction = strcmp(o_red, "sum") ? PINS_RED_MEAN : PINS_RED_SUM;
	if (o_drop != NULL)
		p->eval.dropout = strcmp(o_drop, "on") == 0;
	if (o_scale != NULL) {
		char *e;
		double s = strtod(o_scale, &e);
		if (*e != 0 || !(s > 0) || s != s || s > 1e30) {
			status = cli_usage(ctx, "--input-scale is a number above 0");
			goto done;
		}
		p->eval.input_scale = s;
	}
	if ((status = cli_fx_snapshot(ctx, &p->snapshot, snaps, nsnaps, &snap,
				      &snap_n)) != 0)
		goto done;
	status = 2;
	if ((err = rebuild_prepare(p, snap, snap_n, pins_path, &prep, &d))) {
		status = cli_fail("cannot evaluate", pins_path, err, &d);
		goto done;
	}
	if (art == NULL) {
		if ((err = rebuild_from_prepared(p, 0, prep, NULL, &res, &d))) {
			status = cli_fail("cannot train", pins_path, err, &d);
			goto done;
		}
		ev = res.eval;
		c = res.contract;
	} else {
		rebuild_contract_from_pins(p, &c);
		if ((err = rebuild_evaluate_artifact(prep, art, art_n, &c, &ev,
						     &d))) {
			status = cli_fail("cannot evaluate", target, err, &d);
			goto done;
		}
	}
	{
		char h[RBA_DIGEST_TEXT_LEN + 1], desc[200];
		rba_digest_format(&ev.fingerprint, h);
		rebuild_contract_describe(&c, desc, sizeof(desc));
		if (ctx->json) {
			printf("{\"eval_fingerprint\": \"%s\", \"contract\": ", h);
			rba_json_fput_str(stdout, desc);
			printf(", \"canonical\": %s, \"rows\": %llu, \"val_loss\": ",
			       rebuild_contract_canonical(&c) ? "true" : "false",
			       (unsigned long long)ev.rows);
			rba_json_fput_num(stdout, ev.loss);
			printf(", \"val_acc\": ");
			rba_json_fput_num(stdout, ev.acc);
			printf(", \"val_auc\": ");
			rba_json_fput_num(stdout, ev.auc);
			printf("}\n");
		} else {
			printf("eval fingerprint  %s\n", h);
			printf("contract          %s%s\n", desc,
			       rebuild_contract_canonical(&c) ? " (canonical)" : "");
			printf("rows              %llu\n",
			       (unsigned long long)ev.rows);
			printf("val_loss          %.17g\n", ev.loss);
			printf("val_acc           %.17g\n", ev.acc);
			if (ev.auc == ev.auc)
				printf("val_auc           %.17g\n", ev.auc);
		}
	}
	status = 0;
done:
	rebuild_result_release(&res);
	rebuild_prepared_free(prep);
	policy_pins_free(p);
	free(snap);
	free(art);
	return status;
}
