/*
 * note.h - signed notes (C2SP signed-note, as Go's
 * golang.org/x/mod/sumdb/note reads and writes them) and the
 * checkpoints of a transparency log in them (C2SP tlog-checkpoint).
 *
 * A signed note is UTF-8 with no control character but newline: a text
 * ending in "\n", a blank line, then one or more signature lines
 *   "— " NAME " " base64(KEYHASH[4] || SIGNATURE)
 * (U+2014 EM DASH, a space), each ending in "\n".  The text is what is
 * signed, its final newline included, the blank line not.  KEYHASH is
 * the first four bytes, big-endian, of
 *   SHA-256(NAME || "\n" || 0x01 || Ed25519 public key[32])
 * and SIGNATURE the Ed25519 signature of the text (signature type 0x01).
 * A name is non-empty UTF-8 with no Unicode space and no "+".  At most
 * NOTE_SIGS_MAX signature lines; a line by a key nobody asked about is
 * kept and ignored, as Go's note.Open does.
 *
 * The verifier key of a name and an Ed25519 public key, as Go's
 * note.NewVerifier reads it, is one line:
 *   NAME "+" 8 lowercase hex digits of KEYHASH "+" base64(0x01 || key)
 *
 * A checkpoint is the text of a note (tlog-checkpoint):
 *   ORIGIN "\n" SIZE "\n" base64(ROOT[32]) "\n" [extension lines]
 * ORIGIN a name (the log's; its own signature is under that name),
 * SIZE the tree's size in decimal without leading zeros, ROOT the
 * RFC 6962 root of its first SIZE records (common/tlog.h); extension
 * lines are non-empty and are kept but not interpreted.
 */
#ifndef RBA_NOTE_H
#define RBA_NOTE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "common/sign.h"

#define NOTE_MAX_BYTES 65536 /* a signed note, whole */
#define NOTE_SIGS_MAX 100    /* signature lines (Go's note.Open's cap) */
#define NOTE_NAME_MAX 255    /* bytes of a name */
#define NOTE_ALG_ED25519 0x01
#define NOTE_VKEY_MAX (NOTE_NAME_MAX + 1 + 8 + 1 + 44) /* a verifier key */

/* One signature line, viewing the note it was read from. */
struct note_sig {
	const char *name;
	size_t name_len;
	uint32_t hash;	   /* KEYHASH */
	const char *b64;   /* base64(KEYHASH || signature) */
	size_t b64_len;
	const char *line;  /* the whole line, "\n" included */
	size_t line_len;
};

/* A signed note as read by note_open: views into its bytes. */
struct note {
	const char *text; /* what is signed, ending in "\n" */
	size_t text_len;
	struct note_sig sigs[NOTE_SIGS_MAX];
	size_t nsigs;
};

/* A key that checks signatures, from its verifier key or made. */
struct note_verifier {
	char name[NOTE_NAME_MAX + 1];
	uint32_t hash;
	uint8_t pk[SIGN_PUBLICKEY_LEN];
};

/* A checkpoint's text, parsed; ext views the extension lines. */
struct note_checkpoint {
	char origin[NOTE_NAME_MAX + 1];
	uint64_t size;
	struct rba_digest root;
	const char *ext; /* "" when none; each line ends in "\n" */
	size_t ext_len;
};

/* 1 when s[0..n) is a valid name, else 0. */
int note_name_valid(const char *s, size_t n);

/* KEYHASH of name (n bytes) and an Ed25519 public key. */
uint32_t note_key_hash(const char *name, size_t n,
		       const uint8_t pk[SIGN_PUBLICKEY_LEN]);

/*
 * The verifier of name and pk into *out.  0; RBA_E_SYNTAX (not a valid
 * name); RBA_E_LIMIT (over NOTE_NAME_MAX bytes).
 */
int note_verifier_make(const char *name, const uint8_t pk[SIGN_PUBLICKEY_LEN],
		       struct note_verifier *out, struct rba_detail *d);

/* Appends v's verifier key (no newline) to out; errors stay in out. */
void note_verifier_format(const struct note_verifier *v, struct rba_buf *out);

/*
 * Parses a verifier key: s[0..n), one line (a final "\n" or "\r\n"
 * allowed).  0; RBA_E_SYNTAX (not NAME+HASH+KEY, a bad name, hex or
 * base64); RBA_E_UNSUPPORTED (an algorithm other than Ed25519);
 * RBA_E_SCHEMA (the hash is not the name's and key's); RBA_E_LIMIT.
 */
int note_verifier_parse(const char *s, size_t n, struct note_verifier *out,
			struct rba_detail *d);

/*
 * Reads a signed note's structure (nothing is verified): msg[0..n).
 * out views msg.  0; RBA_E_SYNTAX (not UTF-8, a control character, no
 * blank line before the signatures, a malformed signature line: d->line
 * is the note's line at fault); RBA_E_LIMIT (over NOTE_MAX_BYTES or
 * NOTE_SIGS_MAX signatures).
 */
int note_open(const void *msg, size_t n, struct note *out,
	      struct rba_detail *d);

/*
 * Whether the note holds a valid signature by v: the line under v's
 * name and key hash.  0 when one verifies; RBA_E_BADSIG when a line by
 * v does not; RBA_E_NOTFOUND when no line is v's; RBA_E_CRYPTO.
 */
int note_verify(const struct note *n, const struct note_verifier *v);

/*
 * Signs text[0..tn) (ending in "\n") under name with k: appends to out
 * the text, the blank line, the signature lines of prev (a note of that
 * text, NULL for none) other than one by the same name and key, then
 * the new line.  0; RBA_E_SYNTAX (text not ending in "\n", a bad name);
 * RBA_E_LIMIT (the note would be over NOTE_MAX_BYTES or NOTE_SIGS_MAX
 * lines); RBA_E_CRYPTO; RBA_E_NOMEM.
 */
int note_sign(const char *text, size_t tn, const struct note *prev,
	      const char *name, const struct sign_seckey *k,
	      struct rba_buf *out, struct rba_detail *d);

/*
 * Parses a checkpoint's text (a note's text: text[0..n)).  ck->ext
 * views text.  0, or RBA_E_SYNTAX naming the line at fault in d->line.
 */
int note_checkpoint_parse(const char *text, size_t n,
			  struct note_checkpoint *ck, struct rba_detail *d);

/* Appends the text of a checkpoint without extension lines. */
void note_checkpoint_format(const char *origin, uint64_t size,
			    const struct rba_digest *root, struct rba_buf *out);

#endif
