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
 *
 * ABI 2 (abi2.c, kernel_fma.c with kernel_fma_tmpl.h): ABI 1's recipe
 * (RNG purposes and indices, initialization, REBUILD_BLOCK_ROWS-row
 * blocks reduced left to right, the softmax and loss, fm_expf/fm_logf,
 * AdamW and SGD with ABI 1's elementwise kernels) with exactly these
 * changes:
 *   1. Fused multiply-adds, and only these: every multiply-accumulate
 *      of the dense layers' three dot products is one fma, a * b + c
 *      rounded once, in ABI 1's order:
 *        linear   y[r][j] = fma(x[r][k], w[k][j], y[r][j]) for k = 0, 1,
 *                 ..., in - 1, starting from b[j];
 *        back_dx  dx[r][k] = fma(dy[r][j], wt[j][k], dx[r][k]) for j = 0,
 *                 1, ..., out - 1, starting from 0;
 *        back_dw  dw[k][j] = fma(x[r][k], dy[r][j], dw[k][j]) for r = 0,
 *                 1, ..., rows - 1, starting from 0.
 *      The bias gradients db stay plain sums; the optimizer, softmax,
 *      exp, log and every other operation are unfused (the build keeps
 *      -ffp-contract=off).  An fma is correctly rounded, so the paths
 *      agree bit for bit: the FMA instructions of AVX-512 and AVX2+FMA
 *      on x86-64 and of arm64, and on an x86-64 CPU without them
 *      kernel_fmaf_soft (IEEE double operations: TwoSum, then rounding
 *      to odd).  RBA_STRICT_ISA=base forces that path on x86-64.
 *   2. Dropout draws 16 bits per unit, made 32 units at a time from the
 *      keyed stream of (step, layer) (RNG_DROPOUT, as ABI 1): unit u of
 *      the batch takes half of word rng_bits32(key, 16 (u / 32) +
 *      u mod 16), the low half when u mod 32 < 16, the high half
 *      otherwise (kernel_drop16); it is dropped when its draw is below
 *      floor(dropout x 2^16).  (A dropout below 2^-16 drops nothing.)
 *   3. The sparse scorer is the dense forward pass, fed each run of at
 *      most 1,024 cases made dense: its bits by construction.
 * Fast mode is OpenBLAS's products (their bits are promised nowhere)
 * with ABI 2's dropout draws.  The evaluation contract's metric with
 * dropout on (evaluate.c) keeps its own arithmetic under every ABI.
 * Model kind gbdt under ABI 2 is gbdt1.c unchanged: the trees have no
 * dot product to fuse (their sums are exact integer sums), so a forest
 * trained with trainer_abi: 2 holds ABI 1's trees and differs from
 * ABI 1's artifact only by the ABI it records.
 * REBUILD_ABI_CURRENT, the ABI of pins that name none, stays 1 until
 * ABI 2 has held on every path make check and make check-arm64 try.
 */
#ifndef RBA_ABI_H
#define RBA_ABI_H

#include "train/trainer.h"

struct kernel_ops;

/*
 * count x size bytes, zeroed, from the start of a 64-byte line, so that
 * no vector a kernel loads from them straddles two lines; released with
 * free().  NULL when out of memory or when the product overflows.
 */
void *abi_zalloc64(size_t count, size_t size);

/*
 * The head of every ABI's sparse scorer (rebuild_sparse_new): an ABI's
 * own struct starts with it, and rebuild_sparse_score and _free call
 * through it.
 */
struct rebuild_sparse {
	void (*score)(struct rebuild_sparse *sp, const float *tx,
		      const uint32_t *row, size_t nterms, size_t ncases,
		      float *probs);
	/* NULL where the scorer takes no columns */
	void (*score_cols)(struct rebuild_sparse *sp, const float *x,
			   size_t ld, size_t ncases, float *probs);
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
