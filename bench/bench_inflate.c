/* SPDX-License-Identifier: MIT */
/* bench_inflate.c - in-memory gzip decoding speed: znippy vs libdeflate, ISA-L and zlib. */
/*
 * Usage: bench_inflate [-m MB] [-r REPS] [-l LEVELS] [-c CORPUS,...] [-j out.json]
 *   -m  cap on each corpus's size (default 16 MB)
 *   -r  timed runs per decoder; the best is reported (default 5)
 *   -l  gzip levels, e.g. 169 (default) or 6
 *   -c  only these corpora (names as printed)
 *   -d  only these decoders (znippy,libdeflate,isa-l,zlib), e.g. under callgrind
 * Each corpus is compressed once by zlib (deflateInit2, gzip wrapper) at each level, every
 * decoder's output is checked against the original, then each decoder decodes the whole buffer
 * REPS times, interleaved round-robin so that drifts in clock speed hit all of them alike. Times
 * are the thread's CPU time (the machines this runs on are shared). MB/s are megabytes (1e6) of
 * output per second on one core. Prints a markdown table.
 */
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "bench_corpora.h"

/* ---- corpora ---- */
static void gen_tar(struct buf *b, struct tu_rng *g)
{
	(void)g;
	add_command(b, "tar -cf - /usr/include 2>/dev/null");
}

