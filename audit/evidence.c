/*
 * evidence.c - the evidence file: rendering one history record as an
 * in-toto statement, signing and placing it, and checking one offline.
 *
 * One model, struct ev, sits between the two JSON shapes: it is read
 * from an audit record (export) or from an evidence predicate (verify),
 * and one function renders it.  Verify therefore compares bytes rather
 * than fields: a file is in canonical form when rendering what was read
 * from it gives the file back, and its predicate agrees with its embedded
 * record when rendering what was read from the record gives the file
 * back too.  Between those two comparisons sit the checks that say, in
 * words, which digest, count or sentence is wrong.
 */
#include "audit/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/json.h"
#include "audit/sample.h"
#include "common/fileio.h"
#include "policy/policy.h"
#include "rebuild/envrec.h"

#define RECORD_SCHEMA_PREFIX "rebuild-audit/audit/"
#define EXPORTER_NAME RBA_TOOL_NAME
#define MAX_INT_EXACT 9007199254740992.0 /* 2^53: counts read back exactly */

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

struct ev_lib {
	struct sv name, value;
};

/* Numbers: NaN is JSON null. */
struct ev {
	struct sv subject_name, subject_sha256;
	struct sv version, verdict, guarantee, not_guaranteed;
	struct sv *reasons, *warnings;
	size_t nreasons, nwarnings;
	/* audit */
	double id, exit_status;
	struct sv time, store_id, prev, chain, record_digest, record_schema;
	struct sv rec_time; /* the record's own "time" (record side only) */
	/* artifact */
	struct sv art_pinned, art_rebuilt;
	int bit_identical, art_verified;
	/* pins */
	struct sv pins_digest, config_hash, config_trained, pins_text;
	/* policy */
	struct sv pol_digest, pol_source, pol_rule, pol_text;
	double tol_delta, tol_flips, near_margin, min_near;
	int near_bits;
	/* snapshot, sample */
	struct sv snap_digest;
	int snap_verified;
	struct sv sample_digest, scored_by, sample_policy;
	int sample_verified;
	double cases;
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
	/* rebuild, tool, exporter */
	double val_acc, val_loss;
	struct sv tool_name, tool_version, tool_rev;
	double tool_abi;
	struct ev_lib *libs;
	size_t nlibs;
	struct sv exp_name, exp_version, exp_rev;
	int inputs_included;
	struct sv record;

	/* Storage for texts computed rather than read. */
	char b_subject_name[STORE_VERSION_NAME_MAX + 16];
	char b_subject_hex[2 * RBA_DIGEST_LEN + 1];
	char b_guarantee[EVIDENCE_TEXT_MAX], b_not[EVIDENCE_TEXT_MAX];
	char b_pins_digest[RBA_DIGEST_TEXT_LEN + 1];
	char b_record_digest[RBA_DIGEST_TEXT_LEN + 1];
	char b_prev[RBA_DIGEST_TEXT_LEN + 1], b_chain[RBA_DIGEST_TEXT_LEN + 1];
	char b_time[32], b_store_id[64];
	/* Inputs built by export (owned). */
	struct rba_json_value *inputs_owned;
	size_t ninputs_owned;
};

static struct sv
sv_c(const char *s)
{
	struct sv v = { s, s != NULL ? strlen(s) : 0 };
	return v;
}

static int
sv_eq(struct sv a, struct sv b)
{
	if (a.s == NULL || b.s == NULL)
		return a.s == NULL && b.s == NULL;
	return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
}

static int
sv_is(struct sv a, const char *s)
{
	return a.s != NULL && sv_eq(a, sv_c(s));
}

/* A C string for messages: the view without NUL bytes, or "null". */
static const char *
sv_show(struct sv a)
{
	return a.s == NULL ? "null" : a.s;
}

static void
ev_release(struct ev *e)
{
	free(e->reasons);
	free(e->warnings);
	free(e->diff);
	free(e->flipped);
	free(e->libs);
	for (size_t i = 0; i < e->ninputs_owned; i++)
		rba_json_release(&e->inputs_owned[i]);
	free(e->inputs_owned);
	memset(e, 0, sizeof(*e));
}

/* ---- the canonical writer ------------------------------------------------ */

/*
 * Two-space indentation, one member per line, ": " after a key, empty
 * containers as {} and []: the layout of rebuild-audit-evidence(5).
 */
struct jw {
	struct rba_buf *b;
	int depth;
	int first[RBA_JSON_MAX_DEPTH + 2];
};

static void
jw_item(struct jw *w, const char *key)
{
	if (w->depth > 0) {
		if (!w->first[w->depth])
			rba_buf_put_u8(w->b, ',');
		w->first[w->depth] = 0;
		rba_buf_put_u8(w->b, '\n');
		for (int i = 0; i < w->depth; i++)
			rba_buf_put(w->b, "  ", 2);
	}
	if (key != NULL)
		rba_json_put_key(w->b, key);
}

static void
jw_open(struct jw *w, const char *key, char c)
{
	jw_item(w, key);
	rba_buf_put_u8(w->b, (uint8_t)c);
	if (w->depth < RBA_JSON_MAX_DEPTH + 1)
		w->depth++;
	w->first[w->depth] = 1;
}

static void
jw_close(struct jw *w, char c)
{
	int empty = w->first[w->depth];

	w->depth--;
	if (!empty) {
		rba_buf_put_u8(w->b, '\n');
		for (int i = 0; i < w->depth; i++)
			rba_buf_put(w->b, "  ", 2);
	}
	rba_buf_put_u8(w->b, (uint8_t)c);
}

static void
jw_sv(struct jw *w, const char *key, struct sv v)
{
	jw_item(w, key);
	if (v.s == NULL)
		rba_buf_put(w->b, "null", 4);
	else
		rba_json_put_strn(w->b, v.s, v.n);
}

static void
jw_str(struct jw *w, const char *key, const char *s)
{
	jw_sv(w, key, sv_c(s));
}

static void
jw_num(struct jw *w, const char *key, double v)
{
	jw_item(w, key);
	rba_json_put_num(w->b, v);
}

static void
jw_bool(struct jw *w, const char *key, int v)
{
	jw_item(w, key);
	if (v)
		rba_buf_put(w->b, "true", 4);
	else
		rba_buf_put(w->b, "false", 5);
}

/* Any parsed value, in the same layout (inputs, and the form check). */
static void
jw_value(struct jw *w, const char *key, const struct rba_json_value *v)
{
	switch (v->type) {
	case RBA_JSON_NULL: jw_sv(w, key, sv_c(NULL)); break;
	case RBA_JSON_FALSE: jw_bool(w, key, 0); break;
	case RBA_JSON_TRUE: jw_bool(w, key, 1); break;
	case RBA_JSON_NUMBER: jw_num(w, key, v->num); break;
	case RBA_JSON_STRING: {
		struct sv s = { v->str, v->len };
		jw_sv(w, key, s);
		break;
	}
	case RBA_JSON_ARRAY:
	case RBA_JSON_OBJECT:
		jw_open(w, key, v->type == RBA_JSON_ARRAY ? '[' : '{');
		for (size_t i = 0; i < v->n; i++)
			jw_value(w, v->type == RBA_JSON_OBJECT ? v->keys[i] : NULL,
				 &v->items[i]);
		jw_close(w, v->type == RBA_JSON_ARRAY ? ']' : '}');
		break;
	}
}

static void
jw_link(struct jw *w, const char *key, const struct ev_link *l)
{
	jw_open(w, key, '{');
	jw_sv(w, "state", l->state);
	jw_sv(w, "pinned", l->pinned);
	jw_sv(w, "current", l->current);
	jw_sv(w, "note", l->note);
	jw_close(w, '}');
}

static void
jw_strv(struct jw *w, const char *key, const struct sv *v, size_t n)
{
	jw_open(w, key, '[');
	for (size_t i = 0; i < n; i++)
		jw_sv(w, NULL, v[i]);
	jw_close(w, ']');
}

