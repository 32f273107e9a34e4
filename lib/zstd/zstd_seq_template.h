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
 * and includes zstd_internal.h first.
 *
 * One sequence per iteration, decoded and executed at once (decoding all first, then executing,
 * keeps a second pass over 12 bytes per sequence; zstd keeps that for long windows, where it
 * prefetches the matches' sources).
 *
 * Bit budget: a reload leaves at least 57 bits. A sequence reads its offset's extra bits (up
 * to 31), the match length's and the literal length's (up to 16 each), then the three state
 * updates (9 + 9 + 8 bits). When the three extra-bit counts add up to more than 31 -- only long
 * offsets or lengths over 64 KiB do -- a second reload comes before the literal length.
 *
 * Execution: the fast path needs the literals and the match to fit before the block's limit
 * with ZS_WILD to spare before the end of writable memory, and the match to lie within the
 * contiguous history and the window; then the literals are a wild copy and the match one
 * ZS_COPY. Everything else (the end of the output, a dictionary or the previous lap of a
 * streaming window, corrupt values) goes to zs_exec_slow() / zs_match_slow().
 */

static ZS_ATTR zn_result ZS_NAME(struct zs_seq_ctx *c)
{
	const struct zs_seq_entry *const llt = c->llt, *const oft = c->oft, *const mlt = c->mlt;
	uint32_t lls = c->lls, ofs = c->ofs, mls = c->mls;
	uint32_t r0 = c->rep[0], r1 = c->rep[1], r2 = c->rep[2];
	struct zs_bw b = c->bw;
	const uint8_t *lit = c->lit;
	const uint8_t *const lit_end = c->lit_end;
	uint8_t *op = c->op;
	uint8_t *ofast = c->olimit;
	if (c->oend - ofast < ZS_WILD)
		ofast = c->oend - ZS_WILD;
	if (ofast < op)
		ofast = op;
	const uint8_t *const prefix = c->prefix;
	const uint64_t window = c->window;
	uint32_t n = c->nseq;
	zn_result err = ZN_OK;

#define GET(nb_) zs_bw_get(&b, (nb_))
	for (;;) {
		const struct zs_seq_entry eo = oft[ofs], em = mlt[mls], el = llt[lls];
		zs_bw_reload(&b);
		uint32_t ofv = eo.base + GET(eo.extra);
		uint32_t ml = em.base + GET(em.extra);
		if (unlikely((uint32_t)eo.extra + em.extra + el.extra > 31))
			zs_bw_reload(&b);
		uint32_t ll = el.base + GET(el.extra);
		if (likely(n > 1)) { /* the last sequence updates no state */
			lls = el.next + GET(el.nb);
			mls = em.next + GET(em.nb);
			ofs = eo.next + GET(eo.nb);
		}

		/* Repeat offsets (RFC 8878 3.1.1.5): 1..3 pick a recent offset, shifted by one
		 * when there are no literals, where 3 means the most recent minus one. */
		uint32_t off;
		if (ofv > 3) {
			r2 = r1;
			r1 = r0;
			r0 = off = ofv - 3;
		} else {
			uint32_t idx = ofv - (ll != 0);
			if (idx == 0) {
				off = r0;
			} else {
				off = idx == 1 ? r1 : idx == 2 ? r2 : r0 - 1;
				if (idx != 1)
					r2 = r1;
				r1 = r0;
				r0 = off;
			}
		}

		if (likely(ll <= (size_t)(lit_end - lit) &&
		           (size_t)ll + ml <= (size_t)(ofast - op))) {
			ZS_WILDCOPY(op, lit, ll);
			op += ll;
			lit += ll;
			if (likely((size_t)off - 1 < (size_t)(op - prefix) && off <= window)) {
				ZS_COPY(op, off, ml);
			} else {
				err = zs_match_slow(c, op, off, ml);
				if (unlikely(err != ZN_OK))
					break;
			}
			op += ml;
		} else {
			err = zs_exec_slow(c, &op, &lit, ll, ml, off);
			if (unlikely(err != ZN_OK))
				break;
			if (op > ofast)
				ofast = op;
		}
		if (--n == 0)
			break;
	}
#undef GET
	c->bw = b;
	c->lit = lit;
	c->op = op;
	c->rep[0] = r0;
	c->rep[1] = r1;
	c->rep[2] = r2;
	return err;
}

#undef ZS_NAME
#undef ZS_ATTR
#undef ZS_COPY
#undef ZS_WILDCOPY
