/* SPDX-License-Identifier: MIT */
/* bzip2_symbols.h - template of the symbol loop (Huffman, move-to-front, zero runs), included
 * once per ISA variant. */
/*
 * No include guard: the including file defines
 *   SYM_NAME          the function's name
 *   SYM_ATTR          its attributes (__attribute__((target(...))) or nothing)
 *   SYM_MTF(list, j)  move list[j] (1 <= j <= 255) to the front of the 256-byte list and
 *                     evaluate to it
 *   SYM_FILL(out, b, n)   write n >= 1 bytes b at out; may write up to 32 bytes past out + n
 * and includes bzip2_internal.h first.
 *
 * Bit budget. A refill leaves 56..63 bits in the buffer and a codeword takes at most 20, so one
 * refill serves two symbols: a group of 50 is 25 steps of refill, symbol, symbol, with no other
 * check on the input (in_limit keeps 125 + 8 bytes of it ahead at a group's start).
 *
 * The work per symbol, in the order of how often it happens in bzip2 -9 files of text and tar
 * (measured over the benchmark's tar: 46% run digits, 39% indices 1..15, 15% larger):
 *   RUNA/RUNB   a digit of a zero run: two adds, nothing written (the run is written at once
 *               when it ends, with vector stores);
 *   index j     move list[j] to the front (SYM_MTF: the variants keep the list as 16 rows of 16
 *               bytes and move whole rows, so j costs j / 16 + 1 vector steps, never a loop of
 *               j bytes), write it, count it for the inverse transform;
 *   end         the last symbol of the block.
 * A run's length is checked once, when it is written; its weight is capped at 2^20 digits
 * first, as libbz2 caps it, so that the sum cannot overflow.
 */

static SYM_ATTR int SYM_NAME(struct bz2_sym_ctx *c)
{
	const uint8_t *in = c->in;
	const uint8_t *const in_limit = c->in_limit;
	uint64_t bitbuf = c->bitbuf;
	uint32_t bitcount = c->bitcount;
	const struct bz2_tables *const t = c->t;
	uint32_t group = c->group;
	const uint32_t eob = c->eob;
	uint8_t *const mtf = c->mtf;
	uint8_t *out = c->out;
	uint8_t *const out_end = c->out_end;
	uint32_t *const count = c->count;
	uint32_t run = c->run, run_weight = c->run_weight;
	int ret = BZ2_SYM_LIMIT;

#define REFILL()                                                                                   \
	do {                                                                                       \
		bitbuf |= zn_get_be64(in) >> bitcount;                                             \
		in += (63 - bitcount) >> 3;                                                        \
		bitcount |= 56;                                                                    \
	} while (0)
#define FAIL()                                                                                     \
	do {                                                                                       \
		c->err = ZN_ERR_CORRUPT;                                                           \
		ret = BZ2_SYM_ERROR;                                                               \
		goto out;                                                                          \
	} while (0)
	/* One symbol: a table entry, or bit length after bit length for a long codeword. */
#define DECODE(sym)                                                                                \
	do {                                                                                       \
		uint32_t e_ = fast[bitbuf >> (64 - HUFF_BITS)], len_ = e_ & 31;                    \
		sym = e_ >> 5;                                                                     \
		if (unlikely(!len_)) {                                                             \
			for (len_ = HUFF_BITS + 1;; len_++) {                                      \
				if (len_ > slow->maxlen)                                           \
					FAIL();                                                    \
				uint32_t code_ = (uint32_t)(bitbuf >> (64 - len_));                \
				if (code_ < slow->limit[len_]) {                                   \
					sym = slow->perm[(int32_t)code_ + slow->off[len_]];        \
					break;                                                     \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		bitbuf <<= len_;                                                                   \
		bitcount -= len_;                                                                  \
	} while (0)
	/* What a symbol does. */
#define PROCESS(sym)                                                                               \
	do {                                                                                       \
		if (sym < 2) {                                                                     \
			if (unlikely(run_weight > (1u << 20)))                                     \
				FAIL();                                                            \
			run += run_weight << sym;                                                  \
			run_weight <<= 1;                                                          \
			break;                                                                     \
		}                                                                                  \
		if (run) {                                                                         \
			uint8_t b_ = mtf[0];                                                       \
			if (unlikely(run > (size_t)(out_end - out)))                               \
				FAIL();                                                            \
			SYM_FILL(out, b_, run);                                                    \
			count[b_] += run;                                                          \
			out += run;                                                                \
			run = 0;                                                                   \
			run_weight = 1;                                                            \
		}                                                                                  \
		if (unlikely(sym == eob)) {                                                        \
			ret = BZ2_SYM_EOB;                                                         \
			goto out;                                                                  \
		}                                                                                  \
		if (unlikely(out == out_end))                                                      \
			FAIL();                                                                    \
		uint8_t b_ = SYM_MTF(mtf, sym - 1);                                                \
		*out++ = b_;                                                                       \
		count[b_]++;                                                                       \
	} while (0)

	while (in <= in_limit) {
		if (unlikely(group >= t->nselectors))
			FAIL();
		unsigned sel = t->selectors[group++];
		const uint16_t *const fast = t->fast[sel];
		const struct bz2_slow *const slow = &t->slow[sel];
		for (int k = 0; k < BZ2_GROUP_SIZE / 2; k++) {
			uint32_t sym;
			REFILL();
			DECODE(sym);
			PROCESS(sym);
			DECODE(sym);
			PROCESS(sym);
		}
	}
out:
	c->in = in;
	c->bitbuf = bitbuf;
	c->bitcount = bitcount;
	c->group = group;
	c->out = out;
	c->run = run;
	c->run_weight = run_weight;
	return ret;
#undef REFILL
#undef FAIL
#undef DECODE
#undef PROCESS
}

#undef SYM_NAME
#undef SYM_ATTR
#undef SYM_MTF
#undef SYM_FILL
