/*
 * evidence_tlog.c - format 4's log member (audit-evidence/v4,
 * rebuild-audit-evidence(5), TRANSPARENCY LOG): the checkpoint of the
 * history's transparency log and the audit record's inclusion proof in
 * it, made at export, read, rendered and checked offline; and the
 * checkpoint's signature by the file's own key, which verify checks.
 *
 *   "log": {
 *     "checkpoint": the signed note (common/note.h) as one string,
 *     "index":      the record's leaf, audit.id - 1,
 *     "tree_size":  the checkpoint's size,
 *     "proof":      [base64 of each hash of the RFC 6962 audit path]
 *   }
 */
#include "evidence/evidence_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/json.h"
#include "common/note.h"
#include "common/tlog.h"
#include "evidence/checkpoint.h"

#define HASH_B64 (RBA_B64_LEN(RBA_DIGEST_LEN) + 1)

void
evidence_tlog_release(struct ev *e)
{
	if (!e->log_view)
		free(e->log_proof);
	free(e->log_own);
	e->log_proof = NULL;
	e->nlog_proof = 0;
	e->log_own = NULL;
}

/* Fills e's log members from the checkpoint text ck (n bytes) and the
 * proof, into storage e owns. */
static int
log_fill(struct ev *e, const void *ck, size_t n, uint64_t size,
	 const struct rba_digest *proof, size_t np)
{
	char *own = malloc(n + 1 + np * HASH_B64);

	e->log_proof = calloc(np > 0 ? np : 1, sizeof(*e->log_proof));
	if (own == NULL || e->log_proof == NULL) {
		free(own);
		return RBA_E_NOMEM;
	}
	memcpy(own, ck, n);
	own[n] = 0;
	for (size_t i = 0; i < np; i++) {
		char *h = own + n + 1 + i * HASH_B64;
		rba_b64_encode(proof[i].b, RBA_DIGEST_LEN, h);
		e->log_proof[i].s = h;
		e->log_proof[i].n = HASH_B64 - 1;
	}
	e->log_own = own;
	e->log_checkpoint.s = own;
	e->log_checkpoint.n = n;
	e->nlog_proof = np;
	e->log_size = (double)size;
	e->log_index = e->id - 1;
	e->log = 1;
	return 0;
}

int
evidence_tlog_load(struct store_txn *txn, struct ev *e,
		   const struct evidence_log_request *lr, struct rba_detail *d)
{
	struct store_tlog *tl = NULL;
	struct rba_digest root, proof[TLOG_PROOF_MAX];
	struct sign_pubkey pub;
	struct note_verifier v;
	struct rba_buf text, ck;
	char origin[NOTE_NAME_MAX + 1];
	uint64_t id = (uint64_t)e->id, size;
	size_t np;
	int err;

	rba_buf_init(&text);
	rba_buf_init(&ck);
	sign_seckey_pubkey(lr->key, &pub);
	if ((err = store_tlog_open(txn, &tl, d)) != 0)
		goto out;
	if (lr->checkpoint != NULL) {
		const struct checkpoint *c = lr->checkpoint;
		char why[CHECKPOINT_REASON_MAX];
		size = c->ck.size;
		if (note_verifier_make(c->ck.origin, pub.pk, &v, NULL) != 0 ||
		    checkpoint_signed_by(c, &v, why) != 0) {
			err = evidence_fail(d, RBA_E_SCHEMA, "the checkpoint is not "
					    "signed by the export key under its origin "
					    "'%.200s'", c->ck.origin);
			goto out;
		}
		if (size < id || size > store_tlog_size(tl)) {
			err = evidence_fail(d, RBA_E_SCHEMA, "the checkpoint's tree of "
					    "%llu records does not hold audit record "
					    "%llu of this store's history of %llu",
					    (unsigned long long)size, (unsigned long long)id,
					    (unsigned long long)store_tlog_size(tl));
			goto out;
		}
		if ((err = store_tlog_root(tl, size, &root, d)) != 0)
			goto out;
		if (!rba_digest_equal(&root, &c->ck.root)) {
			err = evidence_fail(d, RBA_E_SCHEMA, "the checkpoint's tree of %llu "
					    "records is not this store's log",
					    (unsigned long long)size);
			goto out;
		}
		rba_buf_put(&ck, c->bytes, c->len);
	} else {
		/* The whole history of this transaction: its size is the
		 * head the predicate states. */
		size = store_tlog_size(tl);
		if (lr->origin != NULL)
			snprintf(origin, sizeof(origin), "%s", lr->origin);
		else
			checkpoint_origin_default(sv_show(e->store_id), origin);
		if ((err = store_tlog_root(tl, size, &root, d)) != 0)
			goto out;
		note_checkpoint_format(origin, size, &root, &text);
		if ((err = rba_buf_status(&text)) != 0 ||
		    (err = note_sign((const char *)text.p, text.len, NULL, origin,
				     lr->key, &ck, d)) != 0)
			goto out;
	}
	if ((err = store_tlog_prove_record(tl, size, id, proof, &np, d)) != 0 ||
	    (err = rba_buf_status(&ck)) != 0)
		goto out;
	err = log_fill(e, ck.p, ck.len, size, proof, np);
out:
	store_tlog_close(tl);
	rba_buf_release(&text);
	rba_buf_release(&ck);
	return err;
}

