/* SPDX-License-Identifier: MIT */
/* test_inflate_unknown.c - decoding from block boundaries with an unknown window: resolved with
 * the true 32 KiB before the start, the symbols are the true output, byte for byte. */
/*
 * zlib compresses data whose matches reach far back, in many block kinds (dynamic, fixed,
 * stored, Huffman-only, RLE, flushes at odd bits), and its inflate with Z_BLOCK lists the block
 * boundaries (bit position and output position) independently of znippy. From each boundary
 * (all, or a random sample of long lists), in random input pieces against guard pages:
 *   - zn_inflate_stream_start_unknown, symbols until the window is known, then bytes;
 *   - the symbols hold bytes and markers only, and resolved with the true window they equal
 *     the original; the bytes after the switch equal it too;
 *   - the switch comes as soon as 32 Ki symbols follow the last marker (within one match);
 *   - with block stops on, every stop is one of zlib's boundaries, in order, none skipped,
 *     with the right output position;
 *   - a stream that never refers back (Huffman-only, or after a full flush) gives no marker.
 */
#include <string.h>
#include <zlib.h>

#include "test_util.h"

#define LEN          300000
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

struct bound {
	uint64_t bit, out;
};

static uint8_t orig[LEN];
static uint8_t comp[2 * LEN];
static uint16_t syms[LEN + 512];
static uint8_t bytes[LEN + 512];
static struct bound bounds[100000];
static size_t fulls[64], nfull; /* output positions of full flushes */

/* The block boundaries of a raw stream according to zlib: the start and every block end, the
 * final block's included. Returns how many. */
static size_t zlib_bounds(size_t clen, size_t out_len)
{
	static uint8_t out[LEN];
	z_stream s;
	memset(&s, 0, sizeof(s));
	CHECK(inflateInit2(&s, -15) == Z_OK);
	s.next_in = comp;
	s.avail_in = (uInt)clen;
	s.next_out = out;
	s.avail_out = sizeof(out);
	size_t n = 0;
	bounds[n++] = (struct bound){0, 0};
	for (;;) {
		int ret = inflate(&s, Z_BLOCK);
		CHECK(ret == Z_OK || ret == Z_STREAM_END);
		/* data_type: unused bits of the last byte taken, +128 at a block boundary; zlib
		 * stops after the final block too, then reports the end rounded up to a byte. */
		uint64_t bit = 8 * (uint64_t)s.total_in - (s.data_type & 7);
		if (ret == Z_STREAM_END) {
			CHECK_EQ_U64((bounds[n - 1].bit + 7) / 8, s.total_in);
			break;
		}
		if ((s.data_type & 128) && bit != bounds[n - 1].bit) {
			CHECK(n < ARRAY_LEN(bounds));
			bounds[n++] = (struct bound){bit, s.total_out};
		}
	}
	CHECK_EQ_U64(s.total_out, out_len);
	CHECK(memcmp(out, orig, out_len) == 0);
	inflateEnd(&s);
	return n;
}

/* One call's input: a random piece of comp[pos..clen) copied against a guard page. */
static size_t piece_len(struct tu_rng *g, size_t left)
{
	size_t n = tu_rng_below(g, 4) == 0 ? 1 + tu_rng_below(g, 16) : 1 + tu_rng_below(g, 30000);
	return n < left ? n : left;
}

struct result {
	size_t nsym, nbytes; /* symbols before the switch, bytes after it */
	size_t markers;
	int known;   /* the window became known */
	size_t hits; /* block stops seen */
};

