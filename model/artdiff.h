/*
 * artdiff.h - where two artifacts (model/artifact.h) differ, for
 * `rebuild-audit diff`: the role diffoscope plays for packages, for
 * models.
 *
 * Networks: the model's view of its inputs (columns, levels, classes),
 * the standardization (mean and scale) and every layer's weights and
 * biases, each tensor with the count of values whose bits differ, the
 * first such index, the largest difference in units in the last place
 * of binary32 and in absolute value.  Forests: the inputs, the base
 * margins and the bin edges, then tree by tree: how many trees are the
 * same node for node, and the first tree that is not with its first
 * node that differs and what differs there (a leaf against a split, the
 * feature, the threshold, the leaf value).  XGBoost models
 * (model/xgboost.h) are a third kind, compared as forests: their
 * objective (sigmoid or softmax rules), feature names and base margins,
 * then tree by tree, a split's default direction for missing values
 * included; their bin edges, derived from the thresholds, are not
 * compared apart.
 */
#ifndef RBA_ARTDIFF_H
#define RBA_ARTDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "common/rba.h"
#include "model/artifact.h"

/* The kinds that can be compared: ours (a network, a forest) and an
 * XGBoost model's forest, whose rules are XGBoost's. */
enum artdiff_kind { ARTDIFF_NETWORK, ARTDIFF_FOREST, ARTDIFF_XGBOOST };

enum artdiff_kind artdiff_kind(const struct artifact *a);
/* "a network", "a forest", "an XGBoost model". */
const char *artdiff_kind_words(enum artdiff_kind k);

/* One tensor compared (layer 0 for the standardization). */
struct artdiff_tensor {
	char name[48];	   /* "layer 1 weights", "standardization mean" */
	uint32_t rows, cols; /* shape (rows 1 for a vector) */
	size_t count, differ, first; /* first: of the differing, or 0 */
	uint64_t max_ulps;	     /* binary32 units in the last place */
	double max_abs;
	size_t max_at;		     /* the index of the largest ulps */
};

#define ARTDIFF_MAX_TENSORS (2 * REBUILD_MAX_LAYERS + 4)

struct artdiff {
	enum rebuild_kind kind;
	int xgboost;	   /* both are XGBoost models (artdiff_kind) */
	int same;	   /* every compared value bit for bit (the bytes
			    * may still differ only if the format does) */
	/* The model's inputs, classes and shapes: "" when the same, else
	 * the first difference in words; a shape difference leaves the
	 * tensors that cannot be lined up out. */
	char spec[256];
	struct artdiff_tensor t[ARTDIFF_MAX_TENSORS];
	size_t ntensors, ntensors_differ;
	/* forests */
	uint32_t ntrees_a, ntrees_b, trees_same;
	int64_t first_tree;	/* -1: none differs */
	uint32_t first_node;
	char tree_what[256];	/* what differs at that node */
};

/*
 * Compares a with b into *out.  0; RBA_E_SCHEMA when they are of two
 * kinds (artdiff_kind: d->reason says which is which).
 */
int artdiff_compare(const struct artifact *a, const struct artifact *b,
		    struct artdiff *out, struct rba_detail *d);

/* The units in the last place between two binary32 values (0 when their
 * bits are equal; +0 and -0 are 1 apart). */
uint64_t artdiff_ulps(float a, float b);

#endif
