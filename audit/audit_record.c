/*
 * audit_record.c - the audit record: the JSON of an audit report
 * (rebuild-audit-report(5), AUDIT RECORDS) and its place in the store's
 * history.
 */
#include "audit/audit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/rbatime.h"
#include "common/json.h"
#include "train/envrec.h"
#include "exec/sandbox.h"
#include "rebuild/rebuild.h"

static void
put_strv(struct rba_buf *b, char *const *v, size_t n)
{
	rba_buf_put_u8(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			rba_buf_put(b, ", ", 2);
		rba_json_put_str(b, v[i]);
	}
	rba_buf_put_u8(b, ']');
}

static const char *
link_state(int s)
{
	return s == AUDIT_LINK_SAME ? "same"
	       : s == AUDIT_LINK_CHANGED ? "changed" : "unknown";
}

static void
put_link(struct rba_buf *b, const char *key, const struct audit_link *l,
	 int comma)
{
	rba_json_put_key(b, key);
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "state", link_state(l->state), 1);
	rba_json_kv_str(b, "pinned", l->pinned, 1);
	rba_json_kv_str(b, "current", l->current, 1);
	rba_json_kv_str(b, "note", l->note, 0);
	rba_buf_put_u8(b, '}');
	if (comma)
		rba_buf_put(b, ", ", 2);
}

/* The value of key in an environment record text, or NULL (malloc'd). */
static char *
env_value(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=')
			return strndup(p + kl + 1, len - kl - 1);
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* The record opened: what it is, of which version and when, the
 * verdict with its reasons and warnings, and what failed. */
static void
put_verdict(struct rba_buf *b, const struct audit_report *r)
{
	char when[32];

	rba_time_utc(r->time, when);
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "schema", AUDIT_RECORD_SCHEMA, 1);
	rba_json_kv_str(b, "version", r->version, 1);
	rba_json_kv_str(b, "time", when, 1);
	rba_json_kv_str(b, "verdict", audit_verdict_name(r->verdict), 1);
	rba_json_kv_u64(b, "exit_status", (uint64_t)r->exit_status, 1);
	rba_json_put_key(b, "reasons");
	put_strv(b, r->reasons, r->nreasons);
	rba_buf_put(b, ", ", 2);
	rba_json_put_key(b, "warnings");
	put_strv(b, r->warnings, r->nwarnings);
	rba_buf_put(b, ", ", 2);
	rba_json_kv_str(b, "error", r->error_what, 1);
}

static void
put_digests(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "digests");
	rba_buf_put_u8(b, '{');
	rba_json_kv_digest(b, "artifact_pinned", &r->artifact_pinned, r->pins_text != NULL, 1);
	rba_json_kv_digest(b, "artifact_rebuilt", &r->artifact_rebuilt, r->has_rebuilt, 1);
	rba_json_kv_digest(b, "artifact_decisions", &r->artifact_decisions,
			   r->has_decisions, 1);
	rba_json_kv_digest(b, "snapshot", &r->snapshot, r->pins_text != NULL, 1);
	rba_json_kv_digest(b, "sample", &r->sample_digest, r->has_sample, 1);
	rba_json_kv_digest(b, "policy", &r->policy_digest, r->policy_text != NULL, 1);
	rba_json_kv_digest(b, "config", &r->config_current, r->pins_text != NULL, 0);
	rba_buf_put(b, "}, ", 3);
}

static void
put_verified(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "verified");
	rba_buf_put_u8(b, '{');
	rba_json_kv_bool(b, "artifact", r->artifact_verified, 1);
	rba_json_kv_bool(b, "snapshot", r->snapshot_verified, 1);
	rba_json_kv_bool(b, "sample", r->sample_verified, 0);
	rba_buf_put(b, "}, ", 3);
}

/* The policy that judged: since the declared-before rule, who
 * judged and declared when. */
static void
put_policy(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "policy");
	rba_buf_put_u8(b, '{');
	rba_json_kv_digest(b, "digest", &r->policy_digest, r->policy_text != NULL, 1);
	rba_json_kv_str(b, "source", r->policy_text == NULL ? NULL
				: r->policy_from_version ? "version" : "option", 1);
	rba_json_kv_str(b, "text", r->policy_text, 1);
	rba_json_kv_str(b, "judged_by", r->policy_text == NULL ? NULL
				   : r->judged_by == AUDIT_JUDGED_SAMPLE ? "sample"
				   : r->judged_by == AUDIT_JUDGED_OPTION ? "option"
									 : "version", 1);
	{
		char dt[RBA_TIME_TEXT_MAX];
		if (r->has_declared_at)
			rba_time_utc(r->declared_at, dt);
		rba_json_kv_str(b, "declared_at", r->has_declared_at ? dt : NULL, 1);
	}
	rba_json_kv_bool(b, "ad_hoc", r->ad_hoc, 0);
	rba_buf_put(b, "}, ", 3);
}

