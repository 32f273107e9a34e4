/* SPDX-License-Identifier: MIT */
/* cmd_list.c - `znippy list`: names, long listings and JSON of an archive's entries. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

enum { OPT_EXCLUDE = 1000, OPT_JSON, OPT_PKG_TYPE, OPT_PACKAGE, OPT_REPO };

/* clang-format off */
static const char list_help[] =
	"Usage: znippy list ARCHIVE [OPTIONS] [PATTERN...]\n"
	"List all entries, or those whose path matches a PATTERN (as for extract), in path order.\n"
	"Names are shown as UTF-8; backslash, tab, newline, other control characters,\n"
	"bidirectional and zero-width marks, and bytes that are not UTF-8 are shown as C escapes\n"
	"(\\\\, \\t, \\n, \\ooo).\n"
	"\n"
	"  -l, --long   type and mode, owner, size, stored (compressed) size, mtime, path; the\n"
	"               stored size of a file packed with others is its share of their block,\n"
	"               rounded down (0 for the smallest); a file stored once for identical ones\n"
	"               has it with the first in path order, 0 with the others\n"
	"  -v, --verbose  the same, as tar -tv\n"
	"      --json[=lines|array]\n"
	"               every field of each entry as JSON (exact bytes of names that are not\n"
	"               UTF-8 in \"path_hex\"; a field a damaged index lost is left out, where -l\n"
	"               shows '?', or for a lost name the id; so are user and group names the\n"
	"               archive does not hold; each file's sha256, which for files under\n"
	"               the archive's --digest-min-size is computed from their content):\n"
	"               by default JSON Lines, an object per line, as jq\n"
	"               reads them (znippy list --json A | jq -r 'select(.size > 1e6) | .path');\n"
	"               with =array one JSON array, for readers of one document (python3 -m\n"
	"               json.tool)\n"
	"      --exclude GLOB\n"
	"  -X, --exclude-from FILE\n"
	"               leave out what GLOB (each line of FILE) matches, as extract's\n"
	PACKAGE_FILTER_HELP("               ")
	"  -h, --help   this help\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;
/* clang-format on */

/* Seconds of an mtime in nanoseconds, rounded down (also before 1970), and the rest in *ns. */
static time_t mtime_split(int64_t mtime_ns, long *ns)
{
	int64_t sec = mtime_ns / 1000000000, rest = mtime_ns % 1000000000;
	if (rest < 0)
		rest += 1000000000, sec--;
	*ns = (long)rest;
	return (time_t)sec;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t k = c < 0x80         ? 1
		           : (c >> 5) == 6  ? 2
		           : (c >> 4) == 14 ? 3
		           : (c >> 3) == 30 ? 4
		                            : 0;
		if (!k || i + k > n || (k == 2 && c < 0xc2) || c > 0xf4)
			return 0;
		for (size_t j = 1; j < k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
		/* No overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629). */
		unsigned char c1 = k > 1 ? s[i + 1] : 0;
		if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) ||
		    (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 > 0x8f))
			return 0;
		i += k;
	}
	return 1;
}

static void put_json_str(FILE *f, const char *key, const char *s, size_t n)
{
	int ok = valid_utf8((const unsigned char *)s, n);
	fprintf(f, "\"%s\":\"", key);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 32)
			fprintf(f, "\\u%04x", ch);
		else if (ch >= 0x80 && !ok)
			fputs("\\ufffd", f);
		else
			fputc(ch, f);
	}
	fputc('"', f);
	if (!ok) {
		fprintf(f, ",\"%s_hex\":\"", key);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%02x", (unsigned char)s[i]);
		fputc('"', f);
	}
}

static const char *type_name(uint32_t t)
{
	static const char *const names[] = {"file", "dir", "symlink", "hardlink"};
	return t < 4 ? names[t] : "unknown";
}

static void mode_string(const struct zn_entry *e, char out[11])
{
	static const char tc[] = "-dlh";
	out[0] = tc[e->type & 3];
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = (e->mode & (0400u >> i)) ? rwx[i] : '-';
	if (e->mode & 04000)
		out[3] = (e->mode & 0100) ? 's' : 'S';
	if (e->mode & 02000)
		out[6] = (e->mode & 0010) ? 's' : 'S';
	if (e->mode & 01000)
		out[9] = (e->mode & 0001) ? 't' : 'T';
	out[10] = 0;
}

