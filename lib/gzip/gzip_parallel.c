/* SPDX-License-Identifier: MIT */
/* gzip_parallel.c - the parallel gzip decoder: chunks on the pool, stitched in order. */
#include <stdlib.h>

#include "common/big_alloc.h"
#include "common/cpu_features.h"
#include "common/sized.h"
#include "deflate/deflate_resume.h"
#include "gzip/gzip_internal.h"

/*
 * The threads. The pool runs `threads` jobs at a time, each decoding one chunk (gzip_chunk.c).
 * The caller's thread is the stitcher: it cuts the input into chunks and queues them (at most
 * 2 x threads + 1 in flight), waits for the oldest, checks it, resolves its markers, checks the
 * CRC-32 and ISIZE of every member that ends in it, writes its output, and queues the next.
 * Nothing else is shared: a job owns its chunk's buffers until it sets `done` (under `mu`), the
 * stitcher owns them after; the stitcher alone touches the stream's state (`struct run`). Jobs
 * never wait for each other or for the stitcher, so there is no deadlock, and the stitcher
 * waits only for jobs already queued.
 *
 * The stream's state. The stitcher keeps where the stream stands: a position P (a bit) and what
 * is there (its start, the byte after a member's trailer, or a block boundary inside a member),
 * with the member's CRC-32 and length so far, the members checked, and the last 32 KiB of the
 * member's output (the window). A chunk is used only if it starts exactly at P and is of the
 * same kind; its end becomes the new P. Ranges are contiguous, so P always lies in the range of
 * the oldest chunk not yet retired (`head`), and that chunk is retired once P passes its end.
 *
 * The fallback. Where the head chunk was of no use (it started elsewhere: a false positive; or it
 * was cut short, or failed a check), the stitcher decodes on from P itself, with an ordinary gzip
 * decoder resumed in exactly the state a decoder run from the start would be in at P
 * (deflate_resume.h), to the first qualifying position at or after the head chunk's end (where
 * the next chunk should start), writing as it goes. Errors come from that decoder alone, so
 * they are the errors of -T1, at the same input positions, after the same output.
 *
 * Output is written as soon as it is final: a chunk's once all of it checked (so that a chunk
 * that fails a check writes nothing, and the fallback writes the same bytes after all), the
 * fallback's as it decodes.
 */

#define SLACK (256u * 1024) /* a piped chunk's input past its range (see gz_chunk) */

struct zn_gunzip {
	struct gz_decoder g;
	struct zn_inflater *seq; /* the stitcher's own gzip decoder */
	uint64_t soft_cap;       /* output per chunk before it ends at a block boundary */
	void (*release)(void *ctx, uint64_t upto);
	void *release_ctx;
	size_t sym_cap, out_cap; /* chunk buffer capacities */
	unsigned max_flight;
};

/* Recycled output buffers of a chunk. */
struct gz_bufs {
	struct gz_bufs *next;
	uint16_t *sym;
	uint8_t *out;
	struct gz_mend *mends;
	size_t mends_cap;
	uint8_t *inbuf; /* piped input (chunk_size + SLACK) */
	uint8_t *hand_win;
};

/* The stream being decoded. */
struct run {
	struct zn_gunzip *z;
	/* input: a whole buffer, or a reader */
	const uint8_t *in;
	uint64_t in_len;
	zn_gunzip_read_fn read;
	void *rctx;
	uint8_t *carry; /* piped: bytes read and not yet in a chunk, from stream byte carry_base */
	size_t carry_len, carry_cap;
	uint64_t carry_base;
	int eof;
	/* output */
	zn_gunzip_write_fn write;
	void *wctx;
	/* chunks in flight, oldest first */
	struct gz_chunk **ring;
	size_t head, n;
	struct gz_bufs **ring_bufs;
	uint64_t next_from; /* bits: the next chunk's range start */
	int all_issued;     /* the input's end is in a chunk */
	/* the stream's state (see the top of the file) */
	uint64_t p;
	int p_at;
	uint32_t crc, isize;
	uint64_t members;
	uint8_t window[GZ_WIN];
	size_t wlen;
	uint64_t released;            /* input bytes handed to the release callback */
	uint64_t ratio_in, ratio_out; /* input and output of the chunks used so far */
	/* the outcome */
	zn_result result;
	uint64_t in_pos, out_len, chunks, seq_bytes, sym_bytes;
};

