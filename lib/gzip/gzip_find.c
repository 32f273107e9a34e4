/* SPDX-License-Identifier: MIT */
/* gzip_find.c - the block finder: gzip member headers and DEFLATE block headers in any bit. */
#include <pthread.h>

#include "gzip/gzip_find.h"

/*
 * The finder scans every bit of a range for a dynamic-Huffman block header, every byte for a
 * member header and a stored block, and gives the first position where the predicate of
 * gzip_find.h holds. Most positions fail the first test: a non-final dynamic header has the bits
 * 0,0,1 and HLIT, HDIST <= 29 (one position in nine passes), a table of 2^13 entries answers it.
 * Next the precode: its 4..19 lengths must make a complete code, which a random one rarely does
 * (a Kraft sum of exactly 128/128); then the code lengths are decoded with it and both codes
 * checked as the decoder checks them (deflate_tables.c), without building tables. A real block
 * header is found within about one block of the range's start (tens of KB), so the scan costs
 * well under a millisecond per range; a stream with no candidate at all (fixed-Huffman blocks
 * only) costs a full scan of the range, once.
 *
 * Reads never go past in + len: every multi-byte load near the end goes through careful helpers.
 */

#define GZ_FHCRC    0x02
#define GZ_FEXTRA   0x04
#define GZ_FNAME    0x08
#define GZ_FCOMMENT 0x10
#define NAME_MAX_   4096u

zn_result zn_gz_parse_header(const uint8_t *in, size_t len, size_t max, size_t *hlen,
                             uint32_t *bgzf)
{
	if (bgzf)
		*bgzf = 0;
	size_t lim = ZN_MIN(len, max);
	/* The fixed part. Bytes missing within `max` mean "more input"; beyond it, "too long". */
	if (lim < 10) {
		for (size_t i = 0; i < lim; i++) {
			static const uint8_t magic[3] = {0x1f, 0x8b, 8};
			if (i < 3 && in[i] != magic[i])
				return ZN_ERR_BAD_HEADER;
			if (i == 3 && (in[3] & 0xe0))
				return ZN_ERR_BAD_HEADER;
		}
		return len < max ? ZN_ERR_TRUNCATED : ZN_ERR_BAD_HEADER;
	}
	SAFETY_CHECK(in[0] == 0x1f && in[1] == 0x8b && in[2] == 8 && !(in[3] & 0xe0),
	             ZN_ERR_BAD_HEADER);
	const unsigned flg = in[3];
	size_t at = 10;
#define NEED(n)                                                                                    \
	do {                                                                                       \
		if (at + (n) > lim)                                                                \
			return at + (n) > max ? ZN_ERR_BAD_HEADER : ZN_ERR_TRUNCATED;              \
	} while (0)
	if (flg & GZ_FEXTRA) {
		NEED(2);
		size_t xlen = zn_get_le16(in + at);
		at += 2;
		NEED(xlen);
		/* BGZF: subfield 'B','C' of length 2 holding BSIZE (the member's size - 1). */
		for (size_t x = at; bgzf && x + 4 <= at + xlen;) {
			size_t slen = zn_get_le16(in + x + 2);
			if (in[x] == 'B' && in[x + 1] == 'C' && slen == 2 && x + 6 <= at + xlen)
				*bgzf = (uint32_t)zn_get_le16(in + x + 4) + 1;
			x += 4 + slen;
		}
		at += xlen;
	}
	for (unsigned f = GZ_FNAME; f <= GZ_FCOMMENT; f <<= 1) {
		if (!(flg & f))
			continue;
		for (;;) {
			NEED(1);
			if (!in[at++])
				break;
		}
	}
	if (flg & GZ_FHCRC) {
		NEED(2);
		uint32_t crc = zn_crc32(0, in, at);
		SAFETY_CHECK(zn_get_le16(in + at) == (crc & 0xffff), ZN_ERR_HEADER_CHECKSUM);
		at += 2;
	}
#undef NEED
	*hlen = at;
	return ZN_OK;
}

/* ---- bits ------------------------------------------------------------------------------------ */

/* A bit reader over in[0..len) that reads zeros past the end and notes it. */
struct bits {
	const uint8_t *in;
	size_t len;
	uint64_t pos; /* bit position */
	int past;     /* a bit past the end was read */
};

static ZN_FORCEINLINE uint32_t peek(struct bits *b, unsigned n)
{
	uint64_t byte = b->pos >> 3;
	uint64_t v;
	if (likely(byte + 8 <= b->len)) {
		v = zn_get_le64(b->in + byte);
	} else {
		v = 0;
		for (unsigned i = 0; i < 8 && byte + i < b->len; i++)
			v |= (uint64_t)b->in[byte + i] << (8 * i);
		if (b->pos + n > 8 * (uint64_t)b->len)
			b->past = 1;
	}
	return (uint32_t)((v >> (b->pos & 7)) & ((1ull << n) - 1));
}

