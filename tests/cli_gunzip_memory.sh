#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_gunzip_memory.sh - `znippy zcat -T N` from a pipe keeps its peak RSS under the bound the
# man page states, (N + 2) x 25 MiB of decoded pieces plus 1.3 MiB of input per piece and 0.5 MiB
# of decoder per thread (zn_gunzip_memory_bound), here with 24 MiB more for the program itself,
# on a stream far larger than that (about 170 MB of output from `seq`, generated and compressed
# while it is read, so nothing is at hand in advance): the pool's backpressure holds. The output
# is compared with seq's too. Peak RSS: the child's ru_maxrss (VmHWM) as getrusage reports it.
. "$(dirname "$0")/clitest_lib.sh"
cd "$T" || exit 1
N=20000000
# QUICK (a sanitizer build, where the bound is not checked): a tenth of the stream.
[ "$QUICK" = 1 ] && N=2000000
# A sanitizer's shadow memory is no part of the bound (tsan doubles the RSS or more): under one,
# only the output is checked.
rss_check() { # description, kib, bound
	# (ldd's whole output first: `ldd | grep -q` under pipefail fails when grep quits early)
	local libs
	libs=$(ldd "$Z" 2>/dev/null || true)
	if [[ $libs == *libtsan* || $libs == *libasan* ]]; then
		pass "$1: peak RSS $2 KiB (a sanitizer build: not held to the bound $3 KiB)"
	else
		check "$1: peak RSS $2 KiB within the bound $3 KiB" test "$2" -le "$3"
	fi
}
peak_kib() { # command...: runs it, prints its peak RSS in KiB; its exit status in $T/rc
	python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
open("rc", "w").write(str(rc))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
for t in 2 4; do
	kib=$(peak_kib bash -c "seq 1 $N | gzip -1 | '$Z' zcat -T$t | cmp -s - <(seq 1 $N)")
	bound=$(((t + 2) * (25 * 1024 + 1331) + (t + 1) * 512 + 24 * 1024))
	check "-T$t from a pipe: the output is seq's" test "$(cat rc)" = 0
	rss_check "-T$t from a pipe" "$kib" "$bound"
done
# The same stream from a file: decoded input is dropped every 64 MiB (the file is mapped), so
# the bound is the same plus 64 MiB and the chunks' look at their input.
seq 1 $N | gzip -1 >big.gz
kib=$(peak_kib bash -c "'$Z' zcat -T2 big.gz | cmp -s - <(seq 1 $N)")
bound=$((4 * 25 * 1024 + 3 * 512 + 24 * 1024 + 80 * 1024))
check "-T2 from a file: the output is seq's" test "$(cat rc)" = 0
rss_check "-T2 from a file" "$kib" "$bound"
finish
