/*
 * audit_pass.c - step 6 of audit_version: the pass over the sample that
 * reads (and so verifies) every chunk, scores it with the rebuilt model
 * and compares, on one thread or on workers fed in stored order.
 */
#include "audit/audit_pass.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "audit/inputs.h"
#include "sample/scorer.h"

#include "common/rbatime.h"

#define MAX_SCORES SAMPLE_MAX_SCORES

void
audit_flip_release(struct audit_flip *f)
{
	free(f->id);
	free(f->stored_decision);
	free(f->rebuilt_decision);
}

void
audit_tally_release(struct audit_tally *t)
{
	for (size_t i = 0; i < t->nlisted; i++)
		audit_flip_release(&t->listed[i]);
	free(t->listed);
	memset(t, 0, sizeof(*t));
}

struct worker {
	const struct audit_cmp *k;
	struct sample_scorer *sc;
	struct sample_chunk c;
	float *probs;
	size_t cap_probs;
	int *dmap;
	size_t cap_dmap;
	double sv[MAX_SCORES], rv[MAX_SCORES];
};

static int
name_of(const struct audit_cmp *k, const char *s)
{
	for (size_t i = 0; i < k->nnames; i++)
		if (strcmp(k->names[i], s) == 0)
			return (int)i;
	return -1;
}

static int
list_flip(const struct audit_cmp *k, struct audit_tally *t, const char *id, double s,
	  double r, const char *sdec, const char *rdec, double sm, double rm)
{
	struct audit_flip *f;

	if (t->nlisted >= k->max_listed)
		return 0;
	if (t->nlisted == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 16;
		f = realloc(t->listed, nc * sizeof(*f));
		if (f == NULL)
			return RBA_E_NOMEM;
		t->listed = f;
		t->cap = nc;
	}
	f = &t->listed[t->nlisted++];
	memset(f, 0, sizeof(*f));
	f->id = strdup(id);
	f->stored_decision = strdup(sdec);
	f->rebuilt_decision = strdup(rdec);
	f->stored_score = s;
	f->rebuilt_score = r;
	f->margin = sm;
	f->rebuilt_margin = rm;
	f->edge = policy_nearest_edge(k->pol, s);
	if (f->id == NULL || f->stored_decision == NULL || f->rebuilt_decision == NULL)
		return RBA_E_NOMEM;
	return 0;
}

/*
 * A stored score at the precision the model scores in: the nearest
 * binary32 (doc/design.md 8.2), so that the tool's own 9-digit output
 * logged by production reads back as the very float the model gave, and
 * a log one binary32 step away or more differs by that step in full.
 * Scores stored from the model are binary32 values already.
 */
static double
at_model_precision(double s)
{
	return (double)(float)s;
}

/*
 * Whether a case's stored score is off the rebuilt model's at the
 * model's own precision: n scores from sv[s0] and rv[r0] on, the stored
 * one rounded to binary32 first (so the tool's own 9-digit output reads
 * back as the very float it printed), more than the layout's declared
 * logging precision apart, or one of them NaN.
 */
static int
off_precision(const struct sample_layout *l, const double *sv, const float *rv,
	      uint32_t n, uint32_t s0, uint32_t r0)
{
	double prec = l->has_score_precision ? l->score_precision : 0.0;

	for (uint32_t j = 0; j < n; j++) {
		float s = (float)sv[s0 + j], r = rv[r0 + j];
		if (!(fabs((double)s - (double)r) <= prec))
			return 1;
	}
	return 0;
}

/* Room in w for chunk c's rebuilt scores and its decisions' map. */
static int
worker_grow(struct worker *w, const struct sample_chunk *c)
{
	uint32_t C = w->k->C;

	if ((size_t)c->ncases * C > w->cap_probs) {
		free(w->probs);
		w->probs = malloc((size_t)c->ncases * C * sizeof(float));
		w->cap_probs = w->probs ? (size_t)c->ncases * C : 0;
		if (w->probs == NULL)
			return RBA_E_NOMEM;
	}
	if (c->ndecisions > w->cap_dmap) {
		free(w->dmap);
		w->dmap = malloc(c->ndecisions * sizeof(int));
		w->cap_dmap = w->dmap ? c->ndecisions : 0;
		if (w->dmap == NULL)
			return RBA_E_NOMEM;
	}
	return 0;
}

