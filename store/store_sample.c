/* store_sample.c - audit samples: chunks, case index, verified reads. */
#include "store/store_priv.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/seam.h"

struct store_sample_writer {
	struct store_wlink link; /* link.txn: the transaction, or NULL */
	int finished;
	int failed;
	char version[STORE_VERSION_NAME_MAX + 1];
	char *columns;
	int has_policy;
	struct rba_digest policy;
	struct store_zc zc;
	struct store_hashjob hj;
	struct rba_hasher whole; /* the sample digest */
	struct rba_hasher list;	 /* the chunk-list digest */
	struct rba_buf digests;	 /* the chunk digests, for the list record */
	uint64_t cases;
	uint64_t size;
	uint64_t stored;
	uint32_t chunks;
	uint32_t gen;	    /* the generation written */
	uint64_t step;	    /* cases since the last step */
	int has_old;	    /* the sample it replaces, */
	uint32_t old_gen;   /* its generation */
	uint64_t old_cases; /* and size */
};

/* Cases in one step of a long write. */
#define SAMPLE_STEP 65536u
/* Records deleted in one step of a clear. */
#define CLEAR_STEP 65536u
/* Records deleted, or cases written, between two drops of the map's
 * resident pages (a power of two). */
#define MAP_DROP_EVERY 4096u

static int
sample_tampered(struct rba_detail *d, const char *version, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));

static int
sample_tampered(struct rba_detail *d, const char *version, const char *fmt,
		...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	rba_detail_key(d, version);
	return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
			"tampered: sample of version '%s' %s", version, what);
}

/* ---- the sample record ----------------------------------------------- */

static void
info_encode(struct rba_buf *b, const char *version,
	    const struct store_sample_info *s, const struct rba_digest *list)
{
	static const struct rba_digest zero;

	store_rec_start(b, TAG_SAMPLE_INFO);
	rba_buf_put_str(b, version);
	rba_buf_put_u64(b, s->cases);
	rba_buf_put_u32(b, s->chunks);
	rba_buf_put_u64(b, s->size);
	rba_buf_put_u64(b, s->stored_size);
	rba_buf_put(b, s->digest.b, RBA_DIGEST_LEN);
	rba_buf_put(b, list->b, RBA_DIGEST_LEN);
	rba_buf_put_u8(b, s->has_policy ? 1 : 0);
	rba_buf_put(b, (s->has_policy ? &s->policy_digest : &zero)->b,
		    RBA_DIGEST_LEN);
	rba_buf_put_u64(b, (uint64_t)s->added);
	rba_buf_put_str(b, s->columns != NULL ? s->columns : "");
	/* Generation 0 writes what every earlier version of the tool
	 * wrote. */
	if (s->generation != 0)
		rba_buf_put_u32(b, s->generation);
	store_rec_seal(b);
}

/* Reads the sample record of version; *list gets its chunk-list digest. */
static int
info_load(struct store_txn *txn, const char *version,
	  struct store_sample_info *s, struct rba_digest *list,
	  struct rba_detail *d)
{
	uint8_t key[SAMPLE_KEY_MAX];
	struct rba_cursor c;
	const uint8_t *dg, *ld, *pd;
	const char *ver;
	size_t klen, vlen;
	MDB_val v;
	int rc, gen_zero = 0;

	memset(s, 0, sizeof(*s));
	rc = store_txn_check(txn, d);
	if (rc == 0)
		rc = store_name_check(version, STORE_VERSION_NAME_MAX,
				      "version name", d);
	if (rc != 0)
		return rc;
	klen = store_sample_key(version, 0, SK_INFO, 0, NULL, key);
	rc = store_get(txn, DB_SAMPLES, key, klen, &v, d);
	if (rc == RBA_E_NOTFOUND)
		rc = rba_fail(d, rc, NULL, 0, 0, "version '%s' has no sample",
			      version);
	if (rc == 0)
		rc = store_rec_open_sealed(&v, TAG_SAMPLE_INFO, &c,
					   "sample record", d);
	if (rc != 0)
		goto fail;
	ver = rba_cursor_lstr(&c, STORE_VERSION_NAME_MAX, &vlen);
	s->cases = rba_cursor_u64(&c);
	s->chunks = rba_cursor_u32(&c);
	s->size = rba_cursor_u64(&c);
	s->stored_size = rba_cursor_u64(&c);
	dg = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	ld = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	s->has_policy = rba_cursor_u8(&c);
	pd = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	s->added = (int64_t)rba_cursor_u64(&c);
	s->columns = store_cursor_cstr(&c, STORE_TEXT_MAX);
	/* Generation 0 is written without the field. */
	if (rba_cursor_ok(&c) && c.left == 4)
		gen_zero = (s->generation = rba_cursor_u32(&c)) == 0;
	if (!rba_cursor_ok(&c) || c.left != 0 || gen_zero || s->has_policy > 1 ||
	    vlen != strlen(version) || memcmp(ver, version, vlen) != 0) {
		rc = rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
			      "sample record: malformed");
		goto fail;
	}
	memcpy(s->digest.b, dg, RBA_DIGEST_LEN);
	memcpy(s->policy_digest.b, pd, RBA_DIGEST_LEN);
	if (list != NULL)
		memcpy(list->b, ld, RBA_DIGEST_LEN);
	return 0;
fail:
	rba_detail_key(d, version);
	store_sample_info_release(s);
	return rc;
}

int
store_sample_info(struct store_txn *txn, const char *version,
		  struct store_sample_info *info, struct rba_detail *d)
{
	return info_load(txn, version, info, NULL, d);
}

void
store_sample_info_release(struct store_sample_info *info)
{
	if (info == NULL)
		return;
	free(info->columns);
	memset(info, 0, sizeof(*info));
}

/* ---- deleting -------------------------------------------------------- */

/*
 * Deletes at most limit records whose keys start with prefix[0..plen);
 * *n gets how many.  Stops early when none is left.
 */
static int
prefix_delete(struct store_txn *txn, const uint8_t *prefix, size_t plen,
	      uint64_t limit, uint64_t *n, struct rba_detail *d)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint32_t weight = 0;
	int mrc;

	*n = 0;
	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_SAMPLES), &cur);
	if (mrc != 0)
		return store_txn_fail(txn, d,
				      store_mdb_fail(d, mrc, "deleting a sample"));
	k.mv_data = (void *)prefix;
	k.mv_size = plen;
	mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	while (mrc == 0 && *n < limit && k.mv_size >= plen &&
	       memcmp(k.mv_data, prefix, plen) == 0) {
		/* Each deletion reads its leaf (a chunk's first overflow
		 * page too), and the kernel maps the pages around each
		 * fault: let them go as the walk moves on. */
		weight += v.mv_size > 2048 ? MAP_DROP_EVERY / 8 : 1;
		mrc = mdb_cursor_del(cur, 0);
		if (mrc != 0)
			break;
		(*n)++;
		if (weight >= MAP_DROP_EVERY) {
			store_txn_map_drop(txn);
			weight = 0;
		}
		/* Seek again rather than rely on where a delete leaves the
		 * cursor. */
		k.mv_data = (void *)prefix;
		k.mv_size = plen;
		mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	}
	mdb_cursor_close(cur);
	if (mrc != 0 && mrc != MDB_NOTFOUND)
		return store_txn_fail(txn, d,
				      store_mdb_fail(d, mrc, "deleting a sample"));
	return 0;
}

/* Deletes every record of version's sample, marks included; *n gets
 * how many. */
static int
delete_all(struct store_txn *txn, const char *version, uint64_t *n,
	   struct rba_detail *d)
{
	uint8_t prefix[SAMPLE_KEY_MAX];
	size_t plen = store_sample_key(version, 0, SK_INFO, 0, NULL, prefix) - 1;

	return prefix_delete(txn, prefix, plen, UINT64_MAX, n, d);
}

/*
 * Deletes the records of generation gen of version's sample, in steps
 * of at most CLEAR_STEP records when step is set (each committed with
 * store_txn_checkpoint), else in txn; *n gets how many.
 */
