/* SPDX-License-Identifier: MIT */
/* zstd_seq_template.h - template of the sequence loop (decode and execute), included once per
 * ISA variant. */
/*
 * No include guard: the including file defines
 *   ZS_NAME                 the function's name (a zs_seq_fn)
 *   ZS_ATTR                 its attributes (__attribute__((target(...))) or nothing)
 *   ZS_COPY(op, off, len)   a match copy (the contract of lib/x86/match_copy_x86.h: it may
 *                           write up to ZS_WILD bytes past op + len)
 *   ZS_WILDCOPY(d, s, n)    copy n >= 0 literal bytes from s to d in whole vectors; it may read
 *                           and write up to 32 bytes past the n
 *   ZS_BZHI(x, n)           the low n (0..32) bits of the 64-bit x
 * and includes zstd_internal.h first.
 *
 * Decoding. A table entry is loaded as one 64-bit word (struct zs_seq_entry: next state base,
 * state bits, extra bits, value base). The six fields a sequence reads -- the offset's, match
 * length's and literal length's extra bits, then the literal length's, match length's and
 * offset's state bits -- are consecutive in the stream, so one read takes all of them as one
 * value, which shifts and masks split: after a reload at least 57 bits are ready (see struct
 * zs_seq_ctx for the reload, which needs no check of the stream's length), and the six
 * add up to at most 57 whenever the extra bits do not pass 31 (the state bits are at most
 * 9 + 9 + 8). Only long offsets (codes over 22 or so) with long lengths pass it; they, and the
 * last sequence (which reads no state bits), take one field at a time. Six reads of their own
 * cost 36 instructions per sequence here; one read and the split, 20.
 *
 * Execution: the fast path needs the literals and the match to fit before the block's limit
 * with ZS_WILD to spare before the end of writable memory, and the match's source at or after
 * `lowest`, the later of the contiguous history's start and the window's reach from the block's
 * limit (so that one compare checks both); then the literals are a wild copy and the match one
 * ZS_COPY. Everything else (the end of the output, a dictionary or the previous lap of a
 * streaming window, corrupt values) goes to zs_exec_slow() / zs_match_slow().
 */

#define ZS_CAT2(a, b) a##b
#define ZS_CAT(a, b)  ZS_CAT2(a, b)
#define ZS_TOP        ZS_CAT(ZS_NAME, _top)

/* The top k (0..31) bits of `bits`, consumed: shifting right by -k & 63 leaves the top k bits
 * for k > 0 and all 64 for k == 0, which the mask then clears (three instructions with BMI2:
 * neg, shrx, bzhi; and shlx to consume). */
static ZS_ATTR ZN_FORCEINLINE uint32_t ZS_TOP(uint64_t *bits, uint32_t *consumed, unsigned k)
{
	uint32_t v = (uint32_t)ZS_BZHI(*bits >> (-k & 63), k);
	*bits <<= k;
	*consumed += k;
	return v;
}

