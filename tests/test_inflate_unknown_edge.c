/* SPDX-License-Identifier: MIT */
/* test_inflate_unknown_edge.c - unknown-window decoding on hand-built streams: the oldest window
 * byte, overlapping copies of markers, stored blocks, the switch to bytes, a start at the final
 * block, errors, arguments and zn_inflate_resolve_markers. */
/*
 * Each case is a list of operations (literal, match, stored block, block end) written as fixed
 * Huffman and stored blocks behind 0..7 junk bits, and decoded by a naive model alongside: a
 * symbol array that starts with the 32 Ki markers and copies one symbol at a time. znippy's
 * symbols must equal the model's, the switch to bytes must come as soon as the model's last
 * 32 Ki symbols hold no marker, the bytes after it must equal the model's, and a decode with the
 * window known (zn_inflate_stream_start_raw) must equal the model resolved with that window.
 *
 * A reference one byte beyond the window cannot be written: DEFLATE distances end at 32768, and
 * with 32 Ki of (unknown) history every one of them is in reach. It exists relative to a shorter
 * real window (a start less than 32 KiB into the data): each case is also resolved, and decoded
 * with the window known, with the shortest window that suffices and with one byte less, which
 * must be ZN_ERR_BAD_DISTANCE both ways.
 */
#include <string.h>

#include "inflate_test_streams.h"
#include "test_util.h"

#define HIST         32768u
#define MAXOUT       (1u << 18)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

enum { LIT, MATCH, STORED, BLOCK };
struct op {
	int kind;
	unsigned a, b; /* LIT: byte; MATCH: length, distance; STORED: length */
};

static uint8_t window[HIST];
static uint16_t model[HIST + MAXOUT]; /* the model's symbols, history first */
static uint16_t syms[MAXOUT];
static uint8_t bytes[MAXOUT], known_out[MAXOUT], resolved[MAXOUT];
static struct hcode flit, fdist;

struct stream {
	struct bs b;
	size_t nmodel;         /* symbols the model produced (after the history) */
	size_t need;           /* the shortest real window that resolves every marker */
	size_t known_at;       /* symbols after which the window is known (0: never) */
	uint64_t bounds[1024]; /* bit positions of block ends, relative to the start */
	size_t nbounds;
};

/* A block ends here. */
static void push_bound(struct stream *s, unsigned junk)
{
	CHECK(s->nbounds < ARRAY_LEN(s->bounds));
	s->bounds[s->nbounds++] = 8 * s->b.len + s->b.n - junk;
}

/* Write `ops` behind `junk` bits (the last block final) and run the model. */
static void build(struct stream *s, const struct op *ops, size_t n, unsigned junk, struct tu_rng *g)
{
	memset(s, 0, sizeof(*s));
	bs_bits(&s->b, 0x5a, junk);
	for (unsigned k = 0; k < HIST; k++)
		model[k] = (uint16_t)(ZN_INFLATE_MARKER + k);
	size_t pos = HIST, last_marker = HIST;
	int open = 0;
	for (size_t i = 0; i < n; i++) {
		const struct op *o = &ops[i];
		int last = i + 1 == n;
		if (o->kind == STORED) {
			if (open) {
				hcode_put(&s->b, &flit, 256);
				push_bound(s, junk);
				open = 0;
			}
			uint8_t *data = malloc(o->a + 1);
			tu_rng_fill(g, data, o->a);
			put_stored(&s->b, last, data, o->a);
			push_bound(s, junk);
			for (unsigned k = 0; k < o->a; k++) {
				model[pos++] = data[k];
				if (!s->known_at && pos - last_marker == HIST)
					s->known_at =
					        pos - HIST; /* the decoder stops right there */
			}
			free(data);
			continue;
		}
		if (o->kind == BLOCK) {
			if (open) {
				hcode_put(&s->b, &flit, 256);
				push_bound(s, junk);
			}
			open = 0;
			continue;
		}
		if (!open) {
			put_fixed_header(&s->b, 0);
			open = 1;
		}
		if (o->kind == LIT) {
			hcode_put(&s->b, &flit, o->a);
			model[pos++] = (uint16_t)o->a;
		} else {
			CHECK(o->b >= 1 && o->b <= 32768 && o->b <= pos);
			put_match(&s->b, &flit, &fdist, o->a, o->b, 0);
			for (unsigned k = 0; k < o->a; k++) {
				model[pos] = model[pos - o->b];
				if (model[pos] >= ZN_INFLATE_MARKER) {
					last_marker = pos + 1;
					size_t need = HIST - (model[pos] - ZN_INFLATE_MARKER);
					s->need = need > s->need ? need : s->need;
				}
				pos++;
			}
		}
		/* The decoder takes a match or literal whole, then checks. */
		if (!s->known_at && pos - last_marker >= HIST)
			s->known_at = pos - HIST;
	}
	if (open) {
		hcode_put(&s->b, &flit, 256);
		push_bound(s, junk);
	}
	/* The final block: the last one written. Mark it by ending with an empty final fixed
	 * block unless the last op already was a final stored block. */
	if (ops[n - 1].kind != STORED) {
		put_fixed_header(&s->b, 1);
		hcode_put(&s->b, &flit, 256);
		push_bound(s, junk);
	}
	bs_align(&s->b);
	s->nmodel = pos - HIST;
}

