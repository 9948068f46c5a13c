//===- lower_to_cpu_pass.h - gpt-lower-to-cpu -----------------------------===//
//
// Declares the cpu target's lowering: planned entry points (stage linalg, fusions compiled
// and tagged by CompileFusionKernels) into launch schedules of the cpu driver's library
// builtins and the compiled fusion kernels, with every kernel choice made here.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_CPU_LOWER_TO_CPU_PASS_H_
#define GPT_SFT_COMPILER_LOWERING_CPU_LOWER_TO_CPU_PASS_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-lower-to-cpu`.
std::unique_ptr<mlir::Pass> CreateLowerToCpuPass();
void RegisterLowerToCpuPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_LOWERING_CPU_LOWER_TO_CPU_PASS_H_
