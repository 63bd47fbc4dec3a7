/*
 * report_audit.c - the page of audit evidence: the verdict as its
 * title, the links, the scatter of rebuilt minus stored score against
 * the stored score, the |delta| picture, the flipped and near-threshold
 * cases, the tolerance, the history.
 *
 * The pictures draw what the evidence states and nothing else: audit
 * evidence lists each flipped case with both its scores, and of the
 * other cases only counts and the largest |delta|, so the scatter marks
 * the listed cases and says in its caption what it cannot place.
 * Shapes carry the meaning (a ringed cross for a flipped case, a solid
 * line for a band edge, grey for the near-threshold margin, dashes for
 * the tolerance) so that a black and white print reads the same.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_priv.h"
#include "audit/audit.h"
#include "policy/policy.h"

#define MAX_EDGES 64

/* One case of format 3 as drawn. */
struct pt {
	const struct rba_json_value *id, *sdec;
	double s, r;
	double sm, edge; /* the stored score's distance to the nearest edge */
	const char *rdec;
	int flip, near;
};

/* What the page needs of the evidence, read once. */
struct audit_view {
	const struct rba_json_value *version, *verdict, *time, *flipped;
	/* format 3: every case, and what the page computes of each under
	 * the policy (the flip and near-threshold marks) */
	const struct rba_json_value *case_arr;
	struct pt *pts;
	size_t npts, nflip_pts, nnear_pts;
	double id, cases, flips, max_delta, tol, tol_flips, margin, near, weak;
	double listed;
	double edges[MAX_EDGES];
	const char *band_names[MAX_EDGES + 1];
	int nedges, argmax;
	/* An ad hoc audit (judged by a policy given for it, not the one
	 * declared for the version): every sentence of the page says so. */
	int ad_hoc;
	struct policy *pol;
};

static void
td_sv(struct rba_buf *b, const struct rba_json_value *v, int mono)
{
	rba_buf_printf(b, mono ? "<td class=\"mono\">" : "<td>");
	html_sv(b, v);
	rba_buf_printf(b, "</td>");
}

static void
td_num(struct rba_buf *b, double v)
{
	rba_buf_printf(b, "<td class=\"n\">");
	html_num(b, v);
	rba_buf_printf(b, "</td>");
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
 * The score change of a case as the audit measures it: the rebuilt score
 * minus the stored one at binary32, the model's precision (a logged
 * number rounded to its nearest float first: doc/design.md 8.2).
 */
static double
delta_of(double rebuilt, double stored)
{
	return rebuilt - (double)(float)stored;
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
title_text(const struct audit_view *a, struct rba_buf *t)
{
	char n1[RBA_JSON_NUM_MAX], n2[RBA_JSON_NUM_MAX], n3[RBA_JSON_NUM_MAX];
	const char *v = a->verdict != NULL ? a->verdict->str : "";
	const char *tol = a->ad_hoc ? "the tolerance of a policy given for this "
				      "audit, not the one declared for the version,"
				    : "the declared tolerance";

	rba_json_fmt_double(a->flips, n1);
	rba_json_fmt_double(a->cases, n2);
	rba_json_fmt_double(a->max_delta, n3);
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
				  "but within %s on its audit sample of %s cases",
			       tol, n2);
	else if (strcmp(v, "not-reproducible") == 0 && a->flips > 0)
		rba_buf_printf(t, " does not reproduce%s: %s of the %s decisions on "
				  "its audit sample flipped",
			       a->ad_hoc ? " under a policy given for this audit" : "",
			       n1, n2);
	else if (strcmp(v, "not-reproducible") == 0)
		rba_buf_printf(t, " does not reproduce within %s (largest score "
				  "change %s)", tol, n3);
	else {
		rba_buf_printf(t, "%sverdict ", a->ad_hoc ? " " : ": ");
		rba_buf_put(t, v, strlen(v));
	}
}

static void
section_verdict(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *g = rd_str(r, p, "guarantee");
	const struct rba_json_value *ng = rd_str(r, p, "not_guaranteed");
	const struct rba_json_value *lists[2] = {
		rd_at(r, p, "reasons", RD_ARR, 1), rd_at(r, p, "warnings", RD_ARR, 1)
	};
	static const char *const names[2] = { "Reasons", "Warnings" };

	rba_buf_printf(b, "<p class=\"verdict\">Verdict <b id=\"verdict\">");
	html_sv(b, a->verdict);
	rba_buf_printf(b, "</b>%s, exit status ",
		       a->ad_hoc ? ", <b id=\"ad-hoc\">ad hoc</b> (judged by a policy "
				   "given for this audit, not the one declared for "
				   "the version: not the version's audit)" : "");
	html_num(b, rd_num(r, p, "audit.exit_status"));
	rba_buf_printf(b, ", audit record ");
	html_num(b, a->id);
	rba_buf_printf(b, " of ");
	html_sv(b, a->time);
	rba_buf_printf(b, ".</p>\n<p><b>Guarantee:</b> ");
	html_sv(b, g);
	rba_buf_printf(b, ".</p>\n<p><b>Not guaranteed:</b> ");
	html_sv(b, ng);
	rba_buf_printf(b, ".</p>\n");
	for (int k = 0; k < 2; k++) {
		const struct rba_json_value *l = lists[k];

		if (l == NULL || l->n == 0)
			continue;
		rba_buf_printf(b, "<p><b>%s:</b></p>\n<ul>\n", names[k]);
		for (size_t i = 0; i < l->n; i++) {
			rba_buf_printf(b, "<li>");
			html_sv(b, &l->items[i]);
			rba_buf_printf(b, "</li>\n");
		}
		rba_buf_printf(b, "</ul>\n");
	}
}

