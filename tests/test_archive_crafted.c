/* SPDX-License-Identifier: MIT */
/* test_archive_crafted.c - indexes that pass every checksum but lie about the layout: files
 * spanning blocks whose extents overlap without being the same (which would make the extraction
 * plan grow as files x blocks) and an entry count far beyond what the index's size can hold
 * (which would make readers allocate a record for each of millions of entries from a few KB).
 * Both are refused up front. Files sharing the very same extent (identical files stored once)
 * are fine, however many, and a copy whose digest is not its bytes' is named as damaged. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive/archive_format.h"
#include "archive/archive_internal.h"
#include "common/common.h"
#include "common/sha256.h"
#include "test_util.h"
#include "common/xxh3.h"

static char *dir;

/* Writes header, the data area, the index built from rows and blocks, its page checksums and
 * the footer, all consistent. */
static uint8_t layout; /* ZN_IX_WHOLE: the index as dense as it can be, no column in pages */
static char *write_index(const char *name, const uint8_t *ix, size_t ixl, uint64_t n, uint64_t nb,
                         const uint8_t *data, size_t data_len);

static char *write_archive(const char *name, const struct zn_index_row *rows, uint64_t n,
                           const struct zn_blockinfo *blocks, uint64_t nb, const uint8_t *data,
                           size_t data_len)
{
	uint64_t content = 0;
	for (uint64_t i = 0; i < n; i++)
		content += rows[i].size;
	int digest = n && rows[0].sha ? ZN_DIGEST_SHA256 : ZN_DIGEST_NONE;
	struct zn_index_input in = {rows, n,    blocks, nb, 64 << 10, content, 3,   digest,
	                            NULL, NULL, layout, 0,  0,        0,       NULL};
	uint8_t *ix;
	size_t ixl;
	CHECK_OK(zn_index_build(&in, &ix, &ixl));
	char *path = write_index(name, ix, ixl, n, nb, data, data_len);
	free(ix);
	return path;
}

/* The same around an index given as bytes. */
static char *write_index(const char *name, const uint8_t *ix, size_t ixl, uint64_t n, uint64_t nb,
                         const uint8_t *data, size_t data_len)
{
	uint64_t npages = (ixl + ZN_IX_PAGE - 1) / ZN_IX_PAGE;
	size_t len = ZN_HEADER_SIZE + data_len + ixl + npages * 8 + ZN_FOOTER_SIZE;
	uint8_t *a = calloc(1, len), *p = a;
	CHECK(a);
	memcpy(p, ZN_MAGIC, ZN_MAGIC_LEN);
	zn_put_le32(p + 8, ZN_FORMAT_VERSION);
	p += ZN_HEADER_SIZE;
	if (data_len)
		memcpy(p, data, data_len);
	p += data_len;
	uint64_t ioff = (uint64_t)(p - a);
	memcpy(p, ix, ixl);
	p += ixl;
	uint8_t *sums = p;
	for (uint64_t pg = 0; pg < npages; pg++) {
		size_t plen = ZN_MIN((size_t)ZN_IX_PAGE, ixl - pg * ZN_IX_PAGE);
		zn_put_le64(p, zn_xxh3(ix + pg * ZN_IX_PAGE, plen));
		p += 8;
	}
	zn_put_le64(p, ioff);
	zn_put_le64(p + 8, ixl);
	zn_put_le64(p + 16, zn_xxh3(sums, npages * 8));
	zn_put_le64(p + 24, n);
	zn_put_le64(p + 32, nb);
	zn_put_le32(p + 40, ZN_FORMAT_VERSION);
	zn_put_le64(p + 48, zn_xxh3(p, 48));
	memcpy(p + 56, ZN_FOOTER_MAGIC, 8);
	char *path = tu_str("%s/%s", dir, name);
	CHECK(tu_write_file(path, a, len) == 0);
	free(a);
	return path;
}

static struct zn_index_row file_row(const char *path, uint64_t size)
{
	struct zn_index_row r = {.path = path, .type = ZN_TYPE_FILE, .mode = 0644, .size = size};
	r.path_len = strlen(path);
	r.uname = r.gname = "";
	return r;
}

static int problems;
static void count_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx, (void)path, (void)r, (void)what;
	problems++;
}

/* Column `id`'s directory record in an index, or NULL. */
static uint8_t *col_record(uint8_t *ix, int id)
{
	uint32_t ncols = zn_get_le32(ix + 4);
	for (uint32_t i = 0; i < ncols; i++) {
		uint8_t *d = ix + ZN_INDEX_HEADER_SIZE + (size_t)i * ZN_COLDIR_SIZE;
		if (zn_get_le32(d) == (uint32_t)id)
			return d;
	}
	return NULL;
}

/* The index of n empty files, row i named by fmt with i (into names, width bytes each), its
 * columns stored as `how` says (a ZN_IX_*). */
