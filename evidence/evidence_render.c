/*
 * evidence_render.c - the model rendered: the canonical bytes of an
 * evidence statement, what export computes rather than copies, and the
 * statement of one history record of the store (evidence_render).
 */
#include "evidence/evidence_priv.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "policy/policy.h"
#include "train/envrec.h"

#define EXPORTER_NAME RBA_TOOL_NAME

/* ---- the model ---------------------------------------------------------- */

void
evidence_ev_release(struct ev *e)
{
	free(e->reasons);
	free(e->warnings);
	free(e->diff);
	free(e->flipped);
	free(e->libs);
	free(e->earlier);
	if (!e->cases_view) {
		for (size_t i = 0; i < e->ncases_list; i++)
			free(e->cases_list[i].own);
		free(e->cases_list);
	}
	free(e->tr_cmd);
	for (size_t i = 0; i < e->ninputs_owned; i++)
		rba_json_release(&e->inputs_owned[i]);
	free(e->inputs_owned);
	evidence_tlog_release(e);
	memset(e, 0, sizeof(*e));
}

/* ---- the canonical writer ------------------------------------------------ */

/*
 * The layout of rebuild-audit-evidence(5) is common/json.h's pretty
 * layout; these add the model's string views and its repeated shapes.
 */
static void
jw_sv(struct rba_json_w *w, const char *key, struct sv v)
{
	rba_json_w_strn(w, key, v.s, v.n);
}

static void
jw_link(struct rba_json_w *w, const char *key, const struct ev_link *l)
{
	rba_json_w_open(w, key, '{');
	jw_sv(w, "state", l->state);
	jw_sv(w, "pinned", l->pinned);
	jw_sv(w, "current", l->current);
	jw_sv(w, "note", l->note);
	rba_json_w_close(w, '}');
}

/* true, false, or null for -1 (the record does not say). */
static void
jw_tristate(struct rba_json_w *w, const char *key, int v)
{
	if (v < 0)
		rba_json_w_str(w, key, NULL);
	else
		rba_json_w_bool(w, key, v);
}

static void
jw_strv(struct rba_json_w *w, const char *key, const struct sv *v, size_t n)
{
	rba_json_w_open(w, key, '[');
	for (size_t i = 0; i < n; i++)
		jw_sv(w, NULL, v[i]);
	rba_json_w_close(w, ']');
}

/*
 * The audit record named, and the history around it: its head and,
 * from format 2, the earlier audits of the version.
 */
static void
ev_render_audit(struct rba_json_w *w, const struct ev *e)
{
	rba_json_w_open(w, "audit", '{');
	rba_json_w_num(w, "id", e->id);
	jw_sv(w, "time", e->time);
	jw_sv(w, "store_id", e->store_id);
	jw_sv(w, "prev_digest", e->prev);
	jw_sv(w, "chain_digest", e->chain);
	jw_sv(w, "record_digest", e->record_digest);
	jw_sv(w, "record_schema", e->record_schema);
	rba_json_w_num(w, "exit_status", e->exit_status);
	rba_json_w_close(w, '}');

	rba_json_w_open(w, "history", '{');
	rba_json_w_open(w, "head", '{');
	rba_json_w_num(w, "id", e->head_id);
	jw_sv(w, "digest", e->head_digest);
	rba_json_w_close(w, '}');
	if (e->format >= EV_FORMAT_V2) {
		jw_sv(w, "earlier_since", e->earlier_since);
		rba_json_w_open(w, "earlier_audits", '[');
		for (size_t i = 0; i < e->nearlier; i++) {
			const struct ev_earlier *x = &e->earlier[i];
			rba_json_w_open(w, NULL, '{');
			rba_json_w_num(w, "id", x->id);
			rba_json_w_str(w, "time", x->time);
			rba_json_w_str(w, "verdict", x->verdict);
			rba_json_w_num(w, "exit_status", x->exit_status);
			rba_json_w_str(w, "policy", x->policy[0] ? x->policy
								 : NULL);
			jw_tristate(w, "ad_hoc", x->ad_hoc);
			rba_json_w_close(w, '}');
		}
		rba_json_w_close(w, ']');
	}
	rba_json_w_close(w, '}');
}

/* What was rebuilt from what: artifact, pins, policy, snapshot, sample. */
static void
ev_render_inputs(struct rba_json_w *w, const struct ev *e)
{
	rba_json_w_open(w, "artifact", '{');
	jw_sv(w, "pinned", e->art_pinned);
	jw_sv(w, "rebuilt", e->art_rebuilt);
	jw_sv(w, "decisions", e->art_decisions);
	rba_json_w_bool(w, "decisions_by_rebuilt", e->decisions_by_rebuilt);
	rba_json_w_bool(w, "bit_identical", e->bit_identical);
	rba_json_w_bool(w, "verified", e->art_verified);
	rba_json_w_close(w, '}');

	rba_json_w_open(w, "pins", '{');
	jw_sv(w, "digest", e->pins_digest);
	jw_sv(w, "config_hash", e->config_hash);
	jw_sv(w, "config_hash_trained", e->config_trained);
	jw_sv(w, "text", e->pins_text);
	rba_json_w_close(w, '}');

	rba_json_w_open(w, "policy", '{');
	jw_sv(w, "digest", e->pol_digest);
	jw_sv(w, "source", e->pol_source);
	if (e->format >= EV_FORMAT_V2) {
		jw_sv(w, "judged_by", e->judged_by);
		jw_sv(w, "declared_at", e->declared_at);
		jw_tristate(w, "ad_hoc", e->ad_hoc);
	}
	jw_sv(w, "rule", e->pol_rule);
	rba_json_w_open(w, "tolerance", '{');
	rba_json_w_num(w, "max_score_delta", e->tol_delta);
	rba_json_w_num(w, "max_flips", e->tol_flips);
	rba_json_w_close(w, '}');
	rba_json_w_open(w, "near_threshold", '{');
	rba_json_w_num(w, "margin", e->near_margin);
	rba_json_w_bool(w, "require_bits", e->near_bits);
	rba_json_w_close(w, '}');
	rba_json_w_num(w, "min_near_cases", e->min_near);
	jw_sv(w, "text", e->pol_text);
	rba_json_w_close(w, '}');

	rba_json_w_open(w, "snapshot", '{');
	jw_sv(w, "digest", e->snap_digest);
	rba_json_w_bool(w, "verified", e->snap_verified);
	rba_json_w_close(w, '}');

	rba_json_w_open(w, "sample", '{');
	jw_sv(w, "digest", e->sample_digest);
	rba_json_w_bool(w, "verified", e->sample_verified);
	rba_json_w_num(w, "cases", e->cases);
	jw_sv(w, "scored_by", e->scored_by);
	jw_sv(w, "policy", e->sample_policy);
	if (e->format >= EV_FORMAT_V2)
		rba_json_w_num(w, "score_precision", e->score_precision);
	rba_json_w_close(w, '}');
}

