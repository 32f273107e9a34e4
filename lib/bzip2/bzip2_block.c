/* SPDX-License-Identifier: MIT */
/* bzip2_block.c - one bzip2 block: header and Huffman tables, symbols, RLE1; the block arrays. */
#include <stdlib.h>

#include "bzip2/bzip2_internal.h"
#include "common/big_alloc.h"

/* ---- bits of the header -------------------------------------------------------------------- */

/* Most significant bit first. `buf` holds `n` pending bits at its top; the bits below them are
 * zero or the input that follows. Past the end of the input, zero bits are supplied and counted
 * in `over`: a block that consumed any of them was truncated. */
struct bits {
	const uint8_t *base, *p, *end;
	uint64_t buf;
	uint32_t n;
	uint64_t over;
};

static void bits_fill(struct bits *b)
{
	if (likely(b->end - b->p >= 8)) {
		b->buf |= zn_get_be64(b->p) >> b->n;
		b->p += (63 - b->n) >> 3;
		b->n |= 56;
		return;
	}
	while (b->n <= 56) {
		uint64_t byte = 0;
		if (b->p < b->end)
			byte = *b->p++;
		else
			b->over += 8;
		b->buf |= byte << (56 - b->n);
		b->n += 8;
	}
}

/* The next k bits, 1 <= k <= 32. */
static inline uint32_t bits_get(struct bits *b, unsigned k)
{
	if (b->n < k)
		bits_fill(b);
	uint32_t v = (uint32_t)(b->buf >> (64 - k));
	b->buf <<= k;
	b->n -= k;
	return v;
}

/* Bits consumed from base, the supplied zeros counted. */
static inline uint64_t bits_pos(const struct bits *b)
{
	return (uint64_t)(b->p - b->base) * 8 + b->over - b->n;
}

static inline int bits_overrun(const struct bits *b)
{
	return bits_pos(b) > (uint64_t)(b->end - b->base) * 8;
}

/* ---- tables -------------------------------------------------------------------------------- */

/*
 * The decode tables of one group from its code lengths (1..20 each). Codewords are assigned as
 * bzip2 assigns them, canonically: by length, and within a length by symbol, counting up and
 * doubling at each next length. The rule for decoding is the one of bzip2_internal.h (the
 * shortest length whose limit lies above the code's prefix), which also covers incomplete and
 * over-subscribed codes the way libbz2 decodes them. The fast table holds every codeword of up
 * to HUFF_BITS bits that the rule can reach; the rest is left 0 for the slow path.
 */
static void build_tables(uint16_t *fast, struct bz2_slow *slow, const uint8_t *lens, unsigned alpha)
{
	uint32_t count[BZ2_MAX_CODE_LEN + 2] = {0}, cum[BZ2_MAX_CODE_LEN + 2], first;
	unsigned minlen = BZ2_MAX_CODE_LEN, maxlen = 1;
	for (unsigned s = 0; s < alpha; s++) {
		count[lens[s]]++;
		minlen = ZN_MIN(minlen, lens[s]);
		maxlen = ZN_MAX(maxlen, lens[s]);
	}
	cum[0] = 0;
	for (unsigned l = 1; l <= BZ2_MAX_CODE_LEN + 1; l++)
		cum[l] = cum[l - 1] + count[l - 1];
	uint32_t next[BZ2_MAX_CODE_LEN + 2];
	memcpy(next, cum, sizeof(next));
	for (unsigned s = 0; s < alpha; s++)
		slow->perm[next[lens[s]]++] = (uint16_t)s;
	memset(slow->limit, 0, sizeof(slow->limit));
	memset(slow->off, 0, sizeof(slow->off));
	memset(fast, 0, sizeof(uint16_t) << HUFF_BITS);
	first = 0;
	for (unsigned l = minlen; l <= maxlen; l++) {
		slow->limit[l] = first + count[l];
		slow->off[l] = (int32_t)cum[l] - (int32_t)first;
		if (l <= HUFF_BITS) {
			uint32_t end = ZN_MIN(first + count[l], 1u << l),
			         step = 1u << (HUFF_BITS - l);
			for (uint32_t code = first; code < end; code++) {
				uint16_t e = (uint16_t)(l | slow->perm[cum[l] + code - first] << 5);
				for (uint32_t k = code * step; k < (code + 1) * step; k++)
					fast[k] = e;
			}
		}
		first = (first + count[l]) << 1;
	}
	slow->maxlen = maxlen;
}

/* ---- the block header ---------------------------------------------------------------------- */

