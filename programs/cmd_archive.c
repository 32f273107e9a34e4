/* SPDX-License-Identifier: MIT */
/* cmd_archive.c - the archive commands: create, extract, list, verify, cat, info. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

enum { OPT_CHUNK = 1000, OPT_MEMORY, OPT_NO_SKIP, OPT_DIGEST, OPT_EXCLUDE, OPT_PROGRESS,
       OPT_OVERWRITE, OPT_JSON, OPT_CHECK_DIGEST, OPT_NO_DEDUP, OPT_NUMERIC_OWNER, OPT_ONE_FS,
       OPT_NO_SPARSE, OPT_FILES_FROM, OPT_NULL, OPT_STRIP,
       OPT_SKIP_OLD, OPT_NO_RECURSION, OPT_OWNER, OPT_GROUP, OPT_MODE, OPT_MTIME, OPT_CLAMP,
       OPT_NO_SAME_PERMS, OPT_EXCLUDE_VCS, OPT_SAME_OWNER, OPT_NO_SAME_OWNER,
       OPT_NO_OVERWRITE_DIR };

/* Said by the help of every command that reads an ARCHIVE (open_reader). */
#define STDIN_HELP                                                                                 \
	"ARCHIVE '-' is standard input; an ARCHIVE on a pipe is copied to a temporary file in\n"   \
	"$TMPDIR first (the index is at the end).\n"

/* -C DIR for extract and diff into *dir: not empty, and one after another is relative to it, as
 * tar takes them (the string is kept, in a static, to the end of the process). 0, or the exit
 * status. */
static int take_dir(const char *cmd, const char **dir, const char *arg)
{
	static char *chained;
	if (!*arg)
		return cli_usage_error(cmd, "empty DIR for -C");
	if (arg[0] == '/' || !strcmp(*dir, ".")) {
		*dir = arg;
		return 0;
	}
	char *d = malloc(strlen(*dir) + strlen(arg) + 2);
	if (!d)
		return EXIT_SYSTEM;
	sprintf(d, "%s/%s", *dir, arg);
	free(chained);
	*dir = chained = d;
	return 0;
}

static int parse_threads(const char *cmd, const char *arg, unsigned *out)
{
	uint64_t v;
	if (cli_parse_uint(arg, 0, 1024, &v))
		return cli_usage_error(cmd, "invalid thread count '%s'", arg);
	*out = (unsigned)v;
	return 0;
}

/* An archive that cannot be mapped where it is (a pipe, or standard input part-way into a file)
 * is copied from in_fd's current position to an unnamed file in $TMPDIR (or /tmp) that goes
 * away with its descriptor: the index is at the end, so an archive is read from a file it can
 * seek in. Returns the copy's descriptor, or -1 with the reason in err. */
static int spool(int in_fd, char *err, size_t err_len)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) { /* a file system without O_TMPFILE: a named file, unlinked at once */
		size_t n = strlen(dir) + sizeof("/znippy-stdin-XXXXXX");
		char *name = malloc(n);
		if (name) {
			snprintf(name, n, "%s/znippy-stdin-XXXXXX", dir);
			fd = mkostemp(name, O_CLOEXEC);
			if (fd >= 0)
				unlink(name);
			free(name);
		}
	}
	if (fd < 0) {
		snprintf(err, err_len, "cannot make a temporary file in %s to hold the archive: %s",
		         dir, strerror(errno));
		return -1;
	}
	enum { BUF = 128 << 10 }; /* writes of at most 128 KiB: see docs/BENCHMARKS.md */
	char *buf = malloc(BUF);
	for (;;) {
		ssize_t got = buf ? read(in_fd, buf, BUF) : -1;
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, err_len, "cannot read: %s", strerror(buf ? errno : ENOMEM));
			break;
		}
		if (got == 0) {
			free(buf);
			return fd;
		}
		if (cli_write_all(fd, buf, (size_t)got)) {
			snprintf(err, err_len,
			         "cannot copy the archive to a temporary file in %s: %s", dir,
			         strerror(errno));
			break;
		}
	}
	free(buf);
	close(fd);
	return -1;
}

/* The archive at path ("-": standard input). A regular file is mapped in place (standard input
 * only when it is at its start: otherwise the archive is what follows its position, as for tar);
 * a pipe or FIFO is spooled first. */
static zn_result open_any(const char *path, struct zn_reader **r, char *err, size_t err_len)
{
	int in = 0;
	if (strcmp(path, "-")) {
		in = open(path, O_RDONLY | O_CLOEXEC);
		if (in < 0) {
			snprintf(err, err_len, "cannot open: %s", strerror(errno));
			return errno == ENOENT ? ZN_ERR_NOT_FOUND : ZN_ERR_IO;
		}
	}
	zn_result res;
	struct stat st;
	if (fstat(in, &st)) {
		snprintf(err, err_len, "cannot read: %s", strerror(errno));
		res = ZN_ERR_IO;
	} else if (S_ISREG(st.st_mode) && (in != 0 || lseek(0, 0, SEEK_CUR) <= 0)) {
		res = zn_reader_open_fd(r, in, err, err_len);
	} else if (in == 0 && isatty(0)) {
		snprintf(err, err_len,
		         "standard input is a terminal; redirect or pipe an archive "
		         "into it");
		res = ZN_ERR_IO;
	} else if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) ||
	           (in == 0 && !S_ISDIR(st.st_mode))) {
		int fd = spool(in, err, err_len);
		res = fd < 0 ? ZN_ERR_IO : zn_reader_open_fd(r, fd, err, err_len);
		if (fd >= 0)
			close(fd);
	} else {
		res = ZN_ERR_INVALID_ARG;
	}
	if (in != 0)
		close(in);
	return res;
}

static int stdin_taken; /* read by a -X - or --files-from - (slurp): no ARCHIVE '-' then */

static zn_result open_reader(const char *path, struct zn_reader **r)
{
	char err[256] = "";
	*r = NULL;
	if (stdin_taken && !strcmp(path, "-")) {
		cli_error("standard input is the ARCHIVE: -X - cannot read it too");
		return ZN_ERR_INVALID_ARG;
	}
	zn_result res = open_any(path, r, err, sizeof(err));
	if (res == ZN_ERR_INVALID_ARG) {
		/* A directory, a device: an I/O matter, not usage. */
		cli_error("%s: not a regular file, a pipe or standard input", path);
		return ZN_ERR_IO;
	}
	if (res != ZN_OK)
		cli_error("%s: %s", path, err[0] ? err : zn_result_message(res));
	/* A missing archive is an I/O matter (exit 3), as a missing input of create is, not a
	 * path missing from an archive (exit 1). */
	return res == ZN_ERR_NOT_FOUND ? ZN_ERR_IO : res;
}

/* ---- create ---------------------------------------------------------------------------------- */

static const char create_help[] =
	"Usage: znippy create -o OUT [OPTIONS] PATH...    (or --files-from LIST)\n"
	"Pack files and directory trees into an archive. Stored paths are relative (a leading '/',\n"
	"'.' parts are removed, and everything up to a last '..' too, with a warning); directories\n"
	"are walked in byte order of names. OUT is written under a temporary name and renamed\n"
	"when complete, keeping an old OUT's mode (a device, FIFO, symlink, file with other links,\n"
	"a file in a directory this user may not write, or another user's file in a sticky\n"
	"directory is written in place); an OUT this user may not write is refused.\n"
	"\n"
	"  -o, --output OUT      archive to write ('-' for standard output)\n"
	"  -l, --level N         zstd level 1..19 (default 3)\n"
	"  -T, --threads N       worker threads, 0..1024 (default or 0: one per CPU, as nproc;\n"
	"                        at most 256 run)\n"
	"      --chunk-size SIZE block size, 64K..256M (default 1M); small files are packed\n"
	"                        together into blocks of this size, larger files cut into chunks\n"
	"      --memory SIZE     bound on pipeline buffers: at least 4 x (chunk + its compressed\n"
	"                        bound), about 8 x the chunk size (default 256M, or that);\n"
	"                        each thread's zstd context comes on top (1M chunks: 1.3 MB at\n"
	"                        level 3, 13 MB at 9 to 12, 18 MB at 19)\n"
	"      --no-skip         compress known-compressed types too (jar, png, gz, ...)\n"
	"      --digest KIND     per-file digest: sha256 (default) or none\n"
	"      --no-dedup        store every file's bytes; by default a file whose content\n"
	"                        equals an earlier one's is stored once (compared byte for byte\n"
	"                        or by SHA-256; not with --digest none)\n"
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

struct exclude {
	char *glob;	/* in the form stored paths have */
	struct cli_glob *g; /* glob compiled, or NULL: fnmatch */
	int anchored;	/* given with a leading '/': the whole stored path only */
	int dir_only;	/* given with a trailing '/': directories only */
};

struct excludes {
	struct exclude *pats; /* static: reachable until the command ends */
	int n, cap;
};

/* The ends of a path an exclude may match it at: its own end (a directory's only, for a pattern
 * naming directories) and, with `above`, each directory above it. */
struct exclude_ends {
	const char *path;
	size_t len;
	int is_dir, dir_only, above;
};

static int exclude_end(void *ctx, size_t end)
{
	const struct exclude_ends *a = ctx;
	if (end == a->len)
		return a->is_dir || !a->dir_only;
	return a->above && a->path[end] == '/';
}

/* fnmatch's answer for the NUL-terminated path, for a pattern cli_glob does not compile. */
static int fn_excluded(const struct exclude *e, const char *rel, int is_dir)
{
	if (e->dir_only && !is_dir)
		return 0;
	for (const char *tail = rel; tail;
	     tail = e->anchored ? NULL : strchr(tail, '/'), tail = tail ? tail + 1 : NULL)
		if (!fnmatch(e->glob, tail, 0))
			return 1;
	return 0;
}

