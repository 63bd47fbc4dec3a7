/*
 * cmd_history.c - history: past audits, newest first; --verify checks the
 * hash chain; import appends the signed records of cluster workers
 * (fleet/fleet.h).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/record.h"
#include "fleet/fleet.h"
#include "common/sign.h"
#include "common/json.h"
#include "cli/commands.h"
#include "store/store.h"

struct hist {
	struct cli_ctx *ctx;
	struct rba_buf *out; /* the --json listing */
	size_t n;
	int other_maker; /* an audit whose sample another artifact decided */
};

/* One entry of history --json: the record as it is stored. */
static void
hist_json(struct hist *h, const struct store_history_entry *e, int parsed,
	  const struct audit_record *rec, const char *when)
{
	struct rba_json_w w;

	cli_json_w_sep(&w, h->out, h->n ? ",\n " : "");
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_u64(&w, "id", e->id);
	rba_json_w_str(&w, "time", when);
	rba_json_w_str(&w, "version", e->version);
	rba_json_w_digest(&w, "prev", &e->prev, 1);
	rba_json_w_digest(&w, "digest", &e->digest, 1);
	/* An audit's record: whether it was ad hoc (null for others). */
	if (rec != NULL)
		rba_json_w_bool(&w, "ad_hoc", audit_record_ad_hoc(rec));
	else
		rba_json_w_str(&w, "ad_hoc", NULL);
	if (parsed) {
		rba_json_w_raw(&w, "record", (const char *)e->record, e->len);
	} else {
		/* Not this tool's JSON: shown as text, never as JSON. */
		char *t = strndup((const char *)e->record, e->len);
		rba_json_w_str(&w, "record", t ? t : "");
		free(t);
	}
	rba_json_w_close(&w, '}');
}

/* One row of the text listing: a replacement (register --replace). */
static void
hist_replaced(const struct store_history_entry *e, const char *when,
	      const struct rba_json_value *root)
{
	const char *o = rba_json_get_str(root, "artifact_old");
	const char *nw = rba_json_get_str(root, "artifact_new");

	printf("%-6llu %-20s  %-24s %-25s %.12s -> %.12s\n",
	       (unsigned long long)e->id, when, e->version, "replaced",
	       o && strlen(o) > 7 ? o + 7 : "?", nw && strlen(nw) > 7 ? nw + 7 : "?");
}

/* One row of the text listing: an audit (rec), or a record of another
 * kind (rec NULL). */
static void
hist_row(struct hist *h, const struct store_history_entry *e,
	 const char *when, const struct audit_record *rec)
{
	const char *v = rec != NULL ? rec->verdict : NULL;
	const char *ra = rec != NULL ? rec->digests.artifact_rebuilt : NULL;
	const char *da = rec != NULL ? rec->digests.artifact_decisions : NULL;
	int measured = v != NULL && strcmp(v, "not-measured") != 0;
	char n1[32], art[32] = "-", vl[48], c1[32] = "-", c2[32] = "-";

	if (ra != NULL && strlen(ra) > 7)
		snprintf(art, sizeof(art), "%.12s%s", ra + 7,
			 da != NULL && strcmp(da, ra) != 0 ? "*" : "");
	if (measured && rec->sample.cases != AUDIT_RECORD_INT_NONE)
		snprintf(c1, sizeof(c1), "%llu",
			 (unsigned long long)rec->sample.cases);
	if (measured && rec->sample.flips != AUDIT_RECORD_INT_NONE)
		snprintf(c2, sizeof(c2), "%llu",
			 (unsigned long long)rec->sample.flips);
	/* An ad hoc audit is not the version's: said in the row. */
	snprintf(vl, sizeof(vl), "%.24s%s", v ? v : "?",
		 rec != NULL && audit_record_ad_hoc(rec) ? ", ad hoc" : "");
	printf("%-6llu %-20s  %-24s %-25s %-14s %8s %8s  %s\n",
	       (unsigned long long)e->id, when, e->version, vl, art, c1, c2,
	       measured && isfinite(rec->sample.max_score_delta)
		       ? cli_fmt_g6(rec->sample.max_score_delta, n1) : "-");
	if (da != NULL && ra != NULL && strcmp(da, ra) != 0)
		h->other_maker = 1;
}

