/* cmd_gunzip.c - `znippy gunzip` and `znippy zcat`: gzip's conventions on znippy's decoder. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"

static const char gunzip_help[] =
        "Usage: znippy gunzip [-c] [-k] [-f] [-t] [-q] [-o OUT] [FILE...]\n"
        "       znippy zcat [FILE...]          (the same as gunzip -c)\n"
        "Decompress gzip files. FILE.gz (or FILE.tgz, FILE.z) becomes FILE (FILE.tar), with the\n"
        "mode and modification time of FILE.gz, which is then removed. With no FILE, or when FILE\n"
        "is -, read standard input and write standard output. Several gzip members in a row are\n"
        "decoded as one stream; zero bytes after the last are ignored, other trailing bytes give "
        "a\n"
        "warning.\n"
        "  -c, --stdout       write to standard output, keep the input files\n"
        "  -k, --keep         keep the input files\n"
        "  -f, --force        overwrite existing output files\n"
        "  -t, --test         check integrity (CRC-32, length) only, write nothing\n"
        "  -o, --output OUT   write all output to OUT\n"
        "  -q, --quiet        no warnings\n"
        "  -h, --help         this help\n" EXIT_CODES_HELP;

struct opts {
	int to_stdout, keep, force, test;
	const char *out_path;
	int out_fd; /* -o: opened once */
};

/* Describe a decoding fault: "bad stream header (at input byte 0)". */
static void report(const char *name, zn_result r, uint64_t in_pos)
{
	cli_error("%s: %s (at input byte %llu)", name, zn_result_message(r),
	          (unsigned long long)in_pos);
}

/* Decode one gzip stream from `in_fd` to `out_fd` (-1: discard). A regular file is mapped and
 * decoded in place; anything else is read in 1 MiB pieces. Returns an exit code. */
static int decode_fd(struct zn_inflater *d, int in_fd, int out_fd, const char *name,
                     const char *out_name)
{
	struct stat st;
	uint8_t *map = NULL, *buf = NULL;
	size_t map_len = 0, buf_cap = 1 << 20, have = 0, pos = 0;
	int eof = 0, rc = EXIT_OK;
	zn_result r = zn_inflate_stream_reset(d);
	if (r != ZN_OK) {
		cli_error("%s: %s", name, zn_result_message(r));
		return cli_exit_code(r);
	}
	if (fstat(in_fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		map_len = (size_t)st.st_size;
		map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, in_fd, 0);
		if (map == MAP_FAILED)
			map = NULL;
		else
			madvise(map, map_len, MADV_SEQUENTIAL);
	}
	if (map) {
		have = map_len;
		eof = 1;
	} else {
		buf = malloc(buf_cap);
		if (!buf) {
			cli_error("%s: out of memory", name);
			return EXIT_SYSTEM;
		}
	}
	for (;;) {
		const uint8_t *in = map ? map : buf;
		if (!map && pos == have && !eof) {
			ssize_t n = read(in_fd, buf, buf_cap);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				cli_error("%s: read error: %s", name, strerror(errno));
				rc = EXIT_SYSTEM;
				break;
			}
			have = (size_t)n, pos = 0;
			eof = n == 0;
		}
		size_t used, olen;
		const void *o;
		int done;
		r = zn_inflate_stream(d, in + pos, have - pos, eof, &used, &o, &olen, &done);
		pos += used;
		if (olen && out_fd >= 0 && cli_write_all(out_fd, o, olen)) {
			cli_error("%s: write error: %s", out_name, strerror(errno));
			rc = EXIT_SYSTEM;
			break;
		}
		if (r == ZN_ERR_TRAILING_GARBAGE) {
			cli_warn("%s: decompression OK, trailing garbage ignored", name);
			break;
		}
		if (r != ZN_OK) {
			uint64_t at;
			zn_inflate_stream_position(d, &at, NULL);
			report(name, r, at);
			rc = cli_exit_code(r);
			break;
		}
		if (done)
			break;
	}
	if (map)
		munmap(map, map_len);
	free(buf);
	return rc;
}

