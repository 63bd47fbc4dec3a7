/*
 * check_sign.c - minisign-compatible keys and signatures (common/sign.h).
 *
 * Interoperability is checked against the real `minisign` binary both
 * ways, and against fixtures/keys/ (made by minisign; see its README).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sign.h"
#include "common/buf.h"
#include "common/dsse.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "tests/unit/scratch.h"
#include "tests/unit/suites.h"

#define KEYS FIXTURES "/keys"

/* Cheap scrypt for tests that do not exercise minisign's default cost. */
static const struct sign_kdf kdf_fast = { 524288, 16777216 };

static void
setup(void)
{
	ck_assert_int_eq(rba_crypto_init(), 0);
	scratch_make("sign");
}

static void
teardown(void)
{
	scratch_remove();
}


static uint8_t *
slurp(const char *path, size_t *len)
{
	uint8_t *p = NULL;
	int err = rba_file_read(path, 1 << 20, &p, len, NULL);

	ck_assert_msg(err == 0, "read %s: %s", path, rba_strerror(err));
	return p;
}

static void
spit(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/*
 * The interoperability tests need minisign; make test-deps installs it, so
 * its absence fails the test instead of skipping it.
 */
static void
need_minisign(void)
{
	if (system("command -v minisign >/dev/null 2>&1") != 0)
		ck_abort_msg("minisign is not installed: run 'make test-deps' "
			     "(the interoperability tests need it)");
}

/* Runs a shell command quietly; its exit status. */
static int
sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int
sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " >/dev/null 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	st = system(cmd);
	return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static size_t
count_entries(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

static struct sign_seckey *
load_sk(const char *path, const char *pass)
{
	struct rba_detail d;
	struct sign_seckey *k = NULL;
	int err;

	rba_detail_clear(&d);
	err = sign_seckey_load(path, pass, pass ? strlen(pass) : 0, &k, &d);
	ck_assert_msg(err == 0, "load %s: %s: %s", path, rba_strerror(err),
		      d.reason);
	return k;
}

static struct sign_pubkey
load_pk(const char *path)
{
	struct rba_detail d;
	struct sign_pubkey pk;
	int err;

	rba_detail_clear(&d);
	err = sign_pubkey_load(path, &pk, &d);
	ck_assert_msg(err == 0, "load %s: %s: %s", path, rba_strerror(err),
		      d.reason);
	return pk;
}

/* Signs msg with k; returns the malloc'd signature text. */
static char *
sign_text(const struct sign_seckey *k, const void *msg, size_t n,
	  const char *tc, size_t *len)
{
	struct rba_buf b;
	struct rba_detail d;
	int err;

	rba_buf_init(&b);
	rba_detail_clear(&d);
	err = sign_file_sign(k, msg, n, NULL, tc, &b, &d);
	ck_assert_msg(err == 0, "sign: %s", d.reason);
	rba_buf_cstr(&b);
	return (char *)rba_buf_steal(&b, len);
}

static int
verify_text(const struct sign_pubkey *pk, const void *msg, size_t n,
	    const void *sig, size_t siglen, struct sign_check *chk)
{
	struct rba_detail d;

	rba_detail_clear(&d);
	return sign_file_verify(pk, msg, n, sig, siglen, chk, &d);
}

/* Offset of the start of line `line` (1-based) in s. */
static size_t
line_start(const char *s, int line)
{
	size_t off = 0;

	while (--line > 0)
		off = (size_t)(strchr(s + off, '\n') - s) + 1;
	return off;
}

START_TEST(keyid_text_matches_minisign)
{
	struct sign_pubkey pk = load_pk(KEYS "/minisign-test-only.pub");
	char id[SIGN_KEYID_TEXT_LEN + 1];

	sign_keyid_format(pk.keyid, id);
	/* minisign wrote this id into the public key's comment. */
	ck_assert_str_eq(id, "517DABC399AC8744");
}
END_TEST

START_TEST(keygen_round_trip)
{
	struct rba_detail d;
	struct sign_pubkey pub, pub2, pub3;
	struct sign_seckey *k;
	struct sign_check chk;
	struct stat st;
	char id[SIGN_KEYID_TEXT_LEN + 1], want[128];
	uint8_t *text;
	size_t len, slen;
	char *sig;
	static const char msg[] = "a file to sign\n";

	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), NULL, 0, NULL, NULL,
					   &pub, &d),
			 0);
	ck_assert_int_eq(stat(scratch_path("k.key"), &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(stat(scratch_path("k.pub"), &st), 0);
	ck_assert_uint_eq(count_entries(scratch_dir), 2); /* no temporaries */

	/* Exactly 0600 whatever the umask (this test runs in its own fork). */
	umask(0277);
	ck_assert_int_eq(sign_keygen_write(scratch_path("u"), NULL, 0, NULL, NULL,
					   NULL, &d),
			 0);
	ck_assert_int_eq(stat(scratch_path("u.key"), &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	umask(022);
	ck_assert_int_eq(unlink(scratch_path("u.key")), 0);
	ck_assert_int_eq(unlink(scratch_path("u.pub")), 0);

	pub2 = load_pk(scratch_path("k.pub"));
	ck_assert_mem_eq(&pub, &pub2, sizeof(pub));
	text = slurp(scratch_path("k.pub"), &len);
	sign_keyid_format(pub.keyid, id);
	snprintf(want, sizeof(want), "untrusted comment: rebuild-audit public key %s\n", id);
	ck_assert_int_eq(strncmp((char *)text, want, strlen(want)), 0);
	ck_assert_uint_eq(len, strlen(want) + 56 + 1);
	free(text);

	k = load_sk(scratch_path("k.key"), NULL);
	sign_seckey_pubkey(k, &pub3);
	ck_assert_mem_eq(&pub, &pub3, sizeof(pub));
	sig = sign_text(k, msg, strlen(msg), "round trip", &slen);
	ck_assert_int_eq(verify_text(&pub, msg, strlen(msg), sig, slen, &chk), 0);
	ck_assert_str_eq(chk.trusted_comment, "round trip");
	ck_assert_int_eq(chk.legacy, 0);
	ck_assert_int_eq(chk.failed, SIGN_FAILED_NONE);
	ck_assert_mem_eq(chk.keyid, pub.keyid, SIGN_KEYID_LEN);
	free(sig);
	sign_seckey_free(k);
}
END_TEST

START_TEST(keygen_refuses_existing)
{
	struct rba_detail d;
	uint8_t *a, *b;
	size_t alen, blen;

	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), NULL, 0, NULL, NULL, NULL, &d), 0);
	a = slurp(scratch_path("k.key"), &alen);
	b = slurp(scratch_path("k.pub"), &blen);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), NULL, 0, NULL, NULL, NULL, &d),
			 RBA_E_EXISTS);
	ck_assert_ptr_nonnull(strstr(d.file, "k.key"));
	free(a);
	a = slurp(scratch_path("k.key"), &blen);
	ck_assert_uint_eq(alen, blen);
	free(a);
	free(b);
	ck_assert_uint_eq(count_entries(scratch_dir), 2);

	/* Only the public file exists: nothing written, no .key left. */
	spit(scratch_path("p.pub"), "x", 1);
	ck_assert_int_eq(sign_keygen_write(scratch_path("p"), NULL, 0, NULL, NULL, NULL, &d),
			 RBA_E_EXISTS);
	ck_assert_ptr_nonnull(strstr(d.file, "p.pub"));
	ck_assert_int_eq(access(scratch_path("p.key"), F_OK), -1);

	/* Only the secret file exists. */
	spit(scratch_path("s.key"), "x", 1);
	ck_assert_int_eq(sign_keygen_write(scratch_path("s"), NULL, 0, NULL, NULL, NULL, &d),
			 RBA_E_EXISTS);
	ck_assert_int_eq(access(scratch_path("s.pub"), F_OK), -1);

	/* A dangling symbolic link counts as existing (no write through it). */
	ck_assert_int_eq(symlink(scratch_path("nowhere"), scratch_path("l.key")), 0);
	ck_assert_int_eq(sign_keygen_write(scratch_path("l"), NULL, 0, NULL, NULL, NULL, &d),
			 RBA_E_EXISTS);
	ck_assert_int_eq(access(scratch_path("nowhere"), F_OK), -1);
	ck_assert_int_eq(access(scratch_path("l.pub"), F_OK), -1);
	ck_assert_uint_eq(count_entries(scratch_dir), 5);
}
END_TEST

