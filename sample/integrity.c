/*
 * integrity.c - `store check`: the store's own walk (store_check) with
 * what only this layer can read: the sample chunk layout, so every case
 * id is checked against the case index, and each version's pins and
 * policy, which must parse and hash to the digests the store keeps.
 */
#include "sample/integrity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample.h"
#include "policy/policy.h"

struct layout_cache {
	char version[STORE_VERSION_NAME_MAX + 1];
	int ok;
	struct sample_layout l;
	struct sample_chunk c;
};

struct fsck {
	const struct audit_check_sink *sink;
	struct layout_cache lc;
};

static int
chunk_cases(void *ctx, const char *version, const char *columns,
	    uint32_t chunk_no, const uint8_t *p, size_t n, store_case_fn each,
	    void *ectx, struct rba_detail *d)
{
	struct fsck *f = ctx;
	struct layout_cache *lc = &f->lc;
	int rc;

	if (!lc->ok || strcmp(lc->version, version) != 0) {
		if (lc->ok)
			sample_layout_release(&lc->l);
		lc->ok = 0;
		snprintf(lc->version, sizeof(lc->version), "%s", version);
		rc = sample_layout_parse(columns, strlen(columns), &lc->l, d);
		if (rc != 0)
			return rc;
		lc->ok = 1;
	}
	rc = sample_chunk_decode(p, n, lc->l.ncols, lc->l.nscores,
				 lc->l.id_col, &lc->c, d);
	if (rc != 0) {
		char why[sizeof(d->reason)];
		snprintf(why, sizeof(why), "%s", d->reason);
		return rba_fail(d, rc, NULL, 0, 0,
				"sample chunk %u cannot be decoded: %s",
				chunk_no, why);
	}
	for (uint32_t i = 0; i < lc->c.ncases; i++) {
		rc = each(ectx, lc->c.ids[i]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
finding(void *ctx, const struct store_finding *sf)
{
	struct fsck *f = ctx;

	return f->sink->finding(f->sink->ctx, sf->db, sf->key, sf->err,
				sf->reason);
}

/*
 * What the store cannot check itself: the pins and policy texts of
 * each version parse, and the policy hashes to the digest kept beside
 * it.
 */
struct ver_walk {
	struct fsck *f;
	struct audit_check_stats *st;
	int rc;
};

static int
version_texts(void *ctx, const struct store_version *v)
{
	struct ver_walk *w = ctx;
	struct rba_detail d;
	struct pins *p = NULL;
	struct policy *pol = NULL;
	int rc;

	rba_detail_clear(&d);
	rc = policy_pins_parse(v->pins_text, strlen(v->pins_text), v->name,
			       &p, &d);
	if (rc == RBA_E_NOMEM)
		return rc;
	if (rc != 0) {
		w->st->findings++;
		rc = w->f->sink->finding(w->f->sink->ctx, "versions", v->name,
					 RBA_E_CORRUPT,
					 "its pins do not parse");
		if (rc != 0)
			return rc;
	}
	policy_pins_free(p);
	if (!v->has_policy)
		return 0;
	rba_detail_clear(&d);
	rc = policy_parse(v->policy_text, strlen(v->policy_text), v->name,
			  &pol, &d);
	if (rc == RBA_E_NOMEM)
		return rc;
	if (rc != 0 || !rba_digest_equal(&pol->digest,
					 &v->policy_digest)) {
		policy_free(pol);
		w->st->findings++;
		return w->f->sink->finding(w->f->sink->ctx, "versions", v->name,
					   RBA_E_TAMPERED,
					   rc != 0 ? "its policy does not parse"
						   : "tampered: its policy does "
						     "not hash to the digest "
						     "kept beside it");
	}
	policy_free(pol);
	return 0;
}

/* Each history record through the sink's history_record hook. */
struct hist_walk {
	const struct audit_check_sink *sink;
	struct audit_check_stats *st;
	int stop; /* the sink's value that stopped the walk */
};

static int
history_record(void *ctx, const struct store_history_entry *e)
{
	struct hist_walk *w = ctx;
	struct rba_detail d;
	char key[32];
	int rc;

	rba_detail_clear(&d);
	rc = w->sink->history_record(w->sink->ctx, e, &d);
	if (rc == 0 || rc == RBA_E_NOMEM)
		return rc;
	snprintf(key, sizeof(key), "%llu", (unsigned long long)e->id);
	w->st->findings++;
	w->stop = w->sink->finding(w->sink->ctx, "history", key, rc,
				   d.reason[0] ? d.reason : rba_strerror(rc));
	return w->stop;
}

int
sample_store_check(struct store_txn *txn, const struct audit_check_sink *sink,
		  struct audit_check_stats *st, struct rba_detail *d)
{
	struct store_check_hooks h;
	struct ver_walk vw;
	struct fsck f;
	int rc;

	memset(st, 0, sizeof(*st));
	memset(&f, 0, sizeof(f));
	f.sink = sink;
	sample_chunk_init(&f.lc.c);
	h.chunk_cases = chunk_cases;
	h.finding = finding;
	h.ctx = &f;
	rc = store_check(txn, &h, &st->store, d);
	if (f.lc.ok)
		sample_layout_release(&f.lc.l);
	sample_chunk_release(&f.lc.c);
	st->findings = st->store.findings;
	if (rc != 0)
		return rc;
	/* Only when the versions database walked cleanly: a damaged record
	 * there is already a finding and would stop the list. */
	memset(&vw, 0, sizeof(vw));
	vw.f = &f;
	vw.st = st;
	rc = store_version_list(txn, version_texts, &vw, d);
	if (rc == RBA_E_NOMEM)
		return rc;
	/* What the records say, read by the layer that can: a record the
	 * walk found damaged stops the list, already a finding. */
	if (sink->history_record != NULL) {
		struct hist_walk hw = { sink, st, 0 };
		rc = store_history_list(txn, NULL, 0, history_record, &hw, d);
		if (hw.stop != 0)
			return hw.stop;
		if (rc == RBA_E_NOMEM)
			return rc;
	}
	return 0;
}
