/*
 * cmd_audit.c - audit: rebuild, compare and score the sample: would it
 * decide the same today?  With --shard and --records-out, a cluster
 * worker's share of `audit --all` read from a snapshot, each audit
 * written as a signed record file instead of into the store
 * (fleet/fleet.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "fleet/fleet.h"
#include "common/json.h"
#include "common/sign.h"
#include "cli/commands.h"
#include "exec/sandbox.h"
#include "rebuild/rebuild.h"
#include "common/buf.h"
#include "policy/policy.h"
#include "store/store.h"

#define SHOW_FLIPS 10 /* flipped cases a text report lists */

static int
parse_threads(struct cli_ctx *ctx, const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < 1 || v > AUDIT_MAX_THREADS)
		return cli_usage(ctx, "--threads takes a number from 1 to %d",
				 AUDIT_MAX_THREADS);
	*out = (unsigned)v;
	return 0;
}

static void
audit_progress(void *ctx, const char *version, uint64_t done, uint64_t total)
{
	(void)ctx;
	fprintf(stderr, "\raudit %s: %llu/%llu cases scored", version,
		(unsigned long long)done, (unsigned long long)total);
}

static const char *
link_word(int state)
{
	return state == AUDIT_LINK_SAME ? "same"
	       : state == AUDIT_LINK_CHANGED ? "CHANGED" : "unknown";
}

/*
 * What the report quotes from data (case ids, reasons and warnings that
 * quote them, an exec trainer's environment fields, link values) is
 * shown by the escaping rule (cli_fput_data).
 */
static void
shown(const char *s)
{
	cli_put_data(stdout, s);
}

static void
print_link(const char *name, const struct audit_link *l)
{
	printf("  %-14s %-8s", name, link_word(l->state));
	if (l->state == AUDIT_LINK_CHANGED && l->pinned && l->current) {
		putchar(' ');
		shown(l->pinned);
		fputs(" -> ", stdout);
		shown(l->current);
	} else if (l->current) {
		putchar(' ');
		shown(l->current);
	}
	putchar('\n');
	if (l->note) {
		printf("  %-14s          (", "");
		shown(l->note);
		fputs(")\n", stdout);
	}
}

/* The pinned, the rebuilt and the decisions' artifacts, and what an
 * exec rebuild ran. */
static void
print_artifacts(struct cli_ctx *ctx, const struct audit_report *r)
{
	char a[RBA_DIGEST_TEXT_LEN + 1], b[RBA_DIGEST_TEXT_LEN + 1];

	if (!r->has_rebuilt)
		return;
	printf("artifact      pinned  %s\n", cli_digest_short(&r->artifact_pinned, ctx->verbose, a));
	printf("              rebuilt %s%s\n", cli_digest_short(&r->artifact_rebuilt, ctx->verbose, b),
	       rba_digest_equal(&r->artifact_pinned, &r->artifact_rebuilt)
		       ? "  (identical)" : "  (differs)");
	if (r->has_decisions)
		printf("              decisions made by %s%s\n",
		       cli_digest_short(&r->artifact_decisions, ctx->verbose, b),
		       rba_digest_equal(&r->artifact_decisions, &r->artifact_rebuilt)
			       ? "  (the rebuilt one)" : "  (another artifact)");
	if (r->kind != NULL && r->kind->sandboxed) {
		char t[32];
		printf("rebuilt by    commit %.*s (tree %.*s) in %s, %s s\n",
		       ctx->verbose ? 40 : 12, r->exec_commit,
		       ctx->verbose ? 40 : 12, r->exec_tree, sandbox_name(),
		       cli_fmt_g6(r->exec_seconds, t));
	}
}

/* The sample's counts, once it was read and verified. */
static void
print_sample(const struct audit_report *r)
{
	char n1[32];

	if (!r->sample_verified)
		return;
	printf("sample        %llu cases, %llu flip%s, max score delta %s",
	       (unsigned long long)r->cases, (unsigned long long)r->flips,
	       r->flips == 1 ? "" : "s", cli_fmt_g6(r->max_delta, n1));
	if (r->max_delta > 0 && r->max_delta_case) {
		fputs(" (case ", stdout);
		shown(r->max_delta_case);
		putchar(')');
	}
	putchar('\n');
	printf("near edges    %llu within the margin, %llu within ten margins\n",
	       (unsigned long long)r->near_cases,
	       (unsigned long long)r->weak_band_cases);
}

