/* SPDX-License-Identifier: MIT */
/* znippy.h - the public API of libznippy: archives of directory trees and fast decoders.
 *
 * This is the only header a program needs. Everything in it is C11; all sizes are 64-bit; every
 * function that can fail returns an `enum zn_result` (0 is success) and hands sizes back through
 * out-parameters. Objects are opaque. Unless a function says otherwise, one object is used by one
 * thread at a time; different objects may be used from different threads concurrently.
 *
 * Conventions
 *   Objects are made by zn_<object>_open() (those on a file: writer, reader) or _new()
 *   (decoders), and freed by zn_<object>_free(), which takes NULL.
 *   Structs a caller allocates (options, entries, statistics, information) begin with a
 *   `struct_size` field: sizeof the struct as the caller's header declares it. The struct's _init()
 * function sets it (with the defaults); for a struct the library only fills, `= {.struct_size =
 *   sizeof x}` does (the declaration is then complete: the other fields are zero). The
 *   library reads and writes only that many bytes, taking defaults for fields added after them,
 *   so a program built against an older header keeps working with a newer library. A size of 0
 *   stands for the first layout (0.5.0); one below it is ZN_ERR_INVALID_ARG.
 *   Callbacks come in one struct, struct zn_hooks, passed to the call that runs them.
 *
 * ABI: the shared library's SONAME is libznippy.so.MAJOR. Within a major version, releases only
 * add: functions, enum values, and fields at the end of sized structs. Before 1.0 a minor release
 * may still break the API; the SONAME then changes with it (0 -> 1 at 1.0).
 */
#ifndef ZNIPPY_H
#define ZNIPPY_H

#include <signal.h> /* sig_atomic_t */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ZN_API __attribute__((visibility("default")))
#else
#define ZN_API
#endif

#define ZN_VERSION_MAJOR  0
#define ZN_VERSION_MINOR  5
#define ZN_VERSION_PATCH  0
#define ZN_VERSION_STRING "0.5.0"

/* ------------------------------------------------------------------------------------------------
 * Results. One list for the whole library; the numeric values are pinned (append, never reorder).
 * ---------------------------------------------------------------------------------------------- */
#define ZN_RESULT_LIST(X)                                                                          \
	X(ZN_OK, 0, "success")                                                                     \
	X(ZN_ERR_NOMEM, 1, "out of memory")                                                        \
	X(ZN_ERR_IO, 2, "I/O error")                                                               \
	X(ZN_ERR_INVALID_ARG, 3, "invalid argument")                                               \
	X(ZN_ERR_CORRUPT, 4, "corrupt data")                                                       \
	X(ZN_ERR_TRUNCATED, 5, "unexpected end of input")                                          \
	X(ZN_ERR_CHECKSUM, 6, "checksum mismatch")                                                 \
	X(ZN_ERR_UNSUPPORTED, 7, "unsupported format version or feature")                          \
	X(ZN_ERR_NOT_FOUND, 8, "not found")                                                        \
	X(ZN_ERR_EXISTS, 9, "file exists")                                                         \
	X(ZN_ERR_UNSAFE_PATH, 10, "unsafe path")                                                   \
	X(ZN_ERR_LIMIT, 11, "size limit exceeded")                                                 \
	X(ZN_ERR_CANCELED, 12, "canceled")                                                         \
	X(ZN_ERR_CODEC, 13, "compression library error")                                           \
	X(ZN_ERR_DAMAGED, 14, "some entries are damaged")                                          \
	X(ZN_ERR_CHANGED, 15, "file changed while being read")                                     \
	X(ZN_ERR_OUTPUT_FULL, 16, "output buffer too small")                                       \
	X(ZN_ERR_BAD_HEADER, 17, "bad stream header")                                              \
	X(ZN_ERR_BAD_BLOCK_TYPE, 18, "invalid block type")                                         \
	X(ZN_ERR_BAD_STORED_LEN, 19, "stored block length mismatch")                               \
	X(ZN_ERR_BAD_CODE_LENGTHS, 20, "invalid Huffman code lengths")                             \
	X(ZN_ERR_BAD_SYMBOL, 21, "invalid literal/length or distance symbol")                      \
	X(ZN_ERR_BAD_DISTANCE, 22, "distance too far back")                                        \
	X(ZN_ERR_TRAILING_GARBAGE, 23, "trailing garbage after stream")                            \
	X(ZN_ERR_LENGTH_MISMATCH, 24, "length mismatch (gzip ISIZE)")                              \
	X(ZN_ERR_HEADER_CHECKSUM, 25, "header checksum mismatch (gzip FHCRC)")                     \
	X(ZN_ERR_DICTIONARY, 26, "wrong or missing dictionary")

enum zn_result {
#define ZN_RESULT_ENUM_(name, value, msg) name = value,
	ZN_RESULT_LIST(ZN_RESULT_ENUM_)
#undef ZN_RESULT_ENUM_
};
typedef enum zn_result zn_result;

/* "ZN_ERR_IO" for ZN_ERR_IO; "ZN_UNKNOWN" for values outside the list. Never NULL. */
ZN_API const char *zn_result_name(zn_result r);
/* A short human message ("checksum mismatch"). Never NULL. */
ZN_API const char *zn_result_message(zn_result r);
/* The library version string, ZN_VERSION_STRING at build time. */
ZN_API const char *zn_version(void);

/* ------------------------------------------------------------------------------------------------
 * Limits. The archive format's and the library's; programs check their arguments against these.
 * ---------------------------------------------------------------------------------------------- */
#define ZN_CHUNK_SIZE_MIN     ((uint64_t)64 << 10) /* block size bounds of the format */
#define ZN_CHUNK_SIZE_MAX     ((uint64_t)256 << 20)
#define ZN_CHUNK_SIZE_DEFAULT ((uint64_t)1 << 20)
#define ZN_LEVEL_MIN          1 /* zstd levels the writer takes (ZSTD_maxCLevel() is 22) */
#define ZN_LEVEL_MAX          22
#define ZN_LEVEL_DEFAULT      3
#define ZN_THREADS_MAX        256                   /* more threads than this are capped to it */
#define ZN_MEMORY_DEFAULT     ((uint64_t)256 << 20) /* zn_create_options.memory_limit */

/* ------------------------------------------------------------------------------------------------
 * Archives: entries and options
 * ---------------------------------------------------------------------------------------------- */
enum zn_entry_type {
	ZN_TYPE_FILE = 0,
	ZN_TYPE_DIR = 1,
	ZN_TYPE_SYMLINK = 2,
	ZN_TYPE_HARDLINK = 3,
};

enum zn_digest_kind { ZN_DIGEST_NONE = 0, ZN_DIGEST_SHA256 = 1 };

/* Metadata of one entry. Strings are byte strings with explicit lengths (a path may hold any byte
 * but NUL); a length of 0 with a string that is not NULL means strlen (zn_writer_add_*). In
 * entries returned by a reader, pointers point into the reader's memory and stay valid until
 * zn_reader_free(). */
struct zn_entry {
	size_t struct_size; /* sizeof(struct zn_entry) (see Conventions above) */
	const char *path;   /* relative, '/'-separated, no leading '/', no "." or ".." parts */
	size_t path_len;
	uint32_t type; /* enum zn_entry_type */
	uint32_t mode; /* permission bits (07777) */
	uint32_t uid, gid;
	const char *uname; /* may be NULL/empty; at most 255 bytes, no NUL */
	size_t uname_len;
	const char *gname; /* the same */
	size_t gname_len;
	int64_t mtime_ns; /* nanoseconds since the epoch */
	uint64_t size;    /* content bytes (regular files; 0 otherwise) */
	const char *link; /* symlink target, or the hardlink's target path; else NULL */
	size_t link_len;
	uint8_t sha256[32]; /* valid when has_digest */
	int has_digest;
	/* Reader only: where the content lives (a reading program rarely needs these). */
	uint64_t stored_size; /* compressed bytes attributed to this entry (approximate in solid
	                         blocks) */
	uint32_t first_block;
	uint64_t block_offset;
};

/* An entry to add: struct_size set, type `type`, mode 0755 for a directory, 0777 for a symlink,
 * 0644 otherwise, the process's user and group ids (no names), the time now; nothing else. */
ZN_API void zn_entry_init(struct zn_entry *e, int type);

struct zn_create_options {
	size_t struct_size;  /* sizeof(struct zn_create_options): zn_create_options_init sets it */
	int level;           /* zstd level, ZN_LEVEL_MIN..ZN_LEVEL_MAX; default ZN_LEVEL_DEFAULT */
	unsigned threads;    /* threads that work, the caller's among them; 0 = one per CPU the
	                        process may run on (its affinity, as nproc counts); at most
	                        ZN_THREADS_MAX. They compress, hash and write blocks, and share
	                        the reading of small files with the caller while no block waits */
	uint64_t chunk_size; /* block size in bytes; default 1 MiB; 64 KiB .. 256 MiB (from
	                        about 31 MiB up, raise memory_limit: see below) */
	uint64_t memory_limit; /* bound on pipeline buffers; default ZN_MEMORY_DEFAULT; 0 = that; at
	                          least zn_create_memory_min(chunk_size), about 8 x chunk_size,
	                          else zn_writer_open fails with ZN_ERR_INVALID_ARG. Each worker's
	                          zstd context comes on top: for 1 MiB chunks 1.3 MB at level 3,
	                          13 MB at levels 9 to 12, 18 MB at 19 (2 MiB chunks: 26-35 MB
	                          from level 12 up) */
	int no_skip;           /* 1: compress even known-compressed file types */
	int digest;            /* enum zn_digest_kind; default ZN_DIGEST_SHA256 */
	int no_uring;          /* 1: read with plain system calls even where io_uring works */
	int no_dedup;          /* 1: store every file's bytes, even a file identical to an earlier
	                          one (by default such a file points at the first copy; needs
	                          ZN_DIGEST_SHA256) */
	int one_file_system;   /* 1: as tar --one-file-system, a walk does not enter a directory
	                          on another file system than its parent's (a mount point): it is
	                          stored without its contents; PATHs given are always walked */
	int no_recursion;      /* 1: as tar --no-recursion, a directory given to
	                          zn_writer_add_path() is stored without its contents */
	uint64_t digest_min_size; /* regular files smaller than this many bytes get no stored
	                          SHA-256 (readers compute it from the content, which the
	                          blocks' checksums cover: zn_reader_digest); default
	                          ZN_DIGEST_MIN_SIZE_DEFAULT. 0: every file's is stored, and the
	                          archive is format version 1, as written before version 2
	                          (else 2, which older readers refuse; its index is smaller,
	                          with ZN_DIGEST_NONE too) */
	int no_packages;          /* 1: store no package coordinates. By default each package file
	                             (zn_pkg_file_kind) gets zn_pkg_detect()'s, read from the bytes
	                             being archived, and the index holds them (zn_reader_package) */
	const char *repo; /* a repository name stored with the archive (zn_reader_repo), at most
	                     255 bytes, no NUL; NULL or "": none */
};
#define ZN_DIGEST_MIN_SIZE_DEFAULT 1024

