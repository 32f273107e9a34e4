/* SPDX-License-Identifier: MIT */
/* cmd_extract.c - `znippy extract`: entries into a directory, stopping cleanly on a signal. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum {
	OPT_EXCLUDE = 1000,
	OPT_PROGRESS,
	OPT_OVERWRITE,
	OPT_CHECK_DIGEST,
	OPT_NUMERIC_OWNER,
	OPT_NO_SPARSE,
	OPT_STRIP,
	OPT_SKIP_OLD,
	OPT_NO_SAME_PERMS,
	OPT_SAME_OWNER,
	OPT_NO_SAME_OWNER,
	OPT_NO_OVERWRITE_DIR,
	OPT_FORCE,
	OPT_PKG_TYPE,
	OPT_PACKAGE,
	OPT_REPO,
};

/* clang-format off */
static const char extract_help[] =
	"Usage: znippy extract ARCHIVE [OPTIONS] [PATTERN...]\n"
	"Extract all entries, or those whose path matches a PATTERN (a glob, or the path itself;\n"
	"a directory's pattern selects everything below it; one ending in '/' names only\n"
	"directories).\n"
	"Paths that are absolute or contain '..' are refused, and no write ever follows a\n"
	"symlink. Damaged files are named and left out; everything else is still extracted.\n"
	"An existing file or link is kept, not overwritten, unless --overwrite (or, without an\n"
	"error, --skip-old-files): the first is named, or with several one line says how many\n"
	"(-v names each), and the exit status is 3, as for tar -k.\n"
	"INT, TERM, HUP or PIPE stop it: files begun but not finished are removed, then it\n"
	"dies of the signal.\n"
	"\n"
	"  -C, --directory DIR   extract into DIR (default: the current directory); a missing\n"
	"                        DIR is created if its parent exists, as unzip -d does; a\n"
	"                        second -C is relative to the one before, as tar's\n"
	"  -T, --threads N       " THREADS_HELP("                        ")
	"      --overwrite       replace existing files and empty directories (default:\n"
	"                        refuse); a file or link is replaced only by a complete,\n"
	"                        checked new one (written as .znippy-*.part beside it, then\n"
	"                        renamed), so damage, a full disk or a stop leaves the old one\n"
	"      --skip-old-files  pass over files and links whose name exists already (as a\n"
	"                        file, link or directory), silently, keeping what is there\n"
	"                        (as tar)\n"
	"      --check-digest    also check each file's SHA-256 before it is kept (every\n"
	"                        block is always checked by its XXH3; files under the\n"
	"                        archive's --digest-min-size have no stored SHA-256)\n"
	"      --numeric-owner   owners by their stored ids; by default a stored user or group\n"
	"                        name this system knows gives its id here, as with tar (owners\n"
	"                        are applied when run as root)\n"
	"      --no-same-owner   files owned by the user extracting them, as root too\n"
	"      --same-owner      apply the stored owners when not run as root too (where the\n"
	"                        system allows it; each owner it cannot give is named, and\n"
	"                        the exit status is 3, as tar's is not 0)\n"
	"  -k, --keep-old-files  as tar -k: an existing file is an error, not replaced (as by\n"
	"                        default), and an existing directory keeps its mode and owner\n"
	"                        (--no-overwrite-dir); it cancels --overwrite and\n"
	"                        --skip-old-files given before it\n"
	"      --no-overwrite-dir  a directory that exists keeps its own mode and owner and\n"
	"                        gets the archive's times, as tar's (by default it gets all)\n"
	"      --force           extract even where the archive expands to more than the\n"
	"                        target's file system has free (bytes, or inodes); by default\n"
	"                        that is refused before anything is written (exit status 3)\n"
	"  -m, --touch           do not restore modification times, as tar -m\n"
	"  -p, --preserve-permissions, --same-permissions\n"
	"                        modes exactly as stored, set-id and sticky bits included (the\n"
	"                        default when run as root; set-id bits only where the stored\n"
	"                        owner and group are given too); otherwise, as tar, the umask\n"
	"                        is taken off and those bits dropped\n"
	"      --no-same-permissions  the umask taken off and those bits dropped, as root too\n"
	"      --exclude GLOB    leave out what GLOB matches, and what is below a directory it\n"
	"                        matches, as create's --exclude (and tar's); repeatable\n"
	"  -X, --exclude-from FILE  --exclude each line of FILE\n"
	PACKAGE_FILTER_HELP("                        ")
	"  -O, --to-stdout       write the selected files' contents to standard output, in\n"
	"                        path order, instead of extracting (as tar -xO; checked as cat\n"
	"                        checks them); with -v their names go to stderr\n"
	"      --strip-components N  (0..4096)\n"
	"                        leave the first N components off each path, as tar: 'a/b/c'\n"
	"                        with 1 becomes 'b/c', and entries with no more components\n"
	"                        than N are left out (PATTERNs match the stored paths)\n"
	"      --no-sparse       write every byte; by default runs of zeros (whole aligned\n"
	"                        64 KiB, or a file's zero end) are left as holes, as zstd -d\n"
	"                        and cp --sparse=always leave them\n"
	"  -v, --verbose         list the paths extracted, in the archive's order, once they\n"
	"                        all are; name each existing file not overwritten\n"
	"      --progress        show a progress line on stderr\n"
	"  -q, --quiet           no progress, no warnings\n"
	"  -h, --help            this help\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;
