#!/usr/bin/env bash
# The main job on shipped defaults: set up, build, derive the A100-class micro-architecture.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPATHFINDER_TESTS=OFF -DPATHFINDER_BENCH=OFF >/dev/null
cmake --build build --target pathfinder -j "$(nproc)"
./build/pathfinder arch templates/a100.yaml "$@"
