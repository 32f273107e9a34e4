/* SPDX-License-Identifier: MIT */
/* deflate_fastloop.h - template of the Huffman-block fast loop, included once per ISA variant. */
/*
 * No include guard: the including file defines
 *   FL_NAME        the function's name
 *   FL_ATTR        its attributes (__attribute__((target(...))) or nothing)
 *   FL_COPY(out, offset, length)   a match copy that may write up to 64 bytes past
 *                  out + length - 1 (FASTLOOP_OUT_MARGIN allows for it) and reads nothing at
 *                  or after out + length except bytes it has just written
 *   FL_EXTRA(bits, entry)          the extra bits of a length/distance entry: the low
 *                  (entry & 0xff) bits of `bits`, shifted right by the codeword length
 * and includes deflate_internal.h first. For the symbol variant (unknown window, 16-bit output
 * with markers; see deflate_markers.c) it also defines
 *   FL_SYMBOLS     the context is a struct zn_sym_ctx, output elements are uint16_t, and
 *                  FL_COPY(out, offset, length) may move the local `marker_end` (one past the
 *                  newest marker written), which is saved back to the context
 *   FL_PUT_LITS(out, lit)          store the up to three literals in bits 8..31 of `lit` as
 *                  symbols (it may write up to four)
 * Without FL_SYMBOLS the byte variants compile exactly as before the symbol variant existed.
 *
 * Bit budget of one iteration. A refill leaves 56..63 bits. A literal/length codeword with its
 * extra bits takes at most 15+5 bits and a distance at most 15+13, so a match needs at most 48:
 * one refill before it suffices (an iteration refills at its start and, when literals lead
 * into a match, once more between them). A refill loads a whole 64-bit word, so after consuming k
 * bits the buffer still holds 64-k real bits: after the 48 of a match, 16 remain, enough to
 * look up the next literal/length entry (11 bits) before the next refill -- the load of the
 * next entry overlaps the match copy instead of following it.
 *
 * `bitsleft` carries garbage above bit 7: consuming subtracts the whole entry (only its low byte
 * counts), which saves a zero-extension per symbol; only bits 0..5 are ever read.
 */

#ifdef FL_SYMBOLS
#define FL_CTX   struct zn_sym_ctx
#define FL_OUT_T uint16_t
#else
#define FL_CTX                struct zn_fast_ctx
#define FL_OUT_T              uint8_t
#define FL_PUT_LITS(out, lit) zn_put_le32(out, (lit) >> 8)
#endif