/* The links, with the first environment fields that differ. */
static void
print_links(const struct audit_report *r)
{
	printf("links:\n");
	print_link("code revision", &r->code_revision);
	print_link("trainer ABI", &r->trainer_abi);
	print_link("environment", &r->environment);
	for (size_t i = 0; i < r->nenv_fields && i < 8; i++) {
		printf("  %-14s   ", "");
		shown(r->env_fields[i].key);
		fputs(": ", stdout);
		shown(r->env_fields[i].pinned ? r->env_fields[i].pinned : "(absent)");
		fputs(" -> ", stdout);
		shown(r->env_fields[i].current ? r->env_fields[i].current : "(absent)");
		putchar('\n');
	}
	if (r->nenv_fields > 8)
		printf("  %-14s   ... %zu more fields (--json lists them)\n", "",
		       r->nenv_fields - 8);
	print_link("config", &r->config);
	print_link("snapshot", &r->snapshot_link);
}

/* The first flipped cases. */
static void
print_flips(const struct audit_report *r)
{
	size_t show = r->nlisted < SHOW_FLIPS ? r->nlisted : SHOW_FLIPS;
	char n1[32], n2[32];

	printf("flipped cases (margin: distance of the stored score to the "
	       "nearest band edge):\n");
	printf("  %-12s %-22s %-22s %s\n", "case", "stored", "rebuilt", "margin");
	for (size_t i = 0; i < show; i++) {
		const struct audit_flip *f = &r->listed[i];
		char s1[64], s2[64];
		snprintf(s1, sizeof(s1), "%.6f %s", f->stored_score, f->stored_decision);
		snprintf(s2, sizeof(s2), "%.6f %s", f->rebuilt_score, f->rebuilt_decision);
		fputs("  ", stdout);
		cli_put_data_pad(stdout, f->id, 12);
		putchar(' ');
		cli_put_data_pad(stdout, s1, 22);
		putchar(' ');
		cli_put_data_pad(stdout, s2, 22);
		printf(" %s", cli_fmt_g6(f->margin, n1));
		if (!isnan(f->edge))
			printf(" (edge %s)", cli_fmt_g6(f->edge, n2));
		putchar('\n');
	}
	if (r->flips > show)
		printf("  ... %llu more (--json lists up to %d)\n",
		       (unsigned long long)(r->flips - show), AUDIT_MAX_LISTED);
}

static void
print_report(struct cli_ctx *ctx, const struct audit_report *r)
{
	char a[RBA_DIGEST_TEXT_LEN + 1];
	const char *v = audit_verdict_name(r->verdict);

	/* An ad hoc verdict answers another question than the version's
	 * audit: labelled on the line that gives it. */
	printf("audit %s: %s%s (exit %d)\n", r->version,
	       r->verdict == AUDIT_NOT_REPRODUCIBLE ? "NOT REPRODUCIBLE"
	       : r->verdict == AUDIT_NOT_MEASURED  ? "NOT MEASURED" : v,
	       r->ad_hoc ? ", ad hoc" : "", r->exit_status);
	if (r->nreasons) {
		printf("reasons:\n");
		for (size_t i = 0; i < r->nreasons; i++) {
			fputs("  - ", stdout);
			shown(r->reasons[i]);
			putchar('\n');
		}
	}
	print_artifacts(ctx, r);
	print_sample(r);
	if (r->policy_text)
		printf("policy        %s (%s)\n", cli_digest_short(&r->policy_digest, ctx->verbose, a),
		       r->policy_from_version ? "the version's" : "--policy");
	if (r->has_rebuilt && (r->verdict != AUDIT_BIT_IDENTICAL || ctx->verbose))
		print_links(r);
	if (r->flips > 0 && r->nlisted > 0)
		print_flips(r);
	for (size_t i = 0; i < r->nwarnings; i++) {
		fputs("warning: ", stdout);
		shown(r->warnings[i]);
		putchar('\n');
	}
	/* A rebuild that is not the pinned artifact: which input of the
	 * rebuild changes it is vary's to say. */
	if ((r->verdict == AUDIT_METRIC_EQUIVALENT || r->verdict == AUDIT_NOT_REPRODUCIBLE) &&
	    r->has_rebuilt && !rba_digest_equal(&r->artifact_rebuilt, &r->artifact_pinned)) {
		fputs("next step     rebuild-audit vary ", stdout);
		shown(r->version);
		fputs(" (which factor of the rebuild changes the artifact)\n", stdout);
	}
	if (r->recorded)
		printf("recorded      history record %llu\n",
		       (unsigned long long)r->history_id);
}

