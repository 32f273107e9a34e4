/* SPDX-License-Identifier: MIT */
/* test_archive_dedup.c - a file identical to an earlier one is stored once.
 *
 * A tree of random files with copies beside their originals (compared while the original's
 * bytes are still in memory) and at the end of the walk (compared by SHA-256, the original's
 * block long written): its blocks must be byte for byte those of the same tree without the
 * copies, with and without io_uring and with any thread count; every copy must read back and
 * extract whole; --no-dedup and --digest none store every copy. From memory: a copy is found
 * whether its original's slot was filled again or not, and a near copy is not taken for one.
 * Files of at least the chunk size likewise (see large()). */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive_format.h"
#include "archive/archive_block.h"
#include "common/common.h"
#include "test_util.h"

enum { NORIG = 240, NCOPY = 60 };

static char *root;

/* 64 KiB blocks and the least memory: few slots, filled again often, so that copies are found
 * both in memory and by SHA-256. */
static struct zn_create_options small_blocks(void)
{
	return tu_small_blocks(2);
}

static struct zn_writer *open_writer(const char *out, const struct zn_create_options *o,
                                     const struct zn_hooks *hooks, int *fd)
{
	*fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(*fd >= 0);
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, *fd, o, hooks));
	return w;
}

static void last_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)total;
	*(uint64_t *)ctx = done;
}

/* Also checks that the progress hook's last count is the whole content: files stored once for
 * an earlier copy count as done too. */
static zn_result make_archive(const char *dir, const char *out, const struct zn_create_options *o,
                              struct zn_write_stats *st)
{
	int fd;
	uint64_t done = 0;
	struct zn_hooks hooks = {
	        .struct_size = sizeof(hooks), .ctx = &done, .progress = last_progress};
	struct zn_writer *w = open_writer(out, o, &hooks, &fd);
	zn_result a = zn_writer_add_path(w, dir, "t");
	zn_result f = zn_writer_finish(w);
	zn_writer_stats(w, st);
	zn_writer_free(w);
	close(fd);
	if (a == ZN_OK && f == ZN_OK)
		CHECK_EQ_U64(done, st->content_bytes);
	return a != ZN_OK ? a : f;
}

/* The bytes of an archive up to its index: header and blocks. */
static uint8_t *data_area(const char *path, size_t *len)
{
	size_t n;
	uint8_t *a = tu_read_file(path, &n);
	CHECK(a && n > ZN_FOOTER_SIZE);
	*len = (size_t)zn_get_le64(a + n - ZN_FOOTER_SIZE);
	CHECK(*len < n);
	return a;
}

static void check_same_blocks(const char *x, const char *y)
{
	size_t nx, ny;
	uint8_t *a = data_area(x, &nx), *b = data_area(y, &ny);
	CHECK(nx == ny && !memcmp(a, b, nx));
	free(a);
	free(b);
}

static void check_files_equal(const char *a, const char *b)
{
	size_t na, nb;
	uint8_t *x = tu_read_file(a, &na), *y = tu_read_file(b, &nb);
	CHECK(x && y && na == nb && !memcmp(x, y, na));
	free(x);
	free(y);
}

static zn_result sink_cmp(void *ctx, const void *data, size_t len)
{
	const uint8_t **p = ctx;
	CHECK(!memcmp(*p, data, len));
	*p += len;
	return ZN_OK;
}