static int
gen_delete(struct store_txn *txn, const char *version, uint32_t gen,
	   int step, uint64_t *n, struct rba_detail *d)
{
	uint8_t key[3][SAMPLE_KEY_MAX];
	size_t len[3];
	int np = store_sample_gen_prefixes(version, gen, key, len), rc = 0;

	*n = 0;
	for (int i = 0; rc == 0 && i < np; i++) {
		uint64_t got;
		do {
			rc = prefix_delete(txn, key[i], len[i],
					   step ? CLEAR_STEP : UINT64_MAX, &got, d);
			*n += got;
			if (rc == 0 && step && got > 0)
				rc = store_txn_checkpoint(txn, d);
		} while (rc == 0 && step && got == CLEAR_STEP);
	}
	return rc;
}

int
store_sample_delete(struct store_txn *txn, const char *version,
		    struct rba_detail *d)
{
	uint64_t n;
	int rc = store_txn_writable(txn, d);

	if (rc == 0)
		rc = store_name_check(version, STORE_VERSION_NAME_MAX,
				      "version name", d);
	if (rc == 0)
		rc = delete_all(txn, version, &n, d);
	if (rc == 0 && n == 0) {
		rba_detail_key(d, version);
		rc = rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
			      "version '%s' has no sample", version);
	}
	return rc;
}

/* ---- marks of dead generations ---------------------------------------- */

enum { DEAD_UNFINISHED = 1, DEAD_REPLACED = 2 };

static int
dead_mark_put(struct store_txn *txn, const char *version, uint32_t gen,
	      int why, struct rba_detail *d)
{
	uint8_t key[SAMPLE_KEY_MAX];
	size_t klen = store_sample_key(version, gen, SK_DEAD, 0, NULL, key);
	struct rba_buf b;
	int rc;

	rba_buf_init(&b);
	store_rec_start(&b, TAG_SAMPLE_DEAD);
	rba_buf_put_u8(&b, (uint8_t)why);
	rba_buf_put_u64(&b, (uint64_t)store_now());
	store_rec_seal(&b);
	rc = rba_buf_status(&b);
	if (rc == 0)
		rc = store_put(txn, DB_SAMPLES, key, klen, b.p, b.len, 0,
			       "marking a sample generation dead", d);
	rba_buf_release(&b);
	return rc;
}

int
store_sample_dead_mark_check(const MDB_val *v)
{
	struct rba_cursor c;
	struct rba_detail d;
	uint8_t why;

	if (store_rec_open_sealed(v, TAG_SAMPLE_DEAD, &c, "dead mark", &d) != 0)
		return -1;
	why = rba_cursor_u8(&c);
	(void)rba_cursor_u64(&c);
	if (!rba_cursor_ok(&c) || c.left != 0 ||
	    (why != DEAD_UNFINISHED && why != DEAD_REPLACED))
		return -1;
	return why;
}

/* Is any record of generation gen of version's sample, or its mark,
 * stored?  0 when none; RBA_E_CORRUPT naming what is. */
static int
gen_free(struct store_txn *txn, const char *version, uint32_t gen,
	 struct rba_detail *d)
{
	uint8_t key[3][SAMPLE_KEY_MAX], mk[SAMPLE_KEY_MAX];
	size_t len[3], mlen = store_sample_key(version, gen, SK_DEAD, 0, NULL, mk);
	int np = store_sample_gen_prefixes(version, gen, key, len), mrc;
	int found = 0;
	MDB_cursor *cur = NULL;
	MDB_val k, v;

	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_SAMPLES), &cur);
	if (mrc != 0)
		cur = NULL;
	for (int i = 0; mrc == 0 && i < np && !found; i++) {
		k.mv_data = key[i];
		k.mv_size = len[i];
		mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		found = mrc == 0 && k.mv_size >= len[i] &&
			memcmp(k.mv_data, key[i], len[i]) == 0;
		if (mrc == MDB_NOTFOUND)
			mrc = 0;
	}
	if (mrc == 0) {
		k.mv_data = mk;
		k.mv_size = mlen;
		mrc = mdb_get(txn->t, store_dbi(txn, DB_SAMPLES), &k, &v);
		found |= mrc == 0;
		if (mrc == MDB_NOTFOUND)
			mrc = 0;
	}
	if (cur != NULL)
		mdb_cursor_close(cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading a sample");
	if (!found)
		return 0;
	rba_detail_key(d, version);
	return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
			"records of an earlier sample of version '%s' are still "
			"stored (generation %u): `store check` names them",
			version, gen);
}

/* The names of every stored version (*out and each name malloc'd). */
static int
version_names(struct store_txn *txn, char ***out, size_t *n,
	      struct rba_detail *d)
{
	MDB_cursor *cur;
	MDB_val k, v;
	char **names = NULL;
	size_t cap = 0;
	int mrc;

	*out = NULL;
	*n = 0;
	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_VERSIONS), &cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "listing versions");
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size == 0 || k.mv_size > STORE_VERSION_NAME_MAX ||
		    memchr(k.mv_data, 0, k.mv_size) != NULL)
			continue; /* store check's to report */
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (nn == NULL)
				break;
			names = nn;
			cap = nc;
		}
		if ((names[*n] = strndup(k.mv_data, k.mv_size)) == NULL)
			break;
		(*n)++;
	}
	mdb_cursor_close(cur);
	*out = names;
	if (mrc != MDB_NOTFOUND && mrc != 0)
		return store_mdb_fail(d, mrc, "listing versions");
	return mrc == 0 ? RBA_E_NOMEM : 0;
}

/*
 * The first dead mark of version's sample: 1 with *gen its generation,
 * 0 when it has none, or an error (< 0).
 */
static int
first_mark(struct store_txn *txn, const char *version, uint32_t *gen,
	   struct rba_detail *d)
{
	uint8_t mk[SAMPLE_KEY_MAX];
	size_t plen = store_sample_key(version, 0, SK_DEAD, 0, NULL, mk) - 4;
	MDB_cursor *cur;
	MDB_val k, v;
	int mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_SAMPLES), &cur);

	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading a sample");
	k.mv_data = mk;
	k.mv_size = plen;
	mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (mrc == 0 && k.mv_size == plen + 4 && memcmp(k.mv_data, mk, plen) == 0)
		*gen = store_get_be32((const uint8_t *)k.mv_data + plen);
	else if (mrc == 0)
		mrc = MDB_NOTFOUND;
	mdb_cursor_close(cur);
	if (mrc == MDB_NOTFOUND)
		return 0;
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading a sample");
	return 1;
}

/*
 * Clears the dead generations of one version's sample in txn, in steps.
 * A mark naming the generation its sample record holds is damage, not
 * something to clear.
 */
static int
clear_version(struct store_txn *txn, const char *version, uint64_t *cleared,
	      uint64_t *marks, struct rba_detail *d)
{
	uint8_t mk[SAMPLE_KEY_MAX];
	size_t plen = store_sample_key(version, 0, SK_DEAD, 0, NULL, mk) - 4;
	struct store_sample_info info;
	struct rba_detail scratch;
	int rc, live;

	for (;;) {
		uint32_t gen;
		uint64_t n;

		if ((rc = first_mark(txn, version, &gen, d)) <= 0)
			return rc;
		live = info_load(txn, version, &info, NULL, &scratch) == 0 &&
		       info.generation == gen;
		store_sample_info_release(&info);
		if (live)
			return sample_tampered(d, version, "is marked dead "
					       "(generation %u)", gen);
		if ((rc = gen_delete(txn, version, gen, 1, &n, d)) != 0)
			return rc;
		*cleared += n;
		/* The records first, then the mark: a crash in between
		 * leaves the mark for the next clear. */
		store_be32(mk + plen, gen);
		rc = store_del(txn, DB_SAMPLES, mk, plen + 4, "clearing a sample", d);
		if (rc != 0)
			return rc;
		(*marks)++;
	}
}