/* FILE.gz -> FILE; NULL for an unknown suffix. */
static char *output_name(const char *in)
{
	static const struct {
		const char *from, *to;
	} sfx[] = {{".gz", ""}, {".tgz", ".tar"}, {".taz", ".tar"}, {".z", ""},
	           {"-gz", ""}, {"_z", ""},       {".Z", ""}};
	size_t n = strlen(in);
	const char *base = strrchr(in, '/');
	base = base ? base + 1 : in;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t f = strlen(sfx[i].from);
		if (n > f && strcmp(in + n - f, sfx[i].from) == 0 && (size_t)(in + n - base) > f) {
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

static int do_file(struct zn_inflater *d, const char *path, const struct opts *op)
{
	if (!strcmp(path, "-")) {
		if (isatty(0) && !op->force) {
			cli_error("compressed data not read from a terminal; use -f to force");
			return EXIT_USAGE;
		}
		int out_fd = op->test ? -1 : op->out_fd >= 0 ? op->out_fd : 1;
		return decode_fd(d, 0, out_fd, "(stdin)", op->out_path ? op->out_path : "(stdout)");
	}
	int in_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in_fd < 0) {
		cli_error("%s: %s", path, strerror(errno));
		return errno == ENOENT ? EXIT_DAMAGED : EXIT_SYSTEM;
	}
	struct stat st;
	if (fstat(in_fd, &st) || S_ISDIR(st.st_mode)) {
		cli_error("%s: is a directory -- ignored", path);
		close(in_fd);
		return EXIT_DAMAGED;
	}
	if (op->test || op->to_stdout || op->out_fd >= 0) {
		int out_fd = op->test ? -1 : op->out_fd >= 0 ? op->out_fd : 1;
		int rc =
		        decode_fd(d, in_fd, out_fd, path, op->out_path ? op->out_path : "(stdout)");
		close(in_fd);
		return rc;
	}
	char *out_path = output_name(path);
	if (!out_path) {
		cli_error("%s: unknown suffix -- ignored", path);
		close(in_fd);
		return EXIT_DAMAGED;
	}
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (op->force ? O_TRUNC : O_EXCL);
	int out_fd = open(out_path, flags, 0600);
	if (out_fd < 0) {
		if (errno == EEXIST)
			cli_error("%s: already exists; use -f to overwrite", out_path);
		else
			cli_error("%s: %s", out_path, strerror(errno));
		free(out_path);
		close(in_fd);
		return errno == EEXIST ? EXIT_DAMAGED : EXIT_SYSTEM;
	}
	int rc = decode_fd(d, in_fd, out_fd, path, out_path);
	if (rc == EXIT_OK) {
		/* As gzip does: the output takes the input's mode and times. */
		fchmod(out_fd, st.st_mode & 07777);
		struct timespec ts[2] = {st.st_atim, st.st_mtim};
		futimens(out_fd, ts);
	}
	if (close(out_fd) && rc == EXIT_OK) {
		cli_error("%s: %s", out_path, strerror(errno));
		rc = EXIT_SYSTEM;
	}
	close(in_fd);
	if (rc != EXIT_OK)
		unlink(out_path); /* never leave a partial file behind */
	else if (!op->keep && unlink(path))
		cli_warn("%s: cannot remove: %s", path, strerror(errno));
	free(out_path);
	return rc;
}

int cmd_gunzip(int argc, char **argv, int zcat)
{
	struct opts op = {.to_stdout = zcat, .out_fd = -1};
	const char *cmd = zcat ? "zcat" : "gunzip";
	int nfiles = 0, only_files = 0;
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	if (!files)
		return EXIT_SYSTEM;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_files || a[0] != '-' || !strcmp(a, "-")) {
			files[nfiles++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			only_files = 1;
		} else if (!strcmp(a, "--help")) {
			fputs(gunzip_help, stdout);
			free(files);
			return EXIT_OK;
		} else if (!strcmp(a, "--stdout") || !strcmp(a, "--to-stdout")) {
			op.to_stdout = 1;
		} else if (!strcmp(a, "--keep")) {
			op.keep = 1;
		} else if (!strcmp(a, "--force")) {
			op.force = 1;
		} else if (!strcmp(a, "--test")) {
			op.test = 1;
		} else if (!strcmp(a, "--quiet")) {
			cli_quiet = 1;
		} else if (!strcmp(a, "--decompress")) {
		} else if (!strcmp(a, "--output") || !strncmp(a, "--output=", 9)) {
			if (a[8] == '=')
				op.out_path = a + 9;
			else if (i + 1 < argc)
				op.out_path = argv[++i];
			else
				goto missing;
		} else if (a[1] == '-') {
			free(files);
			return cli_usage_error(cmd, "unknown option '%s'", a);
		} else {
			for (const char *p = a + 1; *p; p++) {
				switch (*p) {
				case 'c':
					op.to_stdout = 1;
					break;
				case 'k':
					op.keep = 1;
					break;
				case 'f':
					op.force = 1;
					break;
				case 't':
					op.test = 1;
					break;
				case 'q':
					cli_quiet = 1;
					break;
				case 'd':
					break; /* gzip -d compatibility */
				case 'h':
					fputs(gunzip_help, stdout);
					free(files);
					return EXIT_OK;
				case 'o':
					if (p[1])
						op.out_path = p + 1;
					else if (i + 1 < argc)
						op.out_path = argv[++i];
					else
						goto missing;
					p = " "; /* the rest of the word was the argument */
					break;
				default:
					free(files);
					return cli_usage_error(cmd, "unknown option '-%c'", *p);
				}
				if (*p == ' ')
					break;
			}
		}
	}
	if (nfiles == 0)
		files[nfiles++] = "-";
	if (op.out_path && !op.test) {
		op.out_fd =
		        open(op.out_path,
		             O_WRONLY | O_CREAT | O_CLOEXEC | (op.force ? O_TRUNC : O_EXCL), 0666);
		if (op.out_fd < 0) {
			if (errno == EEXIST)
				cli_error("%s: already exists; use -f to overwrite", op.out_path);
			else
				cli_error("%s: %s", op.out_path, strerror(errno));
			free(files);
			return errno == EEXIST ? EXIT_DAMAGED : EXIT_SYSTEM;
		}
	}
	struct zn_inflater *d;
	zn_result r = zn_inflater_new(&d, ZN_FORMAT_GZIP);
	if (r != ZN_OK) {
		cli_error("%s", zn_result_message(r));
		free(files);
		return cli_exit_code(r);
	}
	int rc = EXIT_OK;
	for (int i = 0; i < nfiles; i++) {
		int frc = do_file(d, files[i], &op);
		if (frc > rc)
			rc = frc;
	}
	zn_inflater_free(d);
	if (op.out_fd >= 0 && close(op.out_fd) && rc == EXIT_OK) {
		cli_error("%s: %s", op.out_path, strerror(errno));
		rc = EXIT_SYSTEM;
	}
	free(files);
	return rc;
missing:
	free(files);
	return cli_usage_error(cmd, "option requires an argument -- 'o'");
}
