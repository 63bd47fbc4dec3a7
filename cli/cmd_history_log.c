/*
 * cmd_history_log.c - the history as a transparency log
 * (evidence/checkpoint.h): history vkey, checkpoint, cosign, prove,
 * consistency and watch, the subcommands of cmd_history.
 *
 *   history vkey -p PUB [--origin O]
 *   history checkpoint -k KEY -o CK [--origin O] [--passphrase-file F] [--force]
 *   history cosign CK -k KEY --vkey VKEY --state FILE -o CK2 [--origin O] ...
 *   history prove N --checkpoint CK [--vkey VKEY]... [--json]
 *   history consistency OLD NEW [--vkey VKEY]... [--json]
 *   history watch OLD [--vkey VKEY]...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/b64.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/note.h"
#include "common/sign.h"
#include "evidence/checkpoint.h"
#include "store/store.h"

#define VKEYS_MAX 16 /* --vkey of one command */

/* The options of every subcommand; which it takes is its own check. */
struct log_args {
	const char *pos[2];
	int npos;
	const char *pub, *key, *out, *origin, *passfile, *state, *checkpoint;
	const char *proof; /* --proof FILE: check it, without a store */
	const char *vkeys[VKEYS_MAX];
	int nvkeys, force;
	const char *sub; /* the subcommand */
};

static int
log_parse(struct cli_ctx *ctx, int argc, char **argv, struct log_args *a)
{
	int r, opts = 1;

	memset(a, 0, sizeof(*a));
	a->sub = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i], *v;

		if (opts && strcmp(s, "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && ((r = cli_opt_value(argc, argv, &i, "-p", &a->pub)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "-k", &a->key)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "-o", &a->out)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--origin", &a->origin)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--passphrase-file",
						&a->passfile)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--state", &a->state)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--checkpoint",
						&a->checkpoint)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--proof", &a->proof)) != 0)) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", s);
			continue;
		}
		if (opts && (r = cli_opt_value(argc, argv, &i, "--vkey", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "option '--vkey' needs a value");
			if (a->nvkeys == VKEYS_MAX)
				return cli_usage(ctx, "at most %d --vkey", VKEYS_MAX);
			a->vkeys[a->nvkeys++] = v;
			continue;
		}
		if (opts && strcmp(s, "--force") == 0) {
			a->force = 1;
			continue;
		}
		if (opts && s[0] == '-' && s[1] != 0)
			return cli_usage(ctx, "unknown option '%s'", s);
		if (a->npos == 2)
			return cli_usage(ctx, "unexpected argument '%s'", s);
		a->pos[a->npos++] = s;
	}
	return 0;
}

/* Refuses the options a subcommand does not take (given as a string of
 * letters: p k o O P s c v f). */
static int
log_only(struct cli_ctx *ctx, const struct log_args *a, const char *takes,
	 int npos, const char *need)
{
	static const struct { char c; const char *name; } names[] = {
		{ 'p', "-p" }, { 'k', "-k" }, { 'o', "-o" }, { 'O', "--origin" },
		{ 'P', "--passphrase-file" }, { 's', "--state" },
		{ 'c', "--checkpoint" }, { 'v', "--vkey" }, { 'f', "--force" },
		{ 'x', "--proof" },
	};
	const void *given[] = { a->pub, a->key, a->out, a->origin, a->passfile,
				a->state, a->checkpoint,
				a->nvkeys ? "" : NULL, a->force ? "" : NULL, a->proof };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (given[i] != NULL && strchr(takes, names[i].c) == NULL)
			return cli_usage(ctx, "history %s takes no %s", a->sub,
					 names[i].name);
	if (a->npos != npos)
		return cli_usage(ctx, "%s", need);
	return 0;
}

static int
vkeys_load(const struct log_args *a, struct note_verifier *v)
{
	struct rba_detail d;
	int err;

	for (int i = 0; i < a->nvkeys; i++) {
		rba_detail_clear(&d);
		if ((err = checkpoint_vkey_load(a->vkeys[i], &v[i], &d)) != 0)
			return cli_fail("cannot read verifier key",
					d.file[0] ? d.file : a->vkeys[i], err, &d);
	}
	return 0;
}