/* Whether e excludes path (len bytes, NUL-terminated), or with `above` a directory above it: one
 * pass over the path for every tail of every directory (cli_glob.c says why); -1 when out of
 * memory. Only fnmatch's way with `above` writes to path (a NUL for each '/', put back). */
static int excluded(const struct exclude *e, char *path, size_t len, int is_dir, int above)
{
	struct exclude_ends a = {path, len, is_dir, e->dir_only, above};
	if (e->g)
		return cli_glob_scan(e->g, path, len, !e->anchored, exclude_end, &a);
	int hit = fn_excluded(e, path, is_dir);
	for (size_t k = 0; above && !hit && k < len; k++)
		if (path[k] == '/') {
			path[k] = 0;
			hit = fn_excluded(e, path, 1);
			path[k] = '/';
		}
	return hit;
}

/* As tar's --exclude: a pattern matches the stored path or any tail of it that starts at a
 * component ("a/b" excludes "t/a/b"), '*' matches '/' too, and an excluded directory takes
 * its contents with it (it is not walked). A pattern with a leading '/' is anchored: it must
 * match the whole stored path (which has no leading '/'), as for a PATH given absolute; so is
 * one with a leading "./" (tar's "./build" leaves "./src/build" in, its names starting "./"); one
 * with a trailing '/' matches directories only. */
static int filter_cb(void *ctx, const char *rel, int is_dir)
{
	struct excludes *x = ctx;
	for (int i = 0; i < x->n; i++)
		if (excluded(&x->pats[i], (char *)rel, strlen(rel), is_dir, 0))
			return 0; /* out of memory too: leaves out rather than stores what it would not */
	return 1;
}

/* Adds one --exclude: "./t/a", "t//a" and "/abs/t/a/" become "t/a" (the first anchored) and
 * "abs/t/a" (anchored, directories only), matching the names PATHs are stored under. */
static int exclude_pattern(struct excludes *x, const char *arg)
{
	if (x->n == x->cap) {
		struct exclude *np = realloc(x->pats, (size_t)(x->cap = x->cap * 2 + 16) * sizeof(*np));
		if (!np)
			return -1;
		x->pats = np;
	}
	struct exclude *e = &x->pats[x->n];
	e->anchored = arg[0] == '/' || (arg[0] == '.' && arg[1] == '/');
	while (arg[0] == '/' && arg[1])
		arg++;
	if (!(e->glob = cli_pattern(arg, &e->dir_only)))
		return -1;
	e->g = cli_glob_new(e->glob);
	x->n++;
	return 0;
}

/* The whole of file `name` ('-': standard input) with a NUL after it, or NULL with the
 * problem named and *rc set to the exit status. */
static const char *slurp_cmd = "create"; /* the command that reads lists, for messages */

