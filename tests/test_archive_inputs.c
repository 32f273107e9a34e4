/* SPDX-License-Identifier: MIT */
/* test_archive_inputs.c - create with inputs and a process that misbehave: a program's interval
 * timer interrupting the batched reads of small files, and a small file that disappears between
 * the walk and its read (both with io_uring and with plain reads); names that normalise to
 * nothing; a path added twice; and the meta hook. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "archive/archive_block.h"

#include "test_util.h"

static atomic_int ticks; /* the signal may land on any thread */
static void on_alarm(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&ticks, 1, memory_order_relaxed);
}

struct problems {
	int n;
	char last[2048];
	zn_result last_r; /* the result given with `last` */
	/* for touch_victim: when the filter sees `trigger`, `victim` is removed, or grown */
	const char *trigger, *victim;
	int grow;
	int shrink; /* truncate the victim to shrink_to bytes instead */
	long shrink_to;
	zn_meta_fn meta; /* with meta_ctx: the writer's meta hook, if not NULL */
	void *meta_ctx;
};

static void on_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)r, (void)what;
	struct problems *p = ctx;
	p->n++;
	p->last_r = r;
	snprintf(p->last, sizeof(p->last), "%s", path);
}

static void meta_of_problems(void *ctx, struct zn_entry *e)
{
	struct problems *p = ctx;
	p->meta(p->meta_ctx, e);
}

struct buf {
	uint8_t *p;
	size_t len;
};

static zn_result sink(void *ctx, const void *data, size_t len)
{
	struct buf *b = ctx;
	uint8_t *n = realloc(b->p, b->len + len + 1);
	if (!n)
		return ZN_ERR_NOMEM;
	memcpy(n + b->len, data, len);
	b->p = n;
	b->len += len;
	return ZN_OK;
}

/* A writer into a new file `out` (its descriptor in *fd), reporting problems into *p. */
static struct zn_writer *open_writer(const char *out, const struct zn_create_options *o,
                                     zn_filter_fn filter, struct problems *p, int *fd)
{
	*fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(*fd >= 0);
	struct zn_writer *w;
	struct zn_hooks hooks = {.struct_size = sizeof(hooks),
	                         .ctx = p,
	                         .problem = on_problem,
	                         .filter = filter,
	                         .meta = p->meta ? meta_of_problems : NULL};
	CHECK_OK(zn_writer_open(&w, *fd, o, &hooks));
	return w;
}

/* Archives `dir` into `out` with the given options and hooks, then adds `then` (if not NULL)
 * from memory; returns zn_writer_finish's result. */
static zn_result archive(const char *dir, const char *out, const struct zn_create_options *o,
                         zn_filter_fn filter, struct problems *ctx, struct zn_write_stats *st,
                         const struct zn_entry *then)
{
	int fd;
	struct zn_writer *w = open_writer(out, o, filter, ctx, &fd);
	zn_result a = zn_writer_add_path(w, dir, "t");
	if (a == ZN_OK && then)
		a = zn_writer_add_memory(w, then, then->path);
	zn_result f = zn_writer_finish(w);
	zn_writer_stats(w, st);
	zn_writer_free(w);
	close(fd);
	return a != ZN_OK ? a : f;
}

/* A program with a 200 us interval timer (SA_RESTART) archives 3000 small files: the signals
 * interrupt io_uring's waits, which must be retried, not end the archive after a few dozen
 * files (as they once did, with the block's reads still in flight). */
static void interval_timer(const char *root, int no_uring)
{
	char *dir = tu_fmt("%s/many", root), *out = tu_fmt("%s/many.zn", root);
	struct tu_rng g;
	tu_rng_seed(&g, 7);
	static uint8_t buf[3000];
	if (mkdir(dir, 0755) == 0)
		for (int i = 0; i < 3000; i++) {
			size_t n = 200 + tu_rng_below(&g, 2800);
			tu_rng_fill(&g, buf, n);
			CHECK(!tu_write_file(tu_str("%s/f%04d", dir, i), buf, n));
		}
	/* Out of the page cache (where the directory is on a disk), so that the reads wait. */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0 && !syncfs(dfd));
	close(dfd);
	for (int i = 0; i < 3000; i++) {
		int fd = open(tu_str("%s/f%04d", dir, i), O_RDONLY);
		CHECK(fd >= 0);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	CHECK(!sigaction(SIGALRM, &sa, NULL));
	struct itimerval it = {{0, 200}, {0, 200}};
	atomic_store(&ticks, 0);
	CHECK(!setitimer(ITIMER_REAL, &it, NULL));
	struct zn_create_options o;
	zn_create_options_init(&o);
	o.threads = 1;
	o.no_uring = no_uring;
	struct problems p = {0};
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	zn_result r = archive(dir, out, &o, NULL, &p, &st, NULL);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	CHECK(atomic_load(&ticks) > 10); /* the timer did fire during the run */
	CHECK_OK(r);
	CHECK(p.n == 0);
	CHECK(st.complete && st.entries == 3001);
	struct zn_reader *rd;
	CHECK_OK(zn_reader_open(&rd, out, NULL, 0));
	CHECK(zn_reader_count(rd) == 3001);
	CHECK_OK(zn_verify(rd, 2, NULL));
	zn_reader_free(rd);
	free(dir);
	free(out);
}

/* A filter that changes a file found earlier in the walk (so queued for reading, or already
 * taken as a hardlink's first name) when it sees the trigger: removes it or appends to it. */
