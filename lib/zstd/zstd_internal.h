/* SPDX-License-Identifier: MIT */
/* zstd_internal.h - the zstd decoder's format constants, table formats, bit readers, kernel
 * interface and object layout (RFC 8878). */
#ifndef ZN_ZSTD_INTERNAL_H
#define ZN_ZSTD_INTERNAL_H

#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t inside the decoder object */
#include <xxhash.h>

#include "common/common.h"

#define ZS_MAGIC      0xFD2FB528u
#define ZS_SKIP_MAGIC 0x184D2A50u /* ...5F: the low 4 bits are free */
#define ZS_DICT_MAGIC 0xEC30A437u
#define ZS_BLOCK_MAX  (128u << 10)
/* The largest Window_Size a window descriptor may give that we decode (windowLog 31, as
 * libzstd on 64-bit targets): above it ZN_ERR_LIMIT. */
#define ZS_WINDOWLOG_MAX 31

/* Slack for wild copies: the fast paths copy literals and matches in whole vectors and may
 * write up to this many bytes past the end of what they copy (and read as many past the end of
 * the literals), so every output and literal buffer keeps this much beyond its end. */
#define ZS_WILD 64

/* Symbol alphabets and the largest accuracy logs of the sequence codes (RFC 8878 3.1.1.3.2). */
#define ZS_LL_MAX         35
#define ZS_ML_MAX         52
#define ZS_OF_MAX         31
#define ZS_LL_LOG_MAX     9
#define ZS_ML_LOG_MAX     9
#define ZS_OF_LOG_MAX     8
#define ZS_HUF_LOG_MAX    11 /* longest literal codeword */
#define ZS_WEIGHT_LOG_MAX 6
#define ZS_FSE_LOG_MAX    9 /* the largest FSE accuracy log of all the above */

/*
 * A sequence decoding table entry: the FSE state transition and the code's value, resolved
 * when the table is built, so that decoding a length or offset is one lookup, one read of
 * `extra` bits and an add:
 *   value      = base + (extra bits)
 *   next state = next + (nb bits), relative to this entry
 * (a decoder holds its states as pointers to their entries, and moves each by next + bits:
 * no table base needs a register)
 * For offsets `extra` is the offset code and base is 1 << code (RFC 8878 3.1.1.3.2.1.1), less
 * 3 from code 2 up, which makes the value the offset itself (codes 0 and 1 are repeat codes).
 * The layout is fixed (little-endian): kernels load an entry as one 64-bit word.
 */
struct zs_seq_entry {
	int16_t next; /* the next state's base, relative to this entry's own index */
	uint8_t nb;
	uint8_t extra;
	uint32_t base;
};

/* A Huffman-weight FSE table entry (accuracy log <= 6). */
struct zs_fse_entry {
	uint16_t next;
	uint8_t nb;
	uint8_t sym;
};

/* Literal decoding tables, indexed by the next ZS_HUF_LOG_MAX bits of the stream: entries of
 * (symbol << 8) | codeword length; and the two-symbol table, whose entries hold the two
 * symbols whose codewords both fit in those bits (one when the second does not), as
 * symbols (first in the low byte) | bits << 16 | count << 24. */
#define ZS_HUF_TABLE_SIZE (1u << ZS_HUF_LOG_MAX)

/* ---- the backward bit reader ---------------------------------------------------------------
 *
 * zstd's bitstreams (Huffman streams, the sequence stream, the Huffman weights) are written
 * forwards and read from their last byte backwards; the highest set bit of the last byte marks
 * where the data starts. `bits` holds the 8 bytes at `p` as loaded (little-endian), `consumed`
 * counts the bits read from its top. A stream shorter than 8 bytes is loaded once, whole, into
 * the low bytes of `bits` with `consumed` counting the missing high bytes as read, so the end
 * test is the same for all lengths: every bit consumed exactly when p == start and consumed
 * == 64. Reading past the start (a corrupt stream) only makes `consumed` exceed 64: shifts are
 * masked, the values are garbage, the end test fails, and no byte before `start` is touched. */
struct zs_bw {
	uint64_t bits;
	uint32_t consumed;
	const uint8_t *p;
	const uint8_t *start;
};

