/* SPDX-License-Identifier: MIT */
/* cmd_index.c - `znippy index`: one table of the entries of one or many archives, as an Arrow IPC
 * file, JSON Lines or CSV, with the archive each came from. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { OPT_FORMAT = 1000 };

/* clang-format off */
static const char index_help[] =
	"Usage: znippy index ARCHIVE... [-o FILE] [--format arrow|jsonl|csv]\n"
	"Export one table of the entries of every ARCHIVE, each archive's in path order, with\n"
	"the columns path, type, size, mode, mtime, sha256, package_type, package_group,\n"
	"package_name, package_version, repo and archive (the ARCHIVE argument as given). The\n"
	"package columns are those create stored (from each package file's metadata; an\n"
	"archive made before they existed: from the paths of package files); repo is the\n"
	"archive's create --repo, else null.\n"
	"\n"
	"  -o, --output FILE\n"
	"               write to FILE (replaced only once complete); '-' or none: standard output\n"
	"  -f, --format FORMAT\n"
	"               arrow: an Arrow IPC file (format V5; the tests read it with\n"
	"                 apache-arrow for JavaScript): mtime is timestamp[ns, UTC],\n"
	"                 sha256 fixed_size_binary[32], mode uint32, size uint64, strings utf8,\n"
	"                 dictionary-encoded where at most half the rows differ; null where\n"
	"                 unknown\n"
	"               jsonl: an object a line; mode as octal text, mtime as RFC 3339 text with\n"
	"                 nanoseconds, sha256 as hex, null where unknown; bytes of names that\n"
	"                 are not UTF-8 as U+FFFD\n"
	"               csv: RFC 4180 with a header line, the values as for jsonl, empty where\n"
	"                 unknown\n"
	"               Default: by FILE's suffix (.arrow .feather .ipc, .jsonl .ndjson .json,\n"
	"               .csv), else arrow.\n"
	"  -h, --help   this help\n"
	"\n"
	"An entry whose row the index lost is left out and named; the rest are exported.\n"
	STDIN_HELP EXIT_CODES_HELP;
/* clang-format on */

static int parse_format(const char *s, int *fmt)
{
	if (!strcmp(s, "arrow"))
		*fmt = ZN_EXPORT_ARROW;
	else if (!strcmp(s, "jsonl"))
		*fmt = ZN_EXPORT_JSONL;
	else if (!strcmp(s, "csv"))
		*fmt = ZN_EXPORT_CSV;
	else
		return cli_usage_error("index", "invalid --format '%s' (arrow, jsonl or csv)", s);
	return 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n > k && !strcmp(s + n - k, suf);
}

static int format_of(const char *out)
{
	if (ends_with(out, ".jsonl") || ends_with(out, ".ndjson") || ends_with(out, ".json"))
		return ZN_EXPORT_JSONL;
	if (ends_with(out, ".csv"))
		return ZN_EXPORT_CSV;
	return ZN_EXPORT_ARROW;
}

static const char index_shortopts[] = ":o:f:h";
static const struct option index_options[] = {
        {"output", required_argument, 0, 'o'},
        {"format", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
};

/* Every ARCHIVE into the exporter; returns the exit status so far. */
static int export_all(struct zn_exporter *x, char **archives, int n)
{
	int rc = EXIT_OK;
	for (int i = 0; i < n; i++) {
		struct zn_reader *r;
		zn_result res = cli_open_archive(archives[i], &r);
		if (res != ZN_OK) {
			rc = cli_worse(rc, cli_exit_code(res));
			continue;
		}
		res = zn_exporter_add(x, r, archives[i], NULL);
		zn_reader_free(r);
		if (res == ZN_ERR_DAMAGED) {
			cli_error("%s: index damaged: entries or fields it lost are left out",
			          archives[i]);
			rc = cli_worse(rc, EXIT_DAMAGED);
		} else if (res != ZN_OK) {
			cli_error("%s: %s", archives[i], zn_result_message(res));
			return cli_worse(rc, cli_exit_code(res));
		}
	}
	return rc;
}

static int cmd_index(int argc, char **argv)
{
	const char *out = NULL;
	int fmt = -1, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, index_shortopts, index_options, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'f':
			rc = parse_format(optarg, &fmt);
			break;
		case 'h':
			fputs(index_help, stdout);
			return EXIT_OK;
		default:
			return cli_option_error("index", c, argv);
		}
		if (rc)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_error("index", "missing ARCHIVE");
	if (out && !strcmp(out, "-"))
		out = NULL;
	if (fmt < 0)
		fmt = out ? format_of(out) : ZN_EXPORT_ARROW;
	char *tmp = NULL;
	int fd = out ? cli_open_replacement(out, NULL, &tmp) : 1;
	if (fd < 0) {
		cli_error("%s: %s", out, strerror(errno));
		return EXIT_SYSTEM;
	}
	struct zn_exporter *x;
	zn_result res = zn_exporter_open(&x, fd, fmt);
	int rc = res == ZN_OK ? export_all(x, argv + optind, argc - optind) : cli_exit_code(res);
	uint64_t rows = 0;
	if (res == ZN_OK && rc != EXIT_SYSTEM && (res = zn_exporter_finish(x, &rows)) != ZN_OK) {
		cli_error("%s: %s", out ? out : "standard output",
		          res == ZN_ERR_IO ? strerror(errno ? errno : EIO)
		                           : zn_result_message(res));
		rc = cli_worse(rc, cli_exit_code(res));
	}
	zn_exporter_free(x);
	int complete = rc != EXIT_SYSTEM && rc != EXIT_USAGE;
	if (out) {
		if (close(fd) && complete) {
			cli_error("%s: write failed: %s", out, strerror(errno));
			rc = EXIT_SYSTEM, complete = 0;
		}
		if (tmp && complete && rename(tmp, out)) {
			cli_error("%s: cannot rename: %s", out, strerror(errno));
			rc = EXIT_SYSTEM, complete = 0;
		}
		if (tmp && !complete)
			unlink(tmp);
		if (tmp)
			cli_replacement_done(tmp);
	}
	return rc;
}

const struct cli_command cli_cmd_index = {"index", "", cmd_index, index_shortopts, index_options};