/* ---- the object ------------------------------------------------------------------------------ */

void zn_gunzip_options_init(struct zn_gunzip_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->struct_size = sizeof(*opt);
	opt->chunk_size = ZN_GUNZIP_CHUNK_DEFAULT;
}

void zn_gunzip_info_init(struct zn_gunzip_info *info)
{
	memset(info, 0, sizeof(*info));
	info->struct_size = sizeof(*info);
}

/* The first layouts (see common/sized.h): these structs are new in 0.5.0. */
#define FIRST_OPTIONS sizeof(struct zn_gunzip_options)
#define FIRST_INFO    sizeof(struct zn_gunzip_info)

/* Options of any size the caller's header had, defaults for fields it did not know (a size
 * below the first layout: the defaults; zn_gunzip_new() refuses it). */
static void take_options(struct zn_gunzip_options *o, const struct zn_gunzip_options *opt)
{
	zn_gunzip_options_init(o);
	if (opt)
		(void)zn_sized_in(o, sizeof(*o), opt, FIRST_OPTIONS);
	if (!o->chunk_size)
		o->chunk_size = ZN_GUNZIP_CHUNK_DEFAULT;
	if (!o->threads)
		o->threads = zn_cpu_count();
	if (o->threads > ZN_THREADS_MAX)
		o->threads = ZN_THREADS_MAX;
}

/*
 * Sizes. A chunk's output is capped at eight times chunk_size (gzip -6 text and tar are 3-7
 * times their input): the job ends at the first block boundary past it, and the buffers allow
 * half as much again for that block. Where the stream turns out more compressible, the
 * chunks queued next are made smaller (down to ZN_GUNZIP_CHUNK_MIN), so that their output is
 * about three quarters of the cap; cut chunks are decoded on by the stitcher alone.
 *
 * Chunks in flight: `threads` at work and two queued, enough for the jobs to go on while the
 * stitcher (a third thread on a machine of `threads` cores) gets its turn. Every chunk holds
 * its output until it is written; that is what the memory bound counts, and fresh memory is
 * not free (its pages are zeroed on first touch: about 5 GB/s here), so fewer, smaller chunks
 * in flight cost less than more, larger ones, down to where the block finder's scan (about a
 * third of a millisecond per chunk) starts to count.
 */
static uint64_t soft_cap_of(uint64_t chunk)
{
	return 8 * chunk;
}

static size_t buf_cap_of(uint64_t chunk)
{
	uint64_t soft = soft_cap_of(chunk);
	return (size_t)(soft + soft / 2 + GZ_WIN + (128u << 10));
}

uint64_t zn_gunzip_chunk_memory(const struct zn_gunzip_options *opt)
{
	struct zn_gunzip_options o;
	take_options(&o, opt);
	/* The job stops once its output (symbols and bytes together) passes the cap: at most
	 * buf_cap symbols of 2 bytes, the worst case, plus the history before the bytes. */
	return 2 * (uint64_t)buf_cap_of(o.chunk_size) + GZ_WIN;
}

uint64_t zn_gunzip_memory_bound(const struct zn_gunzip_options *opt, int piped)
{
	struct zn_gunzip_options o;
	take_options(&o, opt);
	uint64_t per = zn_gunzip_chunk_memory(&o) + (piped ? o.chunk_size + SLACK : 0);
	return ((uint64_t)o.threads + 2) * per + (uint64_t)(o.threads + 1) * (512u << 10);
}

