/*
 * cmd_policy.c - policy set: keep the policy a version is decided under.
 */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/digest.h"
#include "policy/policy.h"
#include "store/store.h"

int
cmd_policy(struct cli_ctx *ctx, int argc, char **argv)
{
	struct policy *pol = NULL;
	struct store_txn *txn;
	struct rba_detail d;
	char pd[RBA_DIGEST_TEXT_LEN + 1], old[RBA_DIGEST_TEXT_LEN + 1] = "";
	struct store_sample_info si;
	int err;

	if (argc != 4 || strcmp(argv[1], "set") != 0)
		return cli_usage(ctx, "policy set needs VERSION and POLICY");
	if (cli_policy_load(argv[3], &pol) != 0)
		return 2;
	if ((err = cli_store_open(ctx, 0)) != 0) {
		policy_free(pol);
		return err;
	}
	rba_detail_clear(&d);
	err = store_txn_begin(ctx->store, 1, 0, &txn, &d);
	if (err == 0) {
		/* The sample's stored decisions were made under some policy:
		 * say so when it is not this one. */
		if (store_sample_info(txn, argv[2], &si, NULL) == 0) {
			if (si.has_policy && !rba_digest_equal(&si.policy_digest,
							       &pol->digest))
				rba_digest_format(&si.policy_digest, old);
			store_sample_info_release(&si);
		}
		err = store_version_set_policy(txn, argv[2], pol->text, &pol->digest, &d);
		if (err == 0)
			err = store_txn_commit(txn, &d);
		else
			store_txn_abort(txn);
	}
	rba_digest_format(&pol->digest, pd);
	policy_free(pol);
	if (err) {
		if (err == RBA_E_NOTFOUND)
			snprintf(d.reason, sizeof(d.reason), "no such version");
		return cli_fail("cannot set policy", argv[2], err, &d);
	}
	if (old[0])
		cli_warn("the sample of '%s' holds decisions made under policy %s; "
			 "audits now decide under %s and count what it changes as "
			 "flips", argv[2], old, pd);
	if (ctx->json)
		printf("{\"version\": \"%s\", \"policy\": \"%s\"}\n", argv[2], pd);
	else if (!ctx->quiet)
		printf("%s\n", pd);
	return 0;
}
