/* SPDX-License-Identifier: MIT */
/* fuzz_inflate_unknown.c - libFuzzer target: decoding with an unknown window agrees with decoding
 * with the window known, and with zlib. */
/*
 * Input: byte 0 = k (bits 0..2: the stream is shifted behind k junk bits), block stops (bit 3)
 * and a chunk-size seed (bits 4..7); byte 1 picks the length of the real window for zlib; the
 * rest is a raw DEFLATE stream. It is decoded three ways:
 *   A. zn_inflate_stream_start_unknown(k): symbols until the window is known, then bytes, in
 *      chunks copied against guard pages;
 *   B. zn_inflate_stream_start_raw(k) with a fixed 32 KiB window, the same way;
 *   C. zlib raw inflate of the same bytes from bit k (inflatePrime) with the last `wlen` bytes
 *      of that window as dictionary.
 * A and B must agree on the result, the output (A's markers resolved with the window) and every
 * block stop. Where zlib reaches the end, A must too, and resolving A's markers with the short
 * window must give zlib's bytes; where zlib finds an error, A must fail or hold a marker that
 * the short window cannot resolve (ZN_ERR_BAD_DISTANCE). Symbols must be bytes or markers, and
 * the switch to bytes must come once the last 32 Ki symbols hold no marker, and not long after.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "test_util.h"

#define CAP      (1u << 20)
#define MAXSTOPS 4096

struct run {
	zn_result r;
	size_t nsym, nbytes;
	uint64_t stops[MAXSTOPS];
	size_t nstops;
	int too_long;
};

static uint8_t window[32768];

static void fail_if(int cond, const char *what, const struct run *a, const struct run *b)
{
	if (!cond)
		return;
	fprintf(stderr, "fuzz_inflate_unknown: %s (unknown: %s %zu+%zu, known: %s %zu)\n", what,
	        zn_result_name(a->r), a->nsym, a->nbytes, b ? zn_result_name(b->r) : "-",
	        b ? b->nbytes : 0);
	abort();
}

/* Decode in, len with an unknown (sym != NULL) or the known window. */
static void decode(struct zn_inflater *d, const uint8_t *in, size_t len, unsigned k, int stops,
                   uint32_t rng, uint8_t chunk_mode, uint16_t *sym, uint8_t *out, struct run *res)
{
	memset(res, 0, sizeof(*res));
	zn_inflate_stream_set_block_stops(d, stops);
	if (sym) {
		if (zn_inflate_stream_start_unknown(d, k))
			abort();
	} else if (zn_inflate_stream_start_raw(d, k, window, sizeof(window))) {
		abort();
	}
	size_t pos = 0;
	int done = 0;
	unsigned idle = 0;
	uint64_t last_stop = 0;
	while (!done) {
		rng = rng * 1103515245u + 12345u;
		size_t chunk = (rng >> 16) % (chunk_mode & 8 ? 17 : chunk_mode & 4 ? 300 : 5000);
		if (chunk > len - pos)
			chunk = len - pos;
		int final = pos + chunk == len;
		uint8_t *g = tu_guard_alloc(chunk);
		memcpy(g, in + pos, chunk);
		size_t used = 0, n = 0;
		int sym_mode = sym && !zn_inflate_stream_window_known(d);
		if (sym_mode) {
			const uint16_t *s;
			res->r =
			        zn_inflate_stream_symbols(d, g, chunk, final, &used, &s, &n, &done);
			if (res->nsym + n > CAP) {
				res->too_long = 1;
			} else {
				memcpy(sym + res->nsym, s, n * sizeof(*s));
				res->nsym += n;
			}
		} else {
			const void *o;
			res->r = zn_inflate_stream(d, g, chunk, final, &used, &o, &n, &done);
			if (res->nsym + res->nbytes + n > CAP) {
				res->too_long = 1;
			} else {
				memcpy(out + res->nbytes, o, n);
				res->nbytes += n;
			}
		}
		tu_guard_free(g, chunk);
		if (used > chunk)
			abort();
		pos += used;
		if (res->r != ZN_OK || res->too_long)
			break;
		if (sym_mode && zn_inflate_stream_window_known(d)) {
			/* The switch: no marker in the last 32 Ki symbols, one not long before. */
			size_t clean = 0;
			while (clean < res->nsym && sym[res->nsym - 1 - clean] < 256)
				clean++;
			if (clean < 32768 || (clean < res->nsym && clean > 32768 + 258)) {
				fprintf(stderr,
				        "fuzz_inflate_unknown: switched %zu symbols after a "
				        "marker\n",
				        clean);
				abort();
			}
		}
		if (zn_inflate_stream_at_block_end(d)) {
			uint64_t bit = zn_inflate_stream_bit_position(d);
			if (!stops || done || bit <= last_stop || bit > 8 * (uint64_t)pos)
				abort();
			last_stop = bit;
			if (res->nstops < MAXSTOPS)
				res->stops[res->nstops++] = bit;
			idle = 0;
			continue;
		}
		idle = (used || n) ? 0 : idle + 1;
		if (idle > 64 && final)
			abort(); /* no progress with all input given */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct zn_inflater *d;
	static uint8_t *shifted, *out_a, *out_b, *zout, *resolved;
	static uint16_t *sym;
	static struct run a, b;
	if (!d) {
		if (zn_inflater_new(&d, ZN_FORMAT_RAW) != ZN_OK)
			abort();
		shifted = malloc(CAP + 1);
		out_a = malloc(CAP);
		out_b = malloc(CAP);
		zout = malloc(CAP);
		resolved = malloc(CAP);
		sym = malloc(CAP * sizeof(*sym));
		for (size_t i = 0; i < sizeof(window); i++)
			window[i] = (uint8_t)(i * 131 >> 3);
	}
	if (size < 2 || size - 2 > CAP)
		return 0;
	const unsigned k = data[0] & 7;
	const int stops = (data[0] >> 3) & 1;
	const size_t wlen = data[1] >= 128 ? 32768 : (size_t)data[1] * 257;
	const uint8_t *in = data + 2;
	size_t len = size - 2;

	/* The shifted copy: k junk bits, then the stream. (A stored block aligns to the bytes of
	 * this copy, so it is a different stream from the unshifted one unless k = 0.) */
	for (size_t i = 0; i <= len; i++) {
		unsigned lo = i ? (unsigned)in[i - 1] >> (8 - k) : (data[0] >> 4) & ((1u << k) - 1);
		unsigned hi = i < len ? (unsigned)in[i] << k : 0;
		shifted[i] = (uint8_t)(lo | hi);
	}
	len += k ? 1 : 0;

	/* C: zlib on the same bytes, starting at bit k as zran.c does: the first byte's upper
	 * 8 - k bits primed, the rest as input; the short window as dictionary. */
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, -15) != Z_OK)
		abort();
	if (k && inflatePrime(&z, (int)(8 - k), shifted[0] >> k) != Z_OK)
		abort();
	if (wlen && inflateSetDictionary(&z, window + sizeof(window) - wlen, (uInt)wlen) != Z_OK)
		abort();
	z.next_in = shifted + (k ? 1 : 0);
	z.avail_in = (uInt)(len - (k ? 1 : 0));
	z.next_out = zout;
	z.avail_out = CAP;
	int zret = inflate(&z, Z_FINISH);
	size_t zlen = z.total_out;
	inflateEnd(&z);
	if (zret != Z_STREAM_END && z.avail_out == 0)
		return 0; /* more output than CAP */

	uint32_t rng = 0x9e3779b9u * (data[0] + 1u);
	decode(d, shifted, len, k, stops, rng, data[0] >> 4, sym, out_a, &a);
	decode(d, shifted, len, k, stops, rng, data[0] >> 4, NULL, out_b, &b);
	if (a.too_long || b.too_long)
		return 0;

	for (size_t i = 0; i < a.nsym; i++)
		fail_if(sym[i] >= 256 && sym[i] < ZN_INFLATE_MARKER, "a symbol that is neither", &a,
		        &b);
	/* A and B: the same result, stops and output. */
	fail_if(a.r != b.r, "different results", &a, &b);
	fail_if(a.nstops != b.nstops || memcmp(a.stops, b.stops, a.nstops * sizeof(a.stops[0])),
	        "different block stops", &a, &b);
	fail_if(a.nsym + a.nbytes != b.nbytes, "different lengths", &a, &b);
	fail_if(zn_inflate_resolve_markers(sym, a.nsym, window, sizeof(window), resolved) != ZN_OK,
	        "markers the full window cannot resolve", &a, &b);
	fail_if(memcmp(resolved, out_b, a.nsym) || memcmp(out_a, out_b + a.nsym, a.nbytes),
	        "different output", &a, &b);

	/* A and zlib with the short window. */
	zn_result rr = zn_inflate_resolve_markers(sym, a.nsym, window + sizeof(window) - wlen, wlen,
	                                          resolved);
	if (zret == Z_STREAM_END) {
		fail_if(a.r != ZN_OK || rr != ZN_OK, "zlib decodes, znippy does not", &a, NULL);
		fail_if(a.nsym + a.nbytes != zlen || memcmp(resolved, zout, a.nsym) ||
		                memcmp(out_a, zout + a.nsym, a.nbytes),
		        "output differs from zlib's", &a, NULL);
	} else if (zret == Z_DATA_ERROR) {
		fail_if(a.r == ZN_OK && rr != ZN_ERR_BAD_DISTANCE, "zlib fails, znippy does not",
		        &a, NULL);
	}
	return 0;
}