struct decoded {
	zn_result r;
	size_t nsym, nbytes, nstops;
	int known;
};

/* Decode a built stream with an unknown window, in pieces of up to `piece` bytes. */
static void decode(struct zn_inflater *d, const struct stream *s, unsigned junk, size_t piece,
                   int stops, struct tu_rng *g, struct decoded *res)
{
	memset(res, 0, sizeof(*res));
	zn_inflate_stream_set_block_stops(d, stops);
	CHECK_OK(zn_inflate_stream_start_unknown(d, junk));
	size_t pos = 0, len = s->b.len;
	int done = 0;
	zn_result r = ZN_OK;
	while (!done && r == ZN_OK) {
		size_t n = 1 + tu_rng_below(g, piece);
		if (n > len - pos)
			n = len - pos;
		uint8_t *p = tu_guard_alloc(n);
		memcpy(p, s->b.buf + pos, n);
		size_t used, olen;
		if (!zn_inflate_stream_window_known(d)) {
			const uint16_t *o;
			r = zn_inflate_stream_symbols(d, p, n, pos + n == len, &used, &o, &olen,
			                              &done);
			CHECK(res->nsym + olen <= MAXOUT);
			memcpy(syms + res->nsym, o, olen * 2);
			res->nsym += olen;
		} else {
			const void *o;
			r = zn_inflate_stream(d, p, n, pos + n == len, &used, &o, &olen, &done);
			CHECK(res->nsym + res->nbytes + olen <= MAXOUT);
			memcpy(bytes + res->nbytes, o, olen);
			res->nbytes += olen;
		}
		tu_guard_free(p, n);
		pos += used;
		if (zn_inflate_stream_at_block_end(d)) {
			CHECK(res->nstops < s->nbounds);
			CHECK_EQ_U64(zn_inflate_stream_bit_position(d) - junk,
			             s->bounds[res->nstops]);
			res->nstops++;
		}
	}
	res->r = r;
	res->known = zn_inflate_stream_window_known(d);
	if (r == ZN_OK && stops)
		CHECK_EQ_U64(res->nstops, s->nbounds);
}

/* The stream decoded with the last `wlen` bytes of `window` known: the result, and the output in
 * known_out. */
static zn_result decode_known(struct zn_inflater *d, const struct stream *s, unsigned junk,
                              size_t wlen, size_t *out_len)
{
	CHECK_OK(zn_inflate_stream_start_raw(d, junk, window + HIST - wlen, wlen));
	size_t pos = 0, got = 0, used, olen;
	const void *o;
	int done = 0;
	zn_result r = ZN_OK;
	while (!done && r == ZN_OK) {
		r = zn_inflate_stream(d, s->b.buf + pos, s->b.len - pos, 1, &used, &o, &olen,
		                      &done);
		CHECK(got + olen <= MAXOUT);
		memcpy(known_out + got, o, olen);
		got += olen;
		pos += used;
	}
	*out_len = got;
	return r;
}