/* Fill with the defaults listed above, struct_size included. */
ZN_API void zn_create_options_init(struct zn_create_options *opt);
/* The smallest memory_limit zn_writer_open accepts for this chunk size. */
ZN_API uint64_t zn_create_memory_min(uint64_t chunk_size);

/* Reports a problem with one input or entry (a file that could not be read, a damaged entry).
 * `path` is the entry's stored path (when creating, a PATH given to zn_writer_add_path()
 * that cannot be looked at is named as given; with strip_components, the path as written), `what`
 * is a human-readable message, `r` the result (ZN_OK for a warning). Called one at a time: by the
 * writer on the thread that calls zn_writer_add_*() and zn_writer_finish(), by zn_extract()
 * and zn_verify() from their worker threads. */
typedef void (*zn_problem_fn)(void *ctx, const char *path, zn_result r, const char *what);

/* Decides whether a path found while walking a tree is included: return 0 to skip it (and, for a
 * directory, everything below it). `rel` is the path as it will be stored. For the path given
 * to zn_writer_add_path(), each directory above it in its stored name is asked about first
 * (is_dir 1), as a walk from the top would have: one left out takes the path with it. The hook
 * may add entries with zn_writer_add_memory() or zn_writer_add_stream() (a file beside each
 * directory, say): they go into the archive after every file the walk found before. A problem
 * hook may not (ZN_ERR_INVALID_ARG while the writer reads a batch of files). Neither hook may
 * call zn_writer_add_path() while that walks (ZN_ERR_INVALID_ARG, and nothing is added). */
typedef int (*zn_filter_fn)(void *ctx, const char *rel, int is_dir);

/* Progress: bytes of content processed so far, and the total (0 when it is not known: the
 * writer never knows it). The writer calls it from its own output thread, so a `ctx` shared with
 * the problem hook needs its own locking. */
typedef void (*zn_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* Changes an entry's metadata before it is stored (as tar's --owner, --group, --mode and
 * --mtime do). zn_writer_finish() calls it once for every entry stored, in path order, before
 * the index is written, on the thread that calls zn_writer_finish(). The fields of `e` are
 * filled in as they will be stored (not the reader-only ones); the hook may change mode (bits
 * outside 07777 are ignored), uid, gid, uname and uname_len, gname and gname_len (NULL or empty: no
 * name; the strings need to live only until the hook returns) and mtime_ns. Changes to other fields
 * are ignored. A name longer than 255 bytes or holding a NUL makes zn_writer_finish() fail with
 * ZN_ERR_INVALID_ARG (the entry is named through the problem hook; the output then holds blocks
 * but no index, and reads as no archive). */
struct zn_entry;
typedef void (*zn_meta_fn)(void *ctx, struct zn_entry *e);

/* Called by zn_extract() once everything is done, in the archive's (stored path) order, for each
 * entry extracted (the path as written, after strip_components; not NUL-terminated), as tar -v
 * lists them; not called after an error that stopped the extraction. */
typedef void (*zn_extracted_fn)(void *ctx, const char *path, size_t path_len);

/* The callbacks of an operation, each NULL for none, all given `ctx`: the writer
 * (zn_writer_open) takes problem, filter, progress and meta; zn_extract problem, progress and
 * extracted; zn_verify problem and progress. The struct is read when the operation starts and
 * need not outlive that call. */
struct zn_hooks {
	size_t struct_size; /* sizeof(struct zn_hooks), or 0 (see Conventions) */
	void *ctx;
	zn_problem_fn problem;
	zn_progress_fn progress;
	zn_filter_fn filter;
	zn_meta_fn meta;
	zn_extracted_fn extracted;
};

/* ------------------------------------------------------------------------------------------------
 * Writing archives
 * ---------------------------------------------------------------------------------------------- */
struct zn_writer;

/* Start an archive written to `fd` (a file or a pipe; it is written sequentially and never seeked).
 * A regular file must be at offset 0, and empty if opened with O_APPEND (ZN_ERR_INVALID_ARG
 * otherwise: the archive's offsets count from the file's start); one that holds anything is emptied
 * here (ZN_ERR_IO if it cannot be), so that a write that fails or is given up never leaves an older
 * archive in it that still reads as whole. Writing to a pipe whose reader has gone raises SIGPIPE,
 * which kills a process that does not ignore or handle it; ignored, the write fails with EPIPE and
 * the writer's calls return ZN_ERR_IO. The writer does not close `fd`. On success *out owns worker
 * threads until zn_writer_finish() or zn_writer_free(). A negative fd is ZN_ERR_INVALID_ARG;
 * ZN_ERR_IO (the file cannot be emptied, or its first bytes written) leaves errno saying why.
 * `opt` NULL: the defaults; `hooks` NULL: none (see struct zn_hooks for those the writer calls). */
ZN_API zn_result zn_writer_open(struct zn_writer **out, int fd, const struct zn_create_options *opt,
                                const struct zn_hooks *hooks);

/* Add a file, symlink or directory tree from the filesystem. `fs_path` is opened as given;
 * `name` is its stored path (NULL: fs_path), with a leading "/" and "." parts removed, and
 * everything up to a last ".." too, which is reported through the problem hook as a warning.
 * A name that is empty after that ("", ".", "/") is allowed only for a directory, whose
 * entries then go to the top of the archive; for anything else the call fails with
 * ZN_ERR_INVALID_ARG and stores nothing. Directories are walked recursively in byte order of
 * names; hardlinked files are stored once. Unreadable inputs are reported through the problem
 * hook and left out (a directory that cannot be opened too, rather than stored empty), and make
 * zn_writer_finish() return ZN_ERR_IO (the archive is still complete for everything else). A file
 * whose size or modification time after the read differs from what the walk saw is stored as read
 * (up to the size the walk saw) and reported with ZN_ERR_CHANGED, as tar's "file changed as we read
 * it"; that alone is not an error. A directory walked before under the same stored path (the same
 * device and inode) is not walked again, and is reported once as given more than once (so a filter
 * changed between the calls does not apply to it). */
ZN_API zn_result zn_writer_add_path(struct zn_writer *w, const char *fs_path, const char *name);

/* Add one entry from memory (zn_entry_init gives one its defaults). `e->path` is required; for
 * ZN_TYPE_FILE `data` holds e->size bytes (copied before the call returns); for other types size
 * and data are ignored (stored as 0). Digest and block fields of `e` are ignored. Fails with
 * ZN_ERR_UNSAFE_PATH for a path that is not in the stored form: empty, absolute, with "." or ".."
 * parts, empty parts ("a//b") or a trailing
 * '/'. A path added twice is stored once (the first): a later one is reported through the problem
 * hook as a warning (ZN_OK) when it is added, and its content is not taken, except for
 * directories, which merge silently (the first one's metadata is kept). The same holds for the
 * paths zn_writer_add_path() finds, but for one that is a different file (not the first's device
 * and inode; the first may also have come from memory): that is reported with ZN_ERR_EXISTS, not
 * stored, and makes zn_writer_finish() return ZN_ERR_IO, as an input left out does. A first one
 * that could not be read (already reported) gives its place to the later one. A hardlink whose
 * target path is not a regular file of the archive, and an entry below a path that is not a
 * directory (a file or symlink "a", and "a/b"), are left out, reported, and make
 * zn_writer_finish() return ZN_ERR_IO. */
ZN_API zn_result zn_writer_add_memory(struct zn_writer *w, const struct zn_entry *e,
                                      const void *data);

/* Reads up to n bytes of an entry's content into buf. Returns how many (0 only at its end), or
 * -1 on failure, with errno saying why if it can. */
typedef int64_t (*zn_read_fn)(void *ctx, void *buf, size_t n);

/* As zn_writer_add_memory(), but a regular file's e->size bytes come from `read`, called on this
 * thread as they are needed, so that an entry of any size (a download) is added with no more
 * memory than the writer's own buffers; entries of other types read nothing (for them, and for
 * a file of size 0, `read` may be NULL; otherwise ZN_ERR_INVALID_ARG). Exactly e->size
 * bytes are read: whatever follows is left unread. With e->size = ZN_SIZE_UNKNOWN, `read` is
 * called until it returns 0, and the entry's size is what it gave (each chunk is then copied
 * once more, from a buffer read a chunk ahead). If `read` fails or ends early, the entry is
 * left out, reported through the problem hook, and the call returns ZN_ERR_IO or
 * ZN_ERR_TRUNCATED; the archive stays valid without it (chunks already written for it remain
 * as unreferenced bytes), and zn_writer_finish() is not affected. A streamed file of at least
 * the chunk size is always stored, and later files are not compared with it: that needs its
 * bytes twice. A callback failing with errno EINTR is called again. */
#define ZN_SIZE_UNKNOWN UINT64_MAX
ZN_API zn_result zn_writer_add_stream(struct zn_writer *w, const struct zn_entry *e,
                                      zn_read_fn read, void *ctx);

/* Flush all blocks, write the index and the footer. Returns the first error that happened. */
ZN_API zn_result zn_writer_finish(struct zn_writer *w);

/* Stop the workers (if still running) and free everything. NULL is allowed. */
ZN_API void zn_writer_free(struct zn_writer *w);

struct zn_write_stats {
	size_t struct_size; /* sizeof(struct zn_write_stats), or 0 (see Conventions) */
	uint64_t entries, files, dirs, symlinks, hardlinks;
	uint64_t content_bytes; /* uncompressed content */
	uint64_t archive_bytes; /* everything written */
	uint64_t blocks, stored_blocks;
	uint64_t index_bytes;
	uint64_t duplicates; /* files whose rows point at the bytes of an identical earlier file */
	int complete;        /* 1 when the whole archive (blocks, index, footer) was written */
	int write_errno;     /* errno of the first failed write of the archive; 0 if none */
	/* Where the CPU time went, per stage, in nanoseconds of the threads' CPU time (user and
	 * system): the walk and the reads of files (the caller's thread and the crew that shares
	 * its reads), compression (checksums, whole-file SHA-256 and zstd, one job per block),
	 * the SHA-256 chains of files cut into several blocks (one at a time, in order), the
	 * output (writing blocks, and reading the chunks stored as they are), and the index. With
	 * the wall time, how well the work spreads over threads: a stage that runs one at a time
	 * (span, output, and the caller's share of read) bounds the speed-up of the others. */
	uint64_t cpu_read_ns, cpu_compress_ns, cpu_span_ns, cpu_output_ns, cpu_index_ns;
};
/* The counts describe the archive once zn_writer_finish() has completed it (complete = 1);
 * before that, or when it failed, they are 0 or partial, and only write_errno is meaningful. */
ZN_API void zn_writer_stats(const struct zn_writer *w, struct zn_write_stats *st);

/* Never archive the file with this device and inode number (the archive's own output file is
 * skipped anyway): for a program that writes a new archive beside an old one it will replace.
 * One file: a later call replaces the one before. */
ZN_API void zn_writer_skip_inode(struct zn_writer *w, uint64_t dev, uint64_t ino);

/* ------------------------------------------------------------------------------------------------
 * Reading archives
 * ---------------------------------------------------------------------------------------------- */
struct zn_reader;
struct zn_pkg_coord; /* package coordinates (below) */

