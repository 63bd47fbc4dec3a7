/* inputs.c - a version, its verified inputs and its rebuild. */
#include "audit/inputs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/rbatime.h"
#include "rebuild/runs.h"
#include "data/snapshot.h"
#include "model/xgboost.h"

void
audit_inputs_release(struct audit_inputs *c)
{
	if (c == NULL)
		return;
	store_version_release(&c->v);
	policy_pins_free(c->pins);
	policy_free(c->pol);
	free(c->abytes);
	artifact_release(&c->stored);
	free(c->snap);
	rebuild_result_release(&c->rb);
	artifact_release(&c->rebuilt);
	exec_run_release(&c->xrun);
	memset(c, 0, sizeof(*c));
}

/*
 * Rewrites the store's "tampered: ..." reason so it leads with what was
 * tampered with, keeping the store's detail after it.
 */
static int
tampered(struct rba_detail *d, int err, const char *what)
{
	char was[sizeof(d->reason)];
	const char *rest;

	if (d == NULL || err != RBA_E_TAMPERED)
		return err;
	rest = d->reason;
	if (strncmp(rest, "tampered: ", 10) == 0)
		rest += 10;
	snprintf(was, sizeof(was), "%s", rest);
	snprintf(d->reason, sizeof(d->reason), "tampered: %.150s: %.200s", what,
		 was);
	return err;
}

int
audit_inputs_policy_in_force(const struct store_version *v,
			     const struct policy *override, struct policy **out,
			     int *from_version, struct rba_detail *d)
{
	struct rba_digest got;
	const char *text;
	size_t n;
	int err;

	*out = NULL;
	*from_version = override == NULL;
	if (override != NULL) {
		text = override->text;
		n = override->text_len;
	} else {
		if (!v->has_policy || v->policy_text == NULL)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"version '%s' has no policy (keep one with "
					"'rebuild-audit policy set %s POLICY' or give "
					"--policy)", v->name, v->name);
		text = v->policy_text;
		n = strlen(text);
		rba_digest_bytes(text, n, &got);
		if (!rba_digest_equal(&got, &v->policy_digest))
			return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
					"tampered: the policy kept for version '%s' "
					"does not match its digest", v->name);
	}
	err = policy_parse(text, n, override ? "policy" : "kept policy", out, d);
	if (err == 0 && override == NULL &&
	    !rba_digest_equal(&(*out)->digest, &v->policy_digest)) {
		policy_free(*out);
		*out = NULL;
		return rba_fail(d, RBA_E_TAMPERED, NULL, 0, 0,
				"tampered: the policy kept for version '%s' does "
				"not match its digest", v->name);
	}
	return err;
}

/*
 * The tree id the registration's training exported (its run record,
 * run-exec/v1's trainer.tree), into c->reg_tree; empty when there is no
 * such record (registered with --artifact) or it does not say.
 */
static void
registered_tree(struct store_txn *txn, struct audit_inputs *c)
{
	char id[RUNS_ID_SIZE];
	struct rba_json_value v;
	const char *tree;
	uint8_t *p = NULL;
	size_t n = 0;

	c->reg_tree[0] = 0;
	runs_id_register(c->name, c->v.registered_at, id);
	if (store_run_get(txn, id, &p, &n, NULL) != 0)
		return;
	if (rba_json_parse((const char *)p, n, &v, NULL) == 0) {
		tree = rba_json_get_str(rba_json_get(&v, "trainer"), "tree");
		if (tree != NULL && strlen(tree) == 40)
			memcpy(c->reg_tree, tree, 41);
		rba_json_release(&v);
	}
	free(p);
}

