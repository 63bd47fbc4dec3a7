/*
 * sample_add.c - the use case of "rebuild-audit sample add": a CSV of
 * past cases, scored with the version's stored artifact (or taken with
 * their scores from a column), decided under the policy in force and
 * stored as chunks of the format of sample.c.
 */
#include "audit/sample_add.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/declared.h"
#include "audit/inputs.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strv.h"
#include "sample/sample_mem.h"
#include "sample/scorer.h"
#include "model/artifact.h"
#include "model/xgboost.h"
#include "exec/exec.h"
#include "data/snapshot.h"

/* ---- a string dictionary for building chunks ---------------------------- */

struct dict {
	uint32_t *slot; /* code + 1, 0 empty */
	size_t nslot;	/* power of two */
	const char **str;
	size_t cap_str;
	uint32_t n;
};

static uint64_t
hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static int
dict_reset(struct dict *t, size_t expect)
{
	size_t want = 16;

	while (want < expect * 2)
		want *= 2;
	if (want > t->nslot) {
		free(t->slot);
		t->slot = malloc(want * sizeof(*t->slot));
		if (t->slot == NULL) {
			t->nslot = 0;
			return RBA_E_NOMEM;
		}
		t->nslot = want;
	}
	memset(t->slot, 0, t->nslot * sizeof(*t->slot));
	t->n = 0;
	return 0;
}

/* The code of s (borrowed, must outlive the dictionary's use). */
static int
dict_code(struct dict *t, const char *s, uint32_t *code)
{
	size_t mask = t->nslot - 1, i = (size_t)hash_str(s) & mask;

	while (t->slot[i] != 0) {
		if (strcmp(t->str[t->slot[i] - 1], s) == 0) {
			*code = t->slot[i] - 1;
			return 0;
		}
		i = (i + 1) & mask;
	}
	if (sample_mem_ensure(&t->str, &t->cap_str, (size_t)t->n + 1, sizeof(char *)))
		return RBA_E_NOMEM;
	t->str[t->n] = s;
	t->slot[i] = t->n + 1;
	*code = t->n++;
	return 0;
}

static void
dict_release(struct dict *t)
{
	free(t->slot);
	free(t->str);
	memset(t, 0, sizeof(*t));
}

/* ---- sample add ------------------------------------------------------- */

/*
 * The distinct texts of one column in the pending chunk, as arena
 * offsets: a text already seen costs its chunk nothing but a code.
 */
struct seen {
	uint32_t *slot; /* arena offset + 1, 0 empty */
	size_t nslot, n;
};

