/* SPDX-License-Identifier: MIT */
/* test_inflate_4gib.c - streaming a gzip member of more than 4 GiB: 64-bit counters, ISIZE wrap. */
/*
 * The member is cheap to make and to decode: one literal 'a', then the same 52011-byte fixed
 * Huffman block repeated 521 times, each block holding 32006 matches of length 258 at distance 1
 * (13 bits each), so about 27 MB of input expand to 4302182509 bytes of 'a', 7.2 MB more than
 * 2^32. The trailer's CRC-32 comes from zn_crc32_combine() and its ISIZE is the length mod 2^32,
 * as RFC 1952 says. The decoder must finish with ZN_OK, report the 64-bit totals through
 * zn_inflate_stream_position(), and produce nothing but 'a'. Takes a few seconds.
 */
#include <string.h>

#include "inflate_test_streams.h"
#include "test_util.h"

enum {
	MATCHES = 32006, /* == 6 mod 8: 3 + 13 * MATCHES + 7 bits is a whole number of bytes */
	BLOCKS = 521,
};

static struct hcode FL, FD;

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_4gib");
	fixed_codes(&FL, &FD);
	const uint64_t per_block = 258ull * MATCHES;
	const uint64_t total = 1 + per_block * BLOCKS;
	CHECK(total > (1ull << 32));

	/* Header, the literal, an empty stored block to reach a byte boundary. */
	struct bs head = {0}, unit = {0}, tail = {0};
	put_gzip_header(&head, 0, 0);
	put_fixed_header(&head, 0);
	hcode_put(&head, &FL, 'a');
	hcode_put(&head, &FL, 256);
	put_stored(&head, 0, NULL, 0);
	/* The repeated block. */
	put_fixed_header(&unit, 0);
	for (int i = 0; i < MATCHES; i++)
		put_match(&unit, &FL, &FD, 258, 1, 0);
	hcode_put(&unit, &FL, 256);
	CHECK(unit.n == 0); /* ends on a byte boundary, so copies can follow each other */
	/* The final (empty, stored) block and the trailer. */
	put_stored(&tail, 1, NULL, 0);
	uint8_t *as = malloc(per_block);
	memset(as, 'a', per_block);
	uint32_t crc_block = zn_crc32(0, as, per_block), crc = zn_crc32(0, "a", 1);
	free(as);
	for (int i = 0; i < BLOCKS; i++)
		crc = zn_crc32_combine(crc, crc_block, per_block);
	bs_le32(&tail, crc);
	bs_le32(&tail, (uint32_t)total);

	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_GZIP));
	CHECK_OK(zn_inflate_stream_reset(d));
	static uint8_t ref[1 << 16];
	memset(ref, 'a', sizeof(ref));
	uint64_t out_total = 0, in_total = 0;
	int done = 0;
	for (int piece = 0; piece < BLOCKS + 2; piece++) {
		const struct bs *b = piece == 0 ? &head : piece == BLOCKS + 1 ? &tail : &unit;
		int final = piece == BLOCKS + 1;
		size_t pos = 0;
		while (pos < b->len || (final && !done)) {
			size_t used, olen;
			const void *o;
			CHECK_OK(zn_inflate_stream(d, b->buf + pos, b->len - pos, final, &used, &o,
			                           &olen, &done));
			pos += used;
			for (size_t k = 0; k < olen; k += sizeof(ref)) {
				size_t n = olen - k < sizeof(ref) ? olen - k : sizeof(ref);
				if (memcmp((const uint8_t *)o + k, ref, n)) {
					fprintf(stderr, "output at %llu is not all 'a'\n",
					        (unsigned long long)(out_total + k));
					CHECK(0);
				}
			}
			out_total += olen;
			CHECK(used || olen || done);
		}
		in_total += b->len;
	}
	CHECK(done);
	CHECK_EQ_U64(out_total, total);
	uint64_t in_pos, out_pos;
	zn_inflate_stream_position(d, &in_pos, &out_pos);
	CHECK_EQ_U64(out_pos, total);
	CHECK_EQ_U64(in_pos, in_total);
	CHECK_EQ_U64(zn_inflate_stream_members(d), 1);
	printf("decoded %llu bytes from %llu\n", (unsigned long long)out_total,
	       (unsigned long long)in_total);
	zn_inflater_free(d);
	bs_free(&head);
	bs_free(&unit);
	bs_free(&tail);
	return 0;
}
