/*
 * evidence_priv.h - what the four evidence files share; not a public
 * header (other modules use evidence.h).
 *
 * One model, struct ev, sits between the two JSON shapes: it is read
 * from an audit record (export) or from an evidence predicate (verify)
 * by evidence_read.c, and one function renders it (evidence_render.c).
 * Verify (evidence_check.c) therefore compares bytes rather than fields:
 * a file is in canonical form when rendering what was read from it gives
 * the file back, and its predicate agrees with its embedded record when
 * rendering what was read from the record gives the file back too.
 * Between those two comparisons sit the checks that say, in words, which
 * digest, count or sentence is wrong.  evidence_export.c signs and
 * places the pair.
 *
 *   evidence_read.c    a parsed record or statement -> struct ev
 *   evidence_render.c  struct ev -> the canonical bytes; what export
 *                      computes; rendering a record from the store
 *   evidence_check.c   evidence_check: the seven checks
 *   evidence_export.c  the trusted comment, writing the pair, export
 */
#ifndef RBA_EVIDENCE_PRIV_H
#define RBA_EVIDENCE_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "evidence/evidence.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/rba.h"
#include "policy/policy.h"

/* Every schema of an audit record starts with this (rebuild-audit-report(5)). */
#define EVIDENCE_AUDIT_SCHEMA_PREFIX "rebuild-audit/audit/"

/* ---- the model ---------------------------------------------------------- */

/* A string view; s NULL is JSON null.  n may cover NUL bytes. */
struct sv {
	const char *s;
	size_t n;
};

struct ev_link {
	struct sv state, pinned, current, note;
};

struct ev_field {
	struct sv key, pinned, current;
};

struct ev_flip {
	struct sv id, stored_decision, rebuilt_decision;
	double stored_score, rebuilt_score, margin, rebuilt_margin, edge;
	const struct rba_json_value *inputs; /* object of strings, or NULL */
};

/* One case of the sample (format 3, results.cases); own: the texts'
 * storage when export made them (NULL when they view a parsed tree). */
struct ev_case {
	struct sv id, stored_decision;
	double stored_score, rebuilt_score;
	char *own;
};

struct ev_lib {
	struct sv name, value;
};

/* One earlier audit record of the version (predicate.history.
 * earlier_audits, format 2): texts copied, so that both shapes and the
 * store fill it alike.  ad_hoc -1: the record does not say. */
struct ev_earlier {
	double id, exit_status;
	char time[32], verdict[24];
	char policy[RBA_DIGEST_TEXT_LEN + 1]; /* "" for null */
	int ad_hoc;
};

/* The formats of the predicate (EVIDENCE_PREDICATE_TYPE_V1, _TYPE). */
#define EV_FORMAT_V1 1
#define EV_FORMAT_V2 2
#define EV_FORMAT_V3 3 /* v2 and results.cases */
/* Format 4 is v2 or v3 (format 2 or 3 below) with log set. */

/* Numbers: NaN is JSON null. */
struct ev {
	/* EV_FORMAT_V1 or EV_FORMAT_V2: which members are rendered and
	 * which sentences the guarantee has (rebuild-audit-evidence(5)). */
	int format;
	struct sv subject_name, subject_sha256;
	struct sv version, verdict, guarantee, not_guaranteed;
	struct sv *reasons, *warnings;
	size_t nreasons, nwarnings;
	/* audit */
	double id, exit_status;
	struct sv time, store_id, prev, chain, record_digest, record_schema;
	struct sv rec_time; /* the record's own "time" (record side only) */
	/* artifact; decisions: the one that made the sample's stored
	 * decisions, null when the record does not say (records written
	 * before it did) */
	struct sv art_pinned, art_rebuilt, art_decisions;
	int bit_identical, decisions_by_rebuilt, art_verified;
	/* the history head when exported (statement side; export sets it) */
	double head_id;
	struct sv head_digest;
	/* format 2, from the history when exported: the version's audit
	 * records before this one since earlier_since (the judging policy's
	 * declared_at; null: since the first), in history order (owned) */
	struct sv earlier_since;
	struct ev_earlier *earlier;
	size_t nearlier;
	/* pins */
	struct sv pins_digest, config_hash, config_trained, pins_text;
	/* policy; judged_by, declared_at null and ad_hoc -1 when the record
	 * does not say (records written before the declared-before rule) */
	struct sv pol_digest, pol_source, pol_rule, pol_text;
	struct sv judged_by, declared_at;
	int ad_hoc;
	double tol_delta, tol_flips, near_margin, min_near;
	int near_bits;
	/* snapshot, sample */
	struct sv snap_digest;
	int snap_verified;
	struct sv sample_digest, scored_by, sample_policy;
	int sample_verified;
	double cases;
	/* The sample claim: the logging precision declared with the sample
	 * and the stored scores off the rebuilt model's beyond it (NaN and
	 * null when the record does not say: written before they were
	 * counted). */
	double score_precision, scores_off;
	struct sv scores_off_case;
	/* environment */
	struct sv env_state, env_note, env_pinned_digest, env_pinned_record,
		env_current_digest, env_current_record;
	struct ev_field *diff;
	size_t ndiff;
	/* links */
	struct ev_link code, config, snaplink;
	struct sv abi_state, abi_note;
	double abi_pinned, abi_artifact, abi_rebuilt, abi_current;
	/* results */
	double flips, max_delta, near_cases, weak_cases, disagreements, listed;
	struct sv max_delta_case;
	struct ev_flip *flipped;
	size_t nflipped;
	/* format 3: every case; cases_view: the array is another ev's */
	struct ev_case *cases_list;
	size_t ncases_list;
	int cases_view;
	/* rebuild, tool, exporter */
	double val_acc, val_loss;
	struct sv tool_name, tool_version, tool_rev;
	double tool_abi;
	struct ev_lib *libs;
	size_t nlibs;
	struct sv exp_name, exp_version, exp_rev;
	/* An exec version's trainer (exec/exec.h): what ran, where;
	 * has_trainer 0 for this tool's own trainer (no such member). */
	int has_trainer;
	struct sv tr_kind, tr_repo, tr_commit, tr_tree, tr_sandbox, tr_profile,
		tr_stdout, tr_stderr;
	struct sv *tr_cmd;
	size_t ntr_cmd;
	double tr_exit, tr_seconds;
	int inputs_included;
	struct sv record;
	/* Format 4 (audit-evidence/v4): the log member: the checkpoint's
	 * signed note, the record's leaf index, the tree's size and the
	 * inclusion proof's hashes in base64 (evidence_tlog.c).  log_view:
	 * the proof array is another ev's. */
	int log, log_view;
	struct sv log_checkpoint;
	double log_index, log_size;
	struct sv *log_proof;
	size_t nlog_proof;
	char *log_own; /* export's storage of the texts */

