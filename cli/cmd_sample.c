/*
 * cmd_sample.c - sample add/show/export: past cases kept with their
 * stored scores and decisions.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "sample/sample.h"
#include "audit/sample_add.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "policy/policy.h"
#include "store/store.h"

/* Text from the file or the store (names, ids, levels, values), shown by
 * the escaping rule (cli_fput_data). */
static void
shown(const char *s)
{
	cli_put_data(stdout, s);
}

/* Exact (shortest round-trip) text: for the text report's scores. */
static const char *
num(double v, char out[32])
{
	rba_json_fmt_double(v, out);
	return out;
}

static void
add_progress(void *ctx, uint64_t cases, uint64_t bytes, uint64_t total)
{
	(void)ctx;
	if (total > 0) {
		if (bytes > total) /* the file grew while read */
			bytes = total;
		fprintf(stderr, "\rsample add: %3u%% of %llu bytes, %llu cases",
			(unsigned)(bytes * 100 / total),
			(unsigned long long)total, (unsigned long long)cases);
	} else {
		fprintf(stderr, "\rsample add: %llu bytes, %llu cases",
			(unsigned long long)bytes, (unsigned long long)cases);
	}
}

/* The options and operands of sample add into *rq and *policy_path:
 * 0, or the exit status of a usage error. */
static int
sample_add_args(struct cli_ctx *ctx, int argc, char **argv,
		struct sample_add_request *rq, const char **policy_path)
{
	static const struct option opts[] = {
		{ "id-column", required_argument, NULL, 'i' },
		{ "score-column", required_argument, NULL, 's' },
		{ "decision-column", required_argument, NULL, 'd' },
		{ "score-precision", required_argument, NULL, 'P' },
		{ "policy", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i': rq->id_column = optarg; break;
		case 's': rq->score_column = optarg; break;
		case 'd': rq->decision_column = optarg; break;
		case 'P':
			if (cli_parse_double(optarg, 0.0, SAMPLE_MAX_SCORE_PRECISION,
					     &rq->score_precision) != 0)
				return cli_usage(ctx, "--score-precision is a number "
						 "from 0 to 1");
			rq->has_score_precision = 1;
			break;
		case 'p': *policy_path = optarg; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cli_usage(ctx, "sample add needs a VERSION and a CASES.csv file");
	if (rq->decision_column && !rq->score_column)
		return cli_usage(ctx, "--decision-column needs --score-column");
	if (rq->has_score_precision && !rq->score_column)
		return cli_usage(ctx, "--score-precision needs --score-column");
	rq->version = argv[optind];
	rq->path = argv[optind + 1];
	return 0;
}

/* sample add --json: 0, or 2 after a diagnostic. */
static int
print_added_json(const struct sample_add_request *rq,
		 const struct sample_add_result *res)
{
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "version", rq->version);
	rba_json_w_u64(&w, "cases", res->cases);
	rba_json_w_u64(&w, "chunks", res->chunks);
	rba_json_w_u64(&w, "size", res->size);
	rba_json_w_u64(&w, "stored_size", res->stored_size);
	rba_json_w_digest(&w, "digest", &res->digest, 1);
	rba_json_w_digest(&w, "source_digest", &res->source_digest, 1);
	rba_json_w_u64(&w, "source_bytes", res->source_bytes);
	rba_json_w_str(&w, "scored_by", rq->score_column ? "column" : "model");
	rba_json_w_digest(&w, "artifact", &res->artifact, 1);
	rba_json_w_digest(&w, "policy", &res->policy_digest, 1);
	rba_json_w_str(&w, "policy_source",
		       res->policy_from_version ? "version" : "option");
	rba_json_w_open(&w, "decisions", '{');
	for (uint32_t i = 0; i < res->ndecisions; i++)
		rba_json_w_u64(&w, res->decisions[i], res->decision_counts[i]);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

static void
print_added_text(const struct sample_add_request *rq,
		 const struct sample_add_result *res)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1], a[RBA_DIGEST_TEXT_LEN + 1];
	char p[RBA_DIGEST_TEXT_LEN + 1], src[RBA_DIGEST_TEXT_LEN + 1];
	char sz[32], st[32];

