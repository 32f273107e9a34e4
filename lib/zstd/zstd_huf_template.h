/* SPDX-License-Identifier: MIT */
/* zstd_huf_template.h - template of the 4-stream Huffman fast loops, included once per ISA
 * variant. */
/*
 * No include guard: the including file defines ZH_NAME (a zs_huf4_fn) and ZH_ATTR, and ZH_TWO
 * as 1 for the loop on the two-symbol table (c->dt2), and includes zstd_internal.h first.
 *
 * The four streams advance in lockstep, five lookups each per iteration, each from its own
 * 64-bit container, so the four dependency chains (lookup, shift) overlap. A container holds
 * the bits still to read at its top and a marker bit below them: it is loaded as the 8 bytes at
 * `ip` with bit 0 set, then shifted left by the bits already consumed; every symbol shifts it
 * further. The marker's position (count of trailing zeros) is then the number of bits consumed
 * since the load, so a lookup costs a load, a store and a shift, with no counter, and the
 * reload is branchless: back by the whole bytes consumed, load, set the marker, shift by the
 * rest. A lookup consumes at most 11 bits (the longest codeword, or two that fit in the index),
 * so at most 7 + 5 * 11 = 62 bits are consumed between loads: the marker never leaves the
 * container and bit 0, which it overwrote, is never read as data.
 *
 * A two-symbol lookup stores a 16-bit word, both symbols or one and a byte the next store
 * overwrites, and advances by the count. A reload moves `ip` back by at most 7 bytes, and an
 * iteration writes at most 5 bytes per stream (10 with two-symbol lookups), so the loop runs
 * unchecked for as many iterations as the stream with the least room allows, then computes
 * that again until some stream is within 7 bytes of its start or 5 (10) of its end.
 */

#ifndef ZH_TWO
#define ZH_TWO 0
#endif

static ZH_ATTR void ZH_NAME(struct zs_huf4_ctx *c)
{
#if ZH_TWO
	const uint32_t *const dt2 = c->dt2;
#else
	const uint16_t *const dt = c->dt;
#endif
	enum { OUT = ZH_TWO ? 10 : 5 }; /* bytes an iteration may write per stream */
	const unsigned sh = 64 - ZS_HUF_LOG_MAX;
	const uint8_t *ip0 = c->ip[0], *ip1 = c->ip[1], *ip2 = c->ip[2], *ip3 = c->ip[3];
	uint8_t *op0 = c->op[0], *op1 = c->op[1], *op2 = c->op[2], *op3 = c->op[3];
	uint64_t b0 = (zn_get_le64(ip0) | 1) << c->consumed[0];
	uint64_t b1 = (zn_get_le64(ip1) | 1) << c->consumed[1];
	uint64_t b2 = (zn_get_le64(ip2) | 1) << c->consumed[2];
	uint64_t b3 = (zn_get_le64(ip3) | 1) << c->consumed[3];

#if ZH_TWO
#define ZH_SYM(k)                                                                                  \
	do {                                                                                       \
		uint32_t e_ = dt2[b##k >> sh];                                                     \
		zn_put_le16(op##k, (uint16_t)e_);                                                  \
		op##k += e_ >> 24;                                                                 \
		b##k <<= (e_ >> 16) & 63;                                                          \
	} while (0)
#else
#define ZH_SYM(k)                                                                                  \
	do {                                                                                       \
		uint16_t e_ = dt[b##k >> sh];                                                      \
		*op##k++ = (uint8_t)(e_ >> 8);                                                     \
		b##k <<= e_ & 63;                                                                  \
	} while (0)
#endif
#define ZH_RELOAD(k)                                                                               \
	do {                                                                                       \
		unsigned z_ = (unsigned)__builtin_ctzll(b##k);                                     \
		ip##k -= z_ >> 3;                                                                  \
		b##k = (zn_get_le64(ip##k) | 1) << (z_ & 7);                                       \
	} while (0)
#define ZH_ROUND()                                                                                 \
	do {                                                                                       \
		ZH_SYM(0);                                                                         \
		ZH_SYM(1);                                                                         \
		ZH_SYM(2);                                                                         \
		ZH_SYM(3);                                                                         \
	} while (0)
	for (;;) {
		size_t n = (size_t)(ip0 - c->start[0]) / 7;
		n = ZN_MIN(n, (size_t)(ip1 - c->start[1]) / 7);
		n = ZN_MIN(n, (size_t)(ip2 - c->start[2]) / 7);
		n = ZN_MIN(n, (size_t)(ip3 - c->start[3]) / 7);
		n = ZN_MIN(n, (size_t)(c->oend[0] - op0) / OUT);
		n = ZN_MIN(n, (size_t)(c->oend[1] - op1) / OUT);
		n = ZN_MIN(n, (size_t)(c->oend[2] - op2) / OUT);
		n = ZN_MIN(n, (size_t)(c->oend[3] - op3) / OUT);
		if (n == 0)
			break;
		do {
			ZH_ROUND();
			ZH_ROUND();
			ZH_ROUND();
			ZH_ROUND();
			ZH_ROUND();
			ZH_RELOAD(0);
			ZH_RELOAD(1);
			ZH_RELOAD(2);
			ZH_RELOAD(3);
		} while (--n);
	}
#undef ZH_SYM
#undef ZH_RELOAD
#undef ZH_ROUND
	c->ip[0] = ip0, c->ip[1] = ip1, c->ip[2] = ip2, c->ip[3] = ip3;
	c->op[0] = op0, c->op[1] = op1, c->op[2] = op2, c->op[3] = op3;
	c->consumed[0] = (uint32_t)__builtin_ctzll(b0);
	c->consumed[1] = (uint32_t)__builtin_ctzll(b1);
	c->consumed[2] = (uint32_t)__builtin_ctzll(b2);
	c->consumed[3] = (uint32_t)__builtin_ctzll(b3);
}

#undef ZH_NAME
#undef ZH_ATTR
#undef ZH_TWO
