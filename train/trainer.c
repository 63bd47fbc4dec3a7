/*
 * trainer.c - the trainer ABI registry and what every ABI shares:
 * model storage, argument checks, evaluation metrics.
 *
 * A row of the registry is one ABI: its arithmetic for each model kind
 * (the network of abiN.c, the trees of gbdtN.c), dispatched on the
 * model's kind.  Adding ABI N: write abiN.c (and gbdtN.c if the trees
 * change) with their own arithmetic (copying, never editing, what they
 * change), add their row below and raise REBUILD_ABI_MAX; raise
 * REBUILD_ABI_CURRENT, the default of pins that name none, once the new
 * ABI has held on every path make check and make check-arm64 try.
 * ABI 1's row and files stay as they are.
 */
#include "train/trainer.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/abi.h"

struct abi_row {
	const struct abi_impl *mlp;
	const struct abi_gbdt_impl *gbdt;
};

static const struct abi_row abi_table[] = {
	{&abi1_impl, &gbdt1_impl},
	/* ABI 2's trees are ABI 1's: no dot product to fuse (abi.h) */
	{&abi2_impl, &gbdt1_impl},
};

static const struct abi_row *
abi_row_find(uint32_t abi)
{
	if (abi == 0)
		abi = REBUILD_ABI_CURRENT;
	for (size_t i = 0; i < sizeof(abi_table) / sizeof(abi_table[0]); i++)
		if (abi_table[i].mlp->abi == abi)
			return &abi_table[i];
	return NULL;
}

static const struct abi_impl *
abi_find(uint32_t abi)
{
	const struct abi_row *r = abi_row_find(abi);

	return r ? r->mlp : NULL;
}

static const struct abi_gbdt_impl *
abi_gbdt_find(uint32_t abi)
{
	const struct abi_row *r = abi_row_find(abi);

	return r ? r->gbdt : NULL;
}

/* The forward pass of m's kind in abi (NULL: unknown abi). */
static int (*abi_forward(uint32_t abi, const struct rebuild_model *m))(
	const struct rebuild_model *, const float *, size_t, const uint32_t *,
	float *, float *)
{
	if (abi == 0 || abi_row_find(abi) == NULL)
		return NULL;
	if (m->kind == REBUILD_KIND_GBDT)
		return abi_gbdt_find(abi)->forward;
	return abi_find(abi)->forward;
}

uint32_t
rebuild_abi_current(void)
{
	return REBUILD_ABI_CURRENT;
}

uint32_t
rebuild_abi_max(void)
{
	return REBUILD_ABI_MAX;
}

int
rebuild_abi_supported(uint32_t abi)
{
	return abi != 0 && abi_find(abi) != NULL;
}

const char *
rebuild_abi_describe(uint32_t abi)
{
	const struct abi_impl *a = abi != 0 ? abi_find(abi) : NULL;

	return a ? a->summary : "";
}

void *
abi_zalloc64(size_t count, size_t size)
{
	size_t n, sz;
	void *p;

	if (size != 0 && count > (SIZE_MAX - 63) / size)
		return NULL;
	n = count * size;
	if (n == 0)
		n = 1;
	sz = n + 63 - (n + 63) % 64;
	if ((p = aligned_alloc(64, sz)) != NULL)
		memset(p, 0, sz);
	return p;
}

int
rebuild_model_alloc(struct rebuild_model *m, uint32_t nlayers,
		    const uint32_t *sizes)
{
	size_t total = 0;

	memset(m, 0, sizeof(*m));
	if (nlayers < 1 || nlayers > REBUILD_MAX_LAYERS)
		return RBA_E_RANGE;
	for (uint32_t l = 0; l <= nlayers; l++)
		if (sizes[l] < 1 || sizes[l] > REBUILD_MAX_WIDTH)
			return RBA_E_RANGE;
	for (uint32_t l = 0; l < nlayers; l++)
		total += (size_t)sizes[l] * sizes[l + 1] + sizes[l + 1];
	if (total > REBUILD_MAX_PARAMS)
		return RBA_E_RANGE;
	m->nlayers = nlayers;
	memcpy(m->sizes, sizes, (nlayers + 1) * sizeof(sizes[0]));
	for (uint32_t l = 0; l < nlayers; l++) {
		m->w[l] = abi_zalloc64((size_t)sizes[l] * sizes[l + 1],
				       sizeof(float));
		m->b[l] = abi_zalloc64(sizes[l + 1], sizeof(float));
		if (m->w[l] == NULL || m->b[l] == NULL) {
			rebuild_model_release(m);
			return RBA_E_NOMEM;
		}
	}
	return 0;
}

