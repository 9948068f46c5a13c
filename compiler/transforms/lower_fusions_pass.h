//===- lower_fusions_pass.h - gpt-lower-fusions ---------------------------===//
//
// Declares the pass that lowers each elementwise gpt.fusion region to one
// linalg.generic over its (single, static) shape, with the region's ops as
// arith/math scalar code: the first step of the fusion regions' path to LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_LOWER_FUSIONS_PASS_H_
#define GPT_SFT_COMPILER_TRANSFORMS_LOWER_FUSIONS_PASS_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-lower-fusions`.
std::unique_ptr<mlir::Pass> CreateLowerFusionsPass();
void RegisterLowerFusionsPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_LOWER_FUSIONS_PASS_H_
