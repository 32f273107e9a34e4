/* SPDX-License-Identifier: MIT */
/* test_zstd_edge.c - frames written byte by byte: every header form, raw/RLE/compressed blocks,
 * skippable and concatenated frames, the repeat-offset rules, and each kind of damage a decoder
 * must refuse (with libzstd as the referee wherever it decodes the same frame). */
#include <xxhash.h>

#include "zstd_test_frames.h"
#include "zstd_test_util.h"

#define CAP (1u << 20)

static struct zn_zstd_decoder *d;
static uint8_t *out, *ref;

/* Decode f whole and streaming (in pieces of 1..7 bytes): both must give `want`; on success
 * the output is libzstd's. `ref_ok`: whether libzstd decodes it (1), refuses it (0), or is not
 * asked (-1: it decodes some malformed frames that RFC 8878 calls corrupt, noted per case). */
static size_t expect(const struct zf *f, zn_result want, int ref_ok, const char *what)
{
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	uint8_t *in = tu_guard_alloc(f->len);
	if (f->len)
		memcpy(in, f->p, f->len);
	zn_result r = zn_zstd_decompress(d, in, f->len, out, CAP, &info);
	size_t rn = ZSTD_decompress(ref, CAP, in, f->len);
	tu_guard_free(in, f->len);
	if (r != want || (ref_ok >= 0 && (!ZSTD_isError(rn)) != ref_ok)) {
		fprintf(stderr, "%s: whole: %s (want %s); libzstd: %s\n", what, zn_result_name(r),
		        zn_result_name(want), ZSTD_isError(rn) ? ZSTD_getErrorName(rn) : "ok");
		CHECK(0);
	}
	if (r == ZN_OK && ref_ok == 1) {
		if (info.out_len != rn)
			fprintf(stderr, "%s: whole: %llu bytes, libzstd %zu\n", what,
			        (unsigned long long)info.out_len, rn);
		CHECK_EQ_U64(info.out_len, rn);
		CHECK(!memcmp(out, ref, rn));
	}
	struct tu_rng g;
	tu_rng_seed(&g, f->len);
	uint8_t *so;
	size_t slen;
	zn_result rs = zt_stream(d, f->p, f->len, &g, 7, &so, &slen);
	if (rs != want) {
		fprintf(stderr, "%s: streaming: %s (want %s)\n", what, zn_result_name(rs),
		        zn_result_name(want));
		CHECK(0);
	}
	if (r == ZN_OK)
		CHECK(slen == info.out_len && !memcmp(so, out, slen));
	free(so);
	return info.out_len;
}

static void reset(struct zf *f)
{
	f->len = 0;
	f->acc = 0;
	f->nbits = 0;
}

