#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make_small_dirs.py - a tree of many directories holding a few small files each, from a seed.

    bench/make_small_dirs.py OUTDIR [--groups N] [--seed N]

The layout of a Maven repository's leaves: OUTDIR/org/gNNN/artNN/1.V.0/ holds artNN-1.V.0.jar
(2-30 KB of random bytes, stored as is), its .pom (XML, 0.4-1.5 KB), and a .sha1 and a .md5 beside
each: 6 files a directory, 100 directories a group. The default, 200 groups, is 120,000 files in
20,000 directories, about 835 MB on disk. What it measures is the walk and the reading of small
files spread over many directories (bench/create_ab.sh), not compression.
"""
import argparse
import hashlib
import os
import random

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--groups", type=int, default=200)
ap.add_argument("--seed", type=int, default=7)
a = ap.parse_args()
rnd = random.Random(a.seed)
for g in range(a.groups):
    for art in range(25):
        for v in range(4):
            d = os.path.join(a.out, "org", "g%03d" % g, "art%02d" % art, "1.%d.0" % v)
            os.makedirs(d, exist_ok=True)
            base = "art%02d-1.%d.0" % (art, v)
            jar = rnd.randbytes(rnd.randint(2000, 30000))
            deps = "".join(
                "<dependency><groupId>org.g%03d</groupId><artifactId>art%02d</artifactId>"
                "<version>1.0.0</version></dependency>\n" % (rnd.randrange(200), rnd.randrange(25))
                for _ in range(rnd.randint(2, 12)))
            pom = ('<?xml version="1.0"?>\n<project><modelVersion>4.0.0</modelVersion>'
                   "<groupId>org.g%03d</groupId><artifactId>art%02d</artifactId>"
                   "<version>1.%d.0</version>\n%s</project>\n" % (g, art, v, deps)).encode()
            for name, data in ((base + ".jar", jar), (base + ".pom", pom)):
                with open(os.path.join(d, name), "wb") as f:
                    f.write(data)
                with open(os.path.join(d, name + ".sha1"), "w") as f:
                    f.write(hashlib.sha1(data).hexdigest())
                with open(os.path.join(d, name + ".md5"), "w") as f:
                    f.write(hashlib.md5(data).hexdigest())