static int touch_victim(void *ctx, const char *rel, int is_dir)
{
	(void)is_dir;
	const struct problems *p = ctx;
	if (strcmp(rel, p->trigger))
		return 1;
	if (p->shrink) {
		CHECK(!truncate(p->victim, p->shrink_to));
	} else if (!p->grow) {
		CHECK(!unlink(p->victim));
	} else {
		FILE *f = fopen(p->victim, "a");
		CHECK(f && fputs("more", f) >= 0 && fclose(f) == 0);
	}
	return 1;
}

/* A small file that cannot be read keeps its room in its block (the layout is fixed before the
 * read): the room must be zeros, not the bytes an earlier block left in the reused buffer, so
 * that the archive is the same whatever the timing. With `readd`, the same path is then added
 * from memory: it takes the place of the file that was left out. */
static void vanished_file(const char *root, int no_uring, int readd)
{
	char *dir = tu_fmt("%s/vanish%d%d", root, no_uring, readd);
	char *out = tu_fmt("%s/vanish.zn", root);
	char *victim = tu_fmt("%s/f57", dir);
	CHECK(!mkdir(dir, 0755));
	uint8_t buf[16384];
	for (int i = 0; i < 60; i++) { /* 15 blocks of 64 KiB: the few buffers are reused */
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = (uint8_t)('a' + (k * 7 + (size_t)i) % 26);
		buf[0] = (uint8_t)i; /* no two alike: none is stored as a duplicate */
		CHECK(!tu_write_file(tu_str("%s/f%02d", dir, i), buf, sizeof(buf)));
	}
	struct zn_create_options o = tu_small_blocks(2);
	o.no_uring = no_uring;
	struct problems p = {.trigger = "t/f58", .victim = victim}; /* f57 is queued */
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	const struct zn_entry again = {
	        .path = "t/f57", .path_len = 5, .type = ZN_TYPE_FILE, .mode = 0644, .size = 5};
	zn_result r = archive(dir, out, &o, touch_victim, &p, &st, readd ? &again : NULL);
	/* Removed after its directory was read: tar's warning ("file removed before we read it",
	 * exit status 1), not an unreadable input. */
	CHECK(r == ZN_OK);
	CHECK(st.complete);
	CHECK(p.n == 1 && strstr(p.last, "f57")); /* the read, not a repeated path */
	CHECK(p.last_r == ZN_ERR_CHANGED);
	struct zn_reader *rd;
	CHECK_OK(zn_reader_open(&rd, out, NULL, 0));
	CHECK_OK(zn_verify(rd, 2, NULL));
	uint64_t i56, i58, i57;
	CHECK_OK(zn_reader_find(rd, "t/f56", 5, &i56));
	CHECK_OK(zn_reader_find(rd, "t/f58", 5, &i58));
	if (readd) {
		CHECK_OK(zn_reader_find(rd, "t/f57", 5, &i57));
		struct zn_entry e57;
		CHECK_OK(zn_reader_entry(rd, i57, &e57));
		CHECK(e57.size == 5);
	} else {
		CHECK(zn_reader_find(rd, "t/f57", 5, &i57) == ZN_ERR_NOT_FOUND);
	}
	struct zn_entry e56, e58;
	CHECK_OK(zn_reader_entry(rd, i56, &e56));
	CHECK_OK(zn_reader_entry(rd, i58, &e58));
	CHECK(e56.first_block == e58.first_block);
	uint64_t from = e56.block_offset + e56.size, to = e58.block_offset;
	CHECK(to - from == sizeof(buf));
	struct zn_block_cache bc;
	struct zn_blockinfo bi;
	const uint8_t *data;
	zn_block_cache_init(&bc, rd, 1, false);
	CHECK_OK(zn_block_info(rd, e56.first_block, &bi));
	CHECK_OK(zn_block_get(rd, &bc, e56.first_block, &bi, bi.usize, ZN_BLOCK_CHECKED, &data));
	CHECK(bi.usize >= to);
	for (uint64_t k = from; k < to; k++)
		CHECK(data[k] == 0);
	zn_block_cache_free(&bc);
	zn_reader_free(rd);
	free(victim);
	free(dir);
	free(out);
}

/* A small file that grows between the walk and its read is stored as the walk saw it (its room
 * in the block is fixed) and named, as tar does and as large files already were. */
