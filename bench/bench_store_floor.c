/* SPDX-License-Identifier: MIT */
/* bench_store_floor.c - the floor of archiving an incompressible file, against a plain copy.
 *
 * Usage: bench_store_floor [-n REPS] FILE OUT
 *
 * What `znippy create` must do with data that is stored as it is (random bytes, or a jar), cut to
 * the bone, in the two shapes znippy's pipeline has had, beside what they are measured against:
 *
 *   copy    what cp(1) does between two filesystems: read and write one 128 KiB buffer
 *           (copy_file_range is refused across filesystems).
 *   copy16  the same, into a file that starts with 16 bytes (a header): every write's
 *           destination is 16 bytes past a multiple of 64. On the Zen 3 VM (2026-12-01) the
 *           kernel's copy into the page cache took 1.6x as long so, which is why znippy's blocks
 *           start at multiples of 64 (docs/FORMAT.md).
 *   sha     the SHA-256 chain alone over the file in the page cache (read in 128 KiB pieces).
 *   three   the file read in 1 MiB chunks into a ring of 8 buffers (this thread), hashed in order
 *           with one SHA-256 chain (a thread of its own: a file's digest is one sequential
 *           chain) and written in 128 KiB pieces after an XXH3-64 of each chunk (a third
 *           thread): each chunk crosses between the cores on the way. znippy until 2026-12-01.
 *   two     each chunk read and written by this thread a 128 KiB piece at a time (the piece
 *           still in the cache when written, as cp), XXH3-64 of the chunk after, and the
 *           SHA-256 chain over the chunks on a second thread: what znippy does now.
 *   mapped  the file mapped: SHA-256 on a thread of its own straight from the page cache,
 *           XXH3-64 and the write from the same mapping here. No copy into a buffer at all;
 *           not znippy's way, because a file truncated while mapped kills the reader with
 *           SIGBUS, and the digest and the bytes written could differ for a file changed
 *           meanwhile. Kept as the bound of what avoiding the copy could give.
 *
 * No index, no walk, no slots, no compression sample, no locks: the threads hand chunk numbers
 * over through atomic counters. REPS times (default 7), alternated; OUT is removed before each
 * (not timed). Prints the best and the median wall time of each, and the ratios to copy. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/sha256.h"

#define CHUNK (1u << 20)
#define RING  8
#define PIECE (128u << 10)

struct floor {
	int in, out;
	uint64_t size, nchunks;
	uint8_t *buf[RING];
	atomic_uint_fast64_t nread, nhashed, nwritten; /* chunks through each stage */
	uint8_t sha[32];
	uint64_t xor_xxh3; /* kept so that the hashing is not optimised away */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void wait_for(atomic_uint_fast64_t *c, uint64_t v)
{
	while (atomic_load_explicit(c, memory_order_acquire) < v)
		sched_yield(); /* 2 vCPUs, 3 threads: yield rather than spin */
}

static uint64_t chunk_len(const struct floor *f, uint64_t k)
{
	return k + 1 < f->nchunks ? CHUNK : f->size - k * CHUNK;
}

static void *hasher(void *arg)
{
	struct floor *f = arg;
	SHA256_CTX c;
	SHA256_Init(&c);
	for (uint64_t k = 0; k < f->nchunks; k++) {
		wait_for(&f->nread, k + 1);
		SHA256_Update(&c, f->buf[k % RING], chunk_len(f, k));
		atomic_store_explicit(&f->nhashed, k + 1, memory_order_release);
	}
	SHA256_Final(f->sha, &c);
	return NULL;
}

static void write_all(int fd, const uint8_t *p, uint64_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n < PIECE ? n : PIECE);
		if (k <= 0) {
			perror("write");
			exit(3);
		}
		p += k;
		n -= (uint64_t)k;
	}
}

static void *writer(void *arg)
{
	struct floor *f = arg;
	for (uint64_t k = 0; k < f->nchunks; k++) {
		wait_for(&f->nhashed, k + 1);
		f->xor_xxh3 ^= XXH3_64bits(f->buf[k % RING], chunk_len(f, k));
		write_all(f->out, f->buf[k % RING], chunk_len(f, k));
		atomic_store_explicit(&f->nwritten, k + 1, memory_order_release);
	}
	return NULL;
}

static void run_three(struct floor *f)
{
	atomic_store(&f->nread, 0);
	atomic_store(&f->nhashed, 0);
	atomic_store(&f->nwritten, 0);
	pthread_t h, w;
	pthread_create(&h, NULL, hasher, f);
	pthread_create(&w, NULL, writer, f);
	for (uint64_t k = 0; k < f->nchunks; k++) {
		if (k >= RING)
			wait_for(&f->nwritten, k - RING + 1);
		uint64_t n = chunk_len(f, k), got = 0;
		while (got < n) {
			ssize_t r = pread(f->in, f->buf[k % RING] + got, n - got,
			                  (off_t)(k * CHUNK + got));
			if (r <= 0) {
				perror("read");
				exit(3);
			}
			got += (uint64_t)r;
		}
		atomic_store_explicit(&f->nread, k + 1, memory_order_release);
	}
	pthread_join(h, NULL);
	pthread_join(w, NULL);
}

/* `two`: each chunk read and written here a piece at a time; the hasher chains SHA-256 over
 * the chunks, and a buffer is read into again once hashed. */
