/* SPDX-License-Identifier: MIT */
/* zstd_fse.c - FSE table descriptions and decoding tables: the sequence codes' tables with their
 * values resolved, the Huffman weights' tables, and the predefined distributions. */
#include "zstd_internal.h"

/* Literal length and match length codes: baseline and extra bits (RFC 8878 3.1.1.3.2.1.1). */
const uint32_t zs_ll_base[ZS_LL_MAX + 1] = {
        0,  1,  2,  3,  4,  5,  6,  7,  8,   9,   10,  11,   12,   13,   14,   15,    16,    18,
        20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
const uint8_t zs_ll_bits[ZS_LL_MAX + 1] = {0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  0,  0,
                                           0, 0, 0, 0, 1, 1,  1,  1,  2,  2,  3,  3,
                                           4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
const uint32_t zs_ml_base[ZS_ML_MAX + 1] = {
        3,  4,  5,  6,  7,  8,  9,  10,  11,  12,  13,   14,   15,   16,   17,    18,    19,   20,
        21, 22, 23, 24, 25, 26, 27, 28,  29,  30,  31,   32,   33,   34,   35,    37,    39,   41,
        43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539};
const uint8_t zs_ml_bits[ZS_ML_MAX + 1] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  0,  0, 0,
        0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* The predefined distributions (RFC 8878 3.1.1.3.2.2). */
static const int16_t ll_default[ZS_LL_MAX + 1] = {4, 3, 2, 2, 2, 2, 2, 2, 2,  2,  2,  2,
                                                  2, 1, 1, 1, 2, 2, 2, 2, 2,  2,  2,  2,
                                                  2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
static const int16_t ml_default[ZS_ML_MAX + 1] = {
        1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1,  1,  1,  1,  1,  1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
static const int16_t of_default[29] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1,  1,  1,  1,  1, 1,
                                       1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};

/* A forward reader of a table description: 32 bits at any bit position, zeros past the end
 * (reading them is caught by the caller's length check). */
static uint32_t peek32(const uint8_t *p, size_t n, size_t bitpos)
{
	size_t i = bitpos >> 3;
	uint64_t v;
	if (i + 8 <= n) {
		v = zn_get_le64(p + i);
	} else {
		v = 0;
		for (size_t k = 0; k < 8 && i + k < n; k++)
			v |= (uint64_t)p[i + k] << (8 * k);
	}
	return (uint32_t)(v >> (bitpos & 7));
}

/*
 * RFC 8878 4.1.1. Each count is read with the fewest bits that can hold what is left of the
 * total (plus one): values below `max` fit in one bit less. A count of zero is followed by
 * 2-bit repeat fields (3: another follows) of further zeros. The description ends when the
 * counts add up to 1 << log exactly; a count past that total, or past *max_sym, is corrupt.
 */
zn_result zs_fse_read_counts(const uint8_t *p, size_t n, int16_t *norm, unsigned *max_sym,
                             unsigned *log, unsigned max_log, size_t *used)
{
	SAFETY_CHECK(n >= 1, ZN_ERR_CORRUPT);
	unsigned al = (p[0] & 15) + 5;
	SAFETY_CHECK(al <= max_log, ZN_ERR_CORRUPT);
	size_t pos = 4;
	int32_t remaining = (1 << al) + 1;
	uint32_t threshold = 1u << al;
	unsigned nbits = al + 1;
	unsigned sym = 0;
	const unsigned limit = *max_sym;
	while (remaining > 1) {
		SAFETY_CHECK(sym <= limit, ZN_ERR_CORRUPT);
		uint32_t v = peek32(p, n, pos);
		uint32_t max = 2 * threshold - 1 - (uint32_t)remaining;
		uint32_t low = v & (threshold - 1);
		int32_t count;
		if (low < max) {
			count = (int32_t)low;
			pos += nbits - 1;
		} else {
			uint32_t full = v & (2 * threshold - 1);
			count = (int32_t)(full >= threshold ? full - max : full);
			pos += nbits;
		}
		count--; /* -1: "less than 1", which takes one slot */
		remaining -= count < 0 ? -count : count;
		norm[sym++] = (int16_t)count;
		if (count == 0) {
			/* Repeat fields: 2 bits each, 3 means another one follows. */
			for (;;) {
				uint32_t r = peek32(p, n, pos) & 3;
				pos += 2;
				SAFETY_CHECK(sym + r <= limit + 1, ZN_ERR_CORRUPT);
				for (uint32_t k = 0; k < r; k++)
					norm[sym++] = 0;
				if (r != 3)
					break;
				SAFETY_CHECK(pos <= 8 * n, ZN_ERR_CORRUPT);
			}
		}
		while (remaining < (int32_t)threshold && threshold > 1) {
			nbits--;
			threshold >>= 1;
		}
		SAFETY_CHECK(pos <= 8 * n, ZN_ERR_CORRUPT);
	}
	SAFETY_CHECK(remaining == 1, ZN_ERR_CORRUPT);
	*max_sym = sym - 1;
	*log = al;
	*used = (pos + 7) >> 3;
	return ZN_OK;
}

/*
 * Spread the symbols over the states (RFC 8878 4.1.1, "from normalized distribution to decoding
 * tables"): "less than 1" symbols take the last states, one each; the others are placed with
 * the stride (5/8 of the table + 3, odd, so it visits every state once), skipping those.
 * The symbols are first laid out in order, each as often as its count, eight bytes at a time;
 * without "less than 1" symbols nothing is skipped and the i-th of them goes to state
 * (i * stride) mod size, so the placement is a loop with no branch and no carried position.
 * counter[s] becomes the first of symbol s's next-state numbers (see state_rule()).
 */
static void spread(uint8_t *sym_at, uint16_t *counter, const int16_t *norm, unsigned max_sym,
                   unsigned log)
{
	const uint32_t size = 1u << log, mask = size - 1;
	uint8_t lin[(1u << ZS_FSE_LOG_MAX) + 8];
	uint32_t high = size - 1, n = 0;
	for (unsigned s = 0; s <= max_sym; s++) {
		if (norm[s] == -1) {
			sym_at[high--] = (uint8_t)s;
			counter[s] = 1;
			continue;
		}
		counter[s] = (uint16_t)norm[s];
		const uint64_t v = s * 0x0101010101010101ull;
		for (int i = 0; i < norm[s]; i += 8)
			zn_put_le64(lin + n + (uint32_t)i, v);
		n += (uint32_t)norm[s];
	}
	const uint32_t step = (size >> 1) + (size >> 3) + 3;
	if (high == size - 1) {
		for (uint32_t i = 0; i < size; i++)
			sym_at[(i * step) & mask] = lin[i];
		return;
	}
	uint32_t pos = 0;
	for (uint32_t i = 0; i < n; i++) {
		sym_at[pos] = lin[i];
		do
			pos = (pos + step) & mask;
		while (pos > high);
	}
}

/* The next-state rule of a state of symbol s: the k-th state of s (in state order) reads nb
 * bits, where nb makes the count of states, starting at counter[s], reach the table size;
 * *next is the next state's base. */
static ZN_FORCEINLINE unsigned state_rule(uint16_t *counter, unsigned s, unsigned log,
                                          uint32_t *next)
{
	uint32_t x = counter[s]++;
	unsigned nb = log - (31 - (unsigned)__builtin_clz(x));
	*next = (x << nb) - (1u << log);
	return nb;
}

/* Offset codes: Offset_Value = (1 << code) + extra bits, and from code 2 up (values above 3)
 * the offset is that minus 3: those entries hold the offset's baseline itself. Codes 0 and 1
 * are the repeat codes (RFC 8878 3.1.1.5). */
static uint32_t of_base(unsigned code)
{
	return code < 2 ? 1u << code : (1u << code) - 3;
}

void zs_build_seq_table(struct zs_seq_entry *t, const int16_t *norm, unsigned max_sym, unsigned log,
                        const uint32_t *base, const uint8_t *bits)
{
	uint8_t sym_at[1u << ZS_FSE_LOG_MAX];
	uint16_t counter[256];
	struct zs_seq_entry proto[ZS_ML_MAX + 1];
	spread(sym_at, counter, norm, max_sym, log);
	for (unsigned s = 0; s <= max_sym; s++) {
		proto[s].extra = (uint8_t)(base ? bits[s] : s);
		proto[s].base = base ? base[s] : of_base(s);
	}
	for (uint32_t u = 0; u < (1u << log); u++) {
		unsigned s = sym_at[u];
		uint32_t next;
		struct zs_seq_entry e = proto[s];
		e.nb = (uint8_t)state_rule(counter, s, log, &next);
		e.next = (int16_t)(next - u); /* relative: see struct zs_seq_entry */
		t[u] = e;
	}
}

void zs_build_seq_rle(struct zs_seq_entry *t, unsigned sym, const uint32_t *base,
                      const uint8_t *bits)
{
	t[0].next = 0;
	t[0].nb = 0;
	t[0].extra = (uint8_t)(base ? bits[sym] : sym);
	t[0].base = base ? base[sym] : of_base(sym);
}

void zs_build_fse_table(struct zs_fse_entry *t, const int16_t *norm, unsigned max_sym, unsigned log)
{
	uint8_t sym_at[1u << ZS_FSE_LOG_MAX];
	uint16_t counter[256];
	spread(sym_at, counter, norm, max_sym, log);
	for (uint32_t u = 0; u < (1u << log); u++) {
		uint32_t next;
		t[u].nb = (uint8_t)state_rule(counter, sym_at[u], log, &next);
		t[u].next = (uint16_t)next;
		t[u].sym = sym_at[u];
	}
}

zn_result zs_read_seq_table(const uint8_t *p, size_t n, struct zs_seq_entry *t, unsigned *log,
                            unsigned max_sym, unsigned max_log, const uint32_t *base,
                            const uint8_t *bits, size_t *used)
{
	int16_t norm[ZS_ML_MAX + 1];
	unsigned ms = max_sym;
	RETURN_IF_ERROR(zs_fse_read_counts(p, n, norm, &ms, log, max_log, used));
	zs_build_seq_table(t, norm, ms, *log, base, bits);
	return ZN_OK;
}

void zs_build_predefined(struct zs_predef *p)
{
	zs_build_seq_table(p->ll, ll_default, ZS_LL_MAX, 6, zs_ll_base, zs_ll_bits);
	zs_build_seq_table(p->ml, ml_default, ZS_ML_MAX, 6, zs_ml_base, zs_ml_bits);
	zs_build_seq_table(p->of, of_default, 28, 5, NULL, NULL);
}
