/*
 * evidence.h - signed, self-contained compliance evidence:
 * one audit record of the store's history rendered as an in-toto
 * Statement v1, signed with minisign's format (common/sign.h), and the
 * offline check of such a file.  The format is documented for auditors
 * in rebuild-audit-evidence(5); fixtures/evidence/predicate.schema.json
 * is its JSON schema.
 *
 * The statement (keys always in this order, two-space indentation, one
 * member per line, empty containers as {} and [], strings escaped as
 * common/json.h writes them, numbers in rba_json_fmt_double's shortest form,
 * a final newline):
 *
 *   _type          "https://in-toto.io/Statement/v1"
 *   subject        [{"name": "<version>.artifact",
 *                    "digest": {"sha256": "<hex of the pinned artifact>"}}]
 *   predicateType  EVIDENCE_PREDICATE_TYPE
 *   predicate      version, verdict, guarantee, not_guaranteed, reasons,
 *                  warnings, audit (id, time, store id, chain digests,
 *                  the record's digest and exit status), history (the
 *                  head of the chain when exported: id and digest; the
 *                  version's earlier audit records since the judging
 *                  policy was declared), artifact (pinned, rebuilt, the
 *                  one that made the sample's stored decisions, and
 *                  whether that is the rebuilt one), pins, policy (who
 *                  judged, declared when, ad hoc or not), snapshot,
 *                  sample (the declared logging precision), environment,
 *                  links (code_revision, trainer_abi, config, snapshot),
 *                  results (counts, the stored scores off the logging
 *                  precision, every listed flipped case), rebuild, tool,
 *                  exported_by, inputs_included, record (the history
 *                  record's exact text)
 *
 * Everything in the predicate comes from one history record and its
 * chain entry, plus the store id, the head of the chain, the version's
 * earlier audit records, the exporting tool's version and, on request,
 * the stored inputs of the flipped cases: exporting the same record
 * twice with the same binary, while the history has not grown, gives
 * the same bytes.  The times in it are the history's: the audit's, the
 * declaration's and the earlier audits'.
 *
 * EVIDENCE_PREDICATE_TYPE_V1 files (without the sample claim, who
 * judged and the earlier audits) are read and checked as they always
 * were; export writes EVIDENCE_PREDICATE_TYPE, or with
 * EVIDENCE_RENDER_CASES EVIDENCE_PREDICATE_TYPE_V3: the same predicate
 * and results.cases, every case of the sample in stored order with its
 * id, stored score, rebuilt score and stored decision (the rebuilt
 * scores computed at export by the artifact the record names as
 * rebuilt, which must be in the store), which verify holds to the
 * counts, the largest delta and the listed flipped cases.
 */
#ifndef RBA_EVIDENCE_H
#define RBA_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "common/dsse.h"
#include "common/sign.h"
#include "evidence/vary_evidence.h"
#include "common/buf.h"
#include "common/note.h"
#include "common/digest.h"
#include "common/rba.h"
#include "store/store.h"

#define EVIDENCE_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define EVIDENCE_PREDICATE_TYPE "https://rebuild-audit.dev/audit-evidence/v2"
#define EVIDENCE_PREDICATE_TYPE_V1 "https://rebuild-audit.dev/audit-evidence/v1"
/* v2 and every case of the sample with its stored and rebuilt score and
 * stored decision (results.cases), written by export --cases only. */
#define EVIDENCE_PREDICATE_TYPE_V3 "https://rebuild-audit.dev/audit-evidence/v3"
/* v2's members, or v3's under --cases, and log: the checkpoint of the
 * history's transparency log and the audit record's inclusion proof
 * (evidence_tlog.c); what export writes. */
