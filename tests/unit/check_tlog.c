/*
 * check_tlog.c - the transparency log: RFC 6962 arithmetic against a
 * plain recursive tree and known roots (common/tlog.h), base64, signed
 * notes, verifier keys and checkpoints (common/note.h), and the store's
 * log (store.h, "the log"): kept on append, caught up from the history
 * of a store made before it, and checked against its records.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/buf.h"
#include "common/note.h"
#include "common/sign.h"
#include "common/tlog.h"
#include "store/store.h"
#include "store/store_debug.h"
#include "tests/unit/scratch.h"
#include "tests/unit/suites.h"

#define MAXN 70

/* The records of the tests: record i is "record <i>" (i 0-based). */
static size_t
rec_of(uint64_t i, char *buf)
{
	return (size_t)sprintf(buf, "{\"record\": %llu}", (unsigned long long)i);
}

/* RFC 6962's MTH, straight from its definition. */
static void
mth(const struct rba_digest *leaves, uint64_t lo, uint64_t hi,
    struct rba_digest *out)
{
	uint64_t k = 1;
	struct rba_digest l, r;

	if (hi - lo == 1) {
		*out = leaves[lo];
		return;
	}
	while (k * 2 < hi - lo)
		k *= 2;
	mth(leaves, lo, lo + k, &l);
	mth(leaves, lo + k, hi, &r);
	tlog_node_hash(&l, &r, out);
}

/* Stored hashes in memory. */
struct mem {
	struct rba_digest h[4 * MAXN];
	uint64_t n;
	int reads;
};

static int
mem_read(void *ctx, const uint64_t *idx, size_t n, struct rba_digest *out,
	 struct rba_detail *d)
{
	struct mem *m = ctx;

	(void)d;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_lt(idx[i], m->n);
		if (i > 0)
			ck_assert_uint_gt(idx[i], idx[i - 1]);
		out[i] = m->h[idx[i]];
		m->reads++;
	}
	return 0;
}

static void
mem_build(struct mem *m, struct rba_digest *leaves, uint64_t n)
{
	char buf[64];

	memset(m, 0, sizeof(*m));
	for (uint64_t i = 0; i < n; i++) {
		struct rba_digest hs[64];
		size_t nh;
		tlog_leaf_hash(buf, rec_of(i, buf), &leaves[i]);
		ck_assert_int_eq(tlog_stored_index(0, i), m->n);
		ck_assert_int_eq(tlog_stored_hashes(i, &leaves[i], mem_read, m, hs,
						    &nh, NULL), 0);
		memcpy(&m->h[m->n], hs, nh * sizeof(*hs));
		m->n += nh;
		ck_assert_int_eq(tlog_stored_count(i + 1), m->n);
	}
}

