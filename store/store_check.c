/*
 * store_check.c - the store's fsck (store.h, "checking").  Walks every
 * database with its own cursor and checks each record through the same
 * verified readers the commands use, so what it calls clean is what
 * they would read; a damaged record is a finding and the walk goes on.
 */
#include "store/store_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a chunk callback stops the sample read with after reporting a
 * finding itself: not a status code. */
#define CHECK_REPORTED 0x43484b44

struct check {
	struct store_txn *txn;
	const struct store_check_hooks *h;
	struct store_check_stats *st;
	int stop; /* the finding callback's value, once nonzero */
	int fatal; /* RBA_E_NOMEM: could not check */
	uint64_t chain_bad; /* the record store_history_verify reported */
};

static int
report(struct check *k, const char *db, const char *key, int err,
       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
report(struct check *k, const char *db, const char *key, int err,
       const char *fmt, ...)
{
	struct store_finding f;
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	k->st->findings++;
	f.db = db;
	f.key = key != NULL ? key : "";
	f.err = err;
	f.reason = reason;
	if (k->h != NULL && k->h->finding != NULL && k->stop == 0)
		k->stop = k->h->finding(k->h->ctx, &f);
	return k->stop;
}

/* A record check's error: a finding, or the end of the check. */
static int
judge(struct check *k, const char *db, const char *key, int rc,
      const struct rba_detail *d)
{
	if (rc == 0)
		return 0;
	if (rc == RBA_E_NOMEM) {
		k->fatal = rc;
		return rc;
	}
	return report(k, db, key, rc, "%s",
		      d->reason[0] ? d->reason : rba_strerror(rc));
}

/* A printable form of a key: text when it is, hex otherwise. */
static void
key_text(const void *p, size_t n, char *out, size_t cap)
{
	const uint8_t *b = p;
	int text = n > 0;
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
		if (b[i] < 0x20 || b[i] > 0x7e)
			text = 0;
	if (text) {
		snprintf(out, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1),
			 (const char *)p);
		return;
	}
	o = (size_t)snprintf(out, cap, "0x");
	for (size_t i = 0; i < n && o + 3 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%02x", b[i]);
}

/*
 * Walks db with a cursor, calling fn for each entry; a cursor error is a
 * finding about the database (its pages), and the count of entries
 * walked must be LMDB's own count.
 */
static int
walk(struct check *k, enum store_db db,
     int (*fn)(struct check *k, const MDB_val *key, const MDB_val *val,
	       void *arg),
     void *arg)
{
	const char *name = store_db_names[db];
	MDB_cursor *cur = NULL;
	MDB_stat ms;
	MDB_val key, val;
	uint64_t n = 0;
	int rc, mrc;

	mrc = mdb_stat(k->txn->t, store_dbi(k->txn, db), &ms);
	if (mrc == 0)
		mrc = mdb_cursor_open(k->txn->t, store_dbi(k->txn, db), &cur);
	if (mrc != 0)
		return report(k, name, "", RBA_E_CORRUPT,
			      "cannot be read: %s", mdb_strerror(mrc));
	k->st->pages += ms.ms_branch_pages + ms.ms_leaf_pages +
			ms.ms_overflow_pages;
	for (mrc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); mrc == 0;
	     mrc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
		n++;
		rc = fn(k, &key, &val, arg);
		if (rc != 0 || k->stop != 0 || k->fatal != 0) {
			mdb_cursor_close(cur);
			return rc;
		}
	}
	mdb_cursor_close(cur);
	if (mrc != MDB_NOTFOUND)
		return report(k, name, "", RBA_E_CORRUPT,
			      "its pages are damaged after %llu entries: %s",
			      (unsigned long long)n, mdb_strerror(mrc));
	if (n != ms.ms_entries)
		return report(k, name, "", RBA_E_CORRUPT,
			      "LMDB counts %llu entries but %llu were walked",
			      (unsigned long long)ms.ms_entries,
			      (unsigned long long)n);
	return 0;
}

/* ---- meta ------------------------------------------------------------ */

static int
meta_one(struct check *k, const MDB_val *key, const MDB_val *val, void *arg)
{
	char name[64];
	int tag = store_meta_known(key, val);

	(void)arg;
	k->st->meta++;
	key_text(key->mv_data, key->mv_size, name, sizeof(name));
	if (tag > 0)
		return 0;
	return report(k, "meta", name, RBA_E_CORRUPT,
		      tag < 0 ? "meta record '%s' is malformed"
			      : "an unknown meta record '%s'", name);
}

