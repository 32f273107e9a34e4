/* SPDX-License-Identifier: MIT */
/* deflate_tables.c - canonical Huffman decode tables for DEFLATE, built by doubling. */
#include <pthread.h>

#include "deflate_internal.h"

/* Per-symbol part of a table entry: value, flags and extra-bit count (in bits 0..7, to which
 * the codeword length is added when the entry is placed). */
static ZN_FORCEINLINE uint32_t litlen_symbol_entry(unsigned sym)
{
	static const uint16_t len_base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
	                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
	                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
	static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
	                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
	if (sym < 256)
		return HD_LIT_ONE | (sym << 8);
	if (sym == 256)
		return HD_EXC | HD_EOB;
	if (sym < 286)
		return ((uint32_t)len_base[sym - 257] << 16) | len_extra[sym - 257];
	return HD_INVALID;
}

static ZN_FORCEINLINE uint32_t dist_symbol_entry(unsigned sym)
{
	static const uint16_t dist_base[30] = {1,    2,    3,    4,     5,     7,    9,    13,
	                                       17,   25,   33,   49,    65,    97,   129,  193,
	                                       257,  385,  513,  769,   1025,  1537, 2049, 3073,
	                                       4097, 6145, 8193, 12289, 16385, 24577};
	if (sym < 30) {
		unsigned extra = sym < 4 ? 0 : sym / 2 - 1;
		return ((uint32_t)dist_base[sym] << 16) | extra;
	}
	return HD_INVALID;
}

static ZN_FORCEINLINE uint32_t symbol_entry(enum zn_code_kind kind, unsigned sym)
{
	switch (kind) {
	case ZN_CODE_LITLEN:
		return litlen_symbol_entry(sym);
	case ZN_CODE_DIST:
		return dist_symbol_entry(sym);
	default:
		return sym << 16;
	}
}

/* The entry for `sym` whose codeword has `len` bits in this (sub)table. The codeword length goes
 * to bits 8..11 and is added to the extra-bit count in bits 0..7. Invalid symbols stay invalid. */
static ZN_FORCEINLINE uint32_t place_entry(uint32_t sym_entry, unsigned len)
{
	if (sym_entry & HD_LIT_MASK)
		return sym_entry + len;
	if ((sym_entry & HD_EXC) && !(sym_entry & HD_EOB))
		return sym_entry;
	return sym_entry + (len << 8) + len;
}

/*
 * Pairing pays only when literal pairs fit in the root often. The probability that a position
 * starting with a literal codeword holds two that fit is about sum over a + b <= 12 of
 * m[a] * m[b], m[l] being the code space of literals with l-bit codewords. Measured per
 * dynamic block (level 6): base64 0.89, FASTQ 0.41, but source tar, English text, x86-64 code
 * and int64 columns 0.00..0.02, where pairing only cost time (3-8% more instructions, 2-6%
 * slower). Pair above 1/8.
 */
static int worth_pairing(const uint8_t *lens)
{
	uint64_t m[16] = {0}; /* in units of 2^-15 */
	for (unsigned s = 0; s < 256; s++)
		m[lens[s]] += 1u << (15 - lens[s]);
	uint64_t p = 0; /* in units of 2^-30 */
	for (unsigned a = 1; a < LITLEN_TABLEBITS; a++)
		for (unsigned b = 1; a + b <= LITLEN_TABLEBITS; b++)
			p += m[a] * m[b];
	return p >= (1u << 27);
}

/*
 * Join literals in the literal/length root table: where the bits after a literal's codeword
 * (within the 12 looked up) hold one or two whole further literal codewords, the entry yields
 * them all, so runs of literals take a half or a third of the lookups. The entries that start
 * with literal s (l1 bits, reversed code r) are r | k << l1 for every k of the 12 - l1 bits
 * after it; those bits decode as single[k] (valid when its codeword fits in them), and the
 * bits after that as single[k >> l2]. Visiting only literal-first entries, reading `single`
 * contiguously, this costs ~15 instructions per entry; the first version, which walked all
 * 4096 entries with two dependent table lookups each, cost 2.5x as much and ate the gain on
 * small blocks (base64: 45% of all instructions in table building).
 */
