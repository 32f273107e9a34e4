/* SPDX-License-Identifier: MIT */
/* cmd_create.c - `znippy create`: PATHs, -C and lists in command-line order into an archive written
 * under a temporary name and renamed into place. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

enum {
	OPT_CHUNK = 1000,
	OPT_MEMORY,
	OPT_NO_SKIP,
	OPT_DIGEST,
	OPT_DIGEST_MIN,
	OPT_EXCLUDE,
	OPT_PROGRESS,
	OPT_NO_DEDUP,
	OPT_NO_PACKAGES,
	OPT_REPO,
	OPT_ONE_FS,
	OPT_FILES_FROM,
	OPT_NULL,
	OPT_NO_RECURSION,
	OPT_OWNER,
	OPT_GROUP,
	OPT_NUMERIC_OWNER,
	OPT_MODE,
	OPT_MTIME,
	OPT_CLAMP,
	OPT_EXCLUDE_VCS,
	OPT_ULTRA,
};

/* The numbers create's help gives are the library's. */
_Static_assert(ZN_LEVEL_MIN == 1 && ZN_LEVEL_DEFAULT == 3 && ZN_LEVEL_MAX == 22,
               "create's help: levels 1..22, default 3");
_Static_assert(ZN_CHUNK_SIZE_MIN == 64 << 10 && ZN_CHUNK_SIZE_MAX == 256 << 20 &&
                       ZN_CHUNK_SIZE_DEFAULT == 1 << 20,
               "create's help: chunk size 64K..256M, default 1M");
_Static_assert(ZN_DIGEST_MIN_SIZE_DEFAULT == 1 << 10, "create's help: digest minimum size 1K");

/* The highest level without --ultra, as zstd's (ZSTDCLI_CLEVEL_MAX). */
#define LEVEL_MAX_NO_ULTRA 19

