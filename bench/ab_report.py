# SPDX-License-Identifier: MIT
# ab_report.py - the report of an A/B of two builds (bench/create_ab.sh, bench/extract_ab.sh):
# reads "old|new MICROSECONDS" lines on standard input, prints the min and median of each and
# new/old, and appends the runs to bench/history/BENCH.jsonl (bench/history.py) as NEW against
# OLD, marked "gate": false (an A/B of two builds, not a measurement bench/gate follows).
#
# Usage: python3 bench/ab_report.py BENCH CMDLINE NAME WHAT NEW OLD
import os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history  # noqa: E402

bench, cmdline, name, what, new, old = sys.argv[1:7]
t = {"old": [], "new": []}
for line in sys.stdin:
    b, us = line.split()
    t[b].append(int(us) / 1e6)
for b in ("old", "new"):
    print("%s: min %.3f s, median %.3f s" % (b, min(t[b]), statistics.median(t[b])))
print("new/old: min %.3f, median %.3f" % (min(t["new"]) / min(t["old"]),
      statistics.median(t["new"]) / statistics.median(t["old"])))
run = history.Run(bench, cmdline)
run.add(name, what, t["new"], t["old"], tool=new, peer=old, gate=False)
run.write()
