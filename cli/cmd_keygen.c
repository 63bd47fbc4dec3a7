/*
 * cmd_keygen.c - keygen: a minisign-compatible signing key pair
 * (common/sign.h).
 *
 *   keygen -o PREFIX [--passphrase-file FILE] [--comment TEXT]
 */
#include <stdio.h>

#include "common/sign.h"
#include "cli/commands.h"

int
cmd_keygen(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *prefix = NULL, *passfile = NULL, *comment = NULL;
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
		if (a[0] == '-')
			return cli_usage(ctx, "unknown option '%s'", a);
		return cli_usage(ctx, "unexpected argument '%s'", a);
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

		snprintf(path, sizeof(path), "%s.pub", prefix);
		fputs("{\"public_key\": ", stdout);
		rba_json_fput_str(stdout, path);
		snprintf(path, sizeof(path), "%s.key", prefix);
		fputs(", \"secret_key\": ", stdout);
		rba_json_fput_str(stdout, path);
		printf(", \"key_id\": \"%s\", \"passphrase_protected\": %s}\n", id,
		       passfile != NULL ? "true" : "false");
	} else if (!ctx->quiet) {
		printf("public key: %s.pub\n", prefix);
		printf("secret key: %s.key (%s; keep it secret)\n", prefix,
		       passfile != NULL ? "passphrase-protected" : "unencrypted");
		printf("key id: %s\n", id);
	}
	return 0;
}
