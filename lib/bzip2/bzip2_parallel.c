/* SPDX-License-Identifier: MIT */
/* bzip2_parallel.c - zn_bunzip2: bzip2 streams decoded by block on the job pool, in order. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bzip2/bzip2_internal.h"
#include "common/cpu_features.h"
#include "common/pool.h"
#include "common/sized.h"

/*
 * How it works.
 *
 * Blocks of a bzip2 stream follow each other with no byte alignment and no index: where a block
 * starts is known for sure only once the block before it has been decoded to its end. But every
 * block starts with the 48-bit magic 0x314159265359, so the decoder looks for the magic at every
 * bit of the input, decodes each place it is found as a block on its own (a job of the pool),
 * and afterwards takes the decoded blocks in order where each one starts exactly where the one
 * before it ended. A magic inside a block's data (a false candidate, 1 in 2^48 bit positions of
 * random data) is decoded for nothing and dropped, or skipped if the block that holds it is
 * already known when its job starts; it never reaches the output, since only a block that starts
 * at the end of the previous one is taken.
 *
 * Threads. The caller's thread is the driver: it reads the input, scans it for magics, hands
 * the candidates to the pool as jobs, takes the decoded blocks in order (the "stitcher") and
 * passes their output to the sink. While it waits for a block it runs queued jobs itself
 * (zn_pool_join), so at one thread everything happens inline on it. The pool's threads only
 * decode blocks.
 *
 * Input. It comes in slabs of 4 MiB. A block may start anywhere in a slab and run past its end,
 * so each slab buffer holds, after its own bytes, a copy of the first 2.5 MiB of the next slab
 * (the tail: BZ2_MAX_BLOCK_BYTES, longer than any block), made when that slab is read: every
 * block that starts in a slab lies whole in that slab's buffer. A slab is scanned only once its
 * tail is in (or the input has ended), and freed once the stitcher has gone past it and no
 * candidate of it is pending or in flight. Input in memory (zn_bunzip2_mem) is cut into the same
 * slabs, as views with all the rest of the input as their tail: nothing is copied.
 *
 * Memory is bounded: at most `window` jobs are in flight (2 x threads + 2; 1 at one thread),
 * each with an output buffer kept from block to block; each running job borrows a block's arrays
 * (8.2 MB) from a stock of at most `threads`; at most 3 + threads / 2 slabs are held; candidates
 * wait in a ring of 1024, the scan resuming where it stopped. An output larger than 4 MiB
 * (RLE1 can make 46 MB of a 900 KB block) is not held: the job keeps the block before RLE1 and
 * checks its CRC expanding it in pieces, and the driver expands it again as it writes it.
 *
 * Ownership. A job's fields are written by the driver before zn_pool_add_to() and by the job
 * itself while it runs; the driver reads the results only after the job's group shows it
 * returned (zn_pool_join, or its count read as 0: both order the job's writes before the read).
 * The stock of block arrays is shared under `mu`. `confirmed` is the stitcher's position,
 * published for jobs to skip candidates behind it.
 *
 * Why it cannot deadlock. The driver is not a job; it waits only for a job it has queued, and
 * while waiting it runs queued jobs itself. Jobs wait for nothing but `mu`, held for a few
 * instructions.
 */

#define SLAB_SIZE   ((size_t)4 << 20)
#define SLAB_TAIL   (BZ2_MAX_BLOCK_BYTES + 64)
#define MAX_SLABS   160
#define CAND_CAP    1024
#define OUT_HELD    ((size_t)4 << 20) /* larger outputs are expanded again as they are written */
#define PIECE       BZ2_PIECE         /* pieces of such outputs */
#define JOB_SKIPPED ZN_ERR_CANCELED

struct slab {
	uint64_t pos;        /* the input offset of data[0] */
	const uint8_t *data; /* its own len bytes, then the next slab's first bytes */
	size_t len, avail;   /* own bytes; readable bytes (avail final once `final`) */
	uint8_t *buf;        /* the buffer for read input (SLAB_SIZE + SLAB_TAIL), else NULL */
	int final;           /* avail holds the tail, or no input follows */
	unsigned refs;       /* candidates of this slab pending or in flight (driver only) */
};

struct bunzip2;

