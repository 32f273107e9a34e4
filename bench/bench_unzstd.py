#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench_unzstd.py - end-to-end decoding speed of `znippy unzstd -c` against `zstd -dc`, one
# thread, files on tmpfs.
"""
Usage: bench/bench_unzstd.py [-b BUILD] [-m MB] [-l LEVELS] [-r REPS] [-c CORPUS,...]
                             [--dir DIR] [--out FILE] [--keep] [-j out.json]

The corpora are bench_zstd's (text, x86-64 shared objects, int64 runs, deltas and Zipf ids,
random), written by `BUILD/bench_zstd -w DIR -m MB` into a directory on tmpfs (default: a new one
under /dev/shm), compressed by the zstd command at each level (`zstd -LEVEL`, with content size
and checksum, as the command writes files). Each file is decoded by both commands to standard
output, whose bytes are first checked against the original; then REPS rounds, each running both
commands once in alternating order, so that drifts in clock speed hit both alike. Standard
output is /dev/null by default (--out FILE: a file, truncated before each run, e.g. on the same
tmpfs). Reported: the best of the REPS runs per command, in wall time and in CPU time (user +
system of the child, from wait4: on a shared machine, time spent descheduled is not counted),
MB/s of output (1e6 bytes), and the ratio znippy / zstd per row (speed: above 1 is faster), with
geometric means over all rows and over the int64 runs and deltas rows, the acceptance numbers
of issue 36 (>= 1.05 and >= 1.25). Runs on an otherwise idle machine give the real numbers.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(cmd, out):
    """Run cmd with standard output to `out` (a path); (wall seconds, cpu seconds)."""
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    t0 = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, fd, 1)])
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    os.close(fd)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    return wall, ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-b", "--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("-m", "--mb", type=int, default=64, help="size of each corpus (MiB)")
    ap.add_argument("-l", "--levels", default="1,3,9,19")
    ap.add_argument("-r", "--reps", type=int, default=11)
    ap.add_argument("-c", "--corpora", default="text,x86-64-so,int64-runs,int64-deltas,int64-zipf,random")
    ap.add_argument("--dir", help="where the files go (default: a new directory in /dev/shm)")
    ap.add_argument("--out", default="/dev/null", help="standard output of the commands")
    ap.add_argument("--keep", action="store_true", help="keep the files")
    ap.add_argument("-j", "--json")
    a = ap.parse_args()
    znippy = os.path.join(a.build, "znippy")
    zstd = shutil.which("zstd")
    if not zstd:
        sys.exit("zstd not found")
    d = a.dir or tempfile.mkdtemp(prefix="bench_unzstd.", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.makedirs(d, exist_ok=True)
    corpora = a.corpora.split(",")
    subprocess.run([os.path.join(a.build, "bench_zstd"), "-w", d, "-m", str(a.mb), "-c", ",".join(corpora)], check=True)
    zver = subprocess.run([zstd, "-V"], capture_output=True, text=True).stdout.strip()
    print(f"{zver}; znippy {znippy}; best of {a.reps} alternated runs; output to {a.out}; MB/s of output\n")
    print("| corpus | level | MB | ratio | znippy wall | zstd wall | ratio wall | znippy cpu | zstd cpu | ratio cpu |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    check_out = os.path.join(d, "check.out")
    for c in corpora:
        src = os.path.join(d, c)
        if not os.path.exists(src):
            continue
        size = os.path.getsize(src)
        orig = open(src, "rb").read()
        for lv in a.levels.split(","):
            z = f"{src}.{lv}.zst"
            level = ["--fast=" + lv[1:]] if lv.startswith("-") else ["-" + lv] + (["--ultra"] if int(lv) > 19 else [])
            subprocess.run([zstd, "-q", "-f", *level, src, "-o", z], check=True)
            cmds = {"znippy": [znippy, "unzstd", "-c", z], "zstd": [zstd, "-dcq", z]}
            for name, cmd in cmds.items():
                run_once(cmd, check_out)
                if open(check_out, "rb").read() != orig:
                    sys.exit(f"{name}: wrong output for {z}")
            os.unlink(check_out)
            best = {n: [1e30, 1e30] for n in cmds}
            order = list(cmds)
            for r in range(a.reps):
                for name in order if r % 2 == 0 else reversed(order):
                    w, cpu = run_once(cmds[name], a.out)
                    best[name][0] = min(best[name][0], w)
                    best[name][1] = min(best[name][1], cpu)
            mbs = {n: [size / 1e6 / t for t in best[n]] for n in cmds}
            rw, rc = mbs["znippy"][0] / mbs["zstd"][0], mbs["znippy"][1] / mbs["zstd"][1]
            rows.append({"corpus": c, "level": lv, "bytes": size, "compressed": os.path.getsize(z),
                         "znippy_wall": mbs["znippy"][0], "zstd_wall": mbs["zstd"][0],
                         "znippy_cpu": mbs["znippy"][1], "zstd_cpu": mbs["zstd"][1],
                         "ratio_wall": rw, "ratio_cpu": rc})
            print(f"| {c} | {lv} | {size / 1e6:.1f} | {size / os.path.getsize(z):.2f} | "
                  f"{mbs['znippy'][0]:.0f} | {mbs['zstd'][0]:.0f} | {rw:.3f} | "
                  f"{mbs['znippy'][1]:.0f} | {mbs['zstd'][1]:.0f} | {rc:.3f} |", flush=True)

    def gmean(key, sel):
        v = [r[key] for r in rows if sel(r)]
        return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")

    cols = lambda r: r["corpus"] in ("int64-runs", "int64-deltas")
    print(f"| **geometric mean** | | | | | | **{gmean('ratio_wall', lambda r: True):.3f}** | | | "
          f"**{gmean('ratio_cpu', lambda r: True):.3f}** |")
    print(f"| geometric mean, int64 runs and deltas | | | | | | {gmean('ratio_wall', cols):.3f} | | | "
          f"{gmean('ratio_cpu', cols):.3f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"zstd": zver, "reps": a.reps, "out": a.out, "results": rows}, f, indent=1)
    if not a.keep and not a.dir:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
