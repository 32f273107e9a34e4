/* SPDX-License-Identifier: MIT */
/* test_archive_prefix.c - random access decodes a solid block only as far as a file needs, one
 * zstd block a call (block_prefix): every file of a 2 MiB solid block whose zstd frame holds
 * compressed, raw and RLE blocks (text, random bytes, runs of one byte) reads back exactly,
 * whether the cache already holds a longer prefix (files read last to first) or must be decoded
 * further (first to last: the decoding goes on where it stopped, the block is begun once), and
 * from a fresh reader for each file. The frame is parsed here to
 * make sure that it holds every kind of block, or the test would not test the walk over them. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "archive/archive_block.h"
#include "test_util.h"
#include "znippy.h"

#define NFILES 24

struct file {
	char path[32];
	uint8_t *data;
	size_t len;
};

static struct file files[NFILES];

struct cmp {
	const struct file *f;
	size_t at;
};

static zn_result sink_cmp(void *ctx, const void *p, size_t n)
{
	struct cmp *c = ctx;
	CHECK(c->at + n <= c->f->len && !memcmp(c->f->data + c->at, p, n));
	c->at += n;
	return ZN_OK;
}

/* Counts the zstd blocks of each type (raw, RLE, compressed) in the frame at p. */
static void count_blocks(const uint8_t *p, size_t n, unsigned kinds[3])
{
	CHECK(n >= 6 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD);
	const unsigned fhd = p[4], single = fhd >> 5 & 1, fcs = fhd >> 6;
	static const unsigned did[4] = {0, 1, 2, 4}, fcs_len[4] = {0, 2, 4, 8};
	size_t w = 5 + !single + did[fhd & 3] + (fcs ? fcs_len[fcs] : single);
	for (;;) {
		CHECK(w + 3 <= n);
		uint32_t h = p[w] | (uint32_t)p[w + 1] << 8 | (uint32_t)p[w + 2] << 16;
		unsigned type = h >> 1 & 3;
		CHECK(type != 3);
		kinds[type == 2 ? 2 : type]++;
		w += 3 + (type == 1 ? 1 : h >> 3);
		if (h & 1)
			break;
	}
	CHECK(w <= n);
}

static void read_back(struct zn_reader *r, int i)
{
	uint64_t idx;
	CHECK_OK(zn_reader_find(r, files[i].path, strlen(files[i].path), &idx));
	struct cmp c = {&files[i], 0};
	CHECK_OK(zn_reader_read_entry(r, idx, sink_cmp, &c));
	CHECK_EQ_U64(c.at, files[i].len);
}

/* Files read in path order that come back to a block met before (here each directory's copy of
 * one license, stored once in the first block, between files of the later blocks) find it still
 * decoded: every block is decoded once, where a cache of one block began the two in turn for
 * every directory. */
