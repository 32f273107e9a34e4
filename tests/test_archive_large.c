/* SPDX-License-Identifier: MIT */
/* test_archive_large.c - large files read from disk. Their chunks that are stored as they are
 * (random ones, known-compressed types) are read by the writer thread itself, the others by
 * the producer (slot.rfd in lib/archive/archive_write.c): a file whose chunks take turns between
 * the two, random files, a jar, a file of exactly one chunk, a copy of an earlier file (stored
 * once), with small files between them. The blocks must be the same as when the same bytes are
 * added from memory (which the producer reads all of), the archive the same whatever the thread
 * count, every block at a multiple of 64, and every file must read back and verify. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive_format.h"
#include "archive/archive_block.h"
#include "test_util.h"
#include "znippy.h"

#define CHUNK (256u << 10) /* chunks of 128 KiB and more are sampled before compressing */

struct file {
	const char *name;
	uint8_t *data;
	size_t size;
};

static struct file files[16];
static int nfiles;

static void text(uint8_t *p, size_t n, unsigned salt)
{
	static const char line[] = "the quick brown fox jumps over the lazy dog\n";
	for (size_t k = 0; k < n; k++)
		p[k] = (uint8_t)line[(k * 7 + salt) % (sizeof(line) - 1)];
}

/* The files, in the order a walk meets them (their names' byte order). */
static void make_files(struct tu_rng *g)
{
	static const struct {
		const char *name;
		size_t size;
		const char *kinds; /* per chunk: r random, t text; the last letter for the rest */
	} spec[] = {
	        {"a-small.txt", 5000, "t"},
	        {"b-mixed.dat", 4 * CHUNK + 150000, "rtrtt"}, /* last chunk 146 KiB, sampled */
	        {"c-random.bin", 3 * CHUNK + 77, "r"},        /* a last chunk too short to sample */
	        {"d-small.txt", 9000, "t"},
	        {"e-exact.bin", CHUNK, "r"},
	        {"f-lib.jar", 2 * CHUNK + 1000, "t"}, /* stored by its name */
	        {"g-copy.bin", 3 * CHUNK + 77, "="},  /* c-random's bytes */
	        {"h-text.log", 2 * CHUNK + 5, "t"},
	        {"i-small.txt", 300, "t"},
	};
	nfiles = (int)(sizeof(spec) / sizeof(spec[0]));
	for (int i = 0; i < nfiles; i++) {
		struct file *f = &files[i];
		f->name = spec[i].name;
		f->size = spec[i].size;
		f->data = malloc(f->size);
		CHECK(f->data);
		if (spec[i].kinds[0] == '=') {
			memcpy(f->data, files[2].data, f->size);
			continue;
		}
		size_t nk = strlen(spec[i].kinds);
		for (size_t off = 0, c = 0; off < f->size; off += CHUNK, c++) {
			size_t n = f->size - off < CHUNK ? f->size - off : CHUNK;
			if (spec[i].kinds[c < nk ? c : nk - 1] == 'r')
				tu_rng_fill(g, f->data + off, n);
			else
				text(f->data + off, n, (unsigned)(i + c));
		}
	}
}

static struct zn_create_options options(unsigned threads, int digest)
{
	struct zn_create_options o;
	zn_create_options_init(&o);
	o.chunk_size = CHUNK;
	o.threads = threads;
	o.digest = digest;
	return o;
}

static void from_disk(const char *dir, const char *out, unsigned threads, int digest)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_create_options o = options(threads, digest);
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, &o, NULL));
	CHECK_OK(zn_writer_add_path(w, dir, "t"));
	CHECK_OK(zn_writer_finish(w));
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	zn_writer_stats(w, &st);
	CHECK(st.complete && st.duplicates == (digest == ZN_DIGEST_SHA256));
	zn_writer_free(w);
	CHECK(close(fd) == 0);
}

static void from_memory(const char *out, int digest)
{
	struct zn_create_options o = options(2, digest);
	struct tu_file tf[sizeof(files) / sizeof(files[0])];
	for (int i = 0; i < nfiles; i++)
		tf[i] = (struct tu_file){tu_str("t/%s", files[i].name), files[i].data,
		                         files[i].size};
	tu_archive_files(out, &o, tf, (size_t)nfiles);
}

