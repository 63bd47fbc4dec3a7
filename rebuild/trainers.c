/* trainers.c - the builtin trainer's entry of the trainer kinds
 * (exec/kind.h; rebuild.h declares it and the lookup). */
#include "rebuild/rebuild.h"

#include <stdio.h>
#include <string.h>

#include "model/xgboost.h"
#include "train/envrec.h"
#include "rebuild/runrec.h"

static const char *const builtin_factors[] = {"threads", "isa", "compiler"};

/* A builtin version's code is this build. */
static const char *
builtin_code_revision(const struct pins *p)
{
	(void)p;
	return envrec_code_revision();
}

/* This machine's record (envrec_capture); it sets no detail. */
static int
builtin_envrec(const struct pins *p, struct rba_buf *out, struct rba_detail *d)
{
	(void)d;
	return envrec_capture(p->determinism.mode, p->determinism.threads, out);
}

static int
builtin_train(const struct pins *p, uint32_t abi, const void *snap, size_t sn,
	      const char *name, const struct rebuild_progress *progress,
	      struct rebuild_result *out, struct exec_run *run,
	      struct rba_detail *d)
{
	(void)run;
	return rebuild_from_snapshot(p, abi, snap, sn, name, progress, out, d);
}

static int
builtin_abi_check(const char *version, uint32_t abi, struct rba_detail *d)
{
	if (rebuild_abi_supported(abi))
		return 0;
	return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
			"version '%s' is pinned to trainer ABI %u, which "
			"this build cannot run", version, abi);
}

/* The stored artifact: this tool's format, or an XGBoost JSON model. */
static int
builtin_stored_decode(const uint8_t *bytes, size_t n, const char *what,
		      struct artifact *out, struct rba_detail *d)
{
	return xgboost_artifact_decode(bytes, n, what, out, d);
}

/* Decoded before the snapshot was read: nothing left to open. */
static int
builtin_stored_open(const struct pins *p, const void *snap, size_t sn,
		    const uint8_t *bytes, size_t n, struct artifact *out,
		    struct rba_detail *d)
{
	(void)p;
	(void)snap;
	(void)sn;
	(void)bytes;
	(void)n;
	(void)out;
	(void)d;
	return 0;
}

static int
builtin_artifact_open(const struct pins *p, const void *snap, size_t sn,
		      const uint8_t *bytes, size_t n, struct artifact *out,
		      struct rba_detail *d)
{
	(void)p;
	(void)snap;
	(void)sn;
	return artifact_decode(bytes, n, out, d);
}

static int
builtin_given_abi(const uint8_t *bytes, size_t n, uint32_t *abi,
		  struct rba_detail *d)
{
	struct artifact decoded;
	int err;

	memset(&decoded, 0, sizeof(decoded));
	if ((err = artifact_decode(bytes, n, &decoded, d)) != 0)
		return err;
	*abi = decoded.abi;
	artifact_release(&decoded);
	return 0;
}

/* The run record of rebuild_runrec_render (runrec.h); no run. */
static void
builtin_run_record(const struct pins *p, const struct rebuild_result *res,
		   const struct exec_run *run, const char *env_hex,
		   double wall_seconds, struct rba_buf *out)
{
	(void)run;
	rebuild_runrec_render(p, res, env_hex, wall_seconds, out);
}

static void
builtin_show(const struct pins *p, char *line, size_t n)
{
	snprintf(line, n, "trainer ABI   %u", (unsigned)p->trainer_abi);
}

const struct trainer_kind rebuild_builtin_kind = {
	.name = "builtin",
	.record_trainer = NULL,
	.sandboxed = 0,
	.max_jobs = 0,
	.factors = builtin_factors,
	.nfactors = sizeof(builtin_factors) / sizeof(builtin_factors[0]),
	.factors_text = "threads, isa, compiler",
	.code_revision = builtin_code_revision,
	.envrec = builtin_envrec,
	.train = builtin_train,
	.abi_check = builtin_abi_check,
	.stored_decode = builtin_stored_decode,
	.opens_with_snapshot = 0,
	.stored_open = builtin_stored_open,
	.artifact_open = builtin_artifact_open,
	.given_abi = builtin_given_abi,
	.run_record = builtin_run_record,
	.show = builtin_show,
};
