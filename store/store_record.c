/* store_record.c - versions, run records and the audit history chain. */
#include "store/store_priv.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- versions -------------------------------------------------------- */

static int
text_check(const char *s, const char *what, struct rba_detail *d)
{
	size_t n;

	if (s == NULL)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "no %s", what);
	n = strlen(s);
	if (n > STORE_TEXT_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"%s is %zu bytes, more than %u", what, n,
				STORE_TEXT_MAX);
	return 0;
}

/*
 * The version record: the first format when v keeps no meta (as every
 * earlier tool wrote it), else the second, which ends with the meta.
 */
static void
version_encode(struct rba_buf *b, const struct store_version *v)
{
	static const struct rba_digest zero;

	rba_buf_put_u8(b, TAG_VERSION);
	rba_buf_put_u8(b, v->has_meta ? STORE_VERSION_FORMAT : STORE_FORMAT);
	rba_buf_put_str(b, v->name);
	rba_buf_put_u64(b, (uint64_t)v->registered_at);
	rba_buf_put_str(b, v->pins_text);
	rba_buf_put_str(b, v->env_text);
	rba_buf_put(b, v->artifact.b, RBA_DIGEST_LEN);
	rba_buf_put(b, v->snapshot.b, RBA_DIGEST_LEN);
	rba_buf_put_u8(b, v->has_policy ? 1 : 0);
	rba_buf_put_str(b, v->has_policy ? v->policy_text : "");
	rba_buf_put(b, (v->has_policy ? &v->policy_digest : &zero)->b,
		    RBA_DIGEST_LEN);
	if (v->has_meta) {
		rba_buf_put_u32(b, (uint32_t)v->meta_len);
		if (v->meta_len > 0)
			rba_buf_put(b, v->meta, v->meta_len);
	}
	store_rec_seal(b);
}

static int
version_decode(const MDB_val *k, const MDB_val *val, struct store_version *v,
	       struct rba_detail *d)
{
	struct rba_cursor c;
	const uint8_t *a, *s, *pd, *m = NULL;
	uint8_t format = 0;
	size_t mn = 0;
	int rc;

	memset(v, 0, sizeof(*v));
	rc = store_rec_open_sealed_format(val, TAG_VERSION, STORE_VERSION_FORMAT,
					  &format, &c, "version record", d);
	if (rc != 0)
		return rc;
	v->name = store_cursor_cstr(&c, STORE_VERSION_NAME_MAX);
	v->registered_at = (int64_t)rba_cursor_u64(&c);
	v->pins_text = store_cursor_cstr(&c, STORE_TEXT_MAX);
	v->env_text = store_cursor_cstr(&c, STORE_TEXT_MAX);
	a = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	s = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	v->has_policy = rba_cursor_u8(&c);
	v->policy_text = store_cursor_cstr(&c, STORE_TEXT_MAX);
	pd = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	if (format >= 2) {
		v->has_meta = 1;
		m = (const uint8_t *)rba_cursor_lstr(&c, STORE_VERSION_META_MAX, &mn);
		if (m != NULL && mn > 0) {
			if ((v->meta = malloc(mn)) == NULL) {
				store_version_release(v);
				return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0,
						"out of memory");
			}
			memcpy(v->meta, m, mn);
			v->meta_len = mn;
		}
	}
	if (!rba_cursor_ok(&c) || c.left != 0 || v->has_policy > 1 ||
	    strlen(v->name) != k->mv_size ||
	    memcmp(v->name, k->mv_data, k->mv_size) != 0) {
		store_version_release(v);
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"version record: malformed");
	}
	memcpy(v->artifact.b, a, RBA_DIGEST_LEN);
	memcpy(v->snapshot.b, s, RBA_DIGEST_LEN);
	memcpy(v->policy_digest.b, pd, RBA_DIGEST_LEN);
	if (!v->has_policy) {
		free(v->policy_text);
		v->policy_text = NULL;
	}
	return 0;
}

/* Adds the sample summary to a decoded version. */
static int
version_sample(struct store_txn *txn, struct store_version *v,
	       struct rba_detail *d)
{
	struct rba_detail sd;
	int rc = store_sample_info(txn, v->name, &v->sample, &sd);

