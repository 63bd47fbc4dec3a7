/*
 * kind.h - a trainer kind's operations (doc/design.md 7.1, 7.10): what
 * differs between the builtin trainer (rebuild/trainers.c) and the exec
 * one (exec/kind.c, rebuild-audit-pins(5), TRAINER), so that register,
 * audit, vary, dispute and the instruments call through one entry
 * instead of asking which kind a version is.
 *
 * An entry is looked up once from the pins (rebuild_trainer_kind,
 * rebuild/rebuild.h: the table needs both entries, so it lives above
 * this folder).  Entries are static and immutable; a pointer to one
 * stays valid for the life of the process.
 *
 * The type lives here, the lowest folder that sees what both kinds
 * touch (an exec run, an artifact); struct rebuild_result, what a
 * training gives, is train/evaluate.h's.
 */
#ifndef RBA_EXEC_KIND_H
#define RBA_EXEC_KIND_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "model/artifact.h"
#include "train/evaluate.h"
#include "train/trainer.h"
#include "exec/exec.h"

struct trainer_kind {
	/* "builtin" or "exec": vary's record and messages. */
	const char *name;
	/* The audit record's trainer member's kind (audit/audit_record.c,
	 * evidence_check): NULL when records of this kind have none. */
	const char *record_trainer;
	/* 1 when a training runs the user's code in the sandbox
	 * (exec/sandbox.h): one run at a time, its cost unknown ahead,
	 * what ran kept in a struct exec_run. */
	int sandboxed;
	/* Trainings of one version run at once by the instruments
	 * (forensics/): 0 as many as asked. */
	unsigned max_jobs;
	/* vary's factors (audit/vary.h), in order, and as one line. */
	const char *const *factors;
	size_t nfactors;
	const char *factors_text;

	/* The code link: the revision of the code that trains p (this
	 * build's, or the pinned commit). */
	const char *(*code_revision)(const struct pins *p);
	/* The environment record of a training of p (train/envrec.h's text
	 * rules) appended to out.  0, RBA_E_NOMEM, the exec probe's run
	 * errors; d may be NULL. */
	int (*envrec)(const struct pins *p, struct rba_buf *out,
		      struct rba_detail *d);
	/* Trains p from the verified snapshot bytes (name: the snapshot,
	 * for details) with ABI abi (0: the pinned or current one; an exec
	 * trainer has none), at p's seed and threads.  out gets the
	 * artifact bytes, digest and ABI (an exec training's metrics NaN);
	 * run what ran when sandboxed (untouched otherwise).  The trainer's
	 * errors (rebuild_from_snapshot, exec_train); RBA_E_UNSUPPORTED for
	 * an ABI this build cannot run. */
	int (*train)(const struct pins *p, uint32_t abi, const void *snap,
		     size_t sn, const char *name,
		     const struct rebuild_progress *progress,
		     struct rebuild_result *out, struct exec_run *run,
		     struct rba_detail *d);
	/* Whether this build can rebuild version's artifact with abi (the
	 * pinned ABI, else the stored artifact's) for an audit: 0, or
	 * RBA_E_UNSUPPORTED saying so. */
	int (*abi_check)(const char *version, uint32_t abi,
			 struct rba_detail *d);
	/* The stored artifact (what: its description for details) read
	 * before the snapshot is: decoded, or left for stored_open (0,
	 * *out untouched). */
	int (*stored_decode)(const uint8_t *bytes, size_t n, const char *what,
			     struct artifact *out, struct rba_detail *d);
	/* The stored artifact opened once the snapshot is verified, when
	 * stored_decode left it (0, *out untouched, otherwise);
	 * opens_with_snapshot 1 when it does, so that a caller that needs
	 * no snapshot of its own reads it only then (sample add). */
	int opens_with_snapshot;
	int (*stored_open)(const struct pins *p, const void *snap, size_t sn,
			   const uint8_t *bytes, size_t n, struct artifact *out,
			   struct rba_detail *d);
	/* Artifact bytes a training of p gave, as a struct artifact
	 * (artifact_decode, or exec_artifact_open over the snapshot). */
	int (*artifact_open)(const struct pins *p, const void *snap, size_t sn,
			     const uint8_t *bytes, size_t n,
			     struct artifact *out, struct rba_detail *d);
	/* The ABI of an artifact given to register (--artifact): decoded
	 * for it, or 0 for bytes of the trainer's own format. */
	int (*given_abi)(const uint8_t *bytes, size_t n, uint32_t *abi,
			 struct rba_detail *d);
	/* The run record of a training (rebuild/runrec.h): of res for the
	 * builtin trainer (run/v2), of run for an exec one (run-exec/v1).
	 * env_hex: the environment record's digest as text.  Errors stay in
	 * out (rba_buf_status). */
	void (*run_record)(const struct pins *p, const struct rebuild_result *res,
			   const struct exec_run *run, const char *env_hex,
			   double wall_seconds, struct rba_buf *out);
	/* The trainer line of `version show`, label and all, without the
	 * newline, into line (n bytes). */
	void (*show)(const struct pins *p, char *line, size_t n);
};

/* The exec trainer's entry (exec/kind.c). */
extern const struct trainer_kind exec_trainer_kind;

#endif
