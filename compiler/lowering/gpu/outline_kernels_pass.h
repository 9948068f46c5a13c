//===- outline_kernels_pass.h - gpt-outline-kernels -----------------------===//
//
// Declares the pass that turns every gpu.launch of the launch schedules into a
// gpu.launch_func of a kernel in one `gpu.module @kernels`: constants are sunk into the
// body, the body is outlined into a gpu.func named after its gpt.kernel_name, and kernels
// whose code is identical (the same generator on the same shapes: every layer's) are
// emitted once and launched many times.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_OUTLINE_KERNELS_PASS_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_OUTLINE_KERNELS_PASS_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// The module the kernels are outlined into.
inline constexpr char kKernelModuleName[] = "kernels";

/// `--gpt-outline-kernels`.
std::unique_ptr<mlir::Pass> CreateOutlineKernelsPass();
void RegisterOutlineKernelsPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_OUTLINE_KERNELS_PASS_H_
