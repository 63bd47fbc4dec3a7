/*
 * evidence_check.c - the offline check of an evidence file
 * (evidence_check; the checks in evidence.h and rebuild-audit-evidence(5)).
 */
#include "evidence/evidence_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "common/utf8.h"
#include "policy/policy.h"
#include "rebuild/rebuild.h"
#include "train/envrec.h"
#include "store/store.h"

/* ---- the checks -------------------------------------------------------- */

/* 1 when text (NULL: none) hashes to the digest text dg. */
static int
hashes_to(struct sv text, struct sv dg)
{
	struct rba_digest want, got;

	if (dg.s == NULL || rba_digest_parse(dg.s, &want) != 0)
		return 0;
	rba_digest_bytes(text.s, text.n, &got);
	return rba_digest_equal(&want, &got);
}

static int
digest_is(struct sv text, const struct rba_digest *dg)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(dg, hex);
	return sv_is(text, hex);
}

/* Texts against the digests beside them (check 2). */
static int
check_texts(const struct ev *e, struct rba_detail *d)
{
	if (!hashes_to(e->pins_text, e->pins_digest))
		return evidence_fail(d, RBA_E_TAMPERED, "the pins text does not hash to "
			   "predicate.pins.digest %s", sv_show(e->pins_digest));
	if (!hashes_to(e->pol_text, e->pol_digest))
		return evidence_fail(d, RBA_E_TAMPERED, "the policy text does not hash to "
			   "predicate.policy.digest %s", sv_show(e->pol_digest));
	if (e->env_pinned_record.s != NULL && e->env_pinned_digest.s != NULL &&
	    !hashes_to(e->env_pinned_record, e->env_pinned_digest))
		return evidence_fail(d, RBA_E_TAMPERED, "the pinned environment record does "
			   "not hash to predicate.environment.pinned.digest %s",
			   sv_show(e->env_pinned_digest));
	if (e->env_current_record.s != NULL && e->env_current_digest.s != NULL &&
	    !hashes_to(e->env_current_record, e->env_current_digest))
		return evidence_fail(d, RBA_E_TAMPERED, "the current environment record does "
			   "not hash to predicate.environment.current.digest %s",
			   sv_show(e->env_current_digest));
	if (!hashes_to(e->record, e->record_digest))
		return evidence_fail(d, RBA_E_TAMPERED, "the embedded audit record does not "
			   "hash to predicate.audit.record_digest %s",
			   sv_show(e->record_digest));
	return 0;
}

/* The pins and the policy against what the predicate states (check 3). */
/* 1 when text (an environment record) has the line key=value. */
static int
env_has(struct sv text, const char *key, struct sv value)
{
	size_t kl = strlen(key);

	for (size_t i = 0; text.s != NULL && i < text.n;) {
		const char *l = text.s + i;
		const char *nl = memchr(l, '\n', text.n - i);
		size_t len = nl != NULL ? (size_t)(nl - l) : text.n - i;
		if (len == kl + 1 + value.n && strncmp(l, key, kl) == 0 &&
		    l[kl] == '=' && memcmp(l + kl + 1, value.s, value.n) == 0)
			return 1;
		i += len + 1;
	}
	return 0;
}

static int
hex40(struct sv s)
{
	if (s.n != 40)
		return 0;
	for (size_t i = 0; i < 40; i++)
		if (!((s.s[i] >= '0' && s.s[i] <= '9') || (s.s[i] >= 'a' && s.s[i] <= 'f')))
			return 0;
	return 1;
}

/*
 * An exec version's trainer member against its pins, its code link and
 * its environment records; a builtin version has none.
 */
static int
check_trainer(const struct ev *e, const struct pins *pins, struct rba_detail *d)
{
	const char *kind = rebuild_trainer_kind(pins)->record_trainer;

	if (kind == NULL) {
		if (e->has_trainer)
			return evidence_fail(d, RBA_E_SCHEMA, "a trainer member for "
					     "pins of this tool's own trainer");
		return 0;
	}
	if (!e->has_trainer)
		return evidence_fail(d, RBA_E_SCHEMA, "the pins name an exec trainer "
				     "and the evidence does not say what ran");
	if (!sv_is(e->tr_kind, kind))
		return evidence_fail(d, RBA_E_SCHEMA, "trainer.kind '%s' is not %s",
				     sv_show(e->tr_kind), kind);
	if (!sv_is(e->tr_repo, pins->trainer.repository))
		return evidence_fail(d, RBA_E_SCHEMA, "trainer.repository '%s' is not "
				     "the pins' '%s'", sv_show(e->tr_repo),
				     pins->trainer.repository);
	if (!sv_is(e->tr_commit, pins->trainer.revision))
		return evidence_fail(d, RBA_E_SCHEMA, "trainer.commit %s is not the "
				     "pinned revision %s", sv_show(e->tr_commit),
				     pins->trainer.revision);
	if (!hex40(e->tr_tree))
		return evidence_fail(d, RBA_E_SCHEMA, "trainer.tree '%s' is not a tree id",
				     sv_show(e->tr_tree));
	if (e->ntr_cmd != pins->trainer.ncommand || e->ntr_cmd == 0)
		return evidence_fail(d, RBA_E_SCHEMA, "trainer.command has %zu "
				     "arguments; the pins' command has %zu",
				     e->ntr_cmd, pins->trainer.ncommand);
	for (size_t i = 0; i < e->ntr_cmd; i++)
		if (strchr(pins->trainer.command[i], '{') == NULL &&
		    !sv_is(e->tr_cmd[i], pins->trainer.command[i]))
			return evidence_fail(d, RBA_E_SCHEMA, "trainer.command[%zu] '%s' "
					     "is not the pins' '%s'", i,
					     sv_show(e->tr_cmd[i]),
					     pins->trainer.command[i]);
	if (e->tr_exit != 0)
		return evidence_fail(d, RBA_E_SCHEMA, "a verdict on a trainer run that "
				     "exited %.0f", e->tr_exit);
	if (!sv_eq(e->code.current, e->tr_commit))
		return evidence_fail(d, RBA_E_SCHEMA, "links.code_revision.current '%s' is "
				     "not the commit that ran", sv_show(e->code.current));
	if (!env_has(e->env_current_record, "sandbox.bwrap", e->tr_sandbox) ||
	    !env_has(e->env_current_record, "trainer.kind", sv_c("exec")))
		return evidence_fail(d, RBA_E_SCHEMA, "the current environment record "
				     "does not name the sandbox '%s' and an exec "
				     "trainer", sv_show(e->tr_sandbox));
	return 0;
}

