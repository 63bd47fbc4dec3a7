/* evidence_read.c - a parsed audit record or evidence statement, as the model. */
#include "evidence/evidence_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "audit/record.h"
#include "common/json.h"

#define MAX_INT_EXACT 9007199254740992.0 /* 2^53: counts read back exactly */

/* ---- reading either shape ------------------------------------------------ */

/*
 * A reader fills the model from a parsed tree and stops at the first
 * value that is missing or of the wrong type: common/json.h's path
 * reader (struct rba_json_rd), whose what names the tree in messages
 * ("predicate", "evidence") and whose root names the paths ("'results.
 * flipped_cases[3].id' is missing, not a string").  These add the
 * model's checks on top of its types.
 */
#define T_NULLABLE 1
#define T_OPTIONAL 2 /* a missing key reads as null (keys added later) */

/* The member at path below v of type want, or NULL: also for a null
 * (T_NULLABLE) or a missing member (T_OPTIONAL), which are no failure. */
static const struct rba_json_value *
rd_get(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
       enum rba_json_want want, int flags)
{
	const struct rba_json_value *m = rba_json_rd_at(
		r, v, path, want,
		((flags & T_NULLABLE) ? RBA_JSON_NULL_OK : 0) |
			((flags & T_OPTIONAL) ? RBA_JSON_OPTIONAL : 0));

	return m != NULL && m->type == RBA_JSON_NULL ? NULL : m;
}

static const struct rba_json_value *
rd_obj(struct rba_json_rd *r, const struct rba_json_value *v, const char *path)
{
	return rd_get(r, v, path, RBA_JSON_WANT_OBJ, 0);
}

static void
rd_str(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
       int flags, struct sv *out)
{
	const struct rba_json_value *m = rd_get(r, v, path, RBA_JSON_WANT_STR, flags);

	out->s = m != NULL ? m->str : NULL;
	out->n = m != NULL ? m->len : 0;
	if (m != NULL && memchr(m->str, 0, m->len) != NULL)
		rba_json_rd_fail(r, RBA_E_SCHEMA, v, path, "holds a NUL character");
}

/* A digest in its text form ("sha256:" and 64 lowercase hex digits). */
static void
rd_digest(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	  int flags, struct sv *out)
{
	struct rba_digest dg;

	rd_str(r, v, path, flags, out);
	if (out->s != NULL && rba_digest_parse(out->s, &dg) != 0)
		rba_json_rd_fail(r, RBA_E_SCHEMA, v, path,
				 "is not a sha256: digest");
}

static void
rd_num(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
       int flags, double *out)
{
	const struct rba_json_value *m = rd_get(r, v, path, RBA_JSON_WANT_NUM, flags);

	*out = m != NULL ? m->num : NAN;
}

/* A count or id: an integer from 0 to 2^53. */
static void
rd_int(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
       double *out)
{
	rd_num(r, v, path, 0, out);
	if (!r->err && !(*out >= 0 && *out <= MAX_INT_EXACT && *out == floor(*out)))
		rba_json_rd_fail(r, RBA_E_SCHEMA, v, path,
				 "is not a whole number from 0 to 2^53");
}

static void
rd_bool(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	int *out)
{
	const struct rba_json_value *m = rd_get(r, v, path, RBA_JSON_WANT_BOOL, 0);

	*out = m != NULL && m->type == RBA_JSON_TRUE;
}

/* true, false, or (T_NULLABLE, T_OPTIONAL as flags allow) -1; another
 * value is "not true or false", as for rd_bool. */
static void
rd_tristate(struct rba_json_rd *r, const struct rba_json_value *v,
	    const char *path, int flags, int *out)
{
	const struct rba_json_value *m = rba_json_path(v, path);

	*out = -1;
	if (r->err)
		return;
	if ((m == NULL && (flags & T_OPTIONAL)) ||
	    (m != NULL && m->type == RBA_JSON_NULL && (flags & T_NULLABLE)))
		return;
	rd_bool(r, v, path, out);
}