static char *slurp(const char *name, size_t *len, int *rc)
{
	int std = !strcmp(name, "-");
	if (std && stdin_taken++) {
		*rc = cli_usage_error(slurp_cmd, "standard input ('-') given as a list twice");
		return NULL;
	}
	FILE *f = std ? stdin : fopen(name, "rb");
	if (!f) {
		cli_error("%s: cannot open: %s", name, strerror(errno));
		*rc = EXIT_SYSTEM;
		return NULL;
	}
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	do {
		if (cap - n < 65536) {
			char *nb = realloc(buf, cap = cap * 2 + 65536);
			if (!nb) {
				free(buf);
				*rc = EXIT_SYSTEM;
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	int bad = ferror(f);
	if (!std)
		fclose(f);
	if (bad) {
		cli_error("%s: read failed: %s", std ? "(standard input)" : name, strerror(errno));
		free(buf);
		*rc = EXIT_SYSTEM;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* --exclude-from: one pattern per line; empty lines are none. */
static int exclude_from(struct excludes *x, const char *name)
{
	size_t len;
	int rc = 0;
	char *buf = slurp(name, &len, &rc);
	if (!buf)
		return rc;
	for (char *line = buf, *end; line < buf + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (!end)
			end = buf + len;
		*end = 0;
		/* Trailing blanks and a CR (a file written on Windows) are not part of the
		 * pattern, as with tar -X. */
		for (char *t = end; t > line && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r');)
			*--t = 0;
		if (*line && exclude_pattern(x, line)) {
			free(buf);
			return EXIT_SYSTEM;
		}
	}
	free(buf); /* cli_pattern made copies */
	return 0;
}

/* --exclude GLOB (c == OPT_EXCLUDE) or -X FILE. Returns 0 or the exit status. */
static int exclude_option(struct excludes *x, int c, const char *arg)
{
	if (c == OPT_EXCLUDE)
		return exclude_pattern(x, arg) ? EXIT_SYSTEM : 0;
	return exclude_from(x, arg);
}

struct create_ctx {
	struct excludes ex;
	uint64_t changed; /* files that changed while read: exit status 1, as tar's */
};

static void create_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	if (r == ZN_ERR_CHANGED)
		((struct create_ctx *)ctx)->changed++;
	cli_problem_cb(ctx, path, r, what);
}

static int create_filter(void *ctx, const char *rel, int is_dir)
{
	return filter_cb(&((struct create_ctx *)ctx)->ex, rel, is_dir);
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
		char *buf = slurp(o.arg, &len, &rc);
		if (!buf)
			return rc;
		bufs[nbufs++] = buf;
		char sep = null_sep ? '\0' : '\n';
		uint64_t line = 1;
		for (size_t at = 0; at < len; line++) {
			char *end = memchr(buf + at, sep, len - at);
			size_t stop = end ? (size_t)(end - buf) : len;
			if (!null_sep && memchr(buf + at, '\0', stop - at)) {
				cli_error("%s: line %llu: the name holds a NUL byte (--null reads names "
					  "that end with one)",
					  std ? "(standard input)" : o.arg, (unsigned long long)line);
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

int cmd_create(int argc, char **argv)
{
	static const struct option lo[] = {
		{"output", required_argument, 0, 'o'},	   {"level", required_argument, 0, 'l'},
		{"threads", required_argument, 0, 'T'},	   {"chunk-size", required_argument, 0, OPT_CHUNK},
		{"memory", required_argument, 0, OPT_MEMORY}, {"no-skip", no_argument, 0, OPT_NO_SKIP},
		{"digest", required_argument, 0, OPT_DIGEST}, {"exclude", required_argument, 0, OPT_EXCLUDE},
		{"directory", required_argument, 0, 'C'},  {"progress", no_argument, 0, OPT_PROGRESS},
		{"quiet", no_argument, 0, 'q'},		   {"help", no_argument, 0, 'h'},
		{"no-dedup", no_argument, 0, OPT_NO_DEDUP}, {"one-file-system", no_argument, 0, OPT_ONE_FS},
		{"files-from", required_argument, 0, OPT_FILES_FROM}, {"null", no_argument, 0, OPT_NULL},
		{"exclude-from", required_argument, 0, 'X'},
		{"no-recursion", no_argument, 0, OPT_NO_RECURSION},
		{"owner", required_argument, 0, OPT_OWNER}, {"group", required_argument, 0, OPT_GROUP},
		{"numeric-owner", no_argument, 0, OPT_NUMERIC_OWNER},
		{"mode", required_argument, 0, OPT_MODE}, {"mtime", required_argument, 0, OPT_MTIME},
		{"clamp-mtime", no_argument, 0, OPT_CLAMP},
		{"verbose", no_argument, 0, 'v'},
		{"exclude-vcs", no_argument, 0, OPT_EXCLUDE_VCS},
		{0, 0, 0, 0},
	};
	static struct cli_meta meta; /* static: its mode steps stay reachable to the end */
	int clamp = 0;
	struct zn_create_options opt;
	zn_create_options_init(&opt);
	const char *out = NULL;
	/* PATHs and -C in command-line order: as with tar, each -C applies to the PATHs after it
	 * and is relative to the directory of the one before. An op is a PATH, a directory when
	 * it comes from -C, or a --files-from LIST until read_lists() puts its PATHs there. */
	static struct op *ops; /* static: still reachable at any early exit, no leak to report */
	ops = calloc((size_t)argc + 1, sizeof(*ops));
	int nops = 0, npaths = 0, nlists = 0, null_sep = 0, chdir_failed = 0;
	if (!ops)
		return EXIT_SYSTEM;
	static struct create_ctx cc; /* static: the patterns stay reachable to the end */
	uint64_t v;
	int memory_given = 0;
	int c;
	optind = 1;
	/* "-": non-options come back in order (as argument 1), so -C can be positional. */
	int verbose = 0;
	while ((c = getopt_long(argc, argv, "-:o:l:T:C:X:vqh", lo, NULL)) != -1) {
		switch (c) {
		case 1:
			ops[nops++] = (struct op){optarg, OP_PATH};
			npaths++;
			break;
		case 'o': out = optarg; break;
		case 'l':
			if (cli_parse_uint(optarg, 1, 19, &v))
				return cli_usage_error("create", "invalid level '%s' (1..19)", optarg);
			opt.level = (int)v;
			break;
		case 'T':
			if (parse_threads("create", optarg, &opt.threads))
				return EXIT_USAGE;
			break;
		case OPT_CHUNK:
			if (cli_parse_size(optarg, &v) || v < (64u << 10) || v > (256u << 20))
				return cli_usage_error("create", "invalid chunk size '%s' (64K..256M)",
						       optarg);
			opt.chunk_size = v;
			break;
		case OPT_MEMORY:
			if (cli_parse_size(optarg, &v) || !v)
				return cli_usage_error("create", "invalid memory size '%s'", optarg);
			opt.memory_limit = v;
			memory_given = 1;
			break;
		case OPT_NO_SKIP: opt.no_skip = 1; break;
		case OPT_NO_DEDUP: opt.no_dedup = 1; break;
		case OPT_ONE_FS: opt.one_file_system = 1; break;
		case OPT_NO_RECURSION: opt.no_recursion = 1; break;
		case OPT_DIGEST:
			if (!strcmp(optarg, "sha256"))
				opt.digest = ZN_DIGEST_SHA256;
			else if (!strcmp(optarg, "none"))
				opt.digest = ZN_DIGEST_NONE;
			else
				return cli_usage_error("create", "unknown digest '%s'", optarg);
			break;
		case OPT_EXCLUDE_VCS: {
			/* tar's list (exclude_vcs_files) */
			static const char *const vcs[] = {
			        "CVS",  ".cvsignore", "RCS", "SCCS", ".svn", ".git", ".gitignore",
			        ".gitattributes", ".gitmodules", ".arch-ids", "{arch}", "=RELEASE-ID",
			        "=meta-update", "=update", ".bzr", ".bzrignore", ".bzrtags", ".hg",
			        ".hgignore", ".hgtags", "_darcs"};
			for (size_t i = 0; i < sizeof(vcs) / sizeof(vcs[0]); i++)
				if (exclude_pattern(&cc.ex, vcs[i]))
					return EXIT_SYSTEM;
			break;
		}
		case OPT_EXCLUDE:
		case 'X': {
			int rc = exclude_option(&cc.ex, c, optarg);
			if (rc)
				return rc;
			break;
		}
		case 'C':
			if (!*optarg)
				return cli_usage_error("create", "empty DIR for -C");
			ops[nops++] = (struct op){optarg, OP_CHDIR};
			break;
		case OPT_FILES_FROM:
			ops[nops++] = (struct op){optarg, OP_LIST};
			nlists++;
			break;
		case OPT_NULL: null_sep = 1; break;
		case OPT_OWNER:
		case OPT_GROUP: {
			int rc = cli_meta_owner(&meta, optarg, c == OPT_GROUP);
			if (rc)
				return rc;
			break;
		}
		case OPT_NUMERIC_OWNER: meta.numeric_owner = 1; break;
		case OPT_MODE: {
			int rc = cli_meta_mode(&meta, optarg);
			if (rc)
				return rc;
			break;
		}
		case OPT_MTIME: {
			int rc = cli_meta_mtime(&meta, optarg);
			if (rc)
				return rc;
			break;
		}
		case OPT_CLAMP: clamp = 1; break;
		case 'v': verbose = 1; break;
		case OPT_PROGRESS: cli_progress = 1; break;
		case 'q': cli_quiet = 1; break;
		case 'h': fputs(create_help, stdout); return EXIT_OK;
		default: return cli_option_error("create", c, argv);
		}
	}
	if (clamp && !meta.mtime_policy)
		return cli_usage_error("create", "--clamp-mtime needs --mtime DATE");
	if (clamp)
		meta.mtime_policy = MTIME_CLAMP;
	if (!out)
		return cli_usage_error("create", "missing -o OUT");
	if (!*out)
		return cli_usage_error("create", "empty OUT name");
	for (int i = optind; i < argc; i++) { /* after "--" */
		ops[nops++] = (struct op){argv[i], OP_PATH};
		npaths++;
	}
	if (nlists) {
		int rc = read_lists(&ops, &nops, null_sep);
		if (rc)
			return rc;
	} else if (!npaths) { /* an empty LIST makes an empty archive, as with tar */
		return cli_usage_error("create", "no input PATH given");
	}
	/* Without --memory the default grows with a large chunk size instead of refusing it. */
	uint64_t need = zn_create_memory_min(opt.chunk_size);
	if (!memory_given && opt.memory_limit < need)
		opt.memory_limit = need;
	if (opt.memory_limit < need)
		return cli_usage_error("create", "--memory must be at least %lluK for this chunk size "
						 "(4 buffers of input and compressed output)",
				       (unsigned long long)((need + 1023) >> 10));

	/* A new or plain OUT is written under a temporary name beside it (cli_open_replacement)
	 * and renamed on success, so a failed run never leaves a half-written archive under the
	 * final name. Anything else (a device, a FIFO, a symlink, a file with other links) is
	 * written in place, as tar does. Paths are resolved before -C. */
	char *tmp = NULL;
	int fd = 1;
	struct stat ost;
	int out_exists = lstat(out, &ost) == 0;
	if (!strcmp(out, "-")) {
		if (isatty(1))
			return cli_usage_error("create", "refusing to write an archive to a terminal");
	} else if (out_exists && (!S_ISREG(ost.st_mode) || ost.st_nlink > 1)) {
		if (S_ISDIR(ost.st_mode)) {
			cli_error("%s: is a directory", out);
			return EXIT_SYSTEM;
		}
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
		if (fd < 0) {
			cli_error("%s: cannot open: %s", out, strerror(errno));
			return EXIT_SYSTEM;
		}
	} else if (out_exists && faccessat(AT_FDCWD, out, W_OK, AT_EACCESS) && errno == EACCES) {
		cli_error("%s: cannot open: %s", out, strerror(errno)); /* read-only: as tar */
		return EXIT_SYSTEM;
	} else if (out_exists && !may_replace(out, &ost)) {
		/* Another user's name: not followed if it became a symlink, and truncated only
		 * once it is known to be the file that was looked at. */
		fd = open(out, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		struct stat now;
		if (fd >= 0 && !fstat(fd, &now) &&
		    (now.st_dev != ost.st_dev || now.st_ino != ost.st_ino)) {
			cli_error("%s: replaced by another file meanwhile; not written", out);
			close(fd);
			return EXIT_SYSTEM;
		}
		if (fd >= 0 && ftruncate(fd, 0)) {
			close(fd);
			fd = -1;
		}
		if (fd < 0) {
			cli_error("%s: cannot open: %s", out, strerror(errno));
			return EXIT_SYSTEM;
		}
	} else {
		/* A file we may write in a directory we may not is written in place, as tar does
		 * (a failure then leaves it incomplete): tmp stays NULL. */
		fd = cli_open_replacement(out, out_exists ? &ost : NULL, &tmp);
		if (fd < 0) {
			cli_error("%s: cannot create: %s", out, strerror(errno));
			return EXIT_SYSTEM;
		}
	}
	struct zn_writer *w;
	zn_result res = zn_writer_open(&w, fd, &opt);
	struct stat sst;
	if (res == ZN_ERR_INVALID_ARG && fd == 1 && !fstat(1, &sst) && S_ISREG(sst.st_mode)) {
		/* The options were checked above: what the writer refuses is a file that does not
		 * start where the archive would (zn_writer_open). */
		off_t at = lseek(1, 0, SEEK_CUR);
		cli_error("standard output is a file already %lld bytes in: an archive must start at "
			  "the beginning of its file (redirect with '>', not '>>')",
			  (long long)(at > 0 ? at : sst.st_size));
		return EXIT_USAGE;
	}
	if (res != ZN_OK) {
		if (res == ZN_ERR_IO) /* the header could not be written */
			cli_error("%s: write failed: %s", strcmp(out, "-") ? out : "(standard output)",
				  strerror(errno));
		else
			cli_error("create: %s", zn_result_message(res));
		goto fail_early;
	}
	/* Where -C options start, and where OUT's relative name is renamed at the end: O_PATH,
	 * as a directory this user may search but not read is as good (fchdir takes it). */
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* If even that fails (a directory this user may not search), nothing is to be done there
	 * at the end: a relative OUT could not have been made in it. */
	zn_writer_set_hooks(w, create_problem, cc.ex.n ? create_filter : NULL,
			    cli_progress_enabled() ? cli_progress_cb : NULL, &cc);
	if (verbose) /* as tar: the names go to stderr when the archive goes to stdout */
		meta.verbose = strcmp(out, "-") ? stdout : stderr;
	if (cli_meta_active(&meta))
		zn_writer_set_meta_hook(w, cli_meta_hook, &meta);
	if (out_exists && tmp) /* the old archive the new one replaces is not archived either */
		zn_writer_skip_inode(w, (uint64_t)ost.st_dev, (uint64_t)ost.st_ino);
	for (int i = 0; i < nops; i++) /* said once, as tar says it */
		if (ops[i].kind == OP_PATH && ops[i].arg[0] == '/') {
			cli_warn("removing leading '/' from stored paths");
			break;
		}
	int moved = 0; /* a -C was taken */
	for (int i = 0; i < nops && res == ZN_OK; i++) {
		if (ops[i].kind == OP_PATH) {
			res = zn_writer_add_path(w, ops[i].arg, NULL);
		} else if ((moved = 1) && chdir(ops[i].arg)) {
			cli_error("%s: cannot change directory: %s", ops[i].arg, strerror(errno));
			res = ZN_ERR_IO; /* nothing half-done: the archive is not kept */
			chdir_failed = 1;
		}
	}
	zn_result fin = zn_writer_finish(w);
	if (res == ZN_OK)
		res = fin;
	cli_progress_end();
	struct zn_write_stats st;
	zn_writer_stats(w, &st);
	zn_writer_free(w);
	if (moved && cwd >= 0 && fchdir(cwd)) {
		cli_error("cannot return to the starting directory: %s", strerror(errno));
		chdir_failed = 1; /* OUT's temporary name may be relative: not kept */
	}
	/* Complete: every byte of the archive was written (inputs that could not be read are
	 * named above and left out; that alone does not cost the archive). */
	int complete = st.complete && (res == ZN_OK || res == ZN_ERR_IO) && !chdir_failed;
	int write_failed = !st.complete && st.write_errno;
	if (write_failed)
		cli_error("%s: write failed: %s", strcmp(out, "-") ? out : "(standard output)",
			  strerror(st.write_errno));
	if (tmp) {
		if (close(fd) && complete) {
			cli_error("%s: write failed: %s", out, strerror(errno));
			complete = 0;
			write_failed = 1;
		}
		if (complete && rename(tmp, out)) {
			cli_error("%s: cannot rename: %s", out, strerror(errno));
			complete = 0;
			write_failed = 1;
		}
		if (!complete)
			unlink(tmp);
		cli_replacement_done(tmp);
	} else if (fd != 1) {
		close(fd);
	}
	if (write_failed || chdir_failed)
		res = ZN_ERR_IO;
	if (chdir_failed)
		cli_error("%s: not written", out);
	else if (write_failed)
		; /* named above, with its errno */
	else if (res != ZN_OK && res != ZN_ERR_IO)
		cli_error("create: %s", zn_result_message(res));
	else if (res == ZN_ERR_IO && complete)
		cli_error("create: archive written; exit status 3 for the inputs named above");
	else if (res == ZN_ERR_IO)
		cli_error("create: I/O error");
	else if (cc.changed) /* stored as read: the archive may hold a torn copy */
		cli_error("create: archive written; exit status 1: %llu %s changed or removed while "
			  "read (named above)",
			  (unsigned long long)cc.changed, cc.changed == 1 ? "file" : "files");
	if (res == ZN_OK && cli_progress_enabled()) {
		char dups[64] = "";
		if (st.duplicates)
			snprintf(dups, sizeof(dups), " (%llu identical files stored once)",
				 (unsigned long long)st.duplicates);
		fprintf(stderr, "%s: %llu entries%s, %.1f MB -> %.1f MB (%.1f%%)\n", cli_prog,
			(unsigned long long)st.entries, dups, (double)st.content_bytes / 1e6,
			(double)st.archive_bytes / 1e6,
			st.content_bytes ? 100.0 * (double)st.archive_bytes / (double)st.content_bytes
					 : 0.0);
	}
	if (res == ZN_OK)
		return cc.changed ? EXIT_DAMAGED : EXIT_OK;
	return res == ZN_ERR_IO ? EXIT_SYSTEM : cli_exit_code(res);
fail_early:
	if (tmp) {
		close(fd);
		unlink(tmp);
		cli_replacement_done(tmp);
	}
	return EXIT_SYSTEM;
}

/* ---- selection by patterns ------------------------------------------------------------------- */

/* Marks in sel the entries the PATTERNs select among those `allowed` marks (NULL: all; what
 * --exclude leaves out is not found, as with tar); returns how many PATTERNs selected nothing
 * (each named), or -1 when out of memory (said). */
static int select_entries(struct zn_reader *r, char **pats, int npats, uint8_t *sel,
                          const uint8_t *allowed)
{
	/* Each PATTERN in the form the archive stores paths, whether it names only directories
	 * ("d/", as with tar: a file then matches only through a directory above it), and whether
	 * it matched. Messages name the PATTERN as given. */
	struct pat {
		char *norm;
		struct cli_glob *g; /* norm compiled, or NULL: fnmatch */
		int dir_only, hit;
	} *p = sel ? calloc((size_t)npats + 1, sizeof(*p)) : NULL;
	int missing = 0;
	for (int k = 0; p && k < npats; k++) {
		if (!(p[k].norm = cli_pattern(pats[k], &p[k].dir_only))) {
			missing = -1;
			break;
		}
		p[k].g = cli_glob_new(p[k].norm);
	}
	if (!p || missing) {
		cli_error("out of memory");
		missing = -1;
		goto out;
	}
	uint64_t n = zn_reader_count(r), unreadable = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (allowed && !allowed[i])
			continue;
		struct zn_entry e;
		unsigned lost; /* an entry that lost only its metadata is extracted by its path */
		if (zn_reader_entry_lost(r, i, &e, &lost) != ZN_OK) {
			sel[i] = 1; /* let the extractor report it */
			unreadable++;
			continue;
		}
		/* The part of the path a directory-only pattern may match: its parent. */
		size_t parent = e.path_len;
		while (parent && e.path[parent - 1] != '/')
			parent--;
		parent = parent ? parent - 1 : 0;
		for (int k = 0; k < npats; k++) {
			int via_parent = p[k].dir_only && e.type != ZN_TYPE_DIR;
			if (via_parent && !parent)
				continue;
			if (cli_path_matches(p[k].norm, p[k].g, e.path,
			                     via_parent ? parent : e.path_len)) {
				sel[i] = 1;
				p[k].hit = 1;
			}
		}
	}
	for (int k = 0; k < npats; k++) {
		if (!p[k].hit && unreadable) {
			cli_error("%s: not found among the entries that can be read (%llu of the "
			          "index's entries are damaged)",
			          pats[k], (unsigned long long)unreadable);
			missing++;
		} else if (!p[k].hit) {
			cli_error("%s: not found in archive", pats[k]);
			missing++;
		}
	}
out:
	for (int k = 0; p && k < npats; k++) {
		free(p[k].norm);
		cli_glob_free(p[k].g);
	}
	free(p);
	return missing;
}


/* --exclude and -X when extracting or listing, as tar's: an entry a pattern matches (as create
 * matches them: the path or a tail of it from a '/' on) is left out, and so is everything below
 * a directory one matches. *sel is made (all selected) if it was NULL. */
static int apply_excludes(struct zn_reader *r, struct excludes *x, uint8_t **sel)
{
	uint64_t n = zn_reader_count(r);
	if (!*sel && (*sel = malloc(n + 1)))
		memset(*sel, 1, n + 1);
	char *buf = NULL;
	size_t cap = 0;
	for (uint64_t i = 0; *sel && i < n; i++) {
		struct zn_entry e;
		unsigned lost;
		if (!(*sel)[i] || zn_reader_entry_lost(r, i, &e, &lost) != ZN_OK)
			continue;
		if (e.path_len + 1 > cap) {
			free(buf);
			cap = e.path_len + 256;
			if (!(buf = malloc(cap)))
				break;
		}
		memcpy(buf, e.path, e.path_len);
		buf[e.path_len] = 0;
		int keep = 1; /* and out of memory leaves out, as in filter_cb */
		for (int k = 0; keep && k < x->n; k++)
			keep = !excluded(&x->pats[k], buf, e.path_len, e.type == ZN_TYPE_DIR, 1);
		(*sel)[i] = (uint8_t)keep;
	}
	int ok = *sel && (buf || !cap);
	free(buf);
	if (!ok)
		cli_error("out of memory");
	return ok ? 0 : EXIT_SYSTEM;
}

/* What extract and list work on: the entries the PATTERNs select (all without any) among those
 * --exclude leaves, in *sel (NULL: every entry). Returns as select_entries: how many PATTERNs
 * selected nothing, or -1 when out of memory (said). */
static int select_kept(struct zn_reader *r, struct excludes *x, char **pats, int npats,
                       uint8_t **sel)
{
	uint8_t *kept = NULL;
	*sel = NULL;
	if (x->n && apply_excludes(r, x, &kept)) {
		free(kept);
		return -1;
	}
	if (!npats) {
		*sel = kept;
		return 0;
	}
	*sel = calloc(zn_reader_count(r) + 1, 1);
	int missing = select_entries(r, pats, npats, *sel, kept);
	free(kept);
	return missing;
}

/* ---- extract --------------------------------------------------------------------------------- */

static int extract_to_stdout(struct zn_reader *r, const char *path, const uint8_t *sel,
                             unsigned strip, int verbose);

static const char extract_help[] =
	"Usage: znippy extract ARCHIVE [OPTIONS] [PATTERN...]\n"
	"Extract all entries, or those whose path matches a PATTERN (a glob, or the path itself;\n"
	"a directory's pattern selects everything below it; one ending in '/' names only\n"
	"directories).\n"
	"Paths that are absolute or contain '..' are refused, and no write ever follows a\n"
	"symlink. Damaged files are named and left out; everything else is still extracted.\n"
	"INT, TERM, HUP or PIPE stop it: files begun but not finished are removed, then it\n"
	"dies of the signal.\n"
	"\n"
	"  -C, --directory DIR   extract into DIR (default: the current directory); a missing\n"
	"                        DIR is created if its parent exists, as unzip -d does; a\n"
	"                        second -C is relative to the one before, as tar's\n"
	"  -T, --threads N       worker threads, 0..1024 (default or 0: one per CPU, as nproc;\n"
	"                        at most 256 run)\n"
	"      --overwrite       replace existing files and empty directories (default:\n"
	"                        refuse); a file or link is replaced only by a complete,\n"
	"                        checked new one (written as .znippy-*.part beside it, then\n"
	"                        renamed), so damage, a full disk or a stop leaves the old one\n"
	"      --skip-old-files  pass over files and links whose name exists already (as a\n"
	"                        file, link or directory), silently, keeping what is there\n"
	"                        (as tar)\n"
	"      --check-digest    also check each file's SHA-256 before it is kept (every\n"
	"                        block is always checked by its XXH3)\n"
	"      --numeric-owner   owners by their stored ids; by default a stored user or group\n"
	"                        name this system knows gives its id here, as with tar (owners\n"
	"                        are applied when run as root)\n"
	"      --no-same-owner   files owned by the user extracting them, as root too\n"
	"      --same-owner      apply the stored owners when not run as root too (where the\n"
	"                        system allows it)\n"
	"  -k, --keep-old-files  as tar -k: an existing file is an error, not replaced (as by\n"
	"                        default), and an existing directory keeps its mode and owner\n"
	"                        (--no-overwrite-dir); it cancels --overwrite and\n"
	"                        --skip-old-files given before it\n"
	"      --no-overwrite-dir  a directory that exists keeps its own mode and owner and\n"
	"                        gets the archive's times, as tar's (by default it gets all)\n"
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
	"                        all are\n"
	"      --progress        show a progress line on stderr\n"
	"  -q, --quiet           no progress, no warnings\n"
	"  -h, --help            this help\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;

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
 * it by the very string it was given), which needs no summary after it. */
struct target_watch {
	const char *dir;
	int failed;
	int hint; /* name --overwrite where a file was not overwritten (not after -k) */
};

static void watch_target(void *ctx, const char *path, zn_result r, const char *what)
{
	struct target_watch *tw = ctx;
	tw->failed |= path == tw->dir;
	if (cli_truncation_seen()) /* after that, what fails is said once, at the end */
		return;
	char buf[512];
	if (r == ZN_ERR_EXISTS && tw->hint) {
		snprintf(buf, sizeof(buf), "%s (use --overwrite)", what);
		what = buf;
	}
	cli_problem_cb(NULL, path, r, what);
}

int cmd_extract(int argc, char **argv)
{
	static const struct option lo[] = {
		{"directory", required_argument, 0, 'C'}, {"threads", required_argument, 0, 'T'},
		{"overwrite", no_argument, 0, OPT_OVERWRITE}, {"progress", no_argument, 0, OPT_PROGRESS},
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
		{"to-stdout", no_argument, 0, 'O'},
		{"touch", no_argument, 0, 'm'},
		{"no-overwrite-dir", no_argument, 0, OPT_NO_OVERWRITE_DIR},
		{"quiet", no_argument, 0, 'q'},		 {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	struct zn_extract_options opt;
	zn_extract_options_init(&opt);
	const char *dir = ".";
	int c;
	optind = 1;
	static struct excludes ex; /* static: the patterns stay reachable to the end */
	slurp_cmd = "extract";
	int to_stdout = 0, keep_old = 0;
	while ((c = getopt_long(argc, argv, ":C:T:X:Opkmvqh", lo, NULL)) != -1) {
		switch (c) {
		case 'C': {
			int rc = take_dir("extract", &dir, optarg);
			if (rc)
				return rc;
			break;
		}
		case 'T':
			if (parse_threads("extract", optarg, &opt.threads))
				return EXIT_USAGE;
			break;
		case OPT_OVERWRITE: opt.overwrite = 1; break;
		case OPT_CHECK_DIGEST: opt.check_digest = 1; break;
		case OPT_NUMERIC_OWNER: opt.numeric_owner = 1; break;
		case OPT_NO_SPARSE: opt.sparse = 0; break;
		case OPT_SKIP_OLD: opt.skip_existing = 1; break;
		case 'p': opt.same_permissions = 1; break;
		case 'v': opt.extracted = list_extracted; break;
		case OPT_SAME_OWNER: opt.same_owner = 1; break;
		case OPT_NO_SAME_OWNER: opt.same_owner = 0; break;
		case 'k':
			keep_old = 1;
			opt.overwrite = opt.skip_existing = 0;
			opt.no_overwrite_dir = 1; /* as tar -k: existing directories stay as they are */
			break;
		case 'O': to_stdout = 1; break;
		case 'm': opt.touch = 1; break;
		case OPT_NO_OVERWRITE_DIR: opt.no_overwrite_dir = 1; break;
		case OPT_EXCLUDE:
		case 'X': {
			int rc = exclude_option(&ex, c, optarg);
			if (rc)
				return rc;
			break;
		}
		case OPT_NO_SAME_PERMS: opt.same_permissions = 0; break;
		case OPT_STRIP: {
			uint64_t v;
			if (cli_parse_uint(optarg, 0, 4096, &v))
				return cli_usage_error("extract", "invalid number '%s' for "
								  "--strip-components (0..4096)",
						       optarg);
			opt.strip_components = (unsigned)v;
			break;
		}
		case OPT_PROGRESS: cli_progress = 1; break;
		case 'q': cli_quiet = 1; break;
		case 'h': fputs(extract_help, stdout); return EXIT_OK;
		default: return cli_option_error("extract", c, argv);
		}
	}
	if (opt.overwrite && opt.skip_existing)
		return cli_usage_error("extract", "--overwrite and --skip-old-files: choose one");
	if (optind >= argc)
		return cli_usage_error("extract", "missing ARCHIVE");
	const char *path = argv[optind++];
	struct zn_reader *r;
	zn_result res = open_reader(path, &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	uint8_t *sel;
	int missing = select_kept(r, &ex, argv + optind, argc - optind, &sel);
	if (missing < 0 || (optind < argc && missing == argc - optind)) { /* not even -C DIR */
		free(sel);
		zn_reader_close(r);
		return missing < 0 ? EXIT_SYSTEM : EXIT_DAMAGED;
	}
	if (to_stdout) {
		int rc = extract_to_stdout(r, path, sel, opt.strip_components, opt.extracted != NULL);
		free(sel);
		zn_reader_close(r);
		return rc > EXIT_OK || !missing ? rc : EXIT_DAMAGED;
	}
	if (opt.check_digest) {
		struct zn_archive_info in;
		zn_reader_info(r, &in);
		if (in.digest != ZN_DIGEST_SHA256)
			cli_warn("%s: has no file digests (made with --digest none): --check-digest "
			         "adds nothing to the blocks' checks", path);
	}
	/* A signal stops the extraction rather than killing it halfway: files begun but not
	 * finished are removed first, then the signal takes its course. So does the archive
	 * shrinking under the reader (SIGBUS). */
	opt.stop = cli_stop_flag();
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
#endif
	struct target_watch tw = {dir, 0, !opt.overwrite && !keep_old && !opt.skip_existing};
	res = zn_extract(r, dir, sel, &opt, watch_target, progress, &tw);
	cli_progress_end();
	int truncated = cli_truncation_seen();
	cli_end_deferred_signals();
	free(sel);
	zn_reader_close(r);
	if (truncated) {
		cli_error("%s: the archive shrank while being read (truncated or rewritten by "
		          "another program); extraction stopped, and the files it had begun are "
		          "removed",
		          path);
		return EXIT_SYSTEM;
	}
	if (res != ZN_OK) {
		if (res == ZN_ERR_DAMAGED)
			cli_error("%s: parts of the archive are damaged, or entries unsafe (see above)", path);
		else if (res == ZN_ERR_IO && !tw.failed)
			cli_error("%s: not everything could be extracted (see above)", path);
		else if (!tw.failed)
			cli_error("%s: %s", path, zn_result_message(res));
		return cli_exit_code(res);
	}
	return missing ? EXIT_DAMAGED : EXIT_OK;
}

/* ---- list ------------------------------------------------------------------------------------ */

static const char list_help[] =
	"Usage: znippy list ARCHIVE [OPTIONS] [PATTERN...]\n"
	"List all entries, or those whose path matches a PATTERN (as for extract), in path order.\n"
	"Names are shown as UTF-8; backslash, tab, newline, other control characters,\n"
	"bidirectional and zero-width marks, and bytes that are not UTF-8 are shown as C escapes\n"
	"(\\\\, \\t, \\n, \\ooo).\n"
	"\n"
	"  -l, --long   type and mode, owner, size, stored (compressed) size, mtime, path; the\n"
	"               stored size of a file packed with others is its share of their block,\n"
	"               rounded down (0 for the smallest); a file stored once for identical ones\n"
	"               has it with the first in path order, 0 with the others (-v, --verbose:\n"
	"               the same, as tar -tv)\n"
	"      --json   one JSON object per line with every field (exact bytes of names that are\n"
	"               not UTF-8 in \"path_hex\"; a field a damaged index lost is left out, where\n"
	"               -l shows '?', or for a lost name the id; so are user and group names the\n"
	"               archive does not hold)\n"
	"      --exclude GLOB, -X FILE\n"
	"               leave out what GLOB (each line of FILE) matches, as extract's\n"
	"  -h, --help   this help\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;

/* Seconds of an mtime in nanoseconds, rounded down (also before 1970), and the rest in *ns. */
static time_t mtime_split(int64_t mtime_ns, long *ns)
{
	int64_t sec = mtime_ns / 1000000000, rest = mtime_ns % 1000000000;
	if (rest < 0)
		rest += 1000000000, sec--;
	*ns = (long)rest;
	return (time_t)sec;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		if (!k || i + k > n || (k == 2 && c < 0xc2) || c > 0xf4)
			return 0;
		for (size_t j = 1; j < k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
		/* No overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629). */
		unsigned char c1 = k > 1 ? s[i + 1] : 0;
		if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) ||
		    (c == 0xf4 && c1 > 0x8f))
			return 0;
		i += k;
	}
	return 1;
}

static void put_json_str(FILE *f, const char *key, const char *s, size_t n)
{
	int ok = valid_utf8((const unsigned char *)s, n);
	fprintf(f, "\"%s\":\"", key);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 32)
			fprintf(f, "\\u%04x", ch);
		else if (ch >= 0x80 && !ok)
			fputs("\\ufffd", f);
		else
			fputc(ch, f);
	}
	fputc('"', f);
	if (!ok) {
		fprintf(f, ",\"%s_hex\":\"", key);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%02x", (unsigned char)s[i]);
		fputc('"', f);
	}
}

static const char *type_name(uint32_t t)
{
	static const char *const names[] = {"file", "dir", "symlink", "hardlink"};
	return t < 4 ? names[t] : "unknown";
}

static void mode_string(const struct zn_entry *e, char out[11])
{
	static const char tc[] = "-dlh";
	out[0] = tc[e->type & 3];
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = (e->mode & (0400u >> i)) ? rwx[i] : '-';
	if (e->mode & 04000)
		out[3] = (e->mode & 0100) ? 's' : 'S';
	if (e->mode & 02000)
		out[6] = (e->mode & 0010) ? 's' : 'S';
	if (e->mode & 01000)
		out[9] = (e->mode & 0001) ? 't' : 'T';
	out[10] = 0;
}

int cmd_list(int argc, char **argv)
{
	static const struct option lo[] = {
		{"long", no_argument, 0, 'l'}, {"json", no_argument, 0, OPT_JSON},
		{"verbose", no_argument, 0, 'v'},
		{"exclude", required_argument, 0, OPT_EXCLUDE},
		{"exclude-from", required_argument, 0, 'X'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	int lng = 0, json = 0, c;
	static struct excludes ex; /* static: the patterns stay reachable to the end */
	slurp_cmd = "list";
	optind = 1;
	while ((c = getopt_long(argc, argv, ":lvX:h", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
		case 'v': lng = 1; break;
		case OPT_JSON: json = 1; break;
		case OPT_EXCLUDE:
		case 'X': {
			int rc = exclude_option(&ex, c, optarg);
			if (rc)
				return rc;
			break;
		}
		case 'h': fputs(list_help, stdout); return EXIT_OK;
		default: return cli_option_error("list", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("list", "missing ARCHIVE");
	const char *path = argv[optind++];
	struct zn_reader *r;
	zn_result res = open_reader(path, &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	uint64_t n = zn_reader_count(r);
	uint8_t *sel;
	int bad = 0, missing = select_kept(r, &ex, argv + optind, argc - optind, &sel);
	if (missing < 0) {
		free(sel);
		zn_reader_close(r);
		return EXIT_SYSTEM;
	}
	FILE *f = stdout;
	/* A file stored once for several: the first row in path order has its share of the
	 * block, the others none, so the column adds up to the archive's data. */
	uint8_t *copy = (json || lng) ? malloc(n + 1) : NULL;
	if (copy)
		zn_reader_copies(r, copy);
	/* Unreadable rows come in runs (a damaged page of the index holds many): one line a run. */
	uint64_t run_from = 0, run_len = 0, nlost = 0;
	zn_result run_res = ZN_OK;
	for (uint64_t i = 0; i <= n; i++) {
		if (i < n && sel && !sel[i])
			continue;
		struct zn_entry e;
		unsigned lost = 0; /* fields lost to index damage: shown as '?', left out of JSON */
		res = i < n ? zn_reader_entry_lost(r, i, &e, &lost) : ZN_OK;
		nlost += lost != 0;
		if (run_len && (res == ZN_OK || res != run_res || i != run_from + run_len)) {
			if (run_len == 1)
				cli_error("%s: entry %llu: %s", path, (unsigned long long)run_from,
				          zn_result_message(run_res));
			else
				cli_error("%s: entries %llu-%llu: %s", path,
				          (unsigned long long)run_from,
				          (unsigned long long)(run_from + run_len - 1),
				          zn_result_message(run_res));
			run_len = 0;
		}
		if (i == n)
			break;
		if (res != ZN_OK) {
			if (!run_len) {
				run_from = i;
				run_res = res;
			}
			run_len++;
			bad = 1;
			continue;
		}
		if (copy && copy[i])
			e.stored_size = 0;
		if (json) {
			fputc('{', f);
			put_json_str(f, "path", e.path, e.path_len);
			fprintf(f, ",\"type\":\"%s\"", type_name(e.type));
			if (!(lost & ZN_LOST_MODE))
				fprintf(f, ",\"mode\":\"%04o\"", e.mode);
			if (!(lost & ZN_LOST_OWNER))
				fprintf(f, ",\"uid\":%u,\"gid\":%u", e.uid, e.gid);
			/* A name never stored (--numeric-owner) is left out, as one that was lost. */
			if (e.uname_len) {
				fputc(',', f);
				put_json_str(f, "user", e.uname, e.uname_len);
			}
			if (e.gname_len) {
				fputc(',', f);
				put_json_str(f, "group", e.gname, e.gname_len);
			}
			fprintf(f, ",\"size\":%llu,\"stored\":%llu", (unsigned long long)e.size,
			        (unsigned long long)e.stored_size);
			/* The time as a string too: mtime_ns is above 2^53, where readers that hold
			 * JSON numbers as doubles (jq 1.6, JavaScript) round it. */
			long ns;
			time_t t = mtime_split(e.mtime_ns, &ns);
			struct tm tm;
			char tbuf[64];
			if (!(lost & ZN_LOST_MTIME)) {
				fprintf(f, ",\"mtime_ns\":%lld", (long long)e.mtime_ns);
				if (gmtime_r(&t, &tm) &&
				    strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm))
					fprintf(f, ",\"mtime\":\"%s.%09ldZ\"", tbuf, ns);
			}
			if (e.link) {
				fputc(',', f);
				put_json_str(f, "link", e.link, e.link_len);
			}
			if (e.has_digest) {
				fputs(",\"sha256\":\"", f);
				for (int k = 0; k < 32; k++)
					fprintf(f, "%02x", e.sha256[k]);
				fputc('"', f);
			}
			fputs("}\n", f);
		} else if (lng) {
			char ms[11], tbuf[32] = "\?\?\?\?-\?\?-\?\? \?\?:\?\?";
			mode_string(&e, ms);
			if (lost & ZN_LOST_MODE)
				memset(ms + 1, '?', 9);
			long ns;
			time_t t = mtime_split(e.mtime_ns, &ns);
			struct tm tm;
			localtime_r(&t, &tm);
			if (!(lost & ZN_LOST_MTIME))
				strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M", &tm);
			/* user/group, each its name when the archive has one, else its number (as
			 * tar); names come from the archive, so control characters become '?'. */
			char owner[160];
			size_t o = 0;
			for (int g = 0; g < 2; g++) {
				const char *nm = g ? e.gname : e.uname;
				size_t nl = g ? e.gname_len : e.uname_len;
				if (g)
					owner[o++] = '/';
				if (!nl && (lost & ZN_LOST_OWNER)) {
					owner[o++] = '?';
					continue;
				}
				if (!nl) {
					o += (size_t)snprintf(owner + o, sizeof(owner) - o, "%u",
							      g ? e.gid : e.uid);
					continue;
				}
				for (size_t k = 0; k < nl && k < 60; k++)
					owner[o++] = (unsigned char)nm[k] < 32 || nm[k] == 127 ? '?' : nm[k];
			}
			owner[o] = 0;
			fprintf(f, "%s %-17s %12llu %12llu %s ", ms, owner, (unsigned long long)e.size,
				(unsigned long long)e.stored_size, tbuf);
			cli_put_escaped(f, e.path, e.path_len);
			if (e.link) {
				fputs(e.type == ZN_TYPE_SYMLINK ? " -> " : " link to ", f);
				cli_put_escaped(f, e.link, e.link_len);
			}
			fputc('\n', f);
		} else {
			cli_put_escaped(f, e.path, e.path_len);
			fputc('\n', f);
		}
	}
	free(sel);
	free(copy);
	zn_reader_close(r);
	if (nlost)
		cli_error("%s: index damaged: %llu %s listed without the mode, owner, time or "
		          "digest the index lost%s",
		          path, (unsigned long long)nlost, nlost == 1 ? "entry" : "entries",
		          lng || json ? " ('?', or left out of --json)" : "");
	bad |= nlost != 0;
	if (fflush(f) || ferror(f)) {
		cli_error("write error on standard output: %s", strerror(errno ? errno : EIO));
		return EXIT_SYSTEM;
	}
	return (missing || bad) ? EXIT_DAMAGED : EXIT_OK;
}

/* ---- verify ---------------------------------------------------------------------------------- */

static const char verify_help[] =
	"Usage: znippy verify ARCHIVE [OPTIONS]\n"
	"Decode every block and check every block checksum and every file's SHA-256, writing\n"
	"nothing. Each damaged file is named on stderr.\n"
	"\n"
	"  -T, --threads N   worker threads, 0..1024 (default or 0: one per CPU, as nproc; at\n"
	"                    most 256 run)\n"
	"      --progress    show a progress line on stderr\n"
	"  -q, --quiet       no summary line, no warnings\n"
	"  -h, --help        this help\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;

int cmd_verify(int argc, char **argv)
{
	static const struct option lo[] = {
		{"threads", required_argument, 0, 'T'}, {"progress", no_argument, 0, OPT_PROGRESS},
		{"quiet", no_argument, 0, 'q'},	       {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	unsigned threads = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":T:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'T':
			if (parse_threads("verify", optarg, &threads))
				return EXIT_USAGE;
			break;
		case OPT_PROGRESS: cli_progress = 1; break;
		case 'q': cli_quiet = 1; break;
		case 'h': fputs(verify_help, stdout); return EXIT_OK;
		default: return cli_option_error("verify", c, argv);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error("verify", "expected exactly one ARCHIVE");
	const char *path = argv[optind];
	struct zn_reader *r;
	zn_result res = open_reader(path, &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	struct zn_archive_info info;
	zn_reader_info(r, &info);
	res = zn_verify(r, threads, cli_problem_cb, cli_progress_enabled() ? cli_progress_cb : NULL,
			NULL);
	cli_progress_end();
	zn_reader_close(r);
	if (res != ZN_OK) {
		cli_error("%s: %s", path,
			  res == ZN_ERR_DAMAGED ? "damaged (see above)" : zn_result_message(res));
		return cli_exit_code(res);
	}
	if (!cli_quiet)
		fprintf(stderr, "%s: %s: OK (%llu entr%s, %llu block%s, %.1f MB checked)\n", cli_prog,
			path, (unsigned long long)info.entries, info.entries == 1 ? "y" : "ies",
			(unsigned long long)info.blocks, info.blocks == 1 ? "" : "s",
			(double)info.content_bytes / 1e6);
	return EXIT_OK;
}

/* ---- cat ------------------------------------------------------------------------------------- */

static const char cat_help[] =
	"Usage: znippy cat ARCHIVE PATH...\n"
	"Write the contents of the named files to standard output, reading only the index and the\n"
	"blocks that hold them. Nothing unchecked is written: a file within one block is checked\n"
	"by its SHA-256 first; a longer one block by block (XXH3), then by its SHA-256.\n"
	"A PATH with a trailing '/' names a directory, which cat refuses, as cat(1) does.\n"
	"\n"
	"  -h, --help            this help (options come before ARCHIVE; every argument after it\n"
	"                        is a PATH)\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;

static int stdout_err; /* errno of a failed write to standard output, else 0 */

/* The exit status that says more of two (the larger), as diff(1) ranks trouble above a difference. */
static int worse(int a, int b)
{
	return a > b ? a : b;
}

/* The same for extract and cat, where damage (1) outranks an I/O error (3): it is what trying
 * again cannot mend, and so what extract's library reports when both occur. */
static int damage_first(int a, int b)
{
	return a == EXIT_DAMAGED || b == EXIT_DAMAGED ? EXIT_DAMAGED : worse(a, b);
}

/* "znippy: PATH: what" on stderr for an entry (its path not NUL-terminated), after what
 * standard output holds so far. */
static void name_entry(const struct zn_entry *e, const char *what)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog);
	cli_put_escaped(stderr, e->path, e->path_len);
	fprintf(stderr, ": %s\n", what);
}

/* name_entry for the fields of e the index lost (zn_reader_entry_lost), and what that means. */
static void name_lost(const struct zn_entry *e, unsigned lost, const char *then)
{
	char msg[160];
	zn_lost_message(lost, msg);
	snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s", then);
	name_entry(e, msg);
}

static zn_result sink_stdout(void *ctx, const void *data, size_t len)
{
	(void)ctx;
	if (!cli_write_all(1, data, len))
		return ZN_OK;
	stdout_err = errno ? errno : EIO;
	return ZN_ERR_IO;
}

/* extract -O: the selected regular files' contents, in path order, as tar -xO writes them;
 * with -v their names on stderr. Checked as cat checks them. Returns the exit status. */
static int extract_to_stdout(struct zn_reader *r, const char *path, const uint8_t *sel,
                             unsigned strip, int verbose)
{
	int rc = EXIT_OK;
	uint64_t n = zn_reader_count(r);
	for (uint64_t i = 0; i < n; i++) {
		struct zn_entry e;
		if (sel && !sel[i])
			continue;
		unsigned lost; /* its metadata is not written: a file that lost some is written */
		zn_result res = zn_reader_entry_lost(r, i, &e, &lost);
		if (res != ZN_OK) {
			cli_error("%s: entry %llu: %s", path, (unsigned long long)i, zn_result_message(res));
			rc = damage_first(rc, cli_exit_code(res));
			continue;
		}
		if (e.type != ZN_TYPE_FILE)
			continue; /* no content of its own, as in tar */
		if (lost) {
			name_lost(&e, lost, "");
			rc = damage_first(rc, EXIT_DAMAGED);
		}
		unsigned parts = 1;
		for (size_t k = 0; k < e.path_len; k++)
			parts += e.path[k] == '/';
		if (parts <= strip)
			continue; /* --strip-components leaves it out, as tar does */
		if (verbose) {
			cli_put_escaped(stderr, e.path, e.path_len);
			fputc('\n', stderr);
		}
		stdout_err = 0;
		res = zn_reader_read_entry(r, i, sink_stdout, NULL);
		if (res == ZN_OK)
			continue;
		if (stdout_err) {
			cli_error("write error on standard output: %s", strerror(stdout_err));
			return damage_first(rc, EXIT_SYSTEM);
		}
		name_entry(&e, zn_result_message(res)); /* as the extractor names it */
		rc = damage_first(rc, cli_exit_code(res));
	}
	return rc;
}

/* The options of a command whose only one is -h/--help (cat, info), up to optind. Returns -1 to
 * go on, else the exit status (help printed, or a usage error named). */
static int help_only(const char *cmd, int argc, char **argv, const char *optstring,
                     const char *help)
{
	static const struct option lo[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, optstring, lo, NULL)) != -1) {
		if (c != 'h')
			return cli_option_error(cmd, c, argv);
		fputs(help, stdout);
		return EXIT_OK;
	}
	return -1;
}

int cmd_cat(int argc, char **argv)
{
	/* Options come before ARCHIVE ('+': getopt stops at it); what follows is PATHs, even one
	 * that starts with '-'. "--" may also come before the PATHs. */
	int rc = help_only("cat", argc, argv, "+:h", cat_help);
	if (rc >= 0)
		return rc;
	int first = optind, ended = optind > 1 && !strcmp(argv[optind - 1], "--");
	const char *path = first < argc ? argv[first++] : NULL;
	if (!ended && first < argc && !strcmp(argv[first], "--"))
		first++;
	if (!path || first >= argc)
		return cli_usage_error("cat", "expected ARCHIVE PATH...");
	struct zn_reader *r;
	zn_result res = open_reader(path, &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	rc = EXIT_OK;
	for (int i = first; i < argc; i++) {
		/* Messages name the argument as given; the lookup uses its normal form. A trailing
		 * '/' names a directory, which cat refuses anyway, as cat(1) does "a/". */
		const char *arg = argv[i];
		size_t alen = strlen(arg);
		char *name = strdup(arg);
		if (!name) {
			cli_error("out of memory");
			rc = EXIT_SYSTEM;
			break;
		}
		cli_normalize_path(name);
		uint64_t idx;
		res = zn_reader_find(r, name, strlen(name), &idx);
		free(name);
		stdout_err = 0;
		if (res == ZN_OK && alen && arg[alen - 1] == '/')
			res = ZN_ERR_INVALID_ARG;
		if (res == ZN_OK)
			res = zn_reader_read_entry(r, idx, sink_stdout, NULL);
		if (res == ZN_OK)
			continue;
		if (stdout_err) { /* our own output failed, not the archive */
			cli_error("write error on standard output: %s", strerror(stdout_err));
			rc = damage_first(rc, EXIT_SYSTEM);
			break;
		}
		if (res == ZN_ERR_NOT_FOUND)
			cli_error("%s: not found in archive", argv[i]);
		else if (res == ZN_ERR_INVALID_ARG) {
			/* Worded as cat(1) words them; the type read only now, and alone: the
			 * whole row decodes the index's compressed columns (10 ms for 100,000
			 * entries). */
			int type;
			int dir =
			        zn_reader_entry_type(r, idx, &type) == ZN_OK && type == ZN_TYPE_DIR;
			cli_error("%s: %s", argv[i],
			          dir ? "is a directory"
			              : alen && arg[alen - 1] == '/' ? "not a directory"
			                                             : "not a regular file");
		} else {
			/* A file whose digest the index lost cannot be checked: say so. */
			struct zn_entry e;
			unsigned lost = 0;
			char msg[96];
			if (res == ZN_ERR_CORRUPT &&
			    zn_reader_entry_lost(r, idx, &e, &lost) == ZN_OK && lost)
				zn_lost_message(lost, msg);
			cli_error("%s: %s", argv[i], lost ? msg : zn_result_message(res));
		}
		int code = res == ZN_ERR_INVALID_ARG ? EXIT_DAMAGED : cli_exit_code(res);
		rc = damage_first(rc, code);
		if (res == ZN_ERR_IO)
			break;
	}
	zn_reader_close(r);
	return rc;
}

/* ---- info ------------------------------------------------------------------------------------ */

#define S(n) ((n) == 1 ? "" : "s")

/* ---- diff ------------------------------------------------------------------------------------ */

static const char diff_help[] =
	"Usage: znippy diff ARCHIVE [-C DIR] [PATTERN...]\n"
	"Compare the archive with the files under DIR (default: the current directory), as tar -d\n"
	"does: for each entry (or each PATTERN selects), the file's type, size, contents, mode,\n"
	"owner ids, modification time (of regular files), symlink target and hardlink, each\n"
	"difference named on standard output (\"PATH: Size differs\"). Contents are compared\n"
	"byte for byte with the archive's, which is checked on the way; a symlink's target and a\n"
	"hardlink's link only are compared, as tar does. A file that cannot be read is an error,\n"
	"not a difference.\n"
	"\n"
	"  -C, --directory DIR   compare with the files under DIR (a second -C is relative to\n"
	"                        the one before, as tar's)\n"
	"  -h, --help            this help\n"
	"\n" STDIN_HELP
	"Exit status: 0 no difference, 1 differences (as diff(1); or damaged or invalid input),\n"
	"2 usage error, 3 I/O or system error.\n";

/* Compares an entry's bytes, as the reader hands them over, with a file's. */
struct cmp_sink {
	int fd;
	int differ; /* the file's bytes are not the archive's (or it ended earlier) */
	uint8_t buf[1 << 16];
};

static zn_result cmp_file(void *ctx, const void *data, size_t len)
{
	struct cmp_sink *c = ctx;
	const uint8_t *p = data;
	while (len) {
		size_t want = len < sizeof(c->buf) ? len : sizeof(c->buf);
		ssize_t n = read(c->fd, c->buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || memcmp(c->buf, p, (size_t)n)) {
			c->differ = 1;
			return ZN_ERR_CANCELED; /* no need to read on */
		}
		p += n;
		len -= (size_t)n;
	}
	return ZN_OK;
}

static void say_differs(const struct zn_entry *e, const char *what)
{
	cli_put_escaped(stdout, e->path, e->path_len);
	printf(": %s\n", what);
}

/* The directory that holds a stored path, below DIR, each component opened without following
 * a symlink (paths of any length; nothing outside DIR). The last one is kept for the next
 * entry, which is mostly its sibling. */
struct diff_dirs {
	int root, fd; /* fd: the directory of path[0..len), -1 none */
	char *path;
	size_t len;
};

static int parent_dir(struct diff_dirs *d, const char *p, size_t n, const char **base, char *buf)
{
	size_t slash = n;
	while (slash && p[slash - 1] != '/')
		slash--;
	size_t plen = slash ? slash - 1 : 0;
	if (n - slash >= 256) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, p + slash, n - slash); /* buf: 256 bytes */
	buf[n - slash] = 0;
	*base = buf;
	if (d->fd >= 0 && d->len == plen && !memcmp(d->path, p, plen))
		return d->fd;
	if (d->fd >= 0 && d->fd != d->root)
		close(d->fd);
	d->fd = -1;
	char *np = realloc(d->path, plen + 1);
	if (!np)
		return -1;
	d->path = np;
	memcpy(d->path, p, plen);
	d->len = plen;
	int fd = d->root;
	for (size_t at = 0; at < plen;) {
		size_t end = at;
		while (end < plen && p[end] != '/')
			end++;
		char comp[256];
		if (end - at >= sizeof(comp)) {
			errno = ENAMETOOLONG;
			fd = -1;
		} else {
			memcpy(comp, p + at, end - at);
			comp[end - at] = 0;
			int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int err = errno;
			if (fd != d->root)
				close(fd);
			errno = err;
			fd = nfd;
		}
		if (fd < 0)
			return -1;
		at = end + 1;
	}
	return d->fd = fd;
}

/* The lookups that found nothing there (what is missing, or a file or symlink where the archive
 * has a directory) are differences; others (no permission, I/O) are errors. */
static int missing_errno(int e)
{
	return e == ENOENT || e == ENOTDIR || e == ELOOP;
}

static void diff_error(const struct zn_entry *e, const char *what, int err)
{
	char msg[160];
	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err));
	name_entry(e, msg);
}

/* One entry against what is at its path below DIR. Returns 1 if they differ, 0 if not, or a
 * negative exit status for an error (named). */
static int diff_entry(struct zn_reader *r, uint64_t i, const struct zn_entry *e, unsigned lost,
                      struct diff_dirs *dirs, struct diff_dirs *tdirs, char *target)
{
	struct stat st;
	char base[256], tbase_buf[256];
	const char *name, *tname;
	int pfd = parent_dir(dirs, e->path, e->path_len, &name, base);
	if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!missing_errno(errno)) {
			diff_error(e, "cannot stat", errno);
			return -EXIT_SYSTEM;
		}
		char msg[160];
		snprintf(msg, sizeof(msg), "Warning: Cannot stat: %s",
		         strerror(errno == ENOENT ? ENOENT : ENOTDIR));
		say_differs(e, msg);
		return 1;
	}
	int want = e->type == ZN_TYPE_DIR ? S_IFDIR : e->type == ZN_TYPE_SYMLINK ? S_IFLNK : S_IFREG;
	if ((st.st_mode & S_IFMT) != (mode_t)want) {
		say_differs(e, "File type differs");
		return 1;
	}
	if (e->type == ZN_TYPE_HARDLINK) { /* as tar: the link only (its content is its target's) */
		struct stat ts;
		int tfd = parent_dir(tdirs, e->link, e->link_len, &tname, tbase_buf);
		if (tfd < 0 || fstatat(tfd, tname, &ts, AT_SYMLINK_NOFOLLOW) ||
		    ts.st_ino != st.st_ino || ts.st_dev != st.st_dev) {
			cli_put_escaped(stdout, e->path, e->path_len);
			fputs(": Not linked to ", stdout);
			cli_put_escaped(stdout, e->link, e->link_len);
			putchar('\n');
			return 1;
		}
		return 0;
	}
	int differ = 0;
	if (e->type == ZN_TYPE_SYMLINK) { /* its target; a symlink's owner and time are not compared */
		ssize_t n = readlinkat(pfd, name, target, 4096);
		if (n < 0 || (size_t)n != e->link_len || memcmp(target, e->link, e->link_len)) {
			say_differs(e, "Symlink differs");
			differ = 1;
		}
		return differ;
	}
	if (!(lost & ZN_LOST_MODE) && (st.st_mode & 07777) != (e->mode & 07777)) {
		say_differs(e, "Mode differs");
		differ = 1;
	}
	if (!(lost & ZN_LOST_OWNER) && st.st_uid != e->uid) {
		say_differs(e, "Uid differs");
		differ = 1;
	}
	if (!(lost & ZN_LOST_OWNER) && st.st_gid != e->gid) {
		say_differs(e, "Gid differs");
		differ = 1;
	}
	int64_t ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (e->type == ZN_TYPE_FILE && !(lost & ZN_LOST_MTIME) && ns != e->mtime_ns) {
		say_differs(e, "Mod time differs");
		differ = 1;
	}
	if (e->type != ZN_TYPE_FILE)
		return differ;
	if ((uint64_t)st.st_size != e->size) {
		say_differs(e, "Size differs");
		return 1;
	}
	static struct cmp_sink c;
	c.differ = 0;
	c.fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (c.fd < 0) {
		diff_error(e, "cannot open", errno);
		return -EXIT_SYSTEM;
	}
	zn_result res = zn_reader_read_entry(r, i, cmp_file, &c);
	close(c.fd);
	if (c.differ) {
		say_differs(e, "Contents differ");
		return 1;
	}
	if (res != ZN_OK) { /* the archive's side: damaged */
		name_entry(e, zn_result_message(res));
		return -cli_exit_code(res);
	}
	return differ;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option lo[] = {
		{"directory", required_argument, 0, 'C'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	const char *dir = ".";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":C:h", lo, NULL)) != -1) {
		switch (c) {
		case 'C': {
			int rc = take_dir("diff", &dir, optarg);
			if (rc)
				return rc;
			break;
		}
		case 'h': fputs(diff_help, stdout); return EXIT_OK;
		default: return cli_option_error("diff", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("diff", "missing ARCHIVE");
	const char *path = argv[optind++];
	int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		cli_error("%s: %s", dir, strerror(errno));
		return EXIT_SYSTEM;
	}
	struct zn_reader *r;
	zn_result res = open_reader(path, &r);
	if (res != ZN_OK) {
		close(dirfd);
		return cli_exit_code(res);
	}
	uint64_t n = zn_reader_count(r);
	uint8_t *sel = NULL;
	int missing = 0, rc = EXIT_OK;
	if (optind < argc) {
		sel = calloc(n + 1, 1);
		missing = select_entries(r, argv + optind, argc - optind, sel, NULL);
	}
	struct diff_dirs dirs = {dirfd, -1, NULL, 0}, tdirs = {dirfd, -1, NULL, 0};
	static char target[4097];
	for (uint64_t i = 0; missing >= 0 && i < n; i++) {
		struct zn_entry e;
		if (sel && !sel[i])
			continue;
		unsigned lost; /* what the damaged index lost is not compared */
		if ((res = zn_reader_entry_lost(r, i, &e, &lost)) != ZN_OK) {
			cli_error("%s: entry %llu: %s", path, (unsigned long long)i,
			          zn_result_message(res));
			rc = worse(rc, EXIT_DAMAGED);
			continue;
		}
		if (lost) {
			name_lost(&e, lost, ", so it is not compared");
			rc = worse(rc, EXIT_DAMAGED);
		}
		/* Nothing outside DIR is looked at: what the extractor would refuse is named. */
		if (!zn_path_is_safe(e.path, e.path_len) ||
		    (e.type == ZN_TYPE_HARDLINK && !zn_path_is_safe(e.link, e.link_len))) {
			name_entry(&e, "unsafe path in the archive; not compared");
			rc = worse(rc, EXIT_DAMAGED);
			continue;
		}
		int d = diff_entry(r, i, &e, lost, &dirs, &tdirs, target);
		if (d < 0)
			rc = worse(rc, -d);
		else if (d && rc == EXIT_OK)
			rc = EXIT_DAMAGED; /* 1: differences */
	}
	if (missing < 0)
		rc = EXIT_SYSTEM;
	else if (missing && rc == EXIT_OK)
		rc = EXIT_DAMAGED;
	for (struct diff_dirs *d = &dirs; d; d = d == &dirs ? &tdirs : NULL) {
		if (d->fd >= 0 && d->fd != dirfd)
			close(d->fd);
		free(d->path);
	}
	free(sel);
	zn_reader_close(r);
	close(dirfd);
	if (fflush(stdout) || ferror(stdout)) {
		cli_error("write error on standard output: %s", strerror(errno));
		return EXIT_SYSTEM;
	}
	return rc;
}

static const char info_help[] =
	"Usage: znippy info ARCHIVE\n"
	"Entry counts, sizes, ratio, codec and level, chunk size, index size. Every page of the\n"
	"index is checked (not the data blocks: that is verify's work); a damaged one is named on\n"
	"stderr, after the summary, and leaves exit status 1.\n"
	"\n"
	"  -h, --help            this help\n"
	"\n" STDIN_HELP EXIT_CODES_HELP;

int cmd_info(int argc, char **argv)
{
	int rc = help_only("info", argc, argv, ":h", info_help);
	if (rc >= 0)
		return rc;
	if (argc - optind != 1)
		return cli_usage_error("info", "expected exactly one ARCHIVE");
	struct zn_reader *r;
	zn_result res = open_reader(argv[optind], &r);
	if (res != ZN_OK)
		return cli_exit_code(res);
	struct zn_archive_info in;
	zn_reader_info(r, &in);
	uint64_t bad_pages = zn_reader_index_damage(r);
	zn_reader_close(r);
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
	printf("archive bytes:    %llu\n", (unsigned long long)in.archive_bytes);
	if (in.content_bytes)
		printf("ratio:            %.2f%% of content\n",
		       100.0 * (double)in.archive_bytes / (double)in.content_bytes);
	else
		printf("ratio:            n/a (no content)\n");
	printf("codec:            zstd level %d (blocks that do not shrink are stored)\n", in.level);
	printf("blocks:           %llu (%llu stored), %llu bytes\n", (unsigned long long)in.blocks,
	       (unsigned long long)in.stored_blocks, (unsigned long long)in.compressed_bytes);
	printf("chunk size:       %llu\n", (unsigned long long)in.chunk_size);
	printf("index bytes:      %llu\n", (unsigned long long)in.index_bytes);
	printf("digest:           %s\n", in.digest == ZN_DIGEST_SHA256 ? "sha256" : "none");
	if (bad_pages) {
		cli_error("%s: index damaged: %llu of its %llu pages do not match their checksums; "
		          "the counts above are of the rows that can be read (run verify)",
		          argv[optind], (unsigned long long)bad_pages,
		          (unsigned long long)((in.index_bytes + 4095) / 4096));
		return EXIT_DAMAGED;
	}
	return EXIT_OK;
}
