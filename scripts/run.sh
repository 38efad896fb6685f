#!/usr/bin/env bash
# The main job on shipped defaults: set up, build, derive the A100-class micro-architecture,
# then run the flagship study (the paper's Fig. 9 technology scaling) into results/fig9.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The same build folder and options as scripts/test.sh, so either reuses the other's objects.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPATHFINDER_WERROR=ON \
      -DPATHFINDER_TESTS=ON -DPATHFINDER_BENCH=ON -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build build --target pathfinder -j "$(nproc)"
./build/pathfinder arch templates/a100.yaml
./build/pathfinder study studies/fig9_technology_scaling.yaml --out results/fig9 "$@"
