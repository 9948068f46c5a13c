// What a kernel's own PTX says about the work it does, read off the text the artifact
// carries (no CUDA toolkit needed): which of its parameters it reads and which it writes
// through global memory, and which tensor-core unit its mma instructions use, if any.
// launch_work.h turns that into the bytes a launch reads and writes: the artifact's launch
// list says which buffer each argument is, but not which way the bytes flow.
#ifndef GPT_SFT_COMPILER_COST_PTX_KERNEL_FACTS_H_
#define GPT_SFT_COMPILER_COST_PTX_KERNEL_FACTS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/cost/gpu_spec.h"

namespace gpt_sft::compiler::cost {

struct ParamAccess {
  bool read = false;     // a global (or generic) load or atomic through an address derived from it
  bool written = false;  // a global (or generic) store or atomic through one
};

struct KernelFacts {
  std::vector<ParamAccess> params;  // one per .param, in order (= the launch's arguments)
  ComputeUnit mma_unit = ComputeUnit::kNone;  // kBf16TensorCore / kTf32TensorCore when it issues mma
};

/// Every .entry of `ptx` by name. An address's parameters are found by following 64-bit
/// register arithmetic (add, mad, cvta, mov, selp, ...) back to `ld.param`, to a fixed point
/// (loops); a value loaded from memory carries no parameter (an index, not a pointer).
/// InvalidArgument when an entry's parameter list or body cannot be delimited.
absl::StatusOr<std::map<std::string, KernelFacts>> ReadPtxKernelFacts(std::string_view ptx);

}  // namespace gpt_sft::compiler::cost

#endif  // GPT_SFT_COMPILER_COST_PTX_KERNEL_FACTS_H_
