/*
 * fleet.c - shard selection, worker records and their import
 * (fleet/fleet.h).
 */
#include "fleet/fleet.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/record.h"
#include "evidence/evidence.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "common/strv.h"
#include "common/utf8.h"

uint32_t
fleet_shard_of(const char *name, uint32_t n)
{
	struct rba_digest dg;
	uint64_t v = 0;

	assert(n >= 1);
	rba_digest_bytes(name, strlen(name), &dg);
	for (int i = 0; i < 8; i++)
		v = (v << 8) | dg.b[i];
	return (uint32_t)(v % n);
}

int
fleet_shard_parse(const char *s, uint32_t *k, uint32_t *n)
{
	unsigned long long a, b;
	int used = 0;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	if (sscanf(s, "%llu/%llu%n", &a, &b, &used) != 2 || s[used] != 0 ||
	    strchr(s, '+') || strchr(s, '-') || strchr(s, ' ') ||
	    b < 1 || b > FLEET_SHARDS_MAX || a >= b)
		return -1;
	{
		const char *slash = strchr(s, '/');
		if (slash[1] < '0' || slash[1] > '9')
			return -1;
	}
	*k = (uint32_t)a;
	*n = (uint32_t)b;
	return 0;
}

static int
has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a > b && strcmp(s + a - b, suf) == 0;
}

static void
comment_format(const char *version, const char *verdict, const char *shard,
	       const char *store_id, const char *head, char *out, size_t cap)
{
	snprintf(out, cap, FLEET_COMMENT_PREFIX "version %s verdict %s shard %s "
		 "store %s head %s", version, verdict, shard, store_id, head);
}

/* ---- reading a record ------------------------------------------------ */

/*
 * What a record file says, once its signature verified: its audit
 * record read by the record's own decoder (audit/record.h), the texts
 * below borrowed from that view, and the worker member (fleet.h), which
 * is the worker record's own.  Release with parsed_release.
 */
struct parsed {
	struct audit_record rec;
	const char *version, *verdict, *time, *store_id, *head, *shard, *key_id;
	const char *artifact, *sample, *policy; /* NULL: null in the record */
	double head_id;
	uint64_t exit_status;
};

static void
parsed_release(struct parsed *p)
{
	audit_record_release(&p->rec);
}

/* The worker member, read by name: 0, or -1 when it is not one of
 * FLEET_WORKER_SCHEMA. */
static int
worker_parse(const struct rba_json_value *root, struct parsed *p)
{
	const struct rba_json_value *w = rba_json_get(root, "worker");
	const char *schema = rba_json_get_str(w, "schema");

	if (w == NULL || w->type != RBA_JSON_OBJECT || schema == NULL ||
	    strcmp(schema, FLEET_WORKER_SCHEMA) != 0)
		return -1;
	p->store_id = rba_json_get_str(w, "store_id");
	p->head = rba_json_get_str(w, "snapshot_head");
	p->head_id = rba_json_get_num(w, "snapshot_head_id", -1);
	p->shard = rba_json_get_str(w, "shard");
	p->key_id = rba_json_get_str(w, "key_id");
	return 0;
}

/*
 * root's audit record through audit_record_decode, and its worker
 * member.  0; or RBA_E_SCHEMA (RBA_E_NOMEM) with why filled.  Release p
 * either way; it borrows root's texts until root is released.
 *
 * A record the decoder refuses is refused here with the decoder's
 * words: "not a worker record: ..." when it stops before the members
 * the import needs (version, time, verdict, exit status), else
 * "inconsistent: ...", the words evidence_record_check gives the same
 * record later in the import.
 */
static int
record_parse(const struct rba_json_value *root, struct parsed *p, char *why,
	     size_t cap)
{
	const struct audit_record *v = &p->rec;
	struct rba_detail d;
	int err;

	memset(p, 0, sizeof(*p));
	rba_detail_clear(&d);
	err = audit_record_decode(root, "the audit record", &p->rec, &d);
	if (v->schema == NULL || strcmp(v->schema, AUDIT_RECORD_SCHEMA) != 0) {
		snprintf(why, cap, "not an audit record of schema %s",
			 AUDIT_RECORD_SCHEMA);
		return RBA_E_SCHEMA;
	}
	if (worker_parse(root, p) != 0) {
		snprintf(why, cap, "not a worker record: no 'worker' member of "
			 "schema %s", FLEET_WORKER_SCHEMA);
		return RBA_E_SCHEMA;
	}
	if (err == RBA_E_NOMEM) {
		snprintf(why, cap, "cannot check it: %s", rba_strerror(err));
		return err;
	}
	p->version = v->version;
	p->verdict = v->verdict;
	p->time = v->time;
	p->exit_status = v->exit_status;
	p->artifact = v->digests.artifact_pinned;
	p->sample = v->digests.sample;
	p->policy = v->digests.policy;
	if (err != 0 && (p->version == NULL || p->verdict == NULL ||
			 p->time == NULL ||
			 p->exit_status == AUDIT_RECORD_INT_NONE)) {
		snprintf(why, cap, "not a worker record: %s", d.reason);
		return RBA_E_SCHEMA;
	}
	if (p->store_id == NULL || p->head == NULL || p->shard == NULL ||
	    p->key_id == NULL || p->head_id < 0 || p->exit_status > 2 ||
	    strlen(p->version) > STORE_VERSION_NAME_MAX) {
		snprintf(why, cap, "not a worker record: a member is missing or "
			 "of the wrong type");
		return RBA_E_SCHEMA;
	}
	if (err != 0) {
		snprintf(why, cap, "inconsistent: %s", d.reason);
		return RBA_E_SCHEMA;
	}
	if (strcmp(p->verdict, "not-measured") != 0 &&
	    (p->artifact == NULL || p->sample == NULL || p->policy == NULL)) {
		snprintf(why, cap, "a verdict without the artifact, sample or "
			 "policy digest it was reached with");
		return RBA_E_SCHEMA;
	}
	return 0;
}

/* Reads a file of at most max bytes; 0 or an errno / RBA_E_LIMIT. */
static int
slurp(const char *path, size_t max, uint8_t **p, size_t *n)
{
	return rba_file_read(path, max, p, n, NULL);
}

/*
 * Verifies path (bytes b, n) and its signature with keys: 0 and *which;
 * or -1 with why and *err.
 */
static int
sig_check(const char *path, const uint8_t *b, size_t n,
	  const struct sign_pubkey *keys, size_t nkeys, size_t *which,
	  struct sign_check *chk, int *err, char *why, size_t cap)
{
	char sigpath[FLEET_PATH_MAX + 600];
	uint8_t *sig = NULL;
	size_t slen;
	int rc;