static void back_and_forth(const char *dir, struct tu_rng *g)
{
	enum { NDIRS = 60, UNIQUE = 20000, LICENSE = 5000 };
	static struct tu_file tf[2 * NDIRS];
	static char names[2 * NDIRS][16];
	uint8_t *license = malloc(LICENSE), *unique = malloc((size_t)NDIRS * UNIQUE);
	CHECK(license && unique);
	tu_fill_text(g, license, LICENSE);
	tu_fill_text(g, unique, (size_t)NDIRS * UNIQUE);
	for (int d = 0; d < NDIRS; d++) {
		snprintf(names[2 * d], sizeof(names[0]), "d%02d/a", d);
		snprintf(names[2 * d + 1], sizeof(names[0]), "d%02d/b", d);
		tf[2 * d] = (struct tu_file){names[2 * d], unique + (size_t)d * UNIQUE, UNIQUE};
		tf[2 * d + 1] = (struct tu_file){names[2 * d + 1], license, LICENSE};
	}
	char *out = tu_str("%s/dup.zn", dir);
	struct zn_create_options o = tu_small_blocks(1);
	tu_archive_files(out, &o, tf, 2 * NDIRS);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	CHECK(info.blocks >= 10 && info.stored_blocks == 0);
	for (uint64_t i = 0; i < zn_reader_count(r); i++) {
		struct zn_entry e;
		CHECK_OK(zn_reader_entry(r, i, &e));
		if (e.type != ZN_TYPE_FILE)
			continue;
		const int d = (e.path[1] - '0') * 10 + (e.path[2] - '0'), b = e.path[4] == 'b';
		struct file f = {.data = b ? license : unique + (size_t)d * UNIQUE,
		                 .len = b ? LICENSE : UNIQUE};
		struct cmp c = {&f, 0};
		CHECK_OK(zn_reader_read_entry(r, i, sink_cmp, &c));
		CHECK(c.at == f.len);
	}
	CHECK_EQ_U64(atomic_load(&r->blocks_loaded), info.blocks);
	zn_reader_free(r);
	free(license);
	free(unique);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_prefix");
	char *dir = tu_mkdtemp();
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	/* About 1.5 MiB in all, under the 2 MiB chunk set below (over the default): one solid
	 * block. Files 5 and 17 are random, 9 and 21 a run of one byte, 300 KiB each (so that each
	 * covers at least one whole 128 KiB zstd block: a raw one, an RLE one), the rest text of
	 * 4-24 KiB. */
	size_t total = 0;
	for (int i = 0; i < NFILES; i++) {
		struct file *f = &files[i];
		snprintf(f->path, sizeof(f->path), "d/f%02d", i);
		int kind = i % 12 == 5 ? 1 : i % 12 == 9 ? 2 : 0;
		f->len = kind ? 300 << 10 : 4096 + tu_rng_below(&g, 20 << 10);
		f->data = malloc(f->len);
		CHECK(f->data);
		if (kind == 1)
			tu_rng_fill(&g, f->data, f->len);
		else if (kind == 2)
			memset(f->data, 'a' + i % 26, f->len);
		else
			tu_fill_text(&g, f->data, f->len);
		total += f->len;
	}
	CHECK(total < (2u << 20));

	char *out = tu_str("%s/p.zn", dir);
	struct zn_create_options o;
	zn_create_options_init(&o);
	o.threads = 1;
	o.chunk_size = 2u << 20;
	struct tu_file tf[NFILES];
	for (int i = 0; i < NFILES; i++)
		tf[i] = (struct tu_file){files[i].path, files[i].data, files[i].len};
	tu_archive_files(out, &o, tf, NFILES);

	/* One compressed block, and its frame holds raw, RLE and compressed zstd blocks. */
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	CHECK_EQ_U64(info.blocks, 1);
	CHECK_EQ_U64(info.stored_blocks, 0);
	struct zn_blockinfo bi;
	CHECK_OK(zn_block_info(r, 0, &bi));
	CHECK_EQ_U64(bi.csize, info.compressed_bytes);
	size_t alen;
	uint8_t *arch = tu_read_file(out, &alen);
	CHECK(arch && alen > bi.offset + bi.csize);
	unsigned kinds[3] = {0};
	count_blocks(arch + bi.offset, bi.csize, kinds);
	const int every_kind = kinds[0] && kinds[1] && kinds[2];
	if (!every_kind)
		fprintf(stderr, "raw %u, RLE %u, compressed %u zstd blocks\n", kinds[0], kinds[1],
		        kinds[2]);
	CHECK(every_kind);
	free(arch);

	/* Last to first: the first read decodes nearly all, the rest come from the cache. Then
	 * first to last: the cache holds less than each next file needs. */
	for (int i = NFILES - 1; i >= 0; i--)
		read_back(r, i);
	zn_reader_free(r);
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	for (int i = 0; i < NFILES; i++)
		read_back(r, i);
	/* The decoding went on from where the last file left it: the block was begun once. */
	CHECK_EQ_U64(atomic_load(&r->blocks_loaded), 1);
	zn_reader_free(r);
	/* Each file from a fresh reader: a decode from the frame's start to that file alone. */
	for (int i = 0; i < NFILES; i++) {
		CHECK_OK(zn_reader_open(&r, out, NULL, 0));
		read_back(r, i);
		zn_reader_free(r);
	}
	for (int i = 0; i < NFILES; i++)
		free(files[i].data);
	back_and_forth(dir, &g);
	tu_rmtree(dir);
	free(dir);
	return 0;
}
