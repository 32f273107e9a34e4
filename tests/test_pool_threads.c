/* SPDX-License-Identifier: MIT */
/* test_pool_threads.c - the job pool: every job runs once, inline at one thread, backpressure,
 * jobs that add jobs to a full queue, parallel parts, and first error wins. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common/pool.h"
#include "test_util.h"

enum { JOBS = 5000 };

static atomic_uint ran[JOBS];
static atomic_uint total;
static pthread_t caller;

static void count_job(void *arg)
{
	atomic_fetch_add(&ran[(uintptr_t)arg], 1);
	atomic_fetch_add(&total, 1);
}

/* Every job added runs exactly once, by the time zn_pool_wait returns. */
static void check_all_run(unsigned threads, size_t cap)
{
	struct zn_pool *p;
	CHECK_OK(zn_pool_new(&p, threads, cap));
	CHECK(zn_pool_threads(p) == threads);
	for (int i = 0; i < JOBS; i++)
		atomic_store(&ran[i], 0);
	atomic_store(&total, 0);
	for (uintptr_t i = 0; i < JOBS; i++)
		zn_pool_add(p, count_job, (void *)i);
	zn_pool_wait(p);
	CHECK_EQ_U64(atomic_load(&total), JOBS);
	for (int i = 0; i < JOBS; i++)
		CHECK_EQ_U64(atomic_load(&ran[i]), 1);
	zn_pool_free(p);
}

/* At one thread a job runs inside zn_pool_add, on the caller's thread. */
static int order[8], norder;
static void record_job(void *arg)
{
	CHECK(pthread_equal(pthread_self(), caller));
	order[norder++] = (int)(uintptr_t)arg;
}

static void check_inline(void)
{
	struct zn_pool *p;
	CHECK_OK(zn_pool_new(&p, 1, 1));
	CHECK(zn_pool_threads(p) == 1);
	for (uintptr_t i = 0; i < 8; i++) {
		zn_pool_add(p, record_job, (void *)i);
		CHECK(norder == (int)i + 1); /* ran before zn_pool_add returned */
	}
	for (int i = 0; i < 8; i++)
		CHECK(order[i] == i);
	zn_pool_free(p);
}

/* A queue of 2 never holds more than 2 jobs: adders wait (backpressure). */
static atomic_int queued_now;
static atomic_int gate;
static void slow_job(void *arg)
{
	(void)arg;
	atomic_fetch_sub(&queued_now, 1);
	while (!atomic_load(&gate))
		usleep(100);
}

static struct zn_pool *bp_pool;
static atomic_int added;
static void *add_fifth(void *arg)
{
	(void)arg;
	atomic_fetch_add(&queued_now, 1);
	zn_pool_add(bp_pool, slow_job, NULL);
	atomic_store(&added, 1);
	return NULL;
}

static void check_backpressure(void)
{
	struct zn_pool *p;
	CHECK_OK(zn_pool_new(&p, 3, 2));
	atomic_store(&gate, 0);
	/* Two jobs occupy the two threads, two fill the queue; then the adder must block. */
	for (int i = 0; i < 4; i++) {
		atomic_fetch_add(&queued_now, 1);
		zn_pool_add(p, slow_job, NULL);
	}
	usleep(20000);
	CHECK(atomic_load(&queued_now) == 2); /* two running, two waiting in the queue */
	/* A fifth add blocks until a thread takes a job off the queue. */
	pthread_t adder;
	bp_pool = p;
	atomic_store(&added, 0);
	CHECK(pthread_create(&adder, NULL, add_fifth, NULL) == 0);
	usleep(20000);
	CHECK(atomic_load(&added) == 0);
	atomic_store(&gate, 1);
	pthread_join(adder, NULL);
	CHECK(atomic_load(&added) == 1);
	zn_pool_wait(p);
	CHECK(atomic_load(&queued_now) == 0);
	zn_pool_free(p);
}

/* Jobs that add jobs to a queue of one: an adder that is itself a job of the pool helps rather
 * than waiting, so this ends. */
static struct zn_pool *nest_pool;
static atomic_uint leaves;
static void leaf_job(void *arg)
{
	(void)arg;
	atomic_fetch_add(&leaves, 1);
}
static void branch_job(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++)
		zn_pool_add(nest_pool, leaf_job, NULL);
}

static void check_nested(unsigned threads)
{
	CHECK_OK(zn_pool_new(&nest_pool, threads, 1));
	atomic_store(&leaves, 0);
	for (int i = 0; i < 40; i++)
		zn_pool_add(nest_pool, branch_job, NULL);
	zn_pool_wait(nest_pool);
	CHECK_EQ_U64(atomic_load(&leaves), 40 * 50);
	zn_pool_free(nest_pool);
}

/* zn_pool_run: each part once, part 0 on the caller's thread, at most the pool's threads. */
static atomic_uint parts_seen[ZN_THREADS_MAX];
static void part_fn(void *arg, unsigned t)
{
	(void)arg;
	if (t == 0)
		CHECK(pthread_equal(pthread_self(), caller));
	atomic_fetch_add(&parts_seen[t], 1);
}

