/*
 * abi.h - the arithmetic of each trainer ABI, as the registry in
 * trainer.c sees it.  Not for other modules: they go through trainer.h.
 *
 * ABI 1 (abi1.c): float32 everywhere, REBUILD_BLOCK_ROWS-row gradient
 * blocks reduced left to right, the strict kernels of kernel_strict.c,
 * fm_expf/fm_logf, keyed streams of rng.c.  Frozen: a change to any of
 * those files that moves a bit belongs to a new abiN.c with its own
 * copies.
 */
#ifndef RBA_ABI_H
#define RBA_ABI_H

#include "rebuild/trainer.h"

struct abi_impl {
	uint32_t abi;
	const char *summary;
	int (*train)(const struct pins *p, size_t nfeat, uint32_t nclasses,
		     uint32_t positive, const struct rebuild_set *train,
		     const struct rebuild_set *val, struct rebuild_model *out,
		     struct rebuild_report *rep, struct rba_detail *d);
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
};

extern const struct abi_impl abi1_impl;

#endif
