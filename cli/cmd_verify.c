/*
 * cmd_verify.c - verify: the offline check of a signed file, and of the
 * evidence inside it (common/sign.h, evidence/evidence.h).
 *
 *   verify FILE -p PUB [-x SIGFILE] [--artifact ART]
 *   verify FILE [-p PUB] --vkey VKEY... [--checkpoint CK [--proof FILE]]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dsse.h"
#include "evidence/checkpoint.h"
#include "evidence/dispute_evidence.h"
#include "evidence/evidence.h"
#include "common/sign.h"
#include "cli/commands.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/note.h"
#include "model/artifact.h"

#define VERIFY_VKEYS_MAX 16

/* What verify checks of a format 4 file's log beyond the file itself. */
struct verify_log {
	const char *vkeys[VERIFY_VKEYS_MAX];
	struct note_verifier v[VERIFY_VKEYS_MAX];
	int nv;
	const char *checkpoint; /* --checkpoint CK: a newer checkpoint */
	const char *proof;	/* --proof FILE: the consistency proof */
	/* what was found, for the report */
	int by_vkey[EVIDENCE_LOG_SIGNERS_MAX];
	int grew;		/* CK checked: consistent with the file's */
	uint64_t ck_size;
	size_t ck_proof;
};

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
	struct rba_buf b;
	struct rba_json_w w;

	cli_diag("verification failed '%s': %s", file, reason);
	if (!ctx->json)
		return 1;
	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "file", file);
	rba_json_w_str(&w, "signature", sigfile);
	rba_json_w_bool(&w, "valid", 0);
	rba_json_w_str(&w, "failed", what);
	rba_json_w_str(&w, "reason", reason);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b) != 0 ? 2 : 1;
}

/* The line after the signature's: its trusted comment, or what an
 * envelope has instead. */
static void
print_trusted(const struct evidence_verification *v)
{
	if (v->dsse) {
		fputs("envelope: DSSE, payloadType " DSSE_TYPE_INTOTO ", the "
		      "signature over the whole statement (no trusted comment)\n",
		      stdout);
		return;
	}
	fputs("trusted comment: ", stdout);
	cli_fput_data(stdout, v->sig.trusted_comment, strlen(v->sig.trusted_comment));
	fputc('\n', stdout);
}

/* The first lines of every text answer of yes. */
static void
print_signed(const char *file, const struct evidence_verification *v,
	     const char *id)
{
	printf("signature verified: '%s' signed by key %s\n", file, id);
	if (v->dsse) {
		print_trusted(v);
		return;
	}
	fputs("trusted comment: ", stdout);
	print_safe(stdout, v->sig.trusted_comment);
	fputc('\n', stdout);
}

/* A variation report that holds (evidence/vary_evidence.h): 0, or 2
 * after a diagnostic. */
static int
print_vary(struct cli_ctx *ctx, const char *file,
	   const struct evidence_verification *v, const char *id)
{
	const struct vary_evidence_summary *s = &v->vary;

	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "file", file);
		rba_json_w_bool(&w, "valid", 1);
		rba_json_w_str(&w, "key_id", id);
		rba_json_w_str(&w, "kind", "vary");
		rba_json_w_open(&w, "vary", '{');
		rba_json_w_str(&w, "version", s->version);
		rba_json_w_str(&w, "run", s->run);
		rba_json_w_u64(&w, "factors", s->factors);
		rba_json_w_u64(&w, "changed", s->changed);
		rba_json_w_bool(&w, "control_pinned", s->control_pinned);
		rba_json_w_str(&w, "changed_factors", s->changed_list);
		rba_json_w_close(&w, '}');
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	}
	if (ctx->quiet)
		return 0;
	printf("signature good: key %s\n", id);
	print_trusted(v);
	fputs("variation evidence consistent: version ", stdout);
	cli_fput_data(stdout, s->version, strlen(s->version));
	printf(", run %s of %s: %llu of %llu factors change the artifact%s",
	       s->run, s->time, (unsigned long long)s->changed,
	       (unsigned long long)s->factors, s->changed ? " (" : "");
	if (s->changed) {
		cli_fput_data(stdout, s->changed_list, strlen(s->changed_list));
		fputc(')', stdout);
	}
	printf("; the control %s the pinned artifact\n",
	       s->control_pinned ? "is" : "is not");
	return 0;
}

/* Dispute evidence that holds: one answered dispute (audit/dispute.h),
 * and what its format left unchecked (msg, n: the file).  0, or 2 after
 * a diagnostic. */
