/*
 * dispute.h - answering a disputed decision (doc/design.md section 8): one case of a
 * version, rebuilt and scored again, with the version's standing.
 */
#ifndef RBA_DISPUTE_H
#define RBA_DISPUTE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/json.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "store/store.h"

enum dispute_answer { DISPUTE_STANDS = 0, DISPUTE_ESCALATE = 1 };

/* The JSON of a dispute report (rebuild-audit-report(5), DISPUTES): v2
 * adds the answer's exactness, the policy's text, and the reasons'
 * accuracy, error bound, draws and count asked for; v1 is still read
 * (dispute evidence, evidence/dispute_evidence.h). */
#define DISPUTE_SCHEMA "rebuild-audit/dispute/v2"
#define DISPUTE_SCHEMA_V1 "rebuild-audit/dispute/v1"
/* v2 and the reason statements of a policy that has them: each
 * principal reason's "statement" (null when the policy has none for its
 * column and value) and the explanation's "statements_missing"; written
 * only under such a policy, so that other answers keep their bytes. */
#define DISPUTE_SCHEMA_V3 "rebuild-audit/dispute/v3"
/* v2 or v3 and the levels unseen in training: the explanation's
 * "unseen", one entry per native categorical column whose value the
 * model has no level for, saying where it went on the case's paths;
 * written only for an answer with such a level (the statements' members
 * as v3 has them when the policy has statements, as v2 when not), so
 * that other answers keep their bytes. */
#define DISPUTE_SCHEMA_V4 "rebuild-audit/dispute/v4"

#define DISPUTE_REASONS_DEFAULT 4 /* principal reasons listed */
#define DISPUTE_REASONS_MAX 64
/* |probability from the explained margin - the score| that passes */
#define DISPUTE_SCORE_TOLERANCE 1e-5

struct dispute_options {
	uint32_t nreasons; /* principal reasons to list (0: none) */
	int rebuild;	   /* retrain even when an audit record proves it */
};

/*
 * The reasons of a decision (doc/design.md section 7, model/explain.h): every input
 * column's contribution to the explained margin, and the principal
 * reasons, the columns that moved it most toward the decision.
 */
struct dispute_explanation {
	int ok;	     /* computed; else error says why not */
	char *error;
	int method;  /* enum explain_method */
	int accuracy; /* enum explain_accuracy, when ok */
	/* Approximate: every contribution is within error_bound of its
	 * exact value, with probability at least 1 - 2^-30 over the keyed
	 * draws (model/explain.h); exact: 0. */
	double error_bound;
	uint64_t samples; /* approximate: antithetic permutation pairs; else 0 */
	uint32_t nasked;  /* principal reasons asked for */
	char *source; /* which artifact, in words */
	struct rba_digest artifact; /* the artifact explained */
	int from_decision_artifact; /* it is the one that made the decision */
	char *class_name;	    /* the class whose margin is explained */
	char *space;		    /* "log-odds of class 2", ... */
	int direction; /* +1: toward the decision is up; -1 down; 0 magnitude */
	double baseline, margin, sum;
	int sum_ok; /* |sum - margin| <= EXPLAIN_TOLERANCE */
	int has_score_check;
	double score_prob, score; /* sigmoid(margin) and the score it explains */
	const char *score_of; /* "stored", "rescored" (the deciding artifact,
			       * rebuilt or stored, scoring the case now) or
			       * "rebuilt" (another artifact): a static string */
	int score_ok;
	uint32_t ncols;
	char **cols, **values; /* the model's input columns and the case's text */
	uint8_t *missing; /* per column: the text is a missing value of the
			   * model (one of its tokens in a numeric column) */
	uint8_t *unseen;  /* per column: a native categorical column's text
			   * is no level the model knows (it goes right at
			   * every split on the column: ENCODE_NATIVE) */
	/* Where an unseen level went (doc/design.md section 8.4), per
	 * column (0 where not unseen): the splits on the column that the
	 * case's paths through the explained forest met, each of which sent
	 * it right, and the trees whose path met one; forest_trees the
	 * forest's trees.  A path that sent it left is no explanation
	 * (e->error says so). */
	uint32_t *unseen_splits, *unseen_trees;
	uint32_t forest_trees;
	uint32_t nunseen; /* columns with unseen set */
	double *contrib;
	uint32_t *top; /* ntop column indexes, the principal reasons first */
	uint32_t ntop;
	/* The policy's reason statements (policy_statement), when it has
	 * any: statements[k] for column k and its value, NULL where it has
	 * none; nmissing of the principal reasons have none. */
	int has_statements;
	char **statements;
	uint32_t nmissing;
};

