/* SPDX-License-Identifier: MIT */
/* bzip2_internal.h - the bzip2 decoder's constants, block state and per-ISA kernel interfaces. */
#ifndef ZN_BZIP2_INTERNAL_H
#define ZN_BZIP2_INTERNAL_H

#include "common/common.h"

/*
 * A bzip2 stream is "BZh" and a digit '1'..'9' (the block size in units of 100,000 bytes),
 * then blocks, then an end-of-stream mark; streams may follow each other (pbzip2 writes one per
 * block). Everything after the 4-byte header is a bit stream, most significant bit first, with
 * no byte alignment until the end of the stream:
 *
 *   block: 48-bit magic 0x314159265359 (BCD pi), 32-bit CRC of the block's output, 1 bit
 *          "randomised" (bzip2 0.9.0's answer to slow sorting), 24-bit origPtr (the row of the
 *          original string among the sorted rotations), a two-level bitmap of the byte values
 *          used, 3 bits: the number of Huffman tables (2..6), 15 bits: the number of selectors
 *          (one per 50 symbols: which table codes them), the selectors move-to-front coded in
 *          unary, each table's code lengths delta-coded, then the symbols till end-of-block.
 *   end:   48-bit magic 0x177245385090 (BCD sqrt(pi)), 32-bit combined CRC (each block's CRC
 *          folded in: c = (c << 1 | c >> 31) ^ block_crc), then padding to a byte.
 *
 * Decoding a block reverses four stages: Huffman codes give symbols; the symbols are move-to-
 * front indices, with runs of index 0 written in bijective base 2 (RUNA = 1, RUNB = 2 times the
 * digit's weight); the indices give the last column L of the sorted rotations (the
 * Burrows-Wheeler transform), which the inverse transform turns back into the block; and in the
 * block, any 4 equal bytes are followed by a count of further copies (0..255) (RLE1). The
 * block's CRC covers the final output.
 */

#define BZ2_BLOCK_MAGIC   0x314159265359ull
#define BZ2_EOS_MAGIC     0x177245385090ull
#define BZ2_MAX_GROUPS    6
#define BZ2_MIN_GROUPS    2
#define BZ2_GROUP_SIZE    50
#define BZ2_MAX_ALPHA     258 /* 256 byte values + RUNA/RUNB - 1 (index 0) + end of block */
#define BZ2_MAX_CODE_LEN  20
#define BZ2_MAX_SELECTORS 18002 /* 900,000 / 50 + 2: more are read but never used */
#define BZ2_MAX_BLOCK     900000u
/* A compressed block longer than this is refused (ZN_ERR_LIMIT). No encoder writes one: at most
 * 900,001 symbols of at most 20 bits, 32767 selectors of at most 6 bits and 6 tables of 258
 * lengths (2.29 MB in all); only code lengths stepped up and down without end could make it,
 * and the bound is what lets a parallel decoder hand each block a window of the input. */
#define BZ2_MAX_BLOCK_BYTES ((size_t)5 << 19) /* 2.5 MiB */

/* Slack after the block arrays: the symbol loop fills runs and the walks store with whole
 * 32-byte vectors. */
#define BZ2_SLACK 64

/* The Huffman decode table of one group: entries of HUFF_BITS bits of lookahead. An entry is
 * the codeword length (bits 0..4; 0: the code is longer, decode it from `slow`) and the symbol
 * (bits 5..13). */
#ifndef ZN_BZ2_HUFF_BITS /* overridable for A/B measurements */
#define ZN_BZ2_HUFF_BITS 10
#endif
#define HUFF_BITS ZN_BZ2_HUFF_BITS

/* Canonical decoding of codewords longer than HUFF_BITS, bit length by bit length: the first
 * `len` bits c of the input are a codeword of that length when c < limit[len]; its symbol is
 * perm[c + off[len]]. Codes may be incomplete or over-subscribed: libbz2 decodes them by this
 * rule (the shortest length whose limit is above), and so does this decoder, so that both give
 * the same output, or both fail, on any block. */
struct bz2_slow {
	uint32_t limit[BZ2_MAX_CODE_LEN + 2];
	int32_t off[BZ2_MAX_CODE_LEN + 2];
	uint16_t perm[BZ2_MAX_ALPHA];
	uint32_t maxlen;
};

struct bz2_tables {
	uint16_t fast[BZ2_MAX_GROUPS][1u << HUFF_BITS];
	struct bz2_slow slow[BZ2_MAX_GROUPS];
	uint8_t selectors[BZ2_MAX_SELECTORS];
	uint32_t nselectors; /* at most BZ2_MAX_SELECTORS (more are read and dropped) */
};