static void gen_base64(struct buf *b, struct tu_rng *g)
{
	static const char tab[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char line[77];
	while (!buf_full(b)) {
		for (int i = 0; i < 76; i++)
			line[i] = tab[tu_rng_below(g, 64)];
		line[76] = '\n';
		buf_add(b, line, 77);
	}
}

static void gen_fastq(struct buf *b, struct tu_rng *g)
{
	/* Reads drawn from one random genome with errors: DNA repeats a lot at read level. */
	static char genome[1 << 20];
	for (size_t i = 0; i < sizeof(genome); i++)
		genome[i] = "ACGT"[tu_rng_below(g, 4)];
	char rec[512];
	for (uint64_t id = 1; !buf_full(b); id++) {
		size_t at = tu_rng_below(g, sizeof(genome) - 150);
		int n = snprintf(rec, sizeof(rec), "@SRR0000001.%llu read%llu length=150\n",
		                 (unsigned long long)id, (unsigned long long)id);
		for (int i = 0; i < 150; i++)
			rec[n + i] =
			        tu_rng_below(g, 100) ? genome[at + i] : "ACGTN"[tu_rng_below(g, 5)];
		n += 150;
		n += snprintf(rec + n, sizeof(rec) - (size_t)n, "\n+\n");
		for (int i = 0; i < 150; i++)
			rec[n + i] = (char)('!' + 20 + tu_rng_below(g, 21));
		n += 150;
		rec[n++] = '\n';
		buf_add(b, rec, (size_t)n);
	}
}

static const struct corpus {
	const char *name;
	void (*gen)(struct buf *, struct tu_rng *);
} corpora[] = {
        {"tar-usr-include", gen_tar},
        {"english-text", gen_text},
        {"x86-64-so", gen_binaries},
        {"base64", gen_base64},
        {"fastq", gen_fastq},
        {"int64-runs", gen_int64_runs},
        {"int64-deltas", gen_int64_deltas},
};

/* ---- decoders ---- */
enum { D_ZNIPPY, D_LIBDEFLATE, D_ISAL, D_ZLIB, ND };
static const char *dnames[ND] = {"znippy", "libdeflate", "isa-l", "zlib"};

static struct zn_inflater *zn;
static struct libdeflate_decompressor *ld;

static int decode(int which, const uint8_t *in, size_t in_len, uint8_t *out, size_t cap,
                  size_t *out_len)
{
	switch (which) {
	case D_ZNIPPY: {
		struct zn_inflate_info info = {.struct_size = sizeof(info)};
		zn_result r = zn_inflate(zn, in, in_len, out, cap, &info);
		*out_len = info.out_len;
		return r == ZN_OK ? 0 : -1;
	}
	case D_LIBDEFLATE:
		return libdeflate_gzip_decompress(ld, in, in_len, out, cap, out_len) ==
		                       LIBDEFLATE_SUCCESS
		               ? 0
		               : -1;
	case D_ISAL: {
		struct inflate_state st;
		isal_inflate_init(&st);
		st.next_in = (uint8_t *)in;
		st.avail_in = (uint32_t)in_len;
		st.next_out = out;
		st.avail_out = (uint32_t)cap;
		st.crc_flag = ISAL_GZIP;
		int r = isal_inflate_stateless(&st);
		*out_len = st.total_out;
		return r == ISAL_DECOMP_OK ? 0 : -1;
	}
	default: {
		z_stream s;
		memset(&s, 0, sizeof(s));
		if (inflateInit2(&s, 31) != Z_OK)
			return -1;
		s.next_in = (Bytef *)in;
		s.avail_in = (uInt)in_len;
		s.next_out = out;
		s.avail_out = (uInt)cap;
		int r = inflate(&s, Z_FINISH);
		*out_len = s.total_out;
		inflateEnd(&s);
		return r == Z_STREAM_END ? 0 : -1;
	}
	}
}

static size_t gzip_compress(const uint8_t *src, size_t len, uint8_t *dst, size_t cap, int level)
{
	z_stream s;
	memset(&s, 0, sizeof(s));
	if (deflateInit2(&s, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	s.next_in = (Bytef *)src;
	s.avail_in = (uInt)len;
	s.next_out = dst;
	s.avail_out = (uInt)cap;
	int r = deflate(&s, Z_FINISH);
	size_t n = s.total_out;
	deflateEnd(&s);
	return r == Z_STREAM_END ? n : 0;
}

int main(int argc, char **argv)
{
	size_t cap_mb = 16;
	int reps = 5;
	const char *levels = "169", *only = NULL, *json = NULL, *which = NULL;
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
		else if (!strcmp(argv[i], "-j") && i + 1 < argc)
			json = argv[++i];
		else {
			fprintf(stderr, "usage: bench_inflate [-m MB] [-r REPS] [-l LEVELS] "
			                "[-c CORPUS,...] [-j out.json]\n");
			return 2;
		}
	}
	if (zn_inflater_new(&zn, ZN_FORMAT_GZIP) != ZN_OK ||
	    !(ld = libdeflate_alloc_decompressor()))
		return 1;
	const char *zn_inflater_kernel_name(const struct zn_inflater *d);
	FILE *jf = json ? fopen(json, "w") : NULL;
	if (jf)
		fprintf(jf, "{\"kernel\": \"%s\", \"results\": [\n", zn_inflater_kernel_name(zn));
	printf("znippy kernel: %s; best of %d runs; MB/s of output, one core\n\n",
	       zn_inflater_kernel_name(zn), reps);
	printf("| corpus | level | MB | ratio | znippy | libdeflate | isa-l | zlib | zn/libdeflate "
	       "| zn/isa-l |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	fflush(stdout);
	double lsum[ND] = {0}, lsum_ld = 0, lsum_isal = 0, sub_ld[2] = {0}, sub_isal[2] = {0};
	int nsub[2] = {0};
	int nres = 0;
	size_t cap = cap_mb << 20;
	struct buf orig = {malloc(cap), 0, cap};
	uint8_t *comp = malloc(cap + cap / 10 + 65536);
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
		for (const char *lv = levels; *lv; lv++) {
			int level = *lv - '0';
			size_t clen = gzip_compress(orig.p, orig.len, comp, cap + cap / 10 + 65536,
			                            level);
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
				if (decode(d, comp, clen, out, orig.len + 4096, &olen) ||
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
					decode(d, comp, clen, out, orig.len + 4096, &olen);
					double t = now() - t0;
					if (t < best[d])
						best[d] = t;
				}
			}
			double mbs[ND];
			for (int d = 0; d < ND; d++) {
				mbs[d] = (double)orig.len / 1e6 / best[d];
				lsum[d] += log(mbs[d]);
			}
			const double l_ld = log(mbs[0] / mbs[1]), l_isal = log(mbs[0] / mbs[2]);
			lsum_ld += l_ld;
			lsum_isal += l_isal;
			nres++;
			/* Subsets reported beside the mean: without the run-heavy column (where
			 * znippy's lead is largest) and the real files only (not generated). */
			const char *cn = corpora[c].name;
			const int in_sub[2] = {strcmp(cn, "int64-runs") != 0,
			                       !strcmp(cn, "tar-usr-include") ||
			                               !strcmp(cn, "english-text") ||
			                               !strcmp(cn, "x86-64-so")};
			for (int k = 0; k < 2; k++)
				if (in_sub[k]) {
					sub_ld[k] += l_ld;
					sub_isal[k] += l_isal;
					nsub[k]++;
				}
			printf("| %s | %d | %.1f | %.2f | %.0f | %.0f | %.0f | %.0f | %.3f | %.3f "
			       "|\n",
			       corpora[c].name, level, (double)orig.len / 1e6,
			       (double)orig.len / (double)clen, mbs[0], mbs[1], mbs[2], mbs[3],
			       mbs[0] / mbs[1], mbs[0] / mbs[2]);
			fflush(stdout);
			if (jf)
				fprintf(jf,
				        "%s{\"corpus\": \"%s\", \"level\": %d, \"bytes\": %zu, "
				        "\"compressed\": %zu, \"znippy\": %.1f, \"libdeflate\": "
				        "%.1f, "
				        "\"isal\": %.1f, \"zlib\": %.1f}\n",
				        nres > 1 ? "," : "", corpora[c].name, level, orig.len, clen,
				        mbs[0], mbs[1], mbs[2], mbs[3]);
		}
	}
	if (nres) {
		printf("| **geometric mean** | | | | %.0f | %.0f | %.0f | %.0f | **%.3f** | "
		       "**%.3f** |\n",
		       exp(lsum[0] / nres), exp(lsum[1] / nres), exp(lsum[2] / nres),
		       exp(lsum[3] / nres), exp(lsum_ld / nres), exp(lsum_isal / nres));
		static const char *const sub_name[2] = {"without int64-runs",
		                                        "real files only (tar, text, x86-64)"};
		for (int k = 0; k < 2; k++)
			if (nsub[k])
				printf("| geometric mean, %s | | | | | | | | %.3f | %.3f |\n",
				       sub_name[k], exp(sub_ld[k] / nsub[k]),
				       exp(sub_isal[k] / nsub[k]));
	}
	if (jf) {
		fprintf(jf, "]}\n");
		fclose(jf);
	}
	zn_inflater_free(zn);
	libdeflate_free_decompressor(ld);
	free(orig.p);
	free(comp);
	free(out);
	return 0;
}
