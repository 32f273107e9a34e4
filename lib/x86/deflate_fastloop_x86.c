/* SPDX-License-Identifier: MIT */
/* deflate_fastloop_x86.c - x86-64 variants of the DEFLATE fast loop: BMI2, AVX2, AVX-512. */
#include "common/cpu_features.h"
#include "deflate/deflate_internal.h"
#include "x86/match_copy_x86.h"

/* bzhi takes the bit count from the low byte of the entry as is. */
#define EXTRA_BMI2(bits, e) (_bzhi_u64((bits), (e)) >> (((e) >> 8) & 63))

#define FL_NAME              fastloop_bmi2
#define FL_ATTR              ATTR_BMI2
#define FL_COPY(o, off, len) copy_ssse3(o, off, len)
#define FL_EXTRA(bits, e)    EXTRA_BMI2(bits, e)
#include "deflate/deflate_fastloop.h"

#define FL_NAME              fastloop_avx2
#define FL_ATTR              ATTR_AVX2
#define FL_COPY(o, off, len) copy_avx2(o, off, len)
#define FL_EXTRA(bits, e)    EXTRA_BMI2(bits, e)
#include "deflate/deflate_fastloop.h"

#define FL_NAME              fastloop_avx512
#define FL_ATTR              ATTR_AVX512
#define FL_COPY(o, off, len) copy_avx512(o, off, len)
#define FL_EXTRA(bits, e)    EXTRA_BMI2(bits, e)
#include "deflate/deflate_fastloop.h"

zn_fastloop_fn zn_select_fastloop(uint32_t f, const char **name)
{
	const uint32_t avx512 = ZN_CPU_AVX512F | ZN_CPU_AVX512BW | ZN_CPU_AVX512VL;
	const char *n = "generic";
	zn_fastloop_fn fn = zn_fastloop_generic;
	if ((f & (avx512 | ZN_CPU_AVX2 | ZN_CPU_BMI2)) == (avx512 | ZN_CPU_AVX2 | ZN_CPU_BMI2))
		n = "avx512", fn = fastloop_avx512;
	else if ((f & (ZN_CPU_AVX2 | ZN_CPU_BMI2)) == (ZN_CPU_AVX2 | ZN_CPU_BMI2))
		n = "avx2", fn = fastloop_avx2;
	else if ((f & (ZN_CPU_BMI2 | ZN_CPU_SSSE3)) == (ZN_CPU_BMI2 | ZN_CPU_SSSE3))
		n = "bmi2", fn = fastloop_bmi2;
	if (name)
		*name = n;
	return fn;
}

/*
 * Joining literals (see deflate_tables.c) with AVX2: all 4096 root entries, eight at a time:
 * entry i's next codewords decode as t[i >> l1] and t[(i >> l1) >> l2], fetched with two
 * gathers, and the joined entry is blended in where they are literals that fit. In place,
 * from the top down: the gathered indices are below the group being written or inside it
 * (read before the store), so they still hold single literals. ~25 vector instructions per 8
 * entries instead of ~30 scalar instructions per entry: table building fell from 41% to 17% of the
 * instructions of base64 decoding (level 6, 17 KB blocks).
 */
