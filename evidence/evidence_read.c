/* evidence_read.c - a parsed audit record or evidence statement, as the model. */
#include "evidence/evidence_priv.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "common/json.h"

#define MAX_INT_EXACT 9007199254740992.0 /* 2^53: counts read back exactly */

/* ---- reading either shape ------------------------------------------------ */

/*
 * A reader fills the model from a parsed tree and stops at the first
 * value that is missing or of the wrong type; what names the tree in
 * messages ("audit record 3", "predicate").
 */
struct rd {
	struct rba_detail *d;
	const char *what;
	int err;
	char base[96]; /* path of the object paths are relative to, "" or "x." */
};

#define T_NULLABLE 1
#define T_OPTIONAL 2 /* a missing key reads as null (keys added later) */

static void
rd_fail(struct rd *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
rd_fail(struct rd *r, int err, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	if (r->err)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rba_detail_clear(r->d);
	r->err = rba_fail(r->d, err, NULL, 0, 0, "%s: %s", r->what, msg);
}

/* The member at a dotted path below v, or NULL. */
static const struct rba_json_value *
jpath(const struct rba_json_value *v, const char *path)
{
	char part[64];

	while (v != NULL && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot != NULL ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = 0;
		v = rba_json_get(v, part);
		path += n + (dot != NULL);
	}
	return v;
}

static const struct rba_json_value *
rd_get(struct rd *r, const struct rba_json_value *v, const char *path,
       enum rba_json_type type, int flags, const char *what)
{
	const struct rba_json_value *m = jpath(v, path);

	if (r->err)
		return NULL;
	if (m != NULL && m->type == RBA_JSON_NULL && (flags & T_NULLABLE))
		return NULL;
	if (m == NULL && (flags & T_OPTIONAL))
		return NULL;
	if (m == NULL || m->type != type) {
		rd_fail(r, RBA_E_SCHEMA, "'%s%s' is %s, not %s%s", r->base, path,
			m == NULL ? "missing" : "of another type", what,
			(flags & T_NULLABLE) ? " or null" : "");
		return NULL;
	}
	return m;
}

static const struct rba_json_value *
rd_obj(struct rd *r, const struct rba_json_value *v, const char *path)
{
	return rd_get(r, v, path, RBA_JSON_OBJECT, 0, "an object");
}

static void
rd_str(struct rd *r, const struct rba_json_value *v, const char *path, int flags,
       struct sv *out)
{
	const struct rba_json_value *m = rd_get(r, v, path, RBA_JSON_STRING, flags,
					    "a string");

	out->s = m != NULL ? m->str : NULL;
	out->n = m != NULL ? m->len : 0;
	if (m != NULL && memchr(m->str, 0, m->len) != NULL)
		rd_fail(r, RBA_E_SCHEMA, "'%s%s' holds a NUL character", r->base,
			path);
}

/* A digest in its text form ("sha256:" and 64 lowercase hex digits). */
static void
rd_digest(struct rd *r, const struct rba_json_value *v, const char *path,
	  int flags, struct sv *out)
{
	struct rba_digest dg;

	rd_str(r, v, path, flags, out);
	if (out->s != NULL && rba_digest_parse(out->s, &dg) != 0)
		rd_fail(r, RBA_E_SCHEMA, "'%s%s' is not a sha256: digest", r->base,
			path);
}

static void
rd_num(struct rd *r, const struct rba_json_value *v, const char *path, int flags,
       double *out)
{
	const struct rba_json_value *m = rd_get(r, v, path, RBA_JSON_NUMBER, flags,
					    "a number");

	*out = m != NULL ? m->num : NAN;
}

/* A count or id: an integer from 0 to 2^53. */
static void
rd_int(struct rd *r, const struct rba_json_value *v, const char *path,
       double *out)
{
	rd_num(r, v, path, 0, out);
	if (!r->err && !(*out >= 0 && *out <= MAX_INT_EXACT && *out == floor(*out)))
		rd_fail(r, RBA_E_SCHEMA, "'%s%s' is not a whole number from 0 to "
			"2^53", r->base, path);
}

static void
rd_bool(struct rd *r, const struct rba_json_value *v, const char *path, int *out)
{
	const struct rba_json_value *m = jpath(v, path);

	*out = 0;
	if (r->err)
		return;
	if (m == NULL || (m->type != RBA_JSON_TRUE && m->type != RBA_JSON_FALSE)) {
		rd_fail(r, RBA_E_SCHEMA, "'%s%s' is %s, not true or false", r->base,
			path, m == NULL ? "missing" : "of another type");
		return;
	}
	*out = m->type == RBA_JSON_TRUE;
}

/* true, false, or (T_NULLABLE, T_OPTIONAL as flags allow) -1. */
static void
rd_tristate(struct rd *r, const struct rba_json_value *v, const char *path,
	    int flags, int *out)
{
	const struct rba_json_value *m = jpath(v, path);

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
rd_optint(struct rd *r, const struct rba_json_value *v, const char *path,
	  int flags, double *out)
{
	rd_num(r, v, path, flags | T_NULLABLE, out);
	if (!r->err && !isnan(*out) &&
	    !(*out >= 0 && *out <= MAX_INT_EXACT && *out == floor(*out)))
		rd_fail(r, RBA_E_SCHEMA, "'%s%s' is not a whole number from 0 to "
			"2^53", r->base, path);
}

/* One of the names who judged an audit (rebuild-audit-report(5)). */
static void
rd_judged_by(struct rd *r, const struct rba_json_value *v, const char *path,
	     int flags, struct sv *out)
{
	rd_str(r, v, path, flags, out);
	if (!r->err && out->s != NULL && !sv_is(*out, "version") &&
	    !sv_is(*out, "sample") && !sv_is(*out, "option"))
		rd_fail(r, RBA_E_SCHEMA, "'%s%s' is not version, sample or option",
			r->base, path);
}

/* A text into a fixed buffer of cap bytes (NUL included). */
static void
rd_copy(struct rd *r, const struct rba_json_value *v, const char *path,
	int flags, char *out, size_t cap)
{
	struct sv t;

	out[0] = 0;
	rd_str(r, v, path, flags, &t);
	if (r->err || t.s == NULL)
		return;
	if (t.n >= cap) {
		rd_fail(r, RBA_E_SCHEMA, "'%s%s' is longer than %zu bytes", r->base,
			path, cap - 1);
		return;
	}
	memcpy(out, t.s, t.n);
	out[t.n] = 0;
}

/* predicate.history.earlier_audits: an array of audit summaries. */
static void
rd_earlier(struct rd *r, const struct rba_json_value *v, const char *path,
	   struct ev *e)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_ARRAY, 0,
						"an array");

	if (a == NULL)
		return;
	e->earlier = calloc(a->n ? a->n : 1, sizeof(*e->earlier));
	if (e->earlier == NULL) {
		rd_fail(r, RBA_E_NOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !r->err; i++) {
		const struct rba_json_value *o = &a->items[i];
		struct ev_earlier *x = &e->earlier[i];
		if (o->type != RBA_JSON_OBJECT) {
			rd_fail(r, RBA_E_SCHEMA, "'%s[%zu]' is not an object", path, i);
			return;
		}
		snprintf(r->base, sizeof(r->base), "%s[%zu].", path, i);
		rd_int(r, o, "id", &x->id);
		rd_copy(r, o, "time", 0, x->time, sizeof(x->time));
		rd_copy(r, o, "verdict", 0, x->verdict, sizeof(x->verdict));
		rd_int(r, o, "exit_status", &x->exit_status);
		rd_copy(r, o, "policy", T_NULLABLE, x->policy, sizeof(x->policy));
		rd_tristate(r, o, "ad_hoc", T_NULLABLE, &x->ad_hoc);
	}
	r->base[0] = 0;
	e->nearlier = a->n;
}

/* An array of strings into a malloc'd array of views. */
static void
rd_strv(struct rd *r, const struct rba_json_value *v, const char *path,
	struct sv **out, size_t *n)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_ARRAY, 0, "an array");

	*out = NULL;
	*n = 0;
	if (a == NULL)
		return;
	*out = calloc(a->n ? a->n : 1, sizeof(**out));
	if (*out == NULL) {
		rd_fail(r, RBA_E_NOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct rba_json_value *s = &a->items[i];
		if (s->type != RBA_JSON_STRING || memchr(s->str, 0, s->len) != NULL) {
			rd_fail(r, RBA_E_SCHEMA, "'%s[%zu]' is not a string", path, i);
			return;
		}
		(*out)[i].s = s->str;
		(*out)[i].n = s->len;
	}
	*n = a->n;
}

