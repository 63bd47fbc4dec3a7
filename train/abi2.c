/*
 * abi2.c - trainer ABI 2: ABI 1's recipe with fused multiply-adds.
 *
 * A copy of abi1.c (which stays frozen) with these changes, each of which
 * moves bits and so belongs to a new ABI (abi.h lists ABI 2's rules):
 *   - the dense kernels are kernel_fma's (kernel.h): every
 *     multiply-accumulate of linear, back_dx and back_dw one fused
 *     multiply-add, in ABI 1's order;
 *   - dropout draws 16 bits per unit, made 32 units at a time from one
 *     keyed stream per (step, layer) (kernel_drop16): a unit is dropped
 *     when its draw is below floor(dropout x 2^16);
 *   - the sparse scorer is the dense forward pass itself, fed each block
 *     of cases made dense (abi2_sparse_new).
 * Everything else is ABI 1's: the RNG purposes and indices, the
 * initialization, the blocks of REBUILD_BLOCK_ROWS rows reduced left to
 * right, the softmax with fm_expf/fm_logf, the loss and AdamW/SGD with
 * ABI 1's elementwise kernels.  Fast mode is OpenBLAS's products (its
 * bits are not promised anyway) with ABI 2's dropout draws.
 *
 * Frozen from the day it is released, like abi1.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rbatime.h"
#include "train/abi.h"
#include "train/fmath.h"
#include "train/kernel.h"
#include "train/pool.h"
#include "train/rng.h"

#define LMAX REBUILD_MAX_LAYERS
#define BR REBUILD_BLOCK_ROWS

struct block {
	size_t r0, rows;
	float *z[LMAX]; /* pre-activations: rows x sizes[l + 1] */
	float *h[LMAX]; /* hidden outputs after ReLU and dropout */
	float *g[LMAX]; /* dh/dz of hidden layers: 0, 1 or the keep scale */
	float *da, *dh; /* backward scratch: rows x widest layer */
	float *mx, *lse; /* per row: largest logit, log-sum-exp */
	float *gw[LMAX], *gb[LMAX];
	double loss;
};

struct run {
	const struct kernel_ops *k;
	struct kernel_ops kops; /* ABI 2's strict kernels (kernel_fma) */
	struct rebuild_model *m;
	uint32_t L, C;
	size_t nfeat;
	float *wt[LMAX];
	float *s1w[LMAX], *s2w[LMAX], *s1b[LMAX], *s2b[LMAX];
	float *xb;
	uint32_t *yb;
	size_t rows; /* of the current batch */
	float rowsf;
	int dropout;
	uint32_t drop_t; /* drop when the 16-bit draw is below this */
	float drop_scale;
	uint64_t drop_key[LMAX];
	size_t cap_rows; /* rows per block */
	size_t nblocks;	 /* allocated */
	size_t active;	 /* blocks in the current batch */
	int sum_as_we_go; /* one thread, blocks in order: each block's
			     gradient added into block 0's by back_dw_add */
	struct block *blk;
	void **allocs;
	size_t nallocs, capallocs;
	int oom;
};

static void *
run_alloc(struct run *r, size_t count, size_t size)
{
	void *p, **na;

	if (r->oom)
		return NULL;
	if (r->nallocs == r->capallocs) {
		size_t c = r->capallocs ? r->capallocs * 2 : 64;
		na = realloc(r->allocs, c * sizeof(*na));
		if (na == NULL) {
			r->oom = 1;
			return NULL;
		}
		r->allocs = na;
		r->capallocs = c;
	}
	p = abi_zalloc64(count, size);
	if (p == NULL) {
		r->oom = 1;
		return NULL;
	}
	r->allocs[r->nallocs++] = p;
	return p;
}

static void
run_free(struct run *r)
{
	for (size_t i = 0; i < r->nallocs; i++)
		free(r->allocs[i]);
	free(r->allocs);
	r->allocs = NULL;
	r->nallocs = r->capallocs = 0;
}

static void
transpose(const float *w, size_t in, size_t out, float *wt)
{
	for (size_t k = 0; k < in; k++)
		for (size_t j = 0; j < out; j++)
			wt[j * in + k] = w[k * out + j];
}

