/* SPDX-License-Identifier: MIT */
/* deflate_resolve_arm.c - marker resolution on aarch64: the portable kernel for now. */
#include "common/cpu_features.h"
#include "deflate/deflate_internal.h"

/* NEON has no gather; the portable kernel's all-bytes blocks already vectorise. */
zn_resolve_fn zn_select_resolve(uint32_t features)
{
	(void)features;
	return zn_resolve_generic;
}
