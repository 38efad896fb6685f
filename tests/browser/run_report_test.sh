#!/usr/bin/env bash
# CTest's browser test: runs the small test study (tests/data/studies/study_small.yaml: GPT-3
# 1.3B on 8 devices, logic N7/N5 x memory HBM2e/HBM3, all four points feasible) into OUT, then
# opens OUT/report.html in headless Chromium. Its two plots hold 4 points each, 2 per series:
#   iteration_s_vs_logic (line, series memory) and mfu_vs_memory (bars, series logic).
# Usage: run_report_test.sh PATHFINDER OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
pathfinder=$1 out=$2
rm -rf "$out"
"$pathfinder" study tests/data/studies/study_small.yaml --out "$out" >/dev/null
node tests/browser/report_test.mjs "$out/report.html" iteration_s_vs_logic=4/2 mfu_vs_memory=4/2
