/*
 * dispute_evidence.c - one answered dispute as signed evidence: the
 * statement, its trusted comment and the offline check `verify` makes.
 */
#include "evidence/dispute_evidence.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "evidence/evidence.h"
#include "policy/policy.h"
#include "model/artifact.h"
#include "data/encode.h"
#include "model/explain.h"
#include "train/trainer.h"

void
dispute_evidence_render(const struct dispute_report *r, struct rba_buf *b)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1], name[STORE_VERSION_NAME_MAX + 16];
	struct rba_json_w w;

	snprintf(name, sizeof(name), "%s.artifact", r->version);
	rba_digest_format(&r->artifact_decisions, hex);
	rba_json_w_init(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "_type", "https://in-toto.io/Statement/v1");
	rba_json_w_open(&w, "subject", '[');
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "name", name);
	rba_json_w_open(&w, "digest", '{');
	/* the hex after "sha256:" */
	rba_json_w_str(&w, "sha256", strchr(hex, ':') ? strchr(hex, ':') + 1 : hex);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, ']');
	rba_json_w_str(&w, "predicateType",
		       dispute_report_format(r) == 4   ? DISPUTE_PREDICATE_TYPE_V4
		       : dispute_report_format(r) == 3 ? DISPUTE_PREDICATE_TYPE_V3
						       : DISPUTE_PREDICATE_TYPE);
	rba_json_w_open(&w, "predicate", '{');
	rba_json_w_open(&w, "history", '{');
	rba_json_w_u64(&w, "id", r->head_id);
	rba_json_w_digest(&w, "digest", &r->head, 1);
	rba_json_w_close(&w, '}');
	/* the key, then the dispute as audit/dispute.h writes it, in b */
	rba_json_w_raw(&w, "dispute", "", 0);
	dispute_report_json(r, 1, b);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	rba_buf_put_u8(b, '\n');
}

int
dispute_evidence_comment(const struct dispute_report *r, char *out,
			 size_t outlen)
{
	int n = snprintf(out, outlen, DISPUTE_COMMENT_PREFIX "version %s case %s answer %s",
			 r->version, r->case_id,
			 r->answer == DISPUTE_STANDS ? "stands" : "escalate");

	if (n < 0 || (size_t)n >= outlen)
		return RBA_E_LIMIT;
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return 0;
}

static int
bad(struct rba_detail *d, const char *what)
{
	return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "dispute evidence: %s", what);
}

/*
 * Whether o is an object whose members are exactly the names of keys
 * (NULL-ended), each once: nothing verify has not checked, and no name
 * twice (a reader that takes the last of two reads another document than
 * the one checked).  keys NULL: any names, each once (the inputs).  1,
 * 0, or -1 out of memory.
 */
static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
members_are(const struct rba_json_value *o, const char *const *keys)
{
	size_t want = 0;
	char **names;
	int ok = 1;

	if (o == NULL || o->type != RBA_JSON_OBJECT)
		return 0;
	if (keys != NULL) {
		/* a short list: its length first, then each name in it once */
		for (want = 0; keys[want] != NULL; want++)
			;
		if (o->n != want)
			return 0;
		for (size_t i = 0; i < o->n; i++) {
			size_t k;
			for (k = 0; keys[k] != NULL; k++)
				if (strcmp(keys[k], o->keys[i]) == 0)
					break;
			if (keys[k] == NULL)
				return 0;
			for (size_t j = 0; j < i; j++)
				if (strcmp(o->keys[j], o->keys[i]) == 0)
					return 0;
		}
		return 1;
	}
	/* any names (as many as the file holds): sorted, no two alike */
	if (o->n < 2)
		return 1;
	if ((names = malloc(o->n * sizeof(*names))) == NULL)
		return -1;
	memcpy(names, o->keys, o->n * sizeof(*names));
	qsort(names, o->n, sizeof(*names), cmp_name);
	for (size_t i = 1; i < o->n && ok; i++)
		ok = strcmp(names[i - 1], names[i]) != 0;
	free(names);
	return ok;
}

/*
 * The members of each object of the dispute statement, by format, for
 * check_members.
 */
static const char *const k_root[] = { "_type", "subject", "predicateType",
				      "predicate", NULL };
static const char *const k_subject[] = { "name", "digest", NULL };
static const char *const k_sha[] = { "sha256", NULL };
static const char *const k_pred[] = { "history", "dispute", NULL };
static const char *const k_hist[] = { "id", "digest", NULL };
static const char *const k_dispute_v1[] = {
	"schema", "version", "case", "answer", "answer_line", "reasons",
	"warnings", "stored", "rebuilt", "classes", "margin",
	"rebuilt_margin", "edge", "standing", "digests", "inputs",
	"scoring", "explanation", "timings", NULL
};
static const char *const k_dispute_v2[] = {
	"schema", "version", "case", "answer", "answer_line", "exact",
	"reasons", "warnings", "stored", "rebuilt", "classes", "margin",
	"rebuilt_margin", "edge", "standing", "digests", "policy_text",
	"inputs", "scoring", "explanation", "timings", NULL
};
static const char *const k_stored[] = { "score", "probabilities",
					"decision", "scored_by", NULL };
static const char *const k_rebuilt[] = { "score", "probabilities",
					 "decision", NULL };
static const char *const k_standing[] = { "verdict", "basis",
					  "audit_record", NULL };
static const char *const k_digests[] = {
	"artifact_pinned", "artifact_rebuilt", "artifact_decisions",
	"policy", "sample", "sample_policy", NULL
};
static const char *const k_scoring[] = { "artifact", "audit_record",
					 "retrain_reason", NULL };
static const char *const k_timings[] = { "verify_s", "lookup_s", "rebuild_s",
					 "explain_s", "total_s", NULL };
static const char *const k_expl_v1[] = {
	"ok", "error", "method", "source", "artifact", "decision_artifact",
	"class", "space", "direction", "baseline", "margin", "sum",
	"tolerance", "sum_ok", "score_check", "principal_reasons",
	"contributions", NULL
};
static const char *const k_expl_v2[] = {
	"ok", "error", "method", "accuracy", "error_bound", "samples",
	"reasons_asked", "source", "artifact", "decision_artifact",
	"class", "space", "direction", "baseline", "margin", "sum",
	"tolerance", "sum_ok", "score_check", "principal_reasons",
	"contributions", NULL
};
static const char *const k_expl_v3[] = {
	"ok", "error", "method", "accuracy", "error_bound", "samples",
	"reasons_asked", "source", "artifact", "decision_artifact",
	"class", "space", "direction", "baseline", "margin", "sum",
	"tolerance", "sum_ok", "score_check", "principal_reasons",
	"statements_missing", "contributions", NULL
};
/* v4: v2's or v3's (as the policy has statements or not, which
 * check_v4_unseen holds it to) and "unseen" before "contributions" */
static const char *const k_expl_v4[] = {
	"ok", "error", "method", "accuracy", "error_bound", "samples",
	"reasons_asked", "source", "artifact", "decision_artifact",
	"class", "space", "direction", "baseline", "margin", "sum",
	"tolerance", "sum_ok", "score_check", "principal_reasons",
	"unseen", "contributions", NULL
};
static const char *const k_expl_v4s[] = {
	"ok", "error", "method", "accuracy", "error_bound", "samples",
	"reasons_asked", "source", "artifact", "decision_artifact",
	"class", "space", "direction", "baseline", "margin", "sum",
	"tolerance", "sum_ok", "score_check", "principal_reasons",
	"statements_missing", "unseen", "contributions", NULL
};
static const char *const k_unseen[] = { "column", "value", "went", "splits",
					"trees", "forest_trees", NULL };
static const char *const k_check[] = { "probability", "score", "score_of",
				       "tolerance", "ok", NULL };
static const char *const k_reason_v2[] = { "rank", "column", "value",
					   "contribution", NULL };
