/* strv.c - heap strings and vectors of them (strv.h). */
#include "common/strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/rba.h"

char *
rba_strdupf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

int
rba_strv_add(char ***v, size_t *n, char *s)
{
	char **nv;

	if (s == NULL)
		return RBA_E_NOMEM;
	nv = realloc(*v, (*n + 1) * sizeof(char *));
	if (nv == NULL) {
		free(s);
		return RBA_E_NOMEM;
	}
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

void
rba_strv_free(char **v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}
