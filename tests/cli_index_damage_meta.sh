#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_index_damage_meta.sh - index damage that costs rows their mode or owner: extract gives new
# files and directories safe defaults, existing directories keep their own.
. "$(dirname "$0")/clitest_lib.sh"

L=$T/lost && mkdir -p "$L"
# owners, set-id files and 0750 directories: so that those columns are many index pages long.
scattered_tree() { # dir seed count modes|owners
	python3 - "$@" <<'PY'
import os, random, sys
top, seed, count, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
random.seed(seed)
for i in range(count):
    d = os.path.join(top, "d%04d" % i)
    os.makedirs(d)
    with open(d + "/f", "w") as f:
        f.write("x")
    if kind == "modes":
        os.chmod(d + "/f", random.randrange(0o400, 0o1000))
        os.chmod(d, random.randrange(0o700, 0o1000))
        continue
    for p, m in ((d + "/f", 0o4755), (d, 0o750)):
        os.chown(p, random.randrange(1000, 60000), random.randrange(1000, 60000))
        os.chmod(p, m)
PY
}
# the paths the last command named as having lost WHAT (mode, owner, time)
lost_paths() { sed -n "s/^znippy: \(.*\): index damaged: its $1 cannot be read\$/\1/p" "$T/stderr"; }
# Modes lost: a new directory gets 0755 and a file 0644 (less the umask, here none), an existing
# directory keeps its own.
scattered_tree "$L/md" 7 3000 modes
"$Z" create -q -o "$L/m.zn" -C "$L/md" . && flip_page "$L/m.zn" 4 "$L/mm.zn"
code 1 "modes lost to index damage: extract (umask 000)" \
	sh -c 'umask 000 && exec "$@"' sh "$Z" extract "$L/mm.zn" -C "$L/mx"
lost_paths mode >"$L/lostm.txt"
check "...named for files and directories alike" test "$(grep -c /f "$L/lostm.txt")" -gt 0 -a \
	"$(grep -vc /f "$L/lostm.txt")" -gt 0
check "...new directories 0755, files 0644" \
	test "$(cd "$L/mx" && xargs -d '\n' stat -c '%n %a' <"$L/lostm.txt" | grep -cv '/f 644$\|^d[0-9]* 755$')" -eq 0
(mkdir -p "$L/my" && cd "$L/my" && mkdir $(cd "$L/md" && echo d*) && chmod 0700 d*)
code 1 "...extract over existing directories" "$Z" extract "$L/mm.zn" -C "$L/my"
check "...which keep their own mode" \
	test "$(cd "$L/my" && grep -v /f "$L/lostm.txt" | xargs -d '\n' stat -c '%a' | sort -u)" = 700
# times lost, --no-overwrite-dir: existing directories were to get the archive's times, so the
# ones whose times were lost are named (exit 1)
flip_page "$L/m.zn" 11 "$L/mt.zn"
code 1 "times lost, existing directories, --no-overwrite-dir" "$Z" extract "$L/mt.zn" -C "$L/my" --no-overwrite-dir --exclude f
check "...named, directories among them" grep -q '^znippy: d[0-9]*: index damaged: its time cannot be read$' "$T/stderr"
if [ "$(id -u)" -eq 0 ]; then
	# Owner ids lost: what is left to root has no set-id bit, and an existing directory keeps its
	# owner (and gets its stored mode).
	scattered_tree "$L/own" 6 1500 owners
	"$Z" create -q -o "$L/o.zn" -C "$L/own" . && flip_page "$L/o.zn" 5 "$L/u.zn"
	(mkdir -p "$L/u" && cd "$L/u" && mkdir $(cd "$L/own" && echo d*) && chown 4321:4321 d* && chmod 0700 d*)
	code 1 "owners lost to index damage: extract as root" "$Z" extract "$L/u.zn" -C "$L/u"
	lost_paths owner >"$L/lost.txt"
	check "...lost for files and directories alike" test "$(grep -c /f "$L/lost.txt")" -gt 0 -a \
		"$(grep -vc /f "$L/lost.txt")" -gt 0
	check "...a set-id file among them is left to root, without its set-id bit; a directory keeps its owner" \
		test "$(cd "$L/u" && xargs -d '\n' stat -c '%n %u %a' <"$L/lost.txt" | grep -cv '/f 0 755$\|^d[0-9]* 4321 750$')" -eq 0
fi

finish
