/*
 * cmd_check.c - rebuild-audit check FILE: validate a pins or policy file,
 * print its canonical form and, for pins, the config hash; for a policy,
 * the digest of its exact bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "policy/policy.h"

static int
print_report(struct cli_ctx *ctx, const char *path, const char *kind,
	     const char *canonical, const char *hash_key,
	     const struct rba_digest *hash)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(hash, hex);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "file", path);
		rba_json_w_str(&w, "kind", kind);
		rba_json_w_str(&w, hash_key, hex);
		rba_json_w_str(&w, "canonical", canonical);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	}
	printf("kind: %s\n%s%s: %s\n", kind, canonical, hash_key, hex);
	return 0;
}

static int
check_pins(struct cli_ctx *ctx, const char *path, const uint8_t *text,
	   size_t n)
{
	struct rba_detail d;
	struct rba_digest config;
	struct rba_buf canon;
	struct pins *p;
	int err;

	err = policy_pins_parse(text, n, path, &p, &d);
	if (err)
		return cli_fail("invalid pins", path, err, &d);
	rba_buf_init(&canon);
	policy_pins_canonical(p, &canon);
	policy_pins_config_hash(p, &config);
	policy_pins_free(p);
	if ((err = rba_buf_status(&canon)) != 0) {
		rba_buf_release(&canon);
		return cli_fail("cannot check", path, err, NULL);
	}
	err = print_report(ctx, path, "pins", rba_buf_cstr(&canon), "config",
			   &config);
	rba_buf_release(&canon);
	return err;
}

static int
check_policy(struct cli_ctx *ctx, const char *path, const uint8_t *text,
	     size_t n)
{
	struct rba_detail d;
	struct rba_buf canon;
	struct policy *p;
	int err;

	err = policy_parse(text, n, path, &p, &d);
	if (err)
		return cli_fail("invalid policy", path, err, &d);
	rba_buf_init(&canon);
	policy_canonical(p, &canon);
	if ((err = rba_buf_status(&canon)) != 0) {
		policy_free(p);
		rba_buf_release(&canon);
		return cli_fail("cannot check", path, err, NULL);
	}
	err = print_report(ctx, path, "policy", rba_buf_cstr(&canon), "digest",
			   &p->digest);
	policy_free(p);
	rba_buf_release(&canon);
	return err;
}

int
cmd_check(struct cli_ctx *ctx, int argc, char **argv)
{
	enum policy_file_kind kind;
	struct rba_detail d;
	const char *path;
	uint8_t *text;
	size_t n;
	int err, status, i = 1;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (argc - i != 1)
		return cli_usage(ctx, "expected one FILE");
	path = argv[i];
	if (path[0] == '-' && path[1] != 0)
		return cli_usage(ctx, "unknown option %s", path);
	rba_detail_clear(&d);
	if ((err = policy_file_read(path, &text, &n, &d)) != 0)
		return cli_fail("cannot read", path, err, NULL);
	if ((err = policy_file_kind(text, n, &kind)) != 0) {
		free(text);
		return cli_fail("cannot check", path, err, NULL);
	}
	switch (kind) {
	case POLICY_KIND_PINS:
		status = check_pins(ctx, path, text, n);
		break;
	case POLICY_KIND_POLICY:
		status = check_policy(ctx, path, text, n);
		break;
	default:
		/* Not YAML at all says where; YAML of another kind says what. */
		err = policy_yaml_check(text, n, path, &d);
		if (err == 0) {
			err = RBA_E_SCHEMA;
			rba_detail_clear(&d);
			snprintf(d.reason, sizeof(d.reason),
				 "unknown schema (expected " PINS_SCHEMA
				 " or " POLICY_SCHEMA ")");
		}
		status = cli_fail("cannot check", path, err, &d);
		break;
	}
	free(text);
	return status;
}
