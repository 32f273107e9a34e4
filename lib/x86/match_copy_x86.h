/* SPDX-License-Identifier: MIT */
/* match_copy_x86.h - LZ match copies for x86-64 (SSSE3, AVX2, AVX-512), shared by the DEFLATE and
 * zstd decoders: a short period is held in a register and advanced by one shuffle per store. */
#ifndef ZN_MATCH_COPY_X86_H
#define ZN_MATCH_COPY_X86_H

#include <immintrin.h>

#include "common/common.h"

/*
 * Contract of every copy here: copy(out, offset, length) with 1 <= offset <= out - base and
 * length >= 1 writes out[0..length) as an LZ77 copy from out - offset, may write up to 64 bytes
 * past out + length - 1 (the callers keep that much slack), and reads nothing at or after
 * out + length except bytes it has just written.
 *
 * Match copies by distance class. Every variant over-copies in whole vectors (the callers' fast
 * loops keep the slack), so a typical match of under 32 bytes is one load
 * and one store with no length-dependent branch.
 *   offset >= vector width: plain unaligned loads/stores; each load reads only bytes written
 *     before it.
 *   offset 1: a broadcast of the byte.
 *   offset 2..15: the period is expanded into a register once (one load, one pshufb with
 *     index i % offset); each further store advances the pattern by one pshufb with index
 *     (W + i) % offset -- no load inside the loop, so no store-to-load forwarding stalls,
 *     which is what the word-at-a-time copy of short periods suffers from.
 */
#define SHUF_ROW(o, a)                                                                             \
	{                                                                                          \
		(a + 0) % o, (a + 1) % o, (a + 2) % o, (a + 3) % o, (a + 4) % o, (a + 5) % o,      \
		        (a + 6) % o, (a + 7) % o, (a + 8) % o, (a + 9) % o, (a + 10) % o,          \
		        (a + 11) % o, (a + 12) % o, (a + 13) % o, (a + 14) % o, (a + 15) % o       \
	}
#define SHUF_TABLE(a)                                                                              \
	{                                                                                          \
		SHUF_ROW(1, a), SHUF_ROW(1, a), SHUF_ROW(2, a), SHUF_ROW(3, a), SHUF_ROW(4, a),    \
		        SHUF_ROW(5, a), SHUF_ROW(6, a), SHUF_ROW(7, a), SHUF_ROW(8, a),            \
		        SHUF_ROW(9, a), SHUF_ROW(10, a), SHUF_ROW(11, a), SHUF_ROW(12, a),         \
		        SHUF_ROW(13, a), SHUF_ROW(14, a), SHUF_ROW(15, a)                          \
	}
static const uint8_t shuf_init[16][16] __attribute__((aligned(16))) = SHUF_TABLE(0);
static const uint8_t shuf_adv16[16][16] __attribute__((aligned(16))) = SHUF_TABLE(16);
static const uint8_t shuf_adv32[16][16] __attribute__((aligned(16))) = SHUF_TABLE(32);

#define ATTR_BMI2   __attribute__((target("bmi2,ssse3")))
#define ATTR_AVX2   __attribute__((target("avx2,bmi2")))
#define ATTR_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,bmi2")))

/* 16-byte copies (BMI2 variant; every BMI2 CPU has SSSE3). */
static ATTR_BMI2 ZN_FORCEINLINE void copy_ssse3(uint8_t *out, uint32_t offset, uint32_t length)
{
	const uint8_t *src = out - offset;
	uint8_t *const end = out + length;
	if (offset >= 16) {
		do {
			_mm_storeu_si128((__m128i *)out, _mm_loadu_si128((const __m128i *)src));
			out += 16, src += 16;
		} while (out < end);
		return;
	}
	if (offset >= 8 && length <= 16) { /* as in the 32-byte copies below */
		zn_put_le64(out, zn_get_le64(src));
		zn_put_le64(out + 8, zn_get_le64(src + 8));
		return;
	}
	__m128i v;
	if (offset == 1) {
		v = _mm_set1_epi8((char)src[0]);
		do {
			_mm_storeu_si128((__m128i *)out, v);
			out += 16;
		} while (out < end);
		return;
	}
	v = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)src),
	                     _mm_load_si128((const __m128i *)shuf_init[offset]));
	const __m128i adv = _mm_load_si128((const __m128i *)shuf_adv16[offset]);
	do {
		_mm_storeu_si128((__m128i *)out, v);
		v = _mm_shuffle_epi8(v, adv);
		out += 16;
	} while (out < end);
}

