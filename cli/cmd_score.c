/*
 * cmd_score.c - score: score cases with an artifact file.
 *
 * The cases file is streamed: SCORE_ROWS cases are encoded, scored and
 * formatted at a time, so memory does not grow with the file.  The
 * report is still all or nothing: every rule of a whole-file read
 * (csv.h: ragged rows, nan/inf, an empty field in a numeric column) is
 * checked to the last line before a byte goes to stdout, and a case the
 * model cannot take anywhere in the file leaves stdout empty with exit
 * 2, as when the file was read whole first.  Until then the report waits
 * in a spool: in memory up to SPOOL_MEM bytes, then in an unlinked
 * temporary file in $TMPDIR.
 *
 * The diagnostics are those of the whole-file read, in its order: an
 * error of the file's form anywhere wins over a column the model needs
 * and does not find (--id-column included), which wins over the first
 * case that cannot be encoded.  So the latter two are kept aside
 * (struct pending) while the rest of the file is checked.
 *
 * With two threads (the default; --threads 1 keeps one) a helper scores
 * and formats each full block while this thread reads, checks and
 * encodes the next one (struct pipe: two blocks, one in each hand).
 * The report is the same bytes: the helper takes the blocks one at a
 * time, in order.  So are the diagnostics: a block the helper failed on
 * came before anything this thread met after handing it over, so its
 * error is the one reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/numfmt.h"
#include "policy/policy.h"
#include "model/artifact.h"
#include "data/csv.h"
#include "data/csv_write.h"
#include "data/encode.h"
#include "rebuild/rebuild.h"
#include "model/xgboost.h"

#define SCORE_ROWS 4096		/* cases encoded and scored at a time */
#define SPOOL_MEM (8u << 20)	/* report bytes held in memory */
#define SPOOL_IO (1u << 20)	/* bytes per copy from the spool file */

/* ---- the spool: the report, held back until it is complete ---- */

struct spool {
	struct rba_buf mem;
	int fd; /* -1 until the report outgrows SPOOL_MEM */
};

static void
spool_init(struct spool *sp)
{
	rba_buf_init(&sp->mem);
	sp->fd = -1;
}

static void
spool_release(struct spool *sp)
{
	rba_buf_release(&sp->mem);
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Adds b to the report and empties b.  0 or an errno (d says what). */
static int
spool_add(struct spool *sp, struct rba_buf *b, struct rba_detail *d)
{
	int e;

	if (rba_buf_status(b) != 0)
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s", "out of memory");
	if (sp->fd < 0 && sp->mem.len + b->len <= SPOOL_MEM) {
		rba_buf_put(&sp->mem, b->p, b->len);
		b->len = 0;
		if (rba_buf_status(&sp->mem) != 0)
			return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s",
					"out of memory");
		return 0;
	}
	if (sp->fd < 0) {
		if ((e = rba_tmpfile("score", &sp->fd, d)) != 0)
			return e;
		if ((e = write_all(sp->fd, sp->mem.p, sp->mem.len)) != 0)
			goto fail;
		rba_buf_release(&sp->mem);
		rba_buf_init(&sp->mem);
	}
	if ((e = write_all(sp->fd, b->p, b->len)) != 0)
		goto fail;
	b->len = 0;
	return 0;
fail:
	return rba_fail(d, e, NULL, 0, 0, "cannot write a temporary file: %s",
			rba_strerror(e));
}

/* Copies the report to stdout.  0 or an errno (d says what). */
static int
spool_print(struct spool *sp, struct rba_detail *d)
{
	uint8_t *p;
	ssize_t n;
	int e = 0;

	if (sp->fd < 0) {
		fwrite(sp->mem.p, 1, sp->mem.len, stdout);
		return 0;
	}
	if (lseek(sp->fd, 0, SEEK_SET) < 0 || (p = malloc(SPOOL_IO)) == NULL) {
		e = errno ? errno : RBA_E_NOMEM;
		return rba_fail(d, e, NULL, 0, 0,
				"cannot read a temporary file: %s", rba_strerror(e));
	}
	while ((n = read(sp->fd, p, SPOOL_IO)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			rba_fail(d, e, NULL, 0, 0, "cannot read a temporary file: %s",
				 rba_strerror(e));
			break;
		}
		fwrite(p, 1, (size_t)n, stdout);
	}
	free(p);
	return e;
}

