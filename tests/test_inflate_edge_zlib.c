/* SPDX-License-Identifier: MIT */
/* test_inflate_edge_zlib.c - hand-built DEFLATE/zlib/gzip edge streams, with zlib as referee. */
/*
 * Each case is a stream built bit by bit (inflate_test_streams.h) with the result the decoder
 * must give (a specific enum value) and, for good streams, the exact output. Every case runs
 *   - through zlib first, to prove the stream is what the case says (accepted / rejected /
 *     truncated), unless zlib cannot judge it (several gzip members, trailing bytes);
 *   - through zn_inflate() with input and output each ending against a guard page, with an
 *     output buffer of exactly the right size, with slack, and one byte short (OUTPUT_FULL);
 *   - through the streaming API, whole, one byte at a time (small streams) and in random chunks,
 *     each chunk copied against a guard page.
 * Then every prefix of a set of good streams must give ZN_ERR_TRUNCATED in every format.
 *
 * Options: -s SEED (chunking), -d DIR writes every case's stream into DIR (fuzz seed corpora).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "common/common.h"
#include "inflate_test_streams.h"
#include "gzip_test_util.h"
#include "test_util.h"

static struct tu_rng rng;
static const char *dump_dir;
static struct zn_inflater *dec[3];
static int n_cases, n_failed;
static const char *fmt_name[3] = {"raw", "zlib", "gzip"};

enum zl { ZL_OK, ZL_ERR, ZL_TRUNC, ZL_DICT, ZL_SKIP };
static const char *zl_name[] = {"accepts", "rejects", "finds it truncated", "wants a dictionary",
                                "-"};

/* zlib's verdict on a whole stream of format `fmt`, all input at once. */
static enum zl zlib_verdict(int fmt, const uint8_t *in, size_t len, const char **msg)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	static const int wbits[3] = {-15, 15, 31};
	if (inflateInit2(&z, wbits[fmt]) != Z_OK)
		abort();
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	int ret;
	do {
		z.next_out = out;
		z.avail_out = (uInt)cap;
		ret = inflate(&z, Z_NO_FLUSH);
	} while (ret == Z_OK && z.avail_out == 0);
	*msg = z.msg ? z.msg : "";
	inflateEnd(&z);
	free(out);
	return ret == Z_STREAM_END   ? ZL_OK
	       : ret == Z_DATA_ERROR ? ZL_ERR
	       : ret == Z_NEED_DICT  ? ZL_DICT
	                             : ZL_TRUNC;
}

/* Streaming decode of in[0..len) in chunks of 1..maxchunk bytes (each copied against a guard
 * page); the output is appended to *out. Returns the first error, or ZN_OK at the end. */
static zn_result stream_decode(struct zn_inflater *d, const uint8_t *in, size_t len,
                               size_t maxchunk, uint8_t **out, size_t *out_len)
{
	CHECK_OK(zn_inflate_stream_reset(d));
	size_t pos = 0, cap = 0;
	*out = NULL;
	*out_len = 0;
	int done = 0;
	for (unsigned idle = 0; !done;) {
		size_t chunk = maxchunk <= 1 ? 1 : 1 + (size_t)tu_rng_below(&rng, maxchunk);
		if (chunk > len - pos)
			chunk = len - pos;
		int final = pos + chunk == len;
		uint8_t *g = tu_guard_alloc(chunk);
		memcpy(g, in + pos, chunk);
		size_t used = 0, olen = 0;
		const void *o = NULL;
		zn_result r = zn_inflate_stream(d, g, chunk, final, &used, &o, &olen, &done);
		tu_guard_free(g, chunk);
		/* Output that comes with an error (the complete output before trailing garbage)
		 * is kept too. */
		if (*out_len + olen > cap) {
			cap = (*out_len + olen) * 2 + 4096;
			*out = realloc(*out, cap);
		}
		if (olen)
			memcpy(*out + *out_len, o, olen);
		*out_len += olen;
		if (r != ZN_OK)
			return r;
		CHECK(used <= chunk);
		if (!(used == chunk || olen || done)) {
			fprintf(stderr,
			        "stream_decode: a call made no progress (%zu of %zu bytes "
			        "used, no output)\n",
			        used, chunk);
			return ZN_ERR_CANCELED;
		}
		pos += used;
		idle = used || olen ? 0 : idle + 1;
		if (idle > 1000) {
			fprintf(stderr, "stream_decode: no progress at the end of the input\n");
			return ZN_ERR_CANCELED;
		}
	}
	return ZN_OK;
}

static void fail_case(const char *name, const char *what, zn_result got, zn_result want)
{
	fprintf(stderr, "CASE FAILED %-34s %s: got %s, want %s\n", name, what, zn_result_name(got),
	        zn_result_name(want));
	n_failed++;
}

/*
 * Check one case. want_out/want_len: the output of a good stream (or of the part before the
 * error for TRAILING_GARBAGE). want_in_used: for good streams, where the stream ends ((size_t)-1:
 * the whole input).
 */
static void expect(const char *name, int fmt, const struct bs *s, zn_result want,
                   const void *want_out, size_t want_len, enum zl zlib_want, size_t want_in_used)
{
	char full[96];
	snprintf(full, sizeof(full), "%s/%s", fmt_name[fmt], name);
	n_cases++;
	int failed_before = n_failed;
	if (dump_dir) {
		char *p = tu_fmt("%s/%s_%s.bin", dump_dir, fmt_name[fmt], name);
		tu_write_file(p, s->buf, s->len);
		free(p);
	}
	if (zlib_want != ZL_SKIP) {
		const char *msg;
		enum zl z = zlib_verdict(fmt, s->buf, s->len, &msg);
		if (z != zlib_want) {
			fprintf(stderr, "CASE BROKEN %s: zlib %s (%s), the case says zlib %s\n",
			        full, zl_name[z], msg, zl_name[zlib_want]);
			n_failed++;
			return;
		}
	}
	if (want_in_used == (size_t)-1)
		want_in_used = s->len;
	int good = want == ZN_OK || want == ZN_ERR_TRAILING_GARBAGE;
	uint8_t *in = tu_guard_alloc(s->len);
	memcpy(in, s->buf, s->len);

	/* Whole buffer: exact output size, then slack, then one byte short. */
	size_t caps[3] = {good ? want_len : (size_t)1 << 20, want_len + 4096, want_len - 1};
	for (int k = 0; k < (good && want_len ? 3 : 2); k++) {
		uint8_t *out = tu_guard_alloc(caps[k]);
		struct zn_inflate_info info = {.struct_size = sizeof(info)};
		zn_result r = zn_inflate(dec[fmt], in, s->len, out, caps[k], &info);
		zn_result w = k == 2 ? ZN_ERR_OUTPUT_FULL : want;
		char what[64];
		snprintf(what, sizeof(what), "zn_inflate(cap %zu)", caps[k]);
		if (r != w) {
			fail_case(full, what, r, w);
		} else if (good && k < 2) {
			if (info.out_len != want_len || memcmp(out, want_out, want_len)) {
				fprintf(stderr,
				        "CASE FAILED %s %s: wrong output (%llu bytes, want %zu)\n",
				        full, what, (unsigned long long)info.out_len, want_len);
				n_failed++;
			} else if (info.in_used != want_in_used) {
				fprintf(stderr, "CASE FAILED %s %s: in_used %llu, want %zu\n", full,
				        what, (unsigned long long)info.in_used, want_in_used);
				n_failed++;
			}
		}
		tu_guard_free(out, caps[k]);
	}

	/* Streaming: whole, byte by byte (small streams), random chunks. The streaming API reads
	 * raw/zlib streams only up to their end, so trailing bytes are not part of the input. */
	size_t slen = fmt == ZN_FORMAT_GZIP ? s->len : (good ? want_in_used : s->len);
	size_t modes[3] = {slen ? slen : 1, 1, 1 + (size_t)tu_rng_below(&rng, 3000)};
	for (int k = 0; k < 3; k++) {
		if (k == 1 && slen > 20000)
			continue;
		uint8_t *o;
		size_t olen;
		zn_result r = stream_decode(dec[fmt], in, slen, modes[k], &o, &olen);
		char what[64];
		snprintf(what, sizeof(what), "stream(chunks <= %zu)", modes[k]);
		if (r != want)
			fail_case(full, what, r, want);
		else if (good &&
		         (olen != want_len || (want_len && memcmp(o, want_out, want_len)))) {
			fprintf(stderr, "CASE FAILED %s %s: wrong output (%zu bytes, want %zu)\n",
			        full, what, olen, want_len);
			n_failed++;
		}
		free(o);
	}
	tu_guard_free(in, s->len);
	if (n_failed == failed_before && getenv("ZN_VERBOSE"))
		printf("ok   %s\n", full);
}

