// MpiCommunicator: the Communicator over MPI_COMM_WORLD for host buffers (CPU ranks).
//
// Lifetime of MPI. The first MakeMpiCommunicator initialises MPI when nobody has yet
// (MPI_Init_thread asking for MPI_THREAD_SERIALIZED: calls may come from any thread, one at a
// time; each communicator holds a mutex so that its own calls never overlap) and registers
// MPI_Finalize with std::atexit, so MPI is finalised once, at exit, after main returns. If the
// program initialised MPI itself, it also finalises it. Each communicator works on its own
// duplicate of MPI_COMM_WORLD (its messages never match another's) with MPI_ERRORS_RETURN, so
// an MPI failure is a Status (MPI_Error_string), never an abort.
//
// Faults. Every call has a deadline (MpiOptions::timeout): it posts nonblocking MPI (e.g.
// MPI_Iallreduce) and polls MPI_Testall with short sleeps. A call that misses the deadline
// returns DeadlineExceeded naming the operation, its sequence number, count, type and the
// ranks that never reached it; from then on the communicator is poisoned and every call fails
// fast with that first error. MpiOptions::abandon_reason ends a wait early the same way. A buffer handed to the call that timed out may still be written
// by MPI later: the caller must not reuse it and should end the job (AbortMpiWorld) so that a
// hung peer does not keep the job alive.
#ifndef GPT_SFT_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H_
#define GPT_SFT_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/collectives/communicator.h"

namespace gpt_sft::runtime::collectives {

struct MpiOptions {
  /// How long one call may wait for the other ranks (the trainer's --collective_timeout).
  std::chrono::milliseconds timeout{60000};
  /// Asked while a call waits: a non-empty answer (why the job is ending, e.g. the launcher is
  /// tearing it down after a rank died) ends the wait at once, failed like a timeout (naming the
  /// ranks that never reached the call, the communicator poisoned). Unset: only the deadline.
  std::function<std::string()> abandon_reason;
};

/// A communicator over every rank of MPI_COMM_WORLD (collective: every rank calls it).
absl::StatusOr<std::unique_ptr<Communicator>> MakeMpiCommunicator(MpiOptions options = {});

/// True when this process was started by an MPI launcher (mpirun/mpiexec of OpenMPI, MPICH's
/// hydra, or a PMIx launcher): the environment names a world size and this rank.
bool LaunchedByMpirun();

/// Ends every rank of the job (MPI_Abort on MPI_COMM_WORLD) with `exit_code`: what a rank does
/// after a collective failed, so that the launcher stops the ranks that hang.
[[noreturn]] void AbortMpiWorld(int exit_code);

}  // namespace gpt_sft::runtime::collectives

#endif  // GPT_SFT_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H_