/* ---- one block of cases ---- */

struct block {
	size_t n;
	float *x;	     /* SCORE_ROWS x nfeatures raw inputs */
	float *probs;	     /* SCORE_ROWS x nclasses (--margin: groups) */
	size_t *id_off;	     /* SCORE_ROWS offsets into ids */
	struct rba_buf ids;  /* NUL-terminated ids */
	struct encode_plan *plan; /* the spec, ready for fields in place */
	struct rba_buf text; /* the block's report lines */
};

/* The first error that must wait until the whole file is checked. */
struct pending {
	int err; /* 0: none */
	struct rba_detail d;
};

static void
pend(struct pending *p, int err, const struct rba_detail *d)
{
	if (p->err == 0) {
		p->err = err;
		p->d = *d;
	}
}

/* Text without its NUL (rba_buf_put_str prefixes a length). */
static void
put_text(struct rba_buf *b, const char *s)
{
	rba_buf_put(b, s, strlen(s));
}

/*
 * A CSV line: the id (quoted when it needs it), the k numbers v[at..],
 * and when dec, a comma and the decision text (NULL: empty).  Written in
 * place in b: one reservation a line.
 */
static void
put_csv_row(struct rba_buf *b, const char *id, const float *v, uint32_t k,
	    uint32_t at, int dec, const char *decision)
{
	size_t idn = strlen(id), dn = decision ? strlen(decision) : 0;
	uint8_t *o;

	if (rba_buf_reserve(b, CSV_CELL_MAX(idn) + 2 + CSV_CELL_MAX(dn) +
			       (size_t)k * RBA_FMT_G_MAX) != 0)
		return;
	o = b->p + b->len;
	o += csv_cell_put((char *)o, id, idn);
	for (uint32_t c = 0; c < k; c++) {
		*o++ = ',';
		o += rba_fmt_g((double)v[at + c], 9, (char *)o);
	}
	if (dec) {
		*o++ = ',';
		o += csv_cell_put((char *)o, decision ? decision : "", dn);
	}
	*o++ = '\n';
	b->len = (size_t)(o - b->p);
}

/* --margin: the model's margins, one per group ("margin" when one). */
static void
put_margin_row(struct rba_buf *b, int json, const struct artifact *a,
	       const char *id, const float *m, int first)
{
	uint32_t K = a->model.forest.ngroups;

	if (json) {
		struct rba_json_w w;
		cli_json_w_sep(&w, b, first ? "\n    " : ",\n    ");
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "id", id);
		if (K == 1) {
			rba_json_w_num(&w, "margin", (double)m[0]);
		} else {
			rba_json_w_open(&w, "margins", '{');
			for (uint32_t c = 0; c < K; c++)
				rba_json_w_num(&w, a->spec.classes[c], (double)m[c]);
			rba_json_w_close(&w, '}');
		}
		rba_json_w_close(&w, '}');
		return;
	}
	put_csv_row(b, id, m, K, 0, 0, NULL);
}

static void
put_score_row(struct rba_buf *b, int json, const struct artifact *a,
	      const struct policy *pol, const char *id, const float *probs,
	      int first)
{
	const struct encode_spec *s = &a->spec;
	const char *decision = NULL;
	double dp[REBUILD_MAX_CLASSES];

	if (pol != NULL && pol->argmax) {
		for (uint32_t c = 0; c < s->nclasses; c++)
			dp[c] = probs[c];
		size_t k = policy_decide_argmax(pol, dp, s->nclasses, NULL);
		decision = k < s->nclasses ? s->classes[k] : NULL;
	} else if (pol != NULL) {
		decision = policy_decide(pol, probs[s->positive], NULL);
	}
	if (json) {
		struct rba_json_w w;
		cli_json_w_sep(&w, b, first ? "\n    " : ",\n    ");
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "id", id);
		if (s->positive != ENCODE_NO_POSITIVE)
			rba_json_w_num(&w, "score", (double)probs[s->positive]);
		rba_json_w_open(&w, "probabilities", '{');
		for (uint32_t c = 0; c < s->nclasses; c++)
			rba_json_w_num(&w, s->classes[c], (double)probs[c]);
		rba_json_w_close(&w, '}');
		if (pol != NULL)
			rba_json_w_str(&w, "decision", decision);
		rba_json_w_close(&w, '}');
		return;
	}
	put_csv_row(b, id, probs, s->positive != ENCODE_NO_POSITIVE ? 1 : s->nclasses,
		    s->positive != ENCODE_NO_POSITIVE ? s->positive : 0,
		    pol != NULL, decision);
}