/* Start reading [start, start + n); ZN_ERR_CORRUPT when n == 0 or the last byte is 0. */
static inline zn_result zs_bw_init(struct zs_bw *b, const uint8_t *start, size_t n)
{
	SAFETY_CHECK(n >= 1 && start[n - 1] != 0, ZN_ERR_CORRUPT);
	unsigned skip = (unsigned)__builtin_clz(start[n - 1]) - 23; /* zeros above the marker + 1 */
	b->start = start;
	if (n >= 8) {
		b->p = start + n - 8;
		b->bits = zn_get_le64(b->p);
		b->consumed = skip;
	} else {
		uint64_t v = 0;
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)start[i] << (8 * i);
		b->p = start;
		b->bits = v;
		b->consumed = (uint32_t)(8 * (8 - n)) + skip;
	}
	return ZN_OK;
}

/* Reload whole consumed bytes. Afterwards at least 57 bits are ready unless fewer than 8 bytes
 * of the stream are left unread. */
static ZN_FORCEINLINE void zs_bw_reload(struct zs_bw *b)
{
	if (likely(b->p - b->start >= 8)) { /* consumed <= 64 here: see the callers' budgets */
		b->p -= b->consumed >> 3;
		b->consumed &= 7;
		b->bits = zn_get_le64(b->p);
		return;
	}
	if (b->p == b->start || b->consumed > 64)
		return;
	size_t k = ZN_MIN((size_t)(b->consumed >> 3), (size_t)(b->p - b->start));
	b->p -= k;
	b->consumed -= (uint32_t)(8 * k);
	b->bits = zn_get_le64(b->p);
}

/* The next n (0..32) bits, consumed. */
static ZN_FORCEINLINE uint32_t zs_bw_get(struct zs_bw *b, unsigned n)
{
	uint64_t v = ((b->bits << (b->consumed & 63)) >> 1) >> ((63 - n) & 63);
	b->consumed += n;
	return (uint32_t)v;
}

/* Every bit read, none past the start. */
static inline int zs_bw_finished(const struct zs_bw *b)
{
	return b->p == b->start && b->consumed == 64;
}

static inline int zs_bw_overflowed(const struct zs_bw *b)
{
	return b->consumed > 64;
}

/* ---- kernels: the per-ISA hot loops (zstd_seq_template.h, zstd_huf_template.h) ------------ */

/* Decoding and executing the sequences of one block. The kernel runs the sequences until one
 * the fast path cannot take (near the end of the output, literals running out, a match
 * reaching before `prefix` or beyond the window, a corrupt value): it returns ZS_PENDING with
 * that one decoded, and the caller executes it with zs_exec_slow(), which checks everything,
 * and calls the kernel again for the rest. */
struct zs_seq_ctx {
	/* The sequence bitstream [bstart, ...) read backwards: the 8 bytes at bp hold the next
	 * bits, `consumed` of them (from the top) already read. The kernel reloads by moving bp
	 * back by the whole bytes consumed, and may do so to bstart - 8: at least 8 readable
	 * bytes precede every bitstream in a block (see zs_decode_compressed_block), so a
	 * bitstream of any length is read with whole-word loads, and only reading more bits than
	 * it holds, a corrupt stream, moves bp further (ZN_ERR_CORRUPT). Every bit is read
	 * exactly when (bp - bstart) * 8 + 64 == consumed. */
	const uint8_t *bp, *bstart;
	uint32_t consumed;
	const struct zs_seq_entry *ll, *of, *ml; /* the states: their table entries */
	uint32_t nseq;                           /* sequences not yet decoded */
	uint32_t rep[3];
	struct {
		uint32_t ll, ml, off;
	} pend;
	/* Literals [lit, lit_end); ZS_WILD readable bytes follow lit_end. */
	const uint8_t *lit, *lit_end;
	/* Output. The block may write up to `oblock` (its Block_Maximum_Size or the frame's
	 * content size: past it is ZN_ERR_CORRUPT) and up to `ocap` (the end of the caller's
	 * buffer: past it is ZN_ERR_OUTPUT_FULL); `olimit` is the nearer of the two. Memory is
	 * writable up to `oend` (>= olimit), of which the fast path keeps ZS_WILD. */
	uint8_t *op;
	uint8_t *olimit, *ocap, *oend;
	uintptr_t oblock; /* an address, possibly past the buffer */
	/* History: the output before `op` back to `prefix` is contiguous; [ext, ext_end) comes
	 * before `prefix` (a dictionary's content, or in a streaming window the previous lap of
	 * the buffer). prefix_pos is the frame's output before `prefix`. */
	const uint8_t *prefix, *ext, *ext_end;
	uint64_t prefix_pos;
	uint64_t window;
	int ext_is_dict; /* the dictionary may be reached while the frame's output <= window */
};
typedef zn_result (*zs_seq_fn)(struct zs_seq_ctx *c);
/* A kernel's result besides ZN_OK and errors: it stopped at a sequence the fast path cannot
 * execute, decoded into c->pend (c->nseq counts the sequences after it). */