static int
print_dispute(struct cli_ctx *ctx, const char *file,
	      const struct evidence_verification *v, const char *id,
	      const void *msg, size_t n, const char *artifact)
{
	const char *unchecked = dispute_evidence_unchecked(msg, n, artifact != NULL);

	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "file", file);
		rba_json_w_bool(&w, "valid", 1);
		rba_json_w_str(&w, "key_id", id);
		rba_json_w_open(&w, "dispute", '{');
		rba_json_w_str(&w, "version", v->dispute_version);
		rba_json_w_str(&w, "case", v->dispute_case);
		rba_json_w_str(&w, "answer", v->dispute_answer);
		/* (only when asked, so that other answers keep their bytes) */
		if (artifact != NULL)
			rba_json_w_str(&w, "artifact_checked", artifact);
		rba_json_w_bool(&w, "consistent", 1);
		rba_json_w_str(&w, "not_checked", unchecked);
		rba_json_w_close(&w, '}');
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	} else if (!ctx->quiet) {
		/* what the signed file says, escaped (cli_fput_data) */
		printf("signature verified: '%s' signed by key %s\n", file, id);
		print_trusted(v);
		fputs("dispute evidence consistent: version ", stdout);
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
	return 0;
}

/* The log member of audit evidence (format 4), in w's open object. */
static void
log_json(struct rba_json_w *w, const struct evidence_summary *sum,
	 const struct verify_log *lg)
{
	const struct evidence_log_summary *ls = &sum->log;

	if (!ls->present)
		return;
	rba_json_w_open(w, "log", '{');
	rba_json_w_str(w, "origin", ls->origin);
	rba_json_w_u64(w, "tree_size", ls->tree_size);
	rba_json_w_u64(w, "index", ls->index);
	rba_json_w_bool(w, "proof_checks", 1);
	rba_json_w_open(w, "signers", '[');
	for (size_t i = 0; i < ls->nsigners && i < EVIDENCE_LOG_SIGNERS_MAX; i++) {
		char hash[16];
		snprintf(hash, sizeof(hash), "%08x", (unsigned)ls->signers[i].hash);
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "name", ls->signers[i].name);
		rba_json_w_str(w, "key_hash", hash);
		rba_json_w_bool(w, "verified",
				ls->signers[i].by_signer || lg->by_vkey[i]);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
	if (lg->grew) {
		rba_json_w_open(w, "consistent_with", '{');
		rba_json_w_str(w, "checkpoint", lg->checkpoint);
		rba_json_w_u64(w, "tree_size", lg->ck_size);
		rba_json_w_close(w, '}');
	} else {
		rba_json_w_str(w, "consistent_with", NULL);
	}
	rba_json_w_close(w, '}');
}

static void
log_text(const struct evidence_summary *sum, const struct verify_log *lg)
{
	const struct evidence_log_summary *ls = &sum->log;

	if (!ls->present)
		return;
	printf("log: the checkpoint of %llu records of ", (unsigned long long)ls->tree_size);
	cli_fput_data(stdout, ls->origin, strlen(ls->origin));
	fputs(" is signed by", stdout);
	for (size_t i = 0; i < ls->nsigners && i < EVIDENCE_LOG_SIGNERS_MAX; i++) {
		printf("%s ", i ? "," : "");
		cli_fput_data(stdout, ls->signers[i].name, strlen(ls->signers[i].name));
		printf("+%08x (%s)", (unsigned)ls->signers[i].hash,
		       ls->signers[i].by_signer ? "this file's key, verified"
		       : lg->by_vkey[i]	  ? "--vkey, verified"
					  : "not checked: give its --vkey");
	}
	printf("\nlog: audit record %llu is leaf %llu of that tree: its inclusion "
	       "proof (%zu hash%s) checks against the checkpoint's root\n",
	       (unsigned long long)ls->index + 1, (unsigned long long)ls->index,
	       ls->proof_len, ls->proof_len == 1 ? "" : "es");
	if (lg->grew)
		printf("log: checkpoint '%s' of %llu records extends it: the "
		       "consistency proof (%zu hash%s) checks against both roots\n",
		       lg->checkpoint, (unsigned long long)lg->ck_size, lg->ck_proof,
		       lg->ck_proof == 1 ? "" : "es");
}

/* Audit evidence that holds, or a signed file that is no evidence, as
 * JSON: 0, or 2 after a diagnostic. */
