#include "engine/cli/mpi_session.hpp"

#include <cstdlib>
#include <initializer_list>

#if PATHFINDER_MPI
#include <mpi.h>
#endif

namespace pathfinder::cli {
namespace {

MpiWorld world;
#if PATHFINDER_MPI
bool started = false;

// Set by the launchers (OpenMPI's mpirun, PMI and PMIx ones such as srun).
bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}
#endif

}  // namespace

MpiSession::MpiSession([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
#if PATHFINDER_MPI
  if (!launched()) return;
  MPI_Init(argc, argv);
  started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
#endif
}

MpiSession::~MpiSession() {
#if PATHFINDER_MPI
  if (started) MPI_Finalize();
#endif
}

MpiWorld mpi_world() { return world; }

void mpi_barrier() {
#if PATHFINDER_MPI
  if (started) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void mpi_abort_others([[maybe_unused]] int code) {
#if PATHFINDER_MPI
  if (started && world.size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
}

}  // namespace pathfinder::cli