static uint64_t
hash_mem(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* The slot of p[0..n) in t: occupied when seen, empty otherwise. */
static size_t
seen_slot(const struct seen *t, const struct rba_buf *arena, const char *p,
	  size_t n)
{
	size_t mask = t->nslot - 1, i = (size_t)hash_mem(p, n) & mask;

	while (t->slot[i] != 0) {
		const char *s = (const char *)arena->p + t->slot[i] - 1;
		if (memcmp(s, p, n) == 0 && s[n] == 0)
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

static int
seen_has(const struct seen *t, const struct rba_buf *arena, const char *p,
	 size_t n)
{
	return t->nslot != 0 && t->slot[seen_slot(t, arena, p, n)] != 0;
}

static int
seen_add(struct seen *t, const struct rba_buf *arena, uint32_t off, size_t n)
{
	const char *p = (const char *)arena->p + off;
	size_t i;

	if (2 * (t->n + 1) > t->nslot) {
		size_t nn = t->nslot ? 2 * t->nslot : 64;
		struct seen u = { calloc(nn, sizeof(uint32_t)), nn, 0 };
		if (u.slot == NULL)
			return RBA_E_NOMEM;
		for (size_t j = 0; j < t->nslot; j++) {
			if (t->slot[j] == 0)
				continue;
			const char *q = (const char *)arena->p + t->slot[j] - 1;
			u.slot[seen_slot(&u, arena, q, strlen(q))] = t->slot[j];
			u.n++;
		}
		free(t->slot);
		*t = u;
	}
	i = seen_slot(t, arena, p, n);
	if (t->slot[i] == 0) {
		t->slot[i] = off + 1;
		t->n++;
	}
	return 0;
}

static void
seen_clear(struct seen *t)
{
	if (t->nslot)
		memset(t->slot, 0, t->nslot * sizeof(uint32_t));
	t->n = 0;
}

enum col_mode { MODE_AUTO = 0, MODE_NUM, MODE_DICT, MODE_IDS };

struct builder {
	const struct sample_layout *l;
	const struct encode_spec *spec; /* the model's: its missing tokens */
	const char *file;
	uint8_t *mode; /* enum col_mode per column */
	uint32_t ncols;
	/* rows of the pending chunk */
	uint32_t n;
	size_t cap_rows;
	struct rba_buf arena; /* every text, NUL-terminated */
	uint32_t *off;	      /* n x (ncols + 1): fields, then the id */
	double *num;	      /* n x ncols */
	uint8_t *flag;	      /* n x ncols: bit 0 parsed, bit 1 text differs */
	unsigned long *line;  /* n */
	size_t bound;	      /* upper bound of the encoded chunk */
	size_t fixed;	      /* bytes of the chunk outside the cases */
	size_t per_case;      /* score bytes and decision code per case */
	size_t maxdec;	      /* longest decision text and its NUL */
	struct seen *seen;    /* per column: the texts of this chunk */
	double *rnum;	      /* the row being read: numbers and flags */
	uint8_t *rflag;
	/* the chunk being encoded */
	struct sample_chunk chunk;
	struct dict dict;
	float *probs;
	size_t cap_probs;
	struct rba_buf raw;
};

static void
builder_release(struct builder *b)
{
	for (uint32_t k = 0; b->seen != NULL && k < b->ncols; k++)
		free(b->seen[k].slot);
	free(b->seen);
	free(b->rnum);
	free(b->rflag);
	free(b->mode);
	rba_buf_release(&b->arena);
	free(b->off);
	free(b->num);
	free(b->flag);
	free(b->line);
	sample_chunk_release(&b->chunk);
	dict_release(&b->dict);
	free(b->probs);
	rba_buf_release(&b->raw);
}

static int
builder_reserve_rows(struct builder *b)
{
	size_t want, K = b->ncols;

	if (b->n < b->cap_rows)
		return 0;
	want = b->cap_rows ? b->cap_rows * 2 : 256;
	if (want > SAMPLE_CHUNK_CASES)
		want = SAMPLE_CHUNK_CASES;
	uint32_t *off = realloc(b->off, want * (K + 1) * sizeof(*off));
	if (off == NULL)
		return RBA_E_NOMEM;
	b->off = off;
	double *num = realloc(b->num, want * K * sizeof(*num));
	if (num == NULL)
		return RBA_E_NOMEM;
	b->num = num;
	uint8_t *flag = realloc(b->flag, want * K);
	if (flag == NULL)
		return RBA_E_NOMEM;
	b->flag = flag;
	unsigned long *line = realloc(b->line, want * sizeof(*line));
	if (line == NULL)
		return RBA_E_NOMEM;
	b->line = line;
	b->cap_rows = want;
	return 0;
}

/* The arena offset of a copy of n bytes of p, NUL-terminated. */
static int
arena_put(struct builder *b, const char *p, size_t n, uint32_t *off)
{
	if (b->arena.len + n + 1 > UINT32_MAX)
		return RBA_E_LIMIT;
	*off = (uint32_t)b->arena.len;
	rba_buf_put(&b->arena, p, n);
	rba_buf_put_u8(&b->arena, 0);
	return rba_buf_status(&b->arena);
}

static const char *
btext(const struct builder *b, uint32_t row, uint32_t k)
{
	return (const char *)b->arena.p + b->off[(size_t)row * (b->ncols + 1) + k];
}

/*
 * Builds the decoded view of the pending rows (ids and columns; scores
 * and decisions come later).
 */
static int
builder_view(struct builder *b)
{
	struct sample_chunk *c = &b->chunk;
	struct sample_chunk_mem *m;
	uint32_t K = b->ncols, n = b->n;
	int err;

	if ((err = sample_chunk_reserve(c, n, K, b->l->nscores)) != 0)
		return err;
	m = c->mem;
	for (uint32_t i = 0; i < n; i++)
		m->ids[i] = btext(b, i, K);
	for (uint32_t k = 0; k < K; k++) {
		struct sample_column *col = &m->cols[k];
		struct sample_colmem *cm = &m->cm[k];
		int numeric = b->mode[k] == MODE_NUM;
		if (b->mode[k] == MODE_IDS) {
			col->kind = SAMPLE_COL_IDS;
			continue;
		}
		if (b->mode[k] == MODE_AUTO) {
			numeric = 1;
			for (uint32_t i = 0; i < n && numeric; i++)
				numeric = b->flag[(size_t)i * K + k] & 1;
		}
		if (numeric) {
			uint32_t nexc = 0;
			col->kind = SAMPLE_COL_NUMBER;
			if (sample_mem_ensure(&cm->num, &cm->cap_num, n, sizeof(double)))
				return RBA_E_NOMEM;
			for (uint32_t i = 0; i < n; i++) {
				cm->num[i] = b->num[(size_t)i * K + k];
				nexc += (b->flag[(size_t)i * K + k] & 2) != 0;
			}
			if (sample_mem_ensure(&cm->exc_case, &cm->cap_exc, nexc ? nexc : 1,
				   sizeof(uint32_t)))
				return RBA_E_NOMEM;
			const char **et = realloc(cm->exc_text, cm->cap_exc * sizeof(char *));
			if (et == NULL)
				return RBA_E_NOMEM;
			cm->exc_text = et;
			nexc = 0;
			for (uint32_t i = 0; i < n; i++)
				if (b->flag[(size_t)i * K + k] & 2) {
					cm->exc_case[nexc] = i;
					cm->exc_text[nexc++] = btext(b, i, k);
				}
			col->num = cm->num;
			col->nexc = nexc;
			col->exc_case = cm->exc_case;
			col->exc_text = cm->exc_text;
			continue;
		}
		col->kind = SAMPLE_COL_DICT;
		if (sample_mem_ensure(&cm->codes, &cm->cap_codes, n, sizeof(uint32_t)) ||
		    dict_reset(&b->dict, n))
			return RBA_E_NOMEM;
		for (uint32_t i = 0; i < n; i++)
			if ((err = dict_code(&b->dict, btext(b, i, k), &cm->codes[i])))
				return err;
		if (sample_mem_ensure(&cm->levels, &cm->cap_levels, b->dict.n, sizeof(char *)))
			return RBA_E_NOMEM;
		memcpy(cm->levels, b->dict.str, b->dict.n * sizeof(char *));
		col->nlevels = b->dict.n;
		col->levels = cm->levels;
		col->codes = cm->codes;
	}
	return 0;
}

struct add_state {
	const struct sample_add_request *rq;
	const struct policy *pol;
	const struct artifact *art;
	struct sample_scorer *sc;
	struct sample_layout layout;
	struct builder b;
	struct store_sample_writer *w;
	struct sample_add_result *res;
	uint64_t cases;
	struct rba_hasher source;  /* every byte of the file, as read */
	uint64_t source_bytes;
	uint64_t source_total;	   /* the file's size; 0: unknown */
	char **cnames; /* decision names over the whole sample */
	uint64_t *ccounts;
	size_t cap_counts;
	uint32_t ncounts;
};

static int
count_decision(struct add_state *st, const char *name)
{
	for (uint32_t i = 0; i < st->ncounts; i++)
		if (strcmp(st->cnames[i], name) == 0) {
			st->ccounts[i]++;
			return 0;
		}
	/* Decision names beyond a few hundred are not summarized. */
	if (st->ncounts >= 256)
		return 0;
	if (sample_mem_ensure(&st->cnames, &st->cap_counts, (size_t)st->ncounts + 1,
		   sizeof(char *)))
		return RBA_E_NOMEM;
	uint64_t *cc = realloc(st->ccounts, st->cap_counts * sizeof(uint64_t));
	if (cc == NULL)
		return RBA_E_NOMEM;
	st->ccounts = cc;
	st->cnames[st->ncounts] = strdup(name);
	if (st->cnames[st->ncounts] == NULL)
		return RBA_E_NOMEM;
	st->ccounts[st->ncounts++] = 1;
	return 0;
}

static int
at_case(struct add_state *st, uint32_t i, struct rba_detail *d)
{
	if (d != NULL) {
		snprintf(d->file, sizeof(d->file), "%s", st->b.file);
		d->line = st->b.line[i];
		d->col = 0;
	}
	return 0;
}

/* The decision of pending row i with the given scores: the decision
 * column's, else the policy's (NULL: the policy gives none).  pv is
 * room for SAMPLE_MAX_SCORES numbers. */
static const char *
row_decision(struct add_state *st, const double *scores, uint32_t i,
	     double *pv)
{
	const struct sample_layout *l = &st->layout;
	uint32_t C = l->nclasses;

	if (l->decision_col >= 0)
		return btext(&st->b, i, (uint32_t)l->decision_col);
	if (st->pol->argmax) {
		for (uint32_t k = 0; k < C; k++)
			pv[k] = scores[(size_t)i * C + k];
		size_t top = policy_decide_argmax(st->pol, pv, C, NULL);
		return top < C ? l->classes[top] : NULL;
	}
	return policy_decide(st->pol, l->scored_by == SAMPLE_SCORED_MODEL
					      ? scores[(size_t)i * C + l->positive]
					      : scores[i],
			     NULL);
}

/* The scores and the decision of every pending row into the chunk,
 * each decision counted for the summary. */
static int
decide_rows(struct add_state *st, struct rba_detail *d)
{
	struct builder *b = &st->b;
	const struct sample_layout *l = &st->layout;
	struct sample_chunk *c = &b->chunk;
	struct sample_chunk_mem *m = c->mem;
	uint32_t C = l->nclasses;
	double *scores = m->scores;
	double pv[SAMPLE_MAX_SCORES];
	int err;

	if (dict_reset(&b->dict, 64))
		return RBA_E_NOMEM;
	for (uint32_t i = 0; i < b->n; i++) {
		const char *dec;
		uint32_t code;
		if (l->scored_by == SAMPLE_SCORED_MODEL) {
			for (uint32_t k = 0; k < C; k++)
				scores[(size_t)i * C + k] = b->probs[(size_t)i * C + k];
		} else {
			scores[i] = b->num[(size_t)i * b->ncols + (size_t)l->score_col];
		}
		if ((dec = row_decision(st, scores, i, pv)) == NULL) {
			at_case(st, i, d);
			return rba_fail(d, RBA_E_SCHEMA, b->file, b->line[i], 0,
					"case '%.64s' has no decision under the policy",
					c->ids[i]);
		}
		if ((err = dict_code(&b->dict, dec, &code)) != 0)
			return err;
		if (code >= SAMPLE_MAX_DECISIONS)
			return rba_fail(d, RBA_E_LIMIT, b->file, b->line[i], 0,
					"more than %u distinct decisions in a chunk",
					SAMPLE_MAX_DECISIONS);
		m->dcodes[i] = (uint16_t)code;
		if ((err = count_decision(st, dec)) != 0)
			return err;
	}
	if (sample_mem_ensure(&m->decisions, &m->cap_dec, b->dict.n, sizeof(char *)))
		return RBA_E_NOMEM;
	memcpy(m->decisions, b->dict.str, b->dict.n * sizeof(char *));
	c->ndecisions = b->dict.n;
	c->decisions = m->decisions;
	return 0;
}

/* The pending chunk encoded and handed to the sample's writer. */
static int
store_chunk(struct add_state *st, struct rba_detail *d)
{
	struct builder *b = &st->b;
	struct sample_chunk_mem *m = b->chunk.mem;
	uint32_t n = b->n;
	int err;

	b->raw.len = 0;
	sample_chunk_encode(&b->chunk, &b->raw);
	if ((err = rba_buf_status(&b->raw)) != 0)
		return err;
	/* The bound makes this impossible; a broken bound must not store. */
	if (b->raw.len > STORE_CHUNK_MAX)
		return rba_fail(d, RBA_E_LIMIT, b->file, b->line[0], 0,
				"a sample chunk came out at %zu bytes", b->raw.len);
	err = store_sample_add_chunk(st->w, b->raw.p, b->raw.len,
				     (const char *const *)m->ids, n, d);
	if (err == RBA_E_EXISTS && d != NULL) {
		/* The second use of the id is the one refused. */
		for (uint32_t i = n; i-- > 0;)
			if (strcmp(m->ids[i], d->key) == 0) {
				at_case(st, i, d);
				break;
			}
	}
	return err;
}

/* Scores, decides, encodes and stores the pending rows. */
static int
flush_chunk(struct add_state *st, struct rba_detail *d)
{
	struct builder *b = &st->b;
	uint32_t n = b->n, bad = 0;
	int err;

	if (n == 0)
		return 0;
	if ((err = builder_view(b)) != 0)
		return err;
	if (sample_mem_ensure(&b->probs, &b->cap_probs,
			      (size_t)n * st->layout.nclasses, sizeof(float)))
		return RBA_E_NOMEM;
	err = sample_scorer_run(st->sc, &b->chunk, b->probs, &bad, d);
	if (err) {
		if (err == RBA_E_SCHEMA)
			at_case(st, bad, d);
		return err;
	}
	if ((err = decide_rows(st, d)) != 0 || (err = store_chunk(st, d)) != 0)
		return err;
	st->cases += n;
	b->n = 0;
	b->arena.len = 0;
	b->bound = b->fixed;
	for (uint32_t k = 0; k < b->ncols; k++)
		seen_clear(&b->seen[k]);
	if (st->rq->progress != NULL)
		st->rq->progress(st->rq->progress_ctx, st->cases,
				 st->source_bytes, st->source_total);
	return 0;
}

/* The reader's tap: the submitted bytes are hashed as they are read. */
static int
source_tap(void *ctx, const uint8_t *p, size_t n)
{
	struct add_state *st = ctx;

	rba_hasher_update(&st->source, p, n);
	st->source_bytes += n;
	return 0;
}

/*
 * The layout again with the digest of the submitted bytes, which is
 * known only once the reader has seen them all, as the record's text.
 */
static int
layout_seal_source(struct add_state *st, struct rba_buf *lt,
		   struct rba_detail *d)
{
	int err;

	rba_hasher_final(&st->source, &st->layout.source_digest);
	st->layout.has_source_digest = 1;
	lt->len = 0;
	sample_layout_format(&st->layout, lt);
	if ((err = rba_buf_status(lt)) != 0)
		return rba_fail(d, err, NULL, 0, 0, "out of memory");
	return store_sample_set_columns(st->w, rba_buf_cstr(lt), d);
}

static int
header_check(const struct csv_field *f, size_t n, const char *file,
	     struct rba_detail *d)
{
	for (size_t i = 0; i < n; i++) {
		if (f[i].n == 0)
			return rba_fail(d, RBA_E_SCHEMA, file, 1, f[i].col,
					"empty column name");
		if (memchr(f[i].p, 0, f[i].n) != NULL)
			return rba_fail(d, RBA_E_SCHEMA, file, 1, f[i].col,
					"a column name holds a NUL byte");
		for (size_t j = 0; j < i; j++)
			if (f[j].n == f[i].n && memcmp(f[j].p, f[i].p, f[i].n) == 0)
				return rba_fail(d, RBA_E_SCHEMA, file, 1, f[i].col,
						"column '%.*s' appears twice",
						(int)(f[i].n > 64 ? 64 : f[i].n), f[i].p);
	}
	return 0;
}

/* The layout from the header and the request. */
static int
layout_from_header(struct add_state *st, const struct csv_field *f, size_t n,
		   const struct pins *pins, const char *file,
		   struct rba_detail *d)
{
	struct sample_layout *l = &st->layout;
	const struct sample_add_request *rq = st->rq;
	const struct encode_spec *spec = &st->art->spec;
	const char *base = strrchr(rq->path, '/');

	l->id_col = l->score_col = l->decision_col = -1;
	l->source = strdup(strcmp(rq->path, "-") == 0 ? "stdin"
				  : base ? base + 1 : rq->path);
	l->ncols = (uint32_t)n;
	l->names = calloc(n, sizeof(char *));
	l->nclasses = spec->nclasses;
	l->classes = calloc(spec->nclasses, sizeof(char *));
	if (l->source == NULL || l->names == NULL || l->classes == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		if ((l->names[i] = strndup(f[i].p, f[i].n)) == NULL)
			return RBA_E_NOMEM;
	for (uint32_t i = 0; i < spec->nclasses; i++)
		if ((l->classes[i] = strdup(spec->classes[i])) == NULL)
			return RBA_E_NOMEM;
	l->positive = spec->positive == ENCODE_NO_POSITIVE ? UINT32_MAX
							    : spec->positive;
	l->scored_by = rq->score_column ? SAMPLE_SCORED_COLUMN : SAMPLE_SCORED_MODEL;
	l->nscores = rq->score_column ? 1 : spec->nclasses;
	if (rq->id_column != NULL) {
		l->id_col = sample_names_find(l->names, l->ncols, rq->id_column);
		if (l->id_col < 0) {
			rba_detail_key(d, rq->id_column);
			return rba_fail(d, RBA_E_SCHEMA, file, 1, 0,
					"no id column '%s' in the header",
					rq->id_column);
		}
	} else if (pins != NULL && pins->data.id != NULL) {
		l->id_col = sample_names_find(l->names, l->ncols, pins->data.id);
	}
	if (l->id_col >= 0 &&
	    (l->id_column = strdup(l->names[l->id_col])) == NULL)
		return RBA_E_NOMEM;
	if (rq->score_column != NULL) {
		l->score_col = sample_names_find(l->names, l->ncols, rq->score_column);
		if (l->score_col < 0 || l->score_col == l->id_col) {
			rba_detail_key(d, rq->score_column);
			return rba_fail(d, RBA_E_SCHEMA, file, 1, 0,
					"no score column '%s' in the header",
					rq->score_column);
		}
		if ((l->score_column = strdup(rq->score_column)) == NULL)
			return RBA_E_NOMEM;
		l->has_score_precision = rq->has_score_precision;
		l->score_precision = rq->score_precision;
	}
	if (rq->decision_column != NULL) {
		l->decision_col = sample_names_find(l->names, l->ncols, rq->decision_column);
		if (l->decision_col < 0 || l->decision_col == l->id_col ||
		    l->decision_col == l->score_col) {
			rba_detail_key(d, rq->decision_column);
			return rba_fail(d, RBA_E_SCHEMA, file, 1, 0,
					"no decision column '%s' in the header",
					rq->decision_column);
		}
		if ((l->decision_column = strdup(rq->decision_column)) == NULL)
			return RBA_E_NOMEM;
	}
	return 0;
}

static int
builder_setup(struct add_state *st, const char *file)
{
	struct builder *b = &st->b;
	const struct sample_layout *l = &st->layout;
	const struct encode_spec *spec = &st->art->spec;

	b->l = l;
	b->spec = spec;
	b->file = file;
	b->ncols = l->ncols;
	b->mode = calloc(l->ncols, 1);
	b->seen = calloc(l->ncols, sizeof(*b->seen));
	b->rnum = calloc(l->ncols, sizeof(double));
	b->rflag = calloc(l->ncols, 1);
	if (b->mode == NULL || b->seen == NULL || b->rnum == NULL || b->rflag == NULL)
		return RBA_E_NOMEM;
	for (uint32_t c = 0; c < spec->ncolumns; c++) {
		long k = sample_names_find(l->names, l->ncols, spec->columns[c].name);
		if (k >= 0)
			b->mode[k] = spec->columns[c].kind == ENCODE_NUMERIC
					     ? MODE_NUM : MODE_DICT;
	}
	if (l->score_col >= 0)
		b->mode[l->score_col] = MODE_NUM;
	if (l->decision_col >= 0)
		b->mode[l->decision_col] = MODE_DICT;
	if (l->id_col >= 0)
		b->mode[l->id_col] = MODE_IDS;
	b->maxdec = 0;
	if (st->pol->argmax) {
		for (uint32_t i = 0; i < l->nclasses; i++)
			if (strlen(l->classes[i]) > b->maxdec)
				b->maxdec = strlen(l->classes[i]);
	} else {
		for (size_t i = 0; i < st->pol->nbands; i++)
			if (strlen(st->pol->bands[i].decision) > b->maxdec)
				b->maxdec = strlen(st->pol->bands[i].decision);
	}
	/* Header, ids and decision blocks' lengths, per column kind, width,
	 * level and exception counts. */
	b->fixed = 32 + (size_t)l->ncols * 16;
	b->per_case = 8 * (size_t)l->nscores + 2;
	b->maxdec += 1;
	b->bound = b->fixed;
	return 0;
}

/* The case id of a record: its id column's, else its row number
 * (written into idbuf). */
static int
row_id(struct add_state *st, const struct csv_field *f, unsigned long line,
       uint64_t rowno, char *idbuf, size_t idcap, const char **id,
       size_t *idlen, struct rba_detail *d)
{
	const struct sample_layout *l = &st->layout;

	if (l->id_col >= 0) {
		*id = f[l->id_col].p;
		*idlen = f[l->id_col].n;
	} else {
		*idlen = (size_t)snprintf(idbuf, idcap, "%llu",
					  (unsigned long long)rowno);
		*id = idbuf;
	}
	if (*idlen == 0 || *idlen > STORE_CASE_ID_MAX)
		return rba_fail(d, *idlen ? RBA_E_LIMIT : RBA_E_SCHEMA, st->b.file,
				line, l->id_col >= 0 ? f[l->id_col].col : 0,
				*idlen ? "case id longer than %d bytes"
				       : "empty case id (limit %d bytes)",
				STORE_CASE_ID_MAX);
	return 0;
}

/*
 * Field k of a record, fk, into the row being read (b->rnum, b->rflag),
 * its share of the chunk added to *cost and *fresh (add_row says how).
 */
static int
read_field(struct add_state *st, const struct csv_field *fk, uint32_t k,
	   unsigned long line, size_t *cost, size_t *fresh,
	   struct rba_detail *d)
{
	struct builder *b = &st->b;
	const struct sample_layout *l = &st->layout;
	uint8_t mode = b->mode[k];
	size_t num = 0, dict, dict_new = 2 + fk->n + 1;
	char fmt[32];
	double v = 0;
	int err;

	if (memchr(fk->p, 0, fk->n) != NULL)
		return rba_fail(d, RBA_E_SCHEMA, b->file, line, fk->col,
				"a field holds a NUL byte");
	b->rflag[k] = 0;
	b->rnum[k] = 0;
	if ((long)k == l->decision_col && fk->n + 1 > b->maxdec) {
		*cost += fk->n + 1;
		*fresh += fk->n + 1;
	}
	if (mode == MODE_IDS)
		return 0;
	if (mode == MODE_NUM && (long)k != l->score_col &&
	    b->spec->nmissing > 0) {
		struct csv_missing mv = encode_missing(b->spec);
		if (csv_is_missing(&mv, fk->p, fk->n)) {
			/* a missing value: NaN, its text kept */
			b->rnum[k] = NAN;
			b->rflag[k] = 1 | 2;
			num = 8 + 4 + fk->n + 1;
			*cost += num;
			*fresh += num;
			return 0;
		}
	}
	if (mode != MODE_DICT) {
		err = csv_parse_number(fk->p, fk->n, &v);
		if (err != 0 && mode == MODE_NUM && (long)k != l->score_col &&
		    b->spec->nmissing == 0 &&
		    fk->n == 0) {
			rba_detail_key(d, l->names[k]);
			return rba_fail(d, RBA_E_SCHEMA, b->file, line,
					fk->col,
					"column '%s' has a missing value "
					"('%.*s') and the model takes none "
					"(a network needs data.impute)",
					l->names[k],
					(int)(fk->n > 64 ? 64 : fk->n),
					fk->p);
		}
		if (err != 0 && mode == MODE_NUM) {
			rba_detail_key(d, l->names[k]);
			return rba_fail(d, RBA_E_SCHEMA, b->file, line,
					fk->col,
					"column '%s' needs a number, not '%.*s'",
					l->names[k],
					(int)(fk->n > 64 ? 64 : fk->n),
					fk->p);
		}
		if (err == 0 && (long)k == l->score_col &&
		    !(v >= 0.0 && v <= 1.0)) {
			rba_detail_key(d, l->names[k]);
			return rba_fail(d, RBA_E_SCHEMA, b->file, line,
					fk->col,
					"column '%s' holds logged probabilities, "
					"and '%.*s' is not in [0, 1]",
					l->names[k],
					(int)(fk->n > 64 ? 64 : fk->n),
					fk->p);
		}
		if (err == 0) {
			b->rnum[k] = v;
			b->rflag[k] = 1;
			if (rba_json_fmt_double(v, fmt) != fk->n ||
			    memcmp(fmt, fk->p, fk->n) != 0)
				b->rflag[k] |= 2;
			num = 8 + (b->rflag[k] & 2 ? 4 + fk->n + 1 : 0);
		}
	}
	if (mode == MODE_NUM) {
		*cost += num;
		*fresh += num;
		return 0;
	}
	dict = seen_has(&b->seen[k], &b->arena, fk->p, fk->n) ? 2 : dict_new;
	*cost += dict > num ? dict : num;
	*fresh += dict_new > num ? dict_new : num;
	return 0;
}

/* The row read (add_row) appended to the pending chunk: its texts in
 * the arena, its numbers and flags, its id and line. */
static int
keep_row(struct add_state *st, const struct csv_field *f, unsigned long line,
	 const char *id, size_t idlen, struct rba_detail *d)
{
	struct builder *b = &st->b;
	uint32_t K = b->ncols, r;
	int err;

	if ((err = builder_reserve_rows(b)) != 0)
		return err;
	r = b->n;
	for (uint32_t k = 0; k < K; k++) {
		size_t at = (size_t)r * K + k;
		uint32_t off;
		if ((err = arena_put(b, f[k].p, f[k].n, &off)))
			return rba_fail(d, err, b->file, line, f[k].col,
					"%s", rba_strerror(err));
		b->off[(size_t)r * (K + 1) + k] = off;
		b->flag[at] = b->rflag[k];
		b->num[at] = b->rnum[k];
		if (b->mode[k] != MODE_NUM && b->mode[k] != MODE_IDS &&
		    (err = seen_add(&b->seen[k], &b->arena, off, f[k].n)) != 0)
			return err;
	}
	if ((err = arena_put(b, id, idlen, &b->off[(size_t)r * (K + 1) + K])))
		return err;
	b->line[r] = line;
	b->n++;
	return 0;
}

/* Takes one CSV record into the pending chunk (flushing first if full). */
static int
add_row(struct add_state *st, const struct csv_field *f, size_t n,
	unsigned long line, uint64_t rowno, struct rba_detail *d)
{
	struct builder *b = &st->b;
	uint32_t K = b->ncols;
	size_t cost, fresh;
	char idbuf[24];
	const char *id;
	size_t idlen;
	int err;

	if (n != K)
		return rba_fail(d, RBA_E_SCHEMA, b->file, line, 0,
				"%zu fields where the header has %u", n, K);
	if ((err = row_id(st, f, line, rowno, idbuf, sizeof(idbuf), &id,
			  &idlen, d)) != 0)
		return err;
	/*
	 * An upper bound of what the case adds to its chunk, per field:
	 * a number 8 bytes and its text when that is not rba_json_fmt_double's;
	 * a dictionary entry a code of at most 2 bytes and, the first time
	 * in the chunk, the text; a column that may turn out either way
	 * the larger.  "fresh" assumes every text new (after a flush).
	 */
	cost = fresh = b->per_case + idlen + 1 + b->maxdec;
	for (uint32_t k = 0; k < K; k++)
		if ((err = read_field(st, &f[k], k, line, &cost, &fresh, d)) != 0)
			return err;
	if (fresh + b->fixed > STORE_CHUNK_MAX)
		return rba_fail(d, RBA_E_LIMIT, b->file, line, 0,
				"a case of %zu bytes is too large for a sample chunk",
				fresh);
	if (b->n == SAMPLE_CHUNK_CASES || b->bound + cost > STORE_CHUNK_MAX) {
		if ((err = flush_chunk(st, d)) != 0)
			return err;
		cost = fresh;
	}
	if ((err = keep_row(st, f, line, id, idlen, d)) != 0)
		return err;
	b->bound += cost;
	return 0;
}

void
sample_add_result_release(struct sample_add_result *r)
{
	if (r == NULL)
		return;
	rba_strv_free(r->decisions, r->ndecisions);
	free(r->decision_counts);
	memset(r, 0, sizeof(*r));
}

static int
check_request(const struct sample_add_request *rq, const struct policy *pol,
	      const struct artifact *art, struct rba_detail *d)
{
	if (rq->decision_column != NULL && rq->score_column == NULL)
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"a decision column needs a score column");
	if (rq->has_score_precision &&
	    (rq->score_column == NULL ||
	     !(rq->score_precision >= 0.0 &&
	       rq->score_precision <= SAMPLE_MAX_SCORE_PRECISION)))
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"a score precision needs a score column and is a "
				"number from 0 to 1");
	if (!pol->argmax && art->spec.positive == ENCODE_NO_POSITIVE)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"the policy decides by score bands, but the model "
				"has no positive class (use an argmax policy)");
	if (rq->score_column != NULL &&
	    (pol->argmax || art->spec.positive == ENCODE_NO_POSITIVE))
		return rba_fail(d, RBA_E_USAGE, NULL, 0, 0,
				"stored scores from a column need a binary model "
				"and a policy with score bands");
	return 0;
}

/*
 * An exec version's artifact opened for a sample: the pins' encoding
 * of the version's snapshot gives its columns and classes, and an
 * xgboost-json artifact is read natively.  A fault of either (neither
 * is read at register) is said of the cases file being added (d->file),
 * the snapshot or the artifact named in the reason, with its own line
 * and column: the cases file's are not where it lies.
 */
static int
open_stored(const struct sample_add_request *rq,
	    const struct trainer_kind *k, const struct pins *pins,
	    const uint8_t *snap, size_t sn, const uint8_t *abytes, size_t an,
	    struct artifact *art, struct rba_detail *d)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1], at[64], what[160];
	char why[sizeof(d->reason)];
	int err = k->stored_open(pins, snap, sn, abytes, an, art, d);

	if (err == 0 || err == RBA_E_NOMEM || d == NULL || d->file[0] == 0)
		return err;
	rba_digest_format(&pins->snapshot, hex);
	if (strcmp(d->file, hex) == 0)
		snprintf(what, sizeof(what), "its snapshot %s, read under its pins",
			 hex);
	else
		snprintf(what, sizeof(what), "its artifact %.128s", d->file);
	at[0] = 0;
	if (d->line > 0 && d->col > 0)
		snprintf(at, sizeof(at), " (line %lu, column %lu)", d->line,
			 d->col);
	else if (d->line > 0)
		snprintf(at, sizeof(at), " (line %lu)", d->line);
	snprintf(why, sizeof(why), "%s", d->reason);
	return rba_fail(d, err, rq->path, 0, 0, "version '%s': %s%s: %s",
			pins->version, what, at, why);
}

