/* SPDX-License-Identifier: MIT */
/* test_zstd_frame.c - one frame decoded in steps of whole zstd blocks (zstd/zstd_frame.h, the
 * archive's partial reads): each step gives at least what was asked and exactly libzstd's bytes,
 * the frame's end is checked once, with or without room to spare after the output, and damaged
 * frames fail at the step that reaches the damage. */
#include "zstd/zstd_frame.h"
#include "zstd_test_util.h"

/* Decode z in steps of `stride` more bytes each into a buffer of `cap` bytes (guarded at the end
 * of its `writable` bytes); the output is compared with src. Returns the first error. */
static zn_result steps(struct zn_zstd_decoder *d, const uint8_t *z, size_t zn, const uint8_t *src,
                       size_t n, size_t cap, size_t writable, size_t stride)
{
	uint8_t *out = tu_guard_alloc(writable);
	zn_result r = zn_zstd_frame_begin(d, z, zn, out, cap, writable);
	size_t len = 0, need = 0;
	int done = 0;
	while (r == ZN_OK && !done) {
		need += stride;
		size_t before = len;
		r = zn_zstd_frame_step(d, need, &len, &done);
		if (r != ZN_OK)
			break;
		CHECK(len >= before && len <= n);
		CHECK(done ? len == n : len >= need);
		/* Within one zstd block (128 KiB) of what was asked. */
		CHECK(done || len < need + (128u << 10));
		CHECK(!memcmp(out, src, len));
	}
	if (r == ZN_OK) {
		/* Once done, a step changes nothing. */
		CHECK_OK(zn_zstd_frame_step(d, SIZE_MAX, &len, &done));
		CHECK(done && len == n);
	}
	tu_guard_free(out, writable);
	return r;
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_zstd_frame");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	struct zn_zstd_decoder *d;
	CHECK_OK(zn_zstd_decoder_new(&d));

	const size_t n = 1500000;
	uint8_t *src = malloc(n);
	zt_fill(&g, src, n, ZT_MIXED);
	const struct zt_params ps[] = {
	        {.level = 3},
	        {.level = 1, .checksum = 1},
	        {.level = 19, .no_size = 1, .checksum = 1},
	        {.level = 9, .window_log = 17, .block_pieces = 7},
	};
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		size_t zn;
		uint8_t *z = zt_compress(src, n, &ps[k], &zn);
		/* Whole at once, in steps of a few bytes, of about a block and of several; with no
		 * room after the output and with some. */
		const size_t strides[] = {SIZE_MAX / 2, 1000, 100000, 400000};
		for (size_t s = 0; s < sizeof(strides) / sizeof(strides[0]); s++) {
			CHECK_OK(steps(d, z, zn, src, n, n, n, strides[s]));
			CHECK_OK(steps(d, z, zn, src, n, n, n + 4096, strides[s]));
		}
		/* A buffer shorter than the content: the header says so (when it gives the size),
		 * or the block that would pass the end. */
		zn_result r = steps(d, z, zn, src, n, n - 1, n - 1, 100000);
		CHECK(r == ZN_ERR_OUTPUT_FULL);
		/* Truncated anywhere: an error at the step that needs the missing bytes, never
		 * wrong bytes before it. */
		for (int t = 0; t < 20; t++) {
			size_t cut = (size_t)tu_rng_below(&g, zn);
			r = steps(d, z, cut, src, n, n, n, 1 + (size_t)tu_rng_below(&g, 300000));
			CHECK(r != ZN_OK);
		}
		/* Bytes after the frame: the frame is whole, and then refused. */
		uint8_t *zz = malloc(zn + 3);
		memcpy(zz, z, zn);
		memset(zz + zn, 0, 3);
		CHECK(steps(d, zz, zn + 3, src, n, n, n, 300000) == ZN_ERR_TRAILING_GARBAGE);
		/* A damaged checksum fails only when the frame's end is reached. */
		if (ps[k].checksum) {
			memcpy(zz, z, zn);
			zz[zn - 1] ^= 1;
			CHECK(steps(d, zz, zn, src, n, n, n, 200000) == ZN_ERR_CHECKSUM);
		}
		free(zz);
		free(z);
	}
	/* Not a frame. */
	uint8_t junk[16] = {1, 2, 3};
	uint8_t buf[16];
	CHECK(zn_zstd_frame_begin(d, junk, sizeof(junk), buf, sizeof(buf), sizeof(buf)) ==
	      ZN_ERR_BAD_HEADER);
	zn_zstd_decoder_free(d);
	free(src);
	puts("ok");
	return 0;
}