static void headers(struct zf *f)
{
	uint8_t data[300];
	for (int i = 0; i < 300; i++)
		data[i] = (uint8_t)(i * 7);
	/* Empty input, an empty frame (single segment, size 0, one empty raw block). */
	reset(f);
	CHECK(expect(f, ZN_OK, 1, "empty input") == 0);
	zf_header(f, 1, 0, 0, 0, 0, 0, 0);
	zf_raw_block(f, 1, data, 0);
	CHECK(expect(f, ZN_OK, 1, "empty frame") == 0);
	/* Content-size fields of 2 (256 added), 4 and 8 bytes (1 byte: below), window descriptors
	 * with mantissas, dictionary ID fields of value 0. */
	static const unsigned fcs_bytes[] = {2, 2, 4, 8}, did_bytes[] = {0, 1, 2, 4};
	for (int k = 0; k < 4; k++) {
		reset(f);
		zf_header(f, !(k & 1), 300, fcs_bytes[k], 0x07, 0, did_bytes[k], 1);
		zf_raw_block(f, 0, data, 100);
		zf_rle_block(f, 0, 0xab, 50);
		zf_raw_block(f, 1, data + 150, 150);
		uint64_t h;
		uint8_t all[300];
		memcpy(all, data, 100);
		memset(all + 100, 0xab, 50);
		memcpy(all + 150, data + 150, 150);
		h = XXH64(all, 300, 0);
		zf_le(f, h, 4);
		CHECK(expect(f, ZN_OK, 1, "header forms") == 300);
		CHECK(!memcmp(out, all, 300));
		f->p[f->len - 1] ^= 1;
		expect(f, ZN_ERR_CHECKSUM, 0, "bad checksum");
	}
	/* No content size; windows from the smallest (1 KiB) with each mantissa. */
	for (unsigned wd = 0; wd < 16; wd++) {
		reset(f);
		zf_header(f, 0, ZF_NO_SIZE, 0, wd, 0, 0, 0);
		zf_rle_block(f, 0, 1, 1024);
		zf_raw_block(f, 1, data, wd < 8 ? 0 : 256);
		expect(f, ZN_OK, 1, "small windows");
	}
	/* The reserved bit; a reserved block type; a block over the window (1 KiB); a window
	 * over windowLog 31; a content size that does not match. */
	reset(f);
	zf_header(f, 1, 1, 0, 0, 0, 0, 0);
	f->p[4] |= 8;
	zf_raw_block(f, 1, data, 1);
	expect(f, ZN_ERR_UNSUPPORTED, 0, "reserved bit");
	reset(f);
	zf_header(f, 1, 1, 0, 0, 0, 0, 0);
	zf_block_header(f, 1, 3, 1);
	zf_byte(f, 0);
	expect(f, ZN_ERR_CORRUPT, 0, "reserved block type");
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
	zf_rle_block(f, 1, 1, 1025);
	/* RFC 8878 3.1.1.2.4: Block_Maximum_Size applies to the decompressed size too; libzstd
	 * 1.5.4 checks it for compressed blocks only. */
	expect(f, ZN_ERR_CORRUPT, -1, "block over a 1 KiB window");
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 22 << 3, 0, 0, 0);
	zf_rle_block(f, 1, 1, 10);
	expect(f, ZN_ERR_LIMIT, 0, "windowLog 32");
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 7 << 3, 0, 0, 0);
	zf_rle_block(f, 1, 1, 131073);
	expect(f, ZN_ERR_CORRUPT, -1, "block over 128 KiB"); /* an RLE block: as above */
	for (int delta = -1; delta <= 1; delta += 2) {
		reset(f);
		zf_header(f, 0, (uint64_t)(300 + delta), 2, 0x10, 0, 0, 0);
		zf_raw_block(f, 0, data, 100);
		zf_raw_block(f, 1, data, 200);
		expect(f, ZN_ERR_CORRUPT, 0, "content size mismatch");
	}
	/* A dictionary ID without the dictionary. */
	reset(f);
	zf_header(f, 1, 5, 1, 0, 1234, 2, 0);
	zf_raw_block(f, 1, data, 5);
	expect(f, ZN_ERR_DICTIONARY, 0, "missing dictionary");
}

static void frames(struct zf *f)
{
	uint8_t data[64];
	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)i;
	/* Skippable frames of every magic, sizes 0 and more, around and between frames. */
	reset(f);
	for (unsigned m = 0; m < 16; m++) {
		zf_le(f, 0x184D2A50u + m, 4);
		zf_le(f, m * 3, 4);
		for (unsigned i = 0; i < m * 3; i++)
			zf_byte(f, 0xee);
		if (m % 4 == 1) {
			zf_header(f, 1, 10, 1, 0, 0, 0, 0);
			zf_raw_block(f, 1, data + m, 10);
		}
	}
	CHECK(expect(f, ZN_OK, 1, "skippable frames") == 40);
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	CHECK_OK(zn_zstd_decompress(d, f->p, f->len, out, CAP, &info));
	CHECK_EQ_U64(info.frames, 4);
	/* Only skippable frames: no output, fine. */
	reset(f);
	zf_le(f, 0x184D2A5Fu, 4);
	zf_le(f, 0, 4);
	CHECK(expect(f, ZN_OK, 1, "one empty skippable frame") == 0);
	/* A skippable frame cut short; a frame cut at every length. */
	zf_le(f, 0x184D2A50u, 4);
	zf_le(f, 100, 4);
	zf_bytes(f, data, 50);
	expect(f, ZN_ERR_TRUNCATED, 0, "truncated skippable frame");
	reset(f);
	zf_header(f, 1, 20, 1, 0, 0, 0, 1);
	zf_raw_block(f, 0, data, 10);
	zf_rle_block(f, 1, 7, 10);
	uint8_t all[20];
	memcpy(all, data, 10);
	memset(all + 10, 7, 10);
	zf_le(f, XXH64(all, 20, 0), 4);
	size_t whole = f->len;
	for (size_t cut = 1; cut < whole; cut++) {
		f->len = cut;
		expect(f, ZN_ERR_TRUNCATED, 0, "truncated frame");
	}
	/* Bytes after a frame: garbage (the output before it complete), or the start of a magic
	 * number (truncated). */
	f->len = whole;
	zf_byte(f, 0x28);
	expect(f, ZN_ERR_TRUNCATED, 0, "a partial magic number after a frame");
	f->len = whole;
	zf_le(f, 0x12345678, 4);
	CHECK(zn_zstd_decompress(d, f->p, f->len, out, CAP, &info) == ZN_ERR_TRAILING_GARBAGE);
	CHECK_EQ_U64(info.in_used, whole);
	CHECK_EQ_U64(info.out_len, 20);
	CHECK_EQ_U64(info.frames, 1);
	expect(f, ZN_ERR_TRAILING_GARBAGE, 0, "garbage after a frame");
	uint64_t pos;
	zn_zstd_stream_position(d, &pos, NULL);
	CHECK_EQ_U64(pos, whole);
	reset(f);
	zf_le(f, 0x12345678, 4);
	expect(f, ZN_ERR_BAD_HEADER, 0, "no frame");
	reset(f);
	zf_byte(f, 0x51);
	zf_byte(f, 0x2a);
	expect(f, ZN_ERR_TRUNCATED, 0, "a partial skippable magic");
}

