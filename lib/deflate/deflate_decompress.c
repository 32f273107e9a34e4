/* SPDX-License-Identifier: MIT */
/* deflate_decompress.c - DEFLATE, zlib and gzip decoding: the block and container state machine
 * shared by the whole-buffer and streaming APIs. */
#include <stdatomic.h>
#include <stdlib.h>

#include "common/cpu_features.h"
#include "common/sized.h"
#include "deflate_internal.h"
#include "deflate_resume.h"

/*
 * One engine serves both APIs. It decodes from an input range into an output range until the
 * stream ends or a limit is hit; the limits are what differ:
 *   whole buffer: all input is there (`final`), output is the caller's buffer and must fit
 *                 exactly (`exact`: a symbol that does not fit is ZN_ERR_OUTPUT_FULL);
 *   streaming:    input may end anywhere (the engine stops at a symbol boundary with enough
 *                 margin, and the caller keeps the rest), output goes to the object's window,
 *                 and the engine stops when fewer than 258 bytes are free.
 * Inside a Huffman block the CPU-specific fast loop runs while FASTLOOP_IN_MARGIN input bytes and
 * FASTLOOP_OUT_MARGIN output bytes are available; a careful symbol-at-a-time loop finishes the
 * rest. Past the end of a final input, the careful refill supplies zero bytes and counts them
 * (`overrun`); consuming any of them means the input was truncated.
 *
 * For the parallel gzip decoder, a stream can start at any block boundary, with a known window
 * (zn_inflate_stream_start_raw) or an unknown one (zn_inflate_stream_start_unknown; finding the
 * boundary, by trial, is the caller's business). With the window unknown the engine runs in
 * symbol mode, the technique of rapidgzip: output symbols are 16 bits wide, 0..255 a byte and
 * MARKER + k byte k of the missing 32 KiB. The symbol window's history starts out as the 32 Ki
 * markers, so a match into it copies markers, a match into earlier output copies whatever it
 * holds, and the distance check is the ordinary one (every DEFLATE distance is in reach, so
 * ZN_ERR_BAD_DISTANCE cannot happen here; it shows when the caller resolves markers against a
 * shorter real window). The engine, the block parser and the table builder are shared: the
 * functions that write output (the careful loop, stored blocks, the state machine) are generic
 * bodies taking a constant `sym`, instantiated for bytes and for symbols, and the fast loop is
 * one template for both.
 *
 * `marker_end` is one past the newest marker written: markers only arise by copying, so a match
 * whose source starts at or after it writes none, and only the others scan what they wrote.
 * Once 32 Ki symbols follow marker_end, nothing can reach a marker any more: the window is
 * known. The symbol loop stops there, the last 32 Ki symbols (all bytes) become the byte
 * window's history, and zn_inflate_stream() goes on from the same bit with the fast loop.
 * Stopping at block ends (block stops) is a check in the state machine after each block.
 *
 * How soon that happens depends on the data. From a block 1 MB into a gzip -6 stream of the
 * 4 MB test corpora: executables switch after 164 Ki symbols, but in English text and in C
 * headers common strings keep being copied from copies of the window, and markers last to the
 * end (18-21% of all symbols). So symbol mode gets a fast loop of its own, the fast-loop
 * template instantiated with 16-bit output (deflate_markers.c, with the numbers): 15.8
 * instructions per symbol on that text against 29.9 in the careful loop, which now only
 * finishes the tails, as in byte mode. The fast loop stops where the window would become known
 * as of its entry, and is entered again if a marker copied on the way moved that point.
 */

#define WIN_HIST 32768u
#define WIN_OUT  (256u * 1024)
#define WIN_SIZE (WIN_HIST + WIN_OUT)
/* Symbol mode (unknown window): 32 Ki symbols of history, then 64 Ki of output, 16 bits each.
 * Output is handed out per call, so a smaller area than the byte window only means more calls;
 * the slide moves 64 KiB per 32 Ki symbols or more, a rounding error next to decoding them. */
#define SWIN_OUT  (64u * 1024)
#define SWIN_SIZE (WIN_HIST + SWIN_OUT)
#define MARKER    ZN_INFLATE_MARKER
#define STAGE_CAP 4096u
/* The longest dynamic block header is under 600 bytes; a block header is only started in
 * streaming mode when this much input is buffered, so header parsing never suspends. */
#define HEADER_MARGIN 1024u
/* Whole-buffer checksums are computed in pieces of this size as decoding goes. */
#define CHECK_CHUNK (128u * 1024)

enum state {
	ST_ZLIB_HDR,
	ST_GZ_HDR,
	ST_SKIP_BITS,
	ST_BLOCK_HDR,
	ST_HUFF,
	ST_STORED,
	ST_TRAILER,
	ST_GZ_NEXT,
	ST_END,
};

/* What the engine reports. R_BLOCK: a block ended and block stops are on. R_KNOWN (symbol
 * mode): the last 32 Ki symbols hold no marker, so decoding can go on in bytes. R_MEMBER: a
 * gzip member's trailer checked out and member stops are on (deflate_resume.h). */
enum { R_CONT = 0, R_IN, R_OUT, R_END, R_ERR, R_BLOCK, R_KNOWN, R_MEMBER };

struct io {
	const uint8_t *in, *in_end;
	int final; /* no input follows in_end */
	uint64_t bitbuf;
	uint32_t bitsleft;
	uint32_t overrun; /* zero bytes supplied past in_end (final input only) */
	uint8_t *out, *out_end;
	const uint8_t *out_base;
	int exact;        /* whole-buffer output: fill to the last byte, then fail */
	int block_stops;  /* return R_BLOCK after each block (streaming, on request) */
	int member_stops; /* return R_MEMBER after each gzip trailer (deflate_resume.h) */
	/* Symbol mode only (the `sym` variants below); `out` then stays put. */
	uint16_t *sout, *sout_end;
	const uint16_t *sout_base;
	const uint16_t *marker_end; /* one past the newest marker written: none at or after it */
};

struct zn_inflater {
	int format;
	zn_fastloop_fn fastloop;
	const char *fastloop_name;
	zn_pair_fn pair;

	/* Stream state. */
	enum state st;
	int last_block;
	uint32_t stored_left;
	const uint32_t *litlen, *dist; /* the fixed tables or litlen_dyn/dist_dyn */
	unsigned hdr_step;             /* progress through a gzip/zlib header or a trailer */
	unsigned gz_flags;
	uint32_t field_left;
	uint32_t hcrc;
	int subsequent; /* the gzip member being parsed is not the first */
	int zeros_seen; /* zero padding after a gzip member */
	uint8_t trailer[8];
	uint32_t skip_bits;
	uint32_t check; /* running CRC-32 or Adler-32 of the member */
	uint32_t isize;
	const uint8_t *ck; /* output before this is in `check` */
	uint64_t members;
	zn_result err;         /* sticky error */
	zn_result end_result;  /* ZN_OK or ZN_ERR_TRAILING_GARBAGE once the stream ended */
	uint32_t garbage_back; /* bytes read that turned out to be trailing garbage */
	uint64_t in_total, out_total, err_in, end_in;

	/* Bits carried between streaming calls. */
	uint64_t bitbuf;
	uint32_t bitsleft, overrun;

