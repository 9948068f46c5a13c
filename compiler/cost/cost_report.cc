// Implements BuildCostReport:
//   1. the step's shape from the StepConfig the artifact carries;
//   2. per launch: its work (launch_work.h, with the PTX facts of its kernel), priced with
//      its kernel's ptxas resources (launch_cost.h), summed into its function's totals;
//   3. the training step: micro_step x grad_accum_steps + optimizer_step, its tokens, MFU
//      and its time by launch class.
#include "compiler/cost/cost_report.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace gpt_sft::compiler::cost {
namespace {

std::string LaunchClass(const artifact::Launch& launch) {
  const std::string what = launch.kind == artifact::LaunchKind::kKernel ? KernelStem(launch.name)
                           : launch.kind == artifact::LaunchKind::kBuiltin ? launch.name
                                                                           : artifact::LaunchKindName(launch.kind);
  return absl::StrCat(what, " [", launch.op, "]");
}

FunctionCost PriceFunction(const artifact::Function& function, const GpuSpec& gpu, const StepShape& shape,
                           const ArtifactKernelFacts& facts, const ArtifactResources* resources) {
  FunctionCost out;
  out.name = function.name;
  for (size_t i = 0; i < function.launches.size(); ++i) {
    const artifact::Launch& launch = function.launches[i];
    const KernelResources* kernel = nullptr;
    if (resources != nullptr && launch.kind == artifact::LaunchKind::kKernel) {
      auto it = resources->find({launch.module, launch.name});
      if (it != resources->end()) kernel = &it->second;
    }
    LaunchRow row;
    row.index = static_cast<int>(i);
    row.kind = artifact::LaunchKindName(launch.kind);
    row.name = launch.name.empty() ? row.kind : launch.name;
    row.op = launch.op;
    row.launch_class = LaunchClass(launch);
    row.cost = PriceLaunch(WorkOfLaunch(launch, shape, facts), gpu, kernel);
    out.totals.Add(row.cost);
    out.rows.push_back(std::move(row));
  }
  return out;
}

const FunctionCost* Find(const std::vector<FunctionCost>& functions, const std::string& name) {
  for (const FunctionCost& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<ClassCost> StepClasses(const FunctionCost& micro, int accum, const FunctionCost& optimizer) {
  std::map<std::string, ClassCost> by_class;
  auto add = [&](const FunctionCost& f, int times) {
    for (const LaunchRow& row : f.rows) {
      ClassCost& c = by_class[row.launch_class];
      c.launch_class = row.launch_class;
      c.seconds += row.cost.seconds * times;
      c.launches += times;
    }
  };
  add(micro, accum);
  add(optimizer, 1);
  std::vector<ClassCost> classes;
  for (auto& [name, c] : by_class) classes.push_back(c);
  std::sort(classes.begin(), classes.end(), [](const ClassCost& a, const ClassCost& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.launch_class < b.launch_class;
  });
  return classes;
}

StepCost PriceStep(const StepConfig& config, const GpuSpec& gpu, const FunctionCost& micro,
                   const FunctionCost& optimizer) {
  StepCost step;
  step.grad_accum_steps = config.grad_accum_steps;
  step.dp_world_size = config.dp_world_size;
  step.tokens = config.batch_size * config.seq_len * config.grad_accum_steps;
  step.seconds = micro.totals.seconds * config.grad_accum_steps + optimizer.totals.seconds;
  step.seconds_without_local =
      micro.totals.seconds_without_local * config.grad_accum_steps + optimizer.totals.seconds_without_local;
  step.tokens_per_second = step.seconds > 0 ? static_cast<double>(step.tokens) / step.seconds : 0;
  step.model_flops_per_token = config.model.FlopsPerToken();
  step.model_flops = static_cast<double>(step.model_flops_per_token) * static_cast<double>(step.tokens);
  step.mfu = step.seconds > 0 ? step.model_flops / (step.seconds * gpu.bf16_tensor_flops) : 0;
  step.executed_flops = micro.totals.TotalFlops() * config.grad_accum_steps + optimizer.totals.TotalFlops();
  step.micro_step_launches = micro.totals.launches;
  step.optimizer_step_launches = optimizer.totals.launches;
  step.classes = StepClasses(micro, config.grad_accum_steps, optimizer);
  return step;
}

}  // namespace

void CostTotals::Add(const LaunchCost& cost) {
  seconds += cost.seconds;
  seconds_without_local += cost.seconds_without_local;
  for (size_t u = 0; u < kReportedUnits.size(); ++u) {
    if (cost.work.unit == kReportedUnits[u]) flops[u] += cost.work.flops;
  }
  bytes_read += cost.work.bytes_read;
  bytes_written += cost.work.bytes_written;
  local_bytes += cost.local_bytes;
  ++launches;
  if (cost.resources && cost.resources->UsesLocalMemory()) ++local_memory_launches;
  if (!cost.work.priced) ++unpriced_launches;
}

double CostTotals::TotalFlops() const {
  double total = 0;
  for (double f : flops) total += f;
  return total;
}

absl::StatusOr<CostReport> BuildCostReport(const artifact::Artifact& artifact, const GpuSpec& gpu,
                                           const ArtifactResources* resources, const std::string& ptxas) {
  if (artifact.target != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("the cost model prices cuda artifacts; this one is for '", artifact.target, "'"));
  }
  absl::StatusOr<StepConfig> config = StepConfig::FromJson(artifact.step_config);
  if (!config.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the artifact's step_config: ", config.status().message()));
  }
  CostReport report;
  report.gpu = gpu;
  report.artifact_key = artifact.key;
  report.config = *config;
  report.ptxas = ptxas;
  report.have_ptxas = resources != nullptr;
  const StepShape shape = StepShape::Of(*config);
  const ArtifactKernelFacts facts = ReadArtifactKernelFacts(artifact);
  for (const artifact::Function& f : artifact.functions) {
    report.functions.push_back(PriceFunction(f, gpu, shape, facts, resources));
  }
  const FunctionCost* micro = Find(report.functions, kMicroStepFunction);
  const FunctionCost* optimizer = Find(report.functions, kOptimizerStepFunction);
  if (micro != nullptr && optimizer != nullptr) report.step = PriceStep(*config, gpu, *micro, *optimizer);
  return report;
}

}  // namespace gpt_sft::compiler::cost