struct job {
	struct bunzip2 *z; /* set by the driver before the job is queued: */
	uint64_t bit;      /* the candidate, in bits from the input's start */
	const uint8_t *in; /* the slab's bytes from the candidate's byte on */
	size_t in_len;     /* how many, at most BZ2_MAX_BLOCK_BYTES */
	int capped;        /* in_len was cut to that bound (the input goes on) */
	uint64_t slab;     /* the slab it starts in */
	struct zn_pool_group g;
	/* Written by the job, read by the driver once it returned: */
	zn_result r;      /* JOB_SKIPPED: skipped as stale */
	uint64_t end_bit; /* where the block ended, in bits from the input's start */
	uint32_t n, crc;  /* bytes before RLE1; the stored CRC (checked against the output) */
	uint8_t *out;     /* the output, or, when `deferred`, the n bytes before RLE1 */
	size_t out_len, out_cap;
	int deferred;
};

enum { ST_HEADER, ST_BLOCK, ST_DONE };
/* What the stitcher needs to go on. */
enum { GO, NEED_INPUT, NEED_JOB, WAIT_JOB, DONE, FAILED };

struct bunzip2 {
	/* Fixed once set up. */
	struct zn_bunzip2_options opt; /* the caller's, at this library's size */
	zn_read_fn read;
	void *read_ctx;
	const uint8_t *mem; /* zn_bunzip2_mem's input, else NULL */
	uint64_t mem_len;
	zn_sink_fn sink;
	void *sink_ctx;
	struct zn_pool *pool;
	unsigned threads, window, max_slabs;
	size_t slab_size; /* SLAB_SIZE (tests may make it smaller) */
	struct bz2_kernels k;
	/* Slabs [first, next), slab i at slabs[i % MAX_SLABS]; driver only. */
	struct slab slabs[MAX_SLABS];
	uint64_t slab_first, slab_next;
	uint8_t *spare[MAX_SLABS]; /* freed slab buffers, for reuse */
	unsigned nspare;
	uint64_t in_pos; /* input bytes read (or viewed) so far */
	int eof;
	/* The scan: slab scan_slab from byte scan_at; candidates waiting in a ring. */
	uint64_t scan_slab;
	size_t scan_at;
	uint64_t cand[CAND_CAP], cand_slab[CAND_CAP];
	size_t cand_head, cand_n;
	/* Jobs in flight: a ring of `window`, oldest at job_head. */
	struct job *jobs;
	size_t job_head, job_n;
	/* The stock of block arrays, shared with the jobs under mu. */
	pthread_mutex_t mu;
	struct bz2_block **stock;
	unsigned nstock, nmade;
	/* The stitcher (driver only), and its position for the jobs. */
	int state;
	uint64_t expect; /* the bit where the next header, block or end must start */
	unsigned level;
	uint32_t combined;
	_Atomic uint64_t confirmed;
	zn_result err;
	uint64_t err_at;
	uint8_t *piece; /* the driver's buffer for expanding deferred outputs */
	struct zn_bunzip2_info info;
};

/* ---- block arrays -------------------------------------------------------------------------- */

static struct bz2_block *borrow_block(struct bunzip2 *z)
{
	struct bz2_block *b = NULL;
	pthread_mutex_lock(&z->mu);
	if (z->nstock)
		b = z->stock[--z->nstock];
	pthread_mutex_unlock(&z->mu);
	if (b)
		return b;
	b = malloc(sizeof(*b));
	if (b && zn_bz2_block_init(b, zn_cpu_features()) != ZN_OK) {
		free(b);
		b = NULL;
	}
	if (b) {
		pthread_mutex_lock(&z->mu);
		z->nmade++;
		pthread_mutex_unlock(&z->mu);
	}
	return b;
}

static void give_block(struct bunzip2 *z, struct bz2_block *b)
{
	pthread_mutex_lock(&z->mu);
	z->stock[z->nstock++] = b; /* at most `threads` jobs run at once: the stock holds them */
	pthread_mutex_unlock(&z->mu);
}

/* ---- the job: one candidate decoded as a block ---------------------------------------------- */

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 1;
	uint8_t *n = realloc(*buf, need);
	if (!n)
		return 0;
	*buf = n;
	*cap = need;
	return 1;
}

/* The output of a decoded block and its CRC: expanded into the job's buffer, or, past OUT_HELD,
 * the block before RLE1 kept and its output expanded in pieces into the walk's scratch (free by
 * now) only for the CRC. */