/* One row of the links table: name, state, pinned, current, note. */
static void
link_row(struct rd *r, struct rba_buf *b, const char *name,
	 const struct rba_json_value *l)
{
	rba_buf_printf(b, "<tr><th>%s</th>", name);
	td_state(b, rd_at(r, l, "state", RD_STR, 1));
	if (strcmp(name, "trainer ABI") == 0) {
		rba_buf_printf(b, "<td>pinned ");
		html_num(b, rd_num(r, l, "pinned"));
		rba_buf_printf(b, ", artifact ");
		html_num(b, rd_num(r, l, "artifact"));
		rba_buf_printf(b, ", rebuilt ");
		html_num(b, rd_num(r, l, "rebuilt"));
		rba_buf_printf(b, "</td><td>");
		html_num(b, rd_num(r, l, "current"));
		rba_buf_printf(b, "</td>");
	} else {
		td_sv(b, rd_at(r, l, "pinned", RD_STRN, 1), 1);
		td_sv(b, rd_at(r, l, "current", RD_STRN, 1), 1);
	}
	{
		const struct rba_json_value *note = rd_at(r, l, "note", RD_STRN, 1);
		rba_buf_printf(b, "<td>");
		if (note != NULL && note->type == RBA_JSON_STRING)
			html_sv(b, note);
		rba_buf_printf(b, "</td></tr>\n");
	}
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

	rba_buf_printf(b, "<h2>What was compared</h2>\n<table id=\"links\">\n"
			  "<tr><th>link</th><th>state</th><th>pinned</th>"
			  "<th>current</th><th>note</th></tr>\n");
	link_row(r, b, "code revision", rd_at(r, links, "code_revision", RD_OBJ, 1));
	link_row(r, b, "trainer ABI", rd_at(r, links, "trainer_abi", RD_OBJ, 1));
	link_row(r, b, "snapshot", rd_at(r, links, "snapshot", RD_OBJ, 1));
	link_row(r, b, "config", rd_at(r, links, "config", RD_OBJ, 1));
	/* the environment: its state and the two records' digests */
	rba_buf_printf(b, "<tr><th>environment</th>");
	td_state(b, rd_at(r, env, "state", RD_STR, 1));
	td_sv(b, rd_at(r, env, "pinned.digest", RD_STR, 1), 1);
	td_sv(b, rd_at(r, env, "current.digest", RD_STR, 1), 1);
	{
		const struct rba_json_value *note = rd_at(r, env, "note", RD_STRN, 1);
		rba_buf_printf(b, "<td>");
		if (note != NULL && note->type == RBA_JSON_STRING)
			html_sv(b, note);
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
	td_sv(b, spol, 1);
	td_sv(b, pol, 1);
	rba_buf_printf(b, "<td>pinned: the policy the sample's stored decisions "
			  "were made under; current: the policy that judged</td></tr>\n");
	rba_buf_printf(b, "<tr><th>artifact</th><td><span class=\"%s\">%s</span></td>",
		       bit ? "same" : "changed", bit ? "SAME" : "CHANGED");
	td_sv(b, rd_at(r, p, "artifact.pinned", RD_STR, 1), 1);
	td_sv(b, rd_at(r, p, "artifact.rebuilt", RD_STRN, 1), 1);
	rba_buf_printf(b, "<td>pinned against rebuilt; the stored decisions were "
			  "made by <span class=\"mono\">");
	html_sv(b, rd_at(r, p, "artifact.decisions", RD_STRN, 0));
	rba_buf_printf(b, "</span>");
	{
		const struct rba_json_value *pin = rd_at(r, p, "artifact.pinned", RD_STR, 0);
		const struct rba_json_value *reb = rd_at(r, p, "artifact.rebuilt", RD_STR, 0);
		const struct rba_json_value *dec = rd_at(r, p, "artifact.decisions", RD_STR, 0);
		int other = pin != NULL && reb != NULL &&
			    (strcmp(pin->str, reb->str) != 0 ||
			     (dec != NULL && strcmp(dec->str, reb->str) != 0));
		if (other) {
			rba_buf_printf(b, "; where they differ: <code id=\"diff-hint\">"
					  "rebuild-audit diff --store ");
			html_sv(b, rd_str(r, p, "version"));
			rba_buf_printf(b, " --audit ");
			html_num(b, rd_num(r, p, "audit.id"));
			rba_buf_printf(b, "</code>");
		}
	}
	rba_buf_printf(b, "</td></tr>\n</table>\n");
	if (diff != NULL && diff->n > 0) {
		rba_buf_printf(b, "<p>Changed environment fields:</p>\n"
				  "<table id=\"env-diff\"><tr><th>field</th>"
				  "<th>pinned</th><th>current</th></tr>\n");
		for (size_t i = 0; i < diff->n; i++) {
			const struct rba_json_value *f = &diff->items[i];
			rba_buf_printf(b, "<tr>");
			td_sv(b, rd_at(r, f, "key", RD_STR, 1), 1);
			td_sv(b, rd_at(r, f, "pinned", RD_STRN, 1), 1);
			td_sv(b, rd_at(r, f, "current", RD_STRN, 1), 1);
			rba_buf_printf(b, "</tr>\n");
		}
		rba_buf_printf(b, "</table>\n");
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
row_sv(struct rba_buf *b, const char *name, const struct rba_json_value *v,
       int mono)
{
	rba_buf_printf(b, "<tr><th>%s</th>", name);
	td_sv(b, v, mono);
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
			  "<table id=\"trainer\">\n");
	row_sv(b, "kind", rd_str(r, t, "kind"), 0);
	row_sv(b, "repository", rd_str(r, t, "repository"), 1);
	row_sv(b, "commit", rd_str(r, t, "commit"), 1);
	row_sv(b, "tree", rd_str(r, t, "tree"), 1);
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
	row_sv(b, "sandbox", rd_str(r, t, "sandbox"), 0);
	row_sv(b, "sandbox profile", rd_str(r, t, "sandbox_profile"), 1);
	rba_buf_printf(b, "<tr><th>exit status</th>");
	td_num(b, rd_num(r, t, "exit_status"));
	rba_buf_printf(b, "</tr>\n<tr><th>seconds</th>");
	td_num(b, rd_num(r, t, "seconds"));
	rba_buf_printf(b, "</tr>\n");
	row_sv(b, "stdout SHA-256", rd_str(r, t, "stdout_sha256"), 1);
	row_sv(b, "stderr SHA-256", rd_str(r, t, "stderr_sha256"), 1);
	rba_buf_printf(b, "</table>\n");
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
			  "(its SHA-256 is the current environment digest above):</p>\n"
			  "<table id=\"env-record\"><tr><th>field</th><th>value</th></tr>\n");
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
	rba_buf_printf(b, "</table>\n");
}

/* ---- the scatter ----------------------------------------------------- */

#define SC_W 640.0
#define SC_H 300.0
#define SC_L 70.0  /* plot area */
#define SC_R 620.0
#define SC_T 28.0
#define SC_B 250.0

static double
sc_x(double s)
{
	if (s < 0)
		s = 0;
	if (s > 1)
		s = 1;
	return SC_L + s * (SC_R - SC_L);
}

static double
sc_y(double dl, double ymax)
{
	double y = (SC_T + SC_B) / 2 - dl / ymax * (SC_B - SC_T) / 2;

	return y < SC_T ? SC_T : y > SC_B ? SC_B : y;
}

/* A flipped case: a cross in a ring (readable without colour). */
static void
mark_flip(struct rba_buf *b, double x, double y)
{
	rba_buf_printf(b, "<circle cx=\"");
	svg_n(b, x);
	rba_buf_printf(b, "\" cy=\"");
	svg_n(b, y);
	rba_buf_printf(b, "\" r=\"6\" fill=\"#fff\" stroke=\"#b00000\" "
			  "stroke-width=\"1.5\"/><path d=\"M");
	svg_n(b, x - 4);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y - 4);
	rba_buf_printf(b, " L");
	svg_n(b, x + 4);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y + 4);
	rba_buf_printf(b, " M");
	svg_n(b, x - 4);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y + 4);
	rba_buf_printf(b, " L");
	svg_n(b, x + 4);
	rba_buf_put_u8(b, ' ');
	svg_n(b, y - 4);
	rba_buf_printf(b, "\" stroke=\"#000\" stroke-width=\"2\"/>");
}

