/* SPDX-License-Identifier: MIT */
/* zstd_literals.c - the literals section: Huffman tree descriptions, decoding tables, and the
 * 1- and 4-stream Huffman decoders around the per-ISA 4-stream fast loop. */
#include "zstd_internal.h"

/*
 * Huffman weights compressed with FSE (RFC 8878 4.2.1.2): one backward bitstream, two states
 * sharing one table, taking turns. The number of weights is not stored: decoding stops when a
 * state update reads past the start of the stream, after which the other state's symbol is the
 * last weight.
 */
static zn_result read_fse_weights(const uint8_t *p, size_t n, uint8_t *w, unsigned *count)
{
	int16_t norm[256];
	unsigned max_sym = 255, log;
	size_t used;
	RETURN_IF_ERROR(zs_fse_read_counts(p, n, norm, &max_sym, &log, ZS_WEIGHT_LOG_MAX, &used));
	SAFETY_CHECK(used < n, ZN_ERR_CORRUPT);
	struct zs_fse_entry t[1u << ZS_WEIGHT_LOG_MAX];
	zs_build_fse_table(t, norm, max_sym, log);
	struct zs_bw b;
	RETURN_IF_ERROR(zs_bw_init(&b, p + used, n - used));
	uint32_t s1 = zs_bw_get(&b, log), s2 = zs_bw_get(&b, log);
	zs_bw_reload(&b);
	SAFETY_CHECK(!zs_bw_overflowed(&b), ZN_ERR_CORRUPT);
	/* At most 255 weights are stored (the last symbol's is implied); a table whose states
	 * read no bits would otherwise never reach the end. */
	unsigned k = 0;
	for (;;) {
		SAFETY_CHECK(k < 255, ZN_ERR_CORRUPT);
		w[k++] = t[s1].sym;
		s1 = t[s1].next + zs_bw_get(&b, t[s1].nb);
		zs_bw_reload(&b);
		SAFETY_CHECK(k < 255, ZN_ERR_CORRUPT);
		if (zs_bw_overflowed(&b)) {
			w[k++] = t[s2].sym;
			break;
		}
		w[k++] = t[s2].sym;
		s2 = t[s2].next + zs_bw_get(&b, t[s2].nb);
		zs_bw_reload(&b);
		if (zs_bw_overflowed(&b)) {
			SAFETY_CHECK(k < 255, ZN_ERR_CORRUPT);
			w[k++] = t[s1].sym;
			break;
		}
	}
	*count = k;
	return ZN_OK;
}

