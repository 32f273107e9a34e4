#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# pkg_oracle.py - the package coordinates of a tree's package files, read independently of znippy
# (Python's zipfile, tarfile, tomllib, json, email and ElementTree), and their comparison with
# `znippy list --json`. Used by tests/cli_pkg_repo.sh.
#
#   pkg_oracle.py coords ROOT                 the oracle's coordinates, a JSON object per line
#   pkg_oracle.py compare ROOT LIST [options] every package file's row of LIST (list --json, JSON
#                                             Lines) against the oracle, exactly; counts per type
#     --repo NAME      every row must carry "repo": NAME (without: no row may carry a repo)
#     --no-packages    no row may carry a package_* key (create --no-packages)
#     --maven-root DIR the Maven repository's root inside ROOT (default maven-repo): the path
#                      fallback's group starts below it
#
# The rules, from the package formats (not from znippy's code):
#   jar/war/ear/aar  META-INF/maven/G/A/pom.properties (groupId, artifactId, version; Java
#                    properties); with several, the one whose G and A the repository path names
#                    (.../G-as-dirs/A/VERSION/file), else one whose A starts the file name
#                    ("A-...") or is the artifact directory's, else the first in the central
#                    directory. With none, or with only ones that match neither (a shaded
#                    dependency's: guice's jar holds only cglib's), the repository layout
#                    G/R/O/U/P/A/VERSION/A-VERSION[-CLASSIFIER].EXT below the Maven root, and
#                    then the coordinates of the A-VERSION.pom beside the jar, if it has any; a
#                    jar outside that layout takes its first pom.properties all the same.
#   pom              the project's groupId, artifactId and version, the parent's groupId and
#                    version when the project has none.
#   whl              NAME-VERSION.dist-info/METADATA: Name, Version.
#   NAME.tar.gz      TOP/PKG-INFO: Name, Version (an sdist).
#   crate            NAME-VERSION/Cargo.toml: [package] name, version.
#   tgz              package/package.json: name ("@scope/name": group scope, name name), version.
# group is empty for PyPI and Cargo, and for npm names without a scope.
import email.parser
import io
import json
import os
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile

FIELDS = ("package_type", "package_group", "package_name", "package_version")


def kind_of(path):
    """The package kind of a file by its name, or None."""
    base = path.rsplit("/", 1)[-1].lower()
    for ext, kind in ((".jar", "jar"), (".war", "jar"), (".ear", "jar"), (".aar", "jar"),
                      (".pom", "pom"), (".whl", "wheel"), (".crate", "crate"), (".tgz", "npm"),
                      (".tar.gz", "sdist")):
        if base.endswith(ext) and len(base) > len(ext):
            return kind
    return None


def java_properties(text):
    """key -> value, as java.util.Properties.load reads them."""
    props = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        # Logical line: a line ending in an odd number of backslashes continues on the next.
        while (len(line) - len(line.rstrip("\\"))) % 2 == 1 and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f")
            i += 1
        key, val, j, esc = [], None, 0, False
        out = key
        while j < len(line):
            c = line[j]
            j += 1
            if esc:
                esc = False
                if c == "u" and j + 4 <= len(line):
                    out.append(chr(int(line[j:j + 4], 16)))
                    j += 4
                else:
                    out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c))
                continue
            if c == "\\":
                esc = True
                continue
            if out is key and c in "=: \t\f":
                # The separator: white space around it, and one '=' or ':'.
                while j < len(line) and line[j] in " \t\f":
                    j += 1
                if c in " \t\f" and j < len(line) and line[j] in "=:":
                    j += 1
                while j < len(line) and line[j] in " \t\f":
                    j += 1
                val = []
                out = val
                continue
            out.append(c)
        props.setdefault("".join(key), "".join(val or []))
    return props


def coord(t, g, n, v):
    return {"package_type": t, "package_group": g or "", "package_name": n,
            "package_version": v}


