// NcclCommunicator: the Communicator for CUDA buffers (GPU ranks), over NCCL. Built only where
// the CUDA toolkit is detected (@local_cuda//:defs.bzl); this header needs no CUDA headers.
//
// Setup: rank 0 makes an ncclUniqueId and broadcasts it over a host `bootstrap` communicator
// (MPI in a multi-rank job); every rank then joins with ncclCommInitRankConfig, nonblocking,
// so that joining is bounded by the timeout too.
//
// Calls are synchronous for the host, like every Communicator: each enqueues its NCCL
// collective on the communicator's own stream, then polls cudaStreamQuery and
// ncclCommGetAsyncError with short sleeps until the stream is done, NCCL reports an error
// (ncclGetErrorString), or the timeout passes; then it calls ncclCommAbort (which makes
// the kernels of a hung collective return) and the communicator is poisoned. NCCL does not
// say which peer is missing, so after a timeout the communicator asks the bootstrap (a
// Barrier, under the bootstrap's own timeout): its answer, e.g. "rank 3 never reached it",
// is part of the error. kAvg is ncclAvg.
#ifndef GPT_SFT_RUNTIME_COLLECTIVES_NCCL_COMMUNICATOR_H_
#define GPT_SFT_RUNTIME_COLLECTIVES_NCCL_COMMUNICATOR_H_

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/collectives/communicator.h"

namespace gpt_sft::runtime::collectives {

struct NcclOptions {
  /// The CUDA device of this rank; -1: bootstrap.rank() modulo the number of devices.
  int device = -1;
  /// How long one call (and joining) may take.
  std::chrono::milliseconds timeout{60000};
};

/// Collective over `bootstrap`'s world; `bootstrap` (host memory) must outlive the result.
absl::StatusOr<std::unique_ptr<Communicator>> MakeNcclCommunicator(Communicator& bootstrap,
                                                                  NcclOptions options = {});

}  // namespace gpt_sft::runtime::collectives

#endif  // GPT_SFT_RUNTIME_COLLECTIVES_NCCL_COMMUNICATOR_H_