int
store_sample_clear(struct store *s, const char *version, uint64_t *cleared,
		   struct rba_detail *d)
{
	struct store_txn *txn;
	char **names = NULL;
	uint64_t marks = 0;
	size_t n = 0, keep = 0;
	int rc;

	*cleared = 0;
	if (version != NULL &&
	    (rc = store_name_check(version, STORE_VERSION_NAME_MAX,
				   "version name", d)) != 0)
		return rc;
	/* Which versions have marks, read first: with none, nothing is
	 * written and the write lock is not taken. */
	if ((rc = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return rc;
	if (version == NULL) {
		rc = version_names(txn, &names, &n, d);
	} else if ((names = calloc(1, sizeof(*names))) == NULL ||
		   (names[0] = strdup(version)) == NULL) {
		rc = RBA_E_NOMEM;
	} else {
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t gen;
		int m = rc == 0 ? first_mark(txn, names[i], &gen, d) : 0;
		if (m < 0)
			rc = m;
		if (m > 0)
			names[keep++] = names[i];
		else
			free(names[i]);
	}
	n = keep;
	store_txn_abort(txn);
	if (rc == 0 && n > 0 && (rc = store_txn_begin(s, 1, 0, &txn, d)) == 0) {
		/* What this process read of the map before stays out of
		 * the steps' memory. */
		store_txn_map_drop(txn);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			rc = clear_version(txn, names[i], cleared, &marks, d);
			/* Clearing for every version skips a damaged one
			 * (store check names it). */
			if (rc == RBA_E_TAMPERED && version == NULL)
				rc = 0;
		}
	} else {
		txn = NULL;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	/* Nothing to clear writes nothing (not even a transaction id). */
	if (rc != 0 || marks == 0) {
		store_txn_abort(txn);
		return rc;
	}
	return store_txn_commit(txn, d);
}

/* ---- the writer ------------------------------------------------------ */

int
store_sample_begin(struct store_txn *txn, const char *version,
		   const char *columns, const struct rba_digest *policy_digest,
		   struct store_sample_writer **out, struct rba_detail *d)
{
	struct store_sample_writer *w;
	struct store_sample_info old;
	struct rba_detail scratch;
	MDB_val v;
	uint64_t n;
	size_t cn;
	int rc = store_txn_writable(txn, d), has_old = 0;
	uint32_t old_gen = 0, gen;
	uint64_t old_cases = 0;

	*out = NULL;
	if (rc == 0)
		rc = store_name_check(version, STORE_VERSION_NAME_MAX,
				      "version name", d);
	if (rc != 0)
		return rc;
	if (columns == NULL)
		columns = "";
	cn = strlen(columns);
	if (cn > STORE_TEXT_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"sample columns are %zu bytes, more than %u", cn,
				STORE_TEXT_MAX);
	rc = store_get(txn, DB_VERSIONS, version, strlen(version), &v, d);
	if (rc == RBA_E_NOTFOUND) {
		rba_detail_key(d, version);
		return rba_fail(d, rc, NULL, 0, 0, "no version '%s'", version);
	}
	if (rc != 0)
		return rc;
	rc = info_load(txn, version, &old, NULL, &scratch);
	if (rc == 0) {
		/* The old sample stays until finish names the new one. */
		has_old = 1;
		old_gen = old.generation;
		old_cases = old.cases;
		store_sample_info_release(&old);
	} else if (rc == RBA_E_CORRUPT || rc == RBA_E_TAMPERED) {
		/* A damaged sample goes whole, in this transaction (abort
		 * brings it back). */
		rc = delete_all(txn, version, &n, d);
	} else if (rc == RBA_E_NOTFOUND) {
		rc = 0;
	}
	/* Generations 0 and 1 take turns: the new sample is written beside
	 * the old one, where nothing may be yet.  Checked before the
	 * writer's first put, so the refusal leaves txn usable. */
	gen = has_old && old_gen == 0 ? 1 : 0;
	if (rc != 0 || (rc = gen_free(txn, version, gen, d)) != 0)
		return rc;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return RBA_E_NOMEM;
	w->gen = gen;
	w->has_old = has_old;
	w->old_gen = old_gen;
	w->old_cases = old_cases;
	/* Until finish, the new records are no sample's: a crash after a
	 * step leaves them marked. */
	rc = dead_mark_put(txn, version, w->gen, DEAD_UNFINISHED, d);
	if (rc == 0)
		rc = (w->columns = strdup(columns)) == NULL ? RBA_E_NOMEM
							    : store_zc_init(&w->zc, d);
	if (rc != 0) {
		free(w->columns);
		free(w);
		return store_txn_fail(txn, d, rc);
	}
	snprintf(w->version, sizeof(w->version), "%s", version);
	if (policy_digest != NULL) {
		w->has_policy = 1;
		w->policy = *policy_digest;
	}
	rba_hasher_init(&w->whole);
	rba_hasher_init(&w->list);
	rba_buf_init(&w->digests);
	rba_buf_put_u8(&w->digests, TAG_SAMPLE_LIST);
	rba_buf_put_u8(&w->digests, STORE_FORMAT);
	store_hashjob_init(&w->hj);
	store_txn_link(txn, &w->link);
	*out = w;
	return 0;
}

static int
sample_writer_live(struct store_sample_writer *w, struct rba_detail *d)
{
	if (w == NULL || w->link.txn == NULL)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"the sample writer's transaction has ended");
	if (w->finished || w->failed)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				w->finished ? "the sample is finished"
					    : "the sample writer failed");
	return store_txn_check(w->link.txn, d);
}

static int
writer_fail(struct store_sample_writer *w, struct rba_detail *d, int rc)
{
	w->failed = 1;
	return store_txn_fail(w->link.txn, d, rc);
}

int
store_sample_set_columns(struct store_sample_writer *w, const char *columns,
			 struct rba_detail *d)
{
	size_t cn;
	char *c;
	int rc = sample_writer_live(w, d);

	if (rc != 0)
		return rc;
	if (columns == NULL)
		columns = "";
	cn = strlen(columns);
	if (cn > STORE_TEXT_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"sample columns are %zu bytes, more than %u", cn,
				STORE_TEXT_MAX);
	if ((c = strdup(columns)) == NULL)
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "out of memory");
	free(w->columns);
	w->columns = c;
	return 0;
}

int
store_sample_add_chunk(struct store_sample_writer *w, const void *p,
		       size_t n, const char *const *case_ids, size_t ncases,
		       struct rba_detail *d)
{
	struct rba_digest cd;
	uint8_t key[SAMPLE_KEY_MAX], val[6];
	size_t klen, len;
	int rc = sample_writer_live(w, d);

