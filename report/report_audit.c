/*
 * report_audit.c - the page of audit evidence: the verdict as its
 * title; a summary box (the verdict, the scope of the guarantee, who
 * signed, when, and any statement of the file that contradicts
 * another); the links; the pictures (report_plot.c); every case in
 * brief; the flipped and near-threshold cases; the tolerance, the
 * history, the tool; the digests and exact values the page shortened.
 *
 * Its size does not grow with the sample: the pictures draw density
 * where marks would overlap, and each table of cases lists at most
 * REPORT_ROWS_MAX of them, saying how many more the signed file holds.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_view.h"
#include "audit/audit.h"
#include "policy/policy.h"

static void
td_sv(struct rd *r, struct rba_buf *b, const struct rba_json_value *v, int mono)
{
	rba_buf_printf(b, mono ? "<td class=\"mono\">" : "<td>");
	html_sv_dg(&r->notes, b, v);
	rba_buf_printf(b, "</td>");
}

/* A case id: on one line when it is short. */
static void
td_id(struct rba_buf *b, const struct rba_json_value *id)
{
	int short_id = id != NULL && id->type == RBA_JSON_STRING && id->len <= 24;

	rba_buf_printf(b, short_id ? "<td class=\"mono id\">" : "<td class=\"mono\">");
	html_sv(b, id);
	rba_buf_printf(b, "</td>");
}

/* A number in a table: its figures, on ref's side of it (NaN: none). */
static void
td_fig(struct rba_buf *b, double v, double ref)
{
	char t[REPORT_FIG_MAX];

	if (isnan(ref))
		num_fig(v, t);
	else
		num_fig_side(v, ref, t);
	rba_buf_printf(b, "<td class=\"n\">%s</td>", t);
}

/* SAME or CHANGED (or the state's own word, upper case) for state. */
static void
td_state(struct rba_buf *b, const struct rba_json_value *state)
{
	int same = state != NULL && state->type == RBA_JSON_STRING &&
		   strcmp(state->str, "same") == 0;
	int changed = state != NULL && state->type == RBA_JSON_STRING &&
		      strcmp(state->str, "changed") == 0;

	rba_buf_printf(b, "<td><span class=\"%s\">%s</span></td>",
		       same ? "same" : "changed",
		       same ? "SAME" : changed ? "CHANGED" : "UNKNOWN");
}

/*
 * Whether the evidence is of an ad hoc audit: its predicate says so, or,
 * in a first-format file whose predicate does not, its embedded record
 * (audit_record_is_ad_hoc: ad_hoc true, or a --policy before it was
 * said), which verify held the predicate to.
 */
static int
evidence_ad_hoc(struct rd *r)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 0);
	const struct rba_json_value *ah = rd_at(r, p, "policy.ad_hoc", RD_BOOL, 0);
	const struct rba_json_value *rec = rd_at(r, p, "record", RD_STR, 0);
	struct rba_json_value root;
	int yes = 0;

	if (ah != NULL)
		return ah->type == RBA_JSON_TRUE;
	if (rec == NULL)
		return 0;
	memset(&root, 0, sizeof(root));
	if (rba_json_parse(rec->str, rec->len, &root, NULL) == 0)
		yes = audit_record_is_ad_hoc(&root);
	rba_json_release(&root);
	return yes;
}

/* The verdict in one sentence; an ad hoc audit's says first that it is
 * not the version's audit, and whose tolerance it was judged by. */
static void
title_text(struct rd *r, const struct audit_view *a, struct rba_buf *t)
{
	char n1[REPORT_FIG_MAX], n2[REPORT_FIG_MAX], n3[REPORT_FIG_MAX];
	const char *v = a->verdict != NULL ? a->verdict->str : "";
	const char *tol = a->ad_hoc ? "the tolerance of a policy given for this "
				      "audit, not the one declared for the version,"
				    : "the declared tolerance";

	num_fig(a->flips, n1);
	num_fig(a->cases, n2);
	num_fig_side(a->max_delta, a->tol, n3);
	rba_buf_printf(t, "Version ");
	rba_buf_put(t, a->version->str, a->version->len);
	if (a->ad_hoc)
		rba_buf_printf(t, ": an ad hoc audit, not the version's:");
	if (strcmp(v, "bit-identical") == 0)
		rba_buf_printf(t, " rebuilds bit-identical to its pinned artifact%s",
			       a->ad_hoc ? ", under a policy given for this audit"
					 : "");
	else if (strcmp(v, "metric-equivalent") == 0)
		rba_buf_printf(t, " rebuilds metric-equivalent: not bit for bit, "
				  "but within %s on its audit sample of %s case%s",
			       tol, n2, a->cases == 1 ? "" : "s");
	else if (strcmp(v, "not-reproducible") == 0 && a->flips > 0)
		rba_buf_printf(t, " does not reproduce%s: %s of the %s decision%s on "
				  "its audit sample flipped",
			       a->ad_hoc ? " under a policy given for this audit" : "",
			       n1, n2, a->cases == 1 ? "" : "s");
	else if (strcmp(v, "not-reproducible") == 0) {
		rba_buf_printf(t, " does not reproduce within %s (largest score "
				  "change %s)", tol, n3);
		notes_exact(&r->notes, "predicate.results.max_score_delta", a->max_delta, n3);
	} else {
		rba_buf_printf(t, "%sverdict ", a->ad_hoc ? " " : ": ");
		rba_buf_put(t, v, strlen(v));
	}
}

/* ---- the summary box ---------------------------------------------------- */

#define MAX_DISAGREE 8

struct disagree {
	char line[MAX_DISAGREE][320];
	int n;
};