static void
svg_text(struct rba_buf *b, double x, double y, const char *anchor,
	 const char *size, const char *s)
{
	rba_buf_printf(b, "<text x=\"");
	svg_n(b, x);
	rba_buf_printf(b, "\" y=\"");
	svg_n(b, y);
	rba_buf_printf(b, "\" text-anchor=\"%s\" font-size=\"%s\">", anchor, size);
	html_c(b, s);
	rba_buf_printf(b, "</text>");
}

static void
svg_line(struct rba_buf *b, double x1, double y1, double x2, double y2,
	 const char *attrs)
{
	rba_buf_printf(b, "<line x1=\"");
	svg_n(b, x1);
	rba_buf_printf(b, "\" y1=\"");
	svg_n(b, y1);
	rba_buf_printf(b, "\" x2=\"");
	svg_n(b, x2);
	rba_buf_printf(b, "\" y2=\"");
	svg_n(b, y2);
	rba_buf_printf(b, "\" %s/>", attrs);
}

static void
scatter(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	char t[160], n1[RBA_JSON_NUM_MAX];
	double ymax = fmax(a->tol, fabs(a->max_delta));
	size_t nf = a->flipped != NULL ? a->flipped->n : 0;

	for (size_t i = 0; i < nf; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		double dl = delta_of(rd_num(r, f, "rebuilt_score"), rd_num(r, f, "stored_score"));
		if (isfinite(dl))
			ymax = fmax(ymax, fabs(dl));
	}
	for (size_t i = 0; i < a->npts; i++)
		if (isfinite(delta_of(a->pts[i].r, a->pts[i].s)))
			ymax = fmax(ymax, fabs(delta_of(a->pts[i].r, a->pts[i].s)));
	if (!(ymax > 0) || !isfinite(ymax))
		ymax = 1e-3;
	ymax *= 1.15;
	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"scatter\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
			  "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"rebuilt "
			  "minus stored score against stored score\">\n",
		       SC_W, SC_H, SC_W, SC_H);
	rba_buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
			  "fill=\"#fff\" stroke=\"#000\"/>\n",
		       SC_L, SC_T, SC_R - SC_L, SC_B - SC_T);
	/* the near-threshold margin around each edge, at least 2 units wide
	 * so that it shows */
	for (int i = 0; i < a->nedges; i++) {
		double x0 = sc_x(a->edges[i] - a->margin);
		double x1 = sc_x(a->edges[i] + a->margin);
		double w = x1 - x0;

		if (w < 2) {
			x0 -= (2 - w) / 2;
			w = 2;
		}
		rba_buf_printf(b, "<rect class=\"near-margin\" x=\"");
		svg_n(b, x0);
		rba_buf_printf(b, "\" y=\"%.0f\" width=\"", SC_T);
		svg_n(b, w);
		rba_buf_printf(b, "\" height=\"%.0f\" fill=\"#c8c8c8\"/>\n", SC_B - SC_T);
	}
	/* zero and the tolerance */
	svg_line(b, SC_L, sc_y(0, ymax), SC_R, sc_y(0, ymax),
		 "stroke=\"#555\" stroke-width=\"0.8\"");
	if (a->tol > 0 && a->tol < ymax) {
		svg_line(b, SC_L, sc_y(a->tol, ymax), SC_R, sc_y(a->tol, ymax),
			 "class=\"tolerance\" stroke=\"#000\" stroke-dasharray=\"6 3\"");
		svg_line(b, SC_L, sc_y(-a->tol, ymax), SC_R, sc_y(-a->tol, ymax),
			 "class=\"tolerance\" stroke=\"#000\" stroke-dasharray=\"6 3\"");
		rba_json_fmt_double(a->tol, n1);
		snprintf(t, sizeof(t), "+%s", n1);
		svg_text(b, SC_R - 2, sc_y(a->tol, ymax) - 3, "end", "9", t);
		snprintf(t, sizeof(t), "-%s", n1);
		svg_text(b, SC_R - 2, sc_y(-a->tol, ymax) + 10, "end", "9", t);
	}
	/* the band edges and the bands' names */
	for (int i = 0; i < a->nedges; i++) {
		double x = sc_x(a->edges[i]);

		rba_buf_printf(b, "<line class=\"band-edge\" data-edge=\"");
		html_num(b, a->edges[i]);
		rba_buf_printf(b, "\" x1=\"");
		svg_n(b, x);
		rba_buf_printf(b, "\" y1=\"%.0f\" x2=\"", SC_T);
		svg_n(b, x);
		rba_buf_printf(b, "\" y2=\"%.0f\" stroke=\"#000\" stroke-width=\"1.6\"/>",
			       SC_B);
		rba_json_fmt_double(a->edges[i], n1);
		svg_text(b, x, SC_T - 4, "middle", "9", n1);
		rba_buf_put_u8(b, '\n');
	}
	for (int i = 0; i <= a->nedges && a->nedges > 0; i++) {
		double lo = i == 0 ? 0 : a->edges[i - 1];
		double hi = i == a->nedges ? 1 : a->edges[i];
		if (a->band_names[i] != NULL)
			svg_text(b, (sc_x(lo) + sc_x(hi)) / 2, SC_B - 6, "middle", "9",
				 a->band_names[i]);
	}
	/* axes */
	svg_text(b, SC_L, SC_B + 14, "middle", "9", "0");
	svg_text(b, SC_R, SC_B + 14, "middle", "9", "1");
	svg_text(b, (SC_L + SC_R) / 2, SC_B + 30, "middle", "10", "stored score");
	snprintf(t, sizeof(t), "+%.3g", ymax);
	svg_text(b, SC_L - 4, SC_T + 8, "end", "9", t);
	snprintf(t, sizeof(t), "-%.3g", ymax);
	svg_text(b, SC_L - 4, SC_B, "end", "9", t);
	svg_text(b, SC_L - 4, sc_y(0, ymax) + 3, "end", "9", "0");
	rba_buf_printf(b, "<text x=\"14\" y=\"%.0f\" font-size=\"10\" "
			  "text-anchor=\"middle\" transform=\"rotate(-90 14 %.0f)\">"
			  "rebuilt - stored</text>\n",
		       (SC_T + SC_B) / 2, (SC_T + SC_B) / 2);
	if (a->max_delta == 0 && nf == 0 && a->case_arr == NULL) {
		rba_json_fmt_double(a->cases, n1);
		snprintf(t, sizeof(t), "all %s cases: rebuilt - stored = 0", n1);
		svg_text(b, (SC_L + SC_R) / 2, sc_y(0, ymax) - 6, "middle", "10", t);
	}
	/* every case (format 3): an open circle, a filled diamond near an
	 * edge, the ringed cross of a flip over it */
	for (size_t i = 0; i < a->npts; i++) {
		const struct pt *q = &a->pts[i];
		double x = sc_x(q->s), y = sc_y(delta_of(q->r, q->s), ymax);

		rba_buf_printf(b, "<g class=\"%s\" data-case=\"",
			       q->flip ? "flip-mark" : q->near ? "near-mark" : "case-mark");
		html_sv(b, q->id);
		rba_buf_printf(b, "\"><title>case ");
		html_sv(b, q->id);
		rba_buf_printf(b, ": stored ");
		html_num(b, q->s);
		rba_buf_printf(b, ", rebuilt ");
		html_num(b, q->r);
		rba_buf_printf(b, "</title>");
		if (q->flip) {
			mark_flip(b, x, y);
		} else if (q->near) {
			rba_buf_printf(b, "<path d=\"M");
			svg_n(b, x);
			rba_buf_put_u8(b, ' ');
			svg_n(b, y - 4.5);
			rba_buf_printf(b, " l4.5 4.5 l-4.5 4.5 l-4.5 -4.5 z\" fill=\"#000\"/>");
		} else {
			rba_buf_printf(b, "<circle cx=\"");
			svg_n(b, x);
			rba_buf_printf(b, "\" cy=\"");
			svg_n(b, y);
			rba_buf_printf(b, "\" r=\"2.2\" fill=\"none\" stroke=\"#000\" "
					  "stroke-width=\"0.7\"/>");
		}
		rba_buf_printf(b, "</g>\n");
	}
	/* the flipped cases listed (formats 1 and 2) */
	for (size_t i = 0; i < nf && a->case_arr == NULL; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		const struct rba_json_value *id = rd_str(r, f, "id");
		double s = rd_num(r, f, "stored_score");
		double dl = delta_of(rd_num(r, f, "rebuilt_score"), s);

		rba_buf_printf(b, "<g class=\"flip-mark\" data-case=\"");
		html_sv(b, id);
		rba_buf_printf(b, "\"><title>case ");
		html_sv(b, id);
		rba_buf_printf(b, ": stored ");
		html_num(b, s);
		rba_buf_printf(b, ", rebuilt ");
		html_num(b, rd_num(r, f, "rebuilt_score"));
		rba_buf_printf(b, "</title>");
		mark_flip(b, sc_x(s), sc_y(dl, ymax));
		rba_buf_printf(b, "</g>\n");
	}
	/* legend */
	mark_flip(b, SC_L + 10, SC_H - 12);
	svg_text(b, SC_L + 22, SC_H - 8, "start", "9", "flipped case");
	svg_line(b, SC_L + 110, SC_H - 16, SC_L + 110, SC_H - 4,
		 "stroke=\"#000\" stroke-width=\"1.6\"");
	svg_text(b, SC_L + 116, SC_H - 8, "start", "9", "band edge");
	rba_buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" "
			  "fill=\"#c8c8c8\"/>", SC_L + 190, SC_H - 16);
	rba_json_fmt_double(a->margin, n1);
	snprintf(t, sizeof(t), "near-threshold margin (%s)", n1);
	svg_text(b, SC_L + 204, SC_H - 8, "start", "9", t);
	svg_line(b, SC_L + 350, SC_H - 10, SC_L + 372, SC_H - 10,
		 "stroke=\"#000\" stroke-dasharray=\"6 3\"");
	svg_text(b, SC_L + 376, SC_H - 8, "start", "9", "tolerance");
	if (a->case_arr != NULL) {
		rba_buf_printf(b, "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"2.2\" fill=\"none\" "
				  "stroke=\"#000\" stroke-width=\"0.7\"/>", SC_L + 440, SC_H - 11);
		svg_text(b, SC_L + 446, SC_H - 8, "start", "9", "case");
		rba_buf_printf(b, "<path d=\"M%.0f %.0f l4.5 4.5 l-4.5 4.5 l-4.5 -4.5 z\" "
				  "fill=\"#000\"/>", SC_L + 480, SC_H - 15.5);
		svg_text(b, SC_L + 488, SC_H - 8, "start", "9", "near an edge");
	}
	rba_buf_printf(b, "</svg>\n");
}

