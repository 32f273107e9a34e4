#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_gate.py - bench/gate and bench/history.py on made-up history (a CTest test; no timing).

Each case writes a history directory, runs bench/gate on it for a named machine and checks the
exit status and the verdict lines."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GATE = os.path.join(HERE, "gate")
M = "Test CPU (family 1 model 2), 2 CPUs"
failures = 0


def line(date, ratio, runs=(1.0,), peer_runs=None, machine=M, corpus="src", op="create", **extra):
    """A line whose znippy runs are `runs` (seconds) and whose peer is `ratio` times slower."""
    best = min(runs)
    peer_runs = peer_runs or [best * ratio]
    rec = {"date": date, "run": f"{date} quick_compare", "driver": "quick_compare", "machine": machine,
           "commit": "c" + date[-3:-1], "command": "python3 bench/quick_compare.py", "corpus": corpus,
           "op": op, "tool": "znippy", "peer": "tar|zstd", "unit": "s", "value": best,
           "peer_value": min(peer_runs), "ratio": round(min(peer_runs) / best, 4), "runs": list(runs),
           "peer_runs": list(peer_runs)}
    rec.update(extra)
    return rec


def case(name, lines, want_rc, want=(), unwanted=(), args=("--machine", M)):
    global failures
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "quick_compare.jsonl"), "w") as f:
            for rec in lines:
                f.write(json.dumps(rec) + "\n")
        p = subprocess.run([sys.executable, GATE, "--history", d, *args],
                           capture_output=True, text=True)
    out = p.stdout + p.stderr
    bad = [w for w in want if w not in out] + [u for u in unwanted if u in out]
    if p.returncode != want_rc or bad:
        failures += 1
        print(f"FAIL {name}: exit {p.returncode} (want {want_rc}), missing/unexpected {bad}\n{out}")
    else:
        print(f"ok   {name}")


T0, T1, T2 = "2026-12-01T10:00:00Z", "2026-12-02T10:00:00Z", "2026-12-03T10:00:00Z"
# A steady run: within 5%.
case("a drop of 2% passes", [line(T0, 1.70), line(T1, 1.666)], 0, ["ok   src create", "-2.0%"])
# Tight runs (no spread): a drop of 10% fails, and the output names it.
case("a drop of 10% fails", [line(T0, 1.70), line(T1, 1.53)], 1,
     ["FAIL src create znippy/tar|zstd: ratio 1.700 -> 1.530", "1 dropped"])
# The same drop with noisy repetitions (median 10% above the best, on both sides) passes: the
# threshold is 5% + the measured 20% noise.
noisy = dict(runs=(1.0, 1.1, 1.1), peer_runs=(1.53, 1.683, 1.7))
case("a drop of 10% within the measured noise passes", [line(T0, 1.70), line(T1, 1.53, **noisy)], 0,
     ["noise 20.0%"])
# ... and the noise of the earlier run counts as well.
case("the earlier run's noise counts", [line(T0, 1.70, runs=(1.0, 1.2, 1.3), peer_runs=(1.7, 1.7, 1.7)),
                                        line(T1, 1.53)], 0, ["noise 20.0%"])
# An improvement passes.
case("an improvement passes", [line(T0, 1.50), line(T1, 1.80)], 0, ["+20.0%"])
# Compared with the most recent earlier run, not the first one.
case("the previous run is the latest earlier one", [line(T0, 2.00), line(T1, 1.60), line(T2, 1.58)], 0,
     ["1.600 -> 1.580"])
case("a drop against the latest earlier run fails", [line(T0, 1.40), line(T1, 1.60), line(T2, 1.45)], 1,
     ["1.600 -> 1.450"])
# Other machines' lines are not compared with this one's.
case("another machine's run is not compared", [line(T0, 2.00, machine="Other, 16 CPUs"), line(T1, 1.50)], 0,
     ["no earlier run here"], ["FAIL"])
case("no run on this machine", [line(T0, 2.00, machine="Other, 16 CPUs")], 0, ["nothing to compare"])
# Another corpus, operation or scale is another measurement.
case("another corpus is not compared", [line(T0, 2.00, corpus="small"), line(T1, 1.50)], 0,
     ["no earlier run here"], ["FAIL"])
case("another scale is not compared", [line(T0, 2.00, scale=0.05), line(T1, 1.50, scale=1)], 0,
     ["no earlier run here"], ["FAIL"])
# Lines marked "gate": false are passed over, old and new.
case("gate: false is passed over", [line(T0, 2.00), line(T1, 1.00, gate=False)], 0, [], ["FAIL"])
# Several measurements in one run: one failing one fails the gate.
case("one of several fails", [line(T0, 1.70), line(T0, 2.30, op="extract"), line(T1, 1.69),
                              line(T1, 1.90, op="extract")], 1,
     ["ok   src create", "FAIL src extract", "2 ratios compared, 1 dropped"])
# --tolerance moves the threshold.
case("--tolerance 0.2", [line(T0, 1.70), line(T1, 1.53)], 0, [], ["FAIL"],
     args=("--machine", M, "--tolerance", "0.2"))
# A drop recorded as accepted (ZN_BENCH_ACCEPT) is listed, and passes.
case("an accepted drop passes", [line(T0, 1.70), line(T1, 1.53, accepted="new format")], 0,
     ["accepted (new format): src create", "0 dropped"])
# --all-machines: each machine's latest run against its own previous one.
O = "Other, 16 CPUs"
case("--all-machines: a drop on another machine fails",
     [line(T0, 1.70), line(T1, 1.69), line(T0, 3.0, machine=O), line(T1, 2.0, machine=O)], 1,
     ["gate: " + O, "FAIL src create", "2 ratios compared on 2 machine(s), 1 dropped"], args=("--all-machines",))
case("--all-machines: machines are not compared with each other",
     [line(T0, 3.0, machine=O), line(T1, 1.70)], 0, ["no earlier run here"], ["FAIL"],
     args=("--all-machines",))

# history.py record appends a line bench/gate reads.
with tempfile.TemporaryDirectory() as d:
    env = dict(os.environ, ZN_BENCH_HISTORY=d)
    for runs in ("1.0 1.01", "1.3 1.31"):
        subprocess.run([sys.executable, os.path.join(HERE, "history.py"), "record", "demo", "--command",
                        "bench/demo.sh", "--corpus", "c", "--op", "create", "--peer", "tar|zstd",
                        "--runs", runs, "--peer-runs", "2.0 2.02"], env=env, check=True,
                       capture_output=True)
    recs = [json.loads(x) for x in open(os.path.join(d, "demo.jsonl"))]
    ok = (len(recs) == 2 and recs[0]["ratio"] == 2.0 and recs[0]["runs"] == [1.0, 1.01]
          and recs[0]["command"] == "bench/demo.sh" and recs[1]["value"] == 1.3)
    # Both lines share a second: make the second run later, as two real runs would be.
    recs[1]["date"] = "9999-01-01T00:00:00Z"
    recs[1]["run"] = "9999-01-01T00:00:00Z demo"
    with open(os.path.join(d, "demo.jsonl"), "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))
    p = subprocess.run([sys.executable, GATE, "--history", d], capture_output=True, text=True)
    if not ok or p.returncode != 1 or "FAIL c create" not in p.stdout:
        failures += 1
        print(f"FAIL history.py record + gate on this machine: {recs}\n{p.stdout}{p.stderr}")
    else:
        print("ok   history.py record + gate on this machine")

print("test_gate: all passed" if not failures else f"test_gate: {failures} failed")
sys.exit(1 if failures else 0)