void zn_pair_literals_generic(uint32_t *t, const uint8_t *lens, const uint16_t *rev_of)
{
	uint32_t single[1u << (LITLEN_TABLEBITS - 1)];
	memcpy(single, t, sizeof(single));
	for (unsigned s = 0; s < 256; s++) {
		const unsigned l1 = lens[s];
		if (l1 == 0 || l1 >= LITLEN_TABLEBITS)
			continue;
		const unsigned room = LITLEN_TABLEBITS - l1, r = rev_of[s];
		const uint32_t e1 = single[r] + HD_LIT_ONE;
		for (unsigned k = 0; k < (1u << room); k++) {
			uint32_t e2 = single[k];
			unsigned l2 = e2 & 15;
			uint32_t e3 = single[k >> l2];
			unsigned l3 = e3 & 15;
			uint32_t two = e1 + l2 + ((e2 & 0xff00) << 8);
			uint32_t three = two + l3 + ((e3 & 0xff00) << 16) + HD_LIT_ONE;
			int ok2 = (e2 & HD_LIT_MASK) && l2 <= room;
			int ok3 = ok2 && (e3 & HD_LIT_MASK) && l2 + l3 <= room;
			t[r | (k << l1)] = ok3 ? three : ok2 ? two : e1 - HD_LIT_ONE;
		}
	}
}

/* Increment a `len`-bit canonical codeword held bit-reversed (DEFLATE reads codewords MSB first
 * from an LSB-first stream, so tables are indexed by reversed codewords). */
static unsigned next_reversed(unsigned rev, unsigned len)
{
	unsigned bit = 1u << (len - 1);
	while (rev & bit) {
		rev ^= bit;
		bit >>= 1;
	}
	return rev | bit;
}

/*
 * Build a decode table: a root table of 2^tablebits entries, then subtables for longer codes.
 * Accepts exactly what zlib accepts: over-subscribed codes are refused; incomplete codes only
 * when the longest codeword has one bit (a single code, allowed for literal/length and distance
 * codes), or, for distance codes, no codes at all (then every distance symbol is invalid).
 *
 * The root table is filled by doubling: after the codewords of length L are placed in the first
 * 2^L entries, those entries are copied to the next 2^L, which replicates every shorter codeword
 * for all values of the bits after it; longer codewords then overwrite the slots that belong to
 * them. This costs one store per symbol plus memcpy of the table, instead of one store per
 * replicated entry scattered across the table.
 */
zn_result zn_build_decode_table(uint32_t *table, const uint8_t *lens, unsigned nsyms,
                                enum zn_code_kind kind, zn_pair_fn pair)
{
	const unsigned tablebits = kind == ZN_CODE_LITLEN ? LITLEN_TABLEBITS
	                           : kind == ZN_CODE_DIST ? DIST_TABLEBITS
	                                                  : PRECODE_TABLEBITS;
	const unsigned enough = kind == ZN_CODE_LITLEN ? LITLEN_ENOUGH
	                        : kind == ZN_CODE_DIST ? DIST_ENOUGH
	                                               : 1u << PRECODE_TABLEBITS;
	unsigned count[16] = {0}, offs[16];
	uint16_t sorted[DEFLATE_NUM_LITLEN], rev_of[DEFLATE_NUM_LITLEN];
	unsigned max = 0;

	for (unsigned s = 0; s < nsyms; s++)
		count[lens[s]]++;
	for (unsigned l = 15; l >= 1; l--) {
		if (count[l]) {
			max = l;
			break;
		}
	}
	int left = 1;
	for (unsigned l = 1; l <= 15; l++) {
		left = (left << 1) - (int)count[l];
		SAFETY_CHECK(left >= 0, ZN_ERR_BAD_CODE_LENGTHS); /* over-subscribed */
	}
	if (left > 0) {
		/* Incomplete: zlib allows a lone one-bit code, and no distance codes at all. */
		int ok =
		        (max == 1 && kind != ZN_CODE_PRECODE) || (max == 0 && kind == ZN_CODE_DIST);
		SAFETY_CHECK(ok, ZN_ERR_BAD_CODE_LENGTHS);
		for (unsigned i = 0; i < (1u << tablebits); i++)
			table[i] = HD_INVALID;
		if (max == 0)
			return ZN_OK;
	}

