/* SPDX-License-Identifier: MIT */
/* archive_index.c - the columnar index: building it, and validated access to its columns.
 *
 * Each column is one contiguous little-endian array (strings: a u64 offsets array of rows + 1
 * values plus a bytes array, Arrow's LargeBinary layout), so a decoded column can be handed to an
 * Arrow consumer without conversion. A column is compressed when that saves at least 10%: the
 * columns a lookup needs (path, type, size, sha256, first_block, block_offset) in 4 KiB pages
 * that decode on their own, the others whole. Reading one file from an archive of 100,000 files
 * then decodes about 25 small pages (a binary search over the paths, then a page of each column
 * for the row found): 1.3 M instructions, against 3.4 M with 16 KiB pages and 19.9 M for the
 * data block up to an average file (callgrind, `cat`). Against one frame per column, 4 KiB pages
 * cost 2% more index (5.47 against 5.35 MB with 16 KiB pages on the small corpus, where the raw
 * lookup columns made 11.35 MB). Decoding is in place:
 * a paged column has one buffer of its raw size, its pages filled in as they are first needed,
 * so a row or a string spanning two pages is contiguous like any other.
 */
#include <stdlib.h>

#include "common/xxh3.h"
#include <zstd.h>

#include "archive_internal.h"

struct colbuf {
	int id;
	uint8_t filter; /* ZN_FILTER_*: the writer kept the filtered form */
	uint8_t *data;
	size_t len, cap;
};

int zn_path_is_safe(const char *p, size_t len)
{
	if (!p || len == 0 || p[0] == '/' || memchr(p, 0, len))
		return 0;
	for (size_t i = 0; i < len;) {
		size_t k = i;
		while (k < len && p[k] != '/')
			k++;
		size_t c = k - i;
		if (c == 0 || (c == 1 && p[i] == '.') || (c == 2 && p[i] == '.' && p[i + 1] == '.'))
			return 0;
		if (k + 1 == len) /* trailing '/' */
			return 0;
		i = k + 1;
	}
	return 1;
}

static int put(struct colbuf *c, const void *p, size_t n)
{
	if (c->len + n > c->cap) {
		size_t ncap = c->cap ? c->cap : 256;
		while (ncap < c->len + n)
			ncap *= 2;
		uint8_t *d = realloc(c->data, ncap);
		if (!d)
			return -1;
		c->data = d;
		c->cap = ncap;
	}
	if (n)
		memcpy(c->data + c->len, p, n);
	c->len += n;
	return 0;
}

static int put_u64(struct colbuf *c, uint64_t v)
{
	uint8_t b[8];
	zn_put_le64(b, v);
	return put(c, b, 8);
}

static int put_u32(struct colbuf *c, uint32_t v)
{
	uint8_t b[4];
	zn_put_le32(b, v);
	return put(c, b, 4);
}

/* Append a string to an offsets+bytes pair. */
static int put_str(struct colbuf *off, struct colbuf *bytes, const char *s, size_t len)
{
	if (len && put(bytes, s, len))
		return -1;
	return put_u64(off, bytes->len);
}

/* The columns random access needs: paged, so that a lookup decodes a few pages of them. */
static int is_lookup(int id)
{
	return id == ZN_COL_PATH_OFFSETS || id == ZN_COL_PATH_BYTES || id == ZN_COL_TYPE ||
	       id == ZN_COL_SIZE || id == ZN_COL_FIRST_BLOCK || id == ZN_COL_BLOCK_OFFSET ||
	       id == ZN_COL_SHA256;
}

/* src as a paged column (docs/FORMAT.md): the page table, then each page compressed on its own,
 * or raw when its frame would not be smaller (the frame may then not even fit: its room is one
 * byte less than the page). The result is never longer than the table plus len. */
static uint8_t *compress_pages(ZSTD_CCtx *cc, const uint8_t *src, size_t len, size_t *out_len)
{
	const size_t page = (size_t)1 << ZN_COL_PAGE_LOG, n = (len + page - 1) / page;
	size_t pos = (n + 1) * 8;
	uint8_t *out = malloc(pos + len);
	if (!out)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		size_t plen = ZN_MIN(page, len - k * page);
		zn_put_le64(out + k * 8, pos);
		size_t z = ZSTD_compressCCtx(cc, out + pos, plen - 1, src + k * page, plen, 3);
		if (ZSTD_isError(z)) {
			memcpy(out + pos, src + k * page, plen);
			z = plen;
		}
		pos += z;
	}
	zn_put_le64(out + n * 8, pos);
	*out_len = pos;
	return out;
}

/* The delta filter (docs/FORMAT.md, version 2): each little-endian value of `width` bytes (4 or 8)
 * replaced by the zigzag form of its difference from the one before, which is 0 at the start
 * and at every `restart` bytes (a page, so that a page decodes alone). Offsets and block offsets
 * then become string and file lengths, times the gaps between them: on 200,000 files of 40 bytes
 * the integer columns shrank from 1.95 MB compressed to 0.60 MB (mtime_ns 794 to 552 KB). */
static uint64_t zigzag(uint64_t d, unsigned width)
{
	const unsigned top = width * 8 - 1;
	const uint64_t mask = width == 8 ? UINT64_MAX : (1ull << (width * 8)) - 1;
	return ((d << 1) ^ (0 - (d >> top & 1))) & mask;
}

