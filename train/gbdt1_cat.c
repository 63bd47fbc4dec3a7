/*
 * gbdt1_cat.c - the partition of a native categorical feature's levels
 * at one node (gbdt1.h, gbdt1_cat_best): the levels sorted by their
 * gradient statistic, prefixes of that order scanned for the best gain.
 *
 * Frozen with gbdt1.c (see abi.h): every step decides artifact bits.
 */
#include <stdlib.h>
#include <string.h>

#include "train/gbdt1.h"

#define GB_QINV 0x1p-30

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Ascending by statistic, then by level index: a total order. */
static void
sort_levels(uint32_t *o, uint32_t n, const double *stat, uint32_t *tmp)
{
	/* a merge sort on the indexes: stable, no comparator callbacks */
	if (n < 2)
		return;
	for (uint32_t w = 1; w < n; w *= 2) {
		for (uint32_t lo = 0; lo < n; lo += 2 * w) {
			uint32_t mid = lo + w < n ? lo + w : n;
			uint32_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			uint32_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				uint32_t a = o[i], b = o[j];
				int b_first = stat[b] < stat[a] ||
					      (stat[b] == stat[a] && b < a);
				tmp[k++] = b_first ? o[j++] : o[i++];
			}
			while (i < mid)
				tmp[k++] = o[i++];
			while (j < hi)
				tmp[k++] = o[j++];
		}
		for (uint32_t k = 0; k < n; k++)
			o[k] = tmp[k];
	}
}

/* Whether level a comes before level b in sort_levels' order. */
static inline int
level_before(uint32_t a, uint32_t b, const double *stat)
{
	return stat[a] < stat[b] || (stat[a] == stat[b] && a < b);
}

/* The first place of the n levels a (in order) that level k comes
 * before, or n. */
static inline uint32_t
place_of(const uint32_t *a, uint32_t n, uint32_t k, const double *stat)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (level_before(k, a[mid], stat))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * The m first and the m last levels of sort_levels' order of the n
 * levels o (m >= 1, 2 m < n, no NaN among their statistics: the order
 * is then total, so its m first and m last are one list each whatever
 * finds them): o[0 .. m) gets the first m in order, o[n - m .. n) the
 * last m in order, the rest of o is left undefined.  Each end is a
 * sorted list the levels pass by, a level entering (at the place a
 * binary search finds) only when it beats the list's end: one
 * comparison for most levels, where a sort makes log2 n of them (the
 * selection came later than the sort, and the prefixes scanned are the
 * same levels in the same order: no bit moved).  tmp: 2 m entries.
 */
static void
select_ends(uint32_t *o, uint32_t n, uint32_t m, const double *stat,
	    uint32_t *tmp)
{
	uint32_t *lo = tmp, *hi = tmp + m; /* both ascending */
	uint32_t nlo = 0, nhi = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = o[i], j;
		if (nlo < m || level_before(k, lo[m - 1], stat)) {
			j = place_of(lo, nlo, k, stat);
			if (nlo < m)
				nlo++;
			memmove(lo + j + 1, lo + j, (nlo - 1 - j) * sizeof(uint32_t));
			lo[j] = k;
		}
		if (nhi < m) {
			j = place_of(hi, nhi, k, stat);
			memmove(hi + j + 1, hi + j, (nhi - j) * sizeof(uint32_t));
			hi[j] = k;
			nhi++;
		} else if (level_before(hi[0], k, stat)) {
			/* hi[0] leaves; k goes before the first it beats */
			j = 1 + place_of(hi + 1, m - 1, k, stat);
			memmove(hi, hi + 1, (j - 1) * sizeof(uint32_t));
			hi[j - 1] = k;
		}
	}
	for (uint32_t j = 0; j < m; j++) {
		o[j] = lo[j];
		o[n - m + j] = hi[j];
	}
}

void
gbdt1_cat_best(const struct gb_cat_cell *c, uint32_t L, int64_t g,
	       int64_t h, double pt, const struct gb_cat_params *p,
	       uint32_t *order, double *stat, uint32_t *left,
	       struct gb_cat_split *out)
{
	uint32_t nc = 0, others = 0, best_dir = 0, best_len = 0, maxlen;
	int nan = 0;

	out->valid = 0;
	out->gain = 0.0;
	out->nleft = 0;
	out->gl = out->hl = 0;
	/* the candidates without a branch on each level's count (most
	 * levels of a deep node have none), then their statistics */
	for (uint32_t k = 0; k < L; k++) {
		uint32_t cand = c[k].n >= p->min_data && c[k].n > 0;
		order[nc] = k;
		nc += cand;
		others |= !cand && c[k].n > 0;
	}
	if (nc == 0)
		return;
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t k = order[i];
		stat[k] = ((double)c[k].g * GB_QINV) /
			  ((double)c[k].h * GB_QINV + p->smooth);
		nan |= stat[k] != stat[k];
	}
	/* every candidate left leaves nothing right unless others exist */
	maxlen = nc - 1 + others;
	if (maxlen > p->max_left)
		maxlen = p->max_left;
	/* the scans below read the first and the last maxlen levels of the
	 * order only: when they are fewer than all, those are selected */
	if (nan || 2 * (uint64_t)maxlen >= nc)
		sort_levels(order, nc, stat, order + L);
	else if (maxlen > 0)
		select_ends(order, nc, maxlen, stat, order + L);
	for (uint32_t dir = 0; dir < 2; dir++) {
		int64_t gl = 0, hl = 0;
		for (uint32_t len = 1; len <= maxlen; len++) {
			uint32_t k = dir == 0 ? order[len - 1] : order[nc - len];
			double HL, HR, GL, GR, dl, dr, gain;
			gl += c[k].g;
			hl += c[k].h;
			HL = (double)hl * GB_QINV;
			HR = (double)(h - hl) * GB_QINV;
			if (HL < p->mcw || HR < p->mcw)
				continue;
			dl = HL + p->lambda;
			dr = HR + p->lambda;
			if (!(dl > 0.0) || !(dr > 0.0))
				continue;
			GL = (double)gl * GB_QINV;
			GR = (double)(g - gl) * GB_QINV;
			gain = (GL * GL / dl + GR * GR / dr) - pt;
			if (!out->valid || gain > out->gain) {
				out->valid = 1;
				out->gain = gain;
				out->gl = gl;
				out->hl = hl;
				best_dir = dir;
				best_len = len;
			}
		}
	}
	if (!out->valid)
		return;
	out->nleft = best_len;
	for (uint32_t i = 0; i < best_len; i++)
		left[i] = best_dir == 0 ? order[i] : order[nc - 1 - i];
	/* ascending level indexes (distinct: any sort gives one order) */
	qsort(left, best_len, sizeof(uint32_t), cmp_u32);
}
