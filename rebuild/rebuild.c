/* rebuild.c - pins + snapshot bytes -> artifact bytes. */
#include "rebuild/rebuild.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "model/artifact.h"
#include "data/csv.h"
#include "data/encode.h"
#include "exec/exec.h"
#include "common/json.h"

struct rebuild_prepared {
	char *name;
	struct encode_spec spec; /* standardization from the training part */
	struct encode_data data; /* raw encoded rows */
	size_t *tr, *va, ntr, nva;
	float *xtr, *xva;
	uint32_t *ytr, *yva;
	uint32_t positive;
	int xtr_borrowed, xva_borrowed; /* rows of data.x, not copies */
	/* An exec trainer's pins: a copy of the verified snapshot bytes,
	 * which its command is given at every training. */
	uint8_t *snap;
	size_t snap_n;
};

/*
 * A prepared snapshot, per trainer kind: whether the kind is given the
 * snapshot's bytes at every training, and what a training and an
 * evaluation from a prepared snapshot are.  These are this file's (they
 * read struct rebuild_prepared), so they are kept here beside the
 * entries they belong to rather than in them, as vary keeps its recipes
 * (audit/vary.c); every kind has a row (prepared_ops, at the end).
 */
struct prepared_ops {
	const struct trainer_kind *kind;
	int keeps_snapshot;
	int (*train)(const struct pins *p, uint32_t abi,
		     const struct rebuild_prepared *prep,
		     const struct rebuild_progress *progress,
		     struct rebuild_result *out, struct rba_detail *d);
	int (*evaluate)(const struct pins *p,
			const struct rebuild_prepared *prep, const void *a,
			size_t n, const struct rebuild_contract *c,
			struct rebuild_evaluation *out, struct rba_detail *d);
};

static const struct prepared_ops *prepared_of(const struct pins *p);

/*
 * Whether rows idx[0..n) are consecutive and the standardization is the
 * identity (mean +0, scale 1: (x - +0) / 1 is x, bit for bit, -0 and NaN
 * too; a mean of -0 would turn -0 into +0):
 * then the standardized matrix is data's rows as they are.
 */
static int
gather_is_view(const struct encode_spec *spec, const size_t *idx, size_t n)
{
	for (uint32_t f = 0; f < spec->nfeatures; f++)
		if (spec->mean[f] != 0.0f || signbit(spec->mean[f]) ||
		    spec->scale[f] != 1.0f)
			return 0;
	for (size_t i = 1; i < n; i++)
		if (idx[i] != idx[0] + i)
			return 0;
	return n > 0;
}

