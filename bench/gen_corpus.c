/* SPDX-License-Identifier: MIT */
/* gen_corpus.c - deterministic text-like and random corpora for the archive benchmark.
 *
 * Built and run by bench/make_corpora.sh (plain `cc -O2`, no dependencies, so it runs on a stock
 * Debian 12 without the znippy build). Every byte is a function of the seed and the scale, never of
 * the machine, the time or the thread schedule:
 *
 *   gen_corpus small  DIR SEED NFILES [PART NPARTS]   ~10 KiB (+-50%) text files, 100 per
 * directory, 10 top-level directories; PART/NPARTS splits the top-level directories between
 * processes gen_corpus large  FILE SEED BYTES                 one log-like text file gen_corpus
 * random FILE SEED BYTES                 xoshiro256** output gen_corpus text   FILE SEED BYTES KIND
 * one text blob (prose|code|json|xml|log), used by make_mixed.py for README/class/pom-like content
 *
 * The text model: a vocabulary of 32768 pronounceable pseudo-words drawn from syllables, used with
 * a Zipf(1.1) rank distribution, mixed with code-like, JSON and XML lines that carry numbers, hex
 * ids and timestamps. Tuned so that `tar | zstd -3` keeps about a third of the bytes (English prose
 * compresses to ~30% with zstd -3; pure Zipf words without the numeric fields went to ~22%, which
 * flatters every compressor). Each file is seeded by (seed, file number), so files do not depend on
 * each other and the parts can be generated in parallel with identical output.
 *
 * All files and directories get the mtime FIXED_MTIME, so archives of the corpus are reproducible.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define FIXED_MTIME   1704067200 /* 2024-01-01T00:00:00Z */
#define VOCAB         32768
#define FILES_PER_DIR 100
#define TOP_DIRS      10

/* ---- PRNG: splitmix64 to seed xoshiro256** ----------------------------------------------------
 */
