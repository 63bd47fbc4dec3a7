/*
 * fuzz_expr.c - the success expression parser (fx_expr_parse).  An
 * error names a column inside the text (or just past it) and a reason; an
 * expression that parses reads only metrics that exist and decides any
 * paired results, NaN, infinities and unresolved metrics included,
 * without fault and the same way twice.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/forensics.h"
#include "tests/fuzz/fuzz.h"

/* Paired results whose statistics all take value x, resolved or not. */
static void
paired(struct fx_paired *pr, double x, unsigned count, int resolved)
{
	memset(pr, 0, FX_NMETRICS * sizeof(*pr));
	for (int m = 0; m < FX_NMETRICS; m++) {
		pr[m].metric = (enum fx_metric)m;
		pr[m].delta.median = pr[m].delta.mean = pr[m].delta.stdev = x;
		pr[m].delta.min = pr[m].delta.max = x;
		pr[m].shift = pr[m].p = x;
		pr[m].worse = pr[m].better = count;
		pr[m].resolved = (resolved >> m) & 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double values[] = { 0.0, -0.005, 1.0, 1e300, NAN,
					 INFINITY, -INFINITY };
	struct fx_paired pr[FX_NMETRICS];
	struct rba_detail d;
	struct fx_expr *e = NULL;
	char *text;
	size_t len;
	int err;

	/* The parser takes C strings: the input up to its first NUL. */
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	len = strlen(text);
	rba_detail_clear(&d);
	err = fx_expr_parse(text, &e, &d);
	if (err != 0) {
		if (e != NULL)
			fuzz_fail("an error leaves an expression");
		if (err == RBA_E_LIMIT) {
			if (len <= FX_MAX_EXPR)
				fuzz_fail("a text within the cap refused");
		} else if (err != RBA_E_SYNTAX || d.col < 1 || d.col > len + 1 ||
			   d.reason[0] == 0) {
			fuzz_fail("error %d at column %lu of %zu: '%s'", err,
				  d.col, len, d.reason);
		}
		free(text);
		return 0;
	}
	if (fx_expr_metrics(e) == 0 ||
	    fx_expr_metrics(e) >= (1u << FX_NMETRICS))
		fuzz_fail("an expression reads metrics %#x",
			  fx_expr_metrics(e));
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		int resolved = size > 0 ? data[i % size] : 0x1f;
		enum fx_verdict v;
		int x;
		paired(pr, values[i], (unsigned)i, resolved);
		x = fx_expr_eval(e, pr);
		if ((x != 0 && x != 1) || x != fx_expr_eval(e, pr))
			fuzz_fail("eval gives %d", x);
		v = fx_verdict_decide(e, pr);
		if (v != FX_MET && v != FX_NOT_MET && v != FX_NOT_RESOLVED)
			fuzz_fail("verdict %d", (int)v);
		if (v != FX_NOT_RESOLVED && v != (x ? FX_MET : FX_NOT_MET))
			fuzz_fail("a resolved verdict is not the value");
	}
	fx_expr_free(e);
	free(text);
	return 0;
}