/*
 * q[i] = q[i] / d for n elements, in chunks of 16 with a constant trip
 * count (which compilers vectorize) and a tail: the same division per
 * element in any case.
 */
static void
divide_by(float *q, size_t n, float d)
{
	size_t i0 = 0;

	for (; i0 + 16 <= n; i0 += 16)
		for (size_t i = i0; i < i0 + 16; i++)
			q[i] = q[i] / d;
	for (size_t i = i0; i < n; i++)
		q[i] = q[i] / d;
}

typedef float abi2_v4 __attribute__((vector_size(16), aligned(4), may_alias));

/*
 * ABI 1's softmax (abi1_softmax in abi.h: the same operations, per
 * element in the same order, so the same bits) with its subtractions
 * and divisions 4 classes at a time: p[c] = e^(z_c - max) / sum, the
 * max and the sum over classes in order, e^ vectorized; mx and sum per
 * row.
 */
static void
softmax_rows(const struct kernel_ops *k, const float *z, size_t rows,
	     uint32_t C, float *p, float *mx, float *sum)
{
	for (size_t i = 0; i < rows; i++) {
		const float *zr = z + i * C;
		float m = zr[0], *pr = p + i * C;
		uint32_t c = 0;
		for (uint32_t c1 = 1; c1 < C; c1++)
			if (zr[c1] > m)
				m = zr[c1];
		mx[i] = m;
		for (; c + 4 <= C; c += 4)
			*(abi2_v4 *)(void *)(pr + c) =
				*(const abi2_v4 *)(const void *)(zr + c) - m;
		for (; c < C; c++)
			pr[c] = zr[c] - m;
	}
	k->expv(p, p, rows * C);
	for (size_t i = 0; i < rows; i++) {
		float s = 0.0f, *pr = p + i * C;
		uint32_t c = 0;
		for (uint32_t c1 = 0; c1 < C; c1++)
			s += pr[c1];
		sum[i] = s;
		for (; c + 4 <= C; c += 4)
			*(abi2_v4 *)(void *)(pr + c) =
				*(const abi2_v4 *)(const void *)(pr + c) / s;
		for (; c < C; c++)
			pr[c] = pr[c] / s;
	}
}

/*
 * The softmax of rows x C logits z and, per row, lse = log(sum) + max
 * (log vectorized, the same bits as fm_logf).
 */
static void
block_softmax(const struct kernel_ops *k, const float *z, size_t rows,
	      uint32_t C, float *p, float *mx, float *lse)
{
	softmax_rows(k, z, rows, C, p, mx, lse);
	k->logv(lse, lse, rows);
	for (size_t i = 0; i < rows; i++)
		lse[i] = lse[i] + mx[i];
}

static void
hidden_activation(const struct run *r, struct block *b, uint32_t l, int train)
{
	size_t out = r->m->sizes[l + 1];
	int drop = train && r->dropout;

	r->k->activate(b->z[l], b->h[l], b->g[l], b->rows * out,
		       drop ? r->drop_key[l] : 0, (uint32_t)(b->r0 * out),
		       drop ? r->drop_t : 0, r->drop_scale);
}

static void
block_forward(const struct run *r, struct block *b, const float *x, int train)
{
	const struct rebuild_model *m = r->m;
	const float *a = x;

	for (uint32_t l = 0; l < r->L; l++) {
		r->k->linear(a, b->rows, m->sizes[l], m->w[l], m->b[l],
			     m->sizes[l + 1], b->z[l]);
		if (l + 1 == r->L)
			break;
		hidden_activation(r, b, l, train);
		a = b->h[l];
	}
}

/* Loss sum over the block and the output gradient (p - onehot) / rows. */
static void
block_loss(const struct run *r, struct block *b)
{
	uint32_t C = r->C;
	const float *z = b->z[r->L - 1];
	double sum = 0.0;

	block_softmax(r->k, z, b->rows, C, b->da, b->mx, b->lse);
	for (size_t i = 0; i < b->rows; i++) {
		uint32_t y = r->yb[b->r0 + i];
		sum += (double)(b->lse[i] - z[i * C + y]);
		b->da[i * C + y] = b->da[i * C + y] - 1.0f;
	}
	/* ABI 1's dz = (p - onehot) / rows, the division a vector at a time */
	divide_by(b->da, b->rows * C, r->rowsf);
	b->loss = sum;
}

