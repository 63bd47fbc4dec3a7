/* runs.c - run records in the store (runs.h). */
#include "rebuild/runs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

void
runs_id_register(const char *version, int64_t registered_at,
		      char out[RUNS_ID_SIZE])
{
	snprintf(out, RUNS_ID_SIZE, "%s@%" PRId64, version, registered_at);
}

/* The rendered record b (its errors) stored under id in txn. */
static int
put_rendered(struct store_txn *txn, const char *id, const struct rba_buf *b,
	     struct rba_detail *d)
{
	int err;

	if ((err = rba_buf_status(b)) != 0)
		return rba_fail(d, err, NULL, 0, 0, "out of memory");
	return store_run_put(txn, id, b->p, b->len, d);
}

int
runs_put(struct store_txn *txn, const char *id, const struct pins *p,
	 const struct trainer_kind *kind, const struct rebuild_result *res,
	 const struct exec_run *run, const struct rba_digest *env,
	 double wall_seconds, struct rba_detail *d)
{
	char env_hex[RBA_DIGEST_TEXT_LEN + 1];
	struct rba_buf b;
	int err;

	rba_digest_format(env, env_hex);
	rba_buf_init(&b);
	kind->run_record(p, res, run, env_hex, wall_seconds, &b);
	err = put_rendered(txn, id, &b, d);
	rba_buf_release(&b);
	return err;
}

int
runs_summary_get(struct store_txn *txn, const char *id,
		      struct rebuild_runrec_summary *out, struct rba_detail *d)
{
	uint8_t *p = NULL;
	size_t n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = store_run_get(txn, id, &p, &n, d);
	if (err == 0)
		err = rebuild_runrec_summary_parse(p, n, out, d);
	free(p);
	if (err != 0)
		rba_detail_key(d, id);
	return err;
}

int
runs_id_new(struct store_txn *txn, const char *subject, int64_t t,
		 char out[RUNS_ID_SIZE], struct rba_detail *d)
{
	for (unsigned k = 0; k < 100000; k++) {
		uint8_t *p = NULL;
		size_t n = 0;
		int n1, err;
		if (k == 0)
			n1 = snprintf(out, RUNS_ID_SIZE, "%s@%" PRId64,
				      subject, t);
		else
			n1 = snprintf(out, RUNS_ID_SIZE, "%s@%" PRId64 ".%u",
				      subject, t, k);
		if (n1 < 0 || n1 >= RUNS_ID_SIZE)
			return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
					"run id for '%s' is too long", subject);
		err = store_run_get(txn, out, &p, &n, d);
		free(p);
		if (err == RBA_E_NOTFOUND) {
			rba_detail_clear(d);
			return 0;
		}
		if (err != 0)
			return err;
	}
	return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0, "no free run id");
}

int
runs_keep(struct store *st, const char *subject, int64_t t,
	  const struct pins *p, const struct rebuild_result *res,
	  const struct rba_digest *env, double wall_seconds,
	  char id[RUNS_ID_SIZE], struct rba_detail *d)
{
	char env_hex[RBA_DIGEST_TEXT_LEN + 1];
	struct store_txn *txn = NULL;
	struct rba_buf b;
	int err;

	id[0] = 0;
	if ((err = store_txn_begin(st, 1, 1u << 20, &txn, d)) != 0)
		return err;
	rba_digest_format(env, env_hex);
	rba_buf_init(&b);
	rebuild_runrec_render(p, res, env_hex, wall_seconds, &b);
	if ((err = runs_id_new(txn, subject, t, id, d)) != 0 ||
	    (err = put_rendered(txn, id, &b, d)) != 0) {
		rba_buf_release(&b);
		store_txn_abort(txn);
		id[0] = 0;
		return err;
	}
	rba_buf_release(&b);
	/* The commit frees txn whatever it returns. */
	if ((err = store_txn_commit(txn, d)) != 0)
		id[0] = 0;
	return err;
}
