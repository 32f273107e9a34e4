#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make_tiny_files.py - many tiny files, as beside every artifact of a Maven repository.

    bench/make_tiny_files.py OUTDIR N

N files of 40 bytes, 1,000 to a directory: OUTDIR/dDDDD/fFFFF.jar.sha1 holds the SHA-1 hex
digest of "D-F". Deterministic from N alone (bench/tiny_files.sh, bench/scaling.sh).
"""
import hashlib
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d, f = divmod(i, 1000)
    sub = os.path.join(root, "d%04d" % d)
    if f == 0:
        os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "f%04d.jar.sha1" % f), "w") as fh:
        fh.write(hashlib.sha1(b"%d-%d" % (d, f)).hexdigest())
