/* SPDX-License-Identifier: MIT */
/* deflate_fastloop_arm.c - aarch64 NEON variant of the DEFLATE fast loop (tbl pattern copies). */
#include "arm/match_copy_arm.h"
#include "common/cpu_features.h"
#include "deflate/deflate_internal.h"

#define FL_NAME              fastloop_neon
#define FL_ATTR              /* NEON is part of the aarch64 baseline */
#define FL_COPY(o, off, len) copy_neon(o, off, len)
#define FL_EXTRA(bits, e)    (((bits) & ((1ull << ((e)&0xff)) - 1)) >> (((e) >> 8) & 63))
#include "deflate/deflate_fastloop.h"

zn_fastloop_fn zn_select_fastloop(uint32_t f, const char **name)
{
	if (f & ZN_CPU_NEON) {
		if (name)
			*name = "neon";
		return fastloop_neon;
	}
	if (name)
		*name = "generic";
	return zn_fastloop_generic;
}

zn_pair_fn zn_select_pair(uint32_t features)
{
	(void)features;
	return zn_pair_literals_generic;
}
