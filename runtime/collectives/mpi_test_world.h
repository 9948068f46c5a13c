// For tests that every rank of an mpi_test runs (mpi_test.bzl): the job's MPI world, made once
// per process and never destroyed (MPI is finalised at exit). A world that cannot start aborts
// the rank with the reason, which ends the whole job instead of leaving the others waiting.
#ifndef GPT_SFT_RUNTIME_COLLECTIVES_MPI_TEST_WORLD_H_
#define GPT_SFT_RUNTIME_COLLECTIVES_MPI_TEST_WORLD_H_

#include <cstdio>
#include <cstdlib>

#include "runtime/collectives/communicator.h"
#include "runtime/collectives/mpi_communicator.h"

namespace gpt_sft::runtime::collectives {

inline Communicator& MpiTestWorld() {
  static Communicator* world = [] {
    auto made = MakeMpiCommunicator();
    if (!made.ok()) {
      std::fprintf(stderr, "MakeMpiCommunicator: %s\n", made.status().ToString().c_str());
      std::abort();
    }
    return made->release();
  }();
  return *world;
}

}  // namespace gpt_sft::runtime::collectives

#endif  // GPT_SFT_RUNTIME_COLLECTIVES_MPI_TEST_WORLD_H_
