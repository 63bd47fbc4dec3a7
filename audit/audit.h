/*
 * audit.h - the three verdicts (doc/design.md section 8): audit a
 * version against its pins, answer a disputed decision (dispute.h), and
 * keep every audit in the store's hash-chained history.
 *
 * audit_version does, in order, inside one read transaction (so every
 * byte it looks at comes from one state of the store):
 *   1. load the version, its pins and the policy in force;
 *   2. verify the stored artifact and the snapshot against their
 *      digests (a mismatch is tampering: not measured);
 *   3. capture the current environment and diff it, field by field,
 *      against the pinned record; compare code revision and trainer ABI;
 *   4. rebuild from the pins with the pinned trainer ABI;
 *   5. compare the rebuilt artifact's digest with the pinned one;
 *   6. score every case of the sample with the rebuilt model (its own
 *      preprocessing), verifying each chunk and the sample digest in the
 *      same pass: a mismatch anywhere discards every score;
 *   7. count flips (the rebuilt decision under the policy in force is
 *      not the stored decision), take the maximum score delta, and keep
 *      each flipped case with its distance to the nearest band edge;
 *   8. apply the near-threshold rule and the weak-evidence warning;
 *   9. decide the verdict with every reason;
 * then, in its own write transaction, appends the record (the JSON of
 * rebuild-audit-report(5)) to the history, also when step 1-6 found the
 * data tampered or unreadable (verdict "not-measured").
 *
 * Verdicts:
 *   bit-identical      the rebuilt artifact's digest is the pinned one,
 *                      it is the artifact that made the sample's stored
 *                      decisions, and the sample agrees with it within
 *                      the tolerance;
 *   metric-equivalent  another digest, but flips <= max_flips, every
 *                      score delta <= max_score_delta, and the near-
 *                      threshold rule does not apply;
 *   not-reproducible   anything else (reasons say what);
 *   not-measured       the audit could not answer (reasons say why).
 *
 * Links (what lies between the pins and the artifact), each reported as
 * changed, unchanged or unknown, with both sides:
 *   code_revision  the code that trained the artifact (the version's
 *                  provenance, else the pins' code_revision) vs this
 *                  binary (an exec version: its pinned commit);
 *   trainer_abi    the ABI in the stored artifact vs the ABI that rebuilt
 *                  it (the pinned one); the current default is shown;
 *   environment    the pinned environment record vs the current one,
 *                  with the fields that differ;
 *   config         the config hash of the pins that trained the artifact
 *                  (the version's provenance record, written by register
 *                  when it trained it for the version: register.h) vs
 *                  the config hash of the pins the version holds now.
 *                  Without provenance (an artifact registered from a file,
 *                  or an earlier store's record of another registration)
 *                  it is unknown, unless the rebuilt model's
 *                  shape (features, layers, classes) differs from the
 *                  stored one's, which only a config change can do;
 *   snapshot       the snapshot the artifact was trained on (provenance)
 *                  vs the pinned one.
 */
#ifndef RBA_AUDIT_H
#define RBA_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "audit/audit_pass.h"
#include "sample/sample.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/json.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "store/store.h"

struct trainer_kind; /* rebuild/rebuild.h */

#define AUDIT_RECORD_SCHEMA "rebuild-audit/audit/v1"
#define AUDIT_MAX_LISTED 1000 /* flipped cases listed in a record */
#define AUDIT_MAX_THREADS 64

enum audit_verdict {
	AUDIT_NOT_MEASURED = 0,
	AUDIT_BIT_IDENTICAL = 1,
	AUDIT_METRIC_EQUIVALENT = 2,
	AUDIT_NOT_REPRODUCIBLE = 3,
};

/* "bit-identical", ...; "not-measured" for AUDIT_NOT_MEASURED. */
const char *audit_verdict_name(int verdict);
/* 0 for the two reproducible verdicts, 1 not-reproducible, 2 otherwise. */
int audit_verdict_exit(int verdict);

/* Which policy judged the sample (declared.h). */
enum audit_judged_by {
	AUDIT_JUDGED_VERSION = 0, /* the version's, declared before it */
	AUDIT_JUDGED_SAMPLE = 1,  /* the sample's own: the version's is
				   * looser and was set after it */
	AUDIT_JUDGED_OPTION = 2,  /* --policy, given for this audit */
};

enum audit_link_state { AUDIT_LINK_SAME = 0, AUDIT_LINK_CHANGED = 1,
			AUDIT_LINK_UNKNOWN = 2 };

