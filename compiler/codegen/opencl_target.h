// The opencl target, end to end on the compiler side: a step module at stage `linalg`
// (planned with kGpuBufferAlignment) in, an artifact out whose kernels are SPIR bitcode for
// the opencl driver. Each stage can be stopped at for `gptc --emit`:
//   gpu       gpt-lower-to-gpu + gpt-outline-kernels: launch schedules of gpu.launch_func
//             over one gpu.module of target-neutral kernels;
//   spirv     gpt-gpu-to-spirv: each gpu.module with its spirv.module twin;
//   launches  the artifact (its launch list: artifact_file.h LaunchListText).
#ifndef GPT_SFT_COMPILER_CODEGEN_OPENCL_TARGET_H_
#define GPT_SFT_COMPILER_CODEGEN_OPENCL_TARGET_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "artifact/artifact.h"
#include "compiler/codegen/target.h"
#include "compiler/lowering/gpu/gemm_backend.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

/// Runs gpt-lower-to-gpu and gpt-outline-kernels on `module` (stage linalg, GPU-planned).
/// OpenCL always takes the default options (every kernel generated); cuda picks its gemm.
absl::Status LowerToGpuKernels(mlir::ModuleOp module, const gpu_lowering::GpuLoweringOptions& options = {});
/// Runs gpt-gpu-to-spirv on a module LowerToGpuKernels made.
absl::Status LowerGpuKernelsToSpirv(mlir::ModuleOp module);
/// The whole target: both lowerings, SPIR bitcode, the launch list. `target` and
/// `target_description` are set; key and compile time are the caller's.
absl::StatusOr<artifact::Artifact> CompileForOpenCl(mlir::ModuleOp module, GemmChoice gemm = GemmChoice::kTiled);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_OPENCL_TARGET_H_
