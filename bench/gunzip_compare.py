#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gunzip_compare.py - `znippy zcat -T N` against rapidgzip -P N, igzip -dc, pigz -dc and gzip -dc
# on the gzip acceptance files: wall time, best of alternated runs, MB/s of output.
"""
Usage: bench/gunzip_compare.py [--scale S] [--runs N] [--threads 1,2] [--dir DIR]
                               [--znippy PATH] [--rapidgzip PATH] [--only NAME,...]
                               [--json FILE] [--history FILE]

The files (made once in DIR, default bench/corpora/gunzip or .../gunzip-scale-S; a file that
exists is kept):
  src.tar        copies of /usr/include's tar (sorted, mtime 0) up to 150 MB x S
  src-gzip1.gz, src-gzip6.gz, src-gzip9.gz   gzip -1/-6/-9 of it (one member)
  src-pigzi.gz   pigz -i (independent blocks: a full flush every 128 KiB)
  src.bgz        bgzip (BGZF: members of 64 KiB)
  int64-gzip6.gz gzip -6 of 50 MB x S of little-endian int64 columns (slowly rising values)
Every run decodes every file with every tool (output to /dev/null) in one alternated round, N
rounds; the best wall time of each is kept. Before timing, each tool's output is checked once
against gzip -dc's (md5), so a wrong decode is never timed. Prints a markdown table (MB/s of
output, and each peer's time over znippy's at the same thread count) and writes JSON; --history
FILE appends one JSON line per run (with the commit) for a record over time.

Commands behind each acceptance number (threads T):
  znippy zcat -TT FILE >/dev/null
  rapidgzip -d -c -P T FILE >/dev/null          (/tmp/peers/bin/rapidgzip;
                                                 build it with ../shared/peers/build.sh)
  igzip -dc FILE >/dev/null   pigz -dc -p T FILE >/dev/null   gzip -dc FILE >/dev/null
The machine should be quiet: on a loaded one the numbers are noise (run --scale 0.05 --runs 1
to check that the script works).
"""
import argparse
import datetime
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True, executable="/bin/bash")


def make_files(d, scale, only):
    os.makedirs(d, exist_ok=True)
    tar = os.path.join(d, "src.tar")
    want = int(150e6 * scale)
    if not os.path.exists(tar):
        with open(tar + ".part", "wb") as f:
            i = 0
            while f.tell() < want:
                i += 1
                f.write(subprocess.run(
                    ["tar", "-C", "/usr", "-c", "--sort=name", "--mtime=@0", "--owner=0",
                     "--group=0", "--transform", "s,^,copy%d/," % i, "include"],
                    check=True, stdout=subprocess.PIPE).stdout)
            f.truncate(max(want, 1))
        os.rename(tar + ".part", tar)
    files = {}

    def make(name, cmd):
        path = os.path.join(d, name)
        if only and name not in only:
            return
        if not os.path.exists(path):
            sh(cmd.format(out=path + ".part"))
            os.rename(path + ".part", path)
        files[name] = path

    for level in (1, 6, 9):
        make("src-gzip%d.gz" % level, "gzip -%d -c %s >{out}" % (level, tar))
    if shutil.which("pigz"):
        make("src-pigzi.gz", "pigz -i -c %s >{out}" % tar)
    if shutil.which("bgzip"):
        make("src.bgz", "bgzip -c %s >{out}" % tar)
    cols = os.path.join(d, "int64")
    if (not only or "int64-gzip6.gz" in only) and not os.path.exists(cols):
        r = random.Random(64)
        v = 1000
        n = int(50e6 * scale) // 8
        with open(cols + ".part", "wb") as f:
            buf = bytearray()
            for _ in range(n):
                if r.random() < 0.02:
                    v += r.randrange(1000)
                buf += struct.pack("<q", v)
                if len(buf) >= 1 << 20:
                    f.write(buf)
                    buf = bytearray()
            f.write(buf)
        os.rename(cols + ".part", cols)
    make("int64-gzip6.gz", "gzip -6 -c %s >{out}" % cols)
    return files