struct audit_link {
	int state;     /* enum audit_link_state */
	char *pinned;  /* the side that made the artifact (NULL: unknown) */
	char *current; /* the side that rebuilt it */
	char *note;    /* why unknown, or what shows the change (or NULL) */
};

struct audit_env_field {
	char *key, *pinned, *current; /* NULL: absent on that side */
};

struct audit_options {
	const struct policy *policy; /* NULL: the version's */
	unsigned threads;	     /* scoring threads; 0 or 1: one */
	size_t max_listed;	     /* 0: AUDIT_MAX_LISTED */
	int no_record;		     /* 1: do not append to the history */
	/* Called from time to time while cases are scored (may be NULL). */
	void (*progress)(void *ctx, const char *version, uint64_t done,
			 uint64_t total);
	void *progress_ctx;
};

/* Everything an audit found; every string owned (audit_report_release). */
struct audit_report {
	char *version;
	int64_t time;
	int verdict;	 /* enum audit_verdict */
	int exit_status; /* audit_verdict_exit(verdict) */
	size_t nreasons, nwarnings;
	char **reasons, **warnings;
	char *error_what; /* not measured: what failed ("tampered", ...) */

	/* inputs */
	char *pins_text, *policy_text;
	struct rba_digest policy_digest;
	int policy_from_version;
	int has_config_registered;
	struct rba_digest config_registered, config_current;
	struct rba_digest snapshot;
	struct rba_digest artifact_pinned; /* the version's (= the pins') */
	/* The artifact that made the sample's stored decisions (the one
	 * the version held when the sample was added). */
	int has_decisions;
	struct rba_digest artifact_decisions;
	int has_rebuilt;
	struct rba_digest artifact_rebuilt;
	int artifact_verified, snapshot_verified, sample_verified;

	/* links */
	struct audit_link code_revision, trainer_abi, environment, config,
		snapshot_link;
	uint32_t abi_pinned, abi_artifact, abi_rebuilt, abi_current;
	char *env_pinned_text, *env_current_text;
	struct rba_digest env_pinned, env_current;
	size_t nenv_fields;
	struct audit_env_field *env_fields;

	/* The version record and sample judged, as the store held them
	 * (has_version 0: no such version).  judged: audit_version made
	 * this report, and its record is appended only while the store
	 * still holds these (audit_record_append). */
	int oom; /* a reason or warning could not be kept: not recorded */
	/* A rebuilt artifact that is not the pinned one: its bytes, kept
	 * as an artifact blob of the store (its digest, artifact_rebuilt,
	 * names it in the record) by audit_record_append in the record's
	 * transaction, so that `diff --store` can show where it differs;
	 * kept: it is in the store (put now, or already there). */
	uint8_t *rebuilt_bytes;
	size_t rebuilt_len;
	int rebuilt_kept;
	int judged;
	int has_version;
	struct rba_digest judged_artifact, judged_snapshot, judged_pins;
	int has_version_policy;
	struct rba_digest version_policy;
	/* Which policy judged (enum audit_judged_by), since when it was
	 * declared for the sample (has_declared_at), and whether it was an
	 * ad hoc --policy other than the version's declared one. */
	int judged_by;
	int has_declared_at;
	int64_t declared_at;
	int ad_hoc;
	int64_t registered_at;
	int64_t sample_added;

	/* sample */
	int has_sample;
	struct rba_digest sample_digest;
	int has_sample_policy;
	struct rba_digest sample_policy;
	int sample_scored_by; /* enum sample_scored_by */
	uint64_t cases, flips, near_cases, weak_band_cases;
	uint64_t policy_disagreements; /* stored decisions the policy in
					* force does not give their stored
					* scores */
	double max_delta;
	char *max_delta_case;
	/* Stored scores that are not the rebuilt model's at its precision
	 * (audit_pass.h, audit_tally.off), under the sample's declared
	 * logging precision (has_score_precision 0: none, 0 applied). */
	int has_score_precision;
	double score_precision;
	uint64_t scores_off;
	char *scores_off_case;
	size_t nlisted;
	struct audit_flip *listed; /* the first nlisted flips, stored order */
	int sparse_scoring;
	unsigned threads;

	/* rebuild */
	double val_accuracy, val_loss;

	/* The version's trainer kind once rebuilt (rebuild/rebuild.h),
	 * else NULL; for an exec version, what the rebuild ran, where. */
	const struct trainer_kind *kind;
	char *exec_repository, *exec_command; /* command: JSON array text */
	char exec_commit[41], exec_tree[41];
	int exec_exit;
	double exec_seconds;
	struct rba_digest exec_stdout, exec_stderr;

