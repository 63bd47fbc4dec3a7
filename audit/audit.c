/*
 * audit.c - audit_version: verify, diff, rebuild, score the sample,
 * verdict, record (the steps are listed in audit.h).
 */
#include "audit/audit.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/inputs.h"
#include "audit/json.h"
#include "audit/scorer.h"
#include "rebuild/envrec.h"

#define MAX_SCORES SAMPLE_MAX_SCORES

const char *
audit_verdict_name(int verdict)
{
	switch (verdict) {
	case AUDIT_BIT_IDENTICAL: return "bit-identical";
	case AUDIT_METRIC_EQUIVALENT: return "metric-equivalent";
	case AUDIT_NOT_REPRODUCIBLE: return "not-reproducible";
	default: return "not-measured";
	}
}

int
audit_verdict_exit(int verdict)
{
	switch (verdict) {
	case AUDIT_BIT_IDENTICAL:
	case AUDIT_METRIC_EQUIVALENT: return 0;
	case AUDIT_NOT_REPRODUCIBLE: return 1;
	default: return 2;
	}
}

static void
link_release(struct audit_link *l)
{
	free(l->pinned);
	free(l->current);
	free(l->note);
}

static void
strv_free(char **v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}

static void
flip_release(struct audit_flip *f)
{
	free(f->id);
	free(f->stored_decision);
	free(f->rebuilt_decision);
}

void
audit_report_release(struct audit_report *r)
{
	if (r == NULL)
		return;
	free(r->version);
	strv_free(r->reasons, r->nreasons);
	strv_free(r->warnings, r->nwarnings);
	free(r->error_what);
	free(r->pins_text);
	free(r->policy_text);
	link_release(&r->code_revision);
	link_release(&r->trainer_abi);
	link_release(&r->environment);
	link_release(&r->config);
	link_release(&r->snapshot_link);
	free(r->env_pinned_text);
	free(r->env_current_text);
	for (size_t i = 0; i < r->nenv_fields; i++) {
		free(r->env_fields[i].key);
		free(r->env_fields[i].pinned);
		free(r->env_fields[i].current);
	}
	free(r->env_fields);
	free(r->max_delta_case);
	for (size_t i = 0; i < r->nlisted; i++)
		flip_release(&r->listed[i]);
	free(r->listed);
	memset(r, 0, sizeof(*r));
}

static char *
dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
dupf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static char *
dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void
strv_add(char ***v, size_t *n, char *s)
{
	char **nv;

	if (s == NULL)
		return;
	nv = realloc(*v, (*n + 1) * sizeof(char *));
	if (nv == NULL) {
		free(s);
		return;
	}
	nv[(*n)++] = s;
	*v = nv;
}

#define REASON(r, ...) strv_add(&(r)->reasons, &(r)->nreasons, dupf(__VA_ARGS__))
#define WARN(r, ...) strv_add(&(r)->warnings, &(r)->nwarnings, dupf(__VA_ARGS__))

static char *
hexdup(const struct rba_digest *dg)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(dg, hex);
	return strdup(hex);
}

/* ---- links ------------------------------------------------------------ */

static void
set_link(struct audit_link *l, int state, char *pinned, char *current,
	 char *note)
{
	l->state = state;
	l->pinned = pinned;
	l->current = current;
	l->note = note;
}

/* What differs in shape between the stored and the rebuilt model. */
static const char *
shape_difference(const struct artifact *a, const struct artifact *b)
{
	const struct encode_spec *s = &a->spec, *t = &b->spec;

	if (s->nclasses != t->nclasses || s->positive != t->positive)
		return "classes";
	for (uint32_t i = 0; i < s->nclasses; i++)
		if (strcmp(s->classes[i], t->classes[i]) != 0)
			return "classes";
	if (s->ncolumns != t->ncolumns)
		return "input columns";
	for (uint32_t i = 0; i < s->ncolumns; i++) {
		const struct encode_column *x = &s->columns[i], *y = &t->columns[i];
		if (strcmp(x->name, y->name) != 0 || x->kind != y->kind)
			return "input columns";
		if (x->nlevels != y->nlevels)
			return "categorical levels";
		for (uint32_t k = 0; k < x->nlevels; k++)
			if (strcmp(x->levels[k], y->levels[k]) != 0)
				return "categorical levels";
	}
	if (a->model.nlayers != b->model.nlayers)
		return "layers";
	for (uint32_t l = 0; l <= a->model.nlayers; l++)
		if (a->model.sizes[l] != b->model.sizes[l])
			return "layer sizes";
	return NULL;
}

static int
env_links(struct audit_inputs *c, struct audit_report *r)
{
	struct rba_buf cur;
	struct envrec pinned, now;
	struct envrec_delta *delta = NULL;
	size_t nd = 0;
	int err;

	memset(&pinned, 0, sizeof(pinned));
	memset(&now, 0, sizeof(now));
	rba_buf_init(&cur);
	err = envrec_capture(c->pins->determinism.mode, c->pins->determinism.threads,
			     &cur);
	if (err == 0)
		err = rba_buf_status(&cur);
	if (err)
		goto out;
	r->env_current_text = strdup(rba_buf_cstr(&cur));
	r->env_pinned_text = strdup(c->v.env_text ? c->v.env_text : "");
	envrec_digest((const char *)cur.p, cur.len, &r->env_current);
	r->env_pinned = c->pins->environment;
	if (envrec_parse(r->env_pinned_text, strlen(r->env_pinned_text), &pinned,
			 NULL) != 0) {
		set_link(&r->environment, AUDIT_LINK_UNKNOWN,
			 hexdup(&r->env_pinned), hexdup(&r->env_current),
			 strdup("the pinned environment record cannot be read"));
		goto out;
	}
	if ((err = envrec_parse((const char *)cur.p, cur.len, &now, NULL)) != 0 ||
	    (err = envrec_diff(&pinned, &now, &delta, &nd)) != 0)
		goto out;
	r->env_fields = calloc(nd ? nd : 1, sizeof(*r->env_fields));
	if (r->env_fields == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < nd; i++) {
		r->env_fields[i].key = strdup(delta[i].key);
		r->env_fields[i].pinned = dup0(delta[i].old_value);
		r->env_fields[i].current = dup0(delta[i].new_value);
	}
	r->nenv_fields = nd;
	set_link(&r->environment, nd ? AUDIT_LINK_CHANGED : AUDIT_LINK_SAME,
		 hexdup(&r->env_pinned), hexdup(&r->env_current), NULL);
out:
	free(delta);
	envrec_release(&pinned);
	envrec_release(&now);
	rba_buf_release(&cur);
	return err;
}