static int
check_meta_seal(struct check *k)
{
	struct rba_digest want;
	MDB_val key = {9, "meta_seal"}, val;
	MDB_dbi meta = store_dbi(k->txn, DB_META);
	int rc = mdb_get(k->txn->t, meta, &key, &val);

	if (rc == MDB_NOTFOUND)
		/* Stores made before the seal: nothing to compare with. */
		return 0;
	if (rc == 0)
		rc = store_meta_seal(k->txn->t, meta, &want);
	if (rc != 0)
		return report(k, "meta", "meta_seal", RBA_E_CORRUPT,
			      "the sealed meta records cannot be read: %s",
			      mdb_strerror(rc));
	if (val.mv_size != 2 + RBA_DIGEST_LEN ||
	    memcmp((const uint8_t *)val.mv_data + 2, want.b,
		   RBA_DIGEST_LEN) != 0)
		return report(k, "meta", "meta_seal", RBA_E_TAMPERED,
			      "tampered: the schema, store id or creation "
			      "time does not match the meta seal");
	return 0;
}

/* ---- blobs ----------------------------------------------------------- */

struct blob_walk {
	int has;		  /* a blob record was seen last */
	struct rba_digest digest; /* ... with this digest */
	uint32_t chunks;	  /* ... and chunk count (UINT32_MAX: bad) */
};

static int
discard(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	return 0;
}

static int
blob_one(struct check *k, const MDB_val *key, const MDB_val *val, void *arg)
{
	struct blob_walk *w = arg;
	struct store_blob_info info;
	struct rba_detail d;
	char text[RBA_DIGEST_TEXT_LEN + 16];
	const uint8_t *kp = key->mv_data;
	int rc;

	(void)val;
	if (key->mv_size == BLOB_KEY_LEN) {
		memcpy(w->digest.b, kp, RBA_DIGEST_LEN);
		w->has = 1;
		w->chunks = UINT32_MAX;
		rba_digest_format(&w->digest, text);
		k->st->blobs++;
		rba_detail_clear(&d);
		rc = store_blob_info(k->txn, &w->digest, &info, &d);
		if (rc != 0)
			return judge(k, "blobs", text, rc, &d);
		w->chunks = info.chunks;
		store_blob_info_release(&info);
		rba_detail_clear(&d);
		rc = store_blob_read(k->txn, &w->digest, discard, NULL, &d);
		return judge(k, "blobs", text, rc, &d);
	}
	if (key->mv_size == BLOB_CHUNK_KEY_LEN) {
		uint32_t no = store_get_be32(kp + RBA_DIGEST_LEN);
		struct rba_digest dg;

		memcpy(dg.b, kp, RBA_DIGEST_LEN);
		rba_digest_format(&dg, text);
		k->st->blob_chunks++;
		if (!w->has || !rba_digest_equal(&dg, &w->digest))
			return report(k, "blobs", text, RBA_E_CORRUPT,
				      "chunk %u of a blob that is not stored",
				      no);
		if (w->chunks != UINT32_MAX && no >= w->chunks)
			return report(k, "blobs", text, RBA_E_TAMPERED,
				      "tampered: an extra chunk %u (the blob "
				      "has %u)", no, w->chunks);
		return 0;
	}
	key_text(key->mv_data, key->mv_size, text, sizeof(text));
	if (key->mv_size == BLOB_TMP_KEY_LEN && kp[0] == 0xff &&
	    memcmp(kp + 1, "tmp", 3) == 0)
		return report(k, "blobs", text, RBA_E_CORRUPT,
			      "a chunk of an unfinished blob was committed");
	return report(k, "blobs", text, RBA_E_CORRUPT,
		      "a key of %zu bytes, which no blob record has",
		      key->mv_size);
}

/* ---- versions -------------------------------------------------------- */

static int
blob_ref(struct check *k, const char *version, const struct rba_digest *dg,
	 int kind, const char *what)
{
	struct store_blob_info info;
	struct rba_detail d;
	char text[RBA_DIGEST_TEXT_LEN + 1];
	int rc;

	rba_detail_clear(&d);
	rc = store_blob_info(k->txn, dg, &info, &d);
	if (rc == RBA_E_NOTFOUND) {
		rba_digest_format(dg, text);
		return report(k, "versions", version, RBA_E_NOTFOUND,
			      "the %s %s it names is not in the store", what,
			      text);
	}
	if (rc != 0)
		/* The blob's own damage is reported by the blob walk. */
		return rc == RBA_E_NOMEM ? judge(k, "versions", version, rc, &d)
					 : 0;
	if (info.kind != kind) {
		rba_digest_format(dg, text);
		store_blob_info_release(&info);
		return report(k, "versions", version, RBA_E_CORRUPT,
			      "the %s %s it names is stored as another kind",
			      what, text);
	}
	store_blob_info_release(&info);
	return 0;
}

