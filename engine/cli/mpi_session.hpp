// Running under mpirun (issue 17): `mpirun -n R pathfinder study FILE` spreads a study's points
// over R processes, on one machine or many, as `--shard` does by hand. MPI starts only when a
// launcher started this process (its environment says so) and the build has MPI
// (PATHFINDER_MPI, OpenMPI from Debian; optional); otherwise the world is one process.
#pragma once

namespace pathfinder::cli {

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

struct MpiWorld {
  int rank = 0;
  int size = 1;
};
// This process's place in the world (rank 0 of 1 without MPI).
[[nodiscard]] MpiWorld mpi_world();
// Waits for every rank; nothing without MPI.
void mpi_barrier();
// Ends every rank with `code` after a rank's error, so none waits at a barrier forever; returns
// without MPI or in a world of one.
void mpi_abort_others(int code);

}  // namespace pathfinder::cli
