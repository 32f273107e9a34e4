# quick_compare.py - znippy vs tar|zstd (create, extract to tmpfs, size) and vs cp (random), best of 3.
import subprocess, time, os
Z="build/znippy"; import sys; C=sys.argv[1] if len(sys.argv) > 1 else "bench/corpora"
def best(cmd, n=3, pre=None):
    b=1e9
    for _ in range(n):
        if pre: subprocess.run(pre, shell=True)
        t=time.perf_counter(); subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); b=min(b,time.perf_counter()-t)
    return b
print("load", os.getloadavg())
for corp in ["src","small"]:
    zc=best(f"{Z} create -q -T2 -o /dev/shm/c.zn -C {C} {corp}")
    tc=best(f"tar -cf - -C {C} {corp} | zstd -T0 -3 -q -f -o /dev/shm/c.tzst")
    zx=best(f"{Z} extract -q -T2 /dev/shm/c.zn -C /dev/shm/xo", pre="rm -rf /dev/shm/xo")
    tx=best(f"zstd -dc /dev/shm/c.tzst | tar -xf - -C /dev/shm/xo", pre="rm -rf /dev/shm/xo; mkdir -p /dev/shm/xo")
    zs=os.path.getsize("/dev/shm/c.zn"); ts=os.path.getsize("/dev/shm/c.tzst")
    print(f"{corp}: create znippy {zc:.3f}s tar|zstd {tc:.3f}s -> {tc/zc:.2f}x; extract tmpfs znippy {zx:.3f}s zstd|tar {tx:.3f}s -> {tx/zx:.2f}x; size {zs/ts:.3f}x")
R=f"{C}/random/random.bin"
zr=best(f"{Z} create -q -T2 -o /dev/shm/r.zn {R}"); cr=best(f"cp {R} /dev/shm/r.copy", pre="rm -f /dev/shm/r.copy")
print(f"random: create znippy {zr:.3f}s cp {cr:.3f}s -> znippy speed / cp speed {cr/zr:.2f}")
subprocess.run("rm -rf /dev/shm/xo /dev/shm/r.zn /dev/shm/r.copy /dev/shm/c.zn /dev/shm/c.tzst", shell=True)
print("load", os.getloadavg())