/* clang-format on */

static void list_extracted(void *ctx, const char *path, size_t len)
{
	(void)ctx;
	cli_put_escaped(stdout, path, len);
	putchar('\n');
}

#ifdef ZN_TEST_HOOKS
/* A test's (ZN_TEST_TRUNCATE_AT): the archive is cut short at the first progress report, as
 * another program truncating it mid-extraction would. */
static const char *truncate_path;
static long long truncate_at;
static void truncating_progress(void *ctx, uint64_t done, uint64_t total)
{
	static atomic_int once;
	if (!atomic_exchange(&once, 1) && truncate(truncate_path, (off_t)truncate_at))
		cli_error("%s: truncate: %s", truncate_path, strerror(errno));
	if (cli_progress_enabled())
		cli_progress_cb(ctx, done, total);
}
#endif

/* extract's problem hook: says whether the target directory itself failed (the library names
 * it by the very string it was given), which needs no summary after it; and, without
 * --overwrite or --skip-old-files, counts the existing files and links not overwritten
 * (ZN_ERR_EXISTS), which a second extraction into the same place meets by the thousand: they
 * are said in one line at the end (say_kept), each only with -v. The library calls it one at
 * a time. */
struct target_watch {
	const char *dir, *archive;
	int failed;
	int no_space;   /* refused: it expands to more than the target's file system has */
	int count_kept; /* neither --overwrite nor --skip-old-files */
	int hint;       /* name --overwrite where a file was not overwritten (not after -k) */
	int each;       /* -v: each named as it comes */
	uint64_t kept;  /* existing files and links not overwritten */
	char *first_path, *first_what; /* the first of them (malloc'd; NULL: none, or no memory) */
};

/* "PATH: what", with the way to replace it where an existing file was not. */
static void say_problem(const struct target_watch *tw, const char *path, zn_result r,
                        const char *what)
{
	char buf[512];
	if (r == ZN_ERR_EXISTS && tw->hint) {
		snprintf(buf, sizeof(buf), "%s (use --overwrite)", what);
		what = buf;
	}
	cli_problem_cb(NULL, path, r, what);
}

static void watch_target(void *ctx, const char *path, zn_result r, const char *what)
{
	struct target_watch *tw = ctx;
	tw->failed |= path == tw->dir;
	if (path == tw->dir && r == ZN_ERR_LIMIT) { /* zn_extract_options.no_space_check */
		tw->no_space = 1;
		cli_progress_end();
		cli_error("%s: extracting into %s: %s (--force extracts anyway)", tw->archive,
		          tw->dir, what);
		return;
	}
	if (cli_truncation_seen()) /* after that, what fails is said once, at the end */
		return;
	if (r == ZN_ERR_EXISTS && tw->count_kept && tw->kept++ == 0 && !tw->each) {
		tw->first_path = strdup(path);
		tw->first_what = strdup(what);
	}
	if (r != ZN_ERR_EXISTS || !tw->count_kept || tw->each)
		say_problem(tw, path, r, what);
}

