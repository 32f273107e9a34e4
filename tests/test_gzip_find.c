/* SPDX-License-Identifier: MIT */
/* test_gzip_find.c - the block finder: zn_gz_find() finds what the predicate zn_gz_candidate()
 * says bit by bit, and the predicate holds at every real block start it is meant to hold at. */
/*
 * 1. On random bytes (with gzip magic, stored-block lengths and zlib streams planted in them),
 *    for random ranges, final or not: zn_gz_find() returns the first position of the range where
 *    zn_gz_candidate() is not 0, with its kind (a brute-force scan of the predicate).
 * 2. zlib's own list of block boundaries (inflate with Z_BLOCK) in gzip streams of text, random
 *    data and int64 columns at several levels, with full flushes and many members: each non-final
 *    dynamic block's start is a ZN_CAND_DYNAMIC, each non-final stored block's canonical position
 *    (zn_gz_canonical) a ZN_CAND_STORED, each member's header a ZN_CAND_MEMBER; and nothing else
 *    zlib calls a boundary is refused for a wrong reason (fixed and final blocks are never
 *    candidates).
 * 3. zn_gz_parse_header() on every header field (FTEXT, FHCRC right and wrong, FEXTRA with
 *    BGZF's BC field, FNAME, FCOMMENT) and cut short at every length.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gzip/gzip_find.h"
#include "test_util.h"

#define MINZ(a, b) ((a) < (b) ? (a) : (b))

static void check_find(const uint8_t *in, size_t len, int final, uint64_t from, uint64_t to)
{
	uint64_t want = to < 8 * (uint64_t)len ? to : 8 * (uint64_t)len;
	int want_kind = 0;
	for (uint64_t b = from; b < want; b++) {
		int k = zn_gz_candidate(in, len, final, b);
		if (k) {
			want = b;
			want_kind = k;
			break;
		}
	}
	uint64_t got;
	int kind = zn_gz_find(in, len, final, from, to, &got);
	if (kind != want_kind || (kind && got != want)) {
		fprintf(stderr,
		        "find [%llu, %llu) of %zu (final %d): got %d at %llu, want %d at %llu\n",
		        (unsigned long long)from, (unsigned long long)to, len, final, kind,
		        (unsigned long long)got, want_kind, (unsigned long long)want);
		CHECK(0);
	}
}

/* A gzip stream of n bytes of `data` by zlib into out; returns its length. */
static size_t gzip_zlib(uint8_t *out, size_t cap, const uint8_t *data, size_t n, int level,
                        int strategy, int flush_every)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	CHECK(deflateInit2(&z, level, Z_DEFLATED, 31, 8, strategy) == Z_OK);
	z.next_out = out;
	z.avail_out = (uInt)cap;
	for (size_t at = 0; at < n;) {
		size_t k = flush_every ? (size_t)flush_every : n - at;
		if (k > n - at)
			k = n - at;
		z.next_in = (Bytef *)(data + at);
		z.avail_in = (uInt)k;
		at += k;
		CHECK(deflate(&z, at == n ? Z_FINISH : Z_FULL_FLUSH) != Z_STREAM_ERROR);
	}
	size_t len = z.total_out;
	deflateEnd(&z);
	return len;
}

static void gen(uint8_t *p, size_t n, int kind, struct tu_rng *g)
{
	static const char *const w[] = {"alpha ",    "beta ",   "gamma\n", "delta ",
	                                "parallel ", "window ", "marker ", "x"};
	if (kind == 1) {
		tu_rng_fill(g, p, n);
		return;
	}
	for (size_t i = 0; i < n;) {
		if (kind == 2) {
			uint64_t v = i / 800;
			for (int k = 0; k < 8 && i < n; k++)
				p[i++] = (uint8_t)(v >> (8 * k));
			continue;
		}
		const char *s = w[tu_rng_below(g, 8)];
		for (; *s && i < n; s++)
			p[i++] = (uint8_t)*s;
	}
}

