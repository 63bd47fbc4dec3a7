/*
 * cmd_train.c - train, env, score and snapshot synth: the trainer's
 * commands that need no stored version.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cmd_train.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "policy/policy.h"
#include "rebuild/artifact.h"
#include "rebuild/csv.h"
#include "rebuild/encode.h"
#include "rebuild/envrec.h"
#include "rebuild/rebuild.h"
#include "rebuild/synth.h"
#include "store/store.h"

#define CASES_MAX_BYTES (1u << 30)

/* "--name value" or "--name=value"; advances *i past what it used. */
static int
opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strcmp(a, name) == 0) {
		if (*i + 1 >= argc)
			return -1;
		*val = argv[++*i];
		return 1;
	}
	if (strncmp(a, name, n) == 0 && a[n] == '=') {
		*val = a + n + 1;
		return 1;
	}
	return 0;
}

static int
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

static int
parse_double(const char *s, double *out)
{
	double v;

	if (csv_parse_number(s, strlen(s), &v) != 0)
		return -1;
	*out = v;
	return 0;
}

static void
json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);
}

static double
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
		err = rba_file_read(file, REBUILD_MAX_SNAPSHOT, buf, n, &d);
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
					      REBUILD_MAX_SNAPSHOT, buf, n, &d);
		store_txn_abort(txn);
		store_close(st);
		if (err != 0)
			return cli_fail("cannot load snapshot", want, err, &d);
	}
	return 0;
}

static int
write_record(const char *path, const struct pins *p,
	     const struct rebuild_result *res, const char *env_hex,
	     double wall)
{
	struct rba_atomic a;
	struct rba_digest cfg;
	char cfg_hex[RBA_DIGEST_TEXT_LEN + 1], snap_hex[RBA_DIGEST_TEXT_LEN + 1];
	char art_hex[RBA_DIGEST_TEXT_LEN + 1];
	const struct rebuild_report *r = &res->report;
	FILE *f;
	int err;

	policy_pins_config_hash(p, &cfg);
	rba_digest_format(&cfg, cfg_hex);
	rba_digest_format(&p->snapshot, snap_hex);
	rba_digest_format(&res->digest, art_hex);
	if ((err = rba_atomic_open(&a, path, 0644)) != 0)
		return err;
	if ((f = rba_atomic_stdio(&a)) == NULL) {
		err = errno ? errno : EIO;
		rba_atomic_abort(&a);
		return err;
	}
	fputs("{\n  \"schema\": \"rebuild-audit/run/v1\",\n  \"version\": ", f);
	cli_json_str(f, p->version);
	fprintf(f, ",\n  \"config_hash\": \"%s\",\n  \"snapshot\": \"%s\","
		   "\n  \"environment\": \"%s\",\n  \"code_revision\": ",
		cfg_hex, snap_hex, env_hex);
	cli_json_str(f, envrec_code_revision());
	fprintf(f, ",\n  \"trainer_abi\": %u,\n  \"seed\": %llu,"
		   "\n  \"mode\": \"%s\",\n  \"threads\": %u,"
		   "\n  \"artifact\": \"%s\",\n  \"examples\": {\"train\": %zu, "
		   "\"validation\": %zu, \"features\": %u, \"classes\": %u},"
		   "\n  \"curves\": [",
		res->abi, (unsigned long long)p->train.seed,
		p->determinism.mode == PINS_DET_FAST ? "fast" : "strict",
		p->determinism.threads, art_hex, res->ntrain, res->nval,
		res->nfeatures, res->nclasses);
	for (uint32_t e = 0; e < r->epochs; e++) {
		const struct rebuild_epoch *ep = &r->curve[e];
		fprintf(f, "%s\n    {\"epoch\": %u, \"train_loss\": ",
			e ? "," : "", e + 1);
		json_num(f, ep->train_loss);
		fputs(", \"val_loss\": ", f);
		json_num(f, ep->val_loss);
		fputs(", \"val_acc\": ", f);
		json_num(f, ep->val_acc);
		fputs(", \"val_auc\": ", f);
		json_num(f, ep->val_auc);
		fputc('}', f);
	}
	fputs("\n  ],\n  \"final\": {\"train_loss\": ", f);
	json_num(f, r->final.train_loss);
	fputs(", \"val_loss\": ", f);
	json_num(f, r->final.val_loss);
	fputs(", \"val_acc\": ", f);
	json_num(f, r->final.val_acc);
	fputs(", \"val_auc\": ", f);
	json_num(f, r->final.val_auc);
	fputs("},\n  \"examples_per_second\": ", f);
	json_num(f, r->examples_per_second);
	fputs(",\n  \"train_seconds\": ", f);
	json_num(f, r->train_seconds);
	fputs(",\n  \"wall_seconds\": ", f);
	json_num(f, wall);
	fputs("\n}\n", f);
	if (fflush(f) != 0 || ferror(f)) {
		err = errno ? errno : EIO;
		rba_atomic_abort(&a);
		return err;
	}
	return rba_atomic_commit(&a);
}