static const char extract_shortopts[] = ":C:T:X:Opkmvqh";
static const struct option extract_options[] = {
        {"directory", required_argument, 0, 'C'},
        {"threads", required_argument, 0, 'T'},
        {"overwrite", no_argument, 0, OPT_OVERWRITE},
        {"progress", no_argument, 0, OPT_PROGRESS},
        {"check-digest", no_argument, 0, OPT_CHECK_DIGEST},
        {"numeric-owner", no_argument, 0, OPT_NUMERIC_OWNER},
        {"no-sparse", no_argument, 0, OPT_NO_SPARSE},
        {"strip-components", required_argument, 0, OPT_STRIP},
        {"skip-old-files", no_argument, 0, OPT_SKIP_OLD},
        {"preserve-permissions", no_argument, 0, 'p'},
        {"same-permissions", no_argument, 0, 'p'},
        {"no-same-permissions", no_argument, 0, OPT_NO_SAME_PERMS},
        {"verbose", no_argument, 0, 'v'},
        {"same-owner", no_argument, 0, OPT_SAME_OWNER},
        {"no-same-owner", no_argument, 0, OPT_NO_SAME_OWNER},
        {"keep-old-files", no_argument, 0, 'k'},
        {"exclude", required_argument, 0, OPT_EXCLUDE},
        {"exclude-from", required_argument, 0, 'X'},
        {"package-type", required_argument, 0, OPT_PKG_TYPE},
        {"package", required_argument, 0, OPT_PACKAGE},
        {"repo", required_argument, 0, OPT_REPO},
        {"to-stdout", no_argument, 0, 'O'},
        {"touch", no_argument, 0, 'm'},
        {"no-overwrite-dir", no_argument, 0, OPT_NO_OVERWRITE_DIR},
        {"force", no_argument, 0, OPT_FORCE},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
};

struct extract_args {
	struct zn_extract_options opt;
	const char *dir;
	struct cli_excludes ex; /* static (the patterns stay reachable to the end) */
	int to_stdout, keep_old;
	int verbose; /* -v: list what is extracted (the extracted hook) */
};

/* The options that say what becomes of existing files and of owners and modes. Returns 0, -1 for
 * an option that is not one of them, or the exit status. */
static int extract_policy_option(struct extract_args *a, int c)
{
	switch (c) {
	case OPT_OVERWRITE:
		a->opt.overwrite = 1;
		return 0;
	case OPT_SKIP_OLD:
		a->opt.skip_existing = 1;
		return 0;
	case 'k':
		a->keep_old = 1;
		a->opt.overwrite = a->opt.skip_existing = 0;
		a->opt.no_overwrite_dir = 1; /* as tar -k: existing directories stay as they are */
		return 0;
	case OPT_NO_OVERWRITE_DIR:
		a->opt.no_overwrite_dir = 1;
		return 0;
	case OPT_NUMERIC_OWNER:
		a->opt.numeric_owner = 1;
		return 0;
	case OPT_SAME_OWNER:
		a->opt.same_owner = 1;
		return 0;
	case OPT_NO_SAME_OWNER:
		a->opt.same_owner = 0;
		return 0;
	case 'p':
		a->opt.same_permissions = 1;
		return 0;
	case OPT_NO_SAME_PERMS:
		a->opt.same_permissions = 0;
		return 0;
	case 'm':
		a->opt.touch = 1;
		return 0;
	case OPT_FORCE:
		a->opt.no_space_check = 1;
		return 0;
	}
	return -1;
}