START_TEST(keygen_bad_arguments_write_nothing)
{
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), NULL, 0, "two\nlines",
					   NULL, NULL, &d),
			 RBA_E_RANGE);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), "", 0, NULL, NULL, NULL, &d),
			 RBA_E_USAGE);
	{
		struct sign_kdf weak = { 1, 1 };
		ck_assert_int_eq(sign_keygen_write(scratch_path("k"), "pw", 2, NULL,
						   &weak, NULL, &d),
				 RBA_E_USAGE);
	}
	ck_assert_int_eq(sign_keygen_write("/nonexistent-dir/k", NULL, 0, NULL,
					   NULL, NULL, &d),
			 ENOENT);
	ck_assert_uint_eq(count_entries(scratch_dir), 0);
}
END_TEST

START_TEST(keygen_sweeps_stale_temporaries)
{
	struct rba_detail d;

	/* A temporary left by a killed keygen (no such pid can be alive). */
	spit(scratch_path("k.key.tmp-999999999-0"), "secret", 6);
	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), NULL, 0, NULL, NULL, NULL, &d), 0);
	ck_assert_int_eq(access(scratch_path("k.key.tmp-999999999-0"), F_OK), -1);
	ck_assert_uint_eq(count_entries(scratch_dir), 2);
}
END_TEST

START_TEST(keygen_custom_comment)
{
	struct rba_detail d;
	uint8_t *text;
	size_t len;

	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), NULL, 0, "acme model risk",
					   NULL, NULL, &d),
			 0);
	text = slurp(scratch_path("k.pub"), &len);
	ck_assert_int_eq(strncmp((char *)text, "untrusted comment: acme model risk\n", 35), 0);
	free(text);
}
END_TEST

/* sign_file_sign gives exactly the bytes `minisign -S` gave. */
START_TEST(sign_known_answer)
{
	struct sign_seckey *k = load_sk(KEYS "/rba-test-only.key", NULL);
	struct rba_buf b;
	struct rba_detail d;
	uint8_t *msg, *want;
	size_t n, wn;

	msg = slurp(KEYS "/message.txt", &n);
	want = slurp(KEYS "/message.txt.rba.minisig", &wn);
	rba_buf_init(&b);
	rba_detail_clear(&d);
	ck_assert_int_eq(sign_file_sign(k, msg, n, "known answer",
					"fixture: prehashed signature by rba-test-only",
					&b, &d),
			 0);
	ck_assert_uint_eq(b.len, wn);
	ck_assert_mem_eq(b.p, want, wn);
	rba_buf_release(&b);
	free(msg);
	free(want);
	sign_seckey_free(k);
}
END_TEST

static void
verify_fixture(const char *pub, const char *sig, int legacy, const char *tc)
{
	struct sign_pubkey pk = load_pk(pub);
	struct sign_check chk;
	struct rba_detail d;
	uint8_t *msg, *s;
	size_t n, sn;

	msg = slurp(KEYS "/message.txt", &n);
	s = slurp(sig, &sn);
	rba_detail_clear(&d);
	ck_assert_msg(sign_file_verify(&pk, msg, n, s, sn, &chk, &d) == 0,
		      "%s: %s", sig, d.reason);
	ck_assert_int_eq(chk.legacy, legacy);
	ck_assert_str_eq(chk.trusted_comment, tc);
	/* The last byte of the file changed: the signature fails. */
	msg[n - 1] ^= 1;
	ck_assert_int_eq(sign_file_verify(&pk, msg, n, s, sn, &chk, &d),
			 RBA_E_BADSIG);
	ck_assert_int_eq(chk.failed, SIGN_FAILED_SIGNATURE);
	ck_assert_str_eq(chk.trusted_comment, "");
	free(msg);
	free(s);
}

START_TEST(verify_minisign_signatures)
{
	verify_fixture(KEYS "/minisign-test-only.pub", KEYS "/message.txt.minisig",
		       0, "fixture: prehashed signature by minisign-test-only");
	verify_fixture(KEYS "/minisign-test-only.pub",
		       KEYS "/message.txt.legacy.minisig", 1,
		       "fixture: legacy signature by minisign-test-only");
	verify_fixture(KEYS "/minisign-test-only-enc.pub",
		       KEYS "/message.txt.enc.minisig", 0,
		       "fixture: prehashed signature by minisign-test-only-enc");
	verify_fixture(KEYS "/rba-test-only.pub", KEYS "/message.txt.rba.minisig",
		       0, "fixture: prehashed signature by rba-test-only");
}
END_TEST