/* What sample_add holds from its first step to its last. */
struct add_run {
	struct store *s;
	const struct sample_add_request *rq;
	struct sample_add_result *out;
	struct rba_detail *d;
	struct add_state st;
	struct store_version v;
	struct store_txn *txn;
	struct policy *pol;
	int from_version; /* pol is the version's */
	struct pins *pins;
	uint8_t *abytes, *snap; /* the stored artifact, an exec's snapshot */
	size_t an, sn;
	struct artifact art;
	struct csv_reader *r;
	struct rba_buf lt; /* the layout's text */
	int spool;	   /* the spooled input, or -1 */
	uint64_t hint;	   /* the input's size, for the transaction */
	uint64_t cleared;
	int begun; /* the sample's steps are being committed */
};

/*
 * The input sized for progress and the write transaction.  Input that
 * is not a file (standard input, a pipe, a FIFO) is read whole first:
 * whoever sends it slowly must not hold the store's write lock, and
 * every other writer, meanwhile.
 */
static int
open_input(struct add_run *a)
{
	const char *path = a->rq->path;
	uint64_t spooled = 0;
	struct stat sb;
	int err;

	if ((err = rba_input_spool_path(path, RBA_SPOOL_MAX, &a->spool, &spooled,
					a->d)) != 0)
		return err;
	if (a->spool >= 0) {
		a->hint = a->st.source_total = spooled;
	} else if (strcmp(path, "-") != 0 ? stat(path, &sb) == 0
					  : fstat(STDIN_FILENO, &sb) == 0) {
		a->hint = (uint64_t)sb.st_size;
		/* A size means something for progress only for a file. */
		if (S_ISREG(sb.st_mode))
			a->st.source_total = a->hint;
	}
	rba_hasher_init(&a->st.source);
	return 0;
}

