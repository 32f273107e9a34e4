/* SPDX-License-Identifier: MIT */
/* bzip2_scan.c - finding block magics at any bit offset: the portable scanner, and its check. */
#include "bzip2/bzip2_internal.h"

/*
 * The 48-bit block magic may start at any bit. Started at bit k (0..7, from the most significant)
 * of byte i, it fills bytes i+1 .. i+5 whole for every k, so bytes i+1 and i+2 together take one
 * of 8 values (the magic shifted by k; none shifted by 1..7 bits matches itself, so one byte
 * starts at most one magic). The scanners look for those pairs and check the whole 48 bits at
 * each: a random pair passes 1 time in 8,192.
 */

/* Whether the magic starts at bit k of byte i (reading nothing at or past avail). */
static int magic_at(const uint8_t *in, size_t i, unsigned k, size_t avail)
{
	if (8 * (uint64_t)i + k + 48 > 8 * (uint64_t)avail)
		return 0;
	uint64_t w;
	if (i + 8 <= avail) {
		w = zn_get_be64(in + i);
	} else {
		w = 0;
		for (size_t j = 0; j < 8; j++)
			w = w << 8 | (i + j < avail ? in[i + j] : 0);
	}
	return ((w << k) >> 16) == BZ2_BLOCK_MAGIC;
}

/* Candidates at bytes [from, to): check the shifts whose pair matches at each byte. */
size_t zn_bz2_scan_check(const uint8_t *in, size_t i, size_t avail, unsigned shifts, uint64_t *pos)
{
	for (unsigned k = 0; k < 8; k++)
		if ((shifts >> k & 1) && magic_at(in, i, k, avail)) {
			*pos = 8 * (uint64_t)i + k;
			return 1;
		}
	return 0;
}

/* The pair of bytes i+1, i+2 for the magic at shift k. */
#define PAIR(k) ((unsigned)((BZ2_BLOCK_MAGIC << (16 - (k))) >> 40) & 0xffff)

size_t zn_bz2_scan_generic(const uint8_t *in, size_t len, size_t avail, uint64_t *pos, size_t cap,
                           size_t *resume)
{
	uint8_t first[256] = {0}; /* the shifts k whose pair starts with this byte */
	for (unsigned k = 0; k < 8; k++)
		first[PAIR(k) >> 8] |= (uint8_t)(1u << k);
	size_t n = 0, i = 0;
	for (; i < len && n < cap; i++) {
		if (i + 2 >= avail)
			break;
		unsigned m = first[in[i + 1]];
		if (likely(!m))
			continue;
		unsigned shifts = 0, pair = (unsigned)in[i + 1] << 8 | in[i + 2];
		for (unsigned k = 0; k < 8; k++)
			if ((m >> k & 1) && PAIR(k) == pair)
				shifts |= 1u << k;
		if (shifts)
			n += zn_bz2_scan_check(in, i, avail, shifts, pos + n);
	}
	*resume = n == cap ? i : len;
	return n;
}
