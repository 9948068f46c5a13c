//===- verify_static_pass.cc - gpt-verify-static --------------------------===//
//
// The compiled path plans buffers and kernels at compile time, so it needs
// every shape known; this pass states that contract as a check that runs
// before any pass relying on it (DESIGN.md "Compiler pipeline"). All
// violations are reported, not only the first, so one run shows them all.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/verify_static_pass.h"

#include <string>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::Type;

/// A tensor type with a dynamic dim (or no rank); other types have no shape to check.
bool IsDynamicTensor(Type type) {
  auto tensor = llvm::dyn_cast<mlir::TensorType>(type);
  return tensor && !tensor.hasStaticShape();
}

/// The batch arguments the data loader fills, each [B, T] of i32.
bool IsBatchArgumentName(llvm::StringRef name) {
  return name == "inputs" || name == "targets" || name == "segment_ids" || name == "positions";
}

/// `argument 28 ("inputs")`, or `argument 3` for an unnamed one.
std::string ArgumentName(mlir::func::FuncOp func, unsigned index) {
  std::string text = "argument " + std::to_string(index);
  if (auto name = func.getArgAttrOfType<mlir::StringAttr>(index, "gpt.name")) {
    text += " (\"" + name.getValue().str() + "\")";
  }
  return text;
}

/// An error at the argument's location, naming the function and the argument.
mlir::InFlightDiagnostic EmitArgumentError(mlir::func::FuncOp func, unsigned index) {
  mlir::Location loc = func.isExternal() ? func.getLoc() : func.getArgument(index).getLoc();
  mlir::InFlightDiagnostic diag = mlir::emitError(loc);
  diag << "'func.func' @" << func.getSymName() << " " << ArgumentName(func, index);
  return diag;
}

class VerifyStaticPass : public mlir::PassWrapper<VerifyStaticPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyStaticPass)

  VerifyStaticPass() = default;
  VerifyStaticPass(int64_t batch, int64_t seq) {
    batch_ = batch;
    seq_ = seq;
  }
  // Options are not copyable; Pass::clone copies their values after this.
  VerifyStaticPass(const VerifyStaticPass &other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const final { return "gpt-verify-static"; }
  llvm::StringRef getDescription() const final {
    return "Check that every tensor is static and the batch arguments are [batch, seq]";
  }

  void runOnOperation() override {
    bool ok = true;
    getOperation()->walk([&](mlir::func::FuncOp func) { ok &= VerifyFunction(func); });
    if (!ok) signalPassFailure();
  }

 private:
  bool VerifyFunction(mlir::func::FuncOp func) {
    bool ok = true;
    mlir::FunctionType type = func.getFunctionType();
    for (unsigned i = 0; i < type.getNumInputs(); ++i) ok &= VerifyArgument(func, i);
    for (unsigned i = 0; i < type.getNumResults(); ++i) {
      if (!IsDynamicTensor(type.getResult(i))) continue;
      func.emitOpError() << "@" << func.getSymName() << " result " << i << " has type "
                         << type.getResult(i)
                         << ", but the static contract requires a static shape";
      ok = false;
    }
    func.getBody().walk([&](mlir::Operation *op) {
      for (mlir::OpResult result : op->getResults()) {
        if (!IsDynamicTensor(result.getType())) continue;
        op->emitOpError() << "result #" << result.getResultNumber() << " has type "
                          << result.getType()
                          << ", but the static contract requires a static shape";
        ok = false;
      }
    });
    return ok;
  }

  bool VerifyArgument(mlir::func::FuncOp func, unsigned index) {
    Type type = func.getFunctionType().getInput(index);
    if (IsDynamicTensor(type)) {
      EmitArgumentError(func, index) << " has type " << type
                         << ", but the static contract requires a static shape";
      return false;
    }
    if (batch_ < 0 || seq_ < 0) return true;
    auto name = func.getArgAttrOfType<mlir::StringAttr>(index, "gpt.name");
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!name || !IsBatchArgumentName(name.getValue()) || !tensor ||
        !tensor.getElementType().isInteger(32)) {
      return true;
    }
    llvm::SmallVector<int64_t, 2> expected = {batch_.getValue(), seq_.getValue()};
    if (tensor.getShape() == llvm::ArrayRef<int64_t>(expected)) return true;
    EmitArgumentError(func, index)
        << " has type " << type << ", but the static contract (batch=" << batch_.getValue()
        << " seq=" << seq_.getValue() << ") requires [" << batch_.getValue() << ", "
        << seq_.getValue() << "]";
    return false;
  }

  Option<int64_t> batch_{*this, "batch", llvm::cl::desc("rows per micro-batch (B); -1: unchecked"),
                         llvm::cl::init(-1)};
  Option<int64_t> seq_{*this, "seq", llvm::cl::desc("positions per row (T); -1: unchecked"),
                       llvm::cl::init(-1)};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateVerifyStaticPass(int64_t batch, int64_t seq) {
  return std::make_unique<VerifyStaticPass>(batch, seq);
}

void RegisterVerifyStaticPass() { mlir::PassRegistration<VerifyStaticPass>(); }

}  // namespace gpt_sft::compiler
