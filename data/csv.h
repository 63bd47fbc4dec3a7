/*
 * csv.h - RFC 4180 reading of snapshots and case files (doc/design.md
 * section 5.5).
 *
 * Comma separator, optional double quotes ("" inside quotes is one
 * quote), LF or CRLF line ends, UTF-8 (a leading BOM is skipped; invalid
 * UTF-8 and a NUL byte are errors).  The first record is the header.
 * CR-only line ends (old Mac software) are not read: the whole file
 * would be one record, so a carriage return not followed by a line feed
 * outside quotes in the header record is an error that says so
 * (RBA_E_SYNTAX at the CR).  Elsewhere such a CR stays part of its
 * field, as it always was, so that stored snapshots read as before.
 * Numbers parse in the C locale whatever the process locale is.
 *
 * Two ways in:
 *  - csv_reader: streaming, one record at a time, memory bounded by
 *    CSV_MAX_LINE; a tap sees every raw byte read, so a caller can hash
 *    and store the file in the same pass.
 *  - csv_table: a whole file in memory, each numeric cell as float32
 *    and each cell's text read in place from the caller's bytes (a row
 *    with a quote, whose texts are unescaped, is kept as a copy).
 */
#ifndef RBA_CSV_H
#define RBA_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "common/rba.h"

#define CSV_MAX_LINE (1u << 20)	   /* bytes in one record */
#define CSV_MAX_FIELDS 4096	   /* fields in one record */
#define CSV_MAX_NAME 256	   /* bytes in one header name */

struct csv_reader;

struct csv_field {
	const char *p; /* not NUL-terminated; quotes already removed */
	size_t n;
	unsigned long col;  /* 1-based byte column where the field starts */
	unsigned long line; /* 1-based line where it starts (a record's
			     * quoted line breaks move it past the record's) */
};

/* Called with every byte read from the underlying file, in order. */
typedef int (*csv_tap_fn)(void *ctx, const uint8_t *p, size_t n);

/*
 * Opens path ("-" is standard input) for streaming.  name is used in
 * error details (NULL: path).  0, errno or RBA_E_NOMEM; d gets the file.
 */
int csv_reader_open(const char *path, const char *name, struct csv_reader **out,
		    struct rba_detail *d);
/*
 * Reads from an open descriptor (a pipe, say), which stays the caller's
 * to close.  name is used in error details.  0 or RBA_E_NOMEM.
 */
int csv_reader_open_fd(int fd, const char *name, struct csv_reader **out);
/* Reads from memory (borrowed until csv_reader_free). */
int csv_reader_open_mem(const void *p, size_t n, const char *name,
			struct csv_reader **out);
/* Installs a tap; must be called before the first csv_reader_next. */
void csv_reader_set_tap(struct csv_reader *r, csv_tap_fn fn, void *ctx);

/*
 * The next record.  Returns 1 with *fields (borrowed until the next call)
 * and *n, 0 at end of input, or an error: RBA_E_SYNTAX (bad quoting,
 * stray quote, a bare CR in the header record), RBA_E_LIMIT (record or field count over the caps),
 * RBA_E_ENCODING (invalid UTF-8, a NUL byte), errno; d gets FILE:LINE:COL.  A blank
 * final line is not a record.  Errors are sticky.
 */
int csv_reader_next(struct csv_reader *r, const struct csv_field **fields,
		    size_t *n, struct rba_detail *d);
/* 1-based line on which the last record returned started. */
unsigned long csv_reader_line(const struct csv_reader *r);
/* Bytes consumed so far. */
uint64_t csv_reader_bytes(const struct csv_reader *r);
const char *csv_reader_name(const struct csv_reader *r);
void csv_reader_free(struct csv_reader *r);

/*
 * Parses a numeric field: optional sign, digits with an optional point
 * and exponent (no hex, no spaces, no NaN or Inf).  0 with *out set
 * (strtod's value, bit for bit); RBA_E_SYNTAX when not a number;
 * RBA_E_RANGE when spelled as nan/inf, or when it overflows float32 (a
 * magnitude that rounds to infinity as a float: models read float32, so
 * 1e39 is as non-finite to them as Inf), with *out the double it parsed
 * to (HUGE_VAL beyond a double) unless it was a nan/inf word.
 */
