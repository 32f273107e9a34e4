/* SPDX-License-Identifier: MIT */
/* crc32_pclmul_template.h - CRC-32 folding kernel, instantiated once per vector width. */
/*
 * No include guard: lib/x86/crc32_impl.h includes it once per variant after defining
 *   FUNC_NAME  the kernel's name,
 *   TARGET     its __attribute__((target(...))),
 *   VL         the vector width in bytes: 16 (PCLMULQDQ), 32 (VPCLMULQDQ on ymm), 64 (zmm).
 * A vector holds VL/16 independent 128-bit lanes; each is folded exactly as one lane is (see
 * crc32_impl.h), with the distance scaled to the whole group of vectors in flight.
 */
#if VL == 16
#define vec_t              __m128i
#define V_LOADU(p)         _mm_loadu_si128((const void *)(p))
#define V_XOR(a, b)        _mm_xor_si128(a, b)
#define V_XOR3(a, b, c)    _mm_xor_si128(_mm_xor_si128(a, b), c)
#define V_CLMUL(a, b, imm) _mm_clmulepi64_si128(a, b, imm)
#define V_CONST(k)         crc32_k128(k)
#define V_FROM_CRC(c)      _mm_cvtsi32_si128((int)(c))
#elif VL == 32
#define vec_t              __m256i
#define V_LOADU(p)         _mm256_loadu_si256((const void *)(p))
#define V_XOR(a, b)        _mm256_xor_si256(a, b)
#define V_XOR3(a, b, c)    _mm256_xor_si256(_mm256_xor_si256(a, b), c)
#define V_CLMUL(a, b, imm) _mm256_clmulepi64_epi128(a, b, imm)
#define V_CONST(k)         _mm256_broadcastsi128_si256(crc32_k128(k))
#define V_FROM_CRC(c)      _mm256_zextsi128_si256(_mm_cvtsi32_si128((int)(c)))
#elif VL == 64
#define vec_t              __m512i
#define V_LOADU(p)         _mm512_loadu_si512((const void *)(p))
#define V_XOR(a, b)        _mm512_xor_si512(a, b)
#define V_XOR3(a, b, c)    _mm512_ternarylogic_epi64(a, b, c, 0x96)
#define V_CLMUL(a, b, imm) _mm512_clmulepi64_epi128(a, b, imm)
#define V_CONST(k)         _mm512_broadcast_i32x4(crc32_k128(k))
#define V_FROM_CRC(c)      _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)(c)))
#else
#error "VL must be 16, 32 or 64"
#endif
/* v * x^D + next for every lane of v, with k = V_CONST(D / 128). */
#define V_FOLD(v, k, next) V_XOR3(V_CLMUL(v, k, 0x00), V_CLMUL(v, k, 0x11), next)

static TARGET uint32_t FUNC_NAME(uint32_t crc, const uint8_t *p, size_t len)
{
	if (len < 16)
		return crc32_slice_update(crc, p, len);
#if VL > 16
	/* Too short for four wide vectors: the 128-bit kernel (instantiated first) still folds
	 * four lanes at a time from 64 bytes on, instead of one lane at a time below. */
	if (len < 4 * VL)
		return crc32_pclmul(crc, p, len);
#endif
	__m128i x;
	if (len >= 4 * VL) {
		/* Four vectors in flight; the register enters as the first 32 bits of data. */
		vec_t v0 = V_XOR(V_LOADU(p), V_FROM_CRC(crc));
		vec_t v1 = V_LOADU(p + VL);
		vec_t v2 = V_LOADU(p + 2 * VL);
		vec_t v3 = V_LOADU(p + 3 * VL);
		p += 4 * VL;
		len -= 4 * VL;
		const vec_t k4 = V_CONST(4 * VL / 16);
		for (; len >= 4 * VL; p += 4 * VL, len -= 4 * VL) {
			v0 = V_FOLD(v0, k4, V_LOADU(p));
			v1 = V_FOLD(v1, k4, V_LOADU(p + VL));
			v2 = V_FOLD(v2, k4, V_LOADU(p + 2 * VL));
			v3 = V_FOLD(v3, k4, V_LOADU(p + 3 * VL));
		}
		/* Four vectors into one, then whole vectors while they last. */
		const vec_t k1 = V_CONST(VL / 16);
		v3 = V_FOLD(v2, k1, v3);
		v3 = V_FOLD(v1, V_CONST(2 * VL / 16), v3);
		v3 = V_FOLD(v0, V_CONST(3 * VL / 16), v3);
		for (; len >= VL; p += VL, len -= VL) {
			v3 = V_FOLD(v3, k1, V_LOADU(p));
		}
		/* The lanes of the last vector into one 128-bit lane. */
#if VL == 16
		x = v3;
#elif VL == 32
		x = crc32_fold128(_mm256_castsi256_si128(v3), crc32_k128(1),
		                  _mm256_extracti128_si256(v3, 1));
#else
		x = crc32_fold128(_mm512_extracti32x4_epi32(v3, 2), crc32_k128(1),
		                  _mm512_extracti32x4_epi32(v3, 3));
		x = crc32_fold128(_mm512_extracti32x4_epi32(v3, 1), crc32_k128(2), x);
		x = crc32_fold128(_mm512_castsi512_si128(v3), crc32_k128(3), x);
#endif
	} else {
		x = _mm_xor_si128(_mm_loadu_si128((const void *)p), _mm_cvtsi32_si128((int)crc));
		p += 16;
		len -= 16;
	}
	const __m128i k = crc32_k128(1);
	for (; len >= 16; p += 16, len -= 16)
		x = crc32_fold128(x, k, _mm_loadu_si128((const void *)p));
	return crc32_slice_update(crc32_reduce128(x), p, len);
}

#undef vec_t
#undef V_LOADU
#undef V_XOR
#undef V_XOR3
#undef V_CLMUL
#undef V_CONST
#undef V_FROM_CRC
#undef V_FOLD
#undef FUNC_NAME
#undef TARGET
#undef VL
