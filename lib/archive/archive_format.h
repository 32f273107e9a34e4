/* SPDX-License-Identifier: MIT */
/* archive_format.h - on-disk constants of the znippy archive format (see docs/FORMAT.md). */
#ifndef ZN_ARCHIVE_FORMAT_H
#define ZN_ARCHIVE_FORMAT_H

#include <stdint.h>

/* File header: magic (8) + version (4) + flags (4). Blocks follow at ZN_HEADER_SIZE. */
#define ZN_MAGIC          "\x89ZNPY\r\n\x1a"
#define ZN_MAGIC_LEN      8
#define ZN_HEADER_SIZE    16
#define ZN_FORMAT_VERSION 1
/* Version 2 is version 1 with a digest_min_size (index header offset 48): files smaller than it
 * have no stored SHA-256 (an all-zero row); and with column filters (directory byte 6). The
 * writer writes it unless the threshold is 0, so that an archive asked to store every digest
 * stays version 1, byte for byte, readable by older readers. */
#define ZN_FORMAT_VERSION_DMS 2

/* Footer: the last ZN_FOOTER_SIZE bytes of the archive.
 *   0 u64 index_offset     8 u64 index_size      16 u64 page sums' xxh3   24 u64 entry_count
 *  32 u64 block_count     40 u32 format_version  44 u32 flags        48 u64 footer_xxh3 (of 0..47)
 *  56 8 bytes ZN_FOOTER_MAGIC */
#define ZN_FOOTER_SIZE 64
/* The writer starts the index at a multiple of this, after zero bytes (readers accept any). */
#define ZN_INDEX_ALIGN 64
/* And each block, after fewer zero bytes than this (readers accept blocks back to back too). */
#define ZN_BLOCK_ALIGN  64
#define ZN_FOOTER_MAGIC "ZNPYEND\n"

/* Index header (ZN_INDEX_HEADER_SIZE bytes at index_offset):
 *   0 "ZNIX"  4 u32 column_count  8 u64 entry_count  16 u64 block_count  24 u64 chunk_size
 *  32 i32 level  36 u32 digest kind  40 u64 content_bytes
 *  48 u64 digest_min_size (version 2; version 1: reserved, 0)  56 u64 reserved (0)
 * then column_count directory records of ZN_COLDIR_SIZE bytes:
 *   0 u32 column id  4 u8 codec  5 u8 page_log (paged codec; else 0)
 *   6 u8 filter (version 2; version 1: reserved, 0)  7 u8 reserved
 *   8 u64 offset (from index start)
 *  16 u64 stored size  24 u64 raw size
 * then the column data, each column starting at a multiple of 8 from the index start. */
#define ZN_INDEX_MAGIC "ZNIX"
/* The index is checked in pages: after it come the XXH3-64 values of its 4 KiB pages (the last
 * one short), and the footer holds the XXH3-64 of that array. A reader checks a page the first
 * time it touches it, so a lookup in a large index hashes a few pages instead of all of it. */
#define ZN_IX_PAGE           4096
#define ZN_INDEX_HEADER_SIZE 64
/* What a reader holds of an archive is bounded by the archive's size (see docs/FORMAT.md, "What a
 * reader checks"):
 * - It refuses an archive claiming more than ZN_ENTRIES_FREE + ZN_ENTRIES_PER_INDEX_BYTE entries
 *   per byte of stored index. A real index costs several bytes per entry even fully compressed
 *   (200,000 empty files of one time and owner, named in sequence: 4.1 bytes per entry; a path,
 *   its offset and its place do not compress to less), while a crafted one of near-free entries
 *   (every column zeros) costs 0.07 bytes per entry: 264 KB declared 4 million, and made extract
 *   use 803 MiB. Readers keep a record per entry.
 * - It refuses an index whose columns decode to more than ZN_INDEX_RAW_FREE +
 *   ZN_INDEX_RAW_PER_BYTE bytes per byte of stored index: a zstd frame can expand 32768 times,
 *   and a reader holds the columns it reads decoded. Real indexes decode to 3 to 24 times their
 *   size (the small corpus: 3.1; the empty files above: 23.5).
 * Together they keep a reader of any archive under 1 MiB within 256 MiB. */
