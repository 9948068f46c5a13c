// The CUDA back end's last step out of MLIR: every gpu.module of target-neutral kernels (the
// gpt-lower-to-gpu + gpt-outline-kernels stage, the same the opencl target starts from) is
// lowered to NVVM and compiled by LLVM's NVPTX back end to PTX for one chip (MLIR 19's
// nvvm-attach-target, convert-gpu-to-nvvm with bare-pointer kernel arguments,
// gpu-module-to-binary format=isa; no GPU and no ptxas needed). Math functions come from the
// CUDA toolkit's libdevice, linked in.
//
//   absl::StatusOr<std::vector<PtxKernels>> modules = CompilePtxKernels(module, {});
#ifndef GPT_SFT_COMPILER_CODEGEN_PTX_KERNELS_H_
#define GPT_SFT_COMPILER_CODEGEN_PTX_KERNELS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

struct PtxOptions {
  std::string chip = "sm_90";  // Hopper; the PTX runs on later GPUs through the driver's JIT
  /// The CUDA toolkit (its nvvm/libdevice/libdevice.10.bc); "": $GPT_SFT_CUDA_PATH, else
  /// third_party/system_paths.bzl's CUDA_PREFIX.
  std::string toolkit;
};

struct PtxKernels {
  std::string gpu_module;            // the gpu.module's symbol (what gpu.launch_func names)
  std::string ptx;                   // PTX text, one .entry per kernel
  std::vector<std::string> kernels;  // entry points
};

/// The toolkit CompilePtxKernels uses for `options`.
std::string CudaToolkitPath(const PtxOptions& options);

/// One per gpu.module of `module` (which is left as it is). Errors name the gpu.module and
/// carry the passes' diagnostics; a missing libdevice names the path looked at.
absl::StatusOr<std::vector<PtxKernels>> CompilePtxKernels(mlir::ModuleOp module, const PtxOptions& options);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_PTX_KERNELS_H_
