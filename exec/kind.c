/* kind.c - the exec trainer's entry of the trainer kinds (kind.h). */
#include "exec/kind.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"

static const char *const exec_factors[] = {
	"threads", "timezone", "locale", "umask", "hostname", "time", "path",
	"environment-order", "aslr", "cpu-features", "file-order"};

/* An exec version's code is its pinned commit, not this tool. */
static const char *
exec_code_revision(const struct pins *p)
{
	return p->trainer.revision;
}

/* The user's code at the pinned commit, in the sandbox; its artifact
 * bytes moved to out, which has no ABI and no metrics. */
static int
exec_kind_train(const struct pins *p, uint32_t abi, const void *snap,
		size_t sn, const char *name,
		const struct rebuild_progress *progress,
		struct rebuild_result *out, struct exec_run *run,
		struct rba_detail *d)
{
	int err;

	(void)abi;
	(void)name;
	(void)progress;
	err = exec_train(p, snap, sn, p->train.seed, p->determinism.threads,
			 run, d);
	if (err)
		return err;
	out->artifact = run->artifact;
	out->artifact_len = run->artifact_len;
	out->digest = run->digest;
	run->artifact = NULL;
	out->abi = 0;
	out->report.final.val_acc = out->report.final.val_loss = NAN;
	return 0;
}

/* An exec trainer has no ABI of this tool's. */
static int
exec_abi_check(const char *version, uint32_t abi, struct rba_detail *d)
{
	(void)version;
	(void)abi;
	(void)d;
	return 0;
}

/* An exec version's artifact is opened once the snapshot, which gives
 * its columns and classes, is verified. */
static int
exec_stored_decode(const uint8_t *bytes, size_t n, const char *what,
		   struct artifact *out, struct rba_detail *d)
{
	(void)bytes;
	(void)n;
	(void)what;
	(void)out;
	(void)d;
	return 0;
}

/* An exec trainer's artifact is its own format, taken as bytes: its
 * audit rebuilds it and compares the digests. */
static int
exec_given_abi(const uint8_t *bytes, size_t n, uint32_t *abi,
	       struct rba_detail *d)
{
	(void)bytes;
	(void)n;
	(void)d;
	*abi = 0;
	return 0;
}

static void
stream_json(struct rba_buf *b, const char *key, uint64_t bytes,
	    const struct rba_digest *dg, const char *tail, int comma)
{
	rba_json_put_key(b, key);
	rba_buf_put_u8(b, '{');
	rba_json_kv_u64(b, "bytes", bytes, 1);
	rba_json_kv_digest(b, "sha256", dg, 1, 1);
	rba_json_kv_str(b, "tail", tail, 0);
	rba_buf_put_u8(b, '}');
	if (comma)
		rba_buf_put_u8(b, ',');
}

/* The run record of an exec training, run-exec/v1 (rebuild/runrec.h). */
static void
exec_run_record(const struct pins *p, const struct rebuild_result *res,
		const struct exec_run *run, const char *env_hex,
		double wall_seconds, struct rba_buf *b)
{
	struct rba_digest cfg;
	struct rba_json_value m;
	int has_m = 0;

	(void)res;
	(void)wall_seconds;

	policy_pins_config_hash(p, &cfg);
	if (run->metrics != NULL &&
	    rba_json_parse(run->metrics, run->metrics_len, &m, NULL) == 0) {
		has_m = m.type == RBA_JSON_OBJECT;
		rba_json_release(&m);
	}
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "schema", EXEC_RUNREC_SCHEMA, 1);
	rba_json_kv_str(b, "version", p->version, 1);
	rba_json_kv_digest(b, "config_hash", &cfg, 1, 1);
	rba_json_kv_digest(b, "snapshot", &p->snapshot, 1, 1);
	rba_json_kv_str(b, "environment", env_hex, 1);
	rba_json_put_key(b, "trainer");
	rba_buf_put_u8(b, '{');
	rba_json_kv_str(b, "kind", "exec", 1);
	rba_json_kv_str(b, "repository", p->trainer.repository, 1);
	rba_json_kv_str(b, "commit", run->commit, 1);
	rba_json_kv_str(b, "tree", run->tree, 1);
	rba_json_put_key(b, "command");
	rba_buf_put(b, run->argv_text, strlen(run->argv_text));
	rba_buf_put_u8(b, ',');
	rba_json_kv_str(b, "format",
			p->trainer.format == PINS_FORMAT_XGBOOST_JSON ? "xgboost-json"
								      : "opaque",
			1);
	rba_json_kv_str(b, "sandbox", sandbox_name(), 0);
	rba_buf_put(b, "},", 2);
	rba_json_kv_u64(b, "seed", p->train.seed, 1);
	rba_json_kv_u64(b, "threads", p->determinism.threads, 1);
	rba_json_kv_digest(b, "artifact", &run->digest, 1, 1);
	rba_json_kv_u64(b, "exit_status", (uint64_t)run->sb.status, 1);
	rba_json_kv_num(b, "seconds", run->sb.seconds, 1);
	stream_json(b, "stdout", run->sb.out_bytes, &run->sb.out_digest,
		    run->sb.out_tail, 1);
	stream_json(b, "stderr", run->sb.err_bytes, &run->sb.err_digest,
		    run->sb.err_tail, 1);
	rba_json_put_key(b, "metrics");
	if (has_m)
		rba_buf_put(b, run->metrics, run->metrics_len);
	else
		rba_buf_put(b, "null", 4);
	rba_buf_put_u8(b, ',');
	rba_json_kv_num(b, "wall_seconds", run->wall_seconds, 0);
	rba_buf_put(b, "}\n", 2);
}

static void
exec_show(const struct pins *p, char *line, size_t n)
{
	snprintf(line, n, "trainer       exec: %s at commit %s (%s)",
		 p->trainer.repository, p->trainer.revision,
		 p->trainer.format == PINS_FORMAT_XGBOOST_JSON ? "xgboost-json"
							      : "opaque");
}

const struct trainer_kind exec_trainer_kind = {
	.name = "exec",
	.record_trainer = "exec",
	.sandboxed = 1,
	.max_jobs = 1, /* one sandboxed command at a time */
	.factors = exec_factors,
	.nfactors = sizeof(exec_factors) / sizeof(exec_factors[0]),
	.factors_text = "threads, timezone, locale, umask, hostname, time, "
			"path, environment-order, aslr, cpu-features, file-order",
	.code_revision = exec_code_revision,
	.envrec = exec_envrec,
	.train = exec_kind_train,
	.abi_check = exec_abi_check,
	.stored_decode = exec_stored_decode,
	.opens_with_snapshot = 1,
	.stored_open = exec_artifact_open,
	.artifact_open = exec_artifact_open,
	.given_abi = exec_given_abi,
	.run_record = exec_run_record,
	.show = exec_show,
};
