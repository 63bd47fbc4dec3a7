/*
 * fuzz_artifact.c - the artifact loader (artifact_decode).  The format is
 * canonical: whatever decodes encodes back to the very same bytes, and
 * scores a case of zeros without fault.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "model/artifact.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rba_detail d;
	struct artifact a;
	struct rba_buf out;
	float *raw, *probs;
	uint32_t nf, nc;

	memset(&a, 0, sizeof(a));
	if (artifact_decode(data, size, &a, &d) != 0)
		return 0;
	rba_buf_init(&out);
	if (artifact_encode(&a, &out) != 0)
		fuzz_fail("a decoded artifact does not encode");
	if (rba_buf_status(&out) == 0 &&
	    (out.len != size || memcmp(out.p, data, size) != 0))
		fuzz_fail("decode then encode changed the bytes (%zu -> %zu)",
			  size, out.len);
	rba_buf_release(&out);
	nf = a.spec.nfeatures;
	nc = a.spec.nclasses;
	raw = calloc(nf ? nf : 1, sizeof(*raw));
	probs = calloc(nc ? nc : 1, sizeof(*probs));
	/* Scored, not judged: a valid artifact may still hold weights
	 * whose forward pass overflows; the audit reports such scores. */
	if (raw != NULL && probs != NULL)
		(void)artifact_score(&a, raw, 1, probs);
	free(raw);
	free(probs);
	artifact_release(&a);
	return 0;
}
