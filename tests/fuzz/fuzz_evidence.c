/*
 * fuzz_evidence.c - the evidence verifiers (evidence_check, and
 * dispute_evidence_check for dispute evidence), which parse a received
 * JSON file and every text embedded in it (pins, policy, environment
 * records, the audit record).  An input holding a NUL byte
 * is split there: the text before it is the signature's trusted comment
 * (it may claim evidence), the bytes after it the file.
 */
#include <string.h>

#include "evidence/dispute_evidence.h"
#include "evidence/evidence.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rba_detail d;
	struct evidence_summary sum;
	const uint8_t *nul = memchr(data, 0, size);
	const char *comment = NULL;

	if (nul != NULL) {
		comment = (const char *)data;
		size -= (size_t)(nul + 1 - data);
		data = nul + 1;
	}
	memset(&sum, 0, sizeof(sum));
	(void)evidence_check(data, size, comment, &sum, &d);
	{
		char v[256], c[256], a[256];
		int is;
		if (dispute_evidence_check(data, size, comment, &is, v, c, a, &d) == 0 &&
		    is)
			(void)dispute_evidence_unchecked(data, size, 0);
	}
	return 0;
}
