/* SPDX-License-Identifier: MIT */
/* cmd_bunzip2.c - `znippy bunzip2` and `znippy bzcat`: bzip2 -d's conventions on znippy's
 * parallel bzip2 decoder. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* bzip2's exit codes, not the other commands': 1 a problem with the environment (a file missing,
 * an output that exists, a usage error, an I/O error), 2 a corrupt or invalid input, 3 an internal
 * error. */
enum { BZ_OK = 0, BZ_ENV = 1, BZ_CORRUPT = 2, BZ_INTERNAL = 3 };

/* clang-format off */
static const char bunzip2_help[] =
	"Usage: znippy bunzip2 [-c] [-k] [-f] [-t] [-q] [-v] [-T N] [FILE...]\n"
	"       znippy bzcat [-f] [-T N] [FILE...]   (the same as bunzip2 -c)\n"
	"Decompress bzip2 files, as bzip2 -d does, on every core. FILE.bz2 (or .bz) becomes\n"
	"FILE, FILE.tbz2 (or .tbz) FILE.tar, any other FILE FILE.out, with the mode, owner and\n"
	"times of the input, which is then removed. With no FILE, or when FILE is -, read\n"
	"standard input and write standard output. Several bzip2 streams in a row (pbzip2's\n"
	"files) are decoded as one. Every block's CRC is checked before its output is written,\n"
	"every stream's CRC at the stream's end; an output file is written under a temporary\n"
	"name and renamed into place only once its input decoded completely, so that no\n"
	"partial output is left (not even after a signal). What follows the last stream, if\n"
	"it is not a stream, is ignored with a warning and exit status 2, and what was\n"
	"decoded is kept (bzip2 warns and exits with 0). -1 .. -9, -s and --small are\n"
	"accepted and do nothing, as with bzip2 -d.\n"
	"  -c, --stdout       write to standard output, keep the input files\n"
	"  -d, --decompress   accepted, as bzip2 -d (decompressing is all this does)\n"
	"  -k, --keep         keep the input files\n"
	"  -f, --force        overwrite existing output files; also decode inputs that are\n"
	"                     symlinks or have other links; with -c, copy input that is not\n"
	"                     bzip2, and what follows the last stream, as it is\n"
	"  -t, --test         check integrity (every CRC) only, write nothing\n"
	"  -q, --quiet        no warnings (errors are still said)\n"
	"  -v, --verbose      name each file on standard error as it is done, as bzip2 -v\n"
	"  -T, --threads N    " THREADS_HELP("                     ")
	"  -V, --version      print the version\n"
	"  -h, --help         this help\n"
	"Exit status (bzip2's): 0 success; 1 a problem with the environment (a FILE missing or\n"
	"unreadable, an output that exists, a FILE refused, a usage error, an I/O error); 2 a\n"
	"corrupt input (not bzip2, truncated, a CRC mismatch, a malformed block, trailing\n"
	"garbage after the last stream); 3 an internal error.\n";
/* clang-format on */

struct opts {
	int to_stdout, keep, force, test, verbose;
	unsigned threads;
	size_t name_width; /* the longest FILE, for -v's columns */
};

static int exit_for(zn_result r)
{
	switch (r) {
	case ZN_OK:
		return BZ_OK;
	case ZN_ERR_CORRUPT:
	case ZN_ERR_TRUNCATED:
	case ZN_ERR_CHECKSUM:
	case ZN_ERR_BAD_HEADER:
	case ZN_ERR_TRAILING_GARBAGE:
	case ZN_ERR_LIMIT:
		return BZ_CORRUPT;
	case ZN_ERR_IO:
	case ZN_ERR_NOMEM:
	case ZN_ERR_EXISTS:
		return BZ_ENV;
	default:
		return BZ_INTERNAL;
	}
}

