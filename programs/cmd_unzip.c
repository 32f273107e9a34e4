/* SPDX-License-Identifier: MIT */
/* cmd_unzip.c - `znippy unzip`: ZIP and JAR archives listed, tested and extracted on every core,
 * with Info-ZIP unzip's common options and exit codes. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Info-ZIP unzip's exit codes (its man page, DIAGNOSTICS). */
enum {
	UZ_OK = 0,
	UZ_WARN = 1,   /* warnings: names made safe, files left alone */
	UZ_FORMAT = 2, /* damaged entries (CRC, data), the rest extracted */
	UZ_SEVERE = 3, /* a damaged or hostile directory: nothing extracted */
	UZ_NOMEM = 4,
	UZ_NOT_FOUND = 9, /* no such archive, or not a ZIP archive */
	UZ_USAGE = 10,    /* invalid options */
	UZ_NO_MATCH = 11, /* no matching files */
	UZ_DISK_FULL = 50,
	UZ_UNSUPPORTED = 81, /* unsupported method or encryption */
};

/* clang-format off */
static const char unzip_help[] =
	"Usage: znippy unzip [OPTIONS] ARCHIVE[.zip] [NAME...] [-x NAME...] [-d DIR]\n"
	"List, test or extract the entries of a ZIP archive (jar, war, apk, whl, ...), as\n"
	"Info-ZIP unzip does, decoding entries on every core. NAMEs are wildcards (* ? [..],\n"
	"'*' also matching '/'), matched against stored names; options may also follow ARCHIVE.\n"
	"An ARCHIVE with wildcards that names no file ('*.jar', quoted) is every file it\n"
	"matches, in turn, with a summary at the end.\n"
	"\n"
	"  -d DIR   extract into DIR (created if missing; default: the current directory)\n"
	"  -l       list names, sizes and times (unzip -l)\n"
	"  -v       verbose listing: method, compressed size, ratio, CRC-32 (unzip -v)\n"
	"  -Z MODE  zipinfo's modes: only -Z1, names only, one per line (zipinfo -1)\n"
	"  -t       test: decode every entry and check its CRC-32, writing nothing\n"
	"  -p       write the entries' contents to standard output, nothing else\n"
	"  -o       overwrite existing files and links without asking\n"
	"  -n       never overwrite: leave existing ones as they are\n"
	"           (neither: an existing one is left and reported, exit status 1)\n"
	"  -j       junk paths: every file into DIR itself, no directories made\n"
	"  -x NAME...  exclude entries matching the NAMEs (up to the next option)\n"
	"  -q       quiet: no per-entry lines (-qq: no summary either)\n"
	"  -T N     " THREADS_HELP("           ")
	"      --json   with -l: one JSON object per entry and line instead (name, type,\n"
	"               mode, size, csize, method, crc, mtime)\n"
	"  -h, --help   this help\n"
	"\n"
	"Names are made safe as Info-ZIP makes them: a leading '/' and '..' components are\n"
	"dropped with a warning. Nothing is written outside DIR and no write follows a symlink;\n"
	"links are made after every file. Entries whose data overlap (a zip bomb), lie outside\n"
	"the archive, or more entries than its directory can hold, refuse the whole archive.\n"
	"Methods: stored, deflate, bzip2 and zstd; others (Deflate64, LZMA, ...) and encrypted\n"
	"entries are reported and the rest extracted.\n"
	"\n"
	"Exit status (as Info-ZIP unzip): 0 success; 1 warnings (names made safe, existing files\n"
	"left); 2 entries not extracted (bad CRC or data, or in the way of something on disk),\n"
	"the others extracted; 3 a damaged or hostile archive directory, nothing extracted;\n"
	"4 out of memory; 9 archive not found or not a ZIP\n"
	"archive; 10 invalid options; 11 no matching entries; 50 disk full; 81 entries of an\n"
	"unsupported method or encrypted (not extracted).\n";
/* clang-format on */

enum { OPT_JSON = 1000, OPT_HELP };
static const char unzip_shortopts[] = "d:lvZ:tponjqx:T:h";
static const struct option unzip_options[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
};

struct uz {
	const char *archive, *dir;
	char **names, **excludes;
	int n_names, n_excludes;
	int list, verbose, z1, test, pipe, overwrite, never, junk, quiet, json;
	unsigned threads;
	int rc; /* worst exit status so far */
	struct zn_zip *z;
};

static void worse(struct uz *u, int rc)
{
	if (rc > u->rc)
		u->rc = rc;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "znippy unzip: ");
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'znippy unzip --help'.\n", stderr);
	return UZ_USAGE;
}

