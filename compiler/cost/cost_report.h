// CostReport: a cuda artifact's launch lists priced on one GPU (launch_cost.h), with totals
// per entry point and, for the training step (micro_step x grad_accum_steps +
// optimizer_step), predicted tokens/s and MFU. MLIR-free: it reads only the artifact and the
// StepConfig the artifact carries. cost_report_format.h renders it as text or JSON.
//
//   auto gpu = cost::FindGpu("h100");
//   auto resources = cost::RunPtxas(artifact, ptxas_path);   // optional
//   auto report = cost::BuildCostReport(artifact, *gpu, resources.ok() ? &*resources : nullptr);
//   std::cout << cost::CostReportText(*report);
#ifndef GPT_SFT_COMPILER_COST_COST_REPORT_H_
#define GPT_SFT_COMPILER_COST_COST_REPORT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "artifact/artifact.h"
#include "compiler/builder/step_config.h"
#include "compiler/cost/gpu_spec.h"
#include "compiler/cost/launch_cost.h"
#include "compiler/cost/ptxas_report.h"

namespace gpt_sft::compiler::cost {

/// The compute units in the order reports list FLOPs by unit.
inline constexpr std::array<ComputeUnit, 3> kReportedUnits = {
    ComputeUnit::kBf16TensorCore, ComputeUnit::kTf32TensorCore, ComputeUnit::kFp32Core};

struct LaunchRow {
  int index = 0;
  std::string kind;          // "kernel", "builtin", "copy", "fill", "collective"
  std::string name;          // the kernel's symbol, the builtin's name, ...
  std::string op;            // what it computes ("gpt.matmul", "fusion(round_bf16,add)")
  std::string launch_class;  // "<kernel stem or builtin> [<op>]": rows summed in "where the time goes"
  LaunchCost cost;
};

struct CostTotals {
  double seconds = 0;
  double seconds_without_local = 0;  // LaunchCost::seconds_without_local, summed
  std::array<double, kReportedUnits.size()> flops = {};  // by kReportedUnits
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t local_bytes = 0;
  int64_t launches = 0;
  int64_t local_memory_launches = 0;  // launches of kernels ptxas reports a stack frame or spills for
  int64_t unpriced_launches = 0;      // collectives, ...

  void Add(const LaunchCost& cost);
  double TotalFlops() const;
};

struct FunctionCost {
  std::string name;
  std::vector<LaunchRow> rows;
  CostTotals totals;
};

/// A launch class's share of the training step.
struct ClassCost {
  std::string launch_class;
  double seconds = 0;
  int64_t launches = 0;
};

struct StepCost {
  int grad_accum_steps = 1;
  int dp_world_size = 1;
  int64_t tokens = 0;        // B x T x grad_accum_steps: positions one GPU processes per step
  double seconds = 0;        // micro_step x grad_accum_steps + optimizer_step
  double seconds_without_local = 0;  // the same with no launch paying for local memory
  double tokens_per_second = 0;  // one GPU
  /// nanochat's estimate_flops (ModelConfig::FlopsPerToken): 6 (N - N_wte) + 12 L H D T, the
  /// attention term for full, not causal, attention, as nanochat reports MFU.
  int64_t model_flops_per_token = 0;
  double model_flops = 0;
  double mfu = 0;            // model_flops / (seconds x the GPU's bf16 tensor peak)
  double executed_flops = 0;  // what the launches compute (recomputation included)
  int64_t micro_step_launches = 0;
  int64_t optimizer_step_launches = 0;
  std::vector<ClassCost> classes;  // the step's time by launch class, longest first
};

struct CostReport {
  GpuSpec gpu;
  std::string artifact_key;
  StepConfig config;
  /// "ptxas -arch=sm_90 -v (<path>)", or "n/a (no ptxas): <why>": the ptxas columns' source.
  std::string ptxas;
  bool have_ptxas = false;
  std::vector<FunctionCost> functions;
  std::optional<StepCost> step;  // when the artifact has micro_step and optimizer_step
};

/// Prices every launch of every function of `artifact` (a cuda artifact: InvalidArgument
/// otherwise, or when its step_config does not parse). `resources` may be null (no ptxas);
/// `ptxas` says where they came from or why there are none.
absl::StatusOr<CostReport> BuildCostReport(const artifact::Artifact& artifact, const GpuSpec& gpu,
                                           const ArtifactResources* resources, const std::string& ptxas);

}  // namespace gpt_sft::compiler::cost

#endif  // GPT_SFT_COMPILER_COST_COST_REPORT_H_
