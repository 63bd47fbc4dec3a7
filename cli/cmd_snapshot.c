/*
 * cmd_snapshot.c - snapshot add/list/show/export/synth: training data
 * kept in the store by digest, and the synthetic task.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "data/csv.h"
#include "data/snapshot.h"
#include "data/synth.h"
#include "store/store.h"

static int
snap_add(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *name = NULL, *path;
	struct rba_detail d;
	struct rba_digest dg;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int c, err, existed = 0;

	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
		if (c == 'n')
			name = optarg;
		else
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
	}
	if (argc - optind != 1)
		return cli_usage(ctx, "snapshot add needs one FILE");
	path = argv[optind];
	if ((err = cli_store_open(ctx, 0)) != 0)
		return err;
	err = snapshot_add_store(ctx->store, path, name, &dg, &existed, &d);
	if (err) {
		const char *what = d.line ? "invalid snapshot" : "cannot add snapshot";
		return cli_fail(what, path, err, &d);
	}
	rba_digest_format(&dg, hex);
	err = 0;
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "digest", hex);
		rba_json_w_bool(&w, "existed", existed);
		rba_json_w_close(&w, '}');
		err = cli_json_print(&b);
	} else {
		printf("%s\n", hex);
	}
	if (existed && ctx->verbose)
		fprintf(stderr, "rebuild-audit: snapshot %s was already stored\n", hex);
	return err;
}

/* A snapshot as one JSON object, with its header when columns. */
static void
print_info_json(struct rba_json_w *w, const struct snapshot_info *s,
		int columns)
{
	char when[32];

	rba_time_utc(s->blob.added, when);
	rba_json_w_open(w, NULL, '{');
	rba_json_w_digest(w, "digest", &s->blob.digest, 1);
	rba_json_w_str(w, "name", s->blob.name);
	rba_json_w_u64(w, "rows", s->rows);
	rba_json_w_u64(w, "columns", s->ncols);
	rba_json_w_u64(w, "size", s->blob.size);
	rba_json_w_u64(w, "stored_size", s->blob.stored_size);
	rba_json_w_str(w, "added", when);
	if (columns) {
		rba_json_w_open(w, "header", '[');
		for (size_t i = 0; i < s->ncols; i++) {
			rba_json_w_open(w, NULL, '{');
			rba_json_w_str(w, "name", s->names[i]);
			rba_json_w_str(w, "type", s->types[i] == CSV_NUMERIC
							  ? "numeric" : "text");
			rba_json_w_close(w, '}');
		}
		rba_json_w_close(w, ']');
	}
	rba_json_w_close(w, '}');
}

struct list_state {
	struct cli_ctx *ctx;
	struct rba_buf *out; /* the --json listing */
	int n;
};

static int
list_one(void *vctx, const struct snapshot_info *s)
{
	struct list_state *ls = vctx;
	char hex[RBA_DIGEST_TEXT_LEN + 1], when[32], size[32], stored[32];

	if (ls->ctx->json) {
		struct rba_json_w w;
		cli_json_w_sep(&w, ls->out, ls->n ? ",\n " : "");
		print_info_json(&w, s, 0);
	} else {
		rba_digest_format(&s->blob.digest, hex);
		rba_time_utc(s->blob.added, when);
		cli_fmt_size_short(s->blob.size, size);
		cli_fmt_size_short(s->blob.stored_size, stored);
		if (!ls->ctx->verbose)
			hex[7 + 16] = 0;
		/* the name a user gave, shown by the escaping rule */
		printf("%s  ", hex);
		cli_put_data_pad(stdout, s->blob.name[0] ? s->blob.name : "-", 24);
		printf(" %9llu %5zu %8s %8s  %s\n", (unsigned long long)s->rows,
		       s->ncols, size, stored, when);
	}
	ls->n++;
	return 0;
}