/* A count that may be null (or, T_OPTIONAL, missing): NaN then. */
static void
rd_optint(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	  int flags, double *out)
{
	rd_num(r, v, path, flags | T_NULLABLE, out);
	if (!r->err && !isnan(*out) &&
	    !(*out >= 0 && *out <= MAX_INT_EXACT && *out == floor(*out)))
		rba_json_rd_fail(r, RBA_E_SCHEMA, v, path,
				 "is not a whole number from 0 to 2^53");
}

/* One of the names who judged an audit (rebuild-audit-report(5)). */
static void
rd_judged_by(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	     int flags, struct sv *out)
{
	rd_str(r, v, path, flags, out);
	if (!r->err && out->s != NULL && !sv_is(*out, "version") &&
	    !sv_is(*out, "sample") && !sv_is(*out, "option"))
		rba_json_rd_fail(r, RBA_E_SCHEMA, v, path,
				 "is not version, sample or option");
}

/* A text into a fixed buffer of cap bytes (NUL included). */
static void
rd_copy(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	int flags, char *out, size_t cap)
{
	struct sv t;

	out[0] = 0;
	rd_str(r, v, path, flags, &t);
	if (r->err || t.s == NULL)
		return;
	if (t.n >= cap) {
		rba_json_rd_fail(r, RBA_E_SCHEMA, v, path, "is longer than %zu bytes",
				 cap - 1);
		return;
	}
	memcpy(out, t.s, t.n);
	out[t.n] = 0;
}

/* predicate.history.earlier_audits: an array of audit summaries. */
static void
rd_earlier(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	   struct ev *e)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_WANT_ARR, 0);

	if (a == NULL)
		return;
	e->earlier = calloc(a->n ? a->n : 1, sizeof(*e->earlier));
	if (e->earlier == NULL) {
		rba_json_rd_fail(r, RBA_E_NOMEM, NULL, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !r->err; i++) {
		const struct rba_json_value *o = &a->items[i];
		struct ev_earlier *x = &e->earlier[i];
		if (o->type != RBA_JSON_OBJECT) {
			rba_json_rd_fail(r, RBA_E_SCHEMA, o, NULL,
					 "is not an object");
			return;
		}
		rd_int(r, o, "id", &x->id);
		rd_copy(r, o, "time", 0, x->time, sizeof(x->time));
		rd_copy(r, o, "verdict", 0, x->verdict, sizeof(x->verdict));
		rd_int(r, o, "exit_status", &x->exit_status);
		rd_copy(r, o, "policy", T_NULLABLE, x->policy, sizeof(x->policy));
		rd_tristate(r, o, "ad_hoc", T_NULLABLE, &x->ad_hoc);
	}
	e->nearlier = a->n;
}

/* An array of strings into a malloc'd array of views. */
static void
rd_strv(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	struct sv **out, size_t *n)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_WANT_ARR, 0);

	*out = NULL;
	*n = 0;
	if (a == NULL)
		return;
	*out = calloc(a->n ? a->n : 1, sizeof(**out));
	if (*out == NULL) {
		rba_json_rd_fail(r, RBA_E_NOMEM, NULL, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct rba_json_value *s = &a->items[i];
		if (s->type != RBA_JSON_STRING || memchr(s->str, 0, s->len) != NULL) {
			rba_json_rd_fail(r, RBA_E_SCHEMA, s, NULL,
					 "is not a string");
			return;
		}
		(*out)[i].s = s->str;
		(*out)[i].n = s->len;
	}
	*n = a->n;
}

static void
rd_link(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	struct ev_link *l)
{
	char k[96];

	snprintf(k, sizeof(k), "%s.state", path);
	rd_str(r, v, k, 0, &l->state);
	snprintf(k, sizeof(k), "%s.pinned", path);
	rd_str(r, v, k, T_NULLABLE, &l->pinned);
	snprintf(k, sizeof(k), "%s.current", path);
	rd_str(r, v, k, T_NULLABLE, &l->current);
	snprintf(k, sizeof(k), "%s.note", path);
	rd_str(r, v, k, T_NULLABLE, &l->note);
	snprintf(k, sizeof(k), "%s.state", path);
	if (!r->err && !sv_is(l->state, "same") && !sv_is(l->state, "changed") &&
	    !sv_is(l->state, "unknown"))
		rba_json_rd_fail(r, RBA_E_SCHEMA, v, k,
				 "is not same, changed or unknown");
}