static void delta_encode(uint8_t *dst, const uint8_t *src, size_t len, unsigned width,
                         size_t restart)
{
	uint64_t prev = 0;
	for (size_t at = 0; at + width <= len; at += width) {
		if (at % restart == 0)
			prev = 0;
		uint64_t v = width == 8 ? zn_get_le64(src + at) : zn_get_le32(src + at);
		uint64_t z = zigzag(v - prev, width);
		prev = v;
		if (width == 8)
			zn_put_le64(dst + at, z);
		else
			zn_put_le32(dst + at, (uint32_t)z);
	}
}

/* Undoes delta_encode on len bytes (one page, or a whole column), in place. Any bytes decode:
 * damaged ones give wrong values, which the checks on the values catch as for any column. */
static void delta_decode(uint8_t *p, size_t len, unsigned width)
{
	uint64_t prev = 0;
	for (size_t at = 0; at + width <= len; at += width) {
		uint64_t z = width == 8 ? zn_get_le64(p + at) : zn_get_le32(p + at);
		prev += (z >> 1) ^ (0 - (z & 1));
		if (width == 8)
			zn_put_le64(p + at, prev);
		else
			zn_put_le32(p + at, (uint32_t)prev);
	}
}

/* The shape of each column, for the writer's sizes and the reader's checks. */
struct colspec {
	uint8_t width;      /* bytes per row; 0 for string bytes */
	uint8_t blocks;     /* rows are blocks, not entries */
	uint8_t offsets_of; /* for an offsets column: the id of its bytes column */
	uint8_t known;      /* 1: a column of ZN_COLUMN_LIST */
};

/* Resolved at compile time: zn_row() looks a column's shape up for every row it returns, and a
 * switch there took a quarter of the time of opening a 100,000-entry archive for extraction. */
#define IS_BYTES_COL(id)                                                                           \
	((id) == ZN_COL_PATH_BYTES || (id) == ZN_COL_UNAME_BYTES || (id) == ZN_COL_GNAME_BYTES ||  \
	 (id) == ZN_COL_LINK_BYTES || (id) == ZN_COL_FENCE_BYTES ||                                \
	 (id) == ZN_COL_PKG_GROUP_BYTES || (id) == ZN_COL_PKG_NAME_BYTES ||                        \
	 (id) == ZN_COL_PKG_VERSION_BYTES || (id) == ZN_COL_REPO)
#define IS_OFFSETS_COL(id)                                                                         \
	((id) == ZN_COL_PATH_OFFSETS || (id) == ZN_COL_UNAME_OFFSETS ||                            \
	 (id) == ZN_COL_GNAME_OFFSETS || (id) == ZN_COL_LINK_OFFSETS ||                            \
	 (id) == ZN_COL_FENCE_OFFSETS || (id) == ZN_COL_PKG_GROUP_OFFSETS ||                       \
	 (id) == ZN_COL_PKG_NAME_OFFSETS || (id) == ZN_COL_PKG_VERSION_OFFSETS)
static const struct colspec col_specs[ZN_COL_MAX_ID + 1] = {
#define ZN_COL_SPEC_(name, cid, w)                                                                 \
	[cid] = {IS_BYTES_COL(cid) ? 0 : (w), 0, IS_OFFSETS_COL(cid) ? (cid) + 1 : 0, 1},
        ZN_COLUMN_LIST(ZN_COL_SPEC_)
#undef ZN_COL_SPEC_
};

static struct colspec spec_of(int id)
{
	struct colspec s = col_specs[id];
	s.blocks = id >= ZN_COL_BLK_OFFSET;
	return s;
}

/* A column's bytes compressed as `codec` (ZN_COL_PAGED or ZN_COL_ZSTD), its size in *z (a zstd
 * error code if that failed); NULL if out of memory. */
static uint8_t *compress_col(ZSTD_CCtx *cc, const uint8_t *src, size_t len, int codec, size_t *z)
{
	if (codec == ZN_COL_PAGED)
		return compress_pages(cc, src, len, z);
	size_t cap = ZSTD_compressBound(len);
	uint8_t *out = malloc(cap);
	if (out)
		*z = ZSTD_compressCCtx(cc, out, cap, src, len, 3);
	return out;
}

/* Columns of integers the delta filter may apply to: every fixed-width one of 4 or 8 bytes a row
 * but the blocks' checksums, which it cannot make smaller. */
static int filterable(int id)
{
	const unsigned w = col_specs[id].width;
	return (w == 4 || w == 8) && id != ZN_COL_BLK_XXH3 && id != ZN_COL_BLK_CXXH3;
}

/* The column compressed through the delta filter too: where that is smaller, *zdata and *z
 * become it and c->filter is set. Non-zero if out of memory. */
static int try_filter(ZSTD_CCtx *cc, struct colbuf *c, int codec, uint8_t **zdata, size_t *z)
{
	uint8_t *f = malloc(c->len);
	if (!f)
		return -1;
	const size_t page = (size_t)1 << ZN_COL_PAGE_LOG;
	delta_encode(f, c->data, c->len, col_specs[c->id].width,
	             codec == ZN_COL_PAGED ? page : SIZE_MAX);
	size_t fz = 0;
	uint8_t *fdata = compress_col(cc, f, c->len, codec, &fz);
	free(f);
	if (!fdata)
		return -1;
	if (!ZSTD_isError(fz) && (ZSTD_isError(*z) || fz < *z)) {
		free(*zdata);
		*zdata = fdata;
		*z = fz;
		c->filter = ZN_FILTER_DELTA;
	} else {
		free(fdata);
	}
	return 0;
}

