// Implements the target names.
#include "compiler/codegen/target.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::compiler {

const char* TargetName(Target target) {
  switch (target) {
    case Target::kCpu: return "cpu";
    case Target::kOpenCl: return "opencl";
    case Target::kCuda: return "cuda";
  }
  return "?";
}

absl::StatusOr<Target> ParseTarget(std::string_view name) {
  for (Target t : {Target::kCpu, Target::kOpenCl, Target::kCuda}) {
    if (name == TargetName(t)) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat("no compiler target for '", std::string(name), "' (cpu, opencl, cuda)"));
}

}  // namespace gpt_sft::compiler