/* The diff entries: an array of {key, pinned, current}. */
static void
rd_diff(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	struct ev *e)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_WANT_ARR, 0);

	if (a == NULL)
		return;
	e->diff = calloc(a->n ? a->n : 1, sizeof(*e->diff));
	if (e->diff == NULL) {
		rba_json_rd_fail(r, RBA_E_NOMEM, NULL, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !r->err; i++) {
		const struct rba_json_value *f = &a->items[i];
		if (f->type != RBA_JSON_OBJECT) {
			rba_json_rd_fail(r, RBA_E_SCHEMA, f, NULL,
					 "is not an object");
			return;
		}
		rd_str(r, f, "key", 0, &e->diff[i].key);
		rd_str(r, f, "pinned", T_NULLABLE, &e->diff[i].pinned);
		rd_str(r, f, "current", T_NULLABLE, &e->diff[i].current);
	}
	e->ndiff = a->n;
}

/* Flipped cases; with_inputs: the predicate's shape, inputs allowed. */
static void
rd_flips(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	 int with_inputs, struct ev *e)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_WANT_ARR, 0);

	if (a == NULL)
		return;
	e->flipped = calloc(a->n ? a->n : 1, sizeof(*e->flipped));
	if (e->flipped == NULL) {
		rba_json_rd_fail(r, RBA_E_NOMEM, NULL, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !r->err; i++) {
		const struct rba_json_value *o = &a->items[i];
		struct ev_flip *f = &e->flipped[i];
		if (o->type != RBA_JSON_OBJECT) {
			rba_json_rd_fail(r, RBA_E_SCHEMA, o, NULL,
					 "is not an object");
			return;
		}
		rd_str(r, o, "id", 0, &f->id);
		rd_num(r, o, "stored_score", T_NULLABLE, &f->stored_score);
		rd_num(r, o, "rebuilt_score", T_NULLABLE, &f->rebuilt_score);
		rd_str(r, o, "stored_decision", T_NULLABLE, &f->stored_decision);
		rd_str(r, o, "rebuilt_decision", T_NULLABLE, &f->rebuilt_decision);
		rd_num(r, o, "margin", T_NULLABLE, &f->margin);
		rd_num(r, o, "rebuilt_margin", T_NULLABLE, &f->rebuilt_margin);
		rd_num(r, o, "edge", T_NULLABLE, &f->edge);
		if (with_inputs && rba_json_get(o, "inputs") != NULL) {
			const struct rba_json_value *in =
				rd_get(r, o, "inputs", RBA_JSON_WANT_OBJ, 0);
			for (size_t k = 0; in != NULL && k < in->n && !r->err; k++)
				if (in->items[k].type != RBA_JSON_STRING)
					rba_json_rd_fail(r, RBA_E_SCHEMA, in, NULL,
							 "holds a value that is not "
							 "a string");
			f->inputs = in;
		}
	}
	e->nflipped = a->n;
}

/* Format 3: every case of the sample. */
static void
rd_cases(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	 struct ev *e)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_WANT_ARR, 0);

	if (a == NULL)
		return;
	e->cases_list = calloc(a->n ? a->n : 1, sizeof(*e->cases_list));
	if (e->cases_list == NULL) {
		rba_json_rd_fail(r, RBA_E_NOMEM, NULL, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !r->err; i++) {
		const struct rba_json_value *o = &a->items[i];
		struct ev_case *c = &e->cases_list[i];
		if (o->type != RBA_JSON_OBJECT) {
			rba_json_rd_fail(r, RBA_E_SCHEMA, o, NULL,
					 "is not an object");
			return;
		}
		rd_str(r, o, "id", 0, &c->id);
		rd_num(r, o, "stored_score", 0, &c->stored_score);
		rd_num(r, o, "rebuilt_score", 0, &c->rebuilt_score);
		rd_str(r, o, "stored_decision", 0, &c->stored_decision);
	}
	e->ncases_list = a->n;
}

static void
rd_libs(struct rba_json_rd *r, const struct rba_json_value *v, const char *path,
	struct ev *e)
{
	const struct rba_json_value *o = rd_obj(r, v, path);