/*
 * One history record.  An audit's record is read through the audit
 * record's decoder (audit/record.h); a record of another kind (a
 * replacement, a policy set), or one this tool cannot read as an
 * audit's, is listed without an audit's columns.  0, or RBA_E_NOMEM
 * (the listing stops).
 */
static int
hist_one(void *vctx, const struct store_history_entry *e)
{
	struct hist *h = vctx;
	struct rba_json_value root;
	struct audit_record rec;
	struct rba_detail d;
	char when[32], what[48];
	int parsed = rba_json_parse((const char *)e->record, e->len, &root, NULL) == 0;
	int audit = 0, err = 0;

	memset(&rec, 0, sizeof(rec));
	if (parsed) {
		snprintf(what, sizeof(what), "history record %llu",
			 (unsigned long long)e->id);
		err = audit_record_decode(&root, what, &rec, &d);
		audit = err == 0;
	}
	if (err == RBA_E_NOMEM) {
		audit_record_release(&rec);
		rba_json_release(&root);
		return err;
	}
	rba_time_utc(e->time, when);
	if (h->ctx->json) {
		hist_json(h, e, parsed, audit ? &rec : NULL, when);
	} else {
		const char *event = parsed ? rba_json_get_str(&root, "event") : NULL;
		if (h->n == 0)
			printf("%-6s %-20s  %-24s %-25s %-14s %8s %8s  %s\n", "ID", "TIME",
			       "VERSION", "VERDICT", "ARTIFACT", "CASES", "FLIPS",
			       "MAX DELTA");
		if (!audit && event != NULL && strcmp(event, "replace") == 0)
			hist_replaced(e, when, &root);
		else
			hist_row(h, e, when, audit ? &rec : NULL);
	}
	audit_record_release(&rec);
	if (parsed)
		rba_json_release(&root);
	h->n++;
	return 0;
}

/* history head: the chain head, for a log or a ticket outside the store. */
static int
history_head(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_txn *txn;
	struct rba_detail d;
	struct rba_digest dg;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	uint64_t id;
	int err;

	(void)argv;
	if (argc != 2)
		return cli_usage(ctx, "history head takes no arguments");
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot read history", ctx->store_path,
				 &txn)) != 0)
		return err;
	rba_detail_clear(&d);
	err = store_history_head(txn, &id, &dg, &d);
	store_txn_abort(txn);
	if (err)
		return cli_fail("cannot read history", ctx->store_path, err, &d);
	rba_digest_format(&dg, hex);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "store_id", store_id_hex(ctx->store));
		rba_json_w_u64(&w, "id", id);
		rba_json_w_str(&w, "digest", hex);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	} else if (ctx->quiet)
		printf("%s\n", hex);
	else
		printf("history head: record %llu, %s (store %s)\n",
		       (unsigned long long)id, hex, store_id_hex(ctx->store));
	return 0;
}

struct anchor {
	struct rba_digest want;
	uint64_t found; /* the record's id, 0: not found */
};

static int
anchor_one(void *vctx, const struct store_history_entry *e)
{
	struct anchor *a = vctx;

	if (rba_digest_equal(&e->digest, &a->want)) {
		a->found = e->id;
		return 1;
	}
	return 0;
}

#define IMPORT_KEYS_MAX 64 /* -p keys of one import */

/* The accepted records of an import, in w's open object. */
static void
import_json_imported(struct rba_json_w *w, const struct fleet_import *im)
{
	rba_json_w_open(w, "imported", '[');
	for (size_t i = 0; i < im->nitems; i++) {
		const struct fleet_item *it = &im->items[i];
		if (!it->accepted)
			continue;
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "version", it->version);
		rba_json_w_str(w, "verdict", it->verdict);
		rba_json_w_u64(w, "exit_status", (uint64_t)it->exit_status);
		rba_json_w_u64(w, "history_id", it->history_id);
		rba_json_w_digest(w, "record", &it->digest, 1);
		rba_json_w_str(w, "file", it->path);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
	rba_json_w_open(w, "refused", '[');
	for (size_t i = 0; i < im->nitems; i++) {
		const struct fleet_item *it = &im->items[i];
		if (it->accepted)
			continue;
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "file", it->path);
		rba_json_w_str(w, "version", it->version[0] ? it->version : NULL);
		rba_json_w_str(w, "reason", it->reason);
		rba_json_w_str(w, "set_aside", it->aside);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
}