/* Rows of column id (without an offsets column's extra one): blocks, entries, or fence rows. */
static uint64_t rows_of(const struct zn_reader *r, int id, struct colspec s)
{
	if (s.blocks)
		return r->nblocks;
	if (id == ZN_COL_FENCE_OFFSETS || id == ZN_COL_FENCE_BYTES)
		return (r->nentries + ZN_FENCE_STEP - 1) / ZN_FENCE_STEP;
	return r->nentries;
}

static const struct zn_index_row *index_row(const struct zn_index_input *in, uint64_t i,
                                            struct zn_index_row *row)
{
	if (in->rows)
		return &in->rows[i];
	in->get_row(in->row_ctx, i, row);
	return row;
}

enum { NCOLS = 33 };

/* An index being built: its columns, raw, then compressed where that is worth it. */
struct index_build {
	const struct zn_index_input *in;
	int ids[NCOLS], ncols;
	struct colbuf c[NCOLS];                /* column ids[i] raw, until compressed and written */
	struct colbuf *col[ZN_COL_MAX_ID + 1]; /* by id */
	uint8_t *zdata[NCOLS];                 /* its compressed form, or NULL: kept raw */
	size_t zlen[NCOLS];
	uint8_t codec[NCOLS];
	size_t bytes_of[ZN_COL_MAX_ID + 1]; /* bytes columns' sizes */
	uint64_t fence_rows;
	ZSTD_CCtx *cc;
};

/* Columns are filled in four passes over the rows, each group compressed before the next is
 * made, so that the raw index is never held whole beside the writer's entries. */
static const uint8_t group_of[ZN_COL_MAX_ID + 1] = {
        [ZN_COL_PATH_OFFSETS] = 1,
        [ZN_COL_PATH_BYTES] = 1,
        [ZN_COL_FENCE_OFFSETS] = 1,
        [ZN_COL_FENCE_BYTES] = 1,
        [ZN_COL_SHA256] = 2,
        [ZN_COL_PKG_TYPE] = 3,
        [ZN_COL_PKG_GROUP_OFFSETS] = 3,
        [ZN_COL_PKG_GROUP_BYTES] = 3,
        [ZN_COL_PKG_NAME_OFFSETS] = 3,
        [ZN_COL_PKG_NAME_BYTES] = 3,
        [ZN_COL_PKG_VERSION_OFFSETS] = 3,
        [ZN_COL_PKG_VERSION_BYTES] = 3,
}; /* the others, the repository's name and the block columns, 0 */

/* The columns this index has: the digests with SHA-256, the path fence only where a lookup's
 * search is long enough to gain from it. */
static void choose_columns(struct index_build *b)
{
	static const int all_ids[NCOLS] = {
	        ZN_COL_PATH_OFFSETS,
	        ZN_COL_PATH_BYTES,
	        ZN_COL_TYPE,
	        ZN_COL_MODE,
	        ZN_COL_UID,
	        ZN_COL_GID,
	        ZN_COL_UNAME_OFFSETS,
	        ZN_COL_UNAME_BYTES,
	        ZN_COL_GNAME_OFFSETS,
	        ZN_COL_GNAME_BYTES,
	        ZN_COL_MTIME_NS,
	        ZN_COL_SIZE,
	        ZN_COL_LINK_OFFSETS,
	        ZN_COL_LINK_BYTES,
	        ZN_COL_FIRST_BLOCK,
	        ZN_COL_BLOCK_OFFSET,
	        ZN_COL_BLK_OFFSET,
	        ZN_COL_BLK_CSIZE,
	        ZN_COL_BLK_USIZE,
	        ZN_COL_BLK_CODEC,
	        ZN_COL_BLK_XXH3,
	        ZN_COL_BLK_CXXH3,
	        ZN_COL_FENCE_OFFSETS,
	        ZN_COL_FENCE_BYTES,
	        ZN_COL_SHA256,
	        ZN_COL_PKG_TYPE,
	        ZN_COL_PKG_GROUP_OFFSETS,
	        ZN_COL_PKG_GROUP_BYTES,
	        ZN_COL_PKG_NAME_OFFSETS,
	        ZN_COL_PKG_NAME_BYTES,
	        ZN_COL_PKG_VERSION_OFFSETS,
	        ZN_COL_PKG_VERSION_BYTES,
	        ZN_COL_REPO,
	};
	const struct zn_index_input *in = b->in;
	const int fence = in->nrows > ZN_FENCE_STEP && in->layout == ZN_IX_CHOSEN;
	b->fence_rows = (in->nrows + ZN_FENCE_STEP - 1) / ZN_FENCE_STEP;
	for (int i = 0; i < NCOLS; i++)
		if ((all_ids[i] != ZN_COL_SHA256 || in->digest == ZN_DIGEST_SHA256) &&
		    (fence ||
		     (all_ids[i] != ZN_COL_FENCE_OFFSETS && all_ids[i] != ZN_COL_FENCE_BYTES)) &&
		    (in->packages || group_of[all_ids[i]] != 3) &&
		    (in->repo || all_ids[i] != ZN_COL_REPO))
			b->ids[b->ncols++] = all_ids[i];
	for (int i = 0; i < b->ncols; i++) {
		b->c[i].id = b->ids[i];
		b->col[b->ids[i]] = &b->c[i];
	}
	/* Each column at its final size from the start: for a million files, growing by doubling
	 * would hold up to twice the index in slack at the writer's peak. */
	for (uint64_t i = 0; i < in->nrows; i++) {
		struct zn_index_row row;
		const struct zn_index_row *e = index_row(in, i, &row);
		b->bytes_of[ZN_COL_PATH_BYTES] += e->path_len;
		b->bytes_of[ZN_COL_UNAME_BYTES] += strlen(e->uname);
		b->bytes_of[ZN_COL_GNAME_BYTES] += strlen(e->gname);
		b->bytes_of[ZN_COL_LINK_BYTES] += e->link ? e->link_len : 0;
		if (i % ZN_FENCE_STEP == 0)
			b->bytes_of[ZN_COL_FENCE_BYTES] += e->path_len;
		if (in->packages) {
			b->bytes_of[ZN_COL_PKG_GROUP_BYTES] += strlen(e->pkg_group);
			b->bytes_of[ZN_COL_PKG_NAME_BYTES] += strlen(e->pkg_name);
			b->bytes_of[ZN_COL_PKG_VERSION_BYTES] += strlen(e->pkg_version);
		}
	}
	if (in->repo)
		b->bytes_of[ZN_COL_REPO] = strlen(in->repo);
}

