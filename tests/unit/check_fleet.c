/*
 * check_fleet.c - audits spread over a cluster (fleet/fleet.h): the shard
 * rule over a store's versions, the run of a shard in the store and as a
 * worker writing signed records from a snapshot, its rerun, and the
 * import of what it wrote.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/register.h"
#include "audit/sample_add.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/sign.h"
#include "fleet/fleet.h"
#include "policy/policy.h"
#include "data/snapshot.h"
#include "store/store.h"
#include "tests/unit/scratch.h"
#include "tests/unit/suites.h"

#define GN FIXTURES "/german-credit-numeric.csv"
#define PINS_NUM_LOG FIXTURES "/pins/german-numeric-logistic.yaml"
#define POL_CREDIT FIXTURES "/policy/credit.yaml"
#define KEY FIXTURES "/keys/rba-test-only.key"
#define PUB FIXTURES "/keys/rba-test-only.pub"
#define NVERSIONS 5

static const char *const names[NVERSIONS] = {
	"credit-a", "credit-b", "credit-c", "credit-d", "credit-e",
};

static void
setup(void)
{
	scratch_make("fleet");
	ck_assert_int_eq(rba_crypto_init(), 0);
}

static void
teardown(void)
{
	/* A snapshot is left read-only; make it removable again. */
	chmod(scratch_path("snap/data.mdb"), 0644);
	chmod(scratch_path("snap"), 0755);
	scratch_remove();
}

/* The pins of the numeric logistic model under another version name,
 * trained for two epochs: quick, and still deterministic. */
static struct pins *
pins_named(const char *name)
{
	static const char from[] = "version: german-numeric-logistic\n";
	struct pins *p = NULL;
	struct rba_detail d;
	uint8_t *text = NULL;
	size_t n, len;
	char *out, *at, *ep;

	ck_assert_int_eq(rba_file_read(PINS_NUM_LOG, 1 << 20, &text, &n, NULL), 0);
	out = malloc(n + 256);
	ck_assert_ptr_nonnull(out);
	at = strstr((char *)text, from);
	ck_assert_ptr_nonnull(at);
	len = (size_t)snprintf(out, n + 256, "%.*sversion: %s\n%s",
			       (int)(at - (char *)text), (char *)text, name,
			       at + strlen(from));
	free(text);
	ep = strstr(out, "epochs: 30,");
	ck_assert_ptr_nonnull(ep);
	memcpy(ep, "epochs:  2,", strlen("epochs:  2,"));
	rba_detail_clear(&d);
	ck_assert_msg(policy_pins_parse(out, len, name, &p, &d) == 0,
		      "pins: %s", d.reason);
	free(out);
	return p;
}

/* The first 40 cases of the numeric German credit file. */
static const char *
cases_file(void)
{
	const char *path = scratch_path("cases.csv");
	FILE *in = fopen(GN, "r"), *out = fopen(path, "w");
	char line[4096];

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	for (int i = 0; i <= 40 && fgets(line, sizeof(line), in) != NULL; i++)
		fputs(line, out);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
	return path;
}

/* A store of the NVERSIONS versions, each with a sample and no audit. */
static struct store *
new_store(void)
{
	struct store *s = NULL;
	struct store_txn *t;
	struct policy *pol = NULL;
	struct rba_detail d;
	struct rba_digest dg;
	const char *csv = cases_file();

	rba_detail_clear(&d);
	ck_assert_msg(store_init(scratch_store, &d) == 0, "init: %s", d.reason);
	ck_assert_msg(store_open(scratch_store, 0, &s, &d) == 0, "open: %s", d.reason);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_msg(snapshot_add(t, GN, NULL, &dg, NULL, &d) == 0, "%s", d.reason);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	ck_assert_int_eq(policy_load(POL_CREDIT, &pol, &d), 0);
	for (int i = 0; i < NVERSIONS; i++) {
		struct register_request rq;
		struct register_result res;
		struct sample_add_request sq;
		struct sample_add_result sres;
		struct pins *p = pins_named(names[i]);

		memset(&rq, 0, sizeof(rq));
		rq.pins = p;
		rq.policy = pol;
		ck_assert_msg(register_version(s, &rq, &res, &d) == 0,
			      "register %s: %s", names[i], d.reason);
		register_result_release(&res);
		policy_pins_free(p);
		memset(&sq, 0, sizeof(sq));
		sq.version = names[i];
		sq.path = csv;
		ck_assert_msg(sample_add(s, &sq, &sres, &d) == 0, "sample: %s",
			      d.reason);
		sample_add_result_release(&sres);
	}
	policy_free(pol);
	return s;
}

static uint64_t
history_len(struct store *s)
{
	struct store_txn *t;
	struct rba_detail d;
	uint64_t id = 0;
	struct rba_digest dg;

	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(store_history_head(t, &id, &dg, &d), 0);
	store_txn_abort(t);
	return id;
}

/* ---- the shard rule over a store -------------------------------------- */

