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

/*
 * run-exec/v1 was first written with "," and no space before five of
 * its members (format, seed, stderr, metrics, wall_seconds), and its
 * bytes are kept.  common/json.h's writer puts ", " between members and
 * has no other separator, so each of these is written here: the comma
 * and the key, then its value by a writer of its own (own), as an
 * outermost value.  The record's writer goes on after it with the
 * member that follows.
 */
static struct rba_json_w *
tight_member(struct rba_json_w *own, struct rba_buf *b, const char *key)
{
	rba_buf_put_u8(b, ',');
	rba_json_put_key(b, key);
	rba_json_w_init(own, b);
	return own;
}

static void
stream_json(struct rba_json_w *w, const char *key, uint64_t bytes,
	    const struct rba_digest *dg, const char *tail)
{
	rba_json_w_open(w, key, '{');
	rba_json_w_u64(w, "bytes", bytes);
	rba_json_w_digest(w, "sha256", dg, 1);
	rba_json_w_str(w, "tail", tail);
	rba_json_w_close(w, '}');
}

/* The run record of an exec training, run-exec/v1 (rebuild/runrec.h). */
static void
exec_run_record(const struct pins *p, const struct rebuild_result *res,
		const struct exec_run *run, const char *env_hex,
		double wall_seconds, struct rba_buf *b)
{
	struct rba_json_w w, t;
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
	rba_json_w_init(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "schema", EXEC_RUNREC_SCHEMA);
	rba_json_w_str(&w, "version", p->version);
	rba_json_w_digest(&w, "config_hash", &cfg, 1);
	rba_json_w_digest(&w, "snapshot", &p->snapshot, 1);
	rba_json_w_str(&w, "environment", env_hex);
	rba_json_w_open(&w, "trainer", '{');
	rba_json_w_str(&w, "kind", "exec");
	rba_json_w_str(&w, "repository", p->trainer.repository);
	rba_json_w_str(&w, "commit", run->commit);
	rba_json_w_str(&w, "tree", run->tree);
	/* exec.c made the command's array (its own layout, "," between
	 * items) */
	rba_json_w_raw(&w, "command", run->argv_text, strlen(run->argv_text));
	rba_json_w_str(tight_member(&t, b, "format"), NULL,
		       p->trainer.format == PINS_FORMAT_XGBOOST_JSON
			       ? "xgboost-json" : "opaque");
	rba_json_w_str(&w, "sandbox", sandbox_name());
	rba_json_w_close(&w, '}');
	rba_json_w_u64(tight_member(&t, b, "seed"), NULL, p->train.seed);
	rba_json_w_u64(&w, "threads", p->determinism.threads);
	rba_json_w_digest(&w, "artifact", &run->digest, 1);
	rba_json_w_u64(&w, "exit_status", (uint64_t)run->sb.status);
	rba_json_w_num(&w, "seconds", run->sb.seconds);
	stream_json(&w, "stdout", run->sb.out_bytes, &run->sb.out_digest,
		    run->sb.out_tail);
	stream_json(tight_member(&t, b, "stderr"), NULL, run->sb.err_bytes,
		    &run->sb.err_digest, run->sb.err_tail);
	/* the trainer's own metrics object, checked above, as it wrote it */
	if (has_m)
		rba_json_w_raw(tight_member(&t, b, "metrics"), NULL,
			       run->metrics, run->metrics_len);
	else
		rba_json_w_str(tight_member(&t, b, "metrics"), NULL, NULL);
	rba_json_w_num(tight_member(&t, b, "wall_seconds"), NULL,
		       run->wall_seconds);
	rba_json_w_close(&w, '}');
	rba_buf_put_u8(b, '\n');
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
