# SPDX-License-Identifier: MIT
# Top-level Makefile: wraps CMake. `make` builds Release into build/ (command: build/znippy);
# `make test` builds and runs every test (Release, ASan+UBSan, TSan on the pipelines, the
# decoder tests once per CPU-feature level, and the decoder tests cross-built for aarch64 under
# qemu-user);
# `make bench` runs the archive benchmark (BENCH_ARGS="--scale 0.05" for a quick run);
# `make demo` runs the archive round trip on a generated tree and prints the throughput;
# `make install [PREFIX=/usr/local] [DESTDIR=...]` installs the command and the library.
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory
CMAKE ?= cmake

PREFIX ?= /usr/local

.PHONY: all build deps install test test-release test-asan test-tsan demo bench fuzz clean format

all: build

deps:
	@scripts/install_deps.sh build

build: deps
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(CMAKE) --build build -j $(JOBS)

# The command, libznippy (.a and .so), znippy.h and znippy.pc under PREFIX (DESTDIR for staging).
install: build
	@DESTDIR="$(DESTDIR)" $(CMAKE) --install build --prefix "$(PREFIX)"

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
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(CMAKE) --build build -j $(JOBS)
	@bench/run_archive_bench.sh $(BENCH_ARGS)

fuzz:
	@scripts/fuzz.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-*