/* Literals "abcdefgh..." then matches: the repeat-offset rules of RFC 8878 3.1.1.5, checked
 * against libzstd. */
static void repeats(struct zf *f)
{
	static uint8_t lit[40000];
	for (size_t i = 0; i < sizeof(lit); i++)
		lit[i] = (uint8_t)(i * 37 + (i >> 8));
	/* Repeat codes 1..3 with literals (each one block, RLE tables share the codes: code 1
	 * for Offset_Value 2..3, code 0 for 1). */
	for (uint32_t ofv = 1; ofv <= 3; ofv++) {
		for (uint32_t ll = 0; ll <= 1; ll++) {
			reset(f);
			zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
			/* First block: establish offsets 5, 9, 20 (newest first: 20, 9, 5). */
			struct zf_seq set[3] = {{20, 4, 5 + 3}, {4, 4, 9 + 3}, {4, 4, 20 + 3}};
			zf_seq_block(f, 0, lit, 40, set, 1);
			struct zf_seq s2[1] = {{4, 5, 9 + 3}};
			zf_seq_block(f, 0, lit + 20, 8, s2, 1);
			struct zf_seq s3[1] = {{4, 6, 20 + 3}};
			zf_seq_block(f, 0, lit + 28, 8, s3, 1);
			/* The repeat: with one literal or none. */
			struct zf_seq r[2] = {{ll, 7, ofv}, {ll, 7, ofv}};
			zf_seq_block(f, 1, lit + 40, ll * 2, r, 2);
			char what[64];
			snprintf(what, sizeof(what), "repeat code %u, %u literal(s)", ofv, ll);
			expect(f, ZN_OK, 1, what);
		}
	}
	/* Offset_Value 3 with no literals is the newest offset minus one: 0 when that is 1. */
	reset(f);
	zf_header(f, 1, 100, 1, 0, 0, 0, 0);
	struct zf_seq z1[2] = {{4, 10, 1 + 3}, {0, 10, 3}};
	zf_seq_block(f, 0, lit, 4, z1, 1);
	zf_seq_block(f, 1, lit, 0, z1 + 1, 1);
	expect(f, ZN_ERR_CORRUPT, 0, "offset 1 - 1");
	/* Sequences past the literals, offsets before the start of the frame, a match beyond the
	 * window (legal distance in the output, but more than Window_Size back). */
	reset(f);
	zf_header(f, 1, 100, 1, 0, 0, 0, 0);
	struct zf_seq o1[1] = {{10, 4, 1 + 3}};
	zf_seq_block(f, 1, lit, 9, o1, 1);
	expect(f, ZN_ERR_CORRUPT, 0, "literal length past the literals");
	reset(f);
	zf_header(f, 1, 100, 1, 0, 0, 0, 0);
	struct zf_seq o2[1] = {{4, 4, 5 + 3}};
	zf_seq_block(f, 1, lit, 4, o2, 1);
	expect(f, ZN_ERR_CORRUPT, 0, "offset before the frame");
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0); /* 1 KiB window */
	zf_raw_block(f, 0, lit, 256);
	zf_rle_block(f, 0, 9, 1000);
	struct zf_seq o3[1] = {{0, 4, 1200 + 3}};
	zf_seq_block(f, 1, lit, 0, o3, 1);
	expect(f, ZN_ERR_CORRUPT, -1, "offset beyond the window"); /* libzstd decodes it */
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
	zf_raw_block(f, 0, lit, 256);
	zf_rle_block(f, 0, 9, 1000);
	struct zf_seq o4[1] = {{0, 4, 1024 + 3}};
	zf_seq_block(f, 1, lit, 0, o4, 1);
	expect(f, ZN_OK, 1, "offset of exactly the window");
	/* Many sequences (the 2- and 3-byte counts), long lengths with extra bits, overlapping
	 * matches of every period 1..40. */
	static struct zf_seq many[40000];
	for (uint32_t n = 127; n <= 33000; n = n * 4 + 1) {
		reset(f);
		zf_header(f, 0, ZF_NO_SIZE, 0, 0x58, 0, 0, 1);
		for (uint32_t i = 0; i < n; i++)
			many[i] = (struct zf_seq){1, 3, 1 + 3};
		zf_seq_block(f, 1, lit, n, many, n);
		/* no checksum value was written: the frame is cut before it */
		f->p[4] &= (uint8_t)~4;
		expect(f, ZN_OK, 1, "sequence counts");
	}
	for (uint32_t period = 1; period <= 40; period++) {
		reset(f);
		zf_header(f, 0, ZF_NO_SIZE, 0, 0x38, 0, 0, 0);
		struct zf_seq s[2] = {{period, 100000, period + 3}, {0, 65539 + 1000, period + 3}};
		zf_seq_block(f, 0, lit, period, s, 1);
		zf_seq_block(f, 1, lit, 0, s + 1, 1);
		expect(f, ZN_OK, 1, "long overlapping matches");
	}
	/* A block whose sequences write more than 128 KiB. */
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0x58, 0, 0, 0);
	zf_raw_block(f, 0, lit, 1);
	struct zf_seq big[2] = {{0, 65539 + 60000, 1 + 3}, {0, 65539 + 60000, 1 + 3}};
	zf_seq_block(f, 1, lit, 0, big, 2);
	expect(f, ZN_ERR_CORRUPT, 0, "block output over 128 KiB");
}