/* Build, decode in several ways, compare with the model and the known-window decode. */
static void check_case(struct zn_inflater *d, const char *name, const struct op *ops, size_t n,
                       struct tu_rng *g)
{
	for (unsigned junk = 0; junk < 8; junk++) {
		struct stream s;
		build(&s, ops, n, junk, g);
		static const size_t pieces[] = {1, 7, 400, 1 << 20};
		for (size_t pi = 0; pi < ARRAY_LEN(pieces); pi++) {
			/* Each call maps a guard page: tiny pieces for small streams only. */
			if (pieces[pi] * 200 < s.b.len && (junk || pieces[pi] * 1000 < s.b.len))
				continue;
			struct decoded res;
			int stops = (int)((junk + pi) & 1);
			decode(d, &s, junk, pieces[pi], stops, g, &res);
			if (res.r != ZN_OK)
				fprintf(stderr, "%s: junk %u piece %zu: %s\n", name, junk,
				        pieces[pi], zn_result_name(res.r));
			CHECK_OK(res.r);
			CHECK_EQ_U64(res.nsym + res.nbytes, s.nmodel);
			CHECK(memcmp(syms, model + HIST, res.nsym * 2) == 0);
			for (size_t i = 0; i < res.nbytes; i++)
				CHECK(bytes[i] == model[HIST + res.nsym + i]);
			if (!s.known_at) {
				CHECK(!res.known && res.nbytes == 0);
			} else if (res.known) {
				/* As soon as it could: the fast loop checks after up to three
				 * literal entries (fixed codes: one literal each), and a stored
				 * block takes up to 7 bytes from the bit buffer before it looks. */
				if (res.nsym < s.known_at || res.nsym > s.known_at + 7)
					fprintf(stderr, "%s: switched after %zu symbols, not %zu\n",
					        name, res.nsym, s.known_at);
				CHECK(res.nsym >= s.known_at && res.nsym <= s.known_at + 7);
			} else {
				/* The stream ended where the window became known. */
				CHECK(res.nsym == s.nmodel && res.nsym - s.known_at <= 7);
			}
		}
		/* Known windows: the model resolved with them; one byte short of what the
		 * markers need is an error both ways. */
		size_t wl[2] = {HIST, s.need}, out_len;
		for (int k = 0; k < 2; k++) {
			CHECK_OK(decode_known(d, &s, junk, wl[k], &out_len));
			CHECK_EQ_U64(out_len, s.nmodel);
			CHECK_OK(zn_inflate_resolve_markers(
			        model + HIST, s.nmodel, window + HIST - wl[k], wl[k], resolved));
			CHECK(memcmp(known_out, resolved, s.nmodel) == 0);
		}
		if (s.need) {
			CHECK(decode_known(d, &s, junk, s.need - 1, &out_len) ==
			      ZN_ERR_BAD_DISTANCE);
			CHECK(zn_inflate_resolve_markers(model + HIST, s.nmodel,
			                                 window + HIST - (s.need - 1), s.need - 1,
			                                 resolved) == ZN_ERR_BAD_DISTANCE);
		}
		bs_free(&s.b);
	}
}

/* An op list with `nlit` literals 'a'.. appended. */
static size_t add_lits(struct op *ops, size_t n, unsigned nlit)
{
	for (unsigned i = 0; i < nlit; i++)
		ops[n++] = (struct op){LIT, 'a' + i % 26, 0};
	return n;
}