static int
ck_load(const char *path, struct checkpoint *c)
{
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	if ((err = checkpoint_read(path, c, &d)) != 0)
		return cli_fail("cannot read checkpoint", path, err, &d);
	return 0;
}

/* Every --vkey must have signed c: 0, or 1 after one line. */
static int
ck_signed(const struct checkpoint *c, const char *path,
	  const struct note_verifier *v, int nv)
{
	char why[CHECKPOINT_REASON_MAX];

	for (int i = 0; i < nv; i++)
		if (checkpoint_signed_by(c, &v[i], why) != 0) {
			fprintf(stderr, "rebuild-audit: checkpoint refused '%s': %s\n",
				path, why);
			return 1;
		}
	return 0;
}

/* A proof's hashes in base64, as the member "proof" of w's open object. */
static void
json_proof(struct rba_json_w *w, const struct rba_digest *p, size_t np)
{
	char b[RBA_B64_LEN(RBA_DIGEST_LEN) + 1];

	rba_json_w_open(w, "proof", '[');
	for (size_t i = 0; i < np; i++) {
		rba_b64_encode(p[i].b, RBA_DIGEST_LEN, b);
		rba_json_w_str(w, NULL, b);
	}
	rba_json_w_close(w, ']');
}

static void
text_proof(const struct rba_digest *p, size_t np)
{
	char b[RBA_B64_LEN(RBA_DIGEST_LEN) + 1];

	printf("proof: %zu hash%s\n", np, np == 1 ? "" : "es");
	for (size_t i = 0; i < np; i++) {
		rba_b64_encode(p[i].b, RBA_DIGEST_LEN, b);
		printf("  %s\n", b);
	}
}

/*
 * history prove / consistency --proof FILE: the proof in FILE checked
 * against the checkpoints alone (checkpoint_*_check); c2 NULL for an
 * inclusion proof of record id.  Returns the exit status.
 */
static int
proof_check(struct cli_ctx *ctx, const char *file, const struct checkpoint *c1,
	    const struct checkpoint *c2, uint64_t id)
{
	struct rba_detail d;
	char why[CHECKPOINT_REASON_MAX];
	uint8_t *p = NULL;
	size_t n = 0;
	int err, holds = 0;

	rba_detail_clear(&d);
	if ((err = rba_file_read(file, 1u << 20, &p, &n, &d)) != 0)
		return cli_fail("cannot read proof", file, err, &d);
	rba_detail_clear(&d);
	err = c2 == NULL ? checkpoint_inclusion_check(c1, id, p, n, &holds, why, &d)
			 : checkpoint_consistency_check(c1, c2, p, n, &holds, why, &d);
	free(p);
	if (err != 0)
		return cli_fail("cannot check proof", file, err, &d);
	if (!holds) {
		fprintf(stderr, "rebuild-audit: proof refused '%s': %s\n", file, why);
		return 1;
	}
	if (!ctx->quiet)
		printf("proof '%s' checks against the checkpoint%s\n", file,
		       c2 == NULL ? "" : "s");
	return 0;
}