struct dispute_report {
	char *version, *case_id;
	int answer;	 /* enum dispute_answer (when measured) */
	char *answer_line; /* "the disputed decline stands", "escalate: ..." */
	int exact;	 /* the reasons are exact values (an estimate, or
			  * none: 0) */
	char **reasons;	 /* the escalation reasons */
	size_t nreasons;
	/* the case */
	uint32_t ncols;
	char **names, **values; /* its inputs, exact text */
	int scored_by;
	double stored_score, rebuilt_score;
	uint32_t nclasses;
	char **classes;
	double *stored_probs;  /* nstored (scored by the model), or NULL */
	uint32_t nstored;
	double *rebuilt_probs; /* nclasses, or NULL (not scored) */
	char *stored_decision, *rebuilt_decision;
	double margin, rebuilt_margin, edge; /* edge NaN when none */
	/* the version */
	int verdict;	 /* what the version's standing rests on */
	char *verdict_basis; /* "rebuilt artifact is bit-identical", "audit
			      * record 12 of <time>", ... */
	int has_audit;
	uint64_t audit_id;
	struct rba_digest artifact_pinned, artifact_rebuilt, policy_digest,
		sample_digest;
	char *policy_text; /* the policy in force, its exact bytes (digest
			    * policy_digest): what verify decides by */
	/* The artifact that made the stored decisions (the version's when
	 * the sample was added). */
	struct rba_digest artifact_decisions;
	/* The stored decision is not what the policy in force gives the
	 * stored score (a warning, NULL when they agree). */
	char *contradiction;
	int has_sample_policy;
	struct rba_digest sample_policy;
	/* How the case was scored: retrained, or with the stored artifact on
	 * the proof of an audit record (doc/design.md section 8). */
	int rebuilt; /* 1: retrained; 0: the stored artifact */
	uint64_t proof_audit; /* the audit record relied on (rebuilt 0) */
	char *rebuild_why; /* why it retrained (NULL: asked to, or no audit) */
	struct dispute_explanation why;
	uint64_t head_id; /* the history head when answered */
	struct rba_digest head;
	double t_verify, t_rebuild, t_lookup, t_explain, t_total;
};

void dispute_report_release(struct dispute_report *r);

/*
 * Answers a disputed decision on case_id of version: reads the one
 * chunk holding the case, rebuilds the version (verifying artifact and
 * snapshot first), scores the case with the rebuilt model and decides
 * it under the policy in force.  Without o->rebuild, no retraining when
 * the version's latest audit record proves it unnecessary: verdict
 * bit-identical for the same config hash, snapshot, code revision,
 * trainer ABI and environment record digest as now, its rebuilt
 * artifact the pinned one, and the pinned artifact the one that made
 * the stored decisions; the case is then scored with the stored
 * (verified) artifact, r->rebuilt 0 and r->proof_audit the record.
 * The reasons (r->why, o->nreasons of them) come from the artifact that
 * made the decision: the scoring artifact when it is that one, else the
 * stored one or a blob of the store with its digest, else the scoring
 * artifact (said so); over the exact Shapley method's caps they are
 * estimated (r->why.accuracy, r->why.error_bound) and the answer is not
 * exact (r->exact 0, and a standing answer's line says so).  The
 * answer is owed them: when they cannot be
 * computed (r->why.error says why) or fail their own check (the sum, the
 * score), the answer is incomplete and escalates with that reason.  The
 * version's standing: bit-identical
 * when the rebuilt digest is the pinned one; otherwise the newest audit
 * record of this version for the same rebuilt artifact, policy and
 * sample, if any; without one, bit-identical only when the rebuilt
 * artifact is also the one that made the sample's stored decisions.
 * The answer stands when the version reproduces, the case's rebuilt
 * decision is its stored one and its reasons are there; otherwise it
 * escalates with every reason.  0 with r filled; errors as audit_version
 * (RBA_E_NOTFOUND also for an unknown case, d->key the id).
 */
int audit_dispute(struct store *s, const char *version, const char *case_id,
		  const struct policy *override, const struct dispute_options *o,
		  struct dispute_report *r, struct rba_detail *d);

/*
 * Which schema the JSON of r is: 4 (DISPUTE_SCHEMA_V4) when its reasons
 * name a level unseen in training, else 3 (DISPUTE_SCHEMA_V3) under a
 * policy with reason statements, else 2 (DISPUTE_SCHEMA).
 */
int dispute_report_format(const struct dispute_report *r);

/*
 * The JSON of a dispute report (rebuild-audit-report(5), DISPUTES,
 * schema dispute_report_format); with_inputs adds the case's inputs.
 */
