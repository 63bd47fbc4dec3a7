/*
 * cmd_train.c - train: train from pins, keep the run record in the
 * store when there is one, and print the artifact digest.  No artifact
 * or version is stored: that is register's work.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rebuild/runs.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "policy/policy.h"
#include "train/envrec.h"
#include "exec/exec.h"
#include "rebuild/rebuild.h"
#include "rebuild/runrec.h"
#include "data/snapshot.h"
#include "store/store.h"

/* The snapshot bytes: from --snapshot FILE, else from the store. */
static int
load_snapshot(struct cli_ctx *ctx, const struct pins *p, const char *file,
	      uint8_t **buf, size_t *n, char *name, size_t namesz)
{
	struct rba_detail d;
	struct rba_digest got;
	char want[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	rba_detail_clear(&d);
	rba_digest_format(&p->snapshot, want);
	if (file != NULL) {
		snprintf(name, namesz, "%s", file);
		err = rba_file_read(file, SNAPSHOT_MAX_LOAD, buf, n, &d);
		if (err != 0)
			return cli_fail("cannot read snapshot", file, err, &d);
		rba_digest_bytes(*buf, *n, &got);
		if (!rba_digest_equal(&got, &p->snapshot)) {
			free(*buf);
			*buf = NULL;
			rba_fail(&d, RBA_E_SCHEMA, NULL, 0, 0,
				 "does not match the pinned snapshot %s", want);
			return cli_fail("cannot train", file, RBA_E_SCHEMA, &d);
		}
		return 0;
	}
	snprintf(name, namesz, "%s", want);
	{
		struct store *st = NULL;
		struct store_txn *txn = NULL;
		cli_guard_store("cannot read store", ctx->store_path);
		err = store_open(ctx->store_path, 1, &st, &d);
		if (err == RBA_E_NOSTORE) {
			rba_detail_clear(&d);
			rba_fail(&d, RBA_E_NOTFOUND, NULL, 0, 0,
				 "no store at '%s' holds it; give --snapshot "
				 "FILE",
				 ctx->store_path);
			return cli_fail("cannot find snapshot", want,
					RBA_E_NOTFOUND, &d);
		}
		if (err != 0)
			return cli_fail("cannot open store", ctx->store_path, err,
					&d);
		err = store_txn_begin(st, 0, 0, &txn, &d);
		if (err == 0)
			err = store_blob_load(txn, &p->snapshot,
					      SNAPSHOT_MAX_LOAD, buf, n, &d);
		store_txn_abort(txn);
		store_close(st);
		if (err != 0)
			return cli_fail("cannot load snapshot", want, err, &d);
	}
	return 0;
}

/*
 * Keeps the run record of res in the store as "train/<version>/s<seed>@<t>"
 * (runs.h), writing its id into id.  A store path that holds no store
 * keeps nothing and leaves id empty: training needs no store, and the
 * caller says the record was not kept.  Any other failure to keep it is
 * an error (2): a run the user was told is kept must be.
 */
static int
keep_run(struct cli_ctx *ctx, const struct pins *p,
	 const struct rebuild_result *res, const struct rba_digest *env,
	 double wall, char id[RUNS_ID_SIZE])
{
	struct rba_detail d;
	char subject[STORE_VERSION_NAME_MAX + 32];
	int err;

	id[0] = 0;
	rba_detail_clear(&d);
	cli_guard_store("cannot open store", ctx->store_path);
	err = store_open(ctx->store_path, 0, &ctx->store, &d);
	if (err == RBA_E_NOSTORE)
		return 0;
	if (err != 0)
		return cli_fail("cannot open store", ctx->store_path, err, &d);
	snprintf(subject, sizeof(subject), "train/%s/s%" PRIu64, p->version,
		 p->train.seed);
	err = runs_keep(ctx->store, subject, (int64_t)time(NULL), p, res, env,
			wall, id, &d);
	if (err != 0)
		return cli_fail("cannot keep run", ctx->store_path, err, &d);
	return 0;
}

/* What the options ask for. */
struct train_opts {
	const char *pins_path, *out, *record, *snap_file;
	int keep, force;
};

/* argv into o; 0, or the usage status. */
static int
train_args(struct cli_ctx *ctx, int argc, char **argv, struct train_opts *o)
{
	const char *v;
	int r;

	o->keep = 1;
	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "-o", &v)) != 0 ||
		    (r = cli_opt_value(argc, argv, &i, "--output", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "-o needs a file");
			o->out = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--record", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--record needs a file");
			o->record = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--snapshot", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--snapshot needs a file");
			o->snap_file = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (strcmp(argv[i], "--no-keep") == 0) {
			o->keep = 0;
		} else if (strcmp(argv[i], "--force") == 0) {
			o->force = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (o->pins_path == NULL) {
			o->pins_path = argv[i];
		} else {
			return cli_usage(ctx, "one pins file, please");
		}
	}
	if (o->pins_path == NULL)
		return cli_usage(ctx, "needs a pins file");
	return 0;
}

