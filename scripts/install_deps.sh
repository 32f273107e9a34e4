#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install_deps.sh - install the Debian packages znippy builds, tests and benchmarks with.
# Usage: scripts/install_deps.sh [build|test|bench|aarch64]
#   build   the library and the command (`make`, `make demo`, `make install`)
#   test    + the test oracles and tools (`make check`, `make test`)
#   bench   + the benchmark peers (`make bench`)
#   aarch64 the cross compiler, qemu-user and the arm64 -dev packages for `scripts/run_tests.sh
#           aarch64`; adds the arm64 architecture to dpkg (and says so) when it is not there.
#   Each of build < test < bench includes the ones before.
# As root, missing packages are installed with apt-get; otherwise the missing ones are listed.
set -euo pipefail
level=${1:-build}
# The library and the command need only these (bc: scripts/demo.sh's arithmetic).
pkgs=(cmake make gcc pkg-config bc libzstd-dev libxxhash-dev libssl-dev liburing-dev)
if [ "$level" != build ]; then
	# The tests' oracles zlib, libdeflate and libbz2; clang for libFuzzer; the gzip-family
	# compressors the decoder is checked against. python3: the command tests parse list --json
	# and patch archives with it, and bench/test_gate.py is Python. zip, unzip, 7zip,
	# libarchive-tools (bsdtar): the ZIP oracles of tests/cli_unzip.sh.
	pkgs+=(zlib1g-dev libdeflate-dev libbz2-dev clang libclang-rt-14-dev zstd gzip pigz isal
	       libdeflate-tools zopfli tabix 7zip zip unzip libarchive-tools valgrind python3)
	# The index export is read back by apache-arrow (npm, installed into the build tree by
	# tests/cli_index_arrow.sh); test_pkg_meta and tests/cli_pkg_repo.sh read Debian's own
	# package metadata: a Maven repository (Maven's libraries make it ~145 jars: guava's is larger
	# than a block, guice's holds only a shaded dependency's pom.properties, wagon-http's shaded
	# jar five), pip's wheels, Rust crates and node modules (scoped ones: @types/*).
	pkgs+=(libcommons-lang3-java libmaven3-core-java libwagon-http-shaded-java libguava-java
	       libguice-java python3-pip-whl librust-libc-dev librust-cfg-if-dev node-semver node-ms)
	# Debian's node and npm, unless a node with its own npm is installed (NodeSource's nodejs
	# bundles npm and conflicts with Debian's).
	command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)
fi
if [ "$level" = bench ]; then
	# Benchmark peers and helpers: ISA-L's library (bench_inflate, bench_checksum), squashfs,
	# GNU time for peak RSS, python3 for the drivers and the mixed corpus, findmnt (util-linux).
	pkgs+=(libisal-dev squashfs-tools time hyperfine python3 util-linux coreutils)
fi
if [ "$level" = aarch64 ]; then
	pkgs=(gcc-aarch64-linux-gnu qemu-user-static cmake make pkg-config)
	# Not libisal-dev:arm64: it is not co-installable with the amd64 one the x86 benchmarks
	# need (installing it removes that), and no test needs ISA-L.
	for d in libzstd-dev libxxhash-dev libssl-dev liburing-dev zlib1g-dev libdeflate-dev \
		libbz2-dev; do
		pkgs+=("$d:arm64")
	done
	if [ "$(id -u)" -eq 0 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
		echo "install_deps: adding the arm64 architecture to dpkg (dpkg --add-architecture" \
			"arm64) for the aarch64 test configuration's -dev packages"
		dpkg --add-architecture arm64
		apt-get update -q >/dev/null
	fi
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install_deps: missing Debian packages (run as root to install): ${missing[*]}" >&2
	exit 0
fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
	{ apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}"; }
