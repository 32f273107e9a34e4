/* adler32_impl.h - the x86 Adler-32 kernels (SSSE3, AVX2, AVX-512BW). */
/*
 * Included once, from lib/adler32.c. One template (adler32_template.h) per vector width VL.
 * For a block of k vectors c = 0..k-1 of bytes b[c][j], the sums advance by
 *     s1 += sum b,   s2 += n * s1 + sum_c (k-1-c) * VL * sum_j b[c][j] + sum_c sum_j (VL-j) b[c][j]
 * The kernel keeps three vector accumulators: the byte sums so far (PSADBW against zero), the
 * running total of those sums before each vector (the (k-1-c) factor, scaled by VL at the end),
 * and the weighted sums (PMADDUBSW with weights VL..1, then PMADDWD with ones). Weights up to 64
 * keep PMADDUBSW's pairs below its 16-bit saturation (255 * (64 + 63) = 32385).
 */
#include <immintrin.h>

/* Descending weights; a kernel of width VL loads the last VL of them (VL..1). */
static const uint8_t adler32_weights[64] __attribute__((aligned(64))) = {
        64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
        42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21,
        20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9,  8,  7,  6,  5,  4,  3,  2,  1,
};

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
