/*
 * check_audit.c - the audit module: scoring a stored sample against
 * artifact_score, sample add (lossless, errors),
 * the three verdicts, tampering, disputes and threads.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/declared.h"
#include "audit/dispute.h"
#include "audit/record.h"
#include "fleet/fleet.h"
#include "common/json.h"
#include "audit/register.h"
#include "sample/sample.h"
#include "audit/sample_add.h"
#include "sample/scorer.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "model/artifact.h"
#include "data/encode.h"
#include "model/explain.h"
#include "train/gbdt1.h"
#include "train/kernel.h"
#include "rebuild/rebuild.h"
#include "data/snapshot.h"
#include "store/store.h"
#include "store/store_debug.h"
#include "tests/unit/scratch.h"
#include "tests/unit/suites.h"

#define GC FIXTURES "/german-credit.csv"
#define GN FIXTURES "/german-credit-numeric.csv"
#define PINS_CAT_MLP FIXTURES "/pins/german-categorical-mlp.yaml"
#define PINS_CAT_LOG FIXTURES "/pins/german-categorical-logistic.yaml"
#define PINS_NUM_MLP FIXTURES "/pins/german-numeric-mlp.yaml"
#define PINS_NUM_LOG FIXTURES "/pins/german-numeric-logistic.yaml"
#define PINS_NUM_GBDT FIXTURES "/pins/german-numeric-gbdt.yaml"
#define PINS_NATIVE FIXTURES "/pins/german-native-gbdt.yaml"
#define POL_CREDIT FIXTURES "/policy/credit.yaml"
#define POL_TOLERANT FIXTURES "/policy/audit-tolerant.yaml"
#define POL_ARGMAX FIXTURES "/policy/argmax.yaml"


static void
setup(void)
{
	scratch_make("audit");
	ck_assert_int_eq(rba_crypto_init(), 0);
	unsetenv("RBA_STRICT_ISA");
}

static void
teardown(void)
{
	scratch_remove();
	unsetenv("RBA_STRICT_ISA");
}

static int
has_text(const char *s, const char *t)
{
	return s != NULL && strstr(s, t) != NULL;
}

static char *
tmp_file(const char *name)
{
	static char path[2][400];
	static int k;

	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/%s", scratch_dir, name);
	return path[k];
}

static void
write_file(const char *path, const void *p, size_t n)
{
	ck_assert_int_eq(rba_file_write_atomic(path, p, n, 0644), 0);
}

static struct policy *
load_policy(const char *path)
{
	struct policy *p = NULL;
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_msg(policy_load(path, &p, &d) == 0, "%s: %s", path, d.reason);
	return p;
}

/* A store with both German credit snapshots. */
static struct store *
new_store(void)
{
	struct store *s = NULL;
	struct store_txn *t;
	struct rba_detail d;
	struct rba_digest dg;

	rba_detail_clear(&d);
	ck_assert_msg(store_init(scratch_store, &d) == 0, "init: %s", d.reason);
	ck_assert_msg(store_open(scratch_store, 0, &s, &d) == 0, "open: %s", d.reason);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_msg(snapshot_add(t, GC, NULL, &dg, NULL, &d) == 0, "%s", d.reason);
	ck_assert_msg(snapshot_add(t, GN, NULL, &dg, NULL, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	return s;
}

/* Registers pins (renamed to version when given) as register does. */
static void
reg(struct store *s, const char *pins_path, const char *version,
    const char *artifact_path, const char *policy_path)
{
	struct register_request rq;
	struct register_result res;
	struct pins *p = NULL;
	struct policy *pol = policy_path ? load_policy(policy_path) : NULL;
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_int_eq(policy_pins_load(pins_path, &p, &d), 0);
	if (version != NULL) {
		free(p->version);
		p->version = strdup(version);
	}
	memset(&rq, 0, sizeof(rq));
	rq.pins = p;
	rq.artifact_path = artifact_path;
	rq.policy = pol;
	ck_assert_msg(register_version(s, &rq, &res, &d) == 0, "register: %s",
		      d.reason);
	register_result_release(&res);
	policy_pins_free(p);
	policy_free(pol);
}

static int
add_sample(struct store *s, const char *version, const char *csv,
	   const char *policy_path, struct rba_detail *d)
{
	struct sample_add_request rq;
	struct sample_add_result res;
	struct policy *pol = policy_path ? load_policy(policy_path) : NULL;
	int err;

	memset(&rq, 0, sizeof(rq));
	rq.version = version;
	rq.path = csv;
	rq.policy = pol;
	rba_detail_clear(d);
	err = sample_add(s, &rq, &res, d);
	sample_add_result_release(&res);
	policy_free(pol);
	return err;
}

static void
audit(struct store *s, const char *version, const char *policy_path,
      unsigned threads, struct audit_report *r, int want_err)
{
	struct audit_options o;
	struct policy *pol = policy_path ? load_policy(policy_path) : NULL;
	struct rba_detail d;
	int err;

	memset(&o, 0, sizeof(o));
	o.policy = pol;
	o.threads = threads;
	rba_detail_clear(&d);
	err = audit_version(s, version, &o, r, &d);
	ck_assert_msg(err == want_err, "audit %s: %d (%s)", version, err, d.reason);
	policy_free(pol);
}

/* The stored artifact of version as bytes. */
static uint8_t *
stored_artifact(struct store *s, const char *version, size_t *n)
{
	struct store_txn *t;
	struct store_version v;
	struct rba_detail d;
	uint8_t *p = NULL;

	rba_detail_clear(&d);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(store_version_get(t, version, &v, &d), 0);
	ck_assert_int_eq(store_blob_load(t, &v.artifact, ARTIFACT_MAX_BYTES, &p, n, &d), 0);
	store_version_release(&v);
	store_txn_abort(t);
	return p;
}

static uint64_t
history_count(struct store *s)
{
	struct store_txn *t;
	struct rba_detail d;
	uint64_t bad = 0, n = 0;

	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(store_history_verify(t, &bad, &n, &d), 0);
	store_txn_abort(t);
	return n;
}

/*
 * The declared-before rule when the policy the sample was added under
 * is not kept: the rule cannot be applied, and declared_judge says so
 * instead of judging by the later policy; a later policy that is the
 * sample's own, or one set before the sample, judges as usual.
 */
START_TEST(test_declared_unkept)
{
	static const char strict[] = "schema: rebuild-audit/policy/v1\n"
		"decision: {bands: [{below: 0.5, decision: a}, {decision: b}]}\n"
		"tolerance: {max_score_delta: 0.0001, max_flips: 0}\n";
	static const char loose[] = "schema: rebuild-audit/policy/v1\n"
		"decision: {bands: [{below: 0.5, decision: a}, {decision: b}]}\n"
		"tolerance: {max_score_delta: 0.01, max_flips: 3}\n";
	struct store *s = new_store();
	struct store_txn *t;
	struct policy *ps, *pl;
	struct store_version v;
	struct store_sample_info info;
	struct declared_judgement j;
	struct rba_detail d;
	char why[160];

	ck_assert_int_eq(policy_parse(strict, strlen(strict), "s", &ps, &d), 0);
	ck_assert_int_eq(policy_parse(loose, strlen(loose), "l", &pl, &d), 0);
	ck_assert_int_eq(policy_as_strict(ps, pl, why, sizeof(why)), 1);
	ck_assert_int_eq(policy_as_strict(pl, ps, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "tolerance.max_score_delta");
	memset(&v, 0, sizeof(v));
	memset(&info, 0, sizeof(info));
	v.name = "v";
	v.has_policy = 1;
	v.policy_text = pl->text;
	v.policy_digest = pl->digest;
	v.registered_at = 2000;	 /* the loose policy came after ... */
	info.has_policy = 1;
	info.policy_digest = ps->digest;
	info.added = 1000;	 /* ... the sample, added under the strict one */
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(declared_judge(t, &v, pl, &info, &j, &d), RBA_E_NOTFOUND);
	ck_assert(has_text(d.reason, "cannot check that the tolerance"));
	/* declared before the sample: the version's judges */
	v.registered_at = 500;
	ck_assert_int_eq(declared_judge(t, &v, pl, &info, &j, &d), 0);
	ck_assert_int_eq(j.own, 0);
	ck_assert(rba_digest_equal(&j.pol->digest, &pl->digest));
	declared_judgement_release(&j);
	/* the sample's own policy: no text needed */
	v.registered_at = 2000;
	info.policy_digest = pl->digest;
	ck_assert_int_eq(declared_judge(t, &v, pl, &info, &j, &d), 0);
	declared_judgement_release(&j);
	store_txn_abort(t);
	policy_free(ps);
	policy_free(pl);
	store_close(s);
}
END_TEST

/* ---- scoring ------------------------------------------------------------ */

/* Scores every case of a stored sample with artifact_score, as reference. */
struct ref {
	const struct artifact *a;
	const struct sample_layout *l;
	struct sample_scorer *sc;
	uint64_t cases;
	int mismatch;	/* the scorer against artifact_score */
	int stored_off; /* the stored scores against artifact_score */
	int walk_off;	/* a forest: artifact_score against ref_walk */
};

/*
 * A forest of ours scored as gbdt1.c's forward pass first did it, a
 * level set by rebuild_tree_cat_left's binary search: each tree walked
 * with rebuild_tree_goes_left, the leaves added per group in tree order,
 * then gbdt1_softmax.  raw: one case's encode_values row.
 */
static void
ref_walk(const struct artifact *a, const float *raw, float *probs)
{
	const struct rebuild_forest *f = &a->model.forest;
	uint32_t K = f->ngroups;
	float mg[REBUILD_MAX_CLASSES], x[REBUILD_MAX_WIDTH];

	encode_standardize(&a->spec, raw, 1, x);
	memcpy(mg, f->base, K * sizeof(float));
	for (uint32_t t = 0; t < f->ntrees; t++) {
		uint32_t i = f->tree_start[t];
		while (f->nodes[i].feature != REBUILD_TREE_LEAF)
			i = rebuild_tree_goes_left(&f->nodes[i], x[f->nodes[i].feature])
				    ? f->nodes[i].left
				    : f->nodes[i].right;
		mg[t % K] += f->nodes[i].value;
	}
	gbdt1_softmax(mg, K, f->nclasses, f->nclasses, probs);
}

static int
ref_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct ref *r = ctx;
	const struct encode_spec *spec = &r->a->spec;
	size_t nf = spec->nfeatures, C = spec->nclasses;
	float *raw = calloc(nf, sizeof(float)), *want = malloc(C * sizeof(float));
	float *got = malloc((size_t)c->ncases * C * sizeof(float));
	const char **vals = calloc(spec->ncolumns, sizeof(char *));
	char (*tmp)[32] = calloc(spec->ncolumns, 32);
	struct rba_detail d;

	(void)chunk_no;
	ck_assert_int_eq(sample_scorer_run(r->sc, c, got, NULL, &d), 0);
	for (uint32_t i = 0; i < c->ncases; i++) {
		for (uint32_t k = 0; k < spec->ncolumns; k++) {
			long col = -1;
			for (uint32_t j = 0; j < r->l->ncols; j++)
				if (strcmp(r->l->names[j], spec->columns[k].name) == 0)
					col = j;
			vals[k] = sample_chunk_text(c, (uint32_t)col, i, tmp[k]);
		}
		ck_assert_int_eq(encode_values(spec, vals, raw, &d), 0);
		ck_assert_int_eq(artifact_score(r->a, raw, 1, want), 0);
		if (r->a->model.kind == REBUILD_KIND_GBDT &&
		    r->a->model.forest.rules == REBUILD_FOREST_OWN) {
			float walk[REBUILD_MAX_CLASSES];
			ref_walk(r->a, raw, walk);
			r->walk_off += memcmp(walk, want, C * sizeof(float)) != 0;
		}
		for (size_t k = 0; k < C; k++) {
			float s = (float)c->scores[(size_t)i * C + k];
			if (memcmp(&want[k], &got[(size_t)i * C + k], 4) != 0)
				r->mismatch++;
			if (memcmp(&want[k], &s, 4) != 0)
				r->stored_off++;
		}
		r->cases++;
	}
	free(raw);
	free(want);
	free(got);
	free(vals);
	free(tmp);
	return 0;
}

/*
 * A forest of numbers alone read raw (sample/scorer.c's raw_setup) where
 * its splits tie with the cases: every numeric feature gets another
 * standardization, and every split the standardized value of a whole
 * number near its raw threshold (German credit's numbers are whole),
 * that value's neighbour above or below for one split in three each, so
 * that many cases land exactly on a threshold or one float from it.
 * The scorer must still give artifact_score's bits, on every path.
 */
static void
check_raw_ties(struct artifact *a, struct ref *r, struct store_txn *t,
	       const char *version, const struct sample_layout *l)
{
	struct rebuild_forest *f = &a->model.forest;
	uint32_t nf = a->spec.nfeatures;
	float mean0[REBUILD_MAX_WIDTH], scale0[REBUILD_MAX_WIDTH];
	float row[REBUILD_MAX_WIDTH], x[REBUILD_MAX_WIDTH];
	const char *isas[3];
	size_t nisa = kernel_strict_isas(isas);
	struct rba_detail d;

	ck_assert_uint_le(nf, REBUILD_MAX_WIDTH);
	memcpy(mean0, a->spec.mean, nf * sizeof(float));
	memcpy(scale0, a->spec.scale, nf * sizeof(float));
	for (uint32_t k = 0; k < nf; k++) {
		a->spec.mean[k] = 3.0f * (float)(k + 1) / 7.0f;
		a->spec.scale[k] = 0.37f + 0.01f * (float)k;
	}
	memset(row, 0, sizeof(row));
	for (size_t i = 0; i < f->tree_start[f->ntrees]; i++) {
		struct rebuild_tree_node *q = &f->nodes[i];
		uint32_t k = q->feature;
		if (k == REBUILD_TREE_LEAF)
			continue;
		/* the whole number nearest the raw threshold, standardized
		 * anew */
		row[k] = nearbyintf(q->threshold * scale0[k] + mean0[k]);
		encode_standardize(&a->spec, row, 1, x);
		q->threshold = i % 3 == 1 ? nextafterf(x[k], INFINITY)
			     : i % 3 == 2 ? nextafterf(x[k], -INFINITY) : x[k];
	}
	for (size_t i = 0; i <= nisa; i++) {
		if (i < nisa)
			setenv("RBA_STRICT_ISA", isas[i], 1);
		else
			unsetenv("RBA_STRICT_ISA");
		ck_assert_int_eq(sample_scorer_new(a, &r->sc, &d), 0);
		ck_assert_int_eq(sample_scorer_bind(r->sc, l, &d), 0);
		r->mismatch = r->stored_off = r->walk_off = 0;
		ck_assert_int_eq(sample_walk(t, version, l, ref_chunk, r, &d), 0);
		ck_assert_msg(r->mismatch == 0, "ties, %s: %d scores differ",
			      i < nisa ? isas[i] : "default", r->mismatch);
		ck_assert_int_eq(r->walk_off, 0);
		ck_assert(r->stored_off > 0); /* the forest did change */
		sample_scorer_free(r->sc);
	}
}

/*
 * The scorer on the sample csv of version (registered from pins_path)
 * against artifact_score of encode_values, case by case, bit for bit
 * (a forest also against ref_walk), and against the stored scores; with
 * the narrowest vector path; and, made dense by a one-hot mean that
 * does not standardize to zero, the dense path against the same.
 */
static void
check_scoring_on(const char *pins_path, const char *version, const char *csv,
		 uint64_t ncases, int want_sparse)
{
	struct store *s = new_store();
	struct store_txn *t;
	struct store_sample_info info;
	struct sample_layout l;
	struct artifact a;
	struct ref r;
	struct rba_detail d;
	uint8_t *bytes;
	size_t n;

	reg(s, pins_path, NULL, NULL, POL_CREDIT);
	ck_assert_msg(add_sample(s, version, csv, NULL, &d) == 0, "%s", d.reason);
	bytes = stored_artifact(s, version, &n);
	ck_assert_int_eq(artifact_decode(bytes, n, &a, &d), 0);
	memset(&r, 0, sizeof(r));
	r.a = &a;
	r.l = &l;
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(sample_layout_load(t, version, &info, &l, &d), 0);
	ck_assert_int_eq(sample_scorer_new(&a, &r.sc, &d), 0);
	ck_assert_int_eq(sample_scorer_is_sparse(r.sc), want_sparse);
	ck_assert_int_eq(sample_scorer_bind(r.sc, &l, &d), 0);
	ck_assert_int_eq(sample_walk(t, version, &l, ref_chunk, &r, &d), 0);
	ck_assert_uint_eq(r.cases, ncases);
	ck_assert_msg(r.mismatch == 0, "%d scores differ from artifact_score", r.mismatch);
	ck_assert_int_eq(r.stored_off, 0);
	ck_assert_int_eq(r.walk_off, 0);
	/* Every vector path this CPU has gives the same bits. */
	sample_scorer_free(r.sc);
	{
		const char *isas[3];
		size_t nisa = kernel_strict_isas(isas);
		for (size_t i = 0; i < nisa; i++) {
			setenv("RBA_STRICT_ISA", isas[i], 1);
			ck_assert_int_eq(sample_scorer_new(&a, &r.sc, &d), 0);
			ck_assert_int_eq(sample_scorer_bind(r.sc, &l, &d), 0);
			ck_assert_int_eq(sample_walk(t, version, &l, ref_chunk, &r, &d), 0);
			ck_assert_msg(r.mismatch == 0, "%s: %d scores differ", isas[i],
				      r.mismatch);
			sample_scorer_free(r.sc);
		}
	}
	unsetenv("RBA_STRICT_ISA");
	if (a.model.kind == REBUILD_KIND_GBDT &&
	    a.model.forest.rules == REBUILD_FOREST_OWN &&
	    a.spec.nfeatures == a.spec.ncolumns)
		check_raw_ties(&a, &r, t, version, &l);
	/* A one-hot feature that does not standardize to zero: dense path. */
	if (a.spec.nfeatures > a.spec.ncolumns) {
		int moved = 0;
		for (uint32_t c = 0, f = 0; c < a.spec.ncolumns && !moved; c++) {
			const struct encode_column *ec = &a.spec.columns[c];
			uint32_t w = encode_column_width(ec);
			for (uint32_t k = 0; ec->kind == ENCODE_CATEGORICAL && k < w; k++)
				if (a.spec.mean[f + k] == 0.0f &&
				    a.spec.scale[f + k] == 1.0f) {
					a.spec.mean[f + k] = 0.25f;
					moved = 1;
					break;
				}
			f += w;
		}
		ck_assert(moved);
		ck_assert_int_eq(sample_scorer_new(&a, &r.sc, &d), 0);
		ck_assert_int_eq(sample_scorer_is_sparse(r.sc), 0);
		ck_assert_int_eq(sample_scorer_bind(r.sc, &l, &d), 0);
		r.mismatch = r.stored_off = 0;
		ck_assert_int_eq(sample_walk(t, version, &l, ref_chunk, &r, &d), 0);
		/* The dense path agrees with artifact_score, and the scores
		 * moved away from the stored ones (made with the real mean). */
		ck_assert_int_eq(r.mismatch, 0);
		ck_assert_int_eq(r.walk_off, 0);
		ck_assert(r.stored_off > 0);
		sample_scorer_free(r.sc);
	}
	store_txn_abort(t);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	artifact_release(&a);
	free(bytes);
	store_close(s);
}

static void
check_scoring(const char *pins_path, const char *version, int want_sparse)
{
	check_scoring_on(pins_path, version, strstr(version, "numeric") ? GN : GC,
			 1000, want_sparse);
}

/*
 * Copies CSV file from to file to, each data line's field replaced by
 * cell(line, field) where that is not NULL (line 1 is the first case;
 * "" blanks the field); from must start with header.
 */
static void
csv_rewrite(const char *from, const char *to, const char *header,
	    const char *(*cell)(size_t line, size_t field))
{
	struct rba_buf b;
	struct rba_detail d;
	uint8_t *in;
	size_t n, line = 0, at = 0;

	ck_assert_int_eq(rba_file_read(from, 1u << 24, &in, &n, &d), 0);
	ck_assert(n >= strlen(header) && memcmp(in, header, strlen(header)) == 0);
	rba_buf_init(&b);
	while (at < n) {
		size_t end = at, field = 0;
		while (end < n && in[end] != '\n')
			end++;
		for (size_t i = at; i < end; i++) {
			size_t j = i;
			const char *t = line > 0 ? cell(line, field) : NULL;
			while (j < end && in[j] != ',')
				j++;
			if (field > 0)
				rba_buf_put_u8(&b, ',');
			if (t != NULL)
				rba_buf_put(&b, t, strlen(t));
			else
				rba_buf_put(&b, in + i, j - i);
			field++;
			i = j;
		}
		rba_buf_put_u8(&b, '\n');
		line++;
		at = end + 1;
	}
	ck_assert_int_eq(rba_buf_status(&b), 0);
	write_file(to, b.p, b.len);
	rba_buf_release(&b);
	free(in);
}

static const char *
odd_levels_cell(size_t line, size_t field)
{
	if (field == 4 && line % 5 == 0)
		return "A499";
	if (field == 1 && line % 11 == 0)
		return "A19";
	if (field == 2 && line % 7 == 0)
		return "";
	return NULL;
}

/*
 * German credit with texts a native forest must take: every fifth case
 * asks for purpose A499 and every eleventh for checking_status A19
 * (levels no training row has), every seventh has no duration_months (a
 * missing value).
 */
static const char *
german_odd_levels(void)
{
	char *out = tmp_file("odd-levels.csv");

	csv_rewrite(GC, out, "id,checking_status,duration_months,credit_history,purpose,",
		    odd_levels_cell);
	return out;
}

/*
 * A forest with native columns takes the sparse path (a level index a
 * term); on German credit, and on cases with levels unseen in training
 * and missing values, its scores are artifact_score's, the stored
 * ones and the reference walk's, bit for bit; so are the dense path's.
 */
START_TEST(test_scoring_native)
{
	check_scoring(PINS_NATIVE, "german-native-gbdt", 1);
	teardown();
	setup();
	check_scoring_on(PINS_NATIVE, "german-native-gbdt", german_odd_levels(),
			 1000, 1);
}
END_TEST

/*
 * A chunk with cases the model cannot take in two columns: the scorer
 * reports the first bad case of the first column that has one, as a
 * chunk scored column by column does, even when a later column's bad
 * case sits in an earlier block of SCORE_ROWS cases.  Two dictionary
 * entries of the decoded chunk are made unknown levels: one of an
 * earlier column whose uses before case SCORE_ROWS are moved to another
 * entry, one of a later column used before it.
 */
struct order_ctx {
	const struct artifact *a;
	const struct sample_layout *l;
	struct sample_scorer *sc;
	int checked;
};

/* The first case using entry v of chunk column col, or ncases. */
static uint32_t
first_use(const struct sample_chunk *c, uint32_t col, uint32_t v)
{
	uint32_t i = 0;

	while (i < c->ncases && c->cols[col].codes[i] != v)
		i++;
	return i;
}

/*
 * Chunk c, damaged by the caller, scored into probs (freed here): the
 * first bad case must be i1, the reason want.  0, for the chunk walk.
 */
static int
order_expect(struct order_ctx *o, const struct sample_chunk *c, float *probs,
	     uint32_t i1, const char *want)
{
	struct rba_detail d;
	uint32_t bad = 0;

	rba_detail_clear(&d);
	ck_assert_int_eq(sample_scorer_run(o->sc, c, probs, &bad, &d), RBA_E_SCHEMA);
	ck_assert_uint_eq(bad, i1);
	ck_assert_msg(strcmp(d.reason, want) == 0, "%s", d.reason);
	o->checked++;
	free(probs);
	return 0;
}

static int
order_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct order_ctx *o = ctx;
	const struct encode_spec *spec = &o->a->spec;
	long col1 = -1, col2 = -1, k1 = -1;
	uint32_t v1 = 0, v2 = 0, i1 = 0;
	float *probs = malloc((size_t)c->ncases * spec->nclasses * sizeof(float));
	char want[256];

	(void)chunk_no;
	for (uint32_t k = 0; k < spec->ncolumns && col2 < 0; k++) {
		const struct encode_column *ec = &spec->columns[k];
		long src = -1;
		if (ec->kind != ENCODE_CATEGORICAL)
			continue;
		for (uint32_t j = 0; j < o->l->ncols; j++)
			if (strcmp(o->l->names[j], ec->name) == 0)
				src = j;
		if (src < 0 || c->cols[src].kind != SAMPLE_COL_DICT)
			continue;
		if (col1 < 0 && c->cols[src].nlevels >= 2) {
			/* entry 0, its uses before SCORE_ROWS moved to 1 */
			uint32_t *codes = (uint32_t *)c->cols[src].codes;
			for (uint32_t i = 0; i < SCORE_ROWS && i < c->ncases; i++)
				if (codes[i] == 0)
					codes[i] = 1;
			i1 = first_use(c, (uint32_t)src, 0);
			if (i1 < c->ncases)
				col1 = src, v1 = 0, k1 = k;
			continue;
		}
		if (col1 >= 0 && first_use(c, (uint32_t)src, 0) < SCORE_ROWS)
			col2 = src, v2 = 0;
	}
	ck_assert_msg(col1 >= 0 && col2 >= 0, "no two columns to make bad");
	/* Test only: the decoded chunk's texts, rewritten in place. */
	((const char **)c->cols[col1].levels)[v1] = "Z-unknown-1";
	((const char **)c->cols[col2].levels)[v2] = "Z-unknown-2";
	snprintf(want, sizeof(want), "case '%s': unknown level 'Z-unknown-1' of "
		 "categorical column '%s'", c->ids[i1], spec->columns[k1].name);
	return order_expect(o, c, probs, i1, want);
}

/* The chunks of version's sample (registered from pins_path, cases
 * csv) through chunk_fn, each with the sparse scorer bound: one must
 * have been checked. */
static void
error_order_on(const char *pins_path, const char *version, const char *csv,
	       int (*chunk_fn)(void *, uint32_t, const struct sample_chunk *))
{
	struct store *s = new_store();
	struct store_txn *t;
	struct store_sample_info info;
	struct sample_layout l;
	struct artifact a;
	struct order_ctx o;
	struct rba_detail d;
	uint8_t *bytes;
	size_t n;

	reg(s, pins_path, NULL, NULL, POL_CREDIT);
	ck_assert_msg(add_sample(s, version, csv, NULL, &d) == 0, "%s", d.reason);
	bytes = stored_artifact(s, version, &n);
	ck_assert_int_eq(artifact_decode(bytes, n, &a, &d), 0);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(sample_layout_load(t, version, &info, &l, &d), 0);
	memset(&o, 0, sizeof(o));
	o.a = &a;
	o.l = &l;
	ck_assert_int_eq(sample_scorer_new(&a, &o.sc, &d), 0);
	ck_assert_int_eq(sample_scorer_is_sparse(o.sc), 1);
	ck_assert_int_eq(sample_scorer_bind(o.sc, &l, &d), 0);
	ck_assert_int_eq(sample_walk(t, version, &l, chunk_fn, &o, &d), 0);
	ck_assert_int_eq(o.checked, 1);
	sample_scorer_free(o.sc);
	store_txn_abort(t);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	artifact_release(&a);
	free(bytes);
	store_close(s);
}

START_TEST(test_scoring_error_order)
{
	error_order_on(PINS_CAT_MLP, "german-categorical-mlp", GC, order_chunk);
}
END_TEST

START_TEST(test_scoring_cat_mlp)
{
	check_scoring(PINS_CAT_MLP, "german-categorical-mlp", 1);
}
END_TEST

START_TEST(test_scoring_cat_logistic)
{
	check_scoring(PINS_CAT_LOG, "german-categorical-logistic", 1);
}
END_TEST

/*
 * The numeric forest's pins taking "" as missing, into pins, and German
 * numeric cases with field a2 blank in cases 200, 520 and 880 (blocks 1,
 * 3 and 5 of SCORE_ROWS), into csv: a chunk whose blocks go raw and
 * standardized in turn (sample/scorer.c's raw_block).
 */
static const char *
blanks_cell(size_t line, size_t field)
{
	return field == 2 && (line == 201 || line == 521 || line == 881) ? ""
									: NULL;
}

static void
german_numeric_blanks(char *pins, char *csv, size_t cap)
{
	struct rba_buf b;
	struct rba_detail d;
	uint8_t *in;
	size_t n;
	const char *k;

	snprintf(pins, cap, "%s", tmp_file("blanks.yaml"));
	snprintf(csv, cap, "%s", tmp_file("blanks.csv"));
	ck_assert_int_eq(rba_file_read(PINS_NUM_GBDT, 1u << 20, &in, &n, &d), 0);
	k = strstr((const char *)in, "  exclude: []\n");
	ck_assert_ptr_nonnull(k);
	rba_buf_init(&b);
	rba_buf_put(&b, in, (size_t)((const uint8_t *)k - in));
	rba_buf_printf(&b, "  missing: [\"\"]\n");
	rba_buf_put(&b, k, n - (size_t)((const uint8_t *)k - in));
	ck_assert_int_eq(rba_buf_status(&b), 0);
	write_file(pins, b.p, b.len);
	rba_buf_release(&b);
	free(in);
	csv_rewrite(GN, csv, "id,a1,a2,", blanks_cell);
}

/* Models of numbers alone: the column path (run_cols), a network's and
 * a forest's; and the forest on cases some of whose blocks have a
 * missing value, so that its raw and standardized blocks alternate. */
START_TEST(test_scoring_numeric)
{
	char pins[400], csv[400];

	check_scoring(PINS_NUM_MLP, "german-numeric-mlp", 1);
	teardown();
	setup();
	check_scoring(PINS_NUM_LOG, "german-numeric-logistic", 1);
	teardown();
	setup();
	check_scoring(PINS_NUM_GBDT, "german-numeric-gbdt", 1);
	teardown();
	setup();
	german_numeric_blanks(pins, csv, sizeof(pins));
	check_scoring_on(pins, "german-numeric-gbdt", csv, 1000, 1);
}
END_TEST

/*
 * The same order on the column path of a model of numbers alone: a
 * number the model cannot take (NaN without a token's text) in the
 * first column, past the first block of SCORE_ROWS cases, and one
 * beyond float32 in a later column, in the first block: the first is
 * reported, as by the terms' path.
 */
static int
order_numbers_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct order_ctx *o = ctx;
	const struct encode_spec *spec = &o->a->spec;
	long src[2] = { -1, -1 };
	uint32_t k0 = 0, i1 = SCORE_ROWS + 7;
	float *probs = malloc((size_t)c->ncases * spec->nclasses * sizeof(float));
	char want[256];

	(void)chunk_no;
	ck_assert_uint_gt(c->ncases, i1);
	for (uint32_t k = 0, m = 0; k < spec->ncolumns && m < 2; k++)
		for (uint32_t j = 0; j < o->l->ncols; j++)
			if (strcmp(o->l->names[j], spec->columns[k].name) == 0 &&
			    c->cols[j].kind == SAMPLE_COL_NUMBER) {
				if (m == 0)
					k0 = k;
				src[m++] = j;
			}
	ck_assert_msg(src[1] >= 0, "no two number columns");
	/* Test only: the decoded chunk's numbers, rewritten in place. */
	((double *)c->cols[src[0]].num)[i1] = NAN;
	((double *)c->cols[src[1]].num)[3] = 1e39;
	snprintf(want, sizeof(want), "case '%s': column '%s' needs a number, "
		 "not 'nan'", c->ids[i1], spec->columns[k0].name);
	return order_expect(o, c, probs, i1, want);
}

