/*
 * cmd_store.c - rebuild-audit store check: the store's fsck
 * (sample/integrity.h).  Every record of every database is read through
 * the verified readers the commands use; each piece of damage is
 * printed with its database and key.
 * store snapshot: the consistent, read-only copy cluster workers audit.
 *
 *   store check
 *   store snapshot OUT
 *   store snapshot --prune KEEP DIR [--dry-run]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/evidence.h"
#include "fleet/fleet.h"
#include "sample/integrity.h"
#include "cli/commands.h"
#include "store/store.h"

struct sink_ctx {
	struct cli_ctx *ctx;
	FILE *f;
	struct rba_buf *out; /* the --json report */
	uint64_t n;
	uint64_t unchecked; /* records of a later format: not checked */
};

static const char *
err_word(int err)
{
	switch (err) {
	case RBA_E_TAMPERED:
		return "tampered";
	case RBA_E_NOTFOUND:
		return "missing";
	case RBA_E_SCHEMA:
		return "inconsistent";
	case RBA_E_NEWER:
		return "unchecked";
	default:
		return "damaged";
	}
}

static int
on_finding(void *vctx, const char *db, const char *key, int err,
	   const char *reason)
{
	struct sink_ctx *s = vctx;

	if (err == RBA_E_NEWER)
		s->unchecked++;
	if (s->ctx->json) {
		struct rba_json_w w;
		cli_json_w_sep(&w, s->out, s->n ? ",\n    " : "\n    ");
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "database", db);
		rba_json_w_str(&w, "key", key);
		rba_json_w_str(&w, "kind", err_word(err));
		rba_json_w_str(&w, "reason", reason);
		rba_json_w_close(&w, '}');
	} else {
		fprintf(s->f, "%s %s%s%s%s: %s\n", err_word(err), db,
			key[0] ? " '" : "", key, key[0] ? "'" : "", reason);
	}
	s->n++;
	return 0;
}

static void
print_stats(FILE *f, const struct store_check_stats *st)
{
	fprintf(f, "meta        %llu records, sealed\n",
		(unsigned long long)st->meta);
	fprintf(f, "blobs       %llu blobs in %llu chunks, each read whole and "
		   "checked against its digests\n",
		(unsigned long long)st->blobs,
		(unsigned long long)st->blob_chunks);
	fprintf(f, "versions    %llu, seals, pins, policy digests and the "
		   "blobs they name\n", (unsigned long long)st->versions);
	fprintf(f, "samples     %llu samples in %llu chunks: %llu case ids "
		   "looked up in %llu index entries\n",
		(unsigned long long)st->samples,
		(unsigned long long)st->sample_chunks,
		(unsigned long long)st->cases,
		(unsigned long long)st->index_entries);
	if (st->dead_marks != 0)
		fprintf(f, "dead        %llu records of %llu sample generation%s "
			   "marked dead, part of no sample (a sample add still "
			   "writing, one that did not finish, or a replaced "
			   "sample); the next sample add clears them\n",
			(unsigned long long)st->dead_records,
			(unsigned long long)st->dead_marks,
			st->dead_marks == 1 ? "" : "s");
	fprintf(f, "history     %llu records, chain and head; each audit record "
		   "consistent by itself, by the rules export applies\n",
		(unsigned long long)st->history);
	fprintf(f, "log         %llu of the %llu records as leaves of the Merkle "
		   "tree, its %llu stored hashes each recomputed from the records%s\n",
		(unsigned long long)st->tlog_kept, (unsigned long long)st->history,
		(unsigned long long)st->tlog_hashes,
		st->tlog_kept < st->history ? " (the next append adds the rest)" : "");
	fprintf(f, "runs        %llu records, sealed\n",
		(unsigned long long)st->runs);
	fprintf(f, "lmdb        %llu pages in the databases; both meta pages, the page "
		   "accounting and the entry counts agree\n",
		(unsigned long long)st->pages);
}

/* What only evidence/ reads in a history record: an audit record's
 * consistency (evidence_record_check). */
static int
history_record(void *ctx, const struct store_history_entry *e,
	       struct rba_detail *d)
{
	(void)ctx;
	return evidence_history_record_check(e, d);
}

/*
 * The end of store check's --json report, whose writer dw has the
 * findings open: the findings closed, what was checked and whether it
 * is clean each on its line, and the report closed.
 */