/* The statement, every key in its place. */
static void
ev_render(const struct ev *e, struct rba_buf *b)
{
	struct jw w;

	memset(&w, 0, sizeof(w));
	w.b = b;
	jw_open(&w, NULL, '{');
	jw_str(&w, "_type", EVIDENCE_STATEMENT_TYPE);
	jw_open(&w, "subject", '[');
	jw_open(&w, NULL, '{');
	jw_sv(&w, "name", e->subject_name);
	jw_open(&w, "digest", '{');
	jw_sv(&w, "sha256", e->subject_sha256);
	jw_close(&w, '}');
	jw_close(&w, '}');
	jw_close(&w, ']');
	jw_str(&w, "predicateType", EVIDENCE_PREDICATE_TYPE);
	jw_open(&w, "predicate", '{');
	jw_sv(&w, "version", e->version);
	jw_sv(&w, "verdict", e->verdict);
	jw_sv(&w, "guarantee", e->guarantee);
	jw_sv(&w, "not_guaranteed", e->not_guaranteed);
	jw_strv(&w, "reasons", e->reasons, e->nreasons);
	jw_strv(&w, "warnings", e->warnings, e->nwarnings);

	jw_open(&w, "audit", '{');
	jw_num(&w, "id", e->id);
	jw_sv(&w, "time", e->time);
	jw_sv(&w, "store_id", e->store_id);
	jw_sv(&w, "prev_digest", e->prev);
	jw_sv(&w, "chain_digest", e->chain);
	jw_sv(&w, "record_digest", e->record_digest);
	jw_sv(&w, "record_schema", e->record_schema);
	jw_num(&w, "exit_status", e->exit_status);
	jw_close(&w, '}');

	jw_open(&w, "artifact", '{');
	jw_sv(&w, "pinned", e->art_pinned);
	jw_sv(&w, "rebuilt", e->art_rebuilt);
	jw_bool(&w, "bit_identical", e->bit_identical);
	jw_bool(&w, "verified", e->art_verified);
	jw_close(&w, '}');

	jw_open(&w, "pins", '{');
	jw_sv(&w, "digest", e->pins_digest);
	jw_sv(&w, "config_hash", e->config_hash);
	jw_sv(&w, "config_hash_trained", e->config_trained);
	jw_sv(&w, "text", e->pins_text);
	jw_close(&w, '}');

	jw_open(&w, "policy", '{');
	jw_sv(&w, "digest", e->pol_digest);
	jw_sv(&w, "source", e->pol_source);
	jw_sv(&w, "rule", e->pol_rule);
	jw_open(&w, "tolerance", '{');
	jw_num(&w, "max_score_delta", e->tol_delta);
	jw_num(&w, "max_flips", e->tol_flips);
	jw_close(&w, '}');
	jw_open(&w, "near_threshold", '{');
	jw_num(&w, "margin", e->near_margin);
	jw_bool(&w, "require_bits", e->near_bits);
	jw_close(&w, '}');
	jw_num(&w, "min_near_cases", e->min_near);
	jw_sv(&w, "text", e->pol_text);
	jw_close(&w, '}');

	jw_open(&w, "snapshot", '{');
	jw_sv(&w, "digest", e->snap_digest);
	jw_bool(&w, "verified", e->snap_verified);
	jw_close(&w, '}');

	jw_open(&w, "sample", '{');
	jw_sv(&w, "digest", e->sample_digest);
	jw_bool(&w, "verified", e->sample_verified);
	jw_num(&w, "cases", e->cases);
	jw_sv(&w, "scored_by", e->scored_by);
	jw_sv(&w, "policy", e->sample_policy);
	jw_close(&w, '}');

	jw_open(&w, "environment", '{');
	jw_sv(&w, "state", e->env_state);
	jw_sv(&w, "note", e->env_note);
	jw_open(&w, "pinned", '{');
	jw_sv(&w, "digest", e->env_pinned_digest);
	jw_sv(&w, "record", e->env_pinned_record);
	jw_close(&w, '}');
	jw_open(&w, "current", '{');
	jw_sv(&w, "digest", e->env_current_digest);
	jw_sv(&w, "record", e->env_current_record);
	jw_close(&w, '}');
	jw_open(&w, "diff", '[');
	for (size_t i = 0; i < e->ndiff; i++) {
		jw_open(&w, NULL, '{');
		jw_sv(&w, "key", e->diff[i].key);
		jw_sv(&w, "pinned", e->diff[i].pinned);
		jw_sv(&w, "current", e->diff[i].current);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_close(&w, '}');

	jw_open(&w, "links", '{');
	jw_link(&w, "code_revision", &e->code);
	jw_open(&w, "trainer_abi", '{');
	jw_sv(&w, "state", e->abi_state);
	jw_num(&w, "pinned", e->abi_pinned);
	jw_num(&w, "artifact", e->abi_artifact);
	jw_num(&w, "rebuilt", e->abi_rebuilt);
	jw_num(&w, "current", e->abi_current);
	jw_sv(&w, "note", e->abi_note);
	jw_close(&w, '}');
	jw_link(&w, "config", &e->config);
	jw_link(&w, "snapshot", &e->snaplink);
	jw_close(&w, '}');

	jw_open(&w, "results", '{');
	jw_num(&w, "flips", e->flips);
	jw_num(&w, "max_score_delta", e->max_delta);
	jw_sv(&w, "max_delta_case", e->max_delta_case);
	jw_num(&w, "near_threshold_cases", e->near_cases);
	jw_num(&w, "weak_band_cases", e->weak_cases);
	jw_num(&w, "policy_disagreements", e->disagreements);
	jw_num(&w, "flipped_cases_listed", e->listed);
	jw_open(&w, "flipped_cases", '[');
	for (size_t i = 0; i < e->nflipped; i++) {
		const struct ev_flip *f = &e->flipped[i];
		jw_open(&w, NULL, '{');
		jw_sv(&w, "id", f->id);
		jw_num(&w, "stored_score", f->stored_score);
		jw_num(&w, "rebuilt_score", f->rebuilt_score);
		jw_sv(&w, "stored_decision", f->stored_decision);
		jw_sv(&w, "rebuilt_decision", f->rebuilt_decision);
		jw_num(&w, "margin", f->margin);
		jw_num(&w, "rebuilt_margin", f->rebuilt_margin);
		jw_num(&w, "edge", f->edge);
		if (f->inputs != NULL)
			jw_value(&w, "inputs", f->inputs);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_close(&w, '}');

	jw_open(&w, "rebuild", '{');
	jw_num(&w, "validation_accuracy", e->val_acc);
	jw_num(&w, "validation_loss", e->val_loss);
	jw_close(&w, '}');

	jw_open(&w, "tool", '{');
	jw_sv(&w, "name", e->tool_name);
	jw_sv(&w, "version", e->tool_version);
	jw_sv(&w, "code_revision", e->tool_rev);
	jw_num(&w, "trainer_abi", e->tool_abi);
	jw_open(&w, "libraries", '{');
	for (size_t i = 0; i < e->nlibs; i++) {
		char key[128];
		snprintf(key, sizeof(key), "%.*s", (int)e->libs[i].name.n,
			 e->libs[i].name.s);
		jw_sv(&w, key, e->libs[i].value);
	}
	jw_close(&w, '}');
	jw_close(&w, '}');

	jw_open(&w, "exported_by", '{');
	jw_sv(&w, "name", e->exp_name);
	jw_sv(&w, "version", e->exp_version);
	jw_sv(&w, "code_revision", e->exp_rev);
	jw_close(&w, '}');
	jw_bool(&w, "inputs_included", e->inputs_included);
	jw_sv(&w, "record", e->record);
	jw_close(&w, '}');
	jw_close(&w, '}');
	rba_buf_put_u8(b, '\n');
}

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

/* The fields an audit record gives (rebuild-audit-report(5)). */
static int
ev_from_record(const struct rba_json_value *rec, uint64_t id, struct ev *e,
	       struct rba_detail *d)
{
	char what[64];
	struct rd r = { d, what, 0, "" };
	snprintf(what, sizeof(what), "audit record %llu", (unsigned long long)id);
	if (rec->type != RBA_JSON_OBJECT)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "%s is not a JSON object",
				what);
	rd_str(&r, rec, "schema", 0, &e->record_schema);
	if (r.err)
		return r.err;
	if (!sv_is(e->record_schema, AUDIT_RECORD_SCHEMA)) {
		int newer = strncmp(e->record_schema.s, RECORD_SCHEMA_PREFIX,
				    strlen(RECORD_SCHEMA_PREFIX)) == 0;
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

	rd_digest(&r, rec, "digests.artifact_pinned", 0, &e->art_pinned);
	rd_digest(&r, rec, "digests.artifact_rebuilt", T_NULLABLE, &e->art_rebuilt);
	rd_digest(&r, rec, "digests.snapshot", 0, &e->snap_digest);
	rd_digest(&r, rec, "digests.sample", T_NULLABLE, &e->sample_digest);
	rd_bool(&r, rec, "verified.artifact", &e->art_verified);
	rd_bool(&r, rec, "verified.snapshot", &e->snap_verified);
	rd_bool(&r, rec, "verified.sample", &e->sample_verified);

	rd_digest(&r, rec, "policy.digest", 0, &e->pol_digest);
	rd_str(&r, rec, "policy.source", T_NULLABLE, &e->pol_source);
	rd_str(&r, rec, "policy.text", 0, &e->pol_text);
	rd_digest(&r, rec, "pins.config_hash", 0, &e->config_hash);
	rd_digest(&r, rec, "pins.config_hash_trained", T_NULLABLE, &e->config_trained);
	rd_str(&r, rec, "pins.text", 0, &e->pins_text);

	rd_link(&r, rec, "links.code_revision", &e->code);
	rd_link(&r, rec, "links.config", &e->config);
	rd_link(&r, rec, "links.snapshot", &e->snaplink);
	rd_str(&r, rec, "links.trainer_abi.state", 0, &e->abi_state);
	rd_int(&r, rec, "links.trainer_abi.pinned", &e->abi_pinned);
	rd_int(&r, rec, "links.trainer_abi.artifact", &e->abi_artifact);
	rd_int(&r, rec, "links.trainer_abi.rebuilt", &e->abi_rebuilt);
	rd_int(&r, rec, "links.trainer_abi.current", &e->abi_current);
	rd_str(&r, rec, "links.trainer_abi.note", T_NULLABLE, &e->abi_note);
	rd_str(&r, rec, "links.environment.state", 0, &e->env_state);
	rd_str(&r, rec, "links.environment.note", T_NULLABLE, &e->env_note);
	rd_digest(&r, rec, "links.environment.pinned", T_NULLABLE,
		  &e->env_pinned_digest);
	rd_digest(&r, rec, "links.environment.current", T_NULLABLE,
		  &e->env_current_digest);
	rd_diff(&r, rec, "links.environment.fields", e);
	rd_str(&r, rec, "environment_records.pinned", T_NULLABLE,
	       &e->env_pinned_record);
	rd_str(&r, rec, "environment_records.current", T_NULLABLE,
	       &e->env_current_record);

	rd_int(&r, rec, "sample.cases", &e->cases);
	rd_str(&r, rec, "sample.scored_by", T_NULLABLE, &e->scored_by);
	rd_digest(&r, rec, "sample.policy", T_NULLABLE, &e->sample_policy);
	rd_int(&r, rec, "sample.flips", &e->flips);
	rd_num(&r, rec, "sample.max_score_delta", 0, &e->max_delta);
	rd_str(&r, rec, "sample.max_delta_case", T_NULLABLE, &e->max_delta_case);
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
	return r.err;
}

/* The predicate of an evidence file (and its subject). */
static int
ev_from_statement(const struct rba_json_value *st, struct ev *e,
		  struct rba_detail *d)
{
	struct rd r = { d, "evidence", 0, "" };
	const struct rba_json_value *p, *subj;

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

	rd_int(&r, p, "audit.id", &e->id);
	rd_str(&r, p, "audit.time", 0, &e->time);
	rd_str(&r, p, "audit.store_id", 0, &e->store_id);
	rd_digest(&r, p, "audit.prev_digest", 0, &e->prev);
	rd_digest(&r, p, "audit.chain_digest", 0, &e->chain);
	rd_digest(&r, p, "audit.record_digest", 0, &e->record_digest);
	rd_str(&r, p, "audit.record_schema", 0, &e->record_schema);
	rd_int(&r, p, "audit.exit_status", &e->exit_status);

	rd_digest(&r, p, "artifact.pinned", 0, &e->art_pinned);
	rd_digest(&r, p, "artifact.rebuilt", T_NULLABLE, &e->art_rebuilt);
	rd_bool(&r, p, "artifact.bit_identical", &e->bit_identical);
	rd_bool(&r, p, "artifact.verified", &e->art_verified);

	rd_digest(&r, p, "pins.digest", 0, &e->pins_digest);
	rd_digest(&r, p, "pins.config_hash", 0, &e->config_hash);
	rd_digest(&r, p, "pins.config_hash_trained", T_NULLABLE, &e->config_trained);
	rd_str(&r, p, "pins.text", 0, &e->pins_text);

	rd_digest(&r, p, "policy.digest", 0, &e->pol_digest);
	rd_str(&r, p, "policy.source", T_NULLABLE, &e->pol_source);
	rd_str(&r, p, "policy.rule", 0, &e->pol_rule);
	rd_num(&r, p, "policy.tolerance.max_score_delta", 0, &e->tol_delta);
	rd_int(&r, p, "policy.tolerance.max_flips", &e->tol_flips);
	rd_num(&r, p, "policy.near_threshold.margin", 0, &e->near_margin);
	rd_bool(&r, p, "policy.near_threshold.require_bits", &e->near_bits);
	rd_int(&r, p, "policy.min_near_cases", &e->min_near);
	rd_str(&r, p, "policy.text", 0, &e->pol_text);

	rd_digest(&r, p, "snapshot.digest", 0, &e->snap_digest);
	rd_bool(&r, p, "snapshot.verified", &e->snap_verified);
	rd_digest(&r, p, "sample.digest", T_NULLABLE, &e->sample_digest);
	rd_bool(&r, p, "sample.verified", &e->sample_verified);
	rd_int(&r, p, "sample.cases", &e->cases);
	rd_str(&r, p, "sample.scored_by", T_NULLABLE, &e->scored_by);
	rd_digest(&r, p, "sample.policy", T_NULLABLE, &e->sample_policy);

	rd_str(&r, p, "environment.state", 0, &e->env_state);
	rd_str(&r, p, "environment.note", T_NULLABLE, &e->env_note);
	rd_digest(&r, p, "environment.pinned.digest", T_NULLABLE,
		  &e->env_pinned_digest);
	rd_str(&r, p, "environment.pinned.record", T_NULLABLE,
	       &e->env_pinned_record);
	rd_digest(&r, p, "environment.current.digest", T_NULLABLE,
		  &e->env_current_digest);
	rd_str(&r, p, "environment.current.record", T_NULLABLE,
	       &e->env_current_record);
	rd_diff(&r, p, "environment.diff", e);

	rd_link(&r, p, "links.code_revision", &e->code);
	rd_str(&r, p, "links.trainer_abi.state", 0, &e->abi_state);
	rd_int(&r, p, "links.trainer_abi.pinned", &e->abi_pinned);
	rd_int(&r, p, "links.trainer_abi.artifact", &e->abi_artifact);
	rd_int(&r, p, "links.trainer_abi.rebuilt", &e->abi_rebuilt);
	rd_int(&r, p, "links.trainer_abi.current", &e->abi_current);
	rd_str(&r, p, "links.trainer_abi.note", T_NULLABLE, &e->abi_note);
	rd_link(&r, p, "links.config", &e->config);
	rd_link(&r, p, "links.snapshot", &e->snaplink);

	rd_int(&r, p, "results.flips", &e->flips);
	rd_num(&r, p, "results.max_score_delta", 0, &e->max_delta);
	rd_str(&r, p, "results.max_delta_case", T_NULLABLE, &e->max_delta_case);
	rd_int(&r, p, "results.near_threshold_cases", &e->near_cases);
	rd_int(&r, p, "results.weak_band_cases", &e->weak_cases);
	rd_int(&r, p, "results.policy_disagreements", &e->disagreements);
	rd_int(&r, p, "results.flipped_cases_listed", &e->listed);
	rd_flips(&r, p, "results.flipped_cases", 1, e);

	rd_num(&r, p, "rebuild.validation_accuracy", T_NULLABLE, &e->val_acc);
	rd_num(&r, p, "rebuild.validation_loss", T_NULLABLE, &e->val_loss);
	rd_str(&r, p, "tool.name", 0, &e->tool_name);
	rd_str(&r, p, "tool.version", 0, &e->tool_version);
	rd_str(&r, p, "tool.code_revision", T_NULLABLE, &e->tool_rev);
	rd_int(&r, p, "tool.trainer_abi", &e->tool_abi);
	rd_libs(&r, p, "tool.libraries", e);
	rd_str(&r, p, "exported_by.name", 0, &e->exp_name);
	rd_str(&r, p, "exported_by.version", 0, &e->exp_version);
	rd_str(&r, p, "exported_by.code_revision", 0, &e->exp_rev);
	rd_bool(&r, p, "inputs_included", &e->inputs_included);
	rd_str(&r, p, "record", 0, &e->record);
	return r.err;
}

/* ---- what export computes ------------------------------------------------ */

/* An error with a formatted reason and no file, line or key. */
static int
bad(struct rba_detail *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
bad(struct rba_detail *d, int err, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rba_detail_clear(d);
	return rba_fail(d, err, NULL, 0, 0, "%s", msg);
}

static void
fmt_utc(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "invalid");
}

/* "YYYY-MM-DDTHH:MM:SSZ" exactly as fmt_utc writes it; 0 or -1. */
static int
parse_utc(struct sv s, int64_t *out)
{
	struct tm tm;
	char back[32], buf[32];
	int n = 0;

	if (s.s == NULL || s.n != 20)
		return -1;
	memcpy(buf, s.s, 20);
	buf[20] = 0;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 20)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*out = (int64_t)timegm(&tm);
	fmt_utc(*out, back);
	return strcmp(back, buf) == 0 ? 0 : -1;
}

/* The policy text of e, parsed; the caller frees *out. */
static int
ev_policy(const struct ev *e, struct policy **out, struct rba_detail *d)
{
	int err = policy_parse(e->pol_text.s, e->pol_text.n, "policy", out, d);

	if (err == RBA_E_NOMEM)
		return err;
	if (err)
		return bad(d, RBA_E_SCHEMA, "the policy text does not parse: %s",
			   d != NULL ? d->reason : rba_strerror(err));
	return 0;
}

/*
 * The guarantee in words and what it does not cover, from the verdict,
 * the counts and the policy declared before the audit.
 */
static void
guarantee_text(const struct ev *e, const struct policy *pol, char *g,
	       char *ng, size_t cap)
{
	char tol[32];
	const char *v = sv_show(e->version), *pinned = sv_show(e->art_pinned);
	unsigned long long cases = (unsigned long long)e->cases;
	unsigned long long flips = (unsigned long long)e->flips;

	rba_json_fmt_double(pol->max_score_delta, tol);
	if (sv_is(e->verdict, "bit-identical")) {
		snprintf(g, cap,
			 "the rebuilt artifact is bit-identical to the pinned one: "
			 "rebuilding version %s from its pins gives %s again, so it "
			 "makes every score and decision the pinned artifact makes, "
			 "for any input", v, pinned);
		snprintf(ng, cap,
			 "that the pins, the training data or the policy are right: "
			 "the audit shows that they reproduce this artifact, not "
			 "that the model is fit for its use");
	} else if (sv_is(e->verdict, "metric-equivalent")) {
		if (flips == 0)
			snprintf(g, cap,
				 "a rebuild of version %s from its pins reproduces every "
				 "decision on the audit sample of %llu cases and every "
				 "score within %s, though its artifact is not "
				 "bit-identical to the pinned %s", v, cases, tol, pinned);
		else
			snprintf(g, cap,
				 "a rebuild of version %s from its pins reproduces all but "
				 "%llu of the decisions on the audit sample of %llu cases "
				 "(the policy tolerates %llu) and every score within %s, "
				 "though its artifact is not bit-identical to the pinned "
				 "%s", v, flips, cases,
				 (unsigned long long)pol->max_flips, tol, pinned);
		snprintf(ng, cap,
			 "bit-identical scores, and the same decisions or scores "
			 "within %s for inputs outside the audit sample", tol);
	} else if (e->art_rebuilt.s != NULL && sv_eq(e->art_rebuilt, e->art_pinned)) {
		snprintf(g, cap,
			 "none: a rebuild of version %s from its pins is "
			 "bit-identical to the pinned artifact %s, but the scores "
			 "and decisions stored in its audit sample are not "
			 "reproduced within the policy's tolerance (the reasons "
			 "say why)", v, pinned);
		snprintf(ng, cap,
			 "that the scores and decisions stored in the audit sample "
			 "were made by the pinned artifact under this policy");
	} else {
		snprintf(g, cap,
			 "none: a rebuild of version %s from its pins does not "
			 "reproduce the pinned artifact %s within the policy's "
			 "tolerance (the reasons say why)", v, pinned);
		snprintf(ng, cap,
			 "that the pinned artifact can be rebuilt from its pins, or "
			 "that its scores and decisions can be reproduced");
	}
}

/*
 * Fills what export computes rather than copies: the subject, the pins
 * digest, the policy's stated numbers, the guarantee, the record digest.
 * The record and meta fields (id, time, ...) must be set.
 */
static int
ev_complete(struct ev *e, struct rba_detail *d)
{
	struct policy *pol = NULL;
	struct rba_digest dg;
	int err;

	snprintf(e->b_subject_name, sizeof(e->b_subject_name), "%s.artifact",
		 sv_show(e->version));
	e->subject_name = sv_c(e->b_subject_name);
	snprintf(e->b_subject_hex, sizeof(e->b_subject_hex), "%s",
		 e->art_pinned.s != NULL && e->art_pinned.n == RBA_DIGEST_TEXT_LEN
			 ? e->art_pinned.s + 7 : "");
	e->subject_sha256 = sv_c(e->b_subject_hex);
	rba_digest_bytes(e->pins_text.s, e->pins_text.n, &dg);
	rba_digest_format(&dg, e->b_pins_digest);
	e->pins_digest = sv_c(e->b_pins_digest);
	rba_digest_bytes(e->record.s, e->record.n, &dg);
	rba_digest_format(&dg, e->b_record_digest);
	e->record_digest = sv_c(e->b_record_digest);
	e->bit_identical = e->art_rebuilt.s != NULL &&
			   sv_eq(e->art_rebuilt, e->art_pinned);
	if ((err = ev_policy(e, &pol, d)) != 0)
		return err;
	e->pol_rule = sv_c(pol->argmax ? "argmax" : "bands");
	e->tol_delta = pol->max_score_delta;
	e->tol_flips = (double)pol->max_flips;
	e->near_margin = pol->near_margin;
	e->near_bits = pol->near_require_bits;
	e->min_near = (double)pol->min_near_cases;
	guarantee_text(e, pol, e->b_guarantee, e->b_not, sizeof(e->b_guarantee));
	e->guarantee = sv_c(e->b_guarantee);
	e->not_guaranteed = sv_c(e->b_not);
	e->listed = (double)e->nflipped;
	policy_free(pol);
	return 0;
}

/* ---- the checks -------------------------------------------------------- */

/* 1 when text (NULL: none) hashes to the digest text dg. */
static int
hashes_to(struct sv text, struct sv dg)
{
	struct rba_digest want, got;

	if (dg.s == NULL || rba_digest_parse(dg.s, &want) != 0)
		return 0;
	rba_digest_bytes(text.s, text.n, &got);
	return rba_digest_equal(&want, &got);
}

static int
digest_is(struct sv text, const struct rba_digest *dg)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(dg, hex);
	return sv_is(text, hex);
}