	if (rc != 0)
		return rc;
	if (p == NULL || n == 0)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "empty sample chunk");
	if (n > STORE_CHUNK_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"sample chunk of %zu bytes, more than %u", n,
				STORE_CHUNK_MAX);
	if (ncases > UINT32_MAX || (ncases > 0 && case_ids == NULL))
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"bad case id list");
	for (size_t i = 0; i < ncases; i++) {
		rc = store_name_check(case_ids[i], STORE_CASE_ID_MAX, "case id",
				      d);
		if (rc != 0)
			return rc;
	}
	if (w->chunks == UINT32_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"sample has too many chunks");
	/* Fed to the sample digest now: any failure below fails the
	 * writer, so it never finishes with these bytes counted. */
	store_hashjob_start(&w->hj, &w->whole, p, n);
	rc = store_chunk_encode(&w->zc, TAG_SAMPLE_CHUNK, p, n,
				(uint32_t)ncases, &cd, &len, d);
	store_hashjob_wait(&w->hj);
	if (rc != 0)
		return writer_fail(w, d, rc);
	klen = store_sample_key(w->version, w->gen, SK_CHUNK, w->chunks, NULL,
				key);
	rc = store_put(w->link.txn, DB_SAMPLES, key, klen, w->zc.out, len, 0,
		       "storing a sample chunk", d);
	if (rc != 0)
		return writer_fail(w, d, rc);
	val[0] = TAG_SAMPLE_CASE;
	val[1] = STORE_FORMAT;
	rba_put_u32le(val + 2, w->chunks);
	for (size_t i = 0; i < ncases; i++) {
		klen = store_sample_key(w->version, w->gen, SK_CASE, 0,
					case_ids[i], key);
		rc = store_put(w->link.txn, DB_SAMPLES, key, klen, val,
			       sizeof(val), MDB_NOOVERWRITE,
			       "indexing a case", d);
		if (rc == RBA_E_EXISTS) {
			rba_detail_key(d, case_ids[i]);
			rc = rba_fail(d, rc, NULL, 0, 0,
				      "case id '%s' appears twice in the "
				      "sample of version '%s'",
				      case_ids[i], w->version);
		}
		if (rc != 0)
			return writer_fail(w, d, rc);
	}
	rba_hasher_update(&w->list, cd.b, RBA_DIGEST_LEN);
	rba_buf_put(&w->digests, cd.b, RBA_DIGEST_LEN);
	if (rba_buf_status(&w->digests) != 0)
		return writer_fail(w, d, RBA_E_NOMEM);
	w->chunks++;
	w->cases += ncases;
	w->size += n;
	w->stored += len;
	/* LMDB holds every page a transaction dirties until it commits:
	 * past a step's worth of cases, commit what is written (still
	 * marked dead) and go on. */
	w->step += ncases;
	if (w->step >= SAMPLE_STEP) {
		w->step = 0;
		if ((rc = store_txn_checkpoint(w->link.txn, d)) != 0)
			return writer_fail(w, d, rc);
	} else if (ncases >= MAP_DROP_EVERY) {
		store_txn_map_drop(w->link.txn);
	}
	return 0;
}

int
store_sample_finish(struct store_sample_writer *w, struct rba_digest *digest,
		    struct rba_detail *d)
{
	struct store_sample_info s;
	struct rba_digest list;
	struct rba_buf b;
	uint8_t key[SAMPLE_KEY_MAX];
	uint64_t n;
	size_t klen;
	int rc = sample_writer_live(w, d);

	if (rc != 0)
		return rc;
	memset(&s, 0, sizeof(s));
	s.cases = w->cases;
	s.chunks = w->chunks;
	s.size = w->size;
	s.stored_size = w->stored;
	rba_hasher_final(&w->whole, &s.digest);
	rba_hasher_final(&w->list, &list);
	s.has_policy = w->has_policy;
	s.policy_digest = w->policy;
	s.added = store_now();
	s.columns = w->columns;
	s.generation = w->gen;
	rba_buf_init(&b);
	info_encode(&b, w->version, &s, &list);
	rc = rba_buf_status(&b);
	klen = store_sample_key(w->version, 0, SK_INFO, 0, NULL, key);
	if (rc == 0)
		rc = store_put(w->link.txn, DB_SAMPLES, key, klen, b.p, b.len,
			       0, "storing the sample record", d);
	rba_buf_release(&b);
	klen = store_sample_key(w->version, w->gen, SK_LIST, 0, NULL, key);
	if (rc == 0)
		rc = store_put(w->link.txn, DB_SAMPLES, key, klen, w->digests.p,
			       w->digests.len, 0, "storing the sample's chunk list", d);
	/* The new generation is the sample's now; the old one is deleted
	 * here when small, else marked dead for store_sample_clear. */
	klen = store_sample_key(w->version, w->gen, SK_DEAD, 0, NULL, key);
	if (rc == 0)
		rc = store_del(w->link.txn, DB_SAMPLES, key, klen,
			       "removing the mark of the unfinished sample", d);
	if (rc == RBA_E_NOTFOUND)
		rc = sample_tampered(d, w->version, "lost the mark of its "
				     "unfinished write");
	if (rc == 0 && w->has_old && w->old_cases <= SAMPLE_STEP)
		rc = gen_delete(w->link.txn, w->version, w->old_gen, 0, &n, d);
	else if (rc == 0 && w->has_old)
		rc = dead_mark_put(w->link.txn, w->version, w->old_gen,
				   DEAD_REPLACED, d);
	if (rc != 0)
		return writer_fail(w, d, rc);
	w->finished = 1;
	if (digest != NULL)
		*digest = s.digest;
	return 0;
}

void
store_sample_writer_free(struct store_sample_writer *w)
{
	if (w == NULL)
		return;
	if (w->link.txn != NULL && !w->finished) {
		struct rba_detail d;
		rba_fail(&d, RBA_E_USAGE, NULL, 0, 0,
			 "the sample of version '%s' was left unfinished",
			 w->version);
		store_txn_fail(w->link.txn, &d, RBA_E_USAGE);
	}
	store_txn_unlink(&w->link);
	store_hashjob_release(&w->hj);
	store_zc_release(&w->zc);
	rba_buf_release(&w->digests);
	free(w->columns);
	free(w);
}

/* ---- reading --------------------------------------------------------- */

/* Gets and splits chunk i of version's sample (its seal unchecked when
 * unsealed: the caller checks it, store_chunk_seal_ok). */
static int
chunk_get_as(struct store_txn *txn, const char *version, uint32_t gen,
	     uint32_t i, uint32_t nchunks, struct store_chunk *c, int unsealed,
	     struct rba_detail *d)
{
	uint8_t key[SAMPLE_KEY_MAX];
	size_t klen = store_sample_key(version, gen, SK_CHUNK, i, NULL, key);
	MDB_val v;
	int rc = store_get(txn, DB_SAMPLES, key, klen, &v, d);

	if (rc == RBA_E_NOTFOUND)
		return sample_tampered(d, version, "chunk %u of %u is missing",
				       i, nchunks);
	if (rc != 0)
		return rc;
	if ((unsealed ? store_chunk_split_unsealed(&v, TAG_SAMPLE_CHUNK, c)
		      : store_chunk_split(&v, TAG_SAMPLE_CHUNK, c)) != 0)
		return sample_tampered(d, version, "chunk %u is malformed", i);
	return 0;
}

static int
chunk_get(struct store_txn *txn, const char *version, uint32_t gen,
	  uint32_t i, uint32_t nchunks, struct store_chunk *c,
	  struct rba_detail *d)
{
	return chunk_get_as(txn, version, gen, i, nchunks, c, 0, d);
}

/* Is there a chunk numbered past the recorded count? */
static int
extra_chunk(struct store_txn *txn, const char *version, uint32_t gen,
	    uint32_t nchunks, struct rba_detail *d)
{
	uint8_t key[SAMPLE_KEY_MAX];
	size_t klen = store_sample_key(version, gen, SK_CHUNK, nchunks, NULL,
				       key);
	MDB_val v;
	int rc = store_get(txn, DB_SAMPLES, key, klen, &v, d);

	if (rc == 0)
		return sample_tampered(d, version, "has an extra chunk %u",
				       nchunks);
	return rc == RBA_E_NOTFOUND ? 0 : rc;
}

/*
 * The chunk-list record of version: nchunks digests that hash to list.
 * 0 with *digests pointing at them (valid for the transaction).
 */
static int
list_record_check(struct store_txn *txn, const char *version, uint32_t gen,
		  uint32_t nchunks, const struct rba_digest *list,
		  const uint8_t **digests, struct rba_detail *d)
{
	uint8_t key[SAMPLE_KEY_MAX];
	size_t klen = store_sample_key(version, gen, SK_LIST, 0, NULL, key);
	const uint8_t *p;
	struct rba_digest got;
	MDB_val v;
	int rc = store_get(txn, DB_SAMPLES, key, klen, &v, d);

	if (rc == RBA_E_NOTFOUND)
		return sample_tampered(d, version, "has no chunk list");
	if (rc != 0)
		return rc;
	p = v.mv_data;
	if (v.mv_size != 2 + (size_t)nchunks * RBA_DIGEST_LEN ||
	    p[0] != TAG_SAMPLE_LIST || p[1] != STORE_FORMAT)
		return sample_tampered(d, version, "has a malformed chunk list");
	rba_digest_bytes(p + 2, v.mv_size - 2, &got);
	if (!rba_digest_equal(&got, list))
		return sample_tampered(d, version,
				       "chunk digests do not match its record");
	*digests = p + 2;
	return 0;
}

