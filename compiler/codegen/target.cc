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

absl::StatusOr<CudaGemm> CudaGemmFromEnvironment() {
  const char* env = std::getenv("GPT_SFT_CUDA_GEMM");
  const std::string value = env == nullptr ? "" : env;
  if (value.empty() || value == "cublaslt") return CudaGemm::kCublasLt;
  if (value == "tiled") return CudaGemm::kTiled;
  return absl::InvalidArgumentError(
      absl::StrCat("GPT_SFT_CUDA_GEMM='", value, "': the cuda target's gemm is cublaslt (the default) or tiled"));
}

const char* CudaGemmName(CudaGemm gemm) { return gemm == CudaGemm::kCublasLt ? "cublaslt" : "tiled"; }

absl::StatusOr<Target> ParseTarget(std::string_view name) {
  for (Target t : {Target::kCpu, Target::kOpenCl, Target::kCuda}) {
    if (name == TargetName(t)) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat("no compiler target for '", std::string(name), "' (cpu, opencl, cuda)"));
}

}  // namespace gpt_sft::compiler
