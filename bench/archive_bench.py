#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""archive_bench.py - znippy against tar|zstd, squashfs, 7z and zip, side by side in one run.

Run it through bench/run_archive_bench.sh (same options); `--help` lists them.

Per corpus (see make_corpora.sh) and per tool it measures:
  create     wall seconds (best of N) and peak RSS, the archive written to tmpfs
  size       archive bytes, and the ratio archive / input
  extract    wall seconds (best of N) and peak RSS, into tmpfs (/dev/shm) and onto disk (/tmp)
  cat        for trees: median wall ms of extracting one file to /dev/null (random access)
and the references: `bench_write_floor` (the same tree written from memory by 2 threads: the floor of
extraction), the floor of create (bench_compress_floor, and bench_store_floor's `two` for random
data), and for the random corpus `cp` of the file to tmpfs/disk and `cat > /dev/null`, and znippy
create alternated with `cp` (medians and their ratio: the figure the create-vs-copy target is read
from, since best-of runs taken minutes apart see different machines here).

Method. Caches cannot be dropped here, so the input is read once before timing (it is hashed for the
verification, which warms the page cache), read again before every create (and cp) run, since the
VMs' DAMON pages out what is left alone for a minute (see warm()), and every timing is the best of N runs (N = 3 for src and
small, 1 for the big corpora, 3 for everything at --scale < 1; --reps overrides). Disk extraction is
timed without fsync, as the tools do it; `sync -f` runs before each timed disk run so a run is not
billed for the previous run's dirty pages. MB/s = uncompressed input bytes / seconds / 1e6. Peak RSS
comes from GNU time (%M); for a pipeline (tar | zstd) it is the largest single process of the
pipeline. Every extraction is checked: the first run of each target against a digest of the whole
input tree (paths, contents, symlink targets), later runs by file count and bytes, so a broken tool
cannot look fast; failures are flagged in the tables and the JSON.

Outputs: markdown tables on stdout and in OUT/archive_bench.md, one JSON object per (corpus, tool)
in OUT/archive_bench.json (overwritten each run) and appended to OUT/archive_bench_history.jsonl;
znippy's ratio to each peer (and to the references, which bench/gate passes over) per corpus and
operation appended to bench/history/archive_bench.jsonl (bench/history.py), for bench/gate.
Python 3.9+ standard library only.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import history  # noqa: E402
ALL_CORPORA = ["src", "small", "large", "random", "mixed"]
ALL_PEERS = ["znippy", "tarzst", "squashfs", "7z", "zip"]
TREES = {"src", "small", "mixed"}  # corpora with many files: floor and cat are measured on these
RSS_CORPORA = ("large", "random", "mixed")  # --peak-rss: ~1.8 GB: a big text file, a random one, a tree
GNU_TIME = "/usr/bin/time"
MB = 1e6
MiB = 1 << 20


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---- tools -----------------------------------------------------------------------------------------
# Each tool: archive extension, create and extract command lines, and how to cat one member.
# Creation runs in the corpora directory with the corpus name as the path, so every archive holds
# NAME/...; squashfs holds the corpus' contents at its root, so it extracts to OUT/NAME.
def tool_table(zn, threads):
    q = shlex.quote
    T = str(threads)
    return {
        "znippy": {
            "ext": "zn",
            "create": lambda a, name: f"{q(zn)} create -o {q(a)} -T {T} {q(name)}",
            "extract": lambda a, out, name: f"{q(zn)} extract {q(a)} -C {q(out)} -T {T}",
            "cat": lambda a, name, path: f"{q(zn)} cat {q(a)} {q(name + '/' + path)}",
            "version": f"{q(zn)} --version",
        },
        "tarzst": {
            "ext": "tar.zst",
            "create": lambda a, name: f"tar -cf - {q(name)} | zstd -T0 -3 -q -o {q(a)}",
            "extract": lambda a, out, name: f"zstd -dc {q(a)} | tar -xf - -C {q(out)}",
            "cat": lambda a, name, path: f"zstd -dc {q(a)} | tar -xOf - {q(name + '/' + path)}",
            "version": "tar --version | head -1; zstd --version",
        },
        "squashfs": {
            "ext": "sqfs",
            "create": lambda a, name: (f"mksquashfs {q(name)} {q(a)} -comp zstd -Xcompression-level 3 "
                                       f"-processors {T} -noappend -quiet -no-progress"),
            "extract": lambda a, out, name: (f"unsquashfs -q -n -d {q(out + '/' + name)} -processors {T} "
                                             f"{q(a)} >/dev/null"),
            "cat": lambda a, name, path: f"unsquashfs -cat {q(a)} {q(path)}",
            "version": "mksquashfs -version | head -1",
        },
        "7z": {
            "ext": "7z",
            # default method (LZMA2) at level 3; -snl stores symlinks as links
            "create": lambda a, name: f"7zz a -mx3 -mmt{T} -snl -bd -bso0 -bsp0 {q(a)} {q(name)}",
            "extract": lambda a, out, name: f"7zz x -mmt{T} -snld20 -bd -bso0 -bsp0 -o{q(out)} {q(a)}",
            "cat": lambda a, name, path: f"7zz e -so -bd {q(a)} {q(name + '/' + path)}",
            "version": "7zz | sed -n 2p",
        },
        "zip": {
            "ext": "zip",
            # -y stores symlinks as links (zip follows them by default)
            "create": lambda a, name: f"zip -r -y -3 -q {q(a)} {q(name)}",
            "extract": lambda a, out, name: f"unzip -q {q(a)} -d {q(out)}",
            "cat": lambda a, name, path: f"unzip -p {q(a)} {q(name + '/' + path)}",
            "version": "zip -v | sed -n 2p; unzip -v | head -1",
        },
    }