static const char *const k_reason_v3[] = { "rank", "column", "value",
					   "statement", "contribution", NULL };
static const char *const k_contrib[] = { "column", "value", "contribution",
					 NULL };

/*
 * Every object of the statement, as rebuild-audit-report(5) and
 * fixtures/evidence/dispute.schema.json give it: 0, or RBA_E_SCHEMA
 * naming the first object with a member missing, unknown or twice.
 */
static int
check_members(const struct rba_json_value *root, int ver, struct rba_detail *d)
{
	int v2 = ver >= 2;
	const char *const *k_dispute = v2 ? k_dispute_v2 : k_dispute_v1;
	const struct rba_json_value *ex0 =
		rba_json_get(rba_json_get(rba_json_get(root, "predicate"), "dispute"),
			     "explanation");
	int stmts = ver == 3 || (ver == 4 && rba_json_get(ex0, "statements_missing") != NULL);
	const char *const *k_expl = ver == 4 ? stmts ? k_expl_v4s : k_expl_v4
				    : ver == 3 ? k_expl_v3 : v2 ? k_expl_v2 : k_expl_v1;
	const char *const *k_reason = stmts ? k_reason_v3 : k_reason_v2;
	const struct {
		const char *path; /* from the predicate's dispute, "" the root */
		const char *const *keys;
	} obj[] = {
		{ "stored", k_stored },     { "rebuilt", k_rebuilt },
		{ "standing", k_standing }, { "digests", k_digests },
		{ "scoring", k_scoring },   { "timings", k_timings },
		{ "explanation", k_expl },  { "inputs", NULL },
	};
	const struct rba_json_value *subj = rba_json_get(root, "subject");
	const struct rba_json_value *pred = rba_json_get(root, "predicate");
	const struct rba_json_value *dp = rba_json_get(pred, "dispute");
	const struct rba_json_value *ex = rba_json_get(dp, "explanation");
	const struct rba_json_value *sc = rba_json_get(ex, "score_check");
	const struct rba_json_value *list;
	const char *what = NULL;

	if (!members_are(root, k_root))
		what = "the statement";
	else if (subj == NULL || subj->type != RBA_JSON_ARRAY || subj->n != 1 ||
		 !members_are(&subj->items[0], k_subject) ||
		 !members_are(rba_json_get(&subj->items[0], "digest"), k_sha))
		what = "'subject'";
	else if (!members_are(pred, k_pred))
		what = "'predicate'";
	else if (!members_are(rba_json_get(pred, "history"), k_hist))
		what = "'predicate.history'";
	else if (!members_are(dp, k_dispute))
		what = "'predicate.dispute'";
	for (size_t i = 0; what == NULL && i < sizeof(obj) / sizeof(obj[0]); i++) {
		int m = members_are(rba_json_get(dp, obj[i].path), obj[i].keys);
		if (m < 0)
			return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s",
					rba_strerror(RBA_E_NOMEM));
		if (m == 0)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"dispute evidence: 'predicate.dispute.%s' "
					"has a member missing, unknown or twice",
					obj[i].path);
	}
	if (what == NULL && sc != NULL && sc->type != RBA_JSON_NULL &&
	    !members_are(sc, k_check))
		what = "'predicate.dispute.explanation.score_check'";
	list = rba_json_get(ex, "principal_reasons");
	for (size_t i = 0; what == NULL && list != NULL &&
			   list->type == RBA_JSON_ARRAY && i < list->n; i++)
		if (!members_are(&list->items[i], k_reason))
			what = "a principal reason";
	list = rba_json_get(ex, "contributions");
	for (size_t i = 0; what == NULL && list != NULL &&
			   list->type == RBA_JSON_ARRAY && i < list->n; i++)
		if (!members_are(&list->items[i], k_contrib))
			what = "a contribution";
	list = rba_json_get(ex, "unseen");
	for (size_t i = 0; what == NULL && list != NULL &&
			   list->type == RBA_JSON_ARRAY && i < list->n; i++)
		if (!members_are(&list->items[i], k_unseen))
			what = "an unseen level's entry";
	if (what == NULL)
		return 0;
	return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
			"dispute evidence: %s has a member missing, unknown or "
			"twice", what);
}

static int
is_num(const struct rba_json_value *v, const char *key)
{
	const struct rba_json_value *x = rba_json_get(v, key);
	return x != NULL && x->type == RBA_JSON_NUMBER;
}

static const struct rba_json_value *
item_match(const struct rba_json_value *contribs, const struct rba_json_value *it)
{
	const char *c = rba_json_get_str(it, "column"), *v = rba_json_get_str(it, "value");

	for (size_t i = 0; c != NULL && v != NULL && i < contribs->n; i++) {
		const struct rba_json_value *x = &contribs->items[i];
		const char *xc = rba_json_get_str(x, "column");
		const char *xv = rba_json_get_str(x, "value");
		if (xc && xv && strcmp(xc, c) == 0 && strcmp(xv, v) == 0 &&
		    rba_json_get_num(x, "contribution", NAN) ==
			    rba_json_get_num(it, "contribution", NAN))
			return x;
	}
	return NULL;
}

/* A member that is true (1), false (0) or anything else (-1). */
static int
boolean(const struct rba_json_value *o, const char *key)
{
	const struct rba_json_value *v = rba_json_get(o, key);

	return v == NULL ? -1 : v->type == RBA_JSON_TRUE ? 1
		: v->type == RBA_JSON_FALSE ? 0 : -1;
}

/*
 * The reasons: they add up, and the principal ones are in order.  v1:
 * reasons that do not add up are refused; v2 states the checks' outcome
 * (sum_ok, score_check.ok), which must be the outcome computed again: a
 * failed check is stated, and then the answer escalates.
 */
static int
check_explanation(const struct rba_json_value *e, int v2, struct rba_detail *d)
{
	int agree;
	const struct rba_json_value *cs, *top, *sc, *ok;
	const char *dir;
	double base, margin, sum, tol, acc, prev = INFINITY;

	ok = rba_json_get(e, "ok");
	if (ok == NULL || (ok->type != RBA_JSON_TRUE && ok->type != RBA_JSON_FALSE))
		return bad(d, "the explanation has no 'ok'");
	if (ok->type == RBA_JSON_FALSE)
		return rba_json_get_str(e, "error") != NULL
			       ? 0 : bad(d, "reasons missing without an error");
	cs = rba_json_get(e, "contributions");
	top = rba_json_get(e, "principal_reasons");
	dir = rba_json_get_str(e, "direction");
	if (cs == NULL || cs->type != RBA_JSON_ARRAY || top == NULL ||
	    top->type != RBA_JSON_ARRAY || dir == NULL || !is_num(e, "baseline") ||
	    !is_num(e, "margin") || !is_num(e, "sum") || !is_num(e, "tolerance"))
		return bad(d, "the explanation lacks a member");
	base = rba_json_get_num(e, "baseline", NAN);
	margin = rba_json_get_num(e, "margin", NAN);
	sum = rba_json_get_num(e, "sum", NAN);
	tol = rba_json_get_num(e, "tolerance", NAN);
	if (tol != EXPLAIN_TOLERANCE)
		return bad(d, "the reasons' tolerance is not the documented one");
	acc = base;
	for (size_t i = 0; i < cs->n; i++) {
		if (!is_num(&cs->items[i], "contribution"))
			return bad(d, "a contribution is not a number");
		acc += rba_json_get_num(&cs->items[i], "contribution", NAN);
	}
	agree = fabs(acc - margin) <= tol && fabs(sum - margin) <= tol;
	if (v2 ? agree != boolean(e, "sum_ok") : !agree)
		return bad(d, agree ? "the reasons' sum check is stated failed, but "
				      "it holds"
				    : "the contributions and the baseline do not add up "
				      "to the case's margin");
	for (size_t i = 0; i < top->n; i++) {
		double v, key;
		if (item_match(cs, &top->items[i]) == NULL)
			return bad(d, "a principal reason is not one of the contributions");
		if (rba_json_get_num(&top->items[i], "rank", 0) != (double)(i + 1))
			return bad(d, "the principal reasons are not ranked 1, 2, ...");
		v = rba_json_get_num(&top->items[i], "contribution", NAN);
		key = strcmp(dir, "up") == 0 ? v : strcmp(dir, "down") == 0 ? -v : fabs(v);
		if (!(key > 0.0) || key > prev)
			return bad(d, "the principal reasons do not push toward the "
				      "decision in order");
		prev = key;
	}
	sc = rba_json_get(e, "score_check");
	if (sc != NULL && sc->type == RBA_JSON_OBJECT) {
		double p = 1.0 / (1.0 + exp(-margin));
		if (rba_json_get_num(sc, "tolerance", NAN) != DISPUTE_SCORE_TOLERANCE)
			return bad(d, "the score check's tolerance is not the "
				      "documented one");
		agree = fabs(p - rba_json_get_num(sc, "score", NAN)) <=
			DISPUTE_SCORE_TOLERANCE;
		if (v2 ? agree != boolean(sc, "ok") : !agree)
			return bad(d, agree ? "the score check is stated failed, but "
					      "it holds"
					    : "the margin does not give the score it "
					      "explains");
	}
	return 0;
}