	if (rc == RBA_E_NOTFOUND)
		return 0;
	if (rc == RBA_E_TAMPERED || rc == RBA_E_CORRUPT) {
		v->sample_err = rc;
		return 0;
	}
	if (rc != 0) {
		if (d != NULL)
			*d = sd;
		return rc;
	}
	v->has_sample = 1;
	return 0;
}

void
store_version_release(struct store_version *v)
{
	if (v == NULL)
		return;
	free(v->name);
	free(v->pins_text);
	free(v->env_text);
	free(v->policy_text);
	free(v->meta);
	store_sample_info_release(&v->sample);
	memset(v, 0, sizeof(*v));
}

static int
blob_exists(struct store_txn *txn, const struct rba_digest *dg,
	    const char *what, struct rba_detail *d)
{
	char text[RBA_DIGEST_TEXT_LEN + 1];
	MDB_val v;
	int rc = store_get(txn, DB_BLOBS, dg->b, BLOB_KEY_LEN, &v, d);

	if (rc != RBA_E_NOTFOUND)
		return rc;
	rba_digest_format(dg, text);
	rba_detail_key(d, text);
	return rba_fail(d, rc, NULL, 0, 0, "the %s %s is not in the store",
			what, text);
}

static int
version_write(struct store_txn *txn, const struct store_version *v,
	      unsigned flags, struct rba_detail *d)
{
	struct rba_buf b;
	int rc;

	rba_buf_init(&b);
	version_encode(&b, v);
	rc = rba_buf_status(&b);
	if (rc == 0)
		rc = store_put(txn, DB_VERSIONS, v->name, strlen(v->name), b.p,
			       b.len, flags, "storing a version", d);
	rba_buf_release(&b);
	return rc;
}

int
store_version_put(struct store_txn *txn, const struct store_version *v,
		  int replace, struct rba_detail *d)
{
	int rc = store_txn_writable(txn, d);

	if (rc == 0)
		rc = store_name_check(v->name, STORE_VERSION_NAME_MAX,
				      "version name", d);
	if (rc == 0)
		rc = text_check(v->pins_text, "pins text", d);
	if (rc == 0)
		rc = text_check(v->env_text, "environment record", d);
	if (rc == 0 && v->has_policy)
		rc = text_check(v->policy_text, "policy text", d);
	if (rc == 0 && v->has_meta && v->meta_len > 0 && v->meta == NULL)
		rc = rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "no version meta");
	if (rc == 0 && v->has_meta && v->meta_len > STORE_VERSION_META_MAX)
		rc = rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
			      "version meta is %zu bytes, more than %u",
			      v->meta_len, STORE_VERSION_META_MAX);
	if (rc == 0)
		rc = blob_exists(txn, &v->artifact, "artifact", d);
	if (rc == 0)
		rc = blob_exists(txn, &v->snapshot, "snapshot", d);
	if (rc != 0)
		return rc;
	rc = version_write(txn, v, replace ? 0 : MDB_NOOVERWRITE, d);
	if (rc == RBA_E_EXISTS) {
		rba_detail_key(d, v->name);
		return rba_fail(d, rc, NULL, 0, 0, "version '%s' exists",
				v->name);
	}
	return rc;
}

int
store_version_get(struct store_txn *txn, const char *name,
		  struct store_version *v, struct rba_detail *d)
{
	MDB_val k, val;
	int rc;

	memset(v, 0, sizeof(*v));
	rc = store_txn_check(txn, d);
	if (rc == 0)
		rc = store_name_check(name, STORE_VERSION_NAME_MAX,
				      "version name", d);
	if (rc != 0)
		return rc;
	rc = store_get(txn, DB_VERSIONS, name, strlen(name), &val, d);
	if (rc == RBA_E_NOTFOUND)
		rc = rba_fail(d, rc, NULL, 0, 0, "no version '%s'", name);
	if (rc == 0) {
		k.mv_data = (void *)name;
		k.mv_size = strlen(name);
		rc = version_decode(&k, &val, v, d);
	}
	if (rc == 0)
		rc = version_sample(txn, v, d);
	if (rc != 0) {
		store_version_release(v);
		rba_detail_key(d, name);
	}
	return rc;
}