/* Texts against the digests beside them (check 2). */
static int
check_texts(const struct ev *e, struct rba_detail *d)
{
	if (!hashes_to(e->pins_text, e->pins_digest))
		return bad(d, RBA_E_TAMPERED, "the pins text does not hash to "
			   "predicate.pins.digest %s", sv_show(e->pins_digest));
	if (!hashes_to(e->pol_text, e->pol_digest))
		return bad(d, RBA_E_TAMPERED, "the policy text does not hash to "
			   "predicate.policy.digest %s", sv_show(e->pol_digest));
	if (e->env_pinned_record.s != NULL && e->env_pinned_digest.s != NULL &&
	    !hashes_to(e->env_pinned_record, e->env_pinned_digest))
		return bad(d, RBA_E_TAMPERED, "the pinned environment record does "
			   "not hash to predicate.environment.pinned.digest %s",
			   sv_show(e->env_pinned_digest));
	if (e->env_current_record.s != NULL && e->env_current_digest.s != NULL &&
	    !hashes_to(e->env_current_record, e->env_current_digest))
		return bad(d, RBA_E_TAMPERED, "the current environment record does "
			   "not hash to predicate.environment.current.digest %s",
			   sv_show(e->env_current_digest));
	if (!hashes_to(e->record, e->record_digest))
		return bad(d, RBA_E_TAMPERED, "the embedded audit record does not "
			   "hash to predicate.audit.record_digest %s",
			   sv_show(e->record_digest));
	return 0;
}