/* Room for group g's columns, each at its final size; on[id] set for them. -1 without memory. */
static int alloc_group(struct index_build *b, int g, int *on)
{
	const struct zn_index_input *in = b->in;
	int fail = 0;
	for (int i = 0; i < b->ncols; i++) {
		if (group_of[b->ids[i]] != g)
			continue;
		struct colspec sp = spec_of(b->ids[i]);
		uint64_t rows = sp.blocks                           ? in->nblocks
		                : b->ids[i] == ZN_COL_FENCE_OFFSETS ? b->fence_rows
		                                                    : in->nrows;
		size_t want = sp.width ? (size_t)(rows + (sp.offsets_of != 0)) * sp.width
		                       : b->bytes_of[b->ids[i]];
		if (want && !(b->c[i].data = malloc(want)))
			return -1;
		b->c[i].cap = want;
		on[b->ids[i]] = 1;
		if (sp.offsets_of)
			fail |= put_u64(&b->c[i], 0);
	}
	return fail ? -1 : 0;
}

/* Row e into the columns that are on; non-zero without memory. */
static int put_row(struct index_build *b, const int *on, uint64_t i, const struct zn_index_row *e)
{
	struct colbuf **col = b->col;
	uint8_t t = e->type;
	int fail = 0;
	if (on[ZN_COL_PATH_OFFSETS])
		fail |= put_str(col[ZN_COL_PATH_OFFSETS], col[ZN_COL_PATH_BYTES], e->path,
		                e->path_len);
	if (on[ZN_COL_FENCE_OFFSETS] && i % ZN_FENCE_STEP == 0)
		fail |= put_str(col[ZN_COL_FENCE_OFFSETS], col[ZN_COL_FENCE_BYTES], e->path,
		                e->path_len);
	/* The row of a file below digest_min_size: zeros, a few bytes a page once compressed. */
	static const uint8_t zero_sha[32];
	if (on[ZN_COL_SHA256])
		fail |= put(col[ZN_COL_SHA256],
		            t == ZN_TYPE_FILE && e->size < b->in->digest_min_size ? zero_sha
		                                                                  : e->sha,
		            32);
	if (on[ZN_COL_PKG_TYPE]) {
		fail |= put(col[ZN_COL_PKG_TYPE], &e->pkg_type, 1);
		fail |= put_str(col[ZN_COL_PKG_GROUP_OFFSETS], col[ZN_COL_PKG_GROUP_BYTES],
		                e->pkg_group, strlen(e->pkg_group));
		fail |= put_str(col[ZN_COL_PKG_NAME_OFFSETS], col[ZN_COL_PKG_NAME_BYTES],
		                e->pkg_name, strlen(e->pkg_name));
		fail |= put_str(col[ZN_COL_PKG_VERSION_OFFSETS], col[ZN_COL_PKG_VERSION_BYTES],
		                e->pkg_version, strlen(e->pkg_version));
	}
	if (!on[ZN_COL_TYPE])
		return fail;
	fail |= put(col[ZN_COL_TYPE], &t, 1);
	fail |= put_u32(col[ZN_COL_MODE], e->mode);
	fail |= put_u32(col[ZN_COL_UID], e->uid);
	fail |= put_u32(col[ZN_COL_GID], e->gid);
	fail |= put_str(col[ZN_COL_UNAME_OFFSETS], col[ZN_COL_UNAME_BYTES], e->uname,
	                strlen(e->uname));
	fail |= put_str(col[ZN_COL_GNAME_OFFSETS], col[ZN_COL_GNAME_BYTES], e->gname,
	                strlen(e->gname));
	fail |= put_u64(col[ZN_COL_MTIME_NS], (uint64_t)e->mtime_ns);
	fail |= put_u64(col[ZN_COL_SIZE], e->size);
	fail |= put_str(col[ZN_COL_LINK_OFFSETS], col[ZN_COL_LINK_BYTES], e->link,
	                e->link ? e->link_len : 0);
	fail |= put_u32(col[ZN_COL_FIRST_BLOCK], (uint32_t)e->first_block);
	fail |= put_u32(col[ZN_COL_BLOCK_OFFSET], (uint32_t)e->block_offset);
	return fail;
}