/* Fill n (a power of 2) entries with one value. */
static inline void fill16(uint16_t *d, uint16_t v, uint32_t n)
{
	if (n >= 4) {
		uint64_t v4 = v * 0x0001000100010001ull;
		for (uint32_t i = 0; i < n; i += 4)
			zn_put_le64(d + i, v4);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		d[i] = v;
}

/*
 * Weights to a decoding table (RFC 8878 4.2.1.3). The last symbol's weight completes the sum
 * of 2^(w-1) to a power of two, which gives the longest codeword, `log` bits. Codewords are
 * assigned in order of weight, then symbol, starting from the lightest (longest): in a table
 * indexed by the next `log` bits, symbol s of weight w covers 2^(w-1) consecutive entries, runs
 * laid out in that order. The table is indexed by ZS_HUF_LOG_MAX bits whatever the log, each
 * run 2^(ZS_HUF_LOG_MAX - log) times longer, so that the decoders shift by a constant.
 */
static zn_result build_huffman_table(uint8_t *w, unsigned nw, uint16_t *dt)
{
	uint32_t total = 0, rank[ZS_HUF_LOG_MAX + 2] = {0};
	for (unsigned i = 0; i < nw; i++) {
		SAFETY_CHECK(w[i] <= ZS_HUF_LOG_MAX, ZN_ERR_CORRUPT);
		rank[w[i]]++;
		total += (1u << w[i]) >> 1;
	}
	SAFETY_CHECK(total != 0, ZN_ERR_CORRUPT);
	unsigned log = 32 - (unsigned)__builtin_clz(total); /* highbit(total) + 1 */
	SAFETY_CHECK(log <= ZS_HUF_LOG_MAX, ZN_ERR_CORRUPT);
	uint32_t rest = (1u << log) - total;
	SAFETY_CHECK((rest & (rest - 1)) == 0, ZN_ERR_CORRUPT);
	unsigned last = 32 - (unsigned)__builtin_clz(rest);
	w[nw] = (uint8_t)last;
	rank[last]++;
	/* The lightest codewords pair up: at least two, an even number (a complete code). */
	SAFETY_CHECK(rank[1] >= 2 && !(rank[1] & 1), ZN_ERR_CORRUPT);
	const unsigned scale = ZS_HUF_LOG_MAX - log;
	uint32_t start[ZS_HUF_LOG_MAX + 2];
	uint32_t at = 0;
	for (unsigned k = 1; k <= log; k++) {
		start[k] = at;
		at += rank[k] << (k - 1 + scale);
	}
	for (unsigned s = 0; s <= nw; s++) {
		unsigned k = w[s];
		if (!k)
			continue;
		uint32_t len = 1u << (k - 1 + scale);
		fill16(dt + start[k], (uint16_t)((s << 8) | (log + 1 - k)), len);
		start[k] += len;
	}
	return ZN_OK;
}

zn_result zs_read_huffman_tree(const uint8_t *p, size_t n, uint16_t *dt, size_t *used)
{
	uint8_t w[256];
	unsigned nw;
	SAFETY_CHECK(n >= 1, ZN_ERR_CORRUPT);
	unsigned h = p[0];
	if (h < 128) {
		/* FSE-compressed weights, h bytes. */
		SAFETY_CHECK(h >= 1 && (size_t)h + 1 <= n, ZN_ERR_CORRUPT);
		RETURN_IF_ERROR(read_fse_weights(p + 1, h, w, &nw));
		*used = 1 + (size_t)h;
	} else {
		/* Direct: h - 127 weights of 4 bits, the first in the high nibble. */
		nw = h - 127;
		size_t bytes = (nw + 1) / 2;
		SAFETY_CHECK(bytes + 1 <= n, ZN_ERR_CORRUPT);
		for (unsigned i = 0; i < nw; i += 2) {
			w[i] = p[1 + i / 2] >> 4;
			w[i + 1] = p[1 + i / 2] & 15;
		}
		*used = 1 + bytes;
	}
	return build_huffman_table(w, nw, dt);
}

/* The two-symbol table from the one-symbol table `dt` (see ZS_HUF_TABLE_SIZE): after the first
 * codeword's l1 bits, the rest of the index, shifted up, indexes the second codeword, which
 * counts when its length fits in what is left. */
static void build_huffman_pairs(const uint16_t *dt, uint32_t *dt2)
{
	const uint32_t mask = ZS_HUF_TABLE_SIZE - 1;
	for (uint32_t i = 0; i <= mask; i++) {
		uint32_t e1 = dt[i], l1 = e1 & 0xff;
		uint32_t e2 = dt[(i << l1) & mask], l2 = e2 & 0xff;
		uint32_t pair = (e1 >> 8) | (e2 & 0xff00) | (l1 + l2) << 16 | 2u << 24;
		dt2[i] = l1 + l2 <= ZS_HUF_LOG_MAX ? pair : (e1 >> 8) | l1 << 16 | 1u << 24;
	}
}

/* ---- Huffman streams ----------------------------------------------------------------------- */

/* Decode [op, oend) from one stream carefully, from the state in `b`: four symbols per reload
 * while the reload is the fast one, then one at a time. The stream must end exactly. */
static zn_result huf_stream_tail(struct zs_bw *b, const uint16_t *dt, uint8_t *op, uint8_t *oend)
{
	const unsigned sh = 64 - ZS_HUF_LOG_MAX;
#define HUF_STEP()                                                                                 \
	do {                                                                                       \
		uint16_t e_ = dt[(b->bits << (b->consumed & 63)) >> sh];                           \
		*op++ = (uint8_t)(e_ >> 8);                                                        \
		b->consumed += e_ & 0xff;                                                          \
	} while (0)
	while (oend - op >= 4 && b->p - b->start >= 8) {
		zs_bw_reload(b);
		HUF_STEP();
		HUF_STEP();
		HUF_STEP();
		HUF_STEP();
	}
	while (op < oend) {
		zs_bw_reload(b);
		HUF_STEP();
	}
#undef HUF_STEP
	zs_bw_reload(b);
	SAFETY_CHECK(zs_bw_finished(b), ZN_ERR_CORRUPT);
	return ZN_OK;
}

static zn_result huf_decode_1(const uint8_t *src, size_t n, const uint16_t *dt, uint8_t *out,
                              size_t regen)
{
	struct zs_bw b;
	RETURN_IF_ERROR(zs_bw_init(&b, src, n));
	return huf_stream_tail(&b, dt, out, out + regen);
}

/* The two-symbol table pays from about this many literals on: building it costs about as
 * much as decoding 2,000 of them one symbol at a time (perf of bench_zstd on app.log). */
#define ZS_HUF_PAIRS_MIN 4096
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define use_pairs(regen) ((regen)&1) /* fuzz inputs are small: both loops, by parity */
#else
#define use_pairs(regen) ((regen) >= ZS_HUF_PAIRS_MIN)
#endif

/* Four streams: a 6-byte jump table with the sizes of the first three; each stream decodes
 * (regen + 3) / 4 bytes, the last what is left. */
static zn_result huf_decode_4(struct zs_block_env *env, const uint8_t *src, size_t n, uint8_t *out,
                              size_t regen)
{
	struct zs_entropy *ent = env->ent;
	const uint16_t *dt = ent->huf;
	SAFETY_CHECK(n >= 10 && regen >= 6, ZN_ERR_CORRUPT);
	size_t s1 = zn_get_le16(src), s2 = zn_get_le16(src + 2), s3 = zn_get_le16(src + 4);
	SAFETY_CHECK(s1 + s2 + s3 + 6 < n, ZN_ERR_CORRUPT);
	const uint8_t *st[5] = {src + 6, src + 6 + s1, src + 6 + s1 + s2, src + 6 + s1 + s2 + s3,
	                        src + n};
	size_t seg = (regen + 3) / 4;
	struct zs_bw b[4];
	struct zs_huf4_ctx c;
	int fast = 1;
	for (int i = 0; i < 4; i++) {
		RETURN_IF_ERROR(zs_bw_init(&b[i], st[i], (size_t)(st[i + 1] - st[i])));
		c.op[i] = out + seg * (size_t)i;
		c.oend[i] = i < 3 ? c.op[i] + seg : out + regen;
		fast &= st[i + 1] - st[i] >= 8;
	}
	if (fast) {
		for (int i = 0; i < 4; i++) {
			c.ip[i] = b[i].p;
			c.consumed[i] = b[i].consumed;
			c.start[i] = st[i];
		}
		c.dt = dt;
		if (use_pairs(regen)) {
			if (!ent->huf2) {
				build_huffman_pairs(dt, env->tables->huf2);
				ent->huf2 = env->tables->huf2;
			}
			c.dt2 = ent->huf2;
			env->k->huf4x2(&c);
		} else {
			env->k->huf4(&c);
		}
		for (int i = 0; i < 4; i++) {
			b[i].p = c.ip[i];
			b[i].consumed = c.consumed[i];
			b[i].bits = zn_get_le64(c.ip[i]);
		}
	}
	for (int i = 0; i < 4; i++)
		RETURN_IF_ERROR(huf_stream_tail(&b[i], dt, c.op[i], c.oend[i]));
	return ZN_OK;
}

/* ---- the literals section (RFC 8878 3.1.1.3.1) --------------------------------------------- */

/* Decode the literals section at [src, src + n): *lit, *lit_len are the literals (in the
 * literal buffer, or in place for raw literals with ZS_WILD readable bytes after them), *used
 * the section's size. */
zn_result zs_decode_literals(struct zs_block_env *env, const uint8_t *src, size_t n, int src_slack,
                             const uint8_t **lit, size_t *lit_len, size_t *used)
{
	SAFETY_CHECK(n >= 1, ZN_ERR_CORRUPT);
	unsigned type = src[0] & 3, sf = (src[0] >> 2) & 3;
	size_t regen, csize = 0, hdr;
	if (type < 2) {
		if (!(sf & 1)) {
			regen = src[0] >> 3;
			hdr = 1;
		} else if (sf == 1) {
			SAFETY_CHECK(n >= 2, ZN_ERR_CORRUPT);
			regen = (src[0] >> 4) + ((size_t)src[1] << 4);
			hdr = 2;
		} else {
			SAFETY_CHECK(n >= 3, ZN_ERR_CORRUPT);
			regen = (src[0] >> 4) + ((size_t)src[1] << 4) + ((size_t)src[2] << 12);
			hdr = 3;
		}
	} else {
		hdr = sf < 2 ? 3 : sf + 2;
		SAFETY_CHECK(n >= hdr, ZN_ERR_CORRUPT);
		uint64_t v = 0;
		for (size_t i = 0; i < hdr; i++)
			v |= (uint64_t)src[i] << (8 * i);
		unsigned bits = hdr == 3 ? 10 : hdr == 4 ? 14 : 18;
		regen = (size_t)(v >> 4) & ((1u << bits) - 1);
		csize = (size_t)(v >> (4 + bits)) & ((1u << bits) - 1);
	}
	SAFETY_CHECK(regen <= env->block_max, ZN_ERR_CORRUPT);
	uint8_t *buf = env->lit_buf;
	*lit_len = regen;
	if (type == 0) {
		SAFETY_CHECK(regen <= n - hdr, ZN_ERR_CORRUPT);
		if (src_slack || n - hdr - regen >= ZS_WILD) {
			*lit = src + hdr;
		} else {
			memcpy(buf, src + hdr, regen);
			*lit = buf;
		}
		*used = hdr + regen;
		return ZN_OK;
	}
	if (type == 1) {
		SAFETY_CHECK(n > hdr, ZN_ERR_CORRUPT);
		memset(buf, src[hdr], regen + ZS_WILD);
		*lit = buf;
		*used = hdr + 1;
		return ZN_OK;
	}
	SAFETY_CHECK(csize <= n - hdr, ZN_ERR_CORRUPT);
	const uint8_t *p = src + hdr;
	size_t left = csize;
	struct zs_entropy *ent = env->ent;
	if (type == 2) {
		size_t tsize;
		RETURN_IF_ERROR(zs_read_huffman_tree(p, left, env->tables->huf, &tsize));
		ent->huf = env->tables->huf;
		ent->huf2 = NULL;
		p += tsize;
		left -= tsize;
	} else {
		SAFETY_CHECK(ent->huf != NULL, ZN_ERR_CORRUPT);
	}
	if (sf == 0)
		RETURN_IF_ERROR(huf_decode_1(p, left, ent->huf, buf, regen));
	else
		RETURN_IF_ERROR(huf_decode_4(env, p, left, buf, regen));
	*lit = buf;
	*used = hdr + csize;
	return ZN_OK;
}
