/*
 * note.c - signed notes, verifier keys and checkpoints (common/note.h),
 * with the rules of Go's golang.org/x/mod/sumdb/note (note.go: Open,
 * Sign, NewVerifier, isValidName) and C2SP tlog-checkpoint.
 */
#include "common/note.h"

#include <stdio.h>
#include <string.h>

#include "common/b64.h"
#include "common/utf8.h"

#define EM_DASH "\xe2\x80\x94"
#define SIG_PREFIX EM_DASH " "
#define SIG_PREFIX_LEN 4
/* A signature line's decoded bytes: KEYHASH and a signature, at most
 * this many (Ed25519: 4 + 64; others, larger, are kept unread). */
#define SIG_BYTES_MAX 512

/* Go's unicode.IsSpace. */
static int
is_space(uint32_t c)
{
	switch (c) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
	case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029:
	case 0x202f: case 0x205f: case 0x3000:
		return 1;
	}
	return c >= 0x2000 && c <= 0x200a;
}

int
note_name_valid(const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < n;) {
		uint32_t c;
		size_t k = rba_utf8_next(p + i, n - i, &c);
		if (k == 0 || c == '+' || is_space(c))
			return 0;
		i += k;
	}
	return 1;
}

uint32_t
note_key_hash(const char *name, size_t n, const uint8_t pk[SIGN_PUBLICKEY_LEN])
{
	static const uint8_t sep[2] = { '\n', NOTE_ALG_ED25519 };
	struct rba_hasher h;
	struct rba_digest dg;

	rba_hasher_init(&h);
	rba_hasher_update(&h, name, n);
	rba_hasher_update(&h, sep, 2);
	rba_hasher_update(&h, pk, SIGN_PUBLICKEY_LEN);
	rba_hasher_final(&h, &dg);
	return (uint32_t)dg.b[0] << 24 | (uint32_t)dg.b[1] << 16 |
	       (uint32_t)dg.b[2] << 8 | dg.b[3];
}

static int
name_check(const char *name, size_t n, struct rba_detail *d)
{
	if (n > NOTE_NAME_MAX)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"a key name of %zu bytes, more than %d", n,
				NOTE_NAME_MAX);
	if (!note_name_valid(name, n))
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"'%.*s' is not a key name (non-empty UTF-8 "
				"without spaces or '+')", (int)n, name);
	return 0;
}

int
note_verifier_make(const char *name, const uint8_t pk[SIGN_PUBLICKEY_LEN],
		   struct note_verifier *out, struct rba_detail *d)
{
	size_t n = strlen(name);
	int err = name_check(name, n, d);

	if (err != 0)
		return err;
	memcpy(out->name, name, n + 1);
	memcpy(out->pk, pk, SIGN_PUBLICKEY_LEN);
	out->hash = note_key_hash(name, n, pk);
	return 0;
}

void
note_verifier_format(const struct note_verifier *v, struct rba_buf *out)
{
	uint8_t key[1 + SIGN_PUBLICKEY_LEN];

	key[0] = NOTE_ALG_ED25519;
	memcpy(key + 1, v->pk, SIGN_PUBLICKEY_LEN);
	rba_buf_printf(out, "%s+%08x+", v->name, (unsigned)v->hash);
	rba_b64_put(out, key, sizeof(key));
}

static int
hex8(const char *s, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < 8; i++) {
		int c = (unsigned char)s[i], x;
		if (c >= '0' && c <= '9')
			x = c - '0';
		else if (c >= 'a' && c <= 'f')
			x = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			x = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | (uint32_t)x;
	}
	*out = v;
	return 0;
}

int
note_verifier_parse(const char *s, size_t n, struct note_verifier *out,
		    struct rba_detail *d)
{
	uint8_t key[64];
	const char *plus1, *plus2;
	size_t klen, nl;
	uint32_t hash;
	int err;