static void test_cases(struct zn_inflater *d, struct tu_rng *g)
{
	static struct op ops[70000];
	size_t n;
#define ONE_CASE(name, ...)                                                                        \
	do {                                                                                       \
		static const struct op c_[] = {__VA_ARGS__};                                       \
		check_case(d, name, c_, ARRAY_LEN(c_), g);                                         \
	} while (0)
	ONE_CASE("oldest window byte", {MATCH, 3, 32768});
	ONE_CASE("oldest after literals", {LIT, 'x', 0}, {LIT, 'y', 0}, {MATCH, 258, 32768},
	         {MATCH, 4, 32768});
	ONE_CASE("newest window byte, overlapping", {MATCH, 258, 1});
	ONE_CASE("overlapping period 3", {MATCH, 10, 3}, {LIT, 'q', 0}, {MATCH, 258, 5},
	         {MATCH, 3, 200});
	ONE_CASE("markers copied again", {MATCH, 5, 1000}, {LIT, 'z', 0}, {MATCH, 6, 6},
	         {BLOCK, 0, 0}, {MATCH, 12, 12}, {MATCH, 7, 32768});
	ONE_CASE("stored in symbol mode", {STORED, 11, 0}, {MATCH, 6, 14}, {STORED, 0, 0},
	         {MATCH, 20, 17}, {STORED, 5, 0});
	ONE_CASE("empty blocks", {BLOCK, 0, 0}, {STORED, 0, 0}, {MATCH, 3, 9}, {BLOCK, 0, 0},
	         {STORED, 0, 0});

	/* The switch: markers at 0..9, then exactly 32 Ki literals later (fixed literal codes
	 * are 8-9 bits, so the careful loop takes one at a time and stops exactly). */
	n = 0;
	ops[n++] = (struct op){MATCH, 10, 32768};
	n = add_lits(ops, n, 33000);
	ops[n++] = (struct op){MATCH, 258, 32768}; /* in bytes: reaches symbol 290 */
	check_case(d, "switch after the last marker", ops, n, g);
	/* Literals that cross the switch and end at a length: the fast loop must stop there,
	 * not go on into the match (it once did, 260 symbols past the switch). */
	n = 0;
	ops[n++] = (struct op){MATCH, 10, 32768};
	n = add_lits(ops, n, 1);
	for (int k = 0; k < 126; k++)
		ops[n++] = (struct op){MATCH, 258, 1};
	ops[n++] = (struct op){MATCH, 249, 1}; /* to symbol 32768 */
	ops[n++] = (struct op){MATCH, 9, 1};
	n = add_lits(ops, n, 3); /* symbols 32777..32779: the switch is at 32778 */
	ops[n++] = (struct op){MATCH, 258, 1};
	n = add_lits(ops, n, 200);
	check_case(d, "literals across the switch, then a match", ops, n, g);
	/* A marker copied late moves the switch: markers 5..9 reach 110..114. */
	n = 0;
	ops[n++] = (struct op){MATCH, 10, 32768};
	n = add_lits(ops, n, 100);
	ops[n++] = (struct op){MATCH, 20, 105};
	n = add_lits(ops, n, 32700);
	ops[n++] = (struct op){MATCH, 30, 32000}; /* copies no marker */
	n = add_lits(ops, n, 500);
	check_case(d, "switch moved by a copied marker", ops, n, g);
	/* A copy that starts exactly at the newest marker carries it on (to symbol 5). */
	n = 0;
	ops[n++] = (struct op){MATCH, 3, 32768};
	n = add_lits(ops, n, 2);
	ops[n++] = (struct op){MATCH, 3, 3};
	n = add_lits(ops, n, 33000);
	check_case(d, "copy from the newest marker", ops, n, g);
	/* The switch inside a stored block (stopped exactly there), and a stored block that
	 * starts in symbol mode and carries on in bytes. */
	n = 0;
	ops[n++] = (struct op){STORED, 40000, 0};
	ops[n++] = (struct op){MATCH, 258, 32768};
	check_case(d, "switch inside a stored block", ops, n, g);
	n = 0;
	ops[n++] = (struct op){MATCH, 3, 32768};
	ops[n++] = (struct op){STORED, 65535, 0};
	check_case(d, "64 KiB stored block", ops, n, g);
	/* No reference back at all: the window is known after exactly 32 Ki symbols. */
	n = add_lits(ops, 0, 40000);
	check_case(d, "no markers", ops, n, g);

	/* Random op lists: matches anywhere in reach, often the farthest. */
	for (int iter = 0; iter < 30; iter++) {
		n = 0;
		size_t count = 1 + tu_rng_below(g, 400);
		for (size_t i = 0; i < count; i++) {
			unsigned k = (unsigned)tu_rng_below(g, 16);
			if (k < 6) {
				ops[n++] = (struct op){LIT, (unsigned)tu_rng_below(g, 256), 0};
			} else if (k < 14) {
				unsigned len = 3 + (unsigned)tu_rng_below(g, 256);
				unsigned dist = 1 + (unsigned)tu_rng_below(g, 32768);
				if (k >= 12)
					dist = 32768 - (unsigned)tu_rng_below(g, 3);
				ops[n++] = (struct op){MATCH, len, dist};
			} else if (k == 14) {
				unsigned len = (unsigned)tu_rng_below(g, 3000);
				ops[n++] = (struct op){STORED, len, 0};
			} else {
				ops[n++] = (struct op){BLOCK, 0, 0};
			}
		}
		check_case(d, "random", ops, n, g);
	}
#undef ONE_CASE
}