/* One option word (argv[*k] starts with '-'); bundles as -qo. Returns -1 to go on, else the
 * exit status. *in_x says whether names now go to the excludes. */
static int take_option(struct uz *u, int argc, char **argv, int *k, int *in_x)
{
	const char *w = argv[*k];
	if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
		fputs(unzip_help, stdout);
		return EXIT_OK;
	}
	if (!strcmp(w, "--json")) {
		u->json = 1;
		return -1;
	}
	if (w[1] == '-')
		return usage_error("unknown option '%s'", w);
	*in_x = 0;
	for (const char *p = w + 1; *p; p++) {
		const char *val = NULL;
		if (strchr("dTx", *p) || (*p == 'Z')) {
			val = p[1] ? p + 1 : (*k + 1 < argc ? argv[++*k] : NULL);
			if (!val && *p != 'x')
				return usage_error("option '-%s' needs a value", (char[]){*p, 0});
		}
		switch (*p) {
		case 'd':
			u->dir = val;
			break;
		case 'T':
			if (cli_parse_threads("unzip", val, &u->threads))
				return UZ_USAGE;
			break;
		case 'Z':
			if (strcmp(val, "1"))
				return usage_error(
				        "only -Z1 of zipinfo's modes is taken, not '-Z%s'", val);
			u->z1 = 1;
			break;
		case 'x':
			*in_x = 1;
			if (val)
				u->excludes[u->n_excludes++] = (char *)val;
			break;
		case 'l':
			u->list = 1;
			break;
		case 'v':
			u->verbose = 1;
			break;
		case 't':
			u->test = 1;
			break;
		case 'p':
			u->pipe = 1;
			break;
		case 'o':
			u->overwrite = 1, u->never = 0;
			break;
		case 'n':
			u->never = 1, u->overwrite = 0;
			break;
		case 'j':
			u->junk = 1;
			break;
		case 'q':
			u->quiet++;
			break;
		default:
			return usage_error("unknown option '-%s'", (char[]){*p, 0});
		}
		if (val)
			break;
	}
	return -1;
}

/* Info-ZIP's command line: options anywhere, the first operand the archive, then names, -x
 * names to the next option. */
static int parse_args(struct uz *u, int argc, char **argv)
{
	u->names = calloc((size_t)argc + 1, sizeof(char *));
	u->excludes = calloc((size_t)argc + 1, sizeof(char *));
	if (!u->names || !u->excludes)
		return UZ_NOMEM;
	int in_x = 0, dashdash = 0;
	for (int k = 1; k < argc; k++) {
		const char *w = argv[k];
		if (!dashdash && !strcmp(w, "--")) {
			dashdash = 1;
			continue;
		}
		if (!dashdash && w[0] == '-' && w[1]) {
			int rc = take_option(u, argc, argv, &k, &in_x);
			if (rc >= 0)
				return rc;
			continue;
		}
		if (!u->archive && !in_x)
			u->archive = w;
		else if (in_x)
			u->excludes[u->n_excludes++] = (char *)w;
		else
			u->names[u->n_names++] = (char *)w;
	}
	if (!u->archive)
		return usage_error("%s", "no ARCHIVE given");
	return -1;
}

static int matches(char *const *pats, int n, const struct zn_zip_entry *e, int *hit)
{
	char name[4096];
	size_t len = e->name_len < sizeof(name) - 1 ? e->name_len : sizeof(name) - 1;
	memcpy(name, e->name, len);
	name[len] = 0;
	int any = 0;
	for (int k = 0; k < n; k++)
		if (!fnmatch(pats[k], name, 0) || !strcmp(pats[k], name)) {
			any = 1;
			if (hit)
				hit[k] = 1;
		}
	return any;
}

/* select[] from the names and excludes; the count selected. */
static uint64_t select_entries(struct uz *u, uint8_t *sel)
{
	int *hit = calloc((size_t)u->n_names + 1, sizeof(int));
	uint64_t n = zn_zip_count(u->z), picked = 0;
	for (uint64_t i = 0; i < n; i++) {
		struct zn_zip_entry e = {.struct_size = sizeof(e)};
		zn_zip_entry(u->z, i, &e);
		sel[i] = (!u->n_names || matches(u->names, u->n_names, &e, hit)) &&
		         !matches(u->excludes, u->n_excludes, &e, NULL);
		picked += sel[i];
	}
	for (int k = 0; hit && k < u->n_names; k++)
		if (!hit[k]) {
			fprintf(stderr, "caution: filename not matched:  %s\n", u->names[k]);
			worse(u, UZ_WARN);
		}
	free(hit);
	return picked;
}

