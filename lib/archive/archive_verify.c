/* SPDX-License-Identifier: MIT */
/* archive_verify.c - zn_verify: every index page, the data area's layout, every block and digest.
 */
#include <stdio.h>
#include <stdlib.h>

#include "archive_extract.h"

zn_result zn_verify(struct zn_reader *r, unsigned threads, zn_problem_fn problem,
                    zn_progress_fn progress, void *ctx)
{
	if (!r)
		return ZN_ERR_INVALID_ARG;
	struct xjob j;
	memset(&j, 0, sizeof(j));
	j.verify = 1;
	j.problem = problem;
	j.progress = progress;
	j.ctx = ctx;
	/* Every page of the index, used or not, must match its checksum. A damaged page is named
	 * and costs the entries (and blocks) whose rows it holds; everything else is still
	 * verified, as extraction would still extract it. */
	int structure_damaged = 0; /* the index or the layout of the data area */
	for (uint64_t p = 0; p * ZN_IX_PAGE < r->index_size; p++) {
		uint64_t len = ZN_MIN((uint64_t)ZN_IX_PAGE, r->index_size - p * ZN_IX_PAGE);
		if (zn_ix_ensure(r, p * ZN_IX_PAGE, len))
			continue;
		structure_damaged = 1;
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
	/* The blocks tile the data area, each where the one before it ends or at the next
	 * multiple of ZN_BLOCK_ALIGN after zero bytes, and nothing but padding (zero bytes, fewer
	 * than ZN_INDEX_ALIGN) lies between the last one and the index: no byte of the file
	 * escapes a check. */
	uint64_t data_end = ZN_HEADER_SIZE;
	int layout_ok = !structure_damaged;
	for (uint64_t b = 0; layout_ok && b < r->nblocks; b++) {
		struct zn_blockinfo bi;
		uint64_t gap = (ZN_BLOCK_ALIGN - data_end % ZN_BLOCK_ALIGN) % ZN_BLOCK_ALIGN;
		if (zn_block_info(r, b, &bi) != ZN_OK ||
		    (bi.offset != data_end && bi.offset != data_end + gap)) {
			layout_ok = 0;
			break;
		}
		for (uint64_t k = data_end; layout_ok && k < bi.offset; k++)
			layout_ok = !r->map[k];
		data_end = bi.offset + bi.csize;
	}
	if (layout_ok) {
		uint64_t gap = r->index_offset - data_end; /* blocks end at or before the index */
		layout_ok = gap < ZN_INDEX_ALIGN;
		for (uint64_t k = 0; layout_ok && k < gap; k++)
			layout_ok = !r->map[data_end + k];
	}
	if (!layout_ok && !structure_damaged) {
		structure_damaged = 1;
		if (problem)
			problem(ctx, "(data)", ZN_ERR_CORRUPT,
			        "the blocks do not tile the data area (gaps, overlaps or stray "
			        "bytes before the index)");
	}
	uint64_t bad_row;
	if (!structure_damaged && zn_fence_check(r, &bad_row) != ZN_OK) {
		structure_damaged = 1;
		if (problem) {
			char msg[128];
			snprintf(
			        msg, sizeof(msg),
			        "index damaged: its path fence disagrees with the path of row %llu",
			        (unsigned long long)bad_row);
			problem(ctx, "(index)", ZN_ERR_CORRUPT, msg);
		}
	}
	zn_result res = job_init(&j, r, NULL, threads);
	if (res == ZN_OK)
		res = build_plan(&j);
	if (res == ZN_OK)
		res = run_workers(&j, threads);
	settle_copies(&j);
	if (res == ZN_OK)
		res = j.err;
	int damaged = 0;
	for (uint64_t i = 0; res == ZN_OK && i < j.n; i++) {
		struct xent *e = &j.ents[i];
		uint8_t st = j.status[i];
		if (st == ST_OK && e->type == ZN_TYPE_HARDLINK) {
			uint64_t t;
			if (!e->link || zn_reader_find(r, e->link, e->link_len, &t) != ZN_OK ||
			    j.ents[t].type != ZN_TYPE_FILE) {
				xreport(&j, e, ZN_ERR_CORRUPT,
				        "hardlink target missing in the archive");
				st = ST_DAMAGED;
			} else if (j.status[t] != ST_OK) {
				xreport(&j, e, ZN_ERR_DAMAGED, "hardlink to a damaged file");
				st = ST_DAMAGED;
			}
		} else if (st == ST_DAMAGED && e->type == ZN_TYPE_FILE && e->path) {
			xreport(&j, e, ZN_ERR_CHECKSUM,
			        "damaged: content does not match its checksum");
		}
		if (st == ST_OK && !zn_path_is_safe(e->path, e->path_len)) {
			xreport(&j, e, ZN_ERR_UNSAFE_PATH, "unsafe path (absolute or with '..')");
			st = ST_DAMAGED;
		}
		damaged |= st == ST_DAMAGED;
	}
	damaged |= j.lost_any;
	damaged |= report_bad_blocks(&j);
	job_free(&j);
	if (res != ZN_OK)
		return structure_damaged ? ZN_ERR_DAMAGED : res;
	return damaged || structure_damaged ? ZN_ERR_DAMAGED : ZN_OK;
}
