//===- elide_gemm_input_rounding_pass.cc - gpt-elide-gemm-input-rounding --===//
//
// For each gpt.round_bf16 in a module under bf16 autocast: when every use of its result,
// followed through gpt.transpose and gpt.reshape (each of those used only that way too), is
// an operand of a gpt.matmul or gpt.matmul_weight_grad, its uses read its input instead and
// it is erased. Nothing else changes: the GEMMs round what they read (see the header).
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/elide_gemm_input_rounding_pass.h"

#include "ir/autocast.h"
#include "ir/gpt_dialect.h"
#include "ir/gpt_ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler {
namespace {

/// Every reader of `value`, through transposes and reshapes, is a bf16 GEMM.
bool OnlyGemmsRead(mlir::Value value) {
  if (value.use_empty()) return false;
  for (mlir::Operation* user : value.getUsers()) {
    if (llvm::isa<gpt::MatmulOp, gpt::MatmulWeightGradOp>(user)) continue;
    if (llvm::isa<gpt::TransposeOp, gpt::ReshapeOp>(user) && OnlyGemmsRead(user->getResult(0))) continue;
    return false;
  }
  return true;
}

class ElideGemmInputRoundingPass
    : public mlir::PassWrapper<ElideGemmInputRoundingPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ElideGemmInputRoundingPass)

  llvm::StringRef getArgument() const final { return "gpt-elide-gemm-input-rounding"; }
  llvm::StringRef getDescription() const final {
    return "Drop the gpt.round_bf16 that only bf16 GEMMs read (for targets whose bf16 GEMMs round their inputs)";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override { registry.insert<gpt::GptDialect>(); }

  void runOnOperation() override {
    llvm::SmallVector<gpt::RoundBf16Op> elided;
    getOperation()->walk([&](gpt::RoundBf16Op round) {
      if (UnderBf16Autocast(round) && OnlyGemmsRead(round.getResult())) elided.push_back(round);
    });
    for (gpt::RoundBf16Op round : elided) {
      round.getResult().replaceAllUsesWith(round->getOperand(0));
      round.erase();
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateElideGemmInputRoundingPass() {
  return std::make_unique<ElideGemmInputRoundingPass>();
}

void RegisterElideGemmInputRoundingPass() { mlir::PassRegistration<ElideGemmInputRoundingPass>(); }

}  // namespace gpt_sft::compiler
