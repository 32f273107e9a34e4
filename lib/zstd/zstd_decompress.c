/* SPDX-License-Identifier: MIT */
/* zstd_decompress.c - zstd frames (RFC 8878 3.1): the decoder object, frame and block headers,
 * and the whole-buffer and streaming interfaces around one block decoder. */
#include <stdlib.h>

#include "common/big_alloc.h"
#include "common/cpu_features.h"
#include "common/sized.h"
#include "zstd_frame.h"
#include "zstd_internal.h"

/*
 * Both interfaces decode a block at a time into an output described by a zs_seq_ctx: where to
 * write, how far (the block's limit, the caller's buffer), and the history matches may reach.
 *   whole buffer: the caller's buffer is the window; a frame's history is the output since the
 *                 frame's start, preceded by the dictionary's content.
 *   streaming:    output goes to a buffer of the window plus one block (or the content size,
 *                 when the frame gives it and it is smaller); blocks are written one after
 *                 another until the next might not fit, then the buffer wraps: the next block
 *                 goes to its start, and what was written before becomes the "previous lap",
 *                 an external history segment a match can reach into as into a dictionary. The
 *                 wrap happens only once more than Window_Size + ZS_WILD bytes are behind, so
 *                 the bytes a match can still reach (Window_Size back) are never among those
 *                 the new lap has overwritten, wild copies included. Input is staged only when a
 *                 block does not arrive whole in one call.
 */

struct zs_frame {
	uint64_t content_size; /* ZN_ZSTD_SIZE_UNKNOWN when absent */
	uint64_t window;
	uint32_t dict_id;
	uint32_t block_max; /* min(window, 128 KiB) */
	uint32_t header_size;
	int checksum;
};

enum stage { S_MAGIC, S_HEADER, S_SKIP_HEADER, S_SKIP, S_BLOCK_HEADER, S_BLOCK, S_CHECKSUM };

#define STAGE_CAP   (ZS_BLOCK_MAX + ZS_WILD)
#define STAGE_FRONT 16

struct zn_zstd_decoder {
	struct zs_kernels k;
	uint64_t mem_limit;
	struct zs_dict *dict;
	struct zs_entropy ent;
	XXH64_state_t xxh;
	uint8_t *lit_buf; /* ZS_BLOCK_MAX + ZS_WILD */

	/* Streaming state. */
	enum stage st;
	zn_result err; /* sticky */
	int done;
	int any_frame; /* a frame (zstd or skippable) ended in this stream */
	struct zs_frame f;
	uint8_t hdr[32]; /* a header being gathered */
	size_t hdr_len;
	uint8_t *stage; /* STAGE_CAP bytes, allocated on first use: a block arriving in pieces;
	                   STAGE_FRONT readable bytes before it (see zs_decode_compressed_block) */
	size_t stage_len;
	uint64_t skip_left;
	int last_block;
	unsigned block_type;
	uint32_t block_size;
	uint8_t *win; /* the window buffer, win_alloc bytes */
	size_t win_alloc;
	size_t wrap_at; /* wrap before a block once op - win exceeds this (SIZE_MAX: never) */
	uint8_t *win_end;
	uint8_t *op, *flushed;
	const uint8_t *prefix, *ext, *ext_end;
	uint64_t prefix_pos;
	int ext_is_dict;
	uint64_t produced; /* the current frame's output */
	uint64_t in_total, out_total, frames, garbage_at;
	const uint8_t *call_in; /* the current call's input, for positions */

	/* Whole-buffer decoding of one frame (zn_zstd_decompress, zn_zstd_frame_begin): the input
	 * and output, where the next block starts and where the output has got to. */
	struct zs_whole {
		struct zs_frame f;
		const uint8_t *in, *p, *in_end;
		uint8_t *out, *op, *ocap, *oend;
		int last; /* the last block is decoded */
		int done; /* ...and the frame's end checked (zn_zstd_frame_step) */
	} whole;

	struct zs_predef predef;
	struct zs_tables tables;
};

const char *zn_zstd_decoder_kernel_name(const struct zn_zstd_decoder *d);
const char *zn_zstd_decoder_kernel_name(const struct zn_zstd_decoder *d)
{
	return d->k.name;
}

