/*
 * report_html.c - the page frame and the pieces every page uses: the
 * escaping of evidence text, numbers as the evidence writes them, the
 * member reader (over common/json.h's path reader), and
 * report_evidence_html, which picks the page.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_priv.h"
#include "evidence/dispute_evidence.h"
#include "evidence/vary_evidence.h"
#include "evidence/evidence.h"
#include "policy/policy.h"
#include "common/utf8.h"

/* ---- the member reader ---------------------------------------------------- */

const struct rba_json_value *
rd_at(struct rd *r, const struct rba_json_value *v, const char *path,
      enum rd_want want, int required)
{
	static const struct {
		enum rba_json_want want;
		unsigned flags;
	} as[] = {
		[RD_ANY] = { RBA_JSON_WANT_ANY, 0 },
		[RD_STR] = { RBA_JSON_WANT_STR, 0 },
		[RD_NUM] = { RBA_JSON_WANT_NUM, 0 },
		[RD_NUMN] = { RBA_JSON_WANT_NUM, RBA_JSON_NULL_OK },
		[RD_BOOL] = { RBA_JSON_WANT_BOOL, 0 },
		[RD_ARR] = { RBA_JSON_WANT_ARR, 0 },
		[RD_OBJ] = { RBA_JSON_WANT_OBJ, 0 },
		[RD_STRN] = { RBA_JSON_WANT_STR, RBA_JSON_NULL_OK },
	};

	return rba_json_rd_at(&r->json, v, path, as[want].want,
			      as[want].flags | (required ? 0 : RBA_JSON_QUIET));
}

const struct rba_json_value *
rd_str(struct rd *r, const struct rba_json_value *v, const char *path)
{
	return rd_at(r, v, path, RD_STR, 1);
}

double
rd_num(struct rd *r, const struct rba_json_value *v, const char *path)
{
	const struct rba_json_value *x = rd_at(r, v, path, RD_NUMN, 1);

	return x != NULL && x->type == RBA_JSON_NUMBER ? x->num : NAN;
}

int
rd_bool(struct rd *r, const struct rba_json_value *v, const char *path)
{
	const struct rba_json_value *x = rd_at(r, v, path, RD_BOOL, 1);

	return x != NULL && x->type == RBA_JSON_TRUE;
}

const struct rba_json_value *
rd_opt_str(const struct rba_json_value *v, const char *path, struct rd *r)
{
	return rd_at(r, v, path, RD_STR, 0);
}

/* ---- HTML -------------------------------------------------------------- */

/* Bidirectional controls and line and paragraph separators: they could
 * reorder or break the text around them, so they are shown, not
 * applied. */