#define ZN_ENTRIES_FREE           65536u
#define ZN_ENTRIES_PER_INDEX_BYTE 2u
#define ZN_INDEX_RAW_FREE         (64u << 20)
#define ZN_INDEX_RAW_PER_BYTE     96u
#define ZN_COLDIR_SIZE            32

/* Column codecs. A paged column is cut into pages of 2^page_log raw bytes (the page_log in the
 * directory record's byte 5), each a zstd frame or, when that would not be smaller, the raw bytes,
 * behind a table of page_count + 1 u64 offsets: a lookup decodes a few pages, not the column. */
enum zn_col_codec { ZN_COL_RAW = 0, ZN_COL_ZSTD = 1, ZN_COL_PAGED = 2 };
/* Column filters (version 2): undone after decompression, per page of a paged column. */
enum zn_col_filter { ZN_FILTER_NONE = 0, ZN_FILTER_DELTA = 1 };
#define ZN_COL_PAGE_LOG     12 /* the writer's pages: 4 KiB */
#define ZN_COL_PAGE_LOG_MIN 12
#define ZN_COL_PAGE_LOG_MAX 20

/* Column ids. Entry columns have entry_count rows, block columns block_count rows. Strings are an
 * offsets column (u64, rows + 1 values, first 0, non-decreasing) plus a bytes column, as in Arrow's
 * LargeBinary layout. */
#define ZN_COLUMN_LIST(X)                                                                          \
	X(PATH_OFFSETS, 1, 8)                                                                      \
	X(PATH_BYTES, 2, 1)                                                                        \
	X(TYPE, 3, 1)                                                                              \
	X(MODE, 4, 4)                                                                              \
	X(UID, 5, 4)                                                                               \
	X(GID, 6, 4)                                                                               \
	X(UNAME_OFFSETS, 7, 8)                                                                     \
	X(UNAME_BYTES, 8, 1)                                                                       \
	X(GNAME_OFFSETS, 9, 8)                                                                     \
	X(GNAME_BYTES, 10, 1)                                                                      \
	X(MTIME_NS, 11, 8)                                                                         \
	X(SIZE, 12, 8)                                                                             \
	X(LINK_OFFSETS, 13, 8)                                                                     \
	X(LINK_BYTES, 14, 1)                                                                       \
	X(SHA256, 15, 32)                                                                          \
	X(FIRST_BLOCK, 16, 4)                                                                      \
	X(BLOCK_OFFSET, 17, 4)                                                                     \
	X(FENCE_OFFSETS, 18, 8)                                                                    \
	X(FENCE_BYTES, 19, 1)                                                                      \
	X(PKG_TYPE, 20, 1)                                                                         \
	X(PKG_GROUP_OFFSETS, 21, 8)                                                                \
	X(PKG_GROUP_BYTES, 22, 1)                                                                  \
	X(PKG_NAME_OFFSETS, 23, 8)                                                                 \
	X(PKG_NAME_BYTES, 24, 1)                                                                   \
	X(PKG_VERSION_OFFSETS, 25, 8)                                                              \
	X(PKG_VERSION_BYTES, 26, 1)                                                                \
	X(REPO, 27, 1)                                                                             \
	X(BLK_OFFSET, 32, 8)                                                                       \
	X(BLK_CSIZE, 33, 8)                                                                        \
	X(BLK_USIZE, 34, 8)                                                                        \
	X(BLK_CODEC, 35, 1)                                                                        \
	X(BLK_XXH3, 36, 8)                                                                         \
	X(BLK_CXXH3, 37, 8)

enum zn_col_id {
#define ZN_COL_ENUM_(name, id, width) ZN_COL_##name = id,
	ZN_COLUMN_LIST(ZN_COL_ENUM_)
#undef ZN_COL_ENUM_
	        ZN_COL_MAX_ID = 64
};

/* Block codecs. */
enum zn_block_codec { ZN_BLOCK_STORED = 0, ZN_BLOCK_ZSTD = 1 };

/* A reader refuses chunk sizes outside ZN_CHUNK_SIZE_MIN..ZN_CHUNK_SIZE_MAX (znippy.h). */
/* The path fence (columns 18, 19, optional): the paths of rows 0, ZN_FENCE_STEP, 2 x ZN_FENCE_STEP,
 * ..., so that a lookup narrows to ZN_FENCE_STEP rows before it touches the path column. */
#define ZN_FENCE_STEP  256
#define ZN_MAX_COLUMNS 64

#endif