	snprintf(sigpath, sizeof(sigpath), "%s%s", path, FLEET_SIG_SUFFIX);
	rc = slurp(sigpath, SIGN_SIGFILE_MAX, &sig, &slen);
	if (rc != 0) {
		*err = rc == ENOENT ? RBA_E_BADSIG : rc;
		snprintf(why, cap, rc == ENOENT ? "no signature beside it ('%s')"
						: "cannot read its signature '%s'",
			 sigpath);
		return -1;
	}
	for (size_t i = 0; i < nkeys; i++) {
		struct rba_detail d;
		rba_detail_clear(&d);
		memset(chk, 0, sizeof(*chk));
		rc = sign_file_verify(&keys[i], b, n, sig, slen, chk, &d);
		if (rc == RBA_E_BADSIG && chk->failed == SIGN_FAILED_KEYID)
			continue;
		free(sig);
		if (rc == 0) {
			*which = i;
			return 0;
		}
		*err = rc;
		if (rc == RBA_E_BADSIG)
			snprintf(why, cap, "the signature does not verify: the "
				 "record or its signature was changed (%.200s)",
				 d.reason);
		else
			snprintf(why, cap, "its signature file is malformed: %.200s",
				 d.reason);
		return -1;
	}
	free(sig);
	*err = RBA_E_BADSIG;
	{
		char id[SIGN_KEYID_TEXT_LEN + 1];
		sign_keyid_format(chk->keyid, id);
		snprintf(why, cap, "signed by key %s, which is not a worker key "
			 "given with -p", id);
	}
	return -1;
}

/* ---- the worker side --------------------------------------------------- */

struct namelist {
	char **v;
	size_t n, cap;
};

static int
names_add(struct namelist *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **nv = realloc(l->v, cap * sizeof(*nv));
		if (nv == NULL)
			return RBA_E_NOMEM;
		l->v = nv;
		l->cap = cap;
	}
	if ((l->v[l->n] = strdup(s)) == NULL)
		return RBA_E_NOMEM;
	l->n++;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
done_scan(const struct fleet_worker *w, const char *dir,
	  const struct sign_pubkey *pub, struct namelist *l,
	  struct rba_detail *d)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char head[RBA_DIGEST_TEXT_LEN + 1];
	int err = 0;

	if (dp == NULL)
		return errno == ENOENT ? 0 : rba_fail(d, errno, dir, 0, 0,
						      "cannot read directory");
	rba_digest_format(&w->snap.head, head);
	while (err == 0 && (e = readdir(dp)) != NULL) {
		char path[FLEET_PATH_MAX + 600], why[64];
		struct rba_json_value root;
		struct sign_check chk;
		struct parsed p;
		uint8_t *b = NULL;
		size_t n, which;
		int serr;

		if (e->d_name[0] == '.' || !has_suffix(e->d_name, FLEET_RECORD_SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (slurp(path, STORE_RECORD_MAX, &b, &n) != 0)
			continue;
		if (sig_check(path, b, n, pub, 1, &which, &chk, &serr, why,
			      sizeof(why)) == 0 &&
		    rba_json_parse((const char *)b, n, &root, NULL) == 0) {
			if (record_parse(&root, &p, why, sizeof(why)) == 0 &&
			    strcmp(p.store_id, w->snap.store_id) == 0 &&
			    strcmp(p.head, head) == 0)
				err = names_add(l, p.version);
			parsed_release(&p);
			rba_json_release(&root);
		}
		free(b);
	}
	closedir(dp);
	return err;
}

int
fleet_records_done(const struct fleet_worker *w, char ***names, size_t *n,
		   struct rba_detail *d)
{
	struct namelist l = { NULL, 0, 0 };
	struct sign_pubkey pub;
	char sub[FLEET_PATH_MAX + 64];
	int err;

	*names = NULL;
	*n = 0;
	sign_seckey_pubkey(w->key, &pub);
	snprintf(sub, sizeof(sub), "%s/%s", w->dir, FLEET_IMPORTED_DIR);
	err = done_scan(w, w->dir, &pub, &l, d);
	if (err == 0)
		err = done_scan(w, sub, &pub, &l, d);
	if (err != 0) {
		rba_strv_free(l.v, l.n);
		return err;
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), cmp_str);
	*names = l.v;
	*n = l.n;
	return 0;
}

static void
safe_name(const char *v, char *out, size_t cap)
{
	size_t i;

	for (i = 0; v[i] && i + 1 < cap; i++) {
		char c = v[i];
		int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '_' || c == '-' ||
			   (c == '.' && i > 0);
		out[i] = keep ? c : '_';
	}
	out[i] = 0;
}

int
fleet_record_write(const struct fleet_worker *w, const struct audit_report *r,
		   char *path, size_t cap, struct rba_detail *d)
{
	struct rba_buf b, sig;
	struct rba_json_w jw;
	struct audit_record rec;
	struct sign_pubkey pub;
	struct rba_digest dg;
	char head[RBA_DIGEST_TEXT_LEN + 1], hex[RBA_DIGEST_TEXT_LEN + 1];
	char keyid[SIGN_KEYID_TEXT_LEN + 1], shard[32], comment[1024];
	char name[STORE_VERSION_NAME_MAX + 1], file[FLEET_PATH_MAX + 600];
	char sigfile[FLEET_PATH_MAX + 700];
	int err, n;

	if (strlen(w->dir) > FLEET_PATH_MAX)
		return rba_fail(d, ENAMETOOLONG, w->dir, 0, 0, "path too long");
	if (mkdir(w->dir, 0755) != 0 && errno != EEXIST)
		return rba_fail(d, errno, w->dir, 0, 0,
				"cannot create the records directory: %s",
				strerror(errno));
	sign_seckey_pubkey(w->key, &pub);
	sign_keyid_format(pub.keyid, keyid);
	rba_digest_format(&w->snap.head, head);
	snprintf(shard, sizeof(shard), "%u/%u", w->k, w->n);
	rba_buf_init(&b);
	rba_buf_init(&sig);
	/* The audit record with the worker member last. */
	if ((err = audit_record_from_report(r, &rec)) == 0) {
		rba_json_w_init(&jw, &b);
		rba_json_w_open(&jw, NULL, '{');
		audit_record_encode_members(&rec, &jw);
		rba_json_w_open(&jw, "worker", '{');
		rba_json_w_str(&jw, "schema", FLEET_WORKER_SCHEMA);
		rba_json_w_str(&jw, "store_id", w->snap.store_id);
		rba_json_w_u64(&jw, "snapshot_head_id", w->snap.head_id);
		rba_json_w_str(&jw, "snapshot_head", head);
		rba_json_w_str(&jw, "shard", shard);
		rba_json_w_str(&jw, "key_id", keyid);
		rba_json_w_close(&jw, '}');
		rba_json_w_close(&jw, '}');
	}
	audit_record_release(&rec);
	if (err != 0)
		goto out;
	if ((err = rba_buf_status(&b)) != 0)
		goto out;
	comment_format(r->version, audit_verdict_name(r->verdict), shard,
		       w->snap.store_id, head, comment, sizeof(comment));
	if ((err = sign_file_sign(w->key, b.p, b.len, NULL, comment, &sig, d)) != 0)
		goto out;
	rba_digest_bytes(b.p, b.len, &dg);
	rba_digest_format(&dg, hex);
	safe_name(r->version, name, sizeof(name));
	n = snprintf(file, sizeof(file), "%s/%s.%.16s%s", w->dir, name, hex + 7,
		     FLEET_RECORD_SUFFIX);
	if (n < 0 || (size_t)n >= sizeof(file)) {
		err = rba_fail(d, ENAMETOOLONG, w->dir, 0, 0, "path too long");
		goto out;
	}
	snprintf(sigfile, sizeof(sigfile), "%s%s", file, FLEET_SIG_SUFFIX);
	/* The signature first: a record is never seen without it. */
	if ((err = rba_file_write_atomic(sigfile, sig.p, sig.len, 0644)) != 0 ||
	    (err = rba_file_write_atomic(file, b.p, b.len, 0644)) != 0) {
		rba_fail(d, err, sigfile, 0, 0, "cannot write the record: %s",
			 strerror(err));
		goto out;
	}
	if (path != NULL)
		snprintf(path, cap, "%s", file);
out:
	rba_buf_release(&b);
	rba_buf_release(&sig);
	return err;
}