static int
block_init(struct block *bk, const struct encode_spec *s)
{
	memset(bk, 0, sizeof(*bk));
	rba_buf_init(&bk->ids);
	rba_buf_init(&bk->text);
	bk->x = malloc((size_t)SCORE_ROWS * s->nfeatures * sizeof(float) + 1);
	bk->probs = malloc((size_t)SCORE_ROWS * s->nclasses * sizeof(float) + 1);
	bk->id_off = malloc(SCORE_ROWS * sizeof(*bk->id_off));
	if (encode_plan_new(s, &bk->plan) != 0)
		return RBA_E_NOMEM;
	return bk->x && bk->probs && bk->id_off ? 0 : RBA_E_NOMEM;
}

static void
block_release(struct block *bk)
{
	free(bk->x);
	free(bk->probs);
	free(bk->id_off);
	encode_plan_free(bk->plan);
	rba_buf_release(&bk->ids);
	rba_buf_release(&bk->text);
}

/* Scores the block's cases and adds their lines to the report. */
static int
block_flush(struct block *bk, int json, int margin, const struct artifact *a,
	    const struct policy *pol, uint64_t done, struct spool *sp,
	    struct rba_detail *d)
{
	int err;

	if (bk->n == 0)
		return 0;
	err = margin ? xgboost_margins(a, bk->x, bk->n, bk->probs)
		     : artifact_score(a, bk->x, bk->n, bk->probs);
	if (err != 0)
		return rba_fail(d, err, NULL, 0, 0, "%s", rba_strerror(err));
	if (rba_buf_status(&bk->ids) != 0)
		return rba_fail(d, RBA_E_NOMEM, NULL, 0, 0, "%s", "out of memory");
	for (size_t i = 0; i < bk->n; i++) {
		const char *id = (const char *)bk->ids.p + bk->id_off[i];
		if (margin)
			put_margin_row(&bk->text, json, a, id,
				       bk->probs + i * a->model.forest.ngroups,
				       done == 0 && i == 0);
		else
			put_score_row(&bk->text, json, a, pol, id,
				      bk->probs + i * a->spec.nclasses,
				      done == 0 && i == 0);
	}
	bk->n = 0;
	bk->ids.len = 0;
	return spool_add(sp, &bk->text, d);
}

/* ---- the helper that flushes blocks (two threads) ---- */

struct pipe {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started;
	/* under mu: the block handed over (NULL: none), quit */
	struct block *job;
	uint64_t done;
	int quit;
	/* what block_flush needs, fixed */
	int json, margin;
	const struct artifact *a;
	const struct policy *pol;
	struct spool *sp;
	/* the first block_flush error (under mu), and its detail */
	int err;
	struct rba_detail d;
};

static void *
pipe_main(void *arg)
{
	struct pipe *pp = arg;

	pthread_mutex_lock(&pp->mu);
	for (;;) {
		struct block *bk;
		struct rba_detail d;
		int err;
		while (pp->job == NULL && !pp->quit)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (pp->job == NULL)
			break;
		bk = pp->job;
		pthread_mutex_unlock(&pp->mu);
		/* (no block is handed over once one has failed) */
		rba_detail_clear(&d);
		err = block_flush(bk, pp->json, pp->margin, pp->a, pp->pol,
				  pp->done, pp->sp, &d);
		pthread_mutex_lock(&pp->mu);
		if (err != 0 && pp->err == 0) {
			pp->err = err;
			pp->d = d;
		}
		pp->job = NULL;
		pthread_cond_broadcast(&pp->cv);
	}
	pthread_mutex_unlock(&pp->mu);
	return NULL;
}

