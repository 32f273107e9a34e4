/* SPDX-License-Identifier: MIT */
/* gzip_chunk.c - one chunk of a parallel gzip decode: find a start, decode to the range's end. */
#include <stdlib.h>

#include "deflate/deflate_resume.h"
#include "gzip/gzip_internal.h"

/*
 * A job gets a range [from, to) of the stream (in bits) and the input from somewhere before it to
 * the end (a mapped file) or to a little past `to` (a pipe's buffer). It
 *   1. finds the first candidate in the range (gzip_find.c); the chunk at the stream's start
 *      starts at its first member header without searching;
 *   2. decodes from there: from a member header in bytes (the window is empty), from a block
 *      with the window unknown, in symbols (deflate_markers.c), until the last 32 Ki symbols
 *      hold no marker, then in bytes. Both go straight into the chunk's buffers (the direct
 *      calls of deflate_resume.h), the bytes checksummed as they come, while in cache;
 *   3. stops at the first real block boundary or member start at or after `to` where the
 *      candidate predicate holds (GZ_END_STOP), at the end of the input after a last member
 *      (GZ_END_STREAM), or earlier at the last boundary it passed (GZ_END_CUT): when decoding
 *      fails there, when the output passes the chunk's cap, when the input at hand runs out.
 * Members are followed across: the trailer is recorded for the stitcher to check (the CRC of a
 * member that started before the chunk needs the symbols resolved first), the next header is
 * parsed, and decoding goes on in bytes. Anything unusual after a trailer (zero padding followed
 * by more, garbage, a header too long to be a candidate but not bad) ends the chunk with a cut:
 * the stitcher then decodes on with the ordinary gzip decoder, which says what -T1 says.
 *
 * A start that fails before two block or member ends were passed was a false positive of the
 * finder: the next candidate is tried, within a budget of input (so that adversarial input
 * cannot make a job quadratic). Anything later is a cut: real damage is reported by the
 * stitcher's sequential decoder, at the position -T1 reports it.
 */

#define CALL_OUT (256u * 1024) /* output per direct call: checksummed while in cache */
#define MIN_ROOM (64u * 1024)  /* room a buffer needs for the next call */

/* Where a cut would go: the last boundary passed, and the output up to it. */
struct mark {
	uint64_t pos;
	int at;
	size_t nsym, nout, nmends;
	uint32_t crc;
	size_t crc_from;
};

struct job {
	struct gz_chunk *c;
	struct zn_inflater *d;
	int sym;           /* decoding symbols (window unknown) */
	uint64_t rs;       /* stream byte holding the current raw stream's first bit */
	uint64_t cin;      /* stream byte of the next input byte to pass */
	size_t hist_start; /* out[] index of the oldest byte the current member may refer to */
	uint32_t crc;      /* byte output since crc_from (an index after out_hist) */
	size_t crc_from;
	unsigned ends; /* block and member ends passed since the start */
	struct mark last;
};

enum { J_OK = 0, J_RETRY = 1 };

static void mark_here(struct job *j, uint64_t pos, int at)
{
	struct gz_chunk *c = j->c;
	j->last = (struct mark){pos, at, c->nsym, c->nout, c->nmends, j->crc, j->crc_from};
}

/* End the chunk at the last mark. */
static int cut(struct job *j)
{
	struct gz_chunk *c = j->c;
	if (c->sym_resolved && j->last.nsym != c->nsym)
		c->crc_sym = zn_crc32(0, (const uint8_t *)(c->sym + GZ_WIN), j->last.nsym);
	c->nsym = j->last.nsym;
	c->nout = j->last.nout;
	c->nmends = j->last.nmends;
	c->crc_tail = j->last.crc;
	c->end = GZ_END_CUT;
	c->end_pos = j->last.pos;
	c->end_at = j->last.at;
	return J_OK;
}

/* Decoding failed: a false start if fewer than two ends were passed (the next candidate is
 * tried), else a cut at the last mark. */
static int fail(struct job *j)
{
	if (j->ends < 2 && j->c->start_at != GZ_AT_START)
		return J_RETRY;
	return cut(j);
}

static int stop(struct job *j, int end, uint64_t pos, int at)
{
	struct gz_chunk *c = j->c;
	c->crc_tail = j->crc;
	c->end = end;
	c->end_pos = pos;
	c->end_at = at;
	return J_OK;
}

static const uint8_t *in_at(const struct gz_chunk *c, uint64_t byte)
{
	return c->in + (byte - c->in_base);
}

static uint64_t in_end(const struct gz_chunk *c)
{
	return c->in_base + c->in_len;
}

/* The predicate at a stream position, on the chunk's input. */
static int candidate(const struct gz_chunk *c, uint64_t bit)
{
	return zn_gz_candidate(c->in, c->in_len, c->in_final, bit - 8 * c->in_base);
}

