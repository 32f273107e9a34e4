#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_metadata.sh - create's --owner, --group, --mode, --mtime against tar's and chmod's,
# list -v, create -v, --exclude-vcs, extract's owners, --exclude, -O, -m, --no-overwrite-dir, and
# diff against tar -d.
. "$(dirname "$0")/clitest_lib.sh"

# ---- --owner, --group, --mode, --mtime: as tar's; the same tree from two machines, one archive -------------------
MT=$T/meta && mkdir -p "$MT/one/t/d" "$MT/two/t/d"
for s in one two; do echo same >"$MT/$s/t/d/f" && echo exe >"$MT/$s/t/x" && ln -s d/f "$MT/$s/t/l"; done
chmod 600 "$MT/one/t/d/f" && chmod 755 "$MT/one/t/x" && chmod 700 "$MT/one/t/d"
chmod 664 "$MT/two/t/d/f" && chmod 775 "$MT/two/t/x" && chmod 2775 "$MT/two/t/d" && chown -R 1234:5678 "$MT/two/t" 2>/dev/null
touch -d 2001-01-01 "$MT/one/t/d/f" "$MT/two/t/d/f" && touch -h -d 2031-01-01 "$MT/two/t/l"
set -- --owner 0 --group 0 --numeric-owner --mode 'u+w,go-w,a+rX,g-s' --mtime @1000000000 --clamp-mtime
"$Z" create -q -o "$MT/one.zn" "$@" -C "$MT/one" t && "$Z" create -q -o "$MT/two.zn" "$@" -C "$MT/two" t
check "--owner 0 --group 0 --numeric-owner --mode --mtime --clamp-mtime: byte-identical archives" \
	test "$(stat -c %s "$MT/one.zn")" -gt 0 -a -z "$(cmp "$MT/one.zn" "$MT/two.zn" 2>&1)"
check "...with the modes chmod gives, ids and no names" test "$("$Z" list -l "$MT/one.zn" | awk '{print $1, $2}' | tr '\n' ,)" = \
	"drwxr-xr-x 0/0,drwxr-xr-x 0/0,-rw-r--r-- 0/0,lrwxr-xr-x 0/0,-rwxr-xr-x 0/0,"