static void
disagree_add(struct disagree *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
disagree_add(struct disagree *g, const char *fmt, ...)
{
	va_list ap;

	if (g->n >= MAX_DISAGREE)
		return;
	va_start(ap, fmt);
	vsnprintf(g->line[g->n++], sizeof(g->line[0]), fmt, ap);
	va_end(ap);
}

/*
 * The statements of the file that contradict one another: its verdict
 * and its counts, its exit status, and in format 3 the counts and the
 * cases.  verify refuses such a file, so only an --unverified page can
 * show one; the page says so rather than letting a verdict stand beside
 * a count that denies it.
 */
static void
audit_disagreements(struct rd *r, const struct audit_view *a, struct disagree *g)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const char *v = a->verdict != NULL ? a->verdict->str : "";
	double exit_status = rd_num(r, p, "audit.exit_status");
	int bit = rd_bool(r, p, "artifact.bit_identical");
	int yes = strcmp(v, "bit-identical") == 0 || strcmp(v, "metric-equivalent") == 0;
	char n1[REPORT_FIG_MAX], n2[REPORT_FIG_MAX];

	if (yes && a->flips > a->tol_flips) {
		num_fig(a->flips, n1);
		num_fig(a->tol_flips, n2);
		disagree_add(g, "the verdict is %s, but results.flips is %s where the "
			     "policy tolerates %s", v, n1, n2);
	}
	if (yes && a->max_delta > a->tol) {
		num_fig_side(a->max_delta, a->tol, n1);
		num_fig(a->tol, n2);
		disagree_add(g, "the verdict is %s, but results.max_score_delta is %s, "
			     "over the tolerance %s", v, n1, n2);
		notes_exact(&r->notes, "predicate.results.max_score_delta", a->max_delta, n1);
	}
	if (strcmp(v, "bit-identical") == 0 && !bit)
		disagree_add(g, "the verdict is bit-identical, but artifact.bit_identical "
			     "is false");
	if ((yes && exit_status != 0) ||
	    (strcmp(v, "not-reproducible") == 0 && exit_status != 1)) {
		num_fig(exit_status, n1);
		disagree_add(g, "the verdict is %s, but audit.exit_status is %s", v, n1);
	}
	if (!yes && strcmp(v, "not-reproducible") != 0)
		disagree_add(g, "the verdict '%.64s' is none that an audit gives", v);
	if (a->flipped != NULL && (double)a->flipped->n != a->listed) {
		num_fig(a->listed, n1);
		disagree_add(g, "results.flipped_cases_listed is %s, but %zu flipped "
			     "cases are listed", n1, a->flipped->n);
	}
	if (a->flipped != NULL && (double)a->flipped->n > a->flips) {
		num_fig(a->flips, n1);
		disagree_add(g, "%zu flipped cases are listed, but results.flips is %s",
			     a->flipped->n, n1);
	}
	if (a->case_arr != NULL) {
		if ((double)a->nflip_pts != a->flips) {
			num_fig(a->flips, n1);
			disagree_add(g, "results.cases give %zu flipped cases under the "
				     "policy, but results.flips is %s", a->nflip_pts, n1);
		}
		if ((double)a->nnear_pts != a->near) {
			num_fig(a->near, n1);
			disagree_add(g, "results.cases give %zu cases within the margin of "
				     "an edge, but results.near_threshold_cases is %s",
				     a->nnear_pts, n1);
		}
		if ((double)a->npts != a->cases) {
			num_fig(a->cases, n1);
			disagree_add(g, "results.cases hold %zu cases, but sample.cases is %s",
				     a->npts, n1);
		}
	}
}

/* The verdict's word, marked so that a yes and a no differ in black and
 * white: a framed tick, or a cross white on black. */
static void
verdict_badge(struct rba_buf *b, const struct rba_json_value *verdict)
{
	const char *v = verdict != NULL && verdict->type == RBA_JSON_STRING ? verdict->str : "";
	int yes = strcmp(v, "bit-identical") == 0 || strcmp(v, "metric-equivalent") == 0;

	rba_buf_printf(b, "<span class=\"%s\">%s <b id=\"verdict\">", yes ? "ok" : "no",
		       yes ? "&#10003;" : "&#10007;");
	html_sv(b, verdict);
	rba_buf_printf(b, "</b></span>");
}

static void
section_summary(struct rd *r, const struct report_source *src,
		const struct audit_view *a, const struct disagree *g, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *subj = rd_at(r, NULL, "subject", RD_ARR, 1);
	const struct rba_json_value *mcase = rd_at(r, p, "results.max_delta_case",
						   RD_STRN, 0);

	rba_buf_printf(b, "<div class=\"summary\" id=\"summary\"><table class=\"kv\">"
			  "<tbody>\n<tr><th>Verdict</th><td>");
	verdict_badge(b, a->verdict);
	rba_buf_printf(b, "%s, exit status ",
		       a->ad_hoc ? ", <b id=\"ad-hoc\">ad hoc</b> (judged by a policy "
				   "given for this audit, not the one declared for "
				   "the version: not the version's audit)" : "");
	html_fig(b, rd_num(r, p, "audit.exit_status"));
	rba_buf_printf(b, "</td></tr>\n<tr><th>Guarantee</th><td>");
	html_sv_prose(&r->notes, b, rd_str(r, p, "guarantee"), "predicate.guarantee");
	rba_buf_printf(b, ".</td></tr>\n<tr><th>Not guaranteed</th><td>");
	html_sv_prose(&r->notes, b, rd_str(r, p, "not_guaranteed"),
		      "predicate.not_guaranteed");
	rba_buf_printf(b, ".</td></tr>\n<tr><th>Sample</th><td>");
	html_count(b, a->cases);
	rba_buf_printf(b, " case%s, ", a->cases == 1 ? "" : "s");
	html_count(b, a->flips);
	rba_buf_printf(b, " flipped (the policy tolerates ");
	html_count(b, a->tol_flips);
	rba_buf_printf(b, "); the largest score change ");
	html_val_side(&r->notes, b, "predicate.results.max_score_delta", a->max_delta,
		      a->tol);
	if (mcase != NULL && mcase->type == RBA_JSON_STRING) {
		rba_buf_printf(b, " (case <span class=\"mono\">");
		html_sv(b, mcase);
		rba_buf_printf(b, "</span>)");
	}
	rba_buf_printf(b, " against the %s tolerance ", a->ad_hoc ? "ad hoc" : "declared");
	html_val(&r->notes, b, "predicate.policy.tolerance.max_score_delta", a->tol);
	rba_buf_printf(b, "</td></tr>\n<tr><th>Signed by</th><td>key <span "
			  "class=\"mono\" id=\"keyid\">");
	html_c(b, src->key_id[0] ? src->key_id : "unknown");
	rba_buf_printf(b, "</span>, %s</td></tr>\n<tr><th>When</th><td>audit record ",
		       src->verified ? "signature verified"
				     : "<b>NOT VERIFIED</b>: nothing on this page "
				       "is vouched for by a key");
	html_fig(b, a->id);
	rba_buf_printf(b, " ran at ");
	html_sv(b, a->time);
	rba_buf_printf(b, "; the file was made at history head record ");
	html_fig(b, rd_num(r, p, "history.head.id"));
	rba_buf_printf(b, " (it states no time of its own)</td></tr>\n"
			  "<tr><th>Evidence</th><td><span class=\"mono\">");
	html_c(b, src->file);
	rba_buf_printf(b, "</span>, <span id=\"digest\">");
	html_dg(&r->notes, b, src->digest, strlen(src->digest));
	rba_buf_printf(b, "</span>, <span class=\"mono\">");
	html_sv(b, rd_str(r, NULL, "predicateType"));
	rba_buf_printf(b, "</span>; subject ");
	{
		const struct rba_json_value *hex =
			subj != NULL && subj->n > 0
				? rd_at(r, &subj->items[0], "digest.sha256", RD_STR, 1)
				: NULL;
		char dg[RBA_DIGEST_TEXT_LEN + 1];

		if (hex != NULL && hex->len == 64) {
			snprintf(dg, sizeof(dg), "sha256:%s", hex->str);
			html_dg(&r->notes, b, dg, strlen(dg));
		} else
			html_sv(b, hex);
	}
	rba_buf_printf(b, " (the pinned artifact)</td></tr>\n</tbody></table>\n");
	if (g->n > 0) {
		rba_buf_printf(b, "<div class=\"disagree\" id=\"disagree\">The file "
				  "contradicts itself, so its verdict cannot be "
				  "taken as stated:<ul>\n");
		for (int i = 0; i < g->n; i++) {
			rba_buf_printf(b, "<li>");
			html_c(b, g->line[i]);
			rba_buf_printf(b, ": the two disagree</li>\n");
		}
		rba_buf_printf(b, "</ul></div>\n");
	}
	rba_buf_printf(b, "<p class=\"caption\">Numbers are shown to about %d "
			  "significant digits and digests by their first hex digits "
			  "with a mark (D1, D2, ...); each is in full at the end of "
			  "the page.</p>\n</div>\n",
		       REPORT_FIG_DIGITS);
}