/*
 * The checks after every chunk was read: no chunk past the last, the
 * counts, the chunk list (its digest, then the list record), then the
 * content's digest (whole_ok: it matched).
 */
static int
sample_read_end(struct store_txn *txn, const char *version,
		const struct store_sample_info *s, const struct rba_digest *list,
		const struct rba_digest *list_got, uint64_t cases,
		uint64_t size, int whole_ok, struct rba_detail *d)
{
	const uint8_t *digests;
	int rc = extra_chunk(txn, version, s->generation, s->chunks, d);

	if (rc != 0)
		return rc;
	if (cases != s->cases || size != s->size)
		return sample_tampered(d, version,
				       "holds %llu cases in %llu bytes where the "
				       "record says %llu in %llu",
				       (unsigned long long)cases,
				       (unsigned long long)size,
				       (unsigned long long)s->cases,
				       (unsigned long long)s->size);
	if (!rba_digest_equal(list_got, list))
		return sample_tampered(d, version,
				       "chunk digests do not match its record");
	/* The list record (what a one-chunk read checks against) must be
	 * the list of the chunks just read. */
	rc = list_record_check(txn, version, s->generation, s->chunks, list,
			       &digests, d);
	if (rc != 0)
		return rc;
	if (!whole_ok)
		return sample_tampered(d, version,
				       "content does not match its digest");
	return 0;
}

/*
 * Chunks 0..upto read again, each checked against its own digest as
 * store_sample_read checks it: the first that fails is reported as
 * store_sample_read reports it; 0 when every one holds.
 */
static int
sample_locate(struct store_txn *txn, const char *version,
	      const struct store_sample_info *s, uint32_t upto,
	      struct rba_detail *d)
{
	ZSTD_DCtx *dctx = store_dctx_new();
	uint8_t *out = malloc(STORE_CHUNK_MAX);
	struct store_chunk c;
	char why[200];
	int rc = 0;

	if (dctx == NULL || out == NULL)
		rc = RBA_E_NOMEM;
	for (uint32_t i = 0; rc == 0 && i <= upto && i < s->chunks; i++) {
		rc = chunk_get(txn, version, s->generation, i, s->chunks, &c, d);
		if (rc == 0 && store_chunk_inflate(dctx, &c, out, NULL, NULL, why,
						   sizeof(why)) != 0)
			rc = sample_tampered(d, version, "chunk %u %s", i, why);
	}
	ZSTD_freeDCtx(dctx);
	free(out);
	return rc;
}

struct index_walk;
static int index_walk_idle(void *ctx, int waiter);

/*
 * store_sample_stream's pass when a helper thread can decompress: the
 * helper decompresses chunk i, then hashes its plaintext into the
 * content's digest and checks its record's seal, while this thread
 * gets chunk i + 1's record and hands chunk i to the callback (two
 * buffers: chunk i + 1 is decompressed into the one chunk i - 1 used,
 * which the callback and the helper are done with).  The checks and
 * what each failure says are sample_read's with once: the content's
 * digest and the seals are checked at the end, and a chunk that does
 * not decompress, or that the callback refuses, sends the reader over
 * the chunks one by one.  1 when the helper could not be started (the
 * caller reads as before), else 0 or an error.
 */
static int
sample_stream_piped(struct store_txn *txn, const char *version,
		    const struct store_sample_info *s,
		    const struct rba_digest *list,
		    int (*cb)(void *ctx, uint32_t chunk_no, const uint8_t *p,
			      size_t n),
		    void *ctx, struct index_walk *iw, struct rba_detail *d)
{
	struct store_chunk cs[2];
	struct store_inflate_job jobs[2];
	struct store_inflater f;
	struct rba_digest got, lgot;
	struct rba_hasher whole, lh;
	uint8_t *buf[2];
	uint64_t cases = 0, size = 0;
	size_t used = 0;
	uint32_t i = 0;
	int rc, recheck = 0, whole_ok;

	buf[0] = malloc(STORE_CHUNK_MAX);
	buf[1] = malloc(STORE_CHUNK_MAX);
	rba_hasher_init(&whole);
	rba_hasher_init(&lh);
	if (buf[0] == NULL || buf[1] == NULL ||
	    store_inflater_start(&f, &whole, iw != NULL ? index_walk_idle : NULL,
				 iw) != 0) {
		free(buf[0]);
		free(buf[1]);
		return 1;
	}
	rc = chunk_get_as(txn, version, s->generation, 0, s->chunks, &cs[0], 1,
			  d);
	if (rc == 0) {
		jobs[0].c = &cs[0];
		jobs[0].out = buf[0];
		store_inflater_submit(&f, &jobs[0]);
	}
	for (i = 0; rc == 0 && i < s->chunks; i++) {
		struct store_chunk *c = &cs[i % 2];
		struct store_inflate_job *j = &jobs[i % 2];
		if ((rc = store_inflater_wait_out(&f, j)) != 0) {
			rc = sample_tampered(d, version, "chunk %u %s", i, j->why);
			recheck = 1;
			break;
		}
		/* the helper is past chunk i - 1: its record may go */
		if (i > 0)
			store_map_forget_used(txn, &used, cs[(i + 1) % 2].rec,
					      cs[(i + 1) % 2].rec_len);
		if (i + 1 < s->chunks) {
			struct store_chunk *cn = &cs[(i + 1) % 2];
			rc = chunk_get_as(txn, version, s->generation, i + 1,
					  s->chunks, cn, 1, d);
			if (rc != 0)
				break;
			jobs[(i + 1) % 2].c = cn;
			jobs[(i + 1) % 2].out = buf[(i + 1) % 2];
			store_inflater_submit(&f, &jobs[(i + 1) % 2]);
		}
		rba_hasher_update(&lh, c->digest, RBA_DIGEST_LEN);
		cases += c->aux;
		size += c->size;
		if ((rc = cb(ctx, i, j->out, c->size)) != 0) {
			recheck = 1;
			break;
		}
	}
	store_inflater_drain(&f);
	store_inflater_stop(&f);
	if (rc == 0) {
		store_map_forget(txn, cs[(s->chunks - 1) % 2].rec,
				 cs[(s->chunks - 1) % 2].rec_len);
		rba_hasher_final(&whole, &got);
		rba_hasher_final(&lh, &lgot);
		whole_ok = rba_digest_equal(&got, &s->digest);
		if ((!whole_ok || f.seal_bad) &&
		    (rc = sample_locate(txn, version, s, s->chunks, d)) != 0)
			goto out;
		rc = sample_read_end(txn, version, s, list, &lgot, cases, size,
				     whole_ok, d);
		if (rc == 0 && f.seal_bad)
			rc = sample_tampered(d, version, "has a chunk record that "
					     "does not match its seal");
	}
out:
	/* A chunk the callback refused, or whose frame did not decompress,
	 * may be one that is not what the store recorded: said so, in
	 * store_sample_read's words, before the error met here. */
	if (recheck) {
		int lrc = sample_locate(txn, version, s, i, d);

		if (lrc != 0)
			rc = lrc;
	}
	free(buf[0]);
	free(buf[1]);
	return rc;
}

/*
 * The reader of store_sample_read (once 0) and store_sample_stream
 * (once 1: each chunk decompressed but not hashed on its own; the
 * content hashed once, as a whole, and the chunks checked one by one
 * only when that or the callback fails).
 */