/* Gathers rows idx into a standardized matrix and their labels. */
static int
gather(const struct encode_spec *spec, const struct encode_data *data,
       const size_t *idx, size_t n, float **x, uint32_t **y, int *borrowed)
{
	size_t nf = spec->nfeatures;
	int view = borrowed != NULL && gather_is_view(spec, idx, n);

	if (borrowed != NULL)
		*borrowed = view;
	*x = view ? data->x + idx[0] * nf : malloc((n ? n : 1) * nf * sizeof(float));
	*y = malloc((n ? n : 1) * sizeof(uint32_t));
	if (*x == NULL || *y == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		(*y)[i] = data->y[idx[i]];
	if (view)
		return 0;
	for (size_t i = 0; i < n; i++)
		memcpy(*x + i * nf, data->x + idx[i] * nf, nf * sizeof(float));
	encode_standardize(spec, *x, n, *x);
	return 0;
}

void
rebuild_prepared_free(struct rebuild_prepared *prep)
{
	if (prep == NULL)
		return;
	free(prep->name);
	encode_spec_release(&prep->spec);
	encode_data_release(&prep->data);
	free(prep->tr);
	free(prep->va);
	if (!prep->xtr_borrowed)
		free(prep->xtr);
	if (!prep->xva_borrowed)
		free(prep->xva);
	free(prep->ytr);
	free(prep->yva);
	free(prep->snap);
	free(prep);
}

int
rebuild_prepare(const struct pins *p, const void *snapshot, size_t n,
		const char *name, struct rebuild_prepared **out,
		struct rba_detail *d)
{
	struct rba_digest got;
	struct csv_table *t = NULL;
	struct rebuild_prepared *prep;
	int err;

	*out = NULL;
	rba_digest_bytes(snapshot, n, &got);
	if (!rba_digest_equal(&got, &p->snapshot)) {
		char want[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&p->snapshot, want);
		rba_detail_key(d, "snapshot");
		return rba_fail(d, RBA_E_TAMPERED, name, 0, 0,
				"does not match the pinned snapshot %s", want);
	}
	if ((prep = calloc(1, sizeof(*prep))) == NULL ||
	    (prep->name = strdup(name)) == NULL) {
		rebuild_prepared_free(prep);
		return rba_fail(d, RBA_E_NOMEM, name, 0, 0, "out of memory");
	}
	{
		struct csv_missing m;
		m.tok = pins_missing_tokens(p, &m.n);
		if ((err = csv_table_load_mem_missing(snapshot, n, name, &m, &t,
						      d)))
			goto out;
	}
	/* the table's numbers go as the encoded rows come */
	if ((err = encode_fit_consume(p, t, &prep->spec, &prep->data, d)))
		goto out;
	/* the text is done with: its memory goes before the copies come */
	csv_table_free(t);
	t = NULL;
	if ((err = encode_split(p, prep->data.n, &prep->tr, &prep->ntr,
				&prep->va, &prep->nva))) {
		size_t nv = (size_t)((double)prep->data.n *
					     p->data.split_validation + 0.5);
		if (err == RBA_E_RANGE) {
			rba_detail_key(d, "data.split.validation");
			rba_fail(d, err, name, 0, 0,
				 "a validation split of %g leaves %zu of the %zu "
				 "rows to validate and %zu to train: each side needs "
				 "at least %d",
				 p->data.split_validation, nv > prep->data.n ? prep->data.n : nv,
				 prep->data.n, nv > prep->data.n ? 0 : prep->data.n - nv,
				 ENCODE_MIN_SPLIT_ROWS);
		} else {
			rba_fail(d, err, name, 0, 0, "%s", "out of memory");
		}
		goto out;
	}
	if ((err = encode_impute_fit(p, &prep->spec, &prep->data, prep->tr,
				     prep->ntr))) {
		rba_fail(d, err, name, 0, 0, "%s", "out of memory");
		goto out;
	}
	encode_standardize_fit(&prep->spec, &prep->data, prep->tr, prep->ntr,
			       p->data.standardize);
	if ((err = gather(&prep->spec, &prep->data, prep->tr, prep->ntr,
			  &prep->xtr, &prep->ytr, &prep->xtr_borrowed)) ||
	    (err = gather(&prep->spec, &prep->data, prep->va, prep->nva,
			  &prep->xva, &prep->yva, &prep->xva_borrowed))) {
		rba_fail(d, err, name, 0, 0, "out of memory");
		goto out;
	}
	prep->positive = prep->spec.positive == ENCODE_NO_POSITIVE
				 ? prep->spec.nclasses - 1
				 : prep->spec.positive;
	if (prepared_of(p)->keeps_snapshot) {
		if ((prep->snap = malloc(n ? n : 1)) == NULL) {
			err = rba_fail(d, RBA_E_NOMEM, name, 0, 0, "out of memory");
			goto out;
		}
		memcpy(prep->snap, snapshot, n);
		prep->snap_n = n;
	}
out:
	csv_table_free(t);
	if (err != 0)
		rebuild_prepared_free(prep);
	else
		*out = prep;
	return err;
}

/* The lookup: every use case calls through the entry it returns.  The
 * pins parser, data/encode.c (below the table) and exec_train's refusal
 * of other pins are the other places that ask (doc/design.md 7.1). */
const struct trainer_kind *
rebuild_trainer_kind(const struct pins *p)
{
	return policy_pins_is_exec(p) ? &exec_trainer_kind : &rebuild_builtin_kind;
}

/* ---- exec trainers (exec/exec.h) ----------------------------------- */

#define EXEC_METRICS_FILE "/out/metrics.json"

/* The metric names a {metrics} file may hold (rebuild-audit-pins(5)). */
static const char *const exec_metric_names[] = { "val_loss", "val_acc",
						 "val_auc", "train_loss" };
#define EXEC_NMETRICS 4

/*
 * Reads the {metrics} file of run: a flat JSON object of metric names
 * (not empty) to finite numbers, none of exec_metric_names twice; the
 * other names are the trainer's own (kept in its record, read by no
 * instrument).  v[i] gets exec_metric_names[i] or NaN when absent.  0, or RBA_E_SCHEMA naming the file and
 * the member (d->key "metrics.<name>").
 */
static int
exec_metrics_parse(const struct pins *p, const struct exec_run *run,
		   double v[EXEC_NMETRICS], struct rba_detail *d)
{
	struct rba_json_value root;
	struct rba_detail jd;
	int err = 0;

	for (int i = 0; i < EXEC_NMETRICS; i++)
		v[i] = NAN;
	rba_detail_clear(&jd);
	if (rba_json_parse(run->metrics, run->metrics_len, &root, &jd) != 0) {
		rba_detail_key(d, "metrics");
		return rba_fail(d, RBA_E_SCHEMA, EXEC_METRICS_FILE, 0, jd.col,
				"version '%s' seed %llu: %s is not JSON: %s",
				p->version, (unsigned long long)p->train.seed,
				EXEC_METRICS_FILE, jd.reason);
	}
	if (root.type != RBA_JSON_OBJECT) {
		rba_detail_key(d, "metrics");
		err = rba_fail(d, RBA_E_SCHEMA, EXEC_METRICS_FILE, 0, 0,
			       "version '%s' seed %llu: %s is not a JSON object "
			       "of metric names to numbers",
			       p->version, (unsigned long long)p->train.seed,
			       EXEC_METRICS_FILE);
		goto out;
	}
	for (size_t k = 0; k < root.n; k++) {
		const char *key = root.keys[k];
		const struct rba_json_value *it = &root.items[k];
		int m = -1;
		for (int i = 0; i < EXEC_NMETRICS; i++)
			if (strcmp(key, exec_metric_names[i]) == 0)
				m = i;
		{
			char kk[128];
			snprintf(kk, sizeof(kk), "metrics.%.100s", key);
			rba_detail_key(d, kk);
		}
		if (key[0] == 0) {
			err = rba_fail(d, RBA_E_SCHEMA, EXEC_METRICS_FILE, 0, 0,
				       "version '%s' seed %llu: %s: a metric with "
				       "an empty name",
				       p->version,
				       (unsigned long long)p->train.seed,
				       EXEC_METRICS_FILE);
			goto out;
		}
		if (it->type != RBA_JSON_NUMBER || !isfinite(it->num)) {
			err = rba_fail(d, RBA_E_SCHEMA, EXEC_METRICS_FILE, 0, 0,
				       "version '%s' seed %llu: %s: key '%s' is "
				       "not a finite number",
				       p->version,
				       (unsigned long long)p->train.seed,
				       EXEC_METRICS_FILE, key);
			goto out;
		}
		if (m < 0)
			continue; /* the trainer's own: kept in its record */
		if (!isnan(v[m])) {
			err = rba_fail(d, RBA_E_SCHEMA, EXEC_METRICS_FILE, 0, 0,
				       "version '%s' seed %llu: %s: key '%s' "
				       "given twice",
				       p->version,
				       (unsigned long long)p->train.seed,
				       EXEC_METRICS_FILE, key);
			goto out;
		}
		v[m] = it->num;
	}
	rba_detail_clear(d);
out:
	rba_json_release(&root);
	return err;
}

/*
 * The tool's own evaluation of an XGBoost JSON artifact on prep's
 * validation rows: the model's inputs by name from the snapshot (the
 * pins' missing-value tokens), scored natively (artifact_score), the
 * metrics under contract c (rebuild_evaluate_probs).
 */
static int
exec_evaluate_native(const struct pins *p, const struct rebuild_prepared *prep,
		     const uint8_t *a, size_t an,
		     const struct rebuild_contract *c,
		     struct rebuild_evaluation *out, struct rba_detail *d)
{
	struct artifact art;
	struct csv_table *t = NULL;
	struct csv_missing m;
	float *x = NULL, *xv = NULL, *probs = NULL;
	size_t nf;
	int err;

	if (prep->snap == NULL)
		return rba_fail(d, RBA_E_SCHEMA, prep->name, 0, 0,
				"version '%s' is an exec version, the snapshot "
				"was prepared for another",
				p->version);
	if ((err = exec_artifact_open(p, prep->snap, prep->snap_n, a, an, &art,
				      d)) != 0)
		return err;
	m.tok = pins_missing_tokens(p, &m.n);
	if ((err = csv_table_load_mem_missing(prep->snap, prep->snap_n,
					      prep->name, &m, &t, d)) != 0)
		goto out;
	nf = art.spec.nfeatures;
	x = malloc((t->nrows ? t->nrows : 1) * (nf ? nf : 1) * sizeof(float));
	xv = malloc((prep->nva ? prep->nva : 1) * (nf ? nf : 1) * sizeof(float));
	probs = malloc((prep->nva ? prep->nva : 1) * art.spec.nclasses *
		       sizeof(float));
	if (x == NULL || xv == NULL || probs == NULL) {
		err = rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	if ((err = encode_table(&art.spec, t, x, d)) != 0)
		goto out;
	for (size_t i = 0; i < prep->nva; i++)
		memcpy(xv + i * nf, x + prep->va[i] * nf, nf * sizeof(float));
	if ((err = artifact_score(&art, xv, prep->nva, probs)) != 0) {
		rba_fail(d, err, NULL, 0, 0, "cannot score the validation rows");
		goto out;
	}
	err = rebuild_evaluate_probs(probs, art.spec.nclasses, prep->yva,
				     prep->nva, prep->va, prep->positive, c,
				     out, d);
out:
	free(x);
	free(xv);
	free(probs);
	csv_table_free(t);
	artifact_release(&art);
	return err;
}

/*
 * An exec version trained at p's train.seed with its determinism.threads
 * (exec_train), and measured: a native artifact (xgboost-json) by the
 * tool's own evaluation on the validation split, train_loss from the
 * {metrics} file when it wrote one; any other format by the {metrics}
 * file alone, which must then give val_loss, its evaluation fingerprint
 * the fixed text "rebuild-audit/eval/exec-metrics/v1\n" (the command's
 * own measure: comparable with another such run, never with ours).
 */
static int
exec_from_prepared(const struct pins *p, const struct rebuild_prepared *prep,
		   struct rebuild_result *out, struct rba_detail *d)
{
	struct exec_run run;
	double mv[EXEC_NMETRICS];
	int native = p->trainer.format == PINS_FORMAT_XGBOOST_JSON;
	int err;

	for (int i = 0; i < EXEC_NMETRICS; i++)
		mv[i] = NAN;
	if (prep->snap == NULL)
		return rba_fail(d, RBA_E_SCHEMA, prep->name, 0, 0,
				"version '%s' is an exec version, the snapshot "
				"was prepared for another",
				p->version);
	if ((err = exec_train(p, prep->snap, prep->snap_n, p->train.seed,
			      p->determinism.threads, &run, d)) != 0)
		return err;
	if (run.metrics != NULL &&
	    (err = exec_metrics_parse(p, &run, mv, d)) != 0)
		goto out;
	rebuild_contract_from_pins(p, &out->contract);
	if (native) {
		if ((err = exec_evaluate_native(p, prep, run.artifact,
						run.artifact_len,
						&out->contract, &out->eval,
						d)) != 0)
			goto out;
	} else {
		static const char fp[] = "rebuild-audit/eval/exec-metrics/v1\n";
		if (run.metrics == NULL || isnan(mv[0])) {
			rba_detail_key(d, "metrics.val_loss");
			err = rba_fail(d, RBA_E_SCHEMA, EXEC_METRICS_FILE, 0, 0,
				       "version '%s' seed %llu: %s: key "
				       "'val_loss' missing (%s; format opaque "
				       "is measured by its {metrics} file)",
				       p->version,
				       (unsigned long long)p->train.seed,
				       EXEC_METRICS_FILE,
				       run.metrics == NULL ? "no metrics file"
							   : "not in the file");
			goto out;
		}
		rba_digest_bytes(fp, sizeof(fp) - 1, &out->eval.fingerprint);
		out->eval.rows = 0;
		out->eval.loss = mv[0];
		out->eval.acc = mv[1];
		out->eval.auc = mv[2];
	}
	out->report.epochs = 0;
	out->report.final.train_loss = mv[3];
	out->report.final.val_loss = out->eval.loss;
	out->report.final.val_acc = out->eval.acc;
	out->report.final.val_auc = out->eval.auc;
	out->report.examples = prep->ntr;
	out->report.train_seconds = run.wall_seconds;
	out->report.examples_per_second =
		run.wall_seconds > 0 ? (double)prep->ntr / run.wall_seconds : NAN;
	out->report.kernels = "strict";
	out->abi = 0;
	out->artifact = run.artifact;
	out->artifact_len = run.artifact_len;
	run.artifact = NULL;
	out->digest = run.digest;
	out->ntrain = prep->ntr;
	out->nval = prep->nva;
	out->nfeatures = prep->spec.nfeatures;
	out->nclasses = prep->spec.nclasses;
out:
	exec_run_release(&run);
	if (err != 0)
		memset(out, 0, sizeof(*out));
	return err;
}

/* The exec entry's training from a prepared snapshot (no ABI of this
 * tool's, no progress to report). */
static int
exec_train_prepared(const struct pins *p, uint32_t abi,
		    const struct rebuild_prepared *prep,
		    const struct rebuild_progress *progress,
		    struct rebuild_result *out, struct rba_detail *d)
{
	(void)abi;
	(void)progress;
	memset(out, 0, sizeof(*out));
	return exec_from_prepared(p, prep, out, d);
}

/* The exec entry's evaluation of an artifact: the tool's own of a
 * native one, none of an opaque one. */
static int
exec_evaluate(const struct pins *p, const struct rebuild_prepared *prep,
	      const void *a, size_t n, const struct rebuild_contract *c,
	      struct rebuild_evaluation *out, struct rba_detail *d)
{
	if (p->trainer.format == PINS_FORMAT_XGBOOST_JSON)
		return exec_evaluate_native(p, prep, a, n, c, out, d);
	rba_detail_key(d, "trainer.format");
	return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
			"version '%s': an artifact of format opaque "
			"cannot be evaluated by this tool (its metrics "
			"are the trainer's own {metrics} file)",
			p->version);
}

/* Per feature of s: a native column's level count, else 0 (*out NULL
 * when s has no native column). */
static int
native_levels(const struct encode_spec *s, uint32_t **out)
{
	uint32_t *v = NULL;

	*out = NULL;
	for (uint32_t c = 0, f = 0; c < s->ncolumns; c++) {
		if (s->columns[c].kind == ENCODE_NATIVE) {
			if (v == NULL &&
			    (v = calloc(s->nfeatures, sizeof(uint32_t))) == NULL)
				return RBA_E_NOMEM;
			v[f] = s->columns[c].nlevels;
		}
		f += encode_column_width(&s->columns[c]);
	}
	*out = v;
	return 0;
}

/* The builtin entry's training from a prepared snapshot. */
static int
builtin_train_prepared(const struct pins *p, uint32_t abi,
		       const struct rebuild_prepared *prep,
		       const struct rebuild_progress *progress,
		       struct rebuild_result *out, struct rba_detail *d)
{
	struct rebuild_model model;
	struct artifact art;
	struct rba_buf buf;
	struct rebuild_set strain, sval;
	uint32_t *native = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&model, 0, sizeof(model));
	rba_buf_init(&buf);
	if (abi == 0)
		abi = p->trainer_abi ? p->trainer_abi : rebuild_abi_current();
	strain = (struct rebuild_set){ prep->ntr, prep->xtr, prep->ytr, NULL };
	sval = (struct rebuild_set){ prep->nva, prep->xva, prep->yva, NULL };
	if ((err = native_levels(&prep->spec, &native)) != 0)
		goto out;
	strain.native = sval.native = native;
	err = rebuild_train(p, abi, prep->spec.nfeatures, prep->spec.nclasses,
			    prep->positive, &strain, &sval, &model,
			    &out->report, progress, d);
	if (err != 0)
		goto out;
	/* The artifact borrows prep's spec: it is encoded, never released. */
	memset(&art, 0, sizeof(art));
	art.abi = abi;
	art.spec = prep->spec;
	art.model = model;
	if ((err = artifact_encode(&art, &buf))) {
		rba_fail(d, err, prep->name, 0, 0, "cannot encode the artifact");
		goto out;
	}
	rebuild_contract_from_pins(p, &out->contract);
	if ((err = rebuild_evaluate(abi, &model, &sval, prep->va,
				    prep->positive, &out->contract, &out->eval,
				    d)))
		goto out;
	out->abi = abi;
	out->artifact_len = buf.len;
	out->artifact = rba_buf_steal(&buf, NULL);
	rba_digest_bytes(out->artifact, out->artifact_len, &out->digest);
	out->ntrain = prep->ntr;
	out->nval = prep->nva;
	out->nfeatures = prep->spec.nfeatures;
	out->nclasses = prep->spec.nclasses;
out:
	if (err != 0)
		rebuild_report_release(&out->report);
	rba_buf_release(&buf);
	rebuild_model_release(&model);
	free(native);
	return err;
}

