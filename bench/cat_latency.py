# SPDX-License-Identifier: MIT
# cat_latency.py - median latency of `znippy cat` for 20 files spread over an archive of each corpus.
# Appends each corpus's per-file medians (and the process start beside them, a reference that
# bench/gate passes over) to bench/history/cat_latency.jsonl.
import subprocess, time, os, statistics
import sys; Z="build/znippy"; C=sys.argv[1] if len(sys.argv) > 1 else "bench/corpora"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history  # noqa: E402
run = history.Run("cat_latency")
def catmed(arch, paths, reps=15):
    res=[]
    for p in paths:
        ts=[]
        for _ in range(reps):
            t=time.perf_counter(); subprocess.run([Z,"cat",arch,p],stdout=subprocess.DEVNULL,check=True); ts.append(time.perf_counter()-t)
        res.append(statistics.median(ts)*1000)
    return res
print("load", os.getloadavg())
for corp in ["small","src"]:
    arch=f"/dev/shm/{corp}.zn"
    subprocess.run(f"{Z} create -q -T2 -o {arch} -C {C} {corp}", shell=True, check=True)
    files=[l for l in subprocess.run([Z,"list","--json",arch],capture_output=True,text=True).stdout.splitlines() if '"type":"file"' in l]
    import json
    names=[json.loads(l)["path"] for l in files]
    pick=[names[i*len(names)//20] for i in range(20)]
    m=catmed(arch,pick)
    base=[]
    for _ in range(15):
        t=time.perf_counter(); subprocess.run([Z,"--version"],stdout=subprocess.DEVNULL); base.append(time.perf_counter()-t)
    print(f"{corp}: cat of 20 files spread over the archive: median {statistics.median(m):.2f} ms, min {min(m):.2f}, max {max(m):.2f}; process start (znippy --version) {statistics.median(base)*1000:.2f} ms")
    run.add(corp, "cat", m, [x * 1000 for x in base], peer="znippy --version", unit="ms", gate=False,
            median_ms=round(statistics.median(m), 3))
    os.remove(arch)
print("load", os.getloadavg())
run.write()