/* Every single-byte change of the signed file is detected. */
static void
every_file_byte(const char *pubpath, const char *sigpath)
{
	struct sign_pubkey pk = load_pk(pubpath);
	struct sign_check chk;
	uint8_t *msg, *s;
	size_t n, sn, i;
	int b;

	msg = slurp(KEYS "/message.txt", &n);
	s = slurp(sigpath, &sn);
	for (i = 0; i < n; i++) {
		for (b = 0; b < 8; b++) {
			msg[i] ^= (uint8_t)(1u << b);
			ck_assert_msg(verify_text(&pk, msg, n, s, sn, &chk) == RBA_E_BADSIG &&
					      chk.failed == SIGN_FAILED_SIGNATURE,
				      "%s: byte %zu bit %d change not detected",
				      sigpath, i, b);
			msg[i] ^= (uint8_t)(1u << b);
		}
	}
	/* A byte appended or removed. */
	ck_assert_int_eq(verify_text(&pk, msg, n - 1, s, sn, &chk), RBA_E_BADSIG);
	msg = realloc(msg, n + 1);
	msg[n] = '\n';
	ck_assert_int_eq(verify_text(&pk, msg, n + 1, s, sn, &chk), RBA_E_BADSIG);
	ck_assert_int_eq(verify_text(&pk, msg, n, s, sn, &chk), 0);
	free(msg);
	free(s);
}

START_TEST(every_file_byte_change_detected)
{
	every_file_byte(KEYS "/minisign-test-only.pub", KEYS "/message.txt.minisig");
	every_file_byte(KEYS "/minisign-test-only.pub",
			KEYS "/message.txt.legacy.minisig");
}
END_TEST

/*
 * Every single-byte change of the signature line, the trusted comment
 * and the global signature (terminators included) makes verification
 * fail; a change to the untrusted comment's text does not, by design.
 */
START_TEST(every_signature_byte_change_detected)
{
	static const uint8_t flips[] = { 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80 };
	static const char sets[] = { 'A', 'z', '0', '+', '/', '=', '\n', '\r', '\0', ' ', '\t' };
	struct sign_pubkey pk = load_pk(KEYS "/minisign-test-only.pub");
	struct sign_check chk;
	uint8_t *msg, *s;
	size_t n, sn, i, j, from, tc_from, tc_to;
	size_t tried = 0;

	msg = slurp(KEYS "/message.txt", &n);
	s = slurp(KEYS "/message.txt.minisig", &sn);
	from = line_start((char *)s, 2);
	tc_from = line_start((char *)s, 3) + strlen("trusted comment: ");
	tc_to = line_start((char *)s, 4) - 1;
	for (i = from; i < sn; i++) {
		uint8_t orig = s[i];

		for (j = 0; j < sizeof(flips) + sizeof(sets); j++) {
			uint8_t v = j < sizeof(flips) ? orig ^ flips[j]
						      : (uint8_t)sets[j - sizeof(flips)];
			int err;

			if (v == orig)
				continue;
			s[i] = v;
			err = verify_text(&pk, msg, n, s, sn, &chk);
			ck_assert_msg(err != 0, "signature byte %zu -> 0x%02x not detected",
				      i, v);
			ck_assert_str_eq(chk.trusted_comment, "");
			if (i >= tc_from && i < tc_to && v != '\n' && v != '\r' && v != 0)
				ck_assert_msg(err == RBA_E_BADSIG &&
						      chk.failed == SIGN_FAILED_COMMENT,
					      "trusted comment byte %zu: err %d failed %d",
					      i, err, chk.failed);
			tried++;
			s[i] = orig;
		}
	}
	ck_assert_uint_gt(tried, 2000);
	/* The untrusted comment is not signed: its text may change. */
	s[strlen("untrusted comment: ")] = 'X';
	ck_assert_int_eq(verify_text(&pk, msg, n, s, sn, &chk), 0);
	s[0] = 'U'; /* but its prefix is required */
	ck_assert_int_eq(verify_text(&pk, msg, n, s, sn, &chk), RBA_E_SYNTAX);
	free(msg);
	free(s);
}
END_TEST

/*
 * Base64 is read in canonical form only: the unused low bits of the last
 * character before "=" must be zero.  (minisign 0.11 ignores them, so
 * there two texts decode alike; here only one is accepted.)
 */
