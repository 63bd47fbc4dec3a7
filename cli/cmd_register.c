/*
 * cmd_register.c - register: train (or take an artifact), fill the pins,
 * store the version.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "audit/register.h"
#include "cli/commands.h"
#include "common/digest.h"
#include "common/json.h"
#include "policy/policy.h"
#include "store/store.h"

/* The options and the pins file of register: 0, or the exit status
 * of a usage error. */
static int
register_args(struct cli_ctx *ctx, int argc, char **argv,
	      struct register_request *rq, const char **policy_path,
	      const char **path)
{
	static const struct option opts[] = {
		{ "artifact", required_argument, NULL, 'a' },
		{ "policy", required_argument, NULL, 'p' },
		{ "replace", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': rq->artifact_path = optarg; break;
		case 'p': *policy_path = optarg; break;
		case 'r': rq->replace = 1; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return cli_usage(ctx, "register needs one PINS file");
	*path = argv[optind];
	return 0;
}

/* A replacement whose version keeps a sample of another artifact's
 * decisions: said, since its audits can no longer be bit-identical. */
static void
warn_sample_maker(const struct pins *pins, const struct register_result *res,
		  const char *hex)
{
	const struct rba_digest *maker = res->has_sample_artifact
						 ? &res->sample_artifact
						 : &res->old_artifact;
	char old[RBA_DIGEST_TEXT_LEN + 1];

	if (!res->replaced || !res->had_sample ||
	    rba_digest_equal(maker, &res->artifact))
		return;
	rba_digest_format(maker, old);
	cli_warn("the sample of '%s' holds decisions made by artifact %s; "
		 "the version now pins %s: audits judge them on scores, at "
		 "best metric-equivalent, until 'sample add' replaces them",
		 pins->version, old, hex);
}

static int
print_registered_json(const struct pins *pins,
		      const struct register_result *res, const char *hex,
		      const char *cfg)
{
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "version", pins->version);
	rba_json_w_str(&w, "artifact", hex);
	rba_json_w_str(&w, "config", cfg);
	rba_json_w_bool(&w, "trained", res->trained);
	if (res->trained && res->kind->sandboxed) {
		rba_json_w_open(&w, "trainer", '{');
		rba_json_w_str(&w, "kind", "exec");
		rba_json_w_str(&w, "commit", res->exec.commit);
		rba_json_w_str(&w, "tree", res->exec.tree);
		/* the command as JSON text the exec module made */
		rba_json_w_raw(&w, "command", res->exec.argv_text,
			       strlen(res->exec.argv_text));
		rba_json_w_num(&w, "seconds", res->exec.sb.seconds);
		rba_json_w_close(&w, '}');
	} else if (res->trained) {
		/* The one number writer: an AUC of a one-class
		 * validation split is NaN, null in JSON. */
		rba_json_w_open(&w, "validation", '{');
		rba_json_w_num(&w, "loss", res->rebuild.report.final.val_loss);
		rba_json_w_num(&w, "accuracy", res->rebuild.report.final.val_acc);
		rba_json_w_num(&w, "auc", res->rebuild.report.final.val_auc);
		rba_json_w_close(&w, '}');
		rba_json_w_u64(&w, "train_rows", res->rebuild.ntrain);
		rba_json_w_u64(&w, "validation_rows", res->rebuild.nval);
	}
	rba_json_w_str(&w, "pins", res->pins_text);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/* The filled pins on stdout; what was trained, on stderr. */
static void
print_registered_text(struct cli_ctx *ctx, const struct pins *pins,
		      const struct register_result *res, const char *hex)
{
	fputs(res->pins_text, stdout);
	if (!ctx->quiet && res->trained && res->kind->sandboxed)
		fprintf(stderr, "rebuild-audit: registered '%s': artifact %s; "
			"trained by commit %s (tree %s) in the sandbox, %.1f s\n",
			pins->version, hex, res->exec.commit, res->exec.tree,
			res->exec.sb.seconds);
	else if (!ctx->quiet && res->trained)
		fprintf(stderr, "rebuild-audit: registered '%s': artifact %s; "
			"validation accuracy %.4f, loss %.4f\n",
			pins->version, hex, res->rebuild.report.final.val_acc,
			res->rebuild.report.final.val_loss);
}

int
cmd_register(struct cli_ctx *ctx, int argc, char **argv)
{
	struct register_request rq;
	struct register_result res;
	struct rebuild_progress prog;
	struct policy *pol = NULL;
	struct pins *pins = NULL;
	struct rba_detail d;
	const char *path = NULL, *policy_path = NULL;
	char hex[RBA_DIGEST_TEXT_LEN + 1], cfg[RBA_DIGEST_TEXT_LEN + 1];
	int err, status = 2;

	memset(&rq, 0, sizeof(rq));
	if ((err = register_args(ctx, argc, argv, &rq, &policy_path, &path)) != 0)
		return err;
	rba_detail_clear(&d);
	if ((err = policy_pins_load(path, &pins, &d)) != 0)
		return cli_fail("invalid pins", path, err, &d);
	if (policy_path != NULL && cli_policy_load(policy_path, &pol) != 0)
		goto out;
	if (cli_store_open(ctx, 0) != 0)
		goto out;
	rq.pins = pins;
	rq.policy = pol;
	if (ctx->progress)
		fprintf(stderr, "rebuild-audit: %s '%s'...\n",
			rq.artifact_path ? "registering" : "training", pins->version);
	rq.progress = cli_progress_training(ctx, pins, &prog);
	rba_detail_clear(&d);
	err = register_version(ctx->store, &rq, &res, &d);
	cli_progress_clear(ctx);
	if (err) {
		status = cli_fail("cannot register", d.line ? path : pins->version,
				  err, &d);
		goto out;
	}
	rba_digest_format(&res.artifact, hex);
	rba_digest_format(&res.config, cfg);
	warn_sample_maker(pins, &res, hex);
	status = 0;
	if (ctx->json)
		status = print_registered_json(pins, &res, hex, cfg);
	else
		print_registered_text(ctx, pins, &res, hex);
	register_result_release(&res);
out:
	policy_pins_free(pins);
	policy_free(pol);
	return status;
}
