/*
 * cmd_verify.c - verify: the offline check of a signed file, and of the
 * evidence inside it (common/sign.h, evidence/evidence.h).
 *
 *   verify FILE -p PUB [-x SIGFILE]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/dispute_evidence.h"
#include "evidence/evidence.h"
#include "common/sign.h"
#include "cli/commands.h"
#include "common/fileio.h"
#include "common/json.h"

/*
 * The evidence file's own consistency, checked once its signature holds
 * (evidence/evidence.h, evidence_check): the digests of the embedded texts,
 * the pins against the subject, the verdict against the counts and the
 * tolerance and the artifact that made the decisions, the guarantee, the
 * record and its chain digest, the history head against the record, the
 * trusted comment.  A file that is not evidence (and whose trusted comment does
 * not claim it is) has only its signature checked: sum->is_evidence is 0.
 * Returns 0 when consistent; RBA_E_SCHEMA or RBA_E_TAMPERED with
 * d->reason naming what disagrees (the file is not valid, exit 1);
 * RBA_E_NEWER, RBA_E_LIMIT or RBA_E_NOMEM (could not check, exit 2).
 */
static int
verify_contents(const char *file, const uint8_t *p, size_t n,
		const struct sign_check *chk, struct evidence_summary *sum,
		struct rba_detail *d)
{
	(void)file;
	return evidence_check(p, n, chk->trusted_comment, sum, d);
}

