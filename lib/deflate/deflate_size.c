/* SPDX-License-Identifier: MIT */
/* deflate_size.c - zn_inflate_size: the decoded size of a whole stream, for a caller that must
 * size the output buffer of zn_inflate() before it decodes (the gzip trailer's ISIZE gives only
 * the last member's size, modulo 2^32). */
#include "deflate_internal.h"

zn_result zn_inflate_size(struct zn_inflater *d, const void *in, size_t in_len, uint64_t *size)
{
	if (!d || (!in && in_len) || !size)
		return ZN_ERR_INVALID_ARG;
	*size = 0;
	RETURN_IF_ERROR(zn_inflate_stream_reset(d));
	/* Through the streaming interface: its window is the object's own, the output is counted
	 * and dropped. */
	const uint8_t *p = in;
	size_t left = in_len;
	zn_result r = ZN_OK;
	int done = 0;
	for (unsigned idle = 0; !done && r == ZN_OK;) {
		size_t used = 0, n = 0;
		const void *out;
		r = zn_inflate_stream(d, p, left, 1, &used, &out, &n, &done);
		p += used;
		left -= used;
		/* Each call makes progress (zn_inflate_stream); should one not, this ends rather
		 * than spins. */
		idle = used || n ? 0 : idle + 1;
		if (idle > 2 && !done && r == ZN_OK)
			r = ZN_ERR_TRUNCATED;
	}
	zn_inflate_stream_position(d, NULL, size);
	return r;
}