zn_result zn_gunzip_new(struct zn_gunzip **out, const struct zn_gunzip_options *opt)
{
	SAFETY_CHECK(out, ZN_ERR_INVALID_ARG);
	*out = NULL;
	SAFETY_CHECK(!opt || zn_sized_len(opt, FIRST_OPTIONS), ZN_ERR_INVALID_ARG);
	struct zn_gunzip_options o;
	take_options(&o, opt);
	SAFETY_CHECK(o.chunk_size >= ZN_GUNZIP_CHUNK_MIN && o.chunk_size <= ZN_GUNZIP_CHUNK_MAX,
	             ZN_ERR_INVALID_ARG);
	struct zn_gunzip *z = calloc(1, sizeof(*z));
	SAFETY_CHECK(z, ZN_ERR_NOMEM);
	z->g.threads = o.threads;
	z->g.chunk_size = o.chunk_size;
	z->soft_cap = soft_cap_of(o.chunk_size);
	z->sym_cap = z->out_cap = buf_cap_of(o.chunk_size);
	z->max_flight = o.threads + 2;
	z->release = o.release;
	z->release_ctx = o.release_ctx;
	pthread_mutex_init(&z->g.mu, NULL);
	pthread_cond_init(&z->g.cv, NULL);
	zn_result r = zn_pool_new(&z->g.pool, o.threads + 1, z->max_flight + 1);
	if (r == ZN_OK)
		r = zn_inflater_new(&z->seq, ZN_FORMAT_GZIP);
	if (r != ZN_OK) {
		zn_gunzip_free(z);
		return r;
	}
	zn_inflate_stream_set_block_stops(z->seq, 1);
	zn_inflate_stream_set_member_stops(z->seq, 1);
	*out = z;
	return ZN_OK;
}

static void free_bufs(const struct zn_gunzip *z, struct gz_bufs *b)
{
	zn_big_free(b->sym, z->sym_cap * sizeof(uint16_t));
	zn_big_free(b->out, z->out_cap);
	free(b->mends);
	free(b->inbuf);
	free(b->hand_win);
	free(b);
}

void zn_gunzip_free(struct zn_gunzip *z)
{
	if (!z)
		return;
	zn_pool_free(z->g.pool);
	for (size_t i = 0; i < z->g.nidle; i++)
		zn_inflater_free(z->g.idle[i]);
	free(z->g.idle);
	while (z->g.free_bufs) {
		struct gz_bufs *b = z->g.free_bufs;
		z->g.free_bufs = b->next;
		free_bufs(z, b);
	}
	zn_inflater_free(z->seq);
	pthread_cond_destroy(&z->g.cv);
	pthread_mutex_destroy(&z->g.mu);
	free(z);
}

struct zn_inflater *gz_take_inflater(struct gz_decoder *g)
{
	struct zn_inflater *d = NULL;
	pthread_mutex_lock(&g->mu);
	if (g->nidle)
		d = g->idle[--g->nidle];
	pthread_mutex_unlock(&g->mu);
	if (!d && zn_inflater_new(&d, ZN_FORMAT_RAW) != ZN_OK)
		d = NULL;
	return d;
}

void gz_give_inflater(struct gz_decoder *g, struct zn_inflater *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&g->mu);
	if (g->nidle == g->idle_cap) {
		size_t cap = g->idle_cap ? 2 * g->idle_cap : 8;
		struct zn_inflater **n = realloc(g->idle, cap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&g->mu);
			zn_inflater_free(d);
			return;
		}
		g->idle = n;
		g->idle_cap = cap;
	}
	g->idle[g->nidle++] = d;
	pthread_mutex_unlock(&g->mu);
}

/* ---- chunks ---------------------------------------------------------------------------------- */

static struct gz_bufs *take_bufs(struct zn_gunzip *z, int piped)
{
	struct gz_bufs *b = z->g.free_bufs;
	if (b) {
		z->g.free_bufs = b->next;
	} else {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		b->sym = zn_big_alloc(z->sym_cap * sizeof(uint16_t));
		b->out = zn_big_alloc(z->out_cap);
		b->hand_win = malloc(GZ_WIN);
		if (!b->sym || !b->out || !b->hand_win) {
			free_bufs(z, b);
			return NULL;
		}
	}
	if (piped && !b->inbuf && !(b->inbuf = malloc(z->g.chunk_size + SLACK))) {
		b->next = z->g.free_bufs;
		z->g.free_bufs = b;
		return NULL;
	}
	return b;
}