/* The reasons and warnings of the verdict, as the file states them. */
static void
section_reasons(struct rd *r, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *lists[2] = {
		rd_at(r, p, "reasons", RD_ARR, 1), rd_at(r, p, "warnings", RD_ARR, 1)
	};
	static const char *const names[2] = { "Reasons", "Warnings" };
	static const char *const paths[2] = { "predicate.reasons", "predicate.warnings" };

	for (int k = 0; k < 2; k++) {
		const struct rba_json_value *l = lists[k];

		if (l == NULL || l->n == 0)
			continue;
		rba_buf_printf(b, "<p><b>%s:</b></p>\n<ul>\n", names[k]);
		for (size_t i = 0; i < l->n; i++) {
			char where[64];
			snprintf(where, sizeof(where), "%s[%zu]", paths[k], i);
			rba_buf_printf(b, "<li>");
			html_sv_prose(&r->notes, b, &l->items[i], where);
			rba_buf_printf(b, "</li>\n");
		}
		rba_buf_printf(b, "</ul>\n");
	}
}

/* ---- the links ---------------------------------------------------------- */

/* One row of the links table: name, state, pinned, current, note. */
static void
link_row(struct rd *r, struct rba_buf *b, const char *name,
	 const struct rba_json_value *l)
{
	rba_buf_printf(b, "<tr><th>%s</th>", name);
	td_state(b, rd_at(r, l, "state", RD_STR, 1));
	if (strcmp(name, "trainer ABI") == 0) {
		rba_buf_printf(b, "<td>pinned ");
		html_fig(b, rd_num(r, l, "pinned"));
		rba_buf_printf(b, ", artifact ");
		html_fig(b, rd_num(r, l, "artifact"));
		rba_buf_printf(b, ", rebuilt ");
		html_fig(b, rd_num(r, l, "rebuilt"));
		rba_buf_printf(b, "</td><td>");
		html_fig(b, rd_num(r, l, "current"));
		rba_buf_printf(b, "</td>");
	} else {
		td_sv(r, b, rd_at(r, l, "pinned", RD_STRN, 1), 1);
		td_sv(r, b, rd_at(r, l, "current", RD_STRN, 1), 1);
	}
	{
		const struct rba_json_value *note = rd_at(r, l, "note", RD_STRN, 1);
		rba_buf_printf(b, "<td>");
		if (note != NULL && note->type == RBA_JSON_STRING)
			html_sv_prose(&r->notes, b, note, name);
		rba_buf_printf(b, "</td></tr>\n");
	}
}

/*
 * What the artifact row says of the stored decisions.  A sample scored
 * by the model was scored by the artifact named; one whose scores came
 * from a column (production's log) only names the artifact the version
 * had when it was added, and when stored scores are off the logging
 * precision production did not run that artifact bit for bit: the page
 * then says so rather than that the decisions were made by it.
 */
static void
artifact_note(struct rd *r, const struct rba_json_value *p, struct rba_buf *b)
{
	const struct rba_json_value *pin = rd_at(r, p, "artifact.pinned", RD_STR, 0);
	const struct rba_json_value *reb = rd_at(r, p, "artifact.rebuilt", RD_STR, 0);
	const struct rba_json_value *dec = rd_at(r, p, "artifact.decisions", RD_STR, 0);
	const struct rba_json_value *by = rd_at(r, p, "sample.scored_by", RD_STR, 0);
	const struct rba_json_value *off = rd_at(r, p, "results.scores_off_precision",
						 RD_NUM, 0);
	int column = by != NULL && strcmp(by->str, "column") == 0;
	int other = pin != NULL && reb != NULL &&
		    (strcmp(pin->str, reb->str) != 0 ||
		     (dec != NULL && strcmp(dec->str, reb->str) != 0));

	rba_buf_printf(b, "<td id=\"artifact-note\">pinned against rebuilt; ");
	if (dec == NULL)
		rba_buf_printf(b, "the artifact behind the sample's stored decisions is "
				  "not stated");
	else if (column) {
		rba_buf_printf(b, "the sample's scores and decisions came from a column "
				  "of its cases file (production's log), added while "
				  "the version's artifact was ");
		html_sv_dg(&r->notes, b, dec);
		if (off != NULL && off->num > 0) {
			rba_buf_printf(b, "; ");
			html_count(b, off->num);
			rba_buf_printf(b, " of its stored scores are not that artifact's "
					  "(beyond the logging precision declared with "
					  "the sample): production did not run it bit for "
					  "bit on %s", off->num == 1 ? "that case" : "those cases");
		}
	} else {
		rba_buf_printf(b, "the sample's stored decisions were made by ");
		html_sv_dg(&r->notes, b, dec);
		if (reb != NULL)
			rba_buf_printf(b, " (%s)", strcmp(dec->str, reb->str) == 0
							   ? "the rebuilt artifact"
							   : "not the rebuilt artifact");
	}
	if (other) {
		rba_buf_printf(b, "; where they differ: <code id=\"diff-hint\">"
				  "rebuild-audit diff --store ");
		html_sv(b, rd_str(r, p, "version"));
		rba_buf_printf(b, " --audit ");
		html_fig(b, rd_num(r, p, "audit.id"));
		rba_buf_printf(b, "</code>");
	}
	rba_buf_printf(b, "</td></tr>\n");
}