/* Start the raw decoder on a member's first block (its header at stream byte `byte`, `hlen`
 * bytes long): bytes, no history. */
static zn_result start_member(struct job *j, uint64_t byte, size_t hlen)
{
	struct gz_chunk *c = j->c;
	RETURN_IF_ERROR(zn_inflate_stream_start_raw(j->d, 0, NULL, 0));
	j->sym = 0;
	j->rs = j->cin = byte + hlen;
	j->hist_start = c->out_hist + c->nout;
	return ZN_OK;
}

static zn_result add_mend(struct gz_chunk *c, const struct gz_mend *m)
{
	if (c->nmends == c->mends_cap) {
		size_t cap = c->mends_cap ? 2 * c->mends_cap : 64;
		struct gz_mend *n = realloc(c->mends, cap * sizeof(*n));
		SAFETY_CHECK(n, ZN_ERR_NOMEM);
		c->mends = n;
		c->mends_cap = cap;
	}
	c->mends[c->nmends++] = *m;
	return ZN_OK;
}

/* The raw stream ended at stream byte e: its trailer, then a next member, the end, or a cut. */
static int after_member(struct job *j, uint64_t e)
{
	struct gz_chunk *c = j->c;
	if (e + 8 > in_end(c))
		return cut(j); /* truncated, or the input at hand ends: the stitcher sees */
	const uint8_t *t = in_at(c, e);
	struct gz_mend m = {c->nsym + c->nout, zn_get_le32(t), zn_get_le32(t + 4), j->crc,
	                    c->nout - j->crc_from};
	if (add_mend(c, &m) != ZN_OK)
		return cut(j); /* out of memory: the stitcher decodes on */
	j->crc = 0;
	j->crc_from = c->nout;
	j->ends++;
	const uint64_t b = e + 8;
	mark_here(j, 8 * b, GZ_AT_MEMBER);
	if (b == in_end(c))
		return c->in_final ? stop(j, GZ_END_STREAM, 8 * b, GZ_AT_END) : cut(j);
	const uint8_t *p = in_at(c, b);
	if (*p == 0) {
		/* Zero padding: the end if nothing else follows; anything else is -T1's to say. */
		size_t n = (size_t)(in_end(c) - b);
		size_t k = 0;
		while (k < n && !p[k])
			k++;
		return k == n && c->in_final ? stop(j, GZ_END_STREAM, 8 * in_end(c), GZ_AT_END)
		                             : cut(j);
	}
	if (8 * b >= c->to) {
		int k = candidate(c, 8 * b);
		if (k == ZN_CAND_MEMBER)
			return stop(j, GZ_END_STOP, 8 * b, GZ_AT_MEMBER);
	}
	size_t hlen;
	if (zn_gz_parse_header(p, (size_t)(in_end(c) - b), SIZE_MAX, &hlen, NULL) != ZN_OK)
		return cut(j);
	if (start_member(j, b, hlen) != ZN_OK)
		return cut(j);
	return -1; /* go on */
}

/* The window became known: the last 32 Ki symbols, narrowed, are the history of the bytes. */
static void switch_to_bytes(struct job *j)
{
	struct gz_chunk *c = j->c;
	const uint16_t *s = c->sym + GZ_WIN + c->nsym - GZ_WIN;
	for (size_t i = 0; i < GZ_WIN; i++)
		c->out[i] = (uint8_t)s[i];
	c->out_hist = GZ_WIN;
	c->nout = 0;
	j->crc = 0;
	j->crc_from = 0;
	j->hist_start = 0;
	j->sym = 0;
}

/* A block ended at stream bit `bit`: a mark, and the end of the chunk if it qualifies. */
static int block_end(struct job *j, uint64_t bit)
{
	struct gz_chunk *c = j->c;
	j->ends++;
	mark_here(j, bit, GZ_AT_BLOCK);
	uint64_t canon = zn_gz_canonical(c->in, c->in_len, bit - 8 * c->in_base) + 8 * c->in_base;
	if (canon >= c->to) {
		int k = candidate(c, canon);
		if (k == ZN_CAND_DYNAMIC || k == ZN_CAND_STORED)
			return stop(j, GZ_END_STOP, canon, GZ_AT_BLOCK);
		if (k == ZN_CAND_MORE)
			return cut(j);
	}
	if (c->nsym + c->nout >= c->soft_cap)
		return cut(j);
	return -1;
}

/* The stitcher gave the window before the start: resolve the symbols so far in place, and go on
 * in bytes with the last 32 KiB of them (and of the window) as history. */
