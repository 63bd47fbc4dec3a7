/*
 * dispute.c - one disputed decision: the case's story and one answer.
 */
#include "audit/dispute.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/inputs.h"
#include "audit/record.h"
#include "common/rbatime.h"
#include "common/strv.h"
#include "common/json.h"
#include "sample/scorer.h"
#include "train/envrec.h"
#include "model/explain.h"
#include "model/xgboost.h"

static void
dispute_explanation_release(struct dispute_explanation *e)
{
	free(e->error);
	free(e->source);
	free(e->class_name);
	free(e->space);
	for (uint32_t i = 0; i < e->ncols; i++) {
		if (e->cols != NULL)
			free(e->cols[i]);
		if (e->values != NULL)
			free(e->values[i]);
	}
	free(e->cols);
	free(e->values);
	free(e->missing);
	free(e->unseen);
	free(e->unseen_splits);
	free(e->unseen_trees);
	free(e->contrib);
	free(e->top);
	for (uint32_t i = 0; e->statements != NULL && i < e->ncols; i++)
		free(e->statements[i]);
	free(e->statements);
	memset(e, 0, sizeof(*e));
}

void
dispute_report_release(struct dispute_report *r)
{
	if (r == NULL)
		return;
	free(r->version);
	free(r->case_id);
	free(r->answer_line);
	free(r->contradiction);
	for (size_t i = 0; i < r->nreasons; i++)
		free(r->reasons[i]);
	free(r->reasons);
	for (uint32_t i = 0; i < r->ncols; i++) {
		if (r->names != NULL)
			free(r->names[i]);
		if (r->values != NULL)
			free(r->values[i]);
	}
	free(r->names);
	free(r->values);
	for (uint32_t i = 0; r->classes != NULL && i < r->nclasses; i++)
		free(r->classes[i]);
	free(r->classes);
	free(r->stored_probs);
	free(r->rebuilt_probs);
	free(r->stored_decision);
	free(r->rebuilt_decision);
	free(r->verdict_basis);
	free(r->rebuild_why);
	free(r->policy_text);
	dispute_explanation_release(&r->why);
	memset(r, 0, sizeof(*r));
}