/* The environment and the links between pinned and current. */
static void
ev_render_links(struct rba_json_w *w, const struct ev *e)
{
	rba_json_w_open(w, "environment", '{');
	jw_sv(w, "state", e->env_state);
	jw_sv(w, "note", e->env_note);
	rba_json_w_open(w, "pinned", '{');
	jw_sv(w, "digest", e->env_pinned_digest);
	jw_sv(w, "record", e->env_pinned_record);
	rba_json_w_close(w, '}');
	rba_json_w_open(w, "current", '{');
	jw_sv(w, "digest", e->env_current_digest);
	jw_sv(w, "record", e->env_current_record);
	rba_json_w_close(w, '}');
	rba_json_w_open(w, "diff", '[');
	for (size_t i = 0; i < e->ndiff; i++) {
		rba_json_w_open(w, NULL, '{');
		jw_sv(w, "key", e->diff[i].key);
		jw_sv(w, "pinned", e->diff[i].pinned);
		jw_sv(w, "current", e->diff[i].current);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
	rba_json_w_close(w, '}');

	rba_json_w_open(w, "links", '{');
	jw_link(w, "code_revision", &e->code);
	rba_json_w_open(w, "trainer_abi", '{');
	jw_sv(w, "state", e->abi_state);
	rba_json_w_num(w, "pinned", e->abi_pinned);
	rba_json_w_num(w, "artifact", e->abi_artifact);
	rba_json_w_num(w, "rebuilt", e->abi_rebuilt);
	rba_json_w_num(w, "current", e->abi_current);
	jw_sv(w, "note", e->abi_note);
	rba_json_w_close(w, '}');
	jw_link(w, "config", &e->config);
	jw_link(w, "snapshot", &e->snaplink);
	rba_json_w_close(w, '}');
}

/* The results: the counts, the flipped cases and, from format 3, every case. */
static void
ev_render_results(struct rba_json_w *w, const struct ev *e)
{
	rba_json_w_open(w, "results", '{');
	rba_json_w_num(w, "flips", e->flips);
	rba_json_w_num(w, "max_score_delta", e->max_delta);
	jw_sv(w, "max_delta_case", e->max_delta_case);
	if (e->format >= EV_FORMAT_V2) {
		rba_json_w_num(w, "scores_off_precision", e->scores_off);
		jw_sv(w, "scores_off_case", e->scores_off_case);
	}
	rba_json_w_num(w, "near_threshold_cases", e->near_cases);
	rba_json_w_num(w, "weak_band_cases", e->weak_cases);
	rba_json_w_num(w, "policy_disagreements", e->disagreements);
	rba_json_w_num(w, "flipped_cases_listed", e->listed);
	rba_json_w_open(w, "flipped_cases", '[');
	for (size_t i = 0; i < e->nflipped; i++) {
		const struct ev_flip *f = &e->flipped[i];
		rba_json_w_open(w, NULL, '{');
		jw_sv(w, "id", f->id);
		rba_json_w_num(w, "stored_score", f->stored_score);
		rba_json_w_num(w, "rebuilt_score", f->rebuilt_score);
		jw_sv(w, "stored_decision", f->stored_decision);
		jw_sv(w, "rebuilt_decision", f->rebuilt_decision);
		rba_json_w_num(w, "margin", f->margin);
		rba_json_w_num(w, "rebuilt_margin", f->rebuilt_margin);
		rba_json_w_num(w, "edge", f->edge);
		if (f->inputs != NULL)
			rba_json_w_value(w, "inputs", f->inputs);
		rba_json_w_close(w, '}');
	}
	rba_json_w_close(w, ']');
	if (e->format >= EV_FORMAT_V3) {
		rba_json_w_open(w, "cases", '[');
		for (size_t i = 0; i < e->ncases_list; i++) {
			const struct ev_case *c = &e->cases_list[i];
			rba_json_w_open(w, NULL, '{');
			jw_sv(w, "id", c->id);
			rba_json_w_num(w, "stored_score", c->stored_score);
			rba_json_w_num(w, "rebuilt_score", c->rebuilt_score);
			jw_sv(w, "stored_decision", c->stored_decision);
			rba_json_w_close(w, '}');
		}
		rba_json_w_close(w, ']');
	}
	rba_json_w_close(w, '}');
}

/*
 * The rebuild's validation, the tool that audited and, for an exec
 * version only, its trainer.
 */
static void
ev_render_tool(struct rba_json_w *w, const struct ev *e)
{
	rba_json_w_open(w, "rebuild", '{');
	rba_json_w_num(w, "validation_accuracy", e->val_acc);
	rba_json_w_num(w, "validation_loss", e->val_loss);
	rba_json_w_close(w, '}');

	rba_json_w_open(w, "tool", '{');
	jw_sv(w, "name", e->tool_name);
	jw_sv(w, "version", e->tool_version);
	jw_sv(w, "code_revision", e->tool_rev);
	rba_json_w_num(w, "trainer_abi", e->tool_abi);
	rba_json_w_open(w, "libraries", '{');
	for (size_t i = 0; i < e->nlibs; i++) {
		char key[128];
		snprintf(key, sizeof(key), "%.*s", (int)e->libs[i].name.n,
			 e->libs[i].name.s);
		jw_sv(w, key, e->libs[i].value);
	}
	rba_json_w_close(w, '}');
	rba_json_w_close(w, '}');

	if (e->has_trainer) {
		/* Only an exec version's evidence has it: every other
		 * evidence file keeps its bytes. */
		rba_json_w_open(w, "trainer", '{');
		jw_sv(w, "kind", e->tr_kind);
		jw_sv(w, "repository", e->tr_repo);
		jw_sv(w, "commit", e->tr_commit);
		jw_sv(w, "tree", e->tr_tree);
		jw_strv(w, "command", e->tr_cmd, e->ntr_cmd);
		jw_sv(w, "sandbox", e->tr_sandbox);
		jw_sv(w, "sandbox_profile", e->tr_profile);
		rba_json_w_num(w, "exit_status", e->tr_exit);
		rba_json_w_num(w, "seconds", e->tr_seconds);
		jw_sv(w, "stdout_sha256", e->tr_stdout);
		jw_sv(w, "stderr_sha256", e->tr_stderr);
		rba_json_w_close(w, '}');
	}
}

/* The statement, every key in its place. */
void
evidence_ev_render(const struct ev *e, struct rba_buf *b)
{
	struct rba_json_w w;

	rba_json_w_init_pretty(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "_type", EVIDENCE_STATEMENT_TYPE);
	rba_json_w_open(&w, "subject", '[');
	rba_json_w_open(&w, NULL, '{');
	jw_sv(&w, "name", e->subject_name);
	rba_json_w_open(&w, "digest", '{');
	jw_sv(&w, "sha256", e->subject_sha256);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, ']');
	rba_json_w_str(&w, "predicateType",
		       e->log                      ? EVIDENCE_PREDICATE_TYPE_V4
		       : e->format >= EV_FORMAT_V3 ? EVIDENCE_PREDICATE_TYPE_V3
		       : e->format >= EV_FORMAT_V2 ? EVIDENCE_PREDICATE_TYPE
						   : EVIDENCE_PREDICATE_TYPE_V1);
	rba_json_w_open(&w, "predicate", '{');
	jw_sv(&w, "version", e->version);
	jw_sv(&w, "verdict", e->verdict);
	jw_sv(&w, "guarantee", e->guarantee);
	jw_sv(&w, "not_guaranteed", e->not_guaranteed);
	jw_strv(&w, "reasons", e->reasons, e->nreasons);
	jw_strv(&w, "warnings", e->warnings, e->nwarnings);

	ev_render_audit(&w, e);
	ev_render_inputs(&w, e);
	ev_render_links(&w, e);
	ev_render_results(&w, e);
	ev_render_tool(&w, e);

	rba_json_w_open(&w, "exported_by", '{');
	jw_sv(&w, "name", e->exp_name);
	jw_sv(&w, "version", e->exp_version);
	jw_sv(&w, "code_revision", e->exp_rev);
	rba_json_w_close(&w, '}');
	rba_json_w_bool(&w, "inputs_included", e->inputs_included);
	jw_sv(&w, "record", e->record);
	if (e->log)
		evidence_tlog_render(e, &w);
	rba_json_w_close(&w, '}');
	rba_json_w_close(&w, '}');
	rba_buf_put_u8(b, '\n');
}