/* Every boundary zlib lists in the gzip stream in[0..len) is checked against the predicate. */
static void check_bounds(const uint8_t *in, size_t len, size_t out_len, size_t *counts)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	CHECK(inflateInit2(&z, -15) == Z_OK);
	static uint8_t out[1 << 22];
	CHECK(out_len <= sizeof(out));
	size_t hlen;
	CHECK_OK(zn_gz_parse_header(in, len, SIZE_MAX, &hlen, NULL));
	CHECK(zn_gz_candidate(in, len, 1, 0) == ZN_CAND_MEMBER);
	counts[0]++;
	z.next_in = (Bytef *)in + hlen;
	z.avail_in = (uInt)(len - hlen);
	z.next_out = out;
	z.avail_out = sizeof(out);
	for (;;) {
		/* At a boundary: the header of the block that starts here. */
		uint64_t bit = 8 * (uint64_t)(z.next_in - in) - (unsigned)(z.data_type & 7);
		/* (64: the block that ended was the last; the trailer follows.) */
		if ((z.data_type & 128) && !(z.data_type & 64)) {
			unsigned bfinal = (in[bit / 8] >> (bit % 8)) & 1;
			uint64_t b1 = bit + 1;
			unsigned type = ((in[b1 / 8] >> (b1 % 8)) & 1) |
			                (((in[(b1 + 1) / 8] >> ((b1 + 1) % 8)) & 1) << 1);
			int k = zn_gz_candidate(in, len, 1, zn_gz_canonical(in, len, bit));
			if (!bfinal && type == 2) {
				CHECK(zn_gz_canonical(in, len, bit) == bit);
				CHECK(k == ZN_CAND_DYNAMIC);
				counts[1]++;
			} else if (!bfinal && type == 0) {
				CHECK(k == ZN_CAND_STORED); /* zlib pads with zeros */
				counts[2]++;
			} else {
				CHECK(k != ZN_CAND_DYNAMIC && k != ZN_CAND_STORED);
			}
		}
		int ret = inflate(&z, Z_BLOCK);
		CHECK(ret == Z_OK || ret == Z_STREAM_END);
		if (ret == Z_STREAM_END)
			break;
	}
	CHECK(z.total_out == out_len);
	inflateEnd(&z);
}