static void
section_links(struct rd *r, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *links = rd_at(r, p, "links", RD_OBJ, 1);
	const struct rba_json_value *env = rd_at(r, p, "environment", RD_OBJ, 1);
	const struct rba_json_value *diff = rd_at(r, env, "diff", RD_ARR, 1);
	const struct rba_json_value *pol = rd_at(r, p, "policy.digest", RD_STR, 1);
	const struct rba_json_value *spol = rd_at(r, p, "sample.policy", RD_STRN, 1);
	int bit = rd_bool(r, p, "artifact.bit_identical");
	int same_pol;

	rba_buf_printf(b, "<h2>What was compared</h2>\n");
	table_open(b, "links", "link|state|pinned|current|note");
	link_row(r, b, "code revision", rd_at(r, links, "code_revision", RD_OBJ, 1));
	link_row(r, b, "trainer ABI", rd_at(r, links, "trainer_abi", RD_OBJ, 1));
	link_row(r, b, "snapshot", rd_at(r, links, "snapshot", RD_OBJ, 1));
	link_row(r, b, "config", rd_at(r, links, "config", RD_OBJ, 1));
	/* the environment: its state and the two records' digests */
	rba_buf_printf(b, "<tr><th>environment</th>");
	td_state(b, rd_at(r, env, "state", RD_STR, 1));
	td_sv(r, b, rd_at(r, env, "pinned.digest", RD_STR, 1), 1);
	td_sv(r, b, rd_at(r, env, "current.digest", RD_STR, 1), 1);
	{
		const struct rba_json_value *note = rd_at(r, env, "note", RD_STRN, 1);
		rba_buf_printf(b, "<td>");
		if (note != NULL && note->type == RBA_JSON_STRING)
			html_sv_prose(&r->notes, b, note, "predicate.environment.note");
		if (diff != NULL && diff->n > 0)
			rba_buf_printf(b, "%s%zu field%s changed (below)",
				       note != NULL && note->type == RBA_JSON_STRING
					       ? "; " : "",
				       diff->n, diff->n == 1 ? "" : "s");
		rba_buf_printf(b, "</td></tr>\n");
	}
	/* the policy: the one that judged against the one that made the
	 * sample's stored decisions */
	same_pol = pol != NULL && spol != NULL && spol->type == RBA_JSON_STRING &&
		   strcmp(pol->str, spol->str) == 0;
	rba_buf_printf(b, "<tr><th>policy</th><td><span class=\"%s\">%s</span></td>",
		       same_pol ? "same" : "changed", same_pol ? "SAME" : "CHANGED");
	td_sv(r, b, spol, 1);
	td_sv(r, b, pol, 1);
	rba_buf_printf(b, "<td>pinned: the policy the sample's stored decisions "
			  "were made under; current: the policy that judged</td></tr>\n");
	rba_buf_printf(b, "<tr><th>artifact</th><td><span class=\"%s\">%s</span></td>",
		       bit ? "same" : "changed", bit ? "SAME" : "CHANGED");
	td_sv(r, b, rd_at(r, p, "artifact.pinned", RD_STR, 1), 1);
	td_sv(r, b, rd_at(r, p, "artifact.rebuilt", RD_STRN, 1), 1);
	artifact_note(r, p, b);
	table_close(b);
	if (diff != NULL && diff->n > 0) {
		rba_buf_printf(b, "<p>Changed environment fields:</p>\n");
		table_open(b, "env-diff", "field|pinned|current");
		for (size_t i = 0; i < diff->n; i++) {
			const struct rba_json_value *f = &diff->items[i];
			rba_buf_printf(b, "<tr>");
			td_sv(r, b, rd_at(r, f, "key", RD_STR, 1), 1);
			td_sv(r, b, rd_at(r, f, "pinned", RD_STRN, 1), 1);
			td_sv(r, b, rd_at(r, f, "current", RD_STRN, 1), 1);
			rba_buf_printf(b, "</tr>\n");
		}
		table_close(b);
	}
}

/* ---- an exec version's trainer ----------------------------------------- */

/* The value of the canonical pins text's "  format: " line under
 * "trainer:" (the pins are written in canonical form, rebuild-audit-pins(5)),
 * at *v (n bytes), or 0 when the text has none. */
static int
pins_trainer_format(const struct rba_json_value *pins, const char **v, size_t *n)
{
	const char *s, *e, *t;

	if (pins == NULL || pins->type != RBA_JSON_STRING)
		return 0;
	s = pins->str;
	e = s + pins->len;
	if ((t = strstr(s, "\ntrainer:\n")) == NULL)
		return 0;
	t += strlen("\ntrainer:\n");
	while (t < e && t[0] == ' ') {
		const char *nl = memchr(t, '\n', (size_t)(e - t));
		const char *end = nl != NULL ? nl : e;
		if ((size_t)(end - t) > 10 && memcmp(t, "  format: ", 10) == 0) {
			*v = t + 10;
			*n = (size_t)(end - t - 10);
			return 1;
		}
		if (nl == NULL)
			break;
		t = nl + 1;
	}
	return 0;
}

/* The "trainer:" section of the canonical pins text, its heading line
 * and every indented line after it, at *v (n bytes), or 0. */
static int
pins_trainer_block(const struct rba_json_value *pins, const char **v, size_t *n)
{
	const char *s, *e, *t, *q;

	if (pins == NULL || pins->type != RBA_JSON_STRING)
		return 0;
	s = pins->str;
	e = s + pins->len;
	if ((t = strstr(s, "\ntrainer:\n")) == NULL)
		return 0;
	t++;
	q = t + strlen("trainer:\n");
	while (q < e && q[0] == ' ') {
		const char *nl = memchr(q, '\n', (size_t)(e - q));
		q = nl != NULL ? nl + 1 : e;
	}
	*v = t;
	*n = (size_t)(q - t);
	return 1;
}

static void
row_sv(struct rd *r, struct rba_buf *b, const char *name,
       const struct rba_json_value *v, int mono)
{
	rba_buf_printf(b, "<tr><th>%s</th>", name);
	td_sv(r, b, v, mono);
	rba_buf_printf(b, "</tr>\n");
}

/*
 * The trainer member of an exec version's evidence (only such evidence
 * has one): what ran, from which commit and tree, in which sandbox, how
 * it ended; the format its pins declare; and the exec environment
 * record the audit computed, field by field (the changed ones are in
 * the table above).
 */
