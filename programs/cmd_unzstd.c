/* SPDX-License-Identifier: MIT */
/* cmd_unzstd.c - `znippy unzstd` and `znippy zstdcat`: zstd -d's conventions on znippy's decoder.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Output files (cli_out): an existing output is refused as damaged input is (1), a failure to
 * make one is a system error (3). */
static const struct cli_out_codes zs_codes = {.refused = EXIT_DAMAGED, .failed = EXIT_SYSTEM};

/* clang-format off */
static const char unzstd_help[] =
	"Usage: znippy unzstd [-c] [-k|--rm] [-f] [-t] [-v] [-q] [-o OUT] [-D DICT]\n"
	"                     [--long[=N]] [--memory=SIZE] [FILE...]\n"
	"       znippy zstdcat [FILE...]       (the same as unzstd -c)\n"
	"Decompress zstd files with znippy's own decoder (RFC 8878), as zstd -d does: FILE.zst\n"
	"becomes FILE (FILE.tzst: FILE.tar), with the mode and times of FILE.zst, which is\n"
	"kept unless --rm. With no FILE, or when FILE is -, read standard input and write\n"
	"standard output. Several frames in a row are decoded one after another, skippable\n"
	"frames passed over; every content checksum is checked. Output files are written\n"
	"under a temporary name and renamed into place once every frame checked out, so a\n"
	"damaged or cut input leaves no output file (standard output keeps what was written\n"
	"before the damage was found).\n"
	"  -c, --stdout       write to standard output\n"
	"  -d, --decompress, --uncompress\n"
	"                     accepted, as zstd -d (decompressing is all this does)\n"
	"  -k, --keep         keep the input files (the default, as zstd)\n"
	"      --rm           remove each input file once its output is complete (not with\n"
	"                     -c or -t)\n"
	"  -f, --force        overwrite existing output files; read standard input from a\n"
	"                     terminal; decode inputs that are symlinks\n"
	"  -t, --test         check integrity only, write nothing\n"
	"  -o OUT             write all output to OUT ('-': standard output)\n"
	"  -D DICT            decode with dictionary DICT (zstd's format, or raw content)\n"
	"      --long[=N]     accept windows up to 2^N bytes (N 10..31, default 27), for\n"
	"                     zstd --long=N output\n"
	"  -M, --memory SIZE  accept windows up to SIZE bytes (K, M, G: KiB, MiB, GiB;\n"
	"                     default 128M, as zstd)\n"
	"  -T, --threads N    accepted, as zstd -T (decoding takes one thread)\n"
	"  -v, --verbose      name each file and its decoded size on standard error\n"
	"  -q, --quiet        no messages but errors\n"
	"  -V, --version      print the version\n"
	"  -h, --help         this help\n"
	"Without -q, each file decoded to a file (or tested) is named on standard error with\n"
	"its decoded size, as zstd does; -v also for standard output.\n"
	"Exit status: 0 success, 1 damaged or invalid input (not zstd, cut short, a bad\n"
	"checksum, trailing bytes, a window over the limit, a wrong dictionary) or a FILE or\n"
	"output refused (an unknown suffix, an existing output without -f), 2 usage error,\n"
	"3 I/O or system error. zstd exits with 1 for all of these.\n";
/* clang-format on */

struct opts {
	int to_stdout, rm, force, test, verbose;
	const char *out_path;
	struct cli_out *out; /* -o: opened once, renamed into place at the end */
	uint64_t memory;     /* --memory; 0: none given */
	unsigned long_log;   /* --long=N; 0: none given */
	const char *dict;    /* -D */
};

static int write_failed;      /* the last decode_fd's output failed (not its input) */
static int shared_out_failed; /* standard output or -o failed: the other FILEs are not tried */
static uint64_t last_out;     /* what the last decode_fd wrote */
static uint64_t memory_limit = ZN_ZSTD_MEMORY_DEFAULT;