int
store_version_list(struct store_txn *txn,
		   int (*cb)(void *ctx, const struct store_version *v),
		   void *ctx, struct rba_detail *d)
{
	MDB_cursor *cur;
	MDB_val k, val;
	struct store_version v;
	char name[STORE_VERSION_NAME_MAX + 1];
	int rc = store_txn_check(txn, d), mrc;

	if (rc != 0)
		return rc;
	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_VERSIONS), &cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading versions");
	for (mrc = mdb_cursor_get(cur, &k, &val, MDB_FIRST); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &val, MDB_NEXT)) {
		rc = version_decode(&k, &val, &v, d);
		if (rc == 0)
			rc = version_sample(txn, &v, d);
		if (rc != 0) {
			size_t n = k.mv_size < sizeof(name) - 1 ? k.mv_size
								 : sizeof(name) - 1;
			memcpy(name, k.mv_data, n);
			name[n] = 0;
			rba_detail_key(d, name);
			break;
		}
		rc = cb(ctx, &v);
		store_version_release(&v);
		if (rc != 0)
			break;
	}
	mdb_cursor_close(cur);
	if (rc != 0)
		return rc;
	if (mrc != MDB_NOTFOUND)
		return store_mdb_fail(d, mrc, "reading versions");
	return 0;
}

int
store_version_names(struct store_txn *txn,
		    int (*cb)(void *ctx, const char *name, int valid),
		    void *ctx, struct rba_detail *d)
{
	MDB_cursor *cur;
	MDB_val k, val;
	char name[4 * STORE_VERSION_NAME_MAX + 1];
	int rc = store_txn_check(txn, d), mrc;

	if (rc != 0)
		return rc;
	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_VERSIONS), &cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading versions");
	for (mrc = mdb_cursor_get(cur, &k, &val, MDB_FIRST); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &val, MDB_NEXT)) {
		const uint8_t *p = k.mv_data;
		int valid = k.mv_size > 0 && k.mv_size <= STORE_VERSION_NAME_MAX &&
			    memchr(p, 0, k.mv_size) == NULL;
		size_t o = 0;

		if (valid) {
			memcpy(name, p, k.mv_size);
			o = k.mv_size;
		} else {
			/* A printable form: bytes outside ASCII as \xHH. */
			for (size_t i = 0; i < k.mv_size &&
					   o + 5 < sizeof(name); i++) {
				if (p[i] >= 0x20 && p[i] < 0x7f)
					name[o++] = (char)p[i];
				else
					o += (size_t)snprintf(name + o,
							      sizeof(name) - o,
							      "\\x%02x", p[i]);
			}
		}
		name[o] = 0;
		rc = cb(ctx, name, valid);
		if (rc != 0)
			break;
	}
	mdb_cursor_close(cur);
	if (rc != 0)
		return rc;
	if (mrc != MDB_NOTFOUND)
		return store_mdb_fail(d, mrc, "reading versions");
	return 0;
}

int
store_version_set_policy(struct store_txn *txn, const char *name,
			 const char *policy_text,
			 const struct rba_digest *policy_digest,
			 struct rba_detail *d)
{
	struct store_version v;
	char *old;
	int rc = store_txn_writable(txn, d);

	if (rc == 0 && policy_text != NULL) {
		rc = text_check(policy_text, "policy text", d);
		if (rc == 0 && policy_digest == NULL)
			rc = rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				      "a policy needs its digest");
	}
	if (rc == 0)
		rc = store_version_get(txn, name, &v, d);
	if (rc != 0)
		return rc;
	old = v.policy_text;
	v.has_policy = policy_text != NULL;
	v.policy_text = (char *)policy_text;
	if (policy_text != NULL)
		v.policy_digest = *policy_digest;
	else
		memset(&v.policy_digest, 0, sizeof(v.policy_digest));
	rc = version_write(txn, &v, 0, d);
	v.policy_text = old;
	store_version_release(&v);
	return rc;
}

/* ---- runs ------------------------------------------------------------ */