void dispute_report_json(const struct dispute_report *r, int with_inputs,
			 struct rba_buf *out);
/* The same object written by w, as the member key of the object w has
 * open (key NULL: an item of its open array, or the outermost value). */
void dispute_report_write(const struct dispute_report *r, int with_inputs,
			  struct rba_json_w *w, const char *key);

/*
 * The JSON object of an explanation (rebuild-audit-report(5),
 * DISPUTES: explanation): also what dispute evidence signs.
 */
void dispute_explanation_json(const struct dispute_explanation *e,
			      struct rba_buf *out);

/*
 * The rules an answer is made by, for dispute evidence to check them
 * again (evidence/dispute_evidence.h).
 */

/*
 * Where the levels unseen in training of one case went (doc/design.md
 * section 8.4): for each native categorical column k of a (vals[k] its
 * text, no level of a->spec.columns[k]), the case's path through every
 * tree of a's forest, walked by the scoring rule on raw (the case's
 * features, encode_values) standardized as artifact_score does it:
 * splits[k] the splits on the column's feature that the paths met,
 * trees[k] the trees whose path met one (both 0 for the other columns;
 * splits and trees have room for a->spec.ncolumns); *nunseen the
 * columns with an unseen level.  Every such split sends the level right
 * (ENCODE_NATIVE); one that did not is an artifact breaking its rule:
 * *error (malloc'd) says where, else NULL.  0 or RBA_E_NOMEM.
 */
struct artifact;
int dispute_unseen_paths(const struct artifact *a, const char *const *vals,
			 const float *raw, uint32_t *splits, uint32_t *trees,
			 uint32_t *nunseen, char **error);

/*
 * Where an unseen level of column col went, in words, as the text answer
 * and the dispute page say it: "it went right at each of the N splits
 * on COL on its path (in T of the F trees)" ("the one split" for one),
 * or "no split on this column was on its path (in any of the F trees)"
 * when splits is 0.  malloc'd, or NULL.
 */
char *dispute_unseen_where(const char *col, uint64_t splits, uint64_t trees,
			   uint64_t forest_trees);

/*
 * Which way is toward the decision on the explained margin, for a case
 * of this stored score and an explanation of this baseline margin:
 * +1 up, -1 down, 0 by magnitude (doc/design.md section 8.4).
 */
int dispute_direction(const struct policy *pol, double score, double baseline);

/*
 * The principal reasons among n contributions: those pushing toward the
 * decision (dir * contrib > 0; dir 0: any but 0), the largest push
 * first, ties to the earlier column, at most nasked.  top has room for
 * n; *ntop gets their count.
 */
void dispute_top_reasons(const double *contrib, uint32_t n, int dir,
			 uint32_t nasked, uint32_t *top, uint32_t *ntop);

/* The warning of a stored decision its own stored score does not give:
 * malloc'd, or NULL out of memory. */
char *dispute_contradiction(double score, const char *policy_says,
			    const char *stored);

/* An error bound in the answer's words: two significant digits, rounded
 * up, so that the text is never less than the bound. */
void dispute_bound_text(double bound, char out[32]);

/*
 * The line of an answer that stands on the disputed decision:
 * "the disputed D stands", or with estimated reasons "the disputed D
 * stands (not exact: approximate Shapley values, error bound E per
 * contribution)", E as dispute_bound_text.  malloc'd, or NULL.
 */
char *dispute_stands_line(const char *decision, int exact, double bound);

/* ---- reason statements ------------------------------------------------ */

/* What a policy's reason statements cover of a version's input columns. */
struct dispute_coverage {
	struct rba_digest policy; /* the policy looked at */
	int from_version;	  /* the version's policy in force */
	size_t nstatements;	  /* statements in the policy */
	uint32_t ncolumns, covered; /* input columns, with a statement for
				     * every value */
	/* The columns without one ("name"), or, for a categorical column
	 * that has statements for some levels only, "name=level" for each
	 * level without (malloc'd; dispute_coverage_release). */
	char **missing;
	size_t nmissing;
};
void dispute_coverage_release(struct dispute_coverage *c);

/*
 * The statements of the policy in force for version (override, or the
 * version's own) against the input columns of its stored artifact: a
 * numeric column is covered by a statement for the column, a
 * categorical one when every level has its own or the column's.  0;
 * RBA_E_NOTFOUND (no such version); the errors of reading the version,
 * its artifact and its policy; RBA_E_NOMEM.
 */
int dispute_statement_coverage(struct store *s, const char *version,
			       const struct policy *override,
			       struct dispute_coverage *out, struct rba_detail *d);

#endif