static int
links(struct audit_inputs *c, struct audit_report *r)
{
	const char *rev_then = c->has_prov ? c->prov.code_revision
					   : c->pins->code_revision;
	const char *rev_now = envrec_code_revision();
	int err;

	r->abi_pinned = c->pins->trainer_abi;
	r->abi_artifact = c->stored.abi;
	r->abi_current = rebuild_abi_current();
	policy_pins_config_hash(c->pins, &r->config_current);
	if (c->has_prov) {
		r->has_config_registered = 1;
		r->config_registered = c->prov.config;
	}
	if ((err = env_links(c, r)) != 0)
		return err;
	if (rev_then == NULL)
		set_link(&r->code_revision, AUDIT_LINK_UNKNOWN, NULL, strdup(rev_now),
			 strdup("the pins record no code revision"));
	else
		set_link(&r->code_revision,
			 strcmp(rev_then, rev_now) ? AUDIT_LINK_CHANGED : AUDIT_LINK_SAME,
			 strdup(rev_then), strdup(rev_now),
			 c->has_prov ? NULL
				     : strdup("the revision that registered the "
					      "version; the artifact came from a file"));
	/* trainer ABI: filled in once the rebuild says which ABI ran */
	if (c->has_prov) {
		int same = rba_digest_equal(&c->prov.config, &r->config_current);
		set_link(&r->config, same ? AUDIT_LINK_SAME : AUDIT_LINK_CHANGED,
			 hexdup(&c->prov.config), hexdup(&r->config_current),
			 same ? NULL
			      : strdup("the pins were edited after the artifact "
				       "was trained"));
		same = rba_digest_equal(&c->prov.snapshot, &c->v.snapshot);
		set_link(&r->snapshot_link, same ? AUDIT_LINK_SAME : AUDIT_LINK_CHANGED,
			 hexdup(&c->prov.snapshot), hexdup(&c->v.snapshot), NULL);
	} else {
		set_link(&r->config, AUDIT_LINK_UNKNOWN, NULL,
			 hexdup(&r->config_current),
			 strdup("the artifact was registered from a file: the store "
				"has no record of the pins that trained it"));
		set_link(&r->snapshot_link, AUDIT_LINK_UNKNOWN, NULL,
			 hexdup(&c->v.snapshot),
			 strdup("no record of the snapshot that trained the artifact"));
	}
	return 0;
}

static void
abi_link(struct audit_inputs *c, struct audit_report *r)
{
	r->abi_rebuilt = c->rb.abi;
	set_link(&r->trainer_abi,
		 r->abi_artifact != r->abi_rebuilt ? AUDIT_LINK_CHANGED
						   : AUDIT_LINK_SAME,
		 dupf("%u", r->abi_artifact), dupf("%u", r->abi_rebuilt),
		 r->abi_current != r->abi_rebuilt
			 ? dupf("this build trains new versions with ABI %u; the "
				"rebuild used the pinned ABI %u",
				r->abi_current, r->abi_rebuilt)
			 : NULL);
	/* A different shape can only come from the config or the data. */
	if (r->config.state == AUDIT_LINK_UNKNOWN && c->rebuilt_ok) {
		const char *what = shape_difference(&c->stored, &c->rebuilt);
		if (what != NULL) {
			free(r->config.note);
			r->config.state = AUDIT_LINK_CHANGED;
			r->config.note = dupf("the rebuilt model's %s differ from the "
					      "stored artifact's", what);
		}
	}
}

/* ---- scoring the sample ------------------------------------------------ */

/* What the comparison of some chunks found. */
struct tally {
	uint64_t cases, flips, near, weak, disagree;
	double max_delta;
	char max_case[STORE_CASE_ID_MAX + 1];
	int has_max;
	size_t nlisted, cap;
	struct audit_flip *listed;
	/* A case the rebuilt model could not take: scoring stops there. */
	int bad;
	char bad_reason[384];
	double busy; /* seconds spent decoding, scoring and comparing */
};

static void
tally_release(struct tally *t)
{
	for (size_t i = 0; i < t->nlisted; i++)
		flip_release(&t->listed[i]);
	free(t->listed);
	memset(t, 0, sizeof(*t));
}

/* The fixed facts every worker compares against. */
struct cmp {
	const struct policy *pol;
	const struct sample_layout *l;
	const struct artifact *model; /* the rebuilt one */
	uint32_t C;		      /* rebuilt classes */
	uint32_t rpos;		      /* rebuilt positive class */
	size_t nnames;
	const char **names; /* decisions the rebuilt model can reach */
	int *band_name;	    /* band -> names index */
	size_t max_listed;
};

