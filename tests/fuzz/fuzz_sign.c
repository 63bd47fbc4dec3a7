/*
 * fuzz_sign.c - the minisign parsers (common/sign.h): a public key file,
 * an unencrypted secret key file (an encrypted one is refused before its
 * key derivation, as no passphrase is given), and a signature file
 * verified over a fixed message with the test-only key.  The first byte
 * chooses the parser.
 */
#include <string.h>

#include "common/sign.h"
#include "tests/fuzz/fuzz.h"

/* fixtures/keys/rba-test-only.pub */
static const char test_pub[] =
	"untrusted comment: rebuild-audit public key 7734D3625FDFAA32\n"
	"RWQyqt9fYtM0d63Ox8ydwtnH1ZLE0tygEDWnKN469YooJiwGHCf2zo3W\n";
/* fixtures/keys/message.txt, which the seeds sign */
static const char message[] =
	"rebuild-audit signing fixture.\n"
	"This file is signed by the test-only keys beside it.\n";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rba_detail d;
	struct sign_pubkey pub, key;
	struct sign_seckey *sk = NULL;
	struct sign_check chk;
	struct rba_buf out;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		if (sign_pubkey_parse(data + 1, size - 1, &pub, &d) == 0) {
			rba_buf_init(&out);
			(void)sign_pubkey_format(&pub, NULL, &out, &d);
			rba_buf_release(&out);
		}
		break;
	case 1:
		if (sign_seckey_parse(data + 1, size - 1, NULL, 0, &sk, &d) == 0) {
			sign_seckey_pubkey(sk, &key);
			rba_buf_init(&out);
			if (sign_file_sign(sk, message, sizeof(message) - 1,
					   NULL, "fuzz", &out, &d) != 0)
				fuzz_fail("a parsed key does not sign");
			if (sign_file_verify(&key, message, sizeof(message) - 1,
					     out.p, out.len, &chk, &d) != 0)
				fuzz_fail("a parsed key's signature does not verify: %s",
					  d.reason);
			rba_buf_release(&out);
			sign_seckey_free(sk);
		}
		break;
	default:
		if (sign_pubkey_parse(test_pub, sizeof(test_pub) - 1, &pub, &d) != 0)
			fuzz_fail("the test key does not parse");
		(void)sign_file_verify(&pub, message, sizeof(message) - 1,
				       data + 1, size - 1, &chk, &d);
		break;
	}
	return 0;
}
