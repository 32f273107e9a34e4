/* archive_index.c - the columnar index: building it, and validated access to its columns.
 *
 * Each column is one contiguous little-endian array (strings: a u64 offsets array of rows + 1
 * values plus a bytes array, Arrow's LargeBinary layout), so a column can be handed to an Arrow
 * consumer without conversion. Any column is compressed with zstd when that saves at least 10%,
 * and decompressed on first use; but when the path bytes exceed 1 MiB the columns random access
 * needs (path, type, size, sha256, first_block, block_offset) stay raw, so a lookup in a big
 * archive is a binary search in the memory-mapped file with nothing decoded.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xxh3.h"
#include <zstd.h>

#include "archive_internal.h"

struct colbuf {
	int id;
	uint8_t *data;
	size_t len, cap;
};

int zn_path_is_safe(const char *p, size_t len)
{
	if (len == 0 || p[0] == '/' || memchr(p, 0, len))
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

/* In a big index, the columns that random access needs (path lookup, then type, size, location
 * and digest of one entry) stay raw, so that reading one file decodes nothing of the index: a
 * binary search in the mapped file and a few loads. Up to this size of path bytes, decoding
 * those columns costs well under a millisecond and compressing them saves a few percent of a
 * small archive. */
#define ZN_RAW_LOOKUP_ABOVE (1u << 20)

static int keep_raw(int id, size_t path_bytes)
{
	int lookup = id == ZN_COL_PATH_OFFSETS || id == ZN_COL_PATH_BYTES || id == ZN_COL_TYPE ||
		     id == ZN_COL_SIZE || id == ZN_COL_FIRST_BLOCK || id == ZN_COL_BLOCK_OFFSET ||
		     id == ZN_COL_SHA256;
	return lookup && path_bytes > ZN_RAW_LOOKUP_ABOVE;
}

/* The shape of each column, for the writer's sizes and the reader's checks. */
struct colspec {
	uint8_t width;	/* bytes per row; 0 for string bytes */
	uint8_t blocks; /* rows are blocks, not entries */
	uint8_t offsets_of; /* for an offsets column: the id of its bytes column */
};

/* Resolved at compile time: zn_row() looks a column's shape up for every row it returns, and a
 * switch there took a quarter of the time of opening a 100,000-entry archive for extraction. */
#define IS_BYTES_COL(id)                                                                           \
	((id) == ZN_COL_PATH_BYTES || (id) == ZN_COL_UNAME_BYTES || (id) == ZN_COL_GNAME_BYTES ||  \
	 (id) == ZN_COL_LINK_BYTES)
#define IS_OFFSETS_COL(id)                                                                         \
	((id) == ZN_COL_PATH_OFFSETS || (id) == ZN_COL_UNAME_OFFSETS ||                            \
	 (id) == ZN_COL_GNAME_OFFSETS || (id) == ZN_COL_LINK_OFFSETS)
static const struct colspec col_specs[ZN_COL_MAX_ID + 1] = {
#define ZN_COL_SPEC_(name, cid, w)                                                                 \
	[cid] = {IS_BYTES_COL(cid) ? 0 : (w), 0, IS_OFFSETS_COL(cid) ? (cid) + 1 : 0},
	ZN_COLUMN_LIST(ZN_COL_SPEC_)
#undef ZN_COL_SPEC_
};

static struct colspec spec_of(int id)
{
	struct colspec s = col_specs[id];
	s.blocks = id >= ZN_COL_BLK_OFFSET; /* unknown ids too */
	return s;
}

static const struct zn_index_row *index_row(const struct zn_index_input *in, uint64_t i,
                                            struct zn_index_row *row)
{
	if (in->rows)
		return &in->rows[i];
	in->get_row(in->row_ctx, i, row);
	return row;
}

