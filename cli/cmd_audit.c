/*
 * cmd_audit.c - sample add/show/export, audit, dispute and history: the
 * commands that answer "would it decide the same today?".
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/dispute.h"
#include "audit/json.h"
#include "audit/sample.h"
#include "audit/sample_add.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "policy/policy.h"
#include "store/store.h"

#define SHOW_FLIPS 10 /* flipped cases a text report lists */

static int
load_policy(const char *path, struct policy **out)
{
	struct rba_detail d;
	int err;

	*out = NULL;
	if (path == NULL)
		return 0;
	rba_detail_clear(&d);
	err = policy_load(path, out, &d);
	if (err)
		return cli_fail("invalid policy", path, err, &d);
	return 0;
}

static void
put_buf(const struct rba_buf *b)
{
	fwrite(b->p, 1, b->len, stdout);
	fputc('\n', stdout);
}

/* Exact (shortest round-trip) text: for JSON and sample values. */
static const char *
num(double v, char out[32])
{
	json_fmt_double(v, out);
	return out;
}

/* Six significant digits: for the text reports. */
static const char *
g6(double v, char out[32])
{
	snprintf(out, 32, "%.6g", v);
	return out;
}

/* Shortened digest for text reports ("sha256:9aa79fa530cd86c7"). */
static const char *
short_digest(const struct rba_digest *dg, int verbose, char out[RBA_DIGEST_TEXT_LEN + 1])
{
	rba_digest_format(dg, out);
	if (!verbose)
		out[7 + 16] = 0;
	return out;
}

static void
fmt_size(uint64_t n, char out[32])
{
	if (n < 10240)
		snprintf(out, 32, "%llu B", (unsigned long long)n);
	else if (n < 10485760)
		snprintf(out, 32, "%.1f KiB", n / 1024.0);
	else
		snprintf(out, 32, "%.1f MiB", n / 1048576.0);
}

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

/* ---- sample ------------------------------------------------------------- */

static void
add_progress(void *ctx, uint64_t cases)
{
	(void)ctx;
	fprintf(stderr, "\rsample add: %llu cases", (unsigned long long)cases);
}