static int
snap_list(struct cli_ctx *ctx, int argc, char **argv)
{
	struct list_state ls = { ctx, NULL, 0 };
	struct store_txn *txn;
	struct rba_detail d;
	struct rba_buf out;
	struct rba_json_w w; /* the listing's brackets; list_one its items */
	int err, perr = 0;

	if (argc != 1)
		return cli_usage(ctx, "snapshot list takes no arguments");
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot list snapshots",
				 ctx->store_path, &txn)) != 0)
		return err;
	rba_detail_clear(&d);
	rba_buf_init(&out);
	ls.out = &out;
	rba_json_w_init(&w, &out);
	if (ctx->json)
		rba_json_w_open(&w, NULL, '[');
	else if (ctx->verbose)
		printf("%-71s  %-24s %9s %5s %8s %8s  %s\n", "DIGEST", "NAME",
		       "ROWS", "COLS", "SIZE", "STORED", "ADDED");
	err = snapshot_list(txn, list_one, &ls, &d);
	store_txn_abort(txn);
	if (ctx->json) {
		rba_json_w_close(&w, ']');
		perr = cli_json_print(&out);
	}
	rba_buf_release(&out);
	if (err)
		return cli_fail("cannot list snapshots", ctx->store_path, err, &d);
	return perr;
}

/* Opens a read transaction and resolves a snapshot digest or prefix. */
static int
resolve(struct cli_ctx *ctx, const char *what, const char *prefix,
	struct store_txn **txn, struct snapshot_info *info)
{
	struct rba_detail d;
	int err;

	if ((err = cli_txn_begin(ctx, 0, 0, what, prefix, txn)) != 0)
		return err;
	rba_detail_clear(&d);
	err = snapshot_resolve(*txn, prefix, info, &d);
	if (err) {
		store_txn_abort(*txn);
		*txn = NULL;
		if (err == RBA_E_NOTFOUND && !d.reason[0])
			snprintf(d.reason, sizeof(d.reason), "no such snapshot");
		if (err == RBA_E_SYNTAX && !d.reason[0])
			snprintf(d.reason, sizeof(d.reason),
				 "not a digest (sha256:<hex>, or at least 4 hex digits of one)");
		return cli_fail(what, prefix, err, &d);
	}
	return 0;
}

static int
snap_show(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_txn *txn;
	struct snapshot_info s;
	char hex[RBA_DIGEST_TEXT_LEN + 1], when[32];
	int err;

	if (argc != 2)
		return cli_usage(ctx, "snapshot show needs one DIGEST");
	if ((err = resolve(ctx, "cannot show snapshot", argv[1], &txn, &s)) != 0)
		return err;
	store_txn_abort(txn);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		rba_buf_init(&b);
		rba_json_w_init(&w, &b);
		print_info_json(&w, &s, 1);
		err = cli_json_print(&b);
	} else {
		rba_digest_format(&s.blob.digest, hex);
		rba_time_utc(s.blob.added, when);
		/* the name and the header's column names come from the
		 * user's file: shown by the escaping rule */
		printf("snapshot %s\nname     ", hex);
		cli_put_data(stdout, s.blob.name[0] ? s.blob.name : "-");
		printf("\nrows     %llu\ncolumns  %zu\n"
		       "size     %llu bytes\nstored   %llu bytes (zstd, %u chunk%s)\n"
		       "added    %s\n\nheader:\n",
		       (unsigned long long)s.rows, s.ncols,
		       (unsigned long long)s.blob.size,
		       (unsigned long long)s.blob.stored_size, s.blob.chunks,
		       s.blob.chunks == 1 ? "" : "s", when);
		for (size_t i = 0; i < s.ncols; i++) {
			printf("  %3zu  ", i + 1);
			cli_put_data_pad(stdout, s.names[i], 32);
			printf(" %s\n", s.types[i] == CSV_NUMERIC ? "numeric" : "text");
		}
	}
	snapshot_info_release(&s);
	return err;
}