static int
sample_read(struct store_txn *txn, const char *version,
	    int (*cb)(void *ctx, uint32_t chunk_no, const uint8_t *p, size_t n),
	    void *ctx, int once, struct index_walk *iw, struct rba_detail *d)
{
	struct store_sample_info s;
	struct store_chunk cs[2], *c;
	struct rba_digest list, got, lgot;
	struct rba_hasher whole, lh;
	struct store_hashjob hj;
	ZSTD_DCtx *dctx = NULL;
	uint8_t *buf[2] = { NULL, NULL }, *out;
	uint64_t cases = 0, size = 0;
	size_t used = 0;
	uint32_t i = 0;
	char why[200];
	int rc, recheck = 0, whole_ok;

	store_hashjob_init(&hj);
	rc = info_load(txn, version, &s, &list, d);
	if (rc != 0)
		return rc;
	if (once && s.chunks >= 2 &&
	    (rc = sample_stream_piped(txn, version, &s, &list, cb, ctx, iw,
				 d)) != 1) {
		store_sample_info_release(&s);
		return rc;
	}
	rc = 0;
	dctx = store_dctx_new();
	buf[0] = malloc(STORE_CHUNK_MAX);
	buf[1] = malloc(STORE_CHUNK_MAX);
	if (dctx == NULL || buf[0] == NULL || buf[1] == NULL) {
		rc = RBA_E_NOMEM;
		goto out;
	}
	rba_hasher_init(&whole);
	rba_hasher_init(&lh);
	for (i = 0; i < s.chunks; i++) {
		/* Two buffers and two records: the helper hashes chunk i
		 * (and, once, checks its record's seal) while the callback
		 * uses chunk i and chunk i + 1 is decompressed (and, not
		 * once, checked) into the other; it is waited for only
		 * before the next is started. */
		c = &cs[i % 2];
		out = buf[i % 2];
		rc = chunk_get_as(txn, version, s.generation, i, s.chunks, c,
				  once, d);
		if (rc != 0)
			goto out;
		rc = once ? store_chunk_decompress(dctx, c, out, why, sizeof(why))
			  : store_chunk_inflate(dctx, c, out, &hj, NULL, why,
						sizeof(why));
		if (rc != 0) {
			/* once, the seal is not checked yet: a changed record
			 * is named as store_sample_read names it (below) */
			rc = sample_tampered(d, version, "chunk %u %s", i, why);
			recheck = 1;
			goto out;
		}
		store_hashjob_start_sealed(&hj, &whole, out, c->size,
					   once ? c : NULL);
		/* the job before this one is done: its record may go */
		if (i > 0)
			store_map_forget_used(txn, &used, cs[(i + 1) % 2].rec,
					      cs[(i + 1) % 2].rec_len);
		rba_hasher_update(&lh, c->digest, RBA_DIGEST_LEN);
		cases += c->aux;
		size += c->size;
		if ((rc = cb(ctx, i, out, c->size)) != 0) {
			recheck = 1;
			goto out;
		}
	}
	store_hashjob_wait(&hj);
	if (s.chunks > 0)
		store_map_forget(txn, cs[(s.chunks - 1) % 2].rec,
				 cs[(s.chunks - 1) % 2].rec_len);
	rba_hasher_final(&whole, &got);
	rba_hasher_final(&lh, &lgot);
	whole_ok = rba_digest_equal(&got, &s.digest);
	if (once && (!whole_ok || hj.seal_bad) &&
	    (rc = sample_locate(txn, version, &s, s.chunks, d)) != 0)
		goto out;
	rc = sample_read_end(txn, version, &s, &list, &lgot, cases, size,
			     whole_ok, d);
	if (rc == 0 && hj.seal_bad)
		rc = sample_tampered(d, version, "has a chunk record that does "
				     "not match its seal");
out:
	store_hashjob_release(&hj);
	/* A chunk the callback refused, or whose frame did not decompress,
	 * may be one that is not what the store recorded: said so, in
	 * store_sample_read's words, before the error met here. */
	if (once && recheck) {
		int lrc = sample_locate(txn, version, &s, i, d);

		if (lrc != 0)
			rc = lrc;
	}
	store_sample_info_release(&s);
	ZSTD_freeDCtx(dctx);
	free(buf[0]);
	free(buf[1]);
	return rc;
}

int
store_sample_read(struct store_txn *txn, const char *version,
		  int (*cb)(void *ctx, uint32_t chunk_no, const uint8_t *p,
			    size_t n),
		  void *ctx, struct rba_detail *d)
{
	return sample_read(txn, version, cb, ctx, 0, NULL, d);
}

int
store_sample_stream(struct store_txn *txn, const char *version,
		    int (*cb)(void *ctx, uint32_t chunk_no, const uint8_t *p,
			      size_t n),
		    void *ctx, struct rba_detail *d)
{
	return sample_read(txn, version, cb, ctx, 1, NULL, d);
}

int
store_sample_case_chunk(struct store_txn *txn, const char *version,
			const char *case_id, uint32_t *chunk_no,
			struct rba_detail *d)
{
	struct store_sample_info s;
	uint8_t key[SAMPLE_KEY_MAX];
	struct rba_cursor c;
	uint32_t nchunks, gen;
	size_t klen;
	MDB_val v;
	int rc;

	rc = info_load(txn, version, &s, NULL, d);
	if (rc != 0)
		return rc;
	nchunks = s.chunks;
	gen = s.generation;
	store_sample_info_release(&s);
	rc = store_name_check(case_id, STORE_CASE_ID_MAX, "case id", d);
	if (rc != 0)
		return rc;
	klen = store_sample_key(version, gen, SK_CASE, 0, case_id, key);
	rc = store_get(txn, DB_SAMPLES, key, klen, &v, d);
	if (rc == RBA_E_NOTFOUND) {
		rba_detail_key(d, case_id);
		return rba_fail(d, rc, NULL, 0, 0,
				"no case '%s' in the sample of version '%s'",
				case_id, version);
	}
	if (rc != 0)
		return rc;
	rc = store_rec_open(&v, TAG_SAMPLE_CASE, &c, "case index", d);
	if (rc != 0)
		return rc;
	*chunk_no = rba_cursor_u32(&c);
	if (!rba_cursor_ok(&c) || c.left != 0 || *chunk_no >= nchunks) {
		rba_detail_key(d, case_id);
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"case index of '%s': malformed", case_id);
	}
	return 0;
}

/*
 * Checks chunk c (number chunk_no) of version against the sealed sample
 * record: the list record of all chunk digests must hash to the record's
 * list digest and hold c's digest at chunk_no.  One read, whatever the
 * number of chunks.
 */
static int
check_in_list(struct store_txn *txn, const char *version, uint32_t gen,
	      uint32_t nchunks, uint32_t chunk_no,
	      const struct rba_digest *list, const struct store_chunk *c,
	      struct rba_detail *d)
{
	const uint8_t *digests;
	int rc = list_record_check(txn, version, gen, nchunks, list, &digests,
				   d);

	if (rc != 0)
		return rc;
	if (memcmp(digests + (size_t)chunk_no * RBA_DIGEST_LEN, c->digest,
		   RBA_DIGEST_LEN) != 0)
		return sample_tampered(d, version,
				       "chunk %u does not match its record",
				       chunk_no);
	return 0;
}

int
store_sample_chunk_load(struct store_txn *txn, const char *version,
			uint32_t chunk_no, uint8_t **p, size_t *n,
			struct rba_detail *d)
{
	struct store_sample_info s;
	struct store_chunk c;
	struct rba_digest list;
	ZSTD_DCtx *dctx = NULL;
	uint8_t *out = NULL;
	char why[200];
	int rc;

	*p = NULL;
	*n = 0;
	rc = info_load(txn, version, &s, &list, d);
	if (rc != 0)
		return rc;
	if (chunk_no >= s.chunks) {
		rba_detail_key(d, version);
		rc = rba_fail(d, RBA_E_NOTFOUND, NULL, 0, 0,
			      "the sample of version '%s' has no chunk %u",
			      version, chunk_no);
		goto out;
	}
	rc = chunk_get(txn, version, s.generation, chunk_no, s.chunks, &c, d);
	if (rc == 0)
		rc = check_in_list(txn, version, s.generation, s.chunks, chunk_no,
				   &list, &c, d);
	if (rc != 0)
		goto out;
	dctx = store_dctx_new();
	/* c.size is checked against STORE_CHUNK_MAX before inflating, but
	 * the buffer is the full chunk size whatever it records. */
	out = malloc(STORE_CHUNK_MAX + 1);
	if (dctx == NULL || out == NULL) {
		rc = RBA_E_NOMEM;
		goto out;
	}
	rc = store_chunk_inflate(dctx, &c, out, NULL, NULL, why, sizeof(why));
	if (rc != 0) {
		rc = sample_tampered(d, version, "chunk %u %s", chunk_no, why);
		goto out;
	}
	out[c.size] = 0;
	*p = out;
	*n = c.size;
	out = NULL;
out:
	store_sample_info_release(&s);
	ZSTD_freeDCtx(dctx);
	free(out);
	return rc;
}