static int
check_pins(const struct ev *e, const struct policy *pol, struct rba_detail *d)
{
	struct pins *pins = NULL;
	struct rba_digest cfg;
	char name[STORE_VERSION_NAME_MAX + 16];
	int err;

	snprintf(name, sizeof(name), "%s.artifact", sv_show(e->version));
	if (!sv_is(e->subject_name, name))
		return evidence_fail(d, RBA_E_SCHEMA, "subject name '%s' is not '%s'",
			   sv_show(e->subject_name), name);
	if (e->art_pinned.n != RBA_DIGEST_TEXT_LEN ||
	    e->subject_sha256.n != RBA_DIGEST_TEXT_LEN - 7 ||
	    memcmp(e->subject_sha256.s, e->art_pinned.s + 7,
		   e->subject_sha256.n) != 0)
		return evidence_fail(d, RBA_E_SCHEMA, "the subject's sha256 %s is not the "
			   "pinned artifact %s", sv_show(e->subject_sha256),
			   sv_show(e->art_pinned));
	err = policy_pins_parse(e->pins_text.s, e->pins_text.n, "pins", &pins, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err)
		return evidence_fail(d, RBA_E_SCHEMA, "the pins text does not parse: %s",
			   d->reason);
	if (strcmp(pins->version, sv_show(e->version)) != 0)
		err = evidence_fail(d, RBA_E_SCHEMA, "the pins are of version '%s', not '%s'",
			  pins->version, sv_show(e->version));
	else if (!pins->has_artifact || !digest_is(e->art_pinned, &pins->artifact))
		err = evidence_fail(d, RBA_E_SCHEMA, "the pins do not pin the subject's "
			  "artifact %s", sv_show(e->art_pinned));
	else if (!digest_is(e->snap_digest, &pins->snapshot))
		err = evidence_fail(d, RBA_E_SCHEMA, "the pins do not pin the snapshot %s",
			  sv_show(e->snap_digest));
	else if (pins->has_environment &&
		 !digest_is(e->env_pinned_digest, &pins->environment))
		err = evidence_fail(d, RBA_E_SCHEMA, "the pins do not pin the environment %s",
			  sv_show(e->env_pinned_digest));
	else if ((double)pins->trainer_abi != e->abi_pinned)
		err = evidence_fail(d, RBA_E_SCHEMA, "the pins pin trainer ABI %u, not %.0f",
			  (unsigned)pins->trainer_abi, e->abi_pinned);
	if (err == 0)
		err = check_trainer(e, pins, d);
	if (err == 0) {
		policy_pins_config_hash(pins, &cfg);
		if (!digest_is(e->config_hash, &cfg))
			err = evidence_fail(d, RBA_E_SCHEMA, "the pins' config hash is not "
				  "predicate.pins.config_hash %s",
				  sv_show(e->config_hash));
	}
	policy_pins_free(pins);
	if (err)
		return err;
	if (!sv_is(e->pol_rule, pol->argmax ? "argmax" : "bands") ||
	    e->tol_delta != pol->max_score_delta ||
	    e->tol_flips != (double)pol->max_flips ||
	    e->near_margin != pol->near_margin ||
	    e->near_bits != pol->near_require_bits ||
	    e->min_near != (double)pol->min_near_cases)
		return evidence_fail(d, RBA_E_SCHEMA, "the rule, tolerance or near-threshold "
			   "rule stated in predicate.policy is not the policy "
			   "text's");
	return 0;
}

/* The environment diff against the two records (check 4). */
static int
check_env(const struct ev *e, struct rba_detail *d)
{
	struct envrec a, b;
	struct envrec_delta *delta = NULL;
	size_t nd = 0;
	int err = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (!sv_is(e->env_state, "same") && !sv_is(e->env_state, "changed") &&
	    !sv_is(e->env_state, "unknown"))
		return evidence_fail(d, RBA_E_SCHEMA, "environment state '%s' is not same, "
			   "changed or unknown", sv_show(e->env_state));
	if (e->env_pinned_record.s == NULL || e->env_current_record.s == NULL ||
	    envrec_parse(e->env_pinned_record.s, e->env_pinned_record.n, &a,
			 NULL) != 0 ||
	    envrec_parse(e->env_current_record.s, e->env_current_record.n, &b,
			 NULL) != 0) {
		/* Nothing to compare field by field: the audit said so. */
		if (!sv_is(e->env_state, "unknown") || e->ndiff != 0)
			err = evidence_fail(d, RBA_E_SCHEMA, "the environment records cannot be "
				  "compared, yet the environment is '%s' with %zu "
				  "differing fields", sv_show(e->env_state), e->ndiff);
		goto out;
	}
	if ((err = envrec_diff(&a, &b, &delta, &nd)) != 0)
		goto out;
	if (nd != e->ndiff) {
		err = evidence_fail(d, RBA_E_SCHEMA, "predicate.environment.diff lists %zu "
			  "fields; the two records differ in %zu", e->ndiff, nd);
		goto out;
	}
	for (size_t i = 0; i < nd; i++) {
		if (!sv_eq(e->diff[i].key, sv_c(delta[i].key)) ||
		    !sv_eq(e->diff[i].pinned, sv_c(delta[i].old_value)) ||
		    !sv_eq(e->diff[i].current, sv_c(delta[i].new_value))) {
			err = evidence_fail(d, RBA_E_SCHEMA, "predicate.environment.diff[%zu] "
				  "is not the records' difference in '%s'", i,
				  delta[i].key);
			goto out;
		}
	}
	if (!sv_is(e->env_state, nd ? "changed" : "same"))
		err = evidence_fail(d, RBA_E_SCHEMA, "the environment is '%s', yet the records "
			  "differ in %zu fields", sv_show(e->env_state), nd);
out:
	free(delta);
	envrec_release(&a);
	envrec_release(&b);
	return err;
}

/* 1 for the two verdicts that answer yes. */
static int
is_yes(const char *verdict)
{
	return strcmp(verdict, "bit-identical") == 0 ||
	       strcmp(verdict, "metric-equivalent") == 0;
}