/*
 * A standing answer has its reasons (doc/design.md section 8.4): they
 * were computed, and they pass their own checks as stated.
 */
static int
check_stands_reasons(const struct rba_json_value *e, struct rba_detail *d)
{
	const struct rba_json_value *ok = rba_json_get(e, "ok");
	const struct rba_json_value *sum_ok = rba_json_get(e, "sum_ok");
	const struct rba_json_value *sc = rba_json_get(e, "score_check");
	const char *why = rba_json_get_str(e, "error");

	if (ok == NULL || ok->type != RBA_JSON_TRUE)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"dispute evidence: the answer 'stands' has no reasons: "
				"the principal reasons could not be computed (%.200s)",
				why ? why : "no error given");
	if (sum_ok == NULL || sum_ok->type != RBA_JSON_TRUE ||
	    (sc != NULL && sc->type == RBA_JSON_OBJECT &&
	     (rba_json_get(sc, "ok") == NULL ||
	      rba_json_get(sc, "ok")->type != RBA_JSON_TRUE)))
		return bad(d, "the answer 'stands' rests on reasons that fail their "
			      "own check");
	return 0;
}

/* A member that is an integer in [0, max]: 1 and *out, else 0. */
static int
count_of(const struct rba_json_value *o, const char *key, double max,
	 uint64_t *out)
{
	const struct rba_json_value *v = rba_json_get(o, key);

	if (v == NULL || v->type != RBA_JSON_NUMBER || !(v->num >= 0) ||
	    v->num > max || v->num != floor(v->num))
		return 0;
	*out = (uint64_t)v->num;
	return 1;
}

/*
 * Shapley values claimed exact (v1 claims nothing else): the exact
 * method takes at most EXPLAIN_MAX_SHAPLEY_COLUMNS players (the columns
 * whose contribution is not 0), so values over more are estimates that
 * do not say so.
 */
static int
check_exact_players(const struct rba_json_value *e, struct rba_detail *d)
{
	const struct rba_json_value *cs = rba_json_get(e, "contributions");
	const char *m = rba_json_get_str(e, "method");
	size_t players = 0;

	if (m == NULL || strcmp(m, "shapley") != 0 || cs == NULL ||
	    cs->type != RBA_JSON_ARRAY)
		return 0;
	for (size_t i = 0; i < cs->n; i++)
		players += rba_json_get_num(&cs->items[i], "contribution", 0) != 0.0;
	if (players > EXPLAIN_MAX_SHAPLEY_COLUMNS)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"dispute evidence: exact Shapley values claimed over "
				"%zu columns that move the margin, more than the exact "
				"method takes (%d): estimates without a bound",
				players, EXPLAIN_MAX_SHAPLEY_COLUMNS);
	return 0;
}

/*
 * v2: the reasons' accuracy, bound and draws agree with each other and
 * with the answer's exactness; the principal reasons are exactly those
 * the contributions, the direction and the count asked for give
 * (dispute_top_reasons).
 */
static int
check_v2_reasons(const struct rba_json_value *dp, struct rba_detail *d)
{
	const struct rba_json_value *e = rba_json_get(dp, "explanation");
	const struct rba_json_value *cs = rba_json_get(e, "contributions");
	const struct rba_json_value *top = rba_json_get(e, "principal_reasons");
	const char *acc = rba_json_get_str(e, "accuracy");
	const char *method = rba_json_get_str(e, "method");
	const char *dir = rba_json_get_str(e, "direction");
	double bound = rba_json_get_num(e, "error_bound", NAN);
	int ok = boolean(e, "ok"), exact = boolean(dp, "exact");
	uint64_t samples, asked;
	uint32_t *idx, ntop;
	double *v;

	if (exact < 0 || !count_of(e, "samples", 9007199254740992.0, &samples) ||
	    !count_of(e, "reasons_asked", DISPUTE_REASONS_MAX, &asked))
		return bad(d, "the answer's exactness, the reasons' draws or the "
			      "count asked for is not what it must be");
	if (ok != 1) {
		if (acc != NULL || !isnan(bound) || samples != 0 || exact != 0)
			return bad(d, "reasons not computed, but stated exact or with a "
				      "bound");
		return 0;
	}
	if (acc != NULL && strcmp(acc, "exact") == 0) {
		if (bound != 0.0 || samples != 0)
			return bad(d, "exact reasons with an error bound or draws");
	} else if (acc != NULL && strcmp(acc, "approximate") == 0) {
		if (method == NULL || strcmp(method, "shapley") != 0 ||
		    !(bound > 0.0) || !isfinite(bound) ||
		    samples < EXPLAIN_SHAPLEY_MIN_PAIRS)
			return bad(d, "approximate reasons that are not a Shapley "
				      "estimate with its bound and draws");
	} else {
		return bad(d, "the reasons are neither exact nor approximate");
	}
	if (exact != (strcmp(acc, "exact") == 0))
		return bad(d, "the answer's exactness is not its reasons' accuracy");
	/* the principal reasons, chosen again */
	if (cs == NULL || cs->type != RBA_JSON_ARRAY || top == NULL ||
	    top->type != RBA_JSON_ARRAY || dir == NULL || cs->n > UINT32_MAX)
		return bad(d, "the explanation lacks a member");
	v = calloc(cs->n ? cs->n : 1, sizeof(double));
	idx = calloc(cs->n ? cs->n : 1, sizeof(uint32_t));
	if (v == NULL || idx == NULL) {
		free(v);
		free(idx);
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s",
				rba_strerror(RBA_E_NOMEM));
	}
	for (size_t i = 0; i < cs->n; i++)
		v[i] = rba_json_get_num(&cs->items[i], "contribution", NAN);
	dispute_top_reasons(v, (uint32_t)cs->n,
			    strcmp(dir, "up") == 0 ? 1 : strcmp(dir, "down") == 0 ? -1 : 0,
			    (uint32_t)asked, idx, &ntop);
	ok = top->n == ntop;
	for (uint32_t i = 0; ok && i < ntop; i++) {
		const char *want = rba_json_get_str(&cs->items[idx[i]], "column");
		const char *got = rba_json_get_str(&top->items[i], "column");
		ok = want != NULL && got != NULL && strcmp(want, got) == 0;
	}
	free(v);
	free(idx);
	if (!ok)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"dispute evidence: the principal reasons are not the "
				"%u largest pushes toward the decision among the "
				"contributions (%llu asked for)", ntop,
				(unsigned long long)asked);
	return 0;
}

