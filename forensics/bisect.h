/*
 * bisect.h - which of the edits between two pins files makes a gate
 * fail (doc/design.md section 8).
 *
 * The edits are fx_edits' (forensics.h), in canonical order; prefix k
 * is the base with the first k edits applied.  An evaluation is a sweep
 * of those pins at the seeds given (fx_sweep_run: kept in the store like
 * any sweep), decided by the gate's rule (gate.h: the median of the
 * gate's metric over the seeds).  Pins that the edits make invalid fail
 * the evaluation without a sweep.  Prefix 0 is assumed to pass and
 * prefix n is evaluated first; when it passes there is nothing to
 * bisect.  Otherwise a binary search keeps lo passing and hi failing
 * until they are adjacent: hi is the shortest failing prefix, found in
 * at most 1 + ceil(log2 n) prefix evaluations, and its last edit, the
 * culprit, is then applied alone to the base to confirm it.  When the
 * edit alone passes the prefixes were not monotone (edits interact) and
 * the culprit is not confirmed.
 */
#ifndef RBA_FX_BISECT_H
#define RBA_FX_BISECT_H

#include <stddef.h>

#include "forensics/forensics.h"
#include "forensics/gate.h"
#include "forensics/sweep.h"

/* What a bisection searches, all borrowed for the call. */
struct fx_bisect_plan {
	const char *cand;	     /* the candidate's name, for f */
	const struct pins *base;
	const struct fx_edit *edits; /* n >= 1, from fx_edits */
	size_t n;
	const struct fx_gate *gate;
	struct fx_sweep_plan sweep;  /* seeds, jobs, snapshot files */
};

/* One evaluation, as the bisection makes it. */
enum fx_bisect_kind {
	FX_BISECT_ALL,	  /* prefix n, every edit */
	FX_BISECT_PREFIX, /* prefix k of the search, 0 < k < n */
	FX_BISECT_ALONE	  /* the culprit alone on the base */
};
struct fx_bisect_step {
	enum fx_bisect_kind kind;
	unsigned eval;	   /* evaluations so far, this one included */
	size_t k;	   /* edits applied: the prefix; 1 for ALONE */
	size_t last;	   /* index of the last edit applied */
	const char *label; /* "prefix", "prefix <k>", "alone": also the
			    * progress label of its sweep */
	int valid;	   /* 0: the edits make invalid pins (reason) */
	const char *reason;
	struct fx_gate_value value; /* valid: the gate's decision */
};

/* What a bisection tells as it goes; every member may be NULL. */
struct fx_bisect_hooks {
	/* After each evaluation. */
	void (*step)(void *ctx, const struct fx_bisect_step *s);
	/* When the search has found the shortest failing prefix, before
	 * its last edit is evaluated alone. */
	void (*found)(void *ctx, size_t shortest, unsigned prefix_evals);
	void *ctx;
	const struct fx_progress *progress; /* each evaluation's training */
};

struct fx_bisect_result {
	int passes;		/* prefix n passes: nothing to bisect */
	size_t culprit;		/* index of the edit that makes it fail */
	size_t shortest;	/* the shortest failing prefix (culprit + 1) */
	unsigned prefix_evals;	/* evaluations of prefixes */
	int confirmed;		/* the culprit alone fails too */
};

/*
 * Bisects plan, keeping each evaluation's sweep in st, calling hooks
 * after each evaluation (step pointers borrowed for the call).  0 with
 * out filled; otherwise f says where: FX_STEP_BISECT (RBA_E_NOMEM,
 * subject plan->cand), the steps of fx_sweep_run and of fx_gate_decide.  A
 * failing evaluation ends the bisection: the steps before it have been
 * told.
 */
int fx_bisect_run(const struct fx_store *st, const struct fx_bisect_plan *plan,
		  const struct fx_bisect_hooks *hooks,
		  struct fx_bisect_result *out, struct fx_fault *f);

#endif
