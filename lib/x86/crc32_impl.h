/* SPDX-License-Identifier: MIT */
/* crc32_impl.h - the x86 CRC-32 kernels (PCLMULQDQ, VPCLMULQDQ with AVX2 and AVX-512). */
/*
 * Included once, from lib/checksum/crc32.c, after crc32_slice_update() and crc32_tables.h. It
 * defines CRC32_ARCH_VARIANTS, the kernels this compiler can build, best first.
 *
 * How folding works. Read 16 bytes of the message as a 128-bit lane R; in the bit-reflected order
 * CRC-32 uses, bit k of R is the coefficient of x^(127-k), and the lane stands for R(x) * x^N where
 * N counts the message bits after it. Split R = L * x^64 + H (L = low qword, the earlier bytes).
 * Moving R forward by D bits is multiplying by x^D, and modulo P that is
 *     L * (x^(D+64) mod P) + H * (x^D mod P),
 * two 64x32-bit carry-less products whose sum fits in 128 bits again, so it can be XORed onto the
 * lane D bits further on. A reflected 64x64 product comes out one bit short of the 128-bit
 * reflected frame (bit k holds x^(126-k)), so the constants carry one factor of x less:
 * x^(D+63) and x^(D-1) (crc32_fold[D/128] in crc32_tables.h). The loops keep 4 lanes (or 4
 * vectors of lanes) in flight so the 6-8 cycle multiply latency overlaps, then fold the lanes
 * into one and that one down to 32 bits with crc32_reduce128(). Fewer than 16 bytes left over
 * go through the table.
 */
#include <immintrin.h>

#define CRC32_PCLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

/* R * x^D + next, for one 128-bit lane; k = D / 128. */
static inline CRC32_PCLMUL_TARGET __m128i crc32_fold128(__m128i r, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(r, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(r, k, 0x11);
	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

static inline CRC32_PCLMUL_TARGET __m128i crc32_k128(int k)
{
	return _mm_set_epi64x((long long)crc32_fold[k][1], (long long)crc32_fold[k][0]);
}

/*
 * The CRC register for a lane R with nothing after it: R * x^32 mod P.
 *  1. R * x^32 = L * x^96 + H * x^32  ==  V = L * (x^96 mod P) + H * x^32, of degree < 96
 *     (H * x^32 is H moved to bits 32..95; the product lands in bits 32..127).
 *  2. V = Vh * x^64 + Vl  ==  W = Vh * (x^64 mod P) + Vl, of degree < 64 (the high qword).
 *  3. Barrett: W = A * x^32 + B, q = floor(A * mu / x^32) with mu = floor(x^64 / P); then
 *     W mod P = B + (q * P mod x^32). With mu and P pre-multiplied by x^31, q lands in the low
 *     qword of the first product, already in the reflected 64-bit frame, and the low 32 terms
 *     of q * P land in the low half of the second product's high qword.
 */
static inline CRC32_PCLMUL_TARGET uint32_t crc32_reduce128(__m128i r)
{
	const __m128i k = _mm_set_epi64x((long long)CRC32_K63, (long long)CRC32_K95);
	const __m128i b = _mm_set_epi64x((long long)CRC32_POLY, (long long)CRC32_MU);
	__m128i v = _mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00),
	                          _mm_slli_si128(_mm_srli_si128(r, 8), 4));
	v = _mm_xor_si128(_mm_clmulepi64_si128(v, k, 0x10), v);
	uint64_t w = (uint64_t)_mm_extract_epi64(v, 1);
	__m128i q = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)(w << 32)), b, 0x00);
	__m128i t = _mm_clmulepi64_si128(q, b, 0x10);
	return (uint32_t)(w >> 32) ^ (uint32_t)_mm_extract_epi64(t, 1);
}

#define FUNC_NAME crc32_pclmul
#define TARGET    CRC32_PCLMUL_TARGET
#define VL        16
#include "crc32_pclmul_template.h"

#define FUNC_NAME crc32_vpclmul_avx2
#define TARGET    __attribute__((target("pclmul,sse4.1,avx2,vpclmulqdq")))
#define VL        32
#include "crc32_pclmul_template.h"

#define FUNC_NAME crc32_vpclmul_avx512
#define TARGET    __attribute__((target("pclmul,sse4.1,avx2,avx512f,avx512vl,vpclmulqdq")))
#define VL        64
#include "crc32_pclmul_template.h"

/* clang-format off */
#define CRC32_ARCH_VARIANTS \
	{"vpclmul-avx512", ZN_CPU_VPCLMUL | ZN_CPU_PCLMUL | ZN_CPU_SSE4_1 | ZN_CPU_AVX2 | \
			   ZN_CPU_AVX512F | ZN_CPU_AVX512VL, crc32_vpclmul_avx512}, \
	{"vpclmul-avx2", ZN_CPU_VPCLMUL | ZN_CPU_PCLMUL | ZN_CPU_SSE4_1 | ZN_CPU_AVX2, \
			 crc32_vpclmul_avx2}, \
	{"pclmul", ZN_CPU_PCLMUL | ZN_CPU_SSE4_1, crc32_pclmul},
/* clang-format on */
