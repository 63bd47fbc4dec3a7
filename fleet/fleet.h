/*
 * fleet.h - audits spread over a cluster: the shard rule, the run of a
 * shard's audits (also the single run of `audit`, one shard of one), the
 * signed record a worker writes instead of touching the store, and the
 * import that checks those records and appends them to the store's
 * hash-chained history.
 *
 * Shard rules (fleet_plan_make).  Two, chosen by the caller; every
 * worker of one run must use the same one (`audit --all --split`).
 *
 * Balanced (the default): each version's expected audit cost, then the
 * versions longest first (ties by name, bytewise) each onto the shard
 * with the least load so far (ties: the lowest shard number).  The cost
 * is the median of the total_s timings of the version's latest three
 * audit records in the history whose verdict is not not-measured (one
 * or two when it has fewer; measured), else an
 * estimate from its pins (fleet_cost_units) times the seconds per unit
 * of the measured versions (the sum of their seconds over the sum of
 * their units; FLEET_COST_SCALE_DEFAULT when none is measured).  It
 * reads nothing but the store, in one read transaction, so on a
 * snapshot it is a pure function of the snapshot: every worker computes
 * the same split without talking to the others.  A new audit changes
 * the costs, so the split of the next snapshot may differ.
 *
 * Hash: version NAME belongs to shard
 *     u64be(first 8 bytes of SHA-256(NAME)) mod N
 * (the first 16 hex digits of `printf %s NAME | sha256sum`, as an
 * unsigned number, modulo N).  It depends on the name only:
 * registering versions in another order, or adding one, never moves the
 * others between shards of the same N.
 *
 * `rebuild-audit audit --all --shard K/N --list` prints the versions of
 * a shard; `audit --all --shards N --list` the whole split with the
 * expected load of every shard.
 *
 * Worker record.  One file per audited version in the records directory:
 *     <name>.<first 16 hex digits of the file's SHA-256>.json
 *     <same>.json.minisig
 * where <name> is the version name with every byte outside
 * [A-Za-z0-9._-] (and a leading '.') replaced by '_' (the file holds the
 * exact name).  The .json file is the audit record (AUDIT_RECORD_SCHEMA,
 * audit_report_json) with one more member at its end:
 *     "worker": {"schema": FLEET_WORKER_SCHEMA, "store_id": "<hex>",
 *                "snapshot_head_id": <n>, "snapshot_head": "sha256:...",
 *                "shard": "K/N", "key_id": "<minisign key id>"}
 * and no final newline: its bytes are exactly what the import appends
 * to the history, so `sha256sum` of the file is the digest of that
 * history record's text.  The .minisig is a minisign signature
 * (common/sign.h) by the worker's key whose trusted comment is
 *     rebuild-audit worker record: version V verdict X shard K/N
 *     store <id> head sha256:...
 * Both are written atomically (common/fileio.h), the signature first, so
 * every record file a reader sees has its signature beside it.
 *
 * Import.  A record is imported only when every check passes: it has a
 * signature by one of the given worker keys (key id, signature, trusted
 * comment, which must match the record); it is a worker record of this
 * tool's schema; it was made against this store (store id) and a
 * snapshot head this store's history holds; its version is stored and
 * its pinned artifact, sample digest and policy digest are the ones the
 * version holds now; its exact bytes are not already in the history nor
 * given twice; and no audit of that version against the same snapshot
 * head was imported before or is imported now.  Records are appended
 * in one write transaction, sorted by (version name bytewise, record
 * digest), at the time the audit gives.  Imported records (and their
 * signatures) are then moved into the subdirectory FLEET_IMPORTED_DIR
 * of their directory, so that a worker rerun into the same directory
 * and a second import see only what is new.
 *
 * Two rules keep the history what export and verify need: a record must
 * be consistent by itself (evidence_record_check, the rules export and
 * verify apply: verdict against digests, counts, tolerance,
 * near-threshold rule and sample claim, exit status, who judged), and
 * it must not become its version's latest while an audit of a later
 * state is on record: a record is refused when the history already
 * holds an audit of its version committed after the snapshot head it
 * was made against (history id above the head's), and, of one version's
 * records against different snapshots in one import, only the latest
 * snapshot's is taken.  Such a version counts as covered.
 *
 * Missing versions.  Every version the store holds is expected: a
 * version is covered when it gets a record now or the history already
 * holds an imported record of it against a snapshot head of this
 * import's records (those of DIR and, imported before, DIR/imported).
 * Every other version is listed, with the shard that owns them when
 * the records agree on N and on one snapshot head: the split of the
 * caller's rule over the store's versions, reading the history up to
 * that head (what the workers' snapshot held; a version registered or
 * removed since may move others).  A version whose record was refused
 * is listed too, marked so (fleet_missing.refused; the file named it,
 * read without trusting it): the history holds no audit of it for this
 * snapshot, and a rerun of its shard gives it one once the refused file
 * is set aside (fleet_import_set_aside).
 *
 * Outcome.  worst_verdict and exit_status are those of the run the
 * directories hold: the records imported now and those imported before
 * (DIR/imported/, held by the history byte for byte), 2 for a refusal
 * or a missing version.  An import of a finished directory (no record
 * at its top, every version covered) writes nothing and gives the run's
 * outcome again: importing twice never turns a "no" into a "yes".
 */
