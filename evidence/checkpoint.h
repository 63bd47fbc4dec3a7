/*
 * checkpoint.h - the store's history as a transparency log seen from
 * outside: signed checkpoints (common/note.h) of its Merkle tree
 * (store.h, "the log"), the inclusion proof of one record, the
 * consistency of two checkpoints, a witness that cosigns only what is
 * consistent with what it cosigned before, and the watch of a kept
 * checkpoint.  rebuild-audit-evidence(5), TRANSPARENCY LOG, is the
 * specification; doc/design.md section 6.7 the design.
 *
 * The log's checkpoints are signed with the tool's minisign key (the
 * same Ed25519 key pair: common/sign.h) under the checkpoint's origin as
 * the key name, by default CHECKPOINT_ORIGIN_PREFIX and the store id.
 *
 * Answers of no (a fork, a rewritten record, a truncated history, a
 * signature by another key) are not errors: the functions return 0 and
 * say no in their result, with a one-line reason; an error is a
 * question they could not answer.
 */
#ifndef RBA_CHECKPOINT_H
#define RBA_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/note.h"
#include "common/rba.h"
#include "common/sign.h"
#include "common/tlog.h"
#include "store/store.h"

#define CHECKPOINT_ORIGIN_PREFIX "rebuild-audit.dev/store/"
#define CHECKPOINT_REASON_MAX 512

/* A checkpoint read from a file or bytes: owns them. */
struct checkpoint {
	uint8_t *bytes;
	size_t len;
	struct note note;	    /* views bytes */
	struct note_checkpoint ck; /* views bytes */
};

/* The default origin of a store: CHECKPOINT_ORIGIN_PREFIX and its id. */
void checkpoint_origin_default(const char *store_id_hex,
			       char out[NOTE_NAME_MAX + 1]);

/*
 * Reads a checkpoint: a signed note (nothing verified yet) whose text is
 * a checkpoint.  checkpoint_read reads the file at path (at most
 * NOTE_MAX_BYTES; d->file the path), checkpoint_parse copies p[0..n).
 * 0; RBA_E_SYNTAX (d->line the line at fault); RBA_E_LIMIT; RBA_E_NOMEM;
 * an errno.  Release with checkpoint_release.
 */
int checkpoint_read(const char *path, struct checkpoint *out,
		    struct rba_detail *d);
int checkpoint_parse(const void *p, size_t n, struct checkpoint *out,
		     struct rba_detail *d);
void checkpoint_release(struct checkpoint *c);

/*
 * A verifier key given on a command line: the key's text itself
 * (NAME+HASH+KEY) or the name of a file holding it.  0; the errors of
 * note_verifier_parse; an errno reading the file.
 */
int checkpoint_vkey_load(const char *arg, struct note_verifier *out,
			 struct rba_detail *d);

/*
 * Whether c carries a valid signature by v: 0 yes; RBA_E_BADSIG no,
 * with reason (CHECKPOINT_REASON_MAX bytes) saying which: no line by
 * that key ("not signed by NAME+HASH", the lines it has named), or one
 * that does not verify.
 */
int checkpoint_signed_by(const struct checkpoint *c,
			 const struct note_verifier *v, char *reason);

/*
 * The checkpoint of the whole history of s, in one read transaction:
 * origin (NULL: the default), the history's record count, its root;
 * signed by key under origin and appended to out.  *ck (may be NULL)
 * gets what it says.  0; RBA_E_SYNTAX (origin not a name); the errors
 * of store_tlog_open and store_tlog_root; RBA_E_CRYPTO; RBA_E_NOMEM.
 */
int checkpoint_make(struct store *s, const struct sign_seckey *key,
		    const char *origin, struct rba_buf *out,
		    struct note_checkpoint *ck, struct rba_detail *d);

/* An inclusion proof: record id in the tree of the checkpoint. */
struct checkpoint_inclusion {
	int holds;	      /* 0: the store's log is not the checkpoint's */
	char reason[CHECKPOINT_REASON_MAX];
	uint64_t index;	      /* id - 1 */
	uint64_t tree_size;
	uint8_t *leaf;	      /* the record's bytes (malloc'd) */
	size_t leaf_len;
	struct rba_digest proof[TLOG_PROOF_MAX];
	size_t np;
};
void checkpoint_inclusion_release(struct checkpoint_inclusion *p);

/*
 * The inclusion proof of history record id of s in the tree c signs:
 * the store's tree of c's size must have c's root (else holds 0: a fork,
 * a rewrite, or another log), and the proof is checked against c's
 * root before it is returned.  0; RBA_E_RANGE (id 0 or past c's size);
 * RBA_E_TAMPERED (the record is not the log's leaf); the store's errors.
 */
int checkpoint_prove(struct store *s, const struct checkpoint *c, uint64_t id,
		     struct checkpoint_inclusion *out, struct rba_detail *d);