#define ZS_PENDING ((zn_result)-1)

/* The careful execution of one sequence (zstd_sequences.c): literals and match, every bound
 * checked, copies exact. *op and *lit advance. */
zn_result zs_exec_slow(struct zs_seq_ctx *c, uint8_t **op, const uint8_t **lit, uint32_t ll,
                       uint32_t ml, uint32_t off);
/* ZN_OK if n more bytes fit before c->olimit, else ZN_ERR_CORRUPT past the block's limit and
 * ZN_ERR_OUTPUT_FULL past the caller's buffer. */
zn_result zs_room_for(const struct zs_seq_ctx *c, const uint8_t *op, size_t n);
/* A match the fast path could not take (before `prefix`, beyond the window, or offset 0): the
 * output has room for it with ZS_WILD to spare. */
zn_result zs_match_slow(struct zs_seq_ctx *c, uint8_t *op, uint32_t off, uint32_t ml);

/* Four Huffman streams at once while every stream has input and output to spare: the fast
 * loop leaves each stream at a symbol boundary, its state in ip/consumed in the zs_bw sense
 * (bits reloaded from ip), for the careful loop to finish. */
struct zs_huf4_ctx {
	const uint8_t *ip[4];
	uint32_t consumed[4]; /* <= 8 on entry */
	const uint8_t *start[4];
	uint8_t *op[4];
	uint8_t *oend[4];
	const uint16_t *dt;
	const uint32_t *dt2; /* for huf4x2 */
};
typedef void (*zs_huf4_fn)(struct zs_huf4_ctx *c);

struct zs_kernels {
	zs_seq_fn seq;
	zs_huf4_fn huf4, huf4x2;
	const char *name;
};
/* The best kernels for the CPU features `f` (zn_cpu_features()). */
void zn_zstd_select_kernels(uint32_t f, struct zs_kernels *k);
void zn_zstd_generic_kernels(struct zs_kernels *k);

/* ---- tables (zstd_fse.c) ------------------------------------------------------------------- */

/* Parse an FSE table description (RFC 8878 4.1.1) from [p, p + n): norm[0..*max_sym] with
 * -1 for "less than 1"; *max_sym in: the largest symbol allowed, out: the last one present.
 * *used is the description's length in bytes. */
zn_result zs_fse_read_counts(const uint8_t *p, size_t n, int16_t *norm, unsigned *max_sym,
                             unsigned *log, unsigned max_log, size_t *used);
/* Sequence tables from a distribution: the values of symbol s are base[s] + extra bits[s]
 * (offsets: pass NULL for both, base = 1 << s, extra = s). */
void zs_build_seq_table(struct zs_seq_entry *t, const int16_t *norm, unsigned max_sym, unsigned log,
                        const uint32_t *base, const uint8_t *bits);
void zs_build_seq_rle(struct zs_seq_entry *t, unsigned sym, const uint32_t *base,
                      const uint8_t *bits);
void zs_build_fse_table(struct zs_fse_entry *t, const int16_t *norm, unsigned max_sym,
                        unsigned log);