static int
version_one(struct check *k, const MDB_val *key, const MDB_val *val,
	    void *arg)
{
	struct store_version v;
	struct rba_detail d;
	char name[STORE_VERSION_NAME_MAX + 1];
	int rc;

	(void)val;
	(void)arg;
	k->st->versions++;
	key_text(key->mv_data, key->mv_size, name, sizeof(name));
	if (key->mv_size == 0 || key->mv_size > STORE_VERSION_NAME_MAX ||
	    memchr(key->mv_data, 0, key->mv_size) != NULL)
		return report(k, "versions", name, RBA_E_CORRUPT,
			      "a key that is no version name");
	memcpy(name, key->mv_data, key->mv_size);
	name[key->mv_size] = 0;
	rba_detail_clear(&d);
	rc = store_version_get(k->txn, name, &v, &d);
	if (rc != 0)
		return judge(k, "versions", name, rc, &d);
	rc = blob_ref(k, name, &v.artifact, STORE_BLOB_ARTIFACT, "artifact");
	if (rc == 0)
		rc = blob_ref(k, name, &v.snapshot, STORE_BLOB_SNAPSHOT,
			      "snapshot");
	store_version_release(&v);
	return rc;
}

/* Is version a stored version whose record can be read at all? */
static int
version_exists(struct check *k, const char *version)
{
	MDB_val v;
	struct rba_detail d;
	int rc = store_get(k->txn, DB_VERSIONS, version, strlen(version), &v,
			   &d);

	return rc == 0;
}

/* ---- samples --------------------------------------------------------- */

/* The records of one generation of a version's sample. */
struct gen_tally {
	uint32_t gen;
	int dead;	 /* its dead mark is stored */
	uint64_t chunks; /* SK_CHUNK keys */
	uint64_t cases;	 /* SK_CASE keys */
	uint64_t lists;	 /* SK_LIST keys */
	uint64_t other;	 /* keys of no shape */
};

/* Generations tallied per version: two take turns, and a third is
 * already damage. */
#define GEN_TALLIES 4

/* The entries of one version's part of the samples database. */
struct sample_walk {
	char version[STORE_VERSION_NAME_MAX + 1];
	int active;	 /* version holds the prefix being walked */
	int bad_prefix;	 /* its prefix is no version name */
	uint64_t info;	 /* SK_INFO keys */
	struct gen_tally g[GEN_TALLIES];
	int ng;
	uint64_t other;
};

/* The tally of generation gen, or NULL past GEN_TALLIES. */
static struct gen_tally *
tally(struct sample_walk *w, uint32_t gen)
{
	for (int i = 0; i < w->ng; i++)
		if (w->g[i].gen == gen)
			return &w->g[i];
	if (w->ng == GEN_TALLIES)
		return NULL;
	memset(&w->g[w->ng], 0, sizeof(w->g[0]));
	w->g[w->ng].gen = gen;
	return &w->g[w->ng++];
}

static uint64_t
tally_records(const struct gen_tally *t)
{
	return t->chunks + t->cases + t->lists + t->other;
}

struct case_check {
	struct check *k;
	const char *version;
	uint32_t chunk_no;
	const char **ids; /* the chunk's ids, checked in one call */
	size_t n, cap;
	char **own;
	int nomem;
};

static int
collect_case(void *ectx, const char *id)
{
	struct case_check *c = ectx;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		char **own = realloc(c->own, cap * sizeof(*own));
		if (own == NULL) {
			c->nomem = 1;
			return RBA_E_NOMEM;
		}
		c->own = own;
		c->ids = (const char **)own;
		c->cap = cap;
	}
	c->own[c->n] = strdup(id);
	if (c->own[c->n] == NULL) {
		c->nomem = 1;
		return RBA_E_NOMEM;
	}
	c->n++;
	return 0;
}

static void
cases_clear(struct case_check *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->own[i]);
	c->n = 0;
}

struct chunk_ctx {
	struct check *k;
	const char *version;
	const char *columns;
	struct case_check cc;
	int found; /* a finding was reported inside the read */
};

