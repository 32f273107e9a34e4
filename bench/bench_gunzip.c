/* SPDX-License-Identifier: MIT */
/* bench_gunzip.c - the parallel gzip decoder on a file: wall time, chunks used, output's CRC. */
/*
 * Usage: bench_gunzip [-T THREADS] [-c CHUNK] [-r REPS] [-w] FILE.gz...
 * Maps each FILE, decodes it with zn_gunzip_mem() REPS times (best wall time), the output
 * discarded (-w: written to /dev/null with write(2), as `gunzip -c >/dev/null` does), and prints
 * MB/s of output, the chunks used, the bytes the stitcher decoded itself, and the CRC-32 of the
 * output (to compare builds and thread counts).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "znippy.h"

static int null_fd = -1;

struct count {
	uint64_t n;
	uint32_t crc;
	int crc_on;
};

static zn_result sink(void *ctx, const void *buf, size_t len)
{
	struct count *c = ctx;
	c->n += len;
	if (c->crc_on)
		c->crc = zn_crc32(c->crc, buf, len);
	if (null_fd >= 0 && write(null_fd, buf, len) != (ssize_t)len)
		return ZN_ERR_IO;
	return ZN_OK;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	struct zn_gunzip_options o;
	zn_gunzip_options_init(&o);
	int reps = 3, opt;
	while ((opt = getopt(argc, argv, "T:c:r:w")) != -1) {
		if (opt == 'T')
			o.threads = (unsigned)atoi(optarg);
		else if (opt == 'c')
			o.chunk_size = (uint64_t)atoll(optarg) << 10;
		else if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 'w')
			null_fd = open("/dev/null", O_WRONLY);
		else
			return 2;
	}
	struct zn_gunzip *z;
	if (zn_gunzip_new(&z, &o) != ZN_OK)
		return 1;
	for (int i = optind; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st)) {
			perror(argv[i]);
			return 1;
		}
		void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			return 1;
		double best = 1e9;
		struct zn_gunzip_info info;
		struct count c = {0};
		zn_result r = ZN_OK;
		uint32_t first_crc = 0;
		for (int k = 0; k < reps; k++) {
			c = (struct count){0, 0, k == 0};
			zn_gunzip_info_init(&info);
			double t0 = now();
			r = zn_gunzip_mem(z, map, (size_t)st.st_size, sink, &c, &info);
			double t = now() - t0;
			if (t < best)
				best = t;
			if (k == 0)
				first_crc = c.crc;
		}
		printf("%s: %s, %.3f s, %.0f MB/s, %llu bytes, crc %08x, chunks %llu, "
		       "sequential %llu bytes, symbols %llu\n",
		       argv[i], zn_result_name(r), best, (double)c.n / best / 1e6,
		       (unsigned long long)c.n, first_crc, (unsigned long long)info.chunks,
		       (unsigned long long)info.seq_bytes, (unsigned long long)info.sym_bytes);
		munmap(map, (size_t)st.st_size);
		close(fd);
	}
	zn_gunzip_free(z);
	return 0;
}
