// GpuSpec: the datasheet peaks of the GPUs the cost model prices a step on (cost_report.h),
// written once in one table (gpu_spec.cc, each row citing its source). Peaks only: how much
// of a peak a launch reaches is launch_cost.h's business.
#ifndef GPT_SFT_COMPILER_COST_GPU_SPEC_H_
#define GPT_SFT_COMPILER_COST_GPU_SPEC_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::compiler::cost {

/// The unit a launch's arithmetic runs on. A launch uses exactly one (or none: copies).
enum class ComputeUnit {
  kNone,            // moves bytes only (copies, fills, collectives)
  kBf16TensorCore,  // bf16 inputs, fp32 accumulation (mma/wgmma .bf16)
  kTf32TensorCore,  // fp32 storage multiplied at TF32 precision (cuBLASLt FAST_TF32)
  kFp32Core,        // scalar fp32 FMA pipes ("CUDA cores")
};
/// "-", "bf16-tc", "tf32-tc", "fp32".
const char* ComputeUnitName(ComputeUnit unit);

struct GpuSpec {
  std::string name;         // the --gpu spelling: "h100", "h200", "a100"
  std::string description;  // "NVIDIA H100 SXM5 80GB"
  // Dense peaks (no 2:4 sparsity), in FLOP/s.
  double bf16_tensor_flops = 0;
  double tf32_tensor_flops = 0;
  double fp32_flops = 0;
  double dram_bytes_per_second = 0;  // HBM
  /// L2 read bandwidth: what local memory (stack frames, spills) costs once it misses L1.
  /// Not a datasheet figure; gpu_spec.cc says how each is derived.
  double l2_bytes_per_second = 0;
  std::string source;  // where the figures come from

  /// The peak of `unit` (0 for kNone).
  double PeakFlops(ComputeUnit unit) const;
};

/// Every GPU of the table, in table order.
const std::vector<GpuSpec>& KnownGpus();
/// "h100, h200, a100".
std::string KnownGpuNames();
/// The GPU named `name` (case-insensitive); InvalidArgument listing the known ones otherwise.
absl::StatusOr<GpuSpec> FindGpu(std::string_view name);

}  // namespace gpt_sft::compiler::cost

#endif  // GPT_SFT_COMPILER_COST_GPU_SPEC_H_
