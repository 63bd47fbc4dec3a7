/*
 * synth.h - the controlled synthetic task (doc/design.md section 7).
 *
 * Inputs are independent standard normals; the clean label of a row is
 * the argmax over classes of a random linear rule (a classes x features
 * matrix of standard normals, no bias; ties go to the lower class); then
 * a fraction `noise` of the rows, picked independently with that
 * probability, get a class drawn uniformly from all classes (which may
 * be the clean one).  Every number is a keyed draw (rng.h, purpose
 * RNG_SYNTH) computed with the tool's own functions, so the CSV is the
 * same bytes on every machine.
 */
#ifndef RBA_SYNTH_H
#define RBA_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/rba.h"

#define SYNTH_MAX_ROWS 10000000u
#define SYNTH_MAX_FEATURES 4096u
#define SYNTH_MAX_CLASSES 1024u
#define SYNTH_MAX_CELLS 200000000u /* rows x features */
#define SYNTH_SPLIT_VALIDATION 0.25 /* the split the variants assume */

struct synth_params {
	uint64_t rows;	   /* default 4000 */
	uint32_t features; /* default 32 */
	uint32_t classes;  /* default 4 */
	double noise;	   /* [0, 1], default 0.3 */
	uint64_t seed;	   /* default 0 */
	/*
	 * Variants for experiments, both about the part of the rows that
	 * the chapter's split (validation 0.25, order random, seed 0: the
	 * pins defaults, encode_split) puts in validation:
	 * val_noise (>= 0) replaces noise for the validation rows, with the
	 * same draws (so 0.30 -> 0.29 relabels only the rows whose draw
	 * falls in [0.29, 0.30)); negative: noise everywhere (default -1).
	 * misalign_train: each training row takes the label of the next
	 * training row (the last the first's): labels misaligned by one.
	 */
	double val_noise;
	int misalign_train;
};

/* Fills the defaults above. */
void synth_params_default(struct synth_params *sp);

/*
 * Checks the parameters: rows 1..SYNTH_MAX_ROWS, features
 * 1..SYNTH_MAX_FEATURES, classes 2..SYNTH_MAX_CLASSES, rows x features
 * at most SYNTH_MAX_CELLS, noise in [0, 1].  0 or RBA_E_RANGE (d->key
 * names the parameter).
 */
int synth_check(const struct synth_params *sp, struct rba_detail *d);

/*
 * Generates the task into x (rows x features, row-major) and y (rows).
 * The caller checked sp.  0 or RBA_E_NOMEM (the variants need the split).
 */
int synth_generate(const struct synth_params *sp, float *x, uint32_t *y);

/*
 * Appends the CSV text: header x1,...,xN,class; floats printed with
 * %.9g (round-trips a float exactly); LF line ends.  0, RBA_E_RANGE or
 * RBA_E_NOMEM.
 */
int synth_csv(const struct synth_params *sp, struct rba_buf *out,
	      struct rba_detail *d);

#endif