/* clang-format off */
static const char create_help[] =
	"Usage: znippy create -o OUT [OPTIONS] PATH...    (or --files-from LIST)\n"
	"Pack files and directory trees into an archive. Stored paths are relative (a leading\n"
	"'/', '.' parts are removed, and everything up to a last '..' too, with a warning);\n"
	"directories are walked in byte order of names. OUT is written under a temporary name\n"
	"and renamed when complete, keeping an old OUT's mode (a device, FIFO, symlink, file\n"
	"with other links, a file in a directory this user may not write, or another user's\n"
	"file in a sticky directory is written in place); an OUT this user may not write is\n"
	"refused.\n"
	"\n"
	"  -o, --output OUT      archive to write ('-' for standard output)\n"
	"  -l, --level N         zstd level 1..19 (default 3); 20..22 with --ultra (without\n"
	"                        it, as zstd: 19, with a warning)\n"
	"      --ultra           allow levels 20..22, as zstd --ultra (slower, and more\n"
	"                        memory for each thread's zstd context)\n"
	"  -T, --threads N       " THREADS_HELP("                        ")
	"      --chunk-size SIZE block size, 64K..256M (default 1M); small files are packed\n"
	"                        together into blocks of this size, larger files cut into chunks\n"
	"      --memory SIZE     bound on pipeline buffers: at least 4 x (chunk + its compressed\n"
	"                        bound), about 8 x the chunk size (default 256M, or that);\n"
	"                        each thread's zstd context comes on top (1M chunks: 1.3 MB at\n"
	"                        level 3, 13 MB at 9 to 12, 18 MB at 19)\n"
	"      --no-skip         compress known-compressed types too (jar, png, gz, ...)\n"
	"      --digest KIND     per-file digest: sha256 (default) or none\n"
	"      --digest-min-size SIZE\n"
	"                        store no SHA-256 for files smaller than SIZE (default 1K):\n"
	"                        a reader computes theirs from the content, which the blocks'\n"
	"                        checksums cover; 0 stores every file's, and writes format\n"
	"                        version 1, which older readers read (else version 2, whose\n"
	"                        index is also smaller, with --digest none too)\n"
	"      --no-dedup        store every file's bytes; by default a file whose content\n"
	"                        equals an earlier one's is stored once (compared byte for byte\n"
	"                        or by SHA-256; not with --digest none)\n"
	"      --no-packages     store no package coordinates; by default each package file\n"
	"                        (.jar .war .ear .aar .pom .whl .crate .tgz, sdists) gets\n"
	"                        them from its own metadata (pom.properties, METADATA,\n"
	"                        PKG-INFO, Cargo.toml, package.json), read from the bytes\n"
	"                        being archived, else from its path (list --json shows them)\n"
	"      --repo NAME       store NAME as the archive's repository name (at most 255\n"
	"                        bytes), for list --repo and the index export\n"
	"      --exclude GLOB    leave out what GLOB matches: the stored path or any tail of it\n"
	"                        from a '/' on (\"b\", \"*.o\", \"a/b\"), with its contents if a\n"
	"                        directory, as tar does; a leading '/' or './' anchors it to\n"
	"                        the start of the stored path (\"./build\" is the top one\n"
	"                        only), a trailing '/' matches directories only;\n"
	"                        repeatable\n"
	"  -X, --exclude-from FILE\n"
	"                        --exclude each line of FILE ('-': standard input) but empty\n"
	"                        ones, as tar -X\n"
	"      --exclude-vcs     leave out version control files and directories, as tar's\n"
	"                        (.git, .gitignore, .svn, .hg, .bzr, CVS, _darcs, ...)\n"
	"      --one-file-system stay on the file system of each directory walked, as tar:\n"
	"                        a mount point is stored as an empty directory (PATHs given\n"
	"                        are always stored)\n"
	"  -C, --directory DIR   change to DIR for the PATHs after it (as tar: may be repeated,\n"
	"                        each relative to the one before)\n"
	"      --files-from LIST take PATHs from the file LIST ('-': standard input; opened\n"
	"                        from the starting directory), one per line, in this place\n"
	"                        among the PATHs and -C options; every line but an empty one\n"
	"                        is a PATH as it stands (none is an option); may be repeated\n"
	"      --null            LIST names end with a NUL byte, not a newline (find -print0)\n"
	"      --no-recursion    a directory PATH is stored alone, not what is in it (as tar;\n"
	"                        for lists made by find)\n"
	"\n"
	"Metadata stored, as tar's options change it (for archives that are the same from any\n"
	"machine, e.g. --owner 0 --group 0 --numeric-owner --mode go-w,a+rX\n"
	"--mtime @$SOURCE_DATE_EPOCH --clamp-mtime):\n"
	"      --owner NAME[:ID] store every entry as owned by NAME (a name this system knows,\n"
	"                        or a number, which takes the name this system gives it)\n"
	"      --group NAME[:ID] the same for the group\n"
	"      --numeric-owner   store ids only, no user or group names\n"
	"      --mode CHANGES    change every mode as chmod would: octal, or symbolic\n"
	"                        ([ugoa...][+-=][rwxXst...|u|g|o], or [+-=]OCTAL; comma-\n"
	"                        separated: 'go-w,a+rX', 'g=u')\n"
	"      --mtime DATE      store DATE as every entry's modification time: @SECONDS[.FRAC],\n"
	"                        YYYY-MM-DD[THH:MM[:SS[.FRAC]]][Z|+HH:MM] (local time without a\n"
	"                        zone), or a FILE's time (a name starting with '/' or '.')\n"
	"      --clamp-mtime     with --mtime: only times later than DATE become DATE\n"
	"\n"
	"  -v, --verbose         list the stored paths, in path order, once the data is written\n"
	"                        (on standard output; on stderr with -o -)\n"
	"      --progress        show a progress line on stderr (default: when stderr is a tty)\n"
	"  -q, --quiet           no progress, no warnings\n"
	"  -h, --help            this help\n"
	"\n" EXIT_CODES_HELP
	"An unreadable input is reported and leaves exit status 3; the archive holds the rest, as\n"
	"it does without devices, FIFOs and sockets, which it cannot hold (named; exit status 3).\n"
	"A file that changed while it was read is stored as read, named with tar's warning, and\n"
	"leaves exit status 1, as with tar; so does one removed after its directory was read\n"
	"(\"file removed before we read it\", not stored). One that shrank while read is kept at\n"
	"the size it had, padded with zeros, as tar does, when it is larger than a chunk (its\n"
	"first chunks were on their way): as zeros stand for data, that leaves exit status 3.\n";
/* clang-format on */

