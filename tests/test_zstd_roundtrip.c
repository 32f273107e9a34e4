/* SPDX-License-Identifier: MIT */
/* test_zstd_roundtrip.c - frames libzstd writes at every level, --fast=5 to --ultra -22, of text,
 * binaries, random data, zeros and int64 columns, decode byte-exactly: whole into guard pages
 * and streaming in random pieces, with the CPU's kernels and the portable ones. */
#include "zstd_test_util.h"

static void roundtrip(struct zn_zstd_decoder *d[2], struct tu_rng *g, enum zt_kind kind, size_t n,
                      const struct zt_params *p)
{
	uint8_t *src = malloc(n + 1);
	CHECK(src != NULL);
	zt_fill(g, src, n, kind);
	size_t zlen;
	uint8_t *z = zt_compress(src, n, p, &zlen);
	char what[160];
	snprintf(what, sizeof(what),
	         "%s, %zu bytes, level %d%s%s, wlog %d%s, %d workers%s, %d pieces",
	         zt_kind_name[kind], n, p->level, p->checksum ? ", checksum" : "",
	         p->no_size ? ", no size" : "", p->window_log, p->long_match ? ", long" : "",
	         p->workers, p->rsyncable ? ", rsyncable" : "", p->block_pieces);
	for (int k = 0; k < 2; k++)
		zt_check(d[k], z, zlen, src, n, g, what);
	free(z);
	free(src);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_zstd_roundtrip");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	struct zn_zstd_decoder *d[2];
	CHECK_OK(zn_zstd_decoder_new(&d[0]));
	CHECK_OK(zn_zstd_decoder_new(&d[1]));
	zn_zstd_decoder_force_generic(d[1]);
	printf("kernels: %s and %s\n", zn_zstd_decoder_kernel_name(d[0]),
	       zn_zstd_decoder_kernel_name(d[1]));

	/* Every level on every kind of data; the slow levels on less of it. ZN_TEST_QUICK: an
	 * eighth of it, frames of one to a few blocks. */
	int frames = 0;
	const size_t q = tu_quick ? 8 : 1;
	for (int level = -5; level <= 22; level++) {
		for (int kind = 0; kind < ZT_NKINDS; kind++) {
			struct zt_params p = {.level = level, .checksum = (level + kind) & 1};
			size_t n = level >= 16 ? (100000 + tu_rng_below(&g, 100000)) / q
			                       : (200000 + tu_rng_below(&g, 300000)) / q;
			roundtrip(d, &g, (enum zt_kind)kind, n, &p);
			frames++;
		}
	}
	/* Frames without content size (as a pipe gives them), many blocks, small windows (the
	 * streaming buffer wraps many times; the window is smaller than a block), sizes around
	 * the block size. */
	static const size_t sizes[] = {0,    1,      2,      5,      100,    1023,   1024,
	                               1025, 131071, 131072, 131073, 262145, 1000000};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (tu_quick && sizes[i] > 262145)
			break;
		for (int kind = 0; kind < ZT_NKINDS; kind++) {
			struct zt_params p = {.level = 1 + (int)tu_rng_below(&g, 19),
			                      .checksum = (int)tu_rng_below(&g, 2),
			                      .no_size = (int)tu_rng_below(&g, 2),
			                      .block_pieces = (int)tu_rng_below(&g, 4)};
			roundtrip(d, &g, (enum zt_kind)kind, sizes[i], &p);
			p.window_log = 10 + (int)tu_rng_below(&g, 8);
			roundtrip(d, &g, (enum zt_kind)kind, sizes[i], &p);
			frames += 2;
		}
	}
	/* Multithreaded compression (several jobs, overlapping windows) and --rsyncable. */
	for (int kind = 0; kind < ZT_NKINDS && !tu_no_threads; kind++) {
		struct zt_params p = {.level = 3, .checksum = 1, .workers = 2};
		roundtrip(d, &g, (enum zt_kind)kind, 3000000, &p);
		p.rsyncable = 1;
		p.level = 5;
		roundtrip(d, &g, (enum zt_kind)kind, 3000000, &p);
		p.no_size = 1;
		p.level = 19;
		p.window_log = 18;
		roundtrip(d, &g, (enum zt_kind)kind, tu_quick ? 300000 : 1000000, &p);
		frames += 3;
	}
	printf("%d frames decoded byte-exactly\n", frames);
	zn_zstd_decoder_free(d[0]);
	zn_zstd_decoder_free(d[1]);
	puts("ok");
	return 0;
}
