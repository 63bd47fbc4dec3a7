/*
 * fleet_plan.c - the split of a store's versions into shards: the
 * balanced rule (expected audit cost, longest first onto the least
 * loaded shard) and the hash rule (fleet/fleet.h).
 */
#include "fleet/fleet.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "audit/record.h"
#include "common/json.h"
#include "common/strv.h"
#include "policy/policy.h"
#include "rebuild/rebuild.h"

double
fleet_cost_units_kind(const char *p, size_t n, uint64_t data_bytes,
		      uint64_t cases, enum fleet_cost_kind *kind)
{
	struct pins *pins = NULL;
	double units, w = 1;

	if (kind != NULL)
		*kind = FLEET_COST_NETWORK;
	if (p == NULL || policy_pins_parse(p, n, "pins", &pins, NULL) != 0)
		return 0;
	/* The user's code in the sandbox: its cost is not known ahead. */
	if (rebuild_trainer_kind(pins)->sandboxed) {
		if (kind != NULL)
			*kind = FLEET_COST_EXEC;
		units = 1;
	} else if (pins->model.kind == PINS_MODEL_GBDT) {
		double trees = (double)pins->model.gbdt.trees;
		double tl = trees * pins->model.gbdt.max_depth;
		unsigned dp = pins->model.gbdt.max_depth < 16 ? pins->model.gbdt.max_depth : 16;
		if (kind != NULL)
			*kind = FLEET_COST_TREES;
		/* the histogram passes, each node's own work (about 3,000
		 * units: it matters for many trees on a small table), and
		 * scoring the sample */
		units = (double)data_bytes * tl + 3000.0 * trees * (double)(1u << dp) +
			6.0 * (double)cases * tl;
	} else {
		if (pins->model.nhidden > 0) {
			size_t L = pins->model.nhidden;
			w = pins->model.hidden[0] + pins->model.hidden[L - 1];
			for (size_t i = 0; i + 1 < L; i++)
				w += (double)pins->model.hidden[i] *
				     pins->model.hidden[i + 1];
		}
		units = (double)data_bytes * pins->train.epochs * w;
	}
	policy_pins_free(pins);
	return units;
}

double
fleet_cost_units(const char *p, size_t n, uint64_t data_bytes)
{
	return fleet_cost_units_kind(p, n, data_bytes, 0, NULL);
}

struct order {
	const char *name;
	double cost;
	size_t i;
};

/* Longest first; equal costs by name. */
static int
cmp_order(const void *va, const void *vb)
{
	const struct order *a = va, *b = vb;

	if (a->cost > b->cost)
		return -1;
	if (a->cost < b->cost)
		return 1;
	return strcmp(a->name, b->name);
}

int
fleet_assign(char *const *names, const double *cost, size_t n,
	     uint32_t nshards, uint32_t *shard, double *load)
{
	struct order *o = n ? calloc(n, sizeof(*o)) : NULL;
	double *l = calloc(nshards, sizeof(*l));

	assert(nshards >= 1);
	if ((n && o == NULL) || l == NULL) {
		free(o);
		free(l);
		return RBA_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		o[i].name = names[i];
		o[i].cost = cost[i] > 0 ? cost[i] : 0;
		o[i].i = i;
	}
	if (n > 1)
		qsort(o, n, sizeof(*o), cmp_order);
	for (size_t j = 0; j < n; j++) {
		uint32_t best = 0;
		/* A linear scan: FLEET_SHARDS_MAX shards times the versions
		 * is still far below one audit. */
		for (uint32_t k = 1; k < nshards; k++)
			if (l[k] < l[best])
				best = k;
		shard[o[j].i] = best;
		l[best] += o[j].cost;
	}
	if (load != NULL)
		memcpy(load, l, nshards * sizeof(*l));
	free(o);
	free(l);
	return 0;
}

/* ---- reading the costs -------------------------------------------------- */

struct names_ctx {
	struct fleet_plan *p;
};

static int
plan_name(void *ctx, const char *name, int valid)
{
	struct fleet_plan *p = ctx;

	if (!valid)
		return rba_strv_add(&p->bad, &p->nbad, strdup(name));
	return rba_strv_add(&p->names, &p->n, strdup(name));
}

