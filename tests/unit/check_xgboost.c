/*
 * check_xgboost.c - XGBoost JSON models (model/xgboost.h,
 * model/xgbtree.h): the fixtures' margins and probabilities against
 * what XGBoost 1.7 itself gave (fixtures/xgboost/make.py wrote them),
 * TreeSHAP against its pred_contribs (binary and each class of a
 * softprob model), the sample's scorer and the
 * sparse interface against artifact_score, missing values in the
 * encoder, and the loader's refusals, each at its JSON path.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"
#include "model/artdiff.h"
#include "model/artifact.h"
#include "model/explain.h"
#include "model/xgboost.h"
#include "model/xgbtree.h"
#include "sample/scorer.h"
#include "tests/unit/suites.h"

#define XDIR FIXTURES "/xgboost/"
#define NCASES 1000

/* The fixture cases: fields as text (no quotes in these files). */
struct cases {
	uint32_t ncols; /* id first */
	char **names;
	char ***rows; /* NCASES x ncols */
	size_t n;
	char *text;
};

static char **
split(char *line, uint32_t *n)
{
	char **v = NULL;
	uint32_t k = 0;
	char *p = line;

	for (;;) {
		char *c = strchr(p, ',');
		v = realloc(v, (k + 1) * sizeof(*v));
		v[k++] = p;
		if (c == NULL)
			break;
		*c = 0;
		p = c + 1;
	}
	*n = k;
	return v;
}

static void
cases_load(const char *path, struct cases *c)
{
	uint8_t *buf;
	size_t len;
	char *line, *save = NULL;
	uint32_t n;

	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(rba_file_read(path, 1u << 24, &buf, &len, NULL), 0);
	c->text = (char *)buf;
	line = strtok_r(c->text, "\n", &save);
	c->names = split(line, &c->ncols);
	c->rows = calloc(NCASES + 1, sizeof(*c->rows));
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		ck_assert_uint_lt(c->n, NCASES + 1);
		c->rows[c->n] = split(line, &n);
		ck_assert_uint_eq(n, c->ncols);
		c->n++;
	}
	ck_assert_uint_eq(c->n, NCASES);
}

static void
cases_free(struct cases *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->rows[i]);
	free(c->rows);
	free(c->names);
	free(c->text);
}

/* The raw features of every case by the model's columns (by name). */
static float *
cases_encode(const struct artifact *a, const struct cases *c)
{
	const struct encode_spec *s = &a->spec;
	float *x = malloc(c->n * s->nfeatures * sizeof(float));
	const char **vals = malloc(s->ncolumns * sizeof(*vals));
	uint32_t *src = malloc(s->ncolumns * sizeof(*src));
	struct rba_detail d;

	for (uint32_t k = 0; k < s->ncolumns; k++) {
		uint32_t j = 0;
		while (j < c->ncols && strcmp(c->names[j], s->columns[k].name) != 0)
			j++;
		ck_assert_msg(j < c->ncols, "no column %s", s->columns[k].name);
		src[k] = j;
	}
	for (size_t i = 0; i < c->n; i++) {
		for (uint32_t k = 0; k < s->ncolumns; k++)
			vals[k] = c->rows[i][src[k]];
		rba_detail_clear(&d);
		ck_assert_msg(encode_values(s, vals, x + i * s->nfeatures, &d) == 0,
			      "case %zu: %s", i, d.reason);
	}
	free(vals);
	free(src);
	return x;
}

/* NCASES lines of k float32 hex words. */
static uint32_t *
hex_load(const char *path, uint32_t k)
{
	FILE *f = fopen(path, "r");
	uint32_t *v = malloc(NCASES * k * sizeof(uint32_t));

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < (size_t)NCASES * k; i++)
		ck_assert_int_eq(fscanf(f, "%x", &v[i]), 1);
	fclose(f);
	return v;
}

