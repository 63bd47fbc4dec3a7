/*
 * sample.h - audit samples (doc/design.md section 6): past cases of a
 * version, each with its id, its inputs exactly as submitted, its stored
 * score (the class probabilities, or one score taken from a column) and
 * its stored decision, kept in zstd chunks of the store with a case
 * index.  Documented for users in rebuild-audit-report(5), SAMPLES.
 *
 * Two records make a sample:
 *
 * The layout (the store's "columns" text of the sample), canonical text
 * lines "key=value\n" in this order, values escaped (\\ \n and bytes
 * below 0x20 as \xHH):
 *   rebuild-audit/sample/v2          first line, the format tag
 *   source=<file name the cases came from>   ("stdin" for "-")
 *   source_digest=sha256:...         v2 only: SHA-256 of the bytes of
 *                                    the submitted file as read (BOM,
 *                                    line ends and quoting included)
 *   scores=model|column              who gave the stored scores
 *   artifact=sha256:...              the stored artifact of the version
 *   score_column=<name>              only for scores=column
 *   decision_column=<name>           optional, only for scores=column
 *   score_precision=<number>         v3 only (scores=column): the
 *                                    logging precision declared with
 *                                    the sample, a finite number >= 0
 *   id_column=<name>                 absent: ids are data row numbers
 *   positive=<class index>|none
 *   classes=<n>, then n lines class=<label>
 *   columns=<n>, then n lines column=<name>   the CSV header, in order
 * Version 1 is the same without the source_digest line (samples added
 * before the digest was recorded): it still loads, with no digest, and
 * formats back to the same v1 text.  Version 3 is version 2 with the
 * score_precision line, written only for a sample whose logging
 * precision was declared, so every other sample keeps the v2 text it
 * had.  sample_layout_format writes v3 for a declared precision, else
 * v2 whenever the digest is known.  A tool that reads only older
 * versions refuses a newer layout as newer (RBA_E_NEWER), never as
 * damaged.
 *
 * A chunk (the raw bytes given to store_sample_add_chunk, at most
 * STORE_CHUNK_MAX), little-endian, strings NUL-terminated, numbers as
 * "nums": a u8 representation (1 i8, 2 i16, 3 i32, 4 f32, 5 f64, the
 * narrowest that holds every value of the block exactly) then the
 * values:
 *   u8 'K', u8 1 (format), u32 ncases (1..SAMPLE_CHUNK_CASES),
 *   u32 ncols (= the layout's), u32 nscores (= classes, or 1)
 *   ids:       u32 nbytes, ncases strings (1..STORE_CASE_ID_MAX bytes)
 *   scores:    nums of ncases x nscores (case-major)
 *   decisions: u32 ndict (1..65535), u32 nbytes, ndict strings, u8 width
 *              (1 or 2), ncases codes of that width
 *   ncols columns, each starting with a u8 kind:
 *     1 number: nums of ncases values, then u32 nexc and nexc x (u32
 *       case, string): the exact text of the cases whose text is not
 *       rba_json_fmt_double() of their value (case indices ascending);
 *     2 dictionary: u32 nlevels (1..ncases), u32 nbytes, nlevels
 *       strings in order of first use, u8 width (1, 2 or 4), ncases
 *       codes of that width;
 *     3 the case ids (only the layout's id column): no more bytes.
 * Format 2 is format 1 in which a number column may hold NaN, a missing
 * value (a field that was one of the model's missing tokens, pins
 * data.missing): every NaN has an exception, the exact text.  Written
 * only for a chunk that holds one, so every other chunk keeps format 1.
 * Nothing may follow the last column.  So every text is kept exactly,
 * numbers are ready to score without parsing, and a categorical column
 * is matched to the model's levels once per dictionary entry, not once
 * per case.
 */
#ifndef RBA_SAMPLE_H
#define RBA_SAMPLE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "data/csv.h"
#include "store/store.h"

#define SAMPLE_LAYOUT_SCHEMA "rebuild-audit/sample/v2"
#define SAMPLE_LAYOUT_SCHEMA_V1 "rebuild-audit/sample/v1"
#define SAMPLE_LAYOUT_SCHEMA_V3 "rebuild-audit/sample/v3"
/* The largest logging precision a sample may declare. */
#define SAMPLE_MAX_SCORE_PRECISION 1.0
#define SAMPLE_CHUNK_TAG 'K'
#define SAMPLE_CHUNK_FORMAT 1
#define SAMPLE_CHUNK_FORMAT_MISSING 2 /* number columns may hold NaN */
#define SAMPLE_CHUNK_CASES 8192	 /* cases in one chunk */
#define SAMPLE_MAX_COLUMNS CSV_MAX_FIELDS
#define SAMPLE_MAX_SCORES 1024	 /* numbers stored per case */
#define SAMPLE_MAX_DECISIONS 65535 /* distinct decisions in one chunk */

enum sample_scored_by { SAMPLE_SCORED_MODEL = 1, SAMPLE_SCORED_COLUMN = 2 };

