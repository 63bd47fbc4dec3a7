/*
 * bench_xgb.c - seconds of native XGBoost scoring (model/xgbtree.h,
 * the path artifact_score and the sample's scorer take) on one thread:
 *
 *   bench_xgb MODEL.json X.f32 RUNS MARGINS.f32
 *
 * X.f32 holds the cases as little-endian float32 rows of the model's
 * feature count (NaN: missing).  Scores them all RUNS times, prints
 * "cases=N runs=R median_seconds=S best_seconds=B", and writes the
 * margins (float32, n x groups) to MARGINS.f32.  Every run must give the
 * same margins; MARGINS.f32 must not exist (no file is replaced).
 * Exit 0, or 2 with a diagnostic.  A benchmark, not a
 * test: `make bench` runs it (bench/bench-xgboost.sh).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/rbatime.h"
#include "model/xgboost.h"
#include "model/xgbtree.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	struct artifact a;
	struct rba_detail d;
	struct xgbtree *s;
	uint8_t *buf;
	size_t len, n, nf, K, runs;
	float *m, *first;
	double secs[64];
	FILE *f;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: bench_xgb MODEL.json X.f32 RUNS MARGINS.f32\n");
		return 2;
	}
	if (access(argv[4], F_OK) == 0) {
		fprintf(stderr, "bench_xgb: %s: exists; not replaced\n", argv[4]);
		return 2;
	}
	rba_detail_clear(&d);
	if (xgboost_artifact_load(argv[1], &a, NULL, &d) != 0 ||
	    !xgboost_artifact_is(&a)) {
		fprintf(stderr, "bench_xgb: %s: %s\n", argv[1], d.reason);
		return 2;
	}
	if (rba_file_read(argv[2], (size_t)1 << 33, &buf, &len, &d) != 0) {
		fprintf(stderr, "bench_xgb: %s: cannot read\n", argv[2]);
		return 2;
	}
	nf = a.spec.nfeatures;
	K = a.model.forest.ngroups;
	n = len / (nf * sizeof(float));
	runs = strtoul(argv[3], NULL, 10);
	if (n == 0 || len != n * nf * sizeof(float) || runs < 1 || runs > 64) {
		fprintf(stderr, "bench_xgb: %s is not rows of %zu floats, or bad RUNS\n",
			argv[2], nf);
		return 2;
	}
	m = malloc(n * K * sizeof(float));
	first = malloc(n * K * sizeof(float));
	if (m == NULL || first == NULL || xgbtree_new(&a.model.forest, &s) != 0) {
		fprintf(stderr, "bench_xgb: out of memory\n");
		return 2;
	}
	for (size_t r = 0; r < runs; r++) {
		double t0 = rba_time_mono();
		xgbtree_margins(s, (const float *)(void *)buf, nf, n, m);
		secs[r] = rba_time_mono() - t0;
		if (r == 0)
			memcpy(first, m, n * K * sizeof(float));
		else if (memcmp(first, m, n * K * sizeof(float)) != 0) {
			fprintf(stderr, "bench_xgb: run %zu gave other margins\n", r);
			return 2;
		}
	}
	fd = open(argv[4], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if ((f = fd < 0 ? NULL : fdopen(fd, "wb")) == NULL ||
	    fwrite(m, sizeof(float), n * K, f) != n * K || fclose(f) != 0) {
		fprintf(stderr, "bench_xgb: cannot write %s\n", argv[4]);
		return 2;
	}
	qsort(secs, runs, sizeof(double), cmp_double);
	printf("cases=%zu runs=%zu median_seconds=%.4f best_seconds=%.4f\n", n, runs,
	       runs % 2 ? secs[runs / 2] : (secs[runs / 2 - 1] + secs[runs / 2]) / 2,
	       secs[0]);
	xgbtree_free(s);
	artifact_release(&a);
	free(m);
	free(first);
	free(buf);
	return 0;
}
