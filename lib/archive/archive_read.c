/* SPDX-License-Identifier: MIT */
/* archive_read.c - opening an archive: footer and index checks, entries, lookup, random access.
 *
 * Everything read from the archive is untrusted. The footer and the index are checked before
 * anything else is believed: magic, version, bounds, the footer's own checksum and the index's
 * XXH3. Columns are then checked for shape (row counts, sizes, codecs) at open and for content
 * (offsets monotone and in range, types valid) when first used; block descriptors are checked
 * each time a block is loaded. No size read from the archive allocates more than a bounded
 * multiple of the archive's own size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/sized.h"
#include "common/xxh3.h"
#include <zstd.h>

#include "archive_block.h"

static zn_result fail(struct zn_reader *r, zn_result res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return res;
}

static const int required_cols[] = {
        ZN_COL_PATH_OFFSETS,  ZN_COL_PATH_BYTES,  ZN_COL_TYPE,          ZN_COL_MODE,
        ZN_COL_UID,           ZN_COL_GID,         ZN_COL_UNAME_OFFSETS, ZN_COL_UNAME_BYTES,
        ZN_COL_GNAME_OFFSETS, ZN_COL_GNAME_BYTES, ZN_COL_MTIME_NS,      ZN_COL_SIZE,
        ZN_COL_LINK_OFFSETS,  ZN_COL_LINK_BYTES,  ZN_COL_FIRST_BLOCK,   ZN_COL_BLOCK_OFFSET,
        ZN_COL_BLK_OFFSET,    ZN_COL_BLK_CSIZE,   ZN_COL_BLK_USIZE,     ZN_COL_BLK_CODEC,
        ZN_COL_BLK_XXH3,      ZN_COL_BLK_CXXH3,
};

/* The header, and where the archive ends: zero bytes after the footer (a copy padded to a block
 * size, as `dd conv=sync` or a tape pads) are passed over, up to 1 MiB of them, as tar passes
 * over its zero blocks. *end: just after the footer. */
static zn_result check_header(struct zn_reader *r, uint64_t *end)
{
	const uint8_t *m = r->map;
	uint64_t size = r->map_size;
	if (size < ZN_HEADER_SIZE + ZN_FOOTER_SIZE)
		return fail(r, ZN_ERR_TRUNCATED,
		            "file too short to be a znippy archive (%llu bytes)",
		            (unsigned long long)size);
	if (memcmp(m, ZN_MAGIC, ZN_MAGIC_LEN))
		return fail(r, ZN_ERR_CORRUPT, "not a znippy archive (bad magic)");
	uint32_t hver = zn_get_le32(m + 8);
	if (hver != ZN_FORMAT_VERSION && hver != ZN_FORMAT_VERSION_DMS)
		return fail(r, ZN_ERR_UNSUPPORTED, "unsupported format version %u", hver);
	r->version = hver;
	if (zn_get_le32(m + 12) != 0)
		return fail(r, ZN_ERR_UNSUPPORTED, "unknown header flags 0x%x",
		            zn_get_le32(m + 12));
	if (memcmp(m + size - 8, ZN_FOOTER_MAGIC, 8) && !m[size - 1]) {
		uint64_t z = size;
		while (z > ZN_HEADER_SIZE + ZN_FOOTER_SIZE && size - z < (1u << 20) && !m[z - 1])
			z--;
		if (!memcmp(m + z - 8, ZN_FOOTER_MAGIC, 8))
			size = z;
	}
	*end = size;
	return ZN_OK;
}

/* The footer ending at `size`, and the index position and page checksums it gives. */
static zn_result check_footer(struct zn_reader *r, uint64_t size)
{
	const uint8_t *m = r->map, *f = m + size - ZN_FOOTER_SIZE;
	if (memcmp(f + 56, ZN_FOOTER_MAGIC, 8)) {
		/* A whole footer a little earlier: something was appended to a good archive. */
		for (uint64_t end = size - 1;
		     end >= ZN_HEADER_SIZE + ZN_FOOTER_SIZE && size - end <= (1u << 20); end--) {
			const uint8_t *g = m + end - ZN_FOOTER_SIZE;
			if (!memcmp(g + 56, ZN_FOOTER_MAGIC, 8) &&
			    zn_xxh3(g, 48) == zn_get_le64(g + 48))
				return fail(r, ZN_ERR_CORRUPT,
				            "%llu byte%s of other data after the archive's end "
				            "(appended to it?)",
				            (unsigned long long)(size - end),
				            size - end > 1 ? "s" : "");
		}
		return fail(r, ZN_ERR_TRUNCATED,
		            "no footer at the end (archive truncated or not finished)");
	}
	if (!ZN_SUM_OK(zn_xxh3(f, 48) == zn_get_le64(f + 48)))
		return fail(r, ZN_ERR_CHECKSUM, "footer checksum mismatch");
	if (zn_get_le32(f + 40) != r->version || zn_get_le32(f + 44) != 0)
		return fail(r, ZN_ERR_UNSUPPORTED, "unsupported format version in footer");
	r->index_offset = zn_get_le64(f);
	r->index_size = zn_get_le64(f + 8);
	uint64_t end = size - ZN_FOOTER_SIZE;
	if (r->index_offset < ZN_HEADER_SIZE || r->index_offset > end ||
	    r->index_size > end - r->index_offset || r->index_size < ZN_INDEX_HEADER_SIZE)
		return fail(r, ZN_ERR_CORRUPT, "index position out of bounds");
	uint64_t npages = (r->index_size + ZN_IX_PAGE - 1) / ZN_IX_PAGE;
	/* The footer's archive shorter than the file: something before it. */
	const uint64_t described = r->index_offset + r->index_size + npages * 8 + ZN_FOOTER_SIZE;
	if (described < size)
		return fail(
		        r, ZN_ERR_CORRUPT,
		        "the footer describes an archive of %llu bytes, the file has %llu: other "
		        "data before it (archives concatenated?)",
		        (unsigned long long)described, (unsigned long long)size);
	if (end - r->index_offset - r->index_size != npages * 8)
		return fail(r, ZN_ERR_CORRUPT, "index page checksums out of bounds");
	r->ix = m + r->index_offset;
	r->pagesums = r->ix + r->index_size;
	if (!ZN_SUM_OK(zn_xxh3(r->pagesums, npages * 8) == zn_get_le64(f + 16)))
		return fail(r, ZN_ERR_CHECKSUM, "index page checksums damaged");
	r->ix_ok = calloc((npages + 63) / 64, sizeof(uint64_t));
	r->ix_bad = calloc((npages + 63) / 64, sizeof(uint64_t));
	if (!r->ix_ok || !r->ix_bad)
		return fail(r, ZN_ERR_NOMEM, "out of memory");
	return ZN_OK;
}