/* Test hook: the bytes of the streaming window buffer allocated now. */
size_t zn_zstd_decoder_window_bytes(const struct zn_zstd_decoder *d);
size_t zn_zstd_decoder_window_bytes(const struct zn_zstd_decoder *d)
{
	return d->win_alloc;
}

/* Test hook: run a decoder on the portable kernels. */
void zn_zstd_decoder_force_generic(struct zn_zstd_decoder *d);
void zn_zstd_decoder_force_generic(struct zn_zstd_decoder *d)
{
	zn_zstd_generic_kernels(&d->k);
}

zn_result zn_zstd_decoder_new(struct zn_zstd_decoder **out)
{
	*out = NULL;
	struct zn_zstd_decoder *d = calloc(1, sizeof(*d));
	SAFETY_CHECK(d, ZN_ERR_NOMEM);
	d->lit_buf = malloc(ZS_BLOCK_MAX + ZS_WILD);
	if (!d->lit_buf) {
		free(d);
		return ZN_ERR_NOMEM;
	}
	zn_zstd_select_kernels(zn_cpu_features(), &d->k);
	zs_build_predefined(&d->predef);
	d->mem_limit = ZN_ZSTD_MEMORY_DEFAULT;
	zn_zstd_stream_reset(d);
	*out = d;
	return ZN_OK;
}

void zn_zstd_decoder_free(struct zn_zstd_decoder *d)
{
	if (!d)
		return;
	zs_dict_free(d->dict);
	zn_big_free(d->win, d->win_alloc);
	if (d->stage)
		free(d->stage - STAGE_FRONT);
	free(d->lit_buf);
	free(d);
}

void zn_zstd_set_memory_limit(struct zn_zstd_decoder *d, uint64_t limit)
{
	d->mem_limit = limit ? limit : ZN_ZSTD_MEMORY_DEFAULT;
}

zn_result zn_zstd_set_dictionary(struct zn_zstd_decoder *d, const void *dict, size_t len)
{
	struct zs_dict *nd = NULL;
	if (len)
		RETURN_IF_ERROR(zs_dict_load(&nd, dict, len));
	zs_dict_free(d->dict);
	d->dict = nd;
	return ZN_OK;
}

/* ---- frame headers (RFC 8878 3.1.1.1) ------------------------------------------------------ */

/* The header's size (magic number included) from its descriptor byte. */
static size_t frame_header_size(unsigned fhd)
{
	unsigned single = (fhd >> 5) & 1, did = fhd & 3, fcs = fhd >> 6;
	return 5 + !single + (did == 3 ? 4 : did) + (fcs ? 1u << fcs : single);
}

/* The header at p (the magic number already checked), n bytes available. */
static zn_result parse_frame_header(const uint8_t *p, size_t n, struct zs_frame *f)
{
	SAFETY_CHECK(n >= 5, ZN_ERR_TRUNCATED);
	unsigned fhd = p[4], single = (fhd >> 5) & 1, did = fhd & 3, fcs = fhd >> 6;
	size_t hs = frame_header_size(fhd);
	SAFETY_CHECK(n >= hs, ZN_ERR_TRUNCATED);
	SAFETY_CHECK(!(fhd & 8), ZN_ERR_UNSUPPORTED); /* the reserved bit */
	const uint8_t *q = p + 5;
	f->window = 0;
	if (!single) {
		unsigned wlog = 10 + (*q >> 3);
		SAFETY_CHECK(wlog <= ZS_WINDOWLOG_MAX, ZN_ERR_LIMIT);
		uint64_t base = (uint64_t)1 << wlog;
		f->window = base + (base >> 3) * (*q & 7);
		q++;
	}
	unsigned ds = did == 3 ? 4 : did;
	f->dict_id = 0;
	for (unsigned i = 0; i < ds; i++)
		f->dict_id |= (uint32_t)q[i] << (8 * i);
	q += ds;
	switch (fcs ? 1u << fcs : single) {
	case 0:
		f->content_size = ZN_ZSTD_SIZE_UNKNOWN;
		break;
	case 1:
		f->content_size = q[0];
		break;
	case 2:
		f->content_size = zn_get_le16(q) + 256u;
		break;
	case 4:
		f->content_size = zn_get_le32(q);
		break;
	default:
		f->content_size = zn_get_le64(q);
		break;
	}
	if (single)
		f->window = f->content_size;
	f->block_max = (uint32_t)ZN_MIN(f->window, (uint64_t)ZS_BLOCK_MAX);
	f->header_size = (uint32_t)hs;
	f->checksum = (fhd >> 2) & 1;
	return ZN_OK;
}

