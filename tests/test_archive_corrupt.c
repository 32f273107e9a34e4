/* SPDX-License-Identifier: MIT */
/* test_archive_corrupt.c - truncated and bit-flipped archives: every damage is detected, nothing
 * crashes or reads out of bounds (the archive sits against guard pages), and damage in one block
 * leaves the files in other blocks readable. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "archive/archive_format.h"
#include "archive/archive_block.h"
#include "common/common.h"
#include "test_util.h"

#define NFILES 40

static uint8_t *contents[NFILES];
static uint64_t sizes[NFILES];
static char names[NFILES][32];

static uint8_t *build(size_t *len)
{
	char *dir = tu_mkdtemp();
	char *path = tu_fmt("%s/a.zn", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_create_options opt;
	zn_create_options_init(&opt);
	opt.chunk_size = 64 << 10;
	opt.threads = 2;
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, &opt, NULL));
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	for (int i = 0; i < NFILES; i++) {
		sizes[i] = i == 7 ? 200000 : tu_rng_below(&g, 9000); /* file 7 spans blocks */
		contents[i] = malloc(sizes[i] + 1);
		for (uint64_t k = 0; k < sizes[i]; k++)
			contents[i][k] = (i % 4 == 0) ? (uint8_t)tu_rng_next(&g)
			                              : (uint8_t)("abcab\n"[k % 6] + i % 3);
		snprintf(names[i], sizeof(names[i]), "dir%d/f%02d%s", i % 3, i,
		         i % 5 == 0 ? ".gz" : "");
		struct zn_entry e = {.path = names[i],
		                     .path_len = strlen(names[i]),
		                     .type = ZN_TYPE_FILE,
		                     .mode = 0644,
		                     .size = sizes[i],
		                     .mtime_ns = 1};
		CHECK_OK(zn_writer_add_memory(w, &e, contents[i]));
	}
	struct zn_entry l = {.path = "link",
	                     .path_len = 4,
	                     .type = ZN_TYPE_SYMLINK,
	                     .mode = 0777,
	                     .link = "dir0/f00.gz",
	                     .link_len = 11};
	CHECK_OK(zn_writer_add_memory(w, &l, NULL));
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	close(fd);
	uint8_t *d = tu_read_file(path, len);
	CHECK(d);
	tu_rmtree(dir);
	free(path);
	free(dir);
	return d;
}

static zn_result discard(void *ctx, const void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return ZN_OK;
}

/* Open, read every entry and verify; returns 1 if the damage was detected somewhere. */
static int exercise(const uint8_t *data, size_t len, int *open_failed)
{
	uint8_t *g = tu_guard_alloc(len);
	memcpy(g, data, len);
	struct zn_reader *r;
	char err[256];
	zn_result res = zn_reader_open_mem(&r, g, len, err, sizeof(err));
	*open_failed = res != ZN_OK;
	int detected = res != ZN_OK;
	if (res == ZN_OK) {
		CHECK(r == NULL || 1);
		for (uint64_t i = 0; i < zn_reader_count(r); i++) {
			struct zn_entry e;
			if (zn_reader_entry(r, i, &e) != ZN_OK) {
				detected = 1;
				continue;
			}
			if (e.type == ZN_TYPE_FILE &&
			    zn_reader_read_entry(r, i, discard, NULL) != ZN_OK)
				detected = 1;
		}
		if (zn_verify(r, 1, NULL) != ZN_OK)
			detected = 1;
		zn_reader_free(r);
	} else {
		CHECK(err[0]); /* a message says what is wrong */
	}
	tu_guard_free(g, len);
	return detected;
}

struct cmp_ctx {
	const uint8_t *want;
	uint64_t pos, len;
	int bad;
};

static zn_result compare(void *ctx, const void *data, size_t len)
{
	struct cmp_ctx *c = ctx;
	if (c->pos + len > c->len || memcmp(c->want + c->pos, data, len))
		c->bad = 1;
	c->pos += len;
	return ZN_OK;
}

/* Where the bit flips go: every byte of the header and the footer, every third of the index,
 * every 29th of the blocks. */