/* One option. Returns 0 to go on, or the exit status. */
static int extract_option(struct extract_args *a, int c, const char *arg, char **argv)
{
	uint64_t v;
	switch (c) {
	case 'C':
		return cli_take_dir("extract", &a->dir, arg);
	case 'T':
		return cli_parse_threads("extract", arg, &a->opt.threads) ? EXIT_USAGE : 0;
	case OPT_CHECK_DIGEST:
		a->opt.check_digest = 1;
		return 0;
	case OPT_NO_SPARSE:
		a->opt.sparse = 0;
		return 0;
	case 'v':
		a->verbose = 1;
		return 0;
	case 'O':
		a->to_stdout = 1;
		return 0;
	case OPT_EXCLUDE:
	case 'X':
		return cli_exclude_option(&a->ex, "extract", c == 'X', arg);
	case OPT_PKG_TYPE:
		return cli_package_option(&a->ex, "extract", CLI_PKG_TYPE, arg);
	case OPT_PACKAGE:
		return cli_package_option(&a->ex, "extract", CLI_PKG_COORD, arg);
	case OPT_REPO:
		return cli_package_option(&a->ex, "extract", CLI_PKG_REPO, arg);
	case OPT_STRIP:
		if (cli_parse_uint(arg, 0, 4096, &v))
			return cli_usage_error(
			        "extract", "invalid number '%s' for --strip-components (0..4096)",
			        arg);
		a->opt.strip_components = (unsigned)v;
		return 0;
	case OPT_PROGRESS:
		cli_progress = 1;
		return 0;
	case 'q':
		cli_quiet = 1;
		return 0;
	case 'h':
		fputs(extract_help, stdout);
		return EXIT_OK; /* the caller stops at 'h' */
	}
	int rc = extract_policy_option(a, c);
	return rc >= 0 ? rc : cli_option_error("extract", c, argv);
}

/* The options into *a, up to optind. Returns -1 to go on, or the exit status. */
static int parse_extract_args(int argc, char **argv, struct extract_args *a)
{
	zn_extract_options_init(&a->opt);
	a->dir = ".";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, extract_shortopts, extract_options, NULL)) != -1) {
		int rc = extract_option(a, c, optarg, argv);
		if (rc || c == 'h')
			return rc;
	}
	if (a->opt.overwrite && a->opt.skip_existing)
		return cli_usage_error("extract", "--overwrite and --skip-old-files: choose one");
	if (optind >= argc)
		return cli_usage_error("extract", "missing ARCHIVE");
	return -1;
}

/* zn_extract with the signals deferred: a signal stops the extraction rather than killing it
 * halfway (files begun but not finished are removed first, then the signal takes its course), and
 * so does the archive shrinking under the reader (SIGBUS: *truncated). */
/* The line for the existing files and links that were kept (none after the archive shrank): the
 * one there is, as it came, or how many (after -v too, which named each). */
static void say_kept(struct target_watch *tw, int truncated)
{
	if (!truncated && tw->kept == 1 && !tw->each && tw->first_path && tw->first_what) {
		say_problem(tw, tw->first_path, ZN_ERR_EXISTS, tw->first_what);
	} else if (!truncated && tw->kept && (tw->kept > 1 || !tw->each)) {
		cli_error("%llu existing files and links were kept, not overwritten (%s%s)",
		          (unsigned long long)tw->kept,
		          tw->hint ? "use --overwrite to replace them, or --skip-old-files to keep "
		                     "them without an error"
		                   : "-k",
		          tw->each ? "" : "; -v names each");
	}
	free(tw->first_path);
	free(tw->first_what);
}