START_TEST(test_scoring_error_order_numbers)
{
	error_order_on(PINS_NUM_MLP, "german-numeric-mlp", GN,
		       order_numbers_chunk);
	teardown();
	setup();
	error_order_on(PINS_NUM_GBDT, "german-numeric-gbdt", GN,
		       order_numbers_chunk);
}
END_TEST

/* ---- sample add ---------------------------------------------------------- */

/* The German credit header and its first rows, with texts to keep. */
static const char odd_csv[] =
	"id,checking_status,duration_months,credit_history,purpose,credit_amount,"
	"savings,employment_since,installment_rate,personal_status_sex,"
	"other_debtors,residence_since,property,age,other_installment_plans,"
	"housing,existing_credits,job,people_liable,telephone,foreign_worker,class\n"
	"a-1,A11,06,A34,A43,1169.0,A65,A75,4,A93,A101,4,A121,67,A143,A152,2,A173,1,A192,A201,007\n"
	"a-2,A12,48,A32,A43,5951,A61,A73,2,A92,A101,2,A121,22,A143,A152,1,A173,1,A191,A201,\"x,\"\"y\"\"\"\n"
	"a-3,A14,+12,A34,A46,2096,A61,A74,2,A93,A101,3,A121,49,A143,A152,1,A172,2,A191,A201,\"two\nlines\"\n"
	"a-4,A11,42,A32,A42,7882,A61,A74,2,A93,A103,4,A122,45,A143,A153,1,A173,2,A191,A201,\n"
	"a-5,A11,24,A33,A40,4870,A61,A73,3,A93,A101,4,A124,53,A143,A153,2,A173,2,A191,A201,1e3\n"
	"a-6,A14,36,A32,A46,9055,A65,A73,2,A93,A101,4,A124,35,A143,A153,1,A172,2,A192,A201,-0\n";