#define EVIDENCE_PREDICATE_TYPE_V4 "https://rebuild-audit.dev/audit-evidence/v4"
/* Any predicateType starting with this is a version of this format. */
#define EVIDENCE_PREDICATE_PREFIX "https://rebuild-audit.dev/audit-evidence/"
/* Every trusted comment export writes starts with this. */
#define EVIDENCE_COMMENT_PREFIX "rebuild-audit evidence: "
#define EVIDENCE_SIG_SUFFIX ".minisig"
#define EVIDENCE_MAX_BYTES (64u << 20) /* an evidence file (RBA_JSON_MAX_TEXT) */
#define EVIDENCE_PATH_MAX 4000	       /* bytes in FILE */
#define EVIDENCE_TEXT_MAX 2048	       /* a guarantee sentence */

/*
 * What a format 4 file's log member says (predicate.log): the
 * checkpoint's origin, size and signature lines, the audit record's
 * leaf and proof, and what was checked of them.
 */
#define EVIDENCE_LOG_SIGNERS_MAX 8
struct evidence_log_summary {
	int present;		/* the file has a log member */
	char origin[NOTE_NAME_MAX + 1];
	uint64_t tree_size, index;
	size_t proof_len;	/* hashes in the inclusion proof */
	int proof_holds;	/* it checks against the checkpoint's root */
	size_t nsigners;	/* signature lines (the first ..._MAX kept) */
	struct {
		char name[NOTE_NAME_MAX + 1];
		uint32_t hash;
		int by_signer;	/* a valid signature by the file's key */
	} signers[EVIDENCE_LOG_SIGNERS_MAX];
};

/*
 * What an evidence file says, in brief: filled by evidence_render and
 * evidence_check.
 */
struct evidence_summary {
	int is_evidence; /* evidence_check: 0 when the file is not one */
	char version[STORE_VERSION_NAME_MAX + 1];
	char verdict[24];
	uint64_t audit_id;
	int64_t time;	 /* the audit's, unix seconds */
	char time_text[32]; /* "2026-11-29T08:00:00Z" */
	struct rba_digest artifact; /* the subject */
	uint64_t cases, flips;
	int inputs_included;
	char guarantee[EVIDENCE_TEXT_MAX];
	uint64_t head_id;	 /* the history head when exported */
	struct rba_digest head;
	int format;		 /* 1, 2 or 3: the predicate's version */
	/* The policy that judged: "version", "sample", "option" or "" (the
	 * record does not say), since when ("" unknown), and whether it was
	 * ad hoc (-1: the record does not say). */
	char judged_by[16], declared_at[32];
	int ad_hoc;
	/* Format 2: the version's earlier audits listed, and how many of
	 * them did not reproduce or did not measure (ad hoc ones aside). */
	uint64_t earlier, earlier_failed;
	/* Format 4 (audit-evidence/v4): the log member. */
	struct evidence_log_summary log;
};

/*
 * Renders the evidence of history record audit_id (0: the newest audit
 * record of version that is not ad hoc, whatever its verdict) of store
 * s, in one read transaction, appending the statement to out and
 * filling *sum (may be NULL).  The record must be an audit record (not
 * one that register --replace or policy set appends: those are passed
 * over by 0 and refused by id), of version, and a measured one:
 * bit-identical, metric-equivalent or not-reproducible; a not-measured
 * record attests nothing and is refused (the newest audit is not
 * skipped for an older one, so a recent failure is never hidden behind
 * an older verdict).  0 passes over ad hoc records (policy.ad_hoc true,
 * or, in a record written before it was said, policy.source "option"):
 * they are not the version's audit; by id one is exported, saying so.
 * The statement carries the head of the history chain as it is in that
 * transaction, and every audit record of version before audit_id since
 * the judging policy was declared (every one when the record does not
 * say since when).
 * Nothing is checked for consistency here: evidence_export does.  With
 * include_inputs, each listed flipped case gets its stored inputs
 * ("inputs": column name to exact text, in the sample's column order),
 * read from the version's sample, which must still be the one audited.
 * Before anything is rendered the whole history chain is verified.
 * flags: EVIDENCE_RENDER_INPUTS (include_inputs above; 1, as callers
 * have always passed it) and EVIDENCE_RENDER_CASES (format 3 with every
 * case: the sample still the one audited, the policy one of decision
 * bands, and the rebuilt artifact in the store, or RBA_E_NOTFOUND /
 * RBA_E_SCHEMA saying which is not so).
 *
 * Returns 0; RBA_E_NOTFOUND (no such record, no audit record of
 * version, the sample or a case gone; d->reason says which);
 * RBA_E_SCHEMA (the record is not an audit record, is of another
 * version, was not measured, cannot be read as an audit record, or the
 * sample changed since the audit); RBA_E_NEWER (a record
 * schema newer than this tool); RBA_E_TAMPERED (the history chain or a
 * read of the sample); RBA_E_LIMIT (the statement would be over
 * EVIDENCE_MAX_BYTES); RBA_E_NOMEM; the store's errors.
 */
