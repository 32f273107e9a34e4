/* SPDX-License-Identifier: MIT */
/* zstd_kernels_arm.c - aarch64 NEON variant of the zstd kernels (tbl pattern copies). */
#include "arm/match_copy_arm.h"
#include "common/cpu_features.h"
#include "zstd/zstd_internal.h"

static ZN_FORCEINLINE void wild_neon(uint8_t *d, const uint8_t *s, size_t n)
{
	vst1q_u8(d, vld1q_u8(s));
	for (size_t i = 16; i < n; i += 16)
		vst1q_u8(d + i, vld1q_u8(s + i));
}

#define ZS_NAME               seq_neon
#define ZS_ATTR               /* NEON is part of the aarch64 baseline */
#define ZS_COPY(op, off, len) copy_neon(op, off, len)
#define ZS_WILDCOPY(d, s, n)  wild_neon(d, s, n)
#define ZS_BZHI(x, n)         ((x) & ((1ull << (n)) - 1))
#include "zstd/zstd_seq_template.h"

void zn_zstd_select_kernels(uint32_t f, struct zs_kernels *k)
{
	zn_zstd_generic_kernels(k);
	if (f & ZN_CPU_NEON) {
		k->seq = seq_neon;
		k->name = "neon";
	}
}
