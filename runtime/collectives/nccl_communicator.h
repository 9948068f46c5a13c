// NcclCommunicator: the Communicator for CUDA buffers (GPU ranks), over NCCL. NCCL and the CUDA
// driver are both reached by dlopen (nccl_api.h, runtime/device/cuda/cuda_api.h), so this builds
// and links on every machine; without them MakeNcclCommunicator is one clear error.
//
// Setup: rank 0 makes an ncclUniqueId and broadcasts it over a host `bootstrap` communicator
// (MPI in a multi-rank job, so the id travels with the launcher's job); every rank then joins
// with ncclCommInitRank on a helper thread, so that joining is bounded by the timeout too (a
// rank that never joins leaves the others with a DeadlineExceeded naming the call).
//
// The device's primary context is the one the cuda device driver uses, so device pointers
// from its buffers are valid here. Calls are synchronous for the host, like every
// Communicator: each enqueues its NCCL collective on the communicator's own stream, then polls
// cuStreamQuery and ncclCommGetAsyncError with short sleeps until the stream is done, NCCL
// reports an error (ncclGetErrorString), or the timeout passes; then it calls ncclCommAbort
// (which makes the kernels of a hung collective return) and the communicator is poisoned. NCCL does not
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
