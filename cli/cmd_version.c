/*
 * cmd_version.c - version list/show/export-artifact: the model versions
 * a store keeps.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "rebuild/rebuild.h"
#include "rebuild/runs.h"
#include "policy/policy.h"
#include "store/store.h"

struct vlist {
	struct cli_ctx *ctx;
	struct store_txn *txn;
	struct rba_buf *out; /* the --json listing */
	int n;
	int damaged; /* version records that could not be read */
};

/* What a sample that cannot be read is, in a few words. */
static const char *
sample_damage(int err)
{
	return err == RBA_E_TAMPERED ? "the sample record does not match its seal"
				     : "the sample record cannot be decoded";
}

/* The members every version's JSON starts with, in w's open object. */
static void
version_json(struct rba_json_w *w, const struct store_version *v)
{
	char when[32];

	rba_time_utc(v->registered_at, when);
	rba_json_w_str(w, "name", v->name);
	rba_json_w_digest(w, "artifact", &v->artifact, 1);
	rba_json_w_digest(w, "snapshot", &v->snapshot, 1);
	rba_json_w_str(w, "registered", when);
	rba_json_w_digest(w, "policy", &v->policy_digest, v->has_policy);
	if (v->has_sample) {
		rba_json_w_open(w, "sample", '{');
		rba_json_w_u64(w, "cases", v->sample.cases);
		rba_json_w_digest(w, "digest", &v->sample.digest, 1);
		rba_json_w_close(w, '}');
	} else if (v->sample_err) {
		rba_json_w_open(w, "sample", '{');
		rba_json_w_str(w, "damaged", sample_damage(v->sample_err));
		rba_json_w_close(w, '}');
	} else {
		rba_json_w_str(w, "sample", NULL);
	}
}

static int
vlist_one(struct vlist *vl, const struct store_version *v)
{
	char a[RBA_DIGEST_TEXT_LEN + 1], when[32], cases[32];

	if (vl->ctx->json) {
		struct rba_json_w w;
		cli_json_w_sep(&w, vl->out, vl->n ? ",\n " : "");
		rba_json_w_open(&w, NULL, '{');
		version_json(&w, v);
		rba_json_w_close(&w, '}');
	} else {
		rba_digest_format(&v->artifact, a);
		if (!vl->ctx->verbose)
			a[7 + 16] = 0;
		rba_time_utc(v->registered_at, when);
		if (v->has_sample)
			snprintf(cases, sizeof(cases), "%llu",
				 (unsigned long long)v->sample.cases);
		else if (v->sample_err)
			snprintf(cases, sizeof(cases), "damaged");
		else
			snprintf(cases, sizeof(cases), "-");
		printf("%-24s %s  %-6s %8s  %s\n", v->name, a,
		       v->has_policy ? "policy" : "-", cases, when);
	}
	vl->n++;
	return 0;
}

/*
 * One version by name: a record that cannot be read is listed as
 * damaged, and the others are still listed.
 */
static int
vlist_name(void *vctx, const char *name, int valid)
{
	struct vlist *vl = vctx;
	struct store_version v;
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	err = valid ? store_version_get(vl->txn, name, &v, &d) : RBA_E_CORRUPT;
	if (err == RBA_E_NOMEM)
		return err;
	if (err == 0) {
		err = vlist_one(vl, &v);
		store_version_release(&v);
		return err;
	}
	if (!valid)
		snprintf(d.reason, sizeof(d.reason), "a key that is no version name");
	vl->damaged++;
	if (vl->ctx->json) {
		struct rba_json_w w;
		cli_json_w_sep(&w, vl->out, vl->n ? ",\n " : "");
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "name", name);
		rba_json_w_str(&w, "damaged", d.reason);
		rba_json_w_close(&w, '}');
	} else {
		printf("%-24s damaged: %s\n", name, d.reason);
	}
	vl->n++;
	return 0;
}