/* What went wrong with a stream, in bzip2's words where it has them. */
static void report(const char *name, zn_result r, uint64_t at)
{
	switch (r) {
	case ZN_ERR_BAD_HEADER:
		cli_error("%s: not a bzip2 file", name);
		break;
	case ZN_ERR_TRUNCATED:
		cli_error("%s: compressed file ends unexpectedly (at byte %llu); perhaps it is "
		          "corrupted",
		          name, (unsigned long long)at);
		break;
	case ZN_ERR_CHECKSUM:
		cli_error("%s: data integrity error: CRC mismatch (at byte %llu)", name,
		          (unsigned long long)at);
		break;
	case ZN_ERR_CORRUPT:
		cli_error(
		        "%s: data integrity error: a malformed block or stream end (at byte %llu)",
		        name, (unsigned long long)at);
		break;
	case ZN_ERR_LIMIT:
		cli_error("%s: a compressed block longer than 2.5 MiB (at byte %llu), which no "
		          "bzip2 encoder writes",
		          name, (unsigned long long)at);
		break;
	default:
		cli_error("%s: %s", name, zn_result_message(r));
	}
}

/* ---- decoding one input -------------------------------------------------------------------- */

struct sink {
	int fd; /* -1: -t */
	const char *name;
	int failed;  /* errno of a failed write, else 0 */
	int garbage; /* the input ended in trailing garbage: all of the streams decoded */
};

static zn_result write_out(void *ctx, const void *data, size_t len)
{
	struct sink *s = ctx;
	if (cli_write_all(s->fd, data, len)) {
		s->failed = errno;
		return ZN_ERR_IO;
	}
	return ZN_OK;
}

static int64_t read_in(void *ctx, void *buf, size_t n)
{
	return (int64_t)cli_read_input(*(int *)ctx, buf, n);
}

/* Decode in_fd (named `name` in messages) to out (its fd -1 for -t). A regular file is mapped
 * and decoded in place, from its offset on; anything else is read. Returns the exit status, the
 * problem said. */
static int decode_fd(int in_fd, const char *name, struct sink *out, const struct opts *op)
{
	struct zn_bunzip2_options o;
	zn_bunzip2_options_init(&o);
	o.threads = op->threads;
	o.pass_unknown = op->force && out->fd >= 0 && op->to_stdout;
	struct zn_bunzip2_info info;
	zn_bunzip2_info_init(&info);
	zn_sink_fn sink = out->fd >= 0 ? write_out : NULL;
	struct stat st;
	off_t at;
	zn_result r;
	if (!fstat(in_fd, &st) && S_ISREG(st.st_mode) && (at = lseek(in_fd, 0, SEEK_CUR)) >= 0 &&
	    st.st_size > at) {
		uint8_t *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in_fd, 0);
		if (map == MAP_FAILED) {
			cli_error("%s: %s", name, strerror(errno));
			return BZ_ENV;
		}
		madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
		r = zn_bunzip2_mem(&o, map + at, (size_t)(st.st_size - at), sink, out, &info);
		munmap(map, (size_t)st.st_size);
		info.in_used += (uint64_t)at;
	} else {
		r = zn_bunzip2(&o, read_in, &in_fd, sink, out, &info);
	}
	if (r == ZN_ERR_IO && out->failed) {
		cli_error("%s: write error: %s", out->name, strerror(out->failed));
		return BZ_ENV;
	}
	if (r == ZN_ERR_IO) {
		cli_error("%s: read error: %s", name, strerror(errno));
		return BZ_ENV;
	}
	if (r == ZN_ERR_TRAILING_GARBAGE) {
		cli_warn("%s: trailing garbage after EOF ignored", name);
		out->garbage = 1;
		return BZ_CORRUPT;
	}
	if (r != ZN_OK)
		report(name, r, info.in_used);
	return exit_for(r);
}

/* -v: "  NAME: " and NAME's padding to the longest FILE, then what happened, as bzip2 -v. */
static void say(const struct opts *op, const char *name, const char *what)
{
	if (!op->verbose)
		return;
	size_t n = strlen(name);
	fprintf(stderr, "  %s: %*s%s\n", name, (int)(op->name_width > n ? op->name_width - n : 0),
	        "", what);
}

/* ---- in place: FILE.bz2 -> FILE ------------------------------------------------------------ */

