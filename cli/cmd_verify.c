/*
 * cmd_verify.c - verify: the offline check of a signed file, and of the
 * evidence inside it (common/sign.h, evidence/evidence.h).
 *
 *   verify FILE -p PUB [-x SIGFILE] [--artifact ART]
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
#include "rebuild/artifact.h"

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

/* The answer is no: one diagnostic line, and the JSON report if asked. */
static int
verify_invalid(struct cli_ctx *ctx, const char *file, const char *sigfile,
	       const char *what, const char *reason)
{
	cli_diag("verification failed '%s': %s", file, reason);
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

/* The first lines of every text answer of yes. */
static void
print_signed(const char *file, const struct evidence_verification *v,
	     const char *id)
{
	printf("signature verified: '%s' signed by key %s\n", file, id);
	fputs("trusted comment: ", stdout);
	print_safe(stdout, v->sig.trusted_comment);
	fputc('\n', stdout);
}

/* Dispute evidence that holds: one answered dispute (audit/dispute.h),
 * and what its format left unchecked (msg, n: the file). */
static void
print_dispute(struct cli_ctx *ctx, const char *file,
	      const struct evidence_verification *v, const char *id,
	      const void *msg, size_t n, const char *artifact)
{
	const char *unchecked = dispute_evidence_unchecked(msg, n, artifact != NULL);

	if (ctx->json) {
		fputs("{\"file\": ", stdout);
		rba_json_fput_str(stdout, file);
		printf(", \"valid\": true, \"key_id\": \"%s\", "
		       "\"dispute\": {\"version\": ", id);
		rba_json_fput_str(stdout, v->dispute_version);
		fputs(", \"case\": ", stdout);
		rba_json_fput_str(stdout, v->dispute_case);
		fputs(", \"answer\": ", stdout);
		rba_json_fput_str(stdout, v->dispute_answer);
		if (artifact != NULL) {
			/* (only when asked, so that other answers keep their
			 * bytes) */
			fputs(", \"artifact_checked\": ", stdout);
			rba_json_fput_str(stdout, artifact);
		}
		fputs(", \"consistent\": true, \"not_checked\": ", stdout);
		if (unchecked != NULL)
			rba_json_fput_str(stdout, unchecked);
		else
			fputs("null", stdout);
		fputs("}}\n", stdout);
	} else if (!ctx->quiet) {
		/* what the signed file says, escaped (cli_fput_data) */
		printf("signature verified: '%s' signed by key %s\n", file, id);
		fputs("trusted comment: ", stdout);
		cli_fput_data(stdout, v->sig.trusted_comment,
			      strlen(v->sig.trusted_comment));
		fputs("\ndispute evidence consistent: version ", stdout);
		cli_fput_data(stdout, v->dispute_version, strlen(v->dispute_version));
		fputs(", case ", stdout);
		cli_fput_data(stdout, v->dispute_case, strlen(v->dispute_case));
		fputs(": ", stdout);
		cli_fput_data(stdout, v->dispute_answer, strlen(v->dispute_answer));
		fputs("\n", stdout);
		if (artifact != NULL) {
			fputs("checked against artifact ", stdout);
			cli_fput_data(stdout, artifact, strlen(artifact));
			fputs(": the levels unseen in training and where they went\n",
			      stdout);
		}
		if (unchecked != NULL)
			printf("not checked: %s\n", unchecked);
	}
}

/* Audit evidence that holds, or a signed file that is no evidence. */
static void
print_audit(struct cli_ctx *ctx, const char *file, const char *sigpath,
	    const struct evidence_verification *v, const char *id)
{
	const struct evidence_summary *sum = &v->audit;
	char head[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(&sum->head, head);
	if (ctx->json) {
		fputs("{\"file\": ", stdout);
		rba_json_fput_str(stdout, file);
		fputs(", \"signature\": ", stdout);
		rba_json_fput_str(stdout, sigpath);
		printf(", \"valid\": true, \"key_id\": \"%s\", \"prehashed\": %s, "
		       "\"trusted_comment\": ",
		       id, v->sig.legacy ? "false" : "true");
		rba_json_fput_str(stdout, v->sig.trusted_comment);
		fputs(", \"evidence\": ", stdout);
		if (v->kind == EVIDENCE_KIND_AUDIT) {
			fputs("{\"version\": ", stdout);
			rba_json_fput_str(stdout, sum->version);
			printf(", \"audit_id\": %llu, \"time\": \"%s\", \"verdict\": "
			       "\"%s\", \"consistent\": true, \"guarantee\": ",
			       (unsigned long long)sum->audit_id, sum->time_text,
			       sum->verdict);
			rba_json_fput_str(stdout, sum->guarantee);
			printf(", \"history_head\": {\"id\": %llu, \"digest\": \"%s\"}",
			       (unsigned long long)sum->head_id, head);
			cli_declared_json(sum);
			fputs("}", stdout);
		} else {
			fputs("null", stdout);
		}
		fputs("}\n", stdout);
	} else if (!ctx->quiet) {
		print_signed(file, v, id);
		if (v->kind == EVIDENCE_KIND_AUDIT) {
			printf("evidence consistent: version %s, audit %llu at %s, "
			       "verdict %s%s\n", sum->version,
			       (unsigned long long)sum->audit_id, sum->time_text,
			       sum->verdict, sum->ad_hoc == 1 ? ", ad hoc" : "");
			printf("guarantee: %s\n", sum->guarantee);
			cli_declared_print(sum);
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
}

/*
 * Dispute evidence that holds, against the artifact its reasons came
 * from (--artifact ART): 0 when it agrees, 1 (the answer is no) when
 * not, 2 when it cannot be checked (not dispute evidence, an artifact
 * that cannot be read or is another).
 */
static int
verify_artifact(struct cli_ctx *ctx, const char *file, const char *sigpath,
		const struct evidence_verification *v, const void *msg, size_t n,
		const char *artpath)
{
	struct rba_detail d;
	uint8_t *art = NULL;
	size_t an = 0;
	int err;

	if (v->kind != EVIDENCE_KIND_DISPUTE) {
		fprintf(stderr, "rebuild-audit: cannot check against an artifact "
			"'%s': --artifact checks dispute evidence, and this is none\n",
			file);
		return 2;
	}
	rba_detail_clear(&d);
	if ((err = rba_file_read(artpath, ARTIFACT_MAX_BYTES, &art, &an, &d)) != 0)
		return cli_fail("cannot read artifact", artpath, err, NULL);
	err = dispute_evidence_check_artifact(msg, n, art, an, &d);
	free(art);
	if (err == RBA_E_SCHEMA)
		return verify_invalid(ctx, file, sigpath, "artifact", d.reason);
	if (err != 0)
		return cli_fail("cannot check against artifact", artpath, err, &d);
	return 0;
}

/*
 * FILE, -p PUB, -x SIGFILE and --artifact ART from argv (the signature
 * FILE.minisig unless given, in defsig).  0, or 2 after a diagnostic.
 */
static int
verify_parse(struct cli_ctx *ctx, int argc, char **argv, const char **file,
	     const char **pubpath, const char **sigpath, const char **artpath,
	     char *defsig, size_t defcap)
{
	int r, opts = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts && strcmp(a, "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && ((r = cli_opt_value(argc, argv, &i, "-p", pubpath)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "-x", sigpath)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--artifact", artpath)) != 0)) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", a);
			continue;
		}
		if (opts && a[0] == '-' && a[1] != '\0')
			return cli_usage(ctx, "unknown option '%s'", a);
		if (*file != NULL)
			return cli_usage(ctx, "unexpected argument '%s'", a);
		*file = a;
	}
	if (*file == NULL)
		return cli_usage(ctx, "FILE is required");
	if (*pubpath == NULL)
		return cli_usage(ctx, "-p PUB is required");
	if (*sigpath == NULL) {
		if ((size_t)snprintf(defsig, defcap, "%s.minisig", *file) >= defcap)
			return cli_fail("cannot verify", *file, ENAMETOOLONG, NULL);
		*sigpath = defsig;
	}
	return 0;
}

