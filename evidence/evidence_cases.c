/*
 * evidence_cases.c - format 3's every case (results.cases): read from
 * the store and scored at export, and held to the rest of the predicate
 * at verify, so that a picture of every case's scores (the report's
 * scatter) draws only numbers the signed file states and verify checked
 * against its counts.
 */
#include "evidence/evidence_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "sample/sample.h"
#include "sample/scorer.h"
#include "model/artifact.h"
#include "store/store.h"

struct cases_walk {
	struct ev *e;
	struct sample_scorer *sc;
	const struct sample_layout *l;
	uint32_t nclasses, rpos;
	float *probs;
	size_t cap_probs, cap;
	struct rba_detail *d;
};

static int
push_case(struct cases_walk *w, const char *id, const char *dec, double s,
	  double r)
{
	struct ev *e = w->e;
	struct ev_case *c;
	size_t ni = strlen(id), nd = strlen(dec);

	if (e->ncases_list == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct ev_case *p = realloc(e->cases_list, cap * sizeof(*p));
		if (p == NULL)
			return RBA_E_NOMEM;
		e->cases_list = p;
		w->cap = cap;
	}
	c = &e->cases_list[e->ncases_list];
	memset(c, 0, sizeof(*c));
	if ((c->own = malloc(ni + nd + 2)) == NULL)
		return RBA_E_NOMEM;
	memcpy(c->own, id, ni + 1);
	memcpy(c->own + ni + 1, dec, nd + 1);
	c->id.s = c->own;
	c->id.n = ni;
	c->stored_decision.s = c->own + ni + 1;
	c->stored_decision.n = nd;
	c->stored_score = s;
	c->rebuilt_score = r;
	e->ncases_list++;
	return 0;
}

static int
cases_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct cases_walk *w = ctx;
	const struct sample_layout *l = w->l;
	uint32_t bad = 0;
	int err;

	(void)chunk_no;
	if ((size_t)c->ncases * w->nclasses > w->cap_probs) {
		free(w->probs);
		w->cap_probs = (size_t)c->ncases * w->nclasses;
		if ((w->probs = malloc(w->cap_probs * sizeof(float))) == NULL) {
			w->cap_probs = 0;
			return RBA_E_NOMEM;
		}
	}
	err = sample_scorer_run(w->sc, c, w->probs, &bad, w->d);
	if (err == RBA_E_SCHEMA)
		return evidence_fail(w->d, RBA_E_SCHEMA, "the rebuilt artifact cannot "
				     "score case '%s' of the sample",
				     bad < c->ncases ? c->ids[bad] : "?");
	if (err)
		return err;
	for (uint32_t i = 0; i < c->ncases; i++) {
		const double *sv = c->scores + (size_t)i * c->nscores;
		double s = l->scored_by == SAMPLE_SCORED_MODEL ? sv[l->positive] : sv[0];
		double r = (double)w->probs[(size_t)i * w->nclasses + w->rpos];

		if ((err = push_case(w, c->ids[i],
				     c->decisions[c->decision_codes[i]], s, r)) != 0)
			return err;
	}
	return 0;
}

int
evidence_cases_load(struct store_txn *txn, struct ev *e, struct rba_detail *d)
{
	struct store_sample_info info;
	struct sample_layout l;
	struct artifact art;
	struct policy *pol = NULL;
	struct rba_digest want, rebuilt;
	struct cases_walk w;
	uint8_t *bytes = NULL;
	size_t n = 0;
	int err, decoded = 0;

	memset(&info, 0, sizeof(info));
	memset(&l, 0, sizeof(l));
	memset(&art, 0, sizeof(art));
	memset(&w, 0, sizeof(w));
	if ((err = evidence_ev_policy(e, &pol, d)) != 0)
		return err;
	if (pol->argmax) {
		err = evidence_fail(d, RBA_E_SCHEMA, "audit %.0f was judged by argmax "
				    "over the classes: every case's scores are written "
				    "for a policy of decision bands only", e->id);
		goto out;
	}
	if ((err = evidence_sample_wanted(e, "cases", "write", &want, d)) != 0)
		goto out;
	if (e->art_rebuilt.s == NULL || rba_digest_parse(e->art_rebuilt.s, &rebuilt) != 0) {
		err = evidence_fail(d, RBA_E_NOTFOUND, "audit %.0f names no rebuilt "
				    "artifact: there are no rebuilt scores to write", e->id);
		goto out;
	}
	err = evidence_sample_load(txn, e, &want, "cases", "written", &info, &l, d);
	if (err)
		goto out;
	err = store_blob_load(txn, &rebuilt, ARTIFACT_MAX_BYTES, &bytes, &n, d);
	if (err == RBA_E_NOTFOUND) {
		err = evidence_fail(d, RBA_E_NOTFOUND, "the rebuilt artifact %s of audit "
				    "%.0f is not in the store (it holds the pinned "
				    "artifact and the rebuilt ones audits kept): the "
				    "rebuilt scores cannot be written",
				    sv_show(e->art_rebuilt), e->id);
		goto out;
	}
	if (err)
		goto out;
	if ((err = artifact_decode(bytes, n, &art, d)) != 0)
		goto out;
	decoded = 1;
	if (art.spec.positive == ENCODE_NO_POSITIVE || art.spec.positive >= art.spec.nclasses) {
		err = evidence_fail(d, RBA_E_SCHEMA, "the rebuilt artifact has no positive "
				    "class: it gives no score to write");
		goto out;
	}
	w.e = e;
	w.l = &l;
	w.nclasses = art.spec.nclasses;
	w.rpos = art.spec.positive;
	w.d = d;
	if ((err = sample_scorer_new(&art, &w.sc, d)) != 0 ||
	    (err = sample_scorer_bind(w.sc, &l, d)) != 0)
		goto out;
	err = sample_walk(txn, e->version.s, &l, cases_chunk, &w, d);
out:
	free(w.probs);
	sample_scorer_free(w.sc);
	if (decoded)
		artifact_release(&art);
	free(bytes);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	policy_free(pol);
	return err;
}