/* What audit was asked (cmd_audit_parse). */
struct audit_args {
	int all, list;
	const char *shard, *records, *keypath, *head, *passfile, *policy_path;
	const char *shards, *split_name;
	enum fleet_split split;
	struct rba_digest want_head;
	uint32_t k, n;		 /* --shard K/N; 0/1 without */
	char *const *versions; /* the VERSIONs, without --all */
	size_t nversions;
	struct audit_options o;
};

/* What a run holds; cmd_audit releases all of it on every path. */
struct audit_run {
	struct cli_ctx *ctx;
	struct audit_args a;
	struct sign_seckey *key;
	struct policy *pol;
	struct fleet_worker fw;
	struct fleet_versions vs;
	char *const *names; /* what is audited: a.versions or vs.names */
	size_t n;
	struct rba_buf json; /* the run's document, written through jw */
	struct rba_json_w jw;
	int status;
};

/* argv into *a; 0, or 2 after a usage diagnostic. */
static int
cmd_audit_parse(struct cli_ctx *ctx, int argc, char **argv,
		struct audit_args *a)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "policy", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "shard", required_argument, NULL, 's' },
		{ "records-out", required_argument, NULL, 'o' },
		{ "head", required_argument, NULL, 'H' },
		{ "passphrase-file", required_argument, NULL, 'P' },
		{ "list", no_argument, NULL, 'l' },
		{ "shards", required_argument, NULL, 'N' },
		{ "split", required_argument, NULL, 'X' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->o.threads = 1;
	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "k:", opts, NULL)) != -1) {
		switch (c) {
		case 'a': a->all = 1; break;
		case 'p': a->policy_path = optarg; break;
		case 's': a->shard = optarg; break;
		case 'o': a->records = optarg; break;
		case 'k': a->keypath = optarg; break;
		case 'H': a->head = optarg; break;
		case 'P': a->passfile = optarg; break;
		case 'l': a->list = 1; break;
		case 'N': a->shards = optarg; break;
		case 'X': a->split_name = optarg; break;
		case 't':
			if (parse_threads(ctx, optarg, &a->o.threads) != 0)
				return 2;
			break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if ((a->shard || a->records || a->keypath || a->head || a->passfile ||
	     a->list || a->shards || a->split_name) && !a->all)
		return cli_usage(ctx, "--shard, --shards, --split, --records-out, -k, "
				      "--head and --list go with --all");
	if (a->split_name != NULL) {
		if (strcmp(a->split_name, "balanced") == 0)
			a->split = FLEET_SPLIT_BALANCED;
		else if (strcmp(a->split_name, "hash") == 0)
			a->split = FLEET_SPLIT_HASH;
		else
			return cli_usage(ctx, "--split takes balanced or hash, not '%s'",
					 a->split_name);
	}
	if (a->shards != NULL) {
		char spec[64];
		uint32_t k0;
		snprintf(spec, sizeof(spec), "0/%s", a->shards);
		if (!a->list || a->shard != NULL)
			return cli_usage(ctx, "--shards N goes with --list, without "
					      "--shard: it prints the whole split");
		if (strlen(a->shards) > 20 ||
		    fleet_shard_parse(spec, &k0, &a->n) != 0)
			return cli_usage(ctx, "--shards takes N with 1 <= N <= %u, "
					 "not '%s'", FLEET_SHARDS_MAX, a->shards);
	}
	if (a->all == (optind < argc))
		return cli_usage(ctx, a->all ? "--all takes no VERSION"
					     : "audit needs a VERSION or --all");
	if (a->shard != NULL && fleet_shard_parse(a->shard, &a->k, &a->n) != 0)
		return cli_usage(ctx, "--shard takes K/N with 0 <= K < N <= %u, not '%s'",
				 FLEET_SHARDS_MAX, a->shard);
	if (a->shard == NULL && a->shards == NULL)
		a->n = 1;
	if (a->list && (a->records || a->keypath || a->head || a->passfile))
		return cli_usage(ctx, "--list only lists the versions of a shard");
	if (a->list && a->shard == NULL && a->shards == NULL)
		return cli_usage(ctx, "--list needs --shard K/N (its versions) or "
				      "--shards N (the whole split)");
	if (!a->list && (a->shard || a->keypath || a->head || a->passfile) &&
	    !a->records)
		return cli_usage(ctx, "--shard, -k and --head go with --records-out DIR");
	if (a->records != NULL && (a->keypath == NULL || a->records[0] == 0))
		return cli_usage(ctx, "--records-out DIR needs -k KEY (the worker's "
				      "secret key) to sign the records");
	if (a->records != NULL && a->policy_path != NULL)
		return cli_usage(ctx, "--records-out audits under each version's own "
				      "policy: no --policy");
	if (a->head != NULL && rba_digest_parse(a->head, &a->want_head) != 0)
		return cli_usage(ctx, "--head needs a digest 'sha256:<64 hex digits>' "
				      "as 'store snapshot' prints it, not '%s'", a->head);
	a->versions = argv + optind;
	a->nversions = (size_t)(argc - optind);
	return 0;
}

/*
 * A worker's key and snapshot: read-only and without locks, and never
 * the store itself.  0, or 2 after a diagnostic.
 */
static int
cmd_audit_open_worker(struct audit_run *run)
{
	struct cli_ctx *ctx = run->ctx;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	if ((err = cli_seckey_load(run->a.keypath, run->a.passfile, &run->key)) != 0)
		return err;
	run->fw.key = run->key;
	run->fw.dir = run->a.records;
	run->fw.k = run->a.k;
	run->fw.n = run->a.n;
	rba_detail_clear(&d);
	cli_guard_store("cannot read store", ctx->store_path);
	err = store_snapshot_open(ctx->store_path, &ctx->store, &run->fw.snap, &d);
	if (err != 0)
		return cli_fail("cannot open snapshot", ctx->store_path, err, &d);
	if (run->a.head != NULL &&
	    !rba_digest_equal(&run->a.want_head, &run->fw.snap.head)) {
		rba_digest_format(&run->fw.snap.head, hex);
		rba_detail_clear(&d);
		snprintf(d.reason, sizeof(d.reason), "its history head is %s, "
			 "not the %s this run was told to use", hex, run->a.head);
		return cli_fail("cannot open snapshot", ctx->store_path,
				RBA_E_USAGE, &d);
	}
	return 0;
}

/*
 * Every audit is appended to the history: a broken chain is named
 * before anything is added to it.  0, or 2 after a diagnostic.
 */
static int
cmd_audit_check_history(struct cli_ctx *ctx)
{
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	if ((err = audit_history_check(ctx->store, &d)) != 0)
		return cli_fail("cannot audit", ctx->store_path, err, &d);
	return 0;
}

/* The key, snapshot, policy and store of the run; 0, or 2. */
static int
cmd_audit_open(struct audit_run *run)
{
	struct cli_ctx *ctx = run->ctx;
	int err;

	if (run->a.records != NULL) {
		if ((err = cmd_audit_open_worker(run)) != 0)
			return err;
		run->a.o.no_record = 1;
	}
	if (cli_policy_load(run->a.policy_path, &run->pol) != 0)
		return 2;
	run->a.o.policy = run->pol;
	if (ctx->progress) {
		run->a.o.progress = audit_progress;
		run->a.o.progress_ctx = NULL;
	}
	if ((err = cli_store_open(ctx, run->a.list)) != 0)
		return err;
	return cmd_audit_check_history(ctx);
}

/* What is audited: the VERSIONs, or this shard's share of every version
 * by the stable rule of fleet/fleet.h.  0, or 2 after a diagnostic. */
static int
cmd_audit_names(struct audit_run *run)
{
	struct cli_ctx *ctx = run->ctx;
	struct rba_detail d;
	int err;

	if (!run->a.all) {
		run->names = run->a.versions;
		run->n = run->a.nversions;
		return 0;
	}
	rba_detail_clear(&d);
	err = fleet_versions_list(ctx->store, run->a.k, run->a.n, run->a.split,
				  &run->vs, &d);
	/* Each version is audited on its own, so a key that is none is
	 * named and never hides the others. */
	for (size_t i = 0; i < run->vs.nbad; i++)
		fprintf(stderr, "rebuild-audit: cannot audit '%s': the versions "
			"database holds a key that is no version name; run "
			"'rebuild-audit store check'\n", run->vs.bad[i]);
	if (err)
		return cli_fail("cannot list versions", ctx->store_path, err, &d);
	if (run->vs.nbad)
		run->status = 2;
	run->names = run->vs.names;
	run->n = run->vs.n;
	return 0;
}

/* One version's turn (fleet_audit_run): its diagnostics and report. */
static int
cmd_audit_one(void *vrun, const struct fleet_turn *t)
{
	struct audit_run *run = vrun;
	struct cli_ctx *ctx = run->ctx;
	const struct audit_report *r = t->report;
	int st;

	if (t->skipped) {
		if (ctx->verbose)
			cli_diag("skipped '%s': %s holds its record for this "
				 "snapshot", t->name, run->a.records);
		return 0;
	}
	if (t->write_err) {
		cli_fail("cannot write the record of", t->name, t->write_err,
			 t->write_detail);
		run->status = 2;
	} else if (t->path != NULL && ctx->verbose) {
		cli_diag("record '%s'", t->path);
	}
	if (ctx->progress)
		fputs("\r\033[K", stderr);
	st = t->err ? 2 : r->exit_status;
	if (t->err)
		cli_fail(r->recorded || r->verdict == AUDIT_NOT_MEASURED
				 ? "cannot audit" : "cannot record the audit of",
			 t->name, t->err, t->detail);
	if (st > run->status)
		run->status = st;
	if (r->version != NULL && (r->pins_text != NULL ||
				   r->verdict != AUDIT_NOT_MEASURED)) {
		/* an item of "audits": the writer's separator, then the
		 * record as the audit module encodes it */
		rba_json_w_raw(&run->jw, NULL, "", 0);
		audit_report_json(r, &run->json);
		if (!ctx->json && !(ctx->quiet && st == 0)) {
			print_report(ctx, r);
			if (t->index + 1 < run->n)
				putchar('\n');
		}
	}
	return 0;
}

/* --shard K/N --list: the shard's versions; the run's status, or 2
 * after a diagnostic. */
static int
cmd_audit_list(struct audit_run *run)
{
	struct rba_buf b;
	struct rba_json_w w;

	if (!run->ctx->json) {
		for (size_t i = 0; i < run->n; i++)
			printf("%s\n", run->names[i]);
		return run->status;
	}
	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "split",
		       run->a.split == FLEET_SPLIT_HASH ? "hash" : "balanced");
	rba_json_w_u64(&w, "shard", run->a.k);
	rba_json_w_u64(&w, "shards", run->a.n);
	rba_json_w_open(&w, "versions", '[');
	for (size_t i = 0; i < run->n; i++)
		rba_json_w_str(&w, NULL, run->names[i]);
	rba_json_w_close(&w, ']');
	rba_json_w_close(&w, '}');
	return cli_json_print(&b) != 0 ? 2 : run->status;
}

