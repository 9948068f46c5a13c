// Implements the target names.
#include "compiler/codegen/target.h"

#include <cstdlib>
#include <string>

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

const char* GemmChoiceVariable(Target target) {
  switch (target) {
    case Target::kCuda: return "GPT_SFT_CUDA_GEMM";
    case Target::kOpenCl: return "GPT_SFT_OPENCL_GEMM";
    case Target::kCpu: return "";
  }
  return "";
}

std::string GemmChoiceName(Target target, GemmChoice choice) {
  if (choice == GemmChoice::kTiled) return "tiled";
  return target == Target::kCuda ? "cublaslt" : target == Target::kOpenCl ? "clblast" : "tiled";
}

absl::StatusOr<GemmChoice> GemmChoiceFor(Target target) {
  if (target == Target::kCpu) return GemmChoice::kTiled;
  const char* env = std::getenv(GemmChoiceVariable(target));
  const std::string value = env == nullptr ? "" : env;
  // cuBLASLt is what a CUDA user expects; on OpenCL the generated gemm stays the default (CLBlast
  // is a choice where it is installed and tuned for the device).
  if (value.empty()) return target == Target::kCuda ? GemmChoice::kVendor : GemmChoice::kTiled;
  if (value == "tiled") return GemmChoice::kTiled;
  if (value == GemmChoiceName(target, GemmChoice::kVendor)) return GemmChoice::kVendor;
  return absl::InvalidArgumentError(absl::StrCat(GemmChoiceVariable(target), "='", value, "': the ", TargetName(target),
                                                 " target's gemm is ", GemmChoiceName(target, GemmChoice::kVendor),
                                                 " or tiled"));
}

const char* AttentionChoiceName(AttentionChoice choice) {
  return choice == AttentionChoice::kCudnn ? "cudnn" : "generated";
}

absl::StatusOr<AttentionChoice> AttentionChoiceFor(Target target) {
  if (target != Target::kCuda) return AttentionChoice::kGenerated;
  const char* env = std::getenv(kAttentionChoiceVariable);
  const std::string value = env == nullptr ? "" : env;
  // The generated kernels stay the default: they run packed rows and match the interpreter
  // in f32, where cuDNN computes in bf16 and needs the library at run time.
  if (value.empty() || value == "generated") return AttentionChoice::kGenerated;
  if (value == "cudnn") return AttentionChoice::kCudnn;
  return absl::InvalidArgumentError(absl::StrCat(kAttentionChoiceVariable, "='", value,
                                                 "': the cuda target's attention is generated or cudnn"));
}

absl::StatusOr<Target> ParseTarget(std::string_view name) {
  for (Target t : {Target::kCpu, Target::kOpenCl, Target::kCuda}) {
    if (name == TargetName(t)) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat("no compiler target for '", std::string(name), "' (cpu, opencl, cuda)"));
}

}  // namespace gpt_sft::compiler
