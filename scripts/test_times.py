#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_times.py - the CPU time of each CTest test, for finding what makes `make test` slow.

ctest reports wall seconds only, which on a shared or loaded machine say little. This runs the
tests ctest would run (the same selection: the arguments after BUILD_DIR go to `ctest
--show-only=json-v1`, such as -L threads or -LE '^sweep$'), JOBS at a time, each with its
command, environment and working directory from ctest, and takes each one's user and system CPU
seconds from wait4() (its own and its waited-for children's). It prints them sorted by CPU, the
total, and the wall time a 2-core machine would need at best (total / 2). Failures are listed
(the output of a failing test is not kept: rerun it with ctest).

Usage: scripts/test_times.py [-j JOBS] [--top N] BUILD_DIR [CTEST SELECTION ARGS...]
Set the environment of the configuration measured first (scripts/run_tests.sh sets TMPDIR,
ZN_TEST_TMP, ZN_TEST_QUICK, the sanitizers' options), e.g.
  TMPDIR=/dev/shm ZN_TEST_TMP=/dev/shm scripts/test_times.py build -LE '^sweep$'
"""
import argparse
import json
import os
import subprocess
import sys
import time


def tests_of(build, select):
    out = subprocess.run(["ctest", "--show-only=json-v1", *select], cwd=build, capture_output=True,
                         text=True, check=True).stdout
    for t in json.loads(out)["tests"]:
        env, cwd = {}, build
        for p in t.get("properties", []):
            if p["name"] == "ENVIRONMENT":
                env.update(x.split("=", 1) for x in p["value"])
            elif p["name"] == "WORKING_DIRECTORY":
                cwd = p["value"]
        yield t["name"], t["command"], env, cwd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--top", type=int, default=0, help="print only the N most expensive tests")
    ap.add_argument("build")
    ap.add_argument("select", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    todo = list(tests_of(os.path.abspath(a.build), a.select))
    running, done = {}, []
    start = time.monotonic()
    while todo or running:
        while todo and len(running) < a.jobs:
            name, cmd, env, cwd = todo.pop(0)
            p = subprocess.Popen(cmd, cwd=cwd, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            running[p.pid] = (name, time.monotonic())
        pid, status, ru = os.wait4(-1, 0)
        if pid not in running:
            continue
        name, t0 = running.pop(pid)
        done.append((ru.ru_utime + ru.ru_stime, ru.ru_utime, ru.ru_stime, time.monotonic() - t0, name,
                     os.waitstatus_to_exitcode(status)))
    done.sort(reverse=True)
    total = sum(d[0] for d in done)
    print(f"{'cpu s':>8} {'user':>8} {'sys':>8} {'wall s':>8}  test")
    for cpu, user, sys_, wall, name, rc in done[:a.top or None]:
        print(f"{cpu:8.2f} {user:8.2f} {sys_:8.2f} {wall:8.2f}  {name}{'' if rc == 0 else f'  FAILED ({rc})'}")
    print(f"{total:8.2f} CPU s in {len(done)} tests, {time.monotonic() - start:.1f} s wall with -j{a.jobs}; "
          f"at best {total / 2:.1f} s on 2 cores")
    failed = [d[4] for d in done if d[5] != 0]
    if failed:
        print("failed: " + " ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
