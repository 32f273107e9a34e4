/* SPDX-License-Identifier: MIT */
/* cmd_gunzip.c - `znippy gunzip` and `znippy zcat`: gzip's conventions on znippy's decoder. */
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"

#define ZN_MIN_SZ(a, b) ((a) < (b) ? (a) : (b))

/* clang-format off */
static const char gunzip_help[] =
	"Usage: znippy gunzip [-c] [-k] [-f] [-t] [-l] [-v] [-q] [-n|-N] [-r] [-S SUF] [-o OUT]\n"
	"                     [-T N] [FILE...]\n"
	"       znippy zcat [FILE...]          (the same as gunzip -c)\n"
	"Decompress gzip files. FILE.gz (or .z, -gz, -z, _z, in any case; .tgz and .taz give\n"
	"FILE.tar) becomes FILE, with the mode (less set-id bits) and modification time of\n"
	"FILE.gz, which is then removed; a FILE that does not exist and has none of these\n"
	"suffixes is FILE with the first of them (-S SUF first) that exists. With no FILE, or\n"
	"when FILE is -, read standard input and write standard output. Several gzip members\n"
	"in a row are decoded as one stream; zero bytes after the last are ignored, other\n"
	"trailing bytes give a warning and exit status 2, as gzip's, and what was decoded is\n"
	"kept. Output files are written under a temporary name and renamed into place once the\n"
	"stream checked out, so no partial output is left (not even after a signal); only -f\n"
	"over a file in a directory this user may not write writes that file in place.\n"
	"Every FILE is decoded on N threads (-T), whatever made it: a block finder starts them\n"
	"in the middle of a single gzip member too; the output, the messages and the exit\n"
	"status are those of one thread, and each member's CRC-32 and length are checked.\n"
	"  -c, --stdout, --to-stdout\n"
	"                     write to standard output, keep the input files\n"
	"  -d, --decompress   accepted, as gzip -d (decompressing is all this does)\n"
	"  -k, --keep         keep the input files\n"
	"  -f, --force        overwrite existing output files; also decode inputs that are\n"
	"                     symlinks, have other links or set-id bits; with -c, copy input\n"
	"                     that is not gzip as it is (zcat -f, on one thread), and what\n"
	"                     follows the last member, zero padding included, as gzip does\n"
	"  -t, --test         check integrity (CRC-32, length) only, write nothing\n"
	"  -o, --output OUT   write all output to OUT ('-': standard output)\n"
	"  -l, --list         for each FILE (standard input: named stdout): compressed and\n"
	"                     uncompressed sizes and the ratio, as gzip -l, but decoded:\n"
	"                     exact past 4 GiB and for several members (gzip reads the last\n"
	"                     trailer only)\n"
	"  -r, --recursive    decode the files below each directory FILE whose names end\n"
	"                     in a suffix above (others are passed over, as by gzip -r);\n"
	"                     symlinks are not followed, nor a directory swapped for one\n"
	"                     while it is walked\n"
	"  -S, --suffix SUF   also take SUF as a gzip suffix, before the others\n"
	"  -N, --name         name the output as the header's stored name (its last part,\n"
	"                     beside FILE.gz) and give it the stored time, as gzip -N\n"
	"  -n, --no-name      the name from FILE.gz and its time (the default, as gzip)\n"
	"  -T, --threads N    decoding threads (default or 0: one per CPU, as nproc; more\n"
	"                     than " CLI_STR(ZN_THREADS_MAX) " count as " CLI_STR(ZN_THREADS_MAX) "); the calling thread checks and writes.\n"
	"                     -T1 decodes on the calling thread alone. Memory: at most\n"
	"                     (N + 2) x 25 MiB of decoded pieces in flight (more compressible\n"
	"                     streams get smaller pieces), a standard input's 1.3 MiB more\n"
	"                     per piece, and about 64 MiB of a FILE mapped at a time\n"
	"      --export-index IDX\n"
	"                     decode FILE (one regular file) once, checking it, and write an\n"
	"                     index of it to IDX: a checkpoint (32 KiB) about every 4 MiB of\n"
	"                     output; nothing else is written\n"
	"      --import-index IDX [--offset N] [--length N]\n"
	"                     write N bytes (default: to the end) of FILE's decoded stream from\n"
	"                     offset N on to standard output (-o OUT; nothing with -t),\n"
	"                     decoding from the checkpoint of IDX before N: at most about 4 MiB\n"
	"                     more than the range, wherever it lies\n"
	"      --offset N     see --import-index\n"
	"      --length N     see --import-index\n"
	"  -v, --verbose      name each file and its ratio on standard error, as gzip -v\n"
	"  -q, --quiet        no warnings (the exit status stays); with -l, no heading and\n"
	"                     no totals\n"
	"  -V, --version      print the version\n"
	"  -h, --help         this help\n"
	"Exit status, gzip's: 0 success; 1 an error (damaged or invalid input, a FILE missing,\n"
	"unreadable or a symlink, a write error, a usage error); 2 a warning (trailing\n"
	"garbage, an existing output not overwritten, a directory, FIFO, set-id or linked\n"
	"FILE passed over, an unknown suffix; gzip -q passes over an unknown suffix with 0),\n"
	"unless there was an error too.\n";
/* clang-format on */

/*
 * Exit statuses, gzip's (checked against gzip 1.12 case by case): 0 success; 1 an error (damaged
 * or invalid input, a missing or unreadable FILE, a write error, a usage error, a symlink FILE
 * without -f); 2 a warning (trailing garbage, an existing output not overwritten, a directory,
 * FIFO, set-id or linked FILE passed over, an unknown suffix). An error outranks a warning,
 * whatever comes first. -q silences the warnings gzip -q silences and keeps the status, except
 * for an unknown suffix, which gzip -q passes over with status 0.
 */
enum { GZ_OK = 0, GZ_ERROR = 1, GZ_WARNING = 2 };

static int gz_worse(int a, int b)
{
	if (a == GZ_ERROR || b == GZ_ERROR)
		return GZ_ERROR;
	return a == GZ_WARNING || b == GZ_WARNING ? GZ_WARNING : GZ_OK;
}

/* A warning of gzip's that -q silences, said as cli_error says errors; returns GZ_WARNING. */
static int gz_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int gz_warn(const char *fmt, ...)
{
	if (!cli_quiet) {
		char msg[4096];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		cli_error("%s", msg);
	}
	return GZ_WARNING;
}

static int gz_status(zn_result r)
{
	return r == ZN_OK ? GZ_OK : GZ_ERROR;
}

/* Output files (cli_out): an existing output or a refused input is a warning, -q silences the
 * input's; a failure is an error. */
static const struct cli_out_codes gz_codes = {
        .refused = GZ_WARNING, .failed = GZ_ERROR, .quiet_refusals = 1};