/* The index header (against the footer f) and the column directory's size: *ncols. */
static zn_result check_index_header(struct zn_reader *r, const uint8_t *f, uint32_t *ncols)
{
	const uint8_t *ix = r->ix;
	if (!zn_ix_ensure(r, 0, ZN_INDEX_HEADER_SIZE))
		return fail(r, ZN_ERR_CHECKSUM,
		            "index checksum mismatch in its first page (which holds its header)");
	if (memcmp(ix, ZN_INDEX_MAGIC, 4))
		return fail(r, ZN_ERR_CORRUPT, "bad index magic");
	*ncols = zn_get_le32(ix + 4);
	r->nentries = zn_get_le64(ix + 8);
	r->nblocks = zn_get_le64(ix + 16);
	r->chunk_size = zn_get_le64(ix + 24);
	r->level = (int)zn_get_le32(ix + 32);
	r->digest = (int)zn_get_le32(ix + 36);
	r->content_bytes = zn_get_le64(ix + 40);
	/* Reserved in version 1, where a reader ignores it: every file's digest is stored. */
	r->digest_min_size = r->version == ZN_FORMAT_VERSION_DMS ? zn_get_le64(ix + 48) : 0;
	if (r->nentries != zn_get_le64(f + 24) || r->nblocks != zn_get_le64(f + 32))
		return fail(r, ZN_ERR_CORRUPT, "index and footer disagree on counts");
	if (*ncols > ZN_MAX_COLUMNS ||
	    ZN_INDEX_HEADER_SIZE + (uint64_t)*ncols * ZN_COLDIR_SIZE > r->index_size)
		return fail(r, ZN_ERR_CORRUPT, "bad column count %u", *ncols);
	if (!zn_ix_ensure(r, ZN_INDEX_HEADER_SIZE, (uint64_t)*ncols * ZN_COLDIR_SIZE))
		return fail(r, ZN_ERR_CHECKSUM,
		            "index checksum mismatch (column directory damaged)");
	if (r->chunk_size < ZN_CHUNK_SIZE_MIN || r->chunk_size > ZN_CHUNK_SIZE_MAX)
		return fail(r, ZN_ERR_CORRUPT, "bad chunk size %llu",
		            (unsigned long long)r->chunk_size);
	if (r->digest != ZN_DIGEST_NONE && r->digest != ZN_DIGEST_SHA256)
		return fail(r, ZN_ERR_UNSUPPORTED, "unknown digest kind %d", r->digest);
	/* Every block occupies at least one byte of the data area. */
	if (r->nblocks > r->index_offset - ZN_HEADER_SIZE)
		return fail(r, ZN_ERR_CORRUPT, "block count exceeds the data area");
	/* Readers keep a record per entry, so a few KB of highly compressed columns must not claim
	 * millions of entries (archive_format.h; docs/FORMAT.md, "What a reader checks"). */
	if (r->nentries > ZN_ENTRIES_FREE + ZN_ENTRIES_PER_INDEX_BYTE * r->index_size)
		return fail(r, ZN_ERR_CORRUPT, "entry count %llu too large for a %llu-byte index",
		            (unsigned long long)r->nentries, (unsigned long long)r->index_size);
	return ZN_OK;
}

/* The column directory: each known column's place and shape (their content is checked when first
 * touched: pages against their checksums, offsets and types on each access, decoded columns as a
 * whole); the required ones present, and all of them decoding to no more than the index's size
 * allows (archive_format.h). */
static zn_result read_columns(struct zn_reader *r, uint32_t ncols)
{
	for (uint32_t i = 0; i < ncols; i++) {
		const uint8_t *d = r->ix + ZN_INDEX_HEADER_SIZE + (size_t)i * ZN_COLDIR_SIZE;
		uint32_t id = zn_get_le32(d);
		uint64_t off = zn_get_le64(d + 8), stored = zn_get_le64(d + 16);
		if (!zn_col_known(id))
			continue; /* a later writer's column: ignored, whatever its record says */
		struct zn_column *c = &r->cols[id];
		if (c->present)
			return fail(r, ZN_ERR_CORRUPT, "column %u appears twice", id);
		if (off > r->index_size || stored > r->index_size - off)
			return fail(r, ZN_ERR_CORRUPT, "column %u out of bounds", id);
		c->present = 1;
		c->codec = d[4];
		c->page_log = d[5];
		c->filter = r->version == ZN_FORMAT_VERSION_DMS ? d[6] : ZN_FILTER_NONE;
		c->stored = r->ix + off;
		c->stored_size = stored;
		c->raw_size = zn_get_le64(d + 24);
		if (zn_col_check_shape(r, (int)id) != ZN_OK)
			return fail(r, ZN_ERR_CORRUPT, "column %u has a bad size or codec", id);
	}
	for (size_t i = 0; i < ZN_ARRAY_LEN(required_cols); i++)
		if (!r->cols[required_cols[i]].present)
			return fail(r, ZN_ERR_CORRUPT, "column %d missing", required_cols[i]);
	/* Each raw size is at most 32768 times the index (zn_col_check_shape), so for any file that
	 * can be mapped the sum cannot wrap. */
	uint64_t raw = 0;
	for (int id = 0; id <= ZN_COL_MAX_ID; id++)
		raw += r->cols[id].present ? r->cols[id].raw_size : 0;
	if (raw > ZN_INDEX_RAW_FREE + ZN_INDEX_RAW_PER_BYTE * r->index_size)
		return fail(r, ZN_ERR_CORRUPT,
		            "the index decodes to %llu bytes, too many for its %llu bytes",
		            (unsigned long long)raw, (unsigned long long)r->index_size);
	if (r->digest == ZN_DIGEST_SHA256 && !r->cols[ZN_COL_SHA256].present)
		return fail(r, ZN_ERR_CORRUPT, "digest column missing");
	return ZN_OK;
}