struct rng {
	uint64_t s[4];
};

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *g, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		g->s[i] = splitmix(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t next(struct rng *g)
{
	uint64_t *s = g->s, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static inline uint32_t below(struct rng *g, uint32_t n)
{
	return (uint32_t)(((next(g) >> 32) * (uint64_t)n) >> 32);
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "gen_corpus: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

/* ---- output buffer ------------------------------------------------------------------------------
 */
struct buf {
	char *p;
	size_t len, cap;
};

static void reserve(struct buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return;
	while (b->len + more > b->cap)
		b->cap = b->cap ? b->cap * 2 : 1 << 16;
	b->p = realloc(b->p, b->cap);
	if (!b->p) {
		fprintf(stderr, "gen_corpus: out of memory\n");
		exit(1);
	}
}

static inline void put(struct buf *b, const char *s, size_t n)
{
	reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static inline void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void putf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void putf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	reserve(b, 256);
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, 256, fmt, ap);
	va_end(ap);
	if (n >= 256)
		n = 255;
	b->len += (size_t)n;
}

/* ---- vocabulary and Zipf sampling ---------------------------------------------------------------
 */
static char *words[VOCAB];
static uint8_t word_len[VOCAB];
static uint32_t zipf_cdf[VOCAB]; /* scaled to 2^32 */

static void build_vocab(uint64_t seed)
{
	static const char *onset[] = {"b",  "c",  "d",   "f",  "g",  "h",  "j",  "k",  "l",
	                              "m",  "n",  "p",   "r",  "s",  "t",  "v",  "w",  "z",
	                              "br", "ch", "cl",  "cr", "dr", "fl", "gr", "pl", "pr",
	                              "sh", "st", "str", "th", "tr", "",   ""};
	static const char *nucleus[] = {"a", "e", "i", "o", "u", "ea", "ou", "ai", "io", "y", "ee"};
	static const char *coda[] = {"",  "",   "",   "n",  "r",  "s", "t",
	                             "l", "nd", "st", "ng", "ck", "m"};
	struct rng g;
	rng_seed(&g, seed ^ 0x766f636162756c61ull);
	for (int i = 0; i < VOCAB; i++) {
		char w[64];
		int n = 0;
		/* frequent words are short, as in natural language */
		int syl = 1 + (i > 64) + (i > 2048 ? (int)below(&g, 2) : 0) +
		          (i > 12000 ? (int)below(&g, 2) : 0);
		for (int s = 0; s < syl; s++) {
			const char *a = onset[below(&g, sizeof onset / sizeof *onset)];
			const char *b = nucleus[below(&g, sizeof nucleus / sizeof *nucleus)];
			const char *c = coda[below(&g, sizeof coda / sizeof *coda)];
			n += snprintf(w + n, sizeof w - (size_t)n, "%s%s%s", a, b, c);
		}
		words[i] = strdup(w);
		word_len[i] = (uint8_t)n;
	}
	double sum = 0, acc = 0;
	for (int i = 0; i < VOCAB; i++)
		sum += 1.0 / pow(i + 1, 1.1);
	for (int i = 0; i < VOCAB; i++) {
		acc += 1.0 / pow(i + 1, 1.1) / sum;
		double v = acc * 4294967296.0;
		zipf_cdf[i] = v >= 4294967295.0 ? 0xffffffffu : (uint32_t)v;
	}
	zipf_cdf[VOCAB - 1] = 0xffffffffu;
}

static inline int zipf(struct rng *g)
{
	uint32_t u = (uint32_t)(next(g) >> 32);
	int lo = 0, hi = VOCAB - 1;
	while (lo < hi) {
		int mid = (lo + hi) >> 1;
		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline void word(struct buf *b, struct rng *g)
{
	int w = zipf(g);
	put(b, words[w], word_len[w]);
}

static void words_n(struct buf *b, struct rng *g, int n, char sep)
{
	for (int i = 0; i < n; i++) {
		if (i)
			put(b, &sep, 1);
		word(b, g);
	}
}

static void hex(struct buf *b, struct rng *g, int digits)
{
	static const char x[] = "0123456789abcdef";
	reserve(b, (size_t)digits);
	uint64_t r = next(g);
	for (int i = 0; i < digits; i++) {
		if (i % 16 == 15)
			r = next(g);
		b->p[b->len++] = x[r & 15];
		r >>= 4;
	}
}

/* ---- line generators ----------------------------------------------------------------------------
 */
static void prose_paragraph(struct buf *b, struct rng *g)
{
	int sentences = 2 + (int)below(g, 6);
	int col = 0;
	for (int s = 0; s < sentences; s++) {
		int n = 5 + (int)below(g, 18);
		for (int i = 0; i < n; i++) {
			size_t start = b->len;
			word(b, g);
			if (i == 0 && b->p[start] >= 'a' && b->p[start] <= 'z')
				b->p[start] -= 32;
			if (below(g, 40) == 0)
				putf(b, " %u", below(g, 2000));
			if (i + 1 < n && below(g, 12) == 0)
				put(b, ",", 1);
			col += (int)(b->len - start) + 1;
			if (i + 1 < n) {
				if (col > 90) {
					put(b, "\n", 1);
					col = 0;
				} else {
					put(b, " ", 1);
				}
			}
		}
		put(b, below(g, 8) ? ". " : "? ", 2);
	}
	put(b, "\n\n", 2);
}

static void ident(struct buf *b, struct rng *g)
{
	int parts = 1 + (int)below(g, 3);
	words_n(b, g, parts, '_');
}

static void code_line(struct buf *b, struct rng *g, int *depth)
{
	static const char *types[] = {"int",          "size_t", "uint32_t",      "char *",
	                              "const char *", "double", "struct node *", "bool"};
	for (int i = 0; i < *depth; i++)
		put(b, "    ", 4);
	switch (below(g, 10)) {
	case 0:
		if (*depth < 4) {
			puts_(b, "if (");
			ident(b, g);
			puts_(b, below(g, 2) ? " != NULL) {\n" : " > 0) {\n");
			(*depth)++;
			return;
		}
		/* fall through */
	case 1:
		if (*depth > 1) {
			b->len -= 4;
			puts_(b, "}\n");
			(*depth)--;
			return;
		}
		/* fall through */
	case 2:
		puts_(b, types[below(g, 8)]);
		put(b, " ", 1);
		ident(b, g);
		putf(b, " = %u;\n", below(g, 1u << (4 * (1 + below(g, 6)))));
		return;
	case 3:
		puts_(b, "/* ");
		words_n(b, g, 4 + (int)below(g, 8), ' ');
		puts_(b, " */\n");
		return;
	case 4:
		puts_(b, "return ");
		ident(b, g);
		puts_(b, ";\n");
		return;
	case 5:
		puts_(b, "log_debug(\"");
		words_n(b, g, 3 + (int)below(g, 5), ' ');
		puts_(b, ": %d\", ");
		ident(b, g);
		puts_(b, ");\n");
		return;
	default:
		ident(b, g);
		puts_(b, "->");
		ident(b, g);
		puts_(b, " = ");
		ident(b, g);
		put(b, "(", 1);
		ident(b, g);
		puts_(b, below(g, 2) ? ", 0x" : ", ");
		hex(b, g, 2 + (int)below(g, 6));
		puts_(b, ");\n");
		return;
	}
}

static void code_block(struct buf *b, struct rng *g)
{
	puts_(b, "static int ");
	ident(b, g);
	puts_(b, "(struct ");
	ident(b, g);
	puts_(b, " *ctx, size_t len)\n{\n");
	int depth = 1, n = 6 + (int)below(g, 20);
	for (int i = 0; i < n; i++)
		code_line(b, g, &depth);
	while (depth-- > 1) {
		for (int i = 0; i <= depth; i++)
			put(b, "    ", 4);
		puts_(b, "}\n");
	}
	puts_(b, "}\n\n");
}

static void json_record(struct buf *b, struct rng *g, uint64_t *id)
{
	*id += 1 + below(g, 50);
	putf(b, "  {\"id\": %llu, \"name\": \"", (unsigned long long)*id);
	words_n(b, g, 1 + (int)below(g, 3), ' ');
	puts_(b, "\", \"uuid\": \"");
	hex(b, g, 8);
	put(b, "-", 1);
	hex(b, g, 4);
	puts_(b, "-4");
	hex(b, g, 3);
	put(b, "-", 1);
	hex(b, g, 4);
	put(b, "-", 1);
	hex(b, g, 12);
	putf(b, "\", \"score\": %u.%02u, \"active\": %s, \"tags\": [", below(g, 1000),
	     below(g, 100), below(g, 3) ? "true" : "false");
	int t = (int)below(g, 4);
	for (int i = 0; i < t; i++) {
		puts_(b, i ? ", \"" : "\"");
		word(b, g);
		put(b, "\"", 1);
	}
	puts_(b, "], \"note\": \"");
	words_n(b, g, 3 + (int)below(g, 10), ' ');
	puts_(b, "\"},\n");
}

static void xml_record(struct buf *b, struct rng *g, uint64_t *id)
{
	*id += 1 + below(g, 20);
	putf(b, "  <entry id=\"%llu\" rev=\"%u\">\n    <title>", (unsigned long long)*id,
	     below(g, 100));
	words_n(b, g, 2 + (int)below(g, 5), ' ');
	puts_(b, "</title>\n    <ref>");
	hex(b, g, 16);
	puts_(b, "</ref>\n    <body>");
	words_n(b, g, 6 + (int)below(g, 20), ' ');
	putf(b, "</body>\n    <value unit=\"ms\">%u</value>\n  </entry>\n", below(g, 100000));
}

static uint64_t log_clock;

static void log_line(struct buf *b, struct rng *g)
{
	static const char *lvl[] = {"INFO ", "INFO ", "INFO ", "DEBUG", "DEBUG", "WARN ", "ERROR"};
	static const char *comp[] = {"http",      "db.pool",        "cache",   "auth",
	                             "scheduler", "queue.consumer", "storage", "api.v2"};
	log_clock += below(g, 20000); /* microseconds */
	uint64_t s = log_clock / 1000000, us = log_clock % 1000000;
	uint64_t day = s / 86400, sec = s % 86400;
	putf(b, "2024-%02llu-%02lluT%02llu:%02llu:%02llu.%06lluZ %s [worker-%02u] %s - ",
	     (unsigned long long)(1 + day / 28 % 12), (unsigned long long)(1 + day % 28),
	     (unsigned long long)(sec / 3600), (unsigned long long)(sec / 60 % 60),
	     (unsigned long long)(sec % 60), (unsigned long long)us, lvl[below(g, 7)], below(g, 16),
	     comp[below(g, 8)]);
	switch (below(g, 4)) {
	case 0:
		putf(b, "GET /api/v2/");
		word(b, g);
		put(b, "/", 1);
		putf(b, "%u status=%u bytes=%u dur=%ums req=", below(g, 100000),
		     below(g, 10) ? 200 : 404 + below(g, 100), below(g, 65536), below(g, 900));
		hex(b, g, 16);
		put(b, "\n", 1);
		break;
	case 1:
		puts_(b, "user=");
		putf(b, "%u ", below(g, 50000));
		words_n(b, g, 4 + (int)below(g, 10), ' ');
		put(b, "\n", 1);
		break;
	case 2:
		putf(b, "query took %u ms rows=%u table=", below(g, 3000), below(g, 10000));
		ident(b, g);
		put(b, "\n", 1);
		break;
	default:
		words_n(b, g, 3 + (int)below(g, 14), ' ');
		putf(b, " (%u.%u.%u.%u)\n", below(g, 256), below(g, 256), below(g, 256),
		     below(g, 256));
		break;
	}
}

enum kind { K_PROSE, K_CODE, K_JSON, K_XML, K_LOG };
static const char *kind_ext[] = {"txt", "c", "json", "xml", "log"};

/* Append about `target` bytes of `kind` text to b. */
static void gen_text(struct buf *b, struct rng *g, enum kind kind, size_t target)
{
	size_t end = b->len + target;
	uint64_t id = below(g, 1000000);
	switch (kind) {
	case K_PROSE:
		puts_(b, "# ");
		words_n(b, g, 2 + (int)below(g, 5), ' ');
		puts_(b, "\n\n");
		while (b->len < end)
			prose_paragraph(b, g);
		break;
	case K_CODE:
		puts_(b, "/* ");
		words_n(b, g, 3 + (int)below(g, 6), ' ');
		puts_(b, " */\n#include <stdio.h>\n#include \"");
		ident(b, g);
		puts_(b, ".h\"\n\n");
		while (b->len < end)
			code_block(b, g);
		break;
	case K_JSON:
		puts_(b, "[\n");
		while (b->len < end)
			json_record(b, g, &id);
		puts_(b, "  {}\n]\n");
		break;
	case K_XML:
		puts_(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<entries>\n");
		while (b->len < end)
			xml_record(b, g, &id);
		puts_(b, "</entries>\n");
		break;
	case K_LOG:
		while (b->len < end)
			log_line(b, g);
		break;
	}
}

/* ---- writers ------------------------------------------------------------------------------------
 */
static void write_all(int fd, const char *p, size_t n, const char *path)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("write", path);
		}
		p += w;
		n -= (size_t)w;
	}
}

static void set_mtime(const char *path)
{
	struct timespec ts[2] = {{FIXED_MTIME, 0}, {FIXED_MTIME, 0}};
	if (utimensat(AT_FDCWD, path, ts, 0))
		die("utimensat", path);
}

static void write_file(const char *path, const char *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open", path);
	write_all(fd, p, n, path);
	struct timespec ts[2] = {{FIXED_MTIME, 0}, {FIXED_MTIME, 0}};
	futimens(fd, ts);
	if (close(fd))
		die("close", path);
}

static void mkdir_p(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		die("mkdir", path);
}

/* Stream a generated blob of `total` bytes to `path`, generating in ~4 MiB pieces. */
static void gen_stream(const char *path, uint64_t seed, uint64_t total, int kind_or_random)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open", path);
	struct rng g;
	rng_seed(&g, seed);
	struct buf b = {0};
	const size_t piece = 4u << 20;
	uint64_t done = 0;
	while (done < total) {
		size_t want = total - done < piece ? (size_t)(total - done) : piece;
		b.len = 0;
		if (kind_or_random < 0) {
			reserve(&b, want + 8);
			for (size_t i = 0; i < want; i += 8) {
				uint64_t r = next(&g);
				memcpy(b.p + i, &r, 8);
			}
			b.len = want;
		} else {
			gen_text(&b, &g, (enum kind)kind_or_random, want);
			if (b.len > want)
				b.len = want; /* cut the last line: the total is exact */
		}
		write_all(fd, b.p, b.len, path);
		done += b.len;
	}
	if (close(fd))
		die("close", path);
	set_mtime(path);
	free(b.p);
}

/* The `small` corpus: NFILES files, 100 per leaf directory, leaf directories spread over 10
 * top-level directories; file i's size, kind, name and content depend only on (seed, i). */
static void gen_small(const char *root, uint64_t seed, uint64_t nfiles, int part, int nparts)
{
	uint64_t ndirs = (nfiles + FILES_PER_DIR - 1) / FILES_PER_DIR;
	uint64_t per_top = (ndirs + TOP_DIRS - 1) / TOP_DIRS;
	mkdir_p(root);
	struct buf b = {0};
	char path[4096], name[256];
	for (uint64_t d = 0; d < ndirs; d++) {
		uint64_t top = d / per_top;
		if ((int)(top % (uint64_t)nparts) != part)
			continue;
		struct rng dg;
		rng_seed(&dg, seed * 1000003u + 77 + top);
		b.len = 0;
		word(&b, &dg);
		snprintf(path, sizeof path, "%s/%02llu-%.*s", root, (unsigned long long)top,
		         (int)b.len, b.p);
		mkdir_p(path);
		size_t toplen = strlen(path);
		rng_seed(&dg, seed * 1000003u + 99991 + d);
		b.len = 0;
		words_n(&b, &dg, 1 + (int)below(&dg, 2), '_');
		snprintf(path + toplen, sizeof path - toplen, "/%03llu_%.*s",
		         (unsigned long long)(d % per_top), (int)b.len, b.p);
		mkdir_p(path);
		size_t dirlen = strlen(path);
		for (uint64_t f = d * FILES_PER_DIR; f < (d + 1) * FILES_PER_DIR && f < nfiles;
		     f++) {
			struct rng g;
			rng_seed(&g, seed ^ (f * 0x2545f4914f6cdd1dull + 1));
			uint32_t r = below(&g, 100);
			enum kind k = r < 40 ? K_PROSE : r < 65 ? K_CODE : r < 85 ? K_JSON : K_XML;
			size_t size = 5120 + below(&g, 10241); /* 10 KiB +- 50% */
			b.len = 0;
			words_n(&b, &g, 1 + (int)below(&g, 3), '_');
			const char *ext = k == K_PROSE && below(&g, 3) == 0 ? "md" : kind_ext[k];
			snprintf(name, sizeof name, "%.*s_%05llu.%s",
			         (int)(b.len > 200 ? 200 : b.len), b.p, (unsigned long long)f, ext);
			snprintf(path + dirlen, sizeof path - dirlen, "/%s", name);
			char fpath[4096];
			memcpy(fpath, path, strlen(path) + 1);
			b.len = 0;
			gen_text(&b, &g, k, size);
			if (b.len > size)
				b.len = size;
			write_file(fpath, b.p, b.len);
		}
		path[dirlen] = 0;
		set_mtime(path);
	}
	free(b.p);
}

static void usage(void)
{
	fprintf(stderr, "usage: gen_corpus small DIR SEED NFILES [PART NPARTS]\n"
	                "       gen_corpus large|random FILE SEED BYTES\n"
	                "       gen_corpus text FILE SEED BYTES prose|code|json|xml|log\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 5)
		usage();
	const char *mode = argv[1], *out = argv[2];
	uint64_t seed = strtoull(argv[3], NULL, 0), n = strtoull(argv[4], NULL, 0);
	build_vocab(seed);
	log_clock = (seed % 1000) * 1000000ull * 3600;
	if (!strcmp(mode, "small")) {
		int part = argc > 6 ? atoi(argv[5]) : 0, nparts = argc > 6 ? atoi(argv[6]) : 1;
		gen_small(out, seed, n, part, nparts);
	} else if (!strcmp(mode, "large")) {
		gen_stream(out, seed ^ 0x6c617267, n, K_LOG);
	} else if (!strcmp(mode, "random")) {
		gen_stream(out, seed ^ 0x72616e64, n, -1);
	} else if (!strcmp(mode, "text") && argc > 5) {
		int k = -1;
		for (int i = 0; i < 5; i++)
			if (!strcmp(argv[5], i == 0 ? "prose" : kind_ext[i]))
				k = i;
		if (!strcmp(argv[5], "code"))
			k = K_CODE;
		if (k < 0)
			usage();
		gen_stream(out, seed ^ (0x74657874ull + (uint64_t)k), n, k);
	} else {
		usage();
	}
	return 0;
}