/* ---- the import ---------------------------------------------------------- */

struct files {
	struct fleet_item *v;
	size_t n, cap;
};

static int
files_scan(const char *dir, struct files *f, struct rba_detail *d)
{
	DIR *dp;
	struct dirent *e;

	if (strlen(dir) > FLEET_PATH_MAX)
		return rba_fail(d, ENAMETOOLONG, dir, 0, 0, "path too long");
	if ((dp = opendir(dir)) == NULL)
		return rba_fail(d, errno, dir, 0, 0, "cannot read the records "
				"directory: %s", strerror(errno));
	while ((e = readdir(dp)) != NULL) {
		struct stat st;
		char path[FLEET_PATH_MAX + 600];
		if (e->d_name[0] == '.' || !has_suffix(e->d_name, FLEET_RECORD_SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (f->n == FLEET_FILES_MAX) {
			closedir(dp);
			return rba_fail(d, RBA_E_LIMIT, dir, 0, 0, "more than %u "
					"record files", FLEET_FILES_MAX);
		}
		if (f->n == f->cap) {
			size_t cap = f->cap ? 2 * f->cap : 32;
			struct fleet_item *nv = realloc(f->v, cap * sizeof(*nv));
			if (nv == NULL) {
				closedir(dp);
				return RBA_E_NOMEM;
			}
			f->v = nv;
			f->cap = cap;
		}
		memset(&f->v[f->n], 0, sizeof(f->v[0]));
		if ((f->v[f->n].path = strdup(path)) == NULL) {
			closedir(dp);
			return RBA_E_NOMEM;
		}
		f->n++;
	}
	closedir(dp);
	return 0;
}

static void
refuse(struct fleet_item *it, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
refuse(struct fleet_item *it, int err, const char *fmt, ...)
{
	va_list ap;

	it->accepted = 0;
	it->err = err;
	va_start(ap, fmt);
	vsnprintf(it->reason, sizeof(it->reason), fmt, ap);
	va_end(ap);
}

/* The version a file names, read without trusting it (it->claimed). */
static void
item_claim(struct fleet_item *it)
{
	struct rba_json_value root;
	const char *v;

	if (rba_json_parse((const char *)it->bytes, it->len, &root, NULL) != 0)
		return;
	v = rba_json_get_str(&root, "version");
	if (v != NULL && strlen(v) <= STORE_VERSION_NAME_MAX)
		snprintf(it->claimed, sizeof(it->claimed), "%s", v);
	rba_json_release(&root);
}

/* Everything that needs no store: the file, its signature, its shape. */
static void
item_load(struct fleet_item *it, const struct sign_pubkey *keys, size_t nkeys)
{
	struct rba_json_value root;
	struct sign_check chk;
	struct parsed p;
	/* a detail's reason (384) after "not a worker record: " */
	char why[384 + 32], comment[SIGN_TRUSTED_COMMENT_MAX + 1];
	size_t which;
	int rc;

	rc = slurp(it->path, STORE_RECORD_MAX, &it->bytes, &it->len);
	if (rc != 0) {
		refuse(it, rc, "cannot read it: %s", rba_strerror(rc));
		return;
	}
	rba_digest_bytes(it->bytes, it->len, &it->digest);
	item_claim(it);
	if (sig_check(it->path, it->bytes, it->len, keys, nkeys, &which, &chk,
		      &rc, why, sizeof(why)) != 0) {
		refuse(it, rc, "%s", why);
		return;
	}
	if (rba_json_parse((const char *)it->bytes, it->len, &root, NULL) != 0) {
		refuse(it, RBA_E_SCHEMA, "not a worker record: not JSON");
		return;
	}
	if ((rc = record_parse(&root, &p, why, sizeof(why))) != 0) {
		refuse(it, rc, "%s", why);
		goto out;
	}
	snprintf(it->version, sizeof(it->version), "%s", p.version);
	snprintf(it->verdict, sizeof(it->verdict), "%s", p.verdict);
	it->exit_status = (int)p.exit_status;
	it->head_id = (uint64_t)p.head_id;
	{
		uint32_t k, n;
		if (fleet_shard_parse(p.shard, &k, &n) != 0 ||
		    rba_digest_parse(p.head, &it->head) != 0 ||
		    rba_time_parse_utc(p.time, strlen(p.time), &it->time) != 0) {
			refuse(it, RBA_E_SCHEMA, "not a worker record: a malformed "
			       "shard, head or time");
			goto out;
		}
		it->shard_n = n;
	}
	comment_format(p.version, p.verdict, p.shard, p.store_id, p.head, comment,
		       sizeof(comment));
	if (strcmp(comment, chk.trusted_comment) != 0) {
		refuse(it, RBA_E_BADSIG, "its trusted comment does not match the "
		       "record");
		goto out;
	}
	{
		char id[SIGN_KEYID_TEXT_LEN + 1];
		sign_keyid_format(keys[which].keyid, id);
		if (strcmp(id, p.key_id) != 0) {
			refuse(it, RBA_E_BADSIG, "it names key %s but was signed "
			       "by %s", p.key_id, id);
			goto out;
		}
	}
	/* The rules export and verify apply (evidence_record_check): a
	 * record that contradicts itself never enters the history. */
	{
		struct rba_detail d;
		rba_detail_clear(&d);
		rc = evidence_record_check(it->bytes, it->len, &d);
		if (rc == RBA_E_NOMEM) {
			refuse(it, rc, "cannot check it: %s", rba_strerror(rc));
			goto out;
		}
		if (rc != 0) {
			refuse(it, rc, "%s: %s", rc == RBA_E_NEWER ? "cannot check it"
							  : "inconsistent", d.reason);
			goto out;
		}
	}
	it->parsed = 1;
out:
	parsed_release(&p);
	rba_json_release(&root);
}

static int
cmp_item(const void *va, const void *vb)
{
	const struct fleet_item *a = va, *b = vb;
	int c = strcmp(a->version, b->version);

	if (c == 0)
		c = memcmp(a->digest.b, b->digest.b, RBA_DIGEST_LEN);
	if (c == 0)
		c = strcmp(a->path, b->path);
	return c;
}

/* What the history already holds: every record's text digest and, for
 * imported worker records, the version and snapshot head. */
struct held {
	uint64_t id;
	struct rba_digest text; /* SHA-256 of the record's bytes */
	int audit;		/* an audit record (local or a worker's) */
	int worker;
	char version[STORE_VERSION_NAME_MAX + 1];
	struct rba_digest head;
	uint64_t head_id; /* a worker record's snapshot head record */
	uint32_t shard_n; /* its N, 0 unknown */
};

struct heldlist {
	struct held *v;
	size_t n, cap;
};

static int
contains(const uint8_t *p, size_t n, const char *needle)
{
	size_t m = strlen(needle);

	for (size_t i = 0; i + m <= n; i++)
		if (p[i] == (uint8_t)needle[0] && memcmp(p + i, needle, m) == 0)
			return 1;
	return 0;
}

/* How every audit record of any version of this tool begins. */
#define AUDIT_RECORD_START "{\"schema\": \"rebuild-audit/audit/"

static int
held_one(void *ctx, const struct store_history_entry *e)
{
	struct heldlist *l = ctx;
	struct rba_json_value root;
	struct held *h;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct held *nv = realloc(l->v, cap * sizeof(*nv));
		if (nv == NULL)
			return RBA_E_NOMEM;
		l->v = nv;
		l->cap = cap;
	}
	h = &l->v[l->n++];
	memset(h, 0, sizeof(*h));
	h->id = e->id;
	rba_digest_bytes(e->record, e->len, &h->text);
	snprintf(h->version, sizeof(h->version), "%s", e->version);
	/* Every audit record starts with its schema (audit_report_json). */
	h->audit = e->len >= sizeof(AUDIT_RECORD_START) - 1 &&
		   memcmp(e->record, AUDIT_RECORD_START,
			  sizeof(AUDIT_RECORD_START) - 1) == 0;
	/* Only records that say they came from a worker are parsed. */
	if (contains(e->record, e->len, FLEET_WORKER_SCHEMA) &&
	    rba_json_parse((const char *)e->record, e->len, &root, NULL) == 0) {
		const struct rba_json_value *w = rba_json_get(&root, "worker");
		const char *hd = rba_json_get_str(w, "snapshot_head");
		const char *sh = rba_json_get_str(w, "shard");
		double hid = rba_json_get_num(w, "snapshot_head_id", -1);
		uint32_t k;
		if (hd != NULL && rba_digest_parse(hd, &h->head) == 0)
			h->worker = 1;
		if (hid >= 0)
			h->head_id = (uint64_t)hid;
		if (sh != NULL && fleet_shard_parse(sh, &k, &h->shard_n) != 0)
			h->shard_n = 0;
		rba_json_release(&root);
	}
	return 0;
}

struct heads {
	struct rba_digest *v;
	size_t n, cap;
};

static int
heads_add(struct heads *hs, const struct rba_digest *h)
{
	for (size_t i = 0; i < hs->n; i++)
		if (rba_digest_equal(&hs->v[i], h))
			return 0;
	if (hs->n == hs->cap) {
		size_t cap = hs->cap ? 2 * hs->cap : 4;
		struct rba_digest *nv = realloc(hs->v, cap * sizeof(*nv));
		if (nv == NULL)
			return RBA_E_NOMEM;
		hs->v = nv;
		hs->cap = cap;
	}
	hs->v[hs->n++] = *h;
	return 0;
}

static int
heads_has(const struct heads *hs, const struct rba_digest *h)
{
	for (size_t i = 0; i < hs->n; i++)
		if (rba_digest_equal(&hs->v[i], h))
			return 1;
	return 0;
}

static int
digest_text_is(const char *text, const struct rba_digest *dg)
{
	struct rba_digest got;

	return text != NULL && rba_digest_parse(text, &got) == 0 &&
	       rba_digest_equal(&got, dg);
}

/*
 * What the record audited is what version v holds now: its artifact,
 * its policy, its sample.  0, or 1 refused.
 */
static int
item_matches_version(struct store_txn *txn, struct fleet_item *it,
		     const struct parsed *p, const struct store_version *v)
{
	struct store_sample_info si;
	struct rba_detail d;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	if (p->artifact != NULL && !digest_text_is(p->artifact, &v->artifact)) {
		rba_digest_format(&v->artifact, hex);
		refuse(it, RBA_E_SCHEMA, "it audited artifact %s but version '%s' "
		       "holds %s", p->artifact, it->version, hex);
		return 1;
	}
	if (p->policy != NULL &&
	    (!v->has_policy || !digest_text_is(p->policy, &v->policy_digest))) {
		refuse(it, RBA_E_SCHEMA, "it was decided under policy %s, which "
		       "is not the policy version '%s' holds", p->policy,
		       it->version);
		return 1;
	}
	if (p->sample == NULL)
		return 0;
	rba_detail_clear(&d);
	err = store_sample_info(txn, it->version, &si, &d);
	if (err != 0 || !digest_text_is(p->sample, &si.digest)) {
		refuse(it, RBA_E_SCHEMA, "it scored sample %s, which is not "
		       "the sample version '%s' holds", p->sample,
		       it->version);
		if (err == 0)
			store_sample_info_release(&si);
		return 1;
	}
	store_sample_info_release(&si);
	return 0;
}

/*
 * The snapshot head the record was made against is a record this
 * store's history holds; it joins hs.  0, 1 refused, or RBA_E_NOMEM.
 */
static int
item_head_held(struct store_txn *txn, struct fleet_item *it,
	       const struct parsed *p, struct heads *hs)
{
	static const struct rba_digest zero;
	struct rba_detail d;
	int held = 0;

	if (it->head_id == 0) {
		held = rba_digest_equal(&it->head, &zero);
	} else {
		struct store_history_entry e;
		rba_detail_clear(&d);
		if (store_history_get(txn, it->head_id, &e, &d) == 0) {
			held = rba_digest_equal(&e.digest, &it->head);
			store_history_entry_release(&e);
		}
	}
	if (!held) {
		refuse(it, RBA_E_SCHEMA, "made against snapshot head record "
		       "%llu %s, which this store's history does not hold",
		       (unsigned long long)it->head_id, p->head);
		return 1;
	}
	return heads_add(hs, &it->head);
}

/*
 * The record is new: not imported before, not the same as an earlier
 * item, not a second audit of its version against its snapshot head,
 * and not older than an audit of its version the history holds.  0, or
 * 1 refused.
 */
static int
item_is_new(struct fleet_item *it, const struct heldlist *hl,
	    const struct fleet_item *items, size_t idx)
{
	for (size_t i = 0; i < hl->n; i++)
		if (rba_digest_equal(&hl->v[i].text, &it->digest)) {
			refuse(it, RBA_E_EXISTS, "already imported as history "
			       "record %llu", (unsigned long long)hl->v[i].id);
			return 1;
		}
	for (size_t i = 0; i < idx; i++)
		if (rba_digest_equal(&items[i].digest, &it->digest)) {
			refuse(it, RBA_E_EXISTS, "the same record as '%s'",
			       items[i].path);
			return 1;
		}
	for (size_t i = 0; i < hl->n; i++)
		if (hl->v[i].worker && strcmp(hl->v[i].version, it->version) == 0 &&
		    rba_digest_equal(&hl->v[i].head, &it->head)) {
			refuse(it, RBA_E_EXISTS, "version '%s' already has an "
			       "imported audit against this snapshot head "
			       "(history record %llu)", it->version,
			       (unsigned long long)hl->v[i].id);
			return 1;
		}
	for (size_t i = 0; i < idx; i++)
		if (items[i].accepted && strcmp(items[i].version, it->version) == 0 &&
		    rba_digest_equal(&items[i].head, &it->head)) {
			refuse(it, RBA_E_EXISTS, "another record of version '%s' "
			       "against the same snapshot head is imported ('%s')",
			       it->version, items[i].path);
			return 1;
		}
	/* An audit of an older snapshot than an audit the history holds
	 * would become the version's latest: what export signs and a
	 * dispute stands on. */
	for (size_t i = hl->n; i-- > 0;)
		if (hl->v[i].audit && hl->v[i].id > it->head_id &&
		    strcmp(hl->v[i].version, it->version) == 0) {
			refuse(it, RBA_E_EXISTS, "an audit of version '%s' was "
			       "committed after the snapshot it was made from "
			       "(history record %llu, after snapshot head record "
			       "%llu): imported, the older audit would become the "
			       "version's latest", it->version,
			       (unsigned long long)hl->v[i].id,
			       (unsigned long long)it->head_id);
			it->superseded = 1;
			return 1;
		}
	return 0;
}

/*
 * The checks against the store of one loaded item, in write transaction
 * txn.  0: accepted (not yet appended); 1: refused; <0 or errno: the
 * store failed (the import stops).
 */
static int
item_check(struct store_txn *txn, struct store *s, struct fleet_item *it,
	   const struct heldlist *hl, const struct fleet_item *items, size_t idx,
	   struct heads *hs)
{
	struct rba_json_value root;
	struct store_version v;
	struct rba_detail d;
	struct parsed p;
	char why[64];
	int err, ret = 1;

	if (rba_json_parse((const char *)it->bytes, it->len, &root, NULL) != 0)
		return RBA_E_NOMEM; /* parsed once already */
	if (record_parse(&root, &p, why, sizeof(why)) != 0) {
		ret = RBA_E_NOMEM; /* read once already: only memory fails */
		goto out;
	}
	if (strcmp(p.store_id, store_id_hex(s)) != 0) {
		refuse(it, RBA_E_SCHEMA, "made against another store (%s; this "
		       "store is %s)", p.store_id, store_id_hex(s));
		goto out;
	}
	rba_detail_clear(&d);
	err = store_version_get(txn, it->version, &v, &d);
	if (err == RBA_E_NOTFOUND) {
		refuse(it, RBA_E_NOTFOUND, "no version '%s' in this store",
		       it->version);
		goto out;
	}
	if (err != 0) {
		refuse(it, err, "cannot read version '%s': %s", it->version,
		       d.reason);
		goto out;
	}
	if ((ret = item_matches_version(txn, it, &p, &v)) == 0 &&
	    (ret = item_head_held(txn, it, &p, hs)) == 0)
		ret = item_is_new(it, hl, items, idx);
	store_version_release(&v);
out:
	parsed_release(&p);
	rba_json_release(&root);
	return ret;
}

struct expect {
	struct namelist names;
};

static int
expect_one(void *ctx, const char *name, int valid)
{
	struct expect *x = ctx;

	return valid ? names_add(&x->names, name) : 0;
}

/* Moves an imported record and its signature into imported/. */
static int
item_move(const struct fleet_item *it)
{
	char dir[FLEET_PATH_MAX + 600], sub[FLEET_PATH_MAX + 700];
	char to[FLEET_PATH_MAX + 1400], from_sig[FLEET_PATH_MAX + 700];
	char to_sig[FLEET_PATH_MAX + 1500];
	const char *base, *slash = strrchr(it->path, '/');

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - it->path) : 1,
		 slash ? it->path : ".");
	base = slash ? slash + 1 : it->path;
	snprintf(sub, sizeof(sub), "%s/%s", dir, FLEET_IMPORTED_DIR);
	if (mkdir(sub, 0755) != 0 && errno != EEXIST)
		return errno;
	snprintf(to, sizeof(to), "%s/%s", sub, base);
	snprintf(from_sig, sizeof(from_sig), "%s%s", it->path, FLEET_SIG_SUFFIX);
	snprintf(to_sig, sizeof(to_sig), "%s%s", to, FLEET_SIG_SUFFIX);
	/* The record first: a signature left alone is ignored. */
	if (rename(it->path, to) != 0 || rename(from_sig, to_sig) != 0)
		return errno;
	return rba_fsync_parent(to);
}

