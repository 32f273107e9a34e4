/* SPDX-License-Identifier: MIT */
/* pool.h - the library's one job pool: bounded queue, first error wins, inline at one thread.
 *
 * Every parallel stage of the library runs on a pool: the archive writer's compression and
 * ordered output, extraction, verification. A pool is made for one operation and freed with it
 * (starting a thread costs about 20 us; an operation runs for milliseconds at least), so no
 * state is shared between operations and nothing global needs locking.
 *
 * Threads: a pool of `threads` runs jobs on threads - 1 threads it starts plus the caller's,
 * which helps while it waits (zn_pool_wait, zn_pool_run). A pool of 1 starts none: zn_pool_add
 * runs the job at once, on the caller's thread, so -T1 is one thread, not a pipeline of
 * sleeping ones.
 *
 * Backpressure: the queue holds at most `queue_cap` jobs; zn_pool_add blocks while it is full
 * (or, called from one of the pool's own jobs, runs a queued job itself: a job that waited for
 * room could otherwise wait for a queue that only jobs drain).
 *
 * Errors: zn_pool_fail records the first error and raises the cancel flag, which jobs poll
 * (zn_pool_canceled, one relaxed atomic load) to stop early. Jobs already queued still run (so
 * that whatever they own is released), and should return at once when canceled.
 *
 * Jobs may wait for each other only in the order they were queued, and only for jobs that
 * already run: a job waiting for one still queued behind it can deadlock a pool with fewer
 * threads than jobs. The stages built on it (archive_pipeline.c) keep to that by handing work
 * on instead of waiting for it (whoever finishes the block the output waits for writes it).
 */
#ifndef ZN_POOL_H
#define ZN_POOL_H

#include <stdatomic.h>
#include <stddef.h>

#include "common/common.h"

struct zn_pool;
typedef void (*zn_job_fn)(void *arg);

/* A pool of `threads` (1..ZN_THREADS_MAX; 0 is one per CPU this process may run on, as
 * zn_cpu_count()), the caller's counted, with a queue of queue_cap jobs (0: 4 per thread).
 * ZN_ERR_NOMEM; if threads cannot be started, the pool runs with those that could (at worst
 * inline): the operation is slower, never wrong. */
zn_result zn_pool_new(struct zn_pool **out, unsigned threads, size_t queue_cap);

/* Runs every job still queued, then stops and joins the threads. NULL is allowed. */
void zn_pool_free(struct zn_pool *p);

/* How many threads run jobs, the caller's counted (1: inline). */
unsigned zn_pool_threads(const struct zn_pool *p);

/* Queue fn(arg), blocking while the queue is full; at one thread, run it now. */
void zn_pool_add(struct zn_pool *p, zn_job_fn fn, void *arg);
/* The same, ahead of every queued job: for a short job that others wait on. */
void zn_pool_add_first(struct zn_pool *p, zn_job_fn fn, void *arg);

/* Until every job added so far has returned; the caller runs queued jobs meanwhile. */
void zn_pool_wait(struct zn_pool *p);

/* Run fn(arg, t) for t = 0..n-1, t = 0 on the caller's thread and the others as jobs, and wait
 * for all of them. For stages of n equal workers that share their work through atomics; n is
 * capped at the pool's thread count. */
typedef void (*zn_part_fn)(void *arg, unsigned t);
void zn_pool_run(struct zn_pool *p, zn_part_fn fn, void *arg, unsigned n);

/* A group of jobs to wait for apart from the rest: zero it, add jobs to it, then join it, which
 * runs queued jobs (of the group or not) until every job of the group has returned. */
struct zn_pool_group {
	atomic_uint left; /* jobs added and not yet returned */
};
void zn_pool_add_to(struct zn_pool *p, struct zn_pool_group *g, zn_job_fn fn, void *arg);
void zn_pool_join(struct zn_pool *p, struct zn_pool_group *g);

/* Record an error (the first wins; ZN_OK is ignored) and raise the cancel flag. Thread-safe. */
void zn_pool_fail(struct zn_pool *p, zn_result r);
/* Whether a job should stop: an error was recorded. Cheap enough to poll per block. */
int zn_pool_canceled(const struct zn_pool *p);
/* The first error recorded, ZN_OK if none. */
zn_result zn_pool_result(const struct zn_pool *p);

#endif
