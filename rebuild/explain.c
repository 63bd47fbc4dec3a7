/*
 * explain.c - per-column contributions of a case's margin: linear
 * attributions for logistic regression, path-dependent TreeSHAP for
 * forests, exact Shapley values by coalition enumeration for networks.
 * The algorithms and the baseline are described in explain.h.
 *
 * Everything is double arithmetic on float32 parameters and inputs,
 * in fixed orders, with no library math: the same bits on every
 * machine the strict trainer gives the same bits on.
 */
#include "rebuild/explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rebuild/csv.h"
#include "rebuild/encode.h"

void
explain_baseline_release(struct explain_baseline *b)
{
	if (b == NULL)
		return;
	free(b->feat_mean);
	free(b->col_mean);
	free(b->col_mode);
	memset(b, 0, sizeof(*b));
}

void
explain_result_release(struct explain_result *r)
{
	if (r == NULL)
		return;
	free(r->contrib);
	memset(r, 0, sizeof(*r));
}

const char *
explain_method_name(int method)
{
	switch (method) {
	case EXPLAIN_LINEAR: return "linear";
	case EXPLAIN_TREESHAP: return "treeshap";
	case EXPLAIN_SHAPLEY: return "shapley";
	default: return "";
	}
}

int
explain_method_of(const struct artifact *a)
{
	if (a->model.kind == REBUILD_KIND_GBDT)
		return EXPLAIN_TREESHAP;
	return a->model.nlayers == 1 ? EXPLAIN_LINEAR : EXPLAIN_SHAPLEY;
}

/* First feature of each column (ncolumns + 1 entries). */
static uint32_t *
column_starts(const struct encode_spec *s)
{
	uint32_t *f0 = malloc((s->ncolumns + 1) * sizeof(uint32_t)), f = 0;

	if (f0 == NULL)
		return NULL;
	for (uint32_t c = 0; c < s->ncolumns; c++) {
		f0[c] = f;
		f += s->columns[c].kind == ENCODE_NUMERIC ? 1 : s->columns[c].nlevels;
	}
	f0[s->ncolumns] = f;
	return f0;
}

int
explain_baseline_fit(const struct pins *p, const struct artifact *a,
		     const void *snapshot, size_t n, const char *name,
		     struct explain_baseline *out, struct rba_detail *d)
{
	const struct encode_spec *s = &a->spec;
	struct csv_table *t = NULL;
	size_t *tr = NULL, *va = NULL, ntr = 0, nva = 0, nf = s->nfeatures;
	float *x = NULL, *z = NULL;
	double *sum = NULL;
	uint32_t *f0 = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = csv_table_load_mem(snapshot, n, name, &t, d)) != 0)
		return err;
	x = malloc((t->nrows ? t->nrows : 1) * (nf ? nf : 1) * sizeof(float));
	z = malloc((nf ? nf : 1) * sizeof(float));
	sum = calloc(nf ? nf : 1, sizeof(double));
	f0 = column_starts(s);
	out->feat_mean = calloc(nf ? nf : 1, sizeof(double));
	out->col_mean = calloc(s->ncolumns ? s->ncolumns : 1, sizeof(double));
	out->col_mode = calloc(s->ncolumns ? s->ncolumns : 1, sizeof(uint32_t));
	if (x == NULL || z == NULL || sum == NULL || f0 == NULL ||
	    out->feat_mean == NULL || out->col_mean == NULL || out->col_mode == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	if ((err = encode_table(s, t, x, d)) != 0)
		goto out;
	if ((err = encode_split(p, t->nrows, &tr, &ntr, &va, &nva)) != 0) {
		rba_fail(d, err, name, 0, 0, "%s",
			 err == RBA_E_RANGE ? "need at least two rows to split"
					    : "out of memory");
		goto out;
	}
	out->nfeatures = (uint32_t)nf;
	out->ncolumns = s->ncolumns;
	out->ntrain = ntr;
	/* The model's inputs, as its forward pass sees them. */
	for (size_t i = 0; i < ntr; i++) {
		const float *row = x + tr[i] * nf;
		encode_standardize(s, row, 1, z);
		for (size_t f = 0; f < nf; f++)
			out->feat_mean[f] += (double)z[f];
		for (size_t f = 0; f < nf; f++)
			sum[f] += (double)row[f];
	}
	for (size_t f = 0; f < nf; f++)
		out->feat_mean[f] /= (double)ntr;
	for (uint32_t c = 0; c < s->ncolumns; c++) {
		if (s->columns[c].kind == ENCODE_NUMERIC) {
			out->col_mean[c] = sum[f0[c]] / (double)ntr;
			continue;
		}
		/* Level counts are exact in double: the first largest wins. */
		uint32_t best = 0;
		for (uint32_t k = 1; k < s->columns[c].nlevels; k++)
			if (sum[f0[c] + k] > sum[f0[c] + best])
				best = k;
		out->col_mode[c] = best;
		out->col_mean[c] = NAN;
	}
out:
	if (err != 0)
		explain_baseline_release(out);
	csv_table_free(t);
	free(tr);
	free(va);
	free(x);
	free(z);
	free(sum);
	free(f0);
	return err;
}