static int
worst_rank(int verdict)
{
	switch (verdict) {
	case AUDIT_BIT_IDENTICAL: return 0;
	case AUDIT_METRIC_EQUIVALENT: return 1;
	case AUDIT_NOT_REPRODUCIBLE: return 2;
	default: return 3;
	}
}

static int
verdict_of(const char *name)
{
	for (int v = AUDIT_NOT_MEASURED; v <= AUDIT_NOT_REPRODUCIBLE; v++)
		if (strcmp(audit_verdict_name(v), name) == 0)
			return v;
	return AUDIT_NOT_MEASURED;
}

/*
 * An earlier import's record, rec, into the verdict and exit status the
 * earlier imports reached: read by the record's decoder, as far as it
 * decodes (the verdict and the exit status come first; an exit status
 * it cannot read counts as 2).
 */
static void
earlier_add(struct fleet_import *im, const struct rba_json_value *rec)
{
	struct audit_record v;
	struct rba_detail d;
	int x, vv;

	rba_detail_clear(&d);
	(void)audit_record_decode(rec, "the audit record", &v, &d);
	x = v.exit_status == AUDIT_RECORD_INT_NONE || v.exit_status > INT_MAX
		    ? 2 : (int)v.exit_status;
	vv = verdict_of(v.verdict ? v.verdict : "");
	if (x > im->earlier_exit)
		im->earlier_exit = x;
	if (im->earlier_worst < 0 ||
	    worst_rank(vv) > worst_rank(im->earlier_worst))
		im->earlier_worst = vv;
	audit_record_release(&v);
}