START_TEST(test_versions_partition)
{
	struct store *s = new_store();
	struct fleet_versions all, v;
	struct rba_detail d;
	static const uint32_t shards[] = { 1, 2, 3, 7, 64 };

	rba_detail_clear(&d);
	ck_assert_int_eq(fleet_versions_list(s, 0, 1, FLEET_SPLIT_HASH, &all, &d), 0);
	ck_assert_uint_eq(all.n, NVERSIONS);
	ck_assert_uint_eq(all.nbad, 0);
	for (size_t i = 0; i < all.n; i++)
		ck_assert_str_eq(all.names[i], names[i]); /* sorted */
	for (size_t m = 0; m < sizeof(shards) / sizeof(shards[0]); m++) {
		uint32_t n = shards[m];
		int seen[NVERSIONS] = { 0 };
		for (uint32_t k = 0; k < n; k++) {
			ck_assert_int_eq(fleet_versions_list(s, k, n, FLEET_SPLIT_HASH, &v, &d), 0);
			for (size_t i = 0; i < v.n; i++) {
				size_t j = 0;
				while (j < NVERSIONS && strcmp(names[j], v.names[i]) != 0)
					j++;
				ck_assert_uint_lt(j, NVERSIONS);
				ck_assert_uint_eq(fleet_shard_of(v.names[i], n), k);
				if (i > 0)
					ck_assert_int_lt(strcmp(v.names[i - 1],
								v.names[i]), 0);
				seen[j]++;
			}
			fleet_versions_release(&v);
			ck_assert_ptr_null(v.names);
		}
		/* Every version in exactly one shard of n. */
		for (int j = 0; j < NVERSIONS; j++)
			ck_assert_msg(seen[j] == 1, "%s in %d shards of %u",
				      names[j], seen[j], n);
	}
	fleet_versions_release(&all);
	fleet_versions_release(NULL);
	store_close(s);
}
END_TEST

/* ---- the run of a shard ------------------------------------------------ */

#define MAX_TURNS 16

struct seen {
	size_t n;
	int stop_after; /* 0: never */
	struct {
		char name[64];
		size_t index;
		int skipped, err, write_err, verdict, recorded, has_path;
		char path[1024];
	} t[MAX_TURNS];
};

static int
collect(void *ctx, const struct fleet_turn *t)
{
	struct seen *s = ctx;

	ck_assert_uint_lt(s->n, MAX_TURNS);
	snprintf(s->t[s->n].name, sizeof(s->t[s->n].name), "%s", t->name);
	s->t[s->n].index = t->index;
	s->t[s->n].skipped = t->skipped;
	s->t[s->n].err = t->err;
	s->t[s->n].write_err = t->write_err;
	s->t[s->n].has_path = t->path != NULL;
	if (t->path != NULL)
		snprintf(s->t[s->n].path, sizeof(s->t[s->n].path), "%s", t->path);
	if (!t->skipped) {
		ck_assert_ptr_nonnull(t->report);
		ck_assert_ptr_nonnull(t->detail);
		s->t[s->n].verdict = t->report->verdict;
		s->t[s->n].recorded = t->report->recorded;
	} else {
		ck_assert_ptr_null(t->report);
	}
	s->n++;
	return s->stop_after && s->n == (size_t)s->stop_after ? 42 : 0;
}

START_TEST(test_run_in_store)
{
	struct store *s = new_store();
	struct seen seen;
	struct rba_detail d;
	char *const unknown[] = { "no-such-version" };

	memset(&seen, 0, sizeof(seen));
	rba_detail_clear(&d);
	ck_assert_int_eq(fleet_audit_run(s, NULL, (char *const *)names, NVERSIONS,
					 NULL, collect, &seen, &d), 0);
	ck_assert_uint_eq(seen.n, NVERSIONS);
	for (size_t i = 0; i < NVERSIONS; i++) {
		ck_assert_str_eq(seen.t[i].name, names[i]);
		ck_assert_uint_eq(seen.t[i].index, i);
		ck_assert_int_eq(seen.t[i].skipped, 0);
		ck_assert_int_eq(seen.t[i].err, 0);
		ck_assert_int_eq(seen.t[i].verdict, AUDIT_BIT_IDENTICAL);
		ck_assert_int_eq(seen.t[i].recorded, 1);
		ck_assert_int_eq(seen.t[i].has_path, 0);
	}
	ck_assert_uint_eq(history_len(s), NVERSIONS);

	/* An unknown version is its turn's failure, not the run's. */
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(fleet_audit_run(s, NULL, unknown, 1, NULL, collect, &seen,
					 &d), 0);
	ck_assert_uint_eq(seen.n, 1);
	ck_assert_int_eq(seen.t[0].err, RBA_E_NOTFOUND);
	ck_assert_uint_eq(history_len(s), NVERSIONS);

	/* The callback's value stops the run there. */
	memset(&seen, 0, sizeof(seen));
	seen.stop_after = 2;
	ck_assert_int_eq(fleet_audit_run(s, NULL, (char *const *)names, NVERSIONS,
					 NULL, collect, &seen, &d), 42);
	ck_assert_uint_eq(seen.n, 2);
	ck_assert_uint_eq(history_len(s), NVERSIONS + 2);
	store_close(s);
}
END_TEST

