/* SPDX-License-Identifier: MIT */
/* test_util.h - shared helpers for the test programs: assertions, guard-page buffers, a seeded
 * PRNG and temporary directories. */
#ifndef ZN_TEST_UTIL_H
#define ZN_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "znippy.h"

extern const char *tu_test_name;
extern uint64_t tu_seed;
/* Nonzero when ZN_TEST_QUICK is set: scripts/run_tests.sh sets it in every configuration but
 * release (the sanitizers run code 3-20 times slower, qemu-user 10-50 times, the CPU sweep runs
 * each test five times). A test then runs the same code paths on smaller inputs or a sample of
 * its repetitions; the release configuration runs the whole workload. */
extern int tu_quick;
/* Nonzero when ZN_TEST_NO_THREADS is set (the aarch64 configuration: under Debian 12's
 * qemu-user a pthread_create() never returns): a test then leaves out what starts threads,
 * libzstd's multithreaded compression included. */
extern int tu_no_threads;

/* Parse "-s SEED" (and ZN_TEST_SEED) for randomised tests; prints the seed in use. */
void tu_init(int argc, char **argv, const char *name);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			tu_fail(__FILE__, __LINE__, #cond);                                        \
	} while (0)
#define CHECK_OK(expr)                                                                             \
	do {                                                                                       \
		zn_result r_ = (expr);                                                             \
		if (r_ != ZN_OK)                                                                   \
			tu_fail_result(__FILE__, __LINE__, #expr, r_);                             \
	} while (0)
#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		if (a_ != b_)                                                                      \
			tu_fail_u64(__FILE__, __LINE__, #a " == " #b, a_, b_);                     \
	} while (0)

_Noreturn void tu_fail(const char *file, int line, const char *what);
_Noreturn void tu_fail_result(const char *file, int line, const char *what, zn_result r);
_Noreturn void tu_fail_u64(const char *file, int line, const char *what, uint64_t a, uint64_t b);

/* xoshiro256** seeded from a 64-bit seed. */
struct tu_rng {
	uint64_t s[4];
};
void tu_rng_seed(struct tu_rng *g, uint64_t seed);
uint64_t tu_rng_next(struct tu_rng *g);
uint64_t tu_rng_below(struct tu_rng *g, uint64_t n);
void tu_rng_fill(struct tu_rng *g, void *buf, size_t len);
/* Text-like bytes: random words of a small vocabulary, a space or now and then a newline after
 * each (zstd and DEFLATE compress them about 3:1). */
void tu_fill_text(struct tu_rng *g, uint8_t *p, size_t n);

/* A buffer of `len` bytes whose end touches an unmapped page (and whose start follows one), so any
 * overread or overwrite faults at once. Free with tu_guard_free. */
void *tu_guard_alloc(size_t len);
void *tu_guard_alloc_front(size_t len); /* same, but the start touches the guard page */
void tu_guard_free(void *p, size_t len);

/* Create a fresh temporary directory (under $TMPDIR or /tmp); returns a malloc'd path. */
char *tu_mkdtemp(void);
/* rm -rf */
void tu_rmtree(const char *path);
/* Write / read a whole file. tu_read_file returns malloc'd bytes (NULL on error). */
int tu_write_file(const char *path, const void *data, size_t len);
void *tu_read_file(const char *path, size_t *len);
/* printf into a malloc'd string. */
char *tu_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growing byte buffer (zeroed: empty; free p), for tests that build files byte by byte; the
 * numbers little-endian. */
struct tu_buf {
	uint8_t *p;
	size_t len, cap;
};
void tu_put(struct tu_buf *b, const void *p, size_t n);
void tu_put16(struct tu_buf *b, uint32_t v);
void tu_put32(struct tu_buf *b, uint32_t v);
void tu_put64(struct tu_buf *b, uint64_t v);
/* printf into a string owned by test_util and freed at exit (for tests with many paths). */
char *tu_str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Create options with 64 KiB blocks (a test's tree fills dozens) and the least memory the
 * pipeline allows (few slots, filled again often), for `threads` workers. */
struct zn_create_options tu_small_blocks(unsigned threads);

/* A regular file (mode 0644) for tu_archive_files: its stored path and its bytes. */
struct tu_file {
	const char *path;
	const void *data;
	uint64_t size;
};
/* Write to `out` an archive of the n files, added from memory in this order with options o. */
void tu_archive_files(const char *out, const struct zn_create_options *o, const struct tu_file *f,
                      size_t n);

#endif