/* Starts the helper; 0, or -1 (no thread: the caller flushes itself). */
static int
pipe_start(struct pipe *pp)
{
	if (pthread_mutex_init(&pp->mu, NULL) != 0)
		return -1;
	if (pthread_cond_init(&pp->cv, NULL) != 0) {
		pthread_mutex_destroy(&pp->mu);
		return -1;
	}
	if (pthread_create(&pp->th, NULL, pipe_main, pp) != 0) {
		pthread_cond_destroy(&pp->cv);
		pthread_mutex_destroy(&pp->mu);
		return -1;
	}
	pp->started = 1;
	return 0;
}

/* Under pp->mu: waits until the helper holds no block; its error (0:
 * none), d set. */
static int
pipe_idle(struct pipe *pp, struct rba_detail *d)
{
	while (pp->job != NULL)
		pthread_cond_wait(&pp->cv, &pp->mu);
	if (pp->err != 0)
		*d = pp->d;
	return pp->err;
}

/* Waits until the helper holds no block: its error (0: none), d set. */
static int
pipe_wait(struct pipe *pp, struct rba_detail *d)
{
	int err;

	pthread_mutex_lock(&pp->mu);
	err = pipe_idle(pp, d);
	pthread_mutex_unlock(&pp->mu);
	return err;
}

/* Hands block bk (rows after done) to the helper, once it holds none:
 * 0, or the error it met on the one before (bk is then not taken). */
static int
pipe_hand(struct pipe *pp, struct block *bk, uint64_t done,
	  struct rba_detail *d)
{
	int err;

	pthread_mutex_lock(&pp->mu);
	if ((err = pipe_idle(pp, d)) == 0) {
		pp->job = bk;
		pp->done = done;
		pthread_cond_broadcast(&pp->cv);
	}
	pthread_mutex_unlock(&pp->mu);
	return err;
}

static void
pipe_stop(struct pipe *pp)
{
	if (!pp->started)
		return;
	pthread_mutex_lock(&pp->mu);
	pp->quit = 1;
	pthread_cond_broadcast(&pp->cv);
	pthread_mutex_unlock(&pp->mu);
	pthread_join(pp->th, NULL);
	pthread_cond_destroy(&pp->cv);
	pthread_mutex_destroy(&pp->mu);
	pp->started = 0;
}

/*
 * Encodes one case into the block: the spec's columns (found at src[])
 * and its id (column idc, or the row number).  The checker gave the
 * record and the numbers it parsed on the way.
 */
static int
block_add(struct block *bk, const struct encode_spec *s, const size_t *src,
	  long idc, const struct csv_checker *ck, const struct csv_field *f,
	  uint64_t rowno, const char *file, unsigned long line,
	  struct rba_detail *d)
{
	char rowid[32];
	const uint8_t *has;
	const double *num = csv_checker_numbers(ck, &has);
	int err;

	/* The fields where the reader left them.  As the whole-file path
	 * locates them: the line, no column; a value the standardization
	 * cannot take at its column too. */
	if ((err = encode_fields_at(bk->plan, f, src, num, has, file, line,
				    bk->x + bk->n * s->nfeatures, d)) != 0)
		return err; /* RBA_E_SCHEMA: the model cannot take the case */
	bk->id_off[bk->n] = bk->ids.len;
	if (idc >= 0) {
		rba_buf_put(&bk->ids, f[idc].p, f[idc].n);
	} else {
		snprintf(rowid, sizeof(rowid), "%llu", (unsigned long long)rowno);
		put_text(&bk->ids, rowid);
	}
	rba_buf_put_u8(&bk->ids, 0);
	bk->n++;
	return 0;
}

/* ---- the command, in steps ---- */

struct score_job {
	const char *art_path, *cases_path, *pol_path, *id_col, *pins_path;
	struct pins *pins; /* --pins: the id column is its data.id */
	int id_from_pins;
	int margin; /* --margin */
	unsigned threads; /* --threads: 1, or 2 (a helper flushes) */
	struct artifact a;
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	struct policy *pol;
	struct csv_reader *rd;
	struct csv_checker *ck;
	struct csv_missing miss; /* the model's missing tokens (borrowed) */
	size_t *src; /* the cases' column of each input column */
	long idc;    /* the id column, or -1 */
	struct pending pd;
	struct block bk[2]; /* with two threads, one in each hand */
	struct pipe pp;
	struct spool sp;
	struct rba_buf head;
	struct rba_json_w jw; /* --json: the document, "cases" open after the
			       * head until cmd_score closes it */
};

