/*
 * expr.c - the success expressions of compare (forensics.h, "success
 * expressions"): a recursive-descent parser over the grammar there, and
 * their value over paired results.
 */
#include "forensics/forensics.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	enum fx_metric m;
	int metric = -1, stat = -1;
	char *end;

	if (n > 0 && fx_metric_parse(lx->p, n, &m) == 0)
		metric = (int)m;
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