/* ---- networks --------------------------------------------------------- */

/*
 * Layers l0 .. nlayers - 1 of network m on in (sizes[l0] values, already
 * through the activation), ReLU between layers, in double; the logits
 * land in one of the scratch buffers (each as wide as the widest layer),
 * which is returned.
 */
static const double *
net_tail(const struct rebuild_model *m, uint32_t l0, const double *in,
	 double *s1, double *s2)
{
	const double *cur = in;
	double *nxt = s1;

	for (uint32_t l = l0; l < m->nlayers; l++) {
		uint32_t ni = m->sizes[l], no = m->sizes[l + 1];
		const float *w = m->w[l], *b = m->b[l];
		for (uint32_t j = 0; j < no; j++)
			nxt[j] = (double)b[j];
		for (uint32_t i = 0; i < ni; i++) {
			double v = cur[i];
			if (v == 0.0)
				continue; /* adds +0 or -0 terms only: no change */
			for (uint32_t j = 0; j < no; j++)
				nxt[j] += v * (double)w[(size_t)i * no + j];
		}
		if (l + 1 < m->nlayers)
			for (uint32_t j = 0; j < no; j++)
				if (!(nxt[j] > 0.0))
					nxt[j] = 0.0;
		cur = nxt;
		nxt = nxt == s1 ? s2 : s1;
	}
	return cur;
}

/* The explained margin of class cls from C logits z. */
static double
logit_margin(const double *z, uint32_t C, uint32_t cls)
{
	double mean = 0.0;

	if (C == 2)
		return z[cls] - z[1 - cls];
	for (uint32_t k = 0; k < C; k++)
		mean += z[k];
	return z[cls] - mean / (double)C;
}

static uint32_t
widest(const struct rebuild_model *m)
{
	uint32_t w = 1;

	for (uint32_t l = 0; l <= m->nlayers; l++)
		if (m->sizes[l] > w)
			w = m->sizes[l];
	return w;
}

static int
explain_linear(const struct artifact *a, const struct explain_baseline *b,
	       const float *x, const uint32_t *f0, struct explain_result *r)
{
	const struct rebuild_model *m = &a->model;
	uint32_t nf = m->sizes[0], C = m->sizes[1], cls = r->cls;
	const float *w = m->w[0], *bias = m->b[0];
	double icpt;

	/* beta_f: the coefficient of f in the explained margin. */
#define BETA(row, out)                                                        \
	do {                                                                  \
		if (C == 2) {                                                 \
			(out) = (double)(row)[cls] - (double)(row)[1 - cls];  \
		} else {                                                      \
			double mu_ = 0.0;                                     \
			for (uint32_t k_ = 0; k_ < C; k_++)                   \
				mu_ += (double)(row)[k_];                     \
			(out) = (double)(row)[cls] - mu_ / (double)C;         \
		}                                                             \
	} while (0)
	BETA(bias, icpt);
	r->baseline = icpt;
	for (uint32_t c = 0; c < r->ncolumns; c++) {
		double sc = 0.0;
		for (uint32_t f = f0[c]; f < f0[c + 1]; f++) {
			double beta;
			BETA(w + (size_t)f * C, beta);
			sc += beta * ((double)x[f] - b->feat_mean[f]);
		}
		r->contrib[c] = sc;
	}
	for (uint32_t f = 0; f < nf; f++) {
		double beta;
		BETA(w + (size_t)f * C, beta);
		r->baseline += beta * b->feat_mean[f];
	}
#undef BETA
	return 0;
}