static int
sample_chunk(void *vctx, uint32_t chunk_no, const uint8_t *p, size_t n)
{
	struct chunk_ctx *x = vctx;
	struct check *k = x->k;
	struct rba_detail d;
	int rc;

	k->st->sample_chunks++;
	if (k->h == NULL || k->h->chunk_cases == NULL)
		return 0;
	cases_clear(&x->cc);
	x->cc.chunk_no = chunk_no;
	rba_detail_clear(&d);
	rc = k->h->chunk_cases(k->h->ctx, x->version, x->columns, chunk_no, p,
			       n, collect_case, &x->cc, &d);
	if (x->cc.nomem)
		return RBA_E_NOMEM;
	if (rc != 0) {
		x->found = 1;
		judge(k, "samples", x->version, rc, &d);
		return CHECK_REPORTED;
	}
	k->st->cases += x->cc.n;
	rba_detail_clear(&d);
	rc = store_sample_index_check(k->txn, x->version, chunk_no,
				      x->cc.ids, x->cc.n, &d);
	if (rc != 0) {
		char key[STORE_VERSION_NAME_MAX + STORE_CASE_ID_MAX + 2];
		snprintf(key, sizeof(key), "%s/%s", x->version, d.key);
		x->found = 1;
		judge(k, "samples", key, rc, &d);
		return CHECK_REPORTED;
	}
	return 0;
}

static int
sample_done(struct check *k, struct sample_walk *w)
{
	struct store_sample_info info;
	struct chunk_ctx x;
	struct rba_detail d;
	struct store_index_sum sum;
	struct gen_tally none, *live;
	int rc;

	memset(&none, 0, sizeof(none));
	memset(&info, 0, sizeof(info));
	if (!w->active)
		return 0;
	w->active = 0;
	if (w->bad_prefix)
		return 0;
	if (!version_exists(k, w->version))
		return report(k, "samples", w->version, RBA_E_NOTFOUND,
			      "a sample of version '%s', which is not stored",
			      w->version);
	rba_detail_clear(&d);
	rc = w->info == 0 ? RBA_E_NOTFOUND
			  : store_sample_info(k->txn, w->version, &info, &d);
	if (rc != 0 && rc != RBA_E_NOTFOUND)
		return judge(k, "samples", w->version, rc, &d);
	/* Every generation but the sample's must be marked dead: what an
	 * unfinished write or a replaced sample left, not yet cleared. */
	live = NULL;
	for (int i = 0; i < w->ng; i++) {
		struct gen_tally *t = &w->g[i];
		if (rc == 0 && t->gen == info.generation) {
			live = t;
		} else if (t->dead) {
			k->st->dead_records += tally_records(t);
			k->st->dead_marks++;
		} else if (w->info != 0 && tally_records(t) != 0) {
			rc = report(k, "samples", w->version, RBA_E_TAMPERED,
				    "tampered: %llu records of generation %u "
				    "of the sample of version '%s', which "
				    "neither its record nor a dead mark names",
				    (unsigned long long)tally_records(t),
				    t->gen, w->version);
			store_sample_info_release(&info);
			return rc;
		} else if (tally_records(t) != 0) {
			w->other++;
		}
	}
	if (w->info == 0 && w->other == 0)
		return 0;
	if (w->info == 0)
		return report(k, "samples", w->version, RBA_E_TAMPERED,
			      "tampered: chunks or index entries of version "
			      "'%s' without a sample record", w->version);
	if (live != NULL && live->dead) {
		rc = report(k, "samples", w->version, RBA_E_TAMPERED,
			    "tampered: the sample of version '%s' is marked "
			    "dead (generation %u)", w->version, live->gen);
		store_sample_info_release(&info);
		return rc;
	}
	if (live == NULL)
		live = &none;
	k->st->samples++;
	k->st->index_entries += live->cases;
	if (live->chunks != info.chunks || live->lists != 1 ||
	    live->other != 0 || w->other != 0) {
		rc = report(k, "samples", w->version, RBA_E_TAMPERED,
			    "tampered: %llu chunk keys and %llu chunk lists "
			    "for a sample of %u chunks",
			    (unsigned long long)live->chunks,
			    (unsigned long long)live->lists, info.chunks);
		store_sample_info_release(&info);
		return rc;
	}
	memset(&x, 0, sizeof(x));
	x.k = k;
	x.version = w->version;
	x.columns = info.columns != NULL ? info.columns : "";
	x.cc.k = k;
	x.cc.version = w->version;
	rba_detail_clear(&d);
	rc = store_sample_read(k->txn, w->version, sample_chunk, &x, &d);
	cases_clear(&x.cc);
	free(x.cc.own);
	store_sample_info_release(&info);
	if (rc == RBA_E_NOMEM) {
		k->fatal = rc;
		return rc;
	}
	if (rc != 0 && !x.found)
		return judge(k, "samples", w->version, rc, &d);
	if (rc != 0)
		return k->stop;
	rba_detail_clear(&d);
	rc = store_sample_index_sum(k->txn, w->version, &sum, &d);
	return judge(k, "samples", w->version, rc, &d);
}

