/*
 * cmd_version.c - register, version list/show/export-artifact and
 * policy set: the model versions a store keeps.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/register.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "policy/policy.h"
#include "store/store.h"

/* Loads a policy file for a command; prints the diagnostic on error. */
static int
load_policy(const char *path, struct policy **out)
{
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	err = policy_load(path, out, &d);
	if (err)
		return cli_fail("invalid policy", path, err, &d);
	return 0;
}

int
cmd_register(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "artifact", required_argument, NULL, 'a' },
		{ "policy", required_argument, NULL, 'p' },
		{ "replace", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct register_request rq;
	struct register_result res;
	struct policy *pol = NULL;
	struct pins *pins = NULL;
	struct rba_detail d;
	const char *path, *policy_path = NULL;
	char hex[RBA_DIGEST_TEXT_LEN + 1], cfg[RBA_DIGEST_TEXT_LEN + 1];
	int c, err, status = 2;

	memset(&rq, 0, sizeof(rq));
	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': rq.artifact_path = optarg; break;
		case 'p': policy_path = optarg; break;
		case 'r': rq.replace = 1; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return cli_usage(ctx, "register needs one PINS file");
	path = argv[optind];
	rba_detail_clear(&d);
	if ((err = policy_pins_load(path, &pins, &d)) != 0)
		return cli_fail("invalid pins", path, err, &d);
	if (policy_path != NULL && load_policy(policy_path, &pol) != 0)
		goto out;
	if (cli_store_open(ctx, 0) != 0)
		goto out;
	rq.pins = pins;
	rq.policy = pol;
	if (ctx->progress)
		fprintf(stderr, "rebuild-audit: %s '%s'...\n",
			rq.artifact_path ? "registering" : "training", pins->version);
	rba_detail_clear(&d);
	err = register_version(ctx->store, &rq, &res, &d);
	if (err) {
		status = cli_fail("cannot register", d.line ? path : pins->version,
				  err, &d);
		goto out;
	}
	rba_digest_format(&res.artifact, hex);
	rba_digest_format(&res.config, cfg);
	if (ctx->json) {
		fputs("{\"version\": ", stdout);
		cli_json_str(stdout, pins->version);
		printf(", \"artifact\": \"%s\", \"config\": \"%s\", \"trained\": %s",
		       hex, cfg, res.trained ? "true" : "false");
		if (res.trained)
			printf(", \"validation\": {\"loss\": %.9g, \"accuracy\": %.9g, "
			       "\"auc\": %.9g}, \"train_rows\": %zu, \"validation_rows\": %zu",
			       res.rebuild.report.final.val_loss,
			       res.rebuild.report.final.val_acc,
			       res.rebuild.report.final.val_auc, res.rebuild.ntrain,
			       res.rebuild.nval);
		fputs(", \"pins\": ", stdout);
		cli_json_str(stdout, res.pins_text);
		fputs("}\n", stdout);
	} else {
		fputs(res.pins_text, stdout);
		if (!ctx->quiet && res.trained)
			fprintf(stderr, "rebuild-audit: registered '%s': artifact %s; "
				"validation accuracy %.4f, loss %.4f\n",
				pins->version, hex, res.rebuild.report.final.val_acc,
				res.rebuild.report.final.val_loss);
	}
	register_result_release(&res);
	status = 0;
out:
	policy_pins_free(pins);
	policy_free(pol);
	return status;
}

struct vlist {
	struct cli_ctx *ctx;
	int n;
};

static void
version_json(const struct store_version *v)
{
	char a[RBA_DIGEST_TEXT_LEN + 1], s[RBA_DIGEST_TEXT_LEN + 1];
	char p[RBA_DIGEST_TEXT_LEN + 1], when[32];

	rba_digest_format(&v->artifact, a);
	rba_digest_format(&v->snapshot, s);
	cli_fmt_time(v->registered_at, when);
	fputs("{\"name\": ", stdout);
	cli_json_str(stdout, v->name);
	printf(", \"artifact\": \"%s\", \"snapshot\": \"%s\", \"registered\": \"%s\"",
	       a, s, when);
	if (v->has_policy) {
		rba_digest_format(&v->policy_digest, p);
		printf(", \"policy\": \"%s\"", p);
	} else {
		fputs(", \"policy\": null", stdout);
	}
	if (v->has_sample) {
		rba_digest_format(&v->sample.digest, p);
		printf(", \"sample\": {\"cases\": %llu, \"digest\": \"%s\"}",
		       (unsigned long long)v->sample.cases, p);
	} else {
		fputs(", \"sample\": null", stdout);
	}
}