/* The standardized baseline case of a network's Shapley values. */
static void
baseline_case(const struct artifact *a, const struct explain_baseline *b,
	      const uint32_t *f0, float *raw)
{
	const struct encode_spec *s = &a->spec;

	memset(raw, 0, s->nfeatures * sizeof(float));
	for (uint32_t c = 0; c < s->ncolumns; c++) {
		if (s->columns[c].kind == ENCODE_NUMERIC)
			raw[f0[c]] = (float)b->col_mean[c];
		else
			raw[f0[c] + b->col_mode[c]] = 1.0f;
	}
}

/*
 * The layers after the first, in double, for the coalition values: the
 * hidden layers' weights widened once, and the output layer folded into
 * one column giving the explained margin (beta as in explain_linear).
 */
struct sh_tail {
	uint32_t nl; /* hidden layers after the first (weight layers 1 .. nl) */
	const struct rebuild_model *m;
	double *w[REBUILD_MAX_LAYERS], *b[REBUILD_MAX_LAYERS];
	double *mw, mb; /* the margin column over the last hidden layer */
};

static void
sh_tail_release(struct sh_tail *t)
{
	for (uint32_t l = 0; l < REBUILD_MAX_LAYERS; l++) {
		free(t->w[l]);
		free(t->b[l]);
	}
	free(t->mw);
}

/* beta of row[0 .. C) for class cls: its coefficient in the margin. */
static double
margin_coef(const float *row, uint32_t C, uint32_t cls)
{
	double mu = 0.0;

	if (C == 2)
		return (double)row[cls] - (double)row[1 - cls];
	for (uint32_t k = 0; k < C; k++)
		mu += (double)row[k];
	return (double)row[cls] - mu / (double)C;
}

static int
sh_tail_init(struct sh_tail *t, const struct rebuild_model *m, uint32_t cls)
{
	uint32_t L = m->nlayers, C = m->sizes[L], nin = m->sizes[L - 1];

	memset(t, 0, sizeof(*t));
	t->m = m;
	t->nl = L - 1;
	for (uint32_t l = 1; l + 1 < L; l++) {
		size_t nw = (size_t)m->sizes[l] * m->sizes[l + 1];
		t->w[l] = malloc(nw * sizeof(double));
		t->b[l] = malloc(m->sizes[l + 1] * sizeof(double));
		if (t->w[l] == NULL || t->b[l] == NULL)
			return RBA_E_NOMEM;
		for (size_t i = 0; i < nw; i++)
			t->w[l][i] = (double)m->w[l][i];
		for (uint32_t j = 0; j < m->sizes[l + 1]; j++)
			t->b[l][j] = (double)m->b[l][j];
	}
	t->mw = malloc(nin * sizeof(double));
	if (t->mw == NULL)
		return RBA_E_NOMEM;
	for (uint32_t i = 0; i < nin; i++)
		t->mw[i] = margin_coef(m->w[L - 1] + (size_t)i * C, C, cls);
	t->mb = margin_coef(m->b[L - 1], C, cls);
	return 0;
}

/* Two doubles side by side (GCC and Clang vector extension): each lane
 * is its own IEEE double, so lanes cannot change a result. */
typedef double sh_v2 __attribute__((vector_size(16)));

/*
 * out = relu(b + in W), each output's sum over the inputs in ascending
 * order; eight outputs at a time are summed side by side in registers
 * (each still its own sum in that order).
 */
