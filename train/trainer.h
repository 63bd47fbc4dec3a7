/*
 * trainer.h - the MLP trainer and the trainer ABI registry
 * (doc/design.md section 7).
 *
 * A trainer ABI is an integer naming one generation of the arithmetic:
 * the RNG streams, the initialization, the block size and reduction tree,
 * the kernels' summation order, exp/log, the loss and the optimizer
 * updates.  Every ABI ever released stays selectable: a version pinned at
 * ABI 1 is rebuilt with ABI 1 arithmetic whatever the current ABI is.
 * Any change that moves one bit of any artifact is a new ABI, added as a
 * new row of the registry beside the old ones (see trainer.c).
 *
 * Model: input -> [linear -> ReLU -> dropout] x hidden -> linear ->
 * softmax.  hidden: [] is multinomial logistic regression.  Weights and
 * all arithmetic are float32 (accumulation included); only the reported
 * metrics (losses averaged over examples, AUC) are summed in double.
 *
 * Strict mode (ABI 1): a mini-batch is cut into blocks of
 * REBUILD_BLOCK_ROWS examples; each block's forward and backward pass is
 * independent, its gradient is one fixed-order sum over its rows, and the
 * blocks' gradients are added left to right in block order.  Threads only
 * decide which thread computes which block, so the thread count never
 * changes a bit.  Fast mode uses the whole batch as one block on OpenBLAS.
 * Validation metrics and scoring always use the strict kernels.
 *
 * ABI 1 recipe: weights and biases uniform in +-1/sqrt(fan_in) (keyed by
 * seed and layer); each epoch a keyed Fisher-Yates shuffle of the training
 * rows; the last batch of an epoch may be short; mean cross-entropy, so
 * the output gradient is (p - onehot) / batch rows; inverted dropout on
 * hidden layers, a unit dropped when its 24-bit keyed draw is below
 * floor(dropout 2^24), kept units scaled by 1 / (1 - dropout); AdamW as
 * PyTorch (decoupled decay w (1 - lr wd) on every parameter, biases
 * included, bias-corrected moments, eps added to the corrected root) or
 * SGD with momentum and coupled weight decay (g + wd w).
 *
 * Model kind gbdt (gbdt1.c, part of ABI 1 since the kind was added):
 * histogram gradient boosting on the same log loss; its recipe is at
 * the top of gbdt1.c and in rebuild-audit-pins(5).  An ABI names the
 * arithmetic of every model kind it knows: adding a kind to an ABI
 * moves no bit of any artifact an older build could make, changing one
 * does, and is a new ABI.
 */
#ifndef RBA_TRAINER_H
#define RBA_TRAINER_H

#include <stddef.h>
#include <stdint.h>

#include "common/rba.h"
#include "policy/policy.h"

#define REBUILD_ABI_CURRENT 1 /* the default: pins that name no ABI */
#define REBUILD_ABI_MAX 2     /* the newest this build can train */
#define REBUILD_MAX_LAYERS (PINS_MAX_LAYERS + 1) /* weight layers */
#define REBUILD_MAX_WIDTH 4096	   /* units in one layer, features too */
#define REBUILD_MAX_CLASSES 1024
#define REBUILD_MAX_PARAMS (1u << 26) /* weights and biases in a model */
#define REBUILD_MAX_EXAMPLES (1u << 26)
#define REBUILD_MAX_THREADS 64
#define REBUILD_BLOCK_ROWS 32 /* ABI 1: rows per gradient block */

/* The ABI new trainings use when their pins name none (trainer_abi). */
uint32_t rebuild_abi_current(void);
/* The newest ABI this build knows; it knows every ABI from 1 to it. */
uint32_t rebuild_abi_max(void);
/* 1 when this build can train and score with abi. */
int rebuild_abi_supported(uint32_t abi);
/* A one-line description of abi ("" when unknown).  Static string. */
const char *rebuild_abi_describe(uint32_t abi);

/* Gradient-boosted trees (model kind gbdt; gbdt1.c). */
#define REBUILD_GBDT_MAX_TREES (1u << 20) /* trees in a forest */
#define REBUILD_GBDT_MAX_NODES (1u << 26) /* nodes in a forest */
#define REBUILD_GBDT_MAX_DEPTH PINS_MAX_DEPTH
#define REBUILD_GBDT_MAX_BINS PINS_MAX_BINS
#define REBUILD_TREE_LEAF UINT32_MAX /* feature of a leaf */

/* mlp is 0 so that a zeroed model is the kind every older caller built. */
enum rebuild_kind { REBUILD_KIND_MLP = 0, REBUILD_KIND_GBDT = 1 };

