//===- autodiff_pass.h - gpt-autodiff -------------------------------------===//
//
// Declares the pass that replaces every gpt.gradients op with its backward
// pass, built from the VJP rules of the ops between the loss and the values
// (VjpOpInterface), in reverse order, summing cotangents where a value has
// several uses.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_AUTODIFF_PASS_H_
#define GPT_SFT_COMPILER_TRANSFORMS_AUTODIFF_PASS_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-autodiff`, on any op holding functions (a module).
std::unique_ptr<mlir::Pass> CreateAutodiffPass();

/// Makes `--gpt-autodiff` known to the pass registry (gptc-opt).
void RegisterAutodiffPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_AUTODIFF_PASS_H_