/* The byte values used, as the move-to-front list starts: b->mtf. Returns how many (0: none). */
static unsigned read_bitmap(struct bz2_block *b, struct bits *br)
{
	unsigned used16 = bits_get(br, 16), n = 0;
	for (unsigned i = 0; i < 16; i++) {
		if (!(used16 & (0x8000u >> i)))
			continue;
		unsigned used = bits_get(br, 16);
		for (unsigned j = 0; j < 16; j++)
			if (used & (0x8000u >> j))
				b->mtf[n++] = (uint8_t)(i * 16 + j);
	}
	memset(b->mtf + n, 0, 256 - n);
	return n;
}

/* The selectors: unary move-to-front indices (1 bits then a 0), undone here. */
static zn_result read_selectors(struct bz2_block *b, struct bits *br, unsigned ngroups)
{
	uint32_t nsel = bits_get(br, 15);
	SAFETY_CHECK(nsel >= 1, ZN_ERR_CORRUPT);
	uint8_t order[BZ2_MAX_GROUPS] = {0, 1, 2, 3, 4, 5};
	for (uint32_t i = 0; i < nsel; i++) {
		if (br->n < 8)
			bits_fill(br);
		/* The run of 1 bits: at most ngroups - 1 of them. */
		unsigned j = (unsigned)__builtin_clzll(~br->buf | (1ull << 56));
		SAFETY_CHECK(j < ngroups, ZN_ERR_CORRUPT);
		br->buf <<= j + 1;
		br->n -= j + 1;
		if (i < BZ2_MAX_SELECTORS) {
			uint8_t g = order[j];
			memmove(order + 1, order, j);
			order[0] = g;
			b->t.selectors[i] = g;
		}
		if (unlikely(br->over > 64))
			return ZN_ERR_TRUNCATED;
	}
	b->t.nselectors = ZN_MIN(nsel, BZ2_MAX_SELECTORS);
	return ZN_OK;
}

/* Each group's code lengths: a 5-bit start, then per symbol steps of +1 (10) or -1 (11) ended by
 * a 0, the length held within 1..20 before every step. */
static zn_result read_lengths(struct bz2_block *b, struct bits *br, unsigned ngroups,
                              unsigned alpha)
{
	uint8_t lens[BZ2_MAX_ALPHA];
	for (unsigned g = 0; g < ngroups; g++) {
		int cur = (int)bits_get(br, 5);
		for (unsigned s = 0; s < alpha; s++) {
			for (;;) {
				SAFETY_CHECK(cur >= 1 && cur <= BZ2_MAX_CODE_LEN, ZN_ERR_CORRUPT);
				if (!bits_get(br, 1))
					break;
				cur += bits_get(br, 1) ? -1 : 1;
				if (unlikely(br->over > 64))
					return ZN_ERR_TRUNCATED;
			}
			lens[s] = (uint8_t)cur;
		}
		build_tables(b->t.fast[g], &b->t.slow[g], lens, alpha);
	}
	return ZN_OK;
}

static zn_result read_header(struct bz2_block *b, struct bits *br, unsigned *alpha)
{
	uint32_t hi = bits_get(br, 24), lo = bits_get(br, 24);
	SAFETY_CHECK(((uint64_t)hi << 24 | lo) == BZ2_BLOCK_MAGIC, ZN_ERR_CORRUPT);
	b->crc = bits_get(br, 32);
	b->rand = bits_get(br, 1);
	b->orig_ptr = bits_get(br, 24);
	unsigned used = read_bitmap(b, br);
	SAFETY_CHECK(used > 0, ZN_ERR_CORRUPT);
	*alpha = used + 2;
	unsigned ngroups = bits_get(br, 3);
	SAFETY_CHECK(ngroups >= BZ2_MIN_GROUPS && ngroups <= BZ2_MAX_GROUPS, ZN_ERR_CORRUPT);
	RETURN_IF_ERROR(read_selectors(b, br, ngroups));
	return read_lengths(b, br, ngroups, *alpha);
}

/* ---- symbols ------------------------------------------------------------------------------- */

/* The symbol loop runs on the input in place while 160 bytes remain at a group's start (a group
 * reads at most 133), then on a zero-padded copy of the last bytes, in b->tail: the same loop to
 * the end, with no bounds checks in it. */
#define TAIL_MARGIN 160

/* Start the loop's bit buffer at bit `bit` of from[]: a refill's worth, the bits before `bit`
 * dropped (7 whole bytes are in the buffer, and the 8th's bits below them, as REFILL leaves). */