/*
 * The records of dir/imported/ that the history holds byte for byte
 * (imported before): their snapshot heads into eh, their count, worst
 * verdict and exit status into im->earlier*, their first held entry's
 * index into *first (or left).  A file that cannot be read or is not
 * held is ignored: it proves nothing.  0 or RBA_E_NOMEM.
 */
static int
earlier_scan(const char *dir, const struct heldlist *hl, struct heads *eh,
	     struct fleet_import *im, size_t *first)
{
	char sub[FLEET_PATH_MAX + 64];
	struct files f = { NULL, 0, 0 };
	struct rba_detail d;
	int err = 0;

	snprintf(sub, sizeof(sub), "%s/%s", dir, FLEET_IMPORTED_DIR);
	rba_detail_clear(&d);
	if (files_scan(sub, &f, &d) != 0) {
		err = 0; /* none: nothing imported before */
		goto out;
	}
	for (size_t i = 0; err == 0 && i < f.n; i++) {
		struct rba_digest dg;
		uint8_t *b = NULL;
		size_t n;
		if (slurp(f.v[i].path, STORE_RECORD_MAX, &b, &n) != 0)
			continue;
		rba_digest_bytes(b, n, &dg);
		for (size_t j = 0; j < hl->n; j++)
			if (hl->v[j].worker && rba_digest_equal(&hl->v[j].text, &dg)) {
				struct rba_json_value root;
				if ((err = heads_add(eh, &hl->v[j].head)) != 0)
					break;
				if (*first == (size_t)-1)
					*first = j;
				im->earlier++;
				/* The history holds these bytes: they were
				 * checked when they were imported. */
				if (rba_json_parse((const char *)b, n, &root, NULL) == 0) {
					earlier_add(im, &root);
					rba_json_release(&root);
				}
				break;
			}
		free(b);
	}
out:
	for (size_t i = 0; i < f.n; i++)
		free(f.v[i].path);
	free(f.v);
	return err;
}

