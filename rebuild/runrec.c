/*
 * runrec.c - the run record (runrec.h).  Moved from cli/cmd_train.c,
 * whose %.17g numbers became common/json.h's shortest round-trip form.
 */
#include "rebuild/runrec.h"

#include <string.h>

#include "common/digest.h"
#include "common/fileio.h"
#include "common/json.h"
#include "rebuild/envrec.h"

/* Literal layout text (rba_buf_put_str would length-prefix it). */
static void
put_text(struct rba_buf *b, const char *s)
{
	rba_buf_put(b, s, strlen(s));
}

/* The four metrics of an epoch, in one line's object. */
static void
put_epoch(struct rba_buf *b, const struct rebuild_epoch *ep)
{
	rba_json_kv_num(b, "train_loss", ep->train_loss, 1);
	rba_json_kv_num(b, "val_loss", ep->val_loss, 1);
	rba_json_kv_num(b, "val_acc", ep->val_acc, 1);
	rba_json_kv_num(b, "val_auc", ep->val_auc, 0);
}

void
rebuild_runrec_render(const struct pins *p, const struct rebuild_result *res,
		      const char *env_hex, double wall_seconds,
		      struct rba_buf *b)
{
	const struct rebuild_report *r = &res->report;
	struct rba_digest cfg;
	char cfg_hex[RBA_DIGEST_TEXT_LEN + 1], snap_hex[RBA_DIGEST_TEXT_LEN + 1];
	char art_hex[RBA_DIGEST_TEXT_LEN + 1];

	policy_pins_config_hash(p, &cfg);
	rba_digest_format(&cfg, cfg_hex);
	rba_digest_format(&p->snapshot, snap_hex);
	rba_digest_format(&res->digest, art_hex);

	put_text(b, "{\n  ");
	rba_json_kv_str(b, "schema", "rebuild-audit/run/v1", 0);
	put_text(b, ",\n  ");
	rba_json_kv_str(b, "version", p->version, 0);
	put_text(b, ",\n  ");
	rba_json_kv_str(b, "config_hash", cfg_hex, 0);
	put_text(b, ",\n  ");
	rba_json_kv_str(b, "snapshot", snap_hex, 0);
	put_text(b, ",\n  ");
	rba_json_kv_str(b, "environment", env_hex, 0);
	put_text(b, ",\n  ");
	rba_json_kv_str(b, "code_revision", envrec_code_revision(), 0);
	put_text(b, ",\n  ");
	rba_json_kv_u64(b, "trainer_abi", res->abi, 0);
	put_text(b, ",\n  ");
	rba_json_kv_u64(b, "seed", p->train.seed, 0);
	put_text(b, ",\n  ");
	rba_json_kv_str(b, "mode", p->determinism.mode == PINS_DET_FAST ? "fast"
								     : "strict",
			0);
	put_text(b, ",\n  ");
	rba_json_kv_u64(b, "threads", p->determinism.threads, 0);
	put_text(b, ",\n  ");
	rba_json_kv_str(b, "artifact", art_hex, 0);
	put_text(b, ",\n  ");
	rba_json_put_key(b, "examples");
	rba_buf_put_u8(b, '{');
	rba_json_kv_u64(b, "train", res->ntrain, 1);
	rba_json_kv_u64(b, "validation", res->nval, 1);
	rba_json_kv_u64(b, "features", res->nfeatures, 1);
	rba_json_kv_u64(b, "classes", res->nclasses, 0);
	put_text(b, "},\n  ");
	rba_json_put_key(b, "curves");
	rba_buf_put_u8(b, '[');
	for (uint32_t e = 0; e < r->epochs; e++) {
		put_text(b, e ? ",\n    {" : "\n    {");
		rba_json_kv_u64(b, "epoch", e + 1, 1);
		put_epoch(b, &r->curve[e]);
		rba_buf_put_u8(b, '}');
	}
	put_text(b, "\n  ],\n  ");
	rba_json_put_key(b, "final");
	rba_buf_put_u8(b, '{');
	put_epoch(b, &r->final);
	put_text(b, "},\n  ");
	rba_json_kv_num(b, "examples_per_second", r->examples_per_second, 0);
	put_text(b, ",\n  ");
	rba_json_kv_num(b, "train_seconds", r->train_seconds, 0);
	put_text(b, ",\n  ");
	rba_json_kv_num(b, "wall_seconds", wall_seconds, 0);
	put_text(b, "\n}\n");
}

int
rebuild_runrec_write(const char *path, const struct pins *p,
		     const struct rebuild_result *res, const char *env_hex,
		     double wall_seconds)
{
	struct rba_buf b;
	int err;

	rba_buf_init(&b);
	rebuild_runrec_render(p, res, env_hex, wall_seconds, &b);
	if ((err = rba_buf_status(&b)) == 0)
		err = rba_file_write_atomic(path, b.p, b.len, 0644);
	rba_buf_release(&b);
	return err;
}