/*
 * v2: the policy in force is in the file, its exact bytes those of the
 * stated digest, and it parses: *out (policy_free).
 */
static int
check_v2_policy(const struct rba_json_value *dp, struct policy **out,
		struct rba_detail *d)
{
	const struct rba_json_value *t = rba_json_get(dp, "policy_text");
	const char *want = rba_json_get_str(rba_json_get(dp, "digests"), "policy");
	struct rba_digest got, dg;
	struct rba_detail pd;
	int err;

	*out = NULL;
	if (t == NULL || t->type != RBA_JSON_STRING || want == NULL ||
	    rba_digest_parse(want, &dg) != 0)
		return bad(d, "the statement lacks the policy's text or digest");
	rba_digest_bytes(t->str, t->len, &got);
	if (!rba_digest_equal(&got, &dg))
		return bad(d, "the policy's text is not the one of the policy digest");
	rba_detail_clear(&pd);
	if ((err = policy_parse(t->str, t->len, "policy_text", out, &pd)) != 0) {
		if (err == RBA_E_NOMEM)
			return rba_fail(d, err, NULL, 0, 0, "%s", rba_strerror(err));
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"dispute evidence: the policy's text does not parse: "
				"%.200s", pd.reason);
	}
	return 0;
}

/*
 * Every value a reason quotes is the case's input of that column
 * (doc/design.md section 8.4): the contributions (the principal reasons
 * are among them, item_match) against the inputs.
 */
static int
check_quoted_values(const struct rba_json_value *dp, struct rba_detail *d)
{
	const struct rba_json_value *in = rba_json_get(dp, "inputs");
	const struct rba_json_value *cs =
		rba_json_get(rba_json_get(dp, "explanation"), "contributions");

	if (in == NULL || in->type != RBA_JSON_OBJECT)
		return bad(d, "the statement lacks the case's inputs");
	for (size_t i = 0; cs != NULL && cs->type == RBA_JSON_ARRAY && i < cs->n; i++) {
		const char *col = rba_json_get_str(&cs->items[i], "column");
		const char *val = rba_json_get_str(&cs->items[i], "value");
		const char *has = rba_json_get_str(in, col ? col : "");
		if (col == NULL || val == NULL)
			return bad(d, "a contribution lacks its column or value");
		if (has == NULL)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"dispute evidence: the reason '%.100s = %.100s' "
					"quotes a column the case's inputs lack", col, val);
		if (strcmp(has, val) != 0)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"dispute evidence: the reason '%.100s = %.60s' "
					"quotes a value the case's input does not have "
					"(%.100s is '%.60s')", col, val, col, has);
	}
	return 0;
}

/* A member that is a number, or NAN (null, absent: written for a value
 * that is not finite). */
static double
num_or_nan(const struct rba_json_value *o, const char *key)
{
	const struct rba_json_value *v = rba_json_get(o, key);

	return v != NULL && v->type == RBA_JSON_NUMBER ? v->num : NAN;
}

/* A stated number is the value computed again: the same double, or
 * null for a value that is not finite. */
static int
stated_is(double stated, double want)
{
	return isfinite(want) ? stated == want : isnan(stated);
}

/* The probabilities of a member (an array of 1 to 65536 numbers),
 * malloc'd into *out: their count; 0 when it is null; -1 when it is
 * neither; -2 out of memory. */
static long
probs_of(const struct rba_json_value *o, const char *key, double **out)
{
	const struct rba_json_value *v = rba_json_get(o, key);

	*out = NULL;
	if (v != NULL && v->type == RBA_JSON_NULL)
		return 0;
	if (v == NULL || v->type != RBA_JSON_ARRAY || v->n == 0 || v->n > 65536)
		return -1;
	if ((*out = calloc(v->n, sizeof(double))) == NULL)
		return -2;
	for (size_t i = 0; i < v->n; i++) {
		if (v->items[i].type != RBA_JSON_NUMBER) {
			free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[i] = v->items[i].num;
	}
	return (long)v->n;
}

static int
is_among(double x, const double *v, long n)
{
	for (long i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* The class name at index k of the statement's classes, or NULL. */
static const char *
class_at(const struct rba_json_value *dp, size_t k)
{
	const struct rba_json_value *c = rba_json_get(dp, "classes");

	if (c == NULL || c->type != RBA_JSON_ARRAY || k >= c->n ||
	    c->items[k].type != RBA_JSON_STRING)
		return NULL;
	return c->items[k].str;
}

/* What check_v2_decisions reads of the statement and its steps share. */
struct v2_case {
	const struct rba_json_value *dp, *ex, *sc, *warn;
	const char *sd, *rd, *by;	/* stored and rebuilt decision, scored by */
	double ss, rs;			/* stored and rebuilt score */
	double sm, rm;			/* their margins as the policy gives them */
	double *sp, *rp;		/* stored and rebuilt probabilities */
	long ns, nr;			/* how many of each */
	char *contra;			/* the warning the stored decision needs */
};

#define FAIL(...) return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, \
				  "dispute evidence: " __VA_ARGS__)

/* Whether the warnings are the one the stored decision's contradiction gives. */
static int
warned(const struct v2_case *c)
{
	return c->warn->n == 1 && c->warn->items[0].type == RBA_JSON_STRING &&
	       strcmp(c->warn->items[0].str, c->contra) == 0;
}

/* Both sides have their members, the stored probabilities their source. */
static int
check_v2_sides(const struct v2_case *c, struct rba_detail *d)
{
	if (c->sd == NULL || c->by == NULL || c->ns < 0 || c->nr < 0 ||
	    c->warn == NULL || c->warn->type != RBA_JSON_ARRAY)
		FAIL("the stored or rebuilt side lacks a member");
	if (strcmp(c->by, "model") == 0 ? c->ns == 0 : c->ns != 0)
		FAIL("the stored probabilities are not what a score from a %s gives",
		     c->by);
	return 0;
}

/*
 * Under a threshold policy: the decisions and the band edge are the
 * policy's for the scores.
 */
static int
check_v2_threshold(const struct policy *pol, struct v2_case *c,
		   struct rba_detail *d)
{
	double edge;
	char n1[RBA_JSON_NUM_MAX], n2[RBA_JSON_NUM_MAX];
	const char *says, *rsays = NULL;

	if (isnan(c->ss))
		FAIL("the stored score is missing");
	says = policy_decide(pol, c->ss, &c->sm);
	edge = policy_nearest_edge(pol, c->ss);
	rba_json_fmt_double(c->ss, n1);
	if (strcmp(says, c->sd) != 0 &&
	    (c->contra = dispute_contradiction(c->ss, says, c->sd)) == NULL) {
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s",
				rba_strerror(RBA_E_NOMEM));
	}
	if (c->contra != NULL && !warned(c))
		FAIL("the stored decision '%.60s' is not the policy's for the "
		     "stored score %s ('%.60s'), and no warning says so", c->sd, n1,
		     says);
	if (c->ns > 0 && !is_among(c->ss, c->sp, c->ns))
		FAIL("the stored score %s is not one of the stored "
		     "probabilities", n1);
	if (!isnan(c->rs)) {
		rsays = policy_decide(pol, c->rs, &c->rm);
		rba_json_fmt_double(c->rs, n2);
		if (c->rd == NULL || strcmp(rsays, c->rd) != 0)
			FAIL("the rebuilt decision '%.60s' is not the policy's "
			     "for the rebuilt score %s ('%.60s')",
			     c->rd ? c->rd : "(none)", n2, rsays);
		if (c->nr > 0 && !is_among(c->rs, c->rp, c->nr))
			FAIL("the rebuilt score %s is not one of the rebuilt "
			     "probabilities", n2);
	} else if (c->rd != NULL) {
		FAIL("a rebuilt decision '%.60s' without a rebuilt score", c->rd);
	}
	if (!stated_is(num_or_nan(c->dp, "edge"), edge))
		FAIL("the band edge is not the policy's nearest to the stored "
		     "score %s", n1);
	return 0;
}

/*
 * Under an argmax policy: the decisions are the classes of the largest
 * probabilities, and there is no band edge.
 */
static int
check_v2_argmax(const struct policy *pol, struct v2_case *c,
		struct rba_detail *d)
{
	char n1[RBA_JSON_NUM_MAX], n2[RBA_JSON_NUM_MAX];
	size_t k;
	const char *cls;

	if (c->ns <= 0)
		FAIL("an argmax policy decides by the stored probabilities, "
		     "which the statement lacks");
	k = policy_decide_argmax(pol, c->sp, (size_t)c->ns, &c->sm);
	if (k == SIZE_MAX || (cls = class_at(c->dp, k)) == NULL)
		FAIL("the stored probabilities name no class");
	if (strcmp(cls, c->sd) != 0 &&
	    (c->contra = dispute_contradiction(c->sp[k], cls, c->sd)) == NULL) {
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s",
				rba_strerror(RBA_E_NOMEM));
	}
	rba_json_fmt_double(c->sp[k], n1);
	if (c->contra != NULL && !warned(c))
		FAIL("the stored decision '%.60s' is not the policy's for the "
		     "stored probabilities ('%.60s', %s), and no warning says "
		     "so", c->sd, cls, n1);
	if (c->ss != c->sp[k])
		FAIL("the stored score is not the largest stored probability %s",
		     n1);
	if (c->nr > 0) {
		k = policy_decide_argmax(pol, c->rp, (size_t)c->nr, &c->rm);
		if (k == SIZE_MAX || (cls = class_at(c->dp, k)) == NULL)
			FAIL("the rebuilt probabilities name no class");
		rba_json_fmt_double(c->rp[k], n2);
		if (c->rd == NULL || strcmp(cls, c->rd) != 0)
			FAIL("the rebuilt decision '%.60s' is not the policy's "
			     "for the rebuilt probabilities ('%.60s', %s)",
			     c->rd ? c->rd : "(none)", cls, n2);
		if (c->rs != c->rp[k])
			FAIL("the rebuilt score is not the largest rebuilt "
			     "probability %s", n2);
	} else if (c->rd != NULL || !isnan(c->rs)) {
		FAIL("a rebuilt decision or score without rebuilt probabilities");
	}
	if (!isnan(num_or_nan(c->dp, "edge")))
		FAIL("a band edge under an argmax policy");
	return 0;
}