START_TEST(noncanonical_base64_refused)
{
	static const char alpha[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	struct sign_pubkey pk = load_pk(KEYS "/minisign-test-only.pub");
	struct sign_check chk;
	uint8_t *msg, *s;
	size_t n, sn, pos[2];
	unsigned mask[2] = { 3, 15 }, v, k;
	int j, tried = 0;

	msg = slurp(KEYS "/message.txt", &n);
	s = slurp(KEYS "/message.txt.minisig", &sn);
	pos[0] = line_start((char *)s, 2) + 98; /* 74 bytes: 2 unused bits */
	pos[1] = line_start((char *)s, 4) + 85; /* 64 bytes: 4 unused bits */
	for (j = 0; j < 2; j++) {
		uint8_t orig = s[pos[j]];

		ck_assert_int_eq(s[pos[j] + 1], '=');
		v = (unsigned)(strchr(alpha, orig) - alpha);
		ck_assert_uint_eq(v & mask[j], 0);
		for (k = 1; k <= mask[j]; k++) {
			s[pos[j]] = (uint8_t)alpha[v | k];
			ck_assert_int_eq(verify_text(&pk, msg, n, s, sn, &chk),
					 RBA_E_SYNTAX);
			tried++;
		}
		s[pos[j]] = orig;
	}
	ck_assert_int_eq(tried, 3 + 15);
	ck_assert_int_eq(verify_text(&pk, msg, n, s, sn, &chk), 0);
	free(msg);
	free(s);
}
END_TEST

START_TEST(wrong_key)
{
	struct sign_pubkey other = load_pk(KEYS "/rba-test-only.pub");
	struct sign_pubkey right = load_pk(KEYS "/minisign-test-only.pub");
	struct sign_pubkey mixed;
	struct sign_check chk;
	struct rba_detail d;
	uint8_t *msg, *s;
	size_t n, sn;

	msg = slurp(KEYS "/message.txt", &n);
	s = slurp(KEYS "/message.txt.minisig", &sn);
	rba_detail_clear(&d);
	ck_assert_int_eq(sign_file_verify(&other, msg, n, s, sn, &chk, &d), RBA_E_BADSIG);
	ck_assert_int_eq(chk.failed, SIGN_FAILED_KEYID);
	ck_assert_ptr_nonnull(strstr(d.reason, "517DABC399AC8744"));
	ck_assert_ptr_nonnull(strstr(d.reason, "7734D3625FDFAA32"));

	/* The right key id with another key: the signature itself fails. */
	mixed = other;
	memcpy(mixed.keyid, right.keyid, SIGN_KEYID_LEN);
	ck_assert_int_eq(sign_file_verify(&mixed, msg, n, s, sn, &chk, &d), RBA_E_BADSIG);
	ck_assert_int_eq(chk.failed, SIGN_FAILED_SIGNATURE);
	ck_assert_ptr_nonnull(strstr(d.reason, "does not match the file"));
	free(msg);
	free(s);
}
END_TEST

START_TEST(malformed_signature_files)
{
	struct sign_pubkey pk = load_pk(KEYS "/minisign-test-only.pub");
	struct sign_check chk;
	struct rba_detail d;
	uint8_t *msg, *s;
	size_t n, sn, i;
	char l1[128], l2[128], l3[128], l4[128], buf[20000];
	const char *ok2;

	msg = slurp(KEYS "/message.txt", &n);
	s = slurp(KEYS "/message.txt.minisig", &sn);
	ck_assert_int_eq(sscanf((char *)s, "%127[^\n]\n%127[^\n]\n%127[^\n]\n%127[^\n]\n",
				l1, l2, l3, l4),
			 4);
	ok2 = l2;
	{
		struct {
			const char *what;
			int want;
			char text[1024];
		} c[32];
		size_t nc = 0;

#define CASE(w, e, ...)                                                     \
	do {                                                                \
		c[nc].what = (w);                                           \
		c[nc].want = (e);                                           \
		snprintf(c[nc].text, sizeof(c[nc].text), __VA_ARGS__);      \
		nc++;                                                       \
	} while (0)
		CASE("empty file", RBA_E_SYNTAX, "%s", "");
		CASE("one line", RBA_E_SYNTAX, "%s\n", l1);
		CASE("two lines", RBA_E_SYNTAX, "%s\n%s\n", l1, l2);
		CASE("three lines", RBA_E_SYNTAX, "%s\n%s\n%s\n", l1, l2, l3);
		CASE("extra line", RBA_E_SYNTAX, "%s\n%s\n%s\n%s\nmore\n", l1, l2, l3, l4);
		CASE("extra blank line", RBA_E_SYNTAX, "%s\n%s\n%s\n%s\n\n", l1, l2, l3, l4);
		CASE("lines swapped", RBA_E_SYNTAX, "%s\n%s\n%s\n%s\n", l1, l3, l2, l4);
		CASE("no untrusted prefix", RBA_E_SYNTAX, "comment: x\n%s\n%s\n%s\n", l2, l3, l4);
		CASE("no trusted prefix", RBA_E_SYNTAX, "%s\n%s\n%s\n%s\n", l1, l2,
		     l3 + strlen("trusted "), l4);
		CASE("base64 bad char", RBA_E_SYNTAX, "%s\n%.50s*%s\n%s\n%s\n", l1, l2,
		     l2 + 51, l3, l4);
		CASE("base64 no padding", RBA_E_SYNTAX, "%s\n%.99s\n%s\n%s\n", l1, l2, l3, l4);
		CASE("base64 space", RBA_E_SYNTAX, "%s\n%s \n%s\n%s\n", l1, l2, l3, l4);
		CASE("base64 leading space", RBA_E_SYNTAX, "%s\n %s\n%s\n%s\n", l1, l2, l3, l4);
		/* 72 and 75 bytes instead of 74 */
		CASE("signature too short", RBA_E_CORRUPT, "%s\n%.96s\n%s\n%s\n", l1, l2, l3, l4);
		CASE("signature too long", RBA_E_CORRUPT, "%s\n%.96sAAAA\n%s\n%s\n", l1, l2,
		     l3, l4);
		CASE("global too short", RBA_E_CORRUPT, "%s\n%s\n%s\n%.84s\n", l1, l2, l3, l4);
		CASE("unknown algorithm", RBA_E_UNSUPPORTED, "%s\nRX%s\n%s\n%s\n", l1,
		     l2 + 2, l3, l4);
		CASE("lone CR", RBA_E_SYNTAX, "%s\r%s\n%s\n%s\n", l1, l2, l3, l4);
		CASE("CR at end", RBA_E_SYNTAX, "%s\n%s\n%s\n%s\r", l1, l2, l3, l4);
		CASE("valid", 0, "%s\n%s\n%s\n%s\n", l1, ok2, l3, l4);
		CASE("CRLF", 0, "%s\r\n%s\r\n%s\r\n%s\r\n", l1, l2, l3, l4);
		CASE("no final newline", 0, "%s\n%s\n%s\n%s", l1, l2, l3, l4);
		for (i = 0; i < nc; i++) {
			rba_detail_clear(&d);
			int err = sign_file_verify(&pk, msg, n, c[i].text,
						   strlen(c[i].text), &chk, &d);
			ck_assert_msg(err == c[i].want, "%s: got %d (%s), want %d",
				      c[i].what, err, d.reason, c[i].want);
			if (err != 0)
				ck_assert_msg(d.reason[0] != 0, "%s: no reason", c[i].what);
		}
#undef CASE
	}
	/* NUL byte inside a line (not expressible with snprintf). */
	memcpy(buf, s, sn);
	buf[5] = '\0';
	ck_assert_int_eq(verify_text(&pk, msg, n, buf, sn, &chk), RBA_E_SYNTAX);
	/* Caps. */
	memset(buf, 'a', sizeof(buf));
	ck_assert_int_eq(verify_text(&pk, msg, n, buf, SIGN_SIGFILE_MAX + 1, &chk),
			 RBA_E_LIMIT);
	{
		char *big = malloc(SIGN_SIGFILE_MAX);
		int k = snprintf(big, SIGN_SIGFILE_MAX, "untrusted comment: %0*d\n%s\n%s\n%s\n",
				 SIGN_COMMENT_MAX + 1, 0, l2, l3, l4);
		ck_assert_int_eq(verify_text(&pk, msg, n, big, (size_t)k, &chk), RBA_E_LIMIT);
		k = snprintf(big, SIGN_SIGFILE_MAX, "%s\n%s\ntrusted comment: %0*d\n%s\n",
			     l1, l2, SIGN_TRUSTED_COMMENT_MAX + 1, 0, l4);
		ck_assert_int_eq(verify_text(&pk, msg, n, big, (size_t)k, &chk), RBA_E_LIMIT);
		free(big);
	}
	free(msg);
	free(s);
}
END_TEST

START_TEST(malformed_public_keys)
{
	struct sign_pubkey pk;
	struct rba_detail d;
	static const struct {
		const char *text;
		int want;
	} c[] = {
		{ "", RBA_E_SYNTAX },
		{ "untrusted comment: x\n", RBA_E_SYNTAX },
		{ "RWREh6yZw6t9UTORnk2qAV69rezhpHUlUiiSZCHs2b+tTu20M8J/VPow\n", RBA_E_SYNTAX },
		{ "untrusted comment: x\nRWREh6yZw6t9UTORnk2qAV69rezhpHUlUiiSZCHs2b+tTu20M8J/VPow\nextra\n",
		  RBA_E_SYNTAX },
		{ "untrusted comment: x\nRWREh6yZw6t9UTORnk2qAV69rezhpHUlUiiSZCHs2b+tTu20M8J/VPo!\n",
		  RBA_E_SYNTAX },
		{ "untrusted comment: x\nRWREh6yZw6t9UTORnk2qAV69rezhpHUlUiiSZCHs2b+tTu20M8J/\n",
		  RBA_E_CORRUPT },
		{ "untrusted comment: x\nRXREh6yZw6t9UTORnk2qAV69rezhpHUlUiiSZCHs2b+tTu20M8J/VPow\n",
		  RBA_E_UNSUPPORTED },
		{ "untrusted comment: x\nRWREh6yZw6t9UTORnk2qAV69rezhpHUlUiiSZCHs2b+tTu20M8J/VPow\n", 0 },
		{ "untrusted comment: x\r\nRWREh6yZw6t9UTORnk2qAV69rezhpHUlUiiSZCHs2b+tTu20M8J/VPow", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		rba_detail_clear(&d);
		ck_assert_msg(sign_pubkey_parse(c[i].text, strlen(c[i].text), &pk, &d) ==
				      c[i].want,
			      "case %zu: %s", i, d.reason);
	}
	ck_assert_int_eq(sign_pubkey_load(scratch_path("missing.pub"), &pk, &d), ENOENT);
	ck_assert_ptr_nonnull(strstr(d.file, "missing.pub"));
}
END_TEST

/* An unencrypted key damaged in its key material is refused. */
START_TEST(damaged_secret_key)
{
	struct rba_detail d;
	struct sign_seckey *k = NULL;
	uint8_t *text;
	size_t len, b64, i;
	int bad = 0;

	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), NULL, 0, NULL, NULL, NULL, &d), 0);
	text = slurp(scratch_path("k.key"), &len);
	b64 = line_start((char *)text, 2);
	/* base64 chars 72.. cover the key id, the key and the checksum. */
	for (i = b64 + 72; i < len - 2; i++) {
		uint8_t orig = text[i];
		int err;

		text[i] = orig == 'A' ? 'B' : 'A';
		err = sign_seckey_parse(text, len, NULL, 0, &k, &d);
		/* The last character also carries padding bits: syntax. */
		ck_assert_msg(err == RBA_E_CORRUPT ||
				      (err == RBA_E_SYNTAX && i == len - 3),
			      "key char %zu: %d", i, err);
		ck_assert_ptr_null(k);
		bad++;
		text[i] = orig;
	}
	ck_assert_int_gt(bad, 130);
	ck_assert_int_eq(sign_seckey_parse(text, len, NULL, 0, &k, &d), 0);
	sign_seckey_free(k);
	/* The reason never quotes key material. */
	text[b64 + 100] ^= 1;
	ck_assert_int_ne(sign_seckey_parse(text, len, NULL, 0, &k, &d), 0);
	for (i = b64; i + 8 < len; i++) {
		char win[9];

		memcpy(win, text + i, 8);
		win[8] = 0;
		ck_assert_ptr_null(strstr(d.reason, win));
	}
	free(text);
	ck_assert_int_eq(sign_seckey_load(scratch_path("none.key"), NULL, 0, &k, &d), ENOENT);
}
END_TEST