/*
 * The exit status a verdict gives (doc/design.md section 3.3): a yes 0,
 * or 2 when it was ad hoc (ad_hoc -1: the record does not say, either);
 * not-reproducible 1; not-measured 2.  1 when exit is one of them.
 */
static int
exit_fits(const char *verdict, double exit, int ad_hoc)
{
	if (is_yes(verdict))
		return ad_hoc == 1 ? exit == 2 : ad_hoc == 0 ? exit == 0
				   : exit == 0 || exit == 2;
	if (strcmp(verdict, "not-reproducible") == 0)
		return exit == 1;
	return strcmp(verdict, "not-measured") == 0 && exit == 2;
}

/*
 * Who judged, since when, and ad hoc, against each other and the
 * policy's source (audit/declared.h), where the record says.
 */
static int
check_declared(const struct ev *e, struct rba_detail *d)
{
	int64_t at = 0, t = 0;
	int option = sv_is(e->pol_source, "option");

	if (e->ad_hoc == 1 && !option)
		return evidence_fail(d, RBA_E_SCHEMA, "the audit was ad hoc, but its "
			   "policy's source is '%s', not 'option'",
			   sv_show(e->pol_source));
	if (e->ad_hoc == 1 && e->declared_at.s != NULL)
		return evidence_fail(d, RBA_E_SCHEMA, "the audit was ad hoc, yet its "
			   "policy is said to be declared at %s",
			   sv_show(e->declared_at));
	if (e->judged_by.s != NULL) {
		if (sv_is(e->judged_by, "option") != option)
			return evidence_fail(d, RBA_E_SCHEMA, "judged by '%s', but the "
				   "policy's source is '%s'", sv_show(e->judged_by),
				   sv_show(e->pol_source));
		if (e->ad_hoc == 1 && !sv_is(e->judged_by, "option"))
			return evidence_fail(d, RBA_E_SCHEMA, "the audit was ad hoc, but "
				   "judged by '%s'", sv_show(e->judged_by));
		if (e->ad_hoc != 1 && e->declared_at.s == NULL)
			return evidence_fail(d, RBA_E_SCHEMA, "judged by the %s's policy, "
				   "which is not ad hoc, without the time it was "
				   "declared", sv_show(e->judged_by));
	}
	if (e->declared_at.s != NULL) {
		if (rba_time_parse_utc(e->declared_at.s, e->declared_at.n, &at) != 0)
			return evidence_fail(d, RBA_E_SCHEMA, "policy.declared_at '%s' is "
				   "not a UTC time", sv_show(e->declared_at));
		if (e->time.s != NULL &&
		    rba_time_parse_utc(e->time.s, e->time.n, &t) == 0 && at > t)
			return evidence_fail(d, RBA_E_SCHEMA, "the policy was declared at "
				   "%s, after the audit at %s: it cannot have been "
				   "declared before it", sv_show(e->declared_at),
				   sv_show(e->time));
	}
	return 0;
}

/*
 * The sample claim stated whole: a count no larger than the sample, the
 * first case named exactly when one is off, a precision that is a
 * number of at least 0 (format 2 states both or neither).
 */
static int
check_sample_claim(const struct ev *e, struct rba_detail *d)
{
	int counted = !isnan(e->scores_off);

	if (counted != !isnan(e->score_precision) && e->format >= EV_FORMAT_V2)
		return evidence_fail(d, RBA_E_SCHEMA, "results.scores_off_precision "
			   "and sample.score_precision are not both stated or both "
			   "null");
	if (!isnan(e->score_precision) && !(e->score_precision >= 0))
		return evidence_fail(d, RBA_E_SCHEMA, "the declared logging precision "
			   "is below 0");
	if (!counted)
		return 0;
	if (e->scores_off > e->cases)
		return evidence_fail(d, RBA_E_SCHEMA, "%.0f stored scores off the "
			   "logging precision on a sample of %.0f cases",
			   e->scores_off, e->cases);
	if ((e->scores_off > 0) != (e->scores_off_case.s != NULL))
		return evidence_fail(d, RBA_E_SCHEMA, "%.0f stored scores off the "
			   "logging precision, %s", e->scores_off,
			   e->scores_off_case.s != NULL ? "yet a first such case is "
							  "named"
						        : "but no first case is named");
	return 0;
}

/*
 * The earlier audits (format 2, check 5): since the judging policy was
 * declared, in history order, before the record, each verdict with the
 * exit status it gives.  Whether they are all the history holds only
 * the store can say.
 */
static int
check_earlier(const struct ev *e, struct rba_detail *d)
{
	int64_t since = 0, t = 0;
	struct rba_digest dg;

	if (!sv_eq(e->earlier_since, e->declared_at))
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.history.earlier_since "
			   "is not the policy's declared_at %s",
			   sv_show(e->declared_at));
	if (e->earlier_since.s != NULL &&
	    rba_time_parse_utc(e->earlier_since.s, e->earlier_since.n, &since) != 0)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.history.earlier_since "
			   "is not a UTC time");
	for (size_t i = 0; i < e->nearlier; i++) {
		const struct ev_earlier *x = &e->earlier[i];
		if (x->id < 1 || (i > 0 && x->id <= e->earlier[i - 1].id))
			return evidence_fail(d, RBA_E_SCHEMA, "predicate.history."
				   "earlier_audits[%zu]: record %.0f is not in history "
				   "order", i, x->id);
		if (x->id >= e->id)
			return evidence_fail(d, RBA_E_SCHEMA, "predicate.history."
				   "earlier_audits[%zu]: record %.0f is not before the "
				   "audit record %.0f", i, x->id, e->id);
		if (rba_time_parse_utc(x->time, strlen(x->time), &t) != 0)
			return evidence_fail(d, RBA_E_SCHEMA, "predicate.history."
				   "earlier_audits[%zu]: time '%s' is not a UTC time",
				   i, x->time);
		if (e->earlier_since.s != NULL && t < since)
			return evidence_fail(d, RBA_E_SCHEMA, "predicate.history."
				   "earlier_audits[%zu]: record %.0f at %s is before "
				   "earlier_since %s", i, x->id, x->time,
				   sv_show(e->earlier_since));
		if (!is_yes(x->verdict) && strcmp(x->verdict, "not-reproducible") != 0 &&
		    strcmp(x->verdict, "not-measured") != 0)
			return evidence_fail(d, RBA_E_SCHEMA, "predicate.history."
				   "earlier_audits[%zu]: verdict '%s' is not one of "
				   "the four", i, x->verdict);
		if (!exit_fits(x->verdict, x->exit_status, x->ad_hoc))
			return evidence_fail(d, RBA_E_SCHEMA, "predicate.history."
				   "earlier_audits[%zu]: verdict %s with exit status "
				   "%.0f", i, x->verdict, x->exit_status);
		if (x->policy[0] != 0 ? rba_digest_parse(x->policy, &dg) != 0
				      : strcmp(x->verdict, "not-measured") != 0)
			return evidence_fail(d, RBA_E_SCHEMA, "predicate.history."
				   "earlier_audits[%zu]: a verdict %s without the "
				   "digest of its policy", i, x->verdict);
	}
	return 0;
}

