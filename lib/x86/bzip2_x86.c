/* SPDX-License-Identifier: MIT */
/* bzip2_x86.c - x86-64 variants of the bzip2 kernels: the symbol loop with a move-to-front list
 * of vector rows (SSSE3, BMI2), the block magic scanner (AVX2). */
#include <immintrin.h>

#include "bzip2/bzip2_internal.h"
#include "common/cpu_features.h"

#define ATTR_SSSE3 __attribute__((target("ssse3")))
#define ATTR_BMI2  __attribute__((target("bmi2,ssse3")))
#define ATTR_AVX2  __attribute__((target("avx2,bmi2")))

/*
 * The move-to-front list as 16 rows of 16 bytes, list[16r + c] at row r, column c. Moving
 * list[j] (j = 16r + c) to the front:
 *   row r:      columns 0..c take the bytes one column to their left, column 0 the last byte of
 *               row r - 1 (one palignr), the columns after c stay (a blend with mask[c]);
 *   rows r-1..1 each shift right by one byte, taking the last byte of the row before (palignr);
 *   row 0       shifts right by one and takes list[j] in front.
 * So j costs r + 1 vector steps of 3-4 instructions and no loop over bytes, where a memmove of j
 * bytes costs j / 16 vector copies plus the call, and forwarding stalls when the next index's
 * load straddles the unaligned stores. Indices below 16, most of them, are one row: a load, a
 * shift, a blend and a store.
 */
static const uint8_t first_cols[16][16] __attribute__((aligned(16))) = {
#define M(c)                                                                                       \
	{                                                                                          \
		0xff, (c) >= 1 ? 0xff : 0, (c) >= 2 ? 0xff : 0, (c) >= 3 ? 0xff : 0,               \
		        (c) >= 4 ? 0xff : 0, (c) >= 5 ? 0xff : 0, (c) >= 6 ? 0xff : 0,             \
		        (c) >= 7 ? 0xff : 0, (c) >= 8 ? 0xff : 0, (c) >= 9 ? 0xff : 0,             \
		        (c) >= 10 ? 0xff : 0, (c) >= 11 ? 0xff : 0, (c) >= 12 ? 0xff : 0,          \
		        (c) >= 13 ? 0xff : 0, (c) >= 14 ? 0xff : 0, (c) >= 15 ? 0xff : 0           \
	}
        M(0), M(1), M(2),  M(3),  M(4),  M(5),  M(6),  M(7),
        M(8), M(9), M(10), M(11), M(12), M(13), M(14), M(15),
#undef M
};