static void grown_file(const char *root, int no_uring)
{
	char *dir = tu_fmt("%s/grow%d", root, no_uring), *out = tu_fmt("%s/grow.zn", root);
	char *victim = tu_fmt("%s/f4", dir);
	CHECK(!mkdir(dir, 0755));
	char buf[1000];
	memset(buf, 'g', sizeof(buf));
	for (int i = 0; i < 10; i++)
		CHECK(!tu_write_file(tu_str("%s/f%d", dir, i), buf, sizeof(buf)));
	struct zn_create_options o;
	zn_create_options_init(&o);
	o.no_uring = no_uring;
	struct problems p = {.trigger = "t/f5", .victim = victim, .grow = 1}; /* f4 is queued */
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	CHECK_OK(archive(dir, out, &o, touch_victim, &p, &st, NULL));
	CHECK(p.n == 1 && strstr(p.last, "f4"));
	struct zn_reader *rd;
	CHECK_OK(zn_reader_open(&rd, out, NULL, 0));
	CHECK_OK(zn_verify(rd, 1, NULL));
	uint64_t i;
	struct zn_entry e;
	CHECK_OK(zn_reader_find(rd, "t/f4", 4, &i));
	CHECK_OK(zn_reader_entry(rd, i, &e));
	CHECK(e.size == sizeof(buf));
	zn_reader_free(rd);
	/* A large file grown as the walk meets it: read by the producer (g-big) or, stored as it
	 * is, by the writer (g-big.zip), it is named once, at the size the walk saw. */
	static uint8_t big[200000];
	for (size_t k = 0; k < sizeof(big); k++)
		big[k] = (uint8_t)(k * 131 % 251);
	static const char *const names[2] = {"g-big", "g-big.zip"};
	for (int c = 0; c < 2; c++) {
		char *path = tu_fmt("%s/%s", dir, names[c]), *rel = tu_fmt("t/%s", names[c]);
		CHECK(!tu_write_file(path, big, sizeof(big)));
		struct zn_create_options ob = tu_small_blocks(2);
		ob.no_uring = no_uring;
		struct problems pb = {.trigger = rel, .victim = path, .grow = 1};
		CHECK_OK(archive(dir, out, &ob, touch_victim, &pb, &st, NULL));
		CHECK(pb.n == 1 && !strcmp(pb.last, rel));
		CHECK_OK(zn_reader_open(&rd, out, NULL, 0));
		CHECK_OK(zn_verify(rd, 1, NULL));
		CHECK_OK(zn_reader_find(rd, rel, strlen(rel), &i));
		CHECK_OK(zn_reader_entry(rd, i, &e));
		CHECK(e.size == sizeof(big));
		zn_reader_free(rd);
		CHECK(!unlink(path));
		free(path);
		free(rel);
	}
	free(victim);
	free(dir);
	free(out);
}

/* Files that shrink between the walk's stat and their read (the filter truncates each as the
 * walk meets it), as the kernel's files whose size is a guess do: a small file is stored as
 * read, and the files after it in its block move down into its room; a large one, whose first
 * chunks are on their way when the end comes, is padded with zeros to its size, as tar does
 * (whether the producer reads it or, stored as it is, the writer: g-big.zip). Each is named
 * once, and the archive verifies. */
static void shrunk_files(const char *root, int no_uring)
{
	char *dir = tu_fmt("%s/shrink%d", root, no_uring), *out = tu_fmt("%s/shrink.zn", root);
	CHECK(!mkdir(dir, 0755));
	static uint8_t big[200000];
	for (size_t k = 0; k < sizeof(big); k++)
		big[k] = (uint8_t)(k * 131 % 251 + 1);
	for (int i = 0; i < 6; i++)
		CHECK(!tu_write_file(tu_str("%s/f%d", dir, i), big + 1000 * i, 1000));
	CHECK(!tu_write_file(tu_str("%s/g-big", dir), big, sizeof(big)));
	CHECK(!tu_write_file(tu_str("%s/g-big.zip", dir), big, sizeof(big)));
	const struct {
		const char *rel, *file;
		long to;
	} cases[] = {{"t/f2", "f2", 300},
	             {"t/f4", "f4", 0},
	             {"t/g-big", "g-big", 100000},
	             {"t/g-big.zip", "g-big.zip", 100000}};
	for (int c = 0; c < 4; c++) {
		struct zn_create_options o = tu_small_blocks(2);
		o.no_uring = no_uring;
		char *victim = tu_fmt("%s/%s", dir, cases[c].file);
		struct problems p = {.trigger = cases[c].rel,
		                     .victim = victim,
		                     .shrink = 1,
		                     .shrink_to = cases[c].to};
		struct zn_write_stats st = {.struct_size = sizeof(st)};
		zn_result r = archive(dir, out, &o, touch_victim, &p, &st, NULL);
		/* Stored as read: a warning; zeros for data: an input problem, as tar's exit 1. */
		CHECK(r == (c >= 2 ? ZN_ERR_IO : ZN_OK) && st.complete);
		CHECK(p.n == 1 && !strcmp(p.last, cases[c].rel));
		struct zn_reader *rd;
		CHECK_OK(zn_reader_open(&rd, out, NULL, 0));
		CHECK_OK(zn_verify(rd, 2, NULL));
		static const char *const bigs[2] = {"t/g-big", "t/g-big.zip"};
		for (int i = 0; i < 8; i++) {
			char rel[16];
			if (i < 6)
				snprintf(rel, sizeof(rel), "t/f%d", i);
			else
				snprintf(rel, sizeof(rel), "%s", bigs[i - 6]);
			const uint8_t *want = i < 6 ? big + 1000 * i : big;
			size_t len = i < 6 ? 1000 : sizeof(big), data = len;
			if (!strcmp(rel, cases[c].rel) && i < 6)
				len = data = (size_t)cases[c].to; /* stored as read */
			else if (!strcmp(rel, cases[c].rel))
				data = (size_t)cases[c].to; /* then zeros */
			uint64_t at;
			CHECK_OK(zn_reader_find(rd, rel, strlen(rel), &at));
			struct buf b = {0};
			CHECK_OK(zn_reader_read_entry(rd, at, sink, &b));
			CHECK(b.len == len && (!data || !memcmp(b.p, want, data)));
			for (size_t k = data; k < len; k++)
				CHECK(b.p[k] == 0);
			free(b.p);
		}
		zn_reader_free(rd);
		CHECK(!tu_write_file(victim,
		                     cases[c].file[0] == 'g' ? big : big + 1000 * (c ? 4 : 2),
		                     cases[c].file[0] == 'g' ? sizeof(big) : 1000));
		free(victim);
	}
	free(dir);
	free(out);
}

/* A read that fails in the middle of a large file the writer reads itself (a .zip, stored as
 * it is): the file is left out and named once, a hardlink to it goes with it, and the rest (a
 * small file; the file's chunks as unreferenced bytes) verifies. Needs the test hooks
 * (ZN_TEST_WRITER_EIO_AT: the writer's reads fail from that offset on). */