/* Every version of the run in turn; 0, or 2 after a diagnostic. */
static int
cmd_audit_all(struct audit_run *run)
{
	struct rba_detail d;
	int err;

	rba_json_w_init(&run->jw, &run->json);
	rba_json_w_open(&run->jw, NULL, '{');
	rba_json_w_str(&run->jw, "schema", "rebuild-audit/audit-run/v1");
	rba_json_w_open(&run->jw, "audits", '[');
	rba_detail_clear(&d);
	err = fleet_audit_run(run->ctx->store, run->a.records ? &run->fw : NULL,
			      run->names, run->n, &run->a.o, cmd_audit_one, run, &d);
	if (err)
		return cli_fail("cannot read records", run->a.records, err, &d);
	return 0;
}

/* The JSON report of the run; returns the run's exit status. */
static int
cmd_audit_report(struct audit_run *run)
{
	struct cli_ctx *ctx = run->ctx;

	rba_json_w_close(&run->jw, ']');
	rba_json_w_u64(&run->jw, "exit_status", (uint64_t)run->status);
	rba_json_w_close(&run->jw, '}');
	if (ctx->json && !(ctx->quiet && run->status == 0)) {
		if (rba_buf_status(&run->json) != 0)
			run->status = cli_fail("cannot report", "audit", RBA_E_NOMEM,
					       NULL);
		else if (cli_json_print(&run->json) != 0)
			run->status = 2;
	}
	return run->status;
}

