/* SPDX-License-Identifier: MIT */
/* bench_zstd.c - in-memory zstd decoding speed: znippy's decoder vs libzstd (ZSTD_decompressDCtx).
 */
/*
 * Usage: bench_zstd [-m MB] [-r REPS] [-l LEVELS] [-c CORPUS,...] [-d DECODERS] [-n] [-f FILE]
 *                   [-j out.json]
 *        bench_zstd -w DIR [-m MB] [-c CORPUS,...]
 *   -m  cap on each corpus's size (default 16 MB)
 *   -r  timed runs per decoder; the best is reported (default 9)
 *   -l  zstd levels, comma-separated (default 1,3,9,19; negative levels are --fast)
 *   -c  only these corpora (names as printed)
 *   -d  only these decoders (znippy,libzstd), e.g. under callgrind
 *   -n  frames without the content checksum (default: with, as the zstd command writes them)
 *   -f  one more corpus, "file": FILE's first MB bytes
 *   -w  write each corpus to DIR/CORPUS and time nothing (bench_unzstd.py's files)
 * Each corpus is compressed once by libzstd per level (one frame, content size given), both
 * decoders' outputs are checked against the original, then each decoder decodes the whole frame
 * REPS times, alternated, so that drifts in clock speed hit both alike. Times are the thread's
 * CPU time (the machines this runs on are shared). MB/s are megabytes (1e6) of output per second
 * on one core. Prints a markdown table with the ratio znippy / libzstd per row and their
 * geometric mean.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "bench_corpora.h"

/* ---- corpora ---- */

/* Ids drawn from 10,000 values with Zipf frequencies (s = 1), by inverse transform. */
static void gen_int64_zipf(struct buf *b, struct tu_rng *g)
{
	enum { N = 10000 };
	static double cdf[N];
	static int64_t ids[N];
	double sum = 0;
	for (int i = 0; i < N; i++) {
		sum += 1.0 / (i + 1);
		cdf[i] = sum;
		ids[i] = (int64_t)tu_rng_next(g) >> 20;
	}
	while (!buf_full(b)) {
		double u = (double)(tu_rng_next(g) >> 11) / 9007199254740992.0 * sum;
		int lo = 0, hi = N - 1;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		buf_add(b, &ids[lo], 8);
	}
}

static void gen_random(struct buf *b, struct tu_rng *g)
{
	uint8_t tmp[4096];
	while (!buf_full(b)) {
		tu_rng_fill(g, tmp, sizeof(tmp));
		buf_add(b, tmp, sizeof(tmp));
	}
}

/* -f FILE: the file's first bytes, as a corpus named "file". */
static const char *file_corpus;

static void gen_file(struct buf *b, struct tu_rng *g)
{
	(void)g;
	FILE *f = file_corpus ? fopen(file_corpus, "rb") : NULL;
	if (!f)
		return;
	b->len = fread(b->p, 1, b->cap, f);
	fclose(f);
}

static const struct corpus {
	const char *name;
	void (*gen)(struct buf *, struct tu_rng *);
} corpora[] = {
        {"text", gen_text},
        {"x86-64-so", gen_binaries},
        {"int64-runs", gen_int64_runs},
        {"int64-deltas", gen_int64_deltas},
        {"int64-zipf", gen_int64_zipf},
        {"random", gen_random},
        {"file", gen_file},
};

/* -w: each corpus (its first `cap` bytes) to DIR/NAME. */
static int write_corpora(const char *dir, size_t cap, const char *only)
{
	struct buf b = {malloc(cap), 0, cap};
	for (size_t c = 0; b.p && c < sizeof(corpora) / sizeof(corpora[0]); c++) {
		if (only && !strstr(only, corpora[c].name))
			continue;
		struct tu_rng g;
		tu_rng_seed(&g, 12345 + c);
		b.len = 0;
		corpora[c].gen(&b, &g);
		if (b.len == 0)
			continue; /* "file" without -f */
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, corpora[c].name);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(b.p, 1, b.len, f) != b.len || fclose(f)) {
			perror(path);
			free(b.p);
			return 1;
		}
	}
	free(b.p);
	return 0;
}

/* ---- decoders ---- */
enum { D_ZNIPPY, D_LIBZSTD, ND };
static const char *dnames[ND] = {"znippy", "libzstd"};

static struct zn_zstd_decoder *zn;
static ZSTD_DCtx *zd;

static int decode(int which, const uint8_t *in, size_t in_len, uint8_t *out, size_t cap,
                  size_t *out_len)
{
	if (which == D_ZNIPPY) {
		struct zn_zstd_info info = {.struct_size = sizeof(info)};
		zn_result r = zn_zstd_decompress(zn, in, in_len, out, cap, &info);
		*out_len = info.out_len;
		return r == ZN_OK ? 0 : -1;
	}
	size_t n = ZSTD_decompressDCtx(zd, out, cap, in, in_len);
	*out_len = ZSTD_isError(n) ? 0 : n;
	return ZSTD_isError(n) ? -1 : 0;
}

static size_t compress(const uint8_t *src, size_t len, uint8_t *dst, size_t cap, int level,
                       int checksum)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, checksum);
	size_t n = ZSTD_compress2(cc, dst, cap, src, len);
	ZSTD_freeCCtx(cc);
	return ZSTD_isError(n) ? 0 : n;
}

