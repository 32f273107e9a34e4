/* SPDX-License-Identifier: MIT */
/* test_zstd_long.c - long windows (--long=27): matches tens of MiB back, the streaming window of
 * 128 MiB with its memory limit, a window over the limit refused before anything is allocated. */
#include "zstd_test_util.h"

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_zstd_long");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	struct zn_zstd_decoder *d;
	CHECK_OK(zn_zstd_decoder_new(&d));

	/* 40 MB where 16 MiB of random bytes come back 24 MiB later, and text between: only
	 * long-distance matching finds the repeats, at offsets of 2^24 and more (offset codes
	 * of 24 and up, with 16 extra bits of match length: the sequence loop's second reload). */
	const size_t chunk = (size_t)16 << 20, n = 40u << 20;
	uint8_t *src = malloc(n);
	CHECK(src != NULL);
	tu_rng_fill(&g, src, chunk);
	zt_fill(&g, src + chunk, (size_t)8 << 20, ZT_TEXT);
	memcpy(src + chunk + ((size_t)8 << 20), src, chunk);
	size_t used = 2 * chunk + ((size_t)8 << 20);
	zt_fill(&g, src + used, n - used, ZT_MIXED);
	struct zt_params p = {.level = 3,
	                      .checksum = 1,
	                      .window_log = 27,
	                      .long_match = 1,
	                      .no_size = 1,
	                      .block_pieces = 3};
	size_t zlen;
	uint8_t *z = zt_compress(src, n, &p, &zlen);
	CHECK(zlen < n - chunk); /* the repeat was found */
	struct zn_zstd_frame_info fi = {.struct_size = sizeof(fi)};
	CHECK_OK(zn_zstd_frame_scan(z, zlen, &fi));
	CHECK_EQ_U64(fi.window_size, (uint64_t)1 << 27);
	CHECK_EQ_U64(fi.content_size, ZN_ZSTD_SIZE_UNKNOWN);
	CHECK_EQ_U64(fi.frame_size, zlen);
	CHECK(fi.max_content >= n);
	printf("--long=27: %zu bytes -> %zu\n", n, zlen);
	zt_check(d, z, zlen, src, n, &g, "--long=27, 40 MB");

	/* A memory limit under the window: refused when streaming, before any output. */
	zn_zstd_set_memory_limit(d, (uint64_t)1 << 26);
	uint8_t *o;
	size_t olen;
	CHECK(zt_stream(d, z, zlen, &g, 1 << 20, &o, &olen) == ZN_ERR_LIMIT);
	CHECK_EQ_U64(olen, 0);
	free(o);
	zn_zstd_set_memory_limit(d, 0); /* the default, 128 MiB */
	free(z);

	/* windowLog 28: over the default limit; fine once the limit allows it, and always for
	 * the whole-buffer interface. */
	const size_t m = 3000000;
	zt_fill(&g, src, m, ZT_MIXED);
	p = (struct zt_params){.level = 1, .window_log = 28, .no_size = 1, .block_pieces = 2};
	z = zt_compress(src, m, &p, &zlen);
	CHECK_OK(zn_zstd_frame_scan(z, zlen, &fi));
	CHECK_EQ_U64(fi.window_size, (uint64_t)1 << 28);
	CHECK(zt_stream(d, z, zlen, &g, 1 << 20, &o, &olen) == ZN_ERR_LIMIT);
	free(o);
	zn_zstd_set_memory_limit(d, (uint64_t)1 << 28);
	zt_check(d, z, zlen, src, m, &g, "windowLog 28");
	zn_zstd_set_memory_limit(d, 0);
	uint8_t *out = malloc(m);
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	CHECK_OK(zn_zstd_decompress(d, z, zlen, out, m, &info));
	CHECK(!memcmp(out, src, m));
	free(out);
	free(z);
	free(src);
	zn_zstd_decoder_free(d);
	puts("ok");
	return 0;
}
