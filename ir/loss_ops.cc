//===- loss_ops.cc - gpt.cross_entropy and gpt.cross_entropy_grad ---------===//
//
// This file implements the loss: mean softmax cross-entropy of logits [N, V]
// against targets [N] (i32) over the targets != ignore_index, a rank-0 result,
// and its fused gradient (softmax - onehot) * dloss / count.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "ir/shape_rules.h"

namespace gpt_sft::compiler::gpt {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::RankedTensorType;
using ::mlir::success;
using ::mlir::Type;
using ::mlir::Value;

namespace {

/// logits [N, V] and targets [N]; returns the logits' type or null.
RankedTensorType CheckLogitsAndTargets(std::optional<mlir::Location> loc, llvm::StringRef op,
                                       Value logits_value, Value targets_value) {
  RankedTensorType logits = RankedOrError(loc, op, "logits", logits_value);
  RankedTensorType targets = RankedOrError(loc, op, "targets", targets_value);
  if (!logits || !targets) return nullptr;
  if (logits.getRank() != 2 || targets.getRank() != 1 ||
      !DimsCompatible(logits.getDimSize(0), targets.getDimSize(0))) {
    (void)ShapeError(loc, op, "expected logits [N, V] and targets [N], got " +
                                  TypeString(logits) + " and " + TypeString(targets));
    return nullptr;
  }
  return logits;
}

}  // namespace

//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(mlir::MLIRContext *,
                                               std::optional<mlir::Location> loc,
                                               Adaptor adaptor,
                                               llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType logits =
      CheckLogitsAndTargets(loc, "cross_entropy", adaptor.getLogits(), adaptor.getTargets());
  if (!logits) return failure();
  results.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

llvm::SmallVector<Value> CrossEntropyOp::buildVjp(mlir::OpBuilder &builder,
                                                  llvm::ArrayRef<Value> result_grads) {
  Value dlogits = builder.create<CrossEntropyGradOp>(
      getLoc(), getLogits(), getTargets(), result_grads[0], getIgnoreIndexAttr());
  return {dlogits, Value()};
}

//===----------------------------------------------------------------------===//
// CrossEntropyGradOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyGradOp::inferReturnTypes(mlir::MLIRContext *,
                                                   std::optional<mlir::Location> loc,
                                                   Adaptor adaptor,
                                                   llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType logits = CheckLogitsAndTargets(loc, "cross_entropy_grad",
                                                  adaptor.getLogits(), adaptor.getTargets());
  if (!logits) return failure();
  RankedTensorType dloss = RankedOrError(loc, "cross_entropy_grad", "dloss", adaptor.getDloss());
  if (!dloss) return failure();
  if (dloss.getRank() != 0) {
    return ShapeError(loc, "cross_entropy_grad",
                      "dloss must be rank 0, got " + TypeString(dloss));
  }
  results.push_back(logits);
  return success();
}

}  // namespace gpt_sft::compiler::gpt