static int
version_list(struct cli_ctx *ctx, int argc, char **argv)
{
	struct vlist vl = { ctx, NULL, NULL, 0, 0 };
	struct store_txn *txn;
	struct rba_detail d;
	struct rba_buf out;
	struct rba_json_w w; /* the listing's brackets; vlist_* its items */
	int err, perr = 0;

	if (argc != 1)
		return cli_usage(ctx, "version list takes no arguments");
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot list versions",
				 ctx->store_path, &txn)) != 0)
		return err;
	rba_detail_clear(&d);
	rba_buf_init(&out);
	vl.out = &out;
	rba_json_w_init(&w, &out);
	if (ctx->json)
		rba_json_w_open(&w, NULL, '[');
	else if (ctx->verbose)
		printf("%-24s %-71s  %-6s %8s  %s\n", "VERSION", "ARTIFACT",
		       "POLICY", "SAMPLE", "REGISTERED");
	vl.txn = txn;
	err = store_version_names(txn, vlist_name, &vl, &d);
	store_txn_abort(txn);
	if (ctx->json) {
		rba_json_w_close(&w, ']');
		perr = cli_json_print(&out);
	}
	rba_buf_release(&out);
	if (err)
		return cli_fail("cannot list versions", ctx->store_path, err, &d);
	if (perr)
		return perr;
	if (vl.damaged) {
		fprintf(stderr, "rebuild-audit: cannot list versions '%s': %d "
			"damaged version record%s; run 'rebuild-audit store check'\n",
			ctx->store_path, vl.damaged, vl.damaged == 1 ? "" : "s");
		return 2;
	}
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

/*
 * The training run of the version: run_err 0 (found), RBA_E_NOTFOUND
 * (none kept) or why it could not be read (rd the detail).
 */
static void
show_run_json(struct rba_json_w *w, const char *id, int run_err,
	      const struct rebuild_runrec_summary *r, const struct rba_detail *rd)
{
	if (run_err == RBA_E_NOTFOUND) {
		rba_json_w_str(w, "run", NULL);
		return;
	}
	rba_json_w_open(w, "run", '{');
	rba_json_w_str(w, "id", id);
	if (run_err != 0) {
		rba_json_w_str(w, "error",
			       rd->reason[0] ? rd->reason : rba_strerror(run_err));
		rba_json_w_close(w, '}');
		return;
	}
	rba_json_w_u64(w, "epochs", r->epochs);
	rba_json_w_u64(w, "train_examples", r->ntrain);
	rba_json_w_u64(w, "validation_examples", r->nval);
	rba_json_w_num(w, "val_loss", r->val_loss);
	rba_json_w_num(w, "val_acc", r->val_acc);
	rba_json_w_num(w, "val_auc", r->val_auc);
	rba_json_w_num(w, "examples_per_second", r->examples_per_second);
	rba_json_w_close(w, '}');
}