START_TEST(passphrase_protected_key)
{
	static const char pass[] = "correct horse battery staple";
	struct rba_detail d;
	struct sign_pubkey pub, pub2;
	struct sign_seckey *k = NULL;
	uint8_t *text;
	size_t len;

	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), pass, strlen(pass), NULL,
					   &kdf_fast, &pub, &d),
			 0);
	text = slurp(scratch_path("k.key"), &len);
	/* base64 of "Ed" "Sc" "B2" */
	ck_assert_ptr_nonnull(strstr((char *)text, "\nRWRTY0Iy"));
	free(text);

	ck_assert_int_eq(sign_seckey_load(scratch_path("k.key"), "wrong", 5, &k, &d), RBA_E_USAGE);
	ck_assert_ptr_nonnull(strstr(d.reason, "wrong passphrase"));
	ck_assert_ptr_null(k);
	ck_assert_int_eq(sign_seckey_load(scratch_path("k.key"), pass, strlen(pass) - 1, &k, &d),
			 RBA_E_USAGE);
	ck_assert_int_eq(sign_seckey_load(scratch_path("k.key"), NULL, 0, &k, &d), RBA_E_USAGE);
	ck_assert_ptr_nonnull(strstr(d.reason, "passphrase-protected"));
	ck_assert_ptr_null(strstr(d.reason, pass));

	k = load_sk(scratch_path("k.key"), pass);
	sign_seckey_pubkey(k, &pub2);
	ck_assert_mem_eq(&pub, &pub2, sizeof(pub));
	sign_seckey_free(k);
}
END_TEST

