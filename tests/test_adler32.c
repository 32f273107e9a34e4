/* SPDX-License-Identifier: MIT */
/* test_adler32.c - zn_adler32 and every Adler-32 kernel agree with zlib; combine agrees too. */
#include <string.h>
#include <zlib.h>

#include "checksum/checksum.h"
#include "common/cpu_features.h"
#include "test_util.h"

static zn_adler32_fn kernel;
static uint32_t via_kernel(uint32_t a, const void *p, size_t len)
{
	return kernel(a, p, len);
}
static uint32_t via_api(uint32_t a, const void *p, size_t len)
{
	return zn_adler32(a, p, len);
}
typedef uint32_t (*adler_fn)(uint32_t, const void *, size_t);

static uint32_t ref(uint32_t a, const uint8_t *p, size_t len)
{
	while (len > (1u << 30)) {
		a = (uint32_t)adler32(a, p, 1u << 30);
		p += 1u << 30;
		len -= 1u << 30;
	}
	return (uint32_t)adler32(a, p, (uInt)len);
}

/* A valid Adler-32 value (both sums below 65521), as a chain could hand in. */
static uint32_t random_adler(struct tu_rng *g)
{
	return (uint32_t)(tu_rng_below(g, 65521) << 16 | tu_rng_below(g, 65521));
}

static void check_one(const char *name, adler_fn f, uint32_t init, const uint8_t *p, size_t len)
{
	uint32_t want = ref(init, p, len), got = f(init, p, len);
	if (want != got) {
		fprintf(stderr, "%s: len %zu align %u init %08x: got %08x want %08x\n", name, len,
		        (unsigned)((uintptr_t)p & 63), init, got, want);
		CHECK(want == got);
	}
}

static void test_fn(const char *name, adler_fn f, struct tu_rng *g)
{
	enum { MAXLEN = 1100, SPAN = MAXLEN + 64 };
	uint8_t *buf = tu_guard_alloc(SPAN);
	tu_rng_fill(g, buf, SPAN);
	for (unsigned a = 0; a < 64; a++)
		for (size_t len = 0; len + a <= MAXLEN; len++)
			check_one(name, f, random_adler(g), buf + SPAN - len - a, len);
	tu_guard_free(buf, SPAN);

	size_t big = (1u << 20) + 4096;
	buf = tu_guard_alloc(big);
	tu_rng_fill(g, buf, big);
	/* Around multiples of 16 up to 8 KiB and around the kernels' 16 KiB block and zlib's NMAX.
	 */
	for (size_t m = 16; m <= 8192; m += 16)
		for (size_t len = m - 3; len <= m + 3; len++)
			check_one(name, f, 1, buf + big - len, len);
	static const size_t marks[] = {5552, 2 * 5552, 16384, 32768, 65536, 3 * 16384 + 5552};
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		for (size_t len = marks[i] - 70; len <= marks[i] + 70; len++)
			check_one(name, f, random_adler(g), buf + big - len, len);
	for (int i = 0; i < 40; i++) {
		size_t len = (size_t)tu_rng_below(g, big);
		check_one(name, f, random_adler(g), buf + big - len, len);
		check_one(name, f, 1, buf + tu_rng_below(g, big - len + 1), len);
	}
	for (int i = 0; i < 30; i++) {
		size_t len = (size_t)tu_rng_below(g, 300000), off = 0;
		const uint8_t *p = buf + tu_rng_below(g, big - len + 1);
		uint32_t a = 1;
		while (off < len) {
			size_t n = (size_t)tu_rng_below(g, 5000);
			if (n > len - off)
				n = len - off;
			a = f(a, p + off, n);
			off += n;
		}
		CHECK_EQ_U64(a, ref(1, p, len));
	}
	/* All 0xff bytes are the worst case for every overflow bound; sums near the modulus too. */
	memset(buf, 0xff, big);
	check_one(name, f, 1, buf, big);
	check_one(name, f, (65520u << 16) | 65520u, buf, big);
	memset(buf, 0, big);
	check_one(name, f, (65520u << 16) | 65520u, buf, big);
	tu_guard_free(buf, big);
}

static void test_combine(struct tu_rng *g)
{
	enum { N = 200000 };
	uint8_t *buf = malloc(N);
	tu_rng_fill(g, buf, N);
	for (int i = 0; i < 200; i++) {
		size_t len = (size_t)tu_rng_below(g, N), cut = (size_t)tu_rng_below(g, len + 1);
		uint32_t a = zn_adler32(1, buf, cut), b = zn_adler32(1, buf + cut, len - cut);
		CHECK_EQ_U64(zn_adler32_combine(a, b, len - cut), zn_adler32(1, buf, len));
	}
	for (int i = 0; i < 2000; i++) {
		uint32_t a = random_adler(g), b = random_adler(g);
		uint64_t len2 = (tu_rng_next(g) >> tu_rng_below(g, 64)) & 0x7fffffffffffffffull;
		CHECK_EQ_U64(zn_adler32_combine(a, b, len2),
		             adler32_combine64(a, b, (z_off64_t)len2));
	}
	free(buf);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_adler32");
	printf("seed %llu\n", (unsigned long long)tu_seed);
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);

	CHECK(zn_adler32(0, NULL, 0) == 1);
	CHECK(zn_adler32(1, "", 0) == 1);
	CHECK(zn_adler32(1, "Wikipedia", 9) == 0x11e60398u);

	const struct zn_adler32_variant *v;
	size_t nv = zn_adler32_variants(&v);
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
	test_fn("zn_adler32", via_api, &g);
	test_combine(&g);
	printf("ok\n");
	return 0;
}