static zn_result parse(struct zn_reader *r)
{
	uint64_t end = 0;
	uint32_t ncols = 0;
	RETURN_IF_ERROR(check_header(r, &end));
	RETURN_IF_ERROR(check_footer(r, end));
	RETURN_IF_ERROR(check_index_header(r, r->map + end - ZN_FOOTER_SIZE, &ncols));
	return read_columns(r, ncols);
}

static zn_result open_common(struct zn_reader *r, char *err, size_t err_len)
{
	zn_result res = parse(r);
	if (res != ZN_OK && err && err_len) {
		snprintf(err, err_len, "%s", r->err);
	}
	return res;
}

static struct zn_reader *reader_new(void)
{
	struct zn_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	const char *dec = getenv("ZN_ZSTD_DECODER");
	r->own_zstd = dec && !strcmp(dec, "znippy");
	return r;
}

zn_result zn_reader_open_mem(struct zn_reader **out, const void *data, size_t size, char *err,
                             size_t err_len)
{
	if (out)
		*out = NULL;
	if (!out || (!data && size))
		return ZN_ERR_INVALID_ARG;
	struct zn_reader *r = reader_new();
	if (!r)
		return ZN_ERR_NOMEM;
	r->map = data;
	r->map_size = size;
	zn_result res = open_common(r, err, err_len);
	if (res != ZN_OK) {
		zn_reader_free(r);
		return res;
	}
	*out = r;
	return ZN_OK;
}

zn_result zn_reader_open_fd(struct zn_reader **out, int fd, char *err, size_t err_len)
{
	if (!out)
		return ZN_ERR_INVALID_ARG;
	*out = NULL;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (err)
			snprintf(err, err_len, "not a regular file");
		return ZN_ERR_INVALID_ARG;
	}
	struct zn_reader *r = reader_new();
	if (!r)
		return ZN_ERR_NOMEM;
	if (st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			if (err)
				snprintf(err, err_len, "cannot map: %s", strerror(errno));
			zn_reader_free(r);
			return ZN_ERR_IO;
		}
		r->map = m;
		r->mapped = 1;
	}
	r->map_size = (uint64_t)st.st_size;
	zn_result res = open_common(r, err, err_len);
	if (res != ZN_OK) {
		zn_reader_free(r);
		return res;
	}
	*out = r;
	return ZN_OK;
}

void zn_reader_mapping(const struct zn_reader *r, const void **base, uint64_t *size)
{
	*base = r->mapped ? r->map : NULL;
	*size = r->mapped ? r->map_size : 0;
}

zn_result zn_reader_open(struct zn_reader **out, const char *path, char *err, size_t err_len)
{
	if (out)
		*out = NULL;
	if (!out || !path)
		return ZN_ERR_INVALID_ARG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (err)
			snprintf(err, err_len, "cannot open: %s", strerror(errno));
		return errno == ENOENT ? ZN_ERR_NOT_FOUND : ZN_ERR_IO;
	}
	zn_result res = zn_reader_open_fd(out, fd, err, err_len);
	close(fd);
	return res;
}

void zn_reader_free(struct zn_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i <= ZN_COL_MAX_ID; i++) {
		free(atomic_load(&r->cols[i].heap));
		free((void *)atomic_load(&r->cols[i].pages));
	}
	if (r->mapped)
		munmap((void *)r->map, r->map_size);
	if (r->blocks) {
		zn_block_cache_free(r->blocks);
		free(r->blocks);
	}
	free(r->ix_ok);
	free(r->ix_bad);
	ZSTD_freeDCtx(r->ixdctx);
	free(atomic_load(&r->sums));
	pthread_mutex_destroy(&r->mu);
	free(r);
}

uint64_t zn_reader_count(const struct zn_reader *r)
{
	return r ? r->nentries : 0;
}

/* String i of an offsets+bytes pair, of which only the first `want` bytes are made readable
 * (checked or decoded); *len is its whole length. A comparison needs no more of a string than
 * the length of what it is compared with: a lookup probing a crafted row of hundreds of MB would
 * otherwise walk all of its pages, once per lookup. */
static zn_result get_str_head(struct zn_reader *r, int off_id, uint64_t i, uint64_t want,
                              const char **s, size_t *len)
{
	const uint8_t *pa = zn_row(r, off_id, i), *pb = zn_row(r, off_id, i + 1);
	SAFETY_CHECK(pa && pb, ZN_ERR_CORRUPT);
	uint64_t a = zn_get_le64(pa), b = zn_get_le64(pb);
	SAFETY_CHECK(a <= b && b <= r->cols[off_id + 1].raw_size, ZN_ERR_CORRUPT);
	*len = (size_t)(b - a);
	if (a == b || !want) {
		*s = "";
		return ZN_OK;
	}
	const uint8_t *bytes = zn_bytes(r, off_id + 1, a, a + ZN_MIN(b - a, want));
	SAFETY_CHECK(bytes, ZN_ERR_CORRUPT);
	*s = (const char *)bytes;
	return ZN_OK;
}

