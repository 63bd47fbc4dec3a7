/*
 * fleet_run.c - a shard's versions and the audits of a run, in the
 * store or as a cluster worker (fleet/fleet.h).
 */
#include "fleet/fleet.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"

/* ---- shard selection ---------------------------------------------------- */

int
fleet_versions_list(struct store *s, uint32_t k, uint32_t n,
		    enum fleet_split split, struct fleet_versions *out,
		    struct rba_detail *d)
{
	struct fleet_plan p;
	int err;

	assert(n >= 1 && k < n);
	memset(out, 0, sizeof(*out));
	/* One shard: every version, no costs to read. */
	err = fleet_plan_make(s, n, n == 1 ? FLEET_SPLIT_HASH : split,
			      FLEET_HISTORY_ALL, &p, d);
	/* The bad keys are every shard's. */
	out->bad = p.bad;
	out->nbad = p.nbad;
	p.bad = NULL;
	p.nbad = 0;
	for (size_t i = 0; err == 0 && i < p.n; i++)
		if (p.shard[i] == k) {
			err = rba_strv_add(&out->names, &out->n, p.names[i]);
			p.names[i] = NULL;
			if (err != 0)
				break;
		}
	/* Taken names are NULL; rba_strv_free skips them. */
	fleet_plan_release(&p);
	return err;
}

void
fleet_versions_release(struct fleet_versions *v)
{
	if (v == NULL)
		return;
	rba_strv_free(v->names, v->n);
	rba_strv_free(v->bad, v->nbad);
	memset(v, 0, sizeof(*v));
}

/* ---- the audits of a run ------------------------------------------------ */

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What audit_version would have appended, as w's record file. */
static void
turn_write(const struct fleet_worker *w, struct audit_report *r,
	   struct fleet_turn *t, struct rba_detail *wd, char *path, size_t cap)
{
	rba_detail_clear(wd);
	t->write_detail = wd;
	t->write_err = fleet_record_write(w, r, path, cap, wd);
	if (t->write_err == 0) {
		r->recorded = 0;
		t->path = path;
	}
}

int
fleet_audit_run(struct store *s, const struct fleet_worker *w,
		char *const *names, size_t n, const struct audit_options *o,
		int (*fn)(void *ctx, const struct fleet_turn *t), void *ctx,
		struct rba_detail *d)
{
	struct audit_options opt;
	char **done = NULL;
	size_t ndone = 0;
	int err = 0;

	if (o != NULL)
		opt = *o;
	else
		memset(&opt, 0, sizeof(opt));
	if (w != NULL) {
		/* A worker reads a snapshot and never writes the store. */
		opt.no_record = 1;
		/* A rerun skips what already has a record for this snapshot. */
		if ((err = fleet_records_done(w, &done, &ndone, d)) != 0)
			return err;
	}
	for (size_t i = 0; err == 0 && i < n; i++) {
		struct fleet_turn t;
		struct audit_report r;
		struct rba_detail ad, wd;
		char path[FLEET_PATH_MAX + 600];

		memset(&t, 0, sizeof(t));
		t.name = names[i];
		t.index = i;
		if (done != NULL && bsearch(&names[i], done, ndone, sizeof(*done),
					    cmp_name) != NULL) {
			t.skipped = 1;
			err = fn(ctx, &t);
			continue;
		}
		rba_detail_clear(&ad);
		t.err = audit_version(s, names[i], &opt, &r, &ad);
		t.detail = &ad;
		t.report = &r;
		if (w != NULL && r.version != NULL && t.err != RBA_E_NOTFOUND)
			turn_write(w, &r, &t, &wd, path, sizeof(path));
		err = fn(ctx, &t);
		audit_report_release(&r);
	}
	rba_strv_free(done, ndone);
	return err;
}