#define DEFINE_MTF(name, attr)                                                                     \
	static attr ZN_FORCEINLINE __m128i name##_blend(__m128i old, __m128i moved, __m128i mask)  \
	{                                                                                          \
		return _mm_or_si128(_mm_and_si128(mask, moved), _mm_andnot_si128(mask, old));      \
	}                                                                                          \
	static attr ZN_FORCEINLINE uint8_t name(uint8_t *list, unsigned j)                         \
	{                                                                                          \
		__m128i *rows = (__m128i *)list;                                                   \
		uint8_t b = list[j];                                                               \
		unsigned r = j >> 4;                                                               \
		__m128i mask = _mm_load_si128((const __m128i *)first_cols[j & 15]);                \
		__m128i v = _mm_load_si128(rows + r), front = _mm_cvtsi32_si128(b);                \
		if (likely(r == 0)) {                                                              \
			__m128i moved = _mm_or_si128(_mm_slli_si128(v, 1), front);                 \
			_mm_store_si128(rows, name##_blend(v, moved, mask));                       \
			return b;                                                                  \
		}                                                                                  \
		__m128i prev = _mm_load_si128(rows + r - 1);                                       \
		_mm_store_si128(rows + r, name##_blend(v, _mm_alignr_epi8(v, prev, 15), mask));    \
		for (unsigned k = r - 1; k > 0; k--) {                                             \
			__m128i cur = prev;                                                        \
			prev = _mm_load_si128(rows + k - 1);                                       \
			_mm_store_si128(rows + k, _mm_alignr_epi8(cur, prev, 15));                 \
		}                                                                                  \
		_mm_store_si128(rows, _mm_or_si128(_mm_slli_si128(prev, 1), front));               \
		return b;                                                                          \
	}

/* Zero runs: 16-byte stores of the byte (the block arrays have BZ2_SLACK bytes of room). */
#define DEFINE_FILL(name, attr)                                                                    \
	static attr ZN_FORCEINLINE void name(uint8_t *out, uint8_t b, uint32_t n)                  \
	{                                                                                          \
		__m128i v = _mm_set1_epi8((char)b);                                                \
		uint8_t *const end = out + n;                                                      \
		do {                                                                               \
			_mm_storeu_si128((__m128i *)out, v);                                       \
			out += 16;                                                                 \
		} while (out < end);                                                               \
	}

DEFINE_MTF(mtf_ssse3, ATTR_SSSE3)
DEFINE_FILL(fill_ssse3, ATTR_SSSE3)
DEFINE_MTF(mtf_bmi2, ATTR_BMI2)
DEFINE_FILL(fill_bmi2, ATTR_BMI2)

#define SYM_NAME            symbols_ssse3
#define SYM_ATTR            ATTR_SSSE3
#define SYM_MTF(list, j)    mtf_ssse3(list, j)
#define SYM_FILL(out, b, n) fill_ssse3(out, b, n)
#include "bzip2/bzip2_symbols.h"

/* BMI2: shlx/shrx take the shift count in any register, which the bit buffer's variable
 * shifts use twice per symbol. */
#define SYM_NAME            symbols_bmi2
#define SYM_ATTR            ATTR_BMI2
#define SYM_MTF(list, j)    mtf_bmi2(list, j)
#define SYM_FILL(out, b, n) fill_bmi2(out, b, n)
#include "bzip2/bzip2_symbols.h"

zn_bz2_sym_fn zn_bz2_select_symbols(uint32_t f, const char **name)
{
	const char *n = "generic";
	zn_bz2_sym_fn fn = zn_bz2_symbols_generic;
	if ((f & ZN_CPU_BMI2) && (f & ZN_CPU_SSSE3))
		n = "bmi2", fn = symbols_bmi2;
	else if (f & ZN_CPU_SSSE3)
		n = "ssse3", fn = symbols_ssse3;
	if (name)
		*name = n;
	return fn;
}

/*
 * The magic scanner, 32 byte positions per step: for each shift k, the bytes after each
 * position compared with the pair of the magic shifted by k (two compares and an and), the 8
 * results or-ed; a set bit is checked whole (zn_bz2_scan_check). About 35 instructions per 32
 * bytes: several GB/s, where the portable scanner's byte loop does about 1.
 */
#define PAIR(k) ((unsigned)((BZ2_BLOCK_MAGIC << (16 - (k))) >> 40) & 0xffff)

static ATTR_AVX2 size_t scan_avx2(const uint8_t *in, size_t len, size_t avail, uint64_t *pos,
                                  size_t cap, size_t *resume)
{
	__m256i hi[8], lo[8];
	for (unsigned k = 0; k < 8; k++) {
		hi[k] = _mm256_set1_epi8((char)(PAIR(k) >> 8));
		lo[k] = _mm256_set1_epi8((char)(PAIR(k) & 0xff));
	}
	size_t n = 0, i = 0;
	for (; i + 32 <= len && i + 34 <= avail; i += 32) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(in + i + 1));
		__m256i b = _mm256_loadu_si256((const __m256i *)(in + i + 2));
		__m256i m = _mm256_setzero_si256();
		for (unsigned k = 0; k < 8; k++)
			m = _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(a, hi[k]),
			                                        _mm256_cmpeq_epi8(b, lo[k])));
		uint32_t bits = (uint32_t)_mm256_movemask_epi8(m);
		while (bits) {
			size_t at = i + (size_t)__builtin_ctz(bits);
			bits &= bits - 1;
			unsigned pair = (unsigned)in[at + 1] << 8 | in[at + 2], shifts = 0;
			for (unsigned k = 0; k < 8; k++)
				shifts |= (unsigned)(PAIR(k) == pair) << k;
			if (n == cap) {
				*resume = at;
				return n;
			}
			n += zn_bz2_scan_check(in, at, avail, shifts, pos + n);
		}
	}
	if (n == cap) {
		*resume = i;
		return n;
	}
	size_t more = zn_bz2_scan_generic(in + i, len - i, avail - i, pos + n, cap - n, resume);
	for (size_t k = n; k < n + more; k++)
		pos[k] += 8 * (uint64_t)i;
	*resume += i;
	return n + more;
}

zn_bz2_scan_fn zn_bz2_select_scan(uint32_t f, const char **name)
{
	if (f & ZN_CPU_AVX2) {
		if (name)
			*name = "avx2";
		return scan_avx2;
	}
	if (name)
		*name = "generic";
	return zn_bz2_scan_generic;
}

zn_bz2_crc_fn zn_bz2_select_crc(uint32_t f)
{
	(void)f;
	return zn_bz2_crc_generic;
}