/* The warning, the margins, and what the explanation says it explains. */
static int
check_v2_explained(const struct policy *pol, const struct v2_case *c,
		   struct rba_detail *d)
{
	if (c->contra == NULL && c->warn->n != 0)
		FAIL("a warning that the stored decision is not the policy's, but "
		     "it is");
	if (!stated_is(num_or_nan(c->dp, "margin"), c->sm))
		FAIL("the margin is not the stored score's distance to the policy's "
		     "nearest decision edge");
	if (!stated_is(num_or_nan(c->dp, "rebuilt_margin"), c->rm))
		FAIL("the rebuilt margin is not the rebuilt score's distance to the "
		     "policy's nearest decision edge");
	if (boolean(c->ex, "ok") == 1) {
		const char *dir = rba_json_get_str(c->ex, "direction");
		const char *of = rba_json_get_str(c->sc, "score_of");
		const char *cls = rba_json_get_str(c->ex, "class");
		int want = dispute_direction(pol, c->ss, num_or_nan(c->ex, "baseline"));
		if (dir == NULL || strcmp(dir, want > 0 ? "up" : want < 0 ? "down"
								 : "magnitude") != 0)
			FAIL("the direction toward the decision is not the one the "
			     "policy, the stored score and the baseline give");
		if (pol->argmax && (cls == NULL || strcmp(cls, c->sd) != 0))
			FAIL("under an argmax policy the explained class is not the "
			     "decision");
		if (of != NULL &&
		    num_or_nan(c->sc, "score") !=
			    (strcmp(of, "stored") == 0 ? c->ss : c->rs))
			FAIL("the score the reasons explain is not the %s score",
			     strcmp(of, "stored") == 0 ? "stored" : "rebuilt");
	}
	return 0;
}

#undef FAIL

/*
 * v2: every decision against its score under the statement's policy
 * (audit/dispute.c decides so): the stored decision is the policy's for
 * the stored score, or a warning saying it is not is there (and only
 * then); the rebuilt decision is the policy's for the rebuilt score;
 * each score is one of its side's probabilities; the margins and the
 * band edge are the policy's; the explained score is the side's it
 * names; the direction is the one the policy, the stored score and the
 * baseline give; under argmax the explained class is the decision.
 */
static int
check_v2_decisions(const struct rba_json_value *dp, const struct policy *pol,
		   struct rba_detail *d)
{
	const struct rba_json_value *st = rba_json_get(dp, "stored");
	const struct rba_json_value *rb = rba_json_get(dp, "rebuilt");
	struct v2_case c;
	int err;

	memset(&c, 0, sizeof(c));
	c.dp = dp;
	c.ex = rba_json_get(dp, "explanation");
	c.sc = rba_json_get(c.ex, "score_check");
	c.warn = rba_json_get(dp, "warnings");
	c.sd = rba_json_get_str(st, "decision");
	c.rd = rba_json_get_str(rb, "decision");
	c.by = rba_json_get_str(st, "scored_by");
	c.ss = num_or_nan(st, "score");
	c.rs = num_or_nan(rb, "score");
	c.sm = INFINITY;
	c.rm = INFINITY;
	c.ns = probs_of(st, "probabilities", &c.sp);
	c.nr = probs_of(rb, "probabilities", &c.rp);
	if (c.ns == -2 || c.nr == -2)
		err = rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s", rba_strerror(RBA_E_NOMEM));
	else if ((err = check_v2_sides(&c, d)) == 0 &&
		 (err = pol->argmax ? check_v2_argmax(pol, &c, d)
				    : check_v2_threshold(pol, &c, d)) == 0)
		err = check_v2_explained(pol, &c, d);
	free(c.contra);
	free(c.sp);
	free(c.rp);
	return err;
}

/* The stated answer line of an answer that stands: 0, or RBA_E_SCHEMA
 * with the line it must be. */
static int
check_stands_line(const struct rba_json_value *dp, int v2, const char *line,
		  const char *sd, struct rba_detail *d)
{
	const struct rba_json_value *e = rba_json_get(dp, "explanation");
	char *want;
	int err = 0;

	want = v2 ? dispute_stands_line(sd, boolean(dp, "exact") == 1,
					rba_json_get_num(e, "error_bound", NAN))
		  : dispute_stands_line(sd, 1, 0.0);
	if (want == NULL)
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s",
				rba_strerror(RBA_E_NOMEM));
	if (strcmp(line, want) != 0)
		err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
			       "dispute evidence: the answer 'stands' has the line "
			       "'%.100s', not the one its stored decision and its "
			       "reasons' accuracy give, '%.150s'", line, want);
	free(want);
	return err;
}

/*
 * v3: the policy has statements, each principal reason's is the one the
 * policy gives its column and value (null when none), and
 * statements_missing counts the nulls.
 */
static int
check_v3_statements(const struct rba_json_value *ex, const struct policy *pol,
		    struct rba_detail *d)
{
	const struct rba_json_value *top = rba_json_get(ex, "principal_reasons");
	const struct rba_json_value *miss = rba_json_get(ex, "statements_missing");
	double nmiss = 0;