	/* Storage for texts computed rather than read. */
	char b_subject_name[STORE_VERSION_NAME_MAX + 16];
	char b_subject_hex[2 * RBA_DIGEST_LEN + 1];
	char b_guarantee[EVIDENCE_TEXT_MAX], b_not[EVIDENCE_TEXT_MAX];
	char b_pins_digest[RBA_DIGEST_TEXT_LEN + 1];
	char b_record_digest[RBA_DIGEST_TEXT_LEN + 1];
	char b_prev[RBA_DIGEST_TEXT_LEN + 1], b_chain[RBA_DIGEST_TEXT_LEN + 1];
	char b_time[32], b_store_id[64];
	char b_head[RBA_DIGEST_TEXT_LEN + 1];
	char b_since[32];
	/* Inputs built by export (owned). */
	struct rba_json_value *inputs_owned;
	size_t ninputs_owned;
};

static inline struct sv
sv_c(const char *s)
{
	struct sv v = { s, s != NULL ? strlen(s) : 0 };
	return v;
}

static inline int
sv_eq(struct sv a, struct sv b)
{
	if (a.s == NULL || b.s == NULL)
		return a.s == NULL && b.s == NULL;
	return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
}

static inline int
sv_is(struct sv a, const char *s)
{
	return a.s != NULL && sv_eq(a, sv_c(s));
}

/* A C string for messages: the view without NUL bytes, or "null". */
static inline const char *
sv_show(struct sv a)
{
	return a.s == NULL ? "null" : a.s;
}

/*
 * Frees what e owns (its arrays and the inputs export built) and zeroes
 * it.  The texts e views are the caller's: a parsed tree or a record.
 */
void evidence_ev_release(struct ev *e);

/*
 * Appends the statement of e, every key in its place, in the layout of
 * rebuild-audit-evidence(5) (common/json.h's pretty layout, no newline
 * at the end).  Errors stay in b (rba_buf_status).
 */
void evidence_ev_render(const struct ev *e, struct rba_buf *b);

/*
 * Fill e from a parsed audit record (rebuild-audit-report(5)) of history
 * id, read by the record's own decoder (audit/record.h) and copied into
 * e, or from a parsed evidence statement (its predicate and subject).
 * e views strings inside the tree: it is valid while the tree is.  Stop
 * at the first missing or mistyped value: RBA_E_SCHEMA with d->reason
 * naming it; RBA_E_NEWER (a record schema newer than this tool);
 * RBA_E_NOMEM.  On error e may be partly filled: evidence_ev_release it.
 */
int evidence_ev_from_record(const struct rba_json_value *rec, uint64_t id,
			    struct ev *e, struct rba_detail *d);
int evidence_ev_from_statement(const struct rba_json_value *st, struct ev *e,
			       struct rba_detail *d);

/*
 * Fills what export computes rather than copies: the subject, the pins
 * digest, bit_identical and decisions_by_rebuilt, the policy's stated
 * numbers, the guarantee, the record digest.  The record and meta fields
 * (id, time, store id, history head, the earlier audits, the format)
 * must be set.  0; RBA_E_SCHEMA (the policy text does not parse);
 * RBA_E_NOMEM.
 */
int evidence_ev_complete(struct ev *e, struct rba_detail *d);

