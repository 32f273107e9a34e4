/* SPDX-License-Identifier: MIT */
/* bench_bzip2.c - bzip2 decoding: znippy at each thread count against libbz2 and the command-line
 * peers (bzip2, lbzip2, pbzip2, ibzip2), alternated, and the per-stage profile of one thread. */
/*
 * Usage: bench_bzip2 [-r REPS] [-T LIST] [-p PEER]... [--stages] FILE.bz2...
 *   -r REPS     runs of each (default 3; the best is kept; runs of the tools alternate, so that a
 *               burst of load on the shared machine hits all of them alike)
 *   -T LIST     znippy's thread counts, comma-separated (default 1,2)
 *   -p PEER     a command run as PEER FILE > /dev/null, e.g. -p 'bzip2 -dc' -p 'lbzip2 -dc -n 1'
 *               -p '/tmp/peers/bin/ibzip2 -d -c -P 2'; its wall and user+system times are taken
 *   --stages    only the profile: every block decoded on this thread, the CPU time of each stage
 *               (Huffman + move-to-front + zero runs; links; walk; RLE1; CRC) per output byte
 * Prints a table: seconds (wall, and CPU of the process or thread), MB/s of output, and each
 * tool's speed relative to libbz2's in this process.
 */
#include <bzlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bzip2/bzip2_internal.h"
#include "common/cpu_features.h"
#include "znippy.h"

static double now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static zn_result count_sink(void *ctx, const void *d, size_t n)
{
	(void)d;
	*(uint64_t *)ctx += n;
	return ZN_OK;
}

/* ---- the per-stage profile ----------------------------------------------------------------- */

enum { S_SYMBOLS, S_LINKS, S_WALK, S_RLE1, S_CRC, S_N };
static const char *stage_names[S_N] = {"Huffman+MTF+runs", "links (T vector)", "walk (inverse BWT)",
                                       "RLE1 + size", "CRC"};

/* Decodes every block of every stream in order on this thread, timing the stages. */
static int profile(const uint8_t *in, size_t len)
{
	static struct bz2_block b;
	if (zn_bz2_block_init(&b, zn_cpu_features()) != ZN_OK)
		return 1;
	uint8_t *out = malloc(64u << 20);
	double t[S_N] = {0};
	uint64_t bytes = 0, blocks = 0, pos = 0; /* pos: bits */
	while (pos / 8 + 4 <= len && !memcmp(in + pos / 8, "BZh", 3)) {
		pos += 32;
		for (;;) {
			uint64_t w = zn_get_be64(in + pos / 8) << (pos % 8) >> 16;
			if (w != BZ2_BLOCK_MAGIC)
				break;
			double t0 = now(CLOCK_THREAD_CPUTIME_ID);
			if (zn_bz2_read_block(&b, in, len, pos, BZ2_MAX_BLOCK) != ZN_OK) {
				fprintf(stderr, "bench_bzip2: block at bit %llu failed\n",
				        (unsigned long long)pos);
				return 1;
			}
			double t1 = now(CLOCK_THREAD_CPUTIME_ID);
			zn_bz2_make_links(&b);
			double t2 = now(CLOCK_THREAD_CPUTIME_ID);
			zn_bz2_walk(&b);
			double t3 = now(CLOCK_THREAD_CPUTIME_ID);
			int bad;
			uint64_t size = zn_bz2_rle1_size(b.ll, b.n, &bad);
			struct bz2_rle1 r;
			zn_bz2_rle1_start(&r, b.ll, b.n);
			size_t got = zn_bz2_rle1_expand(&r, out, (size_t)ZN_MIN(size, 64u << 20));
			double t4 = now(CLOCK_THREAD_CPUTIME_ID);
			uint32_t crc = ~b.k.crc(~0u, out, got);
			double t5 = now(CLOCK_THREAD_CPUTIME_ID);
			if (crc != b.crc || b.rand) {
				fprintf(stderr, "bench_bzip2: block CRC mismatch\n");
				return 1;
			}
			t[S_SYMBOLS] += t1 - t0, t[S_LINKS] += t2 - t1, t[S_WALK] += t3 - t2;
			t[S_RLE1] += t4 - t3, t[S_CRC] += t5 - t4;
			bytes += got;
			blocks++;
			pos = b.end_bit;
		}
		pos = (pos + 80 + 7) & ~(uint64_t)7;
	}
	double all = 0;
	for (int s = 0; s < S_N; s++)
		all += t[s];
	printf("per-stage profile, one thread (kernels: symbols %s, scan %s): %llu blocks, %llu "
	       "bytes out\n",
	       b.k.symbols_name, b.k.scan_name, (unsigned long long)blocks,
	       (unsigned long long)bytes);
	printf("| stage | CPU s | ns/byte out | share |\n|---|---:|---:|---:|\n");
	for (int s = 0; s < S_N; s++)
		printf("| %s | %.3f | %.2f | %.1f%% |\n", stage_names[s], t[s],
		       t[s] / (double)bytes * 1e9, 100 * t[s] / all);
	printf("| all | %.3f | %.2f | 100%% |\n", all, all / (double)bytes * 1e9);
	free(out);
	zn_bz2_block_free(&b);
	return 0;
}

/* ---- throughput ---------------------------------------------------------------------------- */