static int
cmp_key_name(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* The shards of the missing versions by the workers' rule, after the
 * import committed (fleet_plan_make reads in a transaction of its own). */
static void
missing_shards(struct store *s, struct fleet_import *im, uint32_t n,
	       uint64_t head_id, enum fleet_split split)
{
	struct fleet_plan p;

	if (n == 0 || im->nmissing == 0)
		return;
	if (fleet_plan_make(s, n, split, head_id, &p, NULL) == 0)
		for (size_t i = 0; i < im->nmissing; i++) {
			char **hit = bsearch(im->missing[i].version, p.names, p.n,
					     sizeof(*p.names), cmp_key_name);
			if (hit != NULL) {
				im->missing[i].n = n;
				im->missing[i].k = p.shard[hit - p.names];
			}
		}
	fleet_plan_release(&p);
}

/* What fleet_import_run holds from its first step to its last. */
struct import_run {
	struct store *s;
	struct fleet_import *im;
	struct rba_detail *d;
	struct store_txn *txn;
	struct heldlist hl; /* the history's records */
	struct heads hs;    /* the snapshot heads of this import's records */
	struct heads eh;    /* those of the records imported before */
	size_t first;	    /* hl's first record imported before, or -1 */
	struct expect x;    /* every version of the store */
	/* Do the records agree on the split and the snapshot head? */
	uint32_t shard_n;
	uint64_t head_id;
	int have_head, heads_agree, nagree;
};

/* The record files of dirs, each loaded and checked by its signature,
 * sorted as they will be appended, become im->items. */
static int
import_load(const char *const *dirs, size_t ndirs,
	    const struct sign_pubkey *keys, size_t nkeys,
	    struct fleet_import *im, struct rba_detail *d)
{
	struct files f = { NULL, 0, 0 };
	int err = 0;

	if (ndirs > 0 && (im->dirs = calloc(ndirs, sizeof(*im->dirs))) == NULL)
		return RBA_E_NOMEM; /* (fleet_import_run releases im) */
	im->ndirs = ndirs;
	for (size_t i = 0; i < ndirs && err == 0; i++) {
		size_t before = f.n;
		err = files_scan(dirs[i], &f, d);
		im->dirs[i].path = dirs[i];
		im->dirs[i].files = f.n - before;
	}
	if (err != 0) {
		for (size_t i = 0; i < f.n; i++) {
			free(f.v[i].path);
			free(f.v[i].bytes);
		}
		free(f.v);
		return err;
	}
	for (size_t i = 0; i < f.n; i++)
		item_load(&f.v[i], keys, nkeys);
	if (f.n > 1)
		qsort(f.v, f.n, sizeof(f.v[0]), cmp_item);
	im->items = f.v;
	im->nitems = f.n;
	return 0;
}

/* The chain the records are appended to is whole. */
static int
history_whole(struct store_txn *txn, struct rba_detail *d)
{
	uint64_t bad = 0;
	int err;

	if ((err = store_history_verify(txn, &bad, NULL, d)) == RBA_E_TAMPERED) {
		char why[sizeof(d->reason)];
		snprintf(why, sizeof(why), "%s", d->reason);
		snprintf(d->reason, sizeof(d->reason), "the history is "
			 "broken: %.300s; run 'rebuild-audit store "
			 "check'", why);
	}
	return err;
}

/*
 * Each loaded item checked against the store (item_check), then, of one
 * version's records against different snapshots, only the latest
 * snapshot's kept: appended after it, an older one would become the
 * version's latest.
 */
static int
import_check(struct import_run *a)
{
	struct fleet_import *im = a->im;
	int err;

	for (size_t i = 0; i < im->nitems; i++) {
		struct fleet_item *it = &im->items[i];
		if (!it->parsed)
			continue;
		err = item_check(a->txn, a->s, it, &a->hl, im->items, i, &a->hs);
		if (err < 0 || (err > 1))
			return err;
		if (err == 1)
			continue;
		it->accepted = 1; /* so far: the next pass may refuse it */
	}
	for (size_t i = 0; i < im->nitems; i++) {
		struct fleet_item *it = &im->items[i];
		for (size_t j = 0; j < im->nitems && it->accepted; j++) {
			const struct fleet_item *o = &im->items[j];
			if (j != i && o->accepted && o->head_id > it->head_id &&
			    strcmp(o->version, it->version) == 0)
				refuse(it, RBA_E_EXISTS, "a record of version '%s' "
				       "from a later snapshot (head record %llu) is "
				       "imported now ('%s'): imported after it, this "
				       "older audit would become the version's latest",
				       it->version, (unsigned long long)o->head_id,
				       o->path);
		}
	}
	return 0;
}

/* Whether the records agree on the shard count and the snapshot head;
 * with no new record, what the records imported before say. */
static void
import_agreement(struct import_run *a)
{
	const struct fleet_import *im = a->im;

	for (size_t i = 0; i < im->nitems; i++) {
		const struct fleet_item *it = &im->items[i];
		if (!it->parsed || it->shard_n == 0)
			continue;
		if (a->shard_n == 0)
			a->shard_n = it->shard_n;
		else if (a->shard_n != it->shard_n)
			a->nagree = 0;
		if (a->have_head && a->head_id != it->head_id)
			a->heads_agree = 0;
		a->head_id = it->head_id;
		a->have_head = 1;
	}
	/* Nothing new: what the records imported before say. */
	if (!a->have_head && a->first != (size_t)-1 && a->hl.v[a->first].shard_n) {
		a->shard_n = a->hl.v[a->first].shard_n;
		a->head_id = a->hl.v[a->first].head_id;
		a->have_head = a->eh.n == 1;
	}
}

/* Does the import, or the history against these snapshot heads, hold an
 * audit of version name?  (A newer audit than this import's record
 * counts.) */
static int
import_covers(const struct import_run *a, const char *name)
{
	const struct fleet_import *im = a->im;
	const struct heldlist *hl = &a->hl;

	for (size_t j = 0; j < im->nitems; j++)
		if ((im->items[j].accepted || im->items[j].superseded) &&
		    strcmp(im->items[j].version, name) == 0)
			return 1;
	for (size_t j = 0; j < hl->n; j++)
		if (hl->v[j].worker && strcmp(hl->v[j].version, name) == 0 &&
		    (heads_has(&a->hs, &hl->v[j].head) ||
		     heads_has(&a->eh, &hl->v[j].head)))
			return 1;
	return 0;
}

/* Every version of the store that no record covers becomes missing,
 * named refused when its record was refused. */
static int
import_missing(struct import_run *a)
{
	struct fleet_import *im = a->im;
	struct namelist *names = &a->x.names;

	for (size_t i = 0; i < names->n; i++) {
		const char *name = names->v[i];
		int refused = 0;
		if (import_covers(a, name))
			continue;
		/* Its record was refused: the history holds no audit of it
		 * for this snapshot all the same, and it is named as such. */
		for (size_t j = 0; j < im->nitems && !refused; j++)
			refused = !im->items[j].accepted &&
				  (strcmp(im->items[j].version, name) == 0 ||
				   strcmp(im->items[j].claimed, name) == 0);
		if (im->nmissing % 16 == 0) {
			struct fleet_missing *nv = realloc(im->missing,
				(im->nmissing + 16) * sizeof(*nv));
			if (nv == NULL)
				return RBA_E_NOMEM;
			im->missing = nv;
		}
		im->missing[im->nmissing].version = names->v[i];
		names->v[i] = NULL;
		im->missing[im->nmissing].n = 0;
		im->missing[im->nmissing].k = 0;
		im->missing[im->nmissing].refused = refused;
		im->nmissing++;
	}
	return 0;
}

/*
 * The write transaction of the import: the history whole, the records
 * checked and the accepted ones appended, the missing versions named,
 * the new head read, committed together.
 */
static int
import_append(struct import_run *a, const char *const *dirs, size_t ndirs)
{
	struct fleet_import *im = a->im;
	struct rba_detail *d = a->d;
	int err = 0;

	if ((err = store_txn_begin(a->s, 1, 0, &a->txn, d)) != 0 ||
	    (err = history_whole(a->txn, d)) != 0 ||
	    (err = store_history_list(a->txn, NULL, 0, held_one, &a->hl, d)) != 0)
		return err;
	for (size_t i = 0; i < ndirs && err == 0; i++) {
		size_t before = im->earlier;
		err = earlier_scan(dirs[i], &a->hl, &a->eh, im, &a->first);
		im->dirs[i].earlier = im->earlier - before;
	}
	if (err != 0 || (err = import_check(a)) != 0)
		return err;
	for (size_t i = 0; i < im->nitems; i++) {
		struct fleet_item *it = &im->items[i];
		if (!it->accepted)
			continue;
		err = store_history_append(a->txn, it->version, it->time, it->bytes,
					   it->len, &it->history_id, NULL, d);
		if (err != 0)
			return err;
	}
	/* Every version of the store is expected. */
	if ((err = store_version_names(a->txn, expect_one, &a->x, d)) != 0)
		return err;
	import_agreement(a);
	if ((err = import_missing(a)) != 0 ||
	    (err = store_history_head(a->txn, &im->head_id, &im->head, d)) != 0)
		return err;
	err = store_txn_commit(a->txn, d);
	a->txn = NULL;
	return err;
}

/*
 * After the commit: the counts, the worst verdict and the exit status of
 * the run (records imported before included: a rerun's import, and a
 * finished directory imported again), the accepted records moved into
 * imported/.
 */
static void
import_outcome(struct fleet_import *im, size_t nheads)
{
	im->nheads = nheads;
	for (size_t i = 0; i < im->nitems; i++) {
		struct fleet_item *it = &im->items[i];
		if (it->accepted) {
			int v = verdict_of(it->verdict);
			im->imported++;
			if (im->worst_verdict < 0 ||
			    worst_rank(v) > worst_rank(im->worst_verdict))
				im->worst_verdict = v;
			if (it->exit_status > im->exit_status)
				im->exit_status = it->exit_status;
			it->move_err = item_move(it);
		} else {
			im->refused++;
			im->exit_status = 2;
		}
	}
	if (im->nmissing)
		im->exit_status = 2;
	if (im->earlier > 0) {
		if (im->earlier_exit > im->exit_status)
			im->exit_status = im->earlier_exit;
		if (im->worst_verdict < 0 ||
		    (im->earlier_worst >= 0 &&
		     worst_rank(im->earlier_worst) > worst_rank(im->worst_verdict)))
			im->worst_verdict = im->earlier_worst;
	}
}

int
fleet_import_run(struct store *s, const char *const *dirs, size_t ndirs,
		 const struct sign_pubkey *keys, size_t nkeys,
		 enum fleet_split split, struct fleet_import *im,
		 struct rba_detail *d)
{
	struct import_run a;
	int err;

	memset(im, 0, sizeof(*im));
	memset(&a, 0, sizeof(a));
	im->worst_verdict = -1;
	im->earlier_worst = -1;
	a.s = s;
	a.im = im;
	a.d = d;
	a.first = (size_t)-1;
	a.heads_agree = 1;
	a.nagree = 1;
	if ((err = import_load(dirs, ndirs, keys, nkeys, im, d)) == 0 &&
	    (err = import_append(&a, dirs, ndirs)) == 0) {
		import_outcome(im, a.hs.n);
		if (a.nagree && a.heads_agree && a.have_head)
			missing_shards(s, im, a.shard_n, a.head_id, split);
	}
	store_txn_abort(a.txn);
	rba_strv_free(a.x.names.v, a.x.names.n);
	free(a.hl.v);
	free(a.hs.v);
	free(a.eh.v);
	if (err != 0)
		fleet_import_release(im);
	return err;
}

void
fleet_import_release(struct fleet_import *im)
{
	if (im == NULL)
		return;
	for (size_t i = 0; i < im->nitems; i++) {
		free(im->items[i].path);
		free(im->items[i].bytes);
		free(im->items[i].aside);
	}
	free(im->items);
	for (size_t i = 0; i < im->nmissing; i++)
		free(im->missing[i].version);
	free(im->missing);
	free(im->dirs);
	memset(im, 0, sizeof(*im));
	im->worst_verdict = -1;
}

/* ---- setting refused records aside ---------------------------------------- */

/* 1 when path names anything, a dangling symbolic link included. */
static int
taken(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 || errno != ENOENT;
}

/* The note beside a record set aside: one line, created, never replacing. */
static int
note_write(const char *path, const struct fleet_item *it, int64_t now)
{
	char when[RBA_TIME_TEXT_MAX], *why;
	size_t n = rba_utf8_escape(it->reason, strlen(it->reason), NULL, 0);
	struct rba_buf b;
	FILE *f;
	int fd, err = 0;

	if ((why = malloc(n + 1)) == NULL)
		return RBA_E_NOMEM;
	rba_utf8_escape(it->reason, strlen(it->reason), why, n + 1);
	rba_time_utc(now, when);
	rba_buf_init(&b);
	rba_buf_printf(&b, "%s refused by history import: %s\n", when, why);
	free(why);
	if ((err = rba_buf_status(&b)) != 0)
		goto out;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0644)) < 0) {
		err = errno;
		goto out;
	}
	if ((f = fdopen(fd, "w")) == NULL) {
		err = errno;
		close(fd);
		goto out;
	}
	errno = 0;
	if (fwrite(b.p, 1, b.len, f) != b.len || fflush(f) != 0 ||
	    fsync(fileno(f)) != 0)
		err = errno ? errno : EIO;
	if (fclose(f) != 0 && err == 0)
		err = errno;