struct opts {
	int to_stdout, keep, force, test, list, name, recursive;
	unsigned threads;                 /* -T; 0: one per CPU */
	const char *index_out, *index_in; /* --export-index, --import-index */
	uint64_t offset, length;          /* --offset, --length (0: to the end) */
	int ranged;                       /* either given */
	const char *out_path;
	struct cli_out *out; /* -o: opened once, renamed into place at the end */
};

/* Describe a decoding fault: "bad stream header (at input byte 0)". */
static void report(const char *name, zn_result r, uint64_t in_pos)
{
	if (r == ZN_ERR_BAD_HEADER && in_pos <= 1) /* the magic: as gzip says it */
		cli_error("%s: not in gzip format", name);
	else
		cli_error("%s: %s (at input byte %llu)", name, zn_result_message(r),
		          (unsigned long long)in_pos);
}

static int write_failed;      /* the last decode_fd's output failed (not its input) */
static int pass_plain;        /* zcat -f, gunzip -cf: input that is not gzip is copied as it is */
static struct zn_gunzip *par; /* -T N with N > 1, for every FILE; NULL at -T1 */

/* `zeros` zero bytes, then the rest of the input, from in[pos..have) on, copied to out_fd as it
 * is (pass_plain). */
static int copy_plain(int in_fd, uint64_t zeros, const uint8_t *in, size_t pos, size_t have,
                      int eof, uint8_t *buf, size_t cap, int out_fd, const char *name,
                      const char *out_name)
{
	static const uint8_t zero[4096];
	for (;;) {
		size_t k = zeros < sizeof(zero) ? (size_t)zeros : sizeof(zero);
		const uint8_t *from = k ? zero : in + pos;
		if (!k)
			k = have - pos;
		if (k && out_fd >= 0 && cli_write_all(out_fd, from, k)) {
			cli_error("%s: write error: %s", out_name, strerror(errno));
			write_failed = 1;
			return GZ_ERROR;
		}
		if (zeros) {
			zeros -= k;
			continue;
		}
		if (eof)
			return GZ_OK;
		ssize_t n = cli_read_input(in_fd, buf, cap);
		if (n < 0) {
			cli_error("%s: read error: %s", name, strerror(errno));
			return GZ_ERROR;
		}
		eof = n == 0;
		in = buf, pos = 0, have = (size_t)n;
	}
}

/* The size of the gzip header at h (len bytes of it at hand): 10 bytes, then the optional
 * fields its flags name; with name_at, where its FNAME starts (0: it has none). */
static size_t gz_header_len(const uint8_t *h, size_t len, size_t *name_at)
{
	size_t at = 10;
	uint8_t flg = len > 3 ? h[3] : 0;
	if (flg & 4) /* FEXTRA */
		at += 2 + (at + 2 <= len ? h[at] | (size_t)h[at + 1] << 8 : 0);
	if (name_at) /* where FNAME starts; 0: there is none */
		*name_at = flg & 8 ? at : 0;
	for (int f = 8; f <= 16; f += 8) /* FNAME, FCOMMENT: zero-terminated */
		if (flg & f) {
			while (at < len && h[at])
				at++;
			at++;
		}
	if (flg & 2) /* FHCRC */
		at += 2;
	return at;
}

/* Whether more than in[0..len) should be read before decoding starts, however a pipe hands it
 * over: 2 bytes, for zcat -f to decide on, and a gzip header whole, for its length (the ratio of
 * -l and -v). */
static int too_short(const uint8_t *in, size_t len)
{
	return len < 2 || (in[0] == 0x1f && in[1] == 0x8b && gz_header_len(in, len, NULL) > len);
}

/* What the last decode_fd read and wrote, for -v: compressed bytes, uncompressed bytes, and the
 * first member's header and trailer. */
static uint64_t last_in, last_out, last_headers;
static int last_garbage; /* it ended at trailing garbage: last_in is where that starts */
/* A stream of this run ended at trailing garbage, which was named (unless -q): as gzip's warning,
 * it leaves the exit status 1 (gzip's 2) once everything else is done, what was decoded kept. */
static int garbage_warned;

/* One decode_fd: its input (mapped, or read into buf), its output, and for pass_plain where the
 * members it decoded ended. */
struct decode {
	struct zn_inflater *d;
	int in_fd, out_fd;
	const char *name, *out_name;
	uint8_t *map, *buf; /* one of the two holds the input */
	size_t map_len, buf_cap, have, pos, released;
	off_t start; /* a mapped file's offset where decoding started */
	int eof, first;
	/* pass_plain, in stream positions (from where decoding started): buf[0], the end of the
	 * last block, the end of the last member checked (of `members`) */
	uint64_t base, block_end, member_end, members;
};

/* The input of s: a regular file is mapped and decoded in place, from its offset (standard input
 * may be a file already read in part: { read line; zcat; } < f), anything else read in 1 MiB
 * pieces. Returns an exit code. */