static void check_run(unsigned threads, unsigned n)
{
	struct zn_pool *p;
	CHECK_OK(zn_pool_new(&p, threads, 0));
	for (unsigned t = 0; t < ZN_THREADS_MAX; t++)
		atomic_store(&parts_seen[t], 0);
	zn_pool_run(p, part_fn, NULL, n);
	unsigned want = n < threads ? n : threads;
	for (unsigned t = 0; t < ZN_THREADS_MAX; t++)
		CHECK_EQ_U64(atomic_load(&parts_seen[t]), t < want ? 1 : 0);
	zn_pool_free(p);
}

/* The first error is kept; later ones and ZN_OK change nothing; canceled is raised. */
static struct zn_pool *err_pool;
static void fail_job(void *arg)
{
	zn_pool_fail(err_pool, (zn_result)(uintptr_t)arg);
}

static void check_first_error(void)
{
	CHECK_OK(zn_pool_new(&err_pool, 4, 0));
	CHECK(!zn_pool_canceled(err_pool));
	zn_pool_fail(err_pool, ZN_OK);
	CHECK(!zn_pool_canceled(err_pool));
	CHECK(zn_pool_result(err_pool) == ZN_OK);
	zn_pool_add(err_pool, fail_job, (void *)(uintptr_t)ZN_ERR_IO);
	zn_pool_wait(err_pool);
	for (int i = 0; i < 100; i++)
		zn_pool_add(err_pool, fail_job, (void *)(uintptr_t)ZN_ERR_CORRUPT);
	zn_pool_wait(err_pool);
	CHECK(zn_pool_canceled(err_pool));
	CHECK(zn_pool_result(err_pool) == ZN_ERR_IO);
	zn_pool_free(err_pool);
}

/* Joining a group waits for its own jobs. */
static atomic_uint g1_done, g2_done;
static void g1_job(void *arg)
{
	(void)arg;
	usleep(50);
	atomic_fetch_add(&g1_done, 1);
}
static void g2_job(void *arg)
{
	(void)arg;
	atomic_fetch_add(&g2_done, 1);
}
static void check_groups(unsigned threads)
{
	struct zn_pool *p;
	CHECK_OK(zn_pool_new(&p, threads, 8));
	struct zn_pool_group g1 = {0}, g2 = {0};
	atomic_store(&g1_done, 0);
	atomic_store(&g2_done, 0);
	for (int i = 0; i < 100; i++) {
		zn_pool_add_to(p, &g1, g1_job, NULL);
		zn_pool_add_to(p, &g2, g2_job, NULL);
	}
	zn_pool_join(p, &g1);
	CHECK_EQ_U64(atomic_load(&g1_done), 100);
	zn_pool_join(p, &g2);
	CHECK_EQ_U64(atomic_load(&g2_done), 100);
	zn_pool_free(p);
}

/* zn_pool_add_first jumps the queue: with the one job thread held, a job added first runs
 * before those queued earlier. */
static atomic_int first_order[3], first_n;
static void first_job(void *arg)
{
	atomic_store(&first_order[atomic_fetch_add(&first_n, 1)], (int)(intptr_t)arg);
}

static void check_add_first(void)
{
	struct zn_pool *p;
	CHECK_OK(zn_pool_new(&p, 2, 4));
	atomic_store(&gate, 0);
	atomic_store(&queued_now, 1);
	atomic_store(&first_n, 0);
	zn_pool_add(p, slow_job, NULL); /* holds the pool's one thread */
	while (atomic_load(&queued_now))
		usleep(100);
	zn_pool_add(p, first_job, (void *)(intptr_t)1);
	zn_pool_add(p, first_job, (void *)(intptr_t)2);
	zn_pool_add_first(p, first_job, (void *)(intptr_t)3);
	atomic_store(&gate, 1);
	while (atomic_load(&first_n) < 3) /* all on the job thread (zn_pool_wait would help) */
		usleep(100);
	zn_pool_wait(p);
	CHECK(atomic_load(&first_order[0]) == 3 && atomic_load(&first_order[1]) == 1 &&
	      atomic_load(&first_order[2]) == 2);
	zn_pool_free(p);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_pool_threads");
	caller = pthread_self();
	check_inline();
	check_all_run(1, 1);
	check_all_run(2, 1);
	check_all_run(4, 3);
	check_all_run(8, 0);
	check_backpressure();
	check_add_first();
	check_nested(1);
	check_nested(2);
	check_nested(4);
	check_run(1, 4);
	check_run(4, 4);
	check_run(4, 9);
	check_run(8, 3);
	check_first_error();
	check_groups(1);
	check_groups(3);
	/* 0 threads is one per CPU. */
	struct zn_pool *p;
	CHECK_OK(zn_pool_new(&p, 0, 0));
	CHECK(zn_pool_threads(p) >= 1);
	zn_pool_free(p);
	printf("test_pool_threads: ok\n");
	return 0;
}