/* history import --json: 0, or 2 after a diagnostic. */
static int
import_json(const struct fleet_import *im)
{
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	import_json_imported(&w, im);
	rba_json_w_open(&w, "missing", '[');
	for (size_t i = 0; i < im->nmissing; i++) {
		char shard[24];
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "version", im->missing[i].version);
		snprintf(shard, sizeof(shard), "%u/%u", im->missing[i].k,
			 im->missing[i].n);
		rba_json_w_str(&w, "shard", im->missing[i].n ? shard : NULL);
		rba_json_w_bool(&w, "record_refused", im->missing[i].refused);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, ']');
	rba_json_w_str(&w, "worst_verdict", im->worst_verdict < 0 ? NULL
			       : audit_verdict_name(im->worst_verdict));
	rba_json_w_u64(&w, "imported_before", im->earlier);
	rba_json_w_open(&w, "directories", '[');
	for (size_t i = 0; i < im->ndirs; i++) {
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "dir", im->dirs[i].path);
		rba_json_w_u64(&w, "records", im->dirs[i].files);
		rba_json_w_u64(&w, "imported_before", im->dirs[i].earlier);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, ']');
	rba_json_w_u64(&w, "head_id", im->head_id);
	rba_json_w_digest(&w, "head", &im->head, 1);
	rba_json_w_u64(&w, "exit_status", (uint64_t)im->exit_status);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/* "nothing to import 'DIR': why" for directory i, without a newline. */
static void
import_dir_nothing(const struct fleet_dir *dir)
{
	fputs("nothing to import '", stdout);
	cli_put_data(stdout, dir->path);
	if (dir->earlier > 0)
		printf("': its %zu record%s imported before", dir->earlier,
		       dir->earlier == 1 ? " was" : "s were");
	else
		fputs("': it holds no record", stdout);
}

/* What an import did: refusals and versions without a record on stderr,
 * even with -q; then the report.  0, or 2 after a diagnostic. */
static int
import_print(struct cli_ctx *ctx, const struct fleet_import *im)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	/* file names and reasons are shown by the escaping rule (cli_diag) */
	for (size_t i = 0; i < im->nitems; i++)
		if (!im->items[i].accepted)
			cli_diag("refused record '%s': %s", im->items[i].path,
				 im->items[i].reason);
	for (size_t i = 0; i < im->nmissing; i++) {
		const struct fleet_missing *m = &im->missing[i];
		const char *why = m->refused ? "its record was refused"
					     : "no worker record for this snapshot";
		if (m->n)
			cli_diag("not audited '%s': %s; rerun shard %u/%u", m->version,
				 why, m->k, m->n);
		else
			cli_diag("not audited '%s': %s", m->version, why);
	}
	for (size_t i = 0; i < im->nitems; i++) {
		const struct fleet_item *it = &im->items[i];
		if (it->accepted && it->move_err)
			cli_warn("imported '%s' but could not move it into %s/: %s",
				 it->path, FLEET_IMPORTED_DIR, strerror(it->move_err));
		if (!it->accepted && it->aside_err && it->aside != NULL)
			cli_warn("set aside '%s' as '%s', but not its signature or "
				 "note: %s", it->path, it->aside,
				 rba_strerror(it->aside_err));
		else if (!it->accepted && it->aside_err)
			cli_warn("refused '%s' but could not set it aside in %s/: %s",
				 it->path, FLEET_REFUSED_DIR,
				 rba_strerror(it->aside_err));
	}
	if (ctx->json) {
		if (!(ctx->quiet && im->exit_status == 0))
			return import_json(im);
	} else if (!(ctx->quiet && im->exit_status == 0)) {
		/* each directory that gave nothing, named */
		for (size_t i = 0; i < im->ndirs; i++)
			if (im->dirs[i].files == 0) {
				import_dir_nothing(&im->dirs[i]);
				putchar('\n');
			}
		for (size_t i = 0; i < im->nitems; i++) {
			const struct fleet_item *it = &im->items[i];
			if (it->accepted)
				printf("imported  %-28s %-18s history record %llu\n",
				       it->version, it->verdict,
				       (unsigned long long)it->history_id);
		}
		for (size_t i = 0; i < im->nitems; i++) {
			const struct fleet_item *it = &im->items[i];
			if (!it->accepted && it->aside != NULL) {
				fputs("set aside ", stdout);
				cli_put_data(stdout, it->aside);
				putchar('\n');
			}
		}
		printf("import: %zu imported, %zu refused, %zu version%s without a "
		       "record; worst verdict: %s (exit %d)", im->imported,
		       im->refused, im->nmissing, im->nmissing == 1 ? "" : "s",
		       im->worst_verdict < 0 ? "none"
					     : audit_verdict_name(im->worst_verdict),
		       im->exit_status);
		if (im->earlier > 0)
			printf(", with the %zu record%s imported before", im->earlier,
			       im->earlier == 1 ? "" : "s");
		putchar('\n');
		rba_digest_format(&im->head, hex);
		printf("history head: record %llu, %s\n",
		       (unsigned long long)im->head_id, hex);
	}
	return 0;
}

