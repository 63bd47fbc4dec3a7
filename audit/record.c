/*
 * record.c - the audit record's schema as one table, its encoder and
 * its decoder (record.h).
 */
#include "audit/record.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "common/rbatime.h"
#include "exec/sandbox.h"
#include "rebuild/rebuild.h"
#include "train/envrec.h"

/* ---- the table ----------------------------------------------------------- */

enum ar_type {
	AR_STR,	   /* const char * */
	AR_DIGEST, /* const char *, "sha256:<hex>" */
	AR_NUM,	   /* double */
	AR_INT,	   /* uint64_t, 0 to 2^53 when read */
	AR_BOOL,   /* int */
	AR_STRV,   /* struct audit_record_strv */
	AR_OBJECT, /* members of their own table, in the same view */
	AR_ARRAY,  /* objects of their own table: a pointer and a count */
	AR_MAP,	   /* texts under any names: struct audit_record_lib */
};

#define AR_NULL 1u /* may be null */
#define AR_LAX 2u  /* no reader checks it: read when present, well typed */

/*
 * The writings of schema v1, each carrying members the ones before it
 * lacked: a member since a later writing than the first reads as absent
 * from a record without it.
 */
enum ar_since {
	AR_FIRST = 0,
	AR_DECLARED,  /* the declared-before rule: who judged since when */
	AR_DECISIONS, /* the artifact that made the stored decisions */
	AR_CLAIM,     /* the sample's own claim: its logging precision */
};

struct ar_field {
	const char *name;
	enum ar_type type;
	unsigned flags;
	enum ar_since since;
	size_t off;   /* the value in the view (or in the array's element) */
	size_t n_off; /* AR_ARRAY, AR_MAP: the count */
	size_t size;  /* AR_ARRAY: the element's size */
	const struct ar_field *sub;	 /* AR_OBJECT, AR_ARRAY; name NULL ends */
	const char *const *words;	 /* AR_STR: the texts allowed */
	const char *words_text;		 /* ... as messages say them */
	size_t has_off;			 /* AR_OBJECT: 1 + the int saying present */
};

#define V(m) offsetof(struct audit_record, m)
#define F(n, t, fl, m) { n, t, fl, AR_FIRST, V(m), 0, 0, NULL, NULL, NULL, 0 }
#define S(n, t, fl, since, m) { n, t, fl, since, V(m), 0, 0, NULL, NULL, NULL, 0 }
#define E(n, t, fl, T, m) { n, t, fl, AR_FIRST, offsetof(T, m), 0, 0, NULL, NULL, NULL, 0 }
#define OBJ(n, fl, tab) { n, AR_OBJECT, fl, AR_FIRST, 0, 0, 0, tab, NULL, NULL, 0 }
#define END { NULL, AR_STR, 0, AR_FIRST, 0, 0, 0, NULL, NULL, NULL, 0 }

static const char *const link_words[] = { "same", "changed", "unknown", NULL };
static const char *const judged_words[] = { "version", "sample", "option", NULL };

#define LINK(m) { \
	{ "state", AR_STR, 0, AR_FIRST, V(m.state), 0, 0, NULL, link_words, \
	  "same, changed or unknown", 0 }, \
	F("pinned", AR_STR, AR_NULL, m.pinned), \
	F("current", AR_STR, AR_NULL, m.current), \
	F("note", AR_STR, AR_NULL, m.note), END }

static const struct ar_field t_digests[] = {
	F("artifact_pinned", AR_DIGEST, 0, digests.artifact_pinned),
	F("artifact_rebuilt", AR_DIGEST, AR_NULL, digests.artifact_rebuilt),
	S("artifact_decisions", AR_DIGEST, AR_NULL, AR_DECISIONS,
	  digests.artifact_decisions),
	F("snapshot", AR_DIGEST, 0, digests.snapshot),
	F("sample", AR_DIGEST, AR_NULL, digests.sample),
	F("policy", AR_DIGEST, AR_NULL | AR_LAX, digests.policy),
	F("config", AR_DIGEST, AR_NULL | AR_LAX, digests.config),
	END
};

static const struct ar_field t_verified[] = {
	F("artifact", AR_BOOL, 0, verified.artifact),
	F("snapshot", AR_BOOL, 0, verified.snapshot),
	F("sample", AR_BOOL, 0, verified.sample),
	END
};

static const struct ar_field t_policy[] = {
	F("digest", AR_DIGEST, 0, policy.digest),
	F("source", AR_STR, AR_NULL, policy.source),
	F("text", AR_STR, 0, policy.text),
	{ "judged_by", AR_STR, AR_NULL, AR_DECLARED, V(policy.judged_by), 0, 0,
	  NULL, judged_words, "version, sample or option", 0 },
	S("declared_at", AR_STR, AR_NULL, AR_DECLARED, policy.declared_at),
	S("ad_hoc", AR_BOOL, 0, AR_DECLARED, policy.ad_hoc),
	END
};

