/* SPDX-License-Identifier: MIT */
/* cpu_features_arm.c - aarch64 feature detection from the kernel's HWCAP bits (cached by
 * lib/common). */
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "common/cpu_features.h"

/* Linux's HWCAP bits for aarch64 (asm/hwcap.h), spelled out so no kernel header is needed. */
#define HWCAP_ASIMD_ (1ul << 1)
#define HWCAP_PMULL_ (1ul << 4)
#define HWCAP_CRC32_ (1ul << 7)

uint32_t zn_cpu_detect(void)
{
	uint32_t f = 0;
#if defined(__linux__)
	unsigned long hw = getauxval(AT_HWCAP);
	if (hw & HWCAP_ASIMD_)
		f |= ZN_CPU_NEON;
	if (hw & HWCAP_PMULL_)
		f |= ZN_CPU_PMULL;
	if (hw & HWCAP_CRC32_)
		f |= ZN_CPU_ARM_CRC32;
#else
	f |= ZN_CPU_NEON; /* baseline of aarch64 */
#endif
	return f;
}
