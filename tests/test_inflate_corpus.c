/* SPDX-License-Identifier: MIT */
/* test_inflate_corpus.c - round trips: what real compressors write, znippy must decode exactly. */
/*
 * A small corpus (about 450 KB: text, source code, a binary, random bytes, long runs, matches at
 * the far end of the window, empty and tiny files) is generated into a temporary directory and
 * compressed by every installed tool at every level (gzip, pigz, igzip, libdeflate-gzip, 7zz,
 * zopfli, bgzip) and in-process by zlib and libdeflate in all three formats. Each result is
 * decoded with zn_inflate() (input and output against guard pages, output buffer of exactly the
 * right size) and with the streaming API in random chunks; the output must match byte for byte.
 * A missing tool is skipped with a message. -s SEED changes the data and the chunking.
 *
 * With ZN_TEST_CACHE naming a directory, a tool's output is kept there under a hash of its
 * command and input, and taken from there when the same compression is asked for again:
 * scripts/run_tests.sh sets it for one run of the suite, in which this test runs eight times
 * (release, asan, each CPU-feature mask, aarch64 twice) with the same tools on the same inputs,
 * and the tools' 700-odd processes were most of its time.
 */
#include <libdeflate.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include <zlib.h>

#include "common/common.h"
#include "test_util.h"

static struct tu_rng rng;
static struct zn_inflater *dec[3];
static int n_streams, n_failed;
static const char *fmt_name[3] = {"raw", "zlib", "gzip"};

struct input {
	const char *name;
	uint8_t *data;
	size_t len;
	char *path;
};
static struct input inputs[16];
static int n_inputs;

static void add_input(const char *dir, const char *name, uint8_t *data, size_t len)
{
	struct input *in = &inputs[n_inputs++];
	in->name = name;
	in->data = data;
	in->len = len;
	in->path = tu_fmt("%s/%s", dir, name);
	CHECK(tu_write_file(in->path, data, len) == 0);
}

static uint8_t *gen_text(size_t n)
{
	static const char *words[] = {
	        "the",    "of",     "and",      "a",       "to",      "in",     "is",      "you",
	        "that",   "it",     "he",       "was",     "for",     "on",     "are",     "as",
	        "with",   "his",    "they",     "archive", "decoder", "window", "Huffman", "stream",
	        "block",  "symbol", "distance", "length",  "literal", "buffer", "zlib",    "gzip",
	        "member", "header", "checksum", "Adler",   "CRC-32",  "tables", "fast",    "loop"};
	uint8_t *p = malloc(n);
	size_t i = 0;
	while (i < n) {
		const char *w = words[tu_rng_below(&rng, ZN_ARRAY_LEN(words))];
		for (; *w && i < n; w++)
			p[i++] = (uint8_t)*w;
		if (i < n)
			p[i++] =
			        tu_rng_below(&rng, 12) ? ' ' : (tu_rng_below(&rng, 3) ? '\n' : '.');
	}
	return p;
}

/* The project's own sources, concatenated (falls back to text outside the source tree). */
static uint8_t *gen_source(size_t n, size_t *len)
{
	const char *src = getenv("ZN_SRC_DIR");
	static const char *files[] = {"lib/checksum/crc32.c",
	                              "lib/checksum/adler32.c",
	                              "tests/test_inflate_edge.c",
	                              "tests/test_util.c",
	                              "include/znippy.h",
	                              "lib/x86/crc32_impl.h",
	                              "lib/deflate/deflate_decompress.c",
	                              "tests/inflate_test_streams.h"};
	uint8_t *p = malloc(n);
	*len = 0;
	for (size_t i = 0; src && i < ZN_ARRAY_LEN(files) && *len < n; i++) {
		char *path = tu_fmt("%s/%s", src, files[i]);
		size_t fl;
		uint8_t *f = tu_read_file(path, &fl);
		free(path);
		if (!f)
			continue;
		size_t take = ZN_MIN(fl, n - *len);
		memcpy(p + *len, f, take);
		*len += take;
		free(f);
	}
	if (*len < 1000) {
		free(p);
		*len = n;
		return gen_text(n);
	}
	return p;
}