static void
block_backward(const struct run *r, struct block *b)
{
	const struct rebuild_model *m = r->m;
	float *dz = b->da, *dh = b->dh, *t;

	for (uint32_t l = r->L; l-- > 0;) {
		size_t in = m->sizes[l], out = m->sizes[l + 1];
		const float *a = l ? b->h[l - 1] : r->xb + b->r0 * r->nfeat;
		if (r->sum_as_we_go && b != &r->blk[0])
			r->k->back_dw_add(a, dz, b->rows, in, out,
					  r->blk[0].gw[l], r->blk[0].gb[l]);
		else
			r->k->back_dw(a, dz, b->rows, in, out, b->gw[l],
				      b->gb[l]);
		if (l == 0)
			break;
		if (r->k->back_dx_mul != NULL) {
			r->k->back_dx_mul(dz, b->rows, out, r->wt[l], in,
					  b->g[l - 1], dh);
		} else {
			r->k->back_dx(dz, b->rows, out, m->w[l], r->wt[l], in,
				      dh);
			r->k->mul(dh, b->g[l - 1], b->rows * in);
		}
		t = dz;
		dz = dh;
		dh = t;
	}
}

static void
step_job(void *ctx, unsigned tid, unsigned nthreads)
{
	struct run *r = ctx;

	for (size_t i = tid; i < r->active; i += nthreads) {
		struct block *b = &r->blk[i];
		block_forward(r, b, r->xb + b->r0 * r->nfeat, 1);
		block_loss(r, b);
		block_backward(r, b);
	}
}

static int
all_finite(const struct rebuild_model *m)
{
	for (uint32_t l = 0; l < m->nlayers; l++) {
		size_t in = m->sizes[l], out = m->sizes[l + 1];
		for (size_t i = 0; i < in * out; i++)
			if (!isfinite(m->w[l][i]))
				return 0;
		for (size_t j = 0; j < out; j++)
			if (!isfinite(m->b[l][j]))
				return 0;
	}
	return 1;
}

static void
init_weights(struct rebuild_model *m, uint64_t seed)
{
	for (uint32_t l = 0; l < m->nlayers; l++) {
		size_t in = m->sizes[l], out = m->sizes[l + 1];
		float bound = 1.0f / fm_sqrtf((float)in);
		uint64_t kw = rng_key(seed, RNG_INIT, l, 0);
		uint64_t kb = rng_key(seed, RNG_INIT, l, 1);
		/* Drawn in the [out][in] order of the artifact. */
		for (size_t j = 0; j < out; j++)
			for (size_t k = 0; k < in; k++) {
				float u = rng_uniformf(kw, j * in + k);
				m->w[l][k * out + j] = (2.0f * u - 1.0f) * bound;
			}
		for (size_t j = 0; j < out; j++) {
			float u = rng_uniformf(kb, j);
			m->b[l][j] = (2.0f * u - 1.0f) * bound;
		}
	}
}

