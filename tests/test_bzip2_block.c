/* SPDX-License-Identifier: MIT */
/* test_bzip2_block.c - the bzip2 decoder's pieces against references: the randomisation table
 * and the CRC against libbz2's and the bitwise definition, every magic scanner against a
 * brute-force search at every bit, every symbol loop variant, resumable RLE1, and blocks of the
 * test encoder (randomised, 6 tables, long, incomplete and over-subscribed codes, extra
 * selectors) against libbz2. */
#include <bzlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bzip2/bzip2_internal.h"
#include "bzip2_encode.h"
#include "common/cpu_features.h"
#include "test_util.h"

extern const int BZ2_rNums[512]; /* libbz2's copy of the table */

static struct tu_rng rng;

static void test_rand_table(void)
{
	for (int i = 0; i < 512; i++)
		CHECK_EQ_U64(zn_bz2_rand_table[i], BZ2_rNums[i]);
}

static void test_crc(void)
{
	uint8_t buf[3000];
	tu_rng_fill(&rng, buf, sizeof(buf));
	zn_bz2_crc_fn best = zn_bz2_select_crc(zn_cpu_features());
	for (size_t n = 0; n < sizeof(buf); n += 1 + n / 7)
		for (size_t off = 0; off < 9; off += 4) {
			uint32_t want = ~bze_crc(~0u, buf + off, n - (n > off ? off : n));
			size_t len = n - (n > off ? off : n);
			CHECK_EQ_U64(~zn_bz2_crc_generic(~0u, buf + off, len), want);
			CHECK_EQ_U64(~best(~0u, buf + off, len), want);
		}
	/* chaining */
	CHECK_EQ_U64(zn_bz2_crc_generic(zn_bz2_crc_generic(~0u, buf, 1000), buf + 1000, 999),
	             zn_bz2_crc_generic(~0u, buf, 1999));
}

/* Every bit position where the magic starts in in[0..len) (bytes of start < len). */
static size_t brute_scan(const uint8_t *in, size_t len, size_t avail, uint64_t *pos)
{
	size_t n = 0;
	for (uint64_t bit = 0; bit < 8 * (uint64_t)len; bit++) {
		if (bit + 48 > 8 * (uint64_t)avail)
			break;
		uint64_t v = 0;
		for (unsigned k = 0; k < 48; k++) {
			uint64_t b = bit + k;
			v = v << 1 | ((in[b / 8] >> (7 - b % 8)) & 1);
		}
		if (v == BZ2_BLOCK_MAGIC)
			pos[n++] = bit;
	}
	return n;
}

/* Write the magic at bit `bit`. */
static void put_magic(uint8_t *in, uint64_t bit)
{
	for (unsigned k = 0; k < 48; k++) {
		uint64_t b = bit + k;
		unsigned v = (BZ2_BLOCK_MAGIC >> (47 - k)) & 1;
		in[b / 8] = (uint8_t)((in[b / 8] & ~(0x80u >> (b % 8))) | (v << (7 - b % 8)));
	}
}

static void test_scan(uint32_t features)
{
	zn_bz2_scan_fn scan = zn_bz2_select_scan(features, NULL);
	enum { LEN = 4000 };
	uint8_t *in = tu_guard_alloc(LEN);
	uint64_t want[LEN], got[LEN];
	for (int round = 0; round < 40; round++) {
		tu_rng_fill(&rng, in, LEN);
		unsigned magics = (unsigned)tu_rng_below(&rng, 30);
		for (unsigned m = 0; m < magics; m++) {
			uint64_t bit = round % 3 == 0 && m < 8 ? 8 * (LEN - 7) + m - 7 * (m > 3)
			                                       : tu_rng_below(&rng, 8 * LEN - 48);
			put_magic(in, bit);
		}
		size_t len = round % 2 ? LEN : LEN - tu_rng_below(&rng, 40);
		size_t nw = brute_scan(in, len, LEN, want);
		size_t cap = round % 4 ? LEN : 1 + tu_rng_below(&rng, 3), ng = 0, at = 0;
		while (at < len) { /* in pieces of at most cap candidates, resuming */
			size_t resume,
			        k = scan(in + at, len - at, LEN - at, got + ng, cap, &resume);
			CHECK(k <= cap);
			for (size_t i = ng; i < ng + k; i++)
				got[i] += 8 * (uint64_t)at;
			ng += k;
			CHECK(resume > 0 || k > 0);
			at += resume;
		}
		CHECK_EQ_U64(ng, nw);
		for (size_t i = 0; i < nw; i++)
			CHECK_EQ_U64(got[i], want[i]);
	}
	tu_guard_free(in, LEN);
}

/* Decode a whole stream (one or more) block by block with the kernels for `features`. Returns the
 * output length, or -1 on any failure. */
