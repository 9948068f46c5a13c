//===- norm_ops.cc - gpt.rms_norm and gpt.rms_norm_grad -------------------===//
//
// This file implements the parameter-free RMSNorm over the last dim: its shape
// rule (the result has x's type), the eps check, and the VJP rule, which emits
// the fused gpt.rms_norm_grad (dx = r (dy - y mean(dy y)), r = rsqrt(ms + eps)).
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

//===----------------------------------------------------------------------===//
// RmsNormOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::inferReturnTypes(mlir::MLIRContext *,
                                          std::optional<mlir::Location> loc, Adaptor adaptor,
                                          llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, "rms_norm", "x", adaptor.getX());
  if (!x) return failure();
  if (x.getRank() < 1) {
    return ShapeError(loc, "rms_norm", "x must have a last dim to normalise, got " +
                                           TypeString(x));
  }
  results.push_back(x);
  return success();
}

LogicalResult RmsNormOp::verify() { return VerifyPositiveAttr(*this, "eps", getEps()); }

llvm::SmallVector<Value> RmsNormOp::buildVjp(mlir::OpBuilder &builder,
                                             llvm::ArrayRef<Value> result_grads) {
  Value dx = builder.create<RmsNormGradOp>(getLoc(), getX(), result_grads[0], getEpsAttr());
  return {dx};
}

//===----------------------------------------------------------------------===//
// RmsNormGradOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormGradOp::inferReturnTypes(mlir::MLIRContext *,
                                              std::optional<mlir::Location> loc,
                                              Adaptor adaptor,
                                              llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, "rms_norm_grad", "x", adaptor.getX());
  RankedTensorType dy = RankedOrError(loc, "rms_norm_grad", "dy", adaptor.getDy());
  if (!x || !dy) return failure();
  auto shape = MergeShapes(loc, "rms_norm_grad", "x and dy", x, dy);
  if (failed(shape)) return failure();
  if (x.getRank() < 1) {
    return ShapeError(loc, "rms_norm_grad", "x must have a last dim, got " + TypeString(x));
  }
  results.push_back(RankedTensorType::get(*shape, x.getElementType()));
  return success();
}

LogicalResult RmsNormGradOp::verify() { return VerifyPositiveAttr(*this, "eps", getEps()); }

}  // namespace gpt_sft::compiler::gpt