static uint32_t
bits(float v)
{
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

static uint32_t
ulps(float a, uint32_t b)
{
	int64_t x = bits(a), y = b;

	return (uint32_t)(x > y ? x - y : y - x);
}

static void
load(const char *name, struct artifact *a)
{
	char path[256];
	struct rba_detail d;

	snprintf(path, sizeof(path), XDIR "%s.json", name);
	rba_detail_clear(&d);
	ck_assert_msg(xgboost_artifact_load(path, a, NULL, &d) == 0, "%s: %s", path,
		      d.reason);
	ck_assert(xgboost_artifact_is(a));
}

/* Margins bit for bit, probabilities within an ulp (equal here). */
static void
check_model(const char *name, const char *cases_file, uint32_t K, uint32_t C)
{
	struct artifact a;
	struct cases c;
	char path[256];
	uint32_t *em, *ep, worst = 0;
	float *x, *m, *p;

	load(name, &a);
	ck_assert_uint_eq(a.model.forest.ngroups, K);
	ck_assert_uint_eq(a.spec.nclasses, C);
	cases_load(cases_file, &c);
	x = cases_encode(&a, &c);
	m = malloc(NCASES * K * sizeof(float));
	p = malloc(NCASES * C * sizeof(float));
	ck_assert_int_eq(xgboost_margins(&a, x, NCASES, m), 0);
	ck_assert_int_eq(artifact_score(&a, x, NCASES, p), 0);
	snprintf(path, sizeof(path), XDIR "%s.margins", name);
	em = hex_load(path, K);
	snprintf(path, sizeof(path), XDIR "%s.probs", name);
	ep = hex_load(path, K == 1 ? 1 : C);
	for (size_t i = 0; i < (size_t)NCASES * K; i++)
		ck_assert_msg(bits(m[i]) == em[i], "%s: case %zu margin %08x, XGBoost %08x",
			      name, i / K, bits(m[i]), em[i]);
	for (size_t i = 0; i < NCASES; i++) {
		if (K == 1) {
			uint32_t u = ulps(p[i * 2 + 1], ep[i]);
			worst = u > worst ? u : worst;
		} else {
			for (uint32_t k = 0; k < C; k++) {
				uint32_t u = ulps(p[i * C + k], ep[i * C + k]);
				worst = u > worst ? u : worst;
			}
		}
	}
	ck_assert_msg(worst <= 1, "%s: probabilities %u ulp from XGBoost's", name,
		      worst);
	free(em);
	free(ep);
	free(x);
	free(m);
	free(p);
	cases_free(&c);
	artifact_release(&a);
}

START_TEST(test_xgb_binary)
{
	check_model("binary", XDIR "cases.csv", 1, 2);
}
END_TEST

START_TEST(test_xgb_multi)
{
	check_model("multi", XDIR "cases.csv", 3, 3);
}
END_TEST

START_TEST(test_xgb_reglog)
{
	/* no feature names in the file: XGBoost's own f0 .. f23 */
	check_model("reglog", XDIR "cases-f.csv", 1, 2);
}
END_TEST

/* The forest as read: preorder, flags, covers, classes, missing texts. */
START_TEST(test_xgb_shape)
{
	struct artifact a;
	const struct rebuild_forest *f;
	uint32_t dl = 0, dr = 0;

	load("binary", &a);
	f = &a.model.forest;
	ck_assert_uint_eq(f->ntrees, 20);
	ck_assert_uint_eq(f->rules, REBUILD_FOREST_XGB_SIGMOID);
	ck_assert_str_eq(a.spec.columns[0].name, "a1");
	ck_assert_str_eq(a.spec.classes[1], "1");
	ck_assert_uint_eq(a.spec.positive, 1);
	ck_assert_uint_eq(a.spec.nmissing, 4);
	for (uint32_t t = 0; t < f->ntrees; t++)
		for (uint32_t i = f->tree_start[t]; i < f->tree_start[t + 1]; i++) {
			const struct rebuild_tree_node *q = &f->nodes[i];
			ck_assert(q->cover >= 0.0f);
			if (q->feature == REBUILD_TREE_LEAF)
				continue;
			ck_assert_uint_eq(q->left, i + 1); /* preorder */
			ck_assert_uint_gt(q->right, q->left);
			ck_assert_uint_lt(q->right, f->tree_start[t + 1]);
			ck_assert(f->edges[f->edge_start[q->feature] + q->bin] == q->threshold);
			if (q->flags & REBUILD_TREE_DEFAULT_LEFT)
				dl++;
			else
				dr++;
		}
	/* the gaps of the fixture taught both directions */
	ck_assert_uint_gt(dl, 0);
	ck_assert_uint_gt(dr, 0);
	artifact_release(&a);
}
END_TEST

/* TreeSHAP on XGBoost's covers against pred_contribs=True. */
START_TEST(test_xgb_treeshap)
{
	struct artifact a;
	struct cases c;
	struct explain_baseline b;
	FILE *f;
	float *x;

	load("binary", &a);
	cases_load(XDIR "cases.csv", &c);
	x = cases_encode(&a, &c);
	memset(&b, 0, sizeof(b));
	b.nfeatures = a.spec.nfeatures;
	b.ncolumns = a.spec.ncolumns;
	f = fopen(XDIR "binary.contribs", "r");
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < 50; i++) {
		struct explain_result r;
		struct rba_detail d;
		double want, worst = 0;
		rba_detail_clear(&d);
		ck_assert_msg(explain_case(&a, &b, x + i * a.spec.nfeatures, 1, &r, &d) == 0,
			      "%s", d.reason);
		ck_assert_int_eq(r.method, EXPLAIN_TREESHAP);
		{
			/* a forest reads no baseline: none gives the same
			 * bits (a dispute fits none for it) */
			struct explain_result r0;
			ck_assert_int_eq(explain_case(&a, NULL, x + i * a.spec.nfeatures,
						      1, &r0, &d), 0);
			ck_assert(memcmp(&r0.baseline, &r.baseline, sizeof(double)) == 0);
			ck_assert(memcmp(&r0.margin, &r.margin, sizeof(double)) == 0);
			ck_assert(memcmp(r0.contrib, r.contrib,
					 a.spec.ncolumns * sizeof(double)) == 0);
			explain_result_release(&r0);
		}
		for (uint32_t k = 0; k < a.spec.ncolumns; k++) {
			ck_assert_int_eq(fscanf(f, "%lf", &want), 1);
			worst = fmax(worst, fabs(r.contrib[k] - want));
		}
		ck_assert_int_eq(fscanf(f, "%lf", &want), 1); /* the bias */
		worst = fmax(worst, fabs(r.baseline - want));
		ck_assert_msg(worst < 1e-5, "case %zu: %g from pred_contribs", i, worst);
		/* the reasons add up to the margin */
		ck_assert_msg(r.gap < 1e-5, "case %zu: gap %g", i, r.gap);
		explain_result_release(&r);
	}
	fclose(f);
	free(x);
	cases_free(&c);
	artifact_release(&a);
}
END_TEST

