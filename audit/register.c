/* register.c - train or take an artifact, fill the pins, store the version. */
#include "audit/register.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/declared.h"
#include "rebuild/runs.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "model/artifact.h"
#include "train/envrec.h"
#include "data/snapshot.h"
#include "train/trainer.h"
#include "sample/sample.h"

#define PROV_TAG 'A'
#define PROV_VERSION 1

/*
 * The history record of a replacement: which artifact the version held
 * and which it holds now, so the chain shows when the decisions under
 * audit stopped being the pinned artifact's.
 */
static void
replace_record(struct rba_buf *b, const char *version, int64_t t,
	       const struct store_version *old, const struct store_version *v,
	       int policy_kept, int had_sample)
{
	struct rba_json_w w;
	char when[RBA_TIME_TEXT_MAX];

	rba_time_utc(t, when);
	rba_json_w_init(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "schema", REGISTER_RECORD_SCHEMA);
	rba_json_w_str(&w, "event", "replace");
	rba_json_w_str(&w, "version", version);
	rba_json_w_str(&w, "time", when);
	rba_json_w_digest(&w, "artifact_old", &old->artifact, 1);
	rba_json_w_digest(&w, "artifact_new", &v->artifact, 1);
	rba_json_w_digest(&w, "snapshot_old", &old->snapshot, 1);
	rba_json_w_digest(&w, "snapshot_new", &v->snapshot, 1);
	rba_json_w_digest(&w, "policy", &v->policy_digest, v->has_policy);
	rba_json_w_bool(&w, "policy_kept", policy_kept);
	rba_json_w_bool(&w, "sample_kept", had_sample);
	rba_json_w_close(&w, '}');
}

void
register_result_release(struct register_result *r)
{
	if (r == NULL)
		return;
	policy_pins_free(r->pins);
	free(r->kept_policy_text);
	free(r->pins_text);
	rebuild_result_release(&r->rebuild);
	exec_run_release(&r->exec);
	memset(r, 0, sizeof(*r));
}

static void
prov_encode(struct rba_buf *b, const struct register_provenance *pv)
{
	rba_buf_put_u8(b, PROV_TAG);
	rba_buf_put_u8(b, PROV_VERSION);
	rba_buf_put(b, pv->config.b, RBA_DIGEST_LEN);
	rba_buf_put(b, pv->snapshot.b, RBA_DIGEST_LEN);
	rba_buf_put_u32(b, pv->trainer_abi);
	rba_buf_put(b, pv->environment.b, RBA_DIGEST_LEN);
	rba_buf_put_str(b, pv->code_revision);
}

/* Decodes a provenance record; 0 or -1 when it is malformed. */
static int
prov_decode(const uint8_t *meta, size_t len, struct register_provenance *out)
{
	struct rba_cursor c;
	const uint8_t *p;
	const char *rev;
	size_t n;

	memset(out, 0, sizeof(*out));
	rba_cursor_init(&c, meta, len);
	if (rba_cursor_u8(&c) != PROV_TAG || rba_cursor_u8(&c) != PROV_VERSION)
		return -1;
	if ((p = rba_cursor_bytes(&c, RBA_DIGEST_LEN)) != NULL)
		memcpy(out->config.b, p, RBA_DIGEST_LEN);
	if ((p = rba_cursor_bytes(&c, RBA_DIGEST_LEN)) != NULL)
		memcpy(out->snapshot.b, p, RBA_DIGEST_LEN);
	out->trainer_abi = rba_cursor_u32(&c);
	if ((p = rba_cursor_bytes(&c, RBA_DIGEST_LEN)) != NULL)
		memcpy(out->environment.b, p, RBA_DIGEST_LEN);
	rev = rba_cursor_lstr(&c, sizeof(out->code_revision) - 1, &n);
	if (!rba_cursor_ok(&c) || c.left != 0)
		return -1;
	memcpy(out->code_revision, rev, n);
	out->code_revision[n] = 0;
	return 0;
}

/*
 * Whether pv, kept with the artifact by an earlier tool, is the training
 * version v's pins p record: every value register took from that
 * training into the pins is pv's.
 */
