/*
 * pool.h - a small persistent thread pool for the trainer's blocks.
 *
 * pool_run() calls fn(ctx, tid, nthreads) once on each of nthreads
 * threads (the caller is thread 0) and returns when all have returned.
 * Which thread does which work is up to fn; the trainer hands out blocks
 * by index so results never depend on the thread count.
 */
#ifndef RBA_POOL_H
#define RBA_POOL_H

typedef void (*pool_fn)(void *ctx, unsigned tid, unsigned nthreads);

struct pool;

/*
 * Starts threads - 1 workers (threads 1..REBUILD_MAX_THREADS).  0,
 * RBA_E_RANGE, RBA_E_NOMEM or an errno from pthread_create.
 */
int pool_new(unsigned threads, struct pool **out);
unsigned pool_threads(const struct pool *p);
void pool_run(struct pool *p, pool_fn fn, void *ctx);
/* Stops and joins the workers; NULL allowed. */
void pool_free(struct pool *p);

#endif