static int
sample_one(struct check *k, const MDB_val *key, const MDB_val *val,
	   void *arg)
{
	struct sample_walk *w = arg;
	const uint8_t *p = key->mv_data;
	size_t vn = key->mv_size > 0 ? p[0] : 0, at;
	char text[2 * SAMPLE_KEY_MAX + 4];
	struct gen_tally *t = NULL;
	uint32_t gen;
	int rc, kind;

	if (key->mv_size < 2 + vn || vn == 0) {
		key_text(key->mv_data, key->mv_size, text, sizeof(text));
		return report(k, "samples", text, RBA_E_CORRUPT,
			      "a key that no sample has");
	}
	if (!w->active || strlen(w->version) != vn ||
	    memcmp(w->version, p + 1, vn) != 0) {
		rc = sample_done(k, w);
		if (rc != 0 || k->stop != 0 || k->fatal != 0)
			return rc;
		memset(w, 0, sizeof(*w));
		w->active = 1;
		memcpy(w->version, p + 1, vn);
		w->version[vn] = 0;
		if (memchr(p + 1, 0, vn) != NULL) {
			w->bad_prefix = 1;
			key_text(p + 1, vn, text, sizeof(text));
			return report(k, "samples", text, RBA_E_CORRUPT,
				      "a key whose version is no name");
		}
	}
	kind = p[1 + vn];
	at = 2 + vn; /* past the kind */
	if (kind == SK_GEN || kind == SK_DEAD) {
		if (key->mv_size < at + 4 + (kind == SK_GEN)) {
			w->other++;
			return 0;
		}
		gen = store_get_be32(p + at);
		if ((t = tally(w, gen)) == NULL) {
			w->other++;
			return 0;
		}
		if (kind == SK_DEAD) {
			if (key->mv_size != at + 4 ||
			    store_sample_dead_mark_check(val) < 0)
				t->other++;
			else
				t->dead = 1;
			return 0;
		}
		kind = p[at + 4];
		at += 5;
		/* Generation 0 has no SK_GEN keys. */
		if (gen == 0 || (kind != SK_CHUNK && kind != SK_CASE &&
				 kind != SK_LIST)) {
			w->other++;
			return 0;
		}
	} else if (kind == SK_CHUNK || kind == SK_CASE || kind == SK_LIST) {
		if ((t = tally(w, 0)) == NULL) {
			w->other++;
			return 0;
		}
	} else if (kind != SK_INFO) {
		w->other++;
		return 0;
	}
	switch (kind) {
	case SK_INFO:
		w->info++;
		if (key->mv_size != at)
			w->other++;
		break;
	case SK_CHUNK:
		t->chunks++;
		if (key->mv_size != at + 4)
			t->other++;
		break;
	case SK_CASE:
		t->cases++;
		break;
	case SK_LIST:
		t->lists++;
		if (key->mv_size != at)
			t->other++;
		break;
	default:
		t->other++;
	}
	return 0;
}

/* ---- history and runs ------------------------------------------------ */

static int
history_one(struct check *k, const MDB_val *key, const MDB_val *val,
	    void *arg)
{
	struct store_history_entry e;
	struct rba_detail d;
	char text[32];
	int rc;

	(void)val;
	(void)arg;
	k->st->history++;
	if (key->mv_size != 8) {
		key_text(key->mv_data, key->mv_size, text, sizeof(text));
		return report(k, "history", text, RBA_E_CORRUPT,
			      "a key that is no record id");
	}
	snprintf(text, sizeof(text), "%llu",
		 (unsigned long long)store_get_be64(key->mv_data));
	rba_detail_clear(&d);
	rc = store_history_get(k->txn, store_get_be64(key->mv_data), &e, &d);
	if (rc != 0 && store_get_be64(key->mv_data) == k->chain_bad)
		return 0; /* reported by the chain check */
	if (rc != 0)
		return judge(k, "history", text, rc, &d);
	if (!version_exists(k, e.version))
		rc = report(k, "history", text, RBA_E_NOTFOUND,
			    "record %s names version '%s', which is not "
			    "stored", text, e.version);
	store_history_entry_release(&e);
	return rc;
}

