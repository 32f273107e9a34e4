#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""history.py - the benchmark history: JSON lines under bench/history/, one file per driver.

Every benchmark driver appends one line per measurement to bench/history/DRIVER.jsonl when it
runs; bench/gate reads them. A line:

  {"date": "2026-12-04T15:51:00Z", "run": "2026-12-04T15:51:00Z quick_compare",
   "driver": "quick_compare", "machine": "AMD EPYC (family 26 model 2), 2 CPUs",
   "commit": "4852138", "command": "python3 bench/quick_compare.py /work/corpora 7",
   "corpus": "src", "op": "create", "tool": "znippy", "peer": "tar|zstd",
   "value": 0.299, "peer_value": 0.507, "unit": "s", "ratio": 1.696,
   "runs": [0.299, 0.31, ...], "peer_runs": [0.507, ...], "loadavg": 0.7}

value and peer_value are the best (smallest) of the runs: seconds, milliseconds or bytes, always
smaller-is-better; ratio = peer_value / value, so a ratio above 1 is znippy ahead and a falling
ratio is a regression. runs / peer_runs hold every repetition (bench/gate estimates the noise from
their spread); a line without them was one run, or was recovered from the old prose record
(docs/BENCHMARKS.md before 2026-12-05, "source" says so). "gate": false marks a line bench/gate
passes over (A/B comparisons between two builds, references that are not peers).

The machine is named by its CPU: the model name, the family and model numbers (the model name of
these VMs is a bare "AMD EPYC" for Zen 3 and Zen 5 alike) and the CPU count. ZN_BENCH_HISTORY
names another directory; ZN_BENCH_HISTORY=off records nothing. ZN_BENCH_ACCEPT="why" marks the
run's lines "accepted": "why", a drop bench/gate is told to accept. ZN_BENCH_RUN (a UTC time) makes
the lines of several `record` calls one run.

As a command, for the shell drivers:
  history.py record DRIVER --command CMD --corpus C --op OP --tool T --peer P
             --runs "S S S" --peer-runs "S S S" [--unit s] [--no-gate]
  history.py inflate FILE.json --command CMD    bench_inflate -j's results (s/GB from MB/s)
  history.py checksum FILE.json --command CMD   bench_checksum -j's results
  history.py machine        print this machine's id
Python 3.9+ standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_DIR = os.path.join(HERE, "history")


def history_dir():
    return os.environ.get("ZN_BENCH_HISTORY") or DEFAULT_DIR


def machine_id():
    """'MODEL NAME (family F model M), N CPUs' from /proc/cpuinfo, or the platform's name."""
    model = family = number = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                k, v = k.strip(), v.strip()
                if k == "model name" and model is None:
                    model = v
                elif k == "cpu family" and family is None:
                    family = v
                elif k == "model" and number is None:
                    number = v
                elif k == "CPU part" and number is None:  # aarch64
                    number = v
    except OSError:
        pass
    name = model or platform.processor() or platform.machine()
    if family is not None and number is not None:
        name += f" (family {family} model {number})"
    return f"{name}, {os.cpu_count()} CPUs"


def git_commit():
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--", "lib", "include",
                                "programs"]).returncode
        return out + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


class Run:
    """One invocation of a driver: the fields every line of it shares."""

    def __init__(self, driver, command=None):
        # A shell driver that records several lines sets ZN_BENCH_RUN (its start, as `date -u
        # +%Y-%m-%dT%H:%M:%SZ` prints it), so that they make one run.
        now = os.environ.get("ZN_BENCH_RUN") or \
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        if command is None:  # how this Python driver was started, from the repository's root
            prog = os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)
            command = " ".join(shlex.quote(x) for x in [prog] + sys.argv[1:])
            if prog.endswith(".py"):
                command = "python3 " + command
        self.meta = {"date": now, "run": f"{now} {driver}", "driver": driver, "machine": machine_id(),
                     "commit": git_commit(), "command": command}
        # A drop in this run that is understood and accepted (bench/gate lists it, passes it).
        if os.environ.get("ZN_BENCH_ACCEPT"):
            self.meta["accepted"] = os.environ["ZN_BENCH_ACCEPT"]
        self.driver = driver
        self.lines = []

    def add(self, corpus, op, runs, peer_runs=None, tool="znippy", peer=None, unit="s", gate=True,
            **extra):
        """One measurement: znippy's runs (and the peer's), smaller is better."""
        runs = [float(x) for x in runs]
        rec = {**self.meta, "corpus": corpus, "op": op, "tool": tool, "unit": unit,
               "value": round(min(runs), 6), "runs": [round(x, 6) for x in runs]}
        if peer is not None and peer_runs:
            peer_runs = [float(x) for x in peer_runs]
            rec.update({"peer": peer, "peer_value": round(min(peer_runs), 6),
                        "peer_runs": [round(x, 6) for x in peer_runs]})
            if rec["value"] > 0:
                rec["ratio"] = round(rec["peer_value"] / rec["value"], 4)
        if not gate:
            rec["gate"] = False
        try:
            rec["loadavg"] = round(os.getloadavg()[0], 2)
        except OSError:
            pass
        rec.update(extra)
        self.lines.append(rec)
        return rec

    def write(self):
        """Append the lines to DIR/DRIVER.jsonl; returns the file, or None when switched off."""
        d = history_dir()
        if d == "off" or not self.lines:
            return None
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"{self.driver}.jsonl")
        with open(path, "a") as f:
            for rec in self.lines:
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
        print(f"history: {len(self.lines)} lines appended to {os.path.relpath(path)}", file=sys.stderr)
        return path