static void empty_files_index(int n, char *names, size_t width, const char *fmt, uint8_t how,
                              uint8_t **ix, size_t *ixl)
{
	struct zn_index_row *rows = calloc((size_t)n, sizeof(*rows));
	CHECK(rows);
	for (int i = 0; i < n; i++) {
		snprintf(names + (size_t)i * width, width, fmt, i);
		rows[i] = file_row(names + (size_t)i * width, 0);
	}
	struct zn_index_input in = {rows, (uint64_t)n, NULL, 0, 64 << 10, 0, 3,   ZN_DIGEST_NONE,
	                            NULL, NULL,        how,  0, 0,        0, NULL};
	CHECK_OK(zn_index_build(&in, ix, ixl));
	free(rows);
}

static uint64_t bits_set(const _Atomic uint64_t *bits, uint64_t words)
{
	uint64_t n = 0;
	for (uint64_t i = 0; bits && i < words; i++)
		n += (uint64_t)__builtin_popcountll(atomic_load(&bits[i]));
	return n;
}

/* Pages of a paged column decoded so far. */
static uint64_t pages_decoded(struct zn_reader *r, int id)
{
	struct zn_column *c = &r->cols[id];
	uint64_t n = (c->raw_size + (1u << c->page_log) - 1) >> c->page_log;
	return bits_set(atomic_load(&c->pages), (n + 63) / 64);
}

/* 3. Paged columns: the writer pages the lookup columns; a lookup decodes a few pages; a page
 * that fails (its checksum, or its frame though the checksum holds) costs only its own rows,
 * and a page table or page size that is out of range is refused. */
static void paged_columns(void)
{
	enum { N = 3000 };
	static char names[N][24];
	uint8_t *ix;
	size_t ixl;
	empty_files_index(N, (char *)names, sizeof(names[0]), "dir/file-%05d.txt", ZN_IX_CHOSEN,
	                  &ix, &ixl);
	uint8_t *d = col_record(ix, ZN_COL_PATH_BYTES);
	CHECK(d && d[4] == ZN_COL_PAGED && d[5] == ZN_COL_PAGE_LOG);
	const uint64_t raw = zn_get_le64(d + 24), page = 1u << ZN_COL_PAGE_LOG;
	const uint64_t npages = (raw + page - 1) / page;
	CHECK(npages >= 10);
	char *good = write_index("paged.zn", ix, ixl, N, 0, NULL, 0);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, good, NULL, 0));
	uint64_t at;
	CHECK_OK(zn_reader_find(r, names[1234], strlen(names[1234]), &at));
	CHECK(at == 1234);
	/* A binary search over 3,000 paths: at most a dozen probes, each in one or two pages. */
	CHECK(pages_decoded(r, ZN_COL_PATH_BYTES) <= 16 &&
	      pages_decoded(r, ZN_COL_PATH_BYTES) < npages);
	CHECK(pages_decoded(r, ZN_COL_SIZE) == 0);
	struct zn_entry e;
	CHECK_OK(zn_reader_entry(r, at, &e));
	CHECK(pages_decoded(r, ZN_COL_SIZE) == 1 && pages_decoded(r, ZN_COL_TYPE) == 1);
	for (int i = 0; i < N; i += 7) {
		CHECK_OK(zn_reader_find(r, names[i], strlen(names[i]), &at));
		CHECK(at == (uint64_t)i);
	}
	CHECK_OK(zn_verify(r, 2, NULL)); /* two threads decoding pages at once */
	CHECK(pages_decoded(r, ZN_COL_PATH_BYTES) == npages);
	zn_reader_free(r);

	/* Page 5 of the paths damaged: as an index page that fails its checksum, and as a frame
	 * that passes it but does not decode (its magic gone). */
	const uint64_t coff = zn_get_le64(d + 8);
	const uint64_t from = zn_get_le64(ix + coff + 5 * 8);
	for (int kind = 0; kind < 2; kind++) {
		uint8_t *bad = malloc(ixl);
		CHECK(bad);
		memcpy(bad, ix, ixl);
		bad[coff + from] ^= 0x40;
		char *name = tu_str("paged-bad-%d.zn", kind);
		char *a = write_index(name, bad, ixl, N, 0, NULL, 0);
		if (kind == 0) { /* the checksums of the sound index */
			struct stat st;
			CHECK(stat(good, &st) == 0);
			size_t n;
			uint8_t *arch = tu_read_file(a, &n), *sums = tu_read_file(good, &n);
			CHECK(arch && sums && n == (size_t)st.st_size);
			memcpy(arch + n - ZN_FOOTER_SIZE -
			               ((ixl + ZN_IX_PAGE - 1) / ZN_IX_PAGE) * 8,
			       sums + n - ZN_FOOTER_SIZE -
			               ((ixl + ZN_IX_PAGE - 1) / ZN_IX_PAGE) * 8,
			       ((ixl + ZN_IX_PAGE - 1) / ZN_IX_PAGE) * 8 + ZN_FOOTER_SIZE);
			CHECK(tu_write_file(a, arch, n) == 0);
			free(arch);
			free(sums);
		}
		CHECK_OK(zn_reader_open(&r, a, NULL, 0));
		/* Every row is read right or refused. The crafted frame costs exactly page 5's
		 * rows; a failed checksum costs whatever shares those 4 KiB of index (in an index
		 * this small, whole columns every row needs). */
		int lost = 0, in_page5 = 0;
		for (int i = 0; i < N; i++) {
			uint64_t lo = (uint64_t)i * strlen(names[0]), hi = lo + strlen(names[i]);
			bool p5 = hi > 5 * page && lo < 6 * page;
			zn_result res = zn_reader_entry(r, (uint64_t)i, &e);
			in_page5 += p5;
			CHECK(res == ZN_OK || res == ZN_ERR_CORRUPT);
			CHECK(res == ZN_OK || p5 || kind == 0);
			CHECK(res != ZN_OK || !p5);
			if (res == ZN_OK)
				CHECK(e.path_len == strlen(names[i]) &&
				      !memcmp(e.path, names[i], e.path_len));
			lost += res != ZN_OK;
		}
		CHECK(in_page5 > 200 && lost >= in_page5 && (kind == 0 || lost == in_page5));
		CHECK(zn_col(r, ZN_COL_PATH_BYTES) == NULL);
		problems = 0; /* each unreadable row named once, none twice as a damaged file */
		CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}) != ZN_OK);
		CHECK(problems == lost + (kind == 0)); /* kind 0: and the index page itself */
		zn_reader_free(r);
		free(bad);
	}

	/* A page table entry beyond the column: that page's rows only. A page size out of range,
	 * or a table longer than the column: refused at open. */
	uint8_t *bad = malloc(ixl);
	CHECK(bad);
	memcpy(bad, ix, ixl);
	zn_put_le64(bad + coff + 3 * 8, zn_get_le64(d + 16) + 1);
	char *a = write_index("paged-table.zn", bad, ixl, N, 0, NULL, 0);
	CHECK_OK(zn_reader_open(&r, a, NULL, 0));
	CHECK(zn_reader_entry(r, 0, &e) == ZN_OK);
	CHECK(zn_reader_entry(r, 3 * page / strlen(names[0]) + 1, &e) == ZN_ERR_CORRUPT);
	zn_reader_free(r);
	const int page_logs[] = {ZN_COL_PAGE_LOG_MIN - 1, ZN_COL_PAGE_LOG_MAX + 1, 0};
	for (int k = 0; k < 5; k++) {
		memcpy(bad, ix, ixl);
		uint8_t *bd = col_record(bad, ZN_COL_PATH_BYTES);
		if (k < 3)
			bd[5] = (uint8_t)page_logs[k];
		else if (k == 3) /* 4 KiB of raw bytes per 8-byte table entry: too many pages */
			zn_put_le64(bd + 24, zn_get_le64(bd + 16) / 8 * page);
		else /* a page size on a column that is not paged */
			col_record(bad, ZN_COL_MODE)[5] = ZN_COL_PAGE_LOG;
		char err[256] = "";
		a = write_index("paged-shape.zn", bad, ixl, N, 0, NULL, 0);
		CHECK(zn_reader_open(&r, a, err, sizeof(err)) == ZN_ERR_CORRUPT);
		CHECK(strstr(err, "bad size or codec"));
	}
	free(bad);
	free(ix);
}