static int
id_cmp(const void *a, const void *b)
{
	const struct ev_case *x = *(const struct ev_case *const *)a;
	const struct ev_case *y = *(const struct ev_case *const *)b;
	size_t n = x->id.n < y->id.n ? x->id.n : y->id.n;
	int c = memcmp(x->id.s, y->id.s, n);

	return c != 0 ? c : x->id.n < y->id.n ? -1 : x->id.n > y->id.n;
}

static const struct ev_case *
find_case(const struct ev_case *const *byid, size_t n, struct sv id)
{
	size_t lo = 0, hi = n;
	struct ev_case key;
	const struct ev_case *kp = &key;

	key.id = id;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = id_cmp(&kp, &byid[mid]);
		if (c == 0)
			return byid[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

int
evidence_cases_check(const struct ev *e, const struct policy *pol,
		     struct rba_detail *d)
{
	double margin = pol->near_margin, weak = AUDIT_WEAK_MARGINS * pol->near_margin;
	double maxd = 0, maxd32 = 0;
	uint64_t flips = 0, near = 0, weakn = 0, dis = 0;
	const struct ev_case **byid;
	int err = 0;

	if (pol->argmax)
		return evidence_fail(d, RBA_E_SCHEMA, "results.cases under an argmax "
				     "policy: every case's scores are written for "
				     "decision bands only");
	if ((double)e->ncases_list != e->cases)
		return evidence_fail(d, RBA_E_SCHEMA, "results.cases lists %zu cases, "
				     "the sample has %.0f", e->ncases_list, e->cases);
	for (size_t i = 0; i < e->ncases_list; i++) {
		const struct ev_case *c = &e->cases_list[i];
		double sm = 0, rm = 0, dl = fabs(c->rebuilt_score - c->stored_score);
		double dl32 = fabs(c->rebuilt_score - (double)(float)c->stored_score);
		const char *rdec = policy_decide(pol, c->rebuilt_score, &rm);
		const char *sdec = policy_decide(pol, c->stored_score, &sm);

		if (i == 0 || dl > maxd)
			maxd = dl;
		if (i == 0 || dl32 > maxd32)
			maxd32 = dl32;
		if (rdec == NULL || !sv_is(c->stored_decision, rdec))
			flips++;
		if (sdec == NULL || !sv_is(c->stored_decision, sdec))
			dis++;
		if (sm <= margin)
			near++;
		if (sm <= weak)
			weakn++;
	}
	if ((double)flips != e->flips)
		return evidence_fail(d, RBA_E_SCHEMA, "results.cases give %llu flipped "
				     "decisions under the policy, results.flips says "
				     "%.0f", (unsigned long long)flips, e->flips);
	if ((double)dis != e->disagreements)
		return evidence_fail(d, RBA_E_SCHEMA, "results.cases give %llu stored "
				     "decisions that are not the policy's, results."
				     "policy_disagreements says %.0f",
				     (unsigned long long)dis, e->disagreements);
	if ((double)near != e->near_cases || (double)weakn != e->weak_cases)
		return evidence_fail(d, RBA_E_SCHEMA, "results.cases give %llu "
				     "near-threshold and %llu weak-band cases, results "
				     "says %.0f and %.0f", (unsigned long long)near,
				     (unsigned long long)weakn, e->near_cases,
				     e->weak_cases);
	/* The delta at binary32, the stored score rounded first (doc/
	 * design.md 8.2), or, in records written before, as stored. */
	if (e->ncases_list > 0 && maxd32 != e->max_delta && maxd != e->max_delta)
		return evidence_fail(d, RBA_E_SCHEMA, "results.cases give a largest "
				     "|delta| of %.17g, results.max_score_delta says "
				     "%.17g", maxd32, e->max_delta);
	byid = malloc((e->ncases_list ? e->ncases_list : 1) * sizeof(*byid));
	if (byid == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < e->ncases_list; i++)
		byid[i] = &e->cases_list[i];
	qsort(byid, e->ncases_list, sizeof(*byid), id_cmp);
	for (size_t i = 1; i < e->ncases_list && err == 0; i++)
		if (id_cmp(&byid[i - 1], &byid[i]) == 0)
			err = evidence_fail(d, RBA_E_SCHEMA, "results.cases lists case "
					    "'%s' twice", sv_show(byid[i]->id));
	for (size_t i = 0; i < e->nflipped && err == 0; i++) {
		const struct ev_flip *f = &e->flipped[i];
		const struct ev_case *c = find_case(byid, e->ncases_list, f->id);

		if (c == NULL)
			err = evidence_fail(d, RBA_E_SCHEMA, "flipped case '%s' is not "
					    "in results.cases", sv_show(f->id));
		else if (c->stored_score != f->stored_score ||
			 c->rebuilt_score != f->rebuilt_score ||
			 !sv_eq(c->stored_decision, f->stored_decision))
			err = evidence_fail(d, RBA_E_SCHEMA, "flipped case '%s' has other "
					    "scores or another stored decision in "
					    "results.cases", sv_show(f->id));
	}
	free(byid);
	return err;
}
