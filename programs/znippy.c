/* znippy.c - the command's entry point: dispatches to the subcommands. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
	"\n"
	"Decoders:\n"
	"  gunzip   [-c] [-k] [-f] [-t] [-o OUT] [FILE...]   decompress gzip files\n"
	"  zcat     [FILE...]                   same as gunzip -c\n"
	"\n"
	"Run 'znippy COMMAND --help' for a command's options.\n"
	"  -h, --help      this help\n"
	"  -V, --version   print the version\n"
	"\n" EXIT_CODES_HELP;

/* Archives (and gzip inputs) are read through memory maps: if a file shrinks under the reader
 * (another program truncates it) or its storage fails, the access raises SIGBUS. That is an I/O
 * error, reported as one, not a crash. */
static void on_sigbus(int sig)
{
	(void)sig;
	static const char msg[] = "znippy: an input file was truncated or could not be read while "
				  "in use (SIGBUS)\n";
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_SYSTEM);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, NULL);
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
		printf("znippy %s\n", zn_version());
		return EXIT_OK;
	}
	argc--, argv++;
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
	if (!strcmp(cmd, "gunzip"))
		return cmd_gunzip(argc, argv, 0);
	if (!strcmp(cmd, "zcat"))
		return cmd_gunzip(argc, argv, 1);
	fprintf(stderr, "znippy: unknown command '%s'\nTry 'znippy --help'.\n", cmd);
	return EXIT_USAGE;
}
