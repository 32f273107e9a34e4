/* SPDX-License-Identifier: MIT */
/* gzip_internal.h - the parallel gzip decoder's pieces: chunks, their decoding and the stitcher. */
#ifndef ZN_GZIP_INTERNAL_H
#define ZN_GZIP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "common/common.h"
#include "common/pool.h"
#include "gzip/gzip_find.h"

#define GZ_WIN 32768u /* DEFLATE's window */

/* Where the stream stands, or where a chunk starts or ends: a position and what is there. */
enum gz_at {
	GZ_AT_START = 0,  /* the start of the stream (its first member header) */
	GZ_AT_MEMBER = 1, /* a byte just after a member's trailer (where a next member may start) */
	GZ_AT_BLOCK = 2,  /* the start of a block inside a member */
	GZ_AT_END = 3,    /* the stream has ended (the stitcher only) */
};

/* How a chunk's decoding ended. */
enum gz_end {
	GZ_END_STOP = 0, /* at the first qualifying position at or after its range's end */
	GZ_END_STREAM =
	        1,      /* at the end of the input: the last member, then zero bytes or nothing */
	GZ_END_CUT = 2, /* earlier, at a real block boundary or member end (damage, a false
	                   start, too much output, the input at hand used up): the stitcher
	                   decodes on from there itself */
};

/* A member that ended inside a chunk. */
struct gz_mend {
	uint64_t out;      /* the chunk's output before the member's end (symbols and bytes) */
	uint32_t crc_want; /* its trailer */
	uint32_t isize_want;
	uint32_t crc_bytes; /* CRC-32 of its part of the chunk's byte output (see gz_chunk) */
	uint64_t bytes_len; /* the length of that part */
};

/*
 * One chunk: a range of the input that one job decodes from the first candidate in it. The
 * output is symbols (16 bits, markers for the unknown window; sym[GZ_WIN..GZ_WIN + nsym), after
 * the 32 Ki markers) as long as the window is unknown, then bytes (out[out_hist..out_hist + nout),
 * after a history of out_hist bytes). A chunk that starts at a member has no symbols.
 *
 * Fields are written by the dispatcher before the job is queued, by the job until it sets `done`
 * (under the decoder's lock), and read by the stitcher after it saw `done`.
 */
struct gz_chunk {
	/* set by the dispatcher */
	uint64_t from, to; /* the range, in bits of the stream */
	const uint8_t *in; /* the input from stream byte in_base on */
	uint64_t in_base;
	size_t in_len;
	int in_final;      /* nothing follows in[in_len - 1] */
	uint64_t soft_cap; /* output after which the job ends at the next block boundary */
	atomic_int cancel; /* set by the stitcher: the chunk is no longer needed */
	struct gz_decoder *g;

	/* set by the job */
	int found;      /* a start was found: start, start_at and the rest are valid */
	uint64_t start; /* its position (bits) */
	int start_at;   /* GZ_AT_START, _MEMBER (a member header there) or _BLOCK */
	uint16_t *sym;  /* sym_cap symbols, recycled */
	size_t sym_cap, nsym;
	uint8_t *out; /* out_cap bytes, recycled */
	size_t out_cap, out_hist, nout;
	uint32_t crc_tail; /* CRC-32 of the byte output after the last member end in it (or
	                      all of it) */
	struct gz_mend *mends;
	size_t nmends, mends_cap;
	int end;          /* enum gz_end */
	uint64_t end_pos; /* STOP: the qualifying position; CUT: the boundary's bit, or 8 * the
	                     byte after a trailer; STREAM: 8 * the input's length */
	int end_at;       /* STOP, CUT: GZ_AT_MEMBER or GZ_AT_BLOCK */
	uint64_t tried;   /* input decoded from false starts (for the budget and statistics) */
	int done;
	int sym_resolved; /* the symbols were resolved in place to bytes (after a hand-off) */
	uint32_t crc_sym; /* then their CRC-32 */

	/* The hand-off: while the job decodes symbols, the stitcher may learn the window before
	 * its start; then it gives it to the job, which resolves what it has and goes on in
	 * bytes. The job publishes its start under mu (pub_*); the stitcher, under mu, copies
	 * the window to hand_win only for a job whose published start is where the stream
	 * stands, and raises `handoff`, which the job polls. */
	int pub_valid;
	uint64_t pub_start;
	int pub_at;
	uint8_t *hand_win; /* GZ_WIN bytes: the window at its end */
	size_t hand_len;
	atomic_int handoff;
	/* Chaining, under mu: a chunk is `validated` once it is known to start where the stream
	 * stands (the stitcher saw its predecessor end there, or its predecessor was validated
	 * and ended there). A validated job that ends at the start of the next chunk's job gives
	 * it the window itself, without waiting for the stitcher: the next chunk goes on in bytes
	 * as early as possible. The stitcher still checks that window against its own before it
	 * uses the chunk. */
	int validated;
	struct gz_chunk *next; /* the chunk after it, once queued */

	/* the stitcher's */
	int looked_at; /* waited for and used or refused */
};

/* Decode a chunk (a pool job). */
void gz_chunk_run(void *arg);

/* The decoder object: options, the pool, recycled buffers and decoders. */
struct gz_decoder {
	unsigned threads;
	uint64_t chunk_size;
	struct zn_pool *pool;
	/* guarded by mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* a chunk is done */
	struct zn_inflater **idle; /* raw decoders not in use */
	size_t nidle, idle_cap;
	struct gz_bufs *free_bufs; /* output buffers not in use */
};

/* A raw decoder for a job, and back. NULL when out of memory. */
struct zn_inflater *gz_take_inflater(struct gz_decoder *g);
void gz_give_inflater(struct gz_decoder *g, struct zn_inflater *d);

#endif
