/*
 * exec.h - exec trainers and scorers (rebuild-audit-pins(5), TRAINER):
 * the user's own code at a pinned git commit, run in the sandbox of
 * exec/sandbox.h, and the environment record of such a run.
 *
 * A run: the commit is checked (a revision the repository lacks is
 * RBA_E_NOTFOUND at trainer.revision), its tree id read and the commit
 * exported with `git archive` into a fresh work directory
 * (sandbox_dir_make), the inputs written read-only beside it, the
 * command run with its placeholders filled, the artifact read back and
 * its SHA-256 taken; the work directory is removed on every path.
 *
 * Inside the sandbox:
 *   /code                  the commit's tree, read-only, the working directory
 *   /in/snapshot.csv       {snapshot}: the verified snapshot bytes
 *   /in/params.json        {params}: policy_pins_params_json
 *   /out/<artifact>        {artifact}: what the trainer must write
 *   /out/metrics.json      {metrics}: optional metrics (a JSON object)
 *   {seed}, {threads}      train.seed (or a sweep's), determinism.threads
 * and for the score command:
 *   /in/<artifact>         {artifact}: the artifact, read-only
 *   /in/cases.csv          {cases}: the cases (header, then one row each)
 *   /out/scores.txt        {scores}: one line per case, in order
 *
 * Every failure to run is an error with one line, never a verdict:
 * RBA_E_UNSUPPORTED (no sandbox), RBA_E_NOTFOUND (the commit, or the
 * command), RBA_E_IO (a non-zero exit with the last line of stderr, a
 * signal, no artifact written), RBA_E_LIMIT (a limit exceeded).
 */
#ifndef RBA_EXEC_H
#define RBA_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "model/artifact.h"
#include "exec/sandbox.h"

#define EXEC_MAX_METRICS (1u << 20)
/* The schema of an exec training's run record (rebuild/runrec.h). */
#define EXEC_RUNREC_SCHEMA "rebuild-audit/run-exec/v1"

/* What an exec training did. */
struct exec_run {
	char commit[41], tree[41];
	uint8_t *artifact; /* the file's bytes, malloc'd */
	size_t artifact_len;
	struct rba_digest digest;
	char *argv_text;   /* the command as run, JSON array text */
	char *metrics;	   /* /out/metrics.json, or NULL */
	size_t metrics_len;
	struct sandbox_result sb;
	double wall_seconds;
};

void exec_run_release(struct exec_run *r);

/*
 * One controlled change of a training run (audit/vary.h); zero fields
 * change nothing.  threads: {threads} and every declared thread
 * variable (OMP_NUM_THREADS, ...); tz, lang: TZ, and LANG with LC_ALL;
 * hostname; umask 0002; address space randomization off; the
 * environment in reverse order; /code and /in copied with every
 * directory's entries created in the reverse of their listed order;
 * faketime: a libfaketime to preload, with FAKETIME faketime_offset;
 * root: the code, inputs and outputs at ROOT/code, ROOT/in, ROOT/out
 * (the placeholders and the working directory with them); var_name:
 * a variable of environment.pass set to var_value.
 */
struct exec_vary {
	uint32_t threads;
	const char *tz, *lang, *hostname;
	int umask_group_write, no_aslr, reverse_env, reorder_files;
	const char *faketime, *faketime_offset;
	const char *root;
	const char *var_name, *var_value;
};

/* The code, input and output directories in the sandbox under v. */
void exec_vary_paths(const struct exec_vary *v, char *code, char *in,
		     char *out, size_t n);

/*
 * Trains pins p (an exec trainer) from the snapshot bytes sn at seed
 * with threads (0: the pins' train.seed and determinism.threads is the
 * caller's to pass).  Errors above; d names the version's commit.
 */
int exec_train(const struct pins *p, const void *snap, size_t sn,
	       uint64_t seed, uint32_t threads, struct exec_run *out,
	       struct rba_detail *d);
/* exec_train under the variation v (NULL: none). */
int exec_train_varied(const struct pins *p, const void *snap, size_t sn,
		      uint64_t seed, uint32_t threads, const struct exec_vary *v,
		      struct exec_run *out, struct rba_detail *d);

/*
 * Scores ncases cases (csv: their header and rows, n bytes) with the
 * artifact through trainer.score.command.  probs gets ncases x nclasses
 * floats: with positive < nclasses == 2 each line holds the positive
 * class's probability and the other is 1 - it; otherwise each line
 * holds nclasses comma-separated probabilities.  RBA_E_SCHEMA when
 * there is no score command, when the file holds another number of
 * lines than cases or a line is not such numbers in [0, 1] (d->line);
 * the run errors above.
 */
int exec_score(const struct pins *p, const void *artifact, size_t an,
	       const void *csv, size_t n, size_t ncases, uint32_t nclasses,
	       uint32_t positive, float *probs, struct rba_detail *d);

/*
 * The environment record of pins p's exec trainer (envrec.h's text
 * rules): cpu.arch, cpu.isa, cpu.model, lib.libc, sandbox.bwrap,
 * trainer.kind, interpreter.path and interpreter.sha256 (the command's
 * program, resolved), pkg.<name> (each declared package's installed
 * version from dpkg-query, "not installed" when it is not; '+', '-' in
 * the name become '_'), var.<name> (each declared and each passed
 * variable's value, lowercased name; "unset" for a passed variable the
 * tool's environment lacks), probe.NNN (each line of the probe
 * command's stdout, run in the sandbox).  0, RBA_E_NOMEM, the probe's
 * run errors.
 */
int exec_envrec(const struct pins *p, struct rba_buf *out, struct rba_detail *d);

/*
 * An exec version's artifact bytes as a struct artifact (artifact.h).
 * Format xgboost-json is read natively (exec_xgboost_load): scored by
 * artifact_score and explained by TreeSHAP, trainer.score unused.  Any
 * other format is the external form: spec from the pins' data: section
 * over the snapshot bytes (encode_fit: the input columns in snapshot
 * order, the classes), exec_pins and exec_bytes borrowed, scored by the
 * pins' score command.  The encoding's and the loader's errors;
 * RBA_E_SCHEMA when a format other than xgboost-json has no score
 * command.
 */
int exec_artifact_open(const struct pins *p, const void *snap, size_t sn,
		       const uint8_t *bytes, size_t n, struct artifact *out,
		       struct rba_detail *d);

/*
 * An XGBoost JSON artifact (model/xgboost.h) with the classes of the
 * pins' encoding *out already holds (out->spec, from encode_fit): the
 * model's class k is the pins' k-th label in bytewise order, and a
 * binary model's class 1 must be data.positive.  On success *out is
 * replaced by the model (the old spec released); on error *out is as
 * given.  The loader's errors; RBA_E_SCHEMA for a class mismatch, with
 * d->key the pins key.
 */
int exec_xgboost_load(const struct pins *p, const void *bytes, size_t n,
		      struct artifact *out, struct rba_detail *d);

#endif