/*
 * The version, the policy in force, its pins and its stored artifact
 * (verified against its digest by store_blob_load) opened as the model
 * that scores the cases, the request checked against them.
 */
static int
open_model(struct add_run *a)
{
	struct rba_detail *d = a->d;
	const struct trainer_kind *k;
	int err;

	if ((err = store_version_get(a->txn, a->rq->version, &a->v, d)) != 0 ||
	    (err = audit_inputs_policy_in_force(&a->v, a->rq->policy, &a->pol,
						&a->from_version, d)))
		return err;
	a->st.pol = a->pol;
	if ((err = policy_pins_parse(a->v.pins_text, strlen(a->v.pins_text),
				     "stored pins", &a->pins, d)) != 0 ||
	    (err = store_blob_load(a->txn, &a->v.artifact, ARTIFACT_MAX_BYTES,
				   &a->abytes, &a->an, d)) != 0)
		return err;
	k = rebuild_trainer_kind(a->pins);
	if ((err = k->stored_decode(a->abytes, a->an, "the stored artifact",
				    &a->art, d)) != 0)
		return err;
	/* An exec version's format: its columns and classes from the pins'
	 * encoding of the snapshot, its scores from its score command
	 * (exec/exec.h). */
	if (k->opens_with_snapshot &&
	    ((err = snapshot_load(a->txn, &a->pins->snapshot, &a->snap, &a->sn,
				  d)) != 0 ||
	     (err = open_stored(a->rq, k, a->pins, a->snap, a->sn, a->abytes,
				a->an, &a->art, d)) != 0))
		return err;
	a->st.art = &a->art;
	if ((err = check_request(a->rq, a->pol, &a->art, d)) != 0)
		return err;
	return sample_scorer_new(&a->art, &a->st.sc, d);
}

