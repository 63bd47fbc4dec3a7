/*
 * bench_csv.c - megabytes per second of the CSV reader on one file:
 *
 *   bench_csv CASES.csv [RUNS]
 *
 * Reads the file into memory, then loads it RUNS times (default 3) as a
 * rebuild does (csv_table_load_mem with the default missing token, the
 * empty field), and prints "bytes=N rows=R seconds=S mb_per_second=M
 * cpu_mb_per_second=C" for the median run (MB: 10^6 bytes; C from the
 * process's CPU time, which other work on a shared machine disturbs
 * less than the wall clock).  Exit 0, or 2 with a diagnostic.
 * A benchmark, not a test: `make bench` runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "common/rbatime.h"
#include "data/csv.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	static const char *const empty[] = {""};
	const struct csv_missing m = {1, empty};
	struct rba_detail d;
	uint8_t *p;
	size_t n, runs = 3, rows = 0;
	double secs[64], cpu[64];

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: bench_csv CASES.csv [RUNS]\n");
		return 2;
	}
	if (argc == 3)
		runs = strtoul(argv[2], NULL, 10);
	if (runs < 1 || runs > 64) {
		fprintf(stderr, "bench_csv: RUNS is 1..64\n");
		return 2;
	}
	rba_detail_clear(&d);
	if (rba_file_read(argv[1], (size_t)4 << 30, &p, &n, &d) != 0) {
		fprintf(stderr, "bench_csv: cannot read %s: %s\n", argv[1], d.reason);
		return 2;
	}
	for (size_t r = 0; r < runs; r++) {
		struct csv_table *t;
		struct timespec c0, c1;
		double t0 = rba_time_mono();
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		if (csv_table_load_mem_missing(p, n, argv[1], &m, &t, &d) != 0) {
			fprintf(stderr, "bench_csv: %s:%lu:%lu: %s\n", argv[1], d.line,
				d.col, d.reason);
			return 2;
		}
		secs[r] = rba_time_mono() - t0;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		cpu[r] = (double)(c1.tv_sec - c0.tv_sec) +
			 (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
		rows = t->nrows;
		csv_table_free(t);
	}
	qsort(secs, runs, sizeof(double), cmp_double);
	qsort(cpu, runs, sizeof(double), cmp_double);
	printf("bytes=%zu rows=%zu seconds=%.3f mb_per_second=%.1f "
	       "cpu_mb_per_second=%.1f\n", n, rows, secs[runs / 2],
	       (double)n / 1e6 / secs[runs / 2], (double)n / 1e6 / cpu[runs / 2]);
	free(p);
	return 0;
}