	/* Streaming buffers. */
	uint8_t *win; /* WIN_SIZE bytes: 32 KiB of history, then output */
	size_t wpos, wflushed, base;
	size_t stage_len;
	uint8_t stage[STAGE_CAP];
	int block_stops;   /* zn_inflate_stream_set_block_stops(); kept across resets */
	int at_block_end;  /* the last streaming call stopped after a block */
	int member_stops;  /* zn_inflate_stream_set_member_stops(); kept across resets */
	int at_member_end; /* the last streaming call stopped after a gzip trailer */

	/* Symbol mode: decoding with an unknown window (zn_inflate_stream_start_unknown). */
	int sym_mode;   /* the window is still unknown: zn_inflate_stream_symbols() decodes */
	uint16_t *swin; /* SWIN_SIZE symbols, allocated on first use; the history starts as the
	                   32 Ki markers, which matches then copy as any other symbol */
	size_t spos, sflushed, smark; /* write position, handed out up to, marker_end */

	uint32_t litlen_dyn[LITLEN_ENOUGH];
	uint32_t dist_dyn[DIST_ENOUGH];
	uint32_t precode[1u << PRECODE_TABLEBITS];
	uint8_t lens[DEFLATE_NUM_LITLEN + DEFLATE_NUM_DIST];
};

/* ---- bit input for everything outside the fast loop ------------------------------------------ */

static ZN_FORCEINLINE void refill_careful(struct io *io)
{
	if (likely(io->in_end - io->in >= 8)) {
		io->bitbuf |= zn_get_le64(io->in) << io->bitsleft;
		io->in += 7 - ((io->bitsleft >> 3) & 7);
		io->bitsleft |= 56;
		return;
	}
	while (io->bitsleft <= 56) {
		uint64_t byte = 0;
		if (io->in < io->in_end)
			byte = *io->in++;
		else
			io->overrun++;
		io->bitbuf |= byte << io->bitsleft;
		io->bitsleft += 8;
	}
}

static ZN_FORCEINLINE uint32_t get_bits(struct io *io, unsigned n)
{
	uint32_t v = (uint32_t)(io->bitbuf & ((1ull << n) - 1));
	io->bitbuf >>= n;
	io->bitsleft -= n;
	return v;
}

/* Were any of the zero bytes supplied past the end of the input consumed? */
static ZN_FORCEINLINE int overran(const struct io *io)
{
	return io->bitsleft < 8 * io->overrun;
}

static void align_byte(struct io *io)
{
	unsigned n = io->bitsleft & 7;
	io->bitbuf >>= n;
	io->bitsleft -= n;
}

/* One byte of a byte-aligned field: 1 with *b set, 0 when more input is needed, -1 at the end
 * of a final input. Bytes still held in the bit buffer come first. */
static int get_byte(struct io *io, uint8_t *b)
{
	if (io->bitsleft >= 8 + 8 * io->overrun) {
		*b = (uint8_t)io->bitbuf;
		io->bitbuf >>= 8;
		io->bitsleft -= 8;
		return 1;
	}
	if (io->overrun)
		return -1;
	/* The bit buffer is empty; its upper bits mirror bytes at `in`, which are now read
	 * directly, so they must go. */
	io->bitbuf = 0;
	io->bitsleft = 0;
	if (io->in < io->in_end) {
		*b = *io->in++;
		return 1;
	}
	return io->final ? -1 : 0;
}

/* ---- checksums --------------------------------------------------------------------------------
 */

static void update_check(struct zn_inflater *d, const uint8_t *upto)
{
	size_t n = (size_t)(upto - d->ck);
	if (d->format == ZN_FORMAT_GZIP)
		d->check = zn_deflate_crc32(d->check, d->ck, n);
	else if (d->format == ZN_FORMAT_ZLIB)
		d->check = zn_deflate_adler32(d->check, d->ck, n);
	d->isize += (uint32_t)n;
	d->ck = upto;
}

static void start_member(struct zn_inflater *d, struct io *io)
{
	d->check = d->format == ZN_FORMAT_ZLIB ? 1 : 0;
	d->isize = 0;
	d->ck = io->out;
	d->last_block = 0;
	d->st = ST_BLOCK_HDR;
}

static int fail(struct zn_inflater *d, zn_result r)
{
	d->err = r;
	return R_ERR;
}

/* ---- containers -------------------------------------------------------------------------------
 */