	memset(out, 0, sizeof(*out));
	if (n > 0 && s[n - 1] == '\n')
		n--;
	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (n > NOTE_VKEY_MAX + 64)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"a verifier key of more than %d bytes",
				NOTE_VKEY_MAX);
	plus1 = memchr(s, '+', n);
	plus2 = plus1 != NULL ? memchr(plus1 + 1, '+', n - (size_t)(plus1 + 1 - s))
			      : NULL;
	if (plus1 == NULL || plus2 == NULL || plus2 - plus1 != 9 ||
	    hex8(plus1 + 1, &hash) != 0)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"not a verifier key NAME+HASH+KEY (as 'history "
				"vkey' prints it)");
	nl = (size_t)(plus1 - s);
	if ((err = name_check(s, nl, d)) != 0)
		return err;
	if (rba_b64_decode(plus2 + 1, n - (size_t)(plus2 + 1 - s), key,
			   sizeof(key), &klen) != 0 || klen == 0)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"the key of the verifier key is not base64");
	if (key[0] != NOTE_ALG_ED25519)
		return rba_fail(d, RBA_E_UNSUPPORTED, NULL, 0, 0,
				"a verifier key of algorithm %u, not Ed25519 (1)",
				key[0]);
	if (klen != 1 + SIGN_PUBLICKEY_LEN)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"an Ed25519 verifier key of %zu bytes, not 33",
				klen);
	memcpy(out->name, s, nl);
	out->name[nl] = 0;
	memcpy(out->pk, key + 1, SIGN_PUBLICKEY_LEN);
	out->hash = note_key_hash(out->name, nl, out->pk);
	if (out->hash != hash)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"the verifier key's hash %08x is not its name's "
				"and key's (%08x)", (unsigned)hash,
				(unsigned)out->hash);
	return 0;
}

/* The 1-based line of msg at offset off. */
static unsigned long
line_at(const char *msg, size_t off)
{
	unsigned long line = 1;

	for (size_t i = 0; i < off; i++)
		if (msg[i] == '\n')
			line++;
	return line;
}

