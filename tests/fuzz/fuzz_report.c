/*
 * fuzz_report.c - the report renderer (report_evidence_html) on evidence
 * that did not verify, as `report --unverified` takes it: the seeds are
 * verified evidence files (audit v2 and v3, dispute v2 to v4), the
 * mutations whatever libFuzzer makes of them.  Whatever the input, a
 * page it writes keeps its Content-Security-Policy, carries the banner,
 * and every '<' in it opens or closes one of the renderer's own elements:
 * evidence text never becomes markup.
 */
#include <string.h>

#include "report/report.h"
#include "common/buf.h"
#include "tests/fuzz/fuzz.h"

static int
has(const struct rba_buf *b, const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i + n <= b->len; i++)
		if (memcmp(b->p + i, s, n) == 0)
			return 1;
	return 0;
}

/* Every '<' of the page opens or closes one of the renderer's own
 * elements: evidence text never becomes markup.  0, or the offset + 1
 * of the first that does not. */
static size_t
foreign_markup(const struct rba_buf *b)
{
	static const char *const own[] = {
		"!DOCTYPE", "html", "head", "meta", "title", "style", "body", "div",
		"h1", "h2", "p", "b", "ul", "li", "span", "table", "thead", "tbody",
		"tr", "th", "td", "sup", "svg", "rect", "line", "text", "circle",
		"path", "g", "code",
	};
	for (size_t i = 0; i < b->len; i++) {
		size_t j = i + 1, k = 0;
		int ok = 0;
		char name[16];

		if (b->p[i] != '<')
			continue;
		if (j < b->len && b->p[j] == '/')
			j++;
		while (j < b->len && k + 1 < sizeof(name) &&
		       (b->p[j] == '!' || (b->p[j] >= 'a' && b->p[j] <= 'z') ||
			(b->p[j] >= 'A' && b->p[j] <= 'Z') || (b->p[j] >= '0' && b->p[j] <= '9')))
			name[k++] = (char)b->p[j++];
		name[k] = '\0';
		for (size_t t = 0; t < sizeof(own) / sizeof(own[0]); t++)
			ok |= strcmp(name, own[t]) == 0;
		if (!ok || j >= b->len || (b->p[j] != '>' && b->p[j] != ' ' && b->p[j] != '/'))
			return i + 1;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_source src;
	struct rba_detail d;
	struct rba_buf b;
	int err;

	memset(&src, 0, sizeof(src));
	src.verified = 0;
	src.not_verified = "fuzz";
	src.file = "fuzz.json";
	strcpy(src.digest, "sha256:00");
	rba_buf_init(&b);
	err = report_evidence_html(data, size, &src, &b, NULL, &d);
	if (err == 0) {
		if (!has(&b, "default-src 'none'; style-src 'unsafe-inline'; img-src data:"))
			fuzz_fail("a page without its Content-Security-Policy");
		if (!has(&b, "<div class=\"banner\" id=\"unverified\">NOT VERIFIED"))
			fuzz_fail("an unverified page without its banner");
		size_t at = foreign_markup(&b);
		if (at != 0)
			fuzz_fail("markup the renderer did not write at byte %zu: %.40s",
				  at - 1, (const char *)b.p + at - 1);
	}
	rba_buf_release(&b);
	return 0;
}