/*
 * The consistency of one audit record by itself, read into r (format
 * and time set, evidence_ev_complete done) with its policy pol: the
 * texts against their digests, the pins against what the record
 * states, the environment diff, the verdict against the digests,
 * counts, tolerance, near-threshold rule and sample claim, the exit
 * status, and who judged since when.  What evidence_record_check and
 * evidence_check's sixth check apply.  0 or RBA_E_SCHEMA /
 * RBA_E_TAMPERED with d->reason; RBA_E_NOMEM.
 */
int evidence_ev_record_consistent(const struct ev *r, const struct policy *pol,
				  struct rba_detail *d);

/*
 * The policy text of e, parsed into *out, which the caller frees
 * (policy_free).  0; RBA_E_SCHEMA; RBA_E_NOMEM.
 */
int evidence_ev_policy(const struct ev *e, struct policy **out,
		       struct rba_detail *d);

/*
 * The guarantee in words (g) and what it does not cover (ng), each of
 * cap bytes, from the verdict, the counts and the policy declared before
 * the audit.
 */
void evidence_guarantee_text(const struct ev *e, const struct policy *pol,
			     char *g, char *ng, size_t cap);

/* The earlier audits of e that did not reproduce or did not measure,
 * ad hoc ones aside. */
size_t evidence_ev_earlier_failed(const struct ev *e);

/* What the summary says of e beyond the version, verdict and counts:
 * its format, who judged since when, ad hoc, the earlier audits. */
void evidence_ev_summary_fill(const struct ev *e, struct evidence_summary *sum);

/*
 * Format 3: every case of the sample of e's audit with its stored score
 * and decision and the score of the artifact e names as rebuilt, read
 * from the store and scored into e->cases_list (owned).  0;
 * RBA_E_NOTFOUND (no sample, the rebuilt artifact not in the store);
 * RBA_E_SCHEMA (the sample changed since the audit, an argmax policy, a
 * case the artifact cannot take); RBA_E_TAMPERED; RBA_E_NOMEM; the
 * store's errors.  d->reason says which.
 */
struct store_txn;
int evidence_cases_load(struct store_txn *txn, struct ev *e,
			struct rba_detail *d);
/*
 * Format 3: the cases against the rest of the predicate under pol: one
 * per case of the sample, ids unique, and the flips, policy
 * disagreements, near-threshold and weak-band counts and the largest
 * delta they give are the ones stated, and every listed flipped case is
 * among them with its scores and decisions.  0 or RBA_E_SCHEMA with
 * d->reason; RBA_E_NOMEM.
 */
int evidence_cases_check(const struct ev *e, const struct policy *pol,
			 struct rba_detail *d);

struct store_txn;
struct store_sample_info;
struct sample_layout;

/*
 * The sample audit e scored, as the store holds it now, for writing
 * what of it (what: "cases" or "inputs"; to_do: "write" or "include";
 * done: "written" or "included", the words of the refusals).
 * evidence_sample_wanted gets the sample digest the audit recorded
 * (RBA_E_NOTFOUND when it scored none); evidence_sample_load loads the
 * version's sample layout and refuses one that is gone (RBA_E_NOTFOUND)
 * or is not that sample any more (RBA_E_SCHEMA).
 */
int evidence_sample_wanted(const struct ev *e, const char *what,
			   const char *to_do, struct rba_digest *want,
			   struct rba_detail *d);
int evidence_sample_load(struct store_txn *txn, const struct ev *e,
			 const struct rba_digest *want, const char *what,
			 const char *done, struct store_sample_info *info,
			 struct sample_layout *l, struct rba_detail *d);

/* ---- format 4: the log member (evidence_tlog.c) ------------------------- */

/*
 * Export: the checkpoint (made or given, lr) and the inclusion proof of
 * e's record (id set) in it, from the log of txn, into e's log members.
 * 0; RBA_E_SCHEMA (a given checkpoint refused: d says why); the errors
 * of store_tlog_open and note_sign.
 */
int evidence_tlog_load(struct store_txn *txn, struct ev *e,
		       const struct evidence_log_request *lr, struct rba_detail *d);
/* Writes predicate.log (after predicate.record). */
struct rba_json_w;
void evidence_tlog_render(const struct ev *e, struct rba_json_w *w);
/* Reads predicate.log of predicate p into e: 0 or RBA_E_SCHEMA. */
int evidence_tlog_read(const struct rba_json_value *p, struct ev *e,
		       struct rba_detail *d);
/*
 * Check 8: the checkpoint is a signed checkpoint, of log.tree_size
 * records, at least the record's id and at most the head's, the leaf
 * is the record's (index id - 1), and the proof checks the leaf hash of
 * the record against the checkpoint's root.  0 or RBA_E_SCHEMA;
 * RBA_E_NOMEM.  sum (may be NULL) gets the log summary.
 */
int evidence_tlog_check(const struct ev *e, struct evidence_log_summary *sum,
			struct rba_detail *d);
/* Frees what e's log members own. */
void evidence_tlog_release(struct ev *e);

/*
 * Clears d (NULL allowed) and records err with a formatted reason and no
 * file, line or key.  Returns err.
 */
int evidence_fail(struct rba_detail *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