static size_t
count_files(const char *dir, const char *suffix)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	size_t n = 0, sl = strlen(suffix);

	if (dp == NULL)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l > sl && strcmp(e->d_name + l - sl, suffix) == 0)
			n++;
	}
	closedir(dp);
	return n;
}

START_TEST(test_run_as_worker)
{
	struct store *s = new_store(), *snap = NULL;
	struct sign_seckey *key = NULL;
	struct sign_pubkey pub;
	struct fleet_worker w;
	struct fleet_versions v;
	struct fleet_import im;
	struct seen seen;
	struct rba_detail d;
	const char *dirs[1];
	size_t total = 0;

	rba_detail_clear(&d);
	ck_assert_msg(store_snapshot_make(s, scratch_path("snap"), NULL, &d) == 0,
		      "snapshot: %s", d.reason);
	memset(&w, 0, sizeof(w));
	ck_assert_msg(store_snapshot_open(scratch_path("snap"), &snap, &w.snap, &d) == 0,
		      "open snapshot: %s", d.reason);
	ck_assert_int_eq(sign_seckey_load(KEY, NULL, 0, &key, &d), 0);
	ck_assert_int_eq(sign_pubkey_load(PUB, &pub, &d), 0);
	w.key = key;
	w.dir = scratch_path("rec");
	w.n = 2;

	/* Both shards of two: a record per version, the store untouched. */
	for (w.k = 0; w.k < w.n; w.k++) {
		ck_assert_int_eq(fleet_versions_list(snap, w.k, w.n, FLEET_SPLIT_HASH, &v, &d), 0);
		memset(&seen, 0, sizeof(seen));
		ck_assert_msg(fleet_audit_run(snap, &w, v.names, v.n, NULL, collect,
					      &seen, &d) == 0, "run: %s", d.reason);
		ck_assert_uint_eq(seen.n, v.n);
		for (size_t i = 0; i < seen.n; i++) {
			ck_assert_int_eq(seen.t[i].skipped, 0);
			ck_assert_int_eq(seen.t[i].err, 0);
			ck_assert_int_eq(seen.t[i].write_err, 0);
			ck_assert_int_eq(seen.t[i].recorded, 0);
			ck_assert_int_eq(seen.t[i].has_path, 1);
			ck_assert_int_eq(access(seen.t[i].path, R_OK), 0);
		}
		total += v.n;
		fleet_versions_release(&v);
	}
	ck_assert_uint_eq(total, NVERSIONS);
	ck_assert_uint_eq(count_files(w.dir, FLEET_RECORD_SUFFIX), NVERSIONS);
	ck_assert_uint_eq(count_files(w.dir, FLEET_SIG_SUFFIX), NVERSIONS);
	ck_assert_uint_eq(history_len(s), 0);

	/* A rerun skips every version that has its record. */
	w.k = 0;
	w.n = 1;
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(fleet_audit_run(snap, &w, (char *const *)names, NVERSIONS,
					 NULL, collect, &seen, &d), 0);
	ck_assert_uint_eq(seen.n, NVERSIONS);
	for (size_t i = 0; i < seen.n; i++)
		ck_assert_msg(seen.t[i].skipped, "%s audited again", seen.t[i].name);
	ck_assert_uint_eq(count_files(w.dir, FLEET_RECORD_SUFFIX), NVERSIONS);

	/* What the workers wrote imports into the store, every version. */
	dirs[0] = w.dir;
	ck_assert_msg(fleet_import_run(s, dirs, 1, &pub, 1, FLEET_SPLIT_HASH, &im, &d) == 0,
		      "import: %s", d.reason);
	ck_assert_uint_eq(im.imported, NVERSIONS);
	ck_assert_uint_eq(im.refused, 0);
	ck_assert_uint_eq(im.nmissing, 0);
	ck_assert_int_eq(im.exit_status, 0);
	/* what the directory held: every record, none imported before */
	ck_assert_uint_eq(im.ndirs, 1);
	ck_assert_str_eq(im.dirs[0].path, w.dir);
	ck_assert_uint_eq(im.dirs[0].files, NVERSIONS);
	ck_assert_uint_eq(im.dirs[0].earlier, 0);
	fleet_import_release(&im);
	ck_assert_uint_eq(history_len(s), NVERSIONS);

	/* Imported again: the directory gives nothing, its records count as
	 * imported before. */
	ck_assert_msg(fleet_import_run(s, dirs, 1, &pub, 1, FLEET_SPLIT_HASH, &im, &d) == 0,
		      "import: %s", d.reason);
	ck_assert_uint_eq(im.nitems, 0);
	ck_assert_uint_eq(im.dirs[0].files, 0);
	ck_assert_uint_eq(im.dirs[0].earlier, NVERSIONS);
	fleet_import_release(&im);
	ck_assert_uint_eq(history_len(s), NVERSIONS);

	/* A records directory that cannot be read: nothing is audited. */
	w.dir = scratch_path("cases.csv");
	memset(&seen, 0, sizeof(seen));
	rba_detail_clear(&d);
	ck_assert_int_ne(fleet_audit_run(snap, &w, (char *const *)names, NVERSIONS,
					 NULL, collect, &seen, &d), 0);
	ck_assert_uint_eq(seen.n, 0);

	sign_seckey_free(key);
	store_close(snap);
	store_close(s);
}
END_TEST