static int read_zlib_header(struct zn_inflater *d, struct io *io)
{
	uint8_t cmf, flg;
	int g = get_byte(io, &cmf);
	if (g > 0 && (g = get_byte(io, &flg)) <= 0 && g == 0) {
		/* Put the first byte back: rare (streaming with one byte), but keep it exact. */
		io->bitbuf = cmf;
		io->bitsleft = 8;
	}
	if (g == 0)
		return R_IN;
	if (g < 0)
		return fail(d, ZN_ERR_TRUNCATED);
	SAFETY_CHECK((cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && ((cmf << 8) | flg) % 31 == 0,
	             fail(d, ZN_ERR_BAD_HEADER));
	SAFETY_CHECK(!(flg & 0x20), fail(d, ZN_ERR_UNSUPPORTED)); /* FDICT */
	start_member(d, io);
	return R_CONT;
}

#define GZ_FHCRC    0x02
#define GZ_FEXTRA   0x04
#define GZ_FNAME    0x08
#define GZ_FCOMMENT 0x10

/* The gzip header, one byte at a time so that it may span streaming calls. hdr_step: 0 ID1,
 * 1 ID2, 2 CM, 3 FLG, 4..9 MTIME/XFL/OS, 10..11 XLEN, 12 extra field, 13 name, 14 comment,
 * 15..16 header CRC. */
static int read_gzip_header(struct zn_inflater *d, struct io *io)
{
	for (;;) {
		uint8_t b;
		unsigned step = d->hdr_step;
		if (step == 10 && !(d->gz_flags & GZ_FEXTRA))
			step = 13;
		if (step == 13 && !(d->gz_flags & GZ_FNAME))
			step = 14;
		if (step == 14 && !(d->gz_flags & GZ_FCOMMENT))
			step = 15;
		if (step == 15 && !(d->gz_flags & GZ_FHCRC))
			step = 17;
		d->hdr_step = step;
		if (step == 17)
			break;
		if (step == 12 && d->field_left == 0) {
			d->hdr_step = 13;
			continue;
		}
		int g = get_byte(io, &b);
		if (g == 0)
			return R_IN;
		if (g < 0) {
			/* The input ends between members: done. A lone 0x1f at the end is the start
			 * of a member cut short, as GNU gzip reports it, not trailing garbage. */
			if (d->subsequent && step == 0) {
				d->garbage_back = 0;
				goto garbage;
			}
			return fail(d, ZN_ERR_TRUNCATED);
		}
		if (step < 15)
			d->hcrc = zn_deflate_crc32(d->hcrc, &b, 1);
		switch (step) {
		case 0:
			SAFETY_CHECK(b == 0x1f, fail(d, ZN_ERR_BAD_HEADER));
			break;
		case 1:
			if (b != 0x8b && d->subsequent) {
				d->garbage_back = 2;
				goto garbage;
			}
			SAFETY_CHECK(b == 0x8b, fail(d, ZN_ERR_BAD_HEADER));
			break;
		case 2:
			SAFETY_CHECK(b == 8, fail(d, ZN_ERR_BAD_HEADER));
			break;
		case 3:
			SAFETY_CHECK(!(b & 0xe0), fail(d, ZN_ERR_BAD_HEADER));
			d->gz_flags = b;
			break;
		case 10:
			d->field_left = b;
			break;
		case 11:
			d->field_left |= (uint32_t)b << 8;
			break;
		case 12:
			if (--d->field_left)
				continue; /* stay on step 12 */
			break;
		case 13:
		case 14:
			if (b)
				continue; /* until the terminating zero */
			break;
		case 15:
			SAFETY_CHECK(b == (d->hcrc & 0xff), fail(d, ZN_ERR_HEADER_CHECKSUM));
			break;
		case 16:
			SAFETY_CHECK(b == ((d->hcrc >> 8) & 0xff), fail(d, ZN_ERR_HEADER_CHECKSUM));
			break;
		}
		d->hdr_step++;
	}
	start_member(d, io);
	io->out_base = io->out; /* members are independent: no match reaches the previous one */
	return R_CONT;
garbage:
	d->end_result = ZN_ERR_TRAILING_GARBAGE;
	d->st = ST_END;
	return R_END;
}

/* After a gzip member: another member, zero padding, the end, or trailing garbage. */
static int next_gzip_member(struct zn_inflater *d, struct io *io)
{
	for (;;) {
		uint8_t b;
		int g = get_byte(io, &b);
		if (g == 0)
			return R_IN;
		if (g < 0) {
			d->st = ST_END;
			return R_END;
		}
		if (b == 0) {
			d->zeros_seen = 1;
			continue;
		}
		if (b == 0x1f && !d->zeros_seen) {
			d->subsequent = 1;
			d->hcrc = zn_deflate_crc32(0, &b, 1);
			d->hdr_step = 1;
			d->gz_flags = 0;
			d->st = ST_GZ_HDR;
			return R_CONT;
		}
		d->end_result = ZN_ERR_TRAILING_GARBAGE;
		d->garbage_back = 1;
		d->st = ST_END;
		return R_END;
	}
}

static int read_trailer(struct zn_inflater *d, struct io *io)
{
	unsigned need = d->format == ZN_FORMAT_GZIP ? 8 : d->format == ZN_FORMAT_ZLIB ? 4 : 0;
	align_byte(io);
	while (d->hdr_step < need) {
		int g = get_byte(io, &d->trailer[d->hdr_step]);
		if (g == 0)
			return R_IN;
		if (g < 0)
			return fail(d, ZN_ERR_TRUNCATED);
		d->hdr_step++;
	}
	update_check(d, io->out);
	if (d->format == ZN_FORMAT_ZLIB) {
		uint32_t want = ((uint32_t)d->trailer[0] << 24) | ((uint32_t)d->trailer[1] << 16) |
		                ((uint32_t)d->trailer[2] << 8) | d->trailer[3];
		SAFETY_CHECK(want == d->check, fail(d, ZN_ERR_CHECKSUM));
	} else if (d->format == ZN_FORMAT_GZIP) {
		SAFETY_CHECK(zn_get_le32(d->trailer) == d->check, fail(d, ZN_ERR_CHECKSUM));
		SAFETY_CHECK(zn_get_le32(d->trailer + 4) == d->isize,
		             fail(d, ZN_ERR_LENGTH_MISMATCH));
	}
	d->members++;
	if (d->format == ZN_FORMAT_GZIP) {
		d->st = ST_GZ_NEXT;
		d->zeros_seen = 0;
		return R_CONT;
	}
	d->st = ST_END;
	return R_END;
}

/* ---- DEFLATE blocks ------------------------------------------------------------------------- */

/* Output room below which a whole-buffer decode does not pair literals (read_dynamic_header). */
#define PAIR_MIN_ROOM (16u << 10)

static zn_result read_dynamic_header(struct zn_inflater *d, struct io *io)
{
	static const uint8_t order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
	                                  11, 4,  12, 3, 13, 2, 14, 1, 15};
	uint8_t *lens = d->lens;
	refill_careful(io);
	unsigned hlit = get_bits(io, 5) + 257;
	unsigned hdist = get_bits(io, 5) + 1;
	unsigned hclen = get_bits(io, 4) + 4;
	SAFETY_CHECK(hlit <= 286 && hdist <= 30, ZN_ERR_BAD_CODE_LENGTHS);

	uint8_t pre[19] = {0};
	for (unsigned i = 0; i < hclen; i++) {
		if (io->bitsleft < 3)
			refill_careful(io);
		pre[order[i]] = (uint8_t)get_bits(io, 3);
	}
	RETURN_IF_ERROR(zn_build_decode_table(d->precode, pre, 19, ZN_CODE_PRECODE, NULL));

	const unsigned n = hlit + hdist;
	for (unsigned i = 0; i < n;) {
		if (io->bitsleft < 7 + 7)
			refill_careful(io);
		uint32_t e = d->precode[io->bitbuf & ((1u << PRECODE_TABLEBITS) - 1)];
		get_bits(io, e & 0xff);
		unsigned sym = e >> 16, rep;
		uint8_t val = 0;
		if (sym < 16) {
			lens[i++] = (uint8_t)sym;
			continue;
		}
		if (sym == 16) {
			SAFETY_CHECK(i > 0, ZN_ERR_BAD_CODE_LENGTHS);
			val = lens[i - 1];
			rep = 3 + get_bits(io, 2);
		} else if (sym == 17) {
			rep = 3 + get_bits(io, 3);
		} else {
			rep = 11 + get_bits(io, 7);
		}
		SAFETY_CHECK(rep <= n - i, ZN_ERR_BAD_CODE_LENGTHS);
		memset(&lens[i], val, rep);
		i += rep;
	}
	SAFETY_CHECK(lens[256] != 0, ZN_ERR_BAD_CODE_LENGTHS); /* no end-of-block code */
	/* Pairing literals (deflate_tables.c) costs about 14,000 instructions a table, which a
	 * block that cannot write much does not earn back: a small member decoded whole. */
	const zn_pair_fn pair =
	        io->exact && (size_t)(io->out_end - io->out) < PAIR_MIN_ROOM ? NULL : d->pair;
	RETURN_IF_ERROR(zn_build_decode_table(d->litlen_dyn, lens, hlit, ZN_CODE_LITLEN, pair));
	RETURN_IF_ERROR(zn_build_decode_table(d->dist_dyn, lens + hlit, hdist, ZN_CODE_DIST, NULL));
	d->litlen = d->litlen_dyn;
	d->dist = d->dist_dyn;
	return ZN_OK;
}

static int read_block_header(struct zn_inflater *d, struct io *io)
{
	if (!io->final && (size_t)(io->in_end - io->in) < HEADER_MARGIN)
		return R_IN;
	refill_careful(io);
	d->last_block = (int)get_bits(io, 1);
	unsigned type = get_bits(io, 2);
	zn_result r = ZN_OK;
	if (type == 0) {
		align_byte(io);
		uint8_t h[4];
		for (unsigned i = 0; i < 4; i++)
			if (get_byte(io, &h[i]) <= 0)
				return fail(d, ZN_ERR_TRUNCATED);
		uint16_t len = zn_get_le16(h), nlen = zn_get_le16(h + 2);
		SAFETY_CHECK((uint16_t)(len ^ nlen) == 0xffff, fail(d, ZN_ERR_BAD_STORED_LEN));
		d->stored_left = len;
		d->st = ST_STORED;
		return R_CONT;
	} else if (type == 1) {
		d->litlen = zn_fixed_litlen_table();
		d->dist = zn_fixed_dist_table();
	} else if (type == 2) {
		r = read_dynamic_header(d, io);
	} else {
		r = ZN_ERR_BAD_BLOCK_TYPE;
	}
	if (overran(io))
		r = ZN_ERR_TRUNCATED;
	if (r != ZN_OK)
		return fail(d, r);
	d->st = ST_HUFF;
	return R_CONT;
}

