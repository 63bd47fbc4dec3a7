/* rebuild.c - pins + snapshot bytes -> artifact bytes. */
#include "rebuild/rebuild.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "rebuild/artifact.h"
#include "rebuild/csv.h"
#include "rebuild/encode.h"

void
rebuild_result_release(struct rebuild_result *r)
{
	if (r == NULL)
		return;
	free(r->artifact);
	rebuild_report_release(&r->report);
	memset(r, 0, sizeof(*r));
}

/* Gathers rows idx into a standardized matrix and their labels. */
static int
gather(const struct encode_spec *spec, const struct encode_data *data,
       const size_t *idx, size_t n, float **x, uint32_t **y)
{
	size_t nf = spec->nfeatures;

	*x = malloc((n ? n : 1) * nf * sizeof(float));
	*y = malloc((n ? n : 1) * sizeof(uint32_t));
	if (*x == NULL || *y == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		memcpy(*x + i * nf, data->x + idx[i] * nf, nf * sizeof(float));
		(*y)[i] = data->y[idx[i]];
	}
	encode_standardize(spec, *x, n, *x);
	return 0;
}

int
rebuild_from_snapshot(const struct pins *p, uint32_t abi, const void *snapshot,
		      size_t n, const char *name,
		      const struct rebuild_progress *progress,
		      struct rebuild_result *out, struct rba_detail *d)
{
	struct rba_digest got;
	struct csv_table *t = NULL;
	struct artifact art;
	struct encode_data data;
	struct rba_buf buf;
	size_t *tr = NULL, *va = NULL, ntr = 0, nva = 0;
	float *xtr = NULL, *xva = NULL;
	uint32_t *ytr = NULL, *yva = NULL;
	struct rebuild_set strain, sval;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&art, 0, sizeof(art));
	memset(&data, 0, sizeof(data));
	rba_buf_init(&buf);
	if (abi == 0)
		abi = p->trainer_abi ? p->trainer_abi : rebuild_abi_current();
	rba_digest_bytes(snapshot, n, &got);
	if (!rba_digest_equal(&got, &p->snapshot)) {
		char want[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&p->snapshot, want);
		rba_detail_key(d, "snapshot");
		return rba_fail(d, RBA_E_TAMPERED, name, 0, 0,
				"does not match the pinned snapshot %s", want);
	}
	if ((err = csv_table_load_mem(snapshot, n, name, &t, d)))
		return err;
	if ((err = encode_fit(p, t, &art.spec, &data, d)))
		goto out;
	if ((err = encode_split(p, data.n, &tr, &ntr, &va, &nva))) {
		rba_fail(d, err, name, 0, 0, "%s",
			 err == RBA_E_RANGE ? "need at least two rows to split"
					    : "out of memory");
		goto out;
	}
	encode_standardize_fit(&art.spec, &data, tr, ntr, p->data.standardize);
	if ((err = gather(&art.spec, &data, tr, ntr, &xtr, &ytr)) ||
	    (err = gather(&art.spec, &data, va, nva, &xva, &yva))) {
		rba_fail(d, err, name, 0, 0, "out of memory");
		goto out;
	}
	strain = (struct rebuild_set){ ntr, xtr, ytr };
	sval = (struct rebuild_set){ nva, xva, yva };
	err = rebuild_train(p, abi, art.spec.nfeatures, art.spec.nclasses,
			    art.spec.positive == ENCODE_NO_POSITIVE
				    ? art.spec.nclasses - 1
				    : art.spec.positive,
			    &strain, &sval, &art.model, &out->report, progress,
			    d);
	if (err != 0)
		goto out;
	art.abi = abi;
	if ((err = artifact_encode(&art, &buf))) {
		rba_fail(d, err, name, 0, 0, "cannot encode the artifact");
		goto out;
	}
	out->abi = abi;
	out->artifact_len = buf.len;
	out->artifact = rba_buf_steal(&buf, NULL);
	rba_digest_bytes(out->artifact, out->artifact_len, &out->digest);
	out->ntrain = ntr;
	out->nval = nva;
	out->nfeatures = art.spec.nfeatures;
	out->nclasses = art.spec.nclasses;
out:
	if (err != 0)
		rebuild_report_release(&out->report);
	rba_buf_release(&buf);
	artifact_release(&art);
	encode_data_release(&data);
	csv_table_free(t);
	free(tr);
	free(va);
	free(xtr);
	free(xva);
	free(ytr);
	free(yva);
	return err;
}