struct tool {
	const char *name;
	unsigned threads; /* znippy; 0: libbz2 or a peer */
	const char *cmd;  /* a peer command, else NULL */
	double best_wall, best_cpu;
};

/* libbz2's streaming decoder, as bzip2 -d uses it (several streams in a row). */
static uint64_t run_libbz2(const uint8_t *in, size_t len)
{
	static char buf[1 << 16];
	uint64_t total = 0;
	size_t pos = 0;
	while (pos < len) {
		bz_stream s;
		memset(&s, 0, sizeof(s));
		if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
			return 0;
		s.next_in = (char *)in + pos;
		s.avail_in = (unsigned)ZN_MIN(len - pos, 1u << 30);
		int r;
		do {
			s.next_out = buf;
			s.avail_out = sizeof(buf);
			r = BZ2_bzDecompress(&s);
			total += sizeof(buf) - s.avail_out;
		} while (r == BZ_OK);
		pos = (size_t)((const uint8_t *)s.next_in - in);
		BZ2_bzDecompressEnd(&s);
		if (r != BZ_STREAM_END)
			return 0;
	}
	return total;
}

static double run_peer(const char *cmd, const char *file, double *cpu)
{
	char *line = malloc(strlen(cmd) + strlen(file) + 32);
	sprintf(line, "%s '%s' > /dev/null", cmd, file);
	double t0 = now(CLOCK_MONOTONIC);
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	wait4(pid, &st, 0, &ru);
	double t = now(CLOCK_MONOTONIC) - t0;
	*cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	free(line);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? t : -1;
}

static int bench_file(const char *file, const uint8_t *in, size_t len, struct tool *tools,
                      int ntools, int reps)
{
	uint64_t out = run_libbz2(in, len);
	if (!out) {
		fprintf(stderr, "bench_bzip2: %s: libbz2 cannot decode it\n", file);
		return 1;
	}
	for (int t = 0; t < ntools; t++)
		tools[t].best_wall = tools[t].best_cpu = 1e30;
	for (int rep = 0; rep < reps; rep++)
		for (int t = 0; t < ntools; t++) {
			double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID), cpu;
			double wall;
			if (tools[t].cmd) {
				wall = run_peer(tools[t].cmd, file, &cpu);
			} else if (!tools[t].threads) {
				wall = run_libbz2(in, len) == out ? now(CLOCK_MONOTONIC) - w0 : -1;
				cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
			} else {
				struct zn_bunzip2_options o;
				zn_bunzip2_options_init(&o);
				o.threads = tools[t].threads;
				uint64_t got = 0;
				zn_result r = zn_bunzip2_mem(&o, in, len, count_sink, &got, NULL);
				wall = r == ZN_OK && got == out ? now(CLOCK_MONOTONIC) - w0 : -1;
				cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
			}
			if (wall < 0) {
				fprintf(stderr, "bench_bzip2: %s failed on %s\n", tools[t].name,
				        file);
				return 1;
			}
			tools[t].best_wall = ZN_MIN(tools[t].best_wall, wall);
			tools[t].best_cpu = ZN_MIN(tools[t].best_cpu, cpu);
		}
	printf("%s: %zu bytes in, %llu out; best of %d, alternated\n", file, len,
	       (unsigned long long)out, reps);
	printf("| tool | wall s | CPU s | MB/s | vs libbz2 (wall) |\n|---|---:|---:|---:|---:|\n");
	for (int t = 0; t < ntools; t++)
		printf("| %s | %.3f | %.3f | %.1f | %.2fx |\n", tools[t].name, tools[t].best_wall,
		       tools[t].best_cpu, (double)out / tools[t].best_wall / 1e6,
		       tools[0].best_wall / tools[t].best_wall);
	return 0;
}

int main(int argc, char **argv)
{
	struct tool tools[32] = {{"libbz2", 0, NULL, 0, 0}};
	int ntools = 1, reps = 3, stages = 0, i = 1;
	const char *tlist = "1,2";
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-T") && i + 1 < argc)
			tlist = argv[++i];
		else if (!strcmp(argv[i], "-p") && i + 1 < argc && ntools < 24)
			tools[ntools].name = tools[ntools].cmd = argv[++i], ntools++;
		else if (!strcmp(argv[i], "--stages"))
			stages = 1;
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr,
		        "usage: bench_bzip2 [-r REPS] [-T 1,2] [-p 'PEER ARGS']... [--stages] "
		        "FILE.bz2...\n");
		return 2;
	}
	static char names[8][16];
	for (const char *p = tlist; *p && ntools < 32;) {
		unsigned t = (unsigned)strtoul(p, (char **)&p, 10);
		char *name = names[ntools % 8];
		snprintf(name, sizeof(names[0]), "znippy -T%u", t);
		tools[ntools] = (struct tool){name, t, NULL, 0, 0};
		ntools++;
		p += *p == ',';
	}
	int rc = 0;
	for (; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) || st.st_size == 0) {
			fprintf(stderr, "bench_bzip2: cannot read %s\n", argv[i]);
			return 1;
		}
		const uint8_t *in = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		rc |= stages ? profile(in, (size_t)st.st_size)
		             : bench_file(argv[i], in, (size_t)st.st_size, tools, ntools, reps);
		munmap((void *)in, (size_t)st.st_size);
	}
	return rc;
}