/* One row of --json: every field the index holds. */
static void print_json_row(FILE *f, const struct zn_entry *e, unsigned lost,
                           const struct zn_pkg_coord *pc, const char *repo)
{
	fputc('{', f);
	put_json_str(f, "path", e->path, e->path_len);
	fprintf(f, ",\"type\":\"%s\"", type_name(e->type));
	if (!(lost & ZN_LOST_MODE))
		fprintf(f, ",\"mode\":\"%04o\"", e->mode);
	if (!(lost & ZN_LOST_OWNER))
		fprintf(f, ",\"uid\":%u,\"gid\":%u", e->uid, e->gid);
	/* A name never stored (--numeric-owner) is left out, as one that was lost. */
	if (e->uname_len) {
		fputc(',', f);
		put_json_str(f, "user", e->uname, e->uname_len);
	}
	if (e->gname_len) {
		fputc(',', f);
		put_json_str(f, "group", e->gname, e->gname_len);
	}
	fprintf(f, ",\"size\":%llu,\"stored\":%llu", (unsigned long long)e->size,
	        (unsigned long long)e->stored_size);
	/* The time as a string too: mtime_ns is above 2^53, where readers that hold JSON numbers
	 * as doubles (jq 1.6, JavaScript) round it. */
	long ns;
	time_t t = mtime_split(e->mtime_ns, &ns);
	struct tm tm;
	char tbuf[64];
	if (!(lost & ZN_LOST_MTIME)) {
		fprintf(f, ",\"mtime_ns\":%lld", (long long)e->mtime_ns);
		if (gmtime_r(&t, &tm) && strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm))
			fprintf(f, ",\"mtime\":\"%s.%09ldZ\"", tbuf, ns);
	}
	if (e->link) {
		fputc(',', f);
		put_json_str(f, "link", e->link, e->link_len);
	}
	if (e->has_digest) {
		fputs(",\"sha256\":\"", f);
		for (int k = 0; k < 32; k++)
			fprintf(f, "%02x", e->sha256[k]);
		fputc('"', f);
	}
	if (pc->type != ZN_PKG_NONE) {
		fputc(',', f);
		put_json_str(f, "package_type", zn_pkg_type_name(pc->type),
		             strlen(zn_pkg_type_name(pc->type)));
		const char *const key[3] = {"package_group", "package_name", "package_version"};
		const char *const val[3] = {pc->group, pc->name, pc->version};
		for (int k = 0; k < 3; k++)
			if (val[k][0]) {
				fputc(',', f);
				put_json_str(f, key[k], val[k], strlen(val[k]));
			}
	}
	if (repo[0]) {
		fputc(',', f);
		put_json_str(f, "repo", repo, strlen(repo));
	}
	fputc('}', f);
}

/* -l's owner column: user/group, each its name when the archive has one, else its number (as
 * tar); names come from the archive, so control characters become '?'. */
static void owner_column(const struct zn_entry *e, unsigned lost, char owner[160])
{
	size_t o = 0;
	for (int g = 0; g < 2; g++) {
		const char *nm = g ? e->gname : e->uname;
		size_t nl = g ? e->gname_len : e->uname_len;
		if (g)
			owner[o++] = '/';
		if (!nl && (lost & ZN_LOST_OWNER)) {
			owner[o++] = '?';
			continue;
		}
		if (!nl) {
			o += (size_t)snprintf(owner + o, 160 - o, "%u", g ? e->gid : e->uid);
			continue;
		}
		for (size_t k = 0; k < nl && k < 60; k++)
			owner[o++] = (unsigned char)nm[k] < 32 || nm[k] == 127 ? '?' : nm[k];
	}
	owner[o] = 0;
}

