#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_permissions.sh - the command as a user without privileges (uid 65534 when run as root):
# unreadable inputs, archives replaced, read-only and in sticky directories, directories that may
# only be searched or written, umasks and set-id bits.
. "$(dirname "$0")/clitest_lib.sh"

# ---- unreadable inputs are reported, and the exit code says so ------------------------------------------
U=$T/unreadable
mkdir -p "$U" && printf 'secret\n' >"$U/secret" && printf 'public\n' >"$U/public" && chmod 000 "$U/secret"
unpriv_setup
if [ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null; then
	run_unpriv "$T/znippy-unpriv" create -q -o "$T/u.zn" "$U" >/dev/null 2>"$T/stderr"
	check "unreadable input: exit 3" test $? -eq 3
	check "unreadable input named" grep -q 'secret' "$T/stderr"
	check "readable input stored" test "$("$Z" cat "$T/u.zn" "${U#/}/public")" = public
	mkdir -p "$U/closed" && echo x >"$U/closed/f" && chmod 000 "$U/closed" && chmod 600 "$U/secret"
	chown 65534 "$U/secret"
	run_unpriv "$T/znippy-unpriv" create -q -o "$T/u2.zn" "$U" >/dev/null 2>"$T/stderr"
	check "a directory that cannot be read: exit 3, named" grep -q "closed: cannot open directory; not stored" "$T/stderr"
	check "...and left out, as tar leaves it out, not stored empty" \
		test "$("$Z" list "$T/u2.zn" | grep -c closed)" = 0 -a "$("$Z" list "$T/u2.zn" | grep -c secret)" = 1
	chmod 700 "$U/closed"
	# Many small files, some unreadable, some empty (read in the batch too, to know they can
	# be opened): the crew's reads (several threads) and the producer's alone (one) give the
	# same archive and the same reports.
	mkdir -p "$U/many" && for i in $(seq 60); do printf 'file %d\n' "$i" >"$U/many/f$i"; done
	: >"$U/many/f20" && : >"$U/many/f40" && : >"$U/many/f41"
	mkdir "$U/many/zz" && chmod 000 "$U/many/f7" "$U/many/f14" "$U/many/f40" "$U/many/f53" "$U/many/zz"
	run_unpriv "$T/znippy-unpriv" create -q -T4 -o "$T/m4.zn" -C "$U" many >/dev/null 2>"$T/stderr"
	check "unreadable among many, 4 threads: exit 3" test $? -eq 3
	check "...each named once (an empty one too)" test "$(grep -c 'cannot open; not stored' "$T/stderr")" = 4
	check "...in path order (the files read in a batch before the directory after them)" \
		test "$(grep -o 'many/[a-z0-9]*' "$T/stderr" | tr '\n' ' ')" = "many/f14 many/f40 many/f53 many/f7 many/zz "
	check "...the others stored" test "$("$Z" list "$T/m4.zn" | wc -l)" = 57 -a \
		"$("$Z" cat "$T/m4.zn" many/f60)" = "file 60"
	check "...the empty ones empty" test "$("$Z" list -l "$T/m4.zn" many/f20 many/f41 | awk '{s += $3} END {print NR, s}')" = "2 0"
	run_unpriv "$T/znippy-unpriv" create -q -T1 -o "$T/m1.zn" -C "$U" many >/dev/null 2>&1
	check "...the same archive with 1 thread" cmp -s "$T/m1.zn" "$T/m4.zn"
fi

# ---- an archive replaced by a new one keeps its mode; read-only ones and sticky directories ----------------
W=$T/over
mkdir -p "$W/in" && printf 'x\n' >"$W/in/x"
printf 'old\n' >"$W/private.zn" && chmod 600 "$W/private.zn"
"$Z" create -q -o "$W/private.zn" -C "$W" in
check "a replaced archive keeps its mode (0600 stays private)" test "$(stat -c %a "$W/private.zn")" = 600
check "...and is the new archive" test "$("$Z" cat "$W/private.zn" in/x)" = x
if [ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null; then
	mkdir -m 1777 "$W/sticky" && chmod 755 "$W"
	printf 'old\n' >"$W/sticky/theirs.zn" && chmod 666 "$W/sticky/theirs.zn"
	if [ "$(id -u)" -eq 0 ]; then # the file is root's, the writer uid 65534
		run_unpriv "$T/znippy-unpriv" create -q -o "$W/sticky/theirs.zn" -C "$W" in 2>"$T/stderr"
		check "another user's file in a sticky directory is written in place" \
			test "$("$Z" cat "$W/sticky/theirs.zn" in/x)" = x
		check "...and stays theirs" test "$(stat -c %u "$W/sticky/theirs.zn")" = 0
	fi
	mkdir -m 777 "$W/ro" && printf 'old\n' >"$W/ro/ro.zn" && chmod 444 "$W/ro/ro.zn"
	chown 65534 "$W/ro/ro.zn" 2>/dev/null
	code 3 "a read-only archive is not replaced (as tar)" run_unpriv "$T/znippy-unpriv" create -q \
		-o "$W/ro/ro.zn" -C "$W" in
	check "...says why" grep -q "ro.zn: cannot open: Permission denied" "$T/stderr"
	check "...and is left alone" test "$(cat "$W/ro/ro.zn")" = old
	mkdir -m 777 "$W/again"
	run_unpriv sh -c 'mkdir -p "$1/src/ro" && echo one >"$1/src/ro/f" && chmod 555 "$1/src/ro" &&
		"$2" create -q -o "$1/a.zn" -C "$1" src && "$2" extract -q "$1/a.zn" -C "$1/x"' \
		- "$W/again" "$T/znippy-unpriv"
	code 0 "extract --overwrite again into a read-only directory it made" \
		run_unpriv "$T/znippy-unpriv" extract -q --overwrite "$W/again/a.zn" -C "$W/again/x"
	check "...which keeps its mode" test "$(stat -c %a "$W/again/x/src/ro")" = 555
	mkdir -p "$W/perm/s/d" "$W/perm/x/d" && printf 'new\n' >"$W/perm/s/d/f" && printf 'old\n' >"$W/perm/x/d/f"
	chmod 666 "$W/perm/x/d/f" && "$Z" create -q -o "$W/perm/a.zn" -C "$W/perm/s" d
	code 3 "--overwrite where the old file cannot be removed" \
		run_unpriv "$T/znippy-unpriv" extract -q --overwrite "$W/perm/a.zn" -C "$W/perm/x"
	check "...says why (and that it is kept), not to use --overwrite" grep -q \
		"d/f: not replaced (the old file is kept): cannot create the new one beside it: Permission denied" \
		"$T/stderr"
	# Directories a user may pass through but not read, as tar handles them.
	N=$W/noread && mkdir -p "$N/home/pub" "$N/out" && echo pub >"$N/home/pub/f" && chmod 711 "$N/home"
	chmod 777 "$N/out"
	code 0 "create of a PATH below a directory this user may only search (0711)" \
		run_unpriv "$T/znippy-unpriv" create -q -o "$N/out/a.zn" "$N/home/pub"
	check "...stores it" test "$("$Z" cat "$N/out/a.zn" "${N#/}/home/pub/f")" = pub
	mkdir -p "$N/out/wx/home" && chown -R 65534 "$N/out/wx" && chmod 300 "$N/out/wx" "$N/out/wx/home"
	strip=$(($(printf '%s' "${N#/}" | tr -cd / | wc -c) + 1)) # the parts of $N, stored with pub
	code 0 "extract into existing directories this user may write but not read (0300)" \
		run_unpriv "$T/znippy-unpriv" extract -q --strip-components $strip "$N/out/a.zn" -C "$N/out/wx"
	chmod 700 "$N/out/wx" "$N/out/wx/home"
	check "...writes the file" test "$(cat "$N/out/wx/home/pub/f")" = pub
	run_unpriv sh -c 'chmod u+w "$1/x/src/ro" && rm "$1/x/src/ro/f" && chmod 515 "$1/x/src/ro"' - "$W/again"
	code 0 "extract --skip-old-files of a file missing from a read-only directory it made" \
		run_unpriv "$T/znippy-unpriv" extract -q --skip-old-files "$W/again/a.zn" -C "$W/again/x"
	check "...writes it, and the directory keeps its own mode" \
		test "$(cat "$W/again/x/src/ro/f") $(stat -c %a "$W/again/x/src/ro")" = "one 515"
	mkdir -p "$N/um/s/sticky" && echo x >"$N/um/s/w" && chmod 666 "$N/um/s/w" && chmod 1777 "$N/um/s/sticky"
	"$Z" create -q -o "$N/um.zn" -C "$N/um" s && chmod 777 "$N/um"
	code 0 "extract by a user with umask 027" run_unpriv sh -c 'umask 027 && "$1" extract "$2" -C "$3"' - \
		"$T/znippy-unpriv" "$N/um.zn" "$N/um/o"
	check "...takes the umask off and drops the sticky bit, as tar" \
		test "$(stat -c %a "$N/um/o/s/w" "$N/um/o/s/sticky" | tr '\n' ' ')" = "640 750 "
	code 0 "extract -p by a user with umask 027" run_unpriv sh -c 'umask 027 && "$1" extract -p "$2" -C "$3"' - \
		"$T/znippy-unpriv" "$N/um.zn" "$N/um/p"
	check "...keeps the modes as stored" \
		test "$(stat -c %a "$N/um/p/s/w" "$N/um/p/s/sticky" | tr '\n' ' ')" = "666 1777 "
	mkdir -m 2777 "$N/um/sg" && chmod 2777 "$N/um/sg"
	code 0 "extract by a user into a setgid directory" run_unpriv sh -c 'umask 022 && "$1" extract "$2" -C "$3"' - \
		"$T/znippy-unpriv" "$N/um.zn" "$N/um/sg"
	check "...a new directory keeps the setgid bit it inherits, as with tar" test "$(stat -c %a "$N/um/sg/s")" = 2755
	mkdir -p "$N/dfu/t" && echo a >"$N/dfu/t/a" && echo b >"$N/dfu/t/b" && chmod 600 "$N/dfu/t/a"
	"$Z" create -q -o "$N/dfu.zn" -C "$N/dfu" t && chmod 755 "$N/dfu" && chmod 644 "$N/dfu.zn"
	run_unpriv "$T/znippy-unpriv" diff "$N/dfu.zn" -C "$N/dfu" >"$T/stdout" 2>"$T/stderr"
	check "diff of a file this user may not read: an error (exit 3), not a difference" \
		test $? -eq 3 -a ! -s "$T/stdout" -a "$(grep -c "t/a: cannot open: Permission denied" "$T/stderr")" = 1
	mkdir -m 700 "$N/locked"
	if [ "$(id -u)" -eq 0 ]; then # started in root's 0700 directory, as uid 65534
		code 0 "create -C run from a directory this user may not even search (as tar)" sh -c 'cd "$1" &&
			exec setpriv --reuid=65534 --regid=65534 --clear-groups "$2" create -q -o "$3" -C "$4" pub' \
			- "$N/locked" "$T/znippy-unpriv" "$N/out/l.zn" "$N/home"
		check "...keeps the archive" test "$("$Z" cat "$N/out/l.zn" pub/f)" = pub
	fi
	mkdir -p "$N/root/t" && chmod 777 "$N/root" "$N/root/t" && echo x >"$N/root/t/x"
	"$Z" create -q -o "$N/root.zn" -C "$N/root" t && mkdir "$N/root/into"
	mkdir -m 777 "$N/root/into/t" && chown 65534 "$N/root/into"
	code 0 "extract into another user's existing directory" \
		run_unpriv sh -c 'umask 022 && "$1" extract "$2" -C "$3"' - "$T/znippy-unpriv" "$N/root.zn" "$N/root/into"
	check "...says it kept its mode and time" \
		grep -q "t: directory kept its mode and time: Operation not permitted" "$T/stderr"
fi

finish