START_TEST(test_sample_lossless)
{
	struct store *s = new_store();
	struct store_txn *t;
	struct rba_detail d;
	uint8_t *out;
	size_t n;
	uint64_t cases;
	char *csv = tmp_file("odd.csv"), *exp = tmp_file("export.csv");

	write_file(csv, odd_csv, strlen(odd_csv));
	reg(s, PINS_CAT_MLP, NULL, NULL, POL_CREDIT);
	ck_assert_msg(add_sample(s, "german-categorical-mlp", csv, NULL, &d) == 0,
		      "%s", d.reason);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_msg(sample_export(t, "german-categorical-mlp", exp, NULL, &cases, &d) == 0,
		      "%s", d.reason);
	store_txn_abort(t);
	ck_assert_uint_eq(cases, 6);
	ck_assert_int_eq(rba_file_read(exp, 1 << 20, &out, &n, &d), 0);
	ck_assert_uint_eq(n, strlen(odd_csv));
	ck_assert_mem_eq(out, odd_csv, n);
	free(out);
	/* The layout keeps the digest of the bytes submitted. */
	{
		struct store_sample_info info;
		struct sample_layout l;
		struct rba_digest want;

		rba_digest_bytes(odd_csv, strlen(odd_csv), &want);
		ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
		ck_assert_int_eq(sample_layout_load(t, "german-categorical-mlp", &info, &l, &d), 0);
		store_txn_abort(t);
		ck_assert_int_eq(l.has_source_digest, 1);
		ck_assert(rba_digest_equal(&l.source_digest, &want));
		ck_assert(strncmp(info.columns, "rebuild-audit/sample/v2\n", 24) == 0);
		sample_layout_release(&l);
		store_sample_info_release(&info);
	}
	store_close(s);
}
END_TEST