/* Start decoding a frame: its dictionary, the entropy state it starts from, its checksum. */
static zn_result frame_start(struct zn_zstd_decoder *d, const struct zs_frame *f)
{
	if (f->dict_id)
		SAFETY_CHECK(d->dict && d->dict->id == f->dict_id, ZN_ERR_DICTIONARY);
	if (d->dict && d->dict->has_entropy) {
		d->ent = d->dict->ent;
	} else {
		memset(&d->ent, 0, sizeof(d->ent));
		d->ent.rep[0] = 1;
		d->ent.rep[1] = 4;
		d->ent.rep[2] = 8;
	}
	if (f->checksum)
		XXH64_reset(&d->xxh, 0);
	return ZN_OK;
}

/* The output context of a frame's first block: history is the dictionary, if any. */
static void history_start(const struct zn_zstd_decoder *d, const struct zs_frame *f,
                          struct zs_seq_ctx *c, uint8_t *frame_out)
{
	c->prefix = frame_out;
	c->ext = c->ext_end = NULL;
	if (d->dict) {
		c->ext = d->dict->content;
		c->ext_end = d->dict->content + d->dict->content_len;
	}
	c->prefix_pos = 0;
	c->window = f->window;
	c->ext_is_dict = 1;
}

/* Where the next block may write: its Block_Maximum_Size and what is left of the content size
 * (past them: corrupt), the caller's capacity (past it: output full), writable memory. */
static void block_limits(struct zs_seq_ctx *c, const struct zs_frame *f, uint64_t produced,
                         uint8_t *op, uint8_t *ocap, uint8_t *oend)
{
	uint64_t room = f->block_max;
	if (f->content_size != ZN_ZSTD_SIZE_UNKNOWN)
		room = ZN_MIN(room, f->content_size - produced);
	c->op = op;
	c->oblock = (uintptr_t)op + (uintptr_t)room;
	c->ocap = ocap;
	c->olimit = room < (uint64_t)(ocap - op) ? op + room : ocap;
	c->oend = oend;
}

static zn_result decode_block(struct zn_zstd_decoder *d, const struct zs_frame *f, unsigned type,
                              uint32_t bsize, const uint8_t *src, int slack, struct zs_seq_ctx *c)
{
	if (type == 0 || type == 1) { /* raw, RLE */
		RETURN_IF_ERROR(zs_room_for(c, c->op, bsize));
		if (type == 0)
			memcpy(c->op, src, bsize);
		else
			memset(c->op, src[0], bsize);
		c->op += bsize;
		return ZN_OK;
	}
	struct zs_block_env env = {&d->k,      &d->predef, &d->ent,
	                           &d->tables, d->lit_buf, f->block_max};
	return zs_decode_compressed_block(&env, src, bsize, slack, c);
}

/* A block header: ZN_ERR_CORRUPT for the reserved type or a size over Block_Maximum_Size. */
static zn_result parse_block_header(const uint8_t *p, const struct zs_frame *f, int *last,
                                    unsigned *type, uint32_t *size)
{
	uint32_t bh = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
	*last = bh & 1;
	*type = (bh >> 1) & 3;
	*size = bh >> 3;
	SAFETY_CHECK(*type != 3 && *size <= f->block_max, ZN_ERR_CORRUPT);
	return ZN_OK;
}

static int is_skippable(uint32_t magic)
{
	return (magic & 0xfffffff0u) == ZS_SKIP_MAGIC;
}