struct create_ctx {
	struct cli_excludes ex;
	uint64_t changed;      /* files that changed while read: exit status 1, as tar's */
	struct cli_meta *meta; /* --owner, --mode, ... and -v */
};

static void create_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	if (r == ZN_ERR_CHANGED)
		((struct create_ctx *)ctx)->changed++;
	cli_problem_cb(ctx, path, r, what);
}

static int create_filter(void *ctx, const char *rel, int is_dir)
{
	return cli_exclude_filter(&((struct create_ctx *)ctx)->ex, rel, is_dir);
}

static void create_meta(void *ctx, struct zn_entry *e)
{
	cli_meta_hook(((struct create_ctx *)ctx)->meta, e);
}

/* Whether renaming a new file over the existing regular file out (lstat in st) can succeed:
 * not in a sticky directory (/tmp) over another user's file, which the kernel refuses. */
static int may_replace(const char *out, const struct stat *st)
{
	const char *slash = strrchr(out, '/');
	char *dir = slash ? strndup(out, (size_t)(slash - out) + 1) : strdup(".");
	struct stat dst;
	int ok = !dir || stat(dir, &dst) || !(dst.st_mode & S_ISVTX) || geteuid() == 0 ||
	         st->st_uid == geteuid() || dst.st_uid == geteuid();
	free(dir);
	return ok;
}

struct op {
	const char *arg;
	enum { OP_PATH, OP_CHDIR, OP_LIST } kind;
};

/* Replaces each OP_LIST op by the PATHs its file names, in place among the others. The names
 * stay in memory (static, reachable) until the command ends. Returns 0 or an exit status. */
static int read_lists(struct op **ops, int *nops, int null_sep)
{
	static struct op *out;
	static char **bufs;
	size_t n = 0, cap = (size_t)*nops + 16, nbufs = 0;
	out = malloc(cap * sizeof(*out));
	bufs = calloc((size_t)*nops, sizeof(*bufs));
	if (!out || !bufs)
		return EXIT_SYSTEM;
	for (int i = 0; i < *nops; i++) {
		struct op o = (*ops)[i];
		if (o.kind != OP_LIST) {
			out[n++] = o;
			continue;
		}
		int std = !strcmp(o.arg, "-"), rc = 0;
		size_t len;
		char *buf = cli_read_list("create", o.arg, &len, &rc);
		if (!buf)
			return rc;
		bufs[nbufs++] = buf;
		char sep = null_sep ? '\0' : '\n';
		uint64_t line = 1;
		for (size_t at = 0; at < len; line++) {
			char *end = memchr(buf + at, sep, len - at);
			size_t stop = end ? (size_t)(end - buf) : len;
			if (!null_sep && memchr(buf + at, '\0', stop - at)) {
				cli_error("%s: line %llu: the name holds a NUL byte (--null reads "
				          "names "
				          "that end with one)",
				          std ? "(standard input)" : o.arg,
				          (unsigned long long)line);
				return EXIT_DAMAGED;
			}
			buf[stop] = '\0';
			if (stop > at) {
				if (n == cap) {
					struct op *no = realloc(out, (cap *= 2) * sizeof(*out));
					if (!no)
						return EXIT_SYSTEM;
					out = no;
				}
				out[n++] = (struct op){buf + at, OP_PATH};
			}
			at = stop + 1;
		}
	}
	if (n > INT_MAX) {
		cli_error("create: more than %d PATHs", INT_MAX);
		return EXIT_USAGE;
	}
	free(*ops);
	*ops = out;
	*nops = (int)n;
	return 0;
}

