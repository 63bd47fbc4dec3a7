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

static void
put_strv(struct rba_json_w *w, const char *key, char *const *v, size_t n)
{
	rba_json_w_open(w, key, '[');
	for (size_t i = 0; i < n; i++)
		rba_json_w_str(w, NULL, v[i]);
	rba_json_w_close(w, ']');
}

static const char *
link_state(int s)
{
	return s == AUDIT_LINK_SAME ? "same"
	       : s == AUDIT_LINK_CHANGED ? "changed" : "unknown";
}

static void
put_link(struct rba_json_w *w, const char *key, const struct audit_link *l)
{
	rba_json_w_open(w, key, '{');
	rba_json_w_str(w, "state", link_state(l->state));
	rba_json_w_str(w, "pinned", l->pinned);
	rba_json_w_str(w, "current", l->current);
	rba_json_w_str(w, "note", l->note);
	rba_json_w_close(w, '}');
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
put_verdict(struct rba_json_w *w, const struct audit_report *r)
{
	char when[32];

	rba_time_utc(r->time, when);
	rba_json_w_open(w, NULL, '{');
	rba_json_w_str(w, "schema", AUDIT_RECORD_SCHEMA);
	rba_json_w_str(w, "version", r->version);
	rba_json_w_str(w, "time", when);
	rba_json_w_str(w, "verdict", audit_verdict_name(r->verdict));
	rba_json_w_u64(w, "exit_status", (uint64_t)r->exit_status);
	put_strv(w, "reasons", r->reasons, r->nreasons);
	put_strv(w, "warnings", r->warnings, r->nwarnings);
	rba_json_w_str(w, "error", r->error_what);
}

static void
put_digests(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "digests", '{');
	rba_json_w_digest(w, "artifact_pinned", &r->artifact_pinned, r->pins_text != NULL);
	rba_json_w_digest(w, "artifact_rebuilt", &r->artifact_rebuilt, r->has_rebuilt);
	rba_json_w_digest(w, "artifact_decisions", &r->artifact_decisions,
			  r->has_decisions);
	rba_json_w_digest(w, "snapshot", &r->snapshot, r->pins_text != NULL);
	rba_json_w_digest(w, "sample", &r->sample_digest, r->has_sample);
	rba_json_w_digest(w, "policy", &r->policy_digest, r->policy_text != NULL);
	rba_json_w_digest(w, "config", &r->config_current, r->pins_text != NULL);
	rba_json_w_close(w, '}');
}

static void
put_verified(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "verified", '{');
	rba_json_w_bool(w, "artifact", r->artifact_verified);
	rba_json_w_bool(w, "snapshot", r->snapshot_verified);
	rba_json_w_bool(w, "sample", r->sample_verified);
	rba_json_w_close(w, '}');
}

/* The policy that judged: since the declared-before rule, who
 * judged and declared when. */
static void
put_policy(struct rba_json_w *w, const struct audit_report *r)
{
	char dt[RBA_TIME_TEXT_MAX];

	rba_json_w_open(w, "policy", '{');
	rba_json_w_digest(w, "digest", &r->policy_digest, r->policy_text != NULL);
	rba_json_w_str(w, "source", r->policy_text == NULL ? NULL
			: r->policy_from_version ? "version" : "option");
	rba_json_w_str(w, "text", r->policy_text);
	rba_json_w_str(w, "judged_by", r->policy_text == NULL ? NULL
			: r->judged_by == AUDIT_JUDGED_SAMPLE ? "sample"
			: r->judged_by == AUDIT_JUDGED_OPTION ? "option"
							      : "version");
	if (r->has_declared_at)
		rba_time_utc(r->declared_at, dt);
	rba_json_w_str(w, "declared_at", r->has_declared_at ? dt : NULL);
	rba_json_w_bool(w, "ad_hoc", r->ad_hoc);
	rba_json_w_close(w, '}');
}

