/* forensics.c - sweeps, paired statistics, success expressions, gates
 * and bisection edits (forensics.h). */
#include "forensics/forensics.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
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

/* ---- sweeps --------------------------------------------------------- */

struct sweep_ctx {
	const struct pins *p;
	const struct rebuild_prepared *prep;
	const uint64_t *seeds;
	size_t n, next, done;
	struct fx_seed_run *out;
	const struct fx_progress *progress;
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
			c->progress->done(c->progress->ctx, c->done, c->n);
		pthread_mutex_unlock(&c->mu);
	}
}

int
fx_sweep_train(const struct pins *p, const struct rebuild_prepared *prep,
	       const uint64_t *seeds, size_t n, unsigned jobs,
	       const struct fx_progress *progress, struct fx_seed_run *out)
{
	struct sweep_ctx c = { p, prep, seeds, n, 0, 0, out, progress,
			       PTHREAD_MUTEX_INITIALIZER };
	pthread_t tid[FX_MAX_JOBS];
	unsigned started = 0;

	memset(out, 0, n * sizeof(*out));
	if (jobs < 1)
		jobs = 1;
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
fx_runs_release(struct fx_seed_run *runs, size_t n)
{
	if (runs == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		rebuild_result_release(&runs[i].res);
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

/* ---- success expressions -------------------------------------------- */

enum node_kind { N_OR, N_AND, N_NOT, N_CMP };
enum stat_kind { S_MEDIAN, S_MEAN, S_STDEV, S_MIN, S_MAX, S_WORSE, S_BETTER,
		 S_SHIFT, S_P };
enum op_kind { OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };

struct fx_expr {
	enum node_kind kind;
	struct fx_expr *a, *b;
	enum fx_metric metric;
	enum stat_kind stat;
	enum op_kind op;
	double num;
};

struct lexer {
	const char *s, *p;
	struct rba_detail *d;
	int err;
};

static void
skip_ws(struct lexer *lx)
{
	while (*lx->p == ' ' || *lx->p == '\t')
		lx->p++;
}

static int
lx_fail(struct lexer *lx, const char *why)
{
	if (lx->err == 0)
		lx->err = rba_fail(lx->d, RBA_E_SYNTAX, NULL, 0,
				   (unsigned long)(lx->p - lx->s) + 1, "%s", why);
	return lx->err;
}

/* A word: [a-z_]+ ; returns its length (0 when none). */
static size_t
word(struct lexer *lx)
{
	size_t n = 0;

	skip_ws(lx);
	while (islower((unsigned char)lx->p[n]) || lx->p[n] == '_')
		n++;
	return n;
}

static int
word_is(struct lexer *lx, const char *w)
{
	size_t n = word(lx);

	if (n == strlen(w) && strncmp(lx->p, w, n) == 0) {
		lx->p += n;
		return 1;
	}
	return 0;
}

static struct fx_expr *parse_or(struct lexer *lx);

static struct fx_expr *
node(enum node_kind k, struct fx_expr *a, struct fx_expr *b)
{
	struct fx_expr *e = calloc(1, sizeof(*e));

	if (e == NULL) {
		fx_expr_free(a);
		fx_expr_free(b);
		return NULL;
	}
	e->kind = k;
	e->a = a;
	e->b = b;
	return e;
}

static struct fx_expr *
parse_cmp(struct lexer *lx)
{
	static const char *const stats[] = { "median", "mean", "stdev", "min",
					     "max",    "worse", "better", "shift",
					     "p" };
	struct fx_expr *e;
	size_t n = word(lx);
	int metric = -1, stat = -1;
	char *end;

	for (int m = 0; m < FX_NMETRICS; m++)
		if (n == strlen(metric_names[m]) &&
		    strncmp(lx->p, metric_names[m], n) == 0)
			metric = m;
	if (metric >= 0) {
		lx->p += n;
		if (*lx->p != '.') {
			lx_fail(lx, "expected '.' and a statistic after the "
				    "metric");
			return NULL;
		}
		lx->p++;
		n = word(lx);
		for (int s = 0; s < 9; s++)
			if (n == strlen(stats[s]) &&
			    strncmp(lx->p, stats[s], n) == 0)
				stat = s;
	} else {
		metric = FX_VAL_LOSS;
		for (int s = S_WORSE; s <= S_P; s++)
			if (n == strlen(stats[s]) &&
			    strncmp(lx->p, stats[s], n) == 0)
				stat = s;
	}
	if (stat < 0) {
		lx_fail(lx, "expected a metric.statistic, worse, better, "
			    "shift or p");
		return NULL;
	}
	lx->p += n;
	if ((e = node(N_CMP, NULL, NULL)) == NULL) {
		lx->err = RBA_E_NOMEM;
		return NULL;
	}
	e->metric = (enum fx_metric)metric;
	e->stat = (enum stat_kind)stat;
	skip_ws(lx);
	if (strncmp(lx->p, "<=", 2) == 0)
		e->op = OP_LE, lx->p += 2;
	else if (strncmp(lx->p, ">=", 2) == 0)
		e->op = OP_GE, lx->p += 2;
	else if (strncmp(lx->p, "==", 2) == 0)
		e->op = OP_EQ, lx->p += 2;
	else if (strncmp(lx->p, "!=", 2) == 0)
		e->op = OP_NE, lx->p += 2;
	else if (*lx->p == '<')
		e->op = OP_LT, lx->p++;
	else if (*lx->p == '>')
		e->op = OP_GT, lx->p++;
	else {
		fx_expr_free(e);
		lx_fail(lx, "expected <, <=, >, >=, == or !=");
		return NULL;
	}
	skip_ws(lx);
	if (!(isdigit((unsigned char)*lx->p) || *lx->p == '-' ||
	      *lx->p == '+' || *lx->p == '.')) {
		fx_expr_free(e);
		lx_fail(lx, "expected a number");
		return NULL;
	}
	errno = 0;
	e->num = strtod(lx->p, &end);
	if (end == lx->p || errno != 0 || !isfinite(e->num)) {
		fx_expr_free(e);
		lx_fail(lx, "expected a finite number");
		return NULL;
	}
	lx->p = end;
	return e;
}

static struct fx_expr *
parse_unary(struct lexer *lx)
{
	skip_ws(lx);
	if (*lx->p == '(') {
		struct fx_expr *e;
		lx->p++;
		if ((e = parse_or(lx)) == NULL)
			return NULL;
		skip_ws(lx);
		if (*lx->p != ')') {
			fx_expr_free(e);
			lx_fail(lx, "expected ')'");
			return NULL;
		}
		lx->p++;
		return e;
	}
	if (word_is(lx, "not")) {
		struct fx_expr *a = parse_unary(lx);
		return a ? node(N_NOT, a, NULL) : NULL;
	}
	return parse_cmp(lx);
}

static struct fx_expr *
parse_and(struct lexer *lx)
{
	struct fx_expr *e = parse_unary(lx);

	while (e != NULL && word_is(lx, "and")) {
		struct fx_expr *b = parse_unary(lx);
		if (b == NULL) {
			fx_expr_free(e);
			return NULL;
		}
		e = node(N_AND, e, b);
	}
	return e;
}

static struct fx_expr *
parse_or(struct lexer *lx)
{
	struct fx_expr *e = parse_and(lx);

	while (e != NULL && word_is(lx, "or")) {
		struct fx_expr *b = parse_and(lx);
		if (b == NULL) {
			fx_expr_free(e);
			return NULL;
		}
		e = node(N_OR, e, b);
	}
	return e;
}

int
fx_expr_parse(const char *text, struct fx_expr **out, struct rba_detail *d)
{
	struct lexer lx = { text, text, d, 0 };
	struct fx_expr *e;

	*out = NULL;
	if (strlen(text) > FX_MAX_EXPR)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"more than %u bytes", FX_MAX_EXPR);
	e = parse_or(&lx);
	if (e != NULL) {
		skip_ws(&lx);
		if (*lx.p != 0) {
			fx_expr_free(e);
			e = NULL;
			lx_fail(&lx, "expected 'and', 'or' or the end");
		}
	}
	if (e == NULL)
		return lx.err ? lx.err
			      : rba_fail(d, RBA_E_NOMEM, NULL, 0, 0,
					 "out of memory");
	*out = e;
	return 0;
}

void
fx_expr_free(struct fx_expr *e)
{
	if (e == NULL)
		return;
	fx_expr_free(e->a);
	fx_expr_free(e->b);
	free(e);
}

unsigned
fx_expr_metrics(const struct fx_expr *e)
{
	if (e == NULL)
		return 0;
	if (e->kind == N_CMP)
		return 1u << e->metric;
	return fx_expr_metrics(e->a) | fx_expr_metrics(e->b);
}

static double
stat_value(const struct fx_paired *pr, enum stat_kind s)
{
	switch (s) {
	case S_MEDIAN:
		return pr->delta.median;
	case S_MEAN:
		return pr->delta.mean;
	case S_STDEV:
		return pr->delta.stdev;
	case S_MIN:
		return pr->delta.min;
	case S_MAX:
		return pr->delta.max;
	case S_WORSE:
		return pr->worse;
	case S_BETTER:
		return pr->better;
	case S_SHIFT:
		return pr->shift;
	default:
		return pr->p;
	}
}

int
fx_expr_eval(const struct fx_expr *e, const struct fx_paired *pr)
{
	double v;

	switch (e->kind) {
	case N_OR:
		return fx_expr_eval(e->a, pr) || fx_expr_eval(e->b, pr);
	case N_AND:
		return fx_expr_eval(e->a, pr) && fx_expr_eval(e->b, pr);
	case N_NOT:
		return !fx_expr_eval(e->a, pr);
	default:
		break;
	}
	v = stat_value(&pr[e->metric], e->stat);
	switch (e->op) {
	case OP_LT:
		return v < e->num;
	case OP_LE:
		return v <= e->num;
	case OP_GT:
		return v > e->num;
	case OP_GE:
		return v >= e->num;
	case OP_EQ:
		return v == e->num;
	default:
		return v != e->num;
	}
}

enum fx_verdict
fx_verdict_decide(const struct fx_expr *e, const struct fx_paired *pr)
{
	unsigned used = fx_expr_metrics(e);

	for (int m = 0; m < FX_NMETRICS; m++)
		if ((used & (1u << m)) && !pr[m].resolved)
			return FX_NOT_RESOLVED;
	return fx_expr_eval(e, pr) ? FX_MET : FX_NOT_MET;
}

const char *
fx_verdict_name(enum fx_verdict v)
{
	return v == FX_MET ? "MET" : v == FX_NOT_MET ? "NOT MET" : "NOT RESOLVED";
}

/* ---- gate ----------------------------------------------------------- */

#define GATE_SCHEMA "rebuild-audit/gate/v1"

static void
put_num_line(struct rba_buf *b, const char *key, double v)
{
	char num[RBA_JSON_NUM_MAX];

	rba_json_fmt_double(v, num);
	rba_buf_printf(b, "%s: %s\n", key, num);
}

void
fx_gate_render(const struct fx_gate *g, struct rba_buf *b)
{
	char h1[RBA_DIGEST_TEXT_LEN + 1], h2[RBA_DIGEST_TEXT_LEN + 1];
	int hb = fx_metric_higher_better(g->metric);

	rba_digest_format(&g->config_hash, h1);
	rba_digest_format(&g->eval_fingerprint, h2);
	rba_buf_printf(b,
		       "# A calibrated gate: threshold = baseline median %s k x "
		       "baseline spread.\n"
		       "schema: " GATE_SCHEMA "\nmetric: %s\ndirection: %s\n",
		       hb ? "-" : "+", fx_metric_name(g->metric),
		       hb ? "higher-is-better" : "lower-is-better");
	put_num_line(b, "k", g->k);
	put_num_line(b, "baseline_median", g->median);
	put_num_line(b, "baseline_spread", g->spread);
	put_num_line(b, "threshold", g->threshold);
	rba_buf_printf(b,
		       "seeds: %" PRIu64 "\nsweep: \"%s\"\nversion: %s\n"
		       "config_hash: %s\neval_fingerprint: %s\n",
		       g->seeds, g->sweep, g->version, h1, h2);
}

int
fx_gate_parse(const char *text, size_t n, const char *name,
	      struct fx_gate *g, struct rba_detail *d)
{
	static const char *const keys[] = {
		"schema", "metric", "direction", "k", "baseline_median",
		"baseline_spread", "threshold", "seeds", "sweep", "version",
		"config_hash", "eval_fingerprint"
	};
	enum { NKEYS = 12 };
	unsigned seen = 0, line = 0;
	const char *p = text, *end = text + n;
	char buf[512];
	const char *dir = NULL;
	char dirbuf[32] = "";

	memset(g, 0, sizeof(*g));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *colon, *val, *ve;
		int k = -1;

		line++;
		if (len >= sizeof(buf))
			return rba_fail(d, RBA_E_SCHEMA, name, line, 1,
					"line too long");
		memcpy(buf, p, len);
		buf[len] = 0;
		p += len + (nl != NULL);
		if (buf[0] == '#' || buf[0] == 0)
			continue;
		if ((colon = strstr(buf, ": ")) == NULL)
			return rba_fail(d, RBA_E_SCHEMA, name, line, 1,
					"expected 'key: value'");
		*colon = 0;
		val = colon + 2;
		ve = val + strlen(val);
		while (ve > val && (ve[-1] == ' ' || ve[-1] == '\r'))
			*--ve = 0;
		if (ve - val >= 2 && val[0] == '"' && ve[-1] == '"') {
			ve[-1] = 0;
			val++;
		}
		for (int i = 0; i < NKEYS; i++)
			if (strcmp(buf, keys[i]) == 0)
				k = i;
		if (k < 0)
			return rba_fail(d, RBA_E_SCHEMA, name, line, 1,
					"unknown key '%s'", buf);
		if (seen & (1u << k))
			return rba_fail(d, RBA_E_SCHEMA, name, line, 1,
					"key '%s' given twice", buf);
		seen |= 1u << k;
		switch (k) {
		case 0:
			if (strncmp(val, "rebuild-audit/gate/v", 20) == 0 &&
			    strcmp(val, GATE_SCHEMA) != 0)
				return rba_fail(d, RBA_E_NEWER, name, line, 9,
						"a gate of a newer format "
						"('%s')",
						val);
			if (strcmp(val, GATE_SCHEMA) != 0)
				return rba_fail(d, RBA_E_SCHEMA, name, line, 9,
						"not a gate (schema %s)",
						GATE_SCHEMA);
			break;
		case 1: {
			int m = -1;
			for (int i = 0; i < FX_NMETRICS; i++)
				if (strcmp(val, metric_names[i]) == 0)
					m = i;
			if (m < 0)
				return rba_fail(d, RBA_E_SCHEMA, name, line, 9,
						"unknown metric '%s'", val);
			g->metric = (enum fx_metric)m;
			break;
		}
		case 2:
			snprintf(dirbuf, sizeof(dirbuf), "%s", val);
			dir = dirbuf;
			break;
		case 3:
		case 4:
		case 5:
		case 6: {
			char *e;
			double v = strtod(val, &e);
			double *dst[] = { &g->k, &g->median, &g->spread,
					  &g->threshold };
			if (e == val || *e != 0 || !isfinite(v))
				return rba_fail(d, RBA_E_SCHEMA, name, line,
						(unsigned long)(val - buf) + 1,
						"'%s' is not a finite number",
						buf);
			*dst[k - 3] = v;
			break;
		}
		case 7: {
			const char *q = val;
			if (parse_u64(&q, &g->seeds) || *q != 0)
				return rba_fail(d, RBA_E_SCHEMA, name, line,
						(unsigned long)(val - buf) + 1,
						"seeds is a count");
			break;
		}
		case 8:
			snprintf(g->sweep, sizeof(g->sweep), "%s", val);
			break;
		case 9:
			snprintf(g->version, sizeof(g->version), "%s", val);
			break;
		default:
			if (rba_digest_parse(val, k == 10 ? &g->config_hash
							  : &g->eval_fingerprint))
				return rba_fail(d, RBA_E_SCHEMA, name, line,
						(unsigned long)(val - buf) + 1,
						"'%s' is not a digest", buf);
			break;
		}
	}
	if (seen != (1u << NKEYS) - 1) {
		for (int i = 0; i < NKEYS; i++)
			if (!(seen & (1u << i)))
				return rba_fail(d, RBA_E_SCHEMA, name, 0, 0,
						"key '%s' is missing", keys[i]);
	}
	if (strcmp(dir, fx_metric_higher_better(g->metric) ? "higher-is-better"
							    : "lower-is-better"))
		return rba_fail(d, RBA_E_SCHEMA, name, 0, 0,
				"direction '%s' is not the metric's", dir);
	return 0;
}

int
fx_gate_pass(const struct fx_gate *g, double v)
{
	if (!isfinite(v))
		return 0;
	return fx_metric_higher_better(g->metric) ? v >= g->threshold
						   : v <= g->threshold;
}

/* ---- bisection ------------------------------------------------------ */

struct leaf {
	char path[96];
	char value[256];
};

/*
 * The leaves of a canonical pins text: "key: value" lines with their
 * mapping path ("train.lr"); mapping lines without a value only extend
 * the path.  Indentation is two spaces per level (the canonical form).
 */
static int
leaves(const struct pins *p, struct leaf **out, size_t *n)
{
	struct rba_buf b;
	const char *s, *end;
	char stack[8][48];
	size_t cap = 64, k = 0;
	struct leaf *v;

	rba_buf_init(&b);
	policy_pins_canonical(p, &b);
	if (rba_buf_status(&b) || (v = malloc(cap * sizeof(*v))) == NULL) {
		rba_buf_release(&b);
		return RBA_E_NOMEM;
	}
	s = (const char *)b.p;
	end = s + b.len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		size_t ind = 0, depth;
		const char *c;
		while (ind < len && s[ind] == ' ')
			ind++;
		depth = ind / 2;
		c = memchr(s + ind, ':', len - ind);
		if (c != NULL && depth < 8) {
			size_t kl = (size_t)(c - s - (ptrdiff_t)ind);
			if (kl >= sizeof(stack[0]))
				kl = sizeof(stack[0]) - 1;
			memcpy(stack[depth], s + ind, kl);
			stack[depth][kl] = 0;
			if ((size_t)(c - s) + 1 < len) {
				struct leaf *L;
				size_t at = 0;
				if (k == cap) {
					struct leaf *w = realloc(v, 2 * cap * sizeof(*v));
					if (w == NULL) {
						free(v);
						rba_buf_release(&b);
						return RBA_E_NOMEM;
					}
					v = w;
					cap *= 2;
				}
				L = &v[k++];
				L->path[0] = 0;
				for (size_t i = 0; i <= depth; i++)
					at += (size_t)snprintf(
						L->path + at,
						at < sizeof(L->path)
							? sizeof(L->path) - at
							: 0,
						"%s%s", i ? "." : "", stack[i]);
				snprintf(L->value, sizeof(L->value), "%.*s",
					 (int)(len - (size_t)(c - s) - 2),
					 c + 2);
			}
		}
		s += len + (nl != NULL);
	}
	rba_buf_release(&b);
	*out = v;
	*n = k;
	return 0;
}