static int
cp_shown(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

void
html_text(struct rba_buf *b, const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0;

	while (i < n) {
		uint32_t cp = 0;
		size_t k;

		switch (p[i]) {
		case '&':
			rba_buf_put(b, "&amp;", 5);
			i++;
			continue;
		case '<':
			rba_buf_put(b, "&lt;", 4);
			i++;
			continue;
		case '>':
			rba_buf_put(b, "&gt;", 4);
			i++;
			continue;
		case '"':
			rba_buf_put(b, "&quot;", 6);
			i++;
			continue;
		case '\'':
			rba_buf_put(b, "&#39;", 5);
			i++;
			continue;
		default:
			break;
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			rba_buf_printf(b, "\\x%02x", p[i]);
			i++;
			continue;
		}
		k = rba_utf8_next(p + i, n - i, &cp);
		if (k == 0) {
			rba_buf_printf(b, "\\x%02x", p[i]);
			i++;
			continue;
		}
		if (cp_shown(cp))
			rba_buf_printf(b, "\\u{%04X}", (unsigned)cp);
		else
			rba_buf_put(b, p + i, k);
		i += k;
	}
}

void
html_sv(struct rba_buf *b, const struct rba_json_value *v)
{
	if (v == NULL || v->type != RBA_JSON_STRING)
		rba_buf_put(b, "null", 4);
	else
		html_text(b, v->str, v->len);
}

void
html_c(struct rba_buf *b, const char *s)
{
	html_text(b, s, strlen(s));
}

void
html_num(struct rba_buf *b, double v)
{
	char t[RBA_JSON_NUM_MAX];

	if (isnan(v)) {
		rba_buf_put(b, "null", 4);
		return;
	}
	rba_json_fmt_double(v, t);
	rba_buf_printf(b, "%s", t);
}

void
html_count(struct rba_buf *b, double v)
{
	html_fig(b, v);
}

/* ---- numbers as the page shows them ---------------------------------------- */

static void
fig_digits(double v, int digits, char out[REPORT_FIG_MAX])
{
	if (isnan(v))
		snprintf(out, REPORT_FIG_MAX, "null");
	else if (isinf(v))
		snprintf(out, REPORT_FIG_MAX, "%s", v > 0 ? "inf" : "-inf");
	else if (v == 0)
		snprintf(out, REPORT_FIG_MAX, "0");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(out, REPORT_FIG_MAX, "%.0f", v);
	else
		snprintf(out, REPORT_FIG_MAX, "%.*g", digits, v);
}

void
num_fig(double v, char out[REPORT_FIG_MAX])
{
	fig_digits(v, REPORT_FIG_DIGITS, out);
}

void
num_fig_side(double v, double ref, char out[REPORT_FIG_MAX])
{
	int side = (v > ref) - (v < ref);

	for (int k = REPORT_FIG_DIGITS; k <= REPORT_FIG_DIGITS_MAX; k++) {
		double x;

		fig_digits(v, k, out);
		x = strtod(out, NULL);
		if (!isfinite(v) || !isfinite(ref) || (x > ref) - (x < ref) == side)
			return;
	}
	/* still on the reference at the most digits shown: say which side */
	{
		size_t len = strlen(out);
		snprintf(out + len, REPORT_FIG_MAX - len, "%s",
			 side > 0 ? "+" : "\xe2\x88\x92");
	}
}

void
html_fig(struct rba_buf *b, double v)
{
	char t[REPORT_FIG_MAX];

	num_fig(v, t);
	rba_buf_printf(b, "%s", t);
}

/* Whether shown is v's shortest form (nothing rounded away). */
static int
shown_exact(double v, const char *shown)
{
	char t[RBA_JSON_NUM_MAX];

	if (!isfinite(v))
		return 1;
	rba_json_fmt_double(v, t);
	return strcmp(t, shown) == 0;
}

void
notes_exact(struct report_notes *n, const char *what, double v, const char *shown)
{
	if (shown != NULL && shown_exact(v, shown))
		return;
	for (size_t i = 0; i < n->nex; i++)
		if (strcmp(n->ex[i].what, what) == 0)
			return;
	if (n->nex == n->capex) {
		size_t cap = n->capex ? 2 * n->capex : 32;
		struct report_exact *q = realloc(n->ex, cap * sizeof(*q));
		if (q == NULL) {
			n->nomem = 1;
			return;
		}
		n->ex = q;
		n->capex = cap;
	}
	snprintf(n->ex[n->nex].what, sizeof(n->ex[0].what), "%s", what);
	n->ex[n->nex++].v = v;
}

void
notes_case(struct report_notes *n, const struct rba_json_value *id, double stored,
	   double rebuilt)
{
	for (size_t i = 0; i < n->ncs; i++)
		if (n->cs[i].id == id)
			return;
	if (n->ncs == n->capcs) {
		size_t cap = n->capcs ? 2 * n->capcs : 64;
		struct report_case_exact *q = realloc(n->cs, cap * sizeof(*q));
		if (q == NULL) {
			n->nomem = 1;
			return;
		}
		n->cs = q;
		n->capcs = cap;
	}
	n->cs[n->ncs].id = id;
	n->cs[n->ncs].stored = stored;
	n->cs[n->ncs++].rebuilt = rebuilt;
}

void
html_val(struct report_notes *n, struct rba_buf *b, const char *what, double v)
{
	char t[REPORT_FIG_MAX];

	num_fig(v, t);
	rba_buf_printf(b, "%s", t);
	notes_exact(n, what, v, t);
}

void
html_val_side(struct report_notes *n, struct rba_buf *b, const char *what, double v,
	      double ref)
{
	char t[REPORT_FIG_MAX];

	num_fig_side(v, ref, t);
	rba_buf_printf(b, "%s", t);
	notes_exact(n, what, v, t);
}

/* ---- digests and prose ----------------------------------------------------- */

#define DG_SHOWN 12 /* hex digits of a digest shown */

static int
is_hex_lower(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int
is_digest(const char *s, size_t n)
{
	if (n != 7 + 64 || memcmp(s, "sha256:", 7) != 0)
		return 0;
	for (size_t i = 7; i < n; i++)
		if (!is_hex_lower(s[i]))
			return 0;
	return 1;
}

/* The mark of digest s (1-based), kept on first use; 0 out of memory. */
static size_t
notes_digest(struct report_notes *n, const char *s)
{
	for (size_t i = 0; i < n->ndg; i++)
		if (memcmp(n->dg[i], s, 71) == 0)
			return i + 1;
	if (n->ndg == n->capdg) {
		size_t cap = n->capdg ? 2 * n->capdg : 16;
		char(*q)[RBA_DIGEST_TEXT_LEN + 1] = realloc(n->dg, cap * sizeof(*q));
		if (q == NULL) {
			n->nomem = 1;
			return 0;
		}
		n->dg = q;
		n->capdg = cap;
	}
	memcpy(n->dg[n->ndg], s, 71);
	n->dg[n->ndg][71] = '\0';
	return ++n->ndg;
}

void
html_dg(struct report_notes *n, struct rba_buf *b, const char *s, size_t len)
{
	size_t k;

	if (!is_digest(s, len)) {
		html_text(b, s, len);
		return;
	}
	k = notes_digest(n, s);
	rba_buf_printf(b, "<span class=\"dg\">%.*s&#8230;<sup class=\"fn\">D%zu</sup></span>",
		       7 + DG_SHOWN, s, k);
}

void
html_sv_dg(struct report_notes *n, struct rba_buf *b, const struct rba_json_value *v)
{
	if (v == NULL || v->type != RBA_JSON_STRING)
		rba_buf_put(b, "null", 4);
	else
		html_dg(n, b, v->str, v->len);
}

static int
is_word_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

/* The length of the decimal number at s (n bytes): digits, a point and
 * digits, an exponent; 0 when none starts there.  *sig: its significant
 * digits (leading zeros not counted); *frac: whether it has a point or
 * an exponent. */
static size_t
number_at(const char *s, size_t n, int *sig, int *frac)
{
	size_t i = 0;
	int lead = 1, nd = 0;

	*sig = 0;
	*frac = 0;
	while (i < n && ((s[i] >= '0' && s[i] <= '9') || (s[i] == '.' && !*frac))) {
		if (s[i] == '.') {
			if (i + 1 >= n || s[i + 1] < '0' || s[i + 1] > '9')
				break;
			*frac = 1;
		} else {
			nd++;
			if (s[i] != '0')
				lead = 0;
			if (!lead)
				(*sig)++;
		}
		i++;
	}
	if (nd == 0)
		return 0;
	if (i + 1 < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;
		if (j < n && (s[j] == '-' || s[j] == '+'))
			j++;
		if (j < n && s[j] >= '0' && s[j] <= '9') {
			while (j < n && s[j] >= '0' && s[j] <= '9')
				j++;
			i = j;
			*frac = 1;
		}
	}
	return i;
}

void
html_prose(struct report_notes *n, struct rba_buf *b, const char *s, size_t len,
	   const char *where)
{
	size_t i = 0, from = 0;

	while (i < len) {
		int sig, frac;
		size_t k;

		if (i + 71 <= len && s[i] == 's' && is_digest(s + i, 71) &&
		    (i + 71 == len || !is_word_char((unsigned char)s[i + 71])) &&
		    (i == 0 || !is_word_char((unsigned char)s[i - 1]))) {
			html_text(b, s + from, i - from);
			html_dg(n, b, s + i, 71);
			i += 71;
			from = i;
			continue;
		}
		if (s[i] >= '0' && s[i] <= '9' &&
		    (i == 0 || (!is_word_char((unsigned char)s[i - 1]) && s[i - 1] != '.')) &&
		    (k = number_at(s + i, len - i, &sig, &frac)) > 0) {
			if (frac && sig > REPORT_FIG_DIGITS_MAX &&
			    (i + k == len || !is_word_char((unsigned char)s[i + k]))) {
				char text[64], what[128], t[REPORT_FIG_MAX];
				double v;

				snprintf(text, sizeof(text), "%.*s", (int)(k < 63 ? k : 63), s + i);
				v = strtod(text, NULL);
				num_fig(v, t);
				html_text(b, s + from, i - from);
				rba_buf_printf(b, "%s", t);
				snprintf(what, sizeof(what), "in %s: %s", where, t);
				notes_exact(n, what, v, NULL);
				from = i + k;
			}
			i += k;
			continue;
		}
		i++;
	}
	html_text(b, s + from, len - from);
}

void
html_sv_prose(struct report_notes *n, struct rba_buf *b, const struct rba_json_value *v,
	      const char *where)
{
	if (v == NULL || v->type != RBA_JSON_STRING)
		rba_buf_put(b, "null", 4);
	else
		html_prose(n, b, v->str, v->len, where);
}

void
html_notes_sections(struct report_notes *n, struct rba_buf *b)
{
	if (n->ndg > 0) {
		rba_buf_printf(b, "<h2 id=\"digests\">Digests in full</h2>\n<p>The page "
				  "shows each SHA-256 digest by its first %d hex digits "
				  "and a mark; here is each in full.</p>\n",
			       DG_SHOWN);
		table_open(b, "digest-table", "mark|digest");
		for (size_t i = 0; i < n->ndg; i++)
			rba_buf_printf(b, "<tr><td>D%zu</td><td class=\"mono\">%s</td></tr>\n",
				       i + 1, n->dg[i]);
		table_close(b);
	}
	if (n->nex == 0 && n->ncs == 0)
		return;
	rba_buf_printf(b, "<h2 id=\"exact\">Exact values</h2>\n<p>The page rounds "
			  "numbers to about %d significant digits.  Each one it "
			  "rounded is here as the signed file states it, to copy; the "
			  "file itself holds every number in full.</p>\n",
		       REPORT_FIG_DIGITS);
	if (n->nex > 0) {
		table_open(b, "exact-values", "member|exact value");
		for (size_t i = 0; i < n->nex; i++) {
			rba_buf_printf(b, "<tr><td class=\"mono\">");
			html_c(b, n->ex[i].what);
			rba_buf_printf(b, "</td><td class=\"mono\">");
			html_num(b, n->ex[i].v);
			rba_buf_printf(b, "</td></tr>\n");
		}
		table_close(b);
	}
	if (n->ncs > 0) {
		rba_buf_printf(b, "<p>The scores of the cases listed on this page:</p>\n");
		table_open(b, "exact-cases", "case|stored score|rebuilt score");
		for (size_t i = 0; i < n->ncs; i++) {
			rba_buf_printf(b, "<tr><td class=\"mono\">");
			html_sv(b, n->cs[i].id);
			rba_buf_printf(b, "</td><td class=\"mono\">");
			html_num(b, n->cs[i].stored);
			rba_buf_printf(b, "</td><td class=\"mono\">");
			html_num(b, n->cs[i].rebuilt);
			rba_buf_printf(b, "</td></tr>\n");
		}
		table_close(b);
	}
}

void
report_notes_release(struct report_notes *n)
{
	free(n->dg);
	free(n->ex);
	free(n->cs);
	memset(n, 0, sizeof(*n));
}

/* ---- tables ------------------------------------------------------------- */

void
table_open(struct rba_buf *b, const char *id, const char *cols)
{
	rba_buf_printf(b, "<table");
	if (id != NULL)
		rba_buf_printf(b, " id=\"%s\"", id);
	rba_buf_printf(b, "><thead><tr>");
	for (const char *c = cols; *c;) {
		const char *bar = strchr(c, '|');
		size_t k = bar != NULL ? (size_t)(bar - c) : strlen(c);
		rba_buf_printf(b, "<th>");
		html_text(b, c, k);
		rba_buf_printf(b, "</th>");
		c += k;
		if (*c == '|')
			c++;
	}
	rba_buf_printf(b, "</tr></thead><tbody>\n");
}

void
table_close(struct rba_buf *b)
{
	rba_buf_printf(b, "</tbody></table>\n");
}

/* ---- SVG ------------------------------------------------------------------ */

void
svg_n(struct rba_buf *b, double v)
{
	if (!isfinite(v))
		v = 0;
	rba_buf_printf(b, "%.2f", v);
}

double
svg_text_width(const char *s, size_t n, double size)
{
	size_t chars = 0;

	for (size_t i = 0; i < n; i++)
		chars += ((unsigned char)s[i] & 0xc0) != 0x80;
	return (double)chars * 0.64 * size;
}

double
svg_label(struct rba_buf *b, double x, double y, const char *anchor, double size,
	  const char *s, size_t n, double xmin, double xmax, const char *cls,
	  int bold, double *right)
{
	double w = svg_text_width(s, n, size), left;
	size_t keep = n;
	int cut = 0;

	/* cut at a character boundary until it fits, with room for the
	 * ellipsis */
	while (w > xmax - xmin && keep > 0) {
		do
			keep--;
		while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80);
		w = svg_text_width(s, keep, size) + 0.64 * size;
		cut = 1;
	}
	left = strcmp(anchor, "start") == 0 ? x
	       : strcmp(anchor, "end") == 0 ? x - w
					    : x - w / 2;
	if (left + w > xmax)
		left = xmax - w;
	if (left < xmin)
		left = xmin;
	rba_buf_printf(b, "<text x=\"");
	svg_n(b, left);
	rba_buf_printf(b, "\" y=\"");
	svg_n(b, y);
	rba_buf_printf(b, "\" font-size=\"%g\"%s%s%s%s>", size, cls ? " class=\"" : "",
		       cls ? cls : "", cls ? "\"" : "", bold ? " font-weight=\"bold\"" : "");
	html_text(b, s, keep);
	if (cut)
		rba_buf_printf(b, "&#8230;");
	rba_buf_printf(b, "</text>");
	if (right != NULL)
		*right = left + w;
	return left;
}

double
nice_step(double lo, double hi, int want, double *first)
{
	double span = hi - lo, raw, mag, step;

	if (!(span > 0) || !isfinite(span) || want < 1) {
		*first = lo;
		return 0;
	}
	raw = span / want;
	mag = pow(10, floor(log10(raw)));
	step = raw / mag < 1.5	 ? mag
	       : raw / mag < 3.5 ? 2 * mag
	       : raw / mag < 7.5 ? 5 * mag
				 : 10 * mag;
	*first = ceil(lo / step - 1e-9) * step;
	return step;
}

/* Only the characters a digest and a key id have, for CSS strings. */
static void
css_safe(struct rba_buf *b, const char *s)
{
	for (; *s; s++) {
		char c = *s;

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || c == ':')
			rba_buf_put_u8(b, (uint8_t)c);
		else
			rba_buf_put_u8(b, '?');
	}
}