static void writer_read_fails(const char *root)
{
#ifdef ZN_TEST_HOOKS
	char *dir = tu_fmt("%s/eio", root), *out = tu_fmt("%s/eio.zn", root);
	char *big_path = tu_fmt("%s/b.zip", dir), *link_path = tu_fmt("%s/c-link", dir);
	CHECK(!mkdir(dir, 0755));
	static uint8_t big[3 * 65536 + 100];
	struct tu_rng g;
	tu_rng_seed(&g, 3);
	tu_rng_fill(&g, big, sizeof(big));
	CHECK(!tu_write_file(tu_str("%s/a.txt", dir), "small", 5));
	CHECK(!tu_write_file(big_path, big, sizeof(big)));
	CHECK(!link(big_path, link_path));
	struct zn_create_options o = tu_small_blocks(2);
	struct problems p = {0};
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	CHECK(!setenv("ZN_TEST_WRITER_EIO_AT", "70000", 1)); /* in the second chunk */
	zn_result r = archive(dir, out, &o, NULL, &p, &st, NULL);
	CHECK(!unsetenv("ZN_TEST_WRITER_EIO_AT"));
	CHECK(r == ZN_ERR_IO && st.complete);
	CHECK(p.n == 2 && !strcmp(p.last, "t/c-link")); /* b.zip, then its hardlink */
	struct zn_reader *rd;
	CHECK_OK(zn_reader_open(&rd, out, NULL, 0));
	CHECK_OK(zn_verify(rd, 2, NULL));
	uint64_t i;
	CHECK(zn_reader_find(rd, "t/b.zip", 7, &i) == ZN_ERR_NOT_FOUND);
	CHECK(zn_reader_find(rd, "t/c-link", 8, &i) == ZN_ERR_NOT_FOUND);
	CHECK_OK(zn_reader_find(rd, "t/a.txt", 7, &i));
	struct buf b = {0};
	CHECK_OK(zn_reader_read_entry(rd, i, sink, &b));
	CHECK(b.len == 5 && !memcmp(b.p, "small", 5));
	free(b.p);
	zn_reader_free(rd);
	free(big_path);
	free(link_path);
	free(dir);
	free(out);
#else
	(void)root;
#endif
}

/* A hardlink whose file could not be read is left out: the same path added again from memory
 * takes its place, rather than being refused as a repeat of a path that ends up not stored. */
static void hardlink_to_unread(const char *root)
{
	char *dir = tu_fmt("%s/hl", root), *out = tu_fmt("%s/hl.zn", root);
	char *h = tu_fmt("%s/h", dir);
	CHECK(!mkdir(dir, 0755));
	CHECK(!tu_write_file(h, "12345", 5));
	CHECK(!link(h, tu_str("%s/t", dir)));
	struct problems p = {.trigger = "t/t", .victim = h}; /* t is a hardlink of h */
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	const struct zn_entry again = {
	        .path = "t/t", .path_len = 3, .type = ZN_TYPE_FILE, .mode = 0644, .size = 3};
	CHECK(archive(dir, out, NULL, touch_victim, &p, &st, &again) == ZN_OK);
	/* h was removed before it was read; the hardlink t to it is not stored, named as it */
	CHECK(p.n == 2 && p.last_r == ZN_ERR_CHANGED);
	struct zn_reader *rd;
	CHECK_OK(zn_reader_open(&rd, out, NULL, 0));
	uint64_t i;
	CHECK(zn_reader_find(rd, "t/h", 3, &i) == ZN_ERR_NOT_FOUND);
	CHECK_OK(zn_reader_find(rd, "t/t", 3, &i));
	struct zn_entry e;
	CHECK_OK(zn_reader_entry(rd, i, &e));
	CHECK(e.type == ZN_TYPE_FILE && e.size == 3);
	zn_reader_free(rd);
	free(h);
	free(dir);
	free(out);
}

/* A file whose stored name would be empty ("", ".", "/", "x/..") is refused, not silently left
 * out; a directory under such a name puts its entries at the top. */
static void empty_names(const char *root)
{
	char dir[4000], file[4096], out[4096];
	snprintf(dir, sizeof(dir), "%s/empty", root);
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(out, sizeof(out), "%s/empty.zn", root);
	CHECK(mkdir(dir, 0755) == 0);
	FILE *f = fopen(file, "w");
	CHECK(f && fputs("data\n", f) >= 0 && fclose(f) == 0);
	static const char *const names[] = {"", ".", "/", "x/.."};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		int fd;
		struct problems p = {0};
		struct zn_writer *w = open_writer(out, NULL, NULL, &p, &fd);
		CHECK(zn_writer_add_path(w, file, names[k]) == ZN_ERR_INVALID_ARG);
		CHECK_OK(zn_writer_add_path(w, dir, names[k]));
		CHECK_OK(zn_writer_finish(w));
		struct zn_write_stats st = {.struct_size = sizeof(st)};
		zn_writer_stats(w, &st);
		CHECK(st.entries == 1); /* "f", from the directory */
		zn_writer_free(w);
		close(fd);
	}
}

struct collect {
	uint8_t buf[1 << 17];
	size_t n;
};

static zn_result collect(void *ctx, const void *data, size_t n)
{
	struct collect *c = ctx;
	CHECK(c->n + n <= sizeof(c->buf));
	memcpy(c->buf + c->n, data, n);
	c->n += n;
	return ZN_OK;
}

