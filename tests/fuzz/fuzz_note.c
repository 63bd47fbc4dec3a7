/*
 * fuzz_note.c - the transparency log's parsers (common/note.h,
 * evidence/checkpoint.h): a signed note read as a checkpoint and
 * verified with the test key's verifier, a verifier key, and an
 * inclusion and a consistency proof in JSON checked against a fixed
 * checkpoint.  The first byte chooses the parser.  What parses is held
 * to its round trip: a checkpoint's text formats back to itself, a
 * verifier key to its text.
 */
#include <string.h>

#include "common/note.h"
#include "evidence/checkpoint.h"
#include "tests/fuzz/fuzz.h"

/* The verifier key of fixtures/keys/rba-test-only.pub under "fuzz". */
static const uint8_t test_pk[32] = {
	0xad, 0xce, 0xc7, 0xcc, 0x9d, 0xc2, 0xd9, 0xc7, 0xd5, 0x92, 0xc4,
	0xd2, 0xdc, 0xa0, 0x10, 0x35, 0xa7, 0x28, 0xde, 0x3a, 0xf5, 0x8a,
	0x28, 0x26, 0x2c, 0x06, 0x1c, 0x27, 0xf6, 0xce, 0x8d, 0xd6,
};
/* A checkpoint of 5 records (any root), for the proofs. */
static const char fixed_ck[] =
	"fuzz\n5\nUcHVn3KvRWqfUmzHZX1peITPd0sfPXQ5BDP6x8adShU=\n\n"
	"\xe2\x80\x94 fuzz AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n";
static const char fixed_ck2[] =
	"fuzz\n9\nop/H4hEnVD8OvbZ2bP63kVaHCeKLIjXSLhCfCqmscbY=\n\n"
	"\xe2\x80\x94 fuzz AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rba_detail d;
	struct checkpoint c, c2;
	struct note_verifier v;
	struct rba_buf b;
	char why[CHECKPOINT_REASON_MAX];
	int holds;

	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0:
		if (checkpoint_parse(data + 1, size - 1, &c, &d) == 0) {
			struct note_checkpoint back;
			rba_buf_init(&b);
			note_checkpoint_format(c.ck.origin, c.ck.size, &c.ck.root, &b);
			rba_buf_put(&b, c.ck.ext, c.ck.ext_len);
			if (rba_buf_status(&b) == 0 &&
			    (b.len != c.note.text_len || memcmp(b.p, c.note.text, b.len) != 0))
				fuzz_fail("a checkpoint's text does not format back to itself");
			if (note_checkpoint_parse((const char *)b.p, b.len, &back, &d) != 0)
				fuzz_fail("a formatted checkpoint does not parse");
			rba_buf_release(&b);
			if (note_verifier_make("fuzz", test_pk, &v, &d) != 0)
				fuzz_fail("the test verifier");
			(void)note_verify(&c.note, &v);
			checkpoint_release(&c);
		}
		break;
	case 1:
		if (note_verifier_parse((const char *)data + 1, size - 1, &v, &d) == 0) {
			struct note_verifier back;
			rba_buf_init(&b);
			note_verifier_format(&v, &b);
			if (rba_buf_status(&b) == 0 &&
			    (note_verifier_parse((const char *)b.p, b.len, &back, &d) != 0 ||
			     back.hash != v.hash || strcmp(back.name, v.name) != 0))
				fuzz_fail("a verifier key does not format back");
			rba_buf_release(&b);
		}
		break;
	case 2:
		if (checkpoint_parse(fixed_ck, sizeof(fixed_ck) - 1, &c, &d) != 0)
			fuzz_fail("the fixed checkpoint: %s", d.reason);
		(void)checkpoint_inclusion_check(&c, 3, data + 1, size - 1, &holds, why, &d);
		checkpoint_release(&c);
		break;
	default:
		if (checkpoint_parse(fixed_ck, sizeof(fixed_ck) - 1, &c, &d) != 0 ||
		    checkpoint_parse(fixed_ck2, sizeof(fixed_ck2) - 1, &c2, &d) != 0)
			fuzz_fail("the fixed checkpoints: %s", d.reason);
		(void)checkpoint_consistency_check(&c, &c2, data + 1, size - 1, &holds, why, &d);
		checkpoint_release(&c);
		checkpoint_release(&c2);
		break;
	}
	return 0;
}
