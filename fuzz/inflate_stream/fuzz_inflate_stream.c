/* SPDX-License-Identifier: MIT */
/* fuzz_inflate_stream.c - libFuzzer target: the streaming API agrees with zn_inflate(). */
/*
 * Input: byte 0 picks the format (low 2 bits; 3 = raw started with zn_inflate_stream_start_raw
 * at a bit offset with a window), byte 1 seeds the chunk sizes, the rest is the stream. The
 * stream is decoded whole with zn_inflate() and in chunks with zn_inflate_stream() (each chunk
 * copied against a guard page); both must give the same result and the same bytes.
 *
 * Mode 3 checks the entry point of a parallel decoder: the raw stream is shifted left by
 * k = byte1 & 7 bits behind k junk bits and decoded with zn_inflate_stream_start_raw(k, window),
 * while zlib decodes the same bytes from bit k (primed with inflatePrime, as zran.c does) with
 * the same window set as its dictionary. Where zlib reaches the end, znippy must too with the
 * same bytes; where zlib finds an error, so must znippy. (Where zlib runs out of input nothing
 * is claimed.)
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "test_util.h"

#define CAP (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct zn_inflater *d[3];
	static uint8_t *whole, *streamed, *shifted, window[32768];
	if (!d[0]) {
		for (int f = 0; f < 3; f++)
			if (zn_inflater_new(&d[f], f) != ZN_OK)
				abort();
		whole = malloc(CAP);
		streamed = malloc(CAP);
		shifted = malloc(1 << 20);
		for (size_t i = 0; i < sizeof(window); i++)
			window[i] = (uint8_t)(i * 131 >> 3);
	}
	if (size < 2)
		return 0;
	int mode = data[0] & 3, fmt = mode == 3 ? 0 : mode;
	/* ZN_FUZZ_SKIP_START_RAW=1 leaves mode 3 out, to fuzz the rest past a known mode 3 bug. */
	static int skip3 = -1;
	if (skip3 < 0)
		skip3 = getenv("ZN_FUZZ_SKIP_START_RAW") != NULL;
	if (mode == 3 && skip3)
		return 0;
	uint32_t rng = 0x9e3779b9u * (data[1] + 1u);
	const uint8_t *in = data + 2;
	size_t len = size - 2;

	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	zn_result r1 = ZN_OK;
	int zret = Z_OK;
	if (mode == 3) {
		if (len + 1 > (1 << 20))
			return 0;
		size_t wlen = (size_t)(data[0] >> 2) * 1024 % 32769;
		unsigned k = data[1] & 7;
		const uint8_t *win = window + 32768 - wlen;
		/* The shifted copy: k junk bits, then the stream. */
		uint8_t junk = (uint8_t)(data[1] >> 3);
		for (size_t i = 0; i <= len; i++) {
			unsigned lo = i ? (unsigned)in[i - 1] >> (8 - k) : junk & ((1u << k) - 1);
			unsigned hi = i < len ? (unsigned)in[i] << k : 0;
			shifted[i] = (uint8_t)(lo | hi);
		}
		in = shifted;
		len = len + (k ? 1 : 0);
		/* zlib on the same bytes from bit k, as zran.c starts: the first byte's upper
		 * 8 - k bits primed, the rest as input, the window as dictionary. (Not the
		 * unshifted stream: a stored block aligns to the bytes of the shifted copy.) */
		z_stream z;
		memset(&z, 0, sizeof(z));
		if (inflateInit2(&z, -15) != Z_OK)
			abort();
		if (k && inflatePrime(&z, (int)(8 - k), in[0] >> k) != Z_OK)
			abort();
		if (wlen && inflateSetDictionary(&z, win, (uInt)wlen) != Z_OK)
			abort();
		z.next_in = (Bytef *)in + (k ? 1 : 0);
		z.avail_in = (uInt)(len - (k ? 1 : 0));
		z.next_out = whole;
		z.avail_out = CAP;
		zret = inflate(&z, Z_FINISH);
		info.out_len = z.total_out;
		inflateEnd(&z);
		if (zret != Z_STREAM_END && z.avail_out == 0)
			return 0; /* more output than CAP */
		r1 = zret == Z_STREAM_END ? ZN_OK : zret == Z_DATA_ERROR ? ZN_ERR_CORRUPT : ZN_OK;
		if (zn_inflate_stream_start_raw(d[0], k, win, wlen))
			abort();
	} else {
		r1 = zn_inflate(d[fmt], in, len, whole, CAP, &info);
		if (r1 == ZN_ERR_OUTPUT_FULL)
			return 0;
		if (zn_inflate_stream_reset(d[fmt]) != ZN_OK)
			abort();
	}

	size_t pos = 0, opos = 0;
	int done = 0;
	zn_result r2 = ZN_OK;
	unsigned idle = 0;
	while (!done) {
		rng = rng * 1103515245u + 12345u;
		size_t chunk = (rng >> 16) % ((data[1] & 0x80) ? 17 : 4099);
		if (chunk > len - pos)
			chunk = len - pos;
		int final = pos + chunk == len;
		uint8_t *g = tu_guard_alloc(chunk);
		memcpy(g, in + pos, chunk);
		size_t used = 0, olen = 0;
		const void *o = NULL;
		r2 = zn_inflate_stream(d[fmt], g, chunk, final, &used, &o, &olen, &done);
		tu_guard_free(g, chunk);
		if (used > chunk)
			abort();
		if (opos + olen > CAP)
			return 0; /* longer than the whole-buffer decode could hold */
		if (olen)
			memcpy(streamed + opos, o, olen);
		opos += olen;
		pos += used;
		if (r2 != ZN_OK)
			break;
		idle = (used || olen) ? 0 : idle + 1;
		if (idle > 64 && final)
			abort(); /* no progress with all input given */
	}
	if (mode == 3) {
		if ((zret == Z_STREAM_END &&
		     (r2 != ZN_OK || opos != info.out_len || memcmp(whole, streamed, opos))) ||
		    (zret == Z_DATA_ERROR && r2 == ZN_OK)) {
			fprintf(stderr,
			        "fuzz_inflate_stream: start_raw: zlib %d (%llu bytes), znippy %s "
			        "(%zu)\n",
			        zret, (unsigned long long)info.out_len, zn_result_name(r2), opos);
			abort();
		}
		return 0;
	}
	int good1 = r1 == ZN_OK || r1 == ZN_ERR_TRAILING_GARBAGE;
	if (r1 != r2 || (good1 && (opos != info.out_len || memcmp(whole, streamed, opos)))) {
		fprintf(stderr,
		        "fuzz_inflate_stream: format %d: whole %s (%llu bytes), stream %s (%zu)\n",
		        fmt, zn_result_name(r1), (unsigned long long)info.out_len,
		        zn_result_name(r2), opos);
		abort();
	}
	return 0;
}
