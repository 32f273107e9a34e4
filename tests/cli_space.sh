#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_space.sh - extract refuses, before writing anything, an archive that expands to more than
# the target's file system has free (red-team finding 4 of issue 30: a 10 kB archive of identical
# files wrote 2.1 GB), unless --force; info shows the expanded size. The free space is a test
# hook's (ZN_TEST_STATVFS=BYTES,INODES); as root, a 1 MiB tmpfs too.
. "$(dirname "$0")/clitest_lib.sh"

# 20 identical files of 100,000 random bytes: an archive of about 100 kB that expands to 2 MB.
B=$T/bomb
mkdir -p "$B/in"
head -c 100000 /dev/urandom >"$B/in/f00"
for i in $(seq -w 1 19); do cp "$B/in/f00" "$B/in/f$i"; done
code 0 "create" "$Z" create -q -o "$B/b.zn" -C "$B" in
check "the archive is small" test "$(stat -c %s "$B/b.zn")" -lt 150000
check "info: expanded bytes" grep -qx 'expanded bytes:   2000000 (what extract writes: identical files each time)' \
	<("$Z" info "$B/b.zn")

# ---- the free space said by the hook --------------------------------------------------------------------
ZN_TEST_STATVFS=1999999,1000 "$Z" extract -C "$B/out" "$B/b.zn" >/dev/null 2>"$T/stderr"
check "one byte short: exit 3" test $? -eq 3
check "...named: the archive, the target, the numbers, --force" grep -qF \
	"$B/b.zn: extracting into $B/out: not enough free space: the archive expands to 2.0 MB (2000000 bytes in 20 files) and the file system there has 2.0 MB free (1999999 bytes); nothing extracted (--force extracts anyway)" \
	"$T/stderr"
check "...one line" test "$(wc -l <"$T/stderr")" = 1
check "...nothing written, not even the target directory" test ! -e "$B/out"
mkdir "$B/out"
ZN_TEST_STATVFS=1999999,1000 "$Z" extract -C "$B/out" "$B/b.zn" >/dev/null 2>&1
check "...into an existing directory: nothing in it" test -z "$(ls -A "$B/out")"
code 0 "exactly enough: extracted" env ZN_TEST_STATVFS=2000000,21 "$Z" extract -C "$B/out2" "$B/b.zn"
check "...whole" diff -r "$B/in" "$B/out2/in"
code 0 "--force: extracted anyway" env ZN_TEST_STATVFS=1000,1000 "$Z" extract --force -C "$B/out3" "$B/b.zn"
check "...whole" diff -r "$B/in" "$B/out3/in"
code 0 "only what is selected counts" env ZN_TEST_STATVFS=100000,1000 "$Z" extract -C "$B/out4" "$B/b.zn" in/f07
check "...extracted" cmp -s "$B/in/f07" "$B/out4/in/f07"
ZN_TEST_STATVFS=100000000,20 "$Z" extract -C "$B/out5" "$B/b.zn" >/dev/null 2>"$T/stderr"
check "inodes: 21 entries where 20 are free: exit 3" test $? -eq 3
check "...named" grep -qF "not enough free inodes: the archive makes 21 entries and the file system there has 20 inodes free; nothing extracted (--force extracts anyway)" "$T/stderr"
check "...nothing written" test ! -e "$B/out5"
code 3 "-q does not silence it" env ZN_TEST_STATVFS=1000,1000 "$Z" extract -q -C "$B/out6" "$B/b.zn"
check "...said" grep -q "not enough free space" "$T/stderr"
code 0 "-O writes to standard output: not counted" env ZN_TEST_STATVFS=1000,1000 "$Z" extract -O "$B/b.zn" in/f00

# ---- a real file system of 1 MiB (tmpfs; root only) -----------------------------------------------------
M=$T/mnt
mkdir -p "$M"
trap 'umount "$M" 2>/dev/null; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=1m,nr_inodes=1000 tmpfs "$M" 2>/dev/null; then
	"$Z" extract -C "$M/x" "$B/b.zn" >/dev/null 2>"$T/stderr"
	check "tmpfs of 1 MiB: refused, exit 3" test $? -eq 3
	check "...named with its free bytes" grep -qF "the file system there has 1.0 MB free (1048576 bytes)" "$T/stderr"
	check "...nothing written" test -z "$(ls -A "$M")"
	code 3 "...--force: the disk fills (exit 3)" "$Z" extract --force -C "$M/x" "$B/b.zn"
	check "...named as a full disk" grep -q "No space left on device" "$T/stderr"
	umount "$M"
else
	echo "skip tmpfs of 1 MiB: needs root and mount (uid $(id -u))"
fi
finish
