/* SPDX-License-Identifier: MIT */
/* test_gzip_parallel.c - the parallel gzip decoder gives what the sequential one gives: the same
 * bytes on good streams of every kind, and on damaged ones the same result, at the same input
 * position, after the same output. */
/*
 * Streams are made with zlib from generated data (text-like, random, int64 columns, runs) at
 * several levels and strategies: single members, many members, full and sync flushes, stored
 * blocks, fixed blocks only, and mixtures. Each is decoded by zn_gunzip_mem() and zn_gunzip_read()
 * (random read sizes) with 1..4 threads and chunks of 64 KiB (so that even small streams make
 * many chunks), and compared with the reference: zn_inflate_stream() over the whole input, as
 * `znippy gunzip -T1` does. Damaged copies (a bit flipped, bytes cut off, garbage appended, a
 * trailer changed) must give the reference's result, in_pos and output exactly.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gzip_test_util.h"
#include "test_util.h"

#define MIN(a, b)    ((a) < (b) ? (a) : (b))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

struct sink {
	uint8_t *p;
	size_t len, cap;
};

static zn_result sink_write(void *ctx, const void *buf, size_t len)
{
	struct sink *s = ctx;
	if (!len) /* buf may be NULL then (memcpy's arguments must not be) */
		return ZN_OK;
	if (s->len + len > s->cap) {
		size_t cap = (s->len + len) * 2;
		uint8_t *n = realloc(s->p, cap);
		CHECK(n);
		s->p = n;
		s->cap = cap;
	}
	memcpy(s->p + s->len, buf, len);
	s->len += len;
	return ZN_OK;
}

struct ref {
	zn_result r;
	uint64_t in_pos;
	struct sink out;
};

/* The sequential decoder over the whole input, as the command's -T1 feeds it. */
static void reference(const uint8_t *in, size_t len, struct ref *ref)
{
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_GZIP));
	CHECK_OK(zn_inflate_stream_reset(d));
	memset(ref, 0, sizeof(*ref));
	size_t pos = 0;
	for (;;) {
		size_t used, olen;
		const void *o;
		int done;
		zn_result r = zn_inflate_stream(d, in + pos, len - pos, 1, &used, &o, &olen, &done);
		pos += used;
		sink_write(&ref->out, o, olen);
		if (r != ZN_OK || done) {
			ref->r = r;
			break;
		}
	}
	zn_inflate_stream_position(d, &ref->in_pos, NULL);
	zn_inflater_free(d);
}

struct reader {
	const uint8_t *in;
	size_t len, pos;
	struct tu_rng *g;
};

static zn_result read_piece(void *ctx, void *buf, size_t cap, size_t *got)
{
	struct reader *r = ctx;
	size_t n = (size_t)(tu_rng_below(r->g, 3) == 0 ? 1 + tu_rng_below(r->g, 100)
	                                               : 1 + tu_rng_below(r->g, 300000));
	n = MIN(MIN(n, cap), r->len - r->pos);
	memcpy(buf, r->in + r->pos, n);
	r->pos += n;
	*got = n;
	return ZN_OK;
}

static void check_same(const char *what, const struct ref *ref, zn_result r,
                       const struct zn_gunzip_info *info, const struct sink *out)
{
	if (r != ref->r || info->in_pos != ref->in_pos || out->len != ref->out.len ||
	    (out->len && memcmp(out->p, ref->out.p, out->len))) {
		fprintf(stderr,
		        "%s: got %s at %llu after %zu bytes, want %s at %llu after %zu bytes "
		        "(first difference at %zu)\n",
		        what, zn_result_name(r), (unsigned long long)info->in_pos, out->len,
		        zn_result_name(ref->r), (unsigned long long)ref->in_pos, ref->out.len,
		        (size_t)0);
		size_t i = 0;
		while (i < out->len && i < ref->out.len && out->p[i] == ref->out.p[i])
			i++;
		fprintf(stderr, "  first difference at output byte %zu\n", i);
		CHECK(0);
	}
}

