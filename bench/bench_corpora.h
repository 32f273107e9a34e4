/* SPDX-License-Identifier: MIT */
/* bench_corpora.h - the corpora the in-memory decoder benchmarks share (bench_inflate,
 * bench_zstd), so that their numbers are for the same bytes, and their clock. Header-only:
 * every function is static. */
#ifndef ZN_BENCH_CORPORA_H
#define ZN_BENCH_CORPORA_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "test_util.h"

/* The machine's own shared objects only: with both directories listed, installing the arm64
 * packages of the aarch64 test stage put aarch64 code first in sort order, and the "x86-64"
 * corpus silently became an aarch64 one (ratio 2.38 at level 1 instead of 3.50). */
#if defined(__aarch64__)
#define NATIVE_LIBDIR "/usr/lib/aarch64-linux-gnu"
#else
#define NATIVE_LIBDIR "/usr/lib/x86_64-linux-gnu"
#endif

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap)
		n = b->cap - b->len;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static int buf_full(const struct buf *b)
{
	return b->len >= b->cap;
}

static void add_command(struct buf *b, const char *cmd)
{
	FILE *f = popen(cmd, "r");
	if (!f)
		return;
	uint8_t tmp[65536];
	size_t n;
	while (!buf_full(b) && (n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		buf_add(b, tmp, n);
	pclose(f);
}

static void gen_text(struct buf *b, struct tu_rng *g)
{
	(void)g;
	add_command(b,
	            "cat /usr/share/vim/vim*/doc/*.txt /usr/share/common-licenses/* 2>/dev/null");
}

static void gen_binaries(struct buf *b, struct tu_rng *g)
{
	(void)g;
	add_command(b, "ls " NATIVE_LIBDIR "/*.so* 2>/dev/null | sort | xargs cat 2>/dev/null");
}

/* A column of int64 values in runs (ClickHouse's case for the short-offset copy). */
static void gen_int64_runs(struct buf *b, struct tu_rng *g)
{
	int64_t v = 1000;
	while (!buf_full(b)) {
		size_t run = 1 + tu_rng_below(g, 400);
		if (tu_rng_below(g, 4) == 0)
			v = (int64_t)tu_rng_below(g, 1u << 30);
		else
			v += (int64_t)tu_rng_below(g, 100);
		for (size_t i = 0; i < run && !buf_full(b); i++)
			buf_add(b, &v, 8);
	}
}

/* Timestamps: small increasing steps. */
static void gen_int64_deltas(struct buf *b, struct tu_rng *g)
{
	int64_t v = 1600000000000;
	while (!buf_full(b)) {
		v += (int64_t)tu_rng_below(g, 16);
		buf_add(b, &v, 8);
	}
}

static double now(void)
{
	struct timespec ts;
	/* CPU time of this thread: on a shared machine, time spent descheduled is not ours. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
