#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_tests.sh - build and run the test suite in named configurations.
#   release   Release build, every test
#   asan      ASan+UBSan build (Debug assertions on), every test
#   tsan      TSan build, the multithreaded tests (label-free: names matching archive|pipeline|cli|threads)
#   cpu       rerun the decoder tests once per CPU-feature level (ZN_DISABLE_CPU_FEATURES)
#   valgrind  the unit tests under valgrind memcheck
#   aarch64   cross-build for aarch64 (cmake/aarch64-linux-gnu.cmake) and run the decoder and
#             checksum tests under qemu-user, with the NEON/PMULL/CRC32 kernels and with them
#             masked. Only single-threaded tests: under Debian 12's qemu-user 7.2 on this
#             kernel even a bare pthread_create() never returns, so the archive pipeline cannot
#             run emulated. Installs what it needs when run as root; skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cfg() { # dir, build type, extra cmake args...
	local dir=$1 type=$2
	shift 2
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" "$@" >/dev/null
	cmake --build "$dir" -j "$jobs" 2>&1 | grep -Ev '^\[ *[0-9]+%\]|^Consolidate|^Scanning' || true
	test "${PIPESTATUS[0]}" -eq 0
}
run() { # dir, ctest args...
	local dir=$1
	shift
	(cd "$dir" && ctest --output-on-failure -j "$jobs" "$@")
}
for c in "$@"; do
	echo "== configuration: $c"
	case $c in
	release) # two statements, not `cfg && run`: set -e does not act on the left of &&
		cfg build Release -DZN_BENCH=ON
		run build
		;;
	asan)
		cfg build-asan RelWithDebInfo -DZN_SANITIZE=address,undefined -DZN_BENCH=OFF
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run build-asan
		;;
	tsan)
		cfg build-tsan RelWithDebInfo -DZN_SANITIZE=thread -DZN_BENCH=OFF
		TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" run build-tsan -R 'archive|pipeline|cli|threads'
		;;
	cpu)
		cfg build-cpu Release -DZN_BENCH=OFF
		for mask in "" avx512 avx512,avx2 avx512,avx2,bmi2 avx512,avx2,bmi2,pclmul,ssse3,sse4; do
			echo "-- ZN_DISABLE_CPU_FEATURES=$mask"
			ZN_DISABLE_CPU_FEATURES=$mask run build-cpu -R 'deflate|inflate|gzip|zlib|crc|adler|bzip2_'
		done
		;;
	valgrind)
		cfg build-vg RelWithDebInfo
		run build-vg -T memcheck -R 'test_'
		;;
	aarch64)
		if ! scripts/install_deps.sh aarch64; then
			echo "aarch64: SKIPPED (its packages could not be installed: no arm64 indices?)"
			continue
		fi
		if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64-static >/dev/null; then
			echo "aarch64: SKIPPED (no cross compiler or qemu-user; run as root to install them)"
			continue
		fi
		cfg build-aarch64 Release -DZN_BENCH=OFF \
			-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake"
		for mask in "" all; do
			echo "-- ZN_DISABLE_CPU_FEATURES=$mask"
			ZN_DISABLE_CPU_FEATURES=$mask run build-aarch64 \
				-R 'inflate|gzip|zlib|crc|adler|xxh3|cpu_features|result|checksum|bzip2_block' \
				-E '4gib|threads'
		done
		;;
	*) echo "unknown configuration $c" >&2; exit 2 ;;
	esac
done