static void
show_run_text(const char *id, int run_err, const struct rebuild_runrec_summary *r,
	      int trees)
{
	/* A curve has a point per epoch, or per boosting round of trees. */
	const char *unit = trees ? "boosting round" : "epoch";
	char l[32], a[32], u[32], x[32];

	if (run_err == RBA_E_NOTFOUND) {
		printf("run           none kept (registered with --artifact, or "
		       "before runs were kept)\n");
		return;
	}
	if (run_err != 0) {
		printf("run           %s: cannot be read (see the error below)\n", id);
		return;
	}
	printf("run           %s\n", id);
	if (r->epochs == 0 && r->ntrain == 0 && isnan(r->val_loss)) {
		/* an exec training (runrec.h, run-exec/v1): no curves */
		printf("training      %s s in the sandbox ('rebuild-audit runs show "
		       "%s' has the command, exit status and output digests)\n",
		       cli_fmt_g6(r->train_seconds, x), id);
		return;
	}
	printf("validation    loss %s, accuracy %s, AUC %s after %u %s%s "
	       "(%llu train, %llu validation examples)\n",
	       cli_fmt_g6(r->val_loss, l), cli_fmt_g6(r->val_acc, a),
	       cli_fmt_g6(r->val_auc, u), r->epochs, unit, r->epochs == 1 ? "" : "s",
	       (unsigned long long)r->ntrain, (unsigned long long)r->nval);
	printf("speed         %s examples/second\n",
	       cli_fmt_g6(r->examples_per_second, x));
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
	char run_id[RUNS_ID_SIZE];
	struct rebuild_runrec_summary run;
	struct rba_detail rd;
	int err, run_err;

	if (argc != 2)
		return cli_usage(ctx, "version show needs one VERSION");
	if ((err = get_version(ctx, "cannot show version", argv[1], &txn, &v)) != 0)
		return err;
	runs_id_register(v.name, v.registered_at, run_id);
	rba_detail_clear(&rd);
	run_err = runs_summary_get(txn, run_id, &run, &rd);
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
	rba_time_utc(v.registered_at, when);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		version_json(&w, &v);
		rba_json_w_str(&w, "config", c);
		rba_json_w_str(&w, "environment", e);
		rba_json_w_u64(&w, "trainer_abi", p->trainer_abi);
		rba_json_w_str(&w, "code_revision",
			       p->code_revision ? p->code_revision : "");
		show_run_json(&w, run_id, run_err, &run, &rd);
		rba_json_w_str(&w, "pins_text", v.pins_text);
		rba_json_w_str(&w, "environment_record", v.env_text);
		if (v.has_policy)
			rba_json_w_str(&w, "policy_text", v.policy_text);
		rba_json_w_close(&w, '}');
		if ((err = cli_json_print(&b)) != 0) {
			policy_pins_free(p);
			store_version_release(&v);
			return err;
		}
	} else {
		char line[2 * PINS_MAX_ARG + 256]; /* repository and revision */
		printf("version       %s\nregistered    %s\nartifact      %s\n"
		       "snapshot      %s\nconfig        %s\nenvironment   %s\n"
		       "code          %s\n",
		       v.name, when, a, s, c, e,
		       p->code_revision ? p->code_revision : "-");
		rebuild_trainer_kind(p)->show(p, line, sizeof(line));
		printf("%s\n", line);
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
		} else if (v.sample_err) {
			printf("sample        damaged: %s (run 'rebuild-audit store "
			       "check')\n", sample_damage(v.sample_err));
		} else {
			printf("sample        none (add one with 'rebuild-audit sample add')\n");
		}
		show_run_text(run_id, run_err, &run,
			      p->model.kind == PINS_MODEL_GBDT);
		printf("\npins:\n%s", v.pins_text);
		if (ctx->verbose)
			printf("\nenvironment record:\n%s", v.env_text);
	}
	policy_pins_free(p);
	store_version_release(&v);
	/* A run record that is there but unreadable is never shown as
	 * "none": the report is printed, and the answer is "could not". */
	if (run_err != 0 && run_err != RBA_E_NOTFOUND)
		return cli_fail("cannot read the training run of", argv[1],
				run_err, &rd);
	return 0;
}

/* A store read callback that keeps nothing: a verifying pass. */
static int
discard(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	return 0;
}

static int
version_export_artifact(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_version v;
	struct store_txn *txn;
	struct rba_output out = RBA_OUTPUT_INIT;
	struct rba_detail d;
	const char *pos[2];
	int err, force;

	if ((err = cli_args_force(ctx, argc, argv, 2, pos, &force,
				  "version export-artifact needs VERSION and OUT")) != 0)
		return err;
	if ((err = get_version(ctx, "cannot export artifact", pos[0], &txn, &v)) != 0)
		return err;
	rba_detail_clear(&d);
	if ((err = cli_output_open(pos[1], force, stdout, "cannot export artifact",
				   pos[0], &out)) == 0) {
		/* A file is put in place only once every byte matched its
		 * digest; what goes straight out is verified before it goes. */
		int rerr = 0;
		if (rba_output_direct(&out))
			rerr = store_blob_read(txn, &v.artifact, discard, NULL, &d);
		if (rerr == 0 && rba_output_stdio(&out) == NULL)
			rerr = RBA_E_NOMEM;
		if (rerr == 0)
			rerr = store_blob_read(txn, &v.artifact, rba_output_sink,
					       &out, &d);
		err = cli_output_finish(&out, rerr, "cannot export artifact",
					pos[0], &d);
	}
	store_txn_abort(txn);
	store_version_release(&v);
	return err;
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