#ifndef RBA_FLEET_H
#define RBA_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "common/sign.h"
#include "common/digest.h"
#include "common/rba.h"
#include "store/store.h"

#define FLEET_SHARDS_MAX 65536u
#define FLEET_WORKER_SCHEMA "rebuild-audit/worker/v1"
#define FLEET_COMMENT_PREFIX "rebuild-audit worker record: "
#define FLEET_RECORD_SUFFIX ".json"
#define FLEET_SIG_SUFFIX ".minisig"
#define FLEET_IMPORTED_DIR "imported"
#define FLEET_FILES_MAX 1000000 /* record files one import reads */
#define FLEET_PATH_MAX 4000	 /* bytes in a records directory path */

/* The hash rule's shard (0..n-1) of version name; n >= 1 (asserted). */
uint32_t fleet_shard_of(const char *name, uint32_t n);

enum fleet_split {
	FLEET_SPLIT_BALANCED = 0, /* by expected cost (the default) */
	FLEET_SPLIT_HASH = 1,	  /* by the name's SHA-256 */
};

/*
 * Seconds per cost unit of each kind when no version of the store of
 * that kind has a measured audit, as measured on one core of a 2020s
 * x86-64 (bench/bench-fleet-cost.sh prints the estimates beside the
 * measured audits): networks, gradient-boosted trees (25 times a
 * network's unit: a histogram pass per level; measured again after the
 * histograms were built a row at a time, on a 2-core x86-64 with AVX-512:
 * audits of 300 to 10,000 trees over 1,000 and 30,000 rows took 0.70e-10
 * to 0.94e-10 CPU seconds a unit, by the machine's load, and 1.0e-10 to
 * 1.2e-10 wall seconds at a light load: doc/benchmarks.md),
 * and exec trainers (one unit a version: the sandbox, the export and
 * the user's code), plus the seconds of any audit (verification, the
 * environment record).
 */
#define FLEET_COST_SCALE_DEFAULT 4e-12
#define FLEET_COST_SCALE_TREES 1.0e-10
#define FLEET_COST_SCALE_EXEC 5.0
#define FLEET_COST_BASE 0.05

enum fleet_cost_kind {
	FLEET_COST_NETWORK,	/* logistic regression and MLPs */
	FLEET_COST_TREES,	/* gradient-boosted trees */
	FLEET_COST_EXEC,	/* the user's own trainer */
	FLEET_COST_KINDS
};

/*
 * The audit cost estimate of pins text p (n bytes) whose training
 * snapshot holds data_bytes bytes, in units: data_bytes x epochs x P for
 * a network, where P is 1 for logistic regression and otherwise
 * h1 + h1*h2 + ... + h(L-1)*hL + hL (the weights per input column and
 * between the hidden layers of widths h1..hL); for gradient-boosted
 * trees data_bytes x trees x max_depth + 3000 x trees x 2^max_depth.
 * 0 when the pins do not parse.
 */
double fleet_cost_units(const char *p, size_t n, uint64_t data_bytes);

/*
 * fleet_cost_units with the sample's cases and the kind: trees also
 * count 3000 x trees x 2^max_depth (each node's own work) and 6 x cases
 * x trees x max_depth (scoring the sample), an exec trainer is 1 unit.
 * *kind (may be NULL) gets the kind.
 */
double fleet_cost_units_kind(const char *p, size_t n, uint64_t data_bytes,
			     uint64_t cases, enum fleet_cost_kind *kind);

/*
 * The balanced rule over n versions: cost[i] is the expected cost of
 * the i-th name of names (sorted bytewise, distinct); shard[i] gets its
 * shard (0..nshards-1) and load[0..nshards) (may be NULL) the sum of
 * each shard's costs.  Pure: the same input gives the same split.
 * 0 or RBA_E_NOMEM.
 */