static int
audit_json(const char *file, const char *sigpath,
	   const struct evidence_verification *v, const char *id,
	   const struct verify_log *lg)
{
	const struct evidence_summary *sum = &v->audit;
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "file", file);
	rba_json_w_str(&w, "signature", sigpath);
	rba_json_w_bool(&w, "valid", 1);
	rba_json_w_str(&w, "key_id", id);
	if (v->dsse) {
		rba_json_w_str(&w, "envelope", "dsse");
		rba_json_w_str(&w, "payload_type", DSSE_TYPE_INTOTO);
		rba_json_w_str(&w, "trusted_comment", NULL);
	} else {
		rba_json_w_bool(&w, "prehashed", !v->sig.legacy);
		rba_json_w_str(&w, "trusted_comment", v->sig.trusted_comment);
	}
	if (v->kind == EVIDENCE_KIND_AUDIT) {
		rba_json_w_open(&w, "evidence", '{');
		rba_json_w_str(&w, "version", sum->version);
		rba_json_w_u64(&w, "audit_id", sum->audit_id);
		rba_json_w_str(&w, "time", sum->time_text);
		rba_json_w_str(&w, "verdict", sum->verdict);
		rba_json_w_bool(&w, "consistent", 1);
		rba_json_w_str(&w, "guarantee", sum->guarantee);
		rba_json_w_open(&w, "history_head", '{');
		rba_json_w_u64(&w, "id", sum->head_id);
		rba_json_w_digest(&w, "digest", &sum->head, 1);
		rba_json_w_close(&w, '}');
		cli_declared_json(&w, sum);
		log_json(&w, sum, lg);
		rba_json_w_close(&w, '}');
	} else {
		rba_json_w_str(&w, "evidence", NULL);
	}
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/* Audit evidence that holds, or a signed file that is no evidence: 0,
 * or 2 after a diagnostic. */
static int
print_audit(struct cli_ctx *ctx, const char *file, const char *sigpath,
	    const struct evidence_verification *v, const char *id,
	    const struct verify_log *lg)
{
	const struct evidence_summary *sum = &v->audit;
	char head[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(&sum->head, head);
	if (ctx->json) {
		return audit_json(file, sigpath, v, id, lg);
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
			log_text(sum, lg);
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
	return 0;
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
	     struct verify_log *lg, char *defsig, size_t defcap)
{
	int r, opts = 1;
	const char *vk;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts && strcmp(a, "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && ((r = cli_opt_value(argc, argv, &i, "-p", pubpath)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "-x", sigpath)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--artifact", artpath)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--checkpoint",
						&lg->checkpoint)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--proof", &lg->proof)) != 0)) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", a);
			continue;
		}
		if (opts && (r = cli_opt_value(argc, argv, &i, "--vkey", &vk)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "option '--vkey' needs a value");
			if (lg->nv == VERIFY_VKEYS_MAX)
				return cli_usage(ctx, "at most %d --vkey", VERIFY_VKEYS_MAX);
			lg->vkeys[lg->nv++] = vk;
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
	if (*pubpath == NULL && lg->nv == 0)
		return cli_usage(ctx, "-p PUB (or the log's --vkey VKEY) is required");
	if (lg->proof != NULL && lg->checkpoint == NULL)
		return cli_usage(ctx, "--proof goes with --checkpoint");
	if (*sigpath == NULL) {
		if ((size_t)snprintf(defsig, defcap, "%s.minisig", *file) >= defcap)
			return cli_fail("cannot verify", *file, ENAMETOOLONG, NULL);
		*sigpath = defsig;
	}
	return 0;
}

/*
 * The public key of the first --vkey, with the key id the signature
 * file names (a verifier key has none; the Ed25519 key is what verifies).
 */
static void
vkey_pubkey(const struct note_verifier *v, const uint8_t *sig, size_t sn,
	    struct sign_pubkey *pub)
{
	struct sign_check chk;

	memset(pub, 0, sizeof(*pub));
	memcpy(pub->pk, v->pk, SIGN_PUBLICKEY_LEN);
	if (sign_file_verify(pub, "", 0, sig, sn, &chk, NULL) == RBA_E_BADSIG &&
	    chk.failed == SIGN_FAILED_KEYID)
		memcpy(pub->keyid, chk.keyid, SIGN_KEYID_LEN);
}

/*
 * The log beyond the file: the file's checkpoint signed by every --vkey,
 * and a newer --checkpoint CK (signed by every --vkey, or by the file's
 * key under its origin) that the log grew into consistently, by --proof
 * FILE or the store's proof.  0 yes, 1 no (one line), 2 could not check.
 */
