/* SPDX-License-Identifier: MIT */
/* archive_batch.c - reading small files in batches: io_uring chains, the crew, stating ahead. */
#include <dirent.h>

#include "archive_writer.h"

/* Reads pending file p with plain system calls into dst (its room in a block, or the aside
 * buffer) and says in *r what it found. Touches nothing but dst and *r: crew threads run it. */
static void read_one(const struct pending *p, uint8_t *dst, struct read_res *r)
{
	memset(r, 0, sizeof(*r));
	int fd = openat(p->dirfd, p->name,
	                O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r->open_err = errno;
		return;
	}
	struct source src = {.fd = fd};
	r->err = wr_source_read(&src, dst, p->size);
	r->got = src.pos;
	struct stat st;
	if (!r->err && !fstat(fd, &st)) {
		r->stat_ok = 1;
		r->size = (uint64_t)st.st_size;
		r->mtim = st.st_mtim;
	}
	close(fd);
}

/* Acts on what reading pending file k into dst found (r): 0 if its bytes are there (all of them,
 * or those it had when it shrank: stored as read, with a warning; it may also have changed:
 * stored as read), else it is reported and left out. */
static int account(struct zn_writer *w, const struct pending *p, const struct read_res *r,
                   uint8_t *dst, int placed)
{
	struct went *e = &w->ents[p->entry];
	if (r->open_err) {
		wr_report_open_failure(w, e, r->open_err, dst);
		return -1;
	}
	if (r->err == -1) {
		wr_store_shrunk(w, p->entry, r->got, dst, placed);
	} else if (r->err) {
		wr_report_read_failure(w, e, r->err, placed ? dst : NULL);
		return -1;
	} else if (r->stat_ok) {
		wr_check_unchanged(w, e, r->size, &p->mtim, r->mtim.tv_sec, r->mtim.tv_nsec);
	}
	return 0;
}

/* Pending file k does not fit in its packer's block: read it aside and place it from there. A
 * file that cannot be read takes no room then, and leaves the block open. */
static zn_result read_aside(struct zn_writer *w, int k)
{
	if (!wr_aside_buffer(w))
		return ZN_ERR_NOMEM;
	struct read_res r;
	read_one(&w->batch.pend[k], w->dup.aside, &r);
	if (account(w, &w->batch.pend[k], &r, w->dup.aside, 0))
		return ZN_OK;
	return wr_place_aside(w, w->batch.pend[k].entry, w->dup.aside);
}

/* The crew
 * --------
 * On a tree of many small files the producer's system calls are the limit: per file a stat in
 * the walk, then the open, read, fstat and close of the read. With more than one thread they
 * are shared with up to threads - 1 crew jobs of the pool, a batch at a time: the stats of a run of
 * a directory's names (stat_ahead), or the reads of a batch of small files (read_batch). Each job
 * takes the next item nobody took (crew.next) until none is left, the producer too, which then
 * waits for the crew to leave the batch. Every result has its own place (a file's room is fixed
 * before the reads start), and the producer acts on them in order afterwards, so the archive is the
 * same however the work was shared out.
 *
 * A full batch of small files "flies" (take_off): the crew reads it while the producer walks
 * on and fills the other half of the batch stores, stating names itself meanwhile. The flying
 * batch is acted on (settle_fly) before anything else is placed in a block: before the next
 * batch is placed, before a large file or an entry from memory, and before a problem is named,
 * so that the order is the walk's. */
#define CREW_MIN 16 /* a batch of fewer items is done by the producer alone */

static void crew_take(struct zn_writer *w, crew_fn *fn, int to)
{
	for (int k; (k = atomic_fetch_add(&w->crew.next, 1)) < to;)
		fn(w, k);
}

/* A crew job: joins the batch open when it starts, if any, and takes items until none is left.
 * One that starts after its batch closed returns at once. */
static void crew_job(void *arg)
{
	struct zn_writer *w = arg;
	struct wr_crew *c = &w->crew;
	pthread_mutex_lock(&c->mu);
	c->queued--;
	if (!c->open) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	int to = c->to;
	crew_fn *fn = c->job;
	c->busy++;
	pthread_mutex_unlock(&c->mu);
	struct wr_clock clock = wr_clock_start();
	crew_take(w, fn, to);
	wr_clock_stop(clock, &w->pipe.cpu_read);
	pthread_mutex_lock(&c->mu);
	if (!--c->busy)
		pthread_cond_signal(&c->idle);
	pthread_mutex_unlock(&c->mu);
}

