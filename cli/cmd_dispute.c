/*
 * cmd_dispute.c - dispute: answer a disputed decision (it stands, or
 * escalate).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "evidence/dispute_evidence.h"
#include "evidence/evidence.h"
#include "common/sign.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "policy/policy.h"
#include "model/explain.h"

/*
 * Text that came from data (the case's inputs, stored decisions, the
 * reasons that quote them) is written through cli_fput_data: a value
 * holding CR, LF or an escape sequence cannot draw a line of its own.
 */
static size_t
put(const char *s)
{
	return s == NULL ? 0 : cli_fput_data(stdout, s, strlen(s));
}

/* The width put would give s. */
static size_t
width(const char *s)
{
	return s == NULL ? 0 : cli_fput_data(NULL, s, strlen(s));
}

static void
pad(size_t have, size_t want)
{
	for (; have < want; have++)
		putchar(' ');
}

/* A line: head, then the data text s, then a newline. */
static void
put_line(const char *head, const char *s)
{
	fputs(head, stdout);
	put(s);
	putchar('\n');
}

/*
 * A reason's value: the case's text, or "missing" for a missing value
 * of the model ("missing (NA)" when the token is not the empty field).
 */
static size_t
put_value(const struct dispute_explanation *e, uint32_t k)
{
	size_t l;

	if (e->missing == NULL || !e->missing[k])
		return put(e->values[k]);
	fputs("missing", stdout);
	if (e->values[k][0] == 0)
		return 7;
	fputs(" (", stdout);
	l = put(e->values[k]);
	fputs(")", stdout);
	return 10 + l;
}

static size_t
value_width(const struct dispute_explanation *e, uint32_t k)
{
	if (e->missing == NULL || !e->missing[k])
		return width(e->values[k]);
	return e->values[k][0] == 0 ? 7 : 10 + width(e->values[k]);
}

/* The reasons block of the text answer. */
static void
print_reasons(const struct dispute_explanation *e, int verbose)
{
	char n1[32], n2[32], n3[32], dg[RBA_DIGEST_TEXT_LEN + 1], how[160];
	size_t w = 0;

	if (!e->ok) {
		put_line("reasons     none: ", e->error ? e->error : "not computed");
		return;
	}
	if (e->accuracy == EXPLAIN_APPROXIMATE) {
		/* an estimate says so, with its bound (model/explain.h) */
		dispute_bound_text(e->error_bound, n1);
		snprintf(how, sizeof(how), "approximate Shapley values, error bound "
			 "%s per contribution (%llu permutation pairs)", n1,
			 (unsigned long long)e->samples);
	} else {
		snprintf(how, sizeof(how), "%s",
			 e->method == EXPLAIN_LINEAR ? "coefficient times distance "
						       "from the training mean"
			 : e->method == EXPLAIN_TREESHAP ? "exact path-dependent TreeSHAP"
							 : "exact Shapley values");
	}
	fputs("reasons     ", stdout);
	put(e->space);
	printf(" by %s, from %s (%s)\n", how, e->source,
	       cli_digest_short(&e->artifact, verbose, dg));
	for (uint32_t i = 0; i < e->ntop; i++) {
		size_t l = width(e->cols[e->top[i]]) + value_width(e, e->top[i]) + 3;
		if (l > w)
			w = l;
	}
	for (uint32_t i = 0; i < e->ntop; i++) {
		uint32_t k = e->top[i];
		size_t l;
		printf("  %u. ", i + 1);
		l = put(e->cols[k]);
		fputs(" = ", stdout);
		l += 3 + put_value(e, k);
		pad(l, w);
		printf("  %+.6f", e->contrib[k]);
		/* the policy's statement beside the column, or the column's
		 * name standing in for it */
		if (e->has_statements) {
			fputs("  ", stdout);
			if (e->statements[k] != NULL)
				put(e->statements[k]);
			else {
				fputs("(no statement: ", stdout);
				put(e->cols[k]);
				fputs(")", stdout);
			}
		}
		putchar('\n');
	}
	if (e->ntop == 0)
		printf("  (no input moved the score toward the decision)\n");
	/* a level the model never saw: where it went */
	for (uint32_t k = 0; e->unseen != NULL && k < e->ncols; k++) {
		char *where;

		if (!e->unseen[k])
			continue;
		fputs("unseen      ", stdout);
		put(e->cols[k]);
		fputs(" = ", stdout);
		put(e->values[k]);
		fputs(": a level not seen in training; ", stdout);
		where = dispute_unseen_where(e->cols[k], e->unseen_splits[k],
					     e->unseen_trees[k], e->forest_trees);
		put(where != NULL ? where : "(out of memory)");
		free(where);
		printf(" (contribution %+.6f)\n", e->contrib[k]);
	}
	printf("check       baseline %s + %u contributions = %s, the case's ",
	       cli_fmt_g6(e->baseline, n1), e->ncols, cli_fmt_g6(e->sum, n2));
	put(e->space);
	printf(" %s (%s, tolerance %g)\n", cli_fmt_g6(e->margin, n3),
	       e->sum_ok ? "agrees" : "DISAGREES", EXPLAIN_TOLERANCE);
	if (e->has_score_check)
		printf("check       the log-odds give the score %s; the %s score is %s "
		       "(%s, tolerance %g)\n",
		       cli_fmt_g6(e->score_prob, n1),
		       e->score_of,
		       cli_fmt_g6(e->score, n2), e->score_ok ? "agrees" : "DISAGREES",
		       DISPUTE_SCORE_TOLERANCE);
}