struct worker {
	const struct cmp *k;
	struct audit_scorer *sc;
	struct sample_chunk c;
	float *probs;
	size_t cap_probs;
	int *dmap;
	size_t cap_dmap;
	double sv[MAX_SCORES], rv[MAX_SCORES];
};

static int
name_of(const struct cmp *k, const char *s)
{
	for (size_t i = 0; i < k->nnames; i++)
		if (strcmp(k->names[i], s) == 0)
			return (int)i;
	return -1;
}

static int
band_index(const struct cmp *k, const char *dec)
{
	for (size_t b = 0; b < k->pol->nbands; b++)
		if (k->pol->bands[b].decision == dec)
			return k->band_name[b];
	return -1;
}

static int
list_flip(const struct cmp *k, struct tally *t, const char *id, double s,
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

/* Scores one decoded chunk with the rebuilt model and compares. */
static int
compare_chunk(struct worker *w, const struct sample_chunk *c, struct tally *t)
{
	const struct cmp *k = w->k;
	const struct policy *pol = k->pol;
	const struct sample_layout *l = k->l;
	uint32_t C = k->C, ns = c->nscores, bad = 0;
	double margin = pol->near_margin, weak = AUDIT_WEAK_MARGINS * pol->near_margin;
	struct rba_detail dd;
	int err;

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
	rba_detail_clear(&dd);
	err = audit_scorer_run(w->sc, c, w->probs, &bad, &dd);
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

		if (!pol->argmax) {
			s = l->scored_by == SAMPLE_SCORED_MODEL ? sv[l->positive] : sv[0];
			r = rv[k->rpos];
			delta = fabs(r - s);
			rdec = policy_decide(pol, r, &rm);
			ridx = band_index(k, rdec);
			pidx = band_index(k, policy_decide(pol, s, &sm));
		} else {
			size_t st, rt;
			delta = 0;
			for (uint32_t j = 0; j < C; j++) {
				w->sv[j] = sv[j];
				w->rv[j] = rv[j];
				if (fabs(w->rv[j] - w->sv[j]) > delta ||
				    isnan(w->rv[j] - w->sv[j]))
					delta = fabs(w->rv[j] - w->sv[j]);
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
tally_merge(const struct cmp *k, struct tally *tot, struct tally *t)
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
	uint8_t *raw;
	size_t n, cap;
	struct tally t;
	int err;
	struct rba_detail d;
	int state;
};

struct pass {
	const struct cmp *k;
	const struct sample_layout *l;
	const struct audit_options *o;
	const char *version;
	uint64_t expect; /* cases in the sample, for progress */
	struct tally total;
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
};

static int
process(struct pass *p, struct worker *w, const uint8_t *raw, size_t n,
	struct tally *t, struct rba_detail *d)
{
	double t0 = audit_inputs_now();
	int err = sample_chunk_decode(raw, n, p->l->ncols, p->l->nscores,
				      p->l->id_col, &w->c, d);

	if (err == 0)
		err = compare_chunk(w, &w->c, t);
	t->busy += audit_inputs_now() - t0;
	return err;
}

static void
progress(struct pass *p)
{
	if (p->o->progress != NULL)
		p->o->progress(p->o->progress_ctx, p->version, p->total.cases,
			       p->expect);
}

static int
one_chunk(void *ctx, uint32_t chunk_no, const uint8_t *raw, size_t n)
{
	struct pass *p = ctx;
	struct tally t;
	int err;

	(void)chunk_no;
	memset(&t, 0, sizeof(t));
	if (p->total.bad)
		return 0; /* keep reading: the digests still get checked */
	err = process(p, p->w0, raw, n, &t, p->d);
	if (err == 0)
		err = tally_merge(p->k, &p->total, &t);
	tally_release(&t);
	if (err == 0)
		progress(p);
	return err;
}

/* Merges finished jobs in order; mu held. */
static void
merge_done(struct pass *p)
{
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
		if (p->err == 0 && (p->err = tally_merge(p->k, &p->total, &j->t)) == 0)
			progress(p);
		tally_release(&j->t);
		j->state = JOB_FREE;
		p->next_merge++;
		pthread_cond_broadcast(&p->cv);
	}
}

struct wctx {
	struct pass *p;
	struct worker *w;
};

static void *
worker_loop(void *arg)
{
	struct wctx *x = arg;
	struct pass *p = x->p;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct job *j = NULL;
		for (size_t i = 0; i < p->njobs; i++)
			if (p->jobs[i].state == JOB_READY &&
			    (j == NULL || p->jobs[i].seq < j->seq))
				j = &p->jobs[i];
		if (j == NULL) {
			if (p->stop)
				break;
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		j->state = JOB_BUSY;
		pthread_mutex_unlock(&p->mu);
		memset(&j->t, 0, sizeof(j->t));
		rba_detail_clear(&j->d);
		j->err = process(p, x->w, j->raw, j->n, &j->t, &j->d);
		pthread_mutex_lock(&p->mu);
		j->state = JOB_DONE;
		pthread_cond_broadcast(&p->cv);
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

	(void)chunk_no;
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
		pthread_cond_wait(&p->cv, &p->mu);
	}
	err = p->err;
	pthread_mutex_unlock(&p->mu);
	if (err)
		return err;
	/* A free job is touched by this thread alone until it is READY. */
	if (n > j->cap) {
		free(j->raw);
		j->raw = malloc(n);
		j->cap = j->raw ? n : 0;
		if (j->raw == NULL)
			return RBA_E_NOMEM;
	}
	memcpy(j->raw, raw, n);
	j->n = n;
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
	audit_scorer_free(w->sc);
	sample_chunk_release(&w->c);
	free(w->probs);
	free(w->dmap);
	memset(w, 0, sizeof(*w));
}

static int
worker_init(struct worker *w, const struct cmp *k, struct rba_detail *d)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->k = k;
	sample_chunk_init(&w->c);
	err = audit_scorer_new(k->model, &w->sc, d);
	if (err == 0)
		err = audit_scorer_bind(w->sc, k->l, d);
	return err;
}

/*
 * Reads (and so verifies) the whole sample, scoring and comparing every
 * chunk, on one thread or on nthreads workers fed by this one.  The
 * total is the same either way: chunks are merged in stored order.
 */
static int
score_pass(struct store_txn *txn, struct pass *p, unsigned nthreads,
	   struct rba_detail *d)
{
	struct wctx *ctx = NULL;
	int err;

	p->d = d;
	if (nthreads <= 1) {
		struct worker w;
		if ((err = worker_init(&w, p->k, d)) == 0) {
			p->w0 = &w;
			err = store_sample_read(txn, p->version, one_chunk, p, d);
		}
		worker_release(&w);
		return err;
	}
	p->nthreads = nthreads;
	p->njobs = 2 * (size_t)nthreads;
	p->workers = calloc(nthreads, sizeof(*p->workers));
	p->tids = calloc(nthreads, sizeof(*p->tids));
	p->jobs = calloc(p->njobs, sizeof(*p->jobs));
	ctx = calloc(nthreads, sizeof(*ctx));
	if (p->workers == NULL || p->tids == NULL || p->jobs == NULL || ctx == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	for (unsigned i = 0; i < nthreads; i++)
		if ((err = worker_init(&p->workers[i], p->k, d)) != 0)
			goto out;
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
		err = store_sample_read(txn, p->version, queue_chunk, p, d);
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
	for (unsigned i = 0; p->workers != NULL && i < nthreads; i++)
		worker_release(&p->workers[i]);
	for (size_t i = 0; p->jobs != NULL && i < p->njobs; i++) {
		free(p->jobs[i].raw);
		tally_release(&p->jobs[i].t);
	}
	free(p->workers);
	free(p->tids);
	free(p->jobs);
	free(ctx);
	return err;
}

/* ---- verdict ------------------------------------------------------------ */

static void
fill_sample(struct audit_report *r, const struct tally *t)
{
	r->cases = t->cases;
	r->flips = t->flips;
	r->near_cases = t->near;
	r->weak_band_cases = t->weak;
	r->policy_disagreements = t->disagree;
	r->max_delta = t->has_max ? t->max_delta : 0;
	r->max_delta_case = t->has_max ? strdup(t->max_case) : NULL;
	r->listed = t->listed;
	r->nlisted = t->nlisted;
}

static void
decide(struct audit_inputs *c, struct audit_report *r, const char *cannot_score)
{
	const struct policy *pol = c->pol;
	char pinned[RBA_DIGEST_TEXT_LEN + 1], rebuilt[RBA_DIGEST_TEXT_LEN + 1];
	char dv[32], tv[32];
	size_t before;

	rba_digest_format(&c->v.artifact, pinned);
	rba_digest_format(&c->rb.digest, rebuilt);
	if (!c->identical)
		REASON(r, "the rebuilt artifact %s is not the pinned %s", rebuilt,
		       pinned);
	before = r->nreasons;
	if (cannot_score != NULL) {
		REASON(r, "the sample cannot be scored with the rebuilt model: %s",
		       cannot_score);
	} else {
		if (r->flips > pol->max_flips)
			REASON(r, "%llu decision flip%s on the audit sample of %llu "
				  "cases (tolerance %llu)",
			       (unsigned long long)r->flips, r->flips == 1 ? "" : "s",
			       (unsigned long long)r->cases,
			       (unsigned long long)pol->max_flips);
		if (r->max_delta > pol->max_score_delta) {
			json_fmt_double(r->max_delta, dv);
			json_fmt_double(pol->max_score_delta, tv);
			REASON(r, "maximum score delta %s exceeds the tolerance %s "
				  "(case '%s')", dv, tv,
			       r->max_delta_case ? r->max_delta_case : "");
		}
	}
	if (c->identical) {
		if (r->nreasons == before) {
			r->verdict = AUDIT_BIT_IDENTICAL;
			return;
		}
		REASON(r, "the rebuild is bit-identical, but the sample's stored "
			  "scores or decisions do not agree with the pinned "
			  "artifact under this policy%s",
		       r->sample_scored_by == SAMPLE_SCORED_COLUMN
			       ? " (they came from a column of the cases file)"
			       : "");
		r->verdict = AUDIT_NOT_REPRODUCIBLE;
		return;
	}
	if (pol->near_require_bits && r->near_cases > 0 && cannot_score == NULL) {
		json_fmt_double(pol->near_margin, tv);
		REASON(r, "near-threshold rule: %llu audit case%s within %s of a "
			  "band edge, where the policy requires a bit-identical "
			  "rebuild",
		       (unsigned long long)r->near_cases,
		       r->near_cases == 1 ? " lies" : "s lie", tv);
	}
	r->verdict = r->nreasons == before ? AUDIT_METRIC_EQUIVALENT
					   : AUDIT_NOT_REPRODUCIBLE;
	if (r->verdict == AUDIT_METRIC_EQUIVALENT) {
		/* The digest line explains only a not-reproducible verdict. */
		free(r->reasons[0]);
		memmove(r->reasons, r->reasons + 1,
			(r->nreasons - 1) * sizeof(char *));
		r->nreasons--;
	}
}

static void
warnings(struct audit_inputs *c, struct audit_report *r,
	 const struct sample_layout *l)
{
	const struct policy *pol = c->pol;
	char m[32];

	if (r->weak_band_cases < pol->min_near_cases) {
		json_fmt_double(AUDIT_WEAK_MARGINS * pol->near_margin, m);
		WARN(r, "weak evidence: %llu audit case%s within %s (ten margins) "
			"of a band edge, fewer than min_near_cases %llu: the "
			"sample cannot tell a near-threshold change from none",
		     (unsigned long long)r->weak_band_cases,
		     r->weak_band_cases == 1 ? " lies" : "s lie", m,
		     (unsigned long long)pol->min_near_cases);
	}
	if (r->has_sample_policy &&
	    !rba_digest_equal(&r->sample_policy, &r->policy_digest)) {
		char a[RBA_DIGEST_TEXT_LEN + 1], b[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&r->sample_policy, a);
		rba_digest_format(&r->policy_digest, b);
		WARN(r, "the sample's decisions were made under policy %s; this "
			"audit decides under %s", a, b);
	}
	if (r->policy_disagreements > 0)
		WARN(r, "%llu stored decision%s not what the policy in force gives "
			"the stored score",
		     (unsigned long long)r->policy_disagreements,
		     r->policy_disagreements == 1 ? " is" : "s are");
	if (l->scored_by == SAMPLE_SCORED_MODEL &&
	    !rba_digest_equal(&l->artifact, &c->v.artifact)) {
		char a[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&l->artifact, a);
		WARN(r, "the sample was scored with artifact %s, not the one the "
			"version pins now", a);
	}
}

/* ---- the record --------------------------------------------------------- */

static void
put_strv(struct rba_buf *b, char *const *v, size_t n)
{
	rba_buf_put_u8(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			rba_buf_put(b, ", ", 2);
		json_put_str(b, v[i]);
	}
	rba_buf_put_u8(b, ']');
}

static const char *
link_state(int s)
{
	return s == AUDIT_LINK_SAME ? "same"
	       : s == AUDIT_LINK_CHANGED ? "changed" : "unknown";
}

static void
put_link(struct rba_buf *b, const char *key, const struct audit_link *l,
	 int comma)
{
	json_put_key(b, key);
	rba_buf_put_u8(b, '{');
	json_kv_str(b, "state", link_state(l->state), 1);
	json_kv_str(b, "pinned", l->pinned, 1);
	json_kv_str(b, "current", l->current, 1);
	json_kv_str(b, "note", l->note, 0);
	rba_buf_put_u8(b, '}');
	if (comma)
		rba_buf_put(b, ", ", 2);
}

static void
fmt_utc(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
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

void
audit_report_json(const struct audit_report *r, struct rba_buf *b)
{
	static const char *const libs[][2] = {
		{ "libc", "lib.libc" },		{ "libsodium", "lib.libsodium" },
		{ "libyaml", "lib.libyaml" }, { "lmdb", "lib.lmdb" },
		{ "openblas", "lib.openblas" }, { "zstd", "lib.zstd" },
	};
	char when[32];

	fmt_utc(r->time, when);
	rba_buf_put_u8(b, '{');
	json_kv_str(b, "schema", AUDIT_RECORD_SCHEMA, 1);
	json_kv_str(b, "version", r->version, 1);
	json_kv_str(b, "time", when, 1);
	json_kv_str(b, "verdict", audit_verdict_name(r->verdict), 1);
	json_kv_u64(b, "exit_status", (uint64_t)r->exit_status, 1);
	json_put_key(b, "reasons");
	put_strv(b, r->reasons, r->nreasons);
	rba_buf_put(b, ", ", 2);
	json_put_key(b, "warnings");
	put_strv(b, r->warnings, r->nwarnings);
	rba_buf_put(b, ", ", 2);
	json_kv_str(b, "error", r->error_what, 1);

	json_put_key(b, "digests");
	rba_buf_put_u8(b, '{');
	json_kv_digest(b, "artifact_pinned", &r->artifact_pinned, r->pins_text != NULL, 1);
	json_kv_digest(b, "artifact_rebuilt", &r->artifact_rebuilt, r->has_rebuilt, 1);
	json_kv_digest(b, "snapshot", &r->snapshot, r->pins_text != NULL, 1);
	json_kv_digest(b, "sample", &r->sample_digest, r->has_sample, 1);
	json_kv_digest(b, "policy", &r->policy_digest, r->policy_text != NULL, 1);
	json_kv_digest(b, "config", &r->config_current, r->pins_text != NULL, 0);
	rba_buf_put(b, "}, ", 3);

	json_put_key(b, "verified");
	rba_buf_put_u8(b, '{');
	json_kv_bool(b, "artifact", r->artifact_verified, 1);
	json_kv_bool(b, "snapshot", r->snapshot_verified, 1);
	json_kv_bool(b, "sample", r->sample_verified, 0);
	rba_buf_put(b, "}, ", 3);

	json_put_key(b, "policy");
	rba_buf_put_u8(b, '{');
	json_kv_digest(b, "digest", &r->policy_digest, r->policy_text != NULL, 1);
	json_kv_str(b, "source", r->policy_text == NULL ? NULL
				: r->policy_from_version ? "version" : "option", 1);
	json_kv_str(b, "text", r->policy_text, 0);
	rba_buf_put(b, "}, ", 3);

	json_put_key(b, "pins");
	rba_buf_put_u8(b, '{');
	json_kv_digest(b, "config_hash", &r->config_current, r->pins_text != NULL, 1);
	json_kv_digest(b, "config_hash_trained", &r->config_registered,
		      r->has_config_registered, 1);
	json_kv_str(b, "text", r->pins_text, 0);
	rba_buf_put(b, "}, ", 3);

	json_put_key(b, "links");
	rba_buf_put_u8(b, '{');
	put_link(b, "code_revision", &r->code_revision, 1);
	json_put_key(b, "trainer_abi");
	rba_buf_put_u8(b, '{');
	json_kv_str(b, "state", link_state(r->trainer_abi.state), 1);
	json_kv_u64(b, "pinned", r->abi_pinned, 1);
	json_kv_u64(b, "artifact", r->abi_artifact, 1);
	json_kv_u64(b, "rebuilt", r->abi_rebuilt, 1);
	json_kv_u64(b, "current", r->abi_current, 1);
	json_kv_str(b, "note", r->trainer_abi.note, 0);
	rba_buf_put(b, "}, ", 3);
	json_put_key(b, "environment");
	rba_buf_put_u8(b, '{');
	json_kv_str(b, "state", link_state(r->environment.state), 1);
	json_kv_str(b, "pinned", r->environment.pinned, 1);
	json_kv_str(b, "current", r->environment.current, 1);
	json_kv_str(b, "note", r->environment.note, 1);
	json_put_key(b, "fields");
	rba_buf_put_u8(b, '[');
	for (size_t i = 0; i < r->nenv_fields; i++) {
		if (i)
			rba_buf_put(b, ", ", 2);
		rba_buf_put_u8(b, '{');
		json_kv_str(b, "key", r->env_fields[i].key, 1);
		json_kv_str(b, "pinned", r->env_fields[i].pinned, 1);
		json_kv_str(b, "current", r->env_fields[i].current, 0);
		rba_buf_put_u8(b, '}');
	}
	rba_buf_put(b, "]}, ", 4);
	put_link(b, "config", &r->config, 1);
	put_link(b, "snapshot", &r->snapshot_link, 0);
	rba_buf_put(b, "}, ", 3);

	json_put_key(b, "environment_records");
	rba_buf_put_u8(b, '{');
	json_kv_str(b, "pinned", r->env_pinned_text, 1);
	json_kv_str(b, "current", r->env_current_text, 0);
	rba_buf_put(b, "}, ", 3);

	json_put_key(b, "sample");
	rba_buf_put_u8(b, '{');
	json_kv_u64(b, "cases", r->cases, 1);
	json_kv_str(b, "scored_by", !r->has_sample ? NULL
				   : r->sample_scored_by == SAMPLE_SCORED_COLUMN
					     ? "column" : "model", 1);
	json_kv_digest(b, "policy", &r->sample_policy, r->has_sample_policy, 1);
	json_kv_u64(b, "flips", r->flips, 1);
	json_kv_num(b, "max_score_delta", r->max_delta, 1);
	json_kv_str(b, "max_delta_case", r->max_delta_case, 1);
	json_kv_u64(b, "near_threshold_cases", r->near_cases, 1);
	json_kv_u64(b, "weak_band_cases", r->weak_band_cases, 1);
	json_kv_u64(b, "policy_disagreements", r->policy_disagreements, 1);
	json_kv_u64(b, "flipped_listed", r->nlisted, 1);
	json_put_key(b, "flipped_cases");
	rba_buf_put_u8(b, '[');
	for (size_t i = 0; i < r->nlisted; i++) {
		const struct audit_flip *f = &r->listed[i];
		if (i)
			rba_buf_put(b, ", ", 2);
		rba_buf_put_u8(b, '{');
		json_kv_str(b, "id", f->id, 1);
		json_kv_num(b, "stored_score", f->stored_score, 1);
		json_kv_num(b, "rebuilt_score", f->rebuilt_score, 1);
		json_kv_str(b, "stored_decision", f->stored_decision, 1);
		json_kv_str(b, "rebuilt_decision", f->rebuilt_decision, 1);
		json_kv_num(b, "margin", f->margin, 1);
		json_kv_num(b, "rebuilt_margin", f->rebuilt_margin, 1);
		json_kv_num(b, "edge", f->edge, 0);
		rba_buf_put_u8(b, '}');
	}
	rba_buf_put(b, "]}, ", 4);

	json_put_key(b, "rebuild");
	rba_buf_put_u8(b, '{');
	json_kv_num(b, "validation_accuracy", r->has_rebuilt ? r->val_accuracy : NAN, 1);
	json_kv_num(b, "validation_loss", r->has_rebuilt ? r->val_loss : NAN, 1);
	json_kv_str(b, "scoring", r->has_rebuilt ? (r->sparse_scoring ? "sparse" : "dense")
					      : NULL, 1);
	json_kv_u64(b, "threads", r->threads, 0);
	rba_buf_put(b, "}, ", 3);

	json_put_key(b, "tool");
	rba_buf_put_u8(b, '{');
	json_kv_str(b, "name", RBA_TOOL_NAME, 1);
	json_kv_str(b, "version", RBA_TOOL_VERSION, 1);
	json_kv_str(b, "code_revision", envrec_code_revision(), 1);
	json_kv_u64(b, "trainer_abi", rebuild_abi_current(), 1);
	json_put_key(b, "libraries");
	rba_buf_put_u8(b, '{');
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		char *v = r->env_current_text ? env_value(r->env_current_text, libs[i][1])
					      : NULL;
		json_kv_str(b, libs[i][0], v, i + 1 < sizeof(libs) / sizeof(libs[0]));
		free(v);
	}
	rba_buf_put(b, "}}, ", 4);

	json_put_key(b, "timings");
	rba_buf_put_u8(b, '{');
	json_kv_num(b, "verify_s", r->t_verify, 1);
	json_kv_num(b, "rebuild_s", r->t_rebuild, 1);
	json_kv_num(b, "sample_pass_s", r->t_score, 1);
	json_kv_num(b, "scoring_s", r->t_scoring, 1);
	json_kv_num(b, "total_s", r->t_total, 0);
	rba_buf_put(b, "}}", 2);
}

int
audit_record_append(struct store *s, struct audit_report *r,
		    struct rba_detail *d)
{
	struct rba_buf b;
	struct store_txn *txn = NULL;
	int err;

	rba_buf_init(&b);
	audit_report_json(r, &b);
	if ((err = rba_buf_status(&b)) != 0)
		goto out;
	if ((err = store_txn_begin(s, 1, b.len, &txn, d)) != 0)
		goto out;
	err = store_history_append(txn, r->version, r->time, b.p, b.len,
				   &r->history_id, &r->history_digest, d);
	if (err == 0)
		err = store_txn_commit(txn, d);
	else
		store_txn_abort(txn);
	if (err == 0)
		r->recorded = 1;
out:
	rba_buf_release(&b);
	return err;
}

/* ---- audit_version ------------------------------------------------------ */

/* The decisions the rebuilt model can reach under pol. */
static int
cmp_setup(struct cmp *k, struct audit_inputs *c, const struct sample_layout *l,
	  size_t max_listed)
{
	const struct policy *pol = c->pol;
	const struct encode_spec *spec = &c->rebuilt.spec;

	memset(k, 0, sizeof(*k));
	k->pol = pol;
	k->l = l;
	k->model = &c->rebuilt;
	k->C = spec->nclasses;
	k->rpos = spec->positive;
	k->max_listed = max_listed;
	if (pol->argmax) {
		k->nnames = spec->nclasses;
		k->names = calloc(k->nnames, sizeof(char *));
		if (k->names == NULL)
			return RBA_E_NOMEM;
		for (uint32_t i = 0; i < spec->nclasses; i++)
			k->names[i] = spec->classes[i];
		return 0;
	}
	k->names = calloc(pol->nbands, sizeof(char *));
	k->band_name = calloc(pol->nbands, sizeof(int));
	if (k->names == NULL || k->band_name == NULL)
		return RBA_E_NOMEM;
	for (size_t b = 0; b < pol->nbands; b++) {
		int found = -1;
		for (size_t i = 0; i < k->nnames; i++)
			if (strcmp(k->names[i], pol->bands[b].decision) == 0)
				found = (int)i;
		if (found < 0) {
			found = (int)k->nnames;
			k->names[k->nnames++] = pol->bands[b].decision;
		}
		k->band_name[b] = found;
	}
	return 0;
}

/* Why the sample cannot be compared with the rebuilt model, or NULL. */
static const char *
comparable(struct audit_inputs *c, const struct sample_layout *l, char *why,
	   size_t n)
{
	const struct encode_spec *spec = &c->rebuilt.spec;
	const struct policy *pol = c->pol;

	if (!pol->argmax && spec->positive == ENCODE_NO_POSITIVE)
		return "the policy decides by score bands, but the rebuilt model "
		       "has no positive class";
	if (l->scored_by == SAMPLE_SCORED_MODEL) {
		int same = l->nclasses == spec->nclasses;
		for (uint32_t i = 0; same && i < l->nclasses; i++)
			same = strcmp(l->classes[i], spec->classes[i]) == 0;
		if (!same || (!pol->argmax && l->positive != spec->positive))
			return "the rebuilt model's classes are not the ones the "
			       "sample's scores are for";
	}
	for (uint32_t i = 0; i < spec->ncolumns; i++) {
		int found = 0;
		for (uint32_t k = 0; k < l->ncols && !found; k++)
			found = strcmp(l->names[k], spec->columns[i].name) == 0;
		if (!found) {
			snprintf(why, n, "the rebuilt model needs input column '%s', "
					 "which the sample lacks",
				 spec->columns[i].name);
			return why;
		}
	}
	return NULL;
}

static void
not_measured(struct audit_report *r, const char *what, int err,
	     const struct rba_detail *d)
{
	r->verdict = AUDIT_NOT_MEASURED;
	r->exit_status = 2;
	free(r->error_what);
	r->error_what = strdup(err == RBA_E_TAMPERED ? "tampered" : what);
	REASON(r, "%s", d != NULL && d->reason[0] ? d->reason : rba_strerror(err));
}

int
audit_version(struct store *s, const char *version,
	      const struct audit_options *o, struct audit_report *r,
	      struct rba_detail *d)
{
	struct audit_options defaults;
	struct audit_inputs c;
	struct store_txn *txn = NULL;
	struct store_sample_info info;
	struct sample_layout layout;
	struct pass pass;
	struct cmp k;
	char why[256];
	const char *cannot = NULL;
	double t0 = audit_inputs_now(), ts;
	int err, record = 1;

	if (o == NULL) {
		memset(&defaults, 0, sizeof(defaults));
		o = &defaults;
	}
	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	memset(&info, 0, sizeof(info));
	memset(&layout, 0, sizeof(layout));
	memset(&pass, 0, sizeof(pass));
	memset(&k, 0, sizeof(k));
	r->version = strdup(version);
	r->time = (int64_t)time(NULL);
	r->threads = o->threads > 1 ? o->threads : 1;
	if (r->threads > AUDIT_MAX_THREADS)
		r->threads = AUDIT_MAX_THREADS;
	if (r->version == NULL)
		return RBA_E_NOMEM;

	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0) {
		not_measured(r, "store", err, d);
		return err;
	}
	err = audit_inputs_load(txn, version, o->policy, &c, d);
	if (c.pins != NULL) {
		r->pins_text = strdup(c.v.pins_text);
		r->artifact_pinned = c.v.artifact;
		r->snapshot = c.v.snapshot;
		policy_pins_config_hash(c.pins, &r->config_current);
	}
	if (c.pol != NULL) {
		r->policy_text = strndup(c.pol->text, c.pol->text_len);
		r->policy_digest = c.pol->digest;
		r->policy_from_version = c.pol_from_version;
	}
	r->artifact_verified = c.abytes != NULL;
	r->snapshot_verified = c.snap != NULL;
	if (err) {
		/* An unknown version has nothing to record. */
		record = !(err == RBA_E_NOTFOUND && c.pins == NULL);
		not_measured(r, c.error_what ? c.error_what : "version", err, d);
		goto out;
	}
	err = sample_layout_load(txn, version, &info, &layout, d);
	if (err) {
		if (err == RBA_E_NOTFOUND) {
			record = 0;
			rba_fail(d, err, NULL, 0, 0,
				 "version '%s' has no audit sample (add one with "
				 "'rebuild-audit sample add %s CASES.csv')",
				 version, version);
		}
		not_measured(r, "sample", err, d);
		goto out;
	}
	r->has_sample = 1;
	r->sample_digest = info.digest;
	r->has_sample_policy = info.has_policy;
	r->sample_policy = info.policy_digest;
	r->sample_scored_by = layout.scored_by;
	if ((err = links(&c, r)) != 0) {
		not_measured(r, "environment", err, d);
		goto out;
	}
	if ((err = audit_inputs_rebuild(&c, d)) != 0) {
		not_measured(r, "rebuild", err, d);
		goto out;
	}
	r->has_rebuilt = 1;
	r->artifact_rebuilt = c.rb.digest;
	r->val_accuracy = c.rb.report.final.val_acc;
	r->val_loss = c.rb.report.final.val_loss;
	abi_link(&c, r);

	/* A policy that cannot judge this sample is a question not asked
	 * well, not an answer about the model. */
	if ((c.pol->argmax && layout.scored_by == SAMPLE_SCORED_COLUMN) ||
	    (!c.pol->argmax && c.stored.spec.positive == ENCODE_NO_POSITIVE)) {
		err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "%s",
			       c.pol->argmax
				       ? "an argmax policy needs stored probability "
					 "vectors, but the sample's scores came "
					 "from a column"
				       : "the policy decides by score bands, but the "
					 "model has no positive class");
		not_measured(r, "policy", err, d);
		goto out;
	}
	ts = audit_inputs_now();
	cannot = comparable(&c, &layout, why, sizeof(why));
	if ((err = cmp_setup(&k, &c, &layout,
			     o->max_listed ? o->max_listed : AUDIT_MAX_LISTED)) != 0) {
		not_measured(r, "sample", err, d);
		goto out;
	}
	pass.k = &k;
	pass.l = &layout;
	pass.o = o;
	pass.version = version;
	pass.expect = info.cases;
	if (cannot == NULL) {
		err = score_pass(txn, &pass, r->threads, d);
	} else {
		/* Nothing to score, but the sample is still checked. */
		pass.total.bad = 1;
		err = score_pass(txn, &pass, 1, d);
	}
	r->t_score = audit_inputs_now() - ts;
	r->t_scoring = pass.total.busy;
	if (err) {
		if (err == RBA_E_TAMPERED && d != NULL) {
			/* Lead with what was tampered with, as for the
			 * artifact and the snapshot. */
			char was[sizeof(d->reason)];
			const char *rest = d->reason;
			if (strncmp(rest, "tampered: ", 10) == 0)
				rest += 10;
			if (strncmp(rest, "sample of version '", 19) == 0) {
				rest = strchr(rest + 19, '\'');
				rest = rest != NULL ? rest + 1 : d->reason;
				while (*rest == ' ')
					rest++;
			}
			snprintf(was, sizeof(was), "%s", rest);
			snprintf(d->reason, sizeof(d->reason),
				 "tampered: the sample of version '%.128s': %.200s",
				 version, was);
		}
		tally_release(&pass.total);
		not_measured(r, "sample", err, d);
		goto out;
	}
	r->sample_verified = 1;
	{
		struct audit_scorer *probe = NULL;
		if (audit_scorer_new(&c.rebuilt, &probe, NULL) == 0)
			r->sparse_scoring = audit_scorer_is_sparse(probe);
		audit_scorer_free(probe);
	}
	if (cannot == NULL && pass.total.bad)
		cannot = pass.total.bad_reason;
	fill_sample(r, &pass.total);
	pass.total.listed = NULL;
	pass.total.nlisted = 0;
	decide(&c, r, cannot);
	warnings(&c, r, &layout);
	r->exit_status = audit_verdict_exit(r->verdict);
	err = 0;
out:
	store_txn_abort(txn);
	r->t_verify = c.t_verify;
	r->t_rebuild = c.t_rebuild;
	r->t_total = audit_inputs_now() - t0;
	free(k.names);
	free(k.band_name);
	sample_layout_release(&layout);
	store_sample_info_release(&info);
	audit_inputs_release(&c);
	if (record && !o->no_record) {
		struct rba_detail rd;
		int rerr;
		rba_detail_clear(&rd);
		rerr = audit_record_append(s, r, &rd);
		if (rerr && err == 0) {
			err = rerr;
			if (d != NULL)
				*d = rd;
		}
	}
	return err;
}
