/* SPDX-License-Identifier: MIT */
/* cli.h - shared pieces of the znippy command: exit codes, messages, option helpers. */
#ifndef ZN_CLI_H
#define ZN_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "znippy.h"

/* Exit codes, documented in --help and README.md. */
enum {
	EXIT_OK = 0,
	EXIT_DAMAGED = 1, /* damaged or invalid input */
	EXIT_USAGE = 2,   /* usage error */
	EXIT_SYSTEM = 3,  /* I/O or system error */
};

#define CLI_STR_(x) #x
#define CLI_STR(x)  CLI_STR_(x) /* a number's macro as a string, for help texts */

/* -T's line in the help of create, extract and verify. */
#define THREADS_HELP(indent)                                                                       \
	"worker threads (default or 0: one per CPU, as nproc;\n" indent                            \
	"more than " CLI_STR(ZN_THREADS_MAX) " count as " CLI_STR(ZN_THREADS_MAX) ")\n"

/* list's and extract's package filters (cli_pkg.c), `indent` the help's column. */
#define PACKAGE_FILTER_HELP(indent)                                                                \
	"      --package-type TYPE\n" indent                                                       \
	"only package files of TYPE: maven, pypi, cargo or npm\n"                                  \
	"      --package GROUP:NAME:VERSION\n" indent                                              \
	"only package files whose coordinates match these globs\n" indent                          \
	"(NAME:VERSION or NAME: any group), e.g.\n" indent "'org.apache.*:commons-*:3.*'\n"        \
	"      --repo GLOB\n" indent                                                               \
	"only if the archive's repository name (create --repo)\n" indent "matches\n"

#define EXIT_CODES_HELP                                                                            \
	"Exit status: 0 success, 1 damaged or invalid input, 2 usage error, 3 I/O or system "      \
	"error.\n"

extern const char *cli_prog; /* "znippy" */
extern int cli_quiet;        /* --quiet */
extern int cli_progress;     /* 1 forced on, 0 off, -1 auto (stderr is a terminal) */

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Writes n bytes of s as `list` shows names: UTF-8 characters as they are; backslash, tab and
 * newline as C escapes; control characters (C0, DEL, C1), bidirectional and zero-width marks,
 * line separators and bytes that are not UTF-8 as \ooo. */
void cli_put_escaped(FILE *f, const char *s, size_t n);
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The usage error for an option getopt refused (it returned c: '?' or ':' with opterr 0 and
 * an optstring starting with ':'): names the option; returns EXIT_USAGE. */
int cli_option_error(const char *cmd, int c, char *const *argv);
/* Print "znippy CMD: message\nTry 'znippy CMD --help'." and return EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Exit code for a library result: damaged/invalid input -> 1, argument -> 2, the rest -> 3. */
int cli_exit_code(zn_result r);

/* "64K", "4M", "1G", "123" -> bytes; returns 0 on success. */
int cli_parse_size(const char *s, uint64_t *out);
/* Unsigned integer in [lo, hi]; returns 0 on success. */
int cli_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* -T N of cmd into *out: any number, more than ZN_THREADS_MAX taken as ZN_THREADS_MAX (0: one per
 * CPU); 0, or the usage error said (EXIT_USAGE). */
int cli_parse_threads(const char *cmd, const char *arg, unsigned *out);
/* -C DIR for extract and diff into *dir: not empty, and one after another is relative to it, as
 * tar takes them (the string is kept, in a static, to the end of the process). 0, or the exit
 * status. */
int cli_take_dir(const char *cmd, const char **dir, const char *arg);
/* The options of a command whose only one is -h/--help (cat, info), up to optind. Returns -1 to
 * go on, else the exit status (help printed, or a usage error named). */
int cli_help_only(const char *cmd, int argc, char **argv, const char *optstring, const char *help);
/* read(2) of an input: again after EINTR, and on a descriptor a parent left non-blocking
 * (EAGAIN) made blocking and again, as gzip does. The bytes read, or -1 with errno set. */
ssize_t cli_read_input(int fd, void *buf, size_t cap);
/* One option word of a decoder's command line, argv[*i] (the parser may move *i past a value it
 * takes); op is the command's options. -1 to go on, or the exit status. */
typedef int (*cli_arg_fn)(void *op, const char *cmd, int argc, char **argv, int *i);
/* A decoder's command line as gzip, bzip2 and zstd read theirs: options anywhere among the
 * FILEs, "--" ending them, "-" a FILE; "--name" words go to long_opt, "-xyz" words to
 * short_opts. FILEs into files[*nfiles] in order, "-" when there are none. -1 to go on, or the
 * exit status a parser returned. */
int cli_decoder_args(int argc, char **argv, const char *cmd, void *op, cli_arg_fn long_opt,
                     cli_arg_fn short_opts, char **files, int *nfiles);

