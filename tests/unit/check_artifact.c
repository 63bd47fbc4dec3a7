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
					    res, &d) == 0,
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
					       "s.csv", &res, &d),
			 RBA_E_TAMPERED);
	ck_assert(strstr(d.reason, "does not match the pinned snapshot") != NULL);
	ck_assert_int_eq(rebuild_from_snapshot(&p, 3, snap, strlen(snap), "s.csv",
					       &res, &d),
			 RBA_E_UNSUPPORTED);
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
	suite_add_tcase(s, tc);
	return s;
}