/* One row of -l: type and mode, owner, size, stored size, mtime, path (and link). */
static void print_long_row(FILE *f, const struct zn_entry *e, unsigned lost)
{
	char ms[11], tbuf[32] = "\?\?\?\?-\?\?-\?\? \?\?:\?\?";
	mode_string(e, ms);
	if (lost & ZN_LOST_MODE)
		memset(ms + 1, '?', 9);
	long ns;
	time_t t = mtime_split(e->mtime_ns, &ns);
	struct tm tm;
	localtime_r(&t, &tm);
	if (!(lost & ZN_LOST_MTIME))
		strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M", &tm);
	char owner[160];
	owner_column(e, lost, owner);
	fprintf(f, "%s %-17s %12llu %12llu %s ", ms, owner, (unsigned long long)e->size,
	        (unsigned long long)e->stored_size, tbuf);
	cli_put_escaped(f, e->path, e->path_len);
	if (e->link) {
		fputs(e->type == ZN_TYPE_SYMLINK ? " -> " : " link to ", f);
		cli_put_escaped(f, e->link, e->link_len);
	}
}

enum list_format { LIST_NAMES, LIST_LONG, LIST_JSON, LIST_JSON_ARRAY };

/* Unreadable rows come in runs (a damaged page of the index holds many): one line a run. */
struct bad_run {
	uint64_t from, len;
	zn_result res;
};

/* Says the run that ends before row i (with result res: ZN_OK for a readable row), if any. */
static void end_run(struct bad_run *b, const char *path, uint64_t i, zn_result res)
{
	if (!b->len || (res != ZN_OK && res == b->res && i == b->from + b->len))
		return;
	if (b->len == 1)
		cli_error("%s: entry %llu: %s", path, (unsigned long long)b->from,
		          zn_result_message(b->res));
	else
		cli_error("%s: entries %llu-%llu: %s", path, (unsigned long long)b->from,
		          (unsigned long long)(b->from + b->len - 1), zn_result_message(b->res));
	b->len = 0;
}

/* The SHA-256 of file i that the index does not hold (smaller than the archive's
 * --digest-min-size) into e, computed from its content: 0, or 1 if it cannot be (said). */
static int small_digest(struct zn_reader *r, const char *path, uint64_t i, struct zn_entry *e)
{
	zn_result res = zn_reader_digest(r, i, e->sha256);
	if (res == ZN_OK) {
		e->has_digest = 1;
		return 0;
	}
	cli_error("%s: entry %llu: its digest cannot be computed: %s", path, (unsigned long long)i,
	          zn_result_message(res));
	return 1;
}

/* The selected rows (sel NULL: all) on f. Returns whether a row could not be read (said); the
 * rows that lost fields to index damage are counted in *nlost. */
static int list_rows(struct zn_reader *r, const char *path, const uint8_t *sel,
                     enum list_format fmt, FILE *f, uint64_t *nlost)
{
	uint64_t n = zn_reader_count(r);
	/* A file stored once for several: the first row in path order has its share of the
	 * block, the others none, so the column adds up to the archive's data. */
	uint8_t *copy = fmt != LIST_NAMES ? malloc(n + 1) : NULL;
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	char repo[256] = "";
	if (fmt >= LIST_JSON) {
		zn_reader_info(r, &info);
		zn_reader_repo(r, repo);
	}
	/* Every file's SHA-256 in --json: from the index, or from the content of those the
	 * index holds none for. */
	const int digests = info.digest == ZN_DIGEST_SHA256;
	uint64_t rows = 0;
	if (copy)
		zn_reader_copies(r, copy);
	struct bad_run run = {0, 0, ZN_OK};
	int bad = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (sel && !sel[i])
			continue;
		struct zn_entry e;
		unsigned lost = 0; /* fields lost to index damage: shown as '?', left out of JSON */
		zn_result res = zn_reader_entry_lost(r, i, &e, &lost);
		*nlost += lost != 0;
		end_run(&run, path, i, res);
		if (res != ZN_OK) {
			if (!run.len) {
				run.from = i;
				run.res = res;
			}
			run.len++;
			bad = 1;
			continue;
		}
		if (copy && copy[i])
			e.stored_size = 0;
		if (digests && !e.has_digest && e.type == ZN_TYPE_FILE && !(lost & ZN_LOST_DIGEST))
			bad |= small_digest(r, path, i, &e);
		if (fmt == LIST_JSON_ARRAY) /* "[\n{...},\n{...}\n]" */
			fputs(rows ? ",\n" : "[\n", f);
		struct zn_pkg_coord pc = {.struct_size = sizeof(pc)};
		if (fmt >= LIST_JSON && zn_reader_package(r, i, &pc) != ZN_OK) {
			cli_error("%s: entry %llu: its package columns cannot be read", path,
			          (unsigned long long)i);
			bad = 1;
		}
		if (fmt == LIST_JSON || fmt == LIST_JSON_ARRAY)
			print_json_row(f, &e, lost, &pc, repo);
		else if (fmt == LIST_LONG)
			print_long_row(f, &e, lost);
		else
			cli_put_escaped(f, e.path, e.path_len);
		if (fmt != LIST_JSON_ARRAY)
			fputc('\n', f);
		rows++;
	}
	end_run(&run, path, n, ZN_OK);
	if (fmt == LIST_JSON_ARRAY)
		fputs(rows ? "\n]\n" : "[]\n", f);
	free(copy);
	return bad;
}