static int
run_one(struct check *k, const MDB_val *key, const MDB_val *val, void *arg)
{
	struct rba_detail d;
	char id[STORE_RUN_ID_MAX + 1];
	uint8_t *p;
	size_t n;
	int rc;

	(void)val;
	(void)arg;
	k->st->runs++;
	key_text(key->mv_data, key->mv_size, id, sizeof(id));
	if (key->mv_size == 0 || key->mv_size > STORE_RUN_ID_MAX ||
	    memchr(key->mv_data, 0, key->mv_size) != NULL)
		return report(k, "runs", id, RBA_E_CORRUPT,
			      "a key that is no run id");
	memcpy(id, key->mv_data, key->mv_size);
	id[key->mv_size] = 0;
	rba_detail_clear(&d);
	rc = store_run_get(k->txn, id, &p, &n, &d);
	if (rc == 0)
		free(p);
	return judge(k, "runs", id, rc, &d);
}

/* ---- the log ---------------------------------------------------------- */

static int
tlog_finding(void *ctx, const char *key, int err, const char *reason)
{
	struct check *k = ctx;

	return report(k, "tlog", key, err, "%s", reason);
}

/* The log, once the chain holds: a broken chain is reported already. */
static int
check_tlog(struct check *k)
{
	struct rba_detail d;
	int rc;

	if (k->chain_bad != 0)
		return 0;
	rba_detail_clear(&d);
	rc = store_tlog_check(k->txn, tlog_finding, k, &k->st->tlog_kept,
			      &k->st->tlog_hashes, &d);
	if (rc == RBA_E_NOMEM) {
		k->fatal = rc;
		return rc;
	}
	if (rc != 0 && k->stop == 0)
		return judge(k, "tlog", "", rc, &d);
	return rc;
}

/* ---- the whole store ------------------------------------------------- */

int
store_check(struct store_txn *txn, const struct store_check_hooks *h,
	    struct store_check_stats *st, struct rba_detail *d)
{
	struct store_check_stats local;
	struct check k;
	struct blob_walk bw;
	struct sample_walk sw;
	struct rba_detail hd;
	uint64_t bad = 0;
	int rc;

	if (st == NULL)
		st = &local;
	memset(st, 0, sizeof(*st));
	rc = store_txn_check(txn, d);
	if (rc != 0)
		return rc;
	memset(&k, 0, sizeof(k));
	k.txn = txn;
	k.h = h;
	k.st = st;
	memset(&bw, 0, sizeof(bw));
	memset(&sw, 0, sizeof(sw));

	rc = walk(&k, DB_META, meta_one, NULL);
	if (rc == 0 && k.stop == 0 && k.fatal == 0)
		rc = check_meta_seal(&k);
	if (rc == 0 && k.stop == 0 && k.fatal == 0)
		rc = walk(&k, DB_BLOBS, blob_one, &bw);
	if (rc == 0 && k.stop == 0 && k.fatal == 0)
		rc = walk(&k, DB_VERSIONS, version_one, NULL);
	if (rc == 0 && k.stop == 0 && k.fatal == 0)
		rc = walk(&k, DB_SAMPLES, sample_one, &sw);
	if (rc == 0 && k.stop == 0 && k.fatal == 0)
		rc = sample_done(&k, &sw);
	if (rc == 0 && k.stop == 0 && k.fatal == 0) {
		rba_detail_clear(&hd);
		rc = store_history_verify(txn, &bad, NULL, &hd);
		k.chain_bad = rc != 0 ? bad : 0;
		if (rc != 0) {
			char text[32];
			snprintf(text, sizeof(text), "%llu",
				 (unsigned long long)bad);
			rc = judge(&k, "history", bad ? text : "", rc, &hd);
		}
	}
	if (rc == 0 && k.stop == 0 && k.fatal == 0)
		rc = walk(&k, DB_HISTORY, history_one, NULL);
	if (rc == 0 && k.stop == 0 && k.fatal == 0)
		rc = check_tlog(&k);
	if (rc == 0 && k.stop == 0 && k.fatal == 0)
		rc = walk(&k, DB_RUNS, run_one, NULL);
	if (k.fatal != 0)
		return rba_fail(d, k.fatal, NULL, 0, 0,
				"out of memory while checking the store");
	if (k.stop != 0)
		return k.stop;
	return 0;
}