static const struct ar_field t_pins[] = {
	F("config_hash", AR_DIGEST, 0, pins.config_hash),
	F("config_hash_trained", AR_DIGEST, AR_NULL, pins.config_hash_trained),
	F("text", AR_STR, 0, pins.text),
	END
};

static const struct ar_field t_code[] = LINK(links.code_revision);
static const struct ar_field t_config[] = LINK(links.config);
static const struct ar_field t_snaplink[] = LINK(links.snapshot);

static const struct ar_field t_abi[] = {
	F("state", AR_STR, 0, links.trainer_abi.state),
	F("pinned", AR_INT, 0, links.trainer_abi.pinned),
	F("artifact", AR_INT, 0, links.trainer_abi.artifact),
	F("rebuilt", AR_INT, 0, links.trainer_abi.rebuilt),
	F("current", AR_INT, 0, links.trainer_abi.current),
	F("note", AR_STR, AR_NULL, links.trainer_abi.note),
	END
};

static const struct ar_field t_env_field[] = {
	E("key", AR_STR, 0, struct audit_record_env_field, key),
	E("pinned", AR_STR, AR_NULL, struct audit_record_env_field, pinned),
	E("current", AR_STR, AR_NULL, struct audit_record_env_field, current),
	END
};

static const struct ar_field t_env[] = {
	F("state", AR_STR, 0, links.environment.state),
	F("pinned", AR_DIGEST, AR_NULL, links.environment.pinned),
	F("current", AR_DIGEST, AR_NULL, links.environment.current),
	F("note", AR_STR, AR_NULL, links.environment.note),
	{ "fields", AR_ARRAY, 0, AR_FIRST, V(links.environment.fields),
	  V(links.environment.nfields), sizeof(struct audit_record_env_field),
	  t_env_field, NULL, NULL, 0 },
	END
};

static const struct ar_field t_links[] = {
	OBJ("code_revision", 0, t_code),
	OBJ("trainer_abi", 0, t_abi),
	OBJ("environment", 0, t_env),
	OBJ("config", 0, t_config),
	OBJ("snapshot", 0, t_snaplink),
	END
};

static const struct ar_field t_env_records[] = {
	F("pinned", AR_STR, AR_NULL, environment_records.pinned),
	F("current", AR_STR, AR_NULL, environment_records.current),
	END
};

#define FLIP(n, t, fl, m) E(n, t, fl, struct audit_record_flip, m)
static const struct ar_field t_flip[] = {
	FLIP("id", AR_STR, 0, id),
	FLIP("stored_score", AR_NUM, AR_NULL, stored_score),
	FLIP("rebuilt_score", AR_NUM, AR_NULL, rebuilt_score),
	FLIP("stored_decision", AR_STR, AR_NULL, stored_decision),
	FLIP("rebuilt_decision", AR_STR, AR_NULL, rebuilt_decision),
	FLIP("margin", AR_NUM, AR_NULL, margin),
	FLIP("rebuilt_margin", AR_NUM, AR_NULL, rebuilt_margin),
	FLIP("edge", AR_NUM, AR_NULL, edge),
	END
};

static const struct ar_field t_sample[] = {
	F("cases", AR_INT, 0, sample.cases),
	F("scored_by", AR_STR, AR_NULL, sample.scored_by),
	F("policy", AR_DIGEST, AR_NULL, sample.policy),
	F("flips", AR_INT, 0, sample.flips),
	F("max_score_delta", AR_NUM, 0, sample.max_score_delta),
	F("max_delta_case", AR_STR, AR_NULL, sample.max_delta_case),
	S("score_precision", AR_NUM, 0, AR_CLAIM, sample.score_precision),
	S("scores_off_precision", AR_INT, AR_NULL, AR_CLAIM,
	  sample.scores_off_precision),
	S("scores_off_case", AR_STR, AR_NULL, AR_CLAIM, sample.scores_off_case),
	F("near_threshold_cases", AR_INT, 0, sample.near_threshold_cases),
	F("weak_band_cases", AR_INT, 0, sample.weak_band_cases),
	F("policy_disagreements", AR_INT, 0, sample.policy_disagreements),
	F("flipped_listed", AR_INT, AR_LAX, sample.flipped_listed),
	{ "flipped_cases", AR_ARRAY, 0, AR_FIRST, V(sample.flipped_cases),
	  V(sample.nflipped_cases), sizeof(struct audit_record_flip), t_flip,
	  NULL, NULL, 0 },
	END
};