static long decode_blocks(const uint8_t *in, size_t len, uint32_t features, uint8_t *out,
                          size_t cap)
{
	static struct bz2_block b;
	static int ready;
	if (ready)
		zn_bz2_block_free(&b);
	CHECK_OK(zn_bz2_block_init(&b, features));
	ready = 1;
	size_t o = 0;
	uint64_t pos = 0;
	while (pos / 8 < len) {
		if (pos / 8 + 4 > len || memcmp(in + pos / 8, "BZh", 3))
			return -1;
		uint32_t level = in[pos / 8 + 3] - '0';
		pos += 32;
		uint32_t combined = 0;
		for (;;) {
			if (pos / 8 + 10 > len)
				return -1;
			uint64_t w = 0;
			for (int i = 0; i < 8; i++)
				w = w << 8 | (pos / 8 + i < len ? in[pos / 8 + i] : 0);
			w = w << (pos % 8) >> 16;
			if (w == BZ2_EOS_MAGIC) {
				uint64_t c = 0;
				for (int i = 0; i < 8; i++)
					c = c << 8 |
					    (pos / 8 + 6 + i < len ? in[pos / 8 + 6 + i] : 0);
				if ((uint32_t)(c << (pos % 8) >> 32) != combined)
					return -1;
				pos = (pos + 80 + 7) & ~(uint64_t)7;
				break;
			}
			if (zn_bz2_read_block(&b, in, len, pos, level * 100000u) != ZN_OK)
				return -1;
			if (zn_bz2_unsort(&b) != ZN_OK || o + b.out_len > cap)
				return -1;
			/* In random pieces, as a streaming reader would. */
			struct bz2_rle1 r;
			zn_bz2_rle1_start(&r, b.ll, b.n);
			size_t got, start = o;
			while ((got = zn_bz2_rle1_expand(
			                &r, out + o, 1 + (size_t)tu_rng_below(&rng, 70000))) > 0)
				o += got;
			CHECK_EQ_U64(o - start, b.out_len);
			uint32_t crc = ~b.k.crc(~0u, out + start, o - start);
			if (crc != b.crc)
				return -1;
			combined = (combined << 1 | combined >> 31) ^ crc;
			pos = b.end_bit;
		}
	}
	return (long)o;
}

/* libbz2's whole-buffer decode of one stream; -1 on failure. */
static long libbz2_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
	unsigned n = (unsigned)cap;
	int r = BZ2_bzBuffToBuffDecompress((char *)out, &n, (char *)in, (unsigned)len, 0, 0);
	return r == BZ_OK ? (long)n : -1;
}

static const uint32_t feature_sets[] = {0, ZN_CPU_SSE2 | ZN_CPU_SSSE3,
                                        ZN_CPU_SSE2 | ZN_CPU_SSSE3 | ZN_CPU_BMI2, ZN_CPU_NEON};

/* in[0..n) compressed by the test encoder with o, decoded by libbz2 and by every variant. */
static void check_encoded(const uint8_t *in, size_t n, const struct bze_opts *o, int must_decode)
{
	uint8_t *bz;
	size_t bzlen = bze_encode(in, n, o, zn_bz2_rand_table, &bz);
	size_t cap = n + 1000;
	uint8_t *ref = malloc(cap), *got = malloc(cap);
	long nref = libbz2_decode(bz, bzlen, ref, cap);
	if (must_decode) {
		if (nref != (long)n)
			fprintf(stderr,
			        "libbz2 %ld of %zu bytes: level %d block %u rand %d groups %d "
			        "rot %d extra %u fixed %d\n",
			        nref, n, o->level, o->block, o->randomise, o->ngroups,
			        o->rotate_selectors, o->extra_selectors, o->fixed_len);
		CHECK(nref == (long)n);
		CHECK(!memcmp(ref, in, n));
	}
	for (size_t f = 0; f < sizeof(feature_sets) / sizeof(feature_sets[0]); f++) {
		uint32_t feat = feature_sets[f] & zn_cpu_features();
		long ngot = decode_blocks(bz, bzlen, feat, got, cap);
		CHECK_EQ_U64(ngot, nref);
		if (nref >= 0)
			CHECK(!memcmp(got, ref, (size_t)nref));
	}
	/* and the parallel decoder (on one thread, inline, where threads are not to start) */
	struct zn_bunzip2_options bo;
	zn_bunzip2_options_init(&bo);
	if (tu_no_threads)
		bo.threads = 1;
	struct zn_bunzip2_info info;
	zn_bunzip2_info_init(&info);
	zn_result r = zn_bunzip2_mem(&bo, bz, bzlen, NULL, NULL, &info);
	CHECK((r == ZN_OK) == (nref >= 0));
	if (r == ZN_OK)
		CHECK_EQ_U64(info.out_len, nref);
	free(bz), free(ref), free(got);
}

static int all_ones(uint8_t *lens, unsigned alpha, void *ctx)
{
	(void)ctx;
	memset(lens, 1, alpha); /* over-subscribed: every code 1 bit */
	return 0;
}

