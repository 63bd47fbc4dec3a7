/*
 * check_artifact.c - the canonical artifact: round trip, canonical bytes,
 * scoring with the artifact's own preprocessing, and a corpus of
 * truncated and bit-flipped files that must load or fail cleanly.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "model/artdiff.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "common/rbatime.h"
#include "model/artifact.h"
#include "data/csv.h"
#include "data/encode.h"
#include "model/explain.h"
#include "model/xgbtree.h"
#include "train/gbdt1.h"
#include "train/kernel.h"
#include "train/rng.h"
#include "train/treewalk.h"
#include "rebuild/rebuild.h"
#include "tests/unit/suites.h"

/*
 * MLP cases explained by exact Shapley values in the unit test (about a
 * millisecond each on one core: 20 columns, several of them at their
 * baseline value); RBA_EXPLAIN_MLP_CASES overrides it with a count or
 * "all" (every case of the German credit sample: `make check-reasons`).
 * The reasons test case then gets an hour; the whole sample takes about
 * a second.
 */
#define EXPLAIN_MLP_CASES 50
#define EXPLAIN_ALL_TIMEOUT 3600

static const char snap[] =
	"id,colour,size,weight,class\n"
	"1,red,1.5,10,yes\n"
	"2,blue,2.5,11,no\n"
	"3,green,3.5,12,yes\n"
	"4,red,4.5,13,no\n"
	"5,blue,5.5,14,yes\n"
	"6,green,6.5,15,no\n"
	"7,red,7.5,16,yes\n"
	"8,blue,8.5,17,no\n"
	"9,red,9.5,18,yes\n"
	"10,green,10.5,19,no\n"
	"11,blue,1.0,20,yes\n"
	"12,red,2.0,21,no\n";

static char *cat_cols[] = { "colour" };

static void
test_pins(struct pins *p, size_t nhidden)
{
	memset(p, 0, sizeof(*p));
	p->version = "t";
	rba_digest_bytes(snap, strlen(snap), &p->snapshot);
	p->data.label = "class";
	p->data.positive = "yes";
	p->data.id = "id";
	p->data.categorical = cat_cols;
	p->data.ncategorical = 1;
	p->data.standardize = 1;
	p->data.split_validation = 0.25;
	p->data.split_order = PINS_SPLIT_RANDOM;
	p->model.nhidden = nhidden;
	p->model.hidden[0] = 4;
	p->model.hidden[1] = 3;
	p->model.dropout = 0.2;
	p->train.epochs = 4;
	p->train.batch_size = 4;
	p->train.optimizer = PINS_OPT_ADAMW;
	p->train.lr = 0.05;
	p->train.betas[0] = 0.9;
	p->train.betas[1] = 0.999;
	p->train.eps = 1e-8;
	p->determinism.mode = PINS_DET_STRICT;
	p->determinism.threads = 1;
}

/* A small trained artifact (caller frees res). */
static void
make_artifact(size_t nhidden, struct rebuild_result *res)
{
	struct pins p;
	struct rba_detail d;

	test_pins(&p, nhidden);
	rba_detail_clear(&d);
	ck_assert_msg(rebuild_from_snapshot(&p, 0, snap, strlen(snap), "s.csv",
					    NULL, res, &d) == 0,
		      "%s", d.reason);
}

START_TEST(test_round_trip)
{
	struct rebuild_result res, res2;
	struct artifact a;
	struct rba_buf b;
	struct rba_detail d;

	make_artifact(2, &res);
	make_artifact(2, &res2);
	/* training twice gives the same bytes */
	ck_assert_uint_eq(res.artifact_len, res2.artifact_len);
	ck_assert(memcmp(res.artifact, res2.artifact, res.artifact_len) == 0);
	ck_assert(rba_digest_equal(&res.digest, &res2.digest));
	ck_assert(memcmp(res.artifact, ARTIFACT_MAGIC, 8) == 0);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	ck_assert_uint_eq(a.abi, 1);
	ck_assert_uint_eq(a.model.nlayers, 3);
	ck_assert_uint_eq(a.model.sizes[0], 5); /* 3 levels + size + weight */
	ck_assert_uint_eq(a.model.sizes[3], 2);
	ck_assert_str_eq(a.spec.label, "class");
	ck_assert_str_eq(a.spec.classes[1], "yes");
	ck_assert_uint_eq(a.spec.positive, 1);
	ck_assert_str_eq(a.spec.columns[0].levels[0], "blue");
	rba_buf_init(&b);
	ck_assert_int_eq(artifact_encode(&a, &b), 0);
	ck_assert_uint_eq(b.len, res.artifact_len);
	ck_assert(memcmp(b.p, res.artifact, b.len) == 0);
	rba_buf_release(&b);
	artifact_release(&a);
	rebuild_result_release(&res);
	rebuild_result_release(&res2);
	/* logistic regression: one layer */
	make_artifact(0, &res);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	ck_assert_uint_eq(a.model.nlayers, 1);
	artifact_release(&a);
	rebuild_result_release(&res);
}
END_TEST

START_TEST(test_score_matches_training)
{
	struct rebuild_result res;
	struct artifact a;
	struct csv_table *t;
	struct rba_detail d;
	struct encode_data data;
	struct encode_spec spec;
	struct pins p;
	float x[12 * 5], probs[24];

	make_artifact(2, &res);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	ck_assert_int_eq(csv_table_load_mem(snap, strlen(snap), "s.csv", &t, &d), 0);
	ck_assert_int_eq(encode_table(&a.spec, t, x, &d), 0);
	ck_assert_int_eq(artifact_score(&a, x, 12, probs), 0);
	for (int i = 0; i < 12; i++) {
		ck_assert(fabsf(probs[2 * i] + probs[2 * i + 1] - 1.0f) < 1e-6f);
		ck_assert(probs[2 * i] >= 0.0f && probs[2 * i] <= 1.0f);
	}
	/* the artifact's preprocessing is the training one: same raw rows */
	test_pins(&p, 2);
	ck_assert_int_eq(encode_fit(&p, t, &spec, &data, &d), 0);
	ck_assert(memcmp(data.x, x, sizeof(x)) == 0);
	/* scoring twice: same bits */
	float again[24];
	ck_assert_int_eq(artifact_score(&a, x, 12, again), 0);
	ck_assert(memcmp(probs, again, sizeof(again)) == 0);
	encode_spec_release(&spec);
	encode_data_release(&data);
	csv_table_free(t);
	artifact_release(&a);
	rebuild_result_release(&res);
}
END_TEST

/* Any accepted input is canonical: it re-encodes to the same bytes. */
static int
decode_checked(const uint8_t *p, size_t n)
{
	struct artifact a;
	struct rba_detail d;
	struct rba_buf b;
	int err;

	rba_detail_clear(&d);
	err = artifact_decode(p, n, &a, &d);
	if (err == 0) {
		rba_buf_init(&b);
		ck_assert_int_eq(artifact_encode(&a, &b), 0);
		ck_assert_uint_eq(b.len, n);
		ck_assert(memcmp(b.p, p, n) == 0);
		rba_buf_release(&b);
		artifact_release(&a);
		return 0;
	}
	ck_assert_msg(err == RBA_E_CORRUPT || err == RBA_E_UNSUPPORTED,
		      "unexpected error %d", err);
	ck_assert_msg(d.reason[0] != 0, "no reason for error %d", err);
	return err;
}

START_TEST(test_truncations)
{
	struct rebuild_result res;

	make_artifact(2, &res);
	for (size_t n = 0; n < res.artifact_len; n++) {
		/* an exact-size copy so ASan sees any over-read */
		uint8_t *cp = malloc(n ? n : 1);
		memcpy(cp, res.artifact, n);
		ck_assert_int_eq(decode_checked(cp, n), RBA_E_CORRUPT);
		free(cp);
	}
	/* and one byte too many */
	uint8_t *cp = malloc(res.artifact_len + 1);
	memcpy(cp, res.artifact, res.artifact_len);
	cp[res.artifact_len] = 0;
	ck_assert_int_eq(decode_checked(cp, res.artifact_len + 1), RBA_E_CORRUPT);
	free(cp);
	rebuild_result_release(&res);
}
END_TEST