/* Open an archive file: read and check the footer and the index (memory-mapped where possible).
 * Content is read lazily, block by block. On failure *out is NULL and, when `err` is not NULL,
 * a message describing the fault is copied into err[0..err_len). The file must not shrink while
 * the reader is open: reading a mapped part that is gone raises SIGBUS (the command catches it:
 * extract stops as on SIGINT and cleans up, the others exit 3). */
ZN_API zn_result zn_reader_open(struct zn_reader **out, const char *path, char *err,
                                size_t err_len);
/* The same from a regular file open for reading on `fd` (standard input redirected from a file,
 * say), whose offset does not matter. The caller keeps `fd` and may close it once this returns.
 * Anything that is not a regular file gives ZN_ERR_INVALID_ARG. */
ZN_API zn_result zn_reader_open_fd(struct zn_reader **out, int fd, char *err, size_t err_len);
/* The same from memory; `data` must outlive the reader. Used by the fuzzer and by tests. */
ZN_API zn_result zn_reader_open_mem(struct zn_reader **out, const void *data, size_t size,
                                    char *err, size_t err_len);
/* Unmap the archive and free the reader. NULL is allowed. */
ZN_API void zn_reader_free(struct zn_reader *r);
/* Where the archive is mapped: *base and *size (NULL and 0 for zn_reader_open_mem() or an empty
 * file). For a SIGBUS handler to tell the archive shrinking under the reader (a fault in this
 * range) from any other fault. */
ZN_API void zn_reader_mapping(const struct zn_reader *r, const void **base, uint64_t *size);

struct zn_archive_info {
	size_t struct_size; /* sizeof(struct zn_archive_info), or 0 (see Conventions) */
	uint32_t format_version;
	uint64_t entries, files, dirs, symlinks, hardlinks;
	uint64_t shared_files; /* files whose bytes are those of an earlier row (identical files
	                          stored once) */
	uint64_t content_bytes, blocks, stored_blocks;
	uint64_t compressed_bytes; /* every data block as stored, compressed or not */
	uint64_t archive_bytes, index_bytes, chunk_size;
	int level, digest;
	uint64_t expanded_bytes; /* what extracting everything writes: the regular files' sizes,
	                            shared ones each time (content_bytes counts them once) */
};
/* Fills `info` (its struct_size set by the caller: `= {.struct_size = sizeof(info)}`); nothing
 * when that size is refused. */
ZN_API void zn_reader_info(struct zn_reader *r, struct zn_archive_info *info);
/* The archive's digest_min_size: regular files smaller than this have no stored SHA-256
 * (zn_reader_digest computes theirs); 0 when every file's is stored (format version 1). */
ZN_API uint64_t zn_reader_digest_min_size(const struct zn_reader *r);
/* Checks every page of the index against its checksum, as zn_verify does first (XXH3 over the
 * whole index: about a millisecond for 100,000 entries), and returns how many do not match; the
 * counts zn_reader_info gives from the index are then partial. Thread-safe. */
ZN_API uint64_t zn_reader_index_damage(struct zn_reader *r);

/* Regular files whose bytes are those of an earlier row (identical files stored once): marks
 * them in is_copy[0..count) when it is not NULL, and returns how many. Reads three columns of
 * every row; 0 when they cannot be read. */
ZN_API uint64_t zn_reader_copies(struct zn_reader *r, uint8_t *is_copy);

/* Entries are numbered 0..count-1 in byte order of their paths. */
ZN_API uint64_t zn_reader_count(const struct zn_reader *r);
ZN_API zn_result zn_reader_entry(struct zn_reader *r, uint64_t i, struct zn_entry *e);
/* As zn_reader_entry, for a row of which fields that only describe the entry lie on a damaged
 * index page: those are left 0 (a lost name NULL) and said in *lost (ZN_LOST_* bits; 0 for a
 * whole row), so that the entry can still be found and its content read and checked. A lost
 * SHA-256 (ZN_LOST_DIGEST) leaves has_digest 0: the content is then checked by its blocks'
 * XXH3 alone (zn_reader_read_entry still refuses it, as zn_extract does with check_digest).
 * Damage to its path, type, size, place or link target still fails it. */
enum {
	ZN_LOST_MODE = 1,
	ZN_LOST_OWNER = 2,
	ZN_LOST_NAMES = 4,
	ZN_LOST_MTIME = 8,
	ZN_LOST_DIGEST = 16,
};
ZN_API zn_result zn_reader_entry_lost(struct zn_reader *r, uint64_t i, struct zn_entry *e,
                                      unsigned *lost);
/* Entry i's type (ZN_TYPE_*) alone: one row of one column, where zn_reader_entry reads every
 * column of the row (and decodes those stored compressed, whole). */
ZN_API zn_result zn_reader_entry_type(struct zn_reader *r, uint64_t i, int *type);
/* Entry i's package coordinates, as create found them (zn_pkg_detect): out->type ZN_PKG_NONE
 * (fields empty) for an entry that is no package file, and for every entry of an archive made
 * with no_packages or before package columns existed. ZN_ERR_CORRUPT when those rows are
 * damaged; ZN_ERR_INVALID_ARG for i out of range or *out's struct_size as zn_pkg_parse(). */
ZN_API zn_result zn_reader_package(struct zn_reader *r, uint64_t i, struct zn_pkg_coord *out);
/* The repository name the archive was made with (zn_create_options.repo) into out,
 * NUL-terminated; its length, 0 when it has none (or it cannot be read). */
ZN_API size_t zn_reader_repo(struct zn_reader *r, char out[256]);
/* "index damaged: its mode and time cannot be read", for the ZN_LOST_* bits in lost (not 0). */
ZN_API void zn_lost_message(unsigned lost, char out[96]);
/* Whether `p` (len bytes) is a path an archive may hold: relative, non-empty, without NUL, and
 * with no empty, "." or ".." component (so no trailing '/'). The writer refuses other names, the
 * extractor skips them; a program looking a stored path up on disk checks it the same way.
 * p may be NULL (not safe). */
ZN_API int zn_path_is_safe(const char *p, size_t len);
/* Binary search for an exact path; ZN_ERR_NOT_FOUND if absent. */
ZN_API zn_result zn_reader_find(struct zn_reader *r, const char *path, size_t path_len,
                                uint64_t *index);

/* Stream the content of regular file `i` to `sink` (called with consecutive pieces), reading only
 * the blocks that hold it; checks each block's checksum and, when stored, the file's digest.
 * For a hardlink, the content of its target. A compressed block is decoded only as far as the
 * file needs, and the reader keeps the last block it decoded: reading files in their order
 * (0, 1, 2, ...) decodes each block once, however many files it holds. Not thread-safe: one
 * caller at a time per reader. */
typedef zn_result (*zn_sink_fn)(void *ctx, const void *data, size_t len);
ZN_API zn_result zn_reader_read_entry(struct zn_reader *r, uint64_t i, zn_sink_fn sink, void *ctx);

/* Bytes [offset, offset + length) of regular file `i` (or of a hardlink's target) to `sink`,
 * clipped to the file's size (nothing past its end: ZN_OK with no call). Only the blocks that
 * hold the range are read, each checked by its checksum before its bytes are handed out; a
 * compressed block is decoded only as far as the range needs. The file's SHA-256 covers the
 * whole file and is not checked here. The block cache and thread-safety of zn_reader_read_entry.
 * For random access (a mount, a remote read). */
ZN_API zn_result zn_reader_read_range(struct zn_reader *r, uint64_t i, uint64_t offset,
                                      uint64_t length, zn_sink_fn sink, void *ctx);

/* The SHA-256 of regular file i's content (for a hardlink, of its target's) into out: the digest
 * the index holds, or, where it holds none (a file smaller than the archive's digest_min_size, an
 * archive without digests), computed from the content as zn_reader_read_entry reads it, every
 * block's checksum checked. So reading the digests of many small files in their order decodes
 * each block once. ZN_ERR_INVALID_ARG for an entry of another type; the errors of
 * zn_reader_read_entry; ZN_ERR_CORRUPT when the index lost the digest it holds. Not thread-safe,
 * as zn_reader_read_entry. */
ZN_API zn_result zn_reader_digest(struct zn_reader *r, uint64_t i, uint8_t out[32]);

struct zn_extract_options {
	size_t struct_size; /* zn_extract_options_init sets it (see Conventions) */
	unsigned threads;   /* 0 = one per CPU it may run on (its affinity, as nproc) */
	int overwrite;      /* replace existing files and links (each by a complete, checked
	                     * new one, written beside it unnamed, or as .znippy-*.part where
	                     * the file system has no O_TMPFILE, and renamed over it; where
	                     * none can be made there, the old one is kept). Either way a name
	                     * holds a complete file or none, whenever extraction stops. */
	int check_digest;   /* also verify each file's SHA-256 (always on in zn_verify) */
	int same_owner;     /* apply uid/gid (default: when running as root) */
	/* When *stop becomes non-zero (a signal handler may set it; the library reads it with
	 * __atomic_load_n, relaxed, so set it with __atomic_store_n), extraction stops: no further
	 * file is created, files it began but did not finish are removed, and zn_extract returns
	 * ZN_ERR_CANCELED. NULL: never. */
	const volatile sig_atomic_t *stop;
	/* Owners as stored ids. Default (0): as tar, a stored user or group name that exists on
	 * this system gives its id here; the stored id is used only for names this system lacks. */
	int numeric_owner;
	/* Runs of zero bytes (whole aligned 64 KiB, or a file's zero tail) are left as holes
	 * instead of written, as zstd -d and cp --sparse=always do. zn_extract_options_init sets
	 * it; 0 writes every byte (files to be rewritten in place, such as databases). */
	int sparse;
	/* Leave this many leading components off each stored path, as tar --strip-components:
	 * "a/b/c" with 1 is extracted as "b/c", and an entry with no more components than that
	 * is left out. Patterns (`select`) still see stored paths; hardlink targets are stripped
	 * alike, symlink targets are kept as stored. Of entries that become one path, only the
	 * last in the archive's (path) order is extracted, as the later one replaces the earlier
	 * with tar. */
	unsigned strip_components;
	/* A file, symlink or hardlink whose name exists already (as anything, a directory too) is
	 * passed over, silently, and what is there kept as it is (tar --skip-old-files); so is an
	 * existing directory's mode and time. A file or link where the archive has a directory is
	 * still an error. Without it and without overwrite, an existing file or link is reported
	 * (ZN_ERR_EXISTS; a directory in its place ZN_ERR_IO); with both, overwrite wins. */
	int skip_existing;
	/* Modes exactly as stored, set-id and sticky bits included (tar -p);
	 * zn_extract_options_init sets it when running as root. 0: as tar does for other users, the
	 * process's umask is taken off and the archive's set-id and sticky bits are dropped (an
	 * archive then makes nothing more open than the user's own files are); a directory keeps
	 * those bits it has (the setgid bit a new one inherits from its parent). Set-id bits also
	 * need the stored owner and group to stay, either way. */
	int same_permissions;
	/* As tar -m (--touch): modification times are not restored; what is extracted has the
	 * time of the extraction. */
	int touch;
	/* As tar --no-overwrite-dir: a directory that exists already keeps its own mode and owner,
	 * and is given the archive's times (by default it is given all three). skip_existing
	 * keeps its times too. */
	int no_overwrite_dir;
	/* By default zn_extract first compares what the selected entries take once written (the
	 * bytes of every regular file, identical files counted each time, sparse ones whole; an
	 * inode for each entry but hardlinks) with what the target's file system has free for
	 * this user (statvfs), and where that does not fit refuses before writing anything:
	 * ZN_ERR_LIMIT, said through `problem` with the numbers (the path given is `dir`). An
	 * archive of a few kilobytes can describe terabytes. Non-zero: no such check. */
	int no_space_check;
};
/* The defaults above, with struct_size set. */
ZN_API void zn_extract_options_init(struct zn_extract_options *opt);

