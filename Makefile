# SPDX-License-Identifier: MIT
# Top-level Makefile: wraps CMake (see CONTRIBUTING.md).
#   make            the library (.a and .so) and the command, Release, in build/ (build/znippy)
#   make demo       that, then the archive round trip on a generated tree with its throughput
#   make install    that, installed under PREFIX (default /usr/local), staged under DESTDIR
#   make check      Release build and every test: the edit-compile loop (about a minute)
#   make test       every configuration: Release, ASan+UBSan, TSan on the threaded tests, the
#                   decoder tests once per CPU-feature level, and the decoder tests cross-built
#                   for aarch64 under qemu-user (installs the Debian packages it needs when run
#                   as root, the arm64 architecture of dpkg included)
#   make bench      the archive benchmark (BENCH_ARGS="--scale 0.05" for a quick run)
#   make fuzz       the fuzzers (scripts/fuzz.sh)
#   make format     clang-format over the tracked C sources (make format-check: list what it would
#                   change, and fail if anything)
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory
CMAKE ?= cmake

PREFIX ?= /usr/local

.PHONY: all build deps install check test test-release test-asan test-tsan demo bench fuzz clean \
	format format-check

all: build

deps:
	@scripts/install_deps.sh build

# Only the library and the command: the tests, fuzzers and benchmarks are other targets of the
# same build directory, built by `make check` / `make test` / `make bench`.
build: deps
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(CMAKE) --build build -j $(JOBS) --target znippy_cli znippy znippy_shared

# The command, libznippy (.a and .so), znippy.h, znippy.pc, the man page and the bash completion
# under PREFIX (DESTDIR for staging; tests/install_check.sh checks what it installs).
install: build
	@DESTDIR="$(DESTDIR)" $(CMAKE) --install build --prefix "$(PREFIX)"

check:
	@scripts/install_deps.sh test
	@scripts/run_tests.sh release

test:
	@scripts/install_deps.sh test
	@scripts/run_tests.sh release asan tsan cpu aarch64

test-release test-asan test-tsan:
	@scripts/install_deps.sh test
	@scripts/run_tests.sh $(patsubst test-%,%,$@)

demo: build
	@scripts/demo.sh build/znippy

bench: deps
	@scripts/install_deps.sh bench
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DZN_BENCH=ON >/dev/null
	@$(CMAKE) --build build -j $(JOBS)
	@bench/run_archive_bench.sh $(BENCH_ARGS)

fuzz:
	@scripts/fuzz.sh

# Generated files carry clang-format off/on markers; nothing else is skipped.
format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	@clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h') 2>&1 | \
		sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | \
		sort -u | sed 's/^/format: would change /' | grep . && exit 1 || echo "format: clean"

clean:
	rm -rf build build-*