/*
 * A split whose cover is 0 leaves XGBoost's TreeSHAP undefined (its
 * pred_contribs are NaN): refused for the class whose trees hold it,
 * naming the file's tree and node (the node's index in the file's
 * arrays, not its place in the forest's preorder); the other classes
 * and a leaf of cover 0 are explained.
 */
START_TEST(test_xgb_treeshap_zero_cover)
{
	struct artifact a;
	struct cases c;
	struct explain_baseline b;
	struct explain_result r;
	struct rba_detail d;
	struct rba_json_value root;
	const struct rebuild_forest *fo;
	const struct rba_json_value *trees, *t;
	uint8_t *buf;
	size_t len;
	uint32_t tr = 4, i, k = 0, id;
	char want[128];
	float *x;

	load("multi", &a);
	fo = &a.model.forest;
	ck_assert_ptr_nonnull(a.xgb_tree);
	ck_assert_ptr_nonnull(a.xgb_node);
	/* tree 4 (class 1): a split whose file index is not its preorder place */
	for (i = fo->tree_start[tr]; i < fo->tree_start[tr + 1]; i++)
		if (fo->nodes[i].feature != REBUILD_TREE_LEAF &&
		    a.xgb_node[i] != i - fo->tree_start[tr])
			break;
	ck_assert_uint_lt(i, fo->tree_start[tr + 1]);
	id = a.xgb_node[i];
	/* the file's node at that index is this split */
	ck_assert_int_eq(rba_file_read(XDIR "multi.json", 1u << 24, &buf, &len, NULL), 0);
	ck_assert_int_eq(rba_json_parse((const char *)buf, len, &root, NULL), 0);
	trees = rba_json_get(rba_json_get(rba_json_get(rba_json_get(&root, "learner"),
						       "gradient_booster"), "model"), "trees");
	ck_assert_ptr_nonnull(trees);
	t = &trees->items[a.xgb_tree[tr]];
	ck_assert(rba_json_get(t, "split_conditions")->items[id].numf ==
		  fo->nodes[i].threshold);
	ck_assert(rba_json_get(t, "split_indices")->items[id].num ==
		  (double)fo->nodes[i].feature);
	ck_assert(rba_json_get(t, "sum_hessian")->items[id].numf == fo->nodes[i].cover);
	rba_json_release(&root);
	free(buf);

	cases_load(XDIR "cases.csv", &c);
	x = cases_encode(&a, &c);
	memset(&b, 0, sizeof(b));
	b.nfeatures = a.spec.nfeatures;
	b.ncolumns = a.spec.ncolumns;
	fo->nodes[i].cover = 0.0f;
	/* a leaf of cover 0 in class 0's first tree divides nothing */
	while (fo->nodes[k].feature != REBUILD_TREE_LEAF)
		k++;
	fo->nodes[k].cover = 0.0f;
	rba_detail_clear(&d);
	ck_assert_int_eq(explain_case(&a, &b, x, 1, &r, &d), RBA_E_RANGE);
	snprintf(want, sizeof(want), "tree %u node %u is a split whose cover "
		 "(sum_hessian) is 0", a.xgb_tree[tr], id);
	ck_assert_msg(strstr(d.reason, want) != NULL, "%s", d.reason);
	ck_assert_ptr_null(r.contrib);
	for (uint32_t cls = 0; cls < 3; cls += 2) {
		ck_assert_msg(explain_case(&a, &b, x, cls, &r, &d) == 0, "%s", d.reason);
		ck_assert(isfinite(r.baseline) && r.gap < 1e-5);
		explain_result_release(&r);
	}
	free(x);
	cases_free(&c);
	artifact_release(&a);
}
END_TEST