/* A read-only snapshot of s at name, opened as worker w's store. */
static struct store *
snapshot_for(struct store *s, const char *name, struct fleet_worker *w)
{
	struct store *snap = NULL;
	struct rba_detail d;

	rba_detail_clear(&d);
	ck_assert_msg(store_snapshot_make(s, scratch_path(name), NULL, &d) == 0,
		      "snapshot: %s", d.reason);
	ck_assert_msg(store_snapshot_open(scratch_path(name), &snap, &w->snap, &d) == 0,
		      "open snapshot: %s", d.reason);
	return snap;
}

/* Imports dir with the test key; the item whose version is name. */
static const struct fleet_item *
import_one(struct store *s, const char *dir, struct fleet_import *im,
	   const char *name)
{
	struct sign_pubkey pub;
	struct rba_detail d;
	const char *dirs[1] = { dir };

	ck_assert_int_eq(sign_pubkey_load(PUB, &pub, &d), 0);
	rba_detail_clear(&d);
	ck_assert_msg(fleet_import_run(s, dirs, 1, &pub, 1, FLEET_SPLIT_HASH, im, &d) == 0,
		      "import: %s", d.reason);
	for (size_t i = 0; i < im->nitems; i++)
		if (strcmp(im->items[i].version, name) == 0)
			return &im->items[i];
	ck_abort_msg("no record of %s imported or refused", name);
	return NULL;
}

/*
 * What the import refuses beyond the signature and the store: a record
 * that contradicts itself (evidence_record_check, the rules export and
 * verify apply), and an audit of an older snapshot than an audit the
 * history already holds (it would become the version's latest).
 */
START_TEST(test_import_refusals)
{
	struct store *s = new_store(), *snap;
	struct sign_seckey *key = NULL;
	struct fleet_worker w;
	struct fleet_import im;
	struct audit_options o;
	struct audit_report r;
	struct rba_detail d;
	const struct fleet_item *it;
	char path[1024];
	char *const one[] = { (char *)names[1] };
	struct seen seen;

	ck_assert_int_eq(sign_seckey_load(KEY, NULL, 0, &key, &d), 0);
	memset(&w, 0, sizeof(w));
	w.key = key;
	w.n = 1;
	snap = snapshot_for(s, "snap", &w);

	/* A forged record, signed with the worker key: bit-identical with
	 * 7 flips and a rebuilt artifact that is not the pinned one. */
	memset(&o, 0, sizeof(o));
	o.no_record = 1;
	rba_detail_clear(&d);
	ck_assert_int_eq(audit_version(snap, names[0], &o, &r, &d), 0);
	ck_assert_int_eq(r.verdict, AUDIT_BIT_IDENTICAL);
	r.flips = 7;
	r.artifact_rebuilt.b[0] ^= 0x55;
	w.dir = scratch_path("forged");
	ck_assert_msg(fleet_record_write(&w, &r, path, sizeof(path), &d) == 0,
		      "write: %s", d.reason);
	audit_report_release(&r);
	it = import_one(s, w.dir, &im, names[0]);
	ck_assert_int_eq(it->accepted, 0);
	ck_assert_msg(strstr(it->reason, "inconsistent: verdict bit-identical, but "
			     "the rebuilt artifact") != NULL, "%s", it->reason);
	ck_assert_uint_eq(im.imported, 0);
	ck_assert_int_eq(im.exit_status, 2);
	fleet_import_release(&im);
	ck_assert_uint_eq(history_len(s), 0);
	ck_assert_int_eq(access(path, R_OK), 0); /* left where it was */

	/* names[1] audited in the store after the snapshot was taken: the
	 * worker's audit of the snapshot is older and is refused. */
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(fleet_audit_run(s, NULL, one, 1, NULL, collect, &seen, &d), 0);
	ck_assert_uint_eq(history_len(s), 1);
	w.dir = scratch_path("older");
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(fleet_audit_run(snap, &w, one, 1, NULL, collect, &seen, &d), 0);
	ck_assert_int_eq(seen.t[0].write_err, 0);
	it = import_one(s, w.dir, &im, names[1]);
	ck_assert_int_eq(it->accepted, 0);
	ck_assert_msg(strstr(it->reason, "an audit of version 'credit-b' was "
			     "committed after the snapshot") != NULL, "%s",
		      it->reason);
	fleet_import_release(&im);
	ck_assert_uint_eq(history_len(s), 1);

	/* Two snapshots in one import: only the later one's audit of a
	 * version is taken. */
	store_close(snap);
	snap = snapshot_for(s, "snap2", &w);
	w.dir = scratch_path("both");
	{
		char *const three[] = { (char *)names[2] };
		struct store *old = NULL;
		struct fleet_worker wo = w;
		memset(&seen, 0, sizeof(seen));
		ck_assert_int_eq(fleet_audit_run(snap, &w, three, 1, NULL, collect,
						 &seen, &d), 0);
		ck_assert_int_eq(store_snapshot_open(scratch_path("snap"), &old,
						     &wo.snap, &d), 0);
		wo.dir = scratch_path("both");
		memset(&seen, 0, sizeof(seen));
		ck_assert_int_eq(fleet_audit_run(old, &wo, three, 1, NULL, collect,
						 &seen, &d), 0);
		store_close(old);
	}
	{
		struct sign_pubkey pub;
		const char *dirs[1] = { scratch_path("both") };
		size_t taken = 0, refused = 0;
		ck_assert_int_eq(sign_pubkey_load(PUB, &pub, &d), 0);
		ck_assert_int_eq(fleet_import_run(s, dirs, 1, &pub, 1, FLEET_SPLIT_HASH, &im, &d), 0);
		for (size_t i = 0; i < im.nitems; i++) {
			if (im.items[i].accepted) {
				taken++;
				ck_assert_uint_eq(im.items[i].head_id, 1);
			} else {
				refused++;
				ck_assert_msg(strstr(im.items[i].reason, "from a later "
						     "snapshot") != NULL, "%s",
					      im.items[i].reason);
			}
		}
		ck_assert_uint_eq(taken, 1);
		ck_assert_uint_eq(refused, 1);
		fleet_import_release(&im);
	}
	ck_assert_uint_eq(history_len(s), 2);
	chmod(scratch_path("snap2/data.mdb"), 0644);
	chmod(scratch_path("snap2"), 0755);
	sign_seckey_free(key);
	store_close(snap);
	store_close(s);
}
END_TEST

