/*
 * gate.c - the gate file, its calibration and the one rule that decides
 * it (gate.h).
 */
#include "forensics/gate.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"

/* ---- the file -------------------------------------------------------- */

static void
put_num_line(struct rba_buf *b, const char *key, double v)
{
	char num[RBA_JSON_NUM_MAX];

	rba_json_fmt_double(v, num);
	rba_buf_printf(b, "%s: %s\n", key, num);
}

const char *
fx_gate_direction(const struct fx_gate *g)
{
	return fx_metric_higher_better(g->metric) ? "higher-is-better"
						  : "lower-is-better";
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
		       "schema: " FX_GATE_SCHEMA "\nmetric: %s\ndirection: %s\n",
		       hb ? "-" : "+", fx_metric_name(g->metric),
		       fx_gate_direction(g));
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
fx_gate_write(const char *path, const struct fx_gate *g, int flags,
	      struct rba_detail *d)
{
	struct rba_buf b;
	int err;

	rba_buf_init(&b);
	fx_gate_render(g, &b);
	err = rba_buf_status(&b);
	if (err == 0)
		err = rba_file_write_output(path, b.p, b.len, 0644, flags, NULL, d);
	rba_buf_release(&b);
	return err;
}

enum gate_key {
	K_SCHEMA, K_METRIC, K_DIRECTION, K_K, K_MEDIAN, K_SPREAD, K_THRESHOLD,
	K_SEEDS, K_SWEEP, K_VERSION, K_CONFIG_HASH, K_EVAL_FINGERPRINT,
	NKEYS
};
static const char *const gate_keys[NKEYS] = {
	"schema", "metric", "direction", "k", "baseline_median",
	"baseline_spread", "threshold", "seeds", "sweep", "version",
	"config_hash", "eval_fingerprint"
};

/* A count: digits only, no sign or space, nothing after them. */
static int
parse_count(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return *s == 0 ? 0 : -1;
}

/* One parsed line of a gate file. */
struct gate_line {
	const char *name;
	unsigned long line, col; /* col: where the value starts */
	char buf[FX_GATE_MAX_LINE];
	const char *key, *val;
	char dir[32];
};

/*
 * Splits L->buf (one line, NUL-terminated) into key and value: the value
 * after the first ": ", blanks and '\r' trimmed at its end, one pair of
 * double quotes around it taken off.
 */
