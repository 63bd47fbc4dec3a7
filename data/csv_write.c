/*
 * csv_write.c - the one CSV cell writer (csv_write.h).
 */
#include <string.h>

#include "data/csv_write.h"

static int
csv_cell_needs_quotes(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
			return 1;
	return 0;
}

size_t
csv_cell_put(char *out, const char *s, size_t n)
{
	char *o = out;

	if (!csv_cell_needs_quotes(s, n)) {
		memcpy(o, s, n);
		return n;
	}
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			*o++ = '"';
		*o++ = s[i];
	}
	*o++ = '"';
	return (size_t)(o - out);
}

void
csv_cell_buf(struct rba_buf *b, const char *s, size_t n)
{
	if (rba_buf_reserve(b, CSV_CELL_MAX(n)) != 0)
		return;
	b->len += csv_cell_put((char *)b->p + b->len, s, n);
}