int
note_open(const void *msg, size_t n, struct note *out, struct rba_detail *d)
{
	const char *m = msg;
	size_t split = SIZE_MAX, at, bad = 0;

	memset(out, 0, sizeof(*out));
	if (n > NOTE_MAX_BYTES)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"a signed note of more than %d bytes",
				NOTE_MAX_BYTES);
	if (!rba_utf8_valid(msg, n, &bad))
		return rba_fail(d, RBA_E_SYNTAX, NULL, line_at(m, bad), 0,
				"not UTF-8");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)m[i] < 0x20 && m[i] != '\n')
			return rba_fail(d, RBA_E_SYNTAX, NULL, line_at(m, i), 0,
					"a control character (0x%02x)",
					(unsigned char)m[i]);
	for (size_t i = n; i >= 2; i--)
		if (m[i - 2] == '\n' && m[i - 1] == '\n') {
			split = i - 2;
			break;
		}
	if (split == SIZE_MAX)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"not a signed note: no blank line before the "
				"signatures");
	out->text = m;
	out->text_len = split + 1;
	at = split + 2;
	if (at == n || m[n - 1] != '\n')
		return rba_fail(d, RBA_E_SYNTAX, NULL, line_at(m, n), 0,
				"not a signed note: %s",
				at == n ? "no signature" : "the last line does not end");
	while (at < n) {
		const char *line = m + at, *end = memchr(line, '\n', n - at);
		const char *name, *sp;
		struct note_sig *s;
		uint8_t raw[SIG_BYTES_MAX];
		size_t len = (size_t)(end - line), rl;
		unsigned long ln = line_at(m, at);

		if (out->nsigs == NOTE_SIGS_MAX)
			return rba_fail(d, RBA_E_LIMIT, NULL, ln, 0,
					"more than %d signatures", NOTE_SIGS_MAX);
		if (len < SIG_PREFIX_LEN || memcmp(line, SIG_PREFIX, SIG_PREFIX_LEN) != 0)
			return rba_fail(d, RBA_E_SYNTAX, NULL, ln, 0,
					"a signature line does not start with "
					"\"" SIG_PREFIX "\"");
		name = line + SIG_PREFIX_LEN;
		sp = memchr(name, ' ', (size_t)(end - name));
		if (sp == NULL || sp == end - 1 || !note_name_valid(name, (size_t)(sp - name)) ||
		    (size_t)(sp - name) > NOTE_NAME_MAX)
			return rba_fail(d, RBA_E_SYNTAX, NULL, ln, 0,
					"a signature line is not NAME BASE64");
		s = &out->sigs[out->nsigs];
		s->name = name;
		s->name_len = (size_t)(sp - name);
		s->b64 = sp + 1;
		s->b64_len = (size_t)(end - sp - 1);
		s->line = line;
		s->line_len = len + 1;
		/* KEYHASH and at least one byte of signature (Go: 5). */
		if (rba_b64_decode(s->b64, s->b64_len, raw, sizeof(raw), &rl) != 0 &&
		    s->b64_len <= RBA_B64_LEN(SIG_BYTES_MAX))
			return rba_fail(d, RBA_E_SYNTAX, NULL, ln, 0,
					"a signature that is not base64");
		if (s->b64_len <= RBA_B64_LEN(SIG_BYTES_MAX) && rl < 5)
			return rba_fail(d, RBA_E_SYNTAX, NULL, ln, 0,
					"a signature of %zu bytes", rl);
		if (s->b64_len > RBA_B64_LEN(SIG_BYTES_MAX))
			s->hash = 0; /* too long for any key here: never ours */
		else
			s->hash = (uint32_t)raw[0] << 24 | (uint32_t)raw[1] << 16 |
				  (uint32_t)raw[2] << 8 | raw[3];
		out->nsigs++;
		at += len + 1;
	}
	return 0;
}

static int
sig_is(const struct note_sig *s, const char *name, size_t n, uint32_t hash)
{
	return s->hash == hash && s->name_len == n &&
	       memcmp(s->name, name, n) == 0;
}

int
note_verify(const struct note *n, const struct note_verifier *v)
{
	size_t nl = strlen(v->name);

	for (size_t i = 0; i < n->nsigs; i++) {
		const struct note_sig *s = &n->sigs[i];
		uint8_t raw[SIG_BYTES_MAX];
		size_t rl;

		if (!sig_is(s, v->name, nl, v->hash))
			continue;
		/* The first line by the key decides, as in note.Open. */
		if (rba_b64_decode(s->b64, s->b64_len, raw, sizeof(raw), &rl) != 0 ||
		    rl != 4 + SIGN_SIG_LEN)
			return RBA_E_BADSIG;
		return sign_raw_verify(v->pk, n->text, n->text_len, raw + 4);
	}
	return RBA_E_NOTFOUND;
}

int
note_sign(const char *text, size_t tn, const struct note *prev,
	  const char *name, const struct sign_seckey *k, struct rba_buf *out,
	  struct rba_detail *d)
{
	struct sign_pubkey pub;
	uint8_t raw[4 + SIGN_SIG_LEN];
	size_t nl = strlen(name), start = out->len, lines = 1;
	uint32_t hash;
	int err;