/* Describe a decoding fault, as zstd names them. */
static void report(const char *name, zn_result r, uint64_t in_pos)
{
	if (r == ZN_ERR_BAD_HEADER && in_pos == 0)
		cli_error("%s: unknown header: not in zstd format", name);
	else if (r == ZN_ERR_TRAILING_GARBAGE)
		cli_error("%s: unknown header after the last frame (at input byte %llu)", name,
		          (unsigned long long)in_pos);
	else if (r == ZN_ERR_TRUNCATED)
		cli_error("%s: unexpected end of file", name);
	else if (r == ZN_ERR_LIMIT)
		cli_error("%s: a frame's window is larger than the limit of %llu bytes; "
		          "use --long=N or --memory=SIZE",
		          name, (unsigned long long)memory_limit);
	else
		cli_error("%s: %s (at input byte %llu)", name, zn_result_message(r),
		          (unsigned long long)in_pos);
}

/* One decode_fd's input: a regular file mapped whole (from its offset: standard input may be a
 * file read in part), anything else read in pieces into buf. */
struct source {
	int fd;
	const char *name;
	uint8_t *map, *buf;
	size_t map_len, cap, have, pos, released;
	off_t start;
	int eof;
	uint64_t seen; /* input bytes met, to refuse an empty input as zstd does */
};

/* Returns an exit code. */
static int open_source(struct source *s)
{
	struct stat st;
	if (fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (s->start = lseek(s->fd, 0, SEEK_CUR)) >= 0 && st.st_size > s->start) {
		s->map_len = (size_t)st.st_size;
		s->map = mmap(NULL, s->map_len, PROT_READ, MAP_PRIVATE, s->fd, 0);
		if (s->map == MAP_FAILED) {
			s->map = NULL;
		} else {
			madvise(s->map, s->map_len, MADV_SEQUENTIAL);
			s->have = s->map_len;
			s->pos = s->released = (size_t)s->start;
			s->released &= ~(size_t)4095;
			s->seen = s->map_len - (size_t)s->start;
			s->eof = 1;
			return EXIT_OK;
		}
	}
	s->start = 0;
	s->cap = 1 << 20;
	if (!(s->buf = malloc(s->cap))) {
		cli_error("%s: out of memory", s->name);
		return EXIT_SYSTEM;
	}
	return EXIT_OK;
}

/* Reads the next piece of a piped input (what was at hand is used up). Returns -1 to go on, or
 * an exit code. */
static int read_more(struct source *s)
{
	s->have = s->pos = 0;
	ssize_t n = cli_read_input(s->fd, s->buf, s->cap);
	if (n < 0) {
		cli_error("%s: read error: %s", s->name, strerror(errno));
		return EXIT_SYSTEM;
	}
	s->have = (size_t)n;
	s->seen += (size_t)n;
	s->eof = n == 0;
	return -1;
}

/* One call of the decoder on the input at hand, its output written to out_fd (-1: none).
 * Returns -1 to go on, or the exit code the input ends with. */
static int decode_step(struct zn_zstd_decoder *d, struct source *s, int out_fd,
                       const char *out_name)
{
	const uint8_t *in = s->map ? s->map : s->buf;
	size_t used, olen;
	const void *o;
	int done;
	zn_result r =
	        zn_zstd_stream(d, in + s->pos, s->have - s->pos, s->eof, &used, &o, &olen, &done);
	s->pos += used;
	last_out += olen;
	if (s->map && s->pos - s->released >= (64u << 20)) {
		/* Input already decoded is not needed again: out of the process's memory. */
		size_t upto = s->pos & ~(size_t)((1u << 20) - 1);
		madvise(s->map + s->released, upto - s->released, MADV_DONTNEED);
		s->released = upto;
	}
	if (olen && out_fd >= 0 && cli_write_all(out_fd, o, olen)) {
		cli_error("%s: write error: %s", out_name, strerror(errno));
		write_failed = 1;
		return EXIT_SYSTEM;
	}
	if (r != ZN_OK) {
		uint64_t at;
		zn_zstd_stream_position(d, &at, NULL);
		report(s->name, r, at + (uint64_t)s->start);
		return cli_exit_code(r);
	}
	if (done && !s->seen) { /* as zstd: an empty input is no zstd data */
		report(s->name, ZN_ERR_TRUNCATED, 0);
		return EXIT_DAMAGED;
	}
	return done ? EXIT_OK : -1;
}

