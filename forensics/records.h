/*
 * records.h - the run records a store keeps, as `runs list` and `runs
 * show` tell them: training runs (rebuild/runrec.h), sweeps (sweep.h)
 * and comparisons (compare.h), told apart by their schema.
 */
#ifndef RBA_FX_RECORDS_H
#define RBA_FX_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "common/rba.h"
#include "store/store.h"

enum fx_record_kind {
	FX_RECORD_UNREADABLE = 0, /* not JSON */
	FX_RECORD_RUN,		  /* "rebuild-audit/run/..." */
	FX_RECORD_SWEEP,	  /* "rebuild-audit/sweep/v1" */
	FX_RECORD_COMPARE,	  /* "rebuild-audit/compare/..." */
	FX_RECORD_OTHER		  /* any other schema, or none */
};

/*
 * The kind of the record text p (NUL-terminated, as store_run_get gives
 * it) by a look at its text, not a parse: COMPARE when it holds
 * "\"rebuild-audit/compare/", else SWEEP when it holds
 * "\"rebuild-audit/sweep/v1\"", else RUN.
 */
enum fx_record_kind fx_record_kind_of(const char *p);

/*
 * One record as `runs list` shows it.  Strings are borrowed for the
 * callback only; those absent from the record are NULL, numbers absent
 * are 0.
 */
struct fx_record_entry {
	const char *id;
	enum fx_record_kind kind;
	const char *schema;  /* "?" when absent */
	const char *version;
	double seed, val_loss; /* RUN: "eval"."loss", else "final"."val_loss" */
	size_t seeds;	       /* SWEEP */
	const char *state;     /* COMPARE: the verdict, else the status when it
				* is not "declared", else "(declared)" */
};

/*
 * Calls cb for every run record of txn, sorted by id, whose "version"
 * is version (NULL: every record; an UNREADABLE record is always told).
 * 0, cb's nonzero value, or store_run_list's errors.
 */
int fx_records_list(struct store_txn *txn, const char *version,
		    int (*cb)(void *ctx, const struct fx_record_entry *e),
		    void *ctx, struct rba_detail *d);

/*
 * A comparison record as `runs show` tells it.  The strings point into
 * root (NULL when absent) and live until fx_compare_summary_release.
 */
struct fx_compare_metric {
	const char *metric, *finding;
	double delta_median, p; /* NaN when absent */
};
struct fx_compare_summary {
	const char *status, *base, *cand, *hypothesis, *success, *verdict;
	double declared_at, decided_at; /* -1 when absent or null */
	size_t nmetrics;
	struct fx_compare_metric *metrics; /* "correctness", in order */
	struct rba_json_value root;
};
/*
 * Reads the comparison record text (n bytes).  0; the errors of
 * rba_json_parse (d says where); RBA_E_NOMEM.  Release with
 * fx_compare_summary_release, after an error too.
 */
int fx_compare_summary_parse(const void *text, size_t n,
			     struct fx_compare_summary *out,
			     struct rba_detail *d);
void fx_compare_summary_release(struct fx_compare_summary *s);

#endif