/* --shards N --list --json: 0, or 2 after a diagnostic. */
static int
plan_json(const struct fleet_plan *p, double max, double mean)
{
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "split", p->split == FLEET_SPLIT_HASH ? "hash" : "balanced");
	rba_json_w_u64(&w, "shards", p->nshards);
	rba_json_w_open(&w, "versions", '[');
	for (size_t i = 0; i < p->n; i++) {
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "version", p->names[i]);
		rba_json_w_u64(&w, "shard", p->shard[i]);
		cli_json_w_fmt(&w, "cost", "%.17g", p->cost[i]);
		rba_json_w_bool(&w, "measured", p->measured[i]);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, ']');
	rba_json_w_open(&w, "load", '[');
	for (uint32_t k = 0; k < p->nshards; k++)
		cli_json_w_fmt(&w, NULL, "%.17g", p->load[k]);
	rba_json_w_close(&w, ']');
	cli_json_w_fmt(&w, "max_over_mean", "%.17g", mean > 0 ? max / mean : 0);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/*
 * --shards N --list: the whole split, each shard's expected load and
 * versions, and the largest shard over the mean.  Returns 0, or 2.
 */
static int
cmd_audit_plan(struct audit_run *run)
{
	struct cli_ctx *ctx = run->ctx;
	struct fleet_plan p;
	struct rba_detail d;
	double sum = 0, max = 0, mean;
	int err;

	rba_detail_clear(&d);
	err = fleet_plan_make(ctx->store, run->a.n, run->a.split,
			      FLEET_HISTORY_ALL, &p, &d);
	for (size_t i = 0; err == 0 && i < p.nbad; i++)
		fprintf(stderr, "rebuild-audit: cannot audit '%s': the versions "
			"database holds a key that is no version name; run "
			"'rebuild-audit store check'\n", p.bad[i]);
	if (err != 0) {
		fleet_plan_release(&p);
		return cli_fail("cannot list versions", ctx->store_path, err, &d);
	}
	for (uint32_t k = 0; k < p.nshards; k++) {
		sum += p.load[k];
		if (p.load[k] > max)
			max = p.load[k];
	}
	mean = sum / p.nshards;
	err = p.nbad ? 2 : 0;
	if (ctx->json) {
		if (plan_json(&p, max, mean) != 0)
			err = 2;
	} else {
		const char *rule = p.split == FLEET_SPLIT_HASH ? "hash" : "balanced";
		for (uint32_t k = 0; k < p.nshards; k++) {
			size_t m = 0;
			for (size_t i = 0; i < p.n; i++)
				m += p.shard[i] == k;
			printf("shard %u/%u: %zu version%s, expected %.2f s\n", k,
			       p.nshards, m, m == 1 ? "" : "s", p.load[k]);
			for (size_t i = 0; i < p.n; i++)
				if (p.shard[i] == k)
					printf("  %-32s %9.2f s  %s\n", p.names[i],
					       p.cost[i], p.measured[i]
					       ? "measured" : "estimated from the pins");
		}
		printf("split %s: largest shard %.2f s, mean %.2f s: %.2fx\n", rule,
		       max, mean, mean > 0 ? max / mean : 0.0);
	}
	fleet_plan_release(&p);
	return err;
}

