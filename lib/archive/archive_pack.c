/* SPDX-License-Identifier: MIT */
/* archive_pack.c - placing file contents into blocks: small files packed, large files in chunks. */
#include "archive_writer.h"

/* Up to `max` bytes from a caller's stream: fewer only at its end. 0 or an errno value. */
static int read_upto(struct source *src, uint8_t *dst, uint64_t max, uint64_t *got)
{
	for (*got = 0; *got < max;) {
		size_t want = (size_t)ZN_MIN(max - *got, (uint64_t)1 << 30);
		errno = 0;
		int64_t k = src->read(src->rctx, dst + *got, want);
		if (k == 0)
			break;
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno ? errno : EIO;
		if (k > (int64_t)want)
			return EINVAL;
		*got += (uint64_t)k;
	}
	src->pos += *got;
	return 0;
}

/* Read exactly n bytes. Returns 0, or an errno value (EIO-like), or -1 if the file ended early. */
int wr_source_read(struct source *src, uint8_t *dst, uint64_t n)
{
	if (src->read) {
		uint64_t got;
		int err = read_upto(src, dst, n, &got);
		return err ? err : got < n ? -1 : 0;
	}
	if (src->fd < 0) {
		memcpy(dst, src->mem + src->pos, n);
		src->pos += n;
		return 0;
	}
	uint64_t got; /* at pos: the writer reads some chunks itself (defer_read) */
	int err = wr_pread_upto(src->fd, dst, n, src->pos, &got);
	src->pos += got;
	return err ? err : got < n ? -1 : 0;
}

/* An entry from a caller's stream that failed (err: an errno value) or ended early (-1) is
 * left out and named; the caller gets the result. Its room in a block, if any, is zeroed. */
static zn_result stream_failed(struct zn_writer *w, uint64_t idx, int err, uint8_t *room)
{
	struct went *e = &w->ents[idx];
	if (room)
		memset(room, 0, e->size);
	e->dropped = 1;
	if (err == -1) {
		wr_report(w, e->path, ZN_ERR_TRUNCATED,
		          "stream ended before the entry's size; not stored");
		return ZN_ERR_TRUNCATED;
	}
	char msg[256];
	snprintf(msg, sizeof(msg), "stream read failed: %s; not stored", strerror(err));
	wr_report(w, e->path, ZN_ERR_IO, msg);
	return ZN_ERR_IO;
}

/* A file that could not be read is left out. A small one keeps its room in the block being
 * packed (the block's layout is already fixed): `room` is zeroed, so the archive holds neither
 * stale bytes of an earlier block nor a part of the file, and stays the same whatever the
 * timing. */
void wr_report_read_failure(struct zn_writer *w, struct went *e, int err, uint8_t *room)
{
	if (room)
		memset(room, 0, e->size);
	wr_report_errno(w, e->path, "read failed; not stored", err);
	e->dropped = 1;
}

/* A small file that ended after `got` of the bytes the walk saw (it shrank meanwhile, or it is
 * one of the kernel's files whose size is a guess) is stored as read, with a warning. When it
 * is placed in a block (placed; its room at `room`), the rest of its room is zeroed and given
 * back when the block is compacted. Large files are padded with zeros instead (emit_content). */
void wr_store_shrunk(struct zn_writer *w, uint64_t idx, uint64_t got, uint8_t *room, int placed)
{
	struct went *e = &w->ents[idx];
	wr_report(w, e->path, ZN_ERR_CHANGED, "file shrank while being read; stored as read");
	e->shrunk = 1;
	if (placed) {
		struct slot *s = &w->pipe.slots[w->packs[idx].slot];
		for (size_t i = s->nsegs; i-- > 0;)
			if (s->segs[i].entry == idx) {
				s->segs[i].len = got;
				break;
			}
		memset(room + got, 0, e->size - got);
	}
	e->size = got;
}

/* A file that changed while read (wr_changed()) is stored as read, with a warning. */
void wr_check_unchanged(struct zn_writer *w, const struct went *e, uint64_t size,
                        const struct timespec *before, int64_t sec, int64_t nsec)
{
	if (wr_changed(e, size, before, sec, nsec))
		wr_report(w, e->path, ZN_ERR_CHANGED, "file changed as we read it; stored as read");
}

