/* SPDX-License-Identifier: MIT */
/* inflate_fuzz_check.h - the whole-buffer DEFLATE/zlib/gzip fuzz check, shared by three targets. */
/*
 * Included by fuzz/inflate_{raw,zlib,gzip}/fuzz_inflate_*.c with FUZZ_FORMAT defined. For each
 * input:
 *   1. zn_inflate() into a 1 MiB buffer whose end touches a guard page (the replay driver puts
 *      the input against one too), so any out-of-bounds access faults;
 *   2. on success, again with the output buffer exactly out_len bytes (must succeed, same
 *      bytes) and out_len - 1 bytes (must be ZN_ERR_OUTPUT_FULL), both ending at the guard;
 *   3. zlib decodes the same input as referee: a stream is good for znippy exactly when it is
 *      good for zlib, and then the outputs and the input consumed agree. For gzip, zlib only
 *      sees the first member, so the comparison is on the first member (see below).
 * A disagreement aborts, which libFuzzer reports as a crash with the input saved.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "test_util.h"

#define FUZZ_CAP (1u << 20)

static void fuzz_fail(const char *what, zn_result r, int zret, size_t zn_out, size_t z_out)
{
	fprintf(stderr, "fuzz_inflate(format %d): %s (znippy %s, zlib %d, out %zu vs %zu)\n",
	        FUZZ_FORMAT, what, zn_result_name(r), zret, zn_out, z_out);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct zn_inflater *d;
	static uint8_t *out, *zout, *copy;
	if (!d) {
		if (zn_inflater_new(&d, FUZZ_FORMAT) != ZN_OK)
			abort();
		out = tu_guard_alloc(FUZZ_CAP);
		zout = malloc(FUZZ_CAP);
		copy = malloc(FUZZ_CAP);
	}
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	zn_result r = zn_inflate(d, data, size, out, FUZZ_CAP, &info);
	if (info.out_len > FUZZ_CAP || info.in_used > size)
		fuzz_fail("info out of range", r, 0, info.out_len, 0);
	int good = r == ZN_OK || r == ZN_ERR_TRAILING_GARBAGE;
	size_t n = info.out_len;
	if (good) {
		memcpy(copy, out, n);
		struct zn_inflate_info i2 = {.struct_size = sizeof(i2)};
		zn_result r2 = zn_inflate(d, data, size, out + FUZZ_CAP - n, n, &i2);
		if (r2 != r || i2.out_len != n || memcmp(out + FUZZ_CAP - n, copy, n) ||
		    i2.in_used != info.in_used)
			fuzz_fail("exact-size output differs", r2, 0, i2.out_len, n);
		if (n) {
			r2 = zn_inflate(d, data, size, out + FUZZ_CAP - (n - 1), n - 1, NULL);
			if (r2 != ZN_ERR_OUTPUT_FULL)
				fuzz_fail("one byte short is not OUTPUT_FULL", r2, 0, n - 1, n);
		}
	}

	/* zlib as referee. */
	z_stream z;
	memset(&z, 0, sizeof(z));
	static const int wbits[3] = {-15, 15, 31};
	if (inflateInit2(&z, wbits[FUZZ_FORMAT]) != Z_OK)
		abort();
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)size;
	z.next_out = zout;
	z.avail_out = FUZZ_CAP;
	int zret = inflate(&z, Z_FINISH);
	size_t zn = z.total_out, zin = z.total_in;
	inflateEnd(&z);
	if (zret != Z_STREAM_END && z.avail_out == 0)
		return 0; /* needs more than FUZZ_CAP: no verdict */
	if (r == ZN_ERR_OUTPUT_FULL)
		return 0;
	if (good) {
		/* znippy accepted: zlib must accept the (first) stream with the same bytes. */
		if (zret != Z_STREAM_END)
			fuzz_fail("znippy accepts, zlib rejects", r, zret, n, zn);
		if (FUZZ_FORMAT != ZN_FORMAT_GZIP || info.members == 1) {
			if (zn != n || memcmp(zout, copy, n))
				fuzz_fail("outputs differ", r, zret, n, zn);
		} else if (zn > n || memcmp(zout, copy, zn)) {
			fuzz_fail("first member differs", r, zret, n, zn);
		}
		if (FUZZ_FORMAT != ZN_FORMAT_GZIP && zin != info.in_used)
			fuzz_fail("input consumed differs", r, zret, info.in_used, zin);
	} else if (zret == Z_STREAM_END && (FUZZ_FORMAT != ZN_FORMAT_GZIP || zin == size)) {
		/* zlib accepted the whole input (gzip: one member and nothing after it). */
		fuzz_fail("zlib accepts, znippy rejects", r, zret, n, zn);
	}
	return 0;
}
