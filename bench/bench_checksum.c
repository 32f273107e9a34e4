/* SPDX-License-Identifier: MIT */
/* bench_checksum.c - CRC-32 and Adler-32 throughput of znippy against zlib, libdeflate, ISA-L. */
/*
 * Usage: bench_checksum [-n REPEATS] [-j FILE.json]
 * For 1 MiB (cache-resident) and 64 MiB (memory-bound) buffers of random bytes, each function is
 * timed best of REPEATS (default 7) by the thread's CPU time (the machines this runs on are
 * shared, and time spent preempted is not the function's), each repeat running long enough
 * (>= 20 ms) to swamp the clock's resolution. Every znippy kernel this CPU can run is listed as
 * well as the dispatched zn_crc32()/zn_adler32(). Results print as a markdown table (MB/s = 10^6
 * bytes per second and the ratio to zlib); -j also writes them as JSON.
 */
#include <isa-l/crc.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "checksum/checksum.h"
#include "common/cpu_features.h"
#include "test_util.h"

typedef uint32_t (*sum_fn)(uint32_t init, const uint8_t *p, size_t len);

static uint32_t zlib_crc(uint32_t c, const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(c, p, (uInt)n);
}
static uint32_t zlib_adler(uint32_t a, const uint8_t *p, size_t n)
{
	return (uint32_t)adler32(a, p, (uInt)n);
}
static uint32_t ld_crc(uint32_t c, const uint8_t *p, size_t n)
{
	return libdeflate_crc32(c, p, n);
}
static uint32_t ld_adler(uint32_t a, const uint8_t *p, size_t n)
{
	return libdeflate_adler32(a, p, n);
}
static uint32_t isal_crc(uint32_t c, const uint8_t *p, size_t n)
{
	return crc32_gzip_refl(c, p, n);
}
static uint32_t zn_crc(uint32_t c, const uint8_t *p, size_t n)
{
	return zn_crc32(c, p, n);
}
static uint32_t zn_adler(uint32_t a, const uint8_t *p, size_t n)
{
	return zn_adler32(a, p, n);
}
/* Kernels take the raw register; the dispatcher-free call is wrapped with the inversions. */
static zn_crc32_fn crc_kernels[8];
#define KERNEL_WRAP(i)                                                                             \
	static uint32_t crc_k##i(uint32_t c, const uint8_t *p, size_t n)                           \
	{                                                                                          \
		return ~crc_kernels[i](~c, p, n);                                                  \
	}
KERNEL_WRAP(0)
KERNEL_WRAP(1)
KERNEL_WRAP(2)
KERNEL_WRAP(3)
KERNEL_WRAP(4)
KERNEL_WRAP(5)
KERNEL_WRAP(6)
KERNEL_WRAP(7)
static const sum_fn crc_wrappers[8] = {crc_k0, crc_k1, crc_k2, crc_k3,
                                       crc_k4, crc_k5, crc_k6, crc_k7};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best-of-`repeats` throughput in MB/s; `check` is the result every call must give. */
static double measure(sum_fn f, uint32_t init, const uint8_t *buf, size_t len, int repeats,
                      uint32_t check, const char *name)
{
	double best = 0;
	for (int r = 0; r < repeats; r++) {
		size_t calls = 0;
		double t0 = now(), t;
		do {
			uint32_t v = f(init, buf, len);
			if (v != check) {
				fprintf(stderr, "%s: wrong result %08x, expected %08x\n", name, v,
				        check);
				exit(1);
			}
			calls++;
		} while ((t = now() - t0) < 0.02);
		double mbs = (double)len * calls / t / 1e6;
		if (mbs > best)
			best = mbs;
	}
	return best;
}

struct row {
	const char *algo, *name;
	sum_fn f;
	uint32_t init;
};