/* Whether a batch of n items is worth sharing with a crew. Not while compression jobs wait for
 * a thread: the cores have compressing to do then, and the producer does its batches alone
 * rather than take a core from them (the results are the same either way). */
static int crew_wanted(struct zn_writer *w, int n)
{
	if (n < CREW_MIN || zn_pool_threads(w->pipe.pool) < 2 || w->batch.fly_to)
		return 0; /* few, no crew, or the crew has a batch (take_off) */
	return !wr_jobs_waiting(w);
}

/* Hands items from..to-1 to the crew (`wake` jobs at most); crew_wait ends the batch. One batch
 * at a time. Jobs still queued from an earlier batch count among the `wake`. */
static void crew_post(struct zn_writer *w, crew_fn *fn, int from, int to, int wake)
{
	struct wr_crew *c = &w->crew;
	atomic_store(&c->next, from); /* no crew job is in a batch now */
	pthread_mutex_lock(&c->mu);
	c->job = fn;
	c->to = to;
	c->open = 1;
	int most = (int)zn_pool_threads(w->pipe.pool) - 1;
	int add = ZN_MIN(wake, most) - (int)c->queued;
	c->queued += add > 0 ? (unsigned)add : 0;
	pthread_mutex_unlock(&c->mu);
	for (int i = 0; i < add; i++)
		zn_pool_add(w->pipe.pool, crew_job, w);
}

/* Does what is left of the batch posted, then waits for the crew jobs to leave it. */
static void crew_wait(struct zn_writer *w)
{
	struct wr_crew *c = &w->crew;
	crew_take(w, c->job, c->to);
	pthread_mutex_lock(&c->mu);
	c->open = 0;
	while (c->busy)
		pthread_cond_wait(&c->idle, &c->mu);
	pthread_mutex_unlock(&c->mu);
}

/* Runs fn on items from..to-1, shared with the crew. */
static void crew_run(struct zn_writer *w, crew_fn *fn, int from, int to)
{
	crew_post(w, fn, from, to, to - from - 1); /* the producer takes items too */
	crew_wait(w);
}

static void read_pending(struct zn_writer *w, int k)
{
	read_one(&w->batch.pend[k], w->batch.pend[k].room, &w->batch.res[k]);
}

#ifdef ZN_HAVE_URING

/* Pending file k, of which the ring read `have` bytes, fewer than the walk saw: the rest with
 * plain reads, as read_one would go on (a short read is the end of a local file, but not
 * always of a FUSE one). Returns how many bytes are in its room now. */