/* ---- helpers to build blocks ------------------------------------------------------------------
 */
struct out {
	uint8_t *p;
	size_t n, cap;
};
static void out_put(struct out *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2 + 1024;
		o->p = realloc(o->p, o->cap);
	}
	memcpy(o->p + o->n, p, n);
	o->n += n;
}
static void out_match(struct out *o, unsigned len, unsigned dist)
{
	for (unsigned i = 0; i < len; i++) {
		uint8_t c = o->p[o->n - dist];
		out_put(o, &c, 1);
	}
}

static struct hcode FL, FD; /* the fixed codes */

static void lit(struct bs *b, struct out *o, const struct hcode *h, uint8_t c)
{
	hcode_put(b, h, c);
	if (o)
		out_put(o, &c, 1);
}

/* Wrap a raw stream (in s, with output o) into zlib or gzip. */
static void wrap(struct bs *dst, int fmt, const struct bs *raw, const struct out *o)
{
	memset(dst, 0, sizeof(*dst));
	if (fmt == ZN_FORMAT_ZLIB)
		put_zlib_header(dst);
	if (fmt == ZN_FORMAT_GZIP)
		put_gzip_header(dst, 0, 0);
	bs_bytes(dst, raw->buf, raw->len);
	/* A raw stream may end mid-byte; the builder flushed it with zero bits already. */
	const void *p = o && o->n ? (const void *)o->p : "";
	size_t n = o ? o->n : 0;
	if (fmt == ZN_FORMAT_ZLIB)
		put_zlib_trailer(dst, p, n);
	if (fmt == ZN_FORMAT_GZIP)
		put_gzip_trailer(dst, p, n);
}

/* Run a raw case in all three containers: good streams are wrapped properly; bad ones too (the
 * raw error must come through whatever the container). */
static void expect3(const char *name, struct bs *raw, zn_result want, struct out *o, enum zl zl)
{
	bs_align(raw);
	static const uint8_t nothing[1];
	for (int fmt = 0; fmt < 3; fmt++) {
		struct bs w;
		wrap(&w, fmt, raw, o);
		expect(name, fmt, &w, want, o && o->n ? o->p : nothing, o ? o->n : 0, zl,
		       (size_t)-1);
		/* Every proper prefix of a good stream is truncated (however the zero bits the
		 * decoder may assume past the end would decode). */
		for (size_t cut = 0; want == ZN_OK && w.len <= 20000 && cut < w.len; cut++) {
			uint8_t *in = tu_guard_alloc(cut), *out = tu_guard_alloc(o->n + 64);
			memcpy(in, w.buf, cut);
			zn_result r = zn_inflate(dec[fmt], in, cut, out, o->n + 64, NULL);
			if (r != ZN_ERR_TRUNCATED) {
				char what[48], full[96];
				snprintf(what, sizeof(what), "zn_inflate(cut at %zu of %zu)", cut,
				         w.len);
				snprintf(full, sizeof(full), "%s/%s", fmt_name[fmt], name);
				fail_case(full, what, r, ZN_ERR_TRUNCATED);
			}
			tu_guard_free(in, cut);
			tu_guard_free(out, o->n + 64);
		}
		bs_free(&w);
	}
}

/* ---- the cases ----------------------------------------------------------------------------------
 */