/* Extract entries into directory `dir` (its last component created if missing). `select` (may be
 * NULL = all) picks entries by index: a byte per entry, non-zero to extract. `opt` NULL: the
 * defaults; `hooks` NULL: none (zn_extract calls problem, progress and extracted). Never writes
 * outside `dir` and never follows a symlink while writing. Damaged entries are reported through
 * `problem`; the others are still extracted; the result is then ZN_ERR_DAMAGED. A struct_size
 * below the first layout is ZN_ERR_INVALID_ARG. */
ZN_API zn_result zn_extract(struct zn_reader *r, const char *dir, const uint8_t *select,
                            const struct zn_extract_options *opt, const struct zn_hooks *hooks);

/* Decode every block and check every checksum and digest, writing nothing, on `threads` threads
 * (0: one per CPU). Each damaged entry is reported through hooks->problem (progress is called
 * too; hooks NULL: none); returns ZN_ERR_DAMAGED if any was. */
ZN_API zn_result zn_verify(struct zn_reader *r, unsigned threads, const struct zn_hooks *hooks);

/* ------------------------------------------------------------------------------------------------
 * Package coordinates (see lib/pkg/pkg_meta.c)
 *
 * Pure functions over bytes already in memory: what package a file is by its name, which member of
 * it holds the metadata, and the coordinates {type, group, name, version} read from that member
 * or, failing that, from the file's path. They allocate nothing, do work linear in the bytes
 * given (bounded by ZN_PKG_META_MAX), expand no XML entities, never recurse on the input, and
 * are thread-safe. Malformed or hostile input never fails a caller: the coordinates are left
 * empty and the result says why.
 * ---------------------------------------------------------------------------------------------- */
enum zn_pkg_type {
	ZN_PKG_NONE = 0,
	ZN_PKG_MAVEN = 1,
	ZN_PKG_PYPI = 2,
	ZN_PKG_CARGO = 3,
	ZN_PKG_NPM = 4
};

/* What a file is, by its name alone (zn_pkg_file_kind). */
enum zn_pkg_file {
	ZN_PKGF_NONE = 0,
	ZN_PKGF_JAR = 1,       /* .jar .war .ear .aar: a ZIP; META-INF/maven/G/A/pom.properties */
	ZN_PKGF_POM = 2,       /* .pom: the file is the metadata (ZN_PKGM_POM_XML) */
	ZN_PKGF_WHEEL = 3,     /* .whl: a ZIP; NAME-VERSION.dist-info/METADATA */
	ZN_PKGF_SDIST_TGZ = 4, /* .tar.gz .tar.bz2 .tar.xz: TOP/PKG-INFO, if it is an sdist */
	ZN_PKGF_SDIST_ZIP = 5, /* .zip: TOP/PKG-INFO, if it is an sdist */
	ZN_PKGF_CRATE = 6,     /* .crate: a .tar.gz; NAME-VERSION/Cargo.toml */
	ZN_PKGF_NPM_TGZ = 7,   /* .tgz: a .tar.gz; package/package.json */
};

/* The kind of metadata a member holds (zn_pkg_member_rank, zn_pkg_parse). */
enum zn_pkg_meta {
	ZN_PKGM_NONE = 0,
	ZN_PKGM_POM_PROPERTIES = 1, /* Java properties: groupId, artifactId, version */
	ZN_PKGM_POM_XML = 2,        /* a Maven POM: project's (or its parent's) coordinates */
	ZN_PKGM_PYPI = 3,           /* METADATA / PKG-INFO: RFC 822 headers Name, Version */
	ZN_PKGM_CARGO_TOML = 4,     /* Cargo.toml: [package] name, version */
	ZN_PKGM_NPM_JSON = 5,       /* package.json: name ("@scope/name"), version */
};

#define ZN_PKG_FIELD_MAX 256               /* bytes of a field, its NUL included */
#define ZN_PKG_META_MAX  ((size_t)4 << 20) /* longest metadata zn_pkg_parse reads */

/* Coordinates. Each string is NUL-terminated UTF-8 (as the metadata held it), empty when unknown.
 * group is Maven's groupId or npm's scope (without '@'); empty for PyPI and Cargo. */
struct zn_pkg_coord {
	size_t struct_size; /* sizeof(struct zn_pkg_coord), or 0 (see Conventions) */
	uint32_t type;      /* enum zn_pkg_type; ZN_PKG_NONE when nothing was found */
	char group[ZN_PKG_FIELD_MAX];
	char name[ZN_PKG_FIELD_MAX];
	char version[ZN_PKG_FIELD_MAX];
};

/* "maven", "pypi", "cargo", "npm"; "" for ZN_PKG_NONE and unknown values. Never NULL. */
ZN_API const char *zn_pkg_type_name(uint32_t type);

/* What the file at `path` (len bytes, '/'-separated, the archive's stored form) is, by its name:
 * an enum zn_pkg_file, ZN_PKGF_NONE for anything else. */
ZN_API int zn_pkg_file_kind(const char *path, size_t len);

/* Whether `member` (a path inside the package file at `path`, of kind `kind`) holds the package's
 * metadata: 0 if not, else a rank, higher for a better match (a jar can hold several
 * pom.properties: the one whose group and artifact the repository path names ranks highest), and
 * its kind of metadata in *meta (may be NULL). The caller reads the best-ranked member (the first
 * among equals) and hands it to zn_pkg_parse(). */
ZN_API int zn_pkg_member_rank(int kind, const char *path, size_t len, const char *member,
                              size_t member_len, int *meta);

/* Coordinates from metadata bytes `data` of kind `meta` (enum zn_pkg_meta) into *out, which is
 * always filled (empty fields on failure), unless its struct_size is refused (ZN_ERR_INVALID_ARG,
 * *out untouched). ZN_OK when a name and a version were found (group
 * too for Maven); ZN_ERR_NOT_FOUND when the metadata does not give them (a Cargo workspace's
 * inherited version, a POM whose version is a ${property}); ZN_ERR_CORRUPT for what cannot be
 * parsed; ZN_ERR_LIMIT for more than ZN_PKG_META_MAX bytes or a field of ZN_PKG_FIELD_MAX bytes
 * or more; ZN_ERR_INVALID_ARG for an unknown kind. Linear time, no allocation, no recursion. */
ZN_API zn_result zn_pkg_parse(int meta, const void *data, size_t len, struct zn_pkg_coord *out);

/* The path-only fallback: coordinates from the path of a package file of kind `kind` (the Maven
 * repository layout G/R/O/U/P/ARTIFACT/VERSION/ARTIFACT-VERSION[-CLASSIFIER].jar; the file names
 * of wheels, sdists, crates and npm tarballs). `kind` must be zn_pkg_file_kind(path, len), else
 * ZN_ERR_INVALID_ARG. Results and *out as for zn_pkg_parse(). */
ZN_API zn_result zn_pkg_from_path(int kind, const char *path, size_t len, struct zn_pkg_coord *out);

/* The coordinates of the package file at `path` (its stored form, as above) whose whole content
 * is data[0, size): what create stores (see lib/pkg/pkg_detect.c). A ZIP's metadata member is
 * found through its central directory, a gzip'd tar's by decoding it from the start (64 MiB of
 * tar at most), a .pom is parsed as it is; failing that, for a jar, pom, wheel or crate (not a
 * .tar.gz, .zip or .tgz, names any archive may have), zn_pkg_from_path(); a jar in a repository
 * layout holding only other artifacts' pom.properties (bundled dependencies) takes its path's
 * too. ZN_OK with
 * out->type set; ZN_ERR_NOT_FOUND (*out empty) for a file that is no package or tells nothing;
 * ZN_ERR_INVALID_ARG for *out's struct_size as zn_pkg_parse(); ZN_ERR_NOMEM. Never fails on the
 * content. Allocates a decoder per call (about 300 KiB). Thread-safe. */
ZN_API zn_result zn_pkg_detect(const char *path, size_t len, const void *data, uint64_t size,
                               struct zn_pkg_coord *out);

/* ------------------------------------------------------------------------------------------------
 * Index export (see lib/archive/archive_export.c): one table over the entries of one or many
 * archives, as an Arrow IPC file, JSON Lines or CSV. Columns, in this order: path, type, size,
 * mode, mtime (timestamp[ns, UTC]), sha256 (fixed_size_binary[32]), package_type, package_group,
 * package_name, package_version, repo, archive.
 * ---------------------------------------------------------------------------------------------- */
enum zn_export_format { ZN_EXPORT_ARROW = 0, ZN_EXPORT_JSONL = 1, ZN_EXPORT_CSV = 2 };
struct zn_exporter;

/* An exporter writing format `format` to `fd` (written sequentially; not closed). JSON Lines and
 * CSV rows are written as archives are added; an Arrow file is held in memory (about 40 bytes a
 * row plus the distinct strings) and written by zn_exporter_finish(). */
ZN_API zn_result zn_exporter_open(struct zn_exporter **out, int fd, int format);
/* Adds every entry of `r`, in path order, with column archive = `archive` and repo = `repo`
 * (NULL: the archive's own, zn_reader_repo, else null; archive NULL: null). The package columns
 * are the archive's own (zn_reader_package); for an archive made before it held them,
 * zn_pkg_from_path() of package files. A row that cannot be read is left out
 * and the call goes on, returning ZN_ERR_DAMAGED at the end; fields the index lost are null. */
ZN_API zn_result zn_exporter_add(struct zn_exporter *x, struct zn_reader *r, const char *archive,
                                 const char *repo);
/* Writes what is held (Arrow: the whole file) and flushes. Rows exported so far in *rows (may be
 * NULL). */
ZN_API zn_result zn_exporter_finish(struct zn_exporter *x, uint64_t *rows);
/* Frees the exporter. NULL is allowed. */
ZN_API void zn_exporter_free(struct zn_exporter *x);

/* ------------------------------------------------------------------------------------------------
 * Checksums: CRC-32 and Adler-32 (see lib/checksum/crc32.c, lib/checksum/adler32.c)
 *
 * Both are drop-in equivalents of zlib's crc32()/adler32() and their _combine() functions: same
 * values, same chaining. The fastest kernel for the CPU (PCLMULQDQ/VPCLMULQDQ folding for CRC-32,
 * SSSE3/AVX2/AVX-512 sums for Adler-32, portable tables and loops otherwise) is chosen on the
 * first call; every function here is thread-safe and allocates nothing.
 * ---------------------------------------------------------------------------------------------- */

/* CRC-32 of the gzip/zlib/PNG kind (reflected polynomial 0xEDB88320). Start with crc = 0 and
 * chain: zn_crc32(zn_crc32(0, a, na), b, nb) == CRC-32 of a followed by b. buf may be NULL only
 * when len is 0 (as in zlib, a NULL buf returns 0). */