static void
put_pins(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "pins", '{');
	rba_json_w_digest(w, "config_hash", &r->config_current, r->pins_text != NULL);
	rba_json_w_digest(w, "config_hash_trained", &r->config_registered,
			  r->has_config_registered);
	rba_json_w_str(w, "text", r->pins_text);
	rba_json_w_close(w, '}');
}

/* The trainer ABI link, with the ABI of each side. */
static void
put_abi_link(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "trainer_abi", '{');
	rba_json_w_str(w, "state", link_state(r->trainer_abi.state));
	rba_json_w_u64(w, "pinned", r->abi_pinned);
	rba_json_w_u64(w, "artifact", r->abi_artifact);
	rba_json_w_u64(w, "rebuilt", r->abi_rebuilt);
	rba_json_w_u64(w, "current", r->abi_current);
	rba_json_w_str(w, "note", r->trainer_abi.note);
	rba_json_w_close(w, '}');
}

/* The environment link, with the fields that differ. */
static void
put_env_link(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "environment", '{');
	rba_json_w_str(w, "state", link_state(r->environment.state));
	rba_json_w_str(w, "pinned", r->environment.pinned);
	rba_json_w_str(w, "current", r->environment.current);
	rba_json_w_str(w, "note", r->environment.note);
	rba_json_w_open(w, "fields", '[');
	for (size_t i = 0; i < r->nenv_fields; i++) {
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "key", r->env_fields[i].key);
		rba_json_w_str(w, "pinned", r->env_fields[i].pinned);
		rba_json_w_str(w, "current", r->env_fields[i].current);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
	rba_json_w_close(w, '}');
}

static void
put_links(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "links", '{');
	put_link(w, "code_revision", &r->code_revision);
	put_abi_link(w, r);
	put_env_link(w, r);
	put_link(w, "config", &r->config);
	put_link(w, "snapshot", &r->snapshot_link);
	rba_json_w_close(w, '}');
}

static void
put_env_records(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "environment_records", '{');
	rba_json_w_str(w, "pinned", r->env_pinned_text);
	rba_json_w_str(w, "current", r->env_current_text);
	rba_json_w_close(w, '}');
}

/* The flipped cases listed, in stored order. */
static void
put_flips(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "flipped_cases", '[');
	for (size_t i = 0; i < r->nlisted; i++) {
		const struct audit_flip *f = &r->listed[i];
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "id", f->id);
		rba_json_w_num(w, "stored_score", f->stored_score);
		rba_json_w_num(w, "rebuilt_score", f->rebuilt_score);
		rba_json_w_str(w, "stored_decision", f->stored_decision);
		rba_json_w_str(w, "rebuilt_decision", f->rebuilt_decision);
		rba_json_w_num(w, "margin", f->margin);
		rba_json_w_num(w, "rebuilt_margin", f->rebuilt_margin);
		rba_json_w_num(w, "edge", f->edge);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
}

static void
put_sample(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "sample", '{');
	rba_json_w_u64(w, "cases", r->cases);
	rba_json_w_str(w, "scored_by", !r->has_sample ? NULL
			: r->sample_scored_by == SAMPLE_SCORED_COLUMN ? "column"
								      : "model");
	rba_json_w_digest(w, "policy", &r->sample_policy, r->has_sample_policy);
	rba_json_w_u64(w, "flips", r->flips);
	rba_json_w_num(w, "max_score_delta", r->max_delta);
	rba_json_w_str(w, "max_delta_case", r->max_delta_case);
	/* absent in records written before the sample's own claim was kept */
	rba_json_w_num(w, "score_precision",
		       r->has_score_precision ? r->score_precision : 0);
	rba_json_w_u64(w, "scores_off_precision", r->scores_off);
	rba_json_w_str(w, "scores_off_case", r->scores_off_case);
	rba_json_w_u64(w, "near_threshold_cases", r->near_cases);
	rba_json_w_u64(w, "weak_band_cases", r->weak_band_cases);
	rba_json_w_u64(w, "policy_disagreements", r->policy_disagreements);
	rba_json_w_u64(w, "flipped_listed", r->nlisted);
	put_flips(w, r);
	rba_json_w_close(w, '}');
}

