/*
 * audit_pass.h - the pass over a version's sample that audit_version
 * makes (step 6 of audit.h): every chunk read and verified, decoded,
 * scored with the rebuilt model, its decisions compared with the stored
 * ones, the counts merged in stored order whatever the thread count.
 * Not a public header: audit.c's, apart from struct audit_flip, which
 * audit.h takes from here.
 */
#ifndef RBA_AUDIT_PASS_H
#define RBA_AUDIT_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "sample/sample.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "model/artifact.h"
#include "store/store.h"

#define AUDIT_WEAK_MARGINS 10 /* the weak-evidence band, in margins */

/* A flipped case: its stored and rebuilt score and decision. */
struct audit_flip {
	char *id;
	double stored_score, rebuilt_score; /* the score, or the top class's */
	char *stored_decision, *rebuilt_decision;
	double margin;	       /* stored score to the nearest band edge */
	double rebuilt_margin; /* rebuilt score to the nearest band edge */
	double edge;	       /* that edge (NaN for argmax) */
};

/* Frees f's strings (not f). */
void audit_flip_release(struct audit_flip *f);

/* What the comparison of some chunks found. */
struct audit_tally {
	uint64_t cases, flips, near, weak, disagree;
	double max_delta;
	char max_case[STORE_CASE_ID_MAX + 1];
	int has_max;
	/* Cases whose stored score is not the rebuilt model's at its own
	 * precision: float32(stored) and the rebuilt float32 score differ
	 * by more than the sample's declared logging precision (0 when
	 * none is declared: bit for bit).  off_case is the first of them
	 * in stored order. */
	uint64_t off;
	char off_case[STORE_CASE_ID_MAX + 1];
	size_t nlisted, cap;
	struct audit_flip *listed;
	/* A case the rebuilt model could not take: scoring stops there. */
	int bad;
	char bad_reason[384];
	double busy; /* seconds spent decoding, scoring and comparing */
};

/* Frees the listed flips and zeroes t. */
void audit_tally_release(struct audit_tally *t);

/* The fixed facts every worker compares against. */
struct audit_cmp {
	const struct policy *pol;
	const struct sample_layout *l;
	const struct artifact *model; /* the rebuilt one */
	uint32_t C;		      /* rebuilt classes */
	uint32_t rpos;		      /* rebuilt positive class */
	size_t nnames;
	const char **names; /* decisions the rebuilt model can reach */
	int *band_name;	    /* band -> names index */
	size_t max_listed;
};

/*
 * Reads version's sample in txn chunk by chunk (store_sample_stream:
 * the content hashed once, as a whole, and each chunk checked against
 * its own digest only when that or the scoring fails; nothing here
 * returns 0 unless every byte scored was the stored one), scores every case
 * with k->model and compares it with its stored score and decision
 * under k->pol, on nthreads scoring threads (0 or 1: this thread; more:
 * this thread reads and queues the chunks while nthreads - 1 workers
 * decode, score and compare them, and scores one itself when they are
 * all busy).  The case index is walked beside, on a thread of its own
 * over a second read of txn's snapshot (store_txn_begin_same; after the
 * pass when there is none).  k and the layout it points to are
 * borrowed for the call.  on_progress (may
 * be NULL) gets the cases done so far out of expect, from this thread.
 *
 * *total is the tally to add to: set total->bad beforehand to only
 * read and verify.  A case the model cannot take sets total->bad and
 * total->bad_reason and stops the scoring, not the reading.  On return
 * *total holds the sum, merged in stored order: the same bits for any
 * thread count; the caller releases it (audit_tally_release).
 *
 * 0; the errors of store_sample_stream (RBA_E_TAMPERED, RBA_E_CORRUPT,
 * RBA_E_NOTFOUND), sample_chunk_decode and sample_scorer_new/bind;
 * RBA_E_NOMEM; an errno from pthread_create.
 */
int audit_pass_run(struct store_txn *txn, const char *version,
		   const struct audit_cmp *k, uint64_t expect, unsigned nthreads,
		   void (*on_progress)(void *ctx, const char *version,
				       uint64_t done, uint64_t total),
		   void *progress_ctx, struct audit_tally *total,
		   struct rba_detail *d);

#endif