static const char css[] =
	"*{box-sizing:border-box}"
	"html{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
	"body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;font-size:10pt;"
	"color:#111;margin:0 auto;max-width:190mm;padding:8mm 6mm;line-height:1.35}"
	"h1{font-size:15pt;margin:0 0 3mm 0}"
	"h2{font-size:12pt;margin:5mm 0 2mm 0;border-bottom:1px solid #444;"
	"break-after:avoid}"
	"p{margin:1.5mm 0}"
	"ul{margin:1mm 0;padding-left:6mm}"
	"table{border-collapse:collapse;width:100%;margin:2mm 0;font-size:9pt}"
	/* a header row repeats on every page a table runs over */
	"thead{display:table-header-group}"
	"th,td{border:1px solid #777;padding:0.8mm 1.5mm;text-align:left;"
	"vertical-align:top}"
	"th{background:#e8e8e8}"
	"tr{break-inside:avoid}"
	"table.kv{break-inside:avoid}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"td.id{white-space:nowrap}"
	".keep{break-inside:avoid}"
	".mono,code{font-family:'DejaVu Sans Mono',monospace;font-size:8.5pt;"
	"overflow-wrap:anywhere}"
	".dg{font-family:'DejaVu Sans Mono',monospace;font-size:8.5pt;"
	"white-space:nowrap}"
	"sup.fn{font-size:6.5pt;line-height:0;margin-left:0.3mm}"
	".same{font-weight:normal}"
	".changed{font-weight:bold;border:1.5px solid #000;padding:0 1mm}"
	".banner{background:#c00000;color:#fff;font-weight:bold;padding:2mm 3mm;"
	"margin:0 0 4mm 0;border:2px solid #600}"
	".summary{border:2px solid #000;padding:1.5mm 3mm;margin:0 0 3mm 0;"
	"break-inside:avoid}"
	".summary table{margin:1mm 0;font-size:9pt}"
	".summary th{width:30mm;background:none;border:none;padding:0.6mm 1mm 0.6mm 0}"
	".summary td{border:none;padding:0.6mm 0}"
	/* a yes and a no differ in shape, not only in words */
	".ok{border:1.5px solid #000;padding:0 1.5mm;font-weight:bold}"
	".no{background:#000;color:#fff;border:2.5px double #fff;outline:1.5px "
	"solid #000;padding:0 1.5mm;font-weight:bold}"
	".disagree{border:2px dashed #000;padding:1mm 2mm;margin:1mm 0;font-weight:bold}"
	".meta{font-size:8.5pt;color:#333;margin-bottom:3mm}"
	".caption{font-size:8.5pt;color:#222;margin:1mm 0 3mm 0}"
	".fig{break-inside:avoid;margin:2mm 0}"
	"svg{display:block;max-width:100%;height:auto}"
	"svg text{font-family:'DejaVu Sans',Arial,sans-serif}"
	/* a label over lines keeps a white rim */
	"svg text.halo{paint-order:stroke;stroke:#fff;stroke-width:2.5px;"
	"stroke-linejoin:round}"
	".verdict{font-size:11pt}"
	".screen-footer{margin-top:8mm;border-top:1px solid #999;font-size:8pt;"
	"color:#333}"
	"@media print{body{padding:0;max-width:none}.screen-footer{display:none}}";