	rba_digest_format(&res->digest, hex);
	rba_digest_format(&res->artifact, a);
	rba_digest_format(&res->policy_digest, p);
	rba_digest_format(&res->source_digest, src);
	cli_fmt_size(res->size, sz);
	cli_fmt_size(res->stored_size, st);
	fputs("sample of '", stdout);
	shown(rq->version);
	printf("': %llu cases in %u chunk%s (%s, %s stored)\n",
	       (unsigned long long)res->cases, res->chunks,
	       res->chunks == 1 ? "" : "s", sz, st);
	printf("digest     %s\n", hex);
	printf("source     %s (%llu bytes as submitted)\n", src,
	       (unsigned long long)res->source_bytes);
	if (rq->score_column) {
		fputs("scores     from column '", stdout);
		shown(rq->score_column);
		fputs("'", stdout);
		if (rq->decision_column) {
			fputs(", decisions from column '", stdout);
			shown(rq->decision_column);
			fputs("'", stdout);
		}
		putchar('\n');
	} else
		printf("scored by  the stored artifact %s\n", a);
	printf("policy     %s (%s)\n", p,
	       res->policy_from_version ? "the version's" : "--policy");
	printf("decisions ");
	for (uint32_t i = 0; i < res->ndecisions; i++) {
		fputs(i ? ", " : " ", stdout);
		shown(res->decisions[i]);
		printf(" %llu", (unsigned long long)res->decision_counts[i]);
	}
	putchar('\n');
}

static int
sample_add_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	struct sample_add_request rq;
	struct sample_add_result res;
	struct policy *pol = NULL;
	struct rba_detail d;
	const char *policy_path = NULL;
	int err;

	memset(&rq, 0, sizeof(rq));
	if ((err = sample_add_args(ctx, argc, argv, &rq, &policy_path)) != 0)
		return err;
	if (cli_policy_load(policy_path, &pol) != 0)
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
	err = 0;
	if (ctx->json)
		err = print_added_json(&rq, &res);
	else if (!ctx->quiet)
		print_added_text(&rq, &res);
	sample_add_result_release(&res);
	return err;
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

/* sample show VERSION --json: 0, or 2 after a diagnostic. */
static int
show_summary_json(const char *version, const struct store_sample_info *info,
		  const struct sample_layout *l, const struct counts *k)
{
	struct rba_buf b;
	struct rba_json_w w;
	char when[32];

	rba_time_utc(info->added, when);
	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "version", version);
	rba_json_w_u64(&w, "cases", info->cases);
	rba_json_w_u64(&w, "chunks", info->chunks);
	rba_json_w_u64(&w, "size", info->size);
	rba_json_w_u64(&w, "stored_size", info->stored_size);
	rba_json_w_digest(&w, "digest", &info->digest, 1);
	rba_json_w_str(&w, "added", when);
	rba_json_w_str(&w, "source", l->source);
	rba_json_w_digest(&w, "source_digest", &l->source_digest,
			  l->has_source_digest);
	rba_json_w_str(&w, "scored_by",
		       l->scored_by == SAMPLE_SCORED_COLUMN ? "column" : "model");
	rba_json_w_digest(&w, "artifact", &l->artifact, 1);
	rba_json_w_digest(&w, "policy", &info->policy_digest, info->has_policy);
	if (l->has_score_precision)
		rba_json_w_num(&w, "score_precision", l->score_precision);
	else
		rba_json_w_str(&w, "score_precision", NULL);
	rba_json_w_str(&w, "id_column", l->id_column);
	rba_json_w_open(&w, "columns", '[');
	for (uint32_t i = 0; i < l->ncols; i++)
		rba_json_w_str(&w, NULL, l->names[i]);
	rba_json_w_close(&w, ']');
	rba_json_w_open(&w, "classes", '[');
	for (uint32_t i = 0; i < l->nclasses; i++)
		rba_json_w_str(&w, NULL, l->classes[i]);
	rba_json_w_close(&w, ']');
	rba_json_w_open(&w, "decisions", '{');
	for (size_t i = 0; i < k->n; i++)
		rba_json_w_u64(&w, k->names[i], k->v[i]);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