static void
section_trainer(struct rd *r, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *t = rd_at(r, p, "trainer", RD_OBJ, 0);
	const struct rba_json_value *cmd, *rec;
	const char *fv;
	size_t fn;

	if (t == NULL)
		return;
	rba_buf_printf(b, "<h2>The trainer that ran</h2>\n<p>This version was "
			  "trained by its own code, not by this tool's trainer: "
			  "the rebuild ran the command below, from the commit "
			  "and tree below, in the sandbox named.</p>\n"
			  "<table id=\"trainer\" class=\"kv\"><tbody>\n");
	row_sv(r, b, "kind", rd_str(r, t, "kind"), 0);
	row_sv(r, b, "repository", rd_str(r, t, "repository"), 1);
	row_sv(r, b, "commit", rd_str(r, t, "commit"), 1);
	row_sv(r, b, "tree", rd_str(r, t, "tree"), 1);
	cmd = rd_at(r, t, "command", RD_ARR, 1);
	rba_buf_printf(b, "<tr><th>command</th><td class=\"mono\" id=\"trainer-command\">");
	for (size_t i = 0; cmd != NULL && i < cmd->n; i++) {
		rba_buf_printf(b, "%s<code>", i ? " " : "");
		html_sv(b, &cmd->items[i]);
		rba_buf_printf(b, "</code>");
	}
	rba_buf_printf(b, "</td></tr>\n<tr><th>format</th><td>");
	if (pins_trainer_format(rd_at(r, p, "pins.text", RD_STR, 0), &fv, &fn)) {
		html_text(b, fv, fn);
		rba_buf_printf(b, " (the pins' trainer.format)");
	} else {
		rba_buf_printf(b, "not stated");
	}
	rba_buf_printf(b, "</td></tr>\n");
	row_sv(r, b, "sandbox", rd_str(r, t, "sandbox"), 0);
	row_sv(r, b, "sandbox profile", rd_str(r, t, "sandbox_profile"), 1);
	rba_buf_printf(b, "<tr><th>exit status</th>");
	td_fig(b, rd_num(r, t, "exit_status"), NAN);
	rba_buf_printf(b, "</tr>\n<tr><th>seconds</th><td class=\"n\">");
	html_val(&r->notes, b, "predicate.trainer.seconds", rd_num(r, t, "seconds"));
	rba_buf_printf(b, "</td></tr>\n");
	row_sv(r, b, "stdout SHA-256", rd_str(r, t, "stdout_sha256"), 1);
	row_sv(r, b, "stderr SHA-256", rd_str(r, t, "stderr_sha256"), 1);
	rba_buf_printf(b, "</tbody></table>\n");
	if (pins_trainer_block(rd_at(r, p, "pins.text", RD_STR, 0), &fv, &fn)) {
		/* what the pins declare: the command with its placeholders,
		 * the parameters, the declared environment, the limits */
		rba_buf_printf(b, "<p>The trainer section of the pins, as the "
				  "evidence holds them (the command with its "
				  "placeholders, the parameters, the declared "
				  "environment and the limits):</p>\n"
				  "<div class=\"mono\" id=\"pins-trainer\" "
				  "style=\"white-space:pre-wrap;margin:1mm 0\">");
		/* line by line: html_text shows a control byte, a line
		 * break too, as visible text */
		for (const char *q = fv, *e = fv + fn; q < e;) {
			const char *nl = memchr(q, '\n', (size_t)(e - q));
			const char *end = nl != NULL ? nl : e;
			html_text(b, q, (size_t)(end - q));
			rba_buf_put_u8(b, '\n');
			q = end + 1;
		}
		rba_buf_printf(b, "</div>\n");
	}

	rec = rd_at(r, p, "environment.current.record", RD_STRN, 0);
	if (rec == NULL || rec->type != RBA_JSON_STRING)
		return;
	rba_buf_printf(b, "<p>The exec environment record this audit computed "
			  "(its SHA-256 is the current environment digest above):</p>\n");
	table_open(b, "env-record", "field|value");
	for (const char *s = rec->str, *e = rec->str + rec->len; s < e;) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *end = nl != NULL ? nl : e;
		const char *eq = memchr(s, '=', (size_t)(end - s));
		if (end > s) {
			rba_buf_printf(b, "<tr><td class=\"mono\">");
			html_text(b, s, (size_t)((eq != NULL ? eq : end) - s));
			rba_buf_printf(b, "</td><td class=\"mono\">");
			if (eq != NULL)
				html_text(b, eq + 1, (size_t)(end - eq - 1));
			rba_buf_printf(b, "</td></tr>\n");
		}
		s = end + 1;
	}
	table_close(b);
}


/* ---- every case in brief ------------------------------------------------- */

/* The distinct decisions of the policy's bands, in band order, into
 * names (cap entries); their count. */
static int
band_decisions(const struct audit_view *a, const char **names, int cap)
{
	int n = 0;

	for (int i = 0; i <= a->nedges && n < cap; i++) {
		int seen = 0;
		if (a->band_names[i] == NULL)
			continue;
		for (int j = 0; j < n; j++)
			seen |= strcmp(names[j], a->band_names[i]) == 0;
		if (!seen)
			names[n++] = a->band_names[i];
	}
	return n;
}

/*
 * Format 3: every case counted, so that what the tables below do not
 * list is still stated: stored against rebuilt decision (the flips off
 * the diagonal), and |delta| against zero and the tolerance, the
 * distance to the nearest edge against the margin.
 */
static void
brief_cases(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	const char *names[VIEW_MAX_EDGES + 1];
	int nd = band_decisions(a, names, VIEW_MAX_EDGES + 1);
	size_t (*m)[VIEW_MAX_EDGES + 2] = calloc((size_t)nd + 1, sizeof(*m));
	size_t zero = 0, within = 0, beyond = 0, other_rows = 0;

	if (m == NULL) {
		r->notes.nomem = 1;
		return;
	}
	for (size_t i = 0; i < a->npts; i++) {
		const struct pt *q = &a->pts[i];
		int sr = nd, rc = nd;
		double dl = fabs(view_delta(q->r, q->s));

		for (int k = 0; k < nd; k++) {
			if (q->sdec->len == strlen(names[k]) &&
			    memcmp(q->sdec->str, names[k], q->sdec->len) == 0)
				sr = k;
			if (q->rdec != NULL && strcmp(q->rdec, names[k]) == 0)
				rc = k;
		}
		m[sr][rc]++;
		other_rows += sr == nd;
		if (dl == 0)
			zero++;
		else if (dl <= a->tol)
			within++;
		else
			beyond++;
	}
	rba_buf_printf(b, "<p>The stored decision of each case against the decision "
			  "the policy gives its rebuilt score (flipped cases lie off "
			  "the diagonal):</p>\n<table id=\"decisions\"><thead><tr>"
			  "<th>stored \\ rebuilt</th>");
	for (int k = 0; k < nd; k++) {
		rba_buf_printf(b, "<th>");
		html_c(b, names[k]);
		rba_buf_printf(b, "</th>");
	}
	rba_buf_printf(b, "<th>other</th><th>all</th></tr></thead><tbody>\n");
	for (int s = 0; s <= nd; s++) {
		size_t all = 0;
		if (s == nd && other_rows == 0)
			break;
		rba_buf_printf(b, "<tr><th>");
		html_c(b, s < nd ? names[s] : "other");
		rba_buf_printf(b, "</th>");
		for (int c = 0; c <= nd; c++) {
			all += m[s][c];
			rba_buf_printf(b, "<td class=\"n\">%s%zu%s</td>",
				       c != s && m[s][c] ? "<b>" : "", m[s][c],
				       c != s && m[s][c] ? "</b>" : "");
		}
		rba_buf_printf(b, "<td class=\"n\">%zu</td></tr>\n", all);
	}
	table_close(b);
	rba_buf_printf(b, "<table id=\"delta-classes\" class=\"kv\"><tbody>\n"
			  "<tr><th>|delta| exactly 0</th><td class=\"n\">%zu</td></tr>\n"
			  "<tr><th>|delta| above 0, within the tolerance ",
		       zero);
	html_val(&r->notes, b, "predicate.policy.tolerance.max_score_delta", a->tol);
	rba_buf_printf(b, "</th><td class=\"n\">%zu</td></tr>\n<tr><th>|delta| beyond "
			  "the tolerance</th><td class=\"n\">%zu</td></tr>\n"
			  "<tr><th>stored score within the margin ",
		       within, beyond);
	html_val(&r->notes, b, "predicate.policy.near_threshold.margin", a->margin);
	rba_buf_printf(b, " of an edge</th><td class=\"n\">%zu</td></tr>\n<tr><th>"
			  "within ten margins</th><td class=\"n\">%zu</td></tr>\n"
			  "</tbody></table>\n", a->nnear_pts, a->nweak_pts);
	free(m);
}