/* A version's cost is the median of its latest FLEET_COST_AUDITS
 * measured audits: one slow night does not move it alone. */
#define FLEET_COST_AUDITS 3

struct latest {
	struct fleet_plan *p;
	uint64_t upto;
	size_t left; /* versions with fewer than FLEET_COST_AUDITS */
	int stopped;
	double (*t)[FLEET_COST_AUDITS]; /* [p->n]: newest first */
	unsigned char *nt;
};

static int
cmp_key(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* Newest first: the first FLEET_COST_AUDITS audit records of a version
 * with a verdict other than not-measured give its cost. */
static int
latest_one(void *ctx, const struct store_history_entry *e)
{
	static const char start[] = "{\"schema\": \"rebuild-audit/audit/";
	struct latest *lt = ctx;
	struct fleet_plan *p = lt->p;
	struct rba_json_value root;
	char **hit;
	size_t i;

	if (lt->left == 0) {
		lt->stopped = 1; /* every version has its cost */
		return 1;
	}
	if (e->id > lt->upto)
		return 0;
	if (e->len < sizeof(start) - 1 || memcmp(e->record, start, sizeof(start) - 1) != 0)
		return 0;
	hit = bsearch(e->version, p->names, p->n, sizeof(*p->names), cmp_key);
	if (hit == NULL)
		return 0;
	i = (size_t)(hit - p->names);
	if (lt->nt[i] == FLEET_COST_AUDITS)
		return 0;
	if (rba_json_parse((const char *)e->record, e->len, &root, NULL) != 0)
		return 0;
	{
		/* read by the record's decoder: a record it refuses gives
		 * no cost (its timings, the last member, stay absent) */
		struct audit_record v;
		struct rba_detail d;
		double t;
		rba_detail_clear(&d);
		(void)audit_record_decode(&root, "the audit record", &v, &d);
		t = v.timings.total_s;
		if (v.verdict != NULL && strcmp(v.verdict, "not-measured") != 0 &&
		    t >= 0) {
			lt->t[i][lt->nt[i]++] = t;
			p->measured[i] = 1;
			if (lt->nt[i] == FLEET_COST_AUDITS)
				lt->left--;
		}
		audit_record_release(&v);
	}
	rba_json_release(&root);
	return 0;
}

/* The pins estimate of version name, in units (0 when unreadable), and
 * its kind. */
static double
plan_units(struct store_txn *txn, const char *name, enum fleet_cost_kind *kind)
{
	struct store_version v;
	struct store_blob_info bi;
	double u = 0;

	*kind = FLEET_COST_NETWORK;
	if (store_version_get(txn, name, &v, NULL) != 0)
		return 0;
	memset(&bi, 0, sizeof(bi));
	if (store_blob_info(txn, &v.snapshot, &bi, NULL) == 0) {
		u = fleet_cost_units_kind(v.pins_text, strlen(v.pins_text), bi.size,
					  v.has_sample ? v.sample.cases : 0, kind);
		store_blob_info_release(&bi);
	}
	store_version_release(&v);
	return u;
}

/* The median of n (1..3) values. */
static double
median3(const double *t, unsigned n)
{
	double a = t[0], b = n > 1 ? t[1] : t[0], c = n > 2 ? t[2] : 0;

	if (n == 1)
		return a;
	if (n == 2)
		return (a + b) / 2;
	if (a > b) {
		double x = a;
		a = b;
		b = x;
	}
	return c < a ? a : c > b ? b : c;
}

static int
plan_costs(struct store_txn *txn, struct fleet_plan *p, uint64_t upto,
	   struct rba_detail *d)
{
	static const double defaults[FLEET_COST_KINDS] = {
		FLEET_COST_SCALE_DEFAULT, FLEET_COST_SCALE_TREES, FLEET_COST_SCALE_EXEC};
	struct latest lt = { p, upto, p->n, 0, NULL, NULL };
	double *units, msum[FLEET_COST_KINDS] = {0}, usum[FLEET_COST_KINDS] = {0};
	double all_m = 0, all_e = 0, machine;
	enum fleet_cost_kind *kinds = NULL;
	int err;

	_Static_assert(FLEET_COST_AUDITS == 3, "median3 takes three");
	lt.t = calloc(p->n ? p->n : 1, sizeof(*lt.t));
	lt.nt = calloc(p->n ? p->n : 1, 1);
	if (lt.t == NULL || lt.nt == NULL) {
		free(lt.t);
		free(lt.nt);
		return RBA_E_NOMEM;
	}
	err = store_history_list(txn, NULL, 1, latest_one, &lt, d);
	for (size_t i = 0; i < p->n; i++)
		if (lt.nt[i] > 0)
			p->cost[i] = median3(lt.t[i], lt.nt[i]);
	free(lt.t);
	free(lt.nt);
	if (err != 0 && !(err == 1 && lt.stopped))
		return err;
	if ((units = calloc(p->n ? p->n : 1, sizeof(*units))) == NULL ||
	    (kinds = calloc(p->n ? p->n : 1, sizeof(*kinds))) == NULL) {
		free(units);
		return RBA_E_NOMEM;
	}
	/* Each kind's seconds per unit from its own measured versions;
	 * a kind with none measured takes its default, times how much
	 * slower or faster than the defaults this store's measured audits
	 * ran (1 when none ran). */
	for (size_t i = 0; i < p->n; i++) {
		units[i] = plan_units(txn, p->names[i], &kinds[i]);
		if (p->measured[i] && units[i] > 0) {
			msum[kinds[i]] += p->cost[i] > FLEET_COST_BASE
						  ? p->cost[i] - FLEET_COST_BASE : 0;
			usum[kinds[i]] += units[i];
			all_m += p->cost[i];
			all_e += units[i] * defaults[kinds[i]] + FLEET_COST_BASE;
		}
	}
	machine = all_m > 0 && all_e > 0 ? all_m / all_e : 1;
	for (int k = 0; k < FLEET_COST_KINDS; k++)
		p->scales[k] = usum[k] > 0 && msum[k] > 0 ? msum[k] / usum[k]
							  : defaults[k] * machine;
	p->scale = p->scales[FLEET_COST_NETWORK];
	for (size_t i = 0; i < p->n; i++)
		if (!p->measured[i])
			p->cost[i] = units[i] * p->scales[kinds[i]] +
				     FLEET_COST_BASE * machine;
	free(units);
	free(kinds);
	return 0;
}

int
fleet_plan_make(struct store *s, uint32_t nshards, enum fleet_split split,
		uint64_t upto, struct fleet_plan *p, struct rba_detail *d)
{
	struct store_txn *txn;
	int err;

	assert(nshards >= 1 && nshards <= FLEET_SHARDS_MAX);
	memset(p, 0, sizeof(*p));
	p->nshards = nshards;
	p->split = split;
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	/* In the store's order, which is the names' bytewise order. */
	if ((err = store_version_names(txn, plan_name, p, d)) != 0)
		goto out;
	p->cost = calloc(p->n ? p->n : 1, sizeof(*p->cost));
	p->measured = calloc(p->n ? p->n : 1, 1);
	p->shard = calloc(p->n ? p->n : 1, sizeof(*p->shard));
	p->load = calloc(nshards, sizeof(*p->load));
	if (!p->cost || !p->measured || !p->shard || !p->load) {
		err = RBA_E_NOMEM;
		goto out;
	}
	/* One shard needs no costs; the hash rule shows them all the same. */
	if (nshards > 1 && (err = plan_costs(txn, p, upto, d)) != 0)
		goto out;
	if (split == FLEET_SPLIT_HASH || nshards == 1) {
		for (size_t i = 0; i < p->n; i++) {
			p->shard[i] = fleet_shard_of(p->names[i], nshards);
			p->load[p->shard[i]] += p->cost[i];
		}
		goto out;
	}
	err = fleet_assign(p->names, p->cost, p->n, nshards, p->shard, p->load);
out:
	store_txn_abort(txn);
	return err;
}

void
fleet_plan_release(struct fleet_plan *p)
{
	if (p == NULL)
		return;
	rba_strv_free(p->names, p->n);
	rba_strv_free(p->bad, p->nbad);
	free(p->cost);
	free(p->measured);
	free(p->shard);
	free(p->load);
	memset(p, 0, sizeof(*p));
}
