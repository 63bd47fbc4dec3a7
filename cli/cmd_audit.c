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
#include "common/sign.h"
#include "cli/commands.h"
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

static void
print_link(const char *name, const struct audit_link *l)
{
	printf("  %-14s %-8s", name, link_word(l->state));
	if (l->state == AUDIT_LINK_CHANGED && l->pinned && l->current)
		printf(" %s -> %s", l->pinned, l->current);
	else if (l->current)
		printf(" %s", l->current);
	putchar('\n');
	if (l->note)
		printf("  %-14s          (%s)\n", "", l->note);
}

static void
print_report(struct cli_ctx *ctx, const struct audit_report *r)
{
	char a[RBA_DIGEST_TEXT_LEN + 1], b[RBA_DIGEST_TEXT_LEN + 1], n1[32], n2[32];
	const char *v = audit_verdict_name(r->verdict);

	printf("audit %s: %s (exit %d)\n", r->version,
	       r->verdict == AUDIT_NOT_REPRODUCIBLE ? "NOT REPRODUCIBLE"
	       : r->verdict == AUDIT_NOT_MEASURED  ? "NOT MEASURED" : v,
	       r->exit_status);
	if (r->nreasons) {
		printf("reasons:\n");
		for (size_t i = 0; i < r->nreasons; i++)
			printf("  - %s\n", r->reasons[i]);
	}
	if (r->has_rebuilt) {
		printf("artifact      pinned  %s\n", cli_digest_short(&r->artifact_pinned, ctx->verbose, a));
		printf("              rebuilt %s%s\n", cli_digest_short(&r->artifact_rebuilt, ctx->verbose, b),
		       rba_digest_equal(&r->artifact_pinned, &r->artifact_rebuilt)
			       ? "  (identical)" : "  (differs)");
	}
	if (r->has_rebuilt && r->has_decisions)
		printf("              decisions made by %s%s\n",
		       cli_digest_short(&r->artifact_decisions, ctx->verbose, b),
		       rba_digest_equal(&r->artifact_decisions, &r->artifact_rebuilt)
			       ? "  (the rebuilt one)" : "  (another artifact)");
	if (r->sample_verified) {
		printf("sample        %llu cases, %llu flip%s, max score delta %s",
		       (unsigned long long)r->cases, (unsigned long long)r->flips,
		       r->flips == 1 ? "" : "s", cli_fmt_g6(r->max_delta, n1));
		if (r->max_delta > 0 && r->max_delta_case)
			printf(" (case %s)", r->max_delta_case);
		putchar('\n');
		printf("near edges    %llu within the margin, %llu within ten margins\n",
		       (unsigned long long)r->near_cases,
		       (unsigned long long)r->weak_band_cases);
	}
	if (r->policy_text)
		printf("policy        %s (%s)\n", cli_digest_short(&r->policy_digest, ctx->verbose, a),
		       r->policy_from_version ? "the version's" : "--policy");
	if (r->has_rebuilt && (r->verdict != AUDIT_BIT_IDENTICAL || ctx->verbose)) {
		printf("links:\n");
		print_link("code revision", &r->code_revision);
		print_link("trainer ABI", &r->trainer_abi);
		print_link("environment", &r->environment);
		for (size_t i = 0; i < r->nenv_fields && i < 8; i++)
			printf("  %-14s   %s: %s -> %s\n", "", r->env_fields[i].key,
			       r->env_fields[i].pinned ? r->env_fields[i].pinned : "(absent)",
			       r->env_fields[i].current ? r->env_fields[i].current : "(absent)");
		if (r->nenv_fields > 8)
			printf("  %-14s   ... %zu more fields (--json lists them)\n", "",
			       r->nenv_fields - 8);
		print_link("config", &r->config);
		print_link("snapshot", &r->snapshot_link);
	}
	if (r->flips > 0 && r->nlisted > 0) {
		size_t show = r->nlisted < SHOW_FLIPS ? r->nlisted : SHOW_FLIPS;
		printf("flipped cases (margin: distance of the stored score to the "
		       "nearest band edge):\n");
		printf("  %-12s %-22s %-22s %s\n", "case", "stored", "rebuilt", "margin");
		for (size_t i = 0; i < show; i++) {
			const struct audit_flip *f = &r->listed[i];
			char s1[64], s2[64];
			snprintf(s1, sizeof(s1), "%.6f %s", f->stored_score, f->stored_decision);
			snprintf(s2, sizeof(s2), "%.6f %s", f->rebuilt_score, f->rebuilt_decision);
			printf("  %-12s %-22s %-22s %s", f->id, s1, s2, cli_fmt_g6(f->margin, n1));
			if (!isnan(f->edge))
				printf(" (edge %s)", cli_fmt_g6(f->edge, n2));
			putchar('\n');
		}
		if (r->flips > show)
			printf("  ... %llu more (--json lists up to %d)\n",
			       (unsigned long long)(r->flips - show), AUDIT_MAX_LISTED);
	}
	for (size_t i = 0; i < r->nwarnings; i++)
		printf("warning: %s\n", r->warnings[i]);
	if (r->recorded)
		printf("recorded      history record %llu\n",
		       (unsigned long long)r->history_id);
}

