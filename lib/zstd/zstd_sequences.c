/* SPDX-License-Identifier: MIT */
/* zstd_sequences.c - compressed blocks: the sequences section header and its tables, and the
 * careful execution of the sequences the per-ISA fast loop leaves to it. */
#include "zstd_internal.h"

/* An LZ copy of n bytes from op - off within one buffer, exact (no slack needed). */
static void copy_within(uint8_t *op, size_t off, size_t n)
{
	const uint8_t *s = op - off;
	if (off >= n) {
		memcpy(op, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		op[i] = s[i];
}

/*
 * Where a match may reach (RFC 8878 3.1.1.5 and 5): back to `prefix` within the window; beyond
 * `prefix` into [ext, ext_end). A dictionary may be reached, however far back, while the frame
 * has produced at most Window_Size bytes; the previous lap of a streaming window is in reach
 * within the window (the wrap keeps Window_Size + ZS_WILD bytes of it, so the bytes read there
 * have not been overwritten). The copy from the previous lap uses memmove: it is the same buffer.
 */
zn_result zs_match_slow(struct zs_seq_ctx *c, uint8_t *op, uint32_t off, uint32_t ml)
{
	size_t hist = (size_t)(op - c->prefix);
	SAFETY_CHECK(off != 0, ZN_ERR_CORRUPT);
	if (off <= hist) {
		SAFETY_CHECK(off <= c->window, ZN_ERR_CORRUPT);
		copy_within(op, off, ml);
		return ZN_OK;
	}
	size_t back = off - hist, ext_len = (size_t)(c->ext_end - c->ext);
	if (c->ext_is_dict)
		SAFETY_CHECK(c->prefix_pos + hist <= c->window, ZN_ERR_CORRUPT);
	else
		SAFETY_CHECK(off <= c->window, ZN_ERR_CORRUPT);
	SAFETY_CHECK(back <= ext_len, ZN_ERR_CORRUPT);
	size_t n = ZN_MIN(back, (size_t)ml);
	memmove(op, c->ext_end - back, n);
	if (ml > n)
		copy_within(op + n, off, ml - n); /* on from the start of the prefix */
	return ZN_OK;
}

zn_result zs_room_for(const struct zs_seq_ctx *c, const uint8_t *op, size_t n)
{
	if (n <= (size_t)(c->olimit - op))
		return ZN_OK;
	return n > (size_t)(c->oblock - (uintptr_t)op) ? ZN_ERR_CORRUPT : ZN_ERR_OUTPUT_FULL;
}

zn_result zs_exec_slow(struct zs_seq_ctx *c, uint8_t **opp, const uint8_t **litp, uint32_t ll,
                       uint32_t ml, uint32_t off)
{
	uint8_t *op = *opp;
	const uint8_t *lit = *litp;
	SAFETY_CHECK(ll <= (size_t)(c->lit_end - lit), ZN_ERR_CORRUPT);
	RETURN_IF_ERROR(zs_room_for(c, op, (size_t)ll + ml));
	memcpy(op, lit, ll);
	op += ll;
	RETURN_IF_ERROR(zs_match_slow(c, op, off, ml));
	*opp = op + ml;
	*litp = lit + ll;
	return ZN_OK;
}

/* ---- the sequences section header (RFC 8878 3.1.1.3.2.1) ----------------------------------- */

enum { T_LL, T_OF, T_ML };

/* One code's table by its compression mode: predefined, RLE (one symbol), FSE-compressed
 * (a description follows) or repeat (the previous block's). */
static zn_result setup_table(struct zs_block_env *env, int which, unsigned mode, const uint8_t **pp,
                             const uint8_t *end)
{
	static const struct {
		unsigned max_sym, max_log, predef_log;
	} code[3] = {{ZS_LL_MAX, ZS_LL_LOG_MAX, 6},
	             {ZS_OF_MAX, ZS_OF_LOG_MAX, 5},
	             {ZS_ML_MAX, ZS_ML_LOG_MAX, 6}};
	struct zs_entropy *e = env->ent;
	const struct zs_seq_entry **tp = which == T_LL ? &e->ll : which == T_OF ? &e->of : &e->ml;
	unsigned *logp = which == T_LL ? &e->ll_log : which == T_OF ? &e->of_log : &e->ml_log;
	struct zs_seq_entry *own = which == T_LL   ? env->tables->ll
	                           : which == T_OF ? env->tables->of
	                                           : env->tables->ml;
	const uint32_t *base = which == T_LL ? zs_ll_base : which == T_OF ? NULL : zs_ml_base;
	const uint8_t *bits = which == T_LL ? zs_ll_bits : which == T_OF ? NULL : zs_ml_bits;
	switch (mode) {
	case 0:
		*tp = which == T_LL   ? env->predef->ll
		      : which == T_OF ? env->predef->of
		                      : env->predef->ml;
		*logp = code[which].predef_log;
		return ZN_OK;
	case 1:
		SAFETY_CHECK(*pp < end && **pp <= code[which].max_sym, ZN_ERR_CORRUPT);
		zs_build_seq_rle(own, **pp, base, bits);
		(*pp)++;
		*tp = own;
		*logp = 0;
		return ZN_OK;
	case 2: {
		size_t used;
		RETURN_IF_ERROR(zs_read_seq_table(*pp, (size_t)(end - *pp), own, logp,
		                                  code[which].max_sym, code[which].max_log, base,
		                                  bits, &used));
		*pp += used;
		*tp = own;
		return ZN_OK;
	}
	default:
		SAFETY_CHECK(*tp != NULL, ZN_ERR_CORRUPT);
		return ZN_OK;
	}
}

static zn_result read_sequences_header(struct zs_block_env *env, const uint8_t **pp,
                                       const uint8_t *end, uint32_t *nseq)
{
	const uint8_t *p = *pp;
	SAFETY_CHECK(p < end, ZN_ERR_CORRUPT);
	uint32_t n = p[0];
	if (n < 128) {
		p += 1;
	} else if (n < 255) {
		SAFETY_CHECK(end - p >= 2, ZN_ERR_CORRUPT);
		n = ((n - 128) << 8) + p[1];
		p += 2;
	} else {
		SAFETY_CHECK(end - p >= 3, ZN_ERR_CORRUPT);
		n = p[1] + ((uint32_t)p[2] << 8) + 0x7f00;
		p += 3;
	}
	*nseq = n;
	if (n == 0) {
		/* No sequences: the section ends here, and the tables are left as they are. A count
		 * of 0 in the 2-byte form (0x80 0x00) is refused: RFC 8878 reads it as 0 too, but
		 * libzstd (1.5.4) then wants the modes byte, and no encoder writes it so. */
		SAFETY_CHECK(p == *pp + 1, ZN_ERR_CORRUPT);
		SAFETY_CHECK(p == end, ZN_ERR_CORRUPT);
		*pp = p;
		return ZN_OK;
	}
	SAFETY_CHECK(p < end, ZN_ERR_CORRUPT);
	unsigned modes = *p++;
	SAFETY_CHECK((modes & 3) == 0, ZN_ERR_CORRUPT);
	RETURN_IF_ERROR(setup_table(env, T_LL, modes >> 6, &p, end));
	RETURN_IF_ERROR(setup_table(env, T_OF, (modes >> 4) & 3, &p, end));
	RETURN_IF_ERROR(setup_table(env, T_ML, (modes >> 2) & 3, &p, end));
	*pp = p;
	return ZN_OK;
}

static zn_result copy_literals(struct zs_seq_ctx *c, const uint8_t *lit, size_t n)
{
	RETURN_IF_ERROR(zs_room_for(c, c->op, n));
	memcpy(c->op, lit, n);
	c->op += n;
	return ZN_OK;
}

zn_result zs_decode_compressed_block(struct zs_block_env *env, const uint8_t *src, size_t n,
                                     int src_slack, struct zs_seq_ctx *c)
{
	const uint8_t *lit;
	size_t lit_len, used;
	RETURN_IF_ERROR(zs_decode_literals(env, src, n, src_slack, &lit, &lit_len, &used));
	const uint8_t *p = src + used, *end = src + n;
	uint32_t nseq;
	RETURN_IF_ERROR(read_sequences_header(env, &p, end, &nseq));
	if (nseq == 0)
		return copy_literals(c, lit, lit_len);

	/* The bitstream: its last byte holds the end marker; the initial states follow it (at
	 * most 9 + 8 + 9 bits after at most 8 of marker and padding: no reload needed). */
	struct zs_entropy *e = env->ent;
	SAFETY_CHECK(p < end && end[-1] != 0, ZN_ERR_CORRUPT);
	c->bstart = p;
	c->bp = end - 8;
	uint64_t bits = zn_get_le64(c->bp);
	unsigned skip = (unsigned)__builtin_clz(end[-1]) - 23;
	bits <<= skip;
	c->ll = e->ll + ((bits >> 1) >> (63 - e->ll_log));
	bits <<= e->ll_log;
	c->of = e->of + ((bits >> 1) >> (63 - e->of_log));
	bits <<= e->of_log;
	c->ml = e->ml + ((bits >> 1) >> (63 - e->ml_log));
	c->consumed = skip + e->ll_log + e->of_log + e->ml_log;
	c->nseq = nseq;
	memcpy(c->rep, e->rep, sizeof(c->rep));
	c->lit = lit;
	c->lit_end = lit + lit_len;
	for (;;) {
		zn_result r = env->k->seq(c);
		if (r == ZN_OK)
			break;
		if (r != ZS_PENDING)
			return r;
		RETURN_IF_ERROR(
		        zs_exec_slow(c, &c->op, &c->lit, c->pend.ll, c->pend.ml, c->pend.off));
		if (c->nseq == 0)
			break;
	}
	/* The bitstream must be read exactly to its start. */
	SAFETY_CHECK((c->bp - c->bstart) * 8 + 64 == (ptrdiff_t)c->consumed, ZN_ERR_CORRUPT);
	RETURN_IF_ERROR(copy_literals(c, c->lit, (size_t)(c->lit_end - c->lit)));
	memcpy(e->rep, c->rep, sizeof(c->rep));
	return ZN_OK;
}