out:
	rba_buf_release(&b);
	return err;
}

/* One refused item into DIR/refused/ (fleet_import_set_aside). */
static int
item_set_aside(struct fleet_item *it, int64_t now)
{
	char dir[FLEET_PATH_MAX + 600], sub[FLEET_PATH_MAX + 700];
	char to[FLEET_PATH_MAX + 1400], to_sig[FLEET_PATH_MAX + 1500];
	char to_note[FLEET_PATH_MAX + 1500], from_sig[FLEET_PATH_MAX + 700];
	const char *base, *slash = strrchr(it->path, '/');
	size_t stem;
	int err = EEXIST;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - it->path) : 1,
		 slash ? it->path : ".");
	base = slash ? slash + 1 : it->path;
	stem = strlen(base) - strlen(FLEET_RECORD_SUFFIX); /* files_scan: it ends so */
	snprintf(sub, sizeof(sub), "%s/%s", dir, FLEET_REFUSED_DIR);
	if (mkdir(sub, 0755) != 0 && errno != EEXIST)
		return errno;
	snprintf(from_sig, sizeof(from_sig), "%s%s", it->path, FLEET_SIG_SUFFIX);
	/* The first name whose record, signature and note are all free;
	 * rba_rename_new settles a race with another import. */
	for (unsigned k = 1; err == EEXIST && k <= FLEET_ASIDE_TRIES; k++) {
		if (k == 1)
			snprintf(to, sizeof(to), "%s/%s", sub, base);
		else
			snprintf(to, sizeof(to), "%s/%.*s.%u%s", sub, (int)stem, base,
				 k, FLEET_RECORD_SUFFIX);
		snprintf(to_sig, sizeof(to_sig), "%s%s", to, FLEET_SIG_SUFFIX);
		snprintf(to_note, sizeof(to_note), "%s%s", to, FLEET_NOTE_SUFFIX);
		if (taken(to) || taken(to_sig) || taken(to_note))
			continue;
		err = rba_rename_new(it->path, to);
	}
	if (err != 0)
		return err;
	if ((it->aside = strdup(to)) == NULL)
		return RBA_E_NOMEM;
	/* The record first: a signature left alone is ignored. */
	if (access(from_sig, F_OK) == 0 &&
	    (err = rba_rename_new(from_sig, to_sig)) != 0)
		return err;
	if ((err = note_write(to_note, it, now)) != 0)
		return err;
	return rba_fsync_parent(to);
}

int
fleet_import_set_aside(struct fleet_import *im, int64_t now)
{
	for (size_t i = 0; i < im->nitems; i++) {
		struct fleet_item *it = &im->items[i];
		if (it->accepted)
			continue;
		it->aside_err = item_set_aside(it, now);
		if (it->aside_err == RBA_E_NOMEM)
			return RBA_E_NOMEM;
	}
	return 0;
}
