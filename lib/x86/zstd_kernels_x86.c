/* SPDX-License-Identifier: MIT */
/* zstd_kernels_x86.c - x86-64 variants of the zstd kernels: BMI2 (SSSE3 copies) and AVX2. */
#include "common/cpu_features.h"
#include "x86/match_copy_x86.h"
#include "zstd/zstd_internal.h"

/* Literals: 16 bytes, then two 16-byte copies per step (half the loop's overhead; int64 deltas
 * 8% faster, bench_zstd at level 3, alternated). 32-byte copies in the AVX2 kernel measured 7%
 * slower (text 10%): the match copies that follow read what they wrote, and a load spanning two
 * 32-byte stores still in flight waits for both to retire. */
static ATTR_BMI2 ZN_FORCEINLINE void wild_sse(uint8_t *d, const uint8_t *s, size_t n)
{
	_mm_storeu_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
	for (size_t i = 16; i < n; i += 32) {
		_mm_storeu_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
		_mm_storeu_si128((__m128i *)(d + i + 16),
		                 _mm_loadu_si128((const __m128i *)(s + i + 16)));
	}
}

/*
 * Match copies for zstd's mix of matches: most are short (3..16 bytes) at an offset of 16 or
 * more, so that case comes first and is one 16-byte copy; longer ones go on two 16-byte copies
 * per step (32-byte vectors where the offset allows measured no faster). Offsets 8..15 with at most
 * 16 bytes are two 8-byte words (an int64 column: 7 bytes at offset 8). Periods of 1, 2, 4 and 8
 * bytes (runs of a byte, an int16, int32 or int64 value) divide the vector: the period is broadcast
 * once and stored with no shuffle at all. Everything else -- other offsets below 16 -- is the
 * shared pattern copy (one period in a register, one shuffle per store).
 */
static ZN_FORCEINLINE uint64_t period8(const uint8_t *src, uint32_t off)
{
	uint64_t p = zn_get_le64(src); /* src[0..7]: off <= 8 bytes back, the rest just written */
	return off == 8   ? p
	       : off == 4 ? (p & 0xffffffffu) * 0x0000000100000001ull
	       : off == 2 ? (p & 0xffffu) * 0x0001000100010001ull
	                  : (p & 0xffu) * 0x0101010101010101ull;
}

static ATTR_BMI2 ZN_FORCEINLINE void zcopy_ssse3(uint8_t *op, uint32_t off, uint32_t ml)
{
	const uint8_t *src = op - off;
	if (likely(off >= 16)) {
		_mm_storeu_si128((__m128i *)op, _mm_loadu_si128((const __m128i *)src));
		for (uint32_t i = 16; i < ml; i += 32) {
			_mm_storeu_si128((__m128i *)(op + i),
			                 _mm_loadu_si128((const __m128i *)(src + i)));
			_mm_storeu_si128((__m128i *)(op + i + 16),
			                 _mm_loadu_si128((const __m128i *)(src + i + 16)));
		}
		return;
	}
	if (off >= 8 && ml <= 16) {
		zn_put_le64(op, zn_get_le64(src));
		zn_put_le64(op + 8, zn_get_le64(src + 8));
		return;
	}
	if (!(off & (off - 1))) {
		const __m128i v = _mm_set1_epi64x((long long)period8(src, off));
		for (uint32_t i = 0; i < ml; i += 16)
			_mm_storeu_si128((__m128i *)(op + i), v);
		return;
	}
	copy_ssse3(op, off, ml);
}

static ATTR_AVX2 ZN_FORCEINLINE void zcopy_avx2(uint8_t *op, uint32_t off, uint32_t ml)
{
	const uint8_t *src = op - off;
	if (likely(off >= 16)) {
		_mm_storeu_si128((__m128i *)op, _mm_loadu_si128((const __m128i *)src));
		for (uint32_t i = 16; i < ml; i += 32) {
			_mm_storeu_si128((__m128i *)(op + i),
			                 _mm_loadu_si128((const __m128i *)(src + i)));
			_mm_storeu_si128((__m128i *)(op + i + 16),
			                 _mm_loadu_si128((const __m128i *)(src + i + 16)));
		}
		return;
	}
	if (off >= 8 && ml <= 16) {
		zn_put_le64(op, zn_get_le64(src));
		zn_put_le64(op + 8, zn_get_le64(src + 8));
		return;
	}
	if (!(off & (off - 1))) {
		const __m256i v = _mm256_set1_epi64x((long long)period8(src, off));
		for (uint32_t i = 0; i < ml; i += 32)
			_mm256_storeu_si256((__m256i *)(op + i), v);
		return;
	}
	copy_avx2(op, off, ml);
}

#define ZS_NAME               seq_bmi2
#define ZS_ATTR               ATTR_BMI2
#define ZS_COPY(op, off, len) zcopy_ssse3(op, off, len)
#define ZS_WILDCOPY(d, s, n)  wild_sse(d, s, n)
#define ZS_BZHI(x, n)         _bzhi_u64(x, n)
#include "zstd/zstd_seq_template.h"

#define ZS_NAME               seq_avx2
#define ZS_ATTR               ATTR_AVX2
#define ZS_COPY(op, off, len) zcopy_avx2(op, off, len)
#define ZS_WILDCOPY(d, s, n)  wild_sse(d, s, n)
#define ZS_BZHI(x, n)         _bzhi_u64(x, n)
#include "zstd/zstd_seq_template.h"

#define ZH_NAME huf4_bmi2
#define ZH_ATTR ATTR_BMI2
#include "zstd/zstd_huf_template.h"

#define ZH_NAME huf4x2_bmi2
#define ZH_ATTR ATTR_BMI2
#define ZH_TWO  1
#include "zstd/zstd_huf_template.h"

void zn_zstd_select_kernels(uint32_t f, struct zs_kernels *k)
{
	zn_zstd_generic_kernels(k);
	if ((f & (ZN_CPU_BMI2 | ZN_CPU_SSSE3)) != (ZN_CPU_BMI2 | ZN_CPU_SSSE3))
		return;
	k->huf4 = huf4_bmi2;
	k->huf4x2 = huf4x2_bmi2;
	k->seq = seq_bmi2;
	k->name = "bmi2";
	if (f & ZN_CPU_AVX2) {
		k->seq = seq_avx2;
		k->name = "avx2";
	}
}