/* ---- the case index -------------------------------------------------- */

static int
index_damaged(struct rba_detail *d, const char *version, const char *id,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
index_damaged(struct rba_detail *d, const char *version, const char *id,
	      const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	rba_detail_key(d, id != NULL ? id : version);
	return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
			"tampered: the case index of version '%s' is damaged: %s",
			version, what);
}

/* Decodes a case-index value: its chunk number, or -1 when malformed. */
static int64_t
index_value(const MDB_val *v)
{
	const uint8_t *p = v->mv_data;

	if (v->mv_size != 6 || p[0] != TAG_SAMPLE_CASE || p[1] != STORE_FORMAT)
		return -1;
	return (int64_t)rba_get_u32le(p + 2);
}

int
store_sample_index_check(struct store_txn *txn, const char *version,
			 uint32_t chunk_no, const char *const *ids, size_t n,
			 struct rba_detail *d)
{
	struct store_sample_info s;
	uint8_t key[SAMPLE_KEY_MAX];
	size_t klen;
	int64_t got;
	MDB_val v;
	uint32_t gen = 0;
	int rc = store_txn_check(txn, d);

	if (rc == 0)
		rc = store_name_check(version, STORE_VERSION_NAME_MAX, "version",
				      d);
	if (rc == 0 && (rc = info_load(txn, version, &s, NULL, d)) == 0) {
		gen = s.generation;
		store_sample_info_release(&s);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (ids[i] == NULL || ids[i][0] == 0 ||
		    strlen(ids[i]) > STORE_CASE_ID_MAX)
			return index_damaged(d, version, "", "chunk %u holds "
					     "an invalid case id", chunk_no);
		klen = store_sample_key(version, gen, SK_CASE, 0, ids[i], key);
		/* mdb_get descends from the root for every id, so damaged
		 * branch pages are seen as well as damaged entries. */
		rc = store_get(txn, DB_SAMPLES, key, klen, &v, d);
		if (rc == RBA_E_NOTFOUND)
			return index_damaged(d, version, ids[i],
					     "case '%s' of chunk %u is not "
					     "indexed", ids[i], chunk_no);
		if (rc != 0)
			return rc;
		got = index_value(&v);
		if (got < 0)
			return index_damaged(d, version, ids[i],
					     "the entry of case '%s' is "
					     "malformed", ids[i]);
		if (got != (int64_t)chunk_no)
			return index_damaged(d, version, ids[i],
					     "case '%s' of chunk %u is indexed "
					     "to chunk %lld", ids[i], chunk_no,
					     (long long)got);
	}
	return rc;
}

/* splitmix64's finalizer: a full-avalanche 64-bit mix. */
static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

void
store_index_sum_merge(struct store_index_sum *to,
		      const struct store_index_sum *from)
{
	to->n += from->n;
	to->a += from->a;
	to->b += from->b;
}

/* The two lanes' mixes of the pair (id, its len bytes; chunk). */
static inline __attribute__((always_inline)) void
pair_mix(const char *id, size_t len, uint32_t chunk, uint64_t *pa,
	 uint64_t *pb)
{
	/* Two lanes over the id's bytes and the chunk, each mixed per
	 * 8-byte word, with different seeds. */
	uint64_t a = 0x243f6a8885a308d3ULL ^ len, b = 0x13198a2e03707344ULL ^ len;
	const uint8_t *p = (const uint8_t *)id;
	size_t i = 0;

	/* Whole words in one load (little-endian, as the byte loop of a
	 * last short word builds them). */
	for (; len - i >= 8; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		a = mix64(a ^ w);
		b = mix64(b + w + 0x9e3779b97f4a7c15ULL);
	}
	if (i < len) {
		/* the last 1 to 7 bytes, byte k at bits 8k: in at most three
		 * loads of 4, 2 and 1 bytes, highest part first */
		size_t r = len - i;
		uint64_t w = 0;
		if (r & 1)
			w = p[i + r - 1];
		if (r & 2)
			w = w << 16 | (uint64_t)p[i + (r & 4)] |
			    (uint64_t)p[i + (r & 4) + 1] << 8;
		if (r & 4)
			w = w << 32 | (uint64_t)p[i] | (uint64_t)p[i + 1] << 8 |
			    (uint64_t)p[i + 2] << 16 | (uint64_t)p[i + 3] << 24;
		a = mix64(a ^ w);
		b = mix64(b + w + 0x9e3779b97f4a7c15ULL);
	}
	*pa = mix64(a ^ chunk ^ 0xa4093822299f31d0ULL);
	*pb = mix64(b + chunk + 0x082efa98ec4e6c89ULL);
}

void
store_index_sum_add(struct store_index_sum *s, const char *id, size_t len,
		    uint32_t chunk)
{
	uint64_t a, b;

	pair_mix(id, len, chunk, &a, &b);
	s->n++;
	s->a += a;
	s->b += b;
}

/* the pairs (ids[i], chunk): each id's length by strlen, or, packed,
 * by the distance to the next id */
static inline __attribute__((always_inline)) void
sum_ids(struct store_index_sum *s, const char *const *ids, uint32_t n,
	uint32_t chunk, int packed)
{
	/* the sums in registers: each pair's mixes overlap the next's */
	uint64_t sa = 0, sb = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a, b;
		size_t len = packed && i + 1 < n
				     ? (size_t)(ids[i + 1] - ids[i]) - 1
				     : strlen(ids[i]);
		pair_mix(ids[i], len, chunk, &a, &b);
		sa += a;
		sb += b;
	}
	s->n += n;
	s->a += sa;
	s->b += sb;
}

void
store_index_sum_add_ids(struct store_index_sum *s, const char *const *ids,
			uint32_t n, uint32_t chunk)
{
	sum_ids(s, ids, n, chunk, 0);
}

void
store_index_sum_add_packed(struct store_index_sum *s,
			   const char *const *ids, uint32_t n, uint32_t chunk)
{
	sum_ids(s, ids, n, chunk, 1);
}

/* Looks k up from the root: it must be there, with value v. */
static int
index_lookup_same(struct store_txn *txn, const char *version,
		  const MDB_val *k, const MDB_val *v, size_t plen,
		  struct rba_detail *d)
{
	MDB_val got;
	int rc = store_get(txn, DB_SAMPLES, k->mv_data, k->mv_size, &got, d);
	char id[STORE_CASE_ID_MAX + 1];
	size_t n = k->mv_size - plen < STORE_CASE_ID_MAX ? k->mv_size - plen
							 : STORE_CASE_ID_MAX;

	memcpy(id, (const uint8_t *)k->mv_data + plen, n);
	id[n] = 0;
	if (rc == RBA_E_NOTFOUND)
		return index_damaged(d, version, id,
				     "a lookup does not find case '%s', which "
				     "it holds (damaged branch pages)", id);
	if (rc != 0)
		return rc;
	if (got.mv_size != v->mv_size ||
	    memcmp(got.mv_data, v->mv_data, v->mv_size) != 0)
		return index_damaged(d, version, id,
				     "a lookup of case '%s' finds another "
				     "entry than the walk", id);
	return 0;
}

/*
 * A walk of a version's case index made a step at a time, so that it
 * can go on a thread's waits (store_sample_stream_indexed): the sum of
 * its (case id, chunk) pairs, each leaf's first and last entry looked up
 * again from the root, as store_sample_index_sum says.
 */