static const struct ar_field t_rebuild[] = {
	F("validation_accuracy", AR_NUM, AR_NULL, rebuild.validation_accuracy),
	F("validation_loss", AR_NUM, AR_NULL, rebuild.validation_loss),
	F("scoring", AR_STR, AR_NULL | AR_LAX, rebuild.scoring),
	F("threads", AR_INT, AR_LAX, rebuild.threads),
	END
};

static const struct ar_field t_trainer[] = {
	F("kind", AR_STR, 0, trainer.kind),
	F("repository", AR_STR, 0, trainer.repository),
	F("commit", AR_STR, 0, trainer.commit),
	F("tree", AR_STR, 0, trainer.tree),
	F("command", AR_STRV, 0, trainer.command),
	F("sandbox", AR_STR, 0, trainer.sandbox),
	F("sandbox_profile", AR_STR, 0, trainer.sandbox_profile),
	F("exit_status", AR_INT, 0, trainer.exit_status),
	F("seconds", AR_NUM, 0, trainer.seconds),
	F("stdout_sha256", AR_DIGEST, 0, trainer.stdout_sha256),
	F("stderr_sha256", AR_DIGEST, 0, trainer.stderr_sha256),
	END
};

static const struct ar_field t_tool[] = {
	F("name", AR_STR, 0, tool.name),
	F("version", AR_STR, 0, tool.version),
	F("code_revision", AR_STR, AR_NULL, tool.code_revision),
	F("trainer_abi", AR_INT, 0, tool.trainer_abi),
	{ "libraries", AR_MAP, 0, AR_FIRST, V(tool.libraries),
	  V(tool.nlibraries), sizeof(struct audit_record_lib), NULL, NULL, NULL,
	  0 },
	END
};

static const struct ar_field t_timings[] = {
	F("verify_s", AR_NUM, AR_NULL | AR_LAX, timings.verify_s),
	F("rebuild_s", AR_NUM, AR_NULL | AR_LAX, timings.rebuild_s),
	F("sample_pass_s", AR_NUM, AR_NULL | AR_LAX, timings.sample_pass_s),
	F("scoring_s", AR_NUM, AR_NULL | AR_LAX, timings.scoring_s),
	F("total_s", AR_NUM, AR_NULL | AR_LAX, timings.total_s),
	END
};

/* The record, member by member, in the order it is written. */
static const struct ar_field t_record[] = {
	F("schema", AR_STR, 0, schema),
	F("version", AR_STR, 0, version),
	F("time", AR_STR, 0, time),
	F("verdict", AR_STR, 0, verdict),
	F("exit_status", AR_INT, 0, exit_status),
	F("reasons", AR_STRV, 0, reasons),
	F("warnings", AR_STRV, 0, warnings),
	F("error", AR_STR, AR_NULL | AR_LAX, error),
	OBJ("digests", 0, t_digests),
	OBJ("verified", 0, t_verified),
	OBJ("policy", 0, t_policy),
	OBJ("pins", 0, t_pins),
	OBJ("links", 0, t_links),
	OBJ("environment_records", 0, t_env_records),
	OBJ("sample", 0, t_sample),
	OBJ("rebuild", 0, t_rebuild),
	{ "trainer", AR_OBJECT, 0, AR_FIRST, 0, 0, 0, t_trainer, NULL, NULL,
	  1 + V(has_trainer) },
	OBJ("tool", 0, t_tool),
	OBJ("timings", AR_LAX, t_timings),
	END
};

/* The value of a field in the view or element at base. */
#define AT(base, f, T) ((T *)(void *)((char *)(base) + (f)->off))

/* An array's or map's items and count. */
static void *
list_items(const void *base, const struct ar_field *f, size_t *n)
{
	void *p;

	memcpy(&p, (const char *)base + f->off, sizeof(p));
	memcpy(n, (const char *)base + f->n_off, sizeof(*n));
	return p;
}

/* ---- the encoder --------------------------------------------------------- */

static void enc_fields(struct rba_json_w *w, const void *base,
		       const struct ar_field *t);

static void
enc_strv(struct rba_json_w *w, const char *key, const struct audit_record_strv *v)
{
	if (v->raw != NULL) {
		rba_json_w_raw(w, key, v->raw, strlen(v->raw));
		return;
	}
	rba_json_w_open(w, key, '[');
	for (size_t i = 0; i < v->n; i++)
		rba_json_w_str(w, NULL, v->v[i]);
	rba_json_w_close(w, ']');
}

static void
enc_list(struct rba_json_w *w, const void *base, const struct ar_field *f)
{
	size_t n;
	char *items = list_items(base, f, &n);

	rba_json_w_open(w, f->name, f->type == AR_MAP ? '{' : '[');
	for (size_t i = 0; i < n; i++) {
		if (f->type == AR_MAP) {
			const struct audit_record_lib *l =
				(const void *)(items + i * sizeof(*l));
			rba_json_w_str(w, l->name, l->value);
			continue;
		}
		rba_json_w_open(w, NULL, '{');
		enc_fields(w, items + i * f->size, f->sub);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, f->type == AR_MAP ? '}' : ']');
}