int
rebuild_from_prepared(const struct pins *p, uint32_t abi,
		      const struct rebuild_prepared *prep,
		      const struct rebuild_progress *progress,
		      struct rebuild_result *out, struct rba_detail *d)
{
	return prepared_of(p)->train(p, abi, prep, progress, out, d);
}

int
rebuild_from_snapshot(const struct pins *p, uint32_t abi, const void *snapshot,
		      size_t n, const char *name,
		      const struct rebuild_progress *progress,
		      struct rebuild_result *out, struct rba_detail *d)
{
	struct rebuild_prepared *prep = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = rebuild_prepare(p, snapshot, n, name, &prep, d)))
		return err;
	err = rebuild_from_prepared(p, abi, prep, progress, out, d);
	rebuild_prepared_free(prep);
	return err;
}

/* The model kind of artifact m is the one pins p describe: 0 or
 * RBA_E_SCHEMA saying both. */
static int
same_kind(const struct pins *p, const struct rebuild_model *m,
	  struct rba_detail *d)
{
	int gbdt = p->model.kind == PINS_MODEL_GBDT;
	int same = gbdt == (m->kind == REBUILD_KIND_GBDT);
	char want[96], have[96];

	if (same && !gbdt) {
		same = m->nlayers == p->model.nhidden + 1;
		for (size_t i = 0; same && i < p->model.nhidden; i++)
			same = m->sizes[i + 1] == p->model.hidden[i];
	}
	if (same)
		return 0;
	if (gbdt) {
		snprintf(want, sizeof(want), "gradient-boosted trees");
	} else {
		int k = snprintf(want, sizeof(want), "a network with hidden layers [");
		for (size_t i = 0; i < p->model.nhidden && k < 80; i++)
			k += snprintf(want + k, sizeof(want) - (size_t)k, "%s%u",
				      i ? ", " : "", p->model.hidden[i]);
		snprintf(want + k, sizeof(want) - (size_t)k, "]");
	}
	if (m->kind == REBUILD_KIND_GBDT) {
		snprintf(have, sizeof(have), "gradient-boosted trees");
	} else {
		int k = snprintf(have, sizeof(have), "a network with hidden layers [");
		for (uint32_t i = 1; i < m->nlayers && k < 80; i++)
			k += snprintf(have + k, sizeof(have) - (size_t)k, "%s%u",
				      i > 1 ? ", " : "", m->sizes[i]);
		snprintf(have + k, sizeof(have) - (size_t)k, "]");
	}
	rba_detail_key(d, "model");
	return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
			"the artifact is %s, the pins describe %s: evaluate it "
			"with the pins that made it", have, want);
}

