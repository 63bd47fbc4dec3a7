/*
 * edits.c - the edits between two pins files and their application
 * (forensics.h, "edits"): both walk the canonical pins text, whose leaf
 * lines are the fields.
 */
#include "forensics/forensics.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct leaf {
	char path[96];
	char value[256];
};

/*
 * The leaves of a canonical pins text: "key: value" lines with their
 * mapping path ("train.lr"); mapping lines without a value only extend
 * the path.  Indentation is two spaces per level (the canonical form).
 */
static int
leaves(const struct pins *p, struct leaf **out, size_t *n)
{
	struct rba_buf b;
	const char *s, *end;
	char stack[8][48];
	size_t cap = 64, k = 0;
	struct leaf *v;

	rba_buf_init(&b);
	policy_pins_canonical(p, &b);
	if (rba_buf_status(&b) || (v = malloc(cap * sizeof(*v))) == NULL) {
		rba_buf_release(&b);
		return RBA_E_NOMEM;
	}
	s = (const char *)b.p;
	end = s + b.len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		size_t ind = 0, depth;
		const char *c;
		while (ind < len && s[ind] == ' ')
			ind++;
		depth = ind / 2;
		c = memchr(s + ind, ':', len - ind);
		if (c != NULL && depth < 8) {
			size_t kl = (size_t)(c - s - (ptrdiff_t)ind);
			if (kl >= sizeof(stack[0]))
				kl = sizeof(stack[0]) - 1;
			memcpy(stack[depth], s + ind, kl);
			stack[depth][kl] = 0;
			if ((size_t)(c - s) + 1 < len) {
				struct leaf *L;
				size_t at = 0;
				if (k == cap) {
					struct leaf *w = realloc(v, 2 * cap * sizeof(*v));
					if (w == NULL) {
						free(v);
						rba_buf_release(&b);
						return RBA_E_NOMEM;
					}
					v = w;
					cap *= 2;
				}
				L = &v[k++];
				L->path[0] = 0;
				for (size_t i = 0; i <= depth; i++)
					at += (size_t)snprintf(
						L->path + at,
						at < sizeof(L->path)
							? sizeof(L->path) - at
							: 0,
						"%s%s", i ? "." : "", stack[i]);
				snprintf(L->value, sizeof(L->value), "%.*s",
					 (int)(len - (size_t)(c - s) - 2),
					 c + 2);
			}
		}
		s += len + (nl != NULL);
	}
	rba_buf_release(&b);
	*out = v;
	*n = k;
	return 0;
}

static int
not_an_edit(const char *path)
{
	static const char *const skip[] = { "schema", "version",
					     "code_revision", "trainer_abi",
					     "environment", "artifact" };
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(path, skip[i]) == 0)
			return 1;
	return 0;
}

int
fx_edits(const struct pins *base, const struct pins *cand,
	 struct fx_edit **edits, size_t *n, struct rba_detail *d)
{
	struct leaf *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, k = 0;
	struct fx_edit *e = NULL;
	int err;

	*edits = NULL;
	*n = 0;
	if ((err = leaves(base, &a, &na)) || (err = leaves(cand, &b, &nb))) {
		free(a);
		return rba_fail(d, err, NULL, 0, 0, "out of memory");
	}
	for (size_t i = 0; i < na && i < nb; i++)
		if (strcmp(a[i].path, b[i].path) != 0)
			na = 0;
	if (na != nb) {
		free(a);
		free(b);
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"the two pins have different shapes (another "
				"model kind?): no field-by-field edits");
	}
	if ((e = calloc(na ? na : 1, sizeof(*e))) == NULL) {
		free(a);
		free(b);
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	}
	for (size_t i = 0; i < na; i++) {
		if (not_an_edit(a[i].path) || strcmp(a[i].value, b[i].value) == 0)
			continue;
		snprintf(e[k].path, sizeof(e[k].path), "%s", a[i].path);
		snprintf(e[k].base, sizeof(e[k].base), "%s", a[i].value);
		snprintf(e[k].cand, sizeof(e[k].cand), "%s", b[i].value);
		k++;
	}
	free(a);
	free(b);
	*edits = e;
	*n = k;
	return 0;
}

int
fx_edits_apply(const struct pins *base, const struct fx_edit *edits,
	       size_t n, const unsigned char *pick, struct pins **out,
	       struct rba_detail *d)
{
	struct leaf *a = NULL;
	size_t na = 0;
	struct rba_buf b, t;
	const char *s, *end;
	size_t li = 0;
	const char *rev = NULL;
	int err;

	*out = NULL;
	/* An exec trainer's code_revision is its trainer.revision (not an
	 * edit of its own): it follows a picked revision edit, so that the
	 * prefix is the pins of that commit. */
	for (size_t i = 0; i < n; i++)
		if (pick[i] && strcmp(edits[i].path, "trainer.revision") == 0)
			rev = edits[i].cand;
	if ((err = leaves(base, &a, &na)))
		return rba_fail(d, err, NULL, 0, 0, "out of memory");
	rba_buf_init(&b);
	rba_buf_init(&t);
	policy_pins_canonical(base, &b);
	s = (const char *)b.p;
	end = s + b.len;
	/* Walk the canonical text again; leaf lines come in the same order
	 * as leaves() found them. */
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		const char *c = memchr(s, ':', len);
		const char *repl = NULL;
		if (c != NULL && (size_t)(c - s) + 1 < len) {
			for (size_t i = 0; li < na && i < n; i++)
				if (pick[i] && strcmp(edits[i].path, a[li].path) == 0)
					repl = edits[i].cand;
			if (rev != NULL && li < na &&
			    strcmp(a[li].path, "code_revision") == 0 &&
			    strcmp(a[li].value, "null") != 0)
				repl = rev;
			li++;
		}
		if (repl != NULL)
			rba_buf_printf(&t, "%.*s %s\n", (int)(c - s + 1), s, repl);
		else
			rba_buf_printf(&t, "%.*s\n", (int)len, s);
		s += len + (nl != NULL);
	}
	free(a);
	rba_buf_release(&b);
	if (rba_buf_status(&t)) {
		rba_buf_release(&t);
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	}
	err = policy_pins_parse(t.p, t.len, "edited pins", out, d);
	rba_buf_release(&t);
	return err;
}