static struct gz_chunk *ring_at(const struct run *s, size_t i)
{
	return s->ring[(s->head + i) % s->z->max_flight];
}

/* Piped input: make carry hold stream bytes [from, upto) or up to the end; 0 or an error. */
static zn_result fill_carry(struct run *s, uint64_t from, uint64_t upto)
{
	if (s->carry_base < from) { /* drop what the chunks before no longer need */
		size_t drop = (size_t)ZN_MIN(from - s->carry_base, (uint64_t)s->carry_len);
		memmove(s->carry, s->carry + drop, s->carry_len - drop);
		s->carry_len -= drop;
		s->carry_base += drop;
	}
	size_t want = (size_t)(upto - s->carry_base);
	if (want > s->carry_cap) {
		uint8_t *n = realloc(s->carry, want);
		SAFETY_CHECK(n, ZN_ERR_NOMEM);
		s->carry = n;
		s->carry_cap = want;
	}
	while (!s->eof && s->carry_len < want) {
		size_t got = 0;
		RETURN_IF_ERROR(
		        s->read(s->rctx, s->carry + s->carry_len, want - s->carry_len, &got));
		if (!got)
			s->eof = 1;
		s->carry_len += got;
	}
	return ZN_OK;
}

/* Queue the next chunk if there is room and input. 1 if one was queued. */
static int issue_one(struct run *s)
{
	struct zn_gunzip *z = s->z;
	if (s->all_issued || s->n == z->max_flight)
		return 0;
	const uint64_t from = s->next_from;
	uint64_t chunk = z->g.chunk_size;
	if (s->ratio_in >= chunk) { /* the output so far says how compressible the stream is */
		uint64_t want = (uint64_t)((double)z->soft_cap * 0.75 * (double)s->ratio_in /
		                           (double)ZN_MAX(s->ratio_out, 1));
		chunk = ZN_MAX(ZN_MIN(want, chunk), ZN_GUNZIP_CHUNK_MIN);
	}
	struct gz_bufs *b = take_bufs(z, s->read != NULL);
	if (!b)
		return 0; /* out of memory: the fallback goes on alone */
	struct gz_chunk *c = calloc(1, sizeof(*c));
	if (!c) {
		b->next = z->g.free_bufs;
		z->g.free_bufs = b;
		return 0;
	}
	c->g = &z->g;
	c->from = from;
	if (s->read) {
		zn_result r = fill_carry(s, from / 8, from / 8 + chunk + SLACK);
		if (r != ZN_OK) {
			s->result = r;
			s->p_at = GZ_AT_END;
			b->next = z->g.free_bufs;
			z->g.free_bufs = b;
			free(c);
			return 0;
		}
		size_t n = (size_t)ZN_MIN((uint64_t)s->carry_len, chunk + SLACK);
		memcpy(b->inbuf, s->carry + (from / 8 - s->carry_base), n);
		c->in = b->inbuf;
		c->in_base = from / 8;
		c->in_len = n;
		c->in_final = s->eof && n == s->carry_len - (from / 8 - s->carry_base);
		c->to = ZN_MIN(from + 8 * chunk, 8 * (c->in_base + n));
		s->all_issued = c->in_final && c->to == 8 * (c->in_base + n);
	} else {
		c->in = s->in;
		c->in_base = 0;
		c->in_len = (size_t)s->in_len;
		c->in_final = 1;
		c->to = ZN_MIN(from + 8 * chunk, 8 * s->in_len);
		s->all_issued = c->to == 8 * s->in_len;
	}
	c->soft_cap = z->soft_cap;
	c->sym = b->sym;
	c->sym_cap = z->sym_cap;
	c->out = b->out;
	c->out_cap = z->out_cap;
	c->mends = b->mends;
	c->mends_cap = b->mends_cap;
	c->hand_win = b->hand_win;
	c->validated = from == 0;
	size_t slot = (s->head + s->n) % z->max_flight;
	if (s->n) {
		pthread_mutex_lock(&z->g.mu);
		ring_at(s, s->n - 1)->next = c;
		pthread_mutex_unlock(&z->g.mu);
	}
	s->ring[slot] = c;
	s->ring_bufs[slot] = b;
	s->n++;
	s->next_from = c->to;
	zn_pool_add(z->g.pool, gz_chunk_run, c);
	return 1;
}

