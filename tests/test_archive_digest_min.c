/* SPDX-License-Identifier: MIT */
/* test_archive_digest_min.c - digest_min_size (format version 2): files below it have no stored
 * SHA-256, zn_reader_digest gives every file's (stored, or computed from the content) equal to
 * the SHA-256 of its bytes, verify and extract pass a sound archive and name a small file whose
 * bytes were damaged, a threshold of 0 (or no digests) writes version 1, and a reader refuses a
 * footer whose version is not the header's. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "archive/archive_format.h"
#include "common/common.h"
#include "common/sha256.h"
#include "test_util.h"

static char *dir;

/* Sizes around the threshold (1024) and the chunk size (64 KiB): empty, tiny, just below, at
 * and above the threshold, and one spanning blocks. Files named .jar go to stored blocks, so
 * that their bytes can be found and damaged in the archive as they are. */
static const uint64_t sizes[] = {0, 1, 40, 1023, 1024, 5000, 200000};
#define NFILES (sizeof(sizes) / sizeof(sizes[0]))
static uint8_t *content[NFILES];
static char names[NFILES][32];

static void add_all(const char *out, const struct zn_create_options *o)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, o, NULL));
	for (size_t i = 0; i < NFILES; i++) {
		struct zn_entry e = {.path = names[i],
		                     .path_len = strlen(names[i]),
		                     .type = ZN_TYPE_FILE,
		                     .mode = 0644,
		                     .size = sizes[i]};
		CHECK_OK(zn_writer_add_memory(w, &e, content[i]));
	}
	/* A hardlink to the 40-byte file, and a directory. */
	struct zn_entry h = {.path = "z-link", .path_len = 6, .type = ZN_TYPE_HARDLINK};
	h.link = names[2];
	h.link_len = strlen(names[2]);
	CHECK_OK(zn_writer_add_memory(w, &h, NULL));
	struct zn_entry d = {.path = "z-dir", .path_len = 5, .type = ZN_TYPE_DIR, .mode = 0755};
	CHECK_OK(zn_writer_add_memory(w, &d, NULL));
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	CHECK(close(fd) == 0);
}

static int problems;
static char last_problem[256];
static void on_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx, (void)r, (void)what;
	problems++;
	snprintf(last_problem, sizeof(last_problem), "%s", path);
}

/* Opens `path` and checks every entry against the files; threshold: the one expected. */
static void check_archive(const char *path, uint32_t version, uint64_t threshold, int digest)
{
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, path, NULL, 0));
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	CHECK_EQ_U64(info.format_version, version);
	CHECK_EQ_U64(zn_reader_digest_min_size(r), threshold);
	CHECK_EQ_U64(info.digest, digest);
	for (size_t i = 0; i < NFILES; i++) {
		uint64_t k;
		CHECK_OK(zn_reader_find(r, names[i], strlen(names[i]), &k));
		struct zn_entry e;
		CHECK_OK(zn_reader_entry(r, k, &e));
		uint8_t want[32], got[32];
		zn_sha256(content[i], sizes[i], want);
		CHECK(e.has_digest == (digest == ZN_DIGEST_SHA256 && sizes[i] >= threshold));
		if (e.has_digest)
			CHECK(!memcmp(e.sha256, want, 32));
		memset(got, 0xa5, sizeof(got));
		CHECK_OK(zn_reader_digest(r, k, got));
		CHECK(!memcmp(got, want, 32));
	}
	uint64_t k;
	uint8_t got[32], want[32];
	CHECK_OK(zn_reader_find(r, "z-link", 6, &k));
	CHECK_OK(zn_reader_digest(r, k, got));
	zn_sha256(content[2], sizes[2], want);
	CHECK(!memcmp(got, want, 32));
	CHECK_OK(zn_reader_find(r, "z-dir", 5, &k));
	CHECK(zn_reader_digest(r, k, got) == ZN_ERR_INVALID_ARG);
	CHECK(zn_reader_digest(r, zn_reader_count(r), got) == ZN_ERR_INVALID_ARG);
	problems = 0;
	CHECK_OK(zn_verify(r, 2, &(struct zn_hooks){.problem = on_problem}));
	CHECK(problems == 0);
	/* Extracted with check_digest, every file is whole. */
	char *to = tu_str("%s/x-%s", dir, strrchr(path, '/') + 1);
	struct zn_extract_options xo;
	zn_extract_options_init(&xo);
	xo.check_digest = 1;
	xo.threads = 2;
	CHECK_OK(zn_extract(r, to, NULL, &xo, &(struct zn_hooks){.problem = on_problem}));
	for (size_t i = 0; i < NFILES; i++) {
		size_t len;
		uint8_t *b = tu_read_file(tu_str("%s/%s", to, names[i]), &len);
		CHECK(b && len == sizes[i] && (!len || !memcmp(b, content[i], len)));
		free(b);
	}
	zn_reader_free(r);
}

