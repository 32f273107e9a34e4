#!/usr/bin/env bash
# run_tests.sh - build and run the test suite in named configurations.
#   release   Release build, every test
#   asan      ASan+UBSan build (Debug assertions on), every test
#   tsan      TSan build, the multithreaded tests (label-free: names matching archive|pipeline|cli|threads)
#   cpu       rerun the decoder tests once per CPU-feature level (ZN_DISABLE_CPU_FEATURES)
#   valgrind  the unit tests under valgrind memcheck
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
	release) cfg build Release -DZN_BENCH=ON && run build ;;
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
			ZN_DISABLE_CPU_FEATURES=$mask run build-cpu -R 'deflate|inflate|gzip|zlib|crc|adler'
		done
		;;
	valgrind)
		cfg build-vg RelWithDebInfo
		run build-vg -T memcheck -R 'test_'
		;;
	*) echo "unknown configuration $c" >&2; exit 2 ;;
	esac
done