/* ---- output: bytes or 16-bit symbols ----------------------------------------------------------
 *
 * The bodies below that write output take a constant `sym`: 0 writes bytes at io->out, 1 writes
 * symbols at io->sout (values 0..255 are bytes, MARKER + k is byte k of the unknown window).
 * Each is instantiated twice through a small wrapper, so every `sym` test folds away in both.
 */

static ZN_FORCEINLINE size_t out_room(const struct io *io, const int sym)
{
	return sym ? (size_t)(io->sout_end - io->sout) : (size_t)(io->out_end - io->out);
}

/* How far back a match may reach. */
static ZN_FORCEINLINE size_t out_reach(const struct io *io, const int sym)
{
	return sym ? (size_t)(io->sout - io->sout_base) : (size_t)(io->out - io->out_base);
}

static ZN_FORCEINLINE void put_out(struct io *io, const int sym, size_t k, uint8_t b)
{
	if (sym)
		io->sout[k] = b;
	else
		io->out[k] = b;
}

static ZN_FORCEINLINE void advance_out(struct io *io, const int sym, size_t n)
{
	if (sym)
		io->sout += n;
	else
		io->out += n;
}

/* Symbols still to write before the last 32 Ki hold no marker (0: they already hold none). */
static ZN_FORCEINLINE size_t until_known(const struct io *io)
{
	size_t clean = (size_t)(io->sout - io->marker_end);
	return clean >= WIN_HIST ? 0 : WIN_HIST - clean;
}

/* A symbol-mode match has just written `length` symbols at `o`, copied from `src`. Markers are
 * only ever copied: positions at or after marker_end hold none, so a copy whose source starts
 * there (including an overlapping one, which re-reads its own output) writes none, and only a
 * copy from before it needs the scan for the newest marker it wrote. */
static ZN_FORCEINLINE void note_markers(struct io *io, const uint16_t *o, const uint16_t *src,
                                        uint32_t length)
{
	if (likely(src >= io->marker_end))
		return;
	for (uint32_t i = length; i-- > 0;) {
		if (o[i] & MARKER) {
			io->marker_end = o + i + 1;
			return;
		}
	}
}

static ZN_FORCEINLINE void copy_match(struct io *io, const int sym, uint32_t offset,
                                      uint32_t length)
{
	if (sym) {
		uint16_t *o = io->sout;
		const uint16_t *src = o - offset;
		for (uint32_t i = 0; i < length; i++)
			o[i] = src[i];
		note_markers(io, o, src, length);
		io->sout += length;
		return;
	}
	uint8_t *o = io->out;
	const uint8_t *src = o - offset;
	for (uint32_t i = 0; i < length; i++)
		o[i] = src[i];
	io->out += length;
}

/* ---- stored and Huffman blocks ----------------------------------------------------------------
 */

static ZN_FORCEINLINE int copy_stored_generic(struct zn_inflater *d, struct io *io, const int sym)
{
	/* Whole bytes still in the bit buffer first (at most 7). */
	while (d->stored_left && io->bitsleft >= 8 && out_room(io, sym)) {
		uint8_t b = 0; /* get_byte sets it here: 8 bits are held */
		if (get_byte(io, &b) < 0)
			return fail(d, ZN_ERR_TRUNCATED);
		put_out(io, sym, 0, b);
		advance_out(io, sym, 1);
		d->stored_left--;
	}
	while (d->stored_left) {
		size_t in_avail = (size_t)(io->in_end - io->in);
		size_t out_avail = out_room(io, sym);
		if (sym) { /* stop where the window becomes known: bytes are cheaper from there */
			size_t until = until_known(io);
			if (!until)
				return R_KNOWN;
			out_avail = ZN_MIN(out_avail, until);
		}
		if (out_avail == 0)
			return io->exact ? fail(d, ZN_ERR_OUTPUT_FULL) : R_OUT;
		if (io->overrun || (in_avail == 0 && io->final))
			return fail(d, ZN_ERR_TRUNCATED);
		if (in_avail == 0)
			return R_IN;
		io->bitbuf = 0; /* reading bytes directly, see get_byte */
		size_t n = ZN_MIN(ZN_MIN(in_avail, out_avail), (size_t)d->stored_left);
		if (sym)
			for (size_t i = 0; i < n; i++)
				io->sout[i] = io->in[i];
		else
			memcpy(io->out, io->in, n);
		advance_out(io, sym, n);
		io->in += n;
		d->stored_left -= (uint32_t)n;
	}
	d->st = d->last_block ? ST_TRAILER : ST_BLOCK_HDR;
	d->hdr_step = 0;
	return R_CONT;
}

static int copy_stored(struct zn_inflater *d, struct io *io)
{
	return copy_stored_generic(d, io, 0);
}

static int copy_stored_symbols(struct zn_inflater *d, struct io *io)
{
	return copy_stored_generic(d, io, 1);
}

/* Symbol at a time, with every bound checked: the tails of buffers and streams, and all of
 * symbol mode (which decodes only until the window is known, see the top of the file). */
static ZN_FORCEINLINE int decode_careful_generic(struct zn_inflater *d, struct io *io,
                                                 const int sym)
{
	const uint32_t *const litlen = d->litlen, *const dist = d->dist;
	for (;;) {
		if (!io->final && io->in_end - io->in < 8)
			return R_IN;
		if (!io->exact && out_room(io, sym) < DEFLATE_MAX_LEN)
			return R_OUT;
		if (sym && !until_known(io))
			return R_KNOWN;
		refill_careful(io);
		uint32_t e = litlen[io->bitbuf & ((1u << LITLEN_TABLEBITS) - 1)];
		if (!(e & HD_LIT_MASK) && (e & HD_SUBTABLE)) { /* literals use bits 8.. otherwise */
			get_bits(io, e & 0xff);
			e = litlen[(e >> 16) + (io->bitbuf & ((1u << ((e >> 8) & 15)) - 1))];
		}
		if (e & HD_LIT_MASK) {
			get_bits(io, e & 63);
			if (overran(io))
				return fail(d, ZN_ERR_TRUNCATED);
			unsigned n = (e >> 6) & 3;
			if (out_room(io, sym) < n)
				return fail(d, ZN_ERR_OUTPUT_FULL);
			for (unsigned k = 0; k < n; k++)
				put_out(io, sym, k, (uint8_t)(e >> (8 + 8 * k)));
			advance_out(io, sym, n);
			continue;
		}
		if (e & HD_EXC) {
			if (!(e & HD_EOB))
				return fail(d, overran(io) ? ZN_ERR_TRUNCATED : ZN_ERR_BAD_SYMBOL);
			get_bits(io, e & 0xff);
			if (overran(io))
				return fail(d, ZN_ERR_TRUNCATED);
			return R_END;
		}
		uint64_t saved = io->bitbuf;
		get_bits(io, e & 0xff);
		uint32_t length = (e >> 16) + (uint32_t)((saved & ((1ull << (e & 0xff)) - 1)) >>
		                                         ((e >> 8) & 15));
		uint32_t de = dist[io->bitbuf & ((1u << DIST_TABLEBITS) - 1)];
		if ((de & HD_EXC) && (de & HD_SUBTABLE)) {
			get_bits(io, de & 0xff);
			de = dist[(de >> 16) + (io->bitbuf & ((1u << ((de >> 8) & 15)) - 1))];
		}
		if (de & HD_EXC)
			return fail(d, overran(io) ? ZN_ERR_TRUNCATED : ZN_ERR_BAD_SYMBOL);
		saved = io->bitbuf;
		get_bits(io, de & 0xff);
		uint32_t offset = (de >> 16) + (uint32_t)((saved & ((1ull << (de & 0xff)) - 1)) >>
		                                          ((de >> 8) & 15));
		if (overran(io))
			return fail(d, ZN_ERR_TRUNCATED);
		/* Symbol mode: out_reach counts the 32 Ki markers, so a match may reach exactly to
		 * the oldest byte of the unknown window, and one further is refused as usual. */
		SAFETY_CHECK(offset <= out_reach(io, sym), fail(d, ZN_ERR_BAD_DISTANCE));
		SAFETY_CHECK(length <= out_room(io, sym), fail(d, ZN_ERR_OUTPUT_FULL));
		copy_match(io, sym, offset, length);
	}
}