/* The cases file opened and its header read into the sample's layout,
 * which the scorer is bound to and the chunk builder set up for. */
static int
read_header(struct add_run *a)
{
	struct add_state *st = &a->st;
	struct rba_detail *d = a->d;
	const struct csv_field *f;
	size_t nf;
	int err, rc;

	if ((err = a->spool >= 0 ? csv_reader_open_fd(a->spool, a->rq->path, &a->r)
				 : csv_reader_open(a->rq->path, NULL, &a->r, d)) != 0)
		return err;
	csv_reader_set_tap(a->r, source_tap, st);
	rc = csv_reader_next(a->r, &f, &nf, d);
	if (rc <= 0)
		return rc < 0 ? rc : rba_fail(d, RBA_E_SCHEMA, csv_reader_name(a->r),
					      1, 0, "no header");
	if ((err = header_check(f, nf, csv_reader_name(a->r), d)) != 0 ||
	    (err = layout_from_header(st, f, nf, a->pins, csv_reader_name(a->r),
				      d)) != 0)
		return err;
	st->layout.artifact = a->v.artifact;
	if ((err = sample_scorer_bind(st->sc, &st->layout, d)) != 0) {
		if (d != NULL) {
			snprintf(d->file, sizeof(d->file), "%s", csv_reader_name(a->r));
			d->line = 1;
		}
		return err;
	}
	if ((err = builder_setup(st, csv_reader_name(a->r))) != 0)
		return err;
	sample_layout_format(&st->layout, &a->lt);
	return rba_buf_status(&a->lt);
}

