/* SPDX-License-Identifier: MIT */
/* test_zstd_stream.c - the streaming interface: bounded memory (the window plus one block, or
 * the content size), several frames and skippable frames in one stream, input a byte at a time
 * and in empty calls, positions and frame counts, sticky errors and resets. */
#include "zstd_test_util.h"

size_t zn_zstd_decoder_window_bytes(const struct zn_zstd_decoder *d);

/* Feed everything in one call or byte by byte; collect the output. */
static zn_result feed(struct zn_zstd_decoder *d, const uint8_t *z, size_t zn, int bytewise,
                      uint8_t *out, size_t cap, size_t *olen)
{
	size_t pos = 0, len = 0;
	int done = 0;
	zn_result r = ZN_OK;
	CHECK_OK(zn_zstd_stream_reset(d));
	while (!done) {
		size_t piece = bytewise ? ZN_MIN((size_t)1, zn - pos) : zn - pos, used, n;
		const void *o;
		/* An empty call first: no progress, no error. */
		CHECK_OK(zn_zstd_stream(d, z + pos, 0, 0, &used, &o, &n, &done));
		CHECK(used == 0 && n == 0 && !done);
		r = zn_zstd_stream(d, z + pos, piece, pos + piece == zn, &used, &o, &n, &done);
		CHECK(len + n <= cap);
		memcpy(out + len, o, n);
		len += n;
		pos += used;
		if (r != ZN_OK)
			break;
	}
	*olen = len;
	return r;
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_zstd_stream");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	struct zn_zstd_decoder *d;
	CHECK_OK(zn_zstd_decoder_new(&d));

	/* Three frames and two skippable frames in one stream. */
	const size_t n1 = 300000, n2 = 5000, n3 = 700000;
	uint8_t *src = malloc(n1 + n2 + n3);
	zt_fill(&g, src, n1 + n2 + n3, ZT_MIXED);
	struct zt_params p1 = {.level = 3, .checksum = 1}, p2 = {.level = 1, .no_size = 1},
	                 p3 = {.level = 9, .window_log = 16, .no_size = 1, .block_pieces = 4};
	size_t z1, z2, z3;
	uint8_t *f1 = zt_compress(src, n1, &p1, &z1), *f2 = zt_compress(src + n1, n2, &p2, &z2),
	        *f3 = zt_compress(src + n1 + n2, n3, &p3, &z3);
	size_t zn = z1 + z2 + z3 + 8 + 10 + 8;
	uint8_t *z = malloc(zn), *q = z;
	memcpy(q, f1, z1), q += z1;
	zn_put_le32(q, 0x184D2A53), zn_put_le32(q + 4, 10), memset(q + 8, 0x55, 10), q += 18;
	memcpy(q, f2, z2), q += z2;
	zn_put_le32(q, 0x184D2A50), zn_put_le32(q + 4, 0), q += 8;
	memcpy(q, f3, z3);
	const size_t total = n1 + n2 + n3;
	uint8_t *out = malloc(total);
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		size_t olen;
		CHECK_OK(feed(d, z, zn, bytewise, out, total, &olen));
		CHECK_EQ_U64(olen, total);
		CHECK(!memcmp(out, src, total));
		CHECK_EQ_U64(zn_zstd_stream_frames(d), 3);
		uint64_t ip, op;
		zn_zstd_stream_position(d, &ip, &op);
		CHECK_EQ_U64(ip, zn);
		CHECK_EQ_U64(op, total);
		/* Done stays done. */
		size_t used, n;
		const void *o;
		int done;
		CHECK_OK(zn_zstd_stream(d, z, 10, 1, &used, &o, &n, &done));
		CHECK(done && used == 0 && n == 0);
	}
	/* Memory: a frame of 700 KB with a 64 KiB window takes the window and one block (of
	 * 64 KiB: the window's size) and 128 bytes for wild copies. */
	struct zn_zstd_decoder *e;
	CHECK_OK(zn_zstd_decoder_new(&e));
	size_t olen;
	CHECK_OK(feed(e, f3, z3, 0, out, total, &olen));
	CHECK(olen == n3 && !memcmp(out, src + n1 + n2, n3));
	CHECK_EQ_U64(zn_zstd_decoder_window_bytes(e), (1u << 16) + (1u << 16) + 128);
	zn_zstd_decoder_free(e);
	free(f1);
	free(f2);
	free(f3);

	/* A frame with its content size within the window takes only that much. */
	CHECK_OK(zn_zstd_decoder_new(&e));
	struct zt_params ps = {.level = 19};
	size_t zs;
	uint8_t *fs = zt_compress(src, 20000, &ps, &zs);
	CHECK_OK(feed(e, fs, zs, 0, out, total, &olen));
	CHECK(olen == 20000 && !memcmp(out, src, olen));
	CHECK_EQ_U64(zn_zstd_decoder_window_bytes(e), 20000 + 64);
	zn_zstd_decoder_free(e);

	/* Errors are sticky until a reset; output before the damaged block is handed out. */
	fs[zs / 2] ^= 0x55;
	zn_result r = feed(d, fs, zs, 1, out, total, &olen);
	CHECK(r != ZN_OK);
	size_t used, n;
	const void *o;
	int done;
	CHECK(zn_zstd_stream(d, z, zn, 1, &used, &o, &n, &done) == r);
	CHECK(used == 0 && n == 0 && !done);
	CHECK_OK(feed(d, z, zn, 0, out, total, &olen));
	CHECK(olen == total && !memcmp(out, src, total));
	/* An empty stream is done at once. */
	CHECK_OK(zn_zstd_stream_reset(d));
	CHECK_OK(zn_zstd_stream(d, NULL, 0, 1, &used, &o, &n, &done));
	CHECK(done && n == 0);
	free(fs);
	free(z);
	free(out);
	free(src);
	zn_zstd_decoder_free(d);
	puts("ok");
	return 0;
}
