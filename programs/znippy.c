/* SPDX-License-Identifier: MIT */
/* znippy.c - the command's entry point: finds the command (its name, a short name, tar's bundled
 * letters, or the one meant by a name mistyped) and runs it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* clang-format off */
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
	"  index    ARCHIVE... [-o FILE] [--format arrow|jsonl|csv]\n"
	"                                       export the entries of archives as one table\n"
	"\n"
	"Decoders:\n"
	"  gunzip   [-c] [-k] [-f] [-t] [-l] [-v] [-q] [-n|-N] [-r] [-S SUF] [-o OUT] [FILE...]\n"
	"                                       decompress gzip files\n"
	"  zcat     [FILE...]                   same as gunzip -c\n"
	"  bunzip2  [-c] [-k] [-f] [-t] [-v] [-q] [-T N] [FILE...]   decompress bzip2 files\n"
	"  bzcat    [FILE...]                   same as bunzip2 -c\n"
	"  unzstd   [-c] [-k|--rm] [-f] [-t] [-v] [-q] [-o OUT] [-D DICT] [--long[=N]] [FILE...]\n"
	"                                       decompress zstd files\n"
	"  zstdcat  [FILE...]                   same as unzstd -c\n"
	"  unzip    [-l|-v|-Z1|-t|-p] [-o|-n] [-j] [-q] [-T N] ZIP [NAME...] [-x NAME...] [-d DIR]\n"
	"                                       list, test or extract ZIP and JAR archives\n"
	"\n"
	"Short names: c (create), x (extract), ls and t (list), d and compare (diff).\n"
	"tar's bundled letters: cf OUT PATH... (create -o OUT), xf ARCHIVE [PATTERN...]\n"
	"(extract), tf ARCHIVE (list), with v (-v), and for x k, m, p, O: 'znippy cvf a.zn dir'.\n"
	"Run 'znippy COMMAND --help' for a command's options, 'man znippy' for the manual.\n"
	"  -h, --help      this help\n"
	"  -V, --version   print the version (also as a command's option)\n"
	"      --bash-completion\n"
	"                  print the bash completion script (made from the commands' options)\n"
	"\n" EXIT_CODES_HELP;
/* clang-format on */

const struct cli_command *const cli_commands[] = {
        &cli_cmd_create, &cli_cmd_extract, &cli_cmd_list,    &cli_cmd_verify,
        &cli_cmd_cat,    &cli_cmd_info,    &cli_cmd_diff,    &cli_cmd_index,
        &cli_cmd_gunzip, &cli_cmd_zcat,    &cli_cmd_bunzip2, &cli_cmd_bzcat,
        &cli_cmd_unzstd, &cli_cmd_zstdcat, &cli_cmd_unzip,   NULL,
};

/* Whether word is one of the space-separated names in list. */
static int among(const char *word, const char *list)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, " ");
		if (k == n && !memcmp(p, word, n))
			return 1;
		p += k + (p[k] == ' ');
	}
	return 0;
}

static const struct cli_command *find_command(const char *name)
{
	for (const struct cli_command *const *c = cli_commands; *c; c++)
		if (!strcmp((*c)->name, name) || among(name, (*c)->aliases))
			return *c;
	return NULL;
}

/* The edit distance of a and b (insertions, deletions, substitutions and swaps of neighbours,
 * each 1: optimal string alignment), counted up to 9. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 32 || m > 32)
		return 9;
	size_t d[33][33];
	for (size_t i = 0; i <= n; i++)
		for (size_t j = 0; j <= m; j++) {
			if (!i || !j) {
				d[i][j] = i + j;
				continue;
			}
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m] < 9 ? d[n][m] : 9;
}

/* "unknown command", and as git does, the commands nearest to what was typed: those at the
 * smallest edit distance, if it is at most 2 and at most half the word (names of one letter are
 * too near to everything to be suggested). */
static int unknown_command(const char *cmd)
{
	fprintf(stderr, "znippy: unknown command '%s'\n", cmd);
	const char *near[16];
	size_t nnear = 0, best = 3;
	for (const struct cli_command *const *c = cli_commands; *c; c++) {
		const char *names[4] = {(*c)->name};
		char alias[4][16];
		size_t k = 1;
		for (const char *p = (*c)->aliases; *p && k < 4;) {
			size_t len = strcspn(p, " ");
			if (len > 1 && len < sizeof(alias[0])) {
				memcpy(alias[k], p, len);
				alias[k][len] = 0;
				names[k] = alias[k];
				k++;
			}
			p += len + (p[len] == ' ');
		}
		for (size_t i = 0; i < k; i++) {
			size_t d = edit_distance(cmd, names[i]);
			if (d > best || 2 * d > strlen(cmd))
				continue;
			if (d < best)
				nnear = 0, best = d;
			if (nnear < 16)
				near[nnear++] = (*c)->name;
		}
	}
	for (size_t i = 0; i < nnear; i++) /* a command met twice (by name and alias) once */
		if (!i || strcmp(near[i], near[i - 1]))
			fprintf(stderr, "%s '%s'", i ? " or" : "Did you mean", near[i]);
	if (nnear)
		fputs("?\n", stderr);
	fputs("Try 'znippy --help'.\n", stderr);
	return EXIT_USAGE;
}

