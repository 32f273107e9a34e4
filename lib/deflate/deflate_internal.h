/* SPDX-License-Identifier: MIT */
/* deflate_internal.h - the DEFLATE decoder's table format, kernel interface and object layout. */
#ifndef ZN_DEFLATE_INTERNAL_H
#define ZN_DEFLATE_INTERNAL_H

#include "common/common.h"

/*
 * Decode table entries (uint32_t), one format for the literal/length, distance and precode
 * tables, chosen so that the hot loop does one shift to consume a codeword together with its
 * extra bits:
 *
 *   bits  0..7   bits to consume: codeword length + extra-bit count (subtable pointer: the
 *                root table's bits); at most 28, so bits 6..7 are free (literal count below)
 *   bits  8..11  codeword length: the extra bits start after it (subtable pointer: the
 *                subtable's index bits)
 *   bit  13      end of block            } only together with bit 15; for ordinary length and
 *   bit  14      subtable pointer        } distance entries bits 12..15 are zero, so
 *   bit  15      exceptional             } (entry >> 8) & 63 is the codeword length
 *   bits 16..31  length base, distance base, precode symbol or subtable start
 *
 * Literal entries are told apart by bits 6..7, which hold their number of literals (1..3;
 * 0 in every other entry): bits 0..5 count the bits of all their codewords and bits 8..31 hold
 * up to three bytes. In the literal/length root table, where the bits after a literal's
 * codeword (within the root's 12) hold whole further literal codewords, one entry yields them
 * all; the fast loop stores bits 8..31 as one 32-bit word and advances by the count. Consuming
 * subtracts the whole entry from `bitsleft`, whose bits above 5 are garbage anyway, and shifts
 * by bits 0..5 (x86 shifts use only those).
 *
 * An exceptional entry with neither bit 13 nor 14 is invalid: a code unused by an incomplete
 * code, literal/length 286/287 or distance 30/31.
 */
#define HD_LIT_ONE  0x00000040u
#define HD_LIT_MASK 0x000000c0u
#define HD_EXC      0x00008000u
#define HD_SUBTABLE 0x00004000u
#define HD_EOB      0x00002000u
#define HD_INVALID  HD_EXC

#ifndef ZN_LITLEN_TABLEBITS /* overridable for A/B measurements */
#define ZN_LITLEN_TABLEBITS 12
#endif
#define LITLEN_TABLEBITS ZN_LITLEN_TABLEBITS
#ifndef ZN_DIST_TABLEBITS /* overridable for A/B measurements */
#define ZN_DIST_TABLEBITS 8
#endif
#define DIST_TABLEBITS    ZN_DIST_TABLEBITS
#define PRECODE_TABLEBITS 7
/* Largest tables with subtables for 288/32 symbols of at most 15 bits with these root sizes
 * (the numbers zlib's `enough` utility gives; table building also checks the bound). */
#define LITLEN_ENOUGH 6400
#define DIST_ENOUGH   (DIST_TABLEBITS == 8 ? 402 : (1u << DIST_TABLEBITS) + 30 * 32)

#define DEFLATE_NUM_LITLEN 288
#define DEFLATE_NUM_DIST   32
#define DEFLATE_MAX_LEN    258

/* Output slack the fast loop keeps before the end of the output: the longest match rounded up
 * to the widest store (64 bytes), plus the literals of one iteration (up to 9 before a match,
 * stored as words). */
#define FASTLOOP_OUT_MARGIN (DEFLATE_MAX_LEN + 64 + 16)
/* The fast loop refills at most twice per iteration, each refill loading 8 bytes at `in` and
 * advancing it by up to 7. */
#define FASTLOOP_IN_MARGIN 15

enum { FL_LIMIT = 0, FL_EOB = 1, FL_ERROR = 2 };

