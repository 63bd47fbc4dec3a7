/*
 * cmd_diff.c - diff: where two artifacts of one kind differ
 * (model/artdiff.h).
 *
 *   diff A B [--json]
 *   diff --store VERSION [--audit ID] [--json]
 *
 * A and B are our artifacts or XGBoost JSON models (model/xgboost.h).
 * Exit 0: bit-identical, or two XGBoost files of the same model (one
 * line); 1: they differ (per tensor, or the
 * first tree that differs); 2: could not answer (usage, an artifact that
 * cannot be read or is damaged, artifacts of two kinds, an audit whose
 * rebuilt artifact is not kept, an exec version's file of a format this
 * tool does not read).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "cli/commands.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "common/json.h"
#include "model/artdiff.h"
#include "model/artifact.h"
#include "model/xgboost.h"
#include "store/store.h"

struct side {
	const char *label; /* the file, or what the store's blob is */
	uint8_t *bytes;
	size_t n;
	struct rba_digest dg;
	struct artifact art;
	int decoded;
};

static void
side_release(struct side *s)
{
	if (s->decoded)
		artifact_release(&s->art);
	free(s->bytes);
}

static int
side_decode(struct side *s)
{
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	/* ours, or an XGBoost JSON model (an exec version's artifact) */
	if ((err = xgboost_artifact_decode(s->bytes, s->n, s->label, &s->art,
					   &d)) != 0)
		return cli_fail("cannot load artifact", s->label, err, &d);
	s->decoded = 1;
	return 0;
}

static int
side_file(struct side *s, const char *path)
{
	struct rba_detail d;
	int err;

	s->label = path;
	rba_detail_clear(&d);
	if ((err = rba_file_read(path, ARTIFACT_MAX_BYTES, &s->bytes, &s->n, &d)) != 0)
		return cli_fail("cannot load artifact", path, err, NULL);
	rba_digest_bytes(s->bytes, s->n, &s->dg);
	return side_decode(s);
}

static int
side_blob(struct cli_ctx *ctx, struct side *s, const struct rba_digest *dg,
	  const char *label, uint64_t id)
{
	struct store_txn *txn = NULL;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	s->label = label;
	s->dg = *dg;
	rba_digest_format(dg, hex);
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot read", ctx->store_path, &txn)) != 0)
		return err;
	rba_detail_clear(&d);
	err = store_blob_load(txn, dg, ARTIFACT_MAX_BYTES, &s->bytes, &s->n, &d);
	store_txn_abort(txn);
	if (err == RBA_E_NOTFOUND) {
		fprintf(stderr, "rebuild-audit: cannot diff audit %llu: the %s %s is not "
				"kept in the store (audits before this tool kept no "
				"rebuilt artifact: audit again)\n",
			(unsigned long long)id, label, hex);
		return 2;
	}
	if (err)
		return cli_fail("cannot load artifact", hex, err, &d);
	if (s->n >= 8 && memcmp(s->bytes, ARTIFACT_MAGIC, 8) == 0)
		return side_decode(s);
	/* An exec version's file: XGBoost JSON, or a format only its
	 * score command reads (rebuild-audit-pins(5), format). */
	rba_detail_clear(&d);
	if ((err = xgboost_decode(s->bytes, s->n, label, &s->art, &d)) != 0) {
		if (err == RBA_E_NOMEM)
			return cli_fail("cannot load artifact", hex, err, &d);
		cli_diag("cannot diff audit %llu: the %s %s is of a format this "
			 "tool does not read, neither its own nor XGBoost JSON (%s)",
			 (unsigned long long)id, label, hex, d.reason);
		return 2;
	}
	s->decoded = 1;
	return 0;
}

static const char *
kind_name(const struct artdiff *x)
{
	if (x->xgboost)
		return "xgboost";
	return x->kind == REBUILD_KIND_GBDT ? "forest" : "network";
}

/* The tensors of x, as the member "tensors" of w's open object. */
static void
json_tensors(struct rba_json_w *w, const struct artdiff *x)
{
	rba_json_w_open(w, "tensors", '[');
	for (size_t i = 0; i < x->ntensors; i++) {
		const struct artdiff_tensor *t = &x->t[i];
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "name", t->name);
		rba_json_w_u64(w, "rows", t->rows);
		rba_json_w_u64(w, "cols", t->cols);
		rba_json_w_u64(w, "count", t->count);
		rba_json_w_u64(w, "differ", t->differ);
		if (t->differ)
			rba_json_w_u64(w, "first", t->first);
		else
			rba_json_w_str(w, "first", NULL);
		rba_json_w_u64(w, "max_ulps", t->max_ulps);
		rba_json_w_num(w, "max_abs", t->max_abs);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
}