/* 1..3 bytes that could begin a frame's magic number. */
static int magic_prefix(const uint8_t *p, size_t n)
{
	uint8_t zm[4], sm[4];
	zn_put_le32(zm, ZS_MAGIC);
	zn_put_le32(sm, ZS_SKIP_MAGIC);
	if (!memcmp(p, zm, n))
		return 1;
	return n < 1 || (p[0] & 0xf0) == sm[0] ? !memcmp(p + 1, sm + 1, n ? n - 1 : 0) : 0;
}

/* ---- whole-buffer decoding ----------------------------------------------------------------- */

/* Begin a frame at [in, in_end) into [out, ocap), with memory writable to oend (>= ocap). */
static zn_result frame_begin(struct zn_zstd_decoder *d, const uint8_t *in, const uint8_t *in_end,
                             uint8_t *out, uint8_t *ocap, uint8_t *oend)
{
	struct zs_whole *w = &d->whole;
	w->in = w->p = in;
	w->in_end = in_end;
	w->out = w->op = out;
	w->ocap = ocap;
	w->oend = oend;
	w->last = 0;
	RETURN_IF_ERROR(parse_frame_header(in, (size_t)(in_end - in), &w->f));
	RETURN_IF_ERROR(frame_start(d, &w->f));
	if (w->f.content_size != ZN_ZSTD_SIZE_UNKNOWN)
		SAFETY_CHECK(w->f.content_size <= (uint64_t)(ocap - out), ZN_ERR_OUTPUT_FULL);
	w->p = in + w->f.header_size;
	return ZN_OK;
}

/* Decode the begun frame's blocks until `need` bytes are out or the frame ends, then its
 * checksum and size. w->p stays at the start of a block that fails. */
static zn_result frame_step(struct zn_zstd_decoder *d, size_t need)
{
	struct zs_whole *w = &d->whole;
	const struct zs_frame *f = &w->f;
	struct zs_seq_ctx c;
	history_start(d, f, &c, w->out);
	while (!w->last && (size_t)(w->op - w->out) < need) {
		const uint8_t *p = w->p;
		SAFETY_CHECK(w->in_end - p >= 3, ZN_ERR_TRUNCATED);
		unsigned type;
		uint32_t bsize;
		int last;
		RETURN_IF_ERROR(parse_block_header(p, f, &last, &type, &bsize));
		p += 3;
		size_t n = type == 1 ? 1 : bsize;
		SAFETY_CHECK((size_t)(w->in_end - p) >= n, ZN_ERR_TRUNCATED);
		block_limits(&c, f, (uint64_t)(w->op - w->out), w->op, w->ocap, w->oend);
		RETURN_IF_ERROR(
		        decode_block(d, f, type, bsize, p, w->in_end - (p + n) >= ZS_WILD, &c));
		if (f->checksum)
			XXH64_update(&d->xxh, w->op, (size_t)(c.op - w->op));
		w->op = c.op;
		w->p = p + n;
		w->last = last;
	}
	if (!w->last)
		return ZN_OK;
	if (f->checksum) {
		SAFETY_CHECK(w->in_end - w->p >= 4, ZN_ERR_TRUNCATED);
		SAFETY_CHECK(zn_get_le32(w->p) == (uint32_t)XXH64_digest(&d->xxh), ZN_ERR_CHECKSUM);
	}
	if (f->content_size != ZN_ZSTD_SIZE_UNKNOWN)
		SAFETY_CHECK((uint64_t)(w->op - w->out) == f->content_size, ZN_ERR_CORRUPT);
	w->p += f->checksum ? 4 : 0;
	return ZN_OK;
}

static zn_result decode_frame(struct zn_zstd_decoder *d, const uint8_t *in, const uint8_t *in_end,
                              uint8_t *out, uint8_t *oend, size_t *in_used, uint8_t **op_end)
{
	zn_result r = frame_begin(d, in, in_end, out, oend, oend);
	if (r == ZN_OK)
		r = frame_step(d, SIZE_MAX);
	*in_used = (size_t)(d->whole.p - in);
	*op_end = d->whole.op;
	return r;
}