/* Every case after the header scored, decided and stored, chunk by
 * chunk; at least one. */
static int
read_cases(struct add_run *a)
{
	const struct csv_field *f;
	uint64_t rowno = 0;
	size_t nf;
	int err, rc;

	while ((rc = csv_reader_next(a->r, &f, &nf, a->d)) == 1) {
		if ((err = add_row(&a->st, f, nf, csv_reader_line(a->r), ++rowno,
				   a->d)) != 0)
			return err;
	}
	if (rc < 0)
		return rc;
	if ((err = flush_chunk(&a->st, a->d)) != 0)
		return err;
	if (a->st.cases == 0)
		return rba_fail(a->d, RBA_E_SCHEMA, csv_reader_name(a->r), 1, 0,
				"no cases after the header");
	return 0;
}

/* The sample's last step: the policy given for it kept, the layout
 * sealed with the source digest, the sample record written, committed. */
static int
commit_sample(struct add_run *a)
{
	struct rba_detail *d = a->d;
	int err;

	/* A policy given for the sample is kept, so that it can judge the
	 * sample after the version moves to a looser one (the version's
	 * own is in its record, and policy set keeps it when it goes); in
	 * the last step, with the sample record. */
	if (!a->from_version && (err = declared_policy_keep(a->txn, a->pol, d)) != 0)
		return err;
	if ((err = layout_seal_source(&a->st, &a->lt, d)) != 0 ||
	    (err = store_sample_finish(a->st.w, &a->out->digest, d)) != 0)
		return err;
	store_sample_writer_free(a->st.w);
	a->st.w = NULL;
	err = store_txn_commit(a->txn, d);
	a->txn = NULL;
	return err;
}