static ZN_FORCEINLINE uint32_t take(struct bits *b, unsigned n)
{
	uint32_t v = peek(b, n);
	b->pos += n;
	return v;
}

/* Kraft sum of the code whose lengths are lens[0..n): each length l contributes 2^(15 - l). */
static uint32_t kraft(const uint8_t *lens, unsigned n, unsigned *max, unsigned *count)
{
	uint32_t sum = 0;
	*max = 0;
	*count = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!lens[i])
			continue;
		sum += 0x8000u >> lens[i];
		*count += 1;
		if (lens[i] > *max)
			*max = lens[i];
	}
	return sum;
}

/* A code the decoder takes: complete, or (not the precode) a lone one-bit code, or (distance
 * codes) none at all (deflate_tables.c). */
static int code_ok(const uint8_t *lens, unsigned n, int precode, int dist)
{
	unsigned max, count;
	uint32_t sum = kraft(lens, n, &max, &count);
	if (sum == 0x8000u)
		return 1;
	if (sum > 0x8000u)
		return 0;
	return (max == 1 && !precode) || (count == 0 && dist);
}

/* 1 where the 13 bits from a position are BFINAL 0, BTYPE 2, HLIT <= 29 and HDIST <= 29. */
static uint8_t dyn_first[1u << 13];
/* The Kraft sums of four precode lengths (3 bits each), in 128ths: a complete precode sums to
 * 128. Summing 19 lengths a table lookup per four rejects almost every position that passed
 * dyn_first, at a tenth of the cost of decoding the precode. */
static uint16_t pre_kraft[1u << 12];
static pthread_once_t dyn_once = PTHREAD_ONCE_INIT;

static void build_dyn_first(void)
{
	for (unsigned v = 0; v < (1u << 13); v++)
		dyn_first[v] = (v & 7) == 4 && ((v >> 3) & 31) <= 29 && ((v >> 8) & 31) <= 29;
	for (unsigned v = 0; v < (1u << 12); v++) {
		unsigned sum = 0;
		for (unsigned k = 0; k < 4; k++) {
			unsigned l = (v >> (3 * k)) & 7;
			sum += l ? 128u >> l : 0;
		}
		pre_kraft[v] = (uint16_t)sum;
	}
}

/* Whether the precode of the dynamic header at `bit` is complete (HCLEN at bit + 13, then up to
 * 19 lengths of 3 bits: 57 bits, what a 64-bit load shifted by up to 7 holds). */
static int precode_complete(const uint8_t *in, size_t len, uint64_t bit)
{
	uint64_t at = bit + 13, byte = (at + 4) / 8;
	if (byte + 8 > len)
		return 1; /* near the end: let the careful check decide */
	unsigned hclen = (unsigned)((zn_get_le16(in + at / 8) >> (at % 8)) & 15) + 4;
	uint64_t pre = zn_get_le64(in + byte) >> ((at + 4) % 8); /* 57 bits: 19 lengths */
	pre &= (1ull << (3 * hclen)) - 1;
	unsigned sum = pre_kraft[pre & 0xfff] + pre_kraft[(pre >> 12) & 0xfff] +
	               pre_kraft[(pre >> 24) & 0xfff] + pre_kraft[(pre >> 36) & 0xfff] +
	               pre_kraft[(pre >> 48) & 0xfff];
	return sum == 128;
}

/* The full check of a dynamic header at bit `bit` (its first 13 bits already passed): 1 valid,
 * 0 not, ZN_CAND_MORE when the input (not final) ends before it does. */
