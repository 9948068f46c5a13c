//===- plan_buffers_pass.h - gpt-plan-buffers -----------------------------===//
//
// Declares the pass that plans every function's buffers (buffer_plan.h) and
// writes the plan into the IR: `gpt.offsets` (one arena offset per result, -1
// for a donated one) and `gpt.donates` (per result, the function argument it
// overwrites in place, or -1) on the ops, `gpt.arena_bytes` on the function,
// and a remark on each function with the arena's size.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_PLAN_BUFFERS_PASS_H_
#define GPT_SFT_COMPILER_TRANSFORMS_PLAN_BUFFERS_PASS_H_

#include <cstdint>
#include <memory>

#include "compiler/transforms/buffer_plan.h"

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-plan-buffers`, on any op holding functions (a module).
/// `alignment`: the bytes every buffer starts and ends on (`--gpt-plan-buffers="alignment=256"`).
std::unique_ptr<mlir::Pass> CreatePlanBuffersPass(int64_t alignment = kBufferAlignment);

/// Makes `--gpt-plan-buffers` known to the pass registry (gptc-opt).
void RegisterPlanBuffersPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_PLAN_BUFFERS_PASS_H_