static int
sample_add_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id-column", required_argument, NULL, 'i' },
		{ "score-column", required_argument, NULL, 's' },
		{ "decision-column", required_argument, NULL, 'd' },
		{ "policy", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct sample_add_request rq;
	struct sample_add_result res;
	struct policy *pol = NULL;
	struct rba_detail d;
	const char *policy_path = NULL;
	char hex[RBA_DIGEST_TEXT_LEN + 1], a[RBA_DIGEST_TEXT_LEN + 1];
	char p[RBA_DIGEST_TEXT_LEN + 1], sz[32], st[32];
	int c, err;

	memset(&rq, 0, sizeof(rq));
	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i': rq.id_column = optarg; break;
		case 's': rq.score_column = optarg; break;
		case 'd': rq.decision_column = optarg; break;
		case 'p': policy_path = optarg; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cli_usage(ctx, "sample add needs a VERSION and a CASES.csv file");
	if (rq.decision_column && !rq.score_column)
		return cli_usage(ctx, "--decision-column needs --score-column");
	rq.version = argv[optind];
	rq.path = argv[optind + 1];
	if (load_policy(policy_path, &pol) != 0)
		return 2;
	rq.policy = pol;
	if (ctx->progress) {
		rq.progress = add_progress;
		rq.progress_ctx = NULL;
	}
	if ((err = cli_store_open(ctx, 0)) != 0) {
		policy_free(pol);
		return err;
	}
	rba_detail_clear(&d);
	err = sample_add(ctx->store, &rq, &res, &d);
	if (ctx->progress)
		fputs("\r\033[K", stderr);
	policy_free(pol);
	if (err)
		return cli_fail("cannot add sample", d.file[0] ? d.file : rq.version,
				err, &d);
	rba_digest_format(&res.digest, hex);
	rba_digest_format(&res.artifact, a);
	rba_digest_format(&res.policy_digest, p);
	if (ctx->json) {
		printf("{\"version\": ");
		cli_json_str(stdout, rq.version);
		printf(", \"cases\": %llu, \"chunks\": %u, \"size\": %llu, "
		       "\"stored_size\": %llu, \"digest\": \"%s\", \"scored_by\": \"%s\", "
		       "\"artifact\": \"%s\", \"policy\": \"%s\", \"policy_source\": \"%s\", "
		       "\"decisions\": {",
		       (unsigned long long)res.cases, res.chunks,
		       (unsigned long long)res.size, (unsigned long long)res.stored_size,
		       hex, rq.score_column ? "column" : "model", a, p,
		       res.policy_from_version ? "version" : "option");
		for (uint32_t i = 0; i < res.ndecisions; i++) {
			if (i)
				fputs(", ", stdout);
			cli_json_str(stdout, res.decisions[i]);
			printf(": %llu", (unsigned long long)res.decision_counts[i]);
		}
		fputs("}}\n", stdout);
	} else if (!ctx->quiet) {
		fmt_size(res.size, sz);
		fmt_size(res.stored_size, st);
		printf("sample of '%s': %llu cases in %u chunk%s (%s, %s stored)\n",
		       rq.version, (unsigned long long)res.cases, res.chunks,
		       res.chunks == 1 ? "" : "s", sz, st);
		printf("digest     %s\n", hex);
		if (rq.score_column)
			printf("scores     from column '%s'%s%s%s\n", rq.score_column,
			       rq.decision_column ? ", decisions from column '" : "",
			       rq.decision_column ? rq.decision_column : "",
			       rq.decision_column ? "'" : "");
		else
			printf("scored by  the stored artifact %s\n", a);
		printf("policy     %s (%s)\n", p,
		       res.policy_from_version ? "the version's" : "--policy");
		printf("decisions ");
		for (uint32_t i = 0; i < res.ndecisions; i++)
			printf("%s %s %llu", i ? "," : "", res.decisions[i],
			       (unsigned long long)res.decision_counts[i]);
		putchar('\n');
	}
	sample_add_result_release(&res);
	return 0;
}

struct counts {
	size_t n;
	char *names[64];
	uint64_t v[64];
};

static int
count_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct counts *k = ctx;

	(void)chunk_no;
	for (uint32_t i = 0; i < c->ncases; i++) {
		const char *dec = c->decisions[c->decision_codes[i]];
		size_t j;
		for (j = 0; j < k->n; j++)
			if (strcmp(k->names[j], dec) == 0)
				break;
		if (j == k->n) {
			if (k->n == 64)
				continue;
			if ((k->names[j] = strdup(dec)) == NULL)
				return RBA_E_NOMEM;
			k->v[j] = 0;
			k->n++;
		}
		k->v[j]++;
	}
	return 0;
}

