/* SPDX-License-Identifier: MIT */
/* adler32_impl.h - the x86 Adler-32 kernels (SSSE3, AVX2, AVX-512BW). */
/*
 * Included once, from lib/checksum/adler32.c. One template (adler32_template.h) per vector width
 * VL. For a block of k vectors c = 0..k-1 of bytes b[c][j], the sums advance by s1 += sum b,   s2
 * += n * s1 + sum_c (k-1-c) * VL * sum_j b[c][j] + sum_c sum_j (VL-j) b[c][j] The kernel keeps
 * three vector accumulators: the byte sums so far (PSADBW against zero), the running total of those
 * sums before each vector (the (k-1-c) factor, scaled by VL at the end), and the weighted sums
 * (PMADDUBSW with weights VL..1, then PMADDWD with ones). Weights up to 64 keep PMADDUBSW's pairs
 * below its 16-bit saturation (255 * (64 + 63) = 32385).
 */
#include <immintrin.h>

/* Descending weights; a kernel of width VL loads the last VL of them (VL..1). */
static const uint8_t adler32_weights[64] __attribute__((aligned(64))) = {
        64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
        42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21,
        20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9,  8,  7,  6,  5,  4,  3,  2,  1,
};

/*
 * What the kernels leave (fewer than 2 * VL bytes): whole 16-byte chunks, then single bytes.
 * Without it a 1000-byte buffer spent 100 of its ~160 cycles in the byte loop (AVX-512 leaves
 * up to 127 bytes); per chunk the sums advance by s2 += 16 * s1 + weighted, s1 += sum. With
 * fewer than 128 bytes and reduced sums nothing here can overflow.
 */
static inline __attribute__((target("ssse3"))) uint32_t adler32_tail(uint32_t adler,
                                                                     const uint8_t *p, size_t len)
{
	uint32_t s1 = adler & 0xffff, s2 = adler >> 16;
	const __m128i w = _mm_loadu_si128((const void *)(adler32_weights + 48));
	const __m128i ones = _mm_set1_epi16(1), zero = _mm_setzero_si128();
	for (; len >= 16; len -= 16, p += 16) {
		__m128i d = _mm_loadu_si128((const void *)p);
		__m128i a = _mm_sad_epu8(d, zero);
		__m128i b = _mm_madd_epi16(_mm_maddubs_epi16(d, w), ones);
		a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0x4e));
		b = _mm_add_epi32(b, _mm_shuffle_epi32(b, 0x4e));
		b = _mm_add_epi32(b, _mm_shuffle_epi32(b, 0xb1));
		s2 += 16 * s1 + (uint32_t)_mm_cvtsi128_si32(b);
		s1 += (uint32_t)_mm_cvtsi128_si32(a);
	}
	s1 %= ADLER32_MOD;
	s2 %= ADLER32_MOD;
	return adler32_generic((s2 << 16) | s1, p, len);
}

#define FUNC_NAME adler32_ssse3
#define TARGET    __attribute__((target("ssse3")))
#define VL        16
#include "adler32_template.h"

#define FUNC_NAME adler32_avx2
#define TARGET    __attribute__((target("avx2")))
#define VL        32
#include "adler32_template.h"

#define FUNC_NAME adler32_avx512
#define TARGET    __attribute__((target("avx2,avx512f,avx512bw")))
#define VL        64
#include "adler32_template.h"

/* clang-format off */
#define ADLER32_ARCH_VARIANTS \
	{"avx512bw", ZN_CPU_AVX2 | ZN_CPU_AVX512F | ZN_CPU_AVX512BW, adler32_avx512}, \
	{"avx2", ZN_CPU_AVX2, adler32_avx2}, \
	{"ssse3", ZN_CPU_SSSE3, adler32_ssse3},
/* clang-format on */