static void
put_pins(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "pins");
	rba_buf_put_u8(b, '{');
	rba_json_kv_digest(b, "config_hash", &r->config_current, r->pins_text != NULL, 1);
	rba_json_kv_digest(b, "config_hash_trained", &r->config_registered,
		      r->has_config_registered, 1);
	rba_json_kv_str(b, "text", r->pins_text, 0);
	rba_buf_put(b, "}, ", 3);
}

/* The trainer ABI link, with the ABI of each side. */
static void
put_abi_link(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "trainer_abi");
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "state", link_state(r->trainer_abi.state), 1);
	rba_json_kv_u64(b, "pinned", r->abi_pinned, 1);
	rba_json_kv_u64(b, "artifact", r->abi_artifact, 1);
	rba_json_kv_u64(b, "rebuilt", r->abi_rebuilt, 1);
	rba_json_kv_u64(b, "current", r->abi_current, 1);
	rba_json_kv_str(b, "note", r->trainer_abi.note, 0);
	rba_buf_put(b, "}, ", 3);
}

/* The environment link, with the fields that differ. */
static void
put_env_link(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "environment");
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "state", link_state(r->environment.state), 1);
	rba_json_kv_str(b, "pinned", r->environment.pinned, 1);
	rba_json_kv_str(b, "current", r->environment.current, 1);
	rba_json_kv_str(b, "note", r->environment.note, 1);
	rba_json_put_key(b, "fields");
	rba_buf_put_u8(b, '[');
	for (size_t i = 0; i < r->nenv_fields; i++) {
		if (i)
			rba_buf_put(b, ", ", 2);
		rba_buf_put_u8(b, '{');
		rba_json_kv_str(b, "key", r->env_fields[i].key, 1);
		rba_json_kv_str(b, "pinned", r->env_fields[i].pinned, 1);
		rba_json_kv_str(b, "current", r->env_fields[i].current, 0);
		rba_buf_put_u8(b, '}');
	}
	rba_buf_put(b, "]}, ", 4);
}

static void
put_links(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "links");
	rba_buf_put_u8(b, '{');
	put_link(b, "code_revision", &r->code_revision, 1);
	put_abi_link(b, r);
	put_env_link(b, r);
	put_link(b, "config", &r->config, 1);
	put_link(b, "snapshot", &r->snapshot_link, 0);
	rba_buf_put(b, "}, ", 3);
}

static void
put_env_records(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "environment_records");
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "pinned", r->env_pinned_text, 1);
	rba_json_kv_str(b, "current", r->env_current_text, 0);
	rba_buf_put(b, "}, ", 3);
}

/* The flipped cases listed, in stored order. */
static void
put_flips(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "flipped_cases");
	rba_buf_put_u8(b, '[');
	for (size_t i = 0; i < r->nlisted; i++) {
		const struct audit_flip *f = &r->listed[i];
		if (i)
			rba_buf_put(b, ", ", 2);
		rba_buf_put_u8(b, '{');
		rba_json_kv_str(b, "id", f->id, 1);
		rba_json_kv_num(b, "stored_score", f->stored_score, 1);
		rba_json_kv_num(b, "rebuilt_score", f->rebuilt_score, 1);
		rba_json_kv_str(b, "stored_decision", f->stored_decision, 1);
		rba_json_kv_str(b, "rebuilt_decision", f->rebuilt_decision, 1);
		rba_json_kv_num(b, "margin", f->margin, 1);
		rba_json_kv_num(b, "rebuilt_margin", f->rebuilt_margin, 1);
		rba_json_kv_num(b, "edge", f->edge, 0);
		rba_buf_put_u8(b, '}');
	}
	rba_buf_put_u8(b, ']');
}

