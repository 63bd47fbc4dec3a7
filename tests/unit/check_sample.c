/*
 * check_sample.c - the sample/ folder: the layout text (every version,
 * every refusal), the chunk codec (round trips, every cut refused, the
 * missing-value format), one case decoded alone and the ids read alone.
 * Scoring a stored sample is tested with the audit that uses it
 * (check_audit.c), since it needs a registered version.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/digest.h"
#include "data/csv.h"
#include "data/csv_write.h"
#include "sample/sample.h"
#include "train/kernel.h"
#include "train/rng.h"
#include "tests/unit/suites.h"

static int
has_text(const char *s, const char *t)
{
	return s != NULL && strstr(s, t) != NULL;
}

/* ---- layout ----------------------------------------------------------- */

static void
make_layout(struct sample_layout *l)
{
	static char *names[] = { "id", "a=b", "new\nline", "back\\slash", "tab\t", "score" };
	static char *classes[] = { "1", "2" };

	memset(l, 0, sizeof(*l));
	l->source = "cases.csv";
	l->scored_by = SAMPLE_SCORED_COLUMN;
	rba_digest_bytes("x", 1, &l->artifact);
	l->score_column = "score";
	l->id_column = "id";
	l->positive = 1;
	l->nclasses = 2;
	l->classes = classes;
	l->ncols = 6;
	l->names = names;
}

START_TEST(test_layout_roundtrip)
{
	struct sample_layout l, m;
	struct rba_buf b;
	struct rba_detail d;
	const char *text;

	make_layout(&l);
	rba_buf_init(&b);
	sample_layout_format(&l, &b);
	text = rba_buf_cstr(&b);
	ck_assert(strncmp(text, "rebuild-audit/sample/v1\n", 24) == 0);
	rba_detail_clear(&d);
	ck_assert_msg(sample_layout_parse(text, b.len, &m, &d) == 0, "%s", d.reason);
	ck_assert_uint_eq(m.ncols, 6);
	for (uint32_t i = 0; i < 6; i++)
		ck_assert_str_eq(m.names[i], l.names[i]);
	ck_assert_int_eq(m.id_col, 0);
	ck_assert_int_eq(m.score_col, 5);
	ck_assert_int_eq(m.decision_col, -1);
	ck_assert_int_eq(m.nscores, 1);
	ck_assert(rba_digest_equal(&m.artifact, &l.artifact));
	sample_layout_release(&m);
	/* Every cut of the text is refused, never accepted or crashed on. */
	for (size_t cut = 0; cut < b.len; cut++) {
		ck_assert_msg(sample_layout_parse(text, cut, &m, &d) != 0,
			      "a layout cut at %zu was accepted", cut);
	}
	rba_buf_release(&b);
}
END_TEST

/*
 * v2 carries the digest of the submitted file; v1 (without it) still
 * loads and formats back to the same bytes; neither version takes the
 * other's form.
 */
