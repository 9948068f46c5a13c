// The cuda target, end to end on the compiler side: the opencl target's target-neutral GPU
// kernels (LowerToGpuKernels: gpt-lower-to-gpu + gpt-outline-kernels, the same kernels the
// OpenCL tests check numerically) compiled to PTX for sm_90 (ptx_kernels.h), and the launch
// list. Each stage for `gptc --target=cuda --emit`: gpu, ptx, launches.
#ifndef GPT_SFT_COMPILER_CODEGEN_CUDA_TARGET_H_
#define GPT_SFT_COMPILER_CODEGEN_CUDA_TARGET_H_

#include "absl/status/statusor.h"
#include "artifact/artifact.h"
#include "compiler/codegen/ptx_kernels.h"
#include "compiler/codegen/target.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

/// The whole target on a module at stage linalg (GPU-planned). `target` and
/// `target_description` are set; key and compile time are the caller's.
/// Its gemms go where `gemm` says, its attention where `attention` says (target.h).
absl::StatusOr<artifact::Artifact> CompileForCuda(mlir::ModuleOp module, GemmChoice gemm,
                                                  AttentionChoice attention = AttentionChoice::kGenerated,
                                                  const PtxOptions& options = {});

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_CUDA_TARGET_H_