def tools(args, t):
    z = args.znippy
    out = [("znippy -T%d" % t, [z, "zcat", "-T%d" % t])]
    if os.path.exists(args.rapidgzip):
        out.append(("rapidgzip -P%d" % t, [args.rapidgzip, "-d", "-c", "-P", str(t)]))
    if t == 1:
        if shutil.which("igzip"):
            out.append(("igzip", ["igzip", "-dc"]))
        out.append(("gzip", ["gzip", "-dc"]))
    if shutil.which("pigz"):
        out.append(("pigz -p%d" % t, ["pigz", "-dc", "-p", str(t)]))
    return out


def md5_of(cmd, path):
    p = subprocess.run(cmd + [path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return p.returncode, hashlib.md5(p.stdout).hexdigest()


def time_once(cmd, path):
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        rc = subprocess.call(cmd + [path], stdout=null, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t0, rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--znippy", default=os.path.join(ROOT, "build", "znippy"))
    ap.add_argument("--rapidgzip", default="/tmp/peers/bin/rapidgzip")
    ap.add_argument("--json")
    ap.add_argument("--history")
    args = ap.parse_args()
    d = args.dir or os.path.join(HERE, "corpora", "gunzip" if args.scale == 1 else "gunzip-scale-%g" % args.scale)
    only = set(x for x in args.only.split(",") if x)
    files = make_files(d, args.scale, only)
    threads = [int(x) for x in args.threads.split(",")]
    if not os.path.exists(args.rapidgzip):
        print("note: no rapidgzip at %s (build it with ../shared/peers/build.sh)" % args.rapidgzip,
              file=sys.stderr)
    runs = [(name, t, label, cmd) for name in files for t in threads for label, cmd in tools(args, t)]
    # Each tool's output checked once against gzip -dc's.
    want = {name: md5_of(["gzip", "-dc"], path)[1] for name, path in files.items()}
    sizes = {name: int(subprocess.run("gzip -dc %s | wc -c" % path, shell=True, check=True,
                                      stdout=subprocess.PIPE).stdout) for name, path in files.items()}
    bad = []
    for name, t, label, cmd in runs:
        rc, h = md5_of(cmd, files[name])
        if rc != 0 or h != want[name]:
            bad.append((name, label))
            print("WRONG OUTPUT: %s on %s (exit %d)" % (label, name, rc), file=sys.stderr)
    best = {}
    for r in range(args.runs):
        order = runs[:] if r % 2 == 0 else runs[::-1]  # alternated, both directions
        for name, t, label, cmd in order:
            if (name, label) in bad:
                continue
            s, rc = time_once(cmd, files[name])
            key = (name, label)
            best[key] = min(best.get(key, s), s)
    rows = []
    print("| file | MB out | tool | best s | MB/s | time / znippy's at T |")
    print("|---|---|---|---|---|---|")
    for name, t, label, cmd in runs:
        key = (name, label)
        if key not in best:
            continue
        s = best[key]
        ref = best.get((name, "znippy -T%d" % t))
        mb = sizes[name] / 1e6
        ratio = "%.2f" % (s / ref) if ref else "-"
        print("| %s | %.0f | %s | %.3f | %.0f | %s |" % (name, mb, label, s, mb / s, ratio))
        rows.append({"file": name, "out_bytes": sizes[name], "tool": label, "threads": t,
                     "best_s": s, "mb_s": mb / s})
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                stdout=subprocess.PIPE, text=True).stdout.strip()
    except OSError:
        commit = ""
    record = {"date": datetime.datetime.utcnow().isoformat() + "Z", "commit": commit,
              "scale": args.scale, "runs": args.runs, "nproc": os.cpu_count(),
              "load": os.getloadavg()[0], "rows": rows, "wrong": bad}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
    if args.history:
        with open(args.history, "a") as f:
            f.write(json.dumps(record) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
