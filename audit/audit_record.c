/*
 * audit_record.c - the audit record: the JSON of an audit report
 * (rebuild-audit-report(5), AUDIT RECORDS) and its place in the store's
 * history.
 */
#include "audit/audit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/record.h"
#include "common/json.h"

/* The record is said once, in record.c's table: this is its encoder
 * fed from the report. */
void
audit_report_json(const struct audit_report *r, struct rba_buf *b)
{
	struct audit_record v;

	if (audit_record_from_report(r, &v) == 0)
		audit_record_encode(&v, b);
	else
		b->oom = 1; /* the buffer's sticky error: out of memory */
	audit_record_release(&v);
}

int
audit_record_is_ad_hoc(const struct rba_json_value *rec)
{
	struct audit_record v;
	struct rba_detail d;
	int yes;

	rba_detail_clear(&d);
	(void)audit_record_decode(rec, "the audit record", &v, &d);
	/* as far as the record decodes: a record the decoder stops in
	 * before its policy says nothing of it */
	yes = audit_record_ad_hoc(&v);
	audit_record_release(&v);
	return yes;
}

/*
 * Whether the store, in txn, still holds the version record and sample
 * r judged.  1 yes, 0 no, or the store's error (negative).
 */
static int
still_judged(struct store_txn *txn, const struct audit_report *r)
{
	struct store_version v;
	struct rba_digest pins;
	int err, same;

	err = store_version_get(txn, r->version, &v, NULL);
	if (err == RBA_E_NOTFOUND)
		return !r->has_version;
	if (err != 0)
		return err;
	rba_digest_bytes(v.pins_text, strlen(v.pins_text), &pins);
	same = r->has_version && v.registered_at == r->registered_at &&
	       rba_digest_equal(&v.artifact, &r->judged_artifact) &&
	       rba_digest_equal(&v.snapshot, &r->judged_snapshot) &&
	       rba_digest_equal(&pins, &r->judged_pins);
	if (same && r->has_sample)
		same = v.has_sample &&
		       rba_digest_equal(&v.sample.digest, &r->sample_digest) &&
		       v.sample.added == r->sample_added;
	if (same && (r->policy_from_version || !r->has_version_policy))
		same = v.has_policy == r->has_version_policy &&
		       (!v.has_policy ||
			rba_digest_equal(&v.policy_digest, &r->version_policy));
	store_version_release(&v);
	return same;
}

/* The rebuilt artifact of a not bit-identical audit, as an artifact blob
 * named by its digest in the record (digests.artifact_rebuilt); bytes the
 * store already holds (an earlier pinned artifact) are left as they are,
 * name and all.  The history keeps every record, so the blob stays as
 * long as the record does. */
static int
keep_rebuilt(struct store_txn *txn, struct audit_report *r, struct rba_detail *d)
{
	struct store_blob_info info;
	struct rba_digest dg;
	char name[STORE_VERSION_NAME_MAX + 48];
	int err;

	memset(&info, 0, sizeof(info));
	err = store_blob_info(txn, &r->artifact_rebuilt, &info, d);
	if (err == 0) {
		store_blob_info_release(&info);
		r->rebuilt_kept = 1;
		return 0;
	}
	if (err != RBA_E_NOTFOUND)
		return err;
	snprintf(name, sizeof(name), "rebuilt by an audit of %s", r->version);
	if ((err = store_blob_put(txn, STORE_BLOB_ARTIFACT, r->rebuilt_bytes,
				  r->rebuilt_len, name, NULL, 0, &dg, NULL, d)) != 0)
		return err;
	if (!rba_digest_equal(&dg, &r->artifact_rebuilt))
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0, "the rebuilt artifact's "
				"bytes do not hash to the digest the audit found");
	r->rebuilt_kept = 1;
	return 0;
}

int
audit_record_append(struct store *s, struct audit_report *r,
		    struct rba_detail *d)
{
	struct rba_buf b;
	struct store_txn *txn = NULL;
	int err;