static void run_two(struct floor *f)
{
	atomic_store(&f->nread, 0);
	atomic_store(&f->nhashed, 0);
	pthread_t h;
	pthread_create(&h, NULL, hasher, f);
	for (uint64_t k = 0; k < f->nchunks; k++) {
		if (k >= RING)
			wait_for(&f->nhashed, k - RING + 1);
		uint64_t n = chunk_len(f, k);
		uint8_t *b = f->buf[k % RING];
		for (uint64_t got = 0; got < n;) {
			uint64_t want = n - got < PIECE ? n - got : PIECE;
			ssize_t r = pread(f->in, b + got, want, (off_t)(k * CHUNK + got));
			if (r <= 0) {
				perror("read");
				exit(3);
			}
			write_all(f->out, b + got, (uint64_t)r);
			got += (uint64_t)r;
		}
		f->xor_xxh3 ^= XXH3_64bits(b, n);
		atomic_store_explicit(&f->nread, k + 1, memory_order_release);
	}
	pthread_join(h, NULL);
}

/* The file through one 128 KiB buffer: written to OUT (`copy`, as cp), or hashed (`sha`). */
static void run_piecewise(struct floor *f, uint8_t *b, int hash)
{
	SHA256_CTX c;
	SHA256_Init(&c);
	for (uint64_t off = 0; off < f->size;) {
		ssize_t r = pread(f->in, b, PIECE, (off_t)off);
		if (r <= 0) {
			perror("read");
			exit(3);
		}
		if (hash)
			SHA256_Update(&c, b, (size_t)r);
		else
			write_all(f->out, b, (uint64_t)r);
		off += (uint64_t)r;
	}
	SHA256_Final(f->sha, &c);
}

/* `mapped`: SHA-256 on a thread of its own straight from the page cache, XXH3-64 and the write
 * (one copy, page cache to page cache) from the same mapping here. */
struct mapped {
	const uint8_t *map;
	uint64_t size;
	uint8_t sha[32];
};

static void *map_hasher(void *arg)
{
	struct mapped *m = arg;
	SHA256_CTX c;
	SHA256_Init(&c);
	for (uint64_t off = 0; off < m->size; off += CHUNK)
		SHA256_Update(&c, m->map + off, m->size - off < CHUNK ? m->size - off : CHUNK);
	SHA256_Final(m->sha, &c);
	return NULL;
}

static void run_mapped(struct floor *f)
{
	struct mapped m = {.size = f->size};
	void *p = mmap(NULL, f->size, PROT_READ, MAP_SHARED, f->in, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(3);
	}
	m.map = p;
	madvise(p, f->size, MADV_SEQUENTIAL);
	pthread_t h;
	pthread_create(&h, NULL, map_hasher, &m);
	for (uint64_t k = 0; k < f->nchunks; k++) {
		f->xor_xxh3 ^= XXH3_64bits(m.map + k * CHUNK, chunk_len(f, k));
		write_all(f->out, m.map + k * CHUNK, chunk_len(f, k));
	}
	pthread_join(h, NULL);
	munmap(p, f->size);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

enum { COPY, COPY16, SHA, THREE, TWO, MAPPED, NT };

int main(int argc, char **argv)
{
	int reps = 7, opt;
	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n' || (reps = atoi(optarg)) < 1) {
			fprintf(stderr, "usage: bench_store_floor [-n REPS] FILE OUT\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: bench_store_floor [-n REPS] FILE OUT\n");
		return 2;
	}
	const char *out_path = argv[optind + 1];
	static struct floor f;
	struct stat st;
	f.in = open(argv[optind], O_RDONLY);
	if (f.in < 0 || fstat(f.in, &st) || st.st_size == 0) {
		perror(argv[optind]);
		return 3;
	}
	f.size = (uint64_t)st.st_size;
	f.nchunks = (f.size + CHUNK - 1) / CHUNK;
	for (int i = 0; i < RING; i++) { /* as znippy's slots: huge pages, touched before timing */
		f.buf[i] = aligned_alloc(CHUNK, CHUNK);
		if (!f.buf[i])
			return 3;
		madvise(f.buf[i], CHUNK, MADV_HUGEPAGE);
		memset(f.buf[i], 0, CHUNK);
	}
	uint8_t *piece = aligned_alloc(4096, PIECE);
	if (!piece)
		return 3;
	run_piecewise(&f, piece, 1); /* the file into the page cache */

	static const char *names[NT] = {"copy", "copy16", "sha", "three", "two", "mapped"};
	double *t[NT];
	for (int k = 0; k < NT; k++)
		t[k] = calloc((size_t)reps, sizeof(double));
	for (int r = 0; r < reps; r++) {
		for (int k = 0; k < NT; k++) {
			unlink(out_path);
			f.out = k == SHA ? -1 : open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (k != SHA && f.out < 0) {
				perror(out_path);
				return 3;
			}
			if (k == COPY16)
				write_all(f.out, (const uint8_t *)"0123456789abcdef", 16);
			double s = now();
			if (k == COPY || k == COPY16 || k == SHA)
				run_piecewise(&f, piece, k == SHA);
			else if (k == THREE)
				run_three(&f);
			else if (k == TWO)
				run_two(&f);
			else
				run_mapped(&f);
			if (f.out >= 0)
				close(f.out);
			t[k][r] = now() - s;
		}
	}
	unlink(out_path);
	double best[NT], med[NT];
	for (int k = 0; k < NT; k++) {
		qsort(t[k], (size_t)reps, sizeof(double), cmp_double);
		best[k] = t[k][0];
		med[k] = t[k][reps / 2];
		printf("%-6s best %.3f s  median %.3f s  %5.0f MB/s  copy/this %.2f (median)\n",
		       names[k], best[k], med[k], f.size / med[k] / 1e6, med[COPY] / med[k]);
	}
	return f.xor_xxh3 == 42; /* never: keeps the XXH3 */
}
