/*
 * scorer.h - scoring stored cases with a model: the model's own
 * preprocessing (data/encode.h) and forward pass, fed from decoded
 * sample chunks (sample/sample.h) a block of cases at a time.
 *
 * The result is bit for bit what artifact_score() gives for the same
 * cases (the unit tests hold it to that).  This module only maps sample
 * columns to model inputs; the arithmetic is the ABI's.  When every
 * one-hot feature of the model standardizes to zero when off, a chunk's
 * dictionary entries are matched to the model's one-hot features (or a
 * native column's level indexes) once per chunk and each case goes to
 * the ABI's sparse scorer (rebuild_sparse_score, train/trainer.h) as
 * its non-zero inputs, a native column's always among them.
 * Any other model is scored through artifact_score() a block at a time.
 */
#ifndef RBA_SCORER_H
#define RBA_SCORER_H

#include <stddef.h>
#include <stdint.h>

#include "sample/sample.h"
#include "common/rba.h"
#include "model/artifact.h"

#define SCORE_BLOCK 64 /* cases per forward block */
#define SCORE_ROWS 160 /* cases per sparse block (2 forest blocks) */

struct sample_scorer;

/*
 * Prepares a scorer for artifact a, which must outlive it.  0,
 * RBA_E_UNSUPPORTED (an ABI this build lacks), RBA_E_NOMEM.
 */
int sample_scorer_new(const struct artifact *a, struct sample_scorer **out,
		     struct rba_detail *d);
/* NULL allowed. */
void sample_scorer_free(struct sample_scorer *sc);

/* 1 when the sparse path is used (for reports and tests). */
int sample_scorer_is_sparse(const struct sample_scorer *sc);

/*
 * Finds each of the model's input columns in the layout by name.
 * 0; RBA_E_SCHEMA (a column is missing: d->key its name); RBA_E_NOMEM.
 */
int sample_scorer_bind(struct sample_scorer *sc, const struct sample_layout *l,
		      struct rba_detail *d);

/*
 * Scores the ncases cases of chunk c (bound layout) into probs (ncases x
 * classes floats).  0; RBA_E_SCHEMA for a case the model cannot take (a
 * numeric input that is not a number, an unknown level): d->key the
 * column, d->reason the case id and value, *bad_case (may be NULL) its
 * index; RBA_E_NOMEM.
 */
int sample_scorer_run(struct sample_scorer *sc, const struct sample_chunk *c,
		     float *probs, uint32_t *bad_case, struct rba_detail *d);

#endif
