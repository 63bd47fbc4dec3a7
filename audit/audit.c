/*
 * audit.c - audit_version: verify, diff, rebuild, score the sample,
 * verdict, record (the steps are listed in audit.h).
 */
#include "audit/audit.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit_pass.h"
#include "audit/declared.h"
#include "audit/inputs.h"
#include "rebuild/runs.h"
#include "common/rbatime.h"
#include "common/seam.h"
#include "common/strv.h"
#include "common/json.h"
#include "sample/scorer.h"
#include "train/envrec.h"
#include "exec/exec.h"

const char *
audit_verdict_name(int verdict)
{
	switch (verdict) {
	case AUDIT_BIT_IDENTICAL: return "bit-identical";
	case AUDIT_METRIC_EQUIVALENT: return "metric-equivalent";
	case AUDIT_NOT_REPRODUCIBLE: return "not-reproducible";
	default: return "not-measured";
	}
}

int
audit_verdict_exit(int verdict)
{
	switch (verdict) {
	case AUDIT_BIT_IDENTICAL:
	case AUDIT_METRIC_EQUIVALENT: return 0;
	case AUDIT_NOT_REPRODUCIBLE: return 1;
	default: return 2;
	}
}

static void
link_release(struct audit_link *l)
{
	free(l->pinned);
	free(l->current);
	free(l->note);
}

void
audit_report_release(struct audit_report *r)
{
	if (r == NULL)
		return;
	free(r->version);
	free(r->rebuilt_bytes);
	rba_strv_free(r->reasons, r->nreasons);
	rba_strv_free(r->warnings, r->nwarnings);
	free(r->error_what);
	free(r->pins_text);
	free(r->policy_text);
	link_release(&r->code_revision);
	link_release(&r->trainer_abi);
	link_release(&r->environment);
	link_release(&r->config);
	link_release(&r->snapshot_link);
	free(r->env_pinned_text);
	free(r->env_current_text);
	free(r->exec_repository);
	free(r->exec_command);
	for (size_t i = 0; i < r->nenv_fields; i++) {
		free(r->env_fields[i].key);
		free(r->env_fields[i].pinned);
		free(r->env_fields[i].current);
	}
	free(r->env_fields);
	free(r->max_delta_case);
	free(r->scores_off_case);
	for (size_t i = 0; i < r->nlisted; i++)
		audit_flip_release(&r->listed[i]);
	free(r->listed);
	memset(r, 0, sizeof(*r));
}

static char *
dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* A reason or warning that could not be kept marks the report (r->oom),
 * which is then not recorded. */
#define REASON(r, ...) \
	((r)->oom |= rba_strv_add(&(r)->reasons, &(r)->nreasons, \
				  rba_strdupf(__VA_ARGS__)) != 0)
#define WARN(r, ...) \
	((r)->oom |= rba_strv_add(&(r)->warnings, &(r)->nwarnings, \
				  rba_strdupf(__VA_ARGS__)) != 0)

static char *
hexdup(const struct rba_digest *dg)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(dg, hex);
	return strdup(hex);
}

/*
 * Whether every text the links of r should hold is there: a copy that
 * failed for want of memory leaves a NULL where a digest or a note was
 * written, and a record with holes would say less than was found.
 */
static int
links_whole(const struct audit_report *r)
{
	const struct audit_link *l[] = { &r->code_revision, &r->trainer_abi,
					 &r->environment, &r->config,
					 &r->snapshot_link };

	if (r->pins_text != NULL && (r->env_pinned_text == NULL ||
				     r->env_current_text == NULL))
		return 0;
	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		if (l[i] != &r->trainer_abi && l[i]->current == NULL)
			return 0;
	return 1;
}

/* ---- links ------------------------------------------------------------ */

static void
set_link(struct audit_link *l, int state, char *pinned, char *current,
	 char *note)
{
	l->state = state;
	l->pinned = pinned;
	l->current = current;
	l->note = note;
}

/* What differs in shape between the stored and the rebuilt model. */
static const char *
shape_difference(const struct artifact *a, const struct artifact *b)
{
	const struct encode_spec *s = &a->spec, *t = &b->spec;

	if (s->nclasses != t->nclasses || s->positive != t->positive)
		return "classes";
	for (uint32_t i = 0; i < s->nclasses; i++)
		if (strcmp(s->classes[i], t->classes[i]) != 0)
			return "classes";
	if (s->ncolumns != t->ncolumns)
		return "input columns";
	for (uint32_t i = 0; i < s->ncolumns; i++) {
		const struct encode_column *x = &s->columns[i], *y = &t->columns[i];
		if (strcmp(x->name, y->name) != 0 || x->kind != y->kind)
			return "input columns";
		if (x->nlevels != y->nlevels)
			return "categorical levels";
		for (uint32_t k = 0; k < x->nlevels; k++)
			if (strcmp(x->levels[k], y->levels[k]) != 0)
				return "categorical levels";
	}
	if (a->model.kind != b->model.kind)
		return "model kind";
	if (a->model.nlayers != b->model.nlayers)
		return "layers";
	for (uint32_t l = 0; l <= a->model.nlayers; l++)
		if (a->model.sizes[l] != b->model.sizes[l])
			return "layer sizes";
	return NULL;
}