/* Group g's columns filled from the rows (and, group 0, the block table); -1 without memory. */
static int fill_group(struct index_build *b, int g, const int *on)
{
	const struct zn_index_input *in = b->in;
	int fail = 0;
	for (uint64_t i = 0; i < in->nrows && !fail; i++) {
		struct zn_index_row row;
		fail |= put_row(b, on, i, index_row(in, i, &row));
	}
	if (g == 0 && on[ZN_COL_REPO])
		fail |= put(b->col[ZN_COL_REPO], in->repo, strlen(in->repo));
	for (uint64_t i = 0; g == 0 && i < in->nblocks && !fail; i++) {
		const struct zn_blockinfo *bl = &in->blocks[i];
		fail |= put_u64(b->col[ZN_COL_BLK_OFFSET], bl->offset);
		fail |= put_u64(b->col[ZN_COL_BLK_CSIZE], bl->csize);
		fail |= put_u64(b->col[ZN_COL_BLK_USIZE], bl->usize);
		fail |= put(b->col[ZN_COL_BLK_CODEC], &bl->codec, 1);
		fail |= put_u64(b->col[ZN_COL_BLK_XXH3], bl->xxh3);
		fail |= put_u64(b->col[ZN_COL_BLK_CXXH3], bl->cxxh3);
	}
	return fail ? -1 : 0;
}

/* The columns that are on compressed where that saves 10%: lookup columns in pages, the others
 * whole; the fence stays raw (a lookup reads a few of its pages as they are). -1 without
 * memory. */
static int compress_group(struct index_build *b, const int *on)
{
	const struct zn_index_input *in = b->in;
	for (int i = 0; i < b->ncols; i++) {
		struct colbuf *c = &b->c[i];
		if (!on[b->ids[i]] || c->len < 64 || in->layout == ZN_IX_RAW ||
		    b->ids[i] == ZN_COL_FENCE_OFFSETS || b->ids[i] == ZN_COL_FENCE_BYTES)
			continue;
		size_t z = 0;
		b->codec[i] =
		        is_lookup(c->id) && in->layout != ZN_IX_WHOLE ? ZN_COL_PAGED : ZN_COL_ZSTD;
		if (!(b->zdata[i] = compress_col(b->cc, c->data, c->len, b->codec[i], &z)))
			return -1;
		if (in->filters && filterable(b->ids[i]) &&
		    try_filter(b->cc, c, b->codec[i], &b->zdata[i], &z) != 0)
			return -1;
		if (!ZSTD_isError(z) && z * 10 <= c->len * 9) {
			b->zlen[i] = z;
			free(c->data); /* only the compressed form is kept, */
			c->data = NULL;
			uint8_t *fit = realloc(b->zdata[i], z ? z : 1); /* without its slack */
			if (fit)
				b->zdata[i] = fit;
		} else {
			free(b->zdata[i]);
			b->zdata[i] = NULL;
			b->codec[i] = ZN_COL_RAW;
			c->filter = 0; /* a raw column is read in place, as it is */
		}
	}
	return 0;
}

/* The header and the column directory, into buf (head_len bytes, zeroed). */
static void write_head(const struct index_build *b, uint8_t *buf, size_t head_len)
{
	const struct zn_index_input *in = b->in;
	memcpy(buf, ZN_INDEX_MAGIC, 4);
	zn_put_le32(buf + 4, (uint32_t)b->ncols);
	zn_put_le64(buf + 8, in->nrows);
	zn_put_le64(buf + 16, in->nblocks);
	zn_put_le64(buf + 24, in->chunk_size);
	zn_put_le32(buf + 32, (uint32_t)in->level);
	zn_put_le32(buf + 36, (uint32_t)in->digest);
	zn_put_le64(buf + 40, in->content_bytes);
	zn_put_le64(buf + 48, in->digest_min_size);
	size_t pos = head_len;
	for (int i = 0; i < b->ncols; i++) {
		pos = (pos + 7) & ~(size_t)7;
		uint8_t *d = buf + ZN_INDEX_HEADER_SIZE + (size_t)i * ZN_COLDIR_SIZE;
		size_t stored = b->zdata[i] ? b->zlen[i] : b->c[i].len;
		zn_put_le32(d, (uint32_t)b->c[i].id);
		d[4] = b->codec[i];
		d[5] = b->codec[i] == ZN_COL_PAGED ? ZN_COL_PAGE_LOG : 0;
		d[6] = b->c[i].filter;
		zn_put_le64(d + 8, pos);
		zn_put_le64(d + 16, stored);
		zn_put_le64(d + 24, b->c[i].len);
		pos += stored;
	}
}

/* The index into sink: its size, the header and directory, then each column at a multiple of 8,
 * freed once given (the peak holds the index once, not twice). */