static int
verify_log_more(struct cli_ctx *ctx, const char *file, const char *sigpath,
		const struct evidence_verification *v, const struct sign_pubkey *pub,
		const void *msg, size_t n, struct verify_log *lg)
{
	struct checkpoint c, ck;
	struct checkpoint_consistency cc;
	struct note_verifier own;
	struct rba_detail d;
	char why[CHECKPOINT_REASON_MAX];
	int err, status = 0, holds;

	memset(&c, 0, sizeof(c));
	memset(&ck, 0, sizeof(ck));
	if (lg->nv == 0 && lg->checkpoint == NULL)
		return 0;
	if (v->kind != EVIDENCE_KIND_AUDIT || !v->audit.log.present)
		return verify_invalid(ctx, file, sigpath, "log", "the file carries no "
				      "checkpoint of the history's log (only "
				      "audit-evidence/v4 does)");
	rba_detail_clear(&d);
	if ((err = evidence_log_checkpoint(msg, n, &c, &d)) != 0)
		return cli_fail("cannot check the log", file, err, &d);
	for (int i = 0; i < lg->nv; i++) {
		if (checkpoint_signed_by(&c, &lg->v[i], why) != 0) {
			status = verify_invalid(ctx, file, sigpath, "log", why);
			goto out;
		}
		for (size_t j = 0; j < c.note.nsigs && j < EVIDENCE_LOG_SIGNERS_MAX; j++)
			if (c.note.sigs[j].hash == lg->v[i].hash &&
			    c.note.sigs[j].name_len == strlen(lg->v[i].name) &&
			    memcmp(c.note.sigs[j].name, lg->v[i].name,
				   c.note.sigs[j].name_len) == 0)
				lg->by_vkey[j] = 1;
	}
	if (lg->checkpoint == NULL)
		goto out;
	rba_detail_clear(&d);
	if ((err = checkpoint_read(lg->checkpoint, &ck, &d)) != 0) {
		status = cli_fail("cannot read checkpoint", lg->checkpoint, err, &d);
		goto out;
	}
	if (lg->nv == 0) {
		if (note_verifier_make(ck.ck.origin, pub->pk, &own, NULL) != 0 ||
		    checkpoint_signed_by(&ck, &own, why) != 0) {
			snprintf(why, sizeof(why), "checkpoint '%s' is not signed by the "
				 "file's key under its origin", lg->checkpoint);
			status = verify_invalid(ctx, file, sigpath, "log", why);
			goto out;
		}
	}
	for (int i = 0; i < lg->nv; i++)
		if (checkpoint_signed_by(&ck, &lg->v[i], why) != 0) {
			status = verify_invalid(ctx, file, sigpath, "log", why);
			goto out;
		}
	rba_detail_clear(&d);
	if (lg->proof != NULL) {
		uint8_t *p = NULL;
		size_t pn = 0;
		if ((err = rba_file_read(lg->proof, 1u << 20, &p, &pn, &d)) != 0) {
			status = cli_fail("cannot read proof", lg->proof, err, &d);
			goto out;
		}
		err = checkpoint_consistency_check(&c, &ck, p, pn, &holds, why, &d);
		free(p);
		cc.np = 0;
	} else {
		if (checkpoint_needs_store(&c, &ck) &&
		    (err = cli_store_open(ctx, 1)) != 0) {
			status = err;
			goto out;
		}
		err = checkpoint_consistency(ctx->store, &c, &ck, &cc, &d);
		holds = cc.holds;
		snprintf(why, sizeof(why), "%s", cc.reason);
	}
	if (err != 0) {
		status = cli_fail("cannot check the log's consistency", lg->checkpoint,
				  err, &d);
		goto out;
	}
	if (!holds) {
		status = verify_invalid(ctx, file, sigpath, "log", why);
		goto out;
	}
	lg->grew = 1;
	lg->ck_size = ck.ck.size;
	lg->ck_proof = lg->proof != NULL ? 0 : cc.np;
out:
	checkpoint_release(&c);
	checkpoint_release(&ck);
	return status;
}

/*
 * FILE is a DSSE envelope (common/dsse.h): its signature over PAE by
 * PUB (or the first --vkey's key), then its statement as a signed
 * file's, and the same checks beyond it (--artifact, --vkey,
 * --checkpoint).  0 yes, 1 no (one line), 2 could not check.
 */
static int
verify_envelope_file(struct cli_ctx *ctx, const char *file, int has_x,
		     const char *pubpath, struct sign_pubkey *pub,
		     const uint8_t *env, size_t n, const char *artpath,
		     struct verify_log *lg)
{
	char id[DSSE_KEYID_MAX + 1];
	struct evidence_verification *v;
	struct rba_detail d;
	uint8_t *msg = NULL;
	size_t mn = 0;
	int err, status;

