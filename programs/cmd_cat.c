/* SPDX-License-Identifier: MIT */
/* cmd_cat.c - `znippy cat` and `extract -O`: entries' contents, checked, to standard output. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* clang-format off */
static const char cat_help[] =
	"Usage: znippy cat [--offset=N] [--length=N] ARCHIVE PATH...\n"
	"Write the contents of the named files to standard output, reading only the index and the\n"
	"blocks that hold them. Nothing unchecked is written: a file within one block is checked\n"
	"by its SHA-256 first; a longer one block by block (XXH3), then by its SHA-256.\n"
	"A PATH with a trailing '/' names a directory, which cat refuses, as cat(1) does.\n"
	"\n"
	"      --offset=N        start at byte N of each file (nothing when N is past its end);\n"
	"                        only the blocks that hold the range are read, each checked by\n"
	"                        its XXH3 (the file's SHA-256 covers the whole file: not checked)\n"
	"      --length=N        at most N bytes of each file (K, M, G suffixes as for sizes)\n"
	"  -h, --help            this help (options come before ARCHIVE; every argument after it\n"
	"                        is a PATH)\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;
/* clang-format on */

static int stdout_err; /* errno of a failed write to standard output, else 0 */

enum { OPT_OFFSET = 256, OPT_LENGTH };
static const struct option cat_options[] = {{"offset", required_argument, NULL, OPT_OFFSET},
                                            {"length", required_argument, NULL, OPT_LENGTH},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};

/* The byte range of each file (--offset, --length); whole files when `ranged` is 0. */
struct cat_range {
	int ranged;
	uint64_t offset, length;
};

