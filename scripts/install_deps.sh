#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install_deps.sh - install the Debian packages znippy builds, tests and benchmarks with.
# Usage: scripts/install_deps.sh [build|test|bench|aarch64]
#   build < test < bench: each level includes the ones before. aarch64: the cross compiler,
#   qemu-user and the arm64 -dev packages for `scripts/run_tests.sh aarch64` (adds the arm64
#   architecture to dpkg).
# As root, missing packages are installed with apt-get; otherwise the missing ones are listed.
set -euo pipefail
level=${1:-build}
# The library and command need the first four -dev packages; `make` also builds the tests and
# benchmarks, which link the test oracles and benchmark peers zlib, libdeflate, ISA-L and libbz2.
pkgs=(cmake make gcc pkg-config bc libzstd-dev libxxhash-dev libssl-dev liburing-dev
      zlib1g-dev libdeflate-dev libisal-dev libbz2-dev)
if [ "$level" != build ]; then
	# Test tools: clang for libFuzzer, the gzip-family compressors the decoder is checked
	# against. python3: the command tests parse list --json and patch archives with it.
	# zip, unzip, 7zip, libarchive-tools (bsdtar): the ZIP oracles of tests/cli_unzip.sh.
	pkgs+=(clang libclang-rt-14-dev zstd gzip pigz isal libdeflate-tools zopfli tabix 7zip zip
	       unzip libarchive-tools valgrind python3)
fi
if [ "$level" = bench ]; then
	# Archive benchmark peers and helpers (bench/run_archive_bench.sh): squashfs, GNU time for
	# peak RSS, python3 for the driver and the mixed corpus, findmnt (util-linux).
	pkgs+=(squashfs-tools time hyperfine python3 util-linux coreutils)
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