static zn_result write_out(struct index_build *b, const struct zn_index_sink *sink)
{
	const size_t head_len = ZN_INDEX_HEADER_SIZE + (size_t)b->ncols * ZN_COLDIR_SIZE;
	size_t total = head_len;
	for (int i = 0; i < b->ncols; i++) {
		total = (total + 7) & ~(size_t)7;
		total += b->zdata[i] ? b->zlen[i] : b->c[i].len;
	}
	uint8_t *buf = calloc(1, head_len);
	if (!buf)
		return ZN_ERR_NOMEM;
	zn_result r = ZN_ERR_IO;
	write_head(b, buf, head_len);
	if (sink->begin(sink->ctx, total) || sink->put(sink->ctx, buf, head_len))
		goto out;
	size_t pos = head_len;
	static const uint8_t zeros[8];
	for (int i = 0; i < b->ncols; i++) {
		const struct colbuf *c = &b->c[i];
		size_t gap = ((pos + 7) & ~(size_t)7) - pos,
		       stored = b->zdata[i] ? b->zlen[i] : c->len;
		if ((gap && sink->put(sink->ctx, zeros, gap)) ||
		    (stored && sink->put(sink->ctx, b->zdata[i] ? b->zdata[i] : c->data, stored)))
			goto out;
		pos += gap + stored;
		free(b->c[i].data);
		b->c[i].data = NULL;
		free(b->zdata[i]);
		b->zdata[i] = NULL;
	}
	r = ZN_OK;
out:
	free(buf);
	return r;
}

zn_result zn_index_emit(const struct zn_index_input *in, const struct zn_index_sink *sink)
{
	struct index_build *b = calloc(1, sizeof(*b));
	if (!b)
		return ZN_ERR_NOMEM;
	b->in = in;
	choose_columns(b);
	zn_result r = ZN_ERR_NOMEM;
	if (!(b->cc = ZSTD_createCCtx()))
		goto out;
	for (int g = 0; g < 4; g++) {
		int on[ZN_COL_MAX_ID + 1] = {0};
		if (alloc_group(b, g, on) || fill_group(b, g, on) || compress_group(b, on))
			goto out;
	}
	r = write_out(b, sink);
out:
	ZSTD_freeCCtx(b->cc);
	for (int i = 0; i < NCOLS; i++) {
		free(b->zdata[i]);
		free(b->c[i].data);
	}
	free(b);
	return r;
}

struct mem_sink {
	uint8_t *buf;
	size_t len, cap;
};

static int mem_begin(void *ctx, size_t total)
{
	struct mem_sink *m = ctx;
	m->buf = malloc(total ? total : 1);
	m->cap = total;
	return !m->buf;
}

static int mem_put(void *ctx, const void *p, size_t n)
{
	struct mem_sink *m = ctx;
	if (n > m->cap - m->len)
		return -1;
	memcpy(m->buf + m->len, p, n);
	m->len += n;
	return 0;
}