static uint64_t read_rest(struct zn_writer *w, int k, uint64_t have)
{
	const struct pending *p = &w->batch.pend[k];
	int fd = openat(p->dirfd, p->name,
	                O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	while (fd >= 0 && have < p->size) {
		ssize_t n = pread(fd, p->room + have, p->size - have, (off_t)have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (uint64_t)n;
	}
	if (fd >= 0)
		close(fd);
	return have;
}

/* Reads pend[from..to), at most ring_files of them, through the ring, results in res[]: each
 * file is a chain OPENAT (into registered file slot k - from) -> READ -> CLOSE, and all of them
 * one submission.
 *
 * One submit-and-wait normally does it all. A signal can interrupt the submission or a wait
 * (-EINTR, then retried: a program's interval timer must not cost it files). The reads write
 * into the block being packed, so every chain submitted is reaped before returning; an error
 * the ring cannot get past stops the whole archive rather than leaving reads in flight. */
static zn_result uring_part(struct zn_writer *w, int from, int to)
{
	for (int k = from; k < to; k++) {
		/* Reads are capped below 2 GiB by the chunk size, so one READ moves the whole file
		 * unless it shrank (then the short count is caught below). */
		memset(&w->batch.res[k], 0, sizeof(w->batch.res[k]));
		struct io_uring_sqe *q = io_uring_get_sqe(&w->batch.ring);
		io_uring_prep_openat_direct(q, w->batch.pend[k].dirfd, w->batch.pend[k].name,
		                            O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0,
		                            (unsigned)(k - from));
		q->flags |= IOSQE_IO_HARDLINK;
		q->user_data = (uint64_t)k << 2;
		q = io_uring_get_sqe(&w->batch.ring);
		io_uring_prep_read(q, k - from, w->batch.pend[k].room,
		                   (unsigned)w->batch.pend[k].size, 0);
		q->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
		q->user_data = ((uint64_t)k << 2) | 1;
		q = io_uring_get_sqe(&w->batch.ring);
		io_uring_prep_close_direct(q, (unsigned)(k - from));
		q->user_data = ((uint64_t)k << 2) | 2;
	}
	int want = (to - from) * 3;
	if (!want)
		return ZN_OK;
	int ret = io_uring_submit_and_wait(&w->batch.ring, (unsigned)want);
	while (io_uring_sq_ready(&w->batch.ring) && (ret > 0 || ret == -EINTR))
		ret = io_uring_submit(&w->batch.ring);
	int fatal = ret < 0 && ret != -EINTR ? -ret : 0;
	if (!fatal && io_uring_sq_ready(&w->batch.ring))
		fatal = EIO; /* the kernel took no more of them */
	int inflight = want - (int)io_uring_sq_ready(&w->batch.ring);
	for (int got = 0; got < inflight; got++) {
		struct io_uring_cqe *cqe;
		int e;
		while ((e = io_uring_wait_cqe(&w->batch.ring, &cqe)) == -EINTR)
			;
		if (e) {
			fatal = -e;
			break;
		}
		uint64_t ud = cqe->user_data;
		struct read_res *r = &w->batch.res[ud >> 2];
		if ((ud & 3) == 0)
			r->open_err = cqe->res < 0 ? -cqe->res : 0;
		else if ((ud & 3) == 1 && cqe->res < 0)
			r->err = -cqe->res;
		else if ((ud & 3) == 1)
			r->got = (uint64_t)cqe->res;
		io_uring_cqe_seen(&w->batch.ring, cqe);
	}
	if (fatal) {
		wr_report_errno(w, w->ents[w->batch.pend[from].entry].path,
		                "reading files with io_uring failed", fatal);
		return ZN_ERR_IO;
	}
	/* After the reads, the size and time again, for the same check as large files get: by
	 * name, as a direct descriptor has no fstat (a rename over the name since the open reports
	 * a change the file read did not have; an unlink skips the check). A plain fstatat, not a
	 * STATX in the chain: the kernel hands that to a worker thread, which made reading
	 * 100,000 small files take twice as long. */
	for (int k = from; k < to; k++) {
		struct read_res *r = &w->batch.res[k];
		struct stat st;
		if (r->open_err || r->err)
			continue;
		if (r->got < w->batch.pend[k].size)
			r->got = read_rest(w, k, r->got); /* a short read is not always the end */
		if (r->got < w->batch.pend[k].size) {
			r->err = -1;
		} else if (!fstatat(w->batch.pend[k].dirfd, w->batch.pend[k].name, &st,
		                    AT_SYMLINK_NOFOLLOW)) {
			r->stat_ok = 1;
			r->size = (uint64_t)st.st_size;
			r->mtim = st.st_mtim;
		}
	}
	return ZN_OK;
}

static zn_result uring_run(struct zn_writer *w, int from, int to)
{
	for (int k = from; k < to; k += w->batch.ring_files)
		RETURN_IF_ERROR(uring_part(w, k, ZN_MIN(to, k + w->batch.ring_files)));
	return ZN_OK;
}

#endif

/* Acts on what reading files pend[from..to) into their rooms found (res[]), in order, then
 * judges them and takes the copies' rooms back. With `again` (the crew read them: several
 * threads held a file open at once), a file that found no descriptor left is read again, alone,
 * first. */
static void act_on_reads(struct zn_writer *w, const struct pending *pend, struct read_res *res,
                         int from, int to, crew_fn *again)
{
	for (int k = from; k < to; k++) {
		if (again && (res[k].open_err == EMFILE || res[k].open_err == ENFILE)) {
			w->batch.fd_short = 1;
			again(w, k);
		}
		if (!account(w, &pend[k], &res[k], pend[k].room, 1) && pend[k].size)
			wr_judge(w, pend[k].entry, pend[k].room);
	}
	wr_compact(w, w->pipe.pack[0]);
	wr_compact(w, w->pipe.pack[1]);
}

/* Reads pend[from..to) into their rooms (through the ring when no crew shares the reads), and
 * acts on what was found. */
static zn_result finish_batch(struct zn_writer *w, int from, int to)
{
	int shared = crew_wanted(w, to - from);
	if (shared) {
		crew_run(w, read_pending, from, to);
	} else {
#ifdef ZN_HAVE_URING
		if (w->batch.ring_ok)
			RETURN_IF_ERROR(uring_run(w, from, to));
		else
#endif
			for (int k = from; k < to; k++)
				read_pending(w, k);
	}
	act_on_reads(w, w->batch.pend, w->batch.res, from, to, shared ? read_pending : NULL);
	return ZN_OK;
}

static void read_fly(struct zn_writer *w, int k)
{
	read_one(&w->batch.fly_pend[k], w->batch.fly_pend[k].room, &w->batch.fly_res[k]);
}

static void close_dirs(const int *fds, int *n)
{
	for (int i = 0; i < *n; i++)
		close(fds[i]);
	*n = 0;
}

/* Gives back the flying batch's directory descriptors. */
static void land_fly(struct zn_writer *w)
{
	close_dirs(w->batch.fly_dirs, &w->batch.nfly_dirs);
	w->batch.fly_to = 0;
}

/* Waits for the crew to read the flying batch (helping), then acts on what it found, in order,
 * as finish_batch does. */
static void settle_fly(struct zn_writer *w)
{
	if (!w->batch.fly_to)
		return;
	crew_wait(w);
	int from = w->batch.fly_from, to = w->batch.fly_to, was = w->batch.flushing;
	w->batch.fly_to = 0; /* landed: nothing settles it again */
	w->batch.flushing = 1;
	act_on_reads(w, w->batch.fly_pend, w->batch.fly_res, from, to, read_fly);
	w->batch.flushing = was;
	land_fly(w);
}

/* Fatal: the flying batch is not acted on, once the crew has left it. */
static void drop_fly(struct zn_writer *w)
{
	if (w->batch.fly_to) {
		atomic_store(&w->crew.next, w->crew.to); /* nobody starts another read */
		crew_wait(w);
	}
	land_fly(w);
}

/* The pending files from..npend, placed, become the flying batch: the crew reads them while
 * the walk goes on, into a new batch. */
#define SWAP(T, a, b)                                                                              \
	do {                                                                                       \
		T t_ = (a);                                                                        \
		(a) = (b);                                                                         \
		(b) = t_;                                                                          \
	} while (0)

static void take_off(struct zn_writer *w, int from)
{
	SWAP(struct pending *, w->batch.pend, w->batch.fly_pend);
	SWAP(struct read_res *, w->batch.res, w->batch.fly_res);
	SWAP(int *, w->batch.pend_dirs, w->batch.fly_dirs);
	SWAP(char *, w->batch.pend_names, w->batch.fly_names);
	SWAP(size_t, w->batch.pend_names_cap, w->batch.fly_names_cap);
	w->batch.nfly_dirs = w->batch.npend_dirs;
	w->batch.npend_dirs = 0;
	w->batch.fly_from = from;
	w->batch.fly_to = w->batch.npend;
	w->batch.npend = 0;
	w->batch.pend_names_len = 0;
	w->batch.pend_src = -1;
	crew_post(w, read_fly, from, w->batch.fly_to, w->batch.fly_to - from);
}

/* Places the pending files in their packers, in the order they were found, and reads them. A
 * file that does not fit is placed after the files before it are read and judged: the copies
 * among them take no room, and it may fit then. With `fly`, the last part is read by the crew
 * while the walk goes on (take_off) where it may be. */
static zn_result read_batch(struct zn_writer *w, int fly)
{
	for (int k = 0; k < w->batch.npend; k++)
		w->batch.pend[k].name = w->batch.pend_names + w->batch.pend[k].name_off;
	int from = 0;
	for (int k = 0; k < w->batch.npend; k++) {
		if (!w->batch.pend[k].size) {
			w->batch.pend[k].room = NULL; /* empty: takes no room, is only opened */
			continue;
		}
		uint64_t idx = w->batch.pend[k].entry, off;
		struct slot *s;
		int full;
		RETURN_IF_ERROR(wr_place_small(w, idx, &s, &off, &full));
		if (full) {
			RETURN_IF_ERROR(finish_batch(w, from, k));
			from = k;
			RETURN_IF_ERROR(wr_place_small(w, idx, &s, &off, &full));
		}
		if (full) {
			RETURN_IF_ERROR(read_aside(w, k));
			from = k + 1;
			continue;
		}
		w->batch.pend[k].room = s->in + off;
	}
	if (fly && !w->batch.pend_borrowed && !w->batch.fd_short && !atomic_load(&w->pipe.cancel) &&
	    crew_wanted(w, w->batch.npend - from)) {
		take_off(w, from);
		return ZN_OK;
	}
	return finish_batch(w, from, w->batch.npend);
}

/* Gives back the batch's directory descriptors and names. */
static void clear_pending(struct zn_writer *w)
{
	close_dirs(w->batch.pend_dirs, &w->batch.npend_dirs);
	w->batch.npend = 0;
	w->batch.pend_names_len = 0;
	w->batch.pend_src = -1;
	w->batch.pend_borrowed = 0;
}

/* Fatal: nothing pending is read or acted on. */
void wr_drop_pending(struct zn_writer *w)
{
	drop_fly(w);
	clear_pending(w);
}

/* The flying batch is acted on, and the pending one placed and read; with `fly` (the batch is
 * full), by the crew while the walk goes on where it may be. */
static zn_result flush_batch(struct zn_writer *w, int fly)
{
	settle_fly(w);
	w->batch.flushing = 1;
	zn_result r = w->batch.npend ? read_batch(w, fly) : ZN_OK;
	w->batch.flushing = 0;
	clear_pending(w); /* what take_off left, or the batch read here */
	return r;
}

/* Every small file found so far is read and acted on. */
zn_result wr_flush_pending(struct zn_writer *w)
{
	return flush_batch(w, 0);
}

/* A copy of directory descriptor dirfd for the batch, or -1 (none, or the batch holds as many
 * as it may: pend_dirs_max). */
static int pend_dup(struct zn_writer *w, int dirfd)
{
	if (dirfd == AT_FDCWD || w->batch.npend_dirs >= w->batch.pend_dirs_max)
		return -1;
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE))
		w->batch.fd_short = 1;
	return fd;
}