START_TEST(test_sample_errors)
{
	struct store *s = new_store();
	struct rba_detail d;
	uint64_t before;
	char *csv = tmp_file("bad.csv");
	const char *head = strchr(odd_csv, '\n') + 1;
	char text[4096];

	reg(s, PINS_CAT_MLP, NULL, NULL, NULL);
	/* No policy kept and none given. */
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", GC, NULL, &d), RBA_E_SCHEMA);
	ck_assert(has_text(d.reason, "no policy"));
	ck_assert_int_eq(add_sample(s, "nope", GC, POL_CREDIT, &d), RBA_E_NOTFOUND);
	before = store_last_txnid(s);

	/* An unknown level, at its line. */
	snprintf(text, sizeof(text), "%.*sa-1,A99,6,A34,A43,1169,A65,A75,4,A93,A101,4,"
		 "A121,67,A143,A152,2,A173,1,A192,A201,1\n", (int)(head - odd_csv), odd_csv);
	write_file(csv, text, strlen(text));
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", csv, POL_CREDIT, &d),
			 RBA_E_SCHEMA);
	ck_assert_uint_eq(d.line, 2);
	ck_assert(has_text(d.reason, "unknown level 'A99'"));
	ck_assert(has_text(d.reason, "case 'a-1'"));

	/* Text in a numeric input column, at its line and column. */
	snprintf(text, sizeof(text), "%.*sa-1,A11,six,A34,A43,1169,A65,A75,4,A93,A101,4,"
		 "A121,67,A143,A152,2,A173,1,A192,A201,1\n", (int)(head - odd_csv), odd_csv);
	write_file(csv, text, strlen(text));
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", csv, POL_CREDIT, &d),
			 RBA_E_SCHEMA);
	ck_assert_uint_eq(d.line, 2);
	ck_assert_uint_eq(d.col, 9);
	ck_assert_str_eq(d.key, "duration_months");

	/* The same id twice. */
	snprintf(text, sizeof(text), "%.*s%.*s%.*s", (int)(head - odd_csv), odd_csv,
		 (int)(strchr(head, '\n') + 1 - head), head,
		 (int)(strchr(head, '\n') + 1 - head), head);
	write_file(csv, text, strlen(text));
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", csv, POL_CREDIT, &d),
			 RBA_E_EXISTS);
	ck_assert_uint_eq(d.line, 3);
	ck_assert_str_eq(d.key, "a-1");

	/* A ragged row, a missing input column, no cases, no file. */
	snprintf(text, sizeof(text), "%.*sa-1,A11\n", (int)(head - odd_csv), odd_csv);
	write_file(csv, text, strlen(text));
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", csv, POL_CREDIT, &d),
			 RBA_E_SCHEMA);
	write_file(csv, "id,class\n1,2\n", 13);
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", csv, POL_CREDIT, &d),
			 RBA_E_SCHEMA);
	ck_assert(has_text(d.reason, "lack input column"));
	write_file(csv, odd_csv, (size_t)(head - odd_csv));
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", csv, POL_CREDIT, &d),
			 RBA_E_SCHEMA);
	ck_assert_int_ne(add_sample(s, "german-categorical-mlp", tmp_file("none.csv"),
				    POL_CREDIT, &d), 0);
	/* None of it wrote anything. */
	ck_assert_uint_eq(store_last_txnid(s), before);
	store_close(s);
}
END_TEST

/* ---- verdicts ------------------------------------------------------------ */

/* The record read back by its table and written again: the same bytes
 * (every member the encoder writes, the decoder reads). */
static void
record_round_trip(const struct rba_json_value *v, const struct rba_buf *b)
{
	struct audit_record rec;
	struct rba_detail d;
	struct rba_buf b2;

	ck_assert_int_eq(audit_record_decode(v, "audit record 1", &rec, &d), 0);
	rba_buf_init(&b2);
	audit_record_encode(&rec, &b2);
	ck_assert_int_eq(rba_buf_status(&b2), 0);
	ck_assert_uint_eq(b2.len, b->len);
	ck_assert(memcmp(b2.p, b->p, b->len) == 0);
	rba_buf_release(&b2);
	audit_record_release(&rec);
}

/* Decodes the record in b with from replaced by to: the error, d's
 * reason; rec's texts are gone (the tree is released), its values kept. */
static int
record_decode_edited(const struct rba_buf *b, const char *from, const char *to,
		     struct audit_record *rec, struct rba_detail *d)
{
	struct rba_json_value v;
	char *t = strndup((const char *)b->p, b->len), *at;
	struct rba_buf e;
	int err;

	ck_assert_ptr_nonnull(t);
	at = strstr(t, from);
	ck_assert_ptr_nonnull(at);
	rba_buf_init(&e);
	rba_buf_put(&e, t, (size_t)(at - t));
	rba_buf_put(&e, to, strlen(to));
	rba_buf_put(&e, at + strlen(from), strlen(at + strlen(from)));
	ck_assert_int_eq(rba_json_parse((const char *)e.p, e.len, &v, NULL), 0);
	err = audit_record_decode(&v, "audit record 7", rec, d);
	rba_json_release(&v);
	rba_buf_release(&e);
	free(t);
	return err;
}

/*
 * The record's table: a report with nothing measured written, read back
 * member by member, and the reader's words for what is missing, of
 * another type, or absent from a record written before it existed.
 */