/*
 * The record at path with its first from replaced by to (as long), and
 * signed again by key under the trusted comment it had: a record the
 * worker key signed that its writer never wrote.
 */
static void
resign_with(const char *path, const char *from, const char *to,
	    const struct sign_seckey *key)
{
	uint8_t *b = NULL, *sg = NULL;
	size_t n, sn, m = strlen(from);
	char sigpath[1200], *tc, *nl;
	struct rba_buf sig;
	struct rba_detail d;
	size_t i;

	ck_assert_uint_eq(strlen(to), m);
	ck_assert_int_eq(rba_file_read(path, 1 << 24, &b, &n, NULL), 0);
	for (i = 0; i + m <= n && memcmp(b + i, from, m) != 0; i++)
		;
	ck_assert_msg(i + m <= n, "no '%s' in the record", from);
	memcpy(b + i, to, m);
	snprintf(sigpath, sizeof(sigpath), "%s%s", path, FLEET_SIG_SUFFIX);
	ck_assert_int_eq(rba_file_read(sigpath, 1 << 16, &sg, &sn, NULL), 0);
	tc = strstr((char *)sg, "trusted comment: ");
	ck_assert_ptr_nonnull(tc);
	tc += strlen("trusted comment: ");
	nl = strchr(tc, '\n');
	ck_assert_ptr_nonnull(nl);
	*nl = 0;
	rba_buf_init(&sig);
	rba_detail_clear(&d);
	ck_assert_msg(sign_file_sign(key, b, n, NULL, tc, &sig, &d) == 0, "%s",
		      d.reason);
	ck_assert_int_eq(rba_file_write_atomic(path, b, n, 0644), 0);
	ck_assert_int_eq(rba_file_write_atomic(sigpath, sig.p, sig.len, 0644), 0);
	rba_buf_release(&sig);
	free(b);
	free(sg);
}

/* Imports dir with the test key, whatever it holds. */
static void
import_one_claimed(struct store *s, const char *dir, struct fleet_import *im)
{
	struct sign_pubkey pub;
	struct rba_detail d;
	const char *dirs[1] = { dir };

	ck_assert_int_eq(sign_pubkey_load(PUB, &pub, &d), 0);
	rba_detail_clear(&d);
	ck_assert_msg(fleet_import_run(s, dirs, 1, &pub, 1, FLEET_SPLIT_HASH, im, &d) == 0,
		      "import: %s", d.reason);
}

/*
 * A signed record the audit record's decoder refuses: refused with the
 * decoder's words, "not a worker record" when it stops before the
 * members the import needs, else "inconsistent" as evidence_record_check
 * says it.
 */