ZN_API uint32_t zn_crc32(uint32_t crc, const void *buf, size_t len);

/* The CRC-32 of A followed by B, from crc1 = CRC-32 of A, crc2 = CRC-32 of B and len2 = the
 * length of B in bytes. O(log len2) time, no tables beyond 64 constants. */
ZN_API uint32_t zn_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* Adler-32 as in RFC 1950. Start with adler = 1 and chain as for zn_crc32(). A NULL buf
 * returns 1 (zlib's convention). */
ZN_API uint32_t zn_adler32(uint32_t adler, const void *buf, size_t len);

/* The Adler-32 of A followed by B, from adler1 of A, adler2 of B and len2 = the length of B. */
ZN_API uint32_t zn_adler32_combine(uint32_t adler1, uint32_t adler2, uint64_t len2);

/* ------------------------------------------------------------------------------------------------
 * DEFLATE, zlib and gzip decoding (see lib/deflate/)
 * ---------------------------------------------------------------------------------------------- */
/* Three container formats share one DEFLATE decoder (RFC 1951):
 *   ZN_FORMAT_RAW   bare DEFLATE blocks, as in ZIP entries; the stream ends with its final block.
 *   ZN_FORMAT_ZLIB  RFC 1950: the 2-byte header is checked (method 8, window <= 32 KiB, FCHECK);
 *                   a preset dictionary (FDICT) is refused with ZN_ERR_UNSUPPORTED; Adler-32 is
 *                   checked.
 *   ZN_FORMAT_GZIP  RFC 1952: FEXTRA, FNAME and FCOMMENT are skipped, FHCRC is checked, reserved
 *                   flags are refused; CRC-32 and ISIZE are checked. Several members in a row are
 *                   decoded as one stream (as gzip -d does); zero bytes after the last member are
 *                   ignored; any other trailing bytes end decoding with ZN_ERR_TRAILING_GARBAGE
 *                   after all output has been produced (gzip prints a warning in that case).
 *
 * Errors on corrupt input: ZN_ERR_BAD_HEADER (zlib/gzip header or reserved bits),
 * ZN_ERR_BAD_BLOCK_TYPE (block type 3), ZN_ERR_BAD_STORED_LEN (LEN != ~NLEN),
 * ZN_ERR_BAD_CODE_LENGTHS (over-subscribed or incomplete code, too many symbols, bad repeat,
 * no end-of-block code), ZN_ERR_BAD_SYMBOL (litlen 286/287, distance 30/31, a code unused by an
 * incomplete table), ZN_ERR_BAD_DISTANCE (distance reaches before the start of the output or the
 * window), ZN_ERR_TRUNCATED (input ends before the stream does), ZN_ERR_CHECKSUM (Adler-32 or
 * CRC-32 mismatch), ZN_ERR_LENGTH_MISMATCH (gzip ISIZE), ZN_ERR_HEADER_CHECKSUM (gzip FHCRC),
 * ZN_ERR_OUTPUT_FULL (whole-buffer: `out_cap` too small). The decoder never reads outside [in,
 * in+in_len) nor writes outside [out, out+out_cap), whatever the input. */
enum zn_deflate_format {
	ZN_FORMAT_RAW = 0,
	ZN_FORMAT_ZLIB = 1,
	ZN_FORMAT_GZIP = 2,
};

/* A decoder object: its Huffman tables, its streaming state and window, and the CPU-specific
 * inner loop chosen once when it is created (baseline x86-64, BMI2, AVX2 or AVX-512; NEON on
 * aarch64). About 300 KiB. Reuse one object for many streams to avoid the allocation. One thread
 * at a time per object; distinct objects are independent. */
struct zn_inflater;

/* Create a decoder for `format` (enum zn_deflate_format). ZN_ERR_INVALID_ARG for an unknown
 * format, ZN_ERR_NOMEM. On failure *out is NULL. */
ZN_API zn_result zn_inflater_new(struct zn_inflater **out, int format);
/* Free the object. NULL is allowed. */
ZN_API void zn_inflater_free(struct zn_inflater *d);

/* What a whole-buffer decode did. Filled on success and on failure. */
struct zn_inflate_info {
	size_t struct_size; /* sizeof(struct zn_inflate_info), or 0 (see Conventions) */
	/* in_used: input bytes consumed: through the end of the final block (raw, rounded up to a
	 * byte), the Adler-32 (zlib), or the last member and the zero padding after it (gzip). On
	 * error: the input byte where the fault was found (the byte holding the offending bit, or
	 * in_len when truncated). */
	uint64_t in_used;
	uint64_t out_len; /* bytes written to `out` (on error: how many were written before the
	                     fault; their content is unspecified) */
	uint64_t members; /* gzip: members decoded completely; zlib/raw: 1 after success */
};

/* Decode one whole stream from memory into `out`. `info` may be NULL. Returns ZN_OK, or an error
 * listed above; ZN_ERR_TRAILING_GARBAGE (gzip only) means the output is complete and every
 * member checked, but non-zero bytes follow at offset info->in_used. For raw and zlib, bytes after
 * the end of the stream are not looked at (info->in_used says where the stream ended). The
 * fastest way to decode: `out` needs no slack beyond what the stream produces, but a few hundred
 * spare bytes let the fast loop run to the end. Resets any streaming state of `d`. */
ZN_API zn_result zn_inflate(struct zn_inflater *d, const void *in, size_t in_len, void *out,
                            size_t out_cap, struct zn_inflate_info *info);

/* The size of what zn_inflate() would write for [in, in + in_len), found by decoding it (through
 * the streaming interface, at about the same speed, the output counted and dropped): an exact
 * out_cap for a caller that has no size at hand. gzip's ISIZE trailer gives only the last
 * member's size modulo 2^32, and nothing bounds what a DEFLATE stream expands to. Returns what
 * zn_inflate() would return; *size is the output produced before it stopped (on ZN_OK, and on
 * ZN_ERR_TRAILING_GARBAGE, the whole output). Resets the object's stream. */
ZN_API zn_result zn_inflate_size(struct zn_inflater *d, const void *in, size_t in_len,
                                 uint64_t *size);

/* Streaming, for pipes and inputs larger than memory: bounded memory (the object's window of
 * 32 KiB of history plus 256 KiB of output). Uses the same inner loop as zn_inflate().
 *
 * zn_inflate_stream_reset() starts a new stream in the object's format.
 *
 * zn_inflate_stream_start_raw() instead starts a raw DEFLATE stream at bit `first_bit` (0..7,
 * counted from the least significant bit) of the first input byte that will be passed, with
 * `window_len` (<= 32768) bytes of history `window` that back-references may reach into
 * (window_len 0: none; distances beyond it are ZN_ERR_BAD_DISTANCE). The position must be the
 * start of a block. This is how a parallel decoder resumes in the middle of a stream once the
 * output before it is known; zn_inflate_stream_start_unknown() (below) starts without it.
 * ZN_ERR_INVALID_ARG when the object's format is not ZN_FORMAT_RAW or the arguments are out of
 * range.
 *
 * zn_inflate_stream() consumes input and produces output. Pass the next `in_len` bytes of input
 * (they need not be more than were left over: the decoder keeps what it needs internally) and
 * `in_final` = 1 when no input follows them. On return *in_used bytes were consumed (the caller
 * passes in+*in_used onwards next time), and *out, *out_len describe decoded bytes held in the
 * object, valid until the next call on `d`. *done becomes 1 when the stream has ended (raw/zlib:
 * after the final block / trailer; gzip: after the last member, once the input's end or trailing
 * garbage shows there is no further member); bytes after the end (or the garbage) passed in that
 * call are not counted in *in_used, and zn_inflate_stream_position() then gives the exact input
 * position where the stream (or the garbage) ends/starts, even when the bytes after it arrived in
 * earlier calls. Each call
 * makes progress: it consumes all input, or produces output, or finishes. Errors are sticky: after
 * one, every call returns it again until a reset. With in_final = 1, an input that ends before the
 * stream does gives ZN_ERR_TRUNCATED. */
ZN_API zn_result zn_inflate_stream_reset(struct zn_inflater *d);
ZN_API zn_result zn_inflate_stream_start_raw(struct zn_inflater *d, unsigned first_bit,
                                             const void *window, size_t window_len);
ZN_API zn_result zn_inflate_stream(struct zn_inflater *d, const void *in, size_t in_len,
                                   int in_final, size_t *in_used, const void **out, size_t *out_len,
                                   int *done);

/* Totals of the current stream: input bytes consumed and output bytes produced so far (counting
 * bytes the decoder has taken into its internal buffers). Once the stream has ended, *in_pos is
 * its exact length in bytes (gzip with trailing garbage: the offset of the garbage). After an
 * error, *in_pos is about the input byte where the fault was found (within the 8 bytes read
 * ahead) and *out_pos the output produced before it. Either may be NULL. */
ZN_API void zn_inflate_stream_position(const struct zn_inflater *d, uint64_t *in_pos,
                                       uint64_t *out_pos);

/* gzip members decoded completely in the current stream. */
ZN_API uint64_t zn_inflate_stream_members(const struct zn_inflater *d);

/* Block stops, for a decoder that must know where blocks begin (a parallel decoder checks that
 * the chunk before another ends exactly where that one started). With block stops on,
 * zn_inflate_stream() and zn_inflate_stream_symbols() also return (ZN_OK, *done = 0) right after
 * the end of each stored or Huffman block, the final one included; such a return may have
 * consumed only bits held from earlier calls and produced nothing (it still progresses, in
 * bits). zn_inflate_stream_at_block_end() is then 1 (else 0), zn_inflate_stream_bit_position()
 * is the exact bit where the next block, or after the final block whatever follows it, starts,
 * and the next call goes on from there. The setting belongs to the object: off when created,
 * kept across resets and starts. zn_inflate() ignores it. */
ZN_API void zn_inflate_stream_set_block_stops(struct zn_inflater *d, int on);
ZN_API int zn_inflate_stream_at_block_end(const struct zn_inflater *d);

/* Input the current stream has consumed, in bits, counted from bit 0 of the first input byte
 * passed after the reset or start (a start at `first_bit` counts the bits it skips): exact at
 * every return, whatever the decoder holds internally. Once the stream has ended,
 * 8 * the *in_pos of zn_inflate_stream_position(). Unspecified after an error. */
ZN_API uint64_t zn_inflate_stream_bit_position(const struct zn_inflater *d);

/* Decoding with an unknown window (the technique of rapidgzip), for a parallel decoder that
 * starts a chunk at a block boundary before the output preceding it is known.
 *
 * zn_inflate_stream_start_unknown() starts a raw DEFLATE stream at bit `first_bit` (0..7) of the
 * first input byte that will be passed, as zn_inflate_stream_start_raw() does, but with the
 * 32 KiB of history unknown. The position must be the start of a block. ZN_ERR_INVALID_ARG when
 * the object's format is not ZN_FORMAT_RAW or first_bit > 7; ZN_ERR_NOMEM (a 192 KiB symbol
 * buffer is allocated on first use and kept with the object).
 *
 * Until the window is known, output comes from zn_inflate_stream_symbols() as 16-bit symbols: a
 * value below 256 is that byte; ZN_INFLATE_MARKER + k (k = 0..32767) stands for byte k of the
 * unknown window, k = 0 being the byte 32768 before the start and k = 32767 the byte just before
 * it. A back-reference into the window produces markers, and a copy of earlier output copies its
 * markers along; no other values occur. Every distance DEFLATE can encode (at most 32768) is in
 * reach, so this mode never fails with ZN_ERR_BAD_DISTANCE: a reference before the beginning of
 * the data shows when the markers are resolved. Otherwise the call behaves as zn_inflate_stream()
 * does (input handling, *done, errors, block stops, positions); *sym and *sym_len describe
 * symbols held in the object, valid until the next call on `d`.
 *
 * The window is known once the last 32768 symbols produced hold no marker: nothing after them
 * can reach the unknown window any more. How soon that happens depends on the data (from a block
 * 1 MB into gzip -6 streams: after 164 Ki symbols in executables, never in English text or C
 * headers, where common strings keep being copied from copies of the window, so plan for whole
 * chunks in symbols). The call that gets there returns (ZN_OK, *done = 0)
 * right after the match or literals that completed the 32768 (at most 258 symbols later), with
 * zn_inflate_stream_window_known() now 1, and the same stream goes on with zn_inflate_stream()
 * from the next bit, in bytes and with its fast loop; the totals of zn_inflate_stream_position()
 * run on (its *out_pos counts symbols and bytes alike). A stream may end before its window is
 * known. zn_inflate_stream_symbols() is ZN_ERR_INVALID_ARG while the window is known (for every
 * stream not started with zn_inflate_stream_start_unknown()), and zn_inflate_stream() while it is
 * not; neither error is sticky. */
#define ZN_INFLATE_MARKER 0x8000u
ZN_API zn_result zn_inflate_stream_start_unknown(struct zn_inflater *d, unsigned first_bit);
ZN_API zn_result zn_inflate_stream_symbols(struct zn_inflater *d, const void *in, size_t in_len,
                                           int in_final, size_t *in_used, const uint16_t **sym,
                                           size_t *sym_len, int *done);
/* 0 while the current stream decodes to symbols (see above), else 1. */
ZN_API int zn_inflate_stream_window_known(const struct zn_inflater *d);

/* Replace the markers in sym[0..n) by the window bytes they stand for, writing n bytes to `out`.
 * `window` holds the window_len (<= 32768) bytes just before the stream's start: all 32 KiB
 * unless the start is nearer than that to the beginning of the data, in which case a marker for
 * a byte before `window` is ZN_ERR_BAD_DISTANCE (the stream reached before the beginning). A
 * value 256..ZN_INFLATE_MARKER-1 is ZN_ERR_INVALID_ARG. `out` may be `sym` itself (narrowing in
 * place) but must not overlap it otherwise. On error the content of `out` is unspecified.
 * Thread-safe, allocates nothing. */
ZN_API zn_result zn_inflate_resolve_markers(const uint16_t *sym, size_t n, const void *window,
                                            size_t window_len, void *out);

/* ------------------------------------------------------------------------------------------------
 * zstd decoding (RFC 8878; see lib/zstd/)
 * ---------------------------------------------------------------------------------------------- */
/* A decoder for zstd frames, our own (libzstd is not involved): frames with or without content
 * size and checksum (XXH64, checked), skippable frames (skipped), several frames in a row (their
 * outputs concatenated, as zstd -d does), windows up to 3.75 GiB (windowLog 31 and its
 * mantissa), and dictionaries (raw content, or the zstd dictionary format with entropy tables,
 * as zstd --train and ZDICT_trainFromBuffer() write them).
 *
 * Errors on bad input: ZN_ERR_BAD_HEADER (the input does not start with a zstd or skippable
 * frame), ZN_ERR_TRUNCATED (it ends inside a frame), ZN_ERR_CORRUPT (anything malformed in a
 * frame: reserved block type, oversized block, bad FSE or Huffman table, a bitstream not read
 * exactly to its end, literals or a match past the block or beyond the window, a content size
 * mismatch, ...), ZN_ERR_CHECKSUM (the content checksum), ZN_ERR_UNSUPPORTED (the reserved bit
 * of a frame header), ZN_ERR_LIMIT (a window larger than windowLog 31 allows, or larger than
 * the memory limit when streaming), ZN_ERR_DICTIONARY (a frame names a dictionary ID that is
 * not the one loaded, or none is loaded), ZN_ERR_TRAILING_GARBAGE (bytes after the last frame
 * that do not start one: all output before them is complete and checked), ZN_ERR_OUTPUT_FULL
 * (zn_zstd_decompress: `out_cap` is too small). The decoder never reads outside its input nor
 * writes outside its output, whatever the input, and allocates at most the window a frame
 * declares (when streaming), within the memory limit. */

/* The default memory limit of the streaming decoder, as zstd's: windows up to 128 MiB. */
#define ZN_ZSTD_MEMORY_DEFAULT ((uint64_t)1 << 27)
/* Content size not given in the frame header (zn_zstd_frame_info). */
#define ZN_ZSTD_SIZE_UNKNOWN UINT64_MAX

/* A decoder object: its tables, its literal buffer, a dictionary and its streaming state, and
 * the CPU-specific kernels chosen once when it is created (baseline x86-64, BMI2, AVX2; NEON on
 * aarch64). About 160 KiB, plus the streaming window while streaming. One thread at a time per
 * object; distinct objects are independent. */
struct zn_zstd_decoder;

/* Create a decoder. ZN_ERR_NOMEM; on failure *out is NULL. */
ZN_API zn_result zn_zstd_decoder_new(struct zn_zstd_decoder **out);
/* Free the object. NULL is allowed. */
ZN_API void zn_zstd_decoder_free(struct zn_zstd_decoder *d);

/* The largest Window_Size the streaming interface accepts (zstd's --memory): a frame declaring
 * a larger window fails with ZN_ERR_LIMIT before anything is allocated. Default
 * ZN_ZSTD_MEMORY_DEFAULT; `zstd --long=31` output needs (uint64_t)1 << 31. 0 restores the
 * default. zn_zstd_decompress() allocates no window (the caller's buffer is the window) and
 * ignores the limit. Kept across resets. */
ZN_API void zn_zstd_set_memory_limit(struct zn_zstd_decoder *d, uint64_t limit);

/* Use `dict` (len bytes, copied) for every frame that follows, in both interfaces, until
 * another is set; len 0 removes it. A dictionary that starts with the zstd dictionary magic
 * (0xEC30A437) and is at least 8 bytes long is parsed as one (its ID, entropy tables, repeat
 * offsets and content; ZN_ERR_CORRUPT if that fails, and the previous dictionary stays), any
 * other is raw content (ID 0). Frames naming a dictionary ID must find that ID loaded; frames
 * without one use whatever dictionary is loaded. ZN_ERR_NOMEM. */
ZN_API zn_result zn_zstd_set_dictionary(struct zn_zstd_decoder *d, const void *dict, size_t len);

/* A dictionary's ID: the ID of the zstd dictionary format, 0 for raw content. */
ZN_API uint32_t zn_zstd_dictionary_id(const void *dict, size_t len);

/* What a whole-buffer decode did. Filled on success and on failure. */
struct zn_zstd_info {
	size_t struct_size; /* sizeof(struct zn_zstd_info), or 0 (see Conventions) */
	uint64_t in_used;   /* input consumed: all of it on success; on error about where the fault
	                       was found (the frame or block it is in; for trailing garbage, its
	                       offset) */
	uint64_t out_len;   /* bytes written to `out` (on error: the output of the frames before the
	                       faulty one is complete; the rest is unspecified) */
	uint64_t frames;    /* zstd frames decoded completely (skippable frames not counted) */
};

/* Decode every frame in [in, in + in_len) into `out`, the fastest way: the output buffer is the
 * window (nothing is allocated, the memory limit does not apply), and matches are copied with
 * wild copies wherever ZS_WILD (64) bytes of `out` are left beyond them. Frames are decoded one
 * after another, each independent; skippable frames are skipped; an empty input is no frames.
 * A frame whose declared content size exceeds what is left of `out_cap` fails at once with
 * ZN_ERR_OUTPUT_FULL. `in` and `out` must not overlap. `info` may be NULL. Leaves the streaming
 * state as it was. */
ZN_API zn_result zn_zstd_decompress(struct zn_zstd_decoder *d, const void *in, size_t in_len,
                                    void *out, size_t out_cap, struct zn_zstd_info *info);

/* The header of the frame at `in`, and where the frame ends. */
struct zn_zstd_frame_info {
	size_t struct_size;    /* sizeof(struct zn_zstd_frame_info), or 0 (see Conventions) */
	uint64_t content_size; /* ZN_ZSTD_SIZE_UNKNOWN when not given; 0 for skippable frames */
	uint64_t window_size;  /* Window_Size (the content size for single-segment frames) */
	uint64_t frame_size;   /* bytes from the magic number to the end of the frame: the last
	                          block and the checksum included */
	uint64_t max_content;  /* an upper bound on the content size from the blocks' headers
	                          (the content size itself when given) */
	uint32_t dict_id;      /* 0 when not given */
	uint32_t header_size;  /* the magic number and the frame header */
	int has_checksum;
	int skippable; /* 1: a skippable frame (its user data is frame_size - 8 bytes) */
};

/* Parse the header of the frame at the start of [in, in + in_len) and walk its block headers to
 * its end (without decoding anything): how a caller finds independent frames to decode in
 * parallel, or sizes an output buffer. ZN_ERR_BAD_HEADER (no frame magic), ZN_ERR_TRUNCATED
 * (the frame goes past in_len), ZN_ERR_CORRUPT, ZN_ERR_UNSUPPORTED, ZN_ERR_LIMIT as above.
 * Thread-safe, allocates nothing. `fi` is filled as far as its struct_size (set by the caller)
 * goes; a size below the first layout is ZN_ERR_INVALID_ARG. */
ZN_API zn_result zn_zstd_frame_scan(const void *in, size_t in_len, struct zn_zstd_frame_info *fi);

/* Streaming, for pipes and inputs larger than memory: bounded memory, the frame's window plus
 * one block (at most the content size plus 64 bytes when the frame gives its content size and
 * that is smaller than its window), allocated per frame and kept for the next; the same kernels
 * as zn_zstd_decompress().
 *
 * zn_zstd_stream_reset() starts a new stream (it keeps the dictionary and the memory limit).
 *
 * zn_zstd_stream() consumes input and produces output. Pass the next `in_len` bytes of input and
 * `in_final` = 1 when no input follows them. On return *in_used bytes were consumed (the decoder
 * keeps what it needs of them internally: pass in + *in_used onwards next time), and *out,
 * *out_len describe decoded bytes held in the object, valid until the next call on `d`. *done
 * becomes 1 when `in_final` was given and the input ended at the end of a frame (or was empty).
 * Each call makes progress: it consumes all its input, or produces output, or finishes. Errors
 * are sticky: after one, every call returns it again until a reset. With in_final = 1, an input
 * that ends inside a frame gives ZN_ERR_TRUNCATED. Output is handed out before the frame's
 * checksum is checked (a mismatch fails the call that reads the checksum). */
ZN_API zn_result zn_zstd_stream_reset(struct zn_zstd_decoder *d);
ZN_API zn_result zn_zstd_stream(struct zn_zstd_decoder *d, const void *in, size_t in_len,
                                int in_final, size_t *in_used, const void **out, size_t *out_len,
                                int *done);

/* Totals of the current stream: input consumed (counting bytes taken into internal buffers)
 * and output produced. After ZN_ERR_TRAILING_GARBAGE, *in_pos is the offset of the garbage.
 * Either pointer may be NULL. */
ZN_API void zn_zstd_stream_position(const struct zn_zstd_decoder *d, uint64_t *in_pos,
                                    uint64_t *out_pos);

/* zstd frames completed in the current stream (skippable frames not counted). */
ZN_API uint64_t zn_zstd_stream_frames(const struct zn_zstd_decoder *d);

/* ------------------------------------------------------------------------------------------------
 * ZIP and JAR reading (see lib/zip/)
 *
 * A ZIP archive is read from memory or from a file descriptor (mapped whole). The central
 * directory is authoritative; zn_zip_open() finds it (the end record searched backwards through
 * a comment of up to 64 KiB, ZIP64 records, and a prefix such as a self-extracting stub, whose
 * length shifts every offset), parses every entry and checks each entry's local header against
 * it (name, method, where its data lies). An archive whose entries' data overlap, lie outside
 * the file or the central directory's place, or claim more entries than its directory can hold
 * is refused at open with ZN_ERR_CORRUPT (the overlapping "zip bomb" among them). Memory: the
 * entry table, 64 bytes per entry, bounded by the archive's size; names are never copied.
 * Methods decoded: 0 (stored), 8 (deflate), 12 (bzip2) and 93 (zstd), with our decoders (their
 * errors as the decoders give them); others, and encrypted entries, are listed and refused by
 * the read calls with ZN_ERR_UNSUPPORTED. A read never produces more than the entry's declared
 * size, and checks its CRC-32. A zstd entry of 32 MiB or more is streamed within the zstd
 * decoder's default memory limit (ZN_ZSTD_MEMORY_DEFAULT): a larger window is ZN_ERR_LIMIT.
 * ---------------------------------------------------------------------------------------------- */
struct zn_zip;

struct zn_zip_entry {
	size_t struct_size; /* sizeof(struct zn_zip_entry), or 0 (see Conventions) */
	const char *name;   /* the stored name (or the Info-ZIP Unicode path field's, when it
	                       matches), pointing into the archive: not NUL-terminated */
	size_t name_len;
	int type;        /* ZN_TYPE_FILE, ZN_TYPE_DIR or ZN_TYPE_SYMLINK (content: the target) */
	uint32_t mode;   /* permission bits (07777): stored Unix ones, else 0644 / 0755 */
	int unix_mode;   /* 1 when the mode came from Unix external attributes */
	int64_t mtime;   /* seconds since 1970 UTC: the extended timestamp, else DOS local time */
	uint64_t size;   /* uncompressed size, as declared */
	uint64_t csize;  /* compressed size */
	uint32_t crc;    /* CRC-32 as declared */
	unsigned method; /* 0 stored, 8 deflate, 9 Deflate64, 12 bzip2, 14 LZMA, 93 zstd, ... */
	unsigned flags;  /* general-purpose bit flags (bit 0 encrypted, 3 data descriptor, 11 UTF-8)
	                  */
	int supported;   /* 1 when the read calls can decode it (method 0, 8, 12 or 93, not
	                    encrypted) */
	int shadowed;    /* 1 when a later entry has the same name (it is the one extracted) */
	uint64_t offset; /* where its compressed data starts in the input given to open */
};

/* Open the archive held in data[0, len) (not copied: it must outlive the object). On failure
 * *out is NULL and, when `why` is not NULL, a message of at most 160 bytes is written there
 * ("not a ZIP archive (no end of central directory)", "entries 3 and 4 overlap (a zip bomb)").
 * ZN_ERR_CORRUPT (not a ZIP archive, or a hostile or damaged directory), ZN_ERR_TRUNCATED,
 * ZN_ERR_UNSUPPORTED (a split archive), ZN_ERR_NOMEM. The object is read-only once open:
 * every call below but zn_zip_free may be made from several threads at once. */
ZN_API zn_result zn_zip_open_memory(struct zn_zip **out, const void *data, uint64_t len, char *why);
/* The same for a file descriptor, mapped read-only whole (the descriptor may be closed after). */
ZN_API zn_result zn_zip_open_fd(struct zn_zip **out, int fd, char *why);
ZN_API void zn_zip_free(struct zn_zip *z);

/* Entries in central-directory order, 0..count-1. */
ZN_API uint64_t zn_zip_count(const struct zn_zip *z);
ZN_API zn_result zn_zip_entry(const struct zn_zip *z, uint64_t i, struct zn_zip_entry *e);
/* The archive comment (pointing into the archive; len 0 when none). */
ZN_API void zn_zip_comment(const struct zn_zip *z, const char **comment, size_t *len);
/* Bytes before the archive proper that its offsets do not count (a self-extracting stub that
 * `zip -A` did not adjust for; Info-ZIP warns of "extra bytes at beginning"); 0 normally. */
ZN_API uint64_t zn_zip_prefix(const struct zn_zip *z);
/* The entry named exactly name[0, len) (the last of that name); ZN_ERR_NOT_FOUND. */
ZN_API zn_result zn_zip_find(const struct zn_zip *z, const char *name, size_t len, uint64_t *index);
/* Problems of entry i found at open (its local header disagrees with the directory): ZN_OK, or
 * the error its reads will return, with a message in why (160 bytes) when not NULL. */
ZN_API zn_result zn_zip_entry_damage(const struct zn_zip *z, uint64_t i, char *why);

/* Stream entry i's content to sink in consecutive pieces (a stored entry straight from the
 * archive's bytes), checking its size and CRC-32 at the end: ZN_ERR_CHECKSUM,
 * ZN_ERR_LENGTH_MISMATCH (shorter or longer than declared: never more is passed to sink),
 * ZN_ERR_UNSUPPORTED, a decoder error, or the sink's own. Thread-safe. */
ZN_API zn_result zn_zip_read(const struct zn_zip *z, uint64_t i, zn_sink_fn sink, void *ctx);
/* Entry i's content into out[0, cap): ZN_ERR_OUTPUT_FULL when its size exceeds cap. */
ZN_API zn_result zn_zip_read_to(const struct zn_zip *z, uint64_t i, void *out, size_t cap);

struct zn_zip_extract_options {
	size_t struct_size; /* zn_zip_extract_options_init sets it (see Conventions) */
	unsigned threads;   /* 0: one per CPU */
	int overwrite;      /* replace existing files and links (unzip -o) */
	int never;          /* leave existing ones alone, silently (unzip -n); neither: reported */
	int junk_paths;     /* only the last component of each name (unzip -j); no directories */
	const volatile sig_atomic_t *stop; /* as in zn_extract_options; NULL: never */
};
ZN_API void zn_zip_extract_options_init(struct zn_zip_extract_options *opt);

/* Extract the entries with select[i] non-zero (select NULL: all) into directory dir (created if
 * missing), on opt->threads threads, biggest entries first; opt NULL: the defaults. Names are
 * made safe as Info-ZIP does: leading '/' and "../" components are dropped (reported through
 * hooks->problem with ZN_OK, a warning); nothing is written outside dir, and no write follows a
 * symlink, one already there or one the archive makes (links are made after every file). Modes
 * (set-id bits dropped) and times are set after the data, directories' last. Each entry that
 * fails is reported through hooks->problem and the rest extracted. hooks->extracted is then
 * called for each entry written, in the archive's order, with its path as written (a
 * directory's with a trailing '/'), from the calling thread. Returns ZN_OK, ZN_ERR_DAMAGED (some
 * entry damaged: CRC, decoder), ZN_ERR_UNSUPPORTED (some entry encrypted or of another method,
 * none damaged), ZN_ERR_IO, ZN_ERR_EXISTS (some left alone, neither overwrite nor never),
 * ZN_ERR_CANCELED. */
ZN_API zn_result zn_zip_extract(const struct zn_zip *z, const char *dir, const uint8_t *select,
                                const struct zn_zip_extract_options *opt,
                                const struct zn_hooks *hooks);
/* Decode every selected entry and check its CRC, writing nothing (unzip -t); hooks->problem
 * names each that fails; results as above. */
ZN_API zn_result zn_zip_test(const struct zn_zip *z, const uint8_t *select, unsigned threads,
                             const struct zn_hooks *hooks);

/* ------------------------------------------------------------------------------------------------
 * bzip2 decoding (see lib/bzip2/)
 * ---------------------------------------------------------------------------------------------- */
/* Decodes bzip2 streams as bzip2 -d does: several streams in a row are one output (pbzip2 writes
 * a stream per block); every block's CRC and every stream's combined CRC are checked, always;
 * randomised blocks (bzip2 0.9.0) are decoded. The output is the same as libbz2's for every
 * input libbz2 decodes, but for a compressed block longer than 2.5 MiB, which no encoder writes
 * (only code lengths stepped up and down without end make one): ZN_ERR_LIMIT.
 *
 * Work is shared by block over threads: a scanner finds the 48-bit block magic at any bit
 * offset, each candidate is decoded as a block on its own, and a block is taken only where the
 * one before it ended, so that a false magic inside a block's data never reaches the output.
 * Output comes out in order, each block once its CRC checked. Memory is bounded, whatever the
 * input's size: about 8.2 MB per thread for the block arrays, up to 2 x threads + 2 blocks of
 * output in flight (a block of 4 MiB output or more is held as its 900 KB before RLE1 and
 * expanded again as it is written), and up to 3 + threads / 2 pieces of 6.5 MiB of input.
 *
 * Errors: ZN_ERR_BAD_HEADER: the input does not start with a bzip2 stream ("BZh" and 1..9);
 * ZN_ERR_TRUNCATED: it ends inside a stream (an empty input too); ZN_ERR_CORRUPT: a block or
 * stream is malformed, including a block larger than its stream's block size;
 * ZN_ERR_CHECKSUM: a block's CRC or a stream's combined CRC does not match;
 * ZN_ERR_TRAILING_GARBAGE: what follows the last stream is not a stream (its first bytes are not
 * "BZh" and a digit 1..9; bzip2 warns): everything before it was decoded, checked and given to
 * the sink; ZN_ERR_LIMIT (above); ZN_ERR_NOMEM; ZN_ERR_IO when `read` fails; or what the sink
 * returned. A prefix of "BZh" and a digit at the very end is ZN_ERR_TRUNCATED, as for bzip2. */
struct zn_bunzip2_options {
	size_t struct_size; /* sizeof(struct zn_bunzip2_options), or 0 (see Conventions) */
	unsigned threads;   /* 0 (the default): one per CPU this process may run on (its affinity,
	                       as nproc counts); 1: everything on the caller's thread; at most 256 */
	int pass_unknown;   /* 1: input that does not start with a stream, and whatever follows the
	                       last stream, goes to the sink as it is (bzcat -f), and the result is
	                       ZN_OK; a stream started and damaged is still an error */
};
/* The defaults above, with struct_size set. */
ZN_API void zn_bunzip2_options_init(struct zn_bunzip2_options *opt);

/* What a decode did; filled on success and on failure. */
struct zn_bunzip2_info {
	size_t struct_size; /* sizeof(struct zn_bunzip2_info), or 0 (see Conventions) */
	uint64_t in_used;   /* input bytes of the streams decoded, to the end of the last one (the
	                       start of trailing garbage, or of what pass_unknown passed on); on an
	                       error, the byte where the fault was found (a block's first byte, or
	                       the input's end when truncated) */
	uint64_t out_len;   /* bytes given to the sink (pass_unknown's included) */
	uint64_t streams;   /* streams decoded and checked completely */
	uint64_t blocks;    /* blocks decoded and checked */
};
ZN_API void zn_bunzip2_info_init(struct zn_bunzip2_info *info);

/* Decode all of the input that `read` gives (called on the caller's thread, until it returns 0;
 * -1 fails with ZN_ERR_IO, errno saying why; one failing with EINTR is called again), passing the
 * output to `sink` in order, in pieces, on the caller's thread (NULL: decode and check only, as
 * bzip2 -t). `opt` and `info` may be NULL (the defaults; no report). The worker threads are
 * started and joined within the call. Thread-safe: calls on different inputs may run at once. */
ZN_API zn_result zn_bunzip2(const struct zn_bunzip2_options *opt, zn_read_fn read, void *read_ctx,
                            zn_sink_fn sink, void *sink_ctx, struct zn_bunzip2_info *info);

/* The same from memory (a mapped file): in[0..in_len) is read in place, never copied. */
ZN_API zn_result zn_bunzip2_mem(const struct zn_bunzip2_options *opt, const void *in, size_t in_len,
                                zn_sink_fn sink, void *sink_ctx, struct zn_bunzip2_info *info);

/* ------------------------------------------------------------------------------------------------
 * Parallel gzip decoding (see lib/gzip/)
 * ---------------------------------------------------------------------------------------------- */
/* One gzip stream decoded on several threads, its output handed out in order, with the results
 * of zn_inflate_stream() on the same input: the same bytes, and on damage the same error, found
 * at the same input position, after the same output (the bytes before it).
 *
 * Any gzip file works. The input is cut into chunks of about chunk_size compressed bytes; a
 * job per chunk finds where decoding can start in it (a member header, or a DEFLATE block by a
 * block finder and a trial decode), decodes with the window before that point unknown (16-bit
 * symbols with markers, as zn_inflate_stream_start_unknown() does) and in bytes once it is
 * known, up to where the next chunk starts. The caller's thread stitches the chunks together in
 * order: a chunk is used only if it starts exactly where the previous one ended, its markers are
 * resolved with the 32 KiB before it, and every member's CRC-32 and ISIZE are checked (CRC
 * combine across chunks). Wherever a chunk cannot be used (a false start, damage, a block too big
 * for a chunk, input that defeats the finder), the caller's thread decodes on itself with the
 * ordinary decoder from where the stream stands, and the next chunks are used again once it
 * reaches where they start: the worst case is the speed of one thread, never a wrong byte.
 * Multi-member files (pigz, BGZF with its BSIZE field, concatenated .gz) and streams with full
 * flushes (pigz -i, --rsyncable) start chunks at members and flushes, with the window known.
 *
 * Memory: the chunks in flight, at most threads + 2, each holding its output (at most
 * zn_gunzip_chunk_memory() bytes: eight times chunk_size, as 16-bit symbols and bytes, and half
 * as much again) and, reading a pipe, its input (chunk_size and 256 KiB), plus a decoder of
 * about 0.5 MiB per thread: zn_gunzip_memory_bound() says the total. More compressible streams
 * get smaller chunks, so that their output fits.
 */
struct zn_gunzip_options {
	size_t struct_size;  /* sizeof(struct zn_gunzip_options), or 0; zn_gunzip_options_init()
	                        sets it (see Conventions) */
	unsigned threads;    /* decoding threads besides the caller's (which stitches and writes);
	                        0: one per CPU this process may run on; at most ZN_THREADS_MAX */
	uint64_t chunk_size; /* compressed bytes per chunk; 0: ZN_GUNZIP_CHUNK_DEFAULT; at least
	                        ZN_GUNZIP_CHUNK_MIN, at most ZN_GUNZIP_CHUNK_MAX */
	/* zn_gunzip_mem(): called on the caller's thread, every 64 MiB or so, with an offset of
	 * the input before which the decode is done with it, so that a caller whose input is a
	 * mapped file can drop those pages (MADV_DONTNEED) and keep its resident memory bounded.
	 * The bytes must stay readable (a job may still look at a few of them; a dropped page of
	 * a file mapping comes back when read). NULL: not called. */
	void (*release)(void *ctx, uint64_t upto);
	void *release_ctx;
};
#define ZN_GUNZIP_CHUNK_DEFAULT ((uint64_t)1 << 20)
#define ZN_GUNZIP_CHUNK_MIN     ((uint64_t)64 << 10)
#define ZN_GUNZIP_CHUNK_MAX     ((uint64_t)256 << 20)
ZN_API void zn_gunzip_options_init(struct zn_gunzip_options *opt);
/* The most output memory one chunk in flight holds, for these options. */
ZN_API uint64_t zn_gunzip_chunk_memory(const struct zn_gunzip_options *opt);
/* The bound on all memory a decode takes for these options (threads 0: this machine's), with
 * `piped` 1 for zn_gunzip_read() (input buffered too). */
ZN_API uint64_t zn_gunzip_memory_bound(const struct zn_gunzip_options *opt, int piped);

/* What a decode did. Filled on success and failure. */
struct zn_gunzip_info {
	size_t struct_size; /* sizeof(struct zn_gunzip_info), or 0 (see Conventions) */
	uint64_t in_pos;    /* as *in_pos of zn_inflate_stream_position() at the end: the stream's
	                       length (the last member and zero padding after it), the offset of
	                       trailing garbage, or about where a fault was found */
	uint64_t out_len;   /* bytes handed to the write callback */
	uint64_t members;   /* members checked */
	uint64_t chunks;    /* chunks decoded in parallel and used */
	uint64_t seq_bytes; /* output the caller's thread decoded on itself */
	uint64_t sym_bytes; /* output of used chunks decoded before their window was known (as
	                       16-bit symbols, resolved afterwards) */
};
ZN_API void zn_gunzip_info_init(struct zn_gunzip_info *info);

/* Output in order: len bytes at buf (valid during the call), called on the caller's thread.
 * Anything but ZN_OK ends the decode with that result (nothing more is written). */
typedef zn_result (*zn_gunzip_write_fn)(void *ctx, const void *buf, size_t len);
/* Input for zn_gunzip_read(): up to cap bytes into buf, their number in *got (0: the end).
 * Anything but ZN_OK ends the decode with that result. Called on the caller's thread. */
typedef zn_result (*zn_gunzip_read_fn)(void *ctx, void *buf, size_t cap, size_t *got);

/* A parallel decoder: its threads and buffers, for one stream after another. Create with
 * `opt` (NULL: defaults); ZN_ERR_NOMEM, ZN_ERR_INVALID_ARG for options out of range. One
 * thread at a time per object. */
struct zn_gunzip;
ZN_API zn_result zn_gunzip_new(struct zn_gunzip **out, const struct zn_gunzip_options *opt);
ZN_API void zn_gunzip_free(struct zn_gunzip *g);

/* Decode the gzip stream in[0..in_len) (all of it at hand: a mapped file) to `write`. Returns
 * ZN_OK, ZN_ERR_TRAILING_GARBAGE (everything before the garbage decoded and checked, as for
 * zn_inflate()), a decoding error as zn_inflate_stream() gives it, or the callback's error.
 * `info` may be NULL. */
ZN_API zn_result zn_gunzip_mem(struct zn_gunzip *g, const void *in, size_t in_len,
                               zn_gunzip_write_fn write, void *ctx, struct zn_gunzip_info *info);
/* The same for a stream read through `read` (a pipe), with bounded memory. */
ZN_API zn_result zn_gunzip_read(struct zn_gunzip *g, zn_gunzip_read_fn read, void *rctx,
                                zn_gunzip_write_fn write, void *wctx, struct zn_gunzip_info *info);

/* Random access into a gzip stream (the technique of zlib's zran.c, gztool, rapidgzip's index).
 *
 * zn_gzip_index_build() decodes the whole stream in[0..in_len) once (on the caller's thread,
 * every member's CRC-32 and length checked) and notes a checkpoint about every `spacing` bytes
 * of output (0: ZN_GZIP_INDEX_SPACING_DEFAULT; less than ZN_GZIP_INDEX_SPACING_MIN counts as
 * that): a block boundary with the member's last 32 KiB of output, or a member's end. Returns
 * ZN_OK or ZN_ERR_TRAILING_GARBAGE with *out set (the index covers the stream up to the
 * garbage), or the decoding error (*out NULL). Memory: about 32 KiB per checkpoint
 * (an imported index keeps its windows compressed, decoding one per read).
 *
 * zn_gzip_index_read() writes up to `len` bytes of the decoded stream from output offset
 * `offset` on to dst, their number in *got (fewer only at the end of the stream; none at or past
 * it). It decodes from the last checkpoint at or before `offset`: at most about `spacing` bytes
 * of output are decoded and dropped first. The CRC-32 and length of a member are checked where
 * the read reaches its end. `in` must be the input the index was made from (its length and last
 * 4 KiB are compared: ZN_ERR_INVALID_ARG otherwise). Any number of threads may read through one
 * index at once.
 *
 * zn_gzip_index_export() writes the index to a malloc'd buffer (*buf, *len; the caller frees
 * it); zn_gzip_index_import() reads one back, checking it as untrusted input (ZN_ERR_BAD_HEADER
 * for another kind of file, ZN_ERR_CHECKSUM or ZN_ERR_CORRUPT for a damaged one); the format is
 * in lib/gzip/gzip_index.c. */
struct zn_gzip_index;
#define ZN_GZIP_INDEX_SPACING_DEFAULT ((uint64_t)4 << 20)
#define ZN_GZIP_INDEX_SPACING_MIN     ((uint64_t)64 << 10)
ZN_API zn_result zn_gzip_index_build(struct zn_gzip_index **out, const void *in, size_t in_len,
                                     uint64_t spacing);
ZN_API void zn_gzip_index_free(struct zn_gzip_index *ix);
/* The decoded stream's length; the number of checkpoints (the stream's start is one). */
ZN_API uint64_t zn_gzip_index_out_len(const struct zn_gzip_index *ix);
ZN_API size_t zn_gzip_index_points(const struct zn_gzip_index *ix);
ZN_API zn_result zn_gzip_index_read(const struct zn_gzip_index *ix, const void *in, size_t in_len,
                                    uint64_t offset, void *dst, size_t len, size_t *got);
ZN_API zn_result zn_gzip_index_export(const struct zn_gzip_index *ix, void **buf, size_t *len);
ZN_API zn_result zn_gzip_index_import(struct zn_gzip_index **out, const void *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* ZNIPPY_H */
