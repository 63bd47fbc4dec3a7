/* forensics.c - metrics, seeds, training at seeds, paired statistics
 * and the faults of a use case (forensics.h); the success expressions
 * are in expr.c, the edits in edits.c. */
#include "forensics/forensics.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rbatime.h"

static const char *const metric_names[FX_NMETRICS] = {
	"val_loss", "val_acc", "val_auc", "train_loss", "examples_per_second"
};

const char *
fx_metric_name(enum fx_metric m)
{
	return m < FX_NMETRICS ? metric_names[m] : "?";
}

int
fx_metric_parse(const char *name, size_t n, enum fx_metric *out)
{
	for (int m = 0; m < FX_NMETRICS; m++)
		if (n == strlen(metric_names[m]) &&
		    memcmp(name, metric_names[m], n) == 0) {
			*out = (enum fx_metric)m;
			return 0;
		}
	return -1;
}

int
fx_metric_higher_better(enum fx_metric m)
{
	return m == FX_VAL_ACC || m == FX_VAL_AUC || m == FX_EPS;
}

double
fx_metric_of(const struct rebuild_runrec *r, enum fx_metric m)
{
	switch (m) {
	case FX_VAL_LOSS:
		return r->eval_loss;
	case FX_VAL_ACC:
		return r->eval_acc;
	case FX_VAL_AUC:
		return r->eval_auc;
	case FX_TRAIN_LOSS:
		return r->final.train_loss;
	default:
		return r->examples_per_second;
	}
}

/* ---- seeds ---------------------------------------------------------- */

static int
parse_u64(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	*out = v;
	return 0;
}

int
fx_seeds_parse(const char *s, uint64_t **seeds, size_t *n,
	       struct rba_detail *d)
{
	uint64_t *v = NULL;
	size_t k = 0;
	const char *p = s;

	*seeds = NULL;
	*n = 0;
	if ((v = malloc(FX_MAX_SEEDS * sizeof(*v))) == NULL)
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	for (;;) {
		uint64_t a, b;
		if (parse_u64(&p, &a))
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			if (parse_u64(&p, &b) || b < a)
				goto bad;
		}
		if (b - a >= FX_MAX_SEEDS - k) {
			free(v);
			return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
					"more than %u seeds", FX_MAX_SEEDS);
		}
		for (uint64_t x = a;; x++) {
			for (size_t i = 0; i < k; i++)
				if (v[i] == x) {
					free(v);
					return rba_fail(d, RBA_E_USAGE, NULL, 0,
							0,
							"seed %" PRIu64
							" given twice",
							x);
				}
			v[k++] = x;
			if (x == b)
				break;
		}
		if (*p == 0)
			break;
		if (*p++ != ',')
			goto bad;
	}
	*seeds = v;
	*n = k;
	return 0;
bad:
	free(v);
	return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
			"seeds are A-B, A or a comma list of those");
}

/* ---- training at seeds ---------------------------------------------- */

struct sweep_ctx {
	const struct pins *p;
	const struct rebuild_prepared *prep;
	const uint64_t *seeds;
	size_t n, next, done;
	struct fx_seed_run *out;
	const struct fx_progress *progress;
	const char *label;
	pthread_mutex_t mu;
};

static void
train_one(struct sweep_ctx *c, size_t i)
{
	struct fx_seed_run *r = &c->out[i];
	struct pins *q = policy_pins_dup(c->p);
	double t0 = rba_time_mono();

	r->seed = c->seeds[i];
	rba_detail_clear(&r->d);
	if (q == NULL) {
		r->err = rba_fail(&r->d, RBA_E_NOMEM, NULL, 0, 0,
				  "out of memory");
		return;
	}
	q->train.seed = c->seeds[i];
	r->err = rebuild_from_prepared(q, 0, c->prep, NULL, &r->res, &r->d);
	r->wall_seconds = rba_time_mono() - t0;
	policy_pins_free(q);
}

static void *
worker(void *arg)
{
	struct sweep_ctx *c = arg;

	for (;;) {
		size_t i;
		pthread_mutex_lock(&c->mu);
		i = c->next++;
		pthread_mutex_unlock(&c->mu);
		if (i >= c->n)
			return NULL;
		train_one(c, i);
		pthread_mutex_lock(&c->mu);
		c->done++;
		if (c->progress != NULL && c->progress->done != NULL)
			c->progress->done(c->progress->ctx, c->label, c->done,
					  c->n);
		pthread_mutex_unlock(&c->mu);
	}
}

int
fx_seeds_train(const struct pins *p, const struct rebuild_prepared *prep,
	       const uint64_t *seeds, size_t n, unsigned jobs,
	       const struct fx_progress *progress, const char *label,
	       struct fx_seed_run *out)
{
	struct sweep_ctx c = { p, prep, seeds, n, 0, 0, out, progress, label,
			       PTHREAD_MUTEX_INITIALIZER };
	const struct trainer_kind *k = rebuild_trainer_kind(p);
	pthread_t tid[FX_MAX_JOBS];
	unsigned started = 0;

