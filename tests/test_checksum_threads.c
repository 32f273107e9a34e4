/* SPDX-License-Identifier: MIT */
/* test_checksum_threads.c - first calls of zn_crc32/zn_adler32 from many threads at once agree. */
/*
 * The kernel is chosen on the first call and published through an atomic pointer; threads that
 * race through that first call must all get correct results (and, under ThreadSanitizer, no
 * data race may be reported). This program makes no checksum call before the threads start.
 */
#include <pthread.h>
#include <string.h>
#include <zlib.h>

#include "test_util.h"

enum { THREADS = 8, LEN = 100000 };
static uint8_t data[LEN];
static pthread_barrier_t start;
static uint32_t got_crc[THREADS], got_adler[THREADS];

static void *worker(void *arg)
{
	size_t i = (size_t)arg;
	pthread_barrier_wait(&start);
	if (i & 1) {
		got_adler[i] = zn_adler32(1, data, LEN);
		got_crc[i] = zn_crc32(0, data, LEN);
	} else {
		got_crc[i] = zn_crc32(0, data, LEN);
		got_adler[i] = zn_adler32(1, data, LEN);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_checksum_threads");
	printf("seed %llu\n", (unsigned long long)tu_seed);
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	tu_rng_fill(&g, data, LEN);
	pthread_t t[THREADS];
	CHECK(pthread_barrier_init(&start, NULL, THREADS) == 0);
	for (size_t i = 0; i < THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0);
	for (size_t i = 0; i < THREADS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	uint32_t crc = (uint32_t)crc32(0, data, LEN), adler = (uint32_t)adler32(1, data, LEN);
	for (size_t i = 0; i < THREADS; i++) {
		CHECK_EQ_U64(got_crc[i], crc);
		CHECK_EQ_U64(got_adler[i], adler);
	}
	pthread_barrier_destroy(&start);
	printf("ok\n");
	return 0;
}