	rba_buf_init(&b);
	audit_report_json(r, &b);
	if ((err = rba_buf_status(&b)) != 0)
		goto out;
	if ((err = store_txn_begin(s, 1, b.len + r->rebuilt_len, &txn, d)) != 0)
		goto out;
	if (r->judged && (err = still_judged(txn, r)) != 1) {
		store_txn_abort(txn);
		if (err < 0)
			goto out;
		err = rba_fail(d, RBA_E_BUSY, NULL, 0, 0,
			       "version '%s' changed while it was audited (it "
			       "was registered, replaced, given another sample "
			       "or policy): nothing was recorded; rerun the "
			       "audit", r->version);
		audit_not_measured(r, "changed", err, d);
		goto out;
	}
	if (r->rebuilt_bytes != NULL && (err = keep_rebuilt(txn, r, d)) != 0) {
		store_txn_abort(txn);
		goto out;
	}
	err = store_history_append(txn, r->version, r->time, b.p, b.len,
				   &r->history_id, &r->history_digest, d);
	if (err == 0)
		err = store_txn_commit(txn, d);
	else
		store_txn_abort(txn);
	if (err == 0)
		r->recorded = 1;
out:
	rba_buf_release(&b);
	return err;
}

static int
run_sealed(void *ctx, const char *id, const uint8_t *p, size_t n)
{
	(void)ctx;
	(void)id;
	(void)p;
	(void)n;
	return 0;
}

int
audit_history_check(struct store *s, struct rba_detail *d)
{
	struct store_txn *txn;
	char why[sizeof(d->reason)];
	uint64_t bad = 0;
	int err;

	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	err = store_history_verify(txn, &bad, NULL, d);
	/* The history's log too: an audit does not extend a damaged tree. */
	if (err == 0)
		err = store_tlog_verify(txn, &bad, d);
	if (err == 0)
		err = store_run_list(txn, run_sealed, NULL, d);
	store_txn_abort(txn);
	if (err == 0)
		return 0;
	snprintf(why, sizeof(why), "%s", d->reason);
	snprintf(d->reason, sizeof(d->reason), "%s: %.300s; run "
		 "'rebuild-audit store check'",
		 bad ? "the history is broken" : "damaged records", why);
	return err;
}

/* ---- the artifacts an audit compared ---------------------------------- */

struct pair_find {
	uint64_t want; /* 0: the newest naming a rebuilt artifact */
	uint64_t id;
	struct rba_digest a, b, dec;
	int has_dec, found, wrong;
};

static int
pair_cb(void *ctx, const struct store_history_entry *e)
{
	struct pair_find *f = ctx;
	struct rba_json_value v;
	struct audit_record rec;
	struct rba_detail d;
	const char *pin, *reb, *dec;
	int ok = 0;

	if (f->want != 0 && e->id != f->want)
		return 0;
	memset(&v, 0, sizeof(v));
	if (rba_json_parse((const char *)e->record, e->len, &v, NULL) != 0) {
		f->wrong = f->want != 0;
		return f->want != 0 ? 1 : 0;
	}
	/* as far as the record decodes (its digests come early) */
	rba_detail_clear(&d);
	(void)audit_record_decode(&v, "the audit record", &rec, &d);
	pin = rec.digests.artifact_pinned;
	reb = rec.digests.artifact_rebuilt;
	dec = rec.digests.artifact_decisions;
	if (pin != NULL && reb != NULL && rba_digest_parse(pin, &f->a) == 0 &&
	    rba_digest_parse(reb, &f->b) == 0) {
		ok = 1;
		f->has_dec = dec != NULL && rba_digest_parse(dec, &f->dec) == 0;
	}
	audit_record_release(&rec);
	rba_json_release(&v);
	if (!ok) {
		f->wrong = f->want != 0;
		return f->want != 0 ? 1 : 0;
	}
	f->found = 1;
	f->id = e->id;
	return 1; /* stop */
}

int
audit_diff_pair(struct store *s, const char *version, uint64_t audit_id,
		struct rba_digest *a, struct rba_digest *b, int *a_is_decisions,
		uint64_t *id, struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct pair_find f;
	int err;

	memset(&f, 0, sizeof(f));
	f.want = audit_id;
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	err = store_history_list(txn, version, 1, pair_cb, &f, d);
	store_txn_abort(txn);
	if (err < 0 || (err > 1))
		return err;
	if (f.wrong)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "history record %llu is not "
				"an audit of '%s' that rebuilt an artifact",
				(unsigned long long)audit_id, version);
	if (!f.found && audit_id != 0)
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0, "no audit record %llu of "
				"version '%s'", (unsigned long long)audit_id, version);
	if (!f.found)
		return rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0, "no audit of version '%s' "
				"that rebuilt an artifact", version);
	*a_is_decisions = 0;
	*a = f.a;
	if (rba_digest_equal(&f.a, &f.b) && f.has_dec && !rba_digest_equal(&f.dec, &f.b)) {
		*a = f.dec;
		*a_is_decisions = 1;
	}
	*b = f.b;
	*id = f.id;
	return 0;
}