START_TEST(test_audit_record_table)
{
	struct audit_report r;
	struct audit_record rec;
	struct rba_json_value v;
	struct rba_detail d;
	struct rba_buf b;
	static const struct {
		const char *from, *to, *reason;
	} bad[] = {
		{ "{\"artifact_pinned\"", "{\"artifact_pinne\"",
		  "audit record 7: 'digests.artifact_pinned' is missing, not a "
		  "string" },
		{ "\"flips\": 0", "\"flips\": \"0\"",
		  "audit record 7: 'sample.flips' is of another type, not a number" },
		{ "\"flips\": 0", "\"flips\": 0.5",
		  "audit record 7: 'sample.flips' is not a whole number from 0 to 2^53" },
		{ "\"state\": \"same\"", "\"state\": \"odd\"",
		  "audit record 7: 'links.code_revision.state' is not same, changed "
		  "or unknown" },
		{ "\"reasons\": []", "\"reasons\": [1]",
		  "audit record 7: 'reasons[0]' is not a string" },
		{ "\"artifact\": false", "\"artifact\": null",
		  "audit record 7: 'verified.artifact' is of another type, not true "
		  "or false" },
		{ "\"fields\": []", "\"fields\": [{\"key\": 1}]",
		  "audit record 7: 'links.environment.fields[0].key' is of another "
		  "type, not a string" },
		{ "\"schema\": \"rebuild-audit/audit/v1\"",
		  "\"schema\": \"rebuild-audit/audit/v9\"",
		  "audit record 7 has schema 'rebuild-audit/audit/v9'; this tool "
		  "reads rebuild-audit/audit/v1" },
	};

	memset(&r, 0, sizeof(r));
	r.version = "v";
	r.pins_text = "pins";
	r.policy_text = "policy";
	r.has_score_precision = 1;
	r.score_precision = 0.001;
	rba_buf_init(&b);
	audit_report_json(&r, &b);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	ck_assert_int_eq(rba_json_parse((const char *)b.p, b.len, &v, NULL), 0);
	record_round_trip(&v, &b);
	rba_json_release(&v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_ne(record_decode_edited(&b, bad[i].from, bad[i].to,
						      &rec, &d), 0);
		ck_assert_str_eq(d.reason, bad[i].reason);
		audit_record_release(&rec);
	}
	/* Members a record written before them lacks read as absent. */
	ck_assert_int_eq(record_decode_edited(&b, ", \"ad_hoc\": false", "", &rec,
					      &d), 0);
	ck_assert_int_eq(rec.policy.ad_hoc, -1);
	audit_record_release(&rec);
	ck_assert_int_eq(record_decode_edited(&b, "\"score_precision\": 0.001, ",
					      "", &rec, &d), 0);
	ck_assert(isnan(rec.sample.score_precision));
	ck_assert_uint_eq(rec.sample.flips, 0);
	audit_record_release(&rec);
	rba_buf_release(&b);
}
END_TEST

START_TEST(test_audit_bit_identical)
{
	struct store *s = new_store();
	struct audit_report r;
	struct rba_buf b;
	struct rba_json_value v;
	struct rba_detail d;

	reg(s, PINS_CAT_MLP, NULL, NULL, POL_CREDIT);
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", GC, NULL, &d), 0);
	audit(s, "german-categorical-mlp", NULL, 1, &r, 0);
	ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
	ck_assert_int_eq(r.exit_status, 0);
	ck_assert_uint_eq(r.cases, 1000);
	ck_assert_uint_eq(r.flips, 0);
	ck_assert(r.max_delta == 0.0);
	ck_assert_uint_eq(r.nreasons, 0);
	ck_assert(r.recorded);
	ck_assert_uint_eq(r.history_id, 1);
	ck_assert_int_eq(r.config.state, AUDIT_LINK_SAME);
	ck_assert_int_eq(r.environment.state, AUDIT_LINK_SAME);
	ck_assert_int_eq(r.code_revision.state, AUDIT_LINK_SAME);
	ck_assert_int_eq(r.trainer_abi.state, AUDIT_LINK_SAME);
	ck_assert(r.near_cases > 0);
	rba_buf_init(&b);
	audit_report_json(&r, &b);
	ck_assert_int_eq(rba_json_parse((const char *)b.p, b.len, &v, &d), 0);
	ck_assert_str_eq(rba_json_get_str(&v, "schema"), AUDIT_RECORD_SCHEMA);
	ck_assert_str_eq(rba_json_get_str(&v, "verdict"), "bit-identical");
	ck_assert(rba_json_get_num(rba_json_get(&v, "sample"), "flips", -1) == 0);
	record_round_trip(&v, &b);
	rba_json_release(&v);
	rba_buf_release(&b);
	audit_report_release(&r);
	ck_assert_uint_eq(history_count(s), 1);
	/* No sample: not measured, nothing recorded. */
	reg(s, PINS_CAT_LOG, NULL, NULL, POL_CREDIT);
	audit(s, "german-categorical-logistic", NULL, 1, &r, RBA_E_NOTFOUND);
	ck_assert_int_eq(r.verdict, AUDIT_NOT_MEASURED);
	audit_report_release(&r);
	audit(s, "no-such-version", NULL, 1, &r, RBA_E_NOTFOUND);
	audit_report_release(&r);
	ck_assert_uint_eq(history_count(s), 1);
	store_close(s);
}
END_TEST

/* Registers "flipped": the trained artifact with the lowest mantissa bit
 * of one float32 weight (the last of the output layer) flipped. */
static void
reg_flipped(struct store *s, const char *policy_path)
{
	uint8_t *art;
	size_t n;
	struct artifact a;
	struct rba_detail d;
	char *path = tmp_file("flipped.bin");

	reg(s, PINS_CAT_MLP, NULL, NULL, POL_CREDIT);
	art = stored_artifact(s, "german-categorical-mlp", &n);
	/* The file ends with the output layer: C x H weights, C biases. */
	art[n - 4 * 2 - 4] ^= 1;
	ck_assert_int_eq(artifact_decode(art, n, &a, &d), 0);
	artifact_release(&a);
	write_file(path, art, n);
	free(art);
	reg(s, PINS_CAT_MLP, "flipped", path, policy_path);
}

START_TEST(test_audit_metric_equivalent)
{
	struct store *s = new_store();
	struct audit_report r;
	struct rba_detail d;

	reg_flipped(s, POL_TOLERANT);
	ck_assert_int_eq(add_sample(s, "flipped", GC, NULL, &d), 0);
	audit(s, "flipped", NULL, 1, &r, 0);
	ck_assert_msg(r.verdict == AUDIT_METRIC_EQUIVALENT, "%s: %s",
		      audit_verdict_name(r.verdict), r.nreasons ? r.reasons[0] : "");
	ck_assert_int_eq(r.exit_status, 0);
	ck_assert_uint_eq(r.flips, 0);
	ck_assert(r.max_delta > 0 && r.max_delta <= 0.0005);
	ck_assert_int_eq(r.config.state, AUDIT_LINK_UNKNOWN);
	ck_assert(!rba_digest_equal(&r.artifact_pinned, &r.artifact_rebuilt));
	audit_report_release(&r);
	/* The near-threshold rule turns it into not-reproducible. */
	audit(s, "flipped", POL_CREDIT, 1, &r, 0);
	ck_assert_int_eq(r.verdict, AUDIT_NOT_REPRODUCIBLE);
	ck_assert_int_eq(r.exit_status, 1);
	ck_assert_uint_eq(r.flips, 0);
	ck_assert(r.nreasons == 2 && has_text(r.reasons[1], "near-threshold rule"));
	ck_assert(r.nwarnings >= 1 && has_text(r.warnings[0], "policy"));
	audit_report_release(&r);
	ck_assert_uint_eq(history_count(s), 2);
	store_close(s);
}
END_TEST

/* Replaces the version's pins with the same pins at another learning
 * rate, keeping its artifact: the pins edited after registration. */
static void
edit_lr(struct store *s, const char *version, double lr)
{
	struct store_txn *t;
	struct store_version v;
	struct pins *p;
	struct rba_buf b;
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_int_eq(store_version_get(t, version, &v, &d), 0);
	ck_assert_int_eq(policy_pins_parse(v.pins_text, strlen(v.pins_text), "pins", &p, &d), 0);
	p->train.lr = lr;
	rba_buf_init(&b);
	policy_pins_canonical(p, &b);
	free(v.pins_text);
	v.pins_text = strdup(rba_buf_cstr(&b));
	ck_assert_int_eq(store_version_put(t, &v, 1, &d), 0);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	rba_buf_release(&b);
	policy_pins_free(p);
	store_version_release(&v);
}

START_TEST(test_audit_config_changed)
{
	struct store *s = new_store();
	struct audit_report r, r4;
	struct rba_detail d;

	reg(s, PINS_CAT_MLP, NULL, NULL, POL_CREDIT);
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", GC, NULL, &d), 0);
	edit_lr(s, "german-categorical-mlp", 0.03);
	audit(s, "german-categorical-mlp", NULL, 1, &r, 0);
	ck_assert_int_eq(r.verdict, AUDIT_NOT_REPRODUCIBLE);
	ck_assert_int_eq(r.exit_status, 1);
	ck_assert(r.flips > 0);
	ck_assert(r.nlisted == r.flips || r.nlisted == AUDIT_MAX_LISTED);
	for (size_t i = 0; i < r.nlisted; i++) {
		ck_assert(r.listed[i].margin >= 0 && isfinite(r.listed[i].margin));
		ck_assert(strcmp(r.listed[i].stored_decision, r.listed[i].rebuilt_decision) != 0);
	}
	ck_assert_int_eq(r.config.state, AUDIT_LINK_CHANGED);
	ck_assert(has_text(r.config.note, "edited"));
	ck_assert_int_eq(r.code_revision.state, AUDIT_LINK_SAME);
	ck_assert_int_eq(r.trainer_abi.state, AUDIT_LINK_SAME);
	ck_assert_int_eq(r.environment.state, AUDIT_LINK_SAME);
	ck_assert(has_text(r.reasons[1], "decision flip"));
	/* Four scoring threads find exactly the same. */
	audit(s, "german-categorical-mlp", NULL, 4, &r4, 0);
	ck_assert_uint_eq(r4.flips, r.flips);
	ck_assert_uint_eq(r4.nlisted, r.nlisted);
	ck_assert(r4.max_delta == r.max_delta);
	ck_assert_str_eq(r4.max_delta_case, r.max_delta_case);
	ck_assert_uint_eq(r4.near_cases, r.near_cases);
	for (size_t i = 0; i < r.nlisted; i++)
		ck_assert_str_eq(r4.listed[i].id, r.listed[i].id);
	audit_report_release(&r);
	audit_report_release(&r4);
	store_close(s);
}
END_TEST