/* "-": non-options come back in order (as argument 1), so -C can be positional. */
static const char create_shortopts[] = "-:o:l:T:C:X:vqh";
static const struct option create_options[] = {
        {"output", required_argument, 0, 'o'},
        {"level", required_argument, 0, 'l'},
        {"threads", required_argument, 0, 'T'},
        {"chunk-size", required_argument, 0, OPT_CHUNK},
        {"memory", required_argument, 0, OPT_MEMORY},
        {"no-skip", no_argument, 0, OPT_NO_SKIP},
        {"digest", required_argument, 0, OPT_DIGEST},
        {"digest-min-size", required_argument, 0, OPT_DIGEST_MIN},
        {"exclude", required_argument, 0, OPT_EXCLUDE},
        {"directory", required_argument, 0, 'C'},
        {"progress", no_argument, 0, OPT_PROGRESS},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {"no-dedup", no_argument, 0, OPT_NO_DEDUP},
        {"no-packages", no_argument, 0, OPT_NO_PACKAGES},
        {"repo", required_argument, 0, OPT_REPO},
        {"one-file-system", no_argument, 0, OPT_ONE_FS},
        {"files-from", required_argument, 0, OPT_FILES_FROM},
        {"null", no_argument, 0, OPT_NULL},
        {"exclude-from", required_argument, 0, 'X'},
        {"no-recursion", no_argument, 0, OPT_NO_RECURSION},
        {"owner", required_argument, 0, OPT_OWNER},
        {"group", required_argument, 0, OPT_GROUP},
        {"numeric-owner", no_argument, 0, OPT_NUMERIC_OWNER},
        {"mode", required_argument, 0, OPT_MODE},
        {"mtime", required_argument, 0, OPT_MTIME},
        {"clamp-mtime", no_argument, 0, OPT_CLAMP},
        {"verbose", no_argument, 0, 'v'},
        {"exclude-vcs", no_argument, 0, OPT_EXCLUDE_VCS},
        {"ultra", no_argument, 0, OPT_ULTRA},
        {0, 0, 0, 0},
};

/* What the command line asks for. Static where it holds patterns and names: they stay reachable
 * until the command ends (no leak to report at an early exit). */
struct create_args {
	struct zn_create_options opt;
	const char *out;
	/* PATHs and -C in command-line order: as with tar, each -C applies to the PATHs after it
	 * and is relative to the directory of the one before. An op is a PATH, a directory when
	 * it comes from -C, or a --files-from LIST until read_lists() puts its PATHs there. */
	struct op *ops;
	int nops, npaths, nlists, null_sep;
	int memory_given, clamp, verbose, ultra;
	struct cli_meta meta;
	struct create_ctx cc; /* the hooks' context */
};

/* tar's list of version control files and directories (exclude_vcs_files). */
static int exclude_vcs(struct cli_excludes *x)
{
	static const char *const vcs[] = {"CVS",          ".cvsignore",     "RCS",
	                                  "SCCS",         ".svn",           ".git",
	                                  ".gitignore",   ".gitattributes", ".gitmodules",
	                                  ".arch-ids",    "{arch}",         "=RELEASE-ID",
	                                  "=meta-update", "=update",        ".bzr",
	                                  ".bzrignore",   ".bzrtags",       ".hg",
	                                  ".hgignore",    ".hgtags",        "_darcs"};
	for (size_t i = 0; i < sizeof(vcs) / sizeof(vcs[0]); i++)
		if (cli_exclude_add(x, vcs[i]))
			return EXIT_SYSTEM;
	return 0;
}

/* The options that change the stored metadata (cli_meta.c). Returns 0, -1 for an option that is
 * not one of them, or the exit status. */
static int create_meta_option(struct create_args *a, int c, const char *arg)
{
	switch (c) {
	case OPT_OWNER:
	case OPT_GROUP:
		return cli_meta_owner(&a->meta, arg, c == OPT_GROUP);
	case OPT_NUMERIC_OWNER:
		a->meta.numeric_owner = 1;
		return 0;
	case OPT_MODE:
		return cli_meta_mode(&a->meta, arg);
	case OPT_MTIME:
		return cli_meta_mtime(&a->meta, arg);
	case OPT_CLAMP:
		a->clamp = 1;
		return 0;
	}
	return -1;
}

