/*
 * fuzz_evidence.c - the evidence verifier (evidence_check), which parses
 * a received JSON file and every text embedded in it (pins, policy,
 * environment records, the audit record).  An input holding a NUL byte
 * is split there: the text before it is the signature's trusted comment
 * (it may claim evidence), the bytes after it the file.
 */
#include <string.h>

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
	return 0;
}