extern const uint32_t zs_ll_base[ZS_LL_MAX + 1], zs_ml_base[ZS_ML_MAX + 1];
extern const uint8_t zs_ll_bits[ZS_LL_MAX + 1], zs_ml_bits[ZS_ML_MAX + 1];

/* The predefined tables (RFC 8878 3.1.1.3.2.2), built once per decoder. */
struct zs_predef {
	struct zs_seq_entry ll[64], ml[64], of[32];
};
void zs_build_predefined(struct zs_predef *p);

/* ---- the decoder --------------------------------------------------------------------------- */

/* Entropy state carried from block to block within a frame: the tables of the last compressed
 * block with sequences, the last Huffman table, the repeat offsets. The pointers point into
 * the decoder's own storage, its predefined tables or the dictionary's tables. */
struct zs_entropy {
	const struct zs_seq_entry *ll, *of, *ml; /* NULL: none yet (Repeat_Mode is corrupt) */
	unsigned ll_log, of_log, ml_log;
	const uint16_t *huf;  /* NULL: none yet (Treeless literals are corrupt) */
	const uint32_t *huf2; /* huf's two-symbol table; NULL: not built yet */
	uint32_t rep[3];
};

/* Storage for tables a block describes. */
struct zs_tables {
	struct zs_seq_entry ll[1u << ZS_LL_LOG_MAX];
	struct zs_seq_entry ml[1u << ZS_ML_LOG_MAX];
	struct zs_seq_entry of[1u << ZS_OF_LOG_MAX];
	uint16_t huf[ZS_HUF_TABLE_SIZE] __attribute__((aligned(64)));
	uint32_t huf2[ZS_HUF_TABLE_SIZE] __attribute__((aligned(64)));
};

/* A loaded dictionary (zstd_dict.c): its content, its ID (0 for raw content) and, for the zstd
 * dictionary format, its entropy tables, which a frame starts from. */
struct zs_dict {
	uint8_t *content;
	size_t content_len;
	uint32_t id;
	int has_entropy;
	struct zs_entropy ent; /* pointers into `tables` */
	struct zs_tables tables;
};
zn_result zs_dict_load(struct zs_dict **out, const void *dict, size_t len);
void zs_dict_free(struct zs_dict *d);

/* Read a Huffman tree description (RFC 8878 4.2.1) at [p, p + n) and build its decoding table
 * into `dt` (ZS_HUF_TABLE_SIZE entries): *used is the description's length. */
zn_result zs_read_huffman_tree(const uint8_t *p, size_t n, uint16_t *dt, size_t *used);
/* Read an FSE-compressed sequence table description into `t` (dictionaries and blocks). */
zn_result zs_read_seq_table(const uint8_t *p, size_t n, struct zs_seq_entry *t, unsigned *log,
                            unsigned max_sym, unsigned max_log, const uint32_t *base,
                            const uint8_t *bits, size_t *used);

/* What a block decoder needs besides the output context. */
struct zs_block_env {
	const struct zs_kernels *k;
	const struct zs_predef *predef;
	struct zs_entropy *ent;
	struct zs_tables *tables;
	uint8_t *lit_buf; /* ZS_BLOCK_MAX + ZS_WILD bytes */
	uint32_t block_max;
};

/* Decode the literals section at [src, src + n) (zstd_literals.c): *lit, *lit_len are the
 * literals (in env->lit_buf, or in place for raw literals when ZS_WILD bytes can be read after
 * them), *used the section's size. */
zn_result zs_decode_literals(struct zs_block_env *env, const uint8_t *src, size_t n, int src_slack,
                             const uint8_t **lit, size_t *lit_len, size_t *used);

/* Decode one compressed block [src, src + n) into the output described by `c` (op, olimit,
 * oend, history; the rest of `c` is filled in here). At least 8 bytes before src must be
 * readable (in a whole-buffer decode the frame and block headers are; a streaming decoder
 * stages its input with room for them), and ZS_WILD after src + n when `src_slack` is set. On
 * success c->op is the end of the block's output. */
zn_result zs_decode_compressed_block(struct zs_block_env *env, const uint8_t *src, size_t n,
                                     int src_slack, struct zs_seq_ctx *c);

#endif