static ZS_ATTR zn_result ZS_NAME(struct zs_seq_ctx *c)
{
	const struct zs_seq_entry *pl = c->ll, *po = c->of, *pm = c->ml;
	uint32_t r0 = c->rep[0]; /* the older two stay in c: see the rules below */
	uint32_t consumed = c->consumed;
	const uint8_t *bp = c->bp;
	const uint8_t *const floor = c->bstart - 8;
	const uint8_t *lit = c->lit;
	const uint8_t *const lit_end = c->lit_end;
	uint8_t *op = c->op;
	uint8_t *ofast = c->olimit;
	if (c->oend - ofast < ZS_WILD)
		ofast = c->oend - ZS_WILD;
	if (ofast < op)
		ofast = op;
	/* The window's reach from the block's limit: olimit - op <= Block_Maximum_Size <=
	 * Window_Size, so `lowest` is never after op. */
	const uint8_t *lowest = c->prefix;
	if ((uint64_t)(c->olimit - c->prefix) > c->window)
		lowest = c->olimit - c->window;
	uint32_t n = c->nseq;
	zn_result err = ZN_OK;

	for (;;) {
		uint32_t ofv, ml, ll;
		/* Reload: bits holds the unread bits at its top. */
		bp -= consumed >> 3;
		consumed &= 7;
		if (unlikely(bp < floor)) {
			err = ZN_ERR_CORRUPT; /* read past the start of the stream */
			break;
		}
		uint64_t bits = zn_get_le64(bp) << consumed;
		const unsigned ofx = po->extra, mlx = pm->extra, llx = pl->extra;
		const unsigned tx = ofx + mlx + llx;
		if (likely(tx <= 31 && n > 1)) {
			/* The six fields in one read. */
			const struct zs_seq_entry *const el = pl, *const em = pm, *const eo = po;
			const unsigned ofn = po->nb, mln = pm->nb, lln = pl->nb;
			const unsigned sl = ofn + mln, sx = sl + lln;
			const unsigned w = (tx + lln) + (mln + ofn);
			const uint64_t v = (bits >> 1) >> (63 - w);
			consumed += w;
			/* Each state's bits straight from v: the next states are two steps from
			 * it, not the end of a chain of shifts (the states are the loop's carried
			 * path). */
			po = eo + eo->next + ZS_BZHI(v, ofn);
			pm = em + em->next + ZS_BZHI(v >> ofn, mln);
			pl = el + el->next + ZS_BZHI(v >> sl, lln);
			const uint64_t x = v >> sx;
			/* The old entries' extra bits and bases read again here rather than kept
			 * from above (the empty asm is a compiler barrier: memory is read afresh
			 * after it). Kept, GCC spilled all six to the stack: 129 instructions a
			 * sequence instead of 114 (callgrind, bench_zstd). */
			__asm__("" ::: "memory");
			ll = el->base + (uint32_t)ZS_BZHI(x, el->extra);
			ml = em->base + (uint32_t)ZS_BZHI(x >> el->extra, em->extra);
			ofv = eo->base + (uint32_t)(x >> (el->extra + em->extra));
		} else {
			ofv = po->base + ZS_TOP(&bits, &consumed, ofx);
			ml = pm->base + ZS_TOP(&bits, &consumed, mlx);
			if (tx > 31) {
				bp -= consumed >> 3;
				consumed &= 7;
				if (unlikely(bp < floor)) {
					err = ZN_ERR_CORRUPT;
					break;
				}
				bits = zn_get_le64(bp) << consumed;
			}
			ll = pl->base + ZS_TOP(&bits, &consumed, llx);
			if (n > 1) { /* the block's last sequence updates no state */
				pl += pl->next + (int32_t)ZS_TOP(&bits, &consumed, pl->nb);
				pm += pm->next + (int32_t)ZS_TOP(&bits, &consumed, pm->nb);
				po += po->next + (int32_t)ZS_TOP(&bits, &consumed, po->nb);
			}
		}

		/* Repeat offsets (RFC 8878 3.1.1.5): Offset_Value 1..3 (codes 0 and 1) pick a
		 * recent offset, shifted by one when there are no literals, where 3 then means the
		 * most recent minus one; larger values are the offset (the table's base has the 3
		 * taken off). Either way the offset used ends up in r0, the most recent. Every
		 * offset in r0..r2 is at least 1: a 0 is refused where it arises. */
		if (likely(ofx >= 2)) {
			c->rep[2] = c->rep[1];
			c->rep[1] = r0;
			r0 = ofv;
		} else {
			uint32_t idx = ofv - (ll != 0);
			if (idx != 0) {
				uint32_t t = c->rep[1];
				if (idx != 1) {
					t = idx == 2 ? c->rep[2] : r0 - 1;
					c->rep[2] = c->rep[1];
				}
				c->rep[1] = r0;
				r0 = t;
				if (unlikely(t == 0)) {
					err = ZN_ERR_CORRUPT;
					break;
				}
			}
		}
		const uint32_t off = r0;

		n--;
		if (unlikely(ll > (size_t)(lit_end - lit) ||
		             (size_t)ll + ml > (size_t)(ofast - op) ||
		             off > (size_t)(op + ll - lowest))) {
			/* Leave the rest of this sequence to the caller (zs_exec_slow): no call
			 * in the loop, so that nothing it keeps in registers has to survive one
			 * (with the calls in, GCC spilled the output and literal pointers and
			 * the offsets: 131 instructions per sequence on int64 deltas). */
			c->pend.ll = ll;
			c->pend.ml = ml;
			c->pend.off = off;
			err = ZS_PENDING;
			break;
		}
		ZS_WILDCOPY(op, lit, ll);
		op += ll;
		lit += ll;
		ZS_COPY(op, off, ml);
		op += ml;
		if (n == 0)
			break;
	}
	c->consumed = consumed;
	c->bp = bp;
	c->ll = pl, c->of = po, c->ml = pm;
	c->rep[0] = r0;
	c->lit = lit;
	c->op = op;
	c->nseq = n;
	return err;
}

#undef ZS_TOP
#undef ZS_CAT
#undef ZS_CAT2
#undef ZS_NAME
#undef ZS_ATTR
#undef ZS_COPY
#undef ZS_WILDCOPY
#undef ZS_BZHI