START_TEST(test_import_undecodable)
{
	static const struct {
		const char *from, *to, *reason;
	} cases[] = {
		{ "\"verdict\": \"", "\"verdicT\": \"",
		  "not a worker record: the audit record: 'verdict' is missing, "
		  "not a string" },
		{ "\"state\": \"same\"", "\"state\": \"samE\"",
		  "inconsistent: the audit record: 'links.code_revision.state' "
		  "is not same, changed or unknown" },
	};
	struct store *s = new_store(), *snap;
	struct sign_seckey *key = NULL;
	struct fleet_worker w;
	struct fleet_import im;
	struct audit_options o;
	struct audit_report r;
	struct rba_detail d;
	char path[1024], dir[32];

	ck_assert_int_eq(sign_seckey_load(KEY, NULL, 0, &key, &d), 0);
	memset(&w, 0, sizeof(w));
	w.key = key;
	w.n = 1;
	snap = snapshot_for(s, "snap", &w);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct fleet_item *it;
		memset(&o, 0, sizeof(o));
		o.no_record = 1;
		rba_detail_clear(&d);
		ck_assert_int_eq(audit_version(snap, names[0], &o, &r, &d), 0);
		snprintf(dir, sizeof(dir), "bad%zu", c);
		w.dir = scratch_path(dir);
		ck_assert_msg(fleet_record_write(&w, &r, path, sizeof(path), &d) == 0,
			      "write: %s", d.reason);
		audit_report_release(&r);
		resign_with(path, cases[c].from, cases[c].to, key);
		import_one_claimed(s, w.dir, &im);
		ck_assert_uint_eq(im.nitems, 1);
		it = &im.items[0];
		ck_assert_str_eq(it->claimed, names[0]);
		ck_assert_int_eq(it->accepted, 0);
		ck_assert_int_eq(it->err, RBA_E_SCHEMA);
		ck_assert_msg(strcmp(it->reason, cases[c].reason) == 0, "%s",
			      it->reason);
		fleet_import_release(&im);
	}
	ck_assert_uint_eq(history_len(s), 0);
	sign_seckey_free(key);
	store_close(snap);
	store_close(s);
}
END_TEST

/* ---- the balanced rule ------------------------------------------------ */

static double
max_over_mean(const double *load, uint32_t n)
{
	double sum = 0, max = 0;

	for (uint32_t k = 0; k < n; k++) {
		sum += load[k];
		if (load[k] > max)
			max = load[k];
	}
	return max / (sum / n);
}

START_TEST(test_assign_balanced)
{
	/* Twelve versions: six MLPs of 300 epochs beside six logistic
	 * models, as the fleet bench has them. */
	char *nm[12];
	double cost[12], load[4], load2[4];
	uint32_t shard[12], shard2[12], hashload_n[4] = { 0 };
	double hashload[4] = { 0 };

	for (int i = 0; i < 12; i++) {
		char b[32];
		snprintf(b, sizeof(b), "v%02d", i);
		nm[i] = strdup(b);
		cost[i] = i % 2 ? 20.0 + i : 0.5;
	}
	ck_assert_int_eq(fleet_assign(nm, cost, 12, 4, shard, load), 0);
	/* Every version placed, loads are the sums. */
	{
		double l[4] = { 0 };
		for (int i = 0; i < 12; i++) {
			ck_assert_uint_lt(shard[i], 4);
			l[shard[i]] += cost[i];
		}
		for (int k = 0; k < 4; k++)
			ck_assert(l[k] == load[k]);
	}
	/* Longest first onto the least loaded: the four largest on four
	 * shards, the fifth largest with the smallest of them. */
	ck_assert_uint_ne(shard[11], shard[9]);
	ck_assert_uint_ne(shard[9], shard[7]);
	ck_assert_uint_ne(shard[7], shard[5]);
	ck_assert_uint_ne(shard[11], shard[5]);
	ck_assert_uint_eq(shard[3], shard[5]);
	ck_assert(max_over_mean(load, 4) < 1.3);
	/* The hash rule on the same costs is what it is; the balanced one
	 * is never worse than it here. */
	for (int i = 0; i < 12; i++) {
		uint32_t k = fleet_shard_of(nm[i], 4);
		hashload[k] += cost[i];
		hashload_n[k]++;
	}
	ck_assert(max_over_mean(load, 4) <= max_over_mean(hashload, 4));
	/* Pure: the same input, the same split. */
	ck_assert_int_eq(fleet_assign(nm, cost, 12, 4, shard2, load2), 0);
	ck_assert_mem_eq(shard, shard2, sizeof(shard));
	/* Ties by name: equal costs go round the shards in name order. */
	for (int i = 0; i < 12; i++)
		cost[i] = 1;
	ck_assert_int_eq(fleet_assign(nm, cost, 12, 4, shard, load), 0);
	for (int i = 0; i < 12; i++)
		ck_assert_uint_eq(shard[i], (uint32_t)(i % 4));
	/* More shards than versions: one each, the rest empty. */
	ck_assert_int_eq(fleet_assign(nm, cost, 3, 8, shard, NULL), 0);
	ck_assert_uint_eq(shard[0], 0);
	ck_assert_uint_eq(shard[1], 1);
	ck_assert_uint_eq(shard[2], 2);
	/* A negative cost counts as 0; no version at all is fine. */
	cost[0] = -5;
	ck_assert_int_eq(fleet_assign(nm, cost, 2, 2, shard, load), 0);
	ck_assert(load[0] == 0 || load[1] == 0);
	ck_assert_int_eq(fleet_assign(nm, cost, 0, 2, shard, load), 0);
	ck_assert(load[0] == 0 && load[1] == 0);
	for (int i = 0; i < 12; i++)
		free(nm[i]);
}
END_TEST