/* FILE.bz2 -> FILE, .bz -> "", .tbz2 and .tbz -> .tar; anything else FILE.out (*guessed 0). */
static char *output_name(const char *in, int *guessed)
{
	static const struct {
		const char *from, *to;
	} sfx[] = {{".bz2", ""}, {".bz", ""}, {".tbz2", ".tar"}, {".tbz", ".tar"}};
	size_t n = strlen(in);
	const char *base = strrchr(in, '/');
	base = base ? base + 1 : in;
	*guessed = 1;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t f = strlen(sfx[i].from);
		if ((size_t)(in + n - base) > f && !strcmp(in + n - f, sfx[i].from)) {
			char *o = malloc(n - f + strlen(sfx[i].to) + 1);
			if (o) {
				memcpy(o, in, n - f);
				strcpy(o + n - f, sfx[i].to);
			}
			return o;
		}
	}
	*guessed = 0;
	char *o = malloc(n + 5);
	if (o)
		sprintf(o, "%s.out", in);
	return o;
}

/* Whether FILE may be decoded in place, as bzip2 asks: a regular file (or with -f, a symlink to
 * one), with no other links unless -f. The exit status, the refusal said. */
static int check_input(const char *path, const struct stat *lst, const struct stat *st, int force)
{
	if (S_ISDIR(st->st_mode)) {
		cli_error("%s: is a directory", path);
		return BZ_ENV;
	}
	if (!S_ISREG(st->st_mode) || (S_ISLNK(lst->st_mode) && !force)) {
		cli_error("%s: is not a normal file (use -f for a symlink)", path);
		return BZ_ENV;
	}
	if (st->st_nlink > 1 && !force) {
		cli_error("%s: has %llu other link%s (use -f)", path,
		          (unsigned long long)st->st_nlink - 1, st->st_nlink > 2 ? "s" : "");
		return BZ_ENV;
	}
	return BZ_OK;
}

/* The output named `final` exists: refused without -f (and a directory always). */
static int check_output(const char *final, int force)
{
	struct stat st;
	if (lstat(final, &st))
		return BZ_OK;
	if (S_ISDIR(st.st_mode)) {
		cli_error("%s: output is a directory", final);
		return BZ_ENV;
	}
	if (!force) {
		cli_error("%s: output file already exists; use -f to overwrite", final);
		return BZ_ENV;
	}
	return BZ_OK;
}

/* Decode in_fd into a temporary file beside `final`, which takes the input's mode, owner and
 * times and is renamed into place once the input decoded (trailing garbage too: what was decoded
 * is kept, as bzip2 keeps it); on any other failure it is removed. The exit status. */
static int decode_to_file(int in_fd, const char *path, const struct stat *st, const char *final,
                          const struct opts *op, int *whole_out)
{
	char *tmp;
	*whole_out = 0;
	int fd = cli_open_replacement(final, NULL, &tmp);
	if (fd < 0) {
		cli_error("%s: cannot create: %s", final, strerror(errno));
		return BZ_ENV;
	}
	struct sink out = {fd, final, 0, 0};
	int rc = decode_fd(in_fd, path, &out, op), whole = rc == BZ_OK || out.garbage;
	if (whole) {
		(void)!fchown(fd, st->st_uid, st->st_gid);
		fchmod(fd, st->st_mode & 07777);
		struct timespec ts[2] = {st->st_atim, st->st_mtim};
		futimens(fd, ts);
	}
	if (close(fd) && whole) {
		cli_error("%s: %s", final, strerror(errno));
		rc = BZ_ENV, whole = 0;
	}
	if (whole && tmp && cli_rename_into_place(AT_FDCWD, tmp, final, op->force)) {
		int e = errno;
		cli_error("%s: %s", final,
		          e == EEXIST ? "output file already exists; use -f to overwrite"
		                      : strerror(e));
		rc = BZ_ENV, whole = 0;
	}
	if (!whole) /* no partial output is left, as bzip2 deletes it */
		unlink(tmp ? tmp : final);
	if (tmp)
		cli_replacement_done(tmp);
	*whole_out = whole;
	return rc;
}

/* FILE decoded in place (FILE.bz2 -> FILE, then FILE.bz2 removed unless -k), to standard output
 * (-c), or only checked (-t). The exit status. */