static void
rd_link(struct rd *r, const struct rba_json_value *v, const char *path,
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
	if (!r->err && !sv_is(l->state, "same") && !sv_is(l->state, "changed") &&
	    !sv_is(l->state, "unknown"))
		rd_fail(r, RBA_E_SCHEMA, "'%s.state' is not same, changed or unknown",
			path);
}

/* The diff entries: an array of {key, pinned, current}. */
static void
rd_diff(struct rd *r, const struct rba_json_value *v, const char *path,
	struct ev *e)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_ARRAY, 0, "an array");

	if (a == NULL)
		return;
	e->diff = calloc(a->n ? a->n : 1, sizeof(*e->diff));
	if (e->diff == NULL) {
		rd_fail(r, RBA_E_NOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !r->err; i++) {
		const struct rba_json_value *f = &a->items[i];
		if (f->type != RBA_JSON_OBJECT) {
			rd_fail(r, RBA_E_SCHEMA, "'%s[%zu]' is not an object", path, i);
			return;
		}
		snprintf(r->base, sizeof(r->base), "%s[%zu].", path, i);
		rd_str(r, f, "key", 0, &e->diff[i].key);
		rd_str(r, f, "pinned", T_NULLABLE, &e->diff[i].pinned);
		rd_str(r, f, "current", T_NULLABLE, &e->diff[i].current);
	}
	r->base[0] = 0;
	e->ndiff = a->n;
}

