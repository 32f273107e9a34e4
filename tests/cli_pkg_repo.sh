#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_pkg_repo.sh - every coordinate right: a repository tree made from Debian's own package files
# (the Maven repository under /usr/share/maven-repo with links resolved, pip's and setuptools'
# wheels, sdists made from their METADATA and from installed egg-info PKG-INFO files, crates
# packed from /usr/share/cargo/registry, npm tarballs packed from /usr/share/nodejs, scoped ones
# too) is archived, and every package file's row of `list --json` must equal what
# tests/pkg_oracle.py reads from the file's own metadata member (Python's zipfile, tarfile,
# tomllib, json, ElementTree): exactly, with counts per type. Several chunk sizes (64K: the
# wheels and guava are many chunks), dedup on and off (Debian's repository holds each jar twice,
# at its version and at "debian", some under two groups: a file's coordinates must not depend on
# whether its bytes were stored once; nor may a hard link's on its target's path), --repo on
# every row, --no-packages with none, and the index export with the same columns. A Debian file
# set that is absent (scripts/install_deps.sh test installs them) is skipped with a message; with
# none present the test is skipped.
. "$(dirname "$0")/clitest_lib.sh"
HERE=$(realpath "$(dirname "$0")")
ORACLE=$HERE/pkg_oracle.py

R=$T/repo
mkdir -p "$R/notes"
have=0
if [ -d /usr/share/maven-repo ]; then
	cp -rL /usr/share/maven-repo "$R/maven-repo" 2>"$T/cp.err" || { echo "cp -rL said:"; head -3 "$T/cp.err"; }
	have=1
else echo "SKIPPED: the Maven repository (/usr/share/maven-repo: apt-get install libcommons-lang3-java)"; fi
if ls /usr/share/python-wheels/*.whl >/dev/null 2>&1; then
	mkdir -p "$R/pypi/wheels" && cp /usr/share/python-wheels/*.whl "$R/pypi/wheels/"
	have=1
else echo "SKIPPED: wheels (/usr/share/python-wheels: apt-get install python3-pip-whl)"; fi
ls -d /usr/share/cargo/registry/*-[0-9]* >/dev/null 2>&1 && have=1 ||
	echo "SKIPPED: crates (/usr/share/cargo/registry: apt-get install librust-libc-dev)"
ls /usr/share/nodejs/*/package.json >/dev/null 2>&1 && have=1 ||
	echo "SKIPPED: npm tarballs (/usr/share/nodejs: apt-get install node-semver node-ms)"
if [ "$have" -eq 0 ]; then
	echo "SKIPPED: no Debian package files on this system"
	exit 0
fi

# sdists, crates and npm tarballs, packed as their registries serve them (deterministic tars).
python3 - "$R" <<'PY' || fail "making the sdists, crates and npm tarballs"
import glob, io, json, os, re, sys, tarfile, zipfile
R = sys.argv[1]

def info(name, size, mode=0o644):
    ti = tarfile.TarInfo(name)
    ti.size, ti.mode, ti.mtime, ti.uname, ti.gname = size, mode, 1700000000, "root", "root"
    return ti

def pack_dir(out, src, prefix):
    """src's files (links followed) as PREFIX/... in a .tar.gz, sorted."""
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as t:
        for d, dirs, files in os.walk(src, followlinks=True):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(d, f)
                if not os.path.isfile(p):
                    continue
                data = open(p, "rb").read()
                rel = os.path.relpath(p, src).replace(os.sep, "/")
                t.addfile(info(prefix + "/" + rel, len(data)), io.BytesIO(data))

def sdist(out, top, pkg_info, extra=()):
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as t:
        for name, data in [("setup.py", b"from setuptools import setup\nsetup()\n"),
                           *extra, ("PKG-INFO", pkg_info)]:
            t.addfile(info(top + "/" + name, len(data)), io.BytesIO(data))

norm = lambda n: re.sub(r"[-_.]+", "_", n).lower()   # PEP 625's sdist file names