static void
scatter_caption(const struct audit_view *a, struct rba_buf *b)
{
	rba_buf_printf(b, "<p class=\"caption\">Rebuilt minus stored score against "
			  "the stored score. ");
	if (a->argmax)
		rba_buf_printf(b, "The policy decides by argmax: it has no band "
				  "edges. ");
	else
		rba_buf_printf(b, "Solid lines are the policy's %d band edge%s, the "
				  "grey strips the near-threshold margin of ",
			       a->nedges, a->nedges == 1 ? "" : "s");
	if (!a->argmax) {
		html_num(b, a->margin);
		rba_buf_printf(b, " on each side (drawn at least 2 units wide). ");
	}
	rba_buf_printf(b, "Dashed lines are the tolerance &#177;");
	html_num(b, a->tol);
	if (a->case_arr != NULL) {
		rba_buf_printf(b, ". Every one of the evidence's ");
		html_count(b, a->cases);
		rba_buf_printf(b, " cases is drawn: an open circle, a filled diamond "
				  "when its stored score lies within the margin of an "
				  "edge (%zu), a ringed cross when the policy decides "
				  "its rebuilt score otherwise than its stored decision "
				  "(%zu flipped).</p>\n", a->nnear_pts, a->nflip_pts);
		return;
	}
	rba_buf_printf(b, ". The evidence lists ");
	html_count(b, a->listed);
	rba_buf_printf(b, " of its ");
	html_count(b, a->flips);
	rba_buf_printf(b, " flipped case%s, each marked with a ringed cross at its "
			  "two scores; of the other cases it states only counts and "
			  "the largest |delta|, ",
		       a->flips == 1 ? "" : "s");
	html_num(b, a->max_delta);
	rba_buf_printf(b, ", so they are not drawn one by one%s.</p>\n",
		       a->max_delta == 0 ? " (that largest |delta| is 0: every "
					   "case lies on the zero line)" : "");
}