static void
enc_fields(struct rba_json_w *w, const void *base, const struct ar_field *t)
{
	for (const struct ar_field *f = t; f->name != NULL; f++) {
		uint64_t u;
		switch (f->type) {
		case AR_STR:
		case AR_DIGEST:
			rba_json_w_str(w, f->name, *AT(base, f, const char *const));
			break;
		case AR_NUM: rba_json_w_num(w, f->name, *AT(base, f, const double)); break;
		case AR_INT:
			u = *AT(base, f, const uint64_t);
			if (u == AUDIT_RECORD_INT_NONE)
				rba_json_w_str(w, f->name, NULL);
			else
				rba_json_w_u64(w, f->name, u);
			break;
		case AR_BOOL:
			if (*AT(base, f, const int) < 0)
				rba_json_w_str(w, f->name, NULL);
			else
				rba_json_w_bool(w, f->name, *AT(base, f, const int));
			break;
		case AR_STRV:
			enc_strv(w, f->name, AT(base, f, const struct audit_record_strv));
			break;
		case AR_OBJECT:
			if (f->has_off && !*(const int *)(const void *)
					       ((const char *)base + f->has_off - 1))
				break;
			rba_json_w_open(w, f->name, '{');
			enc_fields(w, base, f->sub);
			rba_json_w_close(w, '}');
			break;
		case AR_ARRAY:
		case AR_MAP: enc_list(w, base, f); break;
		}
	}
}

void
audit_record_encode_members(const struct audit_record *v, struct rba_json_w *w)
{
	enc_fields(w, v, t_record);
}

void
audit_record_encode(const struct audit_record *v, struct rba_buf *b)
{
	struct rba_json_w w;

	rba_json_w_init(&w, b);
	rba_json_w_open(&w, NULL, '{');
	audit_record_encode_members(v, &w);
	rba_json_w_close(&w, '}');
}

/* ---- the decoder --------------------------------------------------------- */

#define MAX_INT_EXACT 9007199254740992.0 /* 2^53: counts read back exactly */

struct dec {
	struct rba_detail *d;
	const char *what;
	int err;
	struct audit_record *v;
	char path[160]; /* of the member being read, as messages name it */
};