def spread(runs):
    """Relative spread of a best-of-N measurement: (median - best) / best; 0 for one run."""
    if not runs or len(runs) < 2 or min(runs) <= 0:
        return 0.0
    return (statistics.median(runs) - min(runs)) / min(runs)


def load(paths):
    out = []
    for p in paths:
        with open(p) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except ValueError as e:
                        sys.exit(f"{p}:{n}: {e}")
    return out


def s_per_gb(mbps):
    return 1000.0 / mbps if mbps > 0 else float("inf")


def import_inflate(path, command):
    """bench_inflate -j: MB/s per corpus and level for znippy and the three peers. The geometric
    means are gated; a single cell moves by about 5% between runs, so the cells are not."""
    with open(path) as f:
        res = json.load(f)["results"]
    run = Run("bench_inflate", command)
    peers = {"libdeflate": "libdeflate", "isal": "isa-l", "zlib": "zlib"}
    for r in res:
        for k, name in peers.items():
            if r.get(k) and r.get("znippy"):
                run.add(f"{r['corpus']} -{r['level']}", "inflate", [s_per_gb(r["znippy"])],
                        [s_per_gb(r[k])], peer=name, unit="s/GB", gate=False)
    for k, name in peers.items():
        both = [r for r in res if r.get(k) and r.get("znippy")]
        if both:
            gz = statistics.geometric_mean([s_per_gb(r["znippy"]) for r in both])
            gp = statistics.geometric_mean([s_per_gb(r[k]) for r in both])
            run.add(f"geometric mean of {len(both)}", "inflate", [gz], [gp], peer=name, unit="s/GB")
    return run.write()


def import_checksum(path, command):
    """bench_checksum -j: each dispatched zn_ function against the other libraries' rows of the
    same algorithm, in cache (1 MiB, gated) and from memory (64 MiB, too noisy to gate)."""
    with open(path) as f:
        res = json.load(f)["results"]
    run = Run("bench_checksum", command)
    for zn in [r for r in res if r["impl"].startswith("zn_") and "dispatched" in r["impl"]]:
        for p in [r for r in res if r["algo"] == zn["algo"] and not r["impl"].startswith("zn")]:
            for size, gate in (("1MiB", True), ("64MiB", False)):
                run.add(f"{zn['algo']} {size}", "checksum", [s_per_gb(zn[f"mbps_{size}"])],
                        [s_per_gb(p[f"mbps_{size}"])], peer=p["impl"], unit="s/GB", gate=gate)
    return run.write()


def main():
    ap = argparse.ArgumentParser(description="append to or query the benchmark history")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("machine", help="print this machine's id")
    r = sub.add_parser("record", help="append one measurement (for the shell drivers)")
    r.add_argument("driver")
    r.add_argument("--command", required=True)
    r.add_argument("--corpus", required=True)
    r.add_argument("--op", required=True)
    r.add_argument("--tool", default="znippy")
    r.add_argument("--peer")
    r.add_argument("--runs", required=True, help="znippy's times, space-separated")
    r.add_argument("--peer-runs", help="the peer's times, space-separated")
    r.add_argument("--unit", default="s")
    r.add_argument("--no-gate", action="store_true")
    for name in ("inflate", "checksum"):
        i = sub.add_parser(name, help=f"append bench_{name} -j's JSON")
        i.add_argument("json")
        i.add_argument("--command", required=True)
    a = ap.parse_args()
    if a.cmd == "inflate":
        import_inflate(a.json, a.command)
        return 0
    if a.cmd == "checksum":
        import_checksum(a.json, a.command)
        return 0
    if a.cmd == "machine":
        print(machine_id())
        return 0
    run = Run(a.driver, a.command)
    run.add(a.corpus, a.op, a.runs.split(), a.peer_runs.split() if a.peer_runs else None, tool=a.tool,
            peer=a.peer, unit=a.unit, gate=not a.no_gate)
    run.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
