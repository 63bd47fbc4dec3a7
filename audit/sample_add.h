/*
 * sample_add.h - adding an audit sample to a version (doc/design.md
 * section 6): the cases of a CSV file, scored and decided, stored in the
 * format of sample.h.
 */
#ifndef RBA_SAMPLE_ADD_H
#define RBA_SAMPLE_ADD_H

#include <stdint.h>

#include "sample/sample.h"
#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "store/store.h"

struct sample_add_request {
	const char *version;
	const char *path;	       /* the cases as CSV; "-": standard input */
	const char *id_column;	       /* NULL: the pins' data.id when the
					* file has it, else row numbers */
	const char *score_column;      /* NULL: score with the stored artifact */
	const char *decision_column;   /* needs score_column */
	/* With score_column: the logging precision of the scores, declared
	 * with the sample (sample.h, score_precision); has_score_precision
	 * 0: undeclared, bit for bit at binary32. */
	int has_score_precision;
	double score_precision;
	const struct policy *policy;   /* NULL: the version's */
	/*
	 * Called after each chunk is stored (may be NULL): the cases so far,
	 * the bytes of the file read so far and its size (0 when unknown:
	 * a pipe).  Bytes are read ahead of the cases by at most the
	 * reader's buffer.
	 */
	void (*progress)(void *ctx, uint64_t cases, uint64_t bytes_read,
			 uint64_t bytes_total);
	void *progress_ctx;
};

struct sample_add_result {
	uint64_t cases;
	uint32_t chunks;
	uint64_t size, stored_size;
	struct rba_digest digest;	 /* the sample digest */
	struct rba_digest source_digest; /* SHA-256 of the submitted bytes */
	uint64_t source_bytes;		 /* how many there were */
	struct rba_digest policy_digest; /* the policy of the decisions */
	int policy_from_version;	 /* 0: --policy */
	struct rba_digest artifact;
	uint32_t ndecisions;		 /* entries below */
	char **decisions;		 /* decision names, first use order */
	uint64_t *decision_counts;
};

void sample_add_result_release(struct sample_add_result *r);

/*
 * Stores the cases of rq->path as the sample of rq->version, replacing
 * any sample it had, in one write transaction: a kill part-way leaves
 * the store as it was.  With no score column, every case is scored with
 * the version's stored artifact (verified against its digest) by
 * sample_scorer and decided under the policy in force; with one, the
 * stored score is that column's number and the decision the decision
 * column's text (or the policy's decision for the score).  The SHA-256
 * of the file's bytes as read (all of them, a BOM, CRs and quotes
 * included; standard input as it arrived) is kept in the layout
 * (source_digest, sample.h) and returned in out->source_digest.
 *
 * Errors: RBA_E_NOTFOUND (no such version, d->key it); RBA_E_SCHEMA (no
 * policy in force, a named column missing, a value the model cannot
 * take, a band policy for a multiclass model: FILE:LINE:COL where one
 * applies); RBA_E_LIMIT (a case too large for a chunk, an id too long,
 * the map full); RBA_E_EXISTS (a case id twice, FILE:LINE and d->key the
 * id); RBA_E_USAGE (a decision column without a score column, a score
 * column for a multiclass model or with an argmax policy); the CSV
 * reader's errors; RBA_E_TAMPERED, RBA_E_CORRUPT and the store's
 * errors; RBA_E_NOMEM.
 */
int sample_add(struct store *s, const struct sample_add_request *rq,
	       struct sample_add_result *out, struct rba_detail *d);

#endif
