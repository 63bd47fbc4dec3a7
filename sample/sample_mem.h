/*
 * sample_mem.h - the storage behind a struct sample_chunk and the small
 * helpers its two users share: the format (sample.c), which decodes
 * into it, and the chunk builder of sample_add.c, which fills it before
 * encoding.  Not a public header: other modules use sample.h.
 */
#ifndef RBA_SAMPLE_MEM_H
#define RBA_SAMPLE_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "sample/sample.h"

/* The arrays of one column: each cap_* counts the elements allocated. */
struct sample_colmem {
	double *num;
	size_t cap_num;
	uint32_t *exc_case;
	const char **exc_text;
	size_t cap_exc;
	const char **levels;
	size_t cap_levels;
	uint32_t *codes;
	size_t cap_codes;
};

struct sample_chunk_mem {
	const char **ids;
	size_t cap_ids;
	double *scores;
	size_t cap_scores;
	const char **decisions;
	size_t cap_dec;
	uint16_t *dcodes;
	size_t cap_dcodes;
	uint32_t *dcodes32; /* decoding scratch */
	size_t cap_dcodes32;
	struct sample_column *cols;
	struct sample_colmem *cm;
	size_t cap_cols;
};


/*
 * Makes *pp (a pointer to an array of elements of size sz, of *cap
 * elements) hold at least n, doubling from 16; *cap gets the new count.
 * 0 or RBA_E_NOMEM (*pp and *cap unchanged).
 */
int sample_mem_ensure(void *pp, size_t *cap, size_t n, size_t sz);

/*
 * Makes room for ncases x ncols (and nscores per case) in c's storage,
 * allocating c->mem on first use, and points c's arrays at it: c->ncases,
 * c->ncols and c->nscores are set, the columns zeroed; their contents
 * are the caller's to fill.  0 or RBA_E_NOMEM.
 */
int sample_chunk_reserve(struct sample_chunk *c, uint32_t ncases,
			 uint32_t ncols, uint32_t nscores);

/* Index of s in names[0..n), or -1. */
long sample_names_find(char *const *names, uint32_t n, const char *s);

#endif