	if (rba_json_get(ex, "ok") == NULL || rba_json_get(ex, "ok")->type != RBA_JSON_TRUE)
		return bad(d, "reason statements without reasons");
	if (pol == NULL || pol->nstatements == 0)
		return bad(d, "reason statements, but the policy in the file has none");
	for (size_t i = 0; top != NULL && top->type == RBA_JSON_ARRAY && i < top->n; i++) {
		const struct rba_json_value *it = &top->items[i];
		const struct rba_json_value *st = rba_json_get(it, "statement");
		const char *col = rba_json_get_str(it, "column");
		const char *val = rba_json_get_str(it, "value");
		const char *want = col != NULL ? policy_statement(pol, col, val) : NULL;

		if (st == NULL || (st->type != RBA_JSON_STRING && st->type != RBA_JSON_NULL))
			return bad(d, "a principal reason's statement is not a string or null");
		if (want == NULL ? st->type != RBA_JSON_NULL
				 : st->type != RBA_JSON_STRING || strcmp(st->str, want) != 0 ||
					   strlen(want) != st->len)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "dispute evidence: "
					"principal reason %zu: the statement is not the "
					"one the policy gives column '%s'", i + 1,
					col != NULL ? col : "?");
		nmiss += want == NULL;
	}
	if (miss == NULL || miss->type != RBA_JSON_NUMBER || miss->num != nmiss)
		return bad(d, "statements_missing is not the count of principal reasons "
			      "without a statement");
	return 0;
}

/* Whether member key of o is the string s. */
static int
str_is(const struct rba_json_value *o, const char *key, const char *s)
{
	const struct rba_json_value *v = rba_json_get(o, key);

	return v != NULL && v->type == RBA_JSON_STRING && strlen(s) == v->len &&
	       memcmp(v->str, s, v->len) == 0;
}

/* A member that is an integer in [0, max]: its value, or -1. */
static double
int_of(const struct rba_json_value *o, const char *key, double max)
{
	uint64_t v;

	return count_of(o, key, max, &v) ? (double)v : -1.0;
}

/* The members of a dispute statement its checks read, and its format. */
struct dispute_stmt {
	const struct rba_json_value *root, *pred, *dp, *subj, *reasons, *ex;
	const char *v, *c;		/* version and case */
	const char *ans, *line;		/* the answer and its line */
	const char *sd, *rd;		/* stored and rebuilt decision */
	const char *verdict;		/* the standing's */
	const char *dec;		/* the decisions' artifact */
	const char *schema;
	int ver, v2;
};

static void
dispute_stmt_read(struct dispute_stmt *ds, const struct rba_json_value *root,
		  int ver)
{
	ds->root = root;
	ds->ver = ver;
	ds->v2 = ver >= 2;
	ds->pred = rba_json_get(root, "predicate");
	ds->dp = rba_json_get(ds->pred, "dispute");
	ds->ex = rba_json_get(ds->dp, "explanation");
	ds->subj = rba_json_get(root, "subject");
	ds->schema = rba_json_get_str(ds->dp, "schema");
	ds->v = rba_json_get_str(ds->dp, "version");
	ds->c = rba_json_get_str(ds->dp, "case");
	ds->ans = rba_json_get_str(ds->dp, "answer");
	ds->line = rba_json_get_str(ds->dp, "answer_line");
	ds->sd = rba_json_get_str(rba_json_get(ds->dp, "stored"), "decision");
	ds->rd = rba_json_get_str(rba_json_get(ds->dp, "rebuilt"), "decision");
	ds->verdict = rba_json_get_str(rba_json_get(ds->dp, "standing"), "verdict");
	ds->dec = rba_json_get_str(rba_json_get(ds->dp, "digests"),
				   "artifact_decisions");
	ds->reasons = rba_json_get(ds->dp, "reasons");
}


/*
 * The members every check reads, the schema of the predicate type, and
 * the subject: the artifact that made the decision.
 */
static int
check_dispute_form(const struct dispute_stmt *ds, struct rba_detail *d)
{
	char want[1024], hex[RBA_DIGEST_TEXT_LEN + 1];
	const char *sha;

	if (strcmp(rba_json_get_str(ds->root, "_type")
			   ? rba_json_get_str(ds->root, "_type") : "",
		   "https://in-toto.io/Statement/v1") != 0 ||
	    ds->v == NULL || ds->c == NULL || ds->ans == NULL ||
	    ds->line == NULL || ds->sd == NULL ||
	    ds->verdict == NULL || ds->dec == NULL || ds->reasons == NULL ||
	    ds->reasons->type != RBA_JSON_ARRAY || ds->subj == NULL ||
	    ds->subj->type != RBA_JSON_ARRAY || ds->subj->n != 1 ||
	    rba_json_get(ds->pred, "history") == NULL ||
	    rba_json_get(ds->dp, "inputs") == NULL) {
		return bad(d, "the statement lacks a member");
	}
	if (ds->schema == NULL ||
	    strcmp(ds->schema, ds->ver == 4   ? DISPUTE_SCHEMA_V4
			       : ds->ver == 3 ? DISPUTE_SCHEMA_V3
			       : ds->v2	      ? DISPUTE_SCHEMA
					      : DISPUTE_SCHEMA_V1) != 0)
		return bad(d, "the dispute's schema is not the predicate type's");
	sha = rba_json_get_str(rba_json_get(&ds->subj->items[0], "digest"),
			       "sha256");
	snprintf(hex, sizeof(hex), "sha256:%s", sha ? sha : "");
	snprintf(want, sizeof(want), "%s.artifact", ds->v);
	if (strcmp(hex, ds->dec) != 0 ||
	    strcmp(rba_json_get_str(&ds->subj->items[0], "name")
			   ? rba_json_get_str(&ds->subj->items[0], "name") : "",
		   want) != 0)
		return bad(d, "the subject is not the artifact that made the "
			      "decision");
	return 0;
}

/* The answer agrees with the decisions and the standing. */
static int
check_answer(const struct dispute_stmt *ds, struct rba_detail *d)
{
	int err;

	if (strcmp(ds->ans, "stands") == 0) {
		if ((err = check_stands_reasons(ds->ex, d)) != 0 ||
		    (err = check_stands_line(ds->dp, ds->v2, ds->line, ds->sd, d)) != 0)
			return err;
		if (ds->rd == NULL || strcmp(ds->rd, ds->sd) != 0 ||
		    strcmp(ds->verdict, "not-reproducible") == 0 ||
		    strcmp(ds->verdict, "not-measured") == 0 || ds->reasons->n != 0)
			return bad(d, "the answer 'stands' disagrees with the "
				      "decisions or the standing");
	} else if (strcmp(ds->ans, "escalate") == 0) {
		if (ds->reasons->n == 0 ||
		    ds->reasons->items[0].type != RBA_JSON_STRING ||
		    strncmp(ds->line, "escalate: ", 10) != 0 ||
		    strcmp(ds->line + 10, ds->reasons->items[0].str) != 0)
			return bad(d, "the answer 'escalate' disagrees with its "
				      "reasons");
	} else {
		return bad(d, "the answer is neither 'stands' nor 'escalate'");
	}
	return 0;
}