/* The pins and the policy against what the predicate states (check 3). */
static int
check_pins(const struct ev *e, const struct policy *pol, struct rba_detail *d)
{
	struct pins *pins = NULL;
	struct rba_digest cfg;
	char name[STORE_VERSION_NAME_MAX + 16];
	int err;

	snprintf(name, sizeof(name), "%s.artifact", sv_show(e->version));
	if (!sv_is(e->subject_name, name))
		return bad(d, RBA_E_SCHEMA, "subject name '%s' is not '%s'",
			   sv_show(e->subject_name), name);
	if (e->art_pinned.n != RBA_DIGEST_TEXT_LEN ||
	    e->subject_sha256.n != RBA_DIGEST_TEXT_LEN - 7 ||
	    memcmp(e->subject_sha256.s, e->art_pinned.s + 7,
		   e->subject_sha256.n) != 0)
		return bad(d, RBA_E_SCHEMA, "the subject's sha256 %s is not the "
			   "pinned artifact %s", sv_show(e->subject_sha256),
			   sv_show(e->art_pinned));
	err = policy_pins_parse(e->pins_text.s, e->pins_text.n, "pins", &pins, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err)
		return bad(d, RBA_E_SCHEMA, "the pins text does not parse: %s",
			   d->reason);
	if (strcmp(pins->version, sv_show(e->version)) != 0)
		err = bad(d, RBA_E_SCHEMA, "the pins are of version '%s', not '%s'",
			  pins->version, sv_show(e->version));
	else if (!pins->has_artifact || !digest_is(e->art_pinned, &pins->artifact))
		err = bad(d, RBA_E_SCHEMA, "the pins do not pin the subject's "
			  "artifact %s", sv_show(e->art_pinned));
	else if (!digest_is(e->snap_digest, &pins->snapshot))
		err = bad(d, RBA_E_SCHEMA, "the pins do not pin the snapshot %s",
			  sv_show(e->snap_digest));
	else if (pins->has_environment &&
		 !digest_is(e->env_pinned_digest, &pins->environment))
		err = bad(d, RBA_E_SCHEMA, "the pins do not pin the environment %s",
			  sv_show(e->env_pinned_digest));
	else if ((double)pins->trainer_abi != e->abi_pinned)
		err = bad(d, RBA_E_SCHEMA, "the pins pin trainer ABI %u, not %.0f",
			  (unsigned)pins->trainer_abi, e->abi_pinned);
	if (err == 0) {
		policy_pins_config_hash(pins, &cfg);
		if (!digest_is(e->config_hash, &cfg))
			err = bad(d, RBA_E_SCHEMA, "the pins' config hash is not "
				  "predicate.pins.config_hash %s",
				  sv_show(e->config_hash));
	}
	policy_pins_free(pins);
	if (err)
		return err;
	if (!sv_is(e->pol_rule, pol->argmax ? "argmax" : "bands") ||
	    e->tol_delta != pol->max_score_delta ||
	    e->tol_flips != (double)pol->max_flips ||
	    e->near_margin != pol->near_margin ||
	    e->near_bits != pol->near_require_bits ||
	    e->min_near != (double)pol->min_near_cases)
		return bad(d, RBA_E_SCHEMA, "the rule, tolerance or near-threshold "
			   "rule stated in predicate.policy is not the policy "
			   "text's");
	return 0;
}

/* The environment diff against the two records (check 4). */
static int
check_env(const struct ev *e, struct rba_detail *d)
{
	struct envrec a, b;
	struct envrec_delta *delta = NULL;
	size_t nd = 0;
	int err = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (!sv_is(e->env_state, "same") && !sv_is(e->env_state, "changed") &&
	    !sv_is(e->env_state, "unknown"))
		return bad(d, RBA_E_SCHEMA, "environment state '%s' is not same, "
			   "changed or unknown", sv_show(e->env_state));
	if (e->env_pinned_record.s == NULL || e->env_current_record.s == NULL ||
	    envrec_parse(e->env_pinned_record.s, e->env_pinned_record.n, &a,
			 NULL) != 0 ||
	    envrec_parse(e->env_current_record.s, e->env_current_record.n, &b,
			 NULL) != 0) {
		/* Nothing to compare field by field: the audit said so. */
		if (!sv_is(e->env_state, "unknown") || e->ndiff != 0)
			err = bad(d, RBA_E_SCHEMA, "the environment records cannot be "
				  "compared, yet the environment is '%s' with %zu "
				  "differing fields", sv_show(e->env_state), e->ndiff);
		goto out;
	}
	if ((err = envrec_diff(&a, &b, &delta, &nd)) != 0)
		goto out;
	if (nd != e->ndiff) {
		err = bad(d, RBA_E_SCHEMA, "predicate.environment.diff lists %zu "
			  "fields; the two records differ in %zu", e->ndiff, nd);
		goto out;
	}
	for (size_t i = 0; i < nd; i++) {
		if (!sv_eq(e->diff[i].key, sv_c(delta[i].key)) ||
		    !sv_eq(e->diff[i].pinned, sv_c(delta[i].old_value)) ||
		    !sv_eq(e->diff[i].current, sv_c(delta[i].new_value))) {
			err = bad(d, RBA_E_SCHEMA, "predicate.environment.diff[%zu] "
				  "is not the records' difference in '%s'", i,
				  delta[i].key);
			goto out;
		}
	}
	if (!sv_is(e->env_state, nd ? "changed" : "same"))
		err = bad(d, RBA_E_SCHEMA, "the environment is '%s', yet the records "
			  "differ in %zu fields", sv_show(e->env_state), nd);
out:
	free(delta);
	envrec_release(&a);
	envrec_release(&b);
	return err;
}

