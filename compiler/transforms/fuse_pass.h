//===- fuse_pass.h - gpt-fuse ---------------------------------------------===//
//
// Declares the pass that wraps each maximal chain of elementwise ops (gpt.add,
// gpt.mul, gpt.relu_square, gpt.relu_square_grad, gpt.softcap,
// gpt.softcap_grad, gpt.round_bf16) of one type, adjacent in the dataflow (each
// feeds the next), whose intermediates are used only inside the chain, into one
// gpt.fusion region. A lone gpt.round_bf16 becomes a fusion of its own (the
// targets have no separate kernel for it). A first version: single-result
// groups; matmul, attention and all other ops stay outside.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_FUSE_PASS_H_
#define GPT_SFT_COMPILER_TRANSFORMS_FUSE_PASS_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-fuse`, on any op holding functions (a module). `bf16_softcap_builtins`
/// (`--gpt-fuse="bf16-softcap-builtins=true"`): a bf16 gpt.softcap, a gpt.softcap_grad under
/// bf16 autocast and a gpt.round_bf16 only one of them reads stay unfused, for a target that
/// lowers them to its own kernels (the cpu target: fused with the cross-entropy).
std::unique_ptr<mlir::Pass> CreateFusePass(bool bf16_softcap_builtins = false);

/// Makes `--gpt-fuse` known to the pass registry (gptc-opt).
void RegisterFusePass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_FUSE_PASS_H_