	memset(out, 0, n * sizeof(*out));
	/* An exec trainer runs one sandboxed command at a time: its own
	 * threads are determinism.threads (the kind's max_jobs). */
	if (jobs < 1)
		jobs = 1;
	if (k->max_jobs != 0 && jobs > k->max_jobs)
		jobs = k->max_jobs;
	if (jobs > FX_MAX_JOBS)
		jobs = FX_MAX_JOBS;
	if (jobs > n)
		jobs = (unsigned)(n ? n : 1);
	/* The calling thread is one of the jobs. */
	for (unsigned j = 1; j < jobs; j++)
		if (pthread_create(&tid[started], NULL, worker, &c) == 0)
			started++;
	worker(&c);
	for (unsigned j = 0; j < started; j++)
		pthread_join(tid[j], NULL);
	for (size_t i = 0; i < n; i++)
		if (out[i].err != 0)
			return out[i].err;
	return 0;
}

void
fx_seed_runs_release(struct fx_seed_run *runs, size_t n)
{
	if (runs == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		rebuild_result_release(&runs[i].res);
}

/* ---- faults --------------------------------------------------------- */

void
fx_fault_clear(struct fx_fault *f)
{
	if (f == NULL)
		return;
	memset(f, 0, sizeof(*f));
	f->step = FX_STEP_STORE;
}

int
fx_fail(struct fx_fault *f, int err, enum fx_step step, const char *subject,
	const char *fmt, ...)
{
	va_list ap;

	if (f == NULL)
		return err;
	f->step = step;
	snprintf(f->subject, sizeof(f->subject), "%s", subject ? subject : "");
	if (fmt != NULL) {
		rba_detail_clear(&f->d);
		va_start(ap, fmt);
		vsnprintf(f->d.reason, sizeof(f->d.reason), fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- statistics ----------------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
fx_stat_compute(const double *v, size_t n, struct fx_stat *out)
{
	double *s = malloc((n ? n : 1) * sizeof(double));
	size_t k = 0;
	double sum = 0.0, ss = 0.0;

	memset(out, 0, sizeof(*out));
	out->median = out->mean = out->stdev = out->min = out->max =
		out->spread = NAN;
	if (s == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			s[k++] = v[i];
	out->n = k;
	if (k == 0) {
		free(s);
		return;
	}
	qsort(s, k, sizeof(double), cmp_double);
	out->median = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2.0;
	for (size_t i = 0; i < k; i++)
		sum += s[i];
	out->mean = sum / (double)k;
	for (size_t i = 0; i < k; i++)
		ss += (s[i] - out->mean) * (s[i] - out->mean);
	out->stdev = k > 1 ? sqrt(ss / (double)(k - 1)) : 0.0;
	out->min = s[0];
	out->max = s[k - 1];
	out->spread = out->max - out->min;
	free(s);
}

double
fx_sign_test(unsigned a, unsigned b)
{
	unsigned n = a + b, k = a < b ? a : b;
	double term, tail = 0.0;

	if (n == 0)
		return 1.0;
	/* Sum C(n, i) / 2^n for i <= k in logs-free doubles: the terms are
	 * built by the recurrence C(n, i+1) = C(n, i) (n - i) / (i + 1),
	 * starting at 2^-n (exact for n < 1075). */
	term = ldexp(1.0, -(int)n);
	for (unsigned i = 0; i <= k; i++) {
		tail += term;
		term = term * (double)(n - i) / (double)(i + 1);
	}
	tail *= 2.0;
	return tail > 1.0 ? 1.0 : tail;
}

void
fx_paired_compute(enum fx_metric m, const double *base, const double *cand,
		  size_t n, double alpha, struct fx_paired *out)
{
	double *delta = malloc((n ? n : 1) * sizeof(double));
	int hb = fx_metric_higher_better(m);

	memset(out, 0, sizeof(*out));
	out->metric = m;
	fx_stat_compute(base, n, &out->base);
	fx_stat_compute(cand, n, &out->cand);
	for (size_t i = 0; delta != NULL && i < n; i++) {
		delta[i] = cand[i] - base[i];
		if (!isfinite(delta[i]) || delta[i] == 0.0)
			out->ties += isfinite(delta[i]) != 0;
		else if ((delta[i] > 0.0) == (hb != 0))
			out->better++;
		else
			out->worse++;
	}
	fx_stat_compute(delta, delta ? n : 0, &out->delta);
	free(delta);
	out->shift = out->base.spread > 0.0
			     ? out->delta.median / out->base.spread
			     : (out->delta.median == 0.0 ? 0.0
							 : copysign(INFINITY,
								    out->delta.median));
	out->p = fx_sign_test(out->worse, out->better);
	out->unpaired_diff = out->cand.median - out->base.median;
	out->unpaired_stdev = sqrt(out->base.stdev * out->base.stdev +
				   out->cand.stdev * out->cand.stdev);
	out->resolved = out->delta.n > 0 && isfinite(out->base.spread) &&
			fabs(out->delta.median) > out->base.spread &&
			out->p <= alpha;
	if (out->resolved)
		out->direction = (out->delta.median > 0.0) == (hb != 0) ? 1 : -1;
}

const char *
fx_paired_finding(const struct fx_paired *pr)
{
	return !pr->resolved ? "NOT RESOLVED"
			     : pr->direction > 0 ? "better" : "worse";
}
