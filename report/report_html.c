/*
 * report_html.c - the page frame and the pieces every page uses: the
 * escaping of evidence text, numbers as the evidence writes them, the
 * member reader, and report_evidence_html, which picks the page.
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

static int
rd_type_ok(const struct rba_json_value *v, enum rd_want want)
{
	switch (want) {
	case RD_ANY:
		return 1;
	case RD_STR:
		return v->type == RBA_JSON_STRING;
	case RD_STRN:
		return v->type == RBA_JSON_STRING || v->type == RBA_JSON_NULL;
	case RD_NUM:
		return v->type == RBA_JSON_NUMBER;
	case RD_NUMN:
		return v->type == RBA_JSON_NUMBER || v->type == RBA_JSON_NULL;
	case RD_BOOL:
		return v->type == RBA_JSON_TRUE || v->type == RBA_JSON_FALSE;
	case RD_ARR:
		return v->type == RBA_JSON_ARRAY;
	case RD_OBJ:
		return v->type == RBA_JSON_OBJECT;
	}
	return 0;
}

static const char *
rd_want_name(enum rd_want want)
{
	static const char *const names[] = {
		"a value", "a string", "a number", "a number or null",
		"true or false", "an array", "an object", "a string or null",
	};
	return names[want];
}

/* The JSON path of node want below v ("predicate.results.flipped_cases[3]"),
 * found by walking the tree: only for a diagnostic.  1 when found. */
static int
path_of(const struct rba_json_value *v, const struct rba_json_value *want,
	char *out, size_t cap, int depth)
{
	size_t len = strlen(out);

	if (v == want)
		return 1;
	if (depth > RBA_JSON_MAX_DEPTH ||
	    (v->type != RBA_JSON_OBJECT && v->type != RBA_JSON_ARRAY))
		return 0;
	for (size_t i = 0; i < v->n; i++) {
		if (v->type == RBA_JSON_OBJECT)
			snprintf(out + len, cap - len, "%s%s", len ? "." : "", v->keys[i]);
		else
			snprintf(out + len, cap - len, "[%zu]", i);
		if (path_of(&v->items[i], want, out, cap, depth + 1))
			return 1;
		out[len] = '\0';
	}
	return 0;
}

const struct rba_json_value *
rd_at(struct rd *r, const struct rba_json_value *v, const char *path,
      enum rd_want want, int required)
{
	char key[128];
	const char *p = path;
	const struct rba_json_value *start;

	if (v == NULL)
		v = r->root;
	start = v;
	if (r->bad && required)
		return NULL;
	while (v != NULL && *p) {
		const char *dot = strchr(p, '.');
		size_t k = dot != NULL ? (size_t)(dot - p) : strlen(p);

		if (k >= sizeof(key))
			k = sizeof(key) - 1;
		memcpy(key, p, k);
		key[k] = '\0';
		v = rba_json_get(v, key);
		p += k;
		if (*p == '.')
			p++;
	}
	if (v != NULL && rd_type_ok(v, want))
		return v;
	if (required && !r->bad) {
		char at[96] = "";
		r->bad = 1;
		if (start != r->root)
			path_of(r->root, start, at, sizeof(at), 0);
		snprintf(r->path, sizeof(r->path), "%s%s%s", at, at[0] ? "." : "", path);
		r->want = rd_want_name(want);
	}
	return NULL;
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
	struct rd tmp = *r;

	tmp.bad = 0;
	return rd_at(&tmp, v, path, RD_STR, 0);
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
	html_num(b, v);
}

void
svg_n(struct rba_buf *b, double v)
{
	if (!isfinite(v))
		v = 0;
	rba_buf_printf(b, "%.2f", v);
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
	"h1{font-size:16pt;margin:0 0 4mm 0}"
	"h2{font-size:12pt;margin:6mm 0 2mm 0;border-bottom:1px solid #444;"
	"break-after:avoid}"
	"p{margin:1.5mm 0}"
	"table{border-collapse:collapse;width:100%;margin:2mm 0;font-size:9pt}"
	"th,td{border:1px solid #777;padding:1mm 1.5mm;text-align:left;"
	"vertical-align:top}"
	"th{background:#e8e8e8}"
	"tr{break-inside:avoid}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:anywhere;word-break:break-all}"
	".mono,code{font-family:'DejaVu Sans Mono',monospace;font-size:8.5pt;"
	"overflow-wrap:anywhere}"
	".same{font-weight:normal}"
	".changed{font-weight:bold;border:1.5px solid #000;padding:0 1mm}"
	".banner{background:#c00000;color:#fff;font-weight:bold;padding:2mm 3mm;"
	"margin:0 0 4mm 0;border:2px solid #600}"
	".meta{font-size:8.5pt;color:#333;margin-bottom:4mm}"
	".caption{font-size:8.5pt;color:#222;margin:1mm 0 3mm 0}"
	".fig{break-inside:avoid;margin:2mm 0}"
	"svg{display:block;max-width:100%;height:auto}"
	"svg text{font-family:'DejaVu Sans',Arial,sans-serif}"
	".verdict{font-size:11pt}"
	".screen-footer{margin-top:8mm;border-top:1px solid #999;font-size:8pt;"
	"color:#333}"
	"@media print{body{padding:0;max-width:none}.screen-footer{display:none}}";

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
	 * was not verified. */
	rba_buf_printf(b, "@page{size:A4;margin:18mm 14mm 20mm 14mm;"
			  "@bottom-left{content:\"%s ", src->from_store ? "history head"
								   : "evidence");
	css_safe(b, src->digest);
	if (!src->from_store) {
		rba_buf_printf(b, " key ");
		css_safe(b, src->key_id[0] ? src->key_id : "unknown");
	}
	rba_buf_printf(b, "\";font-size:7pt;font-family:monospace}"
			  "@bottom-right{content:\"page \" counter(page) \" of \" "
			  "counter(pages);font-size:8pt}");
	if (!src->verified)
		rba_buf_printf(b, "@top-center{content:\"NOT VERIFIED: the "
				  "signature of this evidence was not verified\";"
				  "color:#c00000;font-weight:bold;font-size:11pt}");
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
	r.root = &root;
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
	if (err == 0 && r.bad) {
		snprintf(d->key, sizeof(d->key), "%s", r.path);
		snprintf(d->reason, sizeof(d->reason),
			 "member '%s' missing or not %s", r.path, r.want);
		err = RBA_E_SCHEMA;
	}
	if (err == 0)
		err = rba_buf_status(out);
	rba_json_release(&root);
	return err;
}
