/* SPDX-License-Identifier: MIT */
/* test_zip.c - the ZIP reader's API on archives built here byte by byte (zlib's deflate, libbz2
 * and libzstd as the referees): entries of every method read, lookup, reads into buffers and
 * sinks, an archive inside a bigger buffer, the end record behind a 64 KiB comment that holds a
 * false one, a prefix; and the refusals: declared sizes smaller or far larger than the data,
 * overlapping entries, impossible counts, local headers that disagree, damaged bzip2 and zstd
 * data. Seeded: the contents are random (-s SEED). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bzlib.h>
#include <zlib.h>
#include <zstd.h>

#include "test_util.h"
#include "znippy.h"

struct ent {
	const char *name;
	const uint8_t *data;
	size_t len;
	unsigned method; /* 0 stored, 8 deflate, 12 bzip2, 93 zstd */
	/* overrides, 0: the true value */
	uint32_t size_as, offset_as_plus1;
};

static size_t deflate_raw(const uint8_t *in, size_t n, uint8_t **out)
{
	z_stream s = {0};
	CHECK(deflateInit2(&s, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	size_t cap = deflateBound(&s, n);
	*out = malloc(cap + 1);
	s.next_in = (uint8_t *)in, s.avail_in = (uInt)n;
	s.next_out = *out, s.avail_out = (uInt)cap;
	CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END);
	size_t got = s.total_out;
	deflateEnd(&s);
	return got;
}

/* The entry's data compressed by its method's referee (a copy when stored). */
static size_t compress_as(unsigned method, const uint8_t *in, size_t n, uint8_t **out)
{
	if (method == 8)
		return deflate_raw(in, n, out);
	size_t cap = n + n / 50 + 1024;
	*out = malloc(cap);
	if (method == 0) {
		memcpy(*out, in, n);
		return n;
	}
	if (method == 93) {
		size_t got = ZSTD_compress(*out, cap, in, n, 3);
		CHECK(!ZSTD_isError(got));
		return got;
	}
	unsigned got = (unsigned)cap;
	CHECK(method == 12);
	CHECK(BZ2_bzBuffToBuffCompress((char *)*out, &got, (char *)in, (unsigned)n, 9, 0, 0) ==
	      BZ_OK);
	return got;
}

/* An archive of the entries, with a comment; local header offsets recorded for the directory. */
static struct tu_buf build(const struct ent *e, int n, const char *comment, size_t comment_len)
{
	struct tu_buf b = {0}, cd = {0};
	for (int i = 0; i < n; i++) {
		uint8_t *c = NULL;
		size_t clen = compress_as(e[i].method, e[i].data, e[i].len, &c);
		uint32_t crc = (uint32_t)crc32(0, e[i].data, (uInt)e[i].len);
		uint32_t off = (uint32_t)b.len, nl = (uint32_t)strlen(e[i].name);
		uint32_t size = e[i].size_as ? e[i].size_as : (uint32_t)e[i].len;
		tu_put32(&b, 0x04034b50), tu_put16(&b, 20), tu_put16(&b, 0),
		        tu_put16(&b, e[i].method);
		tu_put16(&b, 0), tu_put16(&b, 0x21), tu_put32(&b, crc),
		        tu_put32(&b, (uint32_t)clen);
		tu_put32(&b, size), tu_put16(&b, nl), tu_put16(&b, 0), tu_put(&b, e[i].name, nl);
		tu_put(&b, c, clen);
		free(c);
		tu_put32(&cd, 0x02014b50), tu_put16(&cd, 0x031e), tu_put16(&cd, 20),
		        tu_put16(&cd, 0);
		tu_put16(&cd, e[i].method), tu_put16(&cd, 0), tu_put16(&cd, 0x21),
		        tu_put32(&cd, crc);
		tu_put32(&cd, (uint32_t)clen), tu_put32(&cd, size), tu_put16(&cd, nl),
		        tu_put16(&cd, 0);
		tu_put16(&cd, 0), tu_put16(&cd, 0), tu_put16(&cd, 0), tu_put32(&cd, 0100644u << 16);
		tu_put32(&cd, e[i].offset_as_plus1 ? e[i].offset_as_plus1 - 1 : off);
		tu_put(&cd, e[i].name, nl);
	}
	uint32_t cd_off = (uint32_t)b.len;
	tu_put(&b, cd.p, cd.len);
	tu_put32(&b, 0x06054b50), tu_put16(&b, 0), tu_put16(&b, 0), tu_put16(&b, (uint32_t)n);
	tu_put16(&b, (uint32_t)n), tu_put32(&b, (uint32_t)cd.len), tu_put32(&b, cd_off);
	tu_put16(&b, (uint32_t)comment_len);
	if (comment_len)
		tu_put(&b, comment, comment_len);
	free(cd.p);
	return b;
}

struct collect {
	size_t len, cap, calls;
};
static zn_result count_sink(void *ctx, const void *d, size_t n)
{
	struct collect *c = ctx;
	(void)d;
	c->len += n, c->calls++;
	return c->len > c->cap ? ZN_ERR_LIMIT : ZN_OK;
}

static void check_open_fails(const struct tu_buf *b, zn_result want, const char *what)
{
	struct zn_zip *z = (void *)1;
	char why[160] = "";
	zn_result r = zn_zip_open_memory(&z, b->p, b->len, why);
	if (r != want)
		fprintf(stderr, "%s: got %s (%s)\n", what, zn_result_name(r), why);
	CHECK(r == want);
	CHECK(z == NULL);
	CHECK(why[0]);
}

/* Deflate entries whose declared size is not the data's. */
static void check_declared_sizes(const uint8_t *text, uint8_t *got, size_t cap)
{
	struct zn_zip *z;
	char why[160];
	/* Declared smaller than the data: never more than declared is passed on. */
	struct ent small[] = {{"t", text, 100000, 8, 5000, 0}};
	struct tu_buf bs = build(small, 1, "", 0);
	CHECK_OK(zn_zip_open_memory(&z, bs.p, bs.len, why));
	struct collect col = {0, 5000, 0};
	CHECK(zn_zip_read(z, 0, count_sink, &col) == ZN_ERR_LENGTH_MISMATCH);
	CHECK(col.len <= 5000);
	zn_zip_free(z);
	free(bs.p);
	/* Declared far larger than deflate can make of the data: damaged, read refused. */
	struct ent huge[] = {{"t", (const uint8_t *)"aaaa", 4, 8, 0xfffffff0u, 0}};
	struct tu_buf bh = build(huge, 1, "", 0);
	CHECK_OK(zn_zip_open_memory(&z, bh.p, bh.len, why));
	CHECK(zn_zip_entry_damage(z, 0, why) == ZN_ERR_LIMIT);
	CHECK(zn_zip_read_to(z, 0, got, cap) != ZN_OK);
	zn_zip_free(z);
	free(bh.p);
}

/* bzip2 and zstd entries: read back exactly, a zstd entry of 32 MiB or more streamed; damaged
 * data, and declared sizes that are not the data's, refused with never more than declared
 * passed on; the other entries unharmed. */
static void check_bzip2_zstd(const uint8_t *text, const uint8_t *rnd, size_t len, uint8_t *got)
{
	size_t long_len = (size_t)33 << 20;
	uint8_t *lng = malloc(long_len);
	for (size_t i = 0; i < long_len; i++)
		lng[i] = text[i % 100000] ^ (uint8_t)(i >> 17);
	struct ent m[] = {
	        {"b.txt", text, len, 12, 0, 0},
	        {"z.txt", text, len, 93, 0, 0},
	        {"z.bin", rnd, len, 93, 0, 0},
	        {"b-empty", (const uint8_t *)"", 0, 12, 0, 0},
	        {"z-empty", (const uint8_t *)"", 0, 93, 0, 0},
	        {"z.long", lng, long_len, 93, 0, 0},
	        {"b.short", text, 100000, 12, 5000, 0},
	        {"z.short", text, 100000, 93, 5000, 0},
	        {"z.long-declared", text, 1000, 93, 3000, 0},
	        {"z.bomb", (const uint8_t *)"aaaa", 4, 93, 0xfffffff0u, 0},
	};
	enum { N = sizeof(m) / sizeof(m[0]) };
	struct tu_buf b = build(m, N, "", 0);
	struct zn_zip *z;
	char why[160];
	CHECK_OK(zn_zip_open_memory(&z, b.p, b.len, why));
	for (int i = 0; i < 5; i++) {
		struct zn_zip_entry en = {.struct_size = sizeof(en)};
		CHECK_OK(zn_zip_entry(z, (uint64_t)i, &en));
		CHECK(en.supported && en.method == m[i].method);
		CHECK_OK(zn_zip_read_to(z, (uint64_t)i, got, len));
		CHECK(!memcmp(got, m[i].data, m[i].len));
	}
	struct collect col = {0, long_len, 0};
	CHECK_OK(zn_zip_read(z, 5, count_sink, &col)); /* streamed; the CRC-32 checked */
	CHECK_EQ_U64(col.len, long_len);
	CHECK(col.calls > 1);
	for (int i = 6; i < 9; i++) {
		col = (struct collect){0, m[i].size_as, 0};
		CHECK(zn_zip_read(z, (uint64_t)i, count_sink, &col) == ZN_ERR_LENGTH_MISMATCH);
		CHECK(col.len <= m[i].size_as);
	}
	CHECK(zn_zip_entry_damage(z, 9, why) == ZN_ERR_LIMIT);
	CHECK(zn_zip_read_to(z, 9, got, len) != ZN_OK);
	/* A byte flipped in the middle of each entry's data: refused, never a crash. */
	uint64_t at[2];
	for (int i = 0; i < 2; i++) {
		struct zn_zip_entry en = {.struct_size = sizeof(en)};
		CHECK_OK(zn_zip_entry(z, (uint64_t)i, &en));
		at[i] = en.offset + en.csize / 2;
	}
	zn_zip_free(z);
	for (int i = 0; i < 2; i++) {
		b.p[at[i]] ^= 0x10;
		CHECK_OK(zn_zip_open_memory(&z, b.p, b.len, why));
		CHECK(zn_zip_read_to(z, (uint64_t)i, got, len) != ZN_OK);
		CHECK_OK(zn_zip_read_to(z, 2, got, len));
		zn_zip_free(z);
		b.p[at[i]] ^= 0x10;
	}
	free(b.p), free(lng);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_zip");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	size_t big_len = 300000 + tu_rng_below(&g, 100000);
	uint8_t *big = malloc(big_len), *text = malloc(big_len);
	tu_rng_fill(&g, big, big_len);
	for (size_t i = 0; i < big_len; i++)
		text[i] = (uint8_t) "abcab\n"[tu_rng_below(&g, 6)];
	struct ent e[] = {
	        {"a/random.bin", big, big_len, 0, 0, 0},
	        {"a/text.txt", text, big_len, 8, 0, 0},
	        {"empty", (const uint8_t *)"", 0, 8, 0, 0},
	        {"dir/", (const uint8_t *)"", 0, 0, 0, 0},
	};
	struct tu_buf b = build(e, 4, "hello", 5);

	/* The archive inside a bigger buffer (a jar in a war): open on the byte range. */
	uint8_t *outer = malloc(b.len + 1000);
	memset(outer, 'P', b.len + 1000);
	memcpy(outer + 500, b.p, b.len);
	struct zn_zip *z;
	char why[160];
	CHECK_OK(zn_zip_open_memory(&z, outer + 500, b.len, why));
	CHECK_EQ_U64(zn_zip_count(z), 4);
	CHECK_EQ_U64(zn_zip_prefix(z), 0);
	const char *c;
	size_t clen;
	zn_zip_comment(z, &c, &clen);
	CHECK(clen == 5 && !memcmp(c, "hello", 5));
	uint64_t i;
	CHECK_OK(zn_zip_find(z, "a/text.txt", 10, &i));
	CHECK_EQ_U64(i, 1);
	CHECK(zn_zip_find(z, "a/text.tx", 9, &i) == ZN_ERR_NOT_FOUND);
	CHECK(zn_zip_find(z, "zzz", 3, &i) == ZN_ERR_NOT_FOUND);
	struct zn_zip_entry en = {.struct_size = sizeof(en)};
	CHECK_OK(zn_zip_entry(z, 1, &en));
	CHECK(en.method == 8 && en.size == big_len && en.type == ZN_TYPE_FILE && en.supported);
	CHECK(en.mode == 0644 && en.unix_mode);
	CHECK_OK(zn_zip_entry(z, 3, &en));
	CHECK(en.type == ZN_TYPE_DIR);
	uint8_t *got = tu_guard_alloc(big_len);
	CHECK_OK(zn_zip_read_to(z, 1, got, big_len));
	CHECK(!memcmp(got, text, big_len));
	CHECK_OK(zn_zip_read_to(z, 0, got, big_len));
	CHECK(!memcmp(got, big, big_len));
	CHECK(zn_zip_read_to(z, 1, got, big_len - 1) == ZN_ERR_OUTPUT_FULL);
	CHECK_OK(zn_zip_read_to(z, 2, NULL, 0));
	struct collect col = {0, big_len, 0};
	CHECK_OK(zn_zip_read(z, 1, count_sink, &col));
	CHECK_EQ_U64(col.len, big_len);
	zn_zip_free(z);

	/* A prefix (a stub) the offsets do not count. */
	struct tu_buf p = {0};
	tu_put(&p, "#!/bin/sh stub\n", 15);
	tu_put(&p, b.p, b.len);
	CHECK_OK(zn_zip_open_memory(&z, p.p, p.len, why));
	CHECK_EQ_U64(zn_zip_prefix(z), 15);
	CHECK_OK(zn_zip_read_to(z, 1, got, big_len));
	CHECK(!memcmp(got, text, big_len));
	zn_zip_free(z);
	free(p.p);

	/* A comment of 65535 bytes holding a false end record: the real one is found. */
	char *cm = malloc(65535);
	memset(cm, ' ', 65535);
	memcpy(cm + 100, "PK\x05\x06", 4);
	struct tu_buf bc = build(e, 4, cm, 65535);
	CHECK_OK(zn_zip_open_memory(&z, bc.p, bc.len, why));
	CHECK_EQ_U64(zn_zip_count(z), 4);
	zn_zip_free(z);
	free(bc.p);

	check_declared_sizes(text, got, big_len);
	check_bzip2_zstd(text, big, big_len, got);

	/* Two entries sharing one local header: the overlap is refused at open. */
	struct ent ov[] = {{"x", text, 1000, 8, 0, 0}, {"y", text, 1000, 8, 0, 1}};
	struct tu_buf bo = build(ov, 2, "", 0);
	check_open_fails(&bo, ZN_ERR_CORRUPT, "overlap");
	free(bo.p);
	/* More entries claimed than the directory can hold. */
	struct tu_buf bn = build(e, 1, "", 0);
	bn.p[bn.len - 22 + 8] = 0xff, bn.p[bn.len - 22 + 10] = 0xff;
	check_open_fails(&bn, ZN_ERR_CORRUPT, "count");
	free(bn.p);
	/* Not a ZIP, and every truncation of a good one: refused or read, never a crash. */
	struct tu_buf nz = {0};
	tu_put(&nz, text, 5000);
	check_open_fails(&nz, ZN_ERR_CORRUPT, "not a zip");
	free(nz.p);
	for (size_t cut = 0; cut < b.len; cut += 1 + cut / 7) {
		if (zn_zip_open_memory(&z, b.p, cut, why) == ZN_OK) {
			for (uint64_t k = 0; k < zn_zip_count(z); k++)
				(void)zn_zip_read_to(z, k, got, big_len);
			zn_zip_free(z);
		}
	}
	/* A local header whose name differs: that entry is damaged, the others read. */
	struct tu_buf bd = build(e, 4, "", 0);
	bd.p[30] ^= 1; /* first entry's local name */
	CHECK_OK(zn_zip_open_memory(&z, bd.p, bd.len, why));
	CHECK(zn_zip_entry_damage(z, 0, why) == ZN_ERR_CORRUPT);
	CHECK(zn_zip_read_to(z, 0, got, big_len) == ZN_ERR_CORRUPT);
	CHECK_OK(zn_zip_read_to(z, 1, got, big_len));
	zn_zip_free(z);
	free(bd.p);

	tu_guard_free(got, big_len);
	free(b.p), free(outer), free(cm), free(big), free(text);
	puts("test_zip: all passed");
	return 0;
}