/* 3b. The path fence: written past ZN_FENCE_STEP entries, raw; a lookup searches it first and
 * then one stretch of ZN_FENCE_STEP rows, so it decodes two or three pages of paths, not a dozen;
 * every path is found, and paths between, before and after them are not. A fence that disagrees
 * with the paths can only make a lookup miss, and verify names it. */
static void fence_lookups(void)
{
	enum { N = 3000 };
	static char names[N][24];
	uint8_t *ix;
	size_t ixl;
	empty_files_index(ZN_FENCE_STEP, (char *)names, sizeof(names[0]), "dir/file-%05d.txt",
	                  ZN_IX_CHOSEN, &ix, &ixl);
	CHECK(!col_record(ix, ZN_COL_FENCE_OFFSETS) && !col_record(ix, ZN_COL_FENCE_BYTES));
	free(ix);
	empty_files_index(N, (char *)names, sizeof(names[0]), "dir/file-%05d.txt", ZN_IX_CHOSEN,
	                  &ix, &ixl);
	uint8_t *fo = col_record(ix, ZN_COL_FENCE_OFFSETS),
	        *fb = col_record(ix, ZN_COL_FENCE_BYTES);
	CHECK(fo && fb && fo[4] == ZN_COL_RAW && fb[4] == ZN_COL_RAW);
	const uint64_t fence_rows = (N + ZN_FENCE_STEP - 1) / ZN_FENCE_STEP;
	CHECK(zn_get_le64(fo + 24) == (fence_rows + 1) * 8);
	char *good = write_index("fence.zn", ix, ixl, N, 0, NULL, 0);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, good, NULL, 0));
	uint64_t at;
	CHECK_OK(zn_reader_find(r, names[1234], strlen(names[1234]), &at));
	CHECK(at == 1234);
	CHECK(pages_decoded(r, ZN_COL_PATH_BYTES) <= 3 &&
	      pages_decoded(r, ZN_COL_PATH_OFFSETS) <= 2);
	for (int i = 0; i < N; i++) {
		CHECK_OK(zn_reader_find(r, names[i], strlen(names[i]), &at));
		CHECK(at == (uint64_t)i);
		char between[32];
		snprintf(between, sizeof(between), "%s~", names[i]);
		CHECK(zn_reader_find(r, between, strlen(between), &at) == ZN_ERR_NOT_FOUND);
	}
	CHECK(zn_reader_find(r, "a", 1, &at) == ZN_ERR_NOT_FOUND);
	CHECK(zn_reader_find(r, "", 0, &at) == ZN_ERR_NOT_FOUND);
	CHECK(zn_reader_find(r, "zzz", 3, &at) == ZN_ERR_NOT_FOUND);
	CHECK_OK(zn_verify(r, 2, NULL));
	zn_reader_free(r);

	/* Fence row 3 (the path of row 768) changed, its checksums recomputed. */
	uint8_t *bad = malloc(ixl);
	CHECK(bad);
	memcpy(bad, ix, ixl);
	const uint64_t boff = zn_get_le64(col_record(bad, ZN_COL_FENCE_BYTES) + 8),
	               ooff = zn_get_le64(col_record(bad, ZN_COL_FENCE_OFFSETS) + 8);
	bad[boff + zn_get_le64(bad + ooff + 3 * 8) + 10] ^= 1; /* in "file-00768" */
	char *a = write_index("fence-bad.zn", bad, ixl, N, 0, NULL, 0);
	CHECK_OK(zn_reader_open(&r, a, NULL, 0));
	for (int i = 0; i < N; i++) { /* right or missed, never another row */
		zn_result res = zn_reader_find(r, names[i], strlen(names[i]), &at);
		CHECK(res == ZN_ERR_NOT_FOUND || (res == ZN_OK && at == (uint64_t)i));
	}
	problems = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}) != ZN_OK);
	CHECK(problems == 1);
	zn_reader_free(r);
	free(bad);
	free(ix);
}

