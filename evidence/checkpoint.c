/*
 * checkpoint.c - checkpoints of the store's log, inclusion and
 * consistency proofs, the witness and the watch (evidence/checkpoint.h).
 */
#include "evidence/checkpoint.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/fileio.h"
#include "common/json.h"

void
checkpoint_origin_default(const char *store_id_hex, char out[NOTE_NAME_MAX + 1])
{
	snprintf(out, NOTE_NAME_MAX + 1, "%s%s", CHECKPOINT_ORIGIN_PREFIX,
		 store_id_hex);
}

/* The root of the empty tree, as RFC 6962 and 9162 define it:
 * SHA-256 of nothing. */
static void
empty_root(struct rba_digest *out)
{
	rba_digest_bytes("", 0, out);
}

static int
parse_owned(struct checkpoint *c, struct rba_detail *d)
{
	int err = note_open(c->bytes, c->len, &c->note, d);

	if (err == 0)
		err = note_checkpoint_parse(c->note.text, c->note.text_len, &c->ck, d);
	return err;
}

int
checkpoint_parse(const void *p, size_t n, struct checkpoint *out,
		 struct rba_detail *d)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (n > NOTE_MAX_BYTES)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"a checkpoint of more than %d bytes", NOTE_MAX_BYTES);
	out->bytes = malloc(n + 1);
	if (out->bytes == NULL)
		return RBA_E_NOMEM;
	memcpy(out->bytes, p, n);
	out->bytes[n] = 0;
	out->len = n;
	if ((err = parse_owned(out, d)) != 0)
		checkpoint_release(out);
	return err;
}

int
checkpoint_read(const char *path, struct checkpoint *out, struct rba_detail *d)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = rba_file_read(path, NOTE_MAX_BYTES, &out->bytes, &out->len, d);
	if (err == 0 && (err = parse_owned(out, d)) != 0)
		checkpoint_release(out);
	if (err != 0 && d != NULL && d->file[0] == 0)
		snprintf(d->file, sizeof(d->file), "%s", path);
	return err;
}

void
checkpoint_release(struct checkpoint *c)
{
	if (c == NULL)
		return;
	free(c->bytes);
	memset(c, 0, sizeof(*c));
}

int
checkpoint_vkey_load(const char *arg, struct note_verifier *out,
		     struct rba_detail *d)
{
	uint8_t *p = NULL;
	size_t n = 0;
	int err;

	if (strchr(arg, '+') != NULL &&
	    note_verifier_parse(arg, strlen(arg), out, NULL) == 0)
		return 0;
	err = rba_file_read(arg, NOTE_VKEY_MAX + 64, &p, &n, d);
	if (err == ENOENT && strchr(arg, '+') != NULL)
		/* Meant as a key's text: say what is wrong with it. */
		return note_verifier_parse(arg, strlen(arg), out, d);
	if (err != 0)
		return err;
	err = note_verifier_parse((const char *)p, n, out, d);
	if (err != 0 && d != NULL)
		snprintf(d->file, sizeof(d->file), "%s", arg);
	free(p);
	return err;
}

int
checkpoint_signed_by(const struct checkpoint *c, const struct note_verifier *v,
		     char *reason)
{
	int err = note_verify(&c->note, v);
	size_t o = 0;

	if (err == 0)
		return 0;
	if (err == RBA_E_BADSIG) {
		snprintf(reason, CHECKPOINT_REASON_MAX,
			 "the signature of %s+%08x on the checkpoint does not "
			 "verify", v->name, (unsigned)v->hash);
		return RBA_E_BADSIG;
	}
	o = (size_t)snprintf(reason, CHECKPOINT_REASON_MAX,
			     "the checkpoint is not signed by %s+%08x (it is "
			     "signed by", v->name, (unsigned)v->hash);
	for (size_t i = 0; i < c->note.nsigs && o < CHECKPOINT_REASON_MAX; i++)
		o += (size_t)snprintf(reason + o, CHECKPOINT_REASON_MAX - o, "%s %.*s+%08x",
				      i ? "," : "", (int)c->note.sigs[i].name_len,
				      c->note.sigs[i].name, (unsigned)c->note.sigs[i].hash);
	if (o < CHECKPOINT_REASON_MAX)
		snprintf(reason + o, CHECKPOINT_REASON_MAX - o, ")");
	return RBA_E_BADSIG;
}