static void sym_start(struct bz2_sym_ctx *c, const uint8_t *from, unsigned bit)
{
	c->bitbuf = zn_get_be64(from) << bit;
	c->bitcount = 56 - bit;
	c->in = from + 7;
}

static zn_result read_symbols(struct bz2_block *b, const struct bits *br, unsigned alpha,
                              uint32_t max_n)
{
	memset(b->count, 0, sizeof(b->count));
	uint64_t pos = bits_pos(br);
	const uint8_t *at = br->base + pos / 8, *end = br->end;
	struct bz2_sym_ctx c = {
	        .t = &b->t,
	        .eob = alpha - 1,
	        .mtf = b->mtf,
	        .out = b->ll,
	        .out_end = b->ll + max_n,
	        .count = b->count,
	        .run_weight = 1,
	};
	int r = BZ2_SYM_LIMIT, ran = end - at >= TAIL_MARGIN;
	if (ran) {
		sym_start(&c, at, pos % 8);
		c.in_limit = end - TAIL_MARGIN;
		r = b->k.symbols(&c);
		at = c.in;
	}
	if (r == BZ2_SYM_LIMIT) {
		/* The rest of the input (under TAIL_MARGIN bytes) is copied from `at`, where the
		 * loop's buffer ends; a fresh start reloads it from there. */
		size_t left = (size_t)(end - at);
		memset(b->tail, 0, sizeof(b->tail));
		memcpy(b->tail, at, left);
		if (ran)
			c.in = b->tail;
		else
			sym_start(&c, b->tail, pos % 8);
		/* Groups start while real bits may be left: past tail + left + 8, the buffer's 56+
		 * bits would all lie beyond the end. Padding decoded meanwhile is caught below. */
		c.in_limit = b->tail + left + 8;
		r = b->k.symbols(&c);
		if (r == BZ2_SYM_LIMIT)
			return ZN_ERR_TRUNCATED;
		c.in = at + (c.in - b->tail); /* back to the input's coordinates */
	}
	uint64_t stop = (uint64_t)(c.in - br->base) * 8 - c.bitcount;
	uint64_t last = (uint64_t)(end - br->base) * 8;
	/* A fault found within a codeword's reach of the end (21 bits: libbz2 reads one past the
	 * longest) may lie in the zeros after it: a stream cut there reads as truncated. */
	if (r == BZ2_SYM_ERROR)
		return stop + BZ2_MAX_CODE_LEN + 1 > last ? ZN_ERR_TRUNCATED : c.err;
	if (stop > last)
		return ZN_ERR_TRUNCATED;
	b->end_bit = stop;
	b->n = (uint32_t)(c.out - b->ll);
	return ZN_OK;
}

zn_result zn_bz2_read_block(struct bz2_block *b, const uint8_t *in, size_t len, uint64_t bit,
                            uint32_t max_n)
{
	struct bits br = {.base = in, .p = in + bit / 8, .end = in + len};
	if (bit / 8 >= len)
		return ZN_ERR_TRUNCATED;
	bits_fill(&br);
	if (bit % 8)
		bits_get(&br, bit % 8);
	unsigned alpha;
	zn_result r = read_header(b, &br, &alpha);
	if (bits_overrun(&br)) /* the fault, if any, lies in the zeros after the end */
		r = ZN_ERR_TRUNCATED;
	if (r != ZN_OK)
		return r;
	RETURN_IF_ERROR(read_symbols(b, &br, alpha, max_n));
	/* origPtr names a row of the block: so the block is not empty either. */
	SAFETY_CHECK(b->orig_ptr < b->n, ZN_ERR_CORRUPT);
	return ZN_OK;
}

/* ---- RLE1 ---------------------------------------------------------------------------------- */

/*
 * In the block before RLE1, 4 equal bytes in a row are followed by a count of further copies
 * (0..255), and counting starts again after the count. 4 equal bytes that end the block have no
 * count: no encoder writes that, and libbz2 then takes the byte after the block's end (the walk
 * goes one step further) as the count, writes the run and fails the block as corrupt; so does
 * this decoder (zn_bz2_rle1_size), which the expansion leaves to its callers.
 *
 * Where, from s[i], the first 4 equal bytes in a row start: 8 positions per step (SWAR: a zero
 * byte of (w0 ^ w1) | (w1 ^ w2) | (w2 ^ w3), with wk the word at i + k, marks 4 equal; the
 * first zero byte is found exactly, later ones may be false, and only the first is used),
 * bytewise near the end. n if none.
 */