static int
record_check(const void *p, size_t n, const char *what, struct rba_detail *d)
{
	if (p == NULL && n > 0)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0, "no %s bytes", what);
	if (n > STORE_RECORD_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"%s is %zu bytes, more than %u", what, n,
				STORE_RECORD_MAX);
	return 0;
}

int
store_run_put(struct store_txn *txn, const char *id, const void *p,
	      size_t n, struct rba_detail *d)
{
	struct rba_buf b;
	int rc = store_txn_writable(txn, d);

	if (rc == 0)
		rc = store_name_check(id, STORE_RUN_ID_MAX, "run id", d);
	if (rc == 0)
		rc = record_check(p, n, "run record", d);
	if (rc != 0)
		return rc;
	rba_buf_init(&b);
	store_rec_start(&b, TAG_RUN);
	rba_buf_put_str(&b, id);
	rba_buf_put_lstr(&b, p, n);
	store_rec_seal(&b);
	rc = rba_buf_status(&b);
	if (rc == 0)
		rc = store_put(txn, DB_RUNS, id, strlen(id), b.p, b.len, 0,
			       "storing a run record", d);
	rba_buf_release(&b);
	return rc;
}

/* Points *p, *n at a run record's bytes inside val. */
static int
run_decode(const MDB_val *k, const MDB_val *val, const uint8_t **p,
	   size_t *n, struct rba_detail *d)
{
	struct rba_cursor c;
	const char *id;
	size_t idn;
	int rc = store_rec_open_sealed(val, TAG_RUN, &c, "run record", d);

	if (rc != 0)
		return rc;
	id = rba_cursor_lstr(&c, STORE_RUN_ID_MAX, &idn);
	*p = (const uint8_t *)rba_cursor_lstr(&c, STORE_RECORD_MAX, n);
	if (!rba_cursor_ok(&c) || c.left != 0 || idn != k->mv_size ||
	    memcmp(id, k->mv_data, idn) != 0)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"run record: malformed");
	return 0;
}

int
store_run_get(struct store_txn *txn, const char *id, uint8_t **p, size_t *n,
	      struct rba_detail *d)
{
	MDB_val k, val;
	const uint8_t *src;
	size_t len;
	int rc = store_txn_check(txn, d);

	*p = NULL;
	*n = 0;
	if (rc == 0)
		rc = store_name_check(id, STORE_RUN_ID_MAX, "run id", d);
	if (rc != 0)
		return rc;
	rc = store_get(txn, DB_RUNS, id, strlen(id), &val, d);
	if (rc == RBA_E_NOTFOUND)
		rc = rba_fail(d, rc, NULL, 0, 0, "no run '%s'", id);
	k.mv_data = (void *)id;
	k.mv_size = strlen(id);
	if (rc == 0)
		rc = run_decode(&k, &val, &src, &len, d);
	if (rc != 0) {
		rba_detail_key(d, id);
		return rc;
	}
	*p = malloc(len + 1);
	if (*p == NULL)
		return RBA_E_NOMEM;
	memcpy(*p, src, len);
	(*p)[len] = 0;
	*n = len;
	return 0;
}

int
store_run_list(struct store_txn *txn,
	       int (*cb)(void *ctx, const char *id, const uint8_t *p, size_t n),
	       void *ctx, struct rba_detail *d)
{
	MDB_cursor *cur;
	MDB_val k, val;
	const uint8_t *p;
	size_t n;
	char id[STORE_RUN_ID_MAX + 1];
	int rc = store_txn_check(txn, d), mrc;

	if (rc != 0)
		return rc;
	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_RUNS), &cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading runs");
	for (mrc = mdb_cursor_get(cur, &k, &val, MDB_FIRST); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &val, MDB_NEXT)) {
		rc = run_decode(&k, &val, &p, &n, d);
		if (rc != 0)
			break;
		/* run_decode checked the key against the record's id. */
		memcpy(id, k.mv_data, k.mv_size);
		id[k.mv_size] = 0;
		rc = cb(ctx, id, p, n);
		if (rc != 0)
			break;
	}
	mdb_cursor_close(cur);
	if (rc != 0)
		return rc;
	if (mrc != MDB_NOTFOUND)
		return store_mdb_fail(d, mrc, "reading runs");
	return 0;
}

