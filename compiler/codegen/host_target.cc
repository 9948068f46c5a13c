// Implements DetectHostTarget through LLVM's host queries.
#include "compiler/codegen/host_target.h"

#include <algorithm>
#include <vector>

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace gpt_sft::compiler {

std::string HostTarget::Description() const { return triple + " " + cpu + " " + features; }

HostTarget DetectHostTarget() {
  HostTarget target;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = llvm::sys::getHostCPUName().str();
  // Sorted, so one host always gives one string (it is part of the cache key).
  std::vector<std::pair<std::string, bool>> features;
  for (const auto& f : llvm::sys::getHostCPUFeatures()) features.push_back({f.getKey().str(), f.getValue()});
  std::sort(features.begin(), features.end());
  llvm::SubtargetFeatures subtarget;
  for (const auto& [name, enabled] : features) subtarget.AddFeature(name, enabled);
  target.features = subtarget.getString();
  return target;
}

}  // namespace gpt_sft::compiler
