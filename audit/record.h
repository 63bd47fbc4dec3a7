/*
 * record.h - the audit record (schema rebuild-audit/audit/v1,
 * rebuild-audit-report(5), AUDIT RECORDS), said once.
 *
 * record.c holds the record's schema as one table: each member's JSON
 * name, its type, where its value lives in struct audit_record (the
 * view below), whether it may be null, and which writing of the record
 * first carried it.  One encoder walks the table to write a record
 * (audit_report_json: audit_record_from_report fills the view from an
 * audit's computation, the one place that knows both), one decoder walks
 * the same table to read a parsed record back into the view.  Evidence,
 * fleet's import and its costs, `diff --store`, the ad hoc mark
 * (audit_record_is_ad_hoc), dispute's standing and proof, and the
 * report's history page read records through the decoder; the history
 * listing is to move onto it.
 *
 * The view is plain: texts are NUL-terminated pointers (NULL is JSON
 * null, or a member an older record lacks), digests are texts in the
 * "sha256:<hex>" form, numbers doubles (NaN: null or absent), integers
 * uint64_t (AUDIT_RECORD_INT_NONE: null or absent), booleans ints (-1:
 * null or absent), lists a pointer and a count.  Which of them a view
 * borrows and for how long is said at each function.
 */
#ifndef RBA_AUDIT_RECORD_H
#define RBA_AUDIT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/json.h"
#include "common/rba.h"

struct audit_report;

/* An integer member that is null or absent. */
#define AUDIT_RECORD_INT_NONE UINT64_MAX

/* A list of texts; raw, when not NULL, is the list as JSON text made
 * elsewhere (an exec trainer's command), written as it is. */
struct audit_record_strv {
	const char *const *v;
	size_t n;
	const char *raw;
};

struct audit_record_link {
	const char *state, *pinned, *current, *note;
};

struct audit_record_env_field {
	const char *key, *pinned, *current;
};

struct audit_record_flip {
	const char *id;
	double stored_score, rebuilt_score;
	const char *stored_decision, *rebuilt_decision;
	double margin, rebuilt_margin, edge;
};

/* One member of tool.libraries (any name: the record's keys). */
struct audit_record_lib {
	const char *name, *value;
};

/* The record's members, nested as the record nests them. */
struct audit_record {
	const char *schema, *version, *time, *verdict;
	uint64_t exit_status;
	struct audit_record_strv reasons, warnings;
	const char *error;
	struct {
		const char *artifact_pinned, *artifact_rebuilt,
			*artifact_decisions, *snapshot, *sample, *policy, *config;
	} digests;
	struct {
		int artifact, snapshot, sample;
	} verified;
	struct {
		const char *digest, *source, *text, *judged_by, *declared_at;
		int ad_hoc;
	} policy;
	struct {
		const char *config_hash, *config_hash_trained, *text;
	} pins;
	struct {
		struct audit_record_link code_revision;
		struct {
			const char *state;
			uint64_t pinned, artifact, rebuilt, current;
			const char *note;
		} trainer_abi;
		struct {
			const char *state, *pinned, *current, *note;
			struct audit_record_env_field *fields;
			size_t nfields;
		} environment;
		struct audit_record_link config, snapshot;
	} links;
	struct {
		const char *pinned, *current;
	} environment_records;
	struct {
		uint64_t cases;
		const char *scored_by, *policy;
		uint64_t flips;
		double max_score_delta;
		const char *max_delta_case;
		double score_precision;
		uint64_t scores_off_precision;
		const char *scores_off_case;
		uint64_t near_threshold_cases, weak_band_cases,
			policy_disagreements, flipped_listed;
		struct audit_record_flip *flipped_cases;
		size_t nflipped_cases;
	} sample;
	struct {
		double validation_accuracy, validation_loss;
		const char *scoring;
		uint64_t threads;
	} rebuild;
	/* Only an exec version's record has a trainer member. */
	int has_trainer;
	struct {
		const char *kind, *repository, *commit, *tree;
		struct audit_record_strv command;
		const char *sandbox, *sandbox_profile;
		uint64_t exit_status;
		double seconds;
		const char *stdout_sha256, *stderr_sha256;
	} trainer;
	struct {
		const char *name, *version, *code_revision;
		uint64_t trainer_abi;
		struct audit_record_lib *libraries;
		size_t nlibraries;
	} tool;
	struct {
		double verify_s, rebuild_s, sample_pass_s, scoring_s, total_s;
	} timings;

	/* What the view owns (audit_record_release): the lists the decoder
	 * made, and the texts audit_record_from_report formatted. */
	void *own[16];
	size_t nown;
	char b_time[32], b_declared_at[32];
	char b_digest[16][RBA_DIGEST_TEXT_LEN + 1];
	size_t nb_digest;
};

/*
 * Fills *out from r, an audit's report: the record audit_record_encode
 * writes of it.  out borrows r's texts (and this binary's constant ones)
 * until r is released.  0 or RBA_E_NOMEM; release out either way.
 */
int audit_record_from_report(const struct audit_report *r,
			     struct audit_record *out);

/*
 * Appends the record of v, members in the table's order, in the compact
 * layout of common/json.h (", " between members, ": " after keys).
 * Errors stay in b (rba_buf_status).
 */
void audit_record_encode(const struct audit_record *v, struct rba_buf *b);

/*
 * The members of v's record, in the table's order, as members of the
 * object w has open: audit_record_encode between the braces, for a
 * writer that adds members of its own after them (a worker record,
 * fleet/fleet.h).  Errors stay in w's buffer.
 */
void audit_record_encode_members(const struct audit_record *v,
				 struct rba_json_w *w);

/*
 * Reads rec, a parsed audit record, into *out by the same table.  what
 * names the record in messages ("audit record 3").  Stops at the first
 * member that is missing or of the wrong type, as a reader of the
 * record must find it: RBA_E_SCHEMA with d->reason "WHAT: 'PATH' is
 * missing, not a string" (or "of another type", "not a sha256: digest",
 * "not a whole number from 0 to 2^53", "holds a NUL character", ...);
 * RBA_E_NEWER (a record schema newer than this tool), RBA_E_SCHEMA also
 * for another schema; RBA_E_NOMEM.  A member a writing of the record
 * before it lacks reads as absent; members no reader checks (error,
 * timings, ...) are read when present and well typed, else absent.  out
 * borrows rec's texts until rec is released; on error it may be partly
 * filled.  Release out either way.
 */
int audit_record_decode(const struct rba_json_value *rec, const char *what,
			struct audit_record *out, struct rba_detail *d);

/*
 * Whether the audit of v was ad hoc: its policy.ad_hoc, or, in a record
 * written before that member, a policy given by --policy (policy.source
 * "option").  0 for a view without a verdict (a record the decoder
 * stopped in before it).
 */
int audit_record_ad_hoc(const struct audit_record *v);

/* Frees what v owns and zeroes it; NULL allowed. */
void audit_record_release(struct audit_record *v);

#endif