/* Flipped cases; with_inputs: the predicate's shape, inputs allowed. */
static void
rd_flips(struct rd *r, const struct rba_json_value *v, const char *path,
	 int with_inputs, struct ev *e)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_ARRAY, 0, "an array");

	if (a == NULL)
		return;
	e->flipped = calloc(a->n ? a->n : 1, sizeof(*e->flipped));
	if (e->flipped == NULL) {
		rd_fail(r, RBA_E_NOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !r->err; i++) {
		const struct rba_json_value *o = &a->items[i];
		struct ev_flip *f = &e->flipped[i];
		if (o->type != RBA_JSON_OBJECT) {
			rd_fail(r, RBA_E_SCHEMA, "'%s[%zu]' is not an object", path, i);
			return;
		}
		snprintf(r->base, sizeof(r->base), "%s[%zu].", path, i);
		rd_str(r, o, "id", 0, &f->id);
		rd_num(r, o, "stored_score", T_NULLABLE, &f->stored_score);
		rd_num(r, o, "rebuilt_score", T_NULLABLE, &f->rebuilt_score);
		rd_str(r, o, "stored_decision", T_NULLABLE, &f->stored_decision);
		rd_str(r, o, "rebuilt_decision", T_NULLABLE, &f->rebuilt_decision);
		rd_num(r, o, "margin", T_NULLABLE, &f->margin);
		rd_num(r, o, "rebuilt_margin", T_NULLABLE, &f->rebuilt_margin);
		rd_num(r, o, "edge", T_NULLABLE, &f->edge);
		if (with_inputs && rba_json_get(o, "inputs") != NULL) {
			const struct rba_json_value *in = rd_get(r, o, "inputs", RBA_JSON_OBJECT,
							     0, "an object");
			for (size_t k = 0; in != NULL && k < in->n && !r->err; k++)
				if (in->items[k].type != RBA_JSON_STRING)
					rd_fail(r, RBA_E_SCHEMA,
						"'%s[%zu].inputs' holds a value that is "
						"not a string", path, i);
			f->inputs = in;
		}
	}
	r->base[0] = 0;
	e->nflipped = a->n;
}