static void
put_sample(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "sample");
	rba_buf_put_u8(b, '{');
	rba_json_kv_u64(b, "cases", r->cases, 1);
	rba_json_kv_str(b, "scored_by", !r->has_sample ? NULL
				   : r->sample_scored_by == SAMPLE_SCORED_COLUMN
					     ? "column" : "model", 1);
	rba_json_kv_digest(b, "policy", &r->sample_policy, r->has_sample_policy, 1);
	rba_json_kv_u64(b, "flips", r->flips, 1);
	rba_json_kv_num(b, "max_score_delta", r->max_delta, 1);
	rba_json_kv_str(b, "max_delta_case", r->max_delta_case, 1);
	/* absent in records written before the sample's own claim was kept */
	rba_json_kv_num(b, "score_precision",
			r->has_score_precision ? r->score_precision : 0, 1);
	rba_json_kv_u64(b, "scores_off_precision", r->scores_off, 1);
	rba_json_kv_str(b, "scores_off_case", r->scores_off_case, 1);
	rba_json_kv_u64(b, "near_threshold_cases", r->near_cases, 1);
	rba_json_kv_u64(b, "weak_band_cases", r->weak_band_cases, 1);
	rba_json_kv_u64(b, "policy_disagreements", r->policy_disagreements, 1);
	rba_json_kv_u64(b, "flipped_listed", r->nlisted, 1);
	put_flips(b, r);
	rba_buf_put(b, "}, ", 3);
}

static void
put_rebuild(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "rebuild");
	rba_buf_put_u8(b, '{');
	rba_json_kv_num(b, "validation_accuracy", r->has_rebuilt ? r->val_accuracy : NAN, 1);
	rba_json_kv_num(b, "validation_loss", r->has_rebuilt ? r->val_loss : NAN, 1);
	rba_json_kv_str(b, "scoring", r->has_rebuilt ? (r->sparse_scoring ? "sparse" : "dense")
					      : NULL, 1);
	rba_json_kv_u64(b, "threads", r->threads, 0);
	rba_buf_put(b, "}, ", 3);
}

static void
put_exec_trainer(struct rba_buf *b, const struct audit_report *r)
{
	if (r->kind == NULL || r->kind->record_trainer == NULL ||
	    r->exec_command == NULL)
		return;
	/* An exec version's rebuild: what ran, in which sandbox, how
	 * it ended (only such records have this member). */
	rba_json_put_key(b, "trainer");
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "kind", r->kind->record_trainer, 1);
	rba_json_kv_str(b, "repository", r->exec_repository, 1);
	rba_json_kv_str(b, "commit", r->exec_commit, 1);
	rba_json_kv_str(b, "tree", r->exec_tree, 1);
	rba_json_put_key(b, "command");
	rba_buf_put(b, r->exec_command, strlen(r->exec_command));
	rba_buf_put(b, ", ", 2);
	rba_json_kv_str(b, "sandbox", sandbox_name(), 1);
	rba_json_kv_str(b, "sandbox_profile", sandbox_description(), 1);
	rba_json_kv_u64(b, "exit_status", (uint64_t)r->exec_exit, 1);
	rba_json_kv_num(b, "seconds", r->exec_seconds, 1);
	rba_json_kv_digest(b, "stdout_sha256", &r->exec_stdout, 1, 1);
	rba_json_kv_digest(b, "stderr_sha256", &r->exec_stderr, 1, 0);
	rba_buf_put(b, "}, ", 3);
}

/* This tool, and the libraries of the current environment record. */
static void
put_tool(struct rba_buf *b, const struct audit_report *r)
{
	static const char *const libs[][2] = {
		{ "libc", "lib.libc" },		{ "libsodium", "lib.libsodium" },
		{ "libyaml", "lib.libyaml" }, { "lmdb", "lib.lmdb" },
		{ "openblas", "lib.openblas" }, { "zstd", "lib.zstd" },
	};

	rba_json_put_key(b, "tool");
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "name", RBA_TOOL_NAME, 1);
	rba_json_kv_str(b, "version", RBA_TOOL_VERSION, 1);
	rba_json_kv_str(b, "code_revision", envrec_code_revision(), 1);
	rba_json_kv_u64(b, "trainer_abi", rebuild_abi_current(), 1);
	rba_json_put_key(b, "libraries");
	rba_buf_put_u8(b, '{');
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		char *v = r->env_current_text ? env_value(r->env_current_text, libs[i][1])
					      : NULL;
		rba_json_kv_str(b, libs[i][0], v, i + 1 < sizeof(libs) / sizeof(libs[0]));
		free(v);
	}
	rba_buf_put(b, "}}, ", 4);
}

static void
put_timings(struct rba_buf *b, const struct audit_report *r)
{
	rba_json_put_key(b, "timings");
	rba_buf_put_u8(b, '{');
	rba_json_kv_num(b, "verify_s", r->t_verify, 1);
	rba_json_kv_num(b, "rebuild_s", r->t_rebuild, 1);
	rba_json_kv_num(b, "sample_pass_s", r->t_score, 1);
	rba_json_kv_num(b, "scoring_s", r->t_scoring, 1);
	rba_json_kv_num(b, "total_s", r->t_total, 0);
	rba_buf_put(b, "}}", 2);
}