#define EVIDENCE_RENDER_INPUTS 1
#define EVIDENCE_RENDER_CASES 2
int evidence_render(struct store *s, const char *version, uint64_t audit_id,
		    int flags, struct rba_buf *out,
		    struct evidence_summary *sum, struct rba_detail *d);

/*
 * The log member of format 4 (audit-evidence/v4, what export writes):
 * the checkpoint of the history's transparency log (evidence/
 * checkpoint.h) and the audit record's inclusion proof in it.  The
 * checkpoint is made of the whole history in the render's transaction
 * (its size the head's id), signed by key under origin (NULL: the
 * store's default), or, given as checkpoint, one signed by key under its
 * origin whose tree holds the record and is this store's.
 */
struct checkpoint;
struct evidence_log_request {
	const struct sign_seckey *key;
	const char *origin;
	const struct checkpoint *checkpoint;
};

/*
 * evidence_render with the log member when log is not NULL: the same,
 * and RBA_E_SCHEMA when a given checkpoint is not signed by the key,
 * does not hold the record or is not of this store's log; the errors
 * of store_tlog_open; RBA_E_CRYPTO.
 */
int evidence_render_log(struct store *s, const char *version, uint64_t audit_id,
			int flags, const struct evidence_log_request *log,
			struct rba_buf *out, struct evidence_summary *sum,
			struct rba_detail *d);

/*
 * The trusted comment for an evidence file named file (only its last
 * path component is used; bytes below 0x20 and 0x7f become '?'):
 *   rebuild-audit evidence: version V verdict X audit N at TIME file NAME
 * written NUL-terminated into out (outlen bytes).  0 or RBA_E_LIMIT (does
 * not fit, or over SIGN_TRUSTED_COMMENT_MAX).
 */
int evidence_trusted_comment(const struct evidence_summary *sum,
			     const char *file, char *out, size_t outlen);

/*
 * Puts an evidence file and its signature in place: path and
 * path.minisig.
 *
 * Both are written to temporaries beside them ("<name>.tmp-<pid>-<n>",
 * mode 0644 less the umask) and synced before either name changes.
 * Then, with force, an old path.minisig is removed (and the directory
 * synced); the evidence is renamed to path, then the signature to
 * path.minisig, the directory synced after each.  So a crash or kill at
 * any point leaves, under the two names, either the old pair, the old
 * evidence alone, the new evidence alone, or the new pair: never a torn
 * file and never a signature beside evidence it was not made for.
 * Without force, neither name may exist (RBA_E_EXISTS, d->file the one
 * that does; nothing is written): the files are linked into place, so an
 * existing name, even one made at the same moment, is never replaced.
 * Writers into one directory take turns (an advisory flock of the
 * directory, where the file system has locks), so two forced exports to
 * one name cannot interleave.  Stale temporaries of killed runs (their
 * process gone) are removed first.  On error nothing of this call is
 * left under either name.
 *
 * Returns 0; RBA_E_EXISTS; ENAMETOOLONG (path over EVIDENCE_PATH_MAX);
 * EISDIR; an errno of the file system (ENOENT for a missing directory,
 * ENOSPC, EACCES, ...); d->file names the file concerned.
 */