zn_result zn_index_emit(const struct zn_index_input *in, const struct zn_index_sink *sink)
{
	enum { NCOLS = 23 };
	static const int ids[NCOLS] = {
		ZN_COL_PATH_OFFSETS, ZN_COL_PATH_BYTES,	  ZN_COL_TYPE,		ZN_COL_MODE,
		ZN_COL_UID,	     ZN_COL_GID,	  ZN_COL_UNAME_OFFSETS, ZN_COL_UNAME_BYTES,
		ZN_COL_GNAME_OFFSETS, ZN_COL_GNAME_BYTES, ZN_COL_MTIME_NS,	ZN_COL_SIZE,
		ZN_COL_LINK_OFFSETS, ZN_COL_LINK_BYTES,	  ZN_COL_FIRST_BLOCK,
		ZN_COL_BLOCK_OFFSET, ZN_COL_BLK_OFFSET,	  ZN_COL_BLK_CSIZE,	ZN_COL_BLK_USIZE,
		ZN_COL_BLK_CODEC,    ZN_COL_BLK_XXH3,	  ZN_COL_BLK_CXXH3,	ZN_COL_SHA256,
	};
	struct colbuf c[NCOLS];
	memset(c, 0, sizeof(c));
	struct colbuf *col[ZN_COL_MAX_ID + 1] = {0};
	for (int i = 0; i < NCOLS; i++) {
		c[i].id = ids[i];
		col[ids[i]] = &c[i];
	}
	zn_result r = ZN_ERR_NOMEM;
	uint8_t *buf = NULL;
	int fail = 0;
	int ncols = NCOLS - (in->digest == ZN_DIGEST_SHA256 ? 0 : 1);

	/* Each column at its final size from the start: for a million files, growing by doubling
	 * would hold up to twice the index in slack at the writer's peak. */
	size_t bytes_of[ZN_COL_MAX_ID + 1] = {0};
	for (uint64_t i = 0; i < in->nrows; i++) {
		struct zn_index_row row;
		const struct zn_index_row *e = index_row(in, i, &row);
		bytes_of[ZN_COL_PATH_BYTES] += e->path_len;
		bytes_of[ZN_COL_UNAME_BYTES] += strlen(e->uname);
		bytes_of[ZN_COL_GNAME_BYTES] += strlen(e->gname);
		bytes_of[ZN_COL_LINK_BYTES] += e->link ? e->link_len : 0;
	}
	for (int i = 0; i < ncols; i++) { /* the digest column is last */
		struct colspec sp = spec_of(ids[i]);
		uint64_t rows = sp.blocks ? in->nblocks : in->nrows;
		size_t want = sp.width ? (size_t)(rows + (sp.offsets_of != 0)) * sp.width
				       : bytes_of[ids[i]];
		if (want && !(c[i].data = malloc(want)))
			goto out;
		c[i].cap = want;
	}

	fail |= put_u64(col[ZN_COL_PATH_OFFSETS], 0);
	fail |= put_u64(col[ZN_COL_UNAME_OFFSETS], 0);
	fail |= put_u64(col[ZN_COL_GNAME_OFFSETS], 0);
	fail |= put_u64(col[ZN_COL_LINK_OFFSETS], 0);
	for (uint64_t i = 0; i < in->nrows && !fail; i++) {
		struct zn_index_row row;
		const struct zn_index_row *e = index_row(in, i, &row);
		uint8_t t = e->type;
		fail |= put_str(col[ZN_COL_PATH_OFFSETS], col[ZN_COL_PATH_BYTES], e->path, e->path_len);
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
		if (in->digest == ZN_DIGEST_SHA256)
			fail |= put(col[ZN_COL_SHA256], e->sha, 32);
		fail |= put_u32(col[ZN_COL_FIRST_BLOCK], (uint32_t)e->first_block);
		fail |= put_u32(col[ZN_COL_BLOCK_OFFSET], (uint32_t)e->block_offset);
	}
	for (uint64_t i = 0; i < in->nblocks && !fail; i++) {
		const struct zn_blockinfo *b = &in->blocks[i];
		fail |= put_u64(col[ZN_COL_BLK_OFFSET], b->offset);
		fail |= put_u64(col[ZN_COL_BLK_CSIZE], b->csize);
		fail |= put_u64(col[ZN_COL_BLK_USIZE], b->usize);
		fail |= put(col[ZN_COL_BLK_CODEC], &b->codec, 1);
		fail |= put_u64(col[ZN_COL_BLK_XXH3], b->xxh3);
		fail |= put_u64(col[ZN_COL_BLK_CXXH3], b->cxxh3);
	}
	if (fail)
		goto out;

	/* Compress what is worth it. */
	uint8_t *zdata[NCOLS] = {0};
	size_t zlen[NCOLS] = {0};
	size_t total = ZN_INDEX_HEADER_SIZE + (size_t)ncols * ZN_COLDIR_SIZE;
	for (int i = 0; i < ncols; i++) {
		if (!keep_raw(c[i].id, col[ZN_COL_PATH_BYTES]->len) && c[i].len >= 64) {
			size_t cap = ZSTD_compressBound(c[i].len);
			zdata[i] = malloc(cap);
			if (!zdata[i])
				goto out_z;
			size_t z = ZSTD_compress(zdata[i], cap, c[i].data, c[i].len, 3);
			if (!ZSTD_isError(z) && z * 10 <= c[i].len * 9) {
				zlen[i] = z;
				free(c[i].data); /* only the compressed form is kept */
				c[i].data = NULL;
			} else {
				free(zdata[i]);
				zdata[i] = NULL;
			}
		}
		total = (total + 7) & ~(size_t)7;
		total += zdata[i] ? zlen[i] : c[i].len;
	}
	size_t head_len = ZN_INDEX_HEADER_SIZE + (size_t)ncols * ZN_COLDIR_SIZE;
	buf = calloc(1, head_len);
	if (!buf)
		goto out_z;
	r = ZN_ERR_IO;
	if (sink->begin(sink->ctx, total))
		goto out_z;
	memcpy(buf, ZN_INDEX_MAGIC, 4);
	zn_put_le32(buf + 4, (uint32_t)ncols);
	zn_put_le64(buf + 8, in->nrows);
	zn_put_le64(buf + 16, in->nblocks);
	zn_put_le64(buf + 24, in->chunk_size);
	zn_put_le32(buf + 32, (uint32_t)in->level);
	zn_put_le32(buf + 36, (uint32_t)in->digest);
	zn_put_le64(buf + 40, in->content_bytes);
	size_t pos = head_len;
	for (int i = 0; i < ncols; i++) {
		pos = (pos + 7) & ~(size_t)7;
		uint8_t *d = buf + ZN_INDEX_HEADER_SIZE + (size_t)i * ZN_COLDIR_SIZE;
		size_t stored = zdata[i] ? zlen[i] : c[i].len;
		zn_put_le32(d, (uint32_t)c[i].id);
		d[4] = zdata[i] ? ZN_COL_ZSTD : ZN_COL_RAW;
		zn_put_le64(d + 8, pos);
		zn_put_le64(d + 16, stored);
		zn_put_le64(d + 24, c[i].len);
		pos += stored;
	}
	if (sink->put(sink->ctx, buf, head_len))
		goto out_z;
	pos = head_len;
	static const uint8_t zeros[8];
	for (int i = 0; i < ncols; i++) {
		size_t gap = ((pos + 7) & ~(size_t)7) - pos, stored = zdata[i] ? zlen[i] : c[i].len;
		if ((gap && sink->put(sink->ctx, zeros, gap)) ||
		    (stored && sink->put(sink->ctx, zdata[i] ? zdata[i] : c[i].data, stored)))
			goto out_z;
		pos += gap + stored;
		free(c[i].data); /* the peak holds the index once, not twice */
		c[i].data = NULL;
		free(zdata[i]);
		zdata[i] = NULL;
	}
	r = ZN_OK;
out_z:
	for (int i = 0; i < NCOLS; i++)
		free(zdata[i]);
out:
	for (int i = 0; i < NCOLS; i++)
		free(c[i].data);
	free(buf);
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

zn_result zn_col_check_shape(struct zn_reader *r, int id)
{
	struct zn_column *c = &r->cols[id];
	struct colspec s = spec_of(id);
	if (!c->present)
		return ZN_OK;
	uint64_t rows = s.blocks ? r->nblocks : r->nentries;
	if (s.offsets_of)
		rows++;
	if (s.width) {
		/* rows * width must not overflow: rows is bounded by the index size below. */
		SAFETY_CHECK(rows <= UINT64_MAX / s.width, ZN_ERR_CORRUPT);
		SAFETY_CHECK(c->raw_size == rows * s.width, ZN_ERR_CORRUPT);
	}
	if (c->codec == ZN_COL_RAW) {
		SAFETY_CHECK(c->stored_size == c->raw_size, ZN_ERR_CORRUPT);
	} else {
		SAFETY_CHECK(c->codec == ZN_COL_ZSTD, ZN_ERR_CORRUPT);
		/* No unbounded allocation from a crafted size: zstd cannot expand beyond this. */
		SAFETY_CHECK(c->raw_size <= c->stored_size * 32768 + 4096, ZN_ERR_CORRUPT);
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
		return validate_offsets(p, r->nentries + 1, blen);
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
		/* Pages never change, so a relaxed flag is enough: a race only checks a page twice. */
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

const uint8_t *zn_row(struct zn_reader *r, int id, uint64_t i)
{
	struct zn_column *c = &r->cols[id];
	struct colspec s = spec_of(id);
	uint64_t rows = (s.blocks ? r->nblocks : r->nentries) + (s.offsets_of ? 1 : 0);
	if (!c->present || !s.width || i >= rows)
		return NULL;
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
	if (c->codec != ZN_COL_RAW) {
		const uint8_t *d = zn_col(r, id);
		return d ? d + a : NULL;
	}
	return zn_ix_ensure(r, (uint64_t)(c->stored - r->ix) + a, b - a) ? c->stored + a : NULL;
}

const uint8_t *zn_col(struct zn_reader *r, int id)
{
	struct zn_column *c = &r->cols[id];
	int st = atomic_load_explicit(&c->state, memory_order_acquire);
	if (st == 1)
		return c->codec == ZN_COL_RAW ? c->stored : atomic_load(&c->heap);
	if (st < 0 || !c->present)
		return NULL;
	pthread_mutex_lock(&r->mu);
	st = atomic_load(&c->state);
	if (st == 0) {
		const uint8_t *data = c->stored;
		uint8_t *heap = NULL;
		if (!zn_ix_ensure(r, (uint64_t)(c->stored - r->ix), c->stored_size)) {
			data = NULL;
		} else if (c->codec == ZN_COL_ZSTD) {
			heap = malloc(c->raw_size ? c->raw_size : 1);
			size_t n = heap ? ZSTD_decompress(heap, c->raw_size, c->stored, c->stored_size)
					: 0;
			if (!heap || ZSTD_isError(n) || n != c->raw_size) {
				free(heap);
				heap = NULL;
				data = NULL;
			} else {
				data = heap;
			}
		}
		if (data && validate_content(r, id, data)) {
			atomic_store(&c->heap, heap);
			st = 1;
		} else {
			free(heap);
			st = -1;
		}
		atomic_store_explicit(&c->state, st, memory_order_release);
	}
	pthread_mutex_unlock(&r->mu);
	if (st != 1)
		return NULL;
	return c->codec == ZN_COL_RAW ? c->stored : atomic_load(&c->heap);
}

void zn_block_release(struct zn_reader *r, uint64_t i)
{
	struct zn_blockinfo b;
	if (!r->mapped || zn_block_info(r, i, &b) != ZN_OK)
		return;
	/* Only whole pages inside the block: its neighbours may still be in use by other workers. */
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)(r->map + b.offset) + ps - 1) & ~(ps - 1);
	uintptr_t end = ((uintptr_t)(r->map + b.offset + b.csize)) & ~(ps - 1);
	if (end > start)
		madvise((void *)start, end - start, MADV_DONTNEED);
}

void *zn_dctx_new(void)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	if (d)
		ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 28);
	return d;
}

