//===- rotary_ops.cc - gpt.rotary and gpt.rotary_grad ---------------------===//
//
// This file implements rotary position embedding over x [B, T, H, D] with the
// optional per-token positions [B, T] (i32): the shape rule both ops share, the
// checks on D (even), base (positive) and round_bf16 (f32 only), and the VJP rule.
// The rotation is orthogonal, so the cotangent is the inverse rotation of dy
// (gpt.rotary_grad), rounded the same way.
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

/// x [B, T, H, D] with D even when static; positions (may be null) [B, T].
LogicalResult InferRotary(std::optional<mlir::Location> loc, llvm::StringRef op, Value x_value,
                          Value positions_value, llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, op, "x", x_value);
  if (!x) return failure();
  if (x.getRank() != 4) {
    return ShapeError(loc, op, "x must be [B, T, H, D], got " + TypeString(x));
  }
  int64_t d = x.getDimSize(3);
  if (!mlir::ShapedType::isDynamic(d) && d % 2 != 0) {
    return ShapeError(loc, op, "head dim D must be even (half-split pairs), got " +
                                   TypeString(x));
  }
  if (positions_value) {
    RankedTensorType pos = RankedOrError(loc, op, "positions", positions_value);
    if (!pos) return failure();
    if (pos.getRank() != 2 || !DimsCompatible(pos.getDimSize(0), x.getDimSize(0)) ||
        !DimsCompatible(pos.getDimSize(1), x.getDimSize(1))) {
      return ShapeError(loc, op, "positions must be [B, T] of x " + TypeString(x) +
                                     ", got " + TypeString(pos));
    }
  }
  results.push_back(x);
  return success();
}

/// round_bf16 rounds f32 values; on other element types it would mean nothing.
LogicalResult VerifyRounding(mlir::Operation *op, bool round_bf16, Value x) {
  if (!round_bf16 || llvm::cast<RankedTensorType>(x.getType()).getElementType().isF32()) return success();
  return op->emitOpError("round_bf16 needs f32 elements, got ") << x.getType();
}

}  // namespace

//===----------------------------------------------------------------------===//
// RotaryOp
//===----------------------------------------------------------------------===//

LogicalResult RotaryOp::inferReturnTypes(mlir::MLIRContext *,
                                         std::optional<mlir::Location> loc, Adaptor adaptor,
                                         llvm::SmallVectorImpl<Type> &results) {
  return InferRotary(loc, "rotary", adaptor.getX(), adaptor.getPositions(), results);
}

LogicalResult RotaryOp::verify() {
  if (failed(VerifyPositiveAttr(*this, "base", getBase()))) return failure();
  return VerifyRounding(*this, getRoundBf16(), getX());
}

llvm::SmallVector<Value> RotaryOp::buildVjp(mlir::OpBuilder &builder,
                                            llvm::ArrayRef<Value> result_grads) {
  // A bf16 rotary's output is a bf16 tensor, so its cotangent is bf16 too.
  Value dy = result_grads[0];
  if (getRoundBf16()) dy = builder.create<RoundBf16Op>(getLoc(), dy);
  Value dx = builder.create<RotaryGradOp>(getLoc(), dy, getPositions(), getBaseAttr(), getRoundBf16Attr());
  llvm::SmallVector<Value> grads = {dx};
  grads.resize(getNumOperands());  // positions, when present, get none
  return grads;
}

//===----------------------------------------------------------------------===//
// RotaryGradOp
//===----------------------------------------------------------------------===//

LogicalResult RotaryGradOp::inferReturnTypes(mlir::MLIRContext *,
                                             std::optional<mlir::Location> loc,
                                             Adaptor adaptor,
                                             llvm::SmallVectorImpl<Type> &results) {
  return InferRotary(loc, "rotary_grad", adaptor.getDy(), adaptor.getPositions(), results);
}

LogicalResult RotaryGradOp::verify() {
  if (failed(VerifyPositiveAttr(*this, "base", getBase()))) return failure();
  return VerifyRounding(*this, getRoundBf16(), getDy());
}

}  // namespace gpt_sft::compiler::gpt