static void tree(void)
{
	char *with = tu_fmt("%s/with", root), *without = tu_fmt("%s/without", root);
	CHECK(!mkdir(with, 0755) && !mkdir(without, 0755));
	struct tu_rng g;
	tu_rng_seed(&g, 11);
	static uint8_t buf[20000];
	int copies = 0;
	for (int i = 0; i < NORIG; i++) {
		size_t n = 1 + tu_rng_below(&g, sizeof(buf));
		tu_rng_fill(&g, buf, n);
		CHECK(!tu_write_file(tu_str("%s/a%03d", with, i), buf, n));
		CHECK(!tu_write_file(tu_str("%s/a%03d", without, i), buf, n));
		if (i % 8 == 3) { /* right after its original: in the same read batch */
			CHECK(!tu_write_file(tu_str("%s/a%03d-copy", with, i), buf, n));
			copies++;
		}
	}
	for (int i = 0; i < NCOPY; i++) { /* at the end, copies of originals from all over */
		int o = (int)tu_rng_below(&g, NORIG);
		check_files_equal(tu_str("%s/a%03d", with, o), tu_str("%s/a%03d", without, o));
		size_t n;
		uint8_t *d = tu_read_file(tu_str("%s/a%03d", with, o), &n);
		CHECK(!tu_write_file(tu_str("%s/z%03d", with, i), d, n));
		free(d);
		copies++;
	}
	/* A near copy: one byte differs. Not a duplicate. */
	size_t n0;
	uint8_t *d = tu_read_file(tu_str("%s/a%03d", with, 0), &n0);
	d[n0 - 1] ^= 1;
	CHECK(!tu_write_file(tu_str("%s/zz-near", with), d, n0));
	CHECK(!tu_write_file(tu_str("%s/zz-near", without), d, n0));
	free(d);

	struct zn_create_options o = small_blocks(); /* about 40 blocks */
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	char *base = tu_fmt("%s/without.zn", root);
	CHECK_OK(make_archive(without, base, &o, &st));
	CHECK(st.duplicates == 0);
	for (int no_uring = 0; no_uring < 2; no_uring++)
		for (unsigned t = 1; t <= 3; t += 2) {
			o.no_uring = no_uring;
			o.threads = t;
			char *out = tu_str("%s/with%d%u.zn", root, no_uring, t);
			CHECK_OK(make_archive(with, out, &o, &st));
			CHECK(st.duplicates == (uint64_t)copies);
			check_same_blocks(base, out);
		}
	o.no_uring = 0;

	/* Every copy reads back and extracts whole. */
	char *out = tu_str("%s/with03.zn", root), *x = tu_fmt("%s/x", root);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	CHECK_OK(zn_verify(r, 2, NULL));
	CHECK_OK(zn_extract(r, x, NULL, NULL, NULL));
	for (uint64_t i = 0; i < zn_reader_count(r); i++) {
		struct zn_entry e;
		CHECK_OK(zn_reader_entry(r, i, &e));
		if (e.type != ZN_TYPE_FILE)
			continue;
		char *name = tu_fmt("%.*s", (int)e.path_len - 2, e.path + 2);
		size_t n;
		uint8_t *want = tu_read_file(tu_str("%s/%s", with, name), &n);
		const uint8_t *p = want;
		CHECK(want && n == e.size);
		CHECK_OK(zn_reader_read_entry(r, i, sink_cmp, &p));
		CHECK(p == want + n);
		check_files_equal(tu_str("%s/%s", with, name), tu_str("%s/t/%s", x, name));
		free(want);
		free(name);
	}
	zn_reader_free(r);

	/* Without deduplication, or without digests, every copy is stored. */
	struct stat s1, s2;
	o.no_dedup = 1;
	char *plain = tu_fmt("%s/nodedup.zn", root);
	CHECK_OK(make_archive(with, plain, &o, &st));
	CHECK(st.duplicates == 0);
	CHECK(!stat(out, &s1) && !stat(plain, &s2) && s2.st_size > s1.st_size);
	o.no_dedup = 0;
	o.digest = ZN_DIGEST_NONE;
	CHECK_OK(make_archive(with, plain, &o, &st));
	CHECK(st.duplicates == 0);
	free(plain);
	free(base);
	free(x);
	free(with);
	free(without);
}

/* Trees built from (name, content id, size) with and without their copies. */
struct spec {
	const char *name;
	int id; /* files with the same id have the same content */
	size_t size;
	int copy; /* left out of the tree without copies */
};

static void build(const char *dir, const struct spec *f, int n, int with_copies)
{
	CHECK(!mkdir(dir, 0755));
	static uint8_t buf[65536];
	for (int i = 0; i < n; i++) {
		if (f[i].copy && !with_copies)
			continue;
		struct tu_rng g;
		tu_rng_seed(&g, 100 + (uint64_t)f[i].id);
		tu_rng_fill(&g, buf, f[i].size);
		CHECK(!tu_write_file(tu_str("%s/%s", dir, f[i].name), buf, f[i].size));
	}
}

