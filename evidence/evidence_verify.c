/*
 * evidence_verify.c - the offline check of a signed file: its signature,
 * then what it is and whether its contents hold (evidence/evidence.h).
 */
#include "evidence/evidence.h"

#include <stdio.h>
#include <string.h>

#include "common/dsse.h"
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
verify_dispute(const void *msg, size_t n, const char *tc,
	       struct evidence_verification *out, int *err, struct rba_detail *d)
{
	int is_dispute = 0, e;

	rba_detail_clear(d);
	e = dispute_evidence_check(msg, n, tc, &is_dispute,
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
verify_vary(const void *msg, size_t n, const char *tc,
	    struct evidence_verification *out, int *err, struct rba_detail *d)
{
	int is_vary = 0, e;

	rba_detail_clear(d);
	e = vary_evidence_check(msg, n, tc, &is_vary,
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

/* What a file whose signature holds says, and whether it holds; tc the
 * trusted comment (NULL: none, the statement signed as a whole). */
static int
verify_contents(const struct sign_pubkey *pub, const void *msg, size_t n,
		const char *tc, struct evidence_verification *out,
		struct rba_detail *d)
{
	int err = 0;

	if (verify_dispute(msg, n, tc, out, &err, d))
		return err;
	if (verify_vary(msg, n, tc, out, &err, d))
		return err;
	rba_detail_clear(d);
	err = evidence_check(msg, n, tc, &out->audit, d);
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
	return verify_contents(pub, msg, n, out->sig.trusted_comment, out, d);
}

/* The envelope's signature by pub: 0 and out->signature_ok, 0 and an
 * answer of no, or an error. */
static int
verify_envelope(const struct sign_pubkey *pub, int keyid_known,
		const struct dsse_envelope *e, struct evidence_verification *out)
{
	char id[SIGN_KEYID_TEXT_LEN + 1], why[EVIDENCE_REASON_MAX];
	size_t which = 0, tried = 0, off = 0;
	int err;

	if (strcmp(e->type, DSSE_TYPE_INTOTO) != 0) {
		snprintf(why, sizeof(why), "the envelope's payloadType is '%.256s', "
			 "not '%s'", e->type, DSSE_TYPE_INTOTO);
		for (char *q = why; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
		return invalid(out, "payload type", why);
	}
	sign_keyid_format(pub->keyid, id);
	err = dsse_envelope_verify(e, pub->pk, keyid_known ? id : NULL, &which, &tried);
	if (err == RBA_E_BADSIG && tried == 0) {
		for (size_t i = 0; i < e->nsigs && off < sizeof(why); i++)
			off += (size_t)snprintf(why + off, sizeof(why) - off, "%s%.64s",
						i ? ", " : "", e->sigs[i].keyid);
		snprintf(out->reason, sizeof(out->reason), "signed by key %.900s, not "
			 "by key %s", why, id);
		for (char *q = out->reason; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
		out->valid = 0;
		out->failed = "key id";
		return 0;
	}
	if (err == RBA_E_BADSIG)
		return invalid(out, "signature", keyid_known ?
			       "the signature does not verify over the envelope's "
			       "payload (PAE): the payload or its type was changed "
			       "after signing" :
			       "no signature verifies with the verifier key's key "
			       "over the envelope's payload (PAE)");
	if (err != 0)
		return err;
	snprintf(out->dsse_keyid, sizeof(out->dsse_keyid), "%s", e->sigs[which].keyid);
	if (keyid_known)
		memcpy(out->sig.keyid, pub->keyid, SIGN_KEYID_LEN);
	out->signature_ok = 1;
	return 0;
}

int
evidence_verify_dsse(const struct sign_pubkey *pub, int keyid_known,
		     const void *env, size_t n, uint8_t **payload, size_t *pn,
		     struct evidence_verification *out, struct rba_detail *d)
{
	struct dsse_envelope e;
	int err;

	memset(out, 0, sizeof(*out));
	out->dsse = 1;
	*payload = NULL;
	*pn = 0;
	rba_detail_clear(d);
	if ((err = dsse_envelope_parse(env, n, &e, d)) != 0) {
		if (err == RBA_E_NOMEM)
			return err;
		invalid(out, "malformed envelope", d->reason);
		out->dsse = 1;
		return 0;
	}
	if ((err = verify_envelope(pub, keyid_known, &e, out)) != 0 ||
	    !out->signature_ok) {
		dsse_envelope_release(&e);
		return err;
	}
	*payload = e.payload;
	*pn = e.n;
	e.payload = NULL;
	dsse_envelope_release(&e);
	err = verify_contents(pub, *payload, *pn, NULL, out, d);
	if (err == 0 && out->valid && out->kind == EVIDENCE_KIND_SIGNED)
		return invalid(out, "contents", "the envelope's statement is no "
			       "evidence of rebuild-audit (no audit, dispute or "
			       "variation predicate)");
	return err;
}