/* cat's options into *range; -1 to go on, else the exit status. */
static int cat_args(int argc, char **argv, struct cat_range *range)
{
	int c;
	optind = 1;
	*range = (struct cat_range){0, 0, UINT64_MAX};
	while ((c = getopt_long(argc, argv, "+:h", cat_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(cat_help, stdout);
			return EXIT_OK;
		case OPT_OFFSET:
		case OPT_LENGTH:
			if (cli_parse_size(optarg,
			                   c == OPT_OFFSET ? &range->offset : &range->length))
				return cli_usage_error("cat", "--%s: not a size: '%s'",
				                       c == OPT_OFFSET ? "offset" : "length",
				                       optarg);
			range->ranged = 1;
			break;
		default:
			return cli_option_error("cat", c, argv);
		}
	}
	return -1;
}

static zn_result sink_stdout(void *ctx, const void *data, size_t len)
{
	(void)ctx;
	if (!cli_write_all(1, data, len))
		return ZN_OK;
	stdout_err = errno ? errno : EIO;
	return ZN_ERR_IO;
}

/* extract -O: the selected regular files' contents, in path order, as tar -xO writes them;
 * with -v their names on stderr. Checked as cat checks them. Returns the exit status. */
int cli_extract_to_stdout(struct zn_reader *r, const char *path, const uint8_t *sel, unsigned strip,
                          int verbose)
{
	int rc = EXIT_OK;
	uint64_t n = zn_reader_count(r);
	for (uint64_t i = 0; i < n; i++) {
		struct zn_entry e;
		if (sel && !sel[i])
			continue;
		unsigned lost; /* its metadata is not written: a file that lost some is written */
		zn_result res = zn_reader_entry_lost(r, i, &e, &lost);
		if (res != ZN_OK) {
			cli_error("%s: entry %llu: %s", path, (unsigned long long)i,
			          zn_result_message(res));
			rc = cli_damage_first(rc, cli_exit_code(res));
			continue;
		}
		if (e.type != ZN_TYPE_FILE)
			continue; /* no content of its own, as in tar */
		if (lost) {
			cli_name_lost(&e, lost, "");
			rc = cli_damage_first(rc, EXIT_DAMAGED);
		}
		unsigned parts = 1;
		for (size_t k = 0; k < e.path_len; k++)
			parts += e.path[k] == '/';
		if (parts <= strip)
			continue; /* --strip-components leaves it out, as tar does */
		if (verbose) {
			cli_put_escaped(stderr, e.path, e.path_len);
			fputc('\n', stderr);
		}
		stdout_err = 0;
		res = zn_reader_read_entry(r, i, sink_stdout, NULL);
		if (res == ZN_OK)
			continue;
		if (stdout_err) {
			cli_error("write error on standard output: %s", strerror(stdout_err));
			return cli_damage_first(rc, EXIT_SYSTEM);
		}
		cli_name_entry(&e, zn_result_message(res)); /* as the extractor names it */
		rc = cli_damage_first(rc, cli_exit_code(res));
	}
	return rc;
}

static int cmd_cat(int argc, char **argv)
{
	/* Options come before ARCHIVE ('+': getopt stops at it); what follows is PATHs, even one
	 * that starts with '-'. "--" may also come before the PATHs. */
	struct cat_range range;
	int rc = cat_args(argc, argv, &range);
	if (rc >= 0)
		return rc;
	int first = optind, ended = optind > 1 && !strcmp(argv[optind - 1], "--");
	const char *path = first < argc ? argv[first++] : NULL;
	if (!ended && first < argc && !strcmp(argv[first], "--"))
		first++;
	if (!path || first >= argc)
		return cli_usage_error("cat", "expected ARCHIVE PATH...");
	struct zn_reader *r;
	zn_result res = cli_open_archive(path, &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	rc = EXIT_OK;
	for (int i = first; i < argc; i++) {
		/* Messages name the argument as given; the lookup uses its normal form. A trailing
		 * '/' names a directory, which cat refuses anyway, as cat(1) does "a/". */
		const char *arg = argv[i];
		size_t alen = strlen(arg);
		char *name = strdup(arg);
		if (!name) {
			cli_error("out of memory");
			rc = EXIT_SYSTEM;
			break;
		}
		cli_normalize_path(name);
		uint64_t idx;
		res = zn_reader_find(r, name, strlen(name), &idx);
		free(name);
		stdout_err = 0;
		if (res == ZN_OK && alen && arg[alen - 1] == '/')
			res = ZN_ERR_INVALID_ARG;
		if (res == ZN_OK)
			res = range.ranged ? zn_reader_read_range(r, idx, range.offset,
			                                          range.length, sink_stdout, NULL)
			                   : zn_reader_read_entry(r, idx, sink_stdout, NULL);
		if (res == ZN_OK)
			continue;
		if (stdout_err) { /* our own output failed, not the archive */
			cli_error("write error on standard output: %s", strerror(stdout_err));
			rc = cli_damage_first(rc, EXIT_SYSTEM);
			break;
		}
		if (res == ZN_ERR_NOT_FOUND)
			cli_error("%s: not found in archive", argv[i]);
		else if (res == ZN_ERR_INVALID_ARG) {
			/* Worded as cat(1) words them; the type read only now, and alone: the
			 * whole row decodes the index's compressed columns (10 ms for 100,000
			 * entries). */
			int type;
			int dir =
			        zn_reader_entry_type(r, idx, &type) == ZN_OK && type == ZN_TYPE_DIR;
			cli_error("%s: %s", argv[i],
			          dir                            ? "is a directory"
			          : alen && arg[alen - 1] == '/' ? "not a directory"
			                                         : "not a regular file");
		} else {
			/* A file whose digest the index lost cannot be checked: say so. */
			struct zn_entry e;
			unsigned lost = 0;
			char msg[96];
			if (res == ZN_ERR_CORRUPT &&
			    zn_reader_entry_lost(r, idx, &e, &lost) == ZN_OK && lost)
				zn_lost_message(lost, msg);
			cli_error("%s: %s", argv[i], lost ? msg : zn_result_message(res));
		}
		int code = res == ZN_ERR_INVALID_ARG ? EXIT_DAMAGED : cli_exit_code(res);
		rc = cli_damage_first(rc, code);
		if (res == ZN_ERR_IO)
			break;
	}
	zn_reader_free(r);
	return rc;
}

const struct cli_command cli_cmd_cat = {"cat", "", cmd_cat, "h", cat_options};
