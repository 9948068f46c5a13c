//===- plan_buffers_pass.cc - gpt-plan-buffers ----------------------------===//
//
// This file implements gpt-plan-buffers: PlanBuffers on every func.func, then
// the plan as attributes (the lowering reads them to address the arena) and a
// remark with the arena's size, so `gptc` and gptc-opt users see the peak
// memory of each entry point at compile time.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/plan_buffers_pass.h"

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "compiler/transforms/buffer_plan.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler {
namespace {

constexpr char kOffsetsAttr[] = "gpt.offsets";
constexpr char kDonatesAttr[] = "gpt.donates";
constexpr char kArenaBytesAttr[] = "gpt.arena_bytes";

/// Per op, one offset and one donated argument per result.
struct OpPlan {
  llvm::SmallVector<int64_t> offsets;
  llvm::SmallVector<int64_t> donates;
  bool any_donated = false;
};

void Annotate(mlir::func::FuncOp func, const BufferPlan& plan) {
  llvm::DenseMap<mlir::Operation*, OpPlan> ops;
  for (const Slot& slot : plan.slots) {
    OpPlan& op = ops[slot.op];
    op.offsets.resize(slot.op->getNumResults(), -1);
    op.donates.resize(slot.op->getNumResults(), -1);
    op.offsets[slot.result] = slot.offset;
    op.donates[slot.result] = slot.donated_arg;
    op.any_donated |= slot.donated();
  }
  mlir::Builder builder(func.getContext());
  for (auto& [op, op_plan] : ops) {
    op->setAttr(kOffsetsAttr, builder.getDenseI64ArrayAttr(op_plan.offsets));
    if (op_plan.any_donated) op->setAttr(kDonatesAttr, builder.getDenseI64ArrayAttr(op_plan.donates));
  }
  func->setAttr(kArenaBytesAttr, builder.getI64IntegerAttr(plan.arena_bytes));
}

std::string Summary(const BufferPlan& plan) {
  std::string s = absl::StrFormat("arena %d bytes (%.2f MiB) for %d intermediates; naive %d bytes",
                                  plan.arena_bytes, plan.arena_bytes / (1024.0 * 1024.0),
                                  plan.num_arena_slots(), plan.naive_bytes);
  if (plan.donated_bytes > 0) absl::StrAppendFormat(&s, "; %d bytes in place", plan.donated_bytes);
  if (plan.aliased_bytes > 0) absl::StrAppendFormat(&s, "; %d bytes as views or in place", plan.aliased_bytes);
  return s;
}

class PlanBuffersPass : public mlir::PassWrapper<PlanBuffersPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PlanBuffersPass)

  PlanBuffersPass() = default;
  explicit PlanBuffersPass(int64_t alignment) { alignment_ = alignment; }
  // Options are not copyable; Pass::clone copies their values after this.
  PlanBuffersPass(const PlanBuffersPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const final { return "gpt-plan-buffers"; }
  llvm::StringRef getDescription() const final {
    return "Plan every intermediate's bytes in one arena (offsets, in-place updates, peak)";
  }

  void runOnOperation() override {
    std::vector<mlir::func::FuncOp> funcs;
    getOperation()->walk([&](mlir::func::FuncOp func) { funcs.push_back(func); });
    bool failed = false;
    for (mlir::func::FuncOp func : funcs) {
      if (func.isExternal()) continue;
      mlir::Operation* at_fault = func;
      absl::StatusOr<BufferPlan> plan = PlanBuffers(func, &at_fault, alignment_);
      if (!plan.ok()) {
        at_fault->emitError(std::string(plan.status().message()));
        failed = true;
        continue;
      }
      Annotate(func, *plan);
      func.emitRemark(Summary(*plan));
    }
    if (failed) signalPassFailure();
  }

 private:
  Option<int64_t> alignment_{*this, "alignment",
                             llvm::cl::desc("bytes every buffer starts and ends on (a power of two)"),
                             llvm::cl::init(kBufferAlignment)};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreatePlanBuffersPass(int64_t alignment) {
  return std::make_unique<PlanBuffersPass>(alignment);
}

void RegisterPlanBuffersPass() { mlir::PassRegistration<PlanBuffersPass>(); }

}  // namespace gpt_sft::compiler
