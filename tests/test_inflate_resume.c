/* SPDX-License-Identifier: MIT */
/* test_inflate_resume.c - zn_inflate_stream_start_raw: resuming a raw DEFLATE stream at a block
 * boundary at any bit offset, with the 32 KiB window before it (what a parallel decoder does). */
#include <string.h>
#include <zlib.h>

#include "test_util.h"

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_resume");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	const size_t len = 400000;
	uint8_t *orig = malloc(len), *comp = malloc(len * 2), *out = malloc(len);
	/* Repetitive data with matches reaching far back, so the window matters. */
	for (size_t i = 0; i < len;) {
		size_t n = 20 + tu_rng_below(&g, 200);
		if (n > len - i)
			n = len - i;
		if (i < 1000 || tu_rng_below(&g, 3) == 0) {
			tu_rng_fill(&g, orig + i, n);
		} else {
			size_t back = 1000 + tu_rng_below(&g, (i < 31000 ? i : 31000) - 999);
			for (size_t k = 0; k < n; k++)
				orig[i + k] = orig[i + k - back];
		}
		i += n;
	}
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_RAW));
	for (int iter = 0; iter < 12; iter++) {
		z_stream s;
		memset(&s, 0, sizeof(s));
		CHECK(deflateInit2(&s, 1 + iter % 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) ==
		      Z_OK);
		size_t split = 40000 + tu_rng_below(&g, len - 80000);
		s.next_in = orig;
		s.avail_in = (uInt)split;
		s.next_out = comp;
		s.avail_out = (uInt)(len * 2);
		/* Z_BLOCK ends the current block without byte alignment: the next block starts
		 * `bits` bits into the last partial byte. */
		CHECK(deflate(&s, Z_BLOCK) == Z_OK);
		unsigned pending;
		int bits;
		CHECK(deflatePending(&s, &pending, &bits) == Z_OK);
		CHECK(pending == 0);
		size_t byte_at = s.total_out;
		s.avail_in = (uInt)(len - split);
		CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END);
		size_t clen = s.total_out;
		deflateEnd(&s);

		/* The whole stream decodes; then resume at the boundary with the window. */
		struct zn_inflate_info info = {.struct_size = sizeof(info)};
		CHECK_OK(zn_inflate(d, comp, clen, out, len, &info));
		CHECK(memcmp(out, orig, len) == 0);
		size_t wlen = split < 32768 ? split : 32768;
		CHECK_OK(zn_inflate_stream_start_raw(d, (unsigned)bits, orig + split - wlen, wlen));
		size_t pos = byte_at, got = 0;
		int done = 0;
		while (!done) {
			size_t piece = 1 + tu_rng_below(&g, 20000);
			if (piece > clen - pos)
				piece = clen - pos;
			size_t used, olen;
			const void *o;
			CHECK_OK(zn_inflate_stream(d, comp + pos, piece, pos + piece == clen, &used,
			                           &o, &olen, &done));
			CHECK(got + olen <= len - split);
			CHECK(memcmp(o, orig + split + got, olen) == 0);
			got += olen;
			pos += used;
		}
		CHECK_EQ_U64(got, len - split);
		/* Without the window, a match into it must be refused, not read garbage. */
		CHECK_OK(zn_inflate_stream_start_raw(d, (unsigned)bits, NULL, 0));
		zn_result r = ZN_OK;
		pos = byte_at, done = 0;
		while (!done && r == ZN_OK) {
			size_t used, olen;
			const void *o;
			r = zn_inflate_stream(d, comp + pos, clen - pos, 1, &used, &o, &olen,
			                      &done);
			pos += used;
		}
		if (r != ZN_ERR_BAD_DISTANCE)
			fprintf(stderr, "iter %d: %s done %d pos %zu/%zu\n", iter,
			        zn_result_name(r), done, pos, clen);
		CHECK(r == ZN_ERR_BAD_DISTANCE);
	}
	/* Arguments. */
	CHECK(zn_inflate_stream_start_raw(d, 8, NULL, 0) == ZN_ERR_INVALID_ARG);
	CHECK(zn_inflate_stream_start_raw(d, 0, orig, 32769) == ZN_ERR_INVALID_ARG);
	struct zn_inflater *dg;
	CHECK_OK(zn_inflater_new(&dg, ZN_FORMAT_GZIP));
	CHECK(zn_inflate_stream_start_raw(dg, 0, NULL, 0) == ZN_ERR_INVALID_ARG);
	zn_inflater_free(dg);
	CHECK(zn_inflater_new(&dg, 7) == ZN_ERR_INVALID_ARG);
	zn_inflater_free(d);
	free(orig);
	free(comp);
	free(out);
	return 0;
}