/* 4. Offsets that go back: 0, R, 0, R, ... make every other path the whole bytes column, so a
 * scan of all rows would read rows x R bytes. Reading rows one after another refuses them; a
 * lookup still answers without reading more than a few strings. */
static void offsets_back(void)
{
	enum { N = 64 };
	static char names[N][8];
	uint8_t *ix;
	size_t ixl;
	empty_files_index(N, (char *)names, sizeof(names[0]), "p%02d", ZN_IX_RAW, &ix, &ixl);
	uint8_t *d = col_record(ix, ZN_COL_PATH_OFFSETS);
	CHECK(d && d[4] == ZN_COL_RAW);
	const uint64_t off = zn_get_le64(d + 8), total = 3 * N;
	for (int i = 1; i < N; i++)
		zn_put_le64(ix + off + 8 * (uint64_t)i, i % 2 ? total : 0);
	char *a = write_index("back.zn", ix, ixl, N, 0, NULL, 0);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, a, NULL, 0));
	struct zn_entry e;
	for (int i = 0; i < N; i++)
		CHECK(zn_reader_entry(r, (uint64_t)i, &e) == ZN_ERR_CORRUPT);
	uint64_t at;
	zn_result res = zn_reader_find(r, "p00", 3, &at);
	CHECK(res == ZN_ERR_NOT_FOUND || res == ZN_ERR_CORRUPT);
	problems = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}) != ZN_OK);
	CHECK(problems == N);
	zn_reader_free(r);
	free(ix);
}

/* Columns this reader does not know are ignored whatever their records say (a later writer's,
 * with a codec and bounds of its own), and a known one twice is still refused. */
static void unknown_columns(void)
{
	enum { N = 300 }; /* more than 256 entries: the index has a path fence (18, 19) */
	static char names[N][8];
	uint8_t *ix;
	size_t ixl;
	empty_files_index(N, (char *)names, sizeof(names[0]), "p%03d", ZN_IX_CHOSEN, &ix, &ixl);
	uint8_t *f1 = col_record(ix, ZN_COL_FENCE_OFFSETS),
	        *f2 = col_record(ix, ZN_COL_FENCE_BYTES);
	CHECK(f1 && f2);
	zn_put_le32(f1, 30); /* no column of this reader */
	f1[4] = 5;
	zn_put_le32(f2, ZN_COL_MAX_ID);
	zn_put_le64(f2 + 8, UINT64_MAX);
	char *a = write_index("unknown.zn", ix, ixl, N, 0, NULL, 0);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, a, NULL, 0));
	uint64_t at;
	CHECK_OK(zn_reader_find(r, "p123", 4, &at));
	CHECK(at == 123);
	CHECK_OK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}));
	zn_reader_free(r);
	zn_put_le32(f1, ZN_COL_TYPE);
	a = write_index("twice.zn", ix, ixl, N, 0, NULL, 0);
	CHECK(zn_reader_open(&r, a, NULL, 0) == ZN_ERR_CORRUPT);
	free(ix);
}