static void
sh_dense_relu(const double *restrict in, uint32_t ni, const double *restrict w,
	      const double *restrict b, uint32_t no, double *restrict out)
{
	uint32_t j = 0;

	for (; j + 8 <= no; j += 8) {
		sh_v2 a0, a1, a2, a3;
		memcpy(&a0, b + j, sizeof(a0));
		memcpy(&a1, b + j + 2, sizeof(a1));
		memcpy(&a2, b + j + 4, sizeof(a2));
		memcpy(&a3, b + j + 6, sizeof(a3));
		for (uint32_t i = 0; i < ni; i++) {
			/* no test for a zero input: a mispredicted branch
			 * costs more than the eight products, and +-0 terms
			 * change no sum but a zero's sign, which the ReLU
			 * drops */
			const double *wr = w + (size_t)i * no + j;
			sh_v2 v = { in[i], in[i] }, w0, w1, w2, w3;
			memcpy(&w0, wr, sizeof(w0));
			memcpy(&w1, wr + 2, sizeof(w1));
			memcpy(&w2, wr + 4, sizeof(w2));
			memcpy(&w3, wr + 6, sizeof(w3));
			a0 += v * w0;
			a1 += v * w1;
			a2 += v * w2;
			a3 += v * w3;
		}
		for (uint32_t k = 0; k < 2; k++) {
			out[j + k] = a0[k] > 0.0 ? a0[k] : 0.0;
			out[j + 2 + k] = a1[k] > 0.0 ? a1[k] : 0.0;
			out[j + 4 + k] = a2[k] > 0.0 ? a2[k] : 0.0;
			out[j + 6 + k] = a3[k] > 0.0 ? a3[k] : 0.0;
		}
	}
	for (; j < no; j++) {
		double acc = b[j];
		for (uint32_t i = 0; i < ni; i++)
			acc += in[i] * w[(size_t)i * no + j];
		out[j] = acc > 0.0 ? acc : 0.0;
	}
}

/* The margin from the first hidden layer's activations a1. */
static double
sh_tail_margin(const struct sh_tail *t, const double *a1, double *s1, double *s2)
{
	const struct rebuild_model *m = t->m;
	const double *cur = a1;
	double *nxt = s1, mg = t->mb;
	uint32_t last = m->sizes[m->nlayers - 1];

	for (uint32_t l = 1; l < t->nl; l++) {
		sh_dense_relu(cur, m->sizes[l], t->w[l], t->b[l], m->sizes[l + 1], nxt);
		cur = nxt;
		nxt = nxt == s1 ? s2 : s1;
	}
	for (uint32_t i = 0; i < last; i++)
		mg += cur[i] * t->mw[i];
	return mg;
}

static int
explain_shapley(const struct artifact *a, const struct explain_baseline *b,
		const float *x, const uint32_t *f0, struct explain_result *r,
		struct rba_detail *d)
{
	const struct rebuild_model *m = &a->model;
	uint32_t k = r->ncolumns, nf = m->sizes[0], H = m->sizes[1];
	uint32_t klo = k / 2, khi = k - k / 2;
	size_t nlo = (size_t)1 << klo, nhi = (size_t)1 << khi, nS = (size_t)1 << k;
	uint32_t W = widest(m);
	float *xb = NULL;
	double *blk = NULL, *h0 = NULL, *tl = NULL, *th = NULL, *v = NULL;
	double *pre = NULL, *s1 = NULL, *s2 = NULL, *wt = NULL;
	uint8_t *size = NULL; /* coalition sizes */
	const float *w1 = m->w[0];
	struct sh_tail tail;
	int err = RBA_E_NOMEM;

