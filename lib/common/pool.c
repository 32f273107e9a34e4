/* SPDX-License-Identifier: MIT */
/* pool.c - the bounded job pool (see pool.h for the contract). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/cpu_features.h"
#include "common/pool.h"

struct job {
	zn_job_fn fn;
	void *arg;
	struct zn_pool_group *g; /* or NULL */
};

struct zn_pool {
	/* Fixed once made. */
	unsigned threads; /* the caller's counted; 1 + how many were started */
	size_t cap;
	struct job *q;
	/* Guarded by mu. */
	pthread_mutex_t mu;
	pthread_cond_t work; /* to the threads: a job was queued, or stop */
	pthread_cond_t room; /* to blocked adders: a job was taken off the queue */
	pthread_cond_t idle; /* to waiters: a job returned */
	size_t head, n;      /* the queue: n jobs from q[head], circular */
	size_t pending;      /* queued and running jobs */
	int stop;
	/* Written by any thread, read by all. */
	atomic_int canceled;
	atomic_int result;
	pthread_t tids[];
};

/* The pool whose job this thread runs, so that a job adding to a full queue helps instead of
 * waiting (see pool.h). */
static _Thread_local const struct zn_pool *running_in;

/* Take the oldest job; mu held, n > 0. */
static struct job pop_job(struct zn_pool *p)
{
	struct job j = p->q[p->head];
	p->head = (p->head + 1) % p->cap;
	p->n--;
	pthread_cond_signal(&p->room);
	return j;
}

/* Run a job taken off the queue, with mu released around it. */
static void run_job(struct zn_pool *p, struct job j)
{
	pthread_mutex_unlock(&p->mu);
	const struct zn_pool *outer = running_in;
	running_in = p;
	j.fn(j.arg);
	running_in = outer;
	pthread_mutex_lock(&p->mu);
	p->pending--;
	if (j.g)
		atomic_fetch_sub(&j.g->left, 1);
	pthread_cond_broadcast(&p->idle); /* to zn_pool_wait and zn_pool_join */
}

static void *pool_main(void *arg)
{
	struct zn_pool *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->n && !p->stop)
			pthread_cond_wait(&p->work, &p->mu);
		if (!p->n)
			break; /* stop, and nothing left */
		run_job(p, pop_job(p));
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

zn_result zn_pool_new(struct zn_pool **out, unsigned threads, size_t queue_cap)
{
	*out = NULL;
	if (threads == 0)
		threads = zn_cpu_count();
	if (threads > ZN_THREADS_MAX)
		threads = ZN_THREADS_MAX;
	struct zn_pool *p = calloc(1, sizeof(*p) + (threads - 1) * sizeof(pthread_t));
	if (!p)
		return ZN_ERR_NOMEM;
	p->cap = queue_cap ? queue_cap : 4 * (size_t)threads;
	p->q = malloc(p->cap * sizeof(*p->q));
	if (!p->q) {
		free(p);
		return ZN_ERR_NOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->room, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->threads = 1;
	for (unsigned t = 1; t < threads; t++) {
		if (pthread_create(&p->tids[t - 1], NULL, pool_main, p))
			break; /* fewer threads: slower, never wrong */
		p->threads++;
	}
	*out = p;
	return ZN_OK;
}

void zn_pool_free(struct zn_pool *p)
{
	if (!p)
		return;
	zn_pool_wait(p);
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (unsigned t = 1; t < p->threads; t++)
		pthread_join(p->tids[t - 1], NULL);
	pthread_cond_destroy(&p->idle);
	pthread_cond_destroy(&p->room);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	free(p->q);
	free(p);
}

unsigned zn_pool_threads(const struct zn_pool *p)
{
	return p->threads;
}

static void add_job(struct zn_pool *p, struct job j, int first)
{
	if (p->threads == 1) {
		j.fn(j.arg);
		return;
	}
	pthread_mutex_lock(&p->mu);
	while (p->n == p->cap) {
		if (running_in == p)
			run_job(p, pop_job(p));
		else
			pthread_cond_wait(&p->room, &p->mu);
	}
	if (j.g)
		atomic_fetch_add(&j.g->left, 1);
	if (first) {
		p->head = (p->head + p->cap - 1) % p->cap;
		p->q[p->head] = j;
	} else {
		p->q[(p->head + p->n) % p->cap] = j;
	}
	p->n++;
	p->pending++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
}

void zn_pool_add(struct zn_pool *p, zn_job_fn fn, void *arg)
{
	add_job(p, (struct job){fn, arg, NULL}, 0);
}

void zn_pool_add_first(struct zn_pool *p, zn_job_fn fn, void *arg)
{
	add_job(p, (struct job){fn, arg, NULL}, 1);
}

void zn_pool_add_to(struct zn_pool *p, struct zn_pool_group *g, zn_job_fn fn, void *arg)
{
	add_job(p, (struct job){fn, arg, g}, 0);
}

/* Until done(ctx) holds (checked under mu), running queued jobs meanwhile. */
static void help_until(struct zn_pool *p, int (*done)(const struct zn_pool *, const void *),
                       const void *ctx)
{
	pthread_mutex_lock(&p->mu);
	while (!done(p, ctx)) {
		if (p->n)
			run_job(p, pop_job(p));
		else
			pthread_cond_wait(&p->idle, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
}

static int all_returned(const struct zn_pool *p, const void *ctx)
{
	(void)ctx;
	return p->pending == 0;
}

void zn_pool_wait(struct zn_pool *p)
{
	if (p->threads > 1)
		help_until(p, all_returned, NULL);
}

static int group_returned(const struct zn_pool *p, const void *ctx)
{
	(void)p;
	return atomic_load(&((const struct zn_pool_group *)ctx)->left) == 0;
}

void zn_pool_join(struct zn_pool *p, struct zn_pool_group *g)
{
	if (atomic_load(&g->left))
		help_until(p, group_returned, g);
}

struct part {
	zn_part_fn fn;
	void *arg;
	unsigned t;
};

static void run_part(void *arg)
{
	const struct part *pt = arg;
	pt->fn(pt->arg, pt->t);
}

void zn_pool_run(struct zn_pool *p, zn_part_fn fn, void *arg, unsigned n)
{
	if (n > p->threads)
		n = p->threads;
	struct zn_pool_group g = {0};
	struct part parts[ZN_THREADS_MAX];
	for (unsigned t = 1; t < n; t++) {
		parts[t] = (struct part){fn, arg, t};
		zn_pool_add_to(p, &g, run_part, &parts[t]);
	}
	fn(arg, 0);
	zn_pool_join(p, &g);
}

void zn_pool_fail(struct zn_pool *p, zn_result r)
{
	if (r == ZN_OK)
		return;
	int expected = ZN_OK;
	atomic_compare_exchange_strong(&p->result, &expected, (int)r);
	atomic_store_explicit(&p->canceled, 1, memory_order_release);
}

int zn_pool_canceled(const struct zn_pool *p)
{
	return atomic_load_explicit(&p->canceled, memory_order_relaxed);
}

zn_result zn_pool_result(const struct zn_pool *p)
{
	return (zn_result)atomic_load(&p->result);
}
