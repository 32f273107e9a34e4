# SPDX-License-Identifier: MIT
# cat_ab.py - A/B of `znippy cat` latency between two builds, alternated so that the machine's
# slow spells hit both alike.
#
# Usage: python3 bench/cat_ab.py ZNIPPY_A ZNIPPY_B ARCHIVE [FILES] [RUNS]   (defaults 30, 15)
# Times `cat ARCHIVE PATH` (whole process) for FILES paths spread evenly over the archive's files,
# RUNS times each, A and B in turn; prints each build's median and the median per-file ratio B/A.
# Appends the per-file medians to bench/history/cat_ab.jsonl (an A/B, which bench/gate passes over).
import json, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history  # noqa: E402

A, B, arch = sys.argv[1], sys.argv[2], sys.argv[3]
nfiles = int(sys.argv[4]) if len(sys.argv) > 4 else 30
runs = int(sys.argv[5]) if len(sys.argv) > 5 else 15
out = subprocess.run([A, "list", "--json", arch], capture_output=True, text=True, check=True).stdout
files = [json.loads(l)["path"] for l in out.splitlines() if '"type":"file"' in l]
pick = [files[i * len(files) // nfiles] for i in range(nfiles)]
ra, rb = [], []
for p in pick:
    ta, tb = [], []
    for _ in range(runs):
        for b, t in ((A, ta), (B, tb)):
            s = time.perf_counter()
            subprocess.run([b, "cat", arch, p], stdout=subprocess.DEVNULL, check=True)
            t.append(time.perf_counter() - s)
    ra.append(statistics.median(ta) * 1e3)
    rb.append(statistics.median(tb) * 1e3)
ratio = statistics.median([b / a for a, b in zip(ra, rb)])
print(f"A median {statistics.median(ra):.2f} ms, B median {statistics.median(rb):.2f} ms, "
      f"per-file B/A median {ratio:.3f}")
run = history.Run("cat_ab")
run.add(os.path.basename(arch), "cat", rb, ra, tool=B, peer=A, unit="ms", gate=False,
        median_ms=round(statistics.median(rb), 3), peer_median_ms=round(statistics.median(ra), 3),
        per_file_ratio=round(ratio, 4))
run.write()