/* What the checks of a verdict compare it with, computed once. */
struct verdict_facts {
	const char *v;		/* the verdict */
	char tv[32], dv[32];	/* the tolerated and the maximum score delta */
	int identical;		/* the rebuilt artifact is the pinned one */
	/* The artifact that made the sample's stored decisions: named by
	 * every record since the audit records it, and the rebuilt one? */
	int known, by_rebuilt;
	int within;		/* the counts within the tolerance */
	int near_rule;		/* cases near a band edge that want bits */
	/* The sample claim (doc/design.md section 8.2): stored scores off
	 * the declared logging precision, where the record counts them. */
	int off;
};

static void
verdict_facts_init(struct verdict_facts *vf, const struct ev *e)
{
	vf->v = sv_show(e->verdict);
	rba_json_fmt_double(e->tol_delta, vf->tv);
	rba_json_fmt_double(e->max_delta, vf->dv);
	vf->identical = e->art_rebuilt.s != NULL &&
			sv_eq(e->art_rebuilt, e->art_pinned);
	vf->known = e->art_decisions.s != NULL;
	vf->by_rebuilt = vf->known && e->art_rebuilt.s != NULL &&
			 sv_eq(e->art_decisions, e->art_rebuilt);
	vf->within = e->flips <= e->tol_flips && e->max_delta <= e->tol_delta;
	vf->near_rule = e->near_bits && e->near_cases > 0;
	vf->off = !isnan(e->scores_off) && e->scores_off > 0;
}

/* The artifact flags against the digests. */
static int
check_artifact_flags(const struct ev *e, const struct verdict_facts *vf,
		     struct rba_detail *d)
{
	if (e->bit_identical != vf->identical)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.artifact.bit_identical is %s, "
			   "but the rebuilt artifact %s the pinned one",
			   e->bit_identical ? "true" : "false",
			   vf->identical ? "is" : "is not");
	if (e->decisions_by_rebuilt != vf->by_rebuilt)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.artifact."
			   "decisions_by_rebuilt is %s, but the artifact that made "
			   "the stored decisions %s the rebuilt one",
			   e->decisions_by_rebuilt ? "true" : "false",
			   vf->by_rebuilt ? "is" : vf->known ? "is not" : "is not named as");
	return 0;
}

/* The verdict is one of the three, and what it claims holds. */
static int
check_verdict_claims(const struct ev *e, const struct verdict_facts *vf,
		     struct rba_detail *d)
{
	if (sv_is(e->verdict, "bit-identical") ||
	    sv_is(e->verdict, "metric-equivalent")) {
		int bits = sv_is(e->verdict, "bit-identical");
		if (e->nreasons > 0)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict %s comes with %zu reasons "
				   "against it", vf->v, e->nreasons);
		if (bits && !vf->identical)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict bit-identical, but the "
				   "rebuilt artifact %s is not the pinned %s",
				   sv_show(e->art_rebuilt), sv_show(e->art_pinned));
		/* Bits speak of the decisions under audit: an older record
		 * that does not name their artifact says nothing against. */
		if (bits && vf->known && !vf->by_rebuilt)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict bit-identical, but the "
				   "sample's stored decisions were made by artifact %s, "
				   "not by the rebuilt %s", sv_show(e->art_decisions),
				   sv_show(e->art_rebuilt));
		/* Two claims, not one: the stored scores are the pinned
		 * artifact's too. */
		if (bits && vf->off) {
			char pv[32];
			rba_json_fmt_double(e->score_precision > 0 ? e->score_precision
								   : 0, pv);
			return evidence_fail(d, RBA_E_SCHEMA, "verdict bit-identical, but "
				   "%.0f stored score%s of the audit sample %s not the "
				   "pinned artifact's (beyond the declared logging "
				   "precision %s): production did not run it bit for bit",
				   e->scores_off, e->scores_off == 1 ? "" : "s",
				   e->scores_off == 1 ? "is" : "are", pv);
		}
		if (!bits && e->art_rebuilt.s == NULL)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict metric-equivalent without "
				   "a rebuilt artifact");
		/* The rebuild is the pinned artifact that made the decisions:
		 * only stored scores that are not its bits (format 2 says so)
		 * leave it short of bit-identical. */
		if (!bits && vf->identical && (!vf->known || vf->by_rebuilt) &&
		    !(e->format >= EV_FORMAT_V2 && vf->known && vf->off))
			return evidence_fail(d, RBA_E_SCHEMA, "verdict metric-equivalent, but the "
				   "rebuilt artifact is the pinned one (bit-identical)%s",
				   vf->known ? " and made the sample's stored decisions" : "");
		if (e->flips > e->tol_flips)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict %s with %.0f decision "
				   "flips, over the tolerance of %.0f", vf->v, e->flips,
				   e->tol_flips);
		if (e->max_delta > e->tol_delta)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict %s with a maximum score "
				   "delta of %s, over the tolerance of %s", vf->v, vf->dv,
				   vf->tv);
		if (!bits && vf->near_rule)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict metric-equivalent, but %.0f "
				   "audit cases sit near a band edge where the policy "
				   "requires a bit-identical rebuild", e->near_cases);
		if (!e->art_verified || !e->snap_verified || !e->sample_verified)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict %s, but the stored "
				   "artifact, snapshot or sample was not verified", vf->v);
	} else if (sv_is(e->verdict, "not-reproducible")) {
		if (e->nreasons == 0)
			return evidence_fail(d, RBA_E_SCHEMA, "verdict not-reproducible without "
				   "a reason");
	} else {
		return evidence_fail(d, RBA_E_SCHEMA, "verdict '%s' is not bit-identical, "
			   "metric-equivalent or not-reproducible", vf->v);
	}
	return 0;
}

