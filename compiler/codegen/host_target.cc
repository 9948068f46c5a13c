// Implements DetectHostTarget through LLVM's host queries.
#include "compiler/codegen/host_target.h"

#include <algorithm>
#include <vector>

#include "base/cpu_isa.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace gpt_sft::compiler {

std::string HostTarget::Description() const { return triple + " " + cpu + " " + features; }

namespace {

// Below the CPU's own level (GPT_SFT_CPU_ISA caps it), the step is compiled for the x86-64
// psABI level that matches the cap, so it runs what a CPU of that level runs: x86-64
// (SSE2), x86-64-v3 (AVX2, FMA, BMI, F16C), x86-64-v4 (and AVX512F/BW/CD/DQ/VL). Under
// avx512_bf16 on an AMX CPU: this CPU without its AMX features.
bool CappedTarget(HostTarget& target, const std::vector<std::pair<std::string, bool>>& host_features) {
  const CpuIsa level = ActiveCpuIsa();
  if (level == NativeCpuIsa()) return false;
  switch (level) {
    case CpuIsa::kGeneric: target.cpu = "x86-64"; return true;
    case CpuIsa::kAvx2: target.cpu = "x86-64-v3"; return true;
    case CpuIsa::kAvx512: target.cpu = "x86-64-v4"; return true;
    case CpuIsa::kAvx512Bf16:
    case CpuIsa::kAmx: break;
  }
  llvm::SubtargetFeatures subtarget;
  for (const auto& [name, enabled] : host_features)
    subtarget.AddFeature(name, enabled && name.rfind("amx-", 0) != 0);
  target.features = subtarget.getString();
  return true;
}

}  // namespace

HostTarget DetectHostTarget() {
  HostTarget target;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = llvm::sys::getHostCPUName().str();
  // Sorted, so one host always gives one string (it is part of the cache key).
  std::vector<std::pair<std::string, bool>> features;
  for (const auto& f : llvm::sys::getHostCPUFeatures()) features.push_back({f.getKey().str(), f.getValue()});
  std::sort(features.begin(), features.end());
  if (CappedTarget(target, features)) return target;
  llvm::SubtargetFeatures subtarget;
  for (const auto& [name, enabled] : features) subtarget.AddFeature(name, enabled);
  target.features = subtarget.getString();
  return target;
}

}  // namespace gpt_sft::compiler