/* The state the symbol loop (Huffman + move-to-front + zero runs) works on; copied into
 * registers on entry and back on exit. It runs whole groups of 50 symbols while in <= in_limit
 * at a group's start (a group reads at most 50 x 20 bits = 125 bytes, and a refill 8 more). */
struct bz2_sym_ctx {
	const uint8_t *in;       /* next byte to load into bitbuf */
	const uint8_t *in_limit; /* groups start only while in <= in_limit */
	uint64_t bitbuf;         /* the top `bitcount` bits are pending input; the bits below are
	                            zero or the input that follows */
	uint32_t bitcount;
	const struct bz2_tables *t;
	uint32_t group; /* the next group's number (its selector) */
	uint32_t eob;   /* the end-of-block symbol: the number of byte values used + 1 */
	uint8_t *mtf;   /* the move-to-front list, 256 bytes aligned to 16 */
	uint8_t *out;   /* the next byte of L */
	uint8_t *out_end;
	uint32_t *count; /* count[b]: bytes b written to L */
	uint32_t run,
	        run_weight; /* a zero run being read: its length so far, next digit's weight */
	zn_result err;      /* set when BZ2_SYM_ERROR is returned */
};
enum { BZ2_SYM_LIMIT = 0, BZ2_SYM_EOB = 1, BZ2_SYM_ERROR = 2 };
typedef int (*zn_bz2_sym_fn)(struct bz2_sym_ctx *c);

/* The portable symbol loop, and the best one for the CPU (lib/x86, lib/arm). */
int zn_bz2_symbols_generic(struct bz2_sym_ctx *c);
zn_bz2_sym_fn zn_bz2_select_symbols(uint32_t features, const char **name);

/* bzip2's CRC-32: polynomial 0x04C11DB7, most significant bit first, starting at ~0 and
 * inverted at the end (zn_bz2_crc(~0u, ...) then ~). The portable slicing-by-8 loop and the best
 * one for the CPU. */
typedef uint32_t (*zn_bz2_crc_fn)(uint32_t crc, const uint8_t *p, size_t n);
uint32_t zn_bz2_crc_generic(uint32_t crc, const uint8_t *p, size_t n);
zn_bz2_crc_fn zn_bz2_select_crc(uint32_t features);
/* The byte table (crc << 8 ^ table[crc >> 24 ^ b]), for the kernels' tails. */
const uint32_t *zn_bz2_crc_table(void);

/* Block magic candidates: the bit positions p (counted from bit 0 of in[0], most significant bit
 * first) where the 48-bit block magic starts, for bytes p / 8 in [0, len), reading no byte at or
 * past in + avail (avail >= len). At most cap go to pos[], in order; returns how many, with
 * *resume the byte to go on from (len once every byte was looked at). */
typedef size_t (*zn_bz2_scan_fn)(const uint8_t *in, size_t len, size_t avail, uint64_t *pos,
                                 size_t cap, size_t *resume);
size_t zn_bz2_scan_generic(const uint8_t *in, size_t len, size_t avail, uint64_t *pos, size_t cap,
                           size_t *resume);
zn_bz2_scan_fn zn_bz2_select_scan(uint32_t features, const char **name);
/* The magic at byte i for any of the shifts in the mask `shifts` (bit k: shift k): 1 and its bit
 * position in *pos, or 0. For the vector scanners' candidates. */
size_t zn_bz2_scan_check(const uint8_t *in, size_t i, size_t avail, unsigned shifts, uint64_t *pos);

/* The kernels a decoder object uses, chosen once when it is made. */
struct bz2_kernels {
	zn_bz2_sym_fn symbols;
	zn_bz2_crc_fn crc;
	zn_bz2_scan_fn scan;
	const char *symbols_name, *scan_name;
};
void zn_bz2_kernels(struct bz2_kernels *k, uint32_t features);

/* The walk of the inverse transform (bzip2_unsort.c): WALK_SEGS segments, WALK_LANES lanes
 * walking at once, each into a buffer of WALK_LANE_BUF bytes emptied into a log of pieces. */
#ifndef WALK_SEGS
#define WALK_SEGS 64
#endif
#ifndef WALK_LANES
#define WALK_LANES 16
#endif
#ifndef WALK_LANE_BUF
#define WALK_LANE_BUF 16384
#endif
#define WALK_MAX_PIECES ((BZ2_MAX_BLOCK / WALK_LANE_BUF + 2) * WALK_LANES + WALK_SEGS + 1)
struct bz2_walk {
	uint32_t start[WALK_SEGS + 1];                      /* each segment's first row, in order */
	uint32_t follow[WALK_SEGS + 1];                     /* the segment that comes after it */
	uint32_t first[WALK_SEGS + 1], last[WALK_SEGS + 1]; /* its pieces */
	unsigned origin;                                    /* origPtr's segment */
	uint32_t npieces, logged;
	uint32_t piece_next[WALK_MAX_PIECES], piece_off[WALK_MAX_PIECES];
	uint32_t piece_len[WALK_MAX_PIECES];
	uint8_t *lanes;   /* WALK_LANES buffers of WALK_LANE_BUF bytes */
	uint8_t *scratch; /* the log (also the pieces of a large output's CRC) */
};
/* Pieces in which large outputs are expanded. */
#define BZ2_PIECE ((size_t)1 << 20)