/* After the commit: what the sample holds, into the result. */
static void
fill_result(struct add_run *a)
{
	struct sample_add_result *out = a->out;
	struct add_state *st = &a->st;
	struct store_txn *rt;
	struct store_sample_info info;

	/* The sample it replaced, when too big to go in the last step; a
	 * failure leaves it marked dead, for store check to count and the
	 * next sample add to clear. */
	(void)store_sample_clear(a->s, a->rq->version, &a->cleared, NULL);
	out->cases = st->cases;
	out->source_digest = st->layout.source_digest;
	out->source_bytes = st->source_bytes;
	out->policy_digest = a->pol->digest;
	out->policy_from_version = a->from_version;
	out->artifact = a->v.artifact;
	out->ndecisions = st->ncounts;
	out->decisions = st->cnames;
	out->decision_counts = st->ccounts;
	st->cnames = NULL;
	st->ccounts = NULL;
	if (store_txn_begin(a->s, 0, 0, &rt, NULL) == 0) {
		if (store_sample_info(rt, a->rq->version, &info, NULL) == 0) {
			out->chunks = info.chunks;
			out->size = info.size;
			out->stored_size = info.stored_size;
			store_sample_info_release(&info);
		}
		store_txn_abort(rt);
	}
}

/* The steps of sample add in order; the first that fails ends it. */
static int
add_steps(struct add_run *a)
{
	int err;

	if ((err = open_input(a)) != 0)
		return err;
	/* What an unfinished or replaced sample left goes first, so that
	 * the generation this one is written to is free. */
	if ((err = store_sample_clear(a->s, NULL, &a->cleared, a->d)) != 0 ||
	    (err = store_txn_begin(a->s, 1, a->hint, &a->txn, a->d)) != 0 ||
	    (err = open_model(a)) != 0 || (err = read_header(a)) != 0)
		return err;
	if ((err = store_sample_begin(a->txn, a->rq->version, rba_buf_cstr(&a->lt),
				      &a->pol->digest, &a->st.w, a->d)) != 0)
		return err;
	a->begun = 1;
	if ((err = read_cases(a)) != 0 || (err = commit_sample(a)) != 0)
		return err;
	fill_result(a);
	return 0;
}