zn_result zn_zstd_frame_begin(struct zn_zstd_decoder *d, const void *in, size_t in_len, void *out,
                              size_t out_cap, size_t out_writable)
{
	const uint8_t *ip = in;
	uint8_t *op = out;
	zn_zstd_stream_reset(d);
	d->whole.done = 0;
	d->whole.p = d->whole.in = ip;
	d->whole.op = d->whole.out = op;
	d->whole.last = 0;
	if (in_len < 4 || zn_get_le32(ip) != ZS_MAGIC)
		return in_len < 4 && magic_prefix(ip, in_len) ? ZN_ERR_TRUNCATED
		                                              : ZN_ERR_BAD_HEADER;
	return frame_begin(d, ip, ip + in_len, op, op + out_cap,
	                   op + ZN_MAX(out_cap, out_writable));
}

zn_result zn_zstd_frame_step(struct zn_zstd_decoder *d, size_t need, size_t *out_len, int *done)
{
	zn_result r = d->whole.done ? ZN_OK : frame_step(d, need);
	if (r == ZN_OK && d->whole.last) {
		/* One frame is all there is: what follows it is not ours to skip. */
		if (!d->whole.done)
			SAFETY_CHECK(d->whole.p == d->whole.in_end, ZN_ERR_TRAILING_GARBAGE);
		d->whole.done = 1;
	}
	*out_len = (size_t)(d->whole.op - d->whole.out);
	*done = d->whole.done;
	return r;
}

zn_result zn_zstd_decompress(struct zn_zstd_decoder *d, const void *in, size_t in_len, void *out,
                             size_t out_cap, struct zn_zstd_info *info)
{
	const uint8_t *ip = in, *const in_end = ip + in_len;
	uint8_t *op = out, *const oend = op + out_cap;
	uint64_t frames = 0;
	int any = 0;
	zn_result r = ZN_OK;
	zn_zstd_stream_reset(d);
	while (ip < in_end) {
		size_t avail = (size_t)(in_end - ip);
		if (avail < 4) {
			r = magic_prefix(ip, avail) ? ZN_ERR_TRUNCATED
			    : any                   ? ZN_ERR_TRAILING_GARBAGE
			                            : ZN_ERR_BAD_HEADER;
			break;
		}
		uint32_t magic = zn_get_le32(ip);
		if (is_skippable(magic)) {
			if (avail < 8 || zn_get_le32(ip + 4) > avail - 8) {
				r = ZN_ERR_TRUNCATED;
				break;
			}
			ip += 8 + (size_t)zn_get_le32(ip + 4);
			any = 1;
			continue;
		}
		if (magic != ZS_MAGIC) {
			r = any ? ZN_ERR_TRAILING_GARBAGE : ZN_ERR_BAD_HEADER;
			break;
		}
		size_t used;
		uint8_t *frame_end;
		r = decode_frame(d, ip, in_end, op, oend, &used, &frame_end);
		if (r != ZN_OK) {
			ip += used;
			op = frame_end;
			break;
		}
		ip += used;
		op = frame_end;
		frames++;
		any = 1;
	}
	if (info) {
		struct zn_zstd_info full = {.struct_size = sizeof(full),
		                            .in_used = (uint64_t)(ip - (const uint8_t *)in),
		                            .out_len = (uint64_t)(op - (uint8_t *)out),
		                            .frames = frames};
		zn_sized_out(info, &full, sizeof(full), ZN_FIRST_SIZE_zstd_info);
	}
	return r;
}

/* ---- frame scanning ------------------------------------------------------------------------ */