/* What history import was asked. */
struct import_args {
	struct sign_pubkey keys[IMPORT_KEYS_MAX];
	size_t nkeys;
	const char **dirs; /* argc entries */
	size_t ndirs;
	enum fleet_split split;
	int aside; /* --set-aside */
};

/* argv into *a (its keys read): 0, or the exit status of an error. */
static int
import_args(struct cli_ctx *ctx, int argc, char **argv, struct import_args *a)
{
	struct rba_detail d;
	int err;

	for (int i = 2; i < argc; i++) {
		const char *val;
		int r = cli_opt_value(argc, argv, &i, "--split", &val);
		if (r < 0)
			return cli_usage(ctx, "option '--split' needs a value");
		if (r > 0) {
			if (strcmp(val, "balanced") == 0)
				a->split = FLEET_SPLIT_BALANCED;
			else if (strcmp(val, "hash") == 0)
				a->split = FLEET_SPLIT_HASH;
			else
				return cli_usage(ctx, "--split takes balanced or hash, "
						 "not '%s'", val);
			continue;
		}
		r = cli_opt_value(argc, argv, &i, "-p", &val);
		if (r < 0)
			return cli_usage(ctx, "option '-p' needs a value");
		if (r > 0) {
			if (a->nkeys == IMPORT_KEYS_MAX)
				return cli_usage(ctx, "at most %d keys", IMPORT_KEYS_MAX);
			rba_detail_clear(&d);
			if ((err = sign_pubkey_load(val, &a->keys[a->nkeys], &d)) != 0)
				return cli_fail("cannot read public key", val, err, &d);
			a->nkeys++;
			continue;
		}
		if (strcmp(argv[i], "--set-aside") == 0) {
			a->aside = 1;
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1] != 0)
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		a->dirs[a->ndirs++] = argv[i];
	}
	if (a->ndirs == 0 || a->nkeys == 0)
		return cli_usage(ctx, a->ndirs == 0 ? "history import needs a records DIR"
						    : "history import needs the workers' "
						      "public key: -p PUB");
	return 0;
}

/* An import that found nothing new: the run's outcome again, nothing
 * else.  0, or 2 after a diagnostic. */
static int
import_print_again(struct cli_ctx *ctx, const struct fleet_import *im)
{
	if (!(ctx->quiet && im->exit_status == 0) && !ctx->json) {
		/* every directory named, each on its line; the outcome on the
		 * last */
		for (size_t i = 0; i < im->ndirs; i++) {
			import_dir_nothing(&im->dirs[i]);
			if (i + 1 < im->ndirs)
				putchar('\n');
		}
		printf(" and every version is covered; worst verdict: %s "
		       "(exit %d)\n",
		       im->worst_verdict < 0 ? "none"
					     : audit_verdict_name(im->worst_verdict),
		       im->exit_status);
	} else if (ctx->json) {
		return import_print(ctx, im);
	}
	return 0;
}