void
evidence_tlog_render(const struct ev *e, struct rba_json_w *w)
{
	rba_json_w_open(w, "log", '{');
	rba_json_w_strn(w, "checkpoint", e->log_checkpoint.s, e->log_checkpoint.n);
	rba_json_w_num(w, "index", e->log_index);
	rba_json_w_num(w, "tree_size", e->log_size);
	rba_json_w_open(w, "proof", '[');
	for (size_t i = 0; i < e->nlog_proof; i++)
		rba_json_w_strn(w, NULL, e->log_proof[i].s, e->log_proof[i].n);
	rba_json_w_close(w, ']');
	rba_json_w_close(w, '}');
}

static int
whole(const struct rba_json_value *v)
{
	return v != NULL && v->type == RBA_JSON_NUMBER && v->num >= 0 &&
	       v->num <= 9007199254740992.0 && v->num == (double)(uint64_t)v->num;
}

int
evidence_tlog_read(const struct rba_json_value *p, struct ev *e,
		   struct rba_detail *d)
{
	const struct rba_json_value *log = rba_json_get(p, "log"), *v, *pr;

	if (log == NULL || log->type != RBA_JSON_OBJECT)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.log is missing or not "
				     "an object");
	v = rba_json_get(log, "checkpoint");
	if (v == NULL || v->type != RBA_JSON_STRING)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.log.checkpoint is "
				     "missing or not a string");
	e->log_checkpoint.s = v->str;
	e->log_checkpoint.n = v->len;
	v = rba_json_get(log, "index");
	if (!whole(v))
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.log.index is not a "
				     "whole number");
	e->log_index = v->num;
	v = rba_json_get(log, "tree_size");
	if (!whole(v))
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.log.tree_size is not "
				     "a whole number");
	e->log_size = v->num;
	pr = rba_json_get(log, "proof");
	if (pr == NULL || pr->type != RBA_JSON_ARRAY || pr->n > TLOG_PROOF_MAX)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.log.proof is not an "
				     "array of at most %d hashes", TLOG_PROOF_MAX);
	e->log_proof = calloc(pr->n > 0 ? pr->n : 1, sizeof(*e->log_proof));
	if (e->log_proof == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < pr->n; i++) {
		if (pr->items[i].type != RBA_JSON_STRING)
			return evidence_fail(d, RBA_E_SCHEMA, "predicate.log.proof[%zu] "
					     "is not a string", i);
		e->log_proof[i].s = pr->items[i].str;
		e->log_proof[i].n = pr->items[i].len;
	}
	e->nlog_proof = pr->n;
	return 0;
}

