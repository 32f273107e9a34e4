#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_digest_min.sh - create --digest-min-size: files below it have no stored SHA-256 (format
# version 2), yet list --json gives every file's, equal to sha256sum's; 0 writes version 1 with
# the same digests; verify and extract pass, and a damaged byte of a small file is still named.
. "$(dirname "$0")/clitest_lib.sh"

D=$T/dm
mkdir -p "$D/src/a" "$D/src/b"
for i in $(seq 200); do printf '%s' "$(printf 'tiny %d' "$i" | sha1sum | cut -c1-$((32 + i % 9)))" >"$D/src/a/f$i.sha1"; done
head -c 1023 /dev/urandom >"$D/src/b/just-below"
head -c 1024 /dev/urandom >"$D/src/b/at"
seq 1 40000 >"$D/src/b/spans-blocks" # over the 64K chunk below
: >"$D/src/b/empty"
head -c 37 /dev/urandom >"$D/src/b/small.jar" # a stored block: its bytes lie in the archive as they are
ln "$D/src/a/f1.sha1" "$D/src/hardlink"

# The digests of every regular file (hardlinks once: as their first path), "path sum" sorted.
sums_of_tree() { (cd "$D/src" && find . -type f -links 1 -printf '%P\n' | sort | while read -r p; do
	printf '%s %s\n' "$p" "$(sha256sum <"$p" | cut -c1-64)"; done; printf 'a/f1.sha1 %s\n' \
	"$(sha256sum <a/f1.sha1 | cut -c1-64)") | sort; }
sums_of_list() { "$Z" list --json "$1" | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if r["type"] == "file":
        print(r["path"], r["sha256"])' | sort; }
sums_of_tree >"$D/want"

code 0 "create with the default --digest-min-size" "$Z" create -q --chunk-size 64K -o "$D/v2.zn" -C "$D/src" .
check "...is format version 2" grep -qx 'format version:   2' <("$Z" info "$D/v2.zn")
check "...and info says which files have digests" \
	grep -q '^digest: *sha256 of files of 1024 bytes and more' <("$Z" info "$D/v2.zn")
sums_of_list "$D/v2.zn" >"$D/got2"
check "list --json gives every file's SHA-256, as sha256sum" cmp "$D/want" "$D/got2"
code 0 "create --digest-min-size 0" "$Z" create -q --digest-min-size 0 --chunk-size 64K -o "$D/v1.zn" -C "$D/src" .
check "...is format version 1" grep -qx 'format version:   1' <("$Z" info "$D/v1.zn")
check "...with the same digests in list --json" cmp "$D/want" <(sums_of_list "$D/v1.zn")
check "...and the larger archive" test "$(stat -c %s "$D/v1.zn")" -gt "$(stat -c %s "$D/v2.zn")"
code 0 "create --digest-min-size 2K" "$Z" create -q --digest-min-size 2K -o "$D/k2.zn" -C "$D/src" .
check "...says 2048" grep -q '^digest: *sha256 of files of 2048 bytes' <("$Z" info "$D/k2.zn")
code 2 "--digest-min-size of a non-number" "$Z" create -q --digest-min-size lots -o "$D/x.zn" -C "$D/src" .
check "...says so" grep -q "invalid digest minimum size 'lots'" "$T/stderr"
code 0 "--digest none" "$Z" create -q --digest none -o "$D/nd.zn" -C "$D/src" .
check "...is version 2 (a smaller index) without digests" \
	test "$("$Z" info "$D/nd.zn" | grep -E '^(format version|digest):' | tr -s ' ' | tr '\n' ' ')" = "format version: 2 digest: none "
check "...and list --json without sha256" test "$("$Z" list --json "$D/nd.zn" | grep -c sha256)" -eq 0
for a in v2 v1 k2; do
	code 0 "verify $a" "$Z" verify -q "$D/$a.zn"
	code 0 "extract --check-digest $a" "$Z" extract -q --check-digest "$D/$a.zn" -C "$D/x$a"
	check "...the tree as it was" diff -r "$D/src" "$D/x$a"
done
check "cat of a file without a stored digest" cmp "$D/src/a/f7.sha1" <("$Z" cat "$D/v2.zn" a/f7.sha1)

# A flipped byte in the middle of small.jar's 37 bytes, in the stored block that holds them.
python3 - "$D/v2.zn" "$D/src/b/small.jar" "$D/bad.zn" <<'PY'
import sys
a = bytearray(open(sys.argv[1], "rb").read())
c = open(sys.argv[2], "rb").read()
at = a.find(c)
assert at > 0 and a.find(c, at + 1) < 0
a[at + 18] ^= 0x20
open(sys.argv[3], "wb").write(a)
PY
code 1 "verify of a damaged small file without a stored digest" "$Z" verify "$D/bad.zn"
check "...names it" grep -q 'b/small.jar' "$T/stderr"
code 1 "extract of it" "$Z" extract -q "$D/bad.zn" -C "$D/xbad"
check "...leaves it out" test ! -e "$D/xbad/b/small.jar"
code 1 "list --json of it" "$Z" list --json "$D/bad.zn" b/small.jar
check "...says its digest cannot be computed" grep -q 'its digest cannot be computed' "$T/stderr"
check "...and gives none" test "$("$Z" list --json "$D/bad.zn" b/small.jar 2>/dev/null | grep -c sha256)" -eq 0

finish