/* argv into the job; 0, or the usage status. */
static int
score_args(struct cli_ctx *ctx, int argc, char **argv, struct score_job *j)
{
	const char *v;
	int r;

	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--policy", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--policy needs a file");
			j->pol_path = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--id-column", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--id-column needs a name");
			j->id_col = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--pins", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--pins needs a file");
			j->pins_path = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--threads", &v)) != 0) {
			if (r < 0 || (strcmp(v, "1") != 0 && strcmp(v, "2") != 0))
				return cli_usage(ctx, "--threads takes 1 or 2");
			j->threads = (unsigned)(v[0] - '0');
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (strcmp(argv[i], "--margin") == 0) {
			j->margin = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (j->art_path == NULL) {
			j->art_path = argv[i];
		} else if (j->cases_path == NULL) {
			j->cases_path = argv[i];
		} else {
			return cli_usage(ctx, "too many arguments");
		}
	}
	if (j->art_path == NULL || j->cases_path == NULL)
		return cli_usage(ctx, "needs an artifact and a cases file");
	if (j->margin && j->pol_path != NULL)
		return cli_usage(ctx, "--margin prints margins, not decisions: "
				      "no --policy with it");
	return 0;
}

/* The artifact and the policy; 0, or 2 after a diagnostic. */
static int
score_load(struct score_job *j)
{
	struct rba_digest dg;
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	/* ours, or an XGBoost JSON model (model/xgboost.h) */
	if ((err = xgboost_artifact_load(j->art_path, &j->a, &dg, &d)) != 0)
		return cli_fail("cannot load artifact", j->art_path, err, &d);
	rba_digest_format(&dg, j->hex);
	if (j->margin && !xgboost_artifact_is(&j->a)) {
		rba_fail(&d, RBA_E_UNSUPPORTED, NULL, 0, 0, "%s",
			 "--margin is for XGBoost models (this artifact is "
			 "our own; score prints its probabilities)");
		return cli_fail("cannot score", j->art_path, RBA_E_UNSUPPORTED, &d);
	}
	if (j->pins_path != NULL) {
		/* The case ids as sample add takes them: the pins' id column. */
		rba_detail_clear(&d);
		if ((err = policy_pins_load(j->pins_path, &j->pins, &d)) != 0)
			return cli_fail("invalid pins", j->pins_path, err, &d);
		if (j->id_col == NULL && j->pins->data.id == NULL) {
			rba_detail_key(&d, "data.id");
			rba_fail(&d, RBA_E_SCHEMA, j->pins_path, 0, 0,
				 "the pins name no id column (data.id); give "
				 "--id-column");
			return cli_fail("cannot score", j->pins_path, RBA_E_SCHEMA,
					&d);
		}
		if (j->id_col == NULL) {
			j->id_col = j->pins->data.id;
			j->id_from_pins = 1;
		}
	}
	if (j->pol_path == NULL)
		return 0;
	rba_detail_clear(&d);
	if ((err = policy_load(j->pol_path, &j->pol, &d)) != 0)
		return cli_fail("invalid policy", j->pol_path, err, &d);
	if (!j->pol->argmax && j->a.spec.positive == ENCODE_NO_POSITIVE) {
		rba_fail(&d, RBA_E_SCHEMA, NULL, 0, 0,
			 "decision bands need a model with a positive "
			 "class; this one has none (use decision: "
			 "{rule: argmax})");
		return cli_fail("cannot score", j->pol_path, RBA_E_SCHEMA, &d);
	}
	return 0;
}

/*
 * Opens the cases and finds each input column and the id column by name
 * (the first of a name, as csv_table_col); a missing one is kept aside
 * in j->pd.  0, or 2 after a diagnostic.
 */
