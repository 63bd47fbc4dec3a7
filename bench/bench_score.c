/*
 * bench_score.c - cases per second of the sparse scoring path (the one
 * audit and sample add use) for one artifact, excluding any rebuild:
 *
 *   bench_score ARTIFACT CASES.csv COUNT
 *
 * Encodes the cases with the artifact's own preprocessing, repeats them
 * to COUNT cases, scores them all through rebuild_sparse_score on one
 * thread and prints "cases=N seconds=S cases_per_second=R".  Exit 0, or
 * 2 with a diagnostic.  A benchmark, not a test: `make bench` runs it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/rbatime.h"
#include "rebuild/artifact.h"
#include "rebuild/csv.h"
#include "rebuild/encode.h"
#include "rebuild/trainer.h"

int
main(int argc, char **argv)
{
	struct artifact a;
	struct csv_table *t = NULL;
	struct rba_detail d;
	struct rebuild_sparse *sp = NULL;
	size_t count, nf, C, rows, nt = 0;
	float *raw, *x, *tx, *probs;
	uint32_t *row;
	double t0, secs, sum = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_score ARTIFACT CASES.csv COUNT\n");
		return 2;
	}
	count = strtoul(argv[3], NULL, 10);
	rba_detail_clear(&d);
	if (artifact_load(argv[1], &a, NULL, &d) != 0 ||
	    csv_table_load(argv[2], &t, &d) != 0) {
		fprintf(stderr, "bench_score: %s\n", d.reason);
		return 2;
	}
	nf = a.spec.nfeatures;
	C = a.spec.nclasses;
	rows = t->nrows;
	raw = calloc(rows * nf, sizeof(float));
	x = calloc(rows * nf, sizeof(float));
	if (raw == NULL || x == NULL || count == 0 ||
	    encode_table(&a.spec, t, raw, &d) != 0) {
		fprintf(stderr, "bench_score: cannot encode the cases: %s\n",
			d.reason);
		return 2;
	}
	encode_standardize(&a.spec, raw, rows, x);
	/* every case as its non-zero inputs, padded to one term count */
	for (size_t i = 0; i < rows; i++) {
		size_t k = 0;
		for (size_t f = 0; f < nf; f++)
			k += x[i * nf + f] != 0.0f;
		if (k > nt)
			nt = k;
	}
	if (nt == 0)
		nt = 1;
	tx = calloc(count * nt, sizeof(float));
	row = calloc(count * nt, sizeof(uint32_t));
	probs = calloc(count * C, sizeof(float));
	if (tx == NULL || row == NULL || probs == NULL) {
		fprintf(stderr, "bench_score: out of memory\n");
		return 2;
	}
	for (size_t c = 0; c < count; c++) {
		const float *xi = x + (c % rows) * nf;
		size_t k = 0;
		for (size_t f = 0; f < nf && k < nt; f++)
			if (xi[f] != 0.0f || nf - f <= nt - k) {
				tx[c * nt + k] = xi[f];
				row[c * nt + k] = (uint32_t)f;
				k++;
			}
	}
	if (rebuild_sparse_new(a.abi, &a.model, &sp) != 0) {
		fprintf(stderr, "bench_score: cannot prepare the scorer\n");
		return 2;
	}
	t0 = rba_time_mono();
	rebuild_sparse_score(sp, tx, row, nt, count, probs);
	secs = rba_time_mono() - t0;
	for (size_t c = 0; c < count; c++)
		sum += probs[c * C + C - 1];
	printf("cases=%zu seconds=%.4f cases_per_second=%.0f mean_score=%.6f\n",
	       count, secs, (double)count / secs, sum / (double)count);
	rebuild_sparse_free(sp);
	artifact_release(&a);
	csv_table_free(t);
	free(raw);
	free(x);
	free(tx);
	free(row);
	free(probs);
	return 0;
}