/* A key made and protected by minisign itself, at minisign's full cost. */
START_TEST(minisign_encrypted_key)
{
	struct rba_detail d;
	struct sign_seckey *k = NULL;
	struct sign_pubkey pub, want = load_pk(KEYS "/minisign-test-only-enc.pub");
	struct sign_check chk;
	char *pass = NULL, *sig;
	size_t passlen = 0, slen;

	rba_detail_clear(&d);
	ck_assert_int_eq(sign_passphrase_read(KEYS "/minisign-test-only-enc.passphrase",
					      &pass, &passlen, &d),
			 0);
	ck_assert_int_eq(sign_seckey_load(KEYS "/minisign-test-only-enc.key", pass,
					  passlen, &k, &d),
			 0);
	sign_passphrase_free(pass);
	sign_seckey_pubkey(k, &pub);
	ck_assert_mem_eq(&pub, &want, sizeof(pub));
	sig = sign_text(k, "x", 1, "t", &slen);
	ck_assert_int_eq(verify_text(&want, "x", 1, sig, slen, &chk), 0);
	free(sig);
	sign_seckey_free(k);
}
END_TEST

/* minisign -G -W leaves the checksum zero; such keys load and sign. */
START_TEST(minisign_unencrypted_key)
{
	struct sign_seckey *k = load_sk(KEYS "/minisign-test-only.key", NULL);
	struct sign_pubkey pub, want = load_pk(KEYS "/minisign-test-only.pub");
	struct sign_check chk;
	char *sig;
	size_t slen;

	sign_seckey_pubkey(k, &pub);
	ck_assert_mem_eq(&pub, &want, sizeof(pub));
	sig = sign_text(k, "", 0, "empty file", &slen);
	ck_assert_int_eq(verify_text(&want, "", 0, sig, slen, &chk), 0);
	ck_assert_int_eq(verify_text(&want, "\n", 1, sig, slen, &chk), RBA_E_BADSIG);
	free(sig);
	sign_seckey_free(k);
}
END_TEST

/* One key file given for the other is named as such, with no position. */
START_TEST(key_kinds_swapped)
{
	struct sign_seckey *k = (struct sign_seckey *)1;
	struct sign_pubkey pk;
	struct rba_detail d;
	uint8_t *text;
	size_t len;

	text = slurp(KEYS "/minisign-test-only.pub", &len);
	rba_detail_clear(&d);
	ck_assert_int_eq(sign_seckey_parse(text, len, NULL, 0, &k, &d), RBA_E_SCHEMA);
	ck_assert_ptr_null(k);
	ck_assert_str_eq(d.reason, "this is a public key, not a secret key (give the .key file)");
	ck_assert_uint_eq(d.line, 0);
	free(text);
	text = slurp(KEYS "/minisign-test-only-enc.key", &len);
	rba_detail_clear(&d);
	ck_assert_int_eq(sign_pubkey_parse(text, len, &pk, &d), RBA_E_SCHEMA);
	ck_assert_str_eq(d.reason, "this is a secret key, not a public key (give the .pub file)");
	ck_assert_uint_eq(d.line, 0);
	free(text);
}
END_TEST

START_TEST(passphrase_files)
{
	static const struct {
		const char *text;
		size_t n;
		int want;
		const char *pass;
	} c[] = {
		{ "pw\n", 3, 0, "pw" },
		{ "pw\r\n", 4, 0, "pw" },
		{ "pw", 2, 0, "pw" },
		{ "two words \n", 11, 0, "two words " },
		{ "", 0, RBA_E_SYNTAX, NULL },
		{ "\n", 1, RBA_E_SYNTAX, NULL },
		{ "a\nb\n", 4, RBA_E_SYNTAX, NULL },
		{ "a\n\n", 3, RBA_E_SYNTAX, NULL },
		{ "a\0b\n", 4, RBA_E_SYNTAX, NULL },
		{ "a\rb\n", 4, RBA_E_SYNTAX, NULL },
		{ "pw\r", 3, RBA_E_SYNTAX, NULL },
	};
	struct rba_detail d;
	char *p, big[SIGN_PASSPHRASE_MAX + 8];
	size_t i, n;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		spit(scratch_path("pass"), c[i].text, c[i].n);
		rba_detail_clear(&d);
		ck_assert_msg(sign_passphrase_read(scratch_path("pass"), &p, &n, &d) == c[i].want,
			      "case %zu: %s", i, d.reason);
		if (c[i].want == 0) {
			ck_assert_uint_eq(n, strlen(c[i].pass));
			ck_assert_str_eq(p, c[i].pass);
		} else {
			ck_assert_ptr_null(p);
		}
		sign_passphrase_free(p);
	}
	memset(big, 'x', sizeof(big));
	big[SIGN_PASSPHRASE_MAX] = '\n';
	spit(scratch_path("pass"), big, SIGN_PASSPHRASE_MAX + 1);
	ck_assert_int_eq(sign_passphrase_read(scratch_path("pass"), &p, &n, &d), 0);
	ck_assert_uint_eq(n, SIGN_PASSPHRASE_MAX);
	sign_passphrase_free(p);
	big[SIGN_PASSPHRASE_MAX] = 'x';
	spit(scratch_path("pass"), big, SIGN_PASSPHRASE_MAX + 2);
	ck_assert_int_eq(sign_passphrase_read(scratch_path("pass"), &p, &n, &d), RBA_E_LIMIT);
	ck_assert_int_eq(sign_passphrase_read(scratch_path("nope"), &p, &n, &d), ENOENT);
}
END_TEST

START_TEST(sign_rejects_bad_comments)
{
	struct sign_seckey *k = load_sk(KEYS "/rba-test-only.key", NULL);
	struct rba_buf b;
	struct rba_detail d;
	char *longc = malloc(SIGN_TRUSTED_COMMENT_MAX + 2);

	rba_buf_init(&b);
	rba_detail_clear(&d);
	ck_assert_int_eq(sign_file_sign(k, "x", 1, NULL, "a\nb", &b, &d), RBA_E_RANGE);
	ck_assert_int_eq(sign_file_sign(k, "x", 1, NULL, "a\rb", &b, &d), RBA_E_RANGE);
	ck_assert_int_eq(sign_file_sign(k, "x", 1, "a\nb", "t", &b, &d), RBA_E_RANGE);
	memset(longc, 'c', SIGN_TRUSTED_COMMENT_MAX + 1);
	longc[SIGN_TRUSTED_COMMENT_MAX + 1] = 0;
	ck_assert_int_eq(sign_file_sign(k, "x", 1, NULL, longc, &b, &d), RBA_E_LIMIT);
	longc[SIGN_COMMENT_MAX + 1] = 0;
	ck_assert_int_eq(sign_file_sign(k, "x", 1, longc, "t", &b, &d), RBA_E_LIMIT);
	ck_assert_uint_eq(b.len, 0);
	free(longc);
	rba_buf_release(&b);
	sign_seckey_free(k);
}
END_TEST