static zn_result finish_output(struct job *j, struct bz2_block *b)
{
	uint32_t crc = ~0u;
	struct bz2_rle1 r;
	zn_bz2_rle1_start(&r, b->ll, b->n);
	j->deferred = b->out_len > OUT_HELD;
	if (!j->deferred) {
		if (!grow(&j->out, &j->out_cap, (size_t)b->out_len + BZ2_SLACK))
			return ZN_ERR_NOMEM;
		j->out_len = zn_bz2_rle1_expand(&r, j->out, (size_t)b->out_len);
		crc = b->k.crc(crc, j->out, j->out_len);
	} else {
		if (!grow(&j->out, &j->out_cap, (size_t)b->n + BZ2_SLACK))
			return ZN_ERR_NOMEM;
		memcpy(j->out, b->ll, b->n);
		j->out_len = b->out_len;
		uint8_t *scratch = b->walk.scratch;
		size_t got;
		while ((got = zn_bz2_rle1_expand(&r, scratch, PIECE)) > 0)
			crc = b->k.crc(crc, scratch, got);
	}
	return ~crc == b->crc ? ZN_OK : ZN_ERR_CHECKSUM;
}

static void run_job(void *arg)
{
	struct job *j = arg;
	struct bunzip2 *z = j->z;
	if (j->bit < atomic_load_explicit(&z->confirmed, memory_order_relaxed)) {
		j->r = JOB_SKIPPED; /* inside a block already taken */
		return;
	}
	struct bz2_block *b = borrow_block(z);
	if (!b) {
		j->r = ZN_ERR_NOMEM;
		return;
	}
	zn_result r = zn_bz2_read_block(b, j->in, j->in_len, j->bit % 8, BZ2_MAX_BLOCK);
	if (r == ZN_ERR_TRUNCATED && j->capped)
		r = ZN_ERR_LIMIT;
	if (r == ZN_OK) {
		j->end_bit = j->bit - j->bit % 8 + b->end_bit;
		j->n = b->n;
		j->crc = b->crc;
		r = zn_bz2_unsort(b);
		if (r == ZN_OK)
			r = finish_output(j, b);
	}
	give_block(z, b);
	j->r = r;
}

/* ---- input --------------------------------------------------------------------------------- */

static struct slab *slab(struct bunzip2 *z, uint64_t i)
{
	return &z->slabs[i % MAX_SLABS];
}