zn_result zn_block_info(struct zn_reader *r, uint64_t i, struct zn_blockinfo *b)
{
	SAFETY_CHECK(i < r->nblocks, ZN_ERR_CORRUPT);
	const uint8_t *off = zn_row(r, ZN_COL_BLK_OFFSET, i), *cs = zn_row(r, ZN_COL_BLK_CSIZE, i),
		      *us = zn_row(r, ZN_COL_BLK_USIZE, i), *co = zn_row(r, ZN_COL_BLK_CODEC, i),
		      *xx = zn_row(r, ZN_COL_BLK_XXH3, i), *cx = zn_row(r, ZN_COL_BLK_CXXH3, i);
	SAFETY_CHECK(off && cs && us && co && xx && cx, ZN_ERR_CORRUPT);
	b->offset = zn_get_le64(off);
	b->csize = zn_get_le64(cs);
	b->usize = zn_get_le64(us);
	b->codec = *co;
	b->xxh3 = zn_get_le64(xx);
	b->cxxh3 = zn_get_le64(cx);
	SAFETY_CHECK(b->offset >= ZN_HEADER_SIZE && b->offset <= r->index_offset, ZN_ERR_CORRUPT);
	SAFETY_CHECK(b->csize <= r->index_offset - b->offset, ZN_ERR_CORRUPT);
	SAFETY_CHECK(b->usize <= r->chunk_size, ZN_ERR_CORRUPT);
	SAFETY_CHECK(b->codec == ZN_BLOCK_STORED || b->codec == ZN_BLOCK_ZSTD, ZN_ERR_CORRUPT);
	SAFETY_CHECK(b->codec != ZN_BLOCK_STORED || b->csize == b->usize, ZN_ERR_CORRUPT);
	return ZN_OK;
}