/* ---- history --------------------------------------------------------- */

void
store_history_digest(const struct rba_digest *prev, uint64_t id,
		     int64_t time, const char *version, size_t vlen,
		     const void *rec, size_t n, struct rba_digest *out)
{
	struct rba_hasher h;
	uint8_t t[8];

	assert(vlen <= UINT32_MAX && n <= UINT32_MAX);
	rba_hasher_init(&h);
	rba_hasher_update(&h, prev->b, RBA_DIGEST_LEN);
	rba_put_u64le(t, id);
	rba_hasher_update(&h, t, 8);
	rba_put_u64le(t, (uint64_t)time);
	rba_hasher_update(&h, t, 8);
	rba_put_u32le(t, (uint32_t)vlen);
	rba_hasher_update(&h, t, 4);
	rba_hasher_update(&h, version, vlen);
	rba_put_u32le(t, (uint32_t)n);
	rba_hasher_update(&h, t, 4);
	rba_hasher_update(&h, rec, n);
	rba_hasher_final(&h, out);
}

/*
 * Decodes history record val of key k into e (record borrowed from val)
 * and checks its own digest.
 */
static int
history_decode(const MDB_val *k, const MDB_val *val,
	       struct store_history_entry *e, struct rba_detail *d)
{
	struct rba_cursor c;
	struct rba_digest want;
	const uint8_t *prev, *dg;
	const char *ver;
	size_t vlen;
	int rc;

	memset(e, 0, sizeof(*e));
	if (k->mv_size != 8)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"history: a key of %zu bytes", k->mv_size);
	e->id = store_get_be64(k->mv_data);
	rc = store_rec_open(val, TAG_HISTORY, &c, "history record", d);
	if (rc != 0)
		return rc;
	e->time = (int64_t)rba_cursor_u64(&c);
	prev = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	dg = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	ver = rba_cursor_lstr(&c, STORE_VERSION_NAME_MAX, &vlen);
	e->record = (uint8_t *)rba_cursor_lstr(&c, STORE_RECORD_MAX, &e->len);
	if (!rba_cursor_ok(&c) || c.left != 0 || memchr(ver, 0, vlen) != NULL)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"history record %llu: malformed",
				(unsigned long long)e->id);
	memcpy(e->version, ver, vlen);
	e->version[vlen] = 0;
	memcpy(e->prev.b, prev, RBA_DIGEST_LEN);
	memcpy(e->digest.b, dg, RBA_DIGEST_LEN);
	store_history_digest(&e->prev, e->id, e->time, e->version, vlen,
			     e->record, e->len, &want);
	if (!rba_digest_equal(&want, &e->digest))
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
				"tampered: history record %llu does not match "
				"its digest", (unsigned long long)e->id);
	return 0;
}

static int
head_read(struct store_txn *txn, int *has, uint64_t *id,
	  struct rba_digest *dg, struct rba_detail *d)
{
	struct rba_cursor c;
	const uint8_t *p;
	MDB_val v;
	int rc = store_get(txn, DB_META, "history_head", 12, &v, d);

	*has = 0;
	if (rc == RBA_E_NOTFOUND)
		return 0;
	if (rc != 0)
		return rc;
	rc = store_rec_open(&v, TAG_META_HEAD, &c, "history head", d);
	if (rc != 0)
		return rc;
	*id = rba_cursor_u64(&c);
	p = rba_cursor_bytes(&c, RBA_DIGEST_LEN);
	if (!rba_cursor_ok(&c) || c.left != 0)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"history head: malformed");
	memcpy(dg->b, p, RBA_DIGEST_LEN);
	*has = 1;
	return 0;
}

int
store_history_append(struct store_txn *txn, const char *version,
		     int64_t time, const void *rec, size_t n, uint64_t *id,
		     struct rba_digest *chain, struct rba_detail *d)
{
	struct store_history_entry last;
	struct rba_digest prev, dg;
	struct rba_buf b;
	MDB_cursor *cur;
	MDB_val k, v;
	uint64_t next = 1;
	uint8_t key[8];
	int rc = store_txn_writable(txn, d), mrc;