/* Format 3: every case of the sample. */
static void
rd_cases(struct rd *r, const struct rba_json_value *v, const char *path,
	 struct ev *e)
{
	const struct rba_json_value *a = rd_get(r, v, path, RBA_JSON_ARRAY, 0, "an array");

	if (a == NULL)
		return;
	e->cases_list = calloc(a->n ? a->n : 1, sizeof(*e->cases_list));
	if (e->cases_list == NULL) {
		rd_fail(r, RBA_E_NOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !r->err; i++) {
		const struct rba_json_value *o = &a->items[i];
		struct ev_case *c = &e->cases_list[i];
		if (o->type != RBA_JSON_OBJECT) {
			rd_fail(r, RBA_E_SCHEMA, "'%s[%zu]' is not an object", path, i);
			return;
		}
		snprintf(r->base, sizeof(r->base), "%s[%zu].", path, i);
		rd_str(r, o, "id", 0, &c->id);
		rd_num(r, o, "stored_score", 0, &c->stored_score);
		rd_num(r, o, "rebuilt_score", 0, &c->rebuilt_score);
		rd_str(r, o, "stored_decision", 0, &c->stored_decision);
	}
	r->base[0] = 0;
	e->ncases_list = a->n;
}

static void
rd_libs(struct rd *r, const struct rba_json_value *v, const char *path,
	struct ev *e)
{
	const struct rba_json_value *o = rd_obj(r, v, path);