int
rebuild_forest_alloc(struct rebuild_model *m, uint32_t nfeatures,
		     uint32_t nclasses, size_t nedges, uint32_t ntrees,
		     size_t nnodes)
{
	struct rebuild_forest *f = &m->forest;

	memset(m, 0, sizeof(*m));
	if (nfeatures < 1 || nfeatures > REBUILD_MAX_WIDTH || nclasses < 2 ||
	    nclasses > REBUILD_MAX_CLASSES || ntrees < 1 ||
	    ntrees > REBUILD_GBDT_MAX_TREES || nnodes < ntrees ||
	    nnodes > REBUILD_GBDT_MAX_NODES ||
	    nedges > (size_t)nfeatures * (REBUILD_GBDT_MAX_BINS - 1))
		return RBA_E_RANGE;
	m->kind = REBUILD_KIND_GBDT;
	m->nlayers = 1;
	m->sizes[0] = nfeatures;
	m->sizes[1] = nclasses;
	f->nfeatures = nfeatures;
	f->nclasses = nclasses;
	f->ngroups = nclasses == 2 ? 1 : nclasses;
	if (ntrees % f->ngroups != 0)
		return RBA_E_RANGE;
	f->ntrees = ntrees;
	f->base = calloc(f->ngroups, sizeof(float));
	f->edge_start = calloc((size_t)nfeatures + 1, sizeof(uint32_t));
	f->edges = calloc(nedges ? nedges : 1, sizeof(float));
	f->tree_start = calloc((size_t)ntrees + 1, sizeof(uint32_t));
	f->nodes = calloc(nnodes, sizeof(*f->nodes));
	if (f->base == NULL || f->edge_start == NULL || f->edges == NULL ||
	    f->tree_start == NULL || f->nodes == NULL) {
		rebuild_model_release(m);
		return RBA_E_NOMEM;
	}
	return 0;
}

void
rebuild_model_release(struct rebuild_model *m)
{
	if (m == NULL)
		return;
	for (uint32_t l = 0; l < REBUILD_MAX_LAYERS; l++) {
		free(m->w[l]);
		free(m->b[l]);
	}
	free(m->forest.base);
	free(m->forest.edge_start);
	free(m->forest.edges);
	free(m->forest.tree_start);
	free(m->forest.nodes);
	free(m->forest.cats);
	memset(m, 0, sizeof(*m));
}

int
rebuild_forest_has_cats(const struct rebuild_forest *f)
{
	size_t nn = f->ntrees ? f->tree_start[f->ntrees] : 0;

	for (size_t i = 0; i < nn; i++)
		if (f->nodes[i].feature != REBUILD_TREE_LEAF &&
		    (f->nodes[i].flags & REBUILD_TREE_CATEGORICAL))
			return 1;
	return 0;
}

size_t
rebuild_model_params(const struct rebuild_model *m)
{
	size_t total = 0;

	if (m->kind == REBUILD_KIND_GBDT)
		return m->forest.ntrees ? m->forest.tree_start[m->forest.ntrees]
					: 0;
	for (uint32_t l = 0; l < m->nlayers; l++)
		total += (size_t)m->sizes[l] * m->sizes[l + 1] + m->sizes[l + 1];
	return total;
}

void
rebuild_report_release(struct rebuild_report *r)
{
	if (r == NULL)
		return;
	free(r->curve);
	memset(r, 0, sizeof(*r));
}

