/* SPDX-License-Identifier: MIT */
/* cmd_check.c - `znippy verify` (every block and digest) and `znippy info` (the summary, every
 * index page checked). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

enum { OPT_PROGRESS = 1000 };

#define S(n) ((n) == 1 ? "" : "s")

/* clang-format off */
static const char verify_help[] =
	"Usage: znippy verify ARCHIVE [OPTIONS]\n"
	"Decode every block and check every block checksum and every file's SHA-256, writing\n"
	"nothing. Each damaged file is named on stderr.\n"
	"\n"
	"  -T, --threads N   " THREADS_HELP("                    ")
	"      --progress    show a progress line on stderr\n"
	"  -q, --quiet       no summary line, no warnings\n"
	"  -h, --help        this help\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;
/* clang-format on */

static const char verify_shortopts[] = ":T:qh";
static const struct option verify_options[] = {
        {"threads", required_argument, 0, 'T'},
        {"progress", no_argument, 0, OPT_PROGRESS},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
};

static int cmd_verify(int argc, char **argv)
{
	unsigned threads = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, verify_shortopts, verify_options, NULL)) != -1) {
		switch (c) {
		case 'T':
			if (cli_parse_threads("verify", optarg, &threads))
				return EXIT_USAGE;
			break;
		case OPT_PROGRESS:
			cli_progress = 1;
			break;
		case 'q':
			cli_quiet = 1;
			break;
		case 'h':
			fputs(verify_help, stdout);
			return EXIT_OK;
		default:
			return cli_option_error("verify", c, argv);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error("verify", "expected exactly one ARCHIVE");
	const char *path = argv[optind];
	struct zn_reader *r;
	zn_result res = cli_open_archive(path, &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	const struct zn_hooks hooks = {.problem = cli_problem_cb,
	                               .progress = cli_progress_enabled() ? cli_progress_cb : NULL};
	res = zn_verify(r, threads, &hooks);
	cli_progress_end();
	zn_reader_free(r);
	if (res != ZN_OK) {
		cli_error("%s: %s", path,
		          res == ZN_ERR_DAMAGED ? "damaged (see above)" : zn_result_message(res));
		return cli_exit_code(res);
	}
	if (!cli_quiet)
		fprintf(stderr, "%s: %s: OK (%llu entr%s, %llu block%s, %.1f MB checked)\n",
		        cli_prog, path, (unsigned long long)info.entries,
		        info.entries == 1 ? "y" : "ies", (unsigned long long)info.blocks,
		        info.blocks == 1 ? "" : "s", (double)info.content_bytes / 1e6);
	return EXIT_OK;
}

/* clang-format off */
static const char info_help[] =
	"Usage: znippy info ARCHIVE\n"
	"Entry counts, sizes, ratio, codec and level, chunk size, index size, the repository name\n"
	"and the package files of each type (create --repo, --no-packages). Every page of the\n"
	"index is checked (not the data blocks: that is verify's work); a damaged one is named on\n"
	"stderr, after the summary, and leaves exit status 1.\n"
	"\n"
	"  -h, --help            this help\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;
/* clang-format on */

static int cmd_info(int argc, char **argv)
{
	int rc = cli_help_only("info", argc, argv, ":h", info_help);
	if (rc >= 0)
		return rc;
	if (argc - optind != 1)
		return cli_usage_error("info", "expected exactly one ARCHIVE");
	struct zn_reader *r;
	zn_result res = cli_open_archive(argv[optind], &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	struct zn_archive_info in = {.struct_size = sizeof(in)};
	zn_reader_info(r, &in);
	const uint64_t digest_min = zn_reader_digest_min_size(r);
	uint64_t bad_pages = zn_reader_index_damage(r);
	char repo[256];
	uint64_t pkgs[5] = {0}; /* by enum zn_pkg_type; [0]: rows that could not be read */
	zn_reader_repo(r, repo);
	for (uint64_t i = 0; i < in.entries; i++) {
		struct zn_pkg_coord c = {.struct_size = sizeof(c)};
		if (zn_reader_package(r, i, &c) != ZN_OK)
			pkgs[0]++;
		else if (c.type >= 1 && c.type <= 4)
			pkgs[c.type]++;
	}
	zn_reader_free(r);
	printf("format version:   %u\n", in.format_version);
	printf("entries:          %llu (%llu file%s, %llu director%s, %llu symlink%s, %llu "
	       "hardlink%s)\n",
	       (unsigned long long)in.entries, (unsigned long long)in.files, S(in.files),
	       (unsigned long long)in.dirs, in.dirs == 1 ? "y" : "ies",
	       (unsigned long long)in.symlinks, S(in.symlinks), (unsigned long long)in.hardlinks,
	       S(in.hardlinks));
	if (in.shared_files)
		printf("stored once:      %llu file%s identical to another one\n",
		       (unsigned long long)in.shared_files, S(in.shared_files));
	printf("content bytes:    %llu\n", (unsigned long long)in.content_bytes);
	printf("expanded bytes:   %llu (what extract writes: identical files each time)\n",
	       (unsigned long long)in.expanded_bytes);
	printf("archive bytes:    %llu\n", (unsigned long long)in.archive_bytes);
	if (in.content_bytes)
		printf("ratio:            %.2f%% of content\n",
		       100.0 * (double)in.archive_bytes / (double)in.content_bytes);
	else
		printf("ratio:            n/a (no content)\n");
	printf("codec:            zstd level %d (blocks that do not shrink are stored)\n",
	       in.level);
	printf("blocks:           %llu (%llu stored), %llu bytes\n", (unsigned long long)in.blocks,
	       (unsigned long long)in.stored_blocks, (unsigned long long)in.compressed_bytes);
	printf("chunk size:       %llu\n", (unsigned long long)in.chunk_size);
	printf("index bytes:      %llu\n", (unsigned long long)in.index_bytes);
	if (in.digest == ZN_DIGEST_SHA256 && digest_min)
		printf("digest:           sha256 of files of %llu bytes and more (smaller ones: "
		       "their blocks' checksums)\n",
		       (unsigned long long)digest_min);
	else
		printf("digest:           %s\n", in.digest == ZN_DIGEST_SHA256 ? "sha256" : "none");
	if (repo[0])
		printf("repository:       %s\n", repo);
	if (pkgs[1] + pkgs[2] + pkgs[3] + pkgs[4])
		printf("packages:         %llu maven, %llu pypi, %llu cargo, %llu npm\n",
		       (unsigned long long)pkgs[1], (unsigned long long)pkgs[2],
		       (unsigned long long)pkgs[3], (unsigned long long)pkgs[4]);
	if (bad_pages) {
		cli_error("%s: index damaged: %llu of its %llu pages do not match their checksums; "
		          "the counts above are of the rows that can be read (run verify)",
		          argv[optind], (unsigned long long)bad_pages,
		          (unsigned long long)((in.index_bytes + 4095) / 4096));
		return EXIT_DAMAGED;
	}
	return EXIT_OK;
}

const struct cli_command cli_cmd_verify = {"verify", "", cmd_verify, verify_shortopts,
                                           verify_options};
const struct cli_command cli_cmd_info = {"info", "", cmd_info, "h", cli_help_options};