int fleet_assign(char *const *names, const double *cost, size_t n,
		 uint32_t nshards, uint32_t *shard, double *load);

/* A split of every version of a store. */
struct fleet_plan {
	uint32_t nshards;
	enum fleet_split split;
	size_t n;
	char **names;	/* every version, sorted bytewise */
	double *cost;	/* expected seconds (0 each with one shard) */
	unsigned char *measured; /* 1: cost from the history */
	uint32_t *shard;
	double *load;	/* [nshards] */
	double scale;	/* seconds per estimated unit used (networks) */
	double scales[FLEET_COST_KINDS]; /* each kind's */
	char **bad;	/* keys that are no version name (store_version_names) */
	size_t nbad;
};

/* Every history record, for fleet_plan_make's upto. */
#define FLEET_HISTORY_ALL UINT64_MAX

/*
 * The split of s's versions into nshards (1..FLEET_SHARDS_MAX) by rule
 * split, reading the history records with an id up to upto only
 * (FLEET_HISTORY_ALL: all; the import, on the store, sees what the
 * workers' snapshot of head record upto saw).  0; RBA_E_NOMEM; the store's errors (d).  Release *p
 * with fleet_plan_release either way.
 */
int fleet_plan_make(struct store *s, uint32_t nshards, enum fleet_split split,
		    uint64_t upto, struct fleet_plan *p, struct rba_detail *d);
void fleet_plan_release(struct fleet_plan *p);

/*
 * Parses "K/N" (decimal, 0 <= K < N <= FLEET_SHARDS_MAX).  0, or -1
 * when s is not such a pair.
 */
int fleet_shard_parse(const char *s, uint32_t *k, uint32_t *n);

/* What a worker writes with; borrowed for the calls that take it. */
struct fleet_worker {
	const struct sign_seckey *key;
	const char *dir; /* the records directory */
	struct store_snapshot_info snap;
	uint32_t k, n;
};

/*
 * The versions that already have a record in w->dir or its
 * FLEET_IMPORTED_DIR against w->snap (same store and head) whose
 * signature verifies with w->key's public half: a rerun skips them.
 * *names (sorted, each malloc'd, the array too; free with
 * rba_strv_free, common/strv.h) and *n.  A directory that does not exist is empty.
 * 0; RBA_E_NOMEM; an errno reading the directory (d->file).
 */
int fleet_records_done(const struct fleet_worker *w, char ***names,
		       size_t *n, struct rba_detail *d);

/*
 * Writes r's worker record and signature into w->dir (created 0755 if
 * missing), atomically, signature first.  path (cap bytes, may be NULL)
 * gets the record's path.  0; RBA_E_NOMEM; RBA_E_RANGE (a version name
 * a trusted comment cannot hold: CR, LF); ENAMETOOLONG; an errno from
 * writing (d->file).
 */
int fleet_record_write(const struct fleet_worker *w,
		       const struct audit_report *r, char *path, size_t cap,
		       struct rba_detail *d);

/*
 * The versions of shard k of n (n 1: every version) among those s holds,
 * read by name only in one read transaction (store_version_names), so
 * that a damaged record is that version's failure when it is audited and
 * never hides the others.
 */
struct fleet_versions {
	char **names; /* this shard's versions, sorted bytewise */
	size_t n;
	char **bad;   /* keys of the versions database that are no version
		       * name, in store_version_names' printable form; every
		       * shard gets them */
	size_t nbad;
};

/*
 * Fills *out by rule split (fleet_plan_make); 0 < n asserted and k < n.
 * 0; RBA_E_NOMEM; the store's errors (d).  After an error *out holds
 * what was read before it.  Either way the caller releases it with
 * fleet_versions_release.
 */
int fleet_versions_list(struct store *s, uint32_t k, uint32_t n,
			enum fleet_split split, struct fleet_versions *out,
			struct rba_detail *d);
/* Frees what fleet_versions_list filled and zeroes v (NULL ok). */
void fleet_versions_release(struct fleet_versions *v);

/*
 * One version's turn in fleet_audit_run, lent to its callback for the
 * call.
 */
