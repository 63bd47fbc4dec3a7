/*
 * dsse.c - DSSE envelopes signed with a minisign key pair's Ed25519 key
 * (common/dsse.h).
 */
#include "common/dsse.h"

#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/json.h"

void
dsse_pae(struct rba_buf *out, const char *type, const void *body, size_t n)
{
	size_t tn = strlen(type);

	rba_buf_printf(out, "DSSEv1 %zu ", tn);
	rba_buf_put(out, type, tn);
	rba_buf_printf(out, " %zu ", n);
	rba_buf_put(out, body, n);
}

int
dsse_envelope_sign(const struct sign_seckey *k, const char *type,
		   const void *body, size_t n, struct rba_buf *out,
		   struct rba_detail *d)
{
	struct sign_pubkey pub;
	struct rba_buf pae;
	uint8_t sig[SIGN_SIG_LEN];
	char id[SIGN_KEYID_TEXT_LEN + 1];
	int err;

	rba_buf_init(&pae);
	dsse_pae(&pae, type, body, n);
	if ((err = rba_buf_status(&pae)) != 0) {
		rba_buf_release(&pae);
		return rba_fail(d, err, NULL, 0, 0, "cannot encode the envelope");
	}
	err = sign_raw_sign(k, pae.p, pae.len, sig);
	rba_buf_release(&pae);
	if (err != 0)
		return rba_fail(d, err, NULL, 0, 0, "cannot sign the envelope");
	sign_seckey_pubkey(k, &pub);
	sign_keyid_format(pub.keyid, id);
	rba_buf_printf(out, "{\"payloadType\": ");
	rba_json_put_str(out, type);
	rba_buf_printf(out, ", \"payload\": \"");
	rba_b64_put(out, body, n);
	rba_buf_printf(out, "\", \"signatures\": [{\"keyid\": \"%s\", \"sig\": \"", id);
	rba_b64_put(out, sig, sizeof(sig));
	rba_buf_printf(out, "\"}]}\n");
	if ((err = rba_buf_status(out)) != 0)
		return rba_fail(d, err, NULL, 0, 0, "cannot write the envelope");
	return 0;
}

int
dsse_is_envelope(const void *p, size_t n)
{
	struct rba_json_value root;
	int is;

	if (rba_json_parse(p, n, &root, NULL) != 0)
		return 0;
	is = root.type == RBA_JSON_OBJECT && rba_json_get(&root, "payloadType") != NULL;
	rba_json_release(&root);
	return is;
}

/*
 * Decodes base64 s[0..len), standard or URL-safe, padded or not, into a
 * malloc'd *out (*outn bytes).  0; RBA_E_SYNTAX; RBA_E_NOMEM.
 */
static int
b64_any(const char *s, size_t len, uint8_t **out, size_t *outn)
{
	size_t padded = (len + 3) / 4 * 4, cap = padded / 4 * 3 + 1;
	char *t;
	int err;

	*out = NULL;
	*outn = 0;
	if (len % 4 == 1)
		return RBA_E_SYNTAX;
	if ((t = malloc(padded + 1)) == NULL || (*out = malloc(cap)) == NULL) {
		free(t);
		return RBA_E_NOMEM;
	}
	for (size_t i = 0; i < len; i++)
		t[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
	for (size_t i = len; i < padded; i++)
		t[i] = '=';
	t[padded] = '\0';
	/* one alphabet only: a text that mixes them is no base64 */
	if (memchr(s, '-', len) || memchr(s, '_', len))
		if (memchr(s, '+', len) || memchr(s, '/', len)) {
			free(t);
			free(*out);
			*out = NULL;
			return RBA_E_SYNTAX;
		}
	err = rba_b64_decode(t, padded, *out, cap, outn);
	free(t);
	if (err != 0) {
		free(*out);
		*out = NULL;
		*outn = 0;
	}
	return err;
}

static int
bad(struct rba_detail *d, int err, const char *what)
{
	return rba_fail(d, err, NULL, 0, 0, "%s", what);
}

/* One member of signatures[] into s. */
static int
parse_sig(const struct rba_json_value *v, size_t i, struct dsse_sig *s,
	  struct rba_detail *d)
{
	const struct rba_json_value *k, *sig;
	uint8_t *raw = NULL;
	size_t rn = 0;
	int err;

	memset(s, 0, sizeof(*s));
	if (v->type != RBA_JSON_OBJECT)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"signatures[%zu] is not an object", i);
	k = rba_json_get(v, "keyid");
	if (k != NULL && k->type != RBA_JSON_STRING)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"signatures[%zu].keyid is not a string", i);
	if (k != NULL && (k->len > DSSE_KEYID_MAX || memchr(k->str, 0, k->len)))
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"signatures[%zu].keyid is over %d bytes or holds NUL",
				i, DSSE_KEYID_MAX);
	if (k != NULL)
		memcpy(s->keyid, k->str, k->len + 1);
	sig = rba_json_get(v, "sig");
	if (sig == NULL || sig->type != RBA_JSON_STRING)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"signatures[%zu].sig is missing or not a string", i);
	if ((err = b64_any(sig->str, sig->len, &raw, &rn)) != 0)
		return err == RBA_E_NOMEM ? err
		       : rba_fail(d, err, NULL, 0, 0,
				  "signatures[%zu].sig is not base64", i);
	if (rn == SIGN_SIG_LEN) {
		memcpy(s->sig, raw, SIGN_SIG_LEN);
		s->sig_ok = 1;
	}
	free(raw);
	return 0;
}

