/*
 * evidence_verify.c - the offline check of a signed file: its signature,
 * then what it is and whether its contents hold (evidence/evidence.h).
 */
#include "evidence/evidence.h"

#include <stdio.h>
#include <string.h>

#include "evidence/checkpoint.h"
#include "evidence/dispute_evidence.h"
#include "evidence/vary_evidence.h"

static int
invalid(struct evidence_verification *out, const char *failed,
	const char *reason)
{
	out->valid = 0;
	out->failed = failed;
	snprintf(out->reason, sizeof(out->reason), "%s", reason);
	return 0;
}

static const char *
failure_name(enum sign_failure failed)
{
	switch (failed) {
	case SIGN_FAILED_KEYID: return "key id";
	case SIGN_FAILED_SIGNATURE: return "signature";
	case SIGN_FAILED_COMMENT: return "trusted comment";
	case SIGN_FAILED_NONE: break;
	}
	return "contents";
}

/* The signature: 0 and out->signature_ok, 0 and an answer of no, or an
 * error. */
static int
verify_signature(const struct sign_pubkey *pub, const void *msg, size_t n,
		 const void *sig, size_t siglen, const char *signame,
		 struct evidence_verification *out, struct rba_detail *d)
{
	int err;

	rba_detail_clear(d);
	err = sign_file_verify(pub, msg, n, sig, siglen, &out->sig, d);
	if (err == RBA_E_SYNTAX || err == RBA_E_CORRUPT ||
	    err == RBA_E_UNSUPPORTED || err == RBA_E_LIMIT) {
		/* A signature file that does not parse vouches for nothing. */
		out->valid = 0;
		out->failed = "malformed signature";
		if (d->line > 0)
			snprintf(out->reason, sizeof(out->reason),
				 "malformed signature '%s' line %lu: %s", signame,
				 d->line, d->reason);
		else
			snprintf(out->reason, sizeof(out->reason),
				 "malformed signature '%s': %s", signame, d->reason);
		return 0;
	}
	if (err == RBA_E_BADSIG)
		return invalid(out, failure_name(out->sig.failed), d->reason);
	if (err != 0)
		return err;
	out->signature_ok = 1;
	return 0;
}

/* Dispute evidence, or a file that claims to be: 1 when it is (*err its
 * answer), 0 when it is not. */
static int
verify_dispute(const void *msg, size_t n, struct evidence_verification *out,
	       int *err, struct rba_detail *d)
{
	int is_dispute = 0, e;

	rba_detail_clear(d);
	e = dispute_evidence_check(msg, n, out->sig.trusted_comment, &is_dispute,
				   out->dispute_version, out->dispute_case,
				   out->dispute_answer, d);
	if (!is_dispute && e == 0)
		return 0;
	out->kind = EVIDENCE_KIND_DISPUTE;
	if (e == RBA_E_NOMEM || e == RBA_E_NEWER)
		*err = e;
	else if (e != 0)
		*err = invalid(out, "contents", d->reason);
	else
		out->valid = 1;
	return 1;
}

/* A variation report, or a file that claims to be: 1 when it is. */
static int
verify_vary(const void *msg, size_t n, struct evidence_verification *out,
	    int *err, struct rba_detail *d)
{
	int is_vary = 0, e;

	rba_detail_clear(d);
	e = vary_evidence_check(msg, n, out->sig.trusted_comment, &is_vary,
				&out->vary, d);
	if (!is_vary && e == 0)
		return 0;
	out->kind = EVIDENCE_KIND_VARY;
	if (e == RBA_E_NOMEM || e == RBA_E_NEWER)
		*err = e;
	else if (e != 0)
		*err = invalid(out, "contents", d->reason);
	else
		out->valid = 1;
	return 1;
}

/*
 * Format 4: the checkpoint the file carries is signed by the file's own
 * key under the checkpoint's origin (export signs both with one key).
 */
static int
verify_log(const struct sign_pubkey *pub, const void *msg, size_t n,
	   struct evidence_verification *out, struct rba_detail *d)
{
	struct evidence_log_summary *ls = &out->audit.log;
	struct checkpoint c;
	struct note_verifier v;
	char why[CHECKPOINT_REASON_MAX];
	int err;

	out->kind = EVIDENCE_KIND_AUDIT;
	rba_detail_clear(d);
	if ((err = evidence_log_checkpoint(msg, n, &c, d)) != 0)
		return err == RBA_E_NOMEM ? err
					  : invalid(out, "log", d->reason);
	if ((err = note_verifier_make(c.ck.origin, pub->pk, &v, d)) != 0) {
		checkpoint_release(&c);
		return invalid(out, "log", d->reason);
	}
	/* A file signed by another key than the log's (one a reader signed
	 * again) has no line by its key: its checkpoint is then the log's
	 * to check, with --vkey.  A line that claims the file's key and
	 * does not verify is refused. */
	err = note_verify(&c.note, &v);
	if (err == RBA_E_BADSIG)
		checkpoint_signed_by(&c, &v, why);
	for (size_t i = 0; i < ls->nsigners && i < EVIDENCE_LOG_SIGNERS_MAX; i++)
		ls->signers[i].by_signer = err == 0 && ls->signers[i].hash == v.hash &&
					   strcmp(ls->signers[i].name, v.name) == 0;
	checkpoint_release(&c);
	if (err == RBA_E_CRYPTO)
		return err;
	if (err == RBA_E_BADSIG) {
		char reason[EVIDENCE_REASON_MAX];
		snprintf(reason, sizeof(reason), "the file's checkpoint: %s", why);
		return invalid(out, "log", reason);
	}
	out->valid = 1;
	return 0;
}

int
evidence_verify(const struct sign_pubkey *pub, const void *msg, size_t n,
		const void *sig, size_t siglen, const char *signame,
		struct evidence_verification *out, struct rba_detail *d)
{
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = verify_signature(pub, msg, n, sig, siglen, signame, out, d)) != 0 ||
	    !out->signature_ok)
		return err;
	if (verify_dispute(msg, n, out, &err, d))
		return err;
	if (verify_vary(msg, n, out, &err, d))
		return err;
	rba_detail_clear(d);
	err = evidence_check(msg, n, out->sig.trusted_comment, &out->audit, d);
	if (err == 0 && out->audit.log.present)
		return verify_log(pub, msg, n, out, d);
	if (err == 0) {
		out->kind = out->audit.is_evidence ? EVIDENCE_KIND_AUDIT
						   : EVIDENCE_KIND_SIGNED;
		out->valid = 1;
		return 0;
	}
	out->kind = EVIDENCE_KIND_AUDIT;
	if (err == RBA_E_NOMEM || err == RBA_E_NEWER || err == RBA_E_LIMIT)
		return err;
	return invalid(out, "contents", d->reason[0] ? d->reason : rba_strerror(err));
}