static void
shuffle(size_t *perm, size_t n, uint64_t seed, uint32_t epoch)
{
	uint64_t key = rng_key(seed, RNG_SHUFFLE, epoch, 0);

	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	for (size_t i = n; i-- > 1;) {
		size_t j = (size_t)rng_below(key, i, i + 1);
		size_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

static int
run_setup(struct run *r, const struct pins *p, size_t batch, int fast)
{
	struct rebuild_model *m = r->m;
	size_t maxw = 0;

	for (uint32_t l = 0; l <= r->L; l++)
		if (m->sizes[l] > maxw)
			maxw = m->sizes[l];
	r->cap_rows = fast ? batch : (batch < BR ? batch : BR);
	r->nblocks = (batch + r->cap_rows - 1) / r->cap_rows;
	r->blk = run_alloc(r, r->nblocks, sizeof(*r->blk));
	r->xb = run_alloc(r, batch * r->nfeat, sizeof(float));
	r->yb = run_alloc(r, batch, sizeof(uint32_t));
	if (r->oom)
		return RBA_E_NOMEM;
	for (uint32_t l = 0; l < r->L; l++) {
		size_t in = m->sizes[l], out = m->sizes[l + 1];
		r->wt[l] = run_alloc(r, in * out, sizeof(float));
		r->s1w[l] = run_alloc(r, in * out, sizeof(float));
		r->s2w[l] = run_alloc(r, in * out, sizeof(float));
		r->s1b[l] = run_alloc(r, out, sizeof(float));
		r->s2b[l] = run_alloc(r, out, sizeof(float));
	}
	for (size_t i = 0; i < r->nblocks; i++) {
		struct block *b = &r->blk[i];
		for (uint32_t l = 0; l < r->L; l++) {
			size_t in = m->sizes[l], out = m->sizes[l + 1];
			b->z[l] = run_alloc(r, r->cap_rows * out, sizeof(float));
			if (l + 1 < r->L) {
				b->h[l] = run_alloc(r, r->cap_rows * out,
						    sizeof(float));
				b->g[l] = run_alloc(r, r->cap_rows * out,
						    sizeof(float));
			}
			b->gw[l] = run_alloc(r, in * out, sizeof(float));
			b->gb[l] = run_alloc(r, out, sizeof(float));
		}
		b->da = run_alloc(r, r->cap_rows * maxw, sizeof(float));
		b->dh = run_alloc(r, r->cap_rows * maxw, sizeof(float));
		b->mx = run_alloc(r, r->cap_rows, sizeof(float));
		b->lse = run_alloc(r, r->cap_rows, sizeof(float));
	}
	if (r->oom)
		return RBA_E_NOMEM;
	if (p->model.dropout > 0.0) {
		/* 16-bit draws (kernel_drop16): ABI 1 draws 24 bits */
		r->drop_t = (uint32_t)(p->model.dropout * 65536.0);
		r->dropout = r->drop_t > 0;
		r->drop_scale = 1.0f / (1.0f - (float)p->model.dropout);
	}
	return 0;
}

/*
 * One optimizer step from the reduced gradient (block 0's buffers).  The
 * bias corrections 1 - beta^t come from running products in double, so
 * no pow() is called; the per-step scalars are then rounded to float.
 */
static void
optimizer_step(struct run *r, const struct pins *p, double *b1t, double *b2t)
{
	struct rebuild_model *m = r->m;
	const struct block *g = &r->blk[0];

	if (p->train.optimizer == PINS_OPT_SGD) {
		struct kernel_sgd ks = {
			(float)p->train.weight_decay, (float)p->train.momentum,
			(float)p->train.lr,
		};
		for (uint32_t l = 0; l < r->L; l++) {
			size_t in = m->sizes[l], out = m->sizes[l + 1];
			r->k->sgd(m->w[l], g->gw[l], r->s1w[l], in * out, &ks);
			r->k->sgd(m->b[l], g->gb[l], r->s1b[l], out, &ks);
		}
	} else {
		struct kernel_adamw ka;
		float lr = (float)p->train.lr, wd = (float)p->train.weight_decay;
		*b1t *= p->train.betas[0];
		*b2t *= p->train.betas[1];
		ka.b1 = (float)p->train.betas[0];
		ka.omb1 = 1.0f - ka.b1;
		ka.b2 = (float)p->train.betas[1];
		ka.omb2 = 1.0f - ka.b2;
		ka.decay = 1.0f - lr * wd;
		ka.step_size = (float)(p->train.lr / (1.0 - *b1t));
		ka.bc2sqrt = (float)sqrt(1.0 - *b2t);
		ka.eps = (float)p->train.eps;
		for (uint32_t l = 0; l < r->L; l++) {
			size_t in = m->sizes[l], out = m->sizes[l + 1];
			r->k->adamw(m->w[l], g->gw[l], r->s1w[l], r->s2w[l],
				    in * out, &ka);
			r->k->adamw(m->b[l], g->gb[l], r->s1b[l], r->s2b[l],
				    out, &ka);
		}
	}
	/* back_dx never runs for layer 0 (block_backward): no copy kept */
	for (uint32_t l = 1; l < r->L; l++)
		transpose(m->w[l], m->sizes[l], m->sizes[l + 1], r->wt[l]);
}

static int
abi2_forward(const struct rebuild_model *m, const float *x, size_t n,
	     const uint32_t *y, float *probs, float *loss);

/* The kernels of run r: OpenBLAS's in fast mode (which runs the threads
 * itself: *threads becomes 1) with ABI 2's dropout, else ABI 2's strict
 * ones (kernel_fma). */
static int
pick_kernels(struct run *r, int fast, unsigned *threads, struct rba_detail *d)
{
	if (fast) {
		const struct kernel_ops *f = kernel_fast(*threads);
		struct kernel_ops strict2;
		*threads = 1; /* OpenBLAS runs the threads */
		if (f == NULL)
			return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
					"fast mode needs OpenBLAS, which is %s",
					kernel_blas_unavailable());
		/* OpenBLAS's products, ABI 2's dropout: its threshold is in
		 * 16-bit draws (ABI 1's activate would read it as 24-bit) */
		kernel_fma(&strict2);
		r->kops = *f;
		r->kops.activate = strict2.activate;
		r->k = &r->kops;
	} else {
		kernel_fma(&r->kops);
		r->k = &r->kops;
	}
	return 0;
}

/*
 * The fixed reduction of the block gradients into block 0's: left to
 * right in block order (done already when the blocks summed as they
 * went).
 */
static void
reduce_blocks(struct run *r, const uint32_t *sizes)
{
	for (size_t i = 1; !r->sum_as_we_go && i < r->active; i++)
		for (uint32_t l = 0; l < r->L; l++) {
			r->k->add(r->blk[0].gw[l], r->blk[i].gw[l],
				  (size_t)sizes[l] * sizes[l + 1]);
			r->k->add(r->blk[0].gb[l], r->blk[i].gb[l],
				  sizes[l + 1]);
		}
}

/*
 * Steps 1 to 3 of one batch: its rows (perm[first ..], at most batch of
 * them) gathered, cut into blocks, each block's forward, loss and
 * backward run on the pool, and the block gradients added into block
 * 0's left to right.  The blocks' losses are left to the caller.
 */
static void
batch_gradients(struct run *r, struct pool *pool, const struct rebuild_set *train,
		const size_t *perm, size_t first, size_t batch, uint64_t seed,
		uint64_t step, const uint32_t *sizes)
{
	size_t nfeat = r->nfeat;

	r->rows = train->n - first < batch ? train->n - first : batch;
	r->rowsf = (float)r->rows;
	for (size_t i = 0; i < r->rows; i++) {
		size_t src = perm[first + i];
		if (i + 8 < r->rows)
			__builtin_prefetch(train->x + perm[first + i + 8] * nfeat);
		memcpy(r->xb + i * nfeat, train->x + src * nfeat,
		       nfeat * sizeof(float));
		r->yb[i] = train->y[src];
	}
	r->active = (r->rows + r->cap_rows - 1) / r->cap_rows;
	for (size_t i = 0; i < r->active; i++) {
		r->blk[i].r0 = i * r->cap_rows;
		r->blk[i].rows = r->rows - r->blk[i].r0 < r->cap_rows
					 ? r->rows - r->blk[i].r0
					 : r->cap_rows;
	}
	for (uint32_t l = 0; l + 1 < r->L; l++)
		r->drop_key[l] = rng_key(seed, RNG_DROPOUT, step, l);
	pool_run(pool, step_job, r);
	reduce_blocks(r, sizes);
}

/*
 * The end of epoch e, its loss summed over n rows eloss: a model gone
 * non-finite is an error (RBA_E_NUMERIC); with rep, the epoch's point of
 * the curve.  0 or an error, said in d.
 */
static int
epoch_end(const struct rebuild_model *out, const struct rebuild_set *val,
	  uint32_t positive, uint32_t e, double eloss, size_t n,
	  struct rebuild_report *rep, struct rba_detail *d)
{
	if (!isfinite(eloss) || !all_finite(out))
		return rba_fail(d, RBA_E_NUMERIC, NULL, 0, 0,
				"training diverged in epoch %u", e + 1);
	if (rep != NULL) {
		struct rebuild_epoch *ep = &rep->curve[e];
		int err = rebuild_eval(2, out, val, positive, ep);
		if (err != 0) {
			rba_fail(d, err, NULL, 0, 0, "out of memory");
			return err;
		}
		ep->train_loss = eloss / (double)n;
	}
	return 0;
}

/* The report's totals after epochs epochs over n rows from t0 on. */
static void
report_done(struct rebuild_report *rep, uint32_t epochs, size_t n, double t0,
	    const char *kernels)
{
	rep->epochs = epochs;
	rep->final = rep->curve[epochs - 1];
	rep->examples = (uint64_t)n * epochs;
	rep->train_seconds = rba_time_mono() - t0;
	rep->examples_per_second =
		rep->train_seconds > 0
			? (double)rep->examples / rep->train_seconds
			: 0.0;
	rep->kernels = kernels;
}

static int
abi2_train(const struct pins *p, size_t nfeat, uint32_t nclasses,
	   uint32_t positive, const struct rebuild_set *train,
	   const struct rebuild_set *val, struct rebuild_model *out,
	   struct rebuild_report *rep, const struct rebuild_progress *progress,
	   struct rba_detail *d)
{
	struct run r;
	struct pool *pool = NULL;
	uint32_t sizes[LMAX + 1];
	size_t batch = p->train.batch_size, steps, *perm;
	uint64_t seed = p->train.seed, step = 0;
	double b1t = 1.0, b2t = 1.0, t0;
	int fast = p->determinism.mode == PINS_DET_FAST, err;
	unsigned threads = p->determinism.threads ? p->determinism.threads : 1;

	memset(&r, 0, sizeof(r));
	r.L = (uint32_t)p->model.nhidden + 1;
	r.C = nclasses;
	r.nfeat = nfeat;
	sizes[0] = (uint32_t)nfeat;
	for (size_t i = 0; i < p->model.nhidden; i++)
		sizes[i + 1] = p->model.hidden[i];
	sizes[r.L] = nclasses;
	err = rebuild_model_alloc(out, r.L, sizes);
	if (err != 0)
		return rba_fail(d, err, NULL, 0, 0, "%s",
				err == RBA_E_RANGE ? "layer sizes exceed the caps"
						   : "out of memory");
	r.m = out;
	if (batch > train->n)
		batch = train->n;
	if ((err = pick_kernels(&r, fast, &threads, d)) != 0) {
		rebuild_model_release(out);
		return err;
	}
	err = run_setup(&r, p, batch, fast);
	perm = run_alloc(&r, train->n, sizeof(size_t));
	if (err == 0 && perm == NULL)
		err = RBA_E_NOMEM;
	if (err == 0 && rep != NULL) {
		rep->curve = calloc(p->train.epochs, sizeof(*rep->curve));
		if (rep->curve == NULL)
			err = RBA_E_NOMEM;
	}
	if (err == 0 && threads > 1)
		err = pool_new(threads, &pool);
	if (err == 0 && pool == NULL) {
		err = pool_new(1, &pool);
		r.sum_as_we_go = r.k->back_dw_add != NULL;
	}
	if (err != 0) {
		run_free(&r);
		rebuild_model_release(out);
		return rba_fail(d, err, NULL, 0, 0, "cannot set up training");
	}
	init_weights(out, seed);
	for (uint32_t l = 0; l < r.L; l++)
		transpose(out->w[l], sizes[l], sizes[l + 1], r.wt[l]);
	steps = (train->n + batch - 1) / batch;
	t0 = rba_time_mono();
	for (uint32_t e = 0; e < p->train.epochs; e++) {
		double eloss = 0.0;
		shuffle(perm, train->n, seed, e);
		for (size_t s = 0; s < steps; s++, step++) {
			batch_gradients(&r, pool, train, perm, s * batch, batch,
					seed, step, sizes);
			for (size_t i = 0; i < r.active; i++)
				eloss += r.blk[i].loss;
			optimizer_step(&r, p, &b1t, &b2t);
		}
		if ((err = epoch_end(out, val, positive, e, eloss, train->n, rep,
				     d)) != 0)
			goto fail;
		/* Outside the arithmetic: the caller's hook sees counts only. */
		if (progress != NULL && progress->epoch != NULL)
			progress->epoch(progress->ctx, e + 1, p->train.epochs);
	}
	if (rep != NULL)
		report_done(rep, p->train.epochs, train->n, t0, r.k->name);
	pool_free(pool);
	run_free(&r);
	return 0;
fail:
	pool_free(pool);
	run_free(&r);
	rebuild_model_release(out);
	if (rep != NULL) {
		free(rep->curve);
		rep->curve = NULL;
	}
	return err;
}

/*
 * The eval-mode forward pass's run for m: r (which must stay where it
 * is: r->k points into it) and one block of BR rows, *bp.  0 or
 * RBA_E_NOMEM (nothing left to free).
 */
static int
forward_setup(const struct rebuild_model *m, struct run *r, struct block **bp)
{
	struct block *b;

	memset(r, 0, sizeof(*r));
	kernel_fma(&r->kops);
	r->k = &r->kops;
	r->m = (struct rebuild_model *)m;
	r->L = m->nlayers;
	r->C = m->sizes[m->nlayers];
	r->nfeat = m->sizes[0];
	b = run_alloc(r, 1, sizeof(*b));
	for (uint32_t l = 0; b != NULL && l < r->L; l++) {
		b->z[l] = run_alloc(r, BR * (size_t)m->sizes[l + 1], sizeof(float));
		b->h[l] = run_alloc(r, BR * (size_t)m->sizes[l + 1], sizeof(float));
		b->g[l] = run_alloc(r, BR * (size_t)m->sizes[l + 1], sizeof(float));
	}
	if (b != NULL) {
		b->mx = run_alloc(r, BR, sizeof(float));
		b->lse = run_alloc(r, BR, sizeof(float));
	}
	if (r->oom) {
		run_free(r);
		return RBA_E_NOMEM;
	}
	*bp = b;
	return 0;
}

/* Rows x (n of them) through the run of forward_setup: probs and, with y
 * and loss, each row's cross-entropy.  Row results do not depend on how
 * rows are grouped into blocks. */
static void
forward_rows(struct run *r, struct block *b, const float *x, size_t n,
	     const uint32_t *y, float *probs, float *loss)
{
	uint32_t C = r->C;

	for (size_t r0 = 0; r0 < n; r0 += BR) {
		b->r0 = r0;
		b->rows = n - r0 < BR ? n - r0 : BR;
		block_forward(r, b, x + r0 * r->nfeat, 0);
		block_softmax(r->k, b->z[r->L - 1], b->rows, C, probs + r0 * C,
			      b->mx, b->lse);
		for (size_t i = 0; i < b->rows && y != NULL && loss != NULL; i++)
			loss[r0 + i] = b->lse[i] - b->z[r->L - 1][i * C + y[r0 + i]];
	}
}

static int
abi2_forward(const struct rebuild_model *m, const float *x, size_t n,
	     const uint32_t *y, float *probs, float *loss)
{
	struct run r;
	struct block *b;
	int err = forward_setup(m, &r, &b);

	if (err != 0)
		return err;
	forward_rows(&r, b, x, n, y, probs, loss);
	run_free(&r);
	return 0;
}

static int
abi2_gradient(const struct rebuild_model *m, const float *x, const uint32_t *y,
	      size_t n, struct rebuild_model *grad, double *loss)
{
	struct pins p;
	struct run r;
	double sum = 0.0;
	int err;

	memset(&p, 0, sizeof(p));
	memset(&r, 0, sizeof(r));
	kernel_fma(&r.kops);
	r.k = &r.kops;
	r.m = (struct rebuild_model *)m;
	r.L = m->nlayers;
	r.C = m->sizes[m->nlayers];
	r.nfeat = m->sizes[0];
	if ((err = run_setup(&r, &p, n, 0)) != 0) {
		run_free(&r);
		return err;
	}
	memcpy(r.xb, x, n * r.nfeat * sizeof(float));
	memcpy(r.yb, y, n * sizeof(uint32_t));
	for (uint32_t l = 0; l < r.L; l++)
		transpose(m->w[l], m->sizes[l], m->sizes[l + 1], r.wt[l]);
	r.rows = n;
	r.rowsf = (float)n;
	r.active = r.nblocks;
	for (size_t i = 0; i < r.active; i++) {
		r.blk[i].r0 = i * r.cap_rows;
		r.blk[i].rows = n - r.blk[i].r0 < r.cap_rows ? n - r.blk[i].r0
							     : r.cap_rows;
	}
	r.sum_as_we_go = r.k->back_dw_add != NULL;
	step_job(&r, 0, 1);
	reduce_blocks(&r, m->sizes);
	for (size_t i = 0; i < r.active; i++)
		sum += r.blk[i].loss;
	for (uint32_t l = 0; l < r.L; l++) {
		memcpy(grad->w[l], r.blk[0].gw[l],
		       (size_t)m->sizes[l] * m->sizes[l + 1] * sizeof(float));
		memcpy(grad->b[l], r.blk[0].gb[l], m->sizes[l + 1] * sizeof(float));
	}
	*loss = sum / (double)n;
	run_free(&r);
	return 0;
}

/*
 * ABI 2's sparse scorer: each run of up to SP2_CASES cases made dense
 * (zeros where no term is listed) and scored by abi2_forward, which is
 * the dense pass itself: its bits by construction.
 */
#define SP2_CASES 1024

struct abi2_sparse {
	struct rebuild_sparse head; /* first: rebuild_sparse_* cast */
	struct rebuild_model m;
	struct run r; /* forward_setup's, on m */
	struct block *b;
	int ready; /* r set up */
	float *dense; /* SP2_CASES x sizes[0] */
};

static void
abi2_sparse_score(struct rebuild_sparse *sp, const float *tx,
		  const uint32_t *row, size_t nterms, size_t ncases,
		  float *probs)
{
	struct abi2_sparse *sc = (struct abi2_sparse *)sp;
	size_t nin = sc->m.sizes[0], C = sc->m.sizes[sc->m.nlayers];

	for (size_t c0 = 0; c0 < ncases; c0 += SP2_CASES) {
		size_t nc = ncases - c0 < SP2_CASES ? ncases - c0 : SP2_CASES;
		memset(sc->dense, 0, nc * nin * sizeof(float));
		for (size_t i = 0; i < nc; i++)
			for (size_t t = 0; t < nterms; t++) {
				size_t at = (c0 + i) * nterms + t;
				sc->dense[i * nin + row[at]] = tx[at];
			}
		forward_rows(&sc->r, sc->b, sc->dense, nc, NULL, probs + c0 * C,
			     NULL);
	}
}

static void
abi2_sparse_free(struct rebuild_sparse *sp)
{
	struct abi2_sparse *sc = (struct abi2_sparse *)sp;

	if (sc->ready)
		run_free(&sc->r);
	rebuild_model_release(&sc->m);
	free(sc->dense);
	free(sc);
}

static int
abi2_sparse_new(const struct rebuild_model *m, struct rebuild_sparse **out)
{
	struct abi2_sparse *sc = calloc(1, sizeof(*sc));

	*out = NULL;
	if (sc == NULL)
		return RBA_E_NOMEM;
	sc->head.score = abi2_sparse_score;
	sc->head.free = abi2_sparse_free;
	if (rebuild_model_alloc(&sc->m, m->nlayers, m->sizes) != 0 ||
	    (sc->dense = malloc((size_t)SP2_CASES * m->sizes[0] *
				sizeof(float))) == NULL) {
		abi2_sparse_free(&sc->head);
		return RBA_E_NOMEM;
	}
	for (uint32_t l = 0; l < m->nlayers; l++) {
		memcpy(sc->m.w[l], m->w[l],
		       (size_t)m->sizes[l] * m->sizes[l + 1] * sizeof(float));
		memcpy(sc->m.b[l], m->b[l], m->sizes[l + 1] * sizeof(float));
	}
	if (forward_setup(&sc->m, &sc->r, &sc->b) != 0) {
		abi2_sparse_free(&sc->head);
		return RBA_E_NOMEM;
	}
	sc->ready = 1;
	*out = &sc->head;
	return 0;
}

const struct abi_impl abi2_impl = {
	2,
	"float32 MLP as ABI 1, every dot-product multiply-add fused (fma), "
	"16-bit dropout draws made 32 at a time",
	abi2_train,
	abi2_forward,
	abi2_gradient,
	abi2_sparse_new,
};