static void
show_summary(struct cli_ctx *ctx, const char *version,
	     const struct store_sample_info *info, const struct sample_layout *l,
	     const struct counts *k)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1], when[32], sz[32], st[32];

	rba_digest_format(&info->digest, hex);
	cli_fmt_time(info->added, when);
	if (ctx->json) {
		printf("{\"version\": ");
		cli_json_str(stdout, version);
		printf(", \"cases\": %llu, \"chunks\": %u, \"size\": %llu, "
		       "\"stored_size\": %llu, \"digest\": \"%s\", \"added\": \"%s\", "
		       "\"source\": ",
		       (unsigned long long)info->cases, info->chunks,
		       (unsigned long long)info->size,
		       (unsigned long long)info->stored_size, hex, when);
		cli_json_str(stdout, l->source);
		printf(", \"scored_by\": \"%s\", \"artifact\": ",
		       l->scored_by == SAMPLE_SCORED_COLUMN ? "column" : "model");
		rba_digest_format(&l->artifact, hex);
		printf("\"%s\", \"policy\": ", hex);
		if (info->has_policy) {
			rba_digest_format(&info->policy_digest, hex);
			printf("\"%s\"", hex);
		} else {
			fputs("null", stdout);
		}
		fputs(", \"id_column\": ", stdout);
		if (l->id_column)
			cli_json_str(stdout, l->id_column);
		else
			fputs("null", stdout);
		fputs(", \"columns\": [", stdout);
		for (uint32_t i = 0; i < l->ncols; i++) {
			if (i)
				fputs(", ", stdout);
			cli_json_str(stdout, l->names[i]);
		}
		fputs("], \"classes\": [", stdout);
		for (uint32_t i = 0; i < l->nclasses; i++) {
			if (i)
				fputs(", ", stdout);
			cli_json_str(stdout, l->classes[i]);
		}
		fputs("], \"decisions\": {", stdout);
		for (size_t i = 0; i < k->n; i++) {
			if (i)
				fputs(", ", stdout);
			cli_json_str(stdout, k->names[i]);
			printf(": %llu", (unsigned long long)k->v[i]);
		}
		fputs("}}\n", stdout);
		return;
	}
	fmt_size(info->size, sz);
	fmt_size(info->stored_size, st);
	printf("version     %s\n", version);
	printf("cases       %llu in %u chunk%s (%s, %s stored)\n",
	       (unsigned long long)info->cases, info->chunks,
	       info->chunks == 1 ? "" : "s", sz, st);
	printf("digest      %s\n", hex);
	printf("added       %s from %s\n", when, l->source);
	if (l->scored_by == SAMPLE_SCORED_COLUMN)
		printf("scores      from column '%s', decisions %s%s%s\n",
		       l->score_column,
		       l->decision_column ? "from column '" : "by the policy",
		       l->decision_column ? l->decision_column : "",
		       l->decision_column ? "'" : "");
	else
		printf("scored by   the stored artifact %s\n",
		       short_digest(&l->artifact, ctx->verbose, hex));
	if (info->has_policy)
		printf("policy      %s\n", short_digest(&info->policy_digest, ctx->verbose, hex));
	printf("case ids    %s%s%s\n", l->id_column ? "column '" : "data row numbers",
	       l->id_column ? l->id_column : "", l->id_column ? "'" : "");
	printf("columns     %u:", l->ncols);
	for (uint32_t i = 0; i < l->ncols; i++)
		printf("%s %s", i ? "," : "", l->names[i]);
	printf("\nclasses    ");
	for (uint32_t i = 0; i < l->nclasses; i++)
		printf("%s %s", i ? "," : "", l->classes[i]);
	if (l->positive != UINT32_MAX)
		printf(" (score: probability of %s)", l->classes[l->positive]);
	printf("\ndecisions  ");
	for (size_t i = 0; i < k->n; i++)
		printf("%s %s %llu", i ? "," : "", k->names[i], (unsigned long long)k->v[i]);
	putchar('\n');
}

static void
show_case(struct cli_ctx *ctx, const char *version,
	  const struct sample_layout *l, const struct sample_chunk *c,
	  uint32_t i)
{
	const double *sv = c->scores + (size_t)i * c->nscores;
	char tmp[32], n1[32];
	size_t w = 0;

	if (ctx->json) {
		printf("{\"version\": ");
		cli_json_str(stdout, version);
		fputs(", \"case\": ", stdout);
		cli_json_str(stdout, c->ids[i]);
		fputs(", \"scores\": [", stdout);
		for (uint32_t k = 0; k < c->nscores; k++)
			printf("%s%s", k ? ", " : "", num(sv[k], n1));
		fputs("], \"decision\": ", stdout);
		cli_json_str(stdout, c->decisions[c->decision_codes[i]]);
		fputs(", \"inputs\": {", stdout);
		for (uint32_t k = 0; k < l->ncols; k++) {
			if (k)
				fputs(", ", stdout);
			cli_json_str(stdout, l->names[k]);
			fputs(": ", stdout);
			cli_json_str(stdout, sample_chunk_text(c, k, i, tmp));
		}
		fputs("}}\n", stdout);
		return;
	}
	printf("case        %s (version %s)\n", c->ids[i], version);
	if (l->scored_by == SAMPLE_SCORED_COLUMN)
		printf("score       %s (from column '%s')\n", num(sv[0], n1),
		       l->score_column);
	else if (l->positive != UINT32_MAX)
		printf("score       %s (probability of %s)\n",
		       num(sv[l->positive], n1), l->classes[l->positive]);
	else
		for (uint32_t k = 0; k < c->nscores; k++)
			printf("p(%s)%*s %s\n", l->classes[k], 0, "", num(sv[k], n1));
	printf("decision    %s\ninputs\n", c->decisions[c->decision_codes[i]]);
	for (uint32_t k = 0; k < l->ncols; k++)
		if (strlen(l->names[k]) > w)
			w = strlen(l->names[k]);
	for (uint32_t k = 0; k < l->ncols; k++)
		printf("  %-*s  %s\n", (int)w, l->names[k], sample_chunk_text(c, k, i, tmp));
}