static int dynamic_ok(const uint8_t *in, size_t len, int final, uint64_t bit)
{
	static const uint8_t order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
	                                  11, 4,  12, 3, 13, 2, 14, 1, 15};
	if (!precode_complete(in, len, bit))
		return 0;
	struct bits b = {in, len, bit + 3, 0};
	unsigned hlit = take(&b, 5) + 257, hdist = take(&b, 5) + 1, hclen = take(&b, 4) + 4;
	uint8_t pre[19] = {0};
	for (unsigned i = 0; i < hclen; i++)
		pre[order[i]] = (uint8_t)take(&b, 3);
	if (b.past)
		return final ? 0 : ZN_CAND_MORE;
	if (!code_ok(pre, 19, 1, 0))
		return 0;
	/* The precode's canonical codewords, bit-reversed, in a 7-bit table: symbol + 1, or 0. */
	uint8_t tab[128] = {0}, tlen[128] = {0};
	unsigned code = 0;
	for (unsigned l = 1; l <= 7; l++) {
		for (unsigned s = 0; s < 19; s++) {
			if (pre[s] != l)
				continue;
			unsigned rev = 0;
			for (unsigned k = 0; k < l; k++)
				rev |= ((code >> k) & 1) << (l - 1 - k);
			for (unsigned f = rev; f < 128; f += 1u << l) {
				tab[f] = (uint8_t)(s + 1);
				tlen[f] = (uint8_t)l;
			}
			code++;
		}
		code <<= 1;
	}
	/* The code lengths, with the Kraft sums of both codes kept as they come (in 2^-15ths):
	 * random bits over-subscribe a code within a few dozen lengths, which ends the check
	 * long before the 257..316 lengths a real header has. */
	uint8_t lens[286 + 30];
	const unsigned n = hlit + hdist;
	uint32_t sum_ll = 0, sum_d = 0;
	for (unsigned i = 0; i < n;) {
		unsigned v = peek(&b, 7);
		unsigned sym = tab[v] - 1u, rep = 1;
		b.pos += tlen[v];
		uint8_t val;
		if (sym < 16) {
			val = (uint8_t)sym;
		} else if (sym == 16) {
			if (i == 0)
				return 0;
			val = lens[i - 1];
			rep = 3 + take(&b, 2);
		} else {
			val = 0;
			rep = sym == 17 ? 3 + take(&b, 3) : 11 + take(&b, 7);
		}
		if (rep > n - i)
			return b.past && !final ? ZN_CAND_MORE : 0;
		memset(&lens[i], val, rep);
		if (val) {
			unsigned in_ll = i < hlit ? ZN_MIN(rep, hlit - i) : 0;
			sum_ll += in_ll * (0x8000u >> val);
			sum_d += (rep - in_ll) * (0x8000u >> val);
			if (sum_ll > 0x8000u || sum_d > 0x8000u)
				return b.past && !final ? ZN_CAND_MORE : 0;
		}
		i += rep;
	}
	if (b.past)
		return final ? 0 : ZN_CAND_MORE;
	return lens[256] != 0 && code_ok(lens, hlit, 0, 0) && code_ok(lens + hlit, hdist, 0, 1);
}

static int dynamic_at(const uint8_t *in, size_t len, int final, uint64_t bit)
{
	struct bits b = {in, len, bit, 0};
	uint32_t v = peek(&b, 13);
	if (b.past)
		return final ? 0 : ZN_CAND_MORE;
	if (!dyn_first[v])
		return 0;
	return dynamic_ok(in, len, final, bit);
}

/* A non-final stored block with LEN/NLEN at byte `byte` and zero bits 8 byte - 3 .. 8 byte - 1. */
static int stored_at(const uint8_t *in, size_t len, int final, size_t byte)
{
	if (byte == 0 || byte > len)
		return 0;
	if (in[byte - 1] >> 5)
		return 0;
	if (byte + 4 > len)
		return final ? 0 : ZN_CAND_MORE;
	return (uint16_t)(zn_get_le16(in + byte) ^ zn_get_le16(in + byte + 2)) == 0xffff;
}

/* The first block of a member, after its header at bit `bit`: any type but 3, and checked as a
 * candidate would be if dynamic or stored (final or not). */
static int first_block_ok(const uint8_t *in, size_t len, int final, uint64_t bit)
{
	struct bits b = {in, len, bit, 0};
	uint32_t v = peek(&b, 3);
	if (b.past)
		return final ? 0 : ZN_CAND_MORE;
	unsigned type = v >> 1;
	if (type == 3)
		return 0;
	if (type == 1)
		return 1;
	if (type == 2) {
		v = peek(&b, 13) & ~1u; /* the check of dyn_first, BFINAL either way */
		if (!dyn_first[v])
			return 0;
		return dynamic_ok(in, len, final, bit);
	}
	size_t byte = (size_t)(bit / 8) + 1; /* a member's first block starts on a byte */
	if (byte + 4 > len)
		return final ? 0 : ZN_CAND_MORE;
	return (uint16_t)(zn_get_le16(in + byte) ^ zn_get_le16(in + byte + 2)) == 0xffff;
}

static int member_at(const uint8_t *in, size_t len, int final, size_t byte)
{
	if (byte >= len)
		return final ? 0 : ZN_CAND_MORE;
	if (in[byte] != 0x1f)
		return 0;
	size_t hlen;
	uint32_t bgzf;
	zn_result r = zn_gz_parse_header(in + byte, len - byte, ZN_GZ_HEADER_MAX, &hlen, &bgzf);
	if (r == ZN_ERR_TRUNCATED)
		return final ? 0 : ZN_CAND_MORE;
	if (r != ZN_OK)
		return 0;
	int ok = first_block_ok(in, len, final, 8 * ((uint64_t)byte + hlen));
	if (ok == 1 && bgzf) {
		/* BGZF: the next member (or the end) must be where BSIZE says. */
		uint64_t next = (uint64_t)byte + bgzf;
		if (next + 2 > len)
			return final ? next == len : ZN_CAND_MORE;
		return in[next] == 0x1f && in[next + 1] == 0x8b;
	}
	return ok;
}