/* The trusted comment names this dispute. */
static int
check_dispute_comment(const struct dispute_stmt *ds, const char *tc,
		      int claims, struct rba_detail *d)
{
	char want[1024];

	if (tc != NULL && claims) {
		snprintf(want, sizeof(want), DISPUTE_COMMENT_PREFIX "version %s case %s "
			 "answer %s", ds->v, ds->c, ds->ans);
		for (char *q = want; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
		if (strcmp(tc, want) != 0)
			return bad(d, "the trusted comment names another dispute");
	} else if (tc != NULL) {
		/* (NULL: a statement signed as a whole, a DSSE envelope) */
		return bad(d, "the trusted comment does not name the dispute");
	}
	return 0;
}

/*
 * v4: the levels unseen in training (doc/design.md section 8.4).  The
 * policy's statements are there exactly when the policy has some; the
 * reasons were computed, by TreeSHAP (only a forest of ours has native
 * columns); "unseen" names at least one column, each a contribution's
 * column and value (so the case's input, check_quoted_values), in the
 * contributions' order, once; and where it went adds up: it went right
 * when its path met a split on the column and nowhere (null) when not,
 * the trees whose path met one are at most the splits, the forest's
 * trees and the splits' count over the depth a path can have, and every
 * entry names the same forest size.  What the file cannot show (that
 * the artifact has no such level, and the paths themselves) is
 * dispute_evidence_unchecked's.
 */
static int
check_v4_unseen(const struct rba_json_value *ex, const struct policy *pol,
		struct rba_detail *d)
{
	const struct rba_json_value *un = rba_json_get(ex, "unseen");
	const struct rba_json_value *cs = rba_json_get(ex, "contributions");
	const char *m = rba_json_get_str(ex, "method");
	double forest = -1.0;
	size_t at = 0, j;

	if ((rba_json_get(ex, "statements_missing") != NULL) !=
	    (pol != NULL && pol->nstatements > 0))
		return bad(d, "the reason statements are not there exactly when the "
			      "policy in the file has some");
	if (boolean(ex, "ok") != 1)
		return bad(d, "levels unseen in training without reasons");
	if (m == NULL || strcmp(m, "treeshap") != 0)
		return bad(d, "levels unseen in training in reasons that are not "
			      "TreeSHAP's (only a forest has native categorical "
			      "columns)");
	if (un == NULL || un->type != RBA_JSON_ARRAY || un->n == 0 || cs == NULL ||
	    cs->type != RBA_JSON_ARRAY)
		return bad(d, "'unseen' is not a list of at least one level");
	for (size_t i = 0; i < un->n; i++) {
		const struct rba_json_value *u = &un->items[i];
		const struct rba_json_value *went = rba_json_get(u, "went");
		const char *col = rba_json_get_str(u, "column");
		const char *val = rba_json_get_str(u, "value");
		double splits = int_of(u, "splits", 9007199254740992.0);
		double trees = int_of(u, "trees", REBUILD_GBDT_MAX_TREES);
		double ft = int_of(u, "forest_trees", REBUILD_GBDT_MAX_TREES);

		if (col == NULL || val == NULL)
			return bad(d, "an unseen level lacks its column or value");
		/* the contributions' order: after the previous entry's */
		j = at;
		while (j < cs->n && !str_is(&cs->items[j], "column", col))
			j++;
		if (j == cs->n)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "dispute evidence: "
					"the unseen level of '%.100s' is not a "
					"contribution's column after the previous "
					"one's", col);
		at = j + 1;
		if (!str_is(&cs->items[j], "value", val))
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "dispute evidence: "
					"the unseen level '%.60s' of '%.100s' is not the "
					"case's value of that column", val, col);
		if (splits < 0 || trees < 0 || ft < 1 || (forest >= 0 && ft != forest))
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "dispute evidence: "
					"where the unseen level of '%.100s' went is not "
					"counts of splits and trees of one forest", col);
		forest = ft;
		if (trees > ft || trees > splits || (splits > 0) != (trees > 0) ||
		    splits > trees * REBUILD_GBDT_MAX_DEPTH)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "dispute evidence: "
					"the unseen level of '%.100s' met %.0f splits "
					"in %.0f of %.0f trees, which no forest's paths "
					"give", col, splits, trees, ft);
		if (splits > 0 ? went == NULL || went->type != RBA_JSON_STRING ||
					 strcmp(went->str, "right") != 0
			       : went == NULL || went->type != RBA_JSON_NULL)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "dispute evidence: "
					"the unseen level of '%.100s' %s", col,
					splits > 0 ? "met splits on its path but did not go "
						     "right, as such a level does"
						   : "met no split on its path but is "
						     "said to have gone somewhere");
	}
	return 0;
}

int
dispute_evidence_check(const void *p, size_t n, const char *tc, int *is_dispute,
		       char *version, char *case_id, char *answer,
		       struct rba_detail *d)
{
	struct rba_json_value root;
	struct dispute_stmt ds;
	const char *pt;
	int claims = tc != NULL && strncmp(tc, DISPUTE_COMMENT_PREFIX,
					   strlen(DISPUTE_COMMENT_PREFIX)) == 0;
	struct policy *pol = NULL;
	struct rba_detail jd;
	int err, ver;

	*is_dispute = 0;
	rba_detail_clear(&jd);
	if (rba_json_parse(p, n, &root, &jd) != 0) {
		/* (the parser's reason: a key given twice among them) */
		char why[sizeof(jd.reason) + 32];
		snprintf(why, sizeof(why), "not JSON (byte %lu: %s)", jd.col,
			 jd.reason);
		if (claims)
			return bad(d, why);
		return 0;
	}
	pt = rba_json_get_str(&root, "predicateType");
	if (pt == NULL || strncmp(pt, DISPUTE_PREDICATE_PREFIX,
				  strlen(DISPUTE_PREDICATE_PREFIX)) != 0) {
		rba_json_release(&root);
		return claims ? bad(d, "the trusted comment claims dispute evidence, "
				       "but the predicate is not one") : 0;
	}
	*is_dispute = 1;
	err = RBA_E_SCHEMA;
	ver = strcmp(pt, DISPUTE_PREDICATE_TYPE_V4) == 0   ? 4
	      : strcmp(pt, DISPUTE_PREDICATE_TYPE_V3) == 0 ? 3
	      : strcmp(pt, DISPUTE_PREDICATE_TYPE) == 0  ? 2
	      : strcmp(pt, DISPUTE_PREDICATE_TYPE_V1) == 0 ? 1 : 0;
	if (ver == 0) {
		rba_fail(d, RBA_E_NEWER, NULL, 0, 0,
			 "dispute evidence of a later format ('%s')", pt);
		err = RBA_E_NEWER;
		goto out;
	}
	if ((err = check_members(&root, ver, d)) != 0)
		goto out;
	dispute_stmt_read(&ds, &root, ver);
	if ((err = check_dispute_form(&ds, d)) != 0 ||
	    (err = check_answer(&ds, d)) != 0)
		goto out;
	if ((err = check_quoted_values(ds.dp, d)) != 0 ||
	    (ds.v2 && ((err = check_v2_policy(ds.dp, &pol, d)) != 0 ||
		       (err = check_v2_decisions(ds.dp, pol, d)) != 0)) ||
	    (err = check_explanation(ds.ex, ds.v2, d)) != 0)
		goto out;
	if ((!ds.v2 || strcmp(rba_json_get_str(ds.ex, "accuracy")
				      ? rba_json_get_str(ds.ex, "accuracy") : "",
			      "approximate") != 0) &&
	    (err = check_exact_players(ds.ex, d)) != 0)
		goto out;
	if (ds.v2 && (err = check_v2_reasons(ds.dp, d)) != 0)
		goto out;
	if ((ver == 3 ||
	     (ver == 4 && rba_json_get(ds.ex, "statements_missing") != NULL)) &&
	    (err = check_v3_statements(ds.ex, pol, d)) != 0)
		goto out;
	if (ver == 4 && (err = check_v4_unseen(ds.ex, pol, d)) != 0)
		goto out;
	if ((err = check_dispute_comment(&ds, tc, claims, d)) != 0)
		goto out;
	if (version != NULL)
		snprintf(version, 256, "%s", ds.v);
	if (case_id != NULL)
		snprintf(case_id, 256, "%s", ds.c);
	if (answer != NULL)
		snprintf(answer, 256, "%s", ds.line);
	err = 0;
out:
	policy_free(pol);
	rba_json_release(&root);
	return err;
}