static zn_result frame_scan(const void *in, size_t in_len, struct zn_zstd_frame_info *fi)
{
	const uint8_t *p = in, *const end = p + in_len;
	SAFETY_CHECK(in_len >= 4, magic_prefix(p, in_len) ? ZN_ERR_TRUNCATED : ZN_ERR_BAD_HEADER);
	uint32_t magic = zn_get_le32(p);
	if (is_skippable(magic)) {
		SAFETY_CHECK(in_len >= 8, ZN_ERR_TRUNCATED);
		uint64_t size = zn_get_le32(p + 4);
		SAFETY_CHECK(size <= in_len - 8, ZN_ERR_TRUNCATED);
		fi->skippable = 1;
		fi->frame_size = 8 + size;
		fi->header_size = 8;
		return ZN_OK;
	}
	SAFETY_CHECK(magic == ZS_MAGIC, ZN_ERR_BAD_HEADER);
	struct zs_frame f;
	RETURN_IF_ERROR(parse_frame_header(p, in_len, &f));
	const uint8_t *q = p + f.header_size;
	uint64_t most = 0;
	int last;
	do {
		SAFETY_CHECK(end - q >= 3, ZN_ERR_TRUNCATED);
		unsigned type;
		uint32_t bsize;
		RETURN_IF_ERROR(parse_block_header(q, &f, &last, &type, &bsize));
		q += 3;
		size_t need = type == 1 ? 1 : bsize;
		SAFETY_CHECK((size_t)(end - q) >= need, ZN_ERR_TRUNCATED);
		q += need;
		most += type == 2 ? f.block_max : bsize;
	} while (!last);
	if (f.checksum) {
		SAFETY_CHECK(end - q >= 4, ZN_ERR_TRUNCATED);
		q += 4;
	}
	fi->content_size = f.content_size;
	fi->window_size = f.window;
	fi->frame_size = (uint64_t)(q - p);
	fi->max_content = f.content_size != ZN_ZSTD_SIZE_UNKNOWN ? f.content_size : most;
	fi->dict_id = f.dict_id;
	fi->header_size = f.header_size;
	fi->has_checksum = f.checksum;
	return ZN_OK;
}

zn_result zn_zstd_frame_scan(const void *in, size_t in_len, struct zn_zstd_frame_info *fi)
{
	if (!zn_sized_len(fi, ZN_FIRST_SIZE_zstd_frame_info))
		return ZN_ERR_INVALID_ARG;
	struct zn_zstd_frame_info full = {.struct_size = sizeof(full)};
	zn_result r = frame_scan(in, in_len, &full);
	zn_sized_out(fi, &full, sizeof(full), ZN_FIRST_SIZE_zstd_frame_info);
	return r;
}

/* ---- streaming ----------------------------------------------------------------------------- */

zn_result zn_zstd_stream_reset(struct zn_zstd_decoder *d)
{
	d->st = S_MAGIC;
	d->err = ZN_OK;
	d->done = 0;
	d->any_frame = 0;
	d->hdr_len = 0;
	d->stage_len = 0;
	d->op = d->flushed = d->win;
	d->in_total = d->out_total = d->frames = d->garbage_at = 0;
	return ZN_OK;
}

void zn_zstd_stream_position(const struct zn_zstd_decoder *d, uint64_t *in_pos, uint64_t *out_pos)
{
	if (in_pos)
		*in_pos = d->err == ZN_ERR_TRAILING_GARBAGE ? d->garbage_at : d->in_total;
	if (out_pos)
		*out_pos = d->out_total;
}

uint64_t zn_zstd_stream_frames(const struct zn_zstd_decoder *d)
{
	return d->frames;
}

/* Move up to need - *have bytes of input into buf; 1 once it holds `need` (or more). */
static int fill(uint8_t *buf, size_t *have, size_t need, const uint8_t **ip, const uint8_t *iend)
{
	if (*have >= need)
		return 1;
	size_t k = ZN_MIN(need - *have, (size_t)(iend - *ip));
	memcpy(buf + *have, *ip, k);
	*have += k;
	*ip += k;
	return *have == need;
}

/* A frame's window buffer: the content size when given and within the window, else the window
 * and one block, with ZS_WILD for the wild copies (and ZS_WILD more behind the wrap point). */
