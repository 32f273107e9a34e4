/* SPDX-License-Identifier: MIT */
/* test_crc32.c - zn_crc32 and every CRC-32 kernel agree with zlib on lengths, alignments, chains.
 */
#include <string.h>
#include <zlib.h>

#include "checksum/checksum.h"
#include "common/cpu_features.h"
#include "test_util.h"

/* A kernel under test, wrapped to the public calling convention. */
static zn_crc32_fn kernel;
static uint32_t via_kernel(uint32_t crc, const void *p, size_t len)
{
	return ~kernel(~crc, p, len);
}
static uint32_t via_api(uint32_t crc, const void *p, size_t len)
{
	return zn_crc32(crc, p, len);
}
typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static uint32_t ref(uint32_t crc, const uint8_t *p, size_t len)
{
	/* zlib takes uInt lengths; feed it in pieces. */
	while (len > (1u << 30)) {
		crc = (uint32_t)crc32(crc, p, 1u << 30);
		p += 1u << 30;
		len -= 1u << 30;
	}
	return (uint32_t)crc32(crc, p, (uInt)len);
}

static void check_one(const char *name, crc_fn f, uint32_t init, const uint8_t *p, size_t len)
{
	uint32_t want = ref(init, p, len), got = f(init, p, len);
	if (want != got) {
		fprintf(stderr, "%s: len %zu align %u init %08x: got %08x want %08x\n", name, len,
		        (unsigned)((uintptr_t)p & 63), init, got, want);
		CHECK(want == got);
	}
}

static void test_fn(const char *name, crc_fn f, struct tu_rng *g)
{
	/* Every alignment 0..63 with every length up to 1100, which covers each kernel's paths
	 * (table only, one lane, four lanes, whole vectors, tails) up to 4 x 4 x 64 bytes. The
	 * data sits against a guard page so any overread faults. */
	enum { MAXLEN = 1100, SPAN = MAXLEN + 64 };
	uint8_t *buf = tu_guard_alloc(SPAN);
	tu_rng_fill(g, buf, SPAN);
	for (unsigned a = 0; a < 64; a++)
		for (size_t len = 0; len + a <= MAXLEN; len++)
			check_one(name, f, (uint32_t)tu_rng_next(g), buf + SPAN - len - a, len);
	tu_guard_free(buf, SPAN);

	/* Lengths around every multiple of 16 up to 8 KiB, then random lengths up to ~1 MiB,
	 * each ending against the guard page. */
	size_t big = (1u << 20) + 4096;
	buf = tu_guard_alloc(big);
	tu_rng_fill(g, buf, big);
	for (size_t m = 16; m <= 8192; m += 16)
		for (size_t len = m - 3; len <= m + 3; len++)
			check_one(name, f, 0, buf + big - len, len);
	for (int i = 0; i < 40; i++) {
		size_t len = (size_t)tu_rng_below(g, big);
		check_one(name, f, (uint32_t)tu_rng_next(g), buf + big - len, len);
		check_one(name, f, 0, buf + tu_rng_below(g, big - len + 1), len);
	}

	/* Chains of random pieces equal one call. */
	for (int i = 0; i < 30; i++) {
		size_t len = (size_t)tu_rng_below(g, 300000), off = 0;
		const uint8_t *p = buf + tu_rng_below(g, big - len + 1);
		uint32_t crc = 0;
		while (off < len) {
			size_t n = (size_t)tu_rng_below(g, 5000);
			if (n > len - off)
				n = len - off;
			crc = f(crc, p + off, n);
			off += n;
		}
		CHECK_EQ_U64(crc, ref(0, p, len));
	}

	/* Long runs of zeros and of 0xff (the register's fixed points of a naive kernel). */
	memset(buf, 0, big);
	check_one(name, f, 0, buf, big);
	check_one(name, f, 0xffffffffu, buf, big);
	memset(buf, 0xff, big);
	check_one(name, f, 0, buf, big);
	tu_guard_free(buf, big);
}

static void test_combine(struct tu_rng *g)
{
	enum { N = 200000 };
	uint8_t *buf = malloc(N);
	tu_rng_fill(g, buf, N);
	for (int i = 0; i < 200; i++) {
		size_t len = (size_t)tu_rng_below(g, N), cut = (size_t)tu_rng_below(g, len + 1);
		uint32_t a = zn_crc32(0, buf, cut), b = zn_crc32(0, buf + cut, len - cut);
		CHECK_EQ_U64(zn_crc32_combine(a, b, len - cut), zn_crc32(0, buf, len));
	}
	/* Arbitrary registers and huge lengths, against zlib's 64-bit combine. */
	for (int i = 0; i < 2000; i++) {
		uint32_t a = (uint32_t)tu_rng_next(g), b = (uint32_t)tu_rng_next(g);
		uint64_t len2 = tu_rng_next(g) >> tu_rng_below(g, 64);
		len2 &= 0x7fffffffffffffffull; /* z_off64_t is signed */
		CHECK_EQ_U64(zn_crc32_combine(a, b, len2), crc32_combine64(a, b, (z_off64_t)len2));
	}
	CHECK_EQ_U64(zn_crc32_combine(0x12345678, 0x9abcdef0, 0), 0x12345678u ^ 0x9abcdef0u);
	free(buf);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_crc32");
	printf("seed %llu\n", (unsigned long long)tu_seed);
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);

	CHECK(zn_crc32(0, NULL, 0) == 0);
	CHECK(zn_crc32(0x1234, NULL, 10) == 0);
	CHECK(zn_crc32(0, "123456789", 9) == 0xcbf43926u); /* the CRC-32 check value */
	CHECK(zn_crc32(0x5678, "", 0) == 0x5678);

	/* Every kernel this CPU (under ZN_DISABLE_CPU_FEATURES) can run, then the dispatcher. */
	const struct zn_crc32_variant *v;
	size_t nv = zn_crc32_variants(&v);
	uint32_t f = zn_cpu_features();
	for (size_t i = 0; i < nv; i++) {
		if ((v[i].features & f) != v[i].features) {
			printf("skip %s (CPU features missing or masked)\n", v[i].name);
			continue;
		}
		printf("kernel %s\n", v[i].name);
		kernel = v[i].fn;
		test_fn(v[i].name, via_kernel, &g);
	}
	test_fn("zn_crc32", via_api, &g);
	test_combine(&g);
	printf("ok\n");
	return 0;
}