START_TEST(test_cost_units)
{
	uint8_t *text = NULL;
	size_t n;
	double lg, ml;

	ck_assert_int_eq(rba_file_read(PINS_NUM_LOG, 1 << 20, &text, &n, NULL), 0);
	lg = fleet_cost_units((const char *)text, n, 1000);
	/* logistic: bytes x epochs (30) x 1 */
	ck_assert(lg == 1000.0 * 30);
	free(text);
	ck_assert_int_eq(rba_file_read(FIXTURES "/pins/german-numeric-mlp.yaml",
				       1 << 20, &text, &n, NULL), 0);
	ml = fleet_cost_units((const char *)text, n, 1000);
	/* hidden [32, 32], 20 epochs: 32 + 32*32 + 32 weights per column */
	ck_assert(ml == 1000.0 * 20 * (32 + 32 * 32 + 32));
	free(text);
	ck_assert(fleet_cost_units("not: [pins", 10, 1000) == 0);
	ck_assert(fleet_cost_units(NULL, 0, 1000) == 0);
}
END_TEST

/* The total_s of a version's audit records, newest first. */
struct totals {
	int n;
	double v[8];
};

static int
totals_one(void *ctx, const struct store_history_entry *e)
{
	struct totals *tt = ctx;
	struct rba_json_value root;

	if (tt->n < 8 && rba_json_parse((const char *)e->record, e->len, &root, NULL) == 0) {
		double x = rba_json_get_num(rba_json_get(&root, "timings"), "total_s", -1);
		if (x >= 0)
			tt->v[tt->n++] = x;
		rba_json_release(&root);
	}
	return 0;
}

/* The split of a store: a partition, the same on its snapshot, and
 * measured costs once the versions were audited. */
START_TEST(test_plan_store)
{
	struct store *s = new_store(), *snap = NULL;
	struct fleet_plan p, q;
	struct rba_detail d;
	struct store_snapshot_info si;

	rba_detail_clear(&d);
	ck_assert_int_eq(fleet_plan_make(s, 3, FLEET_SPLIT_BALANCED,
					 FLEET_HISTORY_ALL, &p, &d), 0);
	ck_assert_uint_eq(p.n, NVERSIONS);
	for (size_t i = 0; i < p.n; i++) {
		ck_assert_int_eq(p.measured[i], 0);
		ck_assert(p.cost[i] > 0);
		ck_assert_uint_lt(p.shard[i], 3);
	}
	ck_assert(p.scale == FLEET_COST_SCALE_DEFAULT);
	fleet_plan_release(&p);
	/* Audited: every cost measured. */
	for (int i = 0; i < NVERSIONS; i++) {
		struct audit_report r;
		rba_detail_clear(&d);
		ck_assert_int_eq(audit_version(s, names[i], NULL, &r, &d), 0);
		audit_report_release(&r);
	}
	ck_assert_int_eq(fleet_plan_make(s, 2, FLEET_SPLIT_BALANCED,
					 FLEET_HISTORY_ALL, &p, &d), 0);
	for (size_t i = 0; i < p.n; i++)
		ck_assert_int_eq(p.measured[i], 1);
	/* One audit: its total; three more of the first: the median of the
	 * latest three. */
	{
		struct totals tt = { 0, { 0 } };
		struct store_txn *t;
		double a, b, c, med;
		ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
		ck_assert_int_eq(store_history_list(t, names[0], 1, totals_one, &tt, &d), 0);
		store_txn_abort(t);
		ck_assert_int_eq(tt.n, 1);
		ck_assert(p.cost[0] == tt.v[0]);
		fleet_plan_release(&p);
		for (int k = 0; k < 3; k++) {
			struct audit_report r;
			ck_assert_int_eq(audit_version(s, names[0], NULL, &r, &d), 0);
			audit_report_release(&r);
		}
		tt.n = 0;
		ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
		ck_assert_int_eq(store_history_list(t, names[0], 1, totals_one, &tt, &d), 0);
		store_txn_abort(t);
		ck_assert_int_eq(tt.n, 4);
		a = tt.v[0], b = tt.v[1], c = tt.v[2]; /* newest first */
		med = a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
		ck_assert_int_eq(fleet_plan_make(s, 2, FLEET_SPLIT_BALANCED,
						 FLEET_HISTORY_ALL, &p, &d), 0);
		ck_assert_msg(p.cost[0] == med, "cost %g, median %g of %g %g %g",
			      p.cost[0], med, a, b, c);
	}
	/* Up to the empty head: what a snapshot made before the audits saw. */
	ck_assert_int_eq(fleet_plan_make(s, 2, FLEET_SPLIT_BALANCED, 0, &q, &d), 0);
	for (size_t i = 0; i < q.n; i++)
		ck_assert_int_eq(q.measured[i], 0);
	fleet_plan_release(&q);
	/* A snapshot splits as its store does. */
	ck_assert_int_eq(store_snapshot_make(s, scratch_path("snap"), &si, &d), 0);
	ck_assert_int_eq(store_snapshot_open(scratch_path("snap"), &snap, &si, &d), 0);
	ck_assert_int_eq(fleet_plan_make(snap, 2, FLEET_SPLIT_BALANCED,
					 FLEET_HISTORY_ALL, &q, &d), 0);
	ck_assert_uint_eq(q.n, p.n);
	ck_assert_mem_eq(q.shard, p.shard, p.n * sizeof(*p.shard));
	for (size_t i = 0; i < p.n; i++)
		ck_assert(q.cost[i] == p.cost[i]);
	fleet_plan_release(&q);
	/* The hash rule keeps its name-only split, with the same costs. */
	ck_assert_int_eq(fleet_plan_make(s, 2, FLEET_SPLIT_HASH,
					 FLEET_HISTORY_ALL, &q, &d), 0);
	for (size_t i = 0; i < q.n; i++) {
		ck_assert_uint_eq(q.shard[i], fleet_shard_of(q.names[i], 2));
		ck_assert(q.cost[i] == p.cost[i]);
	}
	fleet_plan_release(&q);
	fleet_plan_release(&p);
	store_close(snap);
	store_close(s);
}
END_TEST