int
rebuild_train(const struct pins *p, uint32_t abi, size_t nfeat,
	      uint32_t nclasses, uint32_t positive,
	      const struct rebuild_set *train, const struct rebuild_set *val,
	      struct rebuild_model *out, struct rebuild_report *rep,
	      const struct rebuild_progress *progress, struct rba_detail *d)
{
	const struct abi_impl *a = abi_find(abi);
	int gbdt = p->model.kind == PINS_MODEL_GBDT;

	memset(out, 0, sizeof(*out));
	if (rep != NULL)
		memset(rep, 0, sizeof(*rep));
	if (a == NULL)
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
				"trainer ABI %u is not known to this build "
				"(it knows 1 to %u)",
				abi, REBUILD_ABI_MAX);
	if (nclasses < 2 || nclasses > REBUILD_MAX_CLASSES)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"%u classes: need 2 to %u", nclasses,
				REBUILD_MAX_CLASSES);
	if (nfeat < 1 || nfeat > REBUILD_MAX_WIDTH)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"%zu features: need 1 to %u", nfeat,
				REBUILD_MAX_WIDTH);
	if (train->n < 1 || train->n > REBUILD_MAX_EXAMPLES ||
	    val->n > REBUILD_MAX_EXAMPLES)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"%zu training examples: need 1 to %u", train->n,
				REBUILD_MAX_EXAMPLES);
	if (gbdt && (p->model.gbdt.trees < 1 ||
		     p->model.gbdt.trees > PINS_MAX_TREES ||
		     (size_t)p->model.gbdt.trees * (nclasses == 2 ? 1 : nclasses) >
			     REBUILD_GBDT_MAX_TREES ||
		     p->model.gbdt.max_depth < 1 ||
		     p->model.gbdt.max_depth > REBUILD_GBDT_MAX_DEPTH ||
		     p->model.gbdt.max_leaves == 1 ||
		     p->model.gbdt.max_bins < 2 ||
		     p->model.gbdt.max_bins > REBUILD_GBDT_MAX_BINS ||
		     !(p->model.gbdt.learning_rate > 0.0) ||
		     !(p->model.gbdt.learning_rate <= 1.0) ||
		     !(p->model.gbdt.min_child_weight >= 0.0) ||
		     !(p->model.gbdt.lambda >= 0.0) ||
		     !(p->model.gbdt.gamma >= 0.0) ||
		     !isfinite(p->model.gbdt.min_child_weight) ||
		     !isfinite(p->model.gbdt.lambda) ||
		     !isfinite(p->model.gbdt.gamma) ||
		     !(p->model.gbdt.subsample > 0.0) ||
		     !(p->model.gbdt.subsample <= 1.0) ||
		     !(p->model.gbdt.colsample > 0.0) ||
		     !(p->model.gbdt.colsample <= 1.0) ||
		     p->determinism.threads > REBUILD_MAX_THREADS))
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"tree hyperparameters out of range");
	if (gbdt) {
		for (size_t i = 0; i < train->n; i++)
			if (train->y[i] >= nclasses)
				return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
						"class index out of range");
		for (size_t i = 0; i < val->n; i++)
			if (val->y[i] >= nclasses)
				return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
						"class index out of range");
		return abi_gbdt_find(abi)->train(p, nfeat, nclasses, positive,
						 train, val, out, rep, progress,
						 d);
	}
	if (p->model.nhidden > PINS_MAX_LAYERS || p->train.epochs < 1 ||
	    p->train.batch_size < 1 || p->model.dropout < 0.0 ||
	    !(p->model.dropout < 1.0) ||
	    p->determinism.threads > REBUILD_MAX_THREADS)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"hyperparameters out of range");
	if ((size_t)p->train.batch_size * REBUILD_MAX_WIDTH > UINT32_MAX)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"batch size %u is too large",
				p->train.batch_size);
	for (size_t i = 0; i < train->n; i++)
		if (train->y[i] >= nclasses)
			return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
					"class index out of range");
	for (size_t i = 0; i < val->n; i++)
		if (val->y[i] >= nclasses)
			return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
					"class index out of range");
	return a->train(p, nfeat, nclasses, positive, train, val, out, rep,
			progress, d);
}

int
rebuild_predict(uint32_t abi, const struct rebuild_model *m, const float *x,
		size_t n, float *probs)
{
	int (*fwd)(const struct rebuild_model *, const float *, size_t,
		   const uint32_t *, float *, float *) = abi_forward(abi, m);

	if (fwd == NULL)
		return RBA_E_UNSUPPORTED;
	return fwd(m, x, n, NULL, probs, NULL);
}

int
rebuild_sparse_new(uint32_t abi, const struct rebuild_model *m,
		   struct rebuild_sparse **out)
{
	const struct abi_impl *a = abi_find(abi);

	*out = NULL;
	if (a == NULL || abi == 0)
		return RBA_E_UNSUPPORTED;
	if (m->kind == REBUILD_KIND_GBDT) {
		const struct abi_gbdt_impl *g = abi_gbdt_find(abi);
		assert(g->sparse_new != NULL); /* every ABI provides one */
		return g->sparse_new(m, out);
	}
	assert(a->sparse_new != NULL); /* every ABI provides one */
	/* ABI 1's block scorer: abi1_sparse.c's bits, faster (abi1_block.c) */
	if (abi == 1)
		return abi1_block_new(m, out);
	return a->sparse_new(m, out);
}

void
rebuild_sparse_free(struct rebuild_sparse *sp)
{
	if (sp != NULL)
		sp->free(sp);
}

void
rebuild_sparse_score(struct rebuild_sparse *sp, const float *tx,
		     const uint32_t *row, size_t nterms, size_t ncases,
		     float *probs)
{
	sp->score(sp, tx, row, nterms, ncases, probs);
}

int
rebuild_sparse_takes_cols(const struct rebuild_sparse *sp)
{
	return sp->score_cols != NULL;
}

void
rebuild_sparse_score_cols(struct rebuild_sparse *sp, const float *x,
			  size_t ld, size_t ncases, float *probs)
{
	assert(sp->score_cols != NULL && ncases <= ld);
	sp->score_cols(sp, x, ld, ncases, probs);
}