static int
env_links(struct audit_inputs *c, struct audit_report *r)
{
	struct rba_buf cur;
	struct envrec pinned, now;
	struct envrec_delta *delta = NULL;
	size_t nd = 0;
	int err;

	memset(&pinned, 0, sizeof(pinned));
	memset(&now, 0, sizeof(now));
	rba_buf_init(&cur);
	/* An exec version's record is of its sandbox, packages, variables
	 * and probe (exec/exec.h); a change is a changed link. */
	err = c->kind->envrec(c->pins, &cur, NULL);
	if (err == 0)
		err = rba_buf_status(&cur);
	if (err)
		goto out;
	r->env_current_text = strdup(rba_buf_cstr(&cur));
	r->env_pinned_text = strdup(c->v.env_text ? c->v.env_text : "");
	if (r->env_current_text == NULL || r->env_pinned_text == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	envrec_digest((const char *)cur.p, cur.len, &r->env_current);
	r->env_pinned = c->pins->environment;
	{
		/* Pins that declared an environment digest keep it (register):
		 * the record the store holds is then the registering
		 * machine's, not the declared one, and cannot be compared
		 * field by field. */
		struct rba_digest held;
		envrec_digest(r->env_pinned_text, strlen(r->env_pinned_text),
			      &held);
		if (!rba_digest_equal(&held, &r->env_pinned)) {
			int same = rba_digest_equal(&r->env_pinned,
						    &r->env_current);
			set_link(&r->environment,
				 same ? AUDIT_LINK_SAME : AUDIT_LINK_CHANGED,
				 hexdup(&r->env_pinned), hexdup(&r->env_current),
				 strdup("the pins declare this environment; the "
					"store holds no record of it to compare "
					"field by field"));
			goto out;
		}
	}
	/* Out of memory is no answer about the record: the audit stops. */
	if ((err = envrec_parse(r->env_pinned_text, strlen(r->env_pinned_text),
				&pinned, NULL)) == RBA_E_NOMEM)
		goto out;
	if (err != 0) {
		err = 0;
		set_link(&r->environment, AUDIT_LINK_UNKNOWN,
			 hexdup(&r->env_pinned), hexdup(&r->env_current),
			 strdup("the pinned environment record cannot be read"));
		goto out;
	}
	if ((err = envrec_parse((const char *)cur.p, cur.len, &now, NULL)) != 0 ||
	    (err = envrec_diff(&pinned, &now, &delta, &nd)) != 0)
		goto out;
	r->env_fields = calloc(nd ? nd : 1, sizeof(*r->env_fields));
	if (r->env_fields == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	r->nenv_fields = nd;
	for (size_t i = 0; i < nd; i++) {
		struct audit_env_field *f = &r->env_fields[i];
		f->key = strdup(delta[i].key);
		f->pinned = dup0(delta[i].old_value);
		f->current = dup0(delta[i].new_value);
		if (f->key == NULL || (delta[i].old_value && f->pinned == NULL) ||
		    (delta[i].new_value && f->current == NULL)) {
			err = RBA_E_NOMEM;
			goto out;
		}
	}
	set_link(&r->environment, nd ? AUDIT_LINK_CHANGED : AUDIT_LINK_SAME,
		 hexdup(&r->env_pinned), hexdup(&r->env_current), NULL);
out:
	free(delta);
	envrec_release(&pinned);
	envrec_release(&now);
	rba_buf_release(&cur);
	return err;
}

static int
links(struct audit_inputs *c, struct audit_report *r)
{
	const char *rev_then = c->has_prov ? c->prov.code_revision
					   : c->pins->code_revision;
	const char *rev_now = c->kind->code_revision(c->pins);
	int err;

	r->abi_pinned = c->pins->trainer_abi;
	r->abi_artifact = c->stored.abi;
	r->abi_current = rebuild_abi_current();
	policy_pins_config_hash(c->pins, &r->config_current);
	if (c->has_prov) {
		r->has_config_registered = 1;
		r->config_registered = c->prov.config;
	}
	if ((err = env_links(c, r)) != 0)
		return err;
	if (rev_then == NULL)
		set_link(&r->code_revision, AUDIT_LINK_UNKNOWN, NULL, strdup(rev_now),
			 strdup("the pins record no code revision"));
	else
		set_link(&r->code_revision,
			 strcmp(rev_then, rev_now) ? AUDIT_LINK_CHANGED : AUDIT_LINK_SAME,
			 strdup(rev_then), strdup(rev_now),
			 c->has_prov ? NULL
			 : c->prov_foreign
				 ? strdup("the revision the pins give; the store's "
					  "record of the artifact's training is "
					  "another registration's, and none says "
					  "which code trained it for this version")
				 : strdup("the revision the pins give; the "
					  "artifact came from a file, and no "
					  "record says which code trained it"));
	/* trainer ABI: filled in once the rebuild says which ABI ran */
	if (c->has_prov) {
		int same = rba_digest_equal(&c->prov.config, &r->config_current);
		set_link(&r->config, same ? AUDIT_LINK_SAME : AUDIT_LINK_CHANGED,
			 hexdup(&c->prov.config), hexdup(&r->config_current),
			 same ? NULL
			      : strdup("the pins were edited after the artifact "
				       "was trained"));
		same = rba_digest_equal(&c->prov.snapshot, &c->v.snapshot);
		set_link(&r->snapshot_link, same ? AUDIT_LINK_SAME : AUDIT_LINK_CHANGED,
			 hexdup(&c->prov.snapshot), hexdup(&c->v.snapshot), NULL);
	} else if (c->prov_foreign) {
		/* An earlier store kept provenance with the artifact's bytes,
		 * and another registration of them wrote it last. */
		set_link(&r->config, AUDIT_LINK_UNKNOWN, NULL,
			 hexdup(&r->config_current),
			 strdup("the store's record of the artifact's training "
				"(kept with the artifact by an earlier tool) is "
				"another registration's: none says which pins "
				"trained it for this version"));
		set_link(&r->snapshot_link, AUDIT_LINK_UNKNOWN, NULL,
			 hexdup(&c->v.snapshot),
			 strdup("no record of the snapshot that trained the "
				"artifact for this version"));
	} else {
		set_link(&r->config, AUDIT_LINK_UNKNOWN, NULL,
			 hexdup(&r->config_current),
			 strdup("the artifact was registered from a file: the store "
				"has no record of the pins that trained it"));
		set_link(&r->snapshot_link, AUDIT_LINK_UNKNOWN, NULL,
			 hexdup(&c->v.snapshot),
			 strdup("no record of the snapshot that trained the artifact"));
	}
	return 0;
}

/* An exec version's rebuild: what ran, for the record's trainer
 * member, and the trainer link, which names the code that ran where a
 * builtin version's names an ABI. */
static void
exec_links(struct audit_inputs *c, struct audit_report *r)
{
	r->exec_repository = strdup(c->pins->trainer.repository);
	r->exec_command = strdup(c->xrun.argv_text);
	memcpy(r->exec_commit, c->xrun.commit, 41);
	memcpy(r->exec_tree, c->xrun.tree, 41);
	r->exec_exit = c->xrun.sb.status;
	r->exec_seconds = c->xrun.sb.seconds;
	r->exec_stdout = c->xrun.sb.out_digest;
	r->exec_stderr = c->xrun.sb.err_digest;
	r->oom |= r->exec_repository == NULL || r->exec_command == NULL;
	set_link(&r->trainer_abi, AUDIT_LINK_SAME, strdup("exec"), strdup("exec"),
		 rba_strdupf("an exec trainer: the code at commit %s "
			     "(tree %s), not a trainer ABI of this tool",
			     c->xrun.commit, c->xrun.tree));
	/* The commit is pinned by id; the tree it names is what ran.
	 * Another tree than at registration is a changed code link. */
	if (c->reg_tree[0] && strcmp(c->reg_tree, c->xrun.tree) != 0) {
		struct audit_link *l = &r->code_revision;
		char *note = rba_strdupf(
			"commit %s named tree %s at registration and names "
			"tree %s now: the repository's objects were replaced "
			"or rewritten", c->xrun.commit, c->reg_tree, c->xrun.tree);
		free(l->note);
		l->note = note;
		l->state = AUDIT_LINK_CHANGED;
		r->oom |= note == NULL;
	}
}

static void
abi_link(struct audit_inputs *c, struct audit_report *r)
{
	r->abi_rebuilt = c->rb.abi;
	/* The one place of the audit that asks: what a sandboxed run
	 * gives (struct exec_run) is audit/'s to record. */
	if (c->kind->sandboxed) {
		exec_links(c, r);
		return;
	}
	set_link(&r->trainer_abi,
		 r->abi_artifact != r->abi_rebuilt ? AUDIT_LINK_CHANGED
						   : AUDIT_LINK_SAME,
		 rba_strdupf("%u", r->abi_artifact), rba_strdupf("%u", r->abi_rebuilt),
		 r->abi_current != r->abi_rebuilt
			 ? rba_strdupf("this build trains new versions with ABI %u; the "
				"rebuild used the pinned ABI %u",
				r->abi_current, r->abi_rebuilt)
			 : NULL);
	/* A different shape can only come from the config or the data. */
	if (r->config.state == AUDIT_LINK_UNKNOWN && c->rebuilt_ok) {
		const char *what = shape_difference(&c->stored, &c->rebuilt);
		if (what != NULL) {
			free(r->config.note);
			r->config.state = AUDIT_LINK_CHANGED;
			r->config.note = rba_strdupf("the rebuilt model's %s differ from the "
					      "stored artifact's", what);
		}
	}
}

/* ---- verdict ------------------------------------------------------------ */

static void
fill_sample(struct audit_report *r, const struct audit_tally *t)
{
	r->cases = t->cases;
	r->flips = t->flips;
	r->near_cases = t->near;
	r->weak_band_cases = t->weak;
	r->policy_disagreements = t->disagree;
	r->max_delta = t->has_max ? t->max_delta : 0;
	r->max_delta_case = t->has_max ? strdup(t->max_case) : NULL;
	r->scores_off = t->off;
	r->scores_off_case = t->off ? strdup(t->off_case) : NULL;
	r->listed = t->listed;
	r->nlisted = t->nlisted;
}

/* Why the rebuilt artifact is not the one under audit: not the pinned
 * one, or not the one that made the sample's decisions. */
static void
maker_reasons(struct audit_inputs *c, struct audit_report *r, int same_maker)
{
	char pinned[RBA_DIGEST_TEXT_LEN + 1], rebuilt[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(&c->v.artifact, pinned);
	rba_digest_format(&c->rb.digest, rebuilt);
	if (!c->identical) {
		REASON(r, "the rebuilt artifact %s is not the pinned %s", rebuilt,
		       pinned);
	} else if (!same_maker) {
		char maker[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&r->artifact_decisions, maker);
		REASON(r, "the sample's decisions were made by artifact %s, not by "
			  "the rebuilt %s", maker, rebuilt);
	}
}

/* The sample against the policy's tolerances (flips, the largest score
 * delta), or why it could not be scored. */
static void
tolerance_reasons(const struct policy *pol, struct audit_report *r,
		  const char *cannot_score)
{
	char dv[32], tv[32];

	if (cannot_score != NULL) {
		REASON(r, "the sample cannot be scored with the rebuilt model: %s",
		       cannot_score);
		return;
	}
	if (r->flips > pol->max_flips)
		REASON(r, "%llu decision flip%s on the audit sample of %llu "
			  "cases (tolerance %llu)",
		       (unsigned long long)r->flips, r->flips == 1 ? "" : "s",
		       (unsigned long long)r->cases,
		       (unsigned long long)pol->max_flips);
	if (r->max_delta > pol->max_score_delta) {
		rba_json_fmt_double(r->max_delta, dv);
		rba_json_fmt_double(pol->max_score_delta, tv);
		REASON(r, "maximum score delta %s exceeds the tolerance %s "
			  "(case '%s')", dv, tv,
		       r->max_delta_case ? r->max_delta_case : "");
	}
}

/*
 * Two claims, not one: the rebuild gives the pinned artifact, but the
 * stored scores are not the ones it computes, so the sample does not
 * show that production ran it bit for bit.  At best metric-equivalent,
 * the near-threshold rule applied.  before: the reasons before the
 * sample's.
 */
static void
decide_scores_off(const struct policy *pol, struct audit_report *r,
		  size_t before)
{
	char pv[32], tv[32];

	rba_json_fmt_double(r->has_score_precision ? r->score_precision : 0,
			    pv);
	WARN(r, "the rebuild is bit-identical, but %llu stored score%s of "
		"the audit sample %s not the pinned artifact's (beyond the "
		"declared logging precision %s%s; first: case '%s'): "
		"production did not run this artifact bit for bit on "
		"%s cases",
	     (unsigned long long)r->scores_off,
	     r->scores_off == 1 ? "" : "s",
	     r->scores_off == 1 ? "is" : "are", pv,
	     r->has_score_precision ? "" : ", none declared: binary32 bit "
					  "for bit",
	     r->scores_off_case ? r->scores_off_case : "",
	     r->scores_off == 1 ? "that case" : "those");
	if (pol->near_require_bits && r->near_cases > 0) {
		rba_json_fmt_double(pol->near_margin, tv);
		REASON(r, "near-threshold rule: %llu audit case%s within %s "
			  "of a band edge, where the policy requires the "
			  "stored scores to be the pinned artifact's bit "
			  "for bit",
		       (unsigned long long)r->near_cases,
		       r->near_cases == 1 ? " lies" : "s lie", tv);
	}
	r->verdict = r->nreasons == before ? AUDIT_METRIC_EQUIVALENT
					   : AUDIT_NOT_REPRODUCIBLE;
}

static void
decide(struct audit_inputs *c, struct audit_report *r, const char *cannot_score)
{
	const struct policy *pol = c->pol;
	char tv[32];
	size_t before;

	/* Bit-identical speaks of the decisions under audit: the rebuilt
	 * artifact must be the one that made them, not only the one the
	 * version pins now (register --replace changes the pin, not the
	 * stored decisions). */
	int same_maker = !r->has_decisions ||
			 rba_digest_equal(&r->artifact_decisions, &c->rb.digest);

	maker_reasons(c, r, same_maker);
	before = r->nreasons;
	tolerance_reasons(pol, r, cannot_score);
	if (c->identical && same_maker && r->nreasons == before &&
	    r->scores_off > 0) {
		decide_scores_off(pol, r, before);
		return;
	}
	if (c->identical && same_maker) {
		if (r->nreasons == before) {
			r->verdict = AUDIT_BIT_IDENTICAL;
			return;
		}
		REASON(r, "the rebuild is bit-identical, but the sample's stored "
			  "scores or decisions do not agree with the pinned "
			  "artifact under this policy%s",
		       r->sample_scored_by == SAMPLE_SCORED_COLUMN
			       ? " (they came from a column of the cases file)"
			       : "");
		r->verdict = AUDIT_NOT_REPRODUCIBLE;
		return;
	}
	if (pol->near_require_bits && r->near_cases > 0 && cannot_score == NULL) {
		rba_json_fmt_double(pol->near_margin, tv);
		REASON(r, "near-threshold rule: %llu audit case%s within %s of a "
			  "band edge, where the policy requires a bit-identical "
			  "rebuild",
		       (unsigned long long)r->near_cases,
		       r->near_cases == 1 ? " lies" : "s lie", tv);
	}
	r->verdict = r->nreasons == before ? AUDIT_METRIC_EQUIVALENT
					   : AUDIT_NOT_REPRODUCIBLE;
	if (r->verdict == AUDIT_METRIC_EQUIVALENT) {
		/* The digest line explains only a not-reproducible verdict. */
		free(r->reasons[0]);
		memmove(r->reasons, r->reasons + 1,
			(r->nreasons - 1) * sizeof(char *));
		r->nreasons--;
	}
}

static void
warnings(struct audit_inputs *c, struct audit_report *r,
	 const struct sample_layout *l)
{
	const struct policy *pol = c->pol;
	char m[32];

	if (r->weak_band_cases < pol->min_near_cases) {
		rba_json_fmt_double(AUDIT_WEAK_MARGINS * pol->near_margin, m);
		WARN(r, "weak evidence: %llu audit case%s within %s (ten margins) "
			"of a band edge, fewer than min_near_cases %llu: the "
			"sample cannot tell a near-threshold change from none",
		     (unsigned long long)r->weak_band_cases,
		     r->weak_band_cases == 1 ? " lies" : "s lie", m,
		     (unsigned long long)pol->min_near_cases);
	}
	if (r->has_sample_policy &&
	    !rba_digest_equal(&r->sample_policy, &r->policy_digest)) {
		char a[RBA_DIGEST_TEXT_LEN + 1], b[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&r->sample_policy, a);
		rba_digest_format(&r->policy_digest, b);
		WARN(r, "the sample's decisions were made under policy %s; this "
			"audit decides under %s", a, b);
	}
	if (r->policy_disagreements > 0)
		WARN(r, "%llu stored decision%s not what the policy in force gives "
			"the stored score",
		     (unsigned long long)r->policy_disagreements,
		     r->policy_disagreements == 1 ? " is" : "s are");
	if (r->has_rebuilt &&
	    !rba_digest_equal(&l->artifact, &r->artifact_rebuilt)) {
		char a[RBA_DIGEST_TEXT_LEN + 1], b[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&l->artifact, a);
		rba_digest_format(&r->artifact_rebuilt, b);
		WARN(r, "the sample's decisions were made by artifact %s, the "
			"rebuild is %s: judged on scores, at best "
			"metric-equivalent", a, b);
	}
}

/* ---- audit_version ------------------------------------------------------ */

/* The decisions the rebuilt model can reach under pol. */
static int
cmp_setup(struct audit_cmp *k, struct audit_inputs *c, const struct sample_layout *l,
	  size_t max_listed)
{
	const struct policy *pol = c->pol;
	const struct encode_spec *spec = &c->rebuilt.spec;

	memset(k, 0, sizeof(*k));
	k->pol = pol;
	k->l = l;
	k->model = &c->rebuilt;
	k->C = spec->nclasses;
	k->rpos = spec->positive;
	k->max_listed = max_listed;
	if (pol->argmax) {
		k->nnames = spec->nclasses;
		k->names = calloc(k->nnames, sizeof(char *));
		if (k->names == NULL)
			return RBA_E_NOMEM;
		for (uint32_t i = 0; i < spec->nclasses; i++)
			k->names[i] = spec->classes[i];
		return 0;
	}
	k->names = calloc(pol->nbands, sizeof(char *));
	k->band_name = calloc(pol->nbands, sizeof(int));
	if (k->names == NULL || k->band_name == NULL)
		return RBA_E_NOMEM;
	for (size_t b = 0; b < pol->nbands; b++) {
		int found = -1;
		for (size_t i = 0; i < k->nnames; i++)
			if (strcmp(k->names[i], pol->bands[b].decision) == 0)
				found = (int)i;
		if (found < 0) {
			found = (int)k->nnames;
			k->names[k->nnames++] = pol->bands[b].decision;
		}
		k->band_name[b] = found;
	}
	return 0;
}

/* Why the sample cannot be compared with the rebuilt model, or NULL. */
static const char *
comparable(struct audit_inputs *c, const struct sample_layout *l, char *why,
	   size_t n)
{
	const struct encode_spec *spec = &c->rebuilt.spec;
	const struct policy *pol = c->pol;

	if (!pol->argmax && spec->positive == ENCODE_NO_POSITIVE)
		return "the policy decides by score bands, but the rebuilt model "
		       "has no positive class";
	if (l->scored_by == SAMPLE_SCORED_MODEL) {
		int same = l->nclasses == spec->nclasses;
		for (uint32_t i = 0; same && i < l->nclasses; i++)
			same = strcmp(l->classes[i], spec->classes[i]) == 0;
		if (!same || (!pol->argmax && l->positive != spec->positive))
			return "the rebuilt model's classes are not the ones the "
			       "sample's scores are for";
	}
	for (uint32_t i = 0; i < spec->ncolumns; i++) {
		int found = 0;
		for (uint32_t k = 0; k < l->ncols && !found; k++)
			found = strcmp(l->names[k], spec->columns[i].name) == 0;
		if (!found) {
			snprintf(why, n, "the rebuilt model needs input column '%s', "
					 "which the sample lacks",
				 spec->columns[i].name);
			return why;
		}
	}
	return NULL;
}

/*
 * The tolerance declared before the sample judges it (declared.h): the
 * version's policy, or the sample's own when the version's was loosened
 * after the sample was added.  An ad hoc --policy judges as given, and
 * says so.  c->pol becomes the policy that judges; r says which and
 * since when.  0, or declared_judge's errors.
 */
static int
judging_policy(struct store_txn *txn, struct audit_inputs *c,
	       const struct store_sample_info *info, struct audit_report *r,
	       struct rba_detail *d)
{
	struct declared_judgement j;
	char was[RBA_DIGEST_TEXT_LEN + 1], own[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	if (!c->pol_from_version) {
		/* Ad hoc unless it is the policy the rule would have chosen. */
		struct policy *vpol = NULL;
		int from;
		r->judged_by = AUDIT_JUDGED_OPTION;
		r->ad_hoc = 1;
		if (c->v.has_policy &&
		    audit_inputs_policy_in_force(&c->v, NULL, &vpol, &from, NULL) == 0 &&
		    declared_judge(txn, &c->v, vpol, info, &j, NULL) == 0) {
			r->ad_hoc = !rba_digest_equal(&c->pol->digest, &j.pol->digest);
			r->declared_at = j.declared_at;
			r->has_declared_at = !r->ad_hoc;
			declared_judgement_release(&j);
		}
		policy_free(vpol);
		if (r->ad_hoc)
			WARN(r, "ad hoc: judged by a policy given for this audit, "
				"not the one declared for the version; this verdict "
				"is not the version's audit");
		return 0;
	}
	if ((err = declared_judge(txn, &c->v, c->pol, info, &j, d)) != 0)
		return err;
	r->declared_at = j.declared_at;
	r->has_declared_at = 1;
	r->judged_by = j.own ? AUDIT_JUDGED_SAMPLE : AUDIT_JUDGED_VERSION;
	if (j.own) {
		rba_digest_format(&c->pol->digest, was);
		rba_digest_format(&j.pol->digest, own);
		WARN(r, "the version's policy %s was set after the sample was added "
			"and is looser in %s: it judges only samples added after "
			"it; this sample is judged by %s, the policy it was added "
			"under", was, j.looser_in, own);
		free(r->policy_text);
		r->policy_text = strndup(j.pol->text, j.pol->text_len);
		r->policy_digest = j.pol->digest;
	}
	policy_free(c->pol);
	c->pol = j.pol;
	j.pol = NULL;
	return 0;
}

/* The test seam hold_record (common/seam.h); empty in the release binary. */
static void
test_hold_record(void)
{
	const char *path = rba_seams.hold_record;
	char held[4096];
	FILE *f;

	if (path == NULL || *path == 0)
		return;
	snprintf(held, sizeof(held), "%s.held", path);
	if ((f = fopen(held, "w")) != NULL)
		fclose(f);
	for (int i = 0; i < 2400 && access(path, F_OK) != 0; i++)
		usleep(50000);
}

void
audit_not_measured(struct audit_report *r, const char *what, int err,
	     const struct rba_detail *d)
{
	r->verdict = AUDIT_NOT_MEASURED;
	r->exit_status = 2;
	free(r->error_what);
	r->error_what = strdup(err == RBA_E_TAMPERED ? "tampered" : what);
	REASON(r, "%s", d != NULL && d->reason[0] ? d->reason : rba_strerror(err));
}

/*
 * What audit_version holds from its first step to its last: the read
 * transaction every step reads in, the inputs, the sample and its tally.
 * record 0: the failure leaves nothing to record (no such version, or
 * no sample).
 */
struct audit_run {
	const char *version;
	const struct audit_options *o;
	struct audit_report *r;
	struct rba_detail *d;
	struct store_txn *txn;
	struct audit_inputs c;
	struct store_sample_info info;
	struct sample_layout layout;
	struct audit_tally total;
	struct audit_cmp k;
	char why[256];
	const char *cannot; /* why the sample cannot be scored, or NULL */
	double t0;
	int record;
};

/* Makes the report not measured by what failed; returns err. */
static int
failed(struct audit_run *a, const char *what, int err)
{
	audit_not_measured(a->r, what, err, a->d);
	return err;
}

/*
 * Steps 1 and 2: the version, its pins and the policy in force, the
 * artifact and the snapshot verified (audit_inputs_load).  What was
 * read goes into the report even on failure: the record says what the
 * audit stood on, and the check before the record what it judged.
 */
static int
load_version(struct audit_run *a)
{
	struct audit_report *r = a->r;
	struct audit_inputs *c = &a->c;
	int err;

	err = audit_inputs_load(a->txn, a->version, a->o->policy, c, a->d);
	if (c->v.name != NULL) {
		/* What is judged, for the check before the record. */
		r->has_version = 1;
		r->registered_at = c->v.registered_at;
		r->judged_artifact = c->v.artifact;
		r->judged_snapshot = c->v.snapshot;
		rba_digest_bytes(c->v.pins_text, strlen(c->v.pins_text),
				 &r->judged_pins);
		r->has_version_policy = c->v.has_policy;
		r->version_policy = c->v.policy_digest;
	}
	if (c->pins != NULL) {
		r->pins_text = strdup(c->v.pins_text);
		r->artifact_pinned = c->v.artifact;
		r->snapshot = c->v.snapshot;
		policy_pins_config_hash(c->pins, &r->config_current);
	}
	if (c->pol != NULL) {
		r->policy_text = strndup(c->pol->text, c->pol->text_len);
		r->policy_digest = c->pol->digest;
		r->policy_from_version = c->pol_from_version;
	}
	r->artifact_verified = c->abytes != NULL;
	r->snapshot_verified = c->snap != NULL;
	if (err) {
		/* An unknown version has nothing to record. */
		a->record = !(err == RBA_E_NOTFOUND && c->pins == NULL);
		return failed(a, c->error_what ? c->error_what : "version", err);
	}
	return 0;
}

/*
 * The run record of the version's training, when register kept one, is
 * part of what the version stands on: a damaged one is named, never
 * passed over.
 */
static int
check_run_record(struct audit_run *a)
{
	struct rebuild_runrec_summary rs;
	char run_id[RUNS_ID_SIZE];
	int err;

	runs_id_register(a->version, a->c.v.registered_at, run_id);
	err = runs_summary_get(a->txn, run_id, &rs, a->d);
	if (err == RBA_E_NOTFOUND) {
		/* A version registered with --artifact, or before run
		 * records were kept.  (A damaged key that no longer reads
		 * as this id is named by the audit command, which walks
		 * every run record's seal once per run.) */
		return 0;
	}
	if (err == 0 && !rba_digest_equal(&rs.artifact, &a->c.v.artifact))
		err = rba_fail(a->d, RBA_E_TAMPERED, NULL, 0, 0,
			       "tampered: the run record '%s' of version "
			       "'%s' names another artifact than the "
			       "version's", run_id, a->version);
	return err;
}

/* The sample's layout and record; the report keeps what they say. */
static int
load_sample(struct audit_run *a)
{
	struct audit_report *r = a->r;
	int err;

	err = sample_layout_load(a->txn, a->version, &a->info, &a->layout, a->d);
	if (err == RBA_E_NOTFOUND) {
		a->record = 0;
		rba_fail(a->d, err, NULL, 0, 0,
			 "version '%s' has no audit sample (add one with "
			 "'rebuild-audit sample add %s CASES.csv')",
			 a->version, a->version);
	}
	if (err)
		return err;
	r->has_sample = 1;
	r->sample_digest = a->info.digest;
	r->sample_added = a->info.added;
	r->has_sample_policy = a->info.has_policy;
	r->sample_policy = a->info.policy_digest;
	r->sample_scored_by = a->layout.scored_by;
	r->has_decisions = 1;
	r->artifact_decisions = a->layout.artifact;
	return 0;
}

/* Steps 4 and 5 done (audit_inputs_rebuild): the report keeps the
 * rebuilt artifact, what an exec rebuild ran and the trainer ABI link. */
static void
keep_rebuilt(struct audit_run *a)
{
	struct audit_report *r = a->r;
	struct audit_inputs *c = &a->c;

	r->has_rebuilt = 1;
	r->artifact_rebuilt = c->rb.digest;
	/* Not bit-identical: keep the rebuilt bytes for the record (a copy:
	 * without memory it is not kept, which diff --store then says). */
	if (!rba_digest_equal(&r->artifact_rebuilt, &r->artifact_pinned) &&
	    c->rb.artifact != NULL &&
	    (r->rebuilt_bytes = malloc(c->rb.artifact_len ? c->rb.artifact_len : 1)) != NULL) {
		memcpy(r->rebuilt_bytes, c->rb.artifact, c->rb.artifact_len);
		r->rebuilt_len = c->rb.artifact_len;
	}
	r->kind = c->kind;
	r->val_accuracy = c->rb.report.final.val_acc;
	r->val_loss = c->rb.report.final.val_loss;
	abi_link(c, r);
}

/* A policy that cannot judge this sample is a question not asked well,
 * not an answer about the model. */
static int
policy_fits(struct audit_run *a)
{
	const struct policy *pol = a->c.pol;

	if (pol->argmax && a->layout.scored_by == SAMPLE_SCORED_COLUMN)
		return rba_fail(a->d, RBA_E_SCHEMA, NULL, 0, 0, "%s",
				"an argmax policy needs stored probability "
				"vectors, but the sample's scores came "
				"from a column");
	if (!pol->argmax && a->c.stored.spec.positive == ENCODE_NO_POSITIVE)
		return rba_fail(a->d, RBA_E_SCHEMA, NULL, 0, 0, "%s",
				"the policy decides by score bands, but the "
				"model has no positive class");
	return 0;
}

/*
 * A tampered sample, said as the artifact and the snapshot are: leading
 * with what was tampered with.  The reason is the store's
 * ("tampered: sample of version 'V' WHAT", store_sample_read) or the
 * pass's own ("tampered: the case index ..."), and only its text says
 * which: the store gives no other field to carry it.
 */
static void
lead_with_sample(struct rba_detail *d, const char *version)
{
	char was[sizeof(d->reason)];
	const char *rest = d->reason;

	if (strncmp(rest, "tampered: ", 10) == 0)
		rest += 10;
	if (strncmp(rest, "sample of version '", 19) == 0) {
		rest = strchr(rest + 19, '\'');
		rest = rest != NULL ? rest + 1 : d->reason;
		while (*rest == ' ')
			rest++;
	}
	snprintf(was, sizeof(was), "%s", rest);
	snprintf(d->reason, sizeof(d->reason),
		 "tampered: the sample of version '%.128s': %.200s", version,
		 was);
}

/*
 * Step 6: every case scored with the rebuilt model, each chunk and the
 * sample digest verified in the same pass (audit_pass_run).  A sample
 * the rebuilt model cannot take is still read and verified.
 */
static int
score_sample(struct audit_run *a)
{
	struct audit_report *r = a->r;
	const struct audit_options *o = a->o;
	struct sample_scorer *probe = NULL;
	unsigned threads = r->threads;
	double ts = rba_time_mono();
	int err;

	a->cannot = comparable(&a->c, &a->layout, a->why, sizeof(a->why));
	if ((err = cmp_setup(&a->k, &a->c, &a->layout,
			     o->max_listed ? o->max_listed : AUDIT_MAX_LISTED)) != 0)
		return err;
	if (a->cannot != NULL) {
		/* Nothing to score, but the sample is still checked. */
		a->total.bad = 1;
		threads = 1;
	}
	err = audit_pass_run(a->txn, a->version, &a->k, a->info.cases, threads,
			     o->progress, o->progress_ctx, &a->total, a->d);
	r->t_score = rba_time_mono() - ts;
	r->t_scoring = a->total.busy;
	if (err) {
		if (err == RBA_E_TAMPERED && a->d != NULL)
			lead_with_sample(a->d, a->version);
		audit_tally_release(&a->total);
		return err;
	}
	r->sample_verified = 1;
	if (sample_scorer_new(&a->c.rebuilt, &probe, NULL) == 0)
		r->sparse_scoring = sample_scorer_is_sparse(probe);
	sample_scorer_free(probe);
	return 0;
}

/* Steps 7 to 9: the tally kept, the verdict decided with every reason
 * and warning, and its exit status. */
static void
judge(struct audit_run *a)
{
	struct audit_report *r = a->r;

	if (a->cannot == NULL && a->total.bad)
		a->cannot = a->total.bad_reason;
	fill_sample(r, &a->total);
	r->has_score_precision = a->layout.has_score_precision;
	r->score_precision = a->layout.score_precision;
	a->total.listed = NULL;
	a->total.nlisted = 0;
	decide(&a->c, r, a->cannot);
	warnings(&a->c, r, &a->layout);
	r->exit_status = audit_verdict_exit(r->verdict);
	/* A yes under an ad hoc policy answers another question than the
	 * version's declared one: it never exits 0. */
	if (r->ad_hoc && r->exit_status == 0)
		r->exit_status = 2;
}

/* The steps of audit.h in order, in a->txn; the first that fails makes
 * the report not measured and ends the audit. */
static int
audit_steps(struct audit_run *a)
{
	int err;

	/* 1, 2: the version, its pins, the policy in force; the artifact
	 * and the snapshot verified; the run record they stand on */
	if ((err = load_version(a)) != 0)
		return err;
	if ((err = check_run_record(a)) != 0)
		return failed(a, "run record", err);
	/* the sample, and the policy declared before it that judges it */
	if ((err = load_sample(a)) != 0)
		return failed(a, "sample", err);
	if ((err = judging_policy(a->txn, &a->c, &a->info, a->r, a->d)) != 0)
		return failed(a, "policy", err);
	/* 3: the links */
	if ((err = links(&a->c, a->r)) != 0)
		return failed(a, "environment", err);
	/* 4, 5: the rebuild, its digest against the pinned one */
	if ((err = audit_inputs_rebuild(&a->c, a->d)) != 0)
		return failed(a, "rebuild", err);
	keep_rebuilt(a);
	/* 6: every case scored, every chunk verified */
	if ((err = policy_fits(a)) != 0)
		return failed(a, "policy", err);
	if ((err = score_sample(a)) != 0)
		return failed(a, "sample", err);
	/* 7 to 9: flips, the rules, the verdict */
	judge(a);
	return 0;
}

/*
 * After the read transaction: what the steps held released, then the
 * record appended in its own write transaction (unless there is nothing
 * to record).  Returns the audit's error, else the record's.
 */
static int
audit_finish(struct store *s, struct audit_run *a, int err)
{
	struct audit_report *r = a->r;
	struct rba_detail *d = a->d;

	store_txn_abort(a->txn);
	r->t_verify = a->c.t_verify;
	r->t_rebuild = a->c.t_rebuild;
	r->t_total = rba_time_mono() - a->t0;
	free(a->k.names);
	free(a->k.band_name);
	sample_layout_release(&a->layout);
	store_sample_info_release(&a->info);
	audit_inputs_release(&a->c);
	if (err == 0 && (r->oom || !links_whole(r))) {
		/* Out of memory part-way: no record that says less than was
		 * found. */
		err = rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
		audit_not_measured(r, "memory", err, d);
		a->record = 0;
	}
	if (a->record && !a->o->no_record) {
		struct rba_detail rd;
		int rerr;
		rba_detail_clear(&rd);
		test_hold_record();
		rerr = audit_record_append(s, r, &rd);
		if (rerr && err == 0) {
			err = rerr;
			if (d != NULL)
				*d = rd;
		}
	}
	return err;
}

int
audit_version(struct store *s, const char *version,
	      const struct audit_options *o, struct audit_report *r,
	      struct rba_detail *d)
{
	static const struct audit_options defaults;
	struct audit_run a;
	int err;

	memset(r, 0, sizeof(*r));
	memset(&a, 0, sizeof(a));
	a.t0 = rba_time_mono();
	a.version = version;
	a.o = o != NULL ? o : &defaults;
	a.r = r;
	a.d = d;
	a.record = 1;
	r->version = strdup(version);
	r->time = (int64_t)time(NULL);
	r->threads = a.o->threads > 1 ? a.o->threads : 1;
	if (r->threads > AUDIT_MAX_THREADS)
		r->threads = AUDIT_MAX_THREADS;
	if (r->version == NULL)
		return RBA_E_NOMEM;

	if ((err = store_txn_begin(s, 0, 0, &a.txn, d)) != 0) {
		audit_not_measured(r, "store", err, d);
		return err;
	}
	r->judged = 1;
	err = audit_steps(&a);
	return audit_finish(s, &a, err);
}