/* ---- |delta| --------------------------------------------------------- */

#define HIST_BINS 20

/* Format 3: the histogram of every case's |delta|, HIST_BINS bins from 0
 * to a little over the largest of |delta| and the tolerance. */
static void
histogram(const struct audit_view *a, struct rba_buf *b)
{
	const double L = 70, R = 620, T = 24, B = 134;
	double xmax = fmax(a->tol, fabs(a->max_delta)), w;
	size_t bins[HIST_BINS] = { 0 }, top = 1, zero = 0;
	char t[120], n1[RBA_JSON_NUM_MAX];

	for (size_t i = 0; i < a->npts; i++)
		if (isfinite(delta_of(a->pts[i].r, a->pts[i].s)))
			xmax = fmax(xmax, fabs(delta_of(a->pts[i].r, a->pts[i].s)));
	if (!(xmax > 0) || !isfinite(xmax))
		xmax = 1e-3;
	xmax *= 1.05;
	w = xmax / HIST_BINS;
	for (size_t i = 0; i < a->npts; i++) {
		double dl = fabs(delta_of(a->pts[i].r, a->pts[i].s));
		size_t k = (size_t)(dl / w);
		if (!isfinite(dl))
			continue;
		if (dl == 0)
			zero++;
		if (k >= HIST_BINS)
			k = HIST_BINS - 1;
		bins[k]++;
	}
	for (int k = 0; k < HIST_BINS; k++)
		if (bins[k] > top)
			top = bins[k];
	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"delta\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 170\" "
			  "width=\"640\" height=\"170\" role=\"img\" "
			  "aria-label=\"the distribution of |delta| against the "
			  "tolerance\">\n");
	for (int k = 0; k < HIST_BINS; k++) {
		double h = (double)bins[k] / (double)top * (B - T);
		double x = L + (double)k / HIST_BINS * (R - L);

		rba_buf_printf(b, "<rect class=\"bin\" data-count=\"%zu\" x=\"", bins[k]);
		svg_n(b, x + 1);
		rba_buf_printf(b, "\" y=\"");
		svg_n(b, B - h);
		rba_buf_printf(b, "\" width=\"");
		svg_n(b, (R - L) / HIST_BINS - 2);
		rba_buf_printf(b, "\" height=\"");
		svg_n(b, h);
		rba_buf_printf(b, "\" fill=\"#777\" stroke=\"#000\" stroke-width=\"0.6\"/>");
		if (bins[k] > 0) {
			snprintf(t, sizeof(t), "%zu", bins[k]);
			svg_text(b, x + (R - L) / HIST_BINS / 2, B - h - 3, "middle", "8", t);
		}
	}
	svg_line(b, L, B, R, B, "stroke=\"#000\"");
	svg_text(b, L, B + 13, "middle", "9", "0");
	snprintf(t, sizeof(t), "%.3g", xmax);
	svg_text(b, R, B + 13, "middle", "9", t);
	svg_text(b, (L + R) / 2, B + 30, "middle", "10",
		 "|rebuilt - stored| (score), cases per bin");
	rba_buf_printf(b, "<g class=\"tolerance-line\">");
	svg_line(b, L + a->tol / xmax * (R - L), T - 6, L + a->tol / xmax * (R - L), B + 4,
		 "stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"");
	rba_json_fmt_double(a->tol, n1);
	snprintf(t, sizeof(t), "tolerance %s", n1);
	svg_text(b, L + a->tol / xmax * (R - L) + 4, T - 12, "start", "9", t);
	rba_buf_printf(b, "</g>\n</svg>\n");
	rba_buf_printf(b, "<p class=\"caption\">|delta| of every one of the ");
	html_count(b, a->cases);
	rba_buf_printf(b, " cases in %d bins of width ", HIST_BINS);
	html_num(b, w);
	rba_buf_printf(b, " (%zu of them exactly 0); the dashed line is the "
			  "%s tolerance ", zero, a->ad_hoc ? "ad hoc" : "declared");
	html_num(b, a->tol);
	rba_buf_printf(b, "; the largest |delta| is ");
	html_num(b, a->max_delta);
	rba_buf_printf(b, ".</p>\n</div>\n");
}