static size_t find_run(const uint8_t *s, size_t i, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	for (; i + 11 <= n; i += 8) {
		uint64_t w0 = zn_get_le64(s + i), w1 = zn_get_le64(s + i + 1);
		uint64_t w2 = zn_get_le64(s + i + 2), w3 = zn_get_le64(s + i + 3);
		uint64_t d = (w0 ^ w1) | (w1 ^ w2) | (w2 ^ w3);
		uint64_t z = (d - ones) & ~d & highs;
		if (z)
			return i + (size_t)(__builtin_ctzll(z) >> 3);
	}
	for (; i + 4 <= n; i++)
		if (s[i] == s[i + 1] && s[i] == s[i + 2] && s[i] == s[i + 3])
			return i;
	return n;
}

uint64_t zn_bz2_rle1_size(const uint8_t *s, size_t n, int *bad)
{
	uint64_t size = 0;
	size_t i = 0;
	*bad = 0;
	for (;;) {
		size_t r = find_run(s, i, n);
		if (r + 4 >= n) { /* no run, or one without its count (libbz2: corrupt) */
			*bad = r + 4 == n;
			return size + (n - i);
		}
		size += (r + 4 - i) + s[r + 4];
		i = r + 5;
	}
}

void zn_bz2_rle1_start(struct bz2_rle1 *r, const uint8_t *s, size_t n)
{
	*r = (struct bz2_rle1){.s = s, .n = n, .run_at = SIZE_MAX};
}

size_t zn_bz2_rle1_expand(struct bz2_rle1 *r, uint8_t *out, size_t cap)
{
	size_t o = 0;
	for (;;) {
		if (r->left) {
			size_t k = ZN_MIN(r->left, cap - o);
			memset(out + o, r->byte, k);
			o += k;
			r->left -= (uint32_t)k;
			if (r->left)
				return o;
		}
		if (r->i >= r->n || o == cap)
			return o;
		/* The literal bytes up to the next run's count (the run's 4 bytes included). */
		if (r->run_at == SIZE_MAX)
			r->run_at = find_run(r->s, r->i, r->n);
		size_t end = r->run_at + 4 >= r->n ? r->n : r->run_at + 4;
		size_t k = ZN_MIN(end - r->i, cap - o);
		memcpy(out + o, r->s + r->i, k);
		o += k;
		r->i += k;
		if (r->i < end)
			return o;
		if (end < r->n) {
			r->byte = r->s[r->run_at];
			r->left = r->s[end];
			r->i = end + 1;
		}
		r->run_at = SIZE_MAX;
	}
}

/* ---- block objects ------------------------------------------------------------------------- */

#define LL_BYTES      (BZ2_MAX_BLOCK + BZ2_SLACK)
#define LINK_BYTES    ((size_t)4 << 20) /* 3.6 MB, to whole huge pages */
#define SCRATCH_BYTES ZN_MAX(BZ2_MAX_BLOCK, BZ2_PIECE + BZ2_SLACK)

zn_result zn_bz2_block_init(struct bz2_block *b, uint32_t features)
{
	memset(b, 0, offsetof(struct bz2_block, k));
	zn_bz2_kernels(&b->k, features);
	/* Huge pages: the walks jump around 7.2 MB, and with 4 KiB pages nearly every step would
	 * also miss the TLB. */
	b->ll = zn_big_alloc(LL_BYTES);
	b->link = zn_big_alloc(LINK_BYTES);
	b->walk.scratch = malloc(SCRATCH_BYTES);
	b->walk.lanes = malloc((size_t)WALK_LANES * WALK_LANE_BUF);
	if (!b->ll || !b->link || !b->walk.scratch || !b->walk.lanes) {
		zn_bz2_block_free(b);
		return ZN_ERR_NOMEM;
	}
	return ZN_OK;
}

void zn_bz2_block_free(struct bz2_block *b)
{
	zn_big_free(b->ll, LL_BYTES);
	zn_big_free(b->link, LINK_BYTES);
	free(b->walk.scratch);
	free(b->walk.lanes);
	b->walk.lanes = NULL;
	b->ll = NULL;
	b->link = NULL;
	b->walk.scratch = NULL;
}

void zn_bz2_kernels(struct bz2_kernels *k, uint32_t features)
{
	k->symbols = zn_bz2_select_symbols(features, &k->symbols_name);
	k->crc = zn_bz2_select_crc(features);
	k->scan = zn_bz2_select_scan(features, &k->scan_name);
}