/* Progress line on stderr (only when enabled). */
void cli_progress_cb(void *ctx, uint64_t done, uint64_t total);
void cli_progress_end(void);
int cli_progress_enabled(void);

/* The problem hook: prints "znippy: PATH: what" on stderr. */
void cli_problem_cb(void *ctx, const char *path, zn_result r, const char *what);
/* "znippy: PATH: what" on stderr for an entry (its path not NUL-terminated), after what
 * standard output holds so far. */
void cli_name_entry(const struct zn_entry *e, const char *what);
/* cli_name_entry for the fields of e the index lost (zn_reader_entry_lost), and what that means
 * (`then` is added to the message). */
void cli_name_lost(const struct zn_entry *e, unsigned lost, const char *then);
/* The exit status that says more of two (the larger), as diff(1) ranks trouble above a
 * difference. */
int cli_worse(int a, int b);
/* The same for extract and cat, where damage (1) outranks an I/O error (3). */
int cli_damage_first(int a, int b);

/* A path or pattern as the archive stores paths, in place: empty and "." parts removed, so
 * leading, repeated and trailing slashes too ("./dir/" -> "dir", "a//b" and "a/./b" -> "a/b");
 * what names no part at all ("." or "/") becomes ".", which no stored path is. */
void cli_normalize_path(char *s);
/* A PATTERN as given, in the form stored paths have (a normalised copy to free; NULL when out of
 * memory), and in *dir_only whether it ended in '/', naming only directories. */
char *cli_pattern(const char *arg, int *dir_only);
/* A glob compiled for cli_glob_scan (cli_glob.c): fnmatch's language without flags, in the C
 * locale. NULL when out of memory or for what is not compiled (equivalence classes, collating
 * symbols, an unknown class, a trailing '\'): the caller then asks fnmatch. */
struct cli_glob *cli_glob_new(const char *pattern);
void cli_glob_free(struct cli_glob *g);

/* Glob match of an archive path against a pattern (g: it compiled by cli_glob_new, or NULL):
 * fnmatch without FNM_PATHNAME, or the path itself (a name with glob characters in it); a
 * pattern also selects everything below a matching directory (tar's convention). */
int cli_path_matches(const char *pattern, const struct cli_glob *g, const char *path,
                     size_t path_len);
/* Runs g over s[0, len) once. Where the glob matches s[b, e), b = 0 or, with tails, just past a
 * '/' (b <= e), ask(ctx, e) is called for that e (once per e, in increasing order) and says
 * whether to stop there. Returns 1 when an ask said so, 0 when none did, -1 when out of memory.
 */
int cli_glob_scan(const struct cli_glob *g, const char *s, size_t len, int tails,
                  int (*ask)(void *ctx, size_t end), void *ctx);

double cli_now(void);
/* "znippy VERSION" on standard output: --version and -V, of every command. */
void cli_print_version(void);

/* Write all len bytes to fd, retrying short writes and EINTR. 0, or -1 with errno set. */
int cli_write_all(int fd, const void *buf, size_t len);

/* Signals: INT, TERM, HUP, PIPE and XFSZ (unless ignored at start) first remove the temporary
 * file of cli_open_replacement(), then take their default action; SIGBUS (a mapped input that
 * shrank or could not be read) removes it, says so and exits with EXIT_SYSTEM. Called once
 * from main. */
void cli_install_signals(void);
/* For work that cleans up after itself when told to stop (extract): from here on INT, TERM, HUP
 * and PIPE (unless ignored) only set *cli_stop_flag() to the signal's number. After the work,
 * cli_end_deferred_signals() restores the handlers and, if one came, dies of it (after the clean-
 * up, with the status a shell expects). */
void cli_defer_signals(void);
const volatile sig_atomic_t *cli_stop_flag(void);
void cli_end_deferred_signals(void);
/* While signals are deferred: a SIGBUS in [base, base + len) (the mapped archive, shrinking
 * under the reader) sets *cli_stop_flag() instead of ending the process, with zeros where the
 * archive's bytes were. cli_truncation_seen() ends that (before the archive is unmapped) and
 * says whether it happened. */
void cli_survive_truncation(const void *base, uint64_t len);
int cli_truncation_seen(void);
/* Raise the soft limit on open files to the hard one (at most 2^20): a directory walk keeps one
 * descriptor per level, and the default soft limit of 1024 cuts off trees deeper than that. */
void cli_raise_fd_limit(void);
/* An output that replaces `final` only once complete: a temporary file ".NAME.XXXXXX" beside it
 * (an unpredictable name, as mkostemp makes, never through a symlink; mode 0666 less the umask, or,
 * with `like`, the group (owner too as root) and permission bits of the file it replaces, set while
 * it is still 0600 so that it is never more open than either), which a signal removes; its name
 * (malloc'd) goes to *tmp, for renaming into place. Where the directory may not be written but
 * `final` is an existing regular file (a read-only directory, a bind-mounted file), `final`
 * itself is opened, truncated, and *tmp is NULL. Returns the descriptor, or -1 with errno set.
 * One at a time. */