/* Rewrites version's record in the first format, without its meta, as
 * a store written before versions kept provenance holds it; with
 * blob_meta, its artifact blob's meta becomes the provenance version
 * blob_meta kept (as the last training of those bytes left it). */
static void
as_old_record(struct store *s, const char *version, const char *blob_meta)
{
	struct store_txn *t;
	struct store_version v, m;
	struct rba_detail d;
	struct rba_digest dg;
	uint8_t *bytes;
	size_t n;

	rba_detail_clear(&d);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_int_eq(store_version_get(t, version, &v, &d), 0);
	if (blob_meta != NULL) {
		ck_assert_int_eq(store_version_get(t, blob_meta, &m, &d), 0);
		ck_assert(m.has_meta && m.meta_len > 0);
		ck_assert_int_eq(store_blob_load(t, &v.artifact, ARTIFACT_MAX_BYTES,
						 &bytes, &n, &d), 0);
		ck_assert_int_eq(store_blob_put(t, STORE_BLOB_ARTIFACT, bytes, n,
						NULL, m.meta, m.meta_len, &dg,
						NULL, &d), 0);
		free(bytes);
		store_version_release(&m);
	}
	v.has_meta = 0;
	ck_assert_int_eq(store_version_put(t, &v, 1, &d), 0);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	store_version_release(&v);
}

/* Registers PINS_NUM_LOG as version at threads: the same bytes whatever
 * the threads, under another config hash. */
static void
reg_threads(struct store *s, const char *version, uint32_t threads)
{
	struct register_request rq;
	struct register_result res;
	struct pins *p = NULL;
	struct policy *pol = load_policy(POL_CREDIT);
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_int_eq(policy_pins_load(PINS_NUM_LOG, &p, &d), 0);
	free(p->version);
	p->version = strdup(version);
	p->determinism.threads = threads;
	memset(&rq, 0, sizeof(rq));
	rq.pins = p;
	rq.policy = pol;
	ck_assert_msg(register_version(s, &rq, &res, &d) == 0, "%s", d.reason);
	register_result_release(&res);
	policy_pins_free(p);
	policy_free(pol);
}

/* Provenance is the version's: two versions training the same bytes,
 * and the first format's records whose provenance is the artifact's. */
START_TEST(test_audit_provenance_per_version)
{
	struct store *s = new_store();
	struct audit_report r;
	struct rba_detail d;

	reg_threads(s, "a", 1);
	reg_threads(s, "b", 2);
	ck_assert_int_eq(add_sample(s, "a", GN, NULL, &d), 0);
	ck_assert_int_eq(add_sample(s, "b", GN, NULL, &d), 0);
	audit(s, "a", NULL, 1, &r, 0);
	ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
	ck_assert_int_eq(r.config.state, AUDIT_LINK_SAME);
	ck_assert(rba_digest_equal(&r.config_registered, &r.config_current));
	audit_report_release(&r);
	/* the first format, the artifact's meta a's own: served */
	as_old_record(s, "a", "a");
	audit(s, "a", NULL, 1, &r, 0);
	ck_assert_int_eq(r.config.state, AUDIT_LINK_SAME);
	ck_assert_int_eq(r.snapshot_link.state, AUDIT_LINK_SAME);
	ck_assert_int_eq(r.has_config_registered, 1);
	audit_report_release(&r);
	/* b's training of the same bytes written last: b's alone */
	as_old_record(s, "b", "b");
	audit(s, "a", NULL, 1, &r, 0);
	ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
	ck_assert_int_eq(r.config.state, AUDIT_LINK_UNKNOWN);
	ck_assert(has_text(r.config.note, "another registration's"));
	ck_assert(has_text(r.code_revision.note, "another registration's"));
	ck_assert_int_eq(r.snapshot_link.state, AUDIT_LINK_UNKNOWN);
	ck_assert_int_eq(r.has_config_registered, 0);
	audit_report_release(&r);
	audit(s, "b", NULL, 1, &r, 0);
	ck_assert_int_eq(r.config.state, AUDIT_LINK_SAME);
	ck_assert_int_eq(r.has_config_registered, 1);
	ck_assert_int_eq(r.code_revision.state, AUDIT_LINK_SAME);
	ck_assert_ptr_null(r.code_revision.note);
	audit_report_release(&r);
	store_close(s);
}
END_TEST

static void
flip_raw(struct store *s, const char *db, const uint8_t *key, size_t klen,
	 size_t off)
{
	struct store_txn *t;
	struct rba_detail d;
	uint8_t *v;
	size_t n;

	rba_detail_clear(&d);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_int_eq(store_debug_get_raw(t, db, key, klen, &v, &n, &d), 0);
	ck_assert(off < n);
	v[off] ^= 0x20;
	ck_assert_int_eq(store_debug_put_raw(t, db, key, klen, v, n, &d), 0);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	free(v);
}

static void
check_tampered(struct store *s, const char *what)
{
	struct audit_report r;
	struct store_txn *t;
	struct store_history_entry e;
	struct rba_detail d;
	uint64_t n = history_count(s);

	audit(s, "german-categorical-mlp", NULL, 1, &r, RBA_E_TAMPERED);
	ck_assert_int_eq(r.verdict, AUDIT_NOT_MEASURED);
	ck_assert_int_eq(r.exit_status, 2);
	ck_assert_msg(has_text(r.reasons[0], "tampered") && has_text(r.reasons[0], what),
		      "reason: %s", r.reasons[0]);
	ck_assert(r.recorded);
	audit_report_release(&r);
	/* What is recorded says so, and is not a reproducible verdict. */
	ck_assert_uint_eq(history_count(s), n + 1);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(store_history_get(t, n + 1, &e, &d), 0);
	ck_assert(has_text((const char *)e.record, "\"verdict\": \"not-measured\""));
	ck_assert(has_text((const char *)e.record, "\"error\": \"tampered\""));
	store_history_entry_release(&e);
	store_txn_abort(t);
}

START_TEST(test_audit_tampered)
{
	struct store *s = new_store();
	struct store_txn *t;
	struct store_version v;
	struct rba_detail d;
	uint8_t key[STORE_DEBUG_KEY_MAX];
	size_t klen;

	reg(s, PINS_CAT_MLP, NULL, NULL, POL_CREDIT);
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", GC, NULL, &d), 0);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(store_version_get(t, "german-categorical-mlp", &v, &d), 0);
	store_txn_abort(t);

	/* A byte of a sample chunk: named as the sample. */
	store_debug_sample_chunk_key("german-categorical-mlp", 0, 0, key, &klen);
	flip_raw(s, "samples", key, klen, STORE_DEBUG_CHUNK_FRAME_OFF + 100);
	check_tampered(s, "sample");
	flip_raw(s, "samples", key, klen, STORE_DEBUG_CHUNK_FRAME_OFF + 100);

	/* A byte of the snapshot. */
	store_debug_blob_chunk_key(&v.snapshot, 0, key, &klen);
	flip_raw(s, "blobs", key, klen, STORE_DEBUG_CHUNK_DIGEST_OFF + 3);
	check_tampered(s, "snapshot");
	flip_raw(s, "blobs", key, klen, STORE_DEBUG_CHUNK_DIGEST_OFF + 3);

	/* A byte of the artifact. */
	store_debug_blob_chunk_key(&v.artifact, 0, key, &klen);
	flip_raw(s, "blobs", key, klen, STORE_DEBUG_CHUNK_FRAME_OFF + 20);
	check_tampered(s, "artifact");
	flip_raw(s, "blobs", key, klen, STORE_DEBUG_CHUNK_FRAME_OFF + 20);

	/* Put back, it audits again. */
	{
		struct audit_report r;
		audit(s, "german-categorical-mlp", NULL, 1, &r, 0);
		ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
		audit_report_release(&r);
	}
	store_version_release(&v);
	store_close(s);
}
END_TEST

/* ---- disputes ------------------------------------------------------------ */

struct find_dec {
	const char *want;
	char id[64];
};

static int
find_dec(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct find_dec *f = ctx;

	(void)chunk_no;
	for (uint32_t i = 0; i < c->ncases && !f->id[0]; i++)
		if (strcmp(c->decisions[c->decision_codes[i]], f->want) == 0)
			snprintf(f->id, sizeof(f->id), "%s", c->ids[i]);
	return 0;
}

START_TEST(test_dispute)
{
	struct store *s = new_store();
	struct store_txn *t;
	struct store_sample_info info;
	struct sample_layout l;
	struct dispute_report r;
	struct audit_report a;
	struct find_dec f = { "decline", "" };
	struct rba_detail d;
	char flipped[64];

	reg(s, PINS_CAT_MLP, NULL, NULL, POL_CREDIT);
	ck_assert_int_eq(add_sample(s, "german-categorical-mlp", GC, NULL, &d), 0);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(sample_layout_load(t, "german-categorical-mlp", &info, &l, &d), 0);
	ck_assert_int_eq(sample_walk(t, "german-categorical-mlp", &l, find_dec, &f, &d), 0);
	store_txn_abort(t);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	ck_assert(f.id[0]);

	/* Bit-identical, no audit yet: it stands on the digest. */
	rba_detail_clear(&d);
	ck_assert_int_eq(audit_dispute(s, "german-categorical-mlp", f.id, NULL, NULL, &r, &d), 0);
	ck_assert_int_eq(r.answer, DISPUTE_STANDS);
	ck_assert_str_eq(r.answer_line, "the disputed decline stands");
	ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
	ck_assert(r.stored_score == r.rebuilt_score);
	ck_assert(r.edge == 0.5 || r.edge == 0.3);
	dispute_report_release(&r);

	ck_assert_int_eq(audit_dispute(s, "german-categorical-mlp", "no-such-case", NULL, NULL,
				       &r, &d), RBA_E_NOTFOUND);
	ck_assert_str_eq(d.key, "no-such-case");
	dispute_report_release(&r);

	/* Pins edited: a flipped case escalates, naming the decisions. */
	edit_lr(s, "german-categorical-mlp", 0.03);
	ck_assert_int_eq(audit_dispute(s, "german-categorical-mlp", f.id, NULL, NULL, &r, &d), 0);
	ck_assert_int_eq(r.answer, DISPUTE_ESCALATE);
	ck_assert(has_text(r.answer_line, "escalate: "));
	dispute_report_release(&r);
	audit(s, "german-categorical-mlp", NULL, 1, &a, 0);
	ck_assert(a.nlisted > 0);
	snprintf(flipped, sizeof(flipped), "%s", a.listed[0].id);
	ck_assert_int_eq(audit_dispute(s, "german-categorical-mlp", flipped, NULL, NULL, &r, &d), 0);
	ck_assert_int_eq(r.answer, DISPUTE_ESCALATE);
	ck_assert_msg(has_text(r.answer_line, "escalate: the rebuilt model decides"),
		      "%s", r.answer_line);
	ck_assert(r.has_audit && r.verdict == AUDIT_NOT_REPRODUCIBLE);
	dispute_report_release(&r);
	audit_report_release(&a);
	store_close(s);
}
END_TEST