/* Decode the zstd frames of in_fd to out_fd (-1: discard). Returns an exit code. */
static int decode_fd(struct zn_zstd_decoder *d, int in_fd, int out_fd, const char *name,
                     const char *out_name)
{
	write_failed = 0;
	last_out = 0;
	struct source s = {.fd = in_fd, .name = name};
	zn_result r = zn_zstd_stream_reset(d);
	if (r != ZN_OK) {
		cli_error("%s: %s", name, zn_result_message(r));
		return cli_exit_code(r);
	}
	int rc = open_source(&s);
	if (rc == EXIT_OK)
		do
			rc = !s.map && !s.eof && s.pos == s.have
			             ? read_more(&s)
			             : decode_step(d, &s, out_fd, out_name);
		while (rc < 0);
	if (s.map) {
		munmap(s.map, s.map_len);
		lseek(in_fd, (off_t)s.pos, SEEK_SET); /* after what was decoded */
	}
	free(s.buf);
	return rc;
}

/* "NAME : SIZE bytes" on standard error, as zstd's summary line. */
static void say_done(const struct opts *op, const char *name, int to_stdout)
{
	if (!cli_quiet && (op->verbose || !to_stdout))
		fprintf(stderr, "%-20s: %llu bytes\n", name, (unsigned long long)last_out);
}

/* FILE.zst -> FILE, FILE.tzst -> FILE.tar; NULL for another suffix (or no memory). */
static char *output_name(const char *in)
{
	static const struct {
		const char *from, *to;
	} sfx[] = {{".zst", ""}, {".tzst", ".tar"}};
	size_t n = strlen(in);
	const char *base = strrchr(in, '/');
	base = base ? base + 1 : in;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t f = strlen(sfx[i].from);
		if (n > f && !strcmp(in + n - f, sfx[i].from) && (size_t)(in + n - base) > f) {
			char *o = malloc(n - f + strlen(sfx[i].to) + 1);
			if (!o)
				return NULL;
			memcpy(o, in, n - f);
			strcpy(o + n - f, sfx[i].to);
			return o;
		}
	}
	return NULL;
}

/* Standard input to standard output, -o, or nothing (-t). */
static int do_stdin(struct zn_zstd_decoder *d, const struct opts *op)
{
	if (isatty(0) && !op->force) {
		cli_error("compressed data not read from a terminal; use -f to force");
		return EXIT_USAGE;
	}
	int out_fd = op->test ? -1 : op->out ? op->out->fd : 1;
	int rc = decode_fd(d, 0, out_fd, "(stdin)", op->out_path ? op->out_path : "(stdout)");
	shared_out_failed |= write_failed;
	if (rc == EXIT_OK)
		say_done(op, "(stdin)", !op->test && !op->out);
	return rc;
}

/* An input to the shared output (standard output, -o) or to nothing (-t). */
static int decode_to_shared(struct zn_zstd_decoder *d, int in_fd, const char *name,
                            const struct opts *op)
{
	if (op->out && cli_out_is_input(op->out, in_fd)) {
		cli_error("%s: is the output file -- ignored", name);
		return EXIT_DAMAGED;
	}
	int out_fd = op->test ? -1 : op->out ? op->out->fd : 1;
	int rc = decode_fd(d, in_fd, out_fd, name, op->out_path ? op->out_path : "(stdout)");
	shared_out_failed |= write_failed;
	if (rc == EXIT_OK)
		say_done(op, name, !op->test && !op->out);
	return rc;
}

/* FILE.zst -> FILE beside it, which takes its owner (where allowed), mode and times; FILE.zst is
 * then removed with --rm. */