/* The layouts the first version of this got wrong: a copy that does not fit in the block being
 * filled closed it; a block that received only copies was written empty; and with io_uring the
 * compress-class packer was judged before the store-class one, so a .jar and its later copy
 * under another name swapped roles. */
static void edge_cases(void)
{
	static const struct spec sets[][5] = {
	        {{"a", 1, 40000, 0}, {"a-copy", 1, 40000, 1}, {"b", 2, 20000, 0}},
	        {{"a.txt", 3, 3000, 0}, {"b.png", 3, 3000, 1}},
	        {{"x.jar", 4, 5000, 0}, {"x.jar.orig", 4, 5000, 1}, {"y", 5, 7000, 0}},
	        {{"a", 6, 60000, 0},
	         {"b", 7, 30000, 0},
	         {"c-copy", 6, 60000, 1},
	         {"d", 8, 30000, 0}},
	        /* both packers in one batch; store-class files read aside among the others */
	        {{"a", 9, 40000, 0},
	         {"b.png", 10, 40000, 0},
	         {"c.png", 11, 40000, 0},
	         {"d.png", 9, 40000, 1},
	         {"e", 12, 40000, 0}},
	};
	struct zn_create_options o = small_blocks();
	for (size_t t = 0; t < ZN_ARRAY_LEN(sets); t++) {
		int n = 0, copies = 0;
		while (n < 5 && sets[t][n].name)
			copies += sets[t][n++].copy;
		char *with = tu_fmt("%s/edge%zu", root, t),
		     *without = tu_fmt("%s/edge%zu-", root, t);
		build(with, sets[t], n, 1);
		build(without, sets[t], n, 0);
		struct zn_write_stats st = {.struct_size = sizeof(st)};
		char *base = tu_fmt("%s.zn", without);
		CHECK_OK(make_archive(without, base, &o, &st));
		uint64_t blocks = st.blocks;
		for (int no_uring = 0; no_uring < 2; no_uring++) {
			o.no_uring = no_uring;
			char *out = tu_str("%s-%d.zn", with, no_uring);
			CHECK_OK(make_archive(with, out, &o, &st));
			CHECK(st.duplicates == (uint64_t)copies);
			CHECK(st.blocks == blocks);
			check_same_blocks(base, out);
			if (no_uring)
				check_files_equal(tu_str("%s-0.zn", with), out);
		}
		o.no_uring = 0;
		free(base);
		free(with);
		free(without);
	}
}

/* From memory: `a`, 40 blocks of other data (its slot is filled again), then its copy `b`, a
 * near copy `c`, and `d`, a copy of the entry just before it (still in memory). */
static void memory(void)
{
	char *out = tu_fmt("%s/mem.zn", root);
	const struct zn_create_options o = small_blocks();
	int fd;
	struct zn_writer *w = open_writer(out, &o, NULL, &fd);
	struct tu_rng g;
	tu_rng_seed(&g, 5);
	static uint8_t x[1000], y[1000], fill[40000];
	tu_rng_fill(&g, x, sizeof(x));
	memcpy(y, x, sizeof(y));
	y[500] ^= 0x80;
	struct zn_entry e = {.type = ZN_TYPE_FILE, .mode = 0644, .size = sizeof(x)};
	e.path = "a", e.path_len = 1;
	CHECK_OK(zn_writer_add_memory(w, &e, x));
	e.size = sizeof(fill);
	for (int i = 0; i < 80; i++) {
		tu_rng_fill(&g, fill, sizeof(fill));
		char *name = tu_fmt("fill%02d", i);
		e.path = name, e.path_len = strlen(name);
		CHECK_OK(zn_writer_add_memory(w, &e, fill));
		free(name);
	}
	e.size = sizeof(x);
	e.path = "b", e.path_len = 1;
	CHECK_OK(zn_writer_add_memory(w, &e, x));
	e.path = "c", e.path_len = 1;
	CHECK_OK(zn_writer_add_memory(w, &e, y));
	e.path = "d", e.path_len = 1;
	CHECK_OK(zn_writer_add_memory(w, &e, y));
	CHECK_OK(zn_writer_finish(w));
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	zn_writer_stats(w, &st);
	CHECK(st.duplicates == 2);
	zn_writer_free(w);
	close(fd);

	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	CHECK_OK(zn_verify(r, 2, NULL));
	struct zn_entry ea, eb, ec, ed;
	uint64_t ia, ib, ic, id;
	CHECK_OK(zn_reader_find(r, "a", 1, &ia));
	CHECK_OK(zn_reader_find(r, "b", 1, &ib));
	CHECK_OK(zn_reader_find(r, "c", 1, &ic));
	CHECK_OK(zn_reader_find(r, "d", 1, &id));
	CHECK_OK(zn_reader_entry(r, ia, &ea));
	CHECK_OK(zn_reader_entry(r, ib, &eb));
	CHECK_OK(zn_reader_entry(r, ic, &ec));
	CHECK_OK(zn_reader_entry(r, id, &ed));
	CHECK(ea.first_block == 0 && eb.first_block == 0 && eb.block_offset == ea.block_offset);
	CHECK(!memcmp(ea.sha256, eb.sha256, 32));
	CHECK(ec.first_block > 0 && ed.first_block == ec.first_block &&
	      ed.block_offset == ec.block_offset);
	const uint8_t *p = x;
	CHECK_OK(zn_reader_read_entry(r, ib, sink_cmp, &p));
	p = y;
	CHECK_OK(zn_reader_read_entry(r, id, sink_cmp, &p));
	zn_reader_free(r);
	free(out);
}