/* multi:softprob: each class's margin explained, as pred_contribs. */
START_TEST(test_xgb_treeshap_multi)
{
	struct artifact a;
	struct cases c;
	struct explain_baseline b;
	FILE *f;
	float *x;

	load("multi", &a);
	cases_load(XDIR "cases.csv", &c);
	x = cases_encode(&a, &c);
	memset(&b, 0, sizeof(b));
	b.nfeatures = a.spec.nfeatures;
	b.ncolumns = a.spec.ncolumns;
	f = fopen(XDIR "multi.contribs", "r");
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < 20; i++)
		for (uint32_t cls = 0; cls < 3; cls++) {
			struct explain_result r;
			struct rba_detail d;
			double want, worst = 0;
			rba_detail_clear(&d);
			ck_assert_msg(explain_case(&a, &b, x + i * a.spec.nfeatures, cls,
						   &r, &d) == 0, "%s", d.reason);
			for (uint32_t k = 0; k < a.spec.ncolumns; k++) {
				ck_assert_int_eq(fscanf(f, "%lf", &want), 1);
				worst = fmax(worst, fabs(r.contrib[k] - want));
			}
			ck_assert_int_eq(fscanf(f, "%lf", &want), 1);
			worst = fmax(worst, fabs(r.baseline - want));
			ck_assert_msg(worst < 1e-5, "case %zu class %u: %g from pred_contribs",
				      i, cls, worst);
			ck_assert(r.gap < 1e-5);
			explain_result_release(&r);
		}
	fclose(f);
	free(x);
	cases_free(&c);
	artifact_release(&a);
}
END_TEST

/*
 * The sample's scorer on a chunk as sample add builds one (a column
 * with a missing field becomes a dictionary), and the sparse interface,
 * both against artifact_score.
 */