static int
sample_show_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_txn *txn;
	struct store_sample_info info;
	struct sample_layout l;
	struct sample_chunk c;
	struct counts k;
	struct rba_detail d;
	uint8_t *raw = NULL;
	uint32_t idx;
	int err;

	if (argc != 2 && argc != 3)
		return cli_usage(ctx, "sample show needs a VERSION and optionally a CASE");
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot show sample", argv[1], &txn)))
		return err;
	rba_detail_clear(&d);
	memset(&k, 0, sizeof(k));
	sample_chunk_init(&c);
	err = sample_layout_load(txn, argv[1], &info, &l, &d);
	if (err) {
		store_txn_abort(txn);
		return cli_fail("cannot show sample", argv[1], err, &d);
	}
	if (argc == 3) {
		err = sample_case_load(txn, argv[1], &l, argv[2], &raw, &c, &idx, &d);
		if (err == 0)
			show_case(ctx, argv[1], &l, &c, idx);
	} else {
		err = sample_walk(txn, argv[1], &l, count_chunk, &k, &d);
		if (err == 0)
			show_summary(ctx, argv[1], &info, &l, &k);
	}
	store_txn_abort(txn);
	for (size_t i = 0; i < k.n; i++)
		free(k.names[i]);
	free(raw);
	sample_chunk_release(&c);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	if (err)
		return cli_fail("cannot show sample", argc == 3 ? argv[2] : argv[1],
				err, &d);
	return 0;
}

static int
sample_export_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_txn *txn;
	struct rba_detail d;
	uint64_t cases = 0;
	int err;

	if (argc != 3)
		return cli_usage(ctx, "sample export needs a VERSION and an OUT file");
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot export sample", argv[1], &txn)))
		return err;
	rba_detail_clear(&d);
	err = sample_export(txn, argv[1], argv[2], stdout, &cases, &d);
	store_txn_abort(txn);
	if (err)
		return cli_fail("cannot export sample", argv[1], err, &d);
	if (strcmp(argv[2], "-") == 0)
		return 0;
	if (ctx->json) {
		fputs("{\"version\": ", stdout);
		cli_json_str(stdout, argv[1]);
		printf(", \"cases\": %llu, \"out\": ", (unsigned long long)cases);
		cli_json_str(stdout, argv[2]);
		fputs("}\n", stdout);
	} else if (!ctx->quiet) {
		fprintf(stderr, "rebuild-audit: exported %llu cases of '%s' to '%s'\n",
			(unsigned long long)cases, argv[1], argv[2]);
	}
	return 0;
}

int
cmd_sample(struct cli_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return cli_usage(ctx, "sample needs a subcommand (add, show, export)");
	if (strcmp(argv[1], "add") == 0)
		return sample_add_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return sample_show_cmd(ctx, argc - 1, argv + 1);
	if (strcmp(argv[1], "export") == 0)
		return sample_export_cmd(ctx, argc - 1, argv + 1);
	return cli_usage(ctx, "unknown subcommand '%s'", argv[1]);
}