static void
reason(struct dispute_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
reason(struct dispute_report *r, const char *fmt, ...)
{
	char buf[768], **v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v = realloc(r->reasons, (r->nreasons + 1) * sizeof(char *));
	if (v == NULL)
		return;
	r->reasons = v;
	if ((v[r->nreasons] = strdup(buf)) != NULL)
		r->nreasons++;
}

struct find_audit {
	const struct rba_digest *rebuilt, *policy, *sample;
	int found;
	uint64_t id;
	int64_t time;
	int verdict;
	char first_reason[384];
};

/* Whether s, a digest's text (NULL: none), is want. */
static int
digest_is(const char *s, const struct rba_digest *want)
{
	struct rba_digest got;

	return s != NULL && rba_digest_parse(s, &got) == 0 &&
	       rba_digest_equal(&got, want);
}

char *
dispute_contradiction(double score, const char *policy_says, const char *stored)
{
	char buf[512], sv[32];

	rba_json_fmt_double(score, sv);
	snprintf(buf, sizeof(buf), "the stored score %s gives '%s' under the "
		 "policy in force, but the stored decision is '%s'", sv,
		 policy_says, stored);
	return strdup(buf);
}

static int
find_one(void *ctx, const struct store_history_entry *e)
{
	struct find_audit *f = ctx;
	struct rba_json_value root;
	struct audit_record rec;
	struct rba_detail d;
	int v = 0;

	if (rba_json_parse((const char *)e->record, e->len, &root, NULL) != 0)
		return 0;
	/* a record that does not decode is no standing */
	rba_detail_clear(&d);
	if (audit_record_decode(&root, "the audit record", &rec, &d) == 0) {
		if (strcmp(rec.verdict, "bit-identical") == 0)
			v = AUDIT_BIT_IDENTICAL;
		else if (strcmp(rec.verdict, "metric-equivalent") == 0)
			v = AUDIT_METRIC_EQUIVALENT;
		else if (strcmp(rec.verdict, "not-reproducible") == 0)
			v = AUDIT_NOT_REPRODUCIBLE;
	}
	if (v != 0 && digest_is(rec.digests.artifact_rebuilt, f->rebuilt) &&
	    digest_is(rec.digests.policy, f->policy) &&
	    digest_is(rec.digests.sample, f->sample)) {
		f->found = 1;
		f->id = e->id;
		f->time = e->time;
		f->verdict = v;
		/* The most telling reason: past the digest line when there
		 * is more. */
		for (size_t i = 0; i < rec.reasons.n; i++) {
			const char *it = rec.reasons.v[i];
			snprintf(f->first_reason, sizeof(f->first_reason), "%s", it);
			if (strncmp(it, "the rebuilt artifact ", 21) != 0)
				break;
		}
	}
	audit_record_release(&rec);
	rba_json_release(&root);
	return f->found ? 1 : 0;
}

static char *
utc(int64_t t)
{
	char out[RBA_TIME_TEXT_MAX];

	rba_time_utc(t, out);
	return strdup(out);
}

/* The case's inputs, scores and stored decision into r. */
static int
take_case(struct dispute_report *r, const struct sample_layout *l,
	  const struct sample_chunk *c, uint32_t i)
{
	char tmp[32];

	r->ncols = l->ncols;
	r->names = calloc(l->ncols, sizeof(char *));
	r->values = calloc(l->ncols, sizeof(char *));
	if (r->names == NULL || r->values == NULL)
		return RBA_E_NOMEM;
	for (uint32_t k = 0; k < l->ncols; k++) {
		r->names[k] = strdup(l->names[k]);
		r->values[k] = strdup(sample_chunk_text(c, k, i, tmp));
		if (r->names[k] == NULL || r->values[k] == NULL)
			return RBA_E_NOMEM;
	}
	r->scored_by = l->scored_by;
	r->stored_decision = strdup(c->decisions[c->decision_codes[i]]);
	if (r->stored_decision == NULL)
		return RBA_E_NOMEM;
	return 0;
}

/* ---- the proof that makes a retrain unnecessary (doc/design.md section 8) */

struct find_proof {
	const struct audit_inputs *c;
	const struct rba_digest *decisions;
	const char *env_now; /* hex digest of the environment record now */
	int seen, ok;
	uint64_t id;
	char why[256]; /* when not ok */
};

static int
proof_one(void *ctx, const struct store_history_entry *e)
{
	struct find_proof *f = ctx;
	struct rba_json_value root;
	struct audit_record rec;
	struct rba_detail d;
	const char *verdict, *s, *rev_now;
	struct rba_digest config;
	uint32_t abi_pinned = f->c->pins->trainer_abi ? f->c->pins->trainer_abi
						       : f->c->stored.abi;
	int err;

	if (rba_json_parse((const char *)e->record, e->len, &root, NULL) != 0)
		return 0;
	rba_detail_clear(&d);
	err = audit_record_decode(&root, "it does not read back", &rec, &d);
	if (rec.schema == NULL || strcmp(rec.schema, AUDIT_RECORD_SCHEMA) != 0) {
		audit_record_release(&rec);
		rba_json_release(&root);
		return 0;
	}
	/* The latest audit record alone decides. */
	f->seen = 1;
	f->id = e->id;
	verdict = rec.verdict;
	policy_pins_config_hash(f->c->pins, &config);
	/* An exec version's code is its pinned commit, not this tool. */
	rev_now = rebuild_trainer_kind(f->c->pins)->code_revision(f->c->pins);
#define WHY(...) snprintf(f->why, sizeof(f->why), __VA_ARGS__)
	if (err != 0)
		WHY("%.250s", d.reason);
	else if (verdict == NULL || strcmp(verdict, "bit-identical") != 0)
		WHY("its verdict is %s", verdict ? verdict : "missing");
	else if (!digest_is(rec.digests.artifact_pinned, &f->c->v.artifact) ||
		 !digest_is(rec.digests.artifact_rebuilt, &f->c->v.artifact))
		WHY("it rebuilt another artifact than the pinned one");
	else if (!rba_digest_equal(f->decisions, &f->c->v.artifact) ||
		 !digest_is(rec.digests.artifact_decisions, f->decisions))
		WHY("the stored decisions were not made by the pinned artifact");
	else if (!digest_is(rec.digests.config, &config) ||
		 !digest_is(rec.digests.snapshot, &f->c->v.snapshot))
		WHY("the pins changed since");
	else if ((s = rec.links.code_revision.current) == NULL ||
		 strcmp(s, rev_now) != 0)
		WHY("the code revision changed since (%.64s, now %.64s)",
		    s ? s : "unknown", rev_now);
	else if (rec.links.trainer_abi.rebuilt != abi_pinned)
		WHY("its rebuild used another trainer ABI");
	else if ((s = rec.links.environment.current) == NULL ||
		 strcmp(s, f->env_now) != 0)
		WHY("the environment record changed since");
	else
		f->ok = 1;
#undef WHY
	audit_record_release(&rec);
	rba_json_release(&root);
	return 1;
}

/* The hex digest of this process's environment record for the pins. */
static int
env_now(const struct pins *p, char out[RBA_DIGEST_TEXT_LEN + 1])
{
	struct rba_buf b;
	struct rba_digest dg;
	int err;

	rba_buf_init(&b);
	err = rebuild_trainer_kind(p)->envrec(p, &b, NULL);
	if (err == 0)
		err = rba_buf_status(&b);
	if (err == 0) {
		envrec_digest((const char *)b.p, b.len, &dg);
		rba_digest_format(&dg, out);
	}
	rba_buf_release(&b);
	return err;
}

/* ---- reasons ----------------------------------------------------------- */

/*
 * Which way is toward the decision on the explained margin.  Argmax:
 * up (the decided class's margin).  Bands (a higher score is toward the
 * higher bands): the highest band up, the lowest down; a band between
 * them up when the baseline's score lies below it, down when above it,
 * and by magnitude (0) when the baseline lies in it too.
 */
int
dispute_direction(const struct policy *pol, double score, double baseline)
{
	size_t i = 0;
	double pb, lo, hi;

	if (pol->argmax)
		return 1;
	if (pol->nbands < 2 || isnan(score))
		return 0;
	while (i + 1 < pol->nbands && pol->bands[i].has_below &&
	       !(score < pol->bands[i].below))
		i++;
	if (i + 1 == pol->nbands)
		return 1;
	if (i == 0)
		return -1;
	pb = 1.0 / (1.0 + exp(-baseline));
	lo = pol->bands[i - 1].below;
	hi = pol->bands[i].below;
	return pb < lo ? 1 : pb >= hi ? -1 : 0;
}

/* Principal reasons first: the largest push toward the decision, ties
 * to the earlier column. */
static void
sort_top(uint32_t *idx, uint32_t n, const double *v, int dir)
{
	for (uint32_t i = 1; i < n; i++) {
		uint32_t t = idx[i], j = i;
		double kt = dir ? dir * v[t] : fabs(v[t]);
		while (j > 0) {
			double kj = dir ? dir * v[idx[j - 1]] : fabs(v[idx[j - 1]]);
			if (kj >= kt)
				break;
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = t;
	}
}

void
dispute_top_reasons(const double *contrib, uint32_t n, int dir,
		    uint32_t nasked, uint32_t *top, uint32_t *ntop)
{
	*ntop = 0;
	for (uint32_t k = 0; k < n; k++)
		/* a principal reason pushes toward the decision */
		if (dir ? dir * contrib[k] > 0.0 : contrib[k] != 0.0)
			top[(*ntop)++] = k;
	sort_top(top, *ntop, contrib, dir);
	if (*ntop > nasked)
		*ntop = nasked;
}

void
dispute_bound_text(double bound, char out[32])
{
	char x[1024];
	int m, e, rest = 0;

	if (!isfinite(bound) || !(bound > 0.0)) {
		snprintf(out, 32, "%g", bound);
		return;
	}
	/* Every digit of the bound (glibc prints a double's exact decimal
	 * expansion), then its first two digits rounded up: the ceiling. */
	snprintf(x, sizeof(x), "%.800e", bound);
	m = (x[0] - '0') * 10 + (x[2] - '0');
	for (const char *p = x + 3; *p != 'e' && *p != '\0'; p++)
		rest |= *p != '0';
	e = atoi(strchr(x, 'e') + 1) - 1; /* the bound is m.rest x 10^e */
	if (rest && ++m == 100) {
		m = 10;
		e++;
	}
	snprintf(x, sizeof(x), "%de%d", m, e);
	/* %.2g of the double nearest a two-digit decimal prints that decimal */
	snprintf(out, 32, "%.2g", strtod(x, NULL));
}

char *
dispute_stands_line(const char *decision, int exact, double bound)
{
	char b[32];

	if (exact)
		return rba_strdupf("the disputed %s stands", decision);
	dispute_bound_text(bound, b);
	return rba_strdupf("the disputed %s stands (not exact: approximate Shapley values, "
		    "error bound %s per contribution)", decision, b);
}

/* The class whose margin is explained: the positive one under bands,
 * the decided one under argmax; UINT32_MAX when there is none. */
static uint32_t
explain_class(const struct dispute_report *r, const struct encode_spec *s,
	      const struct policy *pol)
{
	uint32_t cls = UINT32_MAX;

	if (!pol->argmax)
		return s->positive;
	for (uint32_t k = 0; k < s->nclasses; k++)
		if (strcmp(s->classes[k], r->stored_decision) == 0)
			cls = k;
	return cls;
}

/* The case's text for each of the model's input columns (vals) and its
 * encoding (raw); -1 with e->error set when the case cannot be. */
static int
explain_encode(const struct dispute_report *r, const struct encode_spec *s,
	       const char **vals, float *raw, struct dispute_explanation *e)
{
	struct rba_detail d;

	rba_detail_clear(&d);
	for (uint32_t k = 0; k < s->ncolumns; k++) {
		for (uint32_t j = 0; j < r->ncols; j++)
			if (strcmp(r->names[j], s->columns[k].name) == 0)
				vals[k] = r->values[j];
		if (vals[k] == NULL) {
			e->error = rba_strdupf("the case lacks input column '%s'",
					s->columns[k].name);
			return -1;
		}
	}
	if (encode_values(s, vals, raw, &d) != 0) {
		e->error = rba_strdupf("the case cannot be encoded: %s", d.reason);
		return -1;
	}
	return 0;
}

/*
 * The score this margin stands for, as a model computed it: the stored
 * one when the sample's scores are the deciding model's and these are
 * its reasons; else the rescoring's, when a is the artifact that
 * rescored.  A score logged by production (--score-column) is the
 * policy's input, not a model's output: nothing for the margin to give
 * exactly.
 */
static void
explain_score_check(struct dispute_explanation *e,
		    const struct dispute_report *r, double margin, int is_maker,
		    int rescored)
{
	if (is_maker && r->scored_by == SAMPLE_SCORED_MODEL) {
		e->score = r->stored_score;
		e->score_of = "stored";
	} else if (rescored) {
		e->score = r->rebuilt_score;
		e->score_of = is_maker ? "rescored" : "rebuilt";
	}
	if (e->score_of != NULL) {
		e->has_score_check = 1;
		e->score_prob = 1.0 / (1.0 + exp(-margin));
		e->score_ok = fabs(e->score_prob - e->score) <= DISPUTE_SCORE_TOLERANCE;
	}
}

/* Every column's contribution, and the principal reasons: those that
 * push toward the decision, the largest first, nreasons at most. */
static int
explain_contributions(struct dispute_explanation *e,
		      const struct encode_spec *s, const char **vals,
		      const struct explain_result *x, uint32_t nreasons)
{
	e->accuracy = x->accuracy;
	e->error_bound = x->accuracy == EXPLAIN_APPROXIMATE ? x->max_bound : 0.0;
	e->samples = x->accuracy == EXPLAIN_APPROXIMATE ? x->samples : 0;
	e->ncols = s->ncolumns;
	e->cols = calloc(e->ncols ? e->ncols : 1, sizeof(char *));
	e->values = calloc(e->ncols ? e->ncols : 1, sizeof(char *));
	e->contrib = calloc(e->ncols ? e->ncols : 1, sizeof(double));
	e->top = calloc(e->ncols ? e->ncols : 1, sizeof(uint32_t));
	e->missing = calloc(e->ncols ? e->ncols : 1, 1);
	e->unseen = calloc(e->ncols ? e->ncols : 1, 1);
	if (!e->cols || !e->values || !e->contrib || !e->top || !e->missing ||
	    !e->unseen ||
	    !e->class_name ||
	    !e->space)
		return RBA_E_NOMEM;
	for (uint32_t k = 0; k < e->ncols; k++) {
		e->cols[k] = strdup(s->columns[k].name);
		e->values[k] = strdup(vals[k]);
		if (e->cols[k] == NULL || e->values[k] == NULL)
			return RBA_E_NOMEM;
		e->missing[k] = s->columns[k].kind == ENCODE_NUMERIC &&
				s->nmissing > 0 && encode_is_missing(s, vals[k]);
		e->unseen[k] = s->columns[k].kind == ENCODE_NATIVE &&
			       encode_level_index(&s->columns[k], vals[k]) < 0;
		e->contrib[k] = x->contrib[k];
	}
	dispute_top_reasons(e->contrib, e->ncols, e->direction, nreasons, e->top,
			    &e->ntop);
	return 0;
}

int
dispute_unseen_paths(const struct artifact *a, const char *const *vals,
		     const float *raw, uint32_t *splits, uint32_t *trees,
		     uint32_t *nunseen, char **error)
{
	const struct encode_spec *s = &a->spec;
	const struct rebuild_forest *fo = &a->model.forest;
	uint32_t f = 0;
	float *x = NULL;

	*nunseen = 0;
	*error = NULL;
	for (uint32_t k = 0; k < s->ncolumns; f += encode_column_width(&s->columns[k]),
					       k++) {
		splits[k] = trees[k] = 0;
		if (s->columns[k].kind != ENCODE_NATIVE ||
		    encode_level_index(&s->columns[k], vals[k]) >= 0)
			continue;
		/* (only a forest has native columns: encode_fit and the
		 * artifact's decoder refuse them else) */
		assert(a->model.kind == REBUILD_KIND_GBDT);
		if (x == NULL) {
			if ((x = malloc(s->nfeatures * sizeof(float))) == NULL)
				return RBA_E_NOMEM;
			encode_standardize(s, raw, 1, x);
		}
		(*nunseen)++;
		for (uint32_t t = 0; t < fo->ntrees; t++) {
			uint32_t i = fo->tree_start[t], met = 0;
			while (fo->nodes[i].feature != REBUILD_TREE_LEAF) {
				const struct rebuild_tree_node *q = &fo->nodes[i];
				int left = rebuild_tree_goes_left(q, x[q->feature]);
				if (q->feature == f && left) {
					*error = rba_strdupf(
						"the level '%s' of column '%s', unseen in "
						"training, went left at a split of tree %u, "
						"against the artifact's rule that such a "
						"level goes right", vals[k],
						s->columns[k].name, t);
					free(x);
					return *error == NULL ? RBA_E_NOMEM : 0;
				}
				met += q->feature == f;
				i = left ? q->left : q->right;
			}
			splits[k] += met;
			trees[k] += met > 0;
		}
	}
	free(x);
	return 0;
}

char *
dispute_unseen_where(const char *col, uint64_t splits, uint64_t trees,
		     uint64_t forest_trees)
{
	if (splits == 0)
		return rba_strdupf("no split on this column was on its path (in any "
				   "of the %llu trees)",
				   (unsigned long long)forest_trees);
	if (splits == 1)
		return rba_strdupf("it went right at the one split on %s on its path "
				   "(in %llu of the %llu trees)", col,
				   (unsigned long long)trees,
				   (unsigned long long)forest_trees);
	return rba_strdupf("it went right at each of the %llu splits on %s on its "
			   "path (in %llu of the %llu trees)",
			   (unsigned long long)splits, col, (unsigned long long)trees,
			   (unsigned long long)forest_trees);
}

/* Where each unseen level went (dispute_unseen_paths) into e, or
 * e->error.  0 or RBA_E_NOMEM. */
static int
explain_unseen_paths(struct dispute_explanation *e, const struct artifact *a,
		     const char **vals, const float *raw)
{
	uint32_t n = a->spec.ncolumns ? a->spec.ncolumns : 1;

	e->unseen_splits = calloc(n, sizeof(uint32_t));
	e->unseen_trees = calloc(n, sizeof(uint32_t));
	if (e->unseen_splits == NULL || e->unseen_trees == NULL)
		return RBA_E_NOMEM;
	if (a->model.kind == REBUILD_KIND_GBDT)
		e->forest_trees = a->model.forest.ntrees;
	return dispute_unseen_paths(a, vals, raw, e->unseen_splits, e->unseen_trees,
				    &e->nunseen, &e->error);
}

/* The policy's statement of each column and value, when it has any. */
static int
explain_statements(struct dispute_explanation *e, const struct policy *pol)
{
	if (pol->nstatements == 0)
		return 0;
	e->has_statements = 1;
	e->statements = calloc(e->ncols ? e->ncols : 1, sizeof(char *));
	if (e->statements == NULL)
		return RBA_E_NOMEM;
	for (uint32_t k = 0; k < e->ncols; k++) {
		const char *st = policy_statement(pol, e->cols[k], e->values[k]);
		if (st != NULL && (e->statements[k] = strdup(st)) == NULL)
			return RBA_E_NOMEM;
	}
	for (uint32_t i = 0; i < e->ntop; i++)
		e->nmissing += e->statements[e->top[i]] == NULL;
	return 0;
}

/*
 * Explains the case with artifact a (source says which, in words) for
 * the decision under dispute: fills r->why.  Failing to explain is not
 * an error of the dispute: r->why.error says why; only RBA_E_NOMEM
 * returns.
 */
static int
explain(struct dispute_report *r, const struct audit_inputs *c,
	const struct artifact *a, const struct rba_digest *adig, int is_maker,
	int rescored, const char *source, const struct policy *pol,
	const struct dispute_options *o)
{
	uint32_t nreasons = o->nreasons;
	struct explain_options xo;
	struct dispute_explanation *e = &r->why;
	const struct encode_spec *s = &a->spec;
	struct explain_baseline b, *bp = NULL; /* bp: b once fitted */
	struct explain_result x;
	struct rba_detail d;
	const char **vals = NULL;
	float *raw = NULL;
	uint32_t cls;
	int err = 0;

	memset(&b, 0, sizeof(b));
	memset(&x, 0, sizeof(x));
	rba_detail_clear(&d);
	e->artifact = *adig;
	e->from_decision_artifact = is_maker;
	e->source = strdup(source);
	e->method = explain_method_of(a);
	e->nasked = nreasons;
	/* Over the exact method's caps an estimate, which the answer
	 * reports as one with its bound (model/explain.h). */
	memset(&xo, 0, sizeof(xo));
	xo.approximate = 1;
	if (e->source == NULL)
		return RBA_E_NOMEM;
	if (a->exec_pins != NULL) {
		/* Scored by the user's own score command: scores, nothing
		 * that could say why.  Nothing is invented. */
		e->error = rba_strdupf(
			"no reasons are available for format %s: it is scored by "
			"the pins' score command, which gives scores only",
			a->exec_pins->trainer.format == PINS_FORMAT_XGBOOST_JSON
				? "xgboost-json (this build has no native scorer for it)"
				: "opaque");
		if (e->error == NULL)
			return RBA_E_NOMEM;
		return 0;
	}
	cls = explain_class(r, s, pol);
	if (cls == UINT32_MAX || cls >= s->nclasses) {
		e->error = strdup(pol->argmax ? "the decision is not a class of the model"
					      : "the model has no positive class");
		goto out;
	}
	vals = calloc(s->ncolumns ? s->ncolumns : 1, sizeof(char *));
	raw = calloc(s->nfeatures ? s->nfeatures : 1, sizeof(float));
	if (vals == NULL || raw == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	if (explain_encode(r, s, vals, raw, e) != 0)
		goto out;
	if ((err = explain_unseen_paths(e, a, vals, raw)) != 0 || e->error != NULL)
		goto out;
	/* A forest's baseline is its covers': no pass over the training
	 * data for it (explain_case_opt). */
	if (e->method != EXPLAIN_TREESHAP &&
	    (err = explain_baseline_fit(c->pins, a, c->snap, c->sn, "snapshot",
					&b, &d)) == 0)
		bp = &b;
	if (err == 0)
		err = explain_case_opt(a, bp, raw, cls, &xo, &x, &d);
	if (err && err != RBA_E_NOMEM) {
		e->error = rba_strdupf("%s", d.reason);
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	e->class_name = strdup(s->classes[cls]);
	e->space = s->nclasses == 2 ? rba_strdupf("log-odds of class %s", s->classes[cls])
				    : rba_strdupf("margin of class %s", s->classes[cls]);
	e->baseline = x.baseline;
	e->margin = x.margin;
	e->sum = x.sum;
	e->sum_ok = fabs(x.sum - x.margin) <= EXPLAIN_TOLERANCE;
	if (s->nclasses == 2 && !pol->argmax)
		explain_score_check(e, r, x.margin, is_maker, rescored);
	e->direction = dispute_direction(pol, r->stored_score, x.baseline);
	if ((err = explain_contributions(e, s, vals, &x, nreasons)) == 0 &&
	    (err = explain_statements(e, pol)) == 0)
		e->ok = 1;
out:
	if (err == 0 && !e->ok && e->error == NULL)
		err = RBA_E_NOMEM;
	free(vals);
	free(raw);
	explain_baseline_release(&b);
	explain_result_release(&x);
	return err;
}

/* ---- answering ---------------------------------------------------------- */

/* What one dispute holds while it is answered (audit_dispute). */
struct dispute_run {
	const char *version;
	struct dispute_options opt;
	struct store_txn *txn;
	struct audit_inputs c;
	const struct policy *pol; /* the policy in force */
	struct store_sample_info info;
	struct sample_layout l;
	struct sample_chunk chunk; /* the disputed case alone */
	uint8_t *raw;
	uint32_t idx;		   /* the case in chunk */
	const struct artifact *sa; /* the artifact that scores the case */
	struct rba_digest sdig;	   /* its digest */
	int identical;		   /* sa is the pinned artifact */
	uint32_t C;		   /* sa's classes; 0: it cannot score the case */
	float probs[SAMPLE_MAX_SCORES];
	struct sample_scorer *sc;
	struct artifact kept; /* the deciding artifact, from the store */
	uint8_t *kbytes;
	size_t kn;
	int reproduces;
};

/* r and the run started, the version's inputs verified and loaded. */
static int
dispute_open(struct store *s, const char *version, const char *case_id,
	     const struct policy *override, struct dispute_run *run,
	     struct dispute_report *r, struct rba_detail *d)
{
	int err;

	r->version = strdup(version);
	r->case_id = strdup(case_id);
	r->verdict = AUDIT_NOT_MEASURED;
	r->edge = NAN;
	if (r->version == NULL || r->case_id == NULL)
		return RBA_E_NOMEM;
	if ((err = store_txn_begin(s, 0, 0, &run->txn, d)) != 0)
		return err;
	if ((err = audit_inputs_load(run->txn, version, override, &run->c, d)) != 0)
		return err;
	run->pol = run->c.pol;
	r->t_verify = run->c.t_verify;
	r->policy_digest = run->pol->digest;
	if ((r->policy_text = strdup(run->pol->text ? run->pol->text : "")) == NULL)
		return RBA_E_NOMEM;
	r->artifact_pinned = run->c.v.artifact;
	return 0;
}

/* The case: the index names one chunk, and only it is read. */
static int
dispute_find_case(struct dispute_run *run, const char *case_id,
		  struct dispute_report *r, struct rba_detail *d)
{
	double t1 = rba_time_mono();
	int err;

	if ((err = sample_layout_load(run->txn, run->version, &run->info, &run->l,
				      d)) != 0) {
		if (err == RBA_E_NOTFOUND)
			rba_fail(d, err, NULL, 0, 0,
				 "version '%s' has no audit sample", run->version);
		return err;
	}
	r->sample_digest = run->info.digest;
	r->artifact_decisions = run->l.artifact;
	r->has_sample_policy = run->info.has_policy;
	r->sample_policy = run->info.policy_digest;
	if ((err = sample_case_load(run->txn, run->version, &run->l, case_id,
				    &run->raw, &run->chunk, &run->idx, d)) != 0)
		return err;
	if ((err = take_case(r, &run->l, &run->chunk, run->idx)) != 0)
		return err;
	r->t_lookup = rba_time_mono() - t1;
	return 0;
}

/* No retrain when the latest audit record proves it (doc/design.md
 * section 8): r->rebuilt 0, or why it must retrain. */
static int
dispute_prove_from_history(struct dispute_run *run, struct dispute_report *r,
			   struct rba_detail *d)
{
	char env[RBA_DIGEST_TEXT_LEN + 1];
	struct find_proof fp;
	int err;

	memset(&fp, 0, sizeof(fp));
	if ((err = env_now(run->c.pins, env)) != 0)
		return err;
	fp.c = &run->c;
	fp.decisions = &run->l.artifact;
	fp.env_now = env;
	err = store_history_list(run->txn, run->version, 1, proof_one, &fp, d);
	if (err == 1)
		err = 0;
	if (err)
		return err;
	if (fp.ok) {
		r->rebuilt = 0;
		r->proof_audit = fp.id;
	} else if (fp.seen) {
		r->rebuild_why = rba_strdupf("the latest audit record, %llu, does "
				      "not prove the stored artifact: %s",
				      (unsigned long long)fp.id, fp.why);
	} else {
		r->rebuild_why = strdup("no audit of the version is on record");
	}
	return 0;
}

/* The artifact that scores the case: the stored one on a proof, else
 * the version rebuilt. */
static int
dispute_choose_artifact(struct dispute_run *run, struct dispute_report *r,
			struct rba_detail *d)
{
	int err;

	r->rebuilt = 1;
	if (!run->opt.rebuild && (err = dispute_prove_from_history(run, r, d)) != 0)
		return err;
	if (r->rebuilt) {
		if ((err = audit_inputs_rebuild(&run->c, d)) != 0)
			return err;
		r->t_rebuild = run->c.t_rebuild;
		run->sa = &run->c.rebuilt;
		run->sdig = run->c.rb.digest;
		run->identical = run->c.identical;
	} else {
		/* store_blob_load checked the stored bytes against the pin. */
		run->sa = &run->c.stored;
		run->sdig = run->c.v.artifact;
		run->identical = 1;
	}
	r->artifact_rebuilt = run->sdig;
	return 0;
}

/* The case scored by run->sa: r's classes and both probability vectors. */
static int
dispute_score_case(struct dispute_run *run, struct dispute_report *r,
		   struct rba_detail *d)
{
	const struct sample_layout *l = &run->l;
	int err;

	run->C = run->sa->spec.nclasses;
	if ((err = sample_scorer_new(run->sa, &run->sc, d)) != 0)
		return err;
	err = sample_scorer_bind(run->sc, l, d);
	if (err == 0)
		err = sample_scorer_run(run->sc, &run->chunk, run->probs, NULL, d);
	if (err == RBA_E_SCHEMA && !run->identical) {
		/* The rebuilt model cannot take this case: that is an answer. */
		reason(r, "the rebuilt model cannot score this case: %s", d->reason);
		rba_detail_clear(d);
		err = 0;
		run->C = 0;
	}
	if (err)
		return err;
	r->nclasses = run->C ? run->C : l->nclasses;
	r->classes = calloc(r->nclasses, sizeof(char *));
	if (r->classes == NULL)
		return RBA_E_NOMEM;
	for (uint32_t k = 0; k < r->nclasses; k++)
		r->classes[k] = strdup(run->C ? run->sa->spec.classes[k] : l->classes[k]);
	if (run->pol->argmax && l->scored_by == SAMPLE_SCORED_COLUMN)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"an argmax policy needs stored probability vectors, "
				"but the sample's scores came from a column");
	if (l->scored_by == SAMPLE_SCORED_MODEL) {
		r->stored_probs = calloc(l->nscores, sizeof(double));
		r->nstored = l->nscores;
		if (r->stored_probs == NULL)
			return RBA_E_NOMEM;
		for (uint32_t k = 0; k < l->nscores; k++)
			r->stored_probs[k] = run->chunk.scores[k];
	}
	if (run->C > 0) {
		r->rebuilt_probs = calloc(run->C, sizeof(double));
		if (r->rebuilt_probs == NULL)
			return RBA_E_NOMEM;
		for (uint32_t k = 0; k < run->C; k++)
			r->rebuilt_probs[k] = run->probs[k];
	}
	return 0;
}

/* Both decisions under the policy in force, their margins, and the
 * case's own answer. */
static int
dispute_decide(struct dispute_run *run, struct dispute_report *r,
	       struct rba_detail *d)
{
	const struct sample_layout *l = &run->l;
	const struct policy *pol = run->pol;
	uint32_t C = run->C;
	double sm = INFINITY, rm = INFINITY;

	if (!pol->argmax) {
		const char *dec;
		if (l->scored_by == SAMPLE_SCORED_MODEL && l->positive == UINT32_MAX)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"the policy decides by score bands, but the "
					"model has no positive class");
		r->stored_score = l->scored_by == SAMPLE_SCORED_MODEL
					  ? run->chunk.scores[l->positive]
					  : run->chunk.scores[0];
		dec = policy_decide(pol, r->stored_score, &sm);
		if (dec != NULL && strcmp(dec, r->stored_decision) != 0)
			r->contradiction = dispute_contradiction(r->stored_score, dec,
						       r->stored_decision);
		r->edge = policy_nearest_edge(pol, r->stored_score);
		if (C > 0 && run->sa->spec.positive != ENCODE_NO_POSITIVE) {
			r->rebuilt_score = run->probs[run->sa->spec.positive];
			dec = policy_decide(pol, r->rebuilt_score, &rm);
			r->rebuilt_decision = dec ? strdup(dec) : NULL;
		} else {
			r->rebuilt_score = NAN;
		}
	} else {
		size_t st = policy_decide_argmax(pol, r->stored_probs, l->nscores, &sm);
		if (st < l->nscores && l->classes[st] != NULL &&
		    strcmp(l->classes[st], r->stored_decision) != 0)
			r->contradiction = dispute_contradiction(r->stored_probs[st],
						       l->classes[st],
						       r->stored_decision);
		size_t rt = C ? policy_decide_argmax(pol, r->rebuilt_probs, C, &rm)
			      : SIZE_MAX;
		r->stored_score = st < l->nscores ? r->stored_probs[st] : NAN;
		r->rebuilt_score = rt < C ? r->rebuilt_probs[rt] : NAN;
		r->rebuilt_decision = rt < C ? strdup(run->sa->spec.classes[rt]) : NULL;
	}
	r->margin = sm;
	r->rebuilt_margin = rm;
	/* The case's own answer first, then the version's standing. */
	if (r->rebuilt_decision == NULL && C > 0)
		reason(r, "the rebuilt model gives this case no decision");
	else if (C > 0 && strcmp(r->rebuilt_decision, r->stored_decision) != 0)
		reason(r, "the rebuilt model decides '%s' where the stored decision "
			  "was '%s'", r->rebuilt_decision, r->stored_decision);
	return 0;
}

/* What the version's standing rests on: run->reproduces. */
static int
dispute_standing(struct dispute_run *run, struct dispute_report *r,
		 struct rba_detail *d)
{
	const char *version = run->version;
	struct find_audit fa;
	int err;

	memset(&fa, 0, sizeof(fa));
	fa.rebuilt = &run->sdig;
	fa.policy = &run->pol->digest;
	fa.sample = &run->info.digest;
	err = store_history_list(run->txn, version, 1, find_one, &fa, d);
	if (err == 1)
		err = 0;
	if (err)
		return err;
	if (fa.found) {
		char *when = utc(fa.time);
		r->has_audit = 1;
		r->audit_id = fa.id;
		r->verdict = fa.verdict;
		r->verdict_basis = malloc(128);
		if (r->verdict_basis != NULL)
			snprintf(r->verdict_basis, 128, "audit record %llu of %s",
				 (unsigned long long)fa.id, when ? when : "?");
		free(when);
		run->reproduces = fa.verdict != AUDIT_NOT_REPRODUCIBLE;
		if (!run->reproduces)
			reason(r, "the version does not reproduce (audit record %llu: %s)",
			       (unsigned long long)fa.id, fa.first_reason);
	} else if (run->identical &&
		   rba_digest_equal(&r->artifact_decisions, &run->sdig)) {
		r->verdict = AUDIT_BIT_IDENTICAL;
		r->verdict_basis = strdup("the rebuilt artifact is bit-identical to "
					  "the pinned one, which made the stored "
					  "decisions (no audit of the sample on "
					  "record)");
		run->reproduces = 1;
	} else if (run->identical) {
		/* The pin moved since the sample was added: the decision
		 * under dispute is another artifact's. */
		char maker[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&r->artifact_decisions, maker);
		r->verdict = AUDIT_NOT_MEASURED;
		r->verdict_basis = strdup("the rebuild is the pinned artifact, but "
					  "the stored decisions were made by "
					  "another, and no audit of them is on "
					  "record");
		reason(r, "the stored decision was made by artifact %s, not by the "
			  "rebuilt (pinned) one, and no audit of the sample under "
			  "this policy is on record (run 'rebuild-audit audit %s')",
		       maker, version);
	} else {
		r->verdict = AUDIT_NOT_MEASURED;
		r->verdict_basis = strdup("the rebuild is not bit-identical and no "
					  "audit of it is on record");
		reason(r, "the rebuild is not bit-identical and no audit of this "
			  "rebuild under this policy is on record (run "
			  "'rebuild-audit audit %s')", version);
	}
	return 0;
}

/*
 * What the reasons owe the answer (doc/design.md section 8.4): an answer
 * is owed its reasons, and reasons that fail their own check are none;
 * without them the answer is incomplete and escalates, saying why.
 */
static void
dispute_reasons_owed(struct dispute_report *r)
{
	const struct dispute_explanation *e = &r->why;
	char n1[RBA_JSON_NUM_MAX], n2[RBA_JSON_NUM_MAX];

	if (!e->ok) {
		reason(r, "the principal reasons could not be computed: %s",
		       e->error ? e->error : "not computed");
	} else if (!e->sum_ok) {
		rba_json_fmt_double(e->sum, n1);
		rba_json_fmt_double(e->margin, n2);
		reason(r, "the principal reasons fail their check: the baseline and "
			  "the contributions add up to %s, not to the case's margin %s",
		       n1, n2);
	} else if (e->has_score_check && !e->score_ok) {
		rba_json_fmt_double(e->score_prob, n1);
		rba_json_fmt_double(e->score, n2);
		reason(r, "the principal reasons fail their check: the margin gives "
			  "the score %s, not the %s score %s", n1, e->score_of, n2);
	}
}

/* The answer: it stands when the version reproduces, the reasons are
 * there and nothing else speaks against it; otherwise escalate with the
 * first reason. */
static int
dispute_answer(struct dispute_run *run, struct dispute_report *r)
{
	dispute_reasons_owed(r);
	r->exact = r->why.ok && r->why.accuracy == EXPLAIN_EXACT;
	if (r->nreasons == 0 && run->reproduces) {
		r->answer = DISPUTE_STANDS;
		r->answer_line = dispute_stands_line(r->stored_decision, r->exact,
						     r->why.error_bound);
	} else {
		r->answer = DISPUTE_ESCALATE;
		if (r->nreasons == 0)
			reason(r, "the version does not reproduce");
		r->answer_line = malloc(strlen(r->reasons[0]) + 16);
		if (r->answer_line != NULL)
			sprintf(r->answer_line, "escalate: %s", r->reasons[0]);
	}
	if (r->answer_line == NULL || r->verdict_basis == NULL)
		return RBA_E_NOMEM;
	return 0;
}

/* The reasons, from the artifact that made the decision. */
static int
dispute_explain_decision(struct dispute_run *run, struct dispute_report *r,
			 struct rba_detail *d)
{
	const struct rba_digest *maker = &run->l.artifact;
	const struct policy *pol = run->pol;
	const struct dispute_options *nr = &run->opt;
	double t1 = rba_time_mono();
	int err;

	if (rba_digest_equal(&run->sdig, maker)) {
		err = explain(r, &run->c, run->sa, &run->sdig, 1, 1,
			      r->rebuilt ? "the rebuilt artifact, bit-identical to "
					   "the one that made the decision"
					 : "the stored artifact, which made the "
					   "decision",
			      pol, nr);
	} else if (rba_digest_equal(&run->c.v.artifact, maker)) {
		err = explain(r, &run->c, &run->c.stored, &run->c.v.artifact, 1, 0,
			      "the stored artifact, which made the decision", pol, nr);
	} else if (store_blob_load(run->txn, maker, ARTIFACT_MAX_BYTES,
				   &run->kbytes, &run->kn, d) == 0 &&
		   xgboost_artifact_decode(run->kbytes, run->kn, "the kept artifact", &run->kept, d) == 0) {
		err = explain(r, &run->c, &run->kept, maker, 1, 0,
			      "the artifact that made the decision, kept in the "
			      "store", pol, nr);
	} else {
		rba_detail_clear(d);
		err = explain(r, &run->c, run->sa, &run->sdig, 0, 1,
			      "the rescoring artifact: the one that made the "
			      "decision is not in the store", pol, nr);
	}
	r->t_explain = rba_time_mono() - t1;
	return err;
}

int
audit_dispute(struct store *s, const char *version, const char *case_id,
	      const struct policy *override, const struct dispute_options *o,
	      struct dispute_report *r, struct rba_detail *d)
{
	struct dispute_run run;
	double t0 = rba_time_mono();
	int err;

	memset(r, 0, sizeof(*r));
	memset(&run, 0, sizeof(run));
	run.version = version;
	run.opt.nreasons = DISPUTE_REASONS_DEFAULT;
	if (o != NULL)
		run.opt = *o;
	sample_chunk_init(&run.chunk);
	if ((err = dispute_open(s, version, case_id, override, &run, r, d)) == 0 &&
	    (err = dispute_find_case(&run, case_id, r, d)) == 0 &&
	    (err = dispute_choose_artifact(&run, r, d)) == 0 &&
	    (err = dispute_score_case(&run, r, d)) == 0 &&
	    (err = dispute_decide(&run, r, d)) == 0 &&
	    (err = dispute_standing(&run, r, d)) == 0 &&
	    (err = dispute_explain_decision(&run, r, d)) == 0 &&
	    (err = dispute_answer(&run, r)) == 0)
		err = store_history_head(run.txn, &r->head_id, &r->head, d);
	store_txn_abort(run.txn);
	r->t_total = rba_time_mono() - t0;
	sample_scorer_free(run.sc);
	artifact_release(&run.kept);
	free(run.kbytes);
	free(run.raw);
	sample_chunk_release(&run.chunk);
	sample_layout_release(&run.l);
	store_sample_info_release(&run.info);
	audit_inputs_release(&run.c);
	return err;
}

static void
put_item(struct rba_json_w *w, const struct dispute_explanation *e,
	 uint32_t k, uint32_t rank)
{
	rba_json_w_open(w, NULL, '{');
	if (rank)
		rba_json_w_u64(w, "rank", rank);
	rba_json_w_str(w, "column", e->cols[k]);
	rba_json_w_str(w, "value", e->values[k]);
	if (rank && e->has_statements)
		rba_json_w_str(w, "statement", e->statements[k]);
	rba_json_w_num(w, "contribution", e->contrib[k]);
	rba_json_w_close(w, '}');
}

/* A list of n numbers; v NULL: null. */
static void
put_nums(struct rba_json_w *w, const char *key, const double *v, uint32_t n)
{
	if (v == NULL) {
		rba_json_w_str(w, key, NULL);
		return;
	}
	rba_json_w_open(w, key, '[');
	for (uint32_t i = 0; i < n; i++)
		rba_json_w_num(w, NULL, v[i]);
	rba_json_w_close(w, ']');
}

/* How the explanation was made and how far it holds. */
static void
put_method(struct rba_json_w *w, const struct dispute_explanation *e)
{
	rba_json_w_bool(w, "ok", e->ok);
	rba_json_w_str(w, "error", e->error);
	rba_json_w_str(w, "method", e->ok ? explain_method_name(e->method) : NULL);
	rba_json_w_str(w, "accuracy",
		       e->ok ? explain_accuracy_name(e->accuracy) : NULL);
	rba_json_w_num(w, "error_bound", e->ok ? e->error_bound : NAN);
	rba_json_w_u64(w, "samples", e->samples);
	rba_json_w_u64(w, "reasons_asked", e->nasked);
	rba_json_w_str(w, "source", e->source);
	rba_json_w_digest(w, "artifact", &e->artifact, e->source != NULL);
	rba_json_w_bool(w, "decision_artifact", e->from_decision_artifact);
	rba_json_w_str(w, "class", e->class_name);
	rba_json_w_str(w, "space", e->space);
	rba_json_w_str(w, "direction", !e->ok ? NULL
			: e->direction > 0 ? "up"
			: e->direction < 0 ? "down" : "magnitude");
	rba_json_w_num(w, "baseline", e->ok ? e->baseline : NAN);
	rba_json_w_num(w, "margin", e->ok ? e->margin : NAN);
	rba_json_w_num(w, "sum", e->ok ? e->sum : NAN);
	rba_json_w_num(w, "tolerance", EXPLAIN_TOLERANCE);
	rba_json_w_bool(w, "sum_ok", e->sum_ok);
	if (e->has_score_check) {
		rba_json_w_open(w, "score_check", '{');
		rba_json_w_num(w, "probability", e->score_prob);
		rba_json_w_num(w, "score", e->score);
		rba_json_w_str(w, "score_of", e->score_of);
		rba_json_w_num(w, "tolerance", DISPUTE_SCORE_TOLERANCE);
		rba_json_w_bool(w, "ok", e->score_ok);
		rba_json_w_close(w, '}');
	} else {
		rba_json_w_str(w, "score_check", NULL);
	}
}

/* Where each level unseen in training went (v4). */
static void
put_unseen(struct rba_json_w *w, const struct dispute_explanation *e)
{
	rba_json_w_open(w, "unseen", '[');
	for (uint32_t k = 0; k < e->ncols; k++) {
		if (!e->unseen[k])
			continue;
		rba_json_w_open(w, NULL, '{');
		rba_json_w_str(w, "column", e->cols[k]);
		rba_json_w_str(w, "value", e->values[k]);
		rba_json_w_str(w, "went", e->unseen_splits[k] ? "right" : NULL);
		rba_json_w_u64(w, "splits", e->unseen_splits[k]);
		rba_json_w_u64(w, "trees", e->unseen_trees[k]);
		rba_json_w_u64(w, "forest_trees", e->forest_trees);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
}

static void
put_explanation(struct rba_json_w *w, const char *key,
		const struct dispute_explanation *e)
{
	rba_json_w_open(w, key, '{');
	put_method(w, e);
	rba_json_w_open(w, "principal_reasons", '[');
	for (uint32_t i = 0; i < e->ntop; i++)
		put_item(w, e, e->top[i], i + 1);
	rba_json_w_close(w, ']');
	if (e->has_statements)
		rba_json_w_u64(w, "statements_missing", e->nmissing);
	if (e->ok && e->nunseen > 0)
		put_unseen(w, e);
	rba_json_w_open(w, "contributions", '[');
	for (uint32_t k = 0; k < e->ncols; k++)
		put_item(w, e, k, 0);
	rba_json_w_close(w, ']');
	rba_json_w_close(w, '}');
}

void
dispute_explanation_json(const struct dispute_explanation *e, struct rba_buf *b)
{
	struct rba_json_w w;

	rba_json_w_init(&w, b);
	put_explanation(&w, NULL, e);
}

int
dispute_report_format(const struct dispute_report *r)
{
	if (r->why.ok && r->why.nunseen > 0)
		return 4;
	return r->why.has_statements ? 3 : 2;
}

/* The record opened: what it is, the case, the answer with its
 * reasons and warnings. */
static void
put_answer(struct rba_json_w *w, const struct dispute_report *r)
{
	int f = dispute_report_format(r);

	rba_json_w_str(w, "schema", f == 4 ? DISPUTE_SCHEMA_V4
				    : f == 3 ? DISPUTE_SCHEMA_V3 : DISPUTE_SCHEMA);
	rba_json_w_str(w, "version", r->version);
	rba_json_w_str(w, "case", r->case_id);
	rba_json_w_str(w, "answer",
		       r->answer == DISPUTE_STANDS ? "stands" : "escalate");
	rba_json_w_str(w, "answer_line", r->answer_line);
	rba_json_w_bool(w, "exact", r->exact);
	rba_json_w_open(w, "reasons", '[');
	for (size_t i = 0; i < r->nreasons; i++)
		rba_json_w_str(w, NULL, r->reasons[i]);
	rba_json_w_close(w, ']');
	rba_json_w_open(w, "warnings", '[');
	if (r->contradiction != NULL)
		rba_json_w_str(w, NULL, r->contradiction);
	rba_json_w_close(w, ']');
}

/* The stored and the rebuilt scores and decisions, and the margins. */
static void
put_scores(struct rba_json_w *w, const struct dispute_report *r)
{
	rba_json_w_open(w, "stored", '{');
	rba_json_w_num(w, "score", r->stored_score);
	put_nums(w, "probabilities", r->stored_probs,
		 r->scored_by == SAMPLE_SCORED_MODEL ? r->nclasses : 1);
	rba_json_w_str(w, "decision", r->stored_decision);
	rba_json_w_str(w, "scored_by",
		       r->scored_by == SAMPLE_SCORED_COLUMN ? "column" : "model");
	rba_json_w_close(w, '}');
	rba_json_w_open(w, "rebuilt", '{');
	rba_json_w_num(w, "score", r->rebuilt_score);
	put_nums(w, "probabilities", r->rebuilt_probs,
		 r->rebuilt_probs ? r->nclasses : 0);
	rba_json_w_str(w, "decision", r->rebuilt_decision);
	rba_json_w_close(w, '}');
	rba_json_w_open(w, "classes", '[');
	for (uint32_t i = 0; r->classes != NULL && i < r->nclasses; i++)
		rba_json_w_str(w, NULL, r->classes[i] ? r->classes[i] : "");
	rba_json_w_close(w, ']');
	rba_json_w_num(w, "margin", r->margin);
	rba_json_w_num(w, "rebuilt_margin", r->rebuilt_margin);
	rba_json_w_num(w, "edge", r->edge);
}

/* The standing the answer rests on, the digests, the policy. */
static void
put_standing(struct rba_json_w *w, const struct dispute_report *r)
{
	rba_json_w_open(w, "standing", '{');
	rba_json_w_str(w, "verdict", audit_verdict_name(r->verdict));
	rba_json_w_str(w, "basis", r->verdict_basis);
	if (r->has_audit)
		rba_json_w_u64(w, "audit_record", r->audit_id);
	else
		rba_json_w_str(w, "audit_record", NULL);
	rba_json_w_close(w, '}');
	rba_json_w_open(w, "digests", '{');
	rba_json_w_digest(w, "artifact_pinned", &r->artifact_pinned, 1);
	rba_json_w_digest(w, "artifact_rebuilt", &r->artifact_rebuilt, 1);
	rba_json_w_digest(w, "artifact_decisions", &r->artifact_decisions, 1);
	rba_json_w_digest(w, "policy", &r->policy_digest, 1);
	rba_json_w_digest(w, "sample", &r->sample_digest, 1);
	rba_json_w_digest(w, "sample_policy", &r->sample_policy,
			  r->has_sample_policy);
	rba_json_w_close(w, '}');
	rba_json_w_str(w, "policy_text", r->policy_text);
}

/* The case's inputs, column by column. */
static void
put_inputs(struct rba_json_w *w, const struct dispute_report *r)
{
	rba_json_w_open(w, "inputs", '{');
	for (uint32_t i = 0; i < r->ncols; i++)
		rba_json_w_str(w, r->names[i], r->values[i]);
	rba_json_w_close(w, '}');
}

/* Which artifact scored the case and why, and the explanation. */
static void
put_scoring(struct rba_json_w *w, const struct dispute_report *r)
{
	rba_json_w_open(w, "scoring", '{');
	rba_json_w_str(w, "artifact", r->rebuilt ? "rebuilt" : "stored");
	if (!r->rebuilt)
		rba_json_w_u64(w, "audit_record", r->proof_audit);
	else
		rba_json_w_str(w, "audit_record", NULL);
	rba_json_w_str(w, "retrain_reason", r->rebuild_why);
	rba_json_w_close(w, '}');
	put_explanation(w, "explanation", &r->why);
}

static void
put_timings(struct rba_json_w *w, const struct dispute_report *r)
{
	rba_json_w_open(w, "timings", '{');
	rba_json_w_num(w, "verify_s", r->t_verify);
	rba_json_w_num(w, "lookup_s", r->t_lookup);
	rba_json_w_num(w, "rebuild_s", r->t_rebuild);
	rba_json_w_num(w, "explain_s", r->t_explain);
	rba_json_w_num(w, "total_s", r->t_total);
	rba_json_w_close(w, '}');
}

void
dispute_report_write(const struct dispute_report *r, int with_inputs,
		     struct rba_json_w *w, const char *key)
{
	rba_json_w_open(w, key, '{');
	put_answer(w, r);
	put_scores(w, r);
	put_standing(w, r);
	if (with_inputs)
		put_inputs(w, r);
	put_scoring(w, r);
	put_timings(w, r);
	rba_json_w_close(w, '}');
}

void
dispute_report_json(const struct dispute_report *r, int with_inputs,
		    struct rba_buf *b)
{
	struct rba_json_w w;

	rba_json_w_init(&w, b);
	dispute_report_write(r, with_inputs, &w, NULL);
}

/* ---- reason statements ------------------------------------------------ */

void
dispute_coverage_release(struct dispute_coverage *c)
{
	for (size_t i = 0; i < c->nmissing; i++)
		free(c->missing[i]);
	free(c->missing);
	memset(c, 0, sizeof(*c));
}

static int
coverage_add(struct dispute_coverage *c, char *s)
{
	char **p;

	if (s == NULL)
		return RBA_E_NOMEM;
	p = realloc(c->missing, (c->nmissing + 1) * sizeof(*p));
	if (p == NULL) {
		free(s);
		return RBA_E_NOMEM;
	}
	c->missing = p;
	c->missing[c->nmissing++] = s;
	return 0;
}

int
dispute_statement_coverage(struct store *s, const char *version,
			   const struct policy *override,
			   struct dispute_coverage *out, struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct store_version v;
	struct policy *pol = NULL;
	struct artifact art;
	uint8_t *bytes = NULL;
	size_t n = 0;
	int err, decoded = 0;

	memset(out, 0, sizeof(*out));
	memset(&v, 0, sizeof(v));
	memset(&art, 0, sizeof(art));
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = store_version_get(txn, version, &v, d)) != 0 ||
	    (err = audit_inputs_policy_in_force(&v, override, &pol, &out->from_version,
						d)) != 0 ||
	    (err = store_blob_load(txn, &v.artifact, ARTIFACT_MAX_BYTES, &bytes, &n,
				   d)) != 0 ||
	    (err = artifact_decode(bytes, n, &art, d)) != 0)
		goto out;
	decoded = 1;
	out->policy = pol->digest;
	out->nstatements = pol->nstatements;
	out->ncolumns = art.spec.ncolumns;
	for (uint32_t k = 0; k < art.spec.ncolumns && err == 0; k++) {
		const struct encode_column *c = &art.spec.columns[k];
		size_t before = out->nmissing;

		if (c->kind == ENCODE_NUMERIC) {
			if (policy_statement(pol, c->name, NULL) == NULL)
				err = coverage_add(out, strdup(c->name));
		} else if (policy_statement(pol, c->name, NULL) == NULL) {
			uint32_t without = 0;
			for (uint32_t l = 0; l < c->nlevels; l++)
				without += policy_statement(pol, c->name, c->levels[l]) == NULL;
			if (without == c->nlevels)
				err = coverage_add(out, strdup(c->name));
			for (uint32_t l = 0; without < c->nlevels && l < c->nlevels &&
					     err == 0; l++)
				if (policy_statement(pol, c->name, c->levels[l]) == NULL)
					err = coverage_add(out, rba_strdupf("%s=%s", c->name,
									    c->levels[l]));
		}
		if (err == 0 && out->nmissing == before)
			out->covered++;
	}
out:
	if (decoded)
		artifact_release(&art);
	free(bytes);
	policy_free(pol);
	store_version_release(&v);
	store_txn_abort(txn);
	if (err)
		dispute_coverage_release(out);
	return err;
}
