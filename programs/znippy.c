/* SPDX-License-Identifier: MIT */
/* znippy.c - the command's entry point: dispatches to the subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
        "Usage: znippy COMMAND [OPTIONS] ...\n"
        "\n"
        "Archives of directory trees:\n"
        "  create   -o OUT [options] PATH...   pack files and directories into an archive\n"
        "  extract  ARCHIVE [-C DIR] [PATTERN...]   unpack all or selected entries\n"
        "  list     ARCHIVE [-l] [--json] [PATTERN...]   list entries\n"
        "  verify   ARCHIVE                     check every block and every file digest\n"
        "  cat      ARCHIVE PATH...             write files' contents to standard output\n"
        "  info     ARCHIVE                     counts, sizes, ratio, codec, chunk size\n"
        "  diff     ARCHIVE [-C DIR] [PATTERN...]   compare with the files on disk (tar -d)\n"
        "\n"
        "Decoders:\n"
        "  gunzip   [-c] [-k] [-f] [-t] [-l] [-v] [-q] [-n|-N] [-r] [-S SUF] [-o OUT] [FILE...]\n"
        "                                       decompress gzip files\n"
        "  zcat     [FILE...]                   same as gunzip -c\n"
        "\n"
        "Short names: c (create), x (extract), ls and t (list), d and compare (diff).\n"
        "Run 'znippy COMMAND --help' for a command's options.\n"
        "  -h, --help      this help\n"
        "  -V, --version   print the version (also as a command's option)\n"
        "\n" EXIT_CODES_HELP;

static int run(int argc, char **argv);

/* Whatever a command printed on standard output (info, --help, --version, ...) must have
 * reached it: a full disk or a closed descriptor is an error, as for cat(1). Commands that write
 * data (list, cat, gunzip -c) report their own write errors and return non-zero already. */
int main(int argc, char **argv)
{
	int rc = run(argc, argv);
	int flushed = fflush(stdout) == 0, e = errno;
	if (!flushed || ferror(stdout)) {
		if (rc == EXIT_OK) /* an earlier failed write left no errno of its own */
			cli_error("write error on standard output: %s",
			          strerror(!flushed && e ? e : EIO));
		return rc == EXIT_OK ? EXIT_SYSTEM : rc;
	}
	return rc;
}

/* Standard descriptors a parent left closed are taken by /dev/null opened read-only, before any
 * file is opened: otherwise the archive being written could become descriptor 2 and receive
 * the messages. Writes to them then fail with EBADF, which commands report as they would for
 * a closed descriptor. */
static void reserve_std_fds(void)
{
	/* Going up, every lower descriptor is open, so open() returns exactly fd. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDONLY) < 0)
			break;
}

static int run(int argc, char **argv)
{
	reserve_std_fds();
	opterr = 0; /* commands name refused options themselves (cli_option_error) */
	cli_install_signals();
	cli_raise_fd_limit();
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		cli_print_version();
		return EXIT_OK;
	}
	argc--, argv++;
	/* "znippy COMMAND --version" (or -V, which no command takes for anything else), as tar
	 * and gzip take it after a command too: among the options before the first operand
	 * (gunzip and zcat read their own). */
	for (int i = 1; i < argc && strcmp(cmd, "gunzip") && strcmp(cmd, "zcat"); i++) {
		if (argv[i][0] != '-' || !argv[i][1] || !strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
			cli_print_version();
			return EXIT_OK;
		}
	}
	if (!strcmp(cmd, "create") || !strcmp(cmd, "c"))
		return cmd_create(argc, argv);
	if (!strcmp(cmd, "extract") || !strcmp(cmd, "x"))
		return cmd_extract(argc, argv);
	if (!strcmp(cmd, "list") || !strcmp(cmd, "ls") || !strcmp(cmd, "t"))
		return cmd_list(argc, argv);
	if (!strcmp(cmd, "verify"))
		return cmd_verify(argc, argv);
	if (!strcmp(cmd, "cat"))
		return cmd_cat(argc, argv);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc, argv);
	if (!strcmp(cmd, "diff") || !strcmp(cmd, "compare") || !strcmp(cmd, "d"))
		return cmd_diff(argc, argv);
	if (!strcmp(cmd, "gunzip"))
		return cmd_gunzip(argc, argv, 0);
	if (!strcmp(cmd, "zcat"))
		return cmd_gunzip(argc, argv, 1);
	fprintf(stderr, "znippy: unknown command '%s'\nTry 'znippy --help'.\n", cmd);
	return EXIT_USAGE;
}