struct names {
	size_t n, cap;
	char **v;
	size_t bad; /* keys that are no version name */
};

/*
 * Every version, by name only: each is then audited on its own, so a
 * damaged record, a missing sample or policy is named as that version's
 * failure and never hides the others.
 */
static int
each_name(void *ctx, const char *name, int valid)
{
	struct names *nm = ctx;
	char **nv;

	if (!valid) {
		fprintf(stderr, "rebuild-audit: cannot audit '%s': the versions "
			"database holds a key that is no version name; run "
			"'rebuild-audit store check'\n", name);
		nm->bad++;
		return 0;
	}
	if (nm->n == nm->cap) {
		nm->cap = nm->cap ? nm->cap * 2 : 8;
		nv = realloc(nm->v, nm->cap * sizeof(char *));
		if (nv == NULL)
			return RBA_E_NOMEM;
		nm->v = nv;
	}
	if ((nm->v[nm->n] = strdup(name)) == NULL)
		return RBA_E_NOMEM;
	nm->n++;
	return 0;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
run_ok(void *ctx, const char *id, const uint8_t *p, size_t n)
{
	(void)ctx;
	(void)id;
	(void)p;
	(void)n;
	return 0;
}

int
cmd_audit(struct cli_ctx *ctx, int argc, char **argv)
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
		{ NULL, 0, NULL, 0 },
	};
	struct fleet_worker fw;
	struct sign_seckey *key = NULL;
	struct rba_digest want_head;
	char **done = NULL;
	size_t ndone = 0;
	const char *shard = NULL, *records = NULL, *keypath = NULL, *head = NULL,
		   *passfile = NULL;
	int list = 0;
	struct audit_options o;
	struct policy *pol = NULL;
	struct names nm;
	struct rba_detail d;
	struct rba_buf json;
	const char *policy_path = NULL;
	int c, all = 0, status = 0, err, any = 0;

	memset(&o, 0, sizeof(o));
	memset(&nm, 0, sizeof(nm));
	o.threads = 1;
	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	memset(&fw, 0, sizeof(fw));
	while ((c = getopt_long(argc, argv, "k:", opts, NULL)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 'p': policy_path = optarg; break;
		case 's': shard = optarg; break;
		case 'o': records = optarg; break;
		case 'k': keypath = optarg; break;
		case 'H': head = optarg; break;
		case 'P': passfile = optarg; break;
		case 'l': list = 1; break;
		case 't':
			if (parse_threads(ctx, optarg, &o.threads) != 0)
				return 2;
			break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if ((shard || records || keypath || head || passfile || list) && !all)
		return cli_usage(ctx, "--shard, --records-out, -k, --head and --list "
				      "go with --all");
	if (all == (optind < argc))
		return cli_usage(ctx, all ? "--all takes no VERSION"
					  : "audit needs a VERSION or --all");
	if (shard != NULL && fleet_shard_parse(shard, &fw.k, &fw.n) != 0)
		return cli_usage(ctx, "--shard takes K/N with 0 <= K < N <= %u, not '%s'",
				 FLEET_SHARDS_MAX, shard);
	if (shard == NULL)
		fw.n = 1;
	if (list && (records || keypath || head || passfile))
		return cli_usage(ctx, "--list only lists the versions of a shard");
	if (!list && (shard || keypath || head || passfile) && !records)
		return cli_usage(ctx, "--shard, -k and --head go with --records-out DIR");
	if (records != NULL && (keypath == NULL || records[0] == 0))
		return cli_usage(ctx, "--records-out DIR needs -k KEY (the worker's "
				      "secret key) to sign the records");
	if (records != NULL && policy_path != NULL)
		return cli_usage(ctx, "--records-out audits under each version's own "
				      "policy: no --policy");
	if (head != NULL && rba_digest_parse(head, &want_head) != 0)
		return cli_usage(ctx, "--head needs a digest 'sha256:<64 hex digits>' "
				      "as 'store snapshot' prints it, not '%s'", head);
	if (records != NULL) {
		if ((err = cli_seckey_load(keypath, passfile, &key)) != 0)
			return err;
		fw.key = key;
		fw.dir = records;
		/* A worker reads a snapshot, read-only and without locks,
		 * and never the store itself. */
		rba_detail_clear(&d);
		cli_guard_store("cannot read store", ctx->store_path);
		err = store_snapshot_open(ctx->store_path, &ctx->store, &fw.snap, &d);
		if (err != 0) {
			sign_seckey_free(key);
			return cli_fail("cannot open snapshot", ctx->store_path, err, &d);
		}
		if (head != NULL && !rba_digest_equal(&want_head, &fw.snap.head)) {
			char hex[RBA_DIGEST_TEXT_LEN + 1];
			rba_digest_format(&fw.snap.head, hex);
			sign_seckey_free(key);
			rba_detail_clear(&d);
			snprintf(d.reason, sizeof(d.reason), "its history head is %s, "
				 "not the %s this run was told to use", hex, head);
			return cli_fail("cannot open snapshot", ctx->store_path,
					RBA_E_USAGE, &d);
		}
		o.no_record = 1;
	}
	if (cli_policy_load(policy_path, &pol) != 0) {
		sign_seckey_free(key);
		return 2;
	}
	o.policy = pol;
	if (ctx->progress) {
		o.progress = audit_progress;
		o.progress_ctx = NULL;
	}
	if ((err = cli_store_open(ctx, list)) != 0) {
		policy_free(pol);
		return err;
	}
	/* Every audit is appended to the history: a broken chain is named
	 * before anything is added to it. */
	{
		struct store_txn *txn;
		uint64_t bad = 0;
		if ((err = cli_txn_begin(ctx, 0, 0, "cannot read history",
					 ctx->store_path, &txn)) != 0) {
			policy_free(pol);
			return err;
		}
		rba_detail_clear(&d);
		err = store_history_verify(txn, &bad, NULL, &d);
		/* The run records (a version's training) are sealed under
		 * their ids: one that no longer reads under its id is named
		 * here, where a lookup by id would only miss it. */
		if (err == 0)
			err = store_run_list(txn, run_ok, NULL, &d);
		store_txn_abort(txn);
		if (err) {
			char why[sizeof(d.reason)];
			snprintf(why, sizeof(why), "%s", d.reason);
			snprintf(d.reason, sizeof(d.reason), "%s: %.300s; run "
				 "'rebuild-audit store check'",
				 bad ? "the history is broken" : "damaged records", why);
			policy_free(pol);
			return cli_fail("cannot audit", ctx->store_path, err, &d);
		}
	}
	rba_detail_clear(&d);
	if (all) {
		struct store_txn *txn;
		if ((err = cli_txn_begin(ctx, 0, 0, "cannot list versions",
					 ctx->store_path, &txn)) != 0) {
			policy_free(pol);
			return err;
		}
		err = store_version_names(txn, each_name, &nm, &d);
		store_txn_abort(txn);
		if (err) {
			policy_free(pol);
			return cli_fail("cannot list versions", ctx->store_path, err, &d);
		}
		if (nm.bad)
			status = 2;
		/* This shard's share, by the stable rule of fleet/fleet.h. */
		{
			size_t j = 0;
			for (size_t i = 0; i < nm.n; i++) {
				if (fleet_shard_of(nm.v[i], fw.n) == fw.k)
					nm.v[j++] = nm.v[i];
				else
					free(nm.v[i]);
			}
			nm.n = j;
		}
		if (list) {
			for (size_t i = 0; i < nm.n; i++)
				printf("%s\n", nm.v[i]);
			for (size_t i = 0; i < nm.n; i++)
				free(nm.v[i]);
			free(nm.v);
			policy_free(pol);
			return status;
		}
		/* A rerun skips what already has a record for this snapshot. */
		if (records != NULL) {
			rba_detail_clear(&d);
			err = fleet_records_done(&fw, &done, &ndone, &d);
			if (err) {
				policy_free(pol);
				sign_seckey_free(key);
				return cli_fail("cannot read records", records, err, &d);
			}
		}
		if (nm.n == 0 && nm.bad == 0 && shard == NULL) {
			policy_free(pol);
			sign_seckey_free(key);
			fprintf(stderr, "rebuild-audit: nothing to audit '%s': the store "
				"holds no version\n", ctx->store_path);
			return 2;
		}
	} else {
		nm.n = (size_t)(argc - optind);
		nm.v = calloc(nm.n, sizeof(char *));
		for (size_t i = 0; nm.v != NULL && i < nm.n; i++)
			if ((nm.v[i] = strdup(argv[optind + (int)i])) == NULL) {
				while (i > 0)
					free(nm.v[--i]);
				free(nm.v);
				nm.v = NULL;
			}
		/* Without its list, the loop below would audit nothing and
		 * exit 0. */
		if (nm.v == NULL) {
			policy_free(pol);
			return cli_fail("cannot audit", argv[optind], RBA_E_NOMEM, NULL);
		}
	}
	rba_buf_init(&json);
	rba_buf_printf(&json, "{\"schema\": \"rebuild-audit/audit-run/v1\", \"audits\": [");
	for (size_t i = 0; nm.v != NULL && i < nm.n; i++) {
		struct audit_report r;
		int st;
		if (done != NULL && bsearch(&nm.v[i], done, ndone, sizeof(*done),
					    cmp_name) != NULL) {
			if (ctx->verbose)
				fprintf(stderr, "rebuild-audit: skipped '%s': %s holds "
					"its record for this snapshot\n", nm.v[i], records);
			continue;
		}
		rba_detail_clear(&d);
		err = audit_version(ctx->store, nm.v[i], &o, &r, &d);
		if (records != NULL && r.version != NULL &&
		    (err == 0 || err != RBA_E_NOTFOUND)) {
			/* What audit_version would have appended, as a file. */
			struct rba_detail wd;
			char path[FLEET_PATH_MAX + 600];
			int werr;
			rba_detail_clear(&wd);
			werr = fleet_record_write(&fw, &r, path, sizeof(path), &wd);
			if (werr) {
				cli_fail("cannot write the record of", nm.v[i], werr, &wd);
				status = 2;
			} else {
				r.recorded = 0;
				if (ctx->verbose)
					fprintf(stderr, "rebuild-audit: record '%s'\n", path);
			}
		}
		if (ctx->progress)
			fputs("\r\033[K", stderr);
		st = err ? 2 : r.exit_status;
		if (err)
			cli_fail(r.recorded || r.verdict == AUDIT_NOT_MEASURED
					 ? "cannot audit" : "cannot record the audit of",
				 nm.v[i], err, &d);
		if (st > status)
			status = st;
		if (r.version != NULL && (r.pins_text != NULL || r.verdict != AUDIT_NOT_MEASURED)) {
			if (any)
				rba_buf_put(&json, ", ", 2);
			audit_report_json(&r, &json);
			any = 1;
			if (!ctx->json && !(ctx->quiet && st == 0)) {
				print_report(ctx, &r);
				if (i + 1 < nm.n)
					putchar('\n');
			}
		}
		audit_report_release(&r);
	}
	rba_buf_printf(&json, "], \"exit_status\": %d}", status);
	if (ctx->json && !(ctx->quiet && status == 0)) {
		if (rba_buf_status(&json) != 0)
			status = cli_fail("cannot report", "audit", RBA_E_NOMEM, NULL);
		else
			cli_buf_print(&json);
	}
	rba_buf_release(&json);
	for (size_t i = 0; nm.v != NULL && i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	fleet_names_free(done, ndone);
	sign_seckey_free(key);
	policy_free(pol);
	return status;
}