/* The archive as Info-ZIP finds it: NAME, NAME.zip, NAME.ZIP; -1 where none opens. */
static int archive_fd(const char *name)
{
	static const char *const sfx[] = {"", ".zip", ".ZIP"};
	int fd = -1;
	for (size_t k = 0; k < 3 && fd < 0; k++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s%s", name, sfx[k]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	return fd;
}

/* u->z from fd (archive_fd's, closed here), or the exit status. */
static int open_archive(struct uz *u, int fd)
{
	if (fd < 0) {
		cli_error("cannot find or open %s, %s.zip or %s.ZIP", u->archive, u->archive,
		          u->archive);
		return UZ_NOT_FOUND;
	}
	char why[160];
	zn_result r = zn_zip_open_fd(&u->z, fd, why);
	close(fd);
	if (r == ZN_OK && zn_zip_prefix(u->z)) {
		fprintf(stderr,
		        "warning [%s]:  %llu extra bytes at beginning or within zipfile\n"
		        "  (attempting to process anyway)\n",
		        u->archive, (unsigned long long)zn_zip_prefix(u->z));
		worse(u, UZ_WARN);
	}
	if (r == ZN_OK)
		return -1;
	cli_error("%s: %s", u->archive, why[0] ? why : zn_result_message(r));
	if (r == ZN_ERR_NOMEM)
		return UZ_NOMEM;
	if (r == ZN_ERR_IO || !strncmp(why, "not a ZIP", 9))
		return UZ_NOT_FOUND;
	return r == ZN_ERR_UNSUPPORTED ? UZ_UNSUPPORTED : UZ_SEVERE;
}

static void put_time(int64_t t)
{
	time_t s = (time_t)t;
	struct tm tm;
	if (!localtime_r(&s, &tm))
		memset(&tm, 0, sizeof(tm));
	printf("%04d-%02d-%02d %02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	       tm.tm_min);
}

static const char *method_name(const struct zn_zip_entry *e, char buf[16])
{
	switch (e->method) {
	case 0:
		return "Stored";
	case 8:
		snprintf(buf, 16, "Defl:%c", "NXFS"[(e->flags >> 1) & 3]);
		return buf;
	case 9:
		return "Def64";
	case 12:
		return "BZip2";
	case 14:
		return "LZMA";
	case 93:
		return "Zstd";
	default:
		snprintf(buf, 16, "Unk:%03u", e->method % 1000);
		return buf;
	}
}

static unsigned ratio(uint64_t size, uint64_t csize)
{
	if (!size || csize >= size)
		return 0;
	return (unsigned)((size - csize) * 100 / size);
}

static void put_json(const struct zn_zip_entry *e)
{
	static const char *const kinds[] = {"file", "dir", "symlink", "hardlink"};
	fputs("{\"name\":\"", stdout);
	for (size_t k = 0; k < e->name_len; k++) {
		unsigned char c = (unsigned char)e->name[k];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	printf("\",\"type\":\"%s\",\"mode\":%u,\"size\":%llu,\"csize\":%llu,\"method\":%u,"
	       "\"crc\":%u,\"mtime\":%lld,\"encrypted\":%s,\"supported\":%s}\n",
	       kinds[e->type & 3], e->mode, (unsigned long long)e->size,
	       (unsigned long long)e->csize, e->method, e->crc, (long long)e->mtime,
	       e->flags & 1 ? "true" : "false", e->supported ? "true" : "false");
}

/* -l, -v, -Z1 and --json, in Info-ZIP's layout. */
static int list_entries(struct uz *u, const uint8_t *sel)
{
	uint64_t n = zn_zip_count(u->z), files = 0, total = 0, ctotal = 0;
	int plain = !u->z1 && !u->json;
	if (plain) {
		printf("Archive:  %s\n", u->archive);
		const char *c;
		size_t clen;
		zn_zip_comment(u->z, &c, &clen);
		if (clen)
			fwrite(c, 1, clen, stdout), putchar('\n');
		if (u->verbose)
			puts(" Length   Method    Size  Cmpr    Date    Time   CRC-32   Name\n"
			     "--------  ------  ------- ---- ---------- ----- --------  ----");
		else
			puts("  Length      Date    Time    Name\n"
			     "---------  ---------- -----   ----");
	}
	for (uint64_t i = 0; i < n; i++) {
		struct zn_zip_entry e = {.struct_size = sizeof(e)};
		if (!sel[i] || zn_zip_entry(u->z, i, &e) != ZN_OK)
			continue;
		files++, total += e.size, ctotal += e.csize;
		if (u->json) {
			put_json(&e);
			continue;
		}
		if (u->verbose) {
			char mb[16];
			printf("%8llu  %-6s %8llu %3u%% ", (unsigned long long)e.size,
			       method_name(&e, mb), (unsigned long long)e.csize,
			       ratio(e.size, e.csize));
			put_time(e.mtime);
			printf(" %08x  ", e.crc);
		} else if (!u->z1) {
			printf("%9llu  ", (unsigned long long)e.size);
			put_time(e.mtime);
			fputs("   ", stdout);
		}
		fwrite(e.name, 1, e.name_len, stdout);
		putchar('\n');
	}
	if (u->verbose)
		printf("--------          -------  ---                            -------\n"
		       "%8llu         %8llu %3u%%                            %llu file%s\n",
		       (unsigned long long)total, (unsigned long long)ctotal, ratio(total, ctotal),
		       (unsigned long long)files, files == 1 ? "" : "s");
	else if (plain)
		printf("---------                     -------\n%9llu                     %llu "
		       "file%s\n",
		       (unsigned long long)total, (unsigned long long)files, files == 1 ? "" : "s");
	return UZ_OK;
}

/* The problem hook: a message, and the exit status it means. */
static void problem(void *ctx, const char *path, zn_result r, const char *what)
{
	struct uz *u = ctx;
	if (r == ZN_OK) {
		fprintf(stderr, "warning:  %s: %s\n", path, what);
		worse(u, UZ_WARN);
		return;
	}
	fprintf(stderr, "znippy unzip: %s: %s\n", path, what);
	if (r == ZN_ERR_UNSUPPORTED)
		worse(u, UZ_UNSUPPORTED);
	else if (r == ZN_ERR_EXISTS)
		worse(u, UZ_WARN);
	else if (r == ZN_ERR_NOMEM)
		worse(u, UZ_NOMEM);
	else if (r == ZN_ERR_IO && strstr(what, strerror(ENOSPC)))
		worse(u, UZ_DISK_FULL);
	else if (r == ZN_ERR_IO) /* a conflict on disk: as Info-ZIP's checkdir errors */
		worse(u, UZ_FORMAT);
	else
		worse(u, UZ_FORMAT);
}

struct pipe_out {
	int failed;
};

static zn_result to_stdout(void *ctx, const void *data, size_t len)
{
	struct pipe_out *p = ctx;
	if (cli_write_all(STDOUT_FILENO, data, len)) {
		p->failed = errno ? errno : EIO;
		return ZN_ERR_IO;
	}
	return ZN_OK;
}

/* -p: contents in archive order, nothing else on standard output. */
static int pipe_entries(struct uz *u, const uint8_t *sel)
{
	fflush(stdout);
	uint64_t n = zn_zip_count(u->z);
	for (uint64_t i = 0; i < n; i++) {
		struct zn_zip_entry e = {.struct_size = sizeof(e)};
		if (!sel[i] || zn_zip_entry(u->z, i, &e) != ZN_OK || e.type == ZN_TYPE_DIR)
			continue;
		struct pipe_out p = {0};
		zn_result r = zn_zip_read(u->z, i, to_stdout, &p);
		if (r == ZN_OK)
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%.*s", (int)(e.name_len < 4000 ? e.name_len : 4000),
		         e.name);
		if (p.failed) {
			cli_error("write error on standard output: %s", strerror(p.failed));
			return p.failed == ENOSPC ? UZ_DISK_FULL : UZ_SEVERE;
		}
		if (r == ZN_ERR_UNSUPPORTED) {
			char m[96];
			snprintf(m, sizeof(m), "%s",
			         e.flags & 1 ? "encrypted (not supported)"
			                     : "unsupported compression method");
			problem(u, path, r, m);
		} else {
			problem(u, path, r,
			        r == ZN_ERR_CHECKSUM ? "bad CRC" : zn_result_message(r));
		}
	}
	return u->rc;
}

static void extracted(void *ctx, const char *path, size_t len)
{
	struct uz *u = ctx;
	if (u->quiet)
		return;
	int dir = len && path[len - 1] == '/';
	printf("%s: %s%s%.*s\n", dir ? "   creating" : "  inflating", u->dir ? u->dir : "",
	       u->dir ? "/" : "", (int)len, path);
}

static int extract_or_test(struct uz *u, const uint8_t *sel)
{
	struct zn_hooks hooks = {.struct_size = sizeof(hooks), .ctx = u, .problem = problem};
	zn_result r;
	if (u->test) {
		r = zn_zip_test(u->z, sel, u->threads, &hooks);
		if (u->quiet < 2 && r == ZN_OK && u->rc == UZ_OK)
			printf("No errors detected in compressed data of %s.\n", u->archive);
		else if (u->quiet < 2 && r != ZN_OK)
			printf("At least one error was detected in %s.\n", u->archive);
	} else {
		struct zn_zip_extract_options opt;
		zn_zip_extract_options_init(&opt);
		opt.threads = u->threads;
		opt.overwrite = u->overwrite;
		opt.never = u->never;
		opt.junk_paths = u->junk;
		hooks.extracted = extracted;
		if (!u->quiet)
			printf("Archive:  %s\n", u->archive);
		fflush(stdout);
		r = zn_zip_extract(u->z, u->dir ? u->dir : ".", sel, &opt, &hooks);
		if (r == ZN_ERR_IO && u->rc == UZ_OK) {
			cli_error("%s: %s", u->dir ? u->dir : ".", strerror(errno));
			worse(u, UZ_SEVERE);
		}
	}
	if (r == ZN_ERR_NOMEM)
		worse(u, UZ_NOMEM);
	return u->rc;
}

/* One archive, u->archive open as fd (or -1): its entries listed, piped, tested or extracted. */
static int unzip_one(struct uz *u, int fd)
{
	u->rc = 0;
	int rc = open_archive(u, fd);
	if (rc >= 0)
		return rc;
	uint64_t n = zn_zip_count(u->z);
	uint8_t *sel = malloc(n ? n : 1);
	if (!sel) {
		rc = UZ_NOMEM;
		goto out;
	}
	uint64_t picked = select_entries(u, sel);
	if (!n) { /* as Info-ZIP: a warning, nothing listed or extracted */
		fprintf(stderr, "warning [%s]:  zipfile is empty\n", u->archive);
		rc = UZ_WARN;
	} else if (!picked) {
		rc = UZ_NO_MATCH;
	} else if (u->list || u->verbose || u->z1 || u->json) {
		rc = list_entries(u, sel);
	} else if (u->pipe) {
		rc = pipe_entries(u, sel);
	} else {
		rc = extract_or_test(u, sel);
	}
	if (u->rc > rc)
		rc = u->rc;
	free(sel);
out:
	zn_zip_free(u->z);
	u->z = NULL;
	return rc;
}

/* "N archives were ...", as Info-ZIP words it. */
static void tally(FILE *f, unsigned n, const char *one, const char *many, const char *what)
{
	if (n)
		fprintf(f, "%u %s %s.\n", n, n == 1 ? one : many, what);
}

/* Info-ZIP's wildcard archive names: an ARCHIVE with * ? or [ that opens no file is every file
 * it matches, in name order, one after another; a summary follows (on standard error with -q),
 * and the exit status is the worst. */
static int unzip_many(struct uz *u)
{
	const char *pattern = u->archive;
	glob_t g;
	int gr = glob(pattern, 0, NULL, &g);
	if (gr == GLOB_NOSPACE) {
		globfree(&g);
		return UZ_NOMEM;
	}
	if (gr) {
		globfree(&g);
		cli_error("cannot find or open %s, %s.zip or %s.ZIP", pattern, pattern, pattern);
		fputs("\nNo zipfiles found.\n", stderr);
		return UZ_NOT_FOUND;
	}
	int worst = UZ_OK;
	unsigned ok = 0, warned = 0, failed = 0, not_zip = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		u->archive = g.gl_pathv[i];
		int rc = unzip_one(u, archive_fd(u->archive));
		worst = rc > worst ? rc : worst;
		ok += rc <= UZ_WARN;
		warned += rc == UZ_WARN;
		not_zip += rc == UZ_NOT_FOUND;
		failed += rc > UZ_WARN && rc != UZ_NOT_FOUND;
	}
	globfree(&g);
	FILE *f = u->quiet ? stderr : stdout;
	fflush(stdout);
	fputc('\n', f);
	tally(f, ok, "archive was", "archives were", "successfully processed");
	tally(f, warned, "archive had", "archives had", "warnings but no fatal errors");
	tally(f, failed, "archive had", "archives had", "fatal errors");
	tally(f, not_zip, "file had", "files had", "no zipfile directory");
	return worst;
}

static int cmd_unzip(int argc, char **argv)
{
	struct uz u = {0};
	int rc = parse_args(&u, argc, argv);
	if (rc < 0) {
		/* A name with wildcards that opens no file is a pattern (unzip_many). */
		int fd = archive_fd(u.archive);
		rc = fd < 0 && strpbrk(u.archive, "*?[") ? unzip_many(&u) : unzip_one(&u, fd);
	}
	free(u.names);
	free(u.excludes);
	return rc;
}

const struct cli_command cli_cmd_unzip = {"unzip", "", cmd_unzip, unzip_shortopts, unzip_options};
