/*
 * tlog.c - RFC 6962 Merkle trees, stored hashes and proofs
 * (common/tlog.h), step for step as golang.org/x/mod/sumdb/tlog/tlog.go
 * computes them: the index lists a proof reads first, then the proof
 * from the hashes read.
 */
#include "common/tlog.h"

#include <assert.h>
#include <string.h>

/* The stored indexes one computation reads, in the order it uses them. */
struct need {
	uint64_t v[TLOG_READ_MAX];
	size_t n;
};

/* The hashes read for a need, consumed from the front. */
struct have {
	const struct rba_digest *h;
	size_t n, at;
};

void
tlog_leaf_hash(const void *rec, size_t n, struct rba_digest *out)
{
	static const uint8_t zero = 0x00;
	struct rba_hasher h;

	rba_hasher_init(&h);
	rba_hasher_update(&h, &zero, 1);
	rba_hasher_update(&h, rec, n);
	rba_hasher_final(&h, out);
}

void
tlog_node_hash(const struct rba_digest *l, const struct rba_digest *r,
	       struct rba_digest *out)
{
	uint8_t buf[1 + 2 * RBA_DIGEST_LEN];

	buf[0] = 0x01;
	memcpy(buf + 1, l->b, RBA_DIGEST_LEN);
	memcpy(buf + 1 + RBA_DIGEST_LEN, r->b, RBA_DIGEST_LEN);
	rba_digest_bytes(buf, sizeof(buf), out);
}

/* k, the largest power of two below n (n >= 2), and its log2 in *l. */
static uint64_t
maxpow2(uint64_t n, int *l)
{
	int lv = 0;

	while (lv < 63 && ((uint64_t)1 << (lv + 1)) < n)
		lv++;
	if (l != NULL)
		*l = lv;
	return (uint64_t)1 << lv;
}

static int
trailing_zeros(uint64_t x)
{
	int n = 0;

	if (x == 0)
		return 64;
	while ((x & 1) == 0) {
		x >>= 1;
		n++;
	}
	return n;
}

uint64_t
tlog_stored_index(int level, uint64_t k)
{
	uint64_t i = 0;

	/* Level L's k'th hash is written right after level L+1's 2k+1'th. */
	for (int l = level; l > 0; l--)
		k = 2 * k + 1;
	/* Level 0's k'th hash is written at k + k/2 + k/4 + ... */
	for (; k > 0; k >>= 1)
		i += k;
	return i + (uint64_t)level;
}

void
tlog_split_index(uint64_t index, int *level, uint64_t *k)
{
	uint64_t n = index / 2, at = tlog_stored_index(0, n);

	assert(at <= index);
	for (;;) {
		/* Record n adds 1 + trailing zeros of n + 1 hashes. */
		uint64_t x = at + 1 + (uint64_t)trailing_zeros(n + 1);
		if (x > index)
			break;
		n++;
		at = x;
	}
	*level = (int)(index - at);
	*k = n >> *level;
}

uint64_t
tlog_stored_count(uint64_t n)
{
	uint64_t count;

	if (n == 0)
		return 0;
	count = tlog_stored_index(0, n - 1) + 1;
	for (uint64_t i = n - 1; i & 1; i >>= 1)
		count++;
	return count;
}

static void
need_add(struct need *nd, uint64_t idx)
{
	assert(nd->n < TLOG_READ_MAX);
	nd->v[nd->n++] = idx;
}

static const struct rba_digest *
have_next(struct have *hv)
{
	assert(hv->at < hv->n);
	return &hv->h[hv->at++];
}

/* The stored indexes of the subtree of records [lo, hi). */
static void
subtree_index(uint64_t lo, uint64_t hi, struct need *nd)
{
	while (lo < hi) {
		int level;
		uint64_t k = maxpow2(hi - lo + 1, &level);
		assert((lo & (k - 1)) == 0);
		need_add(nd, tlog_stored_index(level, lo >> level));
		lo += k;
	}
}

/* The hash of the subtree [lo, hi) from the hashes subtree_index named. */
static void
subtree_hash(uint64_t lo, uint64_t hi, struct have *hv, struct rba_digest *out)
{
	const struct rba_digest *parts[64];
	size_t n = 0;

	while (lo < hi) {
		uint64_t k = maxpow2(hi - lo + 1, NULL);
		assert(n < 64);
		parts[n++] = have_next(hv);
		lo += k;
	}
	assert(n > 0);
	*out = *parts[n - 1];
	for (size_t i = n - 1; i-- > 0;)
		tlog_node_hash(parts[i], out, out);
}

static int
read_need(const struct need *nd, tlog_reader r, void *ctx,
	  struct rba_digest *hashes, struct rba_detail *d)
{
	if (nd->n == 0)
		return 0;
	return r(ctx, nd->v, nd->n, hashes, d);
}