int
audit_inputs_load(struct store_txn *txn, const char *version,
		  const struct policy *override, struct audit_inputs *c,
		  struct rba_detail *d)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1], what[160];
	double t0 = rba_time_mono();
	int err;

	c->name = version;
	c->error_what = "version";
	if ((err = store_version_get(txn, version, &c->v, d)) != 0) {
		if (err == RBA_E_NOTFOUND)
			rba_fail(d, err, NULL, 0, 0, "no version '%s' in the store",
				 version);
		return err;
	}
	c->error_what = "pins";
	if ((err = policy_pins_parse(c->v.pins_text, strlen(c->v.pins_text),
				     "stored pins", &c->pins, d)) != 0)
		return err;
	if (!c->pins->has_artifact ||
	    !rba_digest_equal(&c->pins->artifact, &c->v.artifact) ||
	    !rba_digest_equal(&c->pins->snapshot, &c->v.snapshot))
		return rba_fail(d, RBA_E_CORRUPT, NULL, 0, 0,
				"the pins of version '%s' do not name the artifact "
				"and snapshot its record names", version);
	c->error_what = "policy";
	if ((err = audit_inputs_policy_in_force(&c->v, override, &c->pol,
					 &c->pol_from_version, d)) != 0)
		return err;

	c->error_what = "artifact";
	rba_digest_format(&c->v.artifact, hex);
	snprintf(what, sizeof(what), "the stored artifact %s", hex);
	err = store_blob_load(txn, &c->v.artifact, ARTIFACT_MAX_BYTES, &c->abytes,
			      &c->an, d);
	if (err == RBA_E_NOTFOUND)
		return rba_fail(d, err, NULL, 0, 0, "%s is missing", what);
	/* store_blob_load checked every byte against the digest. */
	if (err)
		return tampered(d, err, what);
	c->kind = rebuild_trainer_kind(c->pins);
	/* An exec version's artifact is opened once the snapshot, which
	 * gives its columns and classes, is verified (stored_open). */
	if ((err = c->kind->stored_decode(c->abytes, c->an, what, &c->stored, d)) != 0)
		return err;

	c->error_what = "snapshot";
	rba_digest_format(&c->v.snapshot, hex);
	snprintf(what, sizeof(what), "the snapshot %s", hex);
	err = snapshot_load(txn, &c->v.snapshot, &c->snap, &c->sn, d);
	if (err == RBA_E_NOTFOUND)
		return rba_fail(d, err, NULL, 0, 0, "%s is missing", what);
	if (err)
		return tampered(d, err, what);
	c->error_what = "artifact";
	if ((err = c->kind->stored_open(c->pins, c->snap, c->sn, c->abytes,
					c->an, &c->stored, d)) != 0)
		return err;

	c->error_what = "provenance";
	err = register_provenance_get(txn, &c->v, c->pins, &c->prov,
				      &c->prov_foreign, d);
	if (err == RBA_E_NOTFOUND) {
		rba_detail_clear(d);
		err = 0;
	} else if (err == 0) {
		c->has_prov = 1;
	}
	if (err == 0 && c->kind->sandboxed)
		registered_tree(txn, c);
	c->t_verify = rba_time_mono() - t0;
	if (err == 0)
		c->error_what = NULL;
	return err;
}

int
audit_inputs_rebuild(struct audit_inputs *c, struct rba_detail *d)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	uint32_t abi = c->pins->trainer_abi ? c->pins->trainer_abi : c->stored.abi;
	double t0 = rba_time_mono();
	int err;

	c->error_what = "rebuild";
	/* The builtin trainer at the pinned ABI, or the user's code at the
	 * pinned commit in the sandbox. */
	if ((err = c->kind->abi_check(c->name, abi, d)) != 0)
		return err;
	rba_digest_format(&c->v.snapshot, hex);
	err = c->kind->train(c->pins, abi, c->snap, c->sn, hex, NULL, &c->rb,
			     &c->xrun, d);
	c->t_rebuild = rba_time_mono() - t0;
	if (err)
		return err;
	c->identical = rba_digest_equal(&c->rb.digest, &c->v.artifact);
	err = c->kind->artifact_open(c->pins, c->snap, c->sn, c->rb.artifact,
				     c->rb.artifact_len, &c->rebuilt, d);
	if (err)
		return err;
	c->rebuilt_ok = 1;
	c->error_what = NULL;
	return 0;
}
