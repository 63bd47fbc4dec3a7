/*
 * fuzz_csv.c - the CSV reader (data/csv.h): the streaming reader, the
 * validator a snapshot passes before it is stored, and the whole-file
 * table, on the same bytes.  They must agree: the table loads exactly
 * when the validator accepts, with the same rows and columns.
 */
#include <string.h>

#include "data/csv.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rba_detail d;
	struct csv_reader *r = NULL;
	const struct csv_field *f;
	struct csv_summary sum;
	struct csv_table *t = NULL;
	size_t n;
	int rc, vrc, trc;

	/* Every record, every field as a number. */
	if (csv_reader_open_mem(data, size, "fuzz.csv", &r) != 0)
		return 0;
	while ((rc = csv_reader_next(r, &f, &n, &d)) == 1) {
		for (size_t i = 0; i < n; i++) {
			double x;
			(void)csv_parse_number(f[i].p, f[i].n, &x);
			(void)csv_is_nonfinite_word(f[i].p, f[i].n);
		}
	}
	/* Errors are sticky. */
	if (rc < 0 && csv_reader_next(r, &f, &n, &d) != rc)
		fuzz_fail("an error of the reader did not stick");
	csv_reader_free(r);

	if (csv_reader_open_mem(data, size, "fuzz.csv", &r) != 0)
		return 0;
	memset(&sum, 0, sizeof(sum));
	vrc = csv_validate(r, &sum, &d);
	csv_reader_free(r);

	trc = csv_table_load_mem(data, size, "fuzz.csv", &t, &d);
	if (trc == RBA_E_NOMEM || vrc == RBA_E_NOMEM)
		goto out;
	if ((trc == 0) != (vrc == 0))
		fuzz_fail("table %d but validator %d", trc, vrc);
	if (trc == 0) {
		if (t->ncols != sum.ncols || t->nrows != sum.nrows)
			fuzz_fail("table %zux%zu, validator %zux%llu", t->nrows,
				  t->ncols, (size_t)sum.ncols,
				  (unsigned long long)sum.nrows);
		for (size_t c = 0; c < t->ncols; c++) {
			if (strcmp(t->names[c], sum.names[c]) != 0 ||
			    t->types[c] != sum.types[c])
				fuzz_fail("column %zu differs", c);
			if (csv_table_col(t, t->names[c]) != (long)c)
				fuzz_fail("column %zu not found by name", c);
		}
		/* every cell's text is the reader's field, one at a time
		 * and a row at a time */
		if (csv_reader_open_mem(data, size, "fuzz.csv", &r) != 0)
			goto out;
		(void)csv_reader_next(r, &f, &n, &d); /* the header */
		for (size_t i = 0; i < t->nrows; i++) {
			const char *rp[CSV_MAX_FIELDS];
			size_t rn[CSV_MAX_FIELDS];
			if (csv_reader_next(r, &f, &n, &d) != 1 || n != t->ncols)
				fuzz_fail("row %zu is not the reader's", i);
			csv_table_row(t, i, rp, rn);
			for (size_t c = 0; c < t->ncols; c++) {
				size_t cn;
				const char *p = csv_table_cell(t, i, c, &cn);
				if (cn != f[c].n || memcmp(p, f[c].p, cn) != 0 ||
				    rn[c] != cn || memcmp(rp[c], p, cn) != 0)
					fuzz_fail("cell %zu,%zu is not the reader's "
						  "field", i, c);
			}
		}
		csv_reader_free(r);
	}
out:
	csv_table_free(t);
	if (vrc == 0)
		csv_summary_release(&sum);
	return 0;
}