/* Counts the files named as damaged: "t/a", "t/d" and "t/g" in large(). */
static int named;
static void name_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx, (void)r, (void)what;
	named += !strcmp(path, "t/a") || !strcmp(path, "t/d") || !strcmp(path, "t/g");
}

/* Files of at least the chunk size: copies (one right after its original, others later) are
 * stored once, a file of the same size and the same first and last 4 KiB that differs in the
 * middle is not, and the blocks are those of the tree without the copies, whatever the thread
 * count and way of reading. From memory, a copy of the entry just before it (its last chunk
 * maybe not hashed yet) is found too. */
static void large(void)
{
	enum { A = 200000, C = 150000 };
	static uint8_t a[A], b[A], c[C];
	struct tu_rng g;
	tu_rng_seed(&g, 21);
	tu_rng_fill(&g, a, A);
	tu_rng_fill(&g, c, C);
	memcpy(b, a, A);
	b[A / 2] ^= 1;
	char *with = tu_fmt("%s/large", root), *without = tu_fmt("%s/large-", root);
	CHECK(!mkdir(with, 0755) && !mkdir(without, 0755));
	const char *names[] = {"a", "b", "c", "d", "e", "f", "g"};
	const uint8_t *content[] = {a, b, c, a, b, c, a};
	const size_t sizes[] = {A, A, C, A, A, 1000, A};
	const int copy[] = {0, 0, 0, 1, 1, 0, 1};
	for (int i = 0; i < 7; i++) {
		CHECK(!tu_write_file(tu_str("%s/%s", with, names[i]), content[i], sizes[i]));
		if (!copy[i])
			CHECK(!tu_write_file(tu_str("%s/%s", without, names[i]), content[i],
			                     sizes[i]));
	}
	struct zn_create_options o = small_blocks();
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	char *base = tu_fmt("%s.zn", without), *out = tu_fmt("%s.zn", with);
	CHECK_OK(make_archive(without, base, &o, &st));
	uint64_t blocks = st.blocks;
	for (int k = 0; k < 4; k++) {
		o.threads = k < 2 ? 1 : 3;
		o.no_uring = k & 1;
		CHECK_OK(make_archive(with, out, &o, &st));
		CHECK(st.duplicates == 3 && st.blocks == blocks);
		check_same_blocks(base, out);
	}
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	CHECK_OK(zn_verify(r, 2, NULL));
	CHECK(zn_reader_copies(r, NULL) == 3);
	for (int i = 0; i < 7; i++) {
		uint64_t ix;
		char *path = tu_fmt("t/%s", names[i]);
		CHECK_OK(zn_reader_find(r, path, strlen(path), &ix));
		const uint8_t *p = content[i];
		CHECK_OK(zn_reader_read_entry(r, ix, sink_cmp, &p));
		CHECK(p == content[i] + sizes[i]);
		free(path);
	}
	char *x = tu_fmt("%s/x", root);
	struct zn_extract_options xo;
	zn_extract_options_init(&xo);
	xo.check_digest = 1;
	xo.threads = 3;
	CHECK_OK(zn_extract(r, x, NULL, &xo, NULL));
	for (int i = 0; i < 7; i++)
		check_files_equal(tu_str("%s/%s", with, names[i]), tu_str("%s/t/%s", x, names[i]));
	/* A copy alone (its original not selected) is extracted from the shared blocks. */
	uint8_t *select = calloc(zn_reader_count(r), 1);
	uint64_t id;
	CHECK(select);
	CHECK_OK(zn_reader_find(r, "t/d", 3, &id));
	select[id] = 1;
	char *x2 = tu_fmt("%s/x2", root);
	CHECK_OK(zn_extract(r, x2, select, &xo, NULL));
	check_files_equal(tu_str("%s/d", with), tu_str("%s/t/d", x2));
	CHECK(access(tu_str("%s/t/a", x2), F_OK));
	zn_reader_free(r);
	/* A damaged block of `a` is damage to its copies d and g, and to nothing else: each is
	 * named, none is left behind, the rest extract whole. */
	size_t alen;
	uint8_t *arch = tu_read_file(out, &alen);
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	struct zn_entry ea;
	CHECK_OK(zn_reader_find(r, "t/a", 3, &id));
	CHECK_OK(zn_reader_entry(r, id, &ea));
	struct zn_blockinfo bi;
	CHECK_OK(zn_block_info(r, ea.first_block + 1, &bi));
	zn_reader_free(r);
	arch[bi.offset + 10] ^= 1;
	char *bad = tu_fmt("%s/bad.zn", root);
	CHECK(!tu_write_file(bad, arch, alen));
	free(arch);
	CHECK_OK(zn_reader_open(&r, bad, NULL, 0));
	named = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = name_problem}) == ZN_ERR_DAMAGED);
	CHECK(named == 3);
	char *x3 = tu_fmt("%s/x3", root);
	for (int check = 0; check < 2; check++) {
		xo.check_digest = check;
		named = 0;
		CHECK(zn_extract(r, x3, NULL, &xo, &(struct zn_hooks){.problem = name_problem}) ==
		      ZN_ERR_DAMAGED);
		CHECK(named == 3);
		for (int i = 0; i < 7; i++) {
			const char *f = tu_str("%s/t/%s", x3, names[i]);
			if (content[i] == a && sizes[i] == A)
				CHECK(access(f, F_OK));
			else
				check_files_equal(tu_str("%s/%s", with, names[i]), f);
		}
		tu_rmtree(x3);
	}
	zn_reader_free(r);
	free(select);
	free(x2);
	free(x3);
	free(bad);
	o.no_dedup = 1;
	CHECK_OK(make_archive(with, out, &o, &st));
	CHECK(st.duplicates == 0 && st.blocks > blocks);

	o = small_blocks();
	int fd;
	struct zn_writer *w = open_writer(out, &o, NULL, &fd);
	struct zn_entry e = {.type = ZN_TYPE_FILE, .mode = 0644, .size = A};
	const char *mem_names[] = {"m1", "m2", "m3", "m4"};
	const uint8_t *mem[] = {a, a, b, a};
	for (int i = 0; i < 4; i++) {
		e.path = mem_names[i], e.path_len = 2;
		CHECK_OK(zn_writer_add_memory(w, &e, mem[i]));
	}
	CHECK_OK(zn_writer_finish(w));
	zn_writer_stats(w, &st);
	CHECK(st.duplicates == 2);
	zn_writer_free(w);
	close(fd);
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	CHECK_OK(zn_verify(r, 2, NULL));
	for (int i = 0; i < 4; i++) {
		uint64_t ix;
		CHECK_OK(zn_reader_find(r, mem_names[i], 2, &ix));
		const uint8_t *p = mem[i];
		CHECK_OK(zn_reader_read_entry(r, ix, sink_cmp, &p));
	}
	zn_reader_free(r);
	free(x);
	free(base);
	free(out);
	free(with);
	free(without);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_dedup");
	root = tu_mkdtemp();
	tree();
	edge_cases();
	memory();
	large();
	tu_rmtree(root);
	free(root);
	puts("ok");
	return 0;
}
