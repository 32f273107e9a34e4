/* SPDX-License-Identifier: MIT */
/* test_archive_memory.c - memory is bounded by the archive's size: crafted archives of near-free
 * entries (every column one zstd frame of zeros) make extract, verify and a listing use at most
 * 256 MiB, whatever they claim (red-team finding 3 of issue 30: 264 KB declaring 4 million
 * entries once made extract use 803 MiB, verify 761 MiB and list 387 MiB).
 *
 * Each operation runs in a child process whose peak resident set (ru_maxrss) is compared with the
 * bound. Sanitizer builds run the operations but do not compare (shadow memory and quarantine are
 * not the library's). `-k DIR` keeps the archives in DIR, for measuring the command on them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "archive/archive_internal.h"
#include "common/common.h"
#include "common/xxh3.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define LIMIT_KB (256u << 10)

/* A growing byte buffer. */
struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* `raw` bytes of zeros, but for a little-endian u64 `last` in the last 8 (an offsets column whose
 * last string ends there), as one zstd frame, appended to b; its stored size. */
static size_t put_zero_frame(struct bytes *b, uint64_t raw, uint64_t last)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	CHECK(cc);
	ZSTD_CCtx_setPledgedSrcSize(cc, raw);
	static uint8_t zeros[1 << 20], out[1 << 16];
	size_t start = b->len;
	for (uint64_t done = 0; done < raw;) {
		size_t n = (size_t)ZN_MIN(raw - done, sizeof(zeros));
		uint8_t *src = zeros;
		uint8_t tail[sizeof(zeros)];
		if (last && done + n == raw) { /* the last piece ends with `last` */
			memset(tail, 0, n);
			zn_put_le64(tail + n - 8, last);
			src = tail;
		}
		ZSTD_inBuffer in = {src, n, 0};
		int end = done + n == raw;
		for (;;) {
			ZSTD_outBuffer o = {out, sizeof(out), 0};
			size_t left = ZSTD_compressStream2(cc, &o, &in,
			                                   end ? ZSTD_e_end : ZSTD_e_continue);
			CHECK(!ZSTD_isError(left));
			put(b, out, o.pos);
			if (end ? left == 0 : in.pos == in.size)
				break;
		}
		done += n;
	}
	if (!raw) { /* an empty frame */
		ZSTD_outBuffer o = {out, sizeof(out), 0};
		ZSTD_inBuffer in = {NULL, 0, 0};
		CHECK(ZSTD_compressStream2(cc, &o, &in, ZSTD_e_end) == 0);
		put(b, out, o.pos);
	}
	ZSTD_freeCCtx(cc);
	return b->len - start;
}

/* An archive of n entries and no blocks: regular files, empty, mode 0, every string empty but
 * one symlink-free link of `link_len` bytes in the last row (to spend decoded memory on one
 * column), every column one zstd frame; the index padded with zeros to at least `ix_min` bytes
 * (an attacker pays for bytes, not for entries). Written to path. */