int
sample_add(struct store *s, const struct sample_add_request *rq,
	   struct sample_add_result *out, struct rba_detail *d)
{
	struct add_run a;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&a, 0, sizeof(a));
	a.s = s;
	a.rq = rq;
	a.out = out;
	a.d = d;
	a.spool = -1;
	rba_buf_init(&a.lt);
	a.st.rq = rq;
	a.st.res = out;
	a.st.layout.id_col = a.st.layout.score_col = a.st.layout.decision_col = -1;
	err = add_steps(&a);
	store_sample_writer_free(a.st.w);
	store_txn_abort(a.txn);
	/* The steps already committed of this sample (marked dead): the
	 * store is left as it was. */
	if (err != 0 && a.begun)
		(void)store_sample_clear(s, rq->version, &a.cleared, NULL);
	csv_reader_free(a.r);
	if (a.spool >= 0)
		close(a.spool);
	sample_scorer_free(a.st.sc);
	builder_release(&a.st.b);
	sample_layout_release(&a.st.layout);
	rba_strv_free(a.st.cnames, a.st.ncounts);
	free(a.st.ccounts);
	artifact_release(&a.art);
	free(a.abytes);
	free(a.snap);
	policy_pins_free(a.pins);
	policy_free(a.pol);
	store_version_release(&a.v);
	rba_buf_release(&a.lt);
	return err;
}