/* history vkey -p PUB [--origin O] */
static int
log_vkey(struct cli_ctx *ctx, const struct log_args *a)
{
	char def[NOTE_NAME_MAX + 1];
	struct sign_pubkey pub;
	struct note_verifier v;
	struct rba_detail d;
	struct rba_buf b;
	const char *origin = a->origin;
	int err;

	if ((err = log_only(ctx, a, "pO", 0, "history vkey takes no arguments")) != 0)
		return err;
	if (a->pub == NULL)
		return cli_usage(ctx, "history vkey needs the public key: -p PUB");
	rba_detail_clear(&d);
	if ((err = sign_pubkey_load(a->pub, &pub, &d)) != 0)
		return cli_fail("cannot read public key", a->pub, err, &d);
	if (origin == NULL) {
		if ((err = cli_store_open(ctx, 1)) != 0)
			return err;
		checkpoint_origin_default(store_id_hex(ctx->store), def);
		origin = def;
	}
	rba_detail_clear(&d);
	if ((err = note_verifier_make(origin, pub.pk, &v, &d)) != 0)
		return cli_fail("bad origin", origin, err, &d);
	rba_buf_init(&b);
	note_verifier_format(&v, &b);
	if ((err = rba_buf_status(&b)) == 0 && ctx->json) {
		char id[SIGN_KEYID_TEXT_LEN + 1];

		struct rba_buf j;
		struct rba_json_w w;

		sign_keyid_format(pub.keyid, id);
		cli_json_begin(&w, &j);
		rba_json_w_str(&w, "vkey", rba_buf_cstr(&b));
		rba_json_w_str(&w, "origin", origin);
		rba_json_w_str(&w, "key_id", id);
		rba_json_w_close(&w, '}');
		rba_buf_release(&b);
		return cli_json_print(&j);
	} else if (err == 0) {
		printf("%.*s\n", (int)b.len, (const char *)b.p);
	}
	rba_buf_release(&b);
	return err ? cli_fail("cannot print verifier key", a->pub, err, NULL) : 0;
}

/* Writes a checkpoint to a command's -o. */
static int
ck_write(const char *path, int force, const struct rba_buf *b, const char *what)
{
	struct rba_output o = RBA_OUTPUT_INIT;
	int err;

	if ((err = cli_output_open(path, force, stdout, what, path, &o)) != 0)
		return err;
	err = rba_output_write(&o, b->p, b->len);
	return cli_output_finish(&o, err, what, path, NULL);
}

/* history checkpoint -k KEY -o CK [--origin O] [--passphrase-file F] [--force] */
static int
log_checkpoint(struct cli_ctx *ctx, const struct log_args *a)
{
	struct sign_seckey *key = NULL;
	struct note_checkpoint ck;
	struct rba_detail d;
	struct rba_buf b;
	int err;

	if ((err = log_only(ctx, a, "koPf", 0, "history checkpoint takes no arguments")) != 0)
		return err;
	if (a->key == NULL)
		return cli_usage(ctx, "history checkpoint needs the log's key: -k KEY");
	if (a->out == NULL || a->out[0] == 0)
		return cli_usage(ctx, "history checkpoint needs -o CK");
	if (a->origin != NULL && !note_name_valid(a->origin, strlen(a->origin)))
		return cli_usage(ctx, "--origin '%s' is not a key name (non-empty, no "
				 "spaces or '+')", a->origin);
	if ((err = cli_seckey_load(a->key, a->passfile, &key)) != 0)
		return err;
	if ((err = cli_store_open(ctx, 1)) != 0) {
		sign_seckey_free(key);
		return err;
	}
	rba_buf_init(&b);
	rba_detail_clear(&d);
	err = checkpoint_make(ctx->store, key, a->origin, &b, &ck, &d);
	sign_seckey_free(key);
	if (err != 0) {
		rba_buf_release(&b);
		return cli_fail("cannot make checkpoint", ctx->store_path, err, &d);
	}
	err = ck_write(a->out, a->force, &b, "cannot write checkpoint");
	rba_buf_release(&b);
	if (err == 0 && ctx->json && strcmp(a->out, "-") != 0) {
		struct rba_buf j;
		struct rba_json_w w;
		cli_json_begin(&w, &j);
		rba_json_w_str(&w, "checkpoint", a->out);
		rba_json_w_u64(&w, "tree_size", ck.size);
		rba_json_w_str(&w, "origin", ck.origin);
		rba_json_w_close(&w, '}');
		return cli_json_print(&j);
	} else if (err == 0 && !ctx->quiet && strcmp(a->out, "-") != 0) {
		printf("checkpoint: %s, %llu records of %s\n", a->out,
		       (unsigned long long)ck.size, ck.origin);
	}
	return err;
}