#define MARGIN_FONT "font-family:'DejaVu Sans',Arial,sans-serif;"

void
html_page_open(struct rba_buf *b, const struct report_source *src,
	       const char *kind_name, const char *title)
{
	rba_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
			  "<meta charset=\"utf-8\">\n"
			  "<meta http-equiv=\"Content-Security-Policy\" content=\""
			  "default-src 'none'; style-src 'unsafe-inline'; "
			  "img-src data:; base-uri 'none'; form-action 'none'\">\n"
			  "<meta name=\"referrer\" content=\"no-referrer\">\n"
			  "<meta name=\"generator\" content=\"rebuild-audit report\">\n"
			  "<title>");
	html_c(b, title);
	rba_buf_printf(b, "</title>\n<style>%s", css);
	/* The print rules: A4, the page number and the file's digest and
	 * key on every page, and the banner on every page when the file
	 * was not verified.  Every margin box the page sets is one the
	 * browser does not fill with its own header or footer (a date, the
	 * title, the file's URL). */
	rba_buf_printf(b, "@page{size:A4;margin:16mm 14mm 18mm 14mm;"
			  "@top-left{content:\"rebuild-audit report: %s\";" MARGIN_FONT "font-size:7.5pt;"
			  "color:#333}",
		       kind_name);
	if (src->verified)
		rba_buf_printf(b, "@top-right{content:\"%s\";" MARGIN_FONT
				  "font-size:7.5pt;color:#333}",
			       src->from_store ? "made from the store, not signed"
					       : "signature verified");
	rba_buf_printf(b, "@bottom-left{content:\"%s ", src->from_store ? "history head"
								      : "evidence");
	css_safe(b, src->digest);
	if (!src->from_store) {
		rba_buf_printf(b, " key ");
		css_safe(b, src->key_id[0] ? src->key_id : "unknown");
	}
	rba_buf_printf(b, "\";font-size:7pt;font-family:'DejaVu Sans Mono',monospace}"
			  "@bottom-right{content:\"page \" counter(page) \" of \" "
			  "counter(pages);" MARGIN_FONT "font-size:8pt}");
	if (!src->verified)
		rba_buf_printf(b, "@top-right{content:\"NOT VERIFIED: the "
				  "signature of this evidence was not verified\";"
				  "color:#c00000;font-weight:bold;font-size:9pt;"
				  MARGIN_FONT "width:150mm;text-align:right}");
	rba_buf_printf(b, "}\n</style>\n</head>\n<body>\n");
	if (!src->verified) {
		rba_buf_printf(b, "<div class=\"banner\" id=\"unverified\">NOT "
				  "VERIFIED: this page was made from %s whose "
				  "signature was not verified (",
			       kind_name);
		html_c(b, src->not_verified != NULL ? src->not_verified
						    : "the signature was not checked");
		rba_buf_printf(b, "). Nothing on it is vouched for by a key.</div>\n");
	}
}