int main(int argc, char **argv)
{
	size_t cap_mb = 16;
	int reps = 9, checksum = 1;
	const char *levels = "1,3,9,19", *only = NULL, *json = NULL, *which = NULL, *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-m") && i + 1 < argc)
			cap_mb = (size_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-l") && i + 1 < argc)
			levels = argv[++i];
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "-d") && i + 1 < argc)
			which = argv[++i];
		else if (!strcmp(argv[i], "-n"))
			checksum = 0;
		else if (!strcmp(argv[i], "-j") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "-w") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "-f") && i + 1 < argc)
			file_corpus = argv[++i];
		else {
			fprintf(stderr,
			        "usage: bench_zstd [-m MB] [-r REPS] [-l LEVELS] "
			        "[-c CORPUS,...] [-d DECODERS] [-n] [-f FILE] [-j out.json] | "
			        "-w DIR [-m MB] [-c CORPUS,...]\n");
			return 2;
		}
	}
	if (dir)
		return write_corpora(dir, cap_mb << 20, only);
	if (zn_zstd_decoder_new(&zn) != ZN_OK || !(zd = ZSTD_createDCtx()))
		return 1;
	const char *zn_zstd_decoder_kernel_name(const struct zn_zstd_decoder *d);
	FILE *jf = json ? fopen(json, "w") : NULL;
	if (jf)
		fprintf(jf,
		        "{\"kernel\": \"%s\", \"libzstd\": \"%s\", \"checksum\": %d, "
		        "\"results\": [\n",
		        zn_zstd_decoder_kernel_name(zn), ZSTD_versionString(), checksum);
	printf("znippy kernel: %s; libzstd %s; %s; best of %d alternated runs; MB/s of output, "
	       "one core\n\n",
	       zn_zstd_decoder_kernel_name(zn), ZSTD_versionString(),
	       checksum ? "with content checksums" : "no checksums", reps);
	printf("| corpus | level | MB | ratio | znippy | libzstd | znippy/libzstd |\n");
	printf("|---|---|---|---|---|---|---|\n");
	fflush(stdout);
	double lsum = 0, lsum_cols = 0;
	int nres = 0, ncols = 0;
	size_t cap = cap_mb << 20;
	struct buf orig = {malloc(cap), 0, cap};
	size_t ccap = ZSTD_compressBound(cap);
	uint8_t *comp = malloc(ccap);
	uint8_t *out = malloc(cap + 4096);
	for (size_t c = 0; c < sizeof(corpora) / sizeof(corpora[0]); c++) {
		if (only && !strstr(only, corpora[c].name))
			continue;
		struct tu_rng g;
		tu_rng_seed(&g, 12345 + c);
		orig.len = 0;
		corpora[c].gen(&orig, &g);
		if (orig.len == 0)
			continue;
		for (const char *lv = levels; *lv;) {
			char *next;
			int level = (int)strtol(lv, &next, 10);
			lv = *next == ',' ? next + 1 : next;
			size_t clen = compress(orig.p, orig.len, comp, ccap, level, checksum);
			if (!clen) {
				fprintf(stderr, "compression failed\n");
				return 1;
			}
			double best[ND];
			for (int d = 0; d < ND; d++) {
				size_t olen = 0;
				best[d] = 1e30;
				if (which && !strstr(which, dnames[d]))
					continue;
				memset(out, 0, orig.len);
				if (decode(d, comp, clen, out, orig.len, &olen) ||
				    olen != orig.len || memcmp(out, orig.p, olen)) {
					fprintf(stderr, "%s: wrong output on %s level %d\n",
					        dnames[d], corpora[c].name, level);
					return 1;
				}
			}
			for (int r = 0; r < reps; r++) {
				for (int d = 0; d < ND; d++) {
					size_t olen;
					if (which && !strstr(which, dnames[d]))
						continue;
					double t0 = now();
					decode(d, comp, clen, out, orig.len, &olen);
					double t = now() - t0;
					if (t < best[d])
						best[d] = t;
				}
			}
			double mbs[ND];
			for (int d = 0; d < ND; d++)
				mbs[d] = (double)orig.len / 1e6 / best[d];
			double l = log(mbs[0] / mbs[1]);
			lsum += l;
			nres++;
			if (strstr(corpora[c].name, "int64-runs") ||
			    strstr(corpora[c].name, "int64-deltas")) {
				lsum_cols += l;
				ncols++;
			}
			printf("| %s | %d | %.1f | %.2f | %.0f | %.0f | %.3f |\n", corpora[c].name,
			       level, (double)orig.len / 1e6, (double)orig.len / (double)clen,
			       mbs[0], mbs[1], mbs[0] / mbs[1]);
			fflush(stdout);
			if (jf)
				fprintf(jf,
				        "%s{\"corpus\": \"%s\", \"level\": %d, \"bytes\": %zu, "
				        "\"compressed\": %zu, \"znippy\": %.1f, \"libzstd\": "
				        "%.1f}\n",
				        nres > 1 ? "," : "", corpora[c].name, level, orig.len, clen,
				        mbs[0], mbs[1]);
		}
	}
	if (nres)
		printf("| **geometric mean** | | | | | | **%.3f** |\n", exp(lsum / nres));
	if (ncols)
		printf("| geometric mean, int64 runs and deltas | | | | | | %.3f |\n",
		       exp(lsum_cols / ncols));
	if (jf) {
		fprintf(jf, "]}\n");
		fclose(jf);
	}
	zn_zstd_decoder_free(zn);
	ZSTD_freeDCtx(zd);
	free(orig.p);
	free(comp);
	free(out);
	return 0;
}