zn_result zn_block_load(struct zn_reader *r, uint64_t i, void *dctx, uint8_t *buf,
			const uint8_t **data, uint64_t *len)
{
	struct zn_blockinfo b;
	RETURN_IF_ERROR(zn_block_info(r, i, &b));
	const uint8_t *src = r->map + b.offset;
	atomic_fetch_add_explicit(&r->blocks_loaded, 1, memory_order_relaxed);
	/* The stored bytes are checked before they reach the decoder: every byte of the archive is
	 * covered by a checksum, and zstd never sees damaged input. */
	SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(src, b.csize) == b.cxxh3), ZN_ERR_CHECKSUM);
	if (b.codec == ZN_BLOCK_STORED) {
		*data = src; /* zero copy: straight from the mapping; the check above covered it */
		*len = b.usize;
		return ZN_SUM_OK(b.xxh3 == b.cxxh3) ? ZN_OK : ZN_ERR_CORRUPT;
	} else {
		size_t n = ZSTD_decompressDCtx(dctx, buf, b.usize, src, b.csize);
		SAFETY_CHECK(!ZSTD_isError(n) && n == b.usize, ZN_ERR_CORRUPT);
		*data = buf;
	}
	SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(*data, b.usize) == b.xxh3), ZN_ERR_CHECKSUM);
	*len = b.usize;
	return ZN_OK;
}