static void
distribution(struct rd *r, const struct audit_view *a, const struct rba_json_value *mcase,
	     struct rba_buf *b)
{
	const double L = 70, R = 620, Y = 50;
	double xmax = fmax(a->tol, fabs(a->max_delta));
	size_t nf = a->flipped != NULL ? a->flipped->n : 0;
	char t[200], n1[RBA_JSON_NUM_MAX];

	for (size_t i = 0; i < nf; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		double dl = fabs(delta_of(rd_num(r, f, "rebuilt_score"), rd_num(r, f, "stored_score")));
		if (isfinite(dl))
			xmax = fmax(xmax, dl);
	}
	if (a->case_arr != NULL) {
		histogram(a, b);
		return;
	}
	if (!(xmax > 0) || !isfinite(xmax))
		xmax = 1e-3;
	xmax *= 1.15;
#define DX(v) (L + fmin(fabs(v), xmax) / xmax * (R - L))
	rba_buf_printf(b, "<div class=\"fig\"><svg id=\"delta\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 110\" "
			  "width=\"640\" height=\"110\" role=\"img\" "
			  "aria-label=\"|delta| against the tolerance\">\n");
	svg_line(b, L, Y, R, Y, "stroke=\"#000\"");
	svg_text(b, L, Y + 14, "middle", "9", "0");
	snprintf(t, sizeof(t), "%.3g", xmax);
	svg_text(b, R, Y + 14, "middle", "9", t);
	svg_text(b, (L + R) / 2, Y + 30, "middle", "10",
		 "|rebuilt - stored| (score)");
	/* the tolerance */
	rba_buf_printf(b, "<g class=\"tolerance-line\">");
	svg_line(b, DX(a->tol), 12, DX(a->tol), Y + 4,
		 "stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"");
	rba_json_fmt_double(a->tol, n1);
	snprintf(t, sizeof(t), "tolerance %s", n1);
	svg_text(b, DX(a->tol), 10, "middle", "9", t);
	rba_buf_printf(b, "</g>\n");
	/* every case lies at or left of the largest |delta| */
	rba_buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"", L, Y - 6);
	svg_n(b, fmax(DX(a->max_delta) - L, 1.5));
	rba_buf_printf(b, "\" height=\"6\" fill=\"#555\"/>");
	rba_buf_printf(b, "<path class=\"max-delta\" d=\"M");
	svg_n(b, DX(a->max_delta));
	rba_buf_printf(b, " %.0f l5 8 l-5 8 l-5 -8 z\" fill=\"#000\"/>", Y + 38);
	rba_json_fmt_double(a->max_delta, n1);
	snprintf(t, sizeof(t), "largest %s", n1);
	svg_text(b, DX(a->max_delta), Y + 64, "middle", "9", t);
	for (size_t i = 0; i < nf; i++) {
		const struct rba_json_value *f = &a->flipped->items[i];
		double dl = delta_of(rd_num(r, f, "rebuilt_score"), rd_num(r, f, "stored_score"));
		rba_buf_printf(b, "<g class=\"flip-delta\">");
		mark_flip(b, DX(dl), Y - 14);
		rba_buf_printf(b, "</g>");
	}
	rba_buf_printf(b, "</svg>\n");
#undef DX
	rba_buf_printf(b, "<p class=\"caption\">The distribution of |delta| as "
			  "far as the evidence states it: every one of the ");
	html_count(b, a->cases);
	rba_buf_printf(b, " cases lies in the dark bar, from 0 to the largest "
			  "|delta| ");
	html_num(b, a->max_delta);
	rba_buf_printf(b, " (case ");
	html_sv(b, mcase);
	rba_buf_printf(b, ", the diamond); the dashed line is the %s "
			  "tolerance ", a->ad_hoc ? "ad hoc" : "declared");
	html_num(b, a->tol);
	rba_buf_printf(b, "; ringed crosses are the listed flipped cases.</p>\n"
			  "</div>\n");
}

/* ---- cases ----------------------------------------------------------- */