static void issue_more(struct run *s)
{
	while (s->p_at != GZ_AT_END && issue_one(s))
		;
}

static void wait_done(struct run *s, struct gz_chunk *c)
{
	pthread_mutex_lock(&s->z->g.mu);
	while (!c->done)
		pthread_cond_wait(&s->z->g.cv, &s->z->g.mu);
	pthread_mutex_unlock(&s->z->g.mu);
}

/* The oldest chunk is no longer needed: wait for its job, recycle its buffers. */
static void retire_head(struct run *s)
{
	struct gz_chunk *c = ring_at(s, 0);
	struct gz_bufs *b = s->ring_bufs[s->head];
	atomic_store(&c->cancel, 1);
	wait_done(s, c);
	b->mends = c->mends;
	b->mends_cap = c->mends_cap;
	b->next = s->z->g.free_bufs;
	s->z->g.free_bufs = b;
	free(c);
	s->head = (s->head + 1) % s->z->max_flight;
	s->n--;
}

/* Mapped input: the stitcher reads nothing before `upto` (the stream's position, or where the
 * fallback decodes) again, less a byte (a stored block's bits before its LEN). A job may still
 * read a little before it in a chunk that turned out useless: dropping a page of a mapped file
 * costs it a page fault, never the content. */
static void release_input(struct run *s, uint64_t upto)
{
	if (!s->z->release || s->read)
		return;
	upto = upto > 0 ? upto - 1 : 0;
	if (upto >= s->released + ((uint64_t)64 << 20)) {
		s->z->release(s->z->release_ctx, upto);
		s->released = upto;
	}
}

/* ---- the stream's state ---------------------------------------------------------------------- */

static void window_add(struct run *s, const uint8_t *p, size_t n)
{
	if (n >= GZ_WIN) {
		memcpy(s->window, p + n - GZ_WIN, GZ_WIN);
		s->wlen = GZ_WIN;
		return;
	}
	memmove(s->window, s->window + n, GZ_WIN - n);
	memcpy(s->window + GZ_WIN - n, p, n);
	s->wlen = ZN_MIN((size_t)GZ_WIN, s->wlen + n);
}

static zn_result emit(struct run *s, const void *p, size_t n)
{
	if (!n)
		return ZN_OK;
	s->out_len += n;
	return s->write(s->wctx, p, n);
}

static void finish(struct run *s, zn_result r, uint64_t in_pos)
{
	s->result = r;
	s->in_pos = in_pos;
	s->p_at = GZ_AT_END;
}

/* ---- using a chunk --------------------------------------------------------------------------- */

/* Check a chunk that starts at P: resolve its symbols, check each member that ends in it. 0 if
 * it can be used, else it is left alone (the fallback redoes it). */
static int check_chunk(struct run *s, struct gz_chunk *c, uint32_t *crc_sym)
{
	uint8_t *symbytes = (uint8_t *)(c->sym + GZ_WIN);
	if (c->sym_resolved) {
		/* The job resolved its symbols with a window it was given, by the stitcher or by
		 * the job before it: it must be the stream's. */
		if (c->hand_len != s->wlen ||
		    memcmp(c->hand_win + GZ_WIN - s->wlen, s->window + GZ_WIN - s->wlen, s->wlen))
			return -1;
		*crc_sym = c->crc_sym;
	} else if (c->nsym) {
		if (s->p_at != GZ_AT_BLOCK)
			return -1;
		if (zn_inflate_resolve_markers(c->sym + GZ_WIN, c->nsym,
		                               s->window + GZ_WIN - s->wlen, s->wlen,
		                               symbytes) != ZN_OK)
			return -1; /* a reference before the member: -T1's error to give */
		*crc_sym = zn_crc32(0, symbytes, c->nsym);
	} else {
		*crc_sym = 0;
	}
	uint32_t crc = zn_crc32_combine(s->crc, *crc_sym, c->nsym);
	uint32_t isize = s->isize + (uint32_t)c->nsym;
	if (s->p_at != GZ_AT_BLOCK)
		crc = isize = 0;
	for (size_t i = 0; i < c->nmends; i++) {
		const struct gz_mend *m = &c->mends[i];
		crc = zn_crc32_combine(crc, m->crc_bytes, m->bytes_len);
		isize += (uint32_t)m->bytes_len;
		if (crc != m->crc_want || isize != m->isize_want)
			return -1;
		crc = isize = 0;
	}
	return 0;
}