int
evidence_tlog_check(const struct ev *e, struct evidence_log_summary *sum,
		    struct rba_detail *d)
{
	struct checkpoint c;
	struct rba_detail cd;
	struct rba_digest proof[TLOG_PROOF_MAX], leaf;
	uint64_t size = (uint64_t)e->log_size, index = (uint64_t)e->log_index;
	uint64_t id = (uint64_t)e->id, head = (uint64_t)e->head_id;
	int err;

	rba_detail_clear(&cd);
	err = checkpoint_parse(e->log_checkpoint.s, e->log_checkpoint.n, &c, &cd);
	if (err == RBA_E_NOMEM)
		return err;
	if (err != 0)
		return evidence_fail(d, RBA_E_SCHEMA, "predicate.log.checkpoint is not a "
				     "signed checkpoint (line %lu: %s)", cd.line,
				     cd.reason);
	if (c.ck.size != size) {
		err = evidence_fail(d, RBA_E_SCHEMA, "predicate.log.tree_size %llu is not "
				    "the checkpoint's %llu", (unsigned long long)size,
				    (unsigned long long)c.ck.size);
		goto out;
	}
	if (index + 1 != id || size < id || size > head) {
		err = evidence_fail(d, RBA_E_SCHEMA, "predicate.log: leaf %llu of a tree of "
				    "%llu records is not audit record %llu of a "
				    "history whose head is %llu",
				    (unsigned long long)index, (unsigned long long)size,
				    (unsigned long long)id, (unsigned long long)head);
		goto out;
	}
	for (size_t i = 0; i < e->nlog_proof; i++) {
		size_t got;
		if (rba_b64_decode(e->log_proof[i].s, e->log_proof[i].n, proof[i].b,
				   RBA_DIGEST_LEN, &got) != 0 || got != RBA_DIGEST_LEN) {
			err = evidence_fail(d, RBA_E_SCHEMA, "predicate.log.proof[%zu] is "
					    "not base64 of a 32-byte hash", i);
			goto out;
		}
	}
	tlog_leaf_hash(e->record.s, e->record.n, &leaf);
	if (tlog_check_record(proof, e->nlog_proof, size, &c.ck.root, index, &leaf) != 0) {
		err = evidence_fail(d, RBA_E_SCHEMA, "the inclusion proof of audit record "
				    "%llu does not check against the checkpoint's root: "
				    "the record is not the log's leaf %llu",
				    (unsigned long long)id, (unsigned long long)index);
		goto out;
	}
	if (sum != NULL) {
		memset(sum, 0, sizeof(*sum));
		sum->present = 1;
		snprintf(sum->origin, sizeof(sum->origin), "%s", c.ck.origin);
		sum->tree_size = size;
		sum->index = index;
		sum->proof_len = e->nlog_proof;
		sum->proof_holds = 1;
		sum->nsigners = c.note.nsigs;
		for (size_t i = 0; i < c.note.nsigs && i < EVIDENCE_LOG_SIGNERS_MAX; i++) {
			const struct note_sig *s = &c.note.sigs[i];
			snprintf(sum->signers[i].name, sizeof(sum->signers[i].name), "%.*s",
				 (int)s->name_len, s->name);
			sum->signers[i].hash = s->hash;
		}
	}
out:
	checkpoint_release(&c);
	return err;
}

int
evidence_log_checkpoint(const void *msg, size_t n, struct checkpoint *out,
			struct rba_detail *d)
{
	struct rba_json_value root;
	const struct rba_json_value *ck;
	int err;

	memset(out, 0, sizeof(*out));
	err = rba_json_parse(msg, n, &root, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err != 0)
		return evidence_fail(d, RBA_E_SCHEMA, "not JSON");
	ck = rba_json_get(rba_json_get(rba_json_get(&root, "predicate"), "log"),
			  "checkpoint");
	if (ck == NULL || ck->type != RBA_JSON_STRING)
		err = evidence_fail(d, RBA_E_NOTFOUND, "the file carries no checkpoint "
				    "(predicate.log: audit-evidence/v4)");
	else
		err = checkpoint_parse(ck->str, ck->len, out, d);
	rba_json_release(&root);
	return err;
}
