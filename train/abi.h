/*
 * abi.h - the arithmetic of each trainer ABI, as the registry in
 * trainer.c sees it.  Not for other modules: they go through trainer.h.
 *
 * ABI 1 (abi1.c; abi1_sparse.c for sparse scoring): float32 everywhere,
 * REBUILD_BLOCK_ROWS-row gradient blocks reduced left to right, the
 * strict kernels of kernel_strict.c, fm_expf/fm_logf, keyed streams of
 * rng.c.  Frozen: a change to any of
 * those files that moves a bit belongs to a new abiN.c with its own
 * copies.  ABI 1's model kind gbdt is gbdt1.c (fm_expf/fm_logf, keyed
 * streams, the softmax of gbdt1.h), frozen the same way; its sparse
 * scorer, gbdt1_sparse.c, may change how it finds the leaves, never a
 * bit of what it returns.
 */
#ifndef RBA_ABI_H
#define RBA_ABI_H

#include "train/trainer.h"

struct kernel_ops;

/*
 * The head of every ABI's sparse scorer (rebuild_sparse_new): an ABI's
 * own struct starts with it, and rebuild_sparse_score and _free call
 * through it.
 */
struct rebuild_sparse {
	void (*score)(struct rebuild_sparse *sp, const float *tx,
		      const uint32_t *row, size_t nterms, size_t ncases,
		      float *probs);
	void (*free)(struct rebuild_sparse *sp);
};

struct abi_impl {
	uint32_t abi;
	const char *summary;
	int (*train)(const struct pins *p, size_t nfeat, uint32_t nclasses,
		     uint32_t positive, const struct rebuild_set *train,
		     const struct rebuild_set *val, struct rebuild_model *out,
		     struct rebuild_report *rep,
		     const struct rebuild_progress *progress,
		     struct rba_detail *d);
	/*
	 * Eval-mode forward of n rows: probs (n x classes) and, when y is
	 * given, loss[i] = cross-entropy of row i.  0 or RBA_E_NOMEM.
	 */
	int (*forward)(const struct rebuild_model *m, const float *x,
		       size_t n, const uint32_t *y, float *probs,
		       float *loss);
	/*
	 * Gradient of the mean cross-entropy over n rows (eval mode: no
	 * dropout) by the training code path, into grad (allocated like
	 * m); *loss gets the mean loss.  0 or RBA_E_NOMEM.
	 */
	int (*gradient)(const struct rebuild_model *m, const float *x,
			const uint32_t *y, size_t n, struct rebuild_model *grad,
			double *loss);
	/*
	 * The sparse scorer of m (rebuild_sparse_new in trainer.h), giving
	 * forward's probabilities bit for bit.  Every ABI provides one: a
	 * scorer of a new ABI that fell back to the old arithmetic would
	 * score with the wrong bits.  m is copied.  0 or RBA_E_NOMEM.
	 */
	int (*sparse_new)(const struct rebuild_model *m,
			  struct rebuild_sparse **out);
};

/*
 * The arithmetic of model kind gbdt in one ABI.  forward and sparse_new
 * as in struct abi_impl, for a forest; there is no gradient.
 */
struct abi_gbdt_impl {
	const char *summary;
	int (*train)(const struct pins *p, size_t nfeat, uint32_t nclasses,
		     uint32_t positive, const struct rebuild_set *train,
		     const struct rebuild_set *val, struct rebuild_model *out,
		     struct rebuild_report *rep,
		     const struct rebuild_progress *progress,
		     struct rba_detail *d);
	int (*forward)(const struct rebuild_model *m, const float *x,
		       size_t n, const uint32_t *y, float *probs,
		       float *loss);
	int (*sparse_new)(const struct rebuild_model *m,
			  struct rebuild_sparse **out);
};

extern const struct abi_impl abi1_impl;
/* ABI 2's networks (abi2.c): ABI 1 with fused multiply-adds. */
extern const struct abi_impl abi2_impl;
/* ABI 1's trees (gbdt1.c, gbdt1_sparse.c): frozen like abi1.c from the day
 * they came. */
extern const struct abi_gbdt_impl gbdt1_impl;

/*
 * ABI 1's softmax of rows x C logits z (abi1.c), for abi1_sparse.c: p
 * (rows x C, may be z) gets the probabilities, mx and sum (rows each)
 * each row's largest logit and the sum of its e^(z - max) in class order.
 */
void abi1_softmax(const struct kernel_ops *k, const float *z, size_t rows,
		  uint32_t C, float *p, float *mx, float *sum);

/* ABI 1's sparse scorer (abi1_sparse.c). */
int abi1_sparse_new(const struct rebuild_model *m, struct rebuild_sparse **out);

/*
 * ABI 1's block scorer (abi1_block.c): abi1_sparse_new's scorer, bit for
 * bit, with the softmax run once per block of cases.  What
 * rebuild_sparse_new gives for an ABI 1 network.
 */
int abi1_block_new(const struct rebuild_model *m, struct rebuild_sparse **out);

#endif