int csv_parse_number(const char *p, size_t n, double *out);
/* 1 when the text spells nan/inf/infinity (any case, optional sign). */
int csv_is_nonfinite_word(const char *p, size_t n);

enum csv_coltype { CSV_NUMERIC = 1, CSV_TEXT = 2 };

/*
 * Missing-value tokens (pins data.missing, an artifact's list): field
 * texts that mean "no value" in a column whose other values are
 * numbers.  Such a column is numeric; its missing cells read as NaN in
 * csv_table's num.  Borrowed; NULL (or n 0) where a reader takes none:
 * an empty field in a numeric column is then an error as before.
 */
struct csv_missing {
	size_t n;
	const char *const *tok;
};

/* 1 when the n bytes at p are one of m's tokens (m may be NULL). */
int csv_is_missing(const struct csv_missing *m, const char *p, size_t n);

/*
 * Whole-file table.  A column is numeric when every value parses as a
 * finite number; otherwise text.  Errors: a ragged row (RBA_E_SCHEMA at
 * the row), an empty header name or a duplicate one, nan/inf or a number
 * that overflows float32 anywhere (RBA_E_RANGE, as csv_parse_number),
 * an empty field in a column whose other values are numbers, no data
 * rows.
 */
struct csv_table {
	size_t ncols, nrows;
	char **names;		 /* ncols header names, NUL-terminated */
	enum csv_coltype *types; /* ncols */
	float *num;		 /* nrows * ncols, each number as the float32
				  * a model reads (NaN: missing); valid in
				  * numeric columns */
	unsigned long *lines;	 /* nrows: line each row started on */
	char *file;		 /* name used in errors */
	/* private: the texts (csv_table_cell, csv_table_row) */
	const char *src;   /* the input's bytes (borrowed, or own) */
	uint8_t *own;	   /* csv_table_load's copy of the file */
	uint64_t *rowat;   /* nrows: where a row's fields start, in src
			    * (comma-separated) or, with CSV_ROW_COPY, in
			    * arena (NUL-separated) */
	uint32_t *rowlen;  /* nrows: bytes from a row's first field's
			    * start to its last field's end */
	char *arena;	   /* the rows with a quote, unescaped */
	size_t arena_len;
	size_t cap[5];	   /* bytes held: rowat, num, lines, arena, rowlen */
	uint8_t mapped[5]; /* held as a mapping (large), not malloc's */
	size_t faulted[5]; /* bytes of a mapping faulted in ahead */
};
#define CSV_ROW_COPY ((uint64_t)1 << 63)

/*
 * csv_table_load_mem with missing-value tokens m (NULL: none): a cell
 * holding one of them in a column whose other values are numbers is a
 * missing value, NaN in num.  p is borrowed until csv_table_free.
 */
int csv_table_load_mem_missing(const void *p, size_t n, const char *name,
			       const struct csv_missing *m,
			       struct csv_table **out, struct rba_detail *d);
/* Loads path (read whole, held by the table).  0 or an error as above;
 * d gets FILE:LINE:COL. */
int csv_table_load(const char *path, struct csv_table **out,
		   struct rba_detail *d);
/* Loads from memory; name is used in errors.  The table reads its texts
 * from p: the n bytes are borrowed until csv_table_free. */
int csv_table_load_mem(const void *p, size_t n, const char *name,
		       struct csv_table **out, struct rba_detail *d);
/*
 * The numbers (num) of t's rows 0 .. rows - 1 are read no more: the
 * memory of the whole pages they fill goes back to the system when num
 * is a mapping (a large table), and reads them as zeros after; nothing
 * happens otherwise.  For a caller that turns the numbers into
 * something else row by row (encode_fit): the two need not be held
 * whole at once.  t's texts (csv_table_cell) stay.
 */