	if (o == NULL)
		return;
	e->libs = calloc(o->n ? o->n : 1, sizeof(*e->libs));
	if (e->libs == NULL) {
		rba_json_rd_fail(r, RBA_E_NOMEM, NULL, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < o->n && !r->err; i++) {
		const struct rba_json_value *m = &o->items[i];
		e->libs[i].name = sv_c(o->keys[i]);
		if (e->libs[i].name.n >= 128 || e->libs[i].name.n == 0)
			rba_json_rd_fail(r, RBA_E_SCHEMA, o, NULL,
					 "has a key of %zu bytes", e->libs[i].name.n);
		else if (m->type == RBA_JSON_STRING && memchr(m->str, 0, m->len) == NULL)
			e->libs[i].value = (struct sv){ m->str, m->len };
		else if (m->type != RBA_JSON_NULL)
			rba_json_rd_fail(r, RBA_E_SCHEMA, o, o->keys[i],
					 "is not a string or null");
	}
	e->nlibs = o->n;
}

/* The trainer member of an exec version's record or statement. */
static void
rd_trainer(struct rba_json_rd *r, const struct rba_json_value *v, struct ev *e)
{
	if (rba_json_get(v, "trainer") == NULL)
		return;
	e->has_trainer = 1;
	rd_str(r, v, "trainer.kind", 0, &e->tr_kind);
	rd_str(r, v, "trainer.repository", 0, &e->tr_repo);
	rd_str(r, v, "trainer.commit", 0, &e->tr_commit);
	rd_str(r, v, "trainer.tree", 0, &e->tr_tree);
	rd_strv(r, v, "trainer.command", &e->tr_cmd, &e->ntr_cmd);
	rd_str(r, v, "trainer.sandbox", 0, &e->tr_sandbox);
	rd_str(r, v, "trainer.sandbox_profile", 0, &e->tr_profile);
	rd_int(r, v, "trainer.exit_status", &e->tr_exit);
	rd_num(r, v, "trainer.seconds", 0, &e->tr_seconds);
	rd_digest(r, v, "trainer.stdout_sha256", 0, &e->tr_stdout);
	rd_digest(r, v, "trainer.stderr_sha256", 0, &e->tr_stderr);
}

/* ---- an audit record, through its decoder (audit/record.h) ------------- */

static struct sv
sv_of(const char *s)
{
	return sv_c(s);
}

/* An integer of the record, NaN when null or absent. */
static double
int_of(uint64_t u)
{
	return u == AUDIT_RECORD_INT_NONE ? NAN : (double)u;
}

static void
link_of(struct ev_link *l, const struct audit_record_link *a)
{
	l->state = sv_of(a->state);
	l->pinned = sv_of(a->pinned);
	l->current = sv_of(a->current);
	l->note = sv_of(a->note);
}

/* A list of texts as views (malloc'd): 0 or RBA_E_NOMEM. */
static int
strv_of(const struct audit_record_strv *a, struct sv **out, size_t *n)
{
	*out = calloc(a->n ? a->n : 1, sizeof(**out));
	if (*out == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < a->n; i++)
		(*out)[i] = sv_of(a->v[i]);
	*n = a->n;
	return 0;
}

/* The record's verdict, digests, what it verified, its policy, pins,
 * links and environment records. */
static void
record_inputs(struct ev *e, const struct audit_record *v)
{
	e->record_schema = sv_of(v->schema);
	e->version = sv_of(v->version);
	e->rec_time = sv_of(v->time);
	e->verdict = sv_of(v->verdict);
	e->exit_status = int_of(v->exit_status);
	e->art_pinned = sv_of(v->digests.artifact_pinned);
	e->art_rebuilt = sv_of(v->digests.artifact_rebuilt);
	e->art_decisions = sv_of(v->digests.artifact_decisions);
	e->snap_digest = sv_of(v->digests.snapshot);
	e->sample_digest = sv_of(v->digests.sample);
	e->art_verified = v->verified.artifact > 0;
	e->snap_verified = v->verified.snapshot > 0;
	e->sample_verified = v->verified.sample > 0;
	e->pol_digest = sv_of(v->policy.digest);
	e->pol_source = sv_of(v->policy.source);
	e->pol_text = sv_of(v->policy.text);
	e->judged_by = sv_of(v->policy.judged_by);
	e->declared_at = sv_of(v->policy.declared_at);
	e->ad_hoc = v->policy.ad_hoc;
	e->config_hash = sv_of(v->pins.config_hash);
	e->config_trained = sv_of(v->pins.config_hash_trained);
	e->pins_text = sv_of(v->pins.text);
	link_of(&e->code, &v->links.code_revision);
	link_of(&e->config, &v->links.config);
	link_of(&e->snaplink, &v->links.snapshot);
	e->abi_state = sv_of(v->links.trainer_abi.state);
	e->abi_pinned = int_of(v->links.trainer_abi.pinned);
	e->abi_artifact = int_of(v->links.trainer_abi.artifact);
	e->abi_rebuilt = int_of(v->links.trainer_abi.rebuilt);
	e->abi_current = int_of(v->links.trainer_abi.current);
	e->abi_note = sv_of(v->links.trainer_abi.note);
	e->env_state = sv_of(v->links.environment.state);
	e->env_note = sv_of(v->links.environment.note);
	e->env_pinned_digest = sv_of(v->links.environment.pinned);
	e->env_current_digest = sv_of(v->links.environment.current);
	e->env_pinned_record = sv_of(v->environment_records.pinned);
	e->env_current_record = sv_of(v->environment_records.current);
}

/* The sample's counts, the rebuild, the tool and an exec trainer. */
static void
record_results(struct ev *e, const struct audit_record *v)
{
	e->cases = int_of(v->sample.cases);
	e->scored_by = sv_of(v->sample.scored_by);
	e->sample_policy = sv_of(v->sample.policy);
	e->flips = int_of(v->sample.flips);
	e->max_delta = v->sample.max_score_delta;
	e->max_delta_case = sv_of(v->sample.max_delta_case);
	e->score_precision = v->sample.score_precision;
	e->scores_off = int_of(v->sample.scores_off_precision);
	e->scores_off_case = sv_of(v->sample.scores_off_case);
	e->near_cases = int_of(v->sample.near_threshold_cases);
	e->weak_cases = int_of(v->sample.weak_band_cases);
	e->disagreements = int_of(v->sample.policy_disagreements);
	e->val_acc = v->rebuild.validation_accuracy;
	e->val_loss = v->rebuild.validation_loss;
	e->tool_name = sv_of(v->tool.name);
	e->tool_version = sv_of(v->tool.version);
	e->tool_rev = sv_of(v->tool.code_revision);
	e->tool_abi = int_of(v->tool.trainer_abi);
	e->has_trainer = v->has_trainer;
	if (!v->has_trainer)
		return;
	e->tr_kind = sv_of(v->trainer.kind);
	e->tr_repo = sv_of(v->trainer.repository);
	e->tr_commit = sv_of(v->trainer.commit);
	e->tr_tree = sv_of(v->trainer.tree);
	e->tr_sandbox = sv_of(v->trainer.sandbox);
	e->tr_profile = sv_of(v->trainer.sandbox_profile);
	e->tr_exit = int_of(v->trainer.exit_status);
	e->tr_seconds = v->trainer.seconds;
	e->tr_stdout = sv_of(v->trainer.stdout_sha256);
	e->tr_stderr = sv_of(v->trainer.stderr_sha256);
}

/* The record's lists: reasons, warnings, the environment's diff, the
 * flipped cases, the libraries, an exec trainer's command. */
static int
record_lists(struct ev *e, const struct audit_record *v)
{
	const struct audit_record_flip *fl = v->sample.flipped_cases;
	size_t nf = v->sample.nflipped_cases, nd = v->links.environment.nfields;

	if (strv_of(&v->reasons, &e->reasons, &e->nreasons) != 0 ||
	    strv_of(&v->warnings, &e->warnings, &e->nwarnings) != 0 ||
	    (v->has_trainer &&
	     strv_of(&v->trainer.command, &e->tr_cmd, &e->ntr_cmd) != 0))
		return RBA_E_NOMEM;
	e->diff = calloc(nd ? nd : 1, sizeof(*e->diff));
	e->flipped = calloc(nf ? nf : 1, sizeof(*e->flipped));
	e->libs = calloc(v->tool.nlibraries ? v->tool.nlibraries : 1,
			 sizeof(*e->libs));
	if (e->diff == NULL || e->flipped == NULL || e->libs == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < nd; i++) {
		e->diff[i].key = sv_of(v->links.environment.fields[i].key);
		e->diff[i].pinned = sv_of(v->links.environment.fields[i].pinned);
		e->diff[i].current = sv_of(v->links.environment.fields[i].current);
	}
	e->ndiff = nd;
	for (size_t i = 0; i < nf; i++) {
		struct ev_flip *f = &e->flipped[i];
		f->id = sv_of(fl[i].id);
		f->stored_score = fl[i].stored_score;
		f->rebuilt_score = fl[i].rebuilt_score;
		f->stored_decision = sv_of(fl[i].stored_decision);
		f->rebuilt_decision = sv_of(fl[i].rebuilt_decision);
		f->margin = fl[i].margin;
		f->rebuilt_margin = fl[i].rebuilt_margin;
		f->edge = fl[i].edge;
	}
	e->nflipped = nf;
	e->listed = (double)nf;
	for (size_t i = 0; i < v->tool.nlibraries; i++) {
		e->libs[i].name = sv_of(v->tool.libraries[i].name);
		e->libs[i].value = sv_of(v->tool.libraries[i].value);
	}
	e->nlibs = v->tool.nlibraries;
	return 0;
}

/* The fields an audit record gives (rebuild-audit-report(5)), read by
 * the record's own decoder. */
int
evidence_ev_from_record(const struct rba_json_value *rec, uint64_t id, struct ev *e,
	       struct rba_detail *d)
{
	char what[64];
	struct audit_record v;
	int err;

