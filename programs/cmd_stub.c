/* cmd_stub.c - temporary placeholders for archive commands being written. */
#include "cli.h"
int cmd_create(int argc, char **argv) { (void)argc; (void)argv; return EXIT_USAGE; }
int cmd_extract(int argc, char **argv) { (void)argc; (void)argv; return EXIT_USAGE; }
int cmd_list(int argc, char **argv) { (void)argc; (void)argv; return EXIT_USAGE; }
int cmd_verify(int argc, char **argv) { (void)argc; (void)argv; return EXIT_USAGE; }
int cmd_cat(int argc, char **argv) { (void)argc; (void)argv; return EXIT_USAGE; }
int cmd_info(int argc, char **argv) { (void)argc; (void)argv; return EXIT_USAGE; }