/* A file added twice keeps the first content, is named once, and the second content is not
 * written (it took room in the archive before); a directory added twice is not named. */
static void given_twice(const char *root)
{
	enum { N = 100000 };
	static uint8_t one[N], two[N];
	struct tu_rng g;
	tu_rng_seed(&g, 11);
	tu_rng_fill(&g, one, N);
	tu_rng_fill(&g, two, N);
	char out[4096];
	snprintf(out, sizeof(out), "%s/twice.zn", root);
	int fd;
	struct problems p = {0};
	struct zn_writer *w = open_writer(out, NULL, NULL, &p, &fd);
	struct zn_entry d = {.path = "d", .path_len = 1, .type = ZN_TYPE_DIR, .mode = 0755};
	struct zn_entry f = {
	        .path = "d/f", .path_len = 3, .type = ZN_TYPE_FILE, .mode = 0644, .size = N};
	CHECK_OK(zn_writer_add_memory(w, &d, NULL));
	CHECK_OK(zn_writer_add_memory(w, &f, one));
	CHECK_OK(zn_writer_add_memory(w, &d, NULL));
	CHECK(p.n == 0);
	CHECK_OK(zn_writer_add_memory(w, &f, two));
	CHECK(p.n == 1 && !strcmp(p.last, "d/f"));
	CHECK_OK(zn_writer_finish(w));
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	zn_writer_stats(w, &st);
	CHECK(st.entries == 2 && st.files == 1);
	CHECK(st.archive_bytes < N + N / 2); /* random bytes, stored: one copy only */
	zn_writer_free(w);
	close(fd);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	uint64_t i;
	CHECK_OK(zn_reader_find(r, "d/f", 3, &i));
	static struct collect c;
	CHECK_OK(zn_reader_read_entry(r, i, collect, &c));
	CHECK(c.n == N && !memcmp(c.buf, one, N));
	zn_reader_free(r);
}

/* For meta_hook: records the paths it is called with, and sets the metadata below. */
struct meta_seen {
	char paths[8][8];
	int n;
	const char *uname; /* given as the owner name */
	size_t uname_len;
};

static void set_meta(void *ctx, struct zn_entry *e)
{
	struct meta_seen *m = ctx;
	if (m->n < 8)
		snprintf(m->paths[m->n], sizeof(m->paths[0]), "%.*s", (int)e->path_len, e->path);
	m->n++;
	e->mode = e->type == ZN_TYPE_DIR ? 0750 : 0600 | 0170000; /* high bits are ignored */
	e->uid = 7;
	e->uname = m->uname;
	e->uname_len = m->uname_len;
	e->gid = 8;
	e->gname = NULL;
	e->mtime_ns = 123;
	e->size = 1; /* ignored */
}

/* The meta hook sees every entry stored once, in path order, and what it sets is stored; a
 * name it gives that the format cannot hold fails the archive. */
static void meta_hook(const char *root)
{
	char out[4096];
	snprintf(out, sizeof(out), "%s/meta.zn", root);
	static const char data[] = "content";
	struct zn_entry ents[] = {
	        {.path = "b",
	         .path_len = 1,
	         .type = ZN_TYPE_FILE,
	         .mode = 0644,
	         .size = 7,
	         .uname = "old",
	         .uname_len = 3,
	         .gname = "grp",
	         .gname_len = 3,
	         .mtime_ns = 5},
	        {.path = "a", .path_len = 1, .type = ZN_TYPE_DIR, .mode = 0755},
	        {.path = "a/x", .path_len = 3, .type = ZN_TYPE_FILE, .mode = 0644, .size = 7},
	        {.path = "c", .path_len = 1, .type = ZN_TYPE_SYMLINK, .link = "b", .link_len = 1},
	};
	static char long_name[300];
	memset(long_name, 'x', sizeof(long_name)); /* no NUL in the first 256 bytes */
	const struct {
		const char *uname;
		size_t len;
		zn_result want;
	} cases[] = {
	        {"seven", 5, ZN_OK},
	        {long_name, 255, ZN_OK},
	        {long_name, 256, ZN_ERR_INVALID_ARG},
	        {"a\0b", 3, ZN_ERR_INVALID_ARG},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int fd;
		struct meta_seen seen = {.uname = cases[k].uname, .uname_len = cases[k].len};
		struct problems p = {.meta = set_meta, .meta_ctx = &seen};
		struct zn_writer *w = open_writer(out, NULL, NULL, &p, &fd);
		for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
			CHECK_OK(zn_writer_add_memory(w, &ents[i], data));
		CHECK(zn_writer_finish(w) == cases[k].want);
		zn_writer_free(w);
		close(fd);
		/* A name the format cannot hold: the first entry given it is named ("a"). */
		CHECK(cases[k].want == ZN_OK
		              ? p.n == 0
		              : p.n == 1 && !strcmp(p.last, "a") && p.last_r == ZN_ERR_INVALID_ARG);
		if (cases[k].want != ZN_OK)
			continue;
		CHECK(seen.n == 4 && !strcmp(seen.paths[0], "a") && !strcmp(seen.paths[1], "a/x") &&
		      !strcmp(seen.paths[2], "b") && !strcmp(seen.paths[3], "c"));
		struct zn_reader *r;
		CHECK_OK(zn_reader_open(&r, out, NULL, 0));
		CHECK(zn_reader_count(r) == 4);
		for (uint64_t i = 0; i < 4; i++) {
			struct zn_entry e;
			CHECK_OK(zn_reader_entry(r, i, &e));
			CHECK(e.mode == (e.type == ZN_TYPE_DIR ? 0750u : 0600u));
			CHECK(e.uid == 7 && e.gid == 8 && e.mtime_ns == 123);
			CHECK(e.uname_len == cases[k].len &&
			      !memcmp(e.uname, cases[k].uname, cases[k].len) && e.gname_len == 0);
			CHECK(e.size == (e.type == ZN_TYPE_FILE ? 7u : 0u));
		}
		uint64_t i;
		static struct collect c;
		c.n = 0;
		CHECK_OK(zn_reader_find(r, "a/x", 3, &i));
		CHECK_OK(zn_reader_read_entry(r, i, collect, &c));
		CHECK(c.n == 7 && !memcmp(c.buf, data, 7));
		zn_reader_free(r);
	}
}