int
cmd_audit(struct cli_ctx *ctx, int argc, char **argv)
{
	struct audit_run run;
	int err;

	memset(&run, 0, sizeof(run));
	run.ctx = ctx;
	rba_buf_init(&run.json);
	if ((err = cmd_audit_parse(ctx, argc, argv, &run.a)) != 0 ||
	    (err = cmd_audit_open(&run)) != 0)
		goto out;
	if (run.a.list && run.a.shards != NULL) {
		err = cmd_audit_plan(&run);
		goto out;
	}
	if ((err = cmd_audit_names(&run)) != 0)
		goto out;
	if (run.a.list) {
		err = cmd_audit_list(&run);
		goto out;
	}
	if ((err = cmd_audit_all(&run)) != 0)
		goto out;
	/* Said after a run that audited nothing, so that a worker's
	 * records directory that cannot be read is named first. */
	if (run.a.all && run.n == 0 && run.vs.nbad == 0 && run.a.shard == NULL) {
		fprintf(stderr, "rebuild-audit: nothing to audit '%s': the store "
			"holds no version\n", ctx->store_path);
		err = 2;
		goto out;
	}
	err = cmd_audit_report(&run);
out:
	rba_buf_release(&run.json);
	fleet_versions_release(&run.vs);
	sign_seckey_free(run.key);
	policy_free(run.pol);
	return err;
}