/* ---- pruning --------------------------------------------------------- */

static void
touch_at(const char *path, time_t t)
{
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };

	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

START_TEST(test_prune)
{
	struct store *s = new_store();
	struct fleet_prune p;
	struct rba_detail d;
	char path[4096];
	FILE *f;

	ck_assert_int_eq(mkdir(scratch_path("sh"), 0755), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/run-%d", scratch_path("sh"), i);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/run-%d/records", scratch_path("sh"), i);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/run-%d/snapshot", scratch_path("sh"), i);
		rba_detail_clear(&d);
		ck_assert_msg(store_snapshot_make(s, path, NULL, &d) == 0, "%s", d.reason);
		snprintf(path, sizeof(path), "%s/run-%d/snapshot/" STORE_SNAPSHOT_MARKER,
			 scratch_path("sh"), i);
		/* The newest written first: order is by the marker's time. */
		touch_at(path, 1800000000 - 1000 * i);
	}
	/* run-2 is the oldest, run-0 the newest; a record not imported in
	 * run-1 keeps it. */
	snprintf(path, sizeof(path), "%s/run-1/records/x.0.json", scratch_path("sh"));
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fclose(f);
	ck_assert_int_eq(fleet_prune_runs(scratch_path("sh"), 1, 1, &p, &d), 0);
	ck_assert_uint_eq(p.n, 3);
	ck_assert_uint_eq(p.removed, 0);
	ck_assert_ptr_nonnull(strstr(p.runs[0].path, "run-2"));
	ck_assert_int_eq(p.runs[0].fate, FLEET_PRUNE_REMOVED);
	ck_assert_int_eq(p.runs[1].fate, FLEET_PRUNE_UNIMPORTED);
	ck_assert_uint_eq(p.runs[1].unimported, 1);
	ck_assert_int_eq(p.runs[2].fate, FLEET_PRUNE_NEWEST);
	fleet_prune_release(&p);
	snprintf(path, sizeof(path), "%s/run-2/snapshot", scratch_path("sh"));
	ck_assert_int_eq(access(path, F_OK), 0); /* a dry run */
	ck_assert_int_eq(fleet_prune_runs(scratch_path("sh"), 1, 0, &p, &d), 0);
	ck_assert_uint_eq(p.removed, 1);
	fleet_prune_release(&p);
	ck_assert_int_ne(access(path, F_OK), 0);
	/* The lock names run-1: kept even without its record. */
	snprintf(path, sizeof(path), "%s/run-1/records/x.0.json", scratch_path("sh"));
	ck_assert_int_eq(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/" FLEET_LOCK_DIR, scratch_path("sh"));
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/" FLEET_LOCK_DIR "/" FLEET_LOCK_OWNER,
		 scratch_path("sh"));
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fprintf(f, "host=x\nrun=/elsewhere/sh/run-1/\n");
	fclose(f);
	ck_assert_int_eq(fleet_prune_runs(scratch_path("sh"), 1, 0, &p, &d), 0);
	ck_assert_uint_eq(p.n, 2);
	ck_assert_int_eq(p.runs[0].fate, FLEET_PRUNE_LOCKED);
	ck_assert_uint_eq(p.removed, 0);
	fleet_prune_release(&p);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(fleet_prune_runs(scratch_path("sh"), 1, 0, &p, &d), 0);
	ck_assert_uint_eq(p.removed, 1);
	fleet_prune_release(&p);
	ck_assert_int_eq(fleet_prune_runs(scratch_path("nowhere"), 1, 0, &p, &d), ENOENT);
	fleet_prune_release(&p);
	/* The newest stays; make it removable for the scratch cleanup. */
	snprintf(path, sizeof(path), "%s/run-0/snapshot", scratch_path("sh"));
	ck_assert_int_eq(chmod(path, 0755), 0);
	store_close(s);
}
END_TEST

Suite *
suite_fleet(void)
{
	Suite *s = suite_create("fleet");
	TCase *tc = tcase_create("fleet");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_versions_partition);
	tcase_add_test(tc, test_run_in_store);
	tcase_add_test(tc, test_run_as_worker);
	tcase_add_test(tc, test_import_refusals);
	tcase_add_test(tc, test_import_undecodable);
	tcase_add_test(tc, test_assign_balanced);
	tcase_add_test(tc, test_cost_units);
	tcase_add_test(tc, test_plan_store);
	tcase_add_test(tc, test_prune);
	suite_add_tcase(s, tc);
	return s;
}
