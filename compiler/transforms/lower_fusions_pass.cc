//===- lower_fusions_pass.cc - gpt-lower-fusions --------------------------===//
//
// For every gpt.fusion whose inputs and results all have one static shape and
// one float element type (what gpt-fuse forms):
// 1. build `linalg.generic` with identity indexing maps and parallel iterators,
//    the fusion's inputs as `ins` and one `tensor.empty` per result as `outs`;
// 2. in its body, map each region op to scalar arith/math code on the element:
//      add: a + b           mul: a * b
//      relu_square: max(x, 0)^2          relu_square_grad: 2 max(x, 0) dy
//      softcap: cap tanh(x / cap)        softcap_grad: (1 - (y / cap)^2) dy
//      round_bf16: the f32 bits rounded to their top half (round to nearest even)
//    and yield what the region yields;
// 3. move the fusion's discardable attributes (gpt-plan-buffers' gpt.offsets)
//    to the generic, name the region's ops on it (gpt.fusion_ops, for profiles) and
//    replace the fusion's results with the generic's.
// A fusion it cannot lower (another op inside, mixed shapes) is an error naming
// the op, so nothing is left half-lowered.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/lower_fusions_pass.h"

#include "ir/fusion_label.h"
#include "ir/gpt_dialect.h"
#include "ir/gpt_ops.h"
#include "compiler/transforms/elementwise_scalar.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::success;
using ::mlir::Value;

/// Every input and result of `fusion` is the same static float tensor type.
mlir::RankedTensorType CommonType(gpt::FusionOp fusion) {
  mlir::RankedTensorType common;
  llvm::SmallVector<mlir::Type> types(fusion.getInputs().getTypes());
  types.append(fusion.getResultTypes().begin(), fusion.getResultTypes().end());
  for (mlir::Type type : types) {
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || !llvm::isa<mlir::FloatType>(tensor.getElementType())) return {};
    if (common && tensor != common) return {};
    common = tensor;
  }
  return common;
}

/// The region's ops in order, without the dialect prefix: "round_bf16,add".
std::string RegionOps(mlir::Block& body) {
  std::string ops;
  for (mlir::Operation& op : body.without_terminator()) {
    if (!ops.empty()) ops += ",";
    ops += op.getName().stripDialect().str();
  }
  return ops;
}

LogicalResult Lower(gpt::FusionOp fusion) {
  mlir::RankedTensorType type = CommonType(fusion);
  if (!type) {
    return fusion.emitOpError("gpt-lower-fusions: inputs and results must share one static float tensor type");
  }
  mlir::OpBuilder b(fusion);
  mlir::Location loc = fusion.getLoc();
  llvm::SmallVector<Value> outs;
  for (unsigned i = 0; i < fusion.getNumResults(); ++i) {
    outs.push_back(b.create<mlir::tensor::EmptyOp>(loc, type.getShape(), type.getElementType()));
  }
  const unsigned n = fusion.getInputs().size() + outs.size();
  llvm::SmallVector<mlir::AffineMap> maps(n, b.getMultiDimIdentityMap(type.getRank()));
  llvm::SmallVector<mlir::utils::IteratorType> iterators(type.getRank(), mlir::utils::IteratorType::parallel);
  mlir::Block& body = fusion.getBody().front();
  bool lowered = true;
  auto generic = b.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange(llvm::SmallVector<mlir::Type>(outs.size(), type)), fusion.getInputs(), outs, maps,
      iterators, [&](mlir::OpBuilder& nested, mlir::Location nested_loc, mlir::ValueRange scalars) {
        llvm::DenseMap<Value, Value> scalar_of;
        for (auto [arg, scalar] : llvm::zip(body.getArguments(), scalars)) scalar_of[arg] = scalar;
        for (mlir::Operation& op : body.without_terminator()) {
          llvm::SmallVector<Value> in;
          for (Value operand : op.getOperands()) in.push_back(scalar_of.lookup(operand));
          mlir::FailureOr<Value> scalar = EmitElementwiseScalar(nested, nested_loc, &op, in);
          if (failed(scalar)) {
            op.emitOpError("gpt-lower-fusions: no scalar lowering for this op inside a gpt.fusion");
            lowered = false;
            scalar = in[0];  // keeps the body well formed until the pass fails
          }
          scalar_of[op.getResult(0)] = *scalar;
        }
        llvm::SmallVector<Value> yielded;
        for (Value v : fusion.getYield().getValues()) yielded.push_back(scalar_of.lookup(v));
        nested.create<mlir::linalg::YieldOp>(nested_loc, yielded);
      });
  if (!lowered) return failure();
  // gpt-plan-buffers' placement (gpt.offsets) stays with the computation it placed.
  for (mlir::NamedAttribute attr : fusion->getDiscardableAttrs()) generic->setAttr(attr.getName(), attr.getValue());
  generic->setAttr(kFusionOpsAttr, b.getStringAttr(RegionOps(body)));
  fusion.replaceAllUsesWith(generic.getResults());
  fusion.erase();
  return success();
}

class LowerFusionsPass : public mlir::PassWrapper<LowerFusionsPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerFusionsPass)

  llvm::StringRef getArgument() const final { return "gpt-lower-fusions"; }
  llvm::StringRef getDescription() const final {
    return "Lower elementwise gpt.fusion regions to linalg.generic with arith/math bodies";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::arith::ArithDialect, mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                    mlir::tensor::TensorDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<gpt::FusionOp> fusions;
    getOperation()->walk([&](gpt::FusionOp op) { fusions.push_back(op); });
    for (gpt::FusionOp fusion : fusions) {
      if (failed(Lower(fusion))) return signalPassFailure();
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateLowerFusionsPass() { return std::make_unique<LowerFusionsPass>(); }

void RegisterLowerFusionsPass() { mlir::PassRegistration<LowerFusionsPass>(); }

}  // namespace gpt_sft::compiler