START_TEST(test_layout_versions)
{
	static const char tail[] =
		"scores=model\n"
		"artifact=sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881\n"
		"positive=1\nclasses=2\nclass=a\nclass=b\ncolumns=1\ncolumn=x\n";
	static const char dg[] =
		"sha256:9a5fb32561e18f48dbbe9b109aa7e02b59539569fa95226708a4b5b3be86dee0";
	struct sample_layout m;
	struct rba_detail d;
	struct rba_buf b;
	char v1[512], v2[512], bad[512];

	snprintf(v1, sizeof(v1), "rebuild-audit/sample/v1\nsource=x.csv\n%s", tail);
	snprintf(v2, sizeof(v2), "rebuild-audit/sample/v2\nsource=x.csv\nsource_digest=%s\n%s",
		 dg, tail);
	rba_buf_init(&b);
	rba_detail_clear(&d);
	ck_assert_msg(sample_layout_parse(v1, strlen(v1), &m, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(m.has_source_digest, 0);
	sample_layout_format(&m, &b);
	ck_assert_str_eq(rba_buf_cstr(&b), v1);
	sample_layout_release(&m);
	ck_assert_msg(sample_layout_parse(v2, strlen(v2), &m, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(m.has_source_digest, 1);
	{
		char hex[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&m.source_digest, hex);
		ck_assert_str_eq(hex, dg);
	}
	b.len = 0;
	sample_layout_format(&m, &b);
	ck_assert_str_eq(rba_buf_cstr(&b), v2);
	sample_layout_release(&m);
	rba_buf_release(&b);
	/* v2 without its digest, v1 with one, a bad digest, a later version */
	snprintf(bad, sizeof(bad), "rebuild-audit/sample/v2\nsource=x.csv\n%s", tail);
	ck_assert_int_eq(sample_layout_parse(bad, strlen(bad), &m, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "missing source_digest"));
	ck_assert_uint_eq(d.line, 3);
	snprintf(bad, sizeof(bad), "rebuild-audit/sample/v1\nsource=x.csv\nsource_digest=%s\n%s",
		 dg, tail);
	ck_assert_int_eq(sample_layout_parse(bad, strlen(bad), &m, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "v1 layout"));
	snprintf(bad, sizeof(bad), "rebuild-audit/sample/v2\nsource=x.csv\nsource_digest=sha256:12\n%s",
		 tail);
	ck_assert_int_eq(sample_layout_parse(bad, strlen(bad), &m, &d), RBA_E_CORRUPT);
	snprintf(bad, sizeof(bad), "rebuild-audit/sample/v4\nsource=x.csv\n%s", tail);
	ck_assert_int_eq(sample_layout_parse(bad, strlen(bad), &m, &d), RBA_E_NEWER);
}
END_TEST

/*
 * v3 is v2 with the logging precision declared with a sample of logged
 * scores; only v3 has the line, and only for scores from a column.
 */
START_TEST(test_layout_v3)
{
	static const char dg[] =
		"sha256:9a5fb32561e18f48dbbe9b109aa7e02b59539569fa95226708a4b5b3be86dee0";
	static const char mid[] =
		"scores=column\n"
		"artifact=sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881\n"
		"score_column=s\n";
	static const char tail[] =
		"positive=1\nclasses=2\nclass=a\nclass=b\ncolumns=2\ncolumn=x\ncolumn=s\n";
	struct sample_layout m;
	struct rba_detail d;
	struct rba_buf b;
	char v3[640], bad[640];

	snprintf(v3, sizeof(v3), "rebuild-audit/sample/v3\nsource=x.csv\nsource_digest=%s\n"
		 "%sscore_precision=0.0005\n%s", dg, mid, tail);
	rba_buf_init(&b);
	rba_detail_clear(&d);
	ck_assert_msg(sample_layout_parse(v3, strlen(v3), &m, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(m.has_score_precision, 1);
	ck_assert(m.score_precision == 0.0005);
	sample_layout_format(&m, &b);
	ck_assert_str_eq(rba_buf_cstr(&b), v3);
	sample_layout_release(&m);
	rba_buf_release(&b);
	/* v3 without the line, v2 with it, a bad or negative value */
	snprintf(bad, sizeof(bad), "rebuild-audit/sample/v3\nsource=x.csv\nsource_digest=%s\n"
		 "%s%s", dg, mid, tail);
	ck_assert_int_eq(sample_layout_parse(bad, strlen(bad), &m, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "missing score_precision"));
	snprintf(bad, sizeof(bad), "rebuild-audit/sample/v2\nsource=x.csv\nsource_digest=%s\n"
		 "%sscore_precision=0.0005\n%s", dg, mid, tail);
	ck_assert_int_eq(sample_layout_parse(bad, strlen(bad), &m, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "before layout v3"));
	snprintf(bad, sizeof(bad), "rebuild-audit/sample/v3\nsource=x.csv\nsource_digest=%s\n"
		 "%sscore_precision=-1\n%s", dg, mid, tail);
	ck_assert_int_eq(sample_layout_parse(bad, strlen(bad), &m, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "bad score precision"));
	snprintf(bad, sizeof(bad), "rebuild-audit/sample/v3\nsource=x.csv\nsource_digest=%s\n"
		 "%sscore_precision=nan\n%s", dg, mid, tail);
	ck_assert_int_eq(sample_layout_parse(bad, strlen(bad), &m, &d), RBA_E_CORRUPT);
}
END_TEST

START_TEST(test_layout_bad)
{
	const char *newer = "rebuild-audit/sample/v4\nsource=x\n";
	const char *base = "rebuild-audit/sample/v1\nsource=x\nscores=model\n"
			   "artifact=sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881\n"
			   "id_column=nope\npositive=1\nclasses=2\nclass=a\nclass=b\n"
			   "columns=1\ncolumn=x\n";
	const char *escape = "rebuild-audit/sample/v1\nsource=\\q\n";
	struct sample_layout m;
	struct rba_detail d;

	ck_assert_int_eq(sample_layout_parse(newer, strlen(newer), &m, &d), RBA_E_NEWER);
	rba_detail_clear(&d);
	ck_assert_int_eq(sample_layout_parse(base, strlen(base), &m, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "id column"));
	ck_assert_int_eq(sample_layout_parse(escape, strlen(escape), &m, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "escape"));
}
END_TEST

/* ---- chunks ----------------------------------------------------------- */

/* A chunk of the given parts, as sample_add builds one. */
static void
chunk_of(struct sample_chunk *c, uint32_t ncases, uint32_t ncols,
	 uint32_t nscores, const char **ids, const double *scores,
	 uint32_t ndecisions, const char **decisions, const uint16_t *dcodes,
	 const struct sample_column *cols)
{
	memset(c, 0, sizeof(*c));
	c->ncases = ncases;
	c->ncols = ncols;
	c->nscores = nscores;
	c->ids = ids;
	c->scores = scores;
	c->ndecisions = ndecisions;
	c->decisions = decisions;
	c->decision_codes = dcodes;
	c->cols = cols;
}

START_TEST(test_chunk_roundtrip)
{
	static const char *ids[] = { "c1", "c2", "c3", "c4" };
	static const char *decs[] = { "approve", "decline" };
	static const uint16_t dcodes[] = { 0, 1, 1, 0 };
	static const double scores[] = { 0.25f, 0.75f, 0.5, 0.1, 1, 2, 3, 4 };
	static const double small[] = { 1, -2, 127, -128 };
	static const double mid[] = { 1000, -2, 32767, 0 };
	static const double frac[] = { 0.1, 1e300, -0.0, 3.5 };
	static const uint32_t exc_case[] = { 2 };
	static const char *exc_text[] = { "-0.000" };
	static const char *levels[] = { "A11", "", "x,\"y\"" };
	static const uint32_t codes[] = { 2, 0, 1, 2 };
	struct sample_column cols[5];
	struct sample_chunk c, e;
	struct rba_buf b, b2;
	struct rba_detail d;
	char tmp[32];

	memset(cols, 0, sizeof(cols));
	cols[0].kind = SAMPLE_COL_IDS;
	cols[1].kind = SAMPLE_COL_NUMBER;
	cols[1].num = small;
	cols[2].kind = SAMPLE_COL_NUMBER;
	cols[2].num = mid;
	cols[3].kind = SAMPLE_COL_NUMBER;
	cols[3].num = frac;
	cols[3].nexc = 1;
	cols[3].exc_case = exc_case;
	cols[3].exc_text = exc_text;
	cols[4].kind = SAMPLE_COL_DICT;
	cols[4].nlevels = 3;
	cols[4].levels = levels;
	cols[4].codes = codes;
	chunk_of(&c, 4, 5, 2, ids, scores, 2, decs, dcodes, cols);
	rba_buf_init(&b);
	sample_chunk_encode(&c, &b);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	sample_chunk_init(&e);
	rba_detail_clear(&d);
	ck_assert_msg(sample_chunk_decode(b.p, b.len, 5, 2, 0, &e, &d) == 0, "%s", d.reason);
	ck_assert_uint_eq(e.ncases, 4);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_str_eq(e.ids[i], ids[i]);
		ck_assert_str_eq(e.decisions[e.decision_codes[i]], decs[dcodes[i]]);
		ck_assert(e.cols[1].num[i] == small[i]);
		ck_assert(e.cols[2].num[i] == mid[i]);
		ck_assert(memcmp(&e.cols[3].num[i], &frac[i], 8) == 0);
		ck_assert_str_eq(sample_chunk_text(&e, 4, i, tmp), levels[codes[i]]);
		ck_assert_str_eq(sample_chunk_text(&e, 0, i, tmp), ids[i]);
	}
	for (uint32_t i = 0; i < 8; i++)
		ck_assert(e.scores[i] == scores[i]);
	ck_assert_str_eq(sample_chunk_text(&e, 3, 2, tmp), "-0.000");
	ck_assert_str_eq(sample_chunk_text(&e, 3, 0, tmp), "0.1");
	ck_assert_str_eq(sample_chunk_text(&e, 1, 3, tmp), "-128");
	ck_assert_int_eq(sample_chunk_find(&e, "c3"), 2);
	ck_assert_int_eq(sample_chunk_find(&e, "c9"), -1);
	/* One case alone: the same texts, scores and decision. */
	for (uint32_t i = 0; i < 4; i++) {
		struct sample_chunk one;
		uint32_t at = 99;
		sample_chunk_init(&one);
		ck_assert_int_eq(sample_chunk_decode_case(b.p, b.len, 5, 2, 0, ids[i],
							  &one, &at, &d), 0);
		ck_assert_uint_eq(at, i);
		ck_assert_uint_eq(one.ncases, 1);
		ck_assert_str_eq(one.ids[0], ids[i]);
		ck_assert(one.scores[0] == scores[2 * i] && one.scores[1] == scores[2 * i + 1]);
		ck_assert_str_eq(one.decisions[one.decision_codes[0]], decs[dcodes[i]]);
		for (uint32_t k = 0; k < 5; k++) {
			char t1[32], t2[32];
			ck_assert_str_eq(sample_chunk_text(&one, k, 0, t1),
					 sample_chunk_text(&e, k, i, t2));
		}
		sample_chunk_release(&one);
	}
	{
		struct sample_chunk one;
		sample_chunk_init(&one);
		ck_assert_int_eq(sample_chunk_decode_case(b.p, b.len, 5, 2, 0, "c9", &one,
							  NULL, &d), RBA_E_NOTFOUND);
		for (size_t cut = 0; cut < b.len; cut++)
			ck_assert_msg(sample_chunk_decode_case(b.p, cut, 5, 2, 0, "c1", &one,
							       NULL, &d) == RBA_E_CORRUPT,
				      "a chunk cut at %zu was accepted for one case", cut);
		sample_chunk_release(&one);
	}
	/* Re-encoding the decoded chunk gives the same bytes. */
	rba_buf_init(&b2);
	sample_chunk_encode(&e, &b2);
	ck_assert_uint_eq(b2.len, b.len);
	ck_assert_mem_eq(b2.p, b.p, b.len);
	/* Every truncation, one extra byte, a wrong layout: refused. */
	for (size_t cut = 0; cut < b.len; cut++)
		ck_assert_msg(sample_chunk_decode(b.p, cut, 5, 2, 0, &e, &d) == RBA_E_CORRUPT,
			      "a chunk cut at %zu was accepted", cut);
	rba_buf_put_u8(&b, 0);
	ck_assert_int_eq(sample_chunk_decode(b.p, b.len, 5, 2, 0, &e, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "after the last column"));
	b.len--;
	ck_assert_int_eq(sample_chunk_decode(b.p, b.len, 6, 2, 0, &e, &d), RBA_E_CORRUPT);
	ck_assert_int_eq(sample_chunk_decode(b.p, b.len, 5, 2, 1, &e, &d), RBA_E_CORRUPT);
	/* A level code past the dictionary. */
	b.p[b.len - 1] = 7;
	ck_assert_int_eq(sample_chunk_decode(b.p, b.len, 5, 2, 0, &e, &d), RBA_E_CORRUPT);
	ck_assert(has_text(d.reason, "out of range"));
	b.p[0] = 'X';
	ck_assert_int_eq(sample_chunk_decode(b.p, b.len, 5, 2, 0, &e, &d), RBA_E_CORRUPT);
	sample_chunk_release(&e);
	rba_buf_release(&b);
	rba_buf_release(&b2);
}
END_TEST

/*
 * A number column with a missing value (NaN) makes a format 2 chunk, and
 * the NaN keeps its exact text as an exception; a chunk without one stays
 * format 1.  The ids alone read back without decoding the rest.
 */
START_TEST(test_chunk_missing)
{
	static const char *ids[] = { "a", "b", "c" };
	static const char *decs[] = { "yes" };
	static const uint16_t dcodes[] = { 0, 0, 0 };
	static const double scores[] = { 0.5, 0.25, 0.125 };
	double num[] = { 1.5, 0, -3 };
	static const uint32_t exc_case[] = { 1 };
	static const char *exc_text[] = { "NA" };
	struct sample_column cols[2];
	struct sample_chunk c, e;
	struct rba_buf b;
	struct rba_detail d;
	const char *got[SAMPLE_CHUNK_CASES];
	uint32_t n = 0;
	char tmp[32];

	memset(cols, 0, sizeof(cols));
	cols[0].kind = SAMPLE_COL_IDS;
	cols[1].kind = SAMPLE_COL_NUMBER;
	cols[1].num = num;
	chunk_of(&c, 3, 2, 1, ids, scores, 1, decs, dcodes, cols);
	rba_buf_init(&b);
	sample_chunk_encode(&c, &b);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	ck_assert_uint_eq(b.p[0], SAMPLE_CHUNK_TAG);
	ck_assert_uint_eq(b.p[1], SAMPLE_CHUNK_FORMAT);
	/* The same chunk with case b missing. */
	num[1] = NAN;
	cols[1].nexc = 1;
	cols[1].exc_case = exc_case;
	cols[1].exc_text = exc_text;
	b.len = 0;
	sample_chunk_encode(&c, &b);
	ck_assert_uint_eq(b.p[1], SAMPLE_CHUNK_FORMAT_MISSING);
	sample_chunk_init(&e);
	rba_detail_clear(&d);
	ck_assert_msg(sample_chunk_decode(b.p, b.len, 2, 1, 0, &e, &d) == 0, "%s", d.reason);
	ck_assert(isnan(e.cols[1].num[1]));
	ck_assert_str_eq(sample_chunk_text(&e, 1, 1, tmp), "NA");
	ck_assert_str_eq(sample_chunk_text(&e, 1, 0, tmp), "1.5");
	ck_assert_str_eq(sample_chunk_text(&e, 1, 2, tmp), "-3");
	for (size_t cut = 0; cut < b.len; cut++)
		ck_assert_msg(sample_chunk_decode(b.p, cut, 2, 1, 0, &e, &d) == RBA_E_CORRUPT,
			      "a format 2 chunk cut at %zu was accepted", cut);
	/* ids alone */
	ck_assert_int_eq(sample_chunk_ids(b.p, b.len, got, &n, &d), 0);
	ck_assert_uint_eq(n, 3);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_str_eq(got[i], ids[i]);
	/* both packed, one id right after the one before's NUL (what
	 * store_index_sum_add_packed relies on) */
	for (uint32_t i = 0; i + 1 < 3; i++) {
		ck_assert_ptr_eq(got[i + 1], got[i] + strlen(got[i]) + 1);
		ck_assert_ptr_eq(e.ids[i + 1], e.ids[i] + strlen(e.ids[i]) + 1);
	}
	ck_assert_int_eq(sample_chunk_ids(b.p, 8, got, &n, &d), RBA_E_CORRUPT);
	/* A NaN in a format 1 chunk is damage, not a missing value. */
	b.p[1] = SAMPLE_CHUNK_FORMAT;
	ck_assert_int_eq(sample_chunk_decode(b.p, b.len, 2, 1, 0, &e, &d), RBA_E_CORRUPT);
	sample_chunk_release(&e);
	rba_buf_release(&b);
}
END_TEST

/*
 * Numbers left as stored (sample_chunk_decode_stored): for columns that
 * the encoder stores as int8, int16, int32, float32 and float64 (with
 * values float32 rounds: 2^24 + 1, int32's ends, 1e300, subnormals, -0),
 * and a column with missing values, every value reads back as the very
 * double of the usual decode, and every run of floats, at every start
 * and length and on every path of this CPU, as that double's float.
 */
static double
stored_value(uint32_t kind, uint64_t u)
{
	static const double odd[] = { 16777217.0, 2147483647.0, -2147483647.0,
				      1e300, -1e300, 4.9e-324, -0.0,
				      3.4028235677973366e38 };
	double v;
	float f;
	uint32_t b;

	switch (kind) {
	case 0: return (double)(int8_t)u;
	case 1: return (double)(int16_t)u;
	case 2: return (u & 15) == 0 ? odd[(u >> 4) % 3] : (double)(int32_t)u;
	case 3:
		b = (uint32_t)u;
		memcpy(&f, &b, sizeof(f));
		return isfinite(f) ? f : 1.5f;
	default:
		if ((u & 7) == 0)
			return odd[(u >> 3) % 8];
		memcpy(&v, &u, sizeof(v));
		return isfinite(v) ? v : 0.1;
	}
}

START_TEST(test_chunk_stored_numbers)
{
	enum { N = 301, KINDS = 6 };
	static const char *decs[] = { "d" };
	static const uint32_t starts[] = { 0, 1, 7, 15, 16, 17, 160, 300 };
	static const char *na[] = { "NA" };
	const char *isas[3];
	size_t nisa = kernel_strict_isas(isas);
	char idtext[N][8];
	const char *ids[N];
	uint16_t dcodes[N];
	double scores[N], num[KINDS][N];
	uint32_t exc_case[N];
	const char *exc_text[N];
	struct sample_column cols[KINDS + 1];
	struct sample_chunk c, e, s;
	struct rba_buf b;
	struct rba_detail d;
	uint32_t nexc = 0;

	memset(cols, 0, sizeof(cols));
	cols[0].kind = SAMPLE_COL_IDS;
	for (uint32_t i = 0; i < N; i++) {
		snprintf(idtext[i], sizeof(idtext[i]), "k%u", i);
		ids[i] = idtext[i];
		dcodes[i] = 0;
		scores[i] = 0.5;
		for (uint32_t k = 0; k < KINDS; k++)
			num[k][i] = stored_value(k < 5 ? k : 4,
						 rng_u64(0x73746f726564ull, i * KINDS + k));
		if (i % 5 == 2) { /* the last column: some missing */
			num[KINDS - 1][i] = NAN;
			exc_case[nexc] = i;
			exc_text[nexc++] = na[0];
		}
	}
	for (uint32_t k = 0; k < KINDS; k++) {
		cols[k + 1].kind = SAMPLE_COL_NUMBER;
		cols[k + 1].num = num[k];
	}
	cols[KINDS].nexc = nexc;
	cols[KINDS].exc_case = exc_case;
	cols[KINDS].exc_text = exc_text;
	chunk_of(&c, N, KINDS + 1, 1, ids, scores, 1, decs, dcodes, cols);
	rba_buf_init(&b);
	sample_chunk_encode(&c, &b);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	sample_chunk_init(&e);
	sample_chunk_init(&s);
	rba_detail_clear(&d);
	ck_assert_msg(sample_chunk_decode(b.p, b.len, KINDS + 1, 1, 0, &e, &d) == 0,
		      "%s", d.reason);
	ck_assert_msg(sample_chunk_decode_stored(b.p, b.len, KINDS + 1, 1, 0, &s,
						 &d) == 0, "%s", d.reason);
	for (uint32_t k = 1; k <= KINDS; k++) {
		const struct sample_column *ec = &e.cols[k], *sc = &s.cols[k];
		ck_assert_ptr_null(sc->num);
		ck_assert_ptr_nonnull(ec->num);
		/* the five representations, each once */
		ck_assert_uint_eq(sc->repr, k < 5 ? k : 5);
		for (uint32_t i = 0; i < N; i++) {
			double a = ec->num[i], v = sample_column_num(sc, i);
			ck_assert_msg(memcmp(&a, &num[k - 1][i], 8) == 0 ||
					      (isnan(a) && isnan(num[k - 1][i])),
				      "column %u case %u", k, i);
			ck_assert_msg(memcmp(&a, &v, 8) == 0,
				      "column %u case %u: stored %a, decoded %a",
				      k, i, v, a);
		}
		for (size_t a = 0; a < nisa; a++) {
			sample_floats_fn *fl;
			setenv("RBA_STRICT_ISA", isas[a], 1);
			fl = sample_floats_pick();
			for (size_t t = 0; t < sizeof(starts) / sizeof(starts[0]); t++)
				for (uint32_t cnt = 0; starts[t] + cnt <= N; cnt += 1 + cnt / 3) {
					float got[N], want[N];
					fl(sc, starts[t], cnt, got);
					fl(ec, starts[t], cnt, want);
					for (uint32_t j = 0; j < cnt; j++) {
						float f = (float)num[k - 1][starts[t] + j];
						ck_assert_msg(memcmp(&got[j], &f, 4) == 0 &&
							      memcmp(&want[j], &f, 4) == 0,
							      "%s: column %u case %u: %a, %a, not %a",
							      isas[a], k, starts[t] + j,
							      (double)got[j], (double)want[j],
							      (double)f);
					}
				}
		}
		unsetenv("RBA_STRICT_ISA");
	}
	{
		char t1[32], t2[32];
		for (uint32_t i = 0; i < N; i++)
			ck_assert_str_eq(sample_chunk_text(&s, KINDS, i, t1),
					 sample_chunk_text(&e, KINDS, i, t2));
	}
	/* the same refusals */
	for (size_t cut = 0; cut < b.len; cut += 7)
		ck_assert(sample_chunk_decode_stored(b.p, cut, KINDS + 1, 1, 0, &s,
						     &d) == RBA_E_CORRUPT);
	sample_chunk_release(&e);
	sample_chunk_release(&s);
	rba_buf_release(&b);
}
END_TEST

/*
 * A chunk's id block (NUL-terminated ids, the NULs found eight bytes at
 * a time): ids of 1 to 19 bytes (any byte but NUL) and of
 * STORE_CASE_ID_MAX, across word boundaries, with the block cut short,
 * one byte too many, an empty id and one too long: sample_chunk_ids
 * takes exactly the blocks a byte by byte walk takes, with the same ids.
 */
static int
ids_walk(const uint8_t *p, size_t nbytes, uint32_t n, const char **out)
{
	size_t at = 0;

	for (uint32_t i = 0; i < n; i++) {
		size_t len = 0;
		while (at + len < nbytes && p[at + len] != 0)
			len++;
		if (at + len == nbytes)
			return -1; /* too few */
		if (len < 1 || len > STORE_CASE_ID_MAX)
			return -2; /* bad length */
		out[i] = (const char *)p + at;
		at += len + 1;
	}
	return at == nbytes ? 0 : -3;
}

START_TEST(test_chunk_ids_block)
{
	static const char *want[SAMPLE_CHUNK_CASES], *got[SAMPLE_CHUNK_CASES];
	uint64_t r = 7;

	for (int round = 0; round < 3000; round++) {
		struct rba_buf b;
		struct rba_detail d;
		uint32_t n = 1 + (uint32_t)(round % 37), got_n = 0, nb;
		size_t at;
		int wrc, rc;

		rba_buf_init(&b);
		rba_buf_put_u8(&b, SAMPLE_CHUNK_TAG);
		rba_buf_put_u8(&b, SAMPLE_CHUNK_FORMAT);
		rba_buf_put_u32(&b, n);
		rba_buf_put_u32(&b, 1);
		rba_buf_put_u32(&b, 0);
		rba_buf_put_u32(&b, 0); /* the block's length, set below */
		at = b.len;
		for (uint32_t i = 0; i < n; i++) {
			size_t len;
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			len = (r >> 40) % 97 == 0 ? STORE_CASE_ID_MAX : 1 + (r >> 33) % 19;
			/* every byte but NUL: 0x01 and 0x80 next to one */
			for (size_t k = 0; k < len; k++)
				rba_buf_put_u8(&b, (uint8_t)(1 + (r >> (k % 24)) % 255));
			rba_buf_put_u8(&b, 0);
		}
		switch (round % 6) {
		case 1: /* cut short: the last NUL gone, or more */
			b.len -= 1 + (r >> 20) % (b.len - at < 3 ? b.len - at : 3);
			break;
		case 2: /* one byte too many */
			rba_buf_put_u8(&b, (r >> 20) % 2 ? 'x' : 0);
			break;
		case 3: /* an empty id */
			b.p[at + (r >> 20) % (b.len - at)] = 0;
			break;
		case 4: /* one too long */
			b.p[b.len - 1] = 'y';
			for (size_t k = 0; k < STORE_CASE_ID_MAX; k++)
				rba_buf_put_u8(&b, 'z');
			rba_buf_put_u8(&b, 0);
			break;
		default:
			break;
		}
		ck_assert_int_eq(rba_buf_status(&b), 0);
		nb = (uint32_t)(b.len - at);
		rba_put_u32le(b.p + at - 4, nb);
		wrc = ids_walk(b.p + at, nb, n, want);
		rba_detail_clear(&d);
		rc = sample_chunk_ids(b.p, b.len, got, &got_n, &d);
		ck_assert_msg((rc == 0) == (wrc == 0), "round %d: %d, the walk %d (%s)",
			      round, rc, wrc, d.reason);
		if (wrc == 0)
			for (uint32_t i = 0; i < n; i++)
				ck_assert_ptr_eq(got[i], want[i]);
		else
			ck_assert_msg(strstr(d.reason, wrc == -1 ? "too few" : wrc == -2
						    ? "bad length" : "extra bytes") != NULL,
				      "round %d: %s", round, d.reason);
		rba_buf_release(&b);
	}
}
END_TEST

/*
 * The one CSV writer: every cell, written by its rule and read back by
 * data/csv.h, is the same bytes; a cell is quoted exactly when it holds
 * a comma, a quote, a CR or an LF.
 */
START_TEST(test_csv_cells_read_back)
{
	static const char *const cells[] = {
		"", "plain", " spaced ", "a,b", "say \"hi\"", "\"", "two\r\nlines",
		"cr\ronly", "lf\n", "caf\xc3\xa9", "-0.25", ",", "\"\"",
	};
	static const int quoted[] = {0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1};
	size_t n = sizeof(cells) / sizeof(cells[0]);
	struct rba_buf b;
	struct csv_reader *r;
	const struct csv_field *f;
	size_t nf;

	for (size_t i = 0; i < n; i++) {
		char out[64];
		size_t len = csv_cell_put(out, cells[i], strlen(cells[i]));

		ck_assert_uint_le(len, CSV_CELL_MAX(strlen(cells[i])));
		ck_assert_int_eq(len > 0 && out[0] == '"', quoted[i]);
	}
	rba_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		if (i)
			rba_buf_put_u8(&b, ',');
		rba_buf_put(&b, "h", 1);
		csv_cell_buf(&b, "", 0);
	}
	rba_buf_put_u8(&b, '\n');
	for (size_t i = 0; i < n; i++) {
		if (i)
			rba_buf_put_u8(&b, ',');
		csv_cell_buf(&b, cells[i], strlen(cells[i]));
	}
	rba_buf_put_u8(&b, '\n');
	ck_assert_int_eq(rba_buf_status(&b), 0);
	ck_assert_int_eq(csv_reader_open_mem(b.p, b.len, "cells.csv", &r), 0);
	ck_assert_int_eq(csv_reader_next(r, &f, &nf, NULL), 1);
	ck_assert_uint_eq(nf, n);
	ck_assert_int_eq(csv_reader_next(r, &f, &nf, NULL), 1);
	ck_assert_uint_eq(nf, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(f[i].n, strlen(cells[i]));
		ck_assert(memcmp(f[i].p, cells[i], f[i].n) == 0);
	}
	csv_reader_free(r);
	rba_buf_release(&b);
}
END_TEST

Suite *
suite_sample(void)
{
	Suite *s = suite_create("sample");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_layout_roundtrip);
	tcase_add_test(tc, test_layout_versions);
	tcase_add_test(tc, test_layout_v3);
	tcase_add_test(tc, test_layout_bad);
	tcase_add_test(tc, test_chunk_roundtrip);
	tcase_add_test(tc, test_chunk_missing);
	tcase_add_test(tc, test_chunk_stored_numbers);
	tcase_add_test(tc, test_chunk_ids_block);
	tcase_add_test(tc, test_csv_cells_read_back);
	suite_add_tcase(s, tc);
	return s;
}