static void
section_cases(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	size_t nf = a->flipped != NULL ? a->flipped->n : 0;

	rba_buf_printf(b, "<h2>Flipped cases</h2>\n");
	if (nf == 0) {
		rba_buf_printf(b, "<p>");
		html_count(b, a->flips);
		rba_buf_printf(b, " flipped; none listed.</p>\n");
	} else {
		rba_buf_printf(b, "<p>");
		html_count(b, a->flips);
		rba_buf_printf(b, " flipped, ");
		html_count(b, a->listed);
		rba_buf_printf(b, " listed. Delta is the rebuilt score minus the "
				  "stored one; margins are the distance to the "
				  "nearest band edge.</p>\n<table id=\"flipped\"><tr>"
				  "<th>case</th><th>stored score</th><th>rebuilt "
				  "score</th><th>delta</th><th>stored decision</th>"
				  "<th>rebuilt decision</th><th>margin</th><th>rebuilt "
				  "margin</th><th>edge</th></tr>\n");
		for (size_t i = 0; i < nf; i++) {
			const struct rba_json_value *f = &a->flipped->items[i];
			double s = rd_num(r, f, "stored_score");
			double rs = rd_num(r, f, "rebuilt_score");

			rba_buf_printf(b, "<tr class=\"flipped-case\">");
			td_sv(b, rd_str(r, f, "id"), 1);
			td_num(b, s);
			td_num(b, rs);
			td_num(b, delta_of(rs, s));
			td_sv(b, rd_str(r, f, "stored_decision"), 0);
			td_sv(b, rd_str(r, f, "rebuilt_decision"), 0);
			td_num(b, rd_num(r, f, "margin"));
			td_num(b, rd_num(r, f, "rebuilt_margin"));
			td_num(b, rd_num(r, f, "edge"));
			rba_buf_printf(b, "</tr>\n");
		}
		rba_buf_printf(b, "</table>\n");
	}
	rba_buf_printf(b, "<h2>Near-threshold cases</h2>\n<p id=\"near\">");
	if (a->case_arr != NULL) {
		html_count(b, a->near);
		rba_buf_printf(b, " case%s within the margin ", a->near == 1 ? "" : "s");
		html_num(b, a->margin);
		rba_buf_printf(b, " of a band edge (");
		html_count(b, a->weak);
		rba_buf_printf(b, " within ten margins); the policy asks for at least ");
		html_count(b, rd_num(r, p, "policy.min_near_cases"));
		rba_buf_printf(b, ". The margin is the distance of the stored score "
				  "to the nearest edge.</p>\n");
		if (a->nnear_pts == 0)
			return;
		rba_buf_printf(b, "<table id=\"near-cases\"><tr><th>case</th><th>stored "
				  "score</th><th>rebuilt score</th><th>edge</th>"
				  "<th>margin</th><th>stored decision</th><th>rebuilt "
				  "decision</th></tr>\n");
		for (size_t i = 0; i < a->npts; i++) {
			const struct pt *q = &a->pts[i];
			if (!q->near)
				continue;
			rba_buf_printf(b, "<tr class=\"near-case\">");
			td_sv(b, q->id, 1);
			td_num(b, q->s);
			td_num(b, q->r);
			td_num(b, q->edge);
			td_num(b, q->sm);
			td_sv(b, q->sdec, 0);
			rba_buf_printf(b, "<td>");
			html_c(b, q->rdec != NULL ? q->rdec : "(none)");
			rba_buf_printf(b, "</td></tr>\n");
		}
		rba_buf_printf(b, "</table>\n");
		return;
	}
	html_count(b, a->near);
	rba_buf_printf(b, " case%s within the margin ", a->near == 1 ? "" : "s");
	html_num(b, a->margin);
	rba_buf_printf(b, " of a band edge, ");
	html_count(b, a->weak);
	rba_buf_printf(b, " within ten margins; the policy asks for at least ");
	html_count(b, rd_num(r, p, "policy.min_near_cases"));
	rba_buf_printf(b, " near-threshold case%s in the sample%s. The evidence "
			  "states these counts, not the cases: a table of them "
			  "would say more than it does.</p>\n",
		       rd_num(r, p, "policy.min_near_cases") == 1 ? "" : "s",
		       rd_bool(r, p, "policy.near_threshold.require_bits")
			       ? ", and that they reproduce bit for bit" : "");
}

/* ---- tolerance and history ------------------------------------------- */

static void
section_tolerance(struct rd *r, const struct audit_view *a, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *decl = rd_at(r, p, "policy.declared_at",
						  RD_STRN, 0);
	const struct rba_json_value *by = rd_at(r, p, "policy.judged_by", RD_STRN, 0);

	rba_buf_printf(b, "<h2>%s</h2>\n<table id=\"tolerance\">"
			  "<tr><th>largest score change</th><td class=\"n\">",
		       a->ad_hoc ? "Tolerance of the policy given for this audit "
				   "(ad hoc, not the one declared for the version)"
				 : "Declared tolerance");
	html_num(b, a->tol);
	rba_buf_printf(b, "</td></tr><tr><th>flips tolerated</th><td class=\"n\">");
	html_count(b, a->tol_flips);
	rba_buf_printf(b, "</td></tr><tr><th>near-threshold margin</th>"
			  "<td class=\"n\">");
	html_num(b, a->margin);
	rba_buf_printf(b, "</td></tr><tr><th>policy</th><td class=\"mono\">");
	html_sv(b, rd_str(r, p, "policy.digest"));
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
	rba_buf_printf(b, "</td></tr></table>\n");
}

static void
section_history(struct rd *r, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *h = rd_at(r, p, "history", RD_OBJ, 1);
	const struct rba_json_value *ea = rd_at(r, h, "earlier_audits", RD_ARR, 0);
	const struct rba_json_value *since = rd_at(r, h, "earlier_since", RD_STRN, 0);

	rba_buf_printf(b, "<h2>History</h2>\n<p>Signed at history head: record ");
	html_num(b, rd_num(r, h, "head.id"));
	rba_buf_printf(b, ", <span class=\"mono\" id=\"head\">");
	html_sv(b, rd_str(r, h, "head.digest"));
	rba_buf_printf(b, "</span>. This audit's chain digest <span class=\"mono\">");
	html_sv(b, rd_str(r, p, "audit.chain_digest"));
	rba_buf_printf(b, "</span> in store <span class=\"mono\">");
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
	rba_buf_printf(b, "<table id=\"earlier\"><tr><th>record</th><th>time</th>"
			  "<th>verdict</th><th>exit status</th><th>ad hoc</th></tr>\n");
	for (size_t i = 0; i < ea->n; i++) {
		const struct rba_json_value *x = &ea->items[i];
		const struct rba_json_value *ah = rd_at(r, x, "ad_hoc", RD_BOOL, 0);

		rba_buf_printf(b, "<tr>");
		td_num(b, rd_num(r, x, "id"));
		td_sv(b, rd_str(r, x, "time"), 0);
		td_sv(b, rd_str(r, x, "verdict"), 0);
		td_num(b, rd_num(r, x, "exit_status"));
		rba_buf_printf(b, "<td>%s</td></tr>\n",
			       ah == NULL ? "not stated"
			       : ah->type == RBA_JSON_TRUE ? "yes" : "no");
	}
	rba_buf_printf(b, "</table>\n");
}