static int decode_careful(struct zn_inflater *d, struct io *io)
{
	return decode_careful_generic(d, io, 0);
}

/* The state after a Huffman block's end-of-block code. */
static void end_huffman_block(struct zn_inflater *d)
{
	d->st = d->last_block ? ST_TRAILER : ST_BLOCK_HDR;
	d->hdr_step = 0;
}

/* Where a fast loop must stop reading: an iteration that starts before the limit reads at most
 * FASTLOOP_IN_MARGIN bytes, and past the end of a final input (zero bytes supplied, `overrun`)
 * only the careful loop may go on. */
static const uint8_t *fast_in_limit(const struct io *io)
{
	if (io->overrun || io->in_end - io->in < FASTLOOP_IN_MARGIN)
		return io->in;
	return io->in_end - (FASTLOOP_IN_MARGIN - 1);
}

/* Symbol mode: the symbol fast loop (deflate_markers.c), stopped where the window becomes
 * known, then the careful loop for the tails. */
static int decode_symbols(struct zn_inflater *d, struct io *io)
{
	struct zn_sym_ctx c;
	int fl;
	c.out_base = io->sout_base;
	c.litlen = d->litlen;
	c.dist = d->dist;
	for (;;) {
		c.in = io->in;
		c.in_limit = fast_in_limit(io);
		c.bitbuf = io->bitbuf;
		c.bitsleft = io->bitsleft;
		c.out = io->sout;
		c.out_limit = io->sout_end - io->sout > FASTLOOP_OUT_MARGIN
		                      ? io->sout_end - FASTLOOP_OUT_MARGIN
		                      : io->sout;
		/* Stop where the window becomes known as things stand; a marker copied on the
		 * way moves that point on, and the loop is simply entered again. */
		size_t until = until_known(io);
		int known_limit = until < (size_t)(c.out_limit - c.out);
		if (known_limit)
			c.out_limit = c.out + until;
		c.marker_end = io->marker_end;
		fl = zn_fastloop_symbols(&c);
		io->in = c.in;
		io->bitbuf = c.bitbuf;
		io->bitsleft = c.bitsleft & 63;
		io->sout = c.out;
		io->marker_end = c.marker_end;
		if (fl == FL_LIMIT && known_limit && c.in < c.in_limit && until_known(io))
			continue;
		break;
	}
	int r;
	if (fl == FL_ERROR)
		return fail(d, c.err);
	r = fl == FL_EOB ? R_END : decode_careful_generic(d, io, 1);
	if (r == R_END) {
		end_huffman_block(d);
		return R_CONT;
	}
	return r;
}

static int decode_huffman(struct zn_inflater *d, struct io *io)
{
	struct zn_fast_ctx c;
	int fl;
	c.out_base = io->out_base;
	c.litlen = d->litlen;
	c.dist = d->dist;
	for (;;) {
		c.in = io->in;
		c.in_limit = fast_in_limit(io);
		c.bitbuf = io->bitbuf;
		c.bitsleft = io->bitsleft;
		c.out = io->out;
		c.out_limit = io->out_end - io->out > FASTLOOP_OUT_MARGIN
		                      ? io->out_end - FASTLOOP_OUT_MARGIN
		                      : io->out;
		/* Whole-buffer zlib/gzip: stop every CHECK_CHUNK bytes to checksum them while they
		 * are still in L2, rather than re-reading the whole output from memory at the end
		 * (streaming checksums each call's output, which is at most 256 KiB, anyway). */
		uint8_t *chunk_limit = NULL;
		if (io->exact && d->format != ZN_FORMAT_RAW &&
		    (size_t)(c.out_limit - d->ck) > CHECK_CHUNK) {
			chunk_limit = (uint8_t *)d->ck + CHECK_CHUNK;
			if (chunk_limit < c.out)
				chunk_limit = c.out;
			c.out_limit = chunk_limit;
		}
		fl = d->fastloop(&c);
		io->in = c.in;
		io->bitbuf = c.bitbuf;
		io->bitsleft = c.bitsleft & 63;
		io->out = c.out;
		if (fl == FL_LIMIT && chunk_limit && c.out >= chunk_limit && c.in < c.in_limit) {
			update_check(d, c.out);
			continue;
		}
		break;
	}
	int r;
	if (fl == FL_ERROR)
		return fail(d, c.err);
	if (fl == FL_EOB)
		r = R_END;
	else
		r = decode_careful(d, io);
	if (r == R_END) {
		end_huffman_block(d);
		return R_CONT;
	}
	return r;
}

/* Run the state machine until the stream ends, an error, or a limit (or, with block stops, the
 * end of a block). */
static ZN_FORCEINLINE int run_generic(struct zn_inflater *d, struct io *io, const int sym)
{
	int r;
	for (;;) {
		const enum state st = d->st;
		switch (st) {
		case ST_ZLIB_HDR:
			r = read_zlib_header(d, io);
			break;
		case ST_GZ_HDR:
			r = read_gzip_header(d, io);
			break;
		case ST_SKIP_BITS:
			/* Wait for a header's worth of input, as read_block_header does: refilling
			 * from fewer bytes would pad with zeros as if the input had ended. */
			if (!io->final && (size_t)(io->in_end - io->in) < HEADER_MARGIN)
				return R_IN;
			refill_careful(io);
			get_bits(io, d->skip_bits);
			r = overran(io) ? fail(d, ZN_ERR_TRUNCATED) : R_CONT;
			d->st = ST_BLOCK_HDR;
			break;
		case ST_BLOCK_HDR:
			r = read_block_header(d, io);
			break;
		case ST_HUFF:
			r = sym ? decode_symbols(d, io) : decode_huffman(d, io);
			break;
		case ST_STORED:
			r = sym ? copy_stored_symbols(d, io) : copy_stored(d, io);
			break;
		case ST_TRAILER:
			r = read_trailer(d, io);
			break;
		case ST_GZ_NEXT:
			r = next_gzip_member(d, io);
			break;
		default:
			return R_END;
		}
		if (r != R_CONT) {
			if (r == R_ERR && d->err != ZN_ERR_TRUNCATED && overran(io))
				d->err = ZN_ERR_TRUNCATED;
			return r;
		}
		/* Huffman and stored blocks return R_CONT only once they have ended. */
		if (io->block_stops && (st == ST_HUFF || st == ST_STORED))
			return R_BLOCK;
		if (io->member_stops && st == ST_TRAILER && d->st == ST_GZ_NEXT)
			return R_MEMBER;
	}
}

