/*
 * report_vary.c - the page of a variation report (evidence/vary_evidence.h):
 * the control, one row per factor with what was changed, whether the
 * artifact changed and by how much on the sample, and what to read next.
 */
#include "report/report_priv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *
state_words(const char *st)
{
	if (strcmp(st, "same") == 0)
		return "same artifact";
	if (strcmp(st, "changes") == 0)
		return "CHANGES THE ARTIFACT";
	if (strcmp(st, "fails") == 0)
		return "THE REBUILD FAILS";
	return "not tried";
}

/*
 * A factor's row: what it did to the artifact, its flips and largest
 * score difference, what was changed.
 */
static void
factor_row(struct rd *r, struct rba_buf *b, const struct rba_json_value *x)
{
	const struct rba_json_value *st = rd_str(r, x, "state");
	const struct rba_json_value *flips = rd_at(r, x, "flips", RD_ANY, 1);
	double delta = rd_num(r, x, "max_score_delta");

	rba_buf_printf(b, "<tr><td>");
	html_sv(b, rd_str(r, x, "factor"));
	rba_buf_printf(b, "</td><td><strong>%s</strong></td><td>",
		       state_words(st->str));
	if (flips != NULL && flips->type == RBA_JSON_NUMBER)
		html_count(b, flips->num);
	else
		rba_buf_printf(b, "&mdash;");
	rba_buf_printf(b, "</td><td>");
	if (!isnan(delta))
		html_num(b, delta);
	else
		rba_buf_printf(b, "&mdash;");
	rba_buf_printf(b, "</td><td>");
	html_sv(b, rd_str(r, x, "detail"));
	rba_buf_printf(b, "</td></tr>");
}

int
report_vary_page(struct rd *r, const struct report_source *src,
		 struct rba_buf *b, struct rba_detail *d)
{
	const struct rba_json_value *rep = rd_at(r, NULL, "predicate.report", RD_OBJ, 1);
	const struct rba_json_value *f, *version, *control;
	double cases;
	size_t changed = 0, tried = 0;
	char title[400];

	(void)d;
	version = rd_str(r, rep, "version");
	control = rd_at(r, rep, "control", RD_OBJ, 1);
	f = rd_at(r, rep, "factors", RD_ARR, 1);
	cases = rd_num(r, rep, "sample_cases");
	if (r->json.err || f == NULL)
		return 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct rba_json_value *st = rd_str(r, &f->items[i], "state");
		changed += strcmp(st->str, "changes") == 0 || strcmp(st->str, "fails") == 0;
		tried += strcmp(st->str, "not-tried") != 0;
	}
	snprintf(title, sizeof(title), "Variation report: %.200s", version->str);
	html_page_open(b, src, "variation report", title);
	rba_buf_printf(b, "<section class=\"summary\"><h2>Summary</h2><p><strong>");
	if (changed == 0)
		rba_buf_printf(b, "No factor changes the artifact</strong> (%zu tried).",
			       tried);
	else
		rba_buf_printf(b, "%zu of %zu factors change the artifact</strong>.",
			       changed, tried);
	rba_buf_printf(b, " The version was rebuilt once as its pins say (the "
			  "control) and once for each factor with only that factor "
			  "changed; each artifact was compared with the control's.</p>"
			  "<table><tr><th>version</th><td>");
	html_sv(b, version);
	rba_buf_printf(b, "</td></tr><tr><th>run</th><td class=\"mono\">");
	html_sv(b, rd_str(r, NULL, "predicate.run"));
	rba_buf_printf(b, "</td></tr><tr><th>time</th><td>");
	html_sv(b, rd_str(r, rep, "time"));
	rba_buf_printf(b, "</td></tr><tr><th>trainer</th><td>");
	html_sv(b, rd_str(r, rep, "trainer"));
	rba_buf_printf(b, "</td></tr><tr><th>control</th><td class=\"mono\">");
	html_sv(b, rd_str(r, control, "artifact"));
	rba_buf_printf(b, " (%s)</td></tr>",
		       rd_bool(r, control, "pinned") ? "the pinned artifact"
						     : "not the pinned artifact");
	rba_buf_printf(b, "<tr><th>sample</th><td>");
	if (cases > 0) {
		html_count(b, cases);
		rba_buf_printf(b, " cases, scored by the control and by each artifact "
				  "that differs</td></tr>");
	} else {
		const struct rba_json_value *why = rd_opt_str(rep, "not_scored", r);
		rba_buf_printf(b, "not scored");
		if (why != NULL) {
			rba_buf_printf(b, ": ");
			html_sv(b, why);
		}
		rba_buf_printf(b, "</td></tr>");
	}
	rba_buf_printf(b, "</table></section>\n<section><h2>Factors</h2>"
			  "<table class=\"cases\"><thead><tr><th>factor</th>"
			  "<th>result</th><th>flips</th><th>largest score "
			  "difference</th><th>what was changed</th></tr></thead><tbody>");
	for (size_t i = 0; i < f->n; i++)
		factor_row(r, b, &f->items[i]);
	rba_buf_printf(b, "</tbody></table></section>\n<section><h2>Reading it</h2><p>");
	if (changed == 0)
		rba_buf_printf(b, "None of these inputs of the rebuild changes its bytes: "
				  "an audit that is not bit-identical differs for another "
				  "reason (the code, the data, the pins or the environment "
				  "record name it).");
	else
		rba_buf_printf(b, "Each factor marked as changing the artifact is an "
				  "input of the rebuild that its bytes depend on: pin it in "
				  "the trainer (a fixed value, a seed, a sort) or in the pins "
				  "(environment.variables), then rebuild and vary again.");
	rba_buf_printf(b, "</p></section>\n");
	html_page_close(b, src);
	return 0;
}
