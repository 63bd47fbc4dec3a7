/*
 * treewalk.h - complete trees of depth 1 .. TW_MAXDEPTH walked a vector
 * of cases at a time (AVX2: 8, AVX-512F: 16), for the forests' block
 * scorers: ABI 1's (train/gbdt1_sparse.c) and XGBoost's
 * (model/xgbtree.c).
 *
 * A block is TW_BLOCK cases whose inputs are order keys held
 * feature-major: the key of case j in input row r is at xs[r * TW_BLOCK
 * + j].  At a split with key below b, a case whose input key is k goes
 * right exactly when b < k (unsigned); each scorer chooses its keys, and
 * the rows a split reads, so that this is its rule.  A walk reads the
 * keys with their top bit flipped (tw_block_keys, and the trees' keys as
 * tw_tree_fill lays them out), so that the signed compare every vector
 * ISA has decides as the unsigned one.  A walk takes each
 * case from the root to its leaf by that rule, step by step as a scalar
 * walk of the same keys goes, and adds the leaf to the case's margin
 * with one float addition: called tree by tree, each margin gets the
 * same sum, in the same order, bit for bit.
 *
 * How a vector finds its nodes changes nothing of that: the top three
 * levels, where a case's node is one of at most four, load those nodes'
 * input rows whole and select per lane; below, the node's key and row
 * come from the tree held in registers (permutes) and the input from
 * one gather, and the leaf from a gather.  AVX2 has other ways to some
 * of these (tw_ways), and a forest is walked the one way that was
 * fastest on this CPU (tw_vectors).  Every case of the block walks, the
 * spare ones of a short block too: their keys must be in xs (any value)
 * and their margins are written.
 */
#ifndef RBA_TREEWALK_H
#define RBA_TREEWALK_H

#include <stddef.h>
#include <stdint.h>

#include "train/trainer.h"

#define TW_BLOCK 80    /* cases of a block: the stride of an input row */
#define TW_SIGN 0x80000000u /* a walk's keys: a scorer's, this bit flipped */
#define TW_MAXDEPTH 6  /* the deepest tree a walk takes */

/*
 * A tree as a walk reads it, complete at depth vd = max(d, 3): position
 * p (1 .. 2^vd - 1; children 2p and 2p + 1) has key below key[p] (its
 * top bit flipped) and reads input row offset off[p] (the row times
 * TW_BLOCK); the leaf of position c of depth vd (2^vd .. 2^(vd+1) - 1) is
 * leaf[c & 63].  A leaf above depth vd is repeated into the positions
 * below it.  Kept 64-byte aligned (its size is a multiple of 64).
 */
struct tw_tree {
	uint32_t key[64];
	uint32_t off[64];
	float leaf[64];
	uint64_t pair[32]; /* positions 32 .. 63: key | (uint64_t)off << 32 */
};

/*
 * Walks every case of block xs (as tw_block_keys makes it) through tree
 * v (of depth vd there, 3 .. TW_MAXDEPTH): mg[j * K] += the leaf of case
 * j, for j < TW_BLOCK.
 */
typedef void tw_walk_fn(const struct tw_tree *v, uint32_t vd,
			const uint32_t *xs, float *mg, size_t K);

/* A block's n keys xs as a walk reads them: xv[i] = xs[i] ^ TW_SIGN. */
void tw_block_keys(const uint32_t *restrict xs, size_t n,
		   uint32_t *restrict xv);

/*
 * The ways the strict path kernel_strict_level picks (RBA_STRICT_ISA
 * narrows it, for tests) has of walking, into ways[], and their names
 * (the values RBA_TREE_WALK takes) into names[]: their count, 0 where
 * there is none (base, and every machine but x86-64: the scorer then
 * walks its trees itself).  Every way takes the same steps and adds the
 * same leaves; they differ in how a vector finds what its lanes read.
 * AVX2 has five: "gather" (each input below depth 3, and each leaf, by
 * a gather), "leaves" (the leaves by eight permutes and selects
 * instead), "rows" (the inputs at depth 3 from its eight rows loaded
 * whole, selected per lane), "select" (both: two gathers a tree
 * instead of four) and "pairs" (as "gather", but the keys and rows at
 * depth 5 by two gathers of (key, row) pairs instead of eight permutes
 * and six selects).  AVX-512 has one, "gather".
 */
#define TW_MAXWAYS 5
size_t tw_ways(tw_walk_fn *ways[TW_MAXWAYS], const char *names[TW_MAXWAYS]);

/* The first of tw_ways, or NULL where there is none. */
tw_walk_fn *tw_walk_pick(void);

/*
 * A forest's tree as a block scorer holds it: complete (full) when its
 * depth is at most the scorer's full depth, its positions' words from
 * fnode[at] on (position p at fnode[at + p]) and the leaf of position c
 * at fval[vat + c]; else walked node by node from its root, node at.
 * With vdepth > 0 it is walked by vectors instead, its copy the vt-th.
 */
struct tw_shape {
	uint32_t depth;
	int full;
	size_t at, vat;
	uint32_t vdepth;
	size_t vt;
};

/*
 * The shapes of forest f's trees (tr: f->ntrees) for complete layouts up
 * to depth full: *nfull words of fnode and *nval leaf values in all (the
 * first 2^full values unused, so that each vat is at least 0).  vdepth
 * 0 (see tw_vectors).
 */
void tw_shapes(const struct rebuild_forest *f, uint32_t full,
	       struct tw_shape *tr, size_t *nfull, size_t *nval);

/*
 * A forest's vector walks: the way of the strict path its trees are
 * walked (tw_vectors chooses it), the copies of its complete trees of
 * depth 1 .. TW_MAXDEPTH (64-byte aligned), and room for a block's nx
 * input rows as the walk reads them (xv, tw_block_keys).  walk NULL: no
 * tree is walked by vectors (and tree and xv are NULL).
 */
struct tw_vec {
	tw_walk_fn *walk;
	struct tw_tree *tree;
	uint32_t *xv;
};

/*
 * v for ntrees shapes tr laid out in fnode and fval, blocks of nx input
 * rows: each tree it walks gets its vdepth and vt.  v->walk is the way
 * the environment's RBA_TREE_WALK names, else, where the path has more
 * than one, the one that walked these trees fastest when each was timed
 * in turn here (on 128 of its trees at most: about 0.7 ms).  0
 * or RBA_E_NOMEM (v then holds nothing).
 */
int tw_vectors(struct tw_shape *tr, uint32_t ntrees, const uint64_t *fnode,
	       const float *fval, uint32_t nx, struct tw_vec *v);

/* Frees what v holds. */
void tw_vec_free(struct tw_vec *v);

/*
 * The input rows of forest f's block: its features, then a left copy of
 * each feature a split sends missing values left on (where the scorer
 * makes a missing input's key the lowest).  lrow (f->nfeatures) gets
 * each feature's copy row, or UINT32_MAX; the rows in all are returned.
 */
uint32_t tw_left_rows(const struct rebuild_forest *f, uint32_t *lrow);

/*
 * Lays out in v the complete tree of depth d (1 .. TW_MAXDEPTH) whose
 * position p (1 .. 2^d - 1) is the word fnode[p] = key below << 32 |
 * input offset, with leaf fval[c] at position c (2^d .. 2^(d+1) - 1):
 * the depth vd the walk takes it at.
 */
uint32_t tw_tree_fill(struct tw_tree *v, uint32_t d, const uint64_t *fnode,
		      const float *fval);

#endif