/* Decode from boundary `bi` with an unknown window; check every stop against the boundaries. */
static void decode_from(struct zn_inflater *d, struct tu_rng *g, size_t clen, size_t nb, size_t bi,
                        int stops, struct result *res)
{
	const uint64_t start_bit = bounds[bi].bit, start_out = bounds[bi].out;
	memset(res, 0, sizeof(*res));
	zn_inflate_stream_set_block_stops(d, stops);
	CHECK_OK(zn_inflate_stream_start_unknown(d, (unsigned)(start_bit & 7)));
	CHECK(!zn_inflate_stream_window_known(d));
	const size_t byte_at = start_bit / 8;
	size_t pos = byte_at, next = bi + 1;
	int done = 0;
	while (!done) {
		size_t n = piece_len(g, clen - pos);
		uint8_t *p = tu_guard_alloc(n);
		memcpy(p, comp + pos, n);
		size_t used, olen;
		int sym_mode = !zn_inflate_stream_window_known(d);
		if (sym_mode) {
			const uint16_t *s;
			CHECK_OK(zn_inflate_stream_symbols(d, p, n, pos + n == clen, &used, &s,
			                                   &olen, &done));
			CHECK(res->nsym + olen <= LEN - start_out);
			memcpy(syms + res->nsym, s, olen * sizeof(*s));
			res->nsym += olen;
		} else {
			const void *o;
			CHECK_OK(zn_inflate_stream(d, p, n, pos + n == clen, &used, &o, &olen,
			                           &done));
			CHECK(res->nsym + res->nbytes + olen <= LEN - start_out);
			memcpy(bytes + res->nbytes, o, olen);
			res->nbytes += olen;
		}
		tu_guard_free(p, n);
		CHECK(used <= n);
		pos += used;
		uint64_t out_pos;
		zn_inflate_stream_position(d, NULL, &out_pos);
		CHECK_EQ_U64(out_pos, res->nsym + res->nbytes);
		if (zn_inflate_stream_at_block_end(d)) {
			CHECK(stops && !done);
			uint64_t bit = 8 * (uint64_t)byte_at + zn_inflate_stream_bit_position(d);
			CHECK(next < nb);
			CHECK_EQ_U64(bit, bounds[next].bit);
			CHECK_EQ_U64(start_out + out_pos, bounds[next].out);
			next++;
			res->hits++;
		} else if (!done) {
			/* Without a stop, each call consumes all it was given or produces output.
			 */
			CHECK(used == n || olen > 0 ||
			      (sym_mode && zn_inflate_stream_window_known(d)));
		}
	}
	CHECK_EQ_U64(start_out + res->nsym + res->nbytes, bounds[nb - 1].out);
	if (stops)
		CHECK_EQ_U64(next, nb); /* every boundary after the start, the final one included */
	uint64_t in_pos;
	zn_inflate_stream_position(d, &in_pos, NULL);
	CHECK_EQ_U64(byte_at + in_pos, clen);
	res->known = zn_inflate_stream_window_known(d);

	/* Symbols: bytes or markers; the switch came as soon as it could. */
	size_t last_marker = 0; /* one past */
	for (size_t i = 0; i < res->nsym; i++) {
		CHECK(syms[i] < 256 || syms[i] >= ZN_INFLATE_MARKER);
		if (syms[i] >= ZN_INFLATE_MARKER) {
			res->markers++;
			last_marker = i + 1;
		}
	}
	if (res->known) {
		CHECK(res->nsym - last_marker >= 32768);
		CHECK(res->nsym - last_marker <= 32768 + 258);
	} else {
		CHECK(res->nbytes == 0);
		CHECK(res->nsym - last_marker < 32768);
	}
	/* Resolved with the true window (shorter near the beginning), they are the original. */
	size_t wlen = start_out < 32768 ? start_out : 32768;
	static uint8_t resolved[LEN + 512];
	CHECK_OK(zn_inflate_resolve_markers(syms, res->nsym, orig + start_out - wlen, wlen,
	                                    resolved));
	CHECK(memcmp(resolved, orig + start_out, res->nsym) == 0);
	CHECK(memcmp(bytes, orig + start_out + res->nsym, res->nbytes) == 0);
	/* In place too. */
	CHECK_OK(zn_inflate_resolve_markers(syms, res->nsym, orig + start_out - wlen, wlen, syms));
	CHECK(memcmp(syms, orig + start_out, res->nsym) == 0);
}

/* The data: random runs and copies from up to 32 KiB back (and some beyond, which zlib
 * encodes as literals), so matches from after a boundary reach well before it. */
static void make_data(struct tu_rng *g)
{
	for (size_t i = 0; i < LEN;) {
		size_t n = 3 + tu_rng_below(g, 300);
		if (n > LEN - i)
			n = LEN - i;
		if (i < 1000 || tu_rng_below(g, 4) == 0) {
			/* Text-like: few distinct bytes, so Huffman-only blocks compress. */
			for (size_t k = 0; k < n; k++)
				orig[i + k] = (uint8_t)('a' + tu_rng_below(g, 8 + (i >> 15)));
		} else {
			size_t max = i < 40000 ? i : 40000;
			size_t back = 1 + tu_rng_below(g, max);
			for (size_t k = 0; k < n; k++)
				orig[i + k] = orig[i + k - back];
		}
		i += n;
	}
}

/* Compress orig with the given parameters; `flush` (Z_BLOCK: a block ends at any bit;
 * Z_FULL_FLUSH: no reference back across it; Z_NO_FLUSH + 100: a level change) is applied every
 * few KiB. Returns the compressed length; full flushes are listed in `fulls`. */
