/* declared.c - the tolerance declared before a sample judges it (declared.h). */
#include "audit/declared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/rbatime.h"

int
declared_policy_keep(struct store_txn *txn, const struct policy *pol,
		     struct rba_detail *d)
{
	struct rba_digest got;

	return store_blob_put(txn, STORE_BLOB_OTHER, pol->text, pol->text_len,
			      DECLARED_POLICY_BLOB, NULL, 0, &got, NULL, d);
}

int
declared_policy_load(struct store_txn *txn, const struct store_version *v,
		     const struct rba_digest *digest, struct policy **out,
		     struct rba_detail *d)
{
	struct rba_digest got;
	uint8_t *p = NULL;
	size_t n = 0;
	int err;

	*out = NULL;
	if (v->has_policy && rba_digest_equal(&v->policy_digest, digest))
		return policy_parse(v->policy_text, strlen(v->policy_text),
				    "the version's policy", out, d);
	err = store_blob_load(txn, digest, STORE_TEXT_MAX, &p, &n, d);
	if (err)
		return err;
	err = policy_parse(p, n, "a declared policy", out, d);
	free(p);
	if (err)
		return err;
	rba_digest_bytes((*out)->text, (*out)->text_len, &got);
	if (!rba_digest_equal(&got, digest)) {
		policy_free(*out);
		*out = NULL;
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0, "%s",
				"tampered: a kept policy text does not hash to "
				"its digest");
	}
	return 0;
}

struct time_walk {
	const struct store_version *v;
	int64_t when;
	int found;
};

static int
time_cb(void *ctx, const struct store_history_entry *e)
{
	struct time_walk *w = ctx;
	struct rba_json_value root;
	const char *schema, *digest;
	struct rba_digest dg;
	int hit = 0;

	if (e->time < w->v->registered_at)
		return 1; /* older than the registration: stop */
	if (rba_json_parse((const char *)e->record, e->len, &root, NULL) != 0)
		return 0;
	schema = rba_json_get_str(&root, "schema");
	digest = rba_json_get_str(&root, "policy");
	if (schema != NULL && strcmp(schema, DECLARED_RECORD_SCHEMA) == 0 &&
	    digest != NULL && rba_digest_parse(digest, &dg) == 0 &&
	    rba_digest_equal(&dg, &w->v->policy_digest)) {
		w->when = e->time;
		w->found = 1;
		hit = 1;
	}
	rba_json_release(&root);
	return hit;
}

int
declared_policy_time(struct store_txn *txn, const struct store_version *v,
		     int64_t *when, struct rba_detail *d)
{
	struct time_walk w = { v, v->registered_at, 0 };
	int err;

	err = store_history_list(txn, v->name, 1, time_cb, &w, d);
	if (err < 0)
		return err;
	*when = w.when;
	return 0;
}

void
declared_judgement_release(struct declared_judgement *j)
{
	if (j == NULL)
		return;
	policy_free(j->pol);
	memset(j, 0, sizeof(*j));
}

static int
copy_policy(const struct policy *p, struct policy **out, struct rba_detail *d)
{
	return policy_parse(p->text, p->text_len, "the policy in force", out, d);
}

int
declared_judge(struct store_txn *txn, const struct store_version *v,
	       const struct policy *vpol, const struct store_sample_info *info,
	       struct declared_judgement *j, struct rba_detail *d)
{
	struct policy *own = NULL;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int64_t when;
	int err;

	memset(j, 0, sizeof(*j));
	if ((err = declared_policy_time(txn, v, &when, d)) != 0)
		return err;
	j->declared_at = when;
	/* The sample's own policy, or no record of one (a sample of an
	 * older tool). */
	if (!info->has_policy || rba_digest_equal(&info->policy_digest, &vpol->digest))
		return copy_policy(vpol, &j->pol, d);
	/* Read (and so verified) whenever it is another policy. */
	err = declared_policy_load(txn, v, &info->policy_digest, &own, d);
	if (err != 0 && err != RBA_E_NOTFOUND)
		return err;
	/* One declared before the sample was added judges it (times are
	 * whole seconds: the same second is not before). */
	if (when < info->added) {
		policy_free(own);
		rba_detail_clear(d);
		return copy_policy(vpol, &j->pol, d);
	}
	if (err == RBA_E_NOTFOUND) {
		rba_digest_format(&info->policy_digest, hex);
		rba_detail_clear(d);
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
				"the version's policy was set after its sample was "
				"added under policy %s, whose text the store does not "
				"keep: the audit cannot check that the tolerance "
				"judging the sample was declared before it (add the "
				"sample again to have it judged by the policy now in "
				"force)", hex);
	}
	if (err)
		return err;
	if (policy_as_strict(vpol, own, j->looser_in, sizeof(j->looser_in))) {
		policy_free(own);
		return copy_policy(vpol, &j->pol, d);
	}
	j->pol = own;
	j->own = 1;
	j->declared_at = info->added;
	return 0;
}