static void
show_summary_text(struct cli_ctx *ctx, const char *version,
		  const struct store_sample_info *info,
		  const struct sample_layout *l, const struct counts *k)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1], when[32], sz[32], st[32];

	rba_digest_format(&info->digest, hex);
	rba_time_utc(info->added, when);
	cli_fmt_size(info->size, sz);
	cli_fmt_size(info->stored_size, st);
	fputs("version     ", stdout);
	shown(version);
	putchar('\n');
	printf("cases       %llu in %u chunk%s (%s, %s stored)\n",
	       (unsigned long long)info->cases, info->chunks,
	       info->chunks == 1 ? "" : "s", sz, st);
	printf("digest      %s\n", hex);
	printf("added       %s from ", when);
	shown(l->source);
	putchar('\n');
	if (l->has_source_digest) {
		rba_digest_format(&l->source_digest, hex);
		printf("source      %s (the file as submitted)\n", hex);
	} else {
		printf("source      digest not recorded (added by an older "
		       "rebuild-audit)\n");
	}
	if (l->scored_by == SAMPLE_SCORED_COLUMN) {
		char pv[RBA_JSON_NUM_MAX];
		fputs("scores      from column '", stdout);
		shown(l->score_column);
		fputs("', decisions ", stdout);
		if (l->decision_column) {
			fputs("from column '", stdout);
			shown(l->decision_column);
			fputs("'\n", stdout);
		} else {
			fputs("by the policy\n", stdout);
		}
		rba_json_fmt_double(l->score_precision, pv);
		printf("precision   %s\n",
		       l->has_score_precision ? pv
		       : "none declared: audits hold each score to the model's "
			 "bit for bit (binary32)");
	} else
		printf("scored by   the stored artifact %s\n",
		       cli_digest_short(&l->artifact, ctx->verbose, hex));
	if (info->has_policy)
		printf("policy      %s\n", cli_digest_short(&info->policy_digest, ctx->verbose, hex));
	if (l->id_column) {
		fputs("case ids    column '", stdout);
		shown(l->id_column);
		fputs("'\n", stdout);
	} else {
		fputs("case ids    data row numbers\n", stdout);
	}
	printf("columns     %u:", l->ncols);
	for (uint32_t i = 0; i < l->ncols; i++) {
		fputs(i ? ", " : " ", stdout);
		shown(l->names[i]);
	}
	printf("\nclasses    ");
	for (uint32_t i = 0; i < l->nclasses; i++) {
		fputs(i ? ", " : " ", stdout);
		shown(l->classes[i]);
	}
	if (l->positive != UINT32_MAX) {
		fputs(" (score: probability of ", stdout);
		shown(l->classes[l->positive]);
		putchar(')');
	}
	printf("\ndecisions  ");
	for (size_t i = 0; i < k->n; i++) {
		fputs(i ? ", " : " ", stdout);
		shown(k->names[i]);
		printf(" %llu", (unsigned long long)k->v[i]);
	}
	putchar('\n');
}

/* sample show VERSION: 0, or 2 after a diagnostic. */
static int
show_summary(struct cli_ctx *ctx, const char *version,
	     const struct store_sample_info *info, const struct sample_layout *l,
	     const struct counts *k)
{
	if (ctx->json)
		return show_summary_json(version, info, l, k);
	show_summary_text(ctx, version, info, l, k);
	return 0;
}

