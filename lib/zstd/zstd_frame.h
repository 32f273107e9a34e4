/* SPDX-License-Identifier: MIT */
/* zstd_frame.h - one zstd frame decoded into the caller's buffer in steps of whole zstd blocks:
 * for a reader that wants a prefix of a frame now and perhaps more of it later, with no window
 * of its own (the archive's block cache). */
#ifndef ZN_ZSTD_FRAME_H
#define ZN_ZSTD_FRAME_H

#include "znippy.h"

/* Begin the zstd frame (not a skippable one) at [in, in + in_len) into out: out_cap bytes, which
 * the frame's content size, when it gives one, must fit. out_writable (>= out_cap) is how much
 * memory at out may be written: the decoder's copies run faster while they have 64 bytes to
 * spare. in and out must stay until the frame is done. ZN_ERR_BAD_HEADER, _TRUNCATED, _CORRUPT,
 * _DICTIONARY, _OUTPUT_FULL. */
zn_result zn_zstd_frame_begin(struct zn_zstd_decoder *d, const void *in, size_t in_len, void *out,
                              size_t out_cap, size_t out_writable);
/* Decode on until at least `need` bytes are out (the end of the zstd block that passes need) or
 * the frame ends: *out_len is the output so far, *done once the frame is whole and checked
 * (its checksum and content size, and nothing after it: ZN_ERR_TRAILING_GARBAGE). Errors as
 * zn_zstd_decompress(); after one, begin again. */
zn_result zn_zstd_frame_step(struct zn_zstd_decoder *d, size_t need, size_t *out_len, int *done);

#endif