static int
prov_is_versions(const struct register_provenance *pv,
		 const struct store_version *v, const struct pins *p)
{
	struct rba_digest config;

	policy_pins_config_hash(p, &config);
	return rba_digest_equal(&pv->config, &config) &&
	       rba_digest_equal(&pv->snapshot, &v->snapshot) &&
	       pv->trainer_abi == p->trainer_abi && p->has_environment &&
	       rba_digest_equal(&pv->environment, &p->environment) &&
	       p->code_revision != NULL &&
	       strcmp(pv->code_revision, p->code_revision) == 0;
}

int
register_provenance_get(struct store_txn *txn, const struct store_version *v,
			const struct pins *p, struct register_provenance *out,
			int *foreign, struct rba_detail *d)
{
	struct store_blob_info info;
	int err;

	memset(out, 0, sizeof(*out));
	if (foreign != NULL)
		*foreign = 0;
	if (v->has_meta) {
		if (v->meta_len == 0)
			return RBA_E_NOTFOUND;
		if (prov_decode(v->meta, v->meta_len, out) != 0)
			return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
					"malformed provenance record of version "
					"'%s'", v->name);
		return 0;
	}
	/* A record of the first format: the artifact's meta, maybe. */
	err = store_blob_info(txn, &v->artifact, &info, d);
	if (err)
		return err;
	if (info.kind != STORE_BLOB_ARTIFACT || info.meta_len == 0) {
		store_blob_info_release(&info);
		return RBA_E_NOTFOUND;
	}
	err = prov_decode(info.meta, info.meta_len, out);
	store_blob_info_release(&info);
	if (err != 0)
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0, "%s",
				"malformed provenance record of an artifact");
	if (!prov_is_versions(out, v, p)) {
		memset(out, 0, sizeof(*out));
		if (foreign != NULL)
			*foreign = 1;
		return RBA_E_NOTFOUND;
	}
	return 0;
}

/*
 * The provenance old, the version's record before a replace, keeps of
 * art: the version registered again from a file of the artifact it had
 * trained keeps that training's record (its pins may have been edited
 * since, which an audit then names).  Appended to prov when there is
 * one; a record that cannot be read (old pins or provenance malformed)
 * keeps none.  0, RBA_E_NOMEM or the store's errors.
 */
static int
prov_kept(struct store_txn *txn, const struct store_version *old,
	  const struct rba_digest *art, struct rba_buf *prov,
	  struct rba_detail *d)
{
	struct register_provenance pv;
	struct pins *op = NULL;
	int err;

	if (!rba_digest_equal(&old->artifact, art))
		return 0;
	err = policy_pins_parse(old->pins_text, strlen(old->pins_text),
				"stored pins", &op, d);
	if (err != 0 && err != RBA_E_NOMEM)
		err = RBA_E_NOTFOUND;
	if (err == 0)
		err = register_provenance_get(txn, old, op, &pv, NULL, d);
	policy_pins_free(op);
	if (err == 0) {
		prov_encode(prov, &pv);
		return rba_buf_status(prov);
	}
	if (err != RBA_E_NOTFOUND && err != RBA_E_CORRUPT)
		return err;
	rba_detail_clear(d);
	return 0;
}

