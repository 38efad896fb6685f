#!/usr/bin/env bash
# The whole test suite: set up, build with warnings as errors, run every test with CTest; then
# the same tests under AddressSanitizer and UBSan (the [paper] study tests, long joint split
# searches that the Release run covers, excepted, as are the studies whose test is whole
# strategy searches the Release run makes: the MoE dispatch study's three of DeepSeek-V3 on
# 2,048 GPUs, 7.4 minutes under ASan, and the scale-out NIC study's six on 1,024, 53 s).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The same build folder and options as scripts/run.sh, so either reuses the other's objects.
# The engine's libraries build as unity builds (one translation unit per library, the test
# files one each): a third less compile time on 2 cores than one unit per source file.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPATHFINDER_WERROR=ON \
      -DPATHFINDER_TESTS=ON -DPATHFINDER_BENCH=ON -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build build -j "$(nproc)"
ctest --test-dir build --output-on-failure -j "$(nproc)"
# The sanitized build with Clang, also with warnings as errors: a second compiler's diagnostics,
# and about a third less compile time than GCC's instrumentation on 2 cores.
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=None \
      -DCMAKE_CXX_FLAGS="-O1" -DPATHFINDER_SANITIZE=ON -DPATHFINDER_WERROR=ON \
      -DPATHFINDER_BENCH=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build build-asan -j "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -E "paper|MoE dispatch|scale-out NICs"
