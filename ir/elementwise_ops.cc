//===- elementwise_ops.cc - add, mul, relu_square, softcap, round_bf16 ----===//
//
// This file implements the elementwise family. Shape rule: one shape (dynamic
// dims match anything; the result takes the static dim) and one element type,
// no broadcasting. VJP rules: add -> (dy, dy); mul -> (dy rhs, dy lhs);
// relu_square -> relu_square_grad(x, dy); softcap -> softcap_grad(y, dy), from
// the output so that x need not stay alive; round_bf16 -> round_bf16(dy), the
// straight-through rule with the cotangent rounded as PyTorch's bf16 grads are.
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

/// lhs and rhs of one shape and element type -> their merged type.
LogicalResult InferSameShape(std::optional<mlir::Location> loc, llvm::StringRef op,
                             llvm::StringRef what, Value lhs_value, Value rhs_value,
                             llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType lhs = RankedOrError(loc, op, "lhs", lhs_value);
  RankedTensorType rhs = RankedOrError(loc, op, "rhs", rhs_value);
  if (!lhs || !rhs) return failure();
  auto shape = MergeShapes(loc, op, what, lhs, rhs);
  if (failed(shape) || failed(SameElementType(loc, op, lhs, rhs))) return failure();
  results.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

LogicalResult InferUnary(std::optional<mlir::Location> loc, llvm::StringRef op, Value x_value,
                         llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, op, "x", x_value);
  if (!x) return failure();
  results.push_back(x);
  return success();
}

}  // namespace

//===----------------------------------------------------------------------===//
// AddOp, MulOp
//===----------------------------------------------------------------------===//

LogicalResult AddOp::inferReturnTypes(mlir::MLIRContext *, std::optional<mlir::Location> loc,
                                      Adaptor adaptor, llvm::SmallVectorImpl<Type> &results) {
  return InferSameShape(loc, "add", "lhs and rhs", adaptor.getLhs(), adaptor.getRhs(),
                        results);
}

llvm::SmallVector<Value> AddOp::buildVjp(mlir::OpBuilder &,
                                         llvm::ArrayRef<Value> result_grads) {
  return {result_grads[0], result_grads[0]};
}

LogicalResult MulOp::inferReturnTypes(mlir::MLIRContext *, std::optional<mlir::Location> loc,
                                      Adaptor adaptor, llvm::SmallVectorImpl<Type> &results) {
  return InferSameShape(loc, "mul", "lhs and rhs", adaptor.getLhs(), adaptor.getRhs(),
                        results);
}

llvm::SmallVector<Value> MulOp::buildVjp(mlir::OpBuilder &builder,
                                         llvm::ArrayRef<Value> result_grads) {
  Value dy = result_grads[0];
  Value dlhs = builder.create<MulOp>(getLoc(), dy, getRhs());
  Value drhs = builder.create<MulOp>(getLoc(), dy, getLhs());
  return {dlhs, drhs};
}

//===----------------------------------------------------------------------===//
// ReluSquareOp, ReluSquareGradOp
//===----------------------------------------------------------------------===//

LogicalResult ReluSquareOp::inferReturnTypes(mlir::MLIRContext *,
                                             std::optional<mlir::Location> loc,
                                             Adaptor adaptor,
                                             llvm::SmallVectorImpl<Type> &results) {
  return InferUnary(loc, "relu_square", adaptor.getX(), results);
}

llvm::SmallVector<Value> ReluSquareOp::buildVjp(mlir::OpBuilder &builder,
                                                llvm::ArrayRef<Value> result_grads) {
  Value dx = builder.create<ReluSquareGradOp>(getLoc(), getX(), result_grads[0]);
  return {dx};
}

LogicalResult ReluSquareGradOp::inferReturnTypes(mlir::MLIRContext *,
                                                 std::optional<mlir::Location> loc,
                                                 Adaptor adaptor,
                                                 llvm::SmallVectorImpl<Type> &results) {
  return InferSameShape(loc, "relu_square_grad", "x and dy", adaptor.getX(), adaptor.getDy(),
                        results);
}

//===----------------------------------------------------------------------===//
// SoftcapOp, SoftcapGradOp
//===----------------------------------------------------------------------===//

LogicalResult SoftcapOp::inferReturnTypes(mlir::MLIRContext *,
                                          std::optional<mlir::Location> loc, Adaptor adaptor,
                                          llvm::SmallVectorImpl<Type> &results) {
  return InferUnary(loc, "softcap", adaptor.getX(), results);
}

LogicalResult SoftcapOp::verify() {
  if (failed(VerifyPositiveAttr(*this, "cap", getCap()))) return failure();
  if (getRoundBf16() && !llvm::cast<RankedTensorType>(getX().getType()).getElementType().isF32()) {
    return emitOpError("round_bf16 needs f32 elements, got ") << getX().getType();
  }
  return success();
}

llvm::SmallVector<Value> SoftcapOp::buildVjp(mlir::OpBuilder &builder,
                                             llvm::ArrayRef<Value> result_grads) {
  // A bf16 softcap's output is a bf16 tensor, so its cotangent is bf16 too.
  Value dy = result_grads[0];
  if (getRoundBf16()) dy = builder.create<RoundBf16Op>(getLoc(), dy);
  Value dx = builder.create<SoftcapGradOp>(getLoc(), getResult(), dy, getCapAttr());
  return {dx};
}

LogicalResult SoftcapGradOp::inferReturnTypes(mlir::MLIRContext *,
                                              std::optional<mlir::Location> loc,
                                              Adaptor adaptor,
                                              llvm::SmallVectorImpl<Type> &results) {
  return InferSameShape(loc, "softcap_grad", "y and dy", adaptor.getY(), adaptor.getDy(),
                        results);
}

LogicalResult SoftcapGradOp::verify() { return VerifyPositiveAttr(*this, "cap", getCap()); }

//===----------------------------------------------------------------------===//
// RoundBf16Op
//===----------------------------------------------------------------------===//

LogicalResult RoundBf16Op::inferReturnTypes(mlir::MLIRContext *,
                                            std::optional<mlir::Location> loc, Adaptor adaptor,
                                            llvm::SmallVectorImpl<Type> &results) {
  return InferUnary(loc, "round_bf16", adaptor.getX(), results);
}

llvm::SmallVector<Value> RoundBf16Op::buildVjp(mlir::OpBuilder &builder,
                                               llvm::ArrayRef<Value> result_grads) {
  // Rounding is a step function; its useful derivative is the identity (what autograd
  // uses for a dtype cast), and the cotangent of a bf16 tensor is itself bf16.
  Value dx = builder.create<RoundBf16Op>(getLoc(), result_grads[0]);
  return {dx};
}

}  // namespace gpt_sft::compiler::gpt
