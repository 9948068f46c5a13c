//===- verify_static_pass.h - gpt-verify-static ---------------------------===//
//
// Declares the pass that checks the static contract of the compiled path:
// every tensor type in every function (arguments, results, op results,
// nested regions included) has a static shape, and, when `batch` and `seq`
// are given, every i32 argument named (gpt.name) inputs, targets,
// segment_ids or positions is exactly [batch, seq]. A violation is an error
// on the op (or the function, for an argument) that names the value and both
// shapes, and the pass fails.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_VERIFY_STATIC_PASS_H_
#define GPT_SFT_COMPILER_TRANSFORMS_VERIFY_STATIC_PASS_H_

#include <cstdint>
#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-verify-static`; batch/seq < 0: no [B, T] check of the batch arguments.
std::unique_ptr<mlir::Pass> CreateVerifyStaticPass(int64_t batch = -1, int64_t seq = -1);

/// Makes `--gpt-verify-static="batch=B seq=T"` known to the pass registry (gptc-opt).
void RegisterVerifyStaticPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_VERIFY_STATIC_PASS_H_
