#!/usr/bin/env bash
# CTest's MPI test (issue 17): the small test study (tests/data/studies/study_small.yaml, four
# points) run by one process and by `mpirun -n 2`; each rank evaluates its two points (round
# robin) and rank 0 joins them into a results.csv byte for byte the single run's.
# Usage: run_mpi_study_test.sh PATHFINDER MPIEXEC OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
pathfinder=$1 mpiexec=$2 out=$3
study=tests/data/studies/study_small.yaml
rm -rf "$out"
mkdir -p "$out"
"$pathfinder" study "$study" --out "$out/one" >/dev/null
# As root (CI containers) OpenMPI wants both variables; two ranks on any core count.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  "$mpiexec" -n 2 "$pathfinder" study "$study" --out "$out/mpi" >"$out/mpi.txt"
cmp "$out/one/results.csv" "$out/mpi/results.csv"
grep -q "4 of 4 points done (evaluated by 2 MPI ranks" "$out/mpi.txt"
for rank in 0 1; do
  rows=$(($(wc -l <"$out/mpi/.ranks/$rank/results.csv") - 1))
  [ "$rows" -eq 2 ] || { echo "rank $rank wrote $rows rows, expected 2"; exit 1; }
done
test -f "$out/mpi/report.html"
echo "mpi: 2 ranks, results.csv identical to one process"
