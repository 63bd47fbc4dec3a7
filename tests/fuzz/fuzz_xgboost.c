/*
 * fuzz_xgboost.c - the XGBoost JSON model reader (xgboost_decode).
 * Whatever it accepts is a forest the scorers can walk: every tree in
 * preorder within its bounds, every split on a feature at one of its
 * edges, every child after its parent, depth within the cap; and a case
 * of zeros and one of missing values score and explain without fault.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/explain.h"
#include "model/xgboost.h"
#include "tests/fuzz/fuzz.h"

static void
check_forest(const struct rebuild_forest *f)
{
	for (uint32_t t = 0; t < f->ntrees; t++) {
		uint32_t lo = f->tree_start[t], hi = f->tree_start[t + 1];
		if (hi <= lo)
			fuzz_fail("tree %u is empty", t);
		if (rebuild_tree_depth(f->nodes, lo) > XGBOOST_MAX_DEPTH)
			fuzz_fail("tree %u is too deep", t);
		for (uint32_t i = lo; i < hi; i++) {
			const struct rebuild_tree_node *q = &f->nodes[i];
			if (q->feature == REBUILD_TREE_LEAF) {
				if (!isfinite(q->value))
					fuzz_fail("a leaf value is not finite");
				continue;
			}
			if (q->feature >= f->nfeatures || q->left != i + 1 ||
			    q->right <= q->left || q->right >= hi)
				fuzz_fail("node %u of tree %u is out of shape", i, t);
			if (q->bin >= f->edge_start[q->feature + 1] - f->edge_start[q->feature] ||
			    f->edges[f->edge_start[q->feature] + q->bin] != q->threshold)
				fuzz_fail("node %u's threshold is not its edge", i);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rba_detail d;
	struct artifact a;
	struct explain_baseline b;
	struct explain_result r;
	float *raw, *probs;
	uint32_t nf, nc;

	if (xgboost_decode(data, size, "fuzz.json", &a, &d) != 0) {
		if (a.model.forest.nodes != NULL || a.spec.columns != NULL)
			fuzz_fail("a refused model left memory behind");
		return 0;
	}
	if (!xgboost_artifact_is(&a))
		fuzz_fail("an XGBoost model without XGBoost's rules");
	check_forest(&a.model.forest);
	nf = a.spec.nfeatures;
	nc = a.spec.nclasses;
	raw = calloc(2 * (size_t)nf, sizeof(*raw));
	probs = calloc(2 * (size_t)nc, sizeof(*probs));
	if (raw == NULL || probs == NULL)
		abort();
	for (uint32_t f = 0; f < nf; f++)
		raw[nf + f] = NAN;
	if (artifact_score(&a, raw, 2, probs) != 0)
		fuzz_fail("an accepted model does not score");
	memset(&b, 0, sizeof(b));
	b.nfeatures = nf;
	b.ncolumns = a.spec.ncolumns;
	if (explain_case(&a, &b, raw + nf, nc == 2 ? 1 : 0, &r, &d) == 0)
		explain_result_release(&r);
	free(raw);
	free(probs);
	artifact_release(&a);
	return 0;
}