static FL_ATTR int FL_NAME(FL_CTX *c)
{
	const uint8_t *in = c->in;
	const uint8_t *const in_limit = c->in_limit;
	FL_OUT_T *out = c->out;
	FL_OUT_T *const out_limit = c->out_limit;
	const FL_OUT_T *const out_base = c->out_base;
#ifdef FL_SYMBOLS
	const uint16_t *marker_end = c->marker_end;
#endif
	const uint32_t *const litlen = c->litlen;
	const uint32_t *const dist = c->dist;
	uint64_t bitbuf = c->bitbuf;
	uint32_t bitsleft = c->bitsleft;
	uint32_t entry, dentry, length, offset;
	uint64_t saved;
	int ret = FL_LIMIT;

	/* Branchless refill: OR in the next 8 bytes above the pending bits and advance by the
	 * whole bytes that fit; bitsleft becomes 56..63. */
#define REFILL()                                                                                   \
	do {                                                                                       \
		bitbuf |= zn_get_le64(in) << (bitsleft & 63);                                      \
		in += 7 - ((bitsleft >> 3) & 7);                                                   \
		bitsleft |= 56;                                                                    \
	} while (0)
#define CONSUME(e)                                                                                 \
	do {                                                                                       \
		bitbuf >>= (e)&63;                                                                 \
		bitsleft -= (e);                                                                   \
	} while (0)
#define LITLEN_MASK ((1u << LITLEN_TABLEBITS) - 1)
#define DIST_MASK   ((1u << DIST_TABLEBITS) - 1)
	/* One literal entry: consume it, look up the next entry, store the entry's one to three
	 * bytes as one 32-bit word (the output slack absorbs the spare bytes; no branch on the
	 * count). The next lookup comes before the store. */
#define LITERAL_STEP()                                                                             \
	do {                                                                                       \
		uint32_t lit_ = entry;                                                             \
		CONSUME(entry);                                                                    \
		entry = litlen[bitbuf & LITLEN_MASK];                                              \
		FL_PUT_LITS(out, lit_);                                                            \
		out += (lit_ >> 6) & 3;                                                            \
	} while (0)
	/* Four literal steps and the next lookup must fit in the 64 bits one refill loads. */
	_Static_assert(5 * LITLEN_TABLEBITS <= 64,
	               "four literal steps need LITLEN_TABLEBITS <= 12");

	if (in >= in_limit || out >= out_limit)
		return FL_LIMIT;
	REFILL();
	entry = litlen[bitbuf & LITLEN_MASK];
	for (;;) {
		if (entry & HD_LIT_MASK) {
			/* Literals: up to four root entries per refill (4 x 12 bits, leaving the
			 * 12 the next lookup needs of the 64 a refill loads). A fourth step
			 * measured +0.8% on the geometric mean of bench_inflate (text and tar
			 * +2-3%, base64 -1-2%). */
			LITERAL_STEP();
			if (entry & HD_LIT_MASK) {
				LITERAL_STEP();
				if (entry & HD_LIT_MASK) {
					LITERAL_STEP();
					if (entry & HD_LIT_MASK) {
						LITERAL_STEP();
						goto next;
					}
				}
			}
			/* Fewer than four steps: the run ended at a length or an exceptional
			 * entry. A length goes straight on to its match after a refill, in the
			 * same iteration (the limits and the margins allow for it: see
			 * FASTLOOP_OUT_MARGIN and fast_in_limit); int64 columns and FASTQ end
			 * most literal runs this way. */
			if (unlikely(entry & HD_EXC))
				goto next;
#ifdef FL_SYMBOLS
			/* Symbol mode promises to stop within one match of out_limit (where the
			 * window becomes known): the literals may have reached it. */
			if (out >= out_limit)
				goto next;
#endif
			REFILL();
			goto match;
		}
		if (unlikely(entry & HD_EXC)) {
			if (entry & HD_EOB) {
				CONSUME(entry);
				ret = FL_EOB;
				goto out;
			}
			if (!(entry & HD_SUBTABLE))
				goto bad_symbol;
			CONSUME(entry);
			entry = litlen[(entry >> 16) +
			               (bitbuf & ((1u << ((entry >> 8) & 15)) - 1))];
			if (entry & HD_LIT_MASK) {
				CONSUME(entry);
				*out++ = (FL_OUT_T)(uint8_t)(entry >> 8);
				entry = litlen[bitbuf & LITLEN_MASK];
				goto next;
			}
			if (entry & HD_EXC) {
				if (!(entry & HD_EOB))
					goto bad_symbol;
				CONSUME(entry);
				ret = FL_EOB;
				goto out;
			}
		}
		/* A match: length (with extra bits), then distance. */
	match:
		saved = bitbuf;
		CONSUME(entry);
		length = (entry >> 16) + (uint32_t)FL_EXTRA(saved, entry);
		dentry = dist[bitbuf & DIST_MASK];
		if (unlikely(dentry & HD_EXC)) {
			if (!(dentry & HD_SUBTABLE))
				goto bad_symbol;
			CONSUME(dentry);
			dentry = dist[(dentry >> 16) +
			              (bitbuf & ((1u << ((dentry >> 8) & 15)) - 1))];
			if (dentry & HD_EXC)
				goto bad_symbol;
		}
		saved = bitbuf;
		CONSUME(dentry);
		offset = (dentry >> 16) + (uint32_t)FL_EXTRA(saved, dentry);
		if (unlikely(offset > (size_t)(out - out_base)))
			goto bad_distance;
		entry = litlen[bitbuf & LITLEN_MASK];
		FL_COPY(out, offset, length);
		out += length;
	next:
		if (unlikely(in >= in_limit || out >= out_limit))
			break;
		REFILL();
	}
out:
	c->in = in;
	c->bitbuf = bitbuf;
	c->bitsleft = bitsleft; /* bits 6.. are garbage: the caller masks */
	c->out = out;
#ifdef FL_SYMBOLS
	c->marker_end = marker_end;
#endif
	return ret;
bad_symbol:
	c->err = ZN_ERR_BAD_SYMBOL;
	ret = FL_ERROR;
	goto out;
bad_distance:
	c->err = ZN_ERR_BAD_DISTANCE;
	ret = FL_ERROR;
	goto out;
#undef REFILL
#undef CONSUME
#undef LITERAL_STEP
#undef LITLEN_MASK
#undef DIST_MASK
}

#undef FL_NAME
#undef FL_ATTR
#undef FL_COPY
#undef FL_EXTRA
#undef FL_SYMBOLS
#undef FL_PUT_LITS
#undef FL_CTX
#undef FL_OUT_T
