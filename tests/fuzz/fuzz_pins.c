/*
 * fuzz_pins.c - the pins loader (policy_pins_parse).  A record that
 * parses has a canonical text that parses back to the same canonical
 * text, and survives a deep copy (an exec trainer's block and params
 * file included).
 */
#include <string.h>

#include "common/buf.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rba_detail d;
	struct pins *p = NULL, *q = NULL, *dup;
	struct rba_buf a, b;
	struct rba_digest h1, h2;
	enum policy_file_kind kind;

	(void)policy_file_kind(data, size, &kind);
	(void)policy_yaml_check(data, size, "fuzz.yaml", &d);
	if (policy_pins_parse(data, size, "fuzz.yaml", &p, &d) != 0)
		return 0;
	rba_buf_init(&a);
	rba_buf_init(&b);
	policy_pins_canonical(p, &a);
	if (rba_buf_status(&a) != 0)
		goto out;
	if (policy_pins_parse(a.p, a.len, "canonical.yaml", &q, &d) != 0)
		fuzz_fail("the canonical form does not parse: %lu:%lu %s",
			  d.line, d.col, d.reason);
	policy_pins_canonical(q, &b);
	if (rba_buf_status(&b) == 0 &&
	    (a.len != b.len || memcmp(a.p, b.p, a.len) != 0))
		fuzz_fail("the canonical form is not a fixed point");
	policy_pins_config_hash(p, &h1);
	policy_pins_config_hash(q, &h2);
	if (!rba_digest_equal(&h1, &h2))
		fuzz_fail("the config hash changed through the canonical form");
	dup = policy_pins_dup(p);
	if (dup != NULL) {
		/* an exec trainer's params file, from the copy */
		struct rba_buf j;
		rba_buf_init(&j);
		policy_pins_params_json(dup, &j);
		rba_buf_release(&j);
	}
	policy_pins_free(dup);
out:
	policy_pins_free(p);
	policy_pins_free(q);
	rba_buf_release(&a);
	rba_buf_release(&b);
	return 0;
}
