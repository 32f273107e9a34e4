#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_zcat_plain.sh - zcat -f (gunzip -cf) copies what is not gzip as it is, and whatever follows
# the last member, zero padding included: the same bytes as gzip -cdf, with exit status 0, from a
# FILE, a pipe, and a pipe whose reads end anywhere near the member's end.
. "$(dirname "$0")/clitest_lib.sh"
set +o pipefail
cd "$T" || exit 1
printf 'hello\n' >l1 && seq 1 20000 >l2 && gzip -k l1 l2
# zcat -f FILE: plain bytes after a member are copied as they are, as gzip does
{ cat l1.gz; printf 'plain text\n'; } >gp
[ "$("$Z" zcat -f gp)" = "$(gzip -cdf gp)" ] || fail "zcat -f: plain data after a member"
# ... and from a pipe, zero padding included, whatever follows the last member: the same bytes as
# gzip, and exit 0 as gzip's, from a FILE, a pipe, and a pipe cut near the member's end (between
# a 0x1f and the byte after it too); a 0x1f at the very end is copied too (without -f: a member
# cut short)
same_f() { # NAME [CUT...]: zcat -f of gf from a FILE, a pipe, a pipe cut at CUT..., as gzip -cdf
	gzip -cdf gf >gf.want 2>/dev/null || fail "$1: gzip -cdf failed"
	"$Z" zcat -f gf >gf.got || fail "$1: zcat -f FILE: exit $?"
	cmp -s gf.got gf.want || fail "$1: zcat -f FILE differs from gzip"
	cat gf | "$Z" gunzip -cf >gf.got || fail "$1: gunzip -cf from a pipe: exit $?"
	cmp -s gf.got gf.want || fail "$1: gunzip -cf from a pipe differs from gzip"
	[ $# -gt 1 ] || return 0
	local what=$1
	shift
	feed gf "$@" | "$Z" zcat -f >gf.got || fail "$what: zcat -f, cut at $*: exit $?"
	cmp -s gf.got gf.want || fail "$what: zcat -f, cut at $*, differs from gzip"
}
for t in 'plain text\n' '\0\0\0plain text\n' '\x1fxtext\n' '\0\0\0\0' '\x1f' '\0\x1f' '\0\x1f\x8b'; do
	{ cat l1.gz; printf "$t"; } >gf && same_f "a member, then '$t'"
done
{ cat l1.gz; printf '\0\0'; cat l1.gz; } >gf && same_f "a member after zero padding is copied as it is"
for t in '' 'x' '\x1f' 'not gzip\n' '\0\0\0'; do
	printf "$t" >gf && same_f "input that is not gzip: '$t'"
done
printf 'x\x1f\x8b' >gf && same_f "not gzip, 1 byte at a time" 1 2
n=$(wc -c <l2.gz)
for t in '\0\0\x1fxtext\n' '\x1fxy' '\x1f' '\0\0'; do
	{ cat l2.gz; printf "$t"; } >gf
	for k in $(seq $((n - 9)) $(($(wc -c <gf) - 1))); do same_f "l2.gz, then '$t'" $k; done
done
{ cat l1.gz; printf '\x1fxtext'; } >gf && same_f "one byte at a time" $(seq 1 $(wc -c <gf))

finish