int
checkpoint_make(struct store *s, const struct sign_seckey *key,
		const char *origin, struct rba_buf *out,
		struct note_checkpoint *ck, struct rba_detail *d)
{
	char def[NOTE_NAME_MAX + 1];
	struct store_txn *txn;
	struct store_tlog *tl = NULL;
	struct rba_digest root;
	struct rba_buf text;
	uint64_t size = 0;
	int err;

	if (origin == NULL) {
		checkpoint_origin_default(store_id_hex(s), def);
		origin = def;
	}
	if (!note_name_valid(origin, strlen(origin)) || strlen(origin) > NOTE_NAME_MAX)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"the origin '%s' is not a key name (non-empty, no "
				"spaces or '+')", origin);
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	err = store_tlog_open(txn, &tl, d);
	if (err == 0) {
		size = store_tlog_size(tl);
		if (size == 0)
			empty_root(&root);
		else
			err = store_tlog_root(tl, size, &root, d);
	}
	store_tlog_close(tl);
	store_txn_abort(txn);
	if (err != 0)
		return err;
	rba_buf_init(&text);
	note_checkpoint_format(origin, size, &root, &text);
	err = rba_buf_status(&text);
	if (err == 0)
		err = note_sign((const char *)text.p, text.len, NULL, origin, key, out, d);
	rba_buf_release(&text);
	if (err == 0 && ck != NULL) {
		memset(ck, 0, sizeof(*ck));
		snprintf(ck->origin, sizeof(ck->origin), "%s", origin);
		ck->size = size;
		ck->root = root;
		ck->ext = "";
	}
	return err;
}

void
checkpoint_inclusion_release(struct checkpoint_inclusion *p)
{
	if (p == NULL)
		return;
	free(p->leaf);
	p->leaf = NULL;
	p->leaf_len = 0;
}

static void
b64_of(const struct rba_digest *h, char out[RBA_B64_LEN(RBA_DIGEST_LEN) + 1])
{
	rba_b64_encode(h->b, RBA_DIGEST_LEN, out);
}

int
checkpoint_prove(struct store *s, const struct checkpoint *c, uint64_t id,
		 struct checkpoint_inclusion *out, struct rba_detail *d)
{
	struct store_txn *txn;
	struct store_tlog *tl = NULL;
	struct store_history_entry e;
	struct rba_digest root, leaf;
	char have[64], want[64];
	int err;

	memset(out, 0, sizeof(*out));
	memset(&e, 0, sizeof(e));
	if (id == 0 || id > c->ck.size)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"record %llu is not in the checkpoint's tree of "
				"%llu records", (unsigned long long)id,
				(unsigned long long)c->ck.size);
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = store_tlog_open(txn, &tl, d)) != 0)
		goto out;
	out->index = id - 1;
	out->tree_size = c->ck.size;
	if (store_tlog_size(tl) < c->ck.size) {
		snprintf(out->reason, sizeof(out->reason),
			 "the history holds %llu records, fewer than the %llu the "
			 "checkpoint signs: the history was cut short, or this is "
			 "another log", (unsigned long long)store_tlog_size(tl),
			 (unsigned long long)c->ck.size);
		goto out;
	}
	if ((err = store_tlog_root(tl, c->ck.size, &root, d)) != 0)
		goto out;
	if (!rba_digest_equal(&root, &c->ck.root)) {
		b64_of(&root, have);
		b64_of(&c->ck.root, want);
		snprintf(out->reason, sizeof(out->reason),
			 "the store's tree of %llu records has root %s, not the "
			 "checkpoint's %s: a fork, a rewritten record, or another "
			 "log", (unsigned long long)c->ck.size, have, want);
		goto out;
	}
	if ((err = store_tlog_prove_record(tl, c->ck.size, id, out->proof, &out->np, d)) != 0 ||
	    (err = store_history_get(txn, id, &e, d)) != 0)
		goto out;
	tlog_leaf_hash(e.record, e.len, &leaf);
	if (tlog_check_record(out->proof, out->np, c->ck.size, &c->ck.root, id - 1,
			      &leaf) != 0) {
		snprintf(out->reason, sizeof(out->reason),
			 "the inclusion proof of record %llu does not check "
			 "against the checkpoint", (unsigned long long)id);
		goto out;
	}
	out->leaf = e.record;
	out->leaf_len = e.len;
	e.record = NULL;
	out->holds = 1;
