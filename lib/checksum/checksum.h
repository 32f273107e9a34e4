/* SPDX-License-Identifier: MIT */
/* checksum.h - internal view of the CRC-32 and Adler-32 kernels, for tests and benchmarks. */
#ifndef ZN_CHECKSUM_H
#define ZN_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* A CRC-32 kernel maps the raw register (not inverted) and bytes to the new register. */
typedef uint32_t (*zn_crc32_fn)(uint32_t crc, const uint8_t *p, size_t len);
/* An Adler-32 kernel maps (s2 << 16 | s1) and bytes to the new value, both sums reduced. */
typedef uint32_t (*zn_adler32_fn)(uint32_t adler, const uint8_t *p, size_t len);

struct zn_crc32_variant {
	const char *name;
	uint32_t features; /* ZN_CPU_* bits that must all be present */
	zn_crc32_fn fn;
};
struct zn_adler32_variant {
	const char *name;
	uint32_t features;
	zn_adler32_fn fn;
};

/* Every kernel compiled in, best first (the portable one last). zn_crc32() uses the first whose
 * features zn_cpu_features() reports; tests call the others directly. */
size_t zn_crc32_variants(const struct zn_crc32_variant **list);
size_t zn_adler32_variants(const struct zn_adler32_variant **list);

#endif