/*
 * The proof that makes a retrain unnecessary is read through the audit
 * record's decoder: a latest record that does not decode proves
 * nothing, and the retrain reason says where it stops.
 */
START_TEST(test_dispute_proof_undecodable)
{
	static const char v[] = "german-categorical-mlp";
	static const char from[] = "\"state\": \"same\"";
	struct store *s = new_store();
	struct store_txn *t;
	struct dispute_report r;
	struct audit_report a;
	struct rba_detail d;
	struct rba_buf b;
	char *at;

	reg(s, PINS_CAT_MLP, NULL, NULL, POL_CREDIT);
	ck_assert_int_eq(add_sample(s, v, GC, NULL, &d), 0);
	audit(s, v, NULL, 1, &a, 0);
	ck_assert_int_eq(a.verdict, AUDIT_BIT_IDENTICAL);

	/* The latest record proves it: the stored artifact scores. */
	rba_detail_clear(&d);
	ck_assert_msg(audit_dispute(s, v, "1", NULL, NULL, &r, &d) == 0, "%s",
		      d.reason);
	ck_assert_int_eq(r.rebuilt, 0);
	ck_assert_uint_eq(r.proof_audit, 1);
	dispute_report_release(&r);

	/* The same record with a link state no writer writes, appended. */
	rba_buf_init(&b);
	audit_report_json(&a, &b);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	rba_buf_put_u8(&b, 0);
	at = strstr((char *)b.p, from);
	ck_assert_ptr_nonnull(at);
	memcpy(at, "\"state\": \"samE\"", sizeof(from) - 1);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_int_eq(store_history_append(t, v, a.time, b.p, b.len - 1, NULL,
					      NULL, &d), 0);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	rba_buf_release(&b);
	rba_detail_clear(&d);
	ck_assert_msg(audit_dispute(s, v, "1", NULL, NULL, &r, &d) == 0, "%s",
		      d.reason);
	ck_assert_int_eq(r.rebuilt, 1);
	ck_assert_ptr_nonnull(r.rebuild_why);
	ck_assert_str_eq(r.rebuild_why,
			 "the latest audit record, 2, does not prove the stored "
			 "artifact: it does not read back: "
			 "'links.code_revision.state' is not same, changed or "
			 "unknown");
	dispute_report_release(&r);
	audit_report_release(&a);
	store_close(s);
}
END_TEST

/*
 * Where a level unseen in training went (dispute_unseen_paths): a
 * forest of three trees on a native column "purpose" (levels a, b, c;
 * feature 0) and a number "x" (feature 1).  Tree 0: purpose in {a, b} ?
 * 1 : (x < 0.5 ? 2 : 3); tree 1: x < 0.5 ? (purpose in {c} ? 4 : 5) : 6;
 * tree 2 a leaf.  An unseen purpose meets tree 0's root, and tree 1's
 * split on purpose only when x < 0.5.
 */
static const struct {
	uint32_t feature, left, right, set, nset;
	float threshold, value;
} unseen_nodes[] = {
	{ 0, 1, 2, 0, 2, 0, 0 },
	{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 1 },
	{ 1, 3, 4, 0, 0, 0.5f, 0 },
	{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 2 },
	{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 3 },
	/* tree 1 */
	{ 1, 1, 4, 0, 0, 0.5f, 0 },
	{ 0, 2, 3, 2, 1, 0, 0 },
	{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 4 },
	{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 5 },
	{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 6 },
	/* tree 2 */
	{ REBUILD_TREE_LEAF, 0, 0, 0, 0, 0, 7 },
};

static void
unseen_forest(struct artifact *h, struct encode_column *cols, float *mean,
	      float *scale)
{
	static const uint32_t sets[] = { 0, 1, 2 };
	static char *levels[] = { "a", "b", "c" };
	static const uint32_t starts[] = { 0, 5, 10 };
	uint32_t n = sizeof(unseen_nodes) / sizeof(unseen_nodes[0]);
	struct rebuild_forest *f;

	memset(h, 0, sizeof(*h));
	h->abi = 1;
	ck_assert_int_eq(rebuild_forest_alloc(&h->model, 2, 2, 1, 3, n), 0);
	f = &h->model.forest;
	f->edge_start[1] = 0;
	f->edge_start[2] = 1;
	f->edges[0] = 0.5f;
	f->tree_start[1] = 5;
	f->tree_start[2] = 10;
	f->tree_start[3] = n;
	f->cats = malloc(sizeof(sets));
	ck_assert_ptr_nonnull(f->cats);
	memcpy(f->cats, sets, sizeof(sets));
	f->ncats = 3;
	for (uint32_t i = 0; i < n; i++) {
		struct rebuild_tree_node *q = &f->nodes[i];
		uint32_t root = starts[i < 5 ? 0 : i < 10 ? 1 : 2];
		q->feature = unseen_nodes[i].feature;
		q->value = unseen_nodes[i].value;
		q->cover = 1;
		if (q->feature == REBUILD_TREE_LEAF)
			continue;
		q->left = root + unseen_nodes[i].left;
		q->right = root + unseen_nodes[i].right;
		if (unseen_nodes[i].nset > 0) {
			q->flags = REBUILD_TREE_CATEGORICAL;
			q->cats = f->cats + unseen_nodes[i].set;
			q->ncats = unseen_nodes[i].nset;
		} else {
			q->threshold = unseen_nodes[i].threshold;
		}
	}
	memset(cols, 0, 2 * sizeof(*cols));
	cols[0].name = "purpose";
	cols[0].kind = ENCODE_NATIVE;
	cols[0].nlevels = 3;
	cols[0].levels = levels;
	cols[1].name = "x";
	cols[1].kind = ENCODE_NUMERIC;
	mean[0] = mean[1] = 0.0f;
	scale[0] = scale[1] = 1.0f;
	h->spec.nclasses = 2;
	h->spec.positive = 1;
	h->spec.ncolumns = 2;
	h->spec.nfeatures = 2;
	h->spec.columns = cols;
	h->spec.mean = mean;
	h->spec.scale = scale;
}

/* dispute_unseen_paths on purpose p and x: 0, the counts and the error. */
static void
unseen_walk(const struct artifact *a, const char *p, float x, uint32_t *splits,
	    uint32_t *trees, uint32_t *nunseen, char **error)
{
	const char *vals[2] = { p, "?" };
	long li = encode_level_index(&a->spec.columns[0], p);
	float raw[2] = { li < 0 ? 3.0f : (float)li, x };

	ck_assert_int_eq(dispute_unseen_paths(a, vals, raw, splits, trees, nunseen,
					      error), 0);
}

START_TEST(test_dispute_unseen_paths)
{
	struct encode_column cols[2];
	float mean[2], scale[2];
	struct artifact a;
	uint32_t splits[2], trees[2], nun;
	char *err, *w;

	unseen_forest(&a, cols, mean, scale);
	/* x below 0.5: both splits on purpose, in trees 0 and 1 */
	unseen_walk(&a, "zz", 0.25f, splits, trees, &nun, &err);
	ck_assert_ptr_null(err);
	ck_assert_uint_eq(nun, 1);
	ck_assert_uint_eq(splits[0], 2);
	ck_assert_uint_eq(trees[0], 2);
	ck_assert_uint_eq(splits[1], 0);
	ck_assert_uint_eq(trees[1], 0);
	/* x above: tree 1's path does not meet its split on purpose */
	unseen_walk(&a, "zz", 0.75f, splits, trees, &nun, &err);
	ck_assert_ptr_null(err);
	ck_assert_uint_eq(splits[0], 1);
	ck_assert_uint_eq(trees[0], 1);
	/* a level the model has: nothing unseen */
	unseen_walk(&a, "c", 0.25f, splits, trees, &nun, &err);
	ck_assert_ptr_null(err);
	ck_assert_uint_eq(nun, 0);
	ck_assert_uint_eq(splits[0], 0);
	/* a split on purpose that sends the index past the levels left (a
	 * threshold above it) breaks the rule: said, not counted */
	a.model.forest.nodes[6].flags = 0;
	a.model.forest.nodes[6].threshold = 10.0f;
	unseen_walk(&a, "zz", 0.25f, splits, trees, &nun, &err);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(has_text(err, "the level 'zz' of column 'purpose', unseen in "
			       "training, went left at a split of tree 1"), "%s", err);
	free(err);
	/* ... but not when the path does not meet it */
	unseen_walk(&a, "zz", 0.75f, splits, trees, &nun, &err);
	ck_assert_ptr_null(err);
	ck_assert_uint_eq(splits[0], 1);
	memset(&a.spec, 0, sizeof(a.spec));
	rebuild_model_release(&a.model);

	/* the words of the text answer and the page */
	w = dispute_unseen_where("purpose", 47, 45, 100);
	ck_assert_str_eq(w, "it went right at each of the 47 splits on purpose on its "
			    "path (in 45 of the 100 trees)");
	free(w);
	w = dispute_unseen_where("purpose", 1, 1, 2);
	ck_assert_str_eq(w, "it went right at the one split on purpose on its path "
			    "(in 1 of the 2 trees)");
	free(w);
	w = dispute_unseen_where("purpose", 0, 0, 2);
	ck_assert_str_eq(w, "no split on this column was on its path (in any of the "
			    "2 trees)");
	free(w);
}
END_TEST