static void init_tables(void)
{
	pthread_once(&dyn_once, build_dyn_first);
}

int zn_gz_candidate(const uint8_t *in, size_t len, int final, uint64_t bit)
{
	init_tables();
	if (bit % 8 == 0) {
		int m = member_at(in, len, final, (size_t)(bit / 8));
		if (m)
			return m > 0 ? ZN_CAND_MEMBER : m;
	}
	if (bit % 8 == 5) {
		int s = stored_at(in, len, final, (size_t)(bit / 8) + 1);
		if (s)
			return s > 0 ? ZN_CAND_STORED : s;
	}
	int d = dynamic_at(in, len, final, bit);
	return d > 0 ? ZN_CAND_DYNAMIC : d;
}

uint64_t zn_gz_canonical(const uint8_t *in, size_t len, uint64_t bit)
{
	/* BFINAL 0, BTYPE 0 and zero padding up to the byte: the latest equivalent position. */
	uint64_t byte_end = (bit + 3 + 7) / 8;
	if (byte_end > len || byte_end == 0)
		return bit;
	for (uint64_t b = bit; b < 8 * byte_end; b++)
		if ((in[b / 8] >> (b % 8)) & 1)
			return bit;
	return 8 * byte_end - 3;
}

/* The positions among the 48 from bit 0 of in[0] (16 bytes readable) where a candidate may be,
 * one bit each: dynamic headers by their first 13 bits, computed for all 48 positions at once
 * from one 64-bit word (BFINAL 0, BTYPE 2: bits 0,0,1; HLIT and HDIST <= 29: not their upper
 * four bits all ones), member headers by their magic, stored blocks by LEN == ~NLEN. */
static uint64_t maybe48(const uint8_t *in)
{
	const uint64_t w = zn_get_le64(in), nw = ~w;
	uint64_t m = nw & (nw >> 1) & (w >> 2);
	m &= ~((w >> 4) & (w >> 5) & (w >> 6) & (w >> 7));
	m &= ~((w >> 9) & (w >> 10) & (w >> 11) & (w >> 12));
	for (unsigned i = 0; i < 6; i++) {
		const uint8_t *p = in + i;
		if (p[0] == 0x1f && p[1] == 0x8b)
			m |= 1ull << (8 * i);
		if (!(p[0] >> 5) && (uint16_t)(zn_get_le16(p + 1) ^ zn_get_le16(p + 3)) == 0xffff)
			m |= 1ull << (8 * i + 5);
	}
	return m & ((1ull << 48) - 1);
}

/* The full test at a position maybe48() marked. */
static int full_test(const uint8_t *in, size_t len, int final, uint64_t bit)
{
	const size_t byte = (size_t)(bit / 8);
	if (bit % 8 == 0 && in[byte] == 0x1f) {
		int c = member_at(in, len, final, byte);
		return c > 0 ? ZN_CAND_MEMBER : c;
	}
	if (bit % 8 == 5 && !(in[byte] >> 5)) {
		int c = stored_at(in, len, final, byte + 1);
		if (c)
			return c > 0 ? ZN_CAND_STORED : c;
	}
	int c = dynamic_ok(in, len, final, bit);
	return c > 0 ? ZN_CAND_DYNAMIC : c;
}

int zn_gz_find(const uint8_t *in, size_t len, int final, uint64_t from, uint64_t to,
               uint64_t *found)
{
	init_tables();
	const uint64_t end_bits = 8 * (uint64_t)len;
	if (to > end_bits)
		to = end_bits;
	uint64_t bit = from;
	/* 48 positions per step (6 bytes), which rejects all but about one in nine; where the
	 * bit-by-bit loop this replaced looked up a table per position, it took 5.3 ns per
	 * position (CPU time, on this loaded machine) for finds in gzip -9 streams. */
	while (bit < to && bit / 8 + 16 <= len) {
		const size_t byte = (size_t)(bit / 8);
		uint64_t m = maybe48(in + byte) & (~0ull << (bit % 8));
		if (to - 8 * (uint64_t)byte < 48)
			m &= (1ull << (to - 8 * (uint64_t)byte)) - 1;
		while (m) {
			uint64_t at = 8 * (uint64_t)byte + (unsigned)__builtin_ctzll(m);
			m &= m - 1;
			int c = full_test(in, len, final, at);
			if (c) {
				*found = at;
				return c;
			}
		}
		bit = 8 * (uint64_t)byte + 48;
	}
	/* The last bytes: the careful predicate, bit by bit. */
	for (; bit < to; bit++) {
		int c = zn_gz_candidate(in, len, final, bit);
		if (c) {
			*found = bit;
			return c;
		}
	}
	*found = to;
	return ZN_CAND_NONE;
}