/* The report of a finished training: stderr notes, then stdout. */
static int
train_print(const struct cli_ctx *ctx, const struct train_opts *o,
	    const struct rebuild_result *res, const char *env_hex,
	    const char *run_id)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	struct rba_buf b;
	struct rba_json_w w;

	rba_digest_format(&res->digest, hex);
	if (!ctx->quiet && !ctx->json) {
		if (run_id[0])
			fprintf(stderr, "rebuild-audit: run kept as %s\n", run_id);
		else if (o->keep)
			fprintf(stderr,
				"rebuild-audit: no store at '%s': the run record "
				"is not kept\n",
				ctx->store_path);
	}
	if (ctx->verbose)
		fprintf(stderr,
			"rebuild-audit: trained '%s': val_loss %.6f val_acc %.4f "
			"in %.1f ms\n",
			o->pins_path, res->report.final.val_loss,
			res->report.final.val_acc,
			res->report.train_seconds * 1000.0);
	if (!ctx->json) {
		printf("%s\n", hex);
		return 0;
	}
	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "artifact", hex);
	rba_json_w_u64(&w, "bytes", res->artifact_len);
	rba_json_w_u64(&w, "trainer_abi", res->abi);
	rba_json_w_str(&w, "environment", env_hex);
	rba_json_w_str(&w, "run", run_id[0] ? run_id : NULL);
	rba_json_w_num(&w, "val_loss", res->report.final.val_loss);
	rba_json_w_num(&w, "val_acc", res->report.final.val_acc);
	rba_json_w_num(&w, "val_auc", res->report.final.val_auc);
	rba_json_w_num(&w, "train_seconds", res->report.train_seconds);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/* The environment record of the training and its digest (as text in
 * hex): this machine's, or an exec version's own.  0 or the exit
 * status. */
static int
train_env(const struct pins *p, const char *pins_path, struct rba_buf *env,
	  struct rba_digest *digest, char *hex, struct rba_detail *d)
{
	int err;

	/* an exec version's environment is its own record (exec.h) */
	if ((err = rebuild_trainer_kind(p)->envrec(p, env, d)) != 0)
		return cli_fail("cannot train", pins_path, err, d);
	envrec_digest((const char *)env->p, env->len, digest);
	rba_digest_format(digest, hex);
	return 0;
}

int
cmd_train(struct cli_ctx *ctx, int argc, char **argv)
{
	struct train_opts o;
	char snap_name[4096], run_id[RUNS_ID_SIZE] = "";
	struct pins *p = NULL;
	struct rba_detail d;
	struct rebuild_result res;
	struct rebuild_progress prog;
	struct rba_buf env, rb;
	struct rba_output art = RBA_OUTPUT_INIT, rec = RBA_OUTPUT_INIT;
	struct rba_digest env_digest;
	char env_hex[RBA_DIGEST_TEXT_LEN + 1];
	uint8_t *snap = NULL;
	size_t snap_n = 0;
	double t0 = rba_time_mono();
	int err, status;

	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	rba_buf_init(&env);
	rba_buf_init(&rb);
	if ((status = train_args(ctx, argc, argv, &o)) != 0)
		return status;
	rba_detail_clear(&d);
	if ((err = policy_pins_load(o.pins_path, &p, &d)) != 0)
		return cli_fail("invalid pins", o.pins_path, err, &d);
	status = 2;
	if (p->trainer_abi != 0 && !rebuild_abi_supported(p->trainer_abi)) {
		rba_fail(&d, RBA_E_UNSUPPORTED, NULL, 0, 0,
			 "trainer ABI %u is not known to this build (it knows 1 "
			 "to %u)",
			 p->trainer_abi, rebuild_abi_max());
		status = cli_fail("cannot train", o.pins_path, RBA_E_UNSUPPORTED,
				  &d);
		goto done;
	}
	/* The outputs are claimed before the work: an existing file is
	 * refused now, not after the training. */
	if ((o.out != NULL &&
	     (status = cli_output_open(o.out, o.force, NULL, "cannot write artifact",
				       o.out, &art)) != 0) ||
	    (o.record != NULL &&
	     (status = cli_output_open(o.record, o.force, NULL,
				       "cannot write run record", o.record,
				       &rec)) != 0))
		goto done;
	if ((status = load_snapshot(ctx, p, o.snap_file, &snap, &snap_n,
				    snap_name, sizeof(snap_name))) != 0)
		goto done;
	status = 2;
	err = rebuild_from_snapshot(p, 0, snap, snap_n, snap_name,
				    cli_progress_training(ctx, p, &prog), &res, &d);
	cli_progress_clear(ctx);
	if (err != 0) {
		status = cli_fail("cannot train", d.file[0] ? d.file : o.pins_path,
				  err, &d);
		goto done;
	}
	if ((status = train_env(p, o.pins_path, &env, &env_digest, env_hex,
				&d)) != 0)
		goto done;
	/* The run is kept before anything says it succeeded. */
	if (o.keep && (status = keep_run(ctx, p, &res, &env_digest,
					 rba_time_mono() - t0, run_id)) != 0)
		goto done;
	if (o.out != NULL &&
	    (status = cli_output_finish(&art, rba_output_write(&art, res.artifact,
							       res.artifact_len),
					"cannot write artifact", o.out, NULL)) != 0)
		goto done;
	if (o.record != NULL) {
		rebuild_runrec_render(p, &res, env_hex, rba_time_mono() - t0, &rb);
		err = rba_buf_status(&rb);
		if (err == 0)
			err = rba_output_write(&rec, rb.p, rb.len);
		if ((status = cli_output_finish(&rec, err, "cannot write run record",
						o.record, NULL)) != 0)
			goto done;
	}
	status = train_print(ctx, &o, &res, env_hex, run_id);
done:
	rba_output_abort(&art);
	rba_output_abort(&rec);
	rba_buf_release(&rb);
	free(snap);
	rba_buf_release(&env);
	rebuild_result_release(&res);
	policy_pins_free(p);
	return status;
}