/* history cosign CK -k KEY --vkey VKEY --state FILE -o CK2 [--origin O] */
static int
log_cosign(struct cli_ctx *ctx, const struct log_args *a)
{
	struct note_verifier logkey;
	struct checkpoint c;
	struct checkpoint_witness w;
	struct sign_seckey *key = NULL;
	struct sign_pubkey pub;
	struct rba_detail d;
	struct rba_buf b;
	char name[NOTE_NAME_MAX + 1], id[SIGN_KEYID_TEXT_LEN + 1];
	char why[CHECKPOINT_REASON_MAX];
	int err, refused = 0;

	if ((err = log_only(ctx, a, "kvsoOPf", 1, "history cosign needs the checkpoint CK")) != 0)
		return err;
	if (a->key == NULL || a->nvkeys != 1 || a->state == NULL || a->out == NULL)
		return cli_usage(ctx, "history cosign needs the witness's key -k KEY, the "
				 "log's verifier key --vkey VKEY, the witness state "
				 "--state FILE and -o CK2");
	if (a->origin != NULL && !note_name_valid(a->origin, strlen(a->origin)))
		return cli_usage(ctx, "--origin '%s' is not a key name", a->origin);
	if ((err = vkeys_load(a, &logkey)) != 0 || (err = ck_load(a->pos[0], &c)) != 0)
		return err;
	if ((err = cli_seckey_load(a->key, a->passfile, &key)) != 0)
		goto out;
	sign_seckey_pubkey(key, &pub);
	sign_keyid_format(pub.keyid, id);
	if (a->origin != NULL)
		snprintf(name, sizeof(name), "%s", a->origin);
	else
		snprintf(name, sizeof(name), "rebuild-audit.dev/witness/%s", id);
	if ((err = cli_store_open(ctx, 1)) != 0)
		goto out;
	w.name = name;
	w.key = key;
	w.log = &logkey;
	w.state = a->state;
	rba_buf_init(&b);
	rba_detail_clear(&d);
	err = checkpoint_cosign(ctx->store, &c, &w, &b, &refused, why, &d);
	if (err != 0) {
		err = cli_fail("cannot cosign", d.file[0] ? d.file : a->pos[0], err, &d);
	} else if (refused) {
		fprintf(stderr, "rebuild-audit: cosigning refused '%s': %s\n",
			a->pos[0], why);
		err = 1;
	} else {
		err = ck_write(a->out, a->force, &b, "cannot write checkpoint");
	}
	rba_buf_release(&b);
out:
	sign_seckey_free(key);
	checkpoint_release(&c);
	return err;
}

/* history prove N --checkpoint CK [--vkey VKEY]... */
static int
log_prove(struct cli_ctx *ctx, const struct log_args *a)
{
	struct note_verifier v[VKEYS_MAX];
	struct checkpoint c;
	struct checkpoint_inclusion p;
	struct rba_detail d;
	uint64_t id;
	int err;

	if ((err = log_only(ctx, a, "cvx", 1, "history prove needs a record id N")) != 0)
		return err;
	if (cli_parse_u64(a->pos[0], UINT64_MAX, &id) != 0 || id == 0)
		return cli_usage(ctx, "N is a history record id (1, 2, ...), not '%s'",
				 a->pos[0]);
	if (a->checkpoint == NULL)
		return cli_usage(ctx, "history prove needs --checkpoint CK");
	if ((err = vkeys_load(a, v)) != 0 || (err = ck_load(a->checkpoint, &c)) != 0)
		return err;
	if ((err = ck_signed(&c, a->checkpoint, v, a->nvkeys)) != 0)
		goto out;
	if (a->proof != NULL) {
		err = proof_check(ctx, a->proof, &c, NULL, id);
		goto out;
	}
	if ((err = cli_store_open(ctx, 1)) != 0)
		goto out;
	rba_detail_clear(&d);
	err = checkpoint_prove(ctx->store, &c, id, &p, &d);
	if (err != 0) {
		err = cli_fail("cannot prove", a->pos[0], err, &d);
		goto out;
	}
	if (!p.holds) {
		fprintf(stderr, "rebuild-audit: not in the checkpoint's log '%s': %s\n",
			a->checkpoint, p.reason);
		err = 1;
	} else if (ctx->json) {
		struct rba_buf lb, j;
		struct rba_json_w w;
		rba_buf_init(&lb);
		rba_b64_put(&lb, p.leaf, p.leaf_len);
		rba_buf_cstr(&lb);
		if (rba_buf_status(&lb) != 0) {
			err = cli_fail("cannot prove", a->pos[0], RBA_E_NOMEM, NULL);
		} else {
			cli_json_begin(&w, &j);
			rba_json_w_u64(&w, "index", p.index);
			rba_json_w_u64(&w, "tree_size", p.tree_size);
			rba_json_w_str(&w, "leaf", lb.p != NULL ? (const char *)lb.p : "");
			json_proof(&w, p.proof, p.np);
			rba_json_w_close(&w, '}');
			err = cli_json_print(&j);
		}
		rba_buf_release(&lb);
	} else if (!ctx->quiet) {
		printf("record %llu (leaf %llu) is in the tree of %llu records of %s: "
		       "the proof checks against the checkpoint's root\n",
		       (unsigned long long)id, (unsigned long long)p.index,
		       (unsigned long long)p.tree_size, c.ck.origin);
		text_proof(p.proof, p.np);
	}
	checkpoint_inclusion_release(&p);
out:
	checkpoint_release(&c);
	return err;
}