/*
 * history import DIR... -p PUB...: the signed records of workers, checked
 * and appended in one transaction (fleet/fleet.h); exits like audit --all.
 */
static int
history_import(struct cli_ctx *ctx, int argc, char **argv)
{
	struct import_args a;
	struct fleet_import im;
	struct rba_detail d;
	int err;

	memset(&a, 0, sizeof(a));
	a.split = FLEET_SPLIT_BALANCED;
	a.dirs = calloc((size_t)argc, sizeof(*a.dirs));
	if (a.dirs == NULL)
		return cli_fail("cannot import", "history", RBA_E_NOMEM, NULL);
	if ((err = import_args(ctx, argc, argv, &a)) != 0 ||
	    (err = cli_store_open(ctx, 0)) != 0) {
		free(a.dirs);
		return err;
	}
	rba_detail_clear(&d);
	err = fleet_import_run(ctx->store, a.dirs, a.ndirs, a.keys, a.nkeys,
			       a.split, &im, &d);
	if (err) {
		free(a.dirs);
		return cli_fail("cannot import", d.file[0] ? d.file : ctx->store_path,
				err, &d);
	}
	/* After the commit: what was refused goes into DIR/refused/. */
	if (a.aside && fleet_import_set_aside(&im, (int64_t)time(NULL)) != 0) {
		cli_fail("cannot set aside the refused records of", a.dirs[0],
			 RBA_E_NOMEM, NULL);
		free(a.dirs);
		fleet_import_release(&im);
		return 2;
	}
	if (im.nitems == 0 && im.earlier > 0 && im.nmissing == 0)
		err = import_print_again(ctx, &im);
	else
		err = import_print(ctx, &im);
	free(a.dirs);
	if (err == 0)
		err = im.exit_status;
	fleet_import_release(&im);
	return err;
}

/*
 * history --verify --json: intact or not, the records, the first bad one
 * (NULL: null), whether the anchored head was found (-1: not asked), and
 * why not intact (NULL when it is).  Returns status, or 2 after a
 * diagnostic.
 */
static int
verify_json(int status, uint64_t count, const uint64_t *bad,
	    int head_found, const char *reason)
{
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_bool(&w, "intact", reason == NULL);
	rba_json_w_u64(&w, "records", count);
	if (bad != NULL)
		rba_json_w_u64(&w, "first_bad", *bad);
	else
		rba_json_w_str(&w, "first_bad", NULL);
	if (head_found >= 0)
		rba_json_w_bool(&w, "head_found", head_found);
	if (reason != NULL)
		rba_json_w_str(&w, "reason", reason);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b) != 0 ? 2 : status;
}

/*
 * history --verify [--head DIGEST]: the hash chain, and that it holds
 * the anchored head an.want (an->found preset for the zero digest).
 * Aborts txn; returns the exit status.
 */
static int
history_verify(struct cli_ctx *ctx, struct store_txn *txn, const char *head,
	       struct anchor *an)
{
	struct rba_detail d;
	uint64_t bad = 0, count = 0;
	int err;

	rba_detail_clear(&d);
	err = store_history_verify(txn, &bad, &count, &d);
	if (err == 0 && head != NULL) {
		err = store_history_list(txn, NULL, 1, anchor_one, an, &d);
		if (err == 1)
			err = 0;
	}
	store_txn_abort(txn);
	if (err == 0 && head != NULL && an->found == 0) {
		/* Intact, but not the history that was anchored. */
		if (ctx->json) {
			return verify_json(1, count, NULL, 0, "the anchored head is "
					   "not in the history");
		} else {
			printf("history does not hold the anchored head %s: the "
			       "store was rolled back or replaced since it was "
			       "taken\n", head);
		}
		return 1;
	}
	if (err == RBA_E_TAMPERED) {
		if (ctx->json) {
			return verify_json(1, count, &bad, -1, d.reason);
		} else {
			printf("history broken at record %llu: %s\n",
			       (unsigned long long)bad, d.reason);
		}
		return 1;
	}
	if (err)
		return cli_fail("cannot verify history", ctx->store_path, err, &d);
	if (ctx->json)
		return verify_json(0, count, NULL, head != NULL ? 1 : -1, NULL);
	else if (!ctx->quiet && head != NULL)
		printf("history intact: %llu record%s, the anchored head is "
		       "record %llu\n", (unsigned long long)count,
		       count == 1 ? "" : "s",
		       an->found == UINT64_MAX ? 0ULL : (unsigned long long)an->found);
	else if (!ctx->quiet)
		printf("history intact: %llu record%s\n", (unsigned long long)count,
		       count == 1 ? "" : "s");
	return 0;
}