static int
score_columns(struct score_job *j)
{
	const struct artifact *a = &j->a;
	struct rba_detail d;
	size_t nf;
	int err;

	rba_detail_clear(&d);
	if ((err = csv_reader_open(j->cases_path, NULL, &j->rd, &d)) != 0 ||
	    (err = csv_checker_start(j->rd, &j->ck, &d)) != 0)
		return cli_fail("cannot read cases", j->cases_path, err, &d);
	j->miss = encode_missing(&a->spec);
	csv_checker_set_missing(j->ck, &j->miss);
	nf = csv_checker_ncols(j->ck);
	if (block_init(&j->bk[0], &a->spec) != 0 ||
	    block_init(&j->bk[1], &a->spec) != 0 ||
	    (j->src = malloc((a->spec.ncolumns ? a->spec.ncolumns : 1) *
			     sizeof(*j->src))) == NULL)
		return cli_fail("cannot score", j->cases_path, RBA_E_NOMEM, NULL);
	for (size_t i = nf; i-- > 0;)
		if (strcmp(csv_checker_name(j->ck, i), j->id_col ? j->id_col : "id") == 0)
			j->idc = (long)i;
	if (j->id_col != NULL && j->idc < 0) {
		rba_detail_clear(&d);
		rba_fail(&d, RBA_E_SCHEMA, NULL, 0, 0,
			 "no column '%s' for %s", j->id_col,
			 j->id_from_pins ? "the pins' data.id" : "--id-column");
		pend(&j->pd, RBA_E_SCHEMA, &d);
	}
	for (uint32_t c = 0; c < a->spec.ncolumns && j->pd.err == 0; c++) {
		const char *name = a->spec.columns[c].name;
		size_t i = 0;
		while (i < nf && strcmp(csv_checker_name(j->ck, i), name) != 0)
			i++;
		if (i == nf) {
			rba_detail_clear(&d);
			rba_detail_key(&d, name);
			rba_fail(&d, RBA_E_SCHEMA, csv_reader_name(j->rd), 1, 0,
				 "the cases lack input column '%s'", name);
			pend(&j->pd, RBA_E_SCHEMA, &d);
		}
		j->src[c] = i;
	}
	return 0;
}

/* ",PREFIXCLASS" as one CSV cell. */
static void
put_class_cell(struct rba_buf *head, const char *prefix, const char *cls)
{
	struct rba_buf name;

	rba_buf_init(&name);
	put_text(&name, prefix);
	put_text(&name, cls);
	rba_buf_put_u8(head, ',');
	if (rba_buf_status(&name) == 0)
		csv_cell_buf(head, (const char *)name.p, name.len);
	else
		head->oom = 1; /* as a failed append of head would */
	rba_buf_release(&name);
}

/* The report's head into j->head. */
static void
score_head(struct score_job *j, int json, struct rba_buf *head)
{
	const struct artifact *a = &j->a;
	const char *idname;

	if (json) {
		/* the rows follow, one a line (put_score_row) */
		rba_json_w_init(&j->jw, head);
		rba_json_w_open(&j->jw, NULL, '{');
		rba_json_w_str(&j->jw, "artifact", j->hex);
		rba_json_w_open(&j->jw, "cases", '[');
		return;
	}
	idname = j->idc >= 0 ? csv_checker_name(j->ck, (size_t)j->idc) : "row";
	csv_cell_buf(head, idname, strlen(idname));
	if (j->margin && a->model.forest.ngroups == 1)
		put_text(head, ",margin");
	else if (j->margin)
		for (uint32_t c = 0; c < a->model.forest.ngroups; c++)
			put_class_cell(head, "m_", a->spec.classes[c]);
	else if (a->spec.positive != ENCODE_NO_POSITIVE)
		put_text(head, ",score");
	else
		for (uint32_t c = 0; c < a->spec.nclasses; c++)
			put_class_cell(head, "p_", a->spec.classes[c]);
	if (j->pol != NULL)
		put_text(head, ",decision");
	rba_buf_put_u8(head, '\n');
}

/*
 * The diagnostic of an error this thread met (what, err, d), or of the
 * helper's, which came first when it met one: 2.
 */
static int
score_fail(struct score_job *j, const char *what, int err,
	   const struct rba_detail *d)
{
	struct rba_detail pd;
	int perr;

	if (j->pp.started && (perr = pipe_wait(&j->pp, &pd)) != 0)
		return cli_fail("cannot score", j->cases_path, perr, &pd);
	return cli_fail(what, j->cases_path, err, d);
}

/*
 * Full block *bk (the rows after done) scored into the spool: by the
 * helper, which then holds it (*bk becomes the other block, which it
 * is done with), or here.  0 or an error (d says what).
 */