/* A batch gathers the small files of many directories (a Maven repository has a few in each),
 * and outlives the walk of each: it reads them through descriptors of its own, one per
 * directory (pend_dirs), and keeps their names. Where no descriptor can be had (too many open,
 * or the working directory itself, AT_FDCWD), it borrows the walk's, and is read before the
 * walk leaves that directory or goes into another (pend_borrowed). Sets *fd to the descriptor
 * to read a file of directory dirfd (the walk's) through. */
static zn_result pend_dir(struct zn_writer *w, int dirfd, int *fd)
{
	if (w->batch.npend && w->batch.pend_src == dirfd) {
		*fd = w->batch.pend_fd;
		return ZN_OK;
	}
	if (w->batch.pend_borrowed)
		RETURN_IF_ERROR(wr_flush_pending(w));
	int own = pend_dup(w, dirfd);
	if (own < 0 && dirfd != AT_FDCWD && w->batch.npend) {
		RETURN_IF_ERROR(wr_flush_pending(w)); /* its descriptors go back */
		own = pend_dup(w, dirfd);
	}
	if (own >= 0) {
		w->batch.pend_dirs[w->batch.npend_dirs++] = own;
	} else {
		RETURN_IF_ERROR(wr_flush_pending(w));
		own = dirfd;
		w->batch.pend_borrowed = 1;
	}
	w->batch.pend_src = dirfd;
	w->batch.pend_fd = *fd = own;
	return ZN_OK;
}