/* The layout record, decoded.  Owns its strings (sample_layout_release). */
struct sample_layout {
	char *source;
	int has_source_digest; /* 0 for a v1 layout */
	struct rba_digest source_digest; /* the submitted file's bytes */
	int scored_by; /* enum sample_scored_by */
	struct rba_digest artifact;
	char *score_column;    /* scored_by column; else NULL */
	char *decision_column; /* NULL: decisions from the policy */
	/* v3: how far a logged score may be from the score the model
	 * computes, rounded to binary32, and still be that score (audit:
	 * bit-identical needs every stored score within it).  Undeclared:
	 * 0, bit for bit at binary32. */
	int has_score_precision;
	double score_precision;
	char *id_column;       /* NULL: data row numbers "1", "2", ... */
	uint32_t positive;     /* class index, or UINT32_MAX for none */
	uint32_t nclasses;
	char **classes;
	uint32_t ncols;
	char **names;
	/* Derived by parse (and set by sample_add): column indices or -1. */
	long id_col, score_col, decision_col;
	uint32_t nscores; /* nclasses for scores=model, 1 for column */
};

void sample_layout_release(struct sample_layout *l);
/*
 * Appends the canonical text: v2 with has_source_digest, else v1.
 * Allocation failure: rba_buf_status.
 */
void sample_layout_format(const struct sample_layout *l, struct rba_buf *out);
/*
 * Parses a layout text (v1 or v2) into *out.  RBA_E_CORRUPT (not this
 * format, a bad line or escape, a count that disagrees, a named column
 * missing from the header, a v2 layout without its source_digest or a
 * v1 layout with one; d->line the line); RBA_E_NEWER (a later
 * rebuild-audit/sample/vN); RBA_E_NOMEM.  On error *out is released.
 */
int sample_layout_parse(const char *text, size_t n, struct sample_layout *out,
			struct rba_detail *d);

enum sample_col_kind {
	SAMPLE_COL_NUMBER = 1,
	SAMPLE_COL_DICT = 2,
	SAMPLE_COL_IDS = 3,
};

/* One column of a chunk, decoded.  Pointers as for struct sample_chunk. */
struct sample_column {
	int kind;
	/* number: each read by sample_column_num (or a sample_floats_fn);
	 * num (ncases) is NULL where a chunk was decoded as stored, and the
	 * values are then only in the chunk's bytes: raw, in a
	 * representation repr (private to sample.c) */
	const double *num;
	const uint8_t *raw;
	uint8_t repr;
	uint32_t nexc;
	const uint32_t *exc_case; /* ascending */
	const char *const *exc_text;
	/* dictionary */
	uint32_t nlevels;
	const char *const *levels;
	const uint32_t *codes; /* ncases, each < nlevels */
};

/*
 * A chunk of cases, decoded (sample_chunk_decode) or built
 * (sample_add).  The arrays belong to the struct and are reused from
 * one decode to the next; strings point into the raw chunk bytes, which
 * must outlive the use of the decoded chunk.  A decoded chunk's ids are
 * packed as the chunk holds them, each right after the one before's NUL
 * (ids[i + 1] is ids[i] + strlen(ids[i]) + 1; so are sample_chunk_ids'):
 * store_index_sum_add_packed takes their lengths from that.
 */
struct sample_chunk {
	uint32_t ncases, ncols, nscores;
	const char *const *ids;
	const double *scores; /* ncases x nscores */
	uint32_t ndecisions;
	const char *const *decisions;
	const uint16_t *decision_codes; /* ncases */
	const struct sample_column *cols;
	/* private: owned storage */
	struct sample_chunk_mem *mem;
};

void sample_chunk_init(struct sample_chunk *c);
void sample_chunk_release(struct sample_chunk *c);

/*
 * Decodes n raw bytes of a chunk written for a layout of ncols columns
 * and nscores scores per case (id_col: the layout's id column or -1).
 * Every count, length, code and string is checked against the bytes
 * that remain and the caps.  0; RBA_E_CORRUPT (d->reason says what and
 * d->col the byte offset + 1); RBA_E_NOMEM.
 */
int sample_chunk_decode(const uint8_t *p, size_t n, uint32_t ncols,
			uint32_t nscores, long id_col, struct sample_chunk *out,
			struct rba_detail *d);

/*
 * As sample_chunk_decode, but the numbers of number columns are left in
 * p as stored, not copied out as doubles (num NULL): for a reader that
 * reads each value once (sample_column_num, a sample_floats_fn) while p
 * lives.  The same checks, the same errors.
 */
int sample_chunk_decode_stored(const uint8_t *p, size_t n, uint32_t ncols,
			       uint32_t nscores, long id_col,
			       struct sample_chunk *out, struct rba_detail *d);

/* Number column col's value of case i: the double that was stored. */
double sample_column_num(const struct sample_column *col, uint32_t i);

