/* cmd_init.c - init: create a store. */
#include <stdio.h>

#include "cli/commands.h"
#include "store/store.h"

int
cmd_init(struct cli_ctx *ctx, int argc, char **argv)
{
	struct rba_detail d;
	int err;

	if (argc != 1)
		return cli_usage(ctx, "no arguments expected");
	rba_detail_clear(&d);
	err = store_init(ctx->store_path, &d);
	if (err)
		return cli_fail("cannot create store", ctx->store_path, err, &d);
	err = cli_store_open(ctx, 1);
	if (err)
		return err;
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "store", ctx->store_path);
		rba_json_w_str(&w, "id", store_id_hex(ctx->store));
		rba_json_w_u64(&w, "schema", STORE_SCHEMA);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	} else if (!ctx->quiet) {
		printf("created store '%s' (id %s)\n", ctx->store_path,
		       store_id_hex(ctx->store));
	}
	return 0;
}