static int run(struct zn_inflater *d, struct io *io)
{
	return run_generic(d, io, 0);
}

static int run_symbols(struct zn_inflater *d, struct io *io)
{
	return run_generic(d, io, 1);
}

/* Whole bytes loaded into the bit buffer but not yet decoded, less the zero padding added past
 * the end of the input. */
static uint32_t held_bytes(const struct io *io)
{
	return io->bitsleft / 8 > io->overrun ? io->bitsleft / 8 - io->overrun : 0;
}

/* Input bytes consumed: loaded bytes minus whole real bytes still in the bit buffer. */
static uint64_t consumed_bytes(const struct io *io, const uint8_t *in_start)
{
	uint64_t loaded = (uint64_t)(io->in - in_start);
	uint32_t held = held_bytes(io);
	return loaded >= held ? loaded - held : 0;
}

/* ---- objects and the public API ---------------------------------------------------------------
 */

static void reset_state(struct zn_inflater *d)
{
	d->st = d->format == ZN_FORMAT_GZIP   ? ST_GZ_HDR
	        : d->format == ZN_FORMAT_ZLIB ? ST_ZLIB_HDR
	                                      : ST_BLOCK_HDR;
	d->last_block = 0;
	d->stored_left = 0;
	d->hdr_step = 0;
	d->gz_flags = 0;
	d->field_left = 0;
	d->hcrc = 0;
	d->subsequent = 0;
	d->zeros_seen = 0;
	d->skip_bits = 0;
	d->check = d->format == ZN_FORMAT_ZLIB ? 1 : 0;
	d->isize = 0;
	d->members = 0;
	d->err = ZN_OK;
	d->end_result = ZN_OK;
	d->in_total = d->out_total = d->err_in = d->end_in = 0;
	d->garbage_back = 0;
	d->bitbuf = 0;
	d->bitsleft = d->overrun = 0;
	d->wpos = d->wflushed = d->base = WIN_HIST;
	d->stage_len = 0;
	d->litlen = d->litlen_dyn;
	d->dist = d->dist_dyn;
	d->ck = d->win ? d->win + WIN_HIST : NULL;
	d->at_block_end = 0;
	d->at_member_end = 0;
	d->sym_mode = 0;
	d->spos = d->sflushed = d->smark = WIN_HIST;
}

zn_result zn_inflater_new(struct zn_inflater **out, int format)
{
	SAFETY_CHECK(out, ZN_ERR_INVALID_ARG);
	*out = NULL;
	SAFETY_CHECK(format == ZN_FORMAT_RAW || format == ZN_FORMAT_ZLIB ||
	                     format == ZN_FORMAT_GZIP,
	             ZN_ERR_INVALID_ARG);
	struct zn_inflater *d = calloc(1, sizeof(*d));
	SAFETY_CHECK(d, ZN_ERR_NOMEM);
	d->format = format;
	d->fastloop = zn_select_fastloop(zn_cpu_features(), &d->fastloop_name);
	d->pair = zn_select_pair(zn_cpu_features());
	reset_state(d);
	*out = d;
	return ZN_OK;
}

void zn_inflater_free(struct zn_inflater *d)
{
	if (!d)
		return;
	free(d->win);
	free(d->swin);
	free(d);
}

const char *zn_inflater_kernel_name(const struct zn_inflater *d);
const char *zn_inflater_kernel_name(const struct zn_inflater *d)
{
	return d->fastloop_name;
}

zn_result zn_inflate(struct zn_inflater *d, const void *in, size_t in_len, void *out,
                     size_t out_cap, struct zn_inflate_info *info)
{
	static uint8_t no_output;
	SAFETY_CHECK(d && (in || !in_len) && (out || !out_cap), ZN_ERR_INVALID_ARG);
	if (!out)
		out = &no_output; /* no arithmetic on NULL */
	if (!in)
		in = &no_output;
	reset_state(d);
	const uint8_t *in_start = in;
	struct io io = {
	        .in = in_start,
	        .in_end = in_start + in_len,
	        .final = 1,
	        .out = out,
	        .out_end = (uint8_t *)out + out_cap,
	        .out_base = out,
	        .exact = 1,
	};
	d->ck = out;
	int r = run(d, &io);
	zn_result res;
	if (r == R_END) {
		res = d->end_result;
		if (d->format != ZN_FORMAT_GZIP)
			d->members = 1;
	} else {
		res = r == R_ERR ? d->err : ZN_ERR_TRUNCATED;
	}
	if (info) {
		struct zn_inflate_info full = {.struct_size = sizeof(full)};
		full.in_used = consumed_bytes(&io, in_start);
		if (res == ZN_ERR_TRAILING_GARBAGE) /* point at the first garbage byte */
			full.in_used -= ZN_MIN(full.in_used, d->garbage_back);
		if (res == ZN_ERR_TRUNCATED)
			full.in_used = in_len;
		full.out_len = (uint64_t)(io.out - (uint8_t *)out);
		full.members = d->members;
		zn_sized_out(info, &full, sizeof(full), ZN_FIRST_SIZE_inflate_info);
	}
	d->st = ST_END;
	return res;
}

/* ---- streaming --------------------------------------------------------------------------------
 */

static zn_result ensure_window(struct zn_inflater *d)
{
	if (!d->win) {
		d->win = calloc(1, WIN_SIZE);
		SAFETY_CHECK(d->win, ZN_ERR_NOMEM);
	}
	return ZN_OK;
}

zn_result zn_inflate_stream_reset(struct zn_inflater *d)
{
	SAFETY_CHECK(d, ZN_ERR_INVALID_ARG);
	RETURN_IF_ERROR(ensure_window(d));
	reset_state(d);
	return ZN_OK;
}

static void skip_first_bits(struct zn_inflater *d, unsigned first_bit)
{
	if (first_bit) {
		d->skip_bits = first_bit;
		d->st = ST_SKIP_BITS;
	}
}

zn_result zn_inflate_stream_start_raw(struct zn_inflater *d, unsigned first_bit, const void *window,
                                      size_t window_len)
{
	SAFETY_CHECK(d && d->format == ZN_FORMAT_RAW && first_bit < 8 && window_len <= WIN_HIST &&
	                     (window || !window_len),
	             ZN_ERR_INVALID_ARG);
	RETURN_IF_ERROR(ensure_window(d));
	reset_state(d);
	if (window_len)
		memcpy(d->win + WIN_HIST - window_len, window, window_len);
	d->base = WIN_HIST - window_len;
	skip_first_bits(d, first_bit);
	return ZN_OK;
}

zn_result zn_inflate_stream_start_unknown(struct zn_inflater *d, unsigned first_bit)
{
	SAFETY_CHECK(d && d->format == ZN_FORMAT_RAW && first_bit < 8, ZN_ERR_INVALID_ARG);
	RETURN_IF_ERROR(ensure_window(d)); /* for after the switch to bytes */
	if (!d->swin) {
		d->swin = malloc(SWIN_SIZE * sizeof(*d->swin));
		SAFETY_CHECK(d->swin, ZN_ERR_NOMEM);
	}
	reset_state(d);
	for (uint32_t k = 0; k < WIN_HIST; k++)
		d->swin[k] = (uint16_t)(MARKER + k);
	/* All of the history is markers, so the window is known 32 Ki symbols from here at the
	 * earliest (reset_state put spos and smark at WIN_HIST). */
	d->sym_mode = 1;
	skip_first_bits(d, first_bit);
	return ZN_OK;
}

