//===- lower_to_gpu_pass.h - gpt-lower-to-gpu -----------------------------===//
//
// Declares the pass that lowers every planned entry point of a module (stage linalg:
// placed by gpt-plan-buffers with the GPU alignment, fusions as linalg.generic) into its
// launch schedule of target-neutral GPU kernels: gpu.launch ops written by the kernel
// generators (gpu_kernels.h), elementwise work tiled onto workgroups with the transform
// dialect, copies and collectives. gpt-outline-kernels then makes the kernels gpu.funcs.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_LOWER_TO_GPU_PASS_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_LOWER_TO_GPU_PASS_H_

#include <cstdint>
#include <memory>

#include "compiler/lowering/gpu/gemm_backend.h"

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// Bytes every buffer a GPU kernel reads starts on: OpenCL sub-buffers need the device's
/// base-address alignment (128 bytes on PoCL), CUDA wants 256 for coalesced access.
inline constexpr int64_t kGpuBufferAlignment = 256;

/// `--gpt-lower-to-gpu` (options gemm=tiled|vendor, attention=generated|cudnn and
/// mma=emulated|nvvm: gptc-opt's spelling of GpuLoweringOptions).
std::unique_ptr<mlir::Pass> CreateLowerToGpuPass(const gpu_lowering::GpuLoweringOptions& options = {});
void RegisterLowerToGpuPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_LOWER_TO_GPU_PASS_H_
