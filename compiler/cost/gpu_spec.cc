// The GPU table. Every compute and HBM figure is NVIDIA's datasheet figure, dense (the
// datasheets print tensor-core figures "with sparsity", twice these):
//   H100 SXM5: NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100):
//     FP32 67 TFLOP/s, TF32 tensor 989 sparse -> 494.5 dense, BF16 1979 sparse -> 989 dense
//     (nanochat's H100 MFU denominator, 989e12),
//     HBM3 3.35 TB/s.
//   H200 SXM: NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200): the same GH100
//     compute figures as H100 SXM5, HBM3e 4.8 TB/s.
//   A100 SXM4 80GB: NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): FP32 19.5,
//     TF32 tensor 156, BF16 tensor 312 (dense), HBM2e 2.039 TB/s.
// L2 bandwidth is on no datasheet. The A100 whitepaper ("NVIDIA A100 Tensor Core GPU
// Architecture", 2020, table of L2 figures) gives 5120 bytes/clock of L2 read bandwidth:
// x 1.41 GHz = 7.2 TB/s. NVIDIA publishes no per-clock figure for Hopper; we assume the same
// 5120 bytes/clock at H100 SXM's 1.98 GHz boost = 10.1 TB/s, between the ~5.5-7 TB/s that
// chipsandcheese.com measured on the smaller H100 PCIe (114 SMs, 2023) and the ~12 TB/s
// quoted informally. It prices only local-memory traffic (launch_cost.h).
#include "compiler/cost/gpu_spec.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpt_sft::compiler::cost {
namespace {

constexpr double kTera = 1e12;

std::vector<GpuSpec> MakeTable() {
  const char* hopper_source =
      "NVIDIA H100/H200 datasheets (dense tensor-core figures); L2: 5120 B/clk x 1.98 GHz (see gpu_spec.cc)";
  return {
      {"h100", "NVIDIA H100 SXM5 80GB", 989 * kTera, 494.5 * kTera, 67 * kTera, 3.35 * kTera, 10.1 * kTera,
       hopper_source},
      {"h200", "NVIDIA H200 SXM 141GB", 989 * kTera, 494.5 * kTera, 67 * kTera, 4.8 * kTera, 10.1 * kTera,
       hopper_source},
      {"a100", "NVIDIA A100 SXM4 80GB", 312 * kTera, 156 * kTera, 19.5 * kTera, 2.039 * kTera, 7.2 * kTera,
       "NVIDIA A100 datasheet; L2: 5120 B/clk x 1.41 GHz (A100 whitepaper)"},
  };
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

const char* ComputeUnitName(ComputeUnit unit) {
  switch (unit) {
    case ComputeUnit::kNone: return "-";
    case ComputeUnit::kBf16TensorCore: return "bf16-tc";
    case ComputeUnit::kTf32TensorCore: return "tf32-tc";
    case ComputeUnit::kFp32Core: return "fp32";
  }
  return "?";
}

double GpuSpec::PeakFlops(ComputeUnit unit) const {
  switch (unit) {
    case ComputeUnit::kNone: return 0;
    case ComputeUnit::kBf16TensorCore: return bf16_tensor_flops;
    case ComputeUnit::kTf32TensorCore: return tf32_tensor_flops;
    case ComputeUnit::kFp32Core: return fp32_flops;
  }
  return 0;
}

const std::vector<GpuSpec>& KnownGpus() {
  static const std::vector<GpuSpec>* table = new std::vector<GpuSpec>(MakeTable());
  return *table;
}

std::string KnownGpuNames() {
  std::vector<std::string> names;
  for (const GpuSpec& g : KnownGpus()) names.push_back(g.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<GpuSpec> FindGpu(std::string_view name) {
  const std::string wanted = Lower(name);
  for (const GpuSpec& g : KnownGpus()) {
    if (g.name == wanted) return g;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown GPU '", std::string(name), "'; known: ", KnownGpuNames()));
}

}  // namespace gpt_sft::compiler::cost