/*
 * out[j] = (float)sample_column_num(col, from + j) for j below cnt, from
 * the values as the chunk holds them, in vectors: sample_floats_pick
 * gives the widest the CPU has (RBA_STRICT_ISA narrowing it, as it
 * narrows the strict kernels: the same floats), to be picked once.
 */
typedef void sample_floats_fn(const struct sample_column *col, uint32_t from,
			      uint32_t cnt, float *out);
sample_floats_fn *sample_floats_pick(void);

/*
 * Decodes only the case case_id of a chunk, as a one-case chunk (ncases
 * 1, every dictionary reduced to its entry), after the same checks of
 * every byte as sample_chunk_decode; *index (may be NULL) gets its
 * position in the chunk.  Less memory and time than a whole decode.
 * Errors as sample_chunk_decode, and RBA_E_NOTFOUND (d->key the id)
 * when the chunk does not hold the case.
 */
int sample_chunk_decode_case(const uint8_t *p, size_t n, uint32_t ncols,
			     uint32_t nscores, long id_col, const char *case_id,
			     struct sample_chunk *out, uint32_t *index,
			     struct rba_detail *d);

/*
 * Only the case ids of a raw chunk, without decoding the rest: ids
 * (room for SAMPLE_CHUNK_CASES pointers) gets pointers into p, *ncases
 * their number.  The header and the id block are checked as
 * sample_chunk_decode checks them.  0 or RBA_E_CORRUPT.
 */
int sample_chunk_ids(const uint8_t *p, size_t n, const char **ids,
		     uint32_t *ncases, struct rba_detail *d);

/* Appends the raw bytes of chunk c (as decode reads them): a chunk built,
 * or decoded with its numbers as doubles (not as stored). */
void sample_chunk_encode(const struct sample_chunk *c, struct rba_buf *out);

/*
 * The exact text of case i in column col: a dictionary level, a case id,
 * an exception text, or rba_json_fmt_double() of the number written into tmp.
 * Borrowed from c (or tmp).
 */
const char *sample_chunk_text(const struct sample_chunk *c, uint32_t col,
			      uint32_t i, char tmp[32]);

/* Index of case id in c, or -1. */
long sample_chunk_find(const struct sample_chunk *c, const char *id);

/*
 * Loads the layout of version's sample in txn together with its info.
 * 0; RBA_E_NOTFOUND (no sample); RBA_E_CORRUPT; the store's errors.
 */
int sample_layout_load(struct store_txn *txn, const char *version,
		       struct store_sample_info *info,
		       struct sample_layout *layout, struct rba_detail *d);

/*
 * Reads the one chunk holding case_id (the case index, one chunk
 * decompressed and verified) and decodes that case alone
 * (sample_chunk_decode_case): *raw (malloc'd, the caller frees) holds
 * the bytes *c borrows from; *index is 0, the case's position in *c.
 * 0; RBA_E_NOTFOUND (no sample, no such case: d->key the id);
 * RBA_E_TAMPERED; RBA_E_CORRUPT; RBA_E_NOMEM; the store's errors.
 */
int sample_case_load(struct store_txn *txn, const char *version,
		     const struct sample_layout *layout, const char *case_id,
		     uint8_t **raw, struct sample_chunk *c, uint32_t *index,
		     struct rba_detail *d);

/*
 * Writes the sample's cases as CSV (the layout's header, one row per
 * case in stored order, every field its exact text; quoted when it
 * holds a comma, quote, CR or LF) to out, an output the caller opened
 * (common/fileio.h) and commits or aborts after: to its temporary, put
 * in place only by the commit once every chunk was verified, or, when
 * out is direct (a device, a FIFO, "-"), after a verifying first pass.
 * *cases gets the count (NULL allowed).  0; RBA_E_NOTFOUND;
 * RBA_E_TAMPERED; RBA_E_CORRUPT; RBA_E_NOMEM; the store's errors; out's
 * write error (out->err set, d naming out's path).
 */
struct rba_output;
int sample_export_output(struct store_txn *txn, const char *version,
			 struct rba_output *out, uint64_t *cases,
			 struct rba_detail *d);
/*
 * sample_export_output to out_path opened with RBA_OUTPUT_FORCE ("-" is
 * dash; NULL: refused), then committed: an existing regular file is
 * replaced, never a symbolic link, a device or a FIFO (written as they
 * are).  Its errors, and those of rba_output_open and rba_output_commit.
 */
int sample_export(struct store_txn *txn, const char *version,
		  const char *out_path, FILE *dash, uint64_t *cases,
		  struct rba_detail *d);

/*
 * Calls cb for every chunk of version's sample, decoded (c and raw
 * borrowed for the call), in stored order, each chunk verified first.
 * 0; the callback's value; the errors of store_sample_read and
 * sample_chunk_decode.
 */
int sample_walk(struct store_txn *txn, const char *version,
		const struct sample_layout *layout,
		int (*cb)(void *ctx, uint32_t chunk_no,
			  const struct sample_chunk *c),
		void *ctx, struct rba_detail *d);

#endif
