#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_index_arrow.sh - `znippy index`: the Arrow IPC export reads in apache-arrow (JavaScript, from
# npm, installed once into the build tree) with one row per entry, the columns named in its
# --help, and every value the JSON Lines export of the same archives has; JSON Lines and CSV agree
# with `list --json`; usage errors. Without node and npm (Debian's nodejs and npm), or without
# the npm registry for the first install, the apache-arrow part is skipped and says so.
. "$(dirname "$0")/clitest_lib.sh"
HERE=$(realpath "$(dirname "$0")")

S=$T/src
mkdir -p "$S/org/apache/commons/commons-lang3/3.12.0" "$S/wheels" "$S/d,with \"quotes\"" "$S/ü"
printf 'jar' >"$S/org/apache/commons/commons-lang3/3.12.0/commons-lang3-3.12.0.jar"
printf 'pom' >"$S/org/apache/commons/commons-lang3/3.12.0/commons-lang3-3.12.0.pom"
printf 'whl' >"$S/wheels/pip-23.0.1-py3-none-any.whl"
# An npm tarball is known by its package.json (a .tgz's name proves nothing); the wheel and the
# crate here are only names, which say enough for those kinds.
python3 -c 'import io, sys, tarfile
d = b"{\"name\": \"@types/node\", \"version\": \"18.0.0\"}"
with tarfile.open(sys.argv[1], "w:gz") as t:
    i = tarfile.TarInfo("package/package.json"); i.size = len(d); t.addfile(i, io.BytesIO(d))' "$S/types-node-18.0.0.tgz"
printf 'cr' >"$S/rand_core-0.6.4.crate"
printf 'x' >"$S/d,with \"quotes\"/a"$'\n'"b"
for i in $(seq 1 300); do printf '%d\n' "$i" >"$S/ü/f$i"; done
ln -s ü "$S/link"
touch -d '1969-12-31 23:59:59.5' "$S/ü/f1"
"$Z" create -q -o "$T/a.zn" -C "$S" . && "$Z" create -q -o "$T/b.zn" -C "$S" wheels link

code 0 "index --format jsonl of two archives" "$Z" index "$T/a.zn" "$T/b.zn" --format jsonl -o "$T/i.jsonl"
n_a=$("$Z" list "$T/a.zn" | wc -l) n_b=$("$Z" list "$T/b.zn" | wc -l)
check "one line per entry of both" test "$(wc -l <"$T/i.jsonl")" -eq $((n_a + n_b))
check "the archive column says which" test "$(grep -c '"archive":"'"$T"'/b.zn"}$' "$T/i.jsonl")" -eq "$n_b"
check "paths and digests as list --json gives them" test "$("$Z" list --json "$T/a.zn" |
	sed -n 's/^{"path":\("[^"]*"\).*"sha256":"\([0-9a-f]*\)".*/\1 \2/p')" = "$(head -n "$n_a" "$T/i.jsonl" |
	sed -n 's/^{"path":\("[^"]*"\).*"sha256":"\([0-9a-f]*\)".*/\1 \2/p')"
check "Maven coordinates from the repository layout" grep -q '"path":"org/apache/commons/commons-lang3/3.12.0/commons-lang3-3.12.0.jar".*"package_type":"maven","package_group":"org.apache.commons","package_name":"commons-lang3","package_version":"3.12.0"' "$T/i.jsonl"
check "wheel and crate names, an npm package.json" sh -c 'grep -q "\"package_type\":\"pypi\",\"package_group\":null,\"package_name\":\"pip\",\"package_version\":\"23.0.1\"" "$1" &&
	grep -q "\"package_name\":\"rand_core\",\"package_version\":\"0.6.4\"" "$1" &&
	grep -q "\"package_type\":\"npm\",\"package_group\":\"types\",\"package_name\":\"node\",\"package_version\":\"18.0.0\"" "$1"' - "$T/i.jsonl"
check "a time before 1970" grep -q '"path":"ü/f1".*"mtime":"1969-12-31T23:59:59.500000000Z"' "$T/i.jsonl"
code 0 "index -o FILE.csv" "$Z" index "$T/a.zn" -o "$T/i.csv"
check "CSV: a header and a line per entry (a quoted newline inside one)" \
	test "$(python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1], newline=""))); print(len(r), r[0][0], r[0][-1], len(set(map(len, r))))' "$T/i.csv")" = "$((n_a + 1)) path archive 1"
check "CSV: the quoted name whole" python3 -c 'import csv,sys; assert any(r[0] == "d,with \"quotes\"/a\nb" for r in csv.reader(open(sys.argv[1], newline="")))' "$T/i.csv"
code 2 "an unknown format" "$Z" index "$T/a.zn" --format parquet
code 2 "no ARCHIVE" "$Z" index
code 3 "a missing ARCHIVE" "$Z" index "$T/none.zn" -o "$T/none.arrow"
check "...leaves no output" test ! -e "$T/none.arrow"
code 1 "not an archive" "$Z" index "$T/i.csv" -o "$T/bad.arrow"
code 0 "index to an Arrow file" env ZN_ARROW_BATCH_ROWS=64 "$Z" index "$T/a.zn" "$T/b.zn" -o "$T/i.arrow"
check "...which starts and ends with ARROW1" sh -c 'head -c 6 "$1" | grep -q ARROW1 && tail -c 6 "$1" | grep -q ARROW1' - "$T/i.arrow"
code 0 "index to standard output" sh -c '"$1" index "$2" >"$3"' - "$Z" "$T/b.zn" "$T/o.arrow"

# apache-arrow from npm, installed once under the build tree.
CACHE=$(dirname "$Z")/npm-cache
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "SKIPPED: apache-arrow reads the export (needs node and npm: apt-get install nodejs npm)"
elif [ ! -d "$CACHE/node_modules/apache-arrow" ] &&
	! npm install --prefix "$CACHE" --no-audit --no-fund --silent apache-arrow@21 >"$T/npm.log" 2>&1; then
	echo "SKIPPED: apache-arrow reads the export (npm install apache-arrow failed:"
	tail -3 "$T/npm.log"
	echo ")"
else
	check "apache-arrow reads every row and column as the JSON Lines export has them (several batches, strings but paths dictionary-encoded)" \
		env ARROW_DIR="$CACHE/node_modules" node "$HERE/cli_index_arrow.mjs" "$T/i.arrow" "$T/i.jsonl" 4 dict
	"$Z" index "$T/b.zn" -f jsonl >"$T/o.jsonl"
	check "...and the one written to standard output, in one batch" \
		env ARROW_DIR="$CACHE/node_modules" node "$HERE/cli_index_arrow.mjs" "$T/o.arrow" "$T/o.jsonl" 1
fi
finish
