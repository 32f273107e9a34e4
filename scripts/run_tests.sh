#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_tests.sh - build and run the test suite in named configurations.
# Usage: scripts/run_tests.sh CONFIG...   (`make test` runs release asan tsan cpu aarch64)
#   release   Release build (build/), every test with its whole workload; the benchmark drivers
#             are compiled too; the C tests' scratch files on the disk ($TMPDIR), the shell
#             tests' on tmpfs
#   asan      ASan+UBSan build (build-asan/, Debug assertions on), every test
#   tsan      TSan build (build-tsan/), the tests that start threads (CTest label `threads`)
#   cpu       the decoder and checksum tests (label `kernels`) of the Release build (build/),
#             rerun once per CPU-feature level masked (ZN_DISABLE_CPU_FEATURES), all masks in one
#             ctest run (the tests NAME@MASK, label `sweep`, registered with ZN_CPU_SWEEP=ON); the
#             unmasked level is the release configuration's run, repeated here only without it;
#             a mask that takes away only features this CPU lacks is left out
#   valgrind  the unit tests under valgrind memcheck (build-vg/)
#   aarch64   cross-build for aarch64 (build-aarch64/, cmake/aarch64-linux-gnu.cmake) and run
#             the decoder and checksum tests (label `qemu`) under qemu-user, with the
#             NEON/PMULL/CRC32 kernels and with them masked (label `sweep`), in one ctest run.
#             Only single-threaded tests (ZN_TEST_NO_THREADS=1): under Debian 12's qemu-user 7.2
#             on this kernel even a bare pthread_create() never returns, so the archive pipeline
#             cannot run emulated. Installs what it needs when run as root (adding the arm64
#             architecture to dpkg: it says so); skipped otherwise.
# Every configuration but release sets ZN_TEST_QUICK=1 (tests/test_util.h: tu_quick, and QUICK
# in tests/clitest_lib.sh): the same code paths on smaller inputs or fewer repetitions. A test
# that runs past ZN_TEST_TIMEOUT seconds (default 300) fails.
# The labels are defined in CMakeLists.txt. A configuration that runs a subset builds only what
# that subset needs (the zn_tests_LABEL targets).
# Scratch space: release runs the C tests in $TMPDIR (default /tmp) as a user would, on a disk
# filesystem, and the shell tests (ZN_TEST_TMP) in a fresh directory in /dev/shm when that is a
# writable tmpfs; the other configurations put both there (TMPDIR: the C tests' tu_mkdtemp and
# the command's spool files). Creating and removing files on this VM's ext4 is slow
# (test_archive_inputs: 18 s there, 1 s on tmpfs, nearly all of it system time; the shell tests
# took 46.6 CPU s there, 34.5 of it system time, most in cli_index_damage and
# cli_index_damage_meta, which make thousands of directories, and 17.7 on tmpfs), and what the sanitizers, the CPU
# sweep and the command's end-to-end tests look for does not depend on the filesystem; the C
# archive tests keep the disk in the suite.
# ZN_TEST_JOBS: how many tests ctest runs at once (default: the CPU count + 1, since the shell
# tests spend part of their time waiting on processes they start).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
test_jobs=${ZN_TEST_JOBS:-$((jobs + 1))}
cfg() { # dir, build type, [--target T], extra cmake args...
	local dir=$1 type=$2 target=()
	shift 2
	if [ "${1:-}" = --target ]; then
		target=(--target "$2")
		shift 2
	fi
	local t0=$SECONDS
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" "$@" >/dev/null
	# The build's own status: `|| true` inside the braces keeps grep's from counting, where
	# after the whole pipeline it would reset PIPESTATUS (a failed build then ran old tests).
	cmake --build "$dir" -j "$jobs" "${target[@]}" 2>&1 |
		{ grep -Ev '^\[ *[0-9]+%\]|^Consolidate|^Scanning|^Built target' || true; }
	local st=${PIPESTATUS[0]}
	build_s=$((build_s + SECONDS - t0))
	return "$st"
}
# Sanitizer builds: debug information as line tables only (-g1), which is what their reports
# print (function, file and line); full -g made compiling 20% slower.
sanitized=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
run() { # dir, ctest args...
	local dir=$1
	shift
	# A test that hangs fails after ZN_TEST_TIMEOUT seconds instead of stalling the run.
	(cd "$dir" && ctest --output-on-failure --no-tests=error -j "$test_jobs" \
		--timeout "${ZN_TEST_TIMEOUT:-300}" "$@")
}
# on_tmpfs [shell]: the scratch directory in /dev/shm described above, for the rest of this
# configuration: ZN_TEST_TMP, and TMPDIR unless "shell" is given.
scratch=
on_tmpfs() {
	[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ] || return 0
	scratch=$(mktemp -d /dev/shm/zntest.XXXXXX)
	chmod 1777 "$scratch" # as /tmp: the tests that run as another user (uid 65534) reach it
	export ZN_TEST_TMP=$scratch
	[ "${1:-}" = shell ] || export TMPDIR=$scratch
}
cleanup() { [ -z "$scratch" ] || rm -rf "$scratch"; }
# ZN_TEST_CACHE: what stays the same from one configuration to the next within this run, the
# external compressors' outputs of test_inflate_corpus (see there).
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
	ZN_TEST_CACHE=$(mktemp -d /dev/shm/zncache.XXXXXX)