/* ---- audit -------------------------------------------------------------- */

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
		printf("artifact      pinned  %s\n", short_digest(&r->artifact_pinned, ctx->verbose, a));
		printf("              rebuilt %s%s\n", short_digest(&r->artifact_rebuilt, ctx->verbose, b),
		       rba_digest_equal(&r->artifact_pinned, &r->artifact_rebuilt)
			       ? "  (identical)" : "  (differs)");
	}
	if (r->sample_verified) {
		printf("sample        %llu cases, %llu flip%s, max score delta %s",
		       (unsigned long long)r->cases, (unsigned long long)r->flips,
		       r->flips == 1 ? "" : "s", g6(r->max_delta, n1));
		if (r->max_delta > 0 && r->max_delta_case)
			printf(" (case %s)", r->max_delta_case);
		putchar('\n');
		printf("near edges    %llu within the margin, %llu within ten margins\n",
		       (unsigned long long)r->near_cases,
		       (unsigned long long)r->weak_band_cases);
	}
	if (r->policy_text)
		printf("policy        %s (%s)\n", short_digest(&r->policy_digest, ctx->verbose, a),
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
			printf("  %-12s %-22s %-22s %s", f->id, s1, s2, g6(f->margin, n1));
			if (!isnan(f->edge))
				printf(" (edge %s)", g6(f->edge, n2));
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
	int quiet;
};

static int
with_sample(void *ctx, const struct store_version *v)
{
	struct names *nm = ctx;
	char **nv;

	if (!v->has_sample) {
		/* Said once per run: a version nobody can audit is a gap. */
		if (!nm->quiet)
			cli_warn("version '%s' has no audit sample: not audited", v->name);
		return 0;
	}
	if (nm->n == nm->cap) {
		nm->cap = nm->cap ? nm->cap * 2 : 8;
		nv = realloc(nm->v, nm->cap * sizeof(char *));
		if (nv == NULL)
			return RBA_E_NOMEM;
		nm->v = nv;
	}
	if ((nm->v[nm->n] = strdup(v->name)) == NULL)
		return RBA_E_NOMEM;
	nm->n++;
	return 0;
}