static int do_file(const char *path, const struct opts *op)
{
	struct stat lst, st;
	if (lstat(path, &lst) || stat(path, &st)) {
		cli_error("%s: cannot open: %s", path, strerror(errno));
		return BZ_ENV;
	}
	int in_place = !op->to_stdout && !op->test;
	if (S_ISDIR(st.st_mode)) {
		cli_error("%s: is a directory", path);
		return BZ_ENV;
	}
	int rc = in_place ? check_input(path, &lst, &st, op->force) : BZ_OK;
	int guessed = 1;
	char *final = rc == BZ_OK && in_place ? output_name(path, &guessed) : NULL;
	if (in_place && rc == BZ_OK && !final)
		rc = BZ_ENV;
	if (!guessed && final)
		cli_warn("%s: cannot guess the original name -- using %s", path, final);
	if (final && rc == BZ_OK)
		rc = check_output(final, op->force);
	/* In place, O_NONBLOCK: a FIFO put where the file was is not waited on, and is refused
	 * below (on a regular file the flag does nothing). */
	int flags = O_RDONLY | O_CLOEXEC | (in_place ? O_NONBLOCK : 0);
	int in_fd =
	        rc == BZ_OK ? open(path, flags | (in_place && !op->force ? O_NOFOLLOW : 0)) : -1;
	if (rc == BZ_OK && in_fd < 0) {
		cli_error("%s: cannot open: %s", path, strerror(errno));
		rc = BZ_ENV;
	}
	if (rc == BZ_OK && in_place && (fstat(in_fd, &st) || !S_ISREG(st.st_mode))) {
		cli_error("%s: is not a normal file", path);
		rc = BZ_ENV;
	}
	if (rc == BZ_OK && !in_place) {
		struct sink out = {op->test ? -1 : 1, "(stdout)", 0, 0};
		rc = decode_fd(in_fd, path, &out, op);
		if (rc == BZ_OK)
			say(op, path, op->test ? "ok" : "done");
	} else if (rc == BZ_OK) {
		int whole;
		rc = decode_to_file(in_fd, path, &st, final, op, &whole);
		/* Decoded whole (or to trailing garbage, as bzip2 then removes it too). */
		if (whole && !op->keep && unlink(path))
			cli_warn("%s: cannot remove: %s", path, strerror(errno));
		if (rc == BZ_OK)
			say(op, path, "done");
	}
	if (in_fd >= 0)
		close(in_fd);
	free(final);
	return rc;
}

/* Standard input to standard output (or nothing, -t). */
static int do_stdin(const struct opts *op)
{
	if (isatty(0) && !op->force) {
		cli_error("compressed data not read from a terminal; use -f to force");
		return BZ_ENV;
	}
	struct sink out = {op->test ? -1 : 1, "(stdout)", 0, 0};
	int rc = decode_fd(0, "(stdin)", &out, op);
	if (rc == BZ_OK)
		say(op, "(stdin)", op->test ? "ok" : "done");
	return rc;
}

/* ---- the command line ---------------------------------------------------------------------- */

/* The options --help names (the bash completion is made from this table). bzip2's others are
 * read by hand: -1..-9, -s and --small, --fast and --best do nothing; -z and --compress are
 * refused. */
static const char bunzip2_shortopts[] = "cdkftqvT:hV";
static const struct option bunzip2_options[] = {
        {"stdout", no_argument, 0, 'c'},
        {"decompress", no_argument, 0, 'd'},
        {"keep", no_argument, 0, 'k'},
        {"force", no_argument, 0, 'f'},
        {"test", no_argument, 0, 't'},
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},
        {"threads", required_argument, 0, 'T'},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0},
};

/* A usage error, in bzip2's status (1). */
static int usage(const char *cmd, const char *what, const char *arg)
{
	cli_usage_error(cmd, "%s '%s'", what, arg);
	return BZ_ENV;
}

