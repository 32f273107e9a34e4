#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_gunzip_status.sh - `znippy gunzip` and `zcat` exit as gzip does: each case set up twice and
# run through gzip -d and through znippy, the exit statuses compared (0 success, 1 an error, 2 a
# warning; an error outranks a warning), and what is left on disk too; with -q, which silences the
# warnings, the same statuses; and the same at -T1 and -T2.
. "$(dirname "$0")/clitest_lib.sh"
cd "$T" || exit 1
export ZN_GUNZIP_CHUNK=65536
seq 1 30000 >data && gzip -c data >data.gz

# setup: the files every case starts from, in the current (empty) directory
setup() {
	cp ../data.gz a.gz && cp ../data.gz b.gz && echo old >b
	cp ../data.gz c.gz && ln c.gz c2.gz
	cp ../data.gz s.gz && chmod 4755 s.gz
	mkfifo fifo.gz
	ln -s a.gz link.gz
	mkdir dir && cp ../data.gz dir/x.gz && echo plain >dir/plain
	echo plain >plain && printf 'not gzip' >bad.gz
	head -c 100 ../data.gz >cut.gz
	{ cat ../data.gz; echo garbage; } >garbage.gz
	cp ../data.gz crc.gz && printf '\x00' | dd of=crc.gz bs=1 seek=$(($(stat -c %s ../data.gz) - 8)) conv=notrunc 2>/dev/null
}
# snap DIR: its names and the contents of its regular files (not the FIFO's: md5sum would wait on
# it for ever)
snap() {
	(cd "$1" && find . | sort && find . -type f | sort | xargs md5sum)
}
# same ARGS...: gzip -d ARGS and znippy gunzip ARGS (at -T1 and -T2) exit alike and leave the same
# files (names and contents)
same() {
	local t want got
	rm -rf g z && mkdir g z
	(cd g && setup && gzip -d "$@" </dev/null >../g.out 2>../g.err)
	want=$?
	for t in 1 2; do
		rm -rf z && mkdir z
		(cd z && setup && "$Z" gunzip -T$t "$@" </dev/null >../z.out 2>../z.err)
		got=$?
		if [ "$got" != "$want" ]; then
			fail "gunzip -T$t $*: exit $got, gzip's $want ($(head -c 200 z.err))"
			return
		fi
		if [ "$(snap g)" != "$(snap z)" ]; then
			fail "gunzip -T$t $*: the files left differ from gzip's"
			return
		fi
		# (not -l's: gzip 1.12 -l lists a FILE with trailing garbage as a second "(totals)")
		[ "$1" = -l ] || cmp -s g.out z.out || { fail "gunzip -T$t $*: standard output differs"; return; }
	done
	pass "gunzip $*: exit $want, as gzip's"
}
same a.gz                  # 0
same b.gz                  # an existing output, not overwritten: 2
same -q b.gz               # 2, and said even so
same -f b.gz               # 0
same plain                 # an unknown suffix: 2
same -q plain              # ... passed over with 0 by gzip -q
same dir                   # a directory: 2
same -q dir                # 2, silently
same -r dir                # 0 (plain is passed over)
same c.gz                  # other links: 2
same s.gz                  # set-id: 2
same fifo.gz               # not a regular file: 2
same link.gz               # a symlink: an error, 1
same -f link.gz            # 0
same missing.gz            # 1
same bad.gz                # not in gzip format: 1
same cut.gz                # truncated: 1
same crc.gz                # 1
same garbage.gz            # trailing garbage: 2
same -q garbage.gz         # 2
same -t garbage.gz         # 2
same -c garbage.gz         # 2
same -c a.gz garbage.gz    # 2
same -c garbage.gz bad.gz  # a warning, then an error: 1
same -c bad.gz garbage.gz  # an error, then a warning: 1
same plain bad.gz          # 1
same b.gz a.gz             # 2
same -c missing.gz a.gz    # 1
same --bogus a.gz          # a usage error: 1
same -S '' a.gz            # 1
same -l bad.gz             # 1
same -l a.gz garbage.gz    # 2
same -tv a.gz              # 0
# a write error: 1
for t in 1 2; do
	"$Z" zcat -T$t data.gz >/dev/full 2>err; rc=$?
	check "zcat -T$t into /dev/full: exit 1, as gzip's ($rc)" test $rc = 1
	check "... named as a write error" grep -q "write error" err
done
gzip -dc data.gz >/dev/full 2>/dev/null; check "gzip -dc into /dev/full exits 1 here too" test $? = 1
finish
