/*
 * gbdt1.h - what ABI 1's trees share between their trainer (gbdt1.c)
 * and their sparse scorer (gbdt1_sparse.c); private to the two.
 *
 * Frozen with gbdt1.c (see abi.h): the softmax below decides the bits of
 * every probability either file computes.
 */
#ifndef RBA_GBDT1_H
#define RBA_GBDT1_H

#include <stddef.h>
#include <stdint.h>

#include "rebuild/abi.h"
#include "rebuild/kernel.h"

/* GCC vector types, GB_VW floats or ints, unaligned loads, bit selects. */
#define GB_VW 4
typedef float gb_vf __attribute__((vector_size(16), aligned(4), may_alias));
typedef int32_t gb_vi __attribute__((vector_size(16), aligned(4), may_alias));
#define GB_SEL(m, a, b) ((gb_vf)(((gb_vi)(a) & (m)) | ((gb_vi)(b) & ~(m))))
#define GB_LD(T, p) (*(const T *)(const void *)(p))

/*
 * The softmax of a case's K margins (K 1: logits 0 and mg[0]): p gets C
 * probabilities; the return value is log-sum-exp minus the logit of y
 * (the loss) when y < C.
 */
float gbdt1_softmax(const float *mg, uint32_t K, uint32_t C, uint32_t y,
		    float *p);

/*
 * gbdt1_softmax of n cases of two classes (K 1), bit for bit: p gets
 * n x 2 probabilities; t is n floats of scratch, and with y (not NULL)
 * holds the n losses on return.
 */
void gbdt1_softmax2(const struct kernel_ops *k, const float *mg, size_t n,
		    const uint32_t *y, float *p, float *t);

/* The sparse scorer of a forest (gbdt1_sparse.c), abi_gbdt_impl's. */
int gbdt1_sparse_new(const struct rebuild_model *m,
		     struct rebuild_sparse **out);

#endif