out:
	store_history_entry_release(&e);
	store_tlog_close(tl);
	store_txn_abort(txn);
	return err;
}

static int
say_no(struct checkpoint_consistency *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int
say_no(struct checkpoint_consistency *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	out->holds = 0;
	return 0;
}

int
checkpoint_needs_store(const struct checkpoint *old, const struct checkpoint *new_ck)
{
	return old->ck.size > 0 && old->ck.size < new_ck->ck.size &&
	       strcmp(old->ck.origin, new_ck->ck.origin) == 0;
}

int
checkpoint_consistency(struct store *s, const struct checkpoint *old,
		       const struct checkpoint *new_ck,
		       struct checkpoint_consistency *out, struct rba_detail *d)
{
	const struct note_checkpoint *o = &old->ck, *n = &new_ck->ck;
	struct store_txn *txn;
	struct store_tlog *tl = NULL;
	struct rba_digest root, empty;
	char b1[64], b2[64];
	int err;

	memset(out, 0, sizeof(*out));
	out->old_size = o->size;
	out->new_size = n->size;
	if (strcmp(o->origin, n->origin) != 0)
		return say_no(out, "the checkpoints are of two logs: origin '%s' "
			      "and '%s'", o->origin, n->origin);
	if (o->size > n->size)
		return say_no(out, "the newer checkpoint signs %llu records, fewer "
			      "than the %llu the older signs: the history was cut "
			      "short", (unsigned long long)n->size,
			      (unsigned long long)o->size);
	if (o->size == n->size) {
		if (rba_digest_equal(&o->root, &n->root)) {
			out->holds = 1;
			return 0;
		}
		b64_of(&o->root, b1);
		b64_of(&n->root, b2);
		return say_no(out, "two trees of %llu records with roots %s and %s: "
			      "a fork, or a rewritten record",
			      (unsigned long long)o->size, b1, b2);
	}
	if (o->size == 0) {
		empty_root(&empty);
		if (!rba_digest_equal(&o->root, &empty))
			return say_no(out, "the older checkpoint's tree of 0 records "
				      "has a root that is not the empty tree's");
		out->holds = 1;
		return 0;
	}
	if (s == NULL)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"a consistency proof needs the log's store");
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = store_tlog_open(txn, &tl, d)) != 0)
		goto out;
	if (store_tlog_size(tl) < n->size) {
		err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
			       "the store's history holds %llu records, fewer than "
			       "the %llu the newer checkpoint signs: it cannot "
			       "prove that checkpoint's log",
			       (unsigned long long)store_tlog_size(tl),
			       (unsigned long long)n->size);
		goto out;
	}
	if ((err = store_tlog_root(tl, n->size, &root, d)) != 0)
		goto out;
	if (!rba_digest_equal(&root, &n->root)) {
		err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
			       "the store's tree of %llu records is not the one "
			       "the newer checkpoint signs (another log, or a "
			       "store rewritten since): it cannot prove that "
			       "checkpoint's log", (unsigned long long)n->size);
		goto out;
	}
	if ((err = store_tlog_prove_tree(tl, n->size, o->size, out->proof, &out->np,
					 d)) != 0)
		goto out;
	if (tlog_check_tree(out->proof, out->np, n->size, &n->root, o->size,
			    &o->root) != 0) {
		b64_of(&o->root, b1);
		say_no(out, "the tree of %llu records with root %s is not a "
		       "prefix of the log the newer checkpoint signs: a fork, or a "
		       "rewritten record", (unsigned long long)o->size, b1);
		goto out;
	}
	out->holds = 1;
out:
	store_tlog_close(tl);
	store_txn_abort(txn);
	return err;
}

