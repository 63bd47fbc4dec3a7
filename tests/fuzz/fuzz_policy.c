/*
 * fuzz_policy.c - the policy loader (policy_parse).  A policy that parses
 * has a canonical text that parses back to the same canonical text, and
 * decides every score, NaN and the band edges included, without fault.
 */
#include <math.h>
#include <string.h>

#include "common/buf.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double scores[] = { 0.0, 0.25, 0.5, 0.75, 1.0, -1.0, 2.0 };
	struct rba_detail d;
	struct policy *p = NULL, *q = NULL;
	struct rba_buf a, b;
	double probs[3] = { 0.2, 0.5, 0.3 }, e;

	if (policy_parse(data, size, "fuzz.yaml", &p, &d) != 0)
		return 0;
	rba_buf_init(&a);
	rba_buf_init(&b);
	policy_canonical(p, &a);
	if (rba_buf_status(&a) != 0)
		goto out;
	if (policy_parse(a.p, a.len, "canonical.yaml", &q, &d) != 0)
		fuzz_fail("the canonical form does not parse: %lu:%lu %s",
			  d.line, d.col, d.reason);
	policy_canonical(q, &b);
	if (rba_buf_status(&b) == 0 &&
	    (a.len != b.len || memcmp(a.p, b.p, a.len) != 0))
		fuzz_fail("the canonical form is not a fixed point");
	for (size_t i = 0; i < sizeof(scores) / sizeof(scores[0]); i++) {
		const char *dec = policy_decide(p, scores[i], &e);
		if (!p->argmax && dec == NULL)
			fuzz_fail("no decision for %g", scores[i]);
		(void)policy_nearest_edge(p, scores[i]);
	}
	(void)policy_decide(p, NAN, &e);
	for (size_t i = 0; i < p->nbands; i++)
		if (p->bands[i].has_below) {
			(void)policy_decide(p, p->bands[i].below, &e);
			(void)policy_nearest_edge(p, p->bands[i].below);
		}
	(void)policy_decide_argmax(p, probs, 3, &e);
out:
	policy_free(p);
	policy_free(q);
	rba_buf_release(&a);
	rba_buf_release(&b);
	return 0;
}