int evidence_write(const char *path, const void *doc, size_t n,
		   const void *sig, size_t siglen, int force,
		   struct rba_detail *d);

/* The parameters of evidence_export. */
struct evidence_request {
	const char *version;
	uint64_t audit_id;	/* 0: the newest record of version */
	const struct sign_seckey *key;
	const char *path;	/* FILE; the signature is FILE.minisig */
	int force;		/* replace an existing FILE and signature */
	int include_inputs;
	int include_cases;	/* format 3: every case's scores */
	/* The log member (format 4): the checkpoint's origin (NULL: the
	 * store's default), or a checkpoint to put in (NULL: one is made
	 * of the whole history, signed by key). */
	const char *origin;
	const struct checkpoint *checkpoint;
	/* A DSSE envelope (common/dsse.h) of the statement, payloadType
	 * DSSE_TYPE_INTOTO, signed by key, written to FILE alone (no
	 * FILE.minisig, no trusted comment) instead of the minisign pair. */
	int dsse;
};

struct evidence_result {
	struct evidence_summary sum;
	struct rba_digest file_digest; /* SHA-256 of the evidence file */
	size_t size;		       /* its bytes */
	char trusted_comment[SIGN_TRUSTED_COMMENT_MAX + 1];
};

/*
 * Renders the statement (evidence_render), checks it with evidence_check
 * (a record that would not pass is refused with RBA_E_SCHEMA and nothing
 * is written: export never signs what verify rejects), signs it with
 * rq->key under the trusted comment of evidence_trusted_comment, and
 * writes both files (evidence_write).  With rq->dsse the statement is
 * wrapped in a DSSE envelope signed by rq->key instead and the envelope
 * written to rq->path alone (rba_file_write_output: an existing file
 * only with force); res->file_digest and size are then the envelope's.
 * res is filled on success.  The errors of those functions;
 * RBA_E_USAGE for a missing request field; ENAMETOOLONG.
 */
int evidence_export(struct store *s, const struct evidence_request *rq,
		    struct evidence_result *res, struct rba_detail *d);

/*
 * Checks the contents of a file whose signature has been verified: n
 * bytes at p, trusted_comment the verified trusted comment (NULL: none).
 *
 * A file that is not JSON, or JSON whose predicateType does not start
 * with EVIDENCE_PREDICATE_PREFIX, is not evidence: 0 with
 * sum->is_evidence 0 -- unless the trusted comment starts with
 * EVIDENCE_COMMENT_PREFIX, which claims evidence (RBA_E_SCHEMA).  An
 * evidence file is checked in this order, the first failure named in
 * d->reason:
 *   1. form: UTF-8, no duplicate keys, exactly the keys and types of
 *      rebuild-audit-evidence(5), canonical bytes (as export writes
 *      them);
 *   2. texts: the pins, policy and both environment records hash to the
 *      digests recorded beside them, and the record to its digest;
 *   3. pins: they parse, name the version, and pin the subject's
 *      artifact, the snapshot, the environment and the config hash;
 *      the subject is "<version>.artifact"; the policy parses and its
 *      tolerance is the one stated;
 *   4. the environment diff is the field diff of the two records;
 *   5. the verdict agrees with the digests, the counts, the tolerance
 *      and the near-threshold rule: bit-identical needs the rebuilt
 *      artifact to be the pinned one and, when the record names it, the
 *      one that made the sample's stored decisions, and, where the
 *      count is known, no stored score off the declared logging
 *      precision; metric-equivalent needs another rebuilt artifact, or
 *      the pinned one with decisions made by another, or (format 2) the
 *      pinned one that made them with stored scores off; flipped cases
 *      are flips, their rebuilt decisions are the policy's, their
 *      deltas within the maximum; the exit status is the verdict's;
 *      the guarantee sentences are the verdict's; (format 2) the
 *      earlier audits are in history order, before the record, since
 *      the declaration, each with a verdict and the exit status it
 *      gives;
 *   6. the chain digest is the one the record, its id, time, version
 *      and previous digest give, the embedded record is consistent by
 *      itself (evidence_record_check), the predicate agrees with it
 *      (the decisions' artifact included), and the history head is not
 *      older than the record (and is the record's chain digest when it
 *      is the record);
 *   7. the trusted comment, when it claims evidence, names the same
 *      version, verdict, audit id and time (not the file name: a
 *      received file may be renamed).
 * Offline nothing can say whether the earlier audits listed are all the
 * history holds: the signature vouches for that, as for the head.
 * Returns 0 (consistent, or not evidence); RBA_E_SCHEMA (malformed or
 * inconsistent); RBA_E_TAMPERED (a text or the record does not hash to
 * its digest); RBA_E_NEWER (a later version of this predicate: cannot
 * check); RBA_E_LIMIT (over EVIDENCE_MAX_BYTES or too deeply nested:
 * cannot check); RBA_E_NOMEM.  sum (may be NULL) is filled when 0.
 */