void
html_page_close(struct rba_buf *b, const struct report_source *src)
{
	if (src->from_store) {
		rba_buf_printf(b, "<div class=\"screen-footer\">history head <span "
				  "class=\"mono\">");
		html_c(b, src->digest);
		rba_buf_printf(b, "</span>; made from the store by rebuild-audit report, "
				  "not signed</div>\n</body>\n</html>\n");
		return;
	}
	rba_buf_printf(b, "<div class=\"screen-footer\">evidence <span "
			  "class=\"mono\">");
	html_c(b, src->digest);
	rba_buf_printf(b, "</span>, key <span class=\"mono\">");
	html_c(b, src->key_id[0] ? src->key_id : "unknown");
	rba_buf_printf(b, "</span>, %s; made by rebuild-audit report</div>\n"
			  "</body>\n</html>\n",
		       src->verified ? "signature verified" : "NOT VERIFIED");
}

/* ---- the policy's edges ------------------------------------------------ */

int
report_policy_edges(const char *text, size_t n, double *edges, size_t cap,
		    const char **names, int *argmax, struct policy **pol_out)
{
	struct policy *pol = NULL;
	size_t k = 0;

	*argmax = 0;
	*pol_out = NULL;
	if (policy_parse(text, n, "policy", &pol, NULL) != 0)
		return -1;
	*pol_out = pol;
	if (pol->argmax) {
		*argmax = 1;
		return 0;
	}
	for (size_t i = 0; i < pol->nbands && k < cap; i++) {
		names[k] = pol->bands[i].decision;
		if (!pol->bands[i].has_below)
			break;
		edges[k++] = pol->bands[i].below;
	}
	if (pol->nbands > 0)
		names[k] = pol->bands[pol->nbands - 1].decision;
	return (int)k;
}