/* Use chunk c (it starts at P and checked out): write it, and move the state to its end. */
static void use_chunk(struct run *s, struct gz_chunk *c, uint32_t crc_sym)
{
	const uint8_t *symbytes = (const uint8_t *)(c->sym + GZ_WIN);
	const uint8_t *bytes = c->out + c->out_hist;
	zn_result r = emit(s, symbytes, c->nsym);
	if (r == ZN_OK)
		r = emit(s, bytes, c->nout);
	if (r != ZN_OK) {
		finish(s, r, s->p / 8);
		return;
	}
	s->chunks++;
	s->sym_bytes += c->nsym;
	s->ratio_in += (c->end_pos - c->start) / 8;
	s->ratio_out += c->nsym + c->nout;
	uint64_t mend_bytes = 0;
	for (size_t i = 0; i < c->nmends; i++)
		mend_bytes += c->mends[i].bytes_len;
	if (c->nmends) {
		/* The current member started in the chunk, after the last member end. */
		size_t tail = (size_t)(c->nout - mend_bytes);
		s->crc = c->crc_tail;
		s->isize = (uint32_t)tail;
		s->members += c->nmends;
		s->wlen = 0;
		window_add(s, bytes + c->nout - tail, tail);
	} else {
		if (s->p_at != GZ_AT_BLOCK) { /* a member that starts here */
			s->crc = s->isize = 0;
			s->wlen = 0;
		}
		s->crc = zn_crc32_combine(zn_crc32_combine(s->crc, crc_sym, c->nsym), c->crc_tail,
		                          c->nout);
		s->isize += (uint32_t)(c->nsym + c->nout);
		if (c->nout >= GZ_WIN) {
			window_add(s, bytes + c->nout - GZ_WIN, GZ_WIN);
		} else {
			window_add(s, symbytes, c->nsym);
			window_add(s, bytes, c->nout);
		}
	}
	if (c->end == GZ_END_STREAM) {
		finish(s, ZN_OK, c->end_pos / 8);
		return;
	}
	s->p = c->end_pos;
	s->p_at = c->end_at;
}

/* The stream stands at a block boundary with its window known: give the window to the job that
 * decodes from there, if it is still at work. */
static void hand_off(struct run *s)
{
	if (s->p_at != GZ_AT_BLOCK)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct gz_chunk *c = ring_at(s, i);
		if (s->p < c->from || s->p >= c->to || c->looked_at)
			continue;
		pthread_mutex_lock(&s->z->g.mu);
		if (!c->done && c->pub_valid && c->pub_start == s->p &&
		    !atomic_load_explicit(&c->handoff, memory_order_relaxed)) {
			memcpy(c->hand_win + GZ_WIN - s->wlen, s->window + GZ_WIN - s->wlen,
			       s->wlen);
			c->hand_len = s->wlen;
			atomic_store_explicit(&c->handoff, 1, memory_order_release);
		}
		pthread_mutex_unlock(&s->z->g.mu);
		return;
	}
}

/* ---- the fallback ---------------------------------------------------------------------------- */

/* The input from stream byte `at` on: its pointer, length, and whether it ends the input. For a
 * pipe, from the chunk that holds it (the oldest one whose range ends after it). */
static const uint8_t *input_at(struct run *s, uint64_t at, size_t *len, int *final)
{
	if (!s->read) {
		*len = (size_t)(s->in_len - at);
		*final = 1;
		return s->in + at;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct gz_chunk *c = ring_at(s, i);
		uint64_t end = i + 1 < s->n ? ring_at(s, i + 1)->in_base : c->in_base + c->in_len;
		if (at >= c->in_base && at < end) {
			*len = (size_t)(end - at);
			*final = c->in_final && end == c->in_base + c->in_len;
			return c->in + (at - c->in_base);
		}
	}
	*len = 0;
	*final = 1; /* past the last chunk: only after the end of the input */
	return NULL;
}