/* The state the fast loop works on; copied into registers on entry and back on exit. */
struct zn_fast_ctx {
	const uint8_t *in;       /* next byte not yet in bitbuf */
	const uint8_t *in_limit; /* the loop runs while in < in_limit (FASTLOOP_IN_MARGIN bytes
	                            readable at in) */
	uint64_t bitbuf;         /* low `bitsleft` bits are pending input, LSB first; bits above
	                            are zero or equal the bytes at `in` */
	uint32_t bitsleft;
	uint8_t *out;
	uint8_t *out_limit;      /* the loop runs while out < out_limit */
	const uint8_t *out_base; /* the oldest byte a match may copy from */
	const uint32_t *litlen;
	const uint32_t *dist;
	zn_result err; /* set when FL_ERROR is returned */
};

typedef int (*zn_fastloop_fn)(struct zn_fast_ctx *c);

/* The same for the symbol fast loop (unknown window, deflate_markers.c): 16-bit output, where
 * out_limit also stops the loop where the window would become known as of entry. */
struct zn_sym_ctx {
	const uint8_t *in;
	const uint8_t *in_limit;
	uint64_t bitbuf;
	uint32_t bitsleft;
	uint16_t *out;
	uint16_t *out_limit;
	const uint16_t *out_base;   /* the oldest symbol a match may copy from */
	const uint16_t *marker_end; /* one past the newest marker written; updated */
	const uint32_t *litlen;
	const uint32_t *dist;
	zn_result err;
};
int zn_fastloop_symbols(struct zn_sym_ctx *c);

/* The best fast loop for the CPU features in `features` (zn_cpu_features()), and its name. */
zn_fastloop_fn zn_select_fastloop(uint32_t features, const char **name);
/* The portable C fast loop (every target). */
int zn_fastloop_generic(struct zn_fast_ctx *c);

/* Joins literals in a literal/length root table (see deflate_tables.c): the portable version
 * and, where the CPU has them, vector versions; chosen once per decoder object. */
typedef void (*zn_pair_fn)(uint32_t *table, const uint8_t *lens, const uint16_t *rev_of);
void zn_pair_literals_generic(uint32_t *table, const uint8_t *lens, const uint16_t *rev_of);
zn_pair_fn zn_select_pair(uint32_t features);

/* Marker resolution (zn_inflate_resolve_markers): resolve the symbols sym[0..n) in whole blocks
 * of 16 into out[], the 32 KiB window in wf[0..32768) followed by at least 4 readable bytes
 * (marker ZN_INFLATE_MARKER + k is wf[k]), stopping before the first block that holds a
 * symbol s with 256 <= s < lowest. Returns the symbols done, a multiple of 16. A block is
 * loaded before its bytes are stored, so `out` may be `sym` (narrowing in place). The portable
 * version, and vector ones where the CPU has them; chosen once per process. */
typedef size_t (*zn_resolve_fn)(const uint16_t *sym, size_t n, const uint8_t *wf, uint32_t lowest,
                                uint8_t *out);
size_t zn_resolve_generic(const uint16_t *sym, size_t n, const uint8_t *wf, uint32_t lowest,
                          uint8_t *out);
zn_resolve_fn zn_select_resolve(uint32_t features);

/* Table building (deflate_tables.c). `lens` holds one codeword length per symbol. `pair`
 * (literal/length tables only; may be NULL) joins literals when the code makes it worthwhile. */
enum zn_code_kind { ZN_CODE_LITLEN, ZN_CODE_DIST, ZN_CODE_PRECODE };
zn_result zn_build_decode_table(uint32_t *table, const uint8_t *lens, unsigned nsyms,
                                enum zn_code_kind kind, zn_pair_fn pair);
/* The fixed-Huffman tables of RFC 1951 3.2.6, built once per process and shared read-only. */
const uint32_t *zn_fixed_litlen_table(void);
const uint32_t *zn_fixed_dist_table(void);

/* Checksums: CRC-32 (gzip) and Adler-32 (zlib), the library's folding kernels. */
#define zn_deflate_crc32   zn_crc32
#define zn_deflate_adler32 zn_adler32

#endif