static void
dec_fail(struct dec *x, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
dec_fail(struct dec *x, int err, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	if (x->err)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rba_detail_clear(x->d);
	x->err = rba_fail(x->d, err, NULL, 0, 0, "%s: %s", x->what, msg);
}

/* Keeps p for audit_record_release; 0, or -1 (then p is freed). */
static int
dec_own(struct dec *x, void *p)
{
	struct audit_record *v = x->v;

	if (p == NULL || v->nown == sizeof(v->own) / sizeof(v->own[0])) {
		free(p);
		dec_fail(x, RBA_E_NOMEM, "out of memory");
		return -1;
	}
	v->own[v->nown++] = p;
	return 0;
}

/* What a member must be, as messages say it. */
static const char *
type_text(enum ar_type t)
{
	switch (t) {
	case AR_STR:
	case AR_DIGEST: return "a string";
	case AR_NUM:
	case AR_INT: return "a number";
	case AR_BOOL: return "true or false";
	case AR_STRV:
	case AR_ARRAY: return "an array";
	default: return "an object";
	}
}

static enum rba_json_type
json_type(enum ar_type t)
{
	switch (t) {
	case AR_STR:
	case AR_DIGEST: return RBA_JSON_STRING;
	case AR_NUM:
	case AR_INT: return RBA_JSON_NUMBER;
	case AR_STRV:
	case AR_ARRAY: return RBA_JSON_ARRAY;
	default: return RBA_JSON_OBJECT;
	}
}

/*
 * The member m (NULL: missing) of field f, or NULL when it is absent and
 * may be: null where f may be null, missing where a record may lack it.
 */
static const struct rba_json_value *
dec_member(struct dec *x, const struct ar_field *f, const struct rba_json_value *m)
{
	int nullable = (f->flags & AR_NULL) != 0;
	int ok;

	if (m != NULL && m->type == RBA_JSON_NULL && nullable)
		return NULL;
	if (m == NULL && (f->since != AR_FIRST || (f->flags & AR_LAX)))
		return NULL;
	ok = m != NULL && (f->type == AR_BOOL
			   ? m->type == RBA_JSON_TRUE || m->type == RBA_JSON_FALSE
			   : m->type == json_type(f->type));
	if (ok)
		return m;
	if (!(f->flags & AR_LAX))
		dec_fail(x, RBA_E_SCHEMA, "'%s' is %s, not %s%s", x->path,
			 m == NULL ? "missing" : "of another type",
			 type_text(f->type),
			 nullable && f->type != AR_BOOL ? " or null" : "");
	return NULL;
}

/* A text that is a string, not NULL, with no NUL inside, and a digest or
 * one of the words where f says so: 0, or -1 (failed unless lax). */
static int
dec_text(struct dec *x, const struct ar_field *f, const struct rba_json_value *m)
{
	struct rba_digest dg;
	const char *why = NULL;

	if (memchr(m->str, 0, m->len) != NULL)
		why = "holds a NUL character";
	else if (f->type == AR_DIGEST && rba_digest_parse(m->str, &dg) != 0)
		why = "is not a sha256: digest";
	if (why == NULL && f->words != NULL) {
		const char *const *w = f->words;
		while (*w != NULL && strcmp(*w, m->str) != 0)
			w++;
		if (*w == NULL) {
			if (!(f->flags & AR_LAX))
				dec_fail(x, RBA_E_SCHEMA, "'%s' is not %s", x->path,
					 f->words_text);
			return -1;
		}
	}
	if (why != NULL && !(f->flags & AR_LAX))
		dec_fail(x, RBA_E_SCHEMA, "'%s' %s", x->path, why);
	return why != NULL ? -1 : 0;
}

static void
dec_strv(struct dec *x, const struct rba_json_value *a, struct audit_record_strv *out)
{
	const char **v = calloc(a->n ? a->n : 1, sizeof(*v));

	if (dec_own(x, (void *)v) != 0)
		return;
	for (size_t i = 0; i < a->n; i++) {
		const struct rba_json_value *s = &a->items[i];
		if (s->type != RBA_JSON_STRING || memchr(s->str, 0, s->len) != NULL) {
			dec_fail(x, RBA_E_SCHEMA, "'%s[%zu]' is not a string", x->path, i);
			return;
		}
		v[i] = s->str;
	}
	out->v = v;
	out->n = a->n;
}

static void
dec_map(struct dec *x, const struct rba_json_value *o, void *base,
	const struct ar_field *f)
{
	struct audit_record_lib *l = calloc(o->n ? o->n : 1, sizeof(*l));

	if (dec_own(x, l) != 0)
		return;
	for (size_t i = 0; i < o->n && !x->err; i++) {
		const struct rba_json_value *m = &o->items[i];
		size_t kn = strlen(o->keys[i]);
		l[i].name = o->keys[i];
		if (kn >= 128 || kn == 0)
			dec_fail(x, RBA_E_SCHEMA, "'%s' has a key of %zu bytes",
				 x->path, kn);
		else if (m->type == RBA_JSON_STRING && memchr(m->str, 0, m->len) == NULL)
			l[i].value = m->str;
		else if (m->type != RBA_JSON_NULL)
			dec_fail(x, RBA_E_SCHEMA, "'%s.%s' is not a string or null",
				 x->path, o->keys[i]);
	}
	memcpy((char *)base + f->off, &l, sizeof(l));
	memcpy((char *)base + f->n_off, &o->n, sizeof(o->n));
}

static void dec_fields(struct dec *x, const struct rba_json_value *obj,
		       void *base, const struct ar_field *t);
static void absent_fields(void *base, const struct ar_field *t);

static void
dec_array(struct dec *x, const struct rba_json_value *a, void *base,
	  const struct ar_field *f)
{
	char *items = calloc(a->n ? a->n : 1, f->size);
	size_t at = strlen(x->path);

	if (dec_own(x, items) != 0)
		return;
	memcpy((char *)base + f->off, &items, sizeof(items));
	for (size_t i = 0; i < a->n && !x->err; i++) {
		if (a->items[i].type != RBA_JSON_OBJECT) {
			dec_fail(x, RBA_E_SCHEMA, "'%s[%zu]' is not an object", x->path, i);
			return;
		}
		snprintf(x->path + at, sizeof(x->path) - at, "[%zu]", i);
		absent_fields(items + i * f->size, f->sub);
		dec_fields(x, &a->items[i], items + i * f->size, f->sub);
		x->path[at] = 0;
	}
	memcpy((char *)base + f->n_off, &a->n, sizeof(a->n));
}

/* Field f of the object obj (NULL: missing) into base. */
static void
dec_field(struct dec *x, const struct rba_json_value *obj, void *base,
	  const struct ar_field *f)
{
	const struct rba_json_value *m = rba_json_get(obj, f->name);

	if (f->type == AR_OBJECT) {
		/* A member below a missing object is the one named missing. */
		if (f->has_off && m == NULL)
			return;
		if (f->has_off)
			*(int *)(void *)((char *)base + f->has_off - 1) = 1;
		if ((f->flags & AR_LAX) && (m == NULL || m->type != RBA_JSON_OBJECT))
			return;
		dec_fields(x, m != NULL && m->type == RBA_JSON_OBJECT ? m : NULL,
			   base, f->sub);
		return;
	}
	if ((m = dec_member(x, f, m)) == NULL)
		return;
	switch (f->type) {
	case AR_STR:
	case AR_DIGEST:
		if (dec_text(x, f, m) == 0)
			*AT(base, f, const char *) = m->str;
		break;
	case AR_NUM: *AT(base, f, double) = m->num; break;
	case AR_INT:
		if (m->num >= 0 && m->num <= MAX_INT_EXACT && m->num == floor(m->num))
			*AT(base, f, uint64_t) = (uint64_t)m->num;
		else if (!(f->flags & AR_LAX))
			dec_fail(x, RBA_E_SCHEMA, "'%s' is not a whole number from 0 "
				 "to 2^53", x->path);
		break;
	case AR_BOOL: *AT(base, f, int) = m->type == RBA_JSON_TRUE; break;
	case AR_STRV: dec_strv(x, m, AT(base, f, struct audit_record_strv)); break;
	case AR_ARRAY: dec_array(x, m, base, f); break;
	case AR_MAP: dec_map(x, m, base, f); break;
	case AR_OBJECT: break;
	}
}

static void
dec_fields(struct dec *x, const struct rba_json_value *obj, void *base,
	   const struct ar_field *t)
{
	size_t at = strlen(x->path);

	for (const struct ar_field *f = t; f->name != NULL && !x->err; f++) {
		snprintf(x->path + at, sizeof(x->path) - at, "%s%s", at ? "." : "",
			 f->name);
		dec_field(x, obj, base, f);
		x->path[at] = 0;
	}
}

/* Absent everywhere before anything is read. */
static void
absent_fields(void *base, const struct ar_field *t)
{
	for (const struct ar_field *f = t; f->name != NULL; f++) {
		if (f->type == AR_NUM)
			*AT(base, f, double) = NAN;
		else if (f->type == AR_INT)
			*AT(base, f, uint64_t) = AUDIT_RECORD_INT_NONE;
		else if (f->type == AR_BOOL)
			*AT(base, f, int) = -1;
		else if (f->type == AR_OBJECT)
			absent_fields(base, f->sub);
	}
}

int
audit_record_decode(const struct rba_json_value *rec, const char *what,
		    struct audit_record *out, struct rba_detail *d)
{
	struct dec x = { d, what, 0, out, "" };
	const char *schema;

	memset(out, 0, sizeof(*out));
	absent_fields(out, t_record);
	if (rec->type != RBA_JSON_OBJECT)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "%s is not a JSON object",
				what);
	snprintf(x.path, sizeof(x.path), "schema");
	dec_field(&x, rec, out, &t_record[0]);
	if (x.err)
		return x.err;
	schema = out->schema;
	if (strcmp(schema, AUDIT_RECORD_SCHEMA) != 0) {
		int newer = strncmp(schema, "rebuild-audit/audit/", 20) == 0;
		return rba_fail(d, newer ? RBA_E_NEWER : RBA_E_SCHEMA, NULL, 0, 0,
				"%s has schema '%s'; this tool reads %s", what,
				schema, AUDIT_RECORD_SCHEMA);
	}
	x.path[0] = 0;
	dec_fields(&x, rec, out, t_record + 1);
	return x.err;
}