/* Damage in an index page that holds only the mtime column costs those rows their times alone:
 * each is named by its path (not by its number), by verify and by extract, which still extracts
 * it, with the time of the extraction, and every other file with its own time. */
static int by_path, by_number;
static void name_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx, (void)r, (void)what;
	if (!strncmp(path, "entry ", 6))
		by_number++;
	else if (!strncmp(path, "dir/", 4))
		by_path++;
}

static void damaged_metadata(void)
{
	enum { N = 3000 };
	static char names[N][24];
	static struct zn_index_row rows[N];
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "dir/file-%05d.txt", i);
		rows[i] = file_row(names[i], 0);
		rows[i].mtime_ns = (int64_t)((uint64_t)i * 0x9E3779B97F4A7C15ull >> 2);
	}
	struct zn_index_input in = {rows, N,    NULL,         0, 64 << 10, 0, 3,   ZN_DIGEST_NONE,
	                            NULL, NULL, ZN_IX_CHOSEN, 0, 0,        0, NULL};
	uint8_t *ix;
	size_t ixl;
	CHECK_OK(zn_index_build(&in, &ix, &ixl));
	uint8_t *d = col_record(ix, ZN_COL_MTIME_NS);
	CHECK(d);
	/* A whole index page within the column's stored bytes. */
	const uint64_t off = zn_get_le64(d + 8), end = off + zn_get_le64(d + 16);
	const uint64_t page = (off + ZN_IX_PAGE - 1) / ZN_IX_PAGE;
	CHECK(page > 0 && (page + 1) * ZN_IX_PAGE <= end);
	char *a = write_index("meta.zn", ix, ixl, N, 0, NULL, 0);
	size_t len;
	uint8_t *bytes = tu_read_file(a, &len);
	CHECK(bytes);
	bytes[ZN_HEADER_SIZE + page * ZN_IX_PAGE + 100] ^= 1;
	CHECK(tu_write_file(a, bytes, len) == 0);
	free(bytes);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, a, NULL, 0));
	by_path = by_number = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = name_problem}) == ZN_ERR_DAMAGED);
	const int named = by_path;
	CHECK(named > 0 && named < N && by_number == 0);
	char *out = tu_str("%s/meta-out", dir);
	const time_t before = time(NULL);
	by_path = by_number = 0;
	CHECK(zn_extract(r, out, NULL, NULL, &(struct zn_hooks){.problem = name_problem}) ==
	      ZN_ERR_DAMAGED);
	CHECK(by_path == named && by_number == 0);
	int new_times = 0;
	for (int i = 0; i < N; i++) {
		struct stat st;
		CHECK(lstat(tu_str("%s/%s", out, names[i]), &st) == 0 && S_ISREG(st.st_mode) &&
		      (st.st_mode & 0777) == 0644);
		if ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec !=
		    rows[i].mtime_ns) {
			CHECK(st.st_mtime >= before && st.st_mtime <= time(NULL));
			new_times++;
		}
	}
	CHECK(new_times == named);
	zn_reader_free(r);
	free(ix);
}

/* Rows the writer never makes are damage, named once each by verify and by extract, which
 * makes nothing of them and everything else: a row out of order, a path twice, a path below a
 * symlink (extract used to make a directory there and then refuse the symlink with "File
 * exists"), and a symlink target no file system holds. */
static void unsound_rows(const char *name, struct zn_index_row *rows, int n, int damaged,
                         const char *absent, const char *present)
{
	char *a = write_archive(name, rows, (uint64_t)n, NULL, 0, NULL, 0);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, a, NULL, 0));
	problems = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}) == ZN_ERR_DAMAGED);
	CHECK(problems == damaged);
	char *out = tu_str("%s/%s-out", dir, name);
	problems = 0;
	CHECK(zn_extract(r, out, NULL, NULL, &(struct zn_hooks){.problem = count_problem}) ==
	      ZN_ERR_DAMAGED);
	CHECK(problems == damaged);
	struct stat st;
	CHECK(!absent || (lstat(tu_str("%s/%s", out, absent), &st) != 0 && errno == ENOENT));
	CHECK(lstat(tu_str("%s/%s", out, present), &st) == 0);
	zn_reader_free(r);
}