/* The input around stream byte `at` for the candidate predicate: a piped chunk's whole buffer,
 * its slack included. */
static const uint8_t *view_at(struct run *s, uint64_t at, size_t *len, int *final)
{
	if (!s->read)
		return input_at(s, at, len, final);
	for (size_t i = s->n; i-- > 0;) {
		struct gz_chunk *c = ring_at(s, i);
		if (at >= c->in_base && at < c->in_base + c->in_len) {
			*len = (size_t)(c->in_base + c->in_len - at);
			*final = c->in_final;
			return c->in + (at - c->in_base);
		}
	}
	*len = 0;
	*final = 1;
	return NULL;
}

/* Put the stitcher's decoder where the stream stands. */
static zn_result resume_seq(struct run *s)
{
	struct zn_inflater *d = s->z->seq;
	if (s->p_at == GZ_AT_START)
		return zn_inflate_stream_reset(d);
	struct zn_gzip_resume r = {
	        .at_member_end = s->p_at == GZ_AT_MEMBER,
	        .first_bit = (unsigned)(s->p % 8),
	        .window = s->window + GZ_WIN - s->wlen,
	        .window_len = s->wlen,
	        .crc = s->crc,
	        .isize = s->isize,
	        .members = s->members,
	        .subsequent = s->members > 0,
	};
	return zn_inflate_stream_resume_gzip(d, &r);
}

/* The fallback stopped where a chunk may take over: the state from its decoder. */
static void hand_back(struct run *s, uint64_t pos, int at)
{
	struct zn_inflater *d = s->z->seq;
	int subsequent;
	zn_inflate_stream_gzip_state(d, &s->crc, &s->isize, &s->members, &subsequent);
	if (at == GZ_AT_BLOCK) {
		const uint8_t *w;
		size_t n;
		zn_inflate_stream_history(d, &w, &n);
		s->wlen = 0;
		window_add(s, w, n);
	} else {
		s->crc = s->isize = 0;
		s->wlen = 0;
	}
	s->p = pos;
	s->p_at = at;
	hand_off(s);
}

/* Whether the fallback may stop at a position it passed (stream bit `bit`, of kind `at`). */
static int qualifies(struct run *s, uint64_t bit, int at, uint64_t *canon)
{
	size_t len;
	int final;
	uint64_t byte = bit / 8 > 0 ? bit / 8 - 1 : 0; /* a stored block's bits before LEN */
	const uint8_t *p = view_at(s, byte, &len, &final);
	if (!p)
		return 0;
	uint64_t rel = bit - 8 * byte;
	if (at == GZ_AT_MEMBER) {
		*canon = bit;
		return zn_gz_candidate(p, len, final, rel) == ZN_CAND_MEMBER;
	}
	uint64_t c = zn_gz_canonical(p, len, rel);
	*canon = c + 8 * byte;
	int k = zn_gz_candidate(p, len, final, c);
	return k == ZN_CAND_DYNAMIC || k == ZN_CAND_STORED;
}

/* Decode from P with the stitcher's decoder up to the first qualifying position at or after
 * `target` (or the end, or an error), writing as it goes. */
