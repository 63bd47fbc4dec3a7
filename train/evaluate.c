/*
 * evaluate.c - the evaluation contract, its fingerprint and the metrics
 * under it (evaluate.h).  Beside training, never inside it: nothing here
 * is part of a trainer ABI's arithmetic.
 */
#include "train/evaluate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "train/fmath.h"
#include "train/rng.h"

void
rebuild_contract_from_pins(const struct pins *p, struct rebuild_contract *c)
{
	memset(c, 0, sizeof(*c));
	c->subset_rows =
		p->eval.subset == PINS_SUBSET_ROWS ? p->eval.subset_rows : 0;
	c->sum = p->eval.reduction == PINS_RED_SUM;
	c->dropout = p->eval.dropout != 0;
	c->input_scale = p->eval.input_scale;
	c->dropout_rate = p->model.kind == PINS_MODEL_MLP ? p->model.dropout
							  : 0.0;
	c->seed = p->train.seed;
}

int
rebuild_contract_canonical(const struct rebuild_contract *c)
{
	return c->subset_rows == 0 && !c->sum && !c->dropout &&
	       c->input_scale == 1.0;
}

void
rebuild_contract_describe(const struct rebuild_contract *c, char *out,
			  size_t n)
{
	char scale[RBA_JSON_NUM_MAX], rows[32];

	rba_json_fmt_double(c->input_scale, scale);
	if (c->subset_rows)
		snprintf(rows, sizeof(rows), "%llu",
			 (unsigned long long)c->subset_rows);
	else
		snprintf(rows, sizeof(rows), "all");
	snprintf(out, n, "subset %s, reduction %s, dropout %s, input_scale %s",
		 rows, c->sum ? "sum" : "mean", c->dropout ? "on" : "off",
		 scale);
}

static void
fingerprint(const struct rebuild_contract *c, const size_t *idx, size_t n,
	    struct rba_digest *out)
{
	struct rba_hasher h;
	struct rba_digest ih;
	char scale[RBA_JSON_NUM_MAX], hex[RBA_DIGEST_TEXT_LEN + 1], text[512];
	uint8_t le[8];

	rba_hasher_init(&h);
	for (size_t i = 0; i < n; i++) {
		rba_put_u64le(le, (uint64_t)idx[i]);
		rba_hasher_update(&h, le, sizeof(le));
	}
	rba_hasher_final(&h, &ih);
	rba_digest_format(&ih, hex);
	rba_json_fmt_double(c->input_scale, scale);
	/* hex is "sha256:<64 hex>"; the line holds the hex only. */
	snprintf(text, sizeof(text),
		 "rebuild-audit/eval/v1\nreduction=%s\ndropout=%s\n"
		 "input_scale=%s\nrows=%zu\nindices=%s\n",
		 c->sum ? "sum" : "mean", c->dropout ? "on" : "off", scale, n,
		 hex + 7);
	rba_digest_bytes(text, strlen(text), out);
}

/*
 * The forward pass with dropout active, in float, one row at a time in
 * row order; the loss of a row is log-sum-exp of its logits minus the
 * true logit, with the tool's own exp and log.
 */
static int
eval_dropout(const struct rebuild_model *m, const struct rebuild_set *s,
	     const struct rebuild_contract *c, uint32_t positive,
	     struct rebuild_evaluation *out)
{
	uint32_t width = 0, C = m->sizes[m->nlayers];
	float *a, *b, *score = NULL;
	uint8_t *pos = NULL;
	uint32_t keep_t = (uint32_t)((1.0 - c->dropout_rate) * 16777216.0);
	float keep_scale = 1.0f / (1.0f - (float)c->dropout_rate);
	double loss = 0.0;
	size_t right = 0;
	int err = 0;

	for (uint32_t l = 0; l <= m->nlayers; l++)
		if (m->sizes[l] > width)
			width = m->sizes[l];
	a = malloc(width * sizeof(float));
	b = malloc(width * sizeof(float));
	if (C == 2) {
		score = malloc((s->n ? s->n : 1) * sizeof(float));
		pos = malloc(s->n ? s->n : 1);
	}
	if (a == NULL || b == NULL || (C == 2 && (score == NULL || pos == NULL))) {
		err = RBA_E_NOMEM;
		goto done;
	}
	for (size_t i = 0; i < s->n; i++) {
		uint32_t in = m->sizes[0], best = 0;
		float mx, sum = 0.0f;
		memcpy(a, s->x + i * in, in * sizeof(float));
		for (uint32_t l = 0; l < m->nlayers; l++) {
			uint32_t o = m->sizes[l + 1];
			uint64_t key = rng_key(c->seed, RNG_EVAL_DROPOUT, l, 0);
			for (uint32_t j = 0; j < o; j++) {
				float z = m->b[l][j];
				for (uint32_t k = 0; k < in; k++)
					z += a[k] * m->w[l][(size_t)k * o + j];
				b[j] = z;
			}
			if (l + 1 < m->nlayers) {
				for (uint32_t j = 0; j < o; j++) {
					float z = b[j] > 0.0f ? b[j] : 0.0f;
					uint32_t r = (uint32_t)(rng_u64(key, (uint64_t)i * o + j) >> 40);
					b[j] = r < keep_t ? z * keep_scale : 0.0f;
				}
			}
			memcpy(a, b, o * sizeof(float));
			in = o;
		}
		mx = a[0];
		for (uint32_t j = 1; j < C; j++)
			if (a[j] > mx) {
				mx = a[j];
				best = j;
			}
		for (uint32_t j = 0; j < C; j++)
			sum += fm_expf(a[j] - mx);
		loss += (double)(fm_logf(sum) + mx - a[s->y[i]]);
		right += best == s->y[i];
		if (C == 2) {
			float e = fm_expf(a[positive] - mx);
			score[i] = e / sum;
			pos[i] = s->y[i] == positive;
		}
	}
	out->loss = s->n ? loss / (double)s->n : NAN;
	out->acc = s->n ? (double)right / (double)s->n : NAN;
	out->auc = NAN;
	if (C == 2)
		err = rebuild_auc(score, pos, s->n, &out->auc);
done:
	free(a);
	free(b);
	free(score);
	free(pos);
	return err;
}

