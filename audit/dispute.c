/*
 * dispute.c - one disputed decision: the case's story and one answer.
 */
#include "audit/dispute.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/inputs.h"
#include "common/rbatime.h"
#include "common/json.h"
#include "audit/scorer.h"

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

static int
digest_is(const struct rba_json_value *obj, const char *key,
	  const struct rba_digest *want)
{
	const char *s = rba_json_get_str(obj, key);
	struct rba_digest got;

	return s != NULL && rba_digest_parse(s, &got) == 0 &&
	       rba_digest_equal(&got, want);
}

/* The warning of a stored decision its own stored score contradicts. */
static char *
dupf_contra(double score, const char *policy_says, const char *stored)
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
	const struct rba_json_value *dg, *reasons;
	const char *verdict;
	int v = 0;

	if (rba_json_parse((const char *)e->record, e->len, &root, NULL) != 0)
		return 0;
	dg = rba_json_get(&root, "digests");
	verdict = rba_json_get_str(&root, "verdict");
	if (verdict != NULL) {
		if (strcmp(verdict, "bit-identical") == 0)
			v = AUDIT_BIT_IDENTICAL;
		else if (strcmp(verdict, "metric-equivalent") == 0)
			v = AUDIT_METRIC_EQUIVALENT;
		else if (strcmp(verdict, "not-reproducible") == 0)
			v = AUDIT_NOT_REPRODUCIBLE;
	}
	if (v != 0 && digest_is(dg, "artifact_rebuilt", f->rebuilt) &&
	    digest_is(dg, "policy", f->policy) &&
	    digest_is(dg, "sample", f->sample)) {
		f->found = 1;
		f->id = e->id;
		f->time = e->time;
		f->verdict = v;
		/* The most telling reason: past the digest line when there
		 * is more. */
		reasons = rba_json_get(&root, "reasons");
		for (size_t i = 0; reasons != NULL && reasons->type == RBA_JSON_ARRAY &&
				   i < reasons->n; i++) {
			const struct rba_json_value *it = &reasons->items[i];
			if (it->type != RBA_JSON_STRING)
				continue;
			snprintf(f->first_reason, sizeof(f->first_reason), "%s", it->str);
			if (strncmp(it->str, "the rebuilt artifact ", 21) != 0)
				break;
		}
	}
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