/* Replace the footer's version, as a writer that disagreed with itself would. */
static void set_footer_version(const char *path, uint32_t v)
{
	size_t len;
	uint8_t *a = tu_read_file(path, &len);
	CHECK(a && len > ZN_FOOTER_SIZE);
	uint8_t *f = a + len - ZN_FOOTER_SIZE;
	zn_put_le32(f + 40, v);
	zn_put_le64(f + 48, XXH3_64bits(f, 48));
	CHECK(tu_write_file(path, a, len) == 0);
	free(a);
}

/* Set the filter byte (6) of column id's directory record to f, and the checksums after it, as a
 * crafted archive would; returns the column's codec. */
static int set_filter(const char *path, uint32_t id, uint8_t f)
{
	size_t len;
	uint8_t *a = tu_read_file(path, &len);
	CHECK(a);
	uint8_t *foot = a + len - ZN_FOOTER_SIZE;
	uint64_t ioff = zn_get_le64(foot), isz = zn_get_le64(foot + 8);
	uint8_t *ix = a + ioff;
	int codec = -1;
	for (uint32_t c = 0; c < zn_get_le32(ix + 4); c++) {
		uint8_t *d = ix + ZN_INDEX_HEADER_SIZE + c * ZN_COLDIR_SIZE;
		if (zn_get_le32(d) == id) {
			d[6] = f;
			codec = d[4];
		}
	}
	CHECK(codec >= 0);
	uint64_t npages = (isz + ZN_IX_PAGE - 1) / ZN_IX_PAGE;
	for (uint64_t pg = 0; pg < npages; pg++) {
		uint64_t n =
		        isz - pg * ZN_IX_PAGE < ZN_IX_PAGE ? isz - pg * ZN_IX_PAGE : ZN_IX_PAGE;
		zn_put_le64(ix + isz + pg * 8, XXH3_64bits(ix + pg * ZN_IX_PAGE, n));
	}
	zn_put_le64(foot + 16, XXH3_64bits(ix + isz, npages * 8));
	zn_put_le64(foot + 48, XXH3_64bits(foot, 48));
	CHECK(tu_write_file(path, a, len) == 0);
	free(a);
	return codec;
}

/* Filters a reader must refuse in version 2, and ignore in version 1. */
static void check_filters(const char *v2, const char *v1)
{
	char *t = tu_str("%s/filter.zn", dir);
	struct zn_reader *r;
	size_t len;
	uint8_t *orig = tu_read_file(v2, &len);
	static const struct {
		uint32_t id;
		uint8_t filter;
		int codec; /* the column's in this archive: the test is about that case */
	} bad[] = {
	        {ZN_COL_BLK_CODEC, ZN_FILTER_DELTA, ZN_COL_RAW},    /* a raw column */
	        {ZN_COL_PATH_BYTES, ZN_FILTER_DELTA, ZN_COL_PAGED}, /* not integers */
	        {ZN_COL_MTIME_NS, 2, ZN_COL_ZSTD},                  /* an unknown filter */
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		CHECK(tu_write_file(t, orig, len) == 0);
		CHECK(set_filter(t, bad[k].id, bad[k].filter) == bad[k].codec);
		CHECK(zn_reader_open(&r, t, NULL, 0) == ZN_ERR_CORRUPT);
	}
	/* The delta filter taken off a column that has it: the values read are wrong, and
	 * checked as any column's (the offsets are no longer monotone). */
	CHECK(tu_write_file(t, orig, len) == 0);
	set_filter(t, ZN_COL_PATH_OFFSETS, ZN_FILTER_NONE);
	if (zn_reader_open(&r, t, NULL, 0) == ZN_OK) {
		struct zn_entry e;
		CHECK(zn_reader_entry(r, 1, &e) != ZN_OK);
		zn_reader_free(r);
	}
	free(orig);
	/* Version 1: the byte is reserved and ignored, whatever it holds. */
	orig = tu_read_file(v1, &len);
	CHECK(tu_write_file(t, orig, len) == 0);
	set_filter(t, ZN_COL_PATH_OFFSETS, 7);
	CHECK_OK(zn_reader_open(&r, t, NULL, 0));
	struct zn_entry e;
	CHECK_OK(zn_reader_entry(r, 0, &e));
	CHECK(e.path_len == strlen(names[0]) && !memcmp(e.path, names[0], e.path_len));
	zn_reader_free(r);
	free(orig);
}