int
rebuild_evaluate(uint32_t abi, const struct rebuild_model *m,
		 const struct rebuild_set *val, const size_t *idx,
		 uint32_t positive, const struct rebuild_contract *c,
		 struct rebuild_evaluation *out, struct rba_detail *d)
{
	struct rebuild_set s = *val;
	struct rebuild_epoch ep;
	float *x = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	if (c->subset_rows > val->n) {
		rba_detail_key(d, "eval.subset");
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"eval.subset is %llu rows, the validation part "
				"has %zu",
				(unsigned long long)c->subset_rows, val->n);
	}
	if (c->subset_rows)
		s.n = (size_t)c->subset_rows;
	if (c->dropout && m->kind != REBUILD_KIND_MLP) {
		rba_detail_key(d, "eval.dropout");
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
				"dropout at evaluation needs an mlp");
	}
	fingerprint(c, idx, s.n, &out->fingerprint);
	out->rows = s.n;
	if (c->input_scale != 1.0) {
		size_t cells = s.n * m->sizes[0];
		float f = (float)c->input_scale;
		x = malloc((cells ? cells : 1) * sizeof(float));
		if (x == NULL)
			return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0,
					"out of memory");
		for (size_t i = 0; i < cells; i++)
			x[i] = val->x[i] * f;
		s.x = x;
	}
	if (c->dropout && c->dropout_rate > 0.0) {
		err = eval_dropout(m, &s, c, positive, out);
	} else {
		err = rebuild_eval(abi, m, &s, positive, &ep);
		out->loss = ep.val_loss;
		out->acc = ep.val_acc;
		out->auc = ep.val_auc;
	}
	free(x);
	if (err != 0)
		return rba_fail(d, err, NULL, 0, 0, "cannot evaluate");
	if (c->sum)
		out->loss *= (double)s.n;
	return 0;
}

int
rebuild_evaluate_probs(const float *probs, uint32_t nclasses,
		       const uint32_t *y, size_t nval, const size_t *idx,
		       uint32_t positive, const struct rebuild_contract *c,
		       struct rebuild_evaluation *out, struct rba_detail *d)
{
	size_t n = nval;
	double sum = 0, hits = 0;
	float *score = NULL;
	uint8_t *pos = NULL;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->loss = out->acc = out->auc = NAN;
	if (c->subset_rows > nval) {
		rba_detail_key(d, "eval.subset");
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"eval.subset is %llu rows, the validation part "
				"has %zu",
				(unsigned long long)c->subset_rows, nval);
	}
	if (c->dropout || c->input_scale != 1.0) {
		rba_detail_key(d, c->dropout ? "eval.dropout" : "eval.input_scale");
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
				"an exec version's model is evaluated as it "
				"is: eval.dropout off and eval.input_scale 1");
	}
	if (c->subset_rows)
		n = (size_t)c->subset_rows;
	fingerprint(c, idx, n, &out->fingerprint);
	out->rows = n;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const float *p = probs + i * nclasses;
		uint32_t best = 0;
		double pt = p[y[i]];
		for (uint32_t k = 1; k < nclasses; k++)
			if (p[k] > p[best])
				best = k;
		sum -= log(pt > 1e-30 ? pt : 1e-30);
		hits += best == y[i];
	}
	out->loss = c->sum ? sum : sum / (double)n;
	out->acc = hits / (double)n;
	if (nclasses == 2 && positive < 2) {
		score = malloc(n * sizeof(float));
		pos = malloc(n);
		if (score == NULL || pos == NULL) {
			err = rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			score[i] = probs[i * nclasses + positive];
			pos[i] = y[i] == positive;
		}
		if (rebuild_auc(score, pos, n, &out->auc) != 0)
			err = rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	}
out:
	free(score);
	free(pos);
	return err;
}

void
rebuild_result_release(struct rebuild_result *r)
{
	if (r == NULL)
		return;
	free(r->artifact);
	rebuild_report_release(&r->report);
	memset(r, 0, sizeof(*r));
}