/* A descriptor the walk needs could not be had (err): if for want of descriptors, the batch is
 * read, which gives back those it holds. Whether to try again. */
int wr_give_back_fds(struct zn_writer *w, int err)
{
	if (err != EMFILE && err != ENFILE)
		return 0;
	w->batch.fd_short = 1;
	if (!w->batch.npend_dirs && !w->batch.nfly_dirs)
		return 0;
	zn_result r = wr_flush_pending(w);
	if (r != ZN_OK)
		wr_set_error(w, r);
	return r == ZN_OK;
}

/* The walk is about to close or replace a directory descriptor, or to open one, whose number
 * may then be one a pending file's directory had. */
zn_result wr_pend_dir_moves(struct zn_writer *w)
{
	w->batch.pend_src = -1;
	return w->batch.pend_borrowed ? wr_flush_pending(w) : ZN_OK;
}

/* Adds small file idx (its name in its directory, dirfd the walk's) to the batch. */
zn_result wr_add_pending(struct zn_writer *w, uint64_t idx, int dirfd, const char *name,
                         const struct stat *st)
{
	int fd;
	RETURN_IF_ERROR(pend_dir(w, dirfd, &fd));
	size_t len = strlen(name) + 1;
	if (wr_grow((void **)&w->batch.pend_names, &w->batch.pend_names_cap,
	            w->batch.pend_names_len + len, 1))
		return ZN_ERR_NOMEM;
	struct pending *p = &w->batch.pend[w->batch.npend++];
	p->entry = idx;
	p->dirfd = fd;
	p->name_off = w->batch.pend_names_len;
	memcpy(w->batch.pend_names + w->batch.pend_names_len, name, len);
	w->batch.pend_names_len += len;
	p->size = w->ents[idx].size;
	p->mtim = st->st_mtim;
	return w->batch.npend == w->batch.batch_max ? flush_batch(w, 1) : ZN_OK;
}