/* The flipped cases listed against the counts, the policy and the delta. */
static int
check_flipped(const struct ev *e, const struct policy *pol,
	      const struct verdict_facts *vf, struct rba_detail *d)
{
	if (e->listed != (double)e->nflipped)
		return evidence_fail(d, RBA_E_SCHEMA, "results.flipped_cases_listed is %.0f, "
			   "but %zu cases are listed", e->listed, e->nflipped);
	if ((double)e->nflipped > e->flips)
		return evidence_fail(d, RBA_E_SCHEMA, "%zu flipped cases listed, more than "
			   "the %.0f flips", e->nflipped, e->flips);
	if (e->flips > e->cases)
		return evidence_fail(d, RBA_E_SCHEMA, "%.0f flips on a sample of %.0f cases",
			   e->flips, e->cases);
	for (size_t i = 0; i < e->nflipped; i++) {
		const struct ev_flip *f = &e->flipped[i];
		const char *id = sv_show(f->id);
		if (f->stored_decision.s != NULL && f->rebuilt_decision.s != NULL &&
		    sv_eq(f->stored_decision, f->rebuilt_decision))
			return evidence_fail(d, RBA_E_SCHEMA, "flipped case '%s' keeps its "
				   "decision '%s'", id, sv_show(f->stored_decision));
		if (!pol->argmax && !isnan(f->rebuilt_score)) {
			const char *dec = policy_decide(pol, f->rebuilt_score, NULL);
			if (dec == NULL || !sv_is(f->rebuilt_decision, dec))
				return evidence_fail(d, RBA_E_SCHEMA, "flipped case '%s': the policy "
					   "decides its rebuilt score %s, not %s",
					   id, dec ? dec : "nothing",
					   sv_show(f->rebuilt_decision));
		}
		/* The delta is taken at binary32, the stored score rounded
		 * first (doc/design.md 8.2); records written before took it
		 * as the stored number was: either holds. */
		if (!pol->argmax && !isnan(f->stored_score) &&
		    !isnan(f->rebuilt_score) &&
		    fabs(f->stored_score - f->rebuilt_score) > e->max_delta &&
		    fabs((double)(float)f->stored_score - f->rebuilt_score) >
			    e->max_delta)
			return evidence_fail(d, RBA_E_SCHEMA, "flipped case '%s' moved by more "
				   "than the maximum score delta %s", id, vf->dv);
		if ((f->inputs != NULL) != (e->inputs_included != 0))
			return evidence_fail(d, RBA_E_SCHEMA, "flipped case '%s' %s inputs, but "
				   "inputs_included is %s", id,
				   f->inputs ? "has" : "lacks",
				   e->inputs_included ? "true" : "false");
	}
	return 0;
}

/* The verdict against the digests, counts and tolerance (check 5). */
static int
check_verdict(const struct ev *e, const struct policy *pol,
	      struct rba_detail *d)
{
	char g[EVIDENCE_TEXT_MAX], ng[EVIDENCE_TEXT_MAX];
	struct verdict_facts vf;
	int err;

	verdict_facts_init(&vf, e);
	if ((err = check_artifact_flags(e, &vf, d)) != 0 ||
	    (err = check_verdict_claims(e, &vf, d)) != 0)
		return err;
	if (!vf.within && e->nreasons == 0)
		return evidence_fail(d, RBA_E_SCHEMA, "the counts exceed the tolerance, yet no "
			   "reason says so");
	if (!exit_fits(vf.v, e->exit_status, e->ad_hoc))
		return evidence_fail(d, RBA_E_SCHEMA, "verdict %s with exit status %.0f, %s",
			   vf.v, e->exit_status,
			   !is_yes(vf.v) ? "not the one the verdict gives"
			   : e->ad_hoc == 1 ? "but the audit was ad hoc: a yes under a "
					      "policy given for this audit exits 2"
			   : e->ad_hoc == 0 ? "but a yes that was not ad hoc exits 0"
					    : "not 0 (or 2 for an ad hoc audit)");
	if ((err = check_sample_claim(e, d)) != 0 ||
	    (err = check_declared(e, d)) != 0 ||
	    (e->format >= EV_FORMAT_V2 && (err = check_earlier(e, d)) != 0))
		return err;
	if ((err = check_flipped(e, pol, &vf, d)) != 0)
		return err;

	evidence_guarantee_text(e, pol, g, ng, sizeof(g));
	if (!sv_is(e->guarantee, g))
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.guarantee is not the "
			   "guarantee of verdict %s", vf.v);
	if (!sv_is(e->not_guaranteed, ng))
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.not_guaranteed is not what "
			   "verdict %s leaves out", vf.v);
	return 0;
}

/*
 * The history head at export against the record (check 6): a head
 * older than the record it exports cannot be; the record itself as the
 * head has its own chain digest.  Beyond that only the store can tell
 * (history --verify --head): the signature vouches for the head.
 */
static int
check_head(const struct ev *e, struct rba_detail *d)
{
	if (e->head_id < e->id)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.history.head.id %.0f is "
			   "below the audit record's id %.0f: the head at export "
			   "cannot be older than the record exported", e->head_id,
			   e->id);
	if (e->head_id == e->id && !sv_eq(e->head_digest, e->chain))
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.history.head is record "
			   "%.0f, the audit record itself, but its digest %s is not "
			   "the record's chain digest %s", e->head_id,
			   sv_show(e->head_digest), sv_show(e->chain));
	return 0;
}

/* Offset of the first differing byte of two texts. */
static size_t
first_diff(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t i = 0;

	while (i < an && i < bn && a[i] == b[i])
		i++;
	return i;
}