	/* Sort symbols by (length, symbol): the canonical code order. */
	offs[1] = 0;
	for (unsigned l = 1; l < 15; l++)
		offs[l + 1] = offs[l] + count[l];
	for (unsigned s = 0; s < nsyms; s++)
		if (lens[s])
			sorted[offs[lens[s]]++] = (uint16_t)s;

	unsigned idx = 0, rev = 0, len = 1;
	const unsigned root_max = max < tablebits ? max : tablebits;
	for (; len <= root_max; len++) {
		for (unsigned n = count[len]; n; n--) {
			unsigned s = sorted[idx++];
			table[rev] = place_entry(symbol_entry(kind, s), len);
			rev_of[s] = (uint16_t)rev;
			rev = next_reversed(rev, len);
		}
		if (len < tablebits)
			memcpy(&table[1u << len], &table[0], sizeof(uint32_t) << len);
	}
	/* The longest codeword is shorter than the root: keep doubling. */
	for (; len < tablebits; len++)
		memcpy(&table[1u << len], &table[0], sizeof(uint32_t) << len);

	/* Codewords longer than the root: each distinct root prefix gets a subtable just big
	 * enough for the codewords that share it (zlib's sizing rule). */
	unsigned next_free = 1u << tablebits, cur_prefix = ~0u, sub_start = 0, sub_bits = 0;
	const unsigned root_mask = (1u << tablebits) - 1;
	for (len = tablebits + 1; len <= max; len++) {
		for (; count[len]; count[len]--) {
			unsigned s = sorted[idx++];
			unsigned prefix = rev & root_mask;
			if (prefix != cur_prefix) {
				cur_prefix = prefix;
				unsigned l = len;
				int room = (1 << (l - tablebits)) - (int)count[l];
				while (room > 0 && l < max) {
					l++;
					room = (room << 1) - (int)count[l];
				}
				sub_bits = l - tablebits;
				sub_start = next_free;
				next_free += 1u << sub_bits;
				SAFETY_CHECK(next_free <= enough, ZN_ERR_BAD_CODE_LENGTHS);
				table[prefix] = HD_EXC | HD_SUBTABLE | (sub_start << 16) |
				                (sub_bits << 8) | tablebits;
			}
			uint32_t e = place_entry(symbol_entry(kind, s), len - tablebits);
			for (unsigned i = rev >> tablebits; i < (1u << sub_bits);
			     i += 1u << (len - tablebits))
				table[sub_start + i] = e;
			rev = next_reversed(rev, len);
		}
	}
	if (kind == ZN_CODE_LITLEN && pair && worth_pairing(lens))
		pair(table, lens, rev_of);
	return ZN_OK;
}

/* The fixed codes are the same for every block of every stream: built once, then shared. */
static uint32_t fixed_litlen[LITLEN_ENOUGH];
static uint32_t fixed_dist[DIST_ENOUGH];
static pthread_once_t fixed_once = PTHREAD_ONCE_INIT;

static void build_fixed(void)
{
	uint8_t lens[DEFLATE_NUM_LITLEN];
	unsigned i = 0;
	for (; i < 144; i++)
		lens[i] = 8;
	for (; i < 256; i++)
		lens[i] = 9;
	for (; i < 280; i++)
		lens[i] = 7;
	for (; i < 288; i++)
		lens[i] = 8;
	zn_result r = zn_build_decode_table(fixed_litlen, lens, DEFLATE_NUM_LITLEN, ZN_CODE_LITLEN,
	                                    NULL); /* 8- and 9-bit literals never pair */
	ZN_ASSERT(r == ZN_OK);
	memset(lens, 5, DEFLATE_NUM_DIST);
	r = zn_build_decode_table(fixed_dist, lens, DEFLATE_NUM_DIST, ZN_CODE_DIST, NULL);
	ZN_ASSERT(r == ZN_OK);
	(void)r;
}

const uint32_t *zn_fixed_litlen_table(void)
{
	pthread_once(&fixed_once, build_fixed);
	return fixed_litlen;
}

const uint32_t *zn_fixed_dist_table(void)
{
	pthread_once(&fixed_once, build_fixed);
	return fixed_dist;
}