void
audit_record_release(struct audit_record *v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < v->nown; i++)
		free(v->own[i]);
	memset(v, 0, sizeof(*v));
}

/* ---- from an audit's report ---------------------------------------------- */

static const char *
link_state(int s)
{
	return s == AUDIT_LINK_SAME ? "same"
	       : s == AUDIT_LINK_CHANGED ? "changed" : "unknown";
}

static void
view_link(struct audit_record_link *l, const struct audit_link *a)
{
	l->state = link_state(a->state);
	l->pinned = a->pinned;
	l->current = a->current;
	l->note = a->note;
}

/* dg's text kept in v, or NULL unless has. */
static const char *
view_digest(struct audit_record *v, const struct rba_digest *dg, int has)
{
	char *t;

	if (!has)
		return NULL;
	assert(v->nb_digest < sizeof(v->b_digest) / sizeof(v->b_digest[0]));
	t = v->b_digest[v->nb_digest++];
	rba_digest_format(dg, t);
	return t;
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

/* Keeps p (not NULL) for audit_record_release: 0 or RBA_E_NOMEM. */
static int
view_own(struct audit_record *v, void *p)
{
	if (p == NULL || v->nown == sizeof(v->own) / sizeof(v->own[0])) {
		free(p);
		return RBA_E_NOMEM;
	}
	v->own[v->nown++] = p;
	return 0;
}

/* The record's opening: what it is, of which version and when, the
 * verdict with its reasons and warnings, what failed, the digests. */
static void
view_verdict(struct audit_record *v, const struct audit_report *r)
{
	int pins = r->pins_text != NULL, pol = r->policy_text != NULL;

	v->schema = AUDIT_RECORD_SCHEMA;
	v->version = r->version;
	rba_time_utc(r->time, v->b_time);
	v->time = v->b_time;
	v->verdict = audit_verdict_name(r->verdict);
	v->exit_status = (uint64_t)r->exit_status;
	v->reasons.v = (const char *const *)r->reasons;
	v->reasons.n = r->nreasons;
	v->warnings.v = (const char *const *)r->warnings;
	v->warnings.n = r->nwarnings;
	v->error = r->error_what;
	v->digests.artifact_pinned = view_digest(v, &r->artifact_pinned, pins);
	v->digests.artifact_rebuilt = view_digest(v, &r->artifact_rebuilt,
						  r->has_rebuilt);
	v->digests.artifact_decisions = view_digest(v, &r->artifact_decisions,
						    r->has_decisions);
	v->digests.snapshot = view_digest(v, &r->snapshot, pins);
	v->digests.sample = view_digest(v, &r->sample_digest, r->has_sample);
	v->digests.policy = view_digest(v, &r->policy_digest, pol);
	v->digests.config = view_digest(v, &r->config_current, pins);
	v->verified.artifact = r->artifact_verified != 0;
	v->verified.snapshot = r->snapshot_verified != 0;
	v->verified.sample = r->sample_verified != 0;
}

/* The policy that judged (since the declared-before rule, who judged
 * and declared when) and the pins. */
static void
view_policy(struct audit_record *v, const struct audit_report *r)
{
	int pol = r->policy_text != NULL;

	v->policy.digest = view_digest(v, &r->policy_digest, pol);
	v->policy.source = !pol ? NULL : r->policy_from_version ? "version"
								 : "option";
	v->policy.text = r->policy_text;
	v->policy.judged_by = !pol ? NULL
			      : r->judged_by == AUDIT_JUDGED_SAMPLE ? "sample"
			      : r->judged_by == AUDIT_JUDGED_OPTION ? "option"
								    : "version";
	if (r->has_declared_at) {
		rba_time_utc(r->declared_at, v->b_declared_at);
		v->policy.declared_at = v->b_declared_at;
	}
	v->policy.ad_hoc = r->ad_hoc != 0;
	v->pins.config_hash = view_digest(v, &r->config_current, r->pins_text != NULL);
	v->pins.config_hash_trained = view_digest(v, &r->config_registered,
						  r->has_config_registered);
	v->pins.text = r->pins_text;
}

/* The links, with the environment's fields that differ, and both
 * environment records. */
static int
view_links(struct audit_record *v, const struct audit_report *r)
{
	struct audit_record_env_field *ef;

	view_link(&v->links.code_revision, &r->code_revision);
	v->links.trainer_abi.state = link_state(r->trainer_abi.state);
	v->links.trainer_abi.pinned = r->abi_pinned;
	v->links.trainer_abi.artifact = r->abi_artifact;
	v->links.trainer_abi.rebuilt = r->abi_rebuilt;
	v->links.trainer_abi.current = r->abi_current;
	v->links.trainer_abi.note = r->trainer_abi.note;
	v->links.environment.state = link_state(r->environment.state);
	v->links.environment.pinned = r->environment.pinned;
	v->links.environment.current = r->environment.current;
	v->links.environment.note = r->environment.note;
	ef = calloc(r->nenv_fields ? r->nenv_fields : 1, sizeof(*ef));
	if (view_own(v, ef) != 0)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < r->nenv_fields; i++) {
		ef[i].key = r->env_fields[i].key;
		ef[i].pinned = r->env_fields[i].pinned;
		ef[i].current = r->env_fields[i].current;
	}
	v->links.environment.fields = ef;
	v->links.environment.nfields = r->nenv_fields;
	view_link(&v->links.config, &r->config);
	view_link(&v->links.snapshot, &r->snapshot_link);
	v->environment_records.pinned = r->env_pinned_text;
	v->environment_records.current = r->env_current_text;
	return 0;
}