# sdists: from the wheels' METADATA (named as PEP 625 names them) and from egg-info PKG-INFO.
n = 0
os.makedirs(f"{R}/pypi/sdist", exist_ok=True)
for whl in sorted(glob.glob(f"{R}/pypi/wheels/*.whl")):
    z = zipfile.ZipFile(whl)
    meta = next(m for m in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", m))
    name, ver = os.path.basename(whl).split("-")[:2]
    top = f"{norm(name)}-{ver}"
    sdist(f"{R}/pypi/sdist/{top}.tar.gz", top, z.read(meta), [("README.md", b"# readme\n" * 50)])
    n += 1
for pi in sorted(glob.glob("/usr/lib/python3/dist-packages/*-[0-9]*.egg-info/PKG-INFO"))[:12]:
    name, ver = os.path.basename(os.path.dirname(pi))[:-len(".egg-info")].rsplit("-", 1)
    top = f"{norm(name)}-{ver}"
    sdist(f"{R}/pypi/sdist/{top}.tar.gz", top, open(pi, "rb").read())
    n += 1
# crates: NAME-VERSION.crate, a .tar.gz of NAME-VERSION/ (as cargo package makes them).
os.makedirs(f"{R}/crates", exist_ok=True)
for d in sorted(glob.glob("/usr/share/cargo/registry/*-[0-9]*")):
    top = os.path.basename(d)
    pack_dir(f"{R}/crates/{top}.crate", d, top)
# npm: NAME-VERSION.tgz with package/ inside; a scoped @S/N as S-N-VERSION.tgz (as npm pack).
os.makedirs(f"{R}/npm", exist_ok=True)
for pj in sorted(glob.glob("/usr/share/nodejs/*/package.json") +
                 glob.glob("/usr/share/nodejs/@*/*/package.json")):
    j = json.load(open(pj))
    if not isinstance(j.get("name"), str) or not isinstance(j.get("version"), str):
        continue
    fname = j["name"].lstrip("@").replace("/", "-")
    pack_dir(f"{R}/npm/{fname}-{j['version']}.tgz", os.path.dirname(pj), "package")
PY
# Hard links to jars under other paths (stored as links): one whose coordinates come from its
# pom.properties, the same as its target's, and one without, whose path tells its own.
for j in "$R"/maven-repo/org/apache/commons/commons-lang3/3.*/commons-lang3-3.*.jar; do
	[ -f "$j" ] && mkdir -p "$R/libs" && ln "$j" "$R/libs/commons-lang3.jar" && break
done
for j in "$R"/maven-repo/javax/inject/javax.inject/1/javax.inject-1.jar; do
	[ -f "$j" ] && mkdir -p "$R/maven-repo/org/example/inject-copy/3.0" &&
		ln "$j" "$R/maven-repo/org/example/inject-copy/3.0/inject-copy-3.0.jar"
done
# Files that are no package, beside them.
printf 'a repository made of Debian files\n' >"$R/README.txt"
seq 1 50000 >"$R/notes/numbers.txt"
cp "$ORACLE" "$R/notes/"

python3 "$ORACLE" coords "$R" >"$T/oracle.jsonl" || fail "the oracle reads every package file"
for t in maven pypi cargo npm; do
	printf '%s: %s files   ' "$t" "$(grep -c "\"package_type\": \"$t\"" "$T/oracle.jsonl")"
done
echo "(the oracle's count; $(grep -c '"from": "path' "$T/oracle.jsonl") jars by the repository layout)"
# The oracle itself, on the cases that tell rules apart (those of them this system has).
check "the oracle tells the rules apart (debian versions, shaded jars, scopes)" python3 -c '
import json, sys
o = {j["path"]: j for j in map(json.loads, open(sys.argv[1]))}
def want(suffix, **kv):
    for p, j in o.items():
        if p.endswith(suffix):
            assert all(j.get(k) == v for k, v in kv.items()), (p, j, kv)