void
audit_report_json(const struct audit_report *r, struct rba_buf *b)
{
	put_verdict(b, r);
	put_digests(b, r);
	put_verified(b, r);
	put_policy(b, r);
	put_pins(b, r);
	put_links(b, r);
	put_env_records(b, r);
	put_sample(b, r);
	put_rebuild(b, r);
	put_exec_trainer(b, r);
	put_tool(b, r);
	put_timings(b, r);
}

int
audit_record_is_ad_hoc(const struct rba_json_value *rec)
{
	const struct rba_json_value *pol, *ah;
	const char *src;

	if (rba_json_get_str(rec, "verdict") == NULL)
		return 0;
	pol = rba_json_get(rec, "policy");
	ah = rba_json_get(pol, "ad_hoc");
	if (ah != NULL)
		return ah->type == RBA_JSON_TRUE;
	src = rba_json_get_str(pol, "source");
	return src != NULL && strcmp(src, "option") == 0;
}

/*
 * Whether the store, in txn, still holds the version record and sample
 * r judged.  1 yes, 0 no, or the store's error (negative).
 */
static int
still_judged(struct store_txn *txn, const struct audit_report *r)
{
	struct store_version v;
	struct rba_digest pins;
	int err, same;

	err = store_version_get(txn, r->version, &v, NULL);
	if (err == RBA_E_NOTFOUND)
		return !r->has_version;
	if (err != 0)
		return err;
	rba_digest_bytes(v.pins_text, strlen(v.pins_text), &pins);
	same = r->has_version && v.registered_at == r->registered_at &&
	       rba_digest_equal(&v.artifact, &r->judged_artifact) &&
	       rba_digest_equal(&v.snapshot, &r->judged_snapshot) &&
	       rba_digest_equal(&pins, &r->judged_pins);
	if (same && r->has_sample)
		same = v.has_sample &&
		       rba_digest_equal(&v.sample.digest, &r->sample_digest) &&
		       v.sample.added == r->sample_added;
	if (same && (r->policy_from_version || !r->has_version_policy))
		same = v.has_policy == r->has_version_policy &&
		       (!v.has_policy ||
			rba_digest_equal(&v.policy_digest, &r->version_policy));
	store_version_release(&v);
	return same;
}

/* The rebuilt artifact of a not bit-identical audit, as an artifact blob
 * named by its digest in the record (digests.artifact_rebuilt); bytes the
 * store already holds (an earlier pinned artifact) are left as they are,
 * name and all.  The history keeps every record, so the blob stays as
 * long as the record does. */
static int
keep_rebuilt(struct store_txn *txn, struct audit_report *r, struct rba_detail *d)
{
	struct store_blob_info info;
	struct rba_digest dg;
	char name[STORE_VERSION_NAME_MAX + 48];
	int err;

	memset(&info, 0, sizeof(info));
	err = store_blob_info(txn, &r->artifact_rebuilt, &info, d);
	if (err == 0) {
		store_blob_info_release(&info);
		r->rebuilt_kept = 1;
		return 0;
	}
	if (err != RBA_E_NOTFOUND)
		return err;
	snprintf(name, sizeof(name), "rebuilt by an audit of %s", r->version);
	if ((err = store_blob_put(txn, STORE_BLOB_ARTIFACT, r->rebuilt_bytes,
				  r->rebuilt_len, name, NULL, 0, &dg, NULL, d)) != 0)
		return err;
	if (!rba_digest_equal(&dg, &r->artifact_rebuilt))
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0, "the rebuilt artifact's "
				"bytes do not hash to the digest the audit found");
	r->rebuilt_kept = 1;
	return 0;
}

int
audit_record_append(struct store *s, struct audit_report *r,
		    struct rba_detail *d)
{
	struct rba_buf b;
	struct store_txn *txn = NULL;
	int err;