static int open_input(struct decode *s)
{
	struct stat st;
	s->buf_cap = 1 << 20;
	if (fstat(s->in_fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (s->start = lseek(s->in_fd, 0, SEEK_CUR)) >= 0 && st.st_size > s->start) {
		s->map_len = (size_t)st.st_size;
		s->map = mmap(NULL, s->map_len, PROT_READ, MAP_PRIVATE, s->in_fd, 0);
		if (s->map == MAP_FAILED)
			s->map = NULL;
		else
			madvise(s->map, s->map_len, MADV_SEQUENTIAL);
	}
	if (s->map) {
		s->have = s->map_len;
		s->released = (size_t)s->start & ~(size_t)4095;
		s->pos = (size_t)s->start;
		s->eof = 1;
		return GZ_OK;
	}
	s->start = 0;
	if (!(s->buf = malloc(s->buf_cap))) {
		cli_error("%s: out of memory", s->name);
		return GZ_ERROR;
	}
	return GZ_OK;
}

/* Whether the next step must read more: the input at hand is used up, or at the start it is too
 * short to decide on (too_short). */
static int needs_read(const struct decode *s)
{
	return !s->map && !s->eof &&
	       (s->pos == s->have ||
	        (s->first && s->have < s->buf_cap && too_short(s->buf + s->pos, s->have - s->pos)));
}

/* Reads more of a piped input behind what is kept of it. Returns -1 to go on, or an exit code. */
static int read_more(struct decode *s)
{
	size_t keep = s->pos;
	if (pass_plain && !s->first) {
		uint64_t at = zn_inflate_stream_bit_position(s->d) / 8;
		at = at > s->base + 2 ? at - 2 : s->base;
		/* The decoder holds a few bytes at most (its bit buffer, a stage under 4 KiB); the
		 * bound only makes sure reads stay large. */
		if (s->pos - (size_t)(at - s->base) < s->buf_cap / 2)
			keep = (size_t)(at - s->base);
	}
	memmove(s->buf, s->buf + keep, s->have - keep);
	s->base += keep, s->have -= keep, s->pos -= keep;
	ssize_t n = cli_read_input(s->in_fd, s->buf + s->have, s->buf_cap - s->have);
	if (n < 0) {
		cli_error("%s: read error: %s", s->name, strerror(errno));
		return GZ_ERROR;
	}
	s->have += (size_t)n;
	s->eof = n == 0;
	return -1;
}

/* zcat -f, once the decoder stopped (r, done) or the input at hand ended: if no further member
 * follows the last one, everything after it (zero padding included, a lone 0x1f at the end too)
 * is copied as it is, as gzip does. Returns -1 to go on decoding, or the exit code. */
static int copy_after_members(struct decode *s, const uint8_t *in, zn_result r, int done)
{
	if (zn_inflate_stream_members(s->d) != s->members) { /* a trailer checked out */
		s->members = zn_inflate_stream_members(s->d);
		s->member_end = s->block_end + 8;
	}
	if (zn_inflate_stream_at_block_end(s->d))
		s->block_end = (zn_inflate_stream_bit_position(s->d) + 7) / 8;
	/* The stream position where the input at hand ends. */
	uint64_t end = s->map ? (uint64_t)(s->have - (size_t)s->start) : s->base + s->have;
	if (!s->members || !(r == ZN_ERR_TRAILING_GARBAGE || (r == ZN_OK && done) ||
	                     (r == ZN_ERR_TRUNCATED && s->eof && end == s->member_end + 1)))
		return -1;
	/* Without -f a lone 0x1f would be the start of a member cut short. */
	uint64_t from = s->map || s->member_end >= s->base ? s->member_end : s->base;
	size_t at = s->map ? (size_t)from + (size_t)s->start : (size_t)(from - s->base);
	int rc = copy_plain(s->in_fd, from - s->member_end, in, at, s->have, s->eof, s->buf,
	                    s->buf_cap, s->out_fd, s->name, s->out_name);
	s->pos = s->have;
	return rc;
}

/* One call of the decoder on the input at hand, its output written. Returns -1 to go on, or the
 * exit code the stream ends with. */
static int decode_step(struct decode *s)
{
	const uint8_t *in = s->map ? s->map : s->buf;
	if (s->first && pass_plain &&
	    (s->have - s->pos < 2 || in[s->pos] != 0x1f || in[s->pos + 1] != 0x8b)) {
		int rc = copy_plain(s->in_fd, 0, in, s->pos, s->have, s->eof, s->buf, s->buf_cap,
		                    s->out_fd, s->name, s->out_name);
		s->pos = s->have;
		return rc;
	}
	size_t used, olen;
	const void *o;
	int done;
	if (s->first)
		last_headers = gz_header_len(in + s->pos, s->have - s->pos, NULL) + 8;
	s->first = 0;
	zn_result r = zn_inflate_stream(s->d, in + s->pos, s->have - s->pos, s->eof, &used, &o,
	                                &olen, &done);
	s->pos += used;
	last_in += used;
	last_out += olen;
	if (s->map && s->pos - s->released >= (64u << 20)) {
		/* Input already decoded is not needed again: drop it from the process's memory, so
		 * that a big file does not count against its limit. */
		size_t upto = s->pos & ~(size_t)((1u << 20) - 1);
		madvise(s->map + s->released, upto - s->released, MADV_DONTNEED);
		s->released = upto;
	}
	if (olen && s->out_fd >= 0 && cli_write_all(s->out_fd, o, olen)) {
		cli_error("%s: write error: %s", s->out_name, strerror(errno));
		write_failed = 1;
		return GZ_ERROR;
	}
	int rc = pass_plain ? copy_after_members(s, in, r, done) : -1;
	if (rc >= 0)
		return rc;
	if (r == ZN_ERR_TRAILING_GARBAGE) {
		/* From a pipe the decoder may have taken some of the garbage in an earlier call:
		 * the compressed size is where the garbage starts. */
		zn_inflate_stream_position(s->d, &last_in, NULL);
		last_garbage = garbage_warned = 1;
		cli_warn("%s: decompression OK, trailing garbage ignored", s->name);
		return GZ_OK;
	}
	if (r != ZN_OK) {
		uint64_t at;
		zn_inflate_stream_position(s->d, &at, NULL);
		report(s->name, r, at + (uint64_t)s->start); /* from the file's start */
		return gz_status(r);
	}
	return done ? GZ_OK : -1;
}

/*
 * Decode one gzip stream from `in_fd` to `out_fd` (-1: discard). Returns an exit code.
 *
 * zcat -f (pass_plain) copies input that does not start with a gzip member as it is, and, once
 * no further member follows, everything after the last member: zero padding, trailing garbage,
 * a lone 0x1f at the end, as gzip does. Where that member ended is exact with block stops on
 * (see cmd_gunzip): the last block stop before a member's trailer checked out was its final
 * block, and the trailer is the 8 bytes after that block's last byte. From a pipe, earlier reads
 * are gone by then; so that what follows the member can still be copied, each read keeps in
 * front of `buf` the bytes from 2 before the decoder's exact position on (the decoder may take
 * a 0x1f, and finds it is garbage only at the byte after it), and everything between the
 * member's end and those kept bytes was zero padding, the only thing the decoder passes over
 * there.
 */
static int decode_fd_parallel(int in_fd, int out_fd, const char *name, const char *out_name);

static int decode_fd(struct zn_inflater *d, int in_fd, int out_fd, const char *name,
                     const char *out_name)
{
	write_failed = 0;
	last_in = last_out = last_headers = 0;
	last_garbage = 0;
	if (par && !pass_plain)
		return decode_fd_parallel(in_fd, out_fd, name, out_name);
	struct decode s = {.d = d,
	                   .in_fd = in_fd,
	                   .out_fd = out_fd,
	                   .name = name,
	                   .out_name = out_name,
	                   .first = 1};
	zn_result r = zn_inflate_stream_reset(d);
	if (r != ZN_OK) {
		cli_error("%s: %s", name, zn_result_message(r));
		return gz_status(r);
	}
	int rc = open_input(&s);
	if (rc == GZ_OK)
		do
			rc = needs_read(&s) ? read_more(&s) : decode_step(&s);
		while (rc < 0);
	if (s.map) {
		munmap(s.map, s.map_len);
		lseek(in_fd, (off_t)s.pos, SEEK_SET); /* after what was decoded */
	}
	free(s.buf);
	return rc;
}

/* ---- -T N: the parallel decoder ------------------------------------------------------------- */

struct par_io {
	int in_fd, out_fd;
	const char *name, *out_name;
	int read_err, write_err; /* errno of a failed read or write */
	uint8_t head[4096];      /* the first bytes read from a pipe (for -v and -l) */
	size_t head_len;
	uint8_t *map;
	size_t released;
};

static zn_result par_write(void *ctx, const void *buf, size_t len)
{
	struct par_io *io = ctx;
	if (io->out_fd >= 0 && cli_write_all(io->out_fd, buf, len)) {
		io->write_err = errno;
		return ZN_ERR_IO;
	}
	return ZN_OK;
}

/* A pipe, read as read_more reads it: EINTR retried, a non-blocking one made blocking. */
static zn_result par_read(void *ctx, void *buf, size_t cap, size_t *got)
{
	struct par_io *io = ctx;
	ssize_t n = cli_read_input(io->in_fd, buf, cap);
	if (n < 0) {
		io->read_err = errno;
		return ZN_ERR_IO;
	}
	size_t k = ZN_MIN_SZ((size_t)n, sizeof(io->head) - io->head_len);
	memcpy(io->head + io->head_len, buf, k);
	io->head_len += k;
	*got = (size_t)n;
	return ZN_OK;
}

/* Decoded input of a mapped file is dropped from the process's memory, as -T1 does. */
static void par_release(void *ctx, uint64_t upto)
{
	struct par_io *io = *(struct par_io **)ctx;
	size_t to = (size_t)upto & ~(size_t)4095;
	if (io && io->map && to > io->released) {
		madvise(io->map + io->released, to - io->released, MADV_DONTNEED);
		io->released = to;
	}
}
static struct par_io *par_current; /* the release callback's context */

/* decode_fd with the parallel decoder (not for zcat -f, whose copies need -T1's positions).
 * The same messages, positions and exit statuses. */
static int decode_fd_parallel(int in_fd, int out_fd, const char *name, const char *out_name)
{
	struct par_io io = {.in_fd = in_fd, .out_fd = out_fd, .name = name, .out_name = out_name};
	struct zn_gunzip_info info;
	zn_gunzip_info_init(&info);
	struct stat st;
	off_t start = 0;
	size_t map_len = 0;
	if (fstat(in_fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (start = lseek(in_fd, 0, SEEK_CUR)) >= 0 && st.st_size > start) {
		map_len = (size_t)st.st_size;
		io.map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, in_fd, 0);
		if (io.map == MAP_FAILED)
			io.map = NULL;
		else
			madvise(io.map, map_len, MADV_SEQUENTIAL);
	}
	if (!io.map)
		start = 0;
	io.released = (size_t)start & ~(size_t)4095;
	par_current = &io;
	zn_result r;
	const uint8_t *head;
	size_t head_len;
	if (io.map) {
		r = zn_gunzip_mem(par, io.map + start, map_len - (size_t)start, par_write, &io,
		                  &info);
		head = io.map + start;
		head_len = map_len - (size_t)start;
	} else {
		r = zn_gunzip_read(par, par_read, &io, par_write, &io, &info);
		head = io.head;
		head_len = io.head_len;
	}
	par_current = NULL;
	last_in = info.in_pos;
	last_out = info.out_len;
	last_headers = gz_header_len(head, head_len, NULL) + 8;
	if (io.map) {
		munmap(io.map, map_len);
		lseek(in_fd, start + (off_t)info.in_pos, SEEK_SET); /* after what was decoded */
	}
	if (io.write_err) {
		cli_error("%s: write error: %s", out_name, strerror(io.write_err));
		write_failed = 1;
		return GZ_ERROR;
	}
	if (io.read_err) {
		cli_error("%s: read error: %s", name, strerror(io.read_err));
		return GZ_ERROR;
	}
	if (r == ZN_ERR_TRAILING_GARBAGE) {
		last_garbage = garbage_warned = 1;
		cli_warn("%s: decompression OK, trailing garbage ignored", name);
		return GZ_OK;
	}
	if (r != ZN_OK) {
		report(name, r, info.in_pos + (uint64_t)start); /* from the file's start */
		return GZ_ERROR;
	}
	return GZ_OK;
}

/* FILE.gz -> FILE; NULL for an unknown suffix. */
static const char *user_suffix; /* -S */

static char *output_name(const char *in)
{
	static struct {
		const char *from, *to;
	} sfx[] = {{"", ""},   {".gz", ""}, {".tgz", ".tar"}, {".taz", ".tar"},
	           {".z", ""}, {"-gz", ""}, {"-z", ""},       {"_z", ""}}; /* any case, as gzip */
	sfx[0].from = user_suffix ? user_suffix : ".gz";
	size_t n = strlen(in);
	const char *base = strrchr(in, '/');
	base = base ? base + 1 : in;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t f = strlen(sfx[i].from);
		if (n > f && strcasecmp(in + n - f, sfx[i].from) == 0 &&
		    (size_t)(in + n - base) > f) {
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

static int shared_out_failed; /* standard output or -o failed: the other FILEs are not tried */

/* -N: the output's name from the header's FNAME (its last component, beside the input), and
 * the header's MTIME (0: none); without an FNAME, the name the suffix gives. */
static char *stored_name(int fd, const char *path, int64_t *mtime)
{
	uint8_t h[4096];
	ssize_t n = pread(fd, h, sizeof(h) - 1, 0);
	if (n < 10 || h[0] != 0x1f || h[1] != 0x8b)
		return output_name(path);
	h[n] = 0;
	*mtime = h[4] | (int64_t)h[5] << 8 | (int64_t)h[6] << 16 | (int64_t)h[7] << 24;
	size_t at;
	gz_header_len(h, (size_t)n, &at);
	if (!at || at >= (size_t)n) /* no FNAME */
		return output_name(path);
	const char *fname = (const char *)h + at, *slash = strrchr(fname, '/');
	const char *base = slash ? slash + 1 : fname;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return output_name(path);
	const char *dir_end = strrchr(path, '/');
	size_t dlen = dir_end ? (size_t)(dir_end - path) + 1 : 0;
	char *o = malloc(dlen + strlen(base) + 1);
	if (o) {
		memcpy(o, path, dlen);
		strcpy(o + dlen, base);
	}
	return o;
}

static double ratio(uint64_t in, uint64_t out, uint64_t headers)
{
	return out ? 100.0 * ((double)out - ((double)in - (double)headers)) / (double)out : 0.0;
}

static int verbose;

/* -v, as gzip's: "NAME.gz:	 58.7% -- replaced with NAME" on standard error. */
static void say_done(const char *path, const char *how, const char *out)
{
	if (verbose && !cli_quiet)
		fprintf(stderr, "%s:\t%5.1f%% -- %s %s\n", path,
		        ratio(last_in, last_out, last_headers), how, out);
}

/* -l, as gzip's lines and totals: the compressed size, the decoded size (exact, where gzip shows
 * the last member's ISIZE, modulo 2^32), and the ratio of the deflate data to the latter. */
static struct {
	uint64_t files, in, out, headers;
} listed;

static void list_line(uint64_t in, uint64_t out, uint64_t headers, const char *name)
{
	printf("%19llu %19llu %5.1f%% %s\n", (unsigned long long)in, (unsigned long long)out,
	       ratio(in, out, headers), name);
}

/* An input: a FILE given (dir AT_FDCWD, name the FILE as given), or a file met by -r (dir the
 * directory walked, held open; name its name there); shown is how messages name it, the
 * path as given or walked, which ends with name. */
struct input {
	int dir;
	const char *name, *shown;
};

/* -l of FILE, or of standard input for "-" (gzip names it "stdout", and counts the compressed
 * bytes read: from a file's offset on, and here up to the end of the gzip data). */
static int list_file(struct zn_inflater *d, const struct input *in)
{
	int std_in = in->dir == AT_FDCWD && !strcmp(in->name, "-");
	int fd = std_in ? 0 : openat(in->dir, in->name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (!std_in && (fd < 0 || fstat(fd, &st))) {
		cli_error("%s: %s", in->shown, strerror(errno));
		if (fd >= 0)
			close(fd);
		return GZ_ERROR;
	}
	if (!std_in && !S_ISREG(st.st_mode)) {
		close(fd);
		return gz_warn("%s: not a regular file", in->shown);
	}
	/* Decoded, not read from the trailer as gzip does: the sizes are exact past 4 GiB and
	 * for several members, and damage or trailing bytes are found. */
	int rc = decode_fd(d, fd, -1, std_in ? "(stdin)" : in->shown, NULL);
	if (!std_in)
		close(fd);
	if (rc != GZ_OK)
		return rc;
	/* gzip -l names the file's size (and lists nothing after trailing garbage): here the
	 * size up to the garbage, from a file as from a pipe */
	uint64_t size = std_in || last_garbage ? last_in : (uint64_t)st.st_size;
	char *name = std_in ? NULL : output_name(in->shown);
	if (!listed.files++ && !cli_quiet)
		printf("%19s %19s  ratio uncompressed_name\n", "compressed", "uncompressed");
	list_line(size, last_out, last_headers, std_in ? "stdout" : name ? name : in->shown);
	listed.in += size;
	listed.out += last_out;
	listed.headers = last_headers; /* gzip's totals count the last file's header only */
	free(name);
	return GZ_OK;
}

/* Standard input to standard output, -o, or nothing (-t). */
static int do_stdin(struct zn_inflater *d, const struct opts *op)
{
	if (isatty(0) && !op->force) {
		cli_error("compressed data not read from a terminal; use -f to force");
		return GZ_ERROR;
	}
	int out_fd = op->test ? -1 : op->out ? op->out->fd : 1;
	int rc = decode_fd(d, 0, out_fd, "(stdin)", op->out_path ? op->out_path : "(stdout)");
	shared_out_failed |= write_failed;
	return rc;
}

/* An input to the shared output (standard output, -o) or to nothing (-t). */
static int decode_to_shared(struct zn_inflater *d, int in_fd, const char *shown,
                            const struct opts *op)
{
	if (op->out && cli_out_is_input(op->out, in_fd)) {
		return gz_warn("%s: is the output file -- ignored", shown);
	}
	int out_fd = op->test ? -1 : op->out ? op->out->fd : 1;
	int rc = decode_fd(d, in_fd, out_fd, shown, op->out_path ? op->out_path : "(stdout)");
	shared_out_failed |= write_failed;
	if (rc == GZ_OK && op->test && verbose && !cli_quiet)
		fprintf(stderr, "%s:\t OK\n", shown);
	else if (rc == GZ_OK && !op->test)
		say_done(shown, "written to", op->out_path ? op->out_path : "standard output");
	return rc;
}

/* The output's name for FILE.gz decoded in place (-N: the stored one), beside it, and as
 * messages name it; NULL for an unknown suffix (a warning, said; with -q nothing at all, as
 * gzip -q: *rc GZ_OK) or no memory (*rc GZ_ERROR, said). */
static char *in_place_name(const struct input *in, int in_fd, int name, int64_t *mtime,
                           char **shown, int *rc)
{
	char *out = name ? stored_name(in_fd, in->name, mtime) : output_name(in->name);
	size_t dlen = strlen(in->shown) - strlen(in->name); /* the walked path above it */
	*shown = out ? malloc(dlen + strlen(out) + 1) : NULL;
	if (*shown) {
		memcpy(*shown, in->shown, dlen);
		strcpy(*shown + dlen, out);
		return out;
	}
	if (out) {
		cli_error("%s: out of memory", in->shown);
		*rc = GZ_ERROR;
	} else {
		*rc = cli_quiet ? GZ_OK : gz_warn("%s: unknown suffix -- ignored", in->shown);
	}
	free(out);
	return NULL;
}

/* FILE.gz -> FILE beside it, which takes its owner (where allowed), mode and times, as with
 * gzip; FILE.gz is then removed unless -k. */
static int decode_in_place(struct zn_inflater *d, const struct input *in, int in_fd,
                           const struct stat *st, const struct opts *op)
{
	int rc = cli_check_in_place_input(in->shown, st, op->force, &gz_codes);
	int64_t stored_mtime = 0;
	char *shown = NULL, *out_name = NULL;
	if (rc == GZ_OK &&
	    !(out_name = in_place_name(in, in_fd, op->name, &stored_mtime, &shown, &rc)))
		return rc;
	struct cli_out out;
	if (rc == GZ_OK)
		rc = cli_out_open(&out, in->dir, out_name, shown, op->force, 0, &gz_codes);
	free(out_name);
	free(shown);
	if (rc != GZ_OK)
		return rc;
	rc = decode_fd(d, in_fd, out.fd, in->shown, out.shown);
	if (rc == GZ_OK) {
		(void)!fchown(out.fd, st->st_uid, st->st_gid);
		fchmod(out.fd, st->st_mode & 01777); /* set-id bits dropped, as gzip 1.12 does */
		struct timespec ts[2] = {st->st_atim, st->st_mtim};
		if (stored_mtime) /* -N */
			ts[1] = (struct timespec){.tv_sec = (time_t)stored_mtime};
		futimens(out.fd, ts);
	}
	char *final = rc == GZ_OK && verbose ? strdup(out.shown) : NULL;
	rc = cli_out_close(&out, rc, op->force);
	if (rc == GZ_OK && !op->keep && unlinkat(in->dir, in->name, 0))
		cli_warn("%s: cannot remove: %s", in->shown, strerror(errno));
	if (rc == GZ_OK && final)
		say_done(in->shown, op->keep ? "created" : "replaced with", final);
	free(final);
	return rc;
}

static int do_file(struct zn_inflater *d, const struct input *in, const struct opts *op)
{
	if (op->list) /* standard input too, from a terminal as well, as gzip -l reads it */
		return list_file(d, in);
	if (in->dir == AT_FDCWD && !strcmp(in->name, "-"))
		return do_stdin(d, op);
	int in_place = !(op->test || op->to_stdout || op->out);
	/* O_NONBLOCK: a FIFO given to in-place decoding is refused, not waited on (it has no
	 * effect on regular files). */
	int in_fd = openat(in->dir, in->name,
	                   O_RDONLY | O_CLOEXEC |
	                           (in_place ? O_NONBLOCK | (op->force ? 0 : O_NOFOLLOW) : 0));
	if (in_fd < 0) {
		int err = errno;
		if (err == ELOOP)
			cli_error("%s: is a symbolic link -- ignored (use -f)", in->shown);
		else
			cli_error("%s: %s", in->shown, strerror(err));
		/* Both errors, as gzip's (a symlink refused too: gzip's open fails with ELOOP). */
		return GZ_ERROR;
	}
	struct stat st;
	int rc;
	if (fstat(in_fd, &st) || S_ISDIR(st.st_mode)) {
		rc = gz_warn("%s: is a directory -- ignored", in->shown);
	} else if (!in_place) {
		rc = decode_to_shared(d, in_fd, in->shown, op);
	} else {
		rc = decode_in_place(d, in, in_fd, &st, op);
	}
	close(in_fd);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory dir but "." and "..", sorted in byte order, into *names (*n of them);
 * 0, or the exit status (said). */
static int read_names(int dir, const char *shown, char ***names, size_t *n)
{
	int fd = dup(dir); /* fdopendir takes it; dir stays the walk's */
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	*names = NULL;
	*n = 0;
	if (!dp) {
		cli_error("%s: %s", shown, strerror(errno));
		if (fd >= 0)
			close(fd);
		return GZ_ERROR;
	}
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			char **nn = realloc(*names, (cap = cap * 2 + 64) * sizeof(*nn));
			if (!nn)
				break;
			*names = nn;
		}
		if (!((*names)[*n] = strdup(de->d_name)))
			break;
		(*n)++;
	}
	closedir(dp);
	qsort(*names, *n, sizeof(**names), cmp_names);
	if (de)
		cli_error("%s: out of memory", shown);
	return de ? GZ_ERROR : GZ_OK;
}

static int do_tree(struct zn_inflater *d, int dir, const char *shown, const struct opts *op);

/* One name met by -r in directory dir: a directory is walked, opened from dir without following
 * a symlink (one put in its place since it was looked at is not followed either); a regular file
 * with a gzip suffix is decoded; anything else is passed over. Returns the exit status. */
static int do_entry(struct zn_inflater *d, int dir, const char *name, const char *path,
                    const struct opts *op)
{
	struct stat st;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW)) {
		cli_error("%s: %s", path, strerror(errno));
		return GZ_ERROR;
	}
	if (S_ISDIR(st.st_mode)) {
		int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			cli_error("%s: %s", path, strerror(errno));
			return GZ_ERROR;
		}
		int rc = do_tree(d, sub, path, op);
		close(sub);
		return rc;
	}
	char *known = S_ISREG(st.st_mode) ? output_name(name) : NULL;
	if (!known)
		return GZ_OK;
	free(known);
	struct input in = {dir, name, path};
	return do_file(d, &in, op);
}