static uint8_t *gen_runs(size_t n)
{
	uint8_t *p = malloc(n);
	size_t i = 0;
	while (i < n) {
		size_t run = 1 + (size_t)tu_rng_below(&rng, tu_rng_below(&rng, 4) ? 300 : 20000);
		int period = 1 + (int)tu_rng_below(&rng, 9);
		uint8_t pat[9];
		tu_rng_fill(&rng, pat, sizeof(pat));
		if (tu_rng_below(&rng, 2))
			pat[0] = 0;
		for (size_t k = 0; k < run && i < n; k++)
			p[i++] = pat[k % (size_t)period];
	}
	return p;
}

/* Random 8 KiB pieces repeated from 32760..32768 bytes back: matches at the window's far end. */
static uint8_t *gen_far(size_t n)
{
	uint8_t *p = malloc(n);
	tu_rng_fill(&rng, p, ZN_MIN(n, 32768));
	for (size_t i = 32768; i < n; i++) {
		size_t d = 32760 + (size_t)tu_rng_below(&rng, 9);
		p[i] = (i / 8192) % 2 ? p[i - d] : (uint8_t)tu_rng_next(&rng);
	}
	return p;
}

static int have_tool(const char *t)
{
	char *cmd = tu_fmt("command -v %s >/dev/null 2>&1", t);
	int ok = system(cmd) == 0;
	free(cmd);
	return ok;
}

/* The path in ZN_TEST_CACHE of what `cmd_fmt` makes of `in`, or NULL without a cache. */
static char *cache_path(const char *cmd_fmt, const struct input *in)
{
	const char *dir = getenv("ZN_TEST_CACHE");
	if (!dir || !*dir)
		return NULL;
	XXH3_state_t *st = XXH3_createState();
	CHECK(st);
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, cmd_fmt, strlen(cmd_fmt) + 1);
	XXH3_64bits_update(st, in->data, in->len);
	unsigned long long h = (unsigned long long)XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return tu_fmt("%s/corpus-%016llx", dir, h);
}

/* What the tool wrote, from the cache when it holds it (else the output is added to it: written
 * to a name of this process's own, then renamed, since several instances run at once). */
static uint8_t *tool_output(const char *cmd, const char *outp, const char *cached, size_t *clen)
{
	uint8_t *c = cached ? tu_read_file(cached, clen) : NULL;
	if (c)
		return c;
	remove(outp);
	if (system(cmd) != 0)
		return NULL;
	c = tu_read_file(outp, clen);
	CHECK(c != NULL);
	if (cached) {
		char *tmp = tu_fmt("%s.%ld", cached, (long)getpid());
		if (tu_write_file(tmp, c, *clen) == 0)
			rename(tmp, cached);
		remove(tmp);
		free(tmp);
	}
	return c;
}

