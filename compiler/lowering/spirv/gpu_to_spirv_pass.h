//===- gpu_to_spirv_pass.h - gpt-gpu-to-spirv -----------------------------===//
//
// Declares the OpenCL back end's conversion: every `gpu.module` of the step (target-neutral
// kernels from gpt-outline-kernels) gets a SPIR-V twin, an OpenCL-flavoured `spirv.module`
// (Kernel, Addresses, Int64, Float64; Physical64 addressing) nested at the start of it,
// which compiler/codegen serializes for the opencl driver. What the conversion adds over
// MLIR's convert-gpu-to-spirv: math ops (OpenCL extended instructions), memory spaces of the
// gpu dialect, and workgroup attributions as module-scope Workgroup variables (the
// SPIR-V kernel ABI has no attributions; the recipe in shared/recipes verified that route).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_SPIRV_GPU_TO_SPIRV_PASS_H_
#define GPT_SFT_COMPILER_LOWERING_SPIRV_GPU_TO_SPIRV_PASS_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-gpu-to-spirv`.
std::unique_ptr<mlir::Pass> CreateGpuToSpirvPass();
void RegisterGpuToSpirvPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_LOWERING_SPIRV_GPU_TO_SPIRV_PASS_H_