/* For deep_tree: when the filter sees `trigger`, moves directory `victim` (being walked) to
 * `moved_to`, and its parent, `parent`, to `parent_to`, putting a new directory in its place. */
static const char *moved_to, *parent, *parent_to; /* parent_to NULL: the parent stays */

static int move_victim(void *ctx, const char *rel, int is_dir)
{
	(void)is_dir;
	const struct problems *p = ctx;
	if (!strcmp(rel, p->trigger)) {
		CHECK(!rename(p->victim, moved_to));
		CHECK(!parent_to || (!rename(parent, parent_to) && !mkdir(parent, 0755)));
	}
	return 1;
}

/* A tree deeper than the directories a walk keeps open is archived whole under a limit of 100
 * open files, also when a directory cannot be opened again through a subdirectory's "..": one
 * moved away while it was walked is passed over. A directory replaced by another while its
 * subdirectory was walked is named, and the rest of it is left out with exit status 3, never
 * archived from the wrong place. */
static void deep_tree(const char *root)
{
	enum { DEPTH = 300 };
	char *dir = tu_fmt("%s/deep", root), *out = tu_fmt("%s/deep.zn", root);
	size_t len = strlen(dir);
	char *p = malloc(len + DEPTH * 2 + 64), *rel = malloc(DEPTH * 2 + 64);
	memcpy(p, dir, len + 1);
	CHECK(!mkdir(p, 0755) && !tu_write_file(tu_str("%s/e", dir), "e", 1));
	strcpy(rel, "t");
	int fd = open(p, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < DEPTH; i++) { /* relative steps: the path outgrows PATH_MAX */
		CHECK(fd >= 0 && !mkdirat(fd, "d", 0755));
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = next;
		strcat(rel, "/d");
	}
	CHECK(!mkdirat(fd, "a", 0755) && !mkdirat(fd, "b", 0755));
	int f = openat(fd, "a/x", O_WRONLY | O_CREAT, 0644);
	CHECK(f >= 0 && write(f, "x", 1) == 1 && !close(f));
	f = openat(fd, "c", O_WRONLY | O_CREAT, 0644);
	CHECK(f >= 0 && !close(f));
	close(fd);

	struct rlimit old, low;
	CHECK(!getrlimit(RLIMIT_NOFILE, &old));
	low = old;
	low.rlim_cur = 100;
	CHECK(!setrlimit(RLIMIT_NOFILE, &low));
	struct problems pr = {0};
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	struct zn_create_options o = tu_small_blocks(2);
	CHECK_OK(archive(dir, out, &o, NULL, &pr, &st, NULL));
	CHECK(pr.n == 0);
	CHECK_EQ_U64(st.entries, 1 + 1 + DEPTH + 4); /* t, t/e, the d's, a, a/x, b, c */

	/* "a" moved away while walked: its ".." is another directory, and "b" and "c" are still
	 * found, down from the levels above. Then the same, with a's parent replaced too. */
	char *victim = tu_fmt("%s/%s/a", dir, rel + 2);
	struct problems mv = {.trigger = tu_str("%s/a/x", rel), .victim = victim};
	moved_to = tu_str("%s/moved", root);
	parent = tu_str("%s/%s", dir, rel + 2);
	CHECK_OK(archive(dir, out, &o, move_victim, &mv, &st, NULL));
	CHECK(mv.n == 0);
	CHECK_EQ_U64(st.entries, 1 + 1 + DEPTH + 4);
	CHECK(!rename(moved_to, victim));
	parent_to = tu_str("%s/parent", root);
	CHECK(archive(dir, out, &o, move_victim, &mv, &st, NULL) == ZN_ERR_IO);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	CHECK(mv.n == 1 && !strcmp(mv.last, rel));
	struct zn_reader *rd;
	CHECK_OK(zn_reader_open(&rd, out, NULL, 0));
	CHECK_OK(zn_verify(rd, 2, NULL));
	uint64_t i;
	CHECK_OK(zn_reader_find(rd, tu_str("%s/a/x", rel), strlen(rel) + 4, &i));
	CHECK_OK(zn_reader_find(rd, "t/e", 3, &i)); /* above the levels kept open: walked on */
	CHECK(zn_reader_find(rd, tu_str("%s/b", rel), strlen(rel) + 2, &i) == ZN_ERR_NOT_FOUND);
	zn_reader_free(rd);
	free(victim);
	free(p);
	free(rel);
	free(dir);
	free(out);
}

/* A stream that fails after `good` bytes: with errno EIO, or by ending (fail_eof). */
struct bad_stream {
	uint64_t good;
	int fail_eof;
};

static int64_t bad_read(void *ctx, void *buf, size_t n)
{
	struct bad_stream *b = ctx;
	if (!b->good) {
		errno = EIO;
		return b->fail_eof ? 0 : -1;
	}
	size_t k = n < b->good ? n : (size_t)b->good;
	memset(buf, 'x', k);
	b->good -= k;
	return (int64_t)k;
}