static void header_fields(void)
{
	uint8_t h[200];
	size_t n = 0, hlen;
	uint32_t bgzf;
	/* Every flag: FTEXT | FHCRC | FEXTRA | FNAME | FCOMMENT, with BGZF's BC subfield. */
	const uint8_t fixed[10] = {0x1f, 0x8b, 8, 0x1f, 1, 2, 3, 4, 0, 3};
	memcpy(h, fixed, 10);
	n = 10;
	const uint8_t extra[] = {12, 0, 'A', 'B', 2, 0, 9, 9, 'B', 'C', 2, 0, 0x34, 0x12};
	memcpy(h + n, extra, sizeof(extra));
	n += sizeof(extra);
	memcpy(h + n, "name\0comment\0", 13);
	n += 13;
	uint32_t crc = zn_crc32(0, h, n);
	h[n++] = (uint8_t)crc;
	h[n++] = (uint8_t)(crc >> 8);
	CHECK_OK(zn_gz_parse_header(h, n, SIZE_MAX, &hlen, &bgzf));
	CHECK(hlen == n && bgzf == 0x1235);
	for (size_t k = 0; k < n; k++)
		CHECK(zn_gz_parse_header(h, k, SIZE_MAX, &hlen, NULL) == ZN_ERR_TRUNCATED);
	CHECK(zn_gz_parse_header(h, n, n - 1, &hlen, NULL) == ZN_ERR_BAD_HEADER); /* too long */
	h[n - 1] ^= 1;
	CHECK(zn_gz_parse_header(h, n, SIZE_MAX, &hlen, NULL) == ZN_ERR_HEADER_CHECKSUM);
	h[3] = 0x20; /* a reserved flag */
	CHECK(zn_gz_parse_header(h, n, SIZE_MAX, &hlen, NULL) == ZN_ERR_BAD_HEADER);
	h[3] = 0;
	h[2] = 7; /* not deflate */
	CHECK(zn_gz_parse_header(h, n, SIZE_MAX, &hlen, NULL) == ZN_ERR_BAD_HEADER);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_gzip_find");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	header_fields();

	/* ZN_TEST_QUICK: streams of 256 KiB, a quarter of the ranges and of the planted buffers. */
	const size_t N = tu_quick ? 256u << 10 : 1u << 20;
	const int q = tu_quick ? 4 : 1;
	uint8_t *data = malloc(N), *gz = malloc(2 * N), *buf = malloc(N);
	CHECK(data && gz && buf);
	size_t counts[3] = {0};
	for (int kind = 0; kind < 3; kind++) {
		gen(data, N, kind, &g);
		for (int level = 1; level <= 9; level += 4) {
			for (int fl = 0; fl < 2; fl++) {
				size_t n = N - (size_t)tu_rng_below(&g, 1000);
				size_t len = gzip_zlib(gz, 2 * N, data, n, level,
				                       Z_DEFAULT_STRATEGY, fl ? 50000 : 0);
				check_bounds(gz, len, n, counts);
				/* The finder on the stream: random ranges. */
				for (int r = 0; r < 20 / q; r++) {
					uint64_t from = tu_rng_below(&g, 8 * (uint64_t)len);
					uint64_t to = from + tu_rng_below(&g, 400000);
					size_t cut = tu_rng_below(&g, 4)
					                     ? len
					                     : (size_t)(from / 8) +
					                               tu_rng_below(&g, 100000);
					if (cut > len)
						cut = len;
					check_find(gz, cut, cut == len, from, to);
				}
			}
		}
	}
	/* Stored blocks (level 0) and members. */
	const size_t sn = MINZ(N, (size_t)300000);
	size_t len = gzip_zlib(gz, 2 * N, data, sn, 0, Z_DEFAULT_STRATEGY, 0);
	check_bounds(gz, len, sn, counts);
	CHECK(counts[0] > 0 && counts[1] > (size_t)(80 / q) && counts[2] > 2);

	/* Random bytes with planted things: magic, stored lengths, pieces of real streams. */
	for (int r = 0; r < 300 / q; r++) {
		size_t n = 64 + (size_t)tu_rng_below(&g, 200000);
		tu_rng_fill(&g, buf, n);
		for (int k = 0; k < 20; k++) {
			size_t at = (size_t)tu_rng_below(&g, n - 16);
			switch (tu_rng_below(&g, 3)) {
			case 0:
				buf[at] = 0x1f, buf[at + 1] = 0x8b, buf[at + 2] = 8,
				buf[at + 3] = 0;
				break;
			case 1:
				buf[at] &= 0x1f;
				buf[at + 1] = 0x34, buf[at + 2] = 0x12, buf[at + 3] = 0xcb,
				         buf[at + 4] = 0xed;
				break;
			default: {
				size_t from = (size_t)tu_rng_below(&g, len - 64);
				size_t k2 = MINZ((size_t)64 + (size_t)tu_rng_below(&g, 3000),
				                 MINZ(n - at, len - from));
				memcpy(buf + at, gz + from, k2);
			}
			}
		}
		for (int k = 0; k < 10; k++) {
			uint64_t from = tu_rng_below(&g, 8 * (uint64_t)n);
			uint64_t to = from + tu_rng_below(&g, 8 * (uint64_t)n);
			check_find(buf, n, (int)tu_rng_below(&g, 2), from, to);
		}
	}
	free(data);
	free(gz);
	free(buf);
	printf("ok: %zu members, %zu dynamic and %zu stored block starts\n", counts[0], counts[1],
	       counts[2]);
	return 0;
}