/* The options of how the archive is made. Returns as create_meta_option. */
static int create_pack_option(struct create_args *a, int c, const char *arg)
{
	uint64_t v;
	switch (c) {
	case 'l':
		if (cli_parse_uint(arg, ZN_LEVEL_MIN, ZN_LEVEL_MAX, &v))
			return cli_usage_error(
			        "create", "invalid level '%s' (%d..%d, or %d..%d with --ultra)",
			        arg, ZN_LEVEL_MIN, LEVEL_MAX_NO_ULTRA, LEVEL_MAX_NO_ULTRA + 1,
			        ZN_LEVEL_MAX);
		a->opt.level = (int)v;
		return 0;
	case OPT_ULTRA:
		a->ultra = 1;
		return 0;
	case 'T':
		return cli_parse_threads("create", arg, &a->opt.threads) ? EXIT_USAGE : 0;
	case OPT_CHUNK:
		if (cli_parse_size(arg, &v) || v < ZN_CHUNK_SIZE_MIN || v > ZN_CHUNK_SIZE_MAX)
			return cli_usage_error("create", "invalid chunk size '%s' (%lluK..%lluM)",
			                       arg, (unsigned long long)(ZN_CHUNK_SIZE_MIN >> 10),
			                       (unsigned long long)(ZN_CHUNK_SIZE_MAX >> 20));
		a->opt.chunk_size = v;
		return 0;
	case OPT_MEMORY:
		if (cli_parse_size(arg, &v) || !v)
			return cli_usage_error("create", "invalid memory size '%s'", arg);
		a->opt.memory_limit = v;
		a->memory_given = 1;
		return 0;
	case OPT_NO_SKIP:
		a->opt.no_skip = 1;
		return 0;
	case OPT_NO_DEDUP:
		a->opt.no_dedup = 1;
		return 0;
	case OPT_NO_PACKAGES:
		a->opt.no_packages = 1;
		return 0;
	case OPT_REPO:
		if (strlen(arg) > 255)
			return cli_usage_error("create", "--repo NAME longer than 255 bytes");
		a->opt.repo = arg;
		return 0;
	case OPT_DIGEST:
		if (!strcmp(arg, "sha256"))
			a->opt.digest = ZN_DIGEST_SHA256;
		else if (!strcmp(arg, "none"))
			a->opt.digest = ZN_DIGEST_NONE;
		else
			return cli_usage_error("create", "unknown digest '%s'", arg);
		return 0;
	case OPT_DIGEST_MIN:
		if (cli_parse_size(arg, &v))
			return cli_usage_error("create", "invalid digest minimum size '%s'", arg);
		a->opt.digest_min_size = v;
		return 0;
	}
	return create_meta_option(a, c, arg);
}

/* One option (or, as 1, a PATH). Returns 0 to go on, or the exit status. */
static int create_option(struct create_args *a, int c, char *arg, char **argv)
{
	switch (c) {
	case 1:
		a->ops[a->nops++] = (struct op){arg, OP_PATH};
		a->npaths++;
		return 0;
	case 'o':
		a->out = arg;
		return 0;
	case 'C':
		if (!*arg)
			return cli_usage_error("create", "empty DIR for -C");
		a->ops[a->nops++] = (struct op){arg, OP_CHDIR};
		return 0;
	case OPT_FILES_FROM:
		a->ops[a->nops++] = (struct op){arg, OP_LIST};
		a->nlists++;
		return 0;
	case OPT_NULL:
		a->null_sep = 1;
		return 0;
	case OPT_ONE_FS:
		a->opt.one_file_system = 1;
		return 0;
	case OPT_NO_RECURSION:
		a->opt.no_recursion = 1;
		return 0;
	case OPT_EXCLUDE_VCS:
		return exclude_vcs(&a->cc.ex);
	case OPT_EXCLUDE:
	case 'X':
		return cli_exclude_option(&a->cc.ex, "create", c == 'X', arg);
	case 'v':
		a->verbose = 1;
		return 0;
	case OPT_PROGRESS:
		cli_progress = 1;
		return 0;
	case 'q':
		cli_quiet = 1;
		return 0;
	case 'h':
		fputs(create_help, stdout);
		return EXIT_OK; /* the caller stops at 'h' */
	}
	int rc = create_pack_option(a, c, arg);
	return rc >= 0 ? rc : cli_option_error("create", c, argv);
}