int evidence_check(const void *p, size_t n, const char *trusted_comment,
		   struct evidence_summary *sum, struct rba_detail *d);

/*
 * Checks one audit record (rec, n bytes: the JSON of
 * rebuild-audit-report(5), AUDIT RECORDS, as the history holds it, a
 * worker's extra member allowed) for the consistency every signed
 * evidence file needs, without a store: the rules export, verify,
 * `history import` and `store check` apply alike.  A not-measured
 * record needs a reason and exit status 2.  A measured one: the pins,
 * policy and environment texts hash to their digests; the pins name
 * the version and pin the artifact, snapshot, environment, trainer ABI
 * and config hash stated; the environment diff is the records'; the
 * verdict agrees with the digests, the counts, the tolerance, the
 * near-threshold rule and the sample claim (evidence_check, check 5);
 * the exit status is the verdict's (2 for a yes that was ad hoc); who
 * judged agrees with the policy's source and ad hoc, and the policy was
 * declared no later than the audit.  Members a record written before
 * them lacks are not held against it.
 * Returns 0; RBA_E_SCHEMA (not an audit record that can be read, or
 * inconsistent: d->reason names the first rule that fails);
 * RBA_E_TAMPERED (a text does not hash to its digest); RBA_E_NEWER (an
 * audit record schema newer than this tool: cannot check);
 * RBA_E_NOMEM.
 */
int evidence_record_check(const void *rec, size_t n, struct rba_detail *d);

/*
 * One history record as `store check` reads it (sample/integrity.h's
 * history_record hook): an audit record (any record not of another
 * kind of this tool: register, policy-set) by evidence_record_check,
 * d->reason then starting "audit record N of version 'V' is
 * inconsistent: " (or "cannot be checked: " for RBA_E_NEWER); other
 * kinds hold.  0 or evidence_record_check's errors.
 */
int evidence_history_record_check(const struct store_history_entry *e,
				  struct rba_detail *d);

/*
 * The checkpoint a format 4 file carries (predicate.log.checkpoint),
 * read into *out (checkpoint_release it).  0; RBA_E_NOTFOUND (the file
 * has no log member); RBA_E_SCHEMA (no evidence, or the member is not a
 * checkpoint); RBA_E_NOMEM.
 */
int evidence_log_checkpoint(const void *msg, size_t n, struct checkpoint *out,
			    struct rba_detail *d);

/* What a signed file is, as evidence_verify reads it. */
enum evidence_kind {
	EVIDENCE_KIND_UNKNOWN = 0, /* not read: the signature does not hold */
	EVIDENCE_KIND_SIGNED,	   /* a signed file that is no evidence */
	EVIDENCE_KIND_AUDIT,	   /* audit evidence (evidence_check) */
	EVIDENCE_KIND_DISPUTE,	   /* dispute evidence (dispute_evidence.h) */
	EVIDENCE_KIND_VARY,	   /* a variation report (vary_evidence.h) */
};