START_TEST(test_xgb_sample_scorer)
{
	enum { N = 100 };
	struct artifact a;
	struct cases c;
	struct sample_layout l;
	struct sample_column *cols;
	struct sample_chunk ch;
	struct sample_scorer *sc;
	struct rebuild_sparse *sp;
	struct rba_detail d;
	const char *ids[N];
	float *x, want[N * 2], got[N * 2], *tx;
	uint32_t *row, ndict = 0;

	load("binary", &a);
	cases_load(XDIR "cases.csv", &c);
	x = cases_encode(&a, &c);
	ck_assert_int_eq(artifact_score(&a, x, N, want), 0);
	memset(&l, 0, sizeof(l));
	l.ncols = c.ncols;
	l.names = c.names;
	cols = calloc(c.ncols, sizeof(*cols));
	for (uint32_t k = 0; k < c.ncols; k++) {
		double *num = malloc(N * sizeof(double));
		int numeric = 1;
		for (size_t i = 0; i < N; i++) {
			char *end;
			num[i] = strtod(c.rows[i][k], &end);
			numeric &= *c.rows[i][k] != 0 && *end == 0;
		}
		if (k == 0) {
			cols[k].kind = SAMPLE_COL_IDS;
			free(num);
		} else if (numeric) {
			cols[k].kind = SAMPLE_COL_NUMBER;
			cols[k].num = num;
		} else {
			/* every text its own level: enough for the scorer */
			const char **lv = malloc(N * sizeof(*lv));
			uint32_t *codes = malloc(N * sizeof(*codes));
			for (size_t i = 0; i < N; i++) {
				lv[i] = c.rows[i][k];
				codes[i] = (uint32_t)i;
			}
			cols[k].kind = SAMPLE_COL_DICT;
			cols[k].nlevels = N;
			cols[k].levels = lv;
			cols[k].codes = codes;
			free(num);
			ndict++;
		}
	}
	ck_assert_uint_eq(ndict, 3); /* a2, a5, a13 have gaps */
	for (size_t i = 0; i < N; i++)
		ids[i] = c.rows[i][0];
	memset(&ch, 0, sizeof(ch));
	ch.ncases = N;
	ch.ncols = c.ncols;
	ch.ids = ids;
	ch.cols = cols;
	rba_detail_clear(&d);
	ck_assert_int_eq(sample_scorer_new(&a, &sc, &d), 0);
	ck_assert_int_eq(sample_scorer_bind(sc, &l, &d), 0);
	ck_assert_msg(sample_scorer_run(sc, &ch, got, NULL, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(memcmp(got, want, sizeof(want)), 0);
	sample_scorer_free(sc);

	/* the sparse interface: every input a term, NaN among them */
	tx = malloc(N * 24 * sizeof(float));
	row = malloc(N * 24 * sizeof(uint32_t));
	for (size_t i = 0; i < N; i++)
		for (uint32_t f = 0; f < 24; f++) {
			tx[i * 24 + f] = x[i * 24 + f];
			row[i * 24 + f] = f;
		}
	ck_assert_int_eq(xgbtree_sparse_new(&a.model, &sp), 0);
	memset(got, 0, sizeof(got));
	rebuild_sparse_score(sp, tx, row, 24, N, got);
	ck_assert_int_eq(memcmp(got, want, sizeof(want)), 0);
	rebuild_sparse_free(sp);
	free(tx);
	free(row);
	for (uint32_t k = 0; k < c.ncols; k++) {
		free((void *)cols[k].num);
		free((void *)cols[k].levels);
		free((void *)cols[k].codes);
	}
	free(cols);
	free(x);
	cases_free(&c);
	artifact_release(&a);
}
END_TEST

/* Missing texts in the encoder: NaN with them, refused without. */
START_TEST(test_xgb_encode_missing)
{
	struct artifact a;
	struct rba_detail d;
	const char *vals[24];
	float x[24];
	uint32_t nm;

	load("binary", &a);
	for (uint32_t k = 0; k < 24; k++)
		vals[k] = "1";
	vals[3] = "";
	vals[5] = "NA";
	ck_assert_int_eq(encode_values(&a.spec, vals, x, &d), 0);
	ck_assert(isnan(x[3]) && isnan(x[5]) && x[4] == 1.0f);
	vals[5] = "n/a";
	rba_detail_clear(&d);
	ck_assert_int_eq(encode_values(&a.spec, vals, x, &d), RBA_E_SCHEMA);
	ck_assert_str_eq(d.key, "a6");
	vals[5] = "1";
	nm = a.spec.nmissing;
	a.spec.nmissing = 0; /* our own models: a missing value is refused */
	ck_assert_int_eq(encode_values(&a.spec, vals, x, &d), RBA_E_SCHEMA);
	a.spec.nmissing = nm;
	artifact_release(&a);
}
END_TEST

/* Never written in our format. */
START_TEST(test_xgb_no_encode)
{
	struct artifact a;
	struct rba_buf b;

	load("binary", &a);
	rba_buf_init(&b);
	ck_assert_int_eq(artifact_encode(&a, &b), RBA_E_UNSUPPORTED);
	rba_buf_release(&b);
	artifact_release(&a);
}
END_TEST

/* The fixture's text with the first occurrence of from replaced by to. */
static char *
edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t n = strlen(text), a, k = strlen(to);
	char *out;

	ck_assert_msg(at != NULL, "no '%s' in the fixture", from);
	a = (size_t)(at - text);
	out = malloc(n - strlen(from) + k + 1);
	memcpy(out, text, a);
	memcpy(out + a, to, k);
	strcpy(out + a + k, at + strlen(from));
	return out;
}

static void
refused(const char *text, int want, const char *key, const char *reason)
{
	struct artifact a;
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	err = xgboost_decode(text, strlen(text), "m.json", &a, &d);
	ck_assert_msg(err == want, "%d, not %d: %s", err, want, d.reason);
	if (key != NULL)
		ck_assert_str_eq(d.key, key);
	ck_assert_msg(strstr(d.reason, reason) != NULL, "reason '%s'", d.reason);
	ck_assert_str_eq(d.file, "m.json");
	ck_assert_ptr_null(a.model.forest.nodes);
}

START_TEST(test_xgb_refused)
{
	const char *tp = "$.learner.gradient_booster.model.trees[0]";
	char path[256], *text, *t;
	uint8_t *buf;
	size_t len;

	ck_assert_int_eq(rba_file_read(XDIR "binary.json", 1u << 24, &buf, &len, NULL), 0);
	text = (char *)buf;
	/* a child index out of range */
	t = edit(text, "\"left_children\":[1,", "\"left_children\":[99,");
	snprintf(path, sizeof(path), "%s.left_children[0]", tp);
	refused(t, RBA_E_SCHEMA, path, "child index 99 out of range");
	free(t);
	/* a cycle: node 1's left child is the root */
	t = edit(text, "\"left_children\":[1,3,", "\"left_children\":[1,0,");
	snprintf(path, sizeof(path), "%s.left_children[1]", tp);
	refused(t, RBA_E_SCHEMA, path, "node 0 is reached twice");
	free(t);
	/* a shared node: the root's right child is its left one */
	t = edit(text, "\"right_children\":[2,", "\"right_children\":[1,");
	snprintf(path, sizeof(path), "%s.right_children[0]", tp);
	refused(t, RBA_E_SCHEMA, path, "node 1 is reached twice");
	free(t);
	/* truncated JSON: a syntax error at its place */
	{
		struct artifact a;
		struct rba_detail d;
		rba_detail_clear(&d);
		ck_assert_int_eq(xgboost_decode(text, len / 2, "m.json", &a, &d),
				 RBA_E_SYNTAX);
		ck_assert_uint_eq(d.line, 1);
		ck_assert_uint_gt(d.col, 0);
	}
	t = edit(text, "binary:logistic", "reg:squarederror");
	refused(t, RBA_E_UNSUPPORTED, "$.learner.objective.name",
		"objective 'reg:squarederror' is not supported");
	free(t);
	t = edit(text, "\"name\":\"gbtree\"", "\"name\":\"dart\"");
	refused(t, RBA_E_UNSUPPORTED, "$.learner.gradient_booster.name",
		"booster 'dart' is not supported");
	free(t);
	t = edit(text, "\"split_type\":[0,", "\"split_type\":[1,");
	snprintf(path, sizeof(path), "%s.split_type[0]", tp);
	refused(t, RBA_E_UNSUPPORTED, path, "categorical splits");
	free(t);
	t = edit(text, "\"feature_types\":[]", "\"feature_types\":[\"c\"]");
	refused(t, RBA_E_UNSUPPORTED, "$.learner.feature_types[0]", "categorical features");
	free(t);
	/* an array one entry longer than num_nodes */
	t = edit(text, "\"sum_hessian\":[", "\"sum_hessian\":[1,");
	snprintf(path, sizeof(path), "%s.sum_hessian", tp);
	refused(t, RBA_E_SCHEMA, path, "entries for");
	free(t);
	/* a count over the cap, before any allocation */
	t = edit(text, "\"num_nodes\":\"", "\"num_nodes\":\"99999999");
	snprintf(path, sizeof(path), "%s.tree_param.num_nodes", tp);
	refused(t, RBA_E_LIMIT, path, "is over");
	free(t);
	t = edit(text, "\"num_trees\":\"20\"", "\"num_trees\":\"21\"");
	refused(t, RBA_E_SCHEMA, "$.learner.gradient_booster.model.trees",
		"20 trees, num_trees says 21");
	free(t);
	t = edit(text, "\"feature_names\":[\"a1\",\"a2\"", "\"feature_names\":[\"a1\",\"a1\"");
	refused(t, RBA_E_SCHEMA, "$.learner.feature_names[1]", "named twice");
	free(t);
	t = edit(text, "\"version\":[1,7,", "\"version\":[1,6,");
	refused(t, RBA_E_UNSUPPORTED, "$.version", "1.6 models are not supported");
	free(t);
	t = edit(text, "\"base_score\":\"", "\"base_score\":\"2");
	refused(t, RBA_E_SCHEMA, "$.learner.learner_model_param.base_score", "not in (0, 1)");
	free(t);
	free(buf);
}
END_TEST

/* The text with the first entry of the first array named key set to v. */
static char *
edit_first(const char *text, const char *key, const char *v)
{
	char from[128], to[128];
	const char *at, *end;

	snprintf(from, sizeof(from), "\"%s\":[", key);
	at = strstr(text, from);
	ck_assert_ptr_nonnull(at);
	at += strlen(from);
	end = strpbrk(at, ",]");
	snprintf(from, sizeof(from), "\"%s\":[%.*s%c", key, (int)(end - at), at, *end);
	snprintf(to, sizeof(to), "\"%s\":[%s%c", key, v, *end);
	return edit(text, from, to);
}

/* Values at their entries: non-finite, a one-child split, indices. */
START_TEST(test_xgb_refused_values)
{
	const char *tp = "$.learner.gradient_booster.model.trees[0]";
	char path[256], *text, *t;
	uint8_t *buf;
	size_t len;

	ck_assert_int_eq(rba_file_read(XDIR "binary.json", 1u << 24, &buf, &len, NULL), 0);
	text = (char *)buf;
	t = edit_first(text, "split_conditions", "1e39");
	snprintf(path, sizeof(path), "%s.split_conditions[0]", tp);
	refused(t, RBA_E_SCHEMA, path, "must be a finite float32");
	free(t);
	t = edit_first(text, "sum_hessian", "-1");
	snprintf(path, sizeof(path), "%s.sum_hessian[0]", tp);
	refused(t, RBA_E_SCHEMA, path, "a cover below zero");
	free(t);
	t = edit_first(text, "right_children", "-1");
	snprintf(path, sizeof(path), "%s.right_children[0]", tp);
	refused(t, RBA_E_SCHEMA, path, "a node with one child");
	free(t);
	t = edit_first(text, "split_indices", "24");
	snprintf(path, sizeof(path), "%s.split_indices[0]", tp);
	refused(t, RBA_E_SCHEMA, path, "feature index 24 out of range");
	free(t);
	t = edit_first(text, "split_indices", "1.5");
	refused(t, RBA_E_SCHEMA, path, "must be an integer");
	free(t);
	t = edit_first(text, "default_left", "2");
	snprintf(path, sizeof(path), "%s.default_left[0]", tp);
	refused(t, RBA_E_SCHEMA, path, "flag 2 out of range");
	free(t);
	t = edit_first(text, "tree_info", "1");
	refused(t, RBA_E_SCHEMA, "$.learner.gradient_booster.model.tree_info[0]",
		"group 1 out of range");
	free(t);
	free(buf);
}
END_TEST

/* diff (model/artdiff.h): a model against itself is the same; one
 * split's default direction, one leaf changed, each found at its tree
 * and node; an XGBoost model against one of our forests is two kinds. */
START_TEST(test_xgb_artdiff)
{
	struct artifact a, b, m;
	struct artdiff x;
	struct rba_detail d;
	struct rebuild_forest *f;
	uint32_t t = 3, i;

	load("binary", &a);
	load("binary", &b);
	ck_assert_int_eq(artdiff_kind(&a), ARTDIFF_XGBOOST);
	ck_assert_int_eq(artdiff_compare(&a, &b, &x, &d), 0);
	ck_assert(x.same);
	ck_assert(x.xgboost);
	ck_assert_uint_eq(x.trees_same, 20);
	ck_assert_int_eq(x.first_tree, -1);
	for (size_t k = 0; k < x.ntensors; k++)
		ck_assert_msg(strstr(x.t[k].name, "standardization") == NULL &&
			      strstr(x.t[k].name, "bin edges") == NULL, "%s", x.t[k].name);

	/* tree 4's root: missing values the other way */
	f = &b.model.forest;
	i = f->tree_start[t];
	ck_assert_uint_ne(f->nodes[i].feature, REBUILD_TREE_LEAF);
	f->nodes[i].flags ^= REBUILD_TREE_DEFAULT_LEFT;
	ck_assert_int_eq(artdiff_compare(&a, &b, &x, &d), 0);
	ck_assert(!x.same);
	ck_assert_uint_eq(x.trees_same, 19);
	ck_assert_int_eq(x.first_tree, 3);
	ck_assert_uint_eq(x.first_node, 0);
	ck_assert_msg(strstr(x.tree_what, "missing values go ") == x.tree_what, "%s",
		      x.tree_what);
	f->nodes[i].flags ^= REBUILD_TREE_DEFAULT_LEFT;

	/* a leaf of the last tree, one ulp up */
	t = f->ntrees - 1;
	for (i = f->tree_start[t]; f->nodes[i].feature != REBUILD_TREE_LEAF; i++)
		;
	f->nodes[i].value = nextafterf(f->nodes[i].value, INFINITY);
	ck_assert_int_eq(artdiff_compare(&a, &b, &x, &d), 0);
	ck_assert(!x.same);
	ck_assert_int_eq(x.first_tree, (int64_t)t);
	ck_assert_uint_eq(x.first_node, i - f->tree_start[t]);
	ck_assert_msg(strstr(x.tree_what, "(1 ulps)") != NULL, "%s", x.tree_what);

	/* the same forest as one of ours: another kind */
	load("binary", &m);
	m.model.forest.rules = REBUILD_FOREST_OWN;
	ck_assert_int_eq(artdiff_kind(&m), ARTDIFF_FOREST);
	rba_detail_clear(&d);
	ck_assert_int_eq(artdiff_compare(&a, &m, &x, &d), RBA_E_SCHEMA);
	ck_assert_str_eq(d.reason, "artifacts of two kinds: an XGBoost model and a forest");
	artifact_release(&a);
	artifact_release(&b);
	artifact_release(&m);
}
END_TEST

Suite *
suite_xgboost(void)
{
	Suite *s = suite_create("xgboost");
	TCase *tc = tcase_create("xgboost");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_xgb_binary);
	tcase_add_test(tc, test_xgb_multi);
	tcase_add_test(tc, test_xgb_reglog);
	tcase_add_test(tc, test_xgb_shape);
	tcase_add_test(tc, test_xgb_treeshap);
	tcase_add_test(tc, test_xgb_treeshap_multi);
	tcase_add_test(tc, test_xgb_treeshap_zero_cover);
	tcase_add_test(tc, test_xgb_sample_scorer);
	tcase_add_test(tc, test_xgb_encode_missing);
	tcase_add_test(tc, test_xgb_no_encode);
	tcase_add_test(tc, test_xgb_refused);
	tcase_add_test(tc, test_xgb_refused_values);
	tcase_add_test(tc, test_xgb_artdiff);
	suite_add_tcase(s, tc);
	return s;
}