	rba_buf_init(&b);
	audit_report_json(r, &b);
	if ((err = rba_buf_status(&b)) != 0)
		goto out;
	if ((err = store_txn_begin(s, 1, b.len + r->rebuilt_len, &txn, d)) != 0)
		goto out;
	if (r->judged && (err = still_judged(txn, r)) != 1) {
		store_txn_abort(txn);
		if (err < 0)
			goto out;
		err = rba_fail(d, RBA_E_BUSY, NULL, 0, 0,
			       "version '%s' changed while it was audited (it "
			       "was registered, replaced, given another sample "
			       "or policy): nothing was recorded; rerun the "
			       "audit", r->version);
		audit_not_measured(r, "changed", err, d);
		goto out;
	}
	if (r->rebuilt_bytes != NULL && (err = keep_rebuilt(txn, r, d)) != 0) {
		store_txn_abort(txn);
		goto out;
	}
	err = store_history_append(txn, r->version, r->time, b.p, b.len,
				   &r->history_id, &r->history_digest, d);
	if (err == 0)
		err = store_txn_commit(txn, d);
	else
		store_txn_abort(txn);
	if (err == 0)
		r->recorded = 1;
out:
	rba_buf_release(&b);
	return err;
}

static int
run_sealed(void *ctx, const char *id, const uint8_t *p, size_t n)
{
	(void)ctx;
	(void)id;
	(void)p;
	(void)n;
	return 0;
}

int
audit_history_check(struct store *s, struct rba_detail *d)
{
	struct store_txn *txn;
	char why[sizeof(d->reason)];
	uint64_t bad = 0;
	int err;

	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	err = store_history_verify(txn, &bad, NULL, d);
	/* The history's log too: an audit does not extend a damaged tree. */
	if (err == 0)
		err = store_tlog_verify(txn, &bad, d);
	if (err == 0)
		err = store_run_list(txn, run_sealed, NULL, d);
	store_txn_abort(txn);
	if (err == 0)
		return 0;
	snprintf(why, sizeof(why), "%s", d->reason);
	snprintf(d->reason, sizeof(d->reason), "%s: %.300s; run "
		 "'rebuild-audit store check'",
		 bad ? "the history is broken" : "damaged records", why);
	return err;
}

/* ---- the artifacts an audit compared ---------------------------------- */

struct pair_find {
	uint64_t want; /* 0: the newest naming a rebuilt artifact */
	uint64_t id;
	struct rba_digest a, b, dec;
	int has_dec, found, wrong;
};

static int
pair_cb(void *ctx, const struct store_history_entry *e)
{
	struct pair_find *f = ctx;
	struct rba_json_value v;
	const struct rba_json_value *dg;
	const char *schema, *pin, *reb, *dec;
	int ok = 0;

	if (f->want != 0 && e->id != f->want)
		return 0;
	memset(&v, 0, sizeof(v));
	if (rba_json_parse((const char *)e->record, e->len, &v, NULL) != 0) {
		f->wrong = f->want != 0;
		return f->want != 0 ? 1 : 0;
	}
	schema = rba_json_get_str(&v, "schema");
	dg = rba_json_get(&v, "digests");
	pin = rba_json_get_str(dg, "artifact_pinned");
	reb = rba_json_get_str(dg, "artifact_rebuilt");
	dec = rba_json_get_str(dg, "artifact_decisions");
	if (schema != NULL && strncmp(schema, "rebuild-audit/audit/", 20) == 0 &&
	    pin != NULL && reb != NULL && rba_digest_parse(pin, &f->a) == 0 &&
	    rba_digest_parse(reb, &f->b) == 0) {
		ok = 1;
		f->has_dec = dec != NULL && rba_digest_parse(dec, &f->dec) == 0;
	}
	rba_json_release(&v);
	if (!ok) {
		f->wrong = f->want != 0;
		return f->want != 0 ? 1 : 0;
	}
	f->found = 1;
	f->id = e->id;
	return 1; /* stop */
}

int
audit_diff_pair(struct store *s, const char *version, uint64_t audit_id,
		struct rba_digest *a, struct rba_digest *b, int *a_is_decisions,
		uint64_t *id, struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct pair_find f;
	int err;

	memset(&f, 0, sizeof(f));
	f.want = audit_id;
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	err = store_history_list(txn, version, 1, pair_cb, &f, d);
	store_txn_abort(txn);
	if (err < 0 || (err > 1))
		return err;
	if (f.wrong)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "history record %llu is not "
				"an audit of '%s' that rebuilt an artifact",
				(unsigned long long)audit_id, version);
	if (!f.found && audit_id != 0)
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0, "no audit record %llu of "
				"version '%s'", (unsigned long long)audit_id, version);
	if (!f.found)
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0, "no audit of version '%s' "
				"that rebuilt an artifact", version);
	*a_is_decisions = 0;
	*a = f.a;
	if (rba_digest_equal(&f.a, &f.b) && f.has_dec && !rba_digest_equal(&f.dec, &f.b)) {
		*a = f.dec;
		*a_is_decisions = 1;
	}
	*b = f.b;
	*id = f.id;
	return 0;
}