/* The verdict against the digests, counts and tolerance (check 5). */
static int
check_verdict(const struct ev *e, const struct policy *pol,
	      struct rba_detail *d)
{
	char g[EVIDENCE_TEXT_MAX], ng[EVIDENCE_TEXT_MAX], tv[32], dv[32];
	const char *v = sv_show(e->verdict);
	int identical = e->art_rebuilt.s != NULL &&
			sv_eq(e->art_rebuilt, e->art_pinned);
	int within = e->flips <= e->tol_flips && e->max_delta <= e->tol_delta;
	int near_rule = e->near_bits && e->near_cases > 0;

	rba_json_fmt_double(e->tol_delta, tv);
	rba_json_fmt_double(e->max_delta, dv);
	if (e->bit_identical != identical)
		return bad(d, RBA_E_SCHEMA, "predicate.artifact.bit_identical is %s, "
			   "but the rebuilt artifact %s the pinned one",
			   e->bit_identical ? "true" : "false",
			   identical ? "is" : "is not");
	if (sv_is(e->verdict, "bit-identical") ||
	    sv_is(e->verdict, "metric-equivalent")) {
		int bits = sv_is(e->verdict, "bit-identical");
		if (e->nreasons > 0)
			return bad(d, RBA_E_SCHEMA, "verdict %s comes with %zu reasons "
				   "against it", v, e->nreasons);
		if (bits && !identical)
			return bad(d, RBA_E_SCHEMA, "verdict bit-identical, but the "
				   "rebuilt artifact %s is not the pinned %s",
				   sv_show(e->art_rebuilt), sv_show(e->art_pinned));
		if (!bits && e->art_rebuilt.s == NULL)
			return bad(d, RBA_E_SCHEMA, "verdict metric-equivalent without "
				   "a rebuilt artifact");
		if (!bits && identical)
			return bad(d, RBA_E_SCHEMA, "verdict metric-equivalent, but the "
				   "rebuilt artifact is the pinned one (bit-identical)");
		if (e->flips > e->tol_flips)
			return bad(d, RBA_E_SCHEMA, "verdict %s with %.0f decision "
				   "flips, over the tolerance of %.0f", v, e->flips,
				   e->tol_flips);
		if (e->max_delta > e->tol_delta)
			return bad(d, RBA_E_SCHEMA, "verdict %s with a maximum score "
				   "delta of %s, over the tolerance of %s", v, dv, tv);
		if (!bits && near_rule)
			return bad(d, RBA_E_SCHEMA, "verdict metric-equivalent, but %.0f "
				   "audit cases sit near a band edge where the policy "
				   "requires a bit-identical rebuild", e->near_cases);
		if (!e->art_verified || !e->snap_verified || !e->sample_verified)
			return bad(d, RBA_E_SCHEMA, "verdict %s, but the stored "
				   "artifact, snapshot or sample was not verified", v);
	} else if (sv_is(e->verdict, "not-reproducible")) {
		if (e->nreasons == 0)
			return bad(d, RBA_E_SCHEMA, "verdict not-reproducible without "
				   "a reason");
	} else {
		return bad(d, RBA_E_SCHEMA, "verdict '%s' is not bit-identical, "
			   "metric-equivalent or not-reproducible", v);
	}
	if (!within && e->nreasons == 0)
		return bad(d, RBA_E_SCHEMA, "the counts exceed the tolerance, yet no "
			   "reason says so");

	if (e->listed != (double)e->nflipped)
		return bad(d, RBA_E_SCHEMA, "results.flipped_cases_listed is %.0f, "
			   "but %zu cases are listed", e->listed, e->nflipped);
	if ((double)e->nflipped > e->flips)
		return bad(d, RBA_E_SCHEMA, "%zu flipped cases listed, more than "
			   "the %.0f flips", e->nflipped, e->flips);
	if (e->flips > e->cases)
		return bad(d, RBA_E_SCHEMA, "%.0f flips on a sample of %.0f cases",
			   e->flips, e->cases);
	for (size_t i = 0; i < e->nflipped; i++) {
		const struct ev_flip *f = &e->flipped[i];
		const char *id = sv_show(f->id);
		if (f->stored_decision.s != NULL && f->rebuilt_decision.s != NULL &&
		    sv_eq(f->stored_decision, f->rebuilt_decision))
			return bad(d, RBA_E_SCHEMA, "flipped case '%s' keeps its "
				   "decision '%s'", id, sv_show(f->stored_decision));
		if (!pol->argmax && !isnan(f->rebuilt_score)) {
			const char *dec = policy_decide(pol, f->rebuilt_score, NULL);
			if (dec == NULL || !sv_is(f->rebuilt_decision, dec))
				return bad(d, RBA_E_SCHEMA, "flipped case '%s': the policy "
					   "decides its rebuilt score %s, not %s",
					   id, dec ? dec : "nothing",
					   sv_show(f->rebuilt_decision));
		}
		if (!pol->argmax && !isnan(f->stored_score) &&
		    !isnan(f->rebuilt_score) &&
		    fabs(f->stored_score - f->rebuilt_score) > e->max_delta)
			return bad(d, RBA_E_SCHEMA, "flipped case '%s' moved by more "
				   "than the maximum score delta %s", id, dv);
		if ((f->inputs != NULL) != (e->inputs_included != 0))
			return bad(d, RBA_E_SCHEMA, "flipped case '%s' %s inputs, but "
				   "inputs_included is %s", id,
				   f->inputs ? "has" : "lacks",
				   e->inputs_included ? "true" : "false");
	}

	guarantee_text(e, pol, g, ng, sizeof(g));
	if (!sv_is(e->guarantee, g))
		return bad(d, RBA_E_SCHEMA, "predicate.guarantee is not the "
			   "guarantee of verdict %s", v);
	if (!sv_is(e->not_guaranteed, ng))
		return bad(d, RBA_E_SCHEMA, "predicate.not_guaranteed is not what "
			   "verdict %s leaves out", v);
	return 0;
}

/* The chain digest of the store's history (store.h). */
static void
chain_digest(const struct rba_digest *prev, uint64_t id, int64_t time,
	     struct sv version, struct sv rec, struct rba_digest *out)
{
	struct rba_hasher h;
	uint8_t t[8];

	rba_hasher_init(&h);
	rba_hasher_update(&h, prev->b, RBA_DIGEST_LEN);
	rba_put_u64le(t, id);
	rba_hasher_update(&h, t, 8);
	rba_put_u64le(t, (uint64_t)time);
	rba_hasher_update(&h, t, 8);
	rba_put_u32le(t, (uint32_t)version.n);
	rba_hasher_update(&h, t, 4);
	rba_hasher_update(&h, version.s, version.n);
	rba_put_u32le(t, (uint32_t)rec.n);
	rba_hasher_update(&h, t, 4);
	rba_hasher_update(&h, rec.s, rec.n);
	rba_hasher_final(&h, out);
}

/* Offset of the first differing byte of two texts. */
static size_t
first_diff(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t i = 0;

	while (i < an && i < bn && a[i] == b[i])
		i++;
	return i;
}

/* "line L ('key')" of the text at offset off, for messages. */
static void
where(const uint8_t *p, size_t n, size_t off, char *out, size_t cap)
{
	size_t line = 1, start = 0, i;
	const uint8_t *q, *end;

	for (i = 0; i < off && i < n; i++)
		if (p[i] == '\n') {
			line++;
			start = i + 1;
		}
	q = memchr(p + start, '"', n - start);
	end = q != NULL ? memchr(q + 1, '"', n - (size_t)(q + 1 - p)) : NULL;
	if (q != NULL && end != NULL && end - q < 64 &&
	    memchr(p + start, '\n', (size_t)(q - (p + start))) == NULL)
		snprintf(out, cap, "line %zu ('%.*s')", line, (int)(end - q - 1),
			 (const char *)q + 1);
	else
		snprintf(out, cap, "line %zu", line);
}

static int
utf8_valid(const uint8_t *p, size_t n, size_t *bad_at)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c = p[i];
		size_t k;
		uint32_t cp;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			k = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3, cp = c & 0x07;
		else
			goto fail;
		if (n - i <= k)
			goto fail;
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				goto fail;
			cp = (cp << 6) | (p[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp < 0xe000))
			goto fail;
		i += k + 1;
	}
	return 1;
fail:
	*bad_at = i;
	return 0;
}

