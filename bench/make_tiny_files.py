#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make_tiny_files.py - many tiny files, as beside every artifact of a Maven repository.

    bench/make_tiny_files.py OUTDIR N [KIND]

N files, 1,000 to a directory: with KIND sha1 (the default), OUTDIR/dDDDD/fFFFF.jar.sha1 holds
the SHA-1 hex digest of "D-F" (40 bytes, 20 of them entropy); with KIND text,
OUTDIR/dDDDD/fFFFF.properties holds a line of 32 to 40 bytes that differs little from file to
file ("version=1.D.F" and a fixed tail), the kind tar | zstd makes almost nothing of.
Deterministic from N and KIND alone (bench/tiny_files.sh, bench/scaling.sh).
"""
import hashlib
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
kind = sys.argv[3] if len(sys.argv) > 3 else "sha1"
for i in range(n):
    d, f = divmod(i, 1000)
    sub = os.path.join(root, "d%04d" % d)
    if f == 0:
        os.makedirs(sub, exist_ok=True)
    if kind == "sha1":
        name, text = "f%04d.jar.sha1" % f, hashlib.sha1(b"%d-%d" % (d, f)).hexdigest()
    else:
        name, text = "f%04d.properties" % f, ("version=1.%d.%d build=ok" % (d, f))[:40]
        text += "\n" + "#" * max(0, 31 - len(text))
    with open(os.path.join(sub, name), "w") as fh:
        fh.write(text)