def timed(cmd, cwd=None, timeout=3600):
    """Run a shell command under GNU time; return (wall s, peak RSS KiB, rc, stderr tail, CPU s)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        argv = [GNU_TIME, "-f", "%U %S %M", "-o", tf.name, "bash", "-o", "pipefail", "-c", cmd]
        t0 = time.perf_counter()
        try:
            p = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               timeout=timeout)
            rc, err = p.returncode, p.stderr.decode(errors="replace")[-2000:]
        except subprocess.TimeoutExpired:
            rc, err = 124, "timeout"
        wall = time.perf_counter() - t0
        fields = tf.read().split()
        rss = int(fields[-1]) if fields and fields[-1].isdigit() else 0
        try:
            cpu = float(fields[-3]) + float(fields[-2])
        except (IndexError, ValueError):
            cpu = 0.0
    return wall, rss, rc, err, cpu


def sh(cmd, **kw):
    return subprocess.run(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          **kw).stdout.decode(errors="replace").strip()


# ---- the tree digest used for verification ---------------------------------------------------------
def warm(root):
    """Read every regular file under root (a file or a tree), so that a timed run finds its input
    in the page cache. Reading it once at the start is not enough here: the VMs run DAMON with a
    pageout scheme (/sys/kernel/mm/damon/admin/kdamonds/0: pages not touched for 12 intervals of
    5 s are reclaimed), so a corpus left alone for a minute, while other tools' extractions run,
    is partly back on disk, and the next tool's create would read it from there."""
    buf = bytearray(1 << 20)
    paths = [root] if os.path.isfile(root) else corpus_files(root)
    for p in paths:
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass


def tree_stats(root, digest=True):
    """(files, bytes, digest) of the tree at root: regular files and symlinks, sorted by path."""
    h = hashlib.sha256()
    files = nbytes = 0
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for d in list(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                filenames.append(d)  # os.walk lists symlinks to directories as directories
                dirnames.remove(d)
        for f in filenames:
            entries.append(os.path.normpath(os.path.join(rel, f)))
    entries.sort()
    buf = bytearray(1 << 20)
    for rel in entries:
        p = os.path.join(root, rel)
        st = os.lstat(p)
        files += 1
        if os.path.islink(p):
            t = os.readlink(p)
            # 7-Zip rewrites absolute link targets to point inside the output directory; compare
            # absolute targets by their last component only.
            t = "abs:" + os.path.basename(t) if t.startswith("/") else t
            if digest:
                h.update(f"L {rel}\0{t}\0".encode())
            continue
        nbytes += st.st_size
        if digest:
            h.update(f"F {rel}\0{st.st_size}\0".encode())
            with open(p, "rb", buffering=0) as f:
                while True:
                    n = f.readinto(buf)
                    if not n:
                        break
                    h.update(memoryview(buf)[:n])
    return files, nbytes, h.hexdigest() if digest else None


# ---- measurement -----------------------------------------------------------------------------------
REP_BUDGET_S = 20.0  # a run longer than this is not repeated (set by --rep-budget)


def best_of(n, prepare, cmd, cwd, check=None):
    """Best wall time of up to n runs; prepare() runs untimed before each; check(i) after each.

    A run that takes longer than REP_BUDGET_S is not repeated: its noise is small relative to its
    length, and 7z on a GB would otherwise take most of an hour."""
    runs, rss_at_best, cpu_at_best, err, best, loads = [], 0, 0.0, None, None, []
    for i in range(n):
        prepare()
        loads.append(os.getloadavg()[0])
        wall, rss, rc, stderr, cpu = timed(cmd, cwd=cwd)
        if rc != 0:
            return {"error": f"exit {rc}: {stderr.strip()[-300:]}", "cmd": cmd}
        e = check(i) if check else None
        if e:
            err = e
        runs.append(round(wall, 4))
        if best is None or wall < best:
            best, rss_at_best, cpu_at_best = wall, rss, cpu
        if wall > REP_BUDGET_S:
            break
    r = {"best_s": round(best, 4), "runs_s": runs, "rss_kib": rss_at_best, "cpu_s": round(cpu_at_best, 3),
         "loadavg": [round(x, 2) for x in loads], "cmd": cmd}
    if err:
        r["verify_error"] = err
    return r


def rmtree(p):
    if os.path.lexists(p):
        subprocess.run(["rm", "-rf", p], check=True)


def sync_fs(path):
    subprocess.run(["sync", "-f", path], check=False)


def cat_argv(cmd):
    """How one cat is timed: a single command is run as itself, as a user's shell would run it;
    only a pipeline (tar's) goes through bash. Starting bash first costs 1-3 ms on the VMs here,
    more than half of what is being measured."""
    if any(c in cmd for c in "|&;<>()$`"):
        return ["bash", "-c", cmd]
    return shlex.split(cmd)


def process_start_ms(n=20):
    """Median wall time of running /bin/true from here: the part of each cat that is the
    machine's, not the tool's (subprocess, fork, exec, exit)."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(["/bin/true"])
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times) * 1000, 2)


def bench_tool(tool, spec, name, corpora, stats, work, targets, reps, do_cat, cat_path):
    files, nbytes, digest = stats
    arch = os.path.join(work["tmpfs"], f"A.{spec['ext']}")
    res = {"tool": tool}

    def rm_arch():
        if os.path.exists(arch):
            os.unlink(arch)

    def before_create():
        rm_arch()
        warm(os.path.join(corpora, name))

    log(f"{name}/{tool}: create x{reps}")
    c = best_of(reps, before_create, spec["create"](arch, name), corpora)
    res["create"] = c
    if "error" in c:
        log(f"{name}/{tool}: create FAILED: {c['error']}")
        rm_arch()
        return res
    res["archive_bytes"] = os.path.getsize(arch)
    for tname, base in targets.items():
        out = os.path.join(base, "x")

        def prep(out=out, base=base, tname=tname):
            rmtree(out)
            os.makedirs(out)
            if tname == "disk":
                sync_fs(base)

        def check(i, out=out):
            got = tree_stats(os.path.join(out, name), digest=(i == 0))
            if got[0] != files or got[1] != nbytes:
                return f"got {got[0]} files / {got[1]} bytes, want {files} / {nbytes}"
            if i == 0 and got[2] != digest:
                return "content digest differs from the input"
            return None

        log(f"{name}/{tool}: extract to {tname} x{reps}")
        x = best_of(reps, prep, spec["extract"](arch, out, name), work["tmpfs"], check)
        res[f"extract_{tname}"] = x
        if "error" in x:
            log(f"{name}/{tool}: extract to {tname} FAILED: {x['error']}")
        elif "verify_error" in x:
            log(f"{name}/{tool}: extract to {tname} WRONG OUTPUT: {x['verify_error']}")
        rmtree(out)
    if do_cat and cat_path:
        # one member out of the archive to /dev/null: 20 runs (tar has to scan the stream: 3)
        n = 3 if tool == "tarzst" else 20
        cmd = spec["cat"](arch, name, cat_path)
        want = os.path.getsize(os.path.join(corpora, name, cat_path))
        got = subprocess.run(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        argv = cat_argv(cmd)
        times = []
        if got.returncode != 0 or len(got.stdout) != want:
            res["cat"] = {"error": f"rc {got.returncode}, {len(got.stdout)} bytes, want {want}", "cmd": cmd}
        else:
            for _ in range(n):
                t0 = time.perf_counter()
                subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times.append(time.perf_counter() - t0)
            res["cat"] = {"median_ms": round(statistics.median(times) * 1000, 2), "runs": n, "cmd": cmd,
                          "path": cat_path}
    rm_arch()
    return res


def concat_tree(d, out):
    """The regular files under d, one after another, in the order znippy's walk packs them
    (names in byte order, depth first; symlinks not followed)."""
    for n in sorted(os.listdir(os.fsencode(d))):
        p = os.path.join(os.fsencode(d), n)
        if os.path.islink(p):
            continue
        if os.path.isdir(p):
            concat_tree(p, out)
        elif os.path.isfile(p):
            with open(p, "rb") as f:
                shutil.copyfileobj(f, out)


def corpus_files(src):
    """Every file under src (the single-file corpora: random, large; warm())."""
    return [os.path.join(dp, f) for dp, _, fs in os.walk(src) for f in fs]


def create_floor(name, corpora, work, reps, threads):
    """The floor of create (bench_compress_floor, bench_store_floor: built by CMake), as a
    {"best_s"} for the floor row, or None: zstd at level 3 in 1 MiB blocks plus SHA-256 from
    memory on the corpus' bytes (a tree's files one after another, or the file), and for random
    data the minimal read -> SHA-256 -> XXH3 + write pipeline. No I/O or bookkeeping: what no
    archiver doing the same work on this machine can undercut. Not for mixed (mostly stored
    data)."""
    src = os.path.join(corpora, name)
    if name == "random":
        exe = os.path.join(ROOT, "build", "bench_store_floor")
        fpaths = corpus_files(src)
        if not os.access(exe, os.X_OK) or len(fpaths) != 1:
            return None
        out = os.path.join(work["tmpfs"], "floor.out")
        log(f"{name}/floor: read, SHA-256, XXH3 and write x{reps}")
        p = subprocess.run([exe, "-n", str(reps), fpaths[0], out], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        m = re.search(r"^two\s+best ([0-9.]+) s", p.stdout, re.M)
    elif name in ("src", "small", "large"):
        exe = os.path.join(ROOT, "build", "bench_compress_floor")
        if not os.access(exe, os.X_OK):
            return None
        concat = os.path.join(work["tmpfs"], "floor.bin")
        if name == "large":
            files = corpus_files(src)
            data = files[0] if len(files) == 1 else None
        else:
            with open(concat, "wb") as out:
                concat_tree(src, out)
            data = concat
        if not data:
            return None
        log(f"{name}/floor: zstd -3 in 1 MiB blocks and SHA-256 from memory x{reps}")
        p = subprocess.run([exe, "-T", str(threads), "-n", str(reps), "--sha", data],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if os.path.exists(concat):
            os.unlink(concat)
        m = re.search(r"best ([0-9.]+) s", p.stdout)
    else:
        return None
    if p.returncode != 0 or not m:
        return {"error": (p.stderr or p.stdout)[-300:]}
    return {"best_s": float(m.group(1)), "cmd": " ".join(p.args)}


def create_vs_copy(zn, fpath, work, reps, threads):
    """znippy create of the file alternated with cp of it into tmpfs, reps times each, so that a
    slow spell of the machine hits both alike: the medians and their ratio (create speed / copy
    speed, the acceptance target's measure). Each is measured apart too, in the tables, as best
    of; this pair is the one to quote."""
    zq, fq = shlex.quote(zn), shlex.quote(fpath)
    za, ca = os.path.join(work["tmpfs"], "alt.zn"), os.path.join(work["tmpfs"], "alt.copy")
    zt, ct = [], []
    warm(fpath)
    for _ in range(max(reps, 5)):
        for cmd, out, runs in ((f"{zq} create -q -T {threads} -o {shlex.quote(za)} {fq}", za, zt),
                               (f"cp {fq} {shlex.quote(ca)}", ca, ct)):
            rmtree(out)
            wall, _, rc, err, _ = timed(cmd)
            if rc != 0:
                return {"error": f"exit {rc}: {err.strip()[-300:]}", "cmd": cmd}
            runs.append(round(wall, 4))
    rmtree(za)
    rmtree(ca)
    zm, cm = sorted(zt)[len(zt) // 2], sorted(ct)[len(ct) // 2]
    return {"znippy_median_s": zm, "cp_median_s": cm, "znippy_runs_s": zt, "cp_runs_s": ct,
            "ratio": round(cm / zm, 3)}


def bench_references(name, corpora, stats, work, targets, reps, floor_bin, threads, zn=None):
    """Floor of extraction for trees; cp / cat for single files; the floor of create."""
    refs = []
    files, nbytes, _ = stats
    src = os.path.join(corpora, name)
    cfloor = create_floor(name, corpora, work, reps, threads)
    if name in TREES and floor_bin:
        r = {"tool": "floor"}
        if cfloor:
            r["create"] = cfloor
        for tname, base in targets.items():
            out = os.path.join(base, "floor")
            log(f"{name}/floor: write from memory to {tname} x{reps}")
            sync_fs(base)
            p = subprocess.run([floor_bin, "-T", str(threads), "-n", str(reps), src, out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if p.returncode == 0:
                j = json.loads(p.stdout.decode().strip().splitlines()[-1])
                r[f"extract_{tname}"] = {"best_s": j["best_s"], "runs_s": j["runs_s"]}
                got = tree_stats(out, digest=False)
                if got[0] != files or got[1] != nbytes:
                    r[f"extract_{tname}"]["verify_error"] = f"got {got[0]} files / {got[1]} bytes"
            else:
                r[f"extract_{tname}"] = {"error": p.stderr.decode()[-300:]}
            rmtree(out)
        refs.append(r)
    elif cfloor:
        refs.append({"tool": "floor", "create": cfloor})
    if name == "random":
        fpaths = corpus_files(src)
        r = {"tool": "cp"}
        for tname, base in targets.items():
            out = os.path.join(base, "cp")

            def prep(out=out, base=base, tname=tname):
                rmtree(out)
                os.makedirs(out)
                if tname == "disk":
                    sync_fs(base)
                warm(src)

            r[f"extract_{tname}"] = best_of(
                reps, prep, "cp " + " ".join(shlex.quote(p) for p in fpaths) + " " + shlex.quote(out), corpora)
            rmtree(out)
        if zn:
            log(f"{name}: znippy create alternated with cp x{max(reps, 5)}")
            r["alternated"] = create_vs_copy(zn, fpaths[0], work, reps, threads)
        refs.append(r)
        r = {"tool": "cat>/dev/null"}
        r["extract_tmpfs"] = best_of(reps, lambda: warm(src),
                                     "cat " + " ".join(shlex.quote(p) for p in fpaths) + " >/dev/null", corpora)
        refs.append(r)
    return refs


# ---- znippy availability ---------------------------------------------------------------------------
def znippy_works(zn, work):
    """A tiny round trip, so a half-written command is skipped instead of failing for an hour."""
    if not (os.path.isfile(zn) and os.access(zn, os.X_OK)):
        return f"{zn} not built"
    d = os.path.join(work["tmpfs"], "selftest")
    rmtree(d)
    os.makedirs(os.path.join(d, "in", "t", "sub"))
    for i in range(20):
        with open(os.path.join(d, "in", "t", "sub" if i % 2 else "", f"f{i}"), "wb") as f:
            f.write((f"line {i}\n" * (i * 500)).encode())
    zq = shlex.quote(zn)
    cmd = (f"cd {shlex.quote(d)} && {zq} create -o a.zn -T 2 -C in t && mkdir out && "
           f"{zq} extract a.zn -C out -T 2 && diff -r in/t out/t && {zq} cat a.zn t/f4 | cmp - in/t/f4")
    p = subprocess.run(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    rmtree(d)
    if p.returncode != 0:
        return "self-test failed: " + p.stdout.decode(errors="replace").strip()[-300:]
    return None


# ---- report ----------------------------------------------------------------------------------------
def mbps(nbytes, r):
    if not r or "best_s" not in r or r["best_s"] <= 0:
        return None
    return nbytes / r["best_s"] / MB


def fmt_speed(nbytes, r):
    if not r:
        return "-"
    if "error" in r:
        return "FAIL"
    v = mbps(nbytes, r)
    s = f"{v:,.0f}" if v >= 100 else f"{v:.1f}"
    return s + (" (!)" if "verify_error" in r else "")


def fmt_cpu(r):
    return f"{r['cpu_s']:.2f}" if r and r.get("cpu_s") is not None else "-"


def fmt_rss(r):
    return f"{r['rss_kib'] / 1024:,.0f}" if r and r.get("rss_kib") else "-"


def report_corpus(name, stats, results, meta):
    files, nbytes, _ = stats
    L = [f"### {name}: {files:,} files, {nbytes / MB:,.1f} MB (best of {meta['reps'][name]}; a run over {REP_BUDGET_S:g} s is not repeated)", "",
         "| tool | create MB/s | extract MB/s tmpfs | extract MB/s disk | archive MB | ratio | "
         "RSS create MiB | RSS extract MiB | cat one file ms | CPU s create | CPU s extract |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        c = r.get("create")
        size = r.get("archive_bytes")
        cat = r.get("cat")
        cat_s = "-" if not cat else ("FAIL" if "error" in cat else f"{cat['median_ms']:.1f}")
        L.append(f"| {r['tool']} | {fmt_speed(nbytes, c)} | {fmt_speed(nbytes, r.get('extract_tmpfs'))} | "
                 f"{fmt_speed(nbytes, r.get('extract_disk'))} | "
                 f"{'-' if size is None else f'{size / MB:,.1f}'} | "
                 f"{'-' if size is None else f'{100.0 * size / nbytes:.1f}%'} | "
                 f"{fmt_rss(c)} | {fmt_rss(r.get('extract_tmpfs'))} | {cat_s} | "
                 f"{fmt_cpu(c)} | {fmt_cpu(r.get('extract_tmpfs'))} |")
    zn = next((r for r in results if r["tool"] == "znippy" and "archive_bytes" in r), None)
    if zn:
        L += ["", f"znippy / peer (speed: > 1 is znippy faster; size and RSS: < 1 is znippy smaller; "
                  f"cat: < 1 is znippy faster):", "",
              "| peer | create speed | extract tmpfs | extract disk | size | RSS create | RSS extract | cat |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]

        def ratio(a, b, inv=False):
            if a is None or b is None or a == 0 or b == 0:
                return "-"
            return f"{(b / a if inv else a / b):.2f}"

        for r in results:
            if r["tool"] == "znippy":
                continue
            cells = []
            for k in ("create", "extract_tmpfs", "extract_disk"):
                cells.append(ratio(mbps(nbytes, zn.get(k)), mbps(nbytes, r.get(k))))
            cells.append(ratio(zn.get("archive_bytes"), r.get("archive_bytes")))
            for k in ("create", "extract_tmpfs"):
                cells.append(ratio((zn.get(k) or {}).get("rss_kib"), (r.get(k) or {}).get("rss_kib")))
            cells.append(ratio((zn.get("cat") or {}).get("median_ms"), (r.get("cat") or {}).get("median_ms")))
            L.append(f"| {r['tool']} | " + " | ".join(cells) + " |")
    alt = next((r["alternated"] for r in results if "ratio" in r.get("alternated", {})), None)
    if alt:
        L += ["", f"znippy create alternated with `cp` of the file into tmpfs, {len(alt['cp_runs_s'])} times "
                  f"each: medians {alt['znippy_median_s']:.3f} s and {alt['cp_median_s']:.3f} s, so create runs at "
                  f"**{alt['ratio']:.2f}x** the speed of the copy."]
    bad = [f"{r['tool']} {k}: {v.get('error') or v.get('verify_error')}"
           for r in results for k, v in r.items()
           if isinstance(v, dict) and ("error" in v or "verify_error" in v)]
    if bad:
        L += [""] + [f"- FAILED/WRONG: {b}" for b in bad]
    return "\n".join(L) + "\n"


def machine_info(paths):
    def fstype(p):
        return sh(f"findmnt -n -o FSTYPE -T {shlex.quote(p)} | head -1") or sh(f"stat -f -c %T {shlex.quote(p)}")
    lscpu = sh("lscpu")
    model = next((l.split(":", 1)[1].strip() for l in lscpu.splitlines() if l.startswith("Model name")), "?")
    return {
        "cpu": model, "nproc": os.cpu_count(), "kernel": platform.release(),
        "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30), 1),
        "fs": {k: fstype(v) for k, v in paths.items()},
        "loadavg": os.getloadavg()[0],
        "process_start_ms": process_start_ms(),
    }


# ---- main ------------------------------------------------------------------------------------------
def main():
    global REP_BUDGET_S
    ap = argparse.ArgumentParser(description="znippy archive benchmark against tar|zstd, squashfs, 7z, zip")
    ap.add_argument("--corpora", help="corpora directory (default bench/corpora, or bench/corpora/scale-S)")
    ap.add_argument("--scale", type=float, default=1.0, help="corpus scale (generated if missing), e.g. 0.05")
    ap.add_argument("--only", default=",".join(ALL_CORPORA), help="corpora, comma-separated")
    ap.add_argument("--peers", default=",".join(ALL_PEERS), help="tools, comma-separated")
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--reps", type=int, help="runs per measurement (default 3 for src/small, 1 for the others)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rep-budget", type=float, default=REP_BUDGET_S,
                    help="a run longer than this many seconds is not repeated (default 20)")
    ap.add_argument("--znippy", default=os.path.join(ROOT, "build", "znippy"))
    ap.add_argument("--no-znippy", action="store_true", help="peers only")
    ap.add_argument("--tmpfs", default="/dev/shm", help="tmpfs for archives and tmpfs extraction")
    ap.add_argument("--disk", default="/tmp", help="directory on disk for disk extraction")
    ap.add_argument("--no-disk", action="store_true", help="skip the disk extraction")
    ap.add_argument("--no-floor", action="store_true", help="skip the floor / cp references")
    ap.add_argument("--no-cat", action="store_true", help="skip the random-access timing")
    ap.add_argument("--peak-rss", action="store_true",
                    help="instead: peak RSS of znippy create/extract on large+random+mixed (limit --rss-limit-mib)")
    ap.add_argument("--rss-limit-mib", type=int, default=512)
    a = ap.parse_args()
    REP_BUDGET_S = a.rep_budget

    corpora = a.corpora or (os.path.join(HERE, "corpora") if a.scale == 1 else
                            os.path.join(HERE, "corpora", f"scale-{a.scale:g}"))
    only = [c for c in a.only.split(",") if c]
    if a.peak_rss:
        only = list(RSS_CORPORA)
    for c in only:
        if c not in ALL_CORPORA:
            sys.exit(f"archive_bench: unknown corpus {c}")
    peers = [p for p in a.peers.split(",") if p]
    for p in peers:
        if p not in ALL_PEERS:
            sys.exit(f"archive_bench: unknown tool {p}")
    if a.no_znippy and "znippy" in peers:
        peers.remove("znippy")
    for tool, prog in [("tarzst", "zstd"), ("squashfs", "mksquashfs"), ("7z", "7zz"), ("zip", "zip")]:
        if tool in peers and not shutil.which(prog):
            log(f"{prog} not installed (scripts/install_deps.sh bench): {tool} skipped")
            peers.remove(tool)
    if not os.path.exists(GNU_TIME):
        sys.exit("archive_bench: GNU time (/usr/bin/time) is required: apt-get install time")

    # corpora: generate what is missing (make_corpora.sh skips what exists)
    subprocess.run([os.path.join(HERE, "make_corpora.sh"), "--scale", f"{a.scale:g}", "--only", ",".join(only),
                    corpora], check=True, stdout=sys.stderr)
    corpora = os.path.abspath(corpora)

    work = {"tmpfs": tempfile.mkdtemp(prefix="znbench.", dir=a.tmpfs)}
    targets = {"tmpfs": os.path.join(work["tmpfs"], "x")}
    disk_work = None
    if not a.no_disk:
        disk_work = tempfile.mkdtemp(prefix="znbench.", dir=a.disk)
        targets["disk"] = os.path.join(disk_work, "x")
    for t in targets.values():
        os.makedirs(t)
    try:
        zn = os.path.abspath(a.znippy)
        if "znippy" in peers:
            why = znippy_works(zn, work)
            if why:
                log(f"znippy skipped: {why}")
                peers.remove("znippy")
        tools = tool_table(zn, a.threads)

        floor_bin = None
        if not a.no_floor:
            floor_bin = os.path.join(ROOT, "build", "bench_write_floor")
            src_c = os.path.join(HERE, "bench_write_floor.c")
            if not os.access(floor_bin, os.X_OK) or os.path.getmtime(floor_bin) < os.path.getmtime(src_c):
                floor_bin = os.path.join(work["tmpfs"], "bench_write_floor")
                subprocess.run(["cc", "-O2", "-pthread", "-o", floor_bin, src_c], check=True)

        if a.peak_rss:
            return peak_rss(a, zn, corpora, work, targets, peers)

        meta = {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": sh(f"git -C {shlex.quote(ROOT)} rev-parse --short HEAD"),
            "scale": a.scale, "threads": a.threads, "corpora": corpora,
            "machine": machine_info({"corpora": corpora, **targets}),
            "versions": {t: sh(tools[t]["version"]) for t in peers},
            "reps": {}, "command": " ".join(shlex.quote(x) for x in sys.argv[1:]),
        }
        md = [f"## Archive benchmark ({meta['date']}, commit {meta['commit']}, scale {a.scale:g})", "",
              f"Machine: {meta['machine']['cpu']}, {meta['machine']['nproc']} CPUs, "
              f"{meta['machine']['mem_gib']} GiB, Linux {meta['machine']['kernel']}; corpora on "
              f"{meta['machine']['fs']['corpora']}, extraction to {meta['machine']['fs']['tmpfs']}"
              + (f" and {meta['machine']['fs']['disk']}" if "disk" in targets else "")
              + f"; load average at start {meta['machine']['loadavg']:.2f}; {a.threads} threads; "
              f"starting a process (/bin/true) takes {meta['machine']['process_start_ms']:.2f} ms here, "
              "and is part of every 'cat one file' time.", "",
              "Tools: " + "; ".join(f"{t}: {v.splitlines()[0] if v else '?'}" for t, v in meta["versions"].items()),
              ""]
        print("\n".join(md), flush=True)
        os.makedirs(a.out, exist_ok=True)
        json_lines = []
        for name in only:
            reps = a.reps or (3 if (name in ("src", "small") or a.scale < 1) else 1)
            meta["reps"][name] = reps
            log(f"{name}: reading the input (warms the page cache, digest for verification)")
            stats = tree_stats(os.path.join(corpora, name))
            cat_path = None
            if name in TREES:
                members = []
                for dp, dns, fs in os.walk(os.path.join(corpora, name)):
                    for f in fs:
                        p = os.path.join(dp, f)
                        if os.path.isfile(p) and not os.path.islink(p):
                            members.append(os.path.relpath(p, os.path.join(corpora, name)))
                members.sort()
                cat_path = members[len(members) // 2] if members else None
            results = []
            for tool in peers:
                results.append(bench_tool(tool, tools[tool], name, corpora, stats, work, targets, reps,
                                          not a.no_cat, cat_path))
            if not a.no_floor:
                results += bench_references(name, corpora, stats, work, targets, reps, floor_bin, a.threads,
                                            a.znippy if "znippy" in peers else None)
            text = report_corpus(name, stats, results, meta)
            print(text, flush=True)
            md.append(text)
            for r in results:
                rec = {"date": meta["date"], "commit": meta["commit"], "corpus": name, "scale": a.scale,
                       "input_files": stats[0], "input_bytes": stats[1], "reps": reps, **r}
                for k in ("create", "extract_tmpfs", "extract_disk"):
                    if isinstance(r.get(k), dict) and "best_s" in r[k]:
                        rec[k + "_mbps"] = round(mbps(stats[1], r[k]), 2)
                if "archive_bytes" in r:
                    rec["ratio"] = round(r["archive_bytes"] / stats[1], 5)
                json_lines.append(rec)
        md.append(f"Command: `bench/run_archive_bench.sh {meta['command']}`\n")
        hist = history.Run("archive_bench", f"bench/run_archive_bench.sh {meta['command']}")
        for rec in json_lines:
            if rec["tool"] == "znippy":
                record_history(hist, rec, [r for r in json_lines if r["corpus"] == rec["corpus"]], a.scale)
        hist.write()
        with open(os.path.join(a.out, "archive_bench.md"), "w") as f:
            f.write("\n".join(md))
        with open(os.path.join(a.out, "archive_bench.json"), "w") as f:
            f.write(json.dumps({"meta": meta}) + "\n")
            for rec in json_lines:
                f.write(json.dumps(rec) + "\n")
        with open(os.path.join(a.out, "archive_bench_history.jsonl"), "a") as f:
            for rec in json_lines:
                f.write(json.dumps({**rec, "machine": meta["machine"]}) + "\n")
        log(f"wrote {a.out}/archive_bench.md and archive_bench.json")
        return 0
    finally:
        rmtree(work["tmpfs"])
        if disk_work:
            rmtree(disk_work)


def record_history(hist, zn, peers, scale):
    """znippy's line of one corpus against each other tool's: create, extraction, size, cat."""
    for p in peers:
        if p is zn:
            continue
        ref = p["tool"] not in ALL_PEERS  # floor, cp, cat>/dev/null: references, not peers
        for op in ("create", "extract_tmpfs", "extract_disk"):
            a, b = zn.get(op), p.get(op)
            if isinstance(a, dict) and isinstance(b, dict) and a.get("runs_s") and b.get("runs_s") \
                    and not a.get("verify_error") and not b.get("verify_error"):
                hist.add(zn["corpus"], op, a["runs_s"], b["runs_s"], peer=p["tool"], gate=not ref, scale=scale)
        if "archive_bytes" in zn and "archive_bytes" in p:
            hist.add(zn["corpus"], "size", [zn["archive_bytes"]], [p["archive_bytes"]], peer=p["tool"],
                     unit="bytes", scale=scale)
        a, b = zn.get("cat"), p.get("cat")
        if isinstance(a, dict) and isinstance(b, dict) and "median_ms" in a and "median_ms" in b:
            hist.add(zn["corpus"], "cat", [a["median_ms"]], [b["median_ms"]], peer=p["tool"], unit="ms",
                     scale=scale)
        alt = p.get("alternated")
        if isinstance(alt, dict) and alt.get("znippy_runs_s"):  # random: create alternated with cp
            hist.add(zn["corpus"], "create alternated", alt["znippy_runs_s"], alt["cp_runs_s"], peer="cp",
                     scale=scale)


def sampled(argv, cwd):
    """Run argv (no shell) and sample RssAnon/RssFile/RssShmem from /proc every 10 ms.
    Returns (wall s, maxrss KiB from wait4, rc, {field: peak KiB})."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL)
    peaks = {}
    status_path = f"/proc/{p.pid}/status"
    while True:
        try:
            with open(status_path) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k in ("RssAnon", "RssFile", "RssShmem", "VmHWM"):
                        kib = int(v.split()[0])
                        if kib > peaks.get(k, 0):
                            peaks[k] = kib
        except (OSError, ValueError, IndexError):
            pass
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            break
        time.sleep(0.01)
    return time.perf_counter() - t0, ru.ru_maxrss, p.returncode, peaks


def peak_rss(a, zn, corpora, work, targets, peers):
    """Peak RSS of znippy create/extract on large + random + mixed (~1.8 GB at scale 1)."""
    if "znippy" not in peers:
        log("peak-rss: znippy is not available")
        return 2
    files, nbytes = 0, 0
    for n in RSS_CORPORA:
        s = tree_stats(os.path.join(corpora, n), digest=False)
        files, nbytes = files + s[0], nbytes + s[1]
    q = shlex.quote
    arch = os.path.join(work["tmpfs"], "rss.zn")
    out = targets["tmpfs"]
    limit_kib = a.rss_limit_mib * 1024
    rows, recs, ok = [], [], True
    steps = [("create", f"{q(zn)} create -o {q(arch)} -T {a.threads} {' '.join(RSS_CORPORA)}", corpora),
             ("extract", f"{q(zn)} extract {q(arch)} -C {q(out)} -T {a.threads}", work["tmpfs"])]
    # tar | zstd for reference
    steps += [("create (tar + zstd, reference)", f"tar -cf - {' '.join(RSS_CORPORA)} | zstd -T0 -3 -q -o {q(arch)}.tzst", corpora),
              ("extract (tar + zstd, reference)", f"zstd -dc {q(arch)}.tzst | tar -xf - -C {q(out)}.t", work["tmpfs"])]
    os.makedirs(out + ".t", exist_ok=True)
    for label, cmd, cwd in steps:
        log(f"peak-rss: {label}")
        znippy_step = "tar" not in label
        if znippy_step:
            wall, rss, rc, peaks = sampled(shlex.split(cmd), cwd)
        else:
            wall, rss, rc, _, _ = timed(cmd, cwd=cwd)
            peaks = {}
        anon = peaks.get("RssAnon", 0)
        over = znippy_step and anon > limit_kib
        ok &= rc == 0 and not over
        recs.append({"step": label, "input_bytes": nbytes, "seconds": round(wall, 3), "maxrss_kib": rss,
                     "peak_kib": peaks, "rc": rc, "over_limit": bool(over)})
        cell = lambda k: f"{peaks[k] / 1024:,.1f}" if k in peaks else "-"
        rows.append(f"| {label} | {nbytes / MB:,.0f} | {wall:.2f} | {rss / 1024:,.1f} | {cell('RssAnon')} | "
                    f"{cell('RssFile')} | {cell('RssShmem')} | "
                    f"{'FAIL (exit %d)' % rc if rc else ('over limit' if over else 'ok')} |")
    got = tree_stats(os.path.join(out), digest=False)
    if got[1] != nbytes:
        rows.append(f"| extract verification | | | | FAIL: {got[1]} bytes, want {nbytes} |")
        ok = False
    text = "\n".join([f"### Peak RSS: {' + '.join(RSS_CORPORA)}, {files} files, {nbytes / MB:,.0f} MB, "
                      f"{a.threads} threads, limit {a.rss_limit_mib} MiB", "",
                      "Peak RSS is the kernel's maxrss (GNU time %M, wait4), which also counts file pages a "
                      "process maps or reads (the archive, on tmpfs: RssShmem); the limit applies to the "
                      "anonymous memory (RssAnon), sampled from /proc/PID/status every 10 ms.", "",
                      "| step | input MB | seconds | maxrss MiB | peak RssAnon MiB | peak RssFile MiB | "
                      "peak RssShmem MiB | result |", "|---|---:|---:|---:|---:|---:|---:|---|"] + rows)
    print(text + "\n")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "peak_rss.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, "peak_rss.json"), "w") as f:
        for rec in recs:
            f.write(json.dumps({"corpora": list(RSS_CORPORA), "scale": a.scale, "threads": a.threads,
                                "limit_mib": a.rss_limit_mib, **rec}) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    # SIGTERM/SIGHUP unwind like Ctrl-C, so the work directories on tmpfs and disk are removed
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.default_int_handler)
    sys.exit(main())