/* Formats 1 and 2: the counts the evidence states. */
static void
brief_counts(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *off = rd_at(r, p, "results.scores_off_precision",
						 RD_NUM, 0);
	const struct rba_json_value *dis = rd_at(r, p, "results.policy_disagreements",
						 RD_NUM, 0);

	rba_buf_printf(b, "<p>The evidence states counts of the cases, not the cases "
			  "(<code>export --cases</code> writes every one):</p>\n"
			  "<table id=\"counts\" class=\"kv\"><tbody>\n<tr><th>cases"
			  "</th><td class=\"n\">");
	html_count(b, a->cases);
	rba_buf_printf(b, "</td></tr>\n<tr><th>flipped</th><td class=\"n\">");
	html_count(b, a->flips);
	rba_buf_printf(b, "</td></tr>\n<tr><th>flipped cases listed</th><td class=\"n\">");
	html_count(b, a->listed);
	rba_buf_printf(b, "</td></tr>\n<tr><th>within the margin ");
	html_val(&r->notes, b, "predicate.policy.near_threshold.margin", a->margin);
	rba_buf_printf(b, " of an edge</th><td class=\"n\">");
	html_count(b, a->near);
	rba_buf_printf(b, "</td></tr>\n<tr><th>within ten margins</th><td class=\"n\">");
	html_count(b, a->weak);
	rba_buf_printf(b, "</td></tr>\n");
	if (off != NULL) {
		rba_buf_printf(b, "<tr><th>stored scores off the logging precision</th>"
				  "<td class=\"n\">");
		html_count(b, off->num);
		rba_buf_printf(b, "</td></tr>\n");
	}
	if (dis != NULL) {
		rba_buf_printf(b, "<tr><th>stored decisions the policy does not give "
				  "their stored scores</th><td class=\"n\">");
		html_count(b, dis->num);
		rba_buf_printf(b, "</td></tr>\n");
	}
	rba_buf_printf(b, "</tbody></table>\n");
}

/* ---- the cases listed ---------------------------------------------------- */

static void
section_flipped(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	size_t nf = a->flipped != NULL ? a->flipped->n : 0;
	size_t shown = nf > REPORT_ROWS_MAX ? REPORT_ROWS_MAX : nf;

	rba_buf_printf(b, "<h2>Flipped cases</h2>\n<p>");
	html_count(b, a->flips);
	if (nf == 0) {
		rba_buf_printf(b, " flipped; none listed.</p>\n");
		return;
	}
	rba_buf_printf(b, " flipped, ");
	html_count(b, a->listed);
	rba_buf_printf(b, " listed by the evidence");
	if (shown < nf)
		rba_buf_printf(b, "; the first %zu are shown here, and every listed "
				  "one is in the signed file "
				  "(<code>predicate.results.flipped_cases</code>)", shown);
	rba_buf_printf(b, ". Delta is the rebuilt score minus the stored one; margins "
			  "are the distance to the nearest band edge.</p>\n");
	table_open(b, "flipped", "case|stored score|rebuilt score|delta|stored "
				 "decision|rebuilt decision|margin|rebuilt margin|edge");
	for (size_t i = 0; i < shown; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		const struct rba_json_value *id = rd_str(r, f, "id");
		double s = rd_num(r, f, "stored_score");
		double rs = rd_num(r, f, "rebuilt_score");
		double edge = rd_num(r, f, "edge"), dl = view_delta(rs, s);

		rba_buf_printf(b, "<tr class=\"flipped-case\">");
		td_id(b, id);
		td_fig(b, s, edge);
		td_fig(b, rs, edge);
		td_fig(b, dl, dl < 0 ? -a->tol : a->tol);
		td_sv(r, b, rd_str(r, f, "stored_decision"), 0);
		td_sv(r, b, rd_str(r, f, "rebuilt_decision"), 0);
		td_fig(b, rd_num(r, f, "margin"), a->margin);
		td_fig(b, rd_num(r, f, "rebuilt_margin"), a->margin);
		td_fig(b, edge, NAN);
		rba_buf_printf(b, "</tr>\n");
		notes_case(&r->notes, id, s, rs);
	}
	table_close(b);
}