zn_result zn_index_build(const struct zn_index_input *in, uint8_t **out, size_t *out_len)
{
	struct mem_sink m = {0};
	const struct zn_index_sink sink = {mem_begin, mem_put, &m};
	zn_result r = zn_index_emit(in, &sink);
	if (r == ZN_OK && m.len != m.cap)
		r = ZN_ERR_CODEC; /* cannot happen: the sizes given and announced differ */
	if (r != ZN_OK) {
		free(m.buf);
		return r;
	}
	*out = m.buf;
	*out_len = m.len;
	return ZN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Reader side
 * ---------------------------------------------------------------------------------------------- */

static uint64_t page_count(const struct zn_column *c)
{
	return (c->raw_size >> c->page_log) + !!(c->raw_size & ((1ull << c->page_log) - 1));
}

/* Page k of paged column c decoded into its place in c->heap (under r->mu); 0 if damaged. */
static int decode_page(struct zn_reader *r, struct zn_column *c, uint64_t k)
{
	const uint64_t n = page_count(c), words = (n + 63) / 64, page = 1ull << c->page_log;
	_Atomic uint64_t *bits = atomic_load(&c->pages);
	if (!bits) {
		/* The whole column's room at once, touched only where pages land; page-aligned, so
		 * that a page decoded touches one page of memory, not two (a lookup's page faults
		 * were a third of its cost over raw columns). */
		const uint64_t room = (c->raw_size + 4095) / 4096 * 4096;
		uint8_t *heap = aligned_alloc(4096, room ? room : 4096);
		bits = calloc(2 * words + 1, sizeof(*bits));
		if (!heap || !bits) {
			free(heap);
			free((void *)bits);
			return 0;
		}
		atomic_store(&c->heap, heap);
		atomic_store(&c->pages, bits);
	}
	const uint64_t bit = 1ull << (k % 64);
	if (atomic_load_explicit(&bits[k / 64], memory_order_relaxed) & bit)
		return 1;
	if (atomic_load_explicit(&bits[words + k / 64], memory_order_relaxed) & bit)
		return 0; /* decoded once and found damaged: not again */
	const uint64_t base = (uint64_t)(c->stored - r->ix),
	               raw = ZN_MIN(page, c->raw_size - k * page);
	uint64_t from = 0, to = 0;
	int good = zn_ix_ensure(r, base + k * 8, 16);
	if (good) {
		from = zn_get_le64(c->stored + k * 8);
		to = zn_get_le64(c->stored + k * 8 + 8);
		good = from >= (n + 1) * 8 && from <= to && to <= c->stored_size &&
		       zn_ix_ensure(r, base + from, to - from);
	}
	uint8_t *dst = atomic_load(&c->heap) + k * page;
	if (good && to - from == raw) {
		memcpy(dst, c->stored + from, raw); /* kept raw: it did not compress */
	} else if (good) {
		/* One-shot decoding into the page's place: no window buffer, whatever the frame
		 * claims, and not one byte beyond the page. */
		if (!r->ixdctx)
			r->ixdctx = ZSTD_createDCtx();
		size_t got = r->ixdctx ? ZSTD_decompressDCtx(r->ixdctx, dst, raw, c->stored + from,
		                                             to - from)
		                       : 0;
		good = r->ixdctx && !ZSTD_isError(got) && got == raw;
	}
	if (good && c->filter)
		delta_decode(dst, raw, col_specs[c - r->cols].width);
	atomic_fetch_or_explicit(&bits[(good ? 0 : words) + k / 64], bit, memory_order_release);
	return good;
}

/* Raw bytes [a, b) of paged column c in c->heap, decoding the pages that hold them; 0 if one is
 * damaged. Pages already decoded cost two loads, without the lock. */
static int pages_ready(struct zn_reader *r, struct zn_column *c, uint64_t a, uint64_t b)
{
	if (b <= a)
		return 1; /* callers ask for rows or strings of at least one byte */
	const uint64_t first = a >> c->page_log, last = (b - 1) >> c->page_log;
	_Atomic uint64_t *bits = atomic_load_explicit(&c->pages, memory_order_acquire);
	uint64_t k = first;
	while (bits && k <= last &&
	       (atomic_load_explicit(&bits[k / 64], memory_order_acquire) >> (k % 64) & 1))
		k++;
	if (k > last)
		return 1;
	int good = 1;
	pthread_mutex_lock(&r->mu);
	for (; k <= last && good; k++)
		good = decode_page(r, c, k);
	pthread_mutex_unlock(&r->mu);
	return good;
}

int zn_col_known(uint32_t id)
{
	return id <= ZN_COL_MAX_ID && col_specs[id].known;
}

zn_result zn_col_check_shape(struct zn_reader *r, int id)
{
	struct zn_column *c = &r->cols[id];
	struct colspec s = spec_of(id);
	if (!c->present)
		return ZN_OK;
	uint64_t rows = rows_of(r, id, s);
	if (s.offsets_of)
		rows++;
	if (s.width) {
		/* rows * width must not overflow: rows is bounded by the index size below. */
		SAFETY_CHECK(rows <= UINT64_MAX / s.width, ZN_ERR_CORRUPT);
		SAFETY_CHECK(c->raw_size == rows * s.width, ZN_ERR_CORRUPT);
	}
	SAFETY_CHECK(c->codec == ZN_COL_PAGED || c->page_log == 0, ZN_ERR_CORRUPT);
	/* A filter only where the writer may put one: integer columns, decoded (not read in
	 * place), in version 2 (parse() leaves it 0 in version 1). */
	SAFETY_CHECK(c->filter == ZN_FILTER_NONE || (c->filter == ZN_FILTER_DELTA &&
	                                             c->codec != ZN_COL_RAW && filterable(id)),
	             ZN_ERR_CORRUPT);
	if (c->codec == ZN_COL_RAW) {
		SAFETY_CHECK(c->stored_size == c->raw_size, ZN_ERR_CORRUPT);
		return ZN_OK;
	}
	SAFETY_CHECK(c->codec == ZN_COL_ZSTD || c->codec == ZN_COL_PAGED, ZN_ERR_CORRUPT);
	/* No unbounded allocation from a crafted size: zstd cannot expand beyond this. */
	SAFETY_CHECK(c->raw_size <= c->stored_size * 32768 + 4096, ZN_ERR_CORRUPT);
	if (c->codec == ZN_COL_PAGED) {
		SAFETY_CHECK(c->page_log >= ZN_COL_PAGE_LOG_MIN &&
		                     c->page_log <= ZN_COL_PAGE_LOG_MAX,
		             ZN_ERR_CORRUPT);
		SAFETY_CHECK(page_count(c) < c->stored_size / 8,
		             ZN_ERR_CORRUPT); /* the page table */
	}
	return ZN_OK;
}

static int validate_offsets(const uint8_t *p, uint64_t rows_plus_one, uint64_t bytes_len)
{
	uint64_t prev = 0;
	if (zn_get_le64(p) != 0)
		return 0;
	for (uint64_t i = 1; i < rows_plus_one; i++) {
		uint64_t v = zn_get_le64(p + i * 8);
		if (v < prev)
			return 0;
		prev = v;
	}
	return prev == bytes_len;
}

static int validate_content(struct zn_reader *r, int id, const uint8_t *p)
{
	struct colspec s = spec_of(id);
	if (s.offsets_of) {
		struct zn_column *b = &r->cols[s.offsets_of];
		uint64_t blen = b->present ? b->raw_size : 0;
		return validate_offsets(p, rows_of(r, id, s) + 1, blen);
	}
	if (id == ZN_COL_TYPE) {
		for (uint64_t i = 0; i < r->nentries; i++)
			if (p[i] > ZN_TYPE_HARDLINK)
				return 0;
	}
	return 1;
}

int zn_ix_ensure(struct zn_reader *r, uint64_t off, uint64_t len)
{
	if (off > r->index_size || len > r->index_size - off)
		return 0;
	if (!len)
		return 1;
	for (uint64_t p = off / ZN_IX_PAGE, last = (off + len - 1) / ZN_IX_PAGE; p <= last; p++) {
		uint64_t bit = 1ull << (p % 64);
		/* Pages never change, so a relaxed flag is enough: a race only checks one twice. */
		if (atomic_load_explicit(&r->ix_ok[p / 64], memory_order_relaxed) & bit)
			continue;
		/* A damaged page is hashed once: every later access to it fails at once, so reading
		 * the rest of a big damaged index costs no more than reading a sound one. */
		if (atomic_load_explicit(&r->ix_bad[p / 64], memory_order_relaxed) & bit)
			return 0;
		uint64_t start = p * ZN_IX_PAGE, n = ZN_MIN(ZN_IX_PAGE, r->index_size - start);
		if (!ZN_SUM_OK(zn_xxh3(r->ix + start, n) == zn_get_le64(r->pagesums + p * 8))) {
			atomic_fetch_or_explicit(&r->ix_bad[p / 64], bit, memory_order_relaxed);
			return 0;
		}
		atomic_fetch_or_explicit(&r->ix_ok[p / 64], bit, memory_order_relaxed);
	}
	return 1;
}

uint64_t zn_reader_index_damage(struct zn_reader *r)
{
	uint64_t bad = 0;
	for (uint64_t p = 0; r && p * ZN_IX_PAGE < r->index_size; p++)
		bad += !zn_ix_ensure(r, p * ZN_IX_PAGE,
		                     ZN_MIN((uint64_t)ZN_IX_PAGE, r->index_size - p * ZN_IX_PAGE));
	return bad;
}

const uint8_t *zn_row(struct zn_reader *r, int id, uint64_t i)
{
	struct zn_column *c = &r->cols[id];
	struct colspec s = spec_of(id);
	uint64_t rows = rows_of(r, id, s) + (s.offsets_of ? 1 : 0);
	if (!c->present || !s.width || i >= rows)
		return NULL;
	if (c->codec == ZN_COL_PAGED)
		return pages_ready(r, c, i * s.width, (i + 1) * s.width)
		               ? atomic_load(&c->heap) + i * s.width
		               : NULL;
	if (c->codec != ZN_COL_RAW) {
		const uint8_t *d = zn_col(r, id);
		return d ? d + i * s.width : NULL;
	}
	uint64_t off = (uint64_t)(c->stored - r->ix) + i * s.width;
	return zn_ix_ensure(r, off, s.width) ? c->stored + i * s.width : NULL;
}

const uint8_t *zn_bytes(struct zn_reader *r, int id, uint64_t a, uint64_t b)
{
	struct zn_column *c = &r->cols[id];
	if (!c->present || a > b || b > c->raw_size)
		return NULL;
	if (c->codec == ZN_COL_PAGED) {
		if (a == b)
			return (const uint8_t *)"";
		return pages_ready(r, c, a, b) ? atomic_load(&c->heap) + a : NULL;
	}
	if (c->codec != ZN_COL_RAW) {
		const uint8_t *d = zn_col(r, id);
		return d ? d + a : NULL;
	}
	return zn_ix_ensure(r, (uint64_t)(c->stored - r->ix) + a, b - a) ? c->stored + a : NULL;
}

/* A loaded column's bytes (an empty paged column has no heap). */
static const uint8_t *col_data(struct zn_column *c)
{
	if (c->codec == ZN_COL_RAW)
		return c->stored;
	const uint8_t *h = atomic_load(&c->heap);
	return h ? h : (const uint8_t *)"";
}

const uint8_t *zn_col(struct zn_reader *r, int id)
{
	struct zn_column *c = &r->cols[id];
	int st = atomic_load_explicit(&c->state, memory_order_acquire);
	if (st == 1)
		return col_data(c);
	if (st < 0 || !c->present)
		return NULL;
	pthread_mutex_lock(&r->mu);
	st = atomic_load(&c->state);
	if (st == 0) {
		const uint8_t *data = c->stored;
		uint8_t *heap = NULL; /* a whole-column frame's decoding */
		if (c->codec == ZN_COL_PAGED) {
			/* The column's pages stay: rows handed out from them may be in use. */
			for (uint64_t k = 0; k < page_count(c) && data; k++)
				if (!decode_page(r, c, k))
					data = NULL;
			if (data)
				data = col_data(c);
		} else if (!zn_ix_ensure(r, (uint64_t)(c->stored - r->ix), c->stored_size)) {
			data = NULL;
		} else if (c->codec == ZN_COL_ZSTD) {
			/* The index pages' decoder, under the same lock: a context of its own per
			 * column (ZSTD_decompress) costs a CPUID, a VM exit, and fresh pages. */
			if (!r->ixdctx)
				r->ixdctx = ZSTD_createDCtx();
			heap = r->ixdctx ? malloc(c->raw_size ? c->raw_size : 1) : NULL;
			size_t n = heap ? ZSTD_decompressDCtx(r->ixdctx, heap, c->raw_size,
			                                      c->stored, c->stored_size)
			                : 0;
			if (!heap || ZSTD_isError(n) || n != c->raw_size) {
				free(heap);
				heap = NULL;
				data = NULL;
			} else {
				if (c->filter)
					delta_decode(heap, c->raw_size, col_specs[id].width);
				data = heap;
			}
		}
		if (data && validate_content(r, id, data)) {
			if (c->codec != ZN_COL_PAGED)
				atomic_store(&c->heap, heap);
			st = 1;
		} else {
			free(heap);
			st = -1;
		}
		atomic_store_explicit(&c->state, st, memory_order_release);
	}
	pthread_mutex_unlock(&r->mu);
	return st == 1 ? col_data(c) : NULL;
}