static zn_result stream_frame_start(struct zn_zstd_decoder *d)
{
	const struct zs_frame *f = &d->f;
	SAFETY_CHECK(f->window <= d->mem_limit, ZN_ERR_LIMIT);
	RETURN_IF_ERROR(frame_start(d, f));
	size_t need;
	if (f->content_size != ZN_ZSTD_SIZE_UNKNOWN && f->content_size <= f->window) {
		need = (size_t)f->content_size + ZS_WILD;
		d->wrap_at = SIZE_MAX;
	} else {
		need = (size_t)f->window + 2 * ZS_WILD + f->block_max;
		d->wrap_at = (size_t)f->window + ZS_WILD;
	}
	if (d->win_alloc < need) {
		zn_big_free(d->win, d->win_alloc);
		d->win_alloc = 0;
		d->win = zn_big_alloc(need);
		SAFETY_CHECK(d->win, ZN_ERR_NOMEM);
		d->win_alloc = need;
	}
	d->win_end = d->win + need;
	d->op = d->flushed = d->win;
	struct zs_seq_ctx c;
	history_start(d, f, &c, d->win);
	d->prefix = c.prefix;
	d->ext = c.ext;
	d->ext_end = c.ext_end;
	d->prefix_pos = 0;
	d->ext_is_dict = 1;
	d->produced = 0;
	return ZN_OK;
}

static void frame_end(struct zn_zstd_decoder *d, int zstd_frame)
{
	d->any_frame = 1;
	d->frames += (uint64_t)zstd_frame;
	d->st = S_MAGIC;
}

/* Decode the block whose header was read, once its content is here. 1: done, 0: more input
 * or the output must be handed out first (the buffer is about to wrap). */
static zn_result stream_block(struct zn_zstd_decoder *d, const uint8_t **ip, const uint8_t *iend,
                              int *progress)
{
	*progress = 0;
	if ((size_t)(d->op - d->win) > d->wrap_at) {
		if (d->op > d->flushed)
			return ZN_OK; /* hand out what is there before overwriting it */
		d->ext = d->win;
		d->ext_end = d->op;
		d->ext_is_dict = 0;
		d->prefix = d->win;
		d->prefix_pos = d->produced;
		d->op = d->flushed = d->win;
	}
	size_t need = d->block_type == 1 ? 1 : d->block_size;
	const uint8_t *src;
	int slack = 1;
	/* Straight from the caller's input when it holds the whole block and 8 bytes before it
	 * (zs_decode_compressed_block reads bitstreams from there back). */
	if (d->stage_len == 0 && (size_t)(iend - *ip) >= need && *ip - d->call_in >= 8) {
		src = *ip;
		*ip += need;
		slack = iend - *ip >= ZS_WILD;
	} else {
		if (!d->stage) {
			uint8_t *m = calloc(1, STAGE_FRONT + STAGE_CAP);
			SAFETY_CHECK(m, ZN_ERR_NOMEM);
			d->stage = m + STAGE_FRONT;
		}
		if (!fill(d->stage, &d->stage_len, need, ip, iend))
			return ZN_OK;
		src = d->stage;
		d->stage_len = 0;
	}
	struct zs_seq_ctx c;
	c.prefix = d->prefix;
	c.ext = d->ext;
	c.ext_end = d->ext_end;
	c.prefix_pos = d->prefix_pos;
	c.window = d->f.window;
	c.ext_is_dict = d->ext_is_dict;
	block_limits(&c, &d->f, d->produced, d->op, d->win_end, d->win_end);
	RETURN_IF_ERROR(decode_block(d, &d->f, d->block_type, d->block_size, src, slack, &c));
	size_t n = (size_t)(c.op - d->op);
	if (d->f.checksum)
		XXH64_update(&d->xxh, d->op, n);
	d->op = c.op;
	d->produced += n;
	*progress = 1;
	if (!d->last_block) {
		d->st = S_BLOCK_HEADER;
	} else {
		if (d->f.content_size != ZN_ZSTD_SIZE_UNKNOWN)
			SAFETY_CHECK(d->produced == d->f.content_size, ZN_ERR_CORRUPT);
		if (d->f.checksum)
			d->st = S_CHECKSUM;
		else
			frame_end(d, 1);
	}
	return ZN_OK;
}

/* At the end of a final input between frames: nothing, or the start of something. */
static zn_result stream_tail(struct zn_zstd_decoder *d)
{
	if (magic_prefix(d->hdr, d->hdr_len))
		return ZN_ERR_TRUNCATED;
	return d->any_frame ? ZN_ERR_TRAILING_GARBAGE : ZN_ERR_BAD_HEADER;
}