#define EVIDENCE_REASON_MAX 1024 /* bytes of a verification's reason */

/* The answer of evidence_verify; caller-owned (about 11 KiB). */
struct evidence_verification {
	int valid;		  /* 1: the signature and the contents hold */
	enum evidence_kind kind;  /* what the file is, or claims to be */
	int signature_ok;	  /* the signature holds: sig is filled */
	/* When not valid, the check that failed: "malformed signature",
	 * "key id", "signature", "trusted comment", "contents" or "log" (a
	 * format 4 file whose checkpoint its own key did not sign) (a static
	 * string), and why, one line. */
	const char *failed;
	char reason[EVIDENCE_REASON_MAX];
	struct sign_check sig;	      /* key id, trusted comment, prehashed */
	struct evidence_summary audit; /* kind AUDIT and valid */
	/* kind DISPUTE and valid: what the dispute evidence says */
	char dispute_version[256], dispute_case[256], dispute_answer[256];
	struct vary_evidence_summary vary; /* kind VARY and valid */
	/* evidence_verify_dsse: the file is an envelope; the keyid of the
	 * signature that verified ("" when it named none). */
	int dsse;
	char dsse_keyid[DSSE_KEYID_MAX + 1];
};

/*
 * The offline check of a signed file: msg (n bytes) and its minisign
 * signature file (siglen bytes at sig) against pub, then, once the
 * signature holds, its contents: dispute evidence by
 * dispute_evidence_check, a variation report by vary_evidence_check,
 * else audit evidence by evidence_check, else
 * a signed file that is no evidence (kind SIGNED: only its signature
 * was checked).  signame names the signature file in reasons.
 *
 * Returns 0 when it answered, *out saying whether the file holds
 * (valid) and if not which check failed and why: a signature file that
 * does not parse ("malformed signature"; the reason names signame and
 * its line), a signature by another key or one that does not verify
 * (sign_file_verify's failure), contents that are not consistent
 * ("contents"; the kind is what the file claims to be).  Otherwise it
 * could not answer: with out->signature_ok 0, the other errors of
 * sign_file_verify; with out->signature_ok 1, the contents could not be
 * checked: RBA_E_NEWER (a later format), RBA_E_NOMEM, and for audit
 * evidence RBA_E_LIMIT; d says why.
 */
int evidence_verify(const struct sign_pubkey *pub, const void *msg, size_t n,
		    const void *sig, size_t siglen, const char *signame,
		    struct evidence_verification *out, struct rba_detail *d);

/*
 * The offline check of a DSSE envelope (common/dsse.h), env[0..n): the
 * envelope, its payloadType (DSSE_TYPE_INTOTO), a signature by pub over
 * PAE, then the statement it carries exactly as evidence_verify checks
 * a signed file's contents (with no trusted comment: the signature
 * covers the whole statement).  keyid_known: pub->keyid is the key's id
 * (a public key file); 0 for a key taken from a verifier key, whose
 * signatures are then tried whatever keyid they name.  The statement is
 * put in *payload (malloc'd, *pn bytes; the caller frees it, also when
 * out is not valid) for the checks beyond it (the log, an artifact).
 *
 * Returns 0 when it answered, *out saying whether the envelope holds
 * and if not which check failed: "malformed envelope" (not an envelope
 * that can be read: JSON, members, base64), "payload type", "key id"
 * (every signature names another key), "signature" (none verifies),
 * "contents" (as evidence_verify; a statement that is no evidence of
 * this tool is refused too).  Otherwise RBA_E_NOMEM, RBA_E_CRYPTO, or
 * the errors evidence_verify returns for contents it cannot check.
 */
int evidence_verify_dsse(const struct sign_pubkey *pub, int keyid_known,
			 const void *env, size_t n, uint8_t **payload, size_t *pn,
			 struct evidence_verification *out, struct rba_detail *d);

#endif