/* Streams that fail or end early leave their entry out, say so, and keep the archive whole;
 * arguments the format cannot hold are refused when given. */
static void stream_failures(const char *root)
{
	char out[4096];
	snprintf(out, sizeof(out), "%s/streams.zn", root);
	int fd;
	struct problems p = {0};
	struct zn_create_options o = tu_small_blocks(2);
	struct zn_writer *w = open_writer(out, &o, NULL, &p, &fd);
	static const char ok_data[] = "kept";
	struct zn_entry ok = {
	        .path = "ok", .path_len = 2, .type = ZN_TYPE_FILE, .mode = 0644, .size = 4};
	CHECK_OK(zn_writer_add_memory(w, &ok, ok_data));
	const uint64_t sizes[] = {1000, o.chunk_size * 3 + 5}; /* small (packed) and large */
	for (int k = 0; k < 4; k++) {
		char name[16];
		snprintf(name, sizeof(name), "bad%d", k);
		struct zn_entry e = {.path = name,
		                     .path_len = strlen(name),
		                     .type = ZN_TYPE_FILE,
		                     .mode = 0644,
		                     .size = sizes[k & 1]};
		struct bad_stream b = {.good = sizes[k & 1] / 2 + (k & 1) * o.chunk_size,
		                       .fail_eof = k >> 1};
		int before = p.n;
		CHECK(zn_writer_add_stream(w, &e, bad_read, &b) ==
		      (k >> 1 ? ZN_ERR_TRUNCATED : ZN_ERR_IO));
		CHECK(p.n == before + 1 && !strcmp(p.last, name));
	}
	/* Of unknown length, failing in its third chunk. */
	struct zn_entry u = {.path = "unsized",
	                     .path_len = 7,
	                     .type = ZN_TYPE_FILE,
	                     .mode = 0644,
	                     .size = ZN_SIZE_UNKNOWN};
	struct bad_stream ub = {.good = o.chunk_size * 2 + 100};
	CHECK(zn_writer_add_stream(w, &u, bad_read, &ub) == ZN_ERR_IO);
	CHECK(!strcmp(p.last, "unsized"));
	CHECK(zn_writer_add_memory(w, &u, "x") == ZN_ERR_LIMIT); /* only a stream has no size */
	struct zn_entry e = {
	        .path = "after", .path_len = 5, .type = ZN_TYPE_FILE, .mode = 0644, .size = 3};
	CHECK_OK(zn_writer_add_memory(w, &e, "abc"));
	/* A hardlink to a path that could not be stored; a symlink target with a NUL; a size no
	 * memory holds; a NULL reader. */
	struct zn_entry h = {.path = "h",
	                     .path_len = 1,
	                     .type = ZN_TYPE_HARDLINK,
	                     .link = "../ok",
	                     .link_len = 5};
	CHECK(zn_writer_add_memory(w, &h, NULL) == ZN_ERR_UNSAFE_PATH);
	struct zn_entry l = {
	        .path = "l", .path_len = 1, .type = ZN_TYPE_SYMLINK, .link = "a\0b", .link_len = 3};
	CHECK(zn_writer_add_memory(w, &l, NULL) == ZN_ERR_INVALID_ARG);
	struct zn_entry huge = {
	        .path = "huge", .path_len = 4, .type = ZN_TYPE_FILE, .size = UINT64_MAX};
	CHECK(zn_writer_add_memory(w, &huge, "x") == ZN_ERR_LIMIT);
	CHECK(zn_writer_add_stream(w, &e, NULL, NULL) == ZN_ERR_INVALID_ARG);
	/* ...which entries without content to read do not need. */
	struct zn_entry d = {.path = "d", .path_len = 1, .type = ZN_TYPE_DIR, .mode = 0755};
	struct zn_entry z = {.path = "z", .path_len = 1, .type = ZN_TYPE_FILE, .mode = 0644};
	CHECK_OK(zn_writer_add_stream(w, &d, NULL, NULL));
	CHECK_OK(zn_writer_add_stream(w, &z, NULL, NULL));
	CHECK(!zn_path_is_safe(NULL, 5));
	CHECK_OK(zn_writer_finish(w)); /* the callers were told: not an input error */
	zn_writer_free(w);
	close(fd);
	struct zn_reader *r = (struct zn_reader *)1;
	CHECK(zn_reader_open(&r, NULL, NULL, 0) == ZN_ERR_INVALID_ARG && !r);
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	CHECK_EQ_U64(zn_reader_count(r), 4);
	CHECK_OK(zn_verify(r, 2, NULL));
	uint64_t i;
	CHECK_OK(zn_reader_find(r, "after", 5, &i));
	static struct collect c;
	CHECK_OK(zn_reader_read_entry(r, i, collect, &c));
	CHECK(c.n == 3 && !memcmp(c.buf, "abc", 3));
	zn_reader_free(r);

	/* Written over a longer file without truncating it (sh's 1<>FILE): the file is cut at the
	 * archive's end. */
	fd = open(out, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_OK(zn_writer_open(&w, fd, NULL, NULL));
	CHECK_OK(zn_writer_add_memory(w, &e, "abc"));
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	close(fd);
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	CHECK_EQ_U64(zn_reader_count(r), 1);
	zn_reader_free(r);
	/* A write over it given up (no finish): what is left does not read as the old archive. */
	fd = open(out, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_OK(zn_writer_open(&w, fd, NULL, NULL));
	CHECK_OK(zn_writer_add_memory(w, &e, "abc"));
	zn_writer_free(w);
	close(fd);
	CHECK(zn_reader_open(&r, out, NULL, 0) != ZN_OK && !r);
	/* No descriptor; one whose first write fails, with errno saying why. */
	CHECK(zn_writer_open(&w, -1, NULL, NULL) == ZN_ERR_INVALID_ARG && !w);
	int full = open("/dev/full", O_WRONLY);
	if (full >= 0) {
		errno = 0;
		CHECK(zn_writer_open(&w, full, NULL, NULL) == ZN_ERR_IO && !w && errno == ENOSPC);
		close(full);
	}
	/* A file not at its start cannot hold an archive whose offsets count from it. */
	fd = open(out, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "stub", 4) == 4);
	CHECK(zn_writer_open(&w, fd, NULL, NULL) == ZN_ERR_INVALID_ARG && !w);
	close(fd);
}

/* A filter hook that adds an entry from memory during a walk, while the crew reads a batch of
 * small files into a block (a batch that "flies"): the entry waits for that batch, so no block
 * is queued or moved while the crew reads into it. Once, the files read into such a block came
 * out of the archive with other files' bytes (and verify passed: the hashes were taken after). */
static struct zn_writer *hook_writer;
static int hook_added;

static int add_from_hook(void *ctx, const char *rel, int is_dir)
{
	(void)ctx, (void)rel;
	if (!is_dir) {
		/* Not while the walk is in progress (it would overwrite the walk's path buffer,
		 * storing the files after this one under wrong names): refused, nothing added. */
		CHECK(zn_writer_add_path(hook_writer, "/dev/null", "t/sub") == ZN_ERR_INVALID_ARG);
		return 1;
	}
	static uint8_t data[40000];
	char name[32];
	snprintf(name, sizeof(name), "extra/%05d", hook_added++);
	memset(data, 'a' + hook_added % 26, sizeof(data));
	struct zn_entry e = {.path = name,
	                     .path_len = strlen(name),
	                     .type = ZN_TYPE_FILE,
	                     .mode = 0644,
	                     .size = sizeof(data)};
	CHECK_OK(zn_writer_add_memory(hook_writer, &e, data));
	return 1;
}

static void hook_adds_entries(const char *root)
{
	enum { DIRS = 12, FILES = 300 };
	char *tree = tu_fmt("%s/hooked", root);
	CHECK(mkdir(tree, 0755) == 0);
	for (int d = 0; d < DIRS; d++) {
		CHECK(mkdir(tu_str("%s/d%02d", tree, d), 0755) == 0);
		for (int f = 0; f < FILES; f++) {
			char text[96];
			int n = f % 5 == 0 ? snprintf(text, sizeof(text), "dup%d\n", f % 4)
			                   : snprintf(text, sizeof(text), "%d %d %.*s\n", d, f,
			                              (d * 7 + f) % 60,
			                              "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
			                              "yyyyyyyyyyyyyyyy");
			CHECK(tu_write_file(tu_str("%s/d%02d/f%03d", tree, d, f), text,
			                    (size_t)n) == 0);
		}
	}
	char *out[2];
	for (int t = 0; t < 2; t++) {
		struct zn_create_options o;
		zn_create_options_init(&o);
		o.threads = t ? 4 : 1;
		o.chunk_size = 64 << 10;
		out[t] = tu_fmt("%s/hooked%d.zn", root, t);
		int fd = open(out[t], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0);
		struct zn_hooks hooks = {.struct_size = sizeof(hooks), .filter = add_from_hook};
		CHECK_OK(zn_writer_open(&hook_writer, fd, &o, &hooks));
		hook_added = 0;
		CHECK_OK(zn_writer_add_path(hook_writer, tree, "t"));
		CHECK_OK(zn_writer_finish(hook_writer));
		zn_writer_free(hook_writer);
		close(fd);
		CHECK(hook_added == DIRS + 1);
	}
	size_t n0, n1;
	uint8_t *a0 = tu_read_file(out[0], &n0), *a1 = tu_read_file(out[1], &n1);
	CHECK(a0 && a1 && n0 == n1 && !memcmp(a0, a1, n0)); /* the same with 1 thread and 4 */
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out[1], NULL, 0));
	for (int d = 0; d < DIRS; d++)
		for (int f = 0; f < FILES; f++) {
			const char *path = tu_str("t/d%02d/f%03d", d, f);
			size_t len;
			uint8_t *want = tu_read_file(tu_str("%s/d%02d/f%03d", tree, d, f), &len);
			uint64_t i;
			CHECK_OK(zn_reader_find(r, path, strlen(path), &i));
			static struct collect c;
			c.n = 0;
			CHECK_OK(zn_reader_read_entry(r, i, collect, &c));
			CHECK(want && c.n == len && !memcmp(c.buf, want, len));
			free(want);
		}
	zn_reader_free(r);
	free(a0);
	free(a1);
	free(out[0]);
	free(out[1]);
	free(tree);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_inputs");
	char *root = tu_mkdtemp();
	for (int no_uring = 0; no_uring < 2; no_uring++) {
		interval_timer(root, no_uring);
		vanished_file(root, no_uring, 0);
		vanished_file(root, no_uring, 1);
		grown_file(root, no_uring);
		shrunk_files(root, no_uring);
	}
	empty_names(root);
	given_twice(root);
	meta_hook(root);
	hardlink_to_unread(root);
	writer_read_fails(root);
	stream_failures(root);
	deep_tree(root);
	hook_adds_entries(root);
	tu_rmtree(root);
	free(root);
	puts("ok");
	return 0;
}