int
tlog_stored_hashes(uint64_t n, const struct rba_digest *leaf, tlog_reader r,
		   void *ctx, struct rba_digest out[64], size_t *nout,
		   struct rba_detail *d)
{
	struct need nd;
	struct rba_digest old[64];
	int m = trailing_zeros(n + 1), err;

	/* Each trailing one bit of n completes a subtree and takes the hash
	 * of the one beside it, read in increasing index order. */
	nd.n = (size_t)m;
	for (int i = 0; i < m; i++)
		nd.v[m - 1 - i] = tlog_stored_index(i, (n >> i) - 1);
	if ((err = read_need(&nd, r, ctx, old, d)) != 0)
		return err;
	out[0] = *leaf;
	for (int i = 0; i < m; i++)
		tlog_node_hash(&old[m - 1 - i], &out[i], &out[i + 1]);
	*nout = (size_t)m + 1;
	return 0;
}

int
tlog_tree_hash(uint64_t n, tlog_reader r, void *ctx, struct rba_digest *out,
	       struct rba_detail *d)
{
	struct need nd = { .n = 0 };
	struct rba_digest hashes[TLOG_READ_MAX];
	struct have hv;
	int err;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	subtree_index(0, n, &nd);
	if ((err = read_need(&nd, r, ctx, hashes, d)) != 0)
		return err;
	hv.h = hashes;
	hv.n = nd.n;
	hv.at = 0;
	subtree_hash(0, n, &hv, out);
	assert(hv.at == hv.n);
	return 0;
}

/* ---- inclusion proofs ------------------------------------------------ */

static void
leaf_proof_index(uint64_t lo, uint64_t hi, uint64_t n, struct need *nd)
{
	uint64_t k;

	assert(lo <= n && n < hi);
	if (lo + 1 == hi)
		return;
	k = maxpow2(hi - lo, NULL);
	if (n < lo + k) {
		leaf_proof_index(lo, lo + k, n, nd);
		subtree_index(lo + k, hi, nd);
	} else {
		subtree_index(lo, lo + k, nd);
		leaf_proof_index(lo + k, hi, n, nd);
	}
}

/* Appends the proof of leaf n in [lo, hi) to p (deepest first). */
static void
leaf_proof(uint64_t lo, uint64_t hi, uint64_t n, struct have *hv,
	   struct rba_digest *p, size_t *np)
{
	struct rba_digest th;
	uint64_t k;

	if (lo + 1 == hi)
		return; /* the verifier knows the leaf */
	k = maxpow2(hi - lo, NULL);
	if (n < lo + k) {
		leaf_proof(lo, lo + k, n, hv, p, np);
		subtree_hash(lo + k, hi, hv, &th);
	} else {
		subtree_hash(lo, lo + k, hv, &th);
		leaf_proof(lo + k, hi, n, hv, p, np);
	}
	assert(*np < TLOG_PROOF_MAX);
	p[(*np)++] = th;
}

int
tlog_prove_record(uint64_t t, uint64_t n, tlog_reader r, void *ctx,
		  struct rba_digest proof[TLOG_PROOF_MAX], size_t *np,
		  struct rba_detail *d)
{
	struct need nd = { .n = 0 };
	struct rba_digest hashes[TLOG_READ_MAX];
	struct have hv;
	int err;

	*np = 0;
	if (n >= t)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"record %llu is not in a tree of %llu records",
				(unsigned long long)n + 1, (unsigned long long)t);
	leaf_proof_index(0, t, n, &nd);
	if ((err = read_need(&nd, r, ctx, hashes, d)) != 0)
		return err;
	hv.h = hashes;
	hv.n = nd.n;
	hv.at = 0;
	leaf_proof(0, t, n, &hv, proof, np);
	assert(hv.at == hv.n);
	return 0;
}

/*
 * Runs proof p[0..np) of leaf n in [lo, hi): the root it implies, into
 * out.  0, or -1 when the proof has too many or too few hashes.
 */
static int
run_record_proof(const struct rba_digest *p, size_t np, uint64_t lo,
		 uint64_t hi, uint64_t n, const struct rba_digest *leaf,
		 struct rba_digest *out)
{
	struct rba_digest th;
	uint64_t k;

	if (lo + 1 == hi) {
		if (np != 0)
			return -1;
		*out = *leaf;
		return 0;
	}
	if (np == 0)
		return -1;
	k = maxpow2(hi - lo, NULL);
	if (n < lo + k) {
		if (run_record_proof(p, np - 1, lo, lo + k, n, leaf, &th) != 0)
			return -1;
		tlog_node_hash(&th, &p[np - 1], out);
	} else {
		if (run_record_proof(p, np - 1, lo + k, hi, n, leaf, &th) != 0)
			return -1;
		tlog_node_hash(&p[np - 1], &th, out);
	}
	return 0;
}