static void
put_rebuild(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "rebuild", '{');
	rba_json_w_num(w, "validation_accuracy", r->has_rebuilt ? r->val_accuracy : NAN);
	rba_json_w_num(w, "validation_loss", r->has_rebuilt ? r->val_loss : NAN);
	rba_json_w_str(w, "scoring", r->has_rebuilt ? (r->sparse_scoring ? "sparse" : "dense")
						    : NULL);
	rba_json_w_u64(w, "threads", r->threads);
	rba_json_w_close(w, '}');
}

static void
put_exec_trainer(struct rba_json_w *w, const struct audit_report *r)
{
	if (!r->is_exec || r->exec_command == NULL)
		return;
	/* An exec version's rebuild: what ran, in which sandbox, how
	 * it ended (only such records have this member). */
	rba_json_w_open(w, "trainer", '{');
	rba_json_w_str(w, "kind", "exec");
	rba_json_w_str(w, "repository", r->exec_repository);
	rba_json_w_str(w, "commit", r->exec_commit);
	rba_json_w_str(w, "tree", r->exec_tree);
	rba_json_w_raw(w, "command", r->exec_command, strlen(r->exec_command));
	rba_json_w_str(w, "sandbox", sandbox_name());
	rba_json_w_str(w, "sandbox_profile", sandbox_description());
	rba_json_w_u64(w, "exit_status", (uint64_t)r->exec_exit);
	rba_json_w_num(w, "seconds", r->exec_seconds);
	rba_json_w_digest(w, "stdout_sha256", &r->exec_stdout, 1);
	rba_json_w_digest(w, "stderr_sha256", &r->exec_stderr, 1);
	rba_json_w_close(w, '}');
}

/* This tool, and the libraries of the current environment record. */
static void
put_tool(struct rba_json_w *w, const struct audit_report *r)
{
	static const char *const libs[][2] = {
		{ "libc", "lib.libc" },		{ "libsodium", "lib.libsodium" },
		{ "libyaml", "lib.libyaml" }, { "lmdb", "lib.lmdb" },
		{ "openblas", "lib.openblas" }, { "zstd", "lib.zstd" },
	};

	rba_json_w_open(w, "tool", '{');
	rba_json_w_str(w, "name", RBA_TOOL_NAME);
	rba_json_w_str(w, "version", RBA_TOOL_VERSION);
	rba_json_w_str(w, "code_revision", envrec_code_revision());
	rba_json_w_u64(w, "trainer_abi", rebuild_abi_current());
	rba_json_w_open(w, "libraries", '{');
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		char *v = r->env_current_text ? env_value(r->env_current_text, libs[i][1])
					      : NULL;
		rba_json_w_str(w, libs[i][0], v);
		free(v);
	}
	rba_json_w_close(w, '}');
	rba_json_w_close(w, '}');
}

static void
put_timings(struct rba_json_w *w, const struct audit_report *r)
{
	rba_json_w_open(w, "timings", '{');
	rba_json_w_num(w, "verify_s", r->t_verify);
	rba_json_w_num(w, "rebuild_s", r->t_rebuild);
	rba_json_w_num(w, "sample_pass_s", r->t_score);
	rba_json_w_num(w, "scoring_s", r->t_scoring);
	rba_json_w_num(w, "total_s", r->t_total);
	rba_json_w_close(w, '}');
	rba_json_w_close(w, '}');
}

void
audit_report_json(const struct audit_report *r, struct rba_buf *b)
{
	struct rba_json_w w;

	rba_json_w_init(&w, b);
	put_verdict(&w, r);
	put_digests(&w, r);
	put_verified(&w, r);
	put_policy(&w, r);
	put_pins(&w, r);
	put_links(&w, r);
	put_env_records(&w, r);
	put_sample(&w, r);
	put_rebuild(&w, r);
	put_exec_trainer(&w, r);
	put_tool(&w, r);
	put_timings(&w, r);
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