void csv_table_num_release(struct csv_table *t, size_t rows);
/* Column index by name, or -1. */
long csv_table_col(const struct csv_table *t, const char *name);
/*
 * The text of a cell, *n bytes at the pointer returned (not
 * NUL-terminated; quotes removed), found by walking its row to column
 * col: for a cell now and then.  csv_table_row gives a whole row.
 */
const char *csv_table_cell(const struct csv_table *t, size_t row, size_t col,
			   size_t *n);
/* The texts of row's ncols cells into p[] and n[], in one walk. */
void csv_table_row(const struct csv_table *t, size_t row, const char **p,
		   size_t *n);
void csv_table_free(struct csv_table *t);

/*
 * The rules of csv_table applied one record at a time, for callers that
 * stream a file they never hold whole (csv_validate, `score`): header
 * names (non-empty, at most CSV_MAX_NAME bytes, unique), no ragged row,
 * no nan/inf nor a float32 overflow, at least one data row, no empty
 * field in a column whose other values are numbers.  Each error is the
 * one csv_table_load gives for the same input, at the same
 * FILE:LINE:COL.  Memory: the header names and a few counters per
 * column, whatever the file's length.
 *
 * csv_checker_start reads the header record from r (which must outlive
 * the checker and is read only through it afterwards).  0; an error of
 * csv_reader_next; RBA_E_SCHEMA (empty file, empty or duplicate name),
 * RBA_E_LIMIT (a name over CSV_MAX_NAME); RBA_E_NOMEM.  d gets
 * FILE:LINE:COL; *out is NULL on error.
 *
 * csv_checker_next reads the next data record and checks it: 1 with
 * *fields and *n as csv_reader_next gives them (borrowed until the next
 * call); 0 at the end of input once the end rules hold, and then
 * csv_checker_types is valid; or an error: those of csv_reader_next,
 * RBA_E_SCHEMA (ragged row, no data rows, empty field in a numeric
 * column), RBA_E_RANGE (nan/inf, a float32 overflow).  After an error,
 * stop.
 */
struct csv_checker;
int csv_checker_start(struct csv_reader *r, struct csv_checker **out,
		      struct rba_detail *d);
int csv_checker_next(struct csv_checker *c, const struct csv_field **fields,
		     size_t *n, struct rba_detail *d);
/* Takes m's tokens as missing values (before the first _next). */
void csv_checker_set_missing(struct csv_checker *c,
			     const struct csv_missing *m);
size_t csv_checker_ncols(const struct csv_checker *c);
/*
 * The numbers of the record csv_checker_next gave last, parsed while it
 * was checked: for field i, has[i] 1 and the value at [i] (what
 * csv_parse_number gives, bit for bit) when the field is a plain
 * decimal number; has[i] 0 otherwise (parse it if it is needed).  Both
 * arrays (ncols) are owned by c and change at the next call.
 */
const double *csv_checker_numbers(const struct csv_checker *c,
				  const uint8_t **has);
/* Header name of column i (< ncols), NUL-terminated, owned by c. */
const char *csv_checker_name(const struct csv_checker *c, size_t i);
/* Data records returned so far. */
uint64_t csv_checker_rows(const struct csv_checker *c);
/* ncols column types, owned by c; only after csv_checker_next gave 0. */
const enum csv_coltype *csv_checker_types(const struct csv_checker *c);
/* NULL allowed; does not free the reader. */
void csv_checker_free(struct csv_checker *c);

/*
 * The streaming validator used before a snapshot is stored: parses the
 * whole input with the rules of csv_table without keeping it, and returns
 * the header, row count and inferred column types.
 */
struct csv_summary {
	size_t ncols;
	uint64_t nrows;
	char **names;		 /* ncols, malloc'd */
	enum csv_coltype *types; /* ncols */
};
int csv_validate(struct csv_reader *r, struct csv_summary *out,
		 struct rba_detail *d);
/* csv_validate taking m's tokens as missing values. */
int csv_validate_missing(struct csv_reader *r, const struct csv_missing *m,
			 struct csv_summary *out, struct rba_detail *d);
void csv_summary_release(struct csv_summary *s);

#endif