/* Flip a byte in the middle of file i's bytes where the archive holds them as they are. */
static void damage_file(const char *path, size_t i)
{
	size_t len;
	uint8_t *a = tu_read_file(path, &len);
	CHECK(a);
	uint8_t *at = memmem(a, len, content[i], sizes[i]);
	CHECK(at != NULL);
	at[sizes[i] / 2] ^= 0x20;
	CHECK(tu_write_file(path, a, len) == 0);
	free(a);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_digest_min");
	dir = tu_mkdtemp();
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	for (size_t i = 0; i < NFILES; i++) {
		content[i] = malloc(sizes[i] + 1);
		tu_rng_fill(&g, content[i], sizes[i]);
		snprintf(names[i], sizeof(names[i]), "f%06llu.jar", (unsigned long long)sizes[i]);
	}
	struct zn_create_options o = tu_small_blocks(2);
	CHECK_EQ_U64(o.digest_min_size, ZN_DIGEST_MIN_SIZE_DEFAULT);
	CHECK(ZN_DIGEST_MIN_SIZE_DEFAULT == 1024);

	/* The default: version 2, digests of files from 1024 bytes on. */
	char *v2 = tu_str("%s/v2.zn", dir);
	add_all(v2, &o);
	check_archive(v2, 2, 1024, ZN_DIGEST_SHA256);

	/* 0: every file's digest, version 1 (readable by readers before version 2). */
	char *v1 = tu_str("%s/v1.zn", dir);
	o.digest_min_size = 0;
	add_all(v1, &o);
	check_archive(v1, 1, 0, ZN_DIGEST_SHA256);

	/* A threshold above the chunk size: the spanning file has none either. */
	char *big = tu_str("%s/big.zn", dir);
	o.digest_min_size = 1 << 20;
	add_all(big, &o);
	check_archive(big, 2, 1 << 20, ZN_DIGEST_SHA256);

	/* Without digests: version 2 still (its columns filtered), digests computed. */
	char *nd = tu_str("%s/nd.zn", dir);
	o.digest_min_size = 1024;
	o.digest = ZN_DIGEST_NONE;
	add_all(nd, &o);
	check_archive(nd, 2, 1024, ZN_DIGEST_NONE);

	check_filters(v2, v1);

	/* A footer that does not give the header's version is refused. */
	char *mixed = tu_str("%s/mixed.zn", dir);
	struct zn_create_options o1 = tu_small_blocks(1);
	o1.digest_min_size = 0;
	add_all(mixed, &o1);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, mixed, NULL, 0));
	zn_reader_free(r);
	set_footer_version(mixed, 2);
	CHECK(zn_reader_open(&r, mixed, NULL, 0) == ZN_ERR_UNSUPPORTED);
	set_footer_version(v1, 3);
	CHECK(zn_reader_open(&r, v1, NULL, 0) == ZN_ERR_UNSUPPORTED);

	/* A damaged byte of a 40-byte file without a stored digest: its block's checksum names it
	 * (verify, extract), and its digest is not computed from the wrong bytes. */
	damage_file(v2, 2);
	CHECK_OK(zn_reader_open(&r, v2, NULL, 0));
	problems = 0;
	CHECK(zn_verify(r, 2, &(struct zn_hooks){.problem = on_problem}) == ZN_ERR_DAMAGED);
	CHECK(problems >= 1);
	uint64_t k;
	CHECK_OK(zn_reader_find(r, names[2], strlen(names[2]), &k));
	uint8_t got[32];
	CHECK(zn_reader_digest(r, k, got) == ZN_ERR_CHECKSUM);
	struct zn_extract_options xo;
	zn_extract_options_init(&xo);
	xo.threads = 1;
	problems = 0;
	CHECK(zn_extract(r, tu_str("%s/xd", dir), NULL, &xo,
	                 &(struct zn_hooks){.problem = on_problem}) == ZN_ERR_DAMAGED);
	CHECK(problems >= 1);
	CHECK(access(tu_str("%s/xd/%s", dir, names[2]), F_OK) != 0);
	zn_reader_free(r);

	for (size_t i = 0; i < NFILES; i++)
		free(content[i]);
	tu_rmtree(dir);
	free(dir);
	puts("ok");
	return 0;
}