static void unsound(void)
{
	struct zn_index_row order[4] = {file_row("a", 0), file_row("c", 0), file_row("b", 0),
	                                file_row("d", 0)};
	unsound_rows("order.zn", order, 4, 1, "b", "d");
	struct zn_index_row twice[3] = {file_row("a", 0), file_row("b", 0), file_row("b", 0)};
	twice[2].mode = 0600;
	unsound_rows("twice.zn", twice, 3, 1, NULL, "b");
	struct stat st;
	CHECK(lstat(tu_str("%s/twice.zn-out/b", dir), &st) == 0 && (st.st_mode & 0777) == 0644);
	struct zn_index_row below[5] = {file_row("x", 0), file_row("x-1", 0),
	                                file_row("x/deep/f", 0), file_row("x/evil", 0),
	                                file_row("y", 0)};
	below[0].type = ZN_TYPE_SYMLINK;
	below[0].link = "t";
	below[0].link_len = 1;
	unsound_rows("below.zn", below, 5, 2, "x/evil", "x");
	char buf[8];
	CHECK(readlink(tu_str("%s/below.zn-out/x", dir), buf, sizeof(buf)) == 1 && buf[0] == 't');
	/* A symlink whose target is empty or holds a NUL byte: not a link cut at the NUL, nor a
	 * misleading "File exists"; a good symlink beside them is extracted. */
	struct zn_index_row links[3];
	const char *names[3] = {"l0", "l1", "l2"}, *targets[3] = {"ab\0cd", "", "target"};
	const size_t lens[3] = {5, 0, 6};
	for (int i = 0; i < 3; i++) {
		links[i] = file_row(names[i], 0);
		links[i].type = ZN_TYPE_SYMLINK;
		links[i].mode = 0777;
		links[i].link = targets[i];
		links[i].link_len = lens[i];
	}
	unsound_rows("symlinks.zn", links, 3, 2, "l0", "l2");
	CHECK(lstat(tu_str("%s/symlinks.zn-out/l1", dir), &st) != 0);
	CHECK(readlink(tu_str("%s/symlinks.zn-out/l2", dir), buf, sizeof(buf)) == 6 &&
	      !memcmp(buf, "target", 6));
}

/* A lookup compares a probed path only as far as the path it looks for: a crafted 1 MiB path in
 * the row every search probes first once made each lookup (one per hardlink in verify and
 * extract) walk all of that path's pages. */
static void long_probe(void)
{
	enum { LONG = 1 << 20 };
	char *mid = malloc(LONG + 1);
	CHECK(mid);
	mid[0] = 'm';
	memset(mid + 1, 'z', LONG - 1);
	mid[LONG] = 0;
	struct zn_index_row rows[3] = {file_row("a", 0), file_row(mid, 0), file_row("zz", 0)};
	char *a = write_archive("long-probe.zn", rows, 3, NULL, 0, NULL, 0);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, a, NULL, 0));
	const struct zn_column *c = &r->cols[ZN_COL_PATH_BYTES];
	CHECK(c->codec == ZN_COL_PAGED && (c->raw_size >> c->page_log) >= 8);
	uint64_t at;
	CHECK_OK(zn_reader_find(r, "a", 1, &at));
	CHECK(at == 0);
	CHECK_OK(zn_reader_find(r, "zz", 2, &at));
	CHECK(at == 2);
	CHECK(pages_decoded(r, ZN_COL_PATH_BYTES) <= 3);
	CHECK_OK(zn_reader_find(r, mid, LONG, &at)); /* found whole, all of it compared */
	CHECK(at == 1);
	zn_reader_free(r);
	free(mid);
}

/* Stored sizes of entries over many blocks: each entry's share of every block it touches, as far
 * as its blocks go (an empty block ends it), as this walk computes it block by block. */
static uint64_t ref_stored(const struct zn_blockinfo *bl, uint64_t nb, uint64_t fb, uint64_t off,
                           uint64_t size)
{
	uint64_t st = 0;
	for (uint64_t b = fb; size && b < nb && off < bl[b].usize; b++, off = 0) {
		uint64_t in = ZN_MIN(size, bl[b].usize - off);
		st += in * bl[b].csize / bl[b].usize;
		size -= in;
	}
	return st;
}

/* 65,536 entries over 2^18 tiny blocks, a quarter of them claiming 2^62 bytes: the reader once
 * walked every block for each (hours for `list` of a 1 MB archive); each size must still be the
 * walk's. The others end within a block, within the blocks walked directly, or past them. */