static int
has_duplicate_keys(const struct rba_json_value *v)
{
	if (v->type == RBA_JSON_OBJECT)
		for (size_t i = 0; i < v->n; i++)
			for (size_t j = i + 1; j < v->n; j++)
				if (strcmp(v->keys[i], v->keys[j]) == 0)
					return 1;
	if (v->type == RBA_JSON_OBJECT || v->type == RBA_JSON_ARRAY)
		for (size_t i = 0; i < v->n; i++)
			if (has_duplicate_keys(&v->items[i]))
				return 1;
	return 0;
}

/* The trusted comment, when it claims evidence, names this evidence. */
static int
check_comment(const struct ev *e, const char *tc, struct rba_detail *d)
{
	char want[SIGN_TRUSTED_COMMENT_MAX + 1];
	size_t plen = strlen(EVIDENCE_COMMENT_PREFIX), wn;

	if (tc == NULL || strncmp(tc, EVIDENCE_COMMENT_PREFIX, plen) != 0)
		return 0;
	snprintf(want, sizeof(want), "%sversion %s verdict %s audit %.0f at %s "
		 "file ", EVIDENCE_COMMENT_PREFIX, sv_show(e->version),
		 sv_show(e->verdict), e->id, sv_show(e->time));
	wn = strlen(want);
	if (strncmp(tc, want, wn) != 0 || tc[wn] == '\0')
		return bad(d, RBA_E_SCHEMA, "the trusted comment does not name this "
			   "evidence (version %s, verdict %s, audit %.0f at %s)",
			   sv_show(e->version), sv_show(e->verdict), e->id,
			   sv_show(e->time));
	return 0;
}

/* The file against what the statement it holds renders to. */
static int
check_rendering(const struct ev *e, const uint8_t *p, size_t n,
		const char *what, struct rba_detail *d)
{
	struct rba_buf b;
	char at[128];
	size_t off;
	int err;

	rba_buf_init(&b);
	ev_render(e, &b);
	if ((err = rba_buf_status(&b)) != 0)
		goto out;
	if (b.len != n || memcmp(b.p, p, n) != 0) {
		off = first_diff(p, n, b.p, b.len);
		where(p, n, off, at, sizeof(at));
		err = bad(d, RBA_E_SCHEMA, "%s at %s", what, at);
	}
out:
	rba_buf_release(&b);
	return err;
}

int
evidence_check(const void *p, size_t n, const char *trusted_comment,
	       struct evidence_summary *sum, struct rba_detail *d)
{
	const uint8_t *u = p;
	struct rba_detail local;
	struct rba_json_value root, rec;
	struct ev e, r;
	struct policy *pol = NULL;
	struct rba_digest prev, chain, got;
	const char *type, *ptype;
	int claims, err = 0;
	int64_t t = 0;
	size_t off = 0;

	if (d == NULL)
		d = &local;
	memset(&root, 0, sizeof(root));
	memset(&rec, 0, sizeof(rec));
	memset(&e, 0, sizeof(e));
	memset(&r, 0, sizeof(r));
	if (sum != NULL)
		memset(sum, 0, sizeof(*sum));
	claims = trusted_comment != NULL &&
		 strncmp(trusted_comment, EVIDENCE_COMMENT_PREFIX,
			 strlen(EVIDENCE_COMMENT_PREFIX)) == 0;
	if (n > EVIDENCE_MAX_BYTES)
		return claims ? bad(d, RBA_E_LIMIT, "evidence over %u bytes: not "
				    "checked", EVIDENCE_MAX_BYTES)
			      : 0;

	/* Is it evidence at all? */
	if (!utf8_valid(u, n, &off)) {
		if (!claims)
			return 0;
		return bad(d, RBA_E_SCHEMA, "the trusted comment claims evidence, "
			   "but the file is not UTF-8 (byte %zu)", off + 1);
	}
	err = rba_json_parse(p, n, &root, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err) {
		if (!claims)
			return 0;
		if (err == RBA_E_LIMIT)
			return err;
		return bad(d, RBA_E_SCHEMA, "the trusted comment claims evidence, "
			   "but the file is not JSON (byte %lu: %s)", d->col,
			   d->reason);
	}
	/* A file naming this predicate is evidence, whatever else it says. */
	type = rba_json_get_str(&root, "_type");
	ptype = rba_json_get_str(&root, "predicateType");
	if (ptype == NULL || strncmp(ptype, EVIDENCE_PREDICATE_PREFIX,
				     strlen(EVIDENCE_PREDICATE_PREFIX)) != 0) {
		if (claims)
			err = bad(d, RBA_E_SCHEMA, "the trusted comment claims evidence, "
				  "but the file is not an in-toto statement with "
				  "predicateType %s", EVIDENCE_PREDICATE_TYPE);
		goto out;
	}
	if (strcmp(ptype, EVIDENCE_PREDICATE_TYPE) != 0) {
		err = bad(d, RBA_E_NEWER, "predicateType %s is not %s, which this "
			  "tool checks", ptype, EVIDENCE_PREDICATE_TYPE);
		goto out;
	}
	if (type == NULL || strcmp(type, EVIDENCE_STATEMENT_TYPE) != 0) {
		err = bad(d, RBA_E_SCHEMA, "_type is not %s", EVIDENCE_STATEMENT_TYPE);
		goto out;
	}

	/* 1. form */
	if (has_duplicate_keys(&root)) {
		err = bad(d, RBA_E_SCHEMA, "an object has a key twice");
		goto out;
	}
	if ((err = ev_from_statement(&root, &e, d)) != 0)
		goto out;
	if ((err = check_rendering(&e, u, n, "not in the canonical form of "
				   "rebuild-audit-evidence(5)", d)) != 0)
		goto out;
	if (parse_utc(e.time, &t) != 0) {
		err = bad(d, RBA_E_SCHEMA, "predicate.audit.time '%s' is not a "
			  "UTC time", sv_show(e.time));
		goto out;
	}
	/* 2-5 */
	if ((err = check_texts(&e, d)) != 0)
		goto out;
	if ((err = ev_policy(&e, &pol, d)) != 0 ||
	    (err = check_pins(&e, pol, d)) != 0 ||
	    (err = check_env(&e, d)) != 0 ||
	    (err = check_verdict(&e, pol, d)) != 0)
		goto out;

	/* 6. the record and its place in the chain */
	if (rba_digest_parse(e.prev.s, &prev) != 0 ||
	    rba_digest_parse(e.chain.s, &chain) != 0) {
		err = bad(d, RBA_E_SCHEMA, "bad chain digests");
		goto out;
	}
	chain_digest(&prev, (uint64_t)e.id, t, e.version, e.record, &got);
	if (!rba_digest_equal(&got, &chain)) {
		err = bad(d, RBA_E_TAMPERED, "the embedded audit record, its id, "
			  "time and version do not give predicate.audit."
			  "chain_digest %s", sv_show(e.chain));
		goto out;
	}
	err = rba_json_parse(e.record.s, e.record.n, &rec, d);
	if (err == RBA_E_NOMEM)
		goto out;
	if (err) {
		err = bad(d, RBA_E_SCHEMA, "the embedded audit record is not JSON: "
			  "%s", d->reason);
		goto out;
	}
	if ((err = ev_from_record(&rec, (uint64_t)e.id, &r, d)) != 0) {
		if (err != RBA_E_NOMEM && err != RBA_E_NEWER)
			err = RBA_E_SCHEMA;
		goto out;
	}
	if (!sv_eq(r.rec_time, e.time)) {
		err = bad(d, RBA_E_SCHEMA, "the embedded audit record's time %s is "
			  "not predicate.audit.time %s", sv_show(r.rec_time),
			  sv_show(e.time));
		goto out;
	}
	r.id = e.id;
	r.time = e.time;
	r.store_id = e.store_id;
	r.prev = e.prev;
	r.chain = e.chain;
	r.record = e.record;
	r.exp_name = e.exp_name;
	r.exp_version = e.exp_version;
	r.exp_rev = e.exp_rev;
	r.inputs_included = e.inputs_included;
	for (size_t i = 0; i < r.nflipped && i < e.nflipped; i++)
		r.flipped[i].inputs = e.flipped[i].inputs;
	if ((err = ev_complete(&r, d)) != 0)
		goto out;
	if ((err = check_rendering(&r, u, n, "the predicate does not agree with "
				   "its embedded audit record", d)) != 0)
		goto out;

	/* 7. */
	if ((err = check_comment(&e, trusted_comment, d)) != 0)
		goto out;

	if (sum != NULL) {
		sum->is_evidence = 1;
		snprintf(sum->version, sizeof(sum->version), "%s", sv_show(e.version));
		snprintf(sum->verdict, sizeof(sum->verdict), "%s", sv_show(e.verdict));
		sum->audit_id = (uint64_t)e.id;
		sum->time = t;
		snprintf(sum->time_text, sizeof(sum->time_text), "%s", sv_show(e.time));
		rba_digest_parse(e.art_pinned.s, &sum->artifact);
		sum->cases = (uint64_t)e.cases;
		sum->flips = (uint64_t)e.flips;
		sum->inputs_included = e.inputs_included;
		snprintf(sum->guarantee, sizeof(sum->guarantee), "%s",
			 sv_show(e.guarantee));
	}
out:
	policy_free(pol);
	ev_release(&r);
	ev_release(&e);
	rba_json_release(&rec);
	rba_json_release(&root);
	return err;
}

/* ---- rendering from the store --------------------------------------------- */

struct newest {
	uint64_t id;
};

/* Not a status code: what newest_cb stops the walk with. */
#define NEWEST_FOUND 0x4e455754

static int
newest_cb(void *ctx, const struct store_history_entry *e)
{
	((struct newest *)ctx)->id = e->id;
	return NEWEST_FOUND; /* the first is the newest: stop */
}