/* A start at the final block, in the middle of a byte: [fixed: "abc"][final fixed: markers]. */
static void test_final_block(struct zn_inflater *d)
{
	for (unsigned junk = 0; junk < 8; junk++) {
		struct bs b = {0};
		bs_bits(&b, 0, junk);
		put_fixed_header(&b, 0);
		for (unsigned i = 0; i < 3; i++)
			hcode_put(&b, &flit, 'a' + i);
		hcode_put(&b, &flit, 256);
		uint64_t at = 8 * b.len + b.n;
		put_fixed_header(&b, 1);
		put_match(&b, &flit, &fdist, 5, 2, 0);
		hcode_put(&b, &flit, 'd');
		hcode_put(&b, &flit, 256);
		uint64_t end = 8 * b.len + b.n;
		bs_align(&b);
		zn_inflate_stream_set_block_stops(d, 1);
		CHECK_OK(zn_inflate_stream_start_unknown(d, (unsigned)(at & 7)));
		const uint8_t *in = b.buf + at / 8;
		size_t len = b.len - at / 8, used, n;
		const uint16_t *s;
		int done;
		CHECK_OK(zn_inflate_stream_symbols(d, in, len, 1, &used, &s, &n, &done));
		/* Stopped after the final block: the exact bit, then the end. */
		CHECK(!done && zn_inflate_stream_at_block_end(d));
		CHECK_EQ_U64(zn_inflate_stream_bit_position(d), end - 8 * (at / 8));
		const uint16_t m6 = ZN_INFLATE_MARKER + 32766, m7 = ZN_INFLATE_MARKER + 32767;
		const uint16_t want[6] = {m6, m7, m6, m7, m6, 'd'};
		CHECK(n == 6 && memcmp(s, want, sizeof(want)) == 0);
		size_t used2;
		CHECK_OK(zn_inflate_stream_symbols(d, in + used, len - used, 1, &used2, &s, &n,
		                                   &done));
		CHECK(done && n == 0 && !zn_inflate_stream_at_block_end(d));
		CHECK_EQ_U64(used + used2, len);
		uint64_t in_pos;
		zn_inflate_stream_position(d, &in_pos, NULL);
		CHECK_EQ_U64(in_pos, len);
		CHECK_EQ_U64(zn_inflate_stream_bit_position(d), 8 * len);
		CHECK(!zn_inflate_stream_window_known(d));
		/* Done is sticky. */
		CHECK_OK(zn_inflate_stream_symbols(d, NULL, 0, 1, &used, &s, &n, &done));
		CHECK(done && n == 0);
		bs_free(&b);
	}
	zn_inflate_stream_set_block_stops(d, 0);
}