/* String i of an offsets+bytes pair, all of it. */
static zn_result get_str(struct zn_reader *r, int off_id, uint64_t i, const char **s, size_t *len)
{
	return get_str_head(r, off_id, i, UINT64_MAX, s, len);
}

/* Once per reader, before rows are read one after another: the offsets that can be read, in
 * each offsets column, never decrease and stay within their bytes column. A scan of every row
 * then reads each string byte once, where crafted offsets such as 0, R, 0, R, ... would make
 * every other string the whole column (rows x R work from a small index). A column that loads
 * whole has been checked so by zn_col(); in one that does not (a damaged page), the rows whose
 * offsets cannot be read are left to fail on their own. A lookup reads a few strings and needs
 * no scan. Threads racing here do the same work and reach the same answer. */
static zn_result offsets_scan(struct zn_reader *r)
{
	int st = atomic_load_explicit(&r->offsets_state, memory_order_acquire);
	if (st)
		return st > 0 ? ZN_OK : ZN_ERR_CORRUPT;
	static const int ids[] = {ZN_COL_PATH_OFFSETS,       ZN_COL_UNAME_OFFSETS,
	                          ZN_COL_GNAME_OFFSETS,      ZN_COL_LINK_OFFSETS,
	                          ZN_COL_PKG_GROUP_OFFSETS,  ZN_COL_PKG_NAME_OFFSETS,
	                          ZN_COL_PKG_VERSION_OFFSETS};
	bool ok = true;
	for (size_t k = 0; k < ZN_ARRAY_LEN(ids) && ok; k++) {
		if (zn_col(r, ids[k]))
			continue;
		uint64_t prev = 0, lim = r->cols[ids[k] + 1].raw_size;
		for (uint64_t i = 0; i <= r->nentries && ok; i++) {
			const uint8_t *p = zn_row(r, ids[k], i);
			if (!p)
				continue;
			uint64_t v = zn_get_le64(p);
			ok = v >= prev && v <= lim;
			prev = v;
		}
	}
	atomic_store_explicit(&r->offsets_state, ok ? 1 : -1, memory_order_release);
	return ok ? ZN_OK : ZN_ERR_CORRUPT;
}

zn_result zn_entry_path(struct zn_reader *r, uint64_t i, const char **path, size_t *len)
{
	return get_str(r, ZN_COL_PATH_OFFSETS, i, path, len);
}

zn_result zn_entry_str(struct zn_reader *r, int off_id, uint64_t i, const char **s, size_t *len)
{
	return get_str(r, off_id, i, s, len);
}

zn_result zn_entry_fields(struct zn_reader *r, uint64_t i, struct zn_entry *e, const uint8_t **sha,
                          unsigned *lost)
{
	memset(e, 0, sizeof(*e));
	*sha = NULL;
	RETURN_IF_ERROR(offsets_scan(r));
	const uint8_t *type = zn_row(r, ZN_COL_TYPE, i), *mode = zn_row(r, ZN_COL_MODE, i),
	              *uid = zn_row(r, ZN_COL_UID, i), *gid = zn_row(r, ZN_COL_GID, i),
	              *mt = zn_row(r, ZN_COL_MTIME_NS, i), *sz = zn_row(r, ZN_COL_SIZE, i),
	              *fb = zn_row(r, ZN_COL_FIRST_BLOCK, i),
	              *bo = zn_row(r, ZN_COL_BLOCK_OFFSET, i);
	if (!type || !sz || !fb || !bo || *type > ZN_TYPE_HARDLINK)
		return ZN_ERR_CORRUPT;
	RETURN_IF_ERROR(get_str(r, ZN_COL_PATH_OFFSETS, i, &e->path, &e->path_len));
	RETURN_IF_ERROR(get_str(r, ZN_COL_LINK_OFFSETS, i, &e->link, &e->link_len));
	/* Both names are read, and one that cannot be is left as memset made it: NULL. */
	const int uname_ok = get_str(r, ZN_COL_UNAME_OFFSETS, i, &e->uname, &e->uname_len) == ZN_OK;
	const int gname_ok = get_str(r, ZN_COL_GNAME_OFFSETS, i, &e->gname, &e->gname_len) == ZN_OK;
	const int names = uname_ok && gname_ok;
	const int has_sha = r->digest == ZN_DIGEST_SHA256 && *type == ZN_TYPE_FILE &&
	                    zn_get_le64(sz) >= r->digest_min_size;
	if (has_sha)
		*sha = zn_row(r, ZN_COL_SHA256, i);
	const int sha_lost = has_sha && !*sha;
	unsigned miss = (mode ? 0 : ZN_LOST_MODE) | (uid && gid ? 0 : ZN_LOST_OWNER) |
	                (names ? 0 : ZN_LOST_NAMES) | (mt ? 0 : ZN_LOST_MTIME) |
	                (sha_lost ? ZN_LOST_DIGEST : 0);
	if (miss && !lost)
		return ZN_ERR_CORRUPT;
	if (lost)
		*lost = miss;
	if (!e->link_len)
		e->link = NULL;
	e->type = *type;
	e->uid = uid && gid ? zn_get_le32(uid) : 0;
	e->gid = uid && gid ? zn_get_le32(gid) : 0;
	e->mode = mode ? zn_get_le32(mode) & 07777 : 0;
	e->mtime_ns = mt ? (int64_t)zn_get_le64(mt) : 0;
	e->size = e->type == ZN_TYPE_FILE ? zn_get_le64(sz) : 0;
	e->first_block = zn_get_le32(fb);
	e->block_offset = zn_get_le32(bo);
	e->has_digest = *sha != NULL;
	return ZN_OK;
}

