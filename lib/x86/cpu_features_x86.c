/* SPDX-License-Identifier: MIT */
/* cpu_features_x86.c - x86 CPUID/XGETBV feature detection (cached by lib/common/cpu_features.c). */
#include "common/cpu_features.h"

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__asm__ volatile("cpuid"
	                 : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
	                 : "a"(leaf), "c"(sub));
}

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

uint32_t zn_cpu_detect(void)
{
	uint32_t r[4], f = ZN_CPU_SSE2; /* baseline of x86-64 */
	cpuid(0, 0, r);
	uint32_t max_leaf = r[0];
	cpuid(1, 0, r);
	uint32_t ecx1 = r[2];
	if (ecx1 & (1u << 9))
		f |= ZN_CPU_SSSE3;
	if (ecx1 & (1u << 19))
		f |= ZN_CPU_SSE4_1;
	if (ecx1 & (1u << 1))
		f |= ZN_CPU_PCLMUL;
	uint64_t xcr0 = (ecx1 & (1u << 27)) ? xgetbv0() : 0; /* OSXSAVE */
	int os_avx = (xcr0 & 0x6) == 0x6;
	int os_avx512 = (xcr0 & 0xe6) == 0xe6;
	if (os_avx && (ecx1 & (1u << 28)))
		f |= ZN_CPU_AVX;
	if (max_leaf >= 7) {
		cpuid(7, 0, r);
		uint32_t ebx = r[1], ecx = r[2];
		if (os_avx && (ebx & (1u << 5)))
			f |= ZN_CPU_AVX2;
		if (ebx & (1u << 8))
			f |= ZN_CPU_BMI2;
		if (ebx & (1u << 29))
			f |= ZN_CPU_SHA;
		if (os_avx && (ecx & (1u << 10)))
			f |= ZN_CPU_VPCLMUL;
		if (os_avx512) {
			if (ebx & (1u << 16))
				f |= ZN_CPU_AVX512F;
			if (ebx & (1u << 30))
				f |= ZN_CPU_AVX512BW;
			if (ebx & (1u << 31))
				f |= ZN_CPU_AVX512VL;
			if (ecx & (1u << 1))
				f |= ZN_CPU_AVX512VBMI;
		}
	}
	return f;
}