static int
not_an_edit(const char *path)
{
	static const char *const skip[] = { "schema", "version",
					     "code_revision", "trainer_abi",
					     "environment", "artifact" };
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(path, skip[i]) == 0)
			return 1;
	return 0;
}

int
fx_edits(const struct pins *base, const struct pins *cand,
	 struct fx_edit **edits, size_t *n, struct rba_detail *d)
{
	struct leaf *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, k = 0;
	struct fx_edit *e = NULL;
	int err;

	*edits = NULL;
	*n = 0;
	if ((err = leaves(base, &a, &na)) || (err = leaves(cand, &b, &nb))) {
		free(a);
		return rba_fail(d, err, NULL, 0, 0, "out of memory");
	}
	for (size_t i = 0; i < na && i < nb; i++)
		if (strcmp(a[i].path, b[i].path) != 0)
			na = 0;
	if (na != nb) {
		free(a);
		free(b);
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"the two pins have different shapes (another "
				"model kind?): no field-by-field edits");
	}
	if ((e = calloc(na ? na : 1, sizeof(*e))) == NULL) {
		free(a);
		free(b);
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	}
	for (size_t i = 0; i < na; i++) {
		if (not_an_edit(a[i].path) || strcmp(a[i].value, b[i].value) == 0)
			continue;
		snprintf(e[k].path, sizeof(e[k].path), "%s", a[i].path);
		snprintf(e[k].base, sizeof(e[k].base), "%s", a[i].value);
		snprintf(e[k].cand, sizeof(e[k].cand), "%s", b[i].value);
		k++;
	}
	free(a);
	free(b);
	*edits = e;
	*n = k;
	return 0;
}