	if (id > 0)
		snprintf(what, sizeof(what), "audit record %llu",
			 (unsigned long long)id);
	else
		snprintf(what, sizeof(what), "the audit record");
	e->ad_hoc = -1;
	e->score_precision = NAN;
	e->scores_off = NAN;
	err = audit_record_decode(rec, what, &v, d);
	if (err == 0) {
		record_inputs(e, &v);
		record_results(e, &v);
		if ((err = record_lists(e, &v)) != 0)
			err = rba_fail(d, err, NULL, 0, 0, "%s: out of memory", what);
	} else {
		e->record_schema = sv_of(v.schema);
	}
	audit_record_release(&v);
	return err;
}

/* The predicate's audit and history. */
static void
statement_read_audit(struct rba_json_rd *r, const struct rba_json_value *p, struct ev *e)
{
	rd_int(r, p, "audit.id", &e->id);
	rd_str(r, p, "audit.time", 0, &e->time);
	rd_str(r, p, "audit.store_id", 0, &e->store_id);
	rd_digest(r, p, "audit.prev_digest", 0, &e->prev);
	rd_digest(r, p, "audit.chain_digest", 0, &e->chain);
	rd_digest(r, p, "audit.record_digest", 0, &e->record_digest);
	rd_str(r, p, "audit.record_schema", 0, &e->record_schema);
	rd_int(r, p, "audit.exit_status", &e->exit_status);
	rd_int(r, p, "history.head.id", &e->head_id);
	rd_digest(r, p, "history.head.digest", 0, &e->head_digest);
	if (e->format >= EV_FORMAT_V2) {
		rd_str(r, p, "history.earlier_since", T_NULLABLE, &e->earlier_since);
		rd_earlier(r, p, "history.earlier_audits", e);
	}
}

/* The predicate's artifact and pins. */
static void
statement_read_artifact(struct rba_json_rd *r, const struct rba_json_value *p, struct ev *e)
{
	rd_digest(r, p, "artifact.pinned", 0, &e->art_pinned);
	rd_digest(r, p, "artifact.rebuilt", T_NULLABLE, &e->art_rebuilt);
	rd_digest(r, p, "artifact.decisions", T_NULLABLE, &e->art_decisions);
	rd_bool(r, p, "artifact.decisions_by_rebuilt", &e->decisions_by_rebuilt);
	rd_bool(r, p, "artifact.bit_identical", &e->bit_identical);
	rd_bool(r, p, "artifact.verified", &e->art_verified);

	rd_digest(r, p, "pins.digest", 0, &e->pins_digest);
	rd_digest(r, p, "pins.config_hash", 0, &e->config_hash);
	rd_digest(r, p, "pins.config_hash_trained", T_NULLABLE, &e->config_trained);
	rd_str(r, p, "pins.text", 0, &e->pins_text);
}

/* The predicate's policy, as the audit stated it. */
static void
statement_read_policy(struct rba_json_rd *r, const struct rba_json_value *p, struct ev *e)
{
	rd_digest(r, p, "policy.digest", 0, &e->pol_digest);
	rd_str(r, p, "policy.source", T_NULLABLE, &e->pol_source);
	if (e->format >= EV_FORMAT_V2) {
		rd_judged_by(r, p, "policy.judged_by", T_NULLABLE, &e->judged_by);
		rd_str(r, p, "policy.declared_at", T_NULLABLE, &e->declared_at);
		rd_tristate(r, p, "policy.ad_hoc", T_NULLABLE, &e->ad_hoc);
	}
	rd_str(r, p, "policy.rule", 0, &e->pol_rule);
	rd_num(r, p, "policy.tolerance.max_score_delta", 0, &e->tol_delta);
	rd_int(r, p, "policy.tolerance.max_flips", &e->tol_flips);
	rd_num(r, p, "policy.near_threshold.margin", 0, &e->near_margin);
	rd_bool(r, p, "policy.near_threshold.require_bits", &e->near_bits);
	rd_int(r, p, "policy.min_near_cases", &e->min_near);
	rd_str(r, p, "policy.text", 0, &e->pol_text);
}

/* The predicate's environment and links. */
static void
statement_read_links(struct rba_json_rd *r, const struct rba_json_value *p, struct ev *e)
{
	rd_str(r, p, "environment.state", 0, &e->env_state);
	rd_str(r, p, "environment.note", T_NULLABLE, &e->env_note);
	rd_digest(r, p, "environment.pinned.digest", T_NULLABLE,
		  &e->env_pinned_digest);
	rd_str(r, p, "environment.pinned.record", T_NULLABLE,
	       &e->env_pinned_record);
	rd_digest(r, p, "environment.current.digest", T_NULLABLE,
		  &e->env_current_digest);
	rd_str(r, p, "environment.current.record", T_NULLABLE,
	       &e->env_current_record);
	rd_diff(r, p, "environment.diff", e);

	rd_link(r, p, "links.code_revision", &e->code);
	rd_str(r, p, "links.trainer_abi.state", 0, &e->abi_state);
	rd_int(r, p, "links.trainer_abi.pinned", &e->abi_pinned);
	rd_int(r, p, "links.trainer_abi.artifact", &e->abi_artifact);
	rd_int(r, p, "links.trainer_abi.rebuilt", &e->abi_rebuilt);
	rd_int(r, p, "links.trainer_abi.current", &e->abi_current);
	rd_str(r, p, "links.trainer_abi.note", T_NULLABLE, &e->abi_note);
	rd_link(r, p, "links.config", &e->config);
	rd_link(r, p, "links.snapshot", &e->snaplink);
}

/* The predicate's results: the counts, the flipped cases, every case. */
static void
statement_read_results(struct rba_json_rd *r, const struct rba_json_value *p, struct ev *e)
{
	rd_int(r, p, "results.flips", &e->flips);
	rd_num(r, p, "results.max_score_delta", 0, &e->max_delta);
	rd_str(r, p, "results.max_delta_case", T_NULLABLE, &e->max_delta_case);
	if (e->format >= EV_FORMAT_V2) {
		rd_optint(r, p, "results.scores_off_precision", 0, &e->scores_off);
		rd_str(r, p, "results.scores_off_case", T_NULLABLE,
		       &e->scores_off_case);
	}
	rd_int(r, p, "results.near_threshold_cases", &e->near_cases);
	rd_int(r, p, "results.weak_band_cases", &e->weak_cases);
	rd_int(r, p, "results.policy_disagreements", &e->disagreements);
	rd_int(r, p, "results.flipped_cases_listed", &e->listed);
	rd_flips(r, p, "results.flipped_cases", 1, e);
	if (e->format >= EV_FORMAT_V3)
		rd_cases(r, p, "results.cases", e);
}

/* The predicate of an evidence file (and its subject), of e->format. */
int
evidence_ev_from_statement(const struct rba_json_value *st, struct ev *e,
		  struct rba_detail *d)
{
	struct rba_json_rd r;
	const struct rba_json_value *p, *subj;