int
cmd_verify(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *file = NULL, *pubpath = NULL, *sigpath = NULL, *artpath = NULL;
	char defsig[4200], id[SIGN_KEYID_TEXT_LEN + 1], reason[1024];
	struct evidence_verification *v = NULL;
	struct sign_pubkey pub;
	struct rba_detail d;
	uint8_t *msg = NULL, *sig = NULL;
	size_t n = 0, sn = 0;
	int err, status = 2;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if ((err = verify_parse(ctx, argc, argv, &file, &pubpath, &sigpath, &artpath,
				defsig, sizeof(defsig))) != 0)
		return err;
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
	if ((v = malloc(sizeof(*v))) == NULL) {
		status = cli_fail("cannot verify", file, RBA_E_NOMEM, NULL);
		goto out;
	}
	err = evidence_verify(&pub, msg, n, sig, sn, sigpath, v, &d);
	if (err != 0) {
		status = cli_fail(v->signature_ok ? "cannot check evidence"
						  : "cannot verify", file, err, &d);
		goto out;
	}
	if (!v->valid) {
		status = verify_invalid(ctx, file, sigpath, v->failed, v->reason);
		goto out;
	}
	sign_keyid_format(v->sig.keyid, id);
	if (artpath != NULL && (status = verify_artifact(ctx, file, sigpath, v, msg,
							  n, artpath)) != 0)
		goto out;
	if (v->kind == EVIDENCE_KIND_DISPUTE)
		print_dispute(ctx, file, v, id, msg, n, artpath);
	else
		print_audit(ctx, file, sigpath, v, id);
	status = 0;
out:
	free(v);
	free(msg);
	free(sig);
	return status;
}