void zn_inflate_stream_set_block_stops(struct zn_inflater *d, int on)
{
	if (d)
		d->block_stops = on != 0;
}

/*
 * The input side of a streaming call, shared by bytes and symbols: run the engine over bytes
 * kept from earlier calls (the stage) and the caller's input, keep what a header or the
 * careful loop could not use yet, and account for the input. `io` comes with its output side
 * set; on return *in_used is set, the bit buffer is saved in `d`, and the engine's result is
 * returned.
 */
static int feed(struct zn_inflater *d, struct io *io, const uint8_t *user, size_t in_len,
                int in_final, size_t *in_used, const int sym)
{
	size_t consumed = 0;
	int r;
	io->bitbuf = d->bitbuf;
	io->bitsleft = d->bitsleft;
	io->overrun = d->overrun;
	io->block_stops = d->block_stops;
	io->member_stops = d->member_stops;
	for (;;) {
		if (d->stage_len) {
			size_t take = ZN_MIN(in_len - consumed, STAGE_CAP - d->stage_len);
			if (take)
				memcpy(d->stage + d->stage_len, user + consumed, take);
			d->stage_len += take;
			consumed += take;
			io->in = d->stage;
			io->in_end = d->stage + d->stage_len;
			io->final = in_final && consumed == in_len;
			r = sym ? run_symbols(d, io) : run(d, io);
			size_t left = (size_t)(io->in_end - io->in);
			if (r == R_IN && consumed == in_len) {
				memmove(d->stage, io->in, left);
				d->stage_len = left;
				break;
			}
			/* Give back what is left of the bytes just taken; keep older ones. */
			size_t back = ZN_MIN(left, take);
			consumed -= back;
			memmove(d->stage, io->in, left - back);
			d->stage_len = left - back;
			if (r == R_IN)
				continue; /* the rest is in the caller's buffer */
			break;
		}
		io->in = user + consumed;
		io->in_end = user + in_len;
		io->final = in_final;
		r = sym ? run_symbols(d, io) : run(d, io);
		consumed = (size_t)(io->in - user);
		if (r == R_IN) {
			size_t left = in_len - consumed;
			ZN_ASSERT(left < STAGE_CAP);
			memcpy(d->stage, io->in, left);
			d->stage_len = left;
			consumed = in_len;
		}
		break;
	}
	uint64_t unread = 0;
	if (r == R_END) {
		/* Bytes taken past the end of the stream (read ahead into the bit buffer, kept in
		 * the stage, or read as garbage) go back to the caller where they came from this
		 * call; the rest only show in the stream's end position. */
		unread = (uint64_t)held_bytes(io) + d->stage_len + d->garbage_back;
		size_t give = (size_t)ZN_MIN(unread, (uint64_t)consumed);
		consumed -= give;
		unread -= give;
		d->stage_len = 0;
		io->bitbuf = 0;
		io->bitsleft = 0;
	}
	d->bitbuf = io->bitbuf;
	d->bitsleft = io->bitsleft;
	d->overrun = io->overrun;
	d->at_block_end = r == R_BLOCK;
	d->at_member_end = r == R_MEMBER;
	*in_used = consumed;
	d->in_total += consumed;
	if (r == R_ERR) {
		/* Not yet decoded: the bytes in the bit buffer and those waiting in the stage. */
		uint64_t ahead = (uint64_t)held_bytes(io) + d->stage_len;
		d->err_in = d->in_total > ahead ? d->in_total - ahead : 0;
	}
	if (r == R_END) {
		d->end_in = d->in_total - unread;
		if (d->format != ZN_FORMAT_GZIP)
			d->members = 1;
	}
	return r;
}

zn_result zn_inflate_stream(struct zn_inflater *d, const void *in, size_t in_len, int in_final,
                            size_t *in_used, const void **out, size_t *out_len, int *done)
{
	SAFETY_CHECK(d && (in || !in_len) && in_used && out && out_len && done, ZN_ERR_INVALID_ARG);
	*in_used = 0;
	*out = NULL;
	*out_len = 0;
	*done = 0;
	SAFETY_CHECK(!d->sym_mode, ZN_ERR_INVALID_ARG); /* zn_inflate_stream_symbols() first */
	if (!d->win) {
		RETURN_IF_ERROR(ensure_window(d));
		d->ck = d->win + d->wpos;
	}
	if (d->err)
		return d->err;
	if (d->st == ST_END) {
		*done = 1;
		return d->end_result;
	}
	/* The previous view has been consumed: slide when past half of the window. */
	if (d->wpos > WIN_HIST + WIN_OUT / 2) {
		size_t shift = d->wpos - WIN_HIST;
		memmove(d->win, d->win + shift, WIN_HIST);
		d->wpos = d->wflushed = WIN_HIST;
		d->base = d->base > shift ? d->base - shift : 0;
		d->ck = d->win + WIN_HIST;
	}
	struct io io = {
	        .out = d->win + d->wpos,
	        .out_end = d->win + WIN_SIZE,
	        .out_base = d->win + d->base,
	        .exact = 0,
	};
	int r = feed(d, &io, in, in_len, in_final, in_used, 0);
	size_t new_pos = (size_t)(io.out - d->win);
	/* Checksum what this call produced while it is in cache (and before a slide). */
	if (r != R_ERR && d->ck < io.out)
		update_check(d, io.out);
	d->base = (size_t)(io.out_base - d->win);
	*out = d->win + d->wflushed;
	*out_len = new_pos - d->wflushed;
	d->wpos = d->wflushed = new_pos;
	d->out_total += *out_len;
	if (r == R_ERR)
		return d->err;
	if (r == R_END) {
		*done = 1;
		return d->end_result;
	}
	return ZN_OK;
}

/* The last 32 Ki symbols are bytes: they become the byte window's history, and
 * zn_inflate_stream() goes on from the same bit with the fast loop. */
static void switch_to_bytes(struct zn_inflater *d)
{
	const uint16_t *s = d->swin + d->spos - WIN_HIST;
	for (size_t i = 0; i < WIN_HIST; i++) {
		ZN_ASSERT(s[i] < 256);
		d->win[i] = (uint8_t)s[i];
	}
	d->wpos = d->wflushed = WIN_HIST;
	d->base = 0;
	d->ck = d->win + WIN_HIST;
	d->sym_mode = 0;
}

zn_result zn_inflate_stream_symbols(struct zn_inflater *d, const void *in, size_t in_len,
                                    int in_final, size_t *in_used, const uint16_t **sym,
                                    size_t *sym_len, int *done)
{
	SAFETY_CHECK(d && (in || !in_len) && in_used && sym && sym_len && done, ZN_ERR_INVALID_ARG);
	*in_used = 0;
	*sym = NULL;
	*sym_len = 0;
	*done = 0;
	SAFETY_CHECK(d->sym_mode, ZN_ERR_INVALID_ARG); /* zn_inflate_stream() from here */
	if (d->err)
		return d->err;
	if (d->st == ST_END) {
		*done = 1;
		return d->end_result;
	}
	if (d->spos > WIN_HIST + SWIN_OUT / 2) {
		size_t shift = d->spos - WIN_HIST;
		memmove(d->swin, d->swin + shift, WIN_HIST * sizeof(*d->swin));
		d->spos = d->sflushed = WIN_HIST;
		d->smark = d->smark > shift ? d->smark - shift : 0;
	}
	/* Byte output stays empty at d->ck (a raw stream's end checksums nothing). */
	struct io io = {
	        .out = (uint8_t *)d->ck,
	        .out_end = (uint8_t *)d->ck,
	        .out_base = d->ck,
	        .exact = 0,
	        .sout = d->swin + d->spos,
	        .sout_end = d->swin + SWIN_SIZE,
	        .sout_base = d->swin,
	        .marker_end = d->swin + d->smark,
	};
	int r = feed(d, &io, in, in_len, in_final, in_used, 1);
	size_t new_pos = (size_t)(io.sout - d->swin);
	d->smark = (size_t)(io.marker_end - d->swin);
	*sym = d->swin + d->sflushed;
	*sym_len = new_pos - d->sflushed;
	d->spos = d->sflushed = new_pos;
	d->out_total += *sym_len;
	if (r == R_ERR)
		return d->err;
	if (r == R_END) {
		*done = 1;
		return d->end_result;
	}
	if (d->spos - d->smark >= WIN_HIST)
		switch_to_bytes(d);
	return ZN_OK;
}

