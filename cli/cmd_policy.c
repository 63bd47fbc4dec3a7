/*
 * cmd_policy.c - policy set: keep the policy a version is decided under
 * (audit/declared.h: the text kept, the history told, and the rule that
 * a looser policy judges only samples added after it); policy check: the
 * input columns of a version its policy has no reason statement for
 * (audit/dispute.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "audit/declared.h"
#include "audit/dispute.h"
#include "cli/commands.h"
#include "common/digest.h"
#include "policy/policy.h"
#include "store/store.h"

/* policy check VERSION [POLICY]: 0 every input column has a statement,
 * 1 some have none (listed), 2 could not answer. */
static int
policy_check(struct cli_ctx *ctx, int argc, char **argv)
{
	struct dispute_coverage c;
	struct policy *pol = NULL;
	struct rba_detail d;
	char pd[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	if (argc != 3 && argc != 4)
		return cli_usage(ctx, "policy check needs VERSION and at most a POLICY");
	if (argc == 4 && cli_policy_load(argv[3], &pol) != 0)
		return 2;
	if ((err = cli_store_open(ctx, 1)) != 0) {
		policy_free(pol);
		return err;
	}
	rba_detail_clear(&d);
	err = dispute_statement_coverage(ctx->store, argv[2], pol, &c, &d);
	policy_free(pol);
	if (err)
		return cli_fail("cannot check the statements of", argv[2], err, &d);
	rba_digest_format(&c.policy, pd);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "version", argv[2]);
		rba_json_w_str(&w, "policy", pd);
		rba_json_w_u64(&w, "statements", c.nstatements);
		rba_json_w_u64(&w, "columns", c.ncolumns);
		rba_json_w_u64(&w, "covered", c.covered);
		rba_json_w_open(&w, "without", '[');
		for (size_t i = 0; i < c.nmissing; i++)
			rba_json_w_str(&w, NULL, c.missing[i]);
		rba_json_w_close(&w, ']');
		rba_json_w_close(&w, '}');
		if (cli_json_print(&b) != 0) {
			dispute_coverage_release(&c);
			return 2;
		}
	} else if (!(ctx->quiet && c.nmissing == 0)) {
		printf("policy      %s (%s)\n", pd, c.from_version ? "the version's"
							  : "given");
		printf("statements  %zu, covering %u of the %u input columns\n",
		       c.nstatements, c.covered, c.ncolumns);
		for (size_t i = 0; i < c.nmissing; i++) {
			fputs("without     ", stdout);
			cli_fput_data(stdout, c.missing[i], strlen(c.missing[i]));
			fputc('\n', stdout);
		}
	}
	err = c.nmissing == 0 ? 0 : 1;
	dispute_coverage_release(&c);
	return err;
}

int
cmd_policy(struct cli_ctx *ctx, int argc, char **argv)
{
	struct policy *pol = NULL;
	struct declared_set_result res;
	struct rba_detail d;
	char pd[RBA_DIGEST_TEXT_LEN + 1], old[RBA_DIGEST_TEXT_LEN + 1];
	char sp[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return policy_check(ctx, argc, argv);
	if (argc != 4 || strcmp(argv[1], "set") != 0)
		return cli_usage(ctx, "policy set needs VERSION and POLICY");
	if (cli_policy_load(argv[3], &pol) != 0)
		return 2;
	if ((err = cli_store_open(ctx, 0)) != 0) {
		policy_free(pol);
		return err;
	}
	rba_detail_clear(&d);
	err = declared_policy_set(ctx->store, argv[2], pol, (int64_t)time(NULL),
				  &res, &d);
	rba_digest_format(&pol->digest, pd);
	policy_free(pol);
	if (err)
		return cli_fail("cannot set policy", argv[2], err, &d);
	rba_digest_format(&res.previous, old);
	rba_digest_format(&res.sample_policy, sp);
	if (res.sample_keeps_own)
		cli_warn("policy %s is looser than %s, the policy the sample of "
			 "'%s' was added under, in %s: it judges only samples added "
			 "from now on; audits still judge this sample by %s",
			 pd, sp, argv[2], res.sample_looser_in, sp);
	else if (res.sample_unknown)
		cli_warn("the sample of '%s' was added under policy %s, whose text "
			 "the store does not keep: audits cannot judge it by a "
			 "policy set after it (add the sample again)", argv[2], sp);
	else if (res.had_previous && !res.stricter)
		cli_warn("policy %s is looser than %s, the one it replaces, in %s: "
			 "it judges only samples of '%s' added from now on",
			 pd, old, res.looser_in, argv[2]);
	else if (res.sample_other_policy)
		cli_warn("the sample of '%s' holds decisions made under policy %s; "
			 "audits now decide under %s and count what it changes as "
			 "flips", argv[2], sp, pd);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "version", argv[2]);
		rba_json_w_str(&w, "policy", pd);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	} else if (!ctx->quiet)
		printf("%s\n", pd);
	return 0;
}