/* sample show VERSION CASE --json: 0, or 2 after a diagnostic. */
static int
show_case_json(const char *version, const struct sample_layout *l,
	       const struct sample_chunk *c, uint32_t i)
{
	const double *sv = c->scores + (size_t)i * c->nscores;
	struct rba_buf b;
	struct rba_json_w w;
	char tmp[32];

	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "version", version);
	rba_json_w_str(&w, "case", c->ids[i]);
	rba_json_w_open(&w, "scores", '[');
	for (uint32_t k = 0; k < c->nscores; k++)
		rba_json_w_num(&w, NULL, sv[k]); /* null unless finite */
	rba_json_w_close(&w, ']');
	rba_json_w_str(&w, "decision", c->decisions[c->decision_codes[i]]);
	rba_json_w_open(&w, "inputs", '{');
	for (uint32_t k = 0; k < l->ncols; k++)
		rba_json_w_str(&w, l->names[k], sample_chunk_text(c, k, i, tmp));
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/* sample show VERSION CASE: 0, or 2 after a diagnostic. */
static int
show_case(struct cli_ctx *ctx, const char *version,
	  const struct sample_layout *l, const struct sample_chunk *c,
	  uint32_t i)
{
	const double *sv = c->scores + (size_t)i * c->nscores;
	char tmp[32], n1[32];
	size_t w = 0;

	if (ctx->json)
		return show_case_json(version, l, c, i);
	fputs("case        ", stdout);
	shown(c->ids[i]);
	fputs(" (version ", stdout);
	shown(version);
	fputs(")\n", stdout);
	if (l->scored_by == SAMPLE_SCORED_COLUMN) {
		printf("score       %s (from column '", num(sv[0], n1));
		shown(l->score_column);
		fputs("')\n", stdout);
	} else if (l->positive != UINT32_MAX) {
		printf("score       %s (probability of ", num(sv[l->positive], n1));
		shown(l->classes[l->positive]);
		fputs(")\n", stdout);
	} else {
		for (uint32_t k = 0; k < c->nscores; k++) {
			fputs("p(", stdout);
			shown(l->classes[k]);
			printf(") %s\n", num(sv[k], n1));
		}
	}
	fputs("decision    ", stdout);
	shown(c->decisions[c->decision_codes[i]]);
	fputs("\ninputs\n", stdout);
	for (uint32_t k = 0; k < l->ncols; k++)
		if (cli_put_data(NULL, l->names[k]) > w)
			w = cli_put_data(NULL, l->names[k]);
	for (uint32_t k = 0; k < l->ncols; k++) {
		fputs("  ", stdout);
		cli_put_data_pad(stdout, l->names[k], w);
		fputs("  ", stdout);
		shown(sample_chunk_text(c, k, i, tmp));
		putchar('\n');
	}
	return 0;
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
	int err, status = 0;

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
			status = show_case(ctx, argv[1], &l, &c, idx);
	} else {
		err = sample_walk(txn, argv[1], &l, count_chunk, &k, &d);
		if (err == 0)
			status = show_summary(ctx, argv[1], &info, &l, &k);
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
	return status;
}

static int
sample_export_cmd(struct cli_ctx *ctx, int argc, char **argv)
{
	struct store_txn *txn;
	struct rba_output out = RBA_OUTPUT_INIT;
	struct rba_detail d;
	uint64_t cases = 0;
	const char *pos[2];
	int err, force;

	if ((err = cli_args_force(ctx, argc, argv, 2, pos, &force,
				  "sample export needs a VERSION and an OUT file")) != 0)
		return err;
	if ((err = cli_txn_begin(ctx, 0, 0, "cannot export sample", pos[0], &txn)))
		return err;
	rba_detail_clear(&d);
	if ((err = cli_output_open(pos[1], force, stdout, "cannot export sample",
				   pos[0], &out)) == 0)
		err = cli_output_finish(&out,
					sample_export_output(txn, pos[0], &out,
							     &cases, &d),
					"cannot export sample", pos[0], &d);
	store_txn_abort(txn);
	if (err)
		return err;
	if (strcmp(pos[1], "-") == 0)
		return 0;
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "version", pos[0]);
		rba_json_w_u64(&w, "cases", cases);
		rba_json_w_str(&w, "out", pos[1]);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	} else if (!ctx->quiet) {
		cli_diag("exported %llu cases of '%s' to '%s'",
			 (unsigned long long)cases, pos[0], pos[1]);
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