check "...an older time kept, later ones clamped" test "$("$Z" list --json "$MT/one.zn" | grep -o '"mtime":"[^"]*"' | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ,)" = \
	'1"mtime":"2001-01-01T00:00:00.000000000Z",4"mtime":"2001-09-09T01:46:40.000000000Z",'
"$Z" create -q -o "$MT/n.zn" --owner joe:77 --group 0 --mtime 2020-01-02T03:04:05+02:00 -C "$MT/one" t/x
check "--owner NAME:ID, --group ID (its name here), --mtime with a zone" \
	test "$("$Z" list --json "$MT/n.zn" | grep -o '"uid":77,"gid":0,"user":"joe","group":"root".*"mtime":"2020-01-02T01:04:05.000000000Z"' | wc -l)" = 1
"$Z" create -q -o "$MT/nn.zn" --numeric-owner -C "$MT/one" t/x
check "--numeric-owner: list --json leaves the names it does not hold out" \
	test "$("$Z" list --json "$MT/nn.zn" | grep -c '"uid":0,"gid":0,"size"')" = 1
code 2 "--owner of a user unknown here, without an id" "$Z" create -q -o "$MT/e.zn" --owner no-such-user-here t
check "...says how to give one" grep -q "unknown user 'no-such-user-here' (give NAME:UID)" "$T/stderr"
# --mode against chmod itself, on files and directories with set-id bits, under two umasks
mkdir -p "$MT/cm/t" && for k in 0644 0755 2775 4711 1777 0600; do
	: >"$MT/cm/t/f$k" && mkdir "$MT/cm/t/d$k" && chmod "$k" "$MT/cm/t/f$k" "$MT/cm/t/d$k"; done
cm_ok=1
for um in 022 077; do
	for m in '=rw' '=' '755' '00755' '+644' '=644' 'u=rwx,go=' 'g=u-w' 'a+rX,go-w' 'o+t,g-s' 'ug=rwX' '=rX,+X'; do
		rm -rf "$MT/cm/c" && cp -a "$MT/cm/t" "$MT/cm/c"
		(umask "$um" && chmod -- "$m" "$MT/cm/c"/* 2>/dev/null
		 "$Z" create -q -o "$MT/cm/a.zn" --mode "$m" -C "$MT/cm/t" .) || cm_ok=0
		want=$(cd "$MT/cm/c" && for f in *; do printf '%s %04o,' "$f" "0$(stat -c %a "$f")"; done)
		got=$("$Z" list --json "$MT/cm/a.zn" | sed 's/.*"path":"\([^"]*\)".*"mode":"\([0-7]*\)".*/\1 \2/' |
			while read -r f md; do printf '%s %04o,' "$f" "0$md"; done)
		[ "$want" = "$got" ] || { cm_ok=0; echo "umask $um --mode '$m': chmod $want, znippy $got"; }
	done
done
check "--mode gives what chmod gives (umask, directories' set-id bits, octal forms)" test "$cm_ok" = 1
"$Z" create -v -o "$MT/v.zn" -C "$MT/one" t >"$MT/v.out" 2>"$MT/v.err"
check "list -v is list -l, as tar -tv" test "$("$Z" list -v "$MT/v.zn" 2>&1)" = "$("$Z" list -l "$MT/v.zn")"
check "create -v lists what list lists" test -s "$MT/v.out" -a "$(cat "$MT/v.out")" = "$("$Z" list "$MT/v.zn")" -a ! -s "$MT/v.err"
"$Z" create -v -o - -C "$MT/one" t >"$MT/v2.zn" 2>"$MT/v2.err"
check "...on stderr with -o -, the archive alone on stdout" test "$(cat "$MT/v2.err")" = "$(cat "$MT/v.out")" -a \
	"$("$Z" list "$MT/v2.zn")" = "$(cat "$MT/v.out")"
check "extract -v lists what it extracted" test "$("$Z" extract -v "$MT/v.zn" -C "$MT/vx")" = "$(cat "$MT/v.out")"
check "...nothing with --skip-old-files over it" test -z "$("$Z" extract -v --skip-old-files "$MT/v.zn" -C "$MT/vx")"
mkdir -p "$MT/vcs/p/.git/o" "$MT/vcs/p/src/CVS" && touch "$MT/vcs/p/.gitignore" "$MT/vcs/p/src/a.c" "$MT/vcs/p/x.git" \
	"$MT/vcs/p/src/CVS/Entries" "$MT/vcs/p/.hgtags"
"$Z" create -q --exclude-vcs -o "$MT/vcs.zn" -C "$MT/vcs" p
check "--exclude-vcs leaves out what tar's leaves out" test "$("$Z" list "$MT/vcs.zn" | tr '\n' ' ')" = "p p/src p/src/a.c p/x.git "
if [ "$(id -u)" -eq 0 ]; then
	chown -R 1234:1234 "$MT/vcs" && "$Z" create -q -o "$MT/own.zn" -C "$MT/vcs" p
	"$Z" extract -q --no-same-owner "$MT/own.zn" -C "$MT/own1" && "$Z" extract -q "$MT/own.zn" -C "$MT/own2"
	check "extract --no-same-owner as root: the files are root's; without it, the stored owner's" \
		test "$(stat -c %u "$MT/own1/p/src/a.c") $(stat -c %u "$MT/own2/p/src/a.c")" = "0 1234"
fi
# --exclude when extracting and listing, against tar's
mkdir -p "$MT/exx/p/a/b" "$MT/exx/p/c" && touch "$MT/exx/p/a/b/x.o" "$MT/exx/p/a/y.c" "$MT/exx/p/c/z.o" "$MT/exx/p/b"
"$Z" create -q -o "$MT/exx.zn" -C "$MT/exx" p && tar -cf "$MT/exx.tar" -C "$MT/exx" p
ex_ok=1
for pat in '*.o' b a/b 'p/c' a; do
	rm -rf "$MT/exz" "$MT/ext" && mkdir "$MT/ext"
	"$Z" extract -q --exclude "$pat" "$MT/exx.zn" -C "$MT/exz" && tar -xf "$MT/exx.tar" --exclude "$pat" -C "$MT/ext"
	[ "$(cd "$MT/exz" && find . | sort)" = "$(cd "$MT/ext" && find . | sort)" ] || { ex_ok=0; echo "--exclude '$pat' differs from tar"; }
	[ "$("$Z" list --exclude "$pat" "$MT/exx.zn" | sed 's|$||' | sort)" = "$(cd "$MT/exz" && find . -mindepth 1 | sed 's|^\./||' | sort)" ] ||
		{ ex_ok=0; echo "list --exclude '$pat' differs from extract"; }
done
check "extract --exclude and list --exclude leave out what tar -x --exclude leaves out" test "$ex_ok" = 1
code 1 "a PATTERN naming only what --exclude leaves out is not found, as with tar" \
	"$Z" list --exclude '*.o' "$MT/exx.zn" p/c/z.o
check "...and named so" grep -q '^znippy: p/c/z.o: not found in archive$' "$T/stderr"
code 0 "...while one selecting more lists the rest" "$Z" list --exclude '*.o' "$MT/exx.zn" p/c
echo one >"$MT/exx/p/a/y.c" && echo two >"$MT/exx/p/c/z.o" && "$Z" create -q -o "$MT/exo.zn" -C "$MT/exx" p
"$Z" extract -O -v "$MT/exo.zn" p/a p/c >"$MT/exo.out" 2>"$MT/exo.err"
check "extract -O: the selected files' contents in path order, as tar -xO; -v names them on stderr" \
	test "$(cat "$MT/exo.out")" = "$(printf 'one\ntwo')" -a "$(cat "$MT/exo.err" | tr '\n' ' ')" = "p/a/b/x.o p/a/y.c p/c/z.o "
touch -d 2001-01-01 "$MT/exx/p/a/y.c" && "$Z" create -q -o "$MT/exm.zn" -C "$MT/exx" p
"$Z" extract -q -m "$MT/exm.zn" -C "$MT/exm"
check "extract -m: the time of the extraction, not the stored one" test "$(stat -c %Y "$MT/exm/p/a/y.c")" -gt 1000000000 -a \
	"$(stat -c %Y "$MT/exm/p/a/y.c")" -ne "$(stat -c %Y "$MT/exx/p/a/y.c")"
touch -d 2002-02-02 "$MT/exx/p" && "$Z" create -q -o "$MT/exm.zn" -C "$MT/exx" p
mkdir -p "$MT/exn/p" && chmod 700 "$MT/exn/p" && touch -d 2000-01-01 "$MT/exn/p" &&
	"$Z" extract -q --no-overwrite-dir "$MT/exm.zn" -C "$MT/exn"
check "extract --no-overwrite-dir: an existing directory keeps its mode; new ones get the archive's" \
	test "$(stat -c %a "$MT/exn/p") $(stat -c %a "$MT/exn/p/a")" = "700 $(stat -c %a "$MT/exx/p/a")"
check "...and the existing one gets the archive's time, as tar's" \
	test "$(stat -c %Y "$MT/exn/p")" = "$(stat -c %Y "$MT/exx/p")"
check "extract -O --strip-components leaves out what has no more parts, as tar -xO" \
	test "$("$Z" extract -O --strip-components 2 "$MT/exo.zn" p/a | wc -c)" = 4 -a \
	"$("$Z" extract -O --strip-components 3 "$MT/exo.zn" p/a | wc -c)" = 0
if [ "$(id -u)" -eq 0 ]; then
	mkdir -p "$MT/ro/w/p/a" && chown 1234:1234 "$MT/ro/w/p/a" && chmod 700 "$MT/ro/w/p/a"
	"$Z" extract -q --overwrite "$MT/exo.zn" -C "$MT/ro/w"
	check "extract as root gives an existing directory its stored owner back, as tar" \
		test "$(stat -c %u:%g "$MT/ro/w/p/a")" = "$(stat -c %u:%g "$MT/exx/p/a")"
fi
# diff: the archive against the files it came from, as tar -d
mkdir -p "$MT/df/t/d" && echo hello >"$MT/df/t/f" && echo same >"$MT/df/t/d/g" && ln -s f "$MT/df/t/l" &&
	ln "$MT/df/t/f" "$MT/df/t/h" && echo gone >"$MT/df/t/gone" && echo u >"$MT/df/t/u"
"$Z" create -q -o "$MT/df.zn" -C "$MT/df" t
code 0 "diff of an unchanged tree" "$Z" diff "$MT/df.zn" -C "$MT/df"
check "...says nothing" test -z "$("$Z" diff "$MT/df.zn" -C "$MT/df")"
printf 'HELLO\n' >"$MT/df/f.new" && touch -r "$MT/df/t/f" "$MT/df/f.new" && cat "$MT/df/f.new" >"$MT/df/t/f" &&
	touch -r "$MT/df/f.new" "$MT/df/t/f" # same size and time, other bytes
chmod 600 "$MT/df/t/d/g" && ln -sf d/g "$MT/df/t/l" && rm "$MT/df/t/gone" && rm "$MT/df/t/h" && echo x >"$MT/df/t/h"
code 1 "diff of a changed tree: exit 1, as tar -d" "$Z" diff "$MT/df.zn" -C "$MT/df"
"$Z" diff "$MT/df.zn" -C "$MT/df" >"$MT/df.out" 2>&1
for w in "t/d/g: Mode differs" "t/f: Contents differ" "t/gone: Warning: Cannot stat: No such file or directory" \
	"t/h: Not linked to t/f" "t/l: Symlink differs"; do
	check "...names '$w'" grep -qxF "$w" "$MT/df.out"
done
check "...and nothing else (and the new file's time)" test "$(grep -vxF "t/h: Mod time differs" "$MT/df.out" | wc -l)" = 5
code 0 "diff of a PATTERN that did not change" "$Z" diff "$MT/df.zn" -C "$MT/df" t/u
code 2 "extract -X - with the ARCHIVE on standard input" sh -c '"$1" extract -X - - <"$2"' - "$Z" "$MT/exx.zn"
code 2 "a --mode chmod would refuse" "$Z" create -q -o "$MT/e.zn" --mode u+q t
code 2 "a date --mtime does not take" "$Z" create -q -o "$MT/e.zn" --mtime 2021-02-30 t
code 2 "--clamp-mtime without --mtime" "$Z" create -q -o "$MT/e.zn" --clamp-mtime t
set --

finish
