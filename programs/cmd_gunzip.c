/* cmd_gunzip.c - `znippy gunzip` and `znippy zcat` (placeholder until the decoder lands). */
#include "cli.h"

int cmd_gunzip(int argc, char **argv, int zcat)
{
	(void)argc;
	(void)argv;
	(void)zcat;
	cli_error("gunzip: not implemented yet");
	return EXIT_USAGE;
}