int
checkpoint_cosign(struct store *s, const struct checkpoint *c,
		  const struct checkpoint_witness *w, struct rba_buf *out,
		  int *refused, char *reason, struct rba_detail *d)
{
	struct checkpoint last;
	struct checkpoint_consistency cc;
	struct rba_buf signed_ck;
	int err, have_last = 0;

	*refused = 0;
	reason[0] = 0;
	memset(&last, 0, sizeof(last));
	if (strcmp(w->log->name, c->ck.origin) != 0) {
		*refused = 1;
		snprintf(reason, CHECKPOINT_REASON_MAX,
			 "the checkpoint's origin '%.200s' is not the log key's "
			 "name '%.200s'", c->ck.origin, w->log->name);
		return 0;
	}
	if (checkpoint_signed_by(c, w->log, reason) != 0) {
		*refused = 1;
		return 0;
	}
	err = checkpoint_read(w->state, &last, d);
	if (err == ENOENT) {
		err = 0; /* the first checkpoint this witness sees */
	} else if (err != 0) {
		return err;
	} else {
		have_last = 1;
		if (strcmp(last.ck.origin, c->ck.origin) != 0) {
			err = rba_fail(d, RBA_E_SCHEMA, w->state, 0, 0,
				       "the witness state is of log '%s', not '%s'",
				       last.ck.origin, c->ck.origin);
			goto out;
		}
	}
	if (have_last) {
		if ((err = checkpoint_consistency(s, &last, c, &cc, d)) != 0)
			goto out;
		if (!cc.holds) {
			*refused = 1;
			snprintf(reason, CHECKPOINT_REASON_MAX,
				 "not consistent with the checkpoint of %llu records "
				 "this witness cosigned last: %.400s",
				 (unsigned long long)last.ck.size, cc.reason);
			goto out;
		}
	}
	rba_buf_init(&signed_ck);
	err = note_sign(c->note.text, c->note.text_len, &c->note, w->name, w->key,
			&signed_ck, d);
	/* The state first: a witness never signs past what it remembers. */
	if (err == 0 && (err = rba_file_write_atomic(w->state, signed_ck.p,
						     signed_ck.len, 0644)) != 0)
		rba_fail(d, err, w->state, 0, 0, "writing the witness state: %s",
			 rba_strerror(err));
	if (err == 0)
		rba_buf_put(out, signed_ck.p, signed_ck.len);
	rba_buf_release(&signed_ck);
	if (err == 0)
		err = rba_buf_status(out);
out:
	checkpoint_release(&last);
	return err;
}

int
checkpoint_watch(struct store *s, const struct checkpoint *c,
		 struct checkpoint_watch *out, struct rba_detail *d)
{
	struct store_txn *txn;
	struct store_tlog *tl = NULL;
	struct rba_detail vd;
	struct rba_digest proof[TLOG_PROOF_MAX], empty;
	char b1[64], b2[64];
	uint64_t bad = 0, count = 0;
	size_t np;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = store_txn_begin(s, 0, 0, &txn, d)) != 0)
		return err;
	rba_detail_clear(&vd);
	err = store_history_verify(txn, &bad, &count, &vd);
	if (err == RBA_E_TAMPERED) {
		out->size = count;
		out->bad = bad;
		snprintf(out->reason, sizeof(out->reason), "the history's chain is "
			 "broken: %s", vd.reason);
		err = 0;
		goto out;
	}
	if (err != 0) {
		*d = vd;
		goto out;
	}
	out->size = count;
	rba_detail_clear(&vd);
	err = store_tlog_verify(txn, &bad, &vd);
	if (err == RBA_E_TAMPERED) {
		out->bad = bad;
		snprintf(out->reason, sizeof(out->reason), "%s", vd.reason);
		err = 0;
		goto out;
	}
	if (err != 0) {
		*d = vd;
		goto out;
	}
	if ((err = store_tlog_open(txn, &tl, d)) != 0)
		goto out;
	if (count < c->ck.size) {
		snprintf(out->reason, sizeof(out->reason),
			 "the history holds %llu records, fewer than the %llu the "
			 "checkpoint signs: the history was cut short or rolled back",
			 (unsigned long long)count, (unsigned long long)c->ck.size);
		goto out;
	}
	if (count > 0 && (err = store_tlog_root(tl, count, &out->root, d)) != 0)
		goto out;
	if (c->ck.size == 0) {
		empty_root(&empty);
		out->holds = rba_digest_equal(&empty, &c->ck.root);
		if (!out->holds)
			snprintf(out->reason, sizeof(out->reason), "the checkpoint's "
				 "tree of 0 records has a root that is not the empty "
				 "tree's");
		goto out;
	}
	if ((err = store_tlog_root(tl, c->ck.size, &out->root_at, d)) != 0)
		goto out;
	out->has_root_at = 1;
	if ((err = store_tlog_prove_tree(tl, count, c->ck.size, proof, &np, d)) != 0)
		goto out;
	if (tlog_check_tree(proof, np, count, &out->root, c->ck.size, &c->ck.root) != 0) {
		b64_of(&out->root_at, b1);
		b64_of(&c->ck.root, b2);
		snprintf(out->reason, sizeof(out->reason),
			 "the log's tree of %llu records has root %s, not the "
			 "checkpoint's %s: the history was rewritten or replaced "
			 "(a fork)", (unsigned long long)c->ck.size, b1, b2);
		goto out;
	}
	out->holds = 1;