/* -r: the files below directory dir (held open; shown as `shown`) whose names have a gzip suffix
 * (others are passed over, as gzip -r passes them), in byte order of names. The walk goes from
 * descriptor to descriptor (openat, never a path resolved again), so that a directory another
 * user swaps for a symlink while it is walked leads nowhere else. Returns the worst exit
 * status. */
static int do_tree(struct zn_inflater *d, int dir, const char *shown, const struct opts *op)
{
	char **names;
	size_t n;
	int rc = read_names(dir, shown, &names, &n);
	size_t i = 0;
	for (; i < n && !shared_out_failed; i++) {
		char *path = malloc(strlen(shown) + strlen(names[i]) + 2);
		int frc = GZ_ERROR;
		if (path) {
			sprintf(path, "%s%s%s", shown, shown[strlen(shown) - 1] == '/' ? "" : "/",
			        names[i]);
			frc = do_entry(d, dir, names[i], path, op);
		}
		free(path);
		free(names[i]);
		rc = gz_worse(rc, frc);
	}
	for (; i < n; i++) /* not tried: the shared output failed */
		free(names[i]);
	free(names);
	return rc;
}

/* -r of a directory FILE given. */
static int do_top_tree(struct zn_inflater *d, const char *path, const struct opts *op)
{
	int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0) {
		cli_error("%s: %s", path, strerror(errno));
		return GZ_ERROR;
	}
	int rc = do_tree(d, dir, path, op);
	close(dir);
	return rc;
}