/* history consistency OLD NEW [--vkey VKEY]... */
static int
log_consistency(struct cli_ctx *ctx, const struct log_args *a)
{
	struct note_verifier v[VKEYS_MAX];
	struct checkpoint o, n;
	struct checkpoint_consistency cc;
	struct rba_detail d;
	int err;

	memset(&o, 0, sizeof(o));
	memset(&n, 0, sizeof(n));
	if ((err = log_only(ctx, a, "vx", 2, "history consistency needs OLD and NEW "
			    "checkpoints")) != 0)
		return err;
	if ((err = vkeys_load(a, v)) != 0 || (err = ck_load(a->pos[0], &o)) != 0 ||
	    (err = ck_load(a->pos[1], &n)) != 0)
		goto out;
	if ((err = ck_signed(&o, a->pos[0], v, a->nvkeys)) != 0 ||
	    (err = ck_signed(&n, a->pos[1], v, a->nvkeys)) != 0)
		goto out;
	if (a->proof != NULL) {
		err = proof_check(ctx, a->proof, &o, &n, 0);
		goto out;
	}
	/* Two trees of one size, or a smaller new one, need no store. */
	if (checkpoint_needs_store(&o, &n) && (err = cli_store_open(ctx, 1)) != 0)
		goto out;
	rba_detail_clear(&d);
	err = checkpoint_consistency(ctx->store, &o, &n, &cc, &d);
	if (err != 0) {
		err = cli_fail("cannot prove consistency", a->pos[1], err, &d);
		goto out;
	}
	if (!cc.holds) {
		fprintf(stderr, "rebuild-audit: inconsistent checkpoints '%s': %s\n",
			a->pos[1], cc.reason);
		err = 1;
	} else if (ctx->json) {
		struct rba_buf j;
		struct rba_json_w w;
		cli_json_begin(&w, &j);
		rba_json_w_u64(&w, "old_size", cc.old_size);
		rba_json_w_u64(&w, "new_size", cc.new_size);
		json_proof(&w, cc.proof, cc.np);
		rba_json_w_close(&w, '}');
		err = cli_json_print(&j);
	} else if (!ctx->quiet) {
		printf("consistent: the tree of %llu records is a prefix of the tree "
		       "of %llu records of %s\n", (unsigned long long)cc.old_size,
		       (unsigned long long)cc.new_size, n.ck.origin);
		text_proof(cc.proof, cc.np);
	}
out:
	checkpoint_release(&o);
	checkpoint_release(&n);
	return err;
}