/* The sample's counts and the flipped cases listed, in stored order. */
static int
view_sample(struct audit_record *v, const struct audit_report *r)
{
	struct audit_record_flip *fl;

	v->sample.cases = r->cases;
	v->sample.scored_by = !r->has_sample ? NULL
			      : r->sample_scored_by == SAMPLE_SCORED_COLUMN ? "column"
									   : "model";
	v->sample.policy = view_digest(v, &r->sample_policy, r->has_sample_policy);
	v->sample.flips = r->flips;
	v->sample.max_score_delta = r->max_delta;
	v->sample.max_delta_case = r->max_delta_case;
	v->sample.score_precision = r->has_score_precision ? r->score_precision : 0;
	v->sample.scores_off_precision = r->scores_off;
	v->sample.scores_off_case = r->scores_off_case;
	v->sample.near_threshold_cases = r->near_cases;
	v->sample.weak_band_cases = r->weak_band_cases;
	v->sample.policy_disagreements = r->policy_disagreements;
	v->sample.flipped_listed = r->nlisted;
	fl = calloc(r->nlisted ? r->nlisted : 1, sizeof(*fl));
	if (view_own(v, fl) != 0)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < r->nlisted; i++) {
		const struct audit_flip *f = &r->listed[i];
		fl[i].id = f->id;
		fl[i].stored_score = f->stored_score;
		fl[i].rebuilt_score = f->rebuilt_score;
		fl[i].stored_decision = f->stored_decision;
		fl[i].rebuilt_decision = f->rebuilt_decision;
		fl[i].margin = f->margin;
		fl[i].rebuilt_margin = f->rebuilt_margin;
		fl[i].edge = f->edge;
	}
	v->sample.flipped_cases = fl;
	v->sample.nflipped_cases = r->nlisted;
	return 0;
}