/* "line L ('key')" of the text at offset off, for messages. */
static void
where(const uint8_t *p, size_t n, size_t off, char *out, size_t cap)
{
	size_t line = 1, start = 0, i;
	const uint8_t *q, *end;

	for (i = 0; i < off && i < n; i++)
		if (p[i] == '\n') {
			line++;
			start = i + 1;
		}
	q = memchr(p + start, '"', n - start);
	end = q != NULL ? memchr(q + 1, '"', n - (size_t)(q + 1 - p)) : NULL;
	if (q != NULL && end != NULL && end - q < 64 &&
	    memchr(p + start, '\n', (size_t)(q - (p + start))) == NULL)
		snprintf(out, cap, "line %zu ('%.*s')", line, (int)(end - q - 1),
			 (const char *)q + 1);
	else
		snprintf(out, cap, "line %zu", line);
}

static int
has_duplicate_keys(const struct rba_json_value *v)
{
	if (v->type == RBA_JSON_OBJECT)
		for (size_t i = 0; i < v->n; i++)
			for (size_t j = i + 1; j < v->n; j++)
				if (strcmp(v->keys[i], v->keys[j]) == 0)
					return 1;
	if (v->type == RBA_JSON_OBJECT || v->type == RBA_JSON_ARRAY)
		for (size_t i = 0; i < v->n; i++)
			if (has_duplicate_keys(&v->items[i]))
				return 1;
	return 0;
}

/* The trusted comment, when it claims evidence, names this evidence. */
static int
check_comment(const struct ev *e, const char *tc, struct rba_detail *d)
{
	char want[SIGN_TRUSTED_COMMENT_MAX + 1];
	size_t plen = strlen(EVIDENCE_COMMENT_PREFIX), wn;

	if (tc == NULL || strncmp(tc, EVIDENCE_COMMENT_PREFIX, plen) != 0)
		return 0;
	snprintf(want, sizeof(want), "%sversion %s verdict %s audit %.0f at %s "
		 "file ", EVIDENCE_COMMENT_PREFIX, sv_show(e->version),
		 sv_show(e->verdict), e->id, sv_show(e->time));
	wn = strlen(want);
	if (strncmp(tc, want, wn) != 0 || tc[wn] == '\0')
		return evidence_fail(d, RBA_E_SCHEMA, "the trusted comment does not name this "
			   "evidence (version %s, verdict %s, audit %.0f at %s)",
			   sv_show(e->version), sv_show(e->verdict), e->id,
			   sv_show(e->time));
	return 0;
}

/* The file against what the statement it holds renders to. */
static int
check_rendering(const struct ev *e, const uint8_t *p, size_t n,
		const char *what, struct rba_detail *d)
{
	struct rba_buf b;
	char at[128];
	size_t off;
	int err;

	rba_buf_init(&b);
	evidence_ev_render(e, &b);
	if ((err = rba_buf_status(&b)) != 0)
		goto out;
	if (b.len != n || memcmp(b.p, p, n) != 0) {
		off = first_diff(p, n, b.p, b.len);
		where(p, n, off, at, sizeof(at));
		err = evidence_fail(d, RBA_E_SCHEMA, "%s at %s", what, at);
	}
out:
	rba_buf_release(&b);
	return err;
}

int
evidence_ev_record_consistent(const struct ev *r, const struct policy *pol,
			      struct rba_detail *d)
{
	int err;

	if ((err = check_texts(r, d)) != 0 || (err = check_pins(r, pol, d)) != 0 ||
	    (err = check_env(r, d)) != 0 || (err = check_verdict(r, pol, d)) != 0)
		return err;
	return 0;
}

/* A record that did not measure: a reason and exit status 2. */
static int
not_measured_consistent(const struct rba_json_value *rec, struct rba_detail *d)
{
	const struct rba_json_value *rs = rba_json_get(rec, "reasons");
	const struct rba_json_value *es = rba_json_get(rec, "exit_status");
	const char *schema = rba_json_get_str(rec, "schema");

	if (schema == NULL || strcmp(schema, AUDIT_RECORD_SCHEMA) != 0)
		return evidence_fail(d, schema != NULL &&
				     strncmp(schema, EVIDENCE_AUDIT_SCHEMA_PREFIX,
					     strlen(EVIDENCE_AUDIT_SCHEMA_PREFIX)) == 0
				     ? RBA_E_NEWER : RBA_E_SCHEMA,
				     "the audit record has schema '%s'; this tool "
				     "reads %s", schema != NULL ? schema : "(none)",
				     AUDIT_RECORD_SCHEMA);
	if (es == NULL || es->type != RBA_JSON_NUMBER || es->num != 2)
		return evidence_fail(d, RBA_E_SCHEMA, "verdict not-measured with an "
			   "exit status other than 2");
	if (rs == NULL || rs->type != RBA_JSON_ARRAY || rs->n == 0 ||
	    rs->items[0].type != RBA_JSON_STRING)
		return evidence_fail(d, RBA_E_SCHEMA, "verdict not-measured without a "
			   "reason");
	return 0;
}

int
evidence_record_check(const void *p, size_t n, struct rba_detail *d)
{
	struct rba_detail local;
	struct rba_json_value rec;
	struct policy *pol = NULL;
	struct ev r;
	const char *verdict;
	int err;

	if (d == NULL)
		d = &local;
	memset(&rec, 0, sizeof(rec));
	memset(&r, 0, sizeof(r));
	err = rba_json_parse(p, n, &rec, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err)
		return evidence_fail(d, RBA_E_SCHEMA, "the audit record is not JSON: %s",
				     d->reason);
	verdict = rba_json_get_str(&rec, "verdict");
	if (verdict != NULL && strcmp(verdict, "not-measured") == 0) {
		err = not_measured_consistent(&rec, d);
		goto out;
	}
	if ((err = evidence_ev_from_record(&rec, 0, &r, d)) != 0)
		goto out;
	r.format = EV_FORMAT_V2;
	r.time = r.rec_time;
	r.record.s = p;
	r.record.n = n;
	/* What the record does not hold, so that the checks of evidence
	 * alone apply: no history around it. */
	r.earlier_since = r.declared_at;
	if ((err = evidence_ev_complete(&r, d)) != 0 ||
	    (err = evidence_ev_policy(&r, &pol, d)) != 0)
		goto out;
	err = evidence_ev_record_consistent(&r, pol, d);
out:
	policy_free(pol);
	evidence_ev_release(&r);
	rba_json_release(&rec);
	return err;
}