static void stored_sizes(void)
{
	enum { NB = 1 << 18, NE = 1 << 16, EMPTY = 150000 };
	struct zn_blockinfo *bl = calloc(NB, sizeof(*bl));
	struct zn_index_row *rows = calloc(NE, sizeof(*rows));
	char *names = malloc((size_t)NE * 8);
	uint8_t *data = calloc(NB, 1); /* every block takes a byte of the data area, at least */
	CHECK(bl && rows && names && data);
	for (uint64_t b = 0; b < NB; b++)
		bl[b] = (struct zn_blockinfo){.offset = ZN_HEADER_SIZE + b % 1024,
		                              .csize = 1 + b % 13,
		                              .usize = b == EMPTY ? 0 : 20 + b % 17,
		                              .codec = ZN_BLOCK_ZSTD};
	static const uint64_t huge_at[4] = {0, EMPTY - 10, EMPTY + 1, NB - 100};
	uint64_t want_huge[4];
	for (int h = 0; h < 4; h++)
		want_huge[h] = ref_stored(bl, NB, huge_at[h], 0, UINT64_C(1) << 62);
	CHECK(want_huge[0] > 500000 && want_huge[2] > 500000);
	for (uint64_t k = 0; k < NE; k++) {
		snprintf(names + k * 8, 8, "f%05llu", (unsigned long long)k);
		rows[k] = file_row(names + k * 8, 0);
		uint64_t fb = (k * 7919) % NB;
		switch (k % 4) {
		case 0:
			rows[k].first_block = huge_at[k / 4 % 4], rows[k].size = UINT64_C(1) << 62;
			break;
		case 1:
			rows[k].first_block = fb, rows[k].block_offset = k % 5,
			rows[k].size = 500 + k % 3000;
			break;
		case 2:
			rows[k].first_block = fb, rows[k].block_offset = 3, rows[k].size = 5;
			break;
		default:
			break;
		}
	}
	char *a = write_archive("stored.zn", rows, NE, bl, NB, data, NB);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, a, NULL, 0));
	for (uint64_t k = 0; k < NE; k++) {
		struct zn_entry e;
		CHECK_OK(zn_reader_entry(r, k, &e));
		uint64_t want = k % 4 == 0 ? want_huge[k / 4 % 4]
		                           : ref_stored(bl, NB, rows[k].first_block,
		                                        rows[k].block_offset, rows[k].size);
		CHECK(e.stored_size == want);
	}
	zn_reader_free(r);
	free(data);
	free(names);
	free(rows);
	free(bl);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_crafted");
	dir = tu_mkdtemp();

	/* 1. Overlap: two stored 4 KiB blocks; file a spans both, b claims all but its first
	 * 100 bytes. */
	enum { U = 4096 };
	uint8_t data[2 * U];
	memset(data, 'x', sizeof(data));
	struct zn_blockinfo blk = {
	        .offset = ZN_HEADER_SIZE, .csize = U, .usize = U, .codec = ZN_BLOCK_STORED};
	blk.xxh3 = blk.cxxh3 = zn_xxh3(data, U);
	struct zn_blockinfo two[2] = {blk, blk};
	two[1].offset += U;
	struct zn_index_row rows[2] = {file_row("a", 2 * U), file_row("b", 2 * U - 100)};
	rows[1].block_offset = 100;
	char *a1 = write_archive("overlap.zn", rows, 2, two, 2, data, sizeof(data));
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, a1, NULL, 0));
	problems = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}) == ZN_ERR_CORRUPT);
	CHECK(problems == 1);
	char *out = tu_str("%s/out", dir);
	CHECK(zn_extract(r, out, NULL, NULL, NULL) == ZN_ERR_CORRUPT);
	char *fa = tu_str("%s/a", out);
	struct stat st;
	CHECK(lstat(fa, &st) != 0); /* nothing was extracted */
	zn_reader_free(r);
	/* The directories were made before the plan found the overlap: they still get their
	 * modes and times. */
	struct zn_index_row rows3[3] = {rows[0], rows[1], file_row("d", 0)};
	rows3[2].type = ZN_TYPE_DIR;
	rows3[2].mode = 0555;
	rows3[2].mtime_ns = 1000000000LL * 1234567;
	char *ad = write_archive("overlap-dir.zn", rows3, 3, two, 2, data, sizeof(data));
	CHECK_OK(zn_reader_open(&r, ad, NULL, 0));
	char *outd = tu_str("%s/outd", dir), *d3 = tu_str("%s/outd/d", dir);
	CHECK(zn_extract(r, outd, NULL, NULL, NULL) == ZN_ERR_CORRUPT);
	CHECK(lstat(d3, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0555 &&
	      st.st_mtime == 1234567);
	zn_reader_free(r);
	/* Many files spanning both blocks with the very same extent are one set of pieces: each
	 * is written from the same decoded bytes. With digests, a copy whose digest is not that
	 * of the bytes is damaged, and only it. */
	enum { NSAME = 1000 };
	static struct zn_index_row same[NSAME];
	uint8_t good[32], wrong[32];
	zn_sha256(data, sizeof(data), good);
	memcpy(wrong, good, 32);
	wrong[7] ^= 1;
	for (int k = 0; k < NSAME; k++) {
		same[k] = file_row(tu_fmt("f%04d", k), 2 * U);
		same[k].sha = k == 500 ? wrong : good;
	}
	char *a7 = write_archive("same.zn", same, NSAME, two, 2, data, sizeof(data));
	CHECK_OK(zn_reader_open(&r, a7, NULL, 0));
	problems = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}) == ZN_ERR_DAMAGED);
	CHECK(problems == 1);
	char *out7 = tu_str("%s/out7", dir);
	struct zn_extract_options xo;
	zn_extract_options_init(&xo);
	xo.check_digest = 1;
	xo.threads = 3;
	problems = 0;
	CHECK(zn_extract(r, out7, NULL, &xo, &(struct zn_hooks){.problem = count_problem}) ==
	      ZN_ERR_DAMAGED);
	CHECK(problems == 1);
	for (int k = 0; k < NSAME; k++) {
		size_t n;
		uint8_t *got = tu_read_file(tu_str("%s/f%04d", out7, k), &n);
		CHECK(k == 500 ? !got : got && n == sizeof(data) && !memcmp(got, data, n));
		free(got);
	}
	zn_reader_free(r);
	/* With the second block damaged, every one of them is named (and the block, once), none
	 * is left behind, and without --check-digest too (the copies never get the missing
	 * piece). */
	uint8_t bad_data[2 * U];
	memcpy(bad_data, data, sizeof(bad_data));
	bad_data[U + 7] ^= 1;
	char *a8 = write_archive("same-damaged.zn", same, NSAME, two, 2, bad_data, sizeof(data));
	CHECK_OK(zn_reader_open(&r, a8, NULL, 0));
	problems = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}) == ZN_ERR_DAMAGED);
	CHECK(problems == NSAME + 1);
	for (int check = 0; check < 2; check++) {
		char *out8 = tu_str("%s/out8-%d", dir, check);
		xo.check_digest = check;
		problems = 0;
		CHECK(zn_extract(r, out8, NULL, &xo,
		                 &(struct zn_hooks){.problem = count_problem}) == ZN_ERR_DAMAGED);
		CHECK(problems == NSAME + 1);
		for (int k = 0; k < NSAME; k++)
			CHECK(lstat(tu_str("%s/f%04d", out8, k), &st) != 0);
	}
	for (int k = 0; k < NSAME; k++)
		free((char *)same[k].path);
	zn_reader_free(r);
	/* The same files one after the other are fine. */
	rows[0].size = rows[1].size = U;
	rows[1].first_block = 1;
	rows[1].block_offset = 0;
	char *a2 = write_archive("fine.zn", rows, 2, two, 2, data, sizeof(data));
	CHECK_OK(zn_reader_open(&r, a2, NULL, 0));
	CHECK_OK(zn_verify(r, 2, NULL));
	zn_reader_free(r);
	/* So are files within one block sharing bytes (identical files stored once): each is
	 * one piece of at most a block, so the output stays within entries x chunk size. */
	rows[1].first_block = 0;
	char *a3 = write_archive("shared.zn", rows, 2, &blk, 1, data, U);
	CHECK_OK(zn_reader_open(&r, a3, NULL, 0));
	CHECK_OK(zn_verify(r, 2, NULL));
	char *out3 = tu_str("%s/out3", dir);
	CHECK_OK(zn_extract(r, out3, NULL, NULL, NULL));
	for (int f = 0; f < 2; f++) {
		size_t n;
		uint8_t *got = tu_read_file(tu_str("%s/%c", out3, 'a' + f), &n);
		CHECK(got && n == U && !memcmp(got, data, U));
		free(got);
	}
	zn_reader_free(r);
	/* But not files that overlap without sharing the same extent: in one block, or a file of
	 * one block inside the bytes of a file spanning two. */
	rows[1].block_offset = 100;
	rows[1].size = 100;
	char *a5 = write_archive("partial.zn", rows, 2, &blk, 1, data, U);
	rows[0].size = 2 * U;
	rows[1].first_block = 1;
	rows[1].block_offset = 0;
	char *a6 = write_archive("inside.zn", rows, 2, two, 2, data, sizeof(data));
	char *bad[] = {a5, a6};
	for (int k = 0; k < 2; k++) {
		CHECK_OK(zn_reader_open(&r, bad[k], NULL, 0));
		problems = 0;
		CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = count_problem}) ==
		      ZN_ERR_CORRUPT);
		CHECK(problems == 1);
		zn_reader_free(r);
	}

	/* 2. 300,000 entries with empty paths and no content compress to a few KB of index. */
	uint64_t n = 300000;
	struct zn_index_row *many = calloc(n, sizeof(*many));
	CHECK(many);
	for (uint64_t i = 0; i < n; i++)
		many[i] = (struct zn_index_row){
		        .path = "", .uname = "", .gname = "", .type = ZN_TYPE_FILE, .mode = 0644};
	layout = ZN_IX_WHOLE;
	char *a4 = write_archive("count.zn", many, n, NULL, 0, NULL, 0);
	layout = ZN_IX_CHOSEN;
	char err[256] = "";
	CHECK(zn_reader_open(&r, a4, err, sizeof(err)) == ZN_ERR_CORRUPT);
	CHECK(strstr(err, "entry count"));
	free(many);

	paged_columns();
	fence_lookups();
	offsets_back();
	unknown_columns();
	damaged_metadata();
	unsound();
	stored_sizes();
	long_probe();

	tu_rmtree(dir);
	free(dir);
	puts("ok");
	return 0;
}