want("/commons-lang3-debian.jar", package_name="commons-lang3", package_group="org.apache.commons")
assert all(j["package_version"] != "debian" for p, j in o.items()
           if p.endswith("/commons-lang3-debian.jar")), "pom.properties version"
want("/guice-debian.jar", package_name="guice", package_group="com.google.inject",
     package_version="debian")
want("-shaded.jar", package_name="wagon-http", package_group="org.apache.maven.wagon")
want("/pip-23.0.1-py3-none-any.whl", package_name="pip", package_version="23.0.1")
want("pypi/sdist/setuptools-66.1.1.tar.gz", package_name="setuptools")
want("/types-ms-0.7.31.tgz", package_type="npm", package_group="types", package_name="ms")
' "$T/oracle.jsonl"
[ -d "$R/npm" ] && ls -d /usr/share/nodejs/@*/*/ >/dev/null 2>&1 &&
	check "the oracle sees a scoped npm package" grep -q '"package_type": "npm", "package_group": "[^"]' "$T/oracle.jsonl"

# create with OPTIONS..., list --json, and the oracle's comparison with COMPARE_OPTIONS...
round() { # description, create options..., --, compare options...
	local d=$1 copts=() cmp=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do copts+=("$1") && shift; done
	[ $# -gt 0 ] && shift
	cmp=("$@")
	rm -f "$T/a.zn"
	code 0 "create $d" "$Z" create -q -o "$T/a.zn" "${copts[@]}" -C "$R" .
	[ -f "$T/a.zn" ] || return
	"$Z" list --json "$T/a.zn" >"$T/list.jsonl" || fail "list --json ($d)"
	cp "$T/list.jsonl" "$T/list-$((++nround)).jsonl"
	echo "$d:"
	check "every package file's coordinates equal its metadata's ($d)" \
		python3 "$ORACLE" compare "$R" "$T/list.jsonl" "${cmp[@]}"
}
nround=0
round "(default options)" -T 2
round "--chunk-size 64K --repo NAME" --chunk-size 64K --repo debian-bookworm -T 2 -- --repo debian-bookworm
code 0 "verify it" "$Z" verify "$T/a.zn"
code 0 "index --format jsonl of it" "$Z" index "$T/a.zn" --format jsonl -o "$T/index.jsonl"
check "the index export carries the same coordinates and repo" \
	python3 "$ORACLE" compare "$R" "$T/index.jsonl" --repo debian-bookworm
code 0 "list --json --package-type maven" "$Z" list --json --package-type maven "$T/a.zn"
"$Z" list --json --package-type maven "$T/a.zn" >"$T/maven.jsonl"
check "...lists the oracle's Maven files, each once" test \
	"$(sed -n 's/^{"path":"\([^"]*\)".*/\1/p' "$T/maven.jsonl" | sort)" = \
	"$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j.get("package_type") == "maven": print(j["path"])' "$T/oracle.jsonl" | LC_ALL=C sort)"
round "--no-dedup --chunk-size 128K -T 1" --no-dedup --chunk-size 128K -T 1
# Whatever the rules, a file's coordinates cannot depend on whether its bytes were stored once
# for several paths (Debian's repository holds most jars twice, and some under two groups).
check "the coordinates with dedup (one copy of each jar) equal those without, row for row" python3 -c '
import json, sys
def pkg(f):
    return {r["path"]: tuple(r.get(k) or "" for k in ("package_type", "package_group",
            "package_name", "package_version")) for r in map(json.loads, open(f))}
a, b = pkg(sys.argv[1]), pkg(sys.argv[2])
bad = sorted(p for p in a if a[p] != b.get(p))
for p in bad[:20]:
    print(f"  {p}: with dedup {a[p]}, without {b.get(p)}")
sys.exit(1 if bad else 0)' "$T/list-1.jsonl" "$T/list-3.jsonl"
[ "$QUICK" -eq 0 ] && round "--level 1 --no-skip --chunk-size 64K" --level 1 --no-skip --chunk-size 64K
round "--no-packages" --no-packages -- --no-packages
finish