static int
vlist_one(void *vctx, const struct store_version *v)
{
	struct vlist *vl = vctx;
	char a[RBA_DIGEST_TEXT_LEN + 1], when[32], cases[32];

	if (vl->ctx->json) {
		fputs(vl->n ? ",\n " : "", stdout);
		version_json(v);
		fputc('}', stdout);
	} else {
		rba_digest_format(&v->artifact, a);
		if (!vl->ctx->verbose)
			a[7 + 16] = 0;
		cli_fmt_time(v->registered_at, when);
		if (v->has_sample)
			snprintf(cases, sizeof(cases), "%llu",
				 (unsigned long long)v->sample.cases);
		else
			snprintf(cases, sizeof(cases), "-");
		printf("%-24s %s  %-6s %8s  %s\n", v->name, a,
		       v->has_policy ? "policy" : "-", cases, when);
	}
	vl->n++;
	return 0;
}

static int
version_list(struct cli_ctx *ctx, int argc, char **argv)
{
	struct vlist vl = { ctx, 0 };
	struct store_txn *txn;
	struct rba_detail d;
	int err;

	if (argc != 1)
		return cli_usage(ctx, "version list takes no arguments");
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot list versions",
				 ctx->store_path, &txn)) != 0)
		return err;
	rba_detail_clear(&d);
	if (ctx->json)
		fputc('[', stdout);
	else if (ctx->verbose)
		printf("%-24s %-71s  %-6s %8s  %s\n", "VERSION", "ARTIFACT",
		       "POLICY", "SAMPLE", "REGISTERED");
	err = store_version_list(txn, vlist_one, &vl, &d);
	store_txn_abort(txn);
	if (ctx->json)
		fputs("]\n", stdout);
	if (err)
		return cli_fail("cannot list versions", ctx->store_path, err, &d);
	return 0;
}

/* Reads version name in a read transaction; prints the diagnostic. */
static int
get_version(struct cli_ctx *ctx, const char *what, const char *name,
	    struct store_txn **txn, struct store_version *v)
{
	struct rba_detail d;
	int err;

	if ((err = cli_txn_begin(ctx, 0, 0, what, name, txn)) != 0)
		return err;
	rba_detail_clear(&d);
	err = store_version_get(*txn, name, v, &d);
	if (err) {
		store_txn_abort(*txn);
		*txn = NULL;
		if (err == RBA_E_NOTFOUND)
			snprintf(d.reason, sizeof(d.reason), "no such version");
		return cli_fail(what, name, err, &d);
	}
	return 0;
}

static int
version_show(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_version v;
	struct store_txn *txn;
	struct pins *p = NULL;
	struct rba_digest cfg, envd;
	struct rba_detail d;
	char a[RBA_DIGEST_TEXT_LEN + 1], s[RBA_DIGEST_TEXT_LEN + 1];
	char c[RBA_DIGEST_TEXT_LEN + 1], e[RBA_DIGEST_TEXT_LEN + 1];
	char pd[RBA_DIGEST_TEXT_LEN + 1], when[32];
	int err;

	if (argc != 2)
		return cli_usage(ctx, "version show needs one VERSION");
	if ((err = get_version(ctx, "cannot show version", argv[1], &txn, &v)) != 0)
		return err;
	store_txn_abort(txn);
	rba_detail_clear(&d);
	err = policy_pins_parse(v.pins_text, strlen(v.pins_text), argv[1], &p, &d);
	if (err) {
		store_version_release(&v);
		return cli_fail("cannot show version", argv[1], RBA_E_CORRUPT, &d);
	}
	policy_pins_config_hash(p, &cfg);
	rba_digest_bytes(v.env_text, strlen(v.env_text), &envd);
	rba_digest_format(&v.artifact, a);
	rba_digest_format(&v.snapshot, s);
	rba_digest_format(&cfg, c);
	rba_digest_format(&envd, e);
	cli_fmt_time(v.registered_at, when);
	if (ctx->json) {
		version_json(&v);
		printf(", \"config\": \"%s\", \"environment\": \"%s\", \"trainer_abi\": %u",
		       c, e, (unsigned)p->trainer_abi);
		fputs(", \"code_revision\": ", stdout);
		cli_json_str(stdout, p->code_revision ? p->code_revision : "");
		fputs(", \"pins_text\": ", stdout);
		cli_json_str(stdout, v.pins_text);
		fputs(", \"environment_record\": ", stdout);
		cli_json_str(stdout, v.env_text);
		if (v.has_policy) {
			fputs(", \"policy_text\": ", stdout);
			cli_json_str(stdout, v.policy_text);
		}
		fputs("}\n", stdout);
	} else {
		printf("version       %s\nregistered    %s\nartifact      %s\n"
		       "snapshot      %s\nconfig        %s\nenvironment   %s\n"
		       "code          %s\ntrainer ABI   %u\n",
		       v.name, when, a, s, c, e,
		       p->code_revision ? p->code_revision : "-",
		       (unsigned)p->trainer_abi);
		if (v.has_policy) {
			rba_digest_format(&v.policy_digest, pd);
			printf("policy        %s\n", pd);
		} else {
			printf("policy        none (set one with 'rebuild-audit policy set')\n");
		}
		if (v.has_sample) {
			rba_digest_format(&v.sample.digest, pd);
			printf("sample        %llu cases, %s\n",
			       (unsigned long long)v.sample.cases, pd);
		} else {
			printf("sample        none (add one with 'rebuild-audit sample add')\n");
		}
		printf("\npins:\n%s", v.pins_text);
		if (ctx->verbose)
			printf("\nenvironment record:\n%s", v.env_text);
	}
	policy_pins_free(p);
	store_version_release(&v);
	return 0;
}