zn_result zn_reader_entry_type(struct zn_reader *r, uint64_t i, int *type)
{
	if (!r || !type || i >= r->nentries)
		return ZN_ERR_INVALID_ARG;
	const uint8_t *t = zn_row(r, ZN_COL_TYPE, i);
	SAFETY_CHECK(t && *t <= ZN_TYPE_HARDLINK, ZN_ERR_CORRUPT);
	*type = *t;
	return ZN_OK;
}

/* String i of an offsets+bytes pair into a field of struct zn_pkg_coord. */
static zn_result pkg_field(struct zn_reader *r, int off_id, uint64_t i, char *dst)
{
	const char *s;
	size_t n;
	RETURN_IF_ERROR(get_str(r, off_id, i, &s, &n));
	SAFETY_CHECK(n < ZN_PKG_FIELD_MAX && !memchr(s, 0, n), ZN_ERR_CORRUPT);
	memcpy(dst, s, n);
	dst[n] = 0;
	return ZN_OK;
}

zn_result zn_reader_package(struct zn_reader *r, uint64_t i, struct zn_pkg_coord *out)
{
	/* One layout so far: the caller's must hold all of it. */
	if (!r || !out || zn_sized_len(out, ZN_FIRST_SIZE_pkg_coord) < sizeof(*out) ||
	    i >= r->nentries)
		return ZN_ERR_INVALID_ARG;
	struct zn_pkg_coord c = {.struct_size = out->struct_size};
	*out = c;
	if (!r->cols[ZN_COL_PKG_TYPE].present)
		return ZN_OK;
	RETURN_IF_ERROR(offsets_scan(r));
	const uint8_t *t = zn_row(r, ZN_COL_PKG_TYPE, i);
	SAFETY_CHECK(t, ZN_ERR_CORRUPT);
	c.type = *t;
	RETURN_IF_ERROR(pkg_field(r, ZN_COL_PKG_GROUP_OFFSETS, i, c.group));
	RETURN_IF_ERROR(pkg_field(r, ZN_COL_PKG_NAME_OFFSETS, i, c.name));
	RETURN_IF_ERROR(pkg_field(r, ZN_COL_PKG_VERSION_OFFSETS, i, c.version));
	*out = c;
	return ZN_OK;
}

size_t zn_reader_repo(struct zn_reader *r, char out[256])
{
	struct zn_column *c = r ? &r->cols[ZN_COL_REPO] : NULL;
	out[0] = 0;
	if (!c || !c->present || c->raw_size > 255)
		return 0;
	const uint8_t *b = zn_bytes(r, ZN_COL_REPO, 0, c->raw_size);
	if (!b || memchr(b, 0, c->raw_size))
		return 0;
	memcpy(out, b, c->raw_size);
	out[c->raw_size] = 0;
	return c->raw_size;
}

void zn_lost_message(unsigned lost, char out[96])
{
	if (lost & ZN_LOST_OWNER)
		lost &= ~(unsigned)ZN_LOST_NAMES; /* the owner: ids and names */
	static const char *const names[] = {"mode", "owner", "owner's names", "time", "digest"};
	int at = snprintf(out, 96, "index damaged: its"), first = at;
	for (unsigned k = 0, left = lost & 31; k < 5; k++, left >>= 1)
		if (left & 1)
			at += snprintf(out + at, 96 - (size_t)at, "%s %s",
			               at == first ? ""
			               : left == 1 ? " and"
			                           : ",",
			               names[k]);
	snprintf(out + at, 96 - (size_t)at, " cannot be read");
}

/* Block b's weight in stored_size: its compressed bytes, bounded (a valid block is never larger
 * than zstd's bound of its chunk) so that products with a size stay below 2^57; a block that
 * cannot be read or holds nothing (0) ends a walk. */
static uint64_t block_weight(struct zn_reader *r, uint64_t b, uint64_t *usize)
{
	struct zn_blockinfo bi;
	if (zn_block_info(r, b, &bi) != ZN_OK || !bi.usize) {
		*usize = 0;
		return 0;
	}
	*usize = bi.usize;
	return ZN_MIN(bi.csize, 2 * r->chunk_size);
}

/* Prefix sums of the blocks' sizes and weights, and of the blocks that end a walk, made once per
 * reader. Without them an index of many entries claiming huge sizes over many tiny blocks made
 * every listing walk every block per entry: a crafted 1 MB archive kept `list` busy for hours. */
struct zn_block_sums {
	uint64_t *ucum, *wcum; /* bytes and weights before block b (nblocks + 1 rows each) */
	uint64_t *ends;        /* blocks that end a walk before block b */
	uint64_t rows[];
};

/* The sums, or NULL if there is no memory for them (or the archive claims more blocks than any
 * could: 2^34, which bounds the sums below 2^63). Threads racing here build the same sums; one
 * copy is kept. */
static const struct zn_block_sums *block_sums(struct zn_reader *r)
{
	struct zn_block_sums *s = atomic_load_explicit(&r->sums, memory_order_acquire);
	uint64_t nb = r->nblocks;
	if (s || nb >= (UINT64_C(1) << 34))
		return s;
	s = malloc(sizeof(*s) + 3 * (nb + 1) * sizeof(uint64_t));
	if (!s)
		return NULL;
	s->ucum = s->rows;
	s->wcum = s->rows + nb + 1;
	s->ends = s->rows + 2 * (nb + 1);
	s->ucum[0] = s->wcum[0] = s->ends[0] = 0;
	for (uint64_t b = 0; b < nb; b++) {
		uint64_t u, w = block_weight(r, b, &u);
		s->ucum[b + 1] = s->ucum[b] + u;
		s->wcum[b + 1] = s->wcum[b] + w;
		s->ends[b + 1] = s->ends[b] + !u;
	}
	struct zn_block_sums *none = NULL;
	if (!atomic_compare_exchange_strong_explicit(&r->sums, &none, s, memory_order_acq_rel,
	                                             memory_order_acquire)) {
		free(s);
		return none;
	}
	return s;
}