/* The same for a large file the producer has read to its end (src, an open file). */
static void check_file_unchanged(struct zn_writer *w, uint64_t idx, const struct source *src)
{
	struct stat st;
	if (src->fd >= 0 && !w->ents[idx].dropped && !fstat(src->fd, &st))
		wr_check_unchanged(w, &w->ents[idx], (uint64_t)st.st_size, &src->mtim,
		                   st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

void wr_report_removed(struct zn_writer *w, const char *path)
{
	wr_report(w, path, ZN_ERR_CHANGED, "file removed before we read it; not stored");
}

void wr_report_open_failure(struct zn_writer *w, struct went *e, int err, uint8_t *room)
{
	if (room)
		memset(room, 0, e->size);
	if (err == ENOENT)
		wr_report_removed(w, e->path);
	else
		wr_report_errno(w, e->path, "cannot open; not stored", err);
	e->dropped = err == ENOENT ? DROPPED_REMOVED : 1;
}

/* Whether the writer should read chunk [off, off + n) of a large file itself and store it as it
 * is (slot.rfd): a known-compressed type, or samples that do not shrink, the same samples of the
 * same bytes by which a worker would have stored it (so the archive is the same). 1: it should;
 * 2: the samples shrink (compress it, no need to sample again); 0: not sampled. */
static int defer_read(struct zn_writer *w, int klass, const struct source *src, uint64_t off,
                      uint64_t n)
{
	if (klass == CLASS_STORE)
		return 1;
	uint64_t at[3];
	if (!wr_sample_starts(n, at))
		return 0;
	const size_t tmp_cap = ZSTD_compressBound(SAMPLE_PIECE);
	if (!w->pipe.sample_cctx && !(w->pipe.sample_cctx = ZSTD_createCCtx()))
		return 0;
	if (!w->pipe.sample_buf && !(w->pipe.sample_buf = malloc(3 * SAMPLE_PIECE + tmp_cap)))
		return 0;
	const uint8_t *p[3];
	for (int i = 0; i < 3; i++) {
		uint8_t *d = w->pipe.sample_buf + i * SAMPLE_PIECE;
		uint64_t got;
		if (wr_pread_upto(src->fd, d, SAMPLE_PIECE, off + at[i], &got) ||
		    got < SAMPLE_PIECE)
			return 0; /* read as usual, which tells what is wrong */
		p[i] = d;
	}
	uint8_t *tmp = w->pipe.sample_buf + 3 * SAMPLE_PIECE;
	return wr_samples_say_store(w->pipe.sample_cctx, p, tmp, tmp_cap) ? 1 : 2;
}

/* A stream of unknown length (ZN_SIZE_UNKNOWN). The first chunk is read into the aside buffer:
 * less than a chunk in all is a small file, placed from there. A longer one goes into slots a
 * chunk behind the reading, copied from the aside buffer, so that whether a chunk is the file's
 * last is known when it is queued. */
static zn_result emit_unsized(struct zn_writer *w, uint64_t idx, struct source *src)
{
	const uint64_t chunk = w->opt.chunk_size;
	uint8_t *buf = wr_aside_buffer(w);
	if (!buf)
		return ZN_ERR_NOMEM;
	uint64_t n;
	int err = read_upto(src, buf, chunk, &n);
	if (err)
		return stream_failed(w, idx, err, NULL);
	if (n < chunk) {
		w->ents[idx].size = n;
		struct source mem = {.fd = -1, .mem = buf};
		return wr_emit_content(w, idx, &mem);
	}
	int klass = wr_class_of(w, &w->ents[idx]);
	w->ents[idx].block_offset = 0;
	uint64_t done = 0;
	for (int first = 1;; first = 0) {
		struct slot *s;
		RETURN_IF_ERROR(wr_acquire_slot(w, klass, &s));
		memcpy(s->in, buf, n);
		uint64_t next = 0;
		if (n == chunk && (err = read_upto(src, buf, chunk, &next)) != 0) {
			wr_release_slot(w, s); /* earlier chunks stay as unreferenced bytes */
			return stream_failed(w, idx, err, NULL);
		}
		RETURN_IF_ERROR(wr_add_seg(w, s, idx, n, first, next == 0));
		s->usize = n;
		wr_queue_slot(w, s);
		done += n;
		w->packs[idx].slot = (uint32_t)(s - w->pipe.slots);
		w->packs[idx].gen = s->gen;
		if (!next)
			break;
		n = next;
	}
	w->ents[idx].size = done;
	return ZN_OK;
}

/* Place the content of entry `idx` (e->size bytes from src) into blocks. */
zn_result wr_emit_content(struct zn_writer *w, uint64_t idx, struct source *src)
{
	struct went *e = &w->ents[idx];
	uint64_t size = e->size, chunk = w->opt.chunk_size;
	if (size == ZN_SIZE_UNKNOWN && src->read)
		return emit_unsized(w, idx, src);
	int klass = wr_class_of(w, e);
	if (size == 0) {
		if (e->has_digest)
			zn_sha256("", 0, e->sha);
		return ZN_OK;
	}
	if (size < chunk && src->fd < 0) { /* small files on disk are read in batches */
		struct slot *s;
		uint64_t off;
		int full;
		RETURN_IF_ERROR(wr_place_small(w, idx, &s, &off, &full));
		if (full && !src->read)
			return wr_place_aside(w, idx, src->mem + src->pos);
		uint8_t *dst = full ? wr_aside_buffer(w) : s->in + off;
		if (!dst)
			return ZN_ERR_NOMEM;
		int err = wr_source_read(src, dst, size); /* from memory: always 0 */
		if (err) {
			zn_result r = stream_failed(w, idx, err, full ? NULL : dst);
			wr_compact(w, full ? NULL : s);
			return r;
		}
		if (full)
			return wr_place_aside(w, idx, dst);
		wr_judge(w, idx, s->in + off);
		wr_compact(w, s);
		return ZN_OK;
	}
	/* A large file: whole chunks of its own, in order, unless it is a copy of one stored (a
	 * stream cannot be read twice: it is always stored). */
	e->block_offset = 0;
	if (!src->read && wr_large_copy(w, idx, src)) {
		check_file_unchanged(w, idx, src);
		return ZN_OK;
	}
	int ended = 0;
	struct slot *last_read = NULL; /* the last chunk the writer reads, while not harvested */
	uint64_t last_gen = 0;
	for (uint64_t done = 0; done < size;) {
		uint64_t n = ZN_MIN(chunk, size - done);
		struct slot *s;
		RETURN_IF_ERROR(wr_acquire_slot(w, klass, &s));
		int d = src->fd >= 0 && !ended ? defer_read(w, klass, src, done, n) : 0;
		s->sampled = d == 2;
		if (d == 1)
			s->rfd = fcntl(src->fd, F_DUPFD_CLOEXEC, 0); /* else read here after all */
		if (s->rfd >= 0) {
			s->roff = done;
			s->rlast = 0;
			s->rmtim = src->mtim;
			src->pos += n;
			last_read = s;
			last_gen = s->gen;
		}
		int err = s->rfd >= 0 ? 0 : ended ? -1 : wr_source_read(src, s->in, n);
		if (err && src->read) { /* earlier chunks stay as unreferenced bytes */
			wr_release_slot(w, s);
			return stream_failed(w, idx, err, NULL);
		}
		if (err == -1) {
			/* The file shrank since the walk: its earlier chunks are queued, so, as tar
			 * does, it is kept at the size it had, padded with zeros. */
			uint64_t got = ended ? 0 : src->pos - done;
			memset(s->in + got, 0, n - got);
			/* Zeros stand for its data: the exit status says so, once. */
			if (!ended && !w->ents[idx].shrunk) {
				wr_report(
				        w, w->ents[idx].path, ZN_ERR_CHANGED,
				        "file shrank while being read; padded with zeros (as tar)");
				w->input_err = ZN_ERR_IO;
			}
			ended = w->ents[idx].shrunk = 1;
		} else if (err) {
			/* Earlier chunks are already queued; they stay as unreferenced bytes. */
			wr_report_read_failure(w, &w->ents[idx], err, NULL);
			wr_release_slot(w, s);
			return ZN_OK;
		}
		RETURN_IF_ERROR(wr_add_seg(w, s, idx, n, done == 0, done + n == size));
		s->usize = n;
		wr_queue_slot(w, s);
		done += n;
		/* The last chunk's slot, where settle_digest() finds the file's digest. */
		w->packs[idx].slot = (uint32_t)(s - w->pipe.slots);
		w->packs[idx].gen = s->gen;
	}
	/* Whether the file changed while read is known once the writer has read the last chunk
	 * it reads: harvest looks then (settle_read), else now. */
	if (last_read && last_read->gen == last_gen)
		last_read->rlast = 1;
	else
		check_file_unchanged(w, idx, src);
	return ZN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Walking the filesystem
 * ---------------------------------------------------------------------------------------------- */

/* ------------------------------------------------------------------------------------------------
 * Reading small files in batches
 *
 * The walk collects up to BATCH small files, from as many directories as hold them (pend_dir), up
 * to the next file that is not small, then places them, in the order they were found, into the
 * packers (so block boundaries are the same whichever way they are read), and reads each straight
 * into its place in the slot. When the workers have nothing queued (a tree of small files gives
 * them little to compress) and there is more than one thread, a crew shares the reads (crew_run).
 * Otherwise the producer reads alone: with io_uring, each file is one linked chain OPENAT (into a
 * registered file slot) -> READ -> CLOSE, and a batch is one submission instead of three system
 * calls per file, followed by an fstatat per file for the change check; without it (old kernel,
 * seccomp, ZN_DISABLE_URING in test builds) with openat/read/fstat/close. On this machine's kernel
 * (6.18) both ways take the same time.
 * ---------------------------------------------------------------------------------------------- */

/* Reserve room for entry idx in its packer. If the packer's block is too full, *queued_full is
 * set and nothing is reserved: the caller completes every read into that block, queues it with
 * close_full_packer() and calls again. */
zn_result wr_place_small(struct zn_writer *w, uint64_t idx, struct slot **out, uint64_t *off,
                         int *queued_full)
{
	struct went *e = &w->ents[idx];
	int klass = wr_class_of(w, e);
	struct slot *s = w->pipe.pack[klass];
	*queued_full = s && s->usize + e->size > w->opt.chunk_size;
	if (*queued_full)
		return ZN_OK; /* caller finishes its reads, then calls again */
	if (!s) {
		RETURN_IF_ERROR(wr_acquire_slot(w, klass, &s));
		w->pipe.pack[klass] = s;
	}
	*off = s->usize;
	RETURN_IF_ERROR(wr_add_seg(w, s, idx, e->size, 1, 1));
	s->usize += e->size;
	w->ents[idx].block_offset = (uint32_t)*off;
	w->packs[idx].slot = (uint32_t)(s - w->pipe.slots);
	w->packs[idx].gen = s->gen;
	*out = s;
	return ZN_OK;
}

/* Judges a small file whose bytes (at p) were just read, unless it could not be read. */
void wr_judge(struct zn_writer *w, uint64_t idx, const uint8_t *p)
{
	if (!w->ents[idx].dropped)
		wr_is_duplicate(w, idx, p);
}

/* Takes back the rooms of the copies among the files placed in s since the last call, moving
 * the files after them down (all of them judged by now). */
void wr_compact(struct zn_writer *w, struct slot *s)
{
	if (!s)
		return;
	size_t i = s->nsegs_checked, k = i;
	uint64_t to = i < s->nsegs ? s->segs[i].off : s->usize;
	for (; i < s->nsegs; i++) {
		struct seg g = s->segs[i]; /* a whole small file */
		struct went *e = &w->ents[g.entry];
		if (e->dup_of >= 0)
			continue;
		if (to != g.off) {
			memmove(s->in + to, s->in + g.off, g.len);
			g.off = to;
			e->block_offset = to;
		}
		s->segs[k++] = g;
		to += g.len;
	}
	s->nsegs = s->nsegs_checked = k;
	s->usize = to;
}

static void close_full_packer(struct zn_writer *w, uint64_t idx)
{
	struct went *e = &w->ents[idx];
	int klass = wr_class_of(w, e);
	wr_queue_slot(w, w->pipe.pack[klass]);
	w->pipe.pack[klass] = NULL;
}

/* Entry idx, whose bytes were read aside (at p), does not fit in its packer's block. Judged
 * before that block is closed, a copy takes no room and leaves the block open for the next file,
 * as if the copy had never been met; any other file closes the block and starts the next. */
zn_result wr_place_aside(struct zn_writer *w, uint64_t idx, const uint8_t *p)
{
	if (wr_is_duplicate(w, idx, p))
		return ZN_OK;
	close_full_packer(w, idx);
	struct slot *s;
	uint64_t off;
	int full;
	RETURN_IF_ERROR(wr_place_small(w, idx, &s, &off, &full)); /* fits: the block is new */
	memcpy(s->in + off, p, w->ents[idx].size);
	s->nsegs_checked = s->nsegs;
	return ZN_OK;
}
