#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""index_columns.py - what each column of a znippy archive's index costs, stored and raw.

    bench/index_columns.py ARCHIVE...

Reads the footer and the index's column directory (docs/FORMAT.md) and prints, per column, its
codec and its stored and raw sizes, then the totals beside the archive's size.
"""
import struct
import sys

NAMES = {1: "path_offsets", 2: "path_bytes", 3: "type", 4: "mode", 5: "uid", 6: "gid",
         7: "uname_offsets", 8: "uname_bytes", 9: "gname_offsets", 10: "gname_bytes",
         11: "mtime_ns", 12: "size", 13: "link_offsets", 14: "link_bytes", 15: "sha256",
         16: "first_block", 17: "block_offset", 18: "fence_offsets", 19: "fence_bytes",
         32: "blk_offset", 33: "blk_csize", 34: "blk_usize", 35: "blk_codec", 36: "blk_xxh3",
         37: "blk_cxxh3"}
CODECS = {0: "raw", 1: "zstd", 2: "paged"}

for path in sys.argv[1:]:
    with open(path, "rb") as f:
        data = f.read()
    foot = data[-64:]
    ix_off, ix_size = struct.unpack_from("<QQ", foot, 0)
    version = struct.unpack_from("<I", foot, 40)[0]
    ix = data[ix_off:ix_off + ix_size]
    ncols, nent, nblk = struct.unpack_from("<IQQ", ix, 4)
    dms = struct.unpack_from("<Q", ix, 48)[0]
    print("%s: version %d, %d entries, %d blocks, archive %d bytes, index %d bytes, "
          "data %d bytes, digest_min_size %d"
          % (path, version, nent, nblk, len(data), ix_size, ix_off, dms))
    rows = []
    for i in range(ncols):
        cid, codec, plog, filt, _, off, stored, raw = struct.unpack_from("<IBBBBQQQ", ix,
                                                                         64 + 32 * i)
        rows.append((stored, cid, codec, raw, filt))
    for stored, cid, codec, raw, filt in sorted(rows, reverse=True):
        print("  %-14s %-5s %-5s %10d stored %10d raw  %6.2f B/entry"
              % (NAMES.get(cid, str(cid)), CODECS.get(codec, codec),
                 "delta" if filt == 1 else "-" if filt == 0 else filt, stored, raw,
                 stored / max(nent, 1)))