/* Decode `c` both ways and compare with the input. */
static void check_stream(const char *what, int fmt, const uint8_t *c, size_t clen,
                         const struct input *in)
{
	n_streams++;
	uint8_t *gin = tu_guard_alloc(clen);
	memcpy(gin, c, clen);
	uint8_t *out = tu_guard_alloc(in->len);
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	zn_result r = zn_inflate(dec[fmt], gin, clen, out, in->len, &info);
	if (r != ZN_OK || info.out_len != in->len || memcmp(out, in->data, in->len) ||
	    info.in_used != clen) {
		fprintf(stderr,
		        "FAILED %s (%s) on %s: %s, out %llu of %zu bytes%s, in_used %llu of %zu\n",
		        what, fmt_name[fmt], in->name, zn_result_name(r),
		        (unsigned long long)info.out_len, in->len,
		        r == ZN_OK && memcmp(out, in->data, in->len) ? " (different)" : "",
		        (unsigned long long)info.in_used, clen);
		n_failed++;
	}
	tu_guard_free(out, in->len);

	/* Streaming in random chunks of up to 64 KiB (or byte by byte for tiny streams). */
	CHECK_OK(zn_inflate_stream_reset(dec[fmt]));
	size_t pos = 0, opos = 0, maxchunk = clen < 300 ? 1 : 65536;
	int done = 0, bad = 0;
	unsigned idle = 0;
	while (!done && !bad) {
		size_t chunk = 1 + (size_t)tu_rng_below(&rng, maxchunk);
		chunk = ZN_MIN(chunk, clen - pos); /* ZN_MIN evaluates twice: not on the rng */
		size_t used = 0, olen = 0;
		const void *o = NULL;
		r = zn_inflate_stream(dec[fmt], gin + pos, chunk, pos + chunk == clen, &used, &o,
		                      &olen, &done);
		if (r != ZN_OK || used > chunk || opos + olen > in->len ||
		    (olen && memcmp(o, in->data + opos, olen)) || ++idle > 1000)
			bad = 1;
		if (used || olen)
			idle = 0;
		pos += used;
		opos += olen;
	}
	if (bad || opos != in->len) {
		fprintf(stderr,
		        "FAILED %s (%s) on %s, streaming: %s at input %zu, output %zu of %zu\n",
		        what, fmt_name[fmt], in->name, zn_result_name(r), pos, opos, in->len);
		n_failed++;
	}
	tu_guard_free(gin, clen);
}

/* Compress every input with a shell command ("%i" input path, "%o" output path). */
static void run_tool(const char *dir, const char *label, const char *cmd_fmt, int fmt,
                     size_t max_input)
{
	for (int i = 0; i < n_inputs; i++) {
		struct input *in = &inputs[i];
		if (in->len > max_input)
			continue;
		char *outp = tu_fmt("%s/out.%d", dir, fmt);
		/* Expand %i and %o. */
		char cmd[1024];
		size_t k = 0;
		for (const char *f = cmd_fmt; *f && k < sizeof(cmd) - 300; f++) {
			if (f[0] == '%' && (f[1] == 'i' || f[1] == 'o')) {
				k += (size_t)snprintf(cmd + k, sizeof(cmd) - k, "'%s'",
				                      f[1] == 'i' ? in->path : outp);
				f++;
			} else {
				cmd[k++] = *f;
			}
		}
		cmd[k] = 0;
		char *cached = cache_path(cmd_fmt, in);
		size_t clen;
		uint8_t *c = tool_output(cmd, outp, cached, &clen);
		free(cached);
		if (!c) {
			printf("note: '%s' failed on %s; not counted\n", label, in->name);
			free(outp);
			continue;
		}
		check_stream(label, fmt, c, clen, in);
		free(c);
		free(outp);
	}
}