static void
section_meta(struct rd *r, const struct report_source *src, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);

	rba_buf_printf(b, "<div class=\"meta\">Audit evidence <span class=\"mono\">");
	html_c(b, src->file);
	rba_buf_printf(b, "</span>, <span class=\"mono\" id=\"digest\">");
	html_c(b, src->digest);
	rba_buf_printf(b, "</span>, %s key <span class=\"mono\" id=\"keyid\">",
		       src->verified ? "signature verified with" : "NOT VERIFIED;");
	html_c(b, src->key_id[0] ? src->key_id : "unknown");
	rba_buf_printf(b, "</span>. Predicate <span class=\"mono\">");
	html_sv(b, rd_str(r, NULL, "predicateType"));
	rba_buf_printf(b, "</span>; subject <span class=\"mono\">");
	html_sv(b, rd_at(r, NULL, "subject", RD_ARR, 1) != NULL &&
				   rd_at(r, NULL, "subject", RD_ARR, 1)->n > 0
			   ? rd_at(r, &rd_at(r, NULL, "subject", RD_ARR, 1)->items[0],
				   "digest.sha256", RD_STR, 1)
			   : NULL);
	rba_buf_printf(b, "</span>; pinned artifact <span class=\"mono\">");
	html_sv(b, rd_str(r, p, "artifact.pinned"));
	rba_buf_printf(b, "</span>.</div>\n");
}

static void
section_tool(struct rd *r, struct rba_buf *b)
{
	const struct rba_json_value *p = rd_at(r, NULL, "predicate", RD_OBJ, 1);
	const struct rba_json_value *libs = rd_at(r, p, "tool.libraries", RD_OBJ, 1);

	rba_buf_printf(b, "<h2>Rebuild and tool</h2>\n<p>Validation accuracy ");
	html_num(b, rd_num(r, p, "rebuild.validation_accuracy"));
	rba_buf_printf(b, ", loss ");
	html_num(b, rd_num(r, p, "rebuild.validation_loss"));
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
	rba_buf_printf(b, " cases, <span class=\"mono\">");
	html_sv(b, rd_str(r, p, "sample.digest"));
	rba_buf_printf(b, "</span>; snapshot <span class=\"mono\">");
	html_sv(b, rd_str(r, p, "snapshot.digest"));
	rba_buf_printf(b, "</span>.</p>\n");
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

	if (n > REPORT_MAX_CASES) {
		snprintf(d->reason, sizeof(d->reason), "more than %d cases",
			 REPORT_MAX_CASES);
		return RBA_E_LIMIT;
	}
	if (a->argmax) {
		snprintf(d->key, sizeof(d->key), "predicate.results.cases");
		snprintf(d->reason, sizeof(d->reason),
			 "every case's scores under an argmax policy");
		return RBA_E_SCHEMA;
	}
	a->pts = calloc(n ? n : 1, sizeof(*a->pts));
	if (a->pts == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < n && !r->bad; i++) {
		const struct rba_json_value *c = &a->case_arr->items[i];
		struct pt *q = &a->pts[i];
		double rm;

		q->id = rd_str(r, c, "id");
		q->sdec = rd_str(r, c, "stored_decision");
		q->s = rd_num(r, c, "stored_score");
		q->r = rd_num(r, c, "rebuilt_score");
		if (r->bad)
			break;
		q->rdec = policy_decide(a->pol, q->r, &rm);
		policy_decide(a->pol, q->s, &q->sm);
		q->edge = policy_nearest_edge(a->pol, q->s);
		q->flip = q->rdec == NULL || strlen(q->rdec) != q->sdec->len ||
			  memcmp(q->rdec, q->sdec->str, q->sdec->len) != 0;
		q->near = q->sm <= a->margin;
		a->nflip_pts += q->flip != 0;
		a->nnear_pts += q->near != 0;
	}
	a->npts = r->bad ? 0 : n;
	return 0;
}

int
report_audit_page(struct rd *r, const struct report_source *src,
		  struct rba_buf *b, struct rba_detail *d)
{
	struct audit_view a;
	struct rba_buf title;
	const struct rba_json_value *p, *ptext, *mcase;
	int k, err;

	memset(&a, 0, sizeof(a));
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
	if (r->bad)
		return 0; /* the caller names the member */
	if (a.flipped->n > REPORT_MAX_CASES) {
		snprintf(d->reason, sizeof(d->reason),
			 "more than %d flipped cases listed", REPORT_MAX_CASES);
		return RBA_E_LIMIT;
	}
	k = report_policy_edges(ptext->str, ptext->len, a.edges, MAX_EDGES,
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
	rba_buf_init(&title);
	title_text(&a, &title);
	html_page_open(b, src, "audit evidence", rba_buf_cstr(&title));
	rba_buf_printf(b, "<h1 id=\"title\">");
	html_text(b, (const char *)title.p, title.len);
	rba_buf_printf(b, "</h1>\n");
	rba_buf_release(&title);
	section_meta(r, src, b);
	section_verdict(r, &a, b);
	section_links(r, b);
	section_trainer(r, b);
	rba_buf_printf(b, "<h2>Scores</h2>\n");
	scatter(r, &a, b);
	scatter_caption(&a, b);
	rba_buf_printf(b, "</div>\n");
	distribution(r, &a, mcase, b);
	section_cases(r, &a, b);
	section_tolerance(r, &a, b);
	section_history(r, b);
	report_log_section(r, src, b);
	section_tool(r, b);
	html_page_close(b, src);
	free(a.pts);
	policy_free(a.pol);
	return 0;
}