/* The command line into *a. Returns -1 to go on, or the exit status (help, a usage error). */
static int parse_create_args(int argc, char **argv, struct create_args *a)
{
	zn_create_options_init(&a->opt);
	a->ops = calloc((size_t)argc + 1, sizeof(*a->ops));
	if (!a->ops)
		return EXIT_SYSTEM;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, create_shortopts, create_options, NULL)) != -1) {
		int rc = create_option(a, c, optarg, argv);
		if (rc || c == 'h')
			return rc;
	}
	if (a->clamp && !a->meta.mtime_policy)
		return cli_usage_error("create", "--clamp-mtime needs --mtime DATE");
	if (a->clamp)
		a->meta.mtime_policy = MTIME_CLAMP;
	if (a->opt.level > LEVEL_MAX_NO_ULTRA && !a->ultra) { /* as zstd */
		cli_warn("level %d needs --ultra: level %d", a->opt.level, LEVEL_MAX_NO_ULTRA);
		a->opt.level = LEVEL_MAX_NO_ULTRA;
	}
	if (!a->out)
		return cli_usage_error("create", "missing -o OUT");
	if (!*a->out)
		return cli_usage_error("create", "empty OUT name");
	for (int i = optind; i < argc; i++) { /* after "--" */
		a->ops[a->nops++] = (struct op){argv[i], OP_PATH};
		a->npaths++;
	}
	if (a->nlists) {
		int rc = read_lists(&a->ops, &a->nops, a->null_sep);
		if (rc)
			return rc;
	} else if (!a->npaths) { /* an empty LIST makes an empty archive, as with tar */
		return cli_usage_error("create", "no input PATH given");
	}
	/* Without --memory the default grows with a large chunk size instead of refusing it. */
	uint64_t need = zn_create_memory_min(a->opt.chunk_size);
	if (!a->memory_given && a->opt.memory_limit < need)
		a->opt.memory_limit = need;
	if (a->opt.memory_limit < need)
		return cli_usage_error("create",
		                       "--memory must be at least %lluK for this chunk size "
		                       "(4 buffers of input and compressed output)",
		                       (unsigned long long)((need + 1023) >> 10));
	return -1;
}

/* The archive's file: fd, and tmp (malloc'd) while it is written under a temporary name beside
 * OUT; the old OUT's lstat in st if `exists`. */
struct output {
	const char *name;
	int fd;
	char *tmp;
	int exists;
	struct stat st;
};

/* OUT another user owns in a sticky directory: written in place, not followed if it became a
 * symlink, and truncated only once it is known to be the file that was looked at. */