int
cmd_train(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *pins_path = NULL, *out = NULL, *record = NULL;
	const char *snap_file = NULL, *v;
	char snap_name[4096];
	struct pins *p = NULL;
	struct rba_detail d;
	struct rebuild_result res;
	struct rba_buf env;
	struct rba_digest env_digest;
	char hex[RBA_DIGEST_TEXT_LEN + 1], env_hex[RBA_DIGEST_TEXT_LEN + 1];
	uint8_t *snap = NULL;
	size_t snap_n = 0;
	double t0 = wall_now();
	int err, status = 2, r;

	memset(&res, 0, sizeof(res));
	rba_buf_init(&env);
	for (int i = 1; i < argc; i++) {
		if ((r = opt_value(argc, argv, &i, "-o", &v)) != 0 ||
		    (r = opt_value(argc, argv, &i, "--output", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "-o needs a file");
			out = v;
		} else if ((r = opt_value(argc, argv, &i, "--record", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--record needs a file");
			record = v;
		} else if ((r = opt_value(argc, argv, &i, "--snapshot", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--snapshot needs a file");
			snap_file = v;
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
	if (pins_path == NULL)
		return cli_usage(ctx, "needs a pins file");
	rba_detail_clear(&d);
	if ((err = policy_pins_load(pins_path, &p, &d)) != 0)
		return cli_fail("invalid pins", pins_path, err, &d);
	if (p->trainer_abi != 0 && !rebuild_abi_supported(p->trainer_abi)) {
		rba_fail(&d, RBA_E_UNSUPPORTED, NULL, 0, 0,
			 "trainer ABI %u is not known to this build (it knows 1 "
			 "to %u)",
			 p->trainer_abi, rebuild_abi_current());
		status = cli_fail("cannot train", pins_path, RBA_E_UNSUPPORTED,
				  &d);
		goto done;
	}
	if ((status = load_snapshot(ctx, p, snap_file, &snap, &snap_n,
				    snap_name, sizeof(snap_name))) != 0)
		goto done;
	status = 2;
	err = rebuild_from_snapshot(p, 0, snap, snap_n, snap_name, &res, &d);
	if (err != 0) {
		status = cli_fail("cannot train", d.file[0] ? d.file : pins_path,
				  err, &d);
		goto done;
	}
	rba_digest_format(&res.digest, hex);
	if (out != NULL &&
	    (err = rba_file_write_atomic(out, res.artifact, res.artifact_len,
					 0644)) != 0) {
		status = cli_fail("cannot write artifact", out, err, NULL);
		goto done;
	}
	if (envrec_capture(p->determinism.mode, p->determinism.threads, &env)) {
		status = cli_fail("cannot train", pins_path, RBA_E_NOMEM, NULL);
		goto done;
	}
	envrec_digest((const char *)env.p, env.len, &env_digest);
	rba_digest_format(&env_digest, env_hex);
	if (record != NULL &&
	    (err = write_record(record, p, &res, env_hex, wall_now() - t0))) {
		status = cli_fail("cannot write run record", record, err, NULL);
		goto done;
	}
	if (ctx->verbose)
		fprintf(stderr,
			"rebuild-audit: trained '%s': val_loss %.6f val_acc %.4f "
			"in %.1f ms\n",
			pins_path, res.report.final.val_loss,
			res.report.final.val_acc,
			res.report.train_seconds * 1000.0);
	if (ctx->json) {
		printf("{\"artifact\": \"%s\", \"bytes\": %zu, \"trainer_abi\": %u, "
		       "\"environment\": \"%s\", \"val_loss\": ",
		       hex, res.artifact_len, res.abi, env_hex);
		json_num(stdout, res.report.final.val_loss);
		fputs(", \"val_acc\": ", stdout);
		json_num(stdout, res.report.final.val_acc);
		fputs(", \"val_auc\": ", stdout);
		json_num(stdout, res.report.final.val_auc);
		fputs(", \"train_seconds\": ", stdout);
		json_num(stdout, res.report.train_seconds);
		fputs("}\n", stdout);
	} else {
		printf("%s\n", hex);
	}
	status = 0;
done:
	free(snap);
	rba_buf_release(&env);
	rebuild_result_release(&res);
	policy_pins_free(p);
	return status;
}

int
cmd_env(struct cli_ctx *ctx, int argc, char **argv)
{
	enum pins_det_mode mode = PINS_DET_STRICT;
	uint64_t threads = 1;
	const char *pins_path = NULL, *v;
	struct rba_buf b;
	struct rba_digest dg;
	struct envrec rec;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int r, err, mode_set = 0, threads_set = 0;

	for (int i = 1; i < argc; i++) {
		if ((r = opt_value(argc, argv, &i, "--mode", &v)) != 0) {
			if (r < 0 || (strcmp(v, "strict") && strcmp(v, "fast")))
				return cli_usage(ctx, "--mode is strict or fast");
			mode = strcmp(v, "fast") == 0 ? PINS_DET_FAST
						      : PINS_DET_STRICT;
			mode_set = 1;
		} else if ((r = opt_value(argc, argv, &i, "--threads", &v)) != 0) {
			if (r < 0 || parse_u64(v, 64, &threads) || threads < 1)
				return cli_usage(ctx, "--threads is 1 to 64");
			threads_set = 1;
		} else if ((r = opt_value(argc, argv, &i, "--pins", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--pins needs a file");
			pins_path = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else {
			return cli_usage(ctx, "unexpected argument '%s'", argv[i]);
		}
	}
	if (pins_path != NULL) {
		struct pins *p = NULL;
		rba_detail_clear(&d);
		if ((err = policy_pins_load(pins_path, &p, &d)) != 0)
			return cli_fail("invalid pins", pins_path, err, &d);
		if (!mode_set)
			mode = p->determinism.mode;
		if (!threads_set)
			threads = p->determinism.threads;
		policy_pins_free(p);
	}
	rba_buf_init(&b);
	if (envrec_capture(mode, (unsigned)threads, &b) != 0) {
		rba_buf_release(&b);
		return cli_fail("cannot capture", "environment", RBA_E_NOMEM, NULL);
	}
	envrec_digest((const char *)b.p, b.len, &dg);
	rba_digest_format(&dg, hex);
	if (!ctx->json) {
		fwrite(b.p, 1, b.len, stdout);
		printf("\n%s\n", hex);
		rba_buf_release(&b);
		return 0;
	}
	rba_detail_clear(&d);
	err = envrec_parse((const char *)b.p, b.len, &rec, &d);
	if (err != 0) {
		rba_buf_release(&b);
		return cli_fail("cannot capture", "environment", err, &d);
	}
	printf("{\"digest\": \"%s\", \"record\": {", hex);
	for (size_t i = 0; i < rec.n; i++) {
		fputs(i ? ", " : "", stdout);
		cli_json_str(stdout, rec.f[i].key);
		fputs(": ", stdout);
		cli_json_str(stdout, rec.f[i].value);
	}
	fputs("}, \"text\": ", stdout);
	cli_json_str(stdout, rba_buf_cstr(&b));
	fputs("}\n", stdout);
	envrec_release(&rec);
	rba_buf_release(&b);
	return 0;
}

static void
print_score_row(struct cli_ctx *ctx, const struct artifact *a,
		const struct policy *pol, const char *id, const float *probs,
		int first)
{
	const struct encode_spec *s = &a->spec;
	const char *decision = NULL;
	double dp[REBUILD_MAX_CLASSES];

	if (pol != NULL && pol->argmax) {
		for (uint32_t c = 0; c < s->nclasses; c++)
			dp[c] = probs[c];
		size_t k = policy_decide_argmax(pol, dp, s->nclasses, NULL);
		decision = k < s->nclasses ? s->classes[k] : NULL;
	} else if (pol != NULL) {
		decision = policy_decide(pol, probs[s->positive], NULL);
	}
	if (ctx->json) {
		fputs(first ? "\n    {\"id\": " : ",\n    {\"id\": ", stdout);
		cli_json_str(stdout, id);
		if (s->positive != ENCODE_NO_POSITIVE)
			printf(", \"score\": %.9g", (double)probs[s->positive]);
		fputs(", \"probabilities\": {", stdout);
		for (uint32_t c = 0; c < s->nclasses; c++) {
			fputs(c ? ", " : "", stdout);
			cli_json_str(stdout, s->classes[c]);
			printf(": %.9g", (double)probs[c]);
		}
		fputc('}', stdout);
		if (pol != NULL) {
			fputs(", \"decision\": ", stdout);
			if (decision)
				cli_json_str(stdout, decision);
			else
				fputs("null", stdout);
		}
		fputc('}', stdout);
		return;
	}
	/* CSV: ids and decisions are quoted when they need it. */
	if (strpbrk(id, ",\"\r\n") != NULL) {
		putchar('"');
		for (const char *q = id; *q; q++) {
			if (*q == '"')
				putchar('"');
			putchar(*q);
		}
		putchar('"');
	} else {
		fputs(id, stdout);
	}
	if (s->positive != ENCODE_NO_POSITIVE)
		printf(",%.9g", (double)probs[s->positive]);
	else
		for (uint32_t c = 0; c < s->nclasses; c++)
			printf(",%.9g", (double)probs[c]);
	if (pol != NULL)
		printf(",%s", decision ? decision : "");
	putchar('\n');
}

int
cmd_score(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *art_path = NULL, *cases_path = NULL, *pol_path = NULL;
	const char *id_col = NULL, *v;
	struct artifact a;
	struct rba_digest dg;
	struct rba_detail d;
	struct csv_table *t = NULL;
	struct policy *pol = NULL;
	float *x = NULL, *probs = NULL;
	long idc = -1;
	char hex[RBA_DIGEST_TEXT_LEN + 1], rowid[32];
	int r, err, status = 2;

	memset(&a, 0, sizeof(a));
	for (int i = 1; i < argc; i++) {
		if ((r = opt_value(argc, argv, &i, "--policy", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--policy needs a file");
			pol_path = v;
		} else if ((r = opt_value(argc, argv, &i, "--id-column", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--id-column needs a name");
			id_col = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (art_path == NULL) {
			art_path = argv[i];
		} else if (cases_path == NULL) {
			cases_path = argv[i];
		} else {
			return cli_usage(ctx, "too many arguments");
		}
	}
	if (art_path == NULL || cases_path == NULL)
		return cli_usage(ctx, "needs an artifact and a cases file");
	rba_detail_clear(&d);
	if ((err = artifact_load(art_path, &a, &dg, &d)) != 0)
		return cli_fail("cannot load artifact", art_path, err, &d);
	rba_digest_format(&dg, hex);
	if (pol_path != NULL) {
		rba_detail_clear(&d);
		if ((err = policy_load(pol_path, &pol, &d)) != 0) {
			status = cli_fail("invalid policy", pol_path, err, &d);
			goto done;
		}
		if (!pol->argmax && a.spec.positive == ENCODE_NO_POSITIVE) {
			rba_fail(&d, RBA_E_SCHEMA, NULL, 0, 0,
				 "decision bands need a model with a positive "
				 "class; this one has none (use decision: "
				 "{rule: argmax})");
			status = cli_fail("cannot score", pol_path, RBA_E_SCHEMA,
					  &d);
			goto done;
		}
	}
	rba_detail_clear(&d);
	if ((err = csv_table_load(cases_path, &t, &d)) != 0) {
		status = cli_fail("cannot read cases", cases_path, err, &d);
		goto done;
	}
	if (id_col != NULL) {
		idc = csv_table_col(t, id_col);
		if (idc < 0) {
			rba_fail(&d, RBA_E_SCHEMA, NULL, 0, 0,
				 "no column '%s' for --id-column", id_col);
			status = cli_fail("cannot score", cases_path,
					  RBA_E_SCHEMA, &d);
			goto done;
		}
	} else {
		idc = csv_table_col(t, "id");
	}
	x = malloc(t->nrows * a.spec.nfeatures * sizeof(float) + 1);
	probs = malloc(t->nrows * a.spec.nclasses * sizeof(float) + 1);
	if (x == NULL || probs == NULL) {
		status = cli_fail("cannot score", cases_path, RBA_E_NOMEM, NULL);
		goto done;
	}
	rba_detail_clear(&d);
	if ((err = encode_table(&a.spec, t, x, &d)) != 0) {
		status = cli_fail("cannot score", cases_path, err, &d);
		goto done;
	}
	if ((err = artifact_score(&a, x, t->nrows, probs)) != 0) {
		status = cli_fail("cannot score", cases_path, err, NULL);
		goto done;
	}
	if (ctx->json) {
		printf("{\"artifact\": \"%s\", \"cases\": [", hex);
	} else {
		fputs(idc >= 0 ? t->names[idc] : "row", stdout);
		if (a.spec.positive != ENCODE_NO_POSITIVE)
			fputs(",score", stdout);
		else
			for (uint32_t c = 0; c < a.spec.nclasses; c++)
				printf(",p_%s", a.spec.classes[c]);
		if (pol != NULL)
			fputs(",decision", stdout);
		putchar('\n');
	}
	for (size_t i = 0; i < t->nrows; i++) {
		const char *id = rowid;
		if (idc >= 0)
			id = csv_table_cell(t, i, (size_t)idc);
		else
			snprintf(rowid, sizeof(rowid), "%zu", i + 1);
		print_score_row(ctx, &a, pol, id, probs + i * a.spec.nclasses,
				i == 0);
	}
	if (ctx->json)
		fputs("\n  ]}\n", stdout);
	status = 0;
done:
	free(x);
	free(probs);
	csv_table_free(t);
	policy_free(pol);
	artifact_release(&a);
	return status;
}

int
cmd_snapshot_synth(struct cli_ctx *ctx, int argc, char **argv)
{
	struct synth_params sp;
	struct rba_detail d;
	struct rba_buf b;
	struct rba_digest dg;
	const char *out = NULL, *v;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	uint64_t u;
	int r, err;

	synth_params_default(&sp);
	for (int i = 1; i < argc; i++) {
		if ((r = opt_value(argc, argv, &i, "--rows", &v)) != 0) {
			if (r < 0 || parse_u64(v, SYNTH_MAX_ROWS, &u) || u < 1)
				return cli_usage(ctx, "--rows is 1 to %u",
						 SYNTH_MAX_ROWS);
			sp.rows = u;
		} else if ((r = opt_value(argc, argv, &i, "--features", &v)) != 0) {
			if (r < 0 || parse_u64(v, SYNTH_MAX_FEATURES, &u) || u < 1)
				return cli_usage(ctx, "--features is 1 to %u",
						 SYNTH_MAX_FEATURES);
			sp.features = (uint32_t)u;
		} else if ((r = opt_value(argc, argv, &i, "--classes", &v)) != 0) {
			if (r < 0 || parse_u64(v, SYNTH_MAX_CLASSES, &u) || u < 2)
				return cli_usage(ctx, "--classes is 2 to %u",
						 SYNTH_MAX_CLASSES);
			sp.classes = (uint32_t)u;
		} else if ((r = opt_value(argc, argv, &i, "--noise", &v)) != 0) {
			if (r < 0 || parse_double(v, &sp.noise) ||
			    !(sp.noise >= 0.0 && sp.noise <= 1.0))
				return cli_usage(ctx, "--noise is 0 to 1");
		} else if ((r = opt_value(argc, argv, &i, "--seed", &v)) != 0) {
			if (r < 0 || parse_u64(v, UINT64_MAX, &u))
				return cli_usage(ctx, "--seed is an unsigned "
						      "integer");
			sp.seed = u;
		} else if ((r = opt_value(argc, argv, &i, "-o", &v)) != 0 ||
			   (r = opt_value(argc, argv, &i, "--output", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "-o needs a file");
			out = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else {
			return cli_usage(ctx, "unexpected argument '%s'", argv[i]);
		}
	}
	if (out == NULL)
		return cli_usage(ctx, "needs -o OUT");
	rba_detail_clear(&d);
	rba_buf_init(&b);
	if ((err = synth_csv(&sp, &b, &d)) != 0) {
		rba_buf_release(&b);
		return cli_fail("cannot generate", "synth", err, &d);
	}
	rba_digest_bytes(b.p, b.len, &dg);
	rba_digest_format(&dg, hex);
	if (strcmp(out, "-") == 0) {
		fwrite(b.p, 1, b.len, stdout);
		rba_buf_release(&b);
		return 0;
	}
	err = rba_file_write_atomic(out, b.p, b.len, 0644);
	rba_buf_release(&b);
	if (err != 0)
		return cli_fail("cannot write", out, err, NULL);
	if (ctx->json) {
		fputs("{\"file\": ", stdout);
		cli_json_str(stdout, out);
		printf(", \"snapshot\": \"%s\", \"rows\": %llu}\n", hex,
		       (unsigned long long)sp.rows);
	} else
		printf("%s\n", hex);
	return 0;
}