/*
 * history [VERSION]: past audits, newest first, of version (NULL: all).
 * Aborts txn; returns the exit status.
 */
static int
history_list(struct cli_ctx *ctx, struct store_txn *txn, const char *version)
{
	struct rba_detail d;
	struct hist h = { ctx, NULL, 0, 0 };
	struct rba_buf out;
	struct rba_json_w w; /* the listing's brackets; hist_json its items */
	int err, perr = 0;

	rba_detail_clear(&d);
	if (version != NULL) {
		/* A name no version has is a mistake, not an empty history. */
		struct store_version v;
		err = store_version_get(txn, version, &v, &d);
		if (err) {
			store_txn_abort(txn);
			if (err == RBA_E_NOTFOUND)
				snprintf(d.reason, sizeof(d.reason),
					 "no version '%s' in the store", version);
			return cli_fail("cannot read history", version, err, &d);
		}
		store_version_release(&v);
	}
	rba_buf_init(&out);
	h.out = &out;
	rba_json_w_init(&w, &out);
	if (ctx->json)
		rba_json_w_open(&w, NULL, '[');
	err = store_history_list(txn, version, 1, hist_one, &h, &d);
	store_txn_abort(txn);
	if (ctx->json) {
		rba_json_w_close(&w, ']');
		perr = cli_json_print(&out);
	}
	rba_buf_release(&out);
	if (err)
		return cli_fail("cannot read history", version ? version : ctx->store_path,
				err, &d);
	if (perr)
		return perr;
	if (h.n == 0 && !ctx->json && !ctx->quiet)
		printf("no audits recorded%s%s\n", version ? " for " : "",
		       version ? version : "");
	if (h.other_maker && !ctx->json)
		printf("* the sample's decisions were made by another artifact "
		       "(see the record)\n");
	return 0;
}

int
cmd_history(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verify", no_argument, NULL, 'v' },
		{ "head", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct store_txn *txn;
	struct anchor an;
	const char *version = NULL, *head = NULL;
	int c, verify = 0, err;

	if (argc >= 2 && strcmp(argv[1], "head") == 0)
		return history_head(ctx, argc, argv);
	if (argc >= 2 && strcmp(argv[1], "import") == 0)
		return history_import(ctx, argc, argv);
	if (argc >= 2 && (strcmp(argv[1], "vkey") == 0 ||
			  strcmp(argv[1], "checkpoint") == 0 ||
			  strcmp(argv[1], "cosign") == 0 ||
			  strcmp(argv[1], "prove") == 0 ||
			  strcmp(argv[1], "consistency") == 0 ||
			  strcmp(argv[1], "watch") == 0))
		return cmd_history_log(ctx, argc, argv);
	memset(&an, 0, sizeof(an));
	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'v': verify = 1; break;
		case 'H': head = optarg; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (head != NULL && !verify)
		return cli_usage(ctx, "--head goes with --verify");
	if (head != NULL && rba_digest_parse(head, &an.want) != 0)
		return cli_usage(ctx, "--head needs a digest 'sha256:<64 hex digits>' "
				      "as 'history head' prints it, not '%s'", head);
	if (head != NULL) {
		/* The head of an empty history is the zero digest: every
		 * history holds it. */
		static const struct rba_digest zero;
		if (rba_digest_equal(&an.want, &zero))
			an.found = UINT64_MAX;
	}
	if (argc - optind > 1 || (verify && argc - optind == 1))
		return cli_usage(ctx, verify ? "--verify checks the whole history: no VERSION"
					     : "history takes at most one VERSION");
	if (argc - optind == 1)
		version = argv[optind];
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot read history", ctx->store_path,
				 &txn)) != 0)
		return err;
	return verify ? history_verify(ctx, txn, head, &an)
		      : history_list(ctx, txn, version);
}
