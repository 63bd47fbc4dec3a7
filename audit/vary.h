/*
 * vary.h - why a version does not rebuild bit for bit: it is rebuilt
 * once as its pins say (the control) and once per factor with only that
 * factor changed, and each artifact is compared with the control's
 * (rebuild-audit(1), vary; doc/design.md 8.11).
 *
 * Factors of an exec trainer, each applied inside the sandbox of
 * exec/sandbox.h with the pins' own limits (exec/exec.h, struct
 * exec_vary):
 *   threads           {threads} and every declared thread variable
 *                     (OMP_NUM_THREADS, ...): 1 -> 2, else -> 1
 *   timezone          TZ=UTC -> GMT-14 (fourteen hours east)
 *   locale            LANG and LC_ALL C.UTF-8 -> another installed UTF-8
 *                     locale (fr_CH, de_DE, en_US, ...), else POSIX
 *   umask             0022 -> 0002
 *   hostname          sandbox -> rebuild-audit-vary
 *   time              the clock ten years later (libfaketime preloaded,
 *                     Debian package faketime; not tried without it)
 *   path              /code, /in, /out -> /srv/rebuild-audit-vary/...
 *   environment-order the variables in reverse order
 *   aslr              address space randomization off
 *   cpu-features      each variable of environment.pass with documented
 *                     values (ATEN_CPU_CAPABILITY, OPENBLAS_CORETYPE,
 *                     MKL_ENABLE_INSTRUCTIONS, MKL_CBWR,
 *                     ONEDNN_MAX_CPU_ISA, DNNL_MAX_CPU_ISA,
 *                     NPY_DISABLE_CPU_FEATURES) set to each other value,
 *                     one run each
 *   file-order        /code and /in copied onto tmpfs with every
 *                     directory's entries created in the reverse of
 *                     their listed order
 * Factors of the builtin trainer, each run in a child process:
 *   threads           determinism.threads 1 -> 2, else -> 1
 *   isa               each other strict kernel path this CPU has
 *                     (RBA_STRICT_ISA), one run each
 *   compiler          the tool built by the other compiler (clang for a
 *                     gcc build, gcc for a clang one) from this build's
 *                     source tree; not tried without both
 *
 * Runs go at most jobs at a time, each in a child process that dies with
 * this one (and its sandbox and work directory with it).  A run whose
 * artifact differs from the control's is scored on the version's audit
 * sample, when it has one, beside the control: the decisions that flip
 * under the policy in force and the largest score difference.
 */
#ifndef RBA_VARY_H
#define RBA_VARY_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "common/rbatime.h"
#include "store/store.h"

struct trainer_kind; /* exec/kind.h */

#define VARY_MAX_RUNS 48
#define VARY_SCHEMA "rebuild-audit/vary/v1"

enum vary_state {
	VARY_SAME,	/* the control's artifact, byte for byte */
	VARY_CHANGES,	/* another artifact */
	VARY_FAILS,	/* the rebuild failed under the change (detail: why) */
	VARY_NOT_TRIED	/* the change cannot be made here (detail: why) */
};

struct vary_run {
	char factor[24];	/* a name of the kind's factors (exec/kind.h) */
	char *detail;		/* what changed; for FAILS and NOT_TRIED, why */
	enum vary_state state;
	struct rba_digest artifact; /* SAME, CHANGES */
	int scored;		/* flips and max_delta were measured */
	uint64_t flips;
	double max_delta;
	char max_delta_case[STORE_CASE_ID_MAX + 1];
	double seconds;
};

struct vary_report {
	char *version;
	const struct trainer_kind *kind; /* the version's (rebuild/rebuild.h) */
	struct rba_digest pinned;	/* the version's artifact */
	struct rba_digest control;	/* the control rebuild's */
	uint64_t cases;			/* the sample's (0: none, or not scored) */
	char why_not_scored[512];	/* when the sample could not be scored */
	char time[RBA_TIME_TEXT_MAX];	/* UTC, when it ran */
	char run_id[STORE_RUN_ID_MAX + 1]; /* the run record it was kept as */
	struct vary_run runs[VARY_MAX_RUNS];
	size_t nruns;
};

void vary_report_release(struct vary_report *r);

/*
 * Rebuilds version in store st as its pins say, then once for each
 * factor of factors (a comma-separated list; NULL: all of the trainer's
 * kind), at most jobs at a time, scores what differs, and keeps the
 * report as a run record (schema VARY_SCHEMA; rebuild/runs.h, subject
 * "vary/<version>").  0 (out filled, whatever the runs found);
 * RBA_E_SCHEMA for an unknown factor or one of the other kind (the
 * reason lists the factors); RBA_E_NOTFOUND (no such version); the
 * control rebuild's errors (RBA_E_IO, RBA_E_LIMIT, ...: nothing was
 * varied); the store's errors.
 */
int vary_version(struct store *st, const char *version, const char *factors,
		 unsigned jobs, struct vary_report *out, struct rba_detail *d);

/* The report as JSON (rebuild-audit(1), vary --json), appended to out. */
void vary_report_json(const struct vary_report *r, struct rba_buf *out);

/* 1 when some run changed the artifact or failed. */
int vary_report_changed(const struct vary_report *r);

#endif