static zn_result compare(void *ctx, const void *data, size_t len)
{
	struct file *f = ctx;
	CHECK(len <= f->size && !memcmp(f->data, data, len));
	f->data += len;
	f->size -= len;
	return ZN_OK;
}

/* Every file reads back; verify passes; the blocks are aligned; returns the block count. */
static uint64_t check_archive(const char *path, uint64_t *stored)
{
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, path, NULL, 0));
	CHECK_OK(zn_verify(r, 2, NULL));
	for (int i = 0; i < nfiles; i++) {
		char *rel = tu_fmt("t/%s", files[i].name);
		uint64_t at;
		CHECK_OK(zn_reader_find(r, rel, strlen(rel), &at));
		struct file left = files[i];
		CHECK_OK(zn_reader_read_entry(r, at, compare, &left));
		CHECK(left.size == 0);
		free(rel);
	}
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	for (uint64_t b = 0; b < info.blocks; b++) {
		struct zn_blockinfo bi;
		CHECK_OK(zn_block_info(r, b, &bi));
		CHECK(bi.offset % ZN_BLOCK_ALIGN == 0);
	}
	*stored = info.stored_blocks;
	zn_reader_free(r);
	return info.blocks;
}

/* The blocks of two archives hold the same bytes, the same way. */
static void same_blocks(const char *a, const char *b)
{
	struct zn_reader *ra, *rb;
	CHECK_OK(zn_reader_open(&ra, a, NULL, 0));
	CHECK_OK(zn_reader_open(&rb, b, NULL, 0));
	struct zn_archive_info ia = {.struct_size = sizeof(ia)}, ib = {.struct_size = sizeof(ib)};
	zn_reader_info(ra, &ia);
	zn_reader_info(rb, &ib);
	CHECK_EQ_U64(ia.blocks, ib.blocks);
	for (uint64_t k = 0; k < ia.blocks; k++) {
		struct zn_blockinfo x, y;
		CHECK_OK(zn_block_info(ra, k, &x));
		CHECK_OK(zn_block_info(rb, k, &y));
		CHECK(x.codec == y.codec && x.usize == y.usize && x.csize == y.csize &&
		      x.xxh3 == y.xxh3 && x.cxxh3 == y.cxxh3);
	}
	zn_reader_free(ra);
	zn_reader_free(rb);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_large");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	make_files(&g);
	char *root = tu_mkdtemp(), *dir = tu_fmt("%s/t", root);
	CHECK(!mkdir(dir, 0755));
	for (int i = 0; i < nfiles; i++)
		CHECK(!tu_write_file(tu_str("%s/%s", dir, files[i].name), files[i].data,
		                     files[i].size));
	for (int digest = ZN_DIGEST_NONE; digest <= ZN_DIGEST_SHA256; digest++) {
		char *a1 = tu_fmt("%s/one.zn", root), *a3 = tu_fmt("%s/three.zn", root);
		char *am = tu_fmt("%s/mem.zn", root);
		from_disk(dir, a1, 1, digest);
		from_disk(dir, a3, 3, digest);
		from_memory(am, digest);
		size_t l1, l3;
		uint8_t *d1 = tu_read_file(a1, &l1), *d3 = tu_read_file(a3, &l3);
		CHECK(d1 && d3 && l1 == l3 && !memcmp(d1, d3, l1));
		free(d1);
		free(d3);
		uint64_t stored, mstored;
		/* Stored: b's 2 random chunks (its 3 text ones compressed), c's 3 and its 77-byte
		 * tail (which does not shrink either), e, f's 3 (a jar), h's 5-byte tail (its 2
		 * chunks compressed), and g (c's copy) only without digests; a, d and i are
		 * packed and compressed. */
		uint64_t blocks = check_archive(a1, &stored);
		CHECK(check_archive(am, &mstored) == blocks && mstored == stored);
		const int dedup = digest == ZN_DIGEST_SHA256;
		CHECK_EQ_U64(stored, 2 + 4 + 1 + 3 + 1 + (dedup ? 0 : 4));
		same_blocks(a1, am);
		free(a1);
		free(a3);
		free(am);
	}
	tu_rmtree(root);
	for (int i = 0; i < nfiles; i++)
		free(files[i].data);
	free(dir);
	free(root);
	puts("ok");
	return 0;
}