int
dsse_envelope_parse(const void *p, size_t n, struct dsse_envelope *out,
		    struct rba_detail *d)
{
	struct rba_json_value root;
	const struct rba_json_value *t, *pl, *sigs;
	struct rba_detail jd;
	int err;

	memset(out, 0, sizeof(*out));
	rba_detail_clear(&jd);
	if ((err = rba_json_parse(p, n, &root, &jd)) != 0)
		return err == RBA_E_NOMEM ? err
		       : rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				  "not JSON (byte %lu: %s)", jd.col, jd.reason);
	err = RBA_E_SYNTAX;
	if (root.type != RBA_JSON_OBJECT) {
		bad(d, err, "not a JSON object");
		goto out;
	}
	t = rba_json_get(&root, "payloadType");
	pl = rba_json_get(&root, "payload");
	sigs = rba_json_get(&root, "signatures");
	if (t == NULL || t->type != RBA_JSON_STRING) {
		bad(d, err, "payloadType is missing or not a string");
		goto out;
	}
	if (t->len > DSSE_TYPE_MAX || memchr(t->str, 0, t->len)) {
		err = bad(d, RBA_E_LIMIT, "payloadType is too long or holds NUL");
		goto out;
	}
	memcpy(out->type, t->str, t->len + 1);
	if (pl == NULL || pl->type != RBA_JSON_STRING) {
		bad(d, err, "payload is missing or not a string");
		goto out;
	}
	if (sigs == NULL || sigs->type != RBA_JSON_ARRAY) {
		bad(d, err, "signatures is missing or not an array");
		goto out;
	}
	if (sigs->n == 0) {
		bad(d, err, "signatures is empty");
		goto out;
	}
	if (sigs->n > DSSE_SIGS_MAX) {
		err = rba_fail(d, RBA_E_LIMIT, NULL, 0, 0, "more than %d signatures",
			       DSSE_SIGS_MAX);
		goto out;
	}
	for (size_t i = 0; i < sigs->n; i++)
		if ((err = parse_sig(&sigs->items[i], i, &out->sigs[i], d)) != 0)
			goto out;
	out->nsigs = sigs->n;
	if ((err = b64_any(pl->str, pl->len, &out->payload, &out->n)) != 0 &&
	    err != RBA_E_NOMEM)
		bad(d, err, "payload is not base64");
out:
	rba_json_release(&root);
	if (err != 0)
		dsse_envelope_release(out);
	return err;
}

void
dsse_envelope_release(struct dsse_envelope *e)
{
	if (e == NULL)
		return;
	free(e->payload);
	memset(e, 0, sizeof(*e));
}

int
dsse_envelope_verify(const struct dsse_envelope *e,
		     const uint8_t pk[SIGN_PUBLICKEY_LEN], const char *keyid,
		     size_t *which, size_t *tried)
{
	struct rba_buf pae;
	int err = RBA_E_BADSIG;

	*tried = 0;
	rba_buf_init(&pae);
	dsse_pae(&pae, e->type, e->payload != NULL ? e->payload : (const uint8_t *)"",
		 e->n);
	if (rba_buf_status(&pae) != 0) {
		rba_buf_release(&pae);
		return RBA_E_NOMEM;
	}
	for (size_t i = 0; i < e->nsigs && err == RBA_E_BADSIG; i++) {
		const struct dsse_sig *s = &e->sigs[i];

		if (keyid != NULL && s->keyid[0] != '\0' && strcmp(s->keyid, keyid) != 0)
			continue;
		++*tried;
		if (!s->sig_ok)
			continue;
		err = sign_raw_verify(pk, pae.p, pae.len, s->sig);
		if (err == 0)
			*which = i;
	}
	rba_buf_release(&pae);
	return err;
}