	if (tn == 0 || text[tn - 1] != '\n')
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"a note's text must end in a newline");
	if ((err = name_check(name, nl, d)) != 0)
		return err;
	sign_seckey_pubkey(k, &pub);
	hash = note_key_hash(name, nl, pub.pk);
	raw[0] = (uint8_t)(hash >> 24);
	raw[1] = (uint8_t)(hash >> 16);
	raw[2] = (uint8_t)(hash >> 8);
	raw[3] = (uint8_t)hash;
	if ((err = sign_raw_sign(k, text, tn, raw + 4)) != 0)
		return err;
	rba_buf_put(out, text, tn);
	rba_buf_put_u8(out, '\n');
	for (size_t i = 0; prev != NULL && i < prev->nsigs; i++) {
		if (sig_is(&prev->sigs[i], name, nl, hash))
			continue;
		rba_buf_put(out, prev->sigs[i].line, prev->sigs[i].line_len);
		lines++;
	}
	rba_buf_put(out, SIG_PREFIX, SIG_PREFIX_LEN);
	rba_buf_put(out, name, nl);
	rba_buf_put_u8(out, ' ');
	rba_b64_put(out, raw, sizeof(raw));
	rba_buf_put_u8(out, '\n');
	if ((err = rba_buf_status(out)) != 0)
		return err;
	if (lines > NOTE_SIGS_MAX || out->len - start > NOTE_MAX_BYTES) {
		out->len = start;
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"the note would have more than %d signatures or "
				"%d bytes", NOTE_SIGS_MAX, NOTE_MAX_BYTES);
	}
	return 0;
}

int
note_checkpoint_parse(const char *text, size_t n, struct note_checkpoint *ck,
		      struct rba_detail *d)
{
	const char *l[3], *e[3], *p = text, *end = text + n;
	uint8_t root[64];
	size_t rl;
	uint64_t size = 0;

	memset(ck, 0, sizeof(*ck));
	ck->ext = "";
	for (int i = 0; i < 3; i++) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		if (nl == NULL)
			return rba_fail(d, RBA_E_SYNTAX, NULL, (unsigned long)i + 1, 0,
					"a checkpoint has an origin, a size and a "
					"root hash line");
		l[i] = p;
		e[i] = nl;
		p = nl + 1;
	}
	if (!note_name_valid(l[0], (size_t)(e[0] - l[0])) ||
	    (size_t)(e[0] - l[0]) > NOTE_NAME_MAX)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 1, 0,
				"the origin is not a name (non-empty, no spaces "
				"or '+')");
	memcpy(ck->origin, l[0], (size_t)(e[0] - l[0]));
	ck->origin[e[0] - l[0]] = 0;
	if (e[1] == l[1] || e[1] - l[1] > 20 || (l[1][0] == '0' && e[1] - l[1] > 1))
		return rba_fail(d, RBA_E_SYNTAX, NULL, 2, 0,
				"the tree size is not a decimal number without "
				"leading zeros");
	for (const char *q = l[1]; q < e[1]; q++) {
		unsigned dg = (unsigned)(*q - '0');
		if (*q < '0' || *q > '9' || size > (UINT64_MAX - dg) / 10)
			return rba_fail(d, RBA_E_SYNTAX, NULL, 2, 0,
					"the tree size is not a decimal number "
					"without leading zeros");
		size = size * 10 + dg;
	}
	if (size > INT64_MAX)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 2, 0,
				"the tree size is over 2^63 - 1");
	if (rba_b64_decode(l[2], (size_t)(e[2] - l[2]), root, sizeof(root), &rl) != 0 ||
	    rl != RBA_DIGEST_LEN)
		return rba_fail(d, RBA_E_SYNTAX, NULL, 3, 0,
				"the root hash is not base64 of 32 bytes");
	for (const char *q = p; q < end;) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		if (nl == NULL || nl == q)
			return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
					"an extension line of the checkpoint is "
					"empty or does not end");
		q = nl + 1;
	}
	ck->size = size;
	memcpy(ck->root.b, root, RBA_DIGEST_LEN);
	ck->ext = p;
	ck->ext_len = (size_t)(end - p);
	return 0;
}

void
note_checkpoint_format(const char *origin, uint64_t size,
		       const struct rba_digest *root, struct rba_buf *out)
{
	rba_buf_printf(out, "%s\n%llu\n", origin, (unsigned long long)size);
	rba_b64_put(out, root->b, RBA_DIGEST_LEN);
	rba_buf_put_u8(out, '\n');
}