/* 32-byte copies for AVX2 and AVX-512 (vpshufb works per 128-bit lane; the same in-lane index
 * (32 + i) % offset advances both lanes by 32 bytes). */
#define DEFINE_COPY32(name, attr)                                                                  \
	static attr ZN_FORCEINLINE void name(uint8_t *out, uint32_t offset, uint32_t length)       \
	{                                                                                          \
		const uint8_t *src = out - offset;                                                 \
		uint8_t *const end = out + length;                                                 \
		if (offset >= 32) {                                                                \
			do {                                                                       \
				_mm256_storeu_si256((__m256i *)out,                                \
				                    _mm256_loadu_si256((const __m256i *)src));     \
				out += 32, src += 32;                                              \
			} while (out < end);                                                       \
			return;                                                                    \
		}                                                                                  \
		if (offset >= 16) {                                                                \
			do {                                                                       \
				_mm_storeu_si128((__m128i *)out,                                   \
				                 _mm_loadu_si128((const __m128i *)src));           \
				out += 16, src += 16;                                              \
			} while (out < end);                                                       \
			return;                                                                    \
		}                                                                                  \
		if (offset >= 8 && length <= 16) {                                                 \
			/* Short match with a period of 8..15 (an int64 column: ~7 bytes at        \
			 * distance 8): two word copies are cheaper than setting up the shuffle.   \
			 */                                                                        \
			zn_put_le64(out, zn_get_le64(src));                                        \
			zn_put_le64(out + 8, zn_get_le64(src + 8));                                \
			return;                                                                    \
		}                                                                                  \
		__m256i v;                                                                         \
		if (offset == 1) {                                                                 \
			v = _mm256_set1_epi8((char)src[0]);                                        \
			do {                                                                       \
				_mm256_storeu_si256((__m256i *)out, v);                            \
				out += 32;                                                         \
			} while (out < end);                                                       \
			return;                                                                    \
		}                                                                                  \
		__m128i lo = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)src),               \
		                              _mm_load_si128((const __m128i *)shuf_init[offset])); \
		__m128i hi =                                                                       \
		        _mm_shuffle_epi8(lo, _mm_load_si128((const __m128i *)shuf_adv16[offset])); \
		v = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);                    \
		const __m256i adv = _mm256_broadcastsi128_si256(                                   \
		        _mm_load_si128((const __m128i *)shuf_adv32[offset]));                      \
		do {                                                                               \
			_mm256_storeu_si256((__m256i *)out, v);                                    \
			v = _mm256_shuffle_epi8(v, adv);                                           \
			out += 32;                                                                 \
		} while (out < end);                                                               \
	}
DEFINE_COPY32(copy_avx2, ATTR_AVX2)
DEFINE_COPY32(copy32_avx512, ATTR_AVX512)

/* AVX-512: matches longer than 32 bytes with a period of 1, 2, 4 or 8 bytes (runs of a
 * repeated byte, int16, int32 or int64 value) are filled 64 bytes per store from a broadcast,
 * without any shuffle; everything else is copied as in the AVX2 variant. */
static ATTR_AVX512 ZN_FORCEINLINE void copy_avx512(uint8_t *out, uint32_t offset, uint32_t length)
{
	const uint8_t *src = out - offset;
	uint8_t *const end = out + length;
	if (offset >= 32) {
		/* 64-byte copies here measured 5-7% slower on the tar and text corpora (the
		 * 512-bit stores cost more than the halved store count gives back), so only
		 * the broadcast below, which run-heavy columns need, uses zmm registers. */
		do {
			_mm256_storeu_si256((__m256i *)out,
			                    _mm256_loadu_si256((const __m256i *)src));
			out += 32, src += 32;
		} while (out < end);
		return;
	}
	if (length > 32 && offset <= 8 && !(offset & (offset - 1))) {
		uint64_t p = zn_get_le64(src); /* src[0..7]: offset is at most 8 bytes back */
		p = offset == 8   ? p
		    : offset == 4 ? (p & 0xffffffffu) * 0x0000000100000001ull
		    : offset == 2 ? (p & 0xffffu) * 0x0001000100010001ull
		                  : (p & 0xffu) * 0x0101010101010101ull;
		const __m512i v = _mm512_set1_epi64((long long)p);
		do {
			_mm512_storeu_si512(out, v);
			out += 64;
		} while (out < end);
		return;
	}
	copy32_avx512(out, offset, length);
}

#endif