/* Our signatures and keys, checked by the minisign binary. */
START_TEST(minisign_accepts_ours)
{
	struct rba_detail d;
	struct sign_seckey *k;
	struct rba_buf b;
	char *tc, *uc;
	size_t i;
	static const char msg[] = "evidence\n";

	need_minisign();
	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), NULL, 0, NULL, NULL, NULL, &d), 0);
	k = load_sk(scratch_path("k.key"), NULL);
	spit(scratch_path("f"), msg, strlen(msg));

	/* Comments at their caps still fit minisign's buffers. */
	tc = malloc(SIGN_TRUSTED_COMMENT_MAX + 1);
	uc = malloc(SIGN_COMMENT_MAX + 1);
	for (i = 0; i < SIGN_TRUSTED_COMMENT_MAX; i++)
		tc[i] = (char)('a' + i % 26);
	tc[i] = 0;
	memset(uc, 'u', SIGN_COMMENT_MAX);
	uc[SIGN_COMMENT_MAX] = 0;
	rba_buf_init(&b);
	ck_assert_int_eq(sign_file_sign(k, msg, strlen(msg), uc, tc, &b, &d), 0);
	spit(scratch_path("f.minisig"), b.p, b.len);
	ck_assert_int_eq(sh("minisign -Vm '%s' -p '%s'", scratch_path("f"), scratch_path("k.pub")), 0);

	/* A tampered file is refused by minisign too. */
	spit(scratch_path("f"), "evidencE\n", 9);
	ck_assert_int_eq(sh("minisign -Vm '%s' -p '%s'", scratch_path("f"), scratch_path("k.pub")), 1);

	/* minisign signs with our secret key; we verify. */
	spit(scratch_path("g"), msg, strlen(msg));
	ck_assert_int_eq(sh("minisign -S -s '%s' -m '%s' -t 'by minisign'", scratch_path("k.key"),
			    scratch_path("g")),
			 0);
	{
		struct sign_pubkey pub = load_pk(scratch_path("k.pub"));
		struct sign_check chk;
		uint8_t *s;
		size_t sn;

		s = slurp(scratch_path("g.minisig"), &sn);
		ck_assert_int_eq(verify_text(&pub, msg, strlen(msg), s, sn, &chk), 0);
		ck_assert_str_eq(chk.trusted_comment, "by minisign");
		free(s);
	}
	free(tc);
	free(uc);
	rba_buf_release(&b);
	sign_seckey_free(k);
}
END_TEST

/* Our passphrase-protected key, decrypted by minisign. */
START_TEST(minisign_reads_our_encrypted_key)
{
	static const char pass[] = "test-only pass phrase";
	struct rba_detail d;

	need_minisign();
	rba_detail_clear(&d);
	ck_assert_int_eq(sign_keygen_write(scratch_path("k"), pass, strlen(pass), NULL,
					   &kdf_fast, NULL, &d),
			 0);
	spit(scratch_path("f"), "x", 1);
	spit(scratch_path("pass"), "test-only pass phrase\n", strlen(pass) + 1);
	spit(scratch_path("bad"), "test-only pass phrasE\n", strlen(pass) + 1);
	ck_assert_int_eq(sh("minisign -S -s '%s' -m '%s' < '%s'", scratch_path("k.key"), scratch_path("f"),
			    scratch_path("bad")),
			 2);
	ck_assert_int_eq(sh("minisign -S -s '%s' -m '%s' < '%s'", scratch_path("k.key"), scratch_path("f"),
			    scratch_path("pass")),
			 0);
	ck_assert_int_eq(sh("minisign -Vm '%s' -p '%s'", scratch_path("f"), scratch_path("k.pub")), 0);
}
END_TEST

/* DSSE (common/dsse.h): PAE as the spec's test vector spells it; an
 * envelope signed and read back; every payload byte and every
 * signature byte changed is refused; another key, another type; the
 * parsing rules (keyid optional, unknown members, URL-safe base64). */