/* Corrupt streams: symbol mode reports what the byte decoder reports. */
static void test_errors(struct zn_inflater *d)
{
	struct bs b[7] = {{0}};
	zn_result want[7];
	/* 0: truncated in the middle of a Huffman block */
	put_fixed_header(&b[0], 1);
	for (unsigned i = 0; i < 40; i++)
		hcode_put(&b[0], &flit, 'a' + i % 3);
	put_match(&b[0], &flit, &fdist, 10, 40, 0);
	for (unsigned i = 0; i < 40; i++)
		hcode_put(&b[0], &flit, 'a' + i % 3);
	hcode_put(&b[0], &flit, 256);
	bs_align(&b[0]);
	b[0].len /= 2;
	want[0] = ZN_ERR_TRUNCATED;
	/* 1: block type 3 after a good block */
	put_fixed_header(&b[1], 0);
	put_match(&b[1], &flit, &fdist, 10, 40, 0);
	hcode_put(&b[1], &flit, 256);
	bs_bits(&b[1], 7, 3);
	bs_bits(&b[1], 0, 16);
	want[1] = ZN_ERR_BAD_BLOCK_TYPE;
	/* 2: literal/length 286 */
	put_fixed_header(&b[2], 1);
	hcode_put(&b[2], &flit, 'a');
	hcode_put(&b[2], &flit, 286);
	bs_bits(&b[2], 0, 32);
	want[2] = ZN_ERR_BAD_SYMBOL;
	/* 3: distance 30 */
	put_fixed_header(&b[3], 1);
	hcode_put(&b[3], &flit, 257);
	hcode_put(&b[3], &fdist, 30);
	bs_bits(&b[3], 0, 32);
	want[3] = ZN_ERR_BAD_SYMBOL;
	/* 4: stored LEN != ~NLEN */
	bs_bits(&b[4], 1, 3);
	bs_align(&b[4]);
	bs_le16(&b[4], 5);
	bs_le16(&b[4], 5);
	bs_bits(&b[4], 0, 64);
	want[4] = ZN_ERR_BAD_STORED_LEN;
	/* 5: a dynamic header without an end-of-block code */
	{
		struct hcode lit = {0}, dist = {0};
		lit.n = 257;
		lit.len['a'] = 1;
		lit.len['b'] = 1;
		dist.n = 1;
		dist.len[0] = 1;
		put_dynamic_header(&b[5], 1, &lit, &dist, NULL, NULL, 0, 0);
		bs_bits(&b[5], 0, 32);
	}
	want[5] = ZN_ERR_BAD_CODE_LENGTHS;
	/* 6: a stored block cut short */
	bs_bits(&b[6], 1, 3);
	bs_align(&b[6]);
	bs_le16(&b[6], 100);
	bs_le16(&b[6], ~100u & 0xffff);
	bs_bytes(&b[6], "0123456789", 10);
	want[6] = ZN_ERR_TRUNCATED;
	for (int i = 0; i < 7; i++) {
		bs_align(&b[i]);
		for (int known = 0; known < 2; known++) {
			if (known)
				CHECK_OK(zn_inflate_stream_start_raw(d, 0, window, HIST));
			else
				CHECK_OK(zn_inflate_stream_start_unknown(d, 0));
			size_t used, n;
			int done;
			zn_result r;
			if (known) {
				const void *o;
				r = zn_inflate_stream(d, b[i].buf, b[i].len, 1, &used, &o, &n,
				                      &done);
			} else {
				const uint16_t *o;
				r = zn_inflate_stream_symbols(d, b[i].buf, b[i].len, 1, &used, &o,
				                              &n, &done);
			}
			if (r != want[i])
				fprintf(stderr, "error case %d (%s window): %s, expected %s\n", i,
				        known ? "known" : "unknown", zn_result_name(r),
				        zn_result_name(want[i]));
			CHECK(r == want[i]);
			/* Sticky. */
			if (known) {
				const void *o;
				r = zn_inflate_stream(d, NULL, 0, 1, &used, &o, &n, &done);
			} else {
				const uint16_t *o;
				r = zn_inflate_stream_symbols(d, NULL, 0, 1, &used, &o, &n, &done);
			}
			CHECK(r == want[i]);
		}
		bs_free(&b[i]);
	}
}

static void test_arguments(struct zn_inflater *d)
{
	size_t used, n;
	const uint16_t *s;
	const void *o;
	int done;
	struct zn_inflater *dg;
	CHECK_OK(zn_inflater_new(&dg, ZN_FORMAT_GZIP));
	CHECK(zn_inflate_stream_start_unknown(dg, 0) == ZN_ERR_INVALID_ARG);
	zn_inflater_free(dg);
	CHECK(zn_inflate_stream_start_unknown(NULL, 0) == ZN_ERR_INVALID_ARG);
	CHECK(zn_inflate_stream_start_unknown(d, 8) == ZN_ERR_INVALID_ARG);
	/* Symbols only while the window is unknown, bytes only once it is; neither sticks. */
	CHECK_OK(zn_inflate_stream_reset(d));
	CHECK(zn_inflate_stream_window_known(d));
	CHECK(zn_inflate_stream_symbols(d, NULL, 0, 0, &used, &s, &n, &done) == ZN_ERR_INVALID_ARG);
	CHECK_OK(zn_inflate_stream_start_unknown(d, 3));
	CHECK(!zn_inflate_stream_window_known(d));
	CHECK(zn_inflate_stream(d, NULL, 0, 0, &used, &o, &n, &done) == ZN_ERR_INVALID_ARG);
	CHECK(zn_inflate_stream_symbols(d, NULL, 0, 0, &used, NULL, &n, &done) ==
	      ZN_ERR_INVALID_ARG);
	static const uint8_t fixed_empty[] = {0x03 << 3, 0}; /* 3 junk bits, final fixed, EOB */
	CHECK_OK(zn_inflate_stream_symbols(d, fixed_empty, 2, 1, &used, &s, &n, &done));
	CHECK(done && n == 0);
	/* The object still does everything else: a whole-buffer decode, then unknown again. */
	static const uint8_t stored[] = {1, 2, 0, 0xfd, 0xff, 'h', 'i'};
	uint8_t out[4];
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	CHECK_OK(zn_inflate(d, stored, sizeof(stored), out, sizeof(out), &info));
	CHECK(info.out_len == 2 && out[0] == 'h');
	CHECK_OK(zn_inflate_stream_start_unknown(d, 0));
	CHECK_OK(zn_inflate_stream_symbols(d, stored, sizeof(stored), 1, &used, &s, &n, &done));
	CHECK(done && n == 2 && s[0] == 'h' && s[1] == 'i' && used == sizeof(stored));
	zn_inflate_stream_set_block_stops(NULL, 1); /* ignored */
}