/* Scores one decoded chunk with the rebuilt model and compares. */
static int
compare_chunk(struct worker *w, const struct sample_chunk *c, struct audit_tally *t)
{
	const struct audit_cmp *k = w->k;
	const struct policy *pol = k->pol;
	const struct sample_layout *l = k->l;
	uint32_t C = k->C, ns = c->nscores, bad = 0;
	double margin = pol->near_margin, weak = AUDIT_WEAK_MARGINS * pol->near_margin;
	struct rba_detail dd;
	int err;

	if ((err = worker_grow(w, c)) != 0)
		return err;
	rba_detail_clear(&dd);
	err = sample_scorer_run(w->sc, c, w->probs, &bad, &dd);
	if (err == RBA_E_SCHEMA) {
		t->bad = 1;
		snprintf(t->bad_reason, sizeof(t->bad_reason), "%s", dd.reason);
		return 0;
	}
	if (err)
		return err;
	for (uint32_t j = 0; j < c->ndecisions; j++)
		w->dmap[j] = name_of(k, c->decisions[j]);
	for (uint32_t i = 0; i < c->ncases; i++) {
		const double *sv = c->scores + (size_t)i * ns;
		const float *rv = w->probs + (size_t)i * C;
		int sidx = w->dmap[c->decision_codes[i]], ridx, pidx;
		double s, r, delta, sm, rm;
		const char *rdec;
		long rb;

		if (!pol->argmax) {
			s = l->scored_by == SAMPLE_SCORED_MODEL ? sv[l->positive] : sv[0];
			r = rv[k->rpos];
			delta = fabs(r - at_model_precision(s));
			rb = policy_decide_band(pol, r, &rm);
			rdec = rb < 0 ? NULL : pol->bands[rb].decision;
			ridx = rb < 0 ? -1 : k->band_name[rb];
			if (memcmp(&s, &r, sizeof(s)) == 0) {
				/* the same double: policy_decide is a
				 * function of it */
				sm = rm;
				pidx = ridx;
			} else {
				long sb = policy_decide_band(pol, s, &sm);
				pidx = sb < 0 ? -1 : k->band_name[sb];
			}
		} else {
			size_t st, rt;
			delta = 0;
			for (uint32_t j = 0; j < C; j++) {
				double dj;
				w->sv[j] = sv[j];
				w->rv[j] = rv[j];
				dj = w->rv[j] - at_model_precision(w->sv[j]);
				if (fabs(dj) > delta || isnan(dj))
					delta = fabs(dj);
			}
			st = policy_decide_argmax(pol, w->sv, C, &sm);
			rt = policy_decide_argmax(pol, w->rv, C, &rm);
			s = st < C ? w->sv[st] : NAN;
			r = rt < C ? w->rv[rt] : NAN;
			ridx = rt < C ? (int)rt : -1;
			pidx = st < C ? (int)st : -1;
			rdec = ridx >= 0 ? k->names[ridx] : NULL;
		}
		t->cases++;
		if (off_precision(l, sv, rv, pol->argmax ? C : 1,
				  pol->argmax ? 0 : (l->scored_by == SAMPLE_SCORED_MODEL
							     ? l->positive : 0),
				  pol->argmax ? 0 : k->rpos)) {
			if (t->off++ == 0)
				snprintf(t->off_case, sizeof(t->off_case), "%s",
					 c->ids[i]);
		}
		if (!t->has_max || delta > t->max_delta) {
			t->max_delta = delta;
			t->has_max = 1;
			snprintf(t->max_case, sizeof(t->max_case), "%s", c->ids[i]);
		}
		if (sm <= margin)
			t->near++;
		if (sm <= weak)
			t->weak++;
		if (pidx != sidx)
			t->disagree++;
		if (ridx < 0 || ridx != sidx) {
			t->flips++;
			err = list_flip(k, t, c->ids[i], s, r,
					c->decisions[c->decision_codes[i]],
					rdec ? rdec : "(none)", sm, rm);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Adds t into the running total (chunks in stored order). */
static int
tally_merge(const struct audit_cmp *k, struct audit_tally *tot, struct audit_tally *t)
{
	int err = 0;

	tot->busy += t->busy;
	if (tot->bad)
		return 0;
	tot->cases += t->cases;
	tot->flips += t->flips;
	tot->near += t->near;
	tot->weak += t->weak;
	tot->disagree += t->disagree;
	if (t->off > 0 && tot->off == 0)
		memcpy(tot->off_case, t->off_case, sizeof(tot->off_case));
	tot->off += t->off;
	if (t->has_max && (!tot->has_max || t->max_delta > tot->max_delta)) {
		tot->has_max = 1;
		tot->max_delta = t->max_delta;
		memcpy(tot->max_case, t->max_case, sizeof(tot->max_case));
	}
	for (size_t i = 0; i < t->nlisted && err == 0; i++) {
		struct audit_flip *f = &t->listed[i];
		err = list_flip(k, tot, f->id, f->stored_score, f->rebuilt_score,
				f->stored_decision, f->rebuilt_decision, f->margin,
				f->rebuilt_margin);
	}
	if (t->bad) {
		tot->bad = 1;
		memcpy(tot->bad_reason, t->bad_reason, sizeof(tot->bad_reason));
	}
	return err;
}

enum { JOB_FREE = 0, JOB_READY, JOB_BUSY, JOB_DONE };

struct job {
	uint64_t seq;
	uint32_t chunk_no;
	struct store_index_sum ids; /* its (case id, chunk) pairs */
	uint8_t *raw;
	size_t n, cap;
	struct audit_tally t;
	int err;
	struct rba_detail d;
	int state;
};

struct pass {
	const struct audit_cmp *k;
	const struct sample_layout *l;
	void (*progress)(void *ctx, const char *version, uint64_t done,
			 uint64_t total);
	void *progress_ctx;
	const char *version;
	uint64_t expect; /* cases in the sample, for progress */
	struct audit_tally total;
	int err;
	struct rba_detail *d;
	uint64_t seq;
	/* one thread */
	struct worker *w0;
	/* several */
	unsigned nthreads;
	struct worker *workers;
	pthread_t *tids;
	unsigned started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *jobs;
	size_t njobs;
	uint64_t next_merge;
	int stop;
	/* the case index, summed from the chunks as they are decoded */
	const char **ids; /* SAMPLE_CHUNK_CASES */
	struct store_index_sum chunks_sum;
};

/*
 * A dispute finds its case through the index, so an audit that reads
 * the chunks vouches for the index too: the (case id, chunk) pairs of
 * the chunks are summed here and compared at the end with the sum of
 * the index's entries (store_sample_index_sum).
 */
static int
check_index(struct pass *p, uint32_t chunk_no, const uint8_t *raw, size_t n,
	    struct rba_detail *d)
{
	uint32_t count;
	int err = sample_chunk_ids(raw, n, p->ids, &count, d);

	if (err == 0)
		store_index_sum_add_packed(&p->chunks_sum, p->ids, count,
					   chunk_no);
	return err;
}

/*
 * Decodes, scores and compares chunk chunk_no (raw, n bytes), its case
 * ids summed into ids.  A chunk that does not decode fails as
 * check_index would have failed it first, when its ids are what is
 * wrong (sample_chunk_ids reads them as the decoder does).
 */
static int
process(struct pass *p, struct worker *w, uint32_t chunk_no,
	const uint8_t *raw, size_t n, struct store_index_sum *ids,
	struct audit_tally *t, struct rba_detail *d)
{
	double t0 = rba_time_mono();
	int err = sample_chunk_decode_stored(raw, n, p->l->ncols,
					     p->l->nscores, p->l->id_col, &w->c,
					     d);

	if (err != 0) {
		uint32_t count;
		int ierr = sample_chunk_ids(raw, n, NULL, &count, d);
		if (ierr != 0)
			err = ierr;
	} else {
		store_index_sum_add_packed(ids, w->c.ids, w->c.ncases,
					   chunk_no);
		err = compare_chunk(w, &w->c, t);
	}
	t->busy += rba_time_mono() - t0;
	return err;
}

static void
progress(struct pass *p)
{
	if (p->progress != NULL)
		p->progress(p->progress_ctx, p->version, p->total.cases,
			    p->expect);
}

static int
one_chunk(void *ctx, uint32_t chunk_no, const uint8_t *raw, size_t n)
{
	struct pass *p = ctx;
	struct audit_tally t;
	int err;

	memset(&t, 0, sizeof(t));
	if (p->total.bad)
		/* keep reading: the digests and the index still get
		 * checked */
		return check_index(p, chunk_no, raw, n, p->d);
	err = process(p, p->w0, chunk_no, raw, n, &p->chunks_sum, &t, p->d);
	if (err == 0)
		err = tally_merge(p->k, &p->total, &t);
	audit_tally_release(&t);
	if (err == 0)
		progress(p);
	return err;
}

/*
 * 1 when mu is locked.  A default mutex cannot say by whom, so this
 * checks the weaker half of "the caller holds mu".
 */
static int
mu_locked(pthread_mutex_t *mu)
{
	int r = pthread_mutex_trylock(mu);

	if (r == 0)
		pthread_mutex_unlock(mu);
	return r == EBUSY;
}

/* Merges finished jobs in order. */
static void
merge_done(struct pass *p)
{
	assert(mu_locked(&p->mu));
	for (;;) {
		struct job *j = NULL;
		for (size_t i = 0; i < p->njobs; i++)
			if (p->jobs[i].state == JOB_DONE &&
			    p->jobs[i].seq == p->next_merge)
				j = &p->jobs[i];
		if (j == NULL)
			return;
		if (j->err && p->err == 0) {
			p->err = j->err;
			if (p->d != NULL)
				*p->d = j->d;
		}
		store_index_sum_merge(&p->chunks_sum, &j->ids);
		if (p->err == 0 && (p->err = tally_merge(p->k, &p->total, &j->t)) == 0)
			progress(p);
		audit_tally_release(&j->t);
		j->state = JOB_FREE;
		p->next_merge++;
		pthread_cond_broadcast(&p->cv);
	}
}

struct wctx {
	struct pass *p;
	struct worker *w;
};

/*
 * Runs the oldest ready job on worker w, mu held on entry and on
 * return (released while the job runs).  0 when no job was ready.
 */
static int
run_ready(struct pass *p, struct worker *w)
{
	struct job *j = NULL;

	assert(mu_locked(&p->mu));
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i].state == JOB_READY &&
		    (j == NULL || p->jobs[i].seq < j->seq))
			j = &p->jobs[i];
	if (j == NULL)
		return 0;
	j->state = JOB_BUSY;
	pthread_mutex_unlock(&p->mu);
	memset(&j->t, 0, sizeof(j->t));
	memset(&j->ids, 0, sizeof(j->ids));
	rba_detail_clear(&j->d);
	j->err = process(p, w, j->chunk_no, j->raw, j->n, &j->ids, &j->t,
			 &j->d);
	pthread_mutex_lock(&p->mu);
	j->state = JOB_DONE;
	pthread_cond_broadcast(&p->cv);
	return 1;
}

static void *
worker_loop(void *arg)
{
	struct wctx *x = arg;
	struct pass *p = x->p;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (run_ready(p, x->w))
			continue;
		if (p->stop)
			break;
		pthread_cond_wait(&p->cv, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int
queue_chunk(void *ctx, uint32_t chunk_no, const uint8_t *raw, size_t n)
{
	struct pass *p = ctx;
	struct job *j = NULL;
	int err;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		merge_done(p);
		if (p->err)
			break;
		for (size_t i = 0; i < p->njobs && j == NULL; i++)
			if (p->jobs[i].state == JOB_FREE)
				j = &p->jobs[i];
		if (j != NULL)
			break;
		/* every job taken: score one here rather than wait */
		if (!run_ready(p, p->w0))
			pthread_cond_wait(&p->cv, &p->mu);
	}
	err = p->err;
	pthread_mutex_unlock(&p->mu);
	if (err)
		return err;
	/* A free job is touched by this thread alone until it is READY. */
	assert(j->state == JOB_FREE);
	if (n > j->cap) {
		free(j->raw);
		j->raw = malloc(n);
		j->cap = j->raw ? n : 0;
		if (j->raw == NULL)
			return RBA_E_NOMEM;
	}
	memcpy(j->raw, raw, n);
	j->n = n;
	j->chunk_no = chunk_no;
	pthread_mutex_lock(&p->mu);
	j->seq = p->seq++;
	j->state = JOB_READY;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

static void
worker_release(struct worker *w)
{
	sample_scorer_free(w->sc);
	sample_chunk_release(&w->c);
	free(w->probs);
	free(w->dmap);
	memset(w, 0, sizeof(*w));
}

static int
worker_init(struct worker *w, const struct audit_cmp *k, struct rba_detail *d)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->k = k;
	sample_chunk_init(&w->c);
	err = sample_scorer_new(k->model, &w->sc, d);
	if (err == 0)
		err = sample_scorer_bind(w->sc, k->l, d);
	return err;
}

/*
 * The chunks handed to cb in stored order, and the case index's sum into
 * idx, walked beside them (store_sample_stream_indexed).  With one
 * thread scoring (scorers 1), the walk takes the waits of that thread
 * and the store's helper: a thread of its own shares the helper's core,
 * and each time the helper wakes it may take the scoring thread's core
 * for a moment (about 20 ms of a 200 ms pass of 1,000,000 cases).  With
 * more scorers the cores are shared anyway, and a thread of its own
 * measured faster.
 */
static int
stream(struct store_txn *txn, struct pass *p, int scorers,
       int (*cb)(void *ctx, uint32_t chunk_no, const uint8_t *raw, size_t n),
       struct store_index_sum *idx, struct rba_detail *d)
{
	return store_sample_stream_indexed(txn, p->version, cb, p, scorers > 1,
					   idx, d);
}

/*
 * Reads (and so verifies) the whole sample, scoring and comparing every
 * chunk, on one thread or on nthreads threads in all: this one reads
 * each chunk (the store's helper decompresses and hashes it) while
 * nthreads - 1 workers decode, score and compare the chunks it queued;
 * when every job is taken, and at the end, this thread scores a queued
 * chunk itself rather than wait.  The total is the same either way:
 * chunks are merged in stored order.
 */
static int
score_pass(struct store_txn *txn, struct pass *p, unsigned nthreads,
	   struct store_index_sum *idx, struct rba_detail *d)
{
	struct wctx *ctx = NULL;
	int err;

	p->d = d;
	if (nthreads <= 1) {
		struct worker w;
		if ((err = worker_init(&w, p->k, d)) == 0) {
			p->w0 = &w;
			err = stream(txn, p, 1, one_chunk, idx, d);
		}
		worker_release(&w);
		return err;
	}
	p->njobs = 2 * (size_t)nthreads;
	nthreads--; /* the workers: this thread reads, and scores a chunk
		     * when the queue is full (on workers[nthreads]) */
	p->nthreads = nthreads;
	p->workers = calloc(nthreads + 1, sizeof(*p->workers));
	p->tids = calloc(nthreads, sizeof(*p->tids));
	p->jobs = calloc(p->njobs, sizeof(*p->jobs));
	ctx = calloc(nthreads, sizeof(*ctx));
	if (p->workers == NULL || p->tids == NULL || p->jobs == NULL || ctx == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (unsigned i = 0; i <= nthreads; i++)
		if ((err = worker_init(&p->workers[i], p->k, d)) != 0)
			goto out;
	p->w0 = &p->workers[nthreads];
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (unsigned i = 0; i < nthreads; i++) {
		ctx[i].p = p;
		ctx[i].w = &p->workers[i];
		if ((err = pthread_create(&p->tids[i], NULL, worker_loop, &ctx[i])) != 0)
			break;
		p->started++;
	}
	if (err == 0)
		err = stream(txn, p, 2, queue_chunk, idx, d);
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	for (;;) {
		int busy = 0;
		merge_done(p);
		for (size_t i = 0; i < p->njobs; i++)
			busy |= p->jobs[i].state != JOB_FREE;
		if (!busy || (p->started == 0))
			break;
		if (!run_ready(p, p->w0))
			pthread_cond_wait(&p->cv, &p->mu);
	}
	if (err == 0)
		err = p->err;
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->started; i++)
		pthread_join(p->tids[i], NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
out:
	for (unsigned i = 0; p->workers != NULL && i <= nthreads; i++)
		worker_release(&p->workers[i]);
	for (size_t i = 0; p->jobs != NULL && i < p->njobs; i++) {
		free(p->jobs[i].raw);
		audit_tally_release(&p->jobs[i].t);
	}
	free(p->workers);
	free(p->tids);
	free(p->jobs);
	free(ctx);
	return err;
}

int
audit_pass_run(struct store_txn *txn, const char *version,
	       const struct audit_cmp *k, uint64_t expect, unsigned nthreads,
	       void (*on_progress)(void *ctx, const char *version,
				   uint64_t done, uint64_t total),
	       void *progress_ctx, struct audit_tally *total,
	       struct rba_detail *d)
{
	struct pass p;
	struct store_index_sum idx;
	int err;

	memset(&p, 0, sizeof(p));
	p.k = k;
	p.l = k->l;
	p.version = version;
	p.expect = expect;
	p.progress = on_progress;
	p.progress_ctx = progress_ctx;
	p.total = *total;
	p.ids = calloc(SAMPLE_CHUNK_CASES, sizeof(*p.ids));
	if (p.ids == NULL)
		return RBA_E_NOMEM;
	err = score_pass(txn, &p, nthreads, &idx, d);
	free(p.ids);
	if (err == 0 && (idx.n != p.chunks_sum.n || idx.a != p.chunks_sum.a ||
			 idx.b != p.chunks_sum.b)) {
		rba_detail_key(d, version);
		err = rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
			       "tampered: the case index of version '%s' "
			       "is damaged: its entries are not the case "
			       "ids of the chunks (run 'rebuild-audit "
			       "store check')", version);
	}
	*total = p.total;
	return err;
}
