/* SPDX-License-Identifier: MIT */
/* test_cpu_features.c - feature detection is stable and the test mask takes effect. */
#include <stdio.h>

#include "common/cpu_features.h"
#include "test_util.h"

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_cpu_features");
	uint32_t f = zn_cpu_features();
	CHECK(f != 0);
	CHECK(f == zn_cpu_features());
#if defined(__x86_64__)
	CHECK(f & ZN_CPU_SSE2);
	if (f & (ZN_CPU_AVX512F | ZN_CPU_AVX512BW))
		CHECK(f & ZN_CPU_AVX2);
#endif
	printf("features 0x%x\n", f);
	return 0;
}