/* The first x in [lo, hi) with sum[x + 1] > v, for sums that never decrease; hi if none. */
static uint64_t first_above(const uint64_t *sum, uint64_t lo, uint64_t hi, uint64_t v)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (sum[mid + 1] > v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Compressed bytes attributed to a file of size bytes from offset off of block fb: its share of
 * each block it touches (size x csize / usize, rounded down, per block), as far as its blocks go
 * (the walk ends at a block that cannot be read or holds nothing). The first blocks are walked
 * (a file rarely spans more, and a lookup such as cat's then reads no other block's row); past
 * them, the prefix sums answer by binary search. */
static uint64_t stored_size(struct zn_reader *r, uint64_t fb, uint64_t off, uint64_t size)
{
	enum { WALK = 64 };
	uint64_t stored = 0, left = size, b = fb, nb = r->nblocks;
	for (; left && b < nb && b - fb < WALK; b++, off = 0) {
		uint64_t u, w = block_weight(r, b, &u);
		if (off >= u)
			return stored;
		uint64_t in = ZN_MIN(left, u - off);
		stored += in * w / u;
		left -= in;
	}
	const struct zn_block_sums *s = left && b < nb ? block_sums(r) : NULL;
	if (!s)
		return stored;
	/* From the start of block b on, as far as the first block that ends the walk, e. */
	uint64_t e = first_above(s->ends, b, nb, s->ends[b]);
	left = ZN_MIN(left, s->ucum[e] - s->ucum[b]);
	if (!left)
		return stored;
	/* The last block touched: the first whose end is at or past the file's (at most e - 1). */
	uint64_t end = s->ucum[b] + left, last = first_above(s->ucum, b, e - 1, end - 1);
	uint64_t u = s->ucum[last + 1] - s->ucum[last], w = s->wcum[last + 1] - s->wcum[last];
	return stored + (s->wcum[last] - s->wcum[b]) + (end - s->ucum[last]) * w / u;
}

zn_result zn_reader_entry(struct zn_reader *r, uint64_t i, struct zn_entry *e)
{
	return zn_reader_entry_lost(r, i, e, NULL);
}

zn_result zn_reader_entry_lost(struct zn_reader *r, uint64_t i, struct zn_entry *e, unsigned *lost)
{
	if (!r || !e || i >= r->nentries)
		return ZN_ERR_INVALID_ARG;
	const uint8_t *sha;
	zn_result res = zn_entry_fields(r, i, e, &sha, lost);
	if (res != ZN_OK) {
		if (lost)
			*lost = 0;
		return res;
	}
	if (sha)
		memcpy(e->sha256, sha, 32);
	e->stored_size = stored_size(r, e->first_block, e->block_offset, e->size);
	return ZN_OK;
}

/* String s against path, in the index's order (byte order, shorter first on a common prefix). */
static int cmp_path(const char *s, size_t len, const char *path, size_t path_len)
{
	size_t n = ZN_MIN(len, path_len);
	int c = n ? memcmp(s, path, n) : 0;
	return c ? c : len < path_len ? -1 : len > path_len ? 1 : 0;
}

/* The rows [*lo, *hi) that can hold path, narrowed by the path fence (ZN_FENCE_STEP rows), or
 * left whole where there is none or it cannot be read (a damaged page costs speed, not the
 * lookup). A fence that disagrees with the paths (verify names it) can only make a lookup miss. */
static void fence_narrow(struct zn_reader *r, const char *path, size_t path_len, uint64_t *lo,
                         uint64_t *hi)
{
	if (!r->cols[ZN_COL_FENCE_OFFSETS].present || !r->cols[ZN_COL_FENCE_BYTES].present)
		return;
	/* The last fence row at or before path: rows below it, and from the next one on, are out.
	 */
	uint64_t a = 0, b = (r->nentries + ZN_FENCE_STEP - 1) / ZN_FENCE_STEP;
	while (a < b) {
		uint64_t mid = a + (b - a) / 2;
		const char *s;
		size_t len;
		if (get_str_head(r, ZN_COL_FENCE_OFFSETS, mid, path_len, &s, &len) != ZN_OK)
			return;
		if (cmp_path(s, len, path, path_len) <= 0)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0) { /* before the first path */
		*hi = 0;
		return;
	}
	*lo = (a - 1) * ZN_FENCE_STEP;
	*hi = ZN_MIN(r->nentries, a * ZN_FENCE_STEP);
}

zn_result zn_fence_check(struct zn_reader *r, uint64_t *bad_row)
{
	if (!r->cols[ZN_COL_FENCE_OFFSETS].present && !r->cols[ZN_COL_FENCE_BYTES].present)
		return ZN_OK;
	*bad_row = 0;
	for (uint64_t j = 0; j * ZN_FENCE_STEP < r->nentries; j++) {
		const char *f, *p;
		size_t flen, plen;
		*bad_row = j * ZN_FENCE_STEP;
		RETURN_IF_ERROR(get_str(r, ZN_COL_FENCE_OFFSETS, j, &f, &flen));
		if (get_str(r, ZN_COL_PATH_OFFSETS, j * ZN_FENCE_STEP, &p, &plen) != ZN_OK)
			continue; /* an unreadable row is named as such */
		SAFETY_CHECK(!cmp_path(f, flen, p, plen), ZN_ERR_CORRUPT);
	}
	return ZN_OK;
}

zn_result zn_reader_find(struct zn_reader *r, const char *path, size_t path_len, uint64_t *index)
{
	if (!r || !index || (!path && path_len))
		return ZN_ERR_INVALID_ARG;
	uint64_t lo = 0, hi = r->nentries;
	fence_narrow(r, path, path_len, &lo, &hi);
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const char *s;
		size_t len;
		RETURN_IF_ERROR(get_str_head(r, ZN_COL_PATH_OFFSETS, mid, path_len, &s, &len));
		int c = cmp_path(s, len, path, path_len);
		if (!c) {
			*index = mid;
			return ZN_OK;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ZN_ERR_NOT_FOUND;
}

/* Where the content of entry i lives (itself, or a hardlink's target), touching only the columns
 * random access needs: in a big archive they are raw, so nothing of the index is decoded. */
struct content_loc {
	uint64_t size, first_block, block_offset;
	const uint8_t *sha; /* NULL without digests */
};

static zn_result content_loc(struct zn_reader *r, uint64_t i, struct content_loc *c)
{
	const uint8_t *type = zn_row(r, ZN_COL_TYPE, i);
	SAFETY_CHECK(type, ZN_ERR_CORRUPT);
	if (*type == ZN_TYPE_HARDLINK) {
		const char *link;
		size_t len;
		RETURN_IF_ERROR(get_str(r, ZN_COL_LINK_OFFSETS, i, &link, &len));
		SAFETY_CHECK(len > 0, ZN_ERR_CORRUPT);
		RETURN_IF_ERROR(zn_reader_find(r, link, len, &i));
		type = zn_row(r, ZN_COL_TYPE, i);
		SAFETY_CHECK(type && *type == ZN_TYPE_FILE, ZN_ERR_CORRUPT);
	}
	if (*type != ZN_TYPE_FILE)
		return *type <= ZN_TYPE_HARDLINK ? ZN_ERR_INVALID_ARG : ZN_ERR_CORRUPT;
	const uint8_t *sz = zn_row(r, ZN_COL_SIZE, i), *fb = zn_row(r, ZN_COL_FIRST_BLOCK, i),
	              *bo = zn_row(r, ZN_COL_BLOCK_OFFSET, i);
	SAFETY_CHECK(sz && fb && bo, ZN_ERR_CORRUPT);
	c->size = zn_get_le64(sz);
	c->first_block = zn_get_le32(fb);
	c->block_offset = zn_get_le32(bo);
	c->sha = NULL;
	if (r->digest == ZN_DIGEST_SHA256 && c->size >= r->digest_min_size) {
		c->sha = zn_row(r, ZN_COL_SHA256, i);
		SAFETY_CHECK(c->sha, ZN_ERR_CORRUPT);
	}
	return ZN_OK;
}

/* The reader's own block cache (zn_reader_read_entry, zn_reader_read_range), made on first use. */
static zn_result reader_blocks(struct zn_reader *r)
{
	if (!r->blocks) {
		SAFETY_CHECK(r->blocks = malloc(sizeof(*r->blocks)), ZN_ERR_NOMEM);
		zn_block_cache_init(r->blocks, r, ZN_BCACHE_SLOTS, true);
	}
	return ZN_OK;
}

/* Bytes [skip, skip + left) of the content at e (skip + left <= e->size) to sink, block by block,
 * each block checked; the blocks wholly before the range are passed over, not decoded. With
 * `sha` (the whole file: skip 0, left e->size) the file's SHA-256 is checked too: a file within
 * one block (every small file) is checked whole before it is handed out, by its SHA-256, which
 * is a stronger check of those bytes and saves hashing the whole compressed block (a fifth of a
 * millisecond per MB, most of `cat`'s cost for a file near the start of a block); a longer one
 * is handed out block by block, each block checked first, and its digest compared at the end. */
static zn_result read_content(struct zn_reader *r, const struct content_loc *e, uint64_t skip,
                              uint64_t left, const uint8_t *sha, zn_sink_fn sink, void *ctx)
{
	SHA256_CTX hs;
	uint8_t got[32];
	if (sha)
		SHA256_Init(&hs);
	uint64_t off = e->block_offset, b = e->first_block;
	while (left) {
		struct zn_blockinfo bi;
		RETURN_IF_ERROR(zn_block_info(r, b, &bi));
		SAFETY_CHECK(off < bi.usize, ZN_ERR_CORRUPT);
		if (skip >= bi.usize - off) {
			skip -= bi.usize - off;
			off = 0;
			b++;
			continue;
		}
		off += skip;
		skip = 0;
		uint64_t take = ZN_MIN(bi.usize - off, left);
		const bool digest_first = sha && take == e->size;
		const uint8_t *data;
		RETURN_IF_ERROR(zn_block_get(r, r->blocks, b, &bi, off + take,
		                             digest_first ? ZN_BLOCK_UNCHECKED : ZN_BLOCK_CHECKED,
		                             &data));
		if (sha)
			SHA256_Update(&hs, data + off, take);
		if (digest_first) {
			SHA256_Final(got, &hs);
			SAFETY_CHECK(ZN_SUM_OK(!memcmp(got, sha, 32)), ZN_ERR_CHECKSUM);
			return sink(ctx, data + off, take);
		}
		RETURN_IF_ERROR(sink(ctx, data + off, take));
		left -= take;
		off = 0;
		b++;
	}
	if (sha) {
		SHA256_Final(got, &hs);
		SAFETY_CHECK(ZN_SUM_OK(!memcmp(got, sha, 32)), ZN_ERR_CHECKSUM);
	}
	return ZN_OK;
}

zn_result zn_reader_read_range(struct zn_reader *r, uint64_t i, uint64_t offset, uint64_t length,
                               zn_sink_fn sink, void *ctx)
{
	if (!r || !sink || i >= r->nentries)
		return ZN_ERR_INVALID_ARG;
	struct content_loc e;
	RETURN_IF_ERROR(content_loc(r, i, &e));
	if (offset >= e.size || !length)
		return ZN_OK;
	RETURN_IF_ERROR(reader_blocks(r));
	return read_content(r, &e, offset, ZN_MIN(length, e.size - offset), NULL, sink, ctx);
}

zn_result zn_reader_read_entry(struct zn_reader *r, uint64_t i, zn_sink_fn sink, void *ctx)
{
	if (!r || !sink || i >= r->nentries)
		return ZN_ERR_INVALID_ARG; /* not ZN_ERR_CORRUPT: the archive is fine */
	struct content_loc e;
	RETURN_IF_ERROR(content_loc(r, i, &e));
	/* The blocks of the files read last stay decoded, in whole or as far as they were needed:
	 * files read in their order (extract -O, diff, cat of many paths) cost one decoding of
	 * each block, not one from the block's start for each file (10,000 files of the small
	 * corpus to stdout: 17.7 s before, as many half-block decodings as files). */
	RETURN_IF_ERROR(reader_blocks(r));
	return read_content(r, &e, 0, e.size, e.sha, sink, ctx);
}

/* Rows of non-empty files by extent (block, offset, size), then row number. */
struct extent_cols {
	const uint8_t *fb, *bo, *sz;
};

static void extent_at(const struct extent_cols *c, uint64_t i, uint64_t x[3])
{
	x[0] = zn_get_le32(c->fb + 4 * i);
	x[1] = zn_get_le32(c->bo + 4 * i);
	x[2] = zn_get_le64(c->sz + 8 * i);
}

static int cmp_extents(const void *a, const void *b, void *ctx)
{
	uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b, x[3], y[3];
	extent_at(ctx, i, x);
	extent_at(ctx, j, y);
	for (int k = 0; k < 3; k++)
		if (x[k] != y[k])
			return x[k] < y[k] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Files whose extent an earlier row already has: the rows sorted by extent (a sort, not a hash
 * table, so that no crafted index can make it quadratic). 0 when a column cannot be read or
 * memory is short (for reports only). */
uint64_t zn_reader_copies(struct zn_reader *r, uint8_t *is_copy)
{
	if (!r)
		return 0;
	if (is_copy)
		memset(is_copy, 0, r->nentries);
	struct extent_cols c = {zn_col(r, ZN_COL_FIRST_BLOCK), zn_col(r, ZN_COL_BLOCK_OFFSET),
	                        zn_col(r, ZN_COL_SIZE)};
	const uint8_t *type = zn_col(r, ZN_COL_TYPE);
	if (!type || !c.fb || !c.bo || !c.sz || r->nentries > SIZE_MAX / sizeof(uint64_t))
		return 0;
	uint64_t *rows = malloc((r->nentries ? r->nentries : 1) * sizeof(uint64_t)), m = 0;
	if (!rows)
		return 0;
	for (uint64_t i = 0; i < r->nentries; i++)
		if (type[i] == ZN_TYPE_FILE && zn_get_le64(c.sz + 8 * i))
			rows[m++] = i;
	qsort_r(rows, m, sizeof(uint64_t), cmp_extents, &c);
	uint64_t shared = 0;
	for (uint64_t k = 1; k < m; k++) {
		uint64_t x[3], y[3];
		extent_at(&c, rows[k - 1], x);
		extent_at(&c, rows[k], y);
		if (memcmp(x, y, sizeof(x)))
			continue;
		shared++;
		if (is_copy)
			is_copy[rows[k]] = 1;
	}
	free(rows);
	return shared;
}

void zn_reader_info(struct zn_reader *r, struct zn_archive_info *out)
{
	if (!r || !out)
		return;
	struct zn_archive_info full = {.struct_size = sizeof(full)}, *info = &full;
	info->format_version = r->version;
	info->entries = r->nentries;
	info->blocks = r->nblocks;
	info->content_bytes = r->content_bytes;
	info->archive_bytes = r->map_size;
	info->index_bytes = r->index_size;
	info->chunk_size = r->chunk_size;
	info->level = r->level;
	info->digest = r->digest;
	const uint8_t *type = zn_col(r, ZN_COL_TYPE), *codec = zn_col(r, ZN_COL_BLK_CODEC);
	const uint8_t *size = zn_col(r, ZN_COL_SIZE);
	/* The blocks' stored bytes; when their column is unreadable, the data area
	 * (docs/FORMAT.md), padding included. */
	const uint8_t *csize = zn_col(r, ZN_COL_BLK_CSIZE);
	info->compressed_bytes = csize ? 0 : r->index_offset - ZN_HEADER_SIZE;
	for (uint64_t i = 0; csize && i < r->nblocks; i++)
		info->compressed_bytes += zn_get_le64(csize + 8 * i);
	for (uint64_t i = 0; type && i < r->nentries; i++) {
		info->files += type[i] == ZN_TYPE_FILE;
		info->dirs += type[i] == ZN_TYPE_DIR;
		info->symlinks += type[i] == ZN_TYPE_SYMLINK;
		info->hardlinks += type[i] == ZN_TYPE_HARDLINK;
		uint64_t n = size && type[i] == ZN_TYPE_FILE ? zn_get_le64(size + 8 * i) : 0;
		info->expanded_bytes = n > UINT64_MAX - info->expanded_bytes
		                               ? UINT64_MAX
		                               : info->expanded_bytes + n;
	}
	for (uint64_t i = 0; codec && i < r->nblocks; i++)
		info->stored_blocks += codec[i] == ZN_BLOCK_STORED;
	info->shared_files = zn_reader_copies(r, NULL);
	zn_sized_out(out, &full, sizeof(full), ZN_FIRST_SIZE_archive_info);
}