static int take_handoff(struct job *j)
{
	struct gz_chunk *c = j->c;
	uint8_t *symbytes = (uint8_t *)(c->sym + GZ_WIN);
	const uint8_t *w = c->hand_win + GZ_WIN - c->hand_len;
	const size_t n = c->nsym;
	c->sym_resolved = 1;
	if (zn_inflate_resolve_markers(c->sym + GZ_WIN, n, w, c->hand_len, symbytes) != ZN_OK) {
		/* A reference before the member's start: the chunk is of no use (-T1 tells). */
		j->last = (struct mark){c->start, c->start_at, 0, 0, 0, 0, 0};
		c->crc_sym = 0;
		return cut(j);
	}
	c->crc_sym = zn_crc32(0, symbytes, n);
	if (!j->sym)
		return -1; /* already in bytes: the history is there */
	/* History: the last min(32 KiB, window + n) bytes, ending at out[GZ_WIN]. */
	size_t from_syms = ZN_MIN(n, (size_t)GZ_WIN);
	size_t from_win = ZN_MIN((size_t)GZ_WIN - from_syms, c->hand_len);
	memcpy(c->out + GZ_WIN - from_syms, symbytes + n - from_syms, from_syms);
	memcpy(c->out + GZ_WIN - from_syms - from_win, c->hand_win + GZ_WIN - from_win, from_win);
	if (zn_inflate_direct_leave_symbols(j->d) != ZN_OK)
		return cut(j);
	c->out_hist = GZ_WIN;
	c->nout = 0;
	j->hist_start = GZ_WIN - from_syms - from_win;
	j->crc = 0;
	j->crc_from = 0;
	j->sym = 0;
	return -1;
}

/* One direct call; returns -1 to go on, or J_OK / J_RETRY. */
static int step(struct job *j)
{
	struct gz_chunk *c = j->c;
	if (atomic_load_explicit(&c->cancel, memory_order_relaxed))
		return cut(j);
	if (!c->sym_resolved && atomic_load_explicit(&c->handoff, memory_order_acquire)) {
		int r = take_handoff(j);
		if (r >= 0)
			return r;
	}
	const uint64_t avail = in_end(c) - j->cin;
	size_t used = 0;
	int done = 0;
	zn_result r;
	if (j->sym) {
		size_t pos = GZ_WIN + c->nsym;
		if (c->sym_cap - pos < MIN_ROOM)
			return cut(j);
		size_t cap = ZN_MIN(c->sym_cap, pos + CALL_OUT);
		r = zn_inflate_direct_symbols(j->d, in_at(c, j->cin), (size_t)avail, c->in_final,
		                              &used, c->sym, &pos, cap, &done);
		c->nsym = pos - GZ_WIN;
	} else {
		size_t pos = c->out_hist + c->nout, from = pos;
		if (c->out_cap - pos < MIN_ROOM)
			return cut(j);
		size_t cap = ZN_MIN(c->out_cap, pos + CALL_OUT) - j->hist_start;
		size_t rel = pos - j->hist_start;
		r = zn_inflate_direct(j->d, in_at(c, j->cin), (size_t)avail, c->in_final, &used,
		                      c->out + j->hist_start, &rel, cap, &done);
		pos = j->hist_start + rel;
		j->crc = zn_crc32(j->crc, c->out + from, pos - from);
		c->nout = pos - c->out_hist;
	}
	j->cin += used;
	if (r != ZN_OK)
		return fail(j);
	if (done) {
		uint64_t len;
		zn_inflate_stream_position(j->d, &len, NULL);
		return after_member(j, j->rs + len);
	}
	if (j->sym && zn_inflate_stream_window_known(j->d))
		switch_to_bytes(j);
	if (zn_inflate_stream_at_block_end(j->d) && !zn_inflate_stream_final_block(j->d))
		return block_end(j, 8 * j->rs + zn_inflate_stream_bit_position(j->d));
	if (!used && avail == 0 && !c->in_final)
		return cut(j); /* the input at hand is used up */
	return -1;
}

/* Decode from the candidate at `start` (kind `k`). */
static int try_from(struct job *j, uint64_t start, int k)
{
	struct gz_chunk *c = j->c;
	c->start = start;
	c->start_at = k == GZ_AT_START      ? GZ_AT_START
	              : k == ZN_CAND_MEMBER ? GZ_AT_MEMBER
	                                    : GZ_AT_BLOCK;
	c->nsym = c->nout = c->out_hist = c->nmends = 0;
	j->crc = 0;
	j->crc_from = 0;
	j->ends = 0;
	mark_here(j, start, c->start_at);
	c->sym_resolved = 0;
	pthread_mutex_lock(&c->g->mu);
	c->pub_valid = 1;
	c->pub_start = start;
	c->pub_at = c->start_at;
	atomic_store_explicit(&c->handoff, 0, memory_order_relaxed);
	pthread_mutex_unlock(&c->g->mu);
	if (c->start_at != GZ_AT_BLOCK) {
		uint64_t b = start / 8;
		size_t hlen;
		zn_result r = zn_gz_parse_header(in_at(c, b), (size_t)(in_end(c) - b), SIZE_MAX,
		                                 &hlen, NULL);
		if (r != ZN_OK || start_member(j, b, hlen) != ZN_OK)
			return fail(j);
	} else {
		if (zn_inflate_stream_start_unknown(j->d, (unsigned)(start % 8)) != ZN_OK)
			return cut(j);
		for (uint32_t i = 0; i < GZ_WIN; i++)
			c->sym[i] = (uint16_t)(ZN_INFLATE_MARKER + i);
		j->sym = 1;
		j->rs = j->cin = start / 8;
	}
	int r;
	while ((r = step(j)) < 0)
		;
	return r;
}