static void tools(const char *dir)
{
	char label[64], cmd[256];
	if (have_tool("gzip")) {
		for (int l = 1; l <= 9; l++) {
			snprintf(label, sizeof(label), "gzip -%d", l);
			snprintf(cmd, sizeof(cmd), "gzip -%d -c < %%i > %%o", l);
			run_tool(dir, label, cmd, 2, SIZE_MAX);
		}
	} else {
		puts("SKIPPED gzip: not installed");
	}
	if (have_tool("pigz")) {
		run_tool(dir, "pigz", "pigz -c -p 2 < %i > %o", 2, SIZE_MAX);
		run_tool(dir, "pigz -i", "pigz -c -i -p 2 < %i > %o", 2, SIZE_MAX);
		run_tool(dir, "pigz -b 32 -9", "pigz -c -b 32 -9 -p 2 < %i > %o", 2, SIZE_MAX);
		run_tool(dir, "pigz -z (zlib)", "pigz -c -z -p 2 < %i > %o", 1, SIZE_MAX);
	} else {
		puts("SKIPPED pigz: not installed");
	}
	if (have_tool("igzip")) {
		for (int l = 0; l <= 3; l++) {
			snprintf(label, sizeof(label), "igzip -%d", l);
			snprintf(cmd, sizeof(cmd), "igzip -%d -c < %%i > %%o", l);
			run_tool(dir, label, cmd, 2, SIZE_MAX);
		}
	} else {
		puts("SKIPPED igzip: not installed");
	}
	if (have_tool("libdeflate-gzip")) {
		for (int l = 1; l <= 12; l++) {
			snprintf(label, sizeof(label), "libdeflate-gzip -%d", l);
			snprintf(cmd, sizeof(cmd), "libdeflate-gzip -%d -c %%i > %%o", l);
			run_tool(dir, label, cmd, 2, SIZE_MAX);
		}
	} else {
		puts("SKIPPED libdeflate-gzip: not installed");
	}
	if (have_tool("7zz")) {
		static const int levels[] = {1, 5, 9};
		for (size_t l = 0; l < ZN_ARRAY_LEN(levels); l++) {
			snprintf(label, sizeof(label), "7zz -tgzip -mx=%d", levels[l]);
			snprintf(cmd, sizeof(cmd),
			         "7zz a -tgzip -mx=%d -bso0 -bsp0 -bse0 %%o %%i >/dev/null",
			         levels[l]);
			run_tool(dir, label, cmd, 2, SIZE_MAX);
		}
	} else {
		puts("SKIPPED 7zz: not installed");
	}
	if (have_tool("zopfli")) {
		/* zopfli is slow: small inputs and few iterations; all three of its formats. */
		run_tool(dir, "zopfli --gzip", "zopfli --i3 -c %i > %o", 2, 70000);
		run_tool(dir, "zopfli --zlib", "zopfli --i3 --zlib -c %i > %o", 1, 70000);
		run_tool(dir, "zopfli --deflate", "zopfli --i3 --deflate -c %i > %o", 0, 70000);
	} else {
		puts("SKIPPED zopfli: not installed");
	}
	if (have_tool("bgzip")) {
		run_tool(dir, "bgzip", "bgzip -c < %i > %o", 2, SIZE_MAX);
	} else {
		puts("SKIPPED bgzip: not installed");
	}
}

static void in_process(void)
{
	static const int wbits[3] = {-15, 15, 31};
	static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE,
	                                 Z_FIXED};
	static const char *sname[] = {"default", "filtered", "huffman", "rle", "fixed"};
	for (int i = 0; i < n_inputs; i++) {
		struct input *in = &inputs[i];
		for (int fmt = 0; fmt < 3; fmt++)
			for (int level = 0; level <= 9; level++)
				for (size_t st = 0; st < ZN_ARRAY_LEN(strategies); st++) {
					/* Levels 0, 1, 3, 6, 9; the strategies at level 6. */
					if ((level % 3 && level != 1) || (st && level != 6))
						continue;
					/* Window sizes below 32 KiB (zlib header CINFO) and
					 * memLevels for level 6 only. */
					int wb = level == 6 && st == 0
					                 ? 9 + (int)tu_rng_below(&rng, 7)
					                 : 15;
					int ml = level == 6 && st == 0 ? 1 : 8;
					z_stream z;
					memset(&z, 0, sizeof(z));
					int w = fmt == 0 ? -wb : fmt == 1 ? wb : wb + 16;
					(void)wbits;
					CHECK(deflateInit2(&z, level, Z_DEFLATED, w, ml,
					                   strategies[st]) == Z_OK);
					uLong cap = deflateBound(&z, (uLong)in->len);
					uint8_t *c = malloc(cap);
					z.next_in = in->data;
					z.avail_in = (uInt)in->len;
					z.next_out = c;
					z.avail_out = (uInt)cap;
					CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
					char label[80];
					snprintf(label, sizeof(label),
					         "zlib level %d %s wbits %d memlevel %d", level,
					         sname[st], wb, ml);
					check_stream(label, fmt, c, z.total_out, in);
					deflateEnd(&z);
					free(c);
				}
		static const int ld_levels[] = {0, 1, 6, 9, 12};
		for (size_t li = 0; li < ZN_ARRAY_LEN(ld_levels); li++) {
			int level = ld_levels[li];
			struct libdeflate_compressor *lc = libdeflate_alloc_compressor(level);
			CHECK(lc != NULL);
			size_t cap = libdeflate_gzip_compress_bound(lc, in->len) + 64;
			uint8_t *c = malloc(cap);
			for (int fmt = 0; fmt < 3; fmt++) {
				size_t clen = fmt == 0 ? libdeflate_deflate_compress(
				                                 lc, in->data, in->len, c, cap)
				              : fmt == 1 ? libdeflate_zlib_compress(lc, in->data,
				                                                    in->len, c, cap)
				                         : libdeflate_gzip_compress(
				                                   lc, in->data, in->len, c, cap);
				CHECK(clen > 0);
				char label[48];
				snprintf(label, sizeof(label), "libdeflate level %d", level);
				check_stream(label, fmt, c, clen, in);
			}
			free(c);
			libdeflate_free_compressor(lc);
		}
	}
}