static ATTR_AVX2 void pair_literals_avx2(uint32_t *t, const uint8_t *lens, const uint16_t *rev_of)
{
	(void)lens, (void)rev_of;
	const __m256i fifteen = _mm256_set1_epi32(15), litmask = _mm256_set1_epi32(HD_LIT_MASK);
	const __m256i ff00 = _mm256_set1_epi32(0xff00), one = _mm256_set1_epi32(HD_LIT_ONE);
	const __m256i fits = _mm256_set1_epi32(LITLEN_TABLEBITS + 1), zero = _mm256_setzero_si256();
	const __m256i eight = _mm256_set1_epi32(8);
	const unsigned n = 1u << LITLEN_TABLEBITS;
	__m256i idx = _mm256_setr_epi32(n - 8, n - 7, n - 6, n - 5, n - 4, n - 3, n - 2, n - 1);
	for (unsigned i = n - 8;; i -= 8) {
		__m256i e1 = _mm256_loadu_si256((const __m256i *)(t + i));
		__m256i l1 = _mm256_and_si256(e1, fifteen);
		__m256i j = _mm256_srlv_epi32(idx, l1);
		__m256i e2 = _mm256_i32gather_epi32((const int *)t, j, 4);
		__m256i l2 = _mm256_and_si256(e2, fifteen);
		__m256i e3 = _mm256_i32gather_epi32((const int *)t, _mm256_srlv_epi32(j, l2), 4);
		__m256i l3 = _mm256_and_si256(e3, fifteen);
		__m256i two = _mm256_add_epi32(
		        _mm256_add_epi32(e1, l2),
		        _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(e2, ff00), 8), one));
		__m256i three = _mm256_add_epi32(
		        _mm256_add_epi32(two, l3),
		        _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(e3, ff00), 16), one));
		__m256i lit1 = _mm256_cmpgt_epi32(_mm256_and_si256(e1, litmask), zero);
		__m256i lit2 = _mm256_cmpgt_epi32(_mm256_and_si256(e2, litmask), zero);
		__m256i lit3 = _mm256_cmpgt_epi32(_mm256_and_si256(e3, litmask), zero);
		__m256i s12 = _mm256_add_epi32(l1, l2);
		__m256i ok2 = _mm256_and_si256(_mm256_and_si256(lit1, lit2),
		                               _mm256_cmpgt_epi32(fits, s12));
		__m256i ok3 = _mm256_and_si256(_mm256_and_si256(ok2, lit3),
		                               _mm256_cmpgt_epi32(fits, _mm256_add_epi32(s12, l3)));
		__m256i r = _mm256_blendv_epi8(e1, two, ok2);
		r = _mm256_blendv_epi8(r, three, ok3);
		_mm256_storeu_si256((__m256i *)(t + i), r);
		if (i == 0)
			break;
		idx = _mm256_sub_epi32(idx, eight);
	}
}

/* The same, sixteen entries at a time with mask registers instead of blends: half the cost of
 * the AVX2 version in perf samples (13% -> 6% of base64's level-1 decode, where a new table
 * comes every 16 K symbols). */
static ATTR_AVX512 void pair_literals_avx512(uint32_t *t, const uint8_t *lens,
                                             const uint16_t *rev_of)
{
	(void)lens, (void)rev_of;
	const __m512i fifteen = _mm512_set1_epi32(15), litmask = _mm512_set1_epi32(HD_LIT_MASK);
	const __m512i ff00 = _mm512_set1_epi32(0xff00), one = _mm512_set1_epi32(HD_LIT_ONE);
	const __m512i fits = _mm512_set1_epi32(LITLEN_TABLEBITS + 1);
	const __m512i sixteen = _mm512_set1_epi32(16);
	const unsigned n = 1u << LITLEN_TABLEBITS;
	__m512i idx = _mm512_add_epi32(
	        _mm512_set1_epi32((int)(n - 16)),
	        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	for (unsigned i = n - 16;; i -= 16) {
		__m512i e1 = _mm512_loadu_si512(t + i);
		__m512i l1 = _mm512_and_si512(e1, fifteen);
		__m512i j = _mm512_srlv_epi32(idx, l1);
		__m512i e2 = _mm512_i32gather_epi32(j, (const int *)t, 4);
		__m512i l2 = _mm512_and_si512(e2, fifteen);
		__m512i e3 = _mm512_i32gather_epi32(_mm512_srlv_epi32(j, l2), (const int *)t, 4);
		__m512i l3 = _mm512_and_si512(e3, fifteen);
		__m512i two = _mm512_add_epi32(
		        _mm512_add_epi32(e1, l2),
		        _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(e2, ff00), 8), one));
		__m512i three = _mm512_add_epi32(
		        _mm512_add_epi32(two, l3),
		        _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(e3, ff00), 16), one));
		__m512i s12 = _mm512_add_epi32(l1, l2);
		__mmask16 ok2 = _mm512_test_epi32_mask(e1, litmask) &
		                _mm512_test_epi32_mask(e2, litmask) &
		                _mm512_cmplt_epi32_mask(s12, fits);
		__mmask16 ok3 = ok2 & _mm512_test_epi32_mask(e3, litmask) &
		                _mm512_cmplt_epi32_mask(_mm512_add_epi32(s12, l3), fits);
		__m512i r = _mm512_mask_blend_epi32(ok2, e1, two);
		r = _mm512_mask_blend_epi32(ok3, r, three);
		_mm512_storeu_si512(t + i, r);
		if (i == 0)
			break;
		idx = _mm512_sub_epi32(idx, sixteen);
	}
}

zn_pair_fn zn_select_pair(uint32_t f)
{
	if (f & ZN_CPU_AVX512F)
		return pair_literals_avx512;
	if (f & ZN_CPU_AVX2)
		return pair_literals_avx2;
	return zn_pair_literals_generic;
}