int main(int argc, char **argv)
{
	int repeats = 7;
	const char *json = NULL;
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "-n"))
			repeats = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-j"))
			json = argv[++i];
	}
	struct row rows[32];
	int nrows = 0;
	static char names[16][48];
	const struct zn_crc32_variant *cv;
	const struct zn_adler32_variant *av;
	size_t ncv = zn_crc32_variants(&cv), nav = zn_adler32_variants(&av);
	uint32_t feat = zn_cpu_features();

	rows[nrows++] = (struct row){"crc32", "zlib crc32", zlib_crc, 0};
	rows[nrows++] = (struct row){"crc32", "libdeflate_crc32", ld_crc, 0};
	rows[nrows++] = (struct row){"crc32", "ISA-L crc32_gzip_refl", isal_crc, 0};
	rows[nrows++] = (struct row){"crc32", "zn_crc32 (dispatched)", zn_crc, 0};
	for (size_t i = 0; i < ncv && i < 8; i++) {
		if ((cv[i].features & feat) != cv[i].features)
			continue;
		crc_kernels[i] = cv[i].fn;
		snprintf(names[i], sizeof(names[i]), "zn kernel %s", cv[i].name);
		rows[nrows++] = (struct row){"crc32", names[i], crc_wrappers[i], 0};
	}
	rows[nrows++] = (struct row){"adler32", "zlib adler32", zlib_adler, 1};
	rows[nrows++] = (struct row){"adler32", "libdeflate_adler32", ld_adler, 1};
	rows[nrows++] = (struct row){"adler32", "zn_adler32 (dispatched)", zn_adler, 1};
	for (size_t i = 0; i < nav && i < 8; i++) {
		if ((av[i].features & feat) != av[i].features)
			continue;
		snprintf(names[8 + i], sizeof(names[8 + i]), "zn kernel %s", av[i].name);
		rows[nrows++] = (struct row){"adler32", names[8 + i], av[i].fn, 1};
	}

	static const size_t sizes[] = {1u << 20, 64u << 20};
	double mbs[32][2];
	struct tu_rng g;
	tu_rng_seed(&g, 42);
	for (int s = 0; s < 2; s++) {
		size_t len = sizes[s];
		uint8_t *buf = malloc(len);
		tu_rng_fill(&g, buf, len);
		uint32_t crc_ref = zlib_crc(0, buf, len), adler_ref = zlib_adler(1, buf, len);
		for (int i = 0; i < nrows; i++) {
			int is_crc = !strcmp(rows[i].algo, "crc32");
			mbs[i][s] = measure(rows[i].f, rows[i].init, buf, len, s ? 3 : repeats,
			                    is_crc ? crc_ref : adler_ref, rows[i].name);
		}
		free(buf);
	}

	printf("| algorithm | implementation | 1 MiB MB/s | x zlib | 64 MiB MB/s | x zlib |\n");
	printf("|---|---|---:|---:|---:|---:|\n");
	double base[2] = {0, 0};
	for (int i = 0; i < nrows; i++) {
		if (!strncmp(rows[i].name, "zlib", 4))
			base[0] = mbs[i][0], base[1] = mbs[i][1];
		printf("| %s | %s | %.0f | %.2f | %.0f | %.2f |\n", rows[i].algo, rows[i].name,
		       mbs[i][0], mbs[i][0] / base[0], mbs[i][1], mbs[i][1] / base[1]);
	}
	if (json) {
		FILE *f = fopen(json, "w");
		if (!f) {
			perror(json);
			return 1;
		}
		fprintf(f, "{\"benchmark\": \"checksum\", \"cpu_features\": %u, \"results\": [\n",
		        feat);
		for (int i = 0; i < nrows; i++)
			fprintf(f,
			        "  {\"algo\": \"%s\", \"impl\": \"%s\", \"mbps_1MiB\": %.1f, "
			        "\"mbps_64MiB\": %.1f}%s\n",
			        rows[i].algo, rows[i].name, mbs[i][0], mbs[i][1],
			        i + 1 < nrows ? "," : "");
		fprintf(f, "]}\n");
		fclose(f);
	}
	return 0;
}