/* gzip's options. The table is gzip's, and is read by hand (parse_gunzip_args), not by
 * getopt: gzip takes options after FILEs too, and -S/-o glued to their value. */
enum { OPT_INDEX_OUT = 1000, OPT_INDEX_IN, OPT_OFFSET, OPT_LENGTH };
static const char gunzip_shortopts[] = "cdkftqnrlvNS:o:T:hV";
static const struct option gunzip_options[] = {
        {"stdout", no_argument, 0, 'c'},
        {"to-stdout", no_argument, 0, 'c'},
        {"decompress", no_argument, 0, 'd'},
        {"keep", no_argument, 0, 'k'},
        {"force", no_argument, 0, 'f'},
        {"test", no_argument, 0, 't'},
        {"quiet", no_argument, 0, 'q'},
        {"no-name", no_argument, 0, 'n'},
        {"name", no_argument, 0, 'N'},
        {"recursive", no_argument, 0, 'r'},
        {"list", no_argument, 0, 'l'},
        {"verbose", no_argument, 0, 'v'},
        {"suffix", required_argument, 0, 'S'},
        {"output", required_argument, 0, 'o'},
        {"threads", required_argument, 0, 'T'},
        {"export-index", required_argument, 0, OPT_INDEX_OUT},
        {"import-index", required_argument, 0, OPT_INDEX_IN},
        {"offset", required_argument, 0, OPT_OFFSET},
        {"length", required_argument, 0, OPT_LENGTH},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0},
};