static int decode_in_place(struct zn_zstd_decoder *d, const char *path, int in_fd,
                           const struct stat *st, const struct opts *op)
{
	if (!S_ISREG(st->st_mode)) {
		cli_error("%s: is not a regular file -- ignored", path);
		return EXIT_DAMAGED;
	}
	char *out_name = output_name(path);
	if (!out_name) {
		cli_error("%s: unknown suffix (.zst or .tzst expected): name the output with -o "
		          "-- ignored",
		          path);
		return EXIT_DAMAGED;
	}
	struct cli_out out;
	int rc = cli_out_open(&out, AT_FDCWD, out_name, out_name, op->force, 0, &zs_codes);
	free(out_name);
	if (rc != EXIT_OK)
		return rc;
	rc = decode_fd(d, in_fd, out.fd, path, out.shown);
	if (rc == EXIT_OK) {
		(void)!fchown(out.fd, st->st_uid, st->st_gid);
		fchmod(out.fd, st->st_mode & 0777);
		struct timespec ts[2] = {st->st_atim, st->st_mtim};
		futimens(out.fd, ts);
	}
	rc = cli_out_close(&out, rc, op->force);
	if (rc == EXIT_OK)
		say_done(op, path, 0);
	if (rc == EXIT_OK && op->rm && unlink(path))
		cli_warn("%s: cannot remove: %s", path, strerror(errno));
	return rc;
}

static int do_file(struct zn_zstd_decoder *d, const char *path, const struct opts *op)
{
	if (!strcmp(path, "-"))
		return do_stdin(d, op);
	int in_place = !(op->test || op->to_stdout || op->out);
	/* O_NONBLOCK: a FIFO given to in-place decoding is refused, not waited on. Symlinks are
	 * not followed without -f, as zstd passes them over (zstd with exit status 0). */
	int in_fd = open(path, O_RDONLY | O_CLOEXEC |
	                               (in_place ? O_NONBLOCK | (op->force ? 0 : O_NOFOLLOW) : 0));
	if (in_fd < 0) {
		int err = errno;
		if (err == ELOOP)
			cli_error("%s: is a symbolic link -- ignored (use -f)", path);
		else
			cli_error("%s: %s", path, strerror(err));
		return err == ELOOP ? EXIT_DAMAGED : EXIT_SYSTEM;
	}
	struct stat st;
	int rc;
	if (fstat(in_fd, &st) || S_ISDIR(st.st_mode)) {
		cli_error("%s: is a directory -- ignored", path);
		rc = EXIT_DAMAGED;
	} else if (!in_place) {
		rc = decode_to_shared(d, in_fd, path, op);
	} else {
		rc = decode_in_place(d, path, in_fd, &st, op);
	}
	close(in_fd);
	return rc;
}

/* zstd's options. Read by hand (parse_unzstd_args), not by getopt: zstd takes options after
 * FILEs too, and -M, -T glued to their value. */
enum { OPT_RM = 1000, OPT_LONG };
static const char unzstd_shortopts[] = "cdkftqvo:D:M:T:hV";
static const struct option unzstd_options[] = {
        {"stdout", no_argument, 0, 'c'},
        {"decompress", no_argument, 0, 'd'},
        {"uncompress", no_argument, 0, 'd'},
        {"keep", no_argument, 0, 'k'},
        {"rm", no_argument, 0, OPT_RM},
        {"force", no_argument, 0, 'f'},
        {"test", no_argument, 0, 't'},
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},
        {"long", optional_argument, 0, OPT_LONG},
        {"memory", required_argument, 0, 'M'},
        {"threads", required_argument, 0, 'T'},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0},
};