struct index_walk {
	struct store_txn *txn;
	const char *version;
	struct store_sample_info s;
	int have_info;
	uint8_t key[SAMPLE_KEY_MAX];
	size_t plen;
	MDB_cursor *cur;
	MDB_val k, v; /* the entry the cursor is at (mrc 0) */
	int mrc;
	/* the entry before, where the map holds it (a read transaction's
	 * pages stay put until it ends) */
	MDB_val lk, lv;
	int have_last;
	uintptr_t page, pmask;
	struct store_index_sum sum;
	int rc; /* the walk's error, once it has one */
	int done;
	struct rba_detail d;
	pthread_mutex_t mu; /* held for a step by a stream's two threads */
};

/* Sets w up to walk version's index in txn: 0, else its error (in d). */
static int
index_walk_open(struct store_txn *txn, const char *version,
		struct index_walk *w)
{
	MDB_stat ms;
	int mrc;

	memset(w, 0, sizeof(*w));
	rba_detail_clear(&w->d);
	w->txn = txn;
	w->version = version;
	if ((w->rc = info_load(txn, version, &w->s, NULL, &w->d)) != 0)
		return w->rc;
	w->have_info = 1;
	w->plen = store_sample_key(version, w->s.generation, SK_CASE, 0, "",
				   w->key);
	mrc = mdb_stat(txn->t, store_dbi(txn, DB_SAMPLES), &ms);
	if (mrc == 0)
		mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_SAMPLES), &w->cur);
	if (mrc != 0)
		return w->rc = store_mdb_fail(&w->d, mrc, "reading the case index");
	w->pmask = ~((uintptr_t)ms.ms_psize - 1);
	w->k.mv_data = w->key;
	w->k.mv_size = w->plen;
	w->mrc = mdb_cursor_get(w->cur, &w->k, &w->v, MDB_SET_RANGE);
	return 0;
}

/* The walk's end, once the cursor has left the index. */
static int
index_walk_finish(struct index_walk *w)
{
	if (w->mrc != 0 && w->mrc != MDB_NOTFOUND)
		return store_mdb_fail(&w->d, w->mrc, "reading the case index");
	if (w->have_last) {
		int rc = index_lookup_same(w->txn, w->version, &w->lk, &w->lv,
					   w->plen, &w->d);
		if (rc != 0)
			return rc;
	}
	if (w->sum.n != w->s.cases)
		return index_damaged(&w->d, w->version, NULL,
				     "it holds %llu entries for %llu cases",
				     (unsigned long long)w->sum.n,
				     (unsigned long long)w->s.cases);
	return 0;
}

/*
 * Walks up to max more entries of w: 1 while some are left, 0 when the
 * walk is done and held, or its error (w->rc, w->d; again at every call).
 */
static int
index_walk_step(struct index_walk *w, size_t max)
{
	const size_t plen = w->plen;

	if (w->rc != 0 || w->done)
		return w->rc;
	for (size_t e = 0; e < max; e++) {
		uintptr_t pg = (uintptr_t)w->k.mv_data & w->pmask;
		int64_t chunk;

		if (w->mrc != 0 || w->k.mv_size < plen ||
		    memcmp(w->k.mv_data, w->key, plen) != 0) {
			w->done = 1;
			return w->rc = index_walk_finish(w);
		}
		chunk = index_value(&w->v);
		if (w->k.mv_size == plen ||
		    w->k.mv_size > plen + STORE_CASE_ID_MAX || chunk < 0 ||
		    chunk >= (int64_t)w->s.chunks)
			return w->rc = index_damaged(&w->d, w->version, NULL,
						     "entry %llu is malformed",
						     (unsigned long long)w->sum.n);
		if (pg != w->page) {
			/* A new leaf: the last entry of the one before and
			 * the first of this one must be found from the root. */
			if ((w->have_last &&
			     (w->rc = index_lookup_same(w->txn, w->version,
							&w->lk, &w->lv, plen,
							&w->d)) != 0) ||
			    (w->rc = index_lookup_same(w->txn, w->version,
						       &w->k, &w->v, plen,
						       &w->d)) != 0)
				return w->rc;
			w->page = pg;
		}
		store_index_sum_add(&w->sum, (const char *)w->k.mv_data + plen,
				    w->k.mv_size - plen, (uint32_t)chunk);
		w->lk = w->k;
		w->lv = w->v;
		w->have_last = 1;
		if ((w->sum.n & 16383) == 0)
			store_map_forget(w->txn, w->k.mv_data, w->k.mv_size);
		w->mrc = mdb_cursor_get(w->cur, &w->k, &w->v, MDB_NEXT);
	}
	return 1;
}

static void
index_walk_close(struct index_walk *w)
{
	mdb_cursor_close(w->cur);
	w->cur = NULL;
	if (w->have_info)
		store_sample_info_release(&w->s);
	w->have_info = 0;
}

int
store_sample_index_sum(struct store_txn *txn, const char *version,
		       struct store_index_sum *out, struct rba_detail *d)
{
	struct index_walk w;
	int rc = index_walk_open(txn, version, &w);

	while (rc == 0 && (rc = index_walk_step(&w, SIZE_MAX)) == 1)
		;
	index_walk_close(&w);
	*out = w.sum;
	if (rc != 0 && d != NULL)
		*d = w.d;
	return rc;
}

/*
 * A step of a walk in a stream's waits (store_inflater_start's idle):
 * 512 entries, about 18 us, so that a chunk that comes out meanwhile
 * hardly waits.  The helper waits for the other thread's step to end;
 * a wait for a chunk sleeps instead.  An error ends the steps (it is
 * kept in w).
 */
#define INDEX_WALK_STEP 512
static int
index_walk_idle(void *ctx, int waiter)
{
	struct index_walk *w = ctx;
	int more;

	if (!waiter)
		pthread_mutex_lock(&w->mu);
	else if (pthread_mutex_trylock(&w->mu) != 0)
		return 2;
	more = index_walk_step(w, INDEX_WALK_STEP);
	pthread_mutex_unlock(&w->mu);
	return more == 1;
}

/* A walk on a thread of its own: to its end. */
static void *
index_walk_main(void *arg)
{
	struct index_walk *w = arg;

	while (index_walk_step(w, SIZE_MAX) == 1)
		;
	return NULL;
}

int
store_sample_stream_indexed(struct store_txn *txn, const char *version,
			    int (*cb)(void *ctx, uint32_t chunk_no,
				      const uint8_t *p, size_t n),
			    void *ctx, int own_thread,
			    struct store_index_sum *sum, struct rba_detail *d)
{
	struct store_txn *wt = NULL;
	struct index_walk w;
	pthread_t th;
	int rc, wrc = 0, beside = 0, threaded = 0;

	memset(sum, 0, sizeof(*sum));
	memset(&w, 0, sizeof(w)); /* closes as nothing until opened */
	/* beside: on a read of its own, of the same snapshot (refused when
	 * a write landed between the two, or the test seam walk_after says:
	 * the walk then follows the stream, on its read) */
	if (!rba_seams.walk_after &&
	    store_txn_begin_same(txn, &wt, NULL) == 0 &&
	    (wrc = index_walk_open(wt, version, &w)) == 0) {
		if (own_thread)
			beside = threaded =
				pthread_create(&th, NULL, index_walk_main, &w) == 0;
		else
			beside = pthread_mutex_init(&w.mu, NULL) == 0;
	}
	rc = sample_read(txn, version, cb, ctx, 1,
			 beside && !threaded ? &w : NULL, d);
	if (threaded)
		pthread_join(th, NULL);
	else if (beside)
		pthread_mutex_destroy(&w.mu);
	if (rc == 0 && wrc == 0 && wt == NULL)
		wrc = index_walk_open(txn, version, &w);
	if (rc == 0) {
		/* what the waits left, or all of it */
		while (wrc == 0 && (wrc = index_walk_step(&w, SIZE_MAX)) == 1)
			;
		*sum = w.sum;
		if (wrc != 0 && d != NULL)
			*d = w.d;
		rc = wrc;
	}
	index_walk_close(&w);
	if (wt != NULL)
		store_txn_abort(wt);
	return rc;
}