static void write_crafted(const char *path, uint64_t n, uint64_t link_len, uint64_t ix_min)
{
	static const struct {
		int id;
		unsigned width; /* bytes per row; 0: a bytes column */
		int offsets;    /* rows + 1 */
	} cols[] = {
	        {ZN_COL_PATH_OFFSETS, 8, 1},  {ZN_COL_PATH_BYTES, 0, 0},
	        {ZN_COL_TYPE, 1, 0},          {ZN_COL_MODE, 4, 0},
	        {ZN_COL_UID, 4, 0},           {ZN_COL_GID, 4, 0},
	        {ZN_COL_UNAME_OFFSETS, 8, 1}, {ZN_COL_UNAME_BYTES, 0, 0},
	        {ZN_COL_GNAME_OFFSETS, 8, 1}, {ZN_COL_GNAME_BYTES, 0, 0},
	        {ZN_COL_MTIME_NS, 8, 0},      {ZN_COL_SIZE, 8, 0},
	        {ZN_COL_LINK_OFFSETS, 8, 1},  {ZN_COL_LINK_BYTES, 0, 0},
	        {ZN_COL_FIRST_BLOCK, 4, 0},   {ZN_COL_BLOCK_OFFSET, 4, 0},
	        {ZN_COL_BLK_OFFSET, 0, 0},    {ZN_COL_BLK_CSIZE, 0, 0},
	        {ZN_COL_BLK_USIZE, 0, 0},     {ZN_COL_BLK_CODEC, 0, 0},
	        {ZN_COL_BLK_XXH3, 0, 0},      {ZN_COL_BLK_CXXH3, 0, 0},
	};
	enum { NCOLS = sizeof(cols) / sizeof(cols[0]) };
	struct bytes ix = {0};
	uint8_t head[ZN_INDEX_HEADER_SIZE + NCOLS * ZN_COLDIR_SIZE] = {0};
	memcpy(head, ZN_INDEX_MAGIC, 4);
	zn_put_le32(head + 4, NCOLS);
	zn_put_le64(head + 8, n);
	zn_put_le64(head + 24, 1 << 20);
	zn_put_le32(head + 32, 3);
	put(&ix, head, sizeof(head));
	for (int c = 0; c < NCOLS; c++) {
		while (ix.len % 8)
			put(&ix, "", 1);
		const int link =
		        cols[c].id == ZN_COL_LINK_OFFSETS || cols[c].id == ZN_COL_LINK_BYTES;
		uint64_t raw = cols[c].width ? (n + (uint64_t)cols[c].offsets) * cols[c].width
		               : cols[c].id == ZN_COL_LINK_BYTES ? link_len
		                                                 : 0;
		uint64_t off = ix.len;
		size_t stored = put_zero_frame(&ix, raw, link && cols[c].offsets ? link_len : 0);
		uint8_t *d = ix.p + ZN_INDEX_HEADER_SIZE + (size_t)c * ZN_COLDIR_SIZE;
		zn_put_le32(d, (uint32_t)cols[c].id);
		d[4] = ZN_COL_ZSTD;
		zn_put_le64(d + 8, off);
		zn_put_le64(d + 16, stored);
		zn_put_le64(d + 24, raw);
	}
	while (ix.len < ix_min)
		put(&ix, "", 1);
	const uint64_t npages = (ix.len + ZN_IX_PAGE - 1) / ZN_IX_PAGE;
	struct bytes a = {0};
	uint8_t hdr[ZN_HEADER_SIZE] = {0};
	memcpy(hdr, ZN_MAGIC, ZN_MAGIC_LEN);
	zn_put_le32(hdr + 8, ZN_FORMAT_VERSION);
	put(&a, hdr, sizeof(hdr));
	const uint64_t ioff = a.len;
	put(&a, ix.p, ix.len);
	const size_t sums_at = a.len;
	for (uint64_t pg = 0; pg < npages; pg++) {
		uint8_t s[8];
		zn_put_le64(s, zn_xxh3(ix.p + pg * ZN_IX_PAGE,
		                       ZN_MIN((size_t)ZN_IX_PAGE, ix.len - pg * ZN_IX_PAGE)));
		put(&a, s, 8);
	}
	uint8_t f[ZN_FOOTER_SIZE] = {0};
	zn_put_le64(f, ioff);
	zn_put_le64(f + 8, ix.len);
	zn_put_le64(f + 16, zn_xxh3(a.p + sums_at, npages * 8));
	zn_put_le64(f + 24, n);
	zn_put_le32(f + 40, ZN_FORMAT_VERSION);
	zn_put_le64(f + 48, zn_xxh3(f, 48));
	memcpy(f + 56, ZN_FOOTER_MAGIC, 8);
	put(&a, f, sizeof(f));
	CHECK(tu_write_file(path, a.p, a.len) == 0);
	free(a.p);
	free(ix.p);
}

enum op { OP_EXTRACT, OP_VERIFY, OP_LIST };
static const char *const op_names[] = {"extract", "verify", "list"};

/* What `znippy list -l` does of the library: every row, and the rows sharing an extent. */
static void list_all(struct zn_reader *r)
{
	uint64_t n = zn_reader_count(r);
	uint8_t *copy = malloc(n + 1);
	CHECK(copy);
	zn_reader_copies(r, copy);
	for (uint64_t i = 0; i < n; i++) {
		struct zn_entry e;
		unsigned lost;
		(void)zn_reader_entry_lost(r, i, &e, &lost);
	}
	free(copy);
}