int
tlog_check_record(const struct rba_digest *p, size_t np, uint64_t t,
		  const struct rba_digest *th, uint64_t n,
		  const struct rba_digest *h)
{
	struct rba_digest got;

	if (n >= t)
		return RBA_E_RANGE;
	if (np > TLOG_PROOF_MAX || run_record_proof(p, np, 0, t, n, h, &got) != 0)
		return RBA_E_BADSIG;
	return rba_digest_equal(&got, th) ? 0 : RBA_E_BADSIG;
}

/* ---- consistency proofs ---------------------------------------------- */

static void
tree_proof_index(uint64_t lo, uint64_t hi, uint64_t n, struct need *nd)
{
	uint64_t k;

	assert(lo < n && n <= hi);
	if (n == hi) {
		if (lo != 0)
			subtree_index(lo, hi, nd);
		return;
	}
	k = maxpow2(hi - lo, NULL);
	if (n <= lo + k) {
		tree_proof_index(lo, lo + k, n, nd);
		subtree_index(lo + k, hi, nd);
	} else {
		subtree_index(lo, lo + k, nd);
		tree_proof_index(lo + k, hi, n, nd);
	}
}

static void
tree_proof(uint64_t lo, uint64_t hi, uint64_t n, struct have *hv,
	   struct rba_digest *p, size_t *np)
{
	struct rba_digest th;
	uint64_t k;

	if (n == hi) {
		if (lo == 0)
			return; /* the verifier knows the old tree */
		subtree_hash(lo, hi, hv, &th);
		assert(*np < TLOG_PROOF_MAX);
		p[(*np)++] = th;
		return;
	}
	k = maxpow2(hi - lo, NULL);
	if (n <= lo + k) {
		tree_proof(lo, lo + k, n, hv, p, np);
		subtree_hash(lo + k, hi, hv, &th);
	} else {
		subtree_hash(lo, lo + k, hv, &th);
		tree_proof(lo + k, hi, n, hv, p, np);
	}
	assert(*np < TLOG_PROOF_MAX);
	p[(*np)++] = th;
}

int
tlog_prove_tree(uint64_t t, uint64_t n, tlog_reader r, void *ctx,
		struct rba_digest proof[TLOG_PROOF_MAX], size_t *np,
		struct rba_detail *d)
{
	struct need nd = { .n = 0 };
	struct rba_digest hashes[TLOG_READ_MAX];
	struct have hv;
	int err;

	*np = 0;
	if (n < 1 || n > t)
		return rba_fail(d, RBA_E_RANGE, NULL, 0, 0,
				"no consistency proof from %llu to %llu records",
				(unsigned long long)n, (unsigned long long)t);
	tree_proof_index(0, t, n, &nd);
	if ((err = read_need(&nd, r, ctx, hashes, d)) != 0)
		return err;
	hv.h = hashes;
	hv.n = nd.n;
	hv.at = 0;
	tree_proof(0, t, n, &hv, proof, np);
	assert(hv.at == hv.n);
	return 0;
}

/* Runs p[0..np) for [lo, hi): the old and new subtree hashes it implies. */
static int
run_tree_proof(const struct rba_digest *p, size_t np, uint64_t lo,
	       uint64_t hi, uint64_t n, const struct rba_digest *old,
	       struct rba_digest *oh, struct rba_digest *th)
{
	struct rba_digest o, t;
	uint64_t k;

	if (n == hi) {
		if (lo == 0) {
			if (np != 0)
				return -1;
			*oh = *old;
			*th = *old;
			return 0;
		}
		if (np != 1)
			return -1;
		*oh = p[0];
		*th = p[0];
		return 0;
	}
	if (np == 0)
		return -1;
	k = maxpow2(hi - lo, NULL);
	if (n <= lo + k) {
		if (run_tree_proof(p, np - 1, lo, lo + k, n, old, &o, &t) != 0)
			return -1;
		*oh = o;
		tlog_node_hash(&t, &p[np - 1], th);
	} else {
		if (run_tree_proof(p, np - 1, lo + k, hi, n, old, &o, &t) != 0)
			return -1;
		tlog_node_hash(&p[np - 1], &o, oh);
		tlog_node_hash(&p[np - 1], &t, th);
	}
	return 0;
}

int
tlog_check_tree(const struct rba_digest *p, size_t np, uint64_t t,
		const struct rba_digest *th, uint64_t n,
		const struct rba_digest *h)
{
	struct rba_digest oh, nh;

	if (n < 1 || n > t)
		return RBA_E_RANGE;
	if (np > TLOG_PROOF_MAX || run_tree_proof(p, np, 0, t, n, h, &oh, &nh) != 0)
		return RBA_E_BADSIG;
	return rba_digest_equal(&nh, th) && rba_digest_equal(&oh, h) ? 0
								    : RBA_E_BADSIG;
}