	if (rc == 0)
		rc = store_name_check(version, STORE_VERSION_NAME_MAX,
				      "version name", d);
	if (rc == 0)
		rc = record_check(rec, n, "history record", d);
	if (rc != 0)
		return rc;
	memset(&prev, 0, sizeof(prev));
	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_HISTORY), &cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading the history");
	mrc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	if (mrc == 0) {
		/* The chain continues from the last record as stored; a
		 * broken record before it is for verify to report. */
		rc = history_decode(&k, &v, &last, d);
		if (rc == RBA_E_TAMPERED)
			rc = 0;
		if (rc == 0) {
			prev = last.digest;
			next = last.id + 1;
		}
	} else if (mrc != MDB_NOTFOUND) {
		rc = store_mdb_fail(d, mrc, "reading the history");
	}
	mdb_cursor_close(cur);
	if (rc != 0)
		return rc;
	store_history_digest(&prev, next, time, version, strlen(version), rec,
			     n, &dg);
	rba_buf_init(&b);
	store_rec_start(&b, TAG_HISTORY);
	rba_buf_put_u64(&b, (uint64_t)time);
	rba_buf_put(&b, prev.b, RBA_DIGEST_LEN);
	rba_buf_put(&b, dg.b, RBA_DIGEST_LEN);
	rba_buf_put_str(&b, version);
	rba_buf_put_lstr(&b, rec, n);
	rc = rba_buf_status(&b);
	store_be64(key, next);
	if (rc == 0)
		rc = store_put(txn, DB_HISTORY, key, 8, b.p, b.len,
			       MDB_NOOVERWRITE | MDB_APPEND,
			       "appending to the history", d);
	if (rc == RBA_E_EXISTS)
		rc = store_txn_fail(txn, d,
				    rba_fail(d, RBA_E_STORE, NULL, 0, 0,
					     "history record %llu exists",
					     (unsigned long long)next));
	b.len = 0;
	store_rec_start(&b, TAG_META_HEAD);
	rba_buf_put_u64(&b, next);
	rba_buf_put(&b, dg.b, RBA_DIGEST_LEN);
	if (rc == 0)
		rc = rba_buf_status(&b);
	if (rc == 0)
		rc = store_put(txn, DB_META, "history_head", 12, b.p, b.len, 0,
			       "recording the history head", d);
	rba_buf_release(&b);
	/* The record is a leaf of the log in the same transaction. */
	if (rc == 0)
		rc = store_tlog_append(txn, next, rec, n, d);
	if (rc != 0)
		return rc;
	if (id != NULL)
		*id = next;
	if (chain != NULL)
		*chain = dg;
	return 0;
}

int
store_history_list(struct store_txn *txn, const char *version,
		   int newest_first,
		   int (*cb)(void *ctx, const struct store_history_entry *e),
		   void *ctx, struct rba_detail *d)
{
	struct store_history_entry e;
	MDB_cursor *cur;
	MDB_val k, v;
	int rc = store_txn_check(txn, d), mrc;
	MDB_cursor_op first = newest_first ? MDB_LAST : MDB_FIRST;
	MDB_cursor_op next = newest_first ? MDB_PREV : MDB_NEXT;

	if (rc != 0)
		return rc;
	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_HISTORY), &cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading the history");
	for (mrc = mdb_cursor_get(cur, &k, &v, first); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, next)) {
		rc = history_decode(&k, &v, &e, d);
		if (rc != 0)
			break;
		if (version != NULL && strcmp(version, e.version) != 0)
			continue;
		rc = cb(ctx, &e);
		if (rc != 0)
			break;
	}
	mdb_cursor_close(cur);
	if (rc != 0)
		return rc;
	if (mrc != MDB_NOTFOUND)
		return store_mdb_fail(d, mrc, "reading the history");
	return 0;
}

int
store_history_get(struct store_txn *txn, uint64_t id,
		  struct store_history_entry *e, struct rba_detail *d)
{
	MDB_val k, v;
	uint8_t key[8];
	uint8_t *copy;
	int rc = store_txn_check(txn, d);

