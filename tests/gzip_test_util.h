/* SPDX-License-Identifier: MIT */
/* gzip_test_util.h - zlib-made DEFLATE, zlib and gzip streams shared by the decoders' tests. */
#ifndef ZN_GZIP_TEST_UTIL_H
#define ZN_GZIP_TEST_UTIL_H

#include <string.h>
#include <zlib.h>

#include "test_util.h"

/* zlib's one stream of src[0..len) into dst (wbits: -15 raw, 15 zlib, 31 gzip); its length. */
static inline size_t compress_zlib(const uint8_t *src, size_t len, uint8_t *dst, size_t cap,
                                   int level, int wbits, int strategy)
{
	z_stream s;
	memset(&s, 0, sizeof(s));
	CHECK(deflateInit2(&s, level, Z_DEFLATED, wbits, 8, strategy) == Z_OK);
	s.next_in = (Bytef *)src;
	s.avail_in = (uInt)len;
	s.next_out = dst;
	s.avail_out = (uInt)cap;
	CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END);
	size_t n = s.total_out;
	deflateEnd(&s);
	return n;
}

/* zlib gzip members of data[0..n), cut into members at `members` places, with a flush of kind
 * `flush` every `every` bytes (0: none). Returns the length written to out. */
static inline size_t compress_gz(uint8_t *out, size_t cap, const uint8_t *data, size_t n, int level,
                                 int strategy, int flush, size_t every, unsigned members)
{
	size_t total = 0;
	for (unsigned m = 0; m < members; m++) {
		size_t a = n * m / members, b = n * (m + 1) / members;
		z_stream z;
		memset(&z, 0, sizeof(z));
		CHECK(deflateInit2(&z, level, Z_DEFLATED, 31, 8, strategy) == Z_OK);
		z.next_out = out + total;
		z.avail_out = (uInt)(cap - total);
		for (size_t at = a; at < b;) {
			size_t k = every ? (every < b - at ? every : b - at) : b - at;
			z.next_in = (Bytef *)(data + at);
			z.avail_in = (uInt)k;
			at += k;
			CHECK(deflate(&z, at == b ? Z_FINISH : flush) != Z_STREAM_ERROR);
		}
		if (a == b)
			CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
		total += z.total_out;
		deflateEnd(&z);
	}
	return total;
}

#endif
