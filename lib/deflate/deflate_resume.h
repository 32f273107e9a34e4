/* SPDX-License-Identifier: MIT */
/* deflate_resume.h - internal hooks of the DEFLATE decoder for the parallel gzip decoder. */
#ifndef ZN_DEFLATE_RESUME_H
#define ZN_DEFLATE_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "znippy.h"

/*
 * lib/gzip decodes pieces of one gzip stream on several threads and stitches them together in
 * order. Where a piece cannot be used (damage, a false start found by its block finder, a piece
 * cut short), the stitcher decodes on itself from where the stream stands, with an ordinary
 * FORMAT_GZIP decoder put into exactly the state a decoder run from the start of the stream
 * would be in there, so that it produces the same output and the same errors (at the same
 * positions, counted from where it resumed) as `znippy gunzip -T1`. These are the hooks for
 * that, and for decoding straight into a caller's buffer, which spares the copy out of the
 * object's window. None of them is public API.
 */

/* Where a gzip stream is resumed. */
struct zn_gzip_resume {
	int at_member_end;   /* 1: just after a member's trailer (the byte the next member, zero
	                        padding or the end may start at); 0: at a block boundary inside a
	                        member */
	unsigned first_bit;  /* at_member_end 0: the block starts at this bit (0..7) of the first
	                        input byte passed */
	const void *window;  /* at_member_end 0: the member's last window_len (<= 32768) bytes */
	size_t window_len;   /* (fewer only when the member has produced fewer) */
	uint32_t crc, isize; /* at_member_end 0: the member's CRC-32 and length so far */
	uint64_t members;    /* members checked before this point */
	int subsequent;      /* at_member_end 0: the member is not the stream's first */
};

/* Put a ZN_FORMAT_GZIP object into that state; the stream's positions then count from the first
 * byte passed after this call. ZN_ERR_INVALID_ARG for another format or bad arguments,
 * ZN_ERR_NOMEM. */
zn_result zn_inflate_stream_resume_gzip(struct zn_inflater *d, const struct zn_gzip_resume *r);

/* Member stops: zn_inflate_stream() also returns (ZN_OK, *done 0) right after each gzip trailer
 * that checked out; zn_inflate_stream_at_member_end() is then 1, and the bit position is the
 * byte after the trailer. Kept across resets, as block stops are. */
void zn_inflate_stream_set_member_stops(struct zn_inflater *d, int on);
int zn_inflate_stream_at_member_end(const struct zn_inflater *d);

/* 1 when the block that ended last (or is being decoded) is the stream's or member's final
 * block: at a block stop, what follows is the trailer or the end, not a block. */
int zn_inflate_stream_final_block(const struct zn_inflater *d);

/* The member state of a gzip stream between calls: CRC-32 and length of the member so far
 * (everything handed out), members checked, whether the member is not the first; and the
 * member's history, its last *len (<= 32768) bytes at *win (valid until the next call). */
void zn_inflate_stream_gzip_state(const struct zn_inflater *d, uint32_t *crc, uint32_t *isize,
                                  uint64_t *members, int *subsequent);
void zn_inflate_stream_history(const struct zn_inflater *d, const uint8_t **win, size_t *len);

/*
 * Direct output, for raw streams (zn_inflate_stream_start_raw/_unknown): decoded bytes go to
 * buf[*pos..cap) and *pos moves past them; buf[0..*pos) is the history matches may reach (the
 * caller keeps the last 32 KiB of it or all of it; a match reaching before buf[0] is
 * ZN_ERR_BAD_DISTANCE). Otherwise as zn_inflate_stream(), block stops included; each call needs
 * cap - *pos >= 1024 to make progress. The buffer may move between calls (indices are kept).
 *
 * zn_inflate_direct_symbols() is the same for symbol mode: sbuf[0..32768) must hold the 32 Ki
 * markers (ZN_INFLATE_MARKER + k) and the first call *pos = 32768. When the last 32 Ki symbols
 * hold no marker the object leaves symbol mode (zn_inflate_stream_window_known() becomes 1)
 * and the caller goes on with zn_inflate_direct(), the history narrowed to bytes. Neither may
 * be mixed with the other streaming calls within one stream.
 */
zn_result zn_inflate_direct(struct zn_inflater *d, const void *in, size_t in_len, int in_final,
                            size_t *in_used, uint8_t *buf, size_t *pos, size_t cap, int *done);
zn_result zn_inflate_direct_symbols(struct zn_inflater *d, const void *in, size_t in_len,
                                    int in_final, size_t *in_used, uint16_t *sbuf, size_t *pos,
                                    size_t cap, int *done);

/* Leave symbol mode before the window became known by itself: the caller has resolved the
 * symbols (it learned the window) and goes on with zn_inflate_direct(), the resolved history in
 * its byte buffer. ZN_ERR_INVALID_ARG when not in symbol mode. */
zn_result zn_inflate_direct_leave_symbols(struct zn_inflater *d);

#endif