/* Inputs of the listed flipped cases, from the sample audited. */
static int
load_inputs(struct store_txn *txn, struct ev *e, struct rba_detail *d)
{
	struct store_sample_info info;
	struct sample_layout l;
	struct sample_chunk c;
	struct rba_digest want;
	int err;

	memset(&info, 0, sizeof(info));
	memset(&l, 0, sizeof(l));
	sample_chunk_init(&c);
	if (e->sample_digest.s == NULL ||
	    rba_digest_parse(e->sample_digest.s, &want) != 0)
		return bad(d, RBA_E_NOTFOUND, "audit %.0f of version '%s' scored no "
			   "sample: there are no inputs to include", e->id,
			   sv_show(e->version));
	err = sample_layout_load(txn, e->version.s, &info, &l, d);
	if (err == RBA_E_NOTFOUND) {
		err = bad(d, RBA_E_NOTFOUND, "version '%s' no longer has the sample "
			  "audit %.0f scored: its inputs cannot be included",
			  sv_show(e->version), e->id);
		goto out;
	}
	if (err)
		goto out;
	if (!rba_digest_equal(&info.digest, &want)) {
		char now[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&info.digest, now);
		err = bad(d, RBA_E_SCHEMA, "the sample of version '%s' changed since "
			  "audit %.0f (%s then, %s now): its inputs cannot be "
			  "included", sv_show(e->version), e->id,
			  sv_show(e->sample_digest), now);
		goto out;
	}
	e->inputs_owned = calloc(e->nflipped ? e->nflipped : 1,
				 sizeof(*e->inputs_owned));
	if (e->inputs_owned == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	e->ninputs_owned = e->nflipped;
	for (size_t i = 0; i < e->nflipped; i++) {
		struct rba_json_value *o = &e->inputs_owned[i];
		uint8_t *raw = NULL;
		uint32_t idx = 0;
		char tmp[32];

		err = sample_case_load(txn, e->version.s, &l, e->flipped[i].id.s, &raw,
				       &c, &idx, d);
		if (err)
			goto out;
		o->type = RBA_JSON_OBJECT;
		o->items = calloc(l.ncols ? l.ncols : 1, sizeof(*o->items));
		o->keys = calloc(l.ncols ? l.ncols : 1, sizeof(*o->keys));
		if (o->items == NULL || o->keys == NULL) {
			free(raw);
			err = RBA_E_NOMEM;
			goto out;
		}
		for (uint32_t k = 0; k < l.ncols; k++) {
			const char *txt = sample_chunk_text(&c, k, idx, tmp);
			o->keys[k] = strdup(l.names[k]);
			o->items[k].type = RBA_JSON_STRING;
			o->items[k].str = strdup(txt);
			o->items[k].len = strlen(txt);
			o->n = k + 1;
			if (o->keys[k] == NULL || o->items[k].str == NULL) {
				free(raw);
				err = RBA_E_NOMEM;
				goto out;
			}
		}
		free(raw);
		e->flipped[i].inputs = o;
	}
	e->inputs_included = 1;
out:
	sample_chunk_release(&c);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	return err;
}

int
evidence_render(struct store *s, const char *version, uint64_t audit_id,
		int include_inputs, struct rba_buf *out,
		struct evidence_summary *sum, struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct store_history_entry ent;
	struct rba_json_value rec;
	struct ev e;
	struct newest nw = { 0 };
	struct rba_detail local;
	char tv[32];
	uint64_t bad_id = 0;
	int err;

	if (d == NULL)
		d = &local;
	memset(&ent, 0, sizeof(ent));
	memset(&rec, 0, sizeof(rec));
	memset(&e, 0, sizeof(e));
	if (sum != NULL)
		memset(sum, 0, sizeof(*sum));
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = store_history_verify(txn, &bad_id, NULL, d)) != 0)
		goto out;
	if (audit_id == 0) {
		err = store_history_list(txn, version, 1, newest_cb, &nw, d);
		if (err != NEWEST_FOUND && err != 0)
			goto out;
		if (nw.id == 0) {
			err = bad(d, RBA_E_NOTFOUND, "no audit of version '%s' in the "
				  "history: run 'rebuild-audit audit %s' first",
				  version, version);
			goto out;
		}
		audit_id = nw.id;
	}
	err = store_history_get(txn, audit_id, &ent, d);
	if (err == RBA_E_NOTFOUND) {
		err = bad(d, err, "no audit record %llu in the history",
			  (unsigned long long)audit_id);
		goto out;
	}
	if (err)
		goto out;
	if (strcmp(ent.version, version) != 0) {
		err = bad(d, RBA_E_SCHEMA, "audit record %llu is of version '%s', "
			  "not '%s'", (unsigned long long)audit_id, ent.version,
			  version);
		goto out;
	}
	err = rba_json_parse((const char *)ent.record, ent.len, &rec, d);
	if (err == RBA_E_NOMEM)
		goto out;
	if (err) {
		err = bad(d, RBA_E_SCHEMA, "audit record %llu is not JSON: %s",
			  (unsigned long long)audit_id, d->reason);
		goto out;
	}
	/* A record that did not measure attests nothing: the audit says why. */
	{
		const char *v = rba_json_get_str(&rec, "verdict");
		if (v != NULL && strcmp(v, "not-measured") == 0) {
			const struct rba_json_value *rs = rba_json_get(&rec, "reasons");
			const char *why = rs != NULL && rs->type == RBA_JSON_ARRAY &&
						  rs->n > 0 &&
						  rs->items[0].type == RBA_JSON_STRING
					  ? rs->items[0].str
					  : "no reason recorded";
			err = bad(d, RBA_E_SCHEMA, "audit record %llu of version '%s' "
				  "did not measure (not-measured: %s): there is no "
				  "verdict to attest", (unsigned long long)audit_id,
				  version, why);
			goto out;
		}
	}
	if ((err = ev_from_record(&rec, audit_id, &e, d)) != 0)
		goto out;
	if (!sv_is(e.version, ent.version)) {
		err = bad(d, RBA_E_SCHEMA, "audit record %llu names version '%s', "
			  "its history entry '%s'", (unsigned long long)audit_id,
			  sv_show(e.version), ent.version);
		goto out;
	}

	e.id = (double)ent.id;
	fmt_utc(ent.time, e.b_time);
	e.time = sv_c(e.b_time);
	if (!sv_eq(e.rec_time, e.time)) {
		err = bad(d, RBA_E_SCHEMA, "audit record %llu has time %s, its "
			  "history entry %s", (unsigned long long)audit_id,
			  sv_show(e.rec_time), e.b_time);
		goto out;
	}
	snprintf(e.b_store_id, sizeof(e.b_store_id), "%s", store_id_hex(s));
	e.store_id = sv_c(e.b_store_id);
	rba_digest_format(&ent.prev, e.b_prev);
	e.prev = sv_c(e.b_prev);
	rba_digest_format(&ent.digest, e.b_chain);
	e.chain = sv_c(e.b_chain);
	e.record.s = (const char *)ent.record;
	e.record.n = ent.len;
	e.exp_name = sv_c(EXPORTER_NAME);
	e.exp_version = sv_c(RBA_TOOL_VERSION);
	e.exp_rev = sv_c(envrec_code_revision());
	if (include_inputs && e.nflipped > 0 && (err = load_inputs(txn, &e, d)) != 0)
		goto out;
	e.inputs_included = include_inputs != 0;
	if ((err = ev_complete(&e, d)) != 0)
		goto out;

	ev_render(&e, out);
	if ((err = rba_buf_status(out)) != 0)
		goto out;
	if (out->len > EVIDENCE_MAX_BYTES) {
		err = bad(d, RBA_E_LIMIT, "the evidence of audit %llu would be %zu "
			  "bytes, over %u", (unsigned long long)audit_id, out->len,
			  EVIDENCE_MAX_BYTES);
		goto out;
	}
	if (sum != NULL) {
		sum->is_evidence = 1;
		snprintf(sum->version, sizeof(sum->version), "%s", ent.version);
		snprintf(sum->verdict, sizeof(sum->verdict), "%s", sv_show(e.verdict));
		sum->audit_id = ent.id;
		sum->time = ent.time;
		fmt_utc(ent.time, tv);
		snprintf(sum->time_text, sizeof(sum->time_text), "%s", tv);
		rba_digest_parse(e.art_pinned.s, &sum->artifact);
		sum->cases = (uint64_t)e.cases;
		sum->flips = (uint64_t)e.flips;
		sum->inputs_included = e.inputs_included;
		snprintf(sum->guarantee, sizeof(sum->guarantee), "%s", e.b_guarantee);
	}
out:
	ev_release(&e);
	rba_json_release(&rec);
	store_history_entry_release(&ent);
	store_txn_abort(txn);
	return err;
}

/* ---- the trusted comment ------------------------------------------------ */

