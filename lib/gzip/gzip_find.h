/* SPDX-License-Identifier: MIT */
/* gzip_find.h - gzip member headers and the block finder: where a piece of a gzip stream can start.
 */
#ifndef ZN_GZIP_FIND_H
#define ZN_GZIP_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

/*
 * A parallel decoder cuts a gzip stream into ranges and has each decoded from the first place in
 * it where decoding can start: a *candidate*. The finder and the decoders agree on one predicate,
 * zn_gz_candidate(), evaluated at *canonical* bit positions:
 *   ZN_CAND_MEMBER   a gzip member header at byte B (position 8B): magic, method 8, no reserved
 *                    flag, its optional fields within ZN_GZ_HEADER_MAX bytes, FHCRC right if
 *                    present, then a plausible first block (below; any type but 3);
 *   ZN_CAND_DYNAMIC  a non-final dynamic-Huffman block header at any bit whose code lengths are
 *                    all valid (the precode complete; the literal/length code complete or a lone
 *                    code, with an end-of-block code; the distance code complete, a lone code or
 *                    none): the checks the decoder itself makes, without building tables;
 *   ZN_CAND_STORED   a non-final stored block whose LEN at byte B is ~NLEN and whose three bits
 *                    before B are zero (position 8B - 3). A stored block's header may start up to
 *                    seven bits earlier, in zero padding; the position is then the latest one,
 *                    where decoding gives the same block.
 * Fixed-Huffman and final blocks are never candidates: they are passed over (their ends can still
 * be where a range of the decoder ends, see gzip_chunk.c).
 *
 * A range's decoder starts at the first candidate in its range from which decoding works, and
 * runs until the first *real* block boundary or member start at or after the end of its range
 * where the predicate holds. Real boundaries pass every check the predicate makes, so the next
 * range's first candidate is at or before that point, and is that point unless it is a false
 * positive: the stitcher compares the two and only uses a piece that starts exactly where the
 * stream stands.
 */

enum zn_gz_cand {
	ZN_CAND_NONE = 0,
	ZN_CAND_MEMBER = 1,
	ZN_CAND_DYNAMIC = 2,
	ZN_CAND_STORED = 3,
	ZN_CAND_MORE = -1, /* the input ends before the predicate can tell (not final) */
};

/* The longest gzip header the candidate test takes: the extra field at its longest and a name and
 * a comment of up to 4 KiB each. Longer headers are decoded, never candidates. */
#define ZN_GZ_HEADER_MAX (12u + 65535u + 2u * 4096u + 2u)
/* Input after a position the predicate may look at: the longest header, and a dynamic-Huffman
 * block header after it (at most 17 + 57 + 316 * 14 bits: under 600 bytes). */
#define ZN_GZ_LOOKAHEAD (ZN_GZ_HEADER_MAX + 1024u)

/* Parse a gzip member header at in[0..len): ZN_OK with its length in *hlen (and BGZF's block
 * size, BSIZE + 1, in *bgzf, 0 if it has none; bgzf may be NULL); ZN_ERR_TRUNCATED when in[0..len)
 * ends before it does; ZN_ERR_BAD_HEADER when it is not one (or its FHCRC is wrong:
 * ZN_ERR_HEADER_CHECKSUM). `max` bounds the length (a longer header is ZN_ERR_BAD_HEADER). */
zn_result zn_gz_parse_header(const uint8_t *in, size_t len, size_t max, size_t *hlen,
                             uint32_t *bgzf);

/* The predicate at canonical bit position `bit` of in[0..len) (`final`: nothing follows; else
 * ZN_CAND_MORE when the input ends too soon to tell). Returns enum zn_gz_cand. */
int zn_gz_candidate(const uint8_t *in, size_t len, int final, uint64_t bit);

/* The canonical position of the real block that starts at bit `bit` (the decoder's position after
 * the previous block): `bit` for Huffman blocks, the latest equivalent position for a non-final
 * stored block in zero padding (see above), or `bit` itself otherwise. */
uint64_t zn_gz_canonical(const uint8_t *in, size_t len, uint64_t bit);

/* The first candidate at a canonical position in [from, to) of in[0..len): its kind (0: none),
 * its position in *found. Stops early, with ZN_CAND_MORE and *found where it stopped, when the
 * input (not final) ends too soon to tell. */
int zn_gz_find(const uint8_t *in, size_t len, int final, uint64_t from, uint64_t to,
               uint64_t *found);

#endif
