/*
 * fuzz_gate.c - the gate reader (fx_gate_parse).  A gate that reads
 * renders a file that reads back to the same gate and renders the same
 * bytes again; an error says where it is; and the gate decides any runs,
 * values missing or not, with a value that passes only when finite.
 */
#include <math.h>
#include <string.h>

#include "common/buf.h"
#include "forensics/gate.h"
#include "tests/fuzz/fuzz.h"

/* The gate's rule over runs whose metrics come from the input's bytes. */
static void
decide_some(const struct fx_gate *g, const uint8_t *data, size_t size)
{
	static const double values[] = { 0.0, 0.5, 1.0, -1.0, 1e300, NAN,
					 INFINITY, -INFINITY };
	struct rebuild_runrec r[5];
	struct fx_gate_value v;
	struct fx_fault f;
	unsigned char pass[5];
	size_t alarms = 0;
	int err;

	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < 5; i++) {
		double x = values[(size > i ? data[i] : i) % 8];
		r[i].eval_loss = r[i].eval_acc = r[i].eval_auc = x;
		r[i].final.train_loss = r[i].examples_per_second = x;
		r[i].nclasses = size > 5 && (data[5] & 1) ? 2 : 4;
	}
	for (size_t n = 1; n <= 5; n++) {
		err = fx_gate_decide(g, r, n, "fuzz", &v, &f);
		if (err != 0) {
			if (err != RBA_E_UNSUPPORTED || g->metric != FX_VAL_AUC)
				fuzz_fail("decide: %d for %s", err,
					  fx_metric_name(g->metric));
			continue;
		}
		if (v.pass && !isfinite(v.value))
			fuzz_fail("a value that is not finite passes");
		if (v.pass != fx_gate_pass(g, v.value))
			fuzz_fail("the decision is not fx_gate_pass of its value");
		if (fx_gate_validate(g, r, n, "fuzz", pass, &alarms, &f) != 0 ||
		    alarms > n)
			fuzz_fail("validate disagrees with decide");
	}
}

static void
same_gate(const struct fx_gate *a, const struct fx_gate *b)
{
	if (a->metric != b->metric || a->k != b->k || a->median != b->median ||
	    a->spread != b->spread || a->threshold != b->threshold ||
	    a->seeds != b->seeds || strcmp(a->sweep, b->sweep) != 0 ||
	    strcmp(a->version, b->version) != 0 ||
	    !rba_digest_equal(&a->config_hash, &b->config_hash) ||
	    !rba_digest_equal(&a->eval_fingerprint, &b->eval_fingerprint))
		fuzz_fail("the rendered gate reads back as another gate");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fx_gate g, h;
	struct rba_detail d;
	struct rba_buf a, b;
	int err;

	rba_detail_clear(&d);
	err = fx_gate_parse((const char *)data, size, "fuzz.yaml", &g, &d);
	if (err != 0) {
		if (err != RBA_E_SCHEMA && err != RBA_E_NEWER)
			fuzz_fail("an error that is not the reader's: %d", err);
		if (strcmp(d.file, "fuzz.yaml") != 0 || d.reason[0] == 0)
			fuzz_fail("an error that says not where or why");
		return 0;
	}
	rba_buf_init(&a);
	rba_buf_init(&b);
	fx_gate_render(&g, &a);
	if (rba_buf_status(&a) != 0)
		goto out;
	if (fx_gate_parse((const char *)a.p, a.len, "rendered.yaml", &h, &d))
		fuzz_fail("the rendered gate does not read: %lu:%lu %s", d.line,
			  d.col, d.reason);
	same_gate(&g, &h);
	fx_gate_render(&h, &b);
	if (rba_buf_status(&b) == 0 &&
	    (a.len != b.len || memcmp(a.p, b.p, a.len) != 0))
		fuzz_fail("the rendered gate is not a fixed point");
	decide_some(&g, data, size);
out:
	rba_buf_release(&a);
	rba_buf_release(&b);
	return 0;
}