/*
 * One block being decoded: its header, tables, and the arrays of the inverse transform, sized
 * for the largest block (900,000) and kept from block to block. About 6 MB:
 *   ll    the last column L (900 KB), then, after the transform, the block before RLE1
 *   link  link[j] = (T(j) << 9) | F[j] (bit 8: a walk segment starts at j) (3.6 MB)
 *   walk  the segments of the walk: its lanes' buffers (256 KiB) and log (1 MiB)
 */
struct bz2_block {
	struct bz2_tables t;
	uint8_t mtf[256] __attribute__((aligned(16)));
	uint32_t count[256];
	uint8_t *ll;
	uint32_t *link;
	struct bz2_walk walk;
	uint8_t tail[512]; /* the input's last bytes, zero-padded, for the symbol loop's end */
	/* The block header and result. */
	uint32_t crc;      /* stored */
	uint32_t rand;     /* randomised (bzip2 0.9.0) */
	uint32_t orig_ptr; /* origPtr */
	uint32_t n;        /* bytes of L (the block before RLE1) */
	uint64_t end_bit;  /* the bit after the block's end-of-block symbol */
	uint64_t out_len;  /* bytes of output once RLE1 is undone */
	struct bz2_kernels k;
};

/* Allocate and free a block's arrays. */
zn_result zn_bz2_block_init(struct bz2_block *b, uint32_t features);
void zn_bz2_block_free(struct bz2_block *b);

/* Decode the block whose magic starts at bit `bit` of in[0..len): header, tables and symbols
 * into L (b->ll, b->n), with b->end_bit the bit after its end. `max_n` (level x 100,000) bounds
 * the block. ZN_ERR_TRUNCATED when the input ends first, ZN_ERR_CORRUPT for any fault. */
zn_result zn_bz2_read_block(struct bz2_block *b, const uint8_t *in, size_t len, uint64_t bit,
                            uint32_t max_n);

/* The inverse transform of L: b->ll becomes the block before RLE1 (undoing the randomisation of
 * randomised blocks); then b->out_len is its output length. ZN_ERR_CORRUPT when the block ends
 * in 4 equal bytes with no count. */
zn_result zn_bz2_unsort(struct bz2_block *b);
/* Its stages, for the benchmark's profile: the links from L, the walk into b->ll. */
void zn_bz2_make_links(struct bz2_block *b);
void zn_bz2_walk(struct bz2_block *b);

/* Undoing RLE1, resumably: the block before RLE1 in s[0..n) expands to output pieces. */
struct bz2_rle1 {
	const uint8_t *s;
	size_t n, i;   /* the input and the next byte of it to read */
	size_t run_at; /* where the next 4 equal bytes start (n: none), SIZE_MAX: not yet sought */
	uint32_t left; /* copies of `byte` still to write from a run */
	uint8_t byte;
};
void zn_bz2_rle1_start(struct bz2_rle1 *r, const uint8_t *s, size_t n);
/* Up to cap bytes of output into out (which has BZ2_SLACK bytes of room past cap); returns how
 * many (0 only at the end). */
size_t zn_bz2_rle1_expand(struct bz2_rle1 *r, uint8_t *out, size_t cap);
/* The output length of s[0..n), and in *bad whether its last 4 bytes are equal (a run with no
 * count: the block is corrupt, as for libbz2). */
uint64_t zn_bz2_rle1_size(const uint8_t *s, size_t n, int *bad);

/* The 512 numbers that drive the randomisation of bzip2 0.9.0's randomised blocks: after
 * rand[0] - 1, rand[0] + rand[1] - 1, ... bytes of the block (cycling through the table), the
 * next byte had its lowest bit flipped. A constant of the format, as every decoder has it. */
extern const uint16_t zn_bz2_rand_table[512];

/* Big-endian 64-bit load. */
static inline uint64_t zn_get_be64(const void *p)
{
	return __builtin_bswap64(zn_get_le64(p));
}
static inline uint32_t zn_get_be32(const void *p)
{
	return __builtin_bswap32(zn_get_le32(p));
}

#endif