	if (o == NULL)
		return;
	e->libs = calloc(o->n ? o->n : 1, sizeof(*e->libs));
	if (e->libs == NULL) {
		rd_fail(r, RBA_E_NOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < o->n && !r->err; i++) {
		const struct rba_json_value *m = &o->items[i];
		e->libs[i].name = sv_c(o->keys[i]);
		if (e->libs[i].name.n >= 128 || e->libs[i].name.n == 0)
			rd_fail(r, RBA_E_SCHEMA, "'%s' has a key of %zu bytes", path,
				e->libs[i].name.n);
		else if (m->type == RBA_JSON_STRING && memchr(m->str, 0, m->len) == NULL)
			e->libs[i].value = (struct sv){ m->str, m->len };
		else if (m->type != RBA_JSON_NULL)
			rd_fail(r, RBA_E_SCHEMA, "'%s.%s' is not a string or null", path,
				o->keys[i]);
	}
	e->nlibs = o->n;
}

/* The trainer member of an exec version's record or statement. */
static void
rd_trainer(struct rd *r, const struct rba_json_value *v, struct ev *e)
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

/* An audit record's digests, what it verified, its policy and pins. */
static void
record_read_inputs(struct rd *r, const struct rba_json_value *rec, struct ev *e)
{
	rd_digest(r, rec, "digests.artifact_pinned", 0, &e->art_pinned);
	rd_digest(r, rec, "digests.artifact_rebuilt", T_NULLABLE, &e->art_rebuilt);
	/* Records written before the audit named it have no such key. */
	rd_digest(r, rec, "digests.artifact_decisions", T_NULLABLE | T_OPTIONAL,
		  &e->art_decisions);
	rd_digest(r, rec, "digests.snapshot", 0, &e->snap_digest);
	rd_digest(r, rec, "digests.sample", T_NULLABLE, &e->sample_digest);
	rd_bool(r, rec, "verified.artifact", &e->art_verified);
	rd_bool(r, rec, "verified.snapshot", &e->snap_verified);
	rd_bool(r, rec, "verified.sample", &e->sample_verified);

	rd_digest(r, rec, "policy.digest", 0, &e->pol_digest);
	rd_str(r, rec, "policy.source", T_NULLABLE, &e->pol_source);
	rd_str(r, rec, "policy.text", 0, &e->pol_text);
	/* Records written before the declared-before rule lack these. */
	rd_judged_by(r, rec, "policy.judged_by", T_NULLABLE | T_OPTIONAL,
		     &e->judged_by);
	rd_str(r, rec, "policy.declared_at", T_NULLABLE | T_OPTIONAL,
	       &e->declared_at);
	rd_tristate(r, rec, "policy.ad_hoc", T_OPTIONAL, &e->ad_hoc);
	rd_digest(r, rec, "pins.config_hash", 0, &e->config_hash);
	rd_digest(r, rec, "pins.config_hash_trained", T_NULLABLE, &e->config_trained);
	rd_str(r, rec, "pins.text", 0, &e->pins_text);
}

/* An audit record's links and environment records. */
static void
record_read_links(struct rd *r, const struct rba_json_value *rec, struct ev *e)
{
	rd_link(r, rec, "links.code_revision", &e->code);
	rd_link(r, rec, "links.config", &e->config);
	rd_link(r, rec, "links.snapshot", &e->snaplink);
	rd_str(r, rec, "links.trainer_abi.state", 0, &e->abi_state);
	rd_int(r, rec, "links.trainer_abi.pinned", &e->abi_pinned);
	rd_int(r, rec, "links.trainer_abi.artifact", &e->abi_artifact);
	rd_int(r, rec, "links.trainer_abi.rebuilt", &e->abi_rebuilt);
	rd_int(r, rec, "links.trainer_abi.current", &e->abi_current);
	rd_str(r, rec, "links.trainer_abi.note", T_NULLABLE, &e->abi_note);
	rd_str(r, rec, "links.environment.state", 0, &e->env_state);
	rd_str(r, rec, "links.environment.note", T_NULLABLE, &e->env_note);
	rd_digest(r, rec, "links.environment.pinned", T_NULLABLE,
		  &e->env_pinned_digest);
	rd_digest(r, rec, "links.environment.current", T_NULLABLE,
		  &e->env_current_digest);
	rd_diff(r, rec, "links.environment.fields", e);
	rd_str(r, rec, "environment_records.pinned", T_NULLABLE,
	       &e->env_pinned_record);
	rd_str(r, rec, "environment_records.current", T_NULLABLE,
	       &e->env_current_record);
}

/* The fields an audit record gives (rebuild-audit-report(5)). */
int
evidence_ev_from_record(const struct rba_json_value *rec, uint64_t id, struct ev *e,
	       struct rba_detail *d)
{
	char what[64];
	struct rd r = { d, what, 0, "" };
	if (id > 0)
		snprintf(what, sizeof(what), "audit record %llu",
			 (unsigned long long)id);
	else
		snprintf(what, sizeof(what), "the audit record");
	e->ad_hoc = -1;
	e->score_precision = NAN;
	e->scores_off = NAN;
	if (rec->type != RBA_JSON_OBJECT)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "%s is not a JSON object",
				what);
	rd_str(&r, rec, "schema", 0, &e->record_schema);
	if (r.err)
		return r.err;
	if (!sv_is(e->record_schema, AUDIT_RECORD_SCHEMA)) {
		int newer = strncmp(e->record_schema.s, EVIDENCE_AUDIT_SCHEMA_PREFIX,
				    strlen(EVIDENCE_AUDIT_SCHEMA_PREFIX)) == 0;
		return rba_fail(d, newer ? RBA_E_NEWER : RBA_E_SCHEMA, NULL, 0, 0,
				"%s has schema '%s'; this tool reads %s", what,
				e->record_schema.s, AUDIT_RECORD_SCHEMA);
	}
	rd_str(&r, rec, "version", 0, &e->version);
	rd_str(&r, rec, "time", 0, &e->rec_time);
	rd_str(&r, rec, "verdict", 0, &e->verdict);
	rd_int(&r, rec, "exit_status", &e->exit_status);
	rd_strv(&r, rec, "reasons", &e->reasons, &e->nreasons);
	rd_strv(&r, rec, "warnings", &e->warnings, &e->nwarnings);

