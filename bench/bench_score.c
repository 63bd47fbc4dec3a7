/*
 * bench_score.c - cases per second of the sparse scoring path (the one
 * audit and sample add use) for one artifact, excluding any rebuild:
 *
 *   bench_score ARTIFACT CASES.csv COUNT [RUNS]
 *
 * Encodes the cases with the artifact's own preprocessing, repeats them
 * to COUNT cases, scores them all through rebuild_sparse_score on one
 * thread, RUNS times (default 1), and prints "cases=N seconds=S
 * cases_per_second=R" for the median run, and the fastest run's rate as
 * best=B.  Every run must give the same scores.  Exit 0, or 2 with a
 * diagnostic.  A benchmark, not a test: `make bench` runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/rbatime.h"
#include "model/artifact.h"
#include "data/csv.h"
#include "data/encode.h"
#include "train/trainer.h"

int
main(int argc, char **argv)
{
	struct artifact a;
	struct csv_table *t = NULL;
	struct rba_detail d;
	struct rebuild_sparse *sp = NULL;
	uint8_t *text = NULL;
	size_t count, nf, C, rows, nt = 0, runs = 1, tn;
	float *raw, *x, *tx, *probs, *first;
	uint32_t *row;
	double secs[64], t0, sum = 0;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bench_score ARTIFACT CASES.csv COUNT [RUNS]\n");
		return 2;
	}
	count = strtoul(argv[3], NULL, 10);
	if (argc == 5)
		runs = strtoul(argv[4], NULL, 10);
	if (runs < 1 || runs > sizeof(secs) / sizeof(secs[0])) {
		fprintf(stderr, "bench_score: RUNS must be 1 to 64\n");
		return 2;
	}
	rba_detail_clear(&d);
	if (artifact_load(argv[1], &a, NULL, &d) != 0) {
		fprintf(stderr, "bench_score: %s\n", d.reason);
		return 2;
	}
	{
		/* the cases read with the artifact's missing tokens (the
		 * table reads its texts in the file's bytes: kept until
		 * csv_table_free) */
		struct csv_missing m = encode_missing(&a.spec);
		if (rba_file_read(argv[2], (size_t)2 << 30, &text, &tn, &d) != 0 ||
		    csv_table_load_mem_missing(text, tn, argv[2], &m, &t, &d) != 0) {
			fprintf(stderr, "bench_score: %s\n", d.reason);
			return 2;
		}
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
	first = calloc(count * C, sizeof(float));
	if (tx == NULL || row == NULL || probs == NULL || first == NULL) {
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
	memset(probs, 0, count * C * sizeof(float)); /* pages in, not timed */
	for (size_t r = 0; r < runs; r++) {
		t0 = rba_time_mono();
		rebuild_sparse_score(sp, tx, row, nt, count, probs);
		secs[r] = rba_time_mono() - t0;
		if (r == 0)
			memcpy(first, probs, count * C * sizeof(float));
		else if (memcmp(first, probs, count * C * sizeof(float)) != 0) {
			fprintf(stderr, "bench_score: run %zu scored differently\n", r + 1);
			return 2;
		}
	}
	/* insertion sort: the median and the fastest run */
	for (size_t i = 1; i < runs; i++)
		for (size_t j = i; j > 0 && secs[j - 1] > secs[j]; j--) {
			double tmp = secs[j];
			secs[j] = secs[j - 1];
			secs[j - 1] = tmp;
		}
	for (size_t c = 0; c < count; c++)
		sum += probs[c * C + C - 1];
	printf("cases=%zu seconds=%.4f cases_per_second=%.0f best=%.0f "
	       "mean_score=%.6f\n",
	       count, secs[runs / 2], (double)count / secs[runs / 2],
	       (double)count / secs[0], sum / (double)count);
	rebuild_sparse_free(sp);
	artifact_release(&a);
	csv_table_free(t);
	free(text);
	free(raw);
	free(x);
	free(tx);
	free(row);
	free(probs);
	free(first);
	return 0;
}