	if (has_x)
		return cli_usage(ctx, "'%s' is a DSSE envelope, which carries its "
				 "signature: no -x", file);
	if ((v = malloc(sizeof(*v))) == NULL)
		return cli_fail("cannot verify", file, RBA_E_NOMEM, NULL);
	if (pubpath == NULL) {
		memset(pub, 0, sizeof(*pub));
		memcpy(pub->pk, lg->v[0].pk, SIGN_PUBLICKEY_LEN);
	}
	rba_detail_clear(&d);
	err = evidence_verify_dsse(pub, pubpath != NULL, env, n, &msg, &mn, v, &d);
	if (err != 0) {
		status = cli_fail(v->signature_ok ? "cannot check evidence"
						  : "cannot verify", file, err, &d);
		goto out;
	}
	if (!v->valid) {
		status = verify_invalid(ctx, file, file, v->failed, v->reason);
		goto out;
	}
	if (pubpath != NULL)
		sign_keyid_format(v->sig.keyid, id);
	else
		snprintf(id, sizeof(id), "%s", v->dsse_keyid[0] ? v->dsse_keyid : "(none)");
	/* (a keyid is the signer's text: shown as letters, digits and
	 * punctuation, printed unquoted in JSON strings) */
	for (char *q = id; *q; q++)
		if (!((*q >= '0' && *q <= '9') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= 'a' && *q <= 'z') || strchr("()._:-+/=", *q)))
			*q = '?';
	if (artpath != NULL &&
	    (status = verify_artifact(ctx, file, file, v, msg, mn, artpath)) != 0)
		goto out;
	if ((status = verify_log_more(ctx, file, file, v, pub, msg, mn, lg)) != 0)
		goto out;
	if (v->kind == EVIDENCE_KIND_DISPUTE)
		status = print_dispute(ctx, file, v, id, msg, mn, artpath);
	else if (v->kind == EVIDENCE_KIND_VARY)
		status = print_vary(ctx, file, v, id);
	else
		status = print_audit(ctx, file, file, v, id, lg);
out:
	free(v);
	free(msg);
	return status;
}

int
cmd_verify(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *file = NULL, *pubpath = NULL, *sigpath = NULL, *artpath = NULL;
	char defsig[4200], id[SIGN_KEYID_TEXT_LEN + 1], reason[1024];
	struct evidence_verification *v = NULL;
	struct verify_log lg;
	struct sign_pubkey pub;
	struct rba_detail d;
	uint8_t *msg = NULL, *sig = NULL;
	size_t n = 0, sn = 0;
	int err, status = 2;

	memset(&lg, 0, sizeof(lg));
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if ((err = verify_parse(ctx, argc, argv, &file, &pubpath, &sigpath, &artpath,
				&lg, defsig, sizeof(defsig))) != 0)
		return err;
	rba_detail_clear(&d);
	if (pubpath != NULL && (err = sign_pubkey_load(pubpath, &pub, &d)) != 0)
		return cli_fail("cannot read public key", pubpath, err, &d);
	for (int i = 0; i < lg.nv; i++) {
		rba_detail_clear(&d);
		if ((err = checkpoint_vkey_load(lg.vkeys[i], &lg.v[i], &d)) != 0)
			return cli_fail("cannot read verifier key",
					d.file[0] ? d.file : lg.vkeys[i], err, &d);
	}
	rba_detail_clear(&d);
	if ((err = rba_file_read(file, SIGN_MESSAGE_MAX, &msg, &n, &d)) != 0)
		return cli_fail("cannot read", file, err, NULL);
	if (dsse_is_envelope(msg, n)) {
		status = verify_envelope_file(ctx, file, sigpath != defsig, pubpath,
					      &pub, msg, n, artpath, &lg);
		free(msg);
		return status;
	}
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
	if (pubpath == NULL)
		vkey_pubkey(&lg.v[0], sig, sn, &pub);
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
	if ((status = verify_log_more(ctx, file, sigpath, v, &pub, msg, n, &lg)) != 0)
		goto out;
	if (v->kind == EVIDENCE_KIND_DISPUTE)
		status = print_dispute(ctx, file, v, id, msg, n, artpath);
	else if (v->kind == EVIDENCE_KIND_VARY)
		status = print_vary(ctx, file, v, id);
	else
		status = print_audit(ctx, file, sigpath, v, id, &lg);
out:
	free(v);
	free(msg);
	free(sig);
	return status;
}
