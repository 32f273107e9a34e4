# SPDX-License-Identifier: MIT
# cat_archives.py - `znippy cat` latency of one build on two archives of the same tree (made with
# different options, such as --chunk-size), alternated so that the machine's slow spells hit both.
#
# Usage: python3 bench/cat_archives.py ZNIPPY ARCHIVE_A ARCHIVE_B [FILES] [RUNS]   (defaults 40, 9)
# Times `cat ARCHIVE PATH` (whole process) for FILES paths spread evenly over A's files, RUNS
# times each; prints, for each archive, the median, 90th percentile and maximum of the per-file
# medians and how many are over 5 ms, then the median time to start /bin/true. Appends the
# per-file medians of B against A to bench/history/cat_archives.jsonl (passed over by bench/gate).
import json, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history  # noqa: E402

Z, archs = sys.argv[1], sys.argv[2:4]
nfiles = int(sys.argv[4]) if len(sys.argv) > 4 else 40
runs = int(sys.argv[5]) if len(sys.argv) > 5 else 9
out = subprocess.run([Z, "list", "--json", archs[0]], capture_output=True, text=True, check=True).stdout
files = [json.loads(l)["path"] for l in out.splitlines() if '"type":"file"' in l]
pick = [files[(i * len(files) // nfiles + 7) % len(files)] for i in range(nfiles)]
res = {a: [] for a in archs}
for p in pick:
    t = {a: [] for a in archs}
    for _ in range(runs):
        for a in archs:
            s = time.perf_counter()
            subprocess.run([Z, "cat", a, p], stdout=subprocess.DEVNULL, check=True)
            t[a].append(time.perf_counter() - s)
    for a in archs:
        res[a].append(statistics.median(t[a]) * 1e3)
for a in archs:
    r = sorted(res[a])
    print(f"{a}: median {statistics.median(r):.2f} ms, p90 {r[int(len(r) * 0.9)]:.2f}, "
          f"max {r[-1]:.2f}, over 5 ms {sum(x > 5 for x in r)}/{len(r)}")
t0 = []
for _ in range(30):
    s = time.perf_counter()
    subprocess.run(["/bin/true"])
    t0.append(time.perf_counter() - s)
print(f"process start {statistics.median(t0) * 1e3:.2f} ms")
run = history.Run("cat_archives")
run.add(os.path.basename(archs[1]), "cat", res[archs[1]], res[archs[0]], peer=os.path.basename(archs[0]),
        unit="ms", gate=False, median_ms=round(statistics.median(res[archs[1]]), 3),
        peer_median_ms=round(statistics.median(res[archs[0]]), 3))
run.write()