static int
version_export_artifact(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_version v;
	struct store_txn *txn;
	struct rba_atomic a;
	struct rba_detail d;
	int err;

	if (argc != 3)
		return cli_usage(ctx, "version export-artifact needs VERSION and OUT");
	if ((err = get_version(ctx, "cannot export artifact", argv[1], &txn, &v)) != 0)
		return err;
	rba_detail_clear(&d);
	rba_atomic_sweep(argv[2]);
	err = rba_atomic_open(&a, argv[2], 0644);
	if (err == 0) {
		/* Renamed into place only once every byte matched its digest. */
		err = store_blob_read(txn, &v.artifact, cli_atomic_sink, &a, &d);
		if (err)
			rba_atomic_abort(&a);
		else
			err = rba_atomic_commit(&a);
	} else {
		snprintf(d.reason, sizeof(d.reason), "%s: %s", argv[2], rba_strerror(err));
	}
	store_txn_abort(txn);
	store_version_release(&v);
	if (err)
		return cli_fail("cannot export artifact", argv[1], err, &d);
	return 0;
}

int
cmd_version(struct cli_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return cli_usage(ctx, "missing subcommand");
	if (strcmp(argv[1], "list") == 0)
		return version_list(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return version_show(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "export-artifact") == 0)
		return version_export_artifact(ctx, argc - 1, argv + 1);
	return cli_usage(ctx, "unknown subcommand '%s'", argv[1]);
}

int
cmd_policy(struct cli_ctx *ctx, int argc, char **argv)
{
	struct policy *pol = NULL;
	struct store_txn *txn;
	struct rba_detail d;
	char pd[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	if (argc != 4 || strcmp(argv[1], "set") != 0)
		return cli_usage(ctx, "policy set needs VERSION and POLICY");
	if (load_policy(argv[3], &pol) != 0)
		return 2;
	if ((err = cli_store_open(ctx, 0)) != 0) {
		policy_free(pol);
		return err;
	}
	rba_detail_clear(&d);
	err = store_txn_begin(ctx->store, 1, 0, &txn, &d);
	if (err == 0) {
		err = store_version_set_policy(txn, argv[2], pol->text, &pol->digest, &d);
		if (err == 0)
			err = store_txn_commit(txn, &d);
		else
			store_txn_abort(txn);
	}
	rba_digest_format(&pol->digest, pd);
	policy_free(pol);
	if (err) {
		if (err == RBA_E_NOTFOUND)
			snprintf(d.reason, sizeof(d.reason), "no such version");
		return cli_fail("cannot set policy", argv[2], err, &d);
	}
	if (ctx->json)
		printf("{\"version\": \"%s\", \"policy\": \"%s\"}\n", argv[2], pd);
	else if (!ctx->quiet)
		printf("%s\n", pd);
	return 0;
}
