#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make_mixed.py - the `mixed` corpus: a Maven-repository-like artifact tree, generated from a seed.

    bench/make_mixed.py OUTDIR [--seed N] [--bytes N]

What it holds, per artifact version (groupId/artifactId/version/ like ~/.m2/repository):
  - artifact-version.jar: a real zip (deflate) of class-like binaries (CAFEBABE magic, a constant
    pool of identifiers, skewed bytecode) plus META-INF/MANIFEST.MF and resources;
  - artifact-version-sources.jar for some: a zip of Java-like source text;
  - artifact-version.pom (XML), and .sha1/.md5 files beside every jar and pom (real digests);
  - for some, a -dist.tgz (tar.gz of text plus a jar), a CHANGES.gz, and site/ png images (real PNG,
    noisy gradients and flat icons, zlib-compressed); maven-metadata.xml per artifact, a README.md.
Most bytes are therefore already compressed (jar, png, gz) and a compressor's job is to notice that
and not waste time on them, while the pom/sha1/README text around them still compresses.

Everything is derived from random.Random(f"{seed}-{artifact}") and fixed timestamps, so the tree is
identical run to run on the same zlib (Debian 12: zlib 1.2.13); the generator stops adding artifacts
once --bytes is reached. Python 3.9+ standard library only.
"""
import argparse
import gzip
import hashlib
import io
import itertools
import os
import random
import struct
import tarfile
import zipfile
import zlib

FIXED_MTIME = 1704067200  # 2024-01-01T00:00:00Z
ZIP_DATE = (2024, 1, 1, 0, 0, 0)

ONSET = "b c d f g h j k l m n p r s t v w z br ch cl cr dr fl gr pl pr sh st str th tr".split() + ["", ""]
NUCLEUS = "a e i o u ea ou ai io y ee".split()
CODA = ["", "", "", "n", "r", "s", "t", "l", "nd", "st", "ng", "ck", "m"]


def build_vocab(seed, n=8192):
    g = random.Random(f"{seed}-vocab")
    vocab = []
    for i in range(n):
        syl = 1 + (i > 64) + (g.random() < 0.5 if i > 1024 else 0) + (g.random() < 0.5 if i > 4000 else 0)
        vocab.append("".join(g.choice(ONSET) + g.choice(NUCLEUS) + g.choice(CODA) for _ in range(syl)))
    weights = list(itertools.accumulate(1.0 / (r + 1) ** 1.1 for r in range(n)))
    return vocab, weights


class Gen:
    def __init__(self, seed):
        self.seed = seed
        self.vocab, self.cum = build_vocab(seed)
        # bytecode: a skewed alphabet (aload/invoke/getfield-like opcodes dominate, as in real classes)
        g = random.Random(f"{seed}-opcodes")
        ops = [0x2A, 0xB7, 0xB6, 0xB4, 0xB5, 0x12, 0x59, 0xBB, 0x2B, 0xB1, 0xAC, 0x03, 0x04, 0x10, 0x99, 0xA7]
        table = bytes(ops[min(int(g.expovariate(0.35)), 15)] if i % 3 else g.randrange(256) for i in range(256))
        self.op_table = table

    def words(self, g, k):
        return g.choices(self.vocab, cum_weights=self.cum, k=k)

    def ident(self, g, parts=2, sep=""):
        w = self.words(g, parts)
        return w[0] + sep.join(x.capitalize() for x in w[1:]) if not sep else sep.join(w)

    def prose(self, g, nbytes):
        out, size = [], 0
        while size < nbytes:
            s = " ".join(self.words(g, g.randint(5, 22))).capitalize() + ". "
            out.append(s)
            size += len(s)
            if g.random() < 0.2:
                out.append("\n\n")
        return "".join(out)[:nbytes]

    def java_source(self, g, pkg, cls, nbytes):
        lines = [f"package {pkg};", "", "import java.util.List;", "import java.util.Map;", "",
                 f"/** {' '.join(self.words(g, 12))} */", f"public class {cls} {{"]
        size = sum(len(x) for x in lines)
        while size < nbytes:
            name = self.ident(g, 2)
            body = [f"    /** {' '.join(self.words(g, g.randint(4, 14)))} */",
                    f"    public {g.choice(['int', 'String', 'void', 'List<String>', 'boolean'])} {name}("
                    f"{g.choice(['', 'int n', 'String s', 'Map<String, Object> m'])}) {{"]
            for _ in range(g.randint(2, 12)):
                body.append(f"        {self.ident(g, 2)} = {self.ident(g, 2)}.{self.ident(g, 1)}"
                            f"({g.randint(0, 4096)});")
            body.append("    }")
            lines += body
            size += sum(len(x) + 1 for x in body)
        lines.append("}")
        return "\n".join(lines) + "\n"

    def class_file(self, g, pkg, cls):
        """Class-like bytes: magic, a constant pool of identifiers and descriptors, skewed bytecode."""
        out = bytearray(b"\xca\xfe\xba\xbe\x00\x00\x00\x37")
        names = [pkg.replace(".", "/") + "/" + cls, "java/lang/Object", "<init>", "()V", "Code",
                 "LineNumberTable", "SourceFile", cls + ".java"]
        names += [self.ident(g, g.randint(1, 3)) for _ in range(g.randint(10, 120))]
        names += ["(" + "".join(g.choice(["I", "J", "Z", "Ljava/lang/String;", "[B"]) for _ in range(g.randint(0, 3)))
                  + ")" + g.choice(["V", "I", "Z", "Ljava/lang/String;"]) for _ in range(g.randint(3, 30))]
        out += struct.pack(">H", len(names) + 1)
        for s in names:
            b = s.encode()
            out += b"\x01" + struct.pack(">H", len(b)) + b
        for _ in range(g.randint(2, 40)):  # methods: header + code
            code = g.randbytes(g.randint(8, 600)).translate(self.op_table)
            out += struct.pack(">HHHHI", 1, g.randrange(len(names)), g.randrange(len(names)), 1, len(code)) + code
        return bytes(out)

    def png(self, g, w, h, icon=False):
        """A real PNG (RGB, filter 0): a flat icon or a noisy gradient 'screenshot'."""
        if icon:
            colors = [bytes(g.randrange(256) for _ in range(3)) for _ in range(4)]
            rows = []
            for y in range(h):
                row = b"".join(colors[(x // 8 + y // 8 + (x * y) // 97) % 4] for x in range(w))
                rows.append(b"\x00" + row)
            raw = b"".join(rows)
        else:
            c0, c1 = [g.randrange(200) for _ in range(3)], [g.randrange(200) for _ in range(3)]
            base = bytes(int(c0[i % 3] + (c1[i % 3] - c0[i % 3]) * (i // 3) / max(w - 1, 1)) for i in range(3 * w))
            amp = g.choice([4, 8, 16, 32, 48])
            noise_table = bytes(i % amp for i in range(256))
            base_int = int.from_bytes(base, "big")
            rows = []
            for y in range(h):
                noise = g.randbytes(3 * w).translate(noise_table)
                # bytewise add without carries: base <= 199 and noise < 48
                row = (base_int + int.from_bytes(noise, "big")).to_bytes(3 * w, "big")
                rows.append(b"\x00" + row)
            raw = b"".join(rows)

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def zip_bytes(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return buf.getvalue()


def gzip_bytes(data):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=FIXED_MTIME, compresslevel=6) as f:
        f.write(data)
    return buf.getvalue()


def tgz_bytes(members):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size, ti.mtime, ti.mode, ti.uname, ti.gname = len(data), FIXED_MTIME, 0o644, "build", "build"
            t.addfile(ti, io.BytesIO(data))
    return gzip_bytes(raw.getvalue())


def pom(gen, g, group, art, ver, deps):
    dep_xml = "".join(
        f"    <dependency>\n      <groupId>{dg}</groupId>\n      <artifactId>{da}</artifactId>\n"
        f"      <version>{dv}</version>\n    </dependency>\n" for dg, da, dv in deps)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
            f"  <modelVersion>4.0.0</modelVersion>\n  <groupId>{group}</groupId>\n"
            f"  <artifactId>{art}</artifactId>\n  <version>{ver}</version>\n  <packaging>jar</packaging>\n"
            f"  <name>{' '.join(gen.words(g, 3))}</name>\n  <description>{gen.prose(g, g.randint(80, 600))}"
            f"</description>\n  <licenses><license><name>Apache-2.0</name></license></licenses>\n"
            f"  <dependencies>\n{dep_xml}  </dependencies>\n</project>\n").encode()


class Writer:
    def __init__(self, root):
        self.root, self.total, self.files = root, 0, 0

    def put(self, rel, data, digests=False):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
        self.total += len(data)
        self.files += 1
        if digests:
            self.put(rel + ".sha1", hashlib.sha1(data).hexdigest().encode())
            self.put(rel + ".md5", hashlib.md5(data).hexdigest().encode())


def make_artifact(gen, wr, i, seed, published):
    g = random.Random(f"{seed}-{i}")
    # names: uniform over the vocabulary (Zipf would make every group "org.ny.ny")
    group = ".".join(["org" if g.random() < 0.6 else "com"] + [g.choice(gen.vocab) for _ in range(g.randint(1, 3))])
    art = "-".join(g.choice(gen.vocab) for _ in range(g.randint(1, 2)))
    gdir = group.replace(".", "/") + "/" + art
    versions = []
    for v in range(g.randint(1, 3)):
        ver = f"{g.randint(0, 5)}.{g.randint(0, 20)}.{g.randint(0, 9)}" + ("-SNAPSHOT" if g.random() < 0.1 else "")
        if ver in versions:
            continue
        versions.append(ver)
        vdir = f"{gdir}/{ver}"
        pkg = group + "." + art.replace("-", "")
        # class count: log-normal, median ~40, a few huge jars
        nclass = max(1, min(2500, int(g.lognormvariate(3.7, 1.1))))
        entries = [("META-INF/MANIFEST.MF", f"Manifest-Version: 1.0\nCreated-By: znippy-bench\n"
                    f"Implementation-Title: {art}\nImplementation-Version: {ver}\n".encode())]
        classes, seen = [], set()
        subs = [g.choice(gen.vocab) for _ in range(1 + nclass // 30)]
        for c in range(nclass):
            sub = g.choice(subs)
            cls = "".join(g.choice(gen.vocab).capitalize() for _ in range(g.randint(1, 3)))
            if (sub, cls) in seen:
                cls += str(c)
            seen.add((sub, cls))
            classes.append((f"{pkg}.{sub}", cls))
            entries.append((f"{pkg.replace('.', '/')}/{sub}/{cls}.class", gen.class_file(g, f"{pkg}.{sub}", cls)))
        for r in range(g.randint(0, 4)):
            entries.append((f"{art}/{g.choice(gen.vocab)}-{r}.properties",
                            "\n".join(f"{gen.ident(g, 2, '.')}={gen.ident(g, 1)}" for _ in range(g.randint(5, 80))).encode()))
        jar = zip_bytes(entries)
        wr.put(f"{vdir}/{art}-{ver}.jar", jar, digests=True)
        deps = [g.choice(published) for _ in range(min(len(published), g.randint(0, 8)))]
        wr.put(f"{vdir}/{art}-{ver}.pom", pom(gen, g, group, art, ver, deps), digests=True)
        if g.random() < 0.3:
            srcs = [(f"{p.replace('.', '/')}/{c}.java", gen.java_source(g, p, c, g.randint(500, 8000)).encode())
                    for p, c in classes[: min(len(classes), 300)]]
            wr.put(f"{vdir}/{art}-{ver}-sources.jar", zip_bytes(srcs), digests=True)
        if g.random() < 0.12:
            members = [(f"{art}-{ver}/README.txt", gen.prose(g, g.randint(2000, 20000)).encode()),
                       (f"{art}-{ver}/lib/{art}-{ver}.jar", jar),
                       (f"{art}-{ver}/bin/run.sh", b"#!/bin/sh\nexec java -jar \"$(dirname \"$0\")/../lib/"
                        + f"{art}-{ver}.jar".encode() + b"\" \"$@\"\n")]
            wr.put(f"{vdir}/{art}-{ver}-dist.tgz", tgz_bytes(members), digests=True)
        if g.random() < 0.2:
            wr.put(f"{vdir}/CHANGES.gz", gzip_bytes(gen.prose(g, g.randint(5000, 200000)).encode()))
        if g.random() < 0.15:
            for k in range(g.randint(1, 5)):
                if g.random() < 0.5:
                    s = g.choice([16, 32, 48, 64, 128])
                    wr.put(f"{vdir}/site/images/icon-{k}-{s}.png", gen.png(g, s, s, icon=True))
                else:
                    w, h = g.choice([(320, 200), (640, 400), (800, 600), (1024, 640)])
                    wr.put(f"{vdir}/site/images/screenshot-{k}.png", gen.png(g, w, h))
        published.append((group, art, ver))
    meta = (f'<?xml version="1.0" encoding="UTF-8"?>\n<metadata>\n  <groupId>{group}</groupId>\n'
            f"  <artifactId>{art}</artifactId>\n  <versioning>\n    <latest>{versions[-1]}</latest>\n"
            f"    <versions>\n" + "".join(f"      <version>{v}</version>\n" for v in versions)
            + "    </versions>\n    <lastUpdated>20240101000000</lastUpdated>\n  </versioning>\n</metadata>\n")
    wr.put(f"{gdir}/maven-metadata.xml", meta.encode(), digests=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bytes", type=int, default=300_000_000, help="stop once this many bytes are written")
    a = ap.parse_args()
    gen = Gen(a.seed)
    wr = Writer(a.outdir)
    os.makedirs(a.outdir, exist_ok=True)
    g = random.Random(f"{a.seed}-readme")
    wr.put("README.md", ("# Local artifact repository\n\n" + gen.prose(g, 6000)).encode())
    published, i = [], 0
    while wr.total < a.bytes:
        make_artifact(gen, wr, i, a.seed, published)
        i += 1
    for dirpath, dirnames, _ in os.walk(a.outdir, topdown=False):
        os.utime(dirpath, (FIXED_MTIME, FIXED_MTIME))
    print(f"mixed: {i} artifacts, {wr.files} files, {wr.total} bytes")


if __name__ == "__main__":
    main()