/* diff --json: 0, or 2 after a diagnostic. */
static int
print_json(const struct side *a, const struct side *b, const struct artdiff *x,
	   int identical)
{
	struct rba_buf out;
	struct rba_json_w w;

	cli_json_begin(&w, &out);
	rba_json_w_bool(&w, "identical", identical);
	rba_json_w_bool(&w, "same_model", x->same);
	rba_json_w_str(&w, "kind", kind_name(x));
	rba_json_w_open(&w, "a", '{');
	rba_json_w_str(&w, "name", a->label);
	rba_json_w_digest(&w, "digest", &a->dg, 1);
	rba_json_w_close(&w, '}');
	rba_json_w_open(&w, "b", '{');
	rba_json_w_str(&w, "name", b->label);
	rba_json_w_digest(&w, "digest", &b->dg, 1);
	rba_json_w_close(&w, '}');
	rba_json_w_str(&w, "inputs", x->spec[0] ? x->spec : NULL);
	json_tensors(&w, x);
	if (x->kind == REBUILD_KIND_GBDT) {
		rba_json_w_open(&w, "trees", '{');
		rba_json_w_u64(&w, "a", x->ntrees_a);
		rba_json_w_u64(&w, "b", x->ntrees_b);
		rba_json_w_u64(&w, "identical", x->trees_same);
		if (x->first_tree >= 0) {
			rba_json_w_open(&w, "first_differing", '{');
			rba_json_w_u64(&w, "tree", (uint64_t)x->first_tree + 1);
			rba_json_w_u64(&w, "node", (uint32_t)(x->first_node + 1));
			rba_json_w_str(&w, "what", x->tree_what);
			rba_json_w_close(&w, '}');
		} else {
			rba_json_w_str(&w, "first_differing", NULL);
		}
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, '}');
	return cli_json_print(&out);
}

static void
print_text(const struct side *a, const struct side *b, const struct artdiff *x)
{
	/* labels are file names, the inputs line quotes column names and
	 * class labels of the artifacts: shown by the escaping rule */
	printf("artifacts differ: %s '", kind_name(x));
	cli_put_data(stdout, a->label);
	fputs("' against '", stdout);
	cli_put_data(stdout, b->label);
	fputs("'\n", stdout);
	if (x->spec[0]) {
		fputs("inputs      ", stdout);
		cli_put_data(stdout, x->spec);
		putchar('\n');
	}
	for (size_t i = 0; i < x->ntensors; i++) {
		const struct artdiff_tensor *t = &x->t[i];
		char shape[32];
		if (t->rows > 1)
			snprintf(shape, sizeof(shape), "%ux%u", t->rows, t->cols);
		else
			snprintf(shape, sizeof(shape), "%u", t->cols);
		if (t->differ == 0) {
			printf("%-22s %-9s same (%zu values)\n", t->name, shape, t->count);
			continue;
		}
		printf("%-22s %-9s %zu of %zu differ, largest %llu ulps (absolute %.3g, "
		       "at index %zu), first at index %zu\n", t->name, shape, t->differ,
		       t->count, (unsigned long long)t->max_ulps, t->max_abs, t->max_at,
		       t->first);
	}
	if (x->kind == REBUILD_KIND_GBDT) {
		printf("trees       %u and %u, %u identical", x->ntrees_a, x->ntrees_b,
		       x->trees_same);
		if (x->first_tree >= 0) {
			printf("; first that differs: tree %lld, node %u: ",
			       (long long)x->first_tree + 1, x->first_node + 1);
			cli_put_data(stdout, x->tree_what);
		}
		putchar('\n');
	}
}

/* The operands of diff: two files, or --store VERSION with the record
 * (--audit, *id; 0 the newest).  0, or the exit status of a usage
 * error. */