static void
hex_is(const struct rba_digest *h, const char *want)
{
	char t[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(h, t);
	ck_assert_str_eq(t + 7, want);
}

/* The RFC 6962 test leaves and the roots of their first 1 and 8 (the
 * vectors of the Certificate Transparency reference tests). */
START_TEST(test_known_roots)
{
	static const char *const leaves[8] = {
		"", "\x00", "\x10", "\x20\x21", "\x30\x31", "\x40\x41\x42\x43",
		"\x50\x51\x52\x53\x54\x55\x56\x57",
		"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f",
	};
	static const size_t lens[8] = { 0, 1, 1, 2, 2, 4, 8, 16 };
	struct rba_digest h[8], root;

	for (int i = 0; i < 8; i++)
		tlog_leaf_hash(leaves[i], lens[i], &h[i]);
	hex_is(&h[0], "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
	mth(h, 0, 8, &root);
	hex_is(&root, "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328");
	mth(h, 0, 2, &root);
	hex_is(&root, "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125");
}
END_TEST

START_TEST(test_index_split)
{
	for (uint64_t idx = 0; idx < 10000; idx++) {
		int level;
		uint64_t k;
		tlog_split_index(idx, &level, &k);
		ck_assert_uint_eq(tlog_stored_index(level, k), idx);
	}
	ck_assert_uint_eq(tlog_stored_count(0), 0);
	ck_assert_uint_eq(tlog_stored_count(1), 1);
	ck_assert_uint_eq(tlog_stored_count(2), 3);
	ck_assert_uint_eq(tlog_stored_count(4), 7);
}
END_TEST

/* Every size 1..70: the root is the plain tree's, every inclusion and
 * consistency proof checks, and none checks once a hash or a size is
 * off. */
START_TEST(test_proofs_every_size)
{
	static struct mem m;
	static struct rba_digest leaves[MAXN];
	struct rba_digest roots[MAXN + 1], p[TLOG_PROOF_MAX], bad;
	size_t np;

	mem_build(&m, leaves, MAXN);
	for (uint64_t t = 1; t <= MAXN; t++) {
		mth(leaves, 0, t, &roots[t]);
		ck_assert_int_eq(tlog_tree_hash(t, mem_read, &m, &bad, NULL), 0);
		ck_assert(rba_digest_equal(&bad, &roots[t]));
	}
	for (uint64_t t = 1; t <= MAXN; t++) {
		for (uint64_t n = 0; n < t; n++) {
			ck_assert_int_eq(tlog_prove_record(t, n, mem_read, &m, p, &np, NULL), 0);
			ck_assert_int_eq(tlog_check_record(p, np, t, &roots[t], n, &leaves[n]), 0);
			ck_assert_int_eq(tlog_check_record(p, np, t, &roots[t], n,
							   &leaves[(n + 1) % t]),
					 t == 1 ? 0 : RBA_E_BADSIG);
			if (np > 0) {
				bad = p[0];
				p[0].b[5] ^= 1;
				ck_assert_int_eq(tlog_check_record(p, np, t, &roots[t], n, &leaves[n]),
						 RBA_E_BADSIG);
				p[0] = bad;
				ck_assert_int_eq(tlog_check_record(p, np - 1, t, &roots[t], n,
								   &leaves[n]), RBA_E_BADSIG);
			}
		}
		ck_assert_int_eq(tlog_prove_record(t, t, mem_read, &m, p, &np, NULL),
				 RBA_E_RANGE);
		for (uint64_t n = 1; n <= t; n++) {
			ck_assert_int_eq(tlog_prove_tree(t, n, mem_read, &m, p, &np, NULL), 0);
			ck_assert_int_eq(tlog_check_tree(p, np, t, &roots[t], n, &roots[n]), 0);
			if (n < t) {
				ck_assert_int_eq(tlog_check_tree(p, np, t, &roots[t], n,
								 &roots[n + 1]), RBA_E_BADSIG);
				bad = roots[n];
				bad.b[0] ^= 0x80;
				ck_assert_int_eq(tlog_check_tree(p, np, t, &roots[t], n, &bad),
						 RBA_E_BADSIG);
			}
		}
	}
}
END_TEST

START_TEST(test_b64)
{
	uint8_t out[16];
	size_t n;
	char text[32];

	rba_b64_encode("abcd", 4, text);
	ck_assert_str_eq(text, "YWJjZA==");
	ck_assert_int_eq(rba_b64_decode("YWJjZA==", 8, out, sizeof(out), &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert(memcmp(out, "abcd", 4) == 0);
	/* not canonical: the bits after the last byte */
	ck_assert_int_eq(rba_b64_decode("YWJjZB==", 8, out, sizeof(out), &n), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_b64_decode("YWJjZA=", 7, out, sizeof(out), &n), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_b64_decode("YW=jZA==", 8, out, sizeof(out), &n), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_b64_decode("YWJjZA==", 8, out, 3, &n), RBA_E_SYNTAX);
	ck_assert_int_eq(rba_b64_decode("", 0, out, sizeof(out), &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* Go's note package's example: the vkey of PeterNeumann and the note
 * it signed verify here. */
START_TEST(test_go_example_note)
{
	static const char vkey[] =
		"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
	static const char msg[] =
		"If you think cryptography is the answer to your problem,\n"
		"then you don't know what your problem is.\n"
		"\n"
		"\xe2\x80\x94 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
	struct note_verifier v;
	struct note n;
	struct rba_detail d;
	char *copy;

	ck_assert_msg(note_verifier_parse(vkey, strlen(vkey), &v, &d) == 0, "%s", d.reason);
	ck_assert_str_eq(v.name, "PeterNeumann");
	ck_assert_uint_eq(v.hash, 0xc74f20a3u);
	ck_assert_msg(note_open(msg, strlen(msg), &n, &d) == 0, "%s", d.reason);
	ck_assert_uint_eq(n.nsigs, 1);
	ck_assert_int_eq(note_verify(&n, &v), 0);
	/* one byte of the text changed */
	copy = strdup(msg);
	copy[3] = 'Y';
	ck_assert_int_eq(note_open(copy, strlen(copy), &n, &d), 0);
	ck_assert_int_eq(note_verify(&n, &v), RBA_E_BADSIG);
	free(copy);
	/* the hash of another name */
	{
		static const char other[] =
			"PeterNeumanm+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
		ck_assert_int_eq(note_verifier_parse(other, strlen(other), &v, &d),
				 RBA_E_SCHEMA);
	}
}
END_TEST

START_TEST(test_note_sign_checkpoint)
{
	struct sign_seckey *k, *k2;
	struct sign_pubkey pub, pub2;
	struct note_verifier v, v2;
	struct note n, n2;
	struct note_checkpoint ck;
	struct rba_digest root;
	struct rba_buf text, signed1, signed2;
	struct rba_detail d;

	ck_assert_int_eq(sign_seckey_generate(&k), 0);
	ck_assert_int_eq(sign_seckey_generate(&k2), 0);
	sign_seckey_pubkey(k, &pub);
	sign_seckey_pubkey(k2, &pub2);
	memset(root.b, 0xab, sizeof(root.b));
	rba_buf_init(&text);
	rba_buf_init(&signed1);
	rba_buf_init(&signed2);
	note_checkpoint_format("example.com/log", 42, &root, &text);
	ck_assert_int_eq(note_sign((const char *)text.p, text.len, NULL, "example.com/log", k,
				   &signed1, &d), 0);
	ck_assert_int_eq(note_open(signed1.p, signed1.len, &n, &d), 0);
	ck_assert_int_eq(note_checkpoint_parse(n.text, n.text_len, &ck, &d), 0);
	ck_assert_str_eq(ck.origin, "example.com/log");
	ck_assert_uint_eq(ck.size, 42);
	ck_assert(rba_digest_equal(&ck.root, &root));
	ck_assert_int_eq(note_verifier_make("example.com/log", pub.pk, &v, &d), 0);
	ck_assert_int_eq(note_verifier_make("witness", pub2.pk, &v2, &d), 0);
	ck_assert_int_eq(note_verify(&n, &v), 0);
	ck_assert_int_eq(note_verify(&n, &v2), RBA_E_NOTFOUND);
	/* a cosignature keeps the log's line first */
	ck_assert_int_eq(note_sign(n.text, n.text_len, &n, "witness", k2, &signed2, &d), 0);
	ck_assert_int_eq(note_open(signed2.p, signed2.len, &n2, &d), 0);
	ck_assert_uint_eq(n2.nsigs, 2);
	ck_assert_int_eq(note_verify(&n2, &v), 0);
	ck_assert_int_eq(note_verify(&n2, &v2), 0);
	ck_assert(memcmp(n2.sigs[0].line, n.sigs[0].line, n.sigs[0].line_len) == 0);
	/* verifier key text round trip */
	{
		struct rba_buf vb;
		struct note_verifier back;
		rba_buf_init(&vb);
		note_verifier_format(&v, &vb);
		ck_assert_int_eq(note_verifier_parse((const char *)vb.p, vb.len, &back, &d), 0);
		ck_assert_str_eq(back.name, v.name);
		ck_assert_uint_eq(back.hash, v.hash);
		rba_buf_release(&vb);
	}
	/* malformed checkpoints */
	ck_assert_int_eq(note_checkpoint_parse("o\n042\nAA==\n", 11, &ck, &d), RBA_E_SYNTAX);
	ck_assert_uint_eq(d.line, 2);
	ck_assert_int_eq(note_checkpoint_parse("o\n1\nAA==\n", 9, &ck, &d), RBA_E_SYNTAX);
	ck_assert_uint_eq(d.line, 3);
	ck_assert_int_eq(note_checkpoint_parse("o p\n1\nAA==\n", 11, &ck, &d), RBA_E_SYNTAX);
	ck_assert_uint_eq(d.line, 1);
	/* malformed notes */
	ck_assert_int_eq(note_open("a\nb\n", 4, &n, &d), RBA_E_SYNTAX);
	ck_assert_int_eq(note_open("a\n\n- x AAAAAAAA\n", 17, &n, &d), RBA_E_SYNTAX);
	ck_assert_int_eq(note_open("a\r\n\n", 4, &n, &d), RBA_E_SYNTAX);
	rba_buf_release(&text);
	rba_buf_release(&signed1);
	rba_buf_release(&signed2);
	sign_seckey_free(k);
	sign_seckey_free(k2);
}
END_TEST

/* ---- the store's log --------------------------------------------------- */

static void
setup(void)
{
	scratch_make("tlog");
	ck_assert_int_eq(rba_crypto_init(), 0);
}

static void
teardown(void)
{
	scratch_remove();
}

static struct store *
store_new(void)
{
	struct store *s = NULL;
	struct rba_detail d;

	ck_assert_msg(store_init(scratch_store, &d) == 0, "%s", d.reason);
	ck_assert_msg(store_open(scratch_store, 0, &s, &d) == 0, "%s", d.reason);
	return s;
}

static void
append_n(struct store *s, uint64_t from, uint64_t to)
{
	struct store_txn *t;
	struct rba_detail d;
	char buf[64];

	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	for (uint64_t i = from; i < to; i++)
		ck_assert_msg(store_history_append(t, "v", (int64_t)i, buf, rec_of(i, buf),
						   NULL, NULL, &d) == 0, "%s", d.reason);
	ck_assert_msg(store_txn_commit(t, &d) == 0, "%s", d.reason);
}

/* The store's roots and proofs are the plain tree's, kept or computed. */
static void
store_agrees(struct store *s, uint64_t size, uint64_t kept)
{
	static struct rba_digest leaves[MAXN];
	struct rba_digest root, want, p[TLOG_PROOF_MAX], wr;
	struct store_tlog *tl;
	struct store_txn *t;
	struct rba_detail d;
	char buf[64];
	size_t np;

	for (uint64_t i = 0; i < size; i++)
		tlog_leaf_hash(buf, rec_of(i, buf), &leaves[i]);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_msg(store_tlog_open(t, &tl, &d) == 0, "%s", d.reason);
	ck_assert_uint_eq(store_tlog_size(tl), size);
	ck_assert_uint_eq(store_tlog_kept(tl), kept);
	for (uint64_t n = 1; n <= size; n++) {
		ck_assert_int_eq(store_tlog_root(tl, n, &root, &d), 0);
		mth(leaves, 0, n, &want);
		ck_assert(rba_digest_equal(&root, &want));
	}
	mth(leaves, 0, size, &wr);
	for (uint64_t id = 1; id <= size; id++) {
		ck_assert_msg(store_tlog_prove_record(tl, size, id, p, &np, &d) == 0, "%s", d.reason);
		ck_assert_int_eq(tlog_check_record(p, np, size, &wr, id - 1, &leaves[id - 1]), 0);
		ck_assert_int_eq(store_tlog_prove_tree(tl, size, id, p, &np, &d), 0);
		mth(leaves, 0, id, &want);
		ck_assert_int_eq(tlog_check_tree(p, np, size, &wr, id, &want), 0);
	}
	store_tlog_close(tl);
	ck_assert_msg(store_tlog_verify(t, NULL, &d) == 0, "%s", d.reason);
	store_txn_abort(t);
}

/* Counts the findings about the log (the records name no stored
 * version: not what these tests are about). */
static int
tlog_finding(void *ctx, const struct store_finding *f)
{
	if (strcmp(f->db, "tlog") == 0)
		++*(uint64_t *)ctx;
	return 0;
}

static uint64_t
check_findings(struct store *s, struct store_check_stats *st)
{
	struct store_check_hooks h = { NULL, tlog_finding, NULL };
	struct store_txn *t;
	struct rba_detail d;
	uint64_t n = 0;

	h.ctx = &n;
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(store_check(t, &h, st, &d), 0);
	store_txn_abort(t);
	return n;
}

START_TEST(test_store_log_kept)
{
	struct store *s = store_new();
	struct store_check_stats st;

	append_n(s, 0, 1);
	store_agrees(s, 1, 1);
	append_n(s, 1, 37);
	append_n(s, 37, MAXN);
	store_agrees(s, MAXN, MAXN);
	ck_assert_uint_eq(check_findings(s, &st), 0);
	ck_assert_uint_eq(st.tlog_kept, MAXN);
	ck_assert_uint_eq(st.tlog_hashes, tlog_stored_count(MAXN));
	store_close(s);
}
END_TEST

/* A store made before the log: views compute it, the next append keeps
 * it whole, and the store stays clean throughout. */
START_TEST(test_store_log_catch_up)
{
	struct store *s = store_new();
	struct store_check_stats st;
	struct store_txn *t;
	struct rba_detail d;

	append_n(s, 0, 30);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_int_eq(store_debug_tlog_drop(t, &d), 0);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	store_close(s);
	ck_assert_int_eq(store_open(scratch_store, 1, &s, &d), 0);
	store_agrees(s, 30, 0);
	ck_assert_uint_eq(check_findings(s, &st), 0);
	ck_assert_uint_eq(st.tlog_kept, 0);
	store_close(s);
	ck_assert_int_eq(store_open(scratch_store, 0, &s, &d), 0);
	append_n(s, 30, 31);
	store_agrees(s, 31, 31);
	ck_assert_uint_eq(check_findings(s, &st), 0);
	ck_assert_uint_eq(st.tlog_kept, 31);
	store_close(s);
}
END_TEST

/* A record rewritten in place (chain and head recomputed as a forger
 * would) is found by the log's check, and its proof is refused. */
START_TEST(test_store_log_rewrite)
{
	struct store *s = store_new();
	struct store_check_stats st;
	struct store_txn *t;
	struct store_tlog *tl;
	struct rba_digest p[TLOG_PROOF_MAX];
	struct rba_detail d;
	uint8_t key[8], *val;
	size_t vlen, np;
	uint64_t bad;

	append_n(s, 0, 10);
	/* the record's text is the last bytes of its value: change one */
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	store_debug_history_key(10, key);
	ck_assert_int_eq(store_debug_get_raw(t, "history", key, 8, &val, &vlen, &d), 0);
	val[vlen - 2] ^= 1;
	{
		/* the forger also fixes the chain digest (and the head) */
		struct rba_digest prev, dg;
		uint8_t head[2 + 8 + 32];
		int64_t time;
		memcpy(prev.b, val + 10, 32);
		time = (int64_t)((uint64_t)val[2] | (uint64_t)val[3] << 8);
		store_history_digest(&prev, 10, time, "v", 1, val + 83, vlen - 83, &dg);
		memcpy(val + 42, dg.b, 32);
		head[0] = 0x04;
		head[1] = 0x01;
		for (int i = 0; i < 8; i++)
			head[2 + i] = (uint8_t)((uint64_t)10 >> (8 * i));
		memcpy(head + 10, dg.b, 32);
		ck_assert_int_eq(store_debug_put_raw(t, "meta", "history_head", 12, head,
						     sizeof(head), &d), 0);
	}
	ck_assert_int_eq(store_debug_put_raw(t, "history", key, 8, val, vlen, &d), 0);
	free(val);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(store_history_verify(t, NULL, NULL, &d), 0);
	ck_assert_int_eq(store_tlog_verify(t, &bad, &d), RBA_E_TAMPERED);
	ck_assert_uint_eq(bad, 10);
	ck_assert_int_eq(store_tlog_open(t, &tl, &d), 0);
	ck_assert_int_eq(store_tlog_prove_record(tl, 10, 10, p, &np, &d), RBA_E_TAMPERED);
	ck_assert_int_eq(store_tlog_prove_record(tl, 10, 9, p, &np, &d), 0);
	store_tlog_close(tl);
	store_txn_abort(t);
	ck_assert_uint_eq(check_findings(s, &st), 1);
	store_close(s);
}
END_TEST

/* The history cut short under the log (the last record deleted, the head
 * put back): the view refuses and so does the next append. */
START_TEST(test_store_log_truncated)
{
	struct store *s = store_new();
	struct store_check_stats st;
	struct store_txn *t;
	struct store_tlog *tl;
	struct rba_detail d;
	uint8_t key[8], *val, head[2 + 8 + 32];

	size_t vlen;

	append_n(s, 0, 5);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	store_debug_history_key(4, key);
	ck_assert_int_eq(store_debug_get_raw(t, "history", key, 8, &val, &vlen, &d), 0);
	head[0] = 0x04;
	head[1] = 0x01;
	memset(head + 2, 0, 8);
	head[2] = 4;
	memcpy(head + 10, val + 42, 32);
	free(val);
	ck_assert_int_eq(store_debug_put_raw(t, "meta", "history_head", 12, head,
					     sizeof(head), &d), 0);
	store_debug_history_key(5, key);
	ck_assert_int_eq(store_debug_del_raw(t, "history", key, 8, &d), 0);
	ck_assert_int_eq(store_txn_commit(t, &d), 0);
	ck_assert_int_eq(store_txn_begin(s, 0, 0, &t, &d), 0);
	ck_assert_int_eq(store_history_verify(t, NULL, NULL, &d), 0);
	ck_assert_int_eq(store_tlog_open(t, &tl, &d), RBA_E_TAMPERED);
	ck_assert_ptr_null(tl);
	store_txn_abort(t);
	ck_assert_uint_ge(check_findings(s, &st), 1);
	ck_assert_int_eq(store_txn_begin(s, 1, 0, &t, &d), 0);
	ck_assert_int_eq(store_history_append(t, "v", 1, "{}", 2, NULL, NULL, &d),
			 RBA_E_TAMPERED);
	store_txn_abort(t);
	store_close(s);
}
END_TEST

Suite *
suite_tlog(void)
{
	Suite *s = suite_create("tlog");
	TCase *c = tcase_create("arithmetic");
	TCase *st = tcase_create("store");

	tcase_add_test(c, test_known_roots);
	tcase_add_test(c, test_index_split);
	tcase_add_test(c, test_proofs_every_size);
	tcase_add_test(c, test_b64);
	tcase_add_test(c, test_go_example_note);
	tcase_add_test(c, test_note_sign_checkpoint);
	suite_add_tcase(s, c);
	tcase_add_checked_fixture(st, setup, teardown);
	tcase_add_test(st, test_store_log_kept);
	tcase_add_test(st, test_store_log_catch_up);
	tcase_add_test(st, test_store_log_rewrite);
	tcase_add_test(st, test_store_log_truncated);
	suite_add_tcase(s, st);
	return s;
}
