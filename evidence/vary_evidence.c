/*
 * vary_evidence.c - a variation report as signed evidence: rendered from
 * the kept report, checked as verify checks it, signed and written.
 */
#include "evidence/vary_evidence.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/vary.h"
#include "common/digest.h"
#include "common/json.h"
#include "evidence/evidence.h"
#include "rebuild/rebuild.h"

/* ---- finding the report ---------------------------------------------- */

struct newest {
	char prefix[STORE_VERSION_NAME_MAX + 16];
	char best[STORE_RUN_ID_MAX + 1];
	unsigned long long t, k;
	int found;
};

static int
newest_cb(void *ctx, const char *id, const uint8_t *p, size_t n)
{
	struct newest *w = ctx;
	size_t len = strlen(w->prefix);
	unsigned long long t = 0, k = 0;
	char *end;

	(void)p;
	(void)n;
	if (strncmp(id, w->prefix, len) != 0)
		return 0;
	t = strtoull(id + len, &end, 10);
	if (end == id + len)
		return 0;
	if (*end == '.')
		k = strtoull(end + 1, &end, 10);
	if (*end != 0)
		return 0;
	if (!w->found || t > w->t || (t == w->t && k > w->k)) {
		w->found = 1;
		w->t = t;
		w->k = k;
		snprintf(w->best, sizeof(w->best), "%s", id);
	}
	return 0;
}

/* ---- the statement --------------------------------------------------- */

static void
render(const char *version, const char *run, const char *pinned_hex,
       const uint8_t *report, size_t rn, struct rba_buf *b)
{
	char name[STORE_VERSION_NAME_MAX + 16];
	struct rba_json_w w;

	snprintf(name, sizeof(name), "%s.artifact", version);
	rba_json_w_init(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "_type", "https://in-toto.io/Statement/v1");
	rba_json_w_open(&w, "subject", '[');
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "name", name);
	rba_json_w_open(&w, "digest", '{');
	rba_json_w_str(&w, "sha256", pinned_hex);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, ']');
	rba_json_w_str(&w, "predicateType", VARY_PREDICATE_TYPE);
	rba_json_w_open(&w, "predicate", '{');
	rba_json_w_str(&w, "run", run);
	/* the variation report's own bytes, as its run record keeps them */
	rba_json_w_raw(&w, "report", (const char *)report, rn);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	rba_buf_put_u8(b, '\n');
}

static int
comment(const struct vary_evidence_summary *s, char *out, size_t n)
{
	int k = snprintf(out, n, VARY_COMMENT_PREFIX "version %s factors %llu changed %llu",
			 s->version, (unsigned long long)s->factors,
			 (unsigned long long)s->changed);

	return k < 0 || (size_t)k >= n ? RBA_E_LIMIT : 0;
}

/* ---- the check ------------------------------------------------------- */