/* tar's bundled letters ("cvf OUT PATH...", "xf ARCHIVE", "tvf ARCHIVE") as the command they
 * stand for: in *argv (argv[0] the command, then the options the letters give, then the
 * ARCHIVE, then the rest as given). Returns NULL for a word that is not such a bundle (one
 * mode letter c, x or t and an f), the command otherwise; NULL with *rc set for a letter it
 * does not take (said). */
static const struct cli_command *tar_bundle(int *argc, char ***argv, int *rc)
{
	const char *w = (*argv)[1] + ((*argv)[1][0] == '-'); /* tar takes "-cf" too */
	const char *mode = w + strspn(w, "fvkmpOzjJa");
	if (!*mode || !strchr("cxt", *mode) || mode[1 + strspn(mode + 1, "fvkmpOzjJa")] ||
	    !strchr(w, 'f'))
		return NULL;
	const char *takes = *mode == 'c' ? "fv" : *mode == 'x' ? "fvkmpO" : "fv";
	for (const char *p = w; *p; p++) {
		if (p == mode || strchr(takes, *p))
			continue;
		if (strchr("zjJa", *p))
			fprintf(stderr,
			        "znippy: '%s': tar's '%c' is not taken: an archive is compressed "
			        "by "
			        "znippy itself (leave the '%c' out)\n",
			        w, *p, *p);
		else
			fprintf(stderr, "znippy: '%s': '%c' is not taken with '%c'\n", w, *p,
			        *mode);
		fputs("Try 'znippy --help'.\n", stderr);
		*rc = EXIT_USAGE;
		return NULL;
	}
	if (*argc < 3) {
		fprintf(stderr, "znippy: '%s': f needs the ARCHIVE's name after it\n", w);
		fputs("Try 'znippy --help'.\n", stderr);
		*rc = EXIT_USAGE;
		return NULL;
	}
	/* The command, up to 8 options, -o for create, the ARCHIVE, the rest, NULL; static:
	 * reachable until the command ends. */
	static char **nv;
	nv = calloc((size_t)*argc + 12, sizeof(*nv));
	if (!nv) {
		*rc = EXIT_SYSTEM;
		return NULL;
	}
	static char letters[8][3]; /* "-v", "-k", ... */
	int n = 0, k = 0;
	const struct cli_command *c = find_command((char[]){*mode, 0});
	nv[n++] = (char *)c->name;
	for (const char *p = w; *p; p++)
		if (p != mode && *p != 'f' && k < 8) {
			letters[k][0] = '-', letters[k][1] = *p;
			nv[n++] = letters[k++];
		}
	if (*mode == 'c')
		nv[n++] = "-o";
	for (int i = 2; i < *argc; i++)
		nv[n++] = (*argv)[i];
	*argc = n;
	*argv = nv;
	return c;
}

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

/* "znippy COMMAND --version" (or -V, which no command takes for anything else), as tar and gzip
 * take it after a command too: among the options before the first operand (gunzip and zcat
 * read their own). */
static int asks_version(const struct cli_command *c, int argc, char **argv)
{
	for (int i = 1; i < argc && c->run != cli_cmd_gunzip.run && c->run != cli_cmd_zcat.run &&
	                c->run != cli_cmd_unzip.run;
	     i++) {
		if (argv[i][0] != '-' || !argv[i][1] || !strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V"))
			return 1;
	}
	return 0;
}

/* With TZ unset, glibc stats /etc/localtime on every mktime() and localtime() call: one system
 * call per ZIP entry (their DOS times are local) and per line `list -l` prints. Naming the same
 * file once makes it read once (no TZ and no /etc/localtime is UTC either way). */
static void name_local_zone(void)
{
	if (!getenv("TZ"))
		setenv("TZ", ":/etc/localtime", 0);
}

static int run(int argc, char **argv)
{
	reserve_std_fds();
	name_local_zone();
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
	if (!strcmp(cmd, "--bash-completion"))
		return cli_print_bash_completion();
	int rc = EXIT_OK;
	const struct cli_command *c = find_command(cmd);
	if (c) {
		argc--, argv++;
	} else if (!(c = tar_bundle(&argc, &argv, &rc))) {
		return rc ? rc : unknown_command(cmd);
	}
	if (asks_version(c, argc, argv)) {
		cli_print_version();
		return EXIT_OK;
	}
	return c->run(argc, argv);
}
