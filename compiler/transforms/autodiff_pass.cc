//===- autodiff_pass.cc - gpt-autodiff ------------------------------------===//
//
// Reverse-mode differentiation over VjpOpInterface, one gpt.gradients op at a
// time:
// 1. find the active ops before it: those the loss depends on that also
//    depend on a value of `wrt` (nothing else needs a cotangent);
// 2. seed the loss's cotangent with the op's `seed` and walk the active ops in
//    reverse, asking each for its rule and summing (gpt.add) the cotangents of
//    values with several uses; the backward ops go right before gpt.gradients,
//    so every forward value they read is defined above them;
// 3. replace the op's results with the cotangents of `wrt` (zeros for a value
//    the loss does not depend on) and erase the forward ops left unused.
// Ops outside the active set are never asked for a rule, so ops without one
// (the optimizer updates, say) may sit in the same function.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/autodiff_pass.h"

#include "ir/gpt_dialect.h"
#include "ir/gpt_ops.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::Operation;
using ::mlir::success;
using ::mlir::Value;

/// The ops of `block` before `end` that need a cotangent: the loss depends on
/// them and they depend on a value of `wrt`.
llvm::DenseSet<Operation *> ActiveOps(mlir::Block &block, Operation *end, Value loss,
                                      mlir::ValueRange wrt) {
  llvm::DenseSet<Value> varied(wrt.begin(), wrt.end());
  llvm::DenseSet<Operation *> varied_ops;
  for (Operation &op : block) {
    if (&op == end) break;
    bool reads_varied = llvm::any_of(op.getOperands(), [&](Value v) { return varied.contains(v); });
    if (!reads_varied) continue;
    varied_ops.insert(&op);
    varied.insert(op.result_begin(), op.result_end());
  }
  llvm::DenseSet<Operation *> active;
  llvm::SmallVector<Value> worklist = {loss};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !varied_ops.contains(def) || !active.insert(def).second) continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  return active;
}

/// A zero tensor of a static type, for a value the loss does not depend on.
mlir::FailureOr<Value> Zeros(mlir::OpBuilder &builder, mlir::Location loc, mlir::Type type,
                             gpt::GradientsOp op, unsigned index) {
  auto tensor = llvm::cast<mlir::RankedTensorType>(type);
  if (!tensor.hasStaticShape()) {
    op.emitOpError("the loss does not depend on wrt #")
        << index << " and its type " << type << " is dynamic, so no zero gradient can be built";
    return failure();
  }
  auto zero = mlir::DenseElementsAttr::get(tensor, builder.getFloatAttr(tensor.getElementType(), 0.0));
  return builder.create<mlir::arith::ConstantOp>(loc, zero).getResult();
}

/// Adds `grad` to the cotangent of `value` (the first one is kept as is).
void Accumulate(mlir::OpBuilder &builder, llvm::DenseMap<Value, Value> &cotangents, Value value,
                Value grad) {
  auto [it, inserted] = cotangents.try_emplace(value, grad);
  if (!inserted) it->second = builder.create<gpt::AddOp>(grad.getLoc(), it->second, grad);
}

LogicalResult Differentiate(gpt::GradientsOp op) {
  mlir::Block &block = *op->getBlock();
  llvm::DenseSet<Operation *> active = ActiveOps(block, op, op.getLoss(), op.getWrt());
  mlir::OpBuilder builder(op);
  llvm::DenseMap<Value, Value> cotangents;
  cotangents[op.getLoss()] = op.getSeed();
  const llvm::DenseSet<Value> wrt(op.getWrt().begin(), op.getWrt().end());

  llvm::SmallVector<Operation *> forward;
  for (Operation &candidate : block) {
    if (&candidate == op.getOperation()) break;
    if (active.contains(&candidate)) forward.push_back(&candidate);
  }
  for (Operation *fwd : llvm::reverse(forward)) {
    llvm::SmallVector<Value> result_grads;
    bool any = false;
    for (Value result : fwd->getResults()) {
      Value grad = cotangents.lookup(result);
      any = any || grad;
      result_grads.push_back(grad);
    }
    if (!any) continue;
    auto rule = llvm::dyn_cast<gpt::VjpOpInterface>(fwd);
    if (!rule) {
      return fwd->emitOpError("lies between a value of gpt.gradients' wrt and its loss but has no VJP "
                              "rule (VjpOpInterface), so it cannot be differentiated");
    }
    for (auto [index, grad] : llvm::enumerate(result_grads)) {
      if (grad) continue;
      mlir::FailureOr<Value> zeros = Zeros(builder, fwd->getLoc(), fwd->getResult(index).getType(), op, index);
      if (failed(zeros)) return failure();
      grad = *zeros;
    }
    llvm::SmallVector<Value> operand_grads = rule.buildVjp(builder, result_grads);
    if (operand_grads.size() != fwd->getNumOperands()) {
      return fwd->emitOpError("VJP rule returned ")
             << operand_grads.size() << " cotangents for " << fwd->getNumOperands() << " operands";
    }
    for (auto [operand, grad] : llvm::zip(fwd->getOperands(), operand_grads)) {
      if (grad && (wrt.contains(operand) || active.contains(operand.getDefiningOp()))) {
        Accumulate(builder, cotangents, operand, grad);
      }
    }
  }

  llvm::SmallVector<Value> grads;
  for (auto [index, value] : llvm::enumerate(op.getWrt())) {
    Value grad = cotangents.lookup(value);
    if (!grad) {
      mlir::FailureOr<Value> zeros = Zeros(builder, op.getLoc(), value.getType(), op, index);
      if (failed(zeros)) return failure();
      grad = *zeros;
    }
    if (grad.getType() != value.getType()) {
      return op.emitOpError("the cotangent of wrt #")
             << index << " has type " << grad.getType() << ", not the value's " << value.getType();
    }
    grads.push_back(grad);
  }
  op->replaceAllUsesWith(grads);
  op->erase();
  return success();
}

/// Erases, last to first, the side-effect-free ops of `block` nobody reads
/// (the rules build both cotangents of a matmul even when one is not needed).
void EraseDeadOps(mlir::Block &block) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
    if (mlir::isOpTriviallyDead(&op)) op.erase();
  }
}

class AutodiffPass : public mlir::PassWrapper<AutodiffPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AutodiffPass)

  llvm::StringRef getArgument() const final { return "gpt-autodiff"; }
  llvm::StringRef getDescription() const final {
    return "Replace gpt.gradients with the backward pass built from the ops' VJP rules";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<gpt::GptDialect, mlir::arith::ArithDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<gpt::GradientsOp> ops;
    getOperation()->walk([&](gpt::GradientsOp op) { ops.push_back(op); });
    for (gpt::GradientsOp op : ops) {
      mlir::Block *block = op->getBlock();
      if (failed(Differentiate(op))) return signalPassFailure();
      EraseDeadOps(*block);
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateAutodiffPass() { return std::make_unique<AutodiffPass>(); }

void RegisterAutodiffPass() { mlir::PassRegistration<AutodiffPass>(); }

}  // namespace gpt_sft::compiler