/*
 * Which format the statement says it is (into E), or with IS_EVIDENCE
 * left 0 that it is no evidence and does not claim to be.
 */
static int
statement_format(const struct rba_json_value *root, int claims, struct ev *e,
		 int *is_evidence, struct rba_detail *d)
{
	const char *type, *ptype;
	/* A file naming this predicate is evidence, whatever else it says. */
	type = rba_json_get_str(root, "_type");
	ptype = rba_json_get_str(root, "predicateType");
	if (ptype == NULL || strncmp(ptype, EVIDENCE_PREDICATE_PREFIX,
				     strlen(EVIDENCE_PREDICATE_PREFIX)) != 0) {
		if (claims)
			return evidence_fail(d, RBA_E_SCHEMA, "the trusted comment claims evidence, "
				  "but the file is not an in-toto statement with "
				  "predicateType %s", EVIDENCE_PREDICATE_TYPE);
		return 0;
	}
	if (strcmp(ptype, EVIDENCE_PREDICATE_TYPE_V4) == 0) {
		/* v2's members, or v3's with every case, and the log. */
		const struct rba_json_value *res =
			rba_json_get(rba_json_get(root, "predicate"), "results");
		e->format = rba_json_get(res, "cases") != NULL ? EV_FORMAT_V3
							      : EV_FORMAT_V2;
		e->log = 1;
	} else if (strcmp(ptype, EVIDENCE_PREDICATE_TYPE_V3) == 0) {
		e->format = EV_FORMAT_V3;
	} else if (strcmp(ptype, EVIDENCE_PREDICATE_TYPE) == 0) {
		e->format = EV_FORMAT_V2;
	} else if (strcmp(ptype, EVIDENCE_PREDICATE_TYPE_V1) == 0) {
		e->format = EV_FORMAT_V1;
	} else {
		return evidence_fail(d, RBA_E_NEWER, "predicateType %s is not %s, %s, %s or "
			  "%s, which this tool checks", ptype, EVIDENCE_PREDICATE_TYPE_V1,
			  EVIDENCE_PREDICATE_TYPE, EVIDENCE_PREDICATE_TYPE_V3,
			  EVIDENCE_PREDICATE_TYPE_V4);
	}
	if (type == NULL || strcmp(type, EVIDENCE_STATEMENT_TYPE) != 0)
		return evidence_fail(d, RBA_E_SCHEMA, "_type is not %s", EVIDENCE_STATEMENT_TYPE);
	*is_evidence = 1;
	return 0;
}

/* 1. form: no key twice, the model read, its canonical bytes, its time (into T). */
static int
check_form(const struct rba_json_value *root, struct ev *e, const uint8_t *u,
	   size_t n, int64_t *t, struct rba_detail *d)
{
	int err;

	if (has_duplicate_keys(root))
		return evidence_fail(d, RBA_E_SCHEMA, "an object has a key twice");
	if ((err = evidence_ev_from_statement(root, e, d)) != 0)
		return err;
	if ((err = check_rendering(e, u, n, "not in the canonical form of "
				   "rebuild-audit-evidence(5)", d)) != 0)
		return err;
	if (rba_time_parse_utc(e->time.s, e->time.n, t) != 0)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.audit.time '%s' is not a "
			  "UTC time", sv_show(e->time));
	return 0;
}

/* 6. the record and its place in the chain: the digests and the head. */
static int
check_chain(const struct ev *e, int64_t t, struct rba_detail *d)
{
	struct rba_digest prev, chain, got;

	if (rba_digest_parse(e->prev.s, &prev) != 0 ||
	    rba_digest_parse(e->chain.s, &chain) != 0) {
		return evidence_fail(d, RBA_E_SCHEMA, "bad chain digests");
	}
	store_history_digest(&prev, (uint64_t)e->id, t, e->version.s, e->version.n,
			     e->record.s, e->record.n, &got);
	if (!rba_digest_equal(&got, &chain))
		return evidence_fail(d, RBA_E_TAMPERED, "the embedded audit record, its id, "
			  "time and version do not give predicate.audit."
			  "chain_digest %s", sv_show(e->chain));
	return check_head(e, d);
}

/*
 * The embedded audit record parsed into REC and read into R; its
 * decisions' artifact and time are the predicate's.
 */
static int
read_embedded_record(const struct ev *e, struct rba_json_value *rec,
		     struct ev *r, struct rba_detail *d)
{
	int err;

	err = rba_json_parse(e->record.s, e->record.n, rec, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err)
		return evidence_fail(d, RBA_E_SCHEMA, "the embedded audit record is not JSON: "
			  "%s", d->reason);
	if ((err = evidence_ev_from_record(rec, (uint64_t)e->id, r, d)) != 0) {
		if (err != RBA_E_NOMEM && err != RBA_E_NEWER)
			err = RBA_E_SCHEMA;
		return err;
	}
	/* The predicate's copy of the decisions' artifact is the record's. */
	if (!sv_eq(r->art_decisions, e->art_decisions))
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.artifact.decisions %s is "
			  "not the embedded audit record's digests."
			  "artifact_decisions %s", sv_show(e->art_decisions),
			  r->art_decisions.s != NULL ? r->art_decisions.s
						    : "(none)");
	if (!sv_eq(r->rec_time, e->time))
		return evidence_fail(d, RBA_E_SCHEMA, "the embedded audit record's time %s is "
			  "not predicate.audit.time %s", sv_show(r->rec_time),
			  sv_show(e->time));
	return 0;
}

/* What export adds to the record, taken from the predicate E into R. */
static int
adopt_export(struct ev *r, const struct ev *e)
{
	r->format = e->format;
	r->id = e->id;
	r->time = e->time;
	r->store_id = e->store_id;
	r->head_id = e->head_id;
	r->head_digest = e->head_digest;
	r->prev = e->prev;
	r->chain = e->chain;
	r->record = e->record;
	r->exp_name = e->exp_name;
	r->exp_version = e->exp_version;
	r->exp_rev = e->exp_rev;
	r->inputs_included = e->inputs_included;
	for (size_t i = 0; i < r->nflipped && i < e->nflipped; i++)
		r->flipped[i].inputs = e->flipped[i].inputs;
	/* The cases are export's, not the record's: checked above. */
	r->cases_list = e->cases_list;
	r->ncases_list = e->ncases_list;
	r->cases_view = 1;
	/* The log is export's too: checked below (8). */
	r->log = e->log;
	r->log_view = 1;
	r->log_checkpoint = e->log_checkpoint;
	r->log_index = e->log_index;
	r->log_size = e->log_size;
	r->log_proof = e->log_proof;
	r->nlog_proof = e->nlog_proof;
	/* From the history, not the record: the signature vouches. */
	r->earlier_since = e->earlier_since;
	if (e->nearlier > 0) {
		r->earlier = malloc(e->nearlier * sizeof(*r->earlier));
		if (r->earlier == NULL)
			return RBA_E_NOMEM;
		memcpy(r->earlier, e->earlier, e->nearlier * sizeof(*r->earlier));
		r->nearlier = e->nearlier;
	}
	return 0;
}