/* The rebuild, an exec version's trainer (what ran, in which sandbox,
 * how it ended) and the timings. */
static void
view_rebuild(struct audit_record *v, const struct audit_report *r)
{
	v->rebuild.validation_accuracy = r->has_rebuilt ? r->val_accuracy : NAN;
	v->rebuild.validation_loss = r->has_rebuilt ? r->val_loss : NAN;
	v->rebuild.scoring = !r->has_rebuilt ? NULL
			     : r->sparse_scoring ? "sparse" : "dense";
	v->rebuild.threads = r->threads;
	v->has_trainer = r->kind != NULL && r->kind->record_trainer != NULL &&
			 r->exec_command != NULL;
	if (v->has_trainer) {
		v->trainer.kind = r->kind->record_trainer;
		v->trainer.repository = r->exec_repository;
		v->trainer.commit = r->exec_commit;
		v->trainer.tree = r->exec_tree;
		v->trainer.command.raw = r->exec_command;
		v->trainer.sandbox = sandbox_name();
		v->trainer.sandbox_profile = sandbox_description();
		v->trainer.exit_status = (uint64_t)r->exec_exit;
		v->trainer.seconds = r->exec_seconds;
		v->trainer.stdout_sha256 = view_digest(v, &r->exec_stdout, 1);
		v->trainer.stderr_sha256 = view_digest(v, &r->exec_stderr, 1);
	}
	v->timings.verify_s = r->t_verify;
	v->timings.rebuild_s = r->t_rebuild;
	v->timings.sample_pass_s = r->t_score;
	v->timings.scoring_s = r->t_scoring;
	v->timings.total_s = r->t_total;
}

/* This tool, and the libraries of the current environment record. */
static int
view_tool(struct audit_record *v, const struct audit_report *r)
{
	static const char *const libs[][2] = {
		{ "libc", "lib.libc" },		{ "libsodium", "lib.libsodium" },
		{ "libyaml", "lib.libyaml" }, { "lmdb", "lib.lmdb" },
		{ "openblas", "lib.openblas" }, { "zstd", "lib.zstd" },
	};
	size_t n = sizeof(libs) / sizeof(libs[0]);
	struct audit_record_lib *l = calloc(n, sizeof(*l));

	v->tool.name = RBA_TOOL_NAME;
	v->tool.version = RBA_TOOL_VERSION;
	v->tool.code_revision = envrec_code_revision();
	v->tool.trainer_abi = rebuild_abi_current();
	if (view_own(v, l) != 0)
		return RBA_E_NOMEM;
	v->tool.libraries = l;
	v->tool.nlibraries = n;
	for (size_t i = 0; i < n; i++) {
		char *t = r->env_current_text ? env_value(r->env_current_text,
							  libs[i][1]) : NULL;
		l[i].name = libs[i][0];
		l[i].value = t;
		if (t != NULL && view_own(v, t) != 0)
			return RBA_E_NOMEM;
	}
	return 0;
}

int
audit_record_from_report(const struct audit_report *r, struct audit_record *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	view_verdict(out, r);
	view_policy(out, r);
	if ((err = view_links(out, r)) != 0 || (err = view_sample(out, r)) != 0)
		return err;
	view_rebuild(out, r);
	return view_tool(out, r);
}

int
audit_record_ad_hoc(const struct audit_record *v)
{
	if (v->verdict == NULL)
		return 0;
	if (v->policy.ad_hoc >= 0)
		return v->policy.ad_hoc;
	return v->policy.source != NULL && strcmp(v->policy.source, "option") == 0;
}