static int
snap_export(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_txn *txn;
	struct snapshot_info s;
	struct rba_output out = RBA_OUTPUT_INIT;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	const char *pos[2];
	int err, force;

	if ((err = cli_args_force(ctx, argc, argv, 2, pos, &force,
				  "snapshot export needs DIGEST and OUT")) != 0)
		return err;
	if ((err = resolve(ctx, "cannot export snapshot", pos[0], &txn, &s)) != 0)
		return err;
	rba_digest_format(&s.blob.digest, hex);
	rba_detail_clear(&d);
	if ((err = cli_output_open(pos[1], force, stdout, "cannot export snapshot",
				   hex, &out)) == 0)
		err = cli_output_finish(&out,
					snapshot_export_output(txn, &s.blob.digest,
							       &out, &d),
					"cannot export snapshot", hex, &d);
	store_txn_abort(txn);
	snapshot_info_release(&s);
	return err;
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

/*
 * snapshot synth: writes the synthetic task as CSV (OUT "-" is standard
 * output) and prints its digest.
 */
static int
snap_synth(struct cli_ctx *ctx, int argc, char **argv)
{
	struct synth_params sp;
	struct rba_output o = RBA_OUTPUT_INIT;
	struct rba_detail d;
	struct rba_buf b;
	struct rba_digest dg;
	const char *out = NULL, *v;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	uint64_t u;
	int r, err, force = 0;

	synth_params_default(&sp);
	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--rows", &v)) != 0) {
			if (r < 0 || cli_parse_u64(v, SYNTH_MAX_ROWS, &u) || u < 1)
				return cli_usage(ctx, "--rows is 1 to %u",
						 SYNTH_MAX_ROWS);
			sp.rows = u;
		} else if ((r = cli_opt_value(argc, argv, &i, "--features", &v)) != 0) {
			if (r < 0 || cli_parse_u64(v, SYNTH_MAX_FEATURES, &u) || u < 1)
				return cli_usage(ctx, "--features is 1 to %u",
						 SYNTH_MAX_FEATURES);
			sp.features = (uint32_t)u;
		} else if ((r = cli_opt_value(argc, argv, &i, "--classes", &v)) != 0) {
			if (r < 0 || cli_parse_u64(v, SYNTH_MAX_CLASSES, &u) || u < 2)
				return cli_usage(ctx, "--classes is 2 to %u",
						 SYNTH_MAX_CLASSES);
			sp.classes = (uint32_t)u;
		} else if ((r = cli_opt_value(argc, argv, &i, "--noise", &v)) != 0) {
			if (r < 0 || parse_double(v, &sp.noise) ||
			    !(sp.noise >= 0.0 && sp.noise <= 1.0))
				return cli_usage(ctx, "--noise is 0 to 1");
		} else if ((r = cli_opt_value(argc, argv, &i, "--val-noise", &v)) != 0) {
			if (r < 0 || parse_double(v, &sp.val_noise) ||
			    !(sp.val_noise >= 0.0 && sp.val_noise <= 1.0))
				return cli_usage(ctx, "--val-noise is 0 to 1");
		} else if (strcmp(argv[i], "--misalign-train") == 0) {
			sp.misalign_train = 1;
		} else if ((r = cli_opt_value(argc, argv, &i, "--seed", &v)) != 0) {
			if (r < 0 || cli_parse_u64(v, UINT64_MAX, &u))
				return cli_usage(ctx, "--seed is an unsigned "
						      "integer");
			sp.seed = u;
		} else if ((r = cli_opt_value(argc, argv, &i, "-o", &v)) != 0 ||
			   (r = cli_opt_value(argc, argv, &i, "--output", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "-o needs a file");
			out = v;
		} else if (strcmp(argv[i], "--force") == 0) {
			force = 1;
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
	if ((err = cli_output_open(out, force, stdout, "cannot write", out, &o)) == 0)
		err = cli_output_finish(&o, rba_output_write(&o, b.p, b.len),
					"cannot write", out, NULL);
	rba_buf_release(&b);
	if (err != 0)
		return err;
	if (strcmp(out, "-") == 0)
		return 0;
	if (ctx->json) {
		struct rba_buf j;
		struct rba_json_w w;
		cli_json_begin(&w, &j);
		rba_json_w_str(&w, "file", out);
		rba_json_w_str(&w, "snapshot", hex);
		rba_json_w_u64(&w, "rows", sp.rows);
		rba_json_w_close(&w, '}');
		return cli_json_print(&j);
	} else
		printf("%s\n", hex);
	return 0;
}

int
cmd_snapshot(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(struct cli_ctx *, int, char **);
	} subs[] = {
		{ "add", snap_add },
		{ "export", snap_export },
		{ "list", snap_list },
		{ "show", snap_show },
		{ "synth", snap_synth },
	};

	if (argc < 2)
		return cli_usage(ctx, "missing subcommand");
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (strcmp(argv[1], subs[i].name) == 0)
			return subs[i].fn(ctx, argc - 1, argv + 1);
	return cli_usage(ctx, "unknown subcommand '%s'", argv[1]);
}