static void
check_json_end(struct rba_json_w *dw, struct rba_buf *b,
	       const struct sink_ctx *sc, const struct audit_check_stats *st)
{
	const struct store_check_stats *s = &st->store;
	struct rba_json_w w;

	if (sc->n)
		rba_buf_put(b, "\n  ", 3);
	rba_json_w_close(dw, ']');
	cli_json_w_sep(&w, b, ",\n  ");
	rba_json_w_open(&w, "checked", '{');
	rba_json_w_u64(&w, "meta", s->meta);
	rba_json_w_u64(&w, "blobs", s->blobs);
	rba_json_w_u64(&w, "blob_chunks", s->blob_chunks);
	rba_json_w_u64(&w, "versions", s->versions);
	rba_json_w_u64(&w, "samples", s->samples);
	rba_json_w_u64(&w, "sample_chunks", s->sample_chunks);
	rba_json_w_u64(&w, "cases", s->cases);
	rba_json_w_u64(&w, "index_entries", s->index_entries);
	rba_json_w_u64(&w, "dead_marks", s->dead_marks);
	rba_json_w_u64(&w, "dead_records", s->dead_records);
	rba_json_w_u64(&w, "history", s->history);
	rba_json_w_u64(&w, "tlog_kept", s->tlog_kept);
	rba_json_w_u64(&w, "tlog_hashes", s->tlog_hashes);
	rba_json_w_u64(&w, "runs", s->runs);
	rba_json_w_u64(&w, "pages", s->pages);
	rba_json_w_close(&w, '}');
	cli_json_w_sep(&w, b, ",\n  ");
	rba_json_w_bool(&w, "clean", st->findings == 0);
	rba_json_w_close(dw, '}');
}

static int
store_check_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	struct audit_check_stats st;
	struct audit_check_sink sink;
	struct sink_ctx sc;
	struct store_txn *txn = NULL;
	struct rba_detail d;
	struct rba_buf out;
	struct rba_json_w w;
	int rc, status;

	if (argc != 2)
		return cli_usage(ctx, "store check takes no arguments");
	status = cli_txn_begin(ctx, 0, 0, "cannot check store", ctx->store_path,
			       &txn);
	if (status != 0)
		return status;
	memset(&sc, 0, sizeof(sc));
	sc.ctx = ctx;
	sc.f = stdout;
	sink.finding = on_finding;
	sink.history_record = history_record;
	sink.ctx = &sc;
	rba_buf_init(&out);
	sc.out = &out;
	if (ctx->json) {
		/* the findings' array stays open while the check fills it */
		rba_json_w_init(&w, &out);
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "store", ctx->store_path);
		rba_json_w_str(&w, "store_id", store_id_hex(ctx->store));
		rba_json_w_open(&w, "findings", '[');
	}
	rba_detail_clear(&d);
	rc = sample_store_check(txn, &sink, &st, &d);
	store_txn_abort(txn);
	if (rc != 0) {
		if (ctx->json) {
			rba_json_w_close(&w, ']');
			rba_json_w_close(&w, '}');
			cli_json_print(&out);
		}
		rba_buf_release(&out);
		return cli_fail("cannot check store", ctx->store_path, rc, &d);
	}
	if (ctx->json) {
		check_json_end(&w, &out, &sc, &st);
		if (cli_json_print(&out) != 0)
			return 2;
		return st.findings > sc.unchecked ? 1 : st.findings ? 2 : 0;
	}
	rba_buf_release(&out);
	/* Records of a later format alone: the answer is not known. */
	if (st.findings && st.findings == sc.unchecked) {
		if (!ctx->quiet)
			printf("store '%s': %llu history record%s of a later format "
			       "not checked: could not check\n", ctx->store_path,
			       (unsigned long long)sc.unchecked,
			       sc.unchecked == 1 ? "" : "s");
		return 2;
	}
	if (st.findings) {
		if (!ctx->quiet)
			printf("store '%s': %llu finding%s: damage found\n",
			       ctx->store_path, (unsigned long long)st.findings,
			       st.findings == 1 ? "" : "s");
		return 1;
	}
	if (!ctx->quiet) {
		printf("store '%s' (id %s)\n", ctx->store_path,
		       store_id_hex(ctx->store));
		print_stats(stdout, &st.store);
		printf("clean: no damage found\n");
	}
	return 0;
}

/* The prune under --json: every run with what became of it.  0, or 2
 * after a diagnostic. */
static int
prune_json(const char *dir, unsigned long keep, int dry,
	   const struct fleet_prune *p)
{
	static const char *const fates[] = {
		[FLEET_PRUNE_NEWEST] = "newest",
		[FLEET_PRUNE_LOCKED] = "locked",
		[FLEET_PRUNE_UNIMPORTED] = "unimported",
		[FLEET_PRUNE_FAILED] = "failed",
		[FLEET_PRUNE_REMOVED] = "removed",
	};

	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "dir", dir);
	rba_json_w_u64(&w, "keep", keep);
	rba_json_w_bool(&w, "dry_run", dry);
	rba_json_w_open(&w, "runs", '[');
	for (size_t i = 0; i < p->n; i++) {
		const struct fleet_prune_run *r = &p->runs[i];
		const char *fate = (size_t)r->fate < sizeof(fates) / sizeof(fates[0]) &&
					   fates[r->fate] ? fates[r->fate] : "kept";

		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "path", r->path);
		rba_json_w_str(&w, "records", r->records);
		rba_json_w_str(&w, "fate", r->fate == FLEET_PRUNE_REMOVED && dry
					       ? "would-remove" : fate);
		if (r->fate == FLEET_PRUNE_UNIMPORTED)
			rba_json_w_u64(&w, "unimported", r->unimported);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, ']');
	rba_json_w_u64(&w, "removed", dry ? 0 : p->removed);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/*
 * store snapshot --prune KEEP DIR [--dry-run]: the runs of a shared
 * directory beyond the KEEP newest removed (fleet/fleet.h); no store is
 * opened.  0, or 2 when one could not be removed.
 */
