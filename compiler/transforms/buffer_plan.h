//===- buffer_plan.h - static memory planning of one function -------------===//
//
// Declares the analysis behind gpt-plan-buffers: for a single-block func.func
// with static shapes, the bytes of every intermediate (every result of an op of
// the body; function arguments live in caller-owned buffers), its live range in
// block order, and an offset in one arena such that values live at the same
// time never share bytes; a gpt.reshape of an op's result shares that result's bytes (a
// view: no copy) and keeps them live as long as it is read. Optimizer updates (gpt.adamw_update,
// gpt.muon_update) write their new parameter and state in place over a
// function argument's buffer (the argument is donated) and take no arena bytes.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_BUFFER_PLAN_H_
#define GPT_SFT_COMPILER_TRANSFORMS_BUFFER_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace mlir {
class Operation;
namespace func {
class FuncOp;
}  // namespace func
}  // namespace mlir

namespace gpt_sft::compiler {

/// Every buffer starts and ends on this boundary by default (a cache line, AVX-512 loads);
/// GPU targets plan with a larger one (compiler/lowering/gpu: kGpuBufferAlignment).
inline constexpr int64_t kBufferAlignment = 64;

/// The buffer of one op result.
struct Slot {
  mlir::Operation* op = nullptr;  // the defining op, directly in the function's block
  int result = 0;                 // which result of `op`
  int64_t bytes = 0;              // element bytes x elements, rounded up to the plan's alignment
  // The live range, as indices of ops in the block, both ends included: from the
  // defining op to the last op that reads it (its ancestor in the block, for a use
  // nested in a region); a value func.return returns lives to the return.
  int64_t first = 0;
  int64_t last = 0;
  int64_t offset = -1;     // in the arena; -1 when donated
  int donated_arg = -1;    // the function argument whose buffer it overwrites, or -1
  // A gpt.reshape result is a view of its operand's bytes, and an elementwise result may
  // take the bytes of an operand that dies at it: the index (in BufferPlan::slots) of the
  // slot it shares, whose live range is extended to cover it; -1 otherwise.
  int alias_of = -1;

  bool donated() const { return donated_arg >= 0; }
  bool aliased() const { return alias_of >= 0; }
  bool LiveWith(const Slot& other) const { return first <= other.last && other.first <= last; }
};

struct BufferPlan {
  int64_t arena_bytes = 0;     // the arena: max over slots of offset + bytes
  int64_t naive_bytes = 0;     // one buffer per intermediate: the sum of the arena slots' bytes
  int64_t live_peak_bytes = 0; // a lower bound: the most bytes live at any one op
  int64_t donated_bytes = 0;   // bytes written in place over donated arguments
  int64_t aliased_bytes = 0;   // views (reshapes) and in-place elementwise results
  std::vector<Slot> slots;     // in block order (op, then result)

  int64_t num_arena_slots() const;
};

/// Plans `func`. Offsets are chosen greedily, largest slot first (ties in program
/// order), each at the best-fitting gap (the smallest one it fits, lowest offset on a
/// tie) among the slots already placed whose live ranges overlap its own, else on
/// top of them. The error names the op and value with a dynamic or unsized type, or
/// the function with more than one block; `at_fault`, when given, receives the op to
/// report at (the function itself for a multi-block body). Every slot starts and ends on
/// `alignment` bytes (a power of two).
absl::StatusOr<BufferPlan> PlanBuffers(mlir::func::FuncOp func,
                                       mlir::Operation** at_fault = nullptr,
                                       int64_t alignment = kBufferAlignment);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_BUFFER_PLAN_H_
