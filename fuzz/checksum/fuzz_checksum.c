/* SPDX-License-Identifier: MIT */
/* fuzz_checksum.c - libFuzzer target: every CRC-32 and Adler-32 kernel agrees with zlib. */
/*
 * The input is the data; its first byte also picks a split point, so chained calls are checked
 * too. All kernels the CPU can run are tried, plus zn_crc32()/zn_adler32() and the combines.
 * The replay driver hands the input in a buffer that ends at a guard page, which is where a
 * vector kernel's overread would show.
 */
#include <stdlib.h>
#include <zlib.h>

#include "checksum/checksum.h"
#include "common/cpu_features.h"
#include "test_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t crc = (uint32_t)crc32(0, data, (uInt)size);
	uint32_t adler = (uint32_t)adler32(1, data, (uInt)size);
	uint32_t f = zn_cpu_features();
	const struct zn_crc32_variant *cv;
	const struct zn_adler32_variant *av;
	size_t ncv = zn_crc32_variants(&cv), nav = zn_adler32_variants(&av);
	for (size_t i = 0; i < ncv; i++)
		if ((cv[i].features & f) == cv[i].features && ~cv[i].fn(~0u, data, size) != crc)
			abort();
	for (size_t i = 0; i < nav; i++)
		if ((av[i].features & f) == av[i].features && av[i].fn(1, data, size) != adler)
			abort();
	size_t cut = size ? data[0] * size / 256 : 0;
	uint32_t c1 = zn_crc32(0, data, cut), a1 = zn_adler32(1, data, cut);
	if (zn_crc32(c1, data + cut, size - cut) != crc ||
	    zn_adler32(a1, data + cut, size - cut) != adler)
		abort();
	if (zn_crc32_combine(c1, zn_crc32(0, data + cut, size - cut), size - cut) != crc ||
	    zn_adler32_combine(a1, zn_adler32(1, data + cut, size - cut), size - cut) != adler)
		abort();
	return 0;
}