struct fleet_turn {
	const char *name;  /* the version */
	size_t index;	   /* its index in the names of the run */
	int skipped;	   /* a worker's record of it for this snapshot
			    * exists: not audited, nothing below is set */
	int err;	   /* audit_version's status */
	const struct rba_detail *detail;   /* audit_version's detail */
	const struct audit_report *report; /* audit_version's report */
	/* A worker: fleet_record_write's status and detail (0 when the
	 * record was written or none was to be), and the record's path
	 * (NULL when none was written). */
	int write_err;
	const struct rba_detail *write_detail;
	const char *path;
};

/*
 * Audits names[0..n) in turn, each with audit_version under o (NULL:
 * its defaults), and calls fn(ctx, turn) after each.
 *
 * With w NULL each audit is appended to s's history as audit_version
 * does.  As worker w (s opened on w's snapshot, store_snapshot_open):
 * nothing is appended to s (o->no_record is taken as 1); a version that
 * already has its record in w->dir (fleet_records_done) is skipped, its
 * turn saying so; every other report that names its version (all but
 * an unknown version's, RBA_E_NOTFOUND) is written as w's signed record
 * (fleet_record_write), and its recorded member is then 0.
 *
 * An audit's or a record's failure is its turn's, not the run's.
 * Returns 0 after the last turn; fn's value when it is not 0 (the run
 * stops there); the errors of fleet_records_done (d; nothing audited).
 */
int fleet_audit_run(struct store *s, const struct fleet_worker *w,
		    char *const *names, size_t n, const struct audit_options *o,
		    int (*fn)(void *ctx, const struct fleet_turn *t), void *ctx,
		    struct rba_detail *d);

/* One record file an import looked at. */
struct fleet_item {
	char *path;				  /* the .json file */
	char version[STORE_VERSION_NAME_MAX + 1]; /* "" until known */
	char verdict[24];
	int exit_status;
	int accepted;
	int err;	  /* why refused (an RBA_E_* code), 0 if accepted */
	char reason[384]; /* why refused */
	struct rba_digest digest; /* SHA-256 of the file */
	uint64_t head_id;
	struct rba_digest head; /* the snapshot head it was made against */
	uint32_t shard_n;	/* 0 unknown */
	int64_t time;
	uint64_t history_id; /* when accepted */
	int move_err;	     /* an errno moving it to imported/, or 0 */
	char *aside;	     /* refused and set aside: its path in refused/ */
	int aside_err;	     /* an errno setting it aside, or 0 */
	/* private */
	uint8_t *bytes;
	size_t len;
	int parsed;
	int superseded; /* refused: the history holds a later audit of it */
	/* refused: the version the file names, read without trusting it,
	 * so that its version is not also called one without a record */
	char claimed[STORE_VERSION_NAME_MAX + 1];
};

struct fleet_missing {
	char *version;
	uint32_t k, n; /* its shard; n 0 when unknown */
	int refused;   /* a record of it was refused by this import */
};

/* One directory of an import, as given: what it held. */
struct fleet_dir {
	const char *path; /* borrowed from the caller's dirs[i] */
	size_t files;	  /* record files at its top (imported or refused now) */
	size_t earlier;	  /* records of its FLEET_IMPORTED_DIR the history holds */
};

struct fleet_import {
	size_t ndirs;
	struct fleet_dir *dirs; /* in the caller's order: a directory with
				 * files 0 gave nothing to this import */
	size_t nitems;
	struct fleet_item *items; /* sorted as appended */
	size_t nmissing;
	struct fleet_missing *missing; /* sorted by name */
	size_t imported, refused;
	int worst_verdict;    /* enum audit_verdict of the worst import, -1 none */
	int exit_status;      /* worst of: imported exit statuses, 2 for a
			       * refusal or a missing version */
	size_t nheads;	      /* snapshot heads of the records */
	uint64_t head_id;     /* the history head after the import */
	struct rba_digest head;
	/* Records in DIR/imported/ that the history holds byte for byte:
	 * imported before.  Their snapshot heads count as this import's for
	 * the missing versions, so an import of a finished directory
	 * (nitems 0, earlier > 0, nmissing 0) has nothing to do.  The worst
	 * verdict and exit status include the earlier ones' (a rerun's
	 * import, a finished directory imported again): the outcome of the
	 * whole run. */
	size_t earlier;
	int earlier_worst; /* enum audit_verdict, -1 none */
	int earlier_exit;
};

/*
 * Imports the worker records of dirs[0..ndirs) into s (opened for
 * writing) with the worker keys keys[0..nkeys), as described above.
 * im->dirs[i] says what dirs[i] held (its path borrowed: dirs must
 * outlive *im).
 * Refusals are not errors: they are items with accepted 0 and a reason.
 * Returns 0 when the import ran (whatever it refused; *im filled, free it
 * with fleet_import_release); otherwise nothing was written: errno (a
 * directory cannot be read: d->file), RBA_E_LIMIT (more than
 * FLEET_FILES_MAX files), RBA_E_TAMPERED (the history chain is broken),
 * RBA_E_NOMEM, the store's errors.
 */
