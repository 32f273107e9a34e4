/* SPDX-License-Identifier: MIT */
/* bench_compress_floor.c - the floor of archiving compressible data: zstd alone, from memory.
 *
 * Usage: bench_compress_floor [-l LEVEL] [-T THREADS] [-b BLOCK] [-n REPS] [--sha] FILE
 *
 * Loads FILE into memory (not timed; a tar of a corpus holds its files' bytes in walk order, as
 * znippy's solid blocks do), then, REPS times (default 3), compresses it in independent blocks of
 * BLOCK bytes (default 1 MiB, znippy's chunk size, with a window as large) at LEVEL (default 3)
 * on THREADS threads (default 2) that take blocks from an atomic counter; with --sha each block
 * is also hashed with SHA-256 by the thread that compresses it (znippy hashes every file). No
 * reads, no writes, no walk: what is left is the compressor's own time, which no archiver using
 * libzstd at that level and block size can undercut. Prints the best and median wall time, MB/s
 * of input and the compressed size; with the time of `tar -c | zstd -T0 -3` on the same tree
 * beside it, this says how fast an archiver of that tree can be made (docs/BENCHMARKS.md). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "common/sha256.h"

struct job {
	const uint8_t *data;
	uint64_t size, block, nblocks;
	int level, sha;
	atomic_uint_fast64_t next;
	atomic_uint_fast64_t csize;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(j->block);
	uint8_t *out = malloc(cap);
	if (!c || !out) {
		fprintf(stderr, "out of memory\n");
		exit(3);
	}
	int wlog = 10;
	while (wlog < 28 && (1ull << wlog) < j->block)
		wlog++;
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, j->level);
	ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, wlog); /* as znippy's workers */
	uint64_t total = 0;
	for (;;) {
		uint64_t b = atomic_fetch_add(&j->next, 1);
		if (b >= j->nblocks)
			break;
		uint64_t off = b * j->block,
		         n = (j->block < j->size - off ? j->block : j->size - off);
		if (j->sha) {
			uint8_t d[32];
			zn_sha256(j->data + off, n, d);
		}
		size_t r = ZSTD_compress2(c, out, cap, j->data + off, n);
		if (ZSTD_isError(r)) {
			fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(r));
			exit(3);
		}
		total += r;
	}
	atomic_fetch_add(&j->csize, total);
	ZSTD_freeCCtx(c);
	free(out);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_compress_floor [-l LEVEL] [-T THREADS] [-b BLOCK] [-n REPS] "
	                "[--sha] FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct job j = {.level = 3, .block = 1u << 20};
	int threads = 2, reps = 3, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--sha")) {
			j.sha = 1;
			continue;
		}
		if (i + 1 >= argc || a[2])
			usage();
		long v = atol(argv[++i]);
		if (v < 1)
			usage();
		if (a[1] == 'l')
			j.level = (int)v;
		else if (a[1] == 'T')
			threads = (int)v;
		else if (a[1] == 'b')
			j.block = (uint64_t)v;
		else if (a[1] == 'n')
			reps = (int)v;
		else
			usage();
	}
	if (i + 1 != argc || threads > 256)
		usage();
	int fd = open(argv[i], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || st.st_size == 0) {
		perror(argv[i]);
		return 3;
	}
	j.size = (uint64_t)st.st_size;
	uint8_t *data = malloc(j.size);
	if (!data)
		return 3;
	for (uint64_t got = 0; got < j.size;) {
		ssize_t r = pread(fd, data + got, j.size - got, (off_t)got);
		if (r <= 0) {
			perror(argv[i]);
			return 3;
		}
		got += (uint64_t)r;
	}
	j.data = data;
	j.nblocks = (j.size + j.block - 1) / j.block;

	double *t = calloc((size_t)reps, sizeof(double));
	pthread_t tid[256];
	for (int r = 0; r < reps; r++) {
		atomic_store(&j.next, 0);
		atomic_store(&j.csize, 0);
		double s = now();
		for (int k = 0; k < threads; k++)
			pthread_create(&tid[k], NULL, worker, &j);
		for (int k = 0; k < threads; k++)
			pthread_join(tid[k], NULL);
		t[r] = now() - s;
	}
	qsort(t, (size_t)reps, sizeof(double), cmp_double);
	printf("level %d, %d threads, blocks of %llu, %s: best %.3f s, median %.3f s, %.0f MB/s "
	       "(best), %.1f%% of %llu bytes\n",
	       j.level, threads, (unsigned long long)j.block, j.sha ? "with SHA-256" : "no digest",
	       t[0], t[reps / 2], j.size / t[0] / 1e6, 100.0 * atomic_load(&j.csize) / j.size,
	       (unsigned long long)j.size);
	free(t);
	free(data);
	return 0;
}