static int open_in_place(struct output *o)
{
	o->fd = open(o->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	struct stat now;
	if (o->fd >= 0 && !fstat(o->fd, &now) &&
	    (now.st_dev != o->st.st_dev || now.st_ino != o->st.st_ino)) {
		cli_error("%s: replaced by another file meanwhile; not written", o->name);
		close(o->fd);
		return EXIT_SYSTEM;
	}
	if (o->fd >= 0 && ftruncate(o->fd, 0)) {
		close(o->fd);
		o->fd = -1;
	}
	if (o->fd < 0) {
		cli_error("%s: cannot open: %s", o->name, strerror(errno));
		return EXIT_SYSTEM;
	}
	return 0;
}

/* A new or plain OUT is written under a temporary name beside it (cli_open_replacement) and
 * renamed on success, so a failed run never leaves a half-written archive under the final name.
 * Anything else (a device, a FIFO, a symlink, a file with other links) is written in place, as
 * tar does. Paths are resolved before -C. Returns 0 or the exit status. */
static int open_output(struct output *o)
{
	o->fd = 1;
	o->tmp = NULL;
	o->exists = lstat(o->name, &o->st) == 0;
	if (!strcmp(o->name, "-")) {
		if (isatty(1))
			return cli_usage_error("create",
			                       "refusing to write an archive to a terminal");
	} else if (o->exists && (!S_ISREG(o->st.st_mode) || o->st.st_nlink > 1)) {
		if (S_ISDIR(o->st.st_mode)) {
			cli_error("%s: is a directory", o->name);
			return EXIT_SYSTEM;
		}
		o->fd = open(o->name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
		if (o->fd < 0) {
			cli_error("%s: cannot open: %s", o->name, strerror(errno));
			return EXIT_SYSTEM;
		}
	} else if (o->exists && faccessat(AT_FDCWD, o->name, W_OK, AT_EACCESS) && errno == EACCES) {
		cli_error("%s: cannot open: %s", o->name, strerror(errno)); /* read-only: as tar */
		return EXIT_SYSTEM;
	} else if (o->exists && !may_replace(o->name, &o->st)) {
		return open_in_place(o);
	} else {
		/* A file we may write in a directory we may not is written in place, as tar does
		 * (a failure then leaves it incomplete): tmp stays NULL. */
		o->fd = cli_open_replacement(o->name, o->exists ? &o->st : NULL, &o->tmp);
		if (o->fd < 0) {
			cli_error("%s: cannot create: %s", o->name, strerror(errno));
			return EXIT_SYSTEM;
		}
	}
	return 0;
}

static const char *output_name(const struct output *o)
{
	return strcmp(o->name, "-") ? o->name : "(standard output)";
}

/* The writer on o->fd, or NULL with the problem said and *rc the exit status. */
static struct zn_writer *open_writer(struct create_args *a, const struct output *o, int *rc)
{
	struct zn_writer *w;
	if (a->verbose) /* as tar: the names go to stderr when the archive goes to stdout */
		a->meta.verbose = strcmp(o->name, "-") ? stdout : stderr;
	a->cc.meta = &a->meta;
	struct zn_hooks hooks = {
	        .struct_size = sizeof(hooks),
	        .ctx = &a->cc,
	        .problem = create_problem,
	        .filter = a->cc.ex.n ? create_filter : NULL,
	        .progress = cli_progress_enabled() ? cli_progress_cb : NULL,
	        .meta = cli_meta_active(&a->meta) ? create_meta : NULL,
	};
	zn_result res = zn_writer_open(&w, o->fd, &a->opt, &hooks);
	struct stat sst;
	*rc = EXIT_SYSTEM;
	if (res == ZN_ERR_INVALID_ARG && o->fd == 1 && !fstat(1, &sst) && S_ISREG(sst.st_mode)) {
		/* The options were checked above: what the writer refuses is a file that does not
		 * start where the archive would (zn_writer_open). */
		off_t at = lseek(1, 0, SEEK_CUR);
		cli_error(
		        "standard output is a file already %lld bytes in: an archive must start at "
		        "the beginning of its file (redirect with '>', not '>>')",
		        (long long)(at > 0 ? at : sst.st_size));
		*rc = EXIT_USAGE;
		return NULL;
	}
	if (res == ZN_ERR_IO) /* the header could not be written */
		cli_error("%s: write failed: %s", output_name(o), strerror(errno));
	else if (res != ZN_OK)
		cli_error("create: %s", zn_result_message(res));
	if (res != ZN_OK)
		return NULL;
	if (o->exists && o->tmp) /* the old archive the new one replaces is not archived either */
		zn_writer_skip_inode(w, (uint64_t)o->st.st_dev, (uint64_t)o->st.st_ino);
	return w;
}

/* The PATHs, each after the -C options before it. Returns the first error; *chdir_failed when
 * a -C could not be taken or the starting directory not returned to. */
static zn_result add_paths(struct zn_writer *w, const struct create_args *a, int *chdir_failed)
{
	/* Where -C options start, and where OUT's relative name is renamed at the end: O_PATH,
	 * as a directory this user may search but not read is as good (fchdir takes it). If even
	 * that fails (a directory this user may not search), nothing is to be done there at the
	 * end: a relative OUT could not have been made in it. */
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < a->nops; i++) /* said once, as tar says it */
		if (a->ops[i].kind == OP_PATH && a->ops[i].arg[0] == '/') {
			cli_warn("removing leading '/' from stored paths");
			break;
		}
	zn_result res = ZN_OK;
	int moved = 0; /* a -C was taken */
	for (int i = 0; i < a->nops && res == ZN_OK; i++) {
		if (a->ops[i].kind == OP_PATH) {
			res = zn_writer_add_path(w, a->ops[i].arg, NULL);
		} else if ((moved = 1) && chdir(a->ops[i].arg)) {
			cli_error("%s: cannot change directory: %s", a->ops[i].arg,
			          strerror(errno));
			res = ZN_ERR_IO; /* nothing half-done: the archive is not kept */
			*chdir_failed = 1;
		}
	}
	zn_result fin = zn_writer_finish(w);
	if (res == ZN_OK)
		res = fin;
	if (moved && cwd >= 0 && fchdir(cwd)) {
		cli_error("cannot return to the starting directory: %s", strerror(errno));
		*chdir_failed = 1; /* OUT's temporary name may be relative: not kept */
	}
	if (cwd >= 0)
		close(cwd);
	return res;
}

/* Closes the output and, when the archive is complete, renames it into place (else removes
 * it). Returns whether that failed (said). */
static int close_output(struct output *o, int *complete)
{
	int failed = 0;
	if (o->tmp) {
		if (close(o->fd) && *complete) {
			cli_error("%s: write failed: %s", o->name, strerror(errno));
			*complete = 0;
			failed = 1;
		}
		if (*complete && rename(o->tmp, o->name)) {
			cli_error("%s: cannot rename: %s", o->name, strerror(errno));
			*complete = 0;
			failed = 1;
		}
		if (!*complete)
			unlink(o->tmp);
		cli_replacement_done(o->tmp);
	} else if (o->fd != 1) {
		close(o->fd);
	}
	return failed;
}

/* The closing line on stderr with the progress line: entries, sizes and ratio. */
static void say_written(const struct zn_write_stats *st)
{
	char dups[64] = "";
	if (st->duplicates)
		snprintf(dups, sizeof(dups), " (%llu identical files stored once)",
		         (unsigned long long)st->duplicates);
	fprintf(stderr, "%s: %llu entries%s, %.1f MB -> %.1f MB (%.1f%%)\n", cli_prog,
	        (unsigned long long)st->entries, dups, (double)st->content_bytes / 1e6,
	        (double)st->archive_bytes / 1e6,
	        st->content_bytes ? 100.0 * (double)st->archive_bytes / (double)st->content_bytes
	                          : 0.0);
}

/* What the run comes to: the message for it (problems with inputs were named as they came) and
 * the exit status. */
static int create_status(zn_result res, int complete, int write_failed, int chdir_failed,
                         const struct output *o, uint64_t changed)
{
	if (chdir_failed)
		cli_error("%s: not written", o->name);
	else if (write_failed)
		; /* named above, with its errno */
	else if (res != ZN_OK && res != ZN_ERR_IO)
		cli_error("create: %s", zn_result_message(res));
	else if (res == ZN_ERR_IO && complete)
		cli_error("create: archive written; exit status 3 for the inputs named above");
	else if (res == ZN_ERR_IO)
		cli_error("create: I/O error");
	else if (changed) /* stored as read: the archive may hold a torn copy */
		cli_error(
		        "create: archive written; exit status 1: %llu %s changed or removed while "
		        "read (named above)",
		        (unsigned long long)changed, changed == 1 ? "file" : "files");
	if (res == ZN_OK)
		return changed ? EXIT_DAMAGED : EXIT_OK;
	return res == ZN_ERR_IO ? EXIT_SYSTEM : cli_exit_code(res);
}

static int cmd_create(int argc, char **argv)
{
	static struct create_args a; /* static: see struct create_args */
	int rc = parse_create_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct output o = {.name = a.out};
	rc = open_output(&o);
	if (rc)
		return rc;
	struct zn_writer *w = open_writer(&a, &o, &rc);
	if (!w) {
		if (o.tmp) {
			close(o.fd);
			unlink(o.tmp);
			cli_replacement_done(o.tmp);
		}
		return rc;
	}
	int chdir_failed = 0;
	zn_result res = add_paths(w, &a, &chdir_failed);
	cli_progress_end();
	struct zn_write_stats st = {.struct_size = sizeof(st)};
	zn_writer_stats(w, &st);
	zn_writer_free(w);
	/* Complete: every byte of the archive was written (inputs that could not be read are
	 * named above and left out; that alone does not cost the archive). */
	int complete = st.complete && (res == ZN_OK || res == ZN_ERR_IO) && !chdir_failed;
	int write_failed = !st.complete && st.write_errno;
	if (write_failed)
		cli_error("%s: write failed: %s", output_name(&o), strerror(st.write_errno));
	write_failed |= close_output(&o, &complete);
	if (write_failed || chdir_failed)
		res = ZN_ERR_IO;
	rc = create_status(res, complete, write_failed, chdir_failed, &o, a.cc.changed);
	if (res == ZN_OK && cli_progress_enabled())
		say_written(&st);
	return rc;
}

const struct cli_command cli_cmd_create = {"create", "c", cmd_create, create_shortopts,
                                           create_options};