const char *
dispute_evidence_unchecked(const void *p, size_t n, int artifact_checked)
{
	struct rba_json_value root;
	const char *pt, *m, *out = NULL;

	if (rba_json_parse(p, n, &root, NULL) != 0)
		return NULL;
	pt = rba_json_get_str(&root, "predicateType");
	m = rba_json_get_str(rba_json_get(rba_json_get(rba_json_get(&root, "predicate"),
						       "dispute"), "explanation"),
			     "method");
	if (pt != NULL && strcmp(pt, DISPUTE_PREDICATE_TYPE_V4) == 0 &&
	    !artifact_checked)
		out = "that each level named unseen in training is none of the "
		      "artifact's levels, and where it went on the case's path: the "
		      "file holds neither the artifact's level lists nor its trees "
		      "(verify --artifact checks both)";
	if (pt != NULL && strcmp(pt, DISPUTE_PREDICATE_TYPE_V1) == 0)
		out = m != NULL && strcmp(m, "shapley") == 0
			      ? "the decisions against their scores and the policy, "
				"the principal reasons against the count asked for, and "
				"whether the Shapley values are exact: dispute evidence "
				"v1 holds neither the policy nor the reasons' accuracy"
			      : "the decisions against their scores and the policy, "
				"and the principal reasons against the count asked for: "
				"dispute evidence v1 holds neither the policy nor that "
				"count";
	rba_json_release(&root);
	return out;
}

/* The unseen level's entry of column col in list un, or NULL. */
static const struct rba_json_value *
unseen_entry(const struct rba_json_value *un, const char *col)
{
	for (size_t i = 0; un != NULL && un->type == RBA_JSON_ARRAY && i < un->n; i++)
		if (str_is(&un->items[i], "column", col))
			return &un->items[i];
	return NULL;
}

/* The check of the unseen levels against the decoded artifact a (its
 * bytes' digest already the explanation's). */
static int
check_unseen_against(const struct rba_json_value *dp, const struct artifact *a,
		     struct rba_detail *d)
{
	const struct encode_spec *s = &a->spec;
	const struct rba_json_value *ex = rba_json_get(dp, "explanation");
	const struct rba_json_value *in = rba_json_get(dp, "inputs");
	const struct rba_json_value *un = rba_json_get(ex, "unseen");
	uint32_t n = s->ncolumns ? s->ncolumns : 1, nunseen = 0, listed = 0;
	const char **vals = calloc(n, sizeof(char *));
	uint32_t *splits = calloc(n, sizeof(uint32_t));
	uint32_t *trees = calloc(n, sizeof(uint32_t));
	float *raw = calloc(s->nfeatures ? s->nfeatures : 1, sizeof(float));
	struct rba_detail ed;
	char *why = NULL;
	int err = 0;

#define FAIL(...) do { err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, \
				     "dispute evidence: " __VA_ARGS__); goto out; } while (0)
	if (vals == NULL || splits == NULL || trees == NULL || raw == NULL) {
		err = rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s", rba_strerror(RBA_E_NOMEM));
		goto out;
	}
	for (uint32_t k = 0; k < s->ncolumns; k++)
		if ((vals[k] = rba_json_get_str(in, s->columns[k].name)) == NULL)
			FAIL("the case's inputs lack the artifact's input column '%.100s'",
			     s->columns[k].name);
	rba_detail_clear(&ed);
	if ((err = encode_values(s, vals, raw, &ed)) != 0) {
		if (err == RBA_E_NOMEM)
			goto out;
		FAIL("the case's inputs do not encode with the artifact: %.300s",
		     ed.reason);
	}
	if ((err = dispute_unseen_paths(a, vals, raw, splits, trees, &nunseen,
					&why)) != 0)
		goto out;
	if (why != NULL)
		FAIL("%.400s", why);
	for (uint32_t k = 0; k < s->ncolumns; k++) {
		const struct encode_column *c = &s->columns[k];
		const struct rba_json_value *u = unseen_entry(un, c->name);
		int is_unseen = c->kind == ENCODE_NATIVE &&
				encode_level_index(c, vals[k]) < 0;

		if (u == NULL && is_unseen)
			FAIL("the level '%.60s' of column '%.100s' is none of the "
			     "artifact's levels, but the evidence does not say where "
			     "it went", vals[k], c->name);
		if (u == NULL)
			continue;
		listed++;
		if (c->kind != ENCODE_NATIVE)
			FAIL("the evidence says a level of column '%.100s' is unseen "
			     "in training, but the artifact takes that column %s",
			     c->name, c->kind == ENCODE_NUMERIC ? "as a number"
								 : "one-hot");
		if (!is_unseen)
			FAIL("the evidence says the level '%.60s' of column '%.100s' "
			     "is unseen in training, but the artifact's level list has "
			     "it", vals[k], c->name);
		if (rba_json_get_num(u, "splits", -1) != (double)splits[k] ||
		    rba_json_get_num(u, "trees", -1) != (double)trees[k] ||
		    rba_json_get_num(u, "forest_trees", -1) !=
			    (double)a->model.forest.ntrees)
			FAIL("the unseen level of column '%.100s' met %u splits on its "
			     "path in %u of the artifact's %u trees, not what the "
			     "evidence says", c->name, splits[k], trees[k],
			     a->model.forest.ntrees);
	}
	if (un != NULL && un->type == RBA_JSON_ARRAY && listed != un->n)
		FAIL("the evidence names an unseen level of a column the artifact "
		     "does not take");
#undef FAIL
out:
	free(why);
	free(vals);
	free(splits);
	free(trees);
	free(raw);
	return err;
}

int
dispute_evidence_check_artifact(const void *p, size_t n, const void *art,
				size_t an, struct rba_detail *d)
{
	struct rba_json_value root;
	const struct rba_json_value *dp, *ex;
	struct rba_digest got, want;
	struct artifact a;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	const char *ws;
	int err;

	rba_detail_clear(d);
	if (rba_json_parse(p, n, &root, NULL) != 0)
		return bad(d, "not JSON");
	dp = rba_json_get(rba_json_get(&root, "predicate"), "dispute");
	ex = rba_json_get(dp, "explanation");
	ws = rba_json_get_str(ex, "artifact");
	rba_digest_bytes(art, an, &got);
	rba_digest_format(&got, hex);
	if (boolean(ex, "ok") != 1 || ws == NULL || rba_digest_parse(ws, &want) != 0) {
		err = rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0, "the evidence has no "
			       "reasons, so no artifact they came from to check");
		goto out;
	}
	if (!rba_digest_equal(&got, &want)) {
		err = rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "the artifact is %s, not %s, "
			       "the one the reasons came from", hex, ws);
		goto out;
	}
	memset(&a, 0, sizeof(a));
	if ((err = artifact_decode(art, an, &a, d)) != 0)
		goto out;
	err = check_unseen_against(dp, &a, d);
	artifact_release(&a);
out:
	rba_json_release(&root);
	return err;
}

int
dispute_evidence_export(const struct dispute_report *r,
			const struct sign_seckey *key, const char *path,
			struct rba_detail *d)
{
	struct rba_buf doc, sig;
	char tc[SIGN_TRUSTED_COMMENT_MAX + 1];
	int err, is;

	rba_buf_init(&doc);
	rba_buf_init(&sig);
	rba_detail_clear(d);
	dispute_evidence_render(r, &doc);
	if ((err = rba_buf_status(&doc)) != 0)
		goto out;
	if ((err = dispute_evidence_comment(r, tc, sizeof(tc))) != 0) {
		rba_fail(d, err, NULL, 0, 0, "the version and case do not fit in a "
			 "trusted comment");
		goto out;
	}
	if ((err = dispute_evidence_check(doc.p, doc.len, tc, &is, NULL, NULL, NULL,
					  d)) != 0)
		goto out;
	if ((err = sign_file_sign(key, doc.p, doc.len, NULL, tc, &sig, d)) != 0)
		goto out;
	err = evidence_write(path, doc.p, doc.len, sig.p, sig.len, 0, d);
out:
	rba_buf_release(&doc);
	rba_buf_release(&sig);
	return err;
}