/* ---- what export computes ------------------------------------------------ */

/* An error with a formatted reason and no file, line or key. */
int
evidence_fail(struct rba_detail *d, int err, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rba_detail_clear(d);
	return rba_fail(d, err, NULL, 0, 0, "%s", msg);
}

/* The policy text of e, parsed; the caller frees *out. */
int
evidence_ev_policy(const struct ev *e, struct policy **out, struct rba_detail *d)
{
	int err = policy_parse(e->pol_text.s, e->pol_text.n, "policy", out, d);

	if (err == RBA_E_NOMEM)
		return err;
	if (err)
		return evidence_fail(d, RBA_E_SCHEMA, "the policy text does not parse: %s",
			   d != NULL ? d->reason : rba_strerror(err));
	return 0;
}

/* Appends the formatted text to s (cap bytes), truncating. */
static void
append(char *s, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
append(char *s, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(s);
	va_list ap;

	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(s + n, cap - n, fmt, ap);
	va_end(ap);
}

/*
 * Format 2's sentences about the sample claim when the rebuild is the
 * pinned artifact that made the stored decisions, but stored scores are
 * not its beyond the declared logging precision (doc/design.md section
 * 8.2, two claims): the artifact is reproduced, production did not run
 * it bit for bit on those cases.
 */
static void
sample_off_text(const struct ev *e, const char *rep, const char *tol, char *g,
		char *ng, size_t cap)
{
	unsigned long long off = (unsigned long long)e->scores_off;
	const char *v = sv_show(e->version), *pinned = sv_show(e->art_pinned);
	char prec[160], scores[160], pv[32];

	if (e->score_precision > 0) {
		rba_json_fmt_double(e->score_precision, pv);
		snprintf(prec, sizeof(prec), "beyond the logging precision %s "
			 "declared with the sample", pv);
	} else {
		snprintf(prec, sizeof(prec), "at binary32, bit for bit: no logging "
			 "precision was declared with the sample");
	}
	snprintf(scores, sizeof(scores), "%llu stored score%s of the audit sample "
		 "%s not its", off, off == 1 ? "" : "s", off == 1 ? "is" : "are");
	if (sv_is(e->verdict, "metric-equivalent")) {
		snprintf(g, cap,
			 "a rebuild of version %s from its pins gives the pinned "
			 "artifact %s bit for bit, but %s (%s): production did not "
			 "run it bit for bit on %s; it reproduces %s and every score "
			 "within %s", v, pinned, scores, prec,
			 off == 1 ? "that case" : "those cases", rep, tol);
		snprintf(ng, cap,
			 "that production ran the pinned artifact bit for bit on the "
			 "%llu case%s whose stored score%s %s not its, and the same "
			 "decisions or scores within %s for inputs outside the audit "
			 "sample", off, off == 1 ? "" : "s", off == 1 ? "" : "s",
			 off == 1 ? "is" : "are", tol);
	} else {
		snprintf(g, cap,
			 "none: a rebuild of version %s from its pins is "
			 "bit-identical to the pinned artifact %s, but %s (%s): "
			 "production did not run it bit for bit on %s, and the policy "
			 "does not accept the sample's scores and decisions (the "
			 "reasons say why)", v, pinned, scores, prec,
			 off == 1 ? "that case" : "those cases");
		snprintf(ng, cap,
			 "that the scores and decisions stored in the audit sample "
			 "were made by the pinned artifact under this policy");
	}
}

/* The words every sentence of the guarantee is made of. */
struct gt_words {
	const char *v;		/* the version */
	const char *pinned;	/* the pinned artifact */
	const char *maker;	/* the artifact that made the stored decisions */
	char tol[32];		/* the policy's max_score_delta */
	char rep[160];		/* what of the audit sample was reproduced */
	int identical;		/* the rebuilt artifact is the pinned one */
	int known;		/* the record names the decisions' artifact */
	int other_maker;	/* ... and it is not the pinned one */
};

/* A bit-identical verdict's sentences. */
static void
bit_identical_text(const struct gt_words *t, char *g, char *ng, size_t cap)
{
	if (t->known)
		snprintf(g, cap,
			 "the rebuilt artifact is bit-identical to the pinned "
			 "one: rebuilding version %s from its pins gives %s "
			 "again, the artifact that made the stored decisions of "
			 "the audit sample, so it makes every score and decision "
			 "the pinned artifact makes, for any input", t->v, t->pinned);
	else
		snprintf(g, cap,
			 "the rebuilt artifact is bit-identical to the pinned "
			 "one: rebuilding version %s from its pins gives %s "
			 "again, so it makes every score and decision the pinned "
			 "artifact makes, for any input", t->v, t->pinned);
	snprintf(ng, cap,
		 "that the pins, the training data or the policy are right: "
		 "the audit shows that they reproduce this artifact, not "
		 "that the model is fit for its use%s",
		 t->known ? ""
		          : "; nor that the stored decisions of the audit sample "
			    "were made by this artifact: the audit record does "
			    "not name the artifact that made them");
}

/* A metric-equivalent verdict's sentences. */
static void
metric_equivalent_text(const struct gt_words *t, char *g, char *ng, size_t cap)
{
	if (t->identical) {
		snprintf(g, cap,
			 "the stored decisions of the audit sample were made by "
			 "artifact %s, not by the pinned %s: a rebuild of version "
			 "%s from its pins gives the pinned artifact bit for bit, "
			 "and it reproduces %s and every score within %s, not bit "
			 "for bit", t->maker, t->pinned, t->v, t->rep, t->tol);
		snprintf(ng, cap,
			 "that the pinned artifact makes the scores artifact %s "
			 "made bit for bit, and the same decisions or scores "
			 "within %s for inputs outside the audit sample", t->maker,
			 t->tol);
	} else {
		snprintf(g, cap,
			 "a rebuild of version %s from its pins reproduces %s and "
			 "every score within %s, though its artifact is not "
			 "bit-identical to the pinned %s%s%s%s", t->v, t->rep, t->tol,
			 t->pinned,
			 t->other_maker ? ", and the stored decisions were made by "
					  "artifact " : "",
			 t->other_maker ? t->maker : "",
			 t->other_maker ? ", not by the pinned one" : "");
		snprintf(ng, cap,
			 "bit-identical scores, and the same decisions or scores "
			 "within %s for inputs outside the audit sample", t->tol);
	}
}

/* The sentences of a verdict that reproduced nothing it could claim. */
static void
not_reproduced_text(const struct gt_words *t, char *g, char *ng, size_t cap)
{
	if (t->identical && t->other_maker) {
		snprintf(g, cap,
			 "none: a rebuild of version %s from its pins is "
			 "bit-identical to the pinned artifact %s, but the stored "
			 "decisions of its audit sample were made by artifact %s, "
			 "and the pinned artifact does not reproduce them within "
			 "the policy's tolerance (the reasons say why)", t->v, t->pinned,
			 t->maker);
		snprintf(ng, cap,
			 "that the pinned artifact makes the scores and decisions "
			 "artifact %s made, on the audit sample or for any other "
			 "input", t->maker);
	} else if (t->identical) {
		snprintf(g, cap,
			 "none: a rebuild of version %s from its pins is "
			 "bit-identical to the pinned artifact %s, but the scores "
			 "and decisions stored in its audit sample are not "
			 "reproduced within the policy's tolerance (the reasons "
			 "say why)", t->v, t->pinned);
		snprintf(ng, cap,
			 "that the scores and decisions stored in the audit sample "
			 "were made by the pinned artifact under this policy");
	} else {
		snprintf(g, cap,
			 "none: a rebuild of version %s from its pins does not "
			 "reproduce the pinned artifact %s within the policy's "
			 "tolerance%s%s (the reasons say why)", t->v, t->pinned,
			 t->other_maker ? ", and the stored decisions of its audit "
					  "sample were made by another artifact, " : "",
			 t->other_maker ? t->maker : "");
		snprintf(ng, cap,
			 "that the pinned artifact can be rebuilt from its pins, or "
			 "that its scores and decisions can be reproduced");
	}
}

/*
 * Format 2's additions: the sample claim of a bit-identical verdict, an
 * ad hoc audit said first, and the earlier audits that did not answer
 * yes.
 */
static void
format2_text(const struct ev *e, char *g, char *ng, size_t cap)
{
	const char *v = sv_show(e->version);
	int counted = !isnan(e->scores_off);

	/* The second claim of a bit-identical verdict, or that it could
	 * not be checked. */
	if (sv_is(e->verdict, "bit-identical")) {
		char pv[32];
		if (counted && e->scores_off == 0 && e->score_precision > 0) {
			rba_json_fmt_double(e->score_precision, pv);
			append(g, cap, "; and every stored score of the audit sample is "
			       "the pinned artifact's within the logging precision %s "
			       "declared with the sample", pv);
		} else if (counted && e->scores_off == 0) {
			append(g, cap, "; and every stored score of the audit sample is "
			       "the pinned artifact's at binary32, bit for bit");
		} else if (!counted) {
			append(ng, cap, "; nor that the stored scores of the audit "
			       "sample are the pinned artifact's bit for bit: the audit "
			       "record does not count them");
		}
	}
	/* Ad hoc first: the verdict answers another question than the
	 * version's declared one. */
	if (e->ad_hoc == 1) {
		char t[EVIDENCE_TEXT_MAX];
		snprintf(t, sizeof(t), "%s", g);
		g[0] = 0;
		append(g, cap, "ad hoc, not the version's audit: judged by policy "
		       "%s, given for this audit instead of the one declared for "
		       "the version; under it, %s", sv_show(e->pol_digest), t);
		append(ng, cap, "; nor anything under the policy declared for the "
		       "version: this audit was ad hoc");
	} else if (e->ad_hoc < 0 && sv_is(e->pol_source, "option")) {
		append(ng, cap, "; nor that the policy given for this audit is the "
		       "one declared for the version: the audit record does not "
		       "say");
	}
	/* An earlier failure is not hidden behind this record. */
	{
		size_t failed = evidence_ev_earlier_failed(e);
		if (failed > 0)
			append(ng, cap, "; nor that the version passed every audit: %zu "
			       "of the %zu earlier audits of version %s %s did not "
			       "reproduce or did not measure (history.earlier_audits)",
			       failed, e->nearlier, v,
			       e->earlier_since.s != NULL
				       ? "since its policy was declared"
				       : "in the history");
	}
}

/*
 * The guarantee in words and what it does not cover, from the verdict,
 * the counts, the policy declared before the audit and the three
 * artifacts: pinned, rebuilt and the one that made the sample's stored
 * decisions (unknown in records written before the audit named it).  A
 * sentence never speaks of more than the audit compared: when another
 * artifact made the decisions, it says so and what the pinned one was
 * checked against.  Format 2 adds the sample claim (whether the stored
 * scores are the pinned artifact's), an ad hoc audit said first, and the
 * earlier audits that did not answer yes; format 1's sentences are
 * exactly what they always were.
 */
void
evidence_guarantee_text(const struct ev *e, const struct policy *pol, char *g,
	       char *ng, size_t cap)
{
	struct gt_words t;
	unsigned long long cases = (unsigned long long)e->cases;
	unsigned long long flips = (unsigned long long)e->flips;
	int v2 = e->format >= EV_FORMAT_V2;
	int counted = !isnan(e->scores_off);
	int sample_off;

	t.v = sv_show(e->version);
	t.pinned = sv_show(e->art_pinned);
	t.maker = sv_show(e->art_decisions);
	t.identical = e->art_rebuilt.s != NULL &&
		      sv_eq(e->art_rebuilt, e->art_pinned);
	t.known = e->art_decisions.s != NULL;
	/* The decisions under audit are not the pinned artifact's. */
	t.other_maker = t.known && !sv_eq(e->art_decisions, e->art_pinned);
	/* R = P = D, but stored scores off the declared precision. */
	sample_off = v2 && t.identical && t.known && !t.other_maker && counted &&
		     e->scores_off > 0 && !sv_is(e->verdict, "bit-identical");
	assert(cap <= EVIDENCE_TEXT_MAX);
	rba_json_fmt_double(pol->max_score_delta, t.tol);
	if (flips == 0)
		snprintf(t.rep, sizeof(t.rep), "every decision on the audit sample of "
			 "%llu cases", cases);
	else
		snprintf(t.rep, sizeof(t.rep), "all but %llu of the decisions on the "
			 "audit sample of %llu cases (the policy tolerates %llu)",
			 flips, cases, (unsigned long long)pol->max_flips);
	if (sample_off)
		sample_off_text(e, t.rep, t.tol, g, ng, cap);
	else if (sv_is(e->verdict, "bit-identical"))
		bit_identical_text(&t, g, ng, cap);
	else if (sv_is(e->verdict, "metric-equivalent"))
		metric_equivalent_text(&t, g, ng, cap);
	else
		not_reproduced_text(&t, g, ng, cap);
	if (v2)
		format2_text(e, g, ng, cap);
}

/*
 * Fills what export computes rather than copies: the subject, the pins
 * digest, the policy's stated numbers, the guarantee, the record digest.
 * The record and meta fields (id, time, ...) must be set.
 */
int
evidence_ev_complete(struct ev *e, struct rba_detail *d)
{
	struct policy *pol = NULL;
	struct rba_digest dg;
	int err;

	assert(e->record.s != NULL && e->time.s != NULL && e->version.s != NULL);
	snprintf(e->b_subject_name, sizeof(e->b_subject_name), "%s.artifact",
		 sv_show(e->version));
	e->subject_name = sv_c(e->b_subject_name);
	snprintf(e->b_subject_hex, sizeof(e->b_subject_hex), "%s",
		 e->art_pinned.s != NULL && e->art_pinned.n == RBA_DIGEST_TEXT_LEN
			 ? e->art_pinned.s + 7 : "");
	e->subject_sha256 = sv_c(e->b_subject_hex);
	rba_digest_bytes(e->pins_text.s, e->pins_text.n, &dg);
	rba_digest_format(&dg, e->b_pins_digest);
	e->pins_digest = sv_c(e->b_pins_digest);
	rba_digest_bytes(e->record.s, e->record.n, &dg);
	rba_digest_format(&dg, e->b_record_digest);
	e->record_digest = sv_c(e->b_record_digest);
	e->bit_identical = e->art_rebuilt.s != NULL &&
			   sv_eq(e->art_rebuilt, e->art_pinned);
	e->decisions_by_rebuilt = e->art_rebuilt.s != NULL &&
				  sv_eq(e->art_decisions, e->art_rebuilt);
	if ((err = evidence_ev_policy(e, &pol, d)) != 0)
		return err;
	e->pol_rule = sv_c(pol->argmax ? "argmax" : "bands");
	e->tol_delta = pol->max_score_delta;
	e->tol_flips = (double)pol->max_flips;
	e->near_margin = pol->near_margin;
	e->near_bits = pol->near_require_bits;
	e->min_near = (double)pol->min_near_cases;
	evidence_guarantee_text(e, pol, e->b_guarantee, e->b_not, sizeof(e->b_guarantee));
	e->guarantee = sv_c(e->b_guarantee);
	e->not_guaranteed = sv_c(e->b_not);
	e->listed = (double)e->nflipped;
	policy_free(pol);
	return 0;
}

void
evidence_ev_summary_fill(const struct ev *e, struct evidence_summary *sum)
{
	sum->format = e->format;
	snprintf(sum->judged_by, sizeof(sum->judged_by), "%.*s",
		 e->judged_by.s != NULL ? (int)e->judged_by.n : 0,
		 e->judged_by.s != NULL ? e->judged_by.s : "");
	snprintf(sum->declared_at, sizeof(sum->declared_at), "%.*s",
		 e->declared_at.s != NULL ? (int)e->declared_at.n : 0,
		 e->declared_at.s != NULL ? e->declared_at.s : "");
	sum->ad_hoc = e->ad_hoc;
	sum->earlier = e->nearlier;
	sum->earlier_failed = evidence_ev_earlier_failed(e);
}

/* ---- rendering from the store --------------------------------------------- */

/*
 * The history holds audit records and, since register --replace
 * records what it replaced, other kinds of record of this tool.  A
 * record is taken for an audit unless its schema names another kind of
 * this tool's record ("rebuild-audit/KIND/vN"): one that cannot be read
 * is then refused by the reader, never skipped.  For another kind,
 * kind gets KIND and event the record's event ("" when none); both
 * are "" for an audit.  0 or RBA_E_NOMEM.
 */
static int
record_kind(const uint8_t *p, size_t n, char kind[32], char event[32],
	    int *ad_hoc)
{
	static const char tool[] = RBA_TOOL_NAME "/";
	struct rba_json_value v;
	const char *schema, *ev;
	int err;

	kind[0] = event[0] = 0;
	if (ad_hoc != NULL)
		*ad_hoc = 0;
	memset(&v, 0, sizeof(v));
	err = rba_json_parse((const char *)p, n, &v, NULL);
	if (err == RBA_E_NOMEM)
		return err;
	if (err)
		return 0;
	schema = rba_json_get_str(&v, "schema");
	ev = rba_json_get_str(&v, "event");
	/* Ad hoc: said so, or, in a record written before it was said,
	 * judged by a policy given with --policy (it may or may not have
	 * been the declared one: not taken for the version's audit). */
	if (ad_hoc != NULL) {
		const struct rba_json_value *pol = rba_json_get(&v, "policy");
		const struct rba_json_value *ah = rba_json_get(pol, "ad_hoc");
		const char *src = rba_json_get_str(pol, "source");
		*ad_hoc = ah != NULL ? ah->type == RBA_JSON_TRUE
				     : src != NULL && strcmp(src, "option") == 0;
	}
	if (schema != NULL && strncmp(schema, tool, sizeof(tool) - 1) == 0 &&
	    strncmp(schema, EVIDENCE_AUDIT_SCHEMA_PREFIX,
		    strlen(EVIDENCE_AUDIT_SCHEMA_PREFIX)) != 0) {
		const char *k = schema + sizeof(tool) - 1;
		snprintf(kind, 32, "%.*s", (int)strcspn(k, "/"), k);
		snprintf(event, 32, "%s", ev != NULL ? ev : "");
		for (char *c = kind; *c; c++) /* it goes into a message */
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		for (char *c = event; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		if (kind[0] == 0)
			snprintf(kind, 32, "?");
	}
	rba_json_release(&v);
	return 0;
}

int
evidence_history_record_check(const struct store_history_entry *e,
			      struct rba_detail *d)
{
	char kind[32], event[32], why[sizeof(d->reason)];
	int err = record_kind(e->record, e->len, kind, event, NULL);

	if (err != 0 || kind[0] != 0)
		return err;
	err = evidence_record_check(e->record, e->len, d);
	if (err == 0 || err == RBA_E_NOMEM)
		return err;
	snprintf(why, sizeof(why), "%s", d->reason);
	return evidence_fail(d, err, "audit record %llu of version '%s' %s: %s",
			     (unsigned long long)e->id, e->version,
			     err == RBA_E_NEWER ? "cannot be checked"
						: "is inconsistent", why);
}

struct newest {
	uint64_t id;
	uint64_t ad_hoc, ad_hoc_id; /* passed over: how many, the newest */
};

/* Not a status code: what newest_cb stops the walk with. */
#define NEWEST_FOUND 0x4e455754

/* The newest audit record of the version that is not ad hoc: other
 * records are passed. */
static int
newest_cb(void *ctx, const struct store_history_entry *e)
{
	char kind[32], event[32];
	int ad_hoc = 0;
	int err = record_kind(e->record, e->len, kind, event, &ad_hoc);

	if (err)
		return err;
	if (kind[0] == 0 && ad_hoc && ((struct newest *)ctx)->ad_hoc++ == 0)
		((struct newest *)ctx)->ad_hoc_id = e->id;
	if (kind[0] != 0 || ad_hoc)
		return 0;
	((struct newest *)ctx)->id = e->id;
	return NEWEST_FOUND; /* newest first: stop at the first audit */
}

size_t
evidence_ev_earlier_failed(const struct ev *e)
{
	size_t failed = 0;

	for (size_t i = 0; i < e->nearlier; i++)
		if (e->earlier[i].ad_hoc != 1 &&
		    (strcmp(e->earlier[i].verdict, "not-reproducible") == 0 ||
		     strcmp(e->earlier[i].verdict, "not-measured") == 0))
			failed++;
	return failed;
}

/* The walk that lists the version's earlier audit records. */
struct earlier_walk {
	struct ev *e;
	uint64_t before;  /* the exported record's id */
	int has_since;
	int64_t since;
	size_t cap;
	struct rba_detail *d;
};

/* Not a status code: what earlier_cb stops the walk with. */
#define EARLIER_DONE 0x4541524c

static int
earlier_cb(void *ctx, const struct store_history_entry *h)
{
	struct earlier_walk *w = ctx;
	struct ev_earlier *x;
	struct rba_json_value v;
	const struct rba_json_value *es, *pol, *ah;
	const char *verdict, *pd;
	struct rba_digest dg;
	char kind[32], event[32];
	int err;

	if (h->id >= w->before)
		return EARLIER_DONE; /* oldest first: the rest is later */
	if ((err = record_kind(h->record, h->len, kind, event, NULL)) != 0)
		return err;
	if (kind[0] != 0 || (w->has_since && h->time < w->since))
		return 0;
	memset(&v, 0, sizeof(v));
	err = rba_json_parse((const char *)h->record, h->len, &v, NULL);
	if (err == RBA_E_NOMEM)
		return err;
	verdict = err ? NULL : rba_json_get_str(&v, "verdict");
	es = err ? NULL : rba_json_get(&v, "exit_status");
	pol = err ? NULL : rba_json_get(&v, "policy");
	pd = rba_json_get_str(rba_json_get(&v, "digests"), "policy");
	ah = rba_json_get(pol, "ad_hoc");
	if (verdict == NULL || es == NULL || es->type != RBA_JSON_NUMBER ||
	    !(es->num == 0 || es->num == 1 || es->num == 2) ||
	    strlen(verdict) >= sizeof(x->verdict) ||
	    (pd != NULL && rba_digest_parse(pd, &dg) != 0)) {
		rba_json_release(&v);
		return evidence_fail(w->d, RBA_E_SCHEMA, "history record %llu of "
				     "version '%s' cannot be read as an audit "
				     "record: the earlier audits of the version "
				     "cannot be listed",
				     (unsigned long long)h->id, h->version);
	}
	if (w->e->nearlier == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct ev_earlier *nv = realloc(w->e->earlier, cap * sizeof(*nv));
		if (nv == NULL) {
			rba_json_release(&v);
			return RBA_E_NOMEM;
		}
		w->e->earlier = nv;
		w->cap = cap;
	}
	x = &w->e->earlier[w->e->nearlier++];
	memset(x, 0, sizeof(*x));
	x->id = (double)h->id;
	rba_time_utc(h->time, x->time);
	snprintf(x->verdict, sizeof(x->verdict), "%s", verdict);
	x->exit_status = es->num;
	snprintf(x->policy, sizeof(x->policy), "%s", pd != NULL ? pd : "");
	x->ad_hoc = ah == NULL ? -1 : ah->type == RBA_JSON_TRUE;
	rba_json_release(&v);
	return 0;
}

/*
 * The audit records of e's version before record id, oldest first,
 * since e's judging policy was declared (every one when the record does
 * not say since when).  0, RBA_E_SCHEMA (a record that cannot be read
 * as an audit, or a declared_at that is not a time), RBA_E_NOMEM, the
 * store's errors.
 */
static int
earlier_audits(struct store_txn *txn, struct ev *e, uint64_t id,
	       struct rba_detail *d)
{
	struct earlier_walk w;
	int err;

	memset(&w, 0, sizeof(w));
	w.e = e;
	w.before = id;
	w.d = d;
	e->earlier_since = e->declared_at;
	if (e->declared_at.s != NULL) {
		if (rba_time_parse_utc(e->declared_at.s, e->declared_at.n,
				       &w.since) != 0)
			return evidence_fail(d, RBA_E_SCHEMA, "audit record %llu: "
					     "policy.declared_at '%s' is not a UTC "
					     "time", (unsigned long long)id,
					     sv_show(e->declared_at));
		w.has_since = 1;
	}
	err = store_history_list(txn, sv_show(e->version), 0, earlier_cb, &w, d);
	return err == EARLIER_DONE ? 0 : err;
}

int
evidence_sample_wanted(const struct ev *e, const char *what,
		       const char *to_do, struct rba_digest *want,
		       struct rba_detail *d)
{
	if (e->sample_digest.s == NULL ||
	    rba_digest_parse(e->sample_digest.s, want) != 0)
		return evidence_fail(d, RBA_E_NOTFOUND, "audit %.0f of version '%s' "
				     "scored no sample: there are no %s to %s",
				     e->id, sv_show(e->version), what, to_do);
	return 0;
}

int
evidence_sample_load(struct store_txn *txn, const struct ev *e,
		     const struct rba_digest *want, const char *what,
		     const char *done, struct store_sample_info *info,
		     struct sample_layout *l, struct rba_detail *d)
{
	char now[RBA_DIGEST_TEXT_LEN + 1];
	int err = sample_layout_load(txn, e->version.s, info, l, d);

	if (err == RBA_E_NOTFOUND)
		return evidence_fail(d, RBA_E_NOTFOUND, "version '%s' no longer has "
				     "the sample audit %.0f scored: its %s cannot "
				     "be %s", sv_show(e->version), e->id, what, done);
	if (err)
		return err;
	if (rba_digest_equal(&info->digest, want))
		return 0;
	rba_digest_format(&info->digest, now);
	return evidence_fail(d, RBA_E_SCHEMA, "the sample of version '%s' changed "
			     "since audit %.0f (%s then, %s now): its %s cannot be "
			     "%s", sv_show(e->version), e->id,
			     sv_show(e->sample_digest), now, what, done);
}

/* Inputs of the listed flipped cases, from the sample audited. */
static int
load_inputs(struct store_txn *txn, struct ev *e, struct rba_detail *d)
{
	struct store_sample_info info;
	struct sample_layout l;
	struct sample_chunk c;
	struct rba_digest want;
	int err;

	memset(&info, 0, sizeof(info));
	memset(&l, 0, sizeof(l));
	sample_chunk_init(&c);
	if ((err = evidence_sample_wanted(e, "inputs", "include", &want, d)) != 0)
		return err;
	err = evidence_sample_load(txn, e, &want, "inputs", "included", &info, &l, d);
	if (err)
		goto out;
	e->inputs_owned = calloc(e->nflipped ? e->nflipped : 1,
				 sizeof(*e->inputs_owned));
	if (e->inputs_owned == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	e->ninputs_owned = e->nflipped;
	for (size_t i = 0; i < e->nflipped; i++) {
		struct rba_json_value *o = &e->inputs_owned[i];
		uint8_t *raw = NULL;
		uint32_t idx = 0;
		char tmp[32];

		err = sample_case_load(txn, e->version.s, &l, e->flipped[i].id.s, &raw,
				       &c, &idx, d);
		if (err)
			goto out;
		o->type = RBA_JSON_OBJECT;
		o->items = calloc(l.ncols ? l.ncols : 1, sizeof(*o->items));
		o->keys = calloc(l.ncols ? l.ncols : 1, sizeof(*o->keys));
		if (o->items == NULL || o->keys == NULL) {
			free(raw);
			err = RBA_E_NOMEM;
			goto out;
		}
		for (uint32_t k = 0; k < l.ncols; k++) {
			const char *txt = sample_chunk_text(&c, k, idx, tmp);
			o->keys[k] = strdup(l.names[k]);
			o->items[k].type = RBA_JSON_STRING;
			o->items[k].str = strdup(txt);
			o->items[k].len = strlen(txt);
			o->n = k + 1;
			if (o->keys[k] == NULL || o->items[k].str == NULL) {
				free(raw);
				err = RBA_E_NOMEM;
				goto out;
			}
		}
		free(raw);
		e->flipped[i].inputs = o;
	}
	e->inputs_included = 1;
out:
	sample_chunk_release(&c);
	sample_layout_release(&l);
	store_sample_info_release(&info);
	return err;
}

int
evidence_render(struct store *s, const char *version, uint64_t audit_id,
		int flags, struct rba_buf *out,
		struct evidence_summary *sum, struct rba_detail *d)
{
	return evidence_render_log(s, version, audit_id, flags, NULL, out, sum, d);
}

/*
 * The history record to attest: AUDIT_ID, or with 0 the newest audit of
 * VERSION that is not ad hoc (its id left in AUDIT_ID); an audit record
 * of that version.
 */
static int
find_audit(struct store_txn *txn, const char *version, uint64_t *audit_id,
	   struct store_history_entry *ent, struct rba_detail *d)
{
	struct newest nw = { 0, 0, 0 };
	int err;

	if (*audit_id == 0) {
		err = store_history_list(txn, version, 1, newest_cb, &nw, d);
		if (err != NEWEST_FOUND && err != 0)
			return err;
		if (nw.id == 0 && nw.ad_hoc > 0)
			return evidence_fail(d, RBA_E_NOTFOUND, "no audit of version '%s' "
				  "in the history that is not ad hoc (%llu ad hoc, the "
				  "newest record %llu: export one with --audit ID, or "
				  "run 'rebuild-audit audit %s')", version,
				  (unsigned long long)nw.ad_hoc,
				  (unsigned long long)nw.ad_hoc_id, version);
		if (nw.id == 0)
			return evidence_fail(d, RBA_E_NOTFOUND, "no audit of version '%s' in the "
				  "history: run 'rebuild-audit audit %s' first",
				  version, version);
		*audit_id = nw.id;
	}
	err = store_history_get(txn, *audit_id, ent, d);
	if (err == RBA_E_NOTFOUND)
		return evidence_fail(d, err, "no audit record %llu in the history",
			  (unsigned long long)*audit_id);
	if (err)
		return err;
	/* Only an audit record has a verdict to attest. */
	{
		char kind[32], event[32];
		if ((err = record_kind(ent->record, ent->len, kind, event, NULL)) != 0)
			return err;
		if (kind[0] != 0)
			return evidence_fail(d, RBA_E_SCHEMA, "history record %llu is a %s "
				  "record%s%s%s of version '%s', not an audit: it "
				  "attests no verdict", (unsigned long long)*audit_id,
				  kind, event[0] ? " ('" : "", event,
				  event[0] ? "')" : "", ent->version);
	}
	if (strcmp(ent->version, version) != 0)
		return evidence_fail(d, RBA_E_SCHEMA, "audit record %llu is of version '%s', "
			  "not '%s'", (unsigned long long)*audit_id, ent->version,
			  version);
	return 0;
}

/*
 * The audit record parsed into REC and read into E: it must have
 * measured and name the version of its history entry.
 */
static int
read_audit(const struct store_history_entry *ent, uint64_t audit_id,
	   const char *version, struct rba_json_value *rec, struct ev *e,
	   struct rba_detail *d)
{
	int err;

	err = rba_json_parse((const char *)ent->record, ent->len, rec, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err)
		return evidence_fail(d, RBA_E_SCHEMA, "audit record %llu is not JSON: %s",
			  (unsigned long long)audit_id, d->reason);
	/* A record that did not measure attests nothing: the audit says why. */
	{
		const char *v = rba_json_get_str(rec, "verdict");
		if (v != NULL && strcmp(v, "not-measured") == 0) {
			const struct rba_json_value *rs = rba_json_get(rec, "reasons");
			const char *why = rs != NULL && rs->type == RBA_JSON_ARRAY &&
						  rs->n > 0 &&
						  rs->items[0].type == RBA_JSON_STRING
					  ? rs->items[0].str
					  : "no reason recorded";
			return evidence_fail(d, RBA_E_SCHEMA, "audit record %llu of version '%s' "
				  "did not measure (not-measured: %s): there is no "
				  "verdict to attest", (unsigned long long)audit_id,
				  version, why);
		}
	}
	if ((err = evidence_ev_from_record(rec, audit_id, e, d)) != 0)
		return err;
	if (!sv_is(e->version, ent->version))
		return evidence_fail(d, RBA_E_SCHEMA, "audit record %llu names version '%s', "
			  "its history entry '%s'", (unsigned long long)audit_id,
			  sv_show(e->version), ent->version);
	return 0;
}

/*
 * What the record does not hold: the entry's id, time and chain, the
 * head, the exporter, the earlier audits, and as FLAGS and LOG ask the
 * cases, the inputs and the log; then what export computes.
 */
static int
ev_from_store(struct store *s, struct store_txn *txn,
	      const struct store_history_entry *ent, uint64_t audit_id,
	      int flags, const struct evidence_log_request *log, struct ev *e,
	      struct rba_detail *d)
{
	int err;

	e->id = (double)ent->id;
	rba_time_utc(ent->time, e->b_time);
	e->time = sv_c(e->b_time);
	if (!sv_eq(e->rec_time, e->time))
		return evidence_fail(d, RBA_E_SCHEMA, "audit record %llu has time %s, its "
			  "history entry %s", (unsigned long long)audit_id,
			  sv_show(e->rec_time), e->b_time);
	snprintf(e->b_store_id, sizeof(e->b_store_id), "%s", store_id_hex(s));
	e->store_id = sv_c(e->b_store_id);
	/* The head now, read in the transaction whose chain was verified:
	 * the anchor an auditor keeps outside the store. */
	{
		uint64_t hid = 0;
		struct rba_digest hd;
		if ((err = store_history_head(txn, &hid, &hd, d)) != 0)
			return err;
		e->head_id = (double)hid;
		rba_digest_format(&hd, e->b_head);
		e->head_digest = sv_c(e->b_head);
	}
	rba_digest_format(&ent->prev, e->b_prev);
	e->prev = sv_c(e->b_prev);
	rba_digest_format(&ent->digest, e->b_chain);
	e->chain = sv_c(e->b_chain);
	e->record.s = (const char *)ent->record;
	e->record.n = ent->len;
	e->exp_name = sv_c(EXPORTER_NAME);
	e->exp_version = sv_c(RBA_TOOL_VERSION);
	e->exp_rev = sv_c(envrec_code_revision());
	e->format = (flags & EVIDENCE_RENDER_CASES) ? EV_FORMAT_V3 : EV_FORMAT_V2;
	if ((err = earlier_audits(txn, e, ent->id, d)) != 0)
		return err;
	if ((flags & EVIDENCE_RENDER_CASES) &&
	    (err = evidence_cases_load(txn, e, d)) != 0)
		return err;
	if ((flags & EVIDENCE_RENDER_INPUTS) && e->nflipped > 0 &&
	    (err = load_inputs(txn, e, d)) != 0)
		return err;
	e->inputs_included = (flags & EVIDENCE_RENDER_INPUTS) != 0;
	/* Format 4: the log of this transaction's history. */
	if (log != NULL && (err = evidence_tlog_load(txn, e, log, d)) != 0)
		return err;
	if ((err = evidence_ev_complete(e, d)) != 0)
		return err;
	return 0;
}

/* The summary of the evidence rendered, its log checked. */
static int
summary_fill(const struct store_history_entry *ent, const struct ev *e,
	     struct evidence_summary *sum, struct rba_detail *d)
{
	char tv[32];
	int err;

	sum->is_evidence = 1;
	snprintf(sum->version, sizeof(sum->version), "%s", ent->version);
	snprintf(sum->verdict, sizeof(sum->verdict), "%s", sv_show(e->verdict));
	sum->audit_id = ent->id;
	sum->time = ent->time;
	rba_time_utc(ent->time, tv);
	snprintf(sum->time_text, sizeof(sum->time_text), "%s", tv);
	rba_digest_parse(e->art_pinned.s, &sum->artifact);
	sum->cases = (uint64_t)e->cases;
	sum->flips = (uint64_t)e->flips;
	sum->inputs_included = e->inputs_included;
	snprintf(sum->guarantee, sizeof(sum->guarantee), "%s", e->b_guarantee);
	sum->head_id = (uint64_t)e->head_id;
	rba_digest_parse(e->b_head, &sum->head);
	evidence_ev_summary_fill(e, sum);
	if (e->log && (err = evidence_tlog_check(e, &sum->log, d)) != 0)
		return err;
	return 0;
}

int
evidence_render_log(struct store *s, const char *version, uint64_t audit_id,
		    int flags, const struct evidence_log_request *log,
		    struct rba_buf *out, struct evidence_summary *sum,
		    struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct store_history_entry ent;
	struct rba_json_value rec;
	struct ev e;
	struct rba_detail local;
	uint64_t bad_id = 0;
	int err;

	if (d == NULL)
		d = &local;
	memset(&ent, 0, sizeof(ent));
	memset(&rec, 0, sizeof(rec));
	memset(&e, 0, sizeof(e));
	if (sum != NULL)
		memset(sum, 0, sizeof(*sum));
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = store_history_verify(txn, &bad_id, NULL, d)) != 0)
		goto out;
	if ((err = find_audit(txn, version, &audit_id, &ent, d)) != 0)
		goto out;
	if ((err = read_audit(&ent, audit_id, version, &rec, &e, d)) != 0)
		goto out;
	if ((err = ev_from_store(s, txn, &ent, audit_id, flags, log, &e, d)) != 0)
		goto out;
	evidence_ev_render(&e, out);
	if ((err = rba_buf_status(out)) != 0)
		goto out;
	if (out->len > EVIDENCE_MAX_BYTES) {
		err = evidence_fail(d, RBA_E_LIMIT, "the evidence of audit %llu would be %zu "
			  "bytes, over %u", (unsigned long long)audit_id, out->len,
			  EVIDENCE_MAX_BYTES);
		goto out;
	}
	if (sum != NULL && (err = summary_fill(&ent, &e, sum, d)) != 0)
		goto out;
out:
	evidence_ev_release(&e);
	rba_json_release(&rec);
	store_history_entry_release(&ent);
	store_txn_abort(txn);
	return err;
}

