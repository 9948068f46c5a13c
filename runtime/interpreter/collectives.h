// Collectives: the interpreter's injection point for gpt.all_reduce, gpt.reduce_scatter
// and gpt.all_gather. The IR names a group ("dp"); an implementation maps it to ranks
// (MPI on CPUs later, issue 6). SingleRankCollectives is a world of one rank, in which
// every collective is the identity; it is the default.
#ifndef GPT_SFT_RUNTIME_INTERPRETER_COLLECTIVES_H_
#define GPT_SFT_RUNTIME_INTERPRETER_COLLECTIVES_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/base/tensor.h"

namespace gpt_sft::runtime {

class CachingAllocator;

/// How a collective combines ranks' values (gpt::ReductionKind, MLIR-free).
enum class Reduction { kSum, kAvg, kMax, kMin };

class Collectives {
 public:
  virtual ~Collectives() = default;

  /// Ranks in `group`; the interpreter checks the ops' group_size against it.
  virtual int GroupSize(std::string_view group) const = 0;

  /// Each returns the op's result. `x` is the operand; `allocator` serves new buffers.
  /// An implementation may return `x` itself when the result equals it.
  virtual absl::StatusOr<Tensor> AllReduce(std::string_view group, Reduction reduction,
                                           const Tensor& x, CachingAllocator* allocator) = 0;
  /// Result: x's shape with dim `dim` divided by the group size (this rank's slice).
  virtual absl::StatusOr<Tensor> ReduceScatter(std::string_view group, Reduction reduction,
                                               int64_t dim, const Tensor& x,
                                               CachingAllocator* allocator) = 0;
  /// Result: x's shape with dim `dim` multiplied by the group size, ranks in order.
  virtual absl::StatusOr<Tensor> AllGather(std::string_view group, int64_t dim,
                                           const Tensor& x, CachingAllocator* allocator) = 0;
};

/// A world of one rank: every group has size 1 and every collective returns its operand.
class SingleRankCollectives : public Collectives {
 public:
  int GroupSize(std::string_view) const override { return 1; }
  absl::StatusOr<Tensor> AllReduce(std::string_view, Reduction, const Tensor& x,
                                   CachingAllocator*) override {
    return x;
  }
  absl::StatusOr<Tensor> ReduceScatter(std::string_view, Reduction, int64_t, const Tensor& x,
                                       CachingAllocator*) override {
    return x;
  }
  absl::StatusOr<Tensor> AllGather(std::string_view, int64_t, const Tensor& x,
                                   CachingAllocator*) override {
    return x;
  }
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_INTERPRETER_COLLECTIVES_H_