/* The embedded record, completed, is consistent and renders as the file. */
static int
check_record_agrees(struct ev *r, const struct policy *pol, const uint8_t *u,
		    size_t n, struct rba_detail *d)
{
	int err;

	if ((err = evidence_ev_complete(r, d)) != 0)
		return err;
	/* The embedded record is consistent by itself: what a first-format
	 * predicate does not state (the sample claim, ad hoc) is held to
	 * the record's. */
	if ((err = evidence_ev_record_consistent(r, pol, d)) != 0) {
		char why[sizeof(d->reason)];
		if (err == RBA_E_NOMEM)
			return err;
		snprintf(why, sizeof(why), "%s", d->reason);
		return evidence_fail(d, err, "the embedded audit record: %s", why);
	}
	if ((err = check_rendering(r, u, n, "the predicate does not agree with "
				   "its embedded audit record", d)) != 0)
		return err;
	return 0;
}

/* The summary of checked evidence E, its record R. */
static void
summary_from_check(const struct ev *e, const struct ev *r, int64_t t,
		   struct evidence_summary *sum)
{
	sum->is_evidence = 1;
	snprintf(sum->version, sizeof(sum->version), "%s", sv_show(e->version));
	snprintf(sum->verdict, sizeof(sum->verdict), "%s", sv_show(e->verdict));
	sum->audit_id = (uint64_t)e->id;
	sum->time = t;
	snprintf(sum->time_text, sizeof(sum->time_text), "%s", sv_show(e->time));
	rba_digest_parse(e->art_pinned.s, &sum->artifact);
	sum->cases = (uint64_t)e->cases;
	sum->flips = (uint64_t)e->flips;
	sum->inputs_included = e->inputs_included;
	snprintf(sum->guarantee, sizeof(sum->guarantee), "%s",
		 sv_show(e->guarantee));
	sum->head_id = (uint64_t)e->head_id;
	rba_digest_parse(e->head_digest.s, &sum->head);
	/* Who judged and ad hoc from the checked record, so that a
	 * first-format file says them too. */
	evidence_ev_summary_fill(r, sum);
}

int
evidence_check(const void *p, size_t n, const char *trusted_comment,
	       struct evidence_summary *sum, struct rba_detail *d)
{
	const uint8_t *u = p;
	struct rba_detail local;
	struct rba_json_value root, rec;
	struct ev e, r;
	struct policy *pol = NULL;
	int claims, is_evidence = 0, err = 0;
	int64_t t = 0;
	size_t off = 0;

	if (d == NULL)
		d = &local;
	memset(&root, 0, sizeof(root));
	memset(&rec, 0, sizeof(rec));
	memset(&e, 0, sizeof(e));
	memset(&r, 0, sizeof(r));
	if (sum != NULL)
		memset(sum, 0, sizeof(*sum));
	claims = trusted_comment != NULL &&
		 strncmp(trusted_comment, EVIDENCE_COMMENT_PREFIX,
			 strlen(EVIDENCE_COMMENT_PREFIX)) == 0;
	if (n > EVIDENCE_MAX_BYTES)
		return claims ? evidence_fail(d, RBA_E_LIMIT, "evidence over %u bytes: not "
				    "checked", EVIDENCE_MAX_BYTES)
			      : 0;

	/* Is it evidence at all? */
	if (!rba_utf8_valid(u, n, &off)) {
		if (!claims)
			return 0;
		return evidence_fail(d, RBA_E_SCHEMA, "the trusted comment claims evidence, "
			   "but the file is not UTF-8 (byte %zu)", off + 1);
	}
	err = rba_json_parse(p, n, &root, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err) {
		if (!claims)
			return 0;
		if (err == RBA_E_LIMIT)
			return err;
		return evidence_fail(d, RBA_E_SCHEMA, "the trusted comment claims evidence, "
			   "but the file is not JSON (byte %lu: %s)", d->col,
			   d->reason);
	}
	if ((err = statement_format(&root, claims, &e, &is_evidence, d)) != 0 ||
	    !is_evidence)
		goto out;
	if ((err = check_form(&root, &e, u, n, &t, d)) != 0)
		goto out;
	/* 2-5 */
	if ((err = check_texts(&e, d)) != 0)
		goto out;
	if ((err = evidence_ev_policy(&e, &pol, d)) != 0 ||
	    (err = check_pins(&e, pol, d)) != 0 ||
	    (err = check_env(&e, d)) != 0 ||
	    (err = check_verdict(&e, pol, d)) != 0 ||
	    (e.format >= EV_FORMAT_V3 && (err = evidence_cases_check(&e, pol, d)) != 0))
		goto out;
	/* 6. the record, its place in the chain, and what it says */
	if ((err = check_chain(&e, t, d)) != 0 ||
	    (err = read_embedded_record(&e, &rec, &r, d)) != 0 ||
	    (err = adopt_export(&r, &e)) != 0 ||
	    (err = check_record_agrees(&r, pol, u, n, d)) != 0)
		goto out;

	/* 7. */
	if ((err = check_comment(&e, trusted_comment, d)) != 0)
		goto out;
	/* 8. the log: the record's inclusion proof in the checkpoint */
	if (e.log && (err = evidence_tlog_check(&e, sum != NULL ? &sum->log : NULL,
						d)) != 0)
		goto out;

	if (sum != NULL)
		summary_from_check(&e, &r, t, sum);
out:
	policy_free(pol);
	evidence_ev_release(&r);
	evidence_ev_release(&e);
	rba_json_release(&rec);
	rba_json_release(&root);
	return err;
}