/*
 * One node of a tree.  A split sends a case left when its input
 * feature is below threshold (x < threshold; threshold is
 * edges[feature][bin] of the forest), right otherwise.  Children are
 * indexes into the forest's node array; in a tree's nodes the order is
 * preorder, so left is always the node after its parent.  cover is the
 * sum of the training hessians that reached the node (TreeSHAP weights
 * the two sides of a split by it); value is a leaf's contribution to its
 * group's margin, learning rate included (0 at splits).
 *
 * A missing input (NaN) is never below a threshold: it goes left when
 * flags holds REBUILD_TREE_DEFAULT_LEFT, right otherwise (flags 0, the
 * rule of every forest made before missing values were taken).
 */
#define REBUILD_TREE_DEFAULT_LEFT 1u
/*
 * A categorical split (flags REBUILD_TREE_CATEGORICAL, data.native):
 * the input is a level index (0, 1, 2, ... of a native categorical
 * column, stored as a float, exact below 2^24); the split sends left the
 * ncats levels cats[0 .. ncats), strictly ascending, and every other
 * value right: a level outside the set, a level unseen in training, a
 * value that is no level index at all (negative, not a whole number,
 * NaN).  threshold and bin are 0 and REBUILD_TREE_DEFAULT_LEFT is never
 * set.  cats points into the forest's cats array (rebuild_forest).
 */
#define REBUILD_TREE_CATEGORICAL 2u
#define REBUILD_TREE_MAX_LEVEL (1u << 24) /* level indexes below: exact */

struct rebuild_tree_node {
	uint32_t feature; /* REBUILD_TREE_LEAF for a leaf */
	uint32_t bin;	  /* edge index; 0 at a leaf */
	uint32_t left, right; /* 0 at a leaf */
	float threshold;
	float value;
	float cover;
	uint32_t flags; /* REBUILD_TREE_DEFAULT_LEFT, _CATEGORICAL; 0 at a leaf */
	uint32_t ncats;	     /* categorical: levels sent left; else 0 */
	const uint32_t *cats; /* categorical: ascending; else NULL */
};

