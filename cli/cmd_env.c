/*
 * cmd_env.c - env: print the current environment record and its digest.
 */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "policy/policy.h"
#include "train/envrec.h"

int
cmd_env(struct cli_ctx *ctx, int argc, char **argv)
{
	enum pins_det_mode mode = PINS_DET_STRICT;
	uint64_t threads = 1;
	const char *pins_path = NULL, *v;
	struct rba_buf b, j;
	struct rba_json_w w;
	struct rba_digest dg;
	struct envrec rec;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int r, err, mode_set = 0, threads_set = 0;

	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--mode", &v)) != 0) {
			if (r < 0 || (strcmp(v, "strict") && strcmp(v, "fast")))
				return cli_usage(ctx, "--mode is strict or fast");
			mode = strcmp(v, "fast") == 0 ? PINS_DET_FAST
						      : PINS_DET_STRICT;
			mode_set = 1;
		} else if ((r = cli_opt_value(argc, argv, &i, "--threads", &v)) != 0) {
			if (r < 0 || cli_parse_u64(v, 64, &threads) || threads < 1)
				return cli_usage(ctx, "--threads is 1 to 64");
			threads_set = 1;
		} else if ((r = cli_opt_value(argc, argv, &i, "--pins", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--pins needs a file");
			pins_path = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else {
			return cli_usage(ctx, "unexpected argument '%s'", argv[i]);
		}
	}
	if (pins_path != NULL) {
		struct pins *p = NULL;
		rba_detail_clear(&d);
		if ((err = policy_pins_load(pins_path, &p, &d)) != 0)
			return cli_fail("invalid pins", pins_path, err, &d);
		if (!mode_set)
			mode = p->determinism.mode;
		if (!threads_set)
			threads = p->determinism.threads;
		policy_pins_free(p);
	}
	rba_buf_init(&b);
	if (envrec_capture(mode, (unsigned)threads, &b) != 0) {
		rba_buf_release(&b);
		return cli_fail("cannot capture", "environment", RBA_E_NOMEM, NULL);
	}
	envrec_digest((const char *)b.p, b.len, &dg);
	rba_digest_format(&dg, hex);
	if (!ctx->json) {
		fwrite(b.p, 1, b.len, stdout);
		printf("\n%s\n", hex);
		rba_buf_release(&b);
		return 0;
	}
	rba_detail_clear(&d);
	err = envrec_parse((const char *)b.p, b.len, &rec, &d);
	if (err != 0) {
		rba_buf_release(&b);
		return cli_fail("cannot capture", "environment", err, &d);
	}
	cli_json_begin(&w, &j);
	rba_json_w_str(&w, "digest", hex);
	rba_json_w_open(&w, "record", '{');
	for (size_t i = 0; i < rec.n; i++)
		rba_json_w_str(&w, rec.f[i].key, rec.f[i].value);
	rba_json_w_close(&w, '}');
	rba_json_w_str(&w, "text", rba_buf_cstr(&b));
	rba_json_w_close(&w, '}');
	envrec_release(&rec);
	rba_buf_release(&b);
	return cli_json_print(&j);
}
