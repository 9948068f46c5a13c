// gpt.fusion: runs its region op by op with the ops' own implementations, so a fused step
// computes exactly what the unfused one does. The region is prepared (slots, steps, last
// uses) on each run: it holds a few elementwise ops, so this costs little next to them.
// The block arguments share the operands' buffers; those are never overwritten in place,
// since the outer run still holds them (CanOverwrite sees two references).
#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/interpreter/prepared_function.h"

namespace gpt_sft::runtime::interp {
namespace {

absl::Status Fusion(OpContext& ctx) {
  auto op = ctx.As<compiler::gpt::FusionOp>();
  absl::StatusOr<PreparedFunction> body = PrepareRegionBody(op, BuiltinOps());
  if (!body.ok()) return body.status();
  Frame frame;
  frame.fn = &*body;
  frame.slots.resize(body->num_slots);
  frame.lse.resize(body->num_slots);
  frame.allocator = ctx.allocator();
  frame.collectives = &ctx.collectives();
  for (auto [i, input] : llvm::enumerate(op.getInputs())) frame.slots[i] = ctx.Get(input);
  for (int slot : body->release_at_start) frame.Release(slot);
  for (int i = 0; i < static_cast<int>(body->steps.size()); ++i) {
    OpContext inner(frame, i);
    if (absl::Status s = body->steps[i].fn(inner); !s.ok()) {
      return ctx.Error(absl::StrCat("in its body: ", s.message()));
    }
    for (int slot : body->steps[i].release_after) frame.Release(slot);
  }
  for (auto [i, result] : llvm::enumerate(op.getResults())) {
    if (absl::Status s = ctx.SetResult(result, frame.slots[body->result_slots[i]]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterFusionOps(OpRegistry& registry) { registry.Register("gpt.fusion", Fusion); }

}  // namespace gpt_sft::runtime::interp