int cli_open_replacement(const char *final, const struct stat *like, char **tmp);
/* The same with `final` (and the name in *tmp) relative to directory dirfd, as openat takes
 * them: the directory of `final` is opened once, and the temporary file is made, and removed by a
 * signal, in that directory whatever happens to the path above it. */
int cli_open_replacement_at(int dirfd, const char *final, const struct stat *like, char **tmp);
/* After tmp was renamed into place or removed: no longer removed by signals; frees tmp. */
void cli_replacement_done(char *tmp);

/* create's --owner, --group, --numeric-owner, --mode and --mtime (cli_meta.c). The parsers
 * return 0, or an exit status with the problem said. */
struct mode_step {          /* as coreutils' struct mode_change */
	char op;            /* '+', '-' or '=' */
	char copy;          /* 'u', 'g', 'o': that class's permissions (value: its bits); else 0 */
	uint8_t x_if_any;   /* X */
	uint32_t affected;  /* the bits of the classes named; 0: none named (the umask limits) */
	uint32_t value;     /* the bits given */
	uint32_t mentioned; /* the bits named: a directory's set-id bits change only if named */
};
enum { MTIME_KEEP, MTIME_SET, MTIME_CLAMP };
struct cli_meta {
	int set_owner, set_group, numeric_owner;
	uint32_t uid, gid;
	char uname[256], gname[256];
	int mtime_policy; /* MTIME_* */
	int64_t mtime_ns;
	struct mode_step *mode;
	size_t nmode;
	uint32_t umask;
	FILE *verbose; /* -v: each stored path is written here, in path order; NULL: not */
};
int cli_meta_owner(struct cli_meta *m, const char *arg, int group);
int cli_meta_mtime(struct cli_meta *m, const char *arg);
int cli_meta_mode(struct cli_meta *m, const char *arg);
int cli_meta_active(const struct cli_meta *m);
void cli_meta_hook(void *ctx, struct zn_entry *e); /* a zn_meta_fn over a struct cli_meta */

/*
 * An output file is written under a temporary name in its directory and renamed into place only
 * once its stream decoded and checked completely, so that no partial output is ever left under
 * the real name (a signal removes the temporary file too, see cli_install_signals). The rename
 * replaces an existing name (with -f) without writing through it: a symlink or a hardlink to the
 * input stays what it pointed to. Only -o naming a device, pipe or socket (/dev/null,
 * /dev/stdout) is written in place.
 */
/* The exit statuses of a decoder's output files, which differ between the tools each follows:
 * `refused` for an output that exists (without force) or is a directory, and for an input
 * cli_check_in_place_input passes over; `failed` for an output that cannot be made, closed or
 * renamed. quiet_refusals: -q (cli_quiet) silences the input refusals, as gzip -q does. */
struct cli_out_codes {
	int refused, failed, quiet_refusals;
};
struct cli_out {
	int dir;           /* the directory `final` and `tmp` are in (AT_FDCWD: the current one) */
	char *final, *tmp; /* tmp NULL: writing to `final` itself */
	char *shown;       /* `final` as messages name it */
	int fd;
	dev_t dev; /* the regular file that `final` named before, if any, to refuse inputs */
	ino_t ino; /* that are the same file */
	int existed;
	const struct cli_out_codes *codes;
};
/* The output `final` in directory dir (shown as `shown`): a temporary file beside it (or, with
 * allow_device, a device, pipe or socket `final` names, written in place); an existing `final`
 * is refused without force. 0, or the exit status from `codes` (said). */
int cli_out_open(struct cli_out *o, int dir, const char *final, const char *shown, int force,
                 int allow_device, const struct cli_out_codes *codes);
/* Whether in_fd is the file that the output would replace (to refuse reading it). */
int cli_out_is_input(const struct cli_out *o, int in_fd);
/* Close; if rc is 0 rename into place (over what is there only with force), otherwise remove
 * the temporary file. Returns rc, or the status of a close or rename that failed. */
int cli_out_close(struct cli_out *o, int rc, int force);
/* The temporary file tmp renamed to final (both in dir): over what is there with force, else
 * never over a name that appeared meanwhile. 0, or -1 with errno set (EEXIST: it did). */
int cli_rename_into_place(int dir, const char *tmp, const char *final, int force);
/* An input decoded in place (FILE.gz -> FILE) must be a regular file; without force, one with
 * set-id or sticky bits or other links is refused (said). 0, or codes->refused. */
int cli_check_in_place_input(const char *path, const struct stat *st, int force,
                             const struct cli_out_codes *codes);