START_TEST(test_bit_flips)
{
	struct rebuild_result res;
	size_t n, ok = 0, bad = 0;
	uint8_t *cp;

	make_artifact(2, &res);
	n = res.artifact_len;
	cp = malloc(n);
	/* every bit of the header region, then a stride through the rest */
	for (size_t bit = 0; bit < n * 8; bit += bit < 4096 ? 1 : 7) {
		memcpy(cp, res.artifact, n);
		cp[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (decode_checked(cp, n) == 0)
			ok++;
		else
			bad++;
	}
	/* both outcomes occur: flips in weights load, flips in lengths fail */
	ck_assert_uint_gt(ok, 0);
	ck_assert_uint_gt(bad, 0);
	free(cp);
	rebuild_result_release(&res);
}
END_TEST

static void
expect(const uint8_t *p, size_t n, int err, const char *reason)
{
	struct artifact a;
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_int_eq(artifact_decode(p, n, &a, &d), err);
	ck_assert_msg(strstr(d.reason, reason) != NULL, "reason '%s' lacks '%s'",
		      d.reason, reason);
}

START_TEST(test_specific_corruptions)
{
	struct rebuild_result res;
	uint8_t *cp;
	size_t n;
	float nanv = NAN, zero = 0.0f;

	make_artifact(2, &res);
	n = res.artifact_len;
	cp = malloc(n);
#define RESET() memcpy(cp, res.artifact, n)
	RESET();
	cp[0] = 'X';
	expect(cp, n, RBA_E_CORRUPT, "bad magic");
	RESET();
	rba_put_u32le(cp + 8, ARTIFACT_FORMAT + 1);
	expect(cp, n, RBA_E_UNSUPPORTED, "newer");
	/* a network in the native columns' format (forests only) */
	RESET();
	rba_put_u32le(cp + 8, ARTIFACT_FORMAT_NATIVE);
	expect(cp, n, RBA_E_CORRUPT, "model kind");
	/* a network in the forests' format */
	RESET();
	rba_put_u32le(cp + 8, 2);
	expect(cp, n, RBA_E_CORRUPT, "model kind");
	RESET();
	rba_put_u32le(cp + 8, 0);
	expect(cp, n, RBA_E_CORRUPT, "format version 0");
	RESET();
	rba_put_u32le(cp + 12, 77);
	expect(cp, n, RBA_E_UNSUPPORTED, "ABI 77");
	RESET();
	cp[16] = 9;
	expect(cp, n, RBA_E_CORRUPT, "model kind");
	RESET();
	rba_put_u32le(cp + 18, 1000);
	expect(cp, n, RBA_E_CORRUPT, "layer count");
	/* a huge layer size is refused before anything is allocated */
	RESET();
	rba_put_u32le(cp + 22, 4096);
	rba_put_u32le(cp + 26, 4096);
	expect(cp, n, RBA_E_CORRUPT, "need more bytes than remain");
	RESET();
	rba_put_u32le(cp + 22, 0);
	expect(cp, n, RBA_E_CORRUPT, "layer size");
	/* the last weight NaN, then a scale of zero */
	RESET();
	memcpy(cp + n - 4, &nanv, 4);
	expect(cp, n, RBA_E_CORRUPT, "not finite");
	{
		struct artifact a;
		struct rba_detail d;
		struct rba_buf b;
		ck_assert_int_eq(artifact_decode(res.artifact, n, &a, &d), 0);
		a.spec.scale[3] = 0.0f;
		rba_buf_init(&b);
		ck_assert_int_eq(artifact_encode(&a, &b), 0);
		expect(b.p, b.len, RBA_E_CORRUPT, "scale");
		/* levels out of order are not canonical */
		a.spec.scale[3] = 1.0f;
		char *t = a.spec.columns[0].levels[0];
		a.spec.columns[0].levels[0] = a.spec.columns[0].levels[1];
		a.spec.columns[0].levels[1] = t;
		b.len = 0;
		ck_assert_int_eq(artifact_encode(&a, &b), 0);
		expect(b.p, b.len, RBA_E_CORRUPT, "canonical order");
		/* an inconsistent model is not written */
		a.model.sizes[0] = 9;
		b.len = 0;
		ck_assert_int_eq(artifact_encode(&a, &b), RBA_E_RANGE);
		a.model.sizes[0] = 5;
		rba_buf_release(&b);
		artifact_release(&a);
	}
	(void)zero;
	free(cp);
	rebuild_result_release(&res);
}
END_TEST

START_TEST(test_load_file)
{
	struct rebuild_result res;
	struct artifact a;
	struct rba_detail d;
	struct rba_digest dg;
	char path[] = "/tmp/rba-art-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	make_artifact(1, &res);
	ck_assert_int_eq(rba_file_write_atomic(path, res.artifact,
					       res.artifact_len, 0600),
			 0);
	ck_assert_int_eq(artifact_load(path, &a, &dg, &d), 0);
	ck_assert(rba_digest_equal(&dg, &res.digest));
	artifact_release(&a);
	ck_assert_int_eq(rba_file_write_atomic(path, res.artifact, 20, 0600), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(artifact_load(path, &a, NULL, &d), RBA_E_CORRUPT);
	ck_assert_str_eq(d.file, path);
	unlink(path);
	ck_assert_int_ne(artifact_load(path, &a, NULL, &d), 0);
	rebuild_result_release(&res);
}
END_TEST

START_TEST(test_snapshot_mismatch)
{
	struct pins p;
	struct rebuild_result res;
	struct rba_detail d;

	test_pins(&p, 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(rebuild_from_snapshot(&p, 0, snap, strlen(snap) - 1,
					       "s.csv", NULL, &res, &d),
			 RBA_E_TAMPERED);
	ck_assert(strstr(d.reason, "does not match the pinned snapshot") != NULL);
	ck_assert_int_eq(rebuild_from_snapshot(&p, 3, snap, strlen(snap), "s.csv",
					       NULL, &res, &d),
			 RBA_E_UNSUPPORTED);
}
END_TEST

/* ---- forests (format 2) ---------------------------------------------- */

static const char snap3[] =
	"id,colour,size,weight,class\n"
	"1,red,1.5,10,a\n"
	"2,blue,2.5,11,b\n"
	"3,green,3.5,12,c\n"
	"4,red,4.5,13,a\n"
	"5,blue,5.5,14,b\n"
	"6,green,6.5,15,c\n"
	"7,red,7.5,16,a\n"
	"8,blue,8.5,17,b\n"
	"9,red,9.5,18,c\n"
	"10,green,10.5,19,a\n"
	"11,blue,1.0,20,b\n"
	"12,red,2.0,21,c\n"
	"13,red,3.0,22,a\n"
	"14,blue,4.0,23,b\n"
	"15,green,5.0,24,c\n"
	"16,green,6.0,25,a\n";

static void
make_forest(int multiclass, struct rebuild_result *res)
{
	struct pins p;
	struct rba_detail d;
	const char *sn = multiclass ? snap3 : snap;

	test_pins(&p, 0);
	rba_digest_bytes(sn, strlen(sn), &p.snapshot);
	if (multiclass)
		p.data.positive = NULL;
	p.data.standardize = multiclass;
	p.model.kind = PINS_MODEL_GBDT;
	p.model.gbdt.trees = multiclass ? 3 : 4;
	p.model.gbdt.max_depth = 3;
	p.model.gbdt.max_leaves = 0;
	p.model.gbdt.learning_rate = 0.3;
	p.model.gbdt.min_child_weight = 0.1;
	p.model.gbdt.lambda = 1;
	p.model.gbdt.max_bins = 4;
	p.model.gbdt.subsample = 1;
	p.model.gbdt.colsample = 1;
	rba_detail_clear(&d);
	ck_assert_msg(rebuild_from_snapshot(&p, 0, sn, strlen(sn), "s.csv", NULL, res,
					    &d) == 0,
		      "%s", d.reason);
}

/*
 * artifact_score and the sparse scorer given the non-zero inputs score
 * the rows of sn as the dense forward pass does, bit for bit.
 */
static void
scores_agree(const struct artifact *a, const char *sn, size_t rows)
{
	struct csv_table *t;
	struct rba_detail d;
	struct rebuild_sparse *sp;
	size_t nf = a->spec.nfeatures, C = a->spec.nclasses;
	float *raw = calloc(rows * nf, sizeof(float));
	float *x = calloc(rows * nf, sizeof(float));
	float *dense = calloc(rows * C, sizeof(float));
	float *sparse = calloc(rows * C, sizeof(float));
	float *tx = calloc(rows * nf, sizeof(float));
	uint32_t *row = calloc(rows * nf, sizeof(uint32_t));
	size_t nt = 0;

	{
		struct csv_missing m = encode_missing(&a->spec);
		ck_assert_int_eq(csv_table_load_mem_missing(sn, strlen(sn), "s.csv",
							    &m, &t, &d), 0);
	}
	ck_assert_int_eq(encode_table(&a->spec, t, raw, &d), 0);
	ck_assert_int_eq(artifact_score(a, raw, rows, sparse), 0);
	encode_standardize(&a->spec, raw, rows, x);
	ck_assert_int_eq(rebuild_predict(a->abi, &a->model, x, rows, dense), 0);
	ck_assert(memcmp(dense, sparse, rows * C * sizeof(float)) == 0);
	/* the terms: every non-zero input, padded per case to one count */
	for (size_t i = 0; i < rows; i++) {
		size_t k = 0;
		for (size_t f = 0; f < nf; f++)
			if (x[i * nf + f] != 0.0f)
				k++;
		if (k > nt)
			nt = k;
	}
	for (size_t i = 0; i < rows; i++) {
		size_t k = 0;
		for (size_t f = 0; f < nf && k < nt; f++)
			if (x[i * nf + f] != 0.0f || nf - f <= nt - k) {
				tx[i * nt + k] = x[i * nf + f];
				row[i * nt + k] = (uint32_t)f;
				k++;
			}
		ck_assert_uint_eq(k, nt);
	}
	ck_assert_int_eq(rebuild_sparse_new(a->abi, &a->model, &sp), 0);
	rebuild_sparse_score(sp, tx, row, nt, rows, sparse);
	ck_assert(memcmp(dense, sparse, rows * C * sizeof(float)) == 0);
	rebuild_sparse_free(sp);
	csv_table_free(t);
	free(raw);
	free(x);
	free(dense);
	free(sparse);
	free(tx);
	free(row);
}

START_TEST(test_forest_round_trip)
{
	struct rebuild_result res, res2;
	struct artifact a;
	struct rba_buf b;
	struct rba_detail d;

	for (int mc = 0; mc < 2; mc++) {
		make_forest(mc, &res);
		make_forest(mc, &res2);
		ck_assert_uint_eq(res.artifact_len, res2.artifact_len);
		ck_assert(memcmp(res.artifact, res2.artifact, res.artifact_len) == 0);
		ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len,
						 &a, &d), 0);
		ck_assert_int_eq(a.model.kind, REBUILD_KIND_GBDT);
		ck_assert_uint_eq(a.model.forest.ngroups, mc ? 3 : 1);
		ck_assert_uint_eq(a.model.forest.ntrees, mc ? 9 : 4);
		ck_assert_uint_eq(a.model.sizes[0], 5);
		ck_assert_uint_gt(a.model.forest.tree_start[a.model.forest.ntrees],
				  a.model.forest.ntrees); /* it split */
		rba_buf_init(&b);
		ck_assert_int_eq(artifact_encode(&a, &b), 0);
		ck_assert_uint_eq(b.len, res.artifact_len);
		ck_assert(memcmp(b.p, res.artifact, b.len) == 0);
		rba_buf_release(&b);
		scores_agree(&a, mc ? snap3 : snap, mc ? 16 : 12);
		artifact_release(&a);
		rebuild_result_release(&res);
		rebuild_result_release(&res2);
	}
}
END_TEST

START_TEST(test_forest_truncations)
{
	struct rebuild_result res;

	make_forest(0, &res);
	for (size_t n = 0; n < res.artifact_len; n++) {
		uint8_t *cp = malloc(n ? n : 1);
		memcpy(cp, res.artifact, n);
		ck_assert_int_eq(decode_checked(cp, n), RBA_E_CORRUPT);
		free(cp);
	}
	rebuild_result_release(&res);
}
END_TEST

/*
 * Every bit of every byte of a small forest flipped: the loader refuses
 * the file or yields a canonical model that scores without a fault.
 */
START_TEST(test_forest_bit_flips)
{
	struct rebuild_result res;
	size_t n, ok = 0, bad = 0;
	float raw[12 * 5], probs[24];
	struct csv_table *t;
	struct rba_detail d;
	uint8_t *cp;

	make_forest(0, &res);
	n = res.artifact_len;
	cp = malloc(n);
	ck_assert_int_eq(csv_table_load_mem(snap, strlen(snap), "s.csv", &t, &d), 0);
	for (size_t bit = 0; bit < n * 8; bit++) {
		struct artifact a;
		memcpy(cp, res.artifact, n);
		cp[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (decode_checked(cp, n) != 0) {
			bad++;
			continue;
		}
		ok++;
		ck_assert_int_eq(artifact_decode(cp, n, &a, &d), 0);
		/* a flipped level or class name may not encode the rows */
		if (encode_table(&a.spec, t, raw, &d) == 0) {
			ck_assert_int_eq(artifact_score(&a, raw, 12, probs), 0);
			scores_agree(&a, snap, 12);
		}
		artifact_release(&a);
	}
	ck_assert_uint_gt(ok, 0);
	ck_assert_uint_gt(bad, 0);
	csv_table_free(t);
	free(cp);
	rebuild_result_release(&res);
}
END_TEST

/* Offset of tree node k of tree 0 (the first tree starts at `first`). */
static size_t
node_at(const uint8_t *p, size_t first, uint32_t k)
{
	size_t off = first + 4;

	for (uint32_t i = 0; i < k; i++)
		off += p[off] == ARTIFACT_TREE_LEAF ? 9 : 17;
	return off;
}

START_TEST(test_forest_specific_corruptions)
{
	struct rebuild_result res;
	struct artifact a;
	struct rba_detail d;
	uint8_t *cp;
	size_t n, first, split;
	uint32_t nn;

	make_forest(0, &res);
	n = res.artifact_len;
	cp = malloc(n);
	ck_assert_int_eq(artifact_decode(res.artifact, n, &a, &d), 0);
	/* find tree 0: the bytes after the tree count */
	{
		const struct rebuild_forest *f = &a.model.forest;
		size_t tail = 4; /* tree count */
		for (uint32_t t = 0; t < f->ntrees; t++) {
			tail += 4;
			for (uint32_t i = f->tree_start[t]; i < f->tree_start[t + 1]; i++)
				tail += f->nodes[i].feature == REBUILD_TREE_LEAF ? 9 : 17;
		}
		first = n - tail + 4;
		nn = f->tree_start[1];
		ck_assert_uint_eq(rba_get_u32le(res.artifact + first), nn);
		ck_assert_uint_eq(res.artifact[first + 4], ARTIFACT_TREE_SPLIT);
	}
	split = first + 4;
	RESET();
	cp[8] = 1; /* a forest in the networks' format */
	expect(cp, n, RBA_E_CORRUPT, "model kind");
	RESET();
	rba_put_u32le(cp + split + 1, 5); /* feature 5 of 5 */
	expect(cp, n, RBA_E_CORRUPT, "feature out of range");
	RESET();
	rba_put_u32le(cp + split + 5, 200); /* bin beyond the edges */
	expect(cp, n, RBA_E_CORRUPT, "bin edge out of range");
	RESET();
	rba_put_u32le(cp + split + 9, 0); /* right child: the root, a cycle */
	expect(cp, n, RBA_E_CORRUPT, "right child");
	RESET();
	rba_put_u32le(cp + split + 9, 1); /* right child = left child */
	expect(cp, n, RBA_E_CORRUPT, "right child");
	RESET();
	rba_put_u32le(cp + split + 9, nn); /* past the end */
	expect(cp, n, RBA_E_CORRUPT, "right child");
	RESET();
	cp[split] = 7;
	expect(cp, n, RBA_E_CORRUPT, "node type");
	RESET();
	rba_put_u32le(cp + first, 200000); /* node count over the cap */
	expect(cp, n, RBA_E_CORRUPT, "tree node count");
	RESET();
	{
		float neg = -1.0f;
		memcpy(cp + split + 13, &neg, 4);
		expect(cp, n, RBA_E_CORRUPT, "cover");
	}
	RESET();
	{
		/* a leaf turned into a split that leaves nodes unreached */
		size_t last = node_at(cp, first, nn - 1);
		ck_assert_uint_eq(cp[last], ARTIFACT_TREE_LEAF);
		float inf = INFINITY;
		memcpy(cp + last + 1, &inf, 4);
		expect(cp, n, RBA_E_CORRUPT, "not finite");
	}
	/* a tree deeper than the cap is refused, by the depth rule */
	{
		struct rba_buf b;
		struct rebuild_forest *f = &a.model.forest;
		struct artifact deep;
		uint32_t D = REBUILD_GBDT_MAX_DEPTH + 1, N = 2 * D + 1;
		memset(&deep, 0, sizeof(deep));
		deep.abi = a.abi;
		deep.spec = a.spec;
		ck_assert_int_eq(rebuild_forest_alloc(&deep.model, 5, 2,
						      f->edge_start[5], 1, N), 0);
		memcpy(deep.model.forest.edge_start, f->edge_start, 6 * 4);
		memcpy(deep.model.forest.edges, f->edges, f->edge_start[5] * 4);
		deep.model.forest.tree_start[1] = N;
		/* a chain: split i has a leaf on its right, the next split left */
		for (uint32_t i = 0, k = 0; i < D; i++) {
			struct rebuild_tree_node *q = &deep.model.forest.nodes[k];
			q->feature = 1; /* size: numeric, has edges */
			q->left = k + 1;
			q->right = 2 * D - i;
			k++;
		}
		for (uint32_t i = D; i < N; i++)
			deep.model.forest.nodes[i].feature = REBUILD_TREE_LEAF;
		/* preorder of a left chain: splits 0..D-1, the deepest leaf, then
		 * the right leaves from the deepest split up */
		for (uint32_t i = 0; i < D; i++)
			deep.model.forest.nodes[i].right = D + 1 + (D - 1 - i);
		rba_buf_init(&b);
		ck_assert_int_eq(artifact_encode(&deep, &b), 0);
		expect(b.p, b.len, RBA_E_CORRUPT, "deeper than the cap");
		rba_buf_release(&b);
		memset(&deep.spec, 0, sizeof(deep.spec));
		artifact_release(&deep);
	}
	artifact_release(&a);
	free(cp);
	rebuild_result_release(&res);
}
END_TEST

/*
 * deep gets a's spec (borrowed: clear it before releasing deep) and one
 * tree deeper than the sparse scorer's complete layout: a chain of 12
 * splits on input 3, 13 leaves.
 */
static void
make_deep(const struct artifact *a, struct artifact *deep)
{
	uint32_t D = 12, N = 2 * 12 + 1;
	const struct rebuild_forest *f = &a->model.forest;

	memset(deep, 0, sizeof(*deep));
	deep->abi = a->abi;
	deep->spec = a->spec;
	ck_assert_int_eq(rebuild_forest_alloc(&deep->model, 5, 2, f->edge_start[5],
					      1, N), 0);
	memcpy(deep->model.forest.edge_start, f->edge_start, 6 * 4);
	memcpy(deep->model.forest.edges, f->edges, f->edge_start[5] * 4);
	deep->model.forest.tree_start[1] = N;
	for (uint32_t i = 0; i < D; i++) {
		struct rebuild_tree_node *q = &deep->model.forest.nodes[i];
		q->feature = 3; /* size */
		q->bin = i % (f->edge_start[4] - f->edge_start[3]);
		q->threshold = f->edges[f->edge_start[3] + q->bin];
		q->left = i + 1;
		q->right = D + 1 + (D - 1 - i);
	}
	for (uint32_t i = D; i < N; i++) {
		deep->model.forest.nodes[i].feature = REBUILD_TREE_LEAF;
		deep->model.forest.nodes[i].value = 0.125f * (float)i - 1.0f;
	}
}

/*
 * A tree deeper than the sparse scorer's complete layout scores by its
 * node walk: bit for bit the dense scores too.
 */
START_TEST(test_forest_deep_sparse)
{
	struct rebuild_result res;
	struct artifact a, deep;
	struct rba_detail d;

	make_forest(0, &res);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	make_deep(&a, &deep);
	scores_agree(&deep, snap, 12);
	/* splits that send missing values left, every other one, deep and
	 * in a complete layout, on cases missing the split input */
	{
		static const char snapm[] =
			"id,colour,size,weight,class\n"
			"1,red,,10,yes\n2,blue,2.5,11,no\n3,green,,12,yes\n"
			"4,red,4.5,,no\n5,blue,,14,yes\n6,red,6.5,15,no\n";
		for (uint32_t i = 0; i < 12; i += 2)
			deep.model.forest.nodes[i].flags = REBUILD_TREE_DEFAULT_LEFT;
		scores_agree(&deep, snapm, 6);
		for (size_t i = 0; i < a.model.forest.tree_start[a.model.forest.ntrees];
		     i++)
			if (a.model.forest.nodes[i].feature != REBUILD_TREE_LEAF && i % 3)
				a.model.forest.nodes[i].flags = REBUILD_TREE_DEFAULT_LEFT;
		scores_agree(&a, snapm, 6);
	}
	memset(&deep.spec, 0, sizeof(deep.spec));
	artifact_release(&deep);
	artifact_release(&a);
	rebuild_result_release(&res);
}
END_TEST

/*
 * The sparse scorer compares order keys, not floats: on inputs at and
 * next to every bin edge, NaN of either sign, both zeros, both
 * infinities and subnormals, in any number of cases (whole lane groups
 * and blocks or not), its probabilities are the dense walk's bit for
 * bit, given every input as a term or only one.
 */
static void
special_agree(const struct artifact *a)
{
	const struct rebuild_forest *f = &a->model.forest;
	size_t nf = f->nfeatures, C = f->nclasses, nv = 0;
	float v[64];
	size_t counts[] = { 1, 9, 10, 11, 19, 20, 79, 80, 81, 203 };

	v[nv++] = NAN;
	v[nv++] = -NAN;
	v[nv++] = 0.0f;
	v[nv++] = -0.0f;
	v[nv++] = INFINITY;
	v[nv++] = -INFINITY;
	v[nv++] = 0x1p-149f;
	v[nv++] = -0x1p-149f;
	v[nv++] = 3.0e38f;
	v[nv++] = -3.0e38f;
	for (uint32_t e = 0; e < f->edge_start[nf] && nv + 3 <= 64; e++) {
		v[nv++] = f->edges[e];
		v[nv++] = nextafterf(f->edges[e], -INFINITY);
		v[nv++] = nextafterf(f->edges[e], INFINITY);
	}
	for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
		size_t n = counts[ci];
		float *x = calloc(n * nf, sizeof(float));
		float *dense = calloc(n * C, sizeof(float));
		float *sparse = calloc(n * C, sizeof(float));
		float *tx = calloc(n * nf, sizeof(float));
		uint32_t *row = calloc(n * nf, sizeof(uint32_t));
		struct rebuild_sparse *sp;

		ck_assert_int_eq(rebuild_sparse_new(a->abi, &a->model, &sp), 0);
		/* every input a term */
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < nf; j++) {
				x[i * nf + j] = v[(i * 5 + j * 7) % nv];
				tx[i * nf + j] = x[i * nf + j];
				row[i * nf + j] = (uint32_t)j;
			}
		ck_assert_int_eq(rebuild_predict(a->abi, &a->model, x, n, dense), 0);
		rebuild_sparse_score(sp, tx, row, nf, n, sparse);
		ck_assert(memcmp(dense, sparse, n * C * sizeof(float)) == 0);
		/* one term a case, the other inputs zero */
		memset(x, 0, n * nf * sizeof(float));
		for (size_t i = 0; i < n; i++) {
			row[i] = (uint32_t)(i % nf);
			tx[i] = v[i % nv];
			x[i * nf + row[i]] = tx[i];
		}
		ck_assert_int_eq(rebuild_predict(a->abi, &a->model, x, n, dense), 0);
		rebuild_sparse_score(sp, tx, row, 1, n, sparse);
		ck_assert(memcmp(dense, sparse, n * C * sizeof(float)) == 0);
		rebuild_sparse_free(sp);
		free(x);
		free(dense);
		free(sparse);
		free(tx);
		free(row);
	}
}