static void fallback(struct run *s, uint64_t target)
{
	struct zn_inflater *d = s->z->seq;
	zn_result r = resume_seq(s);
	if (r != ZN_OK) {
		finish(s, r, s->p / 8);
		return;
	}
	const uint64_t base = s->p / 8; /* the decoder's positions count from here */
	uint64_t at = base;
	for (;;) {
		size_t len, used, olen;
		int final, done;
		const void *o;
		issue_more(s);
		const uint8_t *in = input_at(s, at, &len, &final);
		r = zn_inflate_stream(d, in, len, final, &used, &o, &olen, &done);
		at += used;
		s->seq_bytes += olen;
		zn_result w = emit(s, o, olen);
		if (w != ZN_OK) {
			finish(s, w, at);
			return;
		}
		uint64_t pos;
		zn_inflate_stream_position(d, &pos, NULL);
		if (r != ZN_OK || done) {
			finish(s, r, base + pos);
			return;
		}
		uint64_t bit = 8 * base + zn_inflate_stream_bit_position(d), canon;
		if (zn_inflate_stream_at_block_end(d) && !zn_inflate_stream_final_block(d) &&
		    bit >= target && qualifies(s, bit, GZ_AT_BLOCK, &canon) && canon >= target) {
			hand_back(s, canon, GZ_AT_BLOCK);
			return;
		}
		if (zn_inflate_stream_at_member_end(d) && bit >= target &&
		    qualifies(s, bit, GZ_AT_MEMBER, &canon)) {
			hand_back(s, bit, GZ_AT_MEMBER);
			return;
		}
		release_input(s, at);
		/* Piped: chunks whose input the decoder is past are of no more use. */
		while (s->read && s->n > 1 && ring_at(s, 1)->in_base <= at &&
		       ring_at(s, 0)->to <= bit)
			retire_head(s);
	}
}

/* ---- the loop -------------------------------------------------------------------------------- */

static int same_start(const struct run *s, const struct gz_chunk *c)
{
	return c->found && c->start == s->p && c->start_at == s->p_at;
}

static void run_stream(struct run *s)
{
	struct zn_gunzip *z = s->z;
	s->ring = calloc(z->max_flight, sizeof(*s->ring));
	s->ring_bufs = calloc(z->max_flight, sizeof(*s->ring_bufs));
	if (!s->ring || !s->ring_bufs) {
		finish(s, ZN_ERR_NOMEM, 0);
		return;
	}
	while (s->p_at != GZ_AT_END) {
		issue_more(s);
		if (s->n == 0) {
			/* No chunk: out of memory, or P past the last one (only the end is left).
			 */
			fallback(s, UINT64_MAX);
			continue;
		}
		struct gz_chunk *c = ring_at(s, 0);
		if (s->p >= c->to) {
			retire_head(s);
			release_input(s, s->p / 8);
			continue;
		}
		if (!c->looked_at) {
			c->looked_at = 1;
			wait_done(s, c);
			uint32_t crc_sym;
			if (same_start(s, c) && check_chunk(s, c, &crc_sym) == 0) {
				use_chunk(s, c, crc_sym);
				hand_off(s);
				continue;
			}
		}
		fallback(s, c->to);
	}
	while (s->n)
		retire_head(s);
	free(s->ring);
	free(s->ring_bufs);
}

static void fill_info(const struct run *s, struct zn_gunzip_info *info)
{
	if (!info)
		return;
	struct zn_gunzip_info i;
	zn_gunzip_info_init(&i);
	i.in_pos = s->in_pos;
	i.out_len = s->out_len;
	i.members = s->members;
	i.chunks = s->chunks;
	i.seq_bytes = s->seq_bytes;
	i.sym_bytes = s->sym_bytes;
	zn_sized_out(info, &i, sizeof(i), FIRST_INFO);
}

zn_result zn_gunzip_mem(struct zn_gunzip *z, const void *in, size_t in_len,
                        zn_gunzip_write_fn write, void *ctx, struct zn_gunzip_info *info)
{
	SAFETY_CHECK(z && (in || !in_len) && write, ZN_ERR_INVALID_ARG);
	static const uint8_t none;
	struct run s = {
	        .z = z, .in = in ? in : &none, .in_len = in_len, .write = write, .wctx = ctx};
	run_stream(&s);
	fill_info(&s, info);
	return s.result;
}

zn_result zn_gunzip_read(struct zn_gunzip *z, zn_gunzip_read_fn read, void *rctx,
                         zn_gunzip_write_fn write, void *wctx, struct zn_gunzip_info *info)
{
	SAFETY_CHECK(z && read && write, ZN_ERR_INVALID_ARG);
	struct run s = {.z = z, .read = read, .rctx = rctx, .write = write, .wctx = wctx};
	run_stream(&s);
	free(s.carry);
	fill_info(&s, info);
	return s.result;
}