/* Prints s with control characters other than tab shown as \xNN. */
static void
print_safe(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

static const char *
failure_name(int err, enum sign_failure failed)
{
	if (err != RBA_E_BADSIG)
		return "malformed signature";
	switch (failed) {
	case SIGN_FAILED_KEYID: return "key id";
	case SIGN_FAILED_SIGNATURE: return "signature";
	case SIGN_FAILED_COMMENT: return "trusted comment";
	case SIGN_FAILED_NONE: break;
	}
	return "contents";
}

/* The answer is no: one diagnostic line, and the JSON report if asked. */
static int
verify_invalid(struct cli_ctx *ctx, const char *file, const char *sigfile,
	       const char *what, const char *reason)
{
	fprintf(stderr, "rebuild-audit: verification failed '%s': %s\n", file,
		reason);
	if (ctx->json) {
		fputs("{\"file\": ", stdout);
		rba_json_fput_str(stdout, file);
		fputs(", \"signature\": ", stdout);
		rba_json_fput_str(stdout, sigfile);
		printf(", \"valid\": false, \"failed\": \"%s\", \"reason\": ", what);
		rba_json_fput_str(stdout, reason);
		fputs("}\n", stdout);
	}
	return 1;
}

int
cmd_verify(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *file = NULL, *pubpath = NULL, *sigpath = NULL;
	char defsig[4200], id[SIGN_KEYID_TEXT_LEN + 1], reason[1024];
	struct sign_check *chk = NULL;
	struct evidence_summary *sum = NULL;
	struct sign_pubkey pub;
	struct rba_detail d;
	char head[RBA_DIGEST_TEXT_LEN + 1];
	uint8_t *msg = NULL, *sig = NULL;
	size_t n = 0, sn = 0;
	int i, r, err, status = 2, opts = 1;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts && strcmp(a, "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && ((r = cli_opt_value(argc, argv, &i, "-p", &pubpath)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "-x", &sigpath)) != 0)) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", a);
			continue;
		}
		if (opts && a[0] == '-' && a[1] != '\0')
			return cli_usage(ctx, "unknown option '%s'", a);
		if (file != NULL)
			return cli_usage(ctx, "unexpected argument '%s'", a);
		file = a;
	}
	if (file == NULL)
		return cli_usage(ctx, "FILE is required");
	if (pubpath == NULL)
		return cli_usage(ctx, "-p PUB is required");
	if (sigpath == NULL) {
		if ((size_t)snprintf(defsig, sizeof(defsig), "%s.minisig", file) >=
		    sizeof(defsig))
			return cli_fail("cannot verify", file, ENAMETOOLONG, NULL);
		sigpath = defsig;
	}

	rba_detail_clear(&d);
	if ((err = sign_pubkey_load(pubpath, &pub, &d)) != 0)
		return cli_fail("cannot read public key", pubpath, err, &d);
	rba_detail_clear(&d);
	if ((err = rba_file_read(file, SIGN_MESSAGE_MAX, &msg, &n, &d)) != 0)
		return cli_fail("cannot read", file, err, NULL);
	rba_detail_clear(&d);
	err = rba_file_read(sigpath, SIGN_SIGFILE_MAX, &sig, &sn, &d);
	if (err == RBA_E_LIMIT) {
		snprintf(reason, sizeof(reason),
			 "malformed signature '%s': larger than %d bytes", sigpath,
			 SIGN_SIGFILE_MAX);
		status = verify_invalid(ctx, file, sigpath, "malformed signature",
					reason);
		goto out;
	}
	if (err != 0) {
		status = cli_fail("cannot read signature", sigpath, err, NULL);
		goto out;
	}

	chk = malloc(sizeof(*chk));
	if (chk == NULL) {
		status = cli_fail("cannot verify", file, RBA_E_NOMEM, NULL);
		goto out;
	}
	rba_detail_clear(&d);
	err = sign_file_verify(&pub, msg, n, sig, sn, chk, &d);
	if (err == RBA_E_SYNTAX || err == RBA_E_CORRUPT ||
	    err == RBA_E_UNSUPPORTED || err == RBA_E_LIMIT) {
		/* A signature file that does not parse vouches for nothing. */
		if (d.line > 0)
			snprintf(reason, sizeof(reason),
				 "malformed signature '%s' line %lu: %s", sigpath,
				 d.line, d.reason);
		else
			snprintf(reason, sizeof(reason), "malformed signature '%s': %s",
				 sigpath, d.reason);
		status = verify_invalid(ctx, file, sigpath, failure_name(err, SIGN_FAILED_NONE),
					reason);
		goto out;
	}
	if (err == RBA_E_BADSIG) {
		status = verify_invalid(ctx, file, sigpath,
					failure_name(err, chk->failed), d.reason);
		goto out;
	}
	if (err != 0) {
		status = cli_fail("cannot verify", file, err, &d);
		goto out;
	}

	sum = malloc(sizeof(*sum));
	if (sum == NULL) {
		status = cli_fail("cannot verify", file, RBA_E_NOMEM, NULL);
		goto out;
	}
	/* Dispute evidence: one answered dispute (audit/dispute.h). */
	rba_detail_clear(&d);
	{
		char dv[256], dc[256], da[256];
		int is_dispute = 0;
		err = dispute_evidence_check(msg, n, chk->trusted_comment, &is_dispute,
					     dv, dc, da, &d);
		if (is_dispute || err != 0) {
			if (err == RBA_E_NOMEM || err == RBA_E_NEWER) {
				status = cli_fail("cannot check evidence", file, err, &d);
				goto out;
			}
			if (err != 0) {
				status = verify_invalid(ctx, file, sigpath, "contents",
							d.reason);
				goto out;
			}
			sign_keyid_format(chk->keyid, id);
			if (ctx->json) {
				fputs("{\"file\": ", stdout);
				rba_json_fput_str(stdout, file);
				printf(", \"valid\": true, \"key_id\": \"%s\", "
				       "\"dispute\": {\"version\": ", id);
				rba_json_fput_str(stdout, dv);
				fputs(", \"case\": ", stdout);
				rba_json_fput_str(stdout, dc);
				fputs(", \"answer\": ", stdout);
				rba_json_fput_str(stdout, da);
				fputs(", \"consistent\": true}}\n", stdout);
			} else if (!ctx->quiet) {
				printf("signature verified: '%s' signed by key %s\n", file, id);
				fputs("trusted comment: ", stdout);
				print_safe(stdout, chk->trusted_comment);
				fputc('\n', stdout);
				fputs("dispute evidence consistent: version ", stdout);
				print_safe(stdout, dv);
				fputs(", case ", stdout);
				print_safe(stdout, dc);
				fputs(": ", stdout);
				print_safe(stdout, da);
				fputs("\n", stdout);
			}
			status = 0;
			goto out;
		}
	}
	rba_detail_clear(&d);
	err = verify_contents(file, msg, n, chk, sum, &d);
	if (err == RBA_E_NOMEM || err == RBA_E_NEWER || err == RBA_E_LIMIT) {
		status = cli_fail("cannot check evidence", file, err, &d);
		goto out;
	}
	if (err != 0) {
		status = verify_invalid(ctx, file, sigpath, "contents",
					d.reason[0] ? d.reason : rba_strerror(err));
		goto out;
	}

	sign_keyid_format(chk->keyid, id);
	rba_digest_format(&sum->head, head);
	if (ctx->json) {
		fputs("{\"file\": ", stdout);
		rba_json_fput_str(stdout, file);
		fputs(", \"signature\": ", stdout);
		rba_json_fput_str(stdout, sigpath);
		printf(", \"valid\": true, \"key_id\": \"%s\", \"prehashed\": %s, "
		       "\"trusted_comment\": ",
		       id, chk->legacy ? "false" : "true");
		rba_json_fput_str(stdout, chk->trusted_comment);
		fputs(", \"evidence\": ", stdout);
		if (sum->is_evidence) {
			fputs("{\"version\": ", stdout);
			rba_json_fput_str(stdout, sum->version);
			printf(", \"audit_id\": %llu, \"time\": \"%s\", \"verdict\": "
			       "\"%s\", \"consistent\": true, \"guarantee\": ",
			       (unsigned long long)sum->audit_id, sum->time_text,
			       sum->verdict);
			rba_json_fput_str(stdout, sum->guarantee);
			printf(", \"history_head\": {\"id\": %llu, \"digest\": \"%s\"}}",
			       (unsigned long long)sum->head_id, head);
		} else {
			fputs("null", stdout);
		}
		fputs("}\n", stdout);
	} else if (!ctx->quiet) {
		printf("signature verified: '%s' signed by key %s\n", file, id);
		fputs("trusted comment: ", stdout);
		print_safe(stdout, chk->trusted_comment);
		fputc('\n', stdout);
		if (sum->is_evidence) {
			printf("evidence consistent: version %s, audit %llu at %s, "
			       "verdict %s\n", sum->version,
			       (unsigned long long)sum->audit_id, sum->time_text,
			       sum->verdict);
			printf("guarantee: %s\n", sum->guarantee);
			/* The anchor: only the store, later, can say whether
			 * its history still holds this head. */
			printf("history head at export: record %llu, %s\n"
			       "keep this head, and check it later on the store with "
			       "'rebuild-audit history --verify --head %s': it fails "
			       "when the history no longer holds that record (a "
			       "store rolled back to an older state)\n",
			       (unsigned long long)sum->head_id, head, head);
		} else {
			fputs("contents: not a rebuild-audit evidence file; only the "
			      "signature was checked\n", stdout);
		}
	}
	status = 0;
out:
	free(sum);
	free(chk);
	free(msg);
	free(sig);
	return status;
}
