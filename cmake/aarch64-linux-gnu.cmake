# SPDX-License-Identifier: MIT
# Cross-compiling for aarch64 on Debian (gcc-aarch64-linux-gnu and the :arm64 -dev packages, see
# scripts/install_deps.sh aarch64); tests run through qemu-user. Used by `scripts/run_tests.sh
# aarch64`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static;-L;/usr/aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
