#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_index_damage.sh - index damage that costs rows only their time or digest: verify, extract,
# list, info and cat name the rows and still read everything else.
. "$(dirname "$0")/clitest_lib.sh"

# ---- index damage that costs rows only their mode, owner or time: listed, named, still extracted --------------
L=$T/lost
mkdir -p "$L/src/dir"
python3 - "$L/src/dir" <<'PY'
import os, random, sys
random.seed(5)
for i in range(3000):  # scattered times: the mtime column is stored raw, several index pages long
    p = os.path.join(sys.argv[1], "f%05d" % i)
    with open(p, "w") as f:
        f.write("file %d\n" % i)
    t = random.randrange(10**17, 10**18)
    os.utime(p, ns=(t, t))
PY
touch -d @1500000000 "$L/src/dir"
"$Z" create -q -o "$L/a.zn" -C "$L/src" dir
flip_page "$L/a.zn" 11 "$L/t.zn"
code 1 "times lost to index damage: verify" "$Z" verify "$L/t.zn"
nt=$(grep -c '^znippy: dir/f[0-9]*: index damaged: its time cannot be read$' "$T/stderr")
check "...names each such file by its path ($nt)" test "$nt" -gt 0 -a "$nt" -lt 3000
code 1 "...extract" "$Z" extract "$L/t.zn" -C "$L/x"
check "...names the same files" test "$(grep -c ': index damaged: its time cannot be read$' "$T/stderr")" -eq "$nt"
check "...and extracts every file, the content right" diff -r "$L/src" "$L/x"
check "...those files with the time of the extraction, the others with their own" \
	test "$(find "$L/x/dir" -type f -newer "$L/t.zn" | wc -l)" -eq "$nt" -a \
	"$(find "$L/x/dir" -type f -newermt @100000000 ! -newermt @1000000000 | wc -l)" -eq $((3000 - nt))
lostone=$(grep -m1 ': index damaged: its time' "$T/stderr" | sed 's/^znippy: //; s/: index damaged.*//')
code 1 "...a PATTERN naming one extracts it" "$Z" extract "$L/t.zn" -C "$L/y" "$lostone"
check "...and nothing else" test "$(cd "$L/y" && find . -type f)" = "./$lostone"
code 0 "...--exclude leaves them out, untouched" "$Z" extract "$L/t.zn" -C "$L/z" --exclude 'f0*'
check "...(nothing extracted)" test -z "$(find "$L/z" -type f)"
code 1 "...list" "$Z" list "$L/t.zn"
check "...lists every path" test "$("$Z" list "$L/t.zn" 2>/dev/null | wc -l)" -eq 3001
check "...and says how many lost what, once" \
	test "$(cat "$T/stderr")" = "znippy: $L/t.zn: index damaged: $nt entries listed without the mode, owner, time or digest the index lost"
check "...list -l shows '?' for their times" \
	test "$("$Z" list -l "$L/t.zn" 2>/dev/null | grep -c '????-??-?? ??:?? dir/')" -eq "$nt"
check "...list --json leaves their times out" \
	test "$("$Z" list --json "$L/t.zn" 2>/dev/null | grep -vc mtime)" -eq "$nt"
# the same for the digest column (15, raw): the content is still checked by its blocks' XXH3
flip_page "$L/a.zn" 15 "$L/d.zn"
code 1 "digests lost to index damage: verify" "$Z" verify "$L/d.zn"
nd=$(grep -c '^znippy: dir/f[0-9]*: index damaged: its digest cannot be read$' "$T/stderr")
check "...names each such file by its path ($nd)" test "$nd" -gt 0 -a "$nd" -lt 3000
code 1 "...extract" "$Z" extract "$L/d.zn" -C "$L/xd"
check "...names the same files" \
	test "$(grep -c ': index damaged: its digest cannot be read$' "$T/stderr")" -eq "$nd"
check "...and extracts every file, the content right" diff -r "$L/src" "$L/xd"
code 1 "...extract --check-digest" "$Z" extract --check-digest "$L/d.zn" -C "$L/xc"
check "...leaves exactly those files out, as damaged" \
	test "$(find "$L/xc" -type f | wc -l)" -eq $((3000 - nd)) -a \
	"$(grep -c ': damaged in the archive; not extracted$' "$T/stderr")" -eq "$nd"
code 1 "...list" "$Z" list "$L/d.zn"
check "...lists every path" test "$("$Z" list "$L/d.zn" 2>/dev/null | wc -l)" -eq 3001
check "...list --json leaves their digests out (and the directory has none)" \
	test "$("$Z" list --json "$L/d.zn" 2>/dev/null | grep -vc sha256)" -eq $((nd + 1))
lostd=$("$Z" verify "$L/d.zn" 2>&1 | grep -m1 ': index damaged: its digest' | sed 's/^znippy: //; s/: index damaged.*//')
code 1 "...info checks the index pages" "$Z" info "$L/d.zn"
check "...and names the damage" grep -q "d.zn: index damaged: 1 of its [0-9]* pages do not match" "$T/stderr"
code 0 "...info of the undamaged archive" "$Z" info "$L/a.zn"
code 1 "...cat refuses such a file, saying why" "$Z" cat "$L/d.zn" "$lostd"
check "...(its digest cannot be read)" \
	test "$(cat "$T/stderr")" = "znippy: $lostd: index damaged: its digest cannot be read"
# COUNT directories d0000.. under DIR, each holding a file f, with scattered modes or (as root)

finish