/*
 * A hand-made forest of one tree on 3 inputs whose thresholds are +0,
 * -0, NaN, +inf and -inf (the keys' corner cases), after a chain of `chain`
 * splits x2 < 3e38 (each leaving a NaN or +inf x2 on a leaf of its own):
 * chain 0 is a tree the scorer lays out complete, chain 8 one it walks
 * node by node.
 */
static void
make_hand(struct artifact *h, uint32_t chain)
{
	static const struct {
		uint32_t feature, left, right;
		float threshold, value;
	} t[] = {
		{ 0, 1, 4, 0.0f, 0 },
		{ 1, 2, 3, -0.0f, 0 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0.25f },
		{ REBUILD_TREE_LEAF, 0, 0, 0, -0.5f },
		{ 2, 5, 6, NAN, 0 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 1.0f },
		{ 1, 7, 10, INFINITY, 0 },
		{ 0, 8, 9, -INFINITY, 0 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0.75f },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 2.5f },
		{ REBUILD_TREE_LEAF, 0, 0, 0, -1.25f },
	};
	uint32_t nt = sizeof(t) / sizeof(t[0]), n = nt + 2 * chain;
	struct rebuild_tree_node *q;

	memset(h, 0, sizeof(*h));
	h->abi = 1;
	ck_assert_int_eq(rebuild_forest_alloc(&h->model, 3, 2, 0, 1, n), 0);
	h->model.forest.tree_start[1] = n;
	q = h->model.forest.nodes;
	/* preorder: split i, its left subtree (split i + 1 ...), its leaf */
	for (uint32_t i = 0; i < chain; i++) {
		q[i].feature = 2;
		q[i].threshold = 3.0e38f;
		q[i].left = i + 1;
		q[i].right = n - 1 - i;
		q[n - 1 - i].feature = REBUILD_TREE_LEAF;
		q[n - 1 - i].value = 0.0625f * (float)i;
	}
	for (uint32_t i = 0; i < nt; i++) {
		q[chain + i].feature = t[i].feature;
		q[chain + i].threshold = t[i].threshold;
		q[chain + i].value = t[i].value;
		if (t[i].feature != REBUILD_TREE_LEAF) {
			q[chain + i].left = chain + t[i].left;
			q[chain + i].right = chain + t[i].right;
		}
	}
}

START_TEST(test_forest_sparse_special_inputs)
{
	struct rebuild_result res, res3;
	struct artifact a, a3, deep;
	struct rba_detail d;

	make_forest(0, &res);
	make_forest(1, &res3);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	ck_assert_int_eq(artifact_decode(res3.artifact, res3.artifact_len, &a3, &d), 0);
	special_agree(&a);
	special_agree(&a3);
	make_deep(&a, &deep);
	special_agree(&deep);
	memset(&deep.spec, 0, sizeof(deep.spec));
	artifact_release(&deep);
	make_hand(&deep, 0);
	special_agree(&deep);
	artifact_release(&deep);
	make_hand(&deep, 8);
	special_agree(&deep);
	artifact_release(&deep);
	artifact_release(&a);
	artifact_release(&a3);
	rebuild_result_release(&res);
	rebuild_result_release(&res3);
}
END_TEST

/*
 * Random forests of trees the vector walks take (complete at depth 1 ..
 * 6, with leaves above the bottom) and of trees they leave to the
 * scalar walks (complete at depth 7 and 8, and deeper ones walked node
 * by node), of one margin and of three, with splits that send missing
 * values left: on every strict path this CPU has, the sparse scorer's
 * probabilities are the dense walk's bit for bit, on inputs at, next to
 * and between the thresholds, NaN and both zeros, given every input as a
 * term or only some, and (ABI 1) every input by columns.  The same
 * forests under XGBoost's rules (model/xgbtree.c's scorer) against a
 * walk of the nodes written here.
 */
/* The next draw of the test's stream (train/rng.h), *r its counter. */
static uint64_t
draw(uint64_t *r)
{
	return rng_u64(0x7472656573ull /* "trees" */, (*r)++) >> 33;
}

/* A random tree of depth at most depth from node *n on: its root. */
static uint32_t
grow(struct rebuild_tree_node *q, uint32_t *n, uint32_t depth, uint32_t nf,
     int root, uint64_t *r)
{
	uint32_t i = (*n)++, u = (uint32_t)draw(r);

	if (depth == 0 || (!root && u % 8 == 0)) {
		q[i].feature = REBUILD_TREE_LEAF;
		q[i].value = (float)((int)(u % 2001) - 1000) / 256.0f;
		return i;
	}
	q[i].feature = u % nf;
	q[i].threshold = (float)((int)((u >> 8) % 41) - 20) / 4.0f;
	q[i].flags = (u >> 16) % 3 == 0 ? REBUILD_TREE_DEFAULT_LEFT : 0;
	q[i].left = grow(q, n, depth - 1, nf, 0, r);
	q[i].right = grow(q, n, depth - 1, nf, 0, r);
	return i;
}

/* XGBoost's margins of forest f by a plain walk of its nodes, then its
 * transform: the reference for xgbtree.c's scorer. */
static void
xgb_plain(const struct rebuild_forest *f, const float *x, size_t n,
	  float *probs)
{
	uint32_t K = f->ngroups, nf = f->nfeatures;
	float *mg = malloc(n * K * sizeof(float));

	for (size_t c = 0; c < n; c++) {
		for (uint32_t g = 0; g < K; g++)
			mg[c * K + g] = f->base[g];
		for (uint32_t t = 0; t < f->ntrees; t++) {
			uint32_t i = f->tree_start[t];
			while (f->nodes[i].feature != REBUILD_TREE_LEAF) {
				const struct rebuild_tree_node *q = &f->nodes[i];
				i = rebuild_tree_goes_left(q, x[c * nf + q->feature])
					    ? q->left : q->right;
			}
			mg[c * K + t % K] += f->nodes[i].value;
		}
	}
	xgbtree_transform(f, mg, n, probs);
	free(mg);
}

/* The ways of walking of strict path isa (RBA_STRICT_ISA set to it). */
static size_t
ways_under(const char *isa, tw_walk_fn *ways[TW_MAXWAYS],
	   const char *names[TW_MAXWAYS])
{
	setenv("RBA_STRICT_ISA", isa, 1);
	return tw_ways(ways, names);
}

/* (every way of every strict path: RBA_TREE_WALK names each) */
static void
vector_walks_agree(uint32_t nclasses, uint64_t seed, int xgb)
{
	static const uint32_t depths[] = { 6, 1, 2, 3, 4, 5, 6, 7, 8, 6, 12, 6 };
	const uint32_t nf = 5, nt = sizeof(depths) / sizeof(depths[0]);
	const size_t counts[] = { 1, 7, 8, 9, 16, 17, 79, 80, 81, 203 };
	struct rebuild_tree_node *q = calloc(1u << 14, sizeof(*q));
	struct rebuild_model m;
	uint32_t n = 0, starts[16];
	const char *isas[3], *run_isa[3 * TW_MAXWAYS], *run_way[3 * TW_MAXWAYS];
	char lab[3 * TW_MAXWAYS][32];
	size_t nisa = kernel_strict_isas(isas), nrun = 0;
	uint64_t r = seed << 32; /* each seed its own run of the stream */

	/* every strict path, and each of its ways of walking */
	for (size_t a = 0; a < nisa; a++) {
		tw_walk_fn *ways[TW_MAXWAYS];
		const char *names[TW_MAXWAYS];
		size_t nw = ways_under(isas[a], ways, names);
		for (size_t w = 0; w < (nw ? nw : 1); w++) {
			run_isa[nrun] = isas[a];
			run_way[nrun] = nw ? names[w] : "";
			snprintf(lab[nrun], sizeof(lab[nrun]), "%s %s", isas[a],
				 run_way[nrun]);
			nrun++;
		}
	}
	for (uint32_t t = 0; t < nt; t++) {
		uint32_t at = n;
		starts[t] = at;
		grow(q, &n, depths[t], nf, 1, &r);
	}
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(rebuild_forest_alloc(&m, nf, nclasses, 0, nt, n), 0);
	memcpy(m.forest.nodes, q, n * sizeof(*q));
	memcpy(m.forest.tree_start, starts, nt * sizeof(uint32_t));
	m.forest.tree_start[nt] = n;
	for (uint32_t g = 0; g < m.forest.ngroups; g++)
		m.forest.base[g] = 0.25f * (float)g - 0.125f;
	if (xgb)
		m.forest.rules = nclasses == 2 ? REBUILD_FOREST_XGB_SIGMOID
					       : REBUILD_FOREST_XGB_SOFTMAX;
	for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
		size_t nc = counts[ci], C = nclasses;
		float *x = calloc(nc * nf, sizeof(float));
		float *tx = calloc(nc * nf, sizeof(float));
		uint32_t *row = calloc(nc * nf, sizeof(uint32_t));
		float *dense = calloc(nc * C, sizeof(float));
		float *sparse = calloc(nc * C, sizeof(float));

		for (size_t i = 0; i < nc * nf; i++) {
			uint32_t u = (uint32_t)draw(&r);
			float v = (float)((int)(u % 41) - 20) / 4.0f;
			switch ((u >> 8) % 8) {
			case 0: v = nextafterf(v, -INFINITY); break;
			case 1: v = nextafterf(v, INFINITY); break;
			case 2: v = (u >> 12) % 2 ? NAN : -0.0f; break;
			case 3: v = (float)((int)(u >> 12) % 1201 - 600) / 100.0f; break;
			default: break;
			}
			x[i] = v;
		}
		/* every input a term, then about half of them */
		for (int some = 0; some < 2; some++) {
			size_t nterms = some ? 3 : nf;
			for (size_t i = 0; i < nc; i++)
				for (size_t k = 0; k < nterms; k++) {
					uint32_t j = some ? (uint32_t)((i + 2 * k) % nf)
							  : (uint32_t)k;
					row[i * nterms + k] = j;
					tx[i * nterms + k] = x[i * nf + j];
				}
			if (some)
				for (size_t i = 0; i < nc; i++)
					for (uint32_t j = 0; j < nf; j++) {
						int used = 0;
						for (size_t k = 0; k < nterms; k++)
							used |= row[i * nterms + k] == j;
						if (!used)
							x[i * nf + j] = 0.0f;
					}
			if (xgb)
				xgb_plain(&m.forest, x, nc, dense);
			else
				ck_assert_int_eq(rebuild_predict(1, &m, x, nc, dense), 0);
			for (size_t a = 0; a < nrun; a++) {
				struct rebuild_sparse *sp;
				setenv("RBA_STRICT_ISA", run_isa[a], 1);
				setenv("RBA_TREE_WALK", run_way[a], 1);
				if (xgb)
					ck_assert_int_eq(xgbtree_sparse_new(&m, &sp), 0);
				else
					ck_assert_int_eq(rebuild_sparse_new(1, &m, &sp), 0);
				/* ABI 1's forests also by columns (rows ld = nc
				 * + 3 apart), before the terms: what the columns
				 * leave behind must not change the terms' scores */
				ck_assert_int_eq(rebuild_sparse_takes_cols(sp), !xgb);
				if (!xgb) {
					size_t ld = nc + 3;
					float *xc = malloc(nf * ld * sizeof(float));
					for (size_t i = 0; i < nf * ld; i++)
						xc[i] = 1e30f; /* not read */
					for (size_t i = 0; i < nc; i++)
						for (uint32_t j = 0; j < nf; j++)
							xc[j * ld + i] = x[i * nf + j];
					memset(sparse, 0xff, nc * C * sizeof(float));
					rebuild_sparse_score_cols(sp, xc, ld, nc, sparse);
					for (size_t i = 0; i < nc * C; i++)
						ck_assert_msg(memcmp(&dense[i], &sparse[i], 4) == 0,
							      "%s by columns, %u classes, %zu "
							      "cases: probability %zu %a, dense %a",
							      lab[a], nclasses, nc, i,
							      (double)sparse[i], (double)dense[i]);
					/* then inputs none of which is zero */
					for (size_t i = 0; i < nf * ld; i++)
						xc[i] = 2.5f;
					rebuild_sparse_score_cols(sp, xc, ld, nc, sparse);
					free(xc);
				}
				memset(sparse, 0xff, nc * C * sizeof(float));
				rebuild_sparse_score(sp, tx, row, nterms, nc, sparse);
				rebuild_sparse_free(sp);
				for (size_t i = 0; i < nc * C; i++)
					ck_assert_msg(memcmp(&dense[i], &sparse[i], 4) == 0,
						      "%s%s, %u classes, %zu cases, %zu terms: "
						      "probability %zu %a, dense %a",
						      lab[a], xgb ? " (XGBoost)" : "",
						      nclasses, nc, nterms, i,
						      (double)sparse[i], (double)dense[i]);
			}
		}
		free(x);
		free(tx);
		free(row);
		free(dense);
		free(sparse);
	}
	unsetenv("RBA_STRICT_ISA");
	unsetenv("RBA_TREE_WALK");
	rebuild_model_release(&m);
	free(q);
}

