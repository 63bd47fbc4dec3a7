/* synth.c - the synthetic task generator. */
#include "data/synth.h"

#include <stdlib.h>
#include <string.h>

#include "data/encode.h"

#include "train/rng.h"

void
synth_params_default(struct synth_params *sp)
{
	sp->rows = 4000;
	sp->features = 32;
	sp->classes = 4;
	sp->noise = 0.3;
	sp->seed = 0;
	sp->val_noise = -1.0;
	sp->misalign_train = 0;
}

int
synth_check(const struct synth_params *sp, struct rba_detail *d)
{
	if (sp->rows < 1 || sp->rows > SYNTH_MAX_ROWS) {
		rba_detail_key(d, "rows");
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"rows must be 1 to %u", SYNTH_MAX_ROWS);
	}
	if (sp->features < 1 || sp->features > SYNTH_MAX_FEATURES) {
		rba_detail_key(d, "features");
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"features must be 1 to %u", SYNTH_MAX_FEATURES);
	}
	if (sp->classes < 2 || sp->classes > SYNTH_MAX_CLASSES) {
		rba_detail_key(d, "classes");
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"classes must be 2 to %u", SYNTH_MAX_CLASSES);
	}
	if (sp->rows * sp->features > SYNTH_MAX_CELLS) {
		rba_detail_key(d, "rows");
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"rows x features must be at most %u",
				SYNTH_MAX_CELLS);
	}
	if (!(sp->noise >= 0.0 && sp->noise <= 1.0) || sp->val_noise > 1.0 ||
	    sp->val_noise != sp->val_noise) {
		rba_detail_key(d, "noise");
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"noise must be between 0 and 1");
	}
	return 0;
}

int
synth_generate(const struct synth_params *sp, float *x, uint32_t *y)
{
	size_t *tr = NULL, *va = NULL, ntr = 0, nva = 0;
	unsigned char *isval = NULL;
	struct pins q;
	int variant = sp->val_noise >= 0.0 || sp->misalign_train;

	if (variant && sp->rows >= 2) {
		memset(&q, 0, sizeof(q));
		q.data.split_validation = SYNTH_SPLIT_VALIDATION;
		q.data.split_order = PINS_SPLIT_RANDOM;
		q.data.split_seed = 0;
		if (encode_split(&q, sp->rows, &tr, &ntr, &va, &nva) ||
		    (isval = calloc(sp->rows, 1)) == NULL) {
			free(tr);
			free(va);
			return RBA_E_NOMEM;
		}
		for (size_t i = 0; i < nva; i++)
			isval[va[i]] = 1;
	}
	uint64_t kx = rng_key(sp->seed, RNG_SYNTH, 0, 0);
	uint64_t kw = rng_key(sp->seed, RNG_SYNTH, 1, 0);
	uint64_t kp = rng_key(sp->seed, RNG_SYNTH, 2, 0);
	uint64_t kc = rng_key(sp->seed, RNG_SYNTH, 3, 0);
	size_t F = sp->features, C = sp->classes;

	for (uint64_t i = 0; i < sp->rows; i++) {
		const float *xr = x + i * F;
		uint32_t best = 0;
		float bestv = 0.0f;
		for (size_t f = 0; f < F; f++)
			x[i * F + f] = rng_normalf(kx, i * F + f);
		for (size_t c = 0; c < C; c++) {
			/* The rule's weights are redrawn by index, not stored:
			 * a pure function of (seed, c, f). */
			float s = 0.0f;
			for (size_t f = 0; f < F; f++)
				s += xr[f] * rng_normalf(kw, c * F + f);
			if (c == 0 || s > bestv) {
				bestv = s;
				best = (uint32_t)c;
			}
		}
		if (rng_uniform(kp, i) < (isval && isval[i] && sp->val_noise >= 0.0
						  ? sp->val_noise
						  : sp->noise))
			best = (uint32_t)rng_below(kc, i, C);
		y[i] = best;
	}
	if (sp->misalign_train && ntr > 1) {
		uint32_t first = y[tr[0]];
		for (size_t k = 0; k + 1 < ntr; k++)
			y[tr[k]] = y[tr[k + 1]];
		y[tr[ntr - 1]] = first;
	}
	free(tr);
	free(va);
	free(isval);
	return 0;
}

int
synth_csv(const struct synth_params *sp, struct rba_buf *out,
	  struct rba_detail *d)
{
	float *x;
	uint32_t *y;
	int err = synth_check(sp, d);

	if (err != 0)
		return err;
	x = malloc(sp->rows * sp->features * sizeof(float));
	y = malloc(sp->rows * sizeof(uint32_t));
	if (x == NULL || y == NULL) {
		free(x);
		free(y);
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	}
	if (synth_generate(sp, x, y) != 0) {
		free(x);
		free(y);
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	}
	for (uint32_t f = 0; f < sp->features; f++)
		rba_buf_printf(out, "x%u,", f + 1);
	rba_buf_printf(out, "class\n");
	for (uint64_t i = 0; i < sp->rows; i++) {
		for (uint32_t f = 0; f < sp->features; f++)
			rba_buf_printf(out, "%.9g,",
				       (double)x[i * sp->features + f]);
		rba_buf_printf(out, "%u\n", y[i]);
	}
	free(x);
	free(y);
	if (rba_buf_status(out) != 0)
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	return 0;
}