static void tables(struct zf *f)
{
	uint8_t lit[64];
	memset(lit, 'x', sizeof(lit));
	struct zf_seq s[1] = {{4, 4, 4 + 3}};
	/* Repeat_Mode after an RLE table repeats it; without a previous table it is corrupt. */
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
	zf_seq_block(f, 0, lit, 8, s, 1);
	zf_seq_block_modes(f, 1, lit, 8, s, 1, 0xfc);
	expect(f, ZN_OK, 1, "Repeat_Mode after RLE");
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
	zf_seq_block_modes(f, 1, lit, 8, s, 1, 0x5c);
	expect(f, ZN_ERR_CORRUPT, 0, "Repeat_Mode without a table");
	/* Reserved bits of the modes byte; no sequences with bytes after the count; literals
	 * only (no sequences). */
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
	zf_seq_block_modes(f, 1, lit, 8, s, 1, 0x55);
	expect(f, ZN_ERR_CORRUPT, -1, "reserved mode bits"); /* libzstd 1.5.4 ignores them */
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
	zf_seq_block(f, 1, lit, 30, s, 0);
	CHECK(expect(f, ZN_OK, 1, "literals only") == 30);
	/* After one raw literal: bytes after an empty sequences section, and no sequences counted
	 * in the 2-byte form, 0x80 0x00 (a fuzzer's find: libzstd then wants a modes byte, and
	 * refuses the block without one). */
	static const struct {
		uint8_t n, b[3];
		const char *what;
	} empty[] = {{3, {0, 0, 0}, "bytes after an empty sequences section"},
	             {2, {0x80, 0}, "no sequences in the 2-byte count"}};
	for (size_t k = 0; k < sizeof(empty) / sizeof(empty[0]); k++) {
		reset(f);
		zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
		zf_block_header(f, 1, 2, 2u + empty[k].n);
		zf_byte(f, 1 << 3); /* raw literals, 1 byte */
		zf_byte(f, 'q');
		zf_bytes(f, empty[k].b, empty[k].n);
		expect(f, ZN_ERR_CORRUPT, 0, empty[k].what);
	}
	/* Treeless literals with no Huffman table yet. */
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
	zf_block_header(f, 1, 2, 5);
	zf_le(f, 3 | 0 << 2 | 4u << 4 | 1u << 14, 3);
	zf_byte(f, 0x80);
	zf_byte(f, 0);
	expect(f, ZN_ERR_CORRUPT, 0, "treeless literals first");
	/* A sequence bitstream with bits left over, and one read past its start. */
	reset(f);
	zf_header(f, 0, ZF_NO_SIZE, 0, 0, 0, 0, 0);
	struct zf_seq x[1] = {{4, 4, 7 + 3}};
	zf_seq_block(f, 1, lit, 8, x, 1);
	f->p[f->len - 1] = 0x02; /* the marker one bit higher: one unread bit */
	expect(f, ZN_ERR_CORRUPT, 0, "unread sequence bits");
	f->p[f->len - 1] = 0x80; /* the marker at the top: too few bits */
	expect(f, ZN_ERR_CORRUPT, -1, "sequence bits read past the start");
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_zstd_edge");
	CHECK_OK(zn_zstd_decoder_new(&d));
	out = malloc(CAP);
	ref = malloc(CAP);
	struct zf f = {0};
	for (int k = 0; k < 2; k++) {
		headers(&f);
		frames(&f);
		repeats(&f);
		tables(&f);
		zn_zstd_decoder_force_generic(d);
	}
	free(f.p);
	free(out);
	free(ref);
	zn_zstd_decoder_free(d);
	puts("ok");
	return 0;
}