/* Runs op on the archive at path in a child process; the child's peak RSS in KiB, and whether
 * the archive opened (*opened). */
static long run_op(const char *path, enum op op, const char *out, int *opened)
{
	int pfd[2];
	CHECK(pipe(pfd) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		struct zn_reader *r;
		char ok = zn_reader_open(&r, path, NULL, 0) == ZN_OK;
		if (write(pfd[1], &ok, 1) != 1)
			_exit(3);
		if (!ok)
			_exit(0);
		zn_result res = ZN_OK;
		if (op == OP_EXTRACT)
			res = zn_extract(r, out, NULL, NULL, NULL);
		else if (op == OP_VERIFY)
			res = zn_verify(r, 2, NULL);
		else
			list_all(r);
		zn_reader_free(r);
		/* Every row is damaged (empty paths): anything but a crash or no memory. */
		_exit(res == ZN_ERR_NOMEM ? 2 : 0);
	}
	close(pfd[1]);
	char ok = 0;
	CHECK(read(pfd[0], &ok, 1) == 1);
	close(pfd[0]);
	int status;
	struct rusage ru;
	CHECK(wait4(pid, &status, 0, &ru) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*opened = ok;
	return ru.ru_maxrss;
}

static void check_bounded(const char *dir, const char *name, int must_open)
{
	const char *path = tu_str("%s/%s", dir, name);
	for (int op = OP_EXTRACT; op <= OP_LIST; op++) {
		int opened;
		long kb = run_op(path, (enum op)op, tu_str("%s/out-%s-%d", dir, name, op), &opened);
		printf("%s: %s: %s, peak RSS %ld KiB\n", name, op_names[op],
		       opened ? "opened" : "refused", kb);
		CHECK(opened || !must_open);
		if (!SANITIZED)
			CHECK(kb <= (long)LIMIT_KB);
	}
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_memory");
	const char *keep = NULL;
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-k"))
			keep = argv[i + 1];
	char *dir = keep ? strdup(keep) : tu_mkdtemp();
	CHECK(dir);

	/* The red team's archive: 4,000,000 entries in 264 KB. */
	write_crafted(tu_str("%s/red-team.zn", dir), 4000000, 0, 264 << 10);
	check_bounded(dir, "red-team.zn", 0);

	/* The most entries and decoded bytes the reader accepts from an archive under 1 MiB: an
	 * index of about 1,000,000 bytes, its entries at the reader's bound, one link spending the
	 * rest of the decoded-index bound. Sanitizer builds, which do not measure, take a tenth. */
	const uint64_t ix = SANITIZED ? 100000 : 1000000;
	const uint64_t n = ZN_ENTRIES_FREE + ZN_ENTRIES_PER_INDEX_BYTE * ix;
	const uint64_t rows = 69 * n + 4 * 8; /* the entry columns' decoded bytes */
	const uint64_t budget = ZN_INDEX_RAW_FREE + ZN_INDEX_RAW_PER_BYTE * ix;
	CHECK(budget > rows);
	write_crafted(tu_str("%s/max.zn", dir), n, budget - rows - 4096, ix);
	check_bounded(dir, "max.zn", 1);
	/* One more entry, or one more decoded byte, is refused. */
	struct zn_reader *r;
	char err[256];
	write_crafted(tu_str("%s/max-plus.zn", dir), n + 1, 0, ix);
	CHECK(zn_reader_open(&r, tu_str("%s/max-plus.zn", dir), err, sizeof(err)) ==
	      ZN_ERR_CORRUPT);
	CHECK(strstr(err, "entry count"));
	write_crafted(tu_str("%s/raw-plus.zn", dir), 1000, budget, ix);
	CHECK(zn_reader_open(&r, tu_str("%s/raw-plus.zn", dir), err, sizeof(err)) ==
	      ZN_ERR_CORRUPT);
	CHECK(strstr(err, "decodes to"));

	if (!keep)
		tu_rmtree(dir);
	free(dir);
	puts("ok");
	return 0;
}