/* The history record of a `policy set`. */
static void
set_record(struct rba_buf *b, const char *version, int64_t t,
	   const struct policy *pol, const struct declared_set_result *r)
{
	struct rba_json_w w;
	char when[RBA_TIME_TEXT_MAX];

	rba_time_utc(t, when);
	rba_json_w_init(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "schema", DECLARED_RECORD_SCHEMA);
	rba_json_w_str(&w, "event", "set");
	rba_json_w_str(&w, "version", version);
	rba_json_w_str(&w, "time", when);
	rba_json_w_digest(&w, "policy", &pol->digest, 1);
	rba_json_w_digest(&w, "previous", &r->previous, r->had_previous);
	if (r->had_previous)
		rba_json_w_bool(&w, "stricter", r->stricter);
	else
		rba_json_w_str(&w, "stricter", NULL);
	rba_json_w_str(&w, "looser_in",
		       r->had_previous && !r->stricter ? r->looser_in : NULL);
	rba_json_w_close(&w, '}');
}

int
declared_policy_set(struct store *s, const char *version,
		    const struct policy *pol, int64_t t,
		    struct declared_set_result *out, struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct store_version v;
	struct policy *prev = NULL;
	struct rba_buf rec;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&v, 0, sizeof(v));
	rba_buf_init(&rec);
	if ((err = store_txn_begin(s, 1, 0, &txn, d)) != 0)
		return err;
	err = store_version_get(txn, version, &v, d);
	if (err == RBA_E_NOTFOUND) {
		rba_detail_clear(d);
		rba_fail(d, err, NULL, 0, 0, "no such version");
	}
	if (err)
		goto out;
	if (v.has_sample && v.sample.has_policy &&
	    !rba_digest_equal(&v.sample.policy_digest, &pol->digest)) {
		out->sample_other_policy = 1;
		out->sample_policy = v.sample.policy_digest;
	}
	if (v.has_policy) {
		out->had_previous = 1;
		out->previous = v.policy_digest;
		/* The version's old policy is kept too: the sample it judged
		 * may need it again. */
		if ((err = policy_parse(v.policy_text, strlen(v.policy_text),
					"the version's policy", &prev, d)) == 0) {
			out->stricter = policy_as_strict(pol, prev, out->looser_in,
							 sizeof(out->looser_in));
			err = declared_policy_keep(txn, prev, d);
		}
		if (err)
			goto out;
	}
	if (out->sample_other_policy) {
		struct policy *own = NULL;
		err = declared_policy_load(txn, &v, &out->sample_policy, &own, d);
		if (err == RBA_E_NOTFOUND) {
			out->sample_unknown = 1;
			rba_detail_clear(d);
		} else if (err) {
			goto out;
		} else {
			out->sample_keeps_own =
				!policy_as_strict(pol, own, out->sample_looser_in,
						  sizeof(out->sample_looser_in));
			policy_free(own);
		}
		err = 0;
	}
	if ((err = store_version_set_policy(txn, version, pol->text, &pol->digest,
					    d)) != 0)
		goto out;
	set_record(&rec, version, t, pol, out);
	if ((err = rba_buf_status(&rec)) != 0 ||
	    (err = store_history_append(txn, version, t, rec.p, rec.len,
					&out->history_id, NULL, d)) != 0)
		goto out;
	err = store_txn_commit(txn, d);
	txn = NULL;
out:
	store_txn_abort(txn);
	store_version_release(&v);
	policy_free(prev);
	rba_buf_release(&rec);
	return err;
}
