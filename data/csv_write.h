/*
 * csv_write.h - the one CSV cell writer: every CSV this tool writes
 * (sample export, score's output, the cases an exec scorer reads) quotes
 * its cells by one rule.
 *
 * The rule is RFC 4180's and no more: a cell holding a comma, a double
 * quote, a CR or an LF is written between double quotes, each quote in
 * it doubled; every other cell is written as it is, an empty cell as
 * nothing and spaces kept where they are.  data/csv.h reads each back
 * to the same bytes, as does any RFC 4180 reader (Python's csv module,
 * pandas, R's read.csv) that does not strip spaces.
 */
#ifndef RBA_CSV_WRITE_H
#define RBA_CSV_WRITE_H

#include <stddef.h>

#include "common/buf.h"

/* The most bytes csv_cell_put writes for a cell of n bytes. */
#define CSV_CELL_MAX(n) (2 * (n) + 2)

/*
 * Writes the n bytes at s as one cell into out, which has room for
 * CSV_CELL_MAX(n) bytes; returns how many it wrote.
 */
size_t csv_cell_put(char *out, const char *s, size_t n);

/* The same, appended to b (errors stay in b: rba_buf_status). */
void csv_cell_buf(struct rba_buf *b, const char *s, size_t n);

#endif
