/* SPDX-License-Identifier: MIT */
/* bzip2_ref.h - the referee: what bzip2 -d (1.0.8) makes of an input, with libbz2 stream by
 * stream as the bzip2 command drives it, in znippy's results. For the tests and fuzzers. */
#ifndef ZN_BZIP2_REF_H
#define ZN_BZIP2_REF_H

#include <bzlib.h>
#include <stdlib.h>
#include <string.h>

#include "znippy.h"

/* The functions of libbz2 it uses: linked (the tests), or looked up at run time (the fuzzers,
 * which CMake links against the test library only). */
struct bz2_api {
	int (*init)(bz_stream *, int, int);
	int (*decompress)(bz_stream *);
	int (*end)(bz_stream *);
};

/*
 * Streams in a row, as bzip2 -d: after each, the next starts at the byte after it; input that does
 * not start with "BZh1".."BZh9" is not bzip2 (ZN_ERR_BAD_HEADER) if it is the first, trailing
 * garbage after another (ZN_ERR_TRAILING_GARBAGE, the output kept); an empty input or one that
 * ends inside a stream, even inside those 4 bytes, is ZN_ERR_TRUNCATED; any other fault
 * (structure or CRC: libbz2 does not tell them apart) ZN_ERR_CORRUPT. *out (malloc'd) and
 * *out_len hold what libbz2 produced, up to max_out bytes (then ZN_ERR_LIMIT).
 */
static inline zn_result bz2_ref_decode(const struct bz2_api *api, const uint8_t *in, size_t len,
                                       uint8_t **out, size_t *out_len, size_t max_out)
{
	size_t cap = 1 << 16, n = 0, pos = 0;
	uint8_t *o = malloc(cap);
	zn_result res = ZN_OK;
	for (unsigned streams = 0;; streams++) {
		if (pos == len) {
			res = streams ? ZN_OK : ZN_ERR_TRUNCATED;
			break;
		}
		bz_stream s;
		memset(&s, 0, sizeof(s));
		api->init(&s, 0, 0);
		s.next_in = (char *)in + pos;
		s.avail_in = (unsigned)(len - pos);
		int r;
		for (;;) {
			if (n == cap) {
				if (cap >= max_out) {
					r = BZ_MEM_ERROR;
					break;
				}
				cap *= 2;
				o = realloc(o, cap);
			}
			s.next_out = (char *)o + n;
			s.avail_out = (unsigned)(cap - n);
			unsigned before_in = s.avail_in;
			size_t before_out = n;
			r = api->decompress(&s);
			n = cap - s.avail_out;
			if (r != BZ_OK)
				break;
			if (!s.avail_in && before_in == 0 && n == before_out) {
				r = BZ_UNEXPECTED_EOF;
				break;
			}
		}
		pos = (size_t)((const uint8_t *)s.next_in - in);
		api->end(&s);
		if (r == BZ_STREAM_END)
			continue;
		if (r == BZ_DATA_ERROR_MAGIC)
			res = streams ? ZN_ERR_TRAILING_GARBAGE : ZN_ERR_BAD_HEADER;
		else if (r == BZ_UNEXPECTED_EOF)
			res = ZN_ERR_TRUNCATED;
		else if (r == BZ_MEM_ERROR)
			res = ZN_ERR_LIMIT;
		else
			res = ZN_ERR_CORRUPT;
		break;
	}
	*out = o;
	*out_len = n;
	return res;
}

/* Whether znippy's result `r` is the one the referee's `ref` stands for. */
static inline int bz2_ref_same(zn_result ref, zn_result r)
{
	if (ref == ZN_ERR_CORRUPT)
		return r == ZN_ERR_CORRUPT || r == ZN_ERR_CHECKSUM;
	return r == ref;
}

#endif