	/* What the first format does not say. */
	e->ad_hoc = -1;
	e->score_precision = NAN;
	e->scores_off = NAN;

	rba_json_rd_init(&r, st, "evidence", d);
	subj = rd_get(&r, st, "subject", RBA_JSON_WANT_ARR, 0);
	if (subj != NULL && subj->n != 1)
		rba_json_rd_fail(&r, RBA_E_SCHEMA, st, "subject",
				 "has %zu entries, not 1", subj->n);
	if (r.err)
		return r.err;
	/* the subject's members are named from the subject ('name') */
	r.root = &subj->items[0];
	rd_str(&r, &subj->items[0], "name", 0, &e->subject_name);
	rd_str(&r, &subj->items[0], "digest.sha256", 0, &e->subject_sha256);
	r.root = st;
	p = rd_obj(&r, st, "predicate");
	if (r.err)
		return r.err;
	/* the predicate's members are named from the predicate */
	r.what = "predicate";
	r.root = p;
	rd_str(&r, p, "version", 0, &e->version);
	rd_str(&r, p, "verdict", 0, &e->verdict);
	rd_str(&r, p, "guarantee", 0, &e->guarantee);
	rd_str(&r, p, "not_guaranteed", 0, &e->not_guaranteed);
	rd_strv(&r, p, "reasons", &e->reasons, &e->nreasons);
	rd_strv(&r, p, "warnings", &e->warnings, &e->nwarnings);