int fleet_import_run(struct store *s, const char *const *dirs, size_t ndirs,
		     const struct sign_pubkey *keys, size_t nkeys,
		     enum fleet_split split, struct fleet_import *im,
		     struct rba_detail *d);
void fleet_import_release(struct fleet_import *im);

/*
 * Setting refused records aside (`history import --set-aside`), after
 * fleet_import_run: each refused record file is moved into the
 * subdirectory FLEET_REFUSED_DIR of its directory (made 0755 when
 * missing), its signature beside it when it has one, and a note is
 * written there, NAME.json.why: one line, "<UTC time> refused by history
 * import: <reason>\n", the reason by rba_utf8_escape's rule.  Nothing
 * is deleted and nothing is replaced: when NAME.json, its signature or
 * its note is taken there, the record becomes NAME.2.json, NAME.3.json
 * and so on (FLEET_ASIDE_TRIES names at most).  Neither the import nor
 * a worker's rerun reads FLEET_REFUSED_DIR, so the next import of the
 * directory no longer refuses the file again and a rerun audits its
 * version anew.  Each refused item gets aside (its new path) or
 * aside_err (an errno; the file stays where it was, or, when the record
 * moved but its signature or note failed, aside is set too); now is the
 * note's time.  0, or RBA_E_NOMEM.
 */
#define FLEET_REFUSED_DIR "refused"
#define FLEET_NOTE_SUFFIX ".why"
#define FLEET_ASIDE_TRIES 1000
int fleet_import_set_aside(struct fleet_import *im, int64_t now);

/*
 * Pruning the runs of a shared directory (`store snapshot --prune`).
 * A run is an entry of dir, a directory and not a symbolic link, that
 * is a snapshot (it holds STORE_SNAPSHOT_MARKER) or holds one as
 * FLEET_RUN_SNAPSHOT (a run directory of rebuild-audit-fleet-submit,
 * with its records in FLEET_RUN_RECORDS).  The records of a bare
 * snapshot "snapshot-X" are its sibling "records-X", when there is one.
 * Runs are ordered by the time their marker was written (then by name);
 * the keep newest stay.  Never removed: the run the lock
 * FLEET_LOCK_DIR/FLEET_LOCK_OWNER in dir names (line "run=PATH"), and a
 * run whose records directory still holds a record not imported (a
 * .json file at its top).  Removal never follows a symbolic link and
 * gives the owner write permission on each directory before emptying it
 * (a snapshot is read-only), so the runs' non-root owner can remove
 * them.
 */
#define FLEET_RUN_SNAPSHOT "snapshot"
#define FLEET_RUN_RECORDS "records"
#define FLEET_LOCK_DIR "rebuild-audit.lock"
#define FLEET_LOCK_OWNER "owner"

enum fleet_prune_fate {
	FLEET_PRUNE_REMOVED = 0,
	FLEET_PRUNE_NEWEST,	/* among the keep newest */
	FLEET_PRUNE_LOCKED,	/* the lock names it: a run in progress */
	FLEET_PRUNE_UNIMPORTED, /* records not imported */
	FLEET_PRUNE_FAILED,	/* removal failed: err, fail_path */
};

struct fleet_prune_run {
	char *path;	/* dir/NAME */
	char *records;	/* its records directory, NULL if none */
	int64_t made;	/* its marker's mtime (seconds) */
	enum fleet_prune_fate fate;
	size_t unimported; /* with FLEET_PRUNE_UNIMPORTED */
	int err;
	char fail_path[FLEET_PATH_MAX + 600];
};

struct fleet_prune {
	struct fleet_prune_run *runs; /* oldest first */
	size_t n;
	size_t removed;
};

/*
 * Removes the runs of dir beyond the keep newest (keep >= 1), as said
 * above; with dry_run 1 only says which.  0 (a run that could not be
 * removed is FLEET_PRUNE_FAILED, the others still go); RBA_E_NOMEM; an
 * errno reading dir (d).  Release *out with fleet_prune_release.
 */
int fleet_prune_runs(const char *dir, unsigned keep, int dry_run,
		     struct fleet_prune *out, struct rba_detail *d);
void fleet_prune_release(struct fleet_prune *p);

#endif