START_TEST(test_score_column)
{
	struct store *s = new_store();
	struct audit_report r;
	struct rba_detail d;
	struct rba_buf b;
	uint8_t *src;
	size_t n;
	char *csv = tmp_file("logged.csv");

	/* Production-log scores: everyone at 0.1, decided "approve". */
	ck_assert_int_eq(rba_file_read(GC, 1 << 20, &src, &n, &d), 0);
	rba_buf_init(&b);
	for (size_t i = 0, line = 0; i < n; i++) {
		if (src[i] == '\n') {
			rba_buf_printf(&b, line ? ",0.1,approve" : ",score,decision");
			line++;
		}
		rba_buf_put_u8(&b, src[i]);
	}
	write_file(csv, b.p, b.len);
	reg(s, PINS_CAT_MLP, NULL, NULL, POL_CREDIT);
	{
		struct sample_add_request rq;
		struct sample_add_result res;
		memset(&rq, 0, sizeof(rq));
		rq.version = "german-categorical-mlp";
		rq.path = csv;
		rq.score_column = "score";
		rq.decision_column = "decision";
		ck_assert_msg(sample_add(s, &rq, &res, &d) == 0, "%s", d.reason);
		ck_assert_uint_eq(res.cases, 1000);
		ck_assert_uint_eq(res.ndecisions, 1);
		sample_add_result_release(&res);
		/* A decision column alone is refused. */
		rq.score_column = NULL;
		ck_assert_int_eq(sample_add(s, &rq, &res, &d), RBA_E_USAGE);
	}
	audit(s, "german-categorical-mlp", NULL, 1, &r, 0);
	ck_assert_int_eq(r.verdict, AUDIT_NOT_REPRODUCIBLE);
	ck_assert_int_eq(r.sample_scored_by, SAMPLE_SCORED_COLUMN);
	ck_assert(r.flips > 0 && r.flips < 1000);
	ck_assert(has_text(r.reasons[r.nreasons - 1], "came from a column"));
	audit_report_release(&r);
	/* An argmax policy cannot judge single scores: not measured. */
	audit(s, "german-categorical-mlp", POL_ARGMAX, 1, &r, RBA_E_SCHEMA);
	ck_assert_int_eq(r.verdict, AUDIT_NOT_MEASURED);
	ck_assert(has_text(r.reasons[0], "argmax"));
	audit_report_release(&r);
	free(src);
	rba_buf_release(&b);
	store_close(s);
}
END_TEST

/* The shard rule: u64be(SHA-256(name)[0..8]) mod N, and K/N parsing. */
START_TEST(test_fleet_shard)
{
	uint32_t k = 99, n = 99;

	ck_assert_uint_eq(fleet_shard_of("a", 8), 2);
	ck_assert_uint_eq(fleet_shard_of("a", 3), 1);
	ck_assert_uint_eq(fleet_shard_of("credit-2026-11", 8), 5);
	ck_assert_uint_eq(fleet_shard_of("credit-2026-11", 65536), 10069);
	ck_assert_uint_eq(fleet_shard_of("anything", 1), 0);
	ck_assert_int_eq(fleet_shard_parse("3/8", &k, &n), 0);
	ck_assert_uint_eq(k, 3);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(fleet_shard_parse("0/65536", &k, &n), 0);
	{
		static const char *const bad[] = {
			"1/1", "8/8", "0/0", "-1/2", "1/", "/2", "1/2x", " 1/2",
			"1/ 2", "1/+2", "0/65537", "1", "", "a/b", "1//2",
			"99999999999999999999/2",
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			ck_assert_msg(fleet_shard_parse(bad[i], &k, &n) == -1,
				      "'%s' parsed", bad[i]);
	}
}
END_TEST

/* fixtures/xgboost/binary.probs: XGBoost's probability of class 1 of
 * each case, as a float32 hex word. */
struct xgb_walk {
	uint32_t want[1000];
	uint32_t seen;
};

static int
xgb_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct xgb_walk *w = ctx;

	(void)chunk_no;
	ck_assert_uint_eq(c->nscores, 2);
	for (uint32_t i = 0; i < c->ncases; i++) {
		long id = strtol(c->ids[i], NULL, 10);
		float p1 = (float)c->scores[(size_t)i * 2 + 1];
		uint32_t u;
		memcpy(&u, &p1, sizeof(u));
		ck_assert(id >= 1 && id <= 1000);
		ck_assert_msg(u == w->want[id - 1], "case %ld: %08x, XGBoost %08x", id,
			      u, w->want[id - 1]);
		w->seen++;
	}
	return 0;
}

/*
 * An XGBoost version's sample: the stored artifact swapped for an
 * XGBoost JSON model, cases with empty, NA and NaN fields added, every
 * stored score XGBoost's own probability.
 */
START_TEST(test_sample_add_xgboost)
{
	struct store *s = new_store();
	struct store_txn *t;
	struct store_version v;
	struct rba_detail d;
	struct xgb_walk w;
	struct sample_layout l;
	struct store_sample_info info;
	uint8_t *buf;
	size_t n;
	FILE *f;

	reg(s, PINS_NUM_LOG, NULL, NULL, POL_CREDIT);
	ck_assert_int_eq(rba_file_read(FIXTURES "/xgboost/binary.json", 1u << 24,
				       &buf, &n, NULL), 0);
	rba_detail_clear(&d);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_int_eq(store_version_get(t, "german-numeric-logistic", &v, &d), 0);
	ck_assert_int_eq(store_blob_put(t, STORE_BLOB_ARTIFACT, buf, n, "binary.json",
					NULL, 0, &v.artifact, NULL, &d), 0);
	{
		/* the pins name the artifact their version stores */
		struct pins *p;
		struct rba_buf b;
		ck_assert_int_eq(policy_pins_parse(v.pins_text, strlen(v.pins_text),
						   "pins", &p, &d), 0);
		p->artifact = v.artifact;
		p->has_artifact = 1;
		rba_buf_init(&b);
		policy_pins_canonical(p, &b);
		free(v.pins_text);
		v.pins_text = strdup(rba_buf_cstr(&b));
		rba_buf_release(&b);
		policy_pins_free(p);
	}
	ck_assert_int_eq(store_version_put(t, &v, 1, &d), 0);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	store_version_release(&v);
	free(buf);
	ck_assert_msg(add_sample(s, "german-numeric-logistic",
				 FIXTURES "/xgboost/cases.csv", NULL, &d) == 0,
		      "%s", d.reason);
	f = fopen(FIXTURES "/xgboost/binary.probs", "r");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(fscanf(f, "%x", &w.want[i]), 1);
	fclose(f);
	w.seen = 0;
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_msg(sample_layout_load(t, "german-numeric-logistic", &info, &l, &d) == 0,
		      "%s", d.reason);
	ck_assert_msg(sample_walk(t, "german-numeric-logistic", &l, xgb_chunk, &w, &d) == 0,
		      "%s", d.reason);
	ck_assert_uint_eq(w.seen, 1000);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	store_txn_abort(t);
	{
		/* The dispute's reasons: the stored XGBoost model's exact
		 * TreeSHAP (case 8 has missing inputs), XGBoost's pred_contribs
		 * (fixtures/xgboost/binary.contribs, row 8) within 1e-5.  (The
		 * answer escalates: this version's pins retrain our logistic
		 * model, which refuses the gaps; the exec trainer's versions
		 * rebuild the XGBoost model itself.) */
		struct dispute_report r;
		struct dispute_options o = { 3, 0 };
		double want[25];
		char line[4096];
		f = fopen(FIXTURES "/xgboost/binary.contribs", "r");
		ck_assert_ptr_nonnull(f);
		for (int i = 0; i < 8; i++)
			ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
		fclose(f);
		{
			char *q = line;
			for (int k = 0; k < 25; k++)
				want[k] = strtod(q, &q);
		}
		rba_detail_clear(&d);
		ck_assert_msg(audit_dispute(s, "german-numeric-logistic", "8", NULL, &o,
					    &r, &d) == 0, "%s", d.reason);
		ck_assert_msg(r.why.ok, "%s", r.why.error ? r.why.error : "");
		ck_assert_int_eq(r.why.method, EXPLAIN_TREESHAP);
		ck_assert(r.why.from_decision_artifact);
		ck_assert_uint_eq(r.why.ncols, 24);
		for (int k = 0; k < 24; k++)
			ck_assert_msg(fabs(r.why.contrib[k] - want[k]) < 1e-5,
				      "column %d: %g, pred_contribs %g", k,
				      r.why.contrib[k], want[k]);
		ck_assert(fabs(r.why.baseline - want[24]) < 1e-5);
		ck_assert(fabs(r.why.sum - r.why.margin) < 1e-5);
		dispute_report_release(&r);
	}
	store_close(s);
}
END_TEST

Suite *
suite_audit(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("audit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_declared_unkept);
	tcase_add_test(tc, test_scoring_cat_mlp);
	tcase_add_test(tc, test_scoring_cat_logistic);
	tcase_add_test(tc, test_scoring_numeric);
	tcase_add_test(tc, test_scoring_native);
	tcase_add_test(tc, test_scoring_error_order);
	tcase_add_test(tc, test_scoring_error_order_numbers);
	tcase_add_test(tc, test_sample_lossless);
	tcase_add_test(tc, test_sample_errors);
	tcase_add_test(tc, test_audit_bit_identical);
	tcase_add_test(tc, test_audit_metric_equivalent);
	tcase_add_test(tc, test_audit_config_changed);
	tcase_add_test(tc, test_audit_provenance_per_version);
	tcase_add_test(tc, test_audit_tampered);
	tcase_add_test(tc, test_dispute);
	tcase_add_test(tc, test_dispute_proof_undecodable);
	tcase_add_test(tc, test_dispute_unseen_paths);
	tcase_add_test(tc, test_score_column);
	tcase_add_test(tc, test_fleet_shard);
	tcase_add_test(tc, test_sample_add_xgboost);
	tcase_add_test(tc, test_audit_record_table);
	suite_add_tcase(s, tc);
	return s;
}
