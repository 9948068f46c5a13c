//===- vjp_test_pass.cc - --gpt-test-vjp ----------------------------------===//
//
// This file implements the test pass of vjp_test_pass.h:
// 1. collect the ops implementing VjpOpInterface (before building anything, so
//    the rules' own ops are not visited);
// 2. for each, set the insertion point after it and call buildVjp with the
//    op's results as the result cotangents;
// 3. fail the pass when a rule fails or returns the wrong number of values.
//
//===----------------------------------------------------------------------===//

#include "ir/vjp_test_pass.h"

#include "ir/gpt_ops.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler::gpt {
namespace {

class VjpTestPass
    : public mlir::PassWrapper<VjpTestPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VjpTestPass)

  llvm::StringRef getArgument() const final { return "gpt-test-vjp"; }
  llvm::StringRef getDescription() const final {
    return "Test only: build every op's VJP rule with its results as cotangents";
  }

  void runOnOperation() override {
    llvm::SmallVector<VjpOpInterface> ops;
    getOperation()->walk([&](VjpOpInterface op) { ops.push_back(op); });
    for (VjpOpInterface op : ops) {
      mlir::OpBuilder builder(op->getContext());
      builder.setInsertionPointAfter(op);
      llvm::SmallVector<mlir::Value> grads(op->getResults().begin(), op->getResults().end());
      llvm::SmallVector<mlir::Value> cotangents = op.buildVjp(builder, grads);
      if (cotangents.size() != op->getNumOperands()) {
        op->emitError("VJP rule returned ")
            << cotangents.size() << " cotangents for " << op->getNumOperands() << " operands";
        return signalPassFailure();
      }
      for (auto [index, value] : llvm::enumerate(cotangents)) {
        mlir::Operation *def = value ? value.getDefiningOp() : nullptr;
        if (def && def != op.getOperation()) {
          def->setAttr("gpt.vjp_of", builder.getStringAttr(
                                         op->getName().getStringRef() + "#" +
                                         std::to_string(index)));
        }
      }
    }
  }
};

}  // namespace

void RegisterVjpTestPass() { mlir::PassRegistration<VjpTestPass>(); }

}  // namespace gpt_sft::compiler::gpt
