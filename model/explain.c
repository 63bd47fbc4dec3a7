/*
 * explain.c - per-column contributions of a case's margin: linear
 * attributions for logistic regression, path-dependent TreeSHAP for
 * forests, Shapley values for networks: exact by coalition enumeration
 * in Gray code order, estimated by keyed permutation sampling with a
 * stated bound above the cap.  The algorithms, the baseline and the
 * error bounds are described in explain.h.
 *
 * Everything is double arithmetic on float32 parameters and inputs,
 * in fixed orders, with no library math but the correctly rounded
 * sqrt: the same bits on every machine the strict trainer gives the
 * same bits on.
 */
#include "model/explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/csv.h"
#include "data/encode.h"
#include "train/rng.h"

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
	free(r->bound);
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

const char *
explain_accuracy_name(int accuracy)
{
	switch (accuracy) {
	case EXPLAIN_EXACT: return "exact";
	case EXPLAIN_APPROXIMATE: return "approximate";
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
		f += encode_column_width(&s->columns[c]);
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
	size_t *cnt = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	{
		struct csv_missing m = encode_missing(s);
		if ((err = csv_table_load_mem_missing(snapshot, n, name, &m, &t,
						      d)) != 0)
			return err;
	}
	cnt = calloc(nf ? nf : 1, sizeof(size_t));
	x = malloc((t->nrows ? t->nrows : 1) * (nf ? nf : 1) * sizeof(float));
	z = malloc((nf ? nf : 1) * sizeof(float));
	sum = calloc(nf ? nf : 1, sizeof(double));
	f0 = column_starts(s);
	out->feat_mean = calloc(nf ? nf : 1, sizeof(double));
	out->col_mean = calloc(s->ncolumns ? s->ncolumns : 1, sizeof(double));
	out->col_mode = calloc(s->ncolumns ? s->ncolumns : 1, sizeof(uint32_t));
	if (x == NULL || z == NULL || sum == NULL || f0 == NULL || cnt == NULL ||
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
		/* (a missing value, NaN for trees, is in no mean) */
		for (size_t f = 0; f < nf; f++)
			if (z[f] == z[f])
				out->feat_mean[f] += (double)z[f];
		for (size_t f = 0; f < nf; f++)
			if (row[f] == row[f]) {
				sum[f] += (double)row[f];
				cnt[f]++;
			}
	}
	for (size_t f = 0; f < nf; f++)
		out->feat_mean[f] /= (double)(cnt[f] ? cnt[f] : 1);
	for (uint32_t c = 0; c < s->ncolumns; c++) {
		if (s->columns[c].kind == ENCODE_NUMERIC) {
			out->col_mean[c] = sum[f0[c]] /
					   (double)(cnt[f0[c]] ? cnt[f0[c]] : 1);
			continue;
		}
		if (s->columns[c].kind == ENCODE_NATIVE) {
			/* trees only: TreeSHAP takes no baseline case */
			out->col_mode[c] = 0;
			out->col_mean[c] = NAN;
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
	free(cnt);
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

/*
 * A network set up for coalition values.  The first layer is kept as
 * the baseline case's pre-activations h0 and each player's block, what
 * switching its column from the baseline to the case adds; the players
 * are the columns whose block is not zero (col[] maps them back).  The
 * hidden layers after the first are widened to double once, and the
 * output layer is folded into one column giving the explained margin
 * (beta as in explain_linear).
 */
struct sh_net {
	const struct rebuild_model *m;
	uint32_t k, H;	/* players; units of the first layer */
	uint32_t *col;	/* k: the column of each player */
	double *h0;	/* H */
	double *blk;	/* k x H */
	double *w[REBUILD_MAX_LAYERS], *b[REBUILD_MAX_LAYERS]; /* layers 1 .. */
	double *mw, mb; /* the margin column over the last hidden layer */
	double *act[2]; /* scratch activations, as wide as the widest layer */
	uint32_t *on[2]; /* their positive units */
	uint64_t cost;	/* multiply-adds (or adds) of one coalition value */
};

static void
sh_net_release(struct sh_net *n)
{
	for (uint32_t l = 0; l < REBUILD_MAX_LAYERS; l++) {
		free(n->w[l]);
		free(n->b[l]);
	}
	free(n->col);
	free(n->h0);
	free(n->blk);
	free(n->mw);
	for (int i = 0; i < 2; i++) {
		free(n->act[i]);
		free(n->on[i]);
	}
	memset(n, 0, sizeof(*n));
}

static int
sh_net_init(struct sh_net *n, const struct artifact *a,
	    const struct explain_baseline *b, const float *x, const uint32_t *f0,
	    uint32_t ncols, uint32_t cls)
{
	const struct rebuild_model *m = &a->model;
	uint32_t L = m->nlayers, C = m->sizes[L], last = m->sizes[L - 1];
	uint32_t nf = m->sizes[0], H = m->sizes[1], W = widest(m);
	const float *w1 = m->w[0];
	float *xb = NULL;

	memset(n, 0, sizeof(*n));
	n->m = m;
	n->H = H;
	n->cost = H + last;
	for (uint32_t l = 1; l + 1 < L; l++) {
		size_t nw = (size_t)m->sizes[l] * m->sizes[l + 1];
		n->cost += nw;
		n->w[l] = malloc(nw * sizeof(double));
		n->b[l] = malloc(m->sizes[l + 1] * sizeof(double));
		if (n->w[l] == NULL || n->b[l] == NULL)
			goto nomem;
		for (size_t i = 0; i < nw; i++)
			n->w[l][i] = (double)m->w[l][i];
		for (uint32_t j = 0; j < m->sizes[l + 1]; j++)
			n->b[l][j] = (double)m->b[l][j];
	}
	n->mw = malloc(last * sizeof(double));
	n->h0 = malloc(H * sizeof(double));
	n->blk = calloc((size_t)(ncols ? ncols : 1) * H, sizeof(double));
	n->col = malloc((ncols ? ncols : 1) * sizeof(uint32_t));
	xb = malloc(nf * sizeof(float));
	for (int i = 0; i < 2; i++) {
		n->act[i] = malloc(W * sizeof(double));
		n->on[i] = malloc(W * sizeof(uint32_t));
		if (n->act[i] == NULL || n->on[i] == NULL)
			goto nomem;
	}
	if (n->mw == NULL || n->h0 == NULL || n->blk == NULL || n->col == NULL ||
	    xb == NULL)
		goto nomem;
	for (uint32_t i = 0; i < last; i++)
		n->mw[i] = margin_coef(m->w[L - 1] + (size_t)i * C, C, cls);
	n->mb = margin_coef(m->b[L - 1], C, cls);
	baseline_case(a, b, f0, xb);
	encode_standardize(&a->spec, xb, 1, xb);
	for (uint32_t h = 0; h < H; h++)
		n->h0[h] = (double)m->b[0][h];
	for (uint32_t f = 0; f < nf; f++)
		for (uint32_t h = 0; h < H; h++)
			n->h0[h] += (double)xb[f] * (double)w1[(size_t)f * H + h];
	for (uint32_t c = 0; c < ncols; c++) {
		double *bk = n->blk + (size_t)n->k * H;
		int moves = 0;
		for (uint32_t f = f0[c]; f < f0[c + 1]; f++) {
			double dx = (double)x[f] - (double)xb[f];
			if (dx == 0.0)
				continue;
			for (uint32_t h = 0; h < H; h++)
				bk[h] += dx * (double)w1[(size_t)f * H + h];
		}
		for (uint32_t h = 0; h < H; h++)
			moves |= bk[h] != 0.0;
		/* A zero block moves no coalition's value: a null player,
		 * whose row is reused by the next column. */
		if (moves)
			n->col[n->k++] = c;
		else
			memset(bk, 0, H * sizeof(double));
	}
	free(xb);
	return 0;
nomem:
	free(xb);
	sh_net_release(n);
	return RBA_E_NOMEM;
}

/*
 * The coalition values, once per instruction set: the bodies below are
 * always inlined into a plain function and into one compiled for AVX2,
 * which the CPU picks (RBA_STRICT_ISA=base forces the plain one, as for
 * the strict kernels).  Vectors (GCC and Clang's extension) only put
 * several outputs side by side, each lane its own IEEE double, so both
 * give the same bits.
 */
#define SH_INLINE static inline __attribute__((always_inline))
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SH_X86 1
#endif

typedef double sh_v2 __attribute__((vector_size(16)));
typedef double sh_v4 __attribute__((vector_size(32)));
typedef __typeof__((sh_v2){ 0 } > (sh_v2){ 0 }) sh_m2; /* lane masks */
typedef __typeof__((sh_v4){ 0 } > (sh_v4){ 0 }) sh_m4;

/* A ReLU is max(a, 0) as a > 0 ? a : 0 (NaN and -0 to +0), by a mask and
 * without a branch: the sign of a sum is a coin toss the predictor
 * loses. */

SH_INLINE double
sh_relu1(double a)
{
	uint64_t u;

	memcpy(&u, &a, sizeof(u));
	u &= -(uint64_t)(a > 0.0);
	memcpy(&a, &u, sizeof(a));
	return a;
}

/*
 * Lists the positive units of a[0 .. n) in on, ascending, and returns
 * their number: four at a time by their sign mask and a table of the
 * 16 masks' positions, then one at a time, without branches (a unit is
 * written, then kept or not).
 */
SH_INLINE uint32_t
sh_list(const double *restrict a, uint32_t n, uint32_t *restrict on, int wide)
{
	static const uint32_t pos[16][4] = {
		{ 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 1, 0, 0, 0 }, { 0, 1, 0, 0 },
		{ 2, 0, 0, 0 }, { 0, 2, 0, 0 }, { 1, 2, 0, 0 }, { 0, 1, 2, 0 },
		{ 3, 0, 0, 0 }, { 0, 3, 0, 0 }, { 1, 3, 0, 0 }, { 0, 1, 3, 0 },
		{ 2, 3, 0, 0 }, { 0, 2, 3, 0 }, { 1, 2, 3, 0 }, { 0, 1, 2, 3 },
	};
	typedef uint32_t sh_u4 __attribute__((vector_size(16)));
	uint32_t h = 0, k = 0;

	for (; wide && h + 4 <= n; h += 4) {
		sh_v4 v;
		sh_m4 m;
		sh_u4 p;
		uint32_t bits;
		memcpy(&v, a + h, sizeof(v));
		m = v > (sh_v4){ 0 };
		bits = (uint32_t)(m[0] & 1) | (uint32_t)(m[1] & 2) |
		       (uint32_t)(m[2] & 4) | (uint32_t)(m[3] & 8);
		memcpy(&p, pos[bits], sizeof(p));
		p += h;
		memcpy(on + k, &p, sizeof(p));
		k += (0x4332322132212110u >> (4 * bits)) & 15; /* bits set */
	}
	for (; h < n; h++) {
		on[k] = h;
		k += a[h] > 0.0;
	}
	return k;
}

/* acc += v * w[0 .. N): one output per lane */
#define SH_MAC(T, acc, v, wp)                                                 \
	do {                                                                  \
		T w_;                                                         \
		memcpy(&w_, (wp), sizeof(w_));                                \
		(acc) += (v) * w_;                                            \
	} while (0)

/*
 * The ReLU of accumulator acc, outputs j .. j + N of a layer: stored in
 * out, or, for the last hidden layer (mw not NULL), its margin terms
 * added to the partial sum of each output's class mod 4 (macc, whose
 * lanes are those classes, from lane `at` on).
 */
#define SH_EMIT(T, M, acc, j, macc)                                           \
	do {                                                                  \
		T r_ = (T)((M)(acc) & ((acc) > (T){ 0 })), m_;                \
		if (mw == NULL) {                                             \
			memcpy(out + (j), &r_, sizeof(r_));                   \
		} else {                                                      \
			memcpy(&m_, mw + (j), sizeof(m_));                    \
			(macc) += r_ * m_;                                    \
		}                                                             \
	} while (0)

/*
 * sh_dense's outputs side by side in AVX2's registers, 32, 16 and 4 at a
 * time; returns the first output left.  With mw, *m4 gets the margin
 * terms' partial sums, lane c the outputs j = c mod 4.
 */
SH_INLINE uint32_t
sh_dense_wide(const double *restrict in, const uint32_t *restrict on,
	      uint32_t non, const double *restrict w, const double *restrict b,
	      uint32_t no, double *restrict out, const double *restrict mw,
	      sh_v4 *restrict m4out)
{
	uint32_t j = 0;
	sh_v4 m4 = { 0 };

	for (; j + 32 <= no; j += 32) {
		sh_v4 a0, a1, a2, a3, a4, a5, a6, a7;
		memcpy(&a0, b + j, sizeof(a0));
		memcpy(&a1, b + j + 4, sizeof(a1));
		memcpy(&a2, b + j + 8, sizeof(a2));
		memcpy(&a3, b + j + 12, sizeof(a3));
		memcpy(&a4, b + j + 16, sizeof(a4));
		memcpy(&a5, b + j + 20, sizeof(a5));
		memcpy(&a6, b + j + 24, sizeof(a6));
		memcpy(&a7, b + j + 28, sizeof(a7));
		for (uint32_t t = 0; t < non; t++) {
			const double *wr = w + (size_t)on[t] * no + j;
			double x = in[on[t]];
			sh_v4 v = { x, x, x, x };
			SH_MAC(sh_v4, a0, v, wr);
			SH_MAC(sh_v4, a1, v, wr + 4);
			SH_MAC(sh_v4, a2, v, wr + 8);
			SH_MAC(sh_v4, a3, v, wr + 12);
			SH_MAC(sh_v4, a4, v, wr + 16);
			SH_MAC(sh_v4, a5, v, wr + 20);
			SH_MAC(sh_v4, a6, v, wr + 24);
			SH_MAC(sh_v4, a7, v, wr + 28);
		}
		SH_EMIT(sh_v4, sh_m4, a0, j, m4);
		SH_EMIT(sh_v4, sh_m4, a1, j + 4, m4);
		SH_EMIT(sh_v4, sh_m4, a2, j + 8, m4);
		SH_EMIT(sh_v4, sh_m4, a3, j + 12, m4);
		SH_EMIT(sh_v4, sh_m4, a4, j + 16, m4);
		SH_EMIT(sh_v4, sh_m4, a5, j + 20, m4);
		SH_EMIT(sh_v4, sh_m4, a6, j + 24, m4);
		SH_EMIT(sh_v4, sh_m4, a7, j + 28, m4);
	}
	for (; j + 16 <= no; j += 16) {
		sh_v4 a0, a1, a2, a3;
		memcpy(&a0, b + j, sizeof(a0));
		memcpy(&a1, b + j + 4, sizeof(a1));
		memcpy(&a2, b + j + 8, sizeof(a2));
		memcpy(&a3, b + j + 12, sizeof(a3));
		for (uint32_t t = 0; t < non; t++) {
			const double *wr = w + (size_t)on[t] * no + j;
			double x = in[on[t]];
			sh_v4 v = { x, x, x, x };
			SH_MAC(sh_v4, a0, v, wr);
			SH_MAC(sh_v4, a1, v, wr + 4);
			SH_MAC(sh_v4, a2, v, wr + 8);
			SH_MAC(sh_v4, a3, v, wr + 12);
		}
		SH_EMIT(sh_v4, sh_m4, a0, j, m4);
		SH_EMIT(sh_v4, sh_m4, a1, j + 4, m4);
		SH_EMIT(sh_v4, sh_m4, a2, j + 8, m4);
		SH_EMIT(sh_v4, sh_m4, a3, j + 12, m4);
	}
	for (; j + 4 <= no; j += 4) {
		sh_v4 a0;
		memcpy(&a0, b + j, sizeof(a0));
		for (uint32_t t = 0; t < non; t++) {
			double x = in[on[t]];
			sh_v4 v = { x, x, x, x };
			SH_MAC(sh_v4, a0, v, w + (size_t)on[t] * no + j);
		}
		SH_EMIT(sh_v4, sh_m4, a0, j, m4);
	}
	*m4out = m4;
	return j;
}

/*
 * sh_dense's outputs side by side in two-lane registers, 16 and 2 at a
 * time; returns the first output left.  With mw, *m01 and *m23 get the
 * margin terms' partial sums of the outputs j = 0, 1 and 2, 3 mod 4.
 */
SH_INLINE uint32_t
sh_dense_narrow(const double *restrict in, const uint32_t *restrict on,
		uint32_t non, const double *restrict w, const double *restrict b,
		uint32_t no, double *restrict out, const double *restrict mw,
		sh_v2 *restrict m01out, sh_v2 *restrict m23out)
{
	uint32_t j = 0;
	sh_v2 m01 = { 0 }, m23 = { 0 };

	for (; j + 16 <= no; j += 16) {
		sh_v2 a0, a1, a2, a3, a4, a5, a6, a7;
		memcpy(&a0, b + j, sizeof(a0));
		memcpy(&a1, b + j + 2, sizeof(a1));
		memcpy(&a2, b + j + 4, sizeof(a2));
		memcpy(&a3, b + j + 6, sizeof(a3));
		memcpy(&a4, b + j + 8, sizeof(a4));
		memcpy(&a5, b + j + 10, sizeof(a5));
		memcpy(&a6, b + j + 12, sizeof(a6));
		memcpy(&a7, b + j + 14, sizeof(a7));
		for (uint32_t t = 0; t < non; t++) {
			const double *wr = w + (size_t)on[t] * no + j;
			double x = in[on[t]];
			sh_v2 v = { x, x };
			SH_MAC(sh_v2, a0, v, wr);
			SH_MAC(sh_v2, a1, v, wr + 2);
			SH_MAC(sh_v2, a2, v, wr + 4);
			SH_MAC(sh_v2, a3, v, wr + 6);
			SH_MAC(sh_v2, a4, v, wr + 8);
			SH_MAC(sh_v2, a5, v, wr + 10);
			SH_MAC(sh_v2, a6, v, wr + 12);
			SH_MAC(sh_v2, a7, v, wr + 14);
		}
		SH_EMIT(sh_v2, sh_m2, a0, j, m01);
		SH_EMIT(sh_v2, sh_m2, a1, j + 2, m23);
		SH_EMIT(sh_v2, sh_m2, a2, j + 4, m01);
		SH_EMIT(sh_v2, sh_m2, a3, j + 6, m23);
		SH_EMIT(sh_v2, sh_m2, a4, j + 8, m01);
		SH_EMIT(sh_v2, sh_m2, a5, j + 10, m23);
		SH_EMIT(sh_v2, sh_m2, a6, j + 12, m01);
		SH_EMIT(sh_v2, sh_m2, a7, j + 14, m23);
	}
	for (; j + 2 <= no; j += 2) {
		sh_v2 a0;
		memcpy(&a0, b + j, sizeof(a0));
		for (uint32_t t = 0; t < non; t++) {
			double x = in[on[t]];
			sh_v2 v = { x, x };
			SH_MAC(sh_v2, a0, v, w + (size_t)on[t] * no + j);
		}
		if (j & 2)
			SH_EMIT(sh_v2, sh_m2, a0, j, m23);
		else
			SH_EMIT(sh_v2, sh_m2, a0, j, m01);
	}
	*m01out = m01;
	*m23out = m23;
	return j;
}

/*
 * Layer l + 1 of a coalition: relu(b + in W) over the positive inputs
 * in[on[0 .. non)], each output's sum over them in ascending order;
 * several outputs side by side in registers (32, 16 and 4 with AVX2's
 * registers, wide; else 16 and 2), then one at a time.  Skipping the
 * zero inputs leaves every sum as it is but for the sign of a zero,
 * which the ReLU drops.  A hidden layer (mw NULL) lists its positive
 * outputs in on_out and returns their number.  The last hidden layer
 * returns its margin instead: mb + ((s0 + s1) + (s2 + s3)), where s_c
 * sums mw[j] relu(z_j) over the outputs j = c mod 4 in ascending order
 * (a zero term adds nothing to a sum that starts at +0).
 */
SH_INLINE uint32_t
sh_dense(const double *restrict in, const uint32_t *restrict on,
	 uint32_t non, const double *restrict w, const double *restrict b,
	 uint32_t no, double *restrict out, uint32_t *restrict on_out,
	 const double *restrict mw, double mb, double *restrict margin,
	 int wide)
{
	uint32_t j;
	sh_v4 m4;
	sh_v2 m01, m23;
	double s[4];

	if (wide) {
		j = sh_dense_wide(in, on, non, w, b, no, out, mw, &m4);
		s[0] = m4[0], s[1] = m4[1], s[2] = m4[2], s[3] = m4[3];
	} else {
		j = sh_dense_narrow(in, on, non, w, b, no, out, mw, &m01, &m23);
		s[0] = m01[0], s[1] = m01[1], s[2] = m23[0], s[3] = m23[1];
	}
	for (; j < no; j++) {
		double acc = b[j];
		for (uint32_t t = 0; t < non; t++)
			acc += in[on[t]] * w[(size_t)on[t] * no + j];
		acc = sh_relu1(acc);
		if (mw == NULL)
			out[j] = acc;
		else
			s[j & 3] += acc * mw[j];
	}
	if (mw != NULL) {
		*margin = mb + ((s[0] + s[1]) + (s[2] + s[3]));
		return 0;
	}
	return sh_list(out, no, on_out, wide);
}

/* The explained margin of the coalition whose first layer's
 * pre-activations are pre (H values). */
SH_INLINE double
sh_value(struct sh_net *n, const double *pre, int wide)
{
	const struct rebuild_model *m = n->m;
	uint32_t L = m->nlayers, H = n->H, *on = n->on[0], non = 0, p = 0, h = 0;
	double *cur = n->act[0], mg = 0.0;

	for (; wide && h + 4 <= H; h += 4) {
		sh_v4 v;
		memcpy(&v, pre + h, sizeof(v));
		v = (sh_v4)((sh_m4)v & (v > (sh_v4){ 0 }));
		memcpy(cur + h, &v, sizeof(v));
	}
	for (; !wide && h + 2 <= H; h += 2) {
		sh_v2 v;
		memcpy(&v, pre + h, sizeof(v));
		v = (sh_v2)((sh_m2)v & (v > (sh_v2){ 0 }));
		memcpy(cur + h, &v, sizeof(v));
	}
	for (; h < H; h++)
		cur[h] = sh_relu1(pre[h]);
	non = sh_list(cur, H, on, wide);
	if (L == 2) {
		/* one hidden layer: its margin, summed as sh_dense sums
		 * the last hidden layer's */
		double s[4] = { 0.0, 0.0, 0.0, 0.0 };
		for (h = 0; h < H; h++)
			s[h & 3] += cur[h] * n->mw[h];
		return n->mb + ((s[0] + s[1]) + (s[2] + s[3]));
	}
	for (uint32_t l = 1; l + 2 < L; l++) {
		non = sh_dense(cur, on, non, n->w[l], n->b[l], m->sizes[l + 1],
			       n->act[1 - p], n->on[1 - p], NULL, 0.0, NULL, wide);
		p = 1 - p;
		cur = n->act[p];
		on = n->on[p];
	}
	sh_dense(cur, on, non, n->w[L - 2], n->b[L - 2], m->sizes[L - 1], NULL, NULL,
		 n->mw, n->mb, &mg, wide);
	return mg;
}

/*
 * Double-double sums: hi + lo, lo gathering what hi's roundings lost
 * (Knuth's TwoSum, exact in binary floating point without contraction).
 */
struct sh_dd {
	double hi, lo;
};

SH_INLINE double
sh_two_sum(double a, double b, double *err)
{
	double s = a + b, bb = s - a;

	*err = (a - (s - bb)) + (b - bb);
	return s;
}

/* a += x */
SH_INLINE void
sh_dd_add(struct sh_dd *a, double x)
{
	double e;

	a->hi = sh_two_sum(a->hi, x, &e);
	a->lo += e;
}

/* a += p - q */
SH_INLINE void
sh_dd_add_diff(struct sh_dd *a, const struct sh_dd *p, const struct sh_dd *q)
{
	double e1, e2, d = sh_two_sum(p->hi, -q->hi, &e1);

	a->hi = sh_two_sum(a->hi, d, &e2);
	a->lo += e2 + (e1 + (p->lo - q->lo));
}

/* p - q, rounded once more to a double */
static double
sh_dd_diff(const struct sh_dd *p, const struct sh_dd *q)
{
	double e, d = sh_two_sum(p->hi, -q->hi, &e);

	return d + (e + (p->lo - q->lo));
}

/* pre = (h0 + lo) + hs, H values */
SH_INLINE void
sh_first_layer(double *restrict pre, const double *restrict h0,
	       const double *restrict lo, const double *restrict hs, uint32_t H,
	       int wide)
{
	uint32_t h = 0;

	for (; wide && h + 4 <= H; h += 4) {
		sh_v4 a, l, s;
		memcpy(&a, h0 + h, sizeof(a));
		memcpy(&l, lo + h, sizeof(l));
		memcpy(&s, hs + h, sizeof(s));
		a = (a + l) + s;
		memcpy(pre + h, &a, sizeof(a));
	}
	for (; h < H; h++)
		pre[h] = (h0[h] + lo[h]) + hs[h];
}

/* The state of the Gray code enumeration (sh_exact). */
struct sh_gray {
	struct sh_net *n;
	uint32_t klo;	   /* low players, whose subset sums are tabled */
	const double *tl;  /* 2^klo x H subset sums */
	const double *cw, *wt; /* k + 1 weights by coalition size */
	double *hs, *pre;  /* H: the high players' sum; pre-activations */
	struct sh_dd *in, *at; /* k: the total when i joined; i's sum */
	struct sh_dd T, B; /* sum of cw v, sum of wt v */
	double v0;	   /* v(empty) */
};

SH_INLINE void
sh_gray_body(struct sh_gray *g, int wide)
{
	struct sh_net *n = g->n;
	uint32_t k = n->k, H = n->H, klo = g->klo, s = 0;
	uint64_t nS = (uint64_t)1 << k, nlo = (uint64_t)1 << klo;
	struct sh_dd T = { 0.0, 0.0 }, B = { 0.0, 0.0 };

	for (uint64_t t = 0; t < nS; t++) {
		uint64_t S = t ^ (t >> 1);
		const double *lo;
		double v;
		if (t != 0) {
			/* One player moves.  The coalitions holding player
			 * i are runs of the order: their sum is the running
			 * total where each run ends less where it began. */
			uint32_t i = (uint32_t)__builtin_ctzll(t);
			if (S >> i & 1) {
				s++;
				g->in[i] = T;
			} else {
				s--;
				sh_dd_add_diff(&g->at[i], &T, &g->in[i]);
			}
		}
		if ((t & (nlo - 1)) == 0) {
			/* the high players changed: their sum, highest
			 * first, as the subset sums add them */
			for (uint32_t h = 0; h < H; h++)
				g->hs[h] = 0.0;
			for (uint32_t c = k; c-- > klo;)
				if (S >> c & 1)
					for (uint32_t h = 0; h < H; h++)
						g->hs[h] += n->blk[(size_t)c * H + h];
		}
		lo = g->tl + (S & (nlo - 1)) * H;
		sh_first_layer(g->pre, n->h0, lo, g->hs, H, wide);
		v = sh_value(n, g->pre, wide);
		if (t == 0)
			g->v0 = v;
		sh_dd_add(&T, g->cw[s] * v);
		sh_dd_add(&B, g->wt[s] * v);
	}
	g->T = T;
	g->B = B;
}

static void
sh_gray_base(struct sh_gray *g)
{
	sh_gray_body(g, 0);
}

#ifdef SH_X86
__attribute__((target("avx2"))) static void
sh_gray_avx2(struct sh_gray *g)
{
	sh_gray_body(g, 1);
}
#endif

#ifdef SH_X86
/* 1 when the AVX2 bodies are to run. */
static int
sh_avx2(void)
{
	const char *want = getenv("RBA_STRICT_ISA");

	if (want != NULL && strcmp(want, "base") == 0)
		return 0;
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") != 0;
}
#endif

/*
 * Shapley weights by coalition size: w[s] = s! (k - s - 1)! / k! =
 * (1/k) prod_{i=1..s} i / (k - i), in that order, for s < k; w[k] = 0.
 */
static void
sh_weights(uint32_t k, double *w)
{
	for (uint32_t s = 0; s < k; s++) {
		double v = 1.0 / (double)k;
		for (uint32_t i = 1; i <= s; i++)
			v = v * (double)i / (double)(k - i);
		w[s] = v;
	}
	w[k] = 0.0;
}

/* Low players whose subset sums are tabled: half of them, fewer when
 * the table would pass EXPLAIN_SHAPLEY_TABLE doubles. */
static uint32_t
sh_low_players(uint32_t k, uint32_t H)
{
	uint32_t lo = k / 2;

	while (lo > 0 && ((uint64_t)H << lo) > EXPLAIN_SHAPLEY_TABLE)
		lo--;
	return lo;
}

/*
 * Exact Shapley values, every coalition of the players visited once in
 * reflected Gray code order (explain.h has the method and its error
 * bound).
 */
static int
sh_exact(struct sh_net *n, struct explain_result *r)
{
	uint32_t k = n->k, H = n->H, klo = sh_low_players(k, H);
	uint64_t nlo = (uint64_t)1 << klo;
	double *tl = malloc(nlo * H * sizeof(double)), *wt, *cw;
	struct sh_gray g;
	int err = RBA_E_NOMEM;

	memset(&g, 0, sizeof(g));
	g.n = n;
	g.klo = klo;
	g.tl = tl;
	g.hs = malloc(H * sizeof(double));
	g.pre = malloc(H * sizeof(double));
	g.wt = wt = malloc((k + 1) * sizeof(double));
	g.cw = cw = malloc((k + 1) * sizeof(double));
	g.in = calloc(k ? k : 1, sizeof(*g.in));
	g.at = calloc(k ? k : 1, sizeof(*g.at));
	if (!tl || !g.hs || !g.pre || !wt || !cw || !g.in || !g.at)
		goto out;
	/* Subset sums over the low players: a set is the set without its
	 * lowest player plus that player's block. */
	memset(tl, 0, H * sizeof(double));
	for (uint64_t t = 1; t < nlo; t++) {
		uint64_t rest = t & (t - 1);
		uint32_t c = (uint32_t)__builtin_ctzll(t);
		for (uint32_t h = 0; h < H; h++)
			tl[t * H + h] = tl[rest * H + h] + n->blk[(size_t)c * H + h];
	}
	/* v(S) goes with weight w(|S| - 1) to each player of S and with
	 * -w(|S|) to each player outside S: phi_i = sum over S holding i
	 * of cw(|S|) v(S) - sum over all S of w(|S|) v(S). */
	sh_weights(k, wt);
	for (uint32_t c = 0; c <= k; c++)
		cw[c] = (c > 0 ? wt[c - 1] : 0.0) + wt[c];
#ifdef SH_X86
	if (sh_avx2())
		sh_gray_avx2(&g);
	else
#endif
		sh_gray_base(&g);
	r->baseline = g.v0;
	for (uint32_t i = 0; i < k; i++) {
		/* the last coalition holds the highest player alone */
		if (i + 1 == k)
			sh_dd_add_diff(&g.at[i], &g.T, &g.in[i]);
		r->contrib[n->col[i]] = sh_dd_diff(&g.at[i], &g.B);
	}
	err = 0;
out:
	free(tl);
	free(g.hs);
	free(g.pre);
	free(wt);
	free(cw);
	free(g.in);
	free(g.at);
	return err;
}

/*
 * The box of every layer's pre-activations over all coalitions: layer
 * 1's from the players' blocks (each negative part added to the low
 * end, each other part to the high end), each later layer's by
 * interval sums through the ReLUs.
 */
static void
sh_boxes(const struct sh_net *n, double *const *zlo, double *const *zhi)
{
	const struct rebuild_model *m = n->m;
	uint32_t k = n->k, H = n->H, L = m->nlayers;

	for (uint32_t h = 0; h < H; h++) {
		double a = n->h0[h], z = n->h0[h];
		for (uint32_t c = 0; c < k; c++) {
			double v = n->blk[(size_t)c * H + h];
			if (v < 0.0)
				a += v;
			else
				z += v;
		}
		zlo[1][h] = a;
		zhi[1][h] = z;
	}
	for (uint32_t l = 1; l + 1 < L; l++) {
		uint32_t ni = m->sizes[l], no = m->sizes[l + 1];
		for (uint32_t j = 0; j < no; j++) {
			double a = n->b[l][j], z = n->b[l][j];
			for (uint32_t i = 0; i < ni; i++) {
				double w = n->w[l][(size_t)i * no + j];
				double al = zlo[l][i] > 0.0 ? zlo[l][i] : 0.0;
				double ah = zhi[l][i] > 0.0 ? zhi[l][i] : 0.0;
				a += w >= 0.0 ? w * al : w * ah;
				z += w >= 0.0 ? w * ah : w * al;
			}
			zlo[l + 1][j] = a;
			zhi[l + 1][j] = z;
		}
	}
}

/*
 * The move [dlo, dhi] of each first-layer ReLU when player c joins a
 * coalition without it, whose pre-activations lie in the box [z1lo,
 * z1hi] of all coalitions less c's block.
 */
static void
sh_first_moves(const struct sh_net *n, uint32_t c, const double *z1lo,
	       const double *z1hi, double *dlo, double *dhi)
{
	uint32_t H = n->H;
	const double *bc = n->blk + (size_t)c * H;

	for (uint32_t h = 0; h < H; h++) {
		double d = bc[h];
		/* the box of the coalitions without c */
		double pl = z1lo[h] - (d < 0.0 ? d : 0.0);
		double ph = z1hi[h] - (d < 0.0 ? 0.0 : d);
		if (d >= 0.0) {
			double ql = pl + d, qh = ph + d;
			dlo[h] = ql < 0.0 ? 0.0 : ql > d ? d : ql;
			dhi[h] = qh < 0.0 ? 0.0 : qh > d ? d : qh;
		} else {
			double ql = pl < 0.0 ? 0.0 : pl > -d ? -d : pl;
			double qh = ph < 0.0 ? 0.0 : ph > -d ? -d : ph;
			dlo[h] = -qh;
			dhi[h] = -ql;
		}
	}
}

/*
 * The move [dlo, dhi] carried through each later layer to the last
 * hidden one: an interval sum, then the unit's ReLU passes it, zeroes it
 * or widens it to hold 0 (by the box [zlo, zhi]).  elo and ehi are
 * scratch of the widest layer.
 */
static void
sh_moves_through(const struct sh_net *n, double *const *zlo,
		 double *const *zhi, double *dlo, double *dhi, double *elo,
		 double *ehi)
{
	const struct rebuild_model *m = n->m;
	uint32_t L = m->nlayers;

	for (uint32_t l = 1; l + 1 < L; l++) {
		uint32_t ni = m->sizes[l], no = m->sizes[l + 1];
		for (uint32_t j = 0; j < no; j++) {
			double ea = 0.0, ez = 0.0;
			for (uint32_t i = 0; i < ni; i++) {
				double w = n->w[l][(size_t)i * no + j];
				ea += w >= 0.0 ? w * dlo[i] : w * dhi[i];
				ez += w >= 0.0 ? w * dhi[i] : w * dlo[i];
			}
			if (!(zhi[l + 1][j] > 0.0)) {
				ea = ez = 0.0;
			} else if (!(zlo[l + 1][j] >= 0.0)) {
				ea = ea < 0.0 ? ea : 0.0;
				ez = ez > 0.0 ? ez : 0.0;
			}
			elo[j] = ea;
			ehi[j] = ez;
		}
		memcpy(dlo, elo, no * sizeof(double));
		memcpy(dhi, ehi, no * sizeof(double));
	}
}

/*
 * Bounds on the marginal contribution of each player: for every
 * coalition S without player i, v(S + i) - v(S) lies in
 * [lo[i], hi[i]], by interval arithmetic.  The first layer's
 * pre-activation moves by exactly player i's block, from a point p of
 * the box of the coalitions without i; a ReLU's output then moves by
 * clamp(p + d, 0, d) (d >= 0) or -clamp(p, 0, -d) (d < 0), both
 * monotone in p.  Through each later layer the move is an interval sum,
 * and a unit's ReLU passes it (always active over the box of all
 * coalitions), zeroes it (never active) or widens it to hold 0.
 * Roundings of these sums are covered by widening the result by a
 * relative 2^-20 and an absolute 2^-30.
 */
static int
sh_marginal_ranges(const struct sh_net *n, double *lo, double *hi)
{
	const struct rebuild_model *m = n->m;
	uint32_t k = n->k, L = m->nlayers, W = widest(m);
	double *zlo[REBUILD_MAX_LAYERS] = { 0 }, *zhi[REBUILD_MAX_LAYERS] = { 0 };
	double *dlo = malloc(W * sizeof(double)), *dhi = malloc(W * sizeof(double));
	double *elo = malloc(W * sizeof(double)), *ehi = malloc(W * sizeof(double));
	int err = RBA_E_NOMEM;

	if (!dlo || !dhi || !elo || !ehi)
		goto out;
	/* The box of every layer's pre-activations over all coalitions. */
	for (uint32_t l = 1; l < L; l++) {
		zlo[l] = malloc(m->sizes[l] * sizeof(double));
		zhi[l] = malloc(m->sizes[l] * sizeof(double));
		if (zlo[l] == NULL || zhi[l] == NULL)
			goto out;
	}
	sh_boxes(n, zlo, zhi);
	for (uint32_t c = 0; c < k; c++) {
		double a = 0.0, z = 0.0;
		sh_first_moves(n, c, zlo[1], zhi[1], dlo, dhi);
		sh_moves_through(n, zlo, zhi, dlo, dhi, elo, ehi);
		for (uint32_t i = 0; i < m->sizes[L - 1]; i++) {
			double w = n->mw[i];
			a += w >= 0.0 ? w * dlo[i] : w * dhi[i];
			z += w >= 0.0 ? w * dhi[i] : w * dlo[i];
		}
		lo[c] = a - (fabs(a) * 0x1p-20 + 0x1p-30);
		hi[c] = z + (fabs(z) * 0x1p-20 + 0x1p-30);
	}
	err = 0;
out:
	for (uint32_t l = 0; l < REBUILD_MAX_LAYERS; l++) {
		free(zlo[l]);
		free(zhi[l]);
	}
	free(dlo);
	free(dhi);
	free(elo);
	free(ehi);
	return err;
}

/*
 * ln(4 k 2^EXPLAIN_SHAPLEY_DELTA_BITS) rounded up, without a logarithm:
 * (2 + EXPLAIN_SHAPLEY_DELTA_BITS + ceil(log2 k)) ln 2, ln 2 rounded up.
 */
static double
sh_log_term(uint32_t k)
{
	uint32_t lg = 0;

	while (((uint64_t)1 << lg) < k)
		lg++;
	return (double)(2 + EXPLAIN_SHAPLEY_DELTA_BITS + lg) * 0.6931471805599454;
}

/* The state of the permutation sampling (sh_sample). */
struct sh_pairs {
	struct sh_net *n;
	uint64_t key, npairs;
	uint32_t *perm;	/* k */
	double *pre;	/* H */
	double *fwd;	/* k: each player's marginal in the first order */
	double *mean, *m2; /* k: Welford's running mean and sum of squares */
	struct sh_dd *sum; /* k: the sum of the pair means */
	double v0;
};

SH_INLINE void
sh_pairs_body(struct sh_pairs *q, int wide)
{
	struct sh_net *n = q->n;
	uint32_t k = n->k, H = n->H, *perm = q->perm;

	for (uint64_t p = 0; p < q->npairs; p++) {
		double prev = q->v0;
		/* a keyed Fisher-Yates shuffle of the players */
		for (uint32_t j = 0; j < k; j++)
			perm[j] = j;
		for (uint32_t j = k - 1; j > 0; j--) {
			uint32_t u = (uint32_t)rng_below(q->key, p * k + j,
							 (uint64_t)j + 1);
			uint32_t t = perm[j];
			perm[j] = perm[u];
			perm[u] = t;
		}
		/* the players joining in that order, then in reverse; the
		 * pre-activations from h0 by each player's block */
		memcpy(q->pre, n->h0, H * sizeof(double));
		for (uint32_t j = 0; j < k; j++) {
			const double *bc = n->blk + (size_t)perm[j] * H;
			double v;
			for (uint32_t h = 0; h < H; h++)
				q->pre[h] += bc[h];
			v = sh_value(n, q->pre, wide);
			q->fwd[perm[j]] = v - prev;
			prev = v;
		}
		memcpy(q->pre, n->h0, H * sizeof(double));
		prev = q->v0;
		for (uint32_t j = k; j-- > 0;) {
			uint32_t c = perm[j];
			const double *bc = n->blk + (size_t)c * H;
			double v, y, dy;
			for (uint32_t h = 0; h < H; h++)
				q->pre[h] += bc[h];
			v = sh_value(n, q->pre, wide);
			y = 0.5 * (q->fwd[c] + (v - prev));
			prev = v;
			/* the mean as a double-double sum, the variance by
			 * Welford's update */
			sh_dd_add(&q->sum[c], y);
			dy = y - q->mean[c];
			q->mean[c] += dy / (double)(p + 1);
			q->m2[c] += dy * (y - q->mean[c]);
		}
	}
}

static void
sh_pairs_base(struct sh_pairs *q)
{
	sh_pairs_body(q, 0);
}

#ifdef SH_X86
__attribute__((target("avx2"))) static void
sh_pairs_avx2(struct sh_pairs *q)
{
	sh_pairs_body(q, 1);
}
#endif

/*
 * Estimated Shapley values by antithetic permutation sampling with
 * npairs pairs (explain.h has the method and its bound).
 */
static int
sh_sample(struct sh_net *n, uint64_t seed, uint64_t npairs,
	  struct explain_result *r)
{
	uint32_t k = n->k, H = n->H;
	double *rlo = malloc(k * sizeof(double)), *rhi = malloc(k * sizeof(double));
	double lt = sh_log_term(k), m = (double)npairs;
	struct sh_pairs q;
	int err = RBA_E_NOMEM;

	memset(&q, 0, sizeof(q));
	q.n = n;
	q.key = rng_key(seed, RNG_EXPLAIN, r->cls, 0);
	q.npairs = npairs;
	q.perm = malloc(k * sizeof(uint32_t));
	q.pre = malloc(H * sizeof(double));
	q.fwd = malloc(k * sizeof(double));
	q.mean = calloc(k, sizeof(double));
	q.m2 = calloc(k, sizeof(double));
	q.sum = calloc(k, sizeof(*q.sum));
	if (!rlo || !rhi || !q.perm || !q.pre || !q.fwd || !q.mean || !q.m2 || !q.sum)
		goto out;
	if ((err = sh_marginal_ranges(n, rlo, rhi)) != 0)
		goto out;
	q.v0 = sh_value(n, n->h0, 0);
	r->baseline = q.v0;
#ifdef SH_X86
	if (sh_avx2())
		sh_pairs_avx2(&q);
	else
#endif
		sh_pairs_base(&q);
	for (uint32_t i = 0; i < k; i++) {
		uint32_t c = n->col[i];
		double e;
		r->contrib[c] = (q.sum[i].hi + q.sum[i].lo) / m;
		/* empirical Bernstein (Maurer and Pontil 2009, Theorem 4),
		 * two-sided, a union over the k players */
		e = sqrt(2.0 * (q.m2[i] / (m - 1.0)) * lt / m) +
		    7.0 * (rhi[i] - rlo[i]) * lt / (3.0 * (m - 1.0));
		r->bound[c] = e + (e * 0x1p-20 + 0x1p-30);
		if (r->bound[c] > r->max_bound)
			r->max_bound = r->bound[c];
	}
	r->samples = npairs;
	err = 0;
out:
	free(rlo);
	free(rhi);
	free(q.perm);
	free(q.pre);
	free(q.fwd);
	free(q.mean);
	free(q.m2);
	free(q.sum);
	return err;
}

/* 1 when 2^k coalitions of cost multiply-adds fit in work. */
static int
sh_exact_fits(uint32_t k, uint64_t cost, uint64_t work)
{
	return k < 63 && cost <= (work >> k);
}

static int
explain_shapley(const struct artifact *a, const struct explain_baseline *b,
		const float *x, const uint32_t *f0,
		const struct explain_options *o, struct explain_result *r,
		struct rba_detail *d)
{
	uint32_t cap = o->max_exact_columns ? o->max_exact_columns
					    : EXPLAIN_MAX_SHAPLEY_COLUMNS;
	uint64_t work = o->work ? o->work : EXPLAIN_SHAPLEY_WORK, npairs;
	uint64_t swork = o->sample_work ? o->sample_work : EXPLAIN_SHAPLEY_SAMPLE_WORK;
	struct sh_net n;
	int err;

	if (cap > EXPLAIN_MAX_SHAPLEY_COLUMNS)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"exact Shapley values over up to %u columns exceed "
				"the cap of %u", cap, EXPLAIN_MAX_SHAPLEY_COLUMNS);
	if ((err = sh_net_init(&n, a, b, x, f0, r->ncolumns, r->cls)) != 0)
		return err;
	r->players = n.k;
	if (n.k == 0 || (n.k <= cap && sh_exact_fits(n.k, n.cost, work))) {
		r->accuracy = EXPLAIN_EXACT;
		err = sh_exact(&n, r);
		goto out;
	}
	/* 2 k coalition values a pair */
	npairs = swork / n.cost / (2 * (uint64_t)n.k);
	if (o->approximate && npairs < EXPLAIN_SHAPLEY_MIN_PAIRS) {
		err = rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
			       "a Shapley estimate over %u columns of a network of "
			       "%llu multiply-adds exceeds the work cap", n.k,
			       (unsigned long long)n.cost);
		goto out;
	}
	if (!o->approximate) {
		/* An estimate only for a caller that reports it as one. */
		if (n.k > cap)
			err = rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				       "exact Shapley values over %u columns exceed "
				       "the cap of %u", n.k, cap);
		else
			err = rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				       "exact Shapley values over %u columns of a "
				       "network of %llu multiply-adds exceed the work "
				       "cap", n.k, (unsigned long long)n.cost);
		goto out;
	}
	r->accuracy = EXPLAIN_APPROXIMATE;
	err = sh_sample(&n, o->seed, npairs, r);
out:
	sh_net_release(&n);
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
	int xgb; /* the forest follows XGBoost's rules */
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

/*
 * The two sides' weights at split node i: their covers' shares (of the
 * two covers' sum; of the node's own cover in an XGBoost forest (xgb),
 * as XGBoost's TreeShap and its node means weigh them).
 */
static void
ts_shares(const struct rebuild_tree_node *nodes, int xgb, uint32_t i,
	  double *wl, double *wr)
{
	double cl = (double)nodes[nodes[i].left].cover;
	double cr = (double)nodes[nodes[i].right].cover;
	double cp = (double)nodes[i].cover;

	if (xgb && cp > 0.0) {
		*wl = cl / cp;
		*wr = cr / cp;
	} else if (cl + cr > 0.0) {
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
	ts_shares(t->nodes, t->xgb, node, &wl, &wr);
	/* a missing input's hot side is the one its split learned; the
	 * cold side is weighted by its cover, missing rows included */
	if (rebuild_tree_goes_left(n, t->x[n->feature])) {
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
ts_expected(const struct rebuild_tree_node *nodes, int xgb, uint32_t i)
{
	double wl, wr;

	if (nodes[i].feature == REBUILD_TREE_LEAF)
		return (double)nodes[i].value;
	ts_shares(nodes, xgb, i, &wl, &wr);
	return wl * ts_expected(nodes, xgb, nodes[i].left) +
	       wr * ts_expected(nodes, xgb, nodes[i].right);
}

/*
 * Whether an XGBoost forest's TreeSHAP for group g is defined: XGBoost
 * weighs a split's sides by their covers over the split's own (and its
 * node means likewise), so a split whose cover (sum_hessian) is 0 makes
 * its pred_contribs NaN or infinite for every case; no value here is
 * then that TreeSHAP, and none is given.  Our own forests weigh by the
 * two sides' sum, one half each when both are 0 (explain.h).  0, or
 * RBA_E_RANGE naming the file's tree and node.
 */
static int
ts_covers_defined(const struct artifact *a, uint32_t g, struct rba_detail *d)
{
	const struct rebuild_forest *fo = &a->model.forest;
	uint32_t K = fo->ngroups;

	if (fo->rules == REBUILD_FOREST_OWN)
		return 0;
	for (uint32_t tr = g; tr < fo->ntrees; tr += K) {
		for (uint32_t i = fo->tree_start[tr]; i < fo->tree_start[tr + 1]; i++) {
			const struct rebuild_tree_node *n = &fo->nodes[i];
			uint32_t t = a->xgb_tree != NULL ? a->xgb_tree[tr] : tr;
			uint32_t k = a->xgb_node != NULL ? a->xgb_node[i]
							 : i - fo->tree_start[tr];
			if (n->feature == REBUILD_TREE_LEAF || n->cover > 0.0f)
				continue;
			return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
					"exact TreeSHAP is not defined for this "
					"model: tree %u node %u is a split whose "
					"cover (sum_hessian) is 0, and XGBoost's "
					"TreeSHAP divides by it (its pred_contribs "
					"are not numbers)",
					t, k);
		}
	}
	return 0;
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
	t.xgb = fo->rules != REBUILD_FOREST_OWN;
	t.x = x;
	t.phi = phi;
	t.scale = scale;
	r->baseline = scale * (double)fo->base[g];
	margin = (double)fo->base[g];
	for (uint32_t tr = g; tr < fo->ntrees; tr += K) {
		uint32_t root = fo->tree_start[tr], i = root;
		r->baseline += scale * ts_expected(fo->nodes, t.xgb, root);
		ts_recurse(&t, root, path, 0, 1.0, 1.0, -1);
		while (fo->nodes[i].feature != REBUILD_TREE_LEAF)
			i = rebuild_tree_goes_left(&fo->nodes[i],
						   x[fo->nodes[i].feature])
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
	return explain_case_opt(a, b, raw, cls, NULL, out, d);
}

int
explain_case_opt(const struct artifact *a, const struct explain_baseline *b,
		 const float *raw, uint32_t cls, const struct explain_options *o,
		 struct explain_result *out, struct rba_detail *d)
{
	static const struct explain_options defaults;
	const struct encode_spec *s = &a->spec;
	uint32_t *f0 = NULL;
	float *x = NULL;
	int err = RBA_E_NOMEM;

	memset(out, 0, sizeof(*out));
	if (o == NULL)
		o = &defaults;
	if (cls >= s->nclasses)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"class %u is not a class of the model", cls);
	out->method = explain_method_of(a);
	/* (a forest's baseline is its covers': b is not read) */
	if (out->method != EXPLAIN_TREESHAP &&
	    (b == NULL || b->nfeatures != s->nfeatures ||
	     b->ncolumns != s->ncolumns))
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"the baseline is not the model's");
	out->accuracy = EXPLAIN_EXACT;
	out->cls = cls;
	out->ncolumns = s->ncolumns;
	out->players = s->ncolumns;
	out->contrib = calloc(s->ncolumns ? s->ncolumns : 1, sizeof(double));
	out->bound = calloc(s->ncolumns ? s->ncolumns : 1, sizeof(double));
	f0 = column_starts(s);
	x = malloc((s->nfeatures ? s->nfeatures : 1) * sizeof(float));
	if (out->contrib == NULL || out->bound == NULL || f0 == NULL || x == NULL)
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
		err = explain_shapley(a, b, x, f0, o, out, d);
		if (err == 0)
			err = net_margin(&a->model, x, cls, &out->margin);
		break;
	default:
		err = ts_covers_defined(a, a->model.forest.ngroups == 1 ? 0 : cls, d);
		if (err == 0)
			err = explain_trees(a, x, f0, out);
		break;
	}
	if (err == 0) {
		out->sum = out->baseline;
		for (uint32_t c = 0; c < out->ncolumns; c++)
			out->sum += out->contrib[c];
		out->gap = fabs(out->sum - out->margin);
	}
out:
	free(f0);
	free(x);
	if (err != 0)
		explain_result_release(out);
	return err;
}