/* The window at the chunk's end (the last 32 KiB of its member, fewer if the member started
 * nearer), into dst[GZ_WIN - *len .. GZ_WIN). 0, or -1 when the chunk's symbols are not
 * resolved. */
static int tail_window(const struct gz_chunk *c, uint8_t *dst, size_t *len)
{
	if (c->nsym && !c->sym_resolved)
		return -1;
	const uint8_t *bytes = c->out + c->out_hist;
	size_t member = c->nout; /* the member's output in this chunk, from its end back */
	int whole = 0;           /* the member's start is in the chunk */
	if (c->nmends) {
		uint64_t done = 0;
		for (size_t i = 0; i < c->nmends; i++)
			done += c->mends[i].bytes_len;
		member = (size_t)(c->nout - done);
		whole = 1;
	} else if (c->start_at != GZ_AT_BLOCK) {
		whole = 1;
	}
	size_t n = ZN_MIN(member, (size_t)GZ_WIN);
	memcpy(dst + GZ_WIN - n, bytes + member - n, n);
	if (!whole && n < GZ_WIN) {
		/* Then the resolved symbols, then the window the chunk started with. */
		size_t k = ZN_MIN(c->nsym, (size_t)GZ_WIN - n);
		memcpy(dst + GZ_WIN - n - k, (const uint8_t *)(c->sym + GZ_WIN) + c->nsym - k, k);
		n += k;
		size_t w = ZN_MIN(c->hand_len, (size_t)GZ_WIN - n);
		memcpy(dst + GZ_WIN - n - w, c->hand_win + GZ_WIN - w, w);
		n += w;
	}
	*len = n;
	return 0;
}

/* The job is done: if the chunk was validated and ends where the next chunk's job starts, that
 * job is validated too, and given the window if it still decodes symbols. mu held. */
static void chain(struct gz_chunk *c)
{
	struct gz_chunk *nx = c->next;
	if (!c->validated || !c->found || c->end != GZ_END_STOP || !nx || nx->done ||
	    !nx->pub_valid || nx->pub_start != c->end_pos || nx->pub_at != c->end_at)
		return;
	if (c->end_at == GZ_AT_BLOCK && !atomic_load_explicit(&nx->handoff, memory_order_relaxed)) {
		size_t len;
		if (tail_window(c, nx->hand_win, &len))
			return;
		nx->hand_len = len;
		atomic_store_explicit(&nx->handoff, 1, memory_order_release);
	}
	nx->validated = 1;
}

void gz_chunk_run(void *arg)
{
	struct gz_chunk *c = arg;
	struct gz_decoder *g = c->g;
	struct job j = {.c = c, .d = gz_take_inflater(g)};
	c->found = 0;
	c->tried = 0;
	zn_inflate_stream_set_block_stops(j.d, 1);
	if (!j.d) {
		/* Out of memory: no start, and the stitcher decodes the range itself. */
	} else if (c->from == 0) {
		c->found = 1;
		try_from(&j, 0, GZ_AT_START); /* never a retry: cut() keeps the start */
		c->start_at = GZ_AT_START;
	} else {
		const uint64_t budget = ZN_MAX((uint64_t)256 << 10, (c->to - c->from) / 8);
		uint64_t from = c->from;
		while (!atomic_load_explicit(&c->cancel, memory_order_relaxed)) {
			uint64_t at;
			int k = zn_gz_find(c->in, c->in_len, c->in_final, from - 8 * c->in_base,
			                   c->to - 8 * c->in_base, &at);
			if (k <= 0)
				break;
			at += 8 * c->in_base;
			if (try_from(&j, at, k) == J_OK) {
				c->found = 1;
				break;
			}
			c->tried += j.cin - at / 8;
			if (c->tried > budget)
				break;
			from = at + 1;
		}
	}
	gz_give_inflater(g, j.d);
	pthread_mutex_lock(&g->mu);
	chain(c);
	c->done = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}
