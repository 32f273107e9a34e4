/* SPDX-License-Identifier: MIT */
/* test_inflate_size.c - zn_inflate_size gives exactly what zn_inflate() writes and returns, on
 * zlib's raw, zlib and gzip streams of text and random bytes, several gzip members (whose ISIZE
 * would give only the last one's size), empty input, trailing garbage, truncated and damaged
 * streams; the size found then fits zn_inflate() exactly (and one byte less does not). */
#include <string.h>
#include <zlib.h>

#include "gzip_test_util.h"
#include "test_util.h"

/* zn_inflate_size against zn_inflate on the same input. */
static void same(struct zn_inflater *d, const uint8_t *in, size_t len, size_t cap_hint,
                 const char *what)
{
	uint64_t size;
	zn_result rs = zn_inflate_size(d, in, len, &size);
	size_t cap = cap_hint + 1024;
	uint8_t *out = malloc(cap);
	CHECK(out != NULL);
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	zn_result ri = zn_inflate(d, in, len, out, cap, &info);
	if (rs != ri || (ri == ZN_OK && size != info.out_len)) {
		fprintf(stderr, "%s: size %s %llu, inflate %s %llu\n", what, zn_result_name(rs),
		        (unsigned long long)size, zn_result_name(ri),
		        (unsigned long long)info.out_len);
		CHECK(0);
	}
	if (ri == ZN_OK || ri == ZN_ERR_TRAILING_GARBAGE) {
		CHECK(size == info.out_len);
		CHECK(zn_inflate(d, in, len, out, (size_t)size, NULL) == ri); /* exactly enough */
		if (size)
			CHECK(zn_inflate(d, in, len, out, (size_t)size - 1, NULL) ==
			      ZN_ERR_OUTPUT_FULL);
	}
	free(out);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_size");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	enum { N = 600000 };
	uint8_t *data = malloc(N), *z = malloc(2 * N + 4096);
	CHECK(data && z);
	for (size_t i = 0; i < N / 2; i++) /* text-like, then random */
		data[i] = (uint8_t) "abcd efgh\n"[tu_rng_below(&g, 10)];
	tu_rng_fill(&g, data + N / 2, N - N / 2);
	static const int wbits[3] = {-15, 15, 31};
	static const int formats[3] = {ZN_FORMAT_RAW, ZN_FORMAT_ZLIB, ZN_FORMAT_GZIP};
	for (int f = 0; f < 3; f++) {
		struct zn_inflater *d;
		CHECK_OK(zn_inflater_new(&d, formats[f]));
		for (int k = 0; k < 6; k++) {
			size_t n = k == 0 ? 0 : k == 1 ? 1 : (size_t)tu_rng_below(&g, N);
			size_t len = compress_zlib(data, n, z, 2 * N + 4096, 1 + k, wbits[f],
			                           Z_DEFAULT_STRATEGY);
			char what[64];
			snprintf(what, sizeof(what), "format %d, %zu bytes", f, n);
			same(d, z, len, n, what);
			same(d, z, len / 2, n, "truncated"); /* ZN_ERR_TRUNCATED both ways */
			if (len > 20) {
				z[len / 3] ^= 0x10;
				same(d, z, len, n, "damaged");
				z[len / 3] ^= 0x10;
			}
			if (f == 2) { /* trailing garbage */
				memcpy(z + len, "garbage!", 8);
				same(d, z, len + 8, n, "garbage");
			}
		}
		zn_inflater_free(d);
	}
	/* Several gzip members: the total, where ISIZE is the last member's. */
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_GZIP));
	size_t len = compress_gz(z, 2 * N + 4096, data, N, 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 7);
	uint64_t size;
	CHECK_OK(zn_inflate_size(d, z, len, &size));
	CHECK_EQ_U64(size, N);
	same(d, z, len, N, "7 members");
	CHECK(zn_inflate_size(NULL, z, len, &size) == ZN_ERR_INVALID_ARG);
	CHECK(zn_inflate_size(d, NULL, 5, &size) == ZN_ERR_INVALID_ARG);
	zn_inflater_free(d);
	free(data);
	free(z);
	printf("test_inflate_size: ok\n");
	return 0;
}