def maven_from_path(rel_parts):
    """G/R/O/U/P/A/VERSION/A-VERSION[-CLASSIFIER].EXT (parts below the Maven root)."""
    if len(rel_parts) < 4:
        return None
    g, a, v, f = rel_parts[:-3], rel_parts[-3], rel_parts[-2], rel_parts[-1]
    base = v[:-len("SNAPSHOT")] if v.endswith("-SNAPSHOT") else v
    if not f.startswith(a + "-" + base):
        return None
    rest = f[len(a) + 1 + len(base):]
    if base == v and not rest.startswith((".", "-")):
        return None
    return coord("maven", ".".join(g), a, v)


def jar_coords(data, parts, root_parts, full):
    z = zipfile.ZipFile(io.BytesIO(data))
    cands = []
    for name in z.namelist():
        p = name.split("/")
        if len(p) == 5 and p[0] == "META-INF" and p[1] == "maven" and p[2] and p[3] and \
                p[4] == "pom.properties":
            cands.append((p[2], p[3], name))
    below = parts[len(root_parts):] if parts[:len(root_parts)] == root_parts else parts

    def from_layout(why):
        """The repository layout's coordinates, or the .pom's beside the jar that they name."""
        c = maven_from_path(below)
        if c is None:
            return None, why
        pom = os.path.join(os.path.dirname(full), f"{c['package_name']}-{c['package_version']}.pom")
        if os.path.isfile(pom):
            try:
                p = pom_coords(open(pom, "rb").read())
            except ET.ParseError:
                p = None
            if p:
                return p, why + ", the .pom beside it"
        return c, why

    if not cands:
        return from_layout("path")

    def score(c):
        g, a, _ = c
        gp = g.split(".")
        full = len(parts) >= 3 + len(gp) and parts[-3] == a and parts[-3 - len(gp):-3] == gp
        return 2 if full else 1 if parts[-1].startswith(a + "-") or parts[-3:-2] == [a] else 0
    best = max(cands, key=score)  # max keeps the first of equals
    if score(best) == 0 and maven_from_path(below):
        # Only a shaded dependency's pom.properties (guice's jar holds cglib's): the file is
        # what the repository layout says it is.
        return from_layout("path (shaded pom.properties only)")
    props = java_properties(z.read(best[2]).decode("utf-8", "replace"))
    g, a, v = props.get("groupId"), props.get("artifactId"), props.get("version")
    if g and a and v:
        return coord("maven", g, a, v), "pom.properties"
    return from_layout("path (pom.properties without coordinates)")


def pom_coords(data):
    root = ET.fromstring(data)
    ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""

    def text(e, k):
        x = e.find(ns + k) if e is not None else None
        return x.text.strip() if x is not None and x.text and x.text.strip() else None
    parent = root.find(ns + "parent")
    g = text(root, "groupId") or text(parent, "groupId")
    a = text(root, "artifactId")
    v = text(root, "version") or text(parent, "version")
    return coord("maven", g, a, v) if g and a and v else None


def rfc822(data):
    msg = email.parser.HeaderParser().parsestr(data.decode("utf-8", "replace"))
    n, v = msg.get("Name"), msg.get("Version")
    return coord("pypi", "", n.strip(), v.strip()) if n and v else None