/* zstd's sizes: a number, then K, M or G (KiB, MiB, GiB), which "B" or "iB" may follow. */
static int parse_memory(const char *s, uint64_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end += (end[1] == 'i' && end[2] == 'B') ? 3 : end[1] == 'B' ? 2 : 1;
	if (errno || *end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* One option, by its letter. Returns -1 to go on, or the exit status (help, version, usage). */
static int unzstd_option(struct opts *op, const char *cmd, int letter, const char *arg)
{
	uint64_t v;
	switch (letter) {
	case 'c':
		op->to_stdout = 1;
		break;
	case 'k':
		op->rm = 0;
		break;
	case OPT_RM:
		op->rm = 1;
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
	case 'o':
		op->out_path = arg;
		break;
	case 'D':
		op->dict = arg;
		break;
	case OPT_LONG:
		if (arg && cli_parse_uint(arg, 10, 31, &v))
			return cli_usage_error(cmd, "--long=N: N is 10 to 31, not '%s'", arg);
		op->long_log = arg ? (unsigned)v : 27;
		break;
	case 'M':
		if (parse_memory(arg, &op->memory))
			return cli_usage_error(cmd, "invalid memory limit '%s'", arg);
		break;
	case 'T':
		if (cli_parse_uint(arg, 0, UINT32_MAX, &v))
			return cli_usage_error(cmd, "invalid number of threads '%s'", arg);
		break;
	case 'h':
		fputs(unzstd_help, stdout);
		return EXIT_OK;
	case 'V':
		cli_print_version();
		return EXIT_OK;
	}
	return -1; /* and 'd', as zstd -d */
}

/* A long option ("--name" or "--name=VALUE"); a required value may be the next argument (*i then
 * moves on). Returns as unzstd_option. */
static int unzstd_long_option(void *opp, const char *cmd, int argc, char **argv, int *i)
{
	struct opts *op = opp;
	const char *a = argv[*i] + 2, *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);
	const struct option *o = unzstd_options;
	while (o->name && (strlen(o->name) != n || strncmp(o->name, a, n)))
		o++;
	if (!o->name || (eq && o->has_arg == no_argument))
		return cli_usage_error(cmd, "unknown option '%s'", argv[*i]);
	const char *arg = eq ? eq + 1 : NULL;
	if (o->has_arg == required_argument && !arg && *i + 1 >= argc)
		return cli_usage_error(cmd, "option '--%s' requires an argument", o->name);
	if (o->has_arg == required_argument && !arg)
		arg = argv[++*i];
	return unzstd_option(op, cmd, o->val, arg);
}

/* A group of short options ("-dcf", "-M10MB", "-T0", "-o OUT"). Returns as unzstd_option. */
static int unzstd_short_options(void *opp, const char *cmd, int argc, char **argv, int *i)
{
	struct opts *op = opp;
	for (const char *p = argv[*i] + 1; *p; p++) {
		const char *in = strchr(unzstd_shortopts, *p);
		if (!in || *p == ':')
			return cli_usage_error(cmd, "unknown option '-%c'", *p);
		if (in[1] != ':') {
			int rc = unzstd_option(op, cmd, *p, NULL);
			if (rc >= 0)
				return rc;
			continue;
		}
		/* The rest of the word is the value, or else the next argument. */
		if (!p[1] && *i + 1 >= argc)
			return cli_usage_error(cmd, "option requires an argument -- '%c'", *p);
		return unzstd_option(op, cmd, *p, p[1] ? p + 1 : argv[++*i]);
	}
	return -1;
}

/* The command line: options into *op, FILEs into files[*nfiles] in order. Returns -1 to go on,
 * or the exit status. */
static int parse_unzstd_args(int argc, char **argv, const char *cmd, struct opts *op, char **files,
                             int *nfiles)
{
	int rc = cli_decoder_args(argc, argv, cmd, op, unzstd_long_option, unzstd_short_options,
	                          files, nfiles);
	if (rc >= 0)
		return rc;
	if (op->out_path && !strcmp(op->out_path, "-")) { /* -o -: standard output, as -c */
		op->out_path = NULL;
		op->to_stdout = 1;
	}
	if (op->out_path && op->to_stdout)
		return cli_usage_error(cmd, "-c and -o OUT: choose one");
	if (op->to_stdout || op->test) /* as zstd: nothing is removed then */
		op->rm = 0;
	return -1;
}

/* -D DICT read whole and loaded into d. Returns an exit code. */
static int load_dictionary(struct zn_zstd_decoder *d, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		cli_error("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_SYSTEM;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (1 << 30)) {
		cli_error("%s: a dictionary must be a regular file of at most 1 GiB", path);
		close(fd);
		return EXIT_DAMAGED;
	}
	size_t len = (size_t)st.st_size, got = 0;
	uint8_t *buf = malloc(len ? len : 1);
	while (buf && got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		got += n > 0 ? (size_t)n : 0;
	}
	close(fd);
	zn_result r = !buf ? ZN_ERR_NOMEM : got < len ? ZN_ERR_IO : ZN_OK;
	if (r == ZN_OK)
		r = zn_zstd_set_dictionary(d, buf, len);
	free(buf);
	if (r != ZN_OK)
		cli_error("%s: %s", path,
		          r == ZN_ERR_CORRUPT ? "not a valid zstd dictionary"
		                              : zn_result_message(r));
	return r == ZN_OK ? EXIT_OK : cli_exit_code(r);
}

/* The decoder with -D, --long and --memory applied; NULL with *rc set. */
static struct zn_zstd_decoder *new_decoder(const struct opts *op, int *rc)
{
	struct zn_zstd_decoder *d;
	zn_result r = zn_zstd_decoder_new(&d);
	if (r != ZN_OK) {
		cli_error("%s", zn_result_message(r));
		*rc = cli_exit_code(r);
		return NULL;
	}
	/* As zstd: --memory first, else --long=N's window, else 128 MiB. */
	memory_limit = op->memory     ? op->memory
	               : op->long_log ? (uint64_t)1 << op->long_log
	                              : ZN_ZSTD_MEMORY_DEFAULT;
	zn_zstd_set_memory_limit(d, memory_limit);
	int drc = op->dict ? load_dictionary(d, op->dict) : EXIT_OK;
	if (drc != EXIT_OK) {
		*rc = drc;
		zn_zstd_decoder_free(d);
		return NULL;
	}
	return d;
}

static int run_unzstd(int argc, char **argv, int cat)
{
	struct opts op = {.to_stdout = cat};
	struct cli_out out;
	const char *cmd = cat ? "zstdcat" : "unzstd";
	int nfiles = 0;
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	if (!files)
		return EXIT_SYSTEM;
	int rc = parse_unzstd_args(argc, argv, cmd, &op, files, &nfiles);
	struct zn_zstd_decoder *d = rc < 0 ? new_decoder(&op, &rc) : NULL;
	if (d && op.out_path && !op.test) {
		rc = cli_out_open(&out, AT_FDCWD, op.out_path, op.out_path, op.force, 1, &zs_codes);
		op.out = rc == EXIT_OK ? &out : NULL;
		rc = rc == EXIT_OK ? -1 : rc;
	}
	if (d && rc < 0) {
		rc = EXIT_OK;
		for (int i = 0; i < nfiles && !shared_out_failed; i++)
			rc = cli_worse(rc, do_file(d, files[i], &op));
	}
	/* -o: the output is kept only if every input decoded completely, and only then are the
	 * inputs removed (--rm). */
	if (op.out)
		rc = cli_out_close(op.out, rc, op.force);
	for (int i = 0; op.out && op.rm && rc == EXIT_OK && i < nfiles; i++)
		if (strcmp(files[i], "-") && unlink(files[i]))
			cli_warn("%s: cannot remove: %s", files[i], strerror(errno));
	zn_zstd_decoder_free(d);
	free(files);
	return rc;
}

static int cmd_unzstd(int argc, char **argv)
{
	return run_unzstd(argc, argv, 0);
}

static int cmd_zstdcat(int argc, char **argv)
{
	return run_unzstd(argc, argv, 1);
}

const struct cli_command cli_cmd_unzstd = {"unzstd", "", cmd_unzstd, unzstd_shortopts,
                                           unzstd_options};
const struct cli_command cli_cmd_zstdcat = {"zstdcat", "", cmd_zstdcat, unzstd_shortopts,
                                            unzstd_options};