static zn_result extract_stoppable(struct zn_reader *r, const char *path, const uint8_t *sel,
                                   struct extract_args *a, struct target_watch *tw, int *truncated)
{
	a->opt.stop = cli_stop_flag();
	cli_defer_signals();
	const void *map;
	uint64_t map_len;
	zn_reader_mapping(r, &map, &map_len);
	cli_survive_truncation(map, map_len);
	/* A file over the file size limit (ulimit -f) fails with EFBIG and is named, as tar
	 * names it, instead of killing the extraction halfway. */
	signal(SIGXFSZ, SIG_IGN);
	zn_progress_fn progress = cli_progress_enabled() ? cli_progress_cb : NULL;
#ifdef ZN_TEST_HOOKS
	if (getenv("ZN_TEST_TRUNCATE_AT")) { /* the archive cut there once data is written */
		truncate_path = path;
		truncate_at = strtoll(getenv("ZN_TEST_TRUNCATE_AT"), NULL, 10);
		progress = truncating_progress;
	}
#else
	(void)path;
#endif
	const struct zn_hooks hooks = {.ctx = tw,
	                               .problem = watch_target,
	                               .progress = progress,
	                               .extracted = a->verbose ? list_extracted : NULL};
	zn_result res = zn_extract(r, a->dir, sel, &a->opt, &hooks);
	cli_progress_end();
	*truncated = cli_truncation_seen();
	cli_end_deferred_signals();
	return res;
}

/* The closing message for what zn_extract returned (its problems were named as they came), and
 * the exit status. */
static int extract_status(const char *path, zn_result res, int truncated,
                          const struct target_watch *tw, int missing)
{
	if (truncated) {
		cli_error("%s: the archive shrank while being read (truncated or rewritten by "
		          "another program); extraction stopped, and the files it had begun are "
		          "removed",
		          path);
		return EXIT_SYSTEM;
	}
	if (res == ZN_OK)
		return missing ? EXIT_DAMAGED : EXIT_OK;
	if (tw->no_space) /* said by watch_target: as a full disk, a fault of the system's */
		return EXIT_SYSTEM;
	if (res == ZN_ERR_DAMAGED)
		cli_error("%s: parts of the archive are damaged, or entries unsafe (see above)",
		          path);
	else if (res == ZN_ERR_IO && !tw->failed)
		cli_error("%s: not everything could be extracted (see above)", path);
	else if (!tw->failed)
		cli_error("%s: %s", path, zn_result_message(res));
	return cli_exit_code(res);
}

static int cmd_extract(int argc, char **argv)
{
	static struct extract_args a; /* static: see struct extract_args */
	int rc = parse_extract_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	const char *path = argv[optind++];
	struct zn_reader *r;
	zn_result res = cli_open_archive(path, &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	uint8_t *sel;
	int missing = cli_select_kept(r, &a.ex, argv + optind, argc - optind, &sel);
	if (missing < 0 || (optind < argc && missing == argc - optind)) { /* not even -C DIR */
		free(sel);
		zn_reader_free(r);
		return missing < 0 ? EXIT_SYSTEM : EXIT_DAMAGED;
	}
	if (a.to_stdout) {
		rc = cli_extract_to_stdout(r, path, sel, a.opt.strip_components, a.verbose);
		free(sel);
		zn_reader_free(r);
		return rc > EXIT_OK || !missing ? rc : EXIT_DAMAGED;
	}
	if (a.opt.check_digest) {
		struct zn_archive_info in = {.struct_size = sizeof(in)};
		zn_reader_info(r, &in);
		if (in.digest != ZN_DIGEST_SHA256)
			cli_warn(
			        "%s: has no file digests (made with --digest none): --check-digest "
			        "adds nothing to the blocks' checks",
			        path);
	}
	struct target_watch tw = {.dir = a.dir,
	                          .archive = path,
	                          .count_kept = !a.opt.overwrite && !a.opt.skip_existing,
	                          .hint = !a.opt.overwrite && !a.keep_old && !a.opt.skip_existing,
	                          .each = a.verbose};
	int truncated;
	res = extract_stoppable(r, path, sel, &a, &tw, &truncated);
	say_kept(&tw, truncated);
	free(sel);
	zn_reader_free(r);
	return extract_status(path, res, truncated, &tw, missing);
}

const struct cli_command cli_cmd_extract = {"extract", "x", cmd_extract, extract_shortopts,
                                            extract_options};