int
fx_edits_apply(const struct pins *base, const struct fx_edit *edits,
	       size_t n, const unsigned char *pick, struct pins **out,
	       struct rba_detail *d)
{
	struct leaf *a = NULL;
	size_t na = 0;
	struct rba_buf b, t;
	const char *s, *end;
	size_t li = 0;
	int err;

	*out = NULL;
	if ((err = leaves(base, &a, &na)))
		return rba_fail(d, err, NULL, 0, 0, "out of memory");
	rba_buf_init(&b);
	rba_buf_init(&t);
	policy_pins_canonical(base, &b);
	s = (const char *)b.p;
	end = s + b.len;
	/* Walk the canonical text again; leaf lines come in the same order
	 * as leaves() found them. */
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		const char *c = memchr(s, ':', len);
		const char *repl = NULL;
		if (c != NULL && (size_t)(c - s) + 1 < len) {
			for (size_t i = 0; li < na && i < n; i++)
				if (pick[i] && strcmp(edits[i].path, a[li].path) == 0)
					repl = edits[i].cand;
			li++;
		}
		if (repl != NULL)
			rba_buf_printf(&t, "%.*s %s\n", (int)(c - s + 1), s, repl);
		else
			rba_buf_printf(&t, "%.*s\n", (int)len, s);
		s += len + (nl != NULL);
	}
	free(a);
	rba_buf_release(&b);
	if (rba_buf_status(&t)) {
		rba_buf_release(&t);
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	}
	err = policy_pins_parse(t.p, t.len, "edited pins", out, d);
	rba_buf_release(&t);
	return err;
}