/* A consistency proof between two checkpoints. */
struct checkpoint_consistency {
	int holds;	       /* 1: old's tree is a prefix of new's */
	char reason[CHECKPOINT_REASON_MAX];
	uint64_t old_size, new_size;
	struct rba_digest proof[TLOG_PROOF_MAX];
	size_t np;
};

/*
 * Whether the tree old signs is a prefix of the one new signs, by the
 * RFC 6962 consistency proof the log of s gives (checked against the
 * two roots alone: the store is trusted for nothing but the proof).
 * Two checkpoints of one size need no store (s may then be NULL): the
 * same root or a fork.  No: another origin, a smaller new tree, the
 * proof failing.  0 with out filled; RBA_E_SCHEMA when s cannot prove
 * for new (its history is shorter, or its tree of new's size has
 * another root: d says so); the store's errors.
 */
int checkpoint_consistency(struct store *s, const struct checkpoint *old,
			   const struct checkpoint *new_ck,
			   struct checkpoint_consistency *out,
			   struct rba_detail *d);

/*
 * Offline checks of proofs given as JSON, with no store: an inclusion
 * proof as `history prove --json` prints it ({"index", "tree_size",
 * "leaf", "proof"}: index id - 1, tree_size c's size, leaf the record's
 * bytes in base64, proof RFC 6962's audit path) against checkpoint c;
 * a consistency proof as `history consistency --json` prints it
 * ({"old_size", "new_size", "proof"}) against old and new.  Exactly
 * those members.  0 with *holds and, when 0, reason; RBA_E_SCHEMA (not
 * such a document: d says what); RBA_E_NOMEM.
 */
int checkpoint_inclusion_check(const struct checkpoint *c, uint64_t id,
			       const void *json, size_t n, int *holds,
			       char *reason, struct rba_detail *d);
int checkpoint_consistency_check(const struct checkpoint *old,
				 const struct checkpoint *new_ck,
				 const void *json, size_t n, int *holds,
				 char *reason, struct rba_detail *d);

/*
 * A proof's hashes from a JSON array of base64 strings (at most
 * TLOG_PROOF_MAX): 0 or RBA_E_SCHEMA naming what (what: the member).
 */
struct rba_json_value;
int checkpoint_proof_read(const struct rba_json_value *arr, const char *what,
			  struct rba_digest *proof, size_t *np,
			  struct rba_detail *d);

/* 1 when checkpoint_consistency of old and new needs the log's store
 * (old's tree is smaller but not empty, and of the same origin). */
int checkpoint_needs_store(const struct checkpoint *old,
			   const struct checkpoint *new_ck);

/* What a witness is: its name, key, the log's key and its state file. */
struct checkpoint_witness {
	const char *name;		/* the witness's key name */
	const struct sign_seckey *key;
	const struct note_verifier *log; /* the log's verifier key */
	const char *state;		/* the state file */
};

/*
 * Cosigns c as witness w: c must carry a valid signature by the log's
 * key under its origin (the log key's name); and when w's state file
 * holds the checkpoint w cosigned last (of the same origin), c must be
 * consistent with it (checkpoint_consistency with s's proof: the same
 * tree, or one that extends it).  Then the state file is replaced by
 * the cosigned checkpoint (atomically, first) and the cosigned
 * checkpoint appended to out: c's text and signature lines and w's
 * line.  *refused gets 0, or 1 with reason when w refuses (nothing
 * written).  0; RBA_E_SYNTAX / RBA_E_LIMIT (the state file does not
 * parse); RBA_E_SCHEMA (the state file is another log's, or s cannot
 * prove); the store's errors; an errno writing the state file.
 */
int checkpoint_cosign(struct store *s, const struct checkpoint *c,
		      const struct checkpoint_witness *w, struct rba_buf *out,
		      int *refused, char *reason, struct rba_detail *d);

/* What history watch found. */
struct checkpoint_watch {
	int holds;	       /* 1: the log still extends the checkpoint */
	char reason[CHECKPOINT_REASON_MAX];
	uint64_t size;	       /* the history's records */
	uint64_t bad;	       /* the first record found rewritten, 0 */
	struct rba_digest root;    /* the log's root now (holds 1) */
	struct rba_digest root_at; /* its root at the checkpoint's size */
	int has_root_at;
};

/*
 * Whether the history of s, as it is, still extends the tree c signs:
 * its chain intact, every record its log's leaf (every record read:
 * store_tlog_verify), not shorter than c, and a consistency proof from
 * c's tree to the whole log checking against c's root.  0 with out
 * filled; the store's errors.
 */
int checkpoint_watch(struct store *s, const struct checkpoint *c,
		     struct checkpoint_watch *out, struct rba_detail *d);

#endif