static struct zn_gunzip *decoders[5];

/* Decode `in` every way and compare with the reference. */
static void check_stream(const char *what, const uint8_t *in, size_t len, struct tu_rng *g,
                         int expect_parallel)
{
	struct ref ref;
	reference(in, len, &ref);
	for (unsigned t = 1; t <= 4; t++) {
		struct sink out = {0};
		struct zn_gunzip_info info;
		zn_gunzip_info_init(&info);
		zn_result r = zn_gunzip_mem(decoders[t], in, len, sink_write, &out, &info);
		char name[200];
		snprintf(name, sizeof(name), "%s, mem, %u threads", what, t);
		check_same(name, &ref, r, &info, &out);
		/* A good stream of many chunks is decoded in parallel, not by the fallback: the
		 * test would pass either way otherwise. */
		if (expect_parallel && t >= 2)
			CHECK(info.chunks >= 3 && info.seq_bytes == 0 && info.sym_bytes > 0);
		if (getenv("GZ_STATS"))
			printf("%s: chunks %llu, sequential %llu of %llu\n", name,
			       (unsigned long long)info.chunks, (unsigned long long)info.seq_bytes,
			       (unsigned long long)info.out_len);
		free(out.p);
		if (t == 2 || t == 3) {
			struct reader rd = {in, len, 0, g};
			struct sink out2 = {0};
			zn_gunzip_info_init(&info);
			r = zn_gunzip_read(decoders[t], read_piece, &rd, sink_write, &out2, &info);
			snprintf(name, sizeof(name), "%s, read, %u threads", what, t);
			check_same(name, &ref, r, &info, &out2);
			free(out2.p);
		}
	}
	free(ref.out.p);
}

/* ---- data ---- */

static const char *const words[] = {
        "the",    "of",      "and",    "to",       "in",       "a",       "is",       "that",
        "for",    "it",      "as",     "was",      "with",     "be",      "by",       "on",
        "not",    "he",      "this",   "are",      "or",       "his",     "from",     "at",
        "which",  "but",     "have",   "an",       "had",      "they",    "you",      "were",
        "decode", "stream",  "window", "marker",   "parallel", "chunk",   "member",   "gzip",
        "block",  "huffman", "symbol", "distance", "length",   "literal", "checksum", "trailer"};

static void gen_text(uint8_t *p, size_t n, struct tu_rng *g)
{
	size_t i = 0;
	while (i < n) {
		const char *w = words[tu_rng_below(g, ARRAY_LEN(words))];
		size_t k = strlen(w);
		for (size_t j = 0; j < k && i < n; j++)
			p[i++] = (uint8_t)w[j];
		if (i < n)
			p[i++] = tu_rng_below(g, 12) == 0 ? '\n' : ' ';
	}
}