out:
	store_tlog_close(tl);
	store_txn_abort(txn);
	return err;
}

/* ---- proofs given as JSON ------------------------------------------------ */

int
checkpoint_proof_read(const struct rba_json_value *arr, const char *what,
		      struct rba_digest *proof, size_t *np, struct rba_detail *d)
{
	*np = 0;
	if (arr == NULL || arr->type != RBA_JSON_ARRAY)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "%s is not an array", what);
	if (arr->n > TLOG_PROOF_MAX)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"%s has %zu hashes, more than %d", what, arr->n,
				TLOG_PROOF_MAX);
	for (size_t i = 0; i < arr->n; i++) {
		const struct rba_json_value *h = &arr->items[i];
		size_t got;
		if (h->type != RBA_JSON_STRING ||
		    rba_b64_decode(h->str, h->len, proof[i].b, RBA_DIGEST_LEN, &got) != 0 ||
		    got != RBA_DIGEST_LEN)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"%s[%zu] is not base64 of a 32-byte hash",
					what, i);
	}
	*np = arr->n;
	return 0;
}

/* The members of o must be exactly names[0..n). */
static int
members_exactly(const struct rba_json_value *o, const char *const *names,
		size_t n, struct rba_detail *d)
{
	if (o->type != RBA_JSON_OBJECT)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "not a JSON object");
	for (size_t i = 0; i < o->n; i++) {
		size_t j = 0;
		while (j < n && strcmp(o->keys[i], names[j]) != 0)
			j++;
		if (j == n)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"an unknown member '%s'", o->keys[i]);
		for (size_t k = 0; k < i; k++)
			if (strcmp(o->keys[k], o->keys[i]) == 0)
				return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
						"member '%s' twice", o->keys[i]);
	}
	for (size_t j = 0; j < n; j++)
		if (rba_json_get(o, names[j]) == NULL)
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"no member '%s'", names[j]);
	return 0;
}

/* A member that is a whole number 0 <= v < 2^53. */
static int
get_count(const struct rba_json_value *o, const char *key, uint64_t *out,
	  struct rba_detail *d)
{
	const struct rba_json_value *v = rba_json_get(o, key);

	if (v == NULL || v->type != RBA_JSON_NUMBER || !(v->num >= 0) ||
	    v->num > 9007199254740992.0 || v->num != (double)(uint64_t)v->num)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"%s is not a whole number", key);
	*out = (uint64_t)v->num;
	return 0;
}

int
checkpoint_inclusion_check(const struct checkpoint *c, uint64_t id,
			   const void *json, size_t n, int *holds, char *reason,
			   struct rba_detail *d)
{
	static const char *const names[] = { "index", "tree_size", "leaf", "proof" };
	struct rba_json_value root;
	struct rba_digest proof[TLOG_PROOF_MAX], leaf;
	const struct rba_json_value *lv;
	uint64_t index, size;
	uint8_t *rec = NULL;
	size_t np, rl;
	int err;