def wheel_coords(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    for name in z.namelist():
        p = name.split("/")
        if len(p) == 2 and p[0].endswith(".dist-info") and p[1] == "METADATA":
            return rfc822(z.read(name))
    return None


def tar_member(data, want):
    """The first member of a .tar.gz whose path is TOP/want (want(top) true), and its top."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
        for m in t:
            p = m.name.split("/")
            if m.isfile() and len(p) == 2 and p[0] and want(p[0], p[1]):
                return t.extractfile(m).read()
    return None


def sdist_coords(data):
    b = tar_member(data, lambda top, f: f == "PKG-INFO")
    return rfc822(b) if b is not None else None


def crate_coords(data):
    b = tar_member(data, lambda top, f: f == "Cargo.toml")
    if b is None:
        return None
    try:
        import tomllib
        pkg = tomllib.loads(b.decode()).get("package", {})
    except ImportError:  # Python before 3.11: the [package] table's plain name and version
        pkg, table = {}, None
        for line in b.decode().splitlines():
            s = line.strip()
            if s.startswith("["):
                table = s
            elif table == "[package]" and "=" in s:
                k, v = (x.strip() for x in s.split("=", 1))
                if k in ("name", "version") and v[:1] in "\"'" and v[-1:] == v[:1]:
                    pkg[k] = v[1:-1]
    n, v = pkg.get("name"), pkg.get("version")
    return coord("cargo", "", n, v) if isinstance(n, str) and isinstance(v, str) else None


def npm_coords(data):
    b = tar_member(data, lambda top, f: top == "package" and f == "package.json")
    if b is None:
        return None
    j = json.loads(b)
    n, v = j.get("name"), j.get("version")
    if not isinstance(n, str) or not isinstance(v, str):
        return None
    g = ""
    if n.startswith("@") and "/" in n:
        g, n = n[1:].split("/", 1)
    return coord("npm", g, n, v)


def oracle(root, maven_root):
    """path -> (coordinates or None, where they came from) for every package file under root."""
    out = {}
    root_parts = maven_root.strip("/").split("/")
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            full = os.path.join(d, f)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            k = kind_of(rel)
            if k is None or not os.path.isfile(full) or os.path.islink(full):
                continue
            data = open(full, "rb").read()
            src = "metadata"
            if k == "jar":
                c, src = jar_coords(data, rel.split("/"), root_parts, full)
            else:
                c = {"pom": pom_coords, "wheel": wheel_coords, "sdist": sdist_coords,
                     "crate": crate_coords, "npm": npm_coords}[k](data)
            out[rel] = (c, src)
    return out


def pkg_keys(row):
    """The package fields of a row that have a value (the index export writes null ones)."""
    return {k: row[k] for k in row if k.startswith("package_") and row[k] not in (None, "")}


def compare(root, listing, repo, no_packages, maven_root):
    want = oracle(root, maven_root)
    shown = 0

    def print(*a):  # the first 40 problems
        nonlocal shown
        shown += 1
        if shown <= 40:
            __builtins__.print(*a)
    rows = {}
    bad = 0
    for line in open(listing, encoding="utf-8"):
        row = json.loads(line)
        rows[row.get("path")] = row
        if repo is None and row.get("repo") not in (None, ""):
            print(f"  {row['path']}: repo {row['repo']!r}, archive made without --repo")
            bad += 1
        if repo is not None and row.get("repo") != repo:
            print(f"  {row['path']}: repo {row.get('repo')!r}, want {repo!r}")
            bad += 1
        if (no_packages or row.get("path") not in want) and pkg_keys(row):
            print(f"  {row['path']}: package keys {pkg_keys(row)} on a row that should have none")
            bad += 1
    counts = {}
    for path, (c, src) in sorted(want.items()):
        row = rows.get(path)
        if row is None:
            print(f"  {path}: not in the listing")
            bad += 1
            continue
        if no_packages:
            continue
        got = {k: row.get(k) or "" for k in FIELDS}
        exp = c or {k: "" for k in FIELDS}
        key = (exp["package_type"] or "none", src if c else "-")
        counts[key] = counts.get(key, 0) + 1
        if got != exp:
            print(f"  DISAGREE {path}\n    oracle ({src}): {exp}\n    znippy: {got}")
            bad += 1
    out = __builtins__.print
    if shown > 40:
        out(f"  ... and {shown - 40} more")
    for (t, src), n in sorted(counts.items()):
        out(f"  {t:6} {n:4} files (oracle from {src})")
    out(f"  {len(want)} package files, {len(rows)} rows, {bad} problems")
    return bad == 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "coords":
        for path, (c, src) in sorted(oracle(argv[1], "maven-repo").items()):
            print(json.dumps({"path": path, "from": src, **(c or {})}))
        return 0
    if len(argv) >= 3 and argv[0] == "compare":
        repo, no_packages, maven_root = None, False, "maven-repo"
        rest = argv[3:]
        while rest:
            o = rest.pop(0)
            if o == "--repo":
                repo = rest.pop(0)
            elif o == "--no-packages":
                no_packages = True
            elif o == "--maven-root":
                maven_root = rest.pop(0)
            else:
                sys.exit(f"pkg_oracle.py: unknown option {o}")
        return 0 if compare(argv[1], argv[2], repo, no_packages, maven_root) else 1
    sys.exit("usage: pkg_oracle.py coords ROOT | compare ROOT LIST [--repo NAME] [--no-packages] "
             "[--maven-root DIR]")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