int
cmd_audit(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "policy", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
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
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 'p': policy_path = optarg; break;
		case 't':
			if (parse_threads(ctx, optarg, &o.threads) != 0)
				return 2;
			break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (all == (optind < argc))
		return cli_usage(ctx, all ? "--all takes no VERSION"
					  : "audit needs a VERSION or --all");
	if (load_policy(policy_path, &pol) != 0)
		return 2;
	o.policy = pol;
	if (ctx->progress) {
		o.progress = audit_progress;
		o.progress_ctx = NULL;
	}
	if ((err = cli_store_open(ctx, 0)) != 0) {
		policy_free(pol);
		return err;
	}
	rba_detail_clear(&d);
	if (all) {
		struct store_txn *txn;
		if ((err = cli_txn_begin(ctx, 0, 0, "cannot list versions",
					 ctx->store_path, &txn)) != 0) {
			policy_free(pol);
			return err;
		}
		nm.quiet = ctx->quiet;
		err = store_version_list(txn, with_sample, &nm, &d);
		store_txn_abort(txn);
		if (err) {
			policy_free(pol);
			return cli_fail("cannot list versions", ctx->store_path, err, &d);
		}
		if (nm.n == 0) {
			policy_free(pol);
			fprintf(stderr, "rebuild-audit: nothing to audit '%s': no version "
				"has an audit sample\n", ctx->store_path);
			return 2;
		}
	} else {
		nm.n = (size_t)(argc - optind);
		nm.v = calloc(nm.n, sizeof(char *));
		for (size_t i = 0; nm.v != NULL && i < nm.n; i++)
			nm.v[i] = strdup(argv[optind + (int)i]);
	}
	rba_buf_init(&json);
	rba_buf_printf(&json, "{\"schema\": \"rebuild-audit/audit-run/v1\", \"audits\": [");
	for (size_t i = 0; nm.v != NULL && i < nm.n; i++) {
		struct audit_report r;
		int st;
		rba_detail_clear(&d);
		err = audit_version(ctx->store, nm.v[i], &o, &r, &d);
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
			put_buf(&json);
	}
	rba_buf_release(&json);
	for (size_t i = 0; nm.v != NULL && i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	policy_free(pol);
	return status;
}

/* ---- dispute ------------------------------------------------------------ */

int
cmd_dispute(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "show-inputs", no_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	struct dispute_report r;
	struct policy *pol = NULL;
	struct rba_detail d;
	const char *policy_path = NULL;
	char a[RBA_DIGEST_TEXT_LEN + 1], b[RBA_DIGEST_TEXT_LEN + 1], n1[32], n2[32];
	int c, inputs = 0, err;

	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': policy_path = optarg; break;
		case 'i': inputs = 1; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cli_usage(ctx, "dispute needs a VERSION and a CASE");
	if (load_policy(policy_path, &pol) != 0)
		return 2;
	if ((err = cli_store_open(ctx, 1)) != 0) {
		policy_free(pol);
		return err;
	}
	rba_detail_clear(&d);
	err = audit_dispute(ctx->store, argv[optind], argv[optind + 1], pol, &r, &d);
	policy_free(pol);
	if (err) {
		dispute_report_release(&r);
		return cli_fail("cannot answer the dispute of",
				d.key[0] && err == RBA_E_NOTFOUND ? d.key : argv[optind],
				err, &d);
	}
	if (ctx->json) {
		struct rba_buf j;
		rba_buf_init(&j);
		dispute_report_json(&r, inputs, &j);
		if (rba_buf_status(&j) == 0)
			put_buf(&j);
		rba_buf_release(&j);
	} else if (ctx->quiet && r.answer == DISPUTE_STANDS) {
		/* -q: no report when the answer is yes; exit 0 says it */
	} else {
		printf("dispute     case %s of version %s\n", r.case_id, r.version);
		if (inputs) {
			size_t w = 0;
			for (uint32_t k = 0; k < r.ncols; k++)
				if (strlen(r.names[k]) > w)
					w = strlen(r.names[k]);
			printf("inputs\n");
			for (uint32_t k = 0; k < r.ncols; k++)
				printf("  %-*s  %s\n", (int)w, r.names[k], r.values[k]);
		}
		printf("stored      score %s, decision %s\n", g6(r.stored_score, n1),
		       r.stored_decision);
		printf("rebuilt     score %s, decision %s\n", g6(r.rebuilt_score, n1),
		       r.rebuilt_decision ? r.rebuilt_decision : "(none)");
		if (!isnan(r.edge))
			printf("threshold   stored score %s %s the band edge %s (margin %s)\n",
			       g6(r.stored_score, n1),
			       r.stored_score < r.edge ? "below" : "at or above",
			       g6(r.edge, n2), g6(r.margin, a));
		else if (isfinite(r.margin))
			printf("threshold   margin %s (half the gap between the top two "
			       "classes)\n", g6(r.margin, n1));
		printf("version     %s: %s\n", audit_verdict_name(r.verdict),
		       r.verdict_basis ? r.verdict_basis : "");
		printf("artifact    pinned %s, rebuilt %s\n",
		       short_digest(&r.artifact_pinned, ctx->verbose, a),
		       short_digest(&r.artifact_rebuilt, ctx->verbose, b));
		printf("policy      %s\n", short_digest(&r.policy_digest, ctx->verbose, a));
		for (size_t i = 1; i < r.nreasons; i++)
			printf("also        %s\n", r.reasons[i]);
		printf("%s\n", r.answer_line);
	}
	err = r.answer == DISPUTE_STANDS ? 0 : 1;
	dispute_report_release(&r);
	return err;
}

/* ---- history ------------------------------------------------------------ */

struct hist {
	struct cli_ctx *ctx;
	size_t n;
};

static int
hist_one(void *vctx, const struct store_history_entry *e)
{
	struct hist *h = vctx;
	struct json_value root;
	char when[32], prev[RBA_DIGEST_TEXT_LEN + 1], dg[RBA_DIGEST_TEXT_LEN + 1];
	int parsed = json_parse((const char *)e->record, e->len, &root, NULL) == 0;

	cli_fmt_time(e->time, when);
	if (h->ctx->json) {
		rba_digest_format(&e->prev, prev);
		rba_digest_format(&e->digest, dg);
		printf("%s{\"id\": %llu, \"time\": \"%s\", \"version\": ",
		       h->n ? ",\n " : "", (unsigned long long)e->id, when);
		cli_json_str(stdout, e->version);
		printf(", \"prev\": \"%s\", \"digest\": \"%s\", \"record\": ", prev, dg);
		if (parsed) {
			fwrite(e->record, 1, e->len, stdout);
		} else {
			/* Not this tool's JSON: shown as text, never as JSON. */
			char *t = strndup((const char *)e->record, e->len);
			cli_json_str(stdout, t ? t : "");
			free(t);
		}
		fputc('}', stdout);
	} else {
		const struct json_value *s = parsed ? json_get(&root, "sample") : NULL;
		const char *v = parsed ? json_get_str(&root, "verdict") : NULL;
		char n1[32];
		if (h->n == 0)
			printf("%-6s %-20s  %-24s %-18s %8s %8s  %s\n", "ID", "TIME",
			       "VERSION", "VERDICT", "CASES", "FLIPS", "MAX DELTA");
		double cases = json_get_num(s, "cases", NAN);
		double flips = json_get_num(s, "flips", NAN);
		double delta = json_get_num(s, "max_score_delta", NAN);
		int measured = v != NULL && strcmp(v, "not-measured") != 0;
		char c1[32] = "-", c2[32] = "-";
		if (measured && isfinite(cases))
			snprintf(c1, sizeof(c1), "%.0f", cases);
		if (measured && isfinite(flips))
			snprintf(c2, sizeof(c2), "%.0f", flips);
		printf("%-6llu %-20s  %-24s %-18s %8s %8s  %s\n",
		       (unsigned long long)e->id, when, e->version, v ? v : "?", c1, c2,
		       measured && isfinite(delta) ? g6(delta, n1) : "-");
	}
	if (parsed)
		json_release(&root);
	h->n++;
	return 0;
}

int
cmd_history(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verify", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct store_txn *txn;
	struct rba_detail d;
	struct hist h = { ctx, 0 };
	const char *version = NULL;
	int c, verify = 0, err;

	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'v': verify = 1; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (argc - optind > 1 || (verify && argc - optind == 1))
		return cli_usage(ctx, verify ? "--verify checks the whole history: no VERSION"
					     : "history takes at most one VERSION");
	if (argc - optind == 1)
		version = argv[optind];
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot read history", ctx->store_path,
				 &txn)) != 0)
		return err;
	rba_detail_clear(&d);
	if (verify) {
		uint64_t bad = 0, count = 0;
		err = store_history_verify(txn, &bad, &count, &d);
		store_txn_abort(txn);
		if (err == RBA_E_TAMPERED) {
			if (ctx->json) {
				printf("{\"intact\": false, \"records\": %llu, "
				       "\"first_bad\": %llu, \"reason\": ",
				       (unsigned long long)count, (unsigned long long)bad);
				cli_json_str(stdout, d.reason);
				fputs("}\n", stdout);
			} else {
				printf("history broken at record %llu: %s\n",
				       (unsigned long long)bad, d.reason);
			}
			return 1;
		}
		if (err)
			return cli_fail("cannot verify history", ctx->store_path, err, &d);
		if (ctx->json)
			printf("{\"intact\": true, \"records\": %llu, \"first_bad\": null}\n",
			       (unsigned long long)count);
		else if (!ctx->quiet)
			printf("history intact: %llu record%s\n", (unsigned long long)count,
			       count == 1 ? "" : "s");
		return 0;
	}
	if (ctx->json)
		fputc('[', stdout);
	err = store_history_list(txn, version, 1, hist_one, &h, &d);
	store_txn_abort(txn);
	if (ctx->json)
		fputs("]\n", stdout);
	if (err)
		return cli_fail("cannot read history", version ? version : ctx->store_path,
				err, &d);
	if (h.n == 0 && !ctx->json && !ctx->quiet)
		printf("no audits recorded%s%s\n", version ? " for " : "",
		       version ? version : "");
	return 0;
}