int
evidence_trusted_comment(const struct evidence_summary *sum, const char *file,
			 char *out, size_t outlen)
{
	const char *base = strrchr(file, '/');
	char name[512];
	size_t i, k = 0;
	int n;

	base = base != NULL ? base + 1 : file;
	for (i = 0; base[i] && k + 1 < sizeof(name); i++) {
		unsigned char c = (unsigned char)base[i];
		name[k++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	name[k] = 0;
	if (base[i] != 0)
		return RBA_E_LIMIT;
	n = snprintf(out, outlen, "%sversion %s verdict %s audit %llu at %s file %s",
		     EVIDENCE_COMMENT_PREFIX, sum->version, sum->verdict,
		     (unsigned long long)sum->audit_id, sum->time_text, name);
	if (n < 0 || (size_t)n >= outlen || (size_t)n > SIGN_TRUSTED_COMMENT_MAX)
		return RBA_E_LIMIT;
	return 0;
}

/* ---- writing the pair ----------------------------------------------------- */

/* A temporary beside path, written and synced, not yet in place. */
static int
tmp_write(struct rba_atomic *a, const char *path, const void *p, size_t n,
	  struct rba_detail *d)
{
	int err = rba_atomic_open(a, path, 0644);

	if (err == 0)
		err = rba_atomic_write(a, p, n);
	if (err == 0 && fsync(a->fd) != 0)
		err = errno;
	if (err) {
		rba_atomic_abort(a);
		rba_fail(d, err, path, 0, 0, "%s", rba_strerror(err));
	}
	return err;
}

/*
 * Puts the synced temporary under its name: rename (force) or link,
 * which refuses an existing name.  A file system without hard links
 * gets a rename after a last look.
 */
static int
tmp_place(struct rba_atomic *a, int force)
{
	int err = 0;

	if (force) {
		if (rename(a->tmp, a->path) != 0)
			err = errno;
		else
			a->tmp[0] = 0; /* the temporary's name is gone */
	} else if (link(a->tmp, a->path) != 0) {
		err = errno;
		if (err == EPERM || err == ENOTSUP || err == EOPNOTSUPP || err == ENOSYS ||
		    err == EXDEV) {
			struct stat st;
			if (lstat(a->path, &st) == 0)
				err = EEXIST;
			else if (rename(a->tmp, a->path) != 0)
				err = errno;
			else
				err = 0, a->tmp[0] = 0;
		}
	}
	if (err == 0)
		err = rba_fsync_parent(a->path);
	return err;
}

/*
 * rba_atomic_sweep looks in the directory part of the name; give it one
 * even for a bare file name.
 */
static void
sweep(const char *path)
{
	char p[EVIDENCE_PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s%s", strchr(path, '/') ? "" : "./", path);
	rba_atomic_sweep(p);
}

/* The pause of EVIDENCE_PAUSE_ENV, in milliseconds (0: none). */
static long
pause_ms(void)
{
	const char *v = getenv(EVIDENCE_PAUSE_ENV);
	char *end;
	long ms;

	if (v == NULL || *v == '\0')
		return 0;
	ms = strtol(v, &end, 10);
	return *end == '\0' && ms >= 1 && ms <= 1000 ? ms : 0;
}

static void
pause_step(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms > 0)
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
}

/*
 * Serializes exports into one directory: without it, two forced exports
 * to the same name could interleave their renames and leave one's
 * signature beside the other's evidence.  A file system without locks
 * goes unlocked.  Returns 0 with *fd the lock (or -1), or an errno.
 */
static int
dir_lock(const char *path, int *fd)
{
	char dir[EVIDENCE_PATH_MAX + 16];
	char *slash;

	*fd = -1;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return errno;
	while (flock(*fd, LOCK_EX) != 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		close(*fd);
		*fd = -1;
		if (e == ENOLCK || e == EOPNOTSUPP || e == EINVAL || e == ENOSYS)
			return 0;
		return e;
	}
	return 0;
}

static int
write_locked(const char *path, const char *sigpath, const void *doc,
	     size_t n, const void *sig, size_t siglen, int force,
	     struct rba_detail *d);

int
evidence_write(const char *path, const void *doc, size_t n, const void *sig,
	       size_t siglen, int force, struct rba_detail *d)
{
	char sigpath[EVIDENCE_PATH_MAX + sizeof(EVIDENCE_SIG_SUFFIX)];
	struct rba_detail local;
	int err, lock = -1;

	if (d == NULL)
		d = &local;
	if (strlen(path) > EVIDENCE_PATH_MAX || path[0] == '\0')
		return rba_fail(d, path[0] ? ENAMETOOLONG : ENOENT, path, 0, 0, "%s",
				path[0] ? "file name too long" : "empty file name");
	snprintf(sigpath, sizeof(sigpath), "%s%s", path, EVIDENCE_SIG_SUFFIX);
	if ((err = dir_lock(path, &lock)) != 0)
		return rba_fail(d, err, path, 0, 0, "%s", rba_strerror(err));
	err = write_locked(path, sigpath, doc, n, sig, siglen, force, d);
	if (lock >= 0)
		close(lock);
	return err;
}

static int
write_locked(const char *path, const char *sigpath, const void *doc,
	     size_t n, const void *sig, size_t siglen, int force,
	     struct rba_detail *d)
{
	struct rba_atomic ea, sa;
	struct stat st;
	long ms = pause_ms();
	int err, placed = 0;

	memset(&ea, 0, sizeof(ea));
	memset(&sa, 0, sizeof(sa));
	ea.fd = sa.fd = -1;
	sweep(path);
	sweep(sigpath);
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return rba_fail(d, EISDIR, path, 0, 0, "is a directory");
	if (!force) {
		const char *which = lstat(path, &st) == 0	 ? path
				    : lstat(sigpath, &st) == 0 ? sigpath
							       : NULL;
		if (which != NULL)
			return rba_fail(d, RBA_E_EXISTS, which, 0, 0,
					"already exists (--force replaces the "
					"evidence and its signature)");
	}
	pause_step(ms);
	if ((err = tmp_write(&ea, path, doc, n, d)) != 0)
		return err;
	pause_step(ms);
	if ((err = tmp_write(&sa, sigpath, sig, siglen, d)) != 0) {
		rba_atomic_abort(&ea);
		return err;
	}
	/*
	 * The old signature goes first, so that no moment shows it beside
	 * evidence it was not made for; the new signature comes last, so
	 * that whatever it sits beside is what it signs.
	 */
	pause_step(ms);
	if (force) {
		if (unlink(sigpath) != 0 && errno != ENOENT) {
			err = errno;
			rba_fail(d, err, sigpath, 0, 0, "%s", rba_strerror(err));
			goto fail;
		}
		if ((err = rba_fsync_parent(sigpath)) != 0) {
			rba_fail(d, err, sigpath, 0, 0, "%s", rba_strerror(err));
			goto fail;
		}
		pause_step(ms);
	}
	if ((err = tmp_place(&ea, force)) != 0) {
		rba_fail(d, err == EEXIST ? RBA_E_EXISTS : err, path, 0, 0, "%s",
			 err == EEXIST ? "already exists (--force replaces the "
					 "evidence and its signature)"
				       : rba_strerror(err));
		if (err == EEXIST)
			err = RBA_E_EXISTS;
		goto fail;
	}
	placed = 1;
	pause_step(ms);
	if ((err = tmp_place(&sa, force)) != 0) {
		rba_fail(d, err == EEXIST ? RBA_E_EXISTS : err, sigpath, 0, 0, "%s",
			 err == EEXIST ? "already exists" : rba_strerror(err));
		if (err == EEXIST)
			err = RBA_E_EXISTS;
		goto fail;
	}
	/* After a link the temporaries are second names: drop them. */
	rba_atomic_abort(&ea);
	rba_atomic_abort(&sa);
	return 0;
fail:
	if (placed) {
		/* Unsigned evidence is not left behind. */
		unlink(path);
		rba_fsync_parent(path);
	}
	rba_atomic_abort(&ea);
	rba_atomic_abort(&sa);
	return err;
}

/* ---- export ---------------------------------------------------------------- */

int
evidence_export(struct store *s, const struct evidence_request *rq,
		struct evidence_result *res, struct rba_detail *d)
{
	struct rba_buf doc, sig;
	struct evidence_summary chk;
	struct rba_detail local;
	int err;

	if (d == NULL)
		d = &local;
	memset(res, 0, sizeof(*res));
	if (s == NULL || rq == NULL || rq->version == NULL || rq->key == NULL ||
	    rq->path == NULL)
		return bad(d, RBA_E_USAGE, "an export needs a store, a version, a "
			   "key and a file name");
	if (strlen(rq->path) > EVIDENCE_PATH_MAX)
		return rba_fail(d, ENAMETOOLONG, rq->path, 0, 0, "file name too long");
	rba_buf_init(&doc);
	rba_buf_init(&sig);
	if ((err = evidence_render(s, rq->version, rq->audit_id, rq->include_inputs,
				   &doc, &res->sum, d)) != 0)
		goto out;
	if (evidence_trusted_comment(&res->sum, rq->path, res->trusted_comment,
				     sizeof(res->trusted_comment)) != 0) {
		err = bad(d, RBA_E_LIMIT, "the trusted comment would be too long");
		goto out;
	}
	/* Nothing is signed that verify would refuse. */
	if ((err = evidence_check(doc.p, doc.len, res->trusted_comment, &chk, d)) !=
	    0) {
		char why[sizeof(d->reason)];
		if (err == RBA_E_NOMEM)
			goto out;
		snprintf(why, sizeof(why), "%s", d->reason);
		err = bad(d, RBA_E_SCHEMA, "audit record %llu does not give "
			  "consistent evidence: %s",
			  (unsigned long long)res->sum.audit_id, why);
		goto out;
	}
	if ((err = sign_file_sign(rq->key, doc.p, doc.len, NULL,
				  res->trusted_comment, &sig, d)) != 0)
		goto out;
	if ((err = evidence_write(rq->path, doc.p, doc.len, sig.p, sig.len,
				  rq->force, d)) != 0)
		goto out;
	rba_digest_bytes(doc.p, doc.len, &res->file_digest);
	res->size = doc.len;
out:
	rba_buf_release(&doc);
	rba_buf_release(&sig);
	return err;
}