int
audit_dispute(struct store *s, const char *version, const char *case_id,
	      const struct policy *override, struct dispute_report *r,
	      struct rba_detail *d)
{
	struct audit_inputs c;
	struct store_txn *txn = NULL;
	struct store_sample_info info;
	struct sample_layout l;
	struct sample_chunk chunk;
	struct audit_scorer *sc = NULL;
	struct find_audit fa;
	uint8_t *raw = NULL;
	uint32_t idx = 0, C;
	float probs[SAMPLE_MAX_SCORES];
	double t0 = rba_time_mono(), t1, sm = INFINITY, rm = INFINITY;
	const struct policy *pol;
	int err, reproduces = 0;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	memset(&info, 0, sizeof(info));
	memset(&l, 0, sizeof(l));
	sample_chunk_init(&chunk);
	r->version = strdup(version);
	r->case_id = strdup(case_id);
	r->verdict = AUDIT_NOT_MEASURED;
	r->edge = NAN;
	if (r->version == NULL || r->case_id == NULL)
		return RBA_E_NOMEM;
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = audit_inputs_load(txn, version, override, &c, d)) != 0)
		goto out;
	pol = c.pol;
	r->t_verify = c.t_verify;
	r->policy_digest = pol->digest;
	r->artifact_pinned = c.v.artifact;

	/* The case: the index names one chunk, and only it is read. */
	t1 = rba_time_mono();
	if ((err = sample_layout_load(txn, version, &info, &l, d)) != 0) {
		if (err == RBA_E_NOTFOUND)
			rba_fail(d, err, NULL, 0, 0,
				 "version '%s' has no audit sample", version);
		goto out;
	}
	r->sample_digest = info.digest;
	r->artifact_decisions = l.artifact;
	r->has_sample_policy = info.has_policy;
	r->sample_policy = info.policy_digest;
	if ((err = sample_case_load(txn, version, &l, case_id, &raw, &chunk, &idx,
				    d)) != 0)
		goto out;
	if ((err = take_case(r, &l, &chunk, idx)) != 0)
		goto out;
	r->t_lookup = rba_time_mono() - t1;

	if ((err = audit_inputs_rebuild(&c, d)) != 0)
		goto out;
	r->t_rebuild = c.t_rebuild;
	r->artifact_rebuilt = c.rb.digest;
	t1 = rba_time_mono();
	C = c.rebuilt.spec.nclasses;
	/* The chunk holds the disputed case alone (sample_case_load). */
	if ((err = audit_scorer_new(&c.rebuilt, &sc, d)) != 0)
		goto out;
	err = audit_scorer_bind(sc, &l, d);
	if (err == 0)
		err = audit_scorer_run(sc, &chunk, probs, NULL, d);
	if (err == RBA_E_SCHEMA && !c.identical) {
		/* The rebuilt model cannot take this case: that is an answer. */
		reason(r, "the rebuilt model cannot score this case: %s", d->reason);
		rba_detail_clear(d);
		err = 0;
		C = 0;
	}
	if (err)
		goto out;

	r->nclasses = C ? C : l.nclasses;
	r->classes = calloc(r->nclasses, sizeof(char *));
	if (r->classes == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (uint32_t k = 0; k < r->nclasses; k++)
		r->classes[k] = strdup(C ? c.rebuilt.spec.classes[k] : l.classes[k]);
	if (pol->argmax && l.scored_by == SAMPLE_SCORED_COLUMN) {
		err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
			       "an argmax policy needs stored probability vectors, "
			       "but the sample's scores came from a column");
		goto out;
	}
	if (l.scored_by == SAMPLE_SCORED_MODEL) {
		r->stored_probs = calloc(l.nscores, sizeof(double));
		r->nstored = l.nscores;
		if (r->stored_probs == NULL) {
			err = RBA_E_NOMEM;
			goto out;
		}
		for (uint32_t k = 0; k < l.nscores; k++)
			r->stored_probs[k] = chunk.scores[k];
	}
	if (C > 0) {
		r->rebuilt_probs = calloc(C, sizeof(double));
		if (r->rebuilt_probs == NULL) {
			err = RBA_E_NOMEM;
			goto out;
		}
		for (uint32_t k = 0; k < C; k++)
			r->rebuilt_probs[k] = probs[k];
	}
	if (!pol->argmax) {
		const char *dec;
		if (l.scored_by == SAMPLE_SCORED_MODEL && l.positive == UINT32_MAX) {
			err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				       "the policy decides by score bands, but the "
				       "model has no positive class");
			goto out;
		}
		r->stored_score = l.scored_by == SAMPLE_SCORED_MODEL
					  ? chunk.scores[l.positive] : chunk.scores[0];
		dec = policy_decide(pol, r->stored_score, &sm);
		if (dec != NULL && strcmp(dec, r->stored_decision) != 0)
			r->contradiction = dupf_contra(r->stored_score, dec,
						       r->stored_decision);
		r->edge = policy_nearest_edge(pol, r->stored_score);
		if (C > 0 && c.rebuilt.spec.positive != ENCODE_NO_POSITIVE) {
			r->rebuilt_score = probs[c.rebuilt.spec.positive];
			dec = policy_decide(pol, r->rebuilt_score, &rm);
			r->rebuilt_decision = dec ? strdup(dec) : NULL;
		} else {
			r->rebuilt_score = NAN;
		}
	} else {
		size_t st = policy_decide_argmax(pol, r->stored_probs, l.nscores, &sm);
		if (st < l.nscores && l.classes[st] != NULL &&
		    strcmp(l.classes[st], r->stored_decision) != 0)
			r->contradiction = dupf_contra(r->stored_probs[st],
						       l.classes[st],
						       r->stored_decision);
		size_t rt = C ? policy_decide_argmax(pol, r->rebuilt_probs, C, &rm)
			      : SIZE_MAX;
		r->stored_score = st < l.nscores ? r->stored_probs[st] : NAN;
		r->rebuilt_score = rt < C ? r->rebuilt_probs[rt] : NAN;
		r->rebuilt_decision = rt < C ? strdup(c.rebuilt.spec.classes[rt]) : NULL;
	}
	r->margin = sm;
	r->rebuilt_margin = rm;

	/* The case's own answer first, then the version's standing. */
	if (r->rebuilt_decision == NULL && C > 0)
		reason(r, "the rebuilt model gives this case no decision");
	else if (C > 0 && strcmp(r->rebuilt_decision, r->stored_decision) != 0)
		reason(r, "the rebuilt model decides '%s' where the stored decision "
			  "was '%s'", r->rebuilt_decision, r->stored_decision);

	/* What the version's standing rests on. */
	memset(&fa, 0, sizeof(fa));
	fa.rebuilt = &c.rb.digest;
	fa.policy = &pol->digest;
	fa.sample = &info.digest;
	err = store_history_list(txn, version, 1, find_one, &fa, d);
	if (err == 1)
		err = 0;
	if (err)
		goto out;
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
		reproduces = fa.verdict != AUDIT_NOT_REPRODUCIBLE;
		if (!reproduces)
			reason(r, "the version does not reproduce (audit record %llu: %s)",
			       (unsigned long long)fa.id, fa.first_reason);
	} else if (c.identical &&
		   rba_digest_equal(&r->artifact_decisions, &c.rb.digest)) {
		r->verdict = AUDIT_BIT_IDENTICAL;
		r->verdict_basis = strdup("the rebuilt artifact is bit-identical to "
					  "the pinned one, which made the stored "
					  "decisions (no audit of the sample on "
					  "record)");
		reproduces = 1;
	} else if (c.identical) {
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
	if (r->nreasons == 0 && reproduces) {
		r->answer = DISPUTE_STANDS;
		r->answer_line = malloc(strlen(r->stored_decision) + 32);
		if (r->answer_line != NULL)
			sprintf(r->answer_line, "the disputed %s stands",
				r->stored_decision);
	} else {
		r->answer = DISPUTE_ESCALATE;
		if (r->nreasons == 0)
			reason(r, "the version does not reproduce");
		r->answer_line = malloc(strlen(r->reasons[0]) + 16);
		if (r->answer_line != NULL)
			sprintf(r->answer_line, "escalate: %s", r->reasons[0]);
	}
	if (r->answer_line == NULL || r->verdict_basis == NULL)
		err = RBA_E_NOMEM;
	(void)t1;
out:
	store_txn_abort(txn);
	r->t_total = rba_time_mono() - t0;
	audit_scorer_free(sc);
	free(raw);
	sample_chunk_release(&chunk);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	audit_inputs_release(&c);
	return err;
}

