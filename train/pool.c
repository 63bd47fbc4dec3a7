/* pool.c - persistent workers woken once per pool_run(). */
#include "train/pool.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/rba.h"
#include "train/trainer.h"

struct pool_worker {
	struct pool *pool;
	unsigned tid;
	pthread_t thread;
};

struct pool {
	unsigned threads;
	pthread_mutex_t mu;
	pthread_cond_t wake, done;
	unsigned long generation; /* bumped by each pool_run */
	unsigned pending;	  /* workers still running this generation */
	int stop;
	pool_fn fn;
	void *ctx;
	struct pool_worker *workers; /* threads - 1 */
	unsigned started;
};

static void *
worker_main(void *arg)
{
	struct pool_worker *w = arg;
	struct pool *p = w->pool;
	unsigned long seen = 0;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->generation == seen)
			pthread_cond_wait(&p->wake, &p->mu);
		if (p->stop)
			break;
		seen = p->generation;
		pthread_mutex_unlock(&p->mu);
		p->fn(p->ctx, w->tid, p->threads);
		pthread_mutex_lock(&p->mu);
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
pool_new(unsigned threads, struct pool **out)
{
	struct pool *p;
	int err;

	*out = NULL;
	if (threads < 1 || threads > REBUILD_MAX_THREADS)
		return RBA_E_RANGE;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return RBA_E_NOMEM;
	p->threads = threads;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->done, NULL);
	if (threads > 1) {
		p->workers = calloc(threads - 1, sizeof(*p->workers));
		if (p->workers == NULL) {
			pool_free(p);
			return RBA_E_NOMEM;
		}
	}
	for (unsigned i = 0; i + 1 < threads; i++) {
		p->workers[i].pool = p;
		p->workers[i].tid = i + 1;
		err = pthread_create(&p->workers[i].thread, NULL, worker_main,
				     &p->workers[i]);
		if (err != 0) {
			pool_free(p);
			return err;
		}
		p->started++;
	}
	*out = p;
	return 0;
}

unsigned
pool_threads(const struct pool *p)
{
	return p->threads;
}

void
pool_run(struct pool *p, pool_fn fn, void *ctx)
{
	if (p->threads == 1) {
		fn(ctx, 0, 1);
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->pending = p->threads - 1;
	p->generation++;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	fn(ctx, 0, p->threads);
	pthread_mutex_lock(&p->mu);
	while (p->pending > 0)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void
pool_free(struct pool *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->started; i++)
		pthread_join(p->workers[i].thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->done);
	free(p->workers);
	free(p);
}
