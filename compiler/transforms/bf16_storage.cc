//===- bf16_storage.cc - gpt-mark-bf16-storage ----------------------------===//
//
// One walk over each function's block in program order: a result is marked when the rule
// of its op says it is a bf16 value (see the header), reshapes and transposes following
// their operand, which the walk has already decided. Returned values stay f32.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/bf16_storage.h"

#include "ir/autocast.h"
#include "ir/gpt_dialect.h"
#include "ir/gpt_ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler {

bool StoredAsBf16(mlir::Value value) {
  auto result = llvm::dyn_cast_or_null<mlir::OpResult>(value);
  if (!result) return false;
  auto flags = result.getOwner()->getAttrOfType<mlir::DenseBoolArrayAttr>(kBf16StorageAttr);
  return flags && result.getResultNumber() < flags.size() && flags[result.getResultNumber()];
}

namespace {

/// Ops whose result autocast rounds after their last inner op.
bool RoundsItsResult(mlir::Operation* op) {
  if (!op) return false;
  if (llvm::isa<gpt::RoundBf16Op>(op)) return true;
  if (llvm::isa<gpt::RotaryOp, gpt::RotaryGradOp, gpt::SoftcapOp>(op)) return op->hasAttr("round_bf16");
  return false;
}

bool IsBf16Valued(mlir::OpResult result) {
  mlir::Operation* op = result.getOwner();
  if (auto fusion = llvm::dyn_cast<gpt::FusionOp>(op)) {
    return RoundsItsResult(fusion.getYield()->getOperand(result.getResultNumber()).getDefiningOp());
  }
  if (llvm::isa<gpt::ReshapeOp, gpt::TransposeOp>(op)) return StoredAsBf16(op->getOperand(0));
  return llvm::isa<gpt::RotaryOp, gpt::RotaryGradOp>(op) && RoundsItsResult(op);
}

/// The function returns `value`, or a reshape or transpose of it (whose storage must match).
bool Returned(mlir::Value value) {
  return llvm::any_of(value.getUsers(), [](mlir::Operation* user) {
    if (llvm::isa<mlir::func::ReturnOp>(user)) return true;
    return llvm::isa<gpt::ReshapeOp, gpt::TransposeOp>(user) && Returned(user->getResult(0));
  });
}

class MarkBf16StoragePass : public mlir::PassWrapper<MarkBf16StoragePass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkBf16StoragePass)

  llvm::StringRef getArgument() const final { return "gpt-mark-bf16-storage"; }
  llvm::StringRef getDescription() const final {
    return "Mark the results that are bf16 values so the GPU targets store them in 2 bytes";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override { registry.insert<gpt::GptDialect>(); }

  void runOnOperation() override {
    getOperation()->walk([&](mlir::func::FuncOp func) {
      if (func.isDeclaration() || !UnderBf16Autocast(func)) return;
      for (mlir::Operation& op : func.getBody().front()) {
        if (op.getNumResults() == 0) continue;
        llvm::SmallVector<bool> flags;
        bool any = false;
        for (mlir::OpResult result : op.getResults()) {
          auto type = llvm::dyn_cast<mlir::RankedTensorType>(result.getType());
          flags.push_back(type && type.getElementType().isF32() && IsBf16Valued(result) && !Returned(result));
          any |= flags.back();
        }
        if (any) op.setAttr(kBf16StorageAttr, mlir::DenseBoolArrayAttr::get(&getContext(), flags));
      }
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateMarkBf16StoragePass() { return std::make_unique<MarkBf16StoragePass>(); }

void RegisterMarkBf16StoragePass() { mlir::PassRegistration<MarkBf16StoragePass>(); }

}  // namespace gpt_sft::compiler