static size_t compress_data(struct tu_rng *g, int level, int mem, int strategy, int flush)
{
	z_stream s;
	memset(&s, 0, sizeof(s));
	CHECK(deflateInit2(&s, level, Z_DEFLATED, -15, mem, strategy) == Z_OK);
	s.next_out = comp;
	s.avail_out = sizeof(comp);
	size_t i = 0;
	while (i < LEN) {
		size_t n = flush ? 1000 + tu_rng_below(g, 60000) : LEN;
		if (n > LEN - i)
			n = LEN - i;
		int f = i + n == LEN ? Z_FINISH : flush;
		if (flush == Z_NO_FLUSH + 100) { /* a level change: zlib ends a block first */
			CHECK(deflateParams(&s, (int)tu_rng_below(g, 10), strategy) == Z_OK);
			if (f != Z_FINISH)
				f = Z_NO_FLUSH;
		}
		s.next_in = orig + i;
		s.avail_in = (uInt)n;
		i += n;
		int ret = deflate(&s, f);
		CHECK(ret == (f == Z_FINISH ? Z_STREAM_END : Z_OK));
		CHECK(s.avail_in == 0);
		if (f == Z_FULL_FLUSH && nfull < ARRAY_LEN(fulls))
			fulls[nfull++] = i;
	}
	size_t clen = s.total_out;
	deflateEnd(&s);
	return clen;
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_unknown");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	make_data(&g);
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_RAW));
	static const struct {
		int level, mem, strategy, flush;
		const char *name;
	} cfg[] = {
	        {6, 8, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, "level 6"},
	        {1, 2, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, "level 1, small blocks"},
	        {9, 1, Z_DEFAULT_STRATEGY, Z_BLOCK, "level 9, tiny blocks, Z_BLOCK"},
	        {6, 3, Z_FIXED, Z_NO_FLUSH, "fixed blocks"},
	        {6, 4, Z_RLE, Z_NO_FLUSH, "RLE"},
	        {6, 4, Z_HUFFMAN_ONLY, Z_NO_FLUSH, "Huffman only"},
	        {0, 8, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, "stored"},
	        {4, 5, Z_DEFAULT_STRATEGY, Z_NO_FLUSH + 100, "level changes"},
	        {6, 3, Z_DEFAULT_STRATEGY, Z_FULL_FLUSH, "full flushes"},
	        {5, 6, Z_DEFAULT_STRATEGY, Z_SYNC_FLUSH, "sync flushes"},
	};
	size_t tested = 0, with_markers = 0, known = 0;
	for (size_t c = 0; c < ARRAY_LEN(cfg); c++) {
		nfull = 0;
		size_t clen =
		        compress_data(&g, cfg[c].level, cfg[c].mem, cfg[c].strategy, cfg[c].flush);
		size_t nb = zlib_bounds(clen, LEN);
		CHECK(nb <= ARRAY_LEN(bounds));
		CHECK(nb >= 3);
		/* Every boundary but the stream's end, or a sample of long lists: always the
		 * first and the last block, and the boundaries at full flushes. */
		size_t step = nb > 40 ? (nb - 1) / 30 : 1, pick = 0;
		size_t markers_total = 0;
		for (size_t bi = 0; bi + 1 < nb; bi++) {
			int fresh = bi == 0; /* no reference can reach before it */
			for (size_t k = 0; k < nfull; k++)
				fresh |= bounds[bi].out == fulls[k];
			if (bi != pick && !fresh && bi + 2 != nb)
				continue;
			if (bi == pick)
				pick += step + tu_rng_below(&g, step);
			struct result res;
			int stops = (int)tu_rng_below(&g, 2);
			decode_from(d, &g, clen, nb, bi, stops, &res);
			tested++;
			with_markers += res.markers > 0;
			known += res.known;
			markers_total += res.markers;
			if (cfg[c].strategy == Z_HUFFMAN_ONLY || cfg[c].level == 0 || fresh)
				CHECK_EQ_U64(res.markers, 0);
		}
		printf("%-32s %6zu bytes, %4zu blocks, %zu markers\n", cfg[c].name, clen, nb - 1,
		       markers_total);
		if (cfg[c].strategy == Z_DEFAULT_STRATEGY && cfg[c].level > 0)
			CHECK(markers_total > 0); /* the data makes sure references reach back */
	}
	printf("%zu starts: %zu with markers, %zu reached a known window\n", tested, with_markers,
	       known);
	CHECK(with_markers > 10 && known > 10);
	zn_inflater_free(d);
	return 0;
}