	memset(e, 0, sizeof(*e));
	if (rc != 0)
		return rc;
	store_be64(key, id);
	rc = store_get(txn, DB_HISTORY, key, 8, &v, d);
	if (rc == RBA_E_NOTFOUND)
		return rba_fail(d, rc, NULL, 0, 0, "no history record %llu",
				(unsigned long long)id);
	if (rc != 0)
		return rc;
	k.mv_data = key;
	k.mv_size = 8;
	rc = history_decode(&k, &v, e, d);
	if (rc != 0) {
		memset(e, 0, sizeof(*e));
		return rc;
	}
	copy = malloc(e->len + 1);
	if (copy == NULL) {
		memset(e, 0, sizeof(*e));
		return RBA_E_NOMEM;
	}
	memcpy(copy, e->record, e->len);
	copy[e->len] = 0;
	e->record = copy;
	return 0;
}

void
store_history_entry_release(struct store_history_entry *e)
{
	if (e == NULL)
		return;
	free(e->record);
	memset(e, 0, sizeof(*e));
}

static int
chain_broken(struct rba_detail *d, uint64_t *first_bad, uint64_t id,
	     const char *why)
{
	if (first_bad != NULL)
		*first_bad = id;
	return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
			"tampered: history record %llu %s",
			(unsigned long long)id, why);
}

int
store_history_verify(struct store_txn *txn, uint64_t *first_bad_id,
		     uint64_t *count, struct rba_detail *d)
{
	struct store_history_entry e;
	struct rba_digest prev, head_dg;
	MDB_cursor *cur;
	MDB_val k, v;
	uint64_t want = 1, head_id = 0, n = 0;
	int rc = store_txn_check(txn, d), mrc, has_head;

	if (first_bad_id != NULL)
		*first_bad_id = 0;
	if (count != NULL)
		*count = 0;
	if (rc != 0)
		return rc;
	memset(&prev, 0, sizeof(prev));
	{
		/* The count is of the records held, also when the chain
		 * breaks before the last. */
		MDB_stat ms;
		if (count != NULL &&
		    mdb_stat(txn->t, store_dbi(txn, DB_HISTORY), &ms) == 0)
			*count = ms.ms_entries;
	}
	mrc = mdb_cursor_open(txn->t, store_dbi(txn, DB_HISTORY), &cur);
	if (mrc != 0)
		return store_mdb_fail(d, mrc, "reading the history");
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		rc = history_decode(&k, &v, &e, d);
		if (rc != 0 && e.id == 0)
			e.id = want;
		if (rc != 0) {
			rc = chain_broken(d, first_bad_id, e.id,
					  rc == RBA_E_TAMPERED
						  ? "does not match its digest"
						  : "cannot be decoded");
			break;
		}
		if (e.id != want) {
			rc = chain_broken(d, first_bad_id, want, "is missing");
			break;
		}
		if (!rba_digest_equal(&e.prev, &prev)) {
			rc = chain_broken(d, first_bad_id, e.id,
					  "does not link to the record before "
					  "it");
			break;
		}
		prev = e.digest;
		want++;
		n++;
	}
	mdb_cursor_close(cur);
	if (rc != 0)
		return rc;
	if (mrc != MDB_NOTFOUND)
		return store_mdb_fail(d, mrc, "reading the history");
	rc = head_read(txn, &has_head, &head_id, &head_dg, d);
	if (rc != 0)
		return chain_broken(d, first_bad_id, n, "head is unreadable");
	if (!has_head && n > 0)
		return chain_broken(d, first_bad_id, n,
				    "is not the recorded head");
	if (has_head && (head_id != n || !rba_digest_equal(&head_dg, &prev))) {
		if (head_id > n)
			return chain_broken(d, first_bad_id, n + 1,
					    "is missing (the history was cut "
					    "short)");
		return chain_broken(d, first_bad_id, head_id ? head_id : 1,
				    "is not the recorded head");
	}
	return 0;
}

int
store_history_head(struct store_txn *txn, uint64_t *id,
		   struct rba_digest *digest, struct rba_detail *d)
{
	int has, rc = store_txn_check(txn, d);

	*id = 0;
	memset(digest, 0, sizeof(*digest));
	if (rc == 0)
		rc = head_read(txn, &has, id, digest, d);
	return rc;
}