void
dispute_report_json(const struct dispute_report *r, int with_inputs,
		    struct rba_buf *b)
{
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "schema", "rebuild-audit/dispute/v1", 1);
	rba_json_kv_str(b, "version", r->version, 1);
	rba_json_kv_str(b, "case", r->case_id, 1);
	rba_json_kv_str(b, "answer", r->answer == DISPUTE_STANDS ? "stands" : "escalate", 1);
	rba_json_kv_str(b, "answer_line", r->answer_line, 1);
	rba_json_put_key(b, "reasons");
	rba_buf_put_u8(b, '[');
	for (size_t i = 0; i < r->nreasons; i++) {
		if (i)
			rba_buf_put(b, ", ", 2);
		rba_json_put_str(b, r->reasons[i]);
	}
	rba_buf_put(b, "], ", 3);
	rba_json_put_key(b, "warnings");
	rba_buf_put_u8(b, '[');
	if (r->contradiction != NULL)
		rba_json_put_str(b, r->contradiction);
	rba_buf_put(b, "], ", 3);
	rba_json_put_key(b, "stored");
	rba_buf_put_u8(b, '{');
	rba_json_kv_num(b, "score", r->stored_score, 1);
	rba_json_kv_nums(b, "probabilities", r->stored_probs,
		 r->scored_by == SAMPLE_SCORED_MODEL ? r->nclasses : 1, 1);
	rba_json_kv_str(b, "decision", r->stored_decision, 1);
	rba_json_kv_str(b, "scored_by", r->scored_by == SAMPLE_SCORED_COLUMN ? "column"
								     : "model", 0);
	rba_buf_put(b, "}, ", 3);
	rba_json_put_key(b, "rebuilt");
	rba_buf_put_u8(b, '{');
	rba_json_kv_num(b, "score", r->rebuilt_score, 1);
	rba_json_kv_nums(b, "probabilities", r->rebuilt_probs, r->rebuilt_probs ? r->nclasses : 0, 1);
	rba_json_kv_str(b, "decision", r->rebuilt_decision, 0);
	rba_buf_put(b, "}, ", 3);
	rba_json_put_key(b, "classes");
	rba_buf_put_u8(b, '[');
	for (uint32_t i = 0; r->classes != NULL && i < r->nclasses; i++) {
		if (i)
			rba_buf_put(b, ", ", 2);
		rba_json_put_str(b, r->classes[i] ? r->classes[i] : "");
	}
	rba_buf_put(b, "], ", 3);
	rba_json_kv_num(b, "margin", r->margin, 1);
	rba_json_kv_num(b, "rebuilt_margin", r->rebuilt_margin, 1);
	rba_json_kv_num(b, "edge", r->edge, 1);
	rba_json_put_key(b, "standing");
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "verdict", audit_verdict_name(r->verdict), 1);
	rba_json_kv_str(b, "basis", r->verdict_basis, 1);
	rba_json_put_key(b, "audit_record");
	if (r->has_audit)
		rba_buf_printf(b, "%llu", (unsigned long long)r->audit_id);
	else
		rba_buf_put(b, "null", 4);
	rba_buf_put(b, "}, ", 3);
	rba_json_put_key(b, "digests");
	rba_buf_put_u8(b, '{');
	rba_json_kv_digest(b, "artifact_pinned", &r->artifact_pinned, 1, 1);
	rba_json_kv_digest(b, "artifact_rebuilt", &r->artifact_rebuilt, 1, 1);
	rba_json_kv_digest(b, "artifact_decisions", &r->artifact_decisions, 1, 1);
	rba_json_kv_digest(b, "policy", &r->policy_digest, 1, 1);
	rba_json_kv_digest(b, "sample", &r->sample_digest, 1, 1);
	rba_json_kv_digest(b, "sample_policy", &r->sample_policy, r->has_sample_policy, 0);
	rba_buf_put(b, "}, ", 3);
	if (with_inputs) {
		rba_json_put_key(b, "inputs");
		rba_buf_put_u8(b, '{');
		for (uint32_t i = 0; i < r->ncols; i++) {
			if (i)
				rba_buf_put(b, ", ", 2);
			rba_json_put_key(b, r->names[i]);
			rba_json_put_str(b, r->values[i]);
		}
		rba_buf_put(b, "}, ", 3);
	}
	rba_json_put_key(b, "timings");
	rba_buf_put_u8(b, '{');
	rba_json_kv_num(b, "verify_s", r->t_verify, 1);
	rba_json_kv_num(b, "lookup_s", r->t_lookup, 1);
	rba_json_kv_num(b, "rebuild_s", r->t_rebuild, 1);
	rba_json_kv_num(b, "total_s", r->t_total, 0);
	rba_buf_put(b, "}}", 2);
}