/* What dispute was asked (dispute_parse). */
struct dispute_args {
	const char *version, *case_id;
	const char *keypath, *outpath, *passfile, *policy_path;
	int do_export, inputs;
	struct dispute_options o;
};

/* argv into *a; 0, or 2 after a usage diagnostic. */
static int
dispute_parse(struct cli_ctx *ctx, int argc, char **argv, struct dispute_args *a)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "show-inputs", no_argument, NULL, 'i' },
		{ "reasons", required_argument, NULL, 'n' },
		{ "rebuild", no_argument, NULL, 'r' },
		{ "export", no_argument, NULL, 'e' },
		{ "passphrase-file", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t nr;
	int c;

	a->o.nreasons = DISPUTE_REASONS_DEFAULT;
	optind = 0;
	opterr = 0; /* cli_usage says what was wrong, in one line */
	while ((c = getopt_long(argc, argv, "k:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'p': a->policy_path = optarg; break;
		case 'i': a->inputs = 1; break;
		case 'n':
			if (cli_parse_u64(optarg, DISPUTE_REASONS_MAX, &nr) != 0)
				return cli_usage(ctx, "--reasons needs a count from 0 "
						 "to %d, not '%s'", DISPUTE_REASONS_MAX,
						 optarg);
			a->o.nreasons = (uint32_t)nr;
			break;
		case 'r': a->o.rebuild = 1; break;
		case 'e': a->do_export = 1; break;
		case 'k': a->keypath = optarg; break;
		case 'o': a->outpath = optarg; break;
		case 'P': a->passfile = optarg; break;
		default:
			return cli_usage(ctx, "unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cli_usage(ctx, "dispute needs a VERSION and a CASE");
	if (a->do_export && (a->keypath == NULL || a->outpath == NULL ||
			     !a->outpath[0]))
		return cli_usage(ctx, "--export needs -k KEY and -o FILE");
	if (!a->do_export && (a->keypath != NULL || a->outpath != NULL ||
			      a->passfile != NULL))
		return cli_usage(ctx, "-k, -o and --passphrase-file go with --export");
	a->version = argv[optind];
	a->case_id = argv[optind + 1];
	return 0;
}

/* The text answer. */
static void
print_answer(struct cli_ctx *ctx, const struct dispute_args *a,
	     const struct dispute_report *r)
{
	char d1[RBA_DIGEST_TEXT_LEN + 1], d2[RBA_DIGEST_TEXT_LEN + 1];
	char n1[32], n2[32], n3[32];

	fputs("dispute     case ", stdout);
	put(r->case_id);
	put_line(" of version ", r->version);
	if (a->inputs) {
		size_t w = 0;
		for (uint32_t k = 0; k < r->ncols; k++)
			if (width(r->names[k]) > w)
				w = width(r->names[k]);
		printf("inputs\n");
		for (uint32_t k = 0; k < r->ncols; k++) {
			int miss = 0, unseen = 0;
			fputs("  ", stdout);
			pad(put(r->names[k]), w);
			for (uint32_t j = 0; r->why.ok && r->why.missing != NULL &&
					     j < r->why.ncols; j++)
				if (strcmp(r->why.cols[j], r->names[k]) == 0) {
					miss = r->why.missing[j];
					unseen = r->why.unseen[j];
				}
			if (unseen) {
				fputs("  ", stdout);
				put(r->values[k]);
				puts(" (a level not seen in training)");
			} else if (miss && r->values[k][0] == 0)
				put_line("  ", "missing");
			else if (miss) {
				fputs("  missing (", stdout);
				put(r->values[k]);
				puts(")");
			} else
				put_line("  ", r->values[k]);
		}
	}
	printf("stored      score %s, decision ", cli_fmt_g6(r->stored_score, n1));
	put_line("", r->stored_decision);
	printf("rebuilt     score %s, decision ", cli_fmt_g6(r->rebuilt_score, n1));
	put_line("", r->rebuilt_decision ? r->rebuilt_decision : "(none)");
	if (!isnan(r->edge))
		printf("threshold   stored score %s %s the band edge %s (margin %s)\n",
		       cli_fmt_g6(r->stored_score, n1),
		       r->stored_score < r->edge ? "below" : "at or above",
		       cli_fmt_g6(r->edge, n2), cli_fmt_g6(r->margin, n3));
	else if (isfinite(r->margin))
		printf("threshold   margin %s (half the gap between the top two "
		       "classes)\n", cli_fmt_g6(r->margin, n1));
	printf("version     %s: ", audit_verdict_name(r->verdict));
	put_line("", r->verdict_basis ? r->verdict_basis : "");
	if (r->rebuilt)
		printf("artifact    pinned %s, rebuilt %s\n",
		       cli_digest_short(&r->artifact_pinned, ctx->verbose, d1),
		       cli_digest_short(&r->artifact_rebuilt, ctx->verbose, d2));
	else
		printf("artifact    pinned %s, scored as stored: no retrain, "
		       "audit record %llu proves it\n",
		       cli_digest_short(&r->artifact_pinned, ctx->verbose, d1),
		       (unsigned long long)r->proof_audit);
	if (r->rebuilt && r->rebuild_why != NULL && ctx->verbose)
		put_line("retrained   ", r->rebuild_why);
	printf("decided by  %s%s\n",
	       cli_digest_short(&r->artifact_decisions, ctx->verbose, d1),
	       !rba_digest_equal(&r->artifact_decisions, &r->artifact_rebuilt)
		       ? r->rebuilt ? " (another artifact than the rebuilt one)"
				    : " (another artifact than the stored one)"
		       : r->rebuilt ? " (the rebuilt artifact)"
				    : " (the stored artifact)");
	if (r->contradiction != NULL)
		put_line("warning: ", r->contradiction);
	printf("policy      %s\n", cli_digest_short(&r->policy_digest, ctx->verbose, d1));
	print_reasons(&r->why, ctx->verbose);
	for (size_t i = 1; i < r->nreasons; i++)
		put_line("also        ", r->reasons[i]);
	if (a->do_export) {
		fputs("exported    ", stdout);
		put(a->outpath);
		fputs(", signed in ", stdout);
		put(a->outpath);
		put_line(EVIDENCE_SIG_SUFFIX, "");
	}
	put_line("", r->answer_line);
}

int
cmd_dispute(struct cli_ctx *ctx, int argc, char **argv)
{
	struct dispute_args a;
	struct sign_seckey *key = NULL;
	struct dispute_report r;
	struct policy *pol = NULL;
	struct rba_detail d;
	int err;

	memset(&a, 0, sizeof(a));
	if ((err = dispute_parse(ctx, argc, argv, &a)) != 0)
		return err;
	/* The key first: a wrong passphrase costs no rebuild. */
	if (a.do_export &&
	    (err = cli_seckey_load(a.keypath, a.passfile, &key)) != 0)
		return err;
	if (cli_policy_load(a.policy_path, &pol) != 0) {
		sign_seckey_free(key);
		return 2;
	}
	if ((err = cli_store_open(ctx, 1)) != 0) {
		policy_free(pol);
		sign_seckey_free(key);
		return err;
	}
	rba_detail_clear(&d);
	err = audit_dispute(ctx->store, a.version, a.case_id, pol, &a.o, &r, &d);
	policy_free(pol);
	if (err == 0 && a.do_export &&
	    (err = dispute_evidence_export(&r, key, a.outpath, &d)) != 0) {
		sign_seckey_free(key);
		dispute_report_release(&r);
		return cli_fail("cannot export the dispute to", a.outpath, err, &d);
	}
	sign_seckey_free(key);
	if (err) {
		dispute_report_release(&r);
		return cli_fail("cannot answer the dispute of",
				d.key[0] && err == RBA_E_NOTFOUND ? d.key : a.version,
				err, &d);
	}
	if (ctx->json) {
		struct rba_buf j;
		rba_buf_init(&j);
		dispute_report_json(&r, a.inputs, &j);
		if (cli_json_print(&j) != 0) {
			dispute_report_release(&r);
			return 2;
		}
	} else if (!(ctx->quiet && r.answer == DISPUTE_STANDS && r.exact)) {
		/* -q: no report when the answer is yes and exact; exit 0
		 * says it (an answer on estimated reasons is shown) */
		print_answer(ctx, &a, &r);
	}
	/* A principal reason the policy has no statement for is printed by
	 * its column's name; say how many, whatever the output. */
	if (r.why.ok && r.why.has_statements && r.why.nmissing > 0) {
		char cols[512] = "";
		for (uint32_t i = 0; i < r.why.ntop; i++) {
			uint32_t k = r.why.top[i];
			size_t n = strlen(cols);
			if (r.why.statements[k] == NULL && n + 2 < sizeof(cols))
				snprintf(cols + n, sizeof(cols) - n, "%s%s", n ? ", " : "",
					 r.why.cols[k]);
		}
		cli_warn("%u principal reason%s without a statement in the policy, "
			 "printed by column name: %s", r.why.nmissing,
			 r.why.nmissing == 1 ? "" : "s", cols);
	}
	err = r.answer == DISPUTE_STANDS ? 0 : 1;
	dispute_report_release(&r);
	return err;
}