static int
store_prune_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	static const char *const why[] = {
		[FLEET_PRUNE_NEWEST] = "one of the newest",
		[FLEET_PRUNE_LOCKED] = "the lock names it: a run in progress",
	};
	const char *keep_s = NULL, *dir = NULL;
	struct fleet_prune p;
	struct rba_detail d;
	unsigned long keep;
	int dry = 0, status = 0, err;
	char *end;

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--prune") == 0 && i + 1 < argc && keep_s == NULL)
			keep_s = argv[++i];
		else if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (argv[i][0] == '-' || dir != NULL)
			return cli_usage(ctx, "store snapshot --prune KEEP DIR "
					      "[--dry-run]: unexpected '%s'", argv[i]);
		else
			dir = argv[i];
	}
	errno = 0;
	keep = keep_s ? strtoul(keep_s, &end, 10) : 0;
	if (keep_s == NULL || *keep_s < '0' || *keep_s > '9' || *end || errno ||
	    keep < 1 || keep > 1000000)
		return cli_usage(ctx, "--prune takes KEEP, the number of newest runs "
				      "kept (1 or more)");
	if (dir == NULL)
		return cli_usage(ctx, "store snapshot --prune KEEP needs the shared DIR");
	rba_detail_clear(&d);
	if ((err = fleet_prune_runs(dir, (unsigned)keep, dry, &p, &d)) != 0)
		return cli_fail("cannot prune", dir, err, &d);
	for (size_t i = 0; i < p.n; i++) {
		const struct fleet_prune_run *r = &p.runs[i];
		switch (r->fate) {
		case FLEET_PRUNE_REMOVED:
			if (!ctx->quiet && !ctx->json) {
				/* names found in the shared directory: shown by
				 * the escaping rule */
				printf("%s '", dry ? "would remove" : "removed");
				cli_put_data(stdout, r->path);
				if (r->records) {
					fputs("' with its records '", stdout);
					cli_put_data(stdout, r->records);
				}
				fputs("'\n", stdout);
			}
			break;
		case FLEET_PRUNE_UNIMPORTED:
			cli_diag("kept '%s': its records directory '%s' holds %zu "
				 "record%s not imported; import them (history import) "
				 "or remove it by hand", r->path, r->records,
				 r->unimported, r->unimported == 1 ? "" : "s");
			break;
		case FLEET_PRUNE_FAILED:
			cli_diag("cannot remove '%s': %s", r->fail_path,
				 strerror(r->err));
			status = 2;
			break;
		default:
			if (ctx->verbose && !ctx->json) {
				fputs("kept '", stdout);
				cli_put_data(stdout, r->path);
				printf("': %s\n", why[r->fate]);
			}
			break;
		}
	}
	if (ctx->json && prune_json(dir, keep, dry, &p) != 0)
		status = 2;
	else if (!ctx->json && !ctx->quiet)
		printf("prune '%s': %zu run%s, %zu %s, keeping the %lu newest\n", dir,
		       p.n, p.n == 1 ? "" : "s", dry ? (size_t)0 : p.removed,
		       dry ? "removed (--dry-run)" : "removed", keep);
	fleet_prune_release(&p);
	return status;
}

/*
 * store snapshot OUT: the copy workers read, with the head it holds
 * (-q prints the head digest alone, for a script to hand to workers).
 */
static int
store_snapshot_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_snapshot_info in;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--prune") == 0)
			return store_prune_cmd(ctx, argc, argv);
	if (argc != 3 || argv[2][0] == '-')
		return cli_usage(ctx, "store snapshot takes one OUT directory");
	if ((err = cli_store_open(ctx, 1)) != 0)
		return err;
	rba_detail_clear(&d);
	err = store_snapshot_make(ctx->store, argv[2], &in, &d);
	if (err)
		return cli_fail("cannot make snapshot", argv[2], err, &d);
	rba_digest_format(&in.head, hex);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "snapshot", argv[2]);
		rba_json_w_str(&w, "store_id", in.store_id);
		rba_json_w_u64(&w, "head_id", in.head_id);
		rba_json_w_str(&w, "head", hex);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	} else if (ctx->quiet) {
		printf("%s\n", hex);
	} else {
		printf("snapshot '%s' of store %s: history head record %llu, %s\n",
		       argv[2], in.store_id, (unsigned long long)in.head_id, hex);
	}
	return 0;
}

int
cmd_store(struct cli_ctx *ctx, int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return store_check_cmd(ctx, argc, argv);
	if (argc >= 2 && strcmp(argv[1], "snapshot") == 0)
		return store_snapshot_cmd(ctx, argc, argv);
	return cli_usage(ctx, argc < 2 ? "store needs a subcommand"
				       : "unknown store subcommand '%s'",
			 argv[1]);
}