int
rebuild_gradient(uint32_t abi, const struct rebuild_model *m,
		 const struct rebuild_set *set, struct rebuild_model *grad,
		 double *loss)
{
	const struct abi_impl *a = abi_find(abi);
	int err;

	memset(grad, 0, sizeof(*grad));
	if (a == NULL || abi == 0 || m->kind != REBUILD_KIND_MLP)
		return RBA_E_UNSUPPORTED;
	if (set->n == 0 || set->n > REBUILD_MAX_EXAMPLES)
		return RBA_E_RANGE;
	if ((err = rebuild_model_alloc(grad, m->nlayers, m->sizes)) != 0)
		return err;
	err = a->gradient(m, set->x, set->y, set->n, grad, loss);
	if (err != 0)
		rebuild_model_release(grad);
	return err;
}

struct auc_item {
	float s;
	uint8_t pos;
};

static int
auc_cmp(const void *a, const void *b)
{
	const struct auc_item *x = a, *y = b;

	if (x->s < y->s)
		return -1;
	if (x->s > y->s)
		return 1;
	return (int)x->pos - (int)y->pos;
}

int
rebuild_auc(const float *score, const uint8_t *pos, size_t n, double *auc)
{
	struct auc_item *it;
	double npos = 0, nneg = 0, ranks = 0;
	size_t i, j;

	*auc = NAN;
	if (n == 0)
		return 0;
	it = malloc(n * sizeof(*it));
	if (it == NULL)
		return RBA_E_NOMEM;
	for (i = 0; i < n; i++) {
		it[i].s = score[i];
		it[i].pos = pos[i] ? 1 : 0;
		if (it[i].pos)
			npos++;
		else
			nneg++;
	}
	qsort(it, n, sizeof(*it), auc_cmp);
	for (i = 0; i < n; i = j) {
		double avg, cnt = 0;
		for (j = i; j < n && it[j].s == it[i].s; j++)
			if (it[j].pos)
				cnt++;
		avg = ((double)(i + 1) + (double)j) / 2.0; /* ranks i+1..j */
		ranks += avg * cnt;
	}
	free(it);
	if (npos > 0 && nneg > 0)
		*auc = (ranks - npos * (npos + 1) / 2.0) / (npos * nneg);
	return 0;
}

int
rebuild_eval(uint32_t abi, const struct rebuild_model *m,
	     const struct rebuild_set *set, uint32_t positive,
	     struct rebuild_epoch *out)
{
	int (*fwd)(const struct rebuild_model *, const float *, size_t,
		   const uint32_t *, float *, float *) = abi_forward(abi, m);
	uint32_t C = m->sizes[m->nlayers];
	float *probs, *loss, *score = NULL;
	uint8_t *pos = NULL;
	double sum = 0, hits = 0;
	int err = 0;

	out->train_loss = NAN;
	out->val_loss = out->val_acc = out->val_auc = NAN;
	if (fwd == NULL)
		return RBA_E_UNSUPPORTED;
	if (set->n == 0)
		return 0;
	probs = malloc(set->n * C * sizeof(float));
	loss = malloc(set->n * sizeof(float));
	if (probs == NULL || loss == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	err = fwd(m, set->x, set->n, set->y, probs, loss);
	if (err != 0)
		goto out;
	for (size_t i = 0; i < set->n; i++) {
		const float *p = probs + i * C;
		uint32_t best = 0;
		for (uint32_t c = 1; c < C; c++)
			if (p[c] > p[best])
				best = c;
		sum += loss[i];
		hits += best == set->y[i];
	}
	out->val_loss = sum / (double)set->n;
	out->val_acc = hits / (double)set->n;
	if (C == 2 && positive < 2) {
		score = malloc(set->n * sizeof(float));
		pos = malloc(set->n);
		if (score == NULL || pos == NULL) {
			err = RBA_E_NOMEM;
			goto out;
		}
		for (size_t i = 0; i < set->n; i++) {
			score[i] = probs[i * C + positive];
			pos[i] = set->y[i] == positive;
		}
		err = rebuild_auc(score, pos, set->n, &out->val_auc);
	}
out:
	free(probs);
	free(loss);
	free(score);
	free(pos);
	return err;
}

uint32_t
rebuild_tree_depth(const struct rebuild_tree_node *nodes, uint32_t i)
{
	uint32_t l, r;

	if (nodes[i].feature == REBUILD_TREE_LEAF)
		return 0;
	l = rebuild_tree_depth(nodes, nodes[i].left);
	r = rebuild_tree_depth(nodes, nodes[i].right);
	return 1 + (l > r ? l : r);
}