	/* timings, seconds: t_score is the wall time of the pass over the
	 * sample (read, verify, decompress, score, compare); t_scoring the
	 * time spent decoding, scoring and comparing (summed over threads) */
	double t_verify, t_rebuild, t_score, t_scoring, t_total;
	uint64_t history_id;
	struct rba_digest history_digest;
	int recorded;
};

void audit_report_release(struct audit_report *r);

/*
 * Makes r not measured: verdict AUDIT_NOT_MEASURED, exit status 2,
 * error_what what ("tampered" for RBA_E_TAMPERED), and d's reason (else
 * err's text) added to the reasons.
 */
void audit_not_measured(struct audit_report *r, const char *what, int err,
			const struct rba_detail *d);

/*
 * Audits version (steps above) and fills *r.  Returns 0 when a verdict
 * was reached (r->verdict bit-identical, metric-equivalent or
 * not-reproducible) and recorded (unless o->no_record).  Otherwise an
 * error: r->verdict is AUDIT_NOT_MEASURED with the reason in
 * r->reasons and d (RBA_E_NOTFOUND: no such version or no sample, and
 * then nothing is recorded; RBA_E_TAMPERED naming what was tampered
 * with; RBA_E_CORRUPT; RBA_E_SCHEMA: no policy, or one that cannot
 * judge the sample; RBA_E_NOTFOUND also when the sample's own policy
 * would judge it and is not kept (declared.h); RBA_E_UNSUPPORTED: a
 * pinned trainer ABI this build lacks; the rebuild's errors;
 * RBA_E_NOMEM; the store's errors).  A sample case the rebuilt model
 * cannot take is a reason of a not-reproducible verdict, not an error.
 * A verdict that could not be recorded returns the store's error with
 * r->verdict kept and r->recorded 0; one whose version changed while it
 * was audited is not measured, with RBA_E_BUSY (audit_record_append).
 */
int audit_version(struct store *s, const char *version,
		  const struct audit_options *o, struct audit_report *r,
		  struct rba_detail *d);

/*
 * What an audit stands on before it appends to the history, in a read
 * transaction of s: the whole chain (store_history_verify), its log
 * recomputed from the records (store_tlog_verify) and every
 * run record's seal (a record that no longer reads under its id is
 * named here, where a lookup by id would only miss it).  0; otherwise
 * the error with d->reason saying "the history is broken: ..." or
 * "damaged records: ...", then what to run.
 */
int audit_history_check(struct store *s, struct rba_detail *d);

/*
 * Appends r's record (audit_report_json) to the history in its own
 * write transaction; sets r->history_id, r->history_digest, r->recorded.
 * For a report of audit_version (r->judged), the same transaction first
 * reads the version record: when it is no longer the one the audit
 * judged (another registration, artifact,
 * snapshot or pins; another sample; another policy of the version's
 * when the audit used it), nothing is appended, r becomes not measured
 * ("changed") and RBA_E_BUSY is returned with a reason that says to
 * rerun.  Called by audit_version; public for tests.  The store's
 * errors.
 */
/*
 * The two artifacts `diff --store` compares for an audit of version
 * (audit_id 0: the newest audit record of the version that names a
 * rebuilt artifact): *a the pinned artifact, or, when the rebuild is the
 * pinned one but the sample's stored decisions were made by another,
 * that other (*a_is_decisions 1); *b the rebuilt artifact.  *id gets the
 * record.  0; RBA_E_NOTFOUND (no such record, none naming a rebuilt
 * artifact); RBA_E_SCHEMA (the record is not an audit of version);
 * the store's errors.
 */
int audit_diff_pair(struct store *s, const char *version, uint64_t audit_id,
		    struct rba_digest *a, struct rba_digest *b, int *a_is_decisions,
		    uint64_t *id, struct rba_detail *d);

int audit_record_append(struct store *s, struct audit_report *r,
			struct rba_detail *d);

/*
 * The record of r: one JSON object, the schema of
 * rebuild-audit-report(5), AUDIT RECORDS.  Allocation failure:
 * rba_buf_status(out).
 */
void audit_report_json(const struct audit_report *r, struct rba_buf *out);

/*
 * Whether rec, a parsed audit record, is of an ad hoc audit: its
 * policy.ad_hoc is true, or, in a record written before it was said,
 * its policy came from --policy (policy.source "option": perhaps the
 * declared one, never taken for the version's audit, as export passes
 * it over).  1 or 0 (0 for any record that is not an audit's).
 */
int audit_record_is_ad_hoc(const struct rba_json_value *rec);

#endif