/* The builtin entry's evaluation of an artifact: decoded, of the kind
 * and shape the pins describe, scored on the validation rows. */
static int
builtin_evaluate(const struct pins *p, const struct rebuild_prepared *prep,
		 const void *a, size_t n, const struct rebuild_contract *c,
		 struct rebuild_evaluation *out, struct rba_detail *d)
{
	struct artifact art;
	float *x = NULL;
	uint32_t *y = NULL;
	int err;

	if ((err = artifact_decode(a, n, &art, d)))
		return err;
	if ((err = same_kind(p, &art.model, d)) != 0)
		goto out;
	if (art.spec.nfeatures != prep->spec.nfeatures ||
	    art.spec.nclasses != prep->spec.nclasses) {
		err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
			       "the artifact has %u features and %u classes, "
			       "the pins' encoding of the snapshot %u and %u",
			       art.spec.nfeatures, art.spec.nclasses,
			       prep->spec.nfeatures, prep->spec.nclasses);
		goto out;
	}
	if ((err = gather(&art.spec, &prep->data, prep->va, prep->nva, &x, &y,
			  NULL))) {
		rba_fail(d, err, NULL, 0, 0, "out of memory");
		goto out;
	}
	{
		struct rebuild_set s = { prep->nva, x, y, NULL };
		err = rebuild_evaluate(art.abi, &art.model, &s, prep->va,
				       prep->positive, c, out, d);
	}
out:
	free(x);
	free(y);
	artifact_release(&art);
	return err;
}

int
rebuild_evaluate_artifact(const struct pins *p,
			  const struct rebuild_prepared *prep, const void *a,
			  size_t n, const struct rebuild_contract *c,
			  struct rebuild_evaluation *out, struct rba_detail *d)
{
	return prepared_of(p)->evaluate(p, prep, a, n, c, out, d);
}

static const struct prepared_ops prepared_ops[] = {
	{ &rebuild_builtin_kind, 0, builtin_train_prepared, builtin_evaluate },
	/* the user's command is given the snapshot bytes at every training */
	{ &exec_trainer_kind, 1, exec_train_prepared, exec_evaluate },
};

/* The row of p's trainer kind: every kind has one. */
static const struct prepared_ops *
prepared_of(const struct pins *p)
{
	const struct trainer_kind *k = rebuild_trainer_kind(p);
	size_t n = sizeof(prepared_ops) / sizeof(prepared_ops[0]), i = 0;

	while (i < n && prepared_ops[i].kind != k)
		i++;
	assert(i < n);
	return &prepared_ops[i];
}