static const char *gz_cmd; /* "gunzip" or "zcat", for messages */

/* One option, by its letter. Returns -1 to go on, or the exit status (help, version). */
static int gunzip_option(struct opts *op, int letter, const char *arg)
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
	case 'n':
		op->name = 0;
		break;
	case 'N':
		op->name = 1;
		break;
	case 'r':
		op->recursive = 1;
		break;
	case 'l':
		op->list = 1;
		break;
	case 'v':
		verbose = 1;
		break;
	case 'S':
		user_suffix = arg;
		break;
	case 'o':
		op->out_path = arg;
		break;
	case 'T':
		if (cli_parse_threads(gz_cmd, arg, &op->threads))
			return GZ_ERROR;
		break;
	case OPT_INDEX_OUT:
		op->index_out = arg;
		break;
	case OPT_INDEX_IN:
		op->index_in = arg;
		break;
	case OPT_OFFSET:
	case OPT_LENGTH:
		if (cli_parse_uint(arg, 0, UINT64_MAX,
		                   letter == OPT_OFFSET ? &op->offset : &op->length))
			return (cli_usage_error(gz_cmd, "invalid number '%s'", arg), GZ_ERROR);
		op->ranged = 1;
		break;
	case 'h':
		fputs(gunzip_help, stdout);
		return GZ_OK;
	case 'V':
		cli_print_version();
		return GZ_OK;
	}
	return -1; /* and 'd', as gzip -d: decompressing is all this does */
}

/* A long option ("--name" or "--name=VALUE"), its value the next argument if it takes one and
 * has none of its own (*i then moves on). Returns as gunzip_option. */
