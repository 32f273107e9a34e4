/* SPDX-License-Identifier: MIT */
/* test_archive_range.c - zn_reader_read_range: any byte range of a file that spans many 64 KiB
 * blocks (text, compressed, and random bytes, stored) comes back exactly, clipped to the file's
 * end, from one reader and from a fresh one; only the blocks that hold the range are read (a
 * range in the last block loads one block); a damaged block fails the ranges that touch it and
 * no other; an entry number out of range is an argument error. */
#include <string.h>

#include "archive/archive_block.h"
#include "test_util.h"
#include "znippy.h"

struct cmp {
	const uint8_t *want;
	uint64_t at;
};

static zn_result sink_cmp(void *ctx, const void *p, size_t n)
{
	struct cmp *c = ctx;
	CHECK(n > 0 && !memcmp(c->want + c->at, p, n));
	c->at += n;
	return ZN_OK;
}

/* Reads [off, off + len) of entry i (of size `size`, bytes `data`) and checks it. */
static void check_range(struct zn_reader *r, uint64_t i, const uint8_t *data, uint64_t size,
                        uint64_t off, uint64_t len)
{
	struct cmp c = {data + (off < size ? off : size), 0};
	CHECK_OK(zn_reader_read_range(r, i, off, len, sink_cmp, &c));
	const uint64_t want = off >= size ? 0 : (len < size - off ? len : size - off);
	if (c.at != want)
		fprintf(stderr, "range %llu+%llu of %llu: got %llu bytes, want %llu\n",
		        (unsigned long long)off, (unsigned long long)len, (unsigned long long)size,
		        (unsigned long long)c.at, (unsigned long long)want);
	CHECK(c.at == want);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_range");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	char *dir = tu_mkdtemp();
	/* A small file first (it shares the first block), then the big one: 1 MiB of text, then
	 * 512 KiB of random bytes, then text again. */
	enum { SMALL = 3000, BIG = (1 << 20) + (512 << 10) + 300000 };
	uint8_t *small = malloc(SMALL), *big = malloc(BIG);
	CHECK(small && big);
	tu_fill_text(&g, small, SMALL);
	tu_fill_text(&g, big, 1 << 20);
	tu_rng_fill(&g, big + (1 << 20), 512 << 10);
	tu_fill_text(&g, big + (1 << 20) + (512 << 10), 300000);
	struct tu_file tf[] = {{"a/small", small, SMALL}, {"b/big", big, BIG}};
	char *out = tu_str("%s/r.zn", dir);
	struct zn_create_options o = tu_small_blocks(1);
	tu_archive_files(out, &o, tf, 2);

	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	CHECK(info.blocks >= 20 && info.stored_blocks >= 4); /* compressed and stored blocks */
	uint64_t is, ib;
	CHECK_OK(zn_reader_find(r, "a/small", 7, &is));
	CHECK_OK(zn_reader_find(r, "b/big", 5, &ib));
	struct cmp none = {big, 0};
	CHECK(zn_reader_read_range(r, zn_reader_count(r), 0, 10, sink_cmp, &none) ==
	      ZN_ERR_INVALID_ARG);

	/* Edges: empty ranges, past the end, block boundaries, the whole file. */
	const uint64_t B = o.chunk_size;
	check_range(r, ib, big, BIG, 0, 0);
	check_range(r, ib, big, BIG, BIG, 10);
	check_range(r, ib, big, BIG, BIG + 5, 10);
	check_range(r, ib, big, BIG, BIG - 1, 10);
	check_range(r, ib, big, BIG, 0, UINT64_MAX);
	check_range(r, is, small, SMALL, 100, 200);
	check_range(r, is, small, SMALL, 0, SMALL + 1);
	for (uint64_t k = 1; k * B < BIG; k++)
		for (int d = -2; d <= 2; d++)
			check_range(r, ib, big, BIG, k * B - SMALL + (uint64_t)(int64_t)d,
			            1 + tu_rng_below(&g, 3 * B));
	/* Random ranges, in random order (the cache holds blocks in part and whole). */
	for (int k = 0; k < 300; k++) {
		uint64_t off = tu_rng_below(&g, BIG + 100);
		check_range(r, ib, big, BIG, off, tu_rng_below(&g, 4 * B));
	}
	zn_reader_free(r);

	/* From a fresh reader, a range in the last block loads that block alone. */
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	check_range(r, ib, big, BIG, BIG - 1000, 500);
	CHECK_EQ_U64(atomic_load(&r->blocks_loaded), 1);
	/* The block that holds byte 700,000 of the big file is damaged: ranges that touch it fail,
	 * the others still read. */
	const uint64_t at = 700000, blk = (SMALL + at) / B;
	struct zn_blockinfo bi;
	CHECK_OK(zn_block_info(r, blk, &bi));
	zn_reader_free(r);
	size_t alen;
	uint8_t *arch = tu_read_file(out, &alen);
	CHECK(arch && bi.offset + bi.csize <= alen);
	arch[bi.offset + bi.csize / 2] ^= 0x40;
	char *bad = tu_str("%s/bad.zn", dir);
	CHECK(tu_write_file(bad, arch, alen) == 0);
	CHECK_OK(zn_reader_open(&r, bad, NULL, 0));
	struct cmp c = {big + at, 0};
	CHECK(zn_reader_read_range(r, ib, at, 10, sink_cmp, &c) == ZN_ERR_CHECKSUM);
	check_range(r, ib, big, BIG, at + 2 * B, 3 * B);
	check_range(r, ib, big, BIG, 0, at - 2 * B);
	zn_reader_free(r);

	free(arch);
	free(small);
	free(big);
	tu_rmtree(dir);
	free(dir);
	printf("test_archive_range: ok\n");
	return 0;
}