	if (k > EXPLAIN_MAX_SHAPLEY_COLUMNS)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"exact Shapley values over %u columns exceed the "
				"cap of %u columns", k, EXPLAIN_MAX_SHAPLEY_COLUMNS);
	if (sh_tail_init(&tail, m, r->cls) != 0)
		goto out;
	xb = malloc(nf * sizeof(float));
	blk = calloc((size_t)(k ? k : 1) * H, sizeof(double));
	h0 = malloc(H * sizeof(double));
	tl = malloc(nlo * H * sizeof(double));
	th = malloc(nhi * H * sizeof(double));
	v = malloc(nS * sizeof(double));
	pre = malloc(H * sizeof(double));
	s1 = malloc(W * sizeof(double));
	s2 = malloc(W * sizeof(double));
	wt = malloc((k ? k : 1) * sizeof(double));
	size = malloc(nS);
	if (!xb || !blk || !h0 || !tl || !th || !v || !pre || !s1 || !s2 || !wt ||
	    !size)
		goto out;
	size[0] = 0;
	for (size_t S = 1; S < nS; S++)
		size[S] = (uint8_t)(size[S & (S - 1)] + 1);
	baseline_case(a, b, f0, xb);
	encode_standardize(&a->spec, xb, 1, xb);

	/* The first layer at the baseline, and each column's block: what
	 * switching the column from the baseline to the case adds. */
	for (uint32_t h = 0; h < H; h++)
		h0[h] = (double)m->b[0][h];
	for (uint32_t f = 0; f < nf; f++)
		for (uint32_t h = 0; h < H; h++)
			h0[h] += (double)xb[f] * (double)w1[(size_t)f * H + h];
	for (uint32_t c = 0; c < k; c++)
		for (uint32_t f = f0[c]; f < f0[c + 1]; f++) {
			double dx = (double)x[f] - (double)xb[f];
			if (dx == 0.0)
				continue;
			for (uint32_t h = 0; h < H; h++)
				blk[(size_t)c * H + h] += dx * (double)w1[(size_t)f * H + h];
		}
	/* Subset sums over each half: a set is the set without its lowest
	 * column plus that column's block. */
	memset(tl, 0, H * sizeof(double));
	for (size_t s = 1; s < nlo; s++) {
		size_t rest = s & (s - 1);
		uint32_t c = (uint32_t)__builtin_ctzll((unsigned long long)s);
		for (uint32_t h = 0; h < H; h++)
			tl[s * H + h] = tl[rest * H + h] + blk[(size_t)c * H + h];
	}
	memset(th, 0, H * sizeof(double));
	for (size_t s = 1; s < nhi; s++) {
		size_t rest = s & (s - 1);
		uint32_t c = klo + (uint32_t)__builtin_ctzll((unsigned long long)s);
		for (uint32_t h = 0; h < H; h++)
			th[s * H + h] = th[rest * H + h] + blk[(size_t)c * H + h];
	}
	/* Every coalition's value. */
	for (size_t S = 0; S < nS; S++) {
		const double *a1 = tl + (S & (nlo - 1)) * H, *a2 = th + (S >> klo) * H;
		for (uint32_t h = 0; h < H; h++) {
			double t = (h0[h] + a1[h]) + a2[h];
			pre[h] = t > 0.0 ? t : 0.0;
		}
		v[S] = sh_tail_margin(&tail, pre, s1, s2);
	}
	/* Shapley weights by coalition size: s! (k - s - 1)! / k! =
	 * (1/k) prod_{i=1..s} i / (k - i), in that order. */
	for (uint32_t s = 0; s < k; s++) {
		double w = 1.0 / (double)k;
		for (uint32_t i = 1; i <= s; i++)
			w = w * (double)i / (double)(k - i);
		wt[s] = w;
	}
	for (uint32_t j = 0; j < k; j++) {
		size_t bit = (size_t)1 << j;
		double phi = 0.0;
		for (size_t S = 0; S < nS; S++) {
			if (S & bit)
				continue;
			phi += wt[size[S]] * (v[S | bit] - v[S]);
		}
		r->contrib[j] = phi;
	}
	r->baseline = v[0];
	err = 0;
out:
	sh_tail_release(&tail);
	free(xb);
	free(blk);
	free(h0);
	free(tl);
	free(th);
	free(v);
	free(pre);
	free(s1);
	free(s2);
	free(wt);
	free(size);
	return err;
}

static int
net_margin(const struct rebuild_model *m, const float *x, uint32_t cls,
	   double *out)
{
	uint32_t W = widest(m);
	double *in = malloc(m->sizes[0] * sizeof(double));
	double *s1 = malloc(W * sizeof(double)), *s2 = malloc(W * sizeof(double));

	if (in == NULL || s1 == NULL || s2 == NULL) {
		free(in);
		free(s1);
		free(s2);
		return RBA_E_NOMEM;
	}
	for (uint32_t f = 0; f < m->sizes[0]; f++)
		in[f] = (double)x[f];
	*out = logit_margin(net_tail(m, 0, in, s1, s2), m->sizes[m->nlayers], cls);
	free(in);
	free(s1);
	free(s2);
	return 0;
}

/* ---- forests: path-dependent TreeSHAP ---------------------------------- */

struct ts_elem {
	long feature; /* -1: the root's placeholder */
	double zero, one, pweight;
};

struct ts_ctx {
	const struct rebuild_tree_node *nodes;
	const float *x;
	double *phi; /* per feature */
	double scale; /* +1, or -1 when the explained log-odds are class 0's */
};

static void
ts_extend(struct ts_elem *p, uint32_t depth, double zero, double one, long feature)
{
	p[depth].feature = feature;
	p[depth].zero = zero;
	p[depth].one = one;
	p[depth].pweight = depth == 0 ? 1.0 : 0.0;
	for (uint32_t i = depth; i-- > 0;) {
		p[i + 1].pweight += one * p[i].pweight * (double)(i + 1) /
				    (double)(depth + 1);
		p[i].pweight = zero * p[i].pweight * (double)(depth - i) /
			       (double)(depth + 1);
	}
}

