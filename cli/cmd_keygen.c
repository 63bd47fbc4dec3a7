/*
 * cmd_keygen.c - keygen: a minisign-compatible signing key pair
 * (common/sign.h).
 *
 *   keygen -o PREFIX [--passphrase-file FILE] [--comment TEXT]
 *   keygen --check KEY PUB [--passphrase-file FILE]
 */
#include <stdio.h>
#include <string.h>

#include "common/sign.h"
#include "cli/commands.h"
#include "common/buf.h"

/* keygen --check under --json: {"match", "key_id", "public_key",
 * "public_key_id"}. */
static int
keygen_check_json(int match, const char *id, const char *pubpath,
		  const char *pid)
{
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_bool(&w, "match", match);
	rba_json_w_str(&w, "key_id", id);
	rba_json_w_str(&w, "public_key", pubpath);
	rba_json_w_str(&w, "public_key_id", pid);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/*
 * keygen --check KEY PUB: signs a probe with the secret key and verifies
 * it with the public one, as a worker's record is signed and imported.
 * 0 the pair matches, 1 it does not, 2 a key cannot be read.  Under
 * --json the answer is a JSON document either way (the diagnostic of a
 * mismatch still goes to stderr).
 */
static int
keygen_check(struct cli_ctx *ctx, const char *keypath, const char *pubpath,
	     const char *passfile)
{
	static const char probe[] = "rebuild-audit keygen --check probe\n";
	struct sign_seckey *key = NULL;
	struct sign_pubkey pub, mine;
	struct sign_check chk;
	struct rba_detail d;
	struct rba_buf sig;
	char id[SIGN_KEYID_TEXT_LEN + 1], pid[SIGN_KEYID_TEXT_LEN + 1];
	int err;

	rba_detail_clear(&d);
	if ((err = sign_pubkey_load(pubpath, &pub, &d)) != 0)
		return cli_fail("cannot read public key", pubpath, err, &d);
	if ((err = cli_seckey_load(keypath, passfile, &key)) != 0)
		return err;
	rba_buf_init(&sig);
	rba_detail_clear(&d);
	err = sign_file_sign(key, probe, sizeof(probe) - 1, NULL,
			     "rebuild-audit key check", &sig, &d);
	sign_seckey_pubkey(key, &mine);
	sign_seckey_free(key);
	if (err != 0) {
		rba_buf_release(&sig);
		return cli_fail("cannot sign with", keypath, err, &d);
	}
	memset(&chk, 0, sizeof(chk));
	rba_detail_clear(&d);
	err = sign_file_verify(&pub, probe, sizeof(probe) - 1, sig.p, sig.len,
			       &chk, &d);
	rba_buf_release(&sig);
	sign_keyid_format(mine.keyid, id);
	sign_keyid_format(pub.keyid, pid);
	if (err == RBA_E_BADSIG) {
		if (ctx->json && keygen_check_json(0, id, pubpath, pid) != 0)
			return 2;
		fprintf(stderr, "rebuild-audit: keys do not match '%s': its key id "
			"is %s, the public key '%s' is %s: records it signs would "
			"be refused\n", keypath, id, pubpath, pid);
		return 1;
	}
	if (err != 0)
		return cli_fail("cannot verify with", pubpath, err, &d);
	if (ctx->json)
		return keygen_check_json(1, id, pubpath, pid);
	else if (!ctx->quiet)
		printf("key pair matches: key id %s signs what '%s' verifies\n", id,
		       pubpath);
	return 0;
}

int
cmd_keygen(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *prefix = NULL, *passfile = NULL, *comment = NULL;
	const char *check = NULL, *checkpub = NULL;
	char id[SIGN_KEYID_TEXT_LEN + 1];
	struct sign_pubkey pub;
	struct rba_detail d;
	char *pass = NULL;
	size_t passlen = 0;
	int i, r, err;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((r = cli_opt_value(argc, argv, &i, "-o", &prefix)) != 0 ||
		    (r = cli_opt_value(argc, argv, &i, "--passphrase-file", &passfile)) != 0 ||
		    (r = cli_opt_value(argc, argv, &i, "--comment", &comment)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", a);
			continue;
		}
		if (strcmp(a, "--check") == 0) {
			if (i + 2 >= argc)
				return cli_usage(ctx, "--check needs KEY and PUB");
			check = argv[++i];
			checkpub = argv[++i];
			continue;
		}
		if (a[0] == '-')
			return cli_usage(ctx, "unknown option '%s'", a);
		return cli_usage(ctx, "unexpected argument '%s'", a);
	}
	if (check != NULL) {
		if (prefix != NULL || comment != NULL)
			return cli_usage(ctx, "--check takes no -o or --comment");
		return keygen_check(ctx, check, checkpub, passfile);
	}
	if (prefix == NULL || prefix[0] == '\0')
		return cli_usage(ctx, "-o PREFIX is required");

	rba_detail_clear(&d);
	if (passfile != NULL) {
		err = sign_passphrase_read(passfile, &pass, &passlen, &d);
		if (err != 0)
			return cli_fail("cannot read passphrase", passfile, err, &d);
	}
	err = sign_keygen_write(prefix, pass, passlen, comment, NULL, &pub, &d);
	sign_passphrase_free(pass);
	if (err != 0)
		return cli_fail("keygen failed", d.file[0] ? d.file : prefix, err, &d);

	sign_keyid_format(pub.keyid, id);
	if (ctx->json) {
		char path[4200];
		struct rba_buf b;
		struct rba_json_w w;

		cli_json_begin(&w, &b);
		snprintf(path, sizeof(path), "%s.pub", prefix);
		rba_json_w_str(&w, "public_key", path);
		snprintf(path, sizeof(path), "%s.key", prefix);
		rba_json_w_str(&w, "secret_key", path);
		rba_json_w_str(&w, "key_id", id);
		rba_json_w_bool(&w, "passphrase_protected", passfile != NULL);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	} else if (!ctx->quiet) {
		printf("public key: %s.pub\n", prefix);
		printf("secret key: %s.key (%s; keep it secret)\n", prefix,
		       passfile != NULL ? "passphrase-protected" : "unencrypted");
		printf("key id: %s\n", id);
	}
	return 0;
}