/* Stating ahead
 * -------------
 * A directory's names are read and sorted before any is looked at. With a crew, a run of up to
 * STAT_RUN of them that readdir says are not directories is stated in one crew batch, just
 * before the run's turn comes; a directory, or a name of unknown type, is stated when its own
 * turn comes, just before it is walked, as are all names without a crew. */
/* Each name the walk keeps is followed, after its NUL, by its d_type from readdir. */
static int is_leaf(const char *name)
{
	unsigned char t = (unsigned char)name[strlen(name) + 1];
	return t != DT_DIR && t != DT_UNKNOWN;
}

static void stat_one(struct zn_writer *w, int k)
{
	w->crew.run_err[k] = fstatat(w->crew.run_dirfd, w->crew.run_names[k], &w->crew.run_st[k],
	                             AT_SYMLINK_NOFOLLOW)
	                             ? errno
	                             : 0;
}

/* States names[i..) ahead if they start a long enough run; returns where the run ends (i if none
 * was stated), and in *next where the next run may start. */
size_t wr_stat_ahead(struct zn_writer *w, int dirfd, char **names, size_t i, size_t n, size_t *next)
{
	size_t j = i;
	while (j < n && j - i < STAT_RUN && is_leaf(names[j]))
		j++;
	*next = ZN_MAX(j, i + 1);
	if (!crew_wanted(w, (int)(j - i)))
		return i;
	w->crew.run_names = names + i;
	w->crew.run_dirfd = dirfd;
	crew_run(w, stat_one, 0, (int)(j - i));
	/* Storing a large file takes a while: the names after it are stated when it is done. */
	for (size_t k = i; k < j; k++)
		if (!w->crew.run_err[k - i] && S_ISREG(w->crew.run_st[k - i].st_mode) &&
		    (uint64_t)w->crew.run_st[k - i].st_size >= w->opt.chunk_size) {
			*next = j = k + 1;
			break;
		}
	return j;
}

void wr_batch_open(struct zn_writer *w)
{
	struct wr_batch *b = &w->batch;
	b->pend_src = -1;
	b->pend = b->pend_store[0];
	b->fly_pend = b->pend_store[1];
	b->res = b->res_store[0];
	b->fly_res = b->res_store[1];
	b->pend_dirs = b->dirs_store[0];
	b->fly_dirs = b->dirs_store[1];
	b->batch_max = zn_pool_threads(w->pipe.pool) > 1 ? BATCH : BATCH_ALONE;
	pthread_mutex_init(&w->crew.mu, NULL);
	pthread_cond_init(&w->crew.idle, NULL);
#ifdef ZN_HAVE_URING
	int want_uring = !w->opt.no_uring;
#ifdef ZN_TEST_HOOKS
	if (getenv("ZN_DISABLE_URING") && *getenv("ZN_DISABLE_URING") == '1')
		want_uring = 0;
#endif
	if (want_uring && !io_uring_queue_init(BATCH * 4, &b->ring, 0)) {
		/* as many slots as a batch has files; fewer under a low ulimit -n */
		for (int n = BATCH; n >= 16 && !b->ring_ok; n /= 4)
			if (!io_uring_register_files_sparse(&b->ring, (unsigned)n)) {
				b->ring_ok = 1;
				b->ring_files = n;
			}
		if (!b->ring_ok)
			io_uring_queue_exit(&b->ring);
	}
#endif
	b->open = 1;
}

/* After wr_drop_pending: the ring, the names' buffers, the crew's lock. */
void wr_batch_close(struct zn_writer *w)
{
	struct wr_batch *b = &w->batch;
	if (!b->open)
		return;
#ifdef ZN_HAVE_URING
	if (b->ring_ok)
		io_uring_queue_exit(&b->ring);
#endif
	free(b->pend_names);
	free(b->fly_names);
	pthread_mutex_destroy(&w->crew.mu);
	pthread_cond_destroy(&w->crew.idle);
	b->open = 0;
}