static void
ts_unwind(struct ts_elem *p, uint32_t depth, uint32_t at)
{
	double one = p[at].one, zero = p[at].zero, next = p[depth].pweight;

	for (uint32_t i = depth; i-- > 0;) {
		if (one != 0.0) {
			double tmp = p[i].pweight;
			p[i].pweight = next * (double)(depth + 1) /
				       ((double)(i + 1) * one);
			next = tmp - p[i].pweight * zero * (double)(depth - i) /
					     (double)(depth + 1);
		} else {
			p[i].pweight = p[i].pweight * (double)(depth + 1) /
				       (zero * (double)(depth - i));
		}
	}
	for (uint32_t i = at; i < depth; i++) {
		p[i].feature = p[i + 1].feature;
		p[i].zero = p[i + 1].zero;
		p[i].one = p[i + 1].one;
	}
}

static double
ts_unwound_sum(const struct ts_elem *p, uint32_t depth, uint32_t at)
{
	double one = p[at].one, zero = p[at].zero, next = p[depth].pweight;
	double total = 0.0;

	for (uint32_t i = depth; i-- > 0;) {
		if (one != 0.0) {
			double tmp = next * (double)(depth + 1) / ((double)(i + 1) * one);
			total += tmp;
			next = p[i].pweight - tmp * zero * ((double)(depth - i) /
							    (double)(depth + 1));
		} else if (zero != 0.0) {
			total += (p[i].pweight / zero) /
				 ((double)(depth - i) / (double)(depth + 1));
		}
	}
	return total;
}

/* The two sides' weights at split node i: their covers' shares. */
static void
ts_shares(const struct rebuild_tree_node *nodes, uint32_t i, double *wl, double *wr)
{
	double cl = (double)nodes[nodes[i].left].cover;
	double cr = (double)nodes[nodes[i].right].cover;

	if (cl + cr > 0.0) {
		*wl = cl / (cl + cr);
		*wr = cr / (cl + cr);
	} else {
		*wl = 0.5;
		*wr = 0.5;
	}
}

/*
 * Algorithm 2's RECURSE: parent is the parent's path (depth entries
 * used), the new path is written right after it.
 */
static void
ts_recurse(const struct ts_ctx *t, uint32_t node, struct ts_elem *parent,
	   uint32_t depth, double zero, double one, long feature)
{
	const struct rebuild_tree_node *n = &t->nodes[node];
	struct ts_elem *p = parent + depth + 1;
	uint32_t hot, cold, at;
	double wl, wr, wh, wc, inz = 1.0, ino = 1.0;

	if (depth > 0)
		memcpy(p, parent, depth * sizeof(*p));
	ts_extend(p, depth, zero, one, feature);
	if (n->feature == REBUILD_TREE_LEAF) {
		for (uint32_t i = 1; i <= depth; i++) {
			double w = ts_unwound_sum(p, depth, i);
			t->phi[p[i].feature] += w * (p[i].one - p[i].zero) *
						(double)n->value * t->scale;
		}
		return;
	}
	ts_shares(t->nodes, node, &wl, &wr);
	if (t->x[n->feature] < n->threshold) {
		hot = n->left, cold = n->right, wh = wl, wc = wr;
	} else {
		hot = n->right, cold = n->left, wh = wr, wc = wl;
	}
	for (at = 0; at <= depth; at++)
		if (p[at].feature == (long)n->feature)
			break;
	if (at <= depth) {
		inz = p[at].zero;
		ino = p[at].one;
		ts_unwind(p, depth, at);
		depth--;
	}
	ts_recurse(t, hot, p, depth + 1, wh * inz, ino, (long)n->feature);
	ts_recurse(t, cold, p, depth + 1, wc * inz, 0.0, (long)n->feature);
}

/* A tree's cover-weighted mean leaf value below node i. */
static double
ts_expected(const struct rebuild_tree_node *nodes, uint32_t i)
{
	double wl, wr;

	if (nodes[i].feature == REBUILD_TREE_LEAF)
		return (double)nodes[i].value;
	ts_shares(nodes, i, &wl, &wr);
	return wl * ts_expected(nodes, nodes[i].left) +
	       wr * ts_expected(nodes, nodes[i].right);
}