static zn_result stream_run(struct zn_zstd_decoder *d, const uint8_t **ip, const uint8_t *iend,
                            int final)
{
	for (;;) {
		switch (d->st) {
		case S_MAGIC: {
			if (d->hdr_len == 0 && *ip == iend) {
				d->done = final;
				return ZN_OK;
			}
			d->garbage_at = d->in_total + (uint64_t)(*ip - d->call_in) - d->hdr_len;
			if (!fill(d->hdr, &d->hdr_len, 4, ip, iend))
				return final ? stream_tail(d) : ZN_OK;
			uint32_t magic = zn_get_le32(d->hdr);
			if (is_skippable(magic)) {
				d->st = S_SKIP_HEADER;
				break;
			}
			if (magic != ZS_MAGIC)
				return d->any_frame ? ZN_ERR_TRAILING_GARBAGE : ZN_ERR_BAD_HEADER;
			d->st = S_HEADER;
			break;
		}
		case S_HEADER:
			if (!fill(d->hdr, &d->hdr_len, 5, ip, iend) ||
			    !fill(d->hdr, &d->hdr_len, frame_header_size(d->hdr[4]), ip, iend))
				goto more;
			if (d->op > d->flushed)
				return ZN_OK; /* the previous frame's output first */
			RETURN_IF_ERROR(parse_frame_header(d->hdr, d->hdr_len, &d->f));
			RETURN_IF_ERROR(stream_frame_start(d));
			d->hdr_len = 0;
			d->st = S_BLOCK_HEADER;
			break;
		case S_SKIP_HEADER:
			if (!fill(d->hdr, &d->hdr_len, 8, ip, iend))
				goto more;
			d->skip_left = zn_get_le32(d->hdr + 4);
			d->hdr_len = 0;
			d->st = S_SKIP;
			break;
		case S_SKIP: {
			size_t k = (size_t)ZN_MIN(d->skip_left, (uint64_t)(iend - *ip));
			*ip += k;
			d->skip_left -= k;
			if (d->skip_left)
				goto more;
			frame_end(d, 0);
			break;
		}
		case S_BLOCK_HEADER:
			if (!fill(d->hdr, &d->hdr_len, 3, ip, iend))
				goto more;
			RETURN_IF_ERROR(parse_block_header(d->hdr, &d->f, &d->last_block,
			                                   &d->block_type, &d->block_size));
			d->hdr_len = 0;
			d->st = S_BLOCK;
			break;
		case S_BLOCK: {
			int progress;
			RETURN_IF_ERROR(stream_block(d, ip, iend, &progress));
			if (!progress) {
				if (d->op > d->flushed)
					return ZN_OK; /* output first */
				goto more;
			}
			break;
		}
		case S_CHECKSUM:
			if (!fill(d->hdr, &d->hdr_len, 4, ip, iend))
				goto more;
			SAFETY_CHECK(zn_get_le32(d->hdr) == (uint32_t)XXH64_digest(&d->xxh),
			             ZN_ERR_CHECKSUM);
			d->hdr_len = 0;
			frame_end(d, 1);
			break;
		}
	}
more:
	return final ? ZN_ERR_TRUNCATED : ZN_OK;
}

zn_result zn_zstd_stream(struct zn_zstd_decoder *d, const void *in, size_t in_len, int in_final,
                         size_t *in_used, const void **out, size_t *out_len, int *done)
{
	*in_used = 0;
	*out = NULL;
	*out_len = 0;
	*done = d->done;
	if (d->err != ZN_OK)
		return d->err;
	if (d->done)
		return ZN_OK;
	const uint8_t *ip = in;
	d->call_in = ip;
	d->flushed = d->op;
	zn_result r = stream_run(d, &ip, ip + in_len, in_final);
	*in_used = (size_t)(ip - (const uint8_t *)in);
	d->in_total += *in_used;
	*out = d->flushed;
	*out_len = (size_t)(d->op - d->flushed);
	d->out_total += *out_len;
	d->err = r;
	*done = d->done;
	return r;
}
