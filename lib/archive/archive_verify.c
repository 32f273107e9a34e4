/* SPDX-License-Identifier: MIT */
/* archive_verify.c - zn_verify: every index page, the data area's layout, every block and digest.
 *
 * Verification is extraction that hashes instead of writing: the same job, plan and workers
 * (archive_extract.h). Before them it checks what extraction takes on trust once the index opened:
 * every page of the index (used or not), that the blocks tile the data area with nothing but
 * padding between them, and the path fence. A damaged page is named and costs the entries (and
 * blocks) whose rows it holds; everything else is still verified, as extraction would still
 * extract it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_extract.h"
#include "common/sized.h"

/* Every page of the index against its checksum; whether all match. */
static int check_index_pages(struct zn_reader *r, zn_problem_fn problem, void *ctx)
{
	int ok = 1;
	for (uint64_t p = 0; p * ZN_IX_PAGE < r->index_size; p++) {
		uint64_t len = ZN_MIN((uint64_t)ZN_IX_PAGE, r->index_size - p * ZN_IX_PAGE);
		if (zn_ix_ensure(r, p * ZN_IX_PAGE, len))
			continue;
		ok = 0;
		if (problem) {
			char msg[128];
			snprintf(msg, sizeof(msg),
			         "index damaged: page %llu (index bytes %llu-%llu) does not match "
			         "its checksum",
			         (unsigned long long)p, (unsigned long long)(p * ZN_IX_PAGE),
			         (unsigned long long)(p * ZN_IX_PAGE + len - 1));
			problem(ctx, "(index)", ZN_ERR_CHECKSUM, msg);
		}
	}
	return ok;
}

/* Whether the blocks tile the data area, each where the one before it ends or at the next
 * multiple of ZN_BLOCK_ALIGN after zero bytes, and nothing but padding (zero bytes, fewer than
 * ZN_INDEX_ALIGN) lies between the last one and the index: no byte of the file escapes a check. */
static int blocks_tile(struct zn_reader *r)
{
	uint64_t data_end = ZN_HEADER_SIZE;
	for (uint64_t b = 0; b < r->nblocks; b++) {
		struct zn_blockinfo bi;
		uint64_t gap = (ZN_BLOCK_ALIGN - data_end % ZN_BLOCK_ALIGN) % ZN_BLOCK_ALIGN;
		if (zn_block_info(r, b, &bi) != ZN_OK ||
		    (bi.offset != data_end && bi.offset != data_end + gap))
			return 0;
		for (uint64_t k = data_end; k < bi.offset; k++)
			if (r->map[k])
				return 0;
		data_end = bi.offset + bi.csize;
	}
	uint64_t gap = r->index_offset - data_end; /* blocks end at or before the index */
	if (gap >= ZN_INDEX_ALIGN)
		return 0;
	for (uint64_t k = 0; k < gap; k++)
		if (r->map[data_end + k])
			return 0;
	return 1;
}

/* The index pages, the layout of the data area and the path fence, each named when damaged;
 * whether the structure is sound. */
static int check_structure(struct zn_reader *r, zn_problem_fn problem, void *ctx)
{
	if (!check_index_pages(r, problem, ctx))
		return 0;
	if (!blocks_tile(r)) {
		if (problem)
			problem(ctx, "(data)", ZN_ERR_CORRUPT,
			        "the blocks do not tile the data area (gaps, overlaps or stray "
			        "bytes before the index)");
		return 0;
	}
	uint64_t bad_row;
	if (zn_fence_check(r, &bad_row) != ZN_OK) {
		if (problem) {
			char msg[128];
			snprintf(
			        msg, sizeof(msg),
			        "index damaged: its path fence disagrees with the path of row %llu",
			        (unsigned long long)bad_row);
			problem(ctx, "(index)", ZN_ERR_CORRUPT, msg);
		}
		return 0;
	}
	return 1;
}

/* Entry i's final state, named when it is damaged: a hardlink must find its target, a file
 * that failed its checks is named here (in path order), and a path must be one an archive may
 * hold. Returns whether it is damaged. */
static int entry_damaged(struct job *j, uint64_t i)
{
	const struct job_entry *e = &j->ents[i];
	uint8_t st = e->status;
	struct job_row x;
	if (st == ST_OK && e->type == ZN_TYPE_HARDLINK) {
		uint64_t t;
		if (job_read_row(j, i, &x) || !x.link ||
		    zn_reader_find(j->r, x.link, x.link_len, &t) != ZN_OK ||
		    j->ents[t].type != ZN_TYPE_FILE) {
			job_report(j, i, ZN_ERR_CORRUPT, "hardlink target missing in the archive");
			st = ST_DAMAGED;
		} else if (j->ents[t].status != ST_OK) {
			job_report(j, i, ZN_ERR_DAMAGED, "hardlink to a damaged file");
			st = ST_DAMAGED;
		}
	} else if (st == ST_DAMAGED && e->type == ZN_TYPE_FILE && e->path) {
		job_report(j, i, ZN_ERR_CHECKSUM, "damaged: content does not match its checksum");
	}
	if (st == ST_OK && !zn_path_is_safe(e->path, e->path_len)) {
		job_report(j, i, ZN_ERR_UNSAFE_PATH, "unsafe path (absolute or with '..')");
		st = ST_DAMAGED;
	}
	return st == ST_DAMAGED;
}

zn_result zn_verify(struct zn_reader *r, unsigned threads, const struct zn_hooks *hooks)
{
	struct zn_hooks h = {0};
	if (!r || (hooks && zn_sized_in(&h, sizeof(h), hooks, ZN_FIRST_SIZE_hooks)))
		return ZN_ERR_INVALID_ARG;
	struct job j;
	memset(&j, 0, sizeof(j));
	j.verify = 1;
	j.hashing = 1;
	j.problem = h.problem;
	j.progress = h.progress;
	j.ctx = h.ctx;
	const int structure_ok = check_structure(r, h.problem, h.ctx);
	zn_result res = job_init(&j, r, NULL, threads);
	if (res == ZN_OK)
		res = plan_build(&j);
	if (res == ZN_OK)
		job_run_workers(&j);
	if (res == ZN_OK)
		res = zn_pool_result(j.pool);
	int damaged = 0;
	for (uint64_t i = 0; res == ZN_OK && i < j.n; i++)
		damaged |= entry_damaged(&j, i);
	damaged |= j.lost_any;
	damaged |= job_report_bad_blocks(&j);
	job_free(&j);
	if (res != ZN_OK)
		return structure_ok ? res : ZN_ERR_DAMAGED;
	return damaged || !structure_ok ? ZN_ERR_DAMAGED : ZN_OK;
}