static int
explain_trees(const struct artifact *a, const float *x, const uint32_t *f0,
	      struct explain_result *r)
{
	const struct rebuild_forest *fo = &a->model.forest;
	uint32_t K = fo->ngroups, g = K == 1 ? 0 : r->cls, maxd = 0;
	double scale = K == 1 && r->cls == 0 ? -1.0 : 1.0, margin;
	struct ts_elem *path;
	double *phi;
	struct ts_ctx t;
	size_t plen;

	for (uint32_t tr = g; tr < fo->ntrees; tr += K) {
		uint32_t dd = rebuild_tree_depth(fo->nodes, fo->tree_start[tr]);
		if (dd > maxd)
			maxd = dd;
	}
	/* Each level's path sits after its parent's: 1 + 2 + ... + (maxd + 2)
	 * elements after the first, which the root's parent stands for. */
	plen = 1 + (size_t)(maxd + 3) * (maxd + 4) / 2;
	path = calloc(plen, sizeof(*path));
	phi = calloc(fo->nfeatures ? fo->nfeatures : 1, sizeof(double));
	if (path == NULL || phi == NULL) {
		free(path);
		free(phi);
		return RBA_E_NOMEM;
	}
	t.nodes = fo->nodes;
	t.x = x;
	t.phi = phi;
	t.scale = scale;
	r->baseline = scale * (double)fo->base[g];
	margin = (double)fo->base[g];
	for (uint32_t tr = g; tr < fo->ntrees; tr += K) {
		uint32_t root = fo->tree_start[tr], i = root;
		r->baseline += scale * ts_expected(fo->nodes, root);
		ts_recurse(&t, root, path, 0, 1.0, 1.0, -1);
		while (fo->nodes[i].feature != REBUILD_TREE_LEAF)
			i = x[fo->nodes[i].feature] < fo->nodes[i].threshold
				    ? fo->nodes[i].left : fo->nodes[i].right;
		margin += (double)fo->nodes[i].value;
	}
	r->margin = scale * margin;
	for (uint32_t c = 0; c < r->ncolumns; c++) {
		double s = 0.0;
		for (uint32_t f = f0[c]; f < f0[c + 1]; f++)
			s += phi[f];
		r->contrib[c] = s;
	}
	free(path);
	free(phi);
	return 0;
}

int
explain_case(const struct artifact *a, const struct explain_baseline *b,
	     const float *raw, uint32_t cls, struct explain_result *out,
	     struct rba_detail *d)
{
	const struct encode_spec *s = &a->spec;
	uint32_t *f0 = NULL;
	float *x = NULL;
	int err = RBA_E_NOMEM;

	memset(out, 0, sizeof(*out));
	if (cls >= s->nclasses)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"class %u is not a class of the model", cls);
	if (b->nfeatures != s->nfeatures || b->ncolumns != s->ncolumns)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"the baseline is not the model's");
	out->method = explain_method_of(a);
	out->cls = cls;
	out->ncolumns = s->ncolumns;
	out->contrib = calloc(s->ncolumns ? s->ncolumns : 1, sizeof(double));
	f0 = column_starts(s);
	x = malloc((s->nfeatures ? s->nfeatures : 1) * sizeof(float));
	if (out->contrib == NULL || f0 == NULL || x == NULL)
		goto out;
	/* The inputs the model's forward pass sees (artifact_score). */
	encode_standardize(s, raw, 1, x);
	switch (out->method) {
	case EXPLAIN_LINEAR:
		err = explain_linear(a, b, x, f0, out);
		if (err == 0)
			err = net_margin(&a->model, x, cls, &out->margin);
		break;
	case EXPLAIN_SHAPLEY:
		err = explain_shapley(a, b, x, f0, out, d);
		if (err == 0)
			err = net_margin(&a->model, x, cls, &out->margin);
		break;
	default:
		err = explain_trees(a, x, f0, out);
		break;
	}
	if (err == 0) {
		out->sum = out->baseline;
		for (uint32_t c = 0; c < out->ncolumns; c++)
			out->sum += out->contrib[c];
	}
out:
	free(f0);
	free(x);
	if (err != 0)
		explain_result_release(out);
	return err;
}