static int gunzip_long_option(void *opp, const char *cmd, int argc, char **argv, int *i)
{
	struct opts *op = opp;
	const char *a = argv[*i] + 2, *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);
	const struct option *o = gunzip_options;
	while (o->name && (strlen(o->name) != n || strncmp(o->name, a, n)))
		o++;
	if (!o->name || (eq && o->has_arg == no_argument))
		return (cli_usage_error(cmd, "unknown option '%s'", argv[*i]), GZ_ERROR);
	const char *arg = eq ? eq + 1 : NULL;
	if (o->has_arg == required_argument && !arg && *i + 1 >= argc)
		return (cli_usage_error(cmd, "option requires an argument -- '%c'", o->val),
		        GZ_ERROR);
	if (o->has_arg == required_argument && !arg)
		arg = argv[++*i];
	return gunzip_option(op, o->val, arg);
}

/* A group of short options ("-kv", "-S.zz", "-S .zz"). Returns as gunzip_option. */
static int gunzip_short_options(void *opp, const char *cmd, int argc, char **argv, int *i)
{
	struct opts *op = opp;
	for (const char *p = argv[*i] + 1; *p; p++) {
		const char *in = strchr(gunzip_shortopts, *p);
		if (!in || *p == ':')
			return (cli_usage_error(cmd, "unknown option '-%c'", *p), GZ_ERROR);
		if (in[1] != ':') {
			int rc = gunzip_option(op, *p, NULL);
			if (rc >= 0)
				return rc;
			continue;
		}
		/* The rest of the word is the value, or else the next argument. */
		if (!p[1] && *i + 1 >= argc)
			return (cli_usage_error(cmd, "option requires an argument -- '%c'", *p),
			        GZ_ERROR);
		return gunzip_option(op, *p, p[1] ? p + 1 : argv[++*i]);
	}
	return -1;
}

/* The command line: options into *op, FILEs into files[*nfiles] in order (gzip takes options
 * after FILEs too). Returns -1 to go on, or the exit status. */
static int parse_gunzip_args(int argc, char **argv, const char *cmd, struct opts *op, char **files,
                             int *nfiles)
{
	int rc = cli_decoder_args(argc, argv, cmd, op, gunzip_long_option, gunzip_short_options,
	                          files, nfiles);
	if (rc >= 0)
		return rc;
	if (user_suffix && (!*user_suffix || strchr(user_suffix, '/')))
		return (cli_usage_error(cmd, "invalid suffix '%s'", user_suffix), GZ_ERROR);
	if (op->out_path && !strcmp(op->out_path, "-")) { /* -o -: standard output, as -c */
		op->out_path = NULL;
		op->to_stdout = 1;
	}
	if (op->out_path && op->to_stdout)
		return (cli_usage_error(cmd, "-c and -o OUT: choose one"), GZ_ERROR);
	return -1;
}

/* As gzip: NAME that does not exist, without a known suffix, is NAME with the first of them (-S
 * SUF first) that exists. Returns that name (malloc'd), or NULL: NAME as it is. */
static char *with_suffix(const char *name)
{
	char *gz = NULL, *known = output_name(name);
	struct stat st;
	if (strcmp(name, "-") && !known && lstat(name, &st) && errno == ENOENT) {
		const char *try[] = {user_suffix, ".gz", ".z", ".taz", ".tgz", "-gz", "-z", "_z"};
		for (size_t k = 0; k < sizeof(try) / sizeof(try[0]) && !gz; k++) {
			if (!try[k] || !(gz = malloc(strlen(name) + strlen(try[k]) + 1)))
				continue;
			strcpy(gz, name);
			strcat(gz, try[k]);
			if (lstat(gz, &st)) {
				free(gz);
				gz = NULL;
			}
		}
	}
	free(known);
	return gz;
}

/* Each FILE in turn (a directory's files with -r), until the shared output fails. Returns the
 * worst exit status. */
static int gunzip_files(struct zn_inflater *d, char **files, int nfiles, const struct opts *op)
{
	int rc = GZ_OK;
	for (int i = 0; i < nfiles && !shared_out_failed; i++) {
		char *gz = with_suffix(files[i]);
		struct stat st;
		int frc;
		struct input in = {AT_FDCWD, gz ? gz : files[i], gz ? gz : files[i]};
		if (op->recursive && !gz && !lstat(files[i], &st) && S_ISDIR(st.st_mode))
			frc = do_top_tree(d, files[i], op);
		else
			frc = do_file(d, &in, op);
		free(gz);
		rc = gz_worse(rc, frc);
	}
	return rc;
}

/* ---- --export-index, --import-index: random reads
 * --------------------------------------------------- */

/* FILE mapped whole, for random access (a regular file only); 0, or the exit status (said). */
static int map_whole(const char *name, const uint8_t **p, size_t *len)
{
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		cli_error("%s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return GZ_ERROR;
	}
	*p = (const uint8_t *)"";
	*len = (size_t)st.st_size;
	void *m = S_ISREG(st.st_mode) && *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0)
	                                      : NULL;
	int err = errno;
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		cli_error("%s: not a regular file (an index is for random reads of one)", name);
		return GZ_ERROR;
	}
	if (m == MAP_FAILED) {
		cli_error("%s: %s", name, strerror(err));
		return GZ_ERROR;
	}
	if (m)
		*p = m;
	return GZ_OK;
}

static void unmap_whole(const uint8_t *p, size_t len)
{
	if (len)
		munmap((void *)p, len);
}

/* --export-index IDX FILE: FILE decoded once, every member checked, and the index of its
 * checkpoints written to IDX (under a temporary name, renamed into place). */
static int write_index(const char *name, const struct opts *op)
{
	const uint8_t *in;
	size_t len;
	int rc = map_whole(name, &in, &len);
	if (rc != GZ_OK)
		return rc;
	struct zn_gzip_index *ix;
	zn_result r = zn_gzip_index_build(&ix, in, len, 0);
	unmap_whole(in, len);
	if (r == ZN_ERR_TRAILING_GARBAGE) {
		garbage_warned = 1;
		cli_warn("%s: decompression OK, trailing garbage ignored", name);
	} else if (r != ZN_OK) {
		cli_error("%s: %s", name, zn_result_message(r));
		return GZ_ERROR;
	}
	void *buf;
	size_t n;
	r = zn_gzip_index_export(ix, &buf, &n);
	zn_gzip_index_free(ix);
	if (r != ZN_OK) {
		cli_error("%s: %s", op->index_out, zn_result_message(r));
		return GZ_ERROR;
	}
	struct cli_out o;
	rc = cli_out_open(&o, AT_FDCWD, op->index_out, op->index_out, op->force, 1, &gz_codes);
	if (rc == GZ_OK && cli_write_all(o.fd, buf, n)) {
		cli_error("%s: write error: %s", op->index_out, strerror(errno));
		rc = GZ_ERROR;
	}
	if (o.fd >= 0 || o.tmp)
		rc = cli_out_close(&o, rc, op->force);
	free(buf);
	return rc;
}

