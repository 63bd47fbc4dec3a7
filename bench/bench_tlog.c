/*
 * bench_tlog.c - a history of many records and the cost of its log:
 *
 *   bench_tlog fill STORE N       appends N records (about 200 bytes each,
 *                                 version "bench") in transactions of
 *                                 50,000, and prints "records=N seconds=S"
 *   bench_tlog prove STORE ID RUNS   opens the store, views its log and
 *                                 proves record ID in the whole tree RUNS
 *                                 times; prints the median seconds of one
 *                                 open-and-prove, the proof's hashes and
 *                                 bytes, and the stored hashes it read
 *
 * A benchmark, not a test: `make bench` runs it (bench/bench-tlog.sh).
 * Exit 0, or 2 with a diagnostic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/digest.h"
#include "common/rbatime.h"
#include "common/tlog.h"
#include "store/store.h"

#define STEP 50000

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
die(const char *what, const struct rba_detail *d, int err)
{
	fprintf(stderr, "bench_tlog: %s: %s\n", what,
		d != NULL && d->reason[0] ? d->reason : rba_strerror(err));
	return 2;
}

static int
fill(const char *path, uint64_t n)
{
	struct store *s;
	struct store_txn *t;
	struct rba_detail d;
	char rec[256];
	double t0 = rba_time_mono();
	uint64_t done = 0;
	int err;

	rba_detail_clear(&d);
	if ((err = store_open(path, 0, &s, &d)) != 0)
		return die("open", &d, err);
	while (done < n) {
		uint64_t stop = done + STEP < n ? done + STEP : n;
		if ((err = store_txn_begin(s, 1, 64u << 20, &t, &d)) != 0)
			return die("begin", &d, err);
		for (; done < stop; done++) {
			int len = snprintf(rec, sizeof(rec),
					   "{\"schema\": \"rebuild-audit/bench/v1\", "
					   "\"n\": %llu, \"note\": \"a record of the size of "
					   "a short history record, for the log's bench\", "
					   "\"pad\": \"0123456789abcdef0123456789abcdef\"}",
					   (unsigned long long)done);
			if ((err = store_history_append(t, "bench", 1700000000 + (int64_t)done,
							rec, (size_t)len, NULL, NULL, &d)) != 0)
				return die("append", &d, err);
		}
		if ((err = store_txn_commit(t, &d)) != 0)
			return die("commit", &d, err);
	}
	store_close(s);
	printf("records=%llu seconds=%.3f\n", (unsigned long long)n, rba_time_mono() - t0);
	return 0;
}

static int
prove(const char *path, uint64_t id, int runs)
{
	struct rba_digest proof[TLOG_PROOF_MAX];
	double *secs = calloc((size_t)runs, sizeof(*secs));
	struct rba_detail d;
	size_t np = 0;
	uint64_t size = 0;
	int err;

	if (secs == NULL)
		return die("memory", NULL, RBA_E_NOMEM);
	for (int i = 0; i < runs; i++) {
		struct store *s;
		struct store_txn *t;
		struct store_tlog *tl;
		double t0 = rba_time_mono();
		rba_detail_clear(&d);
		if ((err = store_open(path, 1, &s, &d)) != 0 ||
		    (err = store_txn_begin(s, 0, 0, &t, &d)) != 0 ||
		    (err = store_tlog_open(t, &tl, &d)) != 0)
			return die("open", &d, err);
		size = store_tlog_size(tl);
		if ((err = store_tlog_prove_record(tl, size, id, proof, &np, &d)) != 0)
			return die("prove", &d, err);
		store_tlog_close(tl);
		store_txn_abort(t);
		store_close(s);
		secs[i] = rba_time_mono() - t0;
	}
	qsort(secs, (size_t)runs, sizeof(*secs), cmp_double);
	printf("tree_size=%llu id=%llu hashes=%zu bytes=%zu seconds=%.6f\n",
	       (unsigned long long)size, (unsigned long long)id, np,
	       np * RBA_DIGEST_LEN, secs[runs / 2]);
	free(secs);
	return 0;
}

int
main(int argc, char **argv)
{
	if (rba_crypto_init() != 0)
		return 2;
	if (argc == 4 && strcmp(argv[1], "fill") == 0)
		return fill(argv[2], strtoull(argv[3], NULL, 10));
	if (argc == 5 && strcmp(argv[1], "prove") == 0)
		return prove(argv[2], strtoull(argv[3], NULL, 10), atoi(argv[4]));
	fprintf(stderr, "usage: bench_tlog fill STORE N | prove STORE ID RUNS\n");
	return 2;
}