/* Reads up to n bytes, as many as the input has; -1 on failure. */
static int64_t read_full(struct bunzip2 *z, uint8_t *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		int64_t k = z->read(z->read_ctx, buf + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (int64_t)got;
}

/* The next slab of input: a view of memory, or read into a buffer, whose first bytes also go
 * to the previous slab's tail. 1 if read, 0 at the end, -1 on failure (z->err). */
static int read_slab(struct bunzip2 *z)
{
	struct slab *prev = z->slab_next > z->slab_first ? slab(z, z->slab_next - 1) : NULL;
	uint64_t pos = z->in_pos;
	struct slab *s = slab(z, z->slab_next);
	*s = (struct slab){.pos = pos};
	if (z->mem) {
		if (pos >= z->mem_len) {
			z->eof = 1;
			return 0;
		}
		s->data = z->mem + pos;
		s->len = (size_t)ZN_MIN(z->slab_size, z->mem_len - pos);
		s->avail = (size_t)(z->mem_len - pos);
		s->final = 1;
		z->eof = pos + s->len == z->mem_len;
		z->in_pos += s->len;
		z->slab_next++;
		return 1;
	}
	s->buf = z->nspare ? z->spare[--z->nspare] : malloc(z->slab_size + SLAB_TAIL);
	if (!s->buf) {
		z->err = ZN_ERR_NOMEM;
		return -1;
	}
	int64_t got = read_full(z, s->buf, z->slab_size);
	if (got < 0) {
		z->spare[z->nspare++] = s->buf;
		z->err = ZN_ERR_IO;
		z->err_at = pos;
		return -1;
	}
	if (prev && !prev->final) { /* its tail */
		size_t t = (size_t)ZN_MIN((size_t)got, SLAB_TAIL);
		memcpy(prev->buf + prev->len, s->buf, t);
		prev->avail = prev->len + t;
		prev->final = 1;
	}
	if (got == 0) {
		z->spare[z->nspare++] = s->buf;
		z->eof = 1;
		return 0;
	}
	s->data = s->buf;
	s->len = s->avail = (size_t)got;
	s->final = z->eof = (size_t)got < z->slab_size;
	z->in_pos += (size_t)got;
	z->slab_next++;
	return 1;
}

/* Whether another slab may be read now. */
static int may_read(const struct bunzip2 *z)
{
	return !z->eof && z->slab_next - z->slab_first < z->max_slabs;
}

static void drop_slab(struct bunzip2 *z)
{
	struct slab *s = slab(z, z->slab_first++);
	if (s->buf)
		z->spare[z->nspare++] = s->buf;
}

/* Slabs the stitcher and the scan have passed, with no candidate pending or in flight. */
static void release_slabs(struct bunzip2 *z)
{
	while (z->slab_first < z->slab_next && z->slab_first < z->scan_slab) {
		struct slab *s = slab(z, z->slab_first);
		if (s->refs || z->expect / 8 < s->pos + s->len)
			break;
		drop_slab(z);
	}
}

/* The slab holding input byte `at`, or NULL if it is not read (or gone). */
static struct slab *slab_with(struct bunzip2 *z, uint64_t at)
{
	for (uint64_t i = z->slab_first; i < z->slab_next; i++) {
		struct slab *s = slab(z, i);
		if (at >= s->pos && at < s->pos + s->len)
			return s;
	}
	return NULL;
}

/* ---- the scan and the jobs ----------------------------------------------------------------- */

/* More candidates into the ring from the scan's slab, once its tail is in. 1 if it scanned
 * something, 0 if the slab it needs is not read yet. */
static int scan_more(struct bunzip2 *z)
{
	if (z->scan_slab >= z->slab_next)
		return 0;
	struct slab *s = slab(z, z->scan_slab);
	if (!s->final)
		return 0;
	if (z->scan_at >= s->len) {
		z->scan_slab++;
		z->scan_at = 0;
		return 1;
	}
	uint64_t pos[CAND_CAP];
	size_t room = CAND_CAP - z->cand_n, resume;
	size_t n = z->k.scan(s->data + z->scan_at, s->len - z->scan_at, s->avail - z->scan_at, pos,
	                     room, &resume);
	for (size_t i = 0; i < n; i++) {
		size_t at = (z->cand_head + z->cand_n++) % CAND_CAP;
		z->cand[at] = 8 * (s->pos + z->scan_at) + pos[i];
		z->cand_slab[at] = z->scan_slab;
		s->refs++;
	}
	z->scan_at += resume;
	return 1;
}

/* Queue the oldest candidate as a job (one behind the stitcher is dropped instead). */
static void dispatch(struct bunzip2 *z)
{
	uint64_t bit = z->cand[z->cand_head], si = z->cand_slab[z->cand_head];
	z->cand_head = (z->cand_head + 1) % CAND_CAP;
	z->cand_n--;
	struct slab *s = slab(z, si);
	if (bit < z->expect) {
		s->refs--;
		return;
	}
	struct job *j = &z->jobs[(z->job_head + z->job_n++) % z->window];
	size_t off = (size_t)(bit / 8 - s->pos), len = s->avail - off;
	j->bit = bit;
	j->slab = si;
	j->in = s->data + off;
	j->capped = len > BZ2_MAX_BLOCK_BYTES;
	j->in_len = j->capped ? BZ2_MAX_BLOCK_BYTES : len;
	j->r = ZN_OK;
	atomic_store(&j->g.left, 0);
	zn_pool_add_to(z->pool, &j->g, run_job, j);
}

/* Give the pipeline what it lacks: input the stitcher waits for, jobs while the window has room
 * (scanning, and reading for the scan). Returns 1 if it did anything. */
static int feed(struct bunzip2 *z, int need_input)
{
	if (need_input && may_read(z)) {
		read_slab(z);
		return 1;
	}
	int did = 0;
	while (z->job_n < z->window && !z->err) {
		if (z->cand_n) {
			dispatch(z);
			did = 1;
		} else if (scan_more(z)) {
			did = 1;
		} else if (may_read(z)) {
			if (read_slab(z) < 0)
				return 1;
			did = 1;
		} else {
			break;
		}
	}
	return did;
}

/* ---- the stitcher -------------------------------------------------------------------------- */

static int fail(struct bunzip2 *z, zn_result r, uint64_t at)
{
	z->err = r;
	z->err_at = at;
	return FAILED;
}

/* nbits (<= 48) bits at bit `bit` of the input into *v: GO, NEED_INPUT, or FAILED (it ends). */
static int peek(struct bunzip2 *z, uint64_t bit, unsigned nbits, uint64_t *v)
{
	uint64_t at = bit / 8;
	size_t need = (bit % 8 + nbits + 7) / 8;
	struct slab *s = slab_with(z, at);
	if (!s)
		return z->eof ? fail(z, ZN_ERR_TRUNCATED, at) : NEED_INPUT;
	size_t off = (size_t)(at - s->pos);
	if (s->avail - off < need)
		return s->final ? fail(z, ZN_ERR_TRUNCATED, s->pos + s->avail) : NEED_INPUT;
	uint64_t w = 0;
	for (size_t i = 0; i < 8; i++)
		w = w << 8 | (off + i < s->avail ? s->data[off + i] : 0);
	*v = (w << (bit % 8)) >> (64 - nbits);
	return GO;
}

/* Wait for every job in flight and drop them, and the candidates pending: the slabs they read
 * may then be reused. */
static void drain(struct bunzip2 *z)
{
	atomic_store(&z->confirmed, UINT64_MAX); /* queued ones skip */
	for (; z->job_n; z->job_n--) {
		struct job *j = &z->jobs[z->job_head];
		zn_pool_join(z->pool, &j->g);
		slab(z, j->slab)->refs--;
		z->job_head = (z->job_head + 1) % z->window;
	}
	for (; z->cand_n; z->cand_n--) {
		slab(z, z->cand_slab[z->cand_head])->refs--;
		z->cand_head = (z->cand_head + 1) % CAND_CAP;
	}
}

static int pass_on(struct bunzip2 *z, const uint8_t *p, size_t n, uint64_t at)
{
	zn_result r = z->sink && n ? z->sink(z->sink_ctx, p, n) : ZN_OK;
	z->info.out_len += n;
	return r == ZN_OK ? GO : fail(z, r, at);
}

/* Pass everything from input byte `at` on to the sink, as it is (pass_unknown): what is read,
 * then the rest a slab at a time. */
static int pass_rest(struct bunzip2 *z, uint64_t at)
{
	drain(z);
	for (; z->slab_first < z->slab_next; drop_slab(z)) {
		struct slab *s = slab(z, z->slab_first);
		size_t off = at > s->pos ? (size_t)ZN_MIN(at - s->pos, s->len) : 0;
		if (pass_on(z, s->data + off, s->len - off, s->pos + off) != GO)
			return FAILED;
	}
	for (;;) {
		int r = z->eof ? 0 : read_slab(z);
		if (r < 0)
			return FAILED;
		if (r == 0)
			break;
		struct slab *s = slab(z, z->slab_first);
		s->final = 1; /* no tail wanted */
		if (pass_on(z, s->data, s->len, s->pos) != GO)
			return FAILED;
		drop_slab(z);
	}
	z->state = ST_DONE;
	return DONE;
}

/* Input that is not a stream where one may start, at byte `at` having read `have` bytes that
 * match "BZh1".."BZh9" so far, and `ended`: whether the input ends there. */
static int not_a_stream(struct bunzip2 *z, uint64_t at, size_t have, int ended)
{
	if (z->opt.pass_unknown)
		return pass_rest(z, at);
	if (ended && have < 4 && (have > 0 || !z->info.streams))
		return fail(z, ZN_ERR_TRUNCATED, at + have); /* bzip2: "ends unexpectedly" */
	z->info.in_used = at;
	if (!z->info.streams)
		return fail(z, ZN_ERR_BAD_HEADER, at);
	z->state = ST_DONE;
	z->err = ZN_ERR_TRAILING_GARBAGE;
	return DONE;
}

/* "BZh" and the level at byte expect / 8. */
static int stream_header(struct bunzip2 *z)
{
	uint64_t at = z->expect / 8;
	static const char magic[3] = {'B', 'Z', 'h'};
	size_t have = 0;
	uint8_t h[4];
	struct slab *s = slab_with(z, at);
	if (s) {
		have = ZN_MIN(4, s->avail - (size_t)(at - s->pos));
		memcpy(h, s->data + (at - s->pos), have);
	}
	if (have < 4 && !(s ? s->final : z->eof))
		return NEED_INPUT;
	if (!have && z->info.streams) { /* the end, after a stream */
		z->info.in_used = at;
		z->state = ST_DONE;
		return DONE;
	}
	for (size_t i = 0; i < have; i++)
		if (i < 3 ? h[i] != magic[i] : (h[3] < '1' || h[3] > '9'))
			return not_a_stream(z, at, i, 0);
	if (have < 4)
		return not_a_stream(z, at, have, 1);
	z->level = h[3] - '0';
	z->expect += 32;
	z->combined = 0;
	z->state = ST_BLOCK;
	return GO;
}

/* The end-of-stream mark at `expect`: the combined CRC, then the next stream at a byte. */
static int stream_end(struct bunzip2 *z)
{
	uint64_t crc;
	int s = peek(z, z->expect + 48, 32, &crc);
	if (s != GO)
		return s;
	if ((uint32_t)crc != z->combined)
		return fail(z, ZN_ERR_CHECKSUM, z->expect / 8);
	z->expect = (z->expect + 80 + 7) & ~(uint64_t)7;
	z->info.streams++;
	z->info.in_used = z->expect / 8;
	z->state = ST_HEADER;
	return GO;
}

/* Write a taken block's output. */
static int write_block(struct bunzip2 *z, struct job *j)
{
	z->info.out_len += j->out_len;
	if (!z->sink)
		return GO;
	if (!j->deferred) {
		zn_result r = j->out_len ? z->sink(z->sink_ctx, j->out, j->out_len) : ZN_OK;
		return r == ZN_OK ? GO : fail(z, r, j->bit / 8);
	}
	if (!z->piece && !(z->piece = malloc(PIECE + BZ2_SLACK)))
		return fail(z, ZN_ERR_NOMEM, j->bit / 8);
	struct bz2_rle1 r;
	zn_bz2_rle1_start(&r, j->out, j->n);
	size_t got;
	while ((got = zn_bz2_rle1_expand(&r, z->piece, PIECE)) > 0) {
		zn_result sr = z->sink(z->sink_ctx, z->piece, got);
		if (sr != ZN_OK)
			return fail(z, sr, j->bit / 8);
	}
	return GO;
}

/* Jobs and candidates behind `expect` (false candidates), once done, dropped. */
static void prune(struct bunzip2 *z)
{
	while (z->job_n) {
		struct job *j = &z->jobs[z->job_head];
		if (j->bit >= z->expect || atomic_load(&j->g.left))
			break;
		slab(z, j->slab)->refs--;
		z->job_head = (z->job_head + 1) % z->window;
		z->job_n--;
	}
	while (!z->job_n && z->cand_n && z->cand[z->cand_head] < z->expect) {
		slab(z, z->cand_slab[z->cand_head])->refs--;
		z->cand_head = (z->cand_head + 1) % CAND_CAP;
		z->cand_n--;
	}
}

/* The block whose magic is at `expect`, taken once its job is done. */
static int take_block(struct bunzip2 *z)
{
	prune(z);
	if (z->job_n) {
		struct job *j = &z->jobs[z->job_head];
		if (j->bit < z->expect || atomic_load(&j->g.left))
			return WAIT_JOB;
		if (j->bit > z->expect) /* the scan found no magic where the stitcher reads one */
			return fail(z, ZN_ERR_CORRUPT, z->expect / 8);
		z->job_head = (z->job_head + 1) % z->window;
		z->job_n--;
		slab(z, j->slab)->refs--;
		if (j->r == ZN_ERR_TRUNCATED) /* it runs to the end of the input */
			return fail(z, j->r, j->in_len + z->expect / 8);
		if (j->r != ZN_OK)
			return fail(z, j->r == JOB_SKIPPED ? ZN_ERR_CORRUPT : j->r, z->expect / 8);
		if (j->n > z->level * 100000u)
			return fail(z, ZN_ERR_CORRUPT, z->expect / 8);
		z->combined = (z->combined << 1 | z->combined >> 31) ^ j->crc;
		int s = write_block(z, j);
		if (s != GO)
			return s;
		z->info.blocks++;
		z->expect = j->end_bit;
		atomic_store_explicit(&z->confirmed, z->expect, memory_order_relaxed);
		return GO;
	}
	return NEED_JOB;
}

/* Take as much as is ready, in order. Never waits. */
static int stitch(struct bunzip2 *z)
{
	for (;;) {
		int s;
		if (z->state == ST_DONE)
			return DONE;
		if (z->state == ST_HEADER) {
			s = stream_header(z);
		} else {
			uint64_t m;
			s = peek(z, z->expect, 48, &m);
			if (s == GO && m == BZ2_EOS_MAGIC)
				s = stream_end(z);
			else if (s == GO && m == BZ2_BLOCK_MAGIC)
				s = take_block(z);
			else if (s == GO)
				s = fail(z, ZN_ERR_CORRUPT, z->expect / 8);
		}
		prune(z);
		release_slabs(z);
		if (s != GO)
			return s;
	}
}

/* ---- the driver ---------------------------------------------------------------------------- */

#ifdef ZN_TEST_HOOKS
/* False candidates for the tests, every ZN_BZ2_FAKE_CANDIDATES bytes (at bit 3): the real scan's
 * candidates merged with them, half of cap each. */
static size_t scan_with_fakes(const uint8_t *in, size_t len, size_t avail, uint64_t *pos,
                              size_t cap, size_t *resume)
{
	size_t every = (size_t)strtoull(getenv("ZN_BZ2_FAKE_CANDIDATES"), NULL, 10);
	zn_bz2_scan_fn real = zn_bz2_select_scan(zn_cpu_features(), NULL);
	uint64_t found[CAND_CAP];
	size_t half = ZN_MAX(cap / 2, 1), upto = ZN_MIN(len, half * every), n = 0, k = 0;
	size_t nreal = real(in, upto, avail, found, ZN_MIN(half, CAND_CAP), resume);
	for (size_t b = 0; b < *resume && n < cap; b += every) {
		for (; k < nreal && found[k] < 8 * (uint64_t)b + 3 && n < cap; k++)
			pos[n++] = found[k];
		if (n < cap && (k == nreal || found[k] != 8 * (uint64_t)b + 3))
			pos[n++] = 8 * (uint64_t)b + 3;
	}
	for (; k < nreal && n < cap; k++)
		pos[n++] = found[k];
	if (n == cap && (k < nreal || *resume < upto)) /* resume at the last byte given */
		*resume = (size_t)(pos[n - 1] / 8) + 1;
	else if (*resume == upto && upto < len)
		*resume = upto;
	return n;
}
#endif

/* Test hooks (ZN_TEST_HOOKS builds): ZN_BZ2_SLAB_SIZE makes slabs smaller, so that small inputs
 * cross their bounds; ZN_BZ2_FAKE_CANDIDATES=N adds a false candidate every N bytes. */
static void test_hooks(struct bunzip2 *z)
{
#ifdef ZN_TEST_HOOKS
	const char *e = getenv("ZN_BZ2_SLAB_SIZE");
	if (e && strtoull(e, NULL, 10) >= 64)
		z->slab_size = (size_t)strtoull(e, NULL, 10);
	e = getenv("ZN_BZ2_FAKE_CANDIDATES");
	if (e && strtoull(e, NULL, 10) > 0)
		z->k.scan = scan_with_fakes;
#else
	(void)z;
#endif
}

static zn_result drive(struct bunzip2 *z)
{
	for (;;) {
		int s = stitch(z);
		if (s == DONE || s == FAILED)
			break;
		int did = feed(z, s == NEED_INPUT);
		if (z->err)
			break;
		if (did)
			continue;
		if (z->job_n) { /* the oldest job: the stitcher needs it, or it holds the window */
			zn_pool_join(z->pool, &z->jobs[z->job_head].g);
			continue;
		}
		/* Nothing in flight, nothing to read or scan, and the stitcher still waits: a magic
		 * the scan did not find (cannot happen), or input it cannot have. */
		fail(z, s == NEED_INPUT ? ZN_ERR_TRUNCATED : ZN_ERR_CORRUPT, z->expect / 8);
		break;
	}
	return z->err;
}

static zn_result setup(struct bunzip2 *z, const struct zn_bunzip2_options *opt)
{
	zn_bunzip2_options_init(&z->opt);
	if (opt && zn_sized_in(&z->opt, sizeof(z->opt), opt, ZN_FIRST_SIZE_bunzip2_options))
		return ZN_ERR_INVALID_ARG;
	unsigned threads = z->opt.threads ? z->opt.threads : zn_cpu_count();
	z->threads = ZN_MIN(threads, ZN_THREADS_MAX);
	z->window = z->threads == 1 ? 1 : 2 * z->threads + 2;
	z->max_slabs = ZN_MIN(3 + z->threads / 2, MAX_SLABS - 1);
	z->info.struct_size = sizeof(z->info);
	zn_bz2_kernels(&z->k, zn_cpu_features());
	z->slab_size = SLAB_SIZE;
	test_hooks(z);
	pthread_mutex_init(&z->mu, NULL);
	z->jobs = calloc(z->window, sizeof(*z->jobs));
	z->stock = calloc(z->threads + 1, sizeof(*z->stock));
	if (!z->jobs || !z->stock)
		return ZN_ERR_NOMEM;
	for (unsigned i = 0; i < z->window; i++)
		z->jobs[i].z = z;
	return zn_pool_new(&z->pool, z->threads, z->window);
}

static void teardown(struct bunzip2 *z)
{
	/* Jobs still queued or running (after an error or the end) skip or finish. */
	atomic_store(&z->confirmed, UINT64_MAX);
	if (z->pool)
		zn_pool_wait(z->pool);
	zn_pool_free(z->pool);
	for (unsigned i = 0; z->jobs && i < z->window; i++)
		free(z->jobs[i].out);
	free(z->jobs);
	for (unsigned i = 0; i < z->nstock; i++) {
		zn_bz2_block_free(z->stock[i]);
		free(z->stock[i]);
	}
	free(z->stock);
	for (uint64_t i = z->slab_first; i < z->slab_next; i++)
		free(slab(z, i)->buf);
	for (unsigned i = 0; i < z->nspare; i++)
		free(z->spare[i]);
	free(z->piece);
	pthread_mutex_destroy(&z->mu);
}

static zn_result run(struct bunzip2 *z, const struct zn_bunzip2_options *opt,
                     struct zn_bunzip2_info *info)
{
	zn_result r = setup(z, opt);
	if (r == ZN_OK)
		r = drive(z);
	if (r != ZN_OK && r != ZN_ERR_TRAILING_GARBAGE)
		z->info.in_used = z->err_at;
	teardown(z);
	if (info)
		zn_sized_out(info, &z->info, sizeof(z->info), ZN_FIRST_SIZE_bunzip2_info);
	return r;
}

zn_result zn_bunzip2(const struct zn_bunzip2_options *opt, zn_read_fn read, void *read_ctx,
                     zn_sink_fn sink, void *sink_ctx, struct zn_bunzip2_info *info)
{
	if (!read)
		return ZN_ERR_INVALID_ARG;
	struct bunzip2 *z = calloc(1, sizeof(*z));
	if (!z)
		return ZN_ERR_NOMEM;
	z->read = read;
	z->read_ctx = read_ctx;
	z->sink = sink;
	z->sink_ctx = sink_ctx;
	zn_result r = run(z, opt, info);
	free(z);
	return r;
}

zn_result zn_bunzip2_mem(const struct zn_bunzip2_options *opt, const void *in, size_t in_len,
                         zn_sink_fn sink, void *sink_ctx, struct zn_bunzip2_info *info)
{
	if (!in && in_len)
		return ZN_ERR_INVALID_ARG;
	struct bunzip2 *z = calloc(1, sizeof(*z));
	if (!z)
		return ZN_ERR_NOMEM;
	static const uint8_t nothing[1];
	z->mem = in_len ? in : nothing;
	z->mem_len = in_len;
	z->sink = sink;
	z->sink_ctx = sink_ctx;
	zn_result r = run(z, opt, info);
	free(z);
	return r;
}

void zn_bunzip2_options_init(struct zn_bunzip2_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->struct_size = sizeof(*opt);
}

void zn_bunzip2_info_init(struct zn_bunzip2_info *info)
{
	memset(info, 0, sizeof(*info));
	info->struct_size = sizeof(*info);
}
