// CommunicatorCollectives: the interpreter's Collectives over a collectives::Communicator
// (MPI ranks on CPUs). The IR's group "dp" (data parallel) is the communicator's whole world;
// the interpreter knows no other group yet, and naming one is an error that says so.
//
// Tensors are row-major; the Communicator moves flat blocks along the slowest dim. A
// reduce_scatter or all_gather along another dim packs the operand (or unpacks the result)
// so that each rank's slice is one contiguous block. Results and staging buffers come from
// the CachingAllocator passed in; the operand is never written.
#ifndef GPT_SFT_RUNTIME_INTERPRETER_COMMUNICATOR_COLLECTIVES_H_
#define GPT_SFT_RUNTIME_INTERPRETER_COMMUNICATOR_COLLECTIVES_H_

#include <string_view>

#include "runtime/collectives/communicator.h"
#include "runtime/interpreter/collectives.h"

namespace gpt_sft::runtime {

class CommunicatorCollectives final : public Collectives {
 public:
  /// `communicator` must outlive this object.
  explicit CommunicatorCollectives(collectives::Communicator& communicator) : communicator_(communicator) {}

  /// The world size for "dp"; 0 for any other group (the interpreter then reports the op's
  /// group_size against 0 ranks, naming the group).
  int GroupSize(std::string_view group) const override;

  absl::StatusOr<Tensor> AllReduce(std::string_view group, Reduction reduction, const Tensor& x,
                                   CachingAllocator* allocator) override;
  absl::StatusOr<Tensor> ReduceScatter(std::string_view group, Reduction reduction, int64_t dim, const Tensor& x,
                                       CachingAllocator* allocator) override;
  absl::StatusOr<Tensor> AllGather(std::string_view group, int64_t dim, const Tensor& x,
                                   CachingAllocator* allocator) override;

 private:
  absl::Status CheckGroup(std::string_view op, std::string_view group) const;

  collectives::Communicator& communicator_;
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_INTERPRETER_COMMUNICATOR_COLLECTIVES_H_