/* history watch OLD [--vkey VKEY]...: quiet while the log extends OLD. */
static int
log_watch(struct cli_ctx *ctx, const struct log_args *a)
{
	struct note_verifier v[VKEYS_MAX];
	struct checkpoint c;
	struct checkpoint_watch w;
	struct rba_detail d;
	char b1[RBA_B64_LEN(RBA_DIGEST_LEN) + 1], b2[sizeof(b1)];
	int err;

	if ((err = log_only(ctx, a, "v", 1, "history watch needs the checkpoint kept")) != 0)
		return err;
	if ((err = vkeys_load(a, v)) != 0 || (err = ck_load(a->pos[0], &c)) != 0)
		return err;
	if ((err = ck_signed(&c, a->pos[0], v, a->nvkeys)) != 0)
		goto out;
	if ((err = cli_store_open(ctx, 1)) != 0)
		goto out;
	rba_detail_clear(&d);
	err = checkpoint_watch(ctx->store, &c, &w, &d);
	if (err != 0) {
		err = cli_fail("cannot watch the log", ctx->store_path, err, &d);
		goto out;
	}
	rba_b64_encode(c.ck.root.b, RBA_DIGEST_LEN, b1);
	if (ctx->json) {
		/* one document either way: a watcher's script reads it */
		struct rba_buf j;
		struct rba_json_w jw;
		cli_json_begin(&jw, &j);
		rba_json_w_bool(&jw, "consistent", w.holds);
		rba_json_w_str(&jw, "checkpoint", a->pos[0]);
		rba_json_w_str(&jw, "origin", c.ck.origin);
		rba_json_w_u64(&jw, "tree_size", c.ck.size);
		rba_json_w_str(&jw, "root", b1);
		rba_json_w_u64(&jw, "history_size", w.size);
		if (!w.holds) {
			if (w.has_root_at) {
				rba_b64_encode(w.root_at.b, RBA_DIGEST_LEN, b2);
				rba_json_w_str(&jw, "root_at_tree_size", b2);
			}
			if (w.bad)
				rba_json_w_u64(&jw, "first_bad_record", w.bad);
			rba_json_w_str(&jw, "finding", w.reason);
		}
		rba_json_w_close(&jw, '}');
		err = cli_json_print(&j) != 0 ? 2 : w.holds ? 0 : 1;
		goto out;
	}
	if (w.holds) {
		if (ctx->verbose)
			printf("the log of %llu records extends checkpoint '%s' (%llu "
			       "records of %s)\n", (unsigned long long)w.size,
			       a->pos[0], (unsigned long long)c.ck.size, c.ck.origin);
		goto out;
	}
	printf("history watch: the store's log is not consistent with the "
	       "checkpoint kept\n");
	printf("store:       %s (id %s)\n", ctx->store_path, store_id_hex(ctx->store));
	printf("checkpoint:  %s: %s, %llu records, root %s\n", a->pos[0],
	       c.ck.origin, (unsigned long long)c.ck.size, b1);
	printf("history:     %llu records\n", (unsigned long long)w.size);
	if (w.has_root_at) {
		rba_b64_encode(w.root_at.b, RBA_DIGEST_LEN, b2);
		printf("log root at %llu records: %s\n", (unsigned long long)c.ck.size, b2);
	}
	if (w.bad)
		printf("first record at fault: %llu\n", (unsigned long long)w.bad);
	printf("finding:     %s\n", w.reason);
	printf("what to do:  keep this store as it is and compare it with a copy "
	       "or backup that extends the checkpoint; the records after it were "
	       "not written on top of what was signed\n");
	err = 1;
out:
	checkpoint_release(&c);
	return err;
}

int
cmd_history_log(struct cli_ctx *ctx, int argc, char **argv)
{
	struct log_args a;
	const char *sub = argv[1];
	int err;

	if ((err = log_parse(ctx, argc, argv, &a)) != 0)
		return err;
	if (strcmp(sub, "vkey") == 0)
		return log_vkey(ctx, &a);
	if (strcmp(sub, "checkpoint") == 0)
		return log_checkpoint(ctx, &a);
	if (strcmp(sub, "cosign") == 0)
		return log_cosign(ctx, &a);
	if (strcmp(sub, "prove") == 0)
		return log_prove(ctx, &a);
	if (strcmp(sub, "consistency") == 0)
		return log_consistency(ctx, &a);
	return log_watch(ctx, &a);
}