static int
score_block(struct score_job *j, struct block **bk, int json, uint64_t done,
	    struct rba_detail *d)
{
	int err;

	if (!j->pp.started && j->threads > 1) {
		j->pp.json = json;
		j->pp.margin = j->margin;
		j->pp.a = &j->a;
		j->pp.pol = j->pol;
		j->pp.sp = &j->sp;
		if (pipe_start(&j->pp) != 0)
			j->threads = 1; /* no thread: flushed here */
	}
	if (!j->pp.started)
		return block_flush(*bk, json, j->margin, &j->a, j->pol, done,
				   &j->sp, d);
	if ((err = pipe_hand(&j->pp, *bk, done, d)) != 0)
		return err;
	*bk = &j->bk[*bk == &j->bk[0]];
	return 0;
}

/*
 * Every case, SCORE_ROWS at a time, into the spool; once a case has
 * failed the rest of the file is only checked.  0, or 2 after a
 * diagnostic.
 */
static int
score_rows(struct score_job *j, int json)
{
	const struct csv_field *f;
	struct rba_detail d;
	struct block *bk = &j->bk[0];
	uint64_t rowno = 0;
	size_t n;
	int rc, err;

	rba_detail_clear(&d);
	while ((rc = csv_checker_next(j->ck, &f, &n, &d)) == 1) {
		if (j->pd.err != 0)
			continue;
		rowno++;
		err = block_add(bk, &j->a.spec, j->src, j->idc, j->ck, f,
				rowno, csv_reader_name(j->rd),
				csv_reader_line(j->rd), &d);
		if (err == 0 && bk->n == SCORE_ROWS)
			err = score_block(j, &bk, json, rowno - SCORE_ROWS, &d);
		if (err == RBA_E_SCHEMA) {
			pend(&j->pd, err, &d);
			rba_detail_clear(&d);
		} else if (err != 0) {
			return score_fail(j, "cannot score", err, &d);
		}
	}
	if (rc < 0)
		return score_fail(j, "cannot read cases", rc, &d);
	if (j->pd.err != 0)
		return score_fail(j, "cannot score", j->pd.err, &j->pd.d);
	/* the last block, after the helper's */
	if (j->pp.started && (err = pipe_wait(&j->pp, &d)) != 0)
		return cli_fail("cannot score", j->cases_path, err, &d);
	err = block_flush(bk, json, j->margin, &j->a, j->pol, rowno - bk->n,
			  &j->sp, &d);
	if (err != 0)
		return cli_fail("cannot score", j->cases_path, err, &d);
	return 0;
}

int
cmd_score(struct cli_ctx *ctx, int argc, char **argv)
{
	struct score_job j;
	struct rba_detail d;
	int err, status;

	memset(&j, 0, sizeof(j));
	j.idc = -1;
	j.threads = 2;
	spool_init(&j.sp);
	rba_buf_init(&j.head);
	if ((status = score_args(ctx, argc, argv, &j)) != 0)
		return status;
	if ((status = score_load(&j)) != 0 || (status = score_columns(&j)) != 0)
		goto done;
	score_head(&j, ctx->json, &j.head);
	rba_detail_clear(&d);
	if ((err = spool_add(&j.sp, &j.head, &d)) != 0) {
		status = cli_fail("cannot score", j.cases_path, err, &d);
		goto done;
	}
	if ((status = score_rows(&j, ctx->json)) != 0)
		goto done;
	if (ctx->json) {
		put_text(&j.head, "\n  ");
		rba_json_w_close(&j.jw, ']');
		rba_json_w_close(&j.jw, '}');
		put_text(&j.head, "\n");
	}
	if ((err = spool_add(&j.sp, &j.head, &d)) != 0 ||
	    (err = spool_print(&j.sp, &d)) != 0)
		status = cli_fail("cannot score", j.cases_path, err, &d);
done:
	pipe_stop(&j.pp);
	free(j.src);
	block_release(&j.bk[0]);
	block_release(&j.bk[1]);
	spool_release(&j.sp);
	rba_buf_release(&j.head);
	csv_checker_free(j.ck);
	csv_reader_free(j.rd);
	policy_free(j.pol);
	policy_pins_free(j.pins);
	artifact_release(&j.a);
	return status;
}
