/*
 * cmd_evaluate.c - evaluate: a model's metrics under an evaluation
 * contract (the pins' eval: section, overridden by options) and that
 * contract's fingerprint (train/evaluate.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/fileio.h"
#include "common/json.h"
#include "rebuild/rebuild.h"
#include "model/xgboost.h"


/* What the options ask for; NULL where the pins decide. */
struct eval_opts {
	const char *target, *pins_path;
	char *snaps[CLI_FX_MAX_SNAPS];
	size_t nsnaps;
	const char *subset, *reduction, *dropout, *scale;
};

/* argv into o; 0, or the usage status. */
static int
eval_args(struct cli_ctx *ctx, int argc, char **argv, struct eval_opts *o)
{
	const char *v;
	int r;

	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--pins", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--pins needs a file");
			o->pins_path = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--snapshot", &v)) != 0) {
			if (r < 0 || o->nsnaps == CLI_FX_MAX_SNAPS)
				return cli_usage(ctx, "--snapshot needs a file");
			o->snaps[o->nsnaps++] = (char *)v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--subset", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--subset needs N or all");
			o->subset = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--reduction", &v)) != 0) {
			if (r < 0 || (strcmp(v, "mean") && strcmp(v, "sum")))
				return cli_usage(ctx, "--reduction is mean or sum");
			o->reduction = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--dropout", &v)) != 0) {
			if (r < 0 || (strcmp(v, "on") && strcmp(v, "off")))
				return cli_usage(ctx, "--dropout is on or off");
			o->dropout = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--input-scale", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--input-scale needs a number");
			o->scale = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (o->target == NULL) {
			o->target = argv[i];
		} else {
			return cli_usage(ctx, "one pins file or artifact, please");
		}
	}
	if (o->target == NULL)
		return cli_usage(ctx, "needs PINS or ARTIFACT");
	return 0;
}

/* The options' contract terms over the pins' eval: section; 0 or usage. */
static int
eval_override(struct cli_ctx *ctx, const struct eval_opts *o, struct pins *p)
{
	if (o->subset != NULL) {
		uint64_t rows;
		if (strcmp(o->subset, "all") == 0) {
			p->eval.subset = PINS_SUBSET_ALL;
		} else if (cli_parse_u64(o->subset, PINS_MAX_EVAL_ROWS, &rows) ||
			   rows == 0) {
			return cli_usage(ctx, "--subset is all or 1 to %u",
					 PINS_MAX_EVAL_ROWS);
		} else {
			p->eval.subset = PINS_SUBSET_ROWS;
			p->eval.subset_rows = rows;
		}
	}
	if (o->reduction != NULL)
		p->eval.reduction = strcmp(o->reduction, "sum") ? PINS_RED_MEAN
								: PINS_RED_SUM;
	if (o->dropout != NULL)
		p->eval.dropout = strcmp(o->dropout, "on") == 0;
	if (o->scale != NULL) {
		char *e;
		double s = strtod(o->scale, &e);
		if (*e != 0 || !(s > 0) || s != s || s > 1e30)
			return cli_usage(ctx, "--input-scale is a number above 0");
		p->eval.input_scale = s;
	}
	return 0;
}

/* The evaluation, as text or JSON: 0, or 2 after a diagnostic. */
static int
eval_print(const struct cli_ctx *ctx, const struct rebuild_contract *c,
	   const struct rebuild_evaluation *ev)
{
	char h[RBA_DIGEST_TEXT_LEN + 1], desc[200];

	rba_digest_format(&ev->fingerprint, h);
	rebuild_contract_describe(c, desc, sizeof(desc));
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "eval_fingerprint", h);
		rba_json_w_str(&w, "contract", desc);
		rba_json_w_bool(&w, "canonical", rebuild_contract_canonical(c));
		rba_json_w_u64(&w, "rows", ev->rows);
		rba_json_w_num(&w, "val_loss", ev->loss);
		rba_json_w_num(&w, "val_acc", ev->acc);
		rba_json_w_num(&w, "val_auc", ev->auc);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	}
	printf("eval fingerprint  %s\n", h);
	printf("contract          %s%s\n", desc,
	       rebuild_contract_canonical(c) ? " (canonical)" : "");
	printf("rows              %llu\n", (unsigned long long)ev->rows);
	printf("val_loss          %.17g\n", ev->loss);
	printf("val_acc           %.17g\n", ev->acc);
	if (ev->auc == ev->auc)
		printf("val_auc           %.17g\n", ev->auc);
	return 0;
}

int
cmd_evaluate(struct cli_ctx *ctx, int argc, char **argv)
{
	struct eval_opts o;
	const char *pins_path;
	size_t snap_n = 0, art_n = 0;
	struct pins *p = NULL;
	struct rba_detail d;
	struct rebuild_contract c;
	struct rebuild_evaluation ev;
	struct rebuild_prepared *prep = NULL;
	struct rebuild_result res;
	uint8_t *snap = NULL, *art = NULL;
	int err, status, xgb = 0;

	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if ((status = eval_args(ctx, argc, argv, &o)) != 0)
		return status;
	pins_path = o.pins_path;
	rba_detail_clear(&d);
	/* An artifact is binary: it is never a valid pins file. */
	if ((err = rba_file_read(o.target, 1u << 30, &art, &art_n, &d)) != 0)
		return cli_fail("cannot read", o.target, err, &d);
	if (xgboost_is_json(art, art_n)) {
		/* An XGBoost model is text, but no pins: with the pins of its
		 * exec version it is evaluated natively; alone, say what it
		 * is. */
		struct artifact xa;
		struct rba_detail xd;
		rba_detail_clear(&xd);
		if (xgboost_decode(art, art_n, o.target, &xa, &xd) == 0) {
			artifact_release(&xa);
			xgb = 1;
			if (pins_path == NULL) {
				free(art);
				rba_fail(&d, RBA_E_UNSUPPORTED, NULL, 0, 0,
					 "%s",
					 "an XGBoost model has no evaluation "
					 "contract here (score scores it; "
					 "evaluate takes pins or our artifacts)");
				return cli_fail("cannot evaluate", o.target,
						RBA_E_UNSUPPORTED, &d);
			}
		}
	}
	if (!xgb && memchr(art, 0, art_n) == NULL) {
		free(art);
		art = NULL;
		pins_path = o.target;
	} else if (pins_path == NULL) {
		free(art);
		return cli_usage(ctx, "an artifact needs --pins PINS");
	}
	if ((err = policy_pins_load(pins_path, &p, &d)) != 0) {
		status = cli_fail("invalid pins", pins_path, err, &d);
		goto done;
	}
	if ((status = eval_override(ctx, &o, p)) != 0 ||
	    (status = cli_fx_snapshot(ctx, &p->snapshot, o.snaps, o.nsnaps,
				      &snap, &snap_n)) != 0)
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
		if ((err = rebuild_evaluate_artifact(p, prep, art, art_n, &c, &ev,
						     &d))) {
			status = cli_fail("cannot evaluate", o.target, err, &d);
			goto done;
		}
	}
	status = eval_print(ctx, &c, &ev);
done:
	rebuild_result_release(&res);
	rebuild_prepared_free(prep);
	policy_pins_free(p);
	free(snap);
	free(art);
	return status;
}