static int
diff_args(struct cli_ctx *ctx, int argc, char **argv, const char **files,
	  int *store, uint64_t *id)
{
	const char *audit = NULL;
	int opts = 1, nfiles = 0, r;

	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (opts && strcmp(s, "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && (r = cli_opt_value(argc, argv, &i, "--audit", &audit)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", s);
			continue;
		}
		if (opts && strcmp(s, "--store") == 0) {
			*store = 1;
			continue;
		}
		if (opts && strcmp(s, "--json") == 0) {
			ctx->json = 1;
			continue;
		}
		if (opts && s[0] == '-' && s[1] != '\0')
			return cli_usage(ctx, "unknown option '%s'", s);
		if (nfiles == 2)
			return cli_usage(ctx, "unexpected argument '%s'", s);
		files[nfiles++] = s;
	}
	if (*store) {
		if (nfiles != 1)
			return cli_usage(ctx, "--store takes one VERSION");
		if (audit != NULL) {
			char *end;
			errno = 0;
			*id = strtoull(audit, &end, 10);
			if (errno || *end || *id == 0 || audit[0] == '-')
				return cli_usage(ctx, "--audit needs a record id");
		}
	} else if (nfiles != 2 || audit != NULL) {
		return cli_usage(ctx, "diff needs two artifact files A B (or --store "
				 "VERSION)");
	}
	return 0;
}

/*
 * What the comparison x of a and b says: identical bytes, the same
 * XGBoost model in other bytes (both exit 0), or where they differ
 * (exit 1).  store: the sides are an audit's (id) of version.
 */
static int
diff_print(struct cli_ctx *ctx, const struct side *a, const struct side *b,
	   const struct artdiff *x, int store, const char *version, uint64_t id)
{
	if (a->n == b->n && memcmp(a->bytes, b->bytes, a->n) == 0) {
		char h[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&a->dg, h);
		if (ctx->json)
			return print_json(a, b, x, 1);
		else if (!ctx->quiet)
			printf("identical: %s (%zu bytes)%s\n", h, a->n,
			       store ? ", rebuilt bit for bit" : "");
		return 0;
	}
	if (x->same && x->xgboost) {
		/* Two XGBoost files whose bytes differ (white space, member
		 * order, what XGBoost keeps beside the model) but whose every
		 * value that scores is the same: the same model. */
		char ha[RBA_DIGEST_TEXT_LEN + 1], hb[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&a->dg, ha);
		rba_digest_format(&b->dg, hb);
		if (ctx->json)
			return print_json(a, b, x, 0);
		else if (!ctx->quiet)
			printf("same model: every value that scores is equal (objective, "
			       "features, base margin, %u trees node for node); the "
			       "files' bytes differ: %s and %s\n", x->ntrees_a, ha, hb);
		return 0;
	}
	if (ctx->json)
		return print_json(a, b, x, 0) != 0 ? 2 : 1;
	else {
		if (store)
			printf("audit %llu of version %s: the %s against the rebuilt "
			       "artifact\n", (unsigned long long)id, version, a->label);
		print_text(a, b, x);
		if (x->same)
			printf("no compared value differs: the bytes differ elsewhere "
			       "(the artifacts' encodings)\n");
	}
	return 1;
}

int
cmd_diff(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *files[2] = { NULL, NULL }, *version = NULL;
	struct side a, b;
	struct artdiff x;
	struct rba_detail d;
	int store = 0, err, status = 2;
	uint64_t id = 0;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if ((status = diff_args(ctx, argc, argv, files, &store, &id)) != 0)
		return status;
	if (store)
		version = files[0];
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (store) {
		struct rba_digest da, db;
		int dec = 0;
		if ((err = cli_store_open(ctx, 1)) != 0)
			return err;
		rba_detail_clear(&d);
		if ((err = audit_diff_pair(ctx->store, version, id, &da, &db, &dec, &id,
				     &d)) != 0)
			return cli_fail("cannot diff", version, err, &d);
		if ((status = side_blob(ctx, &a, &da, dec ? "artifact that made the "
							    "stored decisions"
							  : "pinned artifact", id)) != 0 ||
		    (status = side_blob(ctx, &b, &db, "rebuilt artifact", id)) != 0)
			goto out;
	} else if ((status = side_file(&a, files[0])) != 0 ||
		   (status = side_file(&b, files[1])) != 0) {
		goto out;
	}
	status = 2;
	rba_detail_clear(&d);
	if ((err = artdiff_compare(&a.art, &b.art, &x, &d)) != 0) {
		cli_diag("cannot diff '%s' and '%s': %s", a.label, b.label, d.reason);
		goto out;
	}
	status = diff_print(ctx, &a, &b, &x, store, version, id);
out:
	side_release(&a);
	side_release(&b);
	return status;
}
