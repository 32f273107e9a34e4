# SPDX-License-Identifier: MIT
# quick_compare.py - znippy vs tar|zstd (create, extract to tmpfs, size) and vs cp (random).
#
# Usage: python3 bench/quick_compare.py [CORPORA_DIR] [RUNS]   (defaults bench/corpora, 5)
# Each pair of commands is run alternately, RUNS times each (znippy, peer, znippy, peer, ...), so
# that a slow spell of this shared machine hits both alike; best wall time of each is reported.
# Every measurement is appended to bench/history/quick_compare.jsonl (bench/history.py; check it
# with bench/gate).
import os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history  # noqa: E402

Z = os.environ.get("ZNIPPY", "build/znippy")
C = sys.argv[1] if len(sys.argv) > 1 else "bench/corpora"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def timed(cmd, pre=None):
    if pre:
        subprocess.run(pre, shell=True, check=True)
    t = time.perf_counter()
    subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def pair(a, b, pre_a=None, pre_b=None, record=None):
    """Best of N alternated runs of a and b; record=(corpus, op, peer) appends them to the history."""
    ta, tb = [], []
    for _ in range(N):
        ta.append(timed(a, pre_a))
        tb.append(timed(b, pre_b))
    if record:
        run.add(record[0], record[1], ta, tb, peer=record[2])
    return min(ta), min(tb)


run = history.Run("quick_compare")
print("load", os.getloadavg(), "runs", N)
for corp in ["src", "small"]:
    zc, tc = pair(f"{Z} create -q -T2 -o /dev/shm/c.zn -C {C} {corp}",
                  f"tar -cf - -C {C} {corp} | zstd -T0 -3 -q -f -o /dev/shm/c.tzst",
                  record=(corp, "create", "tar|zstd"))
    zx, tx = pair(f"{Z} extract -q -T2 /dev/shm/c.zn -C /dev/shm/xo",
                  f"zstd -dc /dev/shm/c.tzst | tar -xf - -C /dev/shm/xo",
                  pre_a="rm -rf /dev/shm/xo", pre_b="rm -rf /dev/shm/xo; mkdir -p /dev/shm/xo",
                  record=(corp, "extract_tmpfs", "zstd|tar"))
    zs, ts = os.path.getsize("/dev/shm/c.zn"), os.path.getsize("/dev/shm/c.tzst")
    run.add(corp, "size", [zs], [ts], peer="tar|zstd", unit="bytes")
    print(f"{corp}: create znippy {zc:.3f}s tar|zstd {tc:.3f}s -> {tc/zc:.2f}x; "
          f"extract tmpfs znippy {zx:.3f}s zstd|tar {tx:.3f}s -> {tx/zx:.2f}x; size {zs/ts:.3f}x")
R = f"{C}/random/random.bin"
zr, cr = pair(f"{Z} create -q -T2 -o /dev/shm/r.zn {R}", f"cp {R} /dev/shm/r.copy",
              pre_a="rm -f /dev/shm/r.zn", pre_b="rm -f /dev/shm/r.copy", record=("random", "create", "cp"))
zn, _ = pair(f"{Z} create -q -T2 --digest none -o /dev/shm/r.zn {R}", f"cp {R} /dev/shm/r.copy",
             pre_a="rm -f /dev/shm/r.zn", pre_b="rm -f /dev/shm/r.copy",
             record=("random", "create --digest none", "cp"))
print(f"random: create znippy {zr:.3f}s (--digest none {zn:.3f}s) cp {cr:.3f}s -> "
      f"znippy speed / cp speed {cr/zr:.2f} ({cr/zn:.2f} without digests)")
subprocess.run("rm -rf /dev/shm/xo /dev/shm/r.zn /dev/shm/r.copy /dev/shm/c.zn /dev/shm/c.tzst",
               shell=True)
print("load", os.getloadavg())
run.write()