START_TEST(dsse_envelopes)
{
	static const char want[] = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";
	struct sign_seckey *k = NULL, *k2 = NULL;
	struct sign_pubkey pub, pub2;
	struct dsse_envelope e;
	struct rba_buf b, env;
	struct rba_detail d;
	char id[SIGN_KEYID_TEXT_LEN + 1];
	size_t which = 9, tried = 0;

	rba_buf_init(&b);
	dsse_pae(&b, "http://example.com/HelloWorld", "hello world", 11);
	ck_assert_uint_eq(b.len, sizeof(want) - 1);
	ck_assert(memcmp(b.p, want, b.len) == 0);
	rba_buf_release(&b);
	rba_buf_init(&b);
	dsse_pae(&b, "", "", 0);
	ck_assert_uint_eq(b.len, 12);
	ck_assert(memcmp(b.p, "DSSEv1 0  0 ", 12) == 0);
	rba_buf_release(&b);

	ck_assert_int_eq(sign_seckey_generate(&k), 0);
	ck_assert_int_eq(sign_seckey_generate(&k2), 0);
	sign_seckey_pubkey(k, &pub);
	sign_seckey_pubkey(k2, &pub2);
	sign_keyid_format(pub.keyid, id);
	rba_buf_init(&env);
	rba_detail_clear(&d);
	ck_assert_int_eq(dsse_envelope_sign(k, DSSE_TYPE_INTOTO, "{\"a\": 1}\n", 9,
					    &env, &d), 0);
	ck_assert(dsse_is_envelope(env.p, env.len));
	ck_assert(!dsse_is_envelope("{\"a\": 1}", 8));
	ck_assert_int_eq(dsse_envelope_parse(env.p, env.len, &e, &d), 0);
	ck_assert_str_eq(e.type, DSSE_TYPE_INTOTO);
	ck_assert_uint_eq(e.n, 9);
	ck_assert(memcmp(e.payload, "{\"a\": 1}\n", 9) == 0);
	ck_assert_uint_eq(e.nsigs, 1);
	ck_assert_str_eq(e.sigs[0].keyid, id);
	ck_assert_int_eq(dsse_envelope_verify(&e, pub.pk, id, &which, &tried), 0);
	ck_assert_uint_eq(which, 0);
	/* another key: its id named nowhere, nothing tried */
	ck_assert_int_eq(dsse_envelope_verify(&e, pub2.pk, "0000000000000000",
					      &which, &tried), RBA_E_BADSIG);
	ck_assert_uint_eq(tried, 0);
	/* another key under this id, or with no id: tried, refused */
	ck_assert_int_eq(dsse_envelope_verify(&e, pub2.pk, id, &which, &tried),
			 RBA_E_BADSIG);
	ck_assert_uint_eq(tried, 1);
	ck_assert_int_eq(dsse_envelope_verify(&e, pub2.pk, NULL, &which, &tried),
			 RBA_E_BADSIG);
	/* the type is signed too */
	e.type[0] = 'b';
	ck_assert_int_eq(dsse_envelope_verify(&e, pub.pk, id, &which, &tried),
			 RBA_E_BADSIG);
	e.type[0] = 'a';
	for (size_t i = 0; i < e.n; i++) {
		e.payload[i] ^= 1;
		ck_assert_int_eq(dsse_envelope_verify(&e, pub.pk, id, &which, &tried),
				 RBA_E_BADSIG);
		e.payload[i] ^= 1;
	}
	for (size_t i = 0; i < SIGN_SIG_LEN; i++) {
		e.sigs[0].sig[i] ^= 0x80;
		ck_assert_int_eq(dsse_envelope_verify(&e, pub.pk, id, &which, &tried),
				 RBA_E_BADSIG);
		e.sigs[0].sig[i] ^= 0x80;
	}
	ck_assert_int_eq(dsse_envelope_verify(&e, pub.pk, id, &which, &tried), 0);
	dsse_envelope_release(&e);
	dsse_envelope_release(&e);

	/* parsing rules: required members, base64 of either alphabet */
	{
		static const struct {
			const char *text;
			int err;
			const char *reason;
		} cases[] = {
			{ "[1]", RBA_E_SYNTAX, "not a JSON object" },
			{ "{\"payloadType\": 1}", RBA_E_SYNTAX, "payloadType" },
			{ "{\"payloadType\": \"t\", \"signatures\": []}", RBA_E_SYNTAX,
			  "payload is missing" },
			{ "{\"payloadType\": \"t\", \"payload\": \"\"}", RBA_E_SYNTAX,
			  "signatures is missing" },
			{ "{\"payloadType\": \"t\", \"payload\": \"\", \"signatures\": []}",
			  RBA_E_SYNTAX, "signatures is empty" },
			{ "{\"payloadType\": \"t\", \"payload\": \"\", \"signatures\": [{}]}",
			  RBA_E_SYNTAX, "signatures[0].sig" },
			{ "{\"payloadType\": \"t\", \"payload\": \"a\", \"signatures\": [{\"sig\": \"\"}]}",
			  RBA_E_SYNTAX, "payload is not base64" },
			{ "{\"payloadType\": \"t\", \"payload\": \"a+b_\", \"signatures\": [{\"sig\": \"\"}]}",
			  RBA_E_SYNTAX, "payload is not base64" },
			{ "{\"payloadType\": \"t\", \"payload\": \"\", \"signatures\": [{\"sig\": \"\", \"keyid\": 7}]}",
			  RBA_E_SYNTAX, "keyid is not a string" },
			{ "{\"payloadType\": \"t\", \"payload\": \"-_8\", \"x\": 0, \"signatures\": [{\"sig\": \"\"}]}",
			  0, NULL },
		};
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			rba_detail_clear(&d);
			ck_assert_int_eq(dsse_envelope_parse(cases[i].text, strlen(cases[i].text),
							     &e, &d), cases[i].err);
			if (cases[i].reason != NULL)
				ck_assert_msg(strstr(d.reason, cases[i].reason) != NULL,
					      "case %zu: %s", i, d.reason);
			dsse_envelope_release(&e);
		}
		ck_assert_int_eq(dsse_envelope_parse(cases[9].text, strlen(cases[9].text),
						     &e, &d), 0);
		ck_assert_uint_eq(e.n, 2);
		ck_assert(e.payload[0] == 0xfb && e.payload[1] == 0xff);
		ck_assert(!e.sigs[0].sig_ok);
		ck_assert_int_eq(dsse_envelope_verify(&e, pub.pk, NULL, &which, &tried),
				 RBA_E_BADSIG);
		dsse_envelope_release(&e);
	}
	rba_buf_release(&env);
	sign_seckey_free(k);
	sign_seckey_free(k2);
}
END_TEST

Suite *
suite_sign(void)
{
	Suite *s = suite_create("sign");
	TCase *tc = tcase_create("keys");
	TCase *sig = tcase_create("signatures");
	TCase *slow = tcase_create("interop");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, keyid_text_matches_minisign);
	tcase_add_test(tc, keygen_round_trip);
	tcase_add_test(tc, keygen_refuses_existing);
	tcase_add_test(tc, keygen_bad_arguments_write_nothing);
	tcase_add_test(tc, keygen_sweeps_stale_temporaries);
	tcase_add_test(tc, keygen_custom_comment);
	tcase_add_test(tc, malformed_public_keys);
	tcase_add_test(tc, damaged_secret_key);
	tcase_add_test(tc, key_kinds_swapped);
	tcase_add_test(tc, passphrase_files);
	tcase_add_test(tc, minisign_unencrypted_key);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(sig, setup, teardown);
	tcase_set_timeout(sig, 60);
	tcase_add_test(sig, sign_known_answer);
	tcase_add_test(sig, verify_minisign_signatures);
	tcase_add_test(sig, every_file_byte_change_detected);
	tcase_add_test(sig, every_signature_byte_change_detected);
	tcase_add_test(sig, noncanonical_base64_refused);
	tcase_add_test(sig, wrong_key);
	tcase_add_test(sig, malformed_signature_files);
	tcase_add_test(sig, sign_rejects_bad_comments);
	tcase_add_test(sig, dsse_envelopes);
	suite_add_tcase(s, sig);

	/* scrypt at minisign's cost takes seconds; the binary is forked. */
	tcase_add_checked_fixture(slow, setup, teardown);
	tcase_set_timeout(slow, 120);
	tcase_add_test(slow, passphrase_protected_key);
	tcase_add_test(slow, minisign_encrypted_key);
	tcase_add_test(slow, minisign_accepts_ours);
	tcase_add_test(slow, minisign_reads_our_encrypted_key);
	suite_add_tcase(s, slow);
	return s;
}