static int bad(struct rba_detail *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int
bad(struct rba_detail *d, const char *fmt, ...)
{
	char msg[EVIDENCE_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "%s", msg);
}

/* Whether v is an object with exactly the members keys[0..n). */
static int
closed(const struct rba_json_value *v, const char *const *keys, size_t n)
{
	if (v == NULL || v->type != RBA_JSON_OBJECT || v->n != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (rba_json_get(v, keys[i]) == NULL)
			return 0;
	return 1;
}

static int
is_str(const struct rba_json_value *v)
{
	return v != NULL && v->type == RBA_JSON_STRING;
}

static int
is_null(const struct rba_json_value *v)
{
	return v != NULL && v->type == RBA_JSON_NULL;
}

static int
digest_of(const struct rba_json_value *v, struct rba_digest *out)
{
	return is_str(v) && strlen(v->str) == v->len && rba_digest_parse(v->str, out) == 0;
}

static int
known_factor(const char *name)
{
	char list[512], *save = NULL;

	snprintf(list, sizeof(list), "%s, %s", exec_trainer_kind.factors_text,
		 rebuild_builtin_kind.factors_text);
	for (char *t = strtok_r(list, ", ", &save); t != NULL; t = strtok_r(NULL, ", ", &save))
		if (strcmp(t, name) == 0)
			return 1;
	return 0;
}

/* One factor of the report against the control. */
static int
check_factor(const struct rba_json_value *f, const struct rba_digest *control,
	     uint64_t cases, struct vary_evidence_summary *s, struct rba_detail *d)
{
	static const char *const keys[] = {"factor", "state", "changes_artifact",
					   "artifact", "flips", "max_score_delta",
					   "max_delta_case", "seconds", "detail"};
	const struct rba_json_value *name, *state, *ch, *art, *flips, *delta;
	struct rba_digest dg;
	const char *st;
	int same, changes;

	if (!closed(f, keys, sizeof(keys) / sizeof(keys[0])))
		return bad(d, "report.factors[]: not the members of a factor%s", "");
	name = rba_json_get(f, "factor");
	state = rba_json_get(f, "state");
	ch = rba_json_get(f, "changes_artifact");
	art = rba_json_get(f, "artifact");
	flips = rba_json_get(f, "flips");
	delta = rba_json_get(f, "max_score_delta");
	if (!is_str(name) || !known_factor(name->str))
		return bad(d, "report.factors[]: '%s' is not a factor",
			   is_str(name) ? name->str : "?");
	if (!is_str(state) || ch == NULL ||
	    (ch->type != RBA_JSON_TRUE && ch->type != RBA_JSON_FALSE) ||
	    !is_str(rba_json_get(f, "detail")))
		return bad(d, "report.factors[] '%s': a member of the wrong type", name->str);
	st = state->str;
	same = strcmp(st, "same") == 0;
	changes = strcmp(st, "changes") == 0;
	if (!same && !changes && strcmp(st, "fails") != 0 && strcmp(st, "not-tried") != 0)
		return bad(d, "report.factors[]: the state '%s' is not one a run has", st);
	if ((ch->type == RBA_JSON_TRUE) != changes)
		return bad(d, "report.factors[] '%s': changes_artifact disagrees with "
			      "its state", name->str);
	if (same || changes) {
		if (!digest_of(art, &dg))
			return bad(d, "report.factors[] '%s': a run that gave an "
				      "artifact has no digest", name->str);
		if (rba_digest_equal(&dg, control) != same)
			return bad(d, "report.factors[] '%s': its artifact and the "
				      "control's disagree with its state", name->str);
	} else if (!is_null(art)) {
		return bad(d, "report.factors[] '%s': a run that gave no artifact "
			      "names one", name->str);
	}
	if (!changes && (!is_null(flips) || !is_null(delta)))
		return bad(d, "report.factors[] '%s': effects on the sample of an "
			      "artifact that did not change", name->str);
	if (!is_null(flips) &&
	    (flips->type != RBA_JSON_NUMBER || flips->num < 0 ||
	     flips->num != floor(flips->num) || flips->num > (double)cases))
		return bad(d, "report.factors[] '%s': flips is not a count of the "
			      "sample's cases", name->str);
	if (!is_null(delta) &&
	    (delta->type != RBA_JSON_NUMBER || !(delta->num >= 0 && delta->num <= 1)))
		return bad(d, "report.factors[] '%s': the score difference is not "
			      "in [0, 1]", name->str);
	if (is_null(flips) != is_null(delta))
		return bad(d, "report.factors[] '%s': flips and the score difference "
			      "come together", name->str);
	s->factors++;
	if (changes || strcmp(st, "fails") == 0) {
		size_t len = strlen(s->changed_list);
		s->changed++;
		snprintf(s->changed_list + len, sizeof(s->changed_list) - len, "%s%s",
			 len ? ", " : "", name->str);
	}
	return 0;
}

static int
check_report(const struct rba_json_value *r, const char *subject_hex,
	     struct vary_evidence_summary *s, struct rba_detail *d)
{
	static const char *const keys[] = {"schema", "version", "time", "trainer",
					   "pinned", "control", "sample_cases",
					   "not_scored", "factors"};
	static const char *const ckeys[] = {"artifact", "pinned"};
	const struct rba_json_value *v, *c, *f, *cases, *cp;
	struct rba_digest pinned, control, subj;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	if (!closed(r, keys, sizeof(keys) / sizeof(keys[0])))
		return bad(d, "predicate.report: not the members of a %s report", VARY_SCHEMA);
	if (!is_str(v = rba_json_get(r, "schema")) || strcmp(v->str, VARY_SCHEMA) != 0)
		return bad(d, "predicate.report.schema is not %s", VARY_SCHEMA);
	if (!is_str(v = rba_json_get(r, "version")) || v->len == 0 ||
	    v->len > STORE_VERSION_NAME_MAX || strlen(v->str) != v->len)
		return bad(d, "predicate.report.version is not a version name%s", "");
	snprintf(s->version, sizeof(s->version), "%s", v->str);
	if (!is_str(v = rba_json_get(r, "time")))
		return bad(d, "predicate.report.time is not a time%s", "");
	snprintf(s->time, sizeof(s->time), "%s", v->str);
	if (!is_str(v = rba_json_get(r, "trainer")) ||
	    (strcmp(v->str, "exec") != 0 && strcmp(v->str, "builtin") != 0))
		return bad(d, "predicate.report.trainer is neither exec nor builtin%s", "");
	if (!digest_of(rba_json_get(r, "pinned"), &pinned))
		return bad(d, "predicate.report.pinned is not a digest%s", "");
	rba_digest_format(&pinned, hex);
	if (strcmp(strchr(hex, ':') + 1, subject_hex) != 0 ||
	    rba_digest_parse(hex, &subj) != 0)
		return bad(d, "the subject is not the report's pinned artifact %s", hex);
	c = rba_json_get(r, "control");
	if (!closed(c, ckeys, 2) || !digest_of(rba_json_get(c, "artifact"), &control) ||
	    (cp = rba_json_get(c, "pinned")) == NULL ||
	    (cp->type != RBA_JSON_TRUE && cp->type != RBA_JSON_FALSE))
		return bad(d, "predicate.report.control is not an artifact and whether "
			      "it is the pinned one%s", "");
	s->control_pinned = cp->type == RBA_JSON_TRUE;
	if (s->control_pinned != rba_digest_equal(&control, &pinned))
		return bad(d, "predicate.report.control.pinned disagrees with the "
			      "digests%s", "");
	cases = rba_json_get(r, "sample_cases");
	if (cases == NULL || cases->type != RBA_JSON_NUMBER || cases->num < 0 ||
	    cases->num != floor(cases->num))
		return bad(d, "predicate.report.sample_cases is not a count%s", "");
	s->cases = (uint64_t)cases->num;
	v = rba_json_get(r, "not_scored");
	if (!is_str(v) && !is_null(v))
		return bad(d, "predicate.report.not_scored is not a reason%s", "");
	f = rba_json_get(r, "factors");
	if (f == NULL || f->type != RBA_JSON_ARRAY || f->n == 0 || f->n > VARY_MAX_RUNS)
		return bad(d, "predicate.report.factors is not a list of runs%s", "");
	for (size_t i = 0; i < f->n; i++)
		if ((err = check_factor(&f->items[i], &control, s->cases, s, d)) != 0)
			return err;
	return 0;
}

int
vary_evidence_check(const void *p, size_t n, const char *tc, int *is_vary,
		    struct vary_evidence_summary *out, struct rba_detail *d)
{
	static const char *const keys[] = {"_type", "subject", "predicateType", "predicate"};
	static const char *const pkeys[] = {"run", "report"};
	struct rba_json_value root;
	const struct rba_json_value *pt, *sub, *pred, *v;
	struct vary_evidence_summary s;
	char want[SIGN_TRUSTED_COMMENT_MAX + 1], name[STORE_VERSION_NAME_MAX + 16];
	int claims = tc != NULL && strncmp(tc, VARY_COMMENT_PREFIX,
					   strlen(VARY_COMMENT_PREFIX)) == 0;
	int err;

	*is_vary = 0;
	memset(&s, 0, sizeof(s));
	if (rba_json_parse(p, n, &root, NULL) != 0) {
		if (!claims)
			return 0;
		*is_vary = 1;
		return bad(d, "the statement is not JSON%s", "");
	}
	pt = rba_json_get(&root, "predicateType");
	if (!(is_str(pt) && strncmp(pt->str, VARY_PREDICATE_PREFIX,
				    strlen(VARY_PREDICATE_PREFIX)) == 0) && !claims) {
		rba_json_release(&root);
		return 0;
	}
	*is_vary = 1;
	err = 0;
	if (is_str(pt) && strcmp(pt->str, VARY_PREDICATE_TYPE) != 0 &&
	    strncmp(pt->str, VARY_PREDICATE_PREFIX, strlen(VARY_PREDICATE_PREFIX)) == 0) {
		err = rba_fail(d, RBA_E_NEWER, NULL, 0, 0, "predicateType %s is a later "
			       "version than this build reads", pt->str);
		goto out;
	}
	if (!closed(&root, keys, 4) || !is_str(pt) ||
	    !is_str(v = rba_json_get(&root, "_type")) ||
	    strcmp(v->str, "https://in-toto.io/Statement/v1") != 0) {
		err = bad(d, "not an in-toto statement of %s", VARY_PREDICATE_TYPE);
		goto out;
	}
	sub = rba_json_get(&root, "subject");
	if (sub == NULL || sub->type != RBA_JSON_ARRAY || sub->n != 1 ||
	    !is_str(rba_json_get(&sub->items[0], "name")) ||
	    !is_str(rba_json_get(rba_json_get(&sub->items[0], "digest"), "sha256")) ||
	    sub->items[0].n != 2 || rba_json_get(&sub->items[0], "digest")->n != 1) {
		err = bad(d, "the subject is not one artifact%s", "");
		goto out;
	}
	pred = rba_json_get(&root, "predicate");
	if (!closed(pred, pkeys, 2) || !is_str(v = rba_json_get(pred, "run"))) {
		err = bad(d, "predicate: not a run and its report%s", "");
		goto out;
	}
	snprintf(s.run, sizeof(s.run), "%s", v->str);
	if ((err = check_report(rba_json_get(pred, "report"),
				rba_json_get(rba_json_get(&sub->items[0], "digest"), "sha256")->str,
				&s, d)) != 0)
		goto out;
	snprintf(name, sizeof(name), "%s.artifact", s.version);
	if (strcmp(rba_json_get(&sub->items[0], "name")->str, name) != 0) {
		err = bad(d, "the subject is not named %s", name);
		goto out;
	}
	if (strncmp(s.run, "vary/", 5) != 0 || strncmp(s.run + 5, s.version, strlen(s.version)) != 0 ||
	    s.run[5 + strlen(s.version)] != '@') {
		err = bad(d, "predicate.run '%s' is not a variation run of the version", s.run);
		goto out;
	}
	/* tc NULL: a statement signed as a whole (a DSSE envelope), with
	 * no trusted comment to agree with */
	if ((err = comment(&s, want, sizeof(want))) != 0 ||
	    (tc != NULL && strcmp(tc, want) != 0)) {
		err = bad(d, "the trusted comment is not '%s'", want);
		goto out;
	}
	if (out != NULL)
		*out = s;
out:
	rba_json_release(&root);
	return err;
}

/* ---- export ---------------------------------------------------------- */

int
vary_evidence_export(struct store *st, const char *version, const char *run_id,
		     const struct sign_seckey *key, const char *path, int force,
		     struct vary_evidence_summary *out, struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct store_version v;
	int have_v = 0;
	struct newest w;
	struct rba_buf doc, sig;
	struct vary_evidence_summary s;
	char hex[RBA_DIGEST_TEXT_LEN + 1], tc[SIGN_TRUSTED_COMMENT_MAX + 1];
	uint8_t *rec = NULL;
	size_t rn = 0;
	int err, is;

	rba_buf_init(&doc);
	rba_buf_init(&sig);
	memset(&w, 0, sizeof(w));
	if ((err = store_txn_begin(st, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = store_version_get(txn, version, &v, d)) != 0) {
		if (err == RBA_E_NOTFOUND)
			rba_fail(d, err, NULL, 0, 0, "no version '%s' in the store", version);
		goto out;
	}
	have_v = 1;
	rba_digest_format(&v.artifact, hex);
	if (run_id == NULL) {
		snprintf(w.prefix, sizeof(w.prefix), "vary/%s@", version);
		if ((err = store_run_list(txn, newest_cb, &w, d)) != 0)
			goto out;
		if (!w.found) {
			err = rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				       "version '%s' has no variation report (run "
				       "'rebuild-audit vary %s' first)", version, version);
			goto out;
		}
		run_id = w.best;
	}
	if ((err = store_run_get(txn, run_id, &rec, &rn, d)) != 0) {
		if (err == RBA_E_NOTFOUND)
			rba_fail(d, err, NULL, 0, 0, "no run '%s' in the store", run_id);
		goto out;
	}
	render(version, run_id, strchr(hex, ':') + 1, rec, rn, &doc);
	if ((err = rba_buf_status(&doc)) != 0)
		goto out;
	/* what verify would reject is never signed */
	rba_detail_clear(d);
	memset(&s, 0, sizeof(s));
	{
		struct rba_json_value root, *pr;
		const struct rba_json_value *rep;
		if (rba_json_parse((const char *)doc.p, doc.len, &root, d) != 0) {
			err = rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0, "run '%s' is not a "
				       "variation report", run_id);
			goto out;
		}
		pr = (struct rba_json_value *)rba_json_get(&root, "predicate");
		rep = rba_json_get(pr, "report");
		err = check_report(rep, strchr(hex, ':') + 1, &s, d);
		snprintf(s.run, sizeof(s.run), "%s", run_id);
		rba_json_release(&root);
		if (err)
			goto out;
	}
	if ((err = comment(&s, tc, sizeof(tc))) != 0) {
		rba_fail(d, err, NULL, 0, 0, "the version does not fit in a trusted comment");
		goto out;
	}
	if ((err = vary_evidence_check(doc.p, doc.len, tc, &is, &s, d)) != 0)
		goto out;
	store_txn_abort(txn);
	txn = NULL;
	if ((err = sign_file_sign(key, doc.p, doc.len, NULL, tc, &sig, d)) != 0)
		goto out;
	if ((err = evidence_write(path, doc.p, doc.len, sig.p, sig.len, force, d)) != 0)
		goto out;
	if (out != NULL)
		*out = s;
out:
	if (have_v)
		store_version_release(&v);
	if (txn != NULL)
		store_txn_abort(txn);
	free(rec);
	rba_buf_release(&doc);
	rba_buf_release(&sig);
	return err;
}