static void stored_cases(void)
{
	struct bs b = {0};
	struct out o = {0};
	put_stored(&b, 1, NULL, 0);
	expect3("stored_empty_final", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);

	put_stored(&b, 0, NULL, 0);
	put_stored(&b, 0, NULL, 0);
	put_stored(&b, 1, "hello", 5);
	out_put(&o, "hello", 5);
	expect3("stored_0_0_5", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	uint8_t *data = malloc(100000);
	tu_rng_fill(&rng, data, 100000);
	put_stored(&b, 1, data, 65535);
	out_put(&o, data, 65535);
	expect3("stored_65535", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	/* More than 32 KiB of stored data, then matches reaching back exactly 32768 bytes, across
	 * the stored blocks, with length 258 written both ways. */
	put_stored(&b, 0, data, 40000);
	put_stored(&b, 0, data + 40000, 30000);
	out_put(&o, data, 70000);
	put_fixed_header(&b, 1);
	put_match(&b, &FL, &FD, 258, 32768, 0);
	out_match(&o, 258, 32768);
	put_match(&b, &FL, &FD, 258, 32768, 1);
	out_match(&o, 258, 32768);
	put_match(&b, &FL, &FD, 3, 32768, 0);
	out_match(&o, 3, 32768);
	hcode_put(&b, &FL, 256);
	expect3("stored_70000_then_dist_32768", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	/* Stored block with LEN != ~NLEN. */
	put_fixed_header(&b, 0);
	lit(&b, NULL, &FL, 'x');
	hcode_put(&b, &FL, 256);
	bs_bits(&b, 1, 1);
	bs_bits(&b, 0, 2);
	bs_align(&b);
	bs_le16(&b, 5);
	bs_le16(&b, (~5u ^ 1) & 0xffff);
	bs_bytes(&b, "hello", 5);
	expect3("stored_len_mismatch", &b, ZN_ERR_BAD_STORED_LEN, NULL, ZL_ERR);
	bs_free(&b);

	/* Stored length longer than the input. */
	bs_bits(&b, 1, 1);
	bs_bits(&b, 0, 2);
	bs_align(&b);
	bs_le16(&b, 1000);
	bs_le16(&b, ~1000u & 0xffff);
	bs_bytes(&b, data, 999);
	{
		uint8_t *in = tu_guard_alloc(b.len), out[2000];
		memcpy(in, b.buf, b.len);
		zn_result r = zn_inflate(dec[0], in, b.len, out, sizeof(out), NULL);
		if (r != ZN_ERR_TRUNCATED)
			fail_case("raw/stored_short_input", "zn_inflate", r, ZN_ERR_TRUNCATED);
		tu_guard_free(in, b.len);
	}
	bs_free(&b);
	free(data);
	free(o.p);
}

static void fixed_cases(void)
{
	struct bs b = {0};
	struct out o = {0};
	/* Length 258 as symbol 285 and as 284 + 31 extra bits. */
	put_fixed_header(&b, 1);
	lit(&b, &o, &FL, 'x');
	lit(&b, &o, &FL, 'y');
	put_match(&b, &FL, &FD, 258, 2, 0);
	out_match(&o, 258, 2);
	put_match(&b, &FL, &FD, 258, 2, 1);
	out_match(&o, 258, 2);
	hcode_put(&b, &FL, 256);
	expect3("len258_as_285_and_284_31", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	/* Every length 3..258 and a spread of distances. */
	put_fixed_header(&b, 1);
	for (int i = 0; i < 300; i++)
		lit(&b, &o, &FL, (uint8_t)(i * 7 + 3));
	for (unsigned len = 3; len <= 258; len++) {
		unsigned d = 1 + (len * 37) % 300;
		put_match(&b, &FL, &FD, len, d, 0);
		out_match(&o, len, d);
	}
	hcode_put(&b, &FL, 256);
	expect3("all_lengths", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	/* Distance 32768 inside one Huffman block, after 32768 literals. */
	put_fixed_header(&b, 1);
	for (int i = 0; i < 32768; i++)
		lit(&b, &o, &FL, (uint8_t)tu_rng_next(&rng));
	put_match(&b, &FL, &FD, 258, 32768, 0);
	out_match(&o, 258, 32768);
	put_match(&b, &FL, &FD, 100, 32768, 0);
	out_match(&o, 100, 32768);
	hcode_put(&b, &FL, 256);
	expect3("dist_32768_in_block", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	/* Overlapping copies: distance 1..8 with long lengths (the fast loop's word copies). */
	put_fixed_header(&b, 1);
	for (unsigned d = 1; d <= 40; d++) {
		lit(&b, &o, &FL, (uint8_t)('a' + d % 26));
		put_match(&b, &FL, &FD, 3 + (d * 31) % 256, d, 0);
		out_match(&o, 3 + (d * 31) % 256, d);
	}
	hcode_put(&b, &FL, 256);
	expect3("overlapping_copies", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	/* Many empty blocks: fixed, stored and dynamic, 20000 in all, then a final one. */
	struct hcode dl = {.n = 257}, dd = {.n = 1};
	dl.len['a'] = 1;
	dl.len[256] = 1;
	dd.len[0] = 1;
	hcode_build(&dl);
	hcode_build(&dd);
	for (int i = 0; i < 20000; i++) {
		if (i % 3 == 0) {
			put_fixed_header(&b, 0);
			hcode_put(&b, &FL, 256);
		} else if (i % 3 == 1) {
			put_stored(&b, 0, NULL, 0);
		} else {
			put_dynamic_header(&b, 0, &dl, &dd, NULL, NULL, 0, 0);
			hcode_put(&b, &dl, 256);
		}
	}
	put_fixed_header(&b, 1);
	lit(&b, &o, &FL, 'z');
	hcode_put(&b, &FL, 256);
	expect3("20000_empty_blocks", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	/* Distance too far back: at the very start, and one beyond the output. */
	put_fixed_header(&b, 1);
	put_match(&b, &FL, &FD, 3, 1, 0);
	hcode_put(&b, &FL, 256);
	expect3("dist_too_far_at_start", &b, ZN_ERR_BAD_DISTANCE, NULL, ZL_ERR);
	bs_free(&b);
	put_fixed_header(&b, 1);
	for (int i = 0; i < 5; i++)
		lit(&b, NULL, &FL, 'a');
	put_match(&b, &FL, &FD, 3, 6, 0);
	hcode_put(&b, &FL, 256);
	expect3("dist_too_far_by_one", &b, ZN_ERR_BAD_DISTANCE, NULL, ZL_ERR);
	bs_free(&b);
	/* ... after a first block, in a later block (the check must count all output). */
	put_fixed_header(&b, 0);
	for (int i = 0; i < 100; i++)
		lit(&b, NULL, &FL, 'a');
	hcode_put(&b, &FL, 256);
	put_fixed_header(&b, 1);
	put_match(&b, &FL, &FD, 10, 101, 0);
	hcode_put(&b, &FL, 256);
	expect3("dist_too_far_next_block", &b, ZN_ERR_BAD_DISTANCE, NULL, ZL_ERR);
	bs_free(&b);

	/* Invalid symbols: litlen 286 and 287, distance 30 and 31. */
	for (unsigned sym = 286; sym <= 287; sym++) {
		put_fixed_header(&b, 1);
		lit(&b, NULL, &FL, 'a');
		hcode_put(&b, &FL, sym);
		bs_bits(&b, 0, 16);
		char name[32];
		snprintf(name, sizeof(name), "fixed_litlen_%u", sym);
		expect3(name, &b, ZN_ERR_BAD_SYMBOL, NULL, ZL_ERR);
		bs_free(&b);
	}
	for (unsigned sym = 30; sym <= 31; sym++) {
		put_fixed_header(&b, 1);
		lit(&b, NULL, &FL, 'a');
		hcode_put(&b, &FL, 257);
		hcode_put(&b, &FD, sym);
		bs_bits(&b, 0, 16);
		char name[32];
		snprintf(name, sizeof(name), "fixed_dist_%u", sym);
		expect3(name, &b, ZN_ERR_BAD_SYMBOL, NULL, ZL_ERR);
		bs_free(&b);
	}

	/* Block type 3, first and after a good block. */
	bs_bits(&b, 1, 1);
	bs_bits(&b, 3, 2);
	bs_bits(&b, 0, 32);
	expect3("block_type_3", &b, ZN_ERR_BAD_BLOCK_TYPE, NULL, ZL_ERR);
	bs_free(&b);
	put_fixed_header(&b, 0);
	lit(&b, NULL, &FL, 'a');
	hcode_put(&b, &FL, 256);
	bs_bits(&b, 0, 1);
	bs_bits(&b, 3, 2);
	bs_bits(&b, 0, 32);
	expect3("block_type_3_second", &b, ZN_ERR_BAD_BLOCK_TYPE, NULL, ZL_ERR);
	bs_free(&b);

	/* Bytes after a raw/zlib stream are not looked at; in_used says where the stream ended. */
	put_fixed_header(&b, 1);
	lit(&b, &o, &FL, 'q');
	hcode_put(&b, &FL, 256);
	bs_align(&b);
	for (int fmt = 0; fmt < 2; fmt++) {
		struct bs w;
		wrap(&w, fmt, &b, &o);
		size_t end = w.len;
		bs_bytes(&w, "JUNK", 4);
		expect("trailing_junk_ignored", fmt, &w, ZN_OK, o.p, o.n, ZL_SKIP, end);
		/* Streaming, all of it passed in chunks of 1..5 bytes: the stream ends and the
		 * stream position is exactly its end. */
		for (size_t chunk = 1; chunk <= 5; chunk++) {
			CHECK_OK(zn_inflate_stream_reset(dec[fmt]));
			size_t pos = 0, used, olen, out_n = 0;
			const void *op;
			int done = 0;
			zn_result r = ZN_OK;
			for (unsigned calls = 0; !done && r == ZN_OK && calls < 1000; calls++) {
				size_t c = ZN_MIN(chunk, w.len - pos);
				r = zn_inflate_stream(dec[fmt], w.buf + pos, c, pos + c == w.len,
				                      &used, &op, &olen, &done);
				pos += used;
				out_n += olen;
			}
			uint64_t in_pos = 0;
			zn_inflate_stream_position(dec[fmt], &in_pos, NULL);
			/* Bytes staged in earlier calls cannot be handed back, so with chunks this
			 * small the sum of in_used may pass the end; the position must not. */
			if (pos > end && chunk == 1)
				printf("note: %s stream in 1-byte chunks: in_used sums to %zu, the "
				       "stream "
				       "ends at %zu (zn_inflate_stream_position: %llu)\n",
				       fmt_name[fmt], pos, end, (unsigned long long)in_pos);
			if (r != ZN_OK || !done || pos < end || in_pos != end || out_n != o.n) {
				fprintf(stderr,
				        "CASE FAILED %s/trailing_junk_stream(chunks of %zu): %s "
				        "done %d, "
				        "consumed %zu, position %llu, want %zu; out %zu\n",
				        fmt_name[fmt], chunk, zn_result_name(r), done, pos,
				        (unsigned long long)in_pos, end, out_n);
				n_failed++;
			}
		}
		bs_free(&w);
	}
	bs_free(&b);
	free(o.p);
}

/* A dynamic block with litlen lengths given as (symbol, length) pairs and distance lengths. */
static void dyn_code(struct hcode *l, unsigned nlit, const unsigned *pairs, size_t npairs)
{
	memset(l, 0, sizeof(*l));
	l->n = nlit;
	for (size_t i = 0; i < npairs; i++)
		l->len[pairs[i * 2]] = (uint8_t)pairs[i * 2 + 1];
	hcode_build(l);
}

static void dynamic_cases(void)
{
	struct bs b = {0};
	struct out o = {0};
	struct hcode l, d, pre;

	/* A plain good dynamic block: literals 'a'..'p' and EOB, lengths 3..258 via 257..285. */
	{
		unsigned pairs[2 * 64];
		size_t np = 0;
		for (unsigned c = 'a'; c < 'a' + 16; c++)
			pairs[np * 2] = c, pairs[np * 2 + 1] = 5, np++;
		for (unsigned s = 256; s < 286; s++)
			pairs[np * 2] = s, pairs[np * 2 + 1] = 6, np++;
		/* 16 x 2^-5 + 32 x 2^-6 = 1: complete. */
		pairs[np * 2] = 'q', pairs[np * 2 + 1] = 6, np++;
		pairs[np * 2] = 'r', pairs[np * 2 + 1] = 6, np++;
		dyn_code(&l, 286, pairs, np);
		unsigned dp[2 * 30];
		for (unsigned i = 0; i < 30; i++)
			dp[i * 2] = i, dp[i * 2 + 1] = i < 2 ? 4 : 5; /* 2/16 + 28/32 = 1 */
		dyn_code(&d, 30, dp, 30);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		for (int i = 0; i < 2000; i++) {
			if (o.n < 20 || tu_rng_below(&rng, 3) == 0) {
				lit(&b, &o, &l, (uint8_t)('a' + tu_rng_below(&rng, 18)));
			} else {
				unsigned len = 3 + (unsigned)tu_rng_below(&rng, 256);
				unsigned dist =
				        1 + (unsigned)tu_rng_below(&rng, ZN_MIN(o.n, 32768));
				put_match(&b, &l, &d, len, dist, 0);
				out_match(&o, len, dist);
			}
		}
		hcode_put(&b, &l, 256);
		expect3("dynamic_full_alphabets", &b, ZN_OK, &o, ZL_OK);
		bs_free(&b);
		o.n = 0;
	}

	/* A repeat (16) that crosses from the litlen lengths into the distance lengths: allowed. */
	{
		memset(&pre, 0, sizeof(pre));
		pre.n = 19;
		for (unsigned i = 0; i <= 12; i++)
			pre.len[i] = 4;
		pre.len[16] = pre.len[17] = pre.len[18] = 4;
		const struct cl_item seq[] = {{18, 86}, {1, 0}, {2, 0},  {18, 127},
		                              {18, 8},  {2, 0}, {16, 0}, {2, 0}};
		unsigned lp[] = {'a', 1, 'b', 2, 256, 2};
		dyn_code(&l, 257, lp, 3);
		unsigned dp[] = {0, 2, 1, 2, 2, 2, 3, 2};
		dyn_code(&d, 4, dp, 4);
		put_dynamic_header(&b, 1, &l, &d, &pre, seq, ZN_ARRAY_LEN(seq), 0);
		lit(&b, &o, &l, 'a');
		lit(&b, &o, &l, 'b');
		/* A match needs length symbol 257, which has no code here: use literals only. */
		hcode_put(&b, &l, 256);
		expect3("repeat_crosses_lit_dist", &b, ZN_OK, &o, ZL_OK);
		bs_free(&b);
		o.n = 0;

		/* Repeat 16 with no previous length. */
		const struct cl_item bad1[] = {{16, 0}, {18, 127}, {18, 127}};
		put_dynamic_header(&b, 1, &l, &d, &pre, bad1, ZN_ARRAY_LEN(bad1), 0);
		bs_bits(&b, 0, 32);
		expect3("repeat_first", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);

		/* Repeats past the end: 18 (zeros), and 16 (previous length). */
		const struct cl_item bad2[] = {{18, 127}, {18, 127}, {1, 0}};
		put_dynamic_header(&b, 1, &l, &d, &pre, bad2, ZN_ARRAY_LEN(bad2), 0);
		bs_bits(&b, 0, 32);
		expect3("repeat18_past_end", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
		const struct cl_item bad3[] = {{18, 127}, {18, 106}, {1, 0},
		                               {1, 0},    {1, 0},    {16, 3}};
		put_dynamic_header(&b, 1, &l, &d, &pre, bad3, ZN_ARRAY_LEN(bad3), 0);
		bs_bits(&b, 0, 32);
		expect3("repeat16_past_end", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
		const struct cl_item bad4[] = {{18, 127}, {18, 106}, {1, 0}, {1, 0}, {17, 7}};
		put_dynamic_header(&b, 1, &l, &d, &pre, bad4, ZN_ARRAY_LEN(bad4), 0);
		bs_bits(&b, 0, 32);
		expect3("repeat17_past_end", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
	}

	/* Too many symbols: HLIT 287 and 288, HDIST 31 and 32. */
	static const unsigned too_many[4][2] = {{287, 1}, {288, 1}, {257, 31}, {257, 32}};
	for (int i = 0; i < 4; i++) {
		bs_bits(&b, 1, 1);
		bs_bits(&b, 2, 2);
		bs_bits(&b, too_many[i][0] - 257, 5);
		bs_bits(&b, too_many[i][1] - 1, 5);
		bs_bits(&b, 15, 4);
		for (int k = 0; k < 19; k++)
			bs_bits(&b, 4, 3);
		for (int k = 0; k < 300; k++)
			bs_bits(&b, 0, 4);
		char name[48];
		snprintf(name, sizeof(name), "too_many_symbols_%u_%u", too_many[i][0],
		         too_many[i][1]);
		expect3(name, &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
	}

	/* No end-of-block code. */
	{
		unsigned lp[] = {'a', 1, 'b', 1};
		dyn_code(&l, 257, lp, 2);
		unsigned dp[] = {0, 1};
		dyn_code(&d, 1, dp, 1);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		bs_bits(&b, 0, 32);
		expect3("missing_end_of_block", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
	}

	/* Litlen code of a single length-1 codeword (EOB): incomplete but allowed; no distance
	 * codes at all: allowed while no match appears. */
	{
		unsigned lp[] = {256, 1};
		dyn_code(&l, 257, lp, 1);
		dyn_code(&d, 1, NULL, 0);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		hcode_put(&b, &l, 256);
		expect3("litlen_single_code", &b, ZN_OK, &o, ZL_OK);
		bs_free(&b);
		/* ... and the unused codeword (bit 1) is an invalid symbol. */
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		bs_bits(&b, 1, 1);
		bs_bits(&b, 0, 32);
		expect3("litlen_single_code_unused", &b, ZN_ERR_BAD_SYMBOL, NULL, ZL_ERR);
		bs_free(&b);
	}
	{
		unsigned lp[] = {'a', 2, 256, 2};
		dyn_code(&l, 257, lp, 2);
		unsigned dp[] = {0, 1};
		dyn_code(&d, 1, dp, 1);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		bs_bits(&b, 0, 32);
		expect3("litlen_incomplete", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
	}
	{
		unsigned lp[] = {'a', 1, 'b', 1, 256, 1};
		dyn_code(&l, 257, lp, 3);
		unsigned dp[] = {0, 1};
		dyn_code(&d, 1, dp, 1);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		bs_bits(&b, 0, 32);
		expect3("litlen_oversubscribed", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
	}
	/* Distance codes: one length-1 codeword is allowed; its unused twin is an invalid symbol;
	 * other incomplete codes and over-subscribed ones are refused. */
	{
		unsigned lp[] = {'a', 1, 256, 2, 257, 2};
		dyn_code(&l, 258, lp, 3);
		unsigned dp[] = {0, 1};
		dyn_code(&d, 1, dp, 1);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		lit(&b, &o, &l, 'a');
		put_match(&b, &l, &d, 3, 1, 0);
		out_match(&o, 3, 1);
		hcode_put(&b, &l, 256);
		expect3("dist_single_code", &b, ZN_OK, &o, ZL_OK);
		bs_free(&b);
		o.n = 0;
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		lit(&b, NULL, &l, 'a');
		hcode_put(&b, &l, 257);
		bs_bits(&b, 1, 1);
		bs_bits(&b, 0, 32);
		expect3("dist_single_code_unused", &b, ZN_ERR_BAD_SYMBOL, NULL, ZL_ERR);
		bs_free(&b);

		dyn_code(&d, 1, NULL, 0);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		lit(&b, &o, &l, 'a');
		lit(&b, &o, &l, 'a');
		hcode_put(&b, &l, 256);
		expect3("dist_none_literals_only", &b, ZN_OK, &o, ZL_OK);
		bs_free(&b);
		o.n = 0;
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		lit(&b, NULL, &l, 'a');
		hcode_put(&b, &l, 257);
		bs_bits(&b, 0, 32);
		expect3("dist_none_but_match", &b, ZN_ERR_BAD_SYMBOL, NULL, ZL_ERR);
		bs_free(&b);

		unsigned dp2[] = {0, 2, 1, 2};
		dyn_code(&d, 2, dp2, 2);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		bs_bits(&b, 0, 32);
		expect3("dist_incomplete", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
		unsigned dp3[] = {0, 1, 1, 1, 2, 1};
		dyn_code(&d, 3, dp3, 3);
		put_dynamic_header(&b, 1, &l, &d, NULL, NULL, 0, 0);
		bs_bits(&b, 0, 32);
		expect3("dist_oversubscribed", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
	}
	/* The precode (code-length code) must be complete. */
	{
		unsigned lp[] = {256, 1, 'a', 1};
		dyn_code(&l, 257, lp, 2);
		unsigned dp[] = {0, 1};
		dyn_code(&d, 1, dp, 1);
		/* zlib accepts an empty precode by accident: its table for an empty code decodes
		 * every 1-bit pattern as length 0, so it reads on (and here finds the input
		 * truncated). An empty code cannot code anything; the contract refuses it. */
		static const struct {
			const char *name;
			uint8_t lens[19];
			enum zl zl;
		} pres[] = {
		        {"precode_incomplete", {[0] = 2, [1] = 2, [18] = 2}, ZL_ERR},
		        {"precode_single", {[1] = 1}, ZL_ERR},
		        {"precode_oversubscribed", {[0] = 1, [1] = 1, [18] = 1}, ZL_ERR},
		        {"precode_empty", {0}, ZL_SKIP},
		};
		for (size_t i = 0; i < ZN_ARRAY_LEN(pres); i++) {
			memset(&pre, 0, sizeof(pre));
			pre.n = 19;
			memcpy(pre.len, pres[i].lens, 19);
			const struct cl_item none[1] = {{0, 0}};
			put_dynamic_header(&b, 1, &l, &d, &pre, none, 0, 0);
			bs_bits(&b, 0, 32);
			expect3(pres[i].name, &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, pres[i].zl);
			bs_free(&b);
		}
	}
	/* HCLEN = 4: only the lengths of 16, 17, 18 and 0 are sent; a code of those alone. */
	{
		memset(&pre, 0, sizeof(pre));
		pre.n = 19;
		pre.len[18] = 1;
		pre.len[0] = 1;
		/* All-zero lengths: no EOB, so this must be refused as missing end-of-block. */
		const struct cl_item seq[] = {{18, 127}, {18, 109}};
		unsigned dp[] = {0, 1};
		dyn_code(&l, 257, NULL, 0);
		dyn_code(&d, 1, dp, 1);
		put_dynamic_header(&b, 1, &l, &d, &pre, seq, ZN_ARRAY_LEN(seq), 4);
		bs_bits(&b, 0, 32);
		expect3("hclen4_all_zero_lengths", &b, ZN_ERR_BAD_CODE_LENGTHS, NULL, ZL_ERR);
		bs_free(&b);
	}
	free(o.p);
}

static void gzip_cases(void)
{
	static const char text[] = "The quick brown fox jumps over the lazy dog. 0123456789\n";
	size_t n = sizeof(text) - 1;
	struct bs raw = {0}, b = {0};
	put_fixed_header(&raw, 1);
	for (size_t i = 0; i < n; i++)
		hcode_put(&raw, &FL, (uint8_t)text[i]);
	hcode_put(&raw, &FL, 256);
	bs_align(&raw);

	/* Every combination of FTEXT, FHCRC, FEXTRA, FNAME, FCOMMENT. */
	for (unsigned flags = 0; flags < 32; flags++) {
		put_gzip_header(&b, flags, 0);
		bs_bytes(&b, raw.buf, raw.len);
		put_gzip_trailer(&b, text, n);
		char name[32];
		snprintf(name, sizeof(name), "gzip_flags_%02x", flags);
		expect(name, 2, &b, ZN_OK, text, n, ZL_OK, (size_t)-1);
		bs_free(&b);
	}
	put_gzip_header(&b, 0x104 | 2, 0);
	bs_bytes(&b, raw.buf, raw.len);
	put_gzip_trailer(&b, text, n);
	expect("gzip_empty_fextra", 2, &b, ZN_OK, text, n, ZL_OK, (size_t)-1);
	bs_free(&b);
	put_gzip_header(&b, 2 | 8, 1);
	bs_bytes(&b, raw.buf, raw.len);
	put_gzip_trailer(&b, text, n);
	expect("gzip_bad_fhcrc", 2, &b, ZN_ERR_HEADER_CHECKSUM, NULL, 0, ZL_ERR, 0);
	bs_free(&b);
	for (unsigned bit = 0x20; bit <= 0x80; bit <<= 1) {
		put_gzip_header(&b, bit, 0);
		bs_bytes(&b, raw.buf, raw.len);
		put_gzip_trailer(&b, text, n);
		char name[32];
		snprintf(name, sizeof(name), "gzip_reserved_flag_%02x", bit);
		expect(name, 2, &b, ZN_ERR_BAD_HEADER, NULL, 0, ZL_ERR, 0);
		bs_free(&b);
	}
	static const struct {
		const char *name;
		int at;
		uint8_t v;
	} bad_hdr[] = {{"gzip_bad_magic1", 0, 0x1e},
	               {"gzip_bad_magic2", 1, 0x8c},
	               {"gzip_method_7", 2, 7}};
	for (size_t i = 0; i < ZN_ARRAY_LEN(bad_hdr); i++) {
		put_gzip_header(&b, 0, 0);
		b.buf[bad_hdr[i].at] = bad_hdr[i].v;
		bs_bytes(&b, raw.buf, raw.len);
		put_gzip_trailer(&b, text, n);
		expect(bad_hdr[i].name, 2, &b, ZN_ERR_BAD_HEADER, NULL, 0, ZL_SKIP, 0);
		bs_free(&b);
	}
	/* Bad CRC-32, bad ISIZE. */
	for (int which = 0; which < 2; which++) {
		put_gzip_header(&b, 0, 0);
		bs_bytes(&b, raw.buf, raw.len);
		put_gzip_trailer(&b, text, n);
		b.buf[b.len - (which ? 4 : 8)] ^= 0x40;
		expect(which ? "gzip_bad_isize" : "gzip_bad_crc", 2, &b,
		       which ? ZN_ERR_LENGTH_MISMATCH : ZN_ERR_CHECKSUM, NULL, 0, ZL_ERR, 0);
		bs_free(&b);
	}
	/* Several members, one of them empty; then trailing zeros; then trailing garbage. */
	struct out o = {0};
	for (int m = 0; m < 3; m++) {
		put_gzip_header(&b, m == 1 ? 8 : 0, 0);
		if (m == 1) {
			put_stored(&b, 1, NULL, 0);
			put_gzip_trailer(&b, "", 0);
		} else {
			bs_bytes(&b, raw.buf, raw.len);
			put_gzip_trailer(&b, text, n);
			out_put(&o, text, n);
		}
	}
	expect("gzip_three_members", 2, &b, ZN_OK, o.p, o.n, ZL_SKIP, (size_t)-1);
	{
		struct zn_inflate_info info = {.struct_size = sizeof(info)};
		uint8_t *out = malloc(o.n);
		zn_result r = zn_inflate(dec[2], b.buf, b.len, out, o.n, &info);
		if (r != ZN_OK || info.members != 3) {
			fprintf(stderr,
			        "CASE FAILED gzip/three_members: %s, members %llu (want 3)\n",
			        zn_result_name(r), (unsigned long long)info.members);
			n_failed++;
		}
		free(out);
	}
	size_t end = b.len;
	static const size_t zeros[] = {1, 7, 8, 100};
	for (size_t i = 0; i < ZN_ARRAY_LEN(zeros); i++) {
		struct bs z = {0};
		bs_bytes(&z, b.buf, end);
		for (size_t k = 0; k < zeros[i]; k++)
			bs_byte(&z, 0);
		char name[32];
		snprintf(name, sizeof(name), "gzip_trailing_zeros_%zu", zeros[i]);
		expect(name, 2, &z, ZN_OK, o.p, o.n, ZL_SKIP, (size_t)-1);
		bs_free(&z);
	}
	{
		struct bs z = {0};
		bs_bytes(&z, b.buf, end);
		bs_bytes(&z, "\0\0GARBAGE", 9);
		expect("gzip_trailing_garbage", 2, &z, ZN_ERR_TRAILING_GARBAGE, o.p, o.n, ZL_SKIP,
		       end + 2);
		bs_free(&z);
		bs_bytes(&z, b.buf, end);
		bs_bytes(&z, "X", 1);
		expect("gzip_trailing_garbage_1", 2, &z, ZN_ERR_TRAILING_GARBAGE, o.p, o.n, ZL_SKIP,
		       end);
		bs_free(&z);
	}
	bs_free(&b);
	free(o.p);

	/* The empty member (gzip of an empty file). */
	put_gzip_header(&b, 0, 0);
	put_fixed_header(&b, 1);
	hcode_put(&b, &FL, 256);
	put_gzip_trailer(&b, "", 0);
	expect("gzip_empty_member", 2, &b, ZN_OK, "", 0, ZL_OK, (size_t)-1);
	bs_free(&b);
	bs_free(&raw);
}

static void zlib_cases(void)
{
	static const char text[] = "zlib zlib zlib zlib zlib stream\n";
	size_t n = sizeof(text) - 1;
	struct bs raw = {0}, b = {0};
	put_fixed_header(&raw, 1);
	for (size_t i = 0; i < n; i++)
		hcode_put(&raw, &FL, (uint8_t)text[i]);
	hcode_put(&raw, &FL, 256);
	bs_align(&raw);
	/* Every window size 256 B .. 32 KiB (CINFO 0..7) and every FLEVEL, FCHECK made valid. */
	for (unsigned cinfo = 0; cinfo < 8; cinfo++)
		for (unsigned flevel = 0; flevel < 4; flevel++) {
			unsigned h = (cinfo << 12) | (8 << 8) | (flevel << 6);
			h += 31 - h % 31;
			bs_byte(&b, (uint8_t)(h >> 8));
			bs_byte(&b, (uint8_t)h);
			bs_bytes(&b, raw.buf, raw.len);
			put_zlib_trailer(&b, text, n);
			char name[32];
			snprintf(name, sizeof(name), "zlib_cinfo%u_flevel%u", cinfo, flevel);
			expect(name, 1, &b, ZN_OK, text, n, ZL_OK, (size_t)-1);
			bs_free(&b);
		}
	static const struct {
		const char *name;
		unsigned hdr; /* before the FCHECK fix-up */
		int fix;
		zn_result want;
		enum zl zl;
	} bad[] = {
	        {"zlib_cinfo8", 0x8800, 1, ZN_ERR_BAD_HEADER, ZL_ERR},
	        {"zlib_method7", 0x7700, 1, ZN_ERR_BAD_HEADER, ZL_ERR},
	        {"zlib_bad_fcheck", 0x789d, 0, ZN_ERR_BAD_HEADER, ZL_ERR},
	        {"zlib_fdict", 0x7820, 1, ZN_ERR_UNSUPPORTED, ZL_DICT},
	};
	for (size_t i = 0; i < ZN_ARRAY_LEN(bad); i++) {
		unsigned h = bad[i].hdr;
		if (bad[i].fix)
			h += (31 - h % 31) % 31;
		bs_byte(&b, (uint8_t)(h >> 8));
		bs_byte(&b, (uint8_t)h);
		if (h & 0x20)
			bs_le32(&b, 0x12345678); /* DICTID */
		bs_bytes(&b, raw.buf, raw.len);
		put_zlib_trailer(&b, text, n);
		expect(bad[i].name, 1, &b, bad[i].want, NULL, 0, bad[i].zl, 0);
		bs_free(&b);
	}
	put_zlib_header(&b);
	bs_bytes(&b, raw.buf, raw.len);
	put_zlib_trailer(&b, text, n);
	b.buf[b.len - 1] ^= 1;
	expect("zlib_bad_adler32", 1, &b, ZN_ERR_CHECKSUM, NULL, 0, ZL_ERR, 0);
	bs_free(&b);
	bs_free(&raw);
}

/* Every proper prefix of a good stream is truncated, in every container. */
static void truncation_cases(void)
{
	size_t n = 6000;
	uint8_t *data = malloc(n);
	for (size_t i = 0; i < n; i++)
		data[i] = (uint8_t)("abcdefghij"[tu_rng_below(&rng, 10)] + (i / 1000));
	int nstreams = 0, nprefixes = 0;
	for (int fmt = 0; fmt < 3; fmt++)
		for (int level = 0; level <= 9; level += 3) {
			static const int wbits[3] = {-15, 15, 31};
			const size_t cap = 2 * n + 1024;
			uint8_t *c = malloc(cap);
			CHECK(c != NULL);
			size_t clen = compress_zlib(data, n, c, cap, level, wbits[fmt],
			                            level == 3 ? Z_FIXED : Z_DEFAULT_STRATEGY);
			uint8_t *out = tu_guard_alloc(n);
			nstreams++;
			for (size_t cut = 0; cut < clen; cut++) {
				uint8_t *in = tu_guard_alloc(cut);
				memcpy(in, c, cut);
				zn_result r = zn_inflate(dec[fmt], in, cut, out, n, NULL);
				nprefixes++;
				if (r != ZN_ERR_TRUNCATED) {
					char name[64];
					snprintf(name, sizeof(name),
					         "%s/truncated_l%d_at_%zu_of_%zu", fmt_name[fmt],
					         level, cut, clen);
					fail_case(name, "zn_inflate", r, ZN_ERR_TRUNCATED);
				}
				/* Streaming, with in_final on the last chunk. */
				if (cut % 7 == 0) {
					uint8_t *o;
					size_t olen;
					r = stream_decode(dec[fmt], in, cut, 1 + cut / 3, &o,
					                  &olen);
					free(o);
					if (r != ZN_ERR_TRUNCATED) {
						char name[64];
						snprintf(name, sizeof(name),
						         "%s/truncated_l%d_at_%zu_of_%zu",
						         fmt_name[fmt], level, cut, clen);
						fail_case(name, "stream", r, ZN_ERR_TRUNCATED);
					}
				}
				tu_guard_free(in, cut);
			}
			CHECK_OK(zn_inflate(dec[fmt], c, clen, out, n, NULL));
			CHECK(!memcmp(out, data, n));
			tu_guard_free(out, n);
			free(c);
		}
	printf("truncation: %d prefixes of %d streams\n", nprefixes, nstreams);
	free(data);
}

/* More edges: empty input, full output followed by empty blocks, headers cut anywhere, window
 * boundaries of start_raw, and what follows a gzip member that looks like another one. */
static void more_cases(void)
{
	struct bs b = {0};
	struct out o = {0};
	/* Empty input in every format. */
	for (int fmt = 0; fmt < 3; fmt++) {
		uint8_t *in = tu_guard_alloc(0), out[16];
		zn_result r = zn_inflate(dec[fmt], in, 0, out, sizeof(out), NULL);
		if (r != ZN_ERR_TRUNCATED) {
			char name[32];
			snprintf(name, sizeof(name), "%s/empty_input", fmt_name[fmt]);
			fail_case(name, "zn_inflate", r, ZN_ERR_TRUNCATED);
		}
		tu_guard_free(in, 0);
	}

	/* The output buffer is full after the first block; empty blocks of every type follow. */
	put_fixed_header(&b, 0);
	for (int i = 0; i < 300; i++)
		lit(&b, &o, &FL, (uint8_t)('a' + i % 7));
	put_match(&b, &FL, &FD, 258, 7, 0);
	out_match(&o, 258, 7);
	hcode_put(&b, &FL, 256);
	for (int i = 0; i < 50; i++) {
		put_stored(&b, 0, NULL, 0);
		put_fixed_header(&b, 0);
		hcode_put(&b, &FL, 256);
	}
	put_fixed_header(&b, 1);
	hcode_put(&b, &FL, 256);
	expect3("full_output_then_empty_blocks", &b, ZN_OK, &o, ZL_OK);
	bs_free(&b);
	o.n = 0;

	/* A gzip header with every optional field, cut at every byte. */
	put_gzip_header(&b, 0x1e, 0);
	put_fixed_header(&b, 1);
	hcode_put(&b, &FL, 'x');
	hcode_put(&b, &FL, 256);
	put_gzip_trailer(&b, "x", 1);
	for (size_t cut = 0; cut < b.len; cut++) {
		uint8_t *in = tu_guard_alloc(cut), out[16];
		memcpy(in, b.buf, cut);
		zn_result r = zn_inflate(dec[2], in, cut, out, sizeof(out), NULL);
		if (r != ZN_ERR_TRUNCATED) {
			char name[48];
			snprintf(name, sizeof(name), "gzip/all_fields_cut_at_%zu", cut);
			fail_case(name, "zn_inflate", r, ZN_ERR_TRUNCATED);
		}
		tu_guard_free(in, cut);
	}
	expect("gzip_all_fields", 2, &b, ZN_OK, "x", 1, ZL_OK, (size_t)-1);

	/* After a good member: a magic's first byte with another second byte is trailing garbage;
	 * half a magic at the very end is a member cut short (as GNU gzip reports it). */
	for (int k = 0; k < 2; k++) {
		struct bs z = {0};
		bs_bytes(&z, b.buf, b.len);
		bs_bytes(&z, k ? "\x1f\x00\x1f" : "\x1f", k ? 3 : 1);
		expect(k ? "gzip_trailing_1f00" : "gzip_trailing_1f", 2, &z,
		       k ? ZN_ERR_TRAILING_GARBAGE : ZN_ERR_TRUNCATED, "x", 1, ZL_SKIP,
		       k ? b.len : (size_t)-1);
		bs_free(&z);
	}
	/* A whole magic with nothing after it, a magic with method 7: the contract does not
	 * single these out; report what the decoder does. */
	static const struct {
		const char *name, *bytes;
		size_t n;
	} tails[] = {{"1f8b", "\x1f\x8b", 2}, {"1f8b07", "\x1f\x8b\x07", 3}};
	for (size_t i = 0; i < ZN_ARRAY_LEN(tails); i++) {
		struct bs z = {0};
		bs_bytes(&z, b.buf, b.len);
		bs_bytes(&z, tails[i].bytes, tails[i].n);
		uint8_t out[16];
		struct zn_inflate_info info = {.struct_size = sizeof(info)};
		zn_result r = zn_inflate(dec[2], z.buf, z.len, out, sizeof(out), &info);
		printf("note: gzip member + %s: %s, out %llu, in_used %llu of %zu\n", tails[i].name,
		       zn_result_name(r), (unsigned long long)info.out_len,
		       (unsigned long long)info.in_used, z.len);
		bs_free(&z);
	}
	bs_free(&b);

	/* start_raw: a match reaching exactly to the start of the window, and one byte beyond. */
	static uint8_t win[32768];
	for (size_t i = 0; i < sizeof(win); i++)
		win[i] = (uint8_t)(i * 7);
	static const size_t wlens[] = {1, 100, 32767, 32768};
	for (size_t i = 0; i < ZN_ARRAY_LEN(wlens); i++) {
		size_t wl = wlens[i];
		for (int beyond = 0; beyond < 2; beyond++) {
			put_fixed_header(&b, 1);
			hcode_put(&b, &FL, 'q');
			put_match(&b, &FL, &FD, 5, (unsigned)(wl + 1 + (size_t)beyond), 0);
			hcode_put(&b, &FL, 256);
			bs_align(&b);
			if (wl + 1 + (size_t)beyond > 32768) {
				bs_free(&b);
				continue;
			}
			CHECK_OK(
			        zn_inflate_stream_start_raw(dec[0], 0, win + sizeof(win) - wl, wl));
			size_t used, olen;
			const void *op;
			int done = 0;
			zn_result r = zn_inflate_stream(dec[0], b.buf, b.len, 1, &used, &op, &olen,
			                                &done);
			zn_result want = beyond ? ZN_ERR_BAD_DISTANCE : ZN_OK;
			char name[64];
			snprintf(name, sizeof(name), "raw/start_raw_window_%zu_dist_%zu", wl,
			         wl + 1 + (size_t)beyond);
			if (r != want)
				fail_case(name, "stream", r, want);
			else if (!beyond &&
			         (olen != 6 || memcmp((const uint8_t *)op + 1,
			                              win + sizeof(win) - wl, ZN_MIN(wl, 5)))) {
				fprintf(stderr, "CASE FAILED %s: wrong output\n", name);
				n_failed++;
			}
			bs_free(&b);
		}
	}
	free(o.p);
}

/* API argument checks that need no stream. */
static void api_cases(void)
{
	struct zn_inflater *d = NULL;
	CHECK(zn_inflater_new(&d, 3) == ZN_ERR_INVALID_ARG);
	CHECK(d == NULL);
	CHECK(zn_inflater_new(&d, -1) == ZN_ERR_INVALID_ARG);
	zn_inflater_free(NULL);
	/* A fresh object streams without an explicit reset. */
	{
		static const uint8_t z[] = {0x78, 0x9c, 0x4b, 0x04, 0x00, 0x00, 0x62, 0x00, 0x62};
		struct zn_inflater *f;
		CHECK_OK(zn_inflater_new(&f, ZN_FORMAT_ZLIB));
		size_t used, olen;
		const void *o;
		int done = 0;
		zn_result r = zn_inflate_stream(f, z, sizeof(z), 1, &used, &o, &olen, &done);
		if (r != ZN_OK || !done || olen != 1 || memcmp(o, "a", 1))
			fail_case("zlib/fresh_object_stream", "stream", r, ZN_OK);
		zn_inflater_free(f);
	}
	/* start_raw is for raw objects only, bit 0..7, window <= 32 KiB. */
	uint8_t win[32769] = {0};
	CHECK(zn_inflate_stream_start_raw(dec[1], 0, NULL, 0) == ZN_ERR_INVALID_ARG);
	CHECK(zn_inflate_stream_start_raw(dec[0], 8, NULL, 0) == ZN_ERR_INVALID_ARG);
	CHECK(zn_inflate_stream_start_raw(dec[0], 0, win, 32769) == ZN_ERR_INVALID_ARG);
	CHECK_OK(zn_inflate_stream_start_raw(dec[0], 0, win, 32768));

	/* start_raw with a window and a first bit: a fixed block starting at bit 3 whose match
	 * reaches into the window. */
	struct bs b = {0};
	bs_bits(&b, 5, 3); /* three bits that belong to someone else */
	put_fixed_header(&b, 1);
	hcode_put(&b, &FL, 'z');
	put_match(&b, &FL, &FD, 10, 4, 0); /* "WXYZ" at the end of the window, then 'z' */
	hcode_put(&b, &FL, 256);
	bs_align(&b);
	memcpy(win + 32768 - 4, "WXYZ", 4);
	CHECK_OK(zn_inflate_stream_start_raw(dec[0], 3, win, 32768));
	size_t used, olen;
	const void *o;
	int done = 0;
	CHECK_OK(zn_inflate_stream(dec[0], b.buf, b.len, 1, &used, &o, &olen, &done));
	if (!(done && olen == 11 && !memcmp(o, "zXYZzXYZzXY", 11))) {
		fprintf(stderr, "CASE FAILED raw/start_raw_window: done %d, %zu bytes\n", done,
		        olen);
		n_failed++;
	}
	/* Calls after the end: done again, same result, nothing consumed or produced. */
	size_t used2 = 9, olen2 = 9;
	zn_result r9 = zn_inflate_stream(dec[0], b.buf, b.len, 1, &used2, &o, &olen2, &done);
	if (r9 != ZN_OK || !done || used2 || olen2) {
		fprintf(stderr, "CASE FAILED raw/call_after_done: %s done %d used %zu out %zu\n",
		        zn_result_name(r9), done, used2, olen2);
		n_failed++;
	}
	/* start_raw at every bit offset, fed in small chunks (a parallel decoder resuming from a
	 * pipe hands over whatever it has). The stream: k junk bits, then a fixed block whose
	 * matches reach into the window. */
	for (unsigned k = 0; k < 8; k++) {
		struct bs sb = {0};
		bs_bits(&sb, 0x55, k);
		put_fixed_header(&sb, 1);
		static const char msg[] = "hello, window";
		for (size_t i = 0; i < sizeof(msg) - 1; i++)
			hcode_put(&sb, &FL, (uint8_t)msg[i]);
		put_match(&sb, &FL, &FD, 40, 20, 0); /* 7 bytes back into the window */
		put_match(&sb, &FL, &FD, 100, 13, 0);
		hcode_put(&sb, &FL, 256);
		bs_align(&sb);
		uint8_t want[153];
		memcpy(want, msg, 13);
		for (int i = 13; i < 53; i++) /* the window's last 7 bytes, then the output */
			want[i] = i < 20 ? win[32768 - 7 + i - 13] : want[i - 20];
		for (int i = 53; i < 153; i++)
			want[i] = want[i - 13];
		for (size_t chunk = 1; chunk <= 9; chunk++) {
			CHECK_OK(zn_inflate_stream_start_raw(dec[0], k, win, 32768));
			uint8_t got[200];
			size_t pos = 0, opos = 0, u2 = 0, ol2 = 0;
			unsigned calls = 0;
			int fin = 0;
			zn_result rr = ZN_OK;
			while (!fin && rr == ZN_OK && ++calls < 10000) {
				size_t c = ZN_MIN(chunk, sb.len - pos);
				uint8_t *g = tu_guard_alloc(c);
				memcpy(g, sb.buf + pos, c);
				rr = zn_inflate_stream(dec[0], g, c, pos + c == sb.len, &u2, &o,
				                       &ol2, &fin);
				tu_guard_free(g, c);
				if (opos + ol2 <= sizeof(got) && ol2)
					memcpy(got + opos, o, ol2);
				opos += ol2;
				pos += u2;
			}
			if (rr != ZN_OK || opos != sizeof(want) ||
			    memcmp(got, want, sizeof(want))) {
				char name[64];
				snprintf(name, sizeof(name), "raw/start_raw_bit%u_chunks_of_%zu", k,
				         chunk);
				fprintf(stderr,
				        "CASE FAILED %-34s stream: %s, %zu bytes (want ZN_OK, "
				        "%zu)\n",
				        name, zn_result_name(rr), opos, sizeof(want));
				n_failed++;
			}
		}
		bs_free(&sb);
	}
	/* The same distance with a 2-byte window is too far. */
	CHECK_OK(zn_inflate_stream_start_raw(dec[0], 3, win + 32768 - 2, 2));
	zn_result r = zn_inflate_stream(dec[0], b.buf, b.len, 1, &used, &o, &olen, &done);
	if (r != ZN_ERR_BAD_DISTANCE)
		fail_case("raw/start_raw_window_too_short", "stream", r, ZN_ERR_BAD_DISTANCE);
	/* Errors are sticky until a reset. */
	r = zn_inflate_stream(dec[0], b.buf, b.len, 1, &used, &o, &olen, &done);
	if (r != ZN_ERR_BAD_DISTANCE)
		fail_case("raw/sticky_error", "stream", r, ZN_ERR_BAD_DISTANCE);
	/* NULL buffers are allowed with zero lengths only. */
	for (int fmt = 0; fmt < 3; fmt++) {
		struct zn_inflate_info info = {.struct_size = sizeof(info)};
		zn_result r0 = zn_inflate(dec[fmt], NULL, 0, NULL, 0, &info);
		if (r0 != ZN_ERR_TRUNCATED)
			fail_case("all/null_empty_input", "zn_inflate", r0, ZN_ERR_TRUNCATED);
		CHECK(zn_inflate(dec[fmt], NULL, 5, win, 10, NULL) == ZN_ERR_INVALID_ARG);
		CHECK(zn_inflate(dec[fmt], win, 5, NULL, 10, NULL) == ZN_ERR_INVALID_ARG);
	}
	bs_free(&b);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_edge_zlib");
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-d")) {
			dump_dir = argv[i + 1];
			mkdir(dump_dir, 0755);
		}
	tu_rng_seed(&rng, tu_seed);
	printf("seed %llu\n", (unsigned long long)tu_seed);
	fixed_codes(&FL, &FD);
	for (int f = 0; f < 3; f++)
		CHECK_OK(zn_inflater_new(&dec[f], f));
	api_cases();
	stored_cases();
	fixed_cases();
	dynamic_cases();
	gzip_cases();
	zlib_cases();
	more_cases();
	truncation_cases();
	for (int f = 0; f < 3; f++)
		zn_inflater_free(dec[f]);
	printf("%d cases, %d failures\n", n_cases, n_failed);
	return n_failed != 0;
}