static int
near_cmp(const void *pa, const void *pb)
{
	const struct pt *x = *(const struct pt *const *)pa;
	const struct pt *y = *(const struct pt *const *)pb;

	if (x->sm != y->sm)
		return x->sm < y->sm ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void
section_near(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	double need = rd_num(r, p, "policy.min_near_cases");
	const struct pt **near;
	size_t n = 0, shown;

	rba_buf_printf(b, "<h2>Near-threshold cases</h2>\n<p id=\"near\">");
	if (a->case_arr == NULL) {
		html_count(b, a->near);
		rba_buf_printf(b, " case%s within the margin ", a->near == 1 ? "" : "s");
		html_val(&r->notes, b, "predicate.policy.near_threshold.margin", a->margin);
		rba_buf_printf(b, " of a band edge, ");
		html_count(b, a->weak);
		rba_buf_printf(b, " within ten margins; the policy asks for at least ");
		html_count(b, need);
		rba_buf_printf(b, " near-threshold case%s in the sample%s. The evidence "
				  "states these counts, not the cases: a table of them "
				  "would say more than it does.</p>\n",
			       need == 1 ? "" : "s",
			       rd_bool(r, p, "policy.near_threshold.require_bits")
				       ? ", and that they reproduce bit for bit" : "");
		return;
	}
	html_count(b, a->near);
	rba_buf_printf(b, " case%s within the margin ", a->near == 1 ? "" : "s");
	html_val(&r->notes, b, "predicate.policy.near_threshold.margin", a->margin);
	rba_buf_printf(b, " of a band edge (");
	html_count(b, a->weak);
	rba_buf_printf(b, " within ten margins); the policy asks for at least ");
	html_count(b, need);
	rba_buf_printf(b, ". The margin is the distance of the stored score to the "
			  "nearest edge");
	if (a->nnear_pts > REPORT_ROWS_MAX)
		rba_buf_printf(b, "; the %d nearest are shown here, nearest first, "
				  "and every case is in the signed file "
				  "(<code>predicate.results.cases</code>)", REPORT_ROWS_MAX);
	else if (a->nnear_pts > 1)
		rba_buf_printf(b, "; nearest first");
	rba_buf_printf(b, ".</p>\n");
	if (a->nnear_pts == 0)
		return;
	near = malloc(a->nnear_pts * sizeof(*near));
	if (near == NULL) {
		r->notes.nomem = 1;
		return;
	}
	for (size_t i = 0; i < a->npts; i++)
		if (a->pts[i].near && n < a->nnear_pts)
			near[n++] = &a->pts[i];
	qsort(near, n, sizeof(*near), near_cmp);
	shown = n > REPORT_ROWS_MAX ? REPORT_ROWS_MAX : n;
	table_open(b, "near-cases", "case|stored score|rebuilt score|edge|margin|"
				    "stored decision|rebuilt decision");
	for (size_t i = 0; i < shown; i++) {
		const struct pt *q = near[i];
		rba_buf_printf(b, "<tr class=\"near-case\">");
		td_id(b, q->id);
		td_fig(b, q->s, q->edge);
		td_fig(b, q->r, q->edge);
		td_fig(b, q->edge, NAN);
		td_fig(b, q->sm, a->margin);
		td_sv(r, b, q->sdec, 0);
		rba_buf_printf(b, "<td>");
		html_c(b, q->rdec != NULL ? q->rdec : "(none)");
		rba_buf_printf(b, "</td></tr>\n");
		notes_case(&r->notes, q->id, q->s, q->r);
	}
	table_close(b);
	free(near);
}

/* ---- tolerance, history, tool --------------------------------------------- */

static void
section_tolerance(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *decl = rd_at(r, p, "policy.declared_at",
						  RD_STRN, 0);
	const struct rba_json_value *by = rd_at(r, p, "policy.judged_by", RD_STRN, 0);

	rba_buf_printf(b, "<h2>%s</h2>\n<table id=\"tolerance\" class=\"kv\"><tbody>"
			  "<tr><th>largest score change</th><td class=\"n\">",
		       a->ad_hoc ? "Tolerance of the policy given for this audit "
				   "(ad hoc, not the one declared for the version)"
				 : "Declared tolerance");
	html_val(&r->notes, b, "predicate.policy.tolerance.max_score_delta", a->tol);
	rba_buf_printf(b, "</td></tr><tr><th>flips tolerated</th><td class=\"n\">");
	html_count(b, a->tol_flips);
	rba_buf_printf(b, "</td></tr><tr><th>near-threshold margin</th>"
			  "<td class=\"n\">");
	html_val(&r->notes, b, "predicate.policy.near_threshold.margin", a->margin);
	rba_buf_printf(b, "</td></tr><tr><th>policy</th><td>");
	html_sv_dg(&r->notes, b, rd_str(r, p, "policy.digest"));
	rba_buf_printf(b, " (rule ");
	html_sv(b, rd_str(r, p, "policy.rule"));
	rba_buf_printf(b, ")</td></tr><tr><th>judged by</th><td>");
	if (by != NULL && by->type == RBA_JSON_STRING)
		html_sv(b, by);
	else
		rba_buf_printf(b, "not stated (evidence v1)");
	if (a->ad_hoc)
		rba_buf_printf(b, " (ad hoc: not the version's audit)");
	rba_buf_printf(b, "</td></tr><tr><th>declared</th><td id=\"declared\">");
	if (decl != NULL && decl->type == RBA_JSON_STRING)
		html_sv(b, decl);
	else
		rba_buf_printf(b, "not stated");
	rba_buf_printf(b, "</td></tr></tbody></table>\n");
}

static void
section_history(struct rd *r, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *h = rd_at(r, p, "history", RD_OBJ, 1);
	const struct rba_json_value *ea = rd_at(r, h, "earlier_audits", RD_ARR, 0);
	const struct rba_json_value *since = rd_at(r, h, "earlier_since", RD_STRN, 0);

	rba_buf_printf(b, "<h2>History</h2>\n<p>Signed at history head: record ");
	html_fig(b, rd_num(r, h, "head.id"));
	rba_buf_printf(b, ", <span id=\"head\">");
	html_sv_dg(&r->notes, b, rd_str(r, h, "head.digest"));
	rba_buf_printf(b, "</span>. This audit's chain digest ");
	html_sv_dg(&r->notes, b, rd_str(r, p, "audit.chain_digest"));
	rba_buf_printf(b, " in store <span class=\"mono\">");
	html_sv(b, rd_str(r, p, "audit.store_id"));
	rba_buf_printf(b, "</span>.</p>\n");
	if (ea == NULL) {
		rba_buf_printf(b, "<p>Earlier audits: not stated (evidence v1).</p>\n");
		return;
	}
	rba_buf_printf(b, "<p>Earlier audits of the version since ");
	if (since != NULL && since->type == RBA_JSON_STRING)
		html_sv(b, since);
	else
		rba_buf_printf(b, "the first");
	rba_buf_printf(b, ": %zu.</p>\n", ea->n);
	if (ea->n == 0)
		return;
	table_open(b, "earlier", "record|time|verdict|exit status|ad hoc");
	for (size_t i = 0; i < ea->n; i++) {
		const struct rba_json_value *x = &ea->items[i];
		const struct rba_json_value *ah = rd_at(r, x, "ad_hoc", RD_BOOL, 0);

		rba_buf_printf(b, "<tr>");
		td_fig(b, rd_num(r, x, "id"), NAN);
		td_sv(r, b, rd_str(r, x, "time"), 0);
		td_sv(r, b, rd_str(r, x, "verdict"), 0);
		td_fig(b, rd_num(r, x, "exit_status"), NAN);
		rba_buf_printf(b, "<td>%s</td></tr>\n",
			       ah == NULL ? "not stated"
			       : ah->type == RBA_JSON_TRUE ? "yes" : "no");
	}
	table_close(b);
}

static void
section_tool(struct rd *r, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *libs = rd_at(r, p, "tool.libraries", RD_OBJ, 1);

	rba_buf_printf(b, "<h2>Rebuild and tool</h2>\n<p>Validation accuracy ");
	html_val(&r->notes, b, "predicate.rebuild.validation_accuracy",
		 rd_num(r, p, "rebuild.validation_accuracy"));
	rba_buf_printf(b, ", loss ");
	html_val(&r->notes, b, "predicate.rebuild.validation_loss",
		 rd_num(r, p, "rebuild.validation_loss"));
	rba_buf_printf(b, ". Audited by ");
	html_sv(b, rd_str(r, p, "tool.name"));
	rba_buf_put_u8(b, ' ');
	html_sv(b, rd_str(r, p, "tool.version"));
	rba_buf_printf(b, " (<span class=\"mono\">");
	html_sv(b, rd_str(r, p, "tool.code_revision"));
	rba_buf_printf(b, "</span>); exported by ");
	html_sv(b, rd_str(r, p, "exported_by.version"));
	rba_buf_printf(b, " (<span class=\"mono\">");
	html_sv(b, rd_str(r, p, "exported_by.code_revision"));
	rba_buf_printf(b, "</span>). Sample of ");
	html_count(b, rd_num(r, p, "sample.cases"));
	rba_buf_printf(b, " case%s, ", rd_num(r, p, "sample.cases") == 1 ? "" : "s");
	html_sv_dg(&r->notes, b, rd_str(r, p, "sample.digest"));
	rba_buf_printf(b, "; snapshot ");
	html_sv_dg(&r->notes, b, rd_str(r, p, "snapshot.digest"));
	rba_buf_printf(b, ".</p>\n");
	if (libs != NULL && libs->n > 0) {
		rba_buf_printf(b, "<p>Libraries: ");
		for (size_t i = 0; i < libs->n; i++) {
			rba_buf_printf(b, "%s", i ? "; " : "");
			html_c(b, libs->keys[i]);
			rba_buf_printf(b, " ");
			html_sv(b, &libs->items[i]);
		}
		rba_buf_printf(b, ".</p>\n");
	}
}

/* Format 3: every case as the page draws it, decided by the policy of
 * the evidence (the flips and near-threshold cases verify counted). */
static int
build_points(struct rd *r, struct audit_view *a, struct rba_detail *d)
{
	size_t n = a->case_arr->n;

	if (a->argmax) {
		snprintf(d->key, sizeof(d->key), "predicate.results.cases");
		snprintf(d->reason, sizeof(d->reason),
			 "every case's scores under an argmax policy");
		return RBA_E_SCHEMA;
	}
	a->pts = calloc(n ? n : 1, sizeof(*a->pts));
	if (a->pts == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < n && !r->json.err; i++) {
		const struct rba_json_value *c = &a->case_arr->items[i];
		struct pt *q = &a->pts[i];
		double rm;

		q->id = rd_str(r, c, "id");
		q->sdec = rd_str(r, c, "stored_decision");
		q->s = rd_num(r, c, "stored_score");
		q->r = rd_num(r, c, "rebuilt_score");
		if (r->json.err)
			break;
		q->rdec = policy_decide(a->pol, q->r, &rm);
		policy_decide(a->pol, q->s, &q->sm);
		q->edge = policy_nearest_edge(a->pol, q->s);
		q->flip = q->rdec == NULL || strlen(q->rdec) != q->sdec->len ||
			  memcmp(q->rdec, q->sdec->str, q->sdec->len) != 0;
		q->near = q->sm <= a->margin;
		q->weak = q->sm <= 10 * a->margin;
		a->nflip_pts += q->flip != 0;
		a->nnear_pts += q->near != 0;
		a->nweak_pts += q->weak != 0;
	}
	a->npts = r->json.err ? 0 : n;
	return 0;
}

int
report_audit_page(struct rd *r, const struct report_source *src,
		  struct rba_buf *b, struct rba_detail *d)
{
	struct audit_view a;
	struct disagree g;
	struct rba_buf title;
	const struct rba_json_value *p, *ptext, *mcase;
	int k, err;

	memset(&a, 0, sizeof(a));
	memset(&g, 0, sizeof(g));
	p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	a.version = rd_str(r, p, "version");
	a.verdict = rd_str(r, p, "verdict");
	a.time = rd_str(r, p, "audit.time");
	a.id = rd_num(r, p, "audit.id");
	a.cases = rd_num(r, p, "sample.cases");
	a.flips = rd_num(r, p, "results.flips");
	a.max_delta = rd_num(r, p, "results.max_score_delta");
	a.near = rd_num(r, p, "results.near_threshold_cases");
	a.weak = rd_num(r, p, "results.weak_band_cases");
	a.listed = rd_num(r, p, "results.flipped_cases_listed");
	a.flipped = rd_at(r, p, "results.flipped_cases", RD_ARR, 1);
	a.tol = rd_num(r, p, "policy.tolerance.max_score_delta");
	a.tol_flips = rd_num(r, p, "policy.tolerance.max_flips");
	a.margin = rd_num(r, p, "policy.near_threshold.margin");
	mcase = rd_at(r, p, "results.max_delta_case", RD_STRN, 1);
	a.ad_hoc = evidence_ad_hoc(r);
	ptext = rd_str(r, p, "policy.text");
	if (r->json.err)
		return 0; /* the caller names the member */
	k = report_policy_edges(ptext->str, ptext->len, a.edges, VIEW_MAX_EDGES,
				a.band_names, &a.argmax, &a.pol);
	if (k < 0) {
		snprintf(d->key, sizeof(d->key), "predicate.policy.text");
		snprintf(d->reason, sizeof(d->reason),
			 "the policy text in the evidence does not parse");
		return RBA_E_SCHEMA;
	}
	a.nedges = k;
	a.case_arr = rd_at(r, p, "results.cases", RD_ARR, 0);
	if (a.case_arr != NULL && (err = build_points(r, &a, d)) != 0) {
		policy_free(a.pol);
		return err;
	}
	audit_disagreements(r, &a, &g);
	rba_buf_init(&title);
	title_text(r, &a, &title);
	html_page_open(b, src, "audit evidence", rba_buf_cstr(&title));
	rba_buf_printf(b, "<h1 id=\"title\">");
	html_text(b, (const char *)title.p, title.len);
	rba_buf_printf(b, "</h1>\n");
	rba_buf_release(&title);
	section_summary(r, src, &a, &g, b);
	section_reasons(r, b);
	section_links(r, b);
	section_trainer(r, b);
	rba_buf_printf(b, "<h2>Scores</h2>\n");
	view_scatter(r, &a, b);
	view_delta_picture(r, &a, mcase, b);
	rba_buf_printf(b, "<div class=\"keep\"><h2>Every case in brief</h2>\n");
	if (a.case_arr != NULL)
		brief_cases(r, &a, b);
	else
		brief_counts(r, &a, b);
	rba_buf_printf(b, "</div>\n");
	section_flipped(r, &a, b);
	section_near(r, &a, b);
	section_tolerance(r, &a, b);
	section_history(r, b);
	report_log_section(r, src, b);
	section_tool(r, b);
	html_notes_sections(&r->notes, b);
	html_page_close(b, src);
	free(a.pts);
	policy_free(a.pol);
	return r->notes.nomem ? RBA_E_NOMEM : 0;
}
