/*
 * strv.h - heap strings and vectors of them.
 *
 * A string vector is a char ** of n strings, each from malloc, in an
 * array from malloc; the vector and every string belong to its holder.
 * These are the one way the tree builds and frees them.
 */
#ifndef RBA_STRV_H
#define RBA_STRV_H

#include <stddef.h>

/*
 * A new string formatted as printf would, of any length; NULL when out
 * of memory or when the format fails.  The caller frees it.
 */
char *rba_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Appends s to the vector *v of *n strings and takes it over: on success
 * *v may move and *n grows by one; out of memory frees s and leaves the
 * vector as it was.  A NULL s (a failed rba_strdupf) is not appended.
 * 0 or RBA_E_NOMEM (also for a NULL s).
 */
int rba_strv_add(char ***v, size_t *n, char *s);

/* Frees the n strings of v and v itself; v may be NULL. */
void rba_strv_free(char **v, size_t n);

#endif