static void gen_int64(uint8_t *p, size_t n, struct tu_rng *g)
{
	uint64_t v = 1000;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		if (tu_rng_below(g, 50) == 0)
			v += tu_rng_below(g, 1000);
		memcpy(p + i, &v, 8);
	}
	memset(p + (n & ~(size_t)7), 7, n & 7);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_gzip_parallel");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	{ /* sized options (see Conventions): 0 is the first layout, a size below it refused */
		struct zn_gunzip_options o;
		struct zn_gunzip *z;
		zn_gunzip_options_init(&o);
		CHECK(o.struct_size == sizeof(o));
		o.struct_size = 0;
		CHECK_OK(zn_gunzip_new(&z, &o));
		zn_gunzip_free(z);
		o.struct_size = 4;
		CHECK(zn_gunzip_new(&z, &o) == ZN_ERR_INVALID_ARG);
	}
	for (unsigned t = 1; t <= 4; t++) {
		struct zn_gunzip_options o;
		zn_gunzip_options_init(&o);
		o.threads = t;
		o.chunk_size = ZN_GUNZIP_CHUNK_MIN;
		CHECK_OK(zn_gunzip_new(&decoders[t], &o));
	}
	/* ZN_TEST_QUICK: streams of 1 MiB (text: five chunks of the smallest size), text and mixed
	 * data only, one damage each. */
	const size_t N = tu_quick ? 1u << 20 : 3u << 20;
	uint8_t *data = malloc(N);
	size_t cap = 2 * N + 65536;
	uint8_t *gz = malloc(cap), *bad = malloc(cap + 100);
	CHECK(data && gz && bad);
	struct {
		const char *name;
		int kind;
	} kinds[] = {{"text", 0}, {"random", 1}, {"int64", 2}, {"mixed", 3}};
	struct {
		const char *name;
		int level, strategy, flush;
		size_t every;
		unsigned members;
	} ways[] = {
	        {"gzip -6", 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1},
	        {"gzip -1", 1, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1},
	        {"gzip -9", 9, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1},
	        {"members", 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 40},
	        {"full flush", 6, Z_DEFAULT_STRATEGY, Z_FULL_FLUSH, 100000, 1},
	        {"sync flush", 6, Z_DEFAULT_STRATEGY, Z_SYNC_FLUSH, 70000, 3},
	        {"stored", 0, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1},
	        {"fixed", 6, Z_FIXED, Z_NO_FLUSH, 0, 1},
	        {"huffman only", 6, Z_HUFFMAN_ONLY, Z_NO_FLUSH, 0, 1},
	        {"rle", 6, Z_RLE, Z_NO_FLUSH, 0, 2},
	};
	for (size_t k = 0; k < ARRAY_LEN(kinds); k += tu_quick ? 3 : 1) {
		size_t n = N - tu_rng_below(&g, 1000);
		switch (kinds[k].kind) {
		case 0:
			gen_text(data, n, &g);
			break;
		case 1:
			tu_rng_fill(&g, data, n);
			break;
		case 2:
			gen_int64(data, n, &g);
			break;
		default:
			gen_text(data, n / 3, &g);
			tu_rng_fill(&g, data + n / 3, n / 3);
			gen_int64(data + 2 * (n / 3), n - 2 * (n / 3), &g);
		}
		for (size_t w = 0; w < ARRAY_LEN(ways); w++) {
			size_t len = compress_gz(gz, cap, data, n, ways[w].level, ways[w].strategy,
			                         ways[w].flush, ways[w].every, ways[w].members);
			char what[200];
			snprintf(what, sizeof(what), "%s, %s", kinds[k].name, ways[w].name);
			check_stream(what, gz, len, &g,
			             kinds[k].kind == 0 && ways[w].members == 1 &&
			                     ways[w].level > 0 &&
			                     ways[w].strategy == Z_DEFAULT_STRATEGY &&
			                     ways[w].flush == Z_NO_FLUSH);
			/* Damage: each of a few kinds, at a random place. */
			int dmg0 = tu_quick ? (int)tu_rng_below(&g, 5) : 0;
			for (int dmg = dmg0; dmg < (tu_quick ? dmg0 + 1 : 5); dmg++) {
				size_t blen = len;
				memcpy(bad, gz, len);
				size_t at = (size_t)tu_rng_below(&g, len);
				if (dmg == 0)
					bad[at] ^= (uint8_t)(1u << tu_rng_below(&g, 8));
				else if (dmg == 1)
					blen = at;
				else if (dmg == 2)
					blen += (size_t)snprintf((char *)bad + len, 100, "garbage");
				else if (dmg == 3)
					bad[len - 1 - tu_rng_below(&g, 8)] ^= 0x10;
				else
					bad[at] = (uint8_t)tu_rng_next(&g);
				snprintf(what, sizeof(what), "%s, %s, damage %d at %zu",
				         kinds[k].name, ways[w].name, dmg, at);
				check_stream(what, bad, blen, &g, 0);
			}
		}
	}
	check_stream("empty input", gz, 0, &g, 0);
	free(data);
	free(gz);
	free(bad);
	for (unsigned t = 1; t <= 4; t++)
		zn_gunzip_free(decoders[t]);
	printf("ok\n");
	return 0;
}