	record_read_inputs(&r, rec, e);
	record_read_links(&r, rec, e);

	rd_int(&r, rec, "sample.cases", &e->cases);
	rd_str(&r, rec, "sample.scored_by", T_NULLABLE, &e->scored_by);
	rd_digest(&r, rec, "sample.policy", T_NULLABLE, &e->sample_policy);
	rd_int(&r, rec, "sample.flips", &e->flips);
	rd_num(&r, rec, "sample.max_score_delta", 0, &e->max_delta);
	rd_str(&r, rec, "sample.max_delta_case", T_NULLABLE, &e->max_delta_case);
	/* Records written before the sample claim was counted lack these. */
	rd_num(&r, rec, "sample.score_precision", T_OPTIONAL, &e->score_precision);
	rd_optint(&r, rec, "sample.scores_off_precision", T_OPTIONAL, &e->scores_off);
	rd_str(&r, rec, "sample.scores_off_case", T_NULLABLE | T_OPTIONAL,
	       &e->scores_off_case);
	rd_int(&r, rec, "sample.near_threshold_cases", &e->near_cases);
	rd_int(&r, rec, "sample.weak_band_cases", &e->weak_cases);
	rd_int(&r, rec, "sample.policy_disagreements", &e->disagreements);
	rd_flips(&r, rec, "sample.flipped_cases", 0, e);
	e->listed = (double)e->nflipped;

	rd_num(&r, rec, "rebuild.validation_accuracy", T_NULLABLE, &e->val_acc);
	rd_num(&r, rec, "rebuild.validation_loss", T_NULLABLE, &e->val_loss);
	rd_str(&r, rec, "tool.name", 0, &e->tool_name);
	rd_str(&r, rec, "tool.version", 0, &e->tool_version);
	rd_str(&r, rec, "tool.code_revision", T_NULLABLE, &e->tool_rev);
	rd_int(&r, rec, "tool.trainer_abi", &e->tool_abi);
	rd_libs(&r, rec, "tool.libraries", e);
	rd_trainer(&r, rec, e);
	return r.err;
}

/* The predicate's audit and history. */
static void
statement_read_audit(struct rd *r, const struct rba_json_value *p, struct ev *e)
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
statement_read_artifact(struct rd *r, const struct rba_json_value *p, struct ev *e)
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
statement_read_policy(struct rd *r, const struct rba_json_value *p, struct ev *e)
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
statement_read_links(struct rd *r, const struct rba_json_value *p, struct ev *e)
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
statement_read_results(struct rd *r, const struct rba_json_value *p, struct ev *e)
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
	struct rd r = { d, "evidence", 0, "" };
	const struct rba_json_value *p, *subj;

	/* What the first format does not say. */
	e->ad_hoc = -1;
	e->score_precision = NAN;
	e->scores_off = NAN;

	subj = rd_get(&r, st, "subject", RBA_JSON_ARRAY, 0, "an array");
	if (subj != NULL && subj->n != 1)
		rd_fail(&r, RBA_E_SCHEMA, "'subject' has %zu entries, not 1", subj->n);
	if (r.err)
		return r.err;
	rd_str(&r, &subj->items[0], "name", 0, &e->subject_name);
	rd_str(&r, &subj->items[0], "digest.sha256", 0, &e->subject_sha256);
	p = rd_obj(&r, st, "predicate");
	if (r.err)
		return r.err;
	r.what = "predicate";
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