static size_t flip_step(size_t pos, size_t len, uint64_t index_off)
{
	if (pos < 16 || pos + ZN_FOOTER_SIZE >= len)
		return 1;
	return pos >= index_off ? 3 : 29;
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_corrupt");
	size_t len;
	uint8_t *a = build(&len);
	int of;
	/* Under ZN_TEST_QUICK (ThreadSanitizer) the damage loops below, which read and verify with
	 * one thread, take every q-th position; the archive is still written by two threads. */
	const size_t q = tu_quick ? 8 : 1;
	CHECK(!exercise(a, len, &of)); /* the pristine archive is fine */
	uint64_t index_off = zn_get_le64(a + len - ZN_FOOTER_SIZE);
	uint64_t index_size = zn_get_le64(a + len - ZN_FOOTER_SIZE + 8);

	/* Truncation anywhere loses the footer: open must fail with a message. */
	for (size_t cut = 0; cut < len; cut += q * ((cut < 64 || cut + 200 > len) ? 1 : 97)) {
		CHECK(exercise(a, cut, &of));
		CHECK(of);
	}
	/* Appended garbage moves the footer: also refused; zero bytes (a copy padded to a block
	 * size) are passed over, as tar passes over zero blocks, up to 1 MiB of them. */
	const size_t pad = (1u << 20) + 1;
	uint8_t *longer = calloc(len + pad, 1);
	memcpy(longer, a, len);
	CHECK(!exercise(longer, len + 3, &of));
	CHECK(!exercise(longer, len + pad - 1, &of));
	CHECK(exercise(longer, len + pad, &of) && of);
	longer[len + 1] = 'x';
	CHECK(exercise(longer, len + 3, &of) && of);
	free(longer);

	/* A flipped bit anywhere is detected: header, every block, index, footer. */
	uint8_t *b = malloc(len);
	size_t flips = 0;
	for (size_t pos = 0; pos < len; pos += q * flip_step(pos, len, index_off)) {
		memcpy(b, a, len);
		b[pos] ^= (uint8_t)(1u << (pos % 8));
		if (!exercise(b, len, &of)) {
			fprintf(stderr, "undetected flip at byte %zu of %zu (index at %llu)\n", pos,
			        len, (unsigned long long)index_off);
			CHECK(0);
		}
		/* Header, footer and index page checksums are checked when opening. */
		if (pos < 16 || pos >= index_off + index_size)
			CHECK(of);
		flips++;
	}
	CHECK(flips > 500 / q);

	/* Each block and the index start at a multiple of 64, after zero padding, which verify
	 * checks: a stray byte there is damage. Nothing is read from it, so reading every entry
	 * still works. */
	CHECK(index_off % ZN_INDEX_ALIGN == 0);
	struct zn_reader *rp;
	CHECK_OK(zn_reader_open_mem(&rp, a, len, NULL, 0));
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(rp, &info);
	CHECK(info.blocks >= 2);
	uint64_t data_end = ZN_HEADER_SIZE, gaps = 0;
	struct zn_blockinfo first;
	CHECK_OK(zn_block_info(rp, 0, &first));
	for (uint64_t k = 0; k < info.blocks; k++) {
		struct zn_blockinfo bi;
		CHECK_OK(zn_block_info(rp, k, &bi));
		CHECK(bi.offset % ZN_BLOCK_ALIGN == 0 && bi.offset >= data_end &&
		      bi.offset - data_end < ZN_BLOCK_ALIGN);
		for (uint64_t pos = data_end; pos < bi.offset; pos++, gaps++) {
			if (pos % q)
				continue;
			memcpy(b, a, len);
			b[pos] = 0x5a;
			CHECK(exercise(b, len, &of) && !of);
		}
		data_end = bi.offset + bi.csize;
	}
	zn_reader_free(rp);
	/* This archive's data happens not to end on a multiple of 64 (a change that makes it do
	 * so must give the test another archive), and some of its blocks neither. */
	CHECK(data_end < index_off && index_off - data_end < ZN_INDEX_ALIGN && gaps > 48);
	for (uint64_t pos = data_end; pos < index_off; pos++) {
		if (pos % q)
			continue;
		memcpy(b, a, len);
		b[pos] = 0x5a;
		CHECK(exercise(b, len, &of) && !of);
	}

	/* Damage in one data block: files elsewhere still read back exactly. */
	memcpy(b, a, len);
	b[first.offset + 10] ^= 0x40; /* inside the first block */
	struct zn_reader *r;
	CHECK_OK(zn_reader_open_mem(&r, b, len, NULL, 0));
	int good = 0, damaged = 0;
	for (int i = 0; i < NFILES; i++) {
		uint64_t idx;
		CHECK_OK(zn_reader_find(r, names[i], strlen(names[i]), &idx));
		struct cmp_ctx c = {contents[i], 0, sizes[i], 0};
		zn_result res = zn_reader_read_entry(r, idx, compare, &c);
		if (res == ZN_OK) {
			CHECK(!c.bad && c.pos == sizes[i]);
			good++;
		} else {
			CHECK(res == ZN_ERR_CHECKSUM || res == ZN_ERR_CORRUPT);
			damaged++;
		}
	}
	CHECK(damaged > 0 && good > 0);
	CHECK(zn_verify(r, 2, NULL) == ZN_ERR_DAMAGED);
	zn_reader_free(r);
	/* Whatever the damage in a block, reading never hands out a wrong byte: a file within one
	 * block is checked whole before any of it is handed out, a longer one block by block. */
	int refused = 0;
	for (size_t pos = 16; pos < index_off; pos += 41 * q) {
		memcpy(b, a, len);
		b[pos] ^= (uint8_t)(1u << (pos % 8));
		CHECK_OK(zn_reader_open_mem(&r, b, len, NULL, 0));
		for (int i = 0; i < NFILES; i++) {
			uint64_t idx;
			CHECK_OK(zn_reader_find(r, names[i], strlen(names[i]), &idx));
			struct cmp_ctx c = {contents[i], 0, sizes[i], 0};
			zn_result res = zn_reader_read_entry(r, idx, compare, &c);
			CHECK(!c.bad);
			CHECK(res == ZN_OK ? c.pos == sizes[i]
			                   : (refused++,
			                      res == ZN_ERR_CHECKSUM || res == ZN_ERR_CORRUPT));
		}
		zn_reader_free(r);
	}
	CHECK(refused > 0);
	/* A larger index spans many pages, checked lazily: a flip in any page is still caught by
	 * reading the entries or by verify, even if opening succeeds. */
	{
		char *dir = tu_mkdtemp();
		char *path = tu_fmt("%s/big.zn", dir);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		struct zn_writer *w;
		struct zn_create_options all_digests; /* their digests make the index many pages */
		zn_create_options_init(&all_digests);
		all_digests.digest_min_size = 0;
		CHECK_OK(zn_writer_open(&w, fd, &all_digests, NULL));
		for (int i = 0; i < 3000; i++) {
			char name[64];
			snprintf(name, sizeof(name), "some/longer/directory/name/file-%05d.txt", i);
			struct zn_entry e = {.path = name,
			                     .path_len = strlen(name),
			                     .type = ZN_TYPE_FILE,
			                     .mode = 0644,
			                     .size = strlen(name)};
			CHECK_OK(zn_writer_add_memory(w, &e, name)); /* distinct digests */
		}
		CHECK_OK(zn_writer_finish(w));
		zn_writer_free(w);
		close(fd);
		size_t blen;
		uint8_t *big = tu_read_file(path, &blen);
		uint64_t ioff = zn_get_le64(big + blen - ZN_FOOTER_SIZE);
		uint64_t isz = zn_get_le64(big + blen - ZN_FOOTER_SIZE + 8);
		CHECK(isz > 4 * ZN_IX_PAGE);
		uint8_t *c = malloc(blen);
		int opened_anyway = 0;
		for (uint64_t pos = ioff; pos < ioff + isz; pos += isz / 29 + 1) {
			memcpy(c, big, blen);
			c[pos] ^= 0x10;
			CHECK(exercise(c, blen, &of));
			opened_anyway += !of;
		}
		CHECK(opened_anyway > 0); /* the lazy path was exercised */
		free(c);
		free(big);
		tu_rmtree(dir);
		free(path);
		free(dir);
	}
	printf("ok: %zu flips, %d good / %d damaged files with one bad block\n", flips, good,
	       damaged);
	free(b);
	free(a);
	for (int i = 0; i < NFILES; i++)
		free(contents[i]);
	return 0;
}