static int
set_str(char **dst, const char *src)
{
	char *s = strdup(src);

	if (s == NULL)
		return RBA_E_NOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/*
 * A declared provenance value is kept or refused, never replaced: pins
 * that name a code revision or an environment digest other than this
 * build's and this machine's cannot be trained here (the artifact would
 * carry a claim that is not true).  0 or RBA_E_SCHEMA at the key.
 */
static int
declared_check(const struct pins *in, const struct rba_digest *env,
	       struct rba_detail *d)
{
	const char *rev = rebuild_trainer_kind(in)->code_revision(in);
	char want[RBA_DIGEST_TEXT_LEN + 1], have[RBA_DIGEST_TEXT_LEN + 1];

	if (in->code_revision != NULL && strcmp(in->code_revision, rev) != 0) {
		rba_detail_key(d, "code_revision");
		return rba_fail(d, RBA_E_SCHEMA, in->src.file,
				in->src.code_revision.line,
				in->src.code_revision.col,
				"the pins declare code revision '%s' but this "
				"build is '%s': train with the declared code, or "
				"register the artifact it made with --artifact",
				in->code_revision, rev);
	}
	if (in->has_environment && !rba_digest_equal(&in->environment, env)) {
		rba_digest_format(&in->environment, want);
		rba_digest_format(env, have);
		rba_detail_key(d, "environment");
		return rba_fail(d, RBA_E_SCHEMA, in->src.file,
				in->src.environment.line,
				in->src.environment.col,
				"the pins declare environment %s but this "
				"machine's is %s: train in the declared "
				"environment, or register the artifact it made "
				"with --artifact", want, have);
	}
	return 0;
}

/* Reads the snapshot the pins name from the store, verified. */
static int
load_snapshot(struct store *s, const struct pins *p, uint8_t **bytes,
	      size_t *n, struct rba_detail *d)
{
	struct store_txn *txn;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	err = store_txn_begin(s, 0, 0, &txn, d);
	if (err)
		return err;
	err = snapshot_load(txn, &p->snapshot, bytes, n, d);
	store_txn_abort(txn);
	if (err == RBA_E_NOTFOUND) {
		rba_digest_format(&p->snapshot, hex);
		rba_detail_key(d, hex);
		return rba_fail(d, err, NULL, 0, 0,
				"snapshot %s is not in the store (add it with "
				"'rebuild-audit snapshot add FILE')", hex);
	}
	return err;
}

/* The run record of the training, in the version's transaction. */
static int
keep_run(struct store_txn *txn, struct register_result *out,
	 const struct rba_digest *env, int64_t registered_at, double t0,
	 struct rba_detail *d)
{
	runs_id_register(out->pins->version, registered_at, out->run_id);
	return runs_put(txn, out->run_id, out->pins, out->kind, &out->rebuild,
			&out->exec, env, rba_time_mono() - t0, d);
}

/* What register_version holds from its first step to its last. */
struct reg_run {
	struct store *s;
	const struct register_request *rq;
	const struct pins *in;
	struct register_result *out;
	struct rba_detail *d;
	struct rba_buf env, canon, prov;
	struct rba_digest art_digest, env_digest;
	uint8_t *art, *snap; /* the artifact file, the snapshot */
	size_t art_len, snap_len;
	uint32_t abi;
	double t0;
	struct store_txn *txn;
	struct store_version v;
};

/* The environment record of this machine, or of an exec trainer's
 * sandbox with its declared packages and variables (exec/exec.h). */
static int
capture_env(struct reg_run *a)
{
	const struct pins *in = a->in;
	int err;

	err = a->out->kind->envrec(in, &a->env, a->d);
	if (err)
		return err;
	envrec_digest((const char *)a->env.p, a->env.len, &a->env_digest);
	return 0;
}

/* The artifact given with --artifact, read and decoded for its ABI. */
static int
read_artifact(struct reg_run *a)
{
	struct rba_detail *d = a->d;
	int err;

	err = rba_file_read(a->rq->artifact_path, ARTIFACT_MAX_BYTES, &a->art,
			    &a->art_len, d);
	if (err)
		return err;
	/* An exec trainer's artifact is its own format, taken as
	 * bytes: its audit rebuilds it and compares the digests. */
	err = a->out->kind->given_abi(a->art, a->art_len, &a->abi, d);
	if (err) {
		if (d != NULL)
			snprintf(d->file, sizeof(d->file), "%s", a->rq->artifact_path);
		return err;
	}
	rba_digest_bytes(a->art, a->art_len, &a->art_digest);
	return 0;
}

/* The artifact trained here from the pinned snapshot: the builtin
 * trainer, or the exec one in its sandbox. */
static int
train_artifact(struct reg_run *a)
{
	const struct pins *in = a->in;
	struct register_result *out = a->out;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	int err;

	if ((err = declared_check(in, &a->env_digest, a->d)) != 0)
		return err;
	err = load_snapshot(a->s, in, &a->snap, &a->snap_len, a->d);
	if (err)
		return err;
	rba_digest_format(&in->snapshot, hex);
	err = out->kind->train(in, in->trainer_abi, a->snap, a->snap_len, hex,
			       a->rq->progress, &out->rebuild, &out->exec, a->d);
	if (err)
		return err;
	a->abi = out->rebuild.abi;
	a->art_digest = out->rebuild.digest;
	out->trained = 1;
	return 0;
}

/* Pins that name an artifact name the one registered. */
static int
check_pinned_artifact(struct reg_run *a)
{
	const struct pins *in = a->in;
	char hex[RBA_DIGEST_TEXT_LEN + 1], hex2[RBA_DIGEST_TEXT_LEN + 1];

	if (!in->has_artifact || rba_digest_equal(&in->artifact, &a->art_digest))
		return 0;
	rba_digest_format(&in->artifact, hex);
	rba_digest_format(&a->art_digest, hex2);
	rba_detail_key(a->d, "artifact");
	return rba_fail(a->d, RBA_E_SCHEMA, NULL, 0, 0,
			a->out->trained
				? "the pins name artifact %s but training gives %s "
				  "(register the deployed artifact with --artifact)"
				: "the pins name artifact %s but the file is %s",
			hex, hex2);
}

/* The version's pins filled in and made canonical, and the provenance
 * of a training done here encoded. */
static int
fill_pins(struct reg_run *a)
{
	const struct pins *in = a->in;
	struct register_result *out = a->out;
	struct register_provenance pv;
	int err;

	out->artifact = a->art_digest;
	out->pins->trainer_abi = a->abi;
	out->pins->has_artifact = 1;
	out->pins->artifact = a->art_digest;
	/* Declared values stay (an artifact built elsewhere keeps what its
	 * pins say, and an audit here names what differs); only a value the
	 * pins leave out is this build's and this machine's. */
	if (!out->pins->has_environment) {
		out->pins->has_environment = 1;
		out->pins->environment = a->env_digest;
	}
	if (out->pins->code_revision == NULL &&
	    (err = set_str(&out->pins->code_revision,
			   out->kind->code_revision(in))) != 0)
		return err;
	policy_pins_canonical(out->pins, &a->canon);
	if ((err = rba_buf_status(&a->canon)) != 0 ||
	    (err = rba_buf_status(&a->env)) != 0)
		return err;
	out->pins_text = strdup(rba_buf_cstr(&a->canon));
	if (out->pins_text == NULL)
		return RBA_E_NOMEM;
	if (!out->trained)
		return 0;
	memset(&pv, 0, sizeof(pv));
	pv.config = out->config;
	pv.snapshot = in->snapshot;
	pv.trainer_abi = a->abi;
	pv.environment = a->env_digest;
	snprintf(pv.code_revision, sizeof(pv.code_revision), "%s",
		 out->kind->code_revision(in));
	prov_encode(&a->prov, &pv);
	return rba_buf_status(&a->prov);
}

/*
 * --replace of a registered version old, in the version's transaction:
 * its policy kept (or, when another is given, declared for the sample
 * that may still need it), its provenance kept for the same artifact,
 * and the replacement's history record appended.
 */
static int
replace_old(struct reg_run *a, const struct store_version *old)
{
	const struct register_request *rq = a->rq;
	struct register_result *out = a->out;
	struct store_version *v = &a->v;
	struct rba_buf rec;
	int err;

	/* A policy given replaces the old one, which the kept
	 * sample may still need (declared.h). */
	if (rq->policy != NULL && old->has_policy &&
	    !rba_digest_equal(&old->policy_digest, &rq->policy->digest)) {
		struct policy *op = NULL;
		err = policy_parse(old->policy_text, strlen(old->policy_text),
				   "the version's policy", &op, a->d);
		if (err == 0)
			err = declared_policy_keep(a->txn, op, a->d);
		policy_free(op);
		if (err)
			return err;
	}
	/* The policy stays unless another is given. */
	if (rq->policy == NULL && old->has_policy) {
		v->has_policy = 1;
		out->kept_policy_text = strdup(old->policy_text);
		v->policy_text = out->kept_policy_text;
		v->policy_digest = old->policy_digest;
		out->policy_kept = 1;
		if (v->policy_text == NULL)
			return RBA_E_NOMEM;
	}
	if (!out->trained &&
	    (err = prov_kept(a->txn, old, &a->art_digest, &a->prov, a->d)) != 0)
		return err;
	out->replaced = 1;
	out->old_artifact = old->artifact;
	out->had_sample = old->has_sample || old->sample_err != 0;
	if (old->has_sample && old->sample.columns != NULL) {
		struct sample_layout l;
		if (sample_layout_parse(old->sample.columns,
					strlen(old->sample.columns), &l, NULL) == 0) {
			out->has_sample_artifact = 1;
			out->sample_artifact = l.artifact;
			sample_layout_release(&l);
		}
	}
	rba_buf_init(&rec);
	replace_record(&rec, a->in->version, v->registered_at, old, v,
		       out->policy_kept, out->had_sample);
	err = rba_buf_status(&rec);
	if (err == 0)
		err = store_history_append(a->txn, a->in->version,
					   v->registered_at, rec.p, rec.len,
					   NULL, NULL, a->d);
	rba_buf_release(&rec);
	return err;
}

/*
 * The write transaction of the registration: the artifact blob, the
 * version record (a replaced one's steps first), the run record of a
 * training, committed together.
 */
static int
store_registration(struct reg_run *a)
{
	const struct register_request *rq = a->rq;
	const struct pins *in = a->in;
	struct register_result *out = a->out;
	struct store_version *v = &a->v;
	int err;

	err = store_txn_begin(a->s, 1,
			      out->trained ? out->rebuild.artifact_len : a->art_len,
			      &a->txn, a->d);
	if (err)
		return err;
	/* The provenance goes with the version, never the blob: the bytes
	 * may be another version's too, and a blob's meta of an earlier
	 * store stays for the version it serves (register.h). */
	err = store_blob_put(a->txn, STORE_BLOB_ARTIFACT,
			     out->trained ? out->rebuild.artifact : a->art,
			     out->trained ? out->rebuild.artifact_len : a->art_len,
			     in->version, NULL, 0, &a->art_digest, NULL, a->d);
	if (err)
		return err;
	v->name = in->version;
	v->pins_text = out->pins_text;
	v->env_text = (char *)rba_buf_cstr(&a->env);
	v->registered_at = (int64_t)time(NULL);
	v->artifact = a->art_digest;
	v->snapshot = in->snapshot;
	if (rq->policy != NULL) {
		v->has_policy = 1;
		v->policy_text = rq->policy->text;
		v->policy_digest = rq->policy->digest;
	}
	if (rq->replace) {
		struct store_version old;
		int gerr = store_version_get(a->txn, in->version, &old, a->d);
		if (gerr != 0 && gerr != RBA_E_NOTFOUND)
			return gerr;
		if (gerr == 0) {
			err = replace_old(a, &old);
			store_version_release(&old);
			if (err)
				return err;
		}
	}
	v->has_meta = 1;
	v->meta = a->prov.len > 0 ? a->prov.p : NULL;
	v->meta_len = a->prov.len;
	err = store_version_put(a->txn, v, rq->replace, a->d);
	if (err == RBA_E_EXISTS) {
		rba_detail_key(a->d, in->version);
		rba_fail(a->d, err, NULL, 0, 0,
			 "version '%s' is already registered (--replace replaces it)",
			 in->version);
	}
	if (err == 0 && out->trained)
		err = keep_run(a->txn, out, &a->env_digest, v->registered_at,
			       a->t0, a->d);
	if (err)
		return err;
	err = store_txn_commit(a->txn, a->d);
	a->txn = NULL;
	return err;
}

int
register_version(struct store *s, const struct register_request *rq,
		 struct register_result *out, struct rba_detail *d)
{
	struct reg_run a;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&a, 0, sizeof(a));
	a.t0 = rba_time_mono();
	a.s = s;
	a.rq = rq;
	a.in = rq->pins;
	a.out = out;
	a.d = d;
	rba_buf_init(&a.env);
	rba_buf_init(&a.canon);
	rba_buf_init(&a.prov);
	out->pins = policy_pins_dup(a.in);
	if (out->pins == NULL)
		return RBA_E_NOMEM;
	policy_pins_config_hash(a.in, &out->config);
	out->kind = rebuild_trainer_kind(a.in);
	if ((err = capture_env(&a)) == 0 &&
	    (err = rq->artifact_path != NULL ? read_artifact(&a)
					     : train_artifact(&a)) == 0 &&
	    (err = check_pinned_artifact(&a)) == 0 &&
	    (err = fill_pins(&a)) == 0)
		err = store_registration(&a);
	store_txn_abort(a.txn);
	free(a.art);
	free(a.snap);
	rba_buf_release(&a.env);
	rba_buf_release(&a.canon);
	rba_buf_release(&a.prov);
	if (err)
		register_result_release(out);
	return err;
}
