/*
 * check_artifact.c - the canonical artifact: round trip, canonical bytes,
 * scoring with the artifact's own preprocessing, and a corpus of
 * truncated and bit-flipped files that must load or fail cleanly.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "rebuild/artifact.h"
#include "rebuild/csv.h"
#include "rebuild/encode.h"
#include "rebuild/rebuild.h"
#include "tests/unit/suites.h"

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
	rba_put_u32le(cp + 8, 3);
	expect(cp, n, RBA_E_UNSUPPORTED, "newer");
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

/* Dense (artifact_score) and sparse scores of the rows of sn agree. */
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

	ck_assert_int_eq(csv_table_load_mem(sn, strlen(sn), "s.csv", &t, &d), 0);
	ck_assert_int_eq(encode_table(&a->spec, t, raw, &d), 0);
	ck_assert_int_eq(artifact_score(a, raw, rows, dense), 0);
	encode_standardize(&a->spec, raw, rows, x);
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
 * A tree deeper than the sparse scorer's complete layout (a chain of 12
 * splits on one input, 13 leaves) scores by its node walk: bit for bit
 * the dense scores too.
 */
START_TEST(test_forest_deep_sparse)
{
	struct rebuild_result res;
	struct artifact a, deep;
	struct rba_detail d;
	uint32_t D = 12, N = 2 * 12 + 1;
	const struct rebuild_forest *f;

	make_forest(0, &res);
	ck_assert_int_eq(artifact_decode(res.artifact, res.artifact_len, &a, &d), 0);
	f = &a.model.forest;
	memset(&deep, 0, sizeof(deep));
	deep.abi = a.abi;
	deep.spec = a.spec;
	ck_assert_int_eq(rebuild_forest_alloc(&deep.model, 5, 2, f->edge_start[5],
					      1, N), 0);
	memcpy(deep.model.forest.edge_start, f->edge_start, 6 * 4);
	memcpy(deep.model.forest.edges, f->edges, f->edge_start[5] * 4);
	deep.model.forest.tree_start[1] = N;
	for (uint32_t i = 0; i < D; i++) {
		struct rebuild_tree_node *q = &deep.model.forest.nodes[i];
		q->feature = 3; /* size */
		q->bin = i % (f->edge_start[4] - f->edge_start[3]);
		q->threshold = f->edges[f->edge_start[3] + q->bin];
		q->left = i + 1;
		q->right = D + 1 + (D - 1 - i);
	}
	for (uint32_t i = D; i < N; i++) {
		deep.model.forest.nodes[i].feature = REBUILD_TREE_LEAF;
		deep.model.forest.nodes[i].value = 0.125f * (float)i - 1.0f;
	}
	scores_agree(&deep, snap, 12);
	memset(&deep.spec, 0, sizeof(deep.spec));
	artifact_release(&deep);
	artifact_release(&a);
	rebuild_result_release(&res);
}
END_TEST

Suite *
suite_artifact(void)
{
	Suite *s = suite_create("artifact");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_round_trip);
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
	tcase_add_test(tc, test_forest_deep_sparse);
	suite_add_tcase(s, tc);
	return s;
}