	statement_read_audit(&r, p, e);
	statement_read_artifact(&r, p, e);
	statement_read_policy(&r, p, e);

	rd_digest(&r, p, "snapshot.digest", 0, &e->snap_digest);
	rd_bool(&r, p, "snapshot.verified", &e->snap_verified);
	rd_digest(&r, p, "sample.digest", T_NULLABLE, &e->sample_digest);
	rd_bool(&r, p, "sample.verified", &e->sample_verified);
	rd_int(&r, p, "sample.cases", &e->cases);
	rd_str(&r, p, "sample.scored_by", T_NULLABLE, &e->scored_by);
	rd_digest(&r, p, "sample.policy", T_NULLABLE, &e->sample_policy);
	if (e->format >= EV_FORMAT_V2)
		rd_num(&r, p, "sample.score_precision", T_NULLABLE,
		       &e->score_precision);

	statement_read_links(&r, p, e);
	statement_read_results(&r, p, e);

	rd_num(&r, p, "rebuild.validation_accuracy", T_NULLABLE, &e->val_acc);
	rd_num(&r, p, "rebuild.validation_loss", T_NULLABLE, &e->val_loss);
	rd_str(&r, p, "tool.name", 0, &e->tool_name);
	rd_str(&r, p, "tool.version", 0, &e->tool_version);
	rd_str(&r, p, "tool.code_revision", T_NULLABLE, &e->tool_rev);
	rd_int(&r, p, "tool.trainer_abi", &e->tool_abi);
	rd_libs(&r, p, "tool.libraries", e);
	rd_trainer(&r, p, e);
	rd_str(&r, p, "exported_by.name", 0, &e->exp_name);
	rd_str(&r, p, "exported_by.version", 0, &e->exp_version);
	rd_str(&r, p, "exported_by.code_revision", 0, &e->exp_rev);
	rd_bool(&r, p, "inputs_included", &e->inputs_included);
	rd_str(&r, p, "record", 0, &e->record);
	if (r.err == 0 && e->log)
		return evidence_tlog_read(p, e, d);
	return r.err;
}