static int
gate_split(struct gate_line *L, struct rba_detail *d)
{
	char *colon, *val, *ve;

	if ((colon = strstr(L->buf, ": ")) == NULL)
		return rba_fail(d, RBA_E_SCHEMA, L->name, L->line, 1,
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
	L->key = L->buf;
	L->val = val;
	L->col = (unsigned long)(colon + 2 - L->buf) + 1;
	return 0;
}

/* Takes the value of key k into g. */
static int
gate_value(struct gate_line *L, enum gate_key k, struct fx_gate *g,
	   struct rba_detail *d)
{
	const char *val = L->val;
	unsigned long vcol = (unsigned long)(val - L->buf) + 1;
	double *num[] = { &g->k, &g->median, &g->spread, &g->threshold };
	enum fx_metric m;
	char *e;
	double v;

	switch (k) {
	case K_SCHEMA:
		if (strncmp(val, "rebuild-audit/gate/v", 20) == 0 &&
		    strcmp(val, FX_GATE_SCHEMA) != 0)
			return rba_fail(d, RBA_E_NEWER, L->name, L->line, 9,
					"a gate of a newer format ('%s')", val);
		if (strcmp(val, FX_GATE_SCHEMA) != 0)
			return rba_fail(d, RBA_E_SCHEMA, L->name, L->line, 9,
					"not a gate (schema %s)", FX_GATE_SCHEMA);
		return 0;
	case K_METRIC:
		if (fx_metric_parse(val, strlen(val), &m) != 0)
			return rba_fail(d, RBA_E_SCHEMA, L->name, L->line, 9,
					"unknown metric '%s'", val);
		g->metric = m;
		g->metric_line = L->line;
		g->metric_col = L->col;
		return 0;
	case K_DIRECTION:
		snprintf(L->dir, sizeof(L->dir), "%s", val);
		return 0;
	case K_K:
	case K_MEDIAN:
	case K_SPREAD:
	case K_THRESHOLD:
		v = strtod(val, &e);
		if (e == val || *e != 0 || !isfinite(v))
			return rba_fail(d, RBA_E_SCHEMA, L->name, L->line, vcol,
					"'%s' is not a finite number", L->key);
		*num[k - K_K] = v;
		return 0;
	case K_SEEDS:
		if (parse_count(val, &g->seeds))
			return rba_fail(d, RBA_E_SCHEMA, L->name, L->line, vcol,
					"seeds is a count");
		return 0;
	case K_SWEEP:
		snprintf(g->sweep, sizeof(g->sweep), "%s", val);
		return 0;
	case K_VERSION:
		/* A version name (as calibrate writes it, unquoted), so that
		 * every gate read renders a file that reads back the same. */
		if (!policy_name_valid(val))
			return rba_fail(d, RBA_E_SCHEMA, L->name, L->line, vcol,
					"'%s' is not a version name", L->key);
		snprintf(g->version, sizeof(g->version), "%s", val);
		return 0;
	default:
		if (rba_digest_parse(val, k == K_CONFIG_HASH
						  ? &g->config_hash
						  : &g->eval_fingerprint))
			return rba_fail(d, RBA_E_SCHEMA, L->name, L->line, vcol,
					"'%s' is not a digest", L->key);
		return 0;
	}
}

/* Every key once, and the direction the metric's. */
static int
gate_complete(const struct gate_line *L, unsigned seen, const struct fx_gate *g,
	      struct rba_detail *d)
{
	for (int i = 0; i < NKEYS; i++)
		if (!(seen & (1u << i)))
			return rba_fail(d, RBA_E_SCHEMA, L->name, 0, 0,
					"key '%s' is missing", gate_keys[i]);
	if (strcmp(L->dir, fx_gate_direction(g)) != 0)
		return rba_fail(d, RBA_E_SCHEMA, L->name, 0, 0,
				"direction '%s' is not the metric's", L->dir);
	return 0;
}

int
fx_gate_parse(const char *text, size_t n, const char *name, struct fx_gate *g,
	      struct rba_detail *d)
{
	struct gate_line L;
	const char *p = text, *end = text + n;
	unsigned seen = 0;
	int err;

	memset(g, 0, sizeof(*g));
	memset(&L, 0, sizeof(L));
	L.name = name;
	snprintf(g->file, sizeof(g->file), "%s", name);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int k = -1;

		L.line++;
		if (len >= sizeof(L.buf))
			return rba_fail(d, RBA_E_SCHEMA, name, L.line, 1,
					"line too long");
		memcpy(L.buf, p, len);
		L.buf[len] = 0;
		p += len + (nl != NULL);
		if (L.buf[0] == '#' || L.buf[0] == 0)
			continue;
		if ((err = gate_split(&L, d)) != 0)
			return err;
		for (int i = 0; i < NKEYS; i++)
			if (strcmp(L.key, gate_keys[i]) == 0)
				k = i;
		if (k < 0)
			return rba_fail(d, RBA_E_SCHEMA, name, L.line, 1,
					"unknown key '%s'", L.key);
		if (seen & (1u << k))
			return rba_fail(d, RBA_E_SCHEMA, name, L.line, 1,
					"key '%s' given twice", L.key);
		seen |= 1u << k;
		if ((err = gate_value(&L, (enum gate_key)k, g, d)) != 0)
			return err;
	}
	return gate_complete(&L, seen, g, d);
}

int
fx_gate_pass(const struct fx_gate *g, double v)
{
	if (!isfinite(v))
		return 0;
	return fx_metric_higher_better(g->metric) ? v >= g->threshold
						   : v <= g->threshold;
}

/* ---- the rule -------------------------------------------------------- */