START_TEST(test_forest_vector_walks)
{
	for (uint64_t seed = 1; seed <= 6; seed++)
		for (int xgb = 0; xgb < 2; xgb++) {
			vector_walks_agree(2, seed, xgb);
			vector_walks_agree(3, seed, xgb);
		}
}
END_TEST

/*
 * tw_vectors takes the way RBA_TREE_WALK names, on every path; unset, or
 * a name no way has, it times the ways and takes one of them.
 */
START_TEST(test_tree_walk_plan)
{
	uint64_t fnode[64];
	float fval[128];
	struct tw_shape tr;
	const char *isas[3];
	size_t nisa = kernel_strict_isas(isas);

	for (uint32_t p = 1; p < 64; p++)
		fnode[p] = (uint64_t)(0x80000000u + p) << 32 |
			   (p % 2) * TW_BLOCK; /* rows 0 and 1 */
	for (uint32_t c = 0; c < 128; c++)
		fval[c] = (float)c;
	for (size_t a = 0; a < nisa; a++) {
		tw_walk_fn *ways[TW_MAXWAYS];
		const char *names[TW_MAXWAYS];
		size_t nw = ways_under(isas[a], ways, names);
		ck_assert(tw_walk_pick() == (nw ? ways[0] : NULL));
		for (size_t w = 0; w <= nw + 1; w++) {
			struct tw_vec v;
			int named = w < nw, any = 0;
			memset(&tr, 0, sizeof(tr));
			tr.depth = 6;
			tr.full = 1;
			if (named)
				setenv("RBA_TREE_WALK", names[w], 1);
			else if (w == nw)
				unsetenv("RBA_TREE_WALK");
			else
				setenv("RBA_TREE_WALK", "no such way", 1);
			ck_assert_int_eq(tw_vectors(&tr, 1, fnode, fval, 2, &v), 0);
			if (nw == 0) {
				ck_assert(v.walk == NULL);
				ck_assert_uint_eq(tr.vdepth, 0);
				continue;
			}
			ck_assert_uint_eq(tr.vdepth, 6);
			for (size_t u = 0; u < nw; u++)
				any |= v.walk == ways[u];
			ck_assert_msg(named ? v.walk == ways[w] : any,
				      "%s: way %zu", isas[a], w);
			tw_vec_free(&v);
		}
	}
	unsetenv("RBA_STRICT_ISA");
	unsetenv("RBA_TREE_WALK");
}
END_TEST

/* ---- reasons (model/explain.h) ------------------------------------- */

/*
 * A logistic model small enough to explain by hand: columns income
 * (numeric, standardized by mean 50 and scale 10) and home (levels own,
 * rent), classes no and yes (positive yes).  Logits: z_no = 0, z_yes =
 * 0.5 + 2 x_income - 1 x_own + 3 x_rent.
 */
static void
hand_logistic(struct artifact *a)
{
	static char *homes[] = { "own", "rent" };
	static char *classes[] = { "no", "yes" };
	static struct encode_column cols[2];
	static float mean[3] = { 50.0f, 0.0f, 0.0f }, scale[3] = { 10.0f, 1.0f, 1.0f };
	uint32_t sizes[2] = { 3, 2 };

	memset(a, 0, sizeof(*a));
	a->abi = 1;
	cols[0] = (struct encode_column){ "income", ENCODE_NUMERIC, 0, NULL };
	cols[1] = (struct encode_column){ "home", ENCODE_CATEGORICAL, 2, homes };
	a->spec.label = "class";
	a->spec.nclasses = 2;
	a->spec.classes = classes;
	a->spec.positive = 1;
	a->spec.ncolumns = 2;
	a->spec.columns = cols;
	a->spec.nfeatures = 3;
	a->spec.mean = mean;
	a->spec.scale = scale;
	ck_assert_int_eq(rebuild_model_alloc(&a->model, 1, sizes), 0);
	/* W[in][out]: column yes */
	a->model.w[0][0 * 2 + 1] = 2.0f;
	a->model.w[0][1 * 2 + 1] = -1.0f;
	a->model.w[0][2 * 2 + 1] = 3.0f;
	a->model.b[0][1] = 0.5f;
}

START_TEST(test_explain_logistic_by_hand)
{
	struct artifact a;
	struct explain_baseline b;
	struct explain_result r;
	struct rba_detail d;
	/* training means of the model's inputs: income 0.2 standard
	 * deviations above its standardization mean; 75% own, 25% rent */
	double fm[3] = { 0.2, 0.75, 0.25 }, cm[2] = { 52.0, NAN };
	uint32_t mode[2] = { 0, 0 };
	float raw[3] = { 35.0f, 0.0f, 1.0f }; /* income 35, rents */

	hand_logistic(&a);
	b = (struct explain_baseline){ 3, 2, 100, fm, cm, mode };
	ck_assert_int_eq(explain_method_of(&a), EXPLAIN_LINEAR);
	rba_detail_clear(&d);
	ck_assert_int_eq(explain_case(&a, &b, raw, 1, &r, &d), 0);
	/* income: 2 (-1.5 - 0.2) = -3.4; home: -1 (0 - 0.75) + 3 (1 - 0.25)
	 * = 3.0; baseline 0.5 + 2 (0.2) - 0.75 + 3 (0.25) = 0.9; margin
	 * 0.5 + 2 (-1.5) + 3 = 0.5 */
	ck_assert_int_eq(r.method, EXPLAIN_LINEAR);
	ck_assert(fabs(r.contrib[0] - -3.4) < 1e-12);
	ck_assert(fabs(r.contrib[1] - 3.0) < 1e-12);
	ck_assert(fabs(r.baseline - 0.9) < 1e-12);
	ck_assert(fabs(r.margin - 0.5) < 1e-12);
	ck_assert(fabs(r.sum - r.margin) <= EXPLAIN_TOLERANCE);
	explain_result_release(&r);
	/* class no: every sign turns */
	ck_assert_int_eq(explain_case(&a, &b, raw, 0, &r, &d), 0);
	ck_assert(fabs(r.contrib[0] - 3.4) < 1e-12);
	ck_assert(fabs(r.contrib[1] - -3.0) < 1e-12);
	ck_assert(fabs(r.margin - -0.5) < 1e-12);
	explain_result_release(&r);
	ck_assert_int_eq(explain_case(&a, &b, raw, 2, &r, &d), RBA_E_RANGE);
	/* a network reads its baseline: none is refused */
	ck_assert_int_eq(explain_case(&a, NULL, raw, 1, &r, &d), RBA_E_RANGE);
	rebuild_model_release(&a.model);
}
END_TEST

/*
 * E[f(x) | x_S] of one tree by the cover-weighted traversal (Lundberg
 * et al. 2018, Algorithm 1), the value function path-dependent TreeSHAP
 * takes the Shapley values of; S is a bit set over feats.
 */
static double
tree_expvalue(const struct rebuild_tree_node *n, uint32_t i, const float *x,
	      const uint32_t *feats, uint32_t nfe, unsigned S)
{
	double cl, cr;

	if (n[i].feature == REBUILD_TREE_LEAF)
		return n[i].value;
	for (uint32_t k = 0; k < nfe; k++)
		if (feats[k] == n[i].feature && (S >> k & 1u))
			return tree_expvalue(n, rebuild_tree_goes_left(&n[i],
									 x[n[i].feature])
						       ? n[i].left : n[i].right,
					     x, feats, nfe, S);
	cl = n[n[i].left].cover;
	cr = n[n[i].right].cover;
	return (cl * tree_expvalue(n, n[i].left, x, feats, nfe, S) +
		cr * tree_expvalue(n, n[i].right, x, feats, nfe, S)) / (cl + cr);
}

/* The Shapley values of one tree by enumeration, added into phi. */
static void
tree_shapley_brute(const struct rebuild_forest *fo, uint32_t t, const float *x,
		   double *phi)
{
	const struct rebuild_tree_node *n = fo->nodes;
	uint32_t feats[32], nfe = 0;
	double fact[33];

	for (uint32_t i = fo->tree_start[t]; i < fo->tree_start[t + 1]; i++) {
		uint32_t k;
		if (n[i].feature == REBUILD_TREE_LEAF)
			continue;
		for (k = 0; k < nfe && feats[k] != n[i].feature; k++)
			;
		if (k == nfe)
			feats[nfe++] = n[i].feature;
	}
	fact[0] = 1;
	for (uint32_t k = 1; k <= nfe; k++)
		fact[k] = fact[k - 1] * k;
	for (uint32_t j = 0; j < nfe; j++)
		for (unsigned S = 0; S < 1u << nfe; S++) {
			unsigned s = (unsigned)__builtin_popcount(S);
			if (S >> j & 1u)
				continue;
			phi[feats[j]] += fact[s] * fact[nfe - s - 1] / fact[nfe] *
					 (tree_expvalue(n, fo->tree_start[t], x, feats,
							nfe, S | 1u << j) -
					  tree_expvalue(n, fo->tree_start[t], x, feats,
							nfe, S));
		}
}

/*
 * The German credit fixture under pins NAME: every case of the first
 * ncases explained; contributions plus baseline give the margin within
 * EXPLAIN_TOLERANCE, and the margin gives the model's own float32
 * probability within 1e-5.  Trees: the contributions are the
 * enumerated Shapley values of the cover-weighted expectation.
 */
