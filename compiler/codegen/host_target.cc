// Implements DetectHostTarget through LLVM's host queries.
#include "compiler/codegen/host_target.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_join.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

namespace gpt_sft::compiler {

std::string HostTarget::Description() const { return triple + " " + cpu + " " + features; }

HostTarget DetectHostTarget() {
  HostTarget target;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> enabled;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    if (feature.getValue()) enabled.push_back("+" + feature.getKey().str());
  }
  std::sort(enabled.begin(), enabled.end());
  target.features = absl::StrJoin(enabled, ",");
  return target;
}

}  // namespace gpt_sft::compiler