/* Said by the help of every command that reads an ARCHIVE (cli_open_archive). */
#define STDIN_HELP                                                                                 \
	"ARCHIVE '-' is standard input; an ARCHIVE on a pipe is copied to a temporary file in\n"   \
	"$TMPDIR first (the index is at the end).\n"

/* The archive at path ("-": standard input), opened for reading: a regular file is mapped in
 * place (standard input only when it is at its start: otherwise the archive is what follows its
 * position, as for tar); a pipe or FIFO is copied to an unnamed file in $TMPDIR first. A problem
 * is said; a missing archive is ZN_ERR_IO (exit 3), as a missing input of create is. */
zn_result cli_open_archive(const char *path, struct zn_reader **r);
/* The whole of list file `name` ('-': standard input, once per process, and then not the
 * ARCHIVE) with a NUL after it, or NULL with the problem named (as cmd's) and *rc set to the
 * exit status. */
char *cli_read_list(const char *cmd, const char *name, size_t *len, int *rc);

/* --exclude and -X patterns (cli_select.c). Zeroed: none. The patterns stay reachable until the
 * command ends (commands keep this in a static). */
struct cli_exclude;
struct cli_excludes {
	struct cli_exclude *pats;
	int n, cap;
	/* The package filters (cli_pkg.c): 0 and NULL for none. */
	unsigned pkg_type; /* enum zn_pkg_type */
	int has_pkg;       /* --package: globs of group, name, version (NULL: any) */
	const char *pkg[3];
	char *pkg_text;   /* what they point into */
	const char *repo; /* --repo GLOB */
};
/* --package-type TYPE, --package GROUP:NAME:VERSION (globs; NAME:VERSION, NAME) or --repo GLOB
 * (which: a CLI_PKG_*); 0 or the exit status (said). */
enum { CLI_PKG_TYPE, CLI_PKG_COORD, CLI_PKG_REPO };
int cli_package_option(struct cli_excludes *x, const char *cmd, int which, const char *arg);
/* Takes out of *sel (made if NULL) the entries the package filters leave out; 0 or the exit
 * status (said). */
int cli_package_filter(struct zn_reader *r, const struct cli_excludes *x, uint8_t **sel);
/* Adds one --exclude GLOB; -1 when out of memory. */
int cli_exclude_add(struct cli_excludes *x, const char *glob);
/* --exclude GLOB, or with from_file -X FILE (a pattern a line); 0 or the exit status (said). */
int cli_exclude_option(struct cli_excludes *x, const char *cmd, int from_file, const char *arg);
/* A zn_filter_fn over a struct cli_excludes: 0 for what a pattern leaves out, as tar's. */
int cli_exclude_filter(void *ctx, const char *rel, int is_dir);
/* Marks in sel the entries the PATTERNs select among those `allowed` marks (NULL: all); returns
 * how many PATTERNs selected nothing (each named), or -1 when out of memory (said). */
int cli_select_entries(struct zn_reader *r, char **pats, int npats, uint8_t *sel,
                       const uint8_t *allowed);
/* What extract and list work on: the entries the PATTERNs select (all without any) among those
 * --exclude leaves, in *sel (NULL: every entry; to free). Returns as cli_select_entries. */
int cli_select_kept(struct zn_reader *r, struct cli_excludes *x, char **pats, int npats,
                    uint8_t **sel);
/* extract -O (cmd_cat.c): the selected regular files' contents, in path order, as tar -xO;
 * with verbose their names on stderr; checked as cat checks them. Returns the exit status. */
int cli_extract_to_stdout(struct zn_reader *r, const char *path, const uint8_t *sel, unsigned strip,
                          int verbose);

/* A command: its names, its entry point, and its options as getopt_long takes them, which the
 * bash completion (cli_complete.c) is made from and the tests hold to its --help. */
struct cli_command {
	const char *name;
	const char *aliases; /* other names, space-separated: "ls t"; "" none */
	int (*run)(int argc, char **argv);
	const char *shortopts; /* getopt's, after a leading '-', '+' or ':' */
	const struct option *options;
};
extern const struct cli_command cli_cmd_create, cli_cmd_extract, cli_cmd_list, cli_cmd_verify,
        cli_cmd_cat, cli_cmd_info, cli_cmd_diff, cli_cmd_index, cli_cmd_gunzip, cli_cmd_zcat,
        cli_cmd_bunzip2, cli_cmd_bzcat, cli_cmd_unzstd, cli_cmd_zstdcat, cli_cmd_unzip;
/* Every command, in the order --help gives them; NULL at the end (znippy.c). */
extern const struct cli_command *const cli_commands[];
/* `znippy --bash-completion`: the completion script on standard output (cli_complete.c). */
int cli_print_bash_completion(void);
/* --help and nothing else, the options of cat and info. */
extern const struct option cli_help_options[];

#endif