/* --json's FORMAT: JSON Lines (the default), or one array. 0, or the usage error said. */
static int json_format(const char *arg, enum list_format *fmt)
{
	if (!arg || !strcmp(arg, "lines"))
		*fmt = LIST_JSON;
	else if (!strcmp(arg, "array"))
		*fmt = LIST_JSON_ARRAY;
	else
		return cli_usage_error("list", "invalid --json format '%s' (lines or array)", arg);
	return 0;
}

static const char list_shortopts[] = ":lvX:h";
static const struct option list_options[] = {
        {"long", no_argument, 0, 'l'},
        {"json", optional_argument, 0, OPT_JSON},
        {"verbose", no_argument, 0, 'v'},
        {"exclude", required_argument, 0, OPT_EXCLUDE},
        {"exclude-from", required_argument, 0, 'X'},
        {"package-type", required_argument, 0, OPT_PKG_TYPE},
        {"package", required_argument, 0, OPT_PACKAGE},
        {"repo", required_argument, 0, OPT_REPO},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
};

static int cmd_list(int argc, char **argv)
{
	enum list_format fmt = LIST_NAMES;
	int c;
	static struct cli_excludes ex; /* static: the patterns stay reachable to the end */
	optind = 1;
	while ((c = getopt_long(argc, argv, list_shortopts, list_options, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case 'l':
		case 'v':
			fmt = fmt >= LIST_JSON ? fmt : LIST_LONG;
			break;
		case OPT_JSON:
			rc = json_format(optarg, &fmt);
			break;
		case OPT_EXCLUDE:
		case 'X':
			rc = cli_exclude_option(&ex, "list", c == 'X', optarg);
			break;
		case OPT_PKG_TYPE:
		case OPT_PACKAGE:
		case OPT_REPO:
			rc = cli_package_option(&ex, "list",
			                        c == OPT_PKG_TYPE  ? CLI_PKG_TYPE
			                        : c == OPT_PACKAGE ? CLI_PKG_COORD
			                                           : CLI_PKG_REPO,
			                        optarg);
			break;
		case 'h':
			fputs(list_help, stdout);
			return EXIT_OK;
		default:
			return cli_option_error("list", c, argv);
		}
		if (rc)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_error("list", "missing ARCHIVE");
	const char *path = argv[optind++];
	struct zn_reader *r;
	zn_result res = cli_open_archive(path, &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	uint8_t *sel;
	int missing = cli_select_kept(r, &ex, argv + optind, argc - optind, &sel);
	if (missing < 0) {
		free(sel);
		zn_reader_free(r);
		return EXIT_SYSTEM;
	}
	uint64_t nlost = 0;
	int bad = list_rows(r, path, sel, fmt, stdout, &nlost);
	free(sel);
	zn_reader_free(r);
	if (nlost)
		cli_error("%s: index damaged: %llu %s listed without the mode, owner, time or "
		          "digest the index lost%s",
		          path, (unsigned long long)nlost, nlost == 1 ? "entry" : "entries",
		          fmt != LIST_NAMES ? " ('?', or left out of --json)" : "");
	bad |= nlost != 0;
	if (fflush(stdout) || ferror(stdout)) {
		cli_error("write error on standard output: %s", strerror(errno ? errno : EIO));
		return EXIT_SYSTEM;
	}
	return (missing || bad) ? EXIT_DAMAGED : EXIT_OK;
}

const struct cli_command cli_cmd_list = {"list", "ls t", cmd_list, list_shortopts, list_options};