int zn_inflate_stream_window_known(const struct zn_inflater *d)
{
	return !d->sym_mode;
}

int zn_inflate_stream_at_block_end(const struct zn_inflater *d)
{
	return d->at_block_end;
}

void zn_inflate_stream_position(const struct zn_inflater *d, uint64_t *in_pos, uint64_t *out_pos)
{
	if (in_pos)
		*in_pos = d->err ? d->err_in : d->st == ST_END ? d->end_in : d->in_total;
	if (out_pos)
		*out_pos = d->out_total;
}

uint64_t zn_inflate_stream_bit_position(const struct zn_inflater *d)
{
	if (d->st == ST_END)
		return 8 * d->end_in;
	/* Bytes taken from the caller, less those still staged, less the real (not end-of-input
	 * padding) bits waiting in the bit buffer. */
	uint32_t pending = d->bitsleft > 8 * d->overrun ? d->bitsleft - 8 * d->overrun : 0;
	return 8 * (d->in_total - d->stage_len) - pending;
}

uint64_t zn_inflate_stream_members(const struct zn_inflater *d)
{
	return d->members;
}

/* ---- hooks for the parallel gzip decoder (deflate_resume.h) -----------------------------------
 */

zn_result zn_inflate_stream_resume_gzip(struct zn_inflater *d, const struct zn_gzip_resume *r)
{
	SAFETY_CHECK(d && r && d->format == ZN_FORMAT_GZIP && r->first_bit < 8 &&
	                     r->window_len <= WIN_HIST && (r->window || !r->window_len),
	             ZN_ERR_INVALID_ARG);
	RETURN_IF_ERROR(ensure_window(d));
	reset_state(d);
	d->members = r->members;
	if (r->at_member_end) {
		/* As read_trailer leaves it: the next member, zero padding, the end or garbage. */
		d->st = ST_GZ_NEXT;
		return ZN_OK;
	}
	if (r->window_len)
		memcpy(d->win + WIN_HIST - r->window_len, r->window, r->window_len);
	d->base = WIN_HIST - r->window_len;
	d->check = r->crc;
	d->isize = r->isize;
	d->subsequent = r->subsequent;
	d->st = ST_BLOCK_HDR;
	skip_first_bits(d, r->first_bit);
	return ZN_OK;
}

void zn_inflate_stream_set_member_stops(struct zn_inflater *d, int on)
{
	if (d)
		d->member_stops = on != 0;
}

int zn_inflate_stream_at_member_end(const struct zn_inflater *d)
{
	return d->at_member_end;
}

int zn_inflate_stream_final_block(const struct zn_inflater *d)
{
	return d->last_block;
}

void zn_inflate_stream_gzip_state(const struct zn_inflater *d, uint32_t *crc, uint32_t *isize,
                                  uint64_t *members, int *subsequent)
{
	*crc = d->check;
	*isize = d->isize;
	*members = d->members;
	*subsequent = d->subsequent;
}

void zn_inflate_stream_history(const struct zn_inflater *d, const uint8_t **win, size_t *len)
{
	size_t n = d->win ? ZN_MIN((size_t)WIN_HIST, d->wpos - d->base) : 0;
	*win = d->win ? d->win + d->wpos - n : NULL;
	*len = n;
}

/* The end of a direct call: the result as zn_inflate_stream() gives it. */
static zn_result direct_result(struct zn_inflater *d, int r, int *done)
{
	if (r == R_ERR)
		return d->err;
	if (r == R_END) {
		*done = 1;
		return d->end_result;
	}
	return ZN_OK;
}

zn_result zn_inflate_direct(struct zn_inflater *d, const void *in, size_t in_len, int in_final,
                            size_t *in_used, uint8_t *buf, size_t *pos, size_t cap, int *done)
{
	SAFETY_CHECK(d && (in || !in_len) && in_used && buf && pos && *pos <= cap && done,
	             ZN_ERR_INVALID_ARG);
	*in_used = 0;
	*done = 0;
	SAFETY_CHECK(!d->sym_mode && d->format == ZN_FORMAT_RAW && d->win, ZN_ERR_INVALID_ARG);
	if (d->err)
		return d->err;
	if (d->st == ST_END) {
		*done = 1;
		return d->end_result;
	}
	struct io io = {.out = buf + *pos, .out_end = buf + cap, .out_base = buf, .exact = 0};
	d->ck = io.out; /* a raw stream only counts its output (read_trailer) */
	int r = feed(d, &io, in, in_len, in_final, in_used, 0);
	size_t n = (size_t)(io.out - (buf + *pos));
	*pos += n;
	d->out_total += n;
	d->ck = io.out;
	return direct_result(d, r, done);
}

zn_result zn_inflate_direct_symbols(struct zn_inflater *d, const void *in, size_t in_len,
                                    int in_final, size_t *in_used, uint16_t *sbuf, size_t *pos,
                                    size_t cap, int *done)
{
	SAFETY_CHECK(d && (in || !in_len) && in_used && sbuf && pos && *pos >= WIN_HIST &&
	                     *pos <= cap && done,
	             ZN_ERR_INVALID_ARG);
	*in_used = 0;
	*done = 0;
	SAFETY_CHECK(d->sym_mode, ZN_ERR_INVALID_ARG);
	if (d->err)
		return d->err;
	if (d->st == ST_END) {
		*done = 1;
		return d->end_result;
	}
	struct io io = {
	        .out = (uint8_t *)d->ck,
	        .out_end = (uint8_t *)d->ck,
	        .out_base = d->ck,
	        .exact = 0,
	        .sout = sbuf + *pos,
	        .sout_end = sbuf + cap,
	        .sout_base = sbuf,
	        .marker_end = sbuf + d->smark,
	};
	int r = feed(d, &io, in, in_len, in_final, in_used, 1);
	size_t n = (size_t)(io.sout - (sbuf + *pos));
	d->smark = (size_t)(io.marker_end - sbuf);
	*pos += n;
	d->out_total += n;
	if (r != R_ERR && r != R_END && *pos - d->smark >= WIN_HIST)
		d->sym_mode = 0; /* the caller narrows the history to bytes */
	return direct_result(d, r, done);
}

zn_result zn_inflate_direct_leave_symbols(struct zn_inflater *d)
{
	SAFETY_CHECK(d && d->sym_mode, ZN_ERR_INVALID_ARG);
	d->sym_mode = 0;
	return ZN_OK;
}
