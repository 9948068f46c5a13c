// What a step is compiled for. MLIR-free: the trainer picks the target from its --device
// flag (a device driver's name) without seeing the compiler's IR.
#ifndef GPT_SFT_COMPILER_CODEGEN_TARGET_H_
#define GPT_SFT_COMPILER_CODEGEN_TARGET_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpt_sft::compiler {

enum class Target {
  kCpu,     // host shared object (fusions) + the cpu driver's library builtins
  kOpenCl,  // every kernel generated: gpu dialect -> SPIR-V -> SPIR bitcode
  kCuda,    // the same kernels: gpu dialect -> NVVM -> PTX (sm_90)
};

/// Where the cuda target computes products of matrices: cuBLASLt through the cuda driver's
/// builtin (the default), or the compiler's own tiled gemm (the portable kernel OpenCL runs).
enum class CudaGemm { kCublasLt, kTiled };
/// From GPT_SFT_CUDA_GEMM: unset or "cublaslt", or "tiled"; InvalidArgument naming the
/// variable otherwise. Part of the cuda target's cache key.
absl::StatusOr<CudaGemm> CudaGemmFromEnvironment();
const char* CudaGemmName(CudaGemm gemm);

/// "cpu", "opencl", "cuda": the name of the device driver that runs the target's artifacts.
const char* TargetName(Target target);
/// From a driver name ("cpu", "opencl", "cuda"); InvalidArgument listing the targets otherwise.
absl::StatusOr<Target> ParseTarget(std::string_view name);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_TARGET_H_