	*holds = 0;
	reason[0] = 0;
	err = rba_json_parse(json, n, &root, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err != 0)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "not JSON: %s",
				d != NULL ? d->reason : rba_strerror(err));
	if ((err = members_exactly(&root, names, 4, d)) != 0 ||
	    (err = get_count(&root, "index", &index, d)) != 0 ||
	    (err = get_count(&root, "tree_size", &size, d)) != 0 ||
	    (err = checkpoint_proof_read(rba_json_get(&root, "proof"), "proof", proof,
					 &np, d)) != 0)
		goto out;
	lv = rba_json_get(&root, "leaf");
	if (lv->type != RBA_JSON_STRING) {
		err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "leaf is not a string");
		goto out;
	}
	rec = malloc(lv->len / 4 * 3 + 1);
	if (rec == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	if (rba_b64_decode(lv->str, lv->len, rec, lv->len / 4 * 3 + 1, &rl) != 0) {
		err = rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "leaf is not base64");
		goto out;
	}
	if (index + 1 != id || size != c->ck.size) {
		snprintf(reason, CHECKPOINT_REASON_MAX,
			 "the proof is of leaf %llu in a tree of %llu records, not of "
			 "record %llu in the checkpoint's %llu",
			 (unsigned long long)index, (unsigned long long)size,
			 (unsigned long long)id, (unsigned long long)c->ck.size);
		goto out;
	}
	tlog_leaf_hash(rec, rl, &leaf);
	if (index >= size ||
	    tlog_check_record(proof, np, size, &c->ck.root, index, &leaf) != 0) {
		snprintf(reason, CHECKPOINT_REASON_MAX,
			 "the inclusion proof of record %llu does not check against "
			 "the checkpoint's root", (unsigned long long)id);
		goto out;
	}
	*holds = 1;
out:
	free(rec);
	rba_json_release(&root);
	return err;
}

int
checkpoint_consistency_check(const struct checkpoint *old,
			     const struct checkpoint *new_ck, const void *json,
			     size_t n, int *holds, char *reason,
			     struct rba_detail *d)
{
	static const char *const names[] = { "old_size", "new_size", "proof" };
	struct checkpoint_consistency cc;
	struct rba_json_value root;
	struct rba_digest proof[TLOG_PROOF_MAX];
	uint64_t os, ns;
	size_t np;
	int err;

	*holds = 0;
	reason[0] = 0;
	err = rba_json_parse(json, n, &root, d);
	if (err == RBA_E_NOMEM)
		return err;
	if (err != 0)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "not JSON: %s",
				d != NULL ? d->reason : rba_strerror(err));
	if ((err = members_exactly(&root, names, 3, d)) != 0 ||
	    (err = get_count(&root, "old_size", &os, d)) != 0 ||
	    (err = get_count(&root, "new_size", &ns, d)) != 0 ||
	    (err = checkpoint_proof_read(rba_json_get(&root, "proof"), "proof", proof,
					 &np, d)) != 0)
		goto out;
	if (os != old->ck.size || ns != new_ck->ck.size) {
		snprintf(reason, CHECKPOINT_REASON_MAX,
			 "the proof is from %llu to %llu records, not from the "
			 "checkpoints' %llu to %llu", (unsigned long long)os,
			 (unsigned long long)ns, (unsigned long long)old->ck.size,
			 (unsigned long long)new_ck->ck.size);
		goto out;
	}
	/* What needs no proof is decided as without one. */
	if (os == 0 || os >= ns || strcmp(old->ck.origin, new_ck->ck.origin) != 0) {
		err = checkpoint_consistency(NULL, old, new_ck, &cc, d);
		if (err == 0 && cc.holds && np != 0)
			snprintf(reason, CHECKPOINT_REASON_MAX,
				 "a proof of %zu hashes where none is needed", np);
		else if (err == 0 && !cc.holds)
			snprintf(reason, CHECKPOINT_REASON_MAX, "%s", cc.reason);
		else if (err == 0)
			*holds = 1;
		goto out;
	}
	if (tlog_check_tree(proof, np, ns, &new_ck->ck.root, os, &old->ck.root) != 0) {
		snprintf(reason, CHECKPOINT_REASON_MAX,
			 "the consistency proof from %llu to %llu records does not "
			 "check against the two roots: a fork, a rewritten record, "
			 "or not the proof of these checkpoints",
			 (unsigned long long)os, (unsigned long long)ns);
		goto out;
	}
	*holds = 1;
out:
	rba_json_release(&root);
	return err;
}