/* One larger stream (3.5 MB of output, far more than the streaming decoder's 256 KiB output
 * buffer and 32 KiB window), so the window slides many times with matches reaching across
 * each slide; varied data, so a wrong slide offset shows in the output. */
static void big_stream(void)
{
	size_t part = 900000, n = 0;
	struct input big = {.name = "big (3.5 MB)"};
	big.data = malloc(4 * part);
	uint8_t *pieces[4] = {gen_far(part), gen_text(part), gen_runs(part), gen_far(part)};
	for (int i = 0; i < 4; i++) {
		memcpy(big.data + n, pieces[i], part);
		n += part;
		free(pieces[i]);
	}
	big.len = n;
	static const int wbits[3] = {-15, 15, 31};
	for (int fmt = 0; fmt < 3; fmt++) {
		z_stream z;
		memset(&z, 0, sizeof(z));
		CHECK(deflateInit2(&z, fmt == 1 ? 9 : 1, Z_DEFLATED, wbits[fmt], 8,
		                   Z_DEFAULT_STRATEGY) == Z_OK);
		uLong cap = deflateBound(&z, (uLong)n);
		uint8_t *c = malloc(cap);
		z.next_in = big.data;
		z.avail_in = (uInt)n;
		z.next_out = c;
		z.avail_out = (uInt)cap;
		CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
		check_stream(fmt == 1 ? "zlib level 9, big" : "zlib level 1, big", fmt, c,
		             z.total_out, &big);
		deflateEnd(&z);
		free(c);
	}
	free(big.data);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_corpus");
	tu_rng_seed(&rng, tu_seed);
	printf("seed %llu\n", (unsigned long long)tu_seed);
	for (int f = 0; f < 3; f++)
		CHECK_OK(zn_inflater_new(&dec[f], f));
	char *dir = tu_mkdtemp();

	size_t srclen;
	uint8_t *src = gen_source(80000, &srclen);
	add_input(dir, "text.txt", gen_text(80000), 80000);
	add_input(dir, "source.c", src, srclen);
	{
		size_t n;
		uint8_t *exe = tu_read_file("/proc/self/exe", &n);
		CHECK(exe != NULL);
		add_input(dir, "binary", exe, ZN_MIN(n, (size_t)80000));
	}
	uint8_t *rnd = malloc(40000);
	tu_rng_fill(&rng, rnd, 40000);
	add_input(dir, "random.bin", rnd, 40000);
	add_input(dir, "runs.bin", gen_runs(100000), 100000);
	add_input(dir, "far.bin", gen_far(70000), 70000);
	add_input(dir, "empty", malloc(1), 0);
	uint8_t *one = malloc(1);
	one[0] = 'x';
	add_input(dir, "one", one, 1);
	add_input(dir, "small.txt", gen_text(100), 100);

	tools(dir);
	in_process();
	big_stream();

	printf("%d streams decoded, %d failures\n", n_streams, n_failed);
	for (int i = 0; i < n_inputs; i++) {
		free(inputs[i].data);
		free(inputs[i].path);
	}
	tu_rmtree(dir);
	free(dir);
	for (int f = 0; f < 3; f++)
		zn_inflater_free(dec[f]);
	return n_failed != 0;
}