/* One option by its letter (value: arg). -1 to go on, or the exit status. */
static int take_option(struct opts *op, const char *cmd, int letter, const char *arg)
{
	switch (letter) {
	case 'c':
		op->to_stdout = 1;
		break;
	case 'k':
		op->keep = 1;
		break;
	case 'f':
		op->force = 1;
		break;
	case 't':
		op->test = 1;
		break;
	case 'q':
		cli_quiet = 1;
		break;
	case 'v':
		op->verbose = 1;
		break;
	case 'T':
		if (cli_parse_threads(cmd, arg, &op->threads))
			return BZ_ENV;
		break;
	case 'h':
		fputs(bunzip2_help, stdout);
		return BZ_OK;
	case 'V':
		cli_print_version();
		return BZ_OK;
	case 'z':
		cli_error("%s decompresses only; use bzip2 to compress", cmd);
		return BZ_ENV;
	}
	return -1; /* and 'd', 's', '1'..'9' */
}

/* --name or --name=VALUE, the value the next argument if it needs one (*i then moves on). */
static int long_option(void *opp, const char *cmd, int argc, char **argv, int *i)
{
	struct opts *op = opp;
	const char *a = argv[*i] + 2, *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);
	static const char *const quiet_ones[] = {"small", "fast", "best", "repetitive-fast",
	                                         "repetitive-best"};
	for (size_t k = 0; k < sizeof(quiet_ones) / sizeof(quiet_ones[0]); k++)
		if (!eq && !strcmp(a, quiet_ones[k]))
			return -1;
	if (!eq && !strcmp(a, "compress"))
		return take_option(op, cmd, 'z', NULL);
	const struct option *o = bunzip2_options;
	while (o->name && (strlen(o->name) != n || strncmp(o->name, a, n)))
		o++;
	if (!o->name || (eq && o->has_arg == no_argument))
		return usage(cmd, "unknown option", argv[*i]);
	const char *arg = eq ? eq + 1 : NULL;
	if (o->has_arg == required_argument && !arg) {
		if (*i + 1 >= argc)
			return usage(cmd, "option requires an argument", argv[*i]);
		arg = argv[++*i];
	}
	return take_option(op, cmd, o->val, arg);
}

/* A group of short options ("-dkv", "-T4", "-T 4"). */
static int short_options(void *opp, const char *cmd, int argc, char **argv, int *i)
{
	struct opts *op = opp;
	for (const char *p = argv[*i] + 1; *p; p++) {
		if (*p == 'T') {
			if (!p[1] && *i + 1 >= argc)
				return usage(cmd, "option requires an argument", "-T");
			return take_option(op, cmd, 'T', p[1] ? p + 1 : argv[++*i]);
		}
		if (!strchr("cdkftqvhVsz123456789", *p)) {
			char bad[3] = {'-', *p, 0};
			return usage(cmd, "unknown option", bad);
		}
		int rc = take_option(op, cmd, *p, NULL);
		if (rc >= 0)
			return rc;
	}
	return -1;
}

static int run_bunzip2(int argc, char **argv, int bzcat)
{
	const char *cmd = bzcat ? "bzcat" : "bunzip2";
	struct opts op = {.to_stdout = bzcat};
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	int nfiles = 0;
	if (!files)
		return BZ_ENV;
	int rc = cli_decoder_args(argc, argv, cmd, &op, long_option, short_options, files, &nfiles);
	if (rc >= 0) {
		free(files);
		return rc;
	}
	for (int i = 0; i < nfiles; i++)
		if (strlen(files[i]) > op.name_width)
			op.name_width = strlen(files[i]);
	rc = BZ_OK;
	for (int i = 0; i < nfiles; i++) {
		int frc = strcmp(files[i], "-") ? do_file(files[i], &op) : do_stdin(&op);
		rc = frc > rc ? frc : rc;
	}
	free(files);
	return rc;
}

static int cmd_bunzip2(int argc, char **argv)
{
	return run_bunzip2(argc, argv, 0);
}

static int cmd_bzcat(int argc, char **argv)
{
	return run_bunzip2(argc, argv, 1);
}

const struct cli_command cli_cmd_bunzip2 = {"bunzip2", "", cmd_bunzip2, bunzip2_shortopts,
                                            bunzip2_options};
const struct cli_command cli_cmd_bzcat = {"bzcat", "", cmd_bzcat, bunzip2_shortopts,
                                          bunzip2_options};
