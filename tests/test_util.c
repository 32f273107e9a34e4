/* SPDX-License-Identifier: MIT */
/* test_util.c - shared helpers for the test programs. */
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tu_test_name = "test";
uint64_t tu_seed = 1;
int tu_quick;
int tu_no_threads;

void tu_init(int argc, char **argv, const char *name)
{
	tu_test_name = name;
	const char *env = getenv("ZN_TEST_SEED");
	if (env)
		tu_seed = strtoull(env, NULL, 0);
	env = getenv("ZN_TEST_QUICK");
	tu_quick = env && *env && strcmp(env, "0");
	env = getenv("ZN_TEST_NO_THREADS");
	tu_no_threads = env && *env && strcmp(env, "0");
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-s"))
			tu_seed = strtoull(argv[i + 1], NULL, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static void print_seed(void)
{
	fprintf(stderr, "%s: reproduce with -s %llu\n", tu_test_name, (unsigned long long)tu_seed);
}

void tu_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s: FAIL %s:%d: %s\n", tu_test_name, file, line, what);
	print_seed();
	abort();
}

void tu_fail_result(const char *file, int line, const char *what, zn_result r)
{
	fprintf(stderr, "%s: FAIL %s:%d: %s returned %s (%s)\n", tu_test_name, file, line, what,
	        zn_result_name(r), zn_result_message(r));
	print_seed();
	abort();
}

void tu_fail_u64(const char *file, int line, const char *what, uint64_t a, uint64_t b)
{
	fprintf(stderr, "%s: FAIL %s:%d: %s (%llu != %llu)\n", tu_test_name, file, line, what,
	        (unsigned long long)a, (unsigned long long)b);
	print_seed();
	abort();
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void tu_rng_seed(struct tu_rng *g, uint64_t seed)
{
	for (int i = 0; i < 4; i++) { /* splitmix64 */
		uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		g->s[i] = z ^ (z >> 31);
	}
}

uint64_t tu_rng_next(struct tu_rng *g)
{
	uint64_t *s = g->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t tu_rng_below(struct tu_rng *g, uint64_t n)
{
	return n ? tu_rng_next(g) % n : 0;
}

void tu_rng_fill(struct tu_rng *g, void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len >= 8) {
		uint64_t v = tu_rng_next(g);
		memcpy(p, &v, 8);
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t v = tu_rng_next(g);
		memcpy(p, &v, len);
	}
}

void tu_fill_text(struct tu_rng *g, uint8_t *p, size_t n)
{
	static const char *const words[] = {"block",   "frame", "zstd",    "window", "the",   "of",
	                                    "archive", "index", "decoder", "prefix", "cache", "a"};
	size_t i = 0;
	while (i < n) {
		const char *w = words[tu_rng_below(g, sizeof(words) / sizeof(words[0]))];
		for (size_t k = 0; w[k] && i < n; k++)
			p[i++] = (uint8_t)w[k];
		if (i < n)
			p[i++] = tu_rng_below(g, 9) ? ' ' : '\n';
	}
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Guard buffers are made and dropped by the hundred thousand (the decoder tests take one per
 * stream), and on these VMs each fresh mapping costs three system calls plus a zero-fill fault per
 * page touched: that was most of the decoder tests' time, which the CPU-feature sweep multiplies.
 * So a freed mapping of up to GUARD_CACHE_PAGES data pages is kept, made inaccessible (a use after
 * free still faults), and handed out again, zeroed, for the next buffer of as many pages: one
 * mprotect each way instead of mmap, mprotect, munmap and the faults. Per thread, no locking. */
#define GUARD_CACHE_SLOTS 8
#define GUARD_CACHE_PAGES 256
static _Thread_local struct {
	uint8_t *base;
	size_t pages;
} guard_cache[GUARD_CACHE_SLOTS];
static _Thread_local unsigned guard_cache_next;

static uint8_t *guard_reuse(size_t pages)
{
	size_t ps = page_size();
	for (unsigned i = 0; i < GUARD_CACHE_SLOTS; i++) {
		uint8_t *base = guard_cache[i].base;
		if (!base || guard_cache[i].pages != pages)
			continue;
		guard_cache[i].base = NULL;
		if (mprotect(base + ps, pages * ps, PROT_READ | PROT_WRITE))
			tu_fail(__FILE__, __LINE__, "mprotect guard buffer");
		memset(base + ps, 0, pages * ps); /* as a fresh mapping */
		return base;
	}
	return NULL;
}

static void *guard_map(size_t len, size_t *data_pages, uint8_t **base)
{
	size_t ps = page_size();
	*data_pages = (len + ps - 1) / ps;
	if ((*base = guard_reuse(*data_pages)))
		return *base;
	size_t total = (*data_pages + 2) * ps;
	void *m = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		tu_fail(__FILE__, __LINE__, "mmap guard buffer");
	*base = m;
	if (*data_pages && mprotect(*base + ps, *data_pages * ps, PROT_READ | PROT_WRITE))
		tu_fail(__FILE__, __LINE__, "mprotect guard buffer");
	return m;
}

void *tu_guard_alloc(size_t len)
{
	size_t pages;
	uint8_t *base;
	guard_map(len, &pages, &base);
	return base + page_size() + pages * page_size() - len;
}

void *tu_guard_alloc_front(size_t len)
{
	size_t pages;
	uint8_t *base;
	guard_map(len, &pages, &base);
	return base + page_size();
}

void tu_guard_free(void *p, size_t len)
{
	size_t ps = page_size();
	uint8_t *start = (uint8_t *)(((uintptr_t)p & ~(uintptr_t)(ps - 1)) - ps);
	size_t pages = (len + ps - 1) / ps;
	if (pages && pages <= GUARD_CACHE_PAGES && !mprotect(start + ps, pages * ps, PROT_NONE)) {
		unsigned i = guard_cache_next++ % GUARD_CACHE_SLOTS;
		if (guard_cache[i].base)
			munmap(guard_cache[i].base, (guard_cache[i].pages + 2) * ps);
		guard_cache[i].base = start;
		guard_cache[i].pages = pages;
		return;
	}
	munmap(start, (pages + 2) * ps);
}

char *tu_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char *path = tu_fmt("%s/zntest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(path))
		tu_fail(__FILE__, __LINE__, "mkdtemp");
	return path;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		chmod(path, 0700), rmdir(path);
	else
		unlink(path);
	return 0;
}

void tu_rmtree(const char *path)
{
	nftw(path, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

int tu_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	const uint8_t *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return close(fd);
}

void *tu_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (n == cap)
			buf = realloc(buf, cap *= 2);
		ssize_t k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	*len = n;
	return buf;
}

static char **kept;
static size_t nkept;

static void free_kept(void)
{
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	free(kept);
}

char *tu_str(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		tu_fail(__FILE__, __LINE__, "vasprintf");
	va_end(ap);
	if (!nkept)
		atexit(free_kept);
	kept = realloc(kept, (nkept + 1) * sizeof(*kept));
	kept[nkept++] = s;
	return s;
}

char *tu_fmt(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

void tu_archive_files(const char *out, const struct zn_create_options *o, const struct tu_file *f,
                      size_t n)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, o, NULL));
	for (size_t i = 0; i < n; i++) {
		struct zn_entry e = {.path = f[i].path,
		                     .path_len = strlen(f[i].path),
		                     .type = ZN_TYPE_FILE,
		                     .mode = 0644,
		                     .size = f[i].size};
		CHECK_OK(zn_writer_add_memory(w, &e, f[i].data));
	}
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	CHECK(close(fd) == 0);
}

struct zn_create_options tu_small_blocks(unsigned threads)
{
	struct zn_create_options o;
	zn_create_options_init(&o);
	o.chunk_size = 64 << 10;
	o.memory_limit = zn_create_memory_min(o.chunk_size);
	o.threads = threads;
	return o;
}

void tu_put(struct tu_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 4096;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p);
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

void tu_put16(struct tu_buf *b, uint32_t v)
{
	uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	tu_put(b, x, 2);
}

void tu_put32(struct tu_buf *b, uint32_t v)
{
	tu_put16(b, v & 0xffff);
	tu_put16(b, v >> 16);
}

void tu_put64(struct tu_buf *b, uint64_t v)
{
	tu_put32(b, (uint32_t)v);
	tu_put32(b, (uint32_t)(v >> 32));
}