static void
explain_german_on(const char *name, const char *csv, size_t ncases,
		  double tol)
{
	char path[256];
	struct pins *p;
	struct rebuild_result res;
	struct artifact a;
	struct explain_baseline b;
	struct csv_table *t;
	struct rba_detail d;
	uint8_t *sn;
	size_t n, nf;
	float *raw, *probs;
	double worst = 0, worstp = 0, t0 = rba_time_mono();

	snprintf(path, sizeof(path), FIXTURES "/pins/%s.yaml", name);
	rba_detail_clear(&d);
	ck_assert_msg(policy_pins_load(path, &p, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(rba_file_read(csv, 1u << 24, &sn, &n, &d), 0);
	ck_assert_msg(rebuild_from_snapshot(p, 0, sn, n, "g.csv", NULL, &res, &d) == 0,
		      "%s", d.reason);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	ck_assert_msg(explain_baseline_fit(p, &a, sn, n, "g.csv", &b, &d) == 0, "%s",
		      d.reason);
	{
		struct csv_missing m = encode_missing(&a.spec);
		ck_assert_int_eq(csv_table_load_mem_missing(sn, n, "g.csv", &m, &t,
							    &d), 0);
	}
	nf = a.spec.nfeatures;
	raw = malloc(t->nrows * nf * sizeof(float));
	probs = malloc(t->nrows * a.spec.nclasses * sizeof(float));
	ck_assert_int_eq(encode_table(&a.spec, t, raw, &d), 0);
	ck_assert_int_eq(artifact_score(&a, raw, t->nrows, probs), 0);
	if (ncases > t->nrows)
		ncases = t->nrows;
	for (size_t i = 0; i < ncases; i++) {
		struct explain_result r;
		uint32_t pos = a.spec.positive;
		double e, pm;
		ck_assert_msg(explain_case(&a, &b, raw + i * nf, pos, &r, &d) == 0, "%s",
			      d.reason);
		e = fabs(r.sum - r.margin);
		if (e > worst)
			worst = e;
		ck_assert_msg(e <= tol, "%s case %zu: %.17g vs %.17g",
			      name, i, r.sum, r.margin);
		pm = 1.0 / (1.0 + exp(-r.margin));
		if (fabs(pm - probs[i * 2 + pos]) > worstp)
			worstp = fabs(pm - probs[i * 2 + pos]);
		ck_assert_msg(fabs(pm - probs[i * 2 + pos]) <= 1e-5,
			      "%s case %zu: probability %.9g vs the model's %.9g", name,
			      i, pm, probs[i * 2 + pos]);
		if (r.method == EXPLAIN_TREESHAP && i < 25) {
			/* against enumeration, per feature, then per column */
			const struct rebuild_forest *fo = &a.model.forest;
			double *phi = calloc(nf, sizeof(double));
			float *x = malloc(nf * sizeof(float));
			encode_standardize(&a.spec, raw + i * nf, 1, x);
			for (uint32_t tr = 0; tr < fo->ntrees; tr++)
				tree_shapley_brute(fo, tr, x, phi);
			for (uint32_t c = 0, f = 0; c < a.spec.ncolumns; c++) {
				uint32_t w = encode_column_width(&a.spec.columns[c]);
				double s = 0;
				for (uint32_t k = 0; k < w; k++)
					s += phi[f + k];
				f += w;
				if (pos == 0)
					s = -s;
				ck_assert_msg(fabs(s - r.contrib[c]) < 1e-9,
					      "case %zu column %u: %.17g vs %.17g", i, c,
					      r.contrib[c], s);
			}
			free(phi);
			free(x);
		}
		explain_result_release(&r);
	}
	fprintf(stderr, "explain %s: %zu of %zu cases, largest |sum - margin| %.3g, "
		"largest |p(margin) - p| %.3g, %.1f s\n", name, ncases, t->nrows,
		worst, worstp, rba_time_mono() - t0);
	free(raw);
	free(probs);
	csv_table_free(t);
	explain_baseline_release(&b);
	artifact_release(&a);
	rebuild_result_release(&res);
	free(sn);
	policy_pins_free(p);
}

static void
explain_german(const char *name, size_t ncases)
{
	explain_german_on(name, FIXTURES "/german-credit.csv", ncases,
			  EXPLAIN_TOLERANCE);
}

START_TEST(test_explain_german_logistic)
{
	explain_german("german-categorical-logistic", 1000);
}
END_TEST

START_TEST(test_explain_german_gbdt)
{
	explain_german("german-categorical-gbdt", 1000);
}
END_TEST


/*
 * Native categorical splits trained on German credit: format 4, level
 * sets on the native columns only; the training's validation curve
 * (level sets on the rows' values) ends on the loss and AUC of the
 * artifact's own forward pass; TreeSHAP adds up on every case (1e-9)
 * and matches enumeration.
 */
START_TEST(test_explain_german_native)
{
	struct pins *p;
	struct rebuild_result res;
	struct artifact a;
	struct rba_detail d;
	uint8_t *sn;
	size_t n, ncat = 0;

	rba_detail_clear(&d);
	ck_assert_int_eq(policy_pins_load(FIXTURES "/pins/german-native-gbdt.yaml",
					  &p, &d), 0);
	ck_assert_int_eq(rba_file_read(FIXTURES "/german-credit.csv", 1u << 24,
				       &sn, &n, &d), 0);
	ck_assert_msg(rebuild_from_snapshot(p, 0, sn, n, "g.csv", NULL, &res, &d) == 0,
		      "%s", d.reason);
	ck_assert_uint_eq(res.artifact[8], ARTIFACT_FORMAT_NATIVE);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	for (size_t i = 0; i < a.model.forest.tree_start[a.model.forest.ntrees]; i++) {
		const struct rebuild_tree_node *q = &a.model.forest.nodes[i];
		uint32_t c, f = 0;
		if (q->feature == REBUILD_TREE_LEAF ||
		    !(q->flags & REBUILD_TREE_CATEGORICAL))
			continue;
		ncat++;
		for (c = 0; c < a.spec.ncolumns; c++) {
			if (f == q->feature)
				break;
			f += encode_column_width(&a.spec.columns[c]);
		}
		ck_assert_int_eq(a.spec.columns[c].kind, ENCODE_NATIVE);
		ck_assert_uint_le(q->ncats, 64);
		ck_assert_uint_lt(q->cats[q->ncats - 1], a.spec.columns[c].nlevels);
	}
	ck_assert_uint_gt(ncat, 20);
	ck_assert(res.report.final.val_loss == res.eval.loss);
	ck_assert(res.report.final.val_auc == res.eval.auc);
	artifact_release(&a);
	rebuild_result_release(&res);
	free(sn);
	policy_pins_free(p);
	explain_german("german-native-gbdt", 1000);
}
END_TEST

/*
 * Trees with missing values: TreeSHAP adds up to the margin on every
 * case to 1e-9, and matches enumeration (a missing input goes the side
 * its split learned; the other side is weighted by its cover).
 */
START_TEST(test_explain_german_missing)
{
	explain_german_on("german-categorical-missing-gbdt",
			  FIXTURES "/german-credit-missing.csv", 1000, 1e-9);
	explain_german_on("german-numeric-missing-gbdt",
			  FIXTURES "/german-credit-numeric-missing.csv", 1000, 1e-9);
}
END_TEST

/* A pins file of fixtures/pins trained on a fixture, decoded. */
static void
train_fixture(const char *name, const char *csv, struct rebuild_result *res,
	      struct artifact *a, uint8_t **snapshot, size_t *nsnap)
{
	char path[256];
	struct pins *p;
	struct rba_detail d;

	snprintf(path, sizeof(path), FIXTURES "/pins/%s.yaml", name);
	rba_detail_clear(&d);
	ck_assert_msg(policy_pins_load(path, &p, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(rba_file_read(csv, 1u << 24, snapshot, nsnap, &d), 0);
	ck_assert_msg(rebuild_from_snapshot(p, 0, *snapshot, *nsnap, "g.csv", NULL, res,
					    &d) == 0, "%s", d.reason);
	ck_assert_int_eq(artifact_decode(res->artifact, res->artifact_len, a, &d),
			 0);
	policy_pins_free(p);
}

/*
 * The root of a one-split tree on x (class yes when x >= 5) with three
 * training rows missing x: they go the side whose rows they are like,
 * left with class no (below the edge), right with class yes (flags 0);
 * with no missing row the split sends a missing value right.
 */
static uint32_t
root_flags(const char *sn)
{
	struct pins p;
	struct rba_detail d;
	struct rebuild_result res;
	struct artifact a;
	uint32_t fl;

	test_pins(&p, 0);
	rba_digest_bytes(sn, strlen(sn), &p.snapshot);
	p.data.ncategorical = 0;
	p.data.standardize = 0;
	p.data.split_order = PINS_SPLIT_TAIL;
	p.model.kind = PINS_MODEL_GBDT;
	p.model.gbdt.trees = 1;
	p.model.gbdt.max_depth = 1;
	p.model.gbdt.learning_rate = 0.3;
	p.model.gbdt.min_child_weight = 0;
	p.model.gbdt.lambda = 1;
	p.model.gbdt.max_bins = 16;
	p.model.gbdt.subsample = 1;
	p.model.gbdt.colsample = 1;
	rba_detail_clear(&d);
	ck_assert_msg(rebuild_from_snapshot(&p, 0, sn, strlen(sn), "m.csv", NULL, &res,
					    &d) == 0, "%s", d.reason);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	ck_assert_uint_eq(a.model.forest.nodes[0].feature, 0);
	ck_assert(a.model.forest.nodes[0].threshold == 5.0f);
	fl = a.model.forest.nodes[0].flags;
	artifact_release(&a);
	rebuild_result_release(&res);
	return fl;
}

START_TEST(test_missing_direction)
{
	static const char like_no[] =
		"id,x,class\n1,1,no\n2,,no\n3,2,no\n4,,no\n5,3,no\n6,4,no\n"
		"7,,no\n8,5,yes\n9,6,yes\n10,7,yes\n11,8,yes\n12,9,yes\n"
		"13,1,no\n14,8,yes\n15,2,no\n16,7,yes\n";
	static const char like_yes[] =
		"id,x,class\n1,1,no\n2,,yes\n3,2,no\n4,,yes\n5,3,no\n6,4,no\n"
		"7,,yes\n8,5,yes\n9,6,yes\n10,7,yes\n11,8,yes\n12,9,yes\n"
		"13,1,no\n14,8,yes\n15,2,no\n16,7,yes\n";
	static const char none[] =
		"id,x,class\n1,1,no\n2,2,no\n3,3,no\n4,4,no\n5,5,yes\n6,6,yes\n"
		"7,7,yes\n8,8,yes\n9,1,no\n10,8,yes\n11,2,no\n12,7,yes\n";

	ck_assert_uint_eq(root_flags(like_no), REBUILD_TREE_DEFAULT_LEFT);
	ck_assert_uint_eq(root_flags(like_yes), 0);
	ck_assert_uint_eq(root_flags(none), 0);
}
END_TEST

/*
 * A forest trained with missing values: format 3, splits that send them
 * left, canonical bytes back, the sparse scorer bit for bit the forward
 * pass; a split of type 2 in format 2, tokens out of order and an
 * imputation in a forest are refused.
 */
START_TEST(test_forest_missing)
{
	struct rebuild_result res;
	struct artifact a;
	struct rba_buf b;
	struct rba_detail d;
	uint8_t *sn, *cp;
	size_t n, left = 0, nan = 0;
	char *text;

	train_fixture("german-categorical-missing-gbdt",
		      FIXTURES "/german-credit-missing.csv", &res, &a, &sn, &n);
	ck_assert_uint_eq(rba_get_u32le(res.artifact + 8), ARTIFACT_FORMAT_MISSING);
	ck_assert_uint_eq(a.spec.nmissing, 2);
	ck_assert_str_eq(a.spec.missing[0], "");
	ck_assert_str_eq(a.spec.missing[1], "NA");
	for (size_t i = 0; i < a.model.forest.tree_start[a.model.forest.ntrees]; i++)
		left += (a.model.forest.nodes[i].flags & REBUILD_TREE_DEFAULT_LEFT) != 0;
	ck_assert_uint_gt(left, 0);
	rba_buf_init(&b);
	ck_assert_int_eq(artifact_encode(&a, &b), 0);
	ck_assert_uint_eq(b.len, res.artifact_len);
	ck_assert(memcmp(b.p, res.artifact, b.len) == 0);
	text = malloc(n + 1);
	memcpy(text, sn, n);
	text[n] = 0;
	for (size_t i = 0; i + 1 < n; i++)
		nan += text[i] == ',' && text[i + 1] == ',';
	ck_assert_uint_gt(nan, 0);
	scores_agree(&a, text, 1000);
	/* a split that sends missing values left has no place in format 2 */
	cp = malloc(res.artifact_len);
	memcpy(cp, res.artifact, res.artifact_len);
	rba_put_u32le(cp + 8, ARTIFACT_FORMAT_TREES);
	rba_detail_clear(&d);
	expect(cp, res.artifact_len, RBA_E_CORRUPT, "");
	free(cp);
	/* tokens out of canonical order; an imputation in a forest */
	{
		char *t0 = a.spec.missing[0];
		a.spec.missing[0] = a.spec.missing[1];
		a.spec.missing[1] = t0;
		b.len = 0;
		ck_assert_int_eq(artifact_encode(&a, &b), 0);
		expect(b.p, b.len, RBA_E_CORRUPT, "canonical order");
		a.spec.missing[1] = a.spec.missing[0];
		a.spec.missing[0] = t0;
		a.spec.impute = calloc(a.spec.nfeatures, sizeof(float));
		b.len = 0;
		ck_assert_int_eq(artifact_encode(&a, &b), RBA_E_RANGE);
	}
	rba_buf_release(&b);
	free(text);
	free(sn);
	artifact_release(&a);
	rebuild_result_release(&res);
}
END_TEST

/*
 * The MLP cases to explain: EXPLAIN_MLP_CASES, or RBA_EXPLAIN_MLP_CASES
 * ("all": SIZE_MAX, every case); 0 for a value that is neither.
 */
static size_t
explain_mlp_cases(void)
{
	const char *env = getenv("RBA_EXPLAIN_MLP_CASES");
	char *end;
	unsigned long long n;

	if (env == NULL || *env == '\0')
		return EXPLAIN_MLP_CASES;
	if (strcmp(env, "all") == 0)
		return SIZE_MAX;
	if (*env < '0' || *env > '9')
		return 0;
	n = strtoull(env, &end, 10);
	return *end == '\0' ? (size_t)n : 0; /* a huge count is every case */
}

START_TEST(test_explain_german_mlp)
{
	size_t n = explain_mlp_cases();

	ck_assert_msg(n > 0, "RBA_EXPLAIN_MLP_CASES is '%s': a count of cases, or all",
		      getenv("RBA_EXPLAIN_MLP_CASES"));
	explain_german("german-categorical-mlp", n);
}
END_TEST

/* Multiclass forests and networks: the decided class's margin adds up. */
START_TEST(test_explain_multiclass)
{
	struct rebuild_result res;
	struct artifact a;
	struct explain_baseline b;
	struct pins p;
	struct csv_table *t;
	struct rba_detail d;
	float raw[16 * 8];

	for (int kind = 0; kind < 2; kind++) {
		if (kind == 0) {
			make_forest(1, &res);
			test_pins(&p, 0);
			p.data.positive = NULL;
			p.data.standardize = 1;
		} else {
			test_pins(&p, 2);
			rba_digest_bytes(snap3, strlen(snap3), &p.snapshot);
			p.data.positive = NULL;
			rba_detail_clear(&d);
			ck_assert_int_eq(rebuild_from_snapshot(&p, 0, snap3, strlen(snap3),
							       "s.csv", NULL, &res, &d), 0);
		}
		rba_detail_clear(&d);
		ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
		ck_assert_int_eq(explain_baseline_fit(&p, &a, snap3, strlen(snap3), "s.csv",
						      &b, &d), 0);
		ck_assert_int_eq(csv_table_load_mem(snap3, strlen(snap3), "s.csv", &t, &d), 0);
		ck_assert_uint_le(t->nrows * a.spec.nfeatures, 16 * 8);
		ck_assert_int_eq(encode_table(&a.spec, t, raw, &d), 0);
		for (size_t i = 0; i < t->nrows; i++)
			for (uint32_t c = 0; c < 3; c++) {
				struct explain_result r;
				ck_assert_int_eq(explain_case(&a, &b, raw + i * a.spec.nfeatures,
							      c, &r, &d), 0);
				ck_assert(fabs(r.sum - r.margin) <= EXPLAIN_TOLERANCE);
				explain_result_release(&r);
			}
		csv_table_free(t);
		explain_baseline_release(&b);
		artifact_release(&a);
		rebuild_result_release(&res);
	}
}
END_TEST


/* ---- categorical splits (REBUILD_TREE_CATEGORICAL) ------------------- */

/*
 * Two trees on three inputs: 0 and 2 level indexes of native columns
 * (6 and 4 levels), 1 a number.  Tree 0: f0 in {1, 3, 4} ? (f1 < 0.5 ?
 * 0.5 : -0.25) : (f2 in {0} ? 1.0 : -1.0); tree 1: f2 in {1, 2, 3} ?
 * (f0 in {0, 5} ? 0.125 : 0.75) : -0.5.  Covers make the weights uneven.
 */
static void
make_cat(struct artifact *h)
{
	static const uint32_t sets[] = { 1, 3, 4, 0, 1, 2, 3, 0, 5 };
	static const struct {
		uint32_t feature, left, right, set, nset;
		float threshold, value, cover;
	} t[] = {
		{ 0, 1, 4, 0, 3, 0, 0, 20 },
		{ 1, 2, 3, 0, 0, 0.5f, 0, 12 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 0.5f, 5 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, -0.25f, 7 },
		{ 2, 5, 6, 3, 1, 0, 0, 8 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 1.0f, 3 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, -1.0f, 5 },
		/* tree 1 */
		{ 2, 1, 4, 4, 3, 0, 0, 20 },
		{ 0, 2, 3, 7, 2, 0, 0, 11 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 0.125f, 4 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 0.75f, 7 },
		{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, -0.5f, 9 },
	};
	uint32_t n = sizeof(t) / sizeof(t[0]);
	struct rebuild_forest *f;
	static char *names[] = { "employer", "income", "region" };

	memset(h, 0, sizeof(*h));
	h->abi = 1;
	ck_assert_int_eq(rebuild_forest_alloc(&h->model, 3, 2, 1, 2, n), 0);
	f = &h->model.forest;
	f->edge_start[1] = 0;
	f->edge_start[2] = 1;
	f->edge_start[3] = 1;
	f->edges[0] = 0.5f;
	f->tree_start[1] = 7;
	f->tree_start[2] = n;
	f->base[0] = 0.1f;
	f->cats = malloc(sizeof(sets));
	ck_assert_ptr_nonnull(f->cats);
	memcpy(f->cats, sets, sizeof(sets));
	f->ncats = sizeof(sets) / sizeof(sets[0]);
	for (uint32_t i = 0; i < n; i++) {
		struct rebuild_tree_node *q = &f->nodes[i];
		uint32_t root = i < 7 ? 0 : 7;
		q->feature = t[i].feature;
		q->value = t[i].value;
		q->cover = t[i].cover;
		if (t[i].feature == REBUILD_TREE_LEAF)
			continue;
		q->left = root + t[i].left;
		q->right = root + t[i].right;
		if (t[i].nset > 0) {
			q->flags = REBUILD_TREE_CATEGORICAL;
			q->cats = f->cats + t[i].set;
			q->ncats = t[i].nset;
		} else {
			q->threshold = t[i].threshold;
		}
	}
	/* a spec of three numeric inputs, mean 0 and scale 1, for the
	 * scorers and the explainer (each column one feature) */
	h->spec.nclasses = 2;
	h->spec.ncolumns = 3;
	h->spec.nfeatures = 3;
	h->spec.positive = 1;
	h->spec.columns = calloc(3, sizeof(*h->spec.columns));
	h->spec.mean = calloc(3, sizeof(float));
	h->spec.scale = malloc(3 * sizeof(float));
	ck_assert_ptr_nonnull(h->spec.columns);
	ck_assert_ptr_nonnull(h->spec.scale);
	for (int c = 0; c < 3; c++) {
		h->spec.columns[c].name = names[c];
		h->spec.columns[c].kind = ENCODE_NUMERIC;
		h->spec.scale[c] = 1.0f;
	}
}

static void
cat_release(struct artifact *h)
{
	free(h->spec.columns);
	free(h->spec.mean);
	free(h->spec.scale);
	memset(&h->spec, 0, sizeof(h->spec));
	artifact_release(h);
}

/* The inputs of case i: levels in and out of range, whole and not,
 * NaN, numbers on both sides of the threshold. */
static void
cat_case(size_t i, float *x)
{
	static const float lv[] = { 0, 1, 2, 3, 4, 5, 6, 99, -1, 2.5f, NAN,
				    -0.0f, 16777216.0f, 1e30f, -INFINITY };
	size_t nl = sizeof(lv) / sizeof(lv[0]);

	x[0] = lv[i % nl];
	x[1] = (i / nl) % 3 == 0 ? 0.25f : (i / nl) % 3 == 1 ? 0.5f : NAN;
	x[2] = lv[(i * 7 + 3) % nl];
}

START_TEST(test_cat_goes_left)
{
	struct artifact a;
	const struct rebuild_tree_node *q;

	make_cat(&a);
	q = &a.model.forest.nodes[0]; /* {1, 3, 4} */
	ck_assert(rebuild_tree_goes_left(q, 1.0f));
	ck_assert(rebuild_tree_goes_left(q, 3.0f));
	ck_assert(rebuild_tree_goes_left(q, 4.0f));
	ck_assert(!rebuild_tree_goes_left(q, 0.0f));
	ck_assert(!rebuild_tree_goes_left(q, -0.0f));
	ck_assert(!rebuild_tree_goes_left(q, 2.0f));
	ck_assert(!rebuild_tree_goes_left(q, 5.0f));
	/* an unseen level, no level at all, a missing value: right */
	ck_assert(!rebuild_tree_goes_left(q, 99.0f));
	ck_assert(!rebuild_tree_goes_left(q, 3.5f));
	ck_assert(!rebuild_tree_goes_left(q, -1.0f));
	ck_assert(!rebuild_tree_goes_left(q, NAN));
	ck_assert(!rebuild_tree_goes_left(q, INFINITY));
	ck_assert(!rebuild_tree_goes_left(q, 16777216.0f + 4.0f));
	/* the encoder refuses a categorical split on a feature that is
	 * not a native column's */
	{
		struct rba_buf b;
		rba_buf_init(&b);
		ck_assert_int_eq(artifact_encode(&a, &b), RBA_E_RANGE);
		rba_buf_release(&b);
	}
	cat_release(&a);
}
END_TEST

/* Dense, sparse and artifact_score give the same bits; the margins are
 * the hand walk's. */
START_TEST(test_cat_scorers_agree)
{
	struct artifact a;
	struct rebuild_sparse *sp;
	enum { N = 203 };
	float x[N * 3], dense[N * 2], sparse[N * 2], viaa[N * 2];
	float tx[N * 3];
	uint32_t row[N * 3];

	make_cat(&a);
	for (size_t i = 0; i < N; i++) {
		cat_case(i, x + i * 3);
		for (int j = 0; j < 3; j++) {
			tx[i * 3 + j] = x[i * 3 + j];
			row[i * 3 + j] = (uint32_t)j;
		}
	}
	ck_assert_int_eq(rebuild_predict(a.abi, &a.model, x, N, dense), 0);
	ck_assert_int_eq(artifact_score(&a, x, N, viaa), 0);
	ck_assert(memcmp(dense, viaa, sizeof(dense)) == 0);
	ck_assert_int_eq(rebuild_sparse_new(a.abi, &a.model, &sp), 0);
	rebuild_sparse_score(sp, tx, row, 3, N, sparse);
	ck_assert(memcmp(dense, sparse, sizeof(dense)) == 0);
	/* terms of zero left out: an omitted input is level 0 */
	{
		size_t nt = 0;
		float tz[N * 3];
		uint32_t rz[N * 3];
		for (size_t i = 0; i < N; i++) {
			/* one term per case: input 1 (others 0) */
			tz[nt] = x[i * 3 + 1];
			rz[nt++] = 1;
			x[i * 3] = 0.0f;
			x[i * 3 + 2] = 0.0f;
		}
		ck_assert_int_eq(rebuild_predict(a.abi, &a.model, x, N, dense), 0);
		rebuild_sparse_score(sp, tz, rz, 1, N, sparse);
		ck_assert(memcmp(dense, sparse, sizeof(dense)) == 0);
	}
	rebuild_sparse_free(sp);
	/* by hand: case (3, 0.25, 0): tree 0 left-left 0.5, tree 1 f2 = 0
	 * not in {1, 2, 3}: -0.5; margin 0.1 + 0.5 - 0.5 = 0.1 */
	{
		float c[3] = { 3.0f, 0.25f, 0.0f }, p[2];
		ck_assert_int_eq(rebuild_predict(a.abi, &a.model, c, 1, p), 0);
		ck_assert(fabs(log((double)p[1] / (double)p[0]) - 0.1) < 1e-6);
		/* (99 unseen, 0.25, 2): tree 0 right, f2 = 2 not {0}: -1.0;
		 * tree 1 f2 in set, f0 = 99 not {0, 5}: 0.75 */
		c[0] = 99.0f;
		c[2] = 2.0f;
		ck_assert_int_eq(rebuild_predict(a.abi, &a.model, c, 1, p), 0);
		ck_assert(fabs(log((double)p[1] / (double)p[0]) - -0.15) < 1e-6);
	}
	cat_release(&a);
}
END_TEST

/* TreeSHAP on categorical splits: the contributions add up to the
 * margin (1e-9) and are the enumerated Shapley values. */
START_TEST(test_cat_treeshap)
{
	struct artifact a;
	struct explain_baseline b;
	double fm[3] = { 0, 0, 0 }, cm[3] = { 0, 0, 0 };
	uint32_t mode[3] = { 0, 0, 0 };

	make_cat(&a);
	b = (struct explain_baseline){ 3, 3, 100, fm, cm, mode };
	ck_assert_int_eq(explain_method_of(&a), EXPLAIN_TREESHAP);
	for (size_t i = 0; i < 90; i++) {
		struct explain_result r;
		struct rba_detail d;
		float x[3];
		double phi[3] = { 0, 0, 0 };
		cat_case(i, x);
		rba_detail_clear(&d);
		ck_assert_int_eq(explain_case(&a, &b, x, 1, &r, &d), 0);
		ck_assert_msg(fabs(r.sum - r.margin) <= 1e-9, "case %zu: %.17g vs %.17g",
			      i, r.sum, r.margin);
		for (uint32_t t = 0; t < a.model.forest.ntrees; t++)
			tree_shapley_brute(&a.model.forest, t, x, phi);
		for (int c = 0; c < 3; c++)
			ck_assert_msg(fabs(r.contrib[c] - phi[c]) <= 1e-9,
				      "case %zu column %d: %.17g vs %.17g", i, c,
				      r.contrib[c], phi[c]);
		explain_result_release(&r);
	}
	cat_release(&a);
}
END_TEST



/* make_cat with a spec of its own: employer (6 levels) and region (4)
 * native, income numeric; label "y", classes "0" and "1". */
static void
make_cat_native(struct artifact *h)
{
	static const char *emp[] = { "ACME", "Bolt", "Crane", "Dyna", "Echo",
				     "Fjord" };
	static const char *reg[] = { "east", "north", "south", "west" };
	struct encode_spec *sp;

	make_cat(h);
	free(h->spec.columns);
	free(h->spec.mean);
	free(h->spec.scale);
	memset(&h->spec, 0, sizeof(h->spec));
	sp = &h->spec;
	sp->label = strdup("y");
	sp->nclasses = 2;
	sp->classes = calloc(2, sizeof(char *));
	sp->classes[0] = strdup("0");
	sp->classes[1] = strdup("1");
	sp->positive = 1;
	sp->ncolumns = 3;
	sp->nfeatures = 3;
	sp->columns = calloc(3, sizeof(*sp->columns));
	sp->columns[0].name = strdup("employer");
	sp->columns[0].kind = ENCODE_NATIVE;
	sp->columns[0].nlevels = 6;
	sp->columns[0].levels = calloc(6, sizeof(char *));
	for (int i = 0; i < 6; i++)
		sp->columns[0].levels[i] = strdup(emp[i]);
	sp->columns[1].name = strdup("income");
	sp->columns[1].kind = ENCODE_NUMERIC;
	sp->columns[2].name = strdup("region");
	sp->columns[2].kind = ENCODE_NATIVE;
	sp->columns[2].nlevels = 4;
	sp->columns[2].levels = calloc(4, sizeof(char *));
	for (int i = 0; i < 4; i++)
		sp->columns[2].levels[i] = strdup(reg[i]);
	sp->mean = calloc(3, sizeof(float));
	sp->scale = malloc(3 * sizeof(float));
	for (int i = 0; i < 3; i++)
		sp->scale[i] = 1.0f;
	sp->nmissing = 1;
	sp->missing = calloc(2, sizeof(char *));
	sp->missing[0] = strdup("");
}

/* The offset of the first categorical split node's level count. */
static size_t
first_cat_count(const struct rba_buf *b)
{
	/* the first tree's root: type 3, feature 0 (u32), count 3 (u32),
	 * levels 1, 3, 4 */
	static const uint8_t pat[] = { 3, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0,
				       3, 0, 0, 0, 4, 0, 0, 0 };
	for (size_t i = 0; i + sizeof(pat) <= b->len; i++)
		if (memcmp(b->p + i, pat, sizeof(pat)) == 0)
			return i + 5;
	ck_abort_msg("no categorical split in the bytes");
	return 0;
}

/* Format 4: a round trip gives the same bytes, levels and scores; the
 * loader refuses a level index out of range, a set longer than its
 * column's levels or than the bytes left, levels out of order, a
 * categorical split on a feature that is not native, and format 3
 * bytes with a native column. */
START_TEST(test_cat_format)
{
	struct artifact a, b;
	struct rba_buf e1, e2;
	struct rba_detail d;
	float x[3 * 40], p1[2 * 40], p2[2 * 40];
	size_t at;

	make_cat_native(&a);
	rba_buf_init(&e1);
	rba_buf_init(&e2);
	ck_assert_int_eq(artifact_encode(&a, &e1), 0);
	ck_assert_uint_eq((uint32_t)e1.p[8], ARTIFACT_FORMAT_NATIVE);
	rba_detail_clear(&d);
	ck_assert_msg(artifact_decode(e1.p, e1.len, &b, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(b.spec.columns[0].kind, ENCODE_NATIVE);
	ck_assert_uint_eq(b.spec.columns[0].nlevels, 6);
	ck_assert_uint_eq(b.model.forest.ncats, 9);
	ck_assert_uint_eq(b.model.forest.nodes[0].ncats, 3);
	ck_assert_uint_eq(b.model.forest.nodes[0].cats[2], 4);
	ck_assert_int_eq(artifact_encode(&b, &e2), 0);
	ck_assert_uint_eq(e1.len, e2.len);
	ck_assert(memcmp(e1.p, e2.p, e1.len) == 0);
	for (size_t i = 0; i < 40; i++)
		cat_case(i, x + i * 3);
	ck_assert_int_eq(artifact_score(&a, x, 40, p1), 0);
	ck_assert_int_eq(artifact_score(&b, x, 40, p2), 0);
	ck_assert(memcmp(p1, p2, sizeof(p1)) == 0);
	/* a case as text: an unseen employer scores as the index 6 */
	{
		const char *v[3] = { "Zeta", "0.25", "south" };
		float r[3];
		ck_assert_int_eq(encode_values(&b.spec, v, r, &d), 0);
		ck_assert(r[0] == 6.0f && r[2] == 2.0f);
		v[0] = "Dyna";
		ck_assert_int_eq(encode_values(&b.spec, v, r, &d), 0);
		ck_assert(r[0] == 3.0f);
	}
	artifact_release(&b);
	at = first_cat_count(&e1);
	{
		struct {
			size_t off;
			uint32_t v;
			const char *why;
		} bad[] = {
			{ 4, 6, "level index is out of range" },
			{ 4, 1000000, "level index is out of range" },
			{ 0, 7, "level count" },
			{ 0, 0, "level count" },
			{ 0, 0x40000000u, "level count" },
			{ 8, 1, "not strictly ascending" },
			{ 8, 0, "not strictly ascending" },
			{ -4, 1, "not a native categorical column" },
		};
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			uint8_t *c = malloc(e1.len);
			uint32_t v = bad[k].v;
			memcpy(c, e1.p, e1.len);
			memcpy(c + at + bad[k].off, &v, 4); /* little-endian host */
			rba_detail_clear(&d);
			ck_assert_int_eq(artifact_decode(c, e1.len, &b, &d),
					 RBA_E_CORRUPT);
			ck_assert_msg(strstr(d.reason, bad[k].why) != NULL,
				      "case %zu: %s", k, d.reason);
			free(c);
		}
	}
	/* the same bytes as format 3: no native column there */
	{
		uint8_t *c = malloc(e1.len);
		memcpy(c, e1.p, e1.len);
		c[8] = 3;
		rba_detail_clear(&d);
		ck_assert_int_eq(artifact_decode(c, e1.len, &b, &d), RBA_E_CORRUPT);
		ck_assert_msg(strstr(d.reason, "unknown column kind") != NULL, "%s",
			      d.reason);
		free(c);
	}
	/* every truncation refused */
	for (size_t n = 0; n < e1.len; n++) {
		ck_assert_int_ne(artifact_decode(e1.p, n, &b, &d), 0);
	}
	/* the encoder: a set with a level past the column's */
	a.model.forest.cats[2] = 6;
	ck_assert_int_eq(artifact_encode(&a, &e2), RBA_E_RANGE);
	a.model.forest.cats[2] = 4;
	/* a categorical split on the numeric feature */
	a.model.forest.nodes[0].feature = 1;
	ck_assert_int_eq(artifact_encode(&a, &e2), RBA_E_RANGE);
	a.model.forest.nodes[0].feature = 0;
	rba_buf_release(&e1);
	rba_buf_release(&e2);
	artifact_release(&a);
}
END_TEST

/* gain of sending the levels of mask left (the partition's formula) */
static double
cat_gain(const struct gb_cat_cell *c, uint32_t L, unsigned mask,
	 double lambda, double pt)
{
	int64_t gl = 0, hl = 0, g = 0, h = 0;
	double GL, GR, HL, HR;

	for (uint32_t k = 0; k < L; k++) {
		g += c[k].g;
		h += c[k].h;
		if (mask >> k & 1u) {
			gl += c[k].g;
			hl += c[k].h;
		}
	}
	GL = (double)gl * 0x1p-30;
	GR = (double)(g - gl) * 0x1p-30;
	HL = (double)hl * 0x1p-30;
	HR = (double)(h - hl) * 0x1p-30;
	return GL * GL / (HL + lambda) + GR * GR / (HR + lambda) - pt;
}

/*
 * The partition: with no smoothing, no lambda and every level
 * considered, the best prefix of the sorted order is the best of all
 * 2^L - 2 subsets (Fisher 1958: for this gain the optimum is contiguous
 * in the order of g / h); the chosen set comes back ascending; levels
 * under min_data stay right; max_left caps the set; ties go to the
 * lower level index, the same on every call.
 */
START_TEST(test_cat_partition)
{
	enum { L = 7 };
	struct gb_cat_cell c[L];
	uint32_t order[2 * L], left[L];
	double stat[L];
	struct gb_cat_params p = { 0.0, 0.0, 0.0, L, 1 };
	struct gb_cat_split s;
	uint64_t seed = 12345;

	for (int round = 0; round < 200; round++) {
		int64_t g = 0, h = 0;
		double best = -1e300, pt;
		unsigned mask = 0;
		for (uint32_t k = 0; k < L; k++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			c[k].g = (int64_t)((seed >> 20) % 4000) - 2000;
			c[k].h = (int64_t)((seed >> 40) % 3000) + 1;
			c[k].n = 1 + (seed >> 8) % 5;
			g += c[k].g;
			h += c[k].h;
		}
		pt = ((double)g * 0x1p-30) * ((double)g * 0x1p-30) /
		     ((double)h * 0x1p-30);
		for (unsigned m = 1; m + 1 < 1u << L; m++) {
			double v = cat_gain(c, L, m, 0.0, pt);
			if (v > best)
				best = v;
		}
		gbdt1_cat_best(c, L, g, h, pt, &p, order, stat, left, &s);
		ck_assert(s.valid);
		for (uint32_t i = 0; i < s.nleft; i++) {
			ck_assert_uint_lt(left[i], L);
			if (i > 0)
				ck_assert_uint_lt(left[i - 1], left[i]);
			mask |= 1u << left[i];
		}
		ck_assert_msg(fabs(s.gain - best) <= 1e-9 * fabs(best) + 1e-12,
			      "round %d: %.17g vs the best subset %.17g", round,
			      s.gain, best);
		ck_assert(fabs(cat_gain(c, L, mask, 0.0, pt) - s.gain) <= 1e-9);
	}
	/* min_data: level 3 (1 row, the strongest) stays right */
	memset(c, 0, sizeof(c));
	for (uint32_t k = 0; k < L; k++) {
		c[k].g = k == 3 ? -900000000 : (k % 2 ? 300000000 : -300000000);
		c[k].h = 500000000;
		c[k].n = k == 3 ? 1 : 50;
	}
	p.min_data = 10;
	gbdt1_cat_best(c, L, -900000000 + 3 * 300000000 - 3 * 300000000,
		       (int64_t)L * 500000000, 0.0, &p, order, stat, left, &s);
	ck_assert(s.valid);
	for (uint32_t i = 0; i < s.nleft; i++)
		ck_assert_uint_ne(left[i], 3);
	/* max_left 1: one level */
	p.min_data = 1;
	p.max_left = 1;
	gbdt1_cat_best(c, L, -900000000, (int64_t)L * 500000000, 0.0, &p, order,
		       stat, left, &s);
	ck_assert(s.valid);
	ck_assert_uint_eq(s.nleft, 1);
	ck_assert_uint_eq(left[0], 3);
	/* ties: every level alike but two equal strong ones: the lower */
	for (uint32_t k = 0; k < L; k++) {
		c[k].g = k == 2 || k == 5 ? -400000000 : 100000000;
		c[k].h = 500000000;
		c[k].n = 10;
	}
	gbdt1_cat_best(c, L, -800000000 + 5 * 100000000, (int64_t)L * 500000000,
		       0.0, &p, order, stat, left, &s);
	ck_assert(s.valid);
	ck_assert_uint_eq(s.nleft, 1);
	ck_assert_uint_eq(left[0], 2);
	/* one level with rows: nothing to part */
	memset(c, 0, sizeof(c));
	c[4].g = 5;
	c[4].h = 7;
	c[4].n = 3;
	p.max_left = L;
	gbdt1_cat_best(c, L, 5, 7, 0.0, &p, order, stat, left, &s);
	ck_assert(!s.valid);
}
END_TEST

/* ---- native forests: the bit tables, every scorer against the walk ---- */

/*
 * The reference: each tree walked with rebuild_tree_goes_left (a level
 * set by the binary search of rebuild_tree_cat_left), the leaves added
 * per group in tree order, then gbdt1_softmax: the forward pass as
 * gbdt1.c first had it, before the bit tables.
 */
static void
walk_probs(const struct rebuild_forest *f, const float *x, size_t n,
	   float *probs)
{
	uint32_t K = f->ngroups, C = f->nclasses;
	float mg[REBUILD_MAX_CLASSES];

	for (size_t r = 0; r < n; r++) {
		const float *xr = x + r * f->nfeatures;
		memcpy(mg, f->base, K * sizeof(float));
		for (uint32_t t = 0; t < f->ntrees; t++) {
			uint32_t i = f->tree_start[t];
			while (f->nodes[i].feature != REBUILD_TREE_LEAF)
				i = rebuild_tree_goes_left(&f->nodes[i],
							   xr[f->nodes[i].feature])
					    ? f->nodes[i].left
					    : f->nodes[i].right;
			mg[t % K] += f->nodes[i].value;
		}
		gbdt1_softmax(mg, K, C, C, probs + r * C);
	}
}

/*
 * A credit-shaped table of n rows: income (every ninth field empty: a
 * missing value), age, employer of nlev levels (E0000 ..., each with its
 * own effect) and the class from the three with noise.  unseen: every
 * fifth row's employer is U..., a level no training row has, and every
 * seventh row's age is empty too.  Caller frees.
 */
static char *
native_table(size_t n, uint32_t nlev, int unseen, uint64_t seed)
{
	size_t cap = 64 + n * 64, len = 0;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	len += (size_t)snprintf(t + len, cap - len,
				"id,income,age,employer,class\n");
	for (size_t r = 0; r < n; r++) {
		uint32_t e, inc, age;
		double z;
		char incs[16] = "", ages[16] = "";
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		e = (uint32_t)((seed >> 33) % nlev);
		e = e * e % nlev; /* uneven level counts, some levels rare */
		inc = 1000 + (uint32_t)((seed >> 13) % 9000);
		age = 18 + (uint32_t)((seed >> 45) % 60);
		/* the employer's effect, from its index */
		z = (double)((e * 2654435761u) % 1000) / 250.0 - 2.0 +
		    (double)inc / 3000.0 - (double)age / 40.0 +
		    (double)((seed >> 5) % 1000) / 400.0 - 1.25;
		if (r % 9 != 4)
			snprintf(incs, sizeof(incs), "%u", inc);
		if (!(unseen && r % 7 == 3))
			snprintf(ages, sizeof(ages), "%u", age);
		len += (size_t)snprintf(t + len, cap - len, "%zu,%s,%s,%c%04u,%s\n",
					r + 1, incs, ages,
					unseen && r % 5 == 2 ? 'U' : 'E', e,
					z > 0 ? "yes" : "no");
		ck_assert_uint_lt(len, cap);
	}
	return t;
}

/* gbdt1_catbits_left against rebuild_tree_cat_left at every split of f
 * with a level set, on every level up to past the largest and on values
 * that are no level. */
static void
catbits_agree(const struct rebuild_forest *f, uint32_t maxlev)
{
	static const float odd[] = { -1.0f, -0.0f, 0.5f, 2.5f, NAN, INFINITY,
				     -INFINITY, 16777215.0f, 16777216.0f,
				     1e30f, -1e-30f };
	struct gb_catbits *cb;
	size_t nn = f->tree_start[f->ntrees], nsets = 0;

	ck_assert_int_eq(gbdt1_catbits_new(f, &cb), 0);
	ck_assert_ptr_nonnull(cb);
	for (size_t i = 0; i < nn; i++) {
		const struct rebuild_tree_node *q = &f->nodes[i];
		if (q->feature == REBUILD_TREE_LEAF ||
		    !(q->flags & REBUILD_TREE_CATEGORICAL))
			continue;
		nsets++;
		for (uint32_t k = 0; k <= maxlev + 2; k++)
			ck_assert_int_eq(gbdt1_catbits_left(cb, (uint32_t)i, (float)k),
					 rebuild_tree_cat_left(q, (float)k));
		for (size_t j = 0; j < sizeof(odd) / sizeof(odd[0]); j++)
			ck_assert_int_eq(gbdt1_catbits_left(cb, (uint32_t)i, odd[j]),
					 rebuild_tree_cat_left(q, odd[j]));
	}
	ck_assert_uint_gt(nsets, 0);
	gbdt1_catbits_free(cb);
}

/*
 * Every scorer of a native forest gives the reference walk's bits on
 * every case of rows x (x standardized, raw not): the forward pass
 * (rebuild_predict), artifact_score, and the sparse scorer given every
 * input or only the non-zero ones.
 */
static void
native_scorers_agree(const struct artifact *a, const float *raw,
		     const float *x, size_t rows)
{
	size_t nf = a->spec.nfeatures, C = a->spec.nclasses, nt = 0;
	size_t bytes = rows * C * sizeof(float);
	float *want = malloc(bytes), *got = malloc(bytes);
	float *tx = calloc(rows * nf, sizeof(float));
	uint32_t *row = calloc(rows * nf, sizeof(uint32_t));
	struct rebuild_sparse *sp;

	walk_probs(&a->model.forest, x, rows, want);
	ck_assert_int_eq(rebuild_predict(a->abi, &a->model, x, rows, got), 0);
	ck_assert(memcmp(want, got, bytes) == 0);
	ck_assert_int_eq(artifact_score(a, raw, rows, got), 0);
	ck_assert(memcmp(want, got, bytes) == 0);
	ck_assert_int_eq(rebuild_sparse_new(a->abi, &a->model, &sp), 0);
	for (size_t i = 0; i < rows * nf; i++) {
		tx[i] = x[i];
		row[i] = (uint32_t)(i % nf);
	}
	memset(got, 0, bytes);
	rebuild_sparse_score(sp, tx, row, nf, rows, got);
	ck_assert(memcmp(want, got, bytes) == 0);
	/* the non-zero inputs only, padded per case to one count */
	for (size_t i = 0; i < rows; i++) {
		size_t k = 0;
		for (size_t f = 0; f < nf; f++)
			k += x[i * nf + f] != 0.0f;
		if (k > nt)
			nt = k;
	}
	for (size_t i = 0; i < rows; i++) {
		size_t k = 0;
		for (size_t f = 0; f < nf && k < nt; f++)
			if (x[i * nf + f] != 0.0f || nf - f <= nt - k) {
				tx[i * nt + k] = x[i * nf + f];
				row[i * nt + k] = (uint32_t)f;
				k++;
			}
	}
	memset(got, 0, bytes);
	rebuild_sparse_score(sp, tx, row, nt, rows, got);
	ck_assert(memcmp(want, got, bytes) == 0);
	rebuild_sparse_free(sp);
	free(want);
	free(got);
	free(tx);
	free(row);
}

/*
 * A native forest trained on 3,000 rows with a 400-level employer and
 * missing incomes: the bit tables decide every split as the binary
 * search; on 2,000 other cases (a fifth of them with an unseen
 * employer, some with a missing income or age) and on the training
 * rows, every scorer gives the reference walk's bits.
 */
START_TEST(test_native_scorers_walk)
{
	static char *natcols[] = { "employer" };
	enum { NTRAIN = 3000, NCASES = 2000, NLEV = 400 };
	char *train = native_table(NTRAIN, NLEV, 0, 7);
	char *cases = native_table(NCASES, NLEV, 1, 99);
	const char *texts[2] = { train, cases };
	size_t rows[2] = { NTRAIN, NCASES }, nsets = 0, nmulti = 0;
	struct pins p;
	struct rebuild_result res;
	struct artifact a;
	struct rba_detail d;

	test_pins(&p, 0);
	rba_digest_bytes(train, strlen(train), &p.snapshot);
	p.data.categorical = natcols;
	p.data.ncategorical = 1;
	p.data.native = natcols;
	p.data.nnative = 1;
	p.data.standardize = 0;
	p.model.kind = PINS_MODEL_GBDT;
	p.model.gbdt.trees = 40;
	p.model.gbdt.max_depth = 4;
	p.model.gbdt.learning_rate = 0.3;
	p.model.gbdt.min_child_weight = 1;
	p.model.gbdt.lambda = 1;
	p.model.gbdt.max_bins = 32;
	p.model.gbdt.subsample = 1;
	p.model.gbdt.colsample = 1;
	rba_detail_clear(&d);
	ck_assert_msg(rebuild_from_snapshot(&p, 0, train, strlen(train), "t.csv",
					    NULL, &res, &d) == 0,
		      "%s", d.reason);
	ck_assert_uint_eq(rba_get_u32le(res.artifact + 8), ARTIFACT_FORMAT_NATIVE);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	for (size_t i = 0; i < a.model.forest.tree_start[a.model.forest.ntrees]; i++) {
		const struct rebuild_tree_node *q = &a.model.forest.nodes[i];
		if (q->feature != REBUILD_TREE_LEAF &&
		    (q->flags & REBUILD_TREE_CATEGORICAL)) {
			nsets++;
			nmulti += q->ncats > 1;
		}
	}
	ck_assert_uint_gt(nsets, 20);
	ck_assert_uint_gt(nmulti, 10);
	catbits_agree(&a.model.forest, NLEV);
	for (int k = 0; k < 2; k++) {
		size_t nf = a.spec.nfeatures, unseen = 0, miss = 0;
		float *raw = calloc(rows[k] * nf, sizeof(float));
		float *x = calloc(rows[k] * nf, sizeof(float));
		struct csv_missing m = encode_missing(&a.spec);
		struct csv_table *t;
		ck_assert_int_eq(csv_table_load_mem_missing(texts[k], strlen(texts[k]),
							    "c.csv", &m, &t, &d), 0);
		ck_assert_msg(encode_table(&a.spec, t, raw, &d) == 0, "%s", d.reason);
		for (size_t i = 0; i < rows[k] * nf; i++) {
			unseen += raw[i] == (float)NLEV || raw[i] > (float)NLEV;
			miss += raw[i] != raw[i];
		}
		ck_assert(k == 0 || unseen > NCASES / 6);
		ck_assert_uint_gt(miss, rows[k] / 10);
		encode_standardize(&a.spec, raw, rows[k], x);
		native_scorers_agree(&a, raw, x, rows[k]);
		csv_table_free(t);
		free(raw);
		free(x);
	}
	artifact_release(&a);
	rebuild_result_release(&res);
	free(train);
	free(cases);
}
END_TEST

/*
 * The walks without bit tables: a forest whose tables would pass
 * GB_CATBITS_MAX_WORDS (splits on level 2^24 - 1) and one whose set is
 * not ascending get none, and score as the reference walk.
 */
START_TEST(test_native_scorers_no_tables)
{
	enum { T = 130, N = 64 };
	static const uint32_t far[1] = { 16777215 };
	struct artifact a;
	struct rebuild_forest *f;
	struct gb_catbits *cb = NULL;
	float x[N * 3], want[N * 2], got[N * 2];
	uint32_t row[N * 3];
	struct rebuild_sparse *sp;

	memset(&a, 0, sizeof(a));
	a.abi = 1;
	ck_assert_int_eq(rebuild_forest_alloc(&a.model, 3, 2, 0, T, 3 * T), 0);
	f = &a.model.forest;
	f->cats = malloc(sizeof(far));
	ck_assert_ptr_nonnull(f->cats);
	memcpy(f->cats, far, sizeof(far));
	f->ncats = 1;
	for (uint32_t t = 0; t < T; t++) {
		struct rebuild_tree_node *q = &f->nodes[3 * t];
		f->tree_start[t + 1] = 3 * (t + 1);
		q->feature = 0;
		q->flags = REBUILD_TREE_CATEGORICAL;
		q->cats = f->cats;
		q->ncats = 1;
		q->left = 3 * t + 1;
		q->right = 3 * t + 2;
		q[1].feature = q[2].feature = REBUILD_TREE_LEAF;
		q[1].value = 0.01f * (float)(t % 7);
		q[2].value = -0.02f * (float)(t % 5);
	}
	ck_assert_int_eq(gbdt1_catbits_new(f, &cb), 0);
	ck_assert_ptr_null(cb);
	for (size_t i = 0; i < N; i++) {
		x[3 * i] = i % 2 ? 16777215.0f : (float)i;
		x[3 * i + 1] = (float)i;
		x[3 * i + 2] = 0.0f;
		for (int j = 0; j < 3; j++)
			row[3 * i + j] = (uint32_t)j;
	}
	walk_probs(f, x, N, want);
	ck_assert(want[2] != want[0]);
	ck_assert_int_eq(rebuild_predict(a.abi, &a.model, x, N, got), 0);
	ck_assert(memcmp(want, got, sizeof(want)) == 0);
	ck_assert_int_eq(rebuild_sparse_new(a.abi, &a.model, &sp), 0);
	rebuild_sparse_score(sp, x, row, 3, N, got);
	ck_assert(memcmp(want, got, sizeof(want)) == 0);
	rebuild_sparse_free(sp);
	artifact_release(&a);
	/* a set out of order: no tables, the walk as before */
	make_cat(&a);
	{
		uint32_t t0 = a.model.forest.cats[0];
		a.model.forest.cats[0] = a.model.forest.cats[1];
		a.model.forest.cats[1] = t0;
	}
	ck_assert_int_eq(gbdt1_catbits_new(&a.model.forest, &cb), 0);
	ck_assert_ptr_null(cb);
	for (size_t i = 0; i < N; i++)
		cat_case(i, x + 3 * i);
	walk_probs(&a.model.forest, x, N, want);
	ck_assert_int_eq(rebuild_predict(a.abi, &a.model, x, N, got), 0);
	ck_assert(memcmp(want, got, sizeof(want)) == 0);
	cat_release(&a);
	/* and the hand-made forest of make_cat has tables that agree */
	make_cat(&a);
	catbits_agree(&a.model.forest, 6);
	for (size_t i = 0; i < N; i++)
		cat_case(i, x + 3 * i);
	walk_probs(&a.model.forest, x, N, want);
	ck_assert_int_eq(rebuild_predict(a.abi, &a.model, x, N, got), 0);
	ck_assert(memcmp(want, got, sizeof(want)) == 0);
	cat_release(&a);
}
END_TEST

/*
 * The partition as first written: every candidate sorted by
 * (statistic, level index), then both ends scanned.  gbdt1_cat_best
 * selects the ends instead when the scans read fewer than all: the
 * same split, bit for bit, on random cells with many ties, few and many
 * candidates, and every max_left.
 */
static const double *ref_stat;

static int
ref_cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return (a > b) - (a < b);
}

static int
ref_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (ref_stat[a] < ref_stat[b])
		return -1;
	if (ref_stat[b] < ref_stat[a])
		return 1;
	return (a > b) - (a < b);
}

static void
ref_cat_best(const struct gb_cat_cell *c, uint32_t L, int64_t g, int64_t h,
	     double pt, const struct gb_cat_params *p, uint32_t *left,
	     struct gb_cat_split *out)
{
	uint32_t *order = malloc((L ? L : 1) * sizeof(uint32_t));
	double *stat = malloc((L ? L : 1) * sizeof(double));
	uint32_t nc = 0, others = 0, best_dir = 0, best_len = 0, maxlen;

	memset(out, 0, sizeof(*out));
	for (uint32_t k = 0; k < L; k++) {
		if (c[k].n >= p->min_data && c[k].n > 0) {
			order[nc++] = k;
			stat[k] = ((double)c[k].g * 0x1p-30) /
				  ((double)c[k].h * 0x1p-30 + p->smooth);
		} else if (c[k].n > 0) {
			others = 1;
		}
	}
	ref_stat = stat;
	qsort(order, nc, sizeof(uint32_t), ref_cmp);
	maxlen = nc == 0 ? 0 : nc - 1 + others;
	if (maxlen > p->max_left)
		maxlen = p->max_left;
	for (uint32_t dir = 0; dir < 2; dir++) {
		int64_t gl = 0, hl = 0;
		for (uint32_t len = 1; len <= maxlen; len++) {
			uint32_t k = dir == 0 ? order[len - 1] : order[nc - len];
			double HL, HR, GL, GR, dl, dr, gain;
			gl += c[k].g;
			hl += c[k].h;
			HL = (double)hl * 0x1p-30;
			HR = (double)(h - hl) * 0x1p-30;
			if (HL < p->mcw || HR < p->mcw)
				continue;
			dl = HL + p->lambda;
			dr = HR + p->lambda;
			if (!(dl > 0.0) || !(dr > 0.0))
				continue;
			GL = (double)gl * 0x1p-30;
			GR = (double)(g - gl) * 0x1p-30;
			gain = (GL * GL / dl + GR * GR / dr) - pt;
			if (!out->valid || gain > out->gain) {
				out->valid = 1;
				out->gain = gain;
				out->gl = gl;
				out->hl = hl;
				best_dir = dir;
				best_len = len;
			}
		}
	}
	if (out->valid) {
		out->nleft = best_len;
		for (uint32_t i = 0; i < best_len; i++)
			left[i] = best_dir == 0 ? order[i] : order[nc - 1 - i];
		qsort(left, best_len, sizeof(uint32_t), ref_cmp_u32);
	}
	free(order);
	free(stat);
}

START_TEST(test_cat_partition_ends)
{
	enum { LMAX = 700 };
	static struct gb_cat_cell c[LMAX];
	static uint32_t order[2 * LMAX], left[LMAX], rleft[LMAX];
	static double stat[LMAX];
	static const uint32_t Ls[] = { 1, 2, 5, 9, 40, 130, 700 };
	static const uint32_t lefts[] = { 1, 2, 3, 8, 64, 500 };
	uint64_t seed = 4242;
	size_t selected = 0;

	for (int round = 0; round < 120; round++) {
		uint32_t L = Ls[round % 7];
		int64_t g = 0, h = 0;
		double pt;
		/* few distinct g and h: many ties of the statistic */
		uint32_t spread = round % 3 == 0 ? 3 : round % 3 == 1 ? 40 : 100000;
		/* a level's hessian 2^-3 .. 5 (min_child_weight 0.5) */
		int64_t unit = spread == 3 ? 1ll << 27 : spread == 40 ? 1ll << 25
								    : 1ll << 13;
		for (uint32_t k = 0; k < L; k++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			c[k].g = ((int64_t)((seed >> 20) % spread) - (int64_t)spread / 2) *
				 unit;
			c[k].h = ((int64_t)((seed >> 40) % spread) + 1) * unit;
			c[k].n = (seed >> 8) % 9; /* 0 .. 8 rows: others too */
			g += c[k].g;
			h += c[k].h;
		}
		pt = ((double)g * 0x1p-30) * ((double)g * 0x1p-30) /
		     ((double)h * 0x1p-30 + 1.0);
		for (size_t m = 0; m < sizeof(lefts) / sizeof(lefts[0]); m++) {
			struct gb_cat_params p = { 1.0, 0.5, 10.0, lefts[m], 5 };
			struct gb_cat_split s, r;
			uint32_t nc = 0;
			for (uint32_t k = 0; k < L; k++)
				nc += c[k].n >= 5;
			gbdt1_cat_best(c, L, g, h, pt, &p, order, stat, left, &s);
			ref_cat_best(c, L, g, h, pt, &p, rleft, &r);
			ck_assert_int_eq(s.valid, r.valid);
			if (!s.valid)
				continue;
			selected += 2 * (uint64_t)lefts[m] < nc;
			ck_assert(memcmp(&s.gain, &r.gain, sizeof(double)) == 0);
			ck_assert_uint_eq(s.nleft, r.nleft);
			ck_assert(s.gl == r.gl && s.hl == r.hl);
			ck_assert(memcmp(left, rleft, s.nleft * sizeof(uint32_t)) == 0);
		}
	}
	ck_assert_uint_gt(selected, 50);
}
END_TEST

/* The ulp distance diff reports: adjacent floats 1 apart, across zero
 * counted through it, equal bits 0. */
START_TEST(test_diff_ulps)
{
	float one = 1.0f, next = nextafterf(1.0f, 2.0f);

	ck_assert_uint_eq(artdiff_ulps(one, one), 0);
	ck_assert_uint_eq(artdiff_ulps(one, next), 1);
	ck_assert_uint_eq(artdiff_ulps(next, one), 1);
	ck_assert_uint_eq(artdiff_ulps(0.0f, -0.0f), 1);
	ck_assert_uint_eq(artdiff_ulps(nextafterf(0.0f, 1.0f), nextafterf(0.0f, -1.0f)), 3);
	ck_assert_uint_eq(artdiff_ulps(1.0f, 2.0f), 1u << 23);
}
END_TEST

Suite *
suite_artifact(void)
{
	Suite *s = suite_create("artifact");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_diff_ulps);
	tcase_add_test(tc, test_score_matches_training);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_bit_flips);
	tcase_add_test(tc, test_specific_corruptions);
	tcase_add_test(tc, test_load_file);
	tcase_add_test(tc, test_snapshot_mismatch);
	tcase_add_test(tc, test_forest_round_trip);
	tcase_add_test(tc, test_forest_truncations);
	tcase_add_test(tc, test_forest_bit_flips);
	tcase_add_test(tc, test_forest_specific_corruptions);
	tcase_add_test(tc, test_forest_missing);
	tcase_add_test(tc, test_missing_direction);
	tcase_add_test(tc, test_forest_deep_sparse);
	tcase_add_test(tc, test_forest_sparse_special_inputs);
	tcase_add_test(tc, test_forest_vector_walks);
	tcase_add_test(tc, test_tree_walk_plan);
	tcase_add_test(tc, test_cat_goes_left);
	tcase_add_test(tc, test_cat_scorers_agree);
	tcase_add_test(tc, test_cat_treeshap);
	tcase_add_test(tc, test_cat_partition);
	tcase_add_test(tc, test_cat_partition_ends);
	tcase_add_test(tc, test_native_scorers_walk);
	tcase_add_test(tc, test_native_scorers_no_tables);
	tcase_add_test(tc, test_cat_format);
	suite_add_tcase(s, tc);
	/* The reasons of every model kind: `make check-reasons` runs this
	 * test case alone, on every MLP case (CK_RUN_CASE=reasons). */
	tc = tcase_create("reasons");
	tcase_set_timeout(tc, explain_mlp_cases() > EXPLAIN_MLP_CASES
				      ? EXPLAIN_ALL_TIMEOUT : 300);
	tcase_add_test(tc, test_explain_logistic_by_hand);
	tcase_add_test(tc, test_explain_multiclass);
	tcase_add_test(tc, test_explain_german_logistic);
	tcase_add_test(tc, test_explain_german_gbdt);
	tcase_add_test(tc, test_explain_german_missing);
	tcase_add_test(tc, test_explain_german_native);
	tcase_add_test(tc, test_explain_german_mlp);
	suite_add_tcase(s, tc);
	return s;
}