/* The index in --import-index, read and checked; NULL when it is not one (said). */
static struct zn_gzip_index *read_index(const char *path)
{
	const uint8_t *b;
	size_t n;
	if (map_whole(path, &b, &n) != GZ_OK)
		return NULL;
	struct zn_gzip_index *ix;
	zn_result r = zn_gzip_index_import(&ix, b, n);
	unmap_whole(b, n);
	if (r != ZN_OK) {
		cli_error("%s: not a usable index: %s", path, zn_result_message(r));
		return NULL;
	}
	return ix;
}

/* --import-index IDX [--offset N] [--length N] FILE: bytes N.. of FILE's decoded stream (to its
 * end, or N of them) to standard output (-o OUT, or nothing with -t), decoded from the checkpoint
 * before N. */
static int read_range(const char *name, const struct opts *op)
{
	struct zn_gzip_index *ix = read_index(op->index_in);
	const uint8_t *in = NULL;
	size_t len = 0;
	if (!ix)
		return GZ_ERROR;
	int rc = map_whole(name, &in, &len);
	const size_t cap = 16u << 20; /* a read decodes up to 4 MiB before its range */
	uint8_t *buf = rc == GZ_OK ? malloc(cap) : NULL;
	if (rc == GZ_OK && !buf) {
		cli_error("%s: out of memory", name);
		rc = GZ_ERROR;
	}
	int out_fd = op->test ? -1 : op->out ? op->out->fd : 1;
	uint64_t at = op->offset, left = op->length ? op->length : UINT64_MAX;
	while (buf && left) {
		size_t want = (size_t)ZN_MIN_SZ(left, (uint64_t)cap), got;
		zn_result r = zn_gzip_index_read(ix, in, len, at, buf, want, &got);
		if (r == ZN_ERR_INVALID_ARG) {
			cli_error("%s: not the file the index %s was made from", name,
			          op->index_in);
			rc = GZ_ERROR;
		} else if (r != ZN_OK) {
			cli_error("%s: %s", name, zn_result_message(r));
			rc = GZ_ERROR;
		} else if (got && out_fd >= 0 && cli_write_all(out_fd, buf, got)) {
			cli_error("%s: write error: %s", op->out_path ? op->out_path : "(stdout)",
			          strerror(errno));
			rc = GZ_ERROR;
		}
		if (rc != GZ_OK || got < want)
			break;
		at += got;
		left -= got;
	}
	free(buf);
	if (in)
		unmap_whole(in, len);
	zn_gzip_index_free(ix);
	return rc;
}

/* The index options: one FILE, not standard input; --offset and --length with --import-index. -1 to
 * go on, or the exit status (the usage error said). */
static int check_index_args(const char *cmd, const struct opts *op, char **files, int nfiles)
{
	if (!op->index_out && !op->index_in && !op->ranged)
		return -1;
	const char *why = NULL;
	if (op->index_out && op->index_in)
		why = "--export-index and --import-index: choose one";
	else if (op->ranged && !op->index_in)
		why = "--offset and --length need --import-index";
	else if (nfiles != 1 || !strcmp(files[0], "-"))
		why = "an index is for one FILE, not standard input";
	else if (op->list || op->recursive || (op->index_out && op->out_path))
		why = "--export-index and --import-index go with neither -l nor -r, --export-index "
		      "not with "
		      "-o";
	if (why)
		return (cli_usage_error(cmd, "%s", why), GZ_ERROR);
	return -1;
}

/* The CPUs this process may run on, as nproc counts them (the library's default). */
static unsigned cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static int run_gunzip(int argc, char **argv, int zcat)
{
	struct opts op = {.to_stdout = zcat};
	struct cli_out out;
	const char *cmd = zcat ? "zcat" : "gunzip";
	gz_cmd = cmd;
	int nfiles = 0;
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	if (!files)
		return GZ_ERROR;
	int rc = parse_gunzip_args(argc, argv, cmd, &op, files, &nfiles);
	if (rc >= 0) {
		free(files);
		return rc;
	}
	if ((rc = check_index_args(cmd, &op, files, nfiles)) >= 0) {
		free(files);
		return rc;
	}
	if (op.index_out) {
		rc = write_index(files[0], &op);
		free(files);
		return garbage_warned ? gz_worse(rc, GZ_WARNING) : rc;
	}
	pass_plain = op.force && !op.test && !op.list && op.to_stdout;
	if (op.out_path && !op.test) {
		rc = cli_out_open(&out, AT_FDCWD, op.out_path, op.out_path, op.force, 1, &gz_codes);
		if (rc != GZ_OK) {
			free(files);
			return rc;
		}
		op.out = &out;
	}
	if (op.index_in) {
		rc = read_range(files[0], &op);
		if (op.out)
			rc = cli_out_close(op.out, rc, op.force);
		free(files);
		return rc;
	}
	struct zn_inflater *d;
	zn_result r = zn_inflater_new(&d, ZN_FORMAT_GZIP);
	if (r == ZN_OK && (op.threads ? op.threads : cpus()) > 1) {
		struct zn_gunzip_options o;
		zn_gunzip_options_init(&o);
		o.threads = op.threads;
#ifdef ZN_TEST_HOOKS
		/* Tests cut small files into many pieces. */
		const char *chunk = getenv("ZN_GUNZIP_CHUNK");
		if (chunk)
			o.chunk_size = strtoull(chunk, NULL, 10);
#endif
		o.release = par_release;
		o.release_ctx = &par_current;
		r = zn_gunzip_new(&par, &o);
	}
	if (r != ZN_OK) {
		cli_error("%s", zn_result_message(r));
		rc = gz_status(r);
	} else {
		/* zcat -f finds where the last member ended from them (decode_fd); a return
		 * per block costs little beside decoding it (zcat -f of `seq 1 3000000`
		 * gzipped: 0.03 s, as without). */
		zn_inflate_stream_set_block_stops(d, pass_plain);
		rc = gunzip_files(d, files, nfiles, &op);
	}
	zn_inflater_free(d);
	zn_gunzip_free(par);
	par = NULL;
	if (op.list && nfiles > 1 && listed.files && !cli_quiet) /* as gzip: for FILEs given */
		list_line(listed.in, listed.out, listed.headers, "(totals)");
	/* -o: the output is kept only if every input decoded completely. */
	if (op.out)
		rc = cli_out_close(op.out, rc, op.force);
	free(files);
	return garbage_warned ? gz_worse(rc, GZ_WARNING) : rc;
}

static int cmd_gunzip(int argc, char **argv)
{
	return run_gunzip(argc, argv, 0);
}

static int cmd_zcat(int argc, char **argv)
{
	return run_gunzip(argc, argv, 1);
}

const struct cli_command cli_cmd_gunzip = {"gunzip", "", cmd_gunzip, gunzip_shortopts,
                                           gunzip_options};
const struct cli_command cli_cmd_zcat = {"zcat", "", cmd_zcat, gunzip_shortopts, gunzip_options};
