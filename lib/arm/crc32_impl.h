/* SPDX-License-Identifier: MIT */
/* crc32_impl.h - the aarch64 CRC-32 kernels (PMULL folding, the CRC32 instructions). */
/*
 * Included once, from lib/checksum/crc32.c, on aarch64 only (an x86 build never sees this file). It
 * defines CRC32_ARCH_VARIANTS, best first.
 *
 * "pmull" is the folding method of lib/x86/crc32_impl.h (read that comment for the algebra) with
 * 64x64 -> 128-bit PMULL in place of PCLMULQDQ: four 128-bit lanes in flight, folded by 512
 * bits per 64 bytes, then by 128 bits, then reduced to 32 bits with the same constants.
 * "crc32" uses the ARMv8 CRC32X/W/H/B instructions, which compute exactly this CRC (reflected
 * 0xEDB88320, raw register in and out); one 8-byte step per cycle or so, with a 3-cycle
 * latency, so it is the better choice on cores with a slow PMULL but no substitute for folding.
 */
#include <arm_neon.h>

#if defined(__clang__)
#define CRC32_PMULL_TARGET __attribute__((target("crypto")))
#define CRC32_ARMV8_TARGET __attribute__((target("crc")))
/* arm_acle.h declares crc32_insn_d() only when the whole file targets +crc; use the builtins. */
#define crc32_insn_b(c, v) __builtin_arm_crc32b(c, v)
#define crc32_insn_d(c, v) __builtin_arm_crc32d(c, v)
#else
#define CRC32_PMULL_TARGET __attribute__((target("+crypto")))
#define CRC32_ARMV8_TARGET __attribute__((target("+crc")))
#define crc32_insn_b(c, v) __builtin_aarch64_crc32b(c, v)
#define crc32_insn_d(c, v) __builtin_aarch64_crc32x(c, v)
#endif

static inline CRC32_PMULL_TARGET uint64x2_t crc32_pmull_lo(uint64x2_t a, uint64_t b)
{
	return vreinterpretq_u64_p128(vmull_p64((poly64_t)vgetq_lane_u64(a, 0), (poly64_t)b));
}

static inline CRC32_PMULL_TARGET uint64x2_t crc32_pmull_hi(uint64x2_t a, uint64_t b)
{
	return vreinterpretq_u64_p128(vmull_p64((poly64_t)vgetq_lane_u64(a, 1), (poly64_t)b));
}

/* r * x^(128 k) + next, one 128-bit lane (low qword = earlier bytes, as on x86). */
static inline CRC32_PMULL_TARGET uint64x2_t crc32_pmull_fold(uint64x2_t r, int k, uint64x2_t next)
{
	return veorq_u64(
	        veorq_u64(crc32_pmull_lo(r, crc32_fold[k][0]), crc32_pmull_hi(r, crc32_fold[k][1])),
	        next);
}

/* The three steps of crc32_reduce128() in lib/x86/crc32_impl.h, on 64-bit scalars. */
static inline CRC32_PMULL_TARGET uint32_t crc32_pmull_reduce(uint64x2_t r)
{
	uint64_t h = vgetq_lane_u64(r, 1);
	uint64x2_t v = veorq_u64(crc32_pmull_lo(r, CRC32_K95),
	                         vcombine_u64(vcreate_u64(h << 32), vcreate_u64(h >> 32)));
	v = veorq_u64(crc32_pmull_lo(v, CRC32_K63), v);
	uint64_t w = vgetq_lane_u64(v, 1);
	uint64x2_t q = crc32_pmull_lo(vcombine_u64(vcreate_u64(w << 32), vcreate_u64(0)), CRC32_MU);
	uint64x2_t t = crc32_pmull_lo(q, CRC32_POLY);
	return (uint32_t)(w >> 32) ^ (uint32_t)vgetq_lane_u64(t, 1);
}

static inline uint64x2_t crc32_load128(const uint8_t *p)
{
	return vreinterpretq_u64_u8(vld1q_u8(p));
}

static CRC32_PMULL_TARGET uint32_t crc32_pmull(uint32_t crc, const uint8_t *p, size_t len)
{
	if (len < 16)
		return crc32_slice_update(crc, p, len);
	uint64x2_t x = veorq_u64(crc32_load128(p), vcombine_u64(vcreate_u64(crc), vcreate_u64(0)));
	p += 16;
	len -= 16;
	if (len >= 48) {
		uint64x2_t x1 = crc32_load128(p), x2 = crc32_load128(p + 16);
		uint64x2_t x3 = crc32_load128(p + 32);
		p += 48;
		len -= 48;
		for (; len >= 64; p += 64, len -= 64) {
			x = crc32_pmull_fold(x, 4, crc32_load128(p));
			x1 = crc32_pmull_fold(x1, 4, crc32_load128(p + 16));
			x2 = crc32_pmull_fold(x2, 4, crc32_load128(p + 32));
			x3 = crc32_pmull_fold(x3, 4, crc32_load128(p + 48));
		}
		x3 = crc32_pmull_fold(x2, 1, x3);
		x3 = crc32_pmull_fold(x1, 2, x3);
		x = crc32_pmull_fold(x, 3, x3);
	}
	for (; len >= 16; p += 16, len -= 16)
		x = crc32_pmull_fold(x, 1, crc32_load128(p));
	return crc32_slice_update(crc32_pmull_reduce(x), p, len);
}

static CRC32_ARMV8_TARGET uint32_t crc32_armv8(uint32_t crc, const uint8_t *p, size_t len)
{
	for (; len && ((uintptr_t)p & 7); len--)
		crc = crc32_insn_b(crc, *p++);
	for (; len >= 32; len -= 32, p += 32) {
		crc = crc32_insn_d(crc, zn_get_le64(p));
		crc = crc32_insn_d(crc, zn_get_le64(p + 8));
		crc = crc32_insn_d(crc, zn_get_le64(p + 16));
		crc = crc32_insn_d(crc, zn_get_le64(p + 24));
	}
	for (; len >= 8; len -= 8, p += 8)
		crc = crc32_insn_d(crc, zn_get_le64(p));
	for (; len; len--)
		crc = crc32_insn_b(crc, *p++);
	return crc;
}

/* clang-format off */
#define CRC32_ARCH_VARIANTS \
	{"pmull", ZN_CPU_NEON | ZN_CPU_PMULL, crc32_pmull}, \
	{"crc32", ZN_CPU_ARM_CRC32, crc32_armv8},
/* clang-format on */