static int random_lengths(uint8_t *lens, unsigned alpha, void *ctx)
{
	struct tu_rng *g = ctx;
	for (unsigned s = 0; s < alpha; s++)
		lens[s] = (uint8_t)(1 + tu_rng_below(g, 20));
	return 0;
}

static void test_encoder_blocks(void)
{
	enum { N = 6000 };
	uint8_t *text = malloc(N), *runs = malloc(N), *noise = malloc(N);
	static const char words[] = "the quick brown fox jumps over a lazy dog; ";
	for (size_t i = 0; i < N; i++)
		text[i] = (uint8_t)words[(i * 7 + i / 13) % (sizeof(words) - 1)];
	for (size_t i = 0; i < N; i++)
		runs[i] = (uint8_t)("abc"[(i / (1 + i % 300)) % 3]);
	tu_rng_fill(&rng, noise, N);
	const uint8_t *sets[] = {text, runs, noise};
	for (int d = 0; d < 3; d++) {
		struct bze_opts o = {.level = 1};
		check_encoded(sets[d], N, &o, 1);
		o.randomise = 1; /* bzip2 0.9.0's randomised blocks */
		check_encoded(sets[d], N, &o, 1);
		o = (struct bze_opts){.level = 9, .ngroups = 6, .rotate_selectors = 1};
		check_encoded(sets[d], N, &o, 1);
		o.extra_selectors = 200; /* more selectors than groups */
		check_encoded(sets[d], N, &o, 1);
		o = (struct bze_opts){.level = 2, .fixed_len = 20}; /* incomplete, longest codes */
		check_encoded(sets[d], N, &o, 1);
		o = (struct bze_opts){.level = 2, .fixed_len = 9, .block = 700};
		check_encoded(sets[d], N, &o, 1);
		o = (struct bze_opts){.level = 3, .edit_lengths = all_ones};
		check_encoded(sets[d], N, &o, 0);
		for (int k = 0; k < 20; k++) { /* any lengths: both decoders agree */
			o = (struct bze_opts){
			        .level = 3, .edit_lengths = random_lengths, .ctx = &rng};
			check_encoded(sets[d], 300 + (size_t)k * 37, &o, 0);
		}
	}
	/* a byte, runs of every length around RLE1's 4 and 255 */
	uint8_t one = 'x';
	struct bze_opts o = {.level = 9};
	check_encoded(&one, 1, &o, 1);
	for (size_t len = 1; len < 600; len += len < 10 || (len > 245 && len < 265) ? 1 : 37) {
		memset(runs, 'r', len);
		check_encoded(runs, len, &o, 1);
		o.randomise = !o.randomise;
	}
	free(text), free(runs), free(noise);
}

static void test_rle1(void)
{
	uint8_t s[5000], out1[1 << 20], out2[1 << 20];
	for (int round = 0; round < 50; round++) {
		size_t n = (size_t)tu_rng_below(&rng, sizeof(s));
		for (size_t i = 0; i < n; i++) /* runs of 1..6 of few values, counts anywhere */
			s[i] = (uint8_t)(tu_rng_below(&rng, 4) ? s[i ? i - 1 : 0]
			                                       : tu_rng_below(&rng, 256));
		int bad;
		uint64_t size = zn_bz2_rle1_size(s, n, &bad);
		CHECK(size <= sizeof(out1));
		struct bz2_rle1 r;
		zn_bz2_rle1_start(&r, s, n);
		CHECK_EQ_U64(zn_bz2_rle1_expand(&r, out1, sizeof(out1) - BZ2_SLACK), size);
		zn_bz2_rle1_start(&r, s, n);
		size_t o = 0, got;
		while ((got = zn_bz2_rle1_expand(&r, out2 + o, 1 + (size_t)tu_rng_below(&rng, 9))))
			o += got;
		CHECK_EQ_U64(o, size);
		CHECK(!memcmp(out1, out2, o));
		/* the definition, byte by byte */
		size_t w = 0, same = 0;
		for (size_t i = 0; i < n; i++) {
			if (same == 4) {
				for (unsigned k = 0; k < s[i]; k++)
					CHECK(out1[w++] == s[i - 1]);
				same = 0;
				continue;
			}
			same = i && same && s[i] == s[i - 1] ? same + 1 : 1;
			CHECK(out1[w++] == s[i]);
		}
		CHECK_EQ_U64(w, size);
		CHECK(bad == (same == 4)); /* a run with no count: libbz2 fails the block */
	}
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_bzip2_block");
	tu_rng_seed(&rng, tu_seed);
	test_rand_table();
	test_crc();
	test_scan(zn_cpu_features()); /* the vector scanner, where there is one */
	test_scan(0);                 /* the portable one */
	test_rle1();
	test_encoder_blocks();
	printf("test_bzip2_block: ok\n");
	return 0;
}