else
	ZN_TEST_CACHE=$(mktemp -d)
fi
export ZN_TEST_CACHE
trap 'cleanup; rm -rf "$times_out" "$ZN_TEST_CACHE"' EXIT
user_tmp=${TMPDIR-} user_test_tmp=${ZN_TEST_TMP-}
# The time each configuration took, printed at the end: wall seconds, and the CPU seconds (user +
# system) of everything it ran, from the shell's `times` (which the machine's load does not
# inflate as much as the wall time).
times_out=$(mktemp)
cpu_now() { # sets CPU: the CPU seconds of the children so far (`times` must run in this shell)
	times >"$times_out"
	CPU=$(awk 'NR == 2 { gsub(/[ms]/, " "); print int($1 * 60 + $2 + $3 * 60 + $4) }' "$times_out")
}
summary=()
for c in "$@"; do
	echo "== configuration: $c"
	cpu_now
	start=$SECONDS start_cpu=$CPU build_s=0
	cleanup
	scratch=
	if [ -n "$user_tmp" ]; then export TMPDIR=$user_tmp; else unset TMPDIR; fi
	if [ -n "$user_test_tmp" ]; then export ZN_TEST_TMP=$user_test_tmp; else unset ZN_TEST_TMP; fi
	if [ "$c" = release ]; then on_tmpfs shell; else on_tmpfs; fi
	# Every configuration but release runs the tests' quick workload (tests/test_util.h).
	if [ "$c" = release ]; then unset ZN_TEST_QUICK; else export ZN_TEST_QUICK=1; fi
	case $c in
	release) # two statements, not `cfg && run`: set -e does not act on the left of &&
		cfg build Release -DZN_TESTS=ON -DZN_BENCH=ON -DZN_CPU_SWEEP=ON
		run build -LE '^sweep$'
		;;
	asan)
		cfg build-asan RelWithDebInfo "${sanitized[@]}" -DZN_SANITIZE=address,undefined \
			-DZN_TESTS=ON -DZN_BENCH=OFF
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run build-asan
		;;
	tsan)
		cfg build-tsan RelWithDebInfo --target zn_tests_threads "${sanitized[@]}" \
			-DZN_SANITIZE=thread -DZN_TESTS=ON -DZN_BENCH=OFF
		TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
			run build-tsan -L '^threads$'
		;;
	cpu)
		# The same build directory and options as release: nothing is rebuilt after it.
		cfg build Release --target zn_tests_kernels -DZN_TESTS=ON -DZN_BENCH=ON -DZN_CPU_SWEEP=ON
		# A mask that takes away only what this CPU lacks runs what the mask before it ran
		# (the first: the unmasked run): those tests are left out.
		skip=()
		flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
		[[ $flags == *" avx512f "* ]] || skip+=('@avx512$')
		[[ $flags == *" avx2 "* ]] || skip+=('@avx512\+avx2$')
		[[ $flags == *" bmi2 "* ]] || skip+=('@avx512\+avx2\+bmi2$')
		if [ ${#skip[@]} -gt 0 ]; then
			skip=(-E "$(IFS='|'; echo "${skip[*]}")")
			echo "cpu: left out (they would mask only what this CPU lacks): ${skip[1]}"
		fi
		if [[ " $* " == *" release "* ]]; then run build -L '^sweep$' "${skip[@]}"
		else run build -L '^(kernels|sweep)$' "${skip[@]}"; fi
		;;
	valgrind)
		cfg build-vg RelWithDebInfo -DZN_TESTS=ON
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
		cfg build-aarch64 Release --target zn_tests_qemu -DZN_TESTS=ON -DZN_BENCH=OFF \
			-DZN_CPU_SWEEP=ON -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake"
		ZN_TEST_NO_THREADS=1 run build-aarch64 -L '^(qemu|sweep)$'
		;;
	*) echo "unknown configuration $c" >&2; exit 2 ;;
	esac
	cpu_now
	summary+=("$c $((SECONDS - start)) s (build $build_s s, CPU $((CPU - start_cpu)) s)")
done
if [ ${#summary[@]} -gt 0 ]; then
	line="== done: ${summary[0]}"
	for x in "${summary[@]:1}"; do line+=", $x"; done
	echo "$line"
fi