/* Whether level index v is one of categorical split n's left levels. */
static inline int
rebuild_tree_cat_left(const struct rebuild_tree_node *n, float v)
{
	uint32_t k, lo = 0, hi = n->ncats;

	/* (a NaN fails the first test) */
	if (!(v >= 0.0f && v < (float)REBUILD_TREE_MAX_LEVEL))
		return 0;
	k = (uint32_t)v;
	if ((float)k != v)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (n->cats[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->ncats && n->cats[lo] == k;
}

/* Whether input value v goes to split n's left child. */
static inline int
rebuild_tree_goes_left(const struct rebuild_tree_node *n, float v)
{
	if (n->flags & REBUILD_TREE_CATEGORICAL)
		return rebuild_tree_cat_left(n, v);
	/* (a NaN is never below: it is looked at only when not) */
	return v < n->threshold ||
	       (v != v && (n->flags & REBUILD_TREE_DEFAULT_LEFT) != 0);
}

/*
 * A forest: ngroups margins (1 for two classes: the logit of class 1
 * against class 0; C for C > 2 classes: softmax logits), each starting
 * at base[g]; tree t adds to group t % ngroups.  Tree t's nodes are
 * nodes[tree_start[t] .. tree_start[t + 1]), its root first.  The bin
 * edges of feature f are edges[edge_start[f] .. edge_start[f + 1]),
 * strictly ascending: a feature with no edges is never split on.
 */
/* The depth of the subtree at node i (a leaf: 0). */
uint32_t rebuild_tree_depth(const struct rebuild_tree_node *nodes, uint32_t i);

/*
 * Whose rules a forest follows (rules): REBUILD_FOREST_OWN, the trainer
 * ABI's (margins through its softmax; 0, so every forest our trainer
 * builds is one); or XGBoost 1.7's CPU predictor (model/xgbtree.h):
 * REBUILD_FOREST_XGB_SIGMOID (binary:logistic, reg:logistic: one group,
 * probability of class 1 by XGBoost's sigmoid) or
 * REBUILD_FOREST_XGB_SOFTMAX (multi:softprob: one group per class,
 * XGBoost's softmax).  Such a forest is never written as an artifact.
 */
#define REBUILD_FOREST_OWN 0u
#define REBUILD_FOREST_XGB_SIGMOID 1u
#define REBUILD_FOREST_XGB_SOFTMAX 2u

struct rebuild_forest {
	uint32_t nfeatures, nclasses, ngroups;
	uint32_t rules; /* REBUILD_FOREST_*; 0 for our own */
	float *base;	       /* ngroups */
	uint32_t *edge_start;  /* nfeatures + 1 */
	float *edges;
	uint32_t ntrees;
	uint32_t *tree_start;  /* ntrees + 1 */
	struct rebuild_tree_node *nodes;
	/* the level sets of the categorical splits, one after the other
	 * (NULL and 0 in a forest without one); freed with the forest */
	uint32_t *cats;
	size_t ncats;
};

/* Whether forest f has a categorical split. */
int rebuild_forest_has_cats(const struct rebuild_forest *f);

/*
 * A trained model.  kind REBUILD_KIND_MLP, a network: layer l maps
 * sizes[l] inputs to sizes[l + 1] outputs: w[l] is sizes[l] x
 * sizes[l + 1] row-major (W[in][out]), b[l] has sizes[l + 1] entries.
 * sizes[nlayers] is the number of classes.  kind REBUILD_KIND_GBDT, a
 * forest: nlayers is 1, sizes[0] the features and sizes[1] the classes
 * (so every caller finds both where it does for a network), w and b are
 * NULL.
 */
struct rebuild_model {
	uint32_t nlayers;
	uint32_t sizes[REBUILD_MAX_LAYERS + 1];
	float *w[REBUILD_MAX_LAYERS];
	float *b[REBUILD_MAX_LAYERS];
	enum rebuild_kind kind;
	struct rebuild_forest forest; /* kind gbdt */
};

/*
 * Allocates a zeroed forest of kind gbdt in m: nfeatures 1..
 * REBUILD_MAX_WIDTH, nclasses 2..REBUILD_MAX_CLASSES, nedges bin edges
 * in all, ntrees 1..REBUILD_GBDT_MAX_TREES (a multiple of the groups),
 * nnodes 1..REBUILD_GBDT_MAX_NODES.  0, RBA_E_RANGE or RBA_E_NOMEM (m
 * is then released).
 */
int rebuild_forest_alloc(struct rebuild_model *m, uint32_t nfeatures,
			 uint32_t nclasses, size_t nedges, uint32_t ntrees,
			 size_t nnodes);

/*
 * Allocates zeroed weights for nlayers (1..REBUILD_MAX_LAYERS) with the
 * given nlayers + 1 sizes (each 1..REBUILD_MAX_WIDTH, at most
 * REBUILD_MAX_PARAMS in all).  0, RBA_E_RANGE or RBA_E_NOMEM (m is then
 * released).
 */
int rebuild_model_alloc(struct rebuild_model *m, uint32_t nlayers,
			const uint32_t *sizes);
/* Frees the weights or the forest; safe on a zeroed or released model. */
void rebuild_model_release(struct rebuild_model *m);
/* Number of weights and biases (a forest: its nodes). */
size_t rebuild_model_params(const struct rebuild_model *m);

/*
 * Encoded, standardized examples of one split.  x is n x nfeat
 * row-major; y holds class indices below nclasses.  Borrowed.
 */
struct rebuild_set {
	size_t n;
	const float *x;
	const uint32_t *y;
	/*
	 * Per feature: the level count of a native categorical column's
	 * feature (its values level indexes; trees split it by level sets,
	 * REBUILD_TREE_CATEGORICAL), 0 for any other; NULL when there is
	 * none (every set made before native columns existed).
	 */
	const uint32_t *native;
};

struct rebuild_epoch {
	double train_loss; /* mean cross-entropy over the epoch's batches */
	double val_loss;   /* mean cross-entropy, eval mode */
	double val_acc;
	double val_auc; /* binary models only; NaN otherwise */
};

struct rebuild_report {
	uint32_t epochs;
	struct rebuild_epoch *curve; /* epochs entries, malloc'd */
	struct rebuild_epoch final;  /* the last epoch */
	uint64_t examples;	     /* training examples processed */
	double train_seconds;	     /* wall time of the training loop */
	double examples_per_second;
	const char *kernels; /* "strict" or "fast" */
};

void rebuild_report_release(struct rebuild_report *r);

/*
 * Training progress: epoch is called after each epoch (done 1..total),
 * from the thread that called rebuild_train, before the next epoch
 * starts.  It must not print from a module below cli/: it is the
 * caller's hook (cli/ prints).  It sees no weights and cannot change a
 * bit of the result.
 */
struct rebuild_progress {
	void (*epoch)(void *ctx, uint32_t done, uint32_t total);
	void *ctx;
};

/*
 * Trains a model with ABI abi (0: current) on train, evaluating on val
 * after every epoch (val.n may be 0: metrics are then NaN).  The model
 * kind is p->model.kind: for gbdt an "epoch" is a boosting round (its
 * trees), and rep->examples counts training rows times rounds.  Hyper-
 * parameters come from p->model, p->train and p->determinism; nfeat and
 * nclasses (>= 2) size the network; positive (< nclasses) is the class
 * whose probability is the score of a binary model (AUC), ignored when
 * nclasses != 2.  On success *out owns the weights (release it) and *rep
 * the curves (rep may be NULL).  progress (NULL allowed) hears of each
 * epoch.
 *
 * Errors: RBA_E_UNSUPPORTED (unknown abi), RBA_E_RANGE (sizes over the
 * caps, an empty training set, a class index out of range),
 * RBA_E_NUMERIC (a loss or weight became NaN or infinite), RBA_E_NOMEM,
 * an errno from pthread_create; d says which.
 */
int rebuild_train(const struct pins *p, uint32_t abi, size_t nfeat,
		  uint32_t nclasses, uint32_t positive,
		  const struct rebuild_set *train, const struct rebuild_set *val,
		  struct rebuild_model *out, struct rebuild_report *rep,
		  const struct rebuild_progress *progress,
		  struct rba_detail *d);

/*
 * Class probabilities of n examples (x: n x sizes[0]) in eval mode,
 * with abi's strict arithmetic: probs gets n x sizes[nlayers] floats.
 * 0, RBA_E_UNSUPPORTED or RBA_E_NOMEM.
 */
int rebuild_predict(uint32_t abi, const struct rebuild_model *m,
		    const float *x, size_t n, float *probs);

/*
 * Sparse scoring: class probabilities of cases given only their inputs
 * that are not zero, bit for bit what rebuild_predict(abi, m, ...) gives
 * for the dense rows, faster when most inputs are zero (one-hot
 * features).  Every ABI provides it.
 *
 * rebuild_sparse_new prepares a scorer for abi's arithmetic from a copy
 * of m's weights (m is not used afterwards).  0, RBA_E_UNSUPPORTED (abi
 * 0 or unknown) or RBA_E_NOMEM; *out is NULL on error.  The scorer holds
 * scratch memory: one thread at a time.
 */
struct rebuild_sparse;
int rebuild_sparse_new(uint32_t abi, const struct rebuild_model *m,
		       struct rebuild_sparse **out);
/* NULL allowed. */
void rebuild_sparse_free(struct rebuild_sparse *sp);

/*
 * Scores ncases cases into probs (ncases x sizes[nlayers] floats).  Case
 * i is nterms terms: tx[i * nterms + t] is the value of input
 * row[i * nterms + t], rows strictly ascending and below sizes[0];
 * every input not listed is zero.  Cannot fail.
 */
void rebuild_sparse_score(struct rebuild_sparse *sp, const float *tx,
			  const uint32_t *row, size_t nterms, size_t ncases,
			  float *probs);

/*
 * Whether sp also scores cases given every input by columns
 * (rebuild_sparse_score_cols): ABI 1's networks (their first layer
 * reads four cases' inputs side by side) and its forests without
 * native categorical splits (their walks read a block feature by
 * feature).  0 for the others: a caller lists their terms instead.
 */
int rebuild_sparse_takes_cols(const struct rebuild_sparse *sp);

/*
 * Scores ncases cases (ncases <= ld) into probs as rebuild_sparse_score
 * would, given every input: x[f * ld + i] is input f of case i, for f
 * below sizes[0].  The same bits as rebuild_sparse_score of the same
 * values, zeros listed or not.  Only where rebuild_sparse_takes_cols(sp).
 */
void rebuild_sparse_score_cols(struct rebuild_sparse *sp, const float *x,
			       size_t ld, size_t ncases, float *probs);

/*
 * The validation metrics the trainer reports, for any set: mean
 * cross-entropy (log-sum-exp of the logits minus the true logit, with the
 * tool's own exp and log, summed in double in example order), accuracy
 * (the first maximal class) and, when sizes[nlayers] is 2, the AUC of the
 * probability of class positive (ties count one half; NaN when one class
 * is absent).  All NaN when set->n is 0.  0, RBA_E_UNSUPPORTED or
 * RBA_E_NOMEM.
 */
int rebuild_eval(uint32_t abi, const struct rebuild_model *m,
		 const struct rebuild_set *set, uint32_t positive,
		 struct rebuild_epoch *out);

/*
 * The gradient of the mean cross-entropy of set with respect to every
 * weight and bias, computed by abi's training arithmetic (blocks,
 * kernels and reduction of a training step) with dropout off, in a
 * single batch of all rows.  grad is allocated here (release it); *loss
 * gets the mean loss.  For tests and diagnostics.  0, RBA_E_UNSUPPORTED
 * (also for a forest, which has no weights), RBA_E_RANGE (set->n is 0 or over REBUILD_MAX_EXAMPLES) or RBA_E_NOMEM.
 */
int rebuild_gradient(uint32_t abi, const struct rebuild_model *m,
		     const struct rebuild_set *set, struct rebuild_model *grad,
		     double *loss);

/*
 * AUC of scores against labels (1 positive, 0 negative) by the rank-sum
 * formula with average ranks for ties; NaN without both kinds.
 * 0 or RBA_E_NOMEM.
 */
int rebuild_auc(const float *score, const uint8_t *pos, size_t n, double *auc);

#endif