/* 1 when every run can give metric m. */
static int
measurable(enum fx_metric m, const struct rebuild_runrec *runs, size_t n,
	   uint32_t *classes)
{
	for (size_t i = 0; i < n; i++)
		if (m == FX_VAL_AUC && runs[i].nclasses != 2) {
			*classes = runs[i].nclasses;
			return 0;
		}
	return 1;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
fx_gate_decide(const struct fx_gate *g, const struct rebuild_runrec *runs,
	       size_t n, const char *target, struct fx_gate_value *out,
	       struct fx_fault *f)
{
	double worst = fx_metric_higher_better(g->metric) ? -INFINITY
							  : INFINITY;
	uint32_t classes = 0;
	double *v;

	memset(out, 0, sizeof(*out));
	out->metric = g->metric;
	out->n = n;
	if (!measurable(g->metric, runs, n, &classes)) {
		fx_fault_clear(f);
		rba_fail(&f->d, RBA_E_UNSUPPORTED, g->file, g->metric_line,
			 g->metric_col,
			 "key 'metric': %s needs two classes and '%s' has %u",
			 fx_metric_name(g->metric), target, classes);
		rba_detail_key(&f->d, "metric");
		return fx_fail(f, RBA_E_UNSUPPORTED, FX_STEP_GATE_MEASURE,
			       g->file, NULL);
	}
	if ((v = malloc((n ? n : 1) * sizeof(double))) == NULL) {
		fx_fault_clear(f);
		return fx_fail(f, RBA_E_NOMEM, FX_STEP_GATE_MEASURE, g->file,
			       NULL);
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = fx_metric_of(&runs[i], g->metric);
		if (!isfinite(v[i]))
			v[i] = worst;
	}
	qsort(v, n, sizeof(double), cmp_double);
	out->value = n == 0       ? NAN
		     : n % 2 == 1 ? v[n / 2]
				  : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	free(v);
	out->pass = fx_gate_pass(g, out->value);
	return 0;
}

int
fx_gate_validate(const struct fx_gate *g, const struct rebuild_runrec *runs,
		 size_t n, const char *target, unsigned char *pass,
		 size_t *alarms, struct fx_fault *f)
{
	struct fx_gate_value one;
	int err;

	*alarms = 0;
	for (size_t i = 0; i < n; i++) {
		if ((err = fx_gate_decide(g, &runs[i], 1, target, &one, f)))
			return err;
		pass[i] = (unsigned char)one.pass;
		*alarms += !one.pass;
	}
	return 0;
}

uint64_t
fx_gate_alarms_allowed(size_t n)
{
	return (uint64_t)((double)n * 0.05);
}

int
fx_gate_calibrate(const struct fx_sweep *s, enum fx_metric m, double k,
		  struct fx_gate *g, struct fx_fault *f)
{
	struct fx_stat st;
	uint32_t classes = 0;

	memset(g, 0, sizeof(*g));
	if (!measurable(m, s->runs, s->n, &classes)) {
		fx_fault_clear(f);
		return fx_fail(f, RBA_E_UNSUPPORTED, FX_STEP_GATE_MEASURE,
			       s->id, "%s needs two classes and the sweep has %u",
			       fx_metric_name(m), classes);
	}
	fx_sweep_stat(s, m, &st);
	g->metric = m;
	g->k = k;
	g->median = st.median;
	g->spread = st.spread;
	g->threshold = fx_metric_higher_better(m) ? st.median - k * st.spread
						  : st.median + k * st.spread;
	g->seeds = s->n;
	snprintf(g->sweep, sizeof(g->sweep), "%s", s->id);
	snprintf(g->version, sizeof(g->version), "%s", s->pins->version);
	g->config_hash = s->config_hash;
	g->eval_fingerprint = s->eval_fingerprint;
	return 0;
}

int
fx_gate_contract(const struct fx_gate *g, const struct rba_digest *fp,
		 int allow, const char *target, struct fx_fault *f)
{
	if (rba_digest_equal(&g->eval_fingerprint, fp) || allow)
		return 0;
	fx_fault_clear(f);
	return fx_fail(f, RBA_E_USAGE, FX_STEP_GATE_REFUSE, target,
		       "its eval fingerprint is not the gate's; give "
		       "--allow-contract-change to check anyway");
}

int
fx_gate_check_stored(struct store_txn *txn, const struct fx_gate *g,
		     const char *id, int allow, struct fx_gate_value *out,
		     struct fx_fault *f)
{
	struct rebuild_runrec rr;
	struct fx_sweep sw;
	uint8_t *t = NULL;
	size_t n = 0;
	int err;

	fx_fault_clear(f);
	if ((err = store_run_get(txn, id, &t, &n, &f->d)))
		return fx_fail(f, err, FX_STEP_GATE_CHECK, id, NULL);
	if (strstr((const char *)t, "\"" FX_SWEEP_SCHEMA "\"")) {
		free(t);
		if ((err = fx_sweep_load(txn, id, &sw, f)))
			return err;
		err = fx_gate_contract(g, &sw.eval_fingerprint, allow, id, f);
		if (err == 0)
			err = fx_gate_decide(g, sw.runs, sw.n, id, out, f);
		fx_sweep_release(&sw);
		return err;
	}
	err = rebuild_runrec_parse(t, n, &rr, &f->d);
	free(t);
	if (err)
		return fx_fail(f, err, FX_STEP_GATE_CHECK, id, NULL);
	err = fx_gate_contract(g, &rr.eval_fingerprint, allow, id, f);
	if (err == 0)
		err = fx_gate_decide(g, &rr, 1, id, out, f);
	rebuild_runrec_release(&rr);
	return err;
}
