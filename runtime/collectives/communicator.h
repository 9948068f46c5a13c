// Communicator: the one interface every rank-to-rank exchange goes through (DESIGN.md,
// "Collectives"). Backends: MPI for host buffers (CPU ranks), NCCL for CUDA buffers (GPU
// ranks; its unique id travels over MPI), and a world of one rank. MLIR-free: the
// interpreter, the executable and the trainer all use it.
//
// Every call is collective: every rank of the world makes it, in the same order, with the
// same counts and types. A call that cannot complete (a rank died or stopped answering
// within the backend's timeout) returns an error naming the rank(s) at fault; the world is
// unusable after that and the caller exits.
#ifndef GPT_SFT_RUNTIME_COLLECTIVES_COMMUNICATOR_H_
#define GPT_SFT_RUNTIME_COLLECTIVES_COMMUNICATOR_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/status.h"

namespace gpt_sft::runtime::collectives {

enum class DataType { kFloat32, kFloat64, kBFloat16, kInt32, kInt64, kUint64 };
enum class ReduceOp { kSum, kAvg, kMax, kMin };
/// Where a backend's buffers live.
enum class MemorySpace { kHost, kCuda };

int64_t SizeOf(DataType type);
std::string_view DataTypeName(DataType type);
std::string_view ReduceOpName(ReduceOp op);

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// "mpi", "nccl" or "single", for logs and reports.
  virtual std::string_view backend() const = 0;
  virtual MemorySpace memory_space() const = 0;

  /// In place: `buffer` holds this rank's `count` elements; on return, their reduction over
  /// every rank (kAvg: the sum divided by world_size, in the element type).
  virtual absl::Status AllReduce(void* buffer, int64_t count, DataType type, ReduceOp op) = 0;
  /// `send` holds world_size blocks of `recv_count` elements; `recv` gets block rank()
  /// reduced over every rank.
  virtual absl::Status ReduceScatter(const void* send, void* recv, int64_t recv_count, DataType type,
                                     ReduceOp op) = 0;
  /// `recv` gets every rank's `send_count` elements, in rank order.
  virtual absl::Status AllGather(const void* send, void* recv, int64_t send_count, DataType type) = 0;
  /// `buffer` on every rank gets root's `count` elements.
  virtual absl::Status Broadcast(void* buffer, int64_t count, DataType type, int root) = 0;
  virtual absl::Status Barrier() = 0;
};

/// A world of one rank (rank 0 of 1, host memory): reductions and broadcasts leave the
/// buffer as it is; gathers and scatters copy.
std::unique_ptr<Communicator> MakeSingleRankCommunicator();

}  // namespace gpt_sft::runtime::collectives

#endif  // GPT_SFT_RUNTIME_COLLECTIVES_COMMUNICATOR_H_