/* ---- the entry point --------------------------------------------------- */

int
report_evidence_html(const void *msg, size_t n, const struct report_source *src,
		     struct rba_buf *out, enum report_kind *kind,
		     struct rba_detail *d)
{
	struct rba_json_value root;
	struct rd r;
	const char *type;
	int err;

	rba_detail_clear(d);
	if (kind != NULL)
		*kind = REPORT_KIND_NONE;
	if (n > EVIDENCE_MAX_BYTES) {
		snprintf(d->reason, sizeof(d->reason), "larger than %u bytes",
			 (unsigned)EVIDENCE_MAX_BYTES);
		return RBA_E_LIMIT;
	}
	if ((err = rba_json_parse(msg, n, &root, d)) != 0) {
		if (err == RBA_E_SYNTAX) {
			char why[200];
			snprintf(why, sizeof(why), "%.199s", d->reason);
			snprintf(d->reason, sizeof(d->reason),
				 "not evidence: not JSON: %s", why);
		}
		return err;
	}
	memset(&r, 0, sizeof(r));
	rba_json_rd_init(&r.json, &root, NULL, NULL);
	type = rba_json_get_str(&root, "predicateType");
	if (root.type != RBA_JSON_OBJECT || type == NULL ||
	    rba_json_get_str(&root, "_type") == NULL ||
	    strcmp(rba_json_get_str(&root, "_type"), EVIDENCE_STATEMENT_TYPE) != 0) {
		snprintf(d->reason, sizeof(d->reason),
			 "not rebuild-audit evidence: not an in-toto statement "
			 "with a predicateType");
		snprintf(d->key, sizeof(d->key), "predicateType");
		rba_json_release(&root);
		return RBA_E_SCHEMA;
	}
	if (strcmp(type, EVIDENCE_PREDICATE_TYPE) == 0 ||
	    strcmp(type, EVIDENCE_PREDICATE_TYPE_V3) == 0 ||
	    strcmp(type, EVIDENCE_PREDICATE_TYPE_V4) == 0 ||
	    strcmp(type, EVIDENCE_PREDICATE_TYPE_V1) == 0) {
		if (kind != NULL)
			*kind = REPORT_KIND_AUDIT;
		err = report_audit_page(&r, src, out, d);
	} else if (strcmp(type, DISPUTE_PREDICATE_TYPE) == 0 ||
		   strcmp(type, DISPUTE_PREDICATE_TYPE_V3) == 0 ||
		   strcmp(type, DISPUTE_PREDICATE_TYPE_V4) == 0 ||
		   strcmp(type, DISPUTE_PREDICATE_TYPE_V1) == 0) {
		if (kind != NULL)
			*kind = REPORT_KIND_DISPUTE;
		err = report_dispute_page(&r, src, out, d);
	} else if (strcmp(type, VARY_PREDICATE_TYPE) == 0) {
		if (kind != NULL)
			*kind = REPORT_KIND_VARY;
		err = report_vary_page(&r, src, out, d);
	} else {
		int newer = strncmp(type, EVIDENCE_PREDICATE_PREFIX,
				    strlen(EVIDENCE_PREDICATE_PREFIX)) == 0 ||
			    strncmp(type, DISPUTE_PREDICATE_PREFIX,
				    strlen(DISPUTE_PREDICATE_PREFIX)) == 0 ||
			    strncmp(type, VARY_PREDICATE_PREFIX,
				    strlen(VARY_PREDICATE_PREFIX)) == 0;
		snprintf(d->key, sizeof(d->key), "predicateType");
		snprintf(d->reason, sizeof(d->reason), "%s",
			 newer ? "a version of evidence this tool does not know "
				 "(newer than this tool?)"
			       : "not rebuild-audit evidence: an unknown predicateType");
		err = newer ? RBA_E_NEWER : RBA_E_SCHEMA;
	}
	if (err == 0 && r.json.err) {
		/* the path as the page has always cut it, at 127 bytes */
		snprintf(d->key, sizeof(d->key), "%.127s", r.json.path);
		snprintf(d->reason, sizeof(d->reason),
			 "member '%.127s' missing or not %s", r.json.path,
			 r.json.want);
		err = RBA_E_SCHEMA;
	}
	if (err == 0)
		err = rba_buf_status(out);
	report_notes_release(&r.notes);
	rba_json_release(&root);
	return err;
}
