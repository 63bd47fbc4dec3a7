/*
 * artifact.h - the canonical artifact format (doc/design.md section
 * 5.3), documented byte by byte in rebuild-audit-artifact(5).
 *
 * The bytes are a function of the model alone: little-endian integers
 * and IEEE-754 float32, length-prefixed strings, no padding, timestamps,
 * host names or pointers.  The same weights give the same bytes on every
 * machine, so the SHA-256 of the file is the model's identity.
 *
 * The decoder trusts nothing: it checks the magic and format version,
 * every count and length against the caps and against the bytes that
 * remain (before allocating), the canonical orders (levels and classes
 * strictly ascending), that the feature count matches the first layer,
 * that every float is finite and every scale positive, and that no byte
 * follows the last layer.  A forest (format 2) is checked the same way:
 * bin edges strictly ascending, every tree in canonical preorder (a
 * split's left child is the next node, its right child the node after
 * the left subtree, so no index can point backwards or form a cycle),
 * depth at most REBUILD_GBDT_MAX_DEPTH, every split on an existing
 * feature at one of its edges, covers finite and not negative.
 */
#ifndef RBA_ARTIFACT_H
#define RBA_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "data/encode.h"
#include "train/trainer.h"

#define ARTIFACT_MAGIC "RBAMODEL" /* 8 bytes, no terminator */
#define ARTIFACT_FORMAT 4	/* the newest format this build reads */
#define ARTIFACT_FORMAT_MLP 1	/* networks: format 1, unchanged */
#define ARTIFACT_FORMAT_TREES 2 /* forests: format 2 */
/*
 * Format 3: format 1 (a network) or 2 (a forest), told apart by the
 * kind byte, with a missing-value section after the scales (the tokens,
 * and a network's imputation) and, in a forest, split nodes of type
 * ARTIFACT_TREE_SPLIT_LEFT.  Written only for a model that uses them:
 * a forest with a split whose missing values go left or tokens other
 * than the default (the empty field), a network with an imputation.
 * Every other model keeps format 1 or 2, byte for byte.
 */
#define ARTIFACT_FORMAT_MISSING 3
/*
 * Format 4: a forest of format 3 whose spec may hold native categorical
 * columns (column kind ENCODE_NATIVE, 3: its levels as a one-hot
 * column's, one feature) and whose trees may hold categorical splits
 * (node type ARTIFACT_TREE_SPLIT_CAT: the feature, the count of levels
 * sent left, those level indexes as u32 strictly ascending, each below
 * the column's level count, the right child, the cover).  Written only
 * for a forest with a native column; every other model keeps its
 * format, byte for byte.
 */
#define ARTIFACT_FORMAT_NATIVE 4
#define ARTIFACT_MAX_BYTES (512u << 20) /* bytes in an artifact file */
#define ARTIFACT_KIND_MLP 1
#define ARTIFACT_KIND_TREES 2
#define ARTIFACT_ACT_RELU 1
#define ARTIFACT_OBJ_LOGLOSS 1 /* trees: margins through the softmax */
#define ARTIFACT_TREE_LEAF 0
#define ARTIFACT_TREE_SPLIT 1
#define ARTIFACT_TREE_SPLIT_LEFT 2 /* format 3: missing values go left */
#define ARTIFACT_TREE_SPLIT_CAT 3  /* format 4: a level set goes left */
#define ARTIFACT_IMPUTE_NONE 0
#define ARTIFACT_IMPUTE_VALUES 1
/* nodes in one tree: a full tree of REBUILD_GBDT_MAX_DEPTH levels */
#define ARTIFACT_MAX_TREE_NODES ((2u << REBUILD_GBDT_MAX_DEPTH) - 1)

struct pins;
struct artifact {
	uint32_t abi; /* trainer ABI that produced the weights */
	struct encode_spec spec;
	struct rebuild_model model;
	/*
	 * An exec version's artifact (exec/exec.h, exec_artifact_open):
	 * bytes this tool does not decode, scored by its pins' score
	 * command; spec is the pins' encoding of the snapshot (columns and
	 * classes), model is empty and abi 0.  Borrowed: the pins and the
	 * bytes outlive the artifact.  NULL for every artifact of ours.
	 */
	const struct pins *exec_pins;
	const uint8_t *exec_bytes;
	size_t exec_len;
	/*
	 * An XGBoost model's places in its file (model/xgboost.h), so a
	 * message names the file's tree and node: xgb_tree[t] the index in
	 * trees[] of the forest's tree t, xgb_node[i] the index in its
	 * tree's arrays of forest node i.  Owned (artifact_release); NULL
	 * for every artifact of ours.
	 */
	uint32_t *xgb_tree;
	uint32_t *xgb_node;
};

/* Frees everything a decode or a training left in a. */
void artifact_release(struct artifact *a);

/*
 * Appends the canonical bytes of a.  0, RBA_E_NOMEM, RBA_E_RANGE when a
 * is inconsistent (feature count, class count, sizes), or
 * RBA_E_UNSUPPORTED for a model this format cannot hold (an XGBoost
 * model, model/xgboost.h: a forest whose rules are not
 * REBUILD_FOREST_OWN, or a spec with missing-value texts).  A forest's
 * categorical split must be on a native column's feature, its levels
 * strictly ascending and below the column's level count (else
 * RBA_E_RANGE).
 */
int artifact_encode(const struct artifact *a, struct rba_buf *out);

/*
 * Decodes n bytes into *out (owned by the caller afterwards; release
 * it).  Errors: RBA_E_CORRUPT (bad magic, truncation, a length or count
 * over a cap or past the end, bad order, non-finite value, trailing
 * bytes: d->reason says which and d->col holds the byte offset + 1),
 * RBA_E_UNSUPPORTED (a newer format version, or a trainer ABI or model
 * kind this build lacks), RBA_E_NOMEM.  On error *out is released.
 */
int artifact_decode(const void *p, size_t n, struct artifact *out,
		    struct rba_detail *d);

/*
 * Reads and decodes a file; *digest (may be NULL) gets the SHA-256 of
 * its bytes.  Errors as artifact_decode, plus RBA_E_LIMIT (over
 * ARTIFACT_MAX_BYTES) and errno; d->file is the path.
 */
int artifact_load(const char *path, struct artifact *out,
		  struct rba_digest *digest, struct rba_detail *d);

/*
 * Scores n cases given as raw features (n x nfeatures, as encode_table
 * makes them): the artifact's own standardization, then its ABI's
 * forward pass (trees: through the sparse scorer, bit for bit the same;
 * an XGBoost model's forest by XGBoost's rules, model/xgbtree.h, NaN
 * inputs taking each split's default way).
 * probs gets n x nclasses.  0, RBA_E_UNSUPPORTED or RBA_E_NOMEM.
 */
int artifact_score(const struct artifact *a, const float *raw, size_t n,
		   float *probs);

#endif