static void test_resolve(struct tu_rng *g)
{
	static uint16_t s[1000];
	static uint8_t o[1000];
	const uint16_t M = ZN_INFLATE_MARKER;
	for (int iter = 0; iter < 200; iter++) {
		size_t n = tu_rng_below(g, 1000);
		size_t wlen = tu_rng_below(g, 3) ? HIST : tu_rng_below(g, HIST + 1);
		const uint8_t *w = window + HIST - wlen;
		for (size_t i = 0; i < n; i++)
			s[i] = tu_rng_below(g, 2)
			               ? (uint16_t)tu_rng_below(g, 256)
			               : (uint16_t)(M + HIST - 1 - tu_rng_below(g, wlen + !wlen));
		if (!wlen)
			for (size_t i = 0; i < n; i++)
				s[i] &= 0xff;
		CHECK_OK(zn_inflate_resolve_markers(s, n, w, wlen, o));
		for (size_t i = 0; i < n; i++)
			CHECK(o[i] == (s[i] < 256 ? s[i] : window[s[i] - M]));
		/* In place. */
		uint16_t *t = malloc(n * 2 + 2);
		memcpy(t, s, n * 2);
		CHECK_OK(zn_inflate_resolve_markers(t, n, w, wlen, t));
		CHECK(memcmp(t, o, n) == 0);
		free(t);
		/* One bad value anywhere fails the whole call. */
		if (n) {
			size_t at = tu_rng_below(g, n);
			uint16_t keep = s[at];
			s[at] = (uint16_t)(256 + tu_rng_below(g, M - 256));
			CHECK(zn_inflate_resolve_markers(s, n, w, wlen, o) == ZN_ERR_INVALID_ARG);
			if (wlen < HIST) {
				s[at] = (uint16_t)(M + HIST - wlen -
				                   1); /* just before the window */
				CHECK(zn_inflate_resolve_markers(s, n, w, wlen, o) ==
				      ZN_ERR_BAD_DISTANCE);
			}
			s[at] = keep;
		}
	}
	CHECK_OK(zn_inflate_resolve_markers(NULL, 0, NULL, 0, NULL));
	CHECK(zn_inflate_resolve_markers(NULL, 1, window, HIST, o) == ZN_ERR_INVALID_ARG);
	CHECK(zn_inflate_resolve_markers(s, 1, window, HIST + 1, o) == ZN_ERR_INVALID_ARG);
	CHECK(zn_inflate_resolve_markers(s, 1, NULL, 5, o) == ZN_ERR_INVALID_ARG);
	s[0] = M;
	CHECK(zn_inflate_resolve_markers(s, 1, NULL, 0, o) == ZN_ERR_BAD_DISTANCE);
	s[0] = M + HIST - 1;
	CHECK_OK(zn_inflate_resolve_markers(s, 1, window + HIST - 1, 1, o));
	CHECK(o[0] == window[HIST - 1]);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_unknown_edge");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	tu_rng_fill(&g, window, sizeof(window));
	fixed_codes(&flit, &fdist);
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_RAW));
	test_cases(d, &g);
	test_final_block(d);
	test_errors(d);
	test_arguments(d);
	test_resolve(&g);
	zn_inflater_free(d);
	return 0;
}
